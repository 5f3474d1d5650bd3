//! R-REBUY-1 decided on the log, across replicas: a cash-out at one table racing a short buy-in
//! at another table of the same game, on two chipledgerd replicas with their own caches and
//! clocks. Whichever commits first, the short buy-in is refused: before the departure the
//! player still holds a seat of the game (SECOND_SEAT_SAME_GAME), after it the return is bound
//! by the amount left with (REBUY_BELOW_AMOUNT_LEFT), whatever the time stamps say.

use std::sync::Arc;

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, all_events, chips, error_info, header, principal};
use tokio::sync::Barrier;
use tonic::Code;

use crate::scenario::{self, cash_buy_in, stack, table_view};

const X: &str = "T1";
const Y: &str = "T2";
/// Rounds of the race (each a new patron): enough for both orders to occur.
const ROUNDS: usize = 40;

fn reason_of(status: &tonic::Status) -> String {
    error_info(status).reason
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn r_rebuy_1_a_cash_out_racing_a_short_buy_in_on_another_replica_never_lets_it_through() -> anyhow::Result<()> {
    let first = TestServer::start("rebuy-race").await?;
    let second = first.replica().await?;
    let mut floor = first.client(principal::FLOOR).await?;
    let mut cage = first.client(principal::CAGE).await?;
    let mut auditor = first.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, X).await?;
    scenario::open_nlhe_table(&mut floor, Y).await?;
    scenario::opening_fill(&mut cage, &mut floor, Y, 2).await?;
    let mut at_x = first.client(principal::DEALER).await?;
    let mut orders = [0usize; 2];
    for round in 0..ROUNDS {
        let player = format!("R{round}");
        // Seats rotate so that each round starts from empty seats at both tables.
        let seat = (round % 9) as u32 + 1;
        // $200 bought at the cage and brought to the table: the tray is not drained by 40
        // rounds of buy-ins that leave with the chips.
        cage.cage
            .sell_chips(pb::SellChips {
                header: header(&format!("sell-{round}")),
                cage_id: scenario::CAGE.into(),
                player_id: player.clone(),
                chips: vec![chips(10_000, 2)],
                supervisor_id: None,
            })
            .await?;
        let mut from_pocket = cash_buy_in(&format!("in-x-{round}"), X, seat, &player, 20_000);
        from_pocket.source = pb::FundsSource::PocketChips as i32;
        at_x.table.buy_in(from_pocket).await?;
        let barrier = Arc::new(Barrier::new(2));
        let cash_out = {
            let barrier = barrier.clone();
            let mut dealer = first.client(principal::DEALER).await?;
            let leave = pb::CashOut { header: header(&format!("out-x-{round}")), table_id: X.into(), seat, player_id: player.clone() };
            tokio::spawn(async move {
                barrier.wait().await;
                dealer.table.cash_out(leave).await
            })
        };
        let short = {
            let barrier = barrier.clone();
            let mut dealer = second.client(principal::DEALER_2).await?;
            let buy = cash_buy_in(&format!("in-y-{round}"), Y, seat, &player, 4_000);
            tokio::spawn(async move {
                barrier.wait().await;
                dealer.table.buy_in(buy).await
            })
        };
        let left = cash_out.await?;
        let returned = short.await?;
        assert!(left.is_ok(), "round {round}: leaving is never restricted (R-REBUY-2): {left:?}");
        let refused = returned.expect_err("a short buy-in within the window must never be accepted");
        assert_eq!(refused.code(), Code::FailedPrecondition, "round {round}: {refused:?}");
        match reason_of(&refused).as_str() {
            "SECOND_SEAT_SAME_GAME" => orders[0] += 1,
            "REBUY_BELOW_AMOUNT_LEFT" => {
                orders[1] += 1;
                assert_eq!(error_info(&refused).metadata.get("required_min_cents").map(String::as_str), Some("20000"));
            }
            other => panic!("round {round}: refused for {other}, not the re-buy wait"),
        }
        let view = table_view(&mut auditor, Y).await?;
        assert_eq!(stack(&view, seat), 0, "round {round}: nothing reached the seat at {Y}");
    }
    // Nothing of any short buy-in is in the log.
    let joined = all_events(&mut auditor, pb::EventFilter { event_types: vec!["BoughtIn".into()], ..Default::default() }).await?;
    assert!(joined.iter().all(|event| event.stream_id != format!("table-{Y}")), "a buy-in at {Y} was recorded");
    eprintln!("race orders over {ROUNDS} rounds: buy-in first {}, cash-out first {}", orders[0], orders[1]);
    second.stop().await?;
    first.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_rebuy_1_the_two_table_sequence_is_refused() -> anyhow::Result<()> {
    // Seated at X with a big stack, buy in short at Y of the same game, then leave X.
    let server = TestServer::start("two-tables").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    scenario::stocked_table(&mut cage, &mut floor, X).await?;
    scenario::open_nlhe_table(&mut floor, Y).await?;
    scenario::opening_fill(&mut cage, &mut floor, Y, 2).await?;
    dealer.table.buy_in(cash_buy_in("in-x", X, 1, "P1", 20_000)).await?;
    let refused = dealer.table.buy_in(cash_buy_in("in-y", Y, 1, "P1", 4_000)).await.unwrap_err();
    assert_eq!(reason_of(&refused), "SECOND_SEAT_SAME_GAME", "{refused:?}");
    assert_eq!(error_info(&refused).metadata.get("rule_id").map(String::as_str), Some("R-REBUY-1"));
    dealer.table.cash_out(pb::CashOut { header: header("out-x"), table_id: X.into(), seat: 1, player_id: "P1".into() }).await?;
    let refused = dealer.table.buy_in(cash_buy_in("in-y-2", Y, 1, "P1", 4_000)).await.unwrap_err();
    assert_eq!(reason_of(&refused), "REBUY_BELOW_AMOUNT_LEFT", "{refused:?}");
    // With the amount left with, even above the $200 maximum had P1 left with more: accepted.
    dealer.table.buy_in(cash_buy_in("in-y-3", Y, 1, "P1", 20_000)).await?;
    server.stop().await?;
    Ok(())
}
