//! Async projections (reports): built from the log after the fact, each with a checkpoint
//! (last position applied) written in the same transaction as its rows, so a crash never
//! applies an event twice or skips one, and a rebuild from position zero gives the same rows.
//!
//! [`TableDayReport`]: movements per table per gaming day, for cage reconciliation.

use std::collections::BTreeMap;

use sqlx::Row;
use sqlx::postgres::PgRow;

use crate::Store;
use crate::error::StoreError;
use crate::event::MAX_PAGE;
use crate::read::postings_of;

/// Events per transaction (one checkpoint write each).
const PAGE_EVENTS: i64 = MAX_PAGE;

/// One row of the table/day report.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TableDayRow {
    pub table_id: String,
    pub gaming_day: String,
    pub event_count: i64,
    /// Events that moved chips (non-empty postings).
    pub movement_count: i64,
    /// Sum of postings into the table's accounts.
    pub chips_in_cents: i64,
    /// Sum of postings out of the table's accounts, as a positive number.
    pub chips_out_cents: i64,
    pub last_position: i64,
}

/// Movements per table per gaming day.
pub struct TableDayReport;

impl TableDayReport {
    /// Apply up to `max_events` new events; returns how many were applied.
    pub async fn catch_up(store: &Store, property: &str, max_events: i64) -> Result<i64, StoreError> {
        let mut applied = 0;
        while applied < max_events {
            let step = Self::apply_page(store, property, (max_events - applied).min(PAGE_EVENTS)).await?;
            if step == 0 {
                break;
            }
            applied += step;
        }
        Ok(applied)
    }

    async fn apply_page(store: &Store, property: &str, limit: i64) -> Result<i64, StoreError> {
        let mut tx = store.pool().begin().await?;
        // Locked to the end of the transaction: one catch-up of a property at a time.
        let checkpoint: i64 = sqlx::query_scalar("SELECT chipledger_report_table_day_checkpoint($1, true)")
            .bind(property)
            .fetch_one(&mut *tx)
            .await?;
        // Only what the report uses: no payload, the gaming day taken out of the metadata by
        // PostgreSQL (a non-string or missing one is "", as the report has always counted it).
        let events = sqlx::query("SELECT * FROM chipledger_report_events($1, $2, $3)")
            .bind(property)
            .bind(checkpoint)
            .bind(limit.clamp(1, PAGE_EVENTS))
            .fetch_all(&mut *tx)
            .await?;
        let Some(last) = events.last().map(|row| row.try_get::<i64, _>(0)).transpose()? else { return Ok(0) };
        let postings = sqlx::query("SELECT * FROM chipledger_postings_range($1, $2, $3)")
            .bind(property)
            .bind(checkpoint + 1)
            .bind(last)
            .fetch_all(&mut *tx)
            .await?;
        let rows = aggregate(&events, &postings)?;
        let mut table_ids = Vec::new();
        let mut days = Vec::new();
        let mut columns: [Vec<i64>; 5] = Default::default();
        for row in rows {
            table_ids.push(row.table_id);
            days.push(row.gaming_day);
            for (column, value) in columns.iter_mut().zip([
                row.event_count,
                row.movement_count,
                row.chips_in_cents,
                row.chips_out_cents,
                row.last_position,
            ]) {
                column.push(value);
            }
        }
        sqlx::query("SELECT chipledger_report_table_day_apply($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)")
            .bind(property)
            .bind(checkpoint)
            .bind(last)
            .bind(&table_ids)
            .bind(&days)
            .bind(&columns[0])
            .bind(&columns[1])
            .bind(&columns[2])
            .bind(&columns[3])
            .bind(&columns[4])
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(events.len() as i64)
    }

    /// Drop the property's rows and checkpoint, and rebuild from position zero to the head.
    pub async fn rebuild(store: &Store, property: &str) -> Result<i64, StoreError> {
        sqlx::query("SELECT chipledger_report_table_day_reset($1)").bind(property).execute(store.pool()).await?;
        Self::catch_up(store, property, i64::MAX).await
    }

    pub async fn checkpoint(store: &Store, property: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT chipledger_report_table_day_checkpoint($1, false)")
            .bind(property)
            .fetch_one(store.pool())
            .await?)
    }

    pub async fn rows(store: &Store, property: &str) -> Result<Vec<TableDayRow>, StoreError> {
        Ok(sqlx::query_as("SELECT * FROM chipledger_report_table_day_rows($1)").bind(property).fetch_all(store.pool()).await?)
    }
}

/// Rows of a page: `events` are (position, stream, gaming_day) in position order, `postings`
/// (position, account, amount_cents) of the same positions in position order.
fn aggregate(events: &[PgRow], postings: &[PgRow]) -> Result<Vec<TableDayRow>, StoreError> {
    let postings = postings
        .iter()
        .map(|row| Ok((row.try_get::<i64, _>(0)?, row.try_get::<&str, _>(1)?, row.try_get::<i64, _>(2)?)))
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    let mut days = TableDays::default();
    let mut next_posting = 0;
    for event in events {
        let position: i64 = event.try_get(0)?;
        let own = postings_of(&postings, &mut next_posting, position, |posting| posting.0);
        days.add(position, event.try_get(1)?, event.try_get(2)?, own.iter().map(|&(_, account, amount)| (account, amount)));
    }
    Ok(days.into_rows())
}

/// Table/day rows aggregated from events taken in position order: a page of them for the
/// report, the whole log for `verify --projections`, which compares them with the stored rows.
#[derive(Default)]
pub(crate) struct TableDays {
    /// By table, then day, looked up with borrowed keys: keys are allocated once per row.
    tables: BTreeMap<String, BTreeMap<String, TableDayRow>>,
}

impl TableDays {
    /// The event at `position` on `stream`, of gaming day `day` ("" if its metadata has none),
    /// with its postings (account, amount).
    pub(crate) fn add<'p>(&mut self, position: i64, stream: &str, day: &str, postings: impl Iterator<Item = (&'p str, i64)>) {
        let Some(table_id) = stream.strip_prefix("table-") else { return };
        if !self.tables.contains_key(table_id) {
            self.tables.insert(table_id.to_owned(), BTreeMap::new());
        }
        let days = self.tables.get_mut(table_id).expect("inserted above");
        if !days.contains_key(day) {
            let row = TableDayRow {
                table_id: table_id.to_owned(),
                gaming_day: day.to_owned(),
                event_count: 0,
                movement_count: 0,
                chips_in_cents: 0,
                chips_out_cents: 0,
                last_position: 0,
            };
            days.insert(day.to_owned(), row);
        }
        let row = days.get_mut(day).expect("inserted above");
        row.event_count += 1;
        // Postings into or out of this table's own accounts, "table/{table_id}/...".
        let of_table = |account: &str| {
            account.strip_prefix("table/").and_then(|rest| rest.strip_prefix(table_id)).is_some_and(|rest| rest.starts_with('/'))
        };
        let mut moved = false;
        for (account, amount_cents) in postings {
            moved = true;
            if !of_table(account) {
                continue;
            }
            if amount_cents > 0 {
                row.chips_in_cents += amount_cents;
            } else {
                row.chips_out_cents -= amount_cents;
            }
        }
        row.movement_count += i64::from(moved);
        row.last_position = position;
    }

    pub(crate) fn into_rows(self) -> Vec<TableDayRow> {
        self.tables.into_values().flat_map(BTreeMap::into_values).collect()
    }
}

/// R-RAKE-2: one table's jackpot fund over a gaming day: what it held when the day began, the
/// drops into it and the payouts (or reversals) out of it that day, and what it held at the
/// end. `opening_cents + drops_cents - paid_cents == closing_cents` always (double entry); the
/// report is how the fund is reconciled every gaming day.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct JackpotDayRow {
    pub table_id: String,
    pub opening_cents: i64,
    pub drops_cents: i64,
    pub paid_cents: i64,
    pub closing_cents: i64,
}

/// The jackpot funds of every table of `property` for `gaming_day` (`YYYY-MM-DD`, compared as
/// text: the format sorts by date), from the postings of the log.
pub async fn jackpot_day(store: &Store, property: &str, gaming_day: &str) -> Result<Vec<JackpotDayRow>, StoreError> {
    // Through the owner's function (the application role reads no table).
    Ok(sqlx::query_as("SELECT * FROM chipledger_jackpot_day($1, $2)")
        .bind(property)
        .bind(gaming_day)
        .fetch_all(store.pool())
        .await?)
}
