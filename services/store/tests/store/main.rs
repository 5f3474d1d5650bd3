//! Integration tests of chipledger-store against a real PostgreSQL (chipledger-postgres:
//! a container or a throwaway local cluster). One binary, one module per concern.

mod append;
mod chain;
mod crash;
mod group;
mod partitions;
mod privileges;
mod projections;
mod races;
mod reads;
mod report;
mod subscriptions;

use chipledger_postgres::TestPostgres;
use chipledger_store::*;
use serde_json::json;
use uuid::Uuid;

pub const APP_PASSWORD: &str = "app-test-password";
pub const PROPERTY: &str = "casino-1";

/// A migrated database of its own; the store connects as the application role.
pub struct TestDb {
    pub admin_url: String,
    pub store: Store,
}

pub async fn fresh(prefix: &str) -> anyhow::Result<TestDb> {
    let server = TestPostgres::shared().await?;
    let admin_url = server.fresh_database(prefix).await?;
    let store = migrated_store(&admin_url).await?;
    Ok(TestDb { admin_url, store })
}

pub async fn migrated_store(admin_url: &str) -> anyhow::Result<Store> {
    Store::migrate(admin_url).await?;
    Store::set_app_password(admin_url, APP_PASSWORD).await?;
    Ok(Store::connect_with(Store::app_options(admin_url, APP_PASSWORD)?, 24).await?)
}

/// A superuser connection, for what only a database administrator (or attacker) could do.
pub async fn admin(admin_url: &str) -> anyhow::Result<sqlx::PgConnection> {
    use sqlx::Connection;
    Ok(sqlx::PgConnection::connect(admin_url).await?)
}

pub fn metadata(command_id: &str) -> EventMetadata {
    EventMetadata {
        actor_id: "dealer-7".into(),
        actor_role: "Dealer".into(),
        device: Some("table-T1-tablet".into()),
        command_id: Some(command_id.into()),
        correlation_id: None,
        causation_id: None,
        trace_id: None,
        gaming_day: "2026-03-14".into(),
        config_version: 3,
        reason_code: None,
        imported_by: None,
        occurred_at_unix_ms: None,
    }
}

/// An event moving `amount_cents` from `from` to `to`.
pub fn movement(event_type: &str, from: &str, to: &str, amount_cents: i64, command_id: &str) -> NewEvent {
    NewEvent {
        event_id: Uuid::new_v4(),
        event_type: event_type.into(),
        schema_version: 1,
        payload: json!({"amount_cents": amount_cents, "from": from, "to": to, "note": "é\"\\\u{1}"}).into(),
        metadata: metadata(command_id),
        postings: vec![
            NewPosting { account: from.into(), amount_cents: -amount_cents },
            NewPosting { account: to.into(), amount_cents },
        ],
    }
}

pub fn one_stream(stream: &str, expected: ExpectedVersion, events: Vec<NewEvent>) -> AppendRequest {
    AppendRequest {
        property: PROPERTY.into(),
        decided: Default::default(),
        commands: vec![],
        streams: vec![StreamAppend { stream: stream.into(), expected_version: expected, events }],
        reply: vec![],
        projection_ops: vec![],
    }
}

pub fn command(command_id: &str, request: &str) -> CommandRecord {
    CommandRecord { command_id: command_id.into(), request_hash: request_hash(request.as_bytes()) }
}

/// `count` buy-in style events on `stream`, money from the house into seat 1 of table T1.
pub fn buy_ins(count: usize, command_id: &str) -> Vec<NewEvent> {
    (0..count)
        .map(|i| movement("ChipsBought", "house/bank", "table/T1/seat/1", 100 + i as i64, command_id))
        .collect()
}
