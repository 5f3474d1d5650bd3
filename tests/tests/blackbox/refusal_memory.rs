//! Refusals remembered (R-AUDIT-3): a command id refused once answers that refusal forever,
//! byte for byte, whatever the state says later and whichever replica is asked, so a
//! terminal's retry queue cannot replay an old refused command into a new action. The same id
//! with another request stays ALREADY_EXISTS. The record names the player and the gaming day.

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, error_info, head, header, principal};
use tonic::{Code, Status};

use crate::scenario::{self, TABLE, cash_buy_in};

/// What a client sees of a status: code, message, details bytes, the command index.
fn seen(status: &Status) -> (Code, String, Vec<u8>, Option<String>) {
    let index = status.metadata().get("x-chipledger-command-index").and_then(|value| value.to_str().ok()).map(str::to_owned);
    (status.code(), status.message().to_owned(), status.details().to_vec(), index)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_audit_3_a_refused_command_id_replayed_later_gets_the_first_refusal() -> anyhow::Result<()> {
    let server = TestServer::start("refusal_memory").await?;
    let replica = server.replica().await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;

    // Seat 1 is empty: cashing P1 out of it is refused.
    let cash_out = pb::CashOut { header: header("out-P1"), table_id: TABLE.into(), seat: 1, player_id: "P1".into() };
    let first = dealer.table.cash_out(cash_out.clone()).await.expect_err("nobody sits at seat 1");
    assert_eq!(first.code(), Code::FailedPrecondition, "{first:?}");
    let reason = error_info(&first).reason;

    // Now P1 sits at seat 1 with chips: a cash-out of seat 1 would go through.
    dealer.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 20_000)).await?;
    let before = head(&mut auditor).await?;

    // The old command, resent (a retry queue), here and on another replica: the first refusal.
    let again = dealer.table.cash_out(cash_out.clone()).await.expect_err("the refusal answers for good");
    assert_eq!(seen(&again), seen(&first), "same id, same request: the same answer, byte for byte");
    let mut replica_dealer = replica.client(principal::DEALER).await?;
    let elsewhere = replica_dealer.table.cash_out(cash_out.clone()).await.expect_err("on every replica");
    assert_eq!(seen(&elsewhere), seen(&first));
    assert_eq!(head(&mut auditor).await?, before, "nothing written, nothing chained again");

    // The same id for another request is a reused id.
    let changed = pb::CashOut { player_id: "P9".into(), ..cash_out.clone() };
    let reused = dealer.table.cash_out(changed).await.expect_err("another request");
    assert_eq!(reused.code(), Code::AlreadyExists, "{reused:?}");
    // A new id does what the state allows now.
    let out = pb::CashOut { header: header("out-P1-now"), ..cash_out };
    assert!(!dealer.table.cash_out(out).await?.into_inner().events.is_empty());

    // One record, naming the player and the gaming day, in its place in the refusal chain.
    let recorded = auditor
        .audit
        .list_rejections(pb::ListRejectionsRequest { player_id: "P1".into(), ..Default::default() })
        .await?
        .into_inner()
        .rejections;
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let record = &recorded[0];
    assert_eq!((record.command_id.as_str(), record.reason_code.as_str()), ("out-P1", reason.as_str()));
    assert_eq!((record.player_id.as_str(), record.refusal_seq), ("P1", 1));
    assert_eq!(record.gaming_day.len(), "YYYY-MM-DD".len(), "{record:?}");
    let by_day = auditor
        .audit
        .list_rejections(pb::ListRejectionsRequest { gaming_day: record.gaming_day.clone(), ..Default::default() })
        .await?
        .into_inner()
        .rejections;
    assert_eq!(by_day.len(), 1);
    replica.stop().await?;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_audit_3_a_refused_batch_answers_its_first_refusal_with_the_refused_command_index() -> anyhow::Result<()> {
    let server = TestServer::start("refusal_batch").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    let entry = |command: pb::command::Command| pb::Command { command: Some(command) };
    let batch = pb::RecordBatch {
        header: header("batch-1"),
        commands: vec![
            entry(pb::command::Command::BuyIn(pb::BuyIn { header: None, ..cash_buy_in("unused", TABLE, 1, "P1", 20_000) })),
            entry(pb::command::Command::CashOut(pb::CashOut {
                header: None,
                table_id: TABLE.into(),
                seat: 2,
                player_id: "P2".into(),
            })),
        ],
    };
    let first = dealer.ledger.record_batch(batch.clone()).await.expect_err("seat 2 is empty");
    assert_eq!(seen(&first).3.as_deref(), Some("1"), "{first:?}");
    // Seat 2 filled meanwhile; the batch resent answers as the first time.
    dealer.table.buy_in(cash_buy_in("buy-P2", TABLE, 2, "P2", 20_000)).await?;
    let again = dealer.ledger.record_batch(batch).await.expect_err("remembered");
    assert_eq!(seen(&again), seen(&first));
    server.stop().await
}
