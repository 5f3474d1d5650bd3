//! Dual control by authenticated principals (R-CHIP-2, R-CHIP-3, R-MARK-1, R-AUDIT-1): an
//! approver, slip signer or supervisor named in a command proves it with an approval token that
//! they obtained themselves, authenticated with their own credentials (`ApprovalService.Approve`).
//!
//! A token is `cla1.<claims>.<signature>` (`chipledger_proto::approval`, the format clients
//! read too), signed with the server's Ed25519 approval key. Bound to one command id, a token is used once:
//! resending the same command is an idempotent replay, and any other command (other id, other
//! amounts, other property) does not match its digest. [`check`] accepts a command only when
//! every second-person field names the caller where the table allows it (a slip's own signer)
//! or a principal whose valid token for this very command is in the header, with a role the
//! table in [`crate::access::APPROVAL_RULES`] allows, and nobody approves their own command.
//! The rules core then receives the proven principal ids as before.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chipledger_proto::approval::{Claims, MAX_APPROVALS_PER_COMMAND, split_token};
use chipledger_proto::v1 as pb;
use chipledger_proto::{FieldErrors, role_to_wire};
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use sha2::{Digest, Sha256};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::access::{self, Authenticator, Principal};
use crate::config::ApprovalKeyFile;
use crate::status::DOMAIN;

/// Validity of a token when the request asks for none.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);
/// Longest validity a token may ask for.
pub const MAX_TTL: Duration = Duration::from_secs(3_600);
/// A token issued this far in the future of the checking replica's clock is refused.
const MAX_CLOCK_SKEW_MS: i64 = 60_000;
/// Longest token accepted (a real one is about 500 bytes).
const MAX_TOKEN_LEN: usize = 2_048;
/// Domain separation of the command digest.
const DIGEST_DOMAIN: &[u8] = b"chipledger-approval-v1\0";
/// Most tokens a key remembers having signed (32 + 8 bytes each, plus the map's own).
const MAX_REMEMBERED_TOKENS: usize = 100_000;

#[derive(Debug, thiserror::Error)]
pub enum ApprovalKeyError {
    #[error("approval signing key {path}: {source}")]
    Io { path: std::path::PathBuf, source: std::io::Error },
    #[error("approval signing key {path}: expected 64 hex digits (an Ed25519 seed)")]
    Format { path: std::path::PathBuf },
    #[error("approval signing key {path} does not exist (a configured key file must be provisioned; replicas share it)")]
    Missing { path: std::path::PathBuf },
    #[error("cannot generate an approval signing key")]
    Random,
}

/// The server's Ed25519 key for approval tokens.
pub struct ApprovalKey {
    pair: Ed25519KeyPair,
    key_id: String,
    /// The tokens this key signed in this process, until they expire: see [`IssuedTokens`].
    issued: Mutex<IssuedTokens>,
}

/// The tokens a key signed in this process, by SHA-256 of the whole token, with the time each
/// expires. A token found here is genuine: its signature is not checked again (an Ed25519
/// verification, about 90 us on a 2-core VM, was a fifth of the server's CPU in a batch of a
/// hand with its seven approvals). Everything else about it is checked as for any token. A
/// token issued by another replica, or before a restart, is not here and is verified with the
/// key. Bounded: expired entries go when it is full; while it stays full, tokens are not
/// remembered and are verified when used.
#[derive(Default)]
struct IssuedTokens {
    expires_at_unix_ms: HashMap<[u8; 32], i64>,
}

impl IssuedTokens {
    fn remember(&mut self, token: &str, expires_at_unix_ms: i64, now_unix_ms: i64) {
        if self.expires_at_unix_ms.len() >= MAX_REMEMBERED_TOKENS {
            self.expires_at_unix_ms.retain(|_, expires| *expires >= now_unix_ms);
        }
        if self.expires_at_unix_ms.len() < MAX_REMEMBERED_TOKENS {
            self.expires_at_unix_ms.insert(Self::key(token), expires_at_unix_ms);
        }
    }

    fn signed(&self, token: &str) -> bool {
        self.expires_at_unix_ms.contains_key(&Self::key(token))
    }

    fn key(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }
}

impl std::fmt::Debug for ApprovalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalKey").field("key_id", &self.key_id).finish_non_exhaustive()
    }
}

impl ApprovalKey {
    pub fn from_seed(seed: &[u8; 32]) -> ApprovalKey {
        let pair = Ed25519KeyPair::from_seed_unchecked(seed).expect("any 32 bytes are an Ed25519 seed");
        let key_id = hex::encode(&Sha256::digest(pair.public_key().as_ref())[..8]);
        ApprovalKey { pair, key_id, issued: Mutex::new(IssuedTokens::default()) }
    }

    /// A fresh random key.
    pub fn generate() -> Result<ApprovalKey, ApprovalKeyError> {
        Ok(ApprovalKey::from_seed(&random_seed()?))
    }

    /// Reads the seed (64 hex digits); the default file is created (mode 0600) when missing.
    pub fn load(file: &ApprovalKeyFile) -> Result<ApprovalKey, ApprovalKeyError> {
        let path = &file.path;
        let io = |source| ApprovalKeyError::Io { path: path.clone(), source };
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let seed: [u8; 32] = hex::decode(text.trim())
                    .ok()
                    .and_then(|bytes| bytes.try_into().ok())
                    .ok_or_else(|| ApprovalKeyError::Format { path: path.clone() })?;
                Ok(ApprovalKey::from_seed(&seed))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound && file.create_if_missing => {
                let seed = random_seed()?;
                write_new_secret(path, &hex::encode(seed)).map_err(io)?;
                tracing::info!(path = %path.display(), "created an approval signing key");
                Ok(ApprovalKey::from_seed(&seed))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(ApprovalKeyError::Missing { path: path.clone() }),
            Err(error) => Err(io(error)),
        }
    }

    /// First 8 bytes of SHA-256 of the public key, hex: names the key in every token.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    pub fn public_key_hex(&self) -> String {
        hex::encode(self.pair.public_key().as_ref())
    }

    /// A stamp of a principal's configuration entry (role, properties, certificate names,
    /// tokens), keyed by this key so that the claims it goes in say nothing of the tokens: an
    /// approval holds only while its approver's entry is as it was when it was given (the
    /// insider pass: a supervisor's token rotated by a reload, what the old one had approved
    /// was still taken for up to an hour).
    /// The lists are taken as sets: the same grants written in another order keep the stamp
    /// (the wave-2 pass: properties reordered had voided approvals).
    pub fn stamp(&self, entry: &crate::config::PrincipalConfig) -> String {
        hex::encode(&Sha256::digest(self.pair.sign(entry.canonical().as_bytes()).as_ref())[..16])
    }

    fn sign(&self, claims: &Claims) -> String {
        let signed = claims.signed_text();
        let signature = URL_SAFE_NO_PAD.encode(self.pair.sign(signed.as_bytes()).as_ref());
        let token = format!("{signed}.{signature}");
        self.issued_tokens().remember(&token, claims.expires_at_unix_ms, claims.issued_at_unix_ms);
        token
    }

    fn issued_tokens(&self) -> MutexGuard<'_, IssuedTokens> {
        self.issued.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The claims of a token this key signed, or why not.
    fn verify(&self, token: &str) -> Result<Claims, &'static str> {
        if token.len() > MAX_TOKEN_LEN {
            return Err("longer than any approval token");
        }
        let parts = split_token(token)?;
        if !self.issued_tokens().signed(token) {
            let signature = URL_SAFE_NO_PAD.decode(parts.signature).map_err(|_| "signature is not base64url")?;
            UnparsedPublicKey::new(&ED25519, self.pair.public_key().as_ref())
                .verify(parts.signed_text.as_bytes(), &signature)
                .map_err(|_| "signature does not verify with this server's approval key")?;
        }
        let claims = parts.claims().ok_or("claims do not decode")?;
        if claims.key_id != self.key_id {
            return Err("signed by another approval key");
        }
        Ok(claims)
    }
}

fn random_seed() -> Result<[u8; 32], ApprovalKeyError> {
    use ring::rand::SecureRandom;
    let mut seed = [0u8; 32];
    ring::rand::SystemRandom::new().fill(&mut seed).map_err(|_| ApprovalKeyError::Random)?;
    Ok(seed)
}

/// Creates `path` (never overwrites) readable by its owner only.
fn write_new_secret(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

/// SHA-256 of the command an approval is bound to (RPC path and the approval form of the
/// message, see `chipledger_proto::WireCommand::approval_bytes`).
/// With an import's actor and time (the header's `import_actor_id` and
/// `import_occurred_at_unix_ms`, a batch's for its entries): an approval given for a command as
/// it happens does not record it as another's, on another day (the import pass: a fill approved
/// live was imported with the same tokens as a floor supervisor's, weeks before). Without them
/// the digest is the command's alone.
pub fn command_digest(rpc: &str, approval_bytes: &[u8], import: (Option<&str>, Option<i64>)) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(DIGEST_DOMAIN);
    hasher.update(rpc.as_bytes());
    hasher.update([0]);
    hasher.update(approval_bytes);
    if import != (None, None) {
        hasher.update(b"\0import\0");
        hasher.update(import.0.unwrap_or_default().as_bytes());
        hasher.update([0]);
        hasher.update(import.1.map_or([0xff; 8], i64::to_be_bytes));
    }
    hasher.finalize().into()
}

/// The command an approval or a check is about.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub property_id: &'a str,
    pub rpc: &'static str,
    pub command_id: &'a str,
    pub digest: [u8; 32],
}

/// Issues a token to `approver` (authenticated, role and property already checked by the
/// caller of this function) for `subject`.
pub fn issue(key: &ApprovalKey, approver: &Principal, subject: &Subject<'_>, ttl: Duration, now_unix_ms: i64) -> pb::ApprovalToken {
    let ttl_ms = i64::try_from(ttl.min(MAX_TTL).as_millis()).unwrap_or(0);
    let claims = Claims {
        key_id: key.key_id().to_string(),
        approver_id: approver.id.clone(),
        approver_role: access::role_name(&approver.role).to_string(),
        property_id: subject.property_id.to_string(),
        rpc: subject.rpc.to_string(),
        command_id: subject.command_id.to_string(),
        digest_hex: hex::encode(subject.digest),
        issued_at_unix_ms: now_unix_ms,
        expires_at_unix_ms: now_unix_ms.saturating_add(ttl_ms),
        approver_stamp: approver.entry.as_deref().map(|entry| key.stamp(entry)).unwrap_or_default(),
    };
    pb::ApprovalToken {
        token: key.sign(&claims),
        approver_id: claims.approver_id,
        approver_role: role_to_wire(approver.role) as i32,
        property_id: claims.property_id,
        rpc: claims.rpc,
        command_id: claims.command_id,
        expires_at_unix_ms: claims.expires_at_unix_ms,
        command_digest_hex: claims.digest_hex,
    }
}

/// A refused approval: PERMISSION_DENIED with `ErrorInfo` (reason, the field and the name
/// involved) and the field as a `BadRequest` violation.
pub(crate) fn denied(reason: &str, field: &str, message: String, metadata: &[(&str, &str)]) -> Status {
    let mut details = ErrorDetails::with_error_info(
        reason,
        DOMAIN,
        metadata.iter().map(|(name, value)| ((*name).to_string(), (*value).to_string())).collect::<HashMap<_, _>>(),
    );
    details.add_bad_request_violation(field, message.clone());
    Status::with_error_details(Code::PermissionDenied, message, details)
}

/// Checks the second-person fields of one command (`fields`: wire name and the principal id it
/// names) against the approval tokens of its header. `prefix` locates the command in the
/// request ("" or "commands[3].").
#[allow(clippy::too_many_arguments)]
pub fn check(
    key: &ApprovalKey,
    directory: &Authenticator,
    caller: &Principal,
    subject: &Subject<'_>,
    fields: &[(&'static str, Option<&str>)],
    tokens: &[String],
    prefix: &str,
    now_unix_ms: i64,
) -> Result<(), Status> {
    let tokens_field = format!("{prefix}header.approvals");
    if tokens.len() > MAX_APPROVALS_PER_COMMAND {
        let mut errors = FieldErrors::new();
        errors.add(&tokens_field, format!("at most {MAX_APPROVALS_PER_COMMAND} approval tokens"));
        return Err(errors.into_status());
    }
    // Every token: genuine, for this command, unexpired, of someone else who still holds the
    // role and the property it was issued for.
    let mut approvers: Vec<(Claims, chipledger_rules::Role)> = Vec::with_capacity(tokens.len());
    for (index, token) in tokens.iter().enumerate() {
        let field = format!("{tokens_field}[{index}]");
        let claims = key.verify(token).map_err(|why| denied("APPROVAL_INVALID", &field, format!("approval token: {why}"), &[]))?;
        let approver = claims.approver_id.as_str();
        let mismatch = [
            ("property_id", claims.property_id.as_str(), subject.property_id),
            ("rpc", claims.rpc.as_str(), subject.rpc),
            ("command_id", claims.command_id.as_str(), subject.command_id),
        ]
        .into_iter()
        .find(|(_, approved, submitted)| approved != submitted);
        if let Some((what, approved, submitted)) = mismatch {
            return Err(denied(
                "APPROVAL_FOR_ANOTHER_COMMAND",
                &field,
                format!("{approver}'s approval is for {what} {approved:?}, this command has {submitted:?}"),
                &[("approver", approver), ("approved", approved), ("submitted", submitted)],
            ));
        }
        if claims.digest_hex != hex::encode(subject.digest) {
            return Err(denied(
                "APPROVAL_FOR_ANOTHER_COMMAND",
                &field,
                format!("{approver} approved command {} with other contents (digest differs)", subject.command_id),
                &[("approver", approver), ("approved_digest", &claims.digest_hex)],
            ));
        }
        if now_unix_ms > claims.expires_at_unix_ms {
            let expired = claims.expires_at_unix_ms.to_string();
            return Err(denied(
                "APPROVAL_EXPIRED",
                &field,
                format!("{approver}'s approval expired at {expired} (unix ms); ask for a new one"),
                &[("approver", approver), ("expires_at_unix_ms", &expired)],
            ));
        }
        if claims.issued_at_unix_ms > now_unix_ms + MAX_CLOCK_SKEW_MS {
            return Err(denied("APPROVAL_INVALID", &field, "approval token issued in the future".to_string(), &[]));
        }
        if approver == caller.id {
            return Err(denied(
                "APPROVER_IS_CALLER",
                &field,
                format!("{approver} cannot approve their own command (dual control needs a second person)"),
                &[("approver", approver)],
            ));
        }
        let current = directory.principal_by_id(approver);
        let still_holds = current.as_ref().is_some_and(|principal| {
            access::role_name(&principal.role) == claims.approver_role && principal.properties.allows(subject.property_id)
        });
        let Some(current) = current.filter(|_| still_holds) else {
            return Err(denied(
                "APPROVER_NOT_AUTHORIZED",
                &field,
                format!("{approver} no longer holds role {} on property {}", claims.approver_role, subject.property_id),
                &[("approver", approver)],
            ));
        };
        if claims.approver_stamp != key.stamp(&current) {
            let why = if claims.approver_stamp.is_empty() {
                "was given before approvals named their approver's entry (an earlier release)"
            } else {
                "was given before the approver's credentials or grants changed"
            };
            return Err(denied(
                "APPROVER_NOT_AUTHORIZED",
                &field,
                format!("{approver}'s approval {why}: ask {approver} for a new one"),
                &[("approver", approver)],
            ));
        }
        let role = current.role;
        approvers.push((claims, role));
    }
    let mut used = vec![false; approvers.len()];
    for (field, named) in fields {
        let Some(named) = named.filter(|named| !named.is_empty()) else { continue };
        let wire_field = format!("{prefix}{field}");
        let rule = access::approval_rule(subject.rpc, field)
            .ok_or_else(|| crate::status::internal("approvals", &format!("no approval rule for {} {field}", subject.rpc)))?;
        let roles = || rule.roles.iter().map(access::role_name).collect::<Vec<_>>().join(", ");
        if named == caller.id {
            if !rule.caller_may_sign {
                return Err(denied(
                    "APPROVER_IS_CALLER",
                    &wire_field,
                    format!("{field} names the caller {named}: a second person must approve"),
                    &[("field", field), ("named", named)],
                ));
            }
            if !rule.roles.contains(&caller.role) {
                return Err(denied(
                    "APPROVER_ROLE_NOT_PERMITTED",
                    &wire_field,
                    format!("{field} needs a principal with role {}; the caller {named} is {}", roles(), access::role_name(&caller.role)),
                    &[("field", field), ("named", named), ("role", access::role_name(&caller.role))],
                ));
            }
            continue;
        }
        let Some(index) = approvers.iter().position(|(claims, _)| claims.approver_id == named) else {
            return Err(denied(
                "APPROVAL_MISSING",
                &wire_field,
                format!(
                    "{field} names {named:?} without proof: {named} must approve this command (ApprovalService.Approve, \
                     `chipledger approve`) and the token go in {prefix}header.approvals"
                ),
                &[("field", field), ("named", named)],
            ));
        };
        let role = approvers[index].1;
        if !rule.roles.contains(&role) {
            return Err(denied(
                "APPROVER_ROLE_NOT_PERMITTED",
                &wire_field,
                format!("{field} needs a principal with role {}; {named} is {}", roles(), access::role_name(&role)),
                &[("field", field), ("named", named), ("role", access::role_name(&role))],
            ));
        }
        used[index] = true;
    }
    if let Some(index) = used.iter().position(|used| !used) {
        let mut errors = FieldErrors::new();
        errors.add(
            format!("{tokens_field}[{index}]"),
            format!("the approval of {} is not named by any field of this command", approvers[index].0.approver_id),
        );
        return Err(errors.into_status());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use chipledger_rules::Role;

    use super::*;
    use crate::access::Credential;
    use crate::config::{PrincipalConfig, PropertyScope};

    const FILL: &str = "/chipledger.v1.CageService/Fill";
    const CORRECT: &str = "/chipledger.v1.LedgerService/Correct";

    fn person(id: &str, role: Role) -> PrincipalConfig {
        PrincipalConfig {
            id: id.into(),
            role,
            cert_names: vec![],
            tokens: vec![format!("{id}-token-0123456789")],
            properties: PropertyScope::Only(vec!["casino".into()]),
        }
    }

    fn directory() -> Authenticator {
        Authenticator::new(
            &[
                person("carl-cage", Role::Cage),
                person("fred-floor", Role::FloorSupervisor),
                person("flo-floor", Role::FloorSupervisor),
                person("dan-dealer", Role::Dealer),
            ],
            None,
        )
    }

    fn principal(directory: &Authenticator, id: &str) -> Principal {
        let entry = directory.principal_by_id(id).unwrap();
        Principal { id: id.into(), role: entry.role, via: Credential::BearerToken, properties: entry.properties.clone(), acting_in: None, entry: Some(entry) }
    }

    fn subject<'a>(rpc: &'static str, command_id: &'a str, bytes: &[u8]) -> Subject<'a> {
        Subject { property_id: "casino", rpc, command_id, digest: command_digest(rpc, bytes, (None, None)) }
    }

    const NOW: i64 = 1_800_000_000_000;

    fn token(key: &ApprovalKey, directory: &Authenticator, approver: &str, subject: &Subject<'_>) -> String {
        issue(key, &principal(directory, approver), subject, DEFAULT_TTL, NOW).token
    }

    fn reason(result: Result<(), Status>) -> String {
        let status = result.expect_err("refused");
        status.get_error_details().error_info().map(|info| info.reason.clone()).unwrap_or_else(|| format!("{:?}", status.code()))
    }

    #[test]
    fn r_chip_3_a_fill_needs_the_cage_and_the_floor_each_proven() {
        let (key, directory) = (ApprovalKey::generate().unwrap(), directory());
        let caller = principal(&directory, "carl-cage");
        let fill = subject(FILL, "fill-1", b"fill T1 slip 1");
        let floor = token(&key, &directory, "fred-floor", &fill);
        let fields = |second: &'static str| [("signer_1", Some("carl-cage")), ("signer_2", Some(second))];
        // The cage signs as the caller; the floor by its token.
        assert!(check(&key, &directory, &caller, &fill, &fields("fred-floor"), std::slice::from_ref(&floor), "", NOW).is_ok());
        // A typed name without a token is refused.
        assert_eq!(reason(check(&key, &directory, &caller, &fill, &fields("made-up-2"), &[], "", NOW)), "APPROVAL_MISSING");
        // A floor name with someone else's token is refused too.
        assert_eq!(
            reason(check(&key, &directory, &caller, &fill, &fields("flo-floor"), std::slice::from_ref(&floor), "", NOW)),
            "APPROVAL_MISSING"
        );
        // A dealer cannot be the floor signer, even with a genuine token.
        let dealer = token(&key, &directory, "dan-dealer", &fill);
        assert_eq!(
            reason(check(&key, &directory, &caller, &fill, &fields("dan-dealer"), &[dealer], "", NOW)),
            "APPROVER_ROLE_NOT_PERMITTED"
        );
    }

    #[test]
    fn r_audit_1_self_approval_forgery_expiry_and_other_commands_are_refused() {
        let (key, directory) = (ApprovalKey::generate().unwrap(), directory());
        let fred = principal(&directory, "fred-floor");
        let correction = subject(CORRECT, "corr-1", b"reverse event E");
        let fields = [("approved_by", Some("flo-floor"))];
        let flo = token(&key, &directory, "flo-floor", &correction);
        assert!(check(&key, &directory, &fred, &correction, &fields, std::slice::from_ref(&flo), "", NOW).is_ok());
        // Self-approval: the caller's own name, or the caller's own token.
        let own = [("approved_by", Some("fred-floor"))];
        assert_eq!(reason(check(&key, &directory, &fred, &correction, &own, &[], "", NOW)), "APPROVER_IS_CALLER");
        let own_token = token(&key, &directory, "fred-floor", &correction);
        assert_eq!(reason(check(&key, &directory, &fred, &correction, &own, &[own_token], "", NOW)), "APPROVER_IS_CALLER");
        // Expired.
        let late = NOW + DEFAULT_TTL.as_millis() as i64 + 1;
        assert_eq!(reason(check(&key, &directory, &fred, &correction, &fields, std::slice::from_ref(&flo), "", late)), "APPROVAL_EXPIRED");
        // Another command id, other contents, another property.
        let other_id = subject(CORRECT, "corr-2", b"reverse event E");
        assert_eq!(reason(check(&key, &directory, &fred, &other_id, &fields, std::slice::from_ref(&flo), "", NOW)), "APPROVAL_FOR_ANOTHER_COMMAND");
        let other_bytes = subject(CORRECT, "corr-1", b"reverse event F");
        assert_eq!(reason(check(&key, &directory, &fred, &other_bytes, &fields, std::slice::from_ref(&flo), "", NOW)), "APPROVAL_FOR_ANOTHER_COMMAND");
        let elsewhere = Subject { property_id: "other", ..correction };
        assert_eq!(reason(check(&key, &directory, &fred, &elsewhere, &fields, std::slice::from_ref(&flo), "", NOW)), "APPROVAL_FOR_ANOTHER_COMMAND");
        // Forged: signed by another key, or claims edited after signing.
        let stranger = ApprovalKey::generate().unwrap();
        let forged = token(&stranger, &directory, "flo-floor", &correction);
        assert_eq!(reason(check(&key, &directory, &fred, &correction, &fields, &[forged], "", NOW)), "APPROVAL_INVALID");
        let mut parts: Vec<String> = flo.split('.').map(str::to_string).collect();
        let mut claims: Claims = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[1]).unwrap()).unwrap();
        claims.approver_id = "flo-floor".into();
        claims.expires_at_unix_ms += 86_400_000;
        parts[1] = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap());
        assert_eq!(reason(check(&key, &directory, &fred, &correction, &fields, &[parts.join(".")], "", NOW)), "APPROVAL_INVALID");
        assert_eq!(reason(check(&key, &directory, &fred, &correction, &fields, &["flo-floor".into()], "", NOW)), "APPROVAL_INVALID");
        // A token nobody names is refused as bad input.
        let unnamed = check(&key, &directory, &fred, &correction, &[("approved_by", None)], &[flo], "", NOW).unwrap_err();
        assert_eq!(unnamed.code(), Code::InvalidArgument);
    }

    #[test]
    fn a_token_this_key_signed_is_known_and_any_other_is_verified_by_its_signature() {
        let seed = [7u8; 32];
        let (key, directory) = (ApprovalKey::from_seed(&seed), directory());
        let fred = principal(&directory, "fred-floor");
        let correction = subject(CORRECT, "corr-1", b"reverse event E");
        let fields = [("approved_by", Some("flo-floor"))];
        let flo = token(&key, &directory, "flo-floor", &correction);
        assert!(key.issued_tokens().signed(&flo));
        assert!(check(&key, &directory, &fred, &correction, &fields, std::slice::from_ref(&flo), "", NOW).is_ok());
        // Another replica with the same key has not signed it: it verifies the signature.
        let replica = ApprovalKey::from_seed(&seed);
        assert!(!replica.issued_tokens().signed(&flo));
        assert!(check(&replica, &directory, &fred, &correction, &fields, std::slice::from_ref(&flo), "", NOW).is_ok());
        // The same claims under another signature are another token: neither key knows it,
        // and its signature does not verify.
        let (signed_text, signature) = flo.rsplit_once('.').unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(signature).unwrap();
        bytes[0] ^= 1;
        let altered = format!("{signed_text}.{}", URL_SAFE_NO_PAD.encode(bytes));
        for checker in [&key, &replica] {
            assert!(!checker.issued_tokens().signed(&altered));
            assert_eq!(reason(check(checker, &directory, &fred, &correction, &fields, std::slice::from_ref(&altered), "", NOW)), "APPROVAL_INVALID");
        }
    }

    #[test]
    fn the_memory_of_signed_tokens_is_bounded_and_drops_the_expired_first() {
        let mut issued = IssuedTokens::default();
        for n in 0..MAX_REMEMBERED_TOKENS {
            issued.remember(&format!("old-{n}"), NOW, NOW - 1);
        }
        // Full of tokens still valid: a new one is not remembered (it will be verified).
        issued.remember("new-0", NOW + 1, NOW);
        assert!(!issued.signed("new-0"));
        assert_eq!(issued.expires_at_unix_ms.len(), MAX_REMEMBERED_TOKENS);
        // Once they have expired, the next one makes room.
        issued.remember("new-1", NOW + 2, NOW + 1);
        assert!(issued.signed("new-1") && !issued.signed("old-0"));
        assert_eq!(issued.expires_at_unix_ms.len(), 1);
    }

    #[test]
    fn an_approver_removed_or_moved_to_another_role_no_longer_approves() {
        let key = ApprovalKey::generate().unwrap();
        let correction = subject(CORRECT, "corr-1", b"x");
        let before = directory();
        let flo = token(&key, &before, "flo-floor", &correction);
        let demoted = Authenticator::new(&[person("fred-floor", Role::FloorSupervisor), person("flo-floor", Role::Dealer)], None);
        let fred = principal(&demoted, "fred-floor");
        let fields = [("approved_by", Some("flo-floor"))];
        assert_eq!(reason(check(&key, &demoted, &fred, &correction, &fields, &[flo], "", NOW)), "APPROVER_NOT_AUTHORIZED");
    }

    /// The insider pass: an approver's token rotated by a reload voids what the old one had
    /// approved (it had been taken for up to an hour); an unchanged entry keeps it.
    #[test]
    fn an_approver_whose_tokens_changed_no_longer_approves_what_it_approved_before() {
        let key = ApprovalKey::generate().unwrap();
        let correction = subject(CORRECT, "corr-1", b"x");
        let before = directory();
        let flo = token(&key, &before, "flo-floor", &correction);
        let fields = [("approved_by", Some("flo-floor"))];
        let fred = principal(&before, "fred-floor");
        assert!(check(&key, &before, &fred, &correction, &fields, std::slice::from_ref(&flo), "", NOW).is_ok());
        let mut rotated = person("flo-floor", Role::FloorSupervisor);
        rotated.tokens = vec!["flo-floor-new-token-0123456789".into()];
        let after = Authenticator::new(&[person("fred-floor", Role::FloorSupervisor), rotated], None);
        let fred = principal(&after, "fred-floor");
        assert_eq!(reason(check(&key, &after, &fred, &correction, &fields, std::slice::from_ref(&flo), "", NOW)), "APPROVER_NOT_AUTHORIZED");
        // The same grants in another order are the same entry (the wave-2 pass).
        let mut two = person("flo-floor", Role::FloorSupervisor);
        two.tokens.push("flo-floor-second-token-0123456789".into());
        let mut reordered = two.clone();
        reordered.tokens.reverse();
        let directory = |flo: &PrincipalConfig| Authenticator::new(&[person("fred-floor", Role::FloorSupervisor), flo.clone()], None);
        let given = token(&key, &directory(&two), "flo-floor", &correction);
        let now = directory(&reordered);
        assert!(check(&key, &now, &principal(&now, "fred-floor"), &correction, &fields, &[given], "", NOW).is_ok());
        // And an open session (a stream, the console) outlasts a reload that only reorders its
        // principal's lists; a changed list ends it (the wave-2 pass: reordered lists had ended it).
        let live = directory(&two);
        let flo = principal(&live, "flo-floor");
        live.reload(&[person("fred-floor", Role::FloorSupervisor), reordered.clone()]);
        assert!(live.still_holds(&flo));
        let mut fewer = reordered;
        fewer.tokens.pop();
        live.reload(&[person("fred-floor", Role::FloorSupervisor), fewer]);
        assert!(!live.still_holds(&flo));
    }

    #[test]
    fn the_key_file_is_created_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = ApprovalKeyFile { path: dir.path().join("keys/approval.key"), create_if_missing: true };
        let first = ApprovalKey::load(&file).unwrap();
        let again = ApprovalKey::load(&file).unwrap();
        assert_eq!(first.public_key_hex(), again.public_key_hex());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file.path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let configured = ApprovalKeyFile { path: dir.path().join("absent.key"), create_if_missing: false };
        assert!(matches!(ApprovalKey::load(&configured), Err(ApprovalKeyError::Missing { .. })));
        std::fs::write(dir.path().join("bad.key"), "not hex").unwrap();
        let bad = ApprovalKeyFile { path: dir.path().join("bad.key"), create_if_missing: false };
        assert!(matches!(ApprovalKey::load(&bad), Err(ApprovalKeyError::Format { .. })));
    }
}
