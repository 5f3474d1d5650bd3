//! The per-property hash chain and its verifier.
//!
//! `h_0` is 32 zero bytes and
//! `h_n = SHA-256(h_{n-1} || be64(position) || be64(recorded_at unix µs) || be64(stream_version) || body_n)`.
//! The three numbers are assigned by PostgreSQL under the property's commit lock (function
//! `chipledger_append`, migration 0001); `body_n` is built here from every other field:
//!
//! ```text
//! body = "chipledger.event.v1" || str(property) || str(stream) || event_id (16 bytes)
//!        || str(event_type) || be16(schema_version) || str(canonical(payload))
//!        || str(canonical(metadata)) || be32(posting count)
//!        || for each posting in order: str(account) || be64(amount_cents)
//! str(s) = be32(byte length) || UTF-8 bytes
//! ```
//! Canonical JSON: no insignificant whitespace, object keys sorted by their UTF-8 bytes,
//! strings escaped as serde_json escapes them, integers in decimal; floating-point numbers
//! are refused (R-UNIT-1), so what PostgreSQL's jsonb gives back re-encodes to the same bytes.
//!
//! What the verifier catches: any changed byte of a hashed field, a deleted, inserted or
//! reordered event or posting, and a truncated tail (the head row keeps the last position and
//! hash). What it cannot catch alone: a superuser who rewrites rows *and* recomputes every later
//! hash and the head, since the hash has no secret. Against that, save [`ChainDigest`]s outside
//! the database (a report, a WORM store, a regulator) and check them with
//! [`crate::Store::verify_digest`].

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::StoreError;
use crate::event::{NewPosting, RecordedEvent};

pub const GENESIS_HASH: [u8; 32] = [0; 32];
const BODY_TAG: &[u8] = b"chipledger.event.v1";

/// Fields of an event that go into its body.
pub(crate) struct BodyFields<'a> {
    pub property: &'a str,
    pub stream: &'a str,
    pub event_id: &'a uuid::Uuid,
    pub event_type: &'a str,
    pub schema_version: i16,
    pub payload: &'a Value,
    pub metadata: &'a Value,
    pub postings: &'a [NewPosting],
}

fn put_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

pub(crate) fn body(fields: &BodyFields<'_>) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(BODY_TAG);
    put_str(&mut out, fields.property.as_bytes());
    put_str(&mut out, fields.stream.as_bytes());
    out.extend_from_slice(fields.event_id.as_bytes());
    put_str(&mut out, fields.event_type.as_bytes());
    out.extend_from_slice(&fields.schema_version.to_be_bytes());
    put_str(&mut out, &canonical_json(fields.payload)?);
    put_str(&mut out, &canonical_json(fields.metadata)?);
    out.extend_from_slice(&(fields.postings.len() as u32).to_be_bytes());
    for posting in fields.postings {
        put_str(&mut out, posting.account.as_bytes());
        out.extend_from_slice(&posting.amount_cents.to_be_bytes());
    }
    Ok(out)
}

/// Canonical JSON bytes of a value (see the module doc).
pub fn canonical_json(value: &Value) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::new();
    write_canonical(value, &mut out)?;
    Ok(out)
}

fn write_canonical(value: &Value, out: &mut Vec<u8>) -> Result<(), StoreError> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => {
            if number.is_f64() {
                return Err(StoreError::InvalidRequest(format!(
                    "floating-point number {number} in event JSON (R-UNIT-1)"
                )));
            }
            out.extend_from_slice(number.to_string().as_bytes());
        }
        Value::String(text) => write_json_string(text, out),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_canonical(item, out)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_json_string(key, out);
                out.push(b':');
                write_canonical(item, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

fn write_json_string(text: &str, out: &mut Vec<u8>) {
    // serde_json's string escaping is deterministic; writing to a Vec cannot fail.
    serde_json::to_writer(&mut *out, text).expect("writing a JSON string to memory");
}

/// One step of the chain, the same computation as in `chipledger_append`.
pub fn chain_step(previous: &[u8; 32], position: i64, recorded_at_micros: i64, stream_version: i64, body: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(previous);
    hasher.update(position.to_be_bytes());
    hasher.update(recorded_at_micros.to_be_bytes());
    hasher.update(stream_version.to_be_bytes());
    hasher.update(body);
    hasher.finalize().into()
}

/// Recompute the hash of a stored event from its fields and the previous hash.
pub(crate) fn recompute(previous: &[u8; 32], event: &RecordedEvent) -> Result<[u8; 32], StoreError> {
    let body = body(&BodyFields {
        property: &event.property,
        stream: &event.stream,
        event_id: &event.event_id,
        event_type: &event.event_type,
        schema_version: event.schema_version,
        payload: &event.payload,
        metadata: &event.metadata,
        postings: &event.postings,
    })?;
    let micros = i64::try_from(event.recorded_at.unix_timestamp_nanos() / 1_000)
        .map_err(|_| StoreError::Corrupt(format!("recorded_at out of range at {}", event.position)))?;
    Ok(chain_step(previous, event.position, micros, event.stream_version, &body))
}

/// Why the chain does not verify, at [`ChainReport::first_bad_position`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainProblem {
    /// The stored hash differs from the recomputed one: a field, a posting or the order changed.
    HashMismatch,
    /// The event with this position is missing (deleted row, or rows renumbered).
    MissingPosition,
    /// The log ends before the head's last position: the tail was cut.
    TruncatedTail,
    /// The head's hash differs from the hash of the last event.
    HeadMismatch,
    /// A stored event cannot be decoded or re-encoded.
    Undecodable(String),
}

/// Result of [`crate::Store::verify_chain`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainReport {
    pub ok: bool,
    pub events_checked: i64,
    pub first_bad_position: Option<i64>,
    pub problem: Option<ChainProblem>,
    pub head: ChainDigest,
}

/// A point of the chain worth saving outside the database: position and hash after it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChainDigest {
    pub property: String,
    pub position: i64,
    #[serde(with = "hex::serde")]
    pub hash: [u8; 32],
}
