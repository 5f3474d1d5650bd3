//! Domain inline projections: rows kept in the append transaction and used to enforce rules.
//!
//! Seat stacks, tray inventory and markers receivable are balances of their accounts
//! (`account_balances`, views `seat_stacks` and `tray_inventory`). The rest needs the meaning of
//! events: an [`InlineProjection`] turns events into [`ProjectionOp`]s, which PostgreSQL applies
//! in the same statement as the append (`chipledger_apply_projection_ops`, sql/).
//! The mapping from `chipledger_rules::Event` plugs in through this trait.

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

/// The projection writes of one player event, from the typed event: what the server adds to
/// the append it decided ([`crate::AppendRequest::projection_ops`]), and what
/// [`RulesProjection`] gives for an event read back from the log. Table and cage events need no
/// op: their chip effects (seat stacks, tray by denomination, markers receivable) are postings.
pub fn player_ops(player_id: &chipledger_rules::PlayerId, event: &chipledger_rules::PlayerEvent, event_id: Uuid, ops: &mut Vec<ProjectionOp>) {
    use chipledger_rules::{CashDirection, PlayerEvent, PlayerReversal};
    let player_id = player_id.as_str().to_owned();
    match event {
        PlayerEvent::CreditLineSet { line_cents, .. } => ops.push(ProjectionOp::CreditLimit { player_id, limit_cents: *line_cents }),
        PlayerEvent::JoinedTable { table_id, seat, game_key, .. } => ops.push(ProjectionOp::Seated {
            player_id,
            table_id: table_id.as_str().to_owned(),
            seat: i32::from(*seat),
            game_key: game_key.clone(),
            // The event carries no time: the seat time is its recorded_at in the log.
            at_ms: None,
            event_id,
        }),
        // R-STAKE-6: a house move keeps the session going at the new seat.
        PlayerEvent::MovedTable { to_table_id, to_seat, game_key, .. } => ops.push(ProjectionOp::Seated {
            player_id,
            table_id: to_table_id.as_str().to_owned(),
            seat: i32::from(*to_seat),
            game_key: game_key.clone(),
            at_ms: None,
            event_id,
        }),
        PlayerEvent::LeftTable { table_id, game_key, amount_cents, at_unix_ms, .. } => ops.push(ProjectionOp::Departed {
            player_id,
            table_id: table_id.as_str().to_owned(),
            game_key: game_key.clone(),
            amount_left_cents: *amount_cents,
            at_ms: *at_unix_ms,
        }),
        PlayerEvent::CashTransaction { gaming_day, direction, amount_cents, .. } => {
            let (cash_in_cents, cash_out_cents) = match direction {
                CashDirection::In => (*amount_cents, 0),
                CashDirection::Out => (0, *amount_cents),
            };
            ops.push(ProjectionOp::Cash { player_id, gaming_day: gaming_day.clone(), cash_in_cents, cash_out_cents });
        }
        PlayerEvent::MarkerIssued { amount_cents, .. } => ops.push(ProjectionOp::Marker { player_id, outstanding_delta_cents: *amount_cents }),
        PlayerEvent::MarkerRedeemed { amount_cents, .. } | PlayerEvent::MarkerWrittenOff { amount_cents, .. } => {
            ops.push(ProjectionOp::Marker { player_id, outstanding_delta_cents: -*amount_cents })
        }
        // R-AUDIT-1: a reversed cash transaction comes off that day's total.
        PlayerEvent::Corrected { reversal: PlayerReversal::CashTransaction { gaming_day, direction, amount_cents }, .. } => {
            let (cash_in_cents, cash_out_cents) = match direction {
                CashDirection::In => (-*amount_cents, 0),
                CashDirection::Out => (0, -*amount_cents),
            };
            ops.push(ProjectionOp::Cash { player_id, gaming_day: gaming_day.clone(), cash_in_cents, cash_out_cents });
        }
        // R-AUDIT-1, R-REBUY-1: a departure taken back no longer binds the re-buy.
        PlayerEvent::Corrected { reversal: PlayerReversal::Departure { table_id, at_unix_ms }, .. } => {
            ops.push(ProjectionOp::DepartureReversed { player_id, table_id: table_id.as_str().to_owned(), at_ms: *at_unix_ms })
        }
        PlayerEvent::PocketChipsPlayed { .. }
        | PlayerEvent::IouPaidFromPocket { .. }
        | PlayerEvent::ChipsBought { .. }
        | PlayerEvent::ChipsRedeemed { .. }
        | PlayerEvent::PocketCorrected { .. } => {}
    }
}

/// The domain projection of `chipledger_rules` events as stored (a player stream's payload is
/// the serialised `PlayerEvent`, `domain.rs`): for rebuilding the projections from the log
/// ([`crate::Store::verify_projections`]) and for a store handle whose caller does not add the
/// ops itself.
pub struct RulesProjection;

impl InlineProjection for RulesProjection {
    fn project(&self, stream: &str, event: &NewEvent, ops: &mut Vec<ProjectionOp>) {
        let Ok(stream) = stream.parse::<chipledger_rules::StreamId>() else { return };
        let chipledger_rules::StreamId::Player(player_id) = &stream else { return };
        let Ok(chipledger_rules::Event::Player(player_event)) = crate::domain::event_from_json(&stream, event.payload.as_str()) else { return };
        player_ops(player_id, &player_event, event.event_id, ops);
    }
}
