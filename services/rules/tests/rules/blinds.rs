//! Missed blinds and sitting out (R-POST-3), button antes and third blinds (R-POST-1, R-POST-2),
//! and the pot-limit "assumed call" option (R-BET-7).

use chipledger_rules::*;

use crate::support::*;

fn four() -> Game {
    Game::new(example_config(TableConfig::no_limit_holdem(d(1), d(2))), &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100))])
}

/// Blinds then everybody folds to the big blind.
fn blinds_and_folds(g: &mut Game, hand_no: u64, button: Seat, sb: Seat, bb: Seat, dealt: &[Seat]) {
    g.start(hand_no, button, dealt);
    g.post(sb, PostKind::SmallBlind, d(1)).unwrap();
    g.post(bb, PostKind::BigBlind, d(2)).unwrap();
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
}

/// Four players, dead button; seat 3 sits out after hand 1 and misses both blinds over the next
/// four hands (one set, flags not counts).
fn seat_3_away_four_hands() -> Game {
    let mut g = four();
    blinds_and_folds(&mut g, 1, 4, 1, 2, &[1, 2, 3, 4]);
    g.table(TableOp::SitOut { seat: 3 }).unwrap();
    blinds_and_folds(&mut g, 2, 1, 2, 4, &[1, 2, 4]);
    assert_eq!(missed(&g, 3), (true, false));
    blinds_and_folds(&mut g, 3, 2, 4, 1, &[1, 2, 4]);
    assert_eq!(missed(&g, 3), (true, true));
    blinds_and_folds(&mut g, 4, 4, 1, 2, &[1, 2, 4]);
    blinds_and_folds(&mut g, 5, 1, 2, 4, &[1, 2, 4]);
    assert_eq!(missed(&g, 3), (true, true));
    g
}

/// R-POST-3 (the fixes' pass): a seat owing both missed blinds whose turn in the big blind has
/// come pays with that blind, which clears them: no dead small blind beside it, whatever order
/// the dealer keys the posts in (keyed first, it had been taken, and the seat paid $3, not $2).
#[test]
fn r_post_3_owing_both_in_the_big_blind_the_blind_clears_them_in_any_order() {
    let mut g = seat_3_back_in_the_big_blind();
    let r = rejected(g.post(3, PostKind::MissedSmallBlindDead, d(1)), "POST_NOT_OWED");
    assert_eq!(r.reason.rule, "R-POST-3");
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    assert_eq!(missed(&g, 3), (false, false));
    rejected(g.post(3, PostKind::MissedSmallBlindDead, d(1)), "POST_NOT_OWED");
}

/// Four players, dead button; seat 3 misses both blinds over hands 2 to 4 and is back for hand 5
/// in the big blind (button 1, small blind 2).
fn seat_3_back_in_the_big_blind() -> Game {
    let mut g = four();
    blinds_and_folds(&mut g, 1, 4, 1, 2, &[1, 2, 3, 4]);
    g.table(TableOp::SitOut { seat: 3 }).unwrap();
    blinds_and_folds(&mut g, 2, 1, 2, 4, &[1, 2, 4]);
    blinds_and_folds(&mut g, 3, 2, 4, 1, &[1, 2, 4]);
    blinds_and_folds(&mut g, 4, 4, 1, 2, &[1, 2, 4]);
    assert_eq!(missed(&g, 3), (true, true));
    g.table(TableOp::SitIn { seat: 3 }).unwrap();
    g.start(5, 1, &[1, 2, 3, 4]);
    g
}

/// R-POST-3 (the second betting pass): a returning player dealt in owes the missed blinds
/// "before its first action other than a fold"; once anyone had acted the posts were closed,
/// and the seat could only fold. The owed posts go in before the seat's own first action.
#[test]
fn r_post_3_missed_blinds_are_posted_before_the_seats_own_first_action() {
    let mut g = seat_3_away_four_hands();
    g.table(TableOp::SitIn { seat: 3 }).unwrap();
    g.start(6, 3, &[1, 2, 3, 4]);
    g.post(4, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Call);
    rejected(g.act(3, Action::Call), "MISSED_BLINDS_REQUIRED");
    // The big blind, live, first: one order, so a short stack's chips settle one way (the pots
    // pass: keyed dead-first, a $1 stack went wholly dead and could win nothing).
    let r = rejected(g.post(3, PostKind::MissedSmallBlindDead, d(1)), "MISSED_BIG_BLIND_FIRST");
    assert_eq!((r.reason.rule, r.number("seat")), ("R-POST-3", Some(3)));
    g.post(3, PostKind::MissedBigBlind, d(2)).unwrap();
    g.post(3, PostKind::MissedSmallBlindDead, d(1)).unwrap();
    assert_eq!(missed(&g, 3), (false, false));
    let l = g.legal();
    assert_eq!((l.seat, l.can_check), (3, true), "the live big blind it posted covers the call");
    g.ok(3, Action::Check);
    // Once its own turn has passed, the posts are closed to it too.
    rejected(g.post(2, PostKind::NewPlayer, d(2)), "POSTS_CLOSED");
}

fn missed(g: &Game, seat: Seat) -> (bool, bool) {
    let s = g.state().seat(seat).unwrap();
    (s.missed_big_blind, s.missed_small_blind)
}

/// R-POST-3, a game's first hand (the seeds pass: "a player who is away from their seat and
/// misses one or more blinds is also required to post to reenter the game"; one away when the
/// game dealt its first hand had come back owing nothing). Five seats, button 1, seat 3 sitting
/// out: the blinds go to seats 2 and 4, so seat 3, which would have been the big blind, missed
/// it; back, it may not play before posting it.
#[test]
fn r_post_3_a_seat_away_for_the_first_hand_misses_the_blind_that_passed_it() {
    let c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100)), (5, d(100))]);
    g.table(TableOp::SitOut { seat: 3 }).unwrap();
    blinds_and_folds(&mut g, 1, 1, 2, 4, &[1, 2, 4, 5]);
    assert_eq!(missed(&g, 3), (true, false));
    assert_eq!(missed(&g, 5), (false, false), "the blinds had not reached seat 5");
    g.table(TableOp::SitIn { seat: 3 }).unwrap();
    g.start(2, 2, &[1, 2, 3, 4, 5]);
    g.post(4, PostKind::SmallBlind, d(1)).unwrap();
    g.post(5, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Fold);
    g.ok(2, Action::Fold);
    let r = rejected(g.act(3, Action::Call), "MISSED_BLINDS_REQUIRED");
    assert_eq!((r.reason.rule, r.number("missed_big_blind")), ("R-POST-3", Some(1)));
    // Between the button and the small blind: that seat would have posted the small blind.
    let c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100))]);
    g.table(TableOp::SitOut { seat: 2 }).unwrap();
    blinds_and_folds(&mut g, 1, 1, 3, 4, &[1, 3, 4]);
    assert_eq!(missed(&g, 2), (false, true));
}

#[test]
fn r_post_3_absent_player_accumulates_one_set_and_posts_big_live_small_dead() {
    let mut g = four();
    blinds_and_folds(&mut g, 1, 4, 1, 2, &[1, 2, 3, 4]);
    g.table(TableOp::SitOut { seat: 3 }).unwrap();
    rejected(g.table(TableOp::SitOut { seat: 3 }), "ALREADY_SITTING_OUT");
    rejected(g.table(TableOp::StartHand { hand_no: 2, button_seat: 1, dealt_seats: vec![1, 2, 3, 4] }), "SEAT_SITTING_OUT");
    // Hand 2: the big blind moves from seat 2 to seat 4, passing the absent seat 3.
    blinds_and_folds(&mut g, 2, 1, 2, 4, &[1, 2, 4]);
    assert_eq!(missed(&g, 3), (true, false));
    // Hand 3: the small blind moves from seat 2 to seat 4, passing seat 3 too.
    blinds_and_folds(&mut g, 3, 2, 4, 1, &[1, 2, 4]);
    assert_eq!(missed(&g, 3), (true, true));
    // Hand 4 and 5: another orbit away; still one set (flags, not counts).
    blinds_and_folds(&mut g, 4, 4, 1, 2, &[1, 2, 4]);
    blinds_and_folds(&mut g, 5, 1, 2, 4, &[1, 2, 4]);
    assert_eq!(missed(&g, 3), (true, true));
    // Back: dealt in, but may not play before posting both.
    g.table(TableOp::SitIn { seat: 3 }).unwrap();
    rejected(g.table(TableOp::SitIn { seat: 3 }), "NOT_SITTING_OUT");
    g.start(6, 3, &[1, 2, 3, 4]);
    g.post(4, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Fold);
    let r = rejected(g.act(3, Action::Call), "MISSED_BLINDS_REQUIRED");
    assert_eq!(r.number("missed_big_blind"), Some(1));
    assert_eq!(r.number("missed_small_blind"), Some(1));
    g.ok(3, Action::Fold); // a fold is always allowed; the debt stays
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
    assert_eq!(missed(&g, 3), (true, true));
    // Hand 7: seat 3 (under the gun) posts the set before the action.
    g.start(7, 4, &[1, 2, 3, 4]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    let stack_before = g.stack(3);
    g.post(3, PostKind::MissedBigBlind, d(2)).unwrap();
    g.post(3, PostKind::MissedSmallBlindDead, d(1)).unwrap();
    assert_eq!(missed(&g, 3), (false, false));
    assert_eq!(g.stack(3), stack_before - d(3));
    // The big blind is live (seat 3 may check its option), the small blind dead.
    let p3 = g.hand().player(3).unwrap().clone();
    assert_eq!((p3.round_cents, p3.hand_cents), (d(2), d(3)));
    g.ok(3, Action::Check);
}

#[test]
fn r_post_3_missed_blinds_cleared_when_the_big_blind_returns_to_the_seat() {
    // The player waits for the big blind: dealt in as the big blind (it moves on from seat 2
    // to seat 3, dead button), no make-up posts.
    let mut g = seat_3_back_in_the_big_blind();
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    assert_eq!(missed(&g, 3), (false, false));
    g.ok(4, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Call);
    g.ok(3, Action::Check);
}

/// Six seats, dead button; seat 3 sits out while the big blind (hand 2) and the small blind
/// (hand 3) pass it, and is back for hand 4 (button 4, blinds 5 and 6; seat 3 acts third).
fn six_with_seat_3_back(one_per_hand: bool) -> Game {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.missed_blinds_one_per_hand = one_per_hand;
    let mut g = Game::new(c, &(1..=6).map(|s| (s, d(100))).collect::<Vec<_>>());
    blinds_and_folds(&mut g, 1, 6, 1, 2, &[1, 2, 3, 4, 5, 6]);
    g.table(TableOp::SitOut { seat: 3 }).unwrap();
    blinds_and_folds(&mut g, 2, 1, 2, 4, &[1, 2, 4, 5, 6]);
    blinds_and_folds(&mut g, 3, 2, 4, 5, &[1, 2, 4, 5, 6]);
    assert_eq!(missed(&g, 3), (true, true));
    g.table(TableOp::SitIn { seat: 3 }).unwrap();
    g.start(4, 4, &[1, 2, 3, 4, 5, 6]);
    g.post(5, PostKind::SmallBlind, d(1)).unwrap();
    g.post(6, PostKind::BigBlind, d(2)).unwrap();
    g
}

#[test]
fn r_post_3_seeds_missed_blinds_one_per_hand_largest_first_all_live() {
    // Kazakh seed, English original: "If both must be posted immediately upon return, the big
    // blind amount is 'live', but the small blind amount is 'dead' ... Some house rules allow
    // posting one blind per hand, largest first, meaning all posts of missed blinds are live"
    // (Kazakh: «Кейбір клубтардың ережелері әр қолға бір жалюзиден пост жасауға рұқсат береді,
    // мұнда ең үлкені бірінші постталатын болады, яғни жіберіліп алған жалюзилердің барлығы тірі
    // болып саналады»). Option `missed_blinds_one_per_hand`; $1/$2.
    let mut g = six_with_seat_3_back(true);
    let r = rejected(g.post(3, PostKind::MissedSmallBlind, d(1)), "ONE_MISSED_BLIND_PER_HAND");
    assert_eq!(r.number("missed_big_blind"), Some(1));
    rejected(g.post(3, PostKind::MissedSmallBlindDead, d(1)), "POST_NOT_CONFIGURED");
    g.post(3, PostKind::MissedBigBlind, d(2)).unwrap();
    assert_eq!(missed(&g, 3), (false, true));
    // The small blind waits for the next hand; this hand seat 3 plays on its live $2.
    rejected(g.post(3, PostKind::MissedSmallBlind, d(1)), "ONE_MISSED_BLIND_PER_HAND");
    g.ok(1, Action::Fold);
    g.ok(2, Action::Fold);
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents, l.can_check), (3, 0, true));
    g.ok(3, Action::Check);
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
    assert_eq!(g.stack(3), d(103), "seat 3 paid $2 and won the $5 pot");
    // Hand 5 (button 5, blinds 6 and 1): the missed small blind is owed now; not posted, seat
    // 3 may only fold.
    g.start(5, 5, &[1, 2, 3, 4, 5, 6]);
    g.post(6, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Fold);
    let r = rejected(g.act(3, Action::Call), "MISSED_BLINDS_REQUIRED");
    assert_eq!((r.number("missed_big_blind"), r.number("missed_small_blind")), (Some(0), Some(1)));
    g.ok(3, Action::Fold);
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
    // Hand 6 (button 6, blinds 1 and 2; seat 3 under the gun): the missed small blind, live.
    g.start(6, 6, &[1, 2, 3, 4, 5, 6]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.post(3, PostKind::MissedSmallBlind, d(1)).unwrap();
    assert_eq!(missed(&g, 3), (false, false));
    let p3 = g.hand().player(3).unwrap().clone();
    assert_eq!((p3.round_cents, p3.hand_cents), (d(1), d(1)), "live: it counts toward the call");
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents), (3, d(1)));
    g.ok(3, Action::Call);
    assert_eq!(g.stack(3), d(101));

    // Default (RULES.md): both at once, the big blind live and the small blind dead.
    let mut g = six_with_seat_3_back(false);
    rejected(g.post(3, PostKind::MissedSmallBlind, d(1)), "POST_NOT_CONFIGURED");
    g.post(3, PostKind::MissedBigBlind, d(2)).unwrap();
    g.post(3, PostKind::MissedSmallBlindDead, d(1)).unwrap();
    assert_eq!(missed(&g, 3), (false, false));
    let p3 = g.hand().player(3).unwrap().clone();
    assert_eq!((p3.round_cents, p3.hand_cents), (d(2), d(3)));
}

#[test]
fn r_post_3_moving_button_sits_on_a_dealt_player_dead_button_may_be_empty() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.button_policy = config::ButtonPolicy::Moving;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    let r = rejected(g.table(TableOp::StartHand { hand_no: 1, button_seat: 5, dealt_seats: vec![1, 2, 3] }), "BUTTON_NOT_DEALT");
    assert_eq!(r.number("button_seat"), Some(5));
    g.start(1, 3, &[1, 2, 3]);
    let mut g = four();
    g.start(1, 5, &[1, 2, 3, 4]); // dead button on the empty seat 5
}

fn pot_limit_2_5(assumed_call: bool) -> Game {
    let mut c = example_config(TableConfig::pot_limit_holdem(d(2), d(5)));
    c.pot_limit_assumed_call = assumed_call;
    let mut g = Game::new(c, &[(1, d(500)), (2, d(500)), (3, d(500)), (4, d(500))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    g.post(1, PostKind::SmallBlind, d(2)).unwrap();
    g.post(2, PostKind::BigBlind, d(5)).unwrap();
    g
}

#[test]
fn r_bet_7_assumed_call_first_raise_is_four_big_blinds() {
    // True pot: $2 + $5, call $5: $12, raise to $17.
    let mut g = pot_limit_2_5(false);
    assert_eq!(g.legal().raise.unwrap().max_to_cents, d(17));
    let r = rejected(g.act(3, raise(18)), "RAISE_ABOVE_POT_LIMIT");
    assert_eq!(r.number("max_raise_to_cents"), Some(d(17)));
    // Assumed call: the small blind counts as called ($5 + $5), the first raise is to $20.
    let mut g = pot_limit_2_5(true);
    assert_eq!(g.legal().raise.unwrap().max_to_cents, d(20));
    rejected(g.act(3, raise(21)), "RAISE_ABOVE_POT_LIMIT");
    g.ok(3, Action::Call);
    g.ok(4, Action::Fold);
    // The small blind raising first calls for real, so the assumption adds nothing:
    // 5 + (2 + 5 + 5) + 3 = $20.
    assert_eq!(g.legal().raise.unwrap().max_to_cents, d(20));
    g.ok(1, raise(20));
    // After the first raise, the pot is the true pot again: 20 + (20 + 5 + 5) + 15 = $65.
    assert_eq!(g.legal().raise.unwrap().max_to_cents, d(65));
}

#[test]
fn r_post_1_button_ante_one_player_posts_the_ante_for_everyone_dead() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.ante_cents = d(1);
    c.button_ante = true;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    let r = rejected(g.post(4, PostKind::ButtonAnte, d(1)), "POST_WRONG_AMOUNT");
    assert_eq!(r.number("required_cents"), Some(d(4)));
    g.post(4, PostKind::ButtonAnte, d(4)).unwrap();
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    assert_eq!(g.hand().pot_cents, d(7));
    // Dead: the button's ante does not count toward its call.
    let p4 = g.hand().player(4).unwrap().clone();
    assert_eq!((p4.round_cents, p4.hand_cents), (0, d(4)));
    g.ok(3, Action::Call);
    assert_eq!(g.legal().call_cents, d(2));
    // Without the option, a button ante is not part of the game.
    let mut g = four();
    g.start(1, 4, &[1, 2, 3, 4]);
    rejected(g.post(4, PostKind::ButtonAnte, d(4)), "POST_NOT_CONFIGURED");
}

#[test]
fn r_post_2_third_blind_is_live_and_action_starts_after_it() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.blinds_cents = vec![d(1), d(2), d(4)];
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100)), (5, d(100))]);
    g.start(1, 5, &[1, 2, 3, 4, 5]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    let r = rejected(g.post(2, PostKind::BigBlind, d(4)), "POST_WRONG_AMOUNT");
    assert_eq!(r.number("required_cents"), Some(d(2)));
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.post(3, PostKind::ThirdBlind, d(4)).unwrap();
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents), (4, d(4)));
    // The third blind is the bet to raise: at least $4 more.
    assert_eq!(l.raise.unwrap().min_to_cents, d(8));
    g.ok(4, Action::Call);
    g.ok(5, Action::Fold);
    g.ok(1, Action::Call);
    g.ok(2, Action::Call);
    // Live: the third blind has the option (check or raise).
    let l = g.legal();
    assert_eq!((l.seat, l.can_check), (3, true));
    g.ok(3, Action::Check);
    assert_eq!(g.hand().pot_cents, d(16));
}

/// R-POST-3 (the second betting pass): a new player dealt in the third blind posts it (a big
/// blind and more) and owes no entry post: it had been left able only to fold.
#[test]
fn r_post_3_a_new_player_in_the_third_blind_has_paid_its_entry() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.blinds_cents = vec![d(1), d(2), d(4)];
    c.button_policy = config::ButtonPolicy::Simplified;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (5, d(100))]);
    g.start(1, 5, &[1, 2, 3, 5]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.post(3, PostKind::ThirdBlind, d(4)).unwrap();
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
    g.sit(4, "P4", d(100)).unwrap();
    g.start(2, 1, &[1, 2, 3, 4, 5]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    g.post(4, PostKind::ThirdBlind, d(4)).unwrap();
    rejected(g.post(4, PostKind::NewPlayer, d(2)), "POST_NOT_OWED");
    for seat in [5, 1, 2, 3] {
        g.ok(seat, Action::Call);
    }
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents), (4, 0), "the third blind's option");
    g.ok(4, Action::Check);
}

/// NL $1/$2, $1 ante posted by the button for every dealt player, seats 1-4 with $100 each.
fn button_ante_table(policy: config::ButtonPolicy, missed_owed: bool) -> Game {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.ante_cents = d(1);
    c.button_ante = true;
    c.button_policy = policy;
    c.missed_button_ante_owed = missed_owed;
    Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100))])
}

/// A hand with a button ante where everybody folds to the big blind.
fn button_ante_and_folds(g: &mut Game, hand_no: u64, button: Seat, ante_from: Option<(Seat, Cents)>, sb: Option<Seat>, bb: Seat, dealt: &[Seat]) {
    g.start(hand_no, button, dealt);
    if let Some((seat, ante_cents)) = ante_from {
        g.post(seat, PostKind::ButtonAnte, ante_cents).unwrap();
    }
    if let Some(sb) = sb {
        g.post(sb, PostKind::SmallBlind, d(1)).unwrap();
    }
    g.post(bb, PostKind::BigBlind, d(2)).unwrap();
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
}

/// R-POST-1 option `missed_button_ante_owed`, the seeds (Kazakh seed, English original: "it is
/// not uncommon for the players to agree that the dealer (or some other position relative to
/// the button) provides the ante for each player. This simplifies betting, but causes minor
/// inequities if other players come and go or miss their turn to deal. During such times, the
/// player can be given a special button indicating the need to pay an ante to the pot (known as
/// 'posting') upon their return"; Persian alike). Dead button; hand 1 button 1 (seat 1 posts the
/// $4 button ante); seat 2, due next, sits out. Hand 2 (button dead on seat 2, dealt 1, 3, 4):
/// seat 1 had posted the button ante again and seat 2 came back owing nothing. Now nobody posts
/// it in hand 2, seat 2 owes that hand's $3 and posts it, dead, before anyone acts in the hand it
/// is dealt back in. Without the option (the default) the dead button's ante is posted by the
/// player before the first blind, as before.
#[test]
fn r_post_1_seeds_a_player_who_missed_the_button_ante_posts_it_on_return() {
    let mut g = button_ante_table(config::ButtonPolicy::Dead, true);
    button_ante_and_folds(&mut g, 1, 1, Some((1, d(4))), Some(2), 3, &[1, 2, 3, 4]);
    g.table(TableOp::SitOut { seat: 2 }).unwrap();
    g.start(2, 2, &[1, 3, 4]);
    assert_eq!(g.state().seat(2).unwrap().missed_button_ante_cents, d(3), "the table's ante of hand 2");
    assert_eq!(g.hand().button_ante_missed_by, Some(2));
    let r = rejected(g.post(1, PostKind::ButtonAnte, d(3)), "ANTE_OUT_OF_POSITION");
    assert_eq!(r.number("expected_seat"), None, "nobody posts the ante seat 2 owes");
    g.post(3, PostKind::SmallBlind, d(1)).unwrap();
    g.post(4, PostKind::BigBlind, d(2)).unwrap();
    assert_eq!(g.hand().pot_cents, d(3), "the blinds, no ante");
    g.ok(1, Action::Fold);
    g.ok(3, Action::Fold);
    g.end();
    // Hand 3: back in; button 3 posts this hand's $4 and seat 2 the $3 it missed, first.
    g.table(TableOp::SitIn { seat: 2 }).unwrap();
    g.start(3, 3, &[1, 2, 3, 4]);
    assert_eq!(g.hand().missed_antes_due, vec![hand::MissedAnteDue { seat: 2, ante_cents: d(3) }]);
    g.post(3, PostKind::ButtonAnte, d(4)).unwrap();
    let r = rejected(g.post(4, PostKind::SmallBlind, d(1)), "ANTES_NOT_POSTED");
    assert_eq!((r.reason.rule, r.number("seat"), r.number("ante_cents")), ("R-POST-1", Some(2), Some(d(3))));
    let r = rejected(g.act(2, Action::Fold), "ANTES_NOT_POSTED");
    assert_eq!((r.reason.rule, r.number("seat")), ("R-POST-1", Some(2)));
    rejected(g.post(1, PostKind::MissedButtonAnte, d(3)), "POST_NOT_OWED");
    let r = rejected(g.post(2, PostKind::MissedButtonAnte, d(4)), "POST_WRONG_AMOUNT");
    assert_eq!((r.reason.rule, r.number("required_cents")), ("R-POST-1", Some(d(3))));
    g.post(2, PostKind::MissedButtonAnte, d(3)).unwrap();
    assert_eq!(g.state().seat(2).unwrap().missed_button_ante_cents, 0);
    let p2 = g.hand().player(2).unwrap().clone();
    assert_eq!((p2.round_cents, p2.hand_cents, p2.dead_main_cents), (0, d(3), d(3)), "dead, whole into the main pot");
    g.post(4, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    assert_eq!(g.hand().pot_cents, d(10));
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents), (2, d(2)), "the missed ante does not count toward the call");
    g.ok(2, Action::Call);
    assert_eq!(g.stack(2), d(100) - d(1) - d(3) - d(2), "hand 1's small blind, the missed ante, the call");
    // Hand 4: nothing owed any more.
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
    g.start(4, 4, &[1, 2, 3, 4]);
    assert!(g.hand().missed_antes_due.is_empty());

    // A simplified button skips the absent seat: the next player's button pays its own ante,
    // and seat 2 still owes the one it missed.
    let mut g = button_ante_table(config::ButtonPolicy::Simplified, true);
    button_ante_and_folds(&mut g, 1, 1, Some((1, d(4))), Some(2), 3, &[1, 2, 3, 4]);
    g.table(TableOp::SitOut { seat: 2 }).unwrap();
    button_ante_and_folds(&mut g, 2, 3, Some((3, d(3))), Some(4), 1, &[1, 3, 4]);
    assert_eq!(g.state().seat(2).unwrap().missed_button_ante_cents, d(3));
    g.table(TableOp::SitIn { seat: 2 }).unwrap();
    g.start(3, 4, &[1, 2, 3, 4]);
    assert_eq!(g.hand().missed_antes_due, vec![hand::MissedAnteDue { seat: 2, ante_cents: d(3) }]);

    // Default: the player before the first blind posts the dead button's ante again, and seat 2
    // comes back owing nothing (tables opened before the option read so).
    let mut g = button_ante_table(config::ButtonPolicy::Dead, false);
    button_ante_and_folds(&mut g, 1, 1, Some((1, d(4))), Some(2), 3, &[1, 2, 3, 4]);
    g.table(TableOp::SitOut { seat: 2 }).unwrap();
    button_ante_and_folds(&mut g, 2, 2, Some((1, d(3))), Some(3), 4, &[1, 3, 4]);
    assert_eq!(g.state().seat(2).unwrap().missed_button_ante_cents, 0);
    let mut recorded = serde_json::to_value(g.state().config.as_ref().unwrap()).unwrap();
    recorded.as_object_mut().unwrap().remove("missed_button_ante_owed");
    let recorded: TableConfig = serde_json::from_value(recorded).unwrap();
    assert!(!recorded.missed_button_ante_owed);
    // The option needs a button ante.
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.missed_button_ante_owed = true;
    rejected(c.validate(), "INVALID_CONFIG");
}

/// NL $1/$2, dead button, $1 ante posted by the button, missed button antes owed, seats 1-6
/// with $100 each. Hand 1 (button 1, blinds 2 and 3); seats 2 and 3 sit out; hand 2 (the
/// button dead on seat 2, the small blind dead, the big blind 4) and hand 3 (the button dead on
/// seat 3, blinds 4 and 5) are dealt to 1, 4, 5, 6. Then P2 owes the $4 button ante of hand 2,
/// and P3 the small blind and the $4 button ante of hand 3.
fn two_away_owing(takes_over: bool) -> Game {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.ante_cents = d(1);
    c.button_ante = true;
    c.missed_button_ante_owed = true;
    c.newcomer_takes_over_blinds = takes_over;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100)), (5, d(100)), (6, d(100))]);
    button_ante_and_folds(&mut g, 1, 1, Some((1, d(6))), Some(2), 3, &[1, 2, 3, 4, 5, 6]);
    g.table(TableOp::SitOut { seat: 2 }).unwrap();
    g.table(TableOp::SitOut { seat: 3 }).unwrap();
    button_ante_and_folds(&mut g, 2, 2, None, None, 4, &[1, 4, 5, 6]);
    button_ante_and_folds(&mut g, 3, 3, None, Some(4), 5, &[1, 4, 5, 6]);
    let owed = |g: &Game, seat: Seat| g.state().seat(seat).map(|s| (s.missed_big_blind, s.missed_small_blind, s.missed_button_ante_cents));
    assert_eq!(owed(&g, 2), Some((false, false, d(4))));
    assert_eq!(owed(&g, 3), Some((false, true, d(4))));
    g
}

/// R-POST-3 with R-POST-1 (hostile tester): the newcomer's takeover is for a new player in the
/// seat of one who just left. P1 (owing nothing) leaves seat 1; P3, owing a missed small blind
/// and a $4 missed button ante at seat 3, cashes out, sits at seat 1 and buys in. P3 had been
/// taken for a newcomer and acted in the next hand posting nothing; without the option the seat
/// change had shed the small blind and the ante, leaving the entry big blind. Now, option on or
/// off, P3 is no newcomer: the entry big blind (live), the small blind (dead) and the ante are
/// owed at seat 1. A debt left at the table follows its player back for as long as the game
/// goes on: P2 leaves owing the $4 ante, a hand is dealt, and P2 owes it at seat 3.
#[test]
fn r_post_3_a_seat_change_keeps_the_missed_blinds_and_button_ante_owed() {
    for takes_over in [true, false] {
        let mut g = two_away_owing(takes_over);
        let (p2_left_with, p3_left_with) = (g.stack(2), g.stack(3));
        g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
        g.table(TableOp::CashOut { seat: 3, player_id: pid("P3") }).unwrap();
        g.table(TableOp::CashOut { seat: 2, player_id: pid("P2") }).unwrap();
        g.sit(1, "P3", p3_left_with).unwrap();
        let s = g.state().seat(1).unwrap().clone();
        assert_eq!(
            (s.owes_entry_post, s.missed_big_blind, s.missed_small_blind, s.missed_button_ante_cents),
            (true, false, true, d(4)),
            "what P3 owed at seat 3 follows to seat 1 (takes_over: {takes_over})"
        );
        // Hand 4: button 4 (where the last small blind was), blinds 5 and 6; P3 under the gun.
        g.start(4, 4, &[1, 4, 5, 6]);
        assert_eq!(g.hand().missed_antes_due, vec![hand::MissedAnteDue { seat: 1, ante_cents: d(4) }]);
        g.post(4, PostKind::ButtonAnte, d(4)).unwrap();
        let r = rejected(g.post(5, PostKind::SmallBlind, d(1)), "ANTES_NOT_POSTED");
        assert_eq!((r.reason.rule, r.number("seat"), r.number("ante_cents")), ("R-POST-1", Some(1), Some(d(4))));
        g.post(1, PostKind::MissedButtonAnte, d(4)).unwrap();
        g.post(5, PostKind::SmallBlind, d(1)).unwrap();
        g.post(6, PostKind::BigBlind, d(2)).unwrap();
        let r = rejected(g.act(1, Action::Call), "ENTRY_POST_REQUIRED");
        assert_eq!((r.reason.rule, r.number("seat")), ("R-POST-3", Some(1)));
        g.post(1, PostKind::NewPlayer, d(2)).unwrap();
        let r = rejected(g.act(1, Action::Check), "MISSED_BLINDS_REQUIRED");
        assert_eq!((r.reason.rule, r.number("missed_small_blind")), ("R-POST-3", Some(1)));
        g.post(1, PostKind::MissedSmallBlindDead, d(1)).unwrap();
        g.ok(1, Action::Check);
        assert_eq!(g.hand().pot_cents, d(4 + 4 + 1 + 2 + 2 + 1));
        assert_eq!(g.stack(1), p3_left_with - d(4) - d(2) - d(1));
        while let Some(l) = legal_actions(g.state()) {
            g.ok(l.seat, Action::Fold);
        }
        g.end();
        // P2 comes back after a hand dealt without them: the $4 ante is still owed.
        g.sit(3, "P2", p2_left_with).unwrap();
        let s = g.state().seat(3).unwrap();
        assert_eq!((s.owes_entry_post, s.missed_button_ante_cents), (true, d(4)), "takes_over: {takes_over}");
    }
    // A newcomer still takes over a seat a player of the game just left owing nothing.
    let mut g = two_away_owing(true);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    g.sit(1, "Q1", d(100)).unwrap();
    let s = g.state().seat(1).unwrap();
    assert_eq!((s.owes_entry_post, s.missed_small_blind, s.missed_button_ante_cents), (false, false, 0));
}

/// R-AUDIT-1: the correction of the last hand as the server asks for it: every event type of the
/// hand and its postings netted, at the table stream version of its `HandStarted`.
fn correct_last_hand(g: &Game) -> TableOp {
    let log = &g.world.log;
    let first = log.iter().rposition(|(_, e)| e.event_type() == "HandStarted").expect("a hand was dealt");
    let mut types: Vec<String> = Vec::new();
    let mut net: std::collections::BTreeMap<Account, Cents> = Default::default();
    for (_, e) in log[first..].iter().filter(|(stream, _)| *stream == log[first].0) {
        if !types.iter().any(|t| t == e.event_type()) {
            types.push(e.event_type().to_string());
        }
        for p in e.postings() {
            *net.entry(p.account.clone()).or_default() += p.amount_cents;
        }
    }
    TableOp::Correct {
        reverses_event_id: format!("event-{first}"),
        reverses_stream_version: stream_version_at(log, first),
        reverses_event_types: types,
        reverses_gaming_day: "2026-03-01".into(),
        original_postings: net.into_iter().filter(|(_, v)| *v != 0).map(|(a, v)| Posting::new(a, v)).collect(),
        approved_by: "floor-2".into(),
        reason: "misdealt".into(),
    }
}

/// R-AUDIT-1 with R-POST-1 and R-POST-3 (hostile tester): a corrected hand gives every seat its
/// chips back, and with them what a seat paid of its debts in it: the seat owes it again. Seat 2
/// missed a dead button's $3 ante, posted it on return, and the hand was folded out and
/// corrected: the $3 came back and the ante was owed no more. Likewise a missed big blind (live)
/// and small blind (dead), and a new player's entry post.
#[test]
fn r_audit_1_a_corrected_hand_leaves_the_missed_ante_blinds_and_entry_post_owed_again() {
    let mut g = button_ante_table(config::ButtonPolicy::Dead, true);
    button_ante_and_folds(&mut g, 1, 1, Some((1, d(4))), Some(2), 3, &[1, 2, 3, 4]);
    g.table(TableOp::SitOut { seat: 2 }).unwrap();
    button_ante_and_folds(&mut g, 2, 2, None, Some(3), 4, &[1, 3, 4]);
    g.table(TableOp::SitIn { seat: 2 }).unwrap();
    let stack_before = g.stack(2);
    g.start(3, 3, &[1, 2, 3, 4]);
    g.post(3, PostKind::ButtonAnte, d(4)).unwrap();
    g.post(2, PostKind::MissedButtonAnte, d(3)).unwrap();
    g.post(4, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
    assert_eq!(g.state().seat(2).unwrap().missed_button_ante_cents, 0);
    g.table(correct_last_hand(&g)).unwrap();
    assert_eq!(g.stack(2), stack_before, "the $3 is back");
    assert_eq!(g.state().seat(2).unwrap().missed_button_ante_cents, d(3), "and owed again");
    g.start(4, 4, &[1, 2, 3, 4]);
    assert_eq!(g.hand().missed_antes_due, vec![hand::MissedAnteDue { seat: 2, ante_cents: d(3) }]);
    g.post(4, PostKind::ButtonAnte, d(4)).unwrap();
    let r = rejected(g.post(1, PostKind::SmallBlind, d(1)), "ANTES_NOT_POSTED");
    assert_eq!((r.reason.rule, r.number("seat"), r.number("ante_cents")), ("R-POST-1", Some(2), Some(d(3))));

    // Missed blinds: seat 3 posts them on return, the hand is corrected, they are owed again.
    let mut g = seat_3_away_four_hands();
    g.table(TableOp::SitIn { seat: 3 }).unwrap();
    g.start(6, 3, &[1, 2, 3, 4]);
    g.post(4, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.post(3, PostKind::MissedBigBlind, d(2)).unwrap();
    g.post(3, PostKind::MissedSmallBlindDead, d(1)).unwrap();
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
    assert_eq!(missed(&g, 3), (false, false));
    g.table(correct_last_hand(&g)).unwrap();
    assert_eq!(missed(&g, 3), (true, true));

    // The entry post: a new player posts it, the hand is corrected, it is owed again.
    let mut g = four();
    blinds_and_folds(&mut g, 1, 4, 1, 2, &[1, 2, 3, 4]);
    g.sit(5, "P5", d(100)).unwrap();
    g.start(2, 1, &[1, 2, 3, 4, 5]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    g.post(5, PostKind::NewPlayer, d(2)).unwrap();
    while let Some(l) = legal_actions(g.state()) {
        g.ok(l.seat, Action::Fold);
    }
    g.end();
    assert!(!g.state().seat(5).unwrap().owes_entry_post);
    g.table(correct_last_hand(&g)).unwrap();
    assert_eq!(g.stack(5), d(100));
    assert!(g.state().seat(5).unwrap().owes_entry_post, "the entry big blind is owed again");
}

/// R-BET-2 with R-POT-4 and R-POT-5 (hostile tester): seat 2, back with $2 and owing a $3 missed
/// button ante, posts it all in: every chip of it dead, nothing live. Seat 3 posts the $4 button
/// ante, seat 4 the small blind, seat 1 the big blind; seats 3 and 4 fold. The legal actions
/// offered seat 1 a fold that `Act` then refused (`SHOWDOWN_NO_ELIGIBLE_WINNER`, pot 1: the
/// blinds, with nobody eligible). The fold settles: seat 2 wins the dead $6, and the blinds, live
/// chips above every live player's level (none), go back to the players who put them in, as
/// such chips do (R-POT-4). Checked instead, seat 1 would contest both pots at the showdown.
#[test]
fn r_bet_2_a_fold_the_legal_actions_offer_is_accepted_after_a_dead_all_in() {
    let hand_3 = || {
        let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
        c.ante_cents = d(1);
        c.button_ante = true;
        c.missed_button_ante_owed = true;
        let mut g = Game::new(c, &[(1, d(100)), (2, d(3)), (3, d(100)), (4, d(100))]);
        button_ante_and_folds(&mut g, 1, 1, Some((1, d(4))), Some(2), 3, &[1, 2, 3, 4]);
        g.table(TableOp::SitOut { seat: 2 }).unwrap();
        button_ante_and_folds(&mut g, 2, 2, None, Some(3), 4, &[1, 3, 4]);
        g.table(TableOp::SitIn { seat: 2 }).unwrap();
        assert_eq!((g.stack(2), g.state().seat(2).unwrap().missed_button_ante_cents), (d(2), d(3)));
        let before: Vec<Cents> = (1..=4).map(|s| g.stack(s)).collect();
        g.start(3, 3, &[1, 2, 3, 4]);
        g.post(3, PostKind::ButtonAnte, d(4)).unwrap();
        g.post(2, PostKind::MissedButtonAnte, d(2)).unwrap();
        g.post(4, PostKind::SmallBlind, d(1)).unwrap();
        g.post(1, PostKind::BigBlind, d(2)).unwrap();
        g.ok(3, Action::Fold);
        g.ok(4, Action::Fold);
        (g, before)
    };
    let stacks = |g: &Game| (1..=4).map(|s| g.stack(s)).collect::<Vec<Cents>>();
    let (mut g, before) = hand_3();
    let l = g.legal();
    assert_eq!((l.seat, l.can_fold, l.can_check, l.raise), (1, true, true, None));
    let pots = settled_pots(&g.act(1, Action::Fold).unwrap());
    let got: Vec<_> = pots.iter().map(|p| (p.amount_cents, p.awards.clone(), p.returned_cents)).collect();
    assert_eq!(got, vec![(d(6), vec![(2, d(6))], 0), (d(2), vec![(1, d(2))], d(2)), (d(1), vec![(4, d(1))], d(1))]);
    g.end();
    assert_eq!(stacks(&g), vec![before[0], d(6), before[2] - d(4), before[3]]);

    // Checked instead: seat 1 contests the dead $6 with seat 2 and takes the blinds.
    let (mut g, before) = hand_3();
    g.ok(1, Action::Check);
    g.check_down(&[]);
    let pots = g.showdown(vec![vec![2], vec![1]]);
    let got: Vec<_> = pots.iter().map(|p| (p.amount_cents, p.eligible.clone(), p.awards.clone())).collect();
    assert_eq!(got, vec![(d(6), vec![1, 2], vec![(2, d(6))]), (d(3), vec![1], vec![(1, d(3))])]);
    g.end();
    assert_eq!(stacks(&g), vec![before[0] + d(1), d(6), before[2] - d(4), before[3] - d(1)]);
}

/// R-POST-3 (the wave-2 pass): a first hand whose one blind is on the button (`button_blind`)
/// passed no seat away; a game that starts anew after everyone left asks its first players for
/// no entry post, as a new table does.
#[test]
fn r_post_3_a_first_hand_with_the_blind_on_the_button_and_a_game_started_anew_owe_nothing() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.blinds_cents = vec![d(2)];
    c.button_blind = true;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100))]);
    g.table(TableOp::SitOut { seat: 4 }).unwrap();
    g.start(1, 1, &[1, 2, 3]);
    assert_eq!(missed(&g, 4), (false, false), "the blind on the button passed nobody");

    let mut g = four();
    blinds_and_folds(&mut g, 1, 4, 1, 2, &[1, 2, 3, 4]);
    for (seat, player) in [(1, "P1"), (2, "P2"), (3, "P3"), (4, "P4")] {
        g.table(TableOp::CashOut { seat, player_id: pid(player) }).unwrap();
    }
    for (seat, player) in [(1, "Q1"), (2, "Q2"), (3, "Q3")] {
        g.table(TableOp::BuyIn { seat, player_id: pid(player), amount_cents: d(100), source: FundsSource::Cash, supervisor_id: None, short_buy: false }).unwrap();
    }
    assert!((1..=3).all(|seat| !g.state().seat(seat).is_some_and(|s| s.owes_entry_post)), "no entry post at a game started anew");
    g.start(2, 1, &[1, 2, 3]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Call);
}

/// R-POST-3 (the seating pass): missed blinds a player left owing follow them back however many
/// patrons sat down and left without a chip in between (after forty such seatings the dead small
/// blind had been forgotten, and the player owed only the entry post).
#[test]
fn r_post_3_missed_blinds_owed_outlast_seatings_without_chips() {
    let mut g = four();
    blinds_and_folds(&mut g, 1, 4, 1, 2, &[1, 2, 3, 4]);
    g.table(TableOp::SitOut { seat: 3 }).unwrap();
    blinds_and_folds(&mut g, 2, 1, 2, 4, &[1, 2, 4]);
    blinds_and_folds(&mut g, 3, 2, 4, 1, &[1, 2, 4]);
    assert_eq!(missed(&g, 3), (true, true));
    g.table(TableOp::CashOut { seat: 3, player_id: pid("P3") }).unwrap();
    for n in 0..60 {
        let phantom = pid(&format!("X{n}"));
        g.table(TableOp::SeatPlayer { seat: 3, player_id: phantom.clone() }).unwrap();
        g.table(TableOp::CashOut { seat: 3, player_id: phantom }).unwrap();
    }
    g.sit(3, "P3", d(100)).unwrap();
    assert_eq!(missed(&g, 3), (true, true), "the missed blinds came back with the player");
}
