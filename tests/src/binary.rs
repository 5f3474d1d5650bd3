//! The built `chipledgerd` binary as a child process, for scenarios that need a process of
//! their own: its environment (OTEL_* variables), its embedded PostgreSQL, its signals.
//!
//! The binary is built with `cargo build -p chipledger-server --bin chipledgerd` once per test
//! process (a no-op when fresh), so a test never runs a stale server. `CHIPLEDGERD_BIN`
//! overrides the path (and skips the build). The command line `chipledger` is built the same
//! way when a test drives it (`CHIPLEDGER_BIN` overrides).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::OnceCell;

/// Bound on building the binary (the machine is shared; cargo may wait for its lock).
const BUILD_BOUND: Duration = Duration::from_secs(1_200);
/// Output lines kept from a child (for failure messages).
const MAX_KEPT_LINES: usize = 400;

static CHIPLEDGERD: OnceCell<PathBuf> = OnceCell::const_new();
static CHIPLEDGER: OnceCell<PathBuf> = OnceCell::const_new();

/// Path of an up-to-date `chipledgerd`.
pub async fn chipledgerd() -> anyhow::Result<PathBuf> {
    CHIPLEDGERD.get_or_try_init(|| build("chipledger-server", "chipledgerd", "CHIPLEDGERD_BIN")).await.cloned()
}

/// Path of an up-to-date `chipledger` (the command line: the demo, imports).
pub async fn chipledger() -> anyhow::Result<PathBuf> {
    CHIPLEDGER.get_or_try_init(|| build("chipledger-cli", "chipledger", "CHIPLEDGER_BIN")).await.cloned()
}

fn target_profile_dir() -> anyhow::Result<PathBuf> {
    // The test executable lives in <target>/<profile>/deps/.
    let exe = std::env::current_exe().context("current_exe")?;
    let deps = exe.parent().context("test executable has a directory")?;
    Ok(deps.parent().context("deps has a parent")?.to_path_buf())
}

async fn build(package: &str, binary: &str, override_variable: &str) -> anyhow::Result<PathBuf> {
    if let Ok(path) = std::env::var(override_variable) {
        return Ok(PathBuf::from(path));
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("workspace root")?.to_path_buf();
    eprintln!("building {binary} (cargo build -p {package} --bin {binary})");
    let status = tokio::time::timeout(
        BUILD_BOUND,
        Command::new(cargo)
            .current_dir(&workspace)
            .args(["build", "-p", package, "--bin", binary])
            .stdin(Stdio::null())
            .status(),
    )
    .await
    .with_context(|| format!("building {binary} took too long"))??;
    if !status.success() {
        bail!("cargo build of {binary} failed: {status}");
    }
    let path = target_profile_dir()?.join(binary);
    if !path.exists() {
        // `cargo build` writes to the dev profile directory, which is where test binaries live
        // too unless a custom profile is in use.
        bail!("{binary} not found at {}", path.display());
    }
    Ok(path)
}

/// Runs `chipledgerd args..` (environment as [`ChildServer::spawn`]) until it exits, bounded:
/// its exit status and every line it printed. For starts that must be refused.
pub async fn run_to_exit(args: &[&str], env: &[(&str, String)], cwd: &Path) -> anyhow::Result<(std::process::ExitStatus, String)> {
    let binary = chipledgerd().await?;
    let mut command = Command::new(&binary);
    command.args(args).current_dir(cwd).env_clear().stdin(Stdio::null());
    for name in ["PATH", "HOME", "CHIPLEDGER_PG_BIN"] {
        if let Ok(value) = std::env::var(name) {
            command.env(name, value);
        }
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command.kill_on_drop(true);
    let output = tokio::time::timeout(crate::STARTUP_BOUND, command.output())
        .await
        .context("chipledgerd did not exit")??;
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    Ok((output.status, text))
}

/// A running `chipledgerd` child process.
pub struct ChildServer {
    child: Child,
    pub addr: SocketAddr,
    /// stdout and stderr lines so far.
    pub output: Arc<Mutex<Vec<String>>>,
}

impl ChildServer {
    /// Starts `chipledgerd args..` with exactly `env` on top of a minimal environment (PATH,
    /// HOME) and waits for its "listening on" line (bounded).
    pub async fn spawn(args: &[&str], env: &[(&str, String)], cwd: &Path) -> anyhow::Result<ChildServer> {
        let binary = chipledgerd().await?;
        let mut command = Command::new(&binary);
        command.args(args).current_dir(cwd).env_clear().stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        for name in ["PATH", "HOME", "CHIPLEDGER_PG_BIN"] {
            if let Ok(value) = std::env::var(name) {
                command.env(name, value);
            }
        }
        command.env("RUST_LOG", "info");
        for (name, value) in env {
            command.env(name, value);
        }
        command.kill_on_drop(true);
        let mut child = command.spawn().with_context(|| format!("spawn {}", binary.display()))?;
        let output = Arc::new(Mutex::new(Vec::new()));
        let (addr_sender, addr_receiver) = tokio::sync::oneshot::channel::<SocketAddr>();
        let stdout = child.stdout.take().context("stdout")?;
        let stderr = child.stderr.take().context("stderr")?;
        {
            let output = output.clone();
            tokio::spawn(async move {
                let mut addr_sender = Some(addr_sender);
                let mut lines = BufReader::new(stdout).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(rest) = line.strip_prefix("chipledgerd listening on ")
                        && let Some(addr) = rest.split_whitespace().next().and_then(|text| text.parse().ok())
                        && let Some(sender) = addr_sender.take()
                    {
                        let _ = sender.send(addr);
                    }
                    keep(&output, line);
                }
            });
        }
        {
            let output = output.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    keep(&output, line);
                }
            });
        }
        let addr = match tokio::time::timeout(crate::STARTUP_BOUND, addr_receiver).await {
            Ok(Ok(addr)) => addr,
            _ => {
                let _ = child.start_kill();
                bail!("chipledgerd printed no listen address; output:\n{}", output.lock().map(|o| o.join("\n")).unwrap_or_default());
            }
        };
        Ok(ChildServer { child, addr, output })
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Sends SIGHUP (chipledgerd reads its configuration file again).
    pub fn hangup(&self) -> anyhow::Result<()> {
        let pid = self.child.id().context("child already reaped")?;
        let pid = libc::pid_t::try_from(pid).context("pid fits pid_t")?;
        // SAFETY: kill(2) with a pid we spawned and have not reaped yet.
        if unsafe { libc::kill(pid, libc::SIGHUP) } != 0 {
            bail!("SIGHUP failed: {}", std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits (bounded) until the child has printed a line containing `text` at least `times`
    /// times in all.
    pub async fn wait_for_output(&self, text: &str, times: usize, bound: Duration) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let seen = self.output.lock().map(|lines| lines.iter().filter(|line| line.contains(text)).count()).unwrap_or(0);
            if seen >= times {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                bail!("chipledgerd did not print {text:?} ({times} times) within {bound:?}; output:\n{}", self.output_text());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Sends SIGTERM and waits (bounded) for the exit status.
    pub async fn terminate(mut self) -> anyhow::Result<(std::process::ExitStatus, Vec<String>)> {
        let pid = self.child.id().context("child already reaped")?;
        let pid = libc::pid_t::try_from(pid).context("pid fits pid_t")?;
        // SAFETY: kill(2) with a pid we spawned and have not reaped yet.
        let sent = unsafe { libc::kill(pid, libc::SIGTERM) };
        if sent != 0 {
            bail!("SIGTERM failed: {}", std::io::Error::last_os_error());
        }
        let status = tokio::time::timeout(Duration::from_secs(120), self.child.wait())
            .await
            .context("chipledgerd did not exit within 120 s of SIGTERM")??;
        let output = self.output.lock().map(|o| o.clone()).unwrap_or_default();
        Ok((status, output))
    }

    pub fn output_text(&self) -> String {
        self.output.lock().map(|o| o.join("\n")).unwrap_or_default()
    }
}

fn keep(output: &Mutex<Vec<String>>, line: String) {
    if let Ok(mut output) = output.lock()
        && output.len() < MAX_KEPT_LINES
    {
        output.push(line);
    }
}

/// True when a process with this pid exists and is not a zombie (an exited process whose
/// parent has not reaped it yet is not running).
pub fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let result = unsafe { libc::kill(pid, 0) };
    let exists = result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    if !exists {
        return false;
    }
    // /proc/<pid>/stat: "pid (comm) S ...": the state follows the last ')'.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}
