//! A chipledgerd for one test: the server library on 127.0.0.1:0 over a throwaway PostgreSQL,
//! one admin principal with a bearer token; and a runner for the `chipledger` binary.

use std::process::Output;
use std::sync::Arc;

use chipledger_postgres::TestPostgres;
use chipledger_server::config::{Config, FileConfig, Flags};
use chipledger_server::ledger::Ledger;
use chipledger_server::serve;
use chipledger_server::shutdown::Drain;
use chipledger_store::Store;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub const ADMIN_TOKEN: &str = "cli-test-admin-token-0123456789";

pub struct TestServer {
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    _postgres: TestPostgres,
}

impl TestServer {
    pub async fn start() -> TestServer {
        let postgres = TestPostgres::start().await.expect("a PostgreSQL for the test");
        let url = postgres.url();
        Store::migrate(&url).await.expect("migrations");
        let store = Store::connect(&url).await.expect("connect");
        let file: FileConfig = toml::from_str(&format!(
            // chipledger_server::serve bounds the whole serving time by the shutdown grace + 5 s
            // (reported to the server's owner); a long grace keeps the test server up.
            "shutdown_grace_seconds = 600\n[[auth.principals]]\nid = \"test-admin\"\nrole = \"admin\"\ntokens = [\"{ADMIN_TOKEN}\"]\n"
        ))
        .expect("test config parses");
        let flags = Flags { listen: Some("127.0.0.1:0".parse().expect("address")), ..Flags::default() };
        let config = Config::resolve(flags, file).expect("test config resolves");
        let drain = Drain::new();
        let ledger = Arc::new(Ledger::new(store, "casino".into(), config.gaming_day, config.limits, drain.clone()));
        let listener = serve::bind(config.listen).await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            serve::serve(&config, listener, ledger, drain, shutdown).await.expect("serve");
        });
        TestServer { url: format!("http://{addr}"), stop: Some(stop), task: Some(task), _postgres: postgres }
    }

    /// Runs `chipledger ARGS` against this server with the admin token.
    pub async fn chipledger(&self, args: &[&str]) -> Output {
        run(args, &[("CHIPLEDGER_SERVER", self.url.as_str()), ("CHIPLEDGER_TOKEN", ADMIN_TOKEN)]).await
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task");
        }
    }
}

/// Runs the `chipledger` binary with extra environment variables.
pub async fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_chipledger"));
    command.args(args).env_remove("CHIPLEDGER_SERVER").env_remove("CHIPLEDGER_TOKEN");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().await.expect("chipledger runs")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A failure the way an operator must see it: non-zero exit, exactly one error line, no panic.
pub fn assert_one_line_error(output: &Output, expected_code: i32, needle: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(expected_code), "stdout: {}\nstderr: {err}", stdout(output));
    assert!(!err.contains("panicked"), "panic: {err}");
    let lines: Vec<&str> = err.lines().filter(|line| !line.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one error line, got: {err}");
    assert!(lines[0].contains(needle), "expected {needle:?} in {:?}", lines[0]);
}

/// Where the PHH data lives: CHIPLEDGER_PHH_DIR, else ../shared/phh next to the repository.
/// `../shared/phh` (or `$CHIPLEDGER_PHH_DIR`): part of every checkout, so a test needing it
/// fails when it is missing.
pub fn phh_dir() -> std::path::PathBuf {
    let dir = match std::env::var_os("CHIPLEDGER_PHH_DIR") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/phh"),
    };
    assert!(
        dir.join("samples").is_dir() && dir.join("pluribus").is_dir(),
        "PHH data not found at {} (set CHIPLEDGER_PHH_DIR)",
        dir.display()
    );
    dir
}
