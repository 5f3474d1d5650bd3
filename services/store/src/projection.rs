//! Domain inline projections: rows kept in the append transaction and used to enforce rules.
//!
//! Seat stacks, tray inventory and markers receivable are balances of their accounts
//! (`account_balances`, views `seat_stacks` and `tray_inventory`). The rest needs the meaning of
//! events: an [`InlineProjection`] turns events into [`ProjectionOp`]s, which PostgreSQL applies
//! in the same statement as the append (`chipledger_apply_projection_ops`, migration 0002).
//! The mapping from `chipledger_rules::Event` plugs in through this trait.

use serde::{Deserialize, Serialize};

use crate::event::NewEvent;

/// A write to a domain projection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ProjectionOp {
    /// The player now sits at this table and seat (player sessions).
    Seated { player_id: String, table_id: String, seat: i32, game_key: String, at_ms: i64 },
    /// The player left a game with this amount: the re-buy wait's input (R-REBUY-1).
    Departed { player_id: String, table_id: String, game_key: String, amount_left_cents: i64, at_ms: i64 },
    /// Cash in and out of a patron on a gaming day, summed separately (R-AUDIT-4).
    Cash { player_id: String, gaming_day: String, cash_in_cents: i64, cash_out_cents: i64 },
    /// The approved credit line (R-MARK-1).
    CreditLimit { player_id: String, limit_cents: i64 },
    /// Markers outstanding change: issued positive, redeemed or written off negative (R-MARK-1).
    Marker { player_id: String, outstanding_delta_cents: i64 },
}

/// Derives projection writes from the events of an append. Must be pure: it runs again
/// on every retry of the same append.
pub trait InlineProjection: Send + Sync {
    fn project(&self, stream: &str, event: &NewEvent, ops: &mut Vec<ProjectionOp>);
}

/// The re-buy input of one player for one game (R-REBUY-1).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Departure {
    pub table_id: String,
    pub amount_left_cents: i64,
    pub departed_at_ms: i64,
}

/// Where a player sits now, if anywhere.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PlayerSession {
    pub table_id: Option<String>,
    pub seat: Option<i32>,
    pub game_key: Option<String>,
    pub seated_at_ms: Option<i64>,
}

/// Cash totals of a patron for a gaming day (R-AUDIT-4).
#[derive(Debug, Clone, PartialEq, Eq, Default, sqlx::FromRow)]
pub struct DailyCash {
    pub cash_in_cents: i64,
    pub cash_out_cents: i64,
}

/// A player's credit line and markers outstanding (R-MARK-1).
#[derive(Debug, Clone, PartialEq, Eq, Default, sqlx::FromRow)]
pub struct CreditLine {
    pub limit_cents: i64,
    pub outstanding_cents: i64,
}
