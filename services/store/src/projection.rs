//! Domain inline projections: rows kept in the append transaction and used to enforce rules.
//!
//! Seat stacks, tray inventory and markers receivable are balances of their accounts
//! (`account_balances`, views `seat_stacks` and `tray_inventory`). The rest needs the meaning of
//! events: [`ProjectionOp`]s, which PostgreSQL applies in the same statement as the append
//! (`chipledger_append`, step 5: table play's ops set-based, the others op by op through
//! `chipledger_apply_projection_ops`, sql/). The ops of the rules' events are made in `domain.rs`
//! (`player_ops`, `RulesProjection`); other mappings plug in through [`InlineProjection`].

use serde::{Deserialize, Serialize};

use uuid::Uuid;

use crate::event::NewEvent;

/// Departures kept per patron by `chipledger_project_departure` (sql/, its 32), the rules'
/// own bound: the projection must equal `PlayerState::departures`.
pub const DEPARTURES_KEPT: usize = 32;
const _: () = assert!(DEPARTURES_KEPT == chipledger_rules::player::MAX_DEPARTURES, "change sql/fn_chipledger_project_departure.sql's bound too");

/// A write to a domain projection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ProjectionOp {
    /// The player now sits at this table and seat (player sessions), seated by `event_id`.
    /// `at_ms: None` means the seating event's recorded time (the log is the clock).
    Seated { player_id: String, table_id: String, seat: i32, game_key: String, at_ms: Option<i64>, event_id: Uuid },
    /// The player left a game with this amount: the re-buy wait's input (R-REBUY-1). The
    /// projection keeps the last [`DEPARTURES_KEPT`] departures of the patron, as the rules do.
    Departed { player_id: String, table_id: String, game_key: String, amount_left_cents: i64, at_ms: i64 },
    /// R-AUDIT-1: the departures of the patron from `table_id` at `at_ms` are taken back; the
    /// game's previous departure, if any, binds the re-buy again.
    DepartureReversed { player_id: String, table_id: String, at_ms: i64 },
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
