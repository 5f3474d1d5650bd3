//! Partitions of the log by month, and their archive with a signed digest.
//!
//! `events` and `postings` are partitioned by UTC month of `recorded_at` (migration 0008; the
//! first partition holds everything recorded before the cut-over). Partitions ahead come from
//! `chipledger_ensure_partitions` (sql/), run by the admin step and daily by the service; an
//! append past the last one is refused with [`StoreError::NoPartition`] and writes nothing.
//!
//! Archive, an operator's step on an admin URL ([`ArchiveAdmin`], `chipledgerd partitions`):
//! only the oldest attached partition, only once it is older than the retention, only when the
//! chain of every property in it verifies and no stream in it goes on after it (the service
//! rebuilds a stream's state from its first event: a stream cut in two could no longer be
//! read; stream snapshots would lift this). The partition's events and postings are exported
//! as JSON lines, a digest per property (first and last position, count, the hash the
//! partition's chain continues from and its last hash) and the file's SHA-256 are signed with
//! the checkpoint key, the archive is recorded (`archived_partitions`, `archive_anchors` where
//! each property's live chain now starts, `archive_balances` the net amounts that left), and
//! then the partitions are detached, in one transaction. [`ArchiveAdmin::verify`] recomputes
//! the digest from the file and checks the signature, the link to the archive before, and the
//! live chain from the anchor; [`ArchiveAdmin::drop_archived`] refuses unless all of that holds.

use std::io::{BufRead, Write as _};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use futures::TryStreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::{Connection, PgConnection};
use time::OffsetDateTime;

use crate::chain::{GENESIS_HASH, jcs};
use crate::checkpoint::{CheckpointError, CheckpointKey, key_id, verify_bytes};
use crate::error::{StoreError, classify};
use crate::{OWNER_ROLE, Store};

/// Months of partitions kept ready after the current one, unless configured.
pub const DEFAULT_MONTHS_AHEAD: i32 = 3;
/// The most months ahead one may ask for (also checked by chipledger_ensure_partitions).
pub const MAX_MONTHS_AHEAD: i32 = 120;
/// Months a partition must be past before it may be archived, unless configured (seven years).
pub const DEFAULT_RETENTION_MONTHS: i32 = 84;
/// The least retention accepted: the current and the previous month always stay live.
pub const MIN_RETENTION_MONTHS: i32 = 1;
const ARCHIVE_TYPE: &str = "chipledger.archive";

pub(crate) async fn ensure_partitions(conn: &mut PgConnection, months_ahead: i32) -> Result<i32, StoreError> {
    if !(0..=MAX_MONTHS_AHEAD).contains(&months_ahead) {
        return Err(StoreError::InvalidRequest(format!("months ahead must be 0..={MAX_MONTHS_AHEAD}, got {months_ahead}")));
    }
    sqlx::query_scalar("SELECT chipledger_ensure_partitions($1)").bind(months_ahead).fetch_one(conn).await.map_err(classify)
}

/// Where a partition is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionState {
    /// Part of the live log.
    Attached,
    /// Exported, signed, recorded and detached; its tables still exist.
    Archived,
    /// Archived, verified and dropped.
    Dropped,
    /// Neither archived nor dropped, yet its tables are not partitions of the log any more
    /// (dropped or detached behind the service's back: the insider pass dropped a future month
    /// and it was listed as attached). `partitions ensure` makes a future month again.
    Missing,
}

/// One partition (a month of events and postings) as `partitions list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionInfo {
    /// `YYYY-MM` (UTC), or `before-YYYY-MM` for the first partition made at the cut-over.
    pub label: String,
    /// `None` for the first partition (from the beginning).
    #[serde(with = "time::serde::rfc3339::option")]
    pub from_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    pub until_at: OffsetDateTime,
    pub events_table: String,
    pub postings_table: String,
    pub state: PartitionState,
    pub archive_file: Option<String>,
}

/// What one property left in an archived partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PropertyDigest {
    pub property: String,
    pub first_position: i64,
    pub last_position: i64,
    pub events: i64,
    pub postings: i64,
    /// The hash the partition's chain continues from (of `first_position - 1`; genesis at 1).
    #[serde(with = "hex::serde")]
    pub prev_hash: [u8; 32],
    #[serde(with = "hex::serde")]
    pub last_hash: [u8; 32],
    pub last_chain_format: i16,
}

/// The signed statement of what left the live log with one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveDigest {
    #[serde(rename = "type")]
    pub kind: String,
    pub label: String,
    pub events_table: String,
    pub postings_table: String,
    pub until_at_micros: i64,
    /// The export's file name (beside the digest) and its SHA-256.
    pub file_name: String,
    #[serde(with = "hex::serde")]
    pub file_sha256: [u8; 32],
    pub properties: Vec<PropertyDigest>,
    pub key_id: String,
    pub signed_at_ms: i64,
}

impl ArchiveDigest {
    /// The bytes signed: the RFC 8785 (JCS) form, as for checkpoints.
    pub fn signed_bytes(&self) -> Result<Vec<u8>, StoreError> {
        jcs(&serde_json::to_value(self).map_err(|e| StoreError::InvalidRequest(e.to_string()))?)
    }
}

/// A digest with its signature and the key that made it: the document kept beside the export
/// and in `archived_partitions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedArchive {
    pub archive: ArchiveDigest,
    #[serde(with = "hex::serde")]
    pub public_key: [u8; 32],
    #[serde(with = "hex::serde")]
    pub signature: [u8; 64],
}

impl SignedArchive {
    pub fn to_document(&self) -> String {
        serde_json::to_string_pretty(self).expect("a digest serialises")
    }

    pub fn from_document(text: &str) -> Result<SignedArchive, CheckpointError> {
        let signed: SignedArchive = serde_json::from_str(text).map_err(|e| CheckpointError::Malformed(e.to_string()))?;
        if signed.archive.kind != ARCHIVE_TYPE {
            return Err(CheckpointError::Malformed(format!("type {:?}", signed.archive.kind)));
        }
        Ok(signed)
    }

    /// The signature verifies with the document's key, which is one of `trusted` (any, if empty).
    pub fn verify_signature(&self, trusted: &[[u8; 32]]) -> Result<(), CheckpointError> {
        if self.archive.key_id != key_id(&self.public_key) {
            return Err(CheckpointError::Malformed("key_id is not the public key's".into()));
        }
        let bytes = self.archive.signed_bytes().map_err(|e| CheckpointError::Malformed(e.to_string()))?;
        verify_bytes(&self.public_key, &bytes, &self.signature, trusted)
    }
}

/// What `partitions verify` found: everything held.
#[derive(Debug, Clone)]
pub struct ArchiveVerdict {
    pub signed: SignedArchive,
    pub file: PathBuf,
    /// Per property: the position after which its live chain verified from the archive's last hash.
    pub live_chains: Vec<(String, i64, i64)>,
}

/// Why an archive step was refused or an archive does not verify.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("no partition {0:?} (see `chipledgerd partitions list`)")]
    UnknownPartition(String),
    #[error("partition {label} ends {until_at}: inside the retention of {retention_months} months; the newest archivable partition ends by {archivable_until}")]
    InsideRetention { label: String, until_at: String, retention_months: i32, archivable_until: String },
    #[error("retention must be at least {MIN_RETENTION_MONTHS} month(s), got {0}")]
    RetentionTooShort(i32),
    #[error("partition {label} is not the oldest attached one: archive {oldest} first")]
    NotOldest { label: String, oldest: String },
    #[error("partition {0} is already archived")]
    AlreadyArchived(String),
    #[error("partition {0} is not archived: it is never dropped without a recorded, verifying archive")]
    NotArchived(String),
    #[error("partition {0} is already dropped")]
    AlreadyDropped(String),
    #[error("partition {0} is neither archived nor dropped, yet not attached to the log: its tables were dropped or detached outside chipledgerd")]
    Missing(String),
    #[error("partition {label}: {streams} stream(s) in it go on after it (e.g. {example}); the service reads a stream from its first event, so it stays live")]
    StreamsContinue { label: String, streams: i64, example: String },
    #[error("property {property}: {detail}")]
    Chain { property: String, detail: String },
    #[error("archive file {path}: {detail}")]
    File { path: String, detail: String },
    #[error("archive digest signature: {0}")]
    Signature(#[from] CheckpointError),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for ArchiveError {
    fn from(error: sqlx::Error) -> ArchiveError {
        ArchiveError::Store(classify(error))
    }
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io { path: path.display().to_string(), source }
}

fn file_error(path: &Path, detail: impl Into<String>) -> ArchiveError {
    ArchiveError::File { path: path.display().to_string(), detail: detail.into() }
}

const LABEL: &str = "CASE WHEN l.from_at = '-infinity' THEN 'before-' || to_char(l.until_at AT TIME ZONE 'UTC', 'YYYY-MM') \
                     ELSE to_char(l.from_at AT TIME ZONE 'UTC', 'YYYY-MM') END";

/// The operator's side of partitions, on an admin URL (a member of chipledger_owner): list,
/// ensure, archive, verify, drop. The service never runs these.
pub struct ArchiveAdmin {
    conn: PgConnection,
    /// The same database through the store's own functions, for chain verification.
    store: Store,
}

impl ArchiveAdmin {
    pub async fn connect(admin_url: &str) -> Result<ArchiveAdmin, StoreError> {
        let conn = PgConnection::connect(admin_url).await?;
        let store = Store::connect_with(admin_url.parse()?, 4).await?;
        Ok(ArchiveAdmin { conn, store })
    }

    pub async fn ensure(&mut self, months_ahead: i32) -> Result<i32, StoreError> {
        ensure_partitions(&mut self.conn, months_ahead).await
    }

    /// Every partition the log ever had, oldest first.
    pub async fn list(&mut self) -> Result<Vec<PartitionInfo>, ArchiveError> {
        type Row = (String, Option<OffsetDateTime>, OffsetDateTime, String, String, bool, bool, Option<String>, bool);
        let rows: Vec<Row> =
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "SELECT {LABEL}, CASE WHEN l.from_at = '-infinity' THEN NULL ELSE l.from_at END, l.until_at, \
                        l.events_table, l.postings_table, a.from_at IS NOT NULL, d.from_at IS NOT NULL, a.file_path, \
                        EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i WHERE i.inhrelid = pg_catalog.to_regclass(l.events_table) \
                                   AND i.inhparent = 'events'::regclass) \
                        AND EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i WHERE i.inhrelid = pg_catalog.to_regclass(l.postings_table) \
                                       AND i.inhparent = 'postings'::regclass) \
                   FROM log_partitions l LEFT JOIN archived_partitions a USING (from_at) \
                   LEFT JOIN dropped_partitions d USING (from_at) ORDER BY l.until_at"
            )))
            .fetch_all(&mut self.conn)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(label, from_at, until_at, events_table, postings_table, archived, dropped, archive_file, attached)| PartitionInfo {
                label,
                from_at,
                until_at,
                events_table,
                postings_table,
                state: match (archived, dropped, attached) {
                    (_, true, _) => PartitionState::Dropped,
                    (true, false, _) => PartitionState::Archived,
                    (false, false, true) => PartitionState::Attached,
                    (false, false, false) => PartitionState::Missing,
                },
                archive_file,
            })
            .collect())
    }

    async fn find(&mut self, label: &str) -> Result<(PartitionInfo, Vec<PartitionInfo>), ArchiveError> {
        let all = self.list().await?;
        let found = all.iter().find(|p| p.label == label).cloned().ok_or_else(|| ArchiveError::UnknownPartition(label.into()))?;
        Ok((found, all))
    }

    /// Export, sign, record and detach the partition `label` (see the module doc). `now` is
    /// the operator's clock, only for the retention.
    pub async fn archive(
        &mut self,
        label: &str,
        retention_months: i32,
        dir: &Path,
        key: &CheckpointKey,
        now: OffsetDateTime,
    ) -> Result<SignedArchive, ArchiveError> {
        if retention_months < MIN_RETENTION_MONTHS {
            return Err(ArchiveError::RetentionTooShort(retention_months));
        }
        let (partition, all) = self.find(label).await?;
        match partition.state {
            PartitionState::Attached => {}
            PartitionState::Archived => return Err(ArchiveError::AlreadyArchived(label.into())),
            PartitionState::Dropped => return Err(ArchiveError::AlreadyDropped(label.into())),
            PartitionState::Missing => return Err(ArchiveError::Missing(label.into())),
        }
        if let Some(oldest) = all.iter().find(|p| p.state == PartitionState::Attached).filter(|p| p.label != label) {
            return Err(ArchiveError::NotOldest { label: label.into(), oldest: oldest.label.clone() });
        }
        let archivable_until: OffsetDateTime = sqlx::query_scalar(
            "SELECT (date_trunc('month', $1::timestamptz AT TIME ZONE 'UTC') - make_interval(months => $2)) AT TIME ZONE 'UTC'",
        )
        .bind(now)
        .bind(retention_months)
        .fetch_one(&mut self.conn)
        .await?;
        if partition.until_at > archivable_until {
            return Err(ArchiveError::InsideRetention {
                label: label.into(),
                until_at: partition.until_at.to_string(),
                retention_months,
                archivable_until: archivable_until.to_string(),
            });
        }
        let (events_table, postings_table) = (partition.events_table.clone(), partition.postings_table.clone());

        // No stream of the partition may go on after it.
        let (streams, example): (i64, Option<String>) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT count(*), min(s.property || '/' || s.stream) FROM \
               (SELECT e.property, e.stream, max(e.stream_version) AS version FROM {events_table} e GROUP BY 1, 2) p \
               JOIN streams s ON s.property = p.property AND s.stream = p.stream WHERE s.version > p.version",
            events_table = quote_ident(&events_table)
        )))
        .fetch_one(&mut self.conn)
        .await?;
        if streams > 0 {
            return Err(ArchiveError::StreamsContinue { label: label.into(), streams, example: example.unwrap_or_default() });
        }

        // Per property: what the partition holds, chained to what was archived before it.
        let rows: Vec<(String, i64, i64, i64, Vec<u8>, i16)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT e.property, min(e.position), max(e.position), count(*), \
                    (array_agg(e.hash ORDER BY e.position DESC))[1], (array_agg(e.chain_format ORDER BY e.position DESC))[1] \
               FROM {} e GROUP BY e.property ORDER BY e.property",
            quote_ident(&events_table)
        )))
        .fetch_all(&mut self.conn)
        .await?;
        let mut properties = Vec::with_capacity(rows.len());
        for (property, first_position, last_position, events, last_hash, last_chain_format) in rows {
            let chain = |detail: String| ArchiveError::Chain { property: property.clone(), detail };
            if events != last_position - first_position + 1 {
                return Err(chain(format!("positions {first_position}..={last_position} hold {events} events, not dense")));
            }
            let report = self.store.verify_chain(&property).await?;
            if !report.ok {
                return Err(chain(format!("the chain does not verify ({:?} at {:?})", report.problem, report.first_bad_position)));
            }
            let prev_hash = self.link_before(&property, first_position).await?;
            let postings: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT count(*) FROM {} p WHERE p.property = $1",
                quote_ident(&postings_table)
            )))
            .bind(&property)
            .fetch_one(&mut self.conn)
            .await?;
            let last_hash = <[u8; 32]>::try_from(last_hash.as_slice()).map_err(|_| chain("a hash is not 32 bytes".into()))?;
            properties.push(PropertyDigest {
                property,
                first_position,
                last_position,
                events,
                postings,
                prev_hash,
                last_hash,
                last_chain_format,
            });
        }

        // The export, then its signed digest, each a new file, fsynced.
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        let file_name = format!("chipledger-{events_table}.jsonl");
        let path = dir.join(&file_name);
        let file_sha256 = self.export(&events_table, &postings_table, &path).await?;
        let digest = ArchiveDigest {
            kind: ARCHIVE_TYPE.into(),
            label: label.into(),
            events_table: events_table.clone(),
            postings_table: postings_table.clone(),
            until_at_micros: (partition.until_at.unix_timestamp_nanos() / 1000) as i64,
            file_name,
            file_sha256,
            properties,
            key_id: key.key_id(),
            signed_at_ms: (now.unix_timestamp_nanos() / 1_000_000) as i64,
        };
        let signature = key.sign_bytes(&digest.signed_bytes()?);
        let signed = SignedArchive { archive: digest, public_key: key.public_key(), signature };
        let document = signed.to_document();
        let digest_path = digest_path_of(&path);
        write_new(&digest_path, document.as_bytes())?;

        // Record, then detach, in one transaction as the owner.
        let mut tx = self.conn.begin().await?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("SET LOCAL ROLE {OWNER_ROLE}; SET LOCAL lock_timeout = '10s'")))
            .execute(&mut *tx)
            .await?;
        let from_at = "(SELECT from_at FROM log_partitions WHERE events_table = $1)";
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO archived_partitions (from_at, until_at, file_path, file_sha256, document) \
             SELECT from_at, until_at, $2, $3, $4 FROM log_partitions WHERE events_table = $1"
        )))
        .bind(&events_table)
        .bind(path.display().to_string())
        .bind(file_sha256.as_slice())
        .bind(&document)
        .execute(&mut *tx)
        .await?;
        for property in &signed.archive.properties {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO archive_anchors (property, position, hash, chain_format, events, from_at) \
                 VALUES ($2, $3, $4, $5, $6, {from_at})"
            )))
            .bind(&events_table)
            .bind(&property.property)
            .bind(property.last_position)
            .bind(property.last_hash.as_slice())
            .bind(property.last_chain_format)
            .bind(property.events)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO archive_balances (property, account, from_at, balance_cents) \
             SELECT p.property, p.account, {from_at}, sum(p.amount_cents) FROM {postings} p GROUP BY p.property, p.account",
            postings = quote_ident(&postings_table)
        )))
        .bind(&events_table)
        .execute(&mut *tx)
        .await?;
        let (events, postings) = (quote_ident(&events_table), quote_ident(&postings_table));
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "ALTER TABLE events DETACH PARTITION {events}; \
             ALTER TABLE postings DETACH PARTITION {postings}; \
             CREATE TRIGGER {events_trigger} BEFORE UPDATE OR DELETE ON {events} FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change(); \
             CREATE TRIGGER {postings_trigger} BEFORE UPDATE OR DELETE ON {postings} FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change();",
            // Detached, a table loses the row triggers cloned from its parent: its own keep it
            // append-only until it is dropped.
            events_trigger = quote_ident(&format!("{events_table}_append_only")),
            postings_trigger = quote_ident(&format!("{postings_table}_append_only")),
        )))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(signed)
    }

    /// The hash the property's chain had before `first_position`: genesis at 1, else the anchor
    /// of an earlier archive at `first_position - 1`.
    async fn link_before(&mut self, property: &str, first_position: i64) -> Result<[u8; 32], ArchiveError> {
        if first_position == 1 {
            return Ok(GENESIS_HASH);
        }
        let hash: Option<Vec<u8>> = sqlx::query_scalar("SELECT hash FROM archive_anchors WHERE property = $1 AND position = $2")
            .bind(property)
            .bind(first_position - 1)
            .fetch_optional(&mut self.conn)
            .await?;
        hash.and_then(|hash| <[u8; 32]>::try_from(hash.as_slice()).ok()).ok_or_else(|| ArchiveError::Chain {
            property: property.into(),
            detail: format!("no archive ends at position {}, before this partition's first", first_position - 1),
        })
    }

    /// Events then postings of the partition as JSON lines, written to a new file; its SHA-256.
    async fn export(&mut self, events_table: &str, postings_table: &str, path: &Path) -> Result<[u8; 32], ArchiveError> {
        let io = io_error(path);
        let file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o444).open(path).map_err(&io)?;
        let mut out = std::io::BufWriter::new(file);
        let mut hasher = Sha256::new();
        let queries = [
            format!(
                "SELECT json_build_object('kind', 'event', 'property', e.property, 'position', e.position, 'stream', e.stream, \
                   'stream_version', e.stream_version, 'event_id', e.event_id, 'event_type', e.event_type, \
                   'schema_version', e.schema_version, 'payload', e.payload, 'metadata', e.metadata, \
                   'recorded_at_micros', (extract(epoch FROM e.recorded_at) * 1000000)::bigint, \
                   'hash', encode(e.hash, 'hex'), 'chain_format', e.chain_format)::text \
                   FROM {} e ORDER BY e.property, e.position",
                quote_ident(events_table)
            ),
            format!(
                "SELECT json_build_object('kind', 'posting', 'property', p.property, 'position', p.position, \
                   'posting_index', p.posting_index, 'account', p.account, 'amount_cents', p.amount_cents, \
                   'recorded_at_micros', (extract(epoch FROM p.recorded_at) * 1000000)::bigint)::text \
                   FROM {} p ORDER BY p.property, p.position, p.posting_index",
                quote_ident(postings_table)
            ),
        ];
        for query in queries {
            let mut lines = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(query)).fetch(&mut self.conn);
            while let Some(line) = lines.try_next().await? {
                let line = line.replace('\n', " ");
                hasher.update(line.as_bytes());
                hasher.update(b"\n");
                out.write_all(line.as_bytes()).and_then(|()| out.write_all(b"\n")).map_err(&io)?;
            }
        }
        let file = out.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(&io)?;
        sync_parent(path).map_err(&io)?;
        Ok(hasher.finalize().into())
    }

    /// Check a recorded archive: the signature (by one of `trusted`, any if empty), the file
    /// against the digest (recomputed from its lines), the link to the archive before, and the
    /// live chain of every property from the archive's anchor on.
    pub async fn verify(&mut self, label: &str, trusted: &[[u8; 32]]) -> Result<ArchiveVerdict, ArchiveError> {
        let (partition, _) = self.find(label).await?;
        if partition.state == PartitionState::Attached {
            return Err(ArchiveError::NotArchived(label.into()));
        }
        let (path, recorded_sha256, document): (String, Vec<u8>, String) = sqlx::query_as(
            "SELECT a.file_path, a.file_sha256, a.document FROM archived_partitions a \
               JOIN log_partitions l USING (from_at) WHERE l.events_table = $1",
        )
        .bind(&partition.events_table)
        .fetch_one(&mut self.conn)
        .await?;
        let path = PathBuf::from(path);
        let signed = SignedArchive::from_document(&document)?;
        signed.verify_signature(trusted)?;
        if signed.archive.file_sha256.as_slice() != recorded_sha256.as_slice() || signed.archive.events_table != partition.events_table {
            return Err(file_error(&path, "the recorded digest is not the signed one"));
        }
        let recomputed = recompute(&path)?;
        if recomputed.0 != signed.archive.file_sha256 {
            return Err(file_error(
                &path,
                format!("SHA-256 is {}, the signed digest says {}", hex::encode(recomputed.0), hex::encode(signed.archive.file_sha256)),
            ));
        }
        if recomputed.1.len() != signed.archive.properties.len() {
            let (found, signed) = (recomputed.1.len(), signed.archive.properties.len());
            return Err(file_error(&path, format!("the file holds {found} properties, the digest {signed}")));
        }
        let mut live_chains = Vec::new();
        for (digest, found) in signed.archive.properties.iter().zip(&recomputed.1) {
            let same = digest.property == found.property
                && digest.first_position == found.first_position
                && digest.last_position == found.last_position
                && digest.events == found.events
                && digest.postings == found.postings
                && digest.last_hash == found.last_hash
                && digest.last_chain_format == found.last_chain_format;
            if !same {
                return Err(file_error(&path, format!("property {}: the file holds {found:?}, the digest says {digest:?}", digest.property)));
            }
            let chain = |detail: String| ArchiveError::Chain { property: digest.property.clone(), detail };
            if self.link_before(&digest.property, digest.first_position).await? != digest.prev_hash {
                return Err(chain(format!("the archive before position {} does not end with this one's link", digest.first_position)));
            }
            let anchor: Option<Vec<u8>> = sqlx::query_scalar("SELECT hash FROM archive_anchors WHERE property = $1 AND position = $2")
                .bind(&digest.property)
                .bind(digest.last_position)
                .fetch_optional(&mut self.conn)
                .await?;
            if anchor.as_deref() != Some(digest.last_hash.as_slice()) {
                return Err(chain(format!("the recorded anchor at {} is not the archive's last hash", digest.last_position)));
            }
            let report = self.store.verify_chain(&digest.property).await?;
            if !report.ok {
                return Err(chain(format!(
                    "the live chain does not verify from its anchor: {:?} at {:?}",
                    report.problem, report.first_bad_position
                )));
            }
            live_chains.push((digest.property.clone(), report.anchor.map_or(0, |a| a.position), report.head.position));
        }
        Ok(ArchiveVerdict { signed, file: path, live_chains })
    }

    /// Drop the tables of an archived partition, only once its archive verifies.
    pub async fn drop_archived(&mut self, label: &str, trusted: &[[u8; 32]]) -> Result<ArchiveVerdict, ArchiveError> {
        let (partition, _) = self.find(label).await?;
        match partition.state {
            PartitionState::Attached => return Err(ArchiveError::NotArchived(label.into())),
            PartitionState::Dropped => return Err(ArchiveError::AlreadyDropped(label.into())),
            PartitionState::Missing => return Err(ArchiveError::Missing(label.into())),
            PartitionState::Archived => {}
        }
        let verdict = self.verify(label, trusted).await?;
        let mut tx = self.conn.begin().await?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "SET LOCAL ROLE {OWNER_ROLE}; SET LOCAL lock_timeout = '10s'; DROP TABLE {}, {};",
            quote_ident(&partition.events_table),
            quote_ident(&partition.postings_table)
        )))
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO dropped_partitions (from_at) SELECT from_at FROM log_partitions WHERE events_table = $1",
        )
        .bind(&partition.events_table)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(verdict)
    }
}

#[derive(Deserialize)]
struct ExportLine {
    kind: String,
    property: String,
    position: i64,
    hash: Option<String>,
    chain_format: Option<i16>,
}

/// The SHA-256 of an export and the per-property digest its lines give (prev_hash left zero:
/// the file cannot know it).
fn recompute(path: &Path) -> Result<([u8; 32], Vec<PropertyDigest>), ArchiveError> {
    let io = io_error(path);
    let file = std::fs::File::open(path).map_err(&io)?;
    let mut hasher = Sha256::new();
    let mut properties: Vec<PropertyDigest> = Vec::new();
    for (number, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
        let line = line.map_err(&io)?;
        hasher.update(&line);
        hasher.update(b"\n");
        let parsed: ExportLine =
            serde_json::from_slice(&line).map_err(|e| file_error(path, format!("line {}: {e}", number + 1)))?;
        let bad = |what: &str| file_error(path, format!("line {}: {what}", number + 1));
        let entry = match properties.iter_mut().find(|p| p.property == parsed.property) {
            Some(entry) => entry,
            None => {
                properties.push(PropertyDigest {
                    property: parsed.property.clone(),
                    first_position: parsed.position,
                    last_position: parsed.position - 1,
                    events: 0,
                    postings: 0,
                    prev_hash: GENESIS_HASH,
                    last_hash: GENESIS_HASH,
                    last_chain_format: 0,
                });
                properties.last_mut().expect("just pushed")
            }
        };
        match parsed.kind.as_str() {
            "event" => {
                if parsed.position != entry.last_position + 1 {
                    return Err(bad(&format!("position {} after {}", parsed.position, entry.last_position)));
                }
                let mut hash = [0u8; 32];
                hex::decode_to_slice(parsed.hash.as_deref().unwrap_or_default(), &mut hash).map_err(|_| bad("hash is not 32 bytes of hex"))?;
                entry.last_position = parsed.position;
                entry.events += 1;
                entry.last_hash = hash;
                entry.last_chain_format = parsed.chain_format.ok_or_else(|| bad("no chain_format"))?;
            }
            "posting" => {
                if parsed.position < entry.first_position || parsed.position > entry.last_position {
                    return Err(bad(&format!("posting at position {} outside the events", parsed.position)));
                }
                entry.postings += 1;
            }
            other => return Err(bad(&format!("unknown kind {other:?}"))),
        }
    }
    properties.sort_by(|a, b| a.property.cmp(&b.property));
    Ok((hasher.finalize().into(), properties))
}

/// The digest document kept beside an export.
pub fn digest_path_of(export: &Path) -> PathBuf {
    let mut name = export.as_os_str().to_owned();
    name.push(".digest.json");
    PathBuf::from(name)
}

fn write_new(path: &Path, bytes: &[u8]) -> Result<(), ArchiveError> {
    let io = io_error(path);
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o444).open(path).map_err(&io)?;
    file.write_all(bytes).and_then(|()| file.sync_all()).map_err(&io)?;
    sync_parent(path).map_err(&io)
}

fn sync_parent(path: &Path) -> std::io::Result<()> {
    match path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) => std::fs::File::open(dir)?.sync_all(),
        None => Ok(()),
    }
}

/// A partition's table name as an SQL identifier (names come from log_partitions, made by
/// chipledger_ensure_partitions; quoted all the same).
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
