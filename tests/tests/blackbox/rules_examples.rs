//! The worked examples of RULES.md sections 4 to 6 (betting structures, forced bets, pots) and
//! the seeds' examples on blinds, straddles and posts that RULES.md leaves out, through the gRPC
//! API as a dealer's terminal sends them. Each test opens its own table from a preset and
//! changes it on the wire (no rake unless the example has one); amounts are cents. The numbers
//! of each example are worked out in its comments; the rules crate's tests of the same ids drive
//! `decide`/`evolve` directly, these drive the service.

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, chips};

use crate::scenario::{TABLE, stack, table_view};
use crate::seeds_hand::{Dealer, nlhe_with, refused, refused_at, table_with};

/// The raise range offered to the seat in turn: (kind, min, max).
fn range(legal: &pb::LegalActions) -> (pb::ActionKind, i64, i64) {
    let raise = legal.raise.as_ref().unwrap_or_else(|| panic!("a raise is offered: {legal:?}"));
    (raise.kind(), raise.min_to_cents, raise.max_to_cents)
}

/// No blinds: the first round plays like a later round with a minimum bet (the examples of
/// section 5 start from an opening bet).
fn no_blinds(min_bet_cents: i64) -> impl FnOnce(&mut pb::TableConfig) {
    move |c| {
        c.blinds_cents = vec![];
        c.min_bet_cents = min_bet_cents;
    }
}

fn with_buy_in(c: &mut pb::TableConfig, min_cents: i64, max_cents: i64) {
    let buy_in = c.buy_in.get_or_insert_with(Default::default);
    (buy_in.min_cents, buy_in.max_cents) = (min_cents, max_cents);
}

fn no_fee(c: &mut pb::TableConfig) {
    c.fee = Some(pb::FeePolicy { kind: Some(pb::fee_policy::Kind::NoFee(pb::NoFee {})) });
}

/// A preset table with no rake and buy-ins from $1 to $10,000, then `change`.
async fn preset_with(
    server: &TestServer,
    game: pb::GamePreset,
    small_cents: i64,
    big_cents: i64,
    change: impl FnOnce(&mut pb::TableConfig),
    stacks: &[(u32, i64)],
    tag: &'static str,
) -> anyhow::Result<Dealer> {
    let preset = pb::TablePreset { game: game as i32, small_cents, big_cents, ..Default::default() };
    let change = |c: &mut pb::TableConfig| {
        no_fee(c);
        with_buy_in(c, 100, 1_000_000);
        change(c);
    };
    table_with(server, preset, change, stacks, tag).await
}

/// Every round after the current one, with nobody left to bet, up to the showdown.
async fn run_out(d: &mut Dealer, rounds: u32) -> anyhow::Result<()> {
    for _ in 0..rounds {
        d.next_round(None).await?;
        assert!(!d.legal().await?.seat_to_act, "nobody can bet");
    }
    Ok(())
}

async fn stacks(d: &mut Dealer, seats: &[u32]) -> anyhow::Result<Vec<i64>> {
    let view = table_view(&mut d.client, TABLE).await?;
    Ok(seats.iter().map(|seat| stack(&view, *seat)).collect())
}

async fn pot(d: &mut Dealer) -> anyhow::Result<i64> {
    Ok(table_view(&mut d.client, TABLE).await?.pot_total_cents)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_3_r_bet_5_no_limit_minimum_bet_minimum_raise_and_raise_to() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-3").await?;
    let mut d = nlhe_with(&server, no_blinds(500), &[(1, 50_000), (2, 50_000), (3, 50_000)], "bet3").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    // The opening bet is at least the minimum bet ($5).
    assert_eq!(refused_at(d.act(1, pb::ActionKind::Bet, 400).await, "min_bet_to_cents"), ("BET_BELOW_MINIMUM".into(), "R-BET-3".into(), Some(500)));
    d.act(1, pb::ActionKind::Bet, 500).await?;
    // $5 bet: raise to at least $10.
    let legal = d.legal().await?;
    assert_eq!((legal.seat, range(&legal).1), (2, 1_000));
    d.act(2, pb::ActionKind::Raise, 1_200).await?;
    // $5 raised by $7 to $12: the next raise is to at least $19.
    assert_eq!(range(&d.legal().await?).1, 1_900);
    assert_eq!(refused_at(d.act(3, pb::ActionKind::Raise, 1_800).await, "min_raise_to_cents"), ("RAISE_BELOW_MINIMUM".into(), "R-BET-3".into(), Some(1_900)));
    d.act(3, pb::ActionKind::Raise, 1_900).await?;
    // R-BET-5: "raise to $26" (the $7 raise again) from seat 1's $5 is $21 more; every total
    // named is the round's.
    d.act(1, pb::ActionKind::Raise, 2_600).await?;
    assert_eq!(stacks(&mut d, &[1, 2, 3]).await?, [47_400, 48_800, 48_100]);
    assert_eq!(pot(&mut d).await?, 2_600 + 1_200 + 1_900);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_4_an_all_in_for_less_than_a_legal_bet_may_be_called_or_raised_by_a_full_bet() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-4").await?;
    let mut d = nlhe_with(&server, no_blinds(500), &[(1, 400), (2, 50_000), (3, 50_000)], "bet4").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    // Minimum bet $5, all in for $4: the next player may call $4 or raise to at least $9.
    d.act(1, pb::ActionKind::AllIn, 0).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, range(&legal).1), (2, 400, 900), "{legal:?}");
    assert_eq!(refused(d.act(2, pb::ActionKind::Raise, 800).await), ("RAISE_BELOW_MINIMUM".into(), "R-BET-3".into()));
    d.act(2, pb::ActionKind::Raise, 900).await?;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_1_r_bet_2_out_of_turn_and_a_check_facing_a_bet_are_refused() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-1").await?;
    let mut d = nlhe_with(&server, no_blinds(500), &[(1, 10_000), (2, 10_000), (3, 10_000)], "bet1").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    assert_eq!(refused_at(d.act(2, pb::ActionKind::Bet, 500).await, "seat_to_act"), ("NOT_YOUR_TURN".into(), "R-BET-1".into(), Some(1)));
    d.act(1, pb::ActionKind::Bet, 500).await?;
    assert_eq!(refused_at(d.act(2, pb::ActionKind::Check, 0).await, "amount_owed_cents"), ("CANNOT_CHECK_FACING_BET".into(), "R-BET-2".into(), Some(500)));
    assert_eq!(stacks(&mut d, &[1, 2, 3]).await?, [9_500, 10_000, 10_000], "refusals move nothing");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_6_fixed_limit_small_bet_then_big_bet_and_the_cap_after_three_raises() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-6").await?;
    // $3/$6 hold'em from the preset (blinds $1/$3).
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 10_000)).collect();
    let mut d = preset_with(&server, pb::GamePreset::FixedLimitHoldem, 300, 600, |_| {}, &three, "bet6").await?;
    let blinds = table_view(&mut d.client, TABLE).await?.config.expect("configuration").blinds_cents;
    assert_eq!(blinds, [100, 300]);
    d.start(1, 3, &[1, 2, 3]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 300).await?;
    // $3 preflop: a raise is to $6 exactly.
    let (_, min, max) = range(&d.legal().await?);
    assert_eq!((min, max), (600, 600));
    assert_eq!(refused(d.act(3, pb::ActionKind::Raise, 900).await), ("FIXED_LIMIT_AMOUNT".into(), "R-BET-6".into()));
    // The big blind is the bet; three raises cap the round.
    d.act(3, pb::ActionKind::Raise, 600).await?;
    d.act(1, pb::ActionKind::Raise, 900).await?;
    d.act(2, pb::ActionKind::Raise, 1_200).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.raise.is_none(), legal.call_cents), (3, true, 600), "{legal:?}");
    assert_eq!(refused_at(d.act(3, pb::ActionKind::Raise, 1_500).await, "raises"), ("BETTING_CAPPED".into(), "R-BET-6".into(), Some(4)));
    d.act(3, pb::ActionKind::Call, 0).await?;
    d.act(1, pb::ActionKind::Call, 0).await?;
    assert_eq!(pot(&mut d).await?, 3_600);
    // $3 on the flop, $6 on the turn and the river.
    for want in [300, 600, 600] {
        d.next_round(None).await?;
        assert_eq!(range(&d.legal().await?).1, want);
        for seat in [1, 2, 3] {
            d.act(seat, pb::ActionKind::Check, 0).await?;
        }
    }
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_6_once_reached_the_cap_stays_after_a_fold_leaves_two() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-6-fold").await?;
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 10_000)).collect();
    let mut d = preset_with(&server, pb::GamePreset::FixedLimitHoldem, 300, 600, |_| {}, &three, "bet6fold").await?;
    // Three in the round: capped at $12; a fold leaves two and the cap stays.
    d.start(1, 3, &[1, 2, 3]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 300).await?;
    d.act(3, pb::ActionKind::Raise, 600).await?;
    d.act(1, pb::ActionKind::Raise, 900).await?;
    d.act(2, pb::ActionKind::Raise, 1_200).await?;
    d.act(3, pb::ActionKind::Fold, 0).await?;
    assert_eq!(refused(d.act(1, pb::ActionKind::Raise, 1_500).await).0, "BETTING_CAPPED");
    d.act(1, pb::ActionKind::Call, 0).await?;
    assert!(!d.legal().await?.seat_to_act);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_6_heads_up_before_the_cap_is_reached_raising_goes_on() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-6-hu").await?;
    let mut d = preset_with(&server, pb::GamePreset::FixedLimitHoldem, 300, 600, |_| {}, &[(1, 10_000), (2, 10_000)], "bet6hu").await?;
    // Heads-up (the button posts the small blind): past the cap, to $21 after six raises.
    d.start(1, 1, &[1, 2]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 300).await?;
    let mut seat = 1;
    for to in [600, 900, 1_200, 1_500, 1_800, 2_100] {
        d.act(seat, pb::ActionKind::Raise, to).await?;
        seat = 3 - seat;
    }
    let legal = d.legal().await?;
    assert_eq!((legal.seat, range(&legal).1), (1, 2_400), "heads-up: no cap");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_6_seeds_blinds_smaller_than_the_limit_bet_may_be_called_or_completed() -> anyhow::Result<()> {
    // Seeds: "a limit game with a $5 minimum bet on the first round might have blinds of $1
    // and $2. Players acting after the blind may either call the $2, or raise to $5. After the
    // bet is raised to $5, the next raise must be to $10."
    let server = TestServer::start("ex-seeds-complete").await?;
    let four: Vec<(u32, i64)> = (1..=4).map(|s| (s, 10_000)).collect();
    let mut d = preset_with(&server, pb::GamePreset::FixedLimitHoldem, 500, 1_000, |c| c.blinds_cents = vec![100, 200], &four, "complete").await?;
    d.start(1, 4, &[1, 2, 3, 4]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, range(&legal)), (3, 200, (pb::ActionKind::Complete, 500, 500)), "{legal:?}");
    d.act(3, pb::ActionKind::Complete, 0).await?;
    assert_eq!(range(&d.legal().await?), (pb::ActionKind::Raise, 1_000, 1_000));
    d.act(4, pb::ActionKind::Raise, 1_000).await?;
    assert_eq!(stacks(&mut d, &[3, 4]).await?, [9_500, 9_000]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_7_pot_limit_worked_example_to_165_and_a_pot_of_520() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-7").await?;
    let four: Vec<(u32, i64)> = (1..=4).map(|s| (s, 30_000)).collect();
    let mut d = preset_with(&server, pb::GamePreset::PotLimitHoldem, 100, 200, no_blinds(500), &four, "bet7").await?;
    d.start(1, 4, &[1, 2, 3, 4]).await?;
    // The first round builds the $20 pot.
    d.act(1, pb::ActionKind::Bet, 500).await?;
    for seat in [2, 3, 4] {
        d.act(seat, pb::ActionKind::Call, 0).await?;
    }
    d.next_round(None).await?;
    assert_eq!(pot(&mut d).await?, 2_000);
    // A bets $5; B pots: calls $5 and raises $30, to $35 (pot $60).
    d.act(1, pb::ActionKind::Bet, 500).await?;
    assert_eq!(range(&d.legal().await?).2, 3_500);
    d.act(2, pb::ActionKind::Raise, 3_500).await?;
    assert_eq!(pot(&mut d).await?, 6_000);
    // C calls $35 (pot $95); D pots: 3 x 35 + 40 + 20 = $165.
    d.act(3, pb::ActionKind::Call, 0).await?;
    assert_eq!(pot(&mut d).await?, 9_500);
    assert_eq!(range(&d.legal().await?).2, 16_500);
    assert_eq!(refused_at(d.act(4, pb::ActionKind::Raise, 16_600).await, "max_raise_to_cents"), ("RAISE_ABOVE_POT_LIMIT".into(), "R-BET-7".into(), Some(16_500)));
    d.act(4, pb::ActionKind::Raise, 16_500).await?;
    // A folds; B and C call: pot $520.
    d.act(1, pb::ActionKind::Fold, 0).await?;
    d.act(2, pb::ActionKind::Call, 0).await?;
    d.act(3, pb::ActionKind::Call, 0).await?;
    assert_eq!(pot(&mut d).await?, 52_000);
    assert!(!d.legal().await?.seat_to_act, "the round is complete");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_8_half_pot_limit_a_raise_is_at_most_half_the_pot_after_the_call() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-8").await?;
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 30_000)).collect();
    let mut d = preset_with(&server, pb::GamePreset::HalfPotLimitHoldem, 100, 200, no_blinds(500), &three, "bet8").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    d.act(1, pb::ActionKind::Bet, 500).await?;
    d.act(2, pb::ActionKind::Call, 0).await?;
    d.act(3, pb::ActionKind::Call, 0).await?;
    d.next_round(None).await?;
    // Pot $15, a $6 bet; after the call the pot is $27, half of it $13.50: $13 in whole $1
    // chips, so the raise is to $6 + $13 = $19.
    d.act(1, pb::ActionKind::Bet, 600).await?;
    assert_eq!(range(&d.legal().await?).2, 1_900);
    assert_eq!(refused_at(d.act(2, pb::ActionKind::Raise, 2_000).await, "max_raise_to_cents"), ("RAISE_ABOVE_HALF_POT".into(), "R-BET-8".into(), Some(1_900)));
    d.act(2, pb::ActionKind::Raise, 1_900).await?;
    server.stop().await
}

/// "$1-$5" spread limit with no blinds and the seeds' cap of a bet and three raises;
/// `last_round_max_bet_cents` for "$10 on the end".
fn spread_1_to_5(last_round_max_bet_cents: Option<i64>) -> impl FnOnce(&mut pb::TableConfig) {
    move |c| {
        let spread = pb::SpreadLimit { min_bet_cents: 100, max_bet_cents: 500, last_round_max_bet_cents, max_raises: 3 };
        c.betting = Some(pb::BettingStructure { kind: Some(pb::betting_structure::Kind::SpreadLimit(spread)) });
        no_blinds(100)(c);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_9_spread_limit_one_to_five_and_ten_on_the_end() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-9").await?;
    let spread = spread_1_to_5(Some(1_000));
    let mut d = preset_with(&server, pb::GamePreset::NoLimitHoldem, 100, 200, spread, &[(1, 50_000), (2, 50_000)], "bet9").await?;
    d.start(1, 2, &[1, 2]).await?;
    // "$1-$5": a $6 bet is outside the spread.
    assert_eq!(refused(d.act(1, pb::ActionKind::Bet, 600).await), ("BET_OUTSIDE_SPREAD".into(), "R-BET-9".into()));
    d.act(1, pb::ActionKind::Bet, 300).await?;
    // A raise is at least the previous bet ($3 more, to $6) and at most $5 more (to $8).
    let (_, min, max) = range(&d.legal().await?);
    assert_eq!((min, max), (600, 800));
    d.act(2, pb::ActionKind::Call, 0).await?;
    for _ in 0..2 {
        d.next_round(None).await?;
        d.act(1, pb::ActionKind::Check, 0).await?;
        d.act(2, pb::ActionKind::Check, 0).await?;
    }
    // "$10 on the end".
    d.next_round(None).await?;
    let (_, min, max) = range(&d.legal().await?);
    assert_eq!((min, max), (100, 1_000));
    d.act(1, pb::ActionKind::Bet, 1_000).await?;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_10_cap_limit_of_60_dollars_the_winner_receives_180() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-10").await?;
    let cap = |c: &mut pb::TableConfig| {
        c.betting = Some(pb::BettingStructure { kind: Some(pb::betting_structure::Kind::CapLimit(pb::CapLimit { pot_limit: false, cap_cents: 6_000 })) });
        no_blinds(200)(c);
    };
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 10_000)).collect();
    let mut d = preset_with(&server, pb::GamePreset::NoLimitHoldem, 100, 200, cap, &three, "bet10").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    // A bets $2, B raises to $10, C goes to the $60 cap.
    d.act(1, pb::ActionKind::Bet, 200).await?;
    d.act(2, pb::ActionKind::Raise, 1_000).await?;
    assert_eq!(range(&d.legal().await?).2, 6_000);
    assert_eq!(refused(d.act(3, pb::ActionKind::Raise, 6_100).await), ("ABOVE_HAND_CAP".into(), "R-BET-10".into()));
    d.act(3, pb::ActionKind::Raise, 6_000).await?;
    // A and B call $58 and $50; no more betting.
    d.act(1, pb::ActionKind::Call, 0).await?;
    assert_eq!(stacks(&mut d, &[1]).await?, [10_000 - 6_000], "A added $58 to its $2");
    d.act(2, pb::ActionKind::Call, 0).await?;
    assert_eq!(stacks(&mut d, &[2]).await?, [10_000 - 6_000], "B added $50 to its $10");
    run_out(&mut d, 3).await?;
    d.showdown(&[&[3], &[1], &[2]], None).await?;
    assert_eq!(stacks(&mut d, &[1, 2, 3]).await?, [4_000, 4_000, 4_000 + 18_000], "the winner receives $180");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_11_full_bet_rule_the_opener_may_only_call_the_extra_ten() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-11-full").await?;
    let mut d = nlhe_with(&server, no_blinds(1_000), &[(1, 100_000), (2, 3_000), (3, 100_000)], "bet11").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    // Opener $20, the next all in for $30 (short of a full raise to $40), the third calls $30.
    d.act(1, pb::ActionKind::Bet, 2_000).await?;
    d.act(2, pb::ActionKind::AllIn, 0).await?;
    d.act(3, pb::ActionKind::Call, 0).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, legal.raise.is_none()), (1, 1_000, true), "the opener may only call $10 more: {legal:?}");
    assert_eq!(refused_at(d.act(1, pb::ActionKind::Raise, 6_000).await, "call_cents"), ("RAISE_NOT_REOPENED".into(), "R-BET-11".into(), Some(1_000)));
    d.act(1, pb::ActionKind::Call, 0).await?;
    server.stop().await
}

/// A $20 limit round with no blinds and the half bet rule (R-BET-11's option for limit games).
async fn limit_20(server: &TestServer, stacks: &[(u32, i64)], tag: &'static str) -> anyhow::Result<Dealer> {
    let change = |c: &mut pb::TableConfig| {
        no_blinds(2_000)(c);
        c.incomplete_raise_rule = pb::IncompleteRaiseRule::HalfBet as i32;
    };
    preset_with(server, pb::GamePreset::FixedLimitHoldem, 2_000, 4_000, change, stacks, tag).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_11_half_bet_rule_call_or_complete_the_five_and_a_call_leaves_the_checkers_only_a_call() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-11-half").await?;
    let mut d = limit_20(&server, &[(1, 50_000), (2, 50_000), (3, 500), (4, 50_000)], "half").await?;
    d.start(1, 4, &[1, 2, 3, 4]).await?;
    // Two checks, an all in for $5: the next may fold, call $5 or complete to $20.
    d.act(1, pb::ActionKind::Check, 0).await?;
    d.act(2, pb::ActionKind::Check, 0).await?;
    d.act(3, pb::ActionKind::AllIn, 0).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, range(&legal)), (4, 500, (pb::ActionKind::Complete, 2_000, 2_000)), "{legal:?}");
    // It only calls: the checkers may only call or fold.
    d.act(4, pb::ActionKind::Call, 0).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, legal.raise.is_none()), (1, 500, true), "{legal:?}");
    assert_eq!(refused(d.act(1, pb::ActionKind::Complete, 0).await), ("RAISE_NOT_REOPENED".into(), "R-BET-11".into()));
    d.act(1, pb::ActionKind::Call, 0).await?;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_11_half_bet_rule_a_completion_reopens_the_betting_for_the_checkers() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-11-complete").await?;
    let mut d = limit_20(&server, &[(1, 50_000), (2, 50_000), (3, 500), (4, 50_000)], "reopen").await?;
    d.start(1, 4, &[1, 2, 3, 4]).await?;
    d.act(1, pb::ActionKind::Check, 0).await?;
    d.act(2, pb::ActionKind::Check, 0).await?;
    d.act(3, pb::ActionKind::AllIn, 0).await?;
    d.act(4, pb::ActionKind::Complete, 0).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, range(&legal).0, range(&legal).1), (1, 2_000, pb::ActionKind::Raise, 4_000), "{legal:?}");
    d.act(1, pb::ActionKind::Raise, 4_000).await?;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_12_russian_seed_an_all_in_for_15_in_a_20_round_is_a_full_bet_raised_to_35() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-12").await?;
    let mut d = limit_20(&server, &[(1, 1_500), (2, 50_000), (3, 50_000)], "bet12").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    d.act(1, pb::ActionKind::AllIn, 0).await?;
    assert_eq!(range(&d.legal().await?), (pb::ActionKind::Raise, 3_500, 3_500));
    d.act(2, pb::ActionKind::Raise, 3_500).await?;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_12_an_all_in_of_less_than_half_a_bet_does_not_reopen_for_a_player_who_acted() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-12-below").await?;
    let mut d = limit_20(&server, &[(1, 50_000), (2, 900), (3, 50_000)], "bet12b").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    // $20 bet, all in for $9 (a call for less), a raise to $40, the opener calls: done.
    d.act(1, pb::ActionKind::Bet, 2_000).await?;
    d.act(2, pb::ActionKind::AllIn, 0).await?;
    d.act(3, pb::ActionKind::Raise, 4_000).await?;
    d.act(1, pb::ActionKind::Call, 0).await?;
    assert!(!d.legal().await?.seat_to_act, "the all-in player does not act again");
    d.next_round(None).await?;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_14_a_single_oversized_chip_without_a_declaration_is_a_call_and_the_change_returns() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-14").await?;
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 10_000)).collect();
    let mut d = nlhe_with(&server, |_| {}, &three, "bet14").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    let tray_before = table_view(&mut d.client, TABLE).await?.tray;
    // Seat 3 faces $2 and puts out one $25 chip without a word: a call; $23 comes back.
    let header = d.id();
    let put_out = pb::PutOutChips { header, table_id: TABLE.into(), seat: 3, chips: vec![chips(2_500, 1)], declared_kind: None, declared_to_cents: 0 };
    d.client.table.put_out_chips(put_out).await?;
    let view = table_view(&mut d.client, TABLE).await?;
    assert_eq!(stack(&view, 3), 10_000 - 200);
    assert_eq!(view.pot_total_cents, 500);
    let tray_total = |tray: &[pb::ChipCount]| tray.iter().map(|c| c.denomination_cents * c.count).sum::<i64>();
    assert_eq!(tray_total(&view.tray), tray_total(&tray_before), "making change is value-neutral");
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents), (1, 100), "the call did not raise");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_pot_1_r_pot_2_three_players_main_30_side_40_b_wins_the_main_a_the_side() -> anyhow::Result<()> {
    let server = TestServer::start("ex-pot-2").await?;
    let (a, b, c) = (1, 2, 3);
    let mut d = nlhe_with(&server, no_blinds(500), &[(a, 100_000), (b, 1_000), (c, 3_000)], "pot2").await?;
    d.start(1, c, &[a, b, c]).await?;
    // A opens $20, B calls all in for $10, C raises all in to $30, A calls.
    d.act(a, pb::ActionKind::Bet, 2_000).await?;
    d.act(b, pb::ActionKind::AllIn, 0).await?;
    d.act(c, pb::ActionKind::AllIn, 0).await?;
    d.act(a, pb::ActionKind::Call, 0).await?;
    run_out(&mut d, 3).await?;
    // In play, the hand shows its pots as they stand, no awards yet (the pots pass: none but
    // those paid at once were listed).
    let hand = d.client.table.get_hand(pb::GetHandRequest { property_id: String::new(), table_id: TABLE.into(), hand_no: Some(1) }).await?.into_inner();
    let pots: Vec<(i64, Vec<u32>)> = hand.pots.iter().map(|p| (p.amount_cents, p.eligible_seats.clone())).collect();
    assert_eq!((pots.as_slice(), hand.awards.len(), hand.ended), ([(3_000, vec![a, b, c]), (4_000, vec![a, c])].as_slice(), 0, false));
    // B shows the best hand, then A, then C.
    d.showdown(&[&[b], &[a], &[c]], None).await?;
    let hand = d.client.table.get_hand(pb::GetHandRequest { property_id: String::new(), table_id: TABLE.into(), hand_no: Some(1) }).await?.into_inner();
    let pots: Vec<(i64, Vec<u32>)> = hand.pots.iter().map(|p| (p.amount_cents, p.eligible_seats.clone())).collect();
    assert_eq!(pots, [(3_000, vec![a, b, c]), (4_000, vec![a, c])], "main $30 (A, B, C), side $40 (A, C)");
    let awards: Vec<(u32, u32, i64)> = hand.awards.iter().map(|w| (w.pot_index, w.seat, w.amount_cents)).collect();
    assert_eq!(awards, [(0, b, 3_000), (1, a, 4_000)], "B wins the main pot, A the side pot");
    assert_eq!(stacks(&mut d, &[a, b, c]).await?, [100_000 - 3_000 + 4_000, 3_000, 0]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_pot_4_r_rake_1_an_uncalled_bet_returns_to_its_bettor_and_is_never_raked() -> anyhow::Result<()> {
    let server = TestServer::start("ex-pot-4").await?;
    // RULES.md's default rake: 10% rounded down to $1, capped at $5, no flop no drop.
    let rake = pb::Rake { percent_bps: 1_000, increment_cents: 100, cap_cents: 500, no_flop_no_drop: true, min_pot_cents: 0 };
    let raked = move |c: &mut pb::TableConfig| c.fee = Some(pb::FeePolicy { kind: Some(pb::fee_policy::Kind::Rake(rake)) });
    let mut d = nlhe_with(&server, raked, &[(1, 20_000), (2, 20_000)], "pot4").await?;
    // Heads-up: the button posts the small blind; to $20 and called preflop (pot $40).
    d.start(1, 1, &[1, 2]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    d.act(1, pb::ActionKind::Raise, 2_000).await?;
    d.act(2, pb::ActionKind::Call, 0).await?;
    // On the flop the big blind bets $50 and the button folds: the $50 comes back unraked; the
    // $40 pot is raked $4 (10%; a raked $90 would have hit the $5 cap).
    d.next_round(None).await?;
    d.act(2, pb::ActionKind::Bet, 5_000).await?;
    d.act(1, pb::ActionKind::Fold, 0).await?;
    let view = table_view(&mut d.client, TABLE).await?;
    assert_eq!((stack(&view, 1), stack(&view, 2)), (18_000, 20_000 - 2_000 + 3_600));
    assert_eq!(view.rake_cents, 400);
    // The hand's view shows the return apart: a $90 pot of which $50 nobody called.
    let hand = d.client.table.get_hand(pb::GetHandRequest { property_id: String::new(), table_id: TABLE.into(), hand_no: Some(1) }).await?.into_inner();
    let pots: Vec<(i64, i64)> = hand.pots.iter().map(|pot| (pot.amount_cents, pot.returned_cents)).collect();
    assert_eq!(pots, [(9_000, 5_000)], "{:?}", hand.pots);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_6_a_full_kill_doubles_the_limits_and_a_half_kill_scales_them_by_one_and_a_half() -> anyhow::Result<()> {
    for (kill, kill_cents, small_after, big_after) in [(pb::KillPolicy::Full, 800, 800, 1_600), (pb::KillPolicy::Half, 600, 600, 1_200)] {
        let server = TestServer::start(&format!("ex-kill-{}", kill_cents)).await?;
        let four: Vec<(u32, i64)> = (1..=4).map(|s| (s, 20_000)).collect();
        // $4/$8 limit with a kill: the kill blind is 2x ($8) or 1.5x ($6) the big blind.
        let mut d = preset_with(&server, pb::GamePreset::FixedLimitHoldem, 400, 800, |c| c.kill = kill as i32, &four, "kill").await?;
        let blinds = table_view(&mut d.client, TABLE).await?.config.expect("configuration").blinds_cents;
        d.start(1, 4, &[1, 2, 3, 4]).await?;
        d.post(1, pb::PostKind::SmallBlind, blinds[0]).await?;
        d.post(2, pb::PostKind::BigBlind, blinds[1]).await?;
        d.post(3, pb::PostKind::Kill, kill_cents).await?;
        let legal = d.legal().await?;
        assert_eq!((legal.seat, legal.call_cents, range(&legal).1), (4, kill_cents, 2 * small_after), "{kill:?}: {legal:?}");
        d.act(4, pb::ActionKind::Call, 0).await?;
        d.act(1, pb::ActionKind::Call, 0).await?;
        d.act(2, pb::ActionKind::Call, 0).await?;
        d.act(3, pb::ActionKind::Check, 0).await?;
        // The flop at the scaled small bet, the turn at the scaled big bet.
        d.next_round(None).await?;
        assert_eq!(range(&d.legal().await?).1, small_after);
        for seat in [1, 2, 3, 4] {
            d.act(seat, pb::ActionKind::Check, 0).await?;
        }
        d.next_round(None).await?;
        assert_eq!(range(&d.legal().await?).1, big_after);
        server.stop().await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_7_a_player_short_of_the_big_blind_posts_all_in_and_the_call_is_the_full_blind() -> anyhow::Result<()> {
    let server = TestServer::start("ex-post-7").await?;
    let mut d = nlhe_with(&server, |_| {}, &[(1, 10_000), (2, 100), (3, 10_000)], "post7").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    assert_eq!(refused_at(d.post(2, pb::PostKind::BigBlind, 50).await, "required_cents"), ("POST_WRONG_AMOUNT".into(), "R-POST-7".into(), Some(200)));
    d.post(2, pb::PostKind::BigBlind, 100).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents), (3, 200), "the call is the full big blind");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_7_seeds_all_in_on_the_ante_heads_up_the_blind_still_goes_in() -> anyhow::Result<()> {
    // PLO $20/$50 with a $6 ante; seat 2 has $1 and is all in on the ante.
    let server = TestServer::start("ex-post-7-ante").await?;
    let mut d = preset_with(&server, pb::GamePreset::PotLimitOmaha, 2_000, 5_000, |c| c.ante_cents = 600, &[(1, 22_100), (2, 100)], "ante").await?;
    d.start(1, 2, &[1, 2]).await?;
    d.post(1, pb::PostKind::Ante, 600).await?;
    d.post(2, pb::PostKind::Ante, 100).await?;
    d.post(1, pb::PostKind::BigBlind, 5_000).await?;
    assert!(!d.legal().await?.seat_to_act, "nobody can bet against an all-in player");
    run_out(&mut d, 3).await?;
    d.showdown(&[&[1], &[2]], None).await?;
    // Seat 1 takes back its uncalled $55 and wins $1 x 2 of antes.
    assert_eq!(stacks(&mut d, &[1, 2]).await?, [22_200, 0]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_1_seeds_the_big_blind_yet_to_act_still_acts_when_the_small_blind_calls_all_in() -> anyhow::Result<()> {
    let server = TestServer::start("ex-bet-1-option").await?;
    let mut d = preset_with(&server, pb::GamePreset::PotLimitOmaha, 200, 600, |_| {}, &[(1, 600), (2, 93_000), (3, 5_200)], "option").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    d.post(1, pb::PostKind::SmallBlind, 200).await?;
    d.post(2, pb::PostKind::BigBlind, 600).await?;
    d.act(3, pb::ActionKind::Fold, 0).await?;
    d.act(1, pb::ActionKind::Call, 0).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.can_check, legal.raise.is_none()), (2, true, true), "the option, with no raise against an all-in player: {legal:?}");
    d.act(2, pb::ActionKind::Check, 0).await?;
    d.next_round(None).await?;
    assert!(!d.legal().await?.seat_to_act);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_2_seeds_heads_up_the_button_posts_the_small_blind_and_acts_first_only_preflop() -> anyhow::Result<()> {
    // Persian seed: "the player on the button always posts the small blind ... acts first
    // before the flop, last on every later round."
    let server = TestServer::start("ex-post-2-hu").await?;
    let mut d = nlhe_with(&server, |_| {}, &[(1, 10_000), (2, 10_000)], "hu").await?;
    d.start(1, 1, &[1, 2]).await?;
    assert_eq!(refused(d.post(2, pb::PostKind::SmallBlind, 100).await), ("BLIND_OUT_OF_POSITION".into(), "R-POST-2".into()));
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    assert_eq!(d.legal().await?.seat, 1);
    d.act(1, pb::ActionKind::Call, 0).await?;
    d.act(2, pb::ActionKind::Check, 0).await?;
    d.next_round(None).await?;
    assert_eq!(d.legal().await?.seat, 2);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_3_seeds_dead_button_the_big_blind_moves_one_seat_and_the_small_blind_is_dead() -> anyhow::Result<()> {
    // Kazakh seed (English original): "there is always a big blind even if the spot is vacated
    // by the player who is due to pay the big blind ... the small blind may not be paid".
    let server = TestServer::start("ex-post-3-dead").await?;
    let four: Vec<(u32, i64)> = (1..=4).map(|s| (s, 10_000)).collect();
    let mut d = nlhe_with(&server, |c| c.button_policy = pb::ButtonPolicy::Dead as i32, &four, "dead").await?;
    d.start(1, 4, &[1, 2, 3, 4]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    d.fold_round().await?;
    d.end().await?;
    let header = d.id();
    d.client.table.cash_out(pb::CashOut { header, table_id: TABLE.into(), seat: 2, player_id: "P2".into() }).await?;
    // The big blind moves from seat 2 to seat 3; the small blind would be seat 2's: dead.
    d.start(2, 1, &[1, 3, 4]).await?;
    assert_eq!(refused(d.post(1, pb::PostKind::SmallBlind, 100).await).0, "BLIND_OUT_OF_POSITION");
    d.post(3, pb::PostKind::BigBlind, 200).await?;
    assert_eq!(d.legal().await?.seat, 4);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_4_rules_default_a_raise_over_a_straddle_is_a_full_straddle() -> anyhow::Result<()> {
    // RULES.md default: 5/10 with a 20 straddle, the next raise is to 40 (the seeds' house rule,
    // to 30, is the table option proved in seeds_hand).
    let server = TestServer::start("ex-post-4-full").await?;
    let five: Vec<(u32, i64)> = (1..=5).map(|s| (s, 20_000)).collect();
    let straddle = |c: &mut pb::TableConfig| {
        c.blinds_cents = vec![500, 1_000];
        c.min_bet_cents = 1_000;
        c.straddle = pb::StraddlePolicy::UnderTheGun as i32;
    };
    let mut d = nlhe_with(&server, straddle, &five, "fullstraddle").await?;
    d.start(1, 5, &[1, 2, 3, 4, 5]).await?;
    d.post(1, pb::PostKind::SmallBlind, 500).await?;
    d.post(2, pb::PostKind::BigBlind, 1_000).await?;
    d.post(3, pb::PostKind::Straddle, 2_000).await?;
    assert_eq!(range(&d.legal().await?).1, 4_000);
    assert_eq!(refused(d.act(4, pb::ActionKind::Raise, 3_000).await), ("RAISE_BELOW_MINIMUM".into(), "R-BET-3".into()));
    server.stop().await
}

/// The seeds' players: Alice small blind, Dianne big blind, Carol next, then Joan, Ellen on the
/// button; $1/$2.
const ALICE: u32 = 1;
const DIANNE: u32 = 2;
const CAROL: u32 = 3;
const JOAN: u32 = 4;
const ELLEN: u32 = 5;

async fn seeds_table(server: &TestServer, change: impl FnOnce(&mut pb::TableConfig), tag: &'static str) -> anyhow::Result<Dealer> {
    let five: Vec<(u32, i64)> = (1..=5).map(|s| (s, 20_000)).collect();
    let mut d = nlhe_with(server, change, &five, tag).await?;
    d.start(1, ELLEN, &[1, 2, 3, 4, 5]).await?;
    d.post(ALICE, pb::PostKind::SmallBlind, 100).await?;
    d.post(DIANNE, pb::PostKind::BigBlind, 200).await?;
    Ok(d)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_4_seeds_live_straddle_example_the_straddler_has_the_option() -> anyhow::Result<()> {
    // "Alice posts $1, Dianne $2, Carol a $4 straddle. Joan is now first; she folds. Ellen calls
    // the straddle. Alice folds. Dianne calls $2 more. Carol has the option to check or raise;
    // she raises to $8. Ellen folds. Dianne calls, ending the round."
    let server = TestServer::start("ex-seeds-live-straddle").await?;
    let mut d = seeds_table(&server, |c| c.straddle = pb::StraddlePolicy::UnderTheGun as i32, "live").await?;
    d.post(CAROL, pb::PostKind::Straddle, 400).await?;
    assert_eq!(d.legal().await?.seat, JOAN);
    d.act(JOAN, pb::ActionKind::Fold, 0).await?;
    d.act(ELLEN, pb::ActionKind::Call, 0).await?;
    d.act(ALICE, pb::ActionKind::Fold, 0).await?;
    assert_eq!(d.legal().await?.call_cents, 200, "Dianne calls $2 more");
    d.act(DIANNE, pb::ActionKind::Call, 0).await?;
    let option = d.legal().await?;
    assert_eq!((option.seat, option.can_check), (CAROL, true), "the straddle's option: {option:?}");
    d.act(CAROL, pb::ActionKind::Raise, 800).await?;
    d.act(ELLEN, pb::ActionKind::Fold, 0).await?;
    d.act(DIANNE, pb::ActionKind::Call, 0).await?;
    assert!(!d.legal().await?.seat_to_act, "the round is over");
    assert_eq!(pot(&mut d).await?, 100 + 400 + 800 + 800);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_4_seeds_mississippi_straddle_from_the_button_acts_last() -> anyhow::Result<()> {
    // "Alice posts $1 and Dianne $2. Ellen, on the button, posts a $4 Mississippi straddle.
    // Alice is now first; she folds. Dianne calls $2 more. Carol folds. Joan calls. Ellen has
    // the option; she checks, ending the round."
    let server = TestServer::start("ex-seeds-mississippi").await?;
    let mut d = seeds_table(&server, |c| c.straddle = pb::StraddlePolicy::UnderTheGunOrButton as i32, "miss").await?;
    d.post(ELLEN, pb::PostKind::Straddle, 400).await?;
    assert_eq!(d.legal().await?.seat, ALICE);
    d.act(ALICE, pb::ActionKind::Fold, 0).await?;
    d.act(DIANNE, pb::ActionKind::Call, 0).await?;
    d.act(CAROL, pb::ActionKind::Fold, 0).await?;
    d.act(JOAN, pb::ActionKind::Call, 0).await?;
    let option = d.legal().await?;
    assert_eq!((option.seat, option.can_check), (ELLEN, true));
    d.act(ELLEN, pb::ActionKind::Check, 0).await?;
    assert!(!d.legal().await?.seat_to_act);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_4_seeds_sleeper_example_the_big_blind_loses_its_option() -> anyhow::Result<()> {
    // "Alice $1, Dianne $2, and Joan a $4 sleeper. Carol acts first ... faces $4; she calls.
    // Joan has no extra bet and no option, so play passes to Ellen; she calls $4. Alice folds.
    // Dianne, in the big blind, has no option now: she raises to $8. Carol re-raises to $12.
    // Joan faces $8 more; she calls, as do Ellen and Dianne, ending the round."
    let server = TestServer::start("ex-seeds-sleeper").await?;
    let mut d = seeds_table(&server, |c| c.sleeper_allowed = true, "sleeper").await?;
    d.post(JOAN, pb::PostKind::Sleeper, 400).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents), (CAROL, 400));
    d.act(CAROL, pb::ActionKind::Call, 0).await?;
    assert_eq!(d.legal().await?.seat, ELLEN, "the sleeper has no option");
    d.act(ELLEN, pb::ActionKind::Call, 0).await?;
    d.act(ALICE, pb::ActionKind::Fold, 0).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.can_check), (DIANNE, false), "the big blind has no option now");
    d.act(DIANNE, pb::ActionKind::Raise, 800).await?;
    d.act(CAROL, pb::ActionKind::Raise, 1_200).await?;
    assert_eq!(d.legal().await?.call_cents, 800, "Joan faces $8 more");
    for seat in [JOAN, ELLEN, DIANNE] {
        d.act(seat, pb::ActionKind::Call, 0).await?;
    }
    assert!(!d.legal().await?.seat_to_act);
    assert_eq!(pot(&mut d).await?, 100 + 4 * 1_200);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_mark_3_legal_actions_offer_no_call_a_borrower_to_raise_may_not_make() -> anyhow::Result<()> {
    let server = TestServer::start("ex-mark-3").await?;
    let open = |c: &mut pb::TableConfig| {
        c.open_stakes = Some(pb::OpenStakes { iou_auto_accept_below_cents: 100_000, ious_allowed: None });
        no_blinds(200)(c);
    };
    let mut d = nlhe_with(&server, open, &[(1, 30_000), (2, 5_000), (3, 30_000)], "mark3").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    d.act(1, pb::ActionKind::Bet, 5_000).await?;
    // Seat 2 borrows $100 to raise (auto-accepted below $1,000), raises to $100.
    let header = d.id();
    let iou = pb::WriteIou { header, table_id: TABLE.into(), seat: 2, amount_cents: 10_000, lender_player_id: None, accepted_by: vec![], to_raise: true };
    d.client.table.write_iou(iou).await?;
    d.act(2, pb::ActionKind::Raise, 10_000).await?;
    d.act(3, pb::ActionKind::Raise, 20_000).await?;
    d.act(1, pb::ActionKind::Call, 0).await?;
    // Calling $100 with the $50 left would be an all in, forfeited by the borrow to raise.
    let legal = d.legal().await?;
    assert_eq!(legal.seat, 2);
    assert!(!legal.can_call && !legal.all_in_allowed && legal.raise.is_none() && legal.can_fold, "{legal:?}");
    assert_eq!(refused(d.act(2, pb::ActionKind::Call, 0).await), ("ALL_IN_AFTER_BORROW_TO_RAISE".into(), "R-MARK-3".into()));
    d.act(2, pb::ActionKind::Fold, 0).await?;
    server.stop().await
}

/// The rounds left of a hold'em hand (flop, turn, river), each checked through by `order`.
async fn check_down(d: &mut Dealer, order: &[u32]) -> anyhow::Result<()> {
    for _ in 0..3 {
        d.next_round(None).await?;
        for seat in order {
            d.act(*seat, pb::ActionKind::Check, 0).await?;
        }
    }
    Ok(())
}

/// The dealer's showdown with a low ranking (high-low games): `low` empty means no qualifying low.
async fn showdown_hi_lo(d: &mut Dealer, high: &[&[u32]], low: &[&[u32]]) -> Result<pb::CommandResult, tonic::Status> {
    let header = d.id();
    let group = |seats: &&[u32]| pb::SeatGroup { seats: seats.to_vec() };
    let showdown = pb::Showdown { header, table_id: TABLE.into(), high: high.iter().map(group).collect(), low: low.iter().map(group).collect(), has_low: true, rake_cents: None };
    d.client.table.showdown(showdown).await.map(tonic::Response::into_inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_pot_5_a_split_pot_gives_its_odd_chip_to_the_first_winner_clockwise_from_the_button() -> anyhow::Result<()> {
    let server = TestServer::start("ex-pot-5-odd").await?;
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 10_000)).collect();
    let mut d = nlhe_with(&server, no_blinds(100), &three, "odd").await?;
    // Button 1; $1 each: a $3 pot, seats 1 and 3 tie. $1 each in whole chips, the odd $1 to
    // seat 3 (the first winner clockwise from the button).
    d.start(1, 1, &[1, 2, 3]).await?;
    d.act(2, pb::ActionKind::Bet, 100).await?;
    d.act(3, pb::ActionKind::Call, 0).await?;
    d.act(1, pb::ActionKind::Call, 0).await?;
    check_down(&mut d, &[2, 3, 1]).await?;
    d.showdown(&[&[1, 3], &[2]], None).await?;
    assert_eq!(stacks(&mut d, &[1, 2, 3]).await?, [10_000, 9_900, 10_100]);
    server.stop().await
}

/// Omaha hi-lo $2/$4 (blinds $1/$2): seat 1 posts the small blind and folds, seats 2 and 3
/// play a $5 pot to the showdown.
async fn hi_lo_five_dollar_pot(server: &TestServer, tag: &'static str) -> anyhow::Result<Dealer> {
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 10_000)).collect();
    let mut d = preset_with(server, pb::GamePreset::OmahaHiLo, 200, 400, |_| {}, &three, tag).await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    d.act(3, pb::ActionKind::Call, 0).await?;
    d.act(1, pb::ActionKind::Fold, 0).await?;
    d.act(2, pb::ActionKind::Check, 0).await?;
    check_down(&mut d, &[2, 3]).await?;
    Ok(d)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_pot_5_high_low_halves_the_pot_with_the_odd_chip_to_the_high_half() -> anyhow::Result<()> {
    let server = TestServer::start("ex-pot-5-hilo").await?;
    let mut d = hi_lo_five_dollar_pot(&server, "hilo").await?;
    // $5: the high hand (seat 2) $3 with the odd chip, the qualifying low (seat 3) $2.
    showdown_hi_lo(&mut d, &[&[2], &[3]], &[&[3]]).await?;
    assert_eq!(stacks(&mut d, &[1, 2, 3]).await?, [9_900, 10_100, 10_000]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_pot_5_with_no_qualifying_low_the_high_hand_takes_the_whole_pot() -> anyhow::Result<()> {
    let server = TestServer::start("ex-pot-5-nolow").await?;
    let mut d = hi_lo_five_dollar_pot(&server, "nolow").await?;
    showdown_hi_lo(&mut d, &[&[2], &[3]], &[]).await?;
    assert_eq!(stacks(&mut d, &[1, 2, 3]).await?, [9_900, 10_300, 9_800]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_1_a_big_blind_ante_is_posted_first_and_goes_whole_into_the_main_pot() -> anyhow::Result<()> {
    let server = TestServer::start("ex-post-1-bba").await?;
    let bba = |c: &mut pb::TableConfig| {
        c.ante_cents = 200;
        c.big_blind_ante = true;
    };
    let mut d = nlhe_with(&server, bba, &[(1, 10_000), (2, 10_000), (3, 300), (4, 10_000)], "bba").await?;
    d.start(1, 4, &[1, 2, 3, 4]).await?;
    assert_eq!(refused(d.post(1, pb::PostKind::Ante, 200).await).0, "POST_NOT_CONFIGURED", "only the big blind antes");
    assert_eq!(refused_at(d.post(3, pb::PostKind::BigBlindAnte, 200).await, "expected_seat"), ("BLIND_OUT_OF_POSITION".into(), "R-POST-2".into(), Some(2)));
    assert_eq!(refused(d.post(2, pb::PostKind::BigBlind, 200).await).0, "ANTE_BEFORE_BLIND", "the ante comes first");
    assert_eq!(refused(d.post(2, pb::PostKind::BigBlindAnte, 800).await).0, "POST_WRONG_AMOUNT");
    d.post(2, pb::PostKind::BigBlindAnte, 200).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    d.act(3, pb::ActionKind::AllIn, 0).await?; // all in for $3
    for seat in [4, 1, 2] {
        d.act(seat, pb::ActionKind::Call, 0).await?;
    }
    d.next_round(None).await?;
    d.act(1, pb::ActionKind::Fold, 0).await?;
    d.act(2, pb::ActionKind::Bet, 1_000).await?;
    d.act(4, pb::ActionKind::Call, 0).await?;
    for _ in 0..2 {
        d.next_round(None).await?;
        d.act(2, pb::ActionKind::Check, 0).await?;
        d.act(4, pb::ActionKind::Check, 0).await?;
    }
    d.showdown(&[&[3], &[2], &[4]], None).await?;
    // The main pot: the whole $2 ante (not layered by the short stack) + 4 x $3 = $14.
    let hand = d.client.table.get_hand(pb::GetHandRequest { property_id: String::new(), table_id: TABLE.into(), hand_no: Some(1) }).await?.into_inner();
    assert_eq!((hand.pots[0].amount_cents, hand.pots[0].eligible_seats.clone()), (1_400, vec![2, 3, 4]));
    assert_eq!(stacks(&mut d, &[3]).await?, [1_400]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_1_a_button_ante_comes_from_the_button_for_the_whole_table() -> anyhow::Result<()> {
    let server = TestServer::start("ex-post-1-button").await?;
    let button_ante = |c: &mut pb::TableConfig| {
        c.ante_cents = 100;
        c.button_ante = true;
    };
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 10_000)).collect();
    let mut d = nlhe_with(&server, button_ante, &three, "buttonante").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    assert_eq!(refused_at(d.post(1, pb::PostKind::ButtonAnte, 300).await, "expected_seat"), ("ANTE_OUT_OF_POSITION".into(), "R-POST-1".into(), Some(3)));
    d.post(3, pb::PostKind::ButtonAnte, 300).await?;
    assert_eq!(stacks(&mut d, &[1, 2, 3]).await?, [10_000, 10_000, 9_700], "$1 for each of three, from the button");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_1_each_player_pays_the_ante_before_the_blind() -> anyhow::Result<()> {
    let server = TestServer::start("ex-post-7-ante-first").await?;
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 10_000)).collect();
    let mut d = nlhe_with(&server, |c| c.ante_cents = 100, &three, "antefirst").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    // R-POST-1: "a short-stacked player pays the ante first, then the blind".
    assert_eq!(refused(d.post(1, pb::PostKind::SmallBlind, 100).await), ("ANTE_BEFORE_BLIND".into(), "R-POST-1".into()));
    d.post(1, pb::PostKind::Ante, 100).await?;
    // Every player's ante before any blind: the bet a blind makes is judged with them in.
    assert_eq!(refused(d.post(1, pb::PostKind::SmallBlind, 100).await), ("ANTES_NOT_POSTED".into(), "R-POST-1".into()));
    d.post(2, pb::PostKind::Ante, 100).await?;
    d.post(3, pb::PostKind::Ante, 100).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    server.stop().await
}

fn top_up(d: &mut Dealer, seat: u32, amount_cents: i64) -> pb::TopUp {
    pb::TopUp { header: d.id(), table_id: TABLE.into(), seat, amount_cents, source: pb::FundsSource::Cash as i32, supervisor_id: None, player_id: format!("P{seat}") }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_stake_1_nothing_is_added_to_a_stack_in_the_hand_but_a_folded_player_may_top_up() -> anyhow::Result<()> {
    let server = TestServer::start("ex-stake-1").await?;
    let three: Vec<(u32, i64)> = (1..=3).map(|s| (s, 10_000)).collect();
    let mut d = nlhe_with(&server, |_| {}, &three, "stake1").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    let request = top_up(&mut d, 3, 1_000);
    assert_eq!(refused_at(d.client.table.top_up(request).await, "seat"), ("HAND_IN_PROGRESS".into(), "R-STAKE-1".into(), Some(3)));
    // R-MARK-2: a table-stakes game takes no IOU.
    let header = d.id();
    let iou = pb::WriteIou { header, table_id: TABLE.into(), seat: 3, amount_cents: 500, lender_player_id: None, accepted_by: vec![1, 2], to_raise: false };
    assert_eq!(refused(d.client.table.write_iou(iou).await), ("IOU_NOT_ALLOWED".into(), "R-MARK-2".into()));
    d.act(3, pb::ActionKind::Fold, 0).await?;
    let request = top_up(&mut d, 3, 1_000);
    d.client.table.top_up(request).await?;
    assert_eq!(stacks(&mut d, &[3]).await?, [11_000], "a player who folded may top up");
    server.stop().await
}

fn open_stakes(min_buy_in_cents: i64) -> impl FnOnce(&mut pb::TableConfig) {
    move |c| {
        c.open_stakes = Some(pb::OpenStakes { iou_auto_accept_below_cents: 100_000, ious_allowed: None });
        with_buy_in(c, min_buy_in_cents, 100_000);
        no_blinds(200)(c);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_mark_4_in_an_open_stakes_game_a_player_in_the_hand_may_buy_chips_with_cash() -> anyhow::Result<()> {
    let server = TestServer::start("ex-mark-4").await?;
    let mut d = nlhe_with(&server, open_stakes(100), &[(1, 10_000), (2, 10_000)], "mark4").await?;
    d.start(1, 2, &[1, 2]).await?;
    d.act(1, pb::ActionKind::Bet, 5_000).await?;
    let request = top_up(&mut d, 2, 5_000);
    d.client.table.top_up(request).await?;
    d.act(2, pb::ActionKind::Raise, 15_000).await?;
    assert_eq!(stacks(&mut d, &[2]).await?, [0]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_rebuy_3_a_short_all_in_winner_of_an_open_stakes_game_must_rebuy_in_full() -> anyhow::Result<()> {
    let server = TestServer::start("ex-rebuy-3").await?;
    let mut d = nlhe_with(&server, open_stakes(10_000), &[(1, 10_000), (2, 30_000), (3, 30_000)], "rebuy3").await?;
    // Seat 1 loses $80 of its $100.
    d.start(1, 3, &[1, 2, 3]).await?;
    d.act(1, pb::ActionKind::Bet, 8_000).await?;
    d.act(2, pb::ActionKind::Call, 0).await?;
    d.act(3, pb::ActionKind::Fold, 0).await?;
    check_down(&mut d, &[1, 2]).await?;
    d.showdown(&[&[2], &[1]], None).await?;
    d.end().await?;
    // All in for its $20, it wins the $60 main pot: less than the $100 minimum buy-in.
    d.start(2, 1, &[1, 2, 3]).await?;
    d.act(2, pb::ActionKind::Bet, 2_000).await?;
    d.act(3, pb::ActionKind::Call, 0).await?;
    d.act(1, pb::ActionKind::AllIn, 0).await?;
    check_down(&mut d, &[2, 3]).await?;
    d.showdown(&[&[1], &[2, 3]], None).await?;
    d.end().await?;
    assert_eq!(stacks(&mut d, &[1]).await?, [6_000]);
    let request = top_up(&mut d, 1, 1_000);
    assert_eq!(refused_at(d.client.table.top_up(request).await, "min_buy_in_cents"), ("FULL_REBUY_REQUIRED".into(), "R-REBUY-3".into(), Some(10_000)));
    let header = d.id();
    let iou = pb::WriteIou { header, table_id: TABLE.into(), seat: 1, amount_cents: 500, lender_player_id: None, accepted_by: vec![], to_raise: false };
    assert_eq!(refused(d.client.table.write_iou(iou).await).0, "FULL_REBUY_REQUIRED", "nor borrow");
    // Back to a full buy-in: $40 more.
    let request = top_up(&mut d, 1, 4_000);
    d.client.table.top_up(request).await?;
    assert_eq!(stacks(&mut d, &[1]).await?, [10_000]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_2_seeds_three_blinds_first_on_the_button_and_half_a_bet_is_called_or_completed() -> anyhow::Result<()> {
    // Kazakh seed: "three blinds (usually one quarter, one quarter, and half a normal bet) ...
    // the first blind goes on the button" (the table option `first_blind_on_button`).
    let server = TestServer::start("ex-three-blinds").await?;
    let five: Vec<(u32, i64)> = (1..=5).map(|s| (s, 10_000)).collect();
    let three = |c: &mut pb::TableConfig| {
        c.blinds_cents = vec![100, 100, 200];
        c.first_blind_on_button = true;
    };
    let mut d = preset_with(&server, pb::GamePreset::FixedLimitHoldem, 400, 800, three, &five, "three").await?;
    d.start(1, 5, &[1, 2, 3, 4, 5]).await?;
    assert_eq!(refused(d.post(1, pb::PostKind::SmallBlind, 100).await), ("BLIND_OUT_OF_POSITION".into(), "R-POST-2".into()));
    d.post(5, pb::PostKind::SmallBlind, 100).await?;
    d.post(1, pb::PostKind::BigBlind, 100).await?;
    d.post(2, pb::PostKind::ThirdBlind, 200).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, range(&legal)), (3, 200, (pb::ActionKind::Complete, 400, 400)), "{legal:?}");
    d.act(3, pb::ActionKind::Complete, 0).await?;
    assert_eq!(range(&d.legal().await?), (pb::ActionKind::Raise, 800, 800), "the completion is the bet");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_9_seeds_spread_limit_five_raised_to_ten_fifteen_twenty_is_capped() -> anyhow::Result<()> {
    let server = TestServer::start("ex-spread-cap").await?;
    let spread = spread_1_to_5(None);
    let four: Vec<(u32, i64)> = (1..=4).map(|s| (s, 20_000)).collect();
    let mut d = preset_with(&server, pb::GamePreset::NoLimitHoldem, 100, 200, spread, &four, "spreadcap").await?;
    d.start(1, 4, &[1, 2, 3, 4]).await?;
    d.act(1, pb::ActionKind::Bet, 500).await?;
    for (seat, to) in [(2, 1_000), (3, 1_500), (4, 2_000)] {
        d.act(seat, pb::ActionKind::Raise, to).await?;
    }
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, legal.raise.is_none()), (1, 1_500, true), "{legal:?}");
    assert_eq!(refused(d.act(1, pb::ActionKind::Raise, 2_500).await), ("BETTING_CAPPED".into(), "R-BET-6".into()));
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_mark_3_seeds_a_marker_from_a_player_not_in_the_pot_stands_without_acceptance() -> anyhow::Result<()> {
    let server = TestServer::start("ex-lender").await?;
    let open = |c: &mut pb::TableConfig| {
        c.open_stakes = Some(pb::OpenStakes { iou_auto_accept_below_cents: 1_000, ious_allowed: None });
        no_blinds(200)(c);
    };
    let mut d = nlhe_with(&server, open, &[(1, 30_000), (2, 2_000), (3, 30_000), (4, 30_000)], "lender").await?;
    d.start(1, 3, &[1, 2, 3]).await?;
    d.act(1, pb::ActionKind::Bet, 5_000).await?;
    let iou = |d: &mut Dealer, lender: Option<&str>| pb::WriteIou {
        header: d.id(),
        table_id: TABLE.into(),
        seat: 2,
        amount_cents: 10_000,
        lender_player_id: lender.map(str::to_string),
        accepted_by: vec![],
        to_raise: false,
    };
    let unaccepted = iou(&mut d, None);
    assert_eq!(refused(d.client.table.write_iou(unaccepted).await).0, "IOU_NOT_ACCEPTED");
    let in_pot = iou(&mut d, Some("P3"));
    assert_eq!(refused_at(d.client.table.write_iou(in_pot).await, "lender_seat"), ("IOU_LENDER_IN_POT".into(), "R-MARK-3".into(), Some(3)));
    // P4, seated but not dealt in, lends: the players in the pot are compelled to accept.
    let outside = iou(&mut d, Some("P4"));
    d.client.table.write_iou(outside).await?;
    assert_eq!(stacks(&mut d, &[2]).await?, [12_000]);
    d.act(2, pb::ActionKind::Call, 0).await?;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_11_seeds_half_bet_rule_an_all_in_of_half_a_raise_reopens_for_the_opener_main_90_side_40() -> anyhow::Result<()> {
    let server = TestServer::start("ex-half-reopen").await?;
    let (a, b, c) = (1, 2, 3);
    let mut d = limit_20(&server, &[(a, 30_000), (b, 3_000), (c, 30_000)], "halfreopen").await?;
    d.start(1, c, &[a, b, c]).await?;
    // A bets $20, B all in to $30 (half a raise or more: a full raise), C calls.
    d.act(a, pb::ActionKind::Bet, 2_000).await?;
    d.act(b, pb::ActionKind::AllIn, 0).await?;
    d.act(c, pb::ActionKind::Call, 0).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, range(&legal)), (a, 1_000, (pb::ActionKind::Raise, 5_000, 5_000)), "{legal:?}");
    d.act(a, pb::ActionKind::Raise, 5_000).await?;
    d.act(c, pb::ActionKind::Call, 0).await?;
    check_down(&mut d, &[a, c]).await?;
    d.showdown(&[&[b], &[a], &[c]], None).await?;
    let hand = d.client.table.get_hand(pb::GetHandRequest { property_id: String::new(), table_id: TABLE.into(), hand_no: Some(1) }).await?.into_inner();
    let pots: Vec<(i64, Vec<u32>)> = hand.pots.iter().map(|p| (p.amount_cents, p.eligible_seats.clone())).collect();
    assert_eq!(pots, [(9_000, vec![a, b, c]), (4_000, vec![a, c])]);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_bet_14_seeds_declared_and_undeclared_chips_put_out() -> anyhow::Result<()> {
    let server = TestServer::start("ex-declared").await?;
    let mut d = nlhe_with(&server, no_blinds(500), &[(1, 20_000), (2, 20_000)], "declared").await?;
    let put_out = |d: &mut Dealer, seat: u32, chips: Vec<pb::ChipCount>, declared: Option<(pb::ActionKind, i64)>| pb::PutOutChips {
        header: d.id(),
        table_id: TABLE.into(),
        seat,
        chips,
        declared_kind: declared.map(|(kind, _)| kind as i32),
        declared_to_cents: declared.map_or(0, |(_, to)| to),
    };
    // Two $25 chips with "bet $35": the bet is $35 and $15 comes back.
    d.start(1, 2, &[1, 2]).await?;
    let request = put_out(&mut d, 1, vec![chips(2_500, 2)], Some((pb::ActionKind::Bet, 3_500)));
    d.client.table.put_out_chips(request).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents), (2, 3_500));
    assert_eq!(stacks(&mut d, &[1]).await?, [20_000 - 3_500]);
    d.fold_round().await?;
    d.end().await?;
    // Alice bets $5; Dianne puts out $20 saying "raise to $15": $5 back, the next raise to $25.
    d.start(2, 2, &[1, 2]).await?;
    d.act(1, pb::ActionKind::Bet, 500).await?;
    let request = put_out(&mut d, 2, vec![chips(500, 4)], Some((pb::ActionKind::Raise, 1_500)));
    d.client.table.put_out_chips(request).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, range(&legal).1), (1, 1_000, 2_500), "{legal:?}");
    d.fold_round().await?;
    d.end().await?;
    // Four $5 chips without a word facing $5: a raise to $20.
    d.start(3, 2, &[1, 2]).await?;
    d.act(1, pb::ActionKind::Bet, 500).await?;
    let request = put_out(&mut d, 2, vec![chips(500, 4)], None);
    d.client.table.put_out_chips(request).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.bet_to_cents, legal.call_cents), (1, 2_000, 1_500), "{legal:?}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_4_seeds_no_more_than_one_re_straddle_by_default() -> anyhow::Result<()> {
    // Kazakh seed: the player left of the straddler may re-straddle, twice the straddle; "most
    // card rooms allow no more than one re-straddle" (`max_restraddles`, absent: 1).
    let server = TestServer::start("ex-restraddle").await?;
    let mut d = seeds_table(&server, |c| c.straddle = pb::StraddlePolicy::UnderTheGun as i32, "restraddle").await?;
    let config = table_view(&mut d.client, TABLE).await?.config.expect("configuration");
    assert_eq!(config.max_restraddles, Some(1));
    d.post(CAROL, pb::PostKind::Straddle, 400).await?;
    assert_eq!(refused(d.post(ELLEN, pb::PostKind::Straddle, 800).await).0, "STRADDLE_OUT_OF_POSITION");
    d.post(JOAN, pb::PostKind::Straddle, 800).await?;
    assert_eq!(refused_at(d.post(ELLEN, pb::PostKind::Straddle, 1_600).await, "max_restraddles"), ("RESTRADDLE_LIMIT".into(), "R-POST-4".into(), Some(1)));
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents, range(&legal).1), (ELLEN, 800, 1_600), "{legal:?}");
    server.stop().await
}
