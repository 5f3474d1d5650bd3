//! Idempotency (ARCHITECTURE.md, flow step 2): the same command id with the same request returns
//! the original result, byte for byte apart from the `replayed` flag the API defines for it;
//! with a different request it is ALREADY_EXISTS. Neither writes anything.

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, error_info, head, header, principal};
use prost::Message;
use tonic::Code;

use crate::scenario::{self, TABLE, cash_buy_in, stack, table_view};

/// The reply as first sent: `replayed` is the only field a replay may change.
fn as_original(mut result: pb::CommandResult) -> Vec<u8> {
    assert!(result.replayed, "a retry is marked as a replay: {result:?}");
    result.replayed = false;
    result.encode_to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_returns_the_original_reply_and_a_changed_request_is_already_exists() -> anyhow::Result<()> {
    let server = TestServer::start("idempotency").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;

    let buy_in = cash_buy_in("buy-P7", TABLE, 3, "P7", 20_000);
    let first = dealer.table.buy_in(buy_in.clone()).await?.into_inner();
    assert!(!first.replayed);
    assert!(first.events.iter().all(|event| event.global_position > 0), "{first:?}");
    let after_first = head(&mut auditor).await?;

    // A retry (e.g. the reply was lost): the original answer, nothing appended.
    let retry = dealer.table.buy_in(buy_in.clone()).await?.into_inner();
    assert_eq!(as_original(retry), first.encode_to_vec(), "the retry answers with the original result");
    assert_eq!(head(&mut auditor).await?, after_first, "a replay appends nothing");
    assert_eq!(stack(&table_view(&mut dealer, TABLE).await?, 3), 20_000, "bought in once, not twice");

    // The same id for a different request.
    let changed = dealer
        .table
        .buy_in(pb::BuyIn { amount_cents: 15_000, ..buy_in.clone() })
        .await
        .expect_err("a reused command id with another request is refused");
    assert_eq!(changed.code(), Code::AlreadyExists, "{changed:?}");
    assert_eq!(error_info(&changed).reason, "COMMAND_ID_REUSED");
    // The same id on another RPC is a different request too.
    let other_rpc = dealer
        .table
        .tip(pb::Tip { header: header("buy-P7"), table_id: TABLE.into(), seat: 3, amount_cents: 100 })
        .await
        .expect_err("a command id names one request");
    assert_eq!(other_rpc.code(), Code::AlreadyExists, "{other_rpc:?}");
    assert_eq!(head(&mut auditor).await?, after_first, "refused reuses append nothing");

    // A retry after the state moved on: the cash-out of seat 3 is retried once the seat is
    // empty, where deciding it again would be refused. The original result still wins.
    let cash_out = pb::CashOut { header: header("out-P7"), table_id: TABLE.into(), seat: 3, player_id: "P7".into() };
    let out = dealer.table.cash_out(cash_out.clone()).await?.into_inner();
    let after_out = head(&mut auditor).await?;
    let out_again = dealer.table.cash_out(cash_out).await?.into_inner();
    assert_eq!(as_original(out_again), out.encode_to_vec());
    assert_eq!(head(&mut auditor).await?, after_out);
    server.stop().await
}
