//! Rejected commands, kept for auditors (R-AUDIT-3). They never move chips; the table is
//! append-only like the log.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::Store;
use crate::append::validate_property;
use crate::error::StoreError;
use crate::read::clamp_page;

/// A rejection to record: the stable reason code and rule id, the figures involved, who tried.
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
    /// The rejected request as JSON, for the auditor.
    pub request: serde_json::Value,
}

/// A stored rejection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRejection {
    pub rejection_id: i64,
    pub recorded_at: OffsetDateTime,
    pub record: RejectionRecord,
}

impl Store {
    /// Record a rejected attempt; returns its id.
    pub async fn record_rejection(&self, record: &RejectionRecord) -> Result<i64, StoreError> {
        validate_property(&record.property)?;
        let numbers = serde_json::to_value(&record.numbers).map_err(|e| StoreError::InvalidRequest(e.to_string()))?;
        Ok(sqlx::query_scalar(
            "INSERT INTO rejections (property, command_id, reason_code, rule_id, numbers, detail, actor_id, \
             actor_role, device, streams, request) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             RETURNING rejection_id",
        )
        .bind(&record.property)
        .bind(&record.command_id)
        .bind(&record.reason_code)
        .bind(&record.rule_id)
        .bind(numbers)
        .bind(&record.detail)
        .bind(&record.actor_id)
        .bind(&record.actor_role)
        .bind(&record.device)
        .bind(&record.streams)
        .bind(&record.request)
        .fetch_one(self.pool())
        .await?)
    }

    /// Rejections of a property with id > `after_id`, oldest first.
    pub async fn rejections(&self, property: &str, after_id: i64, limit: i64) -> Result<Vec<RecordedRejection>, StoreError> {
        type Row = (i64, OffsetDateTime, String, String, String, String, serde_json::Value, String, String, String, Option<String>, Vec<String>, serde_json::Value);
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT rejection_id, recorded_at, property, command_id, reason_code, rule_id, numbers, detail, \
             actor_id, actor_role, device, streams, request FROM rejections \
             WHERE property = $1 AND rejection_id > $2 ORDER BY rejection_id LIMIT $3",
        )
        .bind(property)
        .bind(after_id)
        .bind(clamp_page(limit))
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|(rejection_id, recorded_at, property, command_id, reason_code, rule_id, numbers, detail, actor_id, actor_role, device, streams, request)| {
                let numbers = serde_json::from_value(numbers).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                Ok(RecordedRejection {
                    rejection_id,
                    recorded_at,
                    record: RejectionRecord { property, command_id, reason_code, rule_id, numbers, detail, actor_id, actor_role, device, streams, request },
                })
            })
            .collect()
    }
}
