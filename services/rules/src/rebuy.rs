//! The re-buy wait (R-REBUY-1, R-REBUY-2): a player who cashed out of a game and returns to
//! the same game and limits (anywhere in the room) within the wait window must buy in for at
//! least what they left with, even above the table maximum. Leaving is never restricted.
//!
//! Every departure with chips binds while it is within the window, until the patron returns
//! to the game with a buy-in that meets it: the largest one says how much. A later departure
//! for less does not undo an earlier one (a seat taken and left without chips, or a second
//! seat funded before, would otherwise take the binding away); a return judged against them
//! meets them all (`PlayerState::unmet_departures`).
//!
//! The decision is made on the log, not on clocks: every departure the patron's stream holds
//! counts while it is within the window of the command's time, even one stamped *after* that
//! time (a cash-out recorded by another replica whose clock runs ahead, or one that committed
//! while this command was being decided and retried). Holding two seats in one game would let a
//! player leave the big stack and play on with the small one, so a second seat in the same
//! game and limits is refused unless the room allows it; then leaving one seat binds the
//! others (`TableEvent::SeatBound`).

use crate::config::{RebuyPolicy, SameGame};
use crate::money::Cents;
use crate::player::{Departure, PlayerState};
use crate::rejection::{Reason, Rejection};
use crate::streams::TableId;

pub const REBUY_BELOW_AMOUNT_LEFT: Reason = Reason::new("REBUY_BELOW_AMOUNT_LEFT", "R-REBUY-1");
pub const SECOND_SEAT_SAME_GAME: Reason = Reason::new("SECOND_SEAT_SAME_GAME", "R-REBUY-1");

pub const FULL_REBUY_REQUIRED: Reason = Reason::new("FULL_REBUY_REQUIRED", "R-REBUY-3");

/// A patron holding `MAX_SEATS_HELD` seats takes no further one: the bound list of seats held
/// is what one seat per game and the binding of the other seats are judged on (a ninth seat
/// had pushed out the first, which then played on unbound: the stakes pass).
pub const SEATS_HELD_AT_BOUND: Reason = Reason::new("SEATS_HELD_AT_BOUND", "R-REBUY-1");
/// A patron who left as many games as the record keeps, each still within its wait, joins one of
/// them (meeting its departure) before any other: a further game's departure would push one out
/// (the second stakes pass: 128 games joined and left with the same $200 pushed out the one that
/// bound, and $40 bought back in at once).
pub const DEPARTURES_AT_BOUND: Reason = Reason::new("DEPARTURES_AT_BOUND", "R-REBUY-1");
pub const REASONS: &[Reason] = &[REBUY_BELOW_AMOUNT_LEFT, SECOND_SEAT_SAME_GAME, FULL_REBUY_REQUIRED, SEATS_HELD_AT_BOUND, DEPARTURES_AT_BOUND];

/// Refuse a buy-in to a game none of the patron's unmet departures is from while they fill the
/// record (each within the longest wait a table may have at `now_ms`): see [`DEPARTURES_AT_BOUND`].
pub fn check_departures_bound(player: &PlayerState, game: &SameGame, now_ms: i64) -> Result<(), Rejection> {
    let live: Vec<&Departure> = player
        .unmet_departures
        .iter()
        .filter(|d| now_ms.saturating_sub(d.at_unix_ms) < crate::config::MAX_REBUY_WAIT_WINDOW_MS)
        .collect();
    if live.len() >= crate::player::MAX_UNMET_DEPARTURES && !live.iter().any(|d| game.holds(&d.game_key)) {
        return Err(Rejection::new(DEPARTURES_AT_BOUND, "the patron left as many games as the record keeps within their waits: return to one of them first, or wait")
            .with("unmet_departures", live.len() as Cents)
            .with("max_unmet_departures", crate::player::MAX_UNMET_DEPARTURES as Cents));
    }
    Ok(())
}

/// R-REBUY-3 (open stakes): after winning a short all-in pot, chips are added only by a
/// re-buy to a full buy-in, and nothing is borrowed.
pub fn check_full_rebuy(seat: &crate::table::SeatState, min_buy_in_cents: Cents, adding_cents: Option<Cents>) -> Result<(), Rejection> {
    if !seat.needs_full_rebuy {
        return Ok(());
    }
    match adding_cents {
        Some(a) if seat.stack_cents.saturating_add(a) >= min_buy_in_cents => Ok(()),
        _ => Err(Rejection::new(FULL_REBUY_REQUIRED, "after a short all-in win, re-buy to a full buy-in first")
            .with("stack_cents", seat.stack_cents)
            .with("min_buy_in_cents", min_buy_in_cents)),
    }
}

/// Is a departure at `left_at_ms` still binding at `now_ms`? Within the window after it, and
/// always when it is stamped later than `now_ms` (the log holds it, so it happened first).
pub fn within_window(left_at_ms: i64, now_ms: i64, policy: &RebuyPolicy) -> bool {
    now_ms.saturating_sub(left_at_ms) < policy.wait_window_ms
}

/// What a return must bring after leaving with `amount_cents`: the amount less the tolerance.
pub fn required_amount_cents(amount_cents: Cents, policy: &RebuyPolicy) -> Cents {
    less_tolerance(amount_cents, policy)
}

/// `amount_cents` less the tolerance (basis points, bounded by the configuration).
fn less_tolerance(amount_cents: Cents, policy: &RebuyPolicy) -> Cents {
    less_tolerance_bps(amount_cents, policy.tolerance_bps)
}

/// `amount_cents` less a tolerance of `tolerance_bps` basis points (clamped to 0..=100%): what a
/// return must bring at a table of that tolerance.
pub fn less_tolerance_bps(amount_cents: Cents, tolerance_bps: i64) -> Cents {
    let off = i128::from(amount_cents) * i128::from(tolerance_bps.clamp(0, 10_000)) / 10_000;
    amount_cents - off as Cents
}

/// The departure that binds a return to `game` at `now_ms`, if one does: of the patron's
/// departures from the game still unmet by a return (`PlayerState::unmet_departures`) and within
/// the window, the one that asks the most, its amount less its own tolerance. Every one of them
/// binds; the strictest says how much (the largest amount had: $200 at a 20% tolerance asked
/// $160 while $180 left at no tolerance asked $180: the fixes' pass).
fn binding_departure<'p>(player: &'p PlayerState, game: &SameGame, now_ms: i64, policy: &RebuyPolicy) -> Option<&'p Departure> {
    player
        .unmet_departures
        .iter()
        .filter(|d| game.holds(&d.game_key) && within_window(d.at_unix_ms, now_ms, &wait_of(d, policy)))
        .max_by_key(|d| (less_tolerance(d.amount_cents, &wait_of(d, policy)), d.amount_cents))
}

/// The wait a departure binds a return by: the longer window and the smaller tolerance of the
/// table left and `policy`, the table returned to's (one rule for every table of the game,
/// whichever the patron picks).
fn wait_of(departure: &Departure, policy: &RebuyPolicy) -> RebuyPolicy {
    match departure.wait {
        Some((window_ms, tolerance_bps)) => stricter(policy, window_ms, tolerance_bps),
        None => policy.clone(),
    }
}

/// The wait of two tables of one game taken together: the longer window and the smaller
/// tolerance of `policy` and the other table's (`window_ms`, `tolerance_bps`).
pub fn stricter(policy: &RebuyPolicy, window_ms: i64, tolerance_bps: i64) -> RebuyPolicy {
    let mut wait = policy.clone();
    wait.wait_window_ms = wait.wait_window_ms.max(window_ms);
    wait.tolerance_bps = wait.tolerance_bps.min(tolerance_bps);
    wait
}

/// What a return within the re-buy wait at `now_ms` may bring above the table's maximum, if a
/// wait applies: the most the patron left `game` with among the departures that bind. The
/// tolerance lowers the least a return brings, not the most (the seating pass: $395 left with at
/// a 20% tolerance could come back as $316 only, the rest kept off the table).
pub fn return_max_cents(player: &PlayerState, game: &SameGame, now_ms: i64, policy: &RebuyPolicy) -> Option<Cents> {
    player
        .unmet_departures
        .iter()
        .filter(|d| game.holds(&d.game_key) && within_window(d.at_unix_ms, now_ms, &wait_of(d, policy)))
        .map(|d| d.amount_cents)
        .max()
        .filter(|amount| *amount > 0)
}

/// Refuse a return buy-in below the amount left with.
pub fn check(player: &PlayerState, game: &SameGame, now_ms: i64, policy: &RebuyPolicy, amount_cents: Cents) -> Result<(), Rejection> {
    if let Some(departure) = binding_departure(player, game, now_ms, policy) {
        let required = less_tolerance(departure.amount_cents, &wait_of(departure, policy));
        if amount_cents < required {
            return Err(Rejection::new(REBUY_BELOW_AMOUNT_LEFT, "returning within the wait window: buy in for at least the amount left with")
                .with("amount_left_with_cents", departure.amount_cents)
                .with("required_min_cents", required)
                .with("buy_in_cents", amount_cents));
        }
    }
    Ok(())
}

/// Refuse a seat in `game` at `table_id` while the patron holds another seat of the same
/// game and limits, unless the room allows a second seat; and any seat past the bound of seats
/// one patron holds ([`SEATS_HELD_AT_BOUND`]).
pub fn check_second_seat(player: &PlayerState, table_id: &TableId, game: &SameGame, policy: &RebuyPolicy) -> Result<(), Rejection> {
    let held_here = player.seats.iter().any(|s| &s.table_id == table_id);
    if !held_here && player.seats.len() >= crate::player::MAX_SEATS_HELD {
        return Err(Rejection::new(SEATS_HELD_AT_BOUND, "the patron holds as many seats as one patron may: leave one first")
            .with("seats_held", player.seats.len() as Cents)
            .with("max_seats_held", crate::player::MAX_SEATS_HELD as Cents));
    }
    if policy.allow_second_seat {
        return Ok(());
    }
    if let Some(held) = player.other_seats_in_game(game, table_id).next() {
        return Err(Rejection::new(
            SECOND_SEAT_SAME_GAME,
            format!("the player already holds seat {} at table {} of this game and limits", held.seat, held.table_id),
        )
        .with("held_seat", Cents::from(held.seat)));
    }
    Ok(())
}

/// The events that bring chips to a seat as a way into the game (a buy-in judged against the
/// re-buy wait): a correction of one of them leaves the seat bound again ([`binding_since`]).
pub const WAYS_IN: &[&str] = &["BoughtIn", "CashPutInPlay", "MarkerChipsSeated", "PlayerMovedIn"];

/// The largest departure from `game` the return that funded the patron's seat at `table_id`
/// met, within the wait at `now_ms` (amount less the tolerance, and when the wait ends): what
/// that return, once corrected away, leaves the seat bound to.
pub fn binding_since<'p>(
    player: &'p PlayerState,
    table_id: &crate::streams::TableId,
    game: &SameGame,
    now_ms: i64,
    policy: &RebuyPolicy,
) -> Option<(&'p Departure, Cents, i64)> {
    // The departures the seat's own return met, none if it met none: the patron's latest return
    // to the game may be another seat's (a second seat allowed), and a return still standing
    // keeps what it met (the corrections pass: a $395 return corrected away re-bound the $40
    // departure a later second seat had met, and the patron came back for $40).
    let by_return = player.seats.iter().find(|held| &held.table_id == table_id).map(|held| held.met_by_return).filter(|tag| *tag > 0)?;
    player
        .met_departures
        .iter()
        .filter(|m| m.by_return == by_return)
        .map(|m| &m.departure)
        .filter(|d| d.amount_cents > 0 && game.holds(&d.game_key) && within_window(d.at_unix_ms, now_ms, &wait_of(d, policy)))
        .max_by_key(|d| (less_tolerance(d.amount_cents, &wait_of(d, policy)), d.amount_cents))
        .map(|d| {
            let wait = wait_of(d, policy);
            (d, less_tolerance(d.amount_cents, &wait), d.at_unix_ms.saturating_add(wait.wait_window_ms))
        })
        .filter(|(_, required, _)| *required > 0)
}

/// The amount a seat left bound by a departure from another seat of the same game must reach
/// before it is dealt in again, if the binding still holds at `now_ms`.
pub fn bound_min_stack_cents(seat: &crate::table::SeatState, now_ms: i64) -> Option<Cents> {
    (seat.bound_min_stack_cents > 0 && now_ms < seat.bound_until_unix_ms).then_some(seat.bound_min_stack_cents)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::Departure;
    use crate::streams::TableId;

    #[test]
    fn r_rebuy_1_window_scope_and_tolerance() {
        let nl_100_200 = crate::config::TableConfig::no_limit_holdem(100, 200);
        let nl_200_500 = crate::config::TableConfig::no_limit_holdem(200, 500);
        let mut p = PlayerState::default();
        p.unmet_departures.push(Departure {
            game_key: nl_100_200.same_game().key().to_owned(),
            table_id: TableId::new("T2").unwrap(),
            amount_cents: 30_000,
            at_unix_ms: 1_000_000,
            wait: None,
        });
        let hour = 3_600_000;
        let policy = RebuyPolicy { wait_window_ms: hour, tolerance_bps: 0, allow_second_seat: false };
        // (game, minutes after leaving, expected requirement)
        let cases = [
            (&nl_100_200, 1, Some(30_000)),
            (&nl_100_200, 59, Some(30_000)),
            (&nl_100_200, 60, None),
            (&nl_200_500, 1, None),
            // Stamped after the buy-in's own time (another replica's clock): it still binds.
            (&nl_100_200, -5, Some(30_000)),
        ];
        for (config, minutes, want) in cases {
            let at = 1_000_000 + minutes * 60_000;
            assert_eq!(return_max_cents(&p, &config.same_game(), at, &policy), want, "{} {minutes}", config.game_key);
            assert_eq!(check(&p, &config.same_game(), at, &policy, 29_999).is_err(), want.is_some(), "{} {minutes}", config.game_key);
        }
        let tolerant = RebuyPolicy { wait_window_ms: hour, tolerance_bps: 1000, allow_second_seat: false };
        let refused = check(&p, &nl_100_200.same_game(), 1_060_000, &tolerant, 26_999).unwrap_err();
        assert_eq!(refused.number("required_min_cents"), Some(27_000));
        assert_eq!(return_max_cents(&p, &nl_100_200.same_game(), 1_060_000, &tolerant), Some(30_000), "the whole amount may come back");
    }

    /// R-REBUY-1: the scope is what the table plays. The label does not move a table in or out
    /// of it; the game, its structure and limits do; antes, rake and buy-in limits do not.
    #[test]
    fn r_rebuy_1_the_same_game_is_what_the_table_plays_not_its_label() {
        use crate::config::{BettingStructure, FeePolicy, TableConfig};
        let base = TableConfig::no_limit_holdem(100, 200);
        let key = |config: &TableConfig| config.same_game().key().to_owned();
        assert_eq!(key(&base), "holdem no limit blinds 100/200");
        for label in ["NLHE 1/2", "nlhe 100/200 ", "NLHE 100/200\u{200b}", "\u{ff2e}LHE 100/200", "PLO 200/500"] {
            let mut relabelled = base.clone();
            relabelled.game_key = label.into();
            assert_eq!(key(&relabelled), key(&base), "{label:?}");
        }
        let mut same = base.clone();
        same.ante_cents = 25;
        same.fee = FeePolicy::NoFee;
        same.buy_in.max_cents *= 2;
        assert_eq!(key(&same), key(&base), "antes, rake and buy-in limits are the same game");
        let others = [
            TableConfig::no_limit_holdem(200, 500),
            TableConfig::pot_limit_holdem(100, 200),
            TableConfig::pot_limit_omaha(100, 200),
            TableConfig::short_deck_holdem(100, 200),
            TableConfig::fixed_limit_holdem(200, 400, 4),
            TableConfig::omaha_hi_lo(200, 400),
            TableConfig::seven_card_stud(25, 50, 200, 400),
            TableConfig::razz(25, 50, 200, 400),
            {
                let mut private = base.clone();
                private.stakes = crate::config::StakesMode::OpenStakes { iou_auto_accept_below_cents: 5_000, ious_allowed: true };
                private
            },
        ];
        for other in &others {
            assert_ne!(key(other), key(&base), "{}", other.game_key);
        }
        // A cap game is its big-bet game for the wait, whatever its cap (the stakes pass: a cap
        // no stack reaches made another game of no limit), and holds what was recorded with the
        // cap in the key before.
        let mut capped = base.clone();
        capped.betting = BettingStructure::CapLimit { pot_limit: false, cap_cents: 100_000_000_000 };
        assert_eq!(key(&capped), key(&base));
        assert!(capped.same_game().holds("holdem no limit cap 100000000000 blinds 100/200"));
        // Streams recorded before the key hold the label: it still matches its own table.
        assert!(base.same_game().holds(&base.game_key));
        assert!(!base.same_game().holds("NLHE 1/2"));
        // A label that reads as another game's key is no label (the stakes pass: a PLO table
        // labelled as no limit hold'em was bound by that game's departures).
        let mut posing = TableConfig::pot_limit_omaha(100, 200);
        posing.game_key = key(&base);
        assert!(!posing.same_game().holds(&key(&base)));
    }
}
