//! Reading the log: streams, the global order, balances as of a position or time, filters.

use sqlx::postgres::{PgRow, PgValueFormat};
use sqlx::{Acquire, PgConnection, PgExecutor, Postgres, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::{StoreError, classify};
use crate::chain::{Canonical, JsonbCanonicalizer};
use crate::event::{MAX_PAGE, NewPosting, RecordedEvent, StoredJson};

// Every read goes through a function of `sql/` (the application role has no SELECT on any
// table); the event functions share one column list, decoded by index in [`decode_event`].
// Postings come from a second call per page ([`attach_postings`]): one index range scan
// instead of two correlated subqueries (two index probes) per event.

pub(crate) fn clamp_page(limit: i64) -> i64 {
    limit.clamp(1, MAX_PAGE)
}

/// An event row of the `chipledger_*events*` functions, postings still empty; its JSON columns
/// are read as text and made canonical once, here.
fn decode_event(row: &sqlx::postgres::PgRow, canonicalizer: &mut JsonbCanonicalizer) -> Result<RecordedEvent, StoreError> {
    let position: i64 = row.try_get(1)?;
    let hash: &[u8] = row.try_get(10)?;
    let hash: [u8; 32] =
        hash.try_into().map_err(|_| StoreError::Corrupt(format!("hash of position {position} is not 32 bytes")))?;
    Ok(RecordedEvent {
        property: row.try_get(0)?,
        position,
        stream: row.try_get(2)?,
        stream_version: row.try_get(3)?,
        event_id: row.try_get::<Uuid, _>(4)?,
        event_type: row.try_get(5)?,
        schema_version: row.try_get(6)?,
        payload: StoredJson::from_jsonb_text(jsonb_text(row, 7)?, canonicalizer)?,
        metadata: StoredJson::from_jsonb_text(jsonb_text(row, 8)?, canonicalizer)?,
        recorded_at: row.try_get::<OffsetDateTime, _>(9)?,
        hash,
        postings: Vec::new(),
    })
}

/// Decode a page of event rows and fill in their postings, in posting order, with one query.
///
/// The postings are read by a second statement, which may see a later snapshot than the
/// first; that changes nothing: an event that was visible is committed, its postings were
/// committed in the same transaction, and neither table ever changes a row (R-AUDIT-1).
async fn with_postings(
    conn: &mut PgConnection,
    property: &str,
    rows: Vec<sqlx::postgres::PgRow>,
) -> Result<Vec<RecordedEvent>, StoreError> {
    let mut canonicalizer = JsonbCanonicalizer::new(Canonical::Jcs);
    let mut events = rows.iter().map(|row| decode_event(row, &mut canonicalizer)).collect::<Result<Vec<_>, _>>()?;
    attach_postings(conn, property, &mut events).await?;
    Ok(events)
}

async fn attach_postings(conn: &mut PgConnection, property: &str, events: &mut [RecordedEvent]) -> Result<(), StoreError> {
    let (Some(first), Some(last)) = (events.first().map(|e| e.position), events.last().map(|e| e.position)) else {
        return Ok(());
    };
    // A page of the global order is dense: one range. Other reads ask for their positions.
    let dense = last - first + 1 == events.len() as i64 && events.is_sorted_by_key(|event| event.position);
    let rows: Vec<(i64, String, i64)> = if dense {
        sqlx::query_as("SELECT * FROM chipledger_postings_range($1, $2, $3)")
        .bind(property)
        .bind(first)
        .bind(last)
        .fetch_all(&mut *conn)
        .await?
    } else {
        let positions: Vec<i64> = events.iter().map(|event| event.position).collect();
        sqlx::query_as("SELECT * FROM chipledger_postings_at($1, $2)")
        .bind(property)
        .bind(&positions)
        .fetch_all(&mut *conn)
        .await?
    };
    let mut index: Vec<(i64, usize)> = events.iter().enumerate().map(|(at, event)| (event.position, at)).collect();
    index.sort_unstable();
    for (position, account, amount_cents) in rows {
        if let Ok(found) = index.binary_search_by_key(&position, |&(position, _)| position) {
            events[index[found].1].postings.push(NewPosting { account, amount_cents });
        }
    }
    Ok(())
}

/// The JSON text of a jsonb column: PostgreSQL's binary form is a version byte (1) and the text.
pub(crate) fn jsonb_text(row: &PgRow, column: usize) -> Result<&[u8], StoreError> {
    let value = row.try_get_raw(column)?;
    let format = value.format();
    let bytes = value.as_bytes().map_err(|error| StoreError::Corrupt(format!("jsonb column {column}: {error}")))?;
    match (format, bytes.split_first()) {
        (PgValueFormat::Text, _) => Ok(bytes),
        (PgValueFormat::Binary, Some((1, text))) => Ok(text),
        (PgValueFormat::Binary, _) => Err(StoreError::Corrupt(format!("unsupported jsonb format in column {column}"))),
    }
}

/// The postings of `position` in `postings` (ordered by position), walking forward from `next`
/// as events in position order ask for theirs; postings of positions never asked for are skipped.
pub(crate) fn postings_of<'p, T>(postings: &'p [T], next: &mut usize, position: i64, position_of: impl Fn(&T) -> i64) -> &'p [T] {
    while postings.get(*next).is_some_and(|posting| position_of(posting) < position) {
        *next += 1;
    }
    let first = *next;
    while postings.get(*next).is_some_and(|posting| position_of(posting) == position) {
        *next += 1;
    }
    &postings[first..*next]
}

/// Events of the property with position > `after_position`, in position order.
pub(crate) async fn read_all<'a>(
    conn: impl Acquire<'a, Database = Postgres>,
    property: &str,
    after_position: i64,
    limit: i64,
) -> Result<Vec<RecordedEvent>, StoreError> {
    read_range(conn, property, after_position, i64::MAX, limit).await
}

/// Events of the property with `after_position` < position <= `up_to_position`, in position
/// order, at most `limit`.
pub(crate) async fn read_range<'a>(
    conn: impl Acquire<'a, Database = Postgres>,
    property: &str,
    after_position: i64,
    up_to_position: i64,
    limit: i64,
) -> Result<Vec<RecordedEvent>, StoreError> {
    let mut conn = conn.acquire().await?;
    read_range_on(&mut conn, property, after_position, up_to_position, limit).await
}

/// [`read_range`] on a connection already held (a transaction's snapshot).
pub(crate) async fn read_range_on(
    conn: &mut PgConnection,
    property: &str,
    after_position: i64,
    up_to_position: i64,
    limit: i64,
) -> Result<Vec<RecordedEvent>, StoreError> {
    let rows = sqlx::query("SELECT * FROM chipledger_events_range($1, $2, $3, $4)")
        .bind(property)
        .bind(after_position)
        .bind(up_to_position)
        .bind(clamp_page(limit))
        .fetch_all(&mut *conn)
        .await?;
    with_postings(conn, property, rows).await
}

/// Events of a stream with version > `after_version`, in version order.
pub(crate) async fn read_stream<'a>(
    conn: impl Acquire<'a, Database = Postgres>,
    property: &str,
    stream: &str,
    after_version: i64,
    limit: i64,
) -> Result<Vec<RecordedEvent>, StoreError> {
    let mut conn = conn.acquire().await?;
    let rows = sqlx::query("SELECT * FROM chipledger_stream_events($1, $2, $3, $4)")
        .bind(property)
        .bind(stream)
        .bind(after_version)
        .bind(clamp_page(limit))
        .fetch_all(&mut *conn)
        .await?;
    with_postings(&mut conn, property, rows).await
}

/// Events of several streams in one call: for each of `streams` (distinct), the events with
/// version > its `after_versions` entry, at most `limit`, in version order; one list per stream,
/// in the order asked.
pub(crate) async fn read_streams<'a>(
    conn: impl Acquire<'a, Database = Postgres>,
    property: &str,
    streams: &[String],
    after_versions: &[i64],
    limit: i64,
) -> Result<Vec<Vec<RecordedEvent>>, StoreError> {
    if streams.len() != after_versions.len() {
        return Err(StoreError::InvalidRequest(format!("{} streams with {} versions", streams.len(), after_versions.len())));
    }
    let mut conn = conn.acquire().await?;
    let rows = sqlx::query("SELECT * FROM chipledger_streams_events($1, $2, $3, $4)")
        .bind(property)
        .bind(streams)
        .bind(after_versions)
        .bind(clamp_page(limit))
        .fetch_all(&mut *conn)
        .await?;
    let mut pages: Vec<Vec<RecordedEvent>> = streams.iter().map(|_| Vec::new()).collect();
    for event in with_postings(&mut conn, property, rows).await? {
        let at = streams
            .iter()
            .position(|stream| *stream == event.stream)
            .ok_or_else(|| StoreError::Corrupt(format!("an event of {} read for other streams", event.stream)))?;
        pages[at].push(event);
    }
    Ok(pages)
}

/// Filter for [`crate::Store::events_by_filter`]; `None` matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    pub stream: Option<String>,
    pub event_type: Option<String>,
    pub actor_id: Option<String>,
    pub command_id: Option<String>,
    pub gaming_day: Option<String>,
    /// Only events whose postings touch this account.
    pub account: Option<String>,
    /// Paging: events with position > this.
    pub after_position: i64,
    pub limit: i64,
}

pub(crate) async fn events_by_filter<'a>(
    conn: impl Acquire<'a, Database = Postgres>,
    property: &str,
    filter: &EventFilter,
) -> Result<Vec<RecordedEvent>, StoreError> {
    let mut conn = conn.acquire().await?;
    let rows = sqlx::query("SELECT * FROM chipledger_events_by_filter($1, $2, $3, $4, $5, $6, $7, $8, $9)")
        .bind(property)
        .bind(filter.after_position)
        .bind(&filter.stream)
        .bind(&filter.event_type)
        .bind(&filter.actor_id)
        .bind(&filter.command_id)
        .bind(&filter.gaming_day)
        .bind(&filter.account)
        .bind(clamp_page(filter.limit))
        .fetch_all(&mut *conn)
        .await?;
    with_postings(&mut conn, property, rows).await
}

/// A point of the log to ask a balance at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsOf {
    /// Everything committed now.
    Head,
    /// After the event with this position.
    Position(i64),
    /// After every event recorded at or before this time (recorded_at is monotone in position).
    Time(OffsetDateTime),
}

/// The last position included by `as_of`, in SQL, with the property as $1 and the bound as $2/$3.
pub(crate) async fn resolve_position<'c>(executor: impl PgExecutor<'c>, property: &str, as_of: AsOf) -> Result<i64, StoreError> {
    let position = match as_of {
        // The head, or a position at most the head: a position the log has not reached answers
        // as of the head, and says so ("as of N" for a future N had been labelled N, and the same
        // question later answered otherwise: the night's pass).
        AsOf::Position(_) | AsOf::Head => {
            let bound = if let AsOf::Position(position) = as_of { position } else { i64::MAX };
            sqlx::query_scalar("SELECT least($2, coalesce((SELECT last_position FROM chipledger_head($1)), 0))")
                .bind(property)
                .bind(bound)
                .fetch_one(executor)
                .await?
        }
        AsOf::Time(at) => {
            sqlx::query_scalar("SELECT chipledger_position_at($1, $2)")
            .bind(property)
            .bind(at)
            .fetch_one(executor)
            .await?
        }
    };
    Ok(position)
}

pub(crate) async fn balance_at<'c>(
    executor: impl PgExecutor<'c>,
    property: &str,
    account: &str,
    position: i64,
) -> Result<i64, StoreError> {
    let balance: i64 = sqlx::query_scalar("SELECT chipledger_balance_at($1, $2, $3)")
    .bind(property)
    .bind(account)
    .bind(position)
    .fetch_one(executor)
    .await
    .map_err(classify)?;
    Ok(balance)
}

pub(crate) async fn balances_sum_at<'c>(
    executor: impl PgExecutor<'c>,
    property: &str,
    position: i64,
) -> Result<i128, StoreError> {
    let sum: String = sqlx::query_scalar("SELECT chipledger_balances_sum_at($1, $2)")
            .bind(property)
            .bind(position)
            .fetch_one(executor)
            .await
            .map_err(classify)?;
    sum.parse().map_err(|_| StoreError::Corrupt(format!("sum of balances {sum:?}")))
}
