//! A real PostgreSQL for chipledger: the server's embedded mode and every database test.
//!
//! - [`LocalCluster`]: a cluster started from the installed server binaries (`initdb`, `pg_ctl`),
//!   keeping its data directory between runs. `chipledgerd` uses it when no `DATABASE_URL` is set,
//!   with a [`Keeper`] that starts the postmaster again if it exits while the service runs.
//! - [`TestPostgres`]: a throwaway server for tests, in a container when a Docker engine and the
//!   image are there, else a throwaway [`LocalCluster`]. One helper hides the choice
//!   (`CHIPLEDGER_TEST_PG=container|local|auto`).
//!
//! Not for: schema, migrations or queries (that is `chipledger-store`). There are no mocks here:
//! whatever this crate hands out is a PostgreSQL server.

mod cluster;
mod container;
mod error;
mod keeper;
mod os_user;
mod reaper;
mod sql;
mod test_postgres;

pub use cluster::{ClusterOptions, LocalCluster, StopMode};
pub use error::PgError;
pub use keeper::Keeper;
pub use reaper::Reaper;
pub use test_postgres::{Backend, Standby, TestPostgres, choose_backend};
