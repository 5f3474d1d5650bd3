//! Where the database is: `DATABASE_URL` when given, otherwise an embedded PostgreSQL started
//! from the installed server binaries with its data kept under the data directory between runs.

use std::path::PathBuf;

use chipledger_postgres::{ClusterOptions, LocalCluster, PgError, StopMode};

#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    #[error("cannot prepare the data directory {path}: {source}")]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Postgres(#[from] PgError),
}

use crate::config::Config;

/// Subdirectory of the data directory that holds the embedded cluster (PGDATA).
pub const EMBEDDED_PGDATA: &str = "pgdata";
/// Connections of the service's pool.
pub const POOL_CONNECTIONS: u32 = 16;
/// How long a call may wait for a pooled connection before answering UNAVAILABLE (the health
/// probe usually answers sooner: the gate refuses calls while it fails).
pub const ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug)]
pub struct Database {
    url: String,
    embedded: Option<LocalCluster>,
}

impl Database {
    /// Uses the configured URL, or starts the embedded cluster.
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
        Ok(Database { url: cluster.url(), embedded: Some(cluster) })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The embedded cluster's data directory, when there is one.
    pub fn embedded_data_dir(&self) -> Option<PathBuf> {
        self.embedded.as_ref().map(|cluster| cluster.data_dir().to_path_buf())
    }

    /// A URL safe to print: the password replaced.
    pub fn display_url(&self) -> String {
        redact_password(&self.url)
    }

    /// Stops the embedded cluster cleanly (checkpoint, then exit); nothing for an external one.
    pub async fn close(self) -> Result<(), PgError> {
        match self.embedded {
            Some(cluster) => cluster.stop(StopMode::Fast).await,
            None => Ok(()),
        }
    }
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
