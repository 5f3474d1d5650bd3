//! Signed checkpoints: every interval, for each property whose chains moved, chipledgerd signs
//! the heads with its Ed25519 key and hands the document to the write-once sink directory (and a
//! convenience copy to the database, which the fetch RPC serves). See chipledger_store::checkpoint.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chipledger_store::checkpoint::{CheckpointKey, CheckpointSink, KeyError};
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
}

/// Signs and keeps checkpoints; shared by the periodic task and the RPCs.
pub struct Checkpointer {
    /// Every shard's chains are checkpointed, each in its own database.
    router: Arc<Router>,
    key: Option<CheckpointKey>,
    previous_public_keys: Vec<[u8; 32]>,
    sink: Option<CheckpointSink>,
    interval: Duration,
    /// The heads last signed per property: a checkpoint is only made when they moved.
    signed: Mutex<HashMap<String, (i64, i64)>>,
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
    /// database copy is a convenience) and return it.
    pub async fn sign_now(&self, property: &str) -> Result<SignedCheckpoint, CheckpointingError> {
        let key = self.key.as_ref().ok_or(CheckpointingError::NoKey)?;
        let store = self.router.primary(property);
        let (events, refusals) = store.heads(property).await?;
        let signed = key.sign(property, events, refusals, now_unix_ms())?;
        if let Some(sink) = &self.sink {
            let sink = sink.clone();
            let document = signed.clone();
            tokio::task::spawn_blocking(move || sink.keep(&document).map(drop).map_err(|source| (sink, source)))
                .await
                .map_err(|error| CheckpointingError::Sink { dir: "?".into(), source: std::io::Error::other(error) })?
                .map_err(|(sink, source)| CheckpointingError::Sink { dir: sink.dir().display().to_string(), source })?;
        }
        store.record_checkpoint(&signed).await?;
        if let Ok(mut signed_heads) = self.signed.lock() {
            signed_heads.insert(property.to_owned(), (events.0, refusals.0));
        }
        Ok(signed)
    }

    /// One round: a checkpoint for every property whose chains moved since the last one, in
    /// every shard.
    pub async fn round(&self) -> Result<usize, CheckpointingError> {
        let mut made = 0;
        for store in self.router.primaries() {
            for (property, position, refusal_seq) in store.properties().await? {
                let last = self.signed.lock().ok().and_then(|signed| signed.get(&property).copied());
                if last == Some((position, refusal_seq)) {
                    continue;
                }
                self.sign_now(&property).await?;
                made += 1;
            }
        }
        Ok(made)
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

fn now_unix_ms() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}
