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

/// Not a test on its own: the process that `a_killed_test_process_leaves_no_server_behind` kills.
#[tokio::test]
#[ignore = "run by a_killed_test_process_leaves_no_server_behind"]
async fn holds_a_server_until_killed() {
    let server = TestPostgres::start().await.expect("start");
    println!("{URL_LINE}{}", server.url());
    std::future::pending::<()>().await;
}

const URL_LINE: &str = "server url: ";

/// SIGKILL gives no chance to run any drop: the server must go away all the same.
#[tokio::test]
async fn a_killed_test_process_leaves_no_server_behind() {
    let mut backends = vec!["local"];
    if container_backend().await.is_some() {
        backends.push("container");
    }
    for backend in backends {
        let mut child = std::process::Command::new(std::env::current_exe().expect("own path"))
            .args([
                "--ignored",
                "--exact",
                "test_postgres::holds_a_server_until_killed",
            ])
            .arg("--nocapture")
            .env("CHIPLEDGER_TEST_PG", backend)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawn child test process");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let url = std::io::BufRead::lines(stdout)
            .map(|line| line.expect("read child output"))
            // Anywhere in the line: with one test thread the harness prints the test's name,
            // without a newline, before the test runs.
            .find_map(|line| line.split_once(URL_LINE).map(|(_, url)| url.to_owned()))
            .expect("child printed no URL");
        assert_eq!(
            select_one(&url).await,
            1,
            "{backend}: child's server not up"
        );

        child.kill().expect("SIGKILL");
        child.wait().expect("reap child");

        assert!(
            server_goes_away(&url).await,
            "{backend}: server still answers after its process was killed"
        );
    }
}

/// Poll (bounded: 30 s) until nothing answers at `url`.
async fn server_goes_away(url: &str) -> bool {
    for _ in 0..300 {
        if sqlx::PgConnection::connect(url).await.is_err() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    false
}
