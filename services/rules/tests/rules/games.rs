//! The games a room spreads (RULES.md section 5) and their forced bets: stud order of action
//! from the up cards (R-POST-5), draw rounds, high-low halves (R-POT-5), big-blind and button
//! antes (R-POST-1), the rake a dealer reports (R-RAKE-1) and awards by amount (R-POT-5).

use chipledger_rules::cards::Card;
use chipledger_rules::hand::{SeatAward, UpCard};
use chipledger_rules::*;

use crate::support::*;

fn up(cards: &[(Seat, &str)]) -> TableOp {
    TableOp::DealUpCards { cards: cards.iter().map(|(seat, card)| UpCard { seat: *seat, card: card.parse().unwrap() }).collect() }
}

/// Seven-card stud $5/$10, ante $1, bring-in $2; four players, the dealer's right on seat 4.
fn stud(config: TableConfig) -> Game {
    let mut g = Game::new(example_config(config), &[(1, d(200)), (2, d(200)), (3, d(200)), (4, d(200))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    for seat in 1..=4 {
        g.post(seat, PostKind::Ante, d(1)).unwrap();
    }
    g
}

fn seven_card_stud() -> TableConfig {
    TableConfig::seven_card_stud(d(1), d(2), d(5), d(10))
}

fn round_started(events: &[(StreamId, Event)]) -> Option<Seat> {
    events.iter().find_map(|(_, e)| match e {
        Event::Table(TableEvent::RoundStarted { first_to_act_seat, .. }) => *first_to_act_seat,
        _ => None,
    })
}

#[test]
fn r_post_5_lowest_up_card_brings_in_ties_by_suit() {
    let mut g = stud(seven_card_stud());
    assert!(legal_actions(g.state()).is_none(), "nobody acts before the up cards or the bring-in");
    // Two threes showing: the three of clubs is the lower by suit.
    g.table(up(&[(1, "Kh"), (2, "3d"), (3, "3c"), (4, "9s")])).unwrap();
    let l = g.legal();
    assert_eq!((l.seat, l.bring_in_cents), (3, Some(d(2))));
    assert!(!l.can_fold && !l.can_call && !l.can_check, "the low card must bring it in: {l:?}");
    let open = l.raise.expect("or open for a full bet");
    assert_eq!((open.kind, open.min_to_cents, open.max_to_cents), (ActionKind::Bet, d(5), d(5)));
    let r = rejected(g.act(2, Action::Call), "NOT_YOUR_TURN");
    assert_eq!(r.number("seat_to_act"), Some(3));
    rejected(g.act(3, Action::Fold), "BRING_IN_REQUIRED");
    rejected(g.act(3, Action::Call), "BRING_IN_REQUIRED");
    let r = rejected(g.post(2, PostKind::BringIn, d(2)), "BRING_IN_OUT_OF_POSITION");
    assert_eq!(r.number("expected_seat"), Some(3));
    g.post(3, PostKind::BringIn, d(2)).unwrap();
    assert_eq!(g.legal().seat, 4);
    rejected(g.post(3, PostKind::BringIn, d(2)), "DUPLICATE_POST");
    rejected(g.post(4, PostKind::BringIn, d(2)), "POSTS_CLOSED");
}

/// R-POST-3 is a rule of blind games (the fuzz pass): a newcomer to a stud table antes and
/// plays, owing no entry "big blind". The ledger had asked one for the small bet: every action
/// but the bring-in was refused, the post taken as a live bet before anyone acted, and with the
/// newcomer on the low card the legal actions offered nothing and the hand could not go on.
#[test]
fn r_post_3_a_newcomer_to_a_stud_table_owes_no_entry_blind() {
    // A first hand won by the bring-in, then a newcomer at seat 5.
    let newcomer_after_a_hand = |config: TableConfig| {
        let mut g = stud(config);
        g.table(up(&[(1, "Kh"), (2, "3d"), (3, "2c"), (4, "9s")])).unwrap();
        g.post(3, PostKind::BringIn, d(2)).unwrap();
        for seat in [4, 1, 2] {
            g.ok(seat, Action::Fold);
        }
        g.end();
        g.sit(5, "P5", d(200)).unwrap();
        assert!(!g.state().seat(5).expect("seated").owes_entry_post);
        g
    };
    let mut g = newcomer_after_a_hand(seven_card_stud());
    g.start(2, 4, &[1, 2, 3, 4, 5]);
    for seat in [1, 2, 3, 4, 5] {
        g.post(seat, PostKind::Ante, d(1)).unwrap();
    }
    g.table(up(&[(1, "Kh"), (2, "9d"), (3, "Qc"), (4, "Js"), (5, "2h")])).unwrap();
    let l = g.legal();
    assert_eq!((l.seat, l.bring_in_cents), (5, Some(d(2))), "the newcomer on the low card brings in: {l:?}");
    g.post(5, PostKind::BringIn, d(2)).unwrap();
    g.ok(1, Action::Call);
    assert_eq!(g.stack(5), d(200) - d(1) - d(2));
    // Blinds of nothing are none (the wave-2 pass: a stud table given blinds of 0/0 asked its
    // newcomers for an entry post no post could pay).
    let mut zero = seven_card_stud();
    zero.blinds_cents = vec![0, 0];
    newcomer_after_a_hand(zero);
}

#[test]
fn r_post_5_low_card_may_open_for_a_full_bet_instead_of_bringing_in() {
    // Today's fix: refused as out of turn before.
    let mut g = stud(seven_card_stud());
    g.table(up(&[(1, "Kh"), (2, "3d"), (3, "2c"), (4, "9s")])).unwrap();
    let events = g.act(3, bet(5)).unwrap();
    assert!(matches!(&events[0].1, Event::Table(TableEvent::Acted { kind: ActionKind::Bet, to_cents, .. }) if *to_cents == d(5)));
    let l = g.legal();
    assert_eq!(l.seat, 4);
    assert_eq!(l.raise.unwrap().min_to_cents, d(10), "after the bet of $5 the raise is to $10");
    rejected(g.post(3, PostKind::BringIn, d(2)), "POSTS_CLOSED");
}

#[test]
fn r_post_5_without_up_cards_the_dealer_names_the_low_card_by_its_post() {
    let mut g = stud(seven_card_stud());
    g.post(2, PostKind::BringIn, d(2)).unwrap();
    // Up cards reported after the bring-in would say someone else brings in: too late, the
    // hand goes on without them (they come before the bring-in or not at all).
    let seats = g.hand().players.iter().map(|p| p.seat).collect::<Vec<_>>();
    let cards: Vec<(Seat, &str)> = seats.iter().zip(["Kh", "Ac", "2d", "9s", "Qc", "Jd", "Ts", "8h"]).map(|(s, c)| (*s, c)).collect();
    let r = rejected(g.table(up(&cards)), "UP_CARDS_OUT_OF_TURN");
    assert_eq!(r.number("round_index"), Some(0));
    assert_eq!(g.legal().seat, 3);
    g.ok(3, Action::Complete);
    assert_eq!(g.hand().round.bet_to_cents, d(5), "completing the bring-in is the bet");
}

#[test]
fn r_post_5_razz_highest_up_card_brings_in_aces_low() {
    let mut g = stud(TableConfig::razz(d(1), d(2), d(5), d(10)));
    // Aces are low in razz; two kings showing: the king of spades is the higher by suit.
    g.table(up(&[(1, "Kh"), (2, "Ks"), (3, "As"), (4, "5c")])).unwrap();
    assert_eq!(g.legal().seat, 2);
}

#[test]
fn r_post_5_from_fourth_street_the_best_hand_showing_acts_first() {
    let mut g = stud(seven_card_stud());
    g.table(up(&[(1, "Kh"), (2, "3d"), (3, "2c"), (4, "9s")])).unwrap();
    g.post(3, PostKind::BringIn, d(2)).unwrap();
    for seat in [4, 1, 2] {
        g.ok(seat, Action::Call);
    }
    assert_eq!(g.hand().phase, HandPhase::RoundComplete);
    rejected(g.table(TableOp::NextRound { first_to_act_seat: None }), "UP_CARDS_MISSING");
    rejected(g.table(up(&[(1, "2h"), (2, "7d"), (3, "2s")])), "UP_CARDS_INCOMPLETE");
    rejected(g.table(up(&[(1, "2h"), (2, "7d"), (3, "2s"), (4, "Kh")])), "DUPLICATE_CARD");
    // Fourth street: K-2, 3-7, 2-2 (a pair), 9-A.
    g.table(up(&[(1, "2h"), (2, "7d"), (3, "2s"), (4, "As")])).unwrap();
    let r = rejected(g.table(TableOp::NextRound { first_to_act_seat: Some(4) }), "FIRST_TO_ACT_MISMATCH");
    assert_eq!(r.number("expected_seat"), Some(3));
    let events = g.table(TableOp::NextRound { first_to_act_seat: None }).unwrap();
    assert_eq!(round_started(&events), Some(3), "the pair of deuces showing acts first");
    assert_eq!(g.legal().seat, 3);
    rejected(g.table(up(&[(1, "4h"), (2, "4d"), (3, "4s"), (4, "4c")])), "UP_CARDS_OUT_OF_TURN");
}

#[test]
fn r_post_5_razz_lowest_hand_showing_acts_first_and_ties_go_clockwise() {
    let mut g = stud(TableConfig::razz(d(1), d(2), d(5), d(10)));
    g.table(up(&[(1, "Kh"), (2, "3d"), (3, "2c"), (4, "9s")])).unwrap();
    g.post(1, PostKind::BringIn, d(2)).unwrap();
    for seat in [2, 3, 4] {
        g.ok(seat, Action::Call);
    }
    // Fourth street: K-Q, 3-7, 2-7, 9-A: 7-3 and 7-2 tie on the seven; 7-2 is lower.
    g.table(up(&[(1, "Qh"), (2, "7d"), (3, "7c"), (4, "As")])).unwrap();
    let events = g.table(TableOp::NextRound { first_to_act_seat: None }).unwrap();
    assert_eq!(round_started(&events), Some(3));
}

/// Seven-card stud $20/$40 (2000/4000 cents), ante $5, bring-in $10; four players of $1,000,
/// the dealer's right (`button_seat`) on `button`.
fn stud_20_40(config: TableConfig, button: Seat) -> Game {
    let mut g = Game::new(example_config(config), &[(1, d(1_000)), (2, d(1_000)), (3, d(1_000)), (4, d(1_000))]);
    g.start(1, button, &[1, 2, 3, 4]);
    for seat in 1..=4 {
        g.post(seat, PostKind::Ante, 500).unwrap();
    }
    g
}

/// Seeds 000 (Kazakh): "Теңдікті бұзу үшін масть бойынша жоғары карта қолданылуы мүмкін, бірақ
/// көбінесе дилерге ең жақын тұрған ойыншы алып келуді төлейді" ("The high card by suit order
/// can be used to break ties, but more often the person closest to the dealer in order of
/// rotation pays the bring in"); seeds 001 (Persian) the same. RULES.md: ties by suit (the
/// default); `bring_in_ties_by_position` is the seeds' rule.
#[test]
fn r_post_5_seeds_bring_in_tie_goes_to_the_player_closest_to_the_dealer() {
    let deuces = up(&[(1, "2s"), (2, "Kh"), (3, "2c"), (4, "9d")]);
    // Default: the deuce of clubs is lower by suit than the deuce of spades.
    let mut g = stud_20_40(TableConfig::seven_card_stud(500, 1_000, 2_000, 4_000), 4);
    g.table(deuces.clone()).unwrap();
    assert_eq!((g.legal().seat, g.legal().bring_in_cents), (3, Some(1_000)));
    let r = rejected(g.post(1, PostKind::BringIn, 1_000), "BRING_IN_OUT_OF_POSITION");
    assert_eq!(r.number("expected_seat"), Some(3));
    // By position: seat 1 is the first after the dealer's right (4 -> 1) in rotation.
    let mut by_position = TableConfig::seven_card_stud(500, 1_000, 2_000, 4_000);
    by_position.bring_in_ties_by_position = true;
    let mut g = stud_20_40(by_position.clone(), 4);
    g.table(deuces).unwrap();
    assert_eq!((g.legal().seat, g.legal().bring_in_cents), (1, Some(1_000)));
    let r = rejected(g.post(3, PostKind::BringIn, 1_000), "BRING_IN_OUT_OF_POSITION");
    assert_eq!(r.number("expected_seat"), Some(1));
    g.post(1, PostKind::BringIn, 1_000).unwrap();
    assert_eq!(g.stack(1), d(1_000) - 500 - 1_000);
    assert_eq!(g.legal().seat, 2);
    // Rotation wraps: the dealer's right on seat 2, so seat 3 comes before seat 1; the rank
    // still decides first (a lower card anywhere brings in).
    let mut g = stud_20_40(by_position.clone(), 2);
    g.table(up(&[(1, "2c"), (2, "Kh"), (3, "2s"), (4, "9d")])).unwrap();
    assert_eq!(g.legal().seat, 3);
    let mut g = stud_20_40(by_position, 2);
    g.table(up(&[(1, "2c"), (2, "Kh"), (3, "3s"), (4, "9d")])).unwrap();
    assert_eq!(g.legal().seat, 1);
}

/// The same seeds' rule in razz, where the highest card brings in: two kings, the king of
/// spades is the higher by suit (default), the king of hearts is closer to the dealer.
#[test]
fn r_post_5_seeds_razz_bring_in_tie_by_position() {
    let kings = up(&[(1, "Kh"), (2, "4d"), (3, "Ks"), (4, "5c")]);
    let mut g = stud_20_40(TableConfig::razz(500, 1_000, 2_000, 4_000), 4);
    g.table(kings.clone()).unwrap();
    assert_eq!(g.legal().seat, 3);
    let mut by_position = TableConfig::razz(500, 1_000, 2_000, 4_000);
    by_position.bring_in_ties_by_position = true;
    let mut g = stud_20_40(by_position, 4);
    g.table(kings).unwrap();
    assert_eq!(g.legal().seat, 1);
}

/// Third street of `stud_20_40` (seat 3 brings in $10, everyone calls), then fourth street's
/// up cards `fourth` and its first action.
fn to_fourth_street(config: TableConfig, fourth: &[(Seat, &str)]) -> Game {
    let mut g = stud_20_40(config, 4);
    g.table(up(&[(1, "Kh"), (2, "9c"), (3, "2c"), (4, "Ts")])).unwrap();
    g.post(3, PostKind::BringIn, 1_000).unwrap();
    for seat in [4, 1, 2] {
        g.ok(seat, Action::Call);
    }
    g.table(up(fourth)).unwrap();
    g.next_round();
    g
}

/// Seeds 000 (Kazakh): "жеті карталы стадта, екінші раундта (4-ші картада) ойыншыда ашық жұп
/// болған кезде, ойыншылар кішкентай немесе үлкен ставканы таңдай алады" ("in seven-card stud,
/// with a face-up pair on fourth street, players may choose the small or the big bet"); seeds
/// 001 (Persian) the same. RULES.md is silent: the seven-card stud preset has
/// `open_pair_big_bet` on, and a table may turn it off.
#[test]
fn r_bet_6_seeds_stud_open_pair_on_fourth_street_allows_the_big_bet() {
    let nines = [(1, "5h"), (2, "9d"), (3, "7s"), (4, "Jd")];
    let stud = TableConfig::seven_card_stud(500, 1_000, 2_000, 4_000);
    assert!(stud.open_pair_big_bet, "the seeds' rule of seven-card stud");
    // Seat 2 shows 9-9 and acts first: the small bet ($20) or the big bet ($40), nothing between.
    let mut g = to_fourth_street(stud.clone(), &nines);
    let open = g.legal().raise.unwrap();
    assert_eq!((g.legal().seat, open.kind, open.min_to_cents, open.max_to_cents), (2, ActionKind::Bet, 2_000, 4_000));
    let r = rejected(g.act(2, Action::Bet { to_cents: 3_000 }), "FIXED_LIMIT_AMOUNT");
    assert_eq!(r.number("max_raise_to_cents"), Some(4_000));
    g.ok(2, Action::Bet { to_cents: 4_000 });
    assert_eq!(g.stack(2), d(1_000) - 500 - 1_000 - 4_000);
    // After the big bet the raises are big bets: to $80, not $60.
    let raise = g.legal().raise.unwrap();
    assert_eq!((g.legal().seat, raise.min_to_cents, raise.max_to_cents), (3, 8_000, 8_000));
    rejected(g.act(3, Action::Raise { to_cents: 6_000 }), "FIXED_LIMIT_AMOUNT");
    g.ok(3, Action::Raise { to_cents: 8_000 });
    assert_eq!(g.hand().round.bet_to_cents, 8_000);

    // A small bet first: a raise may still be the small or the big bet ($40 or $60); once
    // the big one is made, the next raise is another big bet (to $100).
    let mut g = to_fourth_street(stud.clone(), &nines);
    g.ok(2, Action::Bet { to_cents: 2_000 });
    let raise = g.legal().raise.unwrap();
    assert_eq!((raise.min_to_cents, raise.max_to_cents), (4_000, 6_000));
    g.ok(3, Action::Raise { to_cents: 6_000 });
    let raise = g.legal().raise.unwrap();
    assert_eq!((g.legal().seat, raise.min_to_cents, raise.max_to_cents), (4, 10_000, 10_000));

    // No pair showing: the small bet only.
    let mut g = to_fourth_street(stud.clone(), &[(1, "5h"), (2, "8d"), (3, "7s"), (4, "Jd")]);
    let r = rejected(g.act(g.legal().seat, Action::Bet { to_cents: 4_000 }), "FIXED_LIMIT_AMOUNT");
    assert_eq!(r.number("max_raise_to_cents"), Some(2_000));

    // Option off (RULES.md: the small bet in the first two rounds): $40 is refused.
    let mut small_only = stud;
    small_only.open_pair_big_bet = false;
    let mut g = to_fourth_street(small_only, &nines);
    let r = rejected(g.act(2, Action::Bet { to_cents: 4_000 }), "FIXED_LIMIT_AMOUNT");
    assert_eq!(r.number("max_raise_to_cents"), Some(2_000));
    g.ok(2, Action::Bet { to_cents: 2_000 });
    assert!(!TableConfig::razz(500, 1_000, 2_000, 4_000).open_pair_big_bet);
    assert!(!TableConfig::seven_card_stud_hi_lo(500, 1_000, 2_000, 4_000).open_pair_big_bet);
}

#[test]
fn r_post_5_up_cards_only_in_stud_and_only_as_dealt() {
    let mut g = Game::new(example_config(TableConfig::no_limit_holdem(d(1), d(2))), &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    rejected(g.table(up(&[(1, "Ah"), (2, "Kd")])), "UP_CARDS_NOT_USED");
    assert_eq!("1h".parse::<Card>().unwrap_err().reason.code, "INVALID_CARD");
    let wire: Result<UpCard, _> = serde_json::from_str(r#"{"seat":1,"card":"Zz"}"#);
    assert!(wire.is_err(), "a card that is not a card is refused when read");
}

#[test]
fn r_post_5_bring_in_of_a_full_bet_is_live_like_a_blind() {
    // Seeds: where the bring-in equals the bet, it is live like a blind, so its poster keeps
    // the right to raise when everyone calls.
    let mut g = stud(TableConfig::seven_card_stud(d(1), d(5), d(5), d(10)));
    g.table(up(&[(1, "Kh"), (2, "3d"), (3, "2c"), (4, "9s")])).unwrap();
    g.post(3, PostKind::BringIn, d(5)).unwrap();
    assert_eq!(g.legal().raise.unwrap().min_to_cents, d(10), "the bring-in was the bet: next is a raise to $10");
    for seat in [4, 1, 2] {
        g.ok(seat, Action::Call);
    }
    let l = g.legal();
    assert_eq!(l.seat, 3, "the bring-in keeps its option");
    assert!(l.can_check && l.raise.is_some());
}

#[test]
fn r_pot_5_stud_odd_chip_to_the_first_seat_the_dealer_lists() {
    // Stud has no button: the dealer lists a tie in the order the odd chip goes (the high
    // card by suit), and the first listed receives it (`OddChipRule::AsRanked`).
    let mut g = Game::new(example_config(seven_card_stud()), &[(1, d(101)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    for seat in 1..=3 {
        g.post(seat, PostKind::Ante, d(1)).unwrap();
    }
    g.post(1, PostKind::BringIn, d(2)).unwrap();
    g.ok(2, Action::Call);
    g.ok(3, Action::Call);
    for _ in 1..5 {
        g.table(TableOp::NextRound { first_to_act_seat: Some(1) }).unwrap();
        for seat in [1, 2, 3] {
            g.ok(seat, Action::Check);
        }
    }
    // $9 between seats 3 and 1: $5 and $4, the odd chip to seat 3 as listed first.
    let pots = g.showdown(vec![vec![3, 1], vec![2]]);
    assert_eq!(pots[0].awards, vec![(3, d(5)), (1, d(4))]);
}

#[test]
fn r_bet_6_triple_draw_four_betting_rounds_small_then_big_bet() {
    let c = example_config(TableConfig::deuce_to_seven_triple_draw(d(2), d(4)));
    assert_eq!((c.betting_rounds, c.game), (4, config::Game::DeuceToSevenTripleDraw));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    assert_eq!(g.legal().raise.unwrap().min_to_cents, d(4));
    g.ok(3, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    // A draw moves no chips; each draw is followed by a betting round.
    for want in [d(2), d(4), d(4)] {
        let stacks: Vec<Cents> = (1..=3).map(|s| g.stack(s)).collect();
        g.next_round();
        assert_eq!((1..=3).map(|s| g.stack(s)).collect::<Vec<_>>(), stacks);
        assert_eq!(g.legal().raise.unwrap().min_to_cents, want);
        for seat in [1, 2, 3] {
            g.ok(seat, Action::Check);
        }
    }
    rejected(g.table(TableOp::NextRound { first_to_act_seat: None }), "NO_MORE_ROUNDS");
    g.showdown(vec![vec![2], vec![1, 3]]);
}

#[test]
fn r_bet_3_single_draw_no_limit_two_betting_rounds() {
    let c = example_config(TableConfig::deuce_to_seven_single_draw(d(1), d(2)));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Call);
    g.ok(1, Action::Check);
    g.next_round();
    g.ok(1, bet(10));
    g.ok(2, Action::Call);
    rejected(g.table(TableOp::NextRound { first_to_act_seat: None }), "NO_MORE_ROUNDS");
    g.showdown(vec![vec![1], vec![2]]);
    assert_eq!(g.stack(1), d(112));
}

#[test]
fn r_pot_5_omaha_hi_lo_halves_each_pot_odd_chip_to_the_high_half() {
    let c = example_config(TableConfig::omaha_hi_lo(d(2), d(4)));
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    g.check_down(&[1, 2, 3]);
    let events = g
        .table(TableOp::Showdown { high: vec![vec![1], vec![2], vec![3]], low: Some(vec![vec![3]]), rake_cents: None })
        .unwrap();
    let pots = settled_pots(&events);
    assert_eq!(pots[0].awards, vec![(1, d(3)), (3, d(3))], "the high and the qualifying low share the $6 pot");
}

#[test]
fn r_post_1_big_blind_ante_paid_first_and_whole_into_the_main_pot() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.ante_cents = d(2);
    c.big_blind_ante = true;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(3)), (4, d(100))]);
    g.start(1, 4, &[1, 2, 3, 4]);
    rejected(g.post(1, PostKind::Ante, d(2)), "POST_NOT_CONFIGURED");
    let r = rejected(g.post(3, PostKind::BigBlindAnte, d(2)), "BLIND_OUT_OF_POSITION");
    assert_eq!(r.number("expected_seat"), Some(2));
    assert_eq!(rejected(g.post(2, PostKind::BigBlind, d(2)), "ANTE_BEFORE_BLIND").reason.rule, "R-POST-1");
    assert_eq!(rejected(g.post(2, PostKind::BigBlindAnte, d(8)), "POST_WRONG_AMOUNT").reason.rule, "R-POST-1");
    g.post(2, PostKind::BigBlindAnte, d(2)).unwrap();
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, Action::AllIn); // all in for $3
    g.ok(4, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Call);
    g.next_round();
    g.ok(1, Action::Fold);
    g.ok(2, bet(10));
    g.ok(4, Action::Call);
    g.check_down(&[2, 4]);
    // Main pot: the whole $2 ante + 4 x $3; the all-in player takes it all.
    let pots = g.showdown(vec![vec![3], vec![2], vec![4]]);
    assert_eq!((pots[0].amount_cents, pots[0].eligible.clone()), (d(14), vec![2, 3, 4]));
    assert_eq!(g.stack(3), d(14));
}

/// R-POT-1 with R-POT-3 (the games pass): the big blind's ante is all the big blind has, so it
/// is all in with nothing live; seat 3 calls, the others fold. Seat 3's live chips over the
/// big blind's (none) are a side pot paid to it at once; the dead ante alone is the main pot,
/// which both seats still in contest: seat 3 wins it with the best hand. It had been left to the
/// all-in big blind alone, who took the ante back after losing the showdown.
#[test]
fn r_pot_1_an_ante_all_in_with_nothing_live_is_contested_by_every_seat_still_in() {
    for (best, stacks) in [(3, [d(99), 0, d(103), d(100)]), (2, [d(99), d(2), d(101), d(100)])] {
        let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
        c.ante_cents = d(2);
        c.big_blind_ante = true;
        let mut g = Game::new(c, &[(1, d(100)), (2, d(2)), (3, d(100)), (4, d(100))]);
        g.start(1, 4, &[1, 2, 3, 4]);
        g.post(2, PostKind::BigBlindAnte, d(2)).unwrap();
        g.post(1, PostKind::SmallBlind, d(1)).unwrap();
        g.ok(3, Action::Call);
        g.ok(4, Action::Fold);
        let events = g.act(1, Action::Fold).unwrap();
        let got: Vec<_> = events
            .iter()
            .filter_map(|(_, event)| match event {
                Event::Table(TableEvent::SidePotPaid { pot, .. }) => Some((pot.amount_cents, pot.eligible.clone(), pot.awards.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(got, vec![(d(3), vec![3], vec![(3, d(3))])], "seat 3's live chips, paid at once");
        g.check_down(&[]);
        let other = if best == 3 { 2 } else { 3 };
        let pots = g.showdown(vec![vec![best], vec![other]]);
        let got: Vec<_> = pots.iter().map(|p| (p.amount_cents, p.eligible.clone(), p.awards.clone())).collect();
        assert_eq!(got, vec![(d(2), vec![2, 3], vec![(best, d(2))])], "the dead ante, contested by seats 2 and 3");
        g.end();
        assert_eq!([g.stack(1), g.stack(2), g.stack(3), g.stack(4)], stacks, "seat {best} best");
    }
}

#[test]
fn r_post_1_button_ante_comes_from_the_button() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.ante_cents = d(1);
    c.button_ante = true;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    let r = rejected(g.post(1, PostKind::ButtonAnte, d(3)), "ANTE_OUT_OF_POSITION");
    assert_eq!(r.number("expected_seat"), Some(3));
    g.post(3, PostKind::ButtonAnte, d(3)).unwrap();
    assert_eq!(g.hand().player(3).unwrap().dead_main_cents, d(3), "whole into the main pot");
}

#[test]
fn r_post_7_each_player_pays_the_ante_before_the_blind() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.ante_cents = d(1);
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    rejected(g.post(1, PostKind::SmallBlind, d(1)), "ANTE_BEFORE_BLIND");
    g.post(1, PostKind::Ante, d(1)).unwrap();
    // R-POST-1: every ante before any blind, not only the poster's own.
    let r = rejected(g.post(1, PostKind::SmallBlind, d(1)), "ANTES_NOT_POSTED");
    assert_eq!((r.reason.rule, r.number("seat")), ("R-POST-1", Some(2)));
    g.post(2, PostKind::Ante, d(1)).unwrap();
    g.post(3, PostKind::Ante, d(1)).unwrap();
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
}

/// R-POST-1, R-POST-7 (the betting pass): a small blind posted before the big blind's ante,
/// the ante then putting the big blind all in, left the hand's bet at the small blind: the
/// small blind checked and the others called $1. Every ante is in before any blind, so the big
/// blind all in on its ante still makes the bet, whatever order the dealer keys the posts in.
#[test]
fn r_post_1_the_antes_go_in_before_any_blind_so_a_big_blind_all_in_on_its_ante_still_makes_the_bet() {
    for big_blind_ante in [true, false] {
        let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
        c.ante_cents = d(2);
        c.big_blind_ante = big_blind_ante;
        let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(2)), (4, d(200))]);
        g.start(1, 1, &[1, 2, 3, 4]);
        if !big_blind_ante {
            g.post(2, PostKind::Ante, d(2)).unwrap();
        }
        let r = rejected(g.post(2, PostKind::SmallBlind, d(1)), "ANTES_NOT_POSTED");
        assert_eq!(r.number("seat"), Some(if big_blind_ante { 3 } else { 1 }), "big blind ante: {big_blind_ante}");
        if big_blind_ante {
            g.post(3, PostKind::BigBlindAnte, d(2)).unwrap();
        } else {
            for seat in [1, 3, 4] {
                g.post(seat, PostKind::Ante, d(2)).unwrap();
            }
        }
        g.post(2, PostKind::SmallBlind, d(1)).unwrap();
        let l = g.legal();
        assert_eq!((l.seat, l.bet_to_cents, l.call_cents), (4, d(2), d(2)), "big blind ante: {big_blind_ante}");
    }
}

/// R-POST-2, R-POST-4, R-POST-6: a straddle, a sleeper and a kill come after the blinds. A kill
/// keyed before them acted first (the seeds: the kill "acts last in the opening round, after the
/// other blinds"); a straddle before them was refused as not configured.
#[test]
fn r_post_2_straddles_sleepers_and_kills_come_after_the_blinds() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.straddle = config::StraddlePolicy::UnderTheGun;
    c.sleeper_allowed = true;
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(200)), (4, d(200)), (5, d(200))]);
    g.start(1, 1, &[1, 2, 3, 4, 5]);
    let r = rejected(g.post(4, PostKind::Straddle, d(4)), "BLINDS_NOT_POSTED");
    assert_eq!((r.reason.rule, r.number("seat")), ("R-POST-2", Some(2)));
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    let r = rejected(g.post(5, PostKind::Sleeper, d(4)), "BLINDS_NOT_POSTED");
    assert_eq!(r.number("seat"), Some(3));
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    g.post(4, PostKind::Straddle, d(4)).unwrap();

    let c = example_config(TableConfig::fixed_limit_holdem_kill(d(4), d(8), config::KillPolicy::Full));
    let mut g = Game::new(c, &[(1, d(200)), (2, d(200)), (3, d(200)), (4, d(200))]);
    g.start(1, 1, &[1, 2, 3, 4]);
    rejected(g.post(4, PostKind::Kill, d(8)), "BLINDS_NOT_POSTED");
    g.post(2, PostKind::SmallBlind, d(2)).unwrap();
    g.post(3, PostKind::BigBlind, d(4)).unwrap();
    g.post(4, PostKind::Kill, d(8)).unwrap();
    assert_eq!(g.legal().seat, 1, "the kill acts last: the action starts left of it");
}

fn reported(cap_cents: Cents) -> TableConfig {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.fee = FeePolicy::Reported { cap_cents, no_flop_no_drop: true };
    c
}

/// Three players, blinds 1/2, everybody in for $10, checked down: a $30 pot.
fn to_showdown(c: TableConfig) -> Game {
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, raise(10));
    g.ok(1, Action::Call);
    g.ok(2, Action::Call);
    g.check_down(&[1, 2, 3]);
    g
}

#[test]
fn r_rake_1_the_rake_the_dealer_reports_is_recorded_within_the_cap() {
    let mut g = to_showdown(reported(d(5)));
    let showdown = |rake| TableOp::Showdown { high: vec![vec![2], vec![1, 3]], low: None, rake_cents: Some(rake) };
    let r = rejected(g.table(showdown(d(6))), "RAKE_ABOVE_LIMIT");
    assert_eq!(r.number("max_rake_cents"), Some(d(5)));
    // Below zero is no rake; rake is taken in minimum playable chips (the money pass: $1.50 at
    // a $1-minimum table left a winner 50 cents that no chip makes).
    let r = rejected(g.table(showdown(-d(1))), "AMOUNT_NOT_POSITIVE");
    assert_eq!((r.reason.rule, r.number("rake_cents")), ("R-UNIT-1", Some(-d(1))));
    let r = rejected(g.table(showdown(150)), "NOT_MULTIPLE_OF_MIN_CHIP");
    assert_eq!((r.reason.rule, r.number("amount_cents"), r.number("min_playable_chip_cents")), ("R-UNIT-2", Some(150), Some(d(1))));
    let events = g.table(showdown(d(3))).unwrap();
    let Some((_, Event::Table(TableEvent::HandSettled { rake_cents, .. }))) = events.last() else { panic!("{events:?}") };
    assert_eq!(*rake_cents, d(3));
    assert_eq!(g.stack(2), d(90) + d(27));
    assert_eq!(g.state().rake_cents, d(3));
}

/// R-RAKE-1 "no flop, no drop (default on)" holds where the dealer reports the rake: a hand
/// won before the flop is not raked (a dealer took $3 of the blinds so: the betting pass); a card
/// room's history raked regardless says so in its configuration.
#[test]
fn r_rake_1_no_flop_no_drop_where_the_dealer_reports_the_rake() {
    let preflop = |c: TableConfig| {
        let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
        g.start(1, 3, &[1, 2, 3]);
        g.post(1, PostKind::SmallBlind, d(1)).unwrap();
        g.post(2, PostKind::BigBlind, d(2)).unwrap();
        g.ok(3, raise(6));
        g.ok(1, Action::Fold);
        g.ok(2, Action::Fold);
        g
    };
    let showdown = |rake| TableOp::Showdown { high: vec![], low: None, rake_cents: Some(rake) };
    let mut g = preflop(reported(d(5)));
    let r = rejected(g.table(showdown(d(3))), "RAKE_NOT_REPORTABLE");
    assert_eq!((r.reason.rule, r.number("rake_cents")), ("R-RAKE-1", Some(d(3))));
    g.table(showdown(0)).unwrap();
    let mut history = reported(d(5));
    history.fee = FeePolicy::Reported { cap_cents: d(5), no_flop_no_drop: false };
    let mut g = preflop(history);
    g.table(showdown(d(1))).unwrap();
    assert_eq!(g.state().rake_cents, d(1));
}

fn rake_10_percent(cap_cents: Cents) -> FeePolicy {
    FeePolicy::Rake { percent_bps: 1000, increment_cents: d(1), cap_cents, no_flop_no_drop: true, min_pot_cents: 0 }
}

/// $1/$2, 10% rake capped at $50: seat 2 all in on the small blind for $1, the big blind
/// posted, seat 4 raised to $6 (seat 1 to act).
fn small_blind_all_in_then_raised() -> Game {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.fee = rake_10_percent(d(50));
    let mut g = Game::new(c, &[(1, d(200)), (2, d(1)), (3, d(200)), (4, d(200))]);
    g.start(1, 1, &[1, 2, 3, 4]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    g.ok(4, raise(6));
    g
}

/// The pot a `SidePotPaid` among `events` paid.
fn side_pot_paid(events: &[(StreamId, Event)]) -> PotResult {
    events
        .iter()
        .find_map(|(_, e)| match e {
            Event::Table(TableEvent::SidePotPaid { pot, .. }) => Some(pot.clone()),
            _ => None,
        })
        .expect("the side pot is paid at once")
}

/// R-RAKE-1, R-POT-3 (the second and third betting passes): a side pot left to one player by a
/// fold is paid at once, and the hand is raked as one, as the showdown would rake it: 10% of
/// all its pots, in $1 steps, capped, taken from the main pot first. $1/$2, cap $50. Seat 2 is
/// all in on the small blind for $1: the main pot is $1 from each of four = $4. The side pot:
/// the folded big blind's other $1, $5 + $5 preflop, $20 + $20 on the flop, and a $30 turn bet
/// nobody called (back, unraked): $51 raked. The hand's rake: 10% of $55 = $5, $4 from the main
/// pot, $1 from the side pot. Before, the side pot went unraked (the house's share depended on
/// whether a player folded before the river), and once raked it took the main pot's share.
#[test]
fn r_rake_1_a_side_pot_paid_at_once_is_raked_as_at_the_showdown() {
    let mut g = small_blind_all_in_then_raised();
    g.ok(1, Action::Call);
    g.ok(3, Action::Fold);
    g.next_round();
    g.ok(4, bet(20));
    g.ok(1, Action::Call);
    g.next_round();
    g.ok(4, bet(30));
    let pot = side_pot_paid(&g.act(1, Action::Fold).unwrap());
    assert_eq!((pot.amount_cents, pot.returned_cents, pot.rake_cents), (d(81), d(30), d(1)));
    assert_eq!(g.stack(4), d(200) - d(56) + d(80), "the side pot less its share of the rake, the uncalled $30 back");
    let showdown = TableOp::Showdown { high: vec![vec![2], vec![4]], low: None, rake_cents: None };
    g.table(showdown).unwrap();
    assert_eq!(g.stack(2), 0, "the $4 main pot carries $4 of the hand's $5 rake");
    assert_eq!(g.state().rake_cents, d(5), "10% of the hand's $55, once");
}

/// R-RAKE-1 (the third betting pass): a side pot paid before the flop is raked: the hand goes
/// to a showdown, so the flop is seen. Seat 2 is all in on the small blind for $1; seat 4 raises
/// to $6, seat 1 to $30, the big blind folds, seat 4 to $80 and seat 1 folds: the side pot is
/// $29 + $29 + the big blind's other $1 contested ($59) and $50 back. 10% of $63 = $6: $4 from
/// the $4 main pot, $2 from the side pot.
#[test]
fn r_rake_1_a_side_pot_paid_before_the_flop_is_raked_all_the_same() {
    let mut g = small_blind_all_in_then_raised();
    g.ok(1, raise(30));
    g.ok(3, Action::Fold);
    g.ok(4, raise(80));
    let pot = side_pot_paid(&g.act(1, Action::Fold).unwrap());
    assert_eq!((pot.amount_cents, pot.returned_cents, pot.rake_cents), (d(109), d(50), d(2)));
    g.check_down(&[]);
    g.table(TableOp::Showdown { high: vec![vec![2], vec![4]], low: None, rake_cents: None }).unwrap();
    assert_eq!(g.state().rake_cents, d(6));
}

/// R-RAKE-2 (the second betting pass): the drop is judged on the main pot after its rake,
/// however the pots are awarded. $22 heads up, 10% in $1 steps: rake $2, $20 left, under the
/// $21 the drop needs; with `AwardPots` and the rake repeated, a $1 drop was taken from the
/// winner as if the $22 were unraked.
#[test]
fn r_rake_2_the_drop_is_judged_after_the_rake_however_the_pots_are_awarded() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.fee = rake_10_percent(d(5));
    c.jackpot_drop = Some(config::JackpotDrop { amount_cents: d(1), min_pot_cents: d(21) });
    for by_amounts in [false, true] {
        let mut g = Game::new(c.clone(), &[(1, d(100)), (2, d(100))]);
        g.start(1, 1, &[1, 2]);
        g.post(1, PostKind::SmallBlind, d(1)).unwrap();
        g.post(2, PostKind::BigBlind, d(2)).unwrap();
        g.ok(1, raise(11));
        g.ok(2, Action::Call);
        g.check_down(&[2, 1]);
        let settle = if by_amounts {
            TableOp::AwardPots { awards: vec![SeatAward { seat: 1, amount_cents: d(20) }], rake_cents: Some(d(2)) }
        } else {
            TableOp::Showdown { high: vec![vec![1]], low: None, rake_cents: None }
        };
        g.table(settle).unwrap();
        assert_eq!((g.stack(1), g.state().jackpot_cents), (d(89) + d(20), 0), "by amounts: {by_amounts}");
    }
}

#[test]
fn r_pot_6_a_settled_hand_is_not_settled_or_dealt_again() {
    let mut g = to_showdown(reported(d(5)));
    let showdown = TableOp::Showdown { high: vec![vec![2]], low: None, rake_cents: Some(d(3)) };
    g.table(showdown.clone()).unwrap();
    let stacks = (g.stack(1), g.stack(2), g.stack(3));
    let r = rejected(g.table(showdown), "HAND_ALREADY_SETTLED");
    assert_eq!(r.reason.rule, "R-POT-6");
    rejected(g.table(TableOp::AwardPots { awards: vec![SeatAward { seat: 1, amount_cents: d(27) }], rake_cents: Some(d(3)) }), "HAND_ALREADY_SETTLED");
    rejected(g.table(TableOp::NextRound { first_to_act_seat: None }), "HAND_ALREADY_SETTLED");
    assert_eq!((g.stack(1), g.stack(2), g.stack(3)), stacks, "a refusal moves nothing");
}

#[test]
fn r_rake_1_a_reported_rake_is_bounded_by_the_table_fee() {
    // No fee: nothing may be reported.
    let mut g = to_showdown(example_config(TableConfig::no_limit_holdem(d(1), d(2))));
    let showdown = |rake| TableOp::Showdown { high: vec![vec![2]], low: None, rake_cents: Some(rake) };
    rejected(g.table(showdown(d(1))), "RAKE_NOT_REPORTABLE");
    // A computed rake (10%, $1 steps, cap $5: $3 on $30) is the policy's: a dealer reporting
    // less would hand the house's share to the winner (the hostile pass's skim), more would
    // take the players'; only the computed amount itself may be repeated.
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.fee = FeePolicy::Rake { percent_bps: 1000, increment_cents: d(1), cap_cents: d(5), no_flop_no_drop: true, min_pot_cents: 0 };
    let mut g = to_showdown(c);
    for wrong in [d(4), d(2), 0] {
        let r = rejected(g.table(showdown(wrong)), "RAKE_NOT_AS_COMPUTED");
        assert_eq!((r.reason.rule, r.number("rake_cents"), r.number("required_rake_cents")), ("R-RAKE-1", Some(wrong), Some(d(3))));
    }
    g.table(showdown(d(3))).unwrap();
    assert_eq!(g.state().rake_cents, d(3));
    assert_eq!(g.stack(2), d(90) + d(27));
}

#[test]
fn r_rake_1_with_a_reported_rake_the_last_fold_waits_for_the_dealer() {
    let mut g = Game::new(reported(d(5)), &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, raise(6));
    let events = g.act(1, Action::Fold).unwrap();
    assert_eq!(events.len(), 1, "no settlement yet: the dealer reports the rake");
    g.table(TableOp::Showdown { high: vec![], low: None, rake_cents: Some(0) }).unwrap();
    assert_eq!(g.stack(2), d(102));
}

#[test]
fn r_pot_5_dealer_awards_by_amount_within_each_pots_eligible_players() {
    // Seat 1 is all in for $10; seats 2 and 3 put in $30 each: main $30, side $40.
    let mut g = Game::new(reported(d(5)), &[(1, d(10)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, raise(30));
    g.ok(1, Action::AllIn);
    g.ok(2, Action::Call);
    g.check_down(&[2, 3]);
    let award = |awards: &[(Seat, Cents)], rake| TableOp::AwardPots {
        awards: awards.iter().map(|(seat, amount_cents)| SeatAward { seat: *seat, amount_cents: *amount_cents }).collect(),
        rake_cents: rake,
    };
    let r = rejected(g.table(award(&[(1, d(70))], None)), "AWARD_NOT_ELIGIBLE");
    assert_eq!(r.number("unawarded_cents"), Some(d(40)), "the side pot is not seat 1's");
    rejected(g.table(award(&[(1, d(30)), (2, d(30))], None)), "AWARDS_DO_NOT_SUM");
    rejected(g.table(award(&[(1, d(30)), (1, d(40))], None)), "AWARD_NOT_ELIGIBLE");
    // Whole chips only (R-UNIT-2; the games pass: $12.01 and $182.99 at a $1 table).
    let r = rejected(g.table(award(&[(1, d(30)), (3, d(38) - 1), (2, 1)], Some(d(2)))), "NOT_MULTIPLE_OF_MIN_CHIP");
    assert_eq!((r.reason.rule, r.number("seat"), r.number("min_playable_chip_cents")), ("R-UNIT-2", Some(3), Some(d(1))));
    // The room's record: seat 1 took the main pot, seat 3 the side pot less $2 rake (a room's
    // record does not say which pot the rake came from: it comes from what the awards leave).
    let events = g.table(award(&[(1, d(30)), (3, d(38))], Some(d(2)))).unwrap();
    let Some((_, Event::Table(TableEvent::HandSettled { dealer_awarded, rake_cents, pots, .. }))) = events.last() else { panic!() };
    assert!(*dealer_awarded);
    assert_eq!(*rake_cents, d(2));
    assert_eq!((pots[0].rake_cents, pots[1].rake_cents), (0, d(2)));
    assert_eq!((g.stack(1), g.stack(2), g.stack(3)), (d(30), d(70), d(108)));
}

#[test]
fn r_pot_1_a_button_ante_payer_all_in_on_the_ante_wins_only_the_ante() {
    // Found by replaying PokerKit hands: the payer of a button ante of $6 with a $2 stack is
    // all in on the ante; the blinds are called and checked down, and the payer shows the best
    // hand. The dead $2 alone are the main pot; the blinds' $4 are a side pot without the payer
    // (R-POT-1: nobody wins from an opponent more than they put in).
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.ante_cents = d(2);
    c.button_ante = true;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(2))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(3, PostKind::ButtonAnte, d(2)).unwrap();
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    g.check_down(&[1, 2]);
    let pots = g.showdown(vec![vec![3], vec![2], vec![1]]);
    let shape: Vec<(Cents, Vec<Seat>)> = pots.iter().map(|p| (p.amount_cents, p.eligible.clone())).collect();
    assert_eq!(shape, [(d(2), vec![1, 2, 3]), (d(4), vec![1, 2])]);
    assert_eq!((g.stack(1), g.stack(2), g.stack(3)), (d(98), d(102), d(2)));
}

/// R-POST-1 (the second betting pass): with a dead button on an empty seat every seat could post
/// the button ante, and three paid the table's ante. It is posted once, by the player before the
/// first blind, where the button would sit.
#[test]
fn r_post_1_a_dead_button_s_ante_is_posted_once_by_the_player_before_the_blinds() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.ante_cents = d(1);
    c.button_ante = true;
    c.button_policy = config::ButtonPolicy::Dead;
    let mut g = Game::new(c, &[(1, d(100)), (3, d(100)), (4, d(100)), (5, d(100))]);
    g.start(1, 2, &[1, 3, 4, 5]);
    let r = rejected(g.post(5, PostKind::ButtonAnte, d(4)), "ANTE_OUT_OF_POSITION");
    assert_eq!(r.number("expected_seat"), Some(1));
    g.post(1, PostKind::ButtonAnte, d(4)).unwrap();
    rejected(g.post(4, PostKind::ButtonAnte, d(4)), "ANTE_OUT_OF_POSITION");
    g.post(3, PostKind::SmallBlind, d(1)).unwrap();
    g.post(4, PostKind::BigBlind, d(2)).unwrap();
    assert_eq!(g.hand().pot_cents, d(7), "one button ante and the blinds");
}
