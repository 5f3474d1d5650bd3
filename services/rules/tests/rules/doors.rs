//! Every door by which chips reach or leave a seat, judged by the same rules: buy-ins, top-ups,
//! cash in play, markers to the seat, IOUs, moves, corrections, time, kitty, jackpot and counts
//! (R-STAKE-*, R-REBUY-*, R-MARK-*, R-AUDIT-1, R-RAKE-2, R-RAKE-3, R-KITTY-1, R-CHIP-4).

use chipledger_rules::*;

use crate::support::*;

const MINUTE: i64 = 60_000;

/// $1/$2 no limit, buy-in $40..$200, no fee, cash in play allowed.
fn nl_1_2() -> TableConfig {
    let mut c = TableConfig::no_limit_holdem(d(1), d(2));
    c.fee = FeePolicy::NoFee;
    c.cash_in_play_allowed = true;
    c
}

fn signers(a: &str, b: &str) -> Signers {
    Signers { first: a.into(), second: b.into() }
}

/// A second table of `config` in the same world, stocked by a fill.
pub(crate) fn open_second_table(g: &mut Game, table: &str, config: TableConfig) -> TableId {
    let t = tid(table);
    let denoms = config.chip_set.denominations_cents.clone();
    g.world.exec(Command::Table(TableCommand { table_id: t.clone(), op: TableOp::OpenTable { config } })).unwrap();
    let fill: Vec<ChipCount> = denoms.iter().map(|d| ChipCount { denomination_cents: *d, count: 2_000 }).collect();
    let slip_no = g.next_fill_slip;
    g.world
        .exec(Command::Table(TableCommand {
            table_id: t.clone(),
            op: TableOp::Fill { cage_id: cid(CAGE), slip_no, chips: fill, signers: signers("cage-1", "floor-1") },
        }))
        .unwrap();
    g.next_fill_slip += 1;
    t
}

fn at(g: &mut Game, table: &TableId, op: TableOp) -> Result<Vec<(StreamId, Event)>, Rejection> {
    g.world.exec(Command::Table(TableCommand { table_id: table.clone(), op }))
}

fn buy_in(seat: Seat, player: &str, amount_cents: Cents) -> TableOp {
    TableOp::BuyIn { seat, player_id: pid(player), amount_cents, source: FundsSource::Cash, supervisor_id: None, short_buy: false }
}

/// Heads-up, seat 1 on the button posts the small blind and wins $60 from seat 2 with one
/// bet: P1 ends with $160 at the table.
fn p1_wins_60(g: &mut Game) {
    let hand_no = g.state().last_hand_no + 1;
    g.start(hand_no, 1, &[1, 2]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, raise(60));
    g.ok(2, Action::Call);
    g.check_down(&[2, 1]);
    g.showdown(vec![vec![1]]);
    g.end();
}

// ---------------------------------------------------------------- R-REBUY-1 on the log

/// R-REBUY-1 (the seating pass): the tolerance lowers the least a return brings, not the most:
/// $260 left with at a 20% tolerance comes back whole above a $200 maximum (it had been capped
/// at $208, the rest kept off the table).
#[test]
fn r_rebuy_1_a_return_brings_back_all_it_left_with_whatever_the_tolerance() {
    let mut tolerant = nl_1_2();
    tolerant.rebuy.tolerance_bps = 2_000;
    let mut g = Game::new(tolerant.clone(), &[(1, d(200)), (2, d(200))]);
    p1_wins_60(&mut g);
    let y = open_second_table(&mut g, "T2", tolerant);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let r = rejected(at(&mut g, &y, buy_in(3, "P1", d(207))), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("required_min_cents"), Some(d(208)));
    let r = rejected(at(&mut g, &y, buy_in(3, "P1", d(261))), "BUY_IN_ABOVE_MAXIMUM");
    assert_eq!(r.number("max_buy_in_cents"), Some(d(260)));
    at(&mut g, &y, buy_in(3, "P1", d(260))).unwrap();
}

#[test]
fn r_rebuy_1_a_departure_stamped_after_the_buy_in_time_still_binds() {
    // Two replicas, two clocks: the cash-out is stamped 5 minutes after the time the buy-in
    // was judged at. The log holds the departure, so it binds.
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    let y = open_second_table(&mut g, "T2", nl_1_2());
    let now = g.world.ctx.at_unix_ms;
    g.world.ctx.at_unix_ms = now + 5 * MINUTE;
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    g.world.ctx.at_unix_ms = now;
    let r = rejected(at(&mut g, &y, buy_in(3, "P1", d(40))), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("required_min_cents"), Some(d(160)));
    at(&mut g, &y, buy_in(3, "P1", d(160))).unwrap();
}

#[test]
fn r_rebuy_1_a_second_seat_in_the_same_game_is_refused_by_default() {
    // The two-table sequence: seated at X with a big stack, buy in short at Y, cash out of X.
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    let y = open_second_table(&mut g, "T2", nl_1_2());
    at(&mut g, &y, TableOp::SeatPlayer { seat: 4, player_id: pid("P1") }).unwrap();
    let r = rejected(at(&mut g, &y, buy_in(4, "P1", d(40))), "SECOND_SEAT_SAME_GAME");
    assert_eq!(r.number("held_seat"), Some(1));
    // A table of other limits is another game: a seat there is fine.
    let z = open_second_table(&mut g, "T3", {
        let mut c = TableConfig::no_limit_holdem(d(2), d(5));
        c.fee = FeePolicy::NoFee;
        c
    });
    at(&mut g, &z, buy_in(1, "P1", d(100))).unwrap();
    // Cash in play and a marker to the seat are the same door.
    rejected(at(&mut g, &y, TableOp::PutCashInPlay { seat: 4, player_id: pid("P1"), amount_cents: d(40), supervisor_id: None }), "SECOND_SEAT_SAME_GAME");
}

#[test]
fn r_rebuy_1_option_second_seat_allowed_leaving_one_binds_the_other() {
    // A room may allow two seats of one game; then leaving one binds the other for the window.
    let mut c = nl_1_2();
    c.rebuy.allow_second_seat = true;
    let mut g = Game::new(c.clone(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    let y = open_second_table(&mut g, "T2", c);
    at(&mut g, &y, buy_in(4, "P1", d(40))).unwrap();
    at(&mut g, &y, buy_in(5, "P5", d(100))).unwrap();
    // The cash-out needs table T2 as well: a caller loads the dependent streams.
    let cash_out = Command::Table(TableCommand { table_id: tid(TABLE), op: TableOp::CashOut { seat: 1, player_id: pid("P1") } });
    {
        let mut snap = Snapshot::new();
        let x = &g.world.tables[&tid(TABLE)];
        let p = &g.world.players[&pid("P1")];
        let (xid, p1) = (tid(TABLE), pid("P1"));
        snap = snap.with_table(&xid, x).with_player(&p1, p);
        assert_eq!(cash_out.dependent_streams(&snap), vec![StreamId::Table(y.clone())]);
    }
    let events = g.world.exec(cash_out).unwrap();
    assert!(events.iter().any(|(s, e)| s == &StreamId::Table(y.clone()) && e.event_type() == "SeatBound"));
    let hand = TableOp::StartHand { hand_no: 1, button_seat: 5, dealt_seats: vec![4, 5] };
    let r = rejected(at(&mut g, &y, hand.clone()), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("required_min_cents"), Some(d(160)));
    // Bound, the seat may be topped up to the amount left with, even above the $200 maximum.
    at(&mut g, &y, TableOp::TopUp { seat: 4, player_id: pid("P1"), amount_cents: d(120), source: FundsSource::Cash, supervisor_id: None }).unwrap();
    at(&mut g, &y, hand).unwrap();
}

/// The second betting pass: the second seat was allowed by the other table only; leaving the
/// first (which allows none) bound nothing, and the $40 seat was dealt in inside the wait.
#[test]
fn r_rebuy_1_a_second_seat_is_bound_whichever_table_allowed_it() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    let mut allows = nl_1_2();
    allows.rebuy.allow_second_seat = true;
    let y = open_second_table(&mut g, "T2", allows);
    at(&mut g, &y, buy_in(4, "P1", d(40))).unwrap();
    at(&mut g, &y, buy_in(5, "P5", d(100))).unwrap();
    let events = g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    assert!(events.iter().any(|(s, e)| s == &StreamId::Table(y.clone()) && e.event_type() == "SeatBound"), "{events:?}");
    let r = rejected(at(&mut g, &y, TableOp::StartHand { hand_no: 1, button_seat: 5, dealt_seats: vec![4, 5] }), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("required_min_cents"), Some(d(160)));
}

/// R-REBUY-1, one rule for every table of the game: the bound seat's table waits 120 minutes
/// at no tolerance, the table left 30 minutes at 20%; the seat stays bound as a return to it
/// would be (it had been freed after 30 minutes, for 80% of the amount left with).
#[test]
fn r_rebuy_1_a_bound_seat_waits_by_the_stricter_of_the_two_tables() {
    let mut left = nl_1_2();
    left.rebuy.allow_second_seat = true;
    left.rebuy.wait_window_ms = 30 * MINUTE;
    left.rebuy.tolerance_bps = 2_000;
    let mut g = Game::new(left, &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    let mut strict = nl_1_2();
    strict.rebuy.allow_second_seat = true;
    strict.rebuy.wait_window_ms = 120 * MINUTE;
    let y = open_second_table(&mut g, "T2", strict);
    at(&mut g, &y, buy_in(4, "P1", d(40))).unwrap();
    at(&mut g, &y, buy_in(5, "P5", d(100))).unwrap();
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    g.world.ctx.at_unix_ms += 31 * MINUTE;
    let hand = TableOp::StartHand { hand_no: 1, button_seat: 5, dealt_seats: vec![4, 5] };
    let r = rejected(at(&mut g, &y, hand.clone()), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("required_min_cents"), Some(d(160)), "the whole amount, no tolerance");
    g.world.ctx.at_unix_ms += 90 * MINUTE;
    at(&mut g, &y, hand).unwrap();
}

#[test]
fn r_rebuy_1_after_the_window_a_bound_seat_is_free_again() {
    let mut c = nl_1_2();
    c.rebuy.allow_second_seat = true;
    let mut g = Game::new(c.clone(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    let y = open_second_table(&mut g, "T2", c);
    at(&mut g, &y, buy_in(4, "P1", d(40))).unwrap();
    at(&mut g, &y, buy_in(5, "P5", d(100))).unwrap();
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    g.world.ctx.at_unix_ms += 60 * MINUTE;
    at(&mut g, &y, TableOp::StartHand { hand_no: 1, button_seat: 5, dealt_seats: vec![4, 5] }).unwrap();
}

#[test]
fn r_rebuy_1_a_house_move_is_no_way_back_into_a_game_below_the_amount_left() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    // P1 sits down in another game with $40, and the house would move them back.
    let other = open_second_table(&mut g, "T3", {
        let mut c = TableConfig::no_limit_holdem(d(2), d(5));
        c.fee = FeePolicy::NoFee;
        c
    });
    at(&mut g, &other, buy_in(1, "P1", d(100))).unwrap();
    let y = open_second_table(&mut g, "T2", nl_1_2());
    let back = TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: y, to_seat: 2 };
    let r = rejected(at(&mut g, &other, back.clone()), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("required_min_cents"), Some(d(160)));
    // After the window the move is an ordinary one.
    g.world.ctx.at_unix_ms += 60 * MINUTE;
    at(&mut g, &other, back).unwrap();
}

/// R-REBUY-1 (the stakes pass): moved by the house from a $1/$2 no-limit game into another
/// game with $200, cashed out there, the patron came back to the first game for $40 minutes
/// later. A move into another game with chips is a departure from the first game.
#[test]
fn r_rebuy_1_a_move_into_another_game_is_a_departure_from_the_first() {
    let mut g = Game::new(nl_1_2(), &[(1, d(200))]);
    let plo = open_second_table(&mut g, "T3", {
        let mut c = TableConfig::pot_limit_omaha(d(1), d(2));
        c.fee = FeePolicy::NoFee;
        c
    });
    g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: plo.clone(), to_seat: 1 }).unwrap();
    at(&mut g, &plo, TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let back = open_second_table(&mut g, "T2", nl_1_2());
    let r = rejected(at(&mut g, &back, buy_in(1, "P1", d(40))), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!((r.reason.rule, r.number("amount_left_with_cents")), ("R-REBUY-1", Some(d(200))));
    at(&mut g, &back, buy_in(1, "P1", d(200))).unwrap();
}

/// R-REBUY-1 (the stakes pass): the same departure bound or not by which table of the game the
/// patron picked: out of a 120-minute table with $200, back 40 minutes later at a 30-minute table
/// of the game for $40; out of a table with no tolerance, back at one with 20% for $160. A return
/// binds by the longer window and the smaller tolerance of the table left and the table returned
/// to.
#[test]
fn r_rebuy_1_a_departure_binds_by_the_stricter_wait_of_the_two_tables() {
    let table = |window_minutes: i64, tolerance_bps: i64| {
        let mut c = nl_1_2();
        c.rebuy.wait_window_ms = window_minutes * MINUTE;
        c.rebuy.tolerance_bps = tolerance_bps;
        c
    };
    let mut g = Game::new(table(120, 0), &[(1, d(200))]);
    let short = open_second_table(&mut g, "T2", table(30, 2_000));
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    g.world.ctx.at_unix_ms += 40 * MINUTE;
    let r = rejected(at(&mut g, &short, buy_in(1, "P1", d(40))), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!((r.number("amount_left_with_cents"), r.number("required_min_cents")), (Some(d(200)), Some(d(200))), "no tolerance at the table left");
    at(&mut g, &short, buy_in(1, "P1", d(200))).unwrap();
}

/// R-REBUY-1 (the night's pass): the pot-limit Omaha preset played hold'em, so a PLO table and a
/// pot-limit hold'em table were one game (a second seat refused, a departure binding the other).
#[test]
fn r_rebuy_1_pot_limit_omaha_and_pot_limit_holdem_are_different_games() {
    let plo = TableConfig::pot_limit_omaha(d(2), d(5));
    assert_eq!(plo.game, config::Game::Omaha);
    assert_ne!(plo.same_game().key(), TableConfig::pot_limit_holdem(d(2), d(5)).same_game().key());
}

/// R-REBUY-3 (the stakes pass): a short all-in winner who must re-buy to a full buy-in was moved
/// to another open-stakes table and topped up $5 there. The duty travels with the seat.
#[test]
fn r_rebuy_3_the_full_rebuy_owed_travels_with_a_moved_seat() {
    let mut c = open_stakes();
    c.blinds_cents = Vec::new();
    c.buy_in.min_cents = d(100);
    c.buy_in.max_cents = d(1000);
    let mut g = Game::new(c.clone(), &[(1, d(100)), (2, d(300)), (3, d(300))]);
    // Seat 1 loses most of the stack, then goes all in for $20 and wins $60 (below $100).
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, Action::Raise { to_cents: d(80) });
    g.ok(2, Action::Call);
    g.ok(3, Action::Fold);
    g.check_down(&[1, 2]);
    g.showdown(vec![vec![2], vec![1]]);
    g.end();
    g.start(2, 1, &[1, 2, 3]);
    g.ok(2, Action::Raise { to_cents: d(20) });
    g.ok(3, Action::Call);
    g.ok(1, Action::AllIn);
    g.check_down(&[2, 3]);
    g.showdown(vec![vec![1], vec![2, 3]]);
    g.end();
    assert!(g.state().seat(1).unwrap().needs_full_rebuy);
    let other = open_second_table(&mut g, "T2", c);
    g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: other.clone(), to_seat: 4 }).unwrap();
    let top_up = TableOp::TopUp { seat: 4, player_id: pid("P1"), amount_cents: d(5), source: FundsSource::Cash, supervisor_id: None };
    let r = rejected(at(&mut g, &other, top_up), "FULL_REBUY_REQUIRED");
    assert_eq!(r.reason.rule, "R-REBUY-3");
}

/// R-STAKE-3 / R-STAKE-6 (the second betting pass): a house move keeps a stack as it is within
/// one game; into another game it brings what a buy-in there may ($40 to $200 at $1/$2).
#[test]
fn r_stake_3_a_move_into_another_game_brings_what_its_buy_in_may() {
    let mut g = Game::new(nl_1_2(), &[]);
    let big = open_second_table(&mut g, "T3", {
        let mut c = TableConfig::no_limit_holdem(d(5), d(10));
        c.fee = FeePolicy::NoFee;
        c
    });
    at(&mut g, &big, buy_in(1, "P1", d(1_000))).unwrap();
    let into_small = TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: tid(TABLE), to_seat: 2 };
    let r = rejected(at(&mut g, &big, into_small), "BUY_IN_ABOVE_MAXIMUM");
    assert_eq!((r.reason.rule, r.number("buy_in_cents"), r.number("max_buy_in_cents")), ("R-STAKE-3", Some(d(1_000)), Some(d(200))));
    g.table(buy_in(3, "P3", d(40))).unwrap();
    let into_big = TableOp::MovePlayer { seat: 3, player_id: pid("P3"), to_table_id: big.clone(), to_seat: 4 };
    let r = rejected(g.table(into_big), "BUY_IN_BELOW_MINIMUM");
    assert_eq!(r.number("min_buy_in_cents"), Some(d(200)));
    // Within one game a move keeps the stack as it is, below the minimum too (R-STAKE-6).
    let same = open_second_table(&mut g, "T2", nl_1_2());
    g.table(TableOp::MovePlayer { seat: 3, player_id: pid("P3"), to_table_id: same, to_seat: 1 }).unwrap();
}

/// Found by `door_props` (a random sequence): a seat taken without chips at another table of
/// the game, moved by the house onto the game after the patron left it with $200, counted as a
/// return and met the departure, so a $136 buy-in went through inside the wait.
#[test]
fn r_rebuy_1_moving_a_seat_without_chips_meets_no_departure() {
    let mut g = Game::new(nl_1_2(), &[]);
    let t2 = open_second_table(&mut g, "T2", nl_1_2());
    at(&mut g, &t2, TableOp::SeatPlayer { seat: 3, player_id: pid("A") }).unwrap();
    g.table(buy_in(2, "A", d(200))).unwrap();
    g.table(TableOp::CashOut { seat: 2, player_id: pid("A") }).unwrap();
    // The house moves the chipless seat onto the first table, and A leaves it with nothing.
    at(&mut g, &t2, TableOp::MovePlayer { seat: 3, player_id: pid("A"), to_table_id: tid(TABLE), to_seat: 2 }).unwrap();
    g.table(TableOp::CashOut { seat: 2, player_id: pid("A") }).unwrap();
    let r = rejected(at(&mut g, &t2, buy_in(4, "A", d(136))), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!((r.number("amount_left_with_cents"), r.number("buy_in_cents")), (Some(d(200)), Some(d(136))));
    at(&mut g, &t2, buy_in(4, "A", d(200))).unwrap();
}

#[test]
fn r_stake_6_a_house_move_carries_the_held_seat() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    let y = open_second_table(&mut g, "T2", nl_1_2());
    rejected(g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P2"), to_table_id: y.clone(), to_seat: 3 }), "WRONG_PLAYER");
    let events = g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: y.clone(), to_seat: 3 }).unwrap();
    assert!(events.iter().any(|(_, e)| e.event_type() == "MovedTable"));
    let held = &g.world.players[&pid("P1")].seats;
    assert_eq!(held.len(), 1);
    assert_eq!((held[0].table_id.clone(), held[0].seat), (y.clone(), 3));
    // Back at the first table of the same game: a second seat (the held one is at T2 now).
    rejected(g.table(buy_in(5, "P1", d(100))), "SECOND_SEAT_SAME_GAME");
}

// ---------------------------------------------------------------- R-STAKE-5 cash in play

#[test]
fn r_stake_5_cash_in_play_plays_in_the_hand_and_is_converted_after_it() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::PutCashInPlay { seat: 1, player_id: pid("P1"), amount_cents: d(50), supervisor_id: None }).unwrap();
    assert_eq!(g.stack(1), d(150), "the cash plays as part of the stack");
    // It plays: the hand is dealt with the cash on the table, and the player may bet it.
    g.start(1, 1, &[1, 2]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::AllIn);
    g.ok(2, Action::Fold);
    g.end();
    assert_eq!(g.stack(1), d(152));
    // After the hand it must be converted before the next one.
    let r = rejected(g.table(TableOp::StartHand { hand_no: 2, button_seat: 2, dealt_seats: vec![1, 2] }), "CASH_IN_PLAY_NOT_CONVERTED");
    assert_eq!(r.number("cash_in_play_cents"), Some(d(50)));
    g.table(TableOp::ConvertCashInPlay { seat: 1 }).unwrap();
    assert_eq!(g.state().seat(1).unwrap().cash_in_play_cents, 0);
    g.table(TableOp::StartHand { hand_no: 2, button_seat: 2, dealt_seats: vec![1, 2] }).unwrap();
}

/// R-STAKE-5 with R-CHIP-1 and R-TIP-1: cash in play is cash until converted: not chips to
/// colour up or to tip (the cage pass: $100 of cash in play coloured into $25 chips, then
/// converted into chips again: the patron had chips twice for one payment).
#[test]
fn r_stake_5_cash_in_play_is_not_chips_to_colour_or_tip() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::PutCashInPlay { seat: 1, player_id: pid("P1"), amount_cents: d(50), supervisor_id: None }).unwrap();
    let five = |count| ChipCount { denomination_cents: d(5), count };
    let one = |count| ChipCount { denomination_cents: d(1), count };
    let r = rejected(g.table(TableOp::ColorChange { seat: 1, give: vec![one(105)], receive: vec![five(21)] }), "COLOR_CHANGE_EXCEEDS_STACK");
    assert_eq!((r.number("stack_cents"), r.number("cash_in_play_cents")), (Some(d(150)), Some(d(50))));
    g.table(TableOp::ColorChange { seat: 1, give: vec![one(100)], receive: vec![five(20)] }).unwrap();
    // A stack that is all cash in play has no chip to tip or colour until converted.
    g.table(TableOp::SeatPlayer { seat: 3, player_id: pid("P3") }).unwrap();
    g.table(TableOp::PutCashInPlay { seat: 3, player_id: pid("P3"), amount_cents: d(60), supervisor_id: None }).unwrap();
    rejected(g.table(TableOp::Tip { seat: 3, amount_cents: d(1) }), "TIP_EXCEEDS_STACK");
    rejected(g.table(TableOp::ColorChange { seat: 3, give: vec![one(5)], receive: vec![five(1)] }), "COLOR_CHANGE_EXCEEDS_STACK");
    g.table(TableOp::ConvertCashInPlay { seat: 3 }).unwrap();
    g.table(TableOp::Tip { seat: 3, amount_cents: d(1) }).unwrap();
}

#[test]
fn r_stake_5_cash_in_play_is_judged_as_a_buy_in_or_a_top_up() {
    let mut c = nl_1_2();
    c.buy_in.supervisor_threshold_cents = d(150);
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    // A top-up: at most up to the $200 maximum.
    let r = rejected(g.table(TableOp::PutCashInPlay { seat: 1, player_id: pid("P1"), amount_cents: d(101), supervisor_id: None }), "TOP_UP_ABOVE_MAXIMUM");
    assert_eq!(r.number("max_buy_in_cents"), Some(d(200)));
    // A first chips of a session: the buy-in minimum, and a supervisor for a large amount.
    g.table(TableOp::SeatPlayer { seat: 3, player_id: pid("P3") }).unwrap();
    let r = rejected(g.table(TableOp::PutCashInPlay { seat: 3, player_id: pid("P3"), amount_cents: d(39), supervisor_id: None }), "BUY_IN_BELOW_MINIMUM");
    assert_eq!(r.number("min_buy_in_cents"), Some(d(40)));
    rejected(g.table(TableOp::PutCashInPlay { seat: 3, player_id: pid("P3"), amount_cents: d(150), supervisor_id: None }), "SUPERVISOR_REQUIRED");
    // Named, as for a buy-in (the cage pass: cash in play had no field for one, so an amount at
    // the threshold could never be recorded).
    g.table(TableOp::SeatPlayer { seat: 4, player_id: pid("P4") }).unwrap();
    let events = g.table(TableOp::PutCashInPlay { seat: 4, player_id: pid("P4"), amount_cents: d(150), supervisor_id: Some("floor-1".into()) }).unwrap();
    assert!(
        events.iter().any(|(_, e)| matches!(e, Event::Table(TableEvent::CashPutInPlay { supervisor_id: Some(s), .. }) if s == "floor-1")),
        "the supervisor is recorded: {events:?}"
    );
    let events = g.table(TableOp::PutCashInPlay { seat: 3, player_id: pid("P3"), amount_cents: d(60), supervisor_id: None }).unwrap();
    assert!(events.iter().any(|(_, e)| e.event_type() == "JoinedTable"), "the first chips seat the patron");
    assert!(g.state().seat(3).unwrap().has_bought_in);
    rejected(g.table(buy_in(3, "P3", d(40))), "ALREADY_BOUGHT_IN");
}

#[test]
fn r_stake_5_cash_in_play_respects_the_rebuy_wait() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    g.table(TableOp::SeatPlayer { seat: 1, player_id: pid("P1") }).unwrap();
    let r = rejected(g.table(TableOp::PutCashInPlay { seat: 1, player_id: pid("P1"), amount_cents: d(40), supervisor_id: None }), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("required_min_cents"), Some(d(160)));
}

// ---------------------------------------------------------------- R-MARK-1 markers to a seat

fn marker_to_seat(g: &mut Game, marker_no: u64, player: &str, seat: Seat, dollars: i64) -> Result<Vec<(StreamId, Event)>, Rejection> {
    g.world.exec(Command::Cage(CageCommand {
        cage_id: cid(CAGE),
        op: CageOp::IssueMarker {
            player_id: pid(player),
            marker_no,
            chips: vec![ChipCount { denomination_cents: d(1), count: dollars }],
            approved_by: "credit-manager".into(),
            delivery: MarkerDelivery::Seat { table_id: tid(TABLE), seat },
        },
    }))
}

fn credit_line(g: &mut Game, player: &str, dollars: i64) {
    g.world
        .exec(Command::Player(PlayerCommand {
            player_id: pid(player),
            op: PlayerOp::SetCreditLine { line_cents: d(dollars), approved_by: "credit-manager".into() },
        }))
        .unwrap();
}

#[test]
fn r_mark_1_marker_chips_to_a_seat_respect_the_maximum_and_the_rebuy_wait() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    credit_line(&mut g, "P1", 5_000);
    // A top-up by marker: up to the maximum.
    let r = rejected(marker_to_seat(&mut g, 1, "P1", 1, 150), "TOP_UP_ABOVE_MAXIMUM");
    assert_eq!(r.number("max_buy_in_cents"), Some(d(200)));
    marker_to_seat(&mut g, 1, "P1", 1, 100).unwrap();
    assert_eq!(g.stack(1), d(200));
    // A buy-in by marker, returning within the wait window: at least the amount left with.
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    g.table(TableOp::SeatPlayer { seat: 1, player_id: pid("P1") }).unwrap();
    let r = rejected(marker_to_seat(&mut g, 2, "P1", 1, 40), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("required_min_cents"), Some(d(200)));
    let events = marker_to_seat(&mut g, 2, "P1", 1, 200).unwrap();
    assert!(events.iter().any(|(_, e)| e.event_type() == "JoinedTable"));
}

#[test]
fn r_stake_2_seeds_small_amounts_for_refreshments_within_the_tables_allowance() {
    // Kazakh seed (open stakes, "as with table stakes"): players may not take chips off the
    // table "(жаңартулар, ұялар және т.б. үшін шағын сомаларды қоспағанда)" (except small amounts
    // for refreshments, tips, etc.). A table allowing $5 a session at the seat.
    let mut c = nl_1_2();
    c.refreshment_allowance_cents = d(5);
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    let remove = |amount_cents, player: Option<&str>| TableOp::RemoveChips { seat: 1, amount_cents, player_id: player.map(pid) };
    g.table(remove(d(3), Some("P1"))).unwrap();
    assert_eq!((g.stack(1), g.world.players[&pid("P1")].pocket_cents), (d(97), d(3)));
    // $3 taken, $2 left of the allowance: $3 more is ratholing, and so is any amount unnamed.
    let r = rejected(g.table(remove(d(3), Some("P1"))), "RATHOLING_FORBIDDEN");
    assert_eq!(r.reason.rule, "R-STAKE-2");
    assert_eq!((r.number("refreshment_allowance_cents"), r.number("removed_cents")), (Some(d(5)), Some(d(3))));
    rejected(g.table(remove(d(1), None)), "RATHOLING_FORBIDDEN");
    let mut broke = nl_1_2();
    broke.refreshment_allowance_cents = d(5);
    let mut b = Game::new(broke, &[(1, d(100))]);
    b.table(TableOp::SeatPlayer { seat: 2, player_id: pid("P2") }).unwrap();
    let r = rejected(b.table(TableOp::RemoveChips { seat: 2, amount_cents: d(1), player_id: Some(pid("P2")) }), "REMOVAL_EXCEEDS_STACK");
    assert_eq!((r.reason.rule, r.number("stack_cents")), ("R-STAKE-2", Some(0)));
    rejected(g.table(remove(d(1), Some("P2"))), "WRONG_PLAYER");
    // Never during a hand, even folded; and a house move keeps the session's count.
    g.start(1, 1, &[1, 2]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Fold);
    rejected(g.table(remove(d(1), Some("P1"))), "HAND_IN_PROGRESS");
    g.end();
    let mut c = nl_1_2();
    c.refreshment_allowance_cents = d(5);
    let y = open_second_table(&mut g, "T2", c);
    g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: y.clone(), to_seat: 1 }).unwrap();
    let there = |amount_cents| TableOp::RemoveChips { seat: 1, amount_cents, player_id: Some(pid("P1")) };
    let r = rejected(at(&mut g, &y, there(d(3))), "RATHOLING_FORBIDDEN");
    assert_eq!(r.number("removed_cents"), Some(d(3)));
    at(&mut g, &y, there(d(2))).unwrap();
}

#[test]
fn r_stake_2_no_allowance_by_default_every_removal_is_ratholing() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100))]);
    let r = rejected(g.table(TableOp::RemoveChips { seat: 1, amount_cents: d(1), player_id: Some(pid("P1")) }), "RATHOLING_FORBIDDEN");
    assert_eq!(r.number("refreshment_allowance_cents"), Some(0));
    assert_eq!(g.stack(1), d(100));
}

// ---------------------------------------------------------------- R-MARK-3 IOUs

fn open_stakes() -> TableConfig {
    let mut c = nl_1_2();
    c.stakes = StakesMode::OpenStakes { iou_auto_accept_below_cents: d(1_000), ious_allowed: true };
    c
}

#[test]
fn r_mark_3_a_cash_out_pays_the_ious_from_the_stack_first() {
    let mut g = Game::new(open_stakes(), &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::WriteIou { seat: 1, amount_cents: d(30), lender: None, accepted_by: vec![], to_raise: false }).unwrap();
    assert_eq!(g.stack(1), d(130));
    let events = g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let Event::Table(TableEvent::CashedOut { amount_cents, iou_settled_cents, .. }) = &events[0].1 else { panic!("{events:?}") };
    assert_eq!((*amount_cents, *iou_settled_cents), (d(100), d(30)));
    assert_eq!(g.world.balance(&Account::Iou { player_id: pid("P1") }), 0, "the IOU is paid");
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, d(100));
}

#[test]
fn r_mark_3_ious_in_play_may_not_leave_the_table() {
    let mut g = Game::new(open_stakes(), &[(1, d(100)), (2, d(200))]);
    g.table(TableOp::WriteIou { seat: 1, amount_cents: d(30), lender: None, accepted_by: vec![], to_raise: false }).unwrap();
    // Lose the stack to seat 2: the IOU is owed, the stack cannot pay it.
    g.start(1, 1, &[1, 2]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::AllIn);
    g.ok(2, Action::Call);
    g.check_down(&[]);
    g.showdown(vec![vec![2]]);
    g.end();
    assert_eq!(g.stack(1), 0);
    let r = rejected(g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }), "IOU_OUTSTANDING");
    assert_eq!(r.number("iou_cents"), Some(d(30)));
    let y = open_second_table(&mut g, "T2", open_stakes());
    rejected(g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: y, to_seat: 1 }), "IOU_OUTSTANDING");
    // Paid with pocket chips bought at the cage, the player may leave.
    g.world
        .exec(Command::Cage(CageCommand {
            cage_id: cid(CAGE),
            op: CageOp::SellChips { player_id: pid("P1"), chips: vec![ChipCount { denomination_cents: d(5), count: 6 }], supervisor_id: None },
        }))
        .unwrap();
    let r = rejected(g.table(TableOp::SettleIou { seat: 1, player_id: pid("P1"), amount_cents: d(31), from_pocket: true, lender: None }), "IOU_OUTSTANDING");
    assert_eq!(r.number("iou_cents"), Some(d(30)));
    g.table(TableOp::SettleIou { seat: 1, player_id: pid("P1"), amount_cents: d(30), from_pocket: true, lender: None }).unwrap();
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, 0);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
}

/// Seat 1 writes `iou` of paper and loses everything to seat 2 (all in, called).
fn paper_lost_to_seat_2(g: &mut Game, iou: Cents) {
    g.table(TableOp::WriteIou { seat: 1, amount_cents: iou, lender: None, accepted_by: vec![], to_raise: false }).unwrap();
    g.start(1, 1, &[1, 2]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::AllIn);
    g.ok(2, Action::Call);
    g.check_down(&[]);
    g.showdown(vec![vec![2]]);
    g.end();
}

#[test]
fn r_mark_3_the_winner_of_an_iou_does_not_take_the_paper_to_the_cage() {
    // P1 brings $100 of chips and writes $30 of paper; P2's $200 wins it all: $330 on seat 2,
    // of which $300 are chips the cage sold and $30 are P1's unpaid IOU.
    let mut c = open_stakes();
    c.refreshment_allowance_cents = d(5);
    let mut g = Game::new(c, &[(1, d(100)), (2, d(200))]);
    // The writer takes nothing off the table for refreshments while the IOU is unpaid.
    g.table(TableOp::WriteIou { seat: 1, amount_cents: d(10), lender: None, accepted_by: vec![], to_raise: false }).unwrap();
    let r = rejected(g.table(TableOp::RemoveChips { seat: 1, amount_cents: d(5), player_id: Some(pid("P1")) }), "IOU_OUTSTANDING");
    assert_eq!(r.number("iou_cents"), Some(d(10)));
    g.table(TableOp::SettleIou { seat: 1, player_id: pid("P1"), amount_cents: d(10), from_pocket: false, lender: None }).unwrap();
    paper_lost_to_seat_2(&mut g, d(30));
    assert_eq!((g.stack(1), g.stack(2)), (0, d(330)));
    let r = rejected(g.table(TableOp::CashOut { seat: 2, player_id: pid("P2") }), "IOU_IN_PLAY");
    assert_eq!(r.reason.rule, "R-MARK-3");
    assert_eq!(r.number("leaving_cents"), Some(d(330)));
    assert_eq!(r.number("iou_in_play_cents"), Some(d(30)));
    assert_eq!(r.number("writer_seat"), Some(1));
    // Nor a tip that eats into the paper, nor a house move of the stack.
    let y = open_second_table(&mut g, "T2", open_stakes());
    rejected(g.table(TableOp::MovePlayer { seat: 2, player_id: pid("P2"), to_table_id: y, to_seat: 1 }), "IOU_IN_PLAY");
    assert_eq!(g.world.players[&pid("P2")].pocket_cents, 0, "nothing moved");
    // P1 pays the IOU with chips bought at the cage: now every chip on the table was sold.
    g.world
        .exec(Command::Cage(CageCommand {
            cage_id: cid(CAGE),
            op: CageOp::SellChips { player_id: pid("P1"), chips: vec![ChipCount { denomination_cents: d(5), count: 6 }], supervisor_id: None },
        }))
        .unwrap();
    g.table(TableOp::SettleIou { seat: 1, player_id: pid("P1"), amount_cents: d(30), from_pocket: true, lender: None }).unwrap();
    g.table(TableOp::CashOut { seat: 2, player_id: pid("P2") }).unwrap();
    assert_eq!(g.world.players[&pid("P2")].pocket_cents, d(330));
    assert_eq!(g.world.balance(&Account::Iou { player_id: pid("P1") }), 0);
}

#[test]
fn r_mark_3_chips_beyond_the_paper_may_leave_while_it_is_unpaid() {
    // A third player's $150 stays: the table keeps $150 against $30 of paper, so the winner
    // leaves with all $330 (the paper is covered by chips that stay in play at the table).
    let mut g = Game::new(open_stakes(), &[(1, d(100)), (2, d(200)), (3, d(150))]);
    g.table(TableOp::SitOut { seat: 3 }).unwrap();
    paper_lost_to_seat_2(&mut g, d(30));
    g.table(TableOp::Tip { seat: 2, amount_cents: d(1) }).unwrap();
    g.table(TableOp::CashOut { seat: 2, player_id: pid("P2") }).unwrap();
    // The last $150 cover the paper: seat 3 may tip down to it, not below.
    let r = rejected(g.table(TableOp::CashOut { seat: 3, player_id: pid("P3") }), "IOU_IN_PLAY");
    assert_eq!((r.number("table_chips_cents"), r.number("iou_in_play_cents")), (Some(d(150)), Some(d(30))));
}

#[test]
fn r_mark_3_a_correction_never_leaves_the_paper_uncovered() {
    // The winner of P1's $30 of paper leaves while P3's $150 cover it; reversing P3's buy-in
    // would take those chips (the cash goes back) and leave paper alone at the table.
    let mut g = Game::new(open_stakes(), &[(1, d(100)), (2, d(200)), (3, d(150))]);
    g.table(TableOp::SitOut { seat: 3 }).unwrap();
    paper_lost_to_seat_2(&mut g, d(30));
    g.table(TableOp::CashOut { seat: 2, player_id: pid("P2") }).unwrap();
    let index = g.world.log.iter().position(|(_, e)| matches!(e, Event::Table(TableEvent::BoughtIn { seat: 3, .. }))).unwrap();
    let r = rejected(g.table(undo(&g, index, "BoughtIn", "keyed twice")), "IOU_IN_PLAY");
    assert_eq!((r.number("leaving_cents"), r.number("iou_in_play_cents")), (Some(d(150)), Some(d(30))));
    assert_eq!(g.stack(3), d(150));
}

#[test]
fn r_mark_3_between_hands_an_iou_is_beside_chips_bought_and_accepted_by_the_game() {
    let mut c = open_stakes();
    c.stakes = StakesMode::OpenStakes { iou_auto_accept_below_cents: d(50), ious_allowed: true };
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    // P1 leaves with $100 and sits again without buying in: no IOU as the session's chips.
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    g.table(TableOp::SeatPlayer { seat: 1, player_id: pid("P1") }).unwrap();
    let iou = |seat, amount_cents, accepted_by: Vec<Seat>| TableOp::WriteIou { seat, amount_cents, lender: None, accepted_by, to_raise: false };
    let r = rejected(g.table(iou(1, d(40), vec![])), "NOT_BOUGHT_IN");
    assert_eq!(r.number("seat"), Some(1));
    // At or above the amount everyone accepts, every other player in the game accepts it.
    let r = rejected(g.table(iou(2, d(500), vec![3])), "IOU_NOT_ACCEPTED");
    assert_eq!(r.number("first_missing_seat"), Some(1));
    g.table(iou(2, d(500), vec![1, 3])).unwrap();
    g.table(iou(3, d(40), vec![])).unwrap();
}

#[test]
fn r_mark_3_a_loan_is_paid_back_to_a_lender_not_live_in_a_hand() {
    let mut g = Game::new(open_stakes(), &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.table(TableOp::WriteIou { seat: 1, amount_cents: d(40), lender: Some(pid("P3")), accepted_by: vec![], to_raise: false }).unwrap();
    g.start(1, 1, &[1, 2, 3]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Fold);
    // The borrower folded; the lender is still in the hand: nothing reaches that stack now.
    let pay = TableOp::SettleIou { seat: 1, player_id: pid("P1"), amount_cents: d(40), from_pocket: false, lender: Some(pid("P3")) };
    rejected(g.table(pay), "HAND_IN_PROGRESS");
    assert_eq!(g.stack(3), d(58));
}

#[test]
fn r_mark_3_a_loan_moves_the_lenders_own_chips_and_is_paid_back_to_the_lender() {
    let mut g = Game::new(open_stakes(), &[(1, d(100)), (2, d(200)), (3, d(150))]);
    // The lender sits at the table; the borrower's IOU is to them, not paper.
    g.table(TableOp::WriteIou { seat: 1, amount_cents: d(40), lender: Some(pid("P3")), accepted_by: vec![], to_raise: false }).unwrap();
    assert_eq!((g.stack(1), g.stack(3)), (d(140), d(110)), "the lender's chips moved");
    assert_eq!(g.world.balance(&Account::Iou { player_id: pid("P1") }), 0, "no paper: the chips are the lender's");
    // A loan is paid back, never corrected (nor is paper: its debt would stay on the seat).
    let (id, version, postings) = last_event_id_and_postings(&g, "IouWritten");
    let undo = TableOp::Correct {
        reverses_event_id: id,
        reverses_stream_version: version,
        reverses_event_types: vec!["IouWritten".into()],
        reverses_gaming_day: "2026-03-01".into(),
        original_postings: postings,
        approved_by: "floor-2".into(),
        reason: "keyed twice".into(),
    };
    let r = rejected(g.table(undo), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-MARK-3", "the refusal names the rule a correction would walk around");
    // Not from someone away from the table, not from oneself, not beyond the lender's stack.
    let r = rejected(g.table(TableOp::WriteIou { seat: 1, amount_cents: d(5), lender: Some(pid("P9")), accepted_by: vec![], to_raise: false }), "IOU_LENDER_NOT_SEATED");
    assert_eq!(r.reason.rule, "R-MARK-3");
    rejected(g.table(TableOp::WriteIou { seat: 1, amount_cents: d(5), lender: Some(pid("P1")), accepted_by: vec![], to_raise: false }), "IOU_LENDER_NOT_SEATED");
    let r = rejected(g.table(TableOp::WriteIou { seat: 1, amount_cents: d(111), lender: Some(pid("P3")), accepted_by: vec![], to_raise: false }), "BET_EXCEEDS_STACK");
    assert_eq!(r.number("lender_stack_cents"), Some(d(110)));
    // The borrower leaves only after paying the lender back (more than owed is refused).
    let r = rejected(g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }), "IOU_OUTSTANDING");
    assert_eq!((r.number("loan_cents"), r.number("lender_seat")), (Some(d(40)), Some(3)));
    let pay = |amount_cents| TableOp::SettleIou { seat: 1, player_id: pid("P1"), amount_cents, from_pocket: false, lender: Some(pid("P3")) };
    let r = rejected(g.table(pay(d(41))), "IOU_OUTSTANDING");
    assert_eq!(r.number("loan_cents"), Some(d(40)));
    g.table(pay(d(25))).unwrap();
    g.table(pay(d(15))).unwrap();
    assert_eq!((g.stack(1), g.stack(3)), (d(100), d(150)));
    assert!(g.world.tables[&tid(TABLE)].seat(1).unwrap().loans.is_empty());
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, d(100));
}

// ---------------------------------------------------------------- R-AUDIT-1 corrections

/// The event's id (the test world has no store: its position in the log stands for it), its
/// version on the table stream, and its postings.
fn last_event_id_and_postings(g: &Game, event_type: &str) -> (String, u64, Vec<Posting>) {
    let index = g.world.log.iter().rposition(|(_, x)| x.event_type() == event_type).expect("event in the log");
    (format!("event-{index}"), stream_version_at(&g.world.log, index), g.world.log[index].1.postings())
}

/// The correction of the event at `index` of the log (a `event_type`), approved by a floor.
fn undo(g: &Game, index: usize, event_type: &str, reason: &str) -> TableOp {
    TableOp::Correct {
        reverses_event_id: format!("event-{index}"),
        reverses_stream_version: stream_version_at(&g.world.log, index),
        reverses_event_types: vec![event_type.into()],
        reverses_gaming_day: g.world.ctx.gaming_day.clone(),
        original_postings: g.world.log[index].1.postings(),
        approved_by: "floor-2".into(),
        reason: reason.into(),
    }
}

fn correct(reverses: &str, version: u64, postings: Vec<Posting>) -> TableOp {
    TableOp::Correct {
        reverses_event_id: reverses.into(),
        reverses_stream_version: version,
        reverses_event_types: Vec::new(),
        reverses_gaming_day: "2026-03-01".into(),
        original_postings: postings,
        approved_by: "floor-2".into(),
        reason: "keyed twice".into(),
    }
}

/// R-STAKE-1 with R-AUDIT-1: a hand's settlement is not corrected once a later hand was dealt
/// to a seat it moves (the cage pass: hand 8 taken back after hand 9, dealt with its chips,
/// had put a player all in for less than the stake the ledger then gave him).
#[test]
fn r_stake_1_a_hand_is_not_corrected_after_a_later_hand_was_dealt_to_its_seats() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    g.start(1, 1, &[1, 2]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Fold);
    g.end();
    let started = g.world.log.iter().rposition(|(_, e)| e.event_type() == "HandStarted").expect("started");
    // The hand taken back as a whole (a misdeal): its net effect on the seats.
    let misdeal = |g: &Game| TableOp::Correct {
        reverses_event_id: format!("event-{started}"),
        reverses_stream_version: stream_version_at(&g.world.log, started),
        reverses_event_types: ["HandStarted", "Posted", "Acted", "HandSettled"].map(String::from).to_vec(),
        reverses_gaming_day: g.world.ctx.gaming_day.clone(),
        original_postings: vec![
            Posting::new(Account::Seat { table_id: tid(TABLE), seat: 1 }, -d(1)),
            Posting::new(Account::Seat { table_id: tid(TABLE), seat: 2 }, d(1)),
        ],
        approved_by: "floor-2".into(),
        reason: "misdeal".into(),
    };
    // Hand 2 is dealt with those stacks, and played out.
    g.start(2, 2, &[1, 2]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Fold);
    g.end();
    let r = rejected(g.table(misdeal(&g)), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-STAKE-1");
    assert!(r.number("dealt_at_stream_version").is_some());
}

/// R-REBUY-1, R-AUDIT-1 (the second betting pass): P1 left with $200 and came back to the
/// game for $200; that buy-in, corrected away with a floor's approval, left a seat from which a
/// $40 top-up was dealt in inside the wait. The correction binds the seat again: dealt in only
/// with the $200 left with, until the wait ends.
#[test]
fn r_rebuy_1_a_return_corrected_away_leaves_the_seat_bound() {
    let mut g = Game::new(nl_1_2(), &[(1, d(200)), (2, d(100))]);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let y = open_second_table(&mut g, "T2", nl_1_2());
    at(&mut g, &y, buy_in(3, "P1", d(200))).unwrap();
    at(&mut g, &y, buy_in(4, "P4", d(100))).unwrap();
    // P1's return: the first buy-in at T2.
    let index = g.world.log.iter().position(|(s, e)| s == &StreamId::Table(y.clone()) && e.event_type() == "BoughtIn").unwrap();
    let correction = undo(&g, index, "BoughtIn", "keyed at the wrong seat");
    let events = at(&mut g, &y, correction).unwrap();
    assert!(events.iter().any(|(_, e)| matches!(e, Event::Table(TableEvent::SeatBound { seat: 3, amount_cents, .. }) if *amount_cents == d(200))), "{events:?}");
    // The seat, left without chips, buys in again (R-STAKE-3), bound by the departure.
    rejected(at(&mut g, &y, TableOp::TopUp { seat: 3, player_id: pid("P1"), amount_cents: d(40), source: FundsSource::Cash, supervisor_id: None }), "NOT_BOUGHT_IN");
    let r = rejected(at(&mut g, &y, buy_in(3, "P1", d(40))), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("amount_left_with_cents"), Some(d(200)));
    // Bought in for what was left with, the seat plays.
    at(&mut g, &y, buy_in(3, "P1", d(200))).unwrap();
    at(&mut g, &y, TableOp::StartHand { hand_no: 1, button_seat: 4, dealt_seats: vec![3, 4] }).unwrap();
}

/// The stakes pass: between the return and its correction, 32 seats taken and left empty at a
/// table of another game pushed the met departure out of the last 32 the correction looked
/// at, and a $40 buy-in followed inside the wait. A met departure is kept until it expires.
#[test]
fn r_rebuy_1_seats_left_empty_do_not_push_out_the_departure_a_corrected_return_met() {
    let mut g = Game::new(nl_1_2(), &[(1, d(200)), (2, d(100))]);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let y = open_second_table(&mut g, "T2", nl_1_2());
    at(&mut g, &y, buy_in(3, "P1", d(200))).unwrap();
    let index = g.world.log.iter().position(|(s, e)| s == &StreamId::Table(y.clone()) && e.event_type() == "BoughtIn").unwrap();
    let other_game = open_second_table(&mut g, "T3", TableConfig::pot_limit_omaha(d(1), d(2)));
    for _ in 0..40 {
        at(&mut g, &other_game, TableOp::SeatPlayer { seat: 5, player_id: pid("P1") }).unwrap();
        at(&mut g, &other_game, TableOp::CashOut { seat: 5, player_id: pid("P1") }).unwrap();
    }
    let correction = undo(&g, index, "BoughtIn", "keyed at the wrong seat");
    at(&mut g, &y, correction).unwrap();
    let r = rejected(at(&mut g, &y, buy_in(3, "P1", d(40))), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("amount_left_with_cents"), Some(d(200)));
}

/// The fixes' pass: out of T1 with $200, back at T2 for $200 (that return meets it, and stands),
/// out of T2 with $40, back at T3 for $40; the T3 buy-in corrected bound the seat to the $200
/// the standing return had met. It binds what the corrected return met: $40.
#[test]
fn r_rebuy_1_a_corrected_return_binds_what_it_met_not_what_another_return_met() {
    let mut g = Game::new(nl_1_2(), &[(1, d(200)), (2, d(100))]);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let mut generous = nl_1_2();
    generous.tip_cap_cents = d(100);
    let b = open_second_table(&mut g, "T2", generous);
    at(&mut g, &b, buy_in(3, "P1", d(200))).unwrap();
    for _ in 0..2 {
        at(&mut g, &b, TableOp::Tip { seat: 3, amount_cents: d(80) }).unwrap();
    }
    at(&mut g, &b, TableOp::CashOut { seat: 3, player_id: pid("P1") }).unwrap();
    let third = open_second_table(&mut g, "T3", nl_1_2());
    at(&mut g, &third, buy_in(4, "P1", d(40))).unwrap();
    let index = g.world.log.iter().rposition(|(s, e)| s == &StreamId::Table(third.clone()) && e.event_type() == "BoughtIn").unwrap();
    let correction = undo(&g, index, "BoughtIn", "keyed at the wrong seat");
    let events = at(&mut g, &third, correction).unwrap();
    let bound = events.iter().find_map(|(_, e)| match e {
        Event::Table(TableEvent::SeatBound { amount_cents, left_table_id, .. }) => Some((*amount_cents, left_table_id.clone())),
        _ => None,
    });
    assert_eq!(bound, Some((d(40), b.clone())), "the T2 departure the T3 return met, not T1's: {events:?}");
}

/// P1 out of T1 with $200 and back at T2 for $200 (that return meets the departure), beside T3,
/// a table of the game that allows a second seat: the game, T2, the T2 buy-in's index in the
/// log, and T3.
fn back_at_t2_beside_a_second_seat_table() -> (Game, TableId, usize, TableId) {
    let mut g = Game::new(nl_1_2(), &[(1, d(200)), (2, d(100))]);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let b = open_second_table(&mut g, "T2", nl_1_2());
    at(&mut g, &b, buy_in(3, "P1", d(200))).unwrap();
    let index = g.world.log.iter().rposition(|(s, e)| s == &StreamId::Table(b.clone()) && e.event_type() == "BoughtIn").unwrap();
    let mut second = nl_1_2();
    second.rebuy.allow_second_seat = true;
    let third = open_second_table(&mut g, "T3", second);
    (g, b, index, third)
}

/// The corrections pass: out of T1 with $200, back at T2 for $200 (that return meets it), then a
/// second seat at T3 (a table that allows one), out with $40 and back there for $40 (meeting
/// that departure, the patron's latest return). The T2 buy-in corrected away had bound the
/// $40 departure, and the patron came back for $40; it binds what the T2 return met: $200. A
/// return that met nothing, corrected, binds nothing (a return still standing keeps its own).
#[test]
fn r_rebuy_1_a_corrected_return_binds_what_that_seat_met_not_the_latest_return() {
    let (mut g, b, index, d3) = back_at_t2_beside_a_second_seat_table();
    at(&mut g, &d3, buy_in(4, "P1", d(40))).unwrap();
    at(&mut g, &d3, TableOp::CashOut { seat: 4, player_id: pid("P1") }).unwrap();
    at(&mut g, &d3, buy_in(4, "P1", d(40))).unwrap();
    let correction = undo(&g, index, "BoughtIn", "keyed at the wrong seat");
    let events = at(&mut g, &b, correction).unwrap();
    let bound = events.iter().find_map(|(_, e)| match e {
        Event::Table(TableEvent::SeatBound { amount_cents, left_table_id, .. }) => Some((*amount_cents, left_table_id.clone())),
        _ => None,
    });
    assert_eq!(bound, Some((d(200), tid(TABLE))), "the T1 departure the T2 return met: {events:?}");
    // The T3 return met the $40 departure; the T2 one, gone, met nothing now standing: the T3
    // buy-in corrected binds the $40 it met, and a return that met nothing binds nothing.
    let index = g.world.log.iter().rposition(|(s, e)| s == &StreamId::Table(d3.clone()) && e.event_type() == "BoughtIn").unwrap();
    let correction = undo(&g, index, "BoughtIn", "keyed at the wrong seat");
    let events = at(&mut g, &d3, correction).unwrap();
    let bound = events.iter().find_map(|(_, e)| match e {
        Event::Table(TableEvent::SeatBound { amount_cents, .. }) => Some(*amount_cents),
        _ => None,
    });
    assert_eq!(bound, Some(d(40)), "{events:?}");
}

/// The fixes' pass: out of T1 with $200, back at T2 for $200, then a second seat at T3 (a table
/// that allows one) for $40, nothing being unmet then. The T2 buy-in corrected away bound T2's
/// seat only, and T3's $40 was dealt in: the patron's other seats of the game are bound too.
#[test]
fn r_rebuy_1_a_corrected_return_binds_the_patrons_other_seats_of_the_game() {
    let (mut g, b, index, t3) = back_at_t2_beside_a_second_seat_table();
    at(&mut g, &t3, buy_in(4, "P1", d(40))).unwrap();
    at(&mut g, &t3, buy_in(5, "P5", d(100))).unwrap();
    let correction = undo(&g, index, "BoughtIn", "keyed at the wrong seat");
    let events = at(&mut g, &b, correction).unwrap();
    assert!(
        events.iter().any(|(s, e)| s == &StreamId::Table(t3.clone()) && matches!(e, Event::Table(TableEvent::SeatBound { seat: 4, amount_cents, .. }) if *amount_cents == d(200))),
        "{events:?}"
    );
    // T3's seat is dealt in only with the $200 left with.
    assert!(at(&mut g, &t3, TableOp::StartHand { hand_no: 1, button_seat: 5, dealt_seats: vec![4, 5] }).is_err());
}

/// The third betting pass: the binding a corrected return leaves went away with the seat.
/// Moved by the house to another table of the game, the seat keeps it; cashed out, the patron's
/// next buy-in in the game is bound by the departure again.
#[test]
fn r_rebuy_1_a_corrected_return_binds_wherever_the_seat_or_the_patron_goes() {
    for cash_out in [false, true] {
        let mut g = Game::new(nl_1_2(), &[(1, d(200)), (2, d(100))]);
        g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
        let y = open_second_table(&mut g, "T2", nl_1_2());
        at(&mut g, &y, buy_in(3, "P1", d(200))).unwrap();
        let index = g.world.log.iter().position(|(s, e)| s == &StreamId::Table(y.clone()) && e.event_type() == "BoughtIn").unwrap();
        let correction = undo(&g, index, "BoughtIn", "keyed at the wrong seat");
        let events = at(&mut g, &y, correction).unwrap();
        assert!(events.iter().any(|(_, e)| e.event_type() == "ReturnCorrected"), "{events:?}");
        if cash_out {
            at(&mut g, &y, TableOp::CashOut { seat: 3, player_id: pid("P1") }).unwrap();
            let r = rejected(g.table(buy_in(4, "P1", d(60))), "REBUY_BELOW_AMOUNT_LEFT");
            assert_eq!(r.number("amount_left_with_cents"), Some(d(200)));
        } else {
            at(&mut g, &y, TableOp::MovePlayer { seat: 3, player_id: pid("P1"), to_table_id: tid(TABLE), to_seat: 4 }).unwrap();
            // Moved without chips, the seat buys in at its new table, bound by the departure.
            let r = rejected(g.table(buy_in(4, "P1", d(60))), "REBUY_BELOW_AMOUNT_LEFT");
            assert_eq!(r.number("amount_left_with_cents"), Some(d(200)));
        }
    }
}

/// A seat taken without chips and moved by the house arrives as one: its first chips are a
/// buy-in (judged by the minimum and the re-buy wait), not a top-up.
#[test]
fn r_rebuy_1_a_seat_moved_without_chips_buys_in_at_its_new_table() {
    let mut g = Game::new(nl_1_2(), &[(1, d(200))]);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let y = open_second_table(&mut g, "T2", nl_1_2());
    at(&mut g, &y, TableOp::SeatPlayer { seat: 3, player_id: pid("P1") }).unwrap();
    at(&mut g, &y, TableOp::MovePlayer { seat: 3, player_id: pid("P1"), to_table_id: tid(TABLE), to_seat: 1 }).unwrap();
    rejected(g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(60), source: FundsSource::Cash, supervisor_id: None }), "NOT_BOUGHT_IN");
    rejected(g.table(buy_in(1, "P1", d(60))), "REBUY_BELOW_AMOUNT_LEFT");
}

#[test]
fn r_audit_1_an_event_is_corrected_once() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100))]);
    g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(50), source: FundsSource::Cash, supervisor_id: None }).unwrap();
    let (id, version, postings) = last_event_id_and_postings(&g, "ToppedUp");
    g.table(correct(&id, version, postings.clone())).unwrap();
    assert_eq!(g.stack(1), d(100));
    rejected(g.table(correct(&id, version, postings)), "ALREADY_CORRECTED");
}

#[test]
fn r_audit_1_a_table_correction_of_pocket_chips_follows_the_pocket() {
    let mut g = Game::new(nl_1_2(), &[]);
    g.world
        .exec(Command::Cage(CageCommand {
            cage_id: cid(CAGE),
            op: CageOp::SellChips { player_id: pid("P1"), chips: vec![ChipCount { denomination_cents: d(100), count: 1 }], supervisor_id: None },
        }))
        .unwrap();
    g.table(TableOp::BuyIn { seat: 1, player_id: pid("P1"), amount_cents: d(100), source: FundsSource::PocketChips, supervisor_id: None, short_buy: false })
        .unwrap();
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, 0);
    let (id, version, postings) = last_event_id_and_postings(&g, "BoughtIn");
    let events = g.table(correct(&id, version, postings)).unwrap();
    assert!(events.iter().any(|(s, e)| s == &StreamId::Player(pid("P1")) && e.event_type() == "PocketCorrected"));
    // The world's invariant check compares every pocket with its stream state.
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, d(100));
    assert_eq!(g.stack(1), 0);
}

#[test]
fn r_unit_4_a_settled_hand_is_not_corrected_event_by_event() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    let (id, version, postings) = last_event_id_and_postings(&g, "HandSettled");
    let r = rejected(g.table(correct(&id, version, postings)), "CORRECTION_LEAVES_POT");
    assert_eq!(r.number("pot_cents"), Some(d(120)));
    // The hand as a whole (every posting of it, netted) leaves the pot empty.
    let first = g.world.log.iter().position(|(_, e)| e.event_type() == "HandStarted").unwrap();
    let mut net: std::collections::BTreeMap<Account, Cents> = Default::default();
    for (_, e) in &g.world.log[first..] {
        for p in e.postings() {
            *net.entry(p.account.clone()).or_default() += p.amount_cents;
        }
    }
    let whole: Vec<Posting> = net.into_iter().filter(|(_, v)| *v != 0).map(|(a, v)| Posting::new(a, v)).collect();
    g.table(correct("hand-1", stream_version_at(&g.world.log, first), whole)).unwrap();
    assert_eq!((g.stack(1), g.stack(2)), (d(100), d(100)));
}

/// R-AUDIT-1 with R-STAKE-4: a correction moves the chips of the session the event was part of.
/// The winner of a hand left and another patron sat down in the seat: correcting the hand (or
/// the first patron's buy-in) would take the newcomer's chips, and is refused with the numbers.
#[test]
fn r_audit_1_a_correction_never_moves_the_chips_of_a_later_session_at_the_seat() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    let first = g.world.log.iter().position(|(_, e)| e.event_type() == "HandStarted").unwrap();
    let hand_version = stream_version_at(&g.world.log, first);
    let mut net: std::collections::BTreeMap<Account, Cents> = Default::default();
    for (_, e) in &g.world.log[first..] {
        for p in e.postings() {
            *net.entry(p.account.clone()).or_default() += p.amount_cents;
        }
    }
    let whole: Vec<Posting> = net.into_iter().filter(|(_, v)| *v != 0).map(|(a, v)| Posting::new(a, v)).collect();
    let p1_bought_in = g.world.log.iter().position(|(_, e)| matches!(e, Event::Table(TableEvent::BoughtIn { seat: 1, .. }))).unwrap();
    let (bought_in, bought_in_version, bought_in_postings) =
        (format!("event-{p1_bought_in}"), stream_version_at(&g.world.log, p1_bought_in), g.world.log[p1_bought_in].1.postings());
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    g.sit(1, "P99", d(200)).unwrap();
    let r = rejected(g.table(correct("hand-1", hand_version, whole.clone())), "CORRECTION_INVALID");
    assert_eq!(r.number("seat"), Some(1));
    assert_eq!(r.number("corrected_stream_version"), Some(hand_version as Cents));
    assert!(r.number("seated_at_stream_version").unwrap() > hand_version as Cents);
    let r = rejected(g.table(correct(&bought_in, bought_in_version, bought_in_postings)), "CORRECTION_INVALID");
    assert_eq!(r.number("seat"), Some(1));
    assert_eq!(g.stack(1), d(200), "the newcomer's stack is untouched");
    // Back in the same session the correction applies: the seat's chips are that session's.
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    g.table(correct("hand-1", hand_version, whole)).unwrap();
    assert_eq!((g.stack(1), g.stack(2)), (d(100), d(100)));
}

#[test]
fn r_audit_1_cage_postings_are_voided_at_the_cage_not_corrected_at_the_table() {
    let mut g = Game::new(nl_1_2(), &[]);
    let (id, version, postings) = last_event_id_and_postings(&g, "FillReceived");
    rejected(g.table(correct(&id, version, postings)), "CORRECTION_INVALID");
}

// ---------------------------------------------------------------- R-RAKE-3 time, R-RAKE-2 jackpot

#[test]
fn r_rake_3_time_is_collected_once_per_interval() {
    let mut c = nl_1_2();
    c.fee = FeePolicy::TimeCollection { fee_cents: d(6), interval_minutes: 30 };
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::CollectTime { seats: vec![1, 2] }).unwrap();
    g.world.ctx.at_unix_ms += 29 * MINUTE;
    let r = rejected(g.table(TableOp::CollectTime { seats: vec![2] }), "TIME_ALREADY_COLLECTED");
    assert_eq!(r.number("seat"), Some(2));
    g.world.ctx.at_unix_ms += MINUTE;
    g.table(TableOp::CollectTime { seats: vec![1, 2] }).unwrap();
    assert_eq!((g.stack(1), g.stack(2)), (d(88), d(88)));
    // "Paid in advance": a seat whose time ran out is not dealt in until it pays (the betting
    // pass: a seat that could not pay played a whole hand).
    g.world.ctx.at_unix_ms += 30 * MINUTE;
    let r = rejected(g.table(TableOp::StartHand { hand_no: 1, button_seat: 1, dealt_seats: vec![1, 2] }), "TIME_NOT_PAID");
    assert_eq!((r.reason.rule, r.number("seat")), ("R-RAKE-3", Some(1)));
    g.table(TableOp::CollectTime { seats: vec![1, 2] }).unwrap();
    g.table(TableOp::StartHand { hand_no: 1, button_seat: 1, dealt_seats: vec![1, 2] }).unwrap();
    // R-STAKE-5: time comes from chips, not from cash in play (the fixes' pass: $5 of time from
    // $100 of cash, then the conversion paid $100 of chips for a $95 stack).
    let mut c = nl_1_2();
    c.fee = FeePolicy::TimeCollection { fee_cents: d(6), interval_minutes: 30 };
    let mut cash = Game::new(c, &[(1, d(100))]);
    cash.table(TableOp::SeatPlayer { seat: 3, player_id: pid("P3") }).unwrap();
    cash.table(TableOp::PutCashInPlay { seat: 3, player_id: pid("P3"), amount_cents: d(60), supervisor_id: None }).unwrap();
    let r = rejected(cash.table(TableOp::CollectTime { seats: vec![3] }), "TIME_FEE_EXCEEDS_STACK");
    assert_eq!((r.number("stack_cents"), r.number("cash_in_play_cents")), (Some(d(60)), Some(d(60))));
    cash.table(TableOp::ConvertCashInPlay { seat: 3 }).unwrap();
    cash.table(TableOp::CollectTime { seats: vec![3] }).unwrap();
    // An interval of nothing would let a seat pay again and again (the rake pass).
    let mut every_instant = nl_1_2();
    every_instant.fee = FeePolicy::TimeCollection { fee_cents: d(6), interval_minutes: 0 };
    let r = every_instant.validate().unwrap_err();
    assert_eq!((r.reason.code, r.reason.rule, r.number("interval_minutes")), ("INVALID_CONFIG", "R-RAKE-3", Some(0)));
}

/// R-RAKE-3, R-AUDIT-1 (the cage pass): a corrected time collection gives the fee back and the
/// seats owe the time again; it had left them paid, and the house could not collect the interval
/// again. A seat paid since by a later collection keeps that one.
fn correct_time(reverses: &str, version: u64, postings: Vec<Posting>) -> TableOp {
    let mut op = correct(reverses, version, postings);
    if let TableOp::Correct { reverses_event_types, .. } = &mut op {
        *reverses_event_types = vec!["TimeCollected".into()];
    }
    op
}

#[test]
fn r_rake_3_a_corrected_time_collection_leaves_the_seats_owing_the_time() {
    let mut c = nl_1_2();
    c.fee = FeePolicy::TimeCollection { fee_cents: d(6), interval_minutes: 30 };
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::CollectTime { seats: vec![1, 2] }).unwrap();
    let (id, version, postings) = last_event_id_and_postings(&g, "TimeCollected");
    g.table(correct_time(&id, version, postings)).unwrap();
    let rake = |g: &Game| g.world.balance(&Account::Rake { table_id: tid(TABLE) });
    assert_eq!((g.stack(1), g.stack(2), rake(&g)), (d(100), d(100), 0));
    let hand = TableOp::StartHand { hand_no: 1, button_seat: 1, dealt_seats: vec![1, 2] };
    let r = rejected(g.table(hand.clone()), "TIME_NOT_PAID");
    assert_eq!((r.reason.rule, r.number("seat")), ("R-RAKE-3", Some(1)));
    g.table(TableOp::CollectTime { seats: vec![1, 2] }).unwrap();
    g.table(hand).unwrap();
    assert_eq!((g.stack(1) + g.stack(2), rake(&g)), (d(188), d(12)));

    // Seat 2 paid the next interval too; the first collection corrected leaves it paid.
    let mut c = nl_1_2();
    c.fee = FeePolicy::TimeCollection { fee_cents: d(6), interval_minutes: 30 };
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::CollectTime { seats: vec![1] }).unwrap();
    let (first, version, postings) = last_event_id_and_postings(&g, "TimeCollected");
    g.table(TableOp::CollectTime { seats: vec![2] }).unwrap();
    g.world.ctx.at_unix_ms += 30 * MINUTE;
    g.table(TableOp::CollectTime { seats: vec![1] }).unwrap();
    g.table(correct_time(&first, version, postings)).unwrap();
    g.world.ctx.at_unix_ms += MINUTE;
    let r = rejected(g.table(TableOp::StartHand { hand_no: 1, button_seat: 1, dealt_seats: vec![1, 2] }), "TIME_NOT_PAID");
    assert_eq!(r.number("seat"), Some(2), "seat 1's time stands, from the later collection");
}

#[test]
fn r_rake_2_the_jackpot_fund_is_paid_back_to_players() {
    let mut c = nl_1_2();
    c.jackpot_drop = Some(config::JackpotDrop { amount_cents: d(1), min_pot_cents: d(10) });
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    assert_eq!(g.state().jackpot_cents, d(1));
    rejected(g.table(TableOp::PayJackpot { seat: 2, amount_cents: d(1), promotion: " ".into(), approved_by: "floor-2".into() }), "JACKPOT_PROMOTION_REQUIRED");
    let r = rejected(g.table(TableOp::PayJackpot { seat: 2, amount_cents: d(2), promotion: "bad beat".into(), approved_by: "floor-2".into() }), "JACKPOT_FUND_INSUFFICIENT");
    assert_eq!(r.number("jackpot_cents"), Some(d(1)));
    // A second supervisor approves it: no one, or the caller, is refused (the cage pass: one
    // floor supervisor paid the whole fund alone).
    let actor = g.world.ctx.actor.id.clone();
    for approver in ["", " ", actor.as_str()] {
        let pay = TableOp::PayJackpot { seat: 2, amount_cents: d(1), promotion: "bad beat".into(), approved_by: approver.into() };
        assert_eq!(rejected(g.table(pay), "JACKPOT_APPROVER_REQUIRED").reason.rule, "R-RAKE-2");
    }
    g.table(TableOp::PayJackpot { seat: 2, amount_cents: d(1), promotion: "bad beat".into(), approved_by: "floor-2".into() }).unwrap();
    assert_eq!((g.state().jackpot_cents, g.stack(2)), (0, d(41)));
    // Played since, the payout is not corrected off the stack back into the fund (R-STAKE-2;
    // the fixes' pass: two signatures took a played dollar back for the next payout).
    let paid = g.world.log.iter().rposition(|(_, e)| e.event_type() == "JackpotPaid").unwrap();
    let correction = undo(&g, paid, "JackpotPaid", "paid to the wrong seat");
    g.start(2, 2, &[1, 2]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Fold);
    g.end();
    let r = rejected(g.table(correction), "CORRECTION_INVALID");
    assert_eq!((r.reason.rule, r.number("seat")), ("R-STAKE-2", Some(2)));
}

/// R-STAKE-3, R-REBUY-1 (the stakes pass): a jackpot paid to a seat taken without chips was
/// dealt in with $1, inside the patron's re-buy wait (now refused: R-RAKE-2); (the fixes' pass)
/// a $1 top-up kept after the buy-in was corrected away was dealt in at a $40 minimum. A seat is
/// dealt in once it has bought in.
#[test]
fn r_stake_3_only_a_seat_that_bought_in_is_dealt_in() {
    let mut c = nl_1_2();
    c.jackpot_drop = Some(config::JackpotDrop { amount_cents: d(1), min_pot_cents: d(10) });
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    p1_wins_60(&mut g);
    g.table(TableOp::SeatPlayer { seat: 3, player_id: pid("P3") }).unwrap();
    // (The cage pass) a jackpot is paid to a player dealt in, not to a seat taken a moment
    // before (R-RAKE-2): that way in is closed.
    let r = rejected(
        g.table(TableOp::PayJackpot { seat: 3, amount_cents: d(1), promotion: "high hand".into(), approved_by: "floor-2".into() }),
        "JACKPOT_SEAT_NOT_DEALT",
    );
    assert_eq!((r.reason.rule, r.number("seat")), ("R-RAKE-2", Some(3)));
    g.table(buy_in(3, "P3", d(150))).unwrap();
    // A buy-in corrected away after a top-up: the top-up alone is no buy-in.
    g.table(TableOp::TopUp { seat: 3, player_id: pid("P3"), amount_cents: d(1), source: FundsSource::Cash, supervisor_id: None }).unwrap();
    let bought = g.world.log.iter().rposition(|(_, e)| e.event_type() == "BoughtIn").expect("P3's buy-in");
    g.table(undo(&g, bought, "BoughtIn", "keyed at the wrong seat")).unwrap();
    assert_eq!(g.stack(3), d(1), "the top-up's dollar");
    let r = rejected(g.table(TableOp::StartHand { hand_no: 9, button_seat: 1, dealt_seats: vec![1, 2, 3] }), "NOT_BOUGHT_IN");
    assert_eq!((r.reason.rule, r.number("seat"), r.number("stack_cents")), ("R-STAKE-3", Some(3), Some(d(1))));
    // The buy-in again counts the dollar the seat holds toward the $200 maximum.
    let r = rejected(g.table(buy_in(3, "P3", d(200))), "BUY_IN_ABOVE_MAXIMUM");
    assert_eq!(r.number("stack_cents"), Some(d(1)));
    g.table(buy_in(3, "P3", d(150))).unwrap();
}

/// R-POT-4, R-KITTY-1 (the rake pass): a $5 jackpot drop took the whole $4 contested pot, and
/// the kitty's chip came off the $2 uncalled bet handed back to its bettor. The kitty takes its
/// chip from what was won, never from an uncalled bet.
#[test]
fn r_pot_4_the_kitty_never_takes_from_an_uncalled_bet() {
    let mut c = nl_1_2();
    c.fee = FeePolicy::NoFee;
    c.jackpot_drop = Some(config::JackpotDrop { amount_cents: d(5), min_pot_cents: 0 });
    c.kitty = Some(config::KittyPolicy { min_pot_cents: 0, leftover: config::KittyLeftover::SplitAmongSeated, from: config::KittyFrom::MainPot });
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    g.start(1, 1, &[1, 2, 3]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Fold);
    g.ok(2, Action::Call);
    g.ok(3, Action::Check);
    g.next_round();
    g.ok(2, Action::Raise { to_cents: d(2) });
    g.ok(3, Action::Fold);
    assert_eq!((g.state().jackpot_cents, g.state().kitty_cents), (d(4), 0), "the drop took the $4 won; nothing was left for the kitty");
    assert_eq!(g.stack(2), d(100) - d(2), "the $2 uncalled came back whole");
}

// ---------------------------------------------------------------- R-KITTY-1 at the game's end

fn kitty_game(leftover: config::KittyLeftover) -> Game {
    let mut c = nl_1_2();
    c.kitty = Some(config::KittyPolicy { min_pot_cents: 0, leftover, from: config::KittyFrom::MainPot });
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, d(100))]);
    // Three pots won, the button moving round: $3 in the kitty. Three-handed, the button is
    // under the gun: it folds, the small blind calls, the big blind checks.
    for (hand_no, button) in [(1u64, 3u8), (2, 1), (3, 2)] {
        let small = button % 3 + 1;
        let big = small % 3 + 1;
        g.start(hand_no, button, &[1, 2, 3]);
        g.post(small, PostKind::SmallBlind, d(1)).unwrap();
        g.post(big, PostKind::BigBlind, d(2)).unwrap();
        g.ok(button, Action::Fold);
        g.ok(small, Action::Call);
        g.ok(big, Action::Check);
        g.check_down(&[small, big]);
        g.showdown(vec![vec![small]]);
        g.end();
    }
    assert_eq!(g.state().kitty_cents, d(3));
    g
}

#[test]
fn r_kitty_1_what_is_left_at_the_end_of_the_game_is_shared_among_the_seated_players() {
    let mut g = kitty_game(config::KittyLeftover::SplitAmongSeated);
    // Among the players dealt in this session: seats taken a moment before the close share
    // nothing (the stakes pass: four friends seated without chips took half the kitty).
    for seat in 4..=6 {
        g.table(TableOp::SeatPlayer { seat, player_id: pid(&format!("FR{seat}")) }).unwrap();
    }
    let before: Vec<Cents> = (1..=6).map(|s| g.stack(s)).collect();
    g.table(TableOp::CloseGame).unwrap();
    assert_eq!(g.state().kitty_cents, 0);
    let after: Vec<Cents> = (1..=6).map(|s| g.stack(s)).collect();
    assert_eq!(after.iter().zip(&before).map(|(a, b)| a - b).collect::<Vec<_>>(), vec![d(1), d(1), d(1), 0, 0, 0]);
    // The game is over: no hands, no chips in, but the players leave with their stacks.
    rejected(g.table(TableOp::StartHand { hand_no: 4, button_seat: 1, dealt_seats: vec![1, 2] }), "GAME_CLOSED");
    rejected(g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(10), source: FundsSource::Cash, supervisor_id: None }), "GAME_CLOSED");
    rejected(g.table(TableOp::CloseGame), "GAME_CLOSED");
    // Nor a seat taken (the cage pass: seated after the close, never able to buy in).
    rejected(g.table(TableOp::SeatPlayer { seat: 9, player_id: pid("P9") }), "GAME_CLOSED");
    // No chips from the cage either (the cage pass filled a closed game); a credit still takes
    // the tray's chips back.
    let slip_no = g.next_fill_slip;
    let fill = TableOp::Fill { cage_id: cid(CAGE), slip_no, chips: vec![ChipCount { denomination_cents: d(5), count: 1 }], signers: signers("cage-1", "floor-1") };
    rejected(g.table(fill), "GAME_CLOSED");
    let credit = TableOp::Credit { cage_id: cid(CAGE), slip_no: 1, chips: vec![ChipCount { denomination_cents: d(5), count: 1 }], signers: signers("cage-1", "floor-1") };
    g.table(credit).unwrap();
    // The game's end stands: its kitty was settled (R-KITTY-1).
    let closed = g.world.log.iter().rposition(|(_, e)| e.event_type() == "GameClosed").expect("GameClosed");
    let r = rejected(g.table(undo(&g, closed, "GameClosed", "closed too early")), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-KITTY-1");
    // Nor do a credit's chips come back by its void.
    let void = TableOp::VoidSlip { cage_id: cid(CAGE), kind: SlipKind::Credit, slip_no: 1, reason: "keyed twice".into(), signers: signers("cage-1", "floor-1") };
    rejected(g.table(void), "GAME_CLOSED");
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
}

#[test]
fn r_kitty_1_the_kitty_left_may_go_to_the_dealers_or_the_house() {
    let mut g = kitty_game(config::KittyLeftover::ToDealers);
    let toke = g.state().toke_cents;
    g.table(TableOp::CloseGame).unwrap();
    assert_eq!(g.state().toke_cents - toke, d(3));
    let mut g = kitty_game(config::KittyLeftover::ToHouse);
    g.table(TableOp::PayKittyExpense { amount_cents: d(1), purpose: "cards".into(), to_dealer: false }).unwrap();
    let expense = g.world.log.iter().rposition(|(_, e)| e.event_type() == "KittyExpensePaid").expect("KittyExpensePaid");
    g.table(TableOp::CloseGame).unwrap();
    assert_eq!(g.world.balance(&Account::House(HouseAccount::KittyExpenses)), d(3));
    // The close settled the kitty: an expense from before it is not corrected back into it, and
    // no expense is paid after it (the flows pass: $1 put back so, then paid to the dealers).
    let r = rejected(g.table(undo(&g, expense, "KittyExpensePaid", "keyed twice")), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-KITTY-1");
    rejected(g.table(TableOp::PayKittyExpense { amount_cents: d(1), purpose: "cards".into(), to_dealer: true }), "GAME_CLOSED");
    assert_eq!(g.state().kitty_cents, 0);
    // Shared among nobody: refused, so the kitty is never stranded.
    let mut g = kitty_game(config::KittyLeftover::SplitAmongSeated);
    for seat in 1..=3 {
        g.table(TableOp::CashOut { seat, player_id: pid(&format!("P{seat}")) }).unwrap();
    }
    let r = rejected(g.table(TableOp::CloseGame), "KITTY_NOBODY_SEATED");
    assert_eq!(r.number("kitty_cents"), Some(d(3)));
}

// ---------------------------------------------------------------- R-CHIP-4 counts that differ

#[test]
fn r_chip_4_a_table_count_that_differs_is_recorded_as_a_variance() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100))]);
    let tray = g.state().tray.clone();
    let drop = g.state().drop_cents;
    // Two $5 chips short, one $25 chip over, and the drop $20 short.
    let counted: Vec<ChipCount> = tray
        .iter()
        .map(|c| match c.denomination_cents {
            500 => ChipCount { count: c.count - 2, ..*c },
            2_500 => ChipCount { count: c.count + 1, ..*c },
            _ => *c,
        })
        .collect();
    let events = g
        .table(TableOp::CloseShift { counted_tray: counted.clone(), counted_drop_cents: drop - d(20), signers: signers("floor-1", "cage-1") })
        .unwrap();
    let Event::Table(TableEvent::CountVarianceRecorded { tray_variance, drop_variance_cents, variance_cents, .. }) = &events[0].1 else {
        panic!("{events:?}")
    };
    assert_eq!(tray_variance, &vec![ChipCount { denomination_cents: 500, count: -2 }, ChipCount { denomination_cents: 2_500, count: 1 }]);
    assert_eq!((*drop_variance_cents, *variance_cents), (-d(20), d(25) - d(10) - d(20)));
    assert_eq!(g.world.balance(&Account::House(HouseAccount::CountVariance)), d(5), "a net shortage of $5");
    let Event::Table(TableEvent::ShiftClosed { closing_tray, drop_cents, .. }) = &events[1].1 else { panic!("{events:?}") };
    assert_eq!((closing_tray, *drop_cents), (&counted, drop - d(20)));
    assert_eq!(g.state().tray, counted, "the book now says what was counted");
}

#[test]
fn r_chip_4_a_cage_count_that_differs_is_recorded_as_a_variance() {
    let mut g = Game::new(nl_1_2(), &[]);
    let c = g.world.cages[&cid(CAGE)].clone();
    let mut counted = c.chips.clone();
    counted[0].count -= 3;
    let op = CageOp::CountShift { counted_chips: counted.clone(), counted_cash_cents: c.cash_cents + d(7), signers: signers("cage-1", "cage-2") };
    let events = g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op })).unwrap();
    let Event::Cage(CageEvent::CountVarianceRecorded { chips_variance, cash_variance_cents, .. }) = &events[0].1 else { panic!("{events:?}") };
    assert_eq!(chips_variance, &vec![ChipCount { denomination_cents: counted[0].denomination_cents, count: -3 }]);
    assert_eq!(*cash_variance_cents, d(7));
    assert_eq!(g.world.cages[&cid(CAGE)].chips, counted);
    assert_eq!(g.world.cages[&cid(CAGE)].cash_cents, c.cash_cents + d(7));
}

/// R-CHIP-3 with R-CHIP-4: a credit brings a cage only chips it uses. The credit pass credited
/// $50 chips from a table to a cage without them: they stayed on the cage's book, and its counts,
/// which cover its own denominations, could never see them go.
#[test]
fn r_chip_3_a_credit_brings_a_cage_only_chips_it_uses() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100))]);
    let small = cid("SMALL");
    let one = |count| ChipCount { denomination_cents: d(1), count };
    let five = |count| ChipCount { denomination_cents: d(5), count };
    let open = CageOp::OpenCage { denominations_cents: vec![d(1)], chips: vec![one(100)], cash_cents: d(1_000) };
    g.world.exec(Command::Cage(CageCommand { cage_id: small.clone(), op: open })).unwrap();
    let credit = |chips| TableOp::Credit { cage_id: small.clone(), slip_no: 1, chips, signers: signers("floor-1", "cage-1") };
    let r = rejected(g.table(credit(vec![five(2)])), "CAGE_DENOMINATION_NOT_USED");
    assert_eq!((r.reason.rule, r.number("denomination_cents")), ("R-CHIP-3", Some(d(5))));
    g.table(credit(vec![one(2)])).unwrap();
}

/// R-AUDIT-1 with R-CHIP-4: the corrections a table remembers, against a second of the same
/// event, are its shift's: once counted nothing before is corrected, and the bound starts again
/// (the corrections pass: after 4,096 corrections over a table's life every later one was
/// refused for good, a new shift's too).
#[test]
fn r_audit_1_the_bound_of_remembered_corrections_is_a_shifts() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100))]);
    let tip_and_correct = |g: &mut Game| {
        g.table(TableOp::Tip { seat: 1, amount_cents: d(1) })?;
        let (id, version, postings) = last_event_id_and_postings(g, "Tipped");
        g.table(correct(&id, version, postings))
    };
    for _ in 0..chipledger_rules::player::MAX_CORRECTED_EVENTS {
        tip_and_correct(&mut g).unwrap();
    }
    let r = rejected(tip_and_correct(&mut g), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-AUDIT-1");
    let held: Vec<ChipCount> = g.state().tray.iter().filter(|c| c.count > 0).copied().collect();
    let drop = g.state().drop_cents;
    g.table(TableOp::CloseShift { counted_tray: held, counted_drop_cents: drop, signers: signers("floor-1", "cage-1") }).unwrap();
    tip_and_correct(&mut g).unwrap();
}

/// R-CHIP-4: a line left out of a count sheet is no count, not a zero (the cage pass: a count
/// naming only the $1 chips recorded a -$19,600 variance and emptied the book of the others; a
/// table's close listing one empty denomination zeroed a $300 tray). A denomination the book
/// holds none of may be left out.
#[test]
fn r_chip_4_a_count_names_every_denomination_the_book_holds() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100))]);
    let tray = g.state().tray.clone();
    let held: Vec<ChipCount> = tray.iter().filter(|c| c.count > 0).copied().collect();
    assert!(held.len() >= 2, "{tray:?}");
    let drop = g.state().drop_cents;
    let r = rejected(
        g.table(TableOp::CloseShift { counted_tray: held[1..].to_vec(), counted_drop_cents: drop, signers: signers("floor-1", "cage-1") }),
        "COUNT_INVALID",
    );
    assert_eq!((r.reason.rule, r.number("denomination_cents"), r.number("book_count")), ("R-CHIP-4", Some(held[0].denomination_cents), Some(held[0].count)));
    g.table(TableOp::CloseShift { counted_tray: held.clone(), counted_drop_cents: drop, signers: signers("floor-1", "cage-1") }).unwrap();
    let c = g.world.cages[&cid(CAGE)].clone();
    let listed: Vec<ChipCount> = c.chips.iter().filter(|chip| chip.count > 0).copied().collect();
    let op = |chips: Vec<ChipCount>| CageOp::CountShift { counted_chips: chips, counted_cash_cents: c.cash_cents, signers: signers("cage-1", "cage-2") };
    let r = rejected(g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op: op(listed[1..].to_vec()) })), "COUNT_INVALID");
    assert_eq!(r.number("denomination_cents"), Some(listed[0].denomination_cents));
    // R-UNIT-1: a count past the bound names the most that denomination may count: the fewer of
    // the chips a count may name and the chips worth the amount bound (the cage pass: a $5,000
    // chip's bound was named as 100,000,000 chips, $500 billion).
    let top = *listed.iter().max_by_key(|chip| chip.denomination_cents).expect("a chip");
    let most = chipledger_rules::inventory::MAX_COUNTED_CHIPS.min(chipledger_rules::money::MAX_AMOUNT_CENTS / top.denomination_cents);
    assert!(most < chipledger_rules::inventory::MAX_COUNTED_CHIPS, "{top:?}");
    let over: Vec<ChipCount> = listed
        .iter()
        .map(|chip| if chip.denomination_cents == top.denomination_cents { ChipCount { count: most + 1, ..*chip } } else { *chip })
        .collect();
    let r = rejected(g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op: op(over) })), "AMOUNT_TOO_LARGE");
    assert_eq!((r.number("denomination_cents"), r.number("max_count")), (Some(top.denomination_cents), Some(most)));
    g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op: op(listed) })).unwrap();
}

/// R-CHIP-4: a shift counted and closed is not changed behind its signers. The audit pass
/// corrected a shift close's variance and its drop: a signed $10 shortage vanished and the
/// same $340 drop counted again at the next close. An event of the closed shift (a buy-in, the
/// variance, the close itself) is refused, naming the versions.
#[test]
fn r_chip_4_events_of_a_counted_shift_are_not_corrected() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100))]);
    let buy_in_at = g.world.log.iter().rposition(|(_, e)| e.event_type() == "BoughtIn").expect("a buy-in");
    let mut counted = g.state().tray.clone();
    counted[0].count -= 1;
    let drop = g.state().drop_cents;
    g.table(TableOp::CloseShift { counted_tray: counted, counted_drop_cents: drop, signers: signers("floor-1", "cage-1") }).unwrap();
    let closed_at = g.world.log.len() - 1;
    let variance_at = closed_at - 1;
    let counted_through = stream_version_at(&g.world.log, closed_at);
    for (index, event_type) in [(buy_in_at, "BoughtIn"), (variance_at, "CountVarianceRecorded"), (closed_at, "ShiftClosed")] {
        let r = rejected(g.table(undo(&g, index, event_type, "recount")), "CORRECTION_INVALID");
        assert_eq!(r.reason.rule, "R-CHIP-4", "{event_type}");
        assert_eq!(r.number("counted_through_stream_version"), Some(counted_through as Cents), "{event_type}");
    }
    // Nor is a slip of the closed shift voided (the fixes' pass: the next shift opened with a
    // negative fill).
    let void = TableOp::VoidSlip { cage_id: cid(CAGE), kind: SlipKind::Fill, slip_no: 1, reason: "recount".into(), signers: signers("cage-1", "floor-1") };
    let r = rejected(g.table(void), "SLIP_IN_COUNTED_SHIFT");
    assert_eq!((r.reason.rule, r.number("slip_no")), ("R-CHIP-4", Some(1)));
    // The next shift's events are corrected as before.
    g.table(buy_in(2, "P2", d(60))).unwrap();
    let top = g.world.log.iter().rposition(|(_, e)| e.event_type() == "BoughtIn").expect("a buy-in");
    g.table(undo(&g, top, "BoughtIn", "keyed twice")).unwrap();
    // The cage's count closes its events the same way.
    let sale = g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op: CageOp::SellChips { player_id: pid("P9"), chips: vec![ChipCount { denomination_cents: 500, count: 2 }], supervisor_id: None } })).unwrap();
    let sale_at = g.world.log.len() - sale.len();
    let c = g.world.cages[&cid(CAGE)].clone();
    let count = CageOp::CountShift { counted_chips: c.chips.clone(), counted_cash_cents: c.cash_cents, signers: signers("cage-1", "cage-2") };
    g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op: count })).unwrap();
    let correct = CageOp::Correct {
        reverses_event_id: format!("event-{sale_at}"),
        reverses_stream_version: stream_version_at(&g.world.log, sale_at),
        reverses_event_types: vec!["ChipsSold".into()],
        reverses_gaming_day: g.world.ctx.gaming_day.clone(),
        original_postings: g.world.log[sale_at].1.postings(),
        approved_by: "cage-mgr".into(),
        reason: "sold to the wrong patron".into(),
    };
    let r = rejected(g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op: correct })), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-CHIP-4");
}

/// R-AUDIT-1: a correction is not corrected. Reversing it put the original postings back
/// unjudged: the audit pass restored a corrected $200 buy-in on top of a top-up (above the
/// table's maximum) and a buy-in at a game closed since. The movement is recorded again by its
/// own command, which the rules judge.
#[test]
fn r_audit_1_a_correction_is_not_corrected() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100))]);
    let bought = g.world.log.iter().rposition(|(_, e)| e.event_type() == "BoughtIn").expect("a buy-in");
    g.table(undo(&g, bought, "BoughtIn", "keyed twice")).unwrap();
    let corrected = g.world.log.len() - 1;
    let r = rejected(g.table(undo(&g, corrected, "Corrected", "keyed twice after all")), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-AUDIT-1");
    assert_eq!(g.stack(1), 0, "the buy-in stays corrected");
    // R-STAKE-3: the seat left without chips buys in again within the limits; a top-up below
    // the minimum is no way in (the audit pass topped up $1 at a $40 minimum).
    let r = rejected(g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(1), source: FundsSource::Cash, supervisor_id: None }), "NOT_BOUGHT_IN");
    assert_eq!(r.reason.rule, "R-STAKE-3");
    rejected(g.table(buy_in(1, "P1", d(1))), "BUY_IN_BELOW_MINIMUM");
    g.table(buy_in(1, "P1", d(100))).unwrap();
}

#[test]
fn r_unit_1_counts_that_would_overflow_are_refused_not_wrapped() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100))]);
    let tray = g.state().tray.clone();
    let drop = g.state().drop_cents;
    // 2 x (2^63 - 1) + the true count + 2 wraps to the true count in i64 arithmetic.
    let mut counted = Vec::new();
    for c in &tray {
        counted.push(ChipCount { denomination_cents: c.denomination_cents, count: i64::MAX });
        counted.push(ChipCount { denomination_cents: c.denomination_cents, count: i64::MAX });
        counted.push(ChipCount { denomination_cents: c.denomination_cents, count: c.count + 2 });
    }
    counted.truncate(15);
    rejected(g.table(TableOp::CloseShift { counted_tray: counted, counted_drop_cents: drop, signers: signers("a", "b") }), "AMOUNT_TOO_LARGE");
    // Counted twice, each within bounds: refused too (a denomination is counted once).
    let twice = vec![tray[0], tray[0]];
    rejected(g.table(TableOp::CloseShift { counted_tray: twice, counted_drop_cents: drop, signers: signers("a", "b") }), "COUNT_INVALID");
    let huge = vec![ChipCount { denomination_cents: tray[0].denomination_cents, count: i64::MAX }];
    rejected(g.table(TableOp::CloseShift { counted_tray: huge, counted_drop_cents: drop, signers: signers("a", "b") }), "AMOUNT_TOO_LARGE");
    // A negative line is no amount beyond the bound: it is never negative (R-UNIT-1).
    let mut negative = tray.clone();
    negative[0].count = -1;
    let r = rejected(g.table(TableOp::CloseShift { counted_tray: negative, counted_drop_cents: drop, signers: signers("a", "b") }), "AMOUNT_NOT_POSITIVE");
    assert_eq!((r.reason.rule, r.number("count")), ("R-UNIT-1", Some(-1)));
    rejected(g.table(TableOp::CloseShift { counted_tray: tray, counted_drop_cents: -1, signers: signers("a", "b") }), "AMOUNT_NOT_POSITIVE");
}

#[test]
fn r_unit_1_configuration_amounts_are_bounded_so_no_product_wraps() {
    // A big blind near i64::MAX / 2 would wrap a straddle (2x) or a kill blind; refused.
    let mut c = nl_1_2();
    c.blinds_cents = vec![d(1), i64::MAX / 2];
    let mut g = Game::new(nl_1_2(), &[]);
    let t = tid("T9");
    let r = rejected(g.world.exec(Command::Table(TableCommand { table_id: t, op: TableOp::OpenTable { config: c } })), "INVALID_CONFIG");
    assert_eq!(r.number("max_amount_cents"), Some(money::MAX_AMOUNT_CENTS));
    // Postings to reverse are bounded before they are negated.
    let huge = vec![
        Posting::new(Account::Seat { table_id: tid(TABLE), seat: 1 }, i64::MIN),
        Posting::new(Account::Drop { table_id: tid(TABLE) }, i64::MIN),
    ];
    rejected(g.table(correct("event-x", g.state().version, huge)), "AMOUNT_TOO_LARGE");
}

#[test]
fn r_unit_2_every_preset_at_usual_stakes_is_a_valid_configuration() {
    // A preset a room picks must pass the table's own validation (whole minimum chips, bounds).
    let presets = [
        TableConfig::no_limit_holdem(d(1), d(2)),
        TableConfig::no_limit_holdem(d(1), d(3)),
        TableConfig::pot_limit_holdem(d(2), d(5)),
        TableConfig::pot_limit_omaha(d(5), d(10)),
        TableConfig::half_pot_limit_holdem(d(1), d(2)),
        TableConfig::cap_limit_holdem(d(1), d(2), d(60)),
        TableConfig::fixed_limit_holdem(d(1), d(2), 3),
        TableConfig::fixed_limit_holdem(d(3), d(6), 3),
        TableConfig::fixed_limit_holdem(d(4), d(8), 4),
        TableConfig::fixed_limit_holdem_kill(d(4), d(8), KillPolicy::Full),
        TableConfig::spread_limit_holdem(d(1), d(1), d(1), d(5), Some(d(10))),
        TableConfig::seven_card_stud(d(1), d(2), d(5), d(10)),
        TableConfig::seven_card_stud_hi_lo(d(1), d(2), d(5), d(10)),
        TableConfig::razz(d(1), d(2), d(5), d(10)),
        TableConfig::omaha_hi_lo(d(4), d(8)),
        TableConfig::short_deck_holdem(d(1), d(2)),
        TableConfig::deuce_to_seven_triple_draw(d(10), d(20)),
        TableConfig::deuce_to_seven_single_draw(d(5), d(10)),
        TableConfig::badugi(d(10), d(20)),
    ];
    for config in presets {
        assert!(config.validate().is_ok(), "{}: {:?}", config.game_key, config.validate());
    }
    // $3/$6 limit: blinds $1/$3 in whole $1 chips.
    assert_eq!(TableConfig::fixed_limit_holdem(d(3), d(6), 3).blinds_cents, vec![d(1), d(3)]);
}

/// R-STAKE-3 (the stakes pass): a stack that went broke took a $2 top-up and was dealt in at a
/// $40 minimum. Chips for a broke stack are a re-buy: at least the minimum buy-in.
#[test]
fn r_stake_3_a_stack_that_went_broke_rebuys_at_least_the_minimum() {
    let mut g = Game::new(nl_1_2(), &[(1, d(40)), (2, d(200))]);
    g.start(1, 1, &[1, 2]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::AllIn);
    g.ok(2, Action::Call);
    while g.hand().round.index + 1 < 4 {
        g.next_round();
    }
    g.showdown(vec![vec![2]]);
    g.end();
    assert_eq!(g.stack(1), 0);
    let top_up = |amount_cents| TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents, source: FundsSource::Cash, supervisor_id: None };
    let r = rejected(g.table(top_up(d(2))), "BUY_IN_BELOW_MINIMUM");
    assert_eq!((r.reason.rule, r.number("min_buy_in_cents")), ("R-STAKE-3", Some(d(40))));
    g.table(top_up(d(40))).unwrap();
    assert_eq!(g.stack(1), d(40));
}

/// R-STAKE-3 (the second stakes pass): a stack of a tip chip under the minimum playable chip is
/// broke too: a $25 top-up on a $5 chip had been dealt in at a $1,000 minimum.
#[test]
fn r_stake_3_a_stack_of_no_playable_chip_is_broke() {
    let mut c = TableConfig::no_limit_holdem(d(5), d(10));
    c.fee = FeePolicy::NoFee;
    c.chip_set.min_playable_chip_cents = d(5);
    c.buy_in.min_cents = d(100);
    c.tip_cap_cents = d(100);
    let mut g = Game::new(c, &[(1, d(100)), (2, d(200))]);
    g.table(TableOp::Tip { seat: 1, amount_cents: d(97) }).unwrap();
    assert_eq!(g.stack(1), d(3), "three $1 chips: no playable $5 chip");
    let top_up = |amount_cents| TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents, source: FundsSource::Cash, supervisor_id: None };
    let r = rejected(g.table(top_up(d(25))), "BUY_IN_BELOW_MINIMUM");
    assert_eq!(r.number("min_buy_in_cents"), Some(d(100)));
    g.table(top_up(d(100))).unwrap();
}

/// R-STAKE-2 with R-REBUY-1 (the stakes pass): $10 taken off within the refreshment allowance,
/// a cash-out and a re-buy for the stack left took the allowance again, six times in a second.
/// The patron left the game with the chips taken off too: a return brings them back.
#[test]
fn r_stake_2_chips_taken_off_within_the_allowance_are_part_of_what_a_return_brings_back() {
    let mut c = nl_1_2();
    c.refreshment_allowance_cents = d(10);
    let mut g = Game::new(c.clone(), &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::RemoveChips { seat: 1, amount_cents: d(10), player_id: Some(pid("P1")) }).unwrap();
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, d(100));
    let y = open_second_table(&mut g, "T2", c);
    let r = rejected(at(&mut g, &y, buy_in(3, "P1", d(90))), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("amount_left_with_cents"), Some(d(100)));
    at(&mut g, &y, buy_in(3, "P1", d(100))).unwrap();
}

/// R-STAKE-2 with R-REBUY-1 (the fixes' pass): the chips taken off counted twice, once corrected
/// back on the stack (still in the departure, the allowance still spent), and once moved with the
/// seat into another game (in both games' departures).
#[test]
fn r_stake_2_chips_taken_off_count_once() {
    let mut c = nl_1_2();
    c.refreshment_allowance_cents = d(10);
    // Corrected back on the stack.
    let mut g = Game::new(c.clone(), &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::RemoveChips { seat: 1, amount_cents: d(10), player_id: Some(pid("P1")) }).unwrap();
    let index = g.world.log.iter().rposition(|(_, e)| e.event_type() == "ChipsRemoved").unwrap();
    let correction = undo(&g, index, "ChipsRemoved", "taken off by mistake");
    g.table(correction).unwrap();
    assert_eq!(g.stack(1), d(100));
    g.table(TableOp::RemoveChips { seat: 1, amount_cents: d(10), player_id: Some(pid("P1")) }).unwrap();
    g.table(TableOp::RemoveChips { seat: 1, amount_cents: d(10), player_id: Some(pid("P1")) }).map(|_| ()).expect_err("the allowance is spent again");
    // Moved into another game: counted in the first game's departure only.
    let mut g = Game::new(c.clone(), &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::RemoveChips { seat: 1, amount_cents: d(10), player_id: Some(pid("P1")) }).unwrap();
    let mut plo = TableConfig::pot_limit_omaha(d(1), d(2));
    plo.refreshment_allowance_cents = d(10);
    let other = open_second_table(&mut g, "T2", plo);
    g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: other.clone(), to_seat: 3 }).unwrap();
    at(&mut g, &other, TableOp::CashOut { seat: 3, player_id: pid("P1") }).unwrap();
    let departures: Vec<Cents> = g.world.players[&pid("P1")].unmet_departures.iter().map(|d| d.amount_cents).collect();
    assert_eq!(departures, vec![d(100), d(90)], "NLHE: $90 moved and $10 taken off; PLO: the $90 it left with");
}

/// R-STAKE-2 (the second stakes pass): a top-up corrected after the seat had played moved $100 of
/// a played stack back to the pocket, ratholing by two signatures. Chips played stay on the stack.
#[test]
fn r_stake_2_chips_played_since_are_not_corrected_off_the_stack() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(100), source: FundsSource::Cash, supervisor_id: None }).unwrap();
    let index = g.world.log.iter().rposition(|(_, e)| e.event_type() == "ToppedUp").unwrap();
    let correction = undo(&g, index, "ToppedUp", "keyed twice");
    g.start(1, 1, &[1, 2]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Fold);
    g.end();
    let r = rejected(g.table(correction), "CORRECTION_INVALID");
    assert_eq!((r.reason.rule, r.number("seat")), ("R-STAKE-2", Some(1)));
    // The same whether the patron is up or down: P1's $100 buy-in, with $1 lost since, is refused
    // as played, not as a stack going negative (the auditor's pass).
    let mut down = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    down.start(1, 1, &[1, 2]);
    down.post(1, PostKind::SmallBlind, d(1)).unwrap();
    down.post(2, PostKind::BigBlind, d(2)).unwrap();
    down.ok(1, Action::Fold);
    down.end();
    assert_eq!(down.stack(1), d(99));
    let bought = down.world.log.iter().position(|(_, e)| e.event_type() == "BoughtIn").unwrap();
    let r = rejected(down.table(undo(&down, bought, "BoughtIn", "keyed twice")), "CORRECTION_INVALID");
    assert_eq!((r.reason.rule, r.number("seat")), ("R-STAKE-2", Some(1)));
    // Before any hand, the top-up is corrected as ever.
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(100), source: FundsSource::Cash, supervisor_id: None }).unwrap();
    let index = g.world.log.iter().rposition(|(_, e)| e.event_type() == "ToppedUp").unwrap();
    let correction = undo(&g, index, "ToppedUp", "keyed twice");
    g.table(correction).unwrap();
    assert_eq!(g.stack(1), d(100));
}

/// R-REBUY-1 with a second seat allowed (the second stakes pass): moved by the house from one
/// seat of the game into another game with $200, the patron was dealt in at the other seat of the
/// first game with $40. The move binds it as a cash-out does.
#[test]
fn r_rebuy_1_a_move_into_another_game_binds_the_other_seat_of_the_first() {
    let mut c = nl_1_2();
    c.rebuy.allow_second_seat = true;
    let mut g = Game::new(c.clone(), &[(1, d(200)), (2, d(100))]);
    let y = open_second_table(&mut g, "T2", c);
    at(&mut g, &y, buy_in(4, "P1", d(40))).unwrap();
    at(&mut g, &y, buy_in(5, "P5", d(100))).unwrap();
    let plo = open_second_table(&mut g, "T3", TableConfig::pot_limit_omaha(d(1), d(2)));
    let moved = g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: plo, to_seat: 2 }).unwrap();
    assert!(moved.iter().any(|(s, e)| s == &StreamId::Table(y.clone()) && e.event_type() == "SeatBound"), "{moved:?}");
    let r = rejected(at(&mut g, &y, TableOp::StartHand { hand_no: 1, button_seat: 5, dealt_seats: vec![4, 5] }), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("required_min_cents"), Some(d(200)));
}

/// R-MARK-1 with R-AUDIT-1: marker chips brought to a seat are not corrected at the table (the
/// marker stays owed while the chips go); the refusal names the marker's rule, not the fill
/// slip's (R-CHIP-3), and says how the marker is taken back.
#[test]
fn r_mark_1_marker_chips_at_a_seat_are_not_corrected_at_the_table() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    credit_line(&mut g, "P1", 5_000);
    marker_to_seat(&mut g, 1, "P1", 1, 100).unwrap();
    let i = g.world.log.iter().rposition(|(s, e)| matches!(s, StreamId::Table(_)) && e.event_type() == "MarkerChipsSeated").unwrap();
    let (id, version, postings) = (format!("event-{i}"), stream_version_at(&g.world.log, i), g.world.log[i].1.postings());
    let r = rejected(g.table(correct(&id, version, postings)), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-MARK-1");
    assert!(r.detail.contains("redeem"), "{}", r.detail);
    assert_eq!(g.stack(1), d(200));
    // Its record at the cage carries no postings: refused for the marker's rule too (it had been
    // refused as "1..=64 postings", R-AUDIT-1).
    let at_cage = g.world.log.iter().rposition(|(s, e)| matches!(s, StreamId::Cage(_)) && e.event_type() == "MarkerIssued").unwrap();
    assert!(g.world.log[at_cage].1.postings().is_empty());
    let record = Command::Cage(CageCommand {
        cage_id: cid(CAGE),
        op: CageOp::Correct {
            reverses_event_id: format!("event-{at_cage}"),
            reverses_stream_version: stream_version_at(&g.world.log, at_cage),
            reverses_event_types: vec!["MarkerIssued".into()],
            reverses_gaming_day: g.world.ctx.gaming_day.clone(),
            original_postings: Vec::new(),
            approved_by: "floor-2".into(),
            reason: "keyed twice".into(),
        },
    });
    let r = rejected(g.world.exec(record), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-MARK-1");
}

/// R-STAKE-6 with R-AUDIT-1: each table's event of a house move carries its own side of it, and
/// the move is not corrected at either table (its stack moved between them in one decision); the
/// refusal names the move's rule and the remedy.
#[test]
fn r_stake_6_a_house_move_is_not_corrected() {
    let mut g = Game::new(nl_1_2(), &[(1, d(100)), (2, d(100))]);
    let y = open_second_table(&mut g, "T2", nl_1_2());
    let moved = g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: y.clone(), to_seat: 3 }).unwrap();
    // Each table's event carries its own side, through the house's moves account (the
    // auditor's pass: the table joined had no posting of the $100 it received, so its own events
    // did not add up to its balances).
    for (stream, event) in moved.iter().filter(|(_, e)| e.moves_chips()) {
        let StreamId::Table(own) = stream else { panic!("a move posts on its tables: {event:?}") };
        for p in event.postings() {
            assert!(p.account.table_id().is_none_or(|t| t == own) && p.account.table_id().is_some() != (p.account == Account::House(HouseAccount::Moves)), "{p:?} on {own}");
        }
    }
    let arrived: Vec<(Account, Cents)> = moved.iter().filter(|(_, e)| e.event_type() == "PlayerMovedIn").flat_map(|(_, e)| e.postings()).map(|p| (p.account.clone(), p.amount_cents)).collect();
    assert_eq!(arrived, vec![(Account::House(HouseAccount::Moves), -d(100)), (Account::Seat { table_id: y.clone(), seat: 3 }, d(100))]);
    for event_type in ["PlayerMovedOut", "PlayerMovedIn"] {
        let i = g.world.log.iter().rposition(|(_, e)| e.event_type() == event_type).unwrap();
        let StreamId::Table(on) = g.world.log[i].0.clone() else { panic!("{event_type} on a table") };
        let correction = undo(&g, i, event_type, "moved to the wrong seat");
        let r = rejected(at(&mut g, &on, correction), "CORRECTION_INVALID");
        assert_eq!(r.reason.rule, "R-STAKE-6", "{event_type}: {}", r.detail);
    }
}

/// R-CHIP-2 (the wave-2 pass): what a seat brought in since it was last dealt goes with it on a
/// house move ($9,900 in, moved, $9,900 more had needed no supervisor), and a buy-in corrected
/// away no longer counts ($9,500 keyed for $950, corrected: the $950 had needed one).
#[test]
fn r_chip_2_the_supervisor_count_follows_a_house_move_and_forgets_a_corrected_buy_in() {
    let mut big = nl_1_2();
    big.buy_in.max_cents = d(50_000);
    let mut g = Game::new(big.clone(), &[]);
    g.table(buy_in(1, "P1", d(9_900))).unwrap();
    rejected(g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(200), source: FundsSource::Cash, supervisor_id: None }), "SUPERVISOR_REQUIRED");
    let other = open_second_table(&mut g, "T2", big);
    g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: other.clone(), to_seat: 1 }).unwrap();
    let r = rejected(
        at(&mut g, &other, TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(9_900), source: FundsSource::Cash, supervisor_id: None }),
        "SUPERVISOR_REQUIRED",
    );
    assert_eq!((r.reason.rule, r.number("since_deal_cents")), ("R-CHIP-2", Some(d(9_900))));
    // A buy-in keyed wrong and corrected away counts no more.
    g.table(buy_in(2, "P2", d(9_500))).unwrap();
    let index = g.world.log.iter().rposition(|(_, e)| e.event_type() == "BoughtIn").expect("the buy-in");
    g.table(undo(&g, index, "BoughtIn", "keyed 9,500 for 950")).unwrap();
    assert_eq!(g.state().seat(2).map(|s| s.bought_since_deal_cents), Some(0));
    g.table(buy_in(2, "P2", d(950))).unwrap();
}

/// A $5/$10 table whose minimum playable chip is $5, with $1 chips in its set (tip chips).
fn with_tip_chips() -> TableConfig {
    let mut c = TableConfig::no_limit_holdem(d(5), d(10));
    c.chip_set = ChipSet { denominations_cents: vec![d(1), d(5), d(25), d(100)], min_playable_chip_cents: d(5) };
    c.buy_in.min_cents = d(100);
    c.fee = FeePolicy::NoFee;
    c
}

/// A correction, approved, of the table event at `version` (of `event_type`, with `postings`).
fn correct_at(version: u64, event_type: &str, postings: Vec<Posting>) -> TableOp {
    let mut op = correct(&format!("evt-{version}"), version, postings);
    if let TableOp::Correct { reverses_event_types, .. } = &mut op {
        *reverses_event_types = vec![event_type.into()];
    }
    op
}

fn color_down(g: &mut Game, table: &TableId, seat: Seat) -> u64 {
    let five = ChipCount { denomination_cents: d(5), count: 1 };
    let ones = ChipCount { denomination_cents: d(1), count: 5 };
    at(g, table, TableOp::ColorChange { seat, give: vec![five], receive: vec![ones] }).unwrap();
    g.world.tables[table].version
}

/// R-UNIT-2 (the wave-2 pass): the tip chips in a stack go with a house move (they had become
/// playable at the new seat), and a stack that is only tip chips is broke: more chips are a
/// re-buy of at least the minimum (a $5 top-up had been dealt in).
#[test]
fn r_unit_2_tip_chips_go_with_a_house_move_and_alone_are_no_stack() {
    let mut g = Game::new(with_tip_chips(), &[(1, d(100)), (2, d(100))]);
    let here = tid(TABLE);
    color_down(&mut g, &here, 1);
    let there = open_second_table(&mut g, "T2", with_tip_chips());
    at(&mut g, &here, TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: there.clone(), to_seat: 3 }).unwrap();
    let moved = &g.world.tables[&there];
    assert_eq!((moved.stack_cents(3), moved.playable_stack_cents(3)), (d(100), d(95)));
    // Seat 2, heads-up with seat 5, colors down and loses all it plays: $5 of tip chips left,
    // no stack; a $5 top-up is no re-buy.
    g.table(buy_in(5, "P5", d(100))).unwrap();
    color_down(&mut g, &here, 2);
    g.start(1, 2, &[2, 5]);
    g.post(2, PostKind::SmallBlind, d(5)).unwrap();
    g.post(5, PostKind::BigBlind, d(10)).unwrap();
    g.ok(2, Action::AllIn);
    g.ok(5, Action::Call);
    g.showdown(vec![vec![5], vec![2]]);
    g.end();
    assert_eq!((g.stack(2), g.state().playable_stack_cents(2)), (d(5), 0), "all in for $95: the $1 chips behind");
    let top_up = TableOp::TopUp { seat: 2, player_id: pid("P2"), amount_cents: d(5), source: FundsSource::Cash, supervisor_id: None };
    let r = rejected(g.table(top_up), "BUY_IN_BELOW_MINIMUM");
    assert_eq!(r.reason.rule, "R-STAKE-3");
}

/// R-UNIT-2 (the wave-2b pass): moved to a table whose smallest playable chip is $1, the $1 chips
/// of a color change play there; moved to one whose smallest is $5 too, they stay tip chips.
#[test]
fn r_unit_2_tip_chips_play_at_a_table_that_plays_them() {
    let mut g = Game::new(with_tip_chips(), &[(1, d(100)), (2, d(100))]);
    let here = tid(TABLE);
    color_down(&mut g, &here, 1);
    color_down(&mut g, &here, 2);
    let mut ones_play = with_tip_chips();
    ones_play.chip_set.min_playable_chip_cents = d(1);
    let small = open_second_table(&mut g, "T2", ones_play);
    let same = open_second_table(&mut g, "T3", with_tip_chips());
    at(&mut g, &here, TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: small.clone(), to_seat: 3 }).unwrap();
    at(&mut g, &here, TableOp::MovePlayer { seat: 2, player_id: pid("P2"), to_table_id: same.clone(), to_seat: 4 }).unwrap();
    assert_eq!(g.world.tables[&small].playable_stack_cents(3), d(100), "the $1 chips play at a table whose smallest chip is $1");
    assert_eq!(g.world.tables[&same].playable_stack_cents(4), d(95));
}

/// R-UNIT-2 (the wave-2 pass): a color change or a tip corrected away gives the seat its tip
/// chips back as they were before it (a color-up corrected had left them playable).
#[test]
fn r_unit_2_a_corrected_color_change_or_tip_puts_the_tip_chips_back() {
    let mut g = Game::new(with_tip_chips(), &[(1, d(100))]);
    let here = tid(TABLE);
    color_down(&mut g, &here, 1);
    let five = ChipCount { denomination_cents: d(5), count: 1 };
    let ones = ChipCount { denomination_cents: d(1), count: 5 };
    let up = at(&mut g, &here, TableOp::ColorChange { seat: 1, give: vec![ones], receive: vec![five] }).unwrap();
    let up_version = g.state().version;
    assert_eq!(g.state().playable_stack_cents(1), d(100));
    g.table(correct_at(up_version, "ColorChanged", up[0].1.postings().to_vec())).unwrap();
    assert_eq!(g.state().playable_stack_cents(1), d(95), "the five $1 chips are tip chips again");
    let tip = g.table(TableOp::Tip { seat: 1, amount_cents: d(2) }).unwrap();
    let tip_version = g.state().version;
    assert_eq!(g.state().seat(1).map(|s| s.tip_chips_cents), Some(d(3)));
    g.table(correct_at(tip_version, "Tipped", tip[0].1.postings().to_vec())).unwrap();
    assert_eq!(g.state().seat(1).map(|s| (s.stack_cents, s.tip_chips_cents)), Some((d(100), d(5))));
    assert_eq!(g.state().playable_stack_cents(1), d(95));
}

/// R-UNIT-2 (the wave-2b pass): a color change corrected after the tip it paid, then the tip:
/// the seat is as it was before both, all its chips playable (corrected in this order, $5 of tip
/// chips had come back with the tip, where none remained; the other order was right).
#[test]
fn r_unit_2_a_color_change_corrected_before_its_tip_leaves_no_tip_chips() {
    let mut g = Game::new(with_tip_chips(), &[(1, d(100))]);
    let here = tid(TABLE);
    let down_version = color_down(&mut g, &here, 1);
    let down_postings = g.world.log.iter().rev().find(|(_, e)| e.event_type() == "ColorChanged").map(|(_, e)| e.postings().to_vec()).expect("the color change");
    let tip = g.table(TableOp::Tip { seat: 1, amount_cents: d(5) }).unwrap();
    let tip_version = g.state().version;
    assert_eq!(g.state().seat(1).map(|s| (s.stack_cents, s.tip_chips_cents)), Some((d(95), 0)), "the tip is paid with the $1 chips");
    g.table(correct_at(down_version, "ColorChanged", down_postings)).unwrap();
    assert_eq!(g.state().seat(1).map(|s| (s.stack_cents, s.tip_chips_cents)), Some((d(95), 0)));
    g.table(correct_at(tip_version, "Tipped", tip[0].1.postings().to_vec())).unwrap();
    assert_eq!(g.state().seat(1).map(|s| (s.stack_cents, s.tip_chips_cents)), Some((d(100), 0)), "no tip chips: none were ever kept");
    assert_eq!(g.state().playable_stack_cents(1), d(100));
}

/// R-UNIT-2 (the wave-2b pass): tip chips taken off with the stack are gone; chips bought after
/// are not tip chips ($5 of them had come back against a fresh $100).
#[test]
fn r_unit_2_tip_chips_taken_off_with_the_stack_do_not_come_back() {
    let mut c = with_tip_chips();
    c.refreshment_allowance_cents = d(100);
    let mut g = Game::new(c, &[(1, d(100))]);
    let here = tid(TABLE);
    color_down(&mut g, &here, 1);
    g.table(TableOp::RemoveChips { seat: 1, amount_cents: d(100), player_id: Some(pid("P1")) }).unwrap();
    assert_eq!(g.state().seat(1).map(|s| (s.stack_cents, s.tip_chips_cents)), Some((0, 0)));
    let top_up = TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(100), source: FundsSource::Cash, supervisor_id: None };
    g.table(top_up).unwrap();
    assert_eq!(g.state().playable_stack_cents(1), d(100));
}

/// R-UNIT-2 with R-STAKE-1 (the seating pass): a color change gives a seat at most one minimum
/// playable chip's worth of tip chips ($195 of a $200 stack colored into $1 chips at a $5 table
/// had played a hand for $5 and been colored back).
#[test]
fn r_unit_2_a_color_change_gives_at_most_one_chip_of_tip_chips() {
    let mut g = Game::new(with_tip_chips(), &[(1, d(200))]);
    let here = tid(TABLE);
    let down = |fives: i64| TableOp::ColorChange {
        seat: 1,
        give: vec![ChipCount { denomination_cents: d(5), count: fives }],
        receive: vec![ChipCount { denomination_cents: d(1), count: 5 * fives }],
    };
    let r = rejected(at(&mut g, &here, down(39)), "TIP_CHIPS_ABOVE_ONE_CHIP");
    assert_eq!((r.number("tip_chips_cents"), r.number("min_playable_chip_cents")), (Some(d(195)), Some(d(5))));
    at(&mut g, &here, down(1)).unwrap();
    rejected(at(&mut g, &here, down(1)), "TIP_CHIPS_ABOVE_ONE_CHIP");
    assert_eq!(g.state().playable_stack_cents(1), d(195));
}

/// R-UNIT-2 with R-STAKE-1 (the wave-2 pass): corrections of color-ups give back no more tip
/// chips than one color change may ($6 had piled up a dollar a correction and stayed out of an
/// all-in).
#[test]
fn r_unit_2_corrections_pile_up_no_tip_chips() {
    let mut g = Game::new(with_tip_chips(), &[(1, d(200))]);
    let here = tid(TABLE);
    let five = ChipCount { denomination_cents: d(5), count: 1 };
    let ones = ChipCount { denomination_cents: d(1), count: 5 };
    let mut ups = Vec::new();
    color_down(&mut g, &here, 1);
    for _ in 0..2 {
        let up = at(&mut g, &here, TableOp::ColorChange { seat: 1, give: vec![ones.clone()], receive: vec![five.clone()] }).unwrap();
        ups.push((g.state().version, up[0].1.postings().to_vec()));
        color_down(&mut g, &here, 1);
    }
    let (version, postings) = ups.pop().unwrap();
    let r = rejected(g.table(correct_at(version, "ColorChanged", postings)), "TIP_CHIPS_ABOVE_ONE_CHIP");
    assert_eq!((r.number("tip_chips_cents"), r.number("min_playable_chip_cents")), (Some(d(10)), Some(d(5))));
    assert_eq!(g.state().playable_stack_cents(1), d(195));
}
