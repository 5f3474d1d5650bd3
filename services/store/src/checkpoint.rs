//! Signed checkpoints: the heads of a property's chains, signed with an Ed25519 key, kept
//! outside the database.
//!
//! A hash chain has no secret: whoever can write the tables can rewrite an entry and recompute
//! every later hash and the head. A [`Checkpoint`] (event position and head hash, refusal
//! sequence and head hash, the time, the chain format) signed by chipledgerd's key and kept
//! where the database's writers cannot reach (a write-once directory, [`CheckpointSink`], and
//! the copies `chipledger checkpoints fetch` keeps) pins the log as it was: verification names
//! the last checkpoint the log still agrees with. Someone holding both write access to the
//! database and the signing key can still forge; see docs/OPERATIONS.md, "Threat model".
//!
//! What is signed is the RFC 8785 (JCS) form of the checkpoint object (field names as in
//! [`Checkpoint`], hashes in lowercase hex, `"type": "chipledger.checkpoint"`), so any Ed25519
//! and JCS library checks a kept document:
//!
//! ```text
//! {"checkpoint": {"chain_format": 2, "hash": "<hex>", "key_id": "<hex>", "position": n,
//!                 "property": "...", "refusal_hash": "<hex>", "refusal_seq": n,
//!                 "signed_at_ms": n, "type": "chipledger.checkpoint"},
//!  "public_key": "<hex, 32 bytes>", "signature": "<hex, 64 bytes>"}
//! ```

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::chain::{CHAIN_FORMAT, jcs};
use crate::error::StoreError;

const CHECKPOINT_TYPE: &str = "chipledger.checkpoint";

/// The heads of a property's chains at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub property: String,
    /// Event chain: last position and the hash there.
    pub position: i64,
    #[serde(with = "hex::serde")]
    pub hash: [u8; 32],
    /// Refusal chain: last sequence number and the hash there.
    pub refusal_seq: i64,
    #[serde(with = "hex::serde")]
    pub refusal_hash: [u8; 32],
    pub signed_at_ms: i64,
    pub chain_format: i16,
    /// Which key signed it ([`CheckpointKey::key_id`]).
    pub key_id: String,
    #[serde(rename = "type")]
    pub kind: String,
}

impl Checkpoint {
    /// The bytes signed: the JCS form of the checkpoint object.
    pub fn signed_bytes(&self) -> Result<Vec<u8>, StoreError> {
        let value = serde_json::to_value(self).map_err(|e| StoreError::InvalidRequest(e.to_string()))?;
        jcs(&value)
    }
}

/// A checkpoint with its signature and the public key that made it: a kept document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedCheckpoint {
    pub checkpoint: Checkpoint,
    #[serde(with = "hex::serde")]
    pub public_key: [u8; 32],
    #[serde(with = "hex::serde")]
    pub signature: [u8; 64],
}

/// Why a kept checkpoint is not to be trusted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CheckpointError {
    #[error("not a checkpoint document: {0}")]
    Malformed(String),
    #[error("the signature does not verify")]
    BadSignature,
    #[error("signed by key {found}, not by a trusted key")]
    UntrustedKey { found: String },
}

impl SignedCheckpoint {
    /// The document as kept (pretty JSON, one object).
    pub fn to_document(&self) -> String {
        serde_json::to_string_pretty(self).expect("a checkpoint serialises")
    }

    pub fn from_document(text: &str) -> Result<SignedCheckpoint, CheckpointError> {
        let signed: SignedCheckpoint = serde_json::from_str(text).map_err(|e| CheckpointError::Malformed(e.to_string()))?;
        if signed.checkpoint.kind != CHECKPOINT_TYPE {
            return Err(CheckpointError::Malformed(format!("type {:?}", signed.checkpoint.kind)));
        }
        Ok(signed)
    }

    /// The signature verifies with the document's own public key, and that key is one of
    /// `trusted` (the keys an operator pinned); with `trusted` empty only the signature counts.
    pub fn verify(&self, trusted: &[[u8; 32]]) -> Result<(), CheckpointError> {
        if self.checkpoint.key_id != key_id(&self.public_key) {
            return Err(CheckpointError::Malformed("key_id is not the public key's".into()));
        }
        let bytes = self.checkpoint.signed_bytes().map_err(|e| CheckpointError::Malformed(e.to_string()))?;
        verify_bytes(&self.public_key, &bytes, &self.signature, trusted)
    }
}

/// Whether `signature` over `bytes` verifies with `public_key`, one of `trusted` (any key when
/// `trusted` is empty): the check of [`SignedCheckpoint::verify`], for other signed evidence.
pub(crate) fn verify_bytes(public_key: &[u8; 32], bytes: &[u8], signature: &[u8; 64], trusted: &[[u8; 32]]) -> Result<(), CheckpointError> {
    let key = VerifyingKey::from_bytes(public_key).map_err(|e| CheckpointError::Malformed(e.to_string()))?;
    key.verify(bytes, &Signature::from_bytes(signature)).map_err(|_| CheckpointError::BadSignature)?;
    if !trusted.is_empty() && !trusted.contains(public_key) {
        return Err(CheckpointError::UntrustedKey { found: key_id(public_key) });
    }
    Ok(())
}

/// The id of a public key: the first 8 bytes of its SHA-256, in hex.
pub fn key_id(public_key: &[u8; 32]) -> String {
    hex::encode(&Sha256::digest(public_key)[..8])
}

/// chipledgerd's signing key (Ed25519), kept in a PKCS#8 PEM file (`openssl genpkey -algorithm
/// ed25519` makes one too).
pub struct CheckpointKey {
    signing: SigningKey,
}

impl std::fmt::Debug for CheckpointKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CheckpointKey({})", self.key_id())
    }
}

/// Why a key file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not an Ed25519 PKCS#8 PEM private key: {message}")]
    Format { path: PathBuf, message: String },
}

impl CheckpointKey {
    /// Load the key from `path`.
    pub fn load(path: &Path) -> Result<CheckpointKey, KeyError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io { path: path.to_owned(), source })?;
        let signing = SigningKey::from_pkcs8_pem(&text)
            .map_err(|error| KeyError::Format { path: path.to_owned(), message: error.to_string() })?;
        Ok(CheckpointKey { signing })
    }

    /// Load the key from `path`, or make a new one there first (file created new, mode 0600,
    /// fsynced) when there is none: the embedded mode's first start.
    pub fn load_or_generate(path: &Path) -> Result<CheckpointKey, KeyError> {
        if path.exists() {
            return CheckpointKey::load(path);
        }
        let io = |source| KeyError::Io { path: path.to_owned(), source };
        let mut seed = [0u8; 32];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").map_err(io)?, &mut seed).map_err(io)?;
        let signing = SigningKey::from_bytes(&seed);
        // PKCS#8 v1 (the seed alone), as `openssl genpkey` writes it: OpenSSL 3.0 reads it for the
        // documented `openssl pkey -pubout`, not the v2 form with the public key (the operations
        // pass could not pin the embedded key so).
        let pem = ed25519_dalek::pkcs8::KeypairBytes { secret_key: seed, public_key: None }
            .to_pkcs8_pem(Default::default())
            .map_err(|error| KeyError::Format { path: path.to_owned(), message: error.to_string() })?;
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).map_err(io)?;
        file.write_all(pem.as_bytes()).and_then(|()| file.sync_all()).map_err(io)?;
        sync_dir(path).map_err(io)?;
        Ok(CheckpointKey { signing })
    }

    pub fn public_key(&self) -> [u8; 32] {
        self.signing.verifying_key().to_bytes()
    }

    pub fn key_id(&self) -> String {
        key_id(&self.public_key())
    }

    /// Sign other evidence with the same key (archive digests, partition.rs).
    pub(crate) fn sign_bytes(&self, bytes: &[u8]) -> [u8; 64] {
        self.signing.sign(bytes).to_bytes()
    }

    /// Sign the heads of a property's chains as of `signed_at_ms`.
    pub fn sign(
        &self,
        property: &str,
        head: (i64, [u8; 32]),
        refusal_head: (i64, [u8; 32]),
        signed_at_ms: i64,
    ) -> Result<SignedCheckpoint, StoreError> {
        let checkpoint = Checkpoint {
            property: property.to_owned(),
            position: head.0,
            hash: head.1,
            refusal_seq: refusal_head.0,
            refusal_hash: refusal_head.1,
            signed_at_ms,
            chain_format: CHAIN_FORMAT,
            key_id: self.key_id(),
            kind: CHECKPOINT_TYPE.to_owned(),
        };
        let signature = self.signing.sign(&checkpoint.signed_bytes()?).to_bytes();
        Ok(SignedCheckpoint { checkpoint, public_key: self.public_key(), signature })
    }
}

/// What keeping a checkpoint in a [`CheckpointSink`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// Written to this new file.
    New(PathBuf),
    /// The file for the same heads and key holds the same hashes already.
    Same,
    /// The file for the same heads and key (this path) holds other hashes, or is no checkpoint.
    Conflict(PathBuf),
}

/// A directory kept write-once: every checkpoint is a new file (create-new, never overwritten),
/// fsynced with its directory before it counts. Point it at storage the database's
/// administrators cannot rewrite (another host, a WORM bucket mount, an append-only volume).
#[derive(Debug, Clone)]
pub struct CheckpointSink {
    dir: PathBuf,
}

impl CheckpointSink {
    pub fn new(dir: impl Into<PathBuf>) -> CheckpointSink {
        CheckpointSink { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where a checkpoint's file goes: `<dir>/<property>/<position>-<refusal seq>-<key id>.json`
    /// (numbers zero-padded, so names sort in chain order).
    pub fn path_of(&self, checkpoint: &Checkpoint) -> PathBuf {
        self.dir.join(file_safe(&checkpoint.property)).join(format!(
            "{:020}-{:020}-{}.json",
            checkpoint.position, checkpoint.refusal_seq, checkpoint.key_id
        ))
    }

    /// Keep a checkpoint: a new file, or the file for the same heads and key there already
    /// (left as it is) holding the same hashes (`Same`) or others (`Conflict`: two checkpoints
    /// of one position over different logs, or a file that is no checkpoint: the insider pass's
    /// forged head kept beside the real one, unnoticed).
    pub fn keep(&self, signed: &SignedCheckpoint) -> std::io::Result<Kept> {
        let path = self.path_of(&signed.checkpoint);
        let Some(dir) = path.parent() else { return Err(std::io::Error::other("a checkpoint path has a directory")) };
        std::fs::create_dir_all(dir)?;
        // Written whole to a file of its own first, then linked under its name (which fails if
        // the name exists): a checkpoint is there whole or not at all (the crash pass: a full disk
        // left an empty file under the name, and every later keep took it for the checkpoint).
        let temporary = dir.join(format!(".{}.{}.partial", std::process::id(), uuid::Uuid::new_v4()));
        if let Err(error) = write_new(&temporary, signed) {
            let _ = std::fs::remove_file(&temporary);
            return Err(error);
        }
        let linked = match std::fs::hard_link(&temporary, &path) {
            // A volume without hard links (some bucket mounts): the document is written under its
            // name directly, create-new.
            Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists && std::fs::metadata(&path).is_err() => {
                match write_new(&path, signed) {
                    Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Err(error),
                    Err(direct_error) => {
                        let _ = std::fs::remove_file(&temporary);
                        let _ = std::fs::remove_file(&path);
                        return Err(std::io::Error::new(direct_error.kind(), format!("{error}; written directly: {direct_error}")));
                    }
                    Ok(()) => Ok(()),
                }
            }
            other => other,
        };
        // On an append-only volume the temporary name stays (it is no `.json`: no reader takes
        // it for a checkpoint); the checkpoint under its name is what counts (the wave-2 pass:
        // this removal's failure had been taken for the checkpoint's).
        let _ = std::fs::remove_file(&temporary);
        match linked {
            Ok(()) => {
                sync_dir(&path)?;
                Ok(Kept::New(path))
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                let text = std::fs::read_to_string(&path)?;
                if text.is_empty() {
                    // An empty file is no checkpoint (an earlier release's interrupted write):
                    // it is replaced, nothing it held is lost.
                    std::fs::remove_file(&path)?;
                    return self.keep(signed);
                }
                let existing = SignedCheckpoint::from_document(&text).ok();
                let same = existing.as_ref().is_some_and(|existing| {
                    let (a, b) = (&existing.checkpoint, &signed.checkpoint);
                    (&a.property, a.position, a.hash, a.refusal_seq, a.refusal_hash) == (&b.property, b.position, b.hash, b.refusal_seq, b.refusal_hash)
                });
                Ok(if same { Kept::Same } else { Kept::Conflict(path) })
            }
            Err(error) => Err(error),
        }
    }

    /// The latest checkpoint of `property` kept in the directory whose signature verifies with
    /// one of `trusted` (what a restarted server checks the log against before it signs again:
    /// the sink is the evidence, the database's copies are anyone's with its credentials).
    pub fn latest_of(&self, property: &str, trusted: &[[u8; 32]]) -> std::io::Result<Option<SignedCheckpoint>> {
        let dir = self.dir.join(file_safe(property));
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        let mut names: Vec<PathBuf> =
            entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).filter(|path| path.extension().is_some_and(|e| e == "json")).collect();
        names.sort();
        for path in names.iter().rev() {
            let Ok(text) = std::fs::read_to_string(path) else { continue };
            if let Ok(signed) = SignedCheckpoint::from_document(&text)
                && signed.checkpoint.property == property
                && signed.verify(trusted).is_ok()
            {
                return Ok(Some(signed));
            }
        }
        Ok(None)
    }

    /// Every checkpoint document under the directory (any property), with its path, in name
    /// order; unreadable or malformed files are returned as errors, not skipped.
    pub fn read_all(dir: &Path) -> std::io::Result<Vec<(PathBuf, Result<SignedCheckpoint, CheckpointError>)>> {
        let mut files = Vec::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(next) = pending.pop() {
            for entry in std::fs::read_dir(&next)? {
                let path = entry?.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|extension| extension == "json") {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(&path)?;
                Ok((path, SignedCheckpoint::from_document(&text)))
            })
            .collect()
    }
}

/// The document in a new file at `path` (create-new, read-only), fsynced.
fn write_new(path: &Path, signed: &SignedCheckpoint) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o444).open(path)?;
    file.write_all(signed.to_document().as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

/// A property id as a directory name: itself when plainly safe, else `x-` and its hex.
fn file_safe(property: &str) -> String {
    let plain = !property.is_empty()
        && !property.starts_with('.')
        && property.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'));
    if plain { property.to_owned() } else { format!("x-{}", hex::encode(property)) }
}

/// fsync the directory holding `path`, so the new name survives a crash.
fn sync_dir(path: &Path) -> std::io::Result<()> {
    match path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) => std::fs::File::open(dir)?.sync_all(),
        None => std::fs::File::open(".")?.sync_all(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CheckpointKey {
        CheckpointKey { signing: SigningKey::from_bytes(&[7; 32]) }
    }

    /// The key made at the embedded mode's first start is PKCS#8 v1 (the seed alone, as
    /// `openssl genpkey` writes it), which `openssl pkey -pubout` reads for the pinned public key
    /// (the operations pass: OpenSSL 3.0 could not read the v2 form), and loads back the same.
    #[test]
    fn a_generated_key_is_pkcs8_v1_and_loads_back() {
        let dir = std::env::temp_dir().join(format!("chipledger-key-{}-{:?}", std::process::id(), std::time::SystemTime::now()));
        let path = dir.join("checkpoint.key");
        let made = CheckpointKey::load_or_generate(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let (label, document) = ed25519_dalek::pkcs8::SecretDocument::from_pem(&text).unwrap();
        assert_eq!(label, "PRIVATE KEY");
        let info = ed25519_dalek::pkcs8::PrivateKeyInfo::try_from(document.as_bytes()).unwrap();
        assert!(info.public_key.is_none(), "v1: no public key in the file");
        assert_eq!(CheckpointKey::load(&path).unwrap().public_key(), made.public_key());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_signed_checkpoint_verifies_and_any_changed_field_does_not() {
        let signed = key().sign("casino-1", (42, [1; 32]), (3, [2; 32]), 1_790_000_000_000).unwrap();
        assert_eq!(signed.verify(&[key().public_key()]), Ok(()));
        let kept = SignedCheckpoint::from_document(&signed.to_document()).unwrap();
        assert_eq!(kept, signed);
        let mut moved = signed.clone();
        moved.checkpoint.position = 41;
        assert_eq!(moved.verify(&[]), Err(CheckpointError::BadSignature));
        let mut rehashed = signed.clone();
        rehashed.checkpoint.refusal_hash = [9; 32];
        assert_eq!(rehashed.verify(&[]), Err(CheckpointError::BadSignature));
        let other = CheckpointKey { signing: SigningKey::from_bytes(&[8; 32]) };
        assert!(matches!(signed.verify(&[other.public_key()]), Err(CheckpointError::UntrustedKey { .. })));
    }

    #[test]
    fn the_signed_bytes_are_the_jcs_form_of_the_checkpoint() {
        let signed = key().sign("p", (1, [0; 32]), (0, [0; 32]), 5).unwrap();
        let text = String::from_utf8(signed.checkpoint.signed_bytes().unwrap()).unwrap();
        let zeros = "0".repeat(64);
        assert_eq!(
            text,
            format!(
                "{{\"chain_format\":2,\"hash\":\"{zeros}\",\"key_id\":\"{}\",\"position\":1,\"property\":\"p\",\
                 \"refusal_hash\":\"{zeros}\",\"refusal_seq\":0,\"signed_at_ms\":5,\"type\":\"chipledger.checkpoint\"}}",
                key().key_id()
            )
        );
    }

    #[test]
    fn a_generated_key_is_kept_and_loaded_again() {
        let dir = std::env::temp_dir().join(format!("chipledger-key-test-{}", std::process::id()));
        let path = dir.join("checkpoint.key");
        let _ = std::fs::remove_file(&path);
        let made = CheckpointKey::load_or_generate(&path).unwrap();
        let loaded = CheckpointKey::load_or_generate(&path).unwrap();
        assert_eq!(made.public_key(), loaded.public_key());
        assert!(std::fs::read_to_string(&path).unwrap().starts_with("-----BEGIN PRIVATE KEY-----"));
        let sink = CheckpointSink::new(dir.join("sink"));
        let signed = made.sign("odd/prop", (2, [3; 32]), (0, [0; 32]), 9).unwrap();
        let Kept::New(first) = sink.keep(&signed).unwrap() else { panic!("a new file") };
        assert!(first.starts_with(dir.join("sink").join("x-6f64642f70726f70")));
        assert_eq!(sink.keep(&signed).unwrap(), Kept::Same, "never overwritten");
        // Another log's head at the same position is no copy of it (the insider pass).
        let forged = made.sign("odd/prop", (2, [4; 32]), (0, [0; 32]), 10).unwrap();
        assert_eq!(sink.keep(&forged).unwrap(), Kept::Conflict(first.clone()));
        // An empty file under a checkpoint's name (a write a full disk cut short) is replaced.
        let next = made.sign("odd/prop", (3, [5; 32]), (0, [0; 32]), 11).unwrap();
        std::fs::write(sink.path_of(&next.checkpoint), b"").unwrap();
        assert!(matches!(sink.keep(&next).unwrap(), Kept::New(_)));
        assert_eq!(sink.keep(&next).unwrap(), Kept::Same);
        let read = CheckpointSink::read_all(sink.dir()).unwrap();
        assert_eq!(read.len(), 2, "no partial file is left");
        assert_eq!(read[0].1.as_ref().unwrap(), &signed);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
