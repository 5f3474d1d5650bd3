//! The re-buy wait (R-REBUY-1, R-REBUY-2): a player who cashed out of a game and returns to
//! the same game and limits (anywhere in the room) within the wait window must buy in for at
//! least what they left with, even above the table maximum. Leaving is never restricted.
//!
//! The decision is made on the log, not on clocks: every departure the patron's stream holds
//! counts while it is within the window of the command's time, even one stamped *after* that
//! time (a cash-out recorded by another replica whose clock runs ahead, or one that committed
//! while this command was being decided and retried). Holding two seats in one game would let a
//! player leave the big stack and play on with the small one, so a second seat in the same
//! game and limits is refused unless the room allows it; then leaving one seat binds the
//! others (`TableEvent::SeatBound`).

use crate::config::RebuyPolicy;
use crate::money::Cents;
use crate::player::PlayerState;
use crate::rejection::{Reason, Rejection};
use crate::streams::TableId;

pub const REBUY_BELOW_AMOUNT_LEFT: Reason = Reason::new("REBUY_BELOW_AMOUNT_LEFT", "R-REBUY-1");
pub const SECOND_SEAT_SAME_GAME: Reason = Reason::new("SECOND_SEAT_SAME_GAME", "R-REBUY-1");

pub const FULL_REBUY_REQUIRED: Reason = Reason::new("FULL_REBUY_REQUIRED", "R-REBUY-3");

pub const REASONS: &[Reason] = &[REBUY_BELOW_AMOUNT_LEFT, SECOND_SEAT_SAME_GAME, FULL_REBUY_REQUIRED];

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
    let off = i128::from(amount_cents) * i128::from(policy.tolerance_bps.clamp(0, 10_000)) / 10_000;
    amount_cents - off as Cents
}

/// The smallest buy-in allowed by the re-buy wait at `now_ms`, if one applies: the amount of
/// the most recent departure from `game_key` within the window, less the tolerance.
pub fn required_min_cents(player: &PlayerState, game_key: &str, now_ms: i64, policy: &RebuyPolicy) -> Option<Cents> {
    let d = player
        .departures
        .iter()
        .rev()
        .find(|d| d.game_key == game_key && within_window(d.at_unix_ms, now_ms, policy))?;
    let required = less_tolerance(d.amount_cents, policy);
    (required > 0).then_some(required)
}

/// Refuse a return buy-in below the amount left with.
pub fn check(player: &PlayerState, game_key: &str, now_ms: i64, policy: &RebuyPolicy, amount_cents: Cents) -> Result<(), Rejection> {
    if let Some(required) = required_min_cents(player, game_key, now_ms, policy)
        && amount_cents < required {
            let left = player.departures.iter().rev().find(|d| d.game_key == game_key).map_or(required, |d| d.amount_cents);
            return Err(Rejection::new(REBUY_BELOW_AMOUNT_LEFT, "returning within the wait window: buy in for at least the amount left with")
                .with("amount_left_with_cents", left)
                .with("required_min_cents", required)
                .with("buy_in_cents", amount_cents));
        }
    Ok(())
}

/// Refuse a seat in `game_key` at `table_id` while the patron holds another seat of the same
/// game and limits, unless the room allows a second seat.
pub fn check_second_seat(player: &PlayerState, table_id: &TableId, game_key: &str, policy: &RebuyPolicy) -> Result<(), Rejection> {
    if policy.allow_second_seat {
        return Ok(());
    }
    if let Some(held) = player.other_seats_in_game(game_key, table_id).next() {
        return Err(Rejection::new(
            SECOND_SEAT_SAME_GAME,
            format!("the player already holds seat {} at table {} of this game and limits", held.seat, held.table_id),
        )
        .with("held_seat", Cents::from(held.seat)));
    }
    Ok(())
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
        let mut p = PlayerState::default();
        p.departures.push(Departure {
            game_key: "NLHE 100/200".into(),
            table_id: TableId::new("T2").unwrap(),
            amount_cents: 30_000,
            at_unix_ms: 1_000_000,
        });
        let hour = 3_600_000;
        let policy = RebuyPolicy { wait_window_ms: hour, tolerance_bps: 0, allow_second_seat: false };
        // (game, minutes after leaving, expected requirement)
        let cases = [
            ("NLHE 100/200", 1, Some(30_000)),
            ("NLHE 100/200", 59, Some(30_000)),
            ("NLHE 100/200", 60, None),
            ("NLHE 200/500", 1, None),
            // Stamped after the buy-in's own time (another replica's clock): it still binds.
            ("NLHE 100/200", -5, Some(30_000)),
        ];
        for (game, minutes, want) in cases {
            assert_eq!(required_min_cents(&p, game, 1_000_000 + minutes * 60_000, &policy), want, "{game} {minutes}");
        }
        let tolerant = RebuyPolicy { wait_window_ms: hour, tolerance_bps: 1000, allow_second_seat: false };
        assert_eq!(required_min_cents(&p, "NLHE 100/200", 1_060_000, &tolerant), Some(27_000));
    }
}
