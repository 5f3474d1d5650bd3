//! Signed checkpoints: every interval, for each property whose chains moved, chipledgerd signs
//! the heads with its Ed25519 key and hands the document to the write-once sink directory (and a
//! convenience copy to the database, which the fetch RPC serves). See chipledger_store::checkpoint.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chipledger_store::checkpoint::{Checkpoint, CheckpointKey, CheckpointSink, Kept, KeyError};
use chipledger_store::{SignedCheckpoint, StoreError};

use crate::config::CheckpointSettings;
use crate::shards::Router;

/// Why a checkpoint could not be signed and kept.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointingError {
    #[error("no checkpoint signing key is configured ([checkpoints] key_file)")]
    NoKey,
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("checkpoint sink {dir}: {source}")]
    Sink { dir: String, source: std::io::Error },
    /// The log no longer agrees with a checkpoint signed before: rewritten, truncated or
    /// restored to an earlier state. Nothing more is signed over it (the insider pass: the
    /// server signed a rewritten head at a position it had signed already, and the auditor's
    /// fetch kept the forgery).
    #[error("the log disagrees with the checkpoint signed at position {position}, refusal {refusal_seq}: {reason}; nothing is signed over it (verify the chain against the kept checkpoints)")]
    Disagrees { position: i64, refusal_seq: i64, reason: String },
    /// Entries this process wrote since the last checkpoint are no longer in the log as it
    /// wrote them: taken out, and perhaps written over by later entries at the same positions.
    /// Nothing is signed over it again in this process's life (the operations pass: a tail cut
    /// and written over was signed at the next tick, and once reported, signed all the same).
    #[error("entries this server wrote are not in the log as written: {reason}; nothing more is signed for this property by this process (verify the chain against the kept checkpoints, then restart)")]
    LostWritten { reason: String },
    /// Another document is kept for the same heads and key: two signatures over different
    /// hashes at one position are proof the log was rewritten (or the key is in other hands).
    #[error("checkpoint sink {dir}: another checkpoint is kept for position {position}, refusal {refusal_seq}, with other hashes")]
    SinkConflict { dir: String, position: i64, refusal_seq: i64 },
}

impl CheckpointingError {
    /// The same refusal, answered again for a property this process signs nothing more for
    /// (only the refusals that say the log was changed are kept: [`Checkpointer::sign_now`]).
    fn again(&self) -> CheckpointingError {
        match self {
            CheckpointingError::Disagrees { position, refusal_seq, reason } => {
                CheckpointingError::Disagrees { position: *position, refusal_seq: *refusal_seq, reason: reason.clone() }
            }
            CheckpointingError::SinkConflict { dir, position, refusal_seq } => {
                CheckpointingError::SinkConflict { dir: dir.clone(), position: *position, refusal_seq: *refusal_seq }
            }
            CheckpointingError::LostWritten { reason } => CheckpointingError::LostWritten { reason: reason.clone() },
            CheckpointingError::NoKey | CheckpointingError::Store(_) | CheckpointingError::Sink { .. } => {
                CheckpointingError::LostWritten { reason: self.to_string() }
            }
        }
    }

    /// A refusal that says the log was changed: nothing is signed over it again.
    fn log_changed(&self) -> bool {
        matches!(self, CheckpointingError::Disagrees { .. } | CheckpointingError::LostWritten { .. } | CheckpointingError::SinkConflict { .. })
    }
}

/// Signs and keeps checkpoints; shared by the periodic task and the RPCs.
pub struct Checkpointer {
    /// Every shard's chains are checkpointed, each in its own database.
    router: Arc<Router>,
    key: Option<CheckpointKey>,
    previous_public_keys: Vec<[u8; 32]>,
    sink: Option<CheckpointSink>,
    interval: Duration,
    /// The checkpoint last signed (or, after a start, last kept in the database) per property:
    /// a checkpoint is only made when the heads moved, and only over a log that still agrees
    /// with it.
    signed: Mutex<HashMap<String, Checkpoint>>,
    /// Per property, what this process wrote since the last checkpoint signed.
    witnessed: Mutex<HashMap<String, Witnessed>>,
    /// Per property, why this process signs nothing more for it: once the log was found not to
    /// agree with a checkpoint or with what it wrote, no later round signs over it (a cut tail
    /// written over by new entries agrees with itself).
    refused: Mutex<HashMap<String, CheckpointingError>>,
}

/// The last event of every append, and every refusal, this process wrote for a property since
/// the checkpoint it last signed: each must still be in the log, at its position with its hash,
/// when the next is signed. The latest [`MAX_WITNESSED`] of each are kept.
#[derive(Debug, Default, Clone)]
struct Witnessed {
    events: std::collections::VecDeque<(i64, [u8; 32])>,
    refusals: std::collections::VecDeque<(i64, [u8; 32])>,
}

/// Entries of each kind remembered per property between two checkpoints (a checkpoint every
/// 300 s at 200 appends a second is 60,000).
const MAX_WITNESSED: usize = 100_000;

fn remember(entries: &mut std::collections::VecDeque<(i64, [u8; 32])>, at: i64, hash: [u8; 32]) {
    if entries.len() >= MAX_WITNESSED {
        entries.pop_front();
    }
    entries.push_back((at, hash));
}

impl std::fmt::Debug for Checkpointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpointer").field("key", &self.key).field("sink", &self.sink).finish()
    }
}

impl Checkpointer {
    /// From the configuration: load (or, embedded, make) the key; the sink directory.
    pub fn from_settings(router: Arc<Router>, settings: &CheckpointSettings) -> Result<Checkpointer, KeyError> {
        let key = match &settings.key_file {
            Some(path) if settings.generate_key => Some(CheckpointKey::load_or_generate(path)?),
            Some(path) => Some(CheckpointKey::load(path)?),
            None => None,
        };
        Ok(Checkpointer {
            router,
            key,
            previous_public_keys: settings.previous_public_keys.clone(),
            sink: settings.dir.as_deref().map(CheckpointSink::new),
            interval: settings.interval,
            signed: Mutex::new(HashMap::new()),
            witnessed: Mutex::new(HashMap::new()),
            refused: Mutex::new(HashMap::new()),
        })
    }

    /// A checkpointer with this key and sink (tests, tools).
    pub fn new(router: Arc<Router>, key: CheckpointKey, sink: Option<&Path>, interval: Duration) -> Checkpointer {
        Checkpointer {
            router,
            key: Some(key),
            previous_public_keys: Vec::new(),
            sink: sink.map(CheckpointSink::new),
            interval,
            signed: Mutex::new(HashMap::new()),
            witnessed: Mutex::new(HashMap::new()),
            refused: Mutex::new(HashMap::new()),
        }
    }

    pub fn key(&self) -> Option<&CheckpointKey> {
        self.key.as_ref()
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    pub fn sink_dir(&self) -> Option<&Path> {
        self.sink.as_ref().map(CheckpointSink::dir)
    }

    /// The public keys this server signs with now and signed with before a rotation.
    pub fn own_public_keys(&self) -> Vec<[u8; 32]> {
        self.key.iter().map(CheckpointKey::public_key).chain(self.previous_public_keys.iter().copied()).collect()
    }

    /// Sign the property's heads now, keep the checkpoint (sink first: it is the evidence, the
    /// database copy is a convenience) and return it. The log must still agree with the last
    /// checkpoint signed for the property (`Disagrees` otherwise, and nothing is signed).
    pub async fn sign_now(&self, property: &str) -> Result<SignedCheckpoint, CheckpointingError> {
        let key = self.key.as_ref().ok_or(CheckpointingError::NoKey)?;
        if let Some(refused) = self.refused.lock().ok().and_then(|refused| refused.get(property).map(CheckpointingError::again)) {
            return Err(refused);
        }
        let signing = self.check_and_sign(key, property).await;
        self.remember_refusal(property, signing.as_ref().err());
        signing
    }

    /// A refusal that says the log was changed is kept for the property: nothing more is signed.
    fn remember_refusal(&self, property: &str, error: Option<&CheckpointingError>) {
        if let Some(error) = error.filter(|error| error.log_changed())
            && let Ok(mut refused) = self.refused.lock()
        {
            refused.entry(property.to_owned()).or_insert_with(|| error.again());
        }
    }

    /// The checks of a signing without the signing, for a round whose heads did not move: a
    /// rewrite that keeps the heads' positions is found at the next round, not at the next
    /// append (the wave-2 pass).
    async fn check_only(&self, property: &str) -> Result<(), CheckpointingError> {
        if let Some(refused) = self.refused.lock().ok().and_then(|refused| refused.get(property).map(CheckpointingError::again)) {
            return Err(refused);
        }
        let store = self.router.primary(property);
        let checked = self.check(&store, property).await.map(|_| ());
        self.remember_refusal(property, checked.as_ref().err());
        checked
    }

    /// The log against the last checkpoint signed and against every entry this process wrote
    /// since; the entries checked are returned, with that checkpoint.
    async fn check(&self, store: &chipledger_store::Store, property: &str) -> Result<(Witnessed, Option<Checkpoint>), CheckpointingError> {
        let last = self.last_signed(property).await?;
        if let Some(last) = &last {
            if let Some(reason) = store.checkpoint_disagreement(last).await? {
                return Err(CheckpointingError::Disagrees { position: last.position, refusal_seq: last.refusal_seq, reason });
            }
        }
        // Every entry this process wrote itself since: entries written after the last
        // checkpoint and taken out again are not signed over (the wave-2 pass: two refusals
        // deleted, the head set back, and the next checkpoint vouched for it), nor when later
        // entries have been written in their place (the operations pass: the latest entry it
        // wrote, alone, was a later one, and agreed).
        let written = self.witnessed(property);
        let events: Vec<_> = written.events.iter().copied().collect();
        let refusals: Vec<_> = written.refusals.iter().copied().collect();
        if let Some(reason) = store.written_missing(property, &events, &refusals).await? {
            return Err(CheckpointingError::LostWritten { reason });
        }
        Ok((written, last))
    }

    async fn check_and_sign(&self, key: &CheckpointKey, property: &str) -> Result<SignedCheckpoint, CheckpointingError> {
        let store = self.router.primary(property);
        // The heads are read before the entries to check are taken: everything this process
        // wrote up to the heads signed is among those checked (the wave-2 pass: heads read after
        // a check held up by a lock covered a tail cut and written over meanwhile, and the
        // entries written meanwhile were forgotten unchecked).
        let (events, refusals) = store.heads(property).await?;
        let (checked, last) = self.check(&store, property).await?;
        // Signed at the database's clock, the one events are recorded by (R-CHIP-6: with this
        // host's clock behind it, a checkpoint was dated before the events it covers), and no
        // earlier than the last checkpoint (the time pass: restarted with the clock an hour back,
        // a checkpoint was signed before the one it follows).
        let (_, database_ms, _) = store.database_clock_ms(crate::ledger::now_unix_ms).await?;
        let signed_at_ms = database_ms.max(last.as_ref().map_or(0, |last| last.signed_at_ms));
        let signed = key.sign(property, events, refusals, signed_at_ms)?;
        if let Some(sink) = &self.sink {
            let sink = sink.clone();
            let document = signed.clone();
            let dir = sink.dir().display().to_string();
            let kept = tokio::task::spawn_blocking(move || sink.keep(&document))
                .await
                .map_err(|error| CheckpointingError::Sink { dir: dir.clone(), source: std::io::Error::other(error) })?
                .map_err(|source| CheckpointingError::Sink { dir: dir.clone(), source })?;
            if let Kept::Conflict(_) = kept {
                return Err(CheckpointingError::SinkConflict { dir, position: events.0, refusal_seq: refusals.0 });
            }
        }
        if !store.record_checkpoint(&signed).await? {
            // A copy for the same heads and key is in the database already: the server's own (a
            // second call at the same heads), or one somebody else put there.
            let ours = self.own_public_keys();
            let theirs = store.latest_checkpoints(property, 64).await?;
            let same = theirs.iter().find(|kept| {
                let c = &kept.checkpoint;
                (c.position, c.refusal_seq, &c.key_id) == (events.0, refusals.0, &signed.checkpoint.key_id)
            });
            if let Some(kept) = same
                && (kept.verify(&ours).is_err() || (kept.checkpoint.hash, kept.checkpoint.refusal_hash) != (events.1, refusals.1))
            {
                crate::telemetry::metrics().checkpoint_failures.add(1, &[]);
                tracing::error!(
                    property,
                    position = events.0,
                    refusal_seq = refusals.0,
                    "the database keeps another document for this checkpoint (not signed by this server, or over other hashes): the checkpoint directory's copy is the evidence"
                );
            }
        }
        if let Ok(mut signed_heads) = self.signed.lock() {
            signed_heads.insert(property.to_owned(), signed.checkpoint.clone());
        }
        // What was checked and the checkpoint covers need not be remembered: it is signed.
        // Entries written since the check stay for the next (also at or before these heads: a
        // rewrite after the heads were read).
        if let Some(witnessed) = self.witnessed.lock().ok().as_mut().and_then(|witnessed| witnessed.get_mut(property)) {
            witnessed.events.retain(|entry| entry.0 > events.0 || !checked.events.contains(entry));
            witnessed.refusals.retain(|entry| entry.0 > refusals.0 || !checked.refusals.contains(entry));
        }
        Ok(signed)
    }

    /// The last checkpoint this server signed for the property: in memory, or after a start the
    /// latest in its checkpoint directory (the evidence) that one of its own keys signed, else
    /// the latest such copy in the database (the wave-2 pass: copies the application role kept,
    /// or a superuser deleted, had left a restarted server nothing to check against).
    async fn last_signed(&self, property: &str) -> Result<Option<Checkpoint>, CheckpointingError> {
        if let Some(last) = self.signed.lock().ok().and_then(|signed| signed.get(property).cloned()) {
            return Ok(Some(last));
        }
        let ours = self.own_public_keys();
        let in_sink = match &self.sink {
            Some(sink) => {
                let (sink, property_id, keys) = (sink.clone(), property.to_owned(), ours.clone());
                let dir = sink.dir().display().to_string();
                tokio::task::spawn_blocking(move || sink.latest_of(&property_id, &keys))
                    .await
                    .map_err(|error| CheckpointingError::Sink { dir: dir.clone(), source: std::io::Error::other(error) })?
                    .map_err(|source| CheckpointingError::Sink { dir, source })?
            }
            None => None,
        };
        let last = match in_sink {
            Some(signed) => Some(signed.checkpoint),
            None => {
                let kept = self.router.primary(property).latest_checkpoints(property, 64).await?;
                kept.into_iter().find(|signed| signed.verify(&ours).is_ok()).map(|signed| signed.checkpoint)
            }
        };
        if let (Some(last), Ok(mut signed)) = (&last, self.signed.lock()) {
            signed.entry(property.to_owned()).or_insert_with(|| last.clone());
        }
        Ok(last)
    }

    /// One round: a checkpoint for every property whose chains moved since the last one, in
    /// every shard. A property that cannot be signed does not hold up the others (the wave-2
    /// pass: one property's refusal had stopped every property after it); the first failure is
    /// answered after the round.
    pub async fn round(&self) -> Result<usize, CheckpointingError> {
        let mut made = 0;
        let mut failed = None;
        for store in self.router.primaries() {
            for (property, position, refusal_seq) in store.properties().await? {
                let last = self.signed.lock().ok().and_then(|signed| signed.get(&property).map(|c| (c.position, c.refusal_seq)));
                // Heads that did not move are checked all the same, and not signed again.
                let done = if last == Some((position, refusal_seq)) { self.check_only(&property).await } else { self.sign_now(&property).await.map(|_| made += 1) };
                if let Err(error) = done {
                    tracing::error!(property, %error, "could not sign a checkpoint of this property");
                    failed.get_or_insert(error);
                }
            }
        }
        match failed {
            Some(error) => Err(error),
            None => Ok(made),
        }
    }

    /// The last event of an append this process wrote to the property (position and hash).
    pub fn witness_event(&self, property: &str, position: i64, hash: [u8; 32]) {
        if let Ok(mut witnessed) = self.witnessed.lock() {
            remember(&mut witnessed.entry(property.to_owned()).or_default().events, position, hash);
        }
    }

    /// A refusal this process recorded for the property (sequence and hash).
    pub fn witness_refusal(&self, property: &str, refusal_seq: i64, hash: [u8; 32]) {
        if let Ok(mut witnessed) = self.witnessed.lock() {
            remember(&mut witnessed.entry(property.to_owned()).or_default().refusals, refusal_seq, hash);
        }
    }

    /// What this process wrote since the last checkpoint, as it stands now.
    fn witnessed(&self, property: &str) -> Witnessed {
        let witnessed = self.witnessed.lock();
        witnessed.as_ref().ok().and_then(|witnessed| witnessed.get(property)).cloned().unwrap_or_default()
    }

    /// Rounds every interval until `stop` resolves; a failed round is logged and retried at the
    /// next tick (the chain itself loses nothing meanwhile).
    pub async fn run(self: Arc<Self>, stop: impl Future<Output = ()>) {
        if self.key.is_none() {
            tracing::warn!("checkpoints are not signed: configure [checkpoints] key_file (docs/OPERATIONS.md)");
            return;
        }
        if self.sink.is_none() {
            tracing::warn!("signed checkpoints are kept only in the database: configure [checkpoints] dir");
        }
        let period = self.interval;
        crate::shutdown::every(period, stop, || async {
            match self.round().await {
                Ok(0) => {}
                Ok(made) => tracing::info!(made, "signed checkpoints"),
                Err(error) => {
                    crate::telemetry::metrics().checkpoint_failures.add(1, &[]);
                    tracing::error!(%error, "could not sign a checkpoint: the entries since the last kept checkpoint are not protected outside the database");
                }
            }
        })
        .await
    }
}

