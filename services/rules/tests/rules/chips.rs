//! Chips put out at the table: an oversized chip is a call with change (R-BET-14), a short
//! bet or call is brought up by a new event (R-BET-13).

use chipledger_rules::*;

use crate::support::*;

fn three() -> Game {
    let mut g = Game::new(example_config(TableConfig::no_limit_holdem(d(1), d(2))), &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g
}

fn chip(dollars: i64) -> Vec<ChipCount> {
    vec![ChipCount { denomination_cents: d(dollars), count: 1 }]
}

fn put_out(g: &mut Game, seat: Seat, chips: Vec<ChipCount>, declared: Option<Action>) -> Result<Vec<(StreamId, Event)>, Rejection> {
    g.table(TableOp::PutOutChips { seat, chips, declared })
}

#[test]
fn r_bet_14_single_oversized_chip_without_declaration_is_a_call_with_change() {
    let mut g = three();
    let events = put_out(&mut g, 3, chip(25), None).unwrap();
    let Event::Table(TableEvent::Acted { kind, to_cents, amount_cents, postings, .. }) = &events[0].1 else { panic!("{events:?}") };
    assert_eq!((*kind, *to_cents, *amount_cents), (ActionKind::Call, d(2), d(2)));
    // The $25 chip goes in, $23 change comes back from the pot: the seat nets the $2 call.
    let seat = Account::Seat { table_id: tid(TABLE), seat: 3 };
    let amounts: Vec<Cents> = postings.iter().filter(|p| p.account == seat).map(|p| p.amount_cents).collect();
    assert_eq!(amounts, vec![-d(25), d(23)]);
    assert_eq!(postings.iter().map(|p| p.amount_cents).sum::<Cents>(), 0);
    assert_eq!(g.stack(3), d(98));
    assert_eq!(g.hand().pot_cents, d(5));
    // Declared, the same chip is a raise to $25 (no change).
    put_out(&mut g, 1, chip(25), Some(raise(25))).unwrap();
    assert_eq!(g.stack(1), d(75));
    assert_eq!(g.hand().round.bet_to_cents, d(25));
}

/// R-BET-14, R-BET-3, R-BET-6: chips put out without a word, more than the call but short of a
/// raise, are a call, the rest change (the seeds: chips "of sufficient value to raise" make a
/// raise, and "the player must at least match that amount"; the betting pass had them refused,
/// the chips out on the table). Enough for a raise, they raise.
#[test]
fn r_bet_14_undeclared_chips_short_of_a_raise_are_a_call_with_change() {
    let dollars = |count| vec![ChipCount { denomination_cents: d(1), count }];
    let mut g = three();
    let events = put_out(&mut g, 3, dollars(3), None).unwrap();
    let Event::Table(TableEvent::Acted { kind, to_cents, amount_cents, .. }) = &events[0].1 else { panic!("{events:?}") };
    assert_eq!((*kind, *to_cents, *amount_cents), (ActionKind::Call, d(2), d(2)));
    assert_eq!(g.stack(3), d(98), "$1 back as change");
    let events = put_out(&mut g, 1, dollars(3), None).unwrap();
    let Event::Table(TableEvent::Acted { kind, to_cents, .. }) = &events[0].1 else { panic!("{events:?}") };
    assert_eq!((*kind, *to_cents), (ActionKind::Raise, d(4)), "the small blind's $1 and $3 more: a raise to $4");
    // Fixed limit $2/$4: $3 facing the $2 big blind is a call, $4 a raise.
    let mut g = Game::new(example_config(TableConfig::fixed_limit_holdem(d(2), d(4), 3)), &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    let events = put_out(&mut g, 3, dollars(3), None).unwrap();
    let Event::Table(TableEvent::Acted { kind, .. }) = &events[0].1 else { panic!("{events:?}") };
    assert_eq!(*kind, ActionKind::Call);
    // Declared as a raise, the same chips are still refused: the words bind.
    rejected(put_out(&mut g, 1, dollars(2), Some(raise(3))), "FIXED_LIMIT_AMOUNT");
}

#[test]
fn r_bet_14_single_chip_with_no_bet_is_a_bet_of_its_value() {
    let mut g = three();
    g.ok(3, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    g.next_round();
    let events = put_out(&mut g, 1, chip(5), None).unwrap();
    let Event::Table(TableEvent::Acted { kind, to_cents, .. }) = &events[0].1 else { panic!() };
    assert_eq!((*kind, *to_cents), (ActionKind::Bet, d(5)));
}

#[test]
fn r_bet_13_short_call_is_brought_up_by_a_new_event_before_the_round_ends() {
    let mut g = three();
    rejected(g.table(TableOp::BringUpShortBet { seat: 3 }), "NO_SHORT_BET");
    // Seat 3 says "call" ($2) but puts out one $1 chip: short by $1.
    put_out(&mut g, 3, chip(1), Some(Action::Call)).unwrap();
    assert_eq!(g.stack(3), d(99));
    assert_eq!(g.hand().player(3).unwrap().short_cents, d(1));
    let events = g.table(TableOp::BringUpShortBet { seat: 3 }).unwrap();
    let Event::Table(TableEvent::ShortBetBroughtUp { amount_cents, .. }) = &events[0].1 else { panic!("{events:?}") };
    assert_eq!(*amount_cents, d(1));
    assert_eq!(g.stack(3), d(98));
    let p3 = g.hand().player(3).unwrap();
    assert_eq!((p3.short_cents, p3.hand_cents), (0, d(2)));
    assert_eq!(g.hand().pot_cents, d(5));
    rejected(g.table(TableOp::BringUpShortBet { seat: 3 }), "NO_SHORT_BET");
}

#[test]
fn r_bet_13_short_call_must_be_brought_up_before_the_round_closes() {
    let mut g = three();
    put_out(&mut g, 3, chip(1), Some(Action::Call)).unwrap();
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    assert_eq!(g.hand().phase, HandPhase::RoundComplete);
    // The round cannot close, nor the hand be shown down, with the call short.
    let r = rejected(g.table(TableOp::NextRound { first_to_act_seat: None }), "SHORT_BET_NOT_BROUGHT_UP");
    assert_eq!((r.number("seat"), r.number("short_cents")), (Some(3), Some(d(1))));
    rejected(g.table(TableOp::Showdown { high: vec![vec![3]], low: None, rake_cents: None }), "SHOWDOWN_NOT_READY");
    g.table(TableOp::BringUpShortBet { seat: 3 }).unwrap();
    g.next_round();
    for seat in [1, 2, 3] {
        g.ok(seat, Action::Check);
    }
    g.check_down(&[1, 2, 3]);
    let pots = g.showdown(vec![vec![3]]);
    let total: Cents = pots.iter().map(|p| p.amount_cents).sum();
    assert_eq!(total, d(6), "every call whole");
}

#[test]
fn r_bet_13_short_bet_cannot_be_brought_up_after_the_hand_settled() {
    let mut g = three();
    // Seat 3 bets $10 with one $5 chip: short by $5. It may neither act again nor fold until
    // the bet is made good; the others fold, the hand settles, and the short is moot.
    put_out(&mut g, 3, vec![ChipCount { denomination_cents: d(5), count: 1 }], Some(raise(10))).unwrap();
    g.ok(1, Action::Fold);
    let events = g.act(2, Action::Fold).unwrap();
    assert!(matches!(events.last(), Some((_, Event::Table(TableEvent::HandSettled { .. })))));
    let r = rejected(g.table(TableOp::BringUpShortBet { seat: 3 }), "SHORT_BET_ROUND_ENDED");
    assert_eq!(r.number("short_cents"), Some(d(5)));
}

#[test]
fn r_bet_13_seeds_a_short_call_made_unaware_of_an_unannounced_raise_is_taken_back() {
    // Russian seed: "Если игрок не знает о предыдущей ставке и дилер НЕ объявил ее, игрок
    // может забрать свою ставку" (if the player is unaware of a previous bet and the dealer did
    // not announce it, the player may take back his bet). Seat 3 opens to $6, seat 1 raises to
    // $20 unannounced, seat 2 puts out $6 as a call: short by $14.
    let mut g = three();
    g.ok(3, raise(6));
    g.ok(1, raise(20));
    put_out(&mut g, 2, vec![ChipCount { denomination_cents: d(1), count: 4 }], None).unwrap();
    assert_eq!(g.hand().player(2).unwrap().short_cents, d(14));
    assert_eq!((g.stack(2), g.hand().pot_cents), (d(94), d(32)));
    // Another seat cannot take it back, nor can a bring-up be taken back.
    rejected(g.table(TableOp::TakeBackShortCall { seat: 3 }), "NO_SHORT_BET");
    let events = g.table(TableOp::TakeBackShortCall { seat: 2 }).unwrap();
    let Event::Table(TableEvent::ShortCallTakenBack { amount_cents, postings, .. }) = &events[0].1 else { panic!("{events:?}") };
    assert_eq!(*amount_cents, d(4), "the chips the call put in");
    assert_eq!(postings.iter().map(|p| p.amount_cents).sum::<Cents>(), 0);
    // The seat is as before the call: its big blind in, $20 to call, and it is to act.
    assert_eq!((g.stack(2), g.hand().pot_cents), (d(98), d(28)));
    let p2 = g.hand().player(2).unwrap();
    assert_eq!((p2.short_cents, p2.round_cents, p2.hand_cents), (0, d(2), d(2)));
    assert_eq!(g.hand().round.to_act, Some(2));
    rejected(g.table(TableOp::TakeBackShortCall { seat: 2 }), "NO_SHORT_BET");
    // It folds, paying nothing more than its blind; seat 3 calls and the round goes on.
    g.ok(2, Action::Fold);
    g.ok(3, Action::Call);
    assert_eq!(g.hand().pot_cents, d(42));
}

#[test]
fn r_bet_13_a_short_call_is_taken_back_only_while_it_is_the_last_action() {
    let mut g = three();
    g.ok(3, raise(6));
    put_out(&mut g, 1, vec![ChipCount { denomination_cents: d(1), count: 2 }], None).unwrap();
    assert_eq!(g.hand().player(1).unwrap().short_cents, d(3));
    // Seat 2 acted after it: the call stands and is brought up.
    g.ok(2, Action::Call);
    let r = rejected(g.table(TableOp::TakeBackShortCall { seat: 1 }), "NO_SHORT_BET");
    assert_eq!(r.number("short_cents"), Some(d(3)));
    g.table(TableOp::BringUpShortBet { seat: 1 }).unwrap();
    assert_eq!(g.stack(1), d(94));
}

#[test]
fn r_pot_1_an_all_in_player_left_alone_wins_only_what_was_matched() {
    // Seat 1 is all in for $1 under the $2 big blind; the small blind folds and so does the big
    // blind (it could have checked). Seat 1 wins $1 from each of them, $3; the big blind's
    // unmatched $1 goes back to it, unraked (R-POT-4), not to a player who never matched it.
    let mut g = Game::new(example_config(TableConfig::no_limit_holdem(d(1), d(2))), &[(1, d(1)), (2, d(100)), (3, d(100))]);
    g.start(1, 1, &[1, 2, 3]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::AllIn);
    g.ok(2, Action::Fold);
    let events = g.act(3, Action::Fold).unwrap();
    assert!(events.iter().any(|(_, e)| e.event_type() == "HandSettled"), "{events:?}");
    assert_eq!((g.stack(1), g.stack(2), g.stack(3)), (d(3), d(99), d(99)));
}

#[test]
fn r_pot_1_two_all_in_players_left_against_folds_win_only_what_was_matched() {
    // Antes of $1; seat 1 all in for $6 in all, seat 2 for $10; seats 3 and 4 put in $21 each
    // and fold when no bet faces them. Seat 2 wins the $4 layer above seat 1 from seats 3 and 4
    // and itself ($12); their $11 each above seat 2's level goes back to them (R-POT-4).
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.ante_cents = d(1);
    let stacks = [(1, d(6)), (2, d(10)), (3, d(100)), (4, d(100)), (5, d(100))];
    let mut g = Game::new(c, &stacks);
    g.start(1, 5, &[1, 2, 3, 4, 5]);
    for seat in 1..=5 {
        g.post(seat, PostKind::Ante, d(1)).unwrap();
    }
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, raise(20));
    g.ok(4, Action::Call);
    g.ok(5, Action::Fold);
    g.ok(1, Action::AllIn);
    g.ok(2, Action::AllIn);
    g.next_round();
    g.ok(3, Action::Fold);
    g.ok(4, Action::Fold);
    assert_eq!((g.stack(3), g.stack(4)), (d(90), d(90)), "the chips nobody matched are back");
    g.check_down(&[]);
    g.showdown(vec![vec![2], vec![1]]);
    assert_eq!((g.stack(1), g.stack(2), g.stack(5)), (0, d(37), d(99)), "main pot $25 and the $12 layer");
}

#[test]
fn r_pot_1_contributions_layer_at_each_all_in_level() {
    let mut g = Game::new(example_config(TableConfig::no_limit_holdem(d(1), d(2))), &[(1, d(10)), (2, d(30)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, Action::Call);
    g.ok(1, Action::AllIn);
    g.ok(2, Action::AllIn);
    g.ok(3, Action::Call);
    let pots = g.showdown(vec![vec![1], vec![2], vec![3]]);
    let amounts: Vec<Cents> = pots.iter().map(|p| p.amount_cents).collect();
    let eligible: Vec<Vec<Seat>> = pots.iter().map(|p| p.eligible.clone()).collect();
    let awards: Vec<Vec<(Seat, Cents)>> = pots.iter().map(|p| p.awards.clone()).collect();
    assert_eq!(amounts, vec![d(30), d(40)]);
    assert_eq!(eligible, vec![vec![1, 2, 3], vec![2, 3]]);
    assert_eq!(awards, vec![vec![(1, d(30))], vec![(2, d(40))]]);
    assert_eq!((g.stack(1), g.stack(2), g.stack(3)), (d(30), d(40), d(70)));
}
