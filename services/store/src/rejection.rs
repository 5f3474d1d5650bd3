//! Refused commands, remembered for good and chained (R-AUDIT-3). They never move chips.
//!
//! A refusal is recorded *before* it is answered ([`Store::record_refusal`], function
//! `chipledger_record_refusal`): it takes the command id (the same primary key an append's
//! command takes, so an append and a refusal racing on one id cannot both win) and the next
//! place in the property's refusal chain (chain.rs, format 2). The record keeps the exact reply
//! given, so the same id with the same request answers the same bytes forever, whatever the
//! state says later; the same id with another request is [`StoreError::IdempotencyConflict`].
//! It names the player and the gaming day, for compliance queries by patron and day.

use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::postgres::PgRow;
use time::OffsetDateTime;

use crate::Store;
use crate::append::{StoredOutcome, validate_property};
use crate::chain::{self, RefusalFields};
use crate::error::{StoreError, classify};
use crate::event::{AppendOutcome, request_hash};
use crate::group::MAX_APPEND_ATTEMPTS;
use crate::read::clamp_page;

/// A rejection to record: the stable reason code and rule id, the figures involved, who tried,
/// the request it answers and the reply given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectionRecord {
    pub property: String,
    pub command_id: String,
    pub reason_code: String,
    pub rule_id: String,
    /// The figures involved, e.g. [("amount_left_with_cents", 30000), ("buy_in_cents", 20000)].
    pub numbers: Vec<(String, i64)>,
    pub detail: String,
    pub actor_id: String,
    pub actor_role: String,
    pub device: Option<String>,
    pub streams: Vec<String>,
    /// The rejected request as JSON, for the auditor (integers beyond 2^53 - 1 are kept as
    /// decimal strings, see [`chain::ijson_safe`]).
    pub request: serde_json::Value,
    /// The request hash of the command id (as [`crate::CommandRecord::request_hash`]).
    pub request_hash: [u8; 32],
    /// The patron the command was about, if any.
    pub player_id: Option<String>,
    /// `YYYY-MM-DD`: the gaming day the command was decided in (R-CHIP-6).
    pub gaming_day: Option<String>,
    /// The answer given, in the caller's encoding (chipledgerd: the gRPC status), kept unchanged.
    pub reply: Vec<u8>,
}

/// A stored rejection. `refusal_seq` is its place in the refusal chain; `None` for one recorded
/// before the chain covered refusals (migration 0007), whose request hash and reply were not
/// kept (zero and empty here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRejection {
    pub rejection_id: i64,
    pub recorded_at: OffsetDateTime,
    pub refusal_seq: Option<i64>,
    pub hash: Option<[u8; 32]>,
    pub record: RejectionRecord,
}

/// What [`Store::record_refusal`] found the command id to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalOutcome {
    /// Recorded now: answer it.
    Recorded(RecordedRejection),
    /// Refused before with the same request: answer that refusal, byte for byte.
    Replayed(RecordedRejection),
    /// Accepted before with the same request: answer that result (a retry of a command that
    /// went through; the state refusing it now is the command's own effect).
    Accepted(AppendOutcome),
}

/// A command id known to the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordedCommand {
    Accepted { request_hash: [u8; 32], outcome: AppendOutcome },
    Refused { request_hash: [u8; 32], refusal: Box<RecordedRejection> },
}

impl Store {
    /// Record a refusal durably, chained, before it is answered; or find what the command id
    /// already is. Retries, boundedly, when a concurrent append or refusal of the same id won.
    /// `day_ends_micros`: the end of the refusal's gaming day, if it is kept as it happens: one
    /// whose day has ended when the log's lock is had is not kept
    /// ([`StoreError::OutsideGamingDay`]: its day is taken again, R-CHIP-6).
    pub async fn record_refusal(&self, record: &RejectionRecord, day_ends_micros: Option<i64>) -> Result<RefusalOutcome, StoreError> {
        validate_property(&record.property)?;
        if record.command_id.is_empty() || record.command_id.len() > 128 {
            return Err(StoreError::InvalidRequest("command id must be 1..=128 bytes".into()));
        }
        let numbers = serde_json::to_value(&record.numbers).map_err(|e| StoreError::InvalidRequest(e.to_string()))?;
        let request = chain::ijson_safe(&record.request);
        let mut entry = Vec::with_capacity(1024);
        chain::refusal_entry_start(&mut entry, &refusal_fields(record), &chain::jcs(&numbers)?, &chain::jcs(&request)?);
        let gaming_day = record.gaming_day.as_deref().map(parse_day).transpose()?;
        let mut attempt = 0;
        let (outcome, refusal_seq): (String, Option<i64>) = loop {
            attempt += 1;
            let result = sqlx::query_as(
                "SELECT outcome, refusal_seq FROM chipledger_record_refusal($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
                 $11, $12, $13, $14, $15, $16, $17)",
            )
            .bind(&record.property)
            .bind(&record.command_id)
            .bind(record.request_hash.as_slice())
            .bind(&entry)
            .bind(&record.reason_code)
            .bind(&record.rule_id)
            .bind(&numbers)
            .bind(&record.detail)
            .bind(&record.actor_id)
            .bind(&record.actor_role)
            .bind(&record.device)
            .bind(&record.streams)
            .bind(&request)
            .bind(&record.player_id)
            .bind(gaming_day)
            .bind(&record.reply)
            .bind(day_ends_micros)
            .fetch_one(self.pool())
            .await
            .map_err(classify);
            match result {
                Err(StoreError::Contention(_)) if attempt < MAX_APPEND_ATTEMPTS => continue,
                other => break other?,
            }
        };
        match (outcome.as_str(), refusal_seq) {
            ("accepted", _) => match self.recorded_command(&record.property, &record.command_id).await? {
                Some(RecordedCommand::Accepted { outcome, .. }) => Ok(RefusalOutcome::Accepted(outcome)),
                other => Err(StoreError::Corrupt(format!("command {} said accepted, now {other:?}", record.command_id))),
            },
            (kind @ ("recorded" | "replayed"), Some(seq)) => {
                let refusal = self
                    .refusal(&record.property, seq)
                    .await?
                    .ok_or_else(|| StoreError::Corrupt(format!("refusal {seq} of {} not found", record.property)))?;
                Ok(if kind == "recorded" { RefusalOutcome::Recorded(refusal) } else { RefusalOutcome::Replayed(refusal) })
            }
            (other, _) => Err(StoreError::Corrupt(format!("chipledger_record_refusal answered {other:?}"))),
        }
    }

    /// The chained refusal at `refusal_seq`.
    pub async fn refusal(&self, property: &str, refusal_seq: i64) -> Result<Option<RecordedRejection>, StoreError> {
        let rows = sqlx::query("SELECT * FROM chipledger_refusals_range($1, $2, $2)")
            .bind(property)
            .bind(refusal_seq)
            .fetch_all(self.pool())
            .await?;
        rows.first().map(|row| decode_rejection(property, row)).transpose()
    }

    /// Rejections of a property with id > `after_id`, oldest first.
    pub async fn rejections(&self, property: &str, after_id: i64, limit: i64) -> Result<Vec<RecordedRejection>, StoreError> {
        self.rejections_of(property, after_id, limit, None, None).await
    }

    /// Rejections of one patron and/or one gaming day (`YYYY-MM-DD`), id > `after_id`, oldest first.
    pub async fn rejections_of(
        &self,
        property: &str,
        after_id: i64,
        limit: i64,
        player_id: Option<&str>,
        gaming_day: Option<&str>,
    ) -> Result<Vec<RecordedRejection>, StoreError> {
        let gaming_day = gaming_day.map(parse_day).transpose()?;
        let rows = sqlx::query("SELECT * FROM chipledger_rejections($1, $2, $3, $4, $5)")
            .bind(property)
            .bind(after_id)
            .bind(clamp_page(limit))
            .bind(player_id)
            .bind(gaming_day)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(|row| decode_rejection(property, row)).collect()
    }
}

/// The chain entry fields of a record (the same for the append and the verifier).
pub(crate) fn refusal_fields(record: &RejectionRecord) -> RefusalFields<'_> {
    RefusalFields {
        property: &record.property,
        command_id: &record.command_id,
        request_hash: &record.request_hash,
        reason_code: &record.reason_code,
        rule_id: &record.rule_id,
        detail: &record.detail,
        actor_id: &record.actor_id,
        actor_role: &record.actor_role,
        device: record.device.as_deref(),
        player_id: record.player_id.as_deref(),
        gaming_day: record.gaming_day.as_deref(),
        streams: &record.streams,
        reply_sha256: request_hash(&record.reply),
    }
}

const DAY: &[time::format_description::BorrowedFormatItem<'_>] = time::macros::format_description!("[year]-[month]-[day]");

fn parse_day(text: &str) -> Result<time::Date, StoreError> {
    time::Date::parse(text, DAY).map_err(|_| StoreError::InvalidRequest(format!("gaming day {text:?} is not YYYY-MM-DD")))
}

/// A row of `chipledger_rejections` / `chipledger_refusals_range` (same columns).
pub(crate) fn decode_rejection(property: &str, row: &PgRow) -> Result<RecordedRejection, StoreError> {
    let numbers: serde_json::Value = row.try_get(5)?;
    let numbers = serde_json::from_value(numbers).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let hash: Option<Vec<u8>> = row.try_get(13)?;
    let request_hash: Option<Vec<u8>> = row.try_get(14)?;
    let gaming_day: Option<time::Date> = row.try_get(16)?;
    let fixed = |bytes: Option<Vec<u8>>, what: &str| -> Result<Option<[u8; 32]>, StoreError> {
        bytes
            .map(|bytes| bytes.try_into().map_err(|_| StoreError::Corrupt(format!("rejection {what} is not 32 bytes"))))
            .transpose()
    };
    Ok(RecordedRejection {
        rejection_id: row.try_get(0)?,
        recorded_at: row.try_get(1)?,
        refusal_seq: row.try_get(12)?,
        hash: fixed(hash, "hash")?,
        record: RejectionRecord {
            property: property.to_owned(),
            command_id: row.try_get(2)?,
            reason_code: row.try_get(3)?,
            rule_id: row.try_get(4)?,
            numbers,
            detail: row.try_get(6)?,
            actor_id: row.try_get(7)?,
            actor_role: row.try_get(8)?,
            device: row.try_get(9)?,
            streams: row.try_get(10)?,
            request: row.try_get(11)?,
            request_hash: fixed(request_hash, "request hash")?.unwrap_or([0; 32]),
            player_id: row.try_get(15)?,
            gaming_day: gaming_day.map(|day| day.format(DAY)).transpose().map_err(|e| StoreError::Corrupt(e.to_string()))?,
            reply: row.try_get::<Option<Vec<u8>>, _>(17)?.unwrap_or_default(),
        },
    })
}

/// What a command id is, from `chipledger_command`.
pub(crate) async fn recorded_command(store: &Store, property: &str, command_id: &str) -> Result<Option<RecordedCommand>, StoreError> {
    type CommandRow = (Vec<u8>, Option<String>, Option<Vec<u8>>, Option<i64>);
    let row: Option<CommandRow> =
        sqlx::query_as("SELECT * FROM chipledger_command($1, $2)")
            .bind(property)
            .bind(command_id)
            .fetch_optional(store.pool())
            .await?;
    let Some((request_hash, outcome, reply, refusal_seq)) = row else { return Ok(None) };
    let request_hash: [u8; 32] =
        request_hash.try_into().map_err(|_| StoreError::Corrupt("stored request hash is not 32 bytes".into()))?;
    match (outcome, reply, refusal_seq) {
        (Some(outcome_json), Some(reply), None) => {
            Ok(Some(RecordedCommand::Accepted { request_hash, outcome: decode_outcome(true, outcome_json, reply)? }))
        }
        (None, None, Some(seq)) => {
            let refusal = store
                .refusal(property, seq)
                .await?
                .ok_or_else(|| StoreError::Corrupt(format!("command {command_id} points at missing refusal {seq}")))?;
            Ok(Some(RecordedCommand::Refused { request_hash, refusal: Box::new(refusal) }))
        }
        _ => Err(StoreError::Corrupt(format!("command {command_id} is neither accepted nor refused"))),
    }
}

/// An accepted command's stored outcome JSON and reply as an [`AppendOutcome`].
pub(crate) fn decode_outcome(replayed: bool, outcome_json: String, reply: Vec<u8>) -> Result<AppendOutcome, StoreError> {
    let stored: StoredOutcome = serde_json::from_str(&outcome_json)
        .map_err(|e| StoreError::Corrupt(format!("stored outcome {outcome_json:?}: {e}")))?;
    let mut last_hash = [0u8; 32];
    hex::decode_to_slice(&stored.last_hash, &mut last_hash)
        .map_err(|e| StoreError::Corrupt(format!("stored outcome hash: {e}")))?;
    Ok(AppendOutcome {
        append_id: stored.append_id,
        first_position: stored.first_position,
        last_position: stored.last_position,
        last_hash,
        recorded_at_micros: stored.recorded_at_micros,
        stream_versions: stored.stream_versions,
        replayed,
        outcome_json,
        reply,
    })
}
