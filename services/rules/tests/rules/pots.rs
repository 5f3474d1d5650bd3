//! Section 6 and 7 worked examples: pots, side pots, payouts, rake, drops, kitty.

use chipledger_rules::*;

use crate::support::*;

fn nl_no_blinds(min_bet_cents: Cents) -> TableConfig {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.blinds_cents = Vec::new();
    c.min_bet_cents = min_bet_cents;
    c
}

type PotSummary = (Cents, Vec<Seat>, Vec<(Seat, Cents)>);

fn summary(pots: &[PotResult]) -> Vec<PotSummary> {
    pots.iter().map(|p| (p.amount_cents, p.eligible.clone(), p.awards.clone())).collect()
}

#[test]
fn r_pot_2_three_players_main_30_side_40() {
    // A = seat 1, B = seat 2, C = seat 3.
    let mut g = Game::new(nl_no_blinds(d(10)), &[(1, d(100)), (2, d(10)), (3, d(30))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(20)); // A opens $20
    g.ok(2, Action::AllIn); // B calls all in for $10
    g.ok(3, Action::AllIn); // C raises all in to $30
    g.ok(1, Action::Call); // A calls
    let pots = g.showdown(vec![vec![2], vec![1], vec![3]]);
    assert_eq!(
        summary(&pots),
        vec![(d(30), vec![1, 2, 3], vec![(2, d(30))]), (d(40), vec![1, 3], vec![(1, d(40))])],
        "main pot $30 to B, side pot $40 to A"
    );
    assert_eq!((g.stack(1), g.stack(2), g.stack(3)), (d(110), d(30), 0));
    g.end();
}

#[test]
fn r_pot_3_short_big_blind_side_pot_paid_to_carol() {
    // Antes $1 x 10, blinds $4/$8. Seat 1 small blind, seat 2 Alice ($8), seat 3 Dianne,
    // seat 4 Carol, seats 5..10 the others, button seat 10.
    let mut c = example_config(TableConfig::no_limit_holdem(d(4), d(8)));
    c.ante_cents = d(1);
    let mut stacks: Vec<(Seat, Cents)> = (1..=10).map(|s| (s, d(100))).collect();
    stacks[1].1 = d(8);
    let mut g = Game::new(c, &stacks);
    let seats: Vec<Seat> = (1..=10).collect();
    g.start(1, 10, &seats);
    for s in 1..=10 {
        g.post(s, PostKind::Ante, d(1)).unwrap();
    }
    g.post(1, PostKind::SmallBlind, d(4)).unwrap();
    g.post(2, PostKind::BigBlind, d(7)).unwrap(); // Alice: $1 ante and $7 of the big blind
    g.ok(3, Action::Call); // Dianne calls $8
    g.ok(4, raise(16)); // Carol raises to $16
    for s in 5..=10 {
        g.ok(s, Action::Fold);
    }
    g.ok(1, Action::Fold); // the small blind folds
    let events = g.act(3, Action::Fold).unwrap(); // Dianne folds
    assert!(legal_actions(g.state()).is_none());
    // "The side pot of $10 ... is paid immediately to Carol when Dianne folds."
    let side = events
        .iter()
        .find_map(|(_, e)| match e {
            Event::Table(TableEvent::SidePotPaid { pot, .. }) => Some(pot.clone()),
            _ => None,
        })
        .expect("the side pot is paid at once");
    assert_eq!(side.amount_cents, d(10), "side pot $10: $1 from Dianne, $9 from Carol");
    assert_eq!(side.eligible, vec![4]);
    assert_eq!(side.awards, vec![(4, d(10))], "paid to Carol");
    assert_eq!(side.returned_cents, d(8), "of which $8 was never called (R-POT-4)");
    assert_eq!(g.stack(4), d(100) - d(17) + d(10), "at once, before the showdown");
    let pots = g.showdown(vec![vec![2], vec![4]]);
    assert_eq!(pots.len(), 1);
    assert_eq!(pots[0].amount_cents, d(35), "main pot = $10 + $4 + 3 x $7");
    assert_eq!(pots[0].eligible, vec![2, 4]);
    assert_eq!(g.stack(2), d(35));
    assert_eq!(g.stack(4), d(100) - d(17) + d(10));
}

#[test]
fn r_pot_3_all_in_for_part_of_the_ante() {
    let mut c = nl_no_blinds(d(2));
    c.ante_cents = d(2);
    let mut g = Game::new(c, &[(1, d(1)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::Ante, d(1)).unwrap();
    g.post(2, PostKind::Ante, d(2)).unwrap();
    g.post(3, PostKind::Ante, d(2)).unwrap();
    g.ok(2, bet(10));
    g.ok(3, Action::Call);
    g.check_down(&[2, 3]);
    let pots = g.showdown(vec![vec![1], vec![2], vec![3]]);
    assert_eq!(pots[0].amount_cents, d(3), "an equal share ($1) of every ante to the main pot");
    assert_eq!(pots[1].amount_cents, d(22), "the rest of the antes and the bets to the side pot");
    assert_eq!(pots[1].awards, vec![(2, d(22))]);
}

#[test]
fn r_pot_4_uncalled_bet_returned_and_not_raked() {
    let mut c = nl_no_blinds(d(2));
    c.fee = FeePolicy::Rake { percent_bps: 1000, increment_cents: d(1), cap_cents: d(5), no_flop_no_drop: true, min_pot_cents: 0 };
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.ok(1, bet(10));
    g.ok(2, Action::Call);
    g.next_round();
    g.ok(1, bet(50));
    let events = g.act(2, Action::Fold).unwrap();
    let pots = settled_pots(&events);
    assert_eq!(pots[0].returned_cents, d(50), "the uncalled $50 returns");
    assert_eq!(pots[0].rake_cents, d(2), "rake 10% of the $20 called, never of the uncalled bet");
    assert_eq!(g.stack(1), d(100) + d(10) - d(2));
}

#[test]
fn r_pot_5_split_pot_odd_chip_first_clockwise_from_button() {
    let mut g = Game::new(nl_no_blinds(d(1)), &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 1, &[1, 2, 3]);
    g.ok(2, bet(1));
    g.ok(3, Action::Call);
    g.ok(1, Action::Call);
    g.check_down(&[2, 3, 1]);
    // $3 pot, seats 1 and 3 tie: $1 each in whole chips, the odd $1 to seat 3 (first
    // clockwise from the button at seat 1).
    let pots = g.showdown(vec![vec![1, 3], vec![2]]);
    assert_eq!(pots[0].awards, vec![(3, d(2)), (1, d(1))]);
}

#[test]
fn r_pot_5_high_low_split_odd_chip_to_high() {
    let mut c = nl_no_blinds(d(1));
    c.hi_lo = true;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(1));
    g.ok(2, Action::Call);
    g.ok(3, Action::Call);
    g.check_down(&[1, 2, 3]);
    let events = g.table(TableOp::Showdown { high: vec![vec![1], vec![2], vec![3]], low: Some(vec![vec![2]]), rake_cents: None }).unwrap();
    let pots = settled_pots(&events);
    assert_eq!(pots[0].awards, vec![(1, d(2)), (2, d(1))], "$3: high $2 (odd chip), low $1");
}

#[test]
fn r_pot_5_no_qualifying_low_high_takes_all() {
    let mut c = nl_no_blinds(d(1));
    c.hi_lo = true;
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.ok(1, bet(2));
    g.ok(2, Action::Call);
    g.check_down(&[1, 2]);
    let events = g.table(TableOp::Showdown { high: vec![vec![2], vec![1]], low: Some(vec![]), rake_cents: None }).unwrap();
    assert_eq!(settled_pots(&events)[0].awards, vec![(2, d(4))]);
}

/// R-POT-5: a low is ranked only where the table plays high-low. At a hold'em table a low
/// ranking halved the pot, and half of it went to the hand that lost it (the stakes pass).
#[test]
fn r_pot_5_low_not_played_at_a_high_only_table() {
    let mut g = Game::new(nl_no_blinds(d(1)), &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.ok(1, bet(2));
    g.ok(2, Action::Call);
    g.check_down(&[1, 2]);
    let r = rejected(g.table(TableOp::Showdown { high: vec![vec![1], vec![2]], low: Some(vec![vec![2]]), rake_cents: None }), "LOW_NOT_PLAYED");
    assert_eq!((r.reason.rule, r.number("low_seats")), ("R-POT-5", Some(1)));
    let events = g.table(TableOp::Showdown { high: vec![vec![1], vec![2]], low: Some(vec![]), rake_cents: None }).unwrap();
    assert_eq!(settled_pots(&events)[0].awards, vec![(1, d(4))], "the best high hand takes the pot whole");
}

/// R-REBUY-1 with R-POT-5 and R-POST-5: settings that change no play do not make another game.
/// Omaha flagged high-low is Omaha high-low; a bring-in outside stud, or high-low in a low game,
/// is refused (each had given a table of the same game another name, and a way around the wait).
#[test]
fn r_rebuy_1_the_same_game_whatever_settings_that_change_no_play() {
    let omaha_hi_lo = TableConfig::omaha_hi_lo(d(2), d(4));
    let mut flagged = omaha_hi_lo.clone();
    flagged.game = config::Game::Omaha;
    assert_eq!(flagged.same_game().key(), omaha_hi_lo.same_game().key());
    let mut c = nl_no_blinds(d(1));
    c.bring_in_cents = Some(d(1));
    let r = c.validate().expect_err("a bring-in at hold'em");
    assert_eq!(r.reason.rule, "R-POST-5");
    let mut c = TableConfig::razz(d(1), d(1), d(2), d(4));
    c.hi_lo = true;
    assert_eq!(c.validate().expect_err("razz is a low game").reason.rule, "R-POT-5");
    // Blinds of nothing at a stud table, a last round's maximum equal to the others': no play
    // changes, and the game stays the same (the fixes' pass: each had made another game).
    let stud = TableConfig::seven_card_stud(d(1), d(1), d(2), d(4));
    let mut blinds_of_nothing = stud.clone();
    blinds_of_nothing.blinds_cents = vec![0, 0];
    assert_eq!(blinds_of_nothing.same_game().key(), stud.same_game().key());
    let spread = |last| {
        let mut c = nl_no_blinds(d(1));
        c.betting = config::BettingStructure::SpreadLimit { min_bet_cents: d(1), max_bet_cents: d(5), last_round_max_bet_cents: last, max_raises: 3 };
        c
    };
    assert_eq!(spread(Some(d(5))).same_game().key(), spread(None).same_game().key());
    assert_ne!(spread(Some(d(10))).same_game().key(), spread(None).same_game().key());
    // A spread limit whose bets reach the largest buy-in in every round is a big-bet game: no
    // limit for the wait, the spelling before kept as its legacy key (the stakes pass: spread
    // limit $2 to $10 million was another game than no limit, and a patron who left with $200
    // came back for $40). A limit game is named by the bets it plays (100/400000 with the big
    // bet from a round never reached was another game than 100/100 flat).
    let nl = TableConfig::no_limit_holdem(d(1), d(2));
    let mut big_spread = nl.clone();
    big_spread.betting = config::BettingStructure::SpreadLimit { min_bet_cents: d(2), max_bet_cents: d(10_000_000), last_round_max_bet_cents: None, max_raises: 0 };
    assert_eq!(big_spread.same_game().key(), nl.same_game().key());
    assert!(big_spread.same_game().holds("holdem spread limit 200-1000000000 blinds 100/200"), "{:?}", big_spread.same_game());
    // By the blinds, not the buy-in limits (the fixes' pass: a $400 maximum buy-in had made the
    // same spread another game): 100 big blinds and up is no limit, below a spread limit.
    let mut deeper = big_spread.clone();
    deeper.betting = config::BettingStructure::SpreadLimit { min_bet_cents: d(2), max_bet_cents: d(200), last_round_max_bet_cents: None, max_raises: 3 };
    deeper.buy_in.max_cents = d(400);
    assert_eq!(deeper.same_game().key(), nl.same_game().key());
    let mut below = big_spread.clone();
    below.betting = config::BettingStructure::SpreadLimit { min_bet_cents: d(2), max_bet_cents: d(198), last_round_max_bet_cents: None, max_raises: 0 };
    assert_ne!(below.same_game().key(), nl.same_game().key(), "a maximum below 100 big blinds is a spread limit");
    // A spread of one amount is that fixed limit.
    let mut one_amount = nl.clone();
    one_amount.betting = config::BettingStructure::SpreadLimit { min_bet_cents: d(2), max_bet_cents: d(2), last_round_max_bet_cents: None, max_raises: 3 };
    let mut fixed = nl.clone();
    fixed.betting = config::BettingStructure::FixedLimit { small_bet_cents: d(2), big_bet_cents: d(2), max_raises: 3, heads_up_uncapped: true };
    assert_eq!(one_amount.same_game().key(), fixed.same_game().key());
    let flat = |small, big, from_round| {
        let mut c = TableConfig::fixed_limit_holdem(d(1), d(1), 3);
        c.betting = config::BettingStructure::FixedLimit { small_bet_cents: small, big_bet_cents: big, max_raises: 3, heads_up_uncapped: true };
        c.big_bet_from_round = from_round;
        c
    };
    assert_eq!(flat(d(1), d(4_000), 9).same_game().key(), flat(d(1), d(1), 2).same_game().key());
    assert_eq!(flat(d(1), d(2), 0).same_game().key(), flat(d(2), d(2), 2).same_game().key());
    assert_ne!(flat(d(1), d(2), 2).same_game().key(), flat(d(1), d(1), 2).same_game().key());
    // Stud without the open pair's big bet is named the same way (the fixes' pass: razz 2/4 with
    // the big bet from round 5 of 5 played 2/2 flat and was another game).
    let razz = |small, big, from_round| {
        let mut c = TableConfig::razz(d(1), d(1), small, big);
        c.big_bet_from_round = from_round;
        c
    };
    assert!(!razz(d(2), d(4), 5).open_pair_big_bet);
    assert_eq!(razz(d(2), d(4), 5).same_game().key(), razz(d(2), d(2), 2).same_game().key());
    // The option counts only where it plays: stud reaching fourth street (set at hold'em, or at
    // one round of stud, it had kept a flat game's big bet in its name).
    let mut flagged = flat(d(2), d(4), 4);
    flagged.open_pair_big_bet = true;
    assert_eq!(flagged.same_game().key(), flat(d(2), d(2), 2).same_game().key());
    let one_round = |big| {
        let mut c = TableConfig::seven_card_stud(d(1), d(1), d(2), big);
        c.betting_rounds = 1;
        c.big_bet_from_round = 1;
        c.open_pair_big_bet = true;
        c
    };
    assert_eq!(one_round(d(4)).same_game().key(), one_round(d(2)).same_game().key());
    // Without blinds a spread is no limit by its own minimum, never by the table's minimum bet.
    let stud_spread = |table_min| {
        let mut c = TableConfig::seven_card_stud(d(1), d(1), d(2), d(4));
        c.betting = config::BettingStructure::SpreadLimit { min_bet_cents: d(2), max_bet_cents: d(100), last_round_max_bet_cents: None, max_raises: 3 };
        c.min_bet_cents = table_min;
        c
    };
    assert_eq!(stud_spread(d(1)).same_game().key(), stud_spread(d(2)).same_game().key());
    // One blind is one blind however written (the second stakes pass: three games).
    let single = |blinds: Vec<Cents>| {
        let mut c = TableConfig::no_limit_holdem(d(1), d(2));
        c.blinds_cents = blinds;
        c.same_game().key().to_owned()
    };
    assert_eq!(single(vec![0, d(2)]), single(vec![d(2)]));
    assert_eq!(single(vec![0, 0, d(2)]), single(vec![d(2)]));
    assert_ne!(single(vec![d(1), d(2)]), single(vec![d(2)]));
    // A blind of nothing before two blinds: one of them would never be posted (the stakes pass:
    // 0/1/2 opened as a $1/$2 game and played a single $2 blind). Refused.
    let mut zero_first = TableConfig::no_limit_holdem(d(1), d(2));
    zero_first.blinds_cents = vec![0, d(1), d(2)];
    let r = zero_first.validate().expect_err("0/1/2");
    assert_eq!((r.reason.code, r.reason.rule), ("INVALID_CONFIG", "R-POST-2"));
}

fn raked(mut c: TableConfig) -> TableConfig {
    c.fee = FeePolicy::Rake { percent_bps: 1000, increment_cents: d(1), cap_cents: d(5), no_flop_no_drop: true, min_pot_cents: 0 };
    c
}

#[test]
fn r_rake_1_no_flop_no_drop() {
    let mut g = Game::new(raked(nl_no_blinds(d(2))), &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.ok(1, bet(10));
    g.ok(2, raise(30));
    let events = g.act(1, Action::Fold).unwrap();
    assert_eq!(settled_pots(&events)[0].rake_cents, 0, "a hand that ends before the flop is not raked");
    assert_eq!(g.stack(2), d(110));
}

#[test]
fn r_rake_1_ten_percent_rounded_down_capped_main_pot_first() {
    // Side pot case: seat 1 all in for $20; seats 2 and 3 play $80 each.
    let mut g = Game::new(raked(nl_no_blinds(d(2))), &[(1, d(20)), (2, d(200)), (3, d(200))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, Action::AllIn);
    g.ok(2, raise(80));
    g.ok(3, Action::Call);
    g.check_down(&[2, 3]);
    let pots = g.showdown(vec![vec![1], vec![2], vec![3]]);
    // Pots $60 (main) and $120 (side): 10% of $180 = $18, capped at $5, all from the main pot.
    assert_eq!((pots[0].amount_cents, pots[0].rake_cents), (d(60), d(5)));
    assert_eq!((pots[1].amount_cents, pots[1].rake_cents), (d(120), 0));
    assert_eq!(pots[0].awards, vec![(1, d(55))]);
    assert_eq!(g.world.balance(&Account::Rake { table_id: tid(TABLE) }), d(5));
}

#[test]
fn r_rake_2_jackpot_drop_after_rake_when_flop_seen() {
    let mut c = raked(nl_no_blinds(d(2)));
    c.jackpot_drop = Some(config::JackpotDrop { amount_cents: d(1), min_pot_cents: d(10) });
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.ok(1, bet(10));
    g.ok(2, Action::Call);
    g.next_round();
    g.ok(1, bet(10));
    let events = g.act(2, Action::Fold).unwrap();
    let p = &settled_pots(&events)[0];
    assert_eq!((p.rake_cents, p.jackpot_cents), (d(2), d(1)), "rake $2, then the $1 jackpot drop");
    assert_eq!(g.world.balance(&Account::Jackpot { table_id: tid(TABLE) }), d(1));
    assert_eq!(g.stack(1), d(100) + d(10) - d(3));
}

#[test]
fn r_kitty_1_winner_contributes_one_chip() {
    let mut c = nl_no_blinds(d(2));
    c.kitty = Some(config::KittyPolicy { min_pot_cents: d(10), leftover: Default::default(), from: config::KittyFrom::MainPot });
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.ok(1, bet(10));
    g.ok(2, Action::Call);
    g.next_round();
    g.ok(1, bet(10));
    g.ok(2, Action::Fold);
    assert_eq!(g.state().kitty_cents, d(1));
    assert_eq!(g.stack(1), d(100) + d(10) - d(1));
    g.end();
    g.table(TableOp::PayKittyExpense { amount_cents: d(1), purpose: "fresh decks".into(), to_dealer: false }).unwrap();
    assert_eq!(g.state().kitty_cents, 0);
}

/// R-KITTY-1 and the seeds ("players contribute a chip of lowest value towards the kitty when
/// they win a pot"): with `EachPot` the side pot's winner gives a chip too, with `EachWinner`
/// every winner of a split pot does, and `MainPot` (tables configured before the choice) takes
/// only the main pot's.
#[test]
fn r_kitty_1_seeds_every_pot_won_gives_a_chip() {
    let play = |from: config::KittyFrom| {
        let mut c = nl_no_blinds(d(10));
        c.kitty = Some(config::KittyPolicy { min_pot_cents: 0, leftover: Default::default(), from });
        // A = seat 1, B = seat 2, C = seat 3: main pot $30 to B, side pot $40 to A.
        let mut g = Game::new(c, &[(1, d(100)), (2, d(10)), (3, d(30))]);
        g.start(1, 3, &[1, 2, 3]);
        g.ok(1, bet(20));
        g.ok(2, Action::AllIn);
        g.ok(3, Action::AllIn);
        g.ok(1, Action::Call);
        g.showdown(vec![vec![2], vec![1], vec![3]]);
        (g.state().kitty_cents, g.stack(1), g.stack(2))
    };
    assert_eq!(play(config::KittyFrom::MainPot), (d(1), d(100) - d(30) + d(40), d(29)));
    assert_eq!(play(config::KittyFrom::EachPot), (d(2), d(100) - d(30) + d(39), d(29)));
    assert_eq!(play(config::KittyFrom::EachWinner), (d(2), d(100) - d(30) + d(39), d(29)));
    // A split pot: $40 between seats 1 and 2.
    let split = |from: config::KittyFrom| {
        let mut c = nl_no_blinds(d(10));
        c.kitty = Some(config::KittyPolicy { min_pot_cents: d(10), leftover: Default::default(), from });
        let mut g = Game::new(c, &[(1, d(20)), (2, d(20))]);
        g.start(1, 2, &[1, 2]);
        g.ok(1, Action::AllIn);
        g.ok(2, Action::Call);
        g.showdown(vec![vec![1, 2]]);
        (g.state().kitty_cents, g.stack(1) + g.stack(2))
    };
    assert_eq!(split(config::KittyFrom::EachPot), (d(1), d(39)));
    assert_eq!(split(config::KittyFrom::EachWinner), (d(2), d(38)));
}

#[test]
fn r_rake_3_time_collection_in_advance() {
    let mut c = nl_no_blinds(d(2));
    c.fee = FeePolicy::TimeCollection { fee_cents: d(6), interval_minutes: 30 };
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::CollectTime { seats: vec![1, 2] }).unwrap();
    assert_eq!((g.stack(1), g.stack(2)), (d(94), d(94)));
    assert_eq!(g.state().rake_cents, d(12));
}

/// R-KITTY-1 with R-POT-3 (the wave-2 pass): a contested side pot paid at once gives its chip
/// under `EachPot` as one decided at the showdown does; the main pot only gives none there.
#[test]
fn r_kitty_1_a_side_pot_paid_at_once_gives_its_chip() {
    let play = |from: config::KittyFrom| {
        let mut c = nl_no_blinds(d(10));
        c.kitty = Some(config::KittyPolicy { min_pot_cents: 0, leftover: Default::default(), from });
        // Seat 1 all in for $40; seats 2 and 3 go on, seat 3 folds to a flop bet: the side pot
        // above $40 is seat 2's at once.
        let mut g = Game::new(c, &[(1, d(40)), (2, d(200)), (3, d(400))]);
        g.start(1, 1, &[1, 2, 3]);
        g.ok(2, bet(10));
        g.ok(3, Action::Call);
        g.ok(1, Action::AllIn);
        g.ok(2, raise(80));
        g.ok(3, Action::Call);
        g.next_round();
        g.ok(2, bet(20));
        let events = g.act(3, Action::Fold).unwrap();
        let paid = events.iter().find_map(|(_, e)| match e {
            Event::Table(TableEvent::SidePotPaid { kitty_cents, .. }) => Some(*kitty_cents),
            _ => None,
        });
        (paid, g.state().kitty_cents)
    };
    assert_eq!(play(config::KittyFrom::EachPot), (Some(d(1)), d(1)));
    assert_eq!(play(config::KittyFrom::MainPot), (Some(0), 0));
}
