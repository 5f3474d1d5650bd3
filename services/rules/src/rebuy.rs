//! The re-buy wait (R-REBUY-1, R-REBUY-2): a player who cashed out of a game and returns to
//! the same game and limits (anywhere in the room) within the wait window must buy in for at
//! least what they left with, even above the table maximum. Leaving is never restricted.

use crate::config::RebuyPolicy;
use crate::money::Cents;
use crate::player::PlayerState;
use crate::rejection::{Reason, Rejection};

pub const REBUY_BELOW_AMOUNT_LEFT: Reason = Reason::new("REBUY_BELOW_AMOUNT_LEFT", "R-REBUY-1");

pub const FULL_REBUY_REQUIRED: Reason = Reason::new("FULL_REBUY_REQUIRED", "R-REBUY-3");

pub const REASONS: &[Reason] = &[REBUY_BELOW_AMOUNT_LEFT, FULL_REBUY_REQUIRED];

/// R-REBUY-3 (open stakes): after winning a short all-in pot, chips are added only by a
/// re-buy to a full buy-in, and nothing is borrowed.
pub fn check_full_rebuy(seat: &crate::table::SeatState, min_buy_in_cents: Cents, adding_cents: Option<Cents>) -> Result<(), Rejection> {
    if !seat.needs_full_rebuy {
        return Ok(());
    }
    match adding_cents {
        Some(a) if seat.stack_cents + a >= min_buy_in_cents => Ok(()),
        _ => Err(Rejection::new(FULL_REBUY_REQUIRED, "after a short all-in win, re-buy to a full buy-in first")
            .with("stack_cents", seat.stack_cents)
            .with("min_buy_in_cents", min_buy_in_cents)),
    }
}

/// The smallest buy-in allowed by the re-buy wait at `now_ms`, if one applies: the amount of
/// the most recent departure from `game_key` within the window, less the tolerance.
pub fn required_min_cents(player: &PlayerState, game_key: &str, now_ms: i64, policy: &RebuyPolicy) -> Option<Cents> {
    let d = player
        .departures
        .iter()
        .rev()
        .find(|d| d.game_key == game_key && now_ms >= d.at_unix_ms && now_ms - d.at_unix_ms < policy.wait_window_ms)?;
    let required = d.amount_cents - d.amount_cents * policy.tolerance_bps / 10_000;
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
        let policy = RebuyPolicy { wait_window_ms: hour, tolerance_bps: 0 };
        // (game, minutes after leaving, expected requirement)
        let cases = [
            ("NLHE 100/200", 1, Some(30_000)),
            ("NLHE 100/200", 59, Some(30_000)),
            ("NLHE 100/200", 60, None),
            ("NLHE 200/500", 1, None),
        ];
        for (game, minutes, want) in cases {
            assert_eq!(required_min_cents(&p, game, 1_000_000 + minutes * 60_000, &policy), want, "{game} {minutes}");
        }
        let tolerant = RebuyPolicy { wait_window_ms: hour, tolerance_bps: 1000 };
        assert_eq!(required_min_cents(&p, "NLHE 100/200", 1_060_000, &tolerant), Some(27_000));
    }
}
