//! Section 5 worked examples (R-BET-*), driven through `decide` and `evolve`.

use chipledger_rules::*;

use crate::support::*;

/// No blinds: the first round plays like a post-flop round with a minimum bet.
fn no_blinds(mut c: TableConfig, min_bet_cents: Cents) -> TableConfig {
    c.blinds_cents = Vec::new();
    c.min_bet_cents = min_bet_cents;
    example_config(c)
}

fn nl(min_bet_dollars: i64) -> TableConfig {
    no_blinds(TableConfig::no_limit_holdem(d(1), d(2)), d(min_bet_dollars))
}

#[test]
fn r_bet_3_raise_at_least_previous_bet_or_raise() {
    let mut g = Game::new(nl(5), &[(1, d(500)), (2, d(500)), (3, d(500))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(5));
    let l = g.legal();
    assert_eq!((l.seat, l.raise.unwrap().min_to_cents), (2, d(10)), "$5 bet: raise to at least $10");
    g.ok(2, raise(12));
    assert_eq!(g.legal().raise.unwrap().min_to_cents, d(19), "$5 raised by $7 to $12: next raise to at least $19");
    let r = rejected(g.act(3, raise(18)), "RAISE_BELOW_MINIMUM");
    assert_eq!(r.number("min_raise_to_cents"), Some(d(19)));
    g.ok(3, raise(19));
}

#[test]
fn r_bet_3_opening_bet_at_least_the_minimum_bet() {
    let mut g = Game::new(nl(5), &[(1, d(500)), (2, d(500))]);
    g.start(1, 2, &[1, 2]);
    let r = rejected(g.act(1, bet(4)), "BET_BELOW_MINIMUM");
    assert_eq!(r.number("min_bet_to_cents"), Some(d(5)));
}

#[test]
fn r_bet_4_all_in_for_less_than_a_legal_bet() {
    let mut g = Game::new(nl(5), &[(1, d(4)), (2, d(500)), (3, d(500))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, Action::AllIn);
    let l = g.legal();
    assert_eq!(l.call_cents, d(4), "the next player may call $4");
    assert_eq!(l.raise.unwrap().min_to_cents, d(9), "or raise to at least $9");
    rejected(g.act(2, raise(8)), "RAISE_BELOW_MINIMUM");
}

#[test]
fn r_bet_5_raise_to_is_the_round_total() {
    let mut g = Game::new(nl(5), &[(1, d(500)), (2, d(500))]);
    g.start(1, 2, &[1, 2]);
    g.ok(1, bet(5));
    let events = g.act(2, raise(15)).unwrap();
    match &events[0].1 {
        Event::Table(TableEvent::Acted { kind, to_cents, amount_cents, .. }) => {
            assert_eq!((*kind, *to_cents, *amount_cents), (ActionKind::Raise, d(15), d(15)));
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(g.hand().round.min_raise_cents, d(10), "raise to $15 is a raise of $10 more than the $5 bet");
    assert_eq!(g.stack(2), d(485));
    // Alice re-raising "to $25" puts in $20 more than her $5.
    let events = g.act(1, raise(25)).unwrap();
    match &events[0].1 {
        Event::Table(TableEvent::Acted { amount_cents, .. }) => assert_eq!(*amount_cents, d(20)),
        e => panic!("{e:?}"),
    }
}

/// R-BET-7: pot limit, four players of $1,000 and no blinds; the first round ($5 bet, three
/// calls) builds a $20 pot and the second round begins.
fn pot_limit_flop_of_20(overbet_stands_unchallenged: bool) -> Game {
    let mut config = no_blinds(TableConfig::pot_limit_holdem(d(1), d(2)), d(5));
    config.overbet_stands_unchallenged = overbet_stands_unchallenged;
    let mut g = Game::new(config, &[(1, d(1000)), (2, d(1000)), (3, d(1000)), (4, d(1000))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    g.ok(1, bet(5));
    for s in [2, 3, 4] {
        g.ok(s, Action::Call);
    }
    g.next_round();
    g
}

#[test]
fn r_bet_7_seeds_an_unchallenged_pot_limit_overbet_stands_where_the_table_says_so() {
    // Persian seed: "اگر مقدار شرط بندی غیر مجاز توسط یک بازیکن قبل از هرگونه اقدام اضافی مورد
    // اعتراض قرار نگیرد، شرط باقی میماند" (if an illegal bet amount is not challenged by a player
    // before any further action, the bet stands). The $20 pot of the sequence above; A bets $5,
    // the pot-limit raise is to $35, and B raises to $50.
    let at_the_overbet = |stands: bool| {
        let mut g = pot_limit_flop_of_20(stands);
        g.ok(1, bet(5));
        g
    };
    let mut g = at_the_overbet(false);
    let r = rejected(g.act(2, raise(50)), "RAISE_ABOVE_POT_LIMIT");
    assert_eq!(r.number("max_raise_to_cents"), Some(d(35)));
    let mut g = at_the_overbet(true);
    g.ok(2, raise(50));
    assert_eq!((g.stack(2), g.hand().pot_cents), (d(945), d(75)), "the $50 stood");
    // Never beyond the stack.
    rejected(g.act(3, raise(2_000)), "BET_EXCEEDS_STACK");
}

#[test]
fn r_bet_7_pot_limit_sequence_to_520() {
    let mut g = pot_limit_flop_of_20(false);
    assert_eq!(g.hand().pot_cents, d(20));
    g.ok(1, bet(5)); // A bets $5
    assert_eq!(g.legal().raise.unwrap().max_to_cents, d(35), "B pots: calls $5 and raises $30 to $35");
    g.ok(2, raise(35));
    assert_eq!(g.hand().pot_cents, d(60));
    g.ok(3, Action::Call);
    assert_eq!(g.hand().pot_cents, d(95));
    assert_eq!(g.legal().raise.unwrap().max_to_cents, d(165), "D pots: 3*35 + 40 + 20 = $165");
    let r = rejected(g.act(4, raise(166)), "RAISE_ABOVE_POT_LIMIT");
    assert_eq!(r.number("max_raise_to_cents"), Some(d(165)));
    g.ok(4, raise(165));
    g.ok(1, Action::Fold);
    g.ok(2, Action::Call);
    g.ok(3, Action::Call);
    assert_eq!(g.hand().pot_cents, d(520), "pot $520");
    assert_eq!(g.hand().phase, HandPhase::RoundComplete);
}

#[test]
fn r_bet_8_half_pot_limit() {
    let config = no_blinds(TableConfig::half_pot_limit_holdem(d(1), d(2)), d(5));
    let mut g = Game::new(config, &[(1, d(1000)), (2, d(1000)), (3, d(1000))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(5));
    g.ok(2, Action::Call);
    g.ok(3, Action::Call);
    g.next_round();
    g.ok(1, bet(6)); // pot 15 + 6
    // after the call: pot 27; half = 13.50 -> $13 in whole chips; raise to 6 + 13 = 19.
    assert_eq!(g.legal().raise.unwrap().max_to_cents, d(19));
    let r = rejected(g.act(2, raise(20)), "RAISE_ABOVE_HALF_POT");
    assert_eq!(r.number("max_raise_to_cents"), Some(d(19)));
    g.ok(2, raise(19));
}

#[test]
fn r_bet_9_spread_limit_range_and_bigger_on_the_end() {
    let mut c = TableConfig::spread_limit_holdem(d(1), d(1), d(1), d(5), Some(d(10)));
    c.blinds_cents = Vec::new();
    let mut g = Game::new(example_config(c), &[(1, d(500)), (2, d(500))]);
    g.start(1, 2, &[1, 2]);
    rejected(g.act(1, bet(6)), "BET_OUTSIDE_SPREAD");
    g.ok(1, bet(3));
    let l = g.legal().raise.unwrap();
    assert_eq!((l.min_to_cents, l.max_to_cents), (d(6), d(8)), "raise at least the previous bet, at most $5");
    g.ok(2, Action::Call);
    assert_eq!(g.hand().phase, HandPhase::RoundComplete);
}

/// R-BET-9 (the second betting pass): with $1/$2 blinds and a $1-$5 spread, the big blind is
/// the round's bet: a raise is at least $2 more, to $4 (a raise to $3 was accepted).
#[test]
fn r_bet_9_spread_limit_a_raise_is_at_least_the_big_blind() {
    let c = TableConfig::spread_limit_holdem(d(1), d(2), d(1), d(5), Some(d(10)));
    let mut g = Game::new(example_config(c), &[(1, d(500)), (2, d(500)), (3, d(500))]);
    g.start(1, 1, &[1, 2, 3]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    let l = g.legal().raise.unwrap();
    assert_eq!((g.legal().seat, l.min_to_cents, l.max_to_cents), (1, d(4), d(7)), "at least the $2 bet more, at most $5");
    let r = rejected(g.act(1, raise(3)), "RAISE_BELOW_MINIMUM");
    assert_eq!((r.reason.rule, r.number("min_raise_to_cents")), ("R-BET-9", Some(d(4))));
    g.ok(1, raise(4));
}

#[test]
fn r_bet_9_spread_limit_last_round_allows_ten() {
    let mut c = TableConfig::spread_limit_holdem(d(1), d(1), d(1), d(5), Some(d(10)));
    c.blinds_cents = Vec::new();
    let mut g = Game::new(example_config(c), &[(1, d(500)), (2, d(500))]);
    g.start(1, 2, &[1, 2]);
    for round in 0..4 {
        if round > 0 {
            g.next_round();
        }
        if round < 3 {
            g.ok(1, Action::Check);
            g.ok(2, Action::Check);
        }
    }
    let l = g.legal().raise.unwrap();
    assert_eq!((l.min_to_cents, l.max_to_cents), (d(1), d(10)));
    g.ok(1, bet(10));
}

#[test]
fn r_bet_10_cap_limit_winner_receives_180() {
    let config = no_blinds(TableConfig::cap_limit_holdem(d(1), d(2), d(60)), d(2));
    let mut g = Game::new(config, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(2)); // A bets $2
    g.ok(2, raise(10)); // B raises to $10
    assert_eq!(g.legal().raise.unwrap().max_to_cents, d(60));
    rejected(g.act(3, raise(61)), "ABOVE_HAND_CAP");
    // All in at a cap game is all in to the cap (the second betting pass: offered to $100,
    // then refused as above the cap).
    let l = g.legal();
    assert_eq!((l.all_in_to_cents, l.all_in_allowed), (d(60), true));
    g.ok(3, Action::AllIn); // C goes to $60
    let a = g.act(1, Action::Call).unwrap();
    // B faces two opponents all in by the cap: no raise, for the cap's rule (it named R-BET-2).
    let r = rejected(g.act(2, raise(70)), "ABOVE_HAND_CAP");
    assert_eq!((r.reason.rule, r.number("cap_cents")), ("R-BET-10", Some(d(60))));
    let b = g.act(2, Action::Call).unwrap();
    let added = |e: &[(StreamId, Event)]| match &e[0].1 {
        Event::Table(TableEvent::Acted { amount_cents, .. }) => *amount_cents,
        _ => 0,
    };
    assert_eq!((added(&a), added(&b)), (d(58), d(50)), "A and B call $58 and $50");
    assert!(legal_actions(g.state()).is_none(), "no more betting");
    assert!(g.hand().players.iter().all(|p| p.status == InHand::AllIn), "capped players are treated as all in");
    let pots = g.showdown(vec![vec![3], vec![1], vec![2]]);
    assert_eq!(pots.len(), 1);
    assert_eq!(pots[0].awards, vec![(3, d(180))], "the winner receives $180");
    assert_eq!(g.stack(3), d(220));
}

#[test]
fn r_bet_11_full_bet_rule_opener_may_only_call_the_extra() {
    let mut g = Game::new(nl(10), &[(1, d(1000)), (2, d(30)), (3, d(1000))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(20)); // opener $20
    g.ok(2, Action::AllIn); // all in for $30, short of a full raise
    g.ok(3, Action::Call); // third calls $30
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents, l.raise), (1, d(10), None), "the opener may only call $10 more");
    let r = rejected(g.act(1, raise(60)), "RAISE_NOT_REOPENED");
    assert_eq!(r.number("call_cents"), Some(d(10)));
    g.ok(1, Action::Call);
}

fn limit_20() -> TableConfig {
    let mut c = TableConfig::fixed_limit_holdem(d(20), d(40), 3);
    c.blinds_cents = Vec::new();
    c.min_bet_cents = d(20);
    example_config(c)
}

#[test]
fn r_bet_11_half_bet_rule_call_complete_and_checkers_only_call() {
    let mut g = Game::new(limit_20(), &[(1, d(500)), (2, d(500)), (3, d(5)), (4, d(500))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    g.ok(1, Action::Check);
    g.ok(2, Action::Check);
    g.ok(3, Action::AllIn); // all in for $5
    let l = g.legal();
    assert_eq!(l.call_cents, d(5));
    let range = l.raise.unwrap();
    assert_eq!((range.kind, range.min_to_cents, range.max_to_cents), (ActionKind::Complete, d(20), d(20)), "complete to $20");
    g.ok(4, Action::Call); // only calls
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents, l.raise), (1, d(5), None), "the checkers may only call or fold");
    rejected(g.act(1, Action::Complete), "RAISE_NOT_REOPENED");
}

#[test]
fn r_bet_11_half_bet_rule_completion_reopens_for_the_checkers() {
    let mut g = Game::new(limit_20(), &[(1, d(500)), (2, d(500)), (3, d(5)), (4, d(500))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    g.ok(1, Action::Check);
    g.ok(2, Action::Check);
    g.ok(3, Action::AllIn);
    // The complete may name the total the legal actions offer, and no other (the games pass: a
    // client echoing the offered COMPLETE to $20 was refused).
    let r = rejected(g.act(4, Action::CompleteTo { to_cents: d(25) }), "COMPLETE_WRONG_TOTAL");
    assert_eq!((r.reason.rule, r.number("complete_to_cents")), ("R-BET-11", Some(d(20))));
    g.ok(4, Action::CompleteTo { to_cents: d(20) });
    assert_eq!(g.hand().round.bet_to_cents, d(20));
    let range = g.legal().raise.unwrap();
    assert_eq!((range.kind, range.min_to_cents), (ActionKind::Raise, d(40)), "the completion reopens the betting");
}

#[test]
fn r_bet_12_limit_all_in_of_half_a_bet_counts_as_full() {
    let mut g = Game::new(limit_20(), &[(1, d(15)), (2, d(500)), (3, d(500))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, Action::AllIn); // all in for $15 in a $20 round
    let range = g.legal().raise.unwrap();
    assert_eq!((range.kind, range.min_to_cents, range.max_to_cents), (ActionKind::Raise, d(35), d(35)), "the next may raise to $35");
    g.ok(2, raise(35));
}

#[test]
fn r_bet_12_limit_all_in_below_half_does_not_reopen() {
    let mut g = Game::new(limit_20(), &[(1, d(500)), (2, d(9)), (3, d(500))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(20));
    g.ok(2, Action::AllIn); // $9 facing $20: a call for less
    g.ok(3, raise(40));
    g.ok(1, Action::Call);
    assert_eq!(g.hand().phase, HandPhase::RoundComplete);
}

fn limit_3_6() -> TableConfig {
    let mut c = TableConfig::fixed_limit_holdem(d(3), d(6), 3);
    c.chip_set = ChipSet { denominations_cents: vec![50, 100, 500, 2_500, 10_000], min_playable_chip_cents: 50 };
    example_config(c)
}

fn post_blinds(g: &mut Game, sb: Seat, bb: Seat) {
    let blinds = g.state().config.as_ref().unwrap().blinds_cents.clone();
    g.post(sb, PostKind::SmallBlind, blinds[0]).unwrap();
    g.post(bb, PostKind::BigBlind, blinds[1]).unwrap();
}

#[test]
fn r_bet_6_small_bet_first_two_rounds_big_bet_last_two() {
    let mut g = Game::new(limit_3_6(), &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    let r = g.legal().raise.unwrap();
    assert_eq!((r.min_to_cents, r.max_to_cents), (d(6), d(6)), "$3 preflop: raise to $6");
    rejected(g.act(3, raise(9)), "FIXED_LIMIT_AMOUNT");
    g.ok(3, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    let expected = [d(3), d(6), d(6)];
    for want in expected {
        g.next_round();
        assert_eq!(g.legal().raise.unwrap().min_to_cents, want);
        for s in [1, 2, 3] {
            g.ok(s, Action::Check);
        }
    }
}

#[test]
fn r_bet_6_fixed_limit_cap_after_a_bet_and_three_raises() {
    let mut g = Game::new(limit_3_6(), &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    g.ok(3, raise(6));
    g.ok(1, raise(9));
    g.ok(2, raise(12)); // the big blind was the bet; three raises: capped
    let l = g.legal();
    assert_eq!(l.raise, None);
    let r = rejected(g.act(3, raise(15)), "BETTING_CAPPED");
    assert_eq!(r.number("raises"), Some(4));
    g.ok(3, Action::Call);
    g.ok(1, Action::Call);
    assert_eq!(g.hand().pot_cents, d(36));
}

#[test]
fn r_bet_6_cap_configurable_to_four_raises() {
    let mut c = limit_3_6();
    if let BettingStructure::FixedLimit { max_raises, .. } = &mut c.betting {
        *max_raises = 4;
    }
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    g.ok(3, raise(6));
    g.ok(1, raise(9));
    g.ok(2, raise(12));
    g.ok(3, raise(15));
    rejected(g.act(1, raise(18)), "BETTING_CAPPED");
}

#[test]
fn r_bet_6_heads_up_exception_no_cap() {
    let mut g = Game::new(limit_3_6(), &[(1, d(100)), (2, d(100))]);
    g.start(1, 1, &[1, 2]);
    post_blinds(&mut g, 1, 2);
    let mut to = 6;
    let mut seat = 1;
    for _ in 0..6 {
        g.ok(seat, raise(to));
        to += 3;
        seat = 3 - seat;
    }
    assert_eq!(g.hand().round.bet_to_cents, d(21), "heads-up: raising continues past the cap");
}

/// R-BET-6, the seed's reading: the cap is suspended with "only two players betting in the
/// round (heads up), since either player can call the last raise". A third player all in bets
/// no more: the two who can bet raise on past the cap (it had capped them: the betting pass).
#[test]
fn r_bet_6_seeds_heads_up_means_two_players_betting_an_all_in_player_aside() {
    let mut g = Game::new(limit_3_6(), &[(1, d(100)), (2, d(100)), (3, d(3))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    g.ok(3, Action::AllIn);
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    g.next_round();
    g.ok(1, bet(3));
    g.ok(2, raise(6));
    g.ok(1, raise(9));
    g.ok(2, raise(12));
    g.ok(1, raise(15));
    assert_eq!(g.hand().round.bet_to_cents, d(15), "two betting: raising goes on past the cap");
}

#[test]
fn r_bet_6_cap_reached_stays_after_a_fold_leaves_two() {
    let mut g = Game::new(limit_3_6(), &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    g.ok(3, raise(6));
    g.ok(1, raise(9));
    g.ok(2, raise(12));
    g.ok(3, Action::Fold);
    rejected(g.act(1, raise(15)), "BETTING_CAPPED");
}

#[test]
fn r_bet_1_out_of_turn_rejected() {
    let mut g = Game::new(nl(5), &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    let r = rejected(g.act(2, bet(5)), "NOT_YOUR_TURN");
    assert_eq!(r.number("seat_to_act"), Some(1));
}

#[test]
fn r_bet_2_check_facing_a_bet_rejected() {
    let mut g = Game::new(nl(5), &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.ok(1, bet(5));
    let r = rejected(g.act(2, Action::Check), "CANNOT_CHECK_FACING_BET");
    assert_eq!(r.number("amount_owed_cents"), Some(d(5)));
}

#[test]
fn r_post_2_big_blind_option_once() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.fee = FeePolicy::NoFee;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    assert_eq!(g.legal().seat, 3, "first to act is left of the big blind");
    g.ok(3, Action::Call);
    g.ok(1, Action::Call);
    let l = g.legal();
    assert_eq!((l.seat, l.can_check), (2, true), "the big blind has the option");
    assert_eq!(l.raise.unwrap().min_to_cents, d(4));
    g.ok(2, Action::Check);
    assert_eq!(g.hand().phase, HandPhase::RoundComplete);
}

#[test]
fn r_post_4_straddle_live_and_min_raise_measured_from_it() {
    let c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    post_blinds(&mut g, 1, 2);
    g.post(3, PostKind::Straddle, d(4)).unwrap();
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents, l.raise.unwrap().min_to_cents), (4, d(4), d(8)));
    g.ok(4, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Call);
    let l = g.legal();
    assert_eq!((l.seat, l.can_check), (3, true), "the straddle is live and has the option");
}

#[test]
fn r_post_5_stud_bring_in_call_or_complete() {
    let c = example_config(TableConfig::seven_card_stud(d(1), d(2), d(5), d(10)));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    for s in [1, 2, 3] {
        g.post(s, PostKind::Ante, d(1)).unwrap();
    }
    g.post(2, PostKind::BringIn, d(2)).unwrap();
    let l = g.legal();
    assert_eq!(l.seat, 3);
    assert_eq!(l.call_cents, d(2));
    let r = l.raise.unwrap();
    assert_eq!((r.kind, r.min_to_cents), (ActionKind::Complete, d(5)), "complete to the full bet");
    g.ok(3, Action::Complete);
    let r = g.legal().raise.unwrap();
    assert_eq!((r.kind, r.min_to_cents), (ActionKind::Raise, d(10)), "the completion counts as the bet");
    g.ok(1, Action::Call);
    g.ok(2, Action::Call);
    assert_eq!(g.hand().phase, HandPhase::RoundComplete);
    // Fourth street: the dealer names the first to act (highest board).
    g.table(TableOp::NextRound { first_to_act_seat: Some(3) }).unwrap();
    assert_eq!(g.legal().seat, 3);
    assert_eq!(g.legal().raise.unwrap().min_to_cents, d(5));
}

#[test]
fn r_post_5_bring_in_poster_has_no_option_when_called() {
    let c = example_config(TableConfig::seven_card_stud(d(1), d(2), d(5), d(10)));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    for s in [1, 2, 3] {
        g.post(s, PostKind::Ante, d(1)).unwrap();
    }
    g.post(1, PostKind::BringIn, d(2)).unwrap();
    g.ok(2, Action::Call);
    g.ok(3, Action::Call);
    assert_eq!(g.hand().phase, HandPhase::RoundComplete);
}

#[test]
fn r_post_6_kill_blind_doubles_the_limits() {
    let c = example_config(TableConfig::fixed_limit_holdem_kill(d(4), d(8), KillPolicy::Full));
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(200)), (4, d(200))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    post_blinds(&mut g, 1, 2);
    g.post(3, PostKind::Kill, d(8)).unwrap();
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents), (4, d(8)));
    assert_eq!(l.raise.unwrap().min_to_cents, d(16), "limits scale by 2: $8/$16");
    g.ok(4, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Call);
    g.ok(3, Action::Check);
    g.next_round();
    assert_eq!(g.legal().raise.unwrap().min_to_cents, d(8));
    for s in [1, 2, 3, 4] {
        g.ok(s, Action::Check);
    }
    g.next_round();
    assert_eq!(g.legal().raise.unwrap().min_to_cents, d(16));
}

/// R-POST-2, R-POST-6, R-POT-4 (the betting pass): the big blind posts the kill too; its two
/// live posts had added up to $12 against an $8 bet, the round closed with everyone at $8, and
/// the $4 nobody matched went to the winner. Only the larger post is live: the blind is dead
/// money in the pot, and the seat is at the bet like everyone else.
#[test]
fn r_post_6_a_big_blind_who_kills_has_only_the_kill_live() {
    let c = example_config(TableConfig::fixed_limit_holdem_kill(d(4), d(8), KillPolicy::Full));
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(200))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    g.post(2, PostKind::Kill, d(8)).unwrap();
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents), (3, d(8)));
    g.ok(3, Action::Call);
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents), (1, d(6)), "the small blind's $2 is live");
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    g.next_round();
    for s in [1, 2, 3] {
        g.ok(s, Action::Check);
    }
    g.next_round();
    for s in [1, 2, 3] {
        g.ok(s, Action::Check);
    }
    g.next_round();
    for s in [1, 2, 3] {
        g.ok(s, Action::Check);
    }
    let pots = g.showdown(vec![vec![3]]);
    assert_eq!(pots.len(), 1, "{pots:?}");
    assert_eq!((pots[0].amount_cents, pots[0].returned_cents), (d(28), 0), "$8 x 3 and the dead $4 blind: {pots:?}");
    assert_eq!((g.stack(1), g.stack(2), g.stack(3)), (d(192), d(188), d(220)));
}

#[test]
fn r_post_6_half_kill_scales_by_one_and_a_half() {
    let c = example_config(TableConfig::fixed_limit_holdem_kill(d(4), d(8), KillPolicy::Half));
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(200))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    g.post(3, PostKind::Kill, d(6)).unwrap();
    assert_eq!(g.legal().raise.unwrap().min_to_cents, d(12), "$6 kill: limits $6/$12");
}

#[test]
fn r_post_6_seeds_the_player_who_wins_pots_in_a_row_owes_the_kill() {
    // Persian seed: "a kill hand begins when a player wins a pot of a predetermined amount, and
    // also when a player wins a given number of hands in a row; the player who causes the kill
    // must post a kill blind". $4/$8 full kill, triggered by two pots in a row.
    let mut c = example_config(TableConfig::fixed_limit_holdem_kill(d(4), d(8), KillPolicy::Full));
    c.kill_trigger = Some(config::KillTrigger { pot_at_least_cents: 0, pots_in_a_row: 2 });
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(200))]);
    // Hand 1: seat 3's big blind wins when both fold.
    g.start(1, 1, &[1, 2, 3]);
    post_blinds(&mut g, 2, 3);
    g.ok(1, Action::Fold);
    g.ok(2, Action::Fold);
    g.end();
    // Hand 2: no kill is owed yet, and without one owed nobody posts it.
    g.start(2, 2, &[1, 2, 3]);
    post_blinds(&mut g, 3, 1);
    let r = rejected(g.post(2, PostKind::Kill, d(8)), "KILL_NOT_DUE");
    assert_eq!(r.reason.rule, "R-POST-6");
    g.ok(2, Action::Fold);
    g.ok(3, raise(8));
    g.ok(1, Action::Fold);
    g.end();
    // Hand 3: seat 3 won two in a row: it posts the $8 kill before anyone acts, and only it.
    g.start(3, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    let r = rejected(g.act(3, Action::Call), "KILL_NOT_POSTED");
    assert_eq!((r.number("seat"), r.number("kill_cents")), (Some(3), Some(d(8))));
    rejected(g.post(1, PostKind::Kill, d(8)), "KILL_NOT_DUE");
    g.post(3, PostKind::Kill, d(8)).unwrap();
    rejected(g.post(2, PostKind::Kill, d(8)), "KILL_NOT_DUE");
    assert_eq!(g.legal().raise.unwrap().min_to_cents, d(16), "the kill hand plays at $8/$16");
}

#[test]
fn r_post_6_a_kill_owed_leaves_with_the_player_and_an_uncalled_bet_is_not_won() {
    let mut c = example_config(TableConfig::fixed_limit_holdem_kill(d(4), d(8), KillPolicy::Full));
    c.kill_trigger = Some(config::KillTrigger { pot_at_least_cents: d(20), pots_in_a_row: 2 });
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(200))]);
    // Hand 1: $18 is matched, seat 3's $4 more is uncalled and comes back: $18 won, below $20.
    g.start(1, 1, &[1, 2, 3]);
    post_blinds(&mut g, 2, 3);
    g.ok(1, raise(8));
    g.ok(2, Action::Fold);
    g.ok(3, raise(12));
    g.ok(1, Action::Fold);
    g.end();
    // Hand 2: seat 3 wins again (two in a row), then leaves; the newcomer in seat 3 owes nothing.
    g.start(2, 2, &[1, 2, 3]);
    post_blinds(&mut g, 3, 1);
    g.ok(2, Action::Fold);
    g.ok(3, raise(8));
    g.ok(1, Action::Fold);
    g.end();
    g.table(TableOp::CashOut { seat: 3, player_id: pid("P3") }).unwrap();
    g.sit(3, "P9", d(200)).unwrap();
    g.start(3, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    rejected(g.post(3, PostKind::Kill, d(8)), "KILL_NOT_DUE");
    g.post(3, PostKind::NewPlayer, d(4)).unwrap();
    g.ok(3, Action::Check);
}

#[test]
fn r_post_6_seeds_a_pot_of_the_set_amount_causes_the_kill_and_a_split_does_not() {
    let mut c = example_config(TableConfig::fixed_limit_holdem_kill(d(4), d(8), KillPolicy::Half));
    c.kill_trigger = Some(config::KillTrigger { pot_at_least_cents: d(40), pots_in_a_row: 0 });
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200))]);
    // A $16 pot: no kill. Then a $48 pot won by seat 1: seat 1 owes the half kill ($6).
    g.start(1, 1, &[1, 2]);
    post_blinds(&mut g, 1, 2);
    g.ok(1, raise(8));
    g.ok(2, Action::Fold);
    g.end();
    g.start(2, 2, &[1, 2]);
    post_blinds(&mut g, 2, 1);
    g.ok(2, raise(8));
    g.ok(1, raise(12));
    g.ok(2, raise(16));
    g.ok(1, raise(20));
    g.ok(2, raise(24));
    g.ok(1, Action::Call);
    g.check_down(&[1, 2]);
    g.showdown(vec![vec![1]]);
    g.end();
    g.start(3, 1, &[1, 2]);
    post_blinds(&mut g, 1, 2);
    let r = rejected(g.act(1, Action::Call), "KILL_NOT_POSTED");
    assert_eq!((r.number("seat"), r.number("kill_cents")), (Some(1), Some(d(6))));
    g.post(1, PostKind::Kill, d(6)).unwrap();
}

/// R-POST-6 (the Persian seed's trigger) with R-POT-4: the winner of the whole pot owes the kill
/// even when another player's uncalled chips went back to that player (they had counted as a
/// second winner, and the kill owed was never asked for: the betting pass).
#[test]
fn r_post_6_an_uncalled_bet_returned_is_no_win_for_the_kill_trigger() {
    let mut c = example_config(TableConfig::fixed_limit_holdem_kill(d(2), d(4), KillPolicy::Full));
    c.kill_trigger = Some(config::KillTrigger { pot_at_least_cents: d(6), pots_in_a_row: 0 });
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(3))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    g.ok(3, Action::Call);
    g.ok(1, Action::Fold);
    g.ok(2, Action::Check);
    g.next_round();
    g.ok(2, bet(2));
    g.ok(3, Action::AllIn);
    let pots = g.showdown(vec![vec![3], vec![2]]);
    assert_eq!(pots.iter().map(|p| (p.amount_cents, p.returned_cents)).collect::<Vec<_>>(), vec![(d(7), 0), (d(1), d(1))]);
    g.end();
    // Seat 3 won the $7 pot whole: it owes the $4 kill in the next hand.
    g.start(2, 1, &[1, 2, 3]);
    post_blinds(&mut g, 2, 3);
    let r = rejected(g.act(1, Action::Call), "KILL_NOT_POSTED");
    assert_eq!((r.number("seat"), r.number("kill_cents")), (Some(3), Some(d(4))));
}

/// R-POST-6, the seeds (000, Kazakh and English: the kill blind is "usually twice the big blind
/// or minimum bet (a full kill), but may be 1.5 times the big blind (a half kill) or any other
/// amount per house rules"): a house kill of 250% in a $4/$8 game is a $10 kill blind and
/// limits of $10/$20; a house percentage is more than the big blind and bounded.
#[test]
fn r_post_6_seeds_a_house_kill_of_any_amount() {
    let c = example_config(TableConfig::fixed_limit_holdem_kill(d(4), d(8), KillPolicy::HousePercent(250)));
    c.validate().expect("a 2.5x kill in $1 chips");
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(200))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    let r = rejected(g.post(3, PostKind::Kill, d(8)), "POST_WRONG_AMOUNT");
    assert_eq!(r.number("required_cents"), Some(d(10)));
    g.post(3, PostKind::Kill, d(10)).unwrap();
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents), (1, d(8)), "the small blind's $2 is live against the $10 kill");
    assert_eq!(l.raise.unwrap().min_to_cents, d(20), "limits scale by 2.5: $10/$20");
    for (percent, ok) in [(100, false), (101, true), (1_000, true), (1_001, false), (0, false)] {
        let c = example_config(TableConfig::fixed_limit_holdem_kill(d(100), d(200), KillPolicy::HousePercent(percent)));
        match c.validate() {
            Ok(()) => assert!(ok, "{percent}% accepted"),
            Err(r) => {
                assert!(!ok, "{percent}% refused: {r:?}");
                assert_eq!(r.reason.rule, "R-POST-6");
            }
        }
    }
}

/// R-POST-6 with R-UNIT-2: a half kill of a $5 big blind is $7.50, which $1 chips do not make:
/// the table is refused (it opened, the $7.50 kill was posted, and the next player could not
/// raise at all: the betting pass). A $4/$8 game's half kill, $6 and $12, is whole.
#[test]
fn r_post_6_a_kill_hand_is_played_in_whole_chips() {
    let c = example_config(TableConfig::fixed_limit_holdem_kill(d(5), d(10), KillPolicy::Half));
    let r = c.validate().expect_err("a $7.50 kill with $1 chips");
    assert_eq!((r.reason.rule, r.number("kill_size_cents"), r.number("unit_cents")), ("R-POST-6", Some(750), Some(d(1))));
    example_config(TableConfig::fixed_limit_holdem_kill(d(4), d(8), KillPolicy::Half)).validate().expect("whole chips");
}

#[test]
fn r_unit_2_seeds_a_betting_unit_above_the_minimum_chip() {
    // Persian seed: "$20 and $40 games commonly have a minimum betting unit of $5, so that all
    // bets are multiples of $5". No limit $10/$20 with $1 chips for the antes and the rake.
    let mut c = example_config(TableConfig::no_limit_holdem(d(10), d(20)));
    c.betting_unit_cents = Some(d(5));
    let mut g = Game::new(c.clone(), &[(1, d(1000)), (2, d(1000)), (3, d(1000))]);
    g.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut g, 1, 2);
    let r = rejected(g.act(3, raise(43)), "NOT_MULTIPLE_OF_MIN_CHIP");
    assert_eq!(r.number("betting_unit_cents"), Some(d(5)));
    assert_eq!(g.legal().min_chip_cents, d(5));
    g.ok(3, raise(45));
    // All in for an odd amount is still all in.
    let mut short = Game::new(c.clone(), &[(1, d(1000)), (2, d(1000)), (3, d(333))]);
    short.start(1, 3, &[1, 2, 3]);
    post_blinds(&mut short, 1, 2);
    short.ok(3, Action::AllIn);
    // A short all-in leaves the minimum raise between two units: the legal range starts at the
    // next whole unit ($93 all in, +$40 at least: $133, so $135).
    let mut odd = Game::new(c.clone(), &[(1, d(1000)), (2, d(1000)), (3, d(1000)), (4, d(93))]);
    odd.start(1, 4, &[1, 2, 3, 4]);
    post_blinds(&mut odd, 1, 2);
    odd.ok(3, raise(60));
    odd.ok(4, Action::AllIn);
    assert_eq!(odd.legal().raise.unwrap().min_to_cents, d(135));
    odd.ok(1, raise(135));
    // The unit is whole playable chips, and a kill's sizes are whole units too.
    let mut bad = c.clone();
    bad.betting_unit_cents = Some(d(5) + 1);
    rejected(bad.validate(), "INVALID_CONFIG");
    let mut half_kill = example_config(TableConfig::fixed_limit_holdem_kill(d(2), d(4), KillPolicy::Half));
    half_kill.betting_unit_cents = Some(d(2));
    rejected(half_kill.validate(), "INVALID_CONFIG");
}

#[test]
fn r_post_6_a_kill_game_has_blinds() {
    // The kill blind is posted beside the blinds; a stud game (a bring-in) has none.
    let mut stud = example_config(TableConfig::seven_card_stud(d(1), d(1), d(2), d(4)));
    stud.kill = Some(KillPolicy::Full);
    rejected(stud.validate(), "INVALID_CONFIG");
}

/// R-BET-11 option `short_all_ins_add_up` (the second betting pass, the card rooms' rule): two
/// short all-ins that add up to a full raise. NL $1/$2, on the flop seat 1 bets $10, seat 2 is
/// all in for $15, seat 3 calls $15, seat 4 is all in for $20. Neither all-in is a full raise
/// ($10), but seat 1 now faces $10 more, a full raise in all: it may raise again (to at least
/// $30). Seat 3, who called $15, faces only $5: it may call or fold.
#[test]
fn r_bet_11_short_all_ins_that_add_up_to_a_full_raise_reopen_for_who_faces_it() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.short_all_ins_add_up = true;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(17)), (3, d(100)), (4, d(22))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, Action::Call);
    g.ok(4, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    g.next_round();
    g.ok(1, bet(10));
    g.ok(2, Action::AllIn);
    g.ok(3, Action::Call);
    g.ok(4, Action::AllIn);
    let legal = g.legal();
    assert_eq!(legal.seat, 1);
    assert_eq!(legal.raise.map(|r| r.min_to_cents), Some(d(30)), "a full raise in all reopens: {legal:?}");
    g.ok(1, Action::Call);
    let legal = g.legal();
    assert_eq!((legal.seat, legal.raise), (3, None), "$5 more is no full raise: {legal:?}");
    let r = rejected(g.act(3, raise(40)), "RAISE_NOT_REOPENED");
    assert_eq!(r.number("call_cents"), Some(d(5)));
}

/// R-BET-11 by default, the seeds' full bet rule (000 English: "if the amount of an all in raise
/// is less than the full amount of the previous raise, it does not constitute a 'real' raise,
/// and therefore does not reopen the betting action"), the seeds pass: on the flop seat 1 bets
/// $10, seat 2 calls, seats 3, 4 and 5 go all in for $15, $19 and $21, each short of a full
/// raise. Seat 1, facing $11 more, may only call or fold; so may seat 2.
#[test]
fn r_bet_11_short_all_ins_do_not_reopen_even_together_by_default() {
    let c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    assert!(!c.short_all_ins_add_up);
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(17)), (4, d(21)), (5, d(23))]);
    g.start(1, 5, &[1, 2, 3, 4, 5]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    for seat in [3, 4, 5, 1] {
        g.ok(seat, Action::Call);
    }
    g.ok(2, Action::Check);
    g.next_round();
    g.ok(1, bet(10));
    g.ok(2, Action::Call);
    for seat in [3, 4, 5] {
        g.ok(seat, Action::AllIn);
    }
    let legal = g.legal();
    assert_eq!((legal.seat, legal.raise), (1, None), "no full raise since seat 1 acted: {legal:?}");
    let r = rejected(g.act(1, raise(40)), "RAISE_NOT_REOPENED");
    assert_eq!((r.reason.rule, r.number("call_cents")), ("R-BET-11", Some(d(11))));
    g.ok(1, Action::Call);
    let legal = g.legal();
    assert_eq!((legal.seat, legal.raise), (2, None), "{legal:?}");
    rejected(g.act(2, raise(40)), "RAISE_NOT_REOPENED");
}

#[test]
fn r_post_7_short_player_posts_all_in() {
    let c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(1)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    // With the chips for it, a wrong amount breaks the rule of the post: the blinds'.
    let r = rejected(g.post(1, PostKind::SmallBlind, d(3)), "POST_WRONG_AMOUNT");
    assert_eq!((r.reason.rule, r.number("required_cents")), ("R-POST-2", Some(d(1))));
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    let r = rejected(g.post(2, PostKind::BigBlind, d(1) / 2), "POST_WRONG_AMOUNT");
    assert_eq!(r.number("required_cents"), Some(d(2)));
    assert_eq!(r.reason.rule, "R-POST-7", "a short player posts the whole stack");
    g.post(2, PostKind::BigBlind, d(1)).unwrap();
    assert_eq!(g.hand().player(2).unwrap().status, InHand::AllIn);
    assert_eq!(g.legal().call_cents, d(2), "the call is the full big blind");
}

#[test]
fn r_post_3_entry_and_missed_blinds_are_posted_only_by_a_seat_that_owes_them() {
    // Seat 5 missed nothing and is no newcomer: a post it does not owe would be chips in the
    // pot that no call counts (the call stays the big blind).
    let c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (5, d(100))]);
    // The button on seat 5 (R-POST-2: the blinds are the two seats left of it).
    g.start(1, 5, &[1, 2, 3, 5]);
    post_blinds(&mut g, 1, 2);
    for kind in [PostKind::MissedBigBlind, PostKind::MissedSmallBlindDead, PostKind::NewPlayer] {
        let r = rejected(g.post(5, kind, if kind == PostKind::MissedSmallBlindDead { d(1) } else { d(2) }), "POST_NOT_OWED");
        assert_eq!((r.reason.rule, r.number("seat")), ("R-POST-3", Some(5)));
    }
    assert_eq!(g.hand().pot_cents, d(3), "nothing moved");
    g.ok(3, Action::Call);
    g.ok(5, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    assert_eq!(g.hand().phase, HandPhase::RoundComplete);
}

#[test]
fn r_post_3_player_arriving_after_the_start_posts_a_live_big_blind() {
    // A moving button (R-POST-3): the button moves one player on each hand.
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.button_policy = config::ButtonPolicy::Moving;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.start(1, 1, &[1, 2]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Fold);
    g.end();
    g.sit(3, "P3", d(100)).unwrap();
    g.start(2, 2, &[1, 2, 3]);
    g.post(3, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Call);
    let r = rejected(g.act(3, Action::Call), "ENTRY_POST_REQUIRED");
    assert_eq!(r.number("big_blind_cents"), Some(d(2)));
    g.ok(3, Action::Fold);
    g.ok(1, Action::Fold);
    g.end();
    g.start(3, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.post(3, PostKind::NewPlayer, d(2)).unwrap();
    g.ok(3, Action::Check);
}
