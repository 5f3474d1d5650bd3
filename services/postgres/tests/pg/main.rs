//! chipledger-postgres against real servers: every backend this machine offers.
//! With `CHIPLEDGER_TEST_PG=container` (CI) the container tests must run: no skipping.

mod local_cluster;
mod test_postgres;

use sqlx::{Connection, PgConnection};

/// `select 1` over a fresh connection.
pub async fn select_one(url: &str) -> i32 {
    let mut connection = PgConnection::connect(url).await.expect("connect");
    sqlx::query_scalar("select 1")
        .fetch_one(&mut connection)
        .await
        .expect("select 1")
}

/// Create a table and commit one row holding `value`.
pub async fn commit_marker(url: &str, value: &str) {
    let mut connection = PgConnection::connect(url).await.expect("connect");
    sqlx::raw_sql("create table if not exists marker (value text not null)")
        .execute(&mut connection)
        .await
        .expect("create table");
    sqlx::query("insert into marker (value) values ($1)")
        .bind(value)
        .execute(&mut connection)
        .await
        .expect("insert");
}

/// Every value in the marker table, in insertion order.
pub async fn read_markers(url: &str) -> Vec<String> {
    let mut connection = PgConnection::connect(url).await.expect("connect");
    sqlx::query_scalar("select value from marker order by ctid")
        .fetch_all(&mut connection)
        .await
        .expect("select markers")
}

/// Whether anything accepts TCP connections on 127.0.0.1:`port`.
pub fn port_open(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}
