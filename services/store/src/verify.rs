//! Verifying the hash chain of a property against its stored hashes and head (see `chain`).
//!
//! Every event's stored hash must equal SHA-256 of the previous event's *stored* hash and its
//! own fields; with the first event chained to [`GENESIS_HASH`] and the head compared at the
//! end, that is the same as recomputing the chain from the start, and the first event that
//! fails is the same one. It also lets pages be checked independently: [`READERS`]
//! connections each take every READERS-th page of positions, so PostgreSQL's work (turning
//! jsonb into text costs it about as much as everything else of a row together) runs on
//! several backends while this process hashes. Results are taken in page order, so the
//! report names the first bad position, as a sequential check would.
//!
//! One snapshot for all: the first connection opens a REPEATABLE READ, READ ONLY transaction,
//! reads the head and the last stored position, and exports its snapshot; the other readers
//! import it. Appends committing meanwhile are simply not seen (they neither look like events
//! past the head nor move the head under the verifier).
//!
//! Rows are hashed from their stored bytes: no `RecordedEvent`, no `serde_json::Value` unless
//! the shortcut of [`chain::JsonbCanonicalizer`] does not apply or its hash does not match,
//! when the definition ([`chain::canonical_json`] of the decoded value) decides.

use std::collections::BTreeMap;

use sqlx::postgres::{PgRow, PgValueFormat};
use sqlx::{PgExecutor, PgPool, Postgres, Row, Transaction};
use time::OffsetDateTime;
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::chain::{
    self, ChainDigest, ChainProblem, ChainReport, GENESIS_HASH, JsonbCanonicalizer, StoredFields, VERIFY_PAGE_POSITIONS,
};
use crate::error::StoreError;
use crate::read::postings_of;
use crate::subscription::AbortOnDrop;

/// Connections reading and checking pages at once.
const READERS: usize = 3;
const SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/// The head of the property's chain.
pub(crate) async fn chain_digest<'c>(executor: impl PgExecutor<'c>, property: &str) -> Result<ChainDigest, StoreError> {
    let row: Option<(i64, Vec<u8>)> = sqlx::query_as("SELECT last_position, last_hash FROM property_heads WHERE property = $1")
        .bind(property)
        .fetch_optional(executor)
        .await?;
    let (position, hash) = row.unwrap_or((0, GENESIS_HASH.to_vec()));
    let hash = hash.try_into().map_err(|_| StoreError::Corrupt("head hash is not 32 bytes".into()))?;
    Ok(ChainDigest { property: property.to_owned(), position, hash })
}

/// Recompute the whole chain of a property and compare it with the stored hashes and head.
pub(crate) async fn verify_chain(pool: &PgPool, property: &str) -> Result<ChainReport, StoreError> {
    let mut first = pool.begin_with(SNAPSHOT).await?;
    let head = chain_digest(&mut *first, property).await?;
    let (snapshot, last_stored): (String, i64) =
        sqlx::query_as("SELECT pg_export_snapshot(), coalesce((SELECT max(position) FROM events WHERE property = $1), 0)")
            .bind(property)
            .fetch_one(&mut *first)
            .await?;
    let pages = (last_stored + VERIFY_PAGE_POSITIONS - 1) / VERIFY_PAGE_POSITIONS;
    // Never more readers than the pool has connections: they are all held until the end.
    let readers = (pages as usize).min(READERS).min(pool.options().get_max_connections() as usize).max(1);
    let mut snapshots = vec![first];
    for _ in 1..readers {
        let mut reader = pool.begin_with(SNAPSHOT).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!("SET TRANSACTION SNAPSHOT '{snapshot}'"))).execute(&mut *reader).await?;
        snapshots.push(reader);
    }
    let (sender, mut results) = mpsc::channel(4 * readers);
    // Dropping them stops the readers (and returns their connections) when the check ends early.
    let _readers: Vec<AbortOnDrop<()>> = snapshots
        .into_iter()
        .enumerate()
        .map(|(reader, snapshot)| {
            let pages = (reader as i64..pages).step_by(readers);
            AbortOnDrop(tokio::spawn(check_pages(snapshot, property.to_owned(), pages, last_stored, sender.clone())))
        })
        .collect();
    drop(sender);

    // Take the pages' results in page order; the first problem is the chain's first.
    let (mut checked, mut last_hash, mut next_page) = (0, GENESIS_HASH, 0);
    let mut waiting = BTreeMap::new();
    while next_page < pages {
        let Some(result) = results.recv().await else {
            return Err(StoreError::Corrupt("a chain reader stopped without a result".into()));
        };
        let result: PageResult = result?;
        waiting.insert(result.page, result);
        while let Some(result) = waiting.remove(&next_page) {
            checked += result.checked;
            if let Some(problem) = result.problem {
                return Ok(report(head, checked, Some(problem)));
            }
            last_hash = result.last_hash;
            next_page += 1;
        }
    }
    let problem = if last_stored < head.position {
        Some((last_stored + 1, ChainProblem::TruncatedTail))
    } else if last_stored > head.position || last_hash != head.hash {
        Some((last_stored, ChainProblem::HeadMismatch))
    } else {
        None
    };
    Ok(report(head, checked, problem))
}

fn report(head: ChainDigest, events_checked: i64, problem: Option<(i64, ChainProblem)>) -> ChainReport {
    let (first_bad_position, problem) = problem.unzip();
    ChainReport { ok: problem.is_none(), events_checked, first_bad_position, problem, head }
}

/// Check an externally saved digest: the chain must still verify and still pass through it.
pub(crate) async fn verify_digest(pool: &PgPool, digest: &ChainDigest) -> Result<bool, StoreError> {
    let report = verify_chain(pool, &digest.property).await?;
    if !report.ok {
        return Ok(false);
    }
    let stored: Option<Vec<u8>> = sqlx::query_scalar("SELECT hash FROM events WHERE property = $1 AND position = $2")
        .bind(&digest.property)
        .bind(digest.position)
        .fetch_optional(pool)
        .await?;
    Ok(match stored {
        Some(hash) => hash == digest.hash,
        None => digest.position == 0 && digest.hash == GENESIS_HASH,
    })
}

/// What one page of positions showed.
struct PageResult {
    page: i64,
    /// Events that verified, from the page's first position on.
    checked: i64,
    /// The first problem in the page; nothing after it was checked.
    problem: Option<(i64, ChainProblem)>,
    /// The stored hash of the page's last event, when all of it verified.
    last_hash: [u8; 32],
}

/// Events from one position before the page (its stored hash chains the page's first event)
/// to the page's last position; column order read by index in [`EventCheck::check`].
const EVENT_ROWS: &str = "SELECT position, stream, stream_version, event_id, event_type, schema_version, payload, \
     metadata, recorded_at, hash FROM events WHERE property = $1 AND position BETWEEN $2 AND $3 ORDER BY position";
const POSTING_ROWS: &str = "SELECT position, account, amount_cents FROM postings \
     WHERE property = $1 AND position BETWEEN $2 AND $3 ORDER BY position, posting_index";

async fn check_pages(
    mut snapshot: Transaction<'static, Postgres>,
    property: String,
    pages: impl Iterator<Item = i64>,
    last_stored: i64,
    results: mpsc::Sender<Result<PageResult, StoreError>>,
) {
    let mut check = EventCheck::new(&property);
    for page in pages {
        let first = page * VERIFY_PAGE_POSITIONS + 1;
        let last = (first + VERIFY_PAGE_POSITIONS - 1).min(last_stored);
        let result = check_page(&mut snapshot, &mut check, page, first, last).await;
        let stop = !matches!(&result, Ok(result) if result.problem.is_none());
        if results.send(result).await.is_err() || stop {
            return;
        }
    }
}

async fn check_page(
    snapshot: &mut Transaction<'static, Postgres>,
    check: &mut EventCheck<'_>,
    page: i64,
    first: i64,
    last: i64,
) -> Result<PageResult, StoreError> {
    let property = check.property;
    let events = sqlx::query(EVENT_ROWS).bind(property).bind(first - 1).bind(last).fetch_all(&mut **snapshot).await?;
    let postings = sqlx::query(POSTING_ROWS).bind(property).bind(first).bind(last).fetch_all(&mut **snapshot).await?;
    let mut result = PageResult { page, checked: 0, problem: None, last_hash: GENESIS_HASH };
    let undecodable = |position: i64, error: String| Some((position, ChainProblem::Undecodable(error)));
    let postings = match postings
        .iter()
        .map(|row| Ok((row.try_get::<i64, _>(0)?, row.try_get::<&str, _>(1)?, row.try_get::<i64, _>(2)?)))
        .collect::<Result<Vec<_>, sqlx::Error>>()
    {
        Ok(postings) => postings,
        Err(error) => {
            result.problem = undecodable(first, error.to_string());
            return Ok(result);
        }
    };
    let mut rows = events.iter().peekable();
    // The chain enters the page through the stored hash of the position before it. If that
    // row is missing, the page before reports it first, so what this page finds never counts.
    let mut previous = GENESIS_HASH;
    if first > 1 {
        match rows.next_if(|row| row.try_get::<i64, _>(0).is_ok_and(|position| position == first - 1)) {
            Some(row) => match row.try_get::<&[u8], _>(9).ok().and_then(|hash| <[u8; 32]>::try_from(hash).ok()) {
                Some(hash) => previous = hash,
                None => result.problem = undecodable(first - 1, "hash is not 32 bytes".into()),
            },
            None => result.problem = Some((first - 1, ChainProblem::MissingPosition)),
        }
        if result.problem.is_some() {
            return Ok(result);
        }
    }
    let mut next_posting = 0;
    let mut expected = first;
    for row in rows {
        let position = match row.try_get::<i64, _>(0) {
            Ok(position) => position,
            Err(error) => {
                result.problem = undecodable(expected, error.to_string());
                return Ok(result);
            }
        };
        if position != expected {
            break;
        }
        let own = postings_of(&postings, &mut next_posting, position, |posting| posting.0);
        match check.check(row, position, &previous, own) {
            Ok(Some(hash)) => previous = hash,
            Ok(None) => {
                result.problem = Some((position, ChainProblem::HashMismatch));
                return Ok(result);
            }
            Err(error) => {
                result.problem = undecodable(position, error);
                return Ok(result);
            }
        }
        result.checked += 1;
        expected += 1;
    }
    if expected <= last {
        result.problem = Some((expected, ChainProblem::MissingPosition));
    }
    result.last_hash = previous;
    Ok(result)
}

/// Buffers reused for every event a reader checks.
struct EventCheck<'p> {
    property: &'p str,
    canonicalizer: JsonbCanonicalizer,
    payload: Vec<u8>,
    metadata: Vec<u8>,
    body: Vec<u8>,
}

impl<'p> EventCheck<'p> {
    fn new(property: &'p str) -> EventCheck<'p> {
        EventCheck {
            property,
            canonicalizer: JsonbCanonicalizer::new(),
            payload: Vec::with_capacity(1024),
            metadata: Vec::with_capacity(1024),
            body: Vec::with_capacity(4096),
        }
    }

    /// The event's stored hash if it is the one recomputed from `previous` and its fields.
    fn check(
        &mut self,
        row: &PgRow,
        position: i64,
        previous: &[u8; 32],
        postings: &[(i64, &str, i64)],
    ) -> Result<Option<[u8; 32]>, String> {
        let text = |error: sqlx::Error| error.to_string();
        let fields = StoredFields {
            property: self.property,
            stream: row.try_get(1).map_err(text)?,
            event_id: &row.try_get::<Uuid, _>(3).map_err(text)?,
            event_type: row.try_get(4).map_err(text)?,
            schema_version: row.try_get(5).map_err(text)?,
        };
        let stream_version: i64 = row.try_get(2).map_err(text)?;
        let payload = jsonb_text(row, 6)?;
        let metadata = jsonb_text(row, 7)?;
        let recorded_at: OffsetDateTime = row.try_get(8).map_err(text)?;
        let micros = i64::try_from(recorded_at.unix_timestamp_nanos() / 1_000)
            .map_err(|_| format!("recorded_at out of range at {position}"))?;
        let stored: &[u8] = row.try_get(9).map_err(text)?;
        let stored: [u8; 32] = stored.try_into().map_err(|_| format!("hash of position {position} is not 32 bytes"))?;
        let postings = || postings.iter().map(|&(_, account, amount_cents)| (account, amount_cents));
        let step = |body: &[u8]| chain::chain_step(previous, position, micros, stream_version, body);

        self.payload.clear();
        self.metadata.clear();
        let shortcut = self.canonicalizer.write(payload, &mut self.payload).is_some()
            && self.canonicalizer.write(metadata, &mut self.metadata).is_some();
        if shortcut {
            chain::write_body(&mut self.body, &fields, &self.payload, &self.metadata, postings());
            if step(&self.body) == stored {
                return Ok(Some(stored));
            }
        }
        // The definition: decode the stored JSON and encode it canonically.
        let canonical = |text: &[u8]| -> Result<Vec<u8>, String> {
            let value: serde_json::Value = serde_json::from_slice(text).map_err(|error| error.to_string())?;
            chain::canonical_json(&value).map_err(|error| error.to_string())
        };
        let (payload, metadata) = (canonical(payload)?, canonical(metadata)?);
        chain::write_body(&mut self.body, &fields, &payload, &metadata, postings());
        if step(&self.body) != stored {
            return Ok(None);
        }
        if shortcut {
            tracing::warn!(position, "the canonical JSON shortcut differed from the definition; the definition verified");
        }
        Ok(Some(stored))
    }
}

/// The JSON text of a jsonb column: PostgreSQL's binary form is a version byte (1) and the text.
fn jsonb_text(row: &PgRow, column: usize) -> Result<&[u8], String> {
    let value = row.try_get_raw(column).map_err(|error| error.to_string())?;
    let format = value.format();
    let bytes = value.as_bytes().map_err(|error| error.to_string())?;
    match (format, bytes.split_first()) {
        (PgValueFormat::Text, _) => Ok(bytes),
        (PgValueFormat::Binary, Some((1, text))) => Ok(text),
        (PgValueFormat::Binary, _) => Err(format!("unsupported jsonb format in column {column}")),
    }
}
