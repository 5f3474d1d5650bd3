//! Where the database is, and how the service reaches it with least privilege.
//!
//! - `DATABASE_URL` given: the service connects with exactly those credentials, which are the
//!   application role's (`chipledger_app`: EXECUTE on the store's functions, nothing else). It
//!   never creates a role, changes a password or migrates: `chipledgerd migrate` does that, as
//!   an explicit admin step with an admin's URL ([`Database::admin_step`]).
//! - No URL: the embedded mode. chipledgerd owns the cluster (started from the installed server
//!   binaries, data kept under the data directory), so it runs the admin step itself as the
//!   cluster's superuser, with an application password made once and kept in the data
//!   directory, and then connects as the application role like any deployment. If the cluster's
//!   postmaster exits while the service runs (killed, crashed), it is started again at once
//!   (`chipledger_postgres::Keeper`): calls answer UNAVAILABLE meanwhile, then the service serves
//!   again with everything committed (crash recovery).

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use chipledger_postgres::{ClusterOptions, Keeper, LocalCluster, PgError, StopMode};
use chipledger_store::{Store, StoreError};
use sqlx::postgres::PgConnectOptions;

use crate::config::{Config, EMBEDDED_APP_PASSWORD};

#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    #[error("cannot prepare the data directory {path}: {source}")]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Postgres(#[from] PgError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("application password file {path}: {source}")]
    Password { path: PathBuf, source: std::io::Error },
    #[error("invalid database URL: {0}")]
    Url(String),
}

/// Subdirectory of the data directory that holds the embedded cluster (PGDATA).
pub const EMBEDDED_PGDATA: &str = "pgdata";
/// Connections of the service's pool.
pub const POOL_CONNECTIONS: u32 = 16;
/// How long a call may wait for a pooled connection before answering UNAVAILABLE (the health
/// probe usually answers sooner: the gate refuses calls while it fails).
pub const ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug)]
pub struct Database {
    /// The service's URL (external), or the cluster superuser's (embedded).
    url: String,
    embedded: Option<Embedded>,
}

#[derive(Debug)]
struct Embedded {
    /// Starts the postmaster again if it exits while we run (killed, crashed, stopped by hand).
    /// Declared first, so dropped first: a cluster dropped without `close` (its cleanup stops
    /// the server) is not started again by its keeper.
    keeper: Keeper,
    cluster: LocalCluster,
    data_dir: PathBuf,
}

impl Database {
    /// Uses the configured URL, or starts (or takes over) the embedded cluster.
    pub async fn open(config: &Config) -> Result<Database, DatabaseError> {
        if let Some(url) = &config.database_url {
            return Ok(Database { url: url.clone(), embedded: None });
        }
        let data_dir_error = |source| DatabaseError::DataDir { path: config.data_dir.clone(), source };
        std::fs::create_dir_all(&config.data_dir).map_err(data_dir_error)?;
        let data_dir = std::fs::canonicalize(&config.data_dir).map_err(data_dir_error)?;
        let options = ClusterOptions {
            data_dir: data_dir.join(EMBEDDED_PGDATA),
            port: config.embedded_postgres.port,
            bin_dir: config.embedded_postgres.bin_dir.clone(),
            fsync: config.embedded_postgres.fsync,
            extra_settings: Vec::new(),
        };
        let cluster = LocalCluster::start(options).await?;
        let keeper = cluster.keep_running();
        // Through the socket only the cluster's owner reaches, never a TCP port another local
        // process could take while the cluster is down.
        Ok(Database { url: cluster.local_url(), embedded: Some(Embedded { keeper, cluster, data_dir }) })
    }

    /// The admin step on this database: roles, migrations, functions, grants (under an
    /// advisory lock), `months_ahead` months of partitions, and the application role's password when one is given. Embedded, it
    /// runs as the cluster's superuser and the password is the one kept in the data directory.
    pub async fn admin_step(&self, app_password_file: Option<&Path>, months_ahead: i32) -> Result<(), DatabaseError> {
        Store::migrate_with_months_ahead(&self.url, months_ahead).await?;
        let password = match (&self.embedded, app_password_file) {
            (_, Some(path)) => Some(read_password(path)?),
            (Some(embedded), None) => Some(embedded_password(&embedded.data_dir)?),
            (None, None) => None,
        };
        if let Some(password) = password {
            Store::set_app_password(&self.url, &password).await?;
        }
        Ok(())
    }

    /// How the service connects: the application role. External: the URL as given (its own
    /// credentials). Embedded: the cluster's URL with chipledger_app and the kept password.
    pub fn app_options(&self) -> Result<PgConnectOptions, DatabaseError> {
        match &self.embedded {
            Some(embedded) => Ok(Store::app_options(&self.url, &embedded_password(&embedded.data_dir)?)?),
            None => self.url.parse().map_err(|error: sqlx::Error| DatabaseError::Url(error.to_string())),
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The embedded cluster's data directory, when there is one.
    pub fn embedded_data_dir(&self) -> Option<PathBuf> {
        self.embedded.as_ref().map(|embedded| embedded.cluster.data_dir().to_path_buf())
    }

    /// The embedded cluster's TCP port on 127.0.0.1, when there is one.
    pub fn embedded_port(&self) -> Option<u16> {
        self.embedded.as_ref().map(|embedded| embedded.cluster.port())
    }

    /// A URL safe to print: the password replaced.
    pub fn display_url(&self) -> String {
        redact_password(&self.url)
    }

    /// Stops the embedded cluster cleanly (checkpoint, then exit), its keeper first; nothing for
    /// an external one.
    pub async fn close(self) -> Result<(), PgError> {
        match self.embedded {
            Some(embedded) => {
                embedded.keeper.stop().await;
                embedded.cluster.stop(StopMode::Fast).await
            }
            None => Ok(()),
        }
    }
}

fn read_password(path: &Path) -> Result<String, DatabaseError> {
    let text = std::fs::read_to_string(path).map_err(|source| DatabaseError::Password { path: path.to_owned(), source })?;
    let password = text.lines().next().unwrap_or_default().trim().to_owned();
    if password.len() < 16 {
        let source = std::io::Error::other("the password must be at least 16 characters");
        return Err(DatabaseError::Password { path: path.to_owned(), source });
    }
    Ok(password)
}

/// The embedded application password: made once (128 random bits, file created new, mode 0600,
/// fsynced) and kept in the data directory, so restarts and a restored cluster reuse it.
fn embedded_password(data_dir: &Path) -> Result<String, DatabaseError> {
    let path = data_dir.join(EMBEDDED_APP_PASSWORD);
    if path.exists() {
        return read_password(&path);
    }
    let error = |source| DatabaseError::Password { path: path.clone(), source };
    let mut bytes = [0u8; 16];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").map_err(error)?, &mut bytes).map_err(error)?;
    let password = hex::encode(bytes);
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path).map_err(error)?;
    file.write_all(format!("{password}\n").as_bytes()).and_then(|()| file.sync_all()).map_err(error)?;
    std::fs::File::open(data_dir).and_then(|dir| dir.sync_all()).map_err(error)?;
    Ok(password)
}

/// `postgres://user:secret@host/db` -> `postgres://user:***@host/db`.
pub fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let Some((credentials, host)) = rest.rsplit_once('@') else { return url.to_string() };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_password;

    #[test]
    fn printed_urls_hide_the_password() {
        assert_eq!(
            redact_password("postgres://postgres:s3cr3t@127.0.0.1:5432/chipledger"),
            "postgres://postgres:***@127.0.0.1:5432/chipledger"
        );
        assert_eq!(redact_password("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_password("not a url"), "not a url");
    }
}
