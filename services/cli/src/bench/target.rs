//! What the bench talks to: an existing `chipledgerd` (`--server` plus `--database-url` of its
//! PostgreSQL, for the baseline and the settings), or an embedded one: a fresh LocalCluster
//! with fsync on and `chipledgerd`'s own serving code started in this process, exactly as
//! its `main` wires it (migrations, application role, pool of 16, Ledger, tonic server).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use chipledger_postgres::{ClusterOptions, LocalCluster, StopMode};
use chipledger_server::config::{AuthFile, Config, FileConfig, Flags};
use chipledger_server::ledger::Ledger;
use chipledger_server::serve;
use chipledger_server::shutdown::Drain;
use chipledger_store::Store;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Connections of the store pool (as `chipledgerd`'s main) and of the baseline pool.
pub const POOL_CONNECTIONS: u32 = 16;

struct Embedded {
    cluster: LocalCluster,
    dir: PathBuf,
    stop: oneshot::Sender<()>,
    server: JoinHandle<anyhow::Result<()>>,
    store: Store,
}

pub struct Target {
    pub grpc_url: String,
    /// Superuser (or owner) connection: baseline tables, settings, rebuild.
    pub admin: PgPool,
    pub admin_url: String,
    pub postmaster_pid: Option<u32>,
    /// The server runs inside this process (its CPU is in the process figure).
    pub in_process: bool,
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
            in_process: false,
            embedded: None,
        })
    }

    /// A fresh cluster and an in-process chipledgerd serving `property`. `profile_sql` loads
    /// pg_stat_statements (nested statements too), so each run can say which statements took
    /// PostgreSQL's time.
    pub async fn embedded(profile_sql: bool, property: &str) -> anyhow::Result<Target> {
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
        let store = Store::connect_bounded(
            Store::app_options(&url, &app_password)?,
            POOL_CONNECTIONS,
            chipledger_server::database::ACQUIRE_TIMEOUT,
        )
        .await?;

        let flags = Flags {
            listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            database_url: Some(url.clone()),
            // The approval signing key lives with the cluster and goes with it.
            data_dir: Some(dir.clone()),
            property_id: Some(property.to_owned()),
            ..Flags::default()
        };
        // Plain loopback with anonymous admin: the gate still authenticates and authorises
        // every call (the role table lookup runs), without a token to manage; the development
        // approvers sign the fills and large buy-ins (dual control, R-CHIP-3, R-CHIP-2).
        let file = FileConfig {
            auth: AuthFile { dev_anonymous_role: Some("admin".into()), ..AuthFile::default() },
            // The measured server serves gRPC only.
            console: chipledger_server::config::ConsoleFile { enabled: Some(false), ..Default::default() },
            ..FileConfig::default()
        };
        let config = Config::resolve(flags, file)?;
        let drain = Drain::new();
        let ledger = Arc::new(Ledger::for_config(store.clone(), &config, drain.clone())?);
        let listener = serve::bind(config.listen).await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            serve::serve(&config, listener, ledger, drain, async move {
                let _ = stopped.await;
            })
            .await
            .map_err(anyhow::Error::from)
        });
        let admin = admin_pool(&url).await?;
        let postmaster_pid = postmaster_pid(&admin).await;
        Ok(Target {
            grpc_url: format!("http://{addr}"),
            admin,
            admin_url: url,
            postmaster_pid,
            in_process: true,
            embedded: Some(Embedded { cluster, dir, stop, server, store }),
        })
    }

    /// Stops the embedded server and cluster and removes their files.
    pub async fn close(self) -> anyhow::Result<()> {
        self.admin.close().await;
        if let Some(embedded) = self.embedded {
            let _ = embedded.stop.send(());
            embedded.server.await.context("server task")??;
            embedded.store.pool().close().await;
            embedded.cluster.stop(StopMode::Fast).await?;
            std::fs::remove_dir_all(&embedded.dir).with_context(|| format!("removing {}", embedded.dir.display()))?;
        }
        Ok(())
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
