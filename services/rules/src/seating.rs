//! Seats: sitting down, and house moves that keep the stack (R-STAKE-6).

use crate::accounts::{Account, Posting};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::{PlayerId, Seat, StreamId, TableId};
use crate::table::{TableEvent, TableState};
use crate::Event;
use crate::player::{PlayerEvent, PlayerState};

pub const INVALID_SEAT: Reason = Reason::new("INVALID_SEAT", "R-STAKE-4");
pub const SEAT_TAKEN: Reason = Reason::new("SEAT_TAKEN", "R-STAKE-4");
pub const SEAT_EMPTY: Reason = Reason::new("SEAT_EMPTY", "R-STAKE-4");
pub const PLAYER_ALREADY_SEATED: Reason = Reason::new("PLAYER_ALREADY_SEATED", "R-STAKE-4");

/// A house move (R-STAKE-6) goes to another table: a seat change at one table is a cash-out and a
/// buy-in (it had been answered as a table not open, under R-AUDIT-2: the stakes pass).
pub const MOVE_TO_SAME_TABLE: Reason = Reason::new("MOVE_TO_SAME_TABLE", "R-STAKE-6");
/// R-REBUY-1: one patron, one id whatever its case: an id that differs from a known patron's
/// (at the table, or in the store, checked by the server) only in case is that patron.
pub const PLAYER_ID_IN_ANOTHER_CASE: Reason = Reason::new("PLAYER_ID_IN_ANOTHER_CASE", "R-REBUY-1");
pub const REASONS: &[Reason] = &[INVALID_SEAT, SEAT_TAKEN, SEAT_EMPTY, PLAYER_ALREADY_SEATED, MOVE_TO_SAME_TABLE, PLAYER_ID_IN_ANOTHER_CASE];

/// Seat numbers run 1..=max_seats of the table's configuration.
pub fn check_seat_number(table: &TableState, seat: Seat) -> Result<(), Rejection> {
    let (_, config) = crate::ledger::open_table(table)?;
    if seat == 0 || seat > config.max_seats {
        return Err(Rejection::new(INVALID_SEAT, format!("no seat {seat} at this table"))
            .with("seat", seat as Cents)
            .with("max_seats", config.max_seats as Cents));
    }
    Ok(())
}

/// The seat is free for `player_id` (empty, or already held by them without chips).
pub fn check_free_for(table: &TableState, seat: Seat, player_id: &PlayerId) -> Result<(), Rejection> {
    check_seat_number(table, seat)?;
    if let Some(s) = table.seat(seat)
        && &s.player_id != player_id {
            return Err(Rejection::new(SEAT_TAKEN, format!("seat {seat} is taken")).with("seat", seat as Cents));
        }
    // One patron, one id whatever its case (R-REBUY-1): "p1" is refused a seat beside "P1", who
    // sits without chips and so has no patron record the store could compare it with (the
    // client pass).
    let same = |other: &PlayerId| other.as_str().to_lowercase() == player_id.as_str().to_lowercase();
    let elsewhere = table
        .seats
        .iter()
        .enumerate()
        .find_map(|(i, s)| s.as_ref().filter(|s| i + 1 != seat as usize && same(&s.player_id)).map(|s| (i + 1, s)));
    if let Some((at, s)) = elsewhere {
        if &s.player_id == player_id {
            return Err(Rejection::new(PLAYER_ALREADY_SEATED, "the player already has a seat at this table").with("seat", at as Cents));
        }
        let known = &s.player_id;
        return Err(Rejection::new(PLAYER_ID_IN_ANOTHER_CASE, format!("patron {known} sits at this table under that id in another case: use {known}"))
            .with("seat", at as Cents));
    }
    Ok(())
}

pub fn decide_seat(table: &TableState, seat: Seat, player_id: &PlayerId) -> Result<TableEvent, Rejection> {
    // A game that has ended takes no one (the cage pass: a patron seated after CloseGame could
    // never buy in, an open "seated" session for good).
    if table.game_closed {
        return Err(Rejection::new(crate::table_stakes::GAME_CLOSED, "the game has ended: no one is seated").with("seat", seat as Cents));
    }
    check_free_for(table, seat, player_id)?;
    if table.seat(seat).is_some() {
        return Err(Rejection::new(SEAT_TAKEN, format!("seat {seat} is taken")).with("seat", seat as Cents));
    }
    Ok(TableEvent::PlayerSeated { seat, player_id: player_id.clone() })
}

/// R-STAKE-6: the house moves a player to another table with the stack unchanged (even below
/// that table's minimum), between the player's hands. Postings ride on the leaving side; the
/// patron's held seat follows (R-REBUY-1: not a departure, and still one seat per game). IOUs
/// written at the seat may not leave the table (R-MARK-3). A move into another game is bound by
/// the re-buy wait of that game like a buy-in (R-REBUY-1: a move is no way back in below the
/// amount left with); within one game it keeps the stack as it is, even below the minimum.
#[allow(clippy::too_many_arguments)]
pub fn decide_move(
    ctx: &crate::CommandContext,
    from: &TableState,
    to: &TableState,
    player: &PlayerState,
    seat: Seat,
    player_id: &PlayerId,
    to_table_id: &TableId,
    to_seat: Seat,
) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let (from_id, from_config) = crate::ledger::open_table(from)?;
    let s = crate::table_stakes::seated_as(from, seat, player_id)?;
    crate::ledger::not_owed_by_hand(from, seat)?;
    if from_id == to_table_id {
        return Err(Rejection::new(MOVE_TO_SAME_TABLE, "a house move goes to another table: a seat change here is a cash-out and a buy-in")
            .with("seat", Cents::from(seat))
            .with("to_seat", Cents::from(to_seat)));
    }
    if to.table_id.as_ref() != Some(to_table_id) {
        return Err(Rejection::new(crate::ledger::TABLE_NOT_OPEN, "the destination is not another open table"));
    }
    let (_, to_config) = crate::ledger::open_table(to)?;
    if to.game_closed {
        return Err(Rejection::new(crate::table_stakes::GAME_CLOSED, "the destination game has ended"));
    }
    if s.iou_cents > 0 {
        return Err(Rejection::new(crate::iou::IOU_OUTSTANDING, "IOUs in play may not leave the table: settle them first")
            .with("iou_cents", s.iou_cents));
    }
    crate::iou::check_loans_paid(from, seat)?;
    crate::iou::check_stays_on_table(from, s.stack_cents, 0)?;
    // The seat being left does not count as a second seat of the destination's game.
    let mut staying = player.clone();
    staying.seats.retain(|held| &held.table_id != from_id);
    let to_game = to_config.same_game();
    crate::rebuy::check_second_seat(&staying, to_table_id, &to_game, &to_config.rebuy)?;
    crate::rebuy::check_departures_bound(&staying, &to_game, ctx.at_unix_ms)?;
    if from_config.same_game().key() != to_game.key() {
        // Into another game a move is a way in like a buy-in (R-STAKE-6 keeps a stack as it is
        // within one game only): the re-buy wait, and the destination's buy-in limits (R-STAKE-3)
        // for the chips it brings (a seat without chips brings none: its first are a buy-in).
        crate::rebuy::check(player, &to_game, ctx.at_unix_ms, &to_config.rebuy, s.stack_cents)?;
        let return_max = crate::rebuy::return_max_cents(player, &to_game, ctx.at_unix_ms, &to_config.rebuy);
        let max = to_config.buy_in.max_cents.max(return_max.unwrap_or(0));
        if s.stack_cents > max {
            return Err(Rejection::new(crate::table_stakes::BUY_IN_ABOVE_MAXIMUM, "a move into another game brings at most its maximum buy-in")
                .with("buy_in_cents", s.stack_cents)
                .with("max_buy_in_cents", max));
        }
        if s.stack_cents > 0 && s.stack_cents < to_config.buy_in.min_cents {
            return Err(Rejection::new(crate::table_stakes::BUY_IN_BELOW_MINIMUM, "a move into another game brings at least its minimum buy-in")
                .with("buy_in_cents", s.stack_cents)
                .with("min_buy_in_cents", to_config.buy_in.min_cents));
        }
    }
    check_free_for(to, to_seat, &s.player_id)?;
    if to.seat(to_seat).is_some() {
        return Err(Rejection::new(SEAT_TAKEN, format!("seat {to_seat} is taken")).with("seat", to_seat as Cents));
    }
    if s.cash_in_play_cents > 0 {
        return Err(Rejection::new(crate::table_stakes::CASH_IN_PLAY_NOT_CONVERTED, "convert the cash in play first")
            .with("cash_in_play_cents", s.cash_in_play_cents));
    }
    let amount = s.stack_cents;
    // Each table's event carries its own side of the move, through the house's moves account
    // (the auditor's pass: the table joined had no posting of the stack it received, so its own
    // events did not add up to its balances).
    let in_transit = Account::House(crate::accounts::HouseAccount::Moves);
    let mut postings: Vec<Posting> = Vec::with_capacity(2);
    crate::accounts::transfer(&mut postings, Account::Seat { table_id: from_id.clone(), seat }, in_transit.clone(), amount);
    let mut arriving: Vec<Posting> = Vec::with_capacity(2);
    crate::accounts::transfer(&mut arriving, in_transit, Account::Seat { table_id: to_table_id.clone(), seat: to_seat }, amount);
    let out = TableEvent::PlayerMovedOut {
        seat,
        player_id: s.player_id.clone(),
        to_table_id: to_table_id.clone(),
        to_seat,
        amount_cents: amount,
        postings,
    };
    // Into another game the seat leaves the first with what it took off (counted in that
    // departure, `left_game`) and with its binding to the first game's amount: the new game
    // starts neither (the second stakes pass: both were counted again at the new game).
    let same_game = from_config.same_game().key() == to_game.key();
    let arrive = TableEvent::PlayerMovedIn {
        seat: to_seat,
        player_id: s.player_id.clone(),
        from_table_id: from_id.clone(),
        amount_cents: amount,
        removed_cents: if same_game { s.removed_cents } else { 0 },
        bought_in: s.has_bought_in,
        bound: crate::rebuy::bound_min_stack_cents(s, ctx.at_unix_ms)
            .filter(|_| same_game)
            .map(|min_stack_cents| (min_stack_cents, s.bound_until_unix_ms)),
        needs_full_rebuy: s.needs_full_rebuy,
        time_paid_until_unix_ms: s.time_paid_until_unix_ms,
        bought_since_deal_cents: s.bought_since_deal_cents,
        tip_chips_cents: tip_chips_at(s.tip_chips_cents, from_config, to_config),
        postings: arriving,
    };
    // R-REBUY-1: moved into another game with chips, the patron has left the first game with
    // them: a return to it is bound as after a cash-out (the stakes pass: moved from NLHE to
    // PLO with $200, cashed out there, back at NLHE for $40).
    let from_game = from_config.same_game();
    // What it left with counts the chips taken off within the refreshment allowance too.
    let left_game = (from_game.key() != to_game.key() && amount > 0).then(|| crate::player::Departure {
        game_key: from_game.key().to_owned(),
        table_id: from_id.clone(),
        amount_cents: amount + s.removed_cents,
        at_unix_ms: ctx.at_unix_ms,
        wait: Some(from_config.rebuy.wait()),
    });
    let moved = PlayerEvent::MovedTable {
        from_table_id: from_id.clone(),
        to_table_id: to_table_id.clone(),
        to_seat,
        game_key: to_game.key().to_owned(),
        left_game,
    };
    Ok(vec![
        (StreamId::Table(from_id.clone()), Event::Table(out)),
        (StreamId::Table(to_table_id.clone()), Event::Table(arrive)),
        (StreamId::Player(player_id.clone()), Event::Player(moved)),
    ])
}

/// R-UNIT-2: the tip chips a moved stack holds at the table it moves to: none where every chip
/// of the first table's set below its minimum playable chip plays (the wave-2b pass: five $1
/// chips had stayed barred at a table whose smallest playable chip is $1); else all of them, as
/// which of them are which is not known.
fn tip_chips_at(tip_chips_cents: Cents, from: &crate::config::TableConfig, to: &crate::config::TableConfig) -> Cents {
    let from_set = &from.chip_set;
    let barred_there = from_set
        .denominations_cents
        .iter()
        .any(|&chip| chip < from_set.min_playable_chip_cents && chip < to.chip_set.min_playable_chip_cents);
    if barred_there { tip_chips_cents } else { 0 }
}
