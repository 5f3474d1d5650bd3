//! Reading the log: streams, the global order, balances as of a position or time, filters.

use sqlx::{PgExecutor, Row};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::StoreError;
use crate::event::{MAX_PAGE, NewPosting, RecordedEvent};

/// One SELECT shape for every event read: the event and its postings in posting order.
const EVENT_COLUMNS: &str = "e.property, e.position, e.stream, e.stream_version, e.event_id, e.event_type, \
     e.schema_version, e.payload, e.metadata, e.recorded_at, e.hash, \
     ARRAY(SELECT p.account FROM postings p WHERE p.property = e.property AND p.position = e.position \
           ORDER BY p.posting_index) AS accounts, \
     ARRAY(SELECT p.amount_cents FROM postings p WHERE p.property = e.property AND p.position = e.position \
           ORDER BY p.posting_index) AS amounts";

pub(crate) fn clamp_page(limit: i64) -> i64 {
    limit.clamp(1, MAX_PAGE)
}

pub(crate) fn decode_event(row: &sqlx::postgres::PgRow) -> Result<RecordedEvent, StoreError> {
    let hash_bytes: Vec<u8> = row.try_get("hash")?;
    let position: i64 = row.try_get("position")?;
    let hash: [u8; 32] = hash_bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt(format!("hash of position {position} is not 32 bytes")))?;
    let accounts: Vec<String> = row.try_get("accounts")?;
    let amounts: Vec<i64> = row.try_get("amounts")?;
    Ok(RecordedEvent {
        property: row.try_get("property")?,
        position,
        stream: row.try_get("stream")?,
        stream_version: row.try_get("stream_version")?,
        event_id: row.try_get::<Uuid, _>("event_id")?,
        event_type: row.try_get("event_type")?,
        schema_version: row.try_get("schema_version")?,
        payload: row.try_get("payload")?,
        metadata: row.try_get("metadata")?,
        recorded_at: row.try_get::<OffsetDateTime, _>("recorded_at")?,
        hash,
        postings: accounts
            .into_iter()
            .zip(amounts)
            .map(|(account, amount_cents)| NewPosting { account, amount_cents })
            .collect(),
    })
}

/// Events of the property with position > `after_position`, in position order.
pub(crate) async fn read_all<'c>(
    executor: impl PgExecutor<'c>,
    property: &str,
    after_position: i64,
    limit: i64,
) -> Result<Vec<RecordedEvent>, StoreError> {
    let sql = format!(
        "SELECT {EVENT_COLUMNS} FROM events e WHERE e.property = $1 AND e.position > $2 \
         ORDER BY e.position LIMIT $3"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(property)
        .bind(after_position)
        .bind(clamp_page(limit))
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode_event).collect()
}

/// Events of a stream with version > `after_version`, in version order.
pub(crate) async fn read_stream<'c>(
    executor: impl PgExecutor<'c>,
    property: &str,
    stream: &str,
    after_version: i64,
    limit: i64,
) -> Result<Vec<RecordedEvent>, StoreError> {
    let sql = format!(
        "SELECT {EVENT_COLUMNS} FROM events e WHERE e.property = $1 AND e.stream = $2 \
         AND e.stream_version > $3 ORDER BY e.stream_version LIMIT $4"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(property)
        .bind(stream)
        .bind(after_version)
        .bind(clamp_page(limit))
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode_event).collect()
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

pub(crate) async fn events_by_filter<'c>(
    executor: impl PgExecutor<'c>,
    property: &str,
    filter: &EventFilter,
) -> Result<Vec<RecordedEvent>, StoreError> {
    let sql = format!(
        "SELECT {EVENT_COLUMNS} FROM events e WHERE e.property = $1 AND e.position > $2 \
         AND ($3::text IS NULL OR e.stream = $3) AND ($4::text IS NULL OR e.event_type = $4) \
         AND ($5::text IS NULL OR e.metadata->>'actor_id' = $5) \
         AND ($6::text IS NULL OR e.metadata->>'command_id' = $6) \
         AND ($7::text IS NULL OR e.metadata->>'gaming_day' = $7) \
         AND ($8::text IS NULL OR EXISTS (SELECT 1 FROM postings p WHERE p.property = e.property \
              AND p.position = e.position AND p.account = $8)) \
         ORDER BY e.position LIMIT $9"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(property)
        .bind(filter.after_position)
        .bind(&filter.stream)
        .bind(&filter.event_type)
        .bind(&filter.actor_id)
        .bind(&filter.command_id)
        .bind(&filter.gaming_day)
        .bind(&filter.account)
        .bind(clamp_page(filter.limit))
        .fetch_all(executor)
        .await?;
    rows.iter().map(decode_event).collect()
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
pub(crate) async fn resolve_position<'c>(
    executor: impl PgExecutor<'c>,
    property: &str,
    as_of: AsOf,
) -> Result<i64, StoreError> {
    let position = match as_of {
        AsOf::Position(position) => position,
        AsOf::Head => sqlx::query_scalar("SELECT coalesce((SELECT last_position FROM property_heads WHERE property = $1), 0)")
            .bind(property)
            .fetch_one(executor)
            .await?,
        AsOf::Time(at) => sqlx::query_scalar(
            "SELECT coalesce((SELECT position FROM events WHERE property = $1 AND recorded_at <= $2 \
             ORDER BY recorded_at DESC, position DESC LIMIT 1), 0)",
        )
        .bind(property)
        .bind(at)
        .fetch_one(executor)
        .await?,
    };
    Ok(position)
}

pub(crate) async fn balance_at<'c>(
    executor: impl PgExecutor<'c>,
    property: &str,
    account: &str,
    position: i64,
) -> Result<i64, StoreError> {
    let balance: i64 = sqlx::query_scalar(
        "SELECT coalesce(sum(amount_cents), 0)::bigint FROM postings \
         WHERE property = $1 AND account = $2 AND position <= $3",
    )
    .bind(property)
    .bind(account)
    .bind(position)
    .fetch_one(executor)
    .await?;
    Ok(balance)
}

pub(crate) async fn balances_sum_at<'c>(executor: impl PgExecutor<'c>, property: &str, position: i64) -> Result<i128, StoreError> {
    let sum: String = sqlx::query_scalar(
        "SELECT coalesce(sum(amount_cents), 0)::text FROM postings WHERE property = $1 AND position <= $2",
    )
    .bind(property)
    .bind(position)
    .fetch_one(executor)
    .await?;
    sum.parse().map_err(|_| StoreError::Corrupt(format!("sum of balances {sum:?}")))
}
