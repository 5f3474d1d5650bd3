//! Two chipledgerd replicas on one database, each with its own cache of stream states. A
//! replica decides on its cached state without reading the log first; a state behind the log
//! must never let a command through (the append's expected version refuses it and the command
//! is decided again on the log) nor refuse one the log allows (a refusal is only given after
//! reading the stream up to the head).

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, all_events, error_info, header, principal};
use tonic::Code;

use crate::scenario::{self, TABLE, cash_buy_in, stack, table_view};

fn tip(command_id: &str, seat: u32) -> pb::Tip {
    pb::Tip { header: header(command_id), table_id: TABLE.into(), seat, amount_cents: 100 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_replica_behind_the_log_neither_lets_through_nor_refuses_wrongly() -> anyhow::Result<()> {
    let first = TestServer::start("replicas").await?;
    let second = first.replica().await?;
    let mut floor = first.client(principal::FLOOR).await?;
    let mut cage = first.client(principal::CAGE).await?;
    let mut dealer_first = first.client(principal::DEALER).await?;
    let mut dealer_second = second.client(principal::DEALER_2).await?;
    let mut auditor = second.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    dealer_first.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 20_000)).await?;
    // The first replica now has the table in its cache with P1 alone.
    dealer_first.table.tip(tip("tip-P1-warm", 1)).await?;

    // On the second replica: P2 sits down at seat 2 and P1 leaves seat 1.
    dealer_second.table.buy_in(cash_buy_in("buy-P2", TABLE, 2, "P2", 20_000)).await?;
    let leave = pb::CashOut { header: header("out-P1"), table_id: TABLE.into(), seat: 1, player_id: "P1".into() };
    dealer_second.table.cash_out(leave).await?;

    // The first replica's cache says seat 2 is empty: the tip from P2 must still go through.
    let from_p2 = dealer_first.table.tip(tip("tip-P2", 2)).await?.into_inner();
    assert_eq!(from_p2.events.len(), 1);

    // Its cache says P1 still sits at seat 1 (its own last write); the log says the seat is
    // empty: refused with the reason of the log's state, nothing written.
    let before = all_events(&mut auditor, pb::EventFilter::default()).await?.len();
    let from_p1 = dealer_first.table.tip(tip("tip-P1-gone", 1)).await.unwrap_err();
    assert_eq!(from_p1.code(), Code::FailedPrecondition, "{from_p1:?}");
    let reason = error_info(&from_p1);
    assert_eq!((reason.reason.as_str(), reason.metadata.get("rule_id").map(String::as_str)), ("SEAT_EMPTY", Some("R-STAKE-4")));
    assert_eq!(all_events(&mut auditor, pb::EventFilter::default()).await?.len(), before);

    // Both replicas answer the same table: P2 paid one tip, P1 is gone.
    let view_first = table_view(&mut dealer_first, TABLE).await?;
    let view_second = table_view(&mut dealer_second, TABLE).await?;
    assert_eq!(stack(&view_first, 2), 20_000 - 100);
    assert_eq!(stack(&view_first, 1), 0);
    assert_eq!(view_first, view_second);
    second.stop().await?;
    first.stop().await?;
    Ok(())
}
