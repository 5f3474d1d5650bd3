//! chipledger-store: the PostgreSQL event store of chipledger.
//!
//! What it is for: an append-only, hash-chained log of chip movements per property (tenant),
//! with double-entry postings, idempotent commands, inline projections that enforce rules in the
//! append transaction, async report projections, and subscriptions. What it is not for: deciding
//! anything (that is `chipledger-rules`) or speaking gRPC (that is `chipledger-server`).
//!
//! ```text
//! Store::migrate(admin_url)                 the admin step (schema.rs): roles, migrations/, sql/fn_*.sql, grants
//! Store::migrate_to(admin_url, version)     only the migrations up to a version (upgrade tests)
//! Store::set_app_password(admin_url, pw)    give chipledger_app LOGIN; Store::app_options(url, pw)
//! Store::connect(url) / connect_with(opts)  production connects as chipledger_app; check_schema()
//! store.append(&AppendRequest)              -> AppendOutcome | StoreError (group commit)
//! store.begin() -> StoreTx: .append(), .connection(), .commit(), .rollback()
//! store.read_stream / read_all / events_by_filter
//! store.balance(property, account, AsOf) / balances_sum(property, AsOf)
//! store.verify_chain(property) -> ChainReport (from the archive anchor, if any); chain_digest / verify_digest
//! store.ensure_partitions(months_ahead)  partition::ArchiveAdmin: list / archive / verify / drop_archived
//! store.verify_log(property, &[Checkpoint], &[key]) -> LogReport   (chains, commands, refusals, checkpoints, archive anchor)
//! store.verify_projections(property, &projection) -> Vec<ProjectionDifference>
//! store.record_checkpoint / checkpoints         signed checkpoints (checkpoint.rs)
//! store.subscribe(property, after_position) -> Subscription (Stream of RecordedEvent); lag()
//! store.record_refusal / refusal / rejections     (R-AUDIT-3, chained, remembered per command id)
//! store.departure / player_session / daily_cash / credit_line / seat_stacks / tray_inventory
//! report::TableDayReport::catch_up / rebuild     async projection with checkpoint
//! ```
//!
//! Invariants PostgreSQL itself holds (migrations, sql/): events, postings (every partition),
//! commands, rejections and checkpoints refuse UPDATE, DELETE and TRUNCATE (trigger), and chipledger_app
//! has no privilege on any table: it can only EXECUTE the SECURITY DEFINER functions of
//! `sql/`, owned by chipledger_owner (nobody logs in as it); positions are dense per property
//! and commit in order; every event's postings sum to zero; accounts of R-UNIT-4 never go
//! negative (checked with a typed error, and a CHECK constraint as the backstop).
//!
//! Global order: a short per-property commit lock. `chipledger_append` takes the row lock of the
//! property's `property_heads` row once idempotency, stream locks and balance checks refused no
//! member, compares it with the head the store hashed the events from (append.rs), numbers the
//! events after the projections, and COMMIT releases it. Position n+1
//! is therefore assigned only after the holder of n committed or rolled back (then n is reused):
//! positions are dense and become visible strictly in order, so a reader following positions
//! never skips a late commit. The price is one commit at a time per property (the WAL flush is
//! inside the lock); group commit (group.rs) lets the appends that queue up meanwhile share the
//! next commit, batching a hand per append amortises it further, and properties never contend.
//! The xid8 + `pg_snapshot_xmin` technique keeps writers parallel but orders events only after
//! commit, so it cannot chain hashes at insert time; it was not chosen.
//!
//! Departures (R-REBUY-1, migration 0003): the projection holds the rules' own list (the last
//! 32 departures of a patron, corrections remove entries), and `player_departures` is a view
//! of the most recent one per game, so a departure taken back gives way to the previous one.
//! A session's seat time is the seating event's recorded_at unless the op gives one.
//!
//! Idempotency: each append may carry several commands (a whole hand). All known with equal
//! request hashes from one append -> the original outcome is returned (`replayed`, identical
//! `outcome_json` and `reply` bytes); any known id with another hash, or mixed with new ids ->
//! [`StoreError::IdempotencyConflict`]. A refused command id is taken too
//! ([`Store::record_refusal`]): an append carrying it with the same request hash answers
//! [`StoreError::RefusedBefore`], and the refusal answers for good.

//! Partitioning of `events` and `postings` by time (migration 0008, partition.rs; issue 11).
//! 1. Keys. A partitioned table's unique keys must contain the partition key `recorded_at`:
//!    events have PRIMARY KEY (property, position, recorded_at) and
//!    UNIQUE (property, stream, stream_version, recorded_at), postings PRIMARY KEY
//!    (property, position, posting_index, recorded_at). Cross-partition uniqueness of
//!    (property, position) and (property, stream, stream_version) comes from the append itself
//!    (head lock, stream row locks, expected versions; recorded_at is monotone in position per
//!    property: `greatest(clock_timestamp(), head.last_recorded_at)`), and `verify_chain` detects
//!    any break. `UNIQUE (event_id)` lives in `event_ids (event_id PRIMARY KEY, property,
//!    position)`, written in the append's statement, which serves lookups by id (the
//!    `player_seatings` view and `chipledger_event_location` join through it).
//! 2. Cut-over without copying the events: the old table, minus the keys a partitioned parent
//!    cannot have, gets a CHECK (recorded_at < cut-over) and is attached as the first partition
//!    (`events_before_YYYY_MM`, from MINVALUE; the CHECK lets ATTACH skip its scan); the cut-over
//!    is the first day of the month after the latest recorded_at (or now). One transaction.
//!    Deviation from the first plan: no CONCURRENTLY index builds in a migration of their own,
//!    because postings.recorded_at has to be filled from the events (a postings rewrite under the
//!    lock anyway) and sqlx runs a migration's statements as one implicit transaction; on a large
//!    database, run the migration in a quiet window.
//! 3. Append-only per partition: the row triggers of the parents are cloned onto every
//!    partition by PostgreSQL; TRUNCATE triggers are per table, created on every partition by
//!    `chipledger_ensure_partitions`; the application role owns nothing, so it cannot DETACH or
//!    DROP a partition (tests: partitions.rs). A detached partition loses the cloned triggers and
//!    gets its own until it is dropped.
//! 4. Partitions ahead: `chipledger_ensure_partitions(months_ahead)` (default 3, at most 120),
//!    run by `Store::migrate` and by the server at start and daily; the application role may
//!    execute it (it only adds the next months). No DEFAULT partition, never DDL in the append
//!    (it holds the head lock): the append reads the end of the last partition
//!    (`log_partitions`) before the head lock and refuses a later recorded_at with CL007 ->
//!    [`StoreError::NoPartition`], nothing written; PostgreSQL's own "no partition" maps to the
//!    same error as the backstop.
//! 5. Archive (an operator's step, [`partition::ArchiveAdmin`]): the oldest attached partition,
//!    once past the retention, exported with a signed digest per property, recorded with the
//!    anchor each property's live chain now starts from and the balances that left, then
//!    detached; dropped only when its archive verifies. `verify_chain` starts at the anchor.
//!    Not done: stream snapshots, so a partition holding events of a stream that goes on after
//!    it is refused for archive (the service rebuilds streams from their first event).
//! 6. Reads by position touch one index per partition (about 12 a year); catch-up and
//!    as-of-position reads can add a recorded_at bound from the head's history to prune.

mod append;
pub mod chain;
pub mod checkpoint;
pub mod domain;
mod error;
mod event;
mod group;
pub mod partition;
pub mod projection;
mod read;
pub mod rejection;
pub mod report;
pub mod schema;
pub mod subscription;
mod verify;

use std::str::FromStr;
use std::sync::Arc;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres, Transaction};
use time::OffsetDateTime;

pub use chain::{CHAIN_FORMAT, ChainDigest, ChainProblem, ChainReport, GENESIS_HASH, jcs};
pub use checkpoint::{Checkpoint, CheckpointKey, SignedCheckpoint};
pub use error::StoreError;
pub use event::*;
pub use domain::RulesProjection;
pub use projection::{CreditLine, DailyCash, Departure, InlineProjection, PlayerSession, ProjectionOp};
pub use read::{AsOf, EventFilter};
pub use rejection::{RecordedCommand, RecordedRejection, RefusalOutcome, RejectionRecord};
pub use subscription::{Lag, Subscription};
pub use verify::{CheckpointVerdict, LogReport, ProjectionDifference, RefusalProblem, trust_archives_signed_by};

/// The application role: EXECUTE on the functions of `sql/` ([`schema::FUNCTIONS`]), nothing else.
pub const APP_ROLE: &str = "chipledger_app";
/// The role that owns every table, view and function; nobody logs in as it.
pub const OWNER_ROLE: &str = "chipledger_owner";
/// NOTIFY channel woken by every append; the payload is the property id.
pub const NOTIFY_CHANNEL: &str = "chipledger_events";

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// Handle to the event store (cheap to clone).
#[derive(Clone)]
pub struct Store {
    pool: PgPool,
    projection: Option<Arc<dyn InlineProjection>>,
    /// Appends of this handle (and its clones) waiting to share a commit (group.rs).
    group: Arc<group::GroupCommit>,
}

/// Every connection of the store resolves names in `pg_catalog`, then `public`, whatever search
/// path a role or database setting gives (the evidence pass: `ALTER ROLE chipledger_app SET
/// search_path = evil, pg_catalog, public` put a schema of look-alike functions and a filtering
/// `pg_proc` view in front of the store's, and verify saw nothing). Settings a client sends
/// when it connects take precedence over the role's and the database's, so the settings the
/// guarantees rest on are sent too: a commit is acknowledged once it is durable (and, under a
/// synchronous standby, once the standby has it: the insider pass set `synchronous_commit = off`
/// on the application role, which it may do to itself, and every append after a restart was
/// acknowledged before it was on disk), transactions are read committed and writable, and
/// values are read in the forms the store parses. A statement waits at most
/// [`LOCK_TIMEOUT`] for a lock (the operations pass: a session holding the property's head row
/// made every append wait 75 s, the callers told nothing, a deadline's command recorded after
/// its caller gave up): it fails, nothing of it is written, and the caller is told to resend.
/// `verify` names any role or database setting that applies to the application role all the
/// same ([`PINNED_SETTINGS`] have no effect).
pub fn pinned(options: PgConnectOptions) -> PgConnectOptions {
    options.options(PINNED_SETTINGS.iter().copied())
}

/// The settings every store connection sends when it connects ([`pinned`]).
pub const PINNED_SETTINGS: &[(&str, &str)] = &[
    ("search_path", "pg_catalog,public"),
    ("synchronous_commit", "on"),
    ("default_transaction_isolation", "read committed"),
    ("default_transaction_read_only", "off"),
    ("IntervalStyle", "postgres"),
    ("bytea_output", "hex"),
    ("lock_timeout", LOCK_TIMEOUT),
];

/// How long a store statement waits for a lock another session holds ([`pinned`]): far above
/// the head lock's hold by a group commit (milliseconds), far below a caller's patience.
pub const LOCK_TIMEOUT: &str = "10s";

impl Store {
    /// Connect with a URL (production: the chipledger_app role).
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        Self::connect_with(PgConnectOptions::from_str(url)?, 16).await
    }

    /// Connect with options, a bounded pool size, and a bound on how long a call waits for a
    /// pooled connection (with the database down, sqlx's default makes every call wait 30 s).
    pub async fn connect_bounded(
        options: PgConnectOptions,
        max_connections: u32,
        acquire_timeout: std::time::Duration,
    ) -> Result<Store, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(acquire_timeout)
            .connect_with(pinned(options))
            .await?;
        Ok(Store { group: group::GroupCommit::new(pool.clone()), pool, projection: None })
    }

    /// Connect with options and a bounded pool size.
    pub async fn connect_with(options: PgConnectOptions, max_connections: u32) -> Result<Store, StoreError> {
        let pool = PgPoolOptions::new().max_connections(max_connections).connect_with(pinned(options)).await?;
        Ok(Store { group: group::GroupCommit::new(pool.clone()), pool, projection: None })
    }

    /// As [`Store::connect_bounded`], connecting on first use (a hot standby that may be away:
    /// its callers fall back to the primary meanwhile).
    pub fn connect_lazy(
        options: PgConnectOptions,
        max_connections: u32,
        acquire_timeout: std::time::Duration,
    ) -> Store {
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(acquire_timeout)
            .connect_lazy_with(pinned(options));
        Store { group: group::GroupCommit::new(pool.clone()), pool, projection: None }
    }

    /// Plug in the domain projection (the mapping of `chipledger_rules::Event`s).
    pub fn with_projection(mut self, projection: Arc<dyn InlineProjection>) -> Store {
        self.projection = Some(projection);
        self
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The admin step (schema.rs) on an admin URL: roles, migrations, function files, grants,
    /// under an advisory lock. Idempotent; what `chipledgerd migrate` runs.
    pub async fn migrate(admin_url: &str) -> Result<(), StoreError> {
        schema::migrate(admin_url, None, partition::DEFAULT_MONTHS_AHEAD).await
    }

    /// The admin step, keeping `months_ahead` months of partitions ready after the current one
    /// (configuration `[partitions] months_ahead`).
    pub async fn migrate_with_months_ahead(admin_url: &str, months_ahead: i32) -> Result<(), StoreError> {
        schema::migrate(admin_url, None, months_ahead).await
    }

    /// Make the partitions of the log up to `months_ahead` months after the current one (and
    /// after the latest recorded time); how many months were created. The service runs it at
    /// start and daily (the application role may: it only ever adds the next months).
    pub async fn ensure_partitions(&self, months_ahead: i32) -> Result<i32, StoreError> {
        let mut conn = self.pool.acquire().await?;
        partition::ensure_partitions(&mut conn, months_ahead).await
    }

    /// Run the migrations up to and including `version` only, without the function files
    /// (upgrade tests: build a database as an older release left it, then [`Store::migrate`]).
    pub async fn migrate_to(admin_url: &str, version: i64) -> Result<(), StoreError> {
        schema::migrate(admin_url, Some(version), partition::DEFAULT_MONTHS_AHEAD).await
    }

    /// Let the application role log in with this password (an admin operation; the service
    /// never runs it). Nothing is changed when the role already logs in with it.
    pub async fn set_app_password(admin_url: &str, password: &str) -> Result<(), StoreError> {
        schema::set_app_password(admin_url, password).await
    }

    /// Whether the database carries the functions this build calls (installed by
    /// [`Store::migrate`] of the same release); [`StoreError::SchemaMismatch`] otherwise.
    pub async fn check_schema(&self) -> Result<(), StoreError> {
        schema::check_schema(&self.pool).await
    }

    /// Options for connecting as the application role to the database of `admin_url`.
    pub fn app_options(admin_url: &str, password: &str) -> Result<PgConnectOptions, StoreError> {
        Ok(PgConnectOptions::from_str(admin_url)?.username(APP_ROLE).password(password))
    }

    /// Append atomically. Appends of one property that arrive while another of its commits is
    /// in flight share the next transaction (group commit, group.rs): each gets exactly the
    /// answer it would get alone, and one WAL flush serves them all. Retries, boundedly, only
    /// when a concurrent transaction created the same stream, account or command first; a
    /// replay then answers.
    pub async fn append(&self, request: &AppendRequest) -> Result<AppendOutcome, StoreError> {
        let encoded = append::encode(request, self.projection.as_deref())?;
        self.group.append(encoded).await
    }

    /// A transaction for appends together with other statements of the caller.
    pub async fn begin(&self) -> Result<StoreTx, StoreError> {
        Ok(StoreTx { tx: self.pool.begin().await?, projection: self.projection.clone() })
    }

    pub async fn read_all(&self, property: &str, after_position: i64, limit: i64) -> Result<Vec<RecordedEvent>, StoreError> {
        read::read_all(&self.pool, property, after_position, limit).await
    }

    /// The events of several streams in one call, one list per stream (see `read::read_streams`).
    pub async fn read_streams(
        &self,
        property: &str,
        streams: &[String],
        after_versions: &[i64],
        limit: i64,
    ) -> Result<Vec<Vec<RecordedEvent>>, StoreError> {
        read::read_streams(&self.pool, property, streams, after_versions, limit).await
    }

    pub async fn read_stream(
        &self,
        property: &str,
        stream: &str,
        after_version: i64,
        limit: i64,
    ) -> Result<Vec<RecordedEvent>, StoreError> {
        read::read_stream(&self.pool, property, stream, after_version, limit).await
    }

    pub async fn events_by_filter(&self, property: &str, filter: &EventFilter) -> Result<Vec<RecordedEvent>, StoreError> {
        read::events_by_filter(&self.pool, property, filter).await
    }

    /// Current version of a stream (0 if it has no events).
    pub async fn stream_version(&self, property: &str, stream: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT chipledger_stream_version($1, $2)")
            .bind(property)
            .bind(stream)
            .fetch_one(&self.pool)
            .await?)
    }

    /// Balance of an account as of a point of the log, from the postings (one query).
    pub async fn balance(&self, property: &str, account: &str, as_of: AsOf) -> Result<i64, StoreError> {
        self.balance_with_position(property, account, as_of).await.map(|(balance, _)| balance)
    }

    /// The balance and the global position it is read at (the head, or the last event at or
    /// before a time, resolved once so that the two agree).
    pub async fn balance_with_position(&self, property: &str, account: &str, as_of: AsOf) -> Result<(i64, i64), StoreError> {
        let mut conn = self.pool.acquire().await?;
        verify::check_archive_for_reads(&mut conn, property).await?;
        let position = read::resolve_position(&mut *conn, property, as_of).await?;
        Ok((read::balance_at(&mut *conn, property, account, position).await?, position))
    }

    /// The last position of the log `as_of` includes: the head, a position at most the head, or
    /// the last event recorded at or before a time.
    pub async fn position_of(&self, property: &str, as_of: AsOf) -> Result<i64, StoreError> {
        let mut conn = self.pool.acquire().await?;
        verify::check_archive_for_reads(&mut conn, property).await?;
        read::resolve_position(&mut *conn, property, as_of).await
    }

    /// Sum over all accounts as of a point of the log; zero whenever the ledger is sound.
    pub async fn balances_sum(&self, property: &str, as_of: AsOf) -> Result<i128, StoreError> {
        let mut conn = self.pool.acquire().await?;
        verify::check_archive_for_reads(&mut conn, property).await?;
        let position = read::resolve_position(&mut *conn, property, as_of).await?;
        read::balances_sum_at(&mut *conn, property, position).await
    }

    /// Current balance from the inline projection (what the append checked against).
    pub async fn projected_balance(&self, property: &str, account: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT chipledger_projected_balance($1, $2)")
            .bind(property)
            .bind(account)
            .fetch_one(&self.pool)
            .await?)
    }

    /// The database's clock, ms since the epoch (replicas time commands by it).
    /// The database's clock against `host_now_ms`: (host before the query, database, host after),
    /// timed around the query alone, on a connection already acquired (the crash pass: a pool
    /// wait of 2.3 s after an outage had been counted as a 1.2 s clock offset).
    pub async fn database_clock_ms(&self, host_now_ms: impl Fn() -> i64) -> Result<(i64, i64, i64), StoreError> {
        let mut connection = self.pool.acquire().await?;
        let before = host_now_ms();
        let database = sqlx::query_scalar("SELECT (extract(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint").fetch_one(&mut *connection).await?;
        Ok((before, database, host_now_ms()))
    }

    /// The head of the property's chain: save it outside the database to detect rewrites.
    pub async fn chain_digest(&self, property: &str) -> Result<ChainDigest, StoreError> {
        verify::chain_digest(&self.pool, property).await
    }

    /// Both heads of the property: (position, hash) of the event chain and (sequence, hash) of
    /// the refusal chain, read together (what a checkpoint signs).
    pub async fn heads(&self, property: &str) -> Result<((i64, [u8; 32]), (i64, [u8; 32])), StoreError> {
        let heads = verify::heads(&self.pool, property).await?;
        Ok((heads.events, heads.refusals))
    }

    /// Every property with a head: (property, last position, last refusal sequence).
    pub async fn properties(&self) -> Result<Vec<(String, i64, i64)>, StoreError> {
        Ok(sqlx::query_as("SELECT * FROM chipledger_properties()").fetch_all(&self.pool).await?)
    }

    /// Keep a signed checkpoint in the database too (the copy the fetch RPC serves; the
    /// evidence is the copies kept outside). True if it was not there yet.
    pub async fn record_checkpoint(&self, signed: &SignedCheckpoint) -> Result<bool, StoreError> {
        let checkpoint = &signed.checkpoint;
        let signed_at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(checkpoint.signed_at_ms) * 1_000_000)
            .map_err(|e| StoreError::InvalidRequest(format!("checkpoint time: {e}")))?;
        Ok(sqlx::query_scalar("SELECT chipledger_record_checkpoint($1, $2, $3, $4, $5, $6)")
            .bind(&checkpoint.property)
            .bind(checkpoint.position)
            .bind(checkpoint.refusal_seq)
            .bind(&checkpoint.key_id)
            .bind(signed_at)
            .bind(signed.to_document())
            .fetch_one(&self.pool)
            .await?)
    }

    /// The last `limit` checkpoints kept in the database for the property, latest first
    /// (unchecked: the caller verifies each signature).
    pub async fn latest_checkpoints(&self, property: &str, limit: i64) -> Result<Vec<SignedCheckpoint>, StoreError> {
        let documents: Vec<String> = sqlx::query_scalar("SELECT * FROM chipledger_latest_checkpoints($1, $2)")
            .bind(property)
            .bind(read::clamp_page(limit))
            .fetch_all(&self.pool)
            .await?;
        // A document no reader can read is passed over, not a failure of the whole list (the
        // wave-2 pass: one row kept by the application role stopped every later signing).
        Ok(documents.iter().filter_map(|document| SignedCheckpoint::from_document(document).ok()).collect())
    }

    /// Which of the entries a process wrote (events by position, refusals by sequence, each
    /// with its hash) the log does not hold as written: taken out, or another entry in its
    /// place; `None` if it holds every one. Two reads, whatever the number of entries.
    pub async fn written_missing(
        &self,
        property: &str,
        events: &[(i64, [u8; 32])],
        refusals: &[(i64, [u8; 32])],
    ) -> Result<Option<String>, StoreError> {
        for (what, written, function) in [
            ("event at position", events, "SELECT * FROM chipledger_hashes_at($1, $2)"),
            ("refusal", refusals, "SELECT * FROM chipledger_refusal_hashes_at($1, $2)"),
        ] {
            if written.is_empty() {
                continue;
            }
            let at: Vec<i64> = written.iter().map(|(at, _)| *at).collect();
            let stored: std::collections::HashMap<i64, Vec<u8>> =
                sqlx::query_as::<_, (i64, Vec<u8>)>(function).bind(property).bind(&at).fetch_all(&self.pool).await?.into_iter().collect();
            for (at, hash) in written {
                match stored.get(at) {
                    Some(stored) if stored.as_slice() == hash => {}
                    Some(stored) => {
                        return Ok(Some(format!("the {what} {at} it wrote has hash {}, the log {}", hex::encode(hash), hex::encode(stored))));
                    }
                    None => return Ok(Some(format!("the {what} {at} it wrote is not in the log"))),
                }
            }
        }
        Ok(None)
    }

    /// Why the log as stored now does not agree with `checkpoint` (its chains shorter than the
    /// checkpoint's, or another hash at its position or refusal sequence); `None` if it agrees.
    /// A position at or before the archive anchor is compared with the anchor's hash when it is
    /// the anchor's, and taken as agreeing before it (the archive is checked on its own).
    pub async fn checkpoint_disagreement(&self, checkpoint: &checkpoint::Checkpoint) -> Result<Option<String>, StoreError> {
        let heads = verify::heads(&self.pool, &checkpoint.property).await?;
        if heads.events.0 < checkpoint.position || heads.refusals.0 < checkpoint.refusal_seq {
            return Ok(Some(format!(
                "the log ends at position {} and refusal {}, before the checkpoint's {} and {}",
                heads.events.0, heads.refusals.0, checkpoint.position, checkpoint.refusal_seq
            )));
        }
        let anchor = verify::archive_anchor(&self.pool, &checkpoint.property).await?;
        // An anchor stands for the archived events only when its archive is proven (the wave-2
        // pass: an unsigned anchor row put before a signed position had turned the comparison off).
        if anchor.as_ref().is_some_and(|anchor| checkpoint.position <= anchor.position) {
            let mut connection = self.pool.acquire().await?;
            if let Err(StoreError::ArchiveUnproven(problem)) = verify::check_archive_for_reads(&mut connection, &checkpoint.property).await {
                return Ok(Some(format!("the archive anchor the checkpoint's position falls behind is not proven: {problem}")));
            }
        }
        let event_hash: Option<Vec<u8>> = match &anchor {
            _ if checkpoint.position == 0 => Some(chain::GENESIS_HASH.to_vec()),
            Some(anchor) if checkpoint.position == anchor.position => Some(anchor.hash.to_vec()),
            Some(anchor) if checkpoint.position < anchor.position => Some(checkpoint.hash.to_vec()),
            _ => sqlx::query_as::<_, (i64, Vec<u8>)>("SELECT * FROM chipledger_hashes_at($1, $2)")
                .bind(&checkpoint.property)
                .bind(vec![checkpoint.position])
                .fetch_optional(&self.pool)
                .await?
                .map(|(_, hash)| hash),
        };
        let refusal_hash: Option<Vec<u8>> = if checkpoint.refusal_seq == 0 {
            Some(chain::GENESIS_HASH.to_vec())
        } else {
            sqlx::query_as::<_, (i64, Vec<u8>)>("SELECT * FROM chipledger_refusal_hashes_at($1, $2)")
                .bind(&checkpoint.property)
                .bind(vec![checkpoint.refusal_seq])
                .fetch_optional(&self.pool)
                .await?
                .map(|(_, hash)| hash)
        };
        let differs = |stored: &Option<Vec<u8>>, signed: &[u8; 32]| match stored {
            Some(stored) if stored.as_slice() == signed => None,
            Some(stored) => Some(hex::encode(stored)),
            None => Some("none".to_owned()),
        };
        if let Some(stored) = differs(&event_hash, &checkpoint.hash) {
            return Ok(Some(format!(
                "the log's hash at position {} is {stored}, the checkpoint's {}",
                checkpoint.position,
                hex::encode(checkpoint.hash)
            )));
        }
        if let Some(stored) = differs(&refusal_hash, &checkpoint.refusal_hash) {
            return Ok(Some(format!(
                "the log's refusal hash at {} is {stored}, the checkpoint's {}",
                checkpoint.refusal_seq,
                hex::encode(checkpoint.refusal_hash)
            )));
        }
        Ok(None)
    }

    /// Checkpoints kept in the database after `after` (position, refusal sequence), in chain order.
    pub async fn checkpoints(&self, property: &str, after: (i64, i64), limit: i64) -> Result<Vec<SignedCheckpoint>, StoreError> {
        let rows: Vec<(i64, i64, OffsetDateTime, String)> = sqlx::query_as("SELECT * FROM chipledger_checkpoints($1, $2, $3, $4)")
            .bind(property)
            .bind(after.0)
            .bind(after.1)
            .bind(read::clamp_page(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter()
            .map(|(_, _, _, document)| {
                SignedCheckpoint::from_document(&document).map_err(|e| StoreError::Corrupt(format!("kept checkpoint: {e}")))
            })
            .collect()
    }

    /// What a command id is (idempotency): accepted, with its request hash and original
    /// outcome, or refused, with its request hash and refusal; `None` if never seen.
    pub async fn recorded_command(&self, property: &str, command_id: &str) -> Result<Option<RecordedCommand>, StoreError> {
        rejection::recorded_command(self, property, command_id).await
    }

    /// The stream and stream version of an event, by its id.
    pub async fn event_location(&self, property: &str, event_id: uuid::Uuid) -> Result<Option<(String, i64)>, StoreError> {
        Ok(sqlx::query_as("SELECT * FROM chipledger_event_location($1, $2)")
            .bind(property)
            .bind(event_id)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Recompute the whole chain of a property and compare it with the stored hashes and head.
    pub async fn verify_chain(&self, property: &str) -> Result<ChainReport, StoreError> {
        verify::verify_chain(&self.pool, property).await
    }

    /// Check an externally saved digest: the chain must still verify and still pass through it.
    pub async fn verify_digest(&self, digest: &ChainDigest) -> Result<bool, StoreError> {
        verify::verify_digest(&self.pool, digest).await
    }

    /// The re-buy input of a player for a game (R-REBUY-1): the most recent departure from the game
    /// that no correction took back, among the last `DEPARTURES_KEPT` of the patron.
    pub async fn departure(&self, property: &str, player_id: &str, game_key: &str) -> Result<Option<Departure>, StoreError> {
        Ok(sqlx::query_as("SELECT * FROM chipledger_departure($1, $2, $3)")
        .bind(property)
        .bind(player_id)
        .bind(game_key)
        .fetch_optional(&self.pool)
        .await?)
    }

    pub async fn player_session(&self, property: &str, player_id: &str) -> Result<Option<PlayerSession>, StoreError> {
        Ok(sqlx::query_as("SELECT * FROM chipledger_player_session($1, $2)")
        .bind(property)
        .bind(player_id)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Cash in/out of a patron on a gaming day (`YYYY-MM-DD`), R-AUDIT-4.
    pub async fn daily_cash(&self, property: &str, player_id: &str, gaming_day: &str) -> Result<DailyCash, StoreError> {
        let row: Option<DailyCash> = sqlx::query_as("SELECT * FROM chipledger_daily_cash($1, $2, $3::date)")
        .bind(property)
        .bind(player_id)
        .bind(gaming_day)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.unwrap_or_default())
    }

    /// For each of `player_ids`, the known patron id equal to it but for case, if any (R-REBUY-1).
    pub async fn players_in_another_case(&self, property: &str, player_ids: &[&str]) -> Result<Vec<(String, Option<String>)>, StoreError> {
        Ok(sqlx::query_as("SELECT * FROM chipledger_players_in_another_case($1, $2)")
            .bind(property)
            .bind(player_ids)
            .fetch_all(&self.pool)
            .await?)
    }

    pub async fn credit_line(&self, property: &str, player_id: &str) -> Result<CreditLine, StoreError> {
        let row: Option<CreditLine> = sqlx::query_as("SELECT * FROM chipledger_credit_line($1, $2)")
        .bind(property)
        .bind(player_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.unwrap_or_default())
    }

    /// Seat stacks of a table (R-STAKE-4): (seat, stack_cents), by seat.
    pub async fn seat_stacks(&self, property: &str, table_id: &str) -> Result<Vec<(i32, i64)>, StoreError> {
        Ok(sqlx::query_as("SELECT * FROM chipledger_seat_stacks($1, $2)")
        .bind(property)
        .bind(table_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Tray inventory of a table by denomination (R-CHIP-1): (denomination_cents, value_cents).
    pub async fn tray_inventory(&self, property: &str, table_id: &str) -> Result<Vec<(i64, i64)>, StoreError> {
        Ok(sqlx::query_as("SELECT * FROM chipledger_tray_inventory($1, $2)")
        .bind(property)
        .bind(table_id)
        .fetch_all(&self.pool)
        .await?)
    }
}

/// A caller-owned transaction. The append takes the property's commit lock, so keep what
/// follows it short: the lock is held until [`StoreTx::commit`] or [`StoreTx::rollback`].
/// Appends here bypass group commit, and nothing is retried for the caller: when an append
/// answers [`StoreError::Contention`] (another transaction created the same stream, account or
/// command first), the transaction is aborted and the caller rolls back and starts it again.
pub struct StoreTx {
    tx: Transaction<'static, Postgres>,
    projection: Option<Arc<dyn InlineProjection>>,
}

impl StoreTx {
    /// Append inside this transaction. No automatic retry: on [`StoreError::Contention`]
    /// the caller rolls back and retries the whole transaction.
    pub async fn append(&mut self, request: &AppendRequest) -> Result<AppendOutcome, StoreError> {
        let encoded = append::encode(request, self.projection.as_deref())?;
        append::execute(&mut self.tx, &encoded).await
    }

    /// The transaction's connection, for the caller's own statements.
    pub fn connection(&mut self) -> &mut sqlx::PgConnection {
        &mut self.tx
    }

    pub async fn commit(self) -> Result<(), StoreError> {
        Ok(self.tx.commit().await?)
    }

    pub async fn rollback(self) -> Result<(), StoreError> {
        Ok(self.tx.rollback().await?)
    }
}
