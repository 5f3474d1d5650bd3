//! A chipledgerd for one test: the server library on 127.0.0.1:0 over a throwaway PostgreSQL,
//! one admin principal with a bearer token and the second persons of dual control (a floor
//! supervisor, a cage cashier, a second admin), whose tokens the runner hands to `chipledger`
//! in its approver variables; and a runner for the `chipledger` binary.

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
/// The second persons: (principal id, role, token, the `chipledger` variable that carries it).
pub const APPROVERS: [(&str, &str, &str, &str); 3] = [
    ("floor-fay", "floor_supervisor", "cli-test-floor-token-0123456789", "CHIPLEDGER_FLOOR_TOKEN"),
    ("cage-cal", "cage", "cli-test-cage-token-0123456789", "CHIPLEDGER_CAGE_TOKEN"),
    ("credit-cora", "admin", "cli-test-credit-token-0123456789", "CHIPLEDGER_CREDIT_TOKEN"),
];

pub struct TestServer {
    pub url: String,
    _data_dir: tempfile::TempDir,
    /// The superuser's URL of the database, for what only an administrator (or attacker) does.
    pub database_url: String,
    /// The checkpoint signing key's public half (hex).
    pub public_key_hex: String,
    _checkpoints: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    _postgres: TestPostgres,
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with("").await
    }

    /// A server whose configuration has `extra` appended (TOML, e.g. a `[gaming_day]` table with
    /// a time zone).
    pub async fn start_with(extra: &str) -> TestServer {
        let postgres = TestPostgres::start().await.expect("a PostgreSQL for the test");
        let url = postgres.url();
        Store::migrate(&url).await.expect("migrations");
        let store = Store::connect(&url).await.expect("connect");
        let data_dir = tempfile::tempdir().expect("a data directory");
        let mut text = format!(
            // chipledger_server::serve bounds the whole serving time by the shutdown grace + 5 s
            // (reported to the server's owner); a long grace keeps the test server up.
            "shutdown_grace_seconds = 600\nproperty_id = \"casino\"\ndata_dir = {:?}\n[[auth.principals]]\nid = \"test-admin\"\nrole = \"admin\"\ntokens = [\"{ADMIN_TOKEN}\"]\n",
            data_dir.path().display().to_string()
        );
        for (id, role, token, _) in APPROVERS {
            text.push_str(&format!("[[auth.principals]]\nid = \"{id}\"\nrole = \"{role}\"\ntokens = [\"{token}\"]\n"));
        }
        text.push_str(extra);
        let file: FileConfig = toml::from_str(&text).expect("test config parses");
        let flags = Flags { listen: Some("127.0.0.1:0".parse().expect("address")), ..Flags::default() };
        let config = Config::resolve(flags, file).expect("test config resolves");
        let drain = Drain::new();
        let checkpoints = tempfile::tempdir().expect("checkpoint directory");
        let key = chipledger_store::checkpoint::CheckpointKey::load_or_generate(&checkpoints.path().join("checkpoint.key"))
            .expect("checkpoint key");
        let public_key_hex = key.public_key().iter().map(|byte| format!("{byte:02x}")).collect();
        let router = Arc::new(chipledger_server::shards::Router::single(store, config.properties.clone()));
        let checkpointer = chipledger_server::checkpoints::Checkpointer::new(
            router.clone(),
            key,
            Some(&checkpoints.path().join("sink")),
            std::time::Duration::from_secs(3_600),
        );
        let ledger = Arc::new(Ledger::for_router(router, &config, drain.clone()).expect("ledger").with_checkpointer(Arc::new(checkpointer)));
        let listener = serve::bind(config.listen).await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            serve::serve(&config, listener, ledger, drain, shutdown).await.expect("serve");
        });
        TestServer {
            url: format!("http://{addr}"),
            database_url: url,
            public_key_hex,
            _checkpoints: checkpoints,
            _data_dir: data_dir,
            stop: Some(stop),
            task: Some(task),
            _postgres: postgres,
        }
    }

    /// Runs `chipledger ARGS` against this server with the admin token (and the approvers'
    /// tokens for the commands that hold second persons: demo, imports).
    pub async fn chipledger(&self, args: &[&str]) -> Output {
        self.command(args).output().await.expect("chipledger runs")
    }

    /// `chipledger ARGS`, which must succeed: its standard output.
    pub async fn ok(&self, args: &[&str]) -> String {
        let output = self.chipledger(args).await;
        assert_eq!(output.status.code(), Some(0), "{args:?}\nstdout: {}\nstderr: {}", stdout(&output), stderr(&output));
        stdout(&output)
    }

    /// `chipledger --json ARGS`, which must succeed: its JSON document.
    pub async fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(args);
        let text = self.ok(&with_json).await;
        serde_json::from_str(text.trim()).unwrap_or_else(|error| panic!("{args:?}: {error}: {text}"))
    }

    /// `chipledger ARGS` as [`TestServer::chipledger`] runs it, not started yet (for a process
    /// the test reads from while it runs, e.g. `follow`).
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut env = vec![("CHIPLEDGER_SERVER", self.url.as_str()), ("CHIPLEDGER_TOKEN", ADMIN_TOKEN)];
        env.extend(APPROVERS.iter().map(|(_, _, token, variable)| (*variable, *token)));
        command(args, &env)
    }

    /// `chipledger approve` of `group operation...` (the same command under `command_id`) by
    /// the approver `approver_id`, authenticated with its own token; the printed token.
    pub async fn approval(&self, approver_id: &str, command_id: &str, group: &str, operation: &[&str]) -> String {
        let (_, _, token, _) = APPROVERS.iter().find(|(id, ..)| *id == approver_id).expect("a test approver");
        let mut args = vec!["approve", "--command-id", command_id, group];
        args.extend_from_slice(operation);
        let output = run(&args, &[("CHIPLEDGER_SERVER", self.url.as_str()), ("CHIPLEDGER_TOKEN", token)]).await;
        assert_eq!(output.status.code(), Some(0), "approve {args:?}: {}", stderr(&output));
        stdout(&output).trim().to_string()
    }

    /// `chipledger group --command-id ID --approval ... operation...` as the admin, after each
    /// of `approvers` approved it (dual control: slips, credit decisions, corrections).
    pub async fn chipledger_approved(&self, group: &str, operation: &[&str], approvers: &[&str]) -> Output {
        let command_id = format!("approved-{}", uuid::Uuid::new_v4().simple());
        let mut tokens = Vec::new();
        for approver in approvers {
            tokens.push(self.approval(approver, &command_id, group, operation).await);
        }
        let mut args = vec![group, "--command-id", command_id.as_str()];
        for token in &tokens {
            args.extend_from_slice(&["--approval", token.as_str()]);
        }
        args.extend_from_slice(operation);
        self.chipledger(&args).await
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
    command(args, env).output().await.expect("chipledger runs")
}

fn command(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_chipledger"));
    command.args(args).env_remove("CHIPLEDGER_SERVER").env_remove("CHIPLEDGER_TOKEN");
    for (_, _, _, variable) in APPROVERS {
        command.env_remove(variable);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command.kill_on_drop(true);
    command
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
