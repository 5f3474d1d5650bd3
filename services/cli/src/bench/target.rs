//! What the bench talks to: an existing `chipledgerd` (`--server` plus `--database-url` of its
//! PostgreSQL, for the baseline and the settings), or an embedded one: a fresh LocalCluster
//! with fsync on and the real `chipledgerd` binary run as a child process on it, as its own
//! development mode starts (migrations done here as the owner, the application role and its
//! pool of 16, anonymous callers as admin with the development approvers, console off).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use chipledger_postgres::{ClusterOptions, LocalCluster, StopMode};
use chipledger_store::Store;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use tokio::process::{Child, Command};
use tonic_health::ServingStatus;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use super::usage::CpuSample;

/// Connections of the baseline pool (as many as `chipledgerd`'s store pool).
pub const POOL_CONNECTIONS: u32 = 16;
/// How long the child `chipledgerd` may take to answer gRPC health SERVING.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(60);
/// Time between health probes while it starts.
const HEALTH_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// How long it may take to stop after SIGTERM (in-flight appends finish) before it is killed.
const SERVER_STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// The embedded server's configuration file: what `chipledgerd` reads in place of flags.
/// Plain loopback with anonymous admin: the gate still authenticates and authorises every
/// call (the role table lookup runs), without a token to manage; the development approvers
/// sign the fills and large buy-ins (dual control, R-CHIP-3, R-CHIP-2). The measured server
/// serves gRPC only.
const SERVER_CONFIG: &str = "[auth]\ndev_anonymous_role = \"admin\"\n\n[console]\nenabled = false\n";

struct Embedded {
    cluster: LocalCluster,
    dir: PathBuf,
    server: Child,
}

pub struct Target {
    pub grpc_url: String,
    /// Superuser (or owner) connection: baseline tables, settings, rebuild.
    pub admin: PgPool,
    pub admin_url: String,
    pub postmaster_pid: Option<u32>,
    /// The embedded `chipledgerd` (its CPU is in the process figure).
    pub server_pid: Option<u32>,
    embedded: Option<Embedded>,
}

impl Target {
    pub async fn external(grpc_url: &str, database_url: &str) -> anyhow::Result<Target> {
        let admin = admin_pool(database_url).await?;
        let postmaster_pid = postmaster_pid(&admin).await;
        Ok(Target {
            grpc_url: grpc_url.to_owned(),
            admin,
            admin_url: database_url.to_owned(),
            postmaster_pid,
            server_pid: None,
            embedded: None,
        })
    }

    /// A fresh cluster and a `chipledgerd` (the binary at `chipledgerd`) serving `property` on
    /// it. `profile_sql` loads pg_stat_statements (nested statements too), so each run can say
    /// which statements took PostgreSQL's time.
    pub async fn embedded(profile_sql: bool, property: &str, chipledgerd: &Path) -> anyhow::Result<Target> {
        let dir = std::env::temp_dir().join(format!("chipledger-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        {
            // The cluster runs as the postgres user; it must be able to enter the directory.
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))?;
        }
        let mut options = ClusterOptions::new(dir.join("pgdata"));
        if profile_sql {
            for (name, value) in [
                ("shared_preload_libraries", "pg_stat_statements"),
                ("pg_stat_statements.track", "all"),
                ("pg_stat_statements.max", "1000"),
            ] {
                options.extra_settings.push((name.into(), value.into()));
            }
        }
        let cluster = LocalCluster::start(options).await.context("starting PostgreSQL")?;
        let url = cluster.url();
        Store::migrate(&url).await.context("migrations")?;
        if profile_sql {
            sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                .execute(&mut <sqlx::PgConnection as sqlx::Connection>::connect(&url).await?)
                .await
                .context("pg_stat_statements")?;
        }
        let app_password = uuid::Uuid::new_v4().simple().to_string();
        Store::set_app_password(&url, &app_password).await?;
        let (_, host_and_database) = url.split_once('@').context("the cluster's URL names no host")?;
        let app_url = format!("postgres://{}:{app_password}@{host_and_database}", chipledger_store::APP_ROLE);
        let server = start_server(chipledgerd, &dir, &app_url, property).await?;
        let admin = admin_pool(&url).await?;
        let postmaster_pid = postmaster_pid(&admin).await;
        Ok(Target {
            grpc_url: server.grpc_url,
            admin,
            admin_url: url,
            postmaster_pid,
            server_pid: server.child.id(),
            embedded: Some(Embedded { cluster, dir, server: server.child }),
        })
    }

    /// CPU spent so far by this process and the embedded server, and by PostgreSQL.
    pub fn cpu(&self) -> CpuSample {
        CpuSample::take(self.server_pid, self.postmaster_pid)
    }

    /// Stops the embedded server (SIGTERM: it drains, as in production) and cluster and
    /// removes their files.
    pub async fn close(self) -> anyhow::Result<()> {
        self.admin.close().await;
        if let Some(mut embedded) = self.embedded {
            let stopped = stop_server(&mut embedded.server).await;
            embedded.cluster.stop(StopMode::Fast).await?;
            std::fs::remove_dir_all(&embedded.dir).with_context(|| format!("removing {}", embedded.dir.display()))?;
            stopped?;
        }
        Ok(())
    }
}

/// The `chipledgerd` to run: `--chipledgerd`, else the one beside this executable (cargo
/// builds both into the same directory).
pub fn chipledgerd_path(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    let path = match given {
        Some(path) => path.to_owned(),
        None => std::env::current_exe().context("the path of this executable")?.with_file_name("chipledgerd"),
    };
    if !path.is_file() {
        let profile = if cfg!(debug_assertions) { "" } else { "--release " };
        bail!(
            "the bench runs chipledgerd, and there is none at {}: build it with `cargo build {profile}-p chipledger-server \
             --bin chipledgerd` (it lands beside chipledger), or pass --chipledgerd PATH",
            path.display()
        );
    }
    Ok(path)
}

struct Started {
    child: Child,
    grpc_url: String,
}

/// Runs `chipledgerd` on the application role's URL and waits until gRPC health says SERVING
/// (polled, bounded by [`SERVER_START_TIMEOUT`]); its output goes to `chipledgerd.log` in `dir`.
async fn start_server(chipledgerd: &Path, dir: &Path, app_url: &str, property: &str) -> anyhow::Result<Started> {
    let config = dir.join("chipledgerd.toml");
    std::fs::write(&config, SERVER_CONFIG).with_context(|| format!("writing {}", config.display()))?;
    let log_path = dir.join("chipledgerd.log");
    let log = std::fs::File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    let listen = free_loopback_port().context("a free port for chipledgerd")?;
    let mut command = Command::new(chipledgerd);
    // Only the flags below configure it, not this shell's CHIPLEDGER_* or DATABASE_URL.
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|name| name.starts_with("CHIPLEDGER_") || name == "DATABASE_URL") {
            command.env_remove(name);
        }
    }
    command
        .arg("--config")
        .arg(&config)
        .arg("--listen")
        .arg(listen.to_string())
        .arg("--database-url")
        .arg(app_url)
        // The approval signing key lives with the cluster and goes with it.
        .arg("--data-dir")
        .arg(dir)
        .arg("--property-id")
        .arg(property)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .kill_on_drop(true);
    let mut child = command.spawn().with_context(|| format!("starting {}", chipledgerd.display()))?;
    let grpc_url = format!("http://{listen}");
    let deadline = Instant::now() + SERVER_START_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait()? {
            bail!("chipledgerd exited ({status}) before serving:\n{}", log_tail(&log_path));
        }
        if serving(&grpc_url).await {
            return Ok(Started { child, grpc_url });
        }
        if Instant::now() >= deadline {
            bail!("chipledgerd did not answer gRPC health SERVING within {SERVER_START_TIMEOUT:?}:\n{}", log_tail(&log_path));
        }
        tokio::time::sleep(HEALTH_POLL_INTERVAL).await;
    }
}

/// True when the server at `grpc_url` answers gRPC health (the whole server) SERVING.
async fn serving(grpc_url: &str) -> bool {
    let Ok(endpoint) = tonic::transport::Endpoint::from_shared(grpc_url.to_owned()) else { return false };
    let bound = HEALTH_POLL_INTERVAL * 20;
    let Ok(channel) = endpoint.connect_timeout(bound).timeout(bound).connect().await else { return false };
    let mut client = HealthClient::new(channel);
    let request = HealthCheckRequest { service: String::new() };
    client.check(request).await.is_ok_and(|reply| reply.get_ref().status == ServingStatus::Serving as i32)
}

/// A loopback address no one listens on now (the kernel's pick, released for chipledgerd).
fn free_loopback_port() -> std::io::Result<std::net::SocketAddr> {
    std::net::TcpListener::bind(("127.0.0.1", 0))?.local_addr()
}

/// The last lines chipledgerd wrote, for an error that says why it failed.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// SIGTERM, then wait (bounded); a server that does not stop in time is killed.
async fn stop_server(server: &mut Child) -> anyhow::Result<()> {
    if let Some(pid) = server.id().and_then(|pid| i32::try_from(pid).ok()) {
        // SAFETY: kill(2) on our own child's pid, which it keeps until we wait for it.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    match tokio::time::timeout(SERVER_STOP_TIMEOUT, server.wait()).await {
        Ok(status) => {
            let status = status.context("waiting for chipledgerd")?;
            if !status.success() {
                bail!("chipledgerd stopped with {status}");
            }
            Ok(())
        }
        Err(_) => {
            server.kill().await.context("killing chipledgerd")?;
            bail!("chipledgerd did not stop within {SERVER_STOP_TIMEOUT:?} of SIGTERM; killed")
        }
    }
}

async fn admin_pool(url: &str) -> anyhow::Result<PgPool> {
    PgPoolOptions::new()
        .max_connections(POOL_CONNECTIONS)
        .connect(url)
        .await
        .context("connecting to PostgreSQL")
}

async fn postmaster_pid(admin: &PgPool) -> Option<u32> {
    let backend: i32 = sqlx::query_scalar("SELECT pg_backend_pid()").fetch_one(admin).await.ok()?;
    super::usage::postmaster_of(u32::try_from(backend).ok()?)
}

/// The machine and the PostgreSQL settings that decide commit cost.
pub async fn describe(admin: &PgPool) -> anyhow::Result<Vec<(String, String)>> {
    let mut lines = Vec::new();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| text.lines().find(|line| line.starts_with("model name")).map(|line| line.split(':').nth(1).unwrap_or("").trim().to_owned()))
        .unwrap_or_else(|| "unknown".into());
    lines.push(("cores".into(), format!("{cores} ({model})")));
    for name in [
        "server_version",
        "fsync",
        "synchronous_commit",
        "wal_sync_method",
        "full_page_writes",
        "shared_buffers",
        "wal_buffers",
        "wal_level",
        "max_wal_size",
        "commit_delay",
        "max_connections",
    ] {
        let value: String = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SHOW {name}"))).fetch_one(admin).await?;
        lines.push((name.into(), value));
    }
    Ok(lines)
}
