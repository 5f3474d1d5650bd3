//! Two clients racing on one table (two dealers, two connections, every request in flight at
//! once). Each command is either applied or cleanly refused (FAILED_PRECONDITION with a reason)
//! or ABORTED and retried with the same command id; nothing is lost or applied twice, and the
//! final state equals a serial replay of the applied commands, in log order, on a fresh server.

use std::collections::HashMap;

use chipledger_proto::v1 as pb;
use chipledger_tests::{Client, TestServer, all_events, error_info, header, principal};
use tonic::Code;

use crate::scenario::{self, Sent, TABLE, cash_buy_in, stack, table_view};

/// Bound on retries of one ABORTED command.
const MAX_ATTEMPTS: usize = 50;
/// Tips each client sends.
const TIPS_PER_CLIENT: usize = 15;
const TIP_CENTS: i64 = 100;

/// Applied, or refused by the rules (reason code). ABORTED is retried with the same id.
pub(crate) async fn send_until_decided(mut client: Client, command: Sent) -> Result<Result<pb::CommandResult, String>, String> {
    for _ in 0..MAX_ATTEMPTS {
        match command.send(&mut client).await {
            Ok(result) => return Ok(Ok(result)),
            Err(status) if status.code() == Code::Aborted => continue,
            Err(status) if status.code() == Code::FailedPrecondition => return Ok(Err(error_info(&status).reason)),
            Err(status) => return Err(format!("{}: unexpected {status:?}", command.command_id())),
        }
    }
    Err(format!("{}: still ABORTED after {MAX_ATTEMPTS} attempts", command.command_id()))
}

pub(crate) async fn setup(server: &TestServer) -> anyhow::Result<()> {
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    for seat in 1..=4 {
        let player = format!("P{seat}");
        dealer.table.buy_in(cash_buy_in(&format!("buy-{player}"), TABLE, seat, &player, 20_000)).await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_dealers_racing_on_one_table_lose_no_update_and_match_a_serial_replay() -> anyhow::Result<()> {
    let server = TestServer::start("race").await?;
    setup(&server).await?;
    let dealer_a = server.client(principal::DEALER).await?;
    let dealer_b = server.client(principal::DEALER_2).await?;

    // Dealer A tips from seats 1 and 2, dealer B from seats 3 and 4; both also try to buy a
    // different player into the same empty seat 5. Everything is sent at once.
    let mut commands: Vec<(Client, Sent)> = Vec::new();
    for i in 0..TIPS_PER_CLIENT {
        for (client, seat) in [(&dealer_a, 1 + (i % 2) as u32), (&dealer_b, 3 + (i % 2) as u32)] {
            let tip = pb::Tip { header: header(&format!("tip-{seat}-{i}")), table_id: TABLE.into(), seat, amount_cents: TIP_CENTS };
            commands.push((client.clone(), Sent::Tip(tip)));
        }
    }
    commands.push((dealer_a.clone(), Sent::BuyIn(cash_buy_in("seat5-P5", TABLE, 5, "P5", 10_000))));
    commands.push((dealer_b.clone(), Sent::BuyIn(cash_buy_in("seat5-P6", TABLE, 5, "P6", 12_000))));
    let by_id: HashMap<String, Sent> = commands.iter().map(|(_, c)| (c.command_id(), c.clone())).collect();
    let tasks: Vec<_> = commands
        .into_iter()
        .map(|(client, command)| {
            let id = command.command_id();
            (id, tokio::spawn(send_until_decided(client, command)))
        })
        .collect();
    let mut outcomes: HashMap<String, Result<pb::CommandResult, String>> = HashMap::new();
    for (id, task) in tasks {
        let outcome = task.await?.map_err(anyhow::Error::msg)?;
        outcomes.insert(id, outcome);
    }

    // Every tip is applied exactly once (no lost update): 30 x 100 = 3,000 in the toke box,
    // each seat 20,000 - (tips from it) x 100.
    let tips_applied = outcomes.iter().filter(|(id, o)| id.starts_with("tip-") && o.is_ok()).count();
    assert_eq!(tips_applied, 2 * TIPS_PER_CLIENT, "{outcomes:?}");
    // Exactly one buy-in takes seat 5; the other is refused with a seating reason.
    let seat5: Vec<_> = ["seat5-P5", "seat5-P6"].iter().map(|id| outcomes[*id].clone()).collect();
    let winners = seat5.iter().filter(|o| o.is_ok()).count();
    assert_eq!(winners, 1, "{seat5:?}");
    let loser_reason = seat5.iter().find_map(|o| o.clone().err()).expect("one refusal");
    assert!(["SEAT_TAKEN", "PLAYER_ALREADY_SEATED", "ALREADY_BOUGHT_IN"].contains(&loser_reason.as_str()), "{loser_reason}");
    let (seat5_player, seat5_cents) =
        if outcomes["seat5-P5"].is_ok() { ("P5", 10_000) } else { ("P6", 12_000) };

    let mut auditor = server.client(principal::AUDITOR).await?;
    let view = table_view(&mut auditor, TABLE).await?;
    let per_seat = (TIPS_PER_CLIENT as i64).div_euclid(2) * TIP_CENTS; // seats 2 and 4: i odd
    let per_seat_even = (TIPS_PER_CLIENT as i64 - (TIPS_PER_CLIENT as i64).div_euclid(2)) * TIP_CENTS; // seats 1 and 3
    assert_eq!(view.toke_cents, 2 * TIPS_PER_CLIENT as i64 * TIP_CENTS);
    assert_eq!(
        [stack(&view, 1), stack(&view, 2), stack(&view, 3), stack(&view, 4), stack(&view, 5)],
        [20_000 - per_seat_even, 20_000 - per_seat, 20_000 - per_seat_even, 20_000 - per_seat, seat5_cents]
    );
    let seat5_view = view.seats.iter().find(|s| s.seat == 5).expect("seat 5 is shown");
    assert_eq!(seat5_view.player_id, seat5_player);

    // The table stream's versions are dense 1..=n, in global order.
    let events = all_events(&mut auditor, pb::EventFilter { table_id: TABLE.into(), ..Default::default() }).await?;
    let versions: Vec<i64> = events.iter().map(|e| e.stream_version).collect();
    assert_eq!(versions, (1..=events.len() as i64).collect::<Vec<_>>());
    assert!(events.windows(2).all(|w| w[0].global_position < w[1].global_position));

    // Serial replay: the applied race commands, in the order the log holds them, sent one by
    // one to a fresh server after the same setup, give the same table.
    let mut order: Vec<String> = Vec::new();
    for event in &events {
        let id = event.metadata.as_ref().map(|m| m.command_id.clone()).unwrap_or_default();
        if by_id.contains_key(&id) && !order.contains(&id) {
            order.push(id);
        }
    }
    assert_eq!(order.len(), 2 * TIPS_PER_CLIENT + 1, "every applied race command is in the log once");
    let replay = TestServer::start("race_replay").await?;
    setup(&replay).await?;
    let mut replayer = replay.client(principal::DEALER).await?;
    for id in &order {
        by_id[id].send(&mut replayer).await.map_err(|status| anyhow::anyhow!("replay of {id}: {status:?}"))?;
    }
    let mut replay_auditor = replay.client(principal::AUDITOR).await?;
    let replayed = table_view(&mut replay_auditor, TABLE).await?;
    assert_eq!(replayed, view, "the raced table equals its serial replay");
    let replay_events = all_events(&mut replay_auditor, pb::EventFilter { table_id: TABLE.into(), ..Default::default() }).await?;
    let types = |events: &[pb::RecordedEvent]| events.iter().map(|e| (e.event_type.clone(), e.payload_json.clone())).collect::<Vec<_>>();
    assert_eq!(types(&replay_events), types(&events), "same events, same payloads, same order");
    replay.stop().await?;
    server.stop().await
}

/// Hands raced in the same-turn test.
const RACED_HANDS: u64 = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_dealers_acting_on_the_same_turn_apply_exactly_one_action_r_bet_1() -> anyhow::Result<()> {
    let server = TestServer::start("race_turn").await?;
    setup(&server).await?;
    let mut dealer_a = server.client(principal::DEALER).await?;
    let dealer_b = server.client(principal::DEALER_2).await?;
    // Model of seats 1 and 2 (20,000 each after setup), indexed by seat.
    let mut stacks = [0i64, 20_000, 20_000];
    for hand_no in 1..=RACED_HANDS {
        // Heads-up the button posts the small blind, and the blinds alternate (R-POST-2).
        let (sb, bb) = if hand_no % 2 == 1 { (1u32, 2u32) } else { (2, 1) };
        let start = pb::StartHand {
            header: header(&format!("h{hand_no}-start")),
            table_id: TABLE.into(),
            hand_no,
            button_seat: sb,
            dealt_seats: vec![1, 2],
        };
        dealer_a.table.start_hand(start).await?;
        dealer_a.table.post(scenario::post(&format!("h{hand_no}-sb"), sb, pb::PostKind::SmallBlind, 100)).await?;
        dealer_a.table.post(scenario::post(&format!("h{hand_no}-bb"), bb, pb::PostKind::BigBlind, 200)).await?;
        // The small blind is to act (R-BET-1). Dealer A records a call, dealer B a fold, at once.
        let call = scenario::act(&format!("h{hand_no}-call"), sb, pb::ActionKind::Call, 0);
        let fold = scenario::act(&format!("h{hand_no}-fold"), sb, pb::ActionKind::Fold, 0);
        let (mut a, mut b) = (dealer_a.clone(), dealer_b.clone());
        let call_task = tokio::spawn(async move { a.table.act(call).await });
        let fold_task = tokio::spawn(async move { b.table.act(fold).await });
        let (called, folded) = (call_task.await?, fold_task.await?);
        let (winner_is_call, loser) = match (&called, &folded) {
            (Ok(_), Err(status)) => (true, status.clone()),
            (Err(status), Ok(_)) => (false, status.clone()),
            _ => anyhow::bail!("hand {hand_no}: exactly one action may apply: call {called:?}, fold {folded:?}"),
        };
        assert_eq!(loser.code(), Code::FailedPrecondition, "hand {hand_no}: the loser is refused cleanly: {loser:?}");
        let reason = error_info(&loser).reason;
        assert!(
            ["NOT_YOUR_TURN", "BETTING_ROUND_CLOSED", "NO_HAND_IN_PROGRESS"].contains(&reason.as_str()),
            "hand {hand_no}: {reason}"
        );
        let (sb_i, bb_i) = (sb as usize, bb as usize);
        if winner_is_call {
            // The big blind folds to the call: the small blind takes 200 + 200 (no flop, no rake, R-RAKE-1).
            dealer_a.table.act(scenario::act(&format!("h{hand_no}-bb-fold"), bb, pb::ActionKind::Fold, 0)).await?;
            (stacks[sb_i], stacks[bb_i]) = (stacks[sb_i] + 200, stacks[bb_i] - 200);
        } else {
            // The small blind folded: the big blind takes 100 and gets its 200 back.
            (stacks[sb_i], stacks[bb_i]) = (stacks[sb_i] - 100, stacks[bb_i] + 100);
        }
        dealer_a.table.end_hand(pb::EndHand { header: header(&format!("h{hand_no}-end")), table_id: TABLE.into() }).await?;
        let view = table_view(&mut dealer_a, TABLE).await?;
        assert_eq!((stack(&view, 1), stack(&view, 2)), (stacks[1], stacks[2]), "hand {hand_no}");
        assert_eq!(view.pot_total_cents, 0, "R-UNIT-4: the pot is empty when the hand ends");
    }
    server.stop().await
}

/// Tips sent at once to one table in the turn test.
const TIPS_AT_ONCE: usize = 24;

/// One replica answers every writer of a stream without a conflict to resend: a busy table (or
/// a cage with several windows) sending many commands at once through one server gets each
/// applied on its first send, in some order, none lost or doubled (R-AUDIT-3: nothing to retry).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_of_one_stream_through_one_replica_take_turns_and_none_is_aborted() -> anyhow::Result<()> {
    let server = TestServer::start("race_turns").await?;
    setup(&server).await?;
    let mut tasks = Vec::new();
    for i in 0..TIPS_AT_ONCE {
        // Each on its own connection, all in flight together.
        let mut client = server.client(if i % 2 == 0 { principal::DEALER } else { principal::DEALER_2 }).await?;
        let seat = 1 + (i % 4) as u32;
        let tip = pb::Tip { header: header(&format!("turn-tip-{i}")), table_id: TABLE.into(), seat, amount_cents: TIP_CENTS };
        tasks.push(tokio::spawn(async move { client.table.tip(tip).await }));
    }
    let mut positions = Vec::new();
    for task in tasks {
        let result = task.await?.map_err(|status| anyhow::anyhow!("a tip was not applied on its first send: {status:?}"))?.into_inner();
        assert!(!result.replayed);
        positions.extend(result.events.iter().map(|event| event.global_position));
    }
    positions.sort_unstable();
    positions.dedup();
    assert_eq!(positions.len(), TIPS_AT_ONCE, "each tip is its own event");
    let mut auditor = server.client(principal::AUDITOR).await?;
    let view = table_view(&mut auditor, TABLE).await?;
    assert_eq!(view.toke_cents, TIPS_AT_ONCE as i64 * TIP_CENTS);
    let per_seat = (TIPS_AT_ONCE / 4) as i64 * TIP_CENTS;
    assert_eq!([1, 2, 3, 4].map(|seat| stack(&view, seat)), [20_000 - per_seat; 4]);
    server.stop().await
}
