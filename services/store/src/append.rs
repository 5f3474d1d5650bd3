//! The append path: validate and encode in Rust, hash the chain in Rust, then one statement
//! (`chipledger_append`, `sql/fn_chipledger_append.sql`) does idempotency, expected versions,
//! balance checks, projections, positions and inserts. Each event's chain entry (format 2,
//! `chain.rs`) is built here up to the values assigned at the head (position, previous hash,
//! time, stream version); the last event's entry binds the append's command ids and the SHA-256
//! of its reply. The hashes are computed here from the head the store assumes ([`Head`]: the
//! group commit keeps the property's last one), and the function compares that assumption with
//! the head under the lock: if another writer moved it, or a member turned out to be a replay,
//! nothing is written and the answer carries the head as it is, and the group is hashed again.
//!
//! Global positions: a per-property commit lock. The function takes the row lock on the
//! property's `property_heads` row once no member is refused, and the lock is released by
//! COMMIT. So position n+1 is only assigned after the transaction holding n has committed (or
//! rolled back, in which case n is reused): positions are dense, and they become visible
//! strictly in order, so a reader following positions never skips a late commit. The lock is
//! held for the projections and inserts of one group plus the commit's WAL flush; group commit
//! amortises it. The xid8 + `pg_snapshot_xmin` alternative keeps writers fully parallel but
//! cannot give a gap-free, hash-chained order at insert time (the chain needs the previous
//! hash), so it would need a second sequencing pass; we chose the lock.

use std::collections::HashMap;

use serde::Deserialize;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::chain::{self, AppendLink, StoredFields};
use crate::error::{StoreError, classify};
use crate::event::*;
use crate::projection::{InlineProjection, ProjectionOp};

/// Arrays bound to `chipledger_append`.
pub(crate) struct EncodedAppend {
    property: String,
    decided: crate::event::DecidedAt,
    append_id: Uuid,
    command_ids: Vec<String>,
    request_hashes: Vec<Vec<u8>>,
    reply: Vec<u8>,
    streams: Vec<String>,
    expected: Vec<i64>,
    event_stream: Vec<i32>,
    event_ids: Vec<Uuid>,
    event_types: Vec<String>,
    schema_versions: Vec<i16>,
    /// RFC 8785 text of each payload and metadata: the bytes hashed in the entry, bound as the
    /// stored jsonb (made once, see [`JsonbText`]).
    payloads: Vec<Vec<u8>>,
    metadata: Vec<Vec<u8>>,
    entries: Vec<Vec<u8>>,
    posting_event: Vec<i32>,
    posting_index: Vec<i16>,
    posting_account: Vec<String>,
    posting_amount: Vec<i64>,
    projection_ops: Vec<Vec<u8>>,
}

/// JSON text bound as a jsonb parameter. PostgreSQL's binary jsonb is a version byte (1) and
/// the text, so bytes already written (the canonical payload the chain hashes, a projection op)
/// go out as they are, without a `serde_json::Value` to copy and serialise again.
#[derive(Clone, Copy)]
struct JsonbText<'a>(&'a [u8]);

impl sqlx::Type<sqlx::Postgres> for JsonbText<'_> {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        sqlx::postgres::PgTypeInfo::with_name("jsonb")
    }
}

impl sqlx::postgres::PgHasArrayType for JsonbText<'_> {
    fn array_type_info() -> sqlx::postgres::PgTypeInfo {
        sqlx::postgres::PgTypeInfo::with_name("_jsonb")
    }
}

impl sqlx::Encode<'_, sqlx::Postgres> for JsonbText<'_> {
    fn encode_by_ref(&self, buf: &mut sqlx::postgres::PgArgumentBuffer) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        buf.push(1);
        buf.extend_from_slice(self.0);
        Ok(sqlx::encode::IsNull::No)
    }
}

/// The property's head as the hashes assume it: its last position and hash, and the time of
/// its last events (µs since the epoch). Genesis is position 0 with [`chain::GENESIS_HASH`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) position: i64,
    pub(crate) hash: [u8; 32],
    pub(crate) recorded_micros: i64,
}

/// Times `chipledger_append` may answer "hash again" for one group before the store gives up
/// with [`StoreError::Contention`]: each answer carries the head under the lock, so a second
/// call only misses it when another process appended in between.
const MAX_HEAD_ATTEMPTS: usize = 4;

impl EncodedAppend {
    pub(crate) fn property(&self) -> &str {
        &self.property
    }

    pub(crate) fn append_id(&self) -> Uuid {
        self.append_id
    }

    pub(crate) fn event_count(&self) -> usize {
        self.event_ids.len()
    }

    pub(crate) fn shares_a_command_with(&self, other: &EncodedAppend) -> bool {
        self.command_ids.iter().any(|id| other.command_ids.contains(id))
    }
}

fn invalid(message: impl Into<String>) -> StoreError {
    StoreError::InvalidRequest(message.into())
}

pub(crate) fn validate_property(property: &str) -> Result<(), StoreError> {
    if property.is_empty() || property.len() > 64 {
        return Err(invalid("property id must be 1..=64 bytes"));
    }
    Ok(())
}

/// Check bounds and invariants that need no database, and encode the request.
pub(crate) fn encode(request: &AppendRequest, projection: Option<&dyn InlineProjection>) -> Result<EncodedAppend, StoreError> {
    validate_property(&request.property)?;
    if request.streams.is_empty() || request.streams.len() > MAX_STREAMS_PER_APPEND {
        return Err(StoreError::AppendSize { what: "streams", count: request.streams.len(), max: MAX_STREAMS_PER_APPEND });
    }
    if request.commands.len() > MAX_COMMANDS_PER_APPEND {
        return Err(StoreError::AppendSize { what: "commands", count: request.commands.len(), max: MAX_COMMANDS_PER_APPEND });
    }
    if request.reply.len() > MAX_REPLY_BYTES {
        return Err(invalid(format!("reply larger than {MAX_REPLY_BYTES} bytes")));
    }
    // Commands: the same id twice in one batch is one command if the requests are equal,
    // and a conflict if they are not.
    let mut seen: HashMap<&str, &[u8; 32]> = HashMap::new();
    let mut command_ids = Vec::with_capacity(request.commands.len());
    let mut request_hashes = Vec::with_capacity(request.commands.len());
    for command in &request.commands {
        if command.command_id.is_empty() || command.command_id.len() > 128 {
            return Err(invalid("command id must be 1..=128 bytes"));
        }
        match seen.get(command.command_id.as_str()) {
            Some(hash) if **hash == command.request_hash => continue,
            Some(_) => return Err(StoreError::IdempotencyConflict { command_id: command.command_id.clone() }),
            None => {
                seen.insert(&command.command_id, &command.request_hash);
                command_ids.push(command.command_id.clone());
                request_hashes.push(command.request_hash.to_vec());
            }
        }
    }

    let event_count: usize = request.streams.iter().map(|s| s.events.len()).sum();
    if event_count == 0 || event_count > MAX_EVENTS_PER_APPEND {
        return Err(StoreError::AppendSize { what: "events", count: event_count, max: MAX_EVENTS_PER_APPEND });
    }
    let mut encoded = EncodedAppend {
        property: request.property.clone(),
        decided: request.decided,
        append_id: Uuid::now_v7(),
        command_ids,
        request_hashes,
        reply: request.reply.clone(),
        streams: Vec::with_capacity(request.streams.len()),
        expected: Vec::with_capacity(request.streams.len()),
        event_stream: Vec::with_capacity(event_count),
        event_ids: Vec::with_capacity(event_count),
        event_types: Vec::with_capacity(event_count),
        schema_versions: Vec::with_capacity(event_count),
        payloads: Vec::with_capacity(event_count),
        metadata: Vec::with_capacity(event_count),
        entries: Vec::with_capacity(event_count),
        posting_event: Vec::new(),
        posting_index: Vec::new(),
        posting_account: Vec::new(),
        posting_amount: Vec::new(),
        projection_ops: Vec::new(),
    };
    let mut ops: Vec<ProjectionOp> = request.projection_ops.clone();
    let mut canonicalizer = chain::JsonbCanonicalizer::new(chain::Canonical::Jcs);
    let mut previous_metadata: Option<(&EventMetadata, Vec<u8>)> = None;
    for (stream_index, stream) in request.streams.iter().enumerate() {
        if stream.stream.is_empty() || stream.stream.len() > 128 {
            return Err(invalid("stream id must be 1..=128 bytes"));
        }
        if encoded.streams.contains(&stream.stream) {
            return Err(invalid(format!("stream {} appears twice in one append", stream.stream)));
        }
        if let ExpectedVersion::Exact(version) = stream.expected_version
            && version < 1
        {
            return Err(invalid("ExpectedVersion::Exact needs a version >= 1 (use NoStream)"));
        }
        encoded.streams.push(stream.stream.clone());
        encoded.expected.push(stream.expected_version.wire());
        for event in &stream.events {
            let event_index = encoded.event_ids.len();
            if event.event_type.is_empty() || event.event_type.len() > 128 {
                return Err(invalid("event type must be 1..=128 bytes"));
            }
            if event.postings.len() > MAX_POSTINGS_PER_EVENT {
                return Err(invalid(format!("at most {MAX_POSTINGS_PER_EVENT} postings per event")));
            }
            let sum_cents: i128 = event.postings.iter().map(|p| i128::from(p.amount_cents)).sum();
            if sum_cents != 0 {
                return Err(StoreError::Unbalanced { event_index, sum_cents });
            }
            let fields = StoredFields {
                property: &request.property,
                stream: &stream.stream,
                event_id: &event.event_id,
                event_type: &event.event_type,
                schema_version: event.schema_version,
            };
            let link = (event_index + 1 == event_count && !encoded.command_ids.is_empty()).then(|| append_link(&encoded));
            let mut payload_jcs = Vec::with_capacity(event.payload.as_str().len());
            chain::jcs_text(event.payload.as_str(), &mut canonicalizer, &mut payload_jcs)?;
            // The events of one command mostly share their metadata: written once for a run of them.
            let metadata_jcs = match &previous_metadata {
                Some((metadata, jcs)) if *metadata == &event.metadata => jcs.clone(),
                _ => {
                    let metadata = serde_json::to_string(&event.metadata).map_err(|e| invalid(e.to_string()))?;
                    let mut jcs = Vec::with_capacity(metadata.len());
                    chain::jcs_text(&metadata, &mut canonicalizer, &mut jcs)?;
                    previous_metadata = Some((&event.metadata, jcs.clone()));
                    jcs
                }
            };
            let mut entry = Vec::with_capacity(256 + payload_jcs.len() + metadata_jcs.len());
            let postings = event.postings.iter().map(|posting| (posting.account.as_str(), posting.amount_cents));
            chain::event_entry_start(&mut entry, &fields, &payload_jcs, &metadata_jcs, postings, link.as_ref())
                .map_err(invalid)?;
            if entry.len() > MAX_PAYLOAD_BYTES * 2 {
                return Err(invalid(format!("event larger than {MAX_PAYLOAD_BYTES} bytes")));
            }
            for (posting_index, posting) in event.postings.iter().enumerate() {
                if posting.account.is_empty() || posting.account.len() > 128 {
                    return Err(invalid("account key must be 1..=128 bytes"));
                }
                encoded.posting_event.push(event_index as i32 + 1);
                encoded.posting_index.push(posting_index as i16);
                encoded.posting_account.push(posting.account.clone());
                encoded.posting_amount.push(posting.amount_cents);
            }
            if let Some(projection) = projection {
                projection.project(&stream.stream, event, &mut ops);
            }
            encoded.event_stream.push(stream_index as i32 + 1);
            encoded.event_ids.push(event.event_id);
            encoded.event_types.push(event.event_type.clone());
            encoded.schema_versions.push(event.schema_version);
            encoded.payloads.push(payload_jcs);
            encoded.metadata.push(metadata_jcs);
            encoded.entries.push(entry);
        }
    }
    encoded.projection_ops = ops
        .iter()
        .map(|op| serde_json::to_vec(op).map_err(|e| invalid(e.to_string())))
        .collect::<Result<_, _>>()?;
    Ok(encoded)
}

/// What the last event's entry binds (chain.rs): the append id, its command ids with their
/// request hashes (by command id) and the SHA-256 of the reply stored for them.
fn append_link(encoded: &EncodedAppend) -> AppendLink<'_> {
    let mut commands: Vec<(&str, &[u8])> =
        encoded.command_ids.iter().map(String::as_str).zip(encoded.request_hashes.iter().map(Vec::as_slice)).collect();
    commands.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    AppendLink { append_id: &encoded.append_id, commands, reply_sha256: crate::event::request_hash(&encoded.reply) }
}

#[derive(Deserialize)]
pub(crate) struct StoredOutcome {
    pub(crate) append_id: Uuid,
    pub(crate) first_position: i64,
    pub(crate) last_position: i64,
    pub(crate) last_hash: String,
    pub(crate) recorded_at_micros: i64,
    pub(crate) stream_versions: Vec<(String, i64)>,
}

/// Run one append on a connection (autocommit) or inside a caller's transaction.
pub(crate) async fn execute(conn: &mut PgConnection, encoded: &EncodedAppend) -> Result<AppendOutcome, StoreError> {
    let mut outcomes = execute_group(conn, &[encoded], &mut None, None).await.map_err(|(_, error)| error)?;
    outcomes.pop().ok_or_else(|| StoreError::Corrupt("the append answered no member".into()))
}

/// What the hashes of one call assume beyond the head: which members are replays and each
/// stream's version before its member's events.
struct Assumed {
    head: Option<Head>,
    replayed: Vec<bool>,
    base_versions: Vec<i64>,
    recorded_micros: i64,
}

type Row = (i32, bool, bool, Option<String>, Option<Vec<u8>>, Option<Vec<i64>>, Option<i64>, Option<Vec<u8>>, Option<i64>);

/// Run the appends of a group in one statement (`chipledger_append`, one round trip when
/// `head` is right, atomic): each member judged after the ones before it, as if alone. An error
/// belongs to one member (its index in `members`), which the caller takes out before running the
/// rest again. `head` is the property's head as last seen, updated to the new one. With
/// `written`, the events the call wrote are added to it as a read of the log gives them back.
pub(crate) async fn execute_group(
    conn: &mut PgConnection,
    members: &[&EncodedAppend],
    head: &mut Option<Head>,
    written: Option<&mut Vec<RecordedEvent>>,
) -> Result<Vec<AppendOutcome>, (usize, StoreError)> {
    let group = GroupArrays::of(members);
    let mut assumed = Assumed {
        head: *head,
        replayed: vec![false; members.len()],
        // The version before each stream's events is the one expected (`-1` for
        // `ExpectedVersion::Any`: the database tells, and the group is hashed again).
        base_versions: group.expected.clone(),
        recorded_micros: decided_micros(members).max(head.map_or(0, |head| head.recorded_micros)),
    };
    // R-CHIP-6: the database answers this clock's time, not a write, when the earliest of the
    // members' days has ended by the time it has the head lock (a commit that waited past a
    // cutoff); the check below then finds the member outside its day.
    let day_ends_micros = members.iter().filter_map(|member| member.decided.day_ends_micros).min();
    for _ in 0..MAX_HEAD_ATTEMPTS {
        // R-CHIP-6: no member on a gaming day the time it would be recorded at is past.
        let outside = |decided: &crate::event::DecidedAt| {
            decided.day_ends_micros.is_some_and(|end| assumed.recorded_micros >= end)
                || decided.day_begins_micros.is_some_and(|begins| assumed.recorded_micros < begins)
        };
        if let Some(index) = members.iter().position(|member| outside(&member.decided)) {
            return Err((index, StoreError::OutsideGamingDay { recorded_micros: assumed.recorded_micros }));
        }
        let hashed = group.hash(members, &assumed);
        let (head_position, head_hash) = assumed.head.map_or((None, None), |head| (Some(head.position), Some(head.hash.to_vec())));
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT member, written, replayed, outcome, reply, base_versions, head_position, head_hash, recorded_micros \
             FROM chipledger_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
             $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32)",
        )
        .bind(members.first().map_or("", |member| member.property.as_str()))
        .bind(&group.append_ids)
        .bind(&group.replies)
        .bind(&group.command_end)
        .bind(&group.stream_end)
        .bind(&group.event_end)
        .bind(&group.posting_end)
        .bind(&group.op_end)
        .bind(&group.command_member)
        .bind(&group.stream_member)
        .bind(&group.command_ids)
        .bind(&group.request_hashes)
        .bind(&group.streams)
        .bind(&group.expected)
        .bind(&group.event_stream)
        .bind(&group.event_ids)
        .bind(&group.event_types)
        .bind(&group.schema_versions)
        .bind(&group.payloads)
        .bind(&group.metadata)
        .bind(&hashed.hashes)
        .bind(&group.posting_event)
        .bind(&group.posting_index)
        .bind(&group.posting_account)
        .bind(&group.posting_amount)
        .bind(&group.projection_ops)
        .bind(head_position)
        .bind(head_hash)
        .bind(&assumed.replayed)
        .bind(&assumed.base_versions)
        .bind(assumed.recorded_micros)
        .bind(day_ends_micros)
        .fetch_all(&mut *conn)
        .await
        .map_err(|error| (crate::error::member_of(&error).filter(|index| *index < members.len()).unwrap_or(0), classify(error)))?;
        if rows.len() != members.len() || rows.iter().enumerate().any(|(index, row)| row.0 as usize != index + 1) {
            return Err((0, StoreError::Corrupt(format!("the append answered {} rows for {} members", rows.len(), members.len()))));
        }
        let corrupt = |what: &str| (0, StoreError::Corrupt(format!("the append answered no {what}")));
        if rows[0].1 {
            // Written (or every member a replay, which leaves the head as it was).
            if let (Some(position), Some(hash), Some(recorded_micros)) = (rows[0].6, rows[0].7.as_deref(), rows[0].8) {
                let hash = <[u8; 32]>::try_from(hash).map_err(|_| corrupt("32-byte head hash"))?;
                *head = Some(Head { position, hash, recorded_micros });
            }
            if let Some(written) = written {
                // The members the database wrote (none when every one is a replay, which the
                // hashes did not assume); nothing at all if an event does not come out whole
                // (the subscribers read the log instead).
                let replayed: Vec<bool> = rows.iter().map(|row| row.2).collect();
                written.extend(recorded_events(members, &replayed, &hashed, assumed.recorded_micros).into_iter().flatten());
            }
            // A written member's outcome is what it was hashed with (the database assigned the
            // same numbers); a replay's is the one stored for its commands.
            return rows
                .into_iter()
                .zip(members.iter().zip(hashed.members))
                .enumerate()
                .map(|(index, ((_, _, replayed, outcome_json, reply, ..), (member, placed)))| {
                    let (Some(outcome_json), Some(reply)) = (outcome_json, reply) else { return Err(corrupt("outcome")) };
                    match placed {
                        Some(placed) if !replayed => {
                            let outcome = AppendOutcome {
                                append_id: member.append_id,
                                first_position: placed.first_position,
                                last_position: placed.last_position,
                                last_hash: placed.last_hash,
                                recorded_at_micros: assumed.recorded_micros,
                                stream_versions: member.streams.iter().cloned().zip(placed.stream_versions).collect(),
                                replayed: false,
                                outcome_json,
                                reply,
                            };
                            // Every test run checks that the outcome stored is this one.
                            debug_assert_eq!(
                                crate::rejection::decode_outcome(false, outcome.outcome_json.clone(), outcome.reply.clone()).ok().as_ref(),
                                Some(&outcome)
                            );
                            Ok(outcome)
                        }
                        _ => crate::rejection::decode_outcome(replayed, outcome_json, reply).map_err(|error| (index, error)),
                    }
                })
                .collect();
        }
        // Not written: hash again from the head, replays and versions the database holds.
        let first = &rows[0];
        let (Some(base_versions), Some(position), Some(hash), Some(recorded_micros)) = (&first.5, first.6, first.7.as_deref(), first.8)
        else {
            return Err(corrupt("head"));
        };
        let hash = <[u8; 32]>::try_from(hash).map_err(|_| corrupt("32-byte head hash"))?;
        assumed = Assumed {
            head: Some(Head { position, hash, recorded_micros }),
            replayed: rows.iter().map(|row| row.2).collect(),
            base_versions: base_versions.clone(),
            recorded_micros,
        };
        *head = assumed.head;
    }
    Err((0, StoreError::Contention(format!("the head of the property moved {MAX_HEAD_ATTEMPTS} times while this group was hashed"))))
}

/// The time a group is recorded at, before the head's raises it: the latest its members were
/// decided at by their writer's clock ([`crate::event::DecidedAt`]), or the store's own clock
/// for members that say none.
fn decided_micros(members: &[&EncodedAppend]) -> i64 {
    members.iter().map(|member| member.decided.at_micros.unwrap_or_else(now_micros)).max().unwrap_or_else(now_micros)
}

fn now_micros() -> i64 {
    let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since_epoch.as_micros()).unwrap_or(i64::MAX)
}

/// The hashes of a group's events, and where each member's events went.
struct Hashed {
    hashes: Vec<Vec<u8>>,
    /// Per event: its position and stream version (none for a replayed member's).
    placed: Vec<Option<(i64, i64)>>,
    members: Vec<Option<Placed>>,
}

/// The events of a written group as the log holds them: what the rows were bound with
/// (the payload and metadata in the RFC 8785 text that reads back as the same
/// [`StoredJson`]) and the positions, versions and hashes the database assigned, which are the
/// ones hashed here. A member the database answered as a replay wrote nothing. `None` if any
/// event does not come out whole.
fn recorded_events(members: &[&EncodedAppend], replayed: &[bool], hashed: &Hashed, recorded_micros: i64) -> Option<Vec<RecordedEvent>> {
    let recorded_at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(recorded_micros) * 1_000).ok()?;
    let text = |bytes: &[u8]| std::str::from_utf8(bytes).ok().map(|text| StoredJson::canonical(text.to_owned()));
    let mut events = Vec::with_capacity(hashed.placed.iter().flatten().count());
    let mut placed = hashed.placed.iter().zip(&hashed.hashes);
    for (member, replayed) in members.iter().zip(replayed) {
        let mut postings = member.posting_event.iter().zip(&member.posting_account).zip(&member.posting_amount).peekable();
        for index in 0..member.event_ids.len() {
            let own = std::iter::from_fn(|| postings.next_if(|((event, _), _)| **event as usize == index + 1));
            let own = own.map(|((_, account), amount)| NewPosting { account: account.clone(), amount_cents: *amount });
            let (placed, hash) = placed.next()?;
            if *replayed {
                own.for_each(drop);
                continue;
            }
            // Written, so placed as hashed (the database refuses a call whose replays differ).
            let (position, stream_version) = (*placed)?;
            events.push(RecordedEvent {
                property: member.property.clone(),
                position,
                stream: member.streams[member.event_stream[index] as usize - 1].clone(),
                stream_version,
                event_id: member.event_ids[index],
                event_type: member.event_types[index].clone(),
                schema_version: member.schema_versions[index],
                payload: text(&member.payloads[index])?,
                metadata: text(&member.metadata[index])?,
                recorded_at,
                hash: <[u8; 32]>::try_from(hash.as_slice()).ok()?,
                postings: own.collect(),
            });
        }
    }
    Some(events)
}

#[derive(Clone)]
struct Placed {
    first_position: i64,
    last_position: i64,
    last_hash: [u8; 32],
    /// Per stream of the member, in its order: the version after its events.
    stream_versions: Vec<i64>,
}

/// The arrays of a group's members end to end, with where each member's items end.
struct GroupArrays<'a> {
    append_ids: Vec<Uuid>,
    replies: Vec<&'a [u8]>,
    command_end: Vec<i32>,
    stream_end: Vec<i32>,
    event_end: Vec<i32>,
    posting_end: Vec<i32>,
    op_end: Vec<i32>,
    command_member: Vec<i32>,
    stream_member: Vec<i32>,
    command_ids: Vec<&'a str>,
    request_hashes: Vec<&'a [u8]>,
    streams: Vec<&'a str>,
    expected: Vec<i64>,
    event_stream: Vec<i32>,
    event_ids: Vec<Uuid>,
    event_types: Vec<&'a str>,
    schema_versions: Vec<i16>,
    payloads: Vec<JsonbText<'a>>,
    metadata: Vec<JsonbText<'a>>,
    posting_event: Vec<i32>,
    posting_index: Vec<i16>,
    posting_account: Vec<&'a str>,
    posting_amount: Vec<i64>,
    projection_ops: Vec<JsonbText<'a>>,
}

impl<'a> GroupArrays<'a> {
    fn of(members: &[&'a EncodedAppend]) -> GroupArrays<'a> {
        let events: usize = members.iter().map(|member| member.event_ids.len()).sum();
        let postings: usize = members.iter().map(|member| member.posting_event.len()).sum();
        let mut group = GroupArrays {
            append_ids: Vec::with_capacity(members.len()),
            replies: Vec::with_capacity(members.len()),
            command_end: Vec::with_capacity(members.len()),
            stream_end: Vec::with_capacity(members.len()),
            event_end: Vec::with_capacity(members.len()),
            posting_end: Vec::with_capacity(members.len()),
            op_end: Vec::with_capacity(members.len()),
            command_member: Vec::new(),
            stream_member: Vec::new(),
            command_ids: Vec::new(),
            request_hashes: Vec::new(),
            streams: Vec::new(),
            expected: Vec::new(),
            event_stream: Vec::with_capacity(events),
            event_ids: Vec::with_capacity(events),
            event_types: Vec::with_capacity(events),
            schema_versions: Vec::with_capacity(events),
            payloads: Vec::with_capacity(events),
            metadata: Vec::with_capacity(events),
            posting_event: Vec::with_capacity(postings),
            posting_index: Vec::with_capacity(postings),
            posting_account: Vec::with_capacity(postings),
            posting_amount: Vec::with_capacity(postings),
            projection_ops: Vec::new(),
        };
        for (index, member) in members.iter().enumerate() {
            let (stream_base, event_base) = (group.streams.len() as i32, group.event_ids.len() as i32);
            group.append_ids.push(member.append_id);
            group.replies.push(&member.reply);
            group.command_member.extend(std::iter::repeat_n(index as i32 + 1, member.command_ids.len()));
            group.command_ids.extend(member.command_ids.iter().map(String::as_str));
            group.request_hashes.extend(member.request_hashes.iter().map(Vec::as_slice));
            group.stream_member.extend(std::iter::repeat_n(index as i32 + 1, member.streams.len()));
            group.streams.extend(member.streams.iter().map(String::as_str));
            group.expected.extend_from_slice(&member.expected);
            group.event_stream.extend(member.event_stream.iter().map(|stream| stream + stream_base));
            group.event_ids.extend_from_slice(&member.event_ids);
            group.event_types.extend(member.event_types.iter().map(String::as_str));
            group.schema_versions.extend_from_slice(&member.schema_versions);
            group.payloads.extend(member.payloads.iter().map(|text| JsonbText(text)));
            group.metadata.extend(member.metadata.iter().map(|text| JsonbText(text)));
            group.posting_event.extend(member.posting_event.iter().map(|event| event + event_base));
            group.posting_index.extend_from_slice(&member.posting_index);
            group.posting_account.extend(member.posting_account.iter().map(String::as_str));
            group.posting_amount.extend_from_slice(&member.posting_amount);
            group.projection_ops.extend(member.projection_ops.iter().map(|text| JsonbText(text)));
            group.command_end.push(group.command_ids.len() as i32);
            group.stream_end.push(group.streams.len() as i32);
            group.event_end.push(group.event_ids.len() as i32);
            group.posting_end.push(group.posting_event.len() as i32);
            group.op_end.push(group.projection_ops.len() as i32);
        }
        group
    }

    /// Every event's chain hash under `assumed`: the live members' events, in group order,
    /// continue the head, each stream counting on from its base version (what the function
    /// assigns when the assumption holds). A replayed member's events get no hash (empty).
    fn hash(&self, members: &[&EncodedAppend], assumed: &Assumed) -> Hashed {
        let Some(head) = assumed.head else {
            let events = self.event_ids.len();
            return Hashed { hashes: vec![Vec::new(); events], placed: vec![None; events], members: vec![None; members.len()] };
        };
        let (mut position, mut previous) = (head.position, head.hash);
        let mut versions = assumed.base_versions.clone();
        let events = self.event_ids.len();
        let mut hashed =
            Hashed { hashes: Vec::with_capacity(events), placed: Vec::with_capacity(events), members: Vec::with_capacity(members.len()) };
        let (mut stream_at, mut event_at) = (0, 0);
        for (member, replayed) in members.iter().zip(&assumed.replayed) {
            let streams = stream_at..stream_at + member.streams.len();
            let first_position = position + 1;
            for entry in &member.entries {
                let stream = self.event_stream[event_at] as usize - 1;
                event_at += 1;
                if *replayed {
                    hashed.hashes.push(Vec::new());
                    hashed.placed.push(None);
                    continue;
                }
                versions[stream] += 1;
                position += 1;
                previous = chain::event_entry_hash(entry, position, &previous, assumed.recorded_micros, versions[stream]);
                hashed.hashes.push(previous.to_vec());
                hashed.placed.push(Some((position, versions[stream])));
            }
            stream_at = streams.end;
            hashed.members.push((!replayed).then(|| Placed {
                first_position,
                last_position: position,
                last_hash: previous,
                stream_versions: versions[streams].to_vec(),
            }));
        }
        hashed
    }
}
