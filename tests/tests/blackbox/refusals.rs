//! Refusals move nothing: a refused command answers FAILED_PRECONDITION with a stable reason
//! code, the rule id and the numbers in `google.rpc.ErrorInfo`, writes no event (the head of
//! the event chain does not move), and is kept for auditors, chained (R-AUDIT-3).

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, error_info, head, header, principal};
use tonic::Code;

use crate::scenario::{self, TABLE, cash_buy_in, stack, table_view};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_stake_2_rathole_is_refused_with_reason_and_rule_and_writes_no_event() -> anyhow::Result<()> {
    let server = TestServer::start("rathole").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    dealer.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 20_000)).await?;

    let before = head(&mut auditor).await?;
    // P1 tries to take $50 of a $200 stack off the table while seated.
    let refused = dealer
        .table
        .remove_chips(pb::RemoveChips { header: header("rathole-1"), table_id: TABLE.into(), seat: 1, amount_cents: 5_000, player_id: None })
        .await
        .expect_err("ratholing is refused");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    let info = error_info(&refused);
    assert_eq!(info.reason, "RATHOLING_FORBIDDEN");
    assert_eq!(info.domain, "chipledger.v1");
    assert_eq!(info.metadata.get("rule_id").map(String::as_str), Some("R-STAKE-2"), "{info:?}");
    assert_eq!(info.metadata.get("amount_cents").map(String::as_str), Some("5000"), "{info:?}");
    assert_eq!(info.metadata.get("stack_cents").map(String::as_str), Some("20000"), "{info:?}");

    let after = head(&mut auditor).await?;
    assert_eq!(
        (&after.global_position, &after.chain_hash_hex),
        (&before.global_position, &before.chain_hash_hex),
        "a refusal appends no event"
    );
    assert_eq!(after.refusal_seq, before.refusal_seq + 1, "it is chained in the refusal chain (R-AUDIT-3)");
    assert_eq!(stack(&table_view(&mut dealer, TABLE).await?, 1), 20_000, "the stack is untouched");

    // The attempt is kept for auditors (R-AUDIT-3).
    let rejections = auditor
        .audit
        .list_rejections(pb::ListRejectionsRequest { reason_code: "RATHOLING_FORBIDDEN".into(), ..Default::default() })
        .await?
        .into_inner()
        .rejections;
    assert_eq!(rejections.len(), 1, "{rejections:?}");
    let record = &rejections[0];
    assert_eq!(
        (record.command_id.as_str(), record.rule_id.as_str(), record.actor_id.as_str()),
        ("rathole-1", "R-STAKE-2", principal::DEALER.0)
    );
    assert_eq!(record.numbers.get("amount_cents"), Some(&5_000));
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_rebuy_1_early_return_below_amount_left_is_refused_and_writes_no_event() -> anyhow::Result<()> {
    let server = TestServer::start("rebuy").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    // A second table of the same game and limits: the wait binds room-wide (R-REBUY-1 scope).
    scenario::open_nlhe_table(&mut floor, "T2").await?;
    scenario::opening_fill(&mut cage, &mut floor, "T2", 2).await?;

    dealer.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 15_000)).await?;
    // Hit and run is allowed (R-REBUY-2): P1 leaves with the whole $150.
    dealer
        .table
        .cash_out(pb::CashOut { header: header("out-P1"), table_id: TABLE.into(), seat: 1, player_id: "P1".into() })
        .await?;

    // Minutes later P1 sits at T2 and buys in for the $40 minimum: below the $150 left with.
    let before = head(&mut auditor).await?;
    let refused = dealer
        .table
        .buy_in(cash_buy_in("rebuy-P1-low", "T2", 5, "P1", 4_000))
        .await
        .expect_err("an early return below the amount left with is refused");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    let info = error_info(&refused);
    assert_eq!(info.reason, "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(info.metadata.get("rule_id").map(String::as_str), Some("R-REBUY-1"), "{info:?}");
    assert_eq!(info.metadata.get("amount_left_with_cents").map(String::as_str), Some("15000"), "{info:?}");
    assert_eq!(info.metadata.get("buy_in_cents").map(String::as_str), Some("4000"), "{info:?}");
    let after = head(&mut auditor).await?;
    assert_eq!((after.global_position, after.refusal_seq), (before.global_position, before.refusal_seq + 1), "a refusal appends no event");
    let t2 = table_view(&mut dealer, "T2").await?;
    assert!(t2.seats.iter().all(|seat| seat.player_id.is_empty()), "nobody sits at T2: {t2:?}");

    // Buying in for at least the amount left with is accepted (R-REBUY-1).
    let accepted = dealer.table.buy_in(cash_buy_in("rebuy-P1-ok", "T2", 5, "P1", 15_000)).await?.into_inner();
    assert_eq!(chipledger_tests::reply_balance(&accepted, "table/T2/seat/5"), Some(15_000), "{accepted:?}");
    server.stop().await
}
