//! The few SQL statements this crate needs: is the server up, does a database exist, create one.

use std::time::Duration;

use sqlx::{AssertSqlSafe, Connection, PgConnection};

use crate::PgError;

/// Database every URL we hand out points at (created when missing).
pub(crate) const DATABASE: &str = "chipledger";

/// Upper bound on connection attempts while a server finishes starting (with `RETRY_PAUSE`
/// between attempts: 60 s in all, enough for crash recovery of a test-sized cluster).
const CONNECT_ATTEMPTS: u32 = 600;
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// `postgres://user:password@host:port/database`.
pub(crate) fn url(user: &str, password: &str, host: &str, port: u16, database: &str) -> String {
    format!("postgres://{user}:{password}@{host}:{port}/{database}")
}

/// Poll until the server accepts a connection and answers `select 1` (bounded, see
/// `CONNECT_ATTEMPTS`). Polling, not sleeping: it returns as soon as the server answers.
pub(crate) async fn wait_until_accepting(url: &str, port: u16) -> Result<(), PgError> {
    let mut last_error = String::new();
    for attempt in 1..=CONNECT_ATTEMPTS {
        match select_one(url).await {
            Ok(()) => return Ok(()),
            Err(error) => last_error = error.to_string(),
        }
        if attempt < CONNECT_ATTEMPTS {
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }
    Err(PgError::NotReady {
        port,
        attempts: CONNECT_ATTEMPTS,
        last_error,
    })
}

async fn select_one(url: &str) -> Result<(), sqlx::Error> {
    let mut connection = PgConnection::connect(url).await?;
    let one: i32 = sqlx::query_scalar("select 1")
        .fetch_one(&mut connection)
        .await?;
    debug_assert_eq!(one, 1);
    connection.close().await
}

/// Create database `name` unless it exists. `admin_url` must point at another database.
pub(crate) async fn ensure_database(admin_url: &str, name: &str) -> Result<(), PgError> {
    let mut connection = PgConnection::connect(admin_url).await?;
    let exists: bool =
        sqlx::query_scalar("select exists (select 1 from pg_database where datname = $1)")
            .bind(name)
            .fetch_one(&mut connection)
            .await?;
    if !exists {
        create_database_on(&mut connection, name).await?;
    }
    connection.close().await?;
    Ok(())
}

/// Create database `name` (which must not exist).
pub(crate) async fn create_database(admin_url: &str, name: &str) -> Result<(), PgError> {
    let mut connection = PgConnection::connect(admin_url).await?;
    create_database_on(&mut connection, name).await?;
    connection.close().await?;
    Ok(())
}

async fn create_database_on(connection: &mut PgConnection, name: &str) -> Result<(), PgError> {
    let statement = format!("create database {}", quote_identifier(name));
    sqlx::raw_sql(AssertSqlSafe(statement))
        .execute(connection)
        .await?;
    Ok(())
}

/// `"name"` with embedded quotes doubled: safe for any string as an SQL identifier.
fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Run one fixed statement as the admin of `admin_url` (rows, if any, are dropped).
pub(crate) async fn execute(admin_url: &str, statement: &'static str) -> Result<(), PgError> {
    let mut connection = PgConnection::connect(admin_url).await?;
    sqlx::query(statement).execute(&mut connection).await?;
    connection.close().await?;
    Ok(())
}
