//! Who may call what. Callers authenticate with a client certificate (mutual TLS: subject CN or
//! a DNS/email SAN names the principal) or a bearer token from the configuration; each principal
//! has one role and the properties (tenants) it may act on. Which roles may call which RPC
//! ([`allowed_roles`]) and fill which second-person field ([`APPROVAL_RULES`]) is the API's own
//! table (`chipledger_proto`, where every RPC is listed once); here it is checked. The
//! authenticated principal is the actor recorded on every event (R-AUDIT-2).

use std::collections::HashMap;
use std::sync::Arc;

use chipledger_rules::Role;
use sha2::{Digest, Sha256};
use tonic::Status;
use tonic_types::{ErrorDetails, StatusExt};

use crate::config::{Config, PrincipalConfig, PropertyScope};
use crate::status::DOMAIN;

/// The tables this module checks, as the rest of the server reads them.
pub use chipledger_proto::{APPROVAL_RULES, allowed_roles, approval_rule, dual_control_rule, role_name};

/// The authenticated caller, put in the request extensions for the handlers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub id: String,
    pub role: Role,
    pub via: Credential,
    /// Properties this principal may act on (commands, queries, subscriptions, approvals).
    pub properties: PropertyScope,
    /// The property a request naming none acts on: a console session's choice among
    /// `properties`; `None` (every gRPC caller) is the configured default.
    pub acting_in: Option<String>,
    /// The configuration entry it was authenticated by (none: the development mode's anonymous
    /// caller): a stream or a console session holds only while the entry stands unchanged
    /// ([`Authenticator::still_holds`]).
    pub entry: Option<Arc<PrincipalConfig>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    ClientCertificate,
    BearerToken,
    DevAnonymous,
}

/// Actor id of callers without credentials on a plain local development server.
pub const DEV_ANONYMOUS_ID: &str = "local-dev";

/// True when `role` may fill some second-person field of the command at `rpc`.
pub fn may_approve(role: Role, rpc: &str) -> bool {
    APPROVAL_RULES.iter().any(|rule| rule.rpc == rpc && rule.roles.contains(&role))
}

/// RPCs anyone may call without credentials: health and reflection.
pub fn is_public(path: &str) -> bool {
    path.starts_with("/grpc.health.v1.Health/")
        || path.starts_with("/grpc.reflection.v1.ServerReflection/")
        || path.starts_with("/grpc.reflection.v1alpha.ServerReflection/")
}

/// Maps credentials to principals: the configuration's principals, taken again at a reload
/// (SIGHUP), so a principal removed or given another role or properties is so for every call
/// that follows (the insider pass: a reload said "reloaded" and a demoted supervisor kept
/// approving, a removed admin's token kept working). Clones share the directory.
#[derive(Debug, Clone)]
pub struct Authenticator {
    directory: Arc<std::sync::RwLock<Arc<Directory>>>,
    dev_anonymous_role: Option<Role>,
}

/// What a reload changed among the principals (by id).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrincipalsReloaded {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

/// The principals of one configuration, by each way they are found.
#[derive(Debug, Default)]
struct Directory {
    by_cert_name: HashMap<String, Arc<PrincipalConfig>>,
    /// Keyed by SHA-256 of the token, so lookups do not compare secrets byte by byte.
    by_token_hash: HashMap<[u8; 32], Arc<PrincipalConfig>>,
    /// Every configured principal by id (approvers are looked up here).
    by_id: HashMap<String, Arc<PrincipalConfig>>,
}

impl Directory {
    fn of(principals: &[PrincipalConfig]) -> Directory {
        let mut directory = Directory::default();
        for principal in principals {
            let entry = Arc::new(principal.clone());
            for name in &principal.cert_names {
                directory.by_cert_name.insert(name.clone(), entry.clone());
            }
            for token in &principal.tokens {
                directory.by_token_hash.insert(token_hash(token), entry.clone());
            }
            directory.by_id.insert(principal.id.clone(), entry);
        }
        directory
    }
}

fn principal_of(entry: &Arc<PrincipalConfig>, via: Credential) -> Principal {
    Principal { id: entry.id.clone(), role: entry.role, via, properties: entry.properties.clone(), acting_in: None, entry: Some(entry.clone()) }
}

fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Authenticator {
    pub fn new(principals: &[PrincipalConfig], dev_anonymous_role: Option<Role>) -> Authenticator {
        Authenticator { directory: Arc::new(std::sync::RwLock::new(Arc::new(Directory::of(principals)))), dev_anonymous_role }
    }

    pub fn from_config(config: &Config) -> Authenticator {
        Authenticator::new(&config.principals, config.dev_anonymous_role)
    }

    /// Takes the principals of a configuration read again; what they were before is gone for
    /// every call after (the development mode's anonymous role is a start's, kept). Returns the
    /// ids added, removed and changed (role, properties, certificates or tokens).
    pub fn reload(&self, principals: &[PrincipalConfig]) -> PrincipalsReloaded {
        let next = Arc::new(Directory::of(principals));
        let mut slot = self.directory.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        let before = slot.clone();
        *slot = next.clone();
        drop(slot);
        let mut reloaded = PrincipalsReloaded::default();
        for (id, entry) in &next.by_id {
            match before.by_id.get(id) {
                None => reloaded.added.push(id.clone()),
                Some(old) if !old.same_as(entry) => reloaded.changed.push(id.clone()),
                Some(_) => {}
            }
        }
        reloaded.removed = before.by_id.keys().filter(|id| !next.by_id.contains_key(*id)).cloned().collect();
        for list in [&mut reloaded.added, &mut reloaded.removed, &mut reloaded.changed] {
            list.sort();
        }
        reloaded
    }

    /// The development mode's anonymous role, fixed at start.
    pub fn dev_anonymous_role(&self) -> Option<Role> {
        self.dev_anonymous_role
    }

    fn current(&self) -> Arc<Directory> {
        self.directory.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// Whether a principal authenticated before still stands as it was: its configuration
    /// entry unchanged since (role, properties, certificate names, tokens), or the development
    /// mode's anonymous caller. A reload that removed it, changed its role or rotated its token
    /// ends what it holds open (the fixes' pass: an open command stream of a demoted cage
    /// principal kept recording sales, a subscription of a removed auditor kept delivering, and
    /// a console session outlived the token it signed in with).
    pub fn still_holds(&self, principal: &Principal) -> bool {
        match (&principal.entry, principal.via) {
            (_, Credential::DevAnonymous) => self.dev_anonymous_role == Some(principal.role),
            (Some(entry), _) => self.current().by_id.get(&principal.id).is_some_and(|now| now.same_as(entry)),
            (None, _) => self
                .current()
                .by_id
                .get(&principal.id)
                .is_some_and(|now| now.role == principal.role && now.properties == principal.properties),
        }
    }

    /// A configured principal by id (an approver named in a command).
    pub fn principal_by_id(&self, id: &str) -> Option<Arc<PrincipalConfig>> {
        self.current().by_id.get(id).cloned()
    }

    /// The configured principal whose id is `id` in another case, if any: one person, one id
    /// (an import naming `FLOOR1` as its actor reads as floor1).
    pub fn principal_in_another_case(&self, id: &str) -> Option<String> {
        self.current().by_id.keys().find(|known| known.as_str() != id && known.eq_ignore_ascii_case(id)).cloned()
    }

    /// Who is calling. A client certificate wins over a token; a certificate or a token that
    /// maps to no principal is refused rather than falling back to anonymous access.
    pub fn authenticate(
        &self,
        certificate_names: Option<&[String]>,
        authorization: Option<&str>,
    ) -> Result<Principal, Status> {
        let directory = self.current();
        if let Some(names) = certificate_names {
            return names
                .iter()
                .find_map(|name| directory.by_cert_name.get(name))
                .map(|entry| principal_of(entry, Credential::ClientCertificate))
                .ok_or_else(|| {
                    unauthenticated(
                        "CERTIFICATE_NOT_MAPPED",
                        format!("client certificate names {names:?} map to no principal"),
                    )
                });
        }
        if let Some(header) = authorization {
            let token = header
                .strip_prefix("Bearer ")
                .or_else(|| header.strip_prefix("bearer "))
                .ok_or_else(|| unauthenticated("BAD_AUTHORIZATION", "expected `Bearer <token>`"))?;
            return directory
                .by_token_hash
                .get(&token_hash(token.trim()))
                .map(|entry| principal_of(entry, Credential::BearerToken))
                .ok_or_else(|| unauthenticated("UNKNOWN_TOKEN", "bearer token maps to no principal"));
        }
        match self.dev_anonymous_role {
            Some(role) => Ok(Principal {
                id: DEV_ANONYMOUS_ID.to_string(),
                role,
                via: Credential::DevAnonymous,
                properties: PropertyScope::All,
                acting_in: None,
                entry: None,
            }),
            None => Err(unauthenticated(
                "NO_CREDENTIALS",
                "present a client certificate or an `authorization: Bearer` token",
            )),
        }
    }
}

/// Checks the role table for `path`.
pub fn authorize(principal: &Principal, path: &str) -> Result<(), Status> {
    let allowed = allowed_roles(path).ok_or_else(|| {
        access_status(tonic::Code::PermissionDenied, "UNKNOWN_METHOD", path, principal, "no such method")
    })?;
    if allowed.contains(&principal.role) {
        Ok(())
    } else {
        Err(access_status(
            tonic::Code::PermissionDenied,
            ROLE_NOT_PERMITTED,
            path,
            principal,
            &format!("role {:?} may not call {path}", principal.role),
        ))
    }
}

/// The reason code of a call the caller's role may not make.
pub const ROLE_NOT_PERMITTED: &str = "ROLE_NOT_PERMITTED";
/// The rule a refusal for the role names when it is kept: every event records who acted, in
/// which role (and a command refused for it is kept like any refusal, R-AUDIT-3).
pub const ROLE_RULE: &str = "R-AUDIT-2";

/// [`authorize`] for a call the principal makes (not a page or menu asking what it may do): a
/// refusal is logged with the principal and counted (`chipledger.access.denied`).
pub fn authorize_call(principal: &Principal, path: &str) -> Result<(), Status> {
    authorize(principal, path).inspect_err(|_| {
        tracing::warn!(principal = %principal.id, role = role_name(&principal.role), method = path, "call refused for the role");
        crate::telemetry::metrics().access_denied.add(
            1,
            &[
                opentelemetry::KeyValue::new("rpc.method", path.to_string()),
                opentelemetry::KeyValue::new("chipledger.role", role_name(&principal.role)),
            ],
        );
    })
}

/// PERMISSION_DENIED (PROPERTY_NOT_PERMITTED) unless the principal may act on `property_id`.
/// Checked before anything is read or decided, so another tenant's data is never touched and
/// its existence is not revealed.
pub fn authorize_property(principal: &Principal, property_id: &str) -> Result<(), Status> {
    if principal.properties.allows(property_id) {
        return Ok(());
    }
    let metadata = HashMap::from([
        ("property_id".to_string(), property_id.to_string()),
        ("principal".to_string(), principal.id.clone()),
    ]);
    Err(Status::with_error_details(
        tonic::Code::PermissionDenied,
        format!("principal {} may not act on property {property_id:?}", principal.id),
        ErrorDetails::with_error_info("PROPERTY_NOT_PERMITTED", DOMAIN, metadata),
    ))
}

fn access_status(code: tonic::Code, reason: &str, path: &str, principal: &Principal, message: &str) -> Status {
    let metadata = HashMap::from([
        ("method".to_string(), path.to_string()),
        ("principal".to_string(), principal.id.clone()),
        ("role".to_string(), role_name(&principal.role).to_string()),
    ]);
    Status::with_error_details(code, message, ErrorDetails::with_error_info(reason, DOMAIN, metadata))
}

fn unauthenticated(reason: &str, message: impl Into<String>) -> Status {
    Status::with_error_details(
        tonic::Code::Unauthenticated,
        message,
        ErrorDetails::with_error_info(reason, DOMAIN, HashMap::new()),
    )
}

/// Subject CN and DNS/email SANs of a DER certificate (the names a principal can be mapped by).
pub fn certificate_names(der: &[u8]) -> Result<Vec<String>, Status> {
    use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};
    let (_, certificate) = X509Certificate::from_der(der)
        .map_err(|_| unauthenticated("BAD_CERTIFICATE", "client certificate does not parse"))?;
    let mut names: Vec<String> = certificate
        .subject()
        .iter_common_name()
        .filter_map(|cn| cn.as_str().ok().map(str::to_string))
        .collect();
    if let Ok(Some(san)) = certificate.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                GeneralName::DNSName(dns) => names.push(dns.to_string()),
                GeneralName::RFC822Name(email) => names.push(email.to_string()),
                GeneralName::URI(uri) => names.push(uri.to_string()),
                _ => {}
            }
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use chipledger_proto::APPROVERS;
    use prost::Message;
    use Role::{Admin, Auditor, Cage, Dealer, FloorSupervisor, System};

    use super::*;

    fn principal(role: Role) -> Principal {
        Principal { id: "p".into(), role, via: Credential::BearerToken, properties: PropertyScope::All, acting_in: None, entry: None }
    }

    fn allowed(role: Role, path: &str) -> bool {
        authorize(&principal(role), path).is_ok()
    }

    /// Every RPC of every chipledger.v1 service has an entry; nothing falls through to "deny"
    /// by accident, and the table names no RPC that does not exist.
    #[test]
    fn role_table_covers_every_rpc_in_the_descriptor_set() {
        let set = prost_types::FileDescriptorSet::decode(chipledger_proto::FILE_DESCRIPTOR_SET)
            .expect("descriptor set decodes");
        let mut count = 0;
        for file in &set.file {
            for service in &file.service {
                for method in &service.method {
                    let path = format!(
                        "/{}.{}/{}",
                        file.package(),
                        service.name(),
                        method.name()
                    );
                    assert!(allowed_roles(&path).is_some(), "no role entry for {path}");
                    count += 1;
                }
            }
        }
        assert!(count > 45, "expected all RPCs, saw {count}");
        assert!(allowed_roles("/chipledger.v1.TableService/Nope").is_none());
    }

    #[test]
    fn dealer_cannot_issue_a_marker_or_approve_a_correction() {
        assert!(allowed(Dealer, "/chipledger.v1.TableService/BuyIn"));
        assert!(allowed(Dealer, "/chipledger.v1.TableService/Act"));
        assert!(!allowed(Dealer, "/chipledger.v1.CageService/IssueMarker"));
        assert!(!allowed(Dealer, "/chipledger.v1.LedgerService/Correct"));
        assert!(!allowed(Dealer, "/chipledger.v1.TableService/KittyExpense"));
        assert!(!allowed(Dealer, "/chipledger.v1.CageService/SellChips"));
        assert!(allowed(FloorSupervisor, "/chipledger.v1.LedgerService/Correct"));
        assert!(allowed(Cage, "/chipledger.v1.CageService/IssueMarker"));
    }

    #[test]
    fn auditor_can_only_read() {
        let set = prost_types::FileDescriptorSet::decode(chipledger_proto::FILE_DESCRIPTOR_SET).unwrap();
        for file in &set.file {
            for service in &file.service {
                for method in &service.method {
                    let path = format!("/chipledger.v1.{}/{}", service.name(), method.name());
                    // Every command RPC returns CommandResult, BatchResult or (a stream of)
                    // StreamReply; an approval is a second person's act, not a read either.
                    let writes = method.output_type().ends_with("CommandResult")
                        || method.output_type().ends_with("BatchResult")
                        || method.output_type().ends_with("StreamReply")
                        || method.output_type().ends_with("ApprovalToken");
                    assert_eq!(allowed(Auditor, &path), !writes, "{path}");
                }
            }
        }
    }

    #[test]
    fn unknown_method_is_denied_even_for_admin() {
        let status = authorize(&principal(Admin), "/chipledger.v1.Secret/Do").unwrap_err();
        assert_eq!(status.code(), tonic::Code::PermissionDenied);
        let status = authorize(&principal(Dealer), "/chipledger.v1.CageService/IssueMarker").unwrap_err();
        assert_eq!(status.code(), tonic::Code::PermissionDenied);
        assert_eq!(status.get_error_details().error_info().unwrap().reason, "ROLE_NOT_PERMITTED");
    }

    #[test]
    fn public_paths_are_health_and_both_reflection_versions() {
        assert!(is_public("/grpc.health.v1.Health/Check"));
        assert!(is_public("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"));
        assert!(is_public("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"));
        assert!(!is_public("/chipledger.v1.TableService/GetTable"));
    }

    fn authenticator() -> Authenticator {
        Authenticator::new(
            &[
                PrincipalConfig {
                    id: "anna".into(),
                    role: Dealer,
                    cert_names: vec!["anna.dealers.example".into()],
                    tokens: vec!["anna-token-0123456789".into()],
                    properties: PropertyScope::Only(vec!["casino-a".into()]),
                },
                PrincipalConfig {
                    id: "ivan".into(),
                    role: Auditor,
                    cert_names: vec![],
                    tokens: vec!["ivan-token-0123456789".into()],
                    properties: PropertyScope::All,
                },
            ],
            None,
        )
    }

    #[test]
    fn certificate_names_and_tokens_map_to_principals() {
        let auth = authenticator();
        let by_cert = auth
            .authenticate(Some(&["other".into(), "anna.dealers.example".into()]), None)
            .unwrap();
        assert_eq!((by_cert.id.as_str(), by_cert.role), ("anna", Dealer));
        let by_token = auth.authenticate(None, Some("Bearer ivan-token-0123456789")).unwrap();
        assert_eq!((by_token.id.as_str(), by_token.role), ("ivan", Auditor));
    }

    #[test]
    fn unknown_credentials_are_unauthenticated_not_anonymous() {
        let auth = Authenticator::new(&[], Some(Admin));
        let status = auth.authenticate(None, Some("Bearer nope-nope-nope-nope")).unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        let status = auth.authenticate(Some(&["x".into()]), None).unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        let anonymous = auth.authenticate(None, None).unwrap();
        assert_eq!(anonymous.id, DEV_ANONYMOUS_ID);

        let strict = authenticator();
        assert_eq!(strict.authenticate(None, None).unwrap_err().code(), tonic::Code::Unauthenticated);
        assert_eq!(
            strict.authenticate(None, Some("Basic abc")).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
    }

    #[test]
    fn a_principal_acts_only_on_its_properties() {
        let auth = authenticator();
        let anna = auth.authenticate(None, Some("Bearer anna-token-0123456789")).unwrap();
        assert!(authorize_property(&anna, "casino-a").is_ok());
        let status = authorize_property(&anna, "casino-b").unwrap_err();
        assert_eq!(status.code(), tonic::Code::PermissionDenied);
        assert_eq!(status.get_error_details().error_info().unwrap().reason, "PROPERTY_NOT_PERMITTED");
        let ivan = auth.authenticate(None, Some("Bearer ivan-token-0123456789")).unwrap();
        assert!(authorize_property(&ivan, "casino-b").is_ok());
        assert_eq!(auth.principal_by_id("anna").map(|p| p.role), Some(Dealer));
        assert!(auth.principal_by_id("nobody-we-know").is_none());
    }

    /// The approval table names only real commands and fields, each field once; nobody with a
    /// role outside `APPROVERS` approves anything, and dealers, auditors and system principals
    /// never do (dual control is between people who answer for the movement).
    #[test]
    fn approval_table_names_real_rpcs_and_people_who_may_approve() {
        let mut seen = std::collections::HashSet::new();
        for rule in APPROVAL_RULES {
            assert!(allowed_roles(rule.rpc).is_some(), "{} is not an RPC", rule.rpc);
            assert!(seen.insert((rule.rpc, rule.field)), "{} {} twice", rule.rpc, rule.field);
            for role in rule.roles {
                assert!(APPROVERS.contains(role), "{role:?} approves {} but may not call Approve", rule.rpc);
                assert!(!matches!(role, Dealer | Auditor | System), "{role:?} approves {}", rule.rpc);
            }
        }
        for role in APPROVERS {
            assert!(APPROVAL_RULES.iter().any(|rule| rule.roles.contains(role)), "{role:?} approves nothing");
        }
        assert!(may_approve(FloorSupervisor, "/chipledger.v1.LedgerService/Correct"));
        assert!(!may_approve(Cage, "/chipledger.v1.LedgerService/Correct"));
        assert!(may_approve(Cage, "/chipledger.v1.CageService/Fill"));
        assert!(!may_approve(FloorSupervisor, "/chipledger.v1.CageService/SetCreditLine"));
    }

    #[test]
    fn certificate_names_reads_cn_and_sans() {
        let mut params = rcgen::CertificateParams::new(vec!["anna.dealers.example".to_string()]).unwrap();
        params.distinguished_name.push(rcgen::DnType::CommonName, "anna");
        let key = rcgen::KeyPair::generate().unwrap();
        let certificate = params.self_signed(&key).unwrap();
        let names = certificate_names(certificate.der()).unwrap();
        assert_eq!(names, vec!["anna".to_string(), "anna.dealers.example".to_string()]);
        assert!(certificate_names(b"not a certificate").is_err());
    }
}
