use sqlx::Connection;

use chipledger_postgres::{Backend, TestPostgres, choose_backend};

use crate::{commit_marker, read_markers, select_one};

/// The container backend if this machine offers it; `None` (said out loud) otherwise.
/// With `CHIPLEDGER_TEST_PG=container` an unavailable container is a failure, not a skip.
async fn container_backend() -> Option<Backend> {
    let choice = std::env::var("CHIPLEDGER_TEST_PG").unwrap_or_default();
    let forced = choice == "container";
    if choice == "local" {
        println!("SKIP container backend: CHIPLEDGER_TEST_PG=local");
        return None;
    }
    match choose_backend().await {
        Ok(backend @ Backend::Container { .. }) => Some(backend),
        Ok(Backend::Local) => {
            assert!(!forced);
            println!("SKIP container backend: not available here (see stderr for why)");
            None
        }
        Err(error) => {
            assert!(!forced, "CHIPLEDGER_TEST_PG=container but: {error}");
            println!("SKIP container backend: {error}");
            None
        }
    }
}

/// The contract every backend keeps: answers, survives a crash with committed data and the same
/// URL, hands out isolated databases, and is gone after drop.
async fn check_backend(backend: Backend) {
    let mut server = TestPostgres::start_backend(backend.clone())
        .await
        .expect("start");
    assert_eq!(server.backend(), backend);
    let url = server.url();
    assert_eq!(select_one(&url).await, 1);

    commit_marker(&url, "committed before the crash").await;
    server.restart_immediate().await.expect("crash and restart");
    assert_eq!(server.url(), url, "URL changed across restart");
    assert_eq!(read_markers(&url).await, ["committed before the crash"]);

    let first = server
        .fresh_database("isolation test")
        .await
        .expect("first database");
    let second = server
        .fresh_database("isolation test")
        .await
        .expect("second database");
    assert_ne!(first, second);
    commit_marker(&first, "only in first").await;
    commit_marker(&second, "only in second").await;
    assert_eq!(read_markers(&first).await, ["only in first"]);
    assert_eq!(read_markers(&second).await, ["only in second"]);

    drop(server);
    let gone = sqlx::PgConnection::connect(&url).await;
    assert!(gone.is_err(), "server still answers after drop");
}

#[tokio::test]
async fn local_backend_keeps_the_contract() {
    check_backend(Backend::Local).await;
}

#[tokio::test]
async fn container_backend_keeps_the_contract() {
    if let Some(backend) = container_backend().await {
        check_backend(backend).await;
    }
}

#[tokio::test]
async fn shared_server_is_started_once_per_process() {
    let first = TestPostgres::shared().await.expect("shared server");
    let second = TestPostgres::shared().await.expect("shared server");
    assert!(std::ptr::eq(first, second));
    let url = first.fresh_database("shared").await.expect("database");
    assert_eq!(select_one(&url).await, 1);
}
