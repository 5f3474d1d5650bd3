//! chipledger-server: the gRPC face of the chip ledger (binary `chipledgerd`).
//!
//! For: authenticating callers and checking their role and properties ([`access`], [`gate`]),
//! dual control by a second authenticated principal ([`approval`]), checking request bytes
//! before decoding ([`protowire`]), the command path (idempotency, load state,
//! decide, append, retry: [`ledger`]), the query and subscription handlers ([`service`]), errors
//! as rich `tonic::Status` ([`status`]), database health ([`health`]), telemetry, configuration,
//! the embedded PostgreSQL and the admin step that prepares a database for the service
//! ([`database`]), signed checkpoints ([`checkpoints`]), the evidence RPCs ([`evidence`]) and the back-office web
//! console, which reads through the same service handlers ([`console`]).
//! Not for: rules (chipledger-rules), SQL (chipledger-store), or the mapping between wire and
//! rules and the table of RPCs and roles (chipledger-proto, shared with the command line).

pub mod access;
pub mod approval;
pub mod checkpoints;
pub mod config;
pub mod console;
pub mod database;
pub mod evidence;
pub mod gate;
pub mod health;
pub mod ledger;
pub mod partitions;
pub mod protowire;
pub mod serve;
pub mod service;
pub mod shards;
pub mod shutdown;
pub mod status;
pub mod telemetry;
