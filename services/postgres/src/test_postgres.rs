//! One helper for every database test: a real PostgreSQL, in a container when a Docker engine
//! and the image are available, else a throwaway local cluster.
//!
//! - `CHIPLEDGER_TEST_PG=container|local|auto` (default `auto`: container if Docker is reachable
//!   and the image is present locally, else local). `container` never falls back: it fails.
//! - `CHIPLEDGER_PG_IMAGE` (default `chipledger/postgres:15`, built by
//!   `deploy/postgres-image/build.sh`; with a registry, `postgres:15` works too).
//!
//! Starting a server is slow on a small machine, so tests share one per process
//! ([`TestPostgres::shared`]) and each takes its own database ([`TestPostgres::fresh_database`]).
//! A test that crashes the server starts its own ([`TestPostgres::start`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::OnceCell;

use crate::cluster::{ClusterOptions, LocalCluster, StopMode};
use crate::container::{self, ContainerServer};
use crate::{PgError, os_user, sql};

const BACKEND_ENV: &str = "CHIPLEDGER_TEST_PG";
const IMAGE_ENV: &str = "CHIPLEDGER_PG_IMAGE";
const DEFAULT_IMAGE: &str = "chipledger/postgres:15";
/// Room for many tests sharing one server, each with a small pool.
const MAX_CONNECTIONS: &str = "200";
/// PostgreSQL truncates identifiers at 63 bytes; prefix + `_<pid>_<n>` stays below.
const DATABASE_PREFIX_MAX_CHARS: usize = 32;

static SHARED: OnceCell<TestPostgres> = OnceCell::const_new();

/// Which kind of server a [`TestPostgres`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// A container from this image.
    Container { image: String },
    /// A throwaway cluster from the installed server binaries.
    Local,
}

/// A PostgreSQL server for tests. Dropping it removes it (container removed, or cluster stopped
/// and its directory deleted); so does the end of the process, however it ends.
#[derive(Debug)]
pub struct TestPostgres {
    server: Server,
    databases_created: AtomicU64,
}

#[derive(Debug)]
enum Server {
    Container(Box<ContainerServer>),
    Local(LocalCluster),
}

impl TestPostgres {
    /// Start a server of its own (see the module docs for how the backend is chosen).
    pub async fn start() -> Result<TestPostgres, PgError> {
        TestPostgres::start_backend(choose_backend().await?).await
    }

    /// Start a server of its own on this backend, whatever the environment says.
    pub async fn start_backend(backend: Backend) -> Result<TestPostgres, PgError> {
        let server = match backend {
            Backend::Container { image } => {
                container::probe(&image).await?;
                Server::Container(Box::new(ContainerServer::start(&image).await?))
            }
            Backend::Local => Server::Local(start_local().await?),
        };
        Ok(TestPostgres {
            server,
            databases_created: AtomicU64::new(0),
        })
    }

    /// The server shared by every test of this process, started by the first caller.
    /// Take a database of your own with [`TestPostgres::fresh_database`].
    pub async fn shared() -> Result<&'static TestPostgres, PgError> {
        SHARED.get_or_try_init(TestPostgres::start).await
    }

    /// Superuser URL to database `chipledger`.
    pub fn url(&self) -> String {
        self.url_to(sql::DATABASE)
    }

    pub fn backend(&self) -> Backend {
        match &self.server {
            Server::Container(server) => Backend::Container {
                image: server.image().to_owned(),
            },
            Server::Local(_) => Backend::Local,
        }
    }

    /// Crash the server (no shutdown: SIGKILL of the container, or `pg_ctl stop -m immediate`)
    /// and start it again on the same data and the same URL; returns once it accepts connections.
    pub async fn restart_immediate(&mut self) -> Result<(), PgError> {
        match &mut self.server {
            Server::Container(server) => server.restart_immediate().await,
            Server::Local(cluster) => cluster.restart(StopMode::Immediate).await,
        }
    }

    /// Create a new, empty database named `<prefix>_<pid>_<n>` and return its superuser URL, so
    /// tests sharing one server never see each other's data.
    pub async fn fresh_database(&self, name_prefix: &str) -> Result<String, PgError> {
        let number = self.databases_created.fetch_add(1, Ordering::Relaxed);
        let prefix: String = name_prefix
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .take(DATABASE_PREFIX_MAX_CHARS)
            .collect();
        let name = format!("{prefix}_{}_{number}", std::process::id());
        sql::create_database(&self.url_to("postgres"), &name).await?;
        Ok(self.url_to(&name))
    }

    fn url_to(&self, database: &str) -> String {
        match &self.server {
            Server::Container(server) => server.url_to(database),
            Server::Local(cluster) => cluster.url_to(database),
        }
    }
}

/// The backend `CHIPLEDGER_TEST_PG` asks for: for `auto`, a container if Docker is reachable and
/// the image is present, else local; for `container`, an error unless both hold.
pub async fn choose_backend() -> Result<Backend, PgError> {
    let choice = std::env::var(BACKEND_ENV).unwrap_or_else(|_| "auto".to_owned());
    let image = std::env::var(IMAGE_ENV).unwrap_or_else(|_| DEFAULT_IMAGE.to_owned());
    match choice.as_str() {
        "local" => Ok(Backend::Local),
        "container" => {
            container::probe(&image).await?;
            Ok(Backend::Container { image })
        }
        "auto" => match container::probe(&image).await {
            Ok(()) => Ok(Backend::Container { image }),
            Err(reason) => {
                eprintln!("chipledger-postgres: using a local cluster: {reason}");
                Ok(Backend::Local)
            }
        },
        _ => Err(PgError::InvalidBackendChoice { value: choice }),
    }
}

/// A hot standby streaming from a [`TestPostgres`] primary: read-only, replaying what the
/// primary commits. Dropping it removes it.
#[derive(Debug)]
pub struct Standby {
    cluster: LocalCluster,
}

impl Standby {
    /// Superuser URL to `database` on the standby (the primary's databases are all there).
    pub fn url_to(&self, database: &str) -> String {
        self.cluster.url_to(database)
    }

    /// Stop replaying WAL (it keeps arriving): the standby falls behind on purpose.
    pub async fn pause_replay(&self) -> Result<(), PgError> {
        sql::execute(&self.url_to("postgres"), "SELECT pg_wal_replay_pause()").await
    }

    /// Replay again from where it paused.
    pub async fn resume_replay(&self) -> Result<(), PgError> {
        sql::execute(&self.url_to("postgres"), "SELECT pg_wal_replay_resume()").await
    }
}

impl TestPostgres {
    /// A primary of its own and a hot standby of it. Both are throwaway clusters from the
    /// installed server binaries whatever `CHIPLEDGER_TEST_PG` says: a standby is a second
    /// server fed by the first over a replication connection, which two local clusters give
    /// without a container network (CI installs the binaries).
    pub async fn start_with_standby() -> Result<(TestPostgres, Standby), PgError> {
        let primary = start_local().await?;
        let standby = in_throwaway_root(|root| async move {
            // A hot standby needs at least the primary's connection slots.
            primary.start_standby_throwaway(local_options(&root), root).await.map(|cluster| (primary, cluster))
        });
        let (primary, standby) = standby.await?;
        let primary = TestPostgres { server: Server::Local(primary), databases_created: AtomicU64::new(0) };
        Ok((primary, Standby { cluster: standby }))
    }
}

/// `start` given a new temporary directory owned by the server's user, which is removed if
/// `start` fails (else the cluster started there owns it).
async fn in_throwaway_root<T, F>(start: impl FnOnce(PathBuf) -> F) -> Result<T, PgError>
where
    F: std::future::Future<Output = Result<T, PgError>>,
{
    let root: PathBuf = tempfile::Builder::new()
        .prefix("chipledger-test-pg-")
        .tempdir()
        .map_err(|e| PgError::io("create a temporary directory", e))?
        .keep();
    let started = async {
        os_user::hand_over(&root, os_user::server_owner()?)?;
        start(root.clone()).await
    }
    .await;
    if started.is_err() {
        let _ = std::fs::remove_dir_all(&root);
    }
    started
}

/// A cluster in a new temporary directory owned by the server's user, fsync off.
async fn start_local() -> Result<LocalCluster, PgError> {
    in_throwaway_root(|root| async move { LocalCluster::start_throwaway(local_options(&root), root).await }).await
}

/// A test cluster's settings: fsync off, room for many connections.
fn local_options(root: &std::path::Path) -> ClusterOptions {
    ClusterOptions {
        fsync: false,
        extra_settings: vec![("max_connections".to_owned(), MAX_CONNECTIONS.to_owned())],
        ..ClusterOptions::new(root.join("data"))
    }
}
