//! What goes into the log and what comes out of it.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::StoreError;
use crate::projection::ProjectionOp;

/// Bounds on one append (TigerStyle: everything that grows has a limit). A batch is one append:
/// its default of 1,000 commands (`limits.max_batch_commands`) fits in events, each command
/// writing up to 20 (the crash pass: 667 chip sales in one batch were refused as 2,001 events,
/// untyped, under the documented 1,000 commands); its streams are checked before it is decided.
pub const MAX_EVENTS_PER_APPEND: usize = 20_000;
pub const MAX_STREAMS_PER_APPEND: usize = 64;
pub const MAX_COMMANDS_PER_APPEND: usize = 1_000;
pub const MAX_POSTINGS_PER_EVENT: usize = 256;
pub const MAX_PAYLOAD_BYTES: usize = 64 * 1024;
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;
/// Largest page any read returns.
pub const MAX_PAGE: i64 = 5_000;

/// Who, where, when and why of an event (R-AUDIT-2). Stored as JSON and covered by the hash.
/// A field with no value is left out of the JSON (every reader of the log, and every event
/// stored before, takes a missing field and `null` alike): a fifth of each stored row was nulls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct EventMetadata {
    pub actor_id: String,
    pub actor_role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub causation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// `YYYY-MM-DD`, computed by the caller per R-CHIP-6.
    pub gaming_day: String,
    pub config_version: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// An import (R-AUDIT-2): the principal who sent it, an admin or system, when `actor_id` and
    /// the time are the ones the import names; absent for everything recorded as it happens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_by: Option<String>,
    /// An import's own time (R-AUDIT-2: when it happened, ms since the epoch), which the gaming
    /// day was computed from; absent for everything recorded as it happens (its time is the
    /// recording time). An import of the past had kept its day and lost its time (the cage pass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurred_at_unix_ms: Option<i64>,
}

/// One leg of a double-entry movement (R-UNIT-3). Account keys follow
/// `chipledger_rules::Account::key()`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewPosting {
    pub account: String,
    pub amount_cents: i64,
}

/// An event to append. Its stream is given by the [`StreamAppend`] holding it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub event_id: Uuid,
    pub event_type: String,
    pub schema_version: i16,
    /// Any JSON without floating-point numbers (R-UNIT-1).
    pub payload: EventJson,
    pub metadata: EventMetadata,
    pub postings: Vec<NewPosting>,
}

/// The JSON of an event to append, as text: serialised once from its type ([`EventJson::of`]),
/// with no `serde_json::Value` on the way. The append writes its RFC 8785 form (`chain::jcs_text`),
/// the bytes stored and hashed; JSON that form does not hold (a float, R-UNIT-1, or an integer
/// beyond 2^53 - 1) is refused there, before anything is written.
#[derive(Clone, PartialEq, Eq)]
pub struct EventJson(String);

impl EventJson {
    /// The JSON of a value of any serialisable type.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Result<EventJson, serde_json::Error> {
        serde_json::to_string(value).map(EventJson)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The decoded value, for code that walks JSON of no one type (tests).
    pub fn value(&self) -> serde_json::Value {
        serde_json::from_str(&self.0).expect("an EventJson is JSON text")
    }
}

impl From<serde_json::Value> for EventJson {
    fn from(value: serde_json::Value) -> EventJson {
        EventJson(value.to_string())
    }
}

impl From<&StoredJson> for EventJson {
    fn from(stored: &StoredJson) -> EventJson {
        EventJson(stored.as_str().to_owned())
    }
}

impl std::fmt::Debug for EventJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Optimistic concurrency for one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExpectedVersion {
    /// The stream has no events yet.
    NoStream,
    /// The stream's last event has exactly this version (versions start at 1).
    Exact(i64),
    /// No check (use sparingly: nothing serialises the caller's decision).
    Any,
}

impl ExpectedVersion {
    pub(crate) fn wire(self) -> i64 {
        match self {
            ExpectedVersion::NoStream => 0,
            ExpectedVersion::Exact(version) => version,
            ExpectedVersion::Any => -1,
        }
    }
}

/// The events for one stream, with the version the decision was made against. A stream with
/// no events is a pure guard: it is locked and checked but not written, so a decision that only
/// read it serialises against writers of it, but not against other guards. Decisions that must
/// exclude each other (two buy-ins of one player) each append an event to the shared stream.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamAppend {
    pub stream: String,
    pub expected_version: ExpectedVersion,
    pub events: Vec<NewEvent>,
}

/// A client command carried by an append, for idempotency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRecord {
    pub command_id: String,
    /// SHA-256 of the request as the caller canonicalises it (see [`request_hash`]).
    pub request_hash: [u8; 32],
}

/// SHA-256 of a request's bytes, the usual way to fill [`CommandRecord::request_hash`].
pub fn request_hash(request_bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(request_bytes).into()
}

/// When a request was decided, by its writer's clock (the service's reading of the database's
/// clock): its events are recorded at that time (raised to the head's, so that times never go
/// back along the log), not at the store's own clock; and a request decided on a gaming day is
/// not recorded at or after `day_ends_micros`, the first instant of the next one
/// ([`crate::StoreError::OutsideGamingDay`]: decide it again). The time pass: events were stamped
/// by the host's clock an hour behind the database's, on a gaming day their times were not in,
/// and one decided just before the cutoff was recorded just after it, on the day before. `None`:
/// the store's clock, no day.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecidedAt {
    pub at_micros: Option<i64>,
    /// The first instant of the gaming day it was decided on, when that day is its clock's: a
    /// time the database records it at before it (the writer's clock had run ahead, so the day
    /// was opened early) is refused alike (the wave-3 pass: a host clock stepped forward put
    /// cash on the next day two minutes early).
    pub day_begins_micros: Option<i64>,
    pub day_ends_micros: Option<i64>,
}

/// One atomic append: several commands (a whole hand for the batch RPC), several streams.
#[derive(Debug, Clone, PartialEq)]
pub struct AppendRequest {
    pub property: String,
    pub decided: DecidedAt,
    pub commands: Vec<CommandRecord>,
    pub streams: Vec<StreamAppend>,
    /// Opaque bytes stored with the commands and returned unchanged on an idempotent replay
    /// (e.g. the serialised decision); together with the outcome it rebuilds the reply.
    pub reply: Vec<u8>,
    /// Extra domain projection writes decided by the caller (in addition to those the store's
    /// [`crate::InlineProjection`] derives from the events).
    pub projection_ops: Vec<ProjectionOp>,
}

/// What an append did. On a replay every field except `replayed` is the original one, and
/// `outcome_json`/`reply` are byte-identical to the first answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendOutcome {
    pub append_id: Uuid,
    pub first_position: i64,
    pub last_position: i64,
    pub last_hash: [u8; 32],
    pub recorded_at_micros: i64,
    /// The new version of each stream of the request, in request order.
    pub stream_versions: Vec<(String, i64)>,
    pub replayed: bool,
    /// The stored outcome, exactly as first returned.
    pub outcome_json: String,
    pub reply: Vec<u8>,
}

impl AppendOutcome {
    /// Positions of the request's events in request order (streams in order, events in order).
    pub fn positions(&self) -> std::ops::RangeInclusive<i64> {
        self.first_position..=self.last_position
    }
}

/// An event as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEvent {
    pub property: String,
    pub position: i64,
    pub stream: String,
    pub stream_version: i64,
    pub event_id: Uuid,
    pub event_type: String,
    pub schema_version: i16,
    pub payload: StoredJson,
    pub metadata: StoredJson,
    pub recorded_at: OffsetDateTime,
    pub hash: [u8; 32],
    pub postings: Vec<NewPosting>,
}

impl RecordedEvent {
    /// The metadata as its typed form.
    pub fn typed_metadata(&self) -> Result<EventMetadata, serde_json::Error> {
        self.metadata.decode()
    }
}

/// A JSON column of a stored event in its canonical text: RFC 8785 (JCS) wherever the value
/// allows it, which every value appended since chain format 2 does. These are the bytes the
/// chain hashes and what a subscriber receives (`payload_json`); it is made once, from the
/// stored jsonb, when the row is read, and typed reads decode it straight into their types.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredJson(String);

impl StoredJson {
    /// The canonical text of the jsonb whose PostgreSQL text is `text`: taken straight from
    /// the text where [`chain::JsonbCanonicalizer`](crate::chain) can, else through the
    /// decoded value (a value no JCS form holds, from format 1, keeps serde_json's compact form).
    pub(crate) fn from_jsonb_text(text: &[u8], canonicalizer: &mut crate::chain::JsonbCanonicalizer) -> Result<StoredJson, StoreError> {
        let mut out = Vec::with_capacity(text.len());
        if canonicalizer.write(text, &mut out).is_some() {
            return String::from_utf8(out)
                .map(StoredJson)
                .map_err(|_| StoreError::Corrupt("stored JSON is not UTF-8".into()));
        }
        let value: serde_json::Value =
            serde_json::from_slice(text).map_err(|error| StoreError::Corrupt(format!("stored JSON undecodable: {error}")))?;
        Ok(StoredJson::from_value(&value))
    }

    /// Text that is canonical already: what an append bound for a row (`append.rs`).
    pub(crate) fn canonical(text: String) -> StoredJson {
        StoredJson(text)
    }

    /// The canonical text of a value (RFC 8785 where it allows it).
    pub fn from_value(value: &serde_json::Value) -> StoredJson {
        match crate::chain::jcs(value) {
            Ok(bytes) => StoredJson(String::from_utf8(bytes).expect("JCS of a JSON value is UTF-8")),
            Err(_) => StoredJson(value.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    /// Decoded into its type, with no `serde_json::Value` on the way.
    pub fn decode<'a, T: serde::Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    /// The decoded value, for reads that walk JSON of no one type (evidence, tests).
    pub fn value(&self) -> serde_json::Value {
        serde_json::from_str(&self.0).expect("stored JSON was checked when it was read")
    }
}

impl std::fmt::Debug for StoredJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for StoredJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Canonical, JsonbCanonicalizer};

    fn stored(text: &str) -> String {
        StoredJson::from_jsonb_text(text.as_bytes(), &mut JsonbCanonicalizer::new(Canonical::Jcs)).unwrap().into_string()
    }

    #[test]
    fn stored_jsonb_text_reads_as_its_rfc_8785_form_whichever_way_it_is_made() {
        // jsonb_out's order (keys by length, then bytes) and spacing become JCS order, no spaces.
        assert_eq!(stored(r#"{"b": 1, "aa": "x\"y\u0001", "é": [1, -2, {"z": null, "y": true}]}"#),
            r#"{"aa":"x\"y\u0001","b":1,"é":[1,-2,{"y":true,"z":null}]}"#);
        // A key with an escape takes the decoded value's way to the same form.
        assert_eq!(stored(r#"{"a\"b": 1, "a": 2}"#), r#"{"a":2,"a\"b":1}"#);
        for text in [r#"{"b": 1, "aa": "x\"y\u0001", "é": [1, -2, {"z": null, "y": true}]}"#, r#"{"a\"b": 1, "a": 2}"#] {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(stored(text), String::from_utf8(crate::chain::jcs(&value).unwrap()).unwrap(), "the definition agrees");
        }
        // An integer no JCS form holds (chain format 1 took any) keeps its exact digits.
        assert_eq!(stored(r#"{"slip_no": 18446744073709551615}"#), r#"{"slip_no":18446744073709551615}"#);
        assert!(StoredJson::from_jsonb_text(b"{\"a\": ", &mut JsonbCanonicalizer::new(Canonical::Jcs)).is_err());
    }

    #[test]
    fn metadata_leaves_out_what_it_does_not_have_and_reads_a_null_as_absent() {
        let metadata = EventMetadata {
            actor_id: "dealer-7".into(),
            actor_role: "dealer".into(),
            command_id: Some("c-1".into()),
            gaming_day: "2026-12-03".into(),
            config_version: 3,
            ..EventMetadata::default()
        };
        let json = serde_json::to_value(&metadata).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"actor_id": "dealer-7", "actor_role": "dealer", "command_id": "c-1", "gaming_day": "2026-12-03", "config_version": 3})
        );
        // As stored before: every field present, the empty ones null.
        let before = r#"{"device": null, "actor_id": "dealer-7", "trace_id": null, "actor_role": "dealer", "command_id": "c-1", "gaming_day": "2026-12-03", "reason_code": null, "causation_id": null, "config_version": 3, "correlation_id": null}"#;
        assert_eq!(StoredJson(before.into()).decode::<EventMetadata>().unwrap(), metadata);
        assert_eq!(StoredJson::from_value(&json).decode::<EventMetadata>().unwrap(), metadata);
    }
}
