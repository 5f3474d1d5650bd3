//! Verifying a property's log: the event chain with the command ids it binds, the refusal
//! chain, kept checkpoints, and (on request) the inline projections recomputed from the events.
//!
//! Every event's stored hash must equal the hash of its entry (chain.rs) computed from the
//! previous event's *stored* hash and its own stored fields; with the first event chained to
//! [`GENESIS_HASH`] and the head compared at the end, that is the same as recomputing the chain
//! from the start, and the first event that fails is the same one. It also lets pages be checked
//! independently: [`READERS`] connections each take every READERS-th page of positions, so
//! PostgreSQL's work (turning jsonb into text costs it about as much as everything else of a
//! row together) runs on several backends while this process hashes. Results are taken in page
//! order, so the report names the first bad position, as a sequential check would.
//!
//! Commands: every accepted command row names the position of its append's last event; a
//! format 2 entry there binds the append's command ids, request hashes and reply, so the
//! entry's hash covers them, and the row's stored outcome must say what the log says at that
//! position (hash, time, the stream version written there). Refusals: the refusal chain is
//! recomputed the same way, and every refusal must hold its command id (and no command row may
//! point at a refusal that is not there).
//!
//! One snapshot for all: the first connection opens a REPEATABLE READ, READ ONLY transaction,
//! reads the heads and the last stored positions, and exports its snapshot; the other readers
//! import it. Appends committing meanwhile are simply not seen.
//!
//! Rows are hashed from their stored bytes: no `RecordedEvent`, no `serde_json::Value` unless
//! the shortcut of [`chain::JsonbCanonicalizer`] does not apply or its hash does not match,
//! when the definition ([`chain::canonical`] of the decoded value) decides.

use std::collections::{BTreeMap, HashMap};

use sqlx::postgres::PgRow;
use sqlx::{PgExecutor, PgPool, Postgres, Row, Transaction};
use time::OffsetDateTime;
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::append::StoredOutcome;
use crate::chain::{
    self, AppendLink, Canonical, ChainDigest, ChainProblem, ChainReport, GENESIS_HASH, JsonbCanonicalizer, StoredFields,
    VERIFY_PAGE_POSITIONS,
};
use crate::checkpoint::{Checkpoint, SignedCheckpoint};
use crate::error::StoreError;
use crate::event::{EventMetadata, NewEvent, NewPosting};
use crate::projection::{DEPARTURES_KEPT, InlineProjection, ProjectionOp};
use crate::read::{jsonb_text, postings_of};
use crate::rejection::{decode_rejection, refusal_fields};
use crate::subscription::AbortOnDrop;
use crate::Store;

/// Connections reading and checking pages at once.
const READERS: usize = 4;
const SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/// Where a property's live chain continues from after archived partitions: the last archived
/// position, its hash and chain format (archive_anchors, written by `chipledgerd partitions archive`).
#[derive(Debug, Clone)]
pub(crate) struct ArchiveAnchor {
    pub position: i64,
    pub hash: [u8; 32],
    pub chain_format: i16,
}

pub(crate) async fn archive_anchor<'c>(executor: impl PgExecutor<'c>, property: &str) -> Result<Option<ArchiveAnchor>, StoreError> {
    let row: Option<(i64, Vec<u8>, i16)> = sqlx::query_as("SELECT * FROM chipledger_archive_anchor($1)")
        .bind(property)
        .fetch_optional(executor)
        .await?;
    row.map(|(position, hash, chain_format)| {
        let hash = <[u8; 32]>::try_from(hash.as_slice())
            .map_err(|_| StoreError::Corrupt(format!("archive anchor at {position}: hash is not 32 bytes")))?;
        Ok(ArchiveAnchor { position, hash, chain_format })
    })
    .transpose()
}

/// The keys an archive anchor must be signed by before balance reads count what it carries
/// (`None`: not checked, as in tools and tests that read no archive); set once by the server.
static ARCHIVE_KEYS: std::sync::RwLock<Option<Vec<[u8; 32]>>> = std::sync::RwLock::new(None);
/// Anchors proven since (property, position, hash): each is checked once.
static PROVEN_ANCHORS: std::sync::Mutex<Vec<(String, i64, [u8; 32])>> = std::sync::Mutex::new(Vec::new());

/// Balance reads count the balances an archive carried only when its anchor is proven by its
/// document signed with one of `keys` (none: no anchor is). The operations pass wrote an anchor
/// and a bogus document as a superuser, and the balances served moved by $1,000,000 while only
/// `verify` said so.
pub fn trust_archives_signed_by(keys: Vec<[u8; 32]>) {
    *ARCHIVE_KEYS.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(keys);
}

/// Refuses a balance read over an archive anchor that is not proven (see
/// [`trust_archives_signed_by`]); nothing when there is no anchor or no keys were set.
pub(crate) async fn check_archive_for_reads(conn: &mut sqlx::PgConnection, property: &str) -> Result<(), StoreError> {
    let Some(keys) = ARCHIVE_KEYS.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone() else {
        return Ok(());
    };
    let Some(anchor) = archive_anchor(&mut *conn, property).await? else { return Ok(()) };
    let key = (property.to_owned(), anchor.position, anchor.hash);
    if PROVEN_ANCHORS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&key) {
        return Ok(());
    }
    if keys.is_empty() {
        return Err(StoreError::ArchiveUnproven(format!("no key is trusted for the archive anchor at position {}", anchor.position)));
    }
    if let Some(problem) = anchor_unproven(&mut *conn, property, &anchor, &keys).await? {
        return Err(StoreError::ArchiveUnproven(problem));
    }
    PROVEN_ANCHORS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(key);
    Ok(())
}

/// What is wrong with an archive anchor, if anything: it stands for archived events only with
/// the signed document of its archive, whose digest of the property ends at the anchor's
/// position and hash, signed by one of `trusted` (any key, if empty). An anchor is rows: a
/// superuser without the key wrote one at a signed checkpoint's position, deleted the log up to
/// it and rewrote the balances carried past it, and verify had started the chain there, proven
/// (the insiders' pass).
async fn anchor_unproven<'c>(
    executor: impl PgExecutor<'c>,
    property: &str,
    anchor: &ArchiveAnchor,
    trusted: &[[u8; 32]],
) -> Result<Option<String>, StoreError> {
    let document: Option<String> = sqlx::query_scalar("SELECT chipledger_archive_document($1, $2)")
        .bind(property)
        .bind(anchor.position)
        .fetch_one(executor)
        .await?;
    let at = anchor.position;
    let Some(document) = document else {
        return Ok(Some(format!("the archive anchor at position {at} has no archive document")));
    };
    let signed = match crate::partition::SignedArchive::from_document(&document) {
        Ok(signed) => signed,
        Err(error) => return Ok(Some(format!("the archive document of the anchor at position {at} is no signed archive: {error}"))),
    };
    if let Err(error) = signed.verify_signature(trusted) {
        return Ok(Some(format!("the archive document of the anchor at position {at} is not signed by a trusted key: {error}")));
    }
    let ends_at_anchor = signed
        .archive
        .properties
        .iter()
        .any(|digest| digest.property == property && digest.last_position == at && digest.last_hash == anchor.hash);
    if !ends_at_anchor {
        return Ok(Some(format!("the signed archive ({}) does not end at the anchor's position {at} and hash", signed.archive.label)));
    }
    Ok(None)
}

/// The head of the property's event chain.
pub(crate) async fn chain_digest<'c>(executor: impl PgExecutor<'c>, property: &str) -> Result<ChainDigest, StoreError> {
    let heads = heads(executor, property).await?;
    Ok(ChainDigest { property: property.to_owned(), position: heads.events.0, hash: heads.events.1 })
}

/// Both heads of a property: (position, hash) of the event chain and of the refusal chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Heads {
    pub events: (i64, [u8; 32]),
    pub refusals: (i64, [u8; 32]),
}

pub(crate) async fn heads<'c>(executor: impl PgExecutor<'c>, property: &str) -> Result<Heads, StoreError> {
    type HeadRow = (i64, Vec<u8>, i64, Vec<u8>);
    // Not the time of the last event: a property whose first record is a refusal has none yet
    // ('-infinity', which no Rust time represents).
    let row: Option<HeadRow> = sqlx::query_as(
        "SELECT last_position, last_hash, last_refusal_seq, last_refusal_hash FROM chipledger_head($1)",
    )
    .bind(property)
    .fetch_optional(executor)
    .await?;
    let Some((position, hash, refusal_seq, refusal_hash)) = row else {
        return Ok(Heads { events: (0, GENESIS_HASH), refusals: (0, GENESIS_HASH) });
    };
    let fixed = |bytes: Vec<u8>| -> Result<[u8; 32], StoreError> {
        bytes.try_into().map_err(|_| StoreError::Corrupt("head hash is not 32 bytes".into()))
    };
    Ok(Heads { events: (position, fixed(hash)?), refusals: (refusal_seq, fixed(refusal_hash)?) })
}

/// Why the refusal chain does not verify, at [`LogReport::refusal_problem`]'s sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalProblem {
    /// The stored hash differs from the recomputed one: a field of the refusal changed.
    HashMismatch,
    /// The refusal with this sequence number is missing (deleted row, or renumbered).
    Missing,
    /// The chain ends before the head's last sequence number.
    TruncatedTail,
    /// The head's hash differs from the last refusal's.
    HeadMismatch,
    /// The refusal does not hold its command id (its command row is gone or changed), or a
    /// command row points at a refusal that is not there: the id could be used again.
    CommandNotHeld(String),
    Undecodable(String),
    /// The refusal's row id (what the auditors' listing, `ListRejections` and the console,
    /// pages by) is not after the one before it in the chain, or not positive: the listing
    /// would not show it in its place, or at all (the insider pass: a superuser renumbered a
    /// refused ratholing attempt to -12, and it left every listing while the chain held). With
    /// the row id found and the one before it.
    NotListed { rejection_id: i64, after: i64 },
    /// A refusal without a place in the chain recorded after the chain began (every refusal
    /// since is chained): written outside the ledger, listed like any refusal (the insider
    /// pass framed a patron so, unseen), with its row id and command id.
    UnchainedAfterChain(i64, String),
}

/// How a kept checkpoint compares with the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointVerdict {
    pub checkpoint: Checkpoint,
    /// The log verifies up to the checkpoint and has its hashes at its positions.
    pub agrees: bool,
    /// Why not, when it does not.
    pub reason: Option<String>,
}

/// Result of [`Store::verify_log`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogReport {
    /// The event chain, the command ids it binds included.
    pub chain: ChainReport,
    pub commands_checked: i64,
    pub refusals_checked: i64,
    /// Stored head of the refusal chain: (sequence number, hash).
    pub refusal_head: (i64, [u8; 32]),
    /// The first refusal that does not verify, and why.
    pub refusal_problem: Option<(i64, RefusalProblem)>,
    /// One verdict per checkpoint given, in chain order (position, then refusal sequence).
    pub checkpoints: Vec<CheckpointVerdict>,
    /// The store's functions whose definition in the database is not this build's file (or
    /// that have another definition beside it, or none): the reads auditors see go through
    /// them, so one replaced could hide rows from every listing while the chains hold (the
    /// insider pass). Also the tables' triggers, policies and rules, and the application role's
    /// attributes, memberships, privileges and the settings a role or database default gives it.
    pub functions_changed: Vec<String>,
}

impl LogReport {
    pub fn ok(&self) -> bool {
        self.chain.ok
            && self.refusal_problem.is_none()
            && self.checkpoints.iter().all(|verdict| verdict.agrees)
            && self.functions_changed.is_empty()
    }

    /// The last checkpoint (in chain order) the log agrees with before the first it does not:
    /// what it proves. One agreeing after a disagreeing one proves nothing before it (a log
    /// restored from an older backup and signed again: the operations pass was told the log was
    /// proven through a checkpoint after the events it had lost).
    pub fn last_agreeing(&self) -> Option<&CheckpointVerdict> {
        self.checkpoints.iter().take_while(|verdict| verdict.agrees).last()
    }
}

impl Store {
    /// Verify the property's log: both chains, the command ids, and each kept checkpoint. An
    /// archive anchor the live chain starts from is taken only with its archive's document,
    /// signed by one of `archive_keys` (any key, if none is given).
    pub async fn verify_log(&self, property: &str, checkpoints: &[SignedCheckpoint], archive_keys: &[[u8; 32]]) -> Result<LogReport, StoreError> {
        verify_log(self.pool(), property, checkpoints, archive_keys).await
    }

    /// Recompute the inline projections from the events with `projection` (the one the
    /// appends used) and compare them with the stored ones. Ops an append was given directly
    /// ([`crate::AppendRequest::projection_ops`]) are not in the events and cannot be recomputed.
    pub async fn verify_projections(
        &self,
        property: &str,
        projection: &dyn InlineProjection,
    ) -> Result<Vec<ProjectionDifference>, StoreError> {
        verify_projections(self, property, projection).await
    }
}

/// Recompute the whole event chain of a property and compare it with the stored hashes and head.
pub(crate) async fn verify_chain(pool: &PgPool, property: &str) -> Result<ChainReport, StoreError> {
    Ok(verify_log(pool, property, &[], &[]).await?.chain)
}

pub(crate) async fn verify_log(pool: &PgPool, property: &str, kept: &[SignedCheckpoint], archive_keys: &[[u8; 32]]) -> Result<LogReport, StoreError> {
    let mut first = pool.begin_with(SNAPSHOT).await?;
    let heads = heads(&mut *first, property).await?;
    let head = ChainDigest { property: property.to_owned(), position: heads.events.0, hash: heads.events.1 };
    let (snapshot, last_stored): (String, i64) = sqlx::query_as("SELECT pg_export_snapshot(), chipledger_max_position($1)")
        .bind(property)
        .fetch_one(&mut *first)
        .await?;
    // After an archive the live chain starts at the anchor (the last archived event), not at
    // genesis; the archive itself is checked by `chipledgerd partitions verify`.
    let anchor = archive_anchor(&mut *first, property).await?;
    // An anchor stands for events archived and detached: while the live log still holds an
    // event at or before it, it is no archive, and nothing before it is taken as proven (the
    // evidence pass wrote one by hand over events it then edited and deleted).
    let mut anchor_problem = None;
    // Balances carried past an archive count only with its anchor: rows without one are no
    // archive's (the night's pass: a pair a superuser added moved a pocket by $5,000, and verify
    // passed).
    let unanchored: i64 =
        sqlx::query_scalar("SELECT chipledger_unanchored_archive_balances($1)").bind(property).fetch_one(&mut *first).await?;
    if unanchored > 0 {
        anchor_problem = Some((
            anchor.as_ref().map_or(1, |anchor| anchor.position),
            ChainProblem::NotArchived(format!("{unanchored} archive balance row(s) belong to no archive anchor of the property")),
        ));
    }
    if let Some(anchor) = &anchor
        && anchor_problem.is_none()
    {
        let earliest = crate::read::read_all(pool, property, 0, 1).await?;
        if let Some(event) = earliest.first().filter(|event| event.position <= anchor.position) {
            anchor_problem = Some((
                event.position,
                ChainProblem::NotArchived(format!(
                    "the archive anchor at position {} is no archive: the log still holds position {}",
                    anchor.position, event.position
                )),
            ));
        }
        if anchor_problem.is_none()
            && let Some(unproven) = anchor_unproven(&mut *first, property, anchor, archive_keys).await?
        {
            anchor_problem = Some((anchor.position, ChainProblem::NotArchived(unproven)));
        }
    }
    let start = anchor.as_ref().map_or(0, |anchor| anchor.position);
    let last_stored = last_stored.max(start);
    let pages = (last_stored - start + VERIFY_PAGE_POSITIONS - 1) / VERIFY_PAGE_POSITIONS;
    // Never more readers than the pool has connections: they are all held until the end.
    let readers = (pages as usize).min(READERS).min(pool.options().get_max_connections() as usize).max(1);
    let mut snapshots = Vec::new();
    for _ in 1..readers {
        let mut reader = pool.begin_with(SNAPSHOT).await?;
        sqlx::query(sqlx::AssertSqlSafe(format!("SET TRANSACTION SNAPSHOT '{snapshot}'"))).execute(&mut *reader).await?;
        snapshots.push(reader);
    }
    let (sender, mut results) = mpsc::channel(4 * readers);
    // The first connection checks pages too, and keeps the snapshot for what follows.
    let (first_back, first_returned) = tokio::sync::oneshot::channel();
    let mut tasks: Vec<AbortOnDrop<()>> = Vec::new();
    {
        let pages = (0..pages).step_by(readers);
        let (property, sender) = (property.to_owned(), sender.clone());
        let anchor = anchor.clone();
        tasks.push(AbortOnDrop(tokio::spawn(async move {
            let mut first = first;
            check_pages(&mut first, &property, anchor.as_ref(), pages, last_stored, &sender).await;
            let _ = first_back.send(first);
        })));
    }
    for (reader, mut snapshot) in snapshots.into_iter().enumerate() {
        let pages = (reader as i64 + 1..pages).step_by(readers);
        let (property, sender) = (property.to_owned(), sender.clone());
        let anchor = anchor.clone();
        tasks.push(AbortOnDrop(tokio::spawn(async move {
            check_pages(&mut snapshot, &property, anchor.as_ref(), pages, last_stored, &sender).await;
        })));
    }
    drop(sender);

    // Take the pages' results in page order; the first problem is the chain's first.
    let start_hash = anchor.as_ref().map_or(GENESIS_HASH, |anchor| anchor.hash);
    let (mut checked, mut commands_checked, mut last_hash, mut next_page) = (0, 0, start_hash, 0);
    let mut waiting = BTreeMap::new();
    let mut problem = None;
    while next_page < pages && problem.is_none() {
        let Some(result) = results.recv().await else {
            return Err(StoreError::Corrupt("a chain reader stopped without a result".into()));
        };
        let result: PageResult = result?;
        waiting.insert(result.page, result);
        while let Some(result) = waiting.remove(&next_page) {
            checked += result.checked;
            commands_checked += result.commands_checked;
            if result.problem.is_some() {
                problem = result.problem;
                break;
            }
            last_hash = result.last_hash;
            next_page += 1;
        }
    }
    drop(results);
    if anchor_problem.is_some() {
        problem = anchor_problem;
    }
    if problem.is_none() {
        problem = if last_stored < head.position {
            Some((last_stored + 1, ChainProblem::TruncatedTail))
        } else if last_stored > head.position || last_hash != head.hash {
            Some((last_stored, ChainProblem::HeadMismatch))
        } else {
            None
        };
    }
    // The first reader hands its snapshot back once its pages are done (or stopped early).
    let mut first = match first_returned.await {
        Ok(first) => first,
        Err(_) => return Err(StoreError::Corrupt("the first chain reader stopped".into())),
    };
    drop(tasks);
    if problem.is_none() {
        let (accepted, _): (i64, i64) =
            sqlx::query_as("SELECT * FROM chipledger_command_count($1)").bind(property).fetch_one(&mut *first).await?;
        if accepted != commands_checked {
            problem = Some((
                last_stored,
                ChainProblem::CommandNotBound(format!(
                    "{} accepted command rows are bound to no position of the log",
                    accepted - commands_checked
                )),
            ));
        }
    }
    let (first_bad_position, chain_problem) = problem.clone().unzip();
    let anchor_digest = anchor.as_ref().map(|anchor| ChainDigest { property: property.to_owned(), position: anchor.position, hash: anchor.hash });
    let chain = ChainReport {
        ok: chain_problem.is_none(),
        events_checked: checked,
        first_bad_position,
        problem: chain_problem,
        head,
        anchor: anchor_digest,
    };
    let (refusals_checked, refusal_problem) = check_refusals(&mut first, property, heads.refusals).await?;
    let checkpoints = checkpoint_verdicts(&mut first, property, kept, anchor.as_ref(), &problem, &refusal_problem).await?;
    let mut functions_changed = functions_changed(&mut *first).await?;
    // One patron under two spellings in the log (R-REBUY-1: the service refuses a new id equal
    // to a known one but for case, by the streams projection, which an insider can rename for
    // a moment; the log keeps both spellings for good).
    let by_case: Vec<String> = sqlx::query_scalar("SELECT * FROM chipledger_patron_ids_by_case($1)").bind(property).fetch_all(&mut *first).await?;
    functions_changed.extend(by_case.into_iter().map(|streams| format!("log: patron streams {streams} differ only in case (R-REBUY-1: one patron under two spellings)")));
    first.commit().await?;
    Ok(LogReport {
        chain,
        commands_checked,
        refusals_checked,
        refusal_head: heads.refusals,
        refusal_problem,
        checkpoints,
        functions_changed,
    })
}

/// Check an externally saved digest: the chain must still verify and still pass through it.
pub(crate) async fn verify_digest(pool: &PgPool, digest: &ChainDigest) -> Result<bool, StoreError> {
    let report = verify_chain(pool, &digest.property).await?;
    if !report.ok {
        return Ok(false);
    }
    if digest.position == 0 {
        return Ok(digest.hash == GENESIS_HASH);
    }
    let stored: Option<(i64, Vec<u8>)> = sqlx::query_as("SELECT * FROM chipledger_hashes_at($1, $2)")
        .bind(&digest.property)
        .bind(vec![digest.position])
        .fetch_optional(pool)
        .await?;
    Ok(stored.is_some_and(|(_, hash)| hash == digest.hash))
}

/// Where the log stops agreeing, as a position of each chain (what comes before verified).
fn first_bad(problem: &Option<(i64, ChainProblem)>) -> i64 {
    match problem {
        // The events are intact; only the head (or a command row) disagrees: after the last.
        Some((position, ChainProblem::HeadMismatch | ChainProblem::CommandNotBound(_))) => *position + 1,
        Some((position, _)) => *position,
        None => i64::MAX,
    }
}

async fn checkpoint_verdicts(
    snapshot: &mut Transaction<'static, Postgres>,
    property: &str,
    kept: &[SignedCheckpoint],
    anchor: Option<&ArchiveAnchor>,
    problem: &Option<(i64, ChainProblem)>,
    refusal_problem: &Option<(i64, RefusalProblem)>,
) -> Result<Vec<CheckpointVerdict>, StoreError> {
    let start = anchor.map_or(0, |anchor| anchor.position);
    let mut kept: Vec<&Checkpoint> = kept.iter().map(|signed| &signed.checkpoint).collect();
    kept.sort_by_key(|checkpoint| (checkpoint.position, checkpoint.refusal_seq, checkpoint.signed_at_ms));
    let positions: Vec<i64> = kept.iter().map(|checkpoint| checkpoint.position).collect();
    let seqs: Vec<i64> = kept.iter().map(|checkpoint| checkpoint.refusal_seq).collect();
    let hashes: HashMap<i64, Vec<u8>> = sqlx::query_as("SELECT * FROM chipledger_hashes_at($1, $2)")
        .bind(property)
        .bind(&positions)
        .fetch_all(&mut **snapshot)
        .await?
        .into_iter()
        .collect();
    let refusal_hashes: HashMap<i64, Vec<u8>> = sqlx::query_as("SELECT * FROM chipledger_refusal_hashes_at($1, $2)")
        .bind(property)
        .bind(&seqs)
        .fetch_all(&mut **snapshot)
        .await?
        .into_iter()
        .collect();
    let bad_position = first_bad(problem);
    let bad_seq = match refusal_problem {
        Some((seq, RefusalProblem::HeadMismatch)) => seq + 1,
        Some((seq, _)) => *seq,
        None => i64::MAX,
    };
    let at = |hashes: &HashMap<i64, Vec<u8>>, at: i64| -> Option<Vec<u8>> {
        if at == 0 { Some(GENESIS_HASH.to_vec()) } else { hashes.get(&at).cloned() }
    };
    let event_at = |at_position: i64| -> Option<Vec<u8>> {
        match anchor {
            Some(anchor) if at_position == anchor.position => Some(anchor.hash.to_vec()),
            _ => at(&hashes, at_position),
        }
    };
    Ok(kept
        .into_iter()
        .map(|checkpoint| {
            let reason = if checkpoint.property != property {
                Some(format!("it is a checkpoint of property {:?}", checkpoint.property))
            } else if checkpoint.position >= bad_position {
                Some(format!("the event chain does not verify from position {bad_position}, at or before its position"))
            } else if checkpoint.position > 0 && checkpoint.position < start {
                Some(format!(
                    "its position {} is archived (the live chain starts after position {start}): check it against the archive",
                    checkpoint.position
                ))
            } else if checkpoint.refusal_seq >= bad_seq {
                Some(format!("the refusal chain does not verify from refusal {bad_seq}, at or before its refusal"))
            } else {
                match (event_at(checkpoint.position), at(&refusal_hashes, checkpoint.refusal_seq)) {
                    (None, _) => Some(format!("the log has no event at its position {}", checkpoint.position)),
                    (_, None) => Some(format!("the log has no refusal {}", checkpoint.refusal_seq)),
                    (Some(hash), _) if hash != checkpoint.hash => Some(format!(
                        "at position {} the log's hash is {}, the checkpoint's {}",
                        checkpoint.position,
                        hex::encode(&hash),
                        hex::encode(checkpoint.hash)
                    )),
                    (_, Some(hash)) if hash != checkpoint.refusal_hash => Some(format!(
                        "at refusal {} the log's hash is {}, the checkpoint's {}",
                        checkpoint.refusal_seq,
                        hex::encode(&hash),
                        hex::encode(checkpoint.refusal_hash)
                    )),
                    _ => None,
                }
            };
            CheckpointVerdict { checkpoint: checkpoint.clone(), agrees: reason.is_none(), reason }
        })
        .collect())
}

/// The store's functions ([`crate::schema::all_functions`]) that are not what this build's
/// files make: another body, other settings (a `search_path` pointing at a view that filters),
/// not SECURITY DEFINER where the file says so or the other way, another owner, more than one
/// of the name or none, or outside `public`; and any function named like the store's in another
/// schema (one on the application role's search path would answer in its place: the fixes'
/// pass hid every refused ratholing attempt so, and verify passed).
pub(crate) async fn functions_changed(conn: &mut sqlx::PgConnection) -> Result<Vec<String>, StoreError> {
    type Installed = (String, String, String, bool, Vec<String>, String, String, String, bool, String);
    let installed: Vec<Installed> = sqlx::query_as(
        "SELECT n.nspname::text, p.proname::text, p.prosrc, p.prosecdef, coalesce(p.proconfig, '{}'), pg_catalog.pg_get_userbyid(p.proowner)::text, \
                l.lanname::text, p.provolatile::text, p.proisstrict, p.proparallel::text \
           FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
           JOIN pg_catalog.pg_language l ON l.oid = p.prolang \
          WHERE p.proname LIKE 'chipledger\\_%'",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut changed = Vec::new();
    for (name, text) in crate::schema::all_functions() {
        let found: Vec<&Installed> = installed.iter().filter(|row| row.1 == *name).collect();
        let same = match (found.as_slice(), crate::schema::function_body(text)) {
            ([(schema, _, body, definer, settings, owner, language, volatility, strict, parallel)], Some(file)) => {
                let mut settings: Vec<String> = settings
                    .iter()
                    .map(|setting| setting.split_once('=').map_or_else(|| setting.clone(), |(name, value)| crate::schema::setting_key(name, value)))
                    .collect();
                settings.sort();
                schema == "public"
                    && body.trim_matches('\n') == file.trim_matches('\n')
                    && *definer == crate::schema::function_is_definer(text)
                    && settings == crate::schema::function_settings(text)
                    && owner == crate::OWNER_ROLE
                    // Its declared attributes too (the evidence pass made two listings STRICT,
                    // which answered nothing for the arguments they are called with).
                    && {
                        let (file_language, file_volatility, file_strict, file_parallel) = crate::schema::function_attributes(text);
                        (language.as_str(), volatility.as_str(), *strict, parallel.as_str())
                            == (file_language.as_str(), file_volatility.to_string().as_str(), file_strict, file_parallel.to_string().as_str())
                    }
            }
            _ => false,
        };
        if !same {
            changed.push((*name).to_owned());
        }
    }
    for (schema, name, ..) in &installed {
        if schema != "public" {
            changed.push(format!("{schema}.{name}"));
        }
    }
    // The tables the functions read, as the migrations made them: each a table (not a view
    // in its place), with no row-level security or policy, no rule, and no trigger but the
    // append-only ones, enabled (the fixes' second pass hid refusals and a CTR with a policy
    // that filtered only the listing's queries, and with a view named like the table).
    let objects: Vec<(String,)> = sqlx::query_as(
        "SELECT 'table ' || t.name || ': not a table' FROM unnest($1::text[]) AS t(name) \
          WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                             WHERE n.nspname = 'public' AND c.relname = t.name AND c.relkind IN ('r', 'p')) \
         UNION ALL \
         SELECT 'table ' || c.relname || ': row-level security' FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
          WHERE n.nspname = 'public' AND (c.relrowsecurity OR c.relforcerowsecurity) \
         UNION ALL \
         SELECT 'table ' || c.relname || ': policy ' || p.polname FROM pg_catalog.pg_policy p JOIN pg_catalog.pg_class c ON c.oid = p.polrelid \
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' \
         UNION ALL \
         SELECT 'table ' || c.relname || ': rule ' || r.rulename FROM pg_catalog.pg_rewrite r JOIN pg_catalog.pg_class c ON c.oid = r.ev_class \
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND r.rulename <> '_RETURN' \
         UNION ALL \
         SELECT 'table ' || c.relname || ': trigger ' || t.tgname FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid \
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace JOIN pg_catalog.pg_proc f ON f.oid = t.tgfoid \
          WHERE n.nspname = 'public' AND NOT t.tgisinternal AND (f.proname <> 'chipledger_refuse_change' OR t.tgenabled NOT IN ('O', 'A')) \
         UNION ALL \
         SELECT 'table ' || e.name || ': trigger ' || e.name || e2.kind || ' missing or changed' \
           FROM unnest($2::text[]) AS e(name), (VALUES ('_append_only', 27), ('_no_truncate', 34)) AS e2(kind, tgtype) \
          WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid \
                              JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace JOIN pg_catalog.pg_proc f ON f.oid = t.tgfoid \
                             WHERE n.nspname = 'public' AND c.relname = e.name AND t.tgname = e.name || e2.kind \
                               AND f.proname = 'chipledger_refuse_change' AND t.tgtype = e2.tgtype AND t.tgqual IS NULL \
                               AND pg_catalog.cardinality(t.tgattr::int2[]) = 0) \
         UNION ALL \
         SELECT 'table ' || c.relname || ': no TRUNCATE trigger (a month of the log)' \
           FROM pg_catalog.pg_inherits i JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid \
           JOIN pg_catalog.pg_class p ON p.oid = i.inhparent JOIN pg_catalog.pg_namespace n ON n.oid = p.relnamespace \
          WHERE n.nspname = 'public' AND p.relname IN ('events', 'postings') \
            AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_proc f ON f.oid = t.tgfoid \
                             WHERE t.tgrelid = c.oid AND f.proname = 'chipledger_refuse_change' AND t.tgtype = 34 \
                               AND t.tgqual IS NULL AND t.tgenabled IN ('O', 'A')) \
         UNION ALL \
         SELECT 'setting session_replication_role = ' || s.reset_val || ' (from ' || s.source || '): no trigger fires' \
           FROM pg_catalog.pg_settings s WHERE s.name = 'session_replication_role' AND s.reset_val <> 'origin' \
         UNION ALL \
         SELECT 'role ' || r.rolname || ': ' || a.attribute FROM pg_catalog.pg_roles r, \
                LATERAL unnest(ARRAY[CASE WHEN r.rolsuper THEN 'superuser' END, CASE WHEN r.rolcreaterole THEN 'createrole' END, \
                                     CASE WHEN r.rolcreatedb THEN 'createdb' END, CASE WHEN r.rolbypassrls THEN 'bypassrls' END, \
                                     CASE WHEN r.rolreplication THEN 'replication' END]) AS a(attribute) \
          WHERE r.rolname = $3 AND a.attribute IS NOT NULL \
         UNION ALL \
         SELECT 'role ' || $3 || ': member of ' || g.rolname FROM pg_catalog.pg_auth_members m \
           JOIN pg_catalog.pg_roles g ON g.oid = m.roleid JOIN pg_catalog.pg_roles r ON r.oid = m.member WHERE r.rolname = $3 \
         UNION ALL \
         SELECT 'role ' || $3 || ': may ' || p.privilege || ' on ' || t.name FROM unnest($1::text[]) AS t(name), \
                unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p(privilege) \
          WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $3) \
            AND to_regclass('public.' || t.name) IS NOT NULL AND pg_catalog.has_table_privilege($3, 'public.' || t.name, p.privilege) \
         UNION ALL \
         SELECT 'role ' || $3 || ': may CREATE in schema public' \
          WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $3) AND pg_catalog.has_schema_privilege($3, 'public', 'CREATE') \
         UNION ALL \
         SELECT 'role ' || $3 || ': setting ' || c.setting || CASE WHEN s.setrole = 0 THEN ' (for every role)' ELSE '' END \
                || CASE WHEN s.setdatabase = 0 THEN ' (in every database)' ELSE '' END \
           FROM pg_catalog.pg_db_role_setting s, LATERAL unnest(s.setconfig) AS c(setting) \
          WHERE (s.setrole = 0 OR s.setrole = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = $3)) \
            AND (s.setdatabase = 0 OR s.setdatabase = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())) \
         ORDER BY 1",
    )
    .bind(STORE_TABLES)
    .bind(APPEND_ONLY_TABLES)
    .bind(crate::APP_ROLE)
    .fetch_all(&mut *conn)
    .await?;
    changed.extend(objects.into_iter().map(|(object,)| object));
    Ok(changed)
}

/// The tables refused UPDATE, DELETE and TRUNCATE by the triggers `<table>_append_only` and
/// `<table>_no_truncate` (migrations 0001, 0007, 0008): each must stand and fire (the evidence
/// pass dropped some and set others to fire only on replicas, and verify passed), as made:
/// BEFORE UPDATE OR DELETE FOR EACH ROW (tgtype 27) and BEFORE TRUNCATE (34), with no WHEN and
/// no column list (the insider pass made one fire only on DELETE, another only when a column
/// was updated or an empty command id, and verify said nothing). A server-wide
/// `session_replication_role = replica` (ALTER SYSTEM) silences them all, and is named too.
const APPEND_ONLY_TABLES: &[&str] = &[
    "archive_anchors", "archive_balances", "archived_partitions", "checkpoints", "commands", "dropped_partitions", "event_ids",
    "events", "log_partitions", "postings", "rejections",
];

/// The tables of the store the functions read and write (migrations/).
const STORE_TABLES: &[&str] = &[
    "account_balances", "archive_anchors", "archive_balances", "archived_partitions", "checkpoints", "commands",
    "credit_lines", "dropped_partitions", "event_ids", "events", "log_partitions", "patron_daily_cash",
    "player_departure_log", "player_sessions", "postings", "projection_checkpoints", "property_heads", "rejections",
    "report_table_day", "schema_state", "streams",
];

/// Recompute the refusal chain; (refusals checked, first problem).
async fn check_refusals(
    snapshot: &mut Transaction<'static, Postgres>,
    property: &str,
    head: (i64, [u8; 32]),
) -> Result<(i64, Option<(i64, RefusalProblem)>), StoreError> {
    let last_stored: i64 =
        sqlx::query_scalar("SELECT chipledger_max_refusal_seq($1)").bind(property).fetch_one(&mut **snapshot).await?;
    let mut previous = GENESIS_HASH;
    let mut expected = 1;
    // The row id of the refusal before (the listing starts after 0).
    let mut listed_after = 0;
    let mut entry = Vec::with_capacity(1024);
    let mut canonicalizer = JsonbCanonicalizer::new(Canonical::Jcs);
    while expected <= last_stored {
        let last = (expected + VERIFY_PAGE_POSITIONS - 1).min(last_stored);
        let rows = sqlx::query("SELECT * FROM chipledger_refusals_range($1, $2, $3)")
            .bind(property)
            .bind(expected)
            .bind(last)
            .fetch_all(&mut **snapshot)
            .await?;
        let rows_held: Vec<(String, Vec<u8>, i64)> = sqlx::query_as("SELECT * FROM chipledger_refused_commands($1, $2, $3)")
            .bind(property)
            .bind(expected)
            .bind(last)
            .fetch_all(&mut **snapshot)
            .await?;
        let mut held: HashMap<i64, (String, Vec<u8>)> = HashMap::with_capacity(rows_held.len());
        for (command_id, request_hash, seq) in rows_held {
            // One command row per refusal: a second one, put physically after the real one, had
            // been the one kept here and passed (the evidence pass).
            if let Some((first, _)) = held.insert(seq, (command_id.clone(), request_hash)) {
                let what = format!("two command rows point at refusal {seq}: {first} and {command_id}");
                return Ok((seq.min(expected).max(1) - 1, Some((seq, RefusalProblem::CommandNotHeld(what)))));
            }
        }
        for row in &rows {
            let undecodable = |error: String| Ok((expected - 1, Some((expected, RefusalProblem::Undecodable(error)))));
            let refusal = match decode_rejection(property, row) {
                Ok(refusal) => refusal,
                Err(error) => return undecodable(error.to_string()),
            };
            let seq = refusal.refusal_seq.unwrap_or_default();
            if seq != expected {
                return Ok((expected - 1, Some((expected, RefusalProblem::Missing))));
            }
            let canonical = |column: usize, canonicalizer: &mut JsonbCanonicalizer| -> Result<Vec<u8>, String> {
                let text = jsonb_text(row, column).map_err(|error| error.to_string())?;
                let mut out = Vec::new();
                if canonicalizer.write(text, &mut out).is_some() {
                    return Ok(out);
                }
                let value: serde_json::Value = serde_json::from_slice(text).map_err(|error| error.to_string())?;
                chain::jcs(&value).map_err(|error| error.to_string())
            };
            let (numbers, request) = match (canonical(5, &mut canonicalizer), canonical(11, &mut canonicalizer)) {
                (Ok(numbers), Ok(request)) => (numbers, request),
                (Err(error), _) | (_, Err(error)) => return undecodable(error),
            };
            chain::refusal_entry_start(&mut entry, &refusal_fields(&refusal.record), &numbers, &request);
            let micros = match micros_of(refusal.recorded_at) {
                Ok(micros) => micros,
                Err(error) => return undecodable(error),
            };
            let hash = chain::refusal_entry_hash(&entry, seq, &previous, micros);
            if Some(hash) != refusal.hash {
                return Ok((expected - 1, Some((expected, RefusalProblem::HashMismatch))));
            }
            if refusal.rejection_id <= listed_after {
                let problem = RefusalProblem::NotListed { rejection_id: refusal.rejection_id, after: listed_after };
                return Ok((expected - 1, Some((expected, problem))));
            }
            listed_after = refusal.rejection_id;
            match held.get(&seq) {
                Some((command_id, request_hash))
                    if *command_id == refusal.record.command_id && request_hash.as_slice() == refusal.record.request_hash => {}
                _ => {
                    let what = format!("command {} of refusal {seq} is not held", refusal.record.command_id);
                    return Ok((expected - 1, Some((expected, RefusalProblem::CommandNotHeld(what)))));
                }
            }
            previous = hash;
            expected += 1;
        }
        if let Some(seq) = held.keys().copied().filter(|seq| *seq >= expected).min() {
            let what = format!("a command row points at refusal {seq}, which the chain does not have");
            return Ok((expected - 1, Some((seq.min(expected), RefusalProblem::CommandNotHeld(what)))));
        }
        if expected <= last {
            return Ok((expected - 1, Some((expected, RefusalProblem::Missing))));
        }
    }
    let checked = expected - 1;
    // Every refused command row is one of the chain's refusals (the evidence pass: a row for a
    // command id not yet sent, pointing at refusal -1, answered that command's first sending
    // with an old refusal, and nothing was recorded).
    let (_, refused_rows): (i64, i64) =
        sqlx::query_as("SELECT * FROM chipledger_command_count($1)").bind(property).fetch_one(&mut **snapshot).await?;
    if refused_rows != checked {
        let what = format!("{refused_rows} refused command rows for {checked} refusals of the chain");
        return Ok((checked, Some((checked + 1, RefusalProblem::CommandNotHeld(what)))));
    }
    let unchained: Option<(i64, String)> =
        sqlx::query_as("SELECT * FROM chipledger_unchained_refusals($1)").bind(property).fetch_optional(&mut **snapshot).await?;
    let problem = if let Some((rejection_id, command_id)) = unchained {
        // The chain itself holds: checkpoints of it still agree; the row is no part of it.
        Some((last_stored + 1, RefusalProblem::UnchainedAfterChain(rejection_id, command_id)))
    } else if last_stored < head.0 {
        Some((last_stored + 1, RefusalProblem::TruncatedTail))
    } else if last_stored > head.0 || previous != head.1 {
        Some((last_stored, RefusalProblem::HeadMismatch))
    } else {
        None
    };
    Ok((checked, problem))
}

/// What one page of positions showed.
struct PageResult {
    page: i64,
    /// Events that verified, from the page's first position on.
    checked: i64,
    /// Accepted command rows bound at the page's positions that verified.
    commands_checked: i64,
    /// The first problem in the page; nothing after it was checked.
    problem: Option<(i64, ChainProblem)>,
    /// The stored hash of the page's last event, when all of it verified.
    last_hash: [u8; 32],
}

async fn check_pages(
    snapshot: &mut Transaction<'static, Postgres>,
    property: &str,
    anchor: Option<&ArchiveAnchor>,
    pages: impl Iterator<Item = i64>,
    last_stored: i64,
    results: &mpsc::Sender<Result<PageResult, StoreError>>,
) {
    let mut check = EventCheck::new(property);
    let start = anchor.map_or(0, |anchor| anchor.position);
    for page in pages {
        let first = start + page * VERIFY_PAGE_POSITIONS + 1;
        let last = (first + VERIFY_PAGE_POSITIONS - 1).min(last_stored);
        let result = check_page(snapshot, &mut check, anchor, page, first, last).await;
        let stop = !matches!(&result, Ok(result) if result.problem.is_none());
        if results.send(result).await.is_err() || stop {
            return;
        }
    }
}

/// An accepted command row as the verifier reads it.
struct BoundCommand {
    command_id: String,
    request_hash: Vec<u8>,
    append_id: Option<Uuid>,
    outcome: Option<String>,
    /// The SHA-256 of the stored reply, computed by the database as it reads the row.
    reply_sha256: Option<Vec<u8>>,
    last_position: i64,
}

async fn check_page(
    snapshot: &mut Transaction<'static, Postgres>,
    check: &mut EventCheck<'_>,
    anchor: Option<&ArchiveAnchor>,
    page: i64,
    first: i64,
    last: i64,
) -> Result<PageResult, StoreError> {
    let property = check.property;
    // The log's first event starts an append; a page elsewhere learns where its appends start
    // at the first position command rows are bound at.
    check.segment = Segment { start: (first == 1).then_some(1), events: Vec::new() };
    // From one position before the page: its stored hash chains the page's first event.
    let events = sqlx::query("SELECT * FROM chipledger_events_range($1, $2, $3, $4)")
        .bind(property)
        .bind(first - 2)
        .bind(last)
        .bind(last - first + 2)
        .fetch_all(&mut **snapshot)
        .await?;
    let postings = sqlx::query("SELECT * FROM chipledger_postings_range($1, $2, $3)")
        .bind(property)
        .bind(first)
        .bind(last)
        .fetch_all(&mut **snapshot)
        .await?;
    let commands: Vec<BoundCommand> = sqlx::query("SELECT * FROM chipledger_commands_range($1, $2, $3)")
        .bind(property)
        .bind(first)
        .bind(last)
        .fetch_all(&mut **snapshot)
        .await?
        .iter()
        .map(|row| {
            Ok(BoundCommand {
                command_id: row.try_get(0)?,
                request_hash: row.try_get(1)?,
                append_id: row.try_get(2)?,
                outcome: row.try_get(3)?,
                reply_sha256: row.try_get(4)?,
                last_position: row.try_get(5)?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?;
    let mut result = PageResult { page, checked: 0, commands_checked: 0, problem: None, last_hash: GENESIS_HASH };
    let undecodable = |position: i64, error: String| Some((position, ChainProblem::Undecodable(error)));
    let postings = match postings
        .iter()
        .map(|row| Ok((row.try_get::<i64, _>(0)?, row.try_get::<&str, _>(1)?, row.try_get::<i64, _>(2)?)))
        .collect::<Result<Vec<_>, sqlx::Error>>()
    {
        Ok(postings) => postings,
        Err(error) => {
            result.problem = undecodable(first, error.to_string());
            return Ok(result);
        }
    };
    let mut rows = events.iter().peekable();
    // The chain enters the page through the stored hash of the position before it. If that
    // row is missing, the page before reports it first, so what this page finds never counts.
    let mut previous = GENESIS_HASH;
    let mut previous_format = 1;
    if let Some(anchor) = anchor.filter(|anchor| anchor.position + 1 == first) {
        // The first live page enters through the archive anchor: the archived event is gone.
        previous = anchor.hash;
        previous_format = anchor.chain_format;
    } else if first > 1 {
        match rows.next_if(|row| row.try_get::<i64, _>(1).is_ok_and(|position| position == first - 1)) {
            Some(row) => match row.try_get::<&[u8], _>(10).ok().and_then(|hash| <[u8; 32]>::try_from(hash).ok()) {
                Some(hash) => {
                    previous = hash;
                    previous_format = row.try_get::<i16, _>(11).unwrap_or(1);
                }
                None => result.problem = undecodable(first - 1, "hash is not 32 bytes".into()),
            },
            None => result.problem = Some((first - 1, ChainProblem::MissingPosition)),
        }
        if result.problem.is_some() {
            return Ok(result);
        }
    }
    let mut next_posting = 0;
    let mut next_command = 0;
    let mut expected = first;
    for row in rows {
        let position = match row.try_get::<i64, _>(1) {
            Ok(position) => position,
            Err(error) => {
                result.problem = undecodable(expected, error.to_string());
                return Ok(result);
            }
        };
        if position != expected {
            break;
        }
        let own = postings_of(&postings, &mut next_posting, position, |posting| posting.0);
        let bound = postings_of(&commands, &mut next_command, position, |command| command.last_position);
        match check.check(row, position, &previous, previous_format, own, bound) {
            Ok(Checked::Verified(hash, format)) => {
                previous = hash;
                previous_format = format;
            }
            Ok(Checked::Mismatch) => {
                result.problem = Some((position, ChainProblem::HashMismatch));
                return Ok(result);
            }
            Ok(Checked::CommandNotBound(what)) => {
                result.problem = Some((position, ChainProblem::CommandNotBound(what)));
                return Ok(result);
            }
            Err(error) => {
                result.problem = undecodable(position, error);
                return Ok(result);
            }
        }
        result.checked += 1;
        result.commands_checked += bound.len() as i64;
        expected += 1;
    }
    if expected <= last {
        result.problem = Some((expected, ChainProblem::MissingPosition));
    }
    result.last_hash = previous;
    Ok(result)
}

enum Checked {
    /// The stored hash, recomputed, and the entry's format.
    Verified([u8; 32], i16),
    Mismatch,
    CommandNotBound(String),
}

/// Buffers reused for every event a reader checks.
struct EventCheck<'p> {
    property: &'p str,
    canonicalizers: [JsonbCanonicalizer; 2],
    payload: Vec<u8>,
    metadata: Vec<u8>,
    body: Vec<u8>,
    /// The append being read, for its command rows' outcomes.
    segment: Segment,
}

/// The events read since the last position command rows were bound at: one append's. Its
/// first position is known once the page has passed the end of an append (`None` before).
#[derive(Default)]
struct Segment {
    start: Option<i64>,
    /// Each event read since (position, stream, stream version).
    events: Vec<(i64, String, i64)>,
}

impl Segment {
    fn saw(&mut self, position: i64, stream: &str, version: i64) {
        self.events.push((position, stream.to_owned(), version));
    }

    fn ended_at(&mut self, position: i64) {
        self.start = Some(position + 1);
        self.events.clear();
    }

    /// Each stream written from `first` on, with its last version there.
    fn streams_from(&self, first: i64) -> Vec<(&str, i64)> {
        let mut streams: Vec<(&str, i64)> = Vec::new();
        for (_, stream, version) in self.events.iter().filter(|(position, ..)| *position >= first) {
            match streams.iter_mut().find(|(name, _)| name == stream) {
                Some((_, last)) => *last = *version,
                None => streams.push((stream, *version)),
            }
        }
        streams
    }
}

impl<'p> EventCheck<'p> {
    fn new(property: &'p str) -> EventCheck<'p> {
        EventCheck {
            property,
            canonicalizers: [JsonbCanonicalizer::new(Canonical::V1), JsonbCanonicalizer::new(Canonical::Jcs)],
            payload: Vec::with_capacity(1024),
            metadata: Vec::with_capacity(1024),
            body: Vec::with_capacity(4096),
            segment: Segment::default(),
        }
    }

    /// Whether the event's stored hash is the one recomputed from `previous` and its fields, and
    /// whether the command rows bound at its position say what the log says.
    fn check(
        &mut self,
        row: &PgRow,
        position: i64,
        previous: &[u8; 32],
        previous_format: i16,
        postings: &[(i64, &str, i64)],
        commands: &[BoundCommand],
    ) -> Result<Checked, String> {
        let text = |error: sqlx::Error| error.to_string();
        let event_id: Uuid = row.try_get(4).map_err(text)?;
        let fields = StoredFields {
            property: self.property,
            stream: row.try_get(2).map_err(text)?,
            event_id: &event_id,
            event_type: row.try_get(5).map_err(text)?,
            schema_version: row.try_get(6).map_err(text)?,
        };
        let stream_version: i64 = row.try_get(3).map_err(text)?;
        let payload = jsonb_text(row, 7).map_err(|error| error.to_string())?;
        let metadata = jsonb_text(row, 8).map_err(|error| error.to_string())?;
        let micros = micros_of(row.try_get(9).map_err(text)?)?;
        let stored: &[u8] = row.try_get(10).map_err(text)?;
        let stored: [u8; 32] = stored.try_into().map_err(|_| format!("hash of position {position} is not 32 bytes"))?;
        let format: i16 = row.try_get(11).map_err(text)?;
        if format < previous_format {
            return Err(format!("chain format {format} after format {previous_format}"));
        }
        let form = match format {
            1 => Canonical::V1,
            2 => Canonical::Jcs,
            other => return Err(format!("unknown chain format {other}")),
        };
        let postings = || postings.iter().map(|&(_, account, amount_cents)| (account, amount_cents));
        let link = match (format, commands.first()) {
            (2, Some(command)) => {
                let append_id = command.append_id.as_ref().ok_or("an accepted command without append id")?;
                let reply = command.reply_sha256.as_deref().ok_or("an accepted command without reply")?;
                let reply_sha256: [u8; 32] = reply.try_into().map_err(|_| "a reply digest that is not 32 bytes")?;
                let mut bound: Vec<(&str, &[u8])> =
                    commands.iter().map(|command| (command.command_id.as_str(), command.request_hash.as_slice())).collect();
                bound.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                Some(AppendLink { append_id, commands: bound, reply_sha256 })
            }
            _ => None,
        };
        let hash_of = |body: &mut Vec<u8>, payload: &[u8], metadata: &[u8]| -> Result<[u8; 32], String> {
            match form {
                Canonical::V1 => {
                    chain::write_body_v1(body, &fields, payload, metadata, postings());
                    Ok(chain::chain_step_v1(previous, position, micros, stream_version, body))
                }
                Canonical::Jcs => {
                    chain::event_entry_start(body, &fields, payload, metadata, postings(), link.as_ref())?;
                    Ok(chain::event_entry_hash(body, position, previous, micros, stream_version))
                }
            }
        };

        self.payload.clear();
        self.metadata.clear();
        let canonicalizer = &mut self.canonicalizers[usize::from(form == Canonical::Jcs)];
        let shortcut = canonicalizer.write(payload, &mut self.payload).is_some()
            && canonicalizer.write(metadata, &mut self.metadata).is_some();
        let mut verified = shortcut && hash_of(&mut self.body, &self.payload, &self.metadata)? == stored;
        if !verified {
            // The definition: decode the stored JSON and encode it canonically.
            let canonical = |text: &[u8]| -> Result<Vec<u8>, String> {
                let value: serde_json::Value = serde_json::from_slice(text).map_err(|error| error.to_string())?;
                chain::canonical(&value, form).map_err(|error| error.to_string())
            };
            let (payload, metadata) = (canonical(payload)?, canonical(metadata)?);
            verified = hash_of(&mut self.body, &payload, &metadata)? == stored;
            if verified && shortcut {
                tracing::warn!(position, "the canonical JSON shortcut differed from the definition; the definition verified");
            }
        }
        if !verified {
            return Ok(Checked::Mismatch);
        }
        self.segment.saw(position, fields.stream, stream_version);
        for command in commands {
            if let Some(what) = outcome_problem(command, position, &stored, micros, &self.segment) {
                return Ok(Checked::CommandNotBound(what));
            }
        }
        if !commands.is_empty() {
            self.segment.ended_at(position);
        }
        Ok(Checked::Verified(stored, format))
    }
}

/// What is wrong with a command row's stored outcome, bound at `position` whose stored hash,
/// time and stream version are given; `None` when it says what the log says.
fn outcome_problem(command: &BoundCommand, position: i64, hash: &[u8; 32], micros: i64, segment: &Segment) -> Option<String> {
    let id = &command.command_id;
    let Some(outcome) = &command.outcome else { return Some(format!("command {id} has no stored outcome")) };
    let outcome: StoredOutcome = match serde_json::from_str(outcome) {
        Ok(outcome) => outcome,
        Err(error) => return Some(format!("command {id}: stored outcome undecodable: {error}")),
    };
    if outcome.last_position != position || outcome.first_position > position || outcome.first_position < 1 {
        return Some(format!(
            "command {id} is bound at position {position} but its stored outcome says positions {}..={}",
            outcome.first_position, outcome.last_position
        ));
    }
    let mut hash_hex = [0u8; 64];
    hex::encode_to_slice(hash, &mut hash_hex).expect("64 hex digits for 32 bytes");
    if outcome.last_hash.as_bytes() != hash_hex || outcome.recorded_at_micros != micros {
        return Some(format!("command {id}: its stored outcome names another hash or time than position {position}"));
    }
    if command.append_id != Some(outcome.append_id) {
        return Some(format!("command {id}: its stored outcome names another append"));
    }
    // What a replay answers is rebuilt from these: the append's first position and each
    // stream's version after it (the insider pass: an outcome edited to positions 7..=9 and a
    // cage at version 77 was replayed so, and verified).
    // An append's events follow the last position command rows were bound at (appends without
    // command rows, which only the store's own callers make, can come between).
    if segment.start.is_some_and(|start| outcome.first_position < start) {
        return Some(format!(
            "command {id}: its stored outcome says positions {}..={position}, reaching before its append's events (from {} at the earliest)",
            outcome.first_position,
            segment.start.unwrap_or_default()
        ));
    }
    for (stream, version) in segment.streams_from(outcome.first_position) {
        let named: Vec<i64> = outcome.stream_versions.iter().filter(|(name, _)| name == stream).map(|(_, version)| *version).collect();
        if named != [version] {
            return Some(format!("command {id}: its stored outcome does not name {stream} once at version {version}, the version its append left"));
        }
    }
    let mut names: Vec<&str> = outcome.stream_versions.iter().map(|(name, _)| name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|pair| pair[0] == pair[1]) || outcome.stream_versions.iter().any(|(_, version)| *version < 0) {
        return Some(format!("command {id}: its stored outcome names a stream twice or a negative version"));
    }
    None
}

fn micros_of(recorded_at: OffsetDateTime) -> Result<i64, String> {
    i64::try_from(recorded_at.unix_timestamp_nanos() / 1_000).map_err(|_| "recorded_at out of range".to_owned())
}

/// A stored projection row that is not what the events give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectionDifference {
    /// The projection (`account_balances`, `player_sessions`, `player_departure_log`,
    /// `patron_daily_cash`, `credit_lines`).
    pub projection: &'static str,
    /// The row's key (an account, a player, a player and day).
    pub key: String,
    /// What is stored, and what the events give (`-` for no row).
    pub stored: String,
    pub recomputed: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Session {
    table_id: Option<String>,
    seat: Option<i32>,
    game_key: Option<String>,
    seated_at_ms: Option<i64>,
    seated_event_id: Option<Uuid>,
}

/// (seq, game_key, table_id, amount_left_cents, departed_at_ms) of a kept departure.
type DepartureEntry = (i64, String, String, i64, i64);

/// The inline projections as the events give them, op after op: the definition that
/// `chipledger_apply_projection_ops` (sql/fn_chipledger_apply_projection_ops.sql) follows op by op
/// and `chipledger_append`'s set-based step for table play's ops follows per group; the balances
/// as sums of postings.
#[derive(Default)]
struct Recomputed {
    balances: BTreeMap<String, i64>,
    sessions: BTreeMap<String, Session>,
    /// Per player, oldest first.
    departures: BTreeMap<String, Vec<DepartureEntry>>,
    cash: BTreeMap<(String, String), (i64, i64)>,
    credit: BTreeMap<String, (i64, i64)>,
}

impl Recomputed {
    fn apply(&mut self, op: ProjectionOp) {
        match op {
            ProjectionOp::Seated { player_id, table_id, seat, game_key, at_ms, event_id } => {
                self.sessions.insert(
                    player_id,
                    Session {
                        table_id: Some(table_id),
                        seat: Some(seat),
                        game_key: Some(game_key),
                        seated_at_ms: at_ms,
                        seated_event_id: Some(event_id),
                    },
                );
            }
            ProjectionOp::Departed { player_id, table_id, game_key, amount_left_cents, at_ms } => {
                if let Some(session) = self.sessions.get_mut(&player_id) {
                    *session = Session { table_id: None, seat: None, game_key: None, seated_at_ms: None, seated_event_id: None };
                }
                let log = self.departures.entry(player_id).or_default();
                let seq = log.last().map_or(0, |entry| entry.0) + 1;
                log.push((seq, game_key, table_id, amount_left_cents, at_ms));
                if log.len() > DEPARTURES_KEPT {
                    let drop = log.len() - DEPARTURES_KEPT;
                    log.drain(..drop);
                }
            }
            ProjectionOp::DepartureReversed { player_id, table_id, at_ms } => {
                if let Some(log) = self.departures.get_mut(&player_id) {
                    log.retain(|entry| !(entry.2 == table_id && entry.4 == at_ms));
                }
            }
            ProjectionOp::Cash { player_id, gaming_day, cash_in_cents, cash_out_cents } => {
                let day = self.cash.entry((player_id, gaming_day)).or_default();
                day.0 += cash_in_cents;
                day.1 += cash_out_cents;
            }
            ProjectionOp::CreditLimit { player_id, limit_cents } => self.credit.entry(player_id).or_default().0 = limit_cents,
            ProjectionOp::Marker { player_id, outstanding_delta_cents } => {
                self.credit.entry(player_id).or_default().1 += outstanding_delta_cents;
            }
        }
    }
}

async fn verify_projections(
    store: &Store,
    property: &str,
    projection: &dyn InlineProjection,
) -> Result<Vec<ProjectionDifference>, StoreError> {
    let mut recomputed = Recomputed::default();
    // One snapshot for the events and every stored projection: read at different moments while
    // commands are written, they differed where nothing was wrong (an event seen and its
    // projection row not yet, or the other way round). Not read only: the report's checkpoint
    // row is made at 0 when the report has none yet.
    let mut snapshot = store.pool().begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ").await?;
    // The table/day report as stored, with its checkpoint (its catch-up may run meanwhile):
    // recomputed below from the events up to that checkpoint (the audit pass wrote a report row
    // for a table that never existed, with the application role; unseen).
    let report_checkpoint: i64 =
        sqlx::query_scalar("SELECT chipledger_report_table_day_checkpoint($1, false)").bind(property).fetch_one(&mut *snapshot).await?;
    let stored_report: Vec<crate::report::TableDayRow> =
        sqlx::query_as("SELECT * FROM chipledger_report_table_day_rows($1)").bind(property).fetch_all(&mut *snapshot).await?;
    let mut table_days = crate::report::TableDays::default();
    let mut ops = Vec::new();
    let mut after = 0;
    loop {
        let page = crate::read::read_range_on(&mut snapshot, property, after, i64::MAX, crate::event::MAX_PAGE).await?;
        let Some(last) = page.last().map(|event| event.position) else { break };
        for event in page {
            for posting in &event.postings {
                *recomputed.balances.entry(posting.account.clone()).or_default() += posting.amount_cents;
            }
            let metadata: EventMetadata = event.typed_metadata().unwrap_or_default();
            if event.position <= report_checkpoint {
                let postings = event.postings.iter().map(|p| (p.account.as_str(), p.amount_cents));
                table_days.add(event.position, &event.stream, &metadata.gaming_day, postings);
            }
            let new_event = NewEvent {
                event_id: event.event_id,
                event_type: event.event_type,
                schema_version: event.schema_version,
                payload: (&event.payload).into(),
                metadata,
                postings: event.postings.iter().map(|p| NewPosting { account: p.account.clone(), amount_cents: p.amount_cents }).collect(),
            };
            projection.project(&event.stream, &new_event, &mut ops);
            for op in ops.drain(..) {
                recomputed.apply(op);
            }
        }
        after = last;
    }
    let pool = &mut *snapshot;
    let mut differences = Vec::new();
    let mut compare = |projection: &'static str, stored: BTreeMap<String, String>, recomputed: BTreeMap<String, String>| {
        let keys: std::collections::BTreeSet<&String> = stored.keys().chain(recomputed.keys()).collect();
        for key in keys {
            let (stored, recomputed) = (stored.get(key), recomputed.get(key));
            if stored != recomputed {
                differences.push(ProjectionDifference {
                    projection,
                    key: key.clone(),
                    stored: stored.cloned().unwrap_or_else(|| "-".into()),
                    recomputed: recomputed.cloned().unwrap_or_else(|| "-".into()),
                });
            }
        }
    };
    let stored: Vec<(String, i64)> =
        sqlx::query_as("SELECT * FROM chipledger_account_balances($1)").bind(property).fetch_all(&mut *pool).await?;
    // An account row at zero and no row are the same balance.
    let nonzero = |rows: Vec<(String, i64)>| rows.into_iter().filter(|row| row.1 != 0).map(|(k, v)| (k, v.to_string())).collect();
    compare("account_balances", nonzero(stored), nonzero(recomputed.balances.into_iter().collect()));

    type SessionRow = (String, Option<String>, Option<i32>, Option<String>, Option<i64>, Option<Uuid>);
    let stored: Vec<SessionRow> =
        sqlx::query_as("SELECT * FROM chipledger_player_sessions($1)").bind(property).fetch_all(&mut *pool).await?;
    let stored = stored
        .into_iter()
        .map(|(player, table_id, seat, game_key, seated_at_ms, seated_event_id)| {
            (player, format!("{:?}", Session { table_id, seat, game_key, seated_at_ms, seated_event_id }))
        })
        .collect();
    let sessions = recomputed.sessions.into_iter().map(|(player, session)| (player, format!("{session:?}"))).collect();
    compare("player_sessions", stored, sessions);

    let stored: Vec<(String, i64, String, String, i64, i64)> =
        sqlx::query_as("SELECT * FROM chipledger_departure_log($1)").bind(property).fetch_all(&mut *pool).await?;
    let stored = stored
        .into_iter()
        .map(|(player, seq, game_key, table_id, amount, at)| (format!("{player}#{seq}"), format!("{game_key} {table_id} {amount} {at}")))
        .collect();
    let departures = recomputed
        .departures
        .into_iter()
        .flat_map(|(player, log)| {
            log.into_iter()
                .map(move |(seq, game_key, table_id, amount, at)| (format!("{player}#{seq}"), format!("{game_key} {table_id} {amount} {at}")))
        })
        .collect();
    compare("player_departure_log", stored, departures);

    let stored: Vec<(String, String, i64, i64)> =
        sqlx::query_as("SELECT * FROM chipledger_daily_cash_all($1)").bind(property).fetch_all(&mut *pool).await?;
    let stored = stored.into_iter().map(|(player, day, cash_in, cash_out)| (format!("{player} {day}"), format!("in {cash_in} out {cash_out}"))).collect();
    let cash = recomputed
        .cash
        .into_iter()
        .map(|((player, day), (cash_in, cash_out))| (format!("{player} {day}"), format!("in {cash_in} out {cash_out}")))
        .collect();
    compare("patron_daily_cash", stored, cash);

    let stored: Vec<(String, i64, i64)> =
        sqlx::query_as("SELECT * FROM chipledger_credit_lines($1)").bind(property).fetch_all(&mut *pool).await?;
    let stored = stored.into_iter().map(|(player, limit, outstanding)| (player, format!("limit {limit} outstanding {outstanding}"))).collect();
    let credit = recomputed
        .credit
        .into_iter()
        .map(|(player, (limit, outstanding))| (player, format!("limit {limit} outstanding {outstanding}")))
        .collect();
    compare("credit_lines", stored, credit);

    let row = |r: crate::report::TableDayRow| {
        (
            format!("{} {}", r.table_id, r.gaming_day),
            format!("events {} movements {} in {} out {} last {}", r.event_count, r.movement_count, r.chips_in_cents, r.chips_out_cents, r.last_position),
        )
    };
    compare("report_table_day", stored_report.into_iter().map(row).collect(), table_days.into_rows().into_iter().map(row).collect());

    // The index of event ids (a correction finds the event it reverses through it: the audit
    // pass pointed one id at another event) and the streams' versions, against the events.
    let index: Vec<(String, String, String, String)> =
        sqlx::query_as("SELECT * FROM chipledger_index_differences($1)").bind(property).fetch_all(&mut *pool).await?;
    for (projection, key, stored, recomputed) in index {
        let projection = if projection == "event_ids" { "event_ids" } else { "streams" };
        differences.push(ProjectionDifference { projection, key, stored, recomputed });
    }
    snapshot.commit().await?;
    Ok(differences)
}
