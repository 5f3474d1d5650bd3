//! Typed errors of the store. Database refusals of domain invariants arrive from PostgreSQL as
//! SQLSTATEs of class `CL` with a JSON detail and are turned into variants here, in one place.

use serde::Deserialize;

/// Everything an append or query can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A stream was not at the expected version; nothing was written.
    #[error("version conflict on {stream}: expected {expected}, actual {actual}")]
    VersionConflict { stream: String, expected: i64, actual: i64 },
    /// A command id was already recorded with a different request (or in another append).
    #[error("command id {command_id} was already used for a different request")]
    IdempotencyConflict { command_id: String },
    /// An append of no events or streams, or more than an append holds (`what`: events,
    /// streams or commands; [`crate::event::MAX_EVENTS_PER_APPEND`] and the others).
    #[error("an append carries 1..={max} {what}, not {count}")]
    AppendSize { what: &'static str, count: usize, max: usize },
    /// An event's postings do not sum to zero (R-UNIT-3).
    #[error("postings of event {event_index} sum to {sum_cents}, not zero (R-UNIT-3)")]
    Unbalanced { event_index: usize, sum_cents: i128 },
    /// The append would leave an account that may not go negative below zero (R-UNIT-4).
    #[error("account {account} would go negative: {balance_cents} cents (R-UNIT-4)")]
    NegativeBalance { account: String, balance_cents: i64 },
    /// A domain projection's constraint refused the append (e.g. markers above the credit line,
    /// R-MARK-1); nothing was written.
    #[error("projection constraint {constraint} refused the append")]
    ProjectionRefused { constraint: String },
    /// The request breaks a structural bound or format rule; nothing was sent.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The command id was refused before with this very request (R-AUDIT-3): the refusal at
    /// `refusal_seq` answers it for good ([`crate::Store::refusal`]); nothing was written.
    #[error("command {command_id} was refused before (refusal {refusal_seq})")]
    RefusedBefore { command_id: String, refusal_seq: i64 },
    /// The database does not carry the functions this build calls: run the admin step
    /// (`chipledgerd migrate`) of this release first.
    #[error("database schema is not the one this build needs (installed {installed:?}, expected {expected}): {cause}; run `chipledgerd migrate` with an admin URL")]
    SchemaMismatch { installed: Option<String>, expected: String, cause: String },
    /// A concurrent transaction created the same stream, account or command first; retrying the
    /// whole transaction resolves it (`Store::append` retries by itself).
    #[error("concurrent write, retry the transaction: {0}")]
    Contention(String),
    /// No partition of the log holds the time the append would be recorded at (CL007, or
    /// PostgreSQL's own "no partition" as the backstop): the partitions ahead were not made
    /// (`chipledgerd migrate`, or the service's daily `chipledger_ensure_partitions`). Nothing
    /// was written; the append can be sent again once the partition exists.
    #[error("no partition of the log holds recorded_at {recorded_at_micros:?} µs (partitions end at {partitions_until_micros:?} µs); run `chipledgerd migrate` or `chipledgerd partitions ensure`")]
    NoPartition { recorded_at_micros: Option<i64>, partitions_until_micros: Option<i64> },
    /// The position asked about lies in an archived partition (CL008): the live log answers
    /// only from `archived_through` on; the archive file holds the rest.
    #[error("position {position} is archived: the live log answers from position {archived_through} on")]
    Archived { position: i64, archived_through: i64 },
    /// R-CHIP-6: a member recorded as it happens names a gaming day before the latest the
    /// property recorded (CL009): decide it again on that day.
    #[error("gaming day before the property's latest, {gaming_day}")]
    GamingDayBehind { gaming_day: String },
    /// R-CHIP-5, R-CHIP-6: an import names a gaming day a cage of the property closed
    /// (`closed_through`, the latest closed, CL011): a closed day is final; nothing was written.
    #[error("an import on gaming day {gaming_day}, which the property closed (closed through {closed_through})")]
    ImportOnClosedDay { gaming_day: String, closed_through: String },
    /// R-CHIP-6: a member decided on a gaming day would be recorded outside it, at
    /// `recorded_micros` (at or after its end, or before its beginning: `DecidedAt`): nothing
    /// was written; decide it again on the day of that time. A refusal whose day ended before it
    /// was kept (CL010): kept on the day of its time.
    #[error("the command would be recorded outside the gaming day it was decided on (at {recorded_micros} µs)")]
    OutsideGamingDay { recorded_micros: i64 },
    /// The property's archive anchor is not proven by its signed archive document (by a trusted
    /// key): the balances carried past it are not served (`chipledger verify` names why).
    #[error("the archive anchor is not proven: {0}")]
    ArchiveUnproven(String),
    /// Stored data could not be decoded (a sign of tampering or a bug).
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

#[derive(Deserialize)]
struct ConflictDetail {
    stream: String,
    expected: i64,
    actual: i64,
}
#[derive(Deserialize)]
struct CommandDetail {
    command_id: String,
}
#[derive(Deserialize)]
struct RefusedDetail {
    command_id: String,
    refusal_seq: i64,
}
#[derive(Deserialize)]
struct UnbalancedDetail {
    event_index: usize,
    sum_cents: i128,
}
#[derive(Deserialize)]
struct NoPartitionDetail {
    recorded_at_micros: i64,
    partitions_until_micros: Option<i64>,
}
#[derive(Deserialize)]
struct GamingDayDetail {
    gaming_day: String,
}
#[derive(Deserialize)]
struct ClosedDayDetail {
    gaming_day: String,
    closed_through: String,
}
#[derive(Deserialize)]
struct RecordedDetail {
    recorded_micros: i64,
}
#[derive(Deserialize)]
struct ArchivedDetail {
    position: i64,
    archived_through: i64,
}
#[derive(Deserialize)]
struct NegativeDetail {
    account: String,
    balance_cents: i64,
}

/// Map a database error to a typed one where PostgreSQL told us which invariant held.
/// Which member of a group append an error belongs to (0-based), from the HINT
/// `chipledger member <m>` that `chipledger_append` adds to every error it raises.
pub(crate) fn member_of(error: &sqlx::Error) -> Option<usize> {
    let hint = error.as_database_error()?.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()?.hint()?;
    hint.strip_prefix("chipledger member ")?.parse::<usize>().ok()?.checked_sub(1)
}

pub(crate) fn classify(error: sqlx::Error) -> StoreError {
    let Some(db) = error.as_database_error() else { return StoreError::Database(error) };
    let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
    let detail = db
        .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
        .and_then(|e| e.detail())
        .unwrap_or("")
        .to_owned();
    let parsed = match code.as_str() {
        "CL001" => serde_json::from_str::<ConflictDetail>(&detail)
            .map(|d| StoreError::VersionConflict { stream: d.stream, expected: d.expected, actual: d.actual }),
        "CL002" => serde_json::from_str::<CommandDetail>(&detail)
            .map(|d| StoreError::IdempotencyConflict { command_id: d.command_id }),
        "CL003" => serde_json::from_str::<UnbalancedDetail>(&detail)
            .map(|d| StoreError::Unbalanced { event_index: d.event_index, sum_cents: d.sum_cents }),
        "CL004" => serde_json::from_str::<NegativeDetail>(&detail)
            .map(|d| StoreError::NegativeBalance { account: d.account, balance_cents: d.balance_cents }),
        "CL005" => Ok(StoreError::InvalidRequest(detail.clone())),
        "CL006" => serde_json::from_str::<RefusedDetail>(&detail)
            .map(|d| StoreError::RefusedBefore { command_id: d.command_id, refusal_seq: d.refusal_seq }),
        "CL007" => serde_json::from_str::<NoPartitionDetail>(&detail).map(|d| StoreError::NoPartition {
            recorded_at_micros: Some(d.recorded_at_micros),
            partitions_until_micros: d.partitions_until_micros,
        }),
        "CL008" => serde_json::from_str::<ArchivedDetail>(&detail)
            .map(|d| StoreError::Archived { position: d.position, archived_through: d.archived_through }),
        "CL009" => serde_json::from_str::<GamingDayDetail>(&detail).map(|d| StoreError::GamingDayBehind { gaming_day: d.gaming_day }),
        "CL011" => serde_json::from_str::<ClosedDayDetail>(&detail)
            .map(|d| StoreError::ImportOnClosedDay { gaming_day: d.gaming_day, closed_through: d.closed_through }),
        "CL010" => serde_json::from_str::<RecordedDetail>(&detail).map(|d| StoreError::OutsideGamingDay { recorded_micros: d.recorded_micros }),
        // PostgreSQL's own refusal of a row no partition holds (the append checks first, CL007;
        // this is the backstop if a partition went missing behind the registry's back).
        "23514" if db.message().starts_with("no partition of relation") => {
            Ok(StoreError::NoPartition { recorded_at_micros: None, partitions_until_micros: None })
        }
        "23514" => Ok(StoreError::ProjectionRefused { constraint: db.constraint().unwrap_or("?").to_owned() }),
        // unique_violation, deadlock_detected, serialization_failure
        "23505" | "40P01" | "40001" => Ok(StoreError::Contention(db.message().to_owned())),
        _ => return StoreError::Database(error),
    };
    parsed.unwrap_or_else(|e| StoreError::Corrupt(format!("undecodable detail {detail:?} for {code}: {e}")))
}
