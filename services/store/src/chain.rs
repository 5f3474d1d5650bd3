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
use crate::event::NewPosting;

pub const GENESIS_HASH: [u8; 32] = [0; 32];
/// Positions per page of [`crate::Store::verify_chain`] (pages are checked independently).
pub const VERIFY_PAGE_POSITIONS: i64 = 2_000;
const BODY_TAG: &[u8] = b"chipledger.event.v1";

fn put_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// The body of a new event: its fields, payload and metadata in canonical JSON, its postings.
pub(crate) fn body(
    fields: &StoredFields<'_>,
    payload: &Value,
    metadata: &Value,
    postings: &[NewPosting],
) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::with_capacity(256);
    let payload = canonical_json(payload)?;
    let metadata = canonical_json(metadata)?;
    let postings = postings.iter().map(|posting| (posting.account.as_str(), posting.amount_cents));
    write_body(&mut out, fields, &payload, &metadata, postings);
    Ok(out)
}

/// The fields of a body other than the JSON and the postings (of a new event, or as a stored
/// row gives them).
pub(crate) struct StoredFields<'a> {
    pub property: &'a str,
    pub stream: &'a str,
    pub event_id: &'a uuid::Uuid,
    pub event_type: &'a str,
    pub schema_version: i16,
}

/// Write a body into `out` (cleared first) from already canonical payload and metadata bytes:
/// the one layout shared by the append and the verifier.
pub(crate) fn write_body<'p>(
    out: &mut Vec<u8>,
    fields: &StoredFields<'_>,
    canonical_payload: &[u8],
    canonical_metadata: &[u8],
    postings: impl ExactSizeIterator<Item = (&'p str, i64)>,
) {
    out.clear();
    out.extend_from_slice(BODY_TAG);
    put_str(out, fields.property.as_bytes());
    put_str(out, fields.stream.as_bytes());
    out.extend_from_slice(fields.event_id.as_bytes());
    put_str(out, fields.event_type.as_bytes());
    out.extend_from_slice(&fields.schema_version.to_be_bytes());
    put_str(out, canonical_payload);
    put_str(out, canonical_metadata);
    out.extend_from_slice(&(postings.len() as u32).to_be_bytes());
    for (account, amount_cents) in postings {
        put_str(out, account.as_bytes());
        out.extend_from_slice(&amount_cents.to_be_bytes());
    }
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
                return Err(StoreError::InvalidRequest(format!("floating-point number {number} in event JSON (R-UNIT-1)")));
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

/// [`canonical_json`] of the jsonb value whose PostgreSQL text is `text`, taken straight from
/// the text; `None` where that shortcut does not apply (see [`JsonbCanonicalizer`]).
pub fn canonical_json_from_jsonb_text(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    JsonbCanonicalizer::new().write(text, &mut out)?;
    Some(out)
}

/// Nesting PostgreSQL's jsonb text may have before [`JsonbCanonicalizer`] gives up; the same
/// as serde_json's own recursion limit, so the fallback decodes no deeper than the append did.
const MAX_JSON_DEPTH: usize = 128;

/// Canonical JSON straight from the text PostgreSQL writes for a jsonb value (`jsonb_out`:
/// `{"k": v, "k2": [1, 2]}`, keys ordered by length then bytes), without building a
/// `serde_json::Value`: whitespace between tokens goes, object members are re-sorted by key
/// bytes, strings and integers are copied as they are. That copy is exact because PostgreSQL
/// escapes strings as serde_json does (`\"`, `\\`, `\b \f \n \r \t`, other control
/// characters as lowercase `\u00xx`, nothing else) and writes integers in plain decimal.
///
/// Whatever it writes is JSON denoting the same value as the text, so equal output means an
/// equal value: a verifier using it cannot accept a changed value. It returns `None` for what
/// it does not copy exactly (a key with an escape, a number with a fraction or exponent, deeper
/// than [`MAX_JSON_DEPTH`], anything malformed); the caller then decodes the value and uses
/// [`canonical_json`], the definition.
pub(crate) struct JsonbCanonicalizer {
    /// Members of the objects being written, innermost last: key and value spans.
    members: Vec<Member>,
    /// Values of one object while its members are put in key order.
    reorder: Vec<u8>,
}

#[derive(Clone, Copy)]
struct Member {
    key: (usize, usize),
    value: (usize, usize),
}

impl JsonbCanonicalizer {
    pub(crate) fn new() -> JsonbCanonicalizer {
        JsonbCanonicalizer { members: Vec::new(), reorder: Vec::new() }
    }

    /// Append the canonical form of `text` to `out`; on `None`, `out` is left as it was.
    pub(crate) fn write(&mut self, text: &[u8], out: &mut Vec<u8>) -> Option<()> {
        let start = out.len();
        let mut at = 0;
        let written = self.value(text, &mut at, out, 0).filter(|()| skip_whitespace(text, at) == text.len());
        if written.is_none() {
            out.truncate(start);
            self.members.clear();
        }
        written
    }

    fn value(&mut self, text: &[u8], at: &mut usize, out: &mut Vec<u8>, depth: usize) -> Option<()> {
        *at = skip_whitespace(text, *at);
        match *text.get(*at)? {
            b'{' if depth < MAX_JSON_DEPTH => self.object(text, at, out, depth + 1),
            b'[' if depth < MAX_JSON_DEPTH => self.array(text, at, out, depth + 1),
            b'"' => {
                let (from, to) = string_span(text, *at)?;
                out.extend_from_slice(&text[from..to]);
                *at = to;
                Some(())
            }
            b't' => literal(text, at, b"true", out),
            b'f' => literal(text, at, b"false", out),
            b'n' => literal(text, at, b"null", out),
            b'-' | b'0'..=b'9' => {
                let from = *at;
                *at += usize::from(text[from] == b'-');
                let digits = text[*at..].iter().take_while(|byte| byte.is_ascii_digit()).count();
                *at += digits;
                // A fraction or exponent would be a float, refused by the append (R-UNIT-1).
                if digits == 0 || matches!(text.get(*at), Some(b'.' | b'e' | b'E')) {
                    return None;
                }
                out.extend_from_slice(&text[from..*at]);
                Some(())
            }
            _ => None,
        }
    }

    fn array(&mut self, text: &[u8], at: &mut usize, out: &mut Vec<u8>, depth: usize) -> Option<()> {
        *at += 1;
        out.push(b'[');
        if next_is(text, at, b']') {
            out.push(b']');
            return Some(());
        }
        loop {
            self.value(text, at, out, depth)?;
            if next_is(text, at, b',') {
                out.push(b',');
            } else if next_is(text, at, b']') {
                out.push(b']');
                return Some(());
            } else {
                return None;
            }
        }
    }

    fn object(&mut self, text: &[u8], at: &mut usize, out: &mut Vec<u8>, depth: usize) -> Option<()> {
        *at += 1;
        let start = out.len();
        let first = self.members.len();
        if !next_is(text, at, b'}') {
            loop {
                *at = skip_whitespace(text, *at);
                let key = string_span(text, *at)?;
                // An escape makes the raw bytes order differently from the key's own bytes.
                if text[key.0..key.1].contains(&b'\\') {
                    return None;
                }
                *at = key.1;
                if !next_is(text, at, b':') {
                    return None;
                }
                let value_start = out.len();
                self.value(text, at, out, depth)?;
                self.members.push(Member { key, value: (value_start - start, out.len() - start) });
                if next_is(text, at, b'}') {
                    break;
                }
                if !next_is(text, at, b',') {
                    return None;
                }
            }
        }
        // The values were written in jsonb's order; write the members again in key order.
        let members = &mut self.members[first..];
        // Compare without the quotes: a closing quote would sort before a space or `!`.
        members.sort_unstable_by(|a, b| text[a.key.0 + 1..a.key.1 - 1].cmp(&text[b.key.0 + 1..b.key.1 - 1]));
        self.reorder.clear();
        self.reorder.extend_from_slice(&out[start..]);
        out.truncate(start);
        out.push(b'{');
        for (index, member) in members.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&text[member.key.0..member.key.1]);
            out.push(b':');
            out.extend_from_slice(&self.reorder[member.value.0..member.value.1]);
        }
        out.push(b'}');
        self.members.truncate(first);
        Some(())
    }
}

fn skip_whitespace(text: &[u8], mut at: usize) -> usize {
    while matches!(text.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Consume `byte` after optional whitespace, if it is next.
fn next_is(text: &[u8], at: &mut usize, byte: u8) -> bool {
    let next = skip_whitespace(text, *at);
    if text.get(next) == Some(&byte) {
        *at = next + 1;
        true
    } else {
        false
    }
}

fn literal(text: &[u8], at: &mut usize, word: &[u8], out: &mut Vec<u8>) -> Option<()> {
    if !text[*at..].starts_with(word) {
        return None;
    }
    *at += word.len();
    out.extend_from_slice(word);
    Some(())
}

/// The span of the string starting at `at` (an opening quote), quotes included.
fn string_span(text: &[u8], at: usize) -> Option<(usize, usize)> {
    if text.get(at) != Some(&b'"') {
        return None;
    }
    let mut index = at + 1;
    loop {
        match *text.get(index)? {
            b'"' => return Some((at, index + 1)),
            b'\\' => index += 2,
            // PostgreSQL escapes every control character; a raw one is not its output.
            byte if byte < 0x20 => return None,
            _ => index += 1,
        }
    }
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
