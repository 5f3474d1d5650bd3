use std::path::PathBuf;

/// Everything that can go wrong while providing a PostgreSQL server.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error(
        "PostgreSQL server binaries not found in {bin_dir} (install package postgresql-15 or set CHIPLEDGER_PG_BIN)"
    )]
    BinariesMissing { bin_dir: PathBuf },

    #[error("running as root but there is no `postgres` OS user to run the server as")]
    NoPostgresUser,

    #[error(
        "the server runs as OS user `postgres`, which cannot enter {closed_dir} on the way to the data directory {data_dir}: choose a data directory under directories it may pass through (e.g. mode 0755)"
    )]
    DataDirUnreachable {
        data_dir: PathBuf,
        closed_dir: PathBuf,
    },

    #[error(
        "a PostgreSQL server already runs on {data_dir}; stop it or use another data directory"
    )]
    AlreadyRunning { data_dir: PathBuf },

    #[error("a PostgreSQL server already runs on {data_dir}, owned by another live process ({holder})")]
    OwnedByAnother { data_dir: PathBuf, holder: String },

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },

    #[error("`{command}` failed ({status}):\n{output}")]
    Command {
        command: String,
        status: String,
        output: String,
    },

    #[error("invalid server setting name {name:?} (expected [a-z0-9_.]+)")]
    InvalidSetting { name: String },

    #[error("SQL against the server failed: {0}")]
    Sql(#[from] sqlx::Error),

    #[error(
        "server at port {port} did not accept connections after {attempts} attempts: {last_error}"
    )]
    NotReady {
        port: u16,
        attempts: u32,
        last_error: String,
    },

    #[error("CHIPLEDGER_TEST_PG={value:?} is not one of container, local, auto")]
    InvalidBackendChoice { value: String },

    #[error("container backend unavailable: {reason}")]
    ContainerUnavailable { reason: String },

    #[error("container failed: {0}")]
    Container(#[from] testcontainers_modules::testcontainers::TestcontainersError),

    #[error("docker API call failed: {0}")]
    Docker(#[from] testcontainers_modules::testcontainers::bollard::errors::Error),
}

impl PgError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> PgError {
        PgError::Io {
            context: context.into(),
            source,
        }
    }
}
