//! The format of an approval token, `cla1.<claims>.<signature>`: the claims (approver id and
//! role, property, RPC, command id, SHA-256 digest of the exact command, issue and expiry time)
//! as base64url JSON, and the server's Ed25519 signature of `cla1.<claims>`. Anyone may read the
//! claims ([`read_claims`]); only the server that holds the key signs and believes them.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chipledger_rules::Role;
use serde::{Deserialize, Serialize};

/// Format tag of every token (and of the signed text).
pub const TOKEN_PREFIX: &str = "cla1";
/// Approval tokens one command may carry (the most second-person fields of a command is two).
pub const MAX_APPROVALS_PER_COMMAND: usize = 4;

/// The approvers of a development server (plaintext, loopback, anonymous callers act as admin,
/// no principals configured): id, role and bearer token. The tokens are public on purpose:
/// they exist only where any local caller is already an admin, so that one person can run the
/// demo's dual control (a cage signer, a floor signer, a second admin for credit decisions).
pub const DEV_APPROVERS: &[(&str, Role, &str)] = &[
    ("dev-floor", Role::FloorSupervisor, "dev-floor-approver-token-local-only"),
    ("dev-cage", Role::Cage, "dev-cage-approver-token-local-only"),
    ("dev-credit", Role::Admin, "dev-credit-approver-token-local-only"),
];

/// What a token says (JSON, base64url in the token; readable by anyone, forgeable by no one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    #[serde(rename = "kid")]
    pub key_id: String,
    pub approver_id: String,
    pub approver_role: String,
    pub property_id: String,
    pub rpc: String,
    pub command_id: String,
    pub digest_hex: String,
    pub issued_at_unix_ms: i64,
    pub expires_at_unix_ms: i64,
    /// A stamp of the approver's configuration entry when the approval was given (keyed by the
    /// server's approval key, so it says nothing of the entry's tokens): the approval holds only
    /// while the entry is unchanged (a rotated token voids what the old one approved).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub approver_stamp: String,
}

impl Claims {
    /// `cla1.<claims>`: the text the signature covers, and the token without its signature.
    pub fn signed_text(&self) -> String {
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).expect("claims serialise"));
        format!("{TOKEN_PREFIX}.{body}")
    }
}

/// A token taken apart, its signature not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenParts<'a> {
    /// `cla1.<claims>`, the signed text.
    pub signed_text: &'a str,
    /// The base64url signature.
    pub signature: &'a str,
    claims: &'a str,
}

impl TokenParts<'_> {
    /// The claims, when they decode.
    pub fn claims(&self) -> Option<Claims> {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(self.claims).ok()?).ok()
    }
}

/// The parts of `token` (surrounding whitespace ignored), or why it is no token of this format.
pub fn split_token(token: &str) -> Result<TokenParts<'_>, &'static str> {
    let token = token.trim();
    let mut parts = token.split('.');
    let (Some(prefix), Some(claims), Some(signature), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("not an approval token (cla1.<claims>.<signature>)");
    };
    if prefix != TOKEN_PREFIX {
        return Err("not an approval token of this version");
    }
    let signed_text = &token[..prefix.len() + 1 + claims.len()];
    Ok(TokenParts { signed_text, signature, claims })
}

/// What a token says, without checking its signature (clients read the approver's id and role
/// from it; only the server decides whether to believe it).
pub fn read_claims(token: &str) -> Option<Claims> {
    split_token(token).ok()?.claims()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            key_id: "k".into(),
            approver_id: "fred".into(),
            approver_role: "floor_supervisor".into(),
            property_id: "casino".into(),
            rpc: "/chipledger.v1.CageService/Fill".into(),
            command_id: "fill-1".into(),
            digest_hex: "00".into(),
            issued_at_unix_ms: 1,
            expires_at_unix_ms: 2,
            approver_stamp: String::new(),
        }
    }

    #[test]
    fn a_token_reads_back_its_claims_and_other_text_is_no_token() {
        let signed = claims().signed_text();
        let token = format!(" {signed}.c2ln ");
        let parts = split_token(&token).unwrap();
        assert_eq!((parts.signed_text, parts.signature), (signed.as_str(), "c2ln"));
        assert_eq!(read_claims(&token), Some(claims()));
        assert_eq!(split_token("cla2.e30.c2ln").unwrap_err(), "not an approval token of this version");
        assert!(split_token(&signed).is_err(), "no signature");
        assert!(read_claims("cla1.bm90IGpzb24.c2ln").is_none(), "claims that are not JSON");
    }
}
