//! The per-property hash chains and their formats.
//!
//! Two chains per property, each with its head in `property_heads`: the event chain (one entry
//! per event, at its global position) and the refusal chain (one entry per refused command, at
//! its refusal sequence number). Both start from [`GENESIS_HASH`] (32 zero bytes).
//!
//! # Format 2 (current): one JSON object per entry, hashed in RFC 8785 (JCS) form
//!
//! `h_n = SHA-256(JCS(entry_n))`, where `entry_n` is, for an event,
//!
//! ```text
//! {"body": {"append": {...}?, "event_id": "<uuid>", "event_type": "...", "metadata": {...},
//!           "payload": {...}, "postings": [{"account": "...", "amount_cents": n}, ...],
//!           "property": "...", "schema_version": n, "stream": "..."},
//!  "format": 2, "kind": "event", "position": n, "prev": "<hex of h_{n-1}>",
//!  "recorded_at_micros": n, "stream_version": n}
//! ```
//!
//! and for a refusal `{"body": {...the rejection...}, "format": 2, "kind": "refusal",
//! "position": <refusal seq>, "prev": "<hex>", "recorded_at_micros": n}` (fields in
//! [`RefusalFields`]). `append` is present on the last event of an append that carried command
//! ids: `{"append_id": "<uuid>", "commands": [{"command_id": "...", "request_sha256": "<hex>"},
//! ...] (by command id), "reply_sha256": "<hex of SHA-256 of the stored reply>"}`: the result
//! stored for a command id is bound to the chain, and a command row cannot be deleted or
//! replaced without the entry telling. A stored row gives every field (payload and metadata are
//! the stored jsonb, `recorded_at_micros` the stored time in µs since the Unix epoch), so any
//! JCS library recomputes a hash: build the object, canonicalise, SHA-256.
//!
//! Numbers in chained JSON are integers of at most 2^53 - 1 in magnitude (I-JSON, RFC 7493):
//! every JCS implementation reads them exactly. Anything else (a float: R-UNIT-1; a larger
//! integer) is refused by the append before the database.
//!
//! The store computes every event hash itself ([`event_entry_start`], then [`event_entry_hash`]
//! with the position, previous hash, time and stream version), from the head it assumes;
//! `chipledger_append` checks that assumption under the property's commit lock and assigns the
//! same numbers (append.rs), so no hash is computed in the database.
//!
//! # Format 1 (events recorded before migration 0007)
//!
//! `h_n = SHA-256(h_{n-1} || be64(position) || be64(recorded_at µs) || be64(stream_version) ||
//! body_n)`, `body_n = "chipledger.event.v1" || str(property) || str(stream) || event_id (16
//! bytes) || str(event_type) || be16(schema_version) || str(canonical(payload)) ||
//! str(canonical(metadata)) || be32(posting count) || per posting str(account) ||
//! be64(amount_cents)`, `str(s) = be32(byte length) || bytes`, canonical JSON with keys sorted by
//! UTF-8 bytes. Each event row records its format (`events.chain_format`); a format 1 entry
//! after a format 2 entry does not verify.
//!
//! What the chains catch alone: any changed byte of a hashed field, a deleted, inserted or
//! reordered entry or posting, a truncated tail (the head keeps the last position and hash), a
//! command row whose reply or outcome was replaced. What they cannot catch alone: someone with
//! write access to the database who rewrites rows *and* recomputes every later hash and the
//! head, since the hash has no secret. Against that, chipledgerd signs checkpoints
//! (`checkpoint.rs`) kept outside the database, and verification names the last one the log
//! still agrees with.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::StoreError;

pub const GENESIS_HASH: [u8; 32] = [0; 32];
/// The chain format new entries are written in.
pub const CHAIN_FORMAT: i16 = 2;
/// Positions per page of [`crate::Store::verify_chain`] (pages are checked independently).
pub const VERIFY_PAGE_POSITIONS: i64 = 2_000;
/// Largest magnitude of an integer in chained JSON (2^53 - 1, I-JSON).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;
const BODY_TAG_V1: &[u8] = b"chipledger.event.v1";

/// The fields of an event entry other than the JSON and the postings (of a new event, or as a
/// stored row gives them).
pub struct StoredFields<'a> {
    pub property: &'a str,
    pub stream: &'a str,
    pub event_id: &'a uuid::Uuid,
    pub event_type: &'a str,
    pub schema_version: i16,
}

/// What the last event of an append binds: the append, its commands and its stored reply.
pub struct AppendLink<'a> {
    pub append_id: &'a uuid::Uuid,
    /// (command id, request hash), sorted by command id bytes.
    pub commands: Vec<(&'a str, &'a [u8])>,
    pub reply_sha256: [u8; 32],
}

/// The stored fields of a refusal, as its chain entry's body names them.
pub struct RefusalFields<'a> {
    pub property: &'a str,
    pub command_id: &'a str,
    pub request_hash: &'a [u8],
    pub reason_code: &'a str,
    pub rule_id: &'a str,
    pub detail: &'a str,
    pub actor_id: &'a str,
    pub actor_role: &'a str,
    pub device: Option<&'a str>,
    pub player_id: Option<&'a str>,
    /// `YYYY-MM-DD`.
    pub gaming_day: Option<&'a str>,
    pub streams: &'a [String],
    pub reply_sha256: [u8; 32],
}

/// RFC 8785 (JCS) bytes of a JSON value whose numbers are all integers within
/// [`MAX_SAFE_INTEGER`]: members sorted by the UTF-16 code units of their keys, no whitespace,
/// strings escaped as JCS says (`\"`, `\\`, `\b \f \n \r \t`, other control characters as
/// lowercase `\u00xx`, nothing else), integers in plain decimal.
pub fn jcs(value: &Value) -> Result<Vec<u8>, StoreError> {
    canonical(value, Canonical::Jcs)
}

/// [`jcs`] of JSON text, written to `out`: straight from the text where `canonicalizer` (a
/// [`Canonical::Jcs`] one) copies it exactly (serde_json escapes strings as JCS does, which is
/// how an event's JSON is made), else through the decoded value. The same bytes either way, and
/// the same refusals: a float (R-UNIT-1), an integer beyond 2^53 - 1.
pub(crate) fn jcs_text(text: &str, canonicalizer: &mut JsonbCanonicalizer, out: &mut Vec<u8>) -> Result<(), StoreError> {
    debug_assert_eq!(canonicalizer.form, Canonical::Jcs);
    if canonicalizer.write(text.as_bytes(), out).is_some() {
        return Ok(());
    }
    let value: Value =
        serde_json::from_str(text).map_err(|error| StoreError::InvalidRequest(format!("event JSON does not decode: {error}")))?;
    write_canonical(&value, out, Canonical::Jcs)
}

/// One writer for both canonical forms: they differ only in key order and in which integers
/// they take.
fn write_canonical(value: &Value, out: &mut Vec<u8>, form: Canonical) -> Result<(), StoreError> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) if number.is_f64() => {
            return Err(StoreError::InvalidRequest(format!("floating-point number {number} in event JSON (R-UNIT-1)")));
        }
        Value::Number(number) => {
            let safe = number.as_i64().is_some_and(|integer| integer.unsigned_abs() <= MAX_SAFE_INTEGER as u64);
            if form == Canonical::Jcs && !safe {
                return Err(StoreError::InvalidRequest(format!(
                    "integer {number} in event JSON is beyond 2^53 - 1 (I-JSON, RFC 7493): no JSON verifier reads it exactly"
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
                write_canonical(item, out, form)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            match form {
                Canonical::V1 => entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes())),
                Canonical::Jcs => entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16())),
            }
            out.push(b'{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_key(out, key);
                write_canonical(item, out, form)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// A copy of `value` whose integers beyond [`MAX_SAFE_INTEGER`] are decimal strings: for JSON
/// the caller echoes back (a refused request may carry any number the client sent).
pub fn ijson_safe(value: &Value) -> Value {
    match value {
        Value::Number(number) if number.as_i64().is_none_or(|integer| integer.unsigned_abs() > MAX_SAFE_INTEGER as u64) => {
            Value::String(number.to_string())
        }
        Value::Array(items) => Value::Array(items.iter().map(ijson_safe).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(key, item)| (key.clone(), ijson_safe(item))).collect()),
        other => other.clone(),
    }
}

fn write_json_string(text: &str, out: &mut Vec<u8>) {
    // Nothing to escape (the usual id or account key): the bytes between quotes.
    if !text.bytes().any(|byte| byte < 0x20 || byte == b'"' || byte == b'\\') {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
        return;
    }
    // serde_json escapes exactly as JCS does; writing to a Vec cannot fail.
    serde_json::to_writer(&mut *out, text).expect("writing a JSON string to memory");
}

fn write_key(out: &mut Vec<u8>, key: &str) {
    write_json_string(key, out);
    out.push(b':');
}

fn write_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let start = out.len();
    out.resize(start + 2 * bytes.len(), 0);
    hex::encode_to_slice(bytes, &mut out[start..]).expect("two hex digits for each byte");
    out.push(b'"');
}

fn safe_integer(value: i64, what: &str) -> Result<i64, String> {
    if value.unsigned_abs() > MAX_SAFE_INTEGER as u64 {
        return Err(format!("{what} {value} is beyond 2^53 - 1 (I-JSON, RFC 7493)"));
    }
    Ok(value)
}

/// The start of a format 2 event entry, up to and including `"position":` (see the module doc),
/// into `out` (cleared first). `payload` and `metadata` are already in JCS form.
pub fn event_entry_start<'p>(
    out: &mut Vec<u8>,
    fields: &StoredFields<'_>,
    payload: &[u8],
    metadata: &[u8],
    postings: impl Iterator<Item = (&'p str, i64)>,
    append: Option<&AppendLink<'_>>,
) -> Result<(), String> {
    out.clear();
    out.extend_from_slice(b"{\"body\":{");
    if let Some(append) = append {
        out.extend_from_slice(b"\"append\":{\"append_id\":\"");
        out.extend_from_slice(append.append_id.hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()).as_bytes());
        out.extend_from_slice(b"\",\"commands\":[");
        for (index, (command_id, request_hash)) in append.commands.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            out.push(b'{');
            write_key(out, "command_id");
            write_json_string(command_id, out);
            out.push(b',');
            write_key(out, "request_sha256");
            write_hex(out, request_hash);
            out.push(b'}');
        }
        out.extend_from_slice(b"],\"reply_sha256\":");
        write_hex(out, &append.reply_sha256);
        out.extend_from_slice(b"},");
    }
    write_key(out, "event_id");
    out.push(b'"');
    out.extend_from_slice(fields.event_id.hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()).as_bytes());
    out.extend_from_slice(b"\",");
    write_key(out, "event_type");
    write_json_string(fields.event_type, out);
    out.push(b',');
    write_key(out, "metadata");
    out.extend_from_slice(metadata);
    out.push(b',');
    write_key(out, "payload");
    out.extend_from_slice(payload);
    out.push(b',');
    write_key(out, "postings");
    out.push(b'[');
    for (index, (account, amount_cents)) in postings.enumerate() {
        if index > 0 {
            out.push(b',');
        }
        out.push(b'{');
        write_key(out, "account");
        write_json_string(account, out);
        out.push(b',');
        write_key(out, "amount_cents");
        out.extend_from_slice(itoa(safe_integer(amount_cents, "amount_cents")?, &mut [0; 20]));
        out.push(b'}');
    }
    out.extend_from_slice(b"],");
    write_key(out, "property");
    write_json_string(fields.property, out);
    out.push(b',');
    write_key(out, "schema_version");
    out.extend_from_slice(itoa(i64::from(fields.schema_version), &mut [0; 20]));
    out.push(b',');
    write_key(out, "stream");
    write_json_string(fields.stream, out);
    out.extend_from_slice(b"},\"format\":2,\"kind\":\"event\",\"position\":");
    Ok(())
}

/// The hash of a format 2 event entry from its start and the values assigned at the head: what
/// the append stores and verification recomputes.
pub fn event_entry_hash(start: &[u8], position: i64, previous: &[u8; 32], recorded_at_micros: i64, stream_version: i64) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(start);
    let mut end = [0u8; 160];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        end[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    put(itoa(position, &mut [0; 20]));
    put(b",\"prev\":\"");
    let mut hex_previous = [0u8; 64];
    hex::encode_to_slice(previous, &mut hex_previous).expect("64 hex digits for 32 bytes");
    put(&hex_previous);
    put(b"\",\"recorded_at_micros\":");
    put(itoa(recorded_at_micros, &mut [0; 20]));
    put(b",\"stream_version\":");
    put(itoa(stream_version, &mut [0; 20]));
    put(b"}");
    hasher.update(&end[..at]);
    hasher.finalize().into()
}

/// The decimal digits of `value` in `buffer` (no allocation; `i64` needs at most 20 bytes).
fn itoa(value: i64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut at = buffer.len();
    let mut rest = value.unsigned_abs();
    loop {
        at -= 1;
        buffer[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if value < 0 {
        at -= 1;
        buffer[at] = b'-';
    }
    &buffer[at..]
}

/// The start of a format 2 refusal entry, up to and including `"position":`. `numbers` and
/// `request` are already in JCS form.
pub fn refusal_entry_start(out: &mut Vec<u8>, fields: &RefusalFields<'_>, numbers: &[u8], request: &[u8]) {
    let optional = |out: &mut Vec<u8>, value: Option<&str>| match value {
        Some(text) => write_json_string(text, out),
        None => out.extend_from_slice(b"null"),
    };
    out.clear();
    out.extend_from_slice(b"{\"body\":{");
    write_key(out, "actor_id");
    write_json_string(fields.actor_id, out);
    out.push(b',');
    write_key(out, "actor_role");
    write_json_string(fields.actor_role, out);
    out.push(b',');
    write_key(out, "command_id");
    write_json_string(fields.command_id, out);
    out.push(b',');
    write_key(out, "detail");
    write_json_string(fields.detail, out);
    out.push(b',');
    write_key(out, "device");
    optional(out, fields.device);
    out.push(b',');
    write_key(out, "gaming_day");
    optional(out, fields.gaming_day);
    out.push(b',');
    write_key(out, "numbers");
    out.extend_from_slice(numbers);
    out.push(b',');
    write_key(out, "player_id");
    optional(out, fields.player_id);
    out.push(b',');
    write_key(out, "property");
    write_json_string(fields.property, out);
    out.push(b',');
    write_key(out, "reason_code");
    write_json_string(fields.reason_code, out);
    out.push(b',');
    write_key(out, "reply_sha256");
    write_hex(out, &fields.reply_sha256);
    out.push(b',');
    write_key(out, "request");
    out.extend_from_slice(request);
    out.push(b',');
    write_key(out, "request_sha256");
    write_hex(out, fields.request_hash);
    out.push(b',');
    write_key(out, "rule_id");
    write_json_string(fields.rule_id, out);
    out.push(b',');
    write_key(out, "streams");
    out.push(b'[');
    for (index, stream) in fields.streams.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_json_string(stream, out);
    }
    out.extend_from_slice(b"]},\"format\":2,\"kind\":\"refusal\",\"position\":");
}

/// The hash of a format 2 refusal entry: the same computation as `chipledger_record_refusal`.
pub fn refusal_entry_hash(start: &[u8], refusal_seq: i64, previous: &[u8; 32], recorded_at_micros: i64) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(start);
    hasher.update(
        format!("{refusal_seq},\"prev\":\"{}\",\"recorded_at_micros\":{recorded_at_micros}}}", hex::encode(previous))
            .as_bytes(),
    );
    hasher.finalize().into()
}

fn put_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// Write a format 1 body into `out` (cleared first) from canonical payload and metadata bytes.
pub(crate) fn write_body_v1<'p>(
    out: &mut Vec<u8>,
    fields: &StoredFields<'_>,
    canonical_payload: &[u8],
    canonical_metadata: &[u8],
    postings: impl ExactSizeIterator<Item = (&'p str, i64)>,
) {
    out.clear();
    out.extend_from_slice(BODY_TAG_V1);
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

/// One format 1 step: the computation of the 0001 to 0006 appends.
pub fn chain_step_v1(previous: &[u8; 32], position: i64, recorded_at_micros: i64, stream_version: i64, body: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(previous);
    hasher.update(position.to_be_bytes());
    hasher.update(recorded_at_micros.to_be_bytes());
    hasher.update(stream_version.to_be_bytes());
    hasher.update(body);
    hasher.finalize().into()
}

/// Format 1 canonical JSON bytes (keys sorted by UTF-8 bytes, any integer).
pub fn canonical_json_v1(value: &Value) -> Result<Vec<u8>, StoreError> {
    canonical(value, Canonical::V1)
}

/// Which canonical form a [`JsonbCanonicalizer`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Canonical {
    /// Chain format 1: keys by UTF-8 bytes, any integer.
    V1,
    /// Chain format 2: RFC 8785, keys by UTF-16 code units, integers within 2^53 - 1.
    Jcs,
}

/// The canonical form of a decoded value (the definition the shortcut is checked against).
pub fn canonical(value: &Value, form: Canonical) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::new();
    write_canonical(value, &mut out, form)?;
    Ok(out)
}

/// [`canonical`] of the jsonb value whose PostgreSQL text is `text`, taken straight from the
/// text; `None` where that shortcut does not apply (see [`JsonbCanonicalizer`]).
pub fn canonical_from_jsonb_text(text: &[u8], form: Canonical) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    JsonbCanonicalizer::new(form).write(text, &mut out)?;
    Some(out)
}

/// Nesting PostgreSQL's jsonb text may have before [`JsonbCanonicalizer`] gives up; the same
/// as serde_json's own recursion limit, so the fallback decodes no deeper than the append did.
const MAX_JSON_DEPTH: usize = 128;

/// Canonical JSON straight from the text PostgreSQL writes for a jsonb value (`jsonb_out`:
/// `{"k": v, "k2": [1, 2]}`, keys ordered by length then bytes), without building a
/// `serde_json::Value`: whitespace between tokens goes, object members are re-sorted by key
/// (UTF-16 code units for JCS, bytes for format 1), strings and integers are copied as they are. That copy is exact because PostgreSQL
/// escapes strings as serde_json does (`\"`, `\\`, `\b \f \n \r \t`, other control
/// characters as lowercase `\u00xx`, nothing else) and writes integers in plain decimal.
///
/// Whatever it writes is JSON denoting the same value as the text, so equal output means an
/// equal value: a verifier using it cannot accept a changed value. It returns `None` for what
/// it does not copy exactly (a key with an escape, a key twice in one object, a number with a
/// fraction or exponent or, for JCS, beyond 2^53 - 1 or with a leading zero, deeper than
/// [`MAX_JSON_DEPTH`], anything malformed); the caller then decodes the value and uses
/// [`canonical`], the definition.
pub(crate) struct JsonbCanonicalizer {
    form: Canonical,
    /// The value read: its nodes in text order, each container followed by its contents.
    nodes: Vec<Node>,
    /// Members of the objects being written, innermost last: their node indices, in key order.
    order: Vec<usize>,
}

/// One value of the text: a scalar's span (quotes included), or a container whose contents are
/// the nodes up to `end`; an object member's node also has the span of its key.
#[derive(Clone, Copy)]
struct Node {
    shape: Shape,
    span: (usize, usize),
    key: (usize, usize),
    /// The index after this node and its contents.
    end: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Scalar,
    Array,
    Object,
}

impl JsonbCanonicalizer {
    pub(crate) fn new(form: Canonical) -> JsonbCanonicalizer {
        JsonbCanonicalizer { form, nodes: Vec::new(), order: Vec::new() }
    }

    /// Append the canonical form of `text` to `out`; on `None`, `out` is left as it was.
    /// Two passes: the text is read into nodes (spans, nothing copied), then written out with
    /// every object's members in key order, so each byte of a value is copied once.
    pub(crate) fn write(&mut self, text: &[u8], out: &mut Vec<u8>) -> Option<()> {
        self.nodes.clear();
        self.order.clear();
        let mut at = 0;
        self.read(text, &mut at, (0, 0), 0)?;
        if skip_whitespace(text, at) != text.len() {
            return None;
        }
        let start = out.len();
        let written = self.emit(text, 0, out);
        if written.is_none() {
            out.truncate(start);
        }
        written
    }

    fn read(&mut self, text: &[u8], at: &mut usize, key: (usize, usize), depth: usize) -> Option<()> {
        *at = skip_whitespace(text, *at);
        let from = *at;
        let shape = match *text.get(from)? {
            b'{' if depth < MAX_JSON_DEPTH => Shape::Object,
            b'[' if depth < MAX_JSON_DEPTH => Shape::Array,
            b'"' => {
                *at = string_span(text, from)?.1;
                Shape::Scalar
            }
            b't' | b'f' | b'n' => {
                literal(text, at)?;
                Shape::Scalar
            }
            b'-' | b'0'..=b'9' => {
                *at += usize::from(text[from] == b'-');
                let digits = text[*at..].iter().take_while(|byte| byte.is_ascii_digit()).count();
                *at += digits;
                // A fraction or exponent would be a float, refused by the append (R-UNIT-1).
                if digits == 0 || matches!(text.get(*at), Some(b'.' | b'e' | b'E')) {
                    return None;
                }
                if self.form == Canonical::Jcs && !jcs_integer(&text[from..*at]) {
                    return None;
                }
                Shape::Scalar
            }
            _ => return None,
        };
        let index = self.nodes.len();
        self.nodes.push(Node { shape, span: (from, *at), key, end: index + 1 });
        match shape {
            Shape::Scalar => return Some(()),
            Shape::Array => {
                *at += 1;
                if !next_is(text, at, b']') {
                    loop {
                        self.read(text, at, (0, 0), depth + 1)?;
                        if next_is(text, at, b']') {
                            break;
                        }
                        if !next_is(text, at, b',') {
                            return None;
                        }
                    }
                }
            }
            Shape::Object => {
                *at += 1;
                if !next_is(text, at, b'}') {
                    loop {
                        *at = skip_whitespace(text, *at);
                        let (from, to, escaped) = string_span(text, *at)?;
                        // An escape makes the raw bytes order differently from the key's own bytes.
                        if escaped {
                            return None;
                        }
                        *at = to;
                        if !next_is(text, at, b':') {
                            return None;
                        }
                        self.read(text, at, (from, to), depth + 1)?;
                        if next_is(text, at, b'}') {
                            break;
                        }
                        if !next_is(text, at, b',') {
                            return None;
                        }
                    }
                }
            }
        }
        self.nodes[index].end = self.nodes.len();
        Some(())
    }

    fn emit(&mut self, text: &[u8], index: usize, out: &mut Vec<u8>) -> Option<()> {
        let node = self.nodes[index];
        match node.shape {
            Shape::Scalar => out.extend_from_slice(&text[node.span.0..node.span.1]),
            Shape::Array => {
                out.push(b'[');
                let mut child = index + 1;
                while child < node.end {
                    if child > index + 1 {
                        out.push(b',');
                    }
                    self.emit(text, child, out)?;
                    child = self.nodes[child].end;
                }
                out.push(b']');
            }
            Shape::Object => {
                let first = self.order.len();
                let mut child = index + 1;
                while child < node.end {
                    self.order.push(child);
                    child = self.nodes[child].end;
                }
                self.sort_members(text, first)?;
                out.push(b'{');
                for position in first..self.order.len() {
                    if position > first {
                        out.push(b',');
                    }
                    let member = self.order[position];
                    let key = self.nodes[member].key;
                    out.extend_from_slice(&text[key.0..key.1]);
                    out.push(b':');
                    self.emit(text, member, out)?;
                }
                out.push(b'}');
                self.order.truncate(first);
            }
        }
        Some(())
    }

    /// Put the members from `first` on in key order; `None` for a key twice.
    fn sort_members(&mut self, text: &[u8], first: usize) -> Option<()> {
        let nodes = &self.nodes;
        let members = &mut self.order[first..];
        // Compare without the quotes: a closing quote would sort before a space or `!`.
        let key = |member: &usize| {
            let (from, to) = nodes[*member].key;
            &text[from + 1..to - 1]
        };
        match self.form {
            Canonical::V1 => members.sort_unstable_by(|a, b| key(a).cmp(key(b))),
            // UTF-8 byte order is UTF-16 code unit order unless a key holds a character from
            // U+E000 on (its UTF-8 starts with 0xEE or above): the common case sorts by bytes.
            Canonical::Jcs if members.iter().all(|member| key(member).iter().all(|byte| *byte < 0xEE)) => {
                members.sort_unstable_by(|a, b| key(a).cmp(key(b)));
            }
            Canonical::Jcs => {
                // Keys without escapes are UTF-8 text (PostgreSQL checked it); not text: no shortcut.
                if members.iter().any(|member| std::str::from_utf8(key(member)).is_err()) {
                    return None;
                }
                let utf16 = |bytes: &[u8]| std::str::from_utf8(bytes).unwrap_or_default().encode_utf16().collect::<Vec<u16>>();
                members.sort_by_cached_key(|member| utf16(key(member)));
            }
        }
        // A key twice is not what jsonb or serde writes for one value: the decoded value (which
        // keeps the last) decides.
        if members.windows(2).any(|pair| key(&pair[0]) == key(&pair[1])) {
            return None;
        }
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

fn literal(text: &[u8], at: &mut usize) -> Option<()> {
    let word = [&b"true"[..], b"false", b"null"].into_iter().find(|word| text[*at..].starts_with(word))?;
    *at += word.len();
    Some(())
}

/// The span of the string starting at `at` (an opening quote), quotes included.
fn string_span(text: &[u8], at: usize) -> Option<(usize, usize, bool)> {
    if text.get(at) != Some(&b'"') {
        return None;
    }
    let mut index = at + 1;
    let mut escaped = false;
    loop {
        // PostgreSQL escapes every control character; a raw one is not its output.
        index += text.get(index..)?.iter().position(|byte| matches!(byte, b'"' | b'\\' | 0..0x20))?;
        match text[index] {
            b'"' => return Some((at, index + 1, escaped)),
            b'\\' => {
                escaped = true;
                index += 2;
            }
            _ => return None,
        }
    }
}

/// True when a decimal integer's text is what JCS writes for it: within 2^53 - 1, no `-0`, no
/// leading zero.
fn jcs_integer(text: &[u8]) -> bool {
    /// Digits of [`MAX_SAFE_INTEGER`]: an integer with fewer is within it.
    const SAFE_DIGITS: usize = MAX_SAFE_INTEGER.ilog10() as usize + 1;
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) || (digits.len() > 1 && digits[0] == b'0') || (text[0] == b'-' && digits == b"0") {
        return false;
    }
    digits.len() < SAFE_DIGITS
        || (digits.len() == SAFE_DIGITS
            && std::str::from_utf8(digits).ok().and_then(|digits| digits.parse::<i64>().ok()).is_some_and(|value| value <= MAX_SAFE_INTEGER))
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
    /// A command row does not say what the log says at the position it is bound to (its stored
    /// outcome names other positions, another hash or time), or command rows are bound to
    /// positions the log does not have.
    CommandNotBound(String),
    /// A stored event cannot be decoded or re-encoded.
    Undecodable(String),
    /// The archive anchor the check starts from is no archive: the live log still holds
    /// events at or before it (an anchor written by hand would hide what precedes it).
    NotArchived(String),
}

/// Result of [`crate::Store::verify_chain`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainReport {
    pub ok: bool,
    pub events_checked: i64,
    pub first_bad_position: Option<i64>,
    pub problem: Option<ChainProblem>,
    pub head: ChainDigest,
    /// Where the check started when partitions were archived: the last archived position and
    /// its hash (the archive file holds what came before); `None`: from genesis.
    pub anchor: Option<ChainDigest>,
}

/// A point of the chain worth saving outside the database: position and hash after it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChainDigest {
    pub property: String,
    pub position: i64,
    #[serde(with = "hex::serde")]
    pub hash: [u8; 32],
}
