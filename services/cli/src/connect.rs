//! The connection to `chipledgerd`: address, TLS (server CA, client certificate for mutual
//! TLS) and bearer token from flags or environment, the service clients (commands go on their
//! RPC path, as the API's table names it), and the one place that turns a `tonic::Status` into
//! a one-line, human-readable error (rejections carry reason code, rule id and numbers in
//! `google.rpc.ErrorInfo`, R-AUDIT-3).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use chipledger_proto::v1::approval_service_client::ApprovalServiceClient;
use chipledger_proto::v1::audit_service_client::AuditServiceClient;
use chipledger_proto::v1::ledger_service_client::LedgerServiceClient;
use chipledger_proto::v1::table_service_client::TableServiceClient;
use clap::Args;
use tonic::client::Grpc;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

/// How long establishing the connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one RPC may take (a batch of a thousand commands, a page of a thousand events).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Largest reply accepted (pages of events with payloads).
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Where the server is and how to authenticate (flags win over the environment).
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// chipledgerd address (`https://` for TLS).
    #[arg(long, env = "CHIPLEDGER_SERVER", default_value = "http://127.0.0.1:50051", global = true)]
    pub server: String,
    /// CA certificate (PEM) that signed the server's certificate.
    #[arg(long, env = "CHIPLEDGER_CA_CERT", global = true)]
    pub ca_cert: Option<PathBuf>,
    /// Client certificate (PEM) for mutual TLS.
    #[arg(long, env = "CHIPLEDGER_CLIENT_CERT", global = true, requires = "client_key")]
    pub client_cert: Option<PathBuf>,
    /// Client private key (PEM) for mutual TLS.
    #[arg(long, env = "CHIPLEDGER_CLIENT_KEY", global = true, requires = "client_cert")]
    pub client_key: Option<PathBuf>,
    /// Bearer token of a configured principal.
    #[arg(long, env = "CHIPLEDGER_TOKEN", hide_env_values = true, global = true)]
    pub token: Option<String>,
    /// Property (tenant); empty means the server's default.
    #[arg(long, env = "CHIPLEDGER_PROPERTY", default_value = "", global = true)]
    pub property: String,
}

impl ServerArgs {
    /// Plain text, no client certificate, no token: a loopback server that lets anonymous
    /// callers in (the bench's embedded chipledgerd).
    pub fn plain(server: &str, property: &str) -> ServerArgs {
        ServerArgs {
            server: server.to_owned(),
            ca_cert: None,
            client_cert: None,
            client_key: None,
            token: None,
            property: property.to_owned(),
        }
    }
}

/// Adds `authorization: Bearer <token>` to every request when a token is configured.
#[derive(Clone)]
pub struct BearerToken(Option<MetadataValue<Ascii>>);

impl Interceptor for BearerToken {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

pub type Service = InterceptedService<Channel, BearerToken>;

/// The chipledger services over one channel.
#[derive(Clone)]
pub struct Client {
    pub table: TableServiceClient<Service>,
    pub ledger: LedgerServiceClient<Service>,
    pub audit: AuditServiceClient<Service>,
    pub approval: ApprovalServiceClient<Service>,
    /// Every command RPC, called by its path (`crate::send::send_stamped`).
    pub commands: Grpc<Service>,
    pub property_id: String,
    pub server: String,
}

fn read_pem(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read the {what} {}", path.display()))
}

impl Client {
    /// Connects now, so that a wrong address fails here with a clear message.
    pub async fn connect(args: &ServerArgs) -> anyhow::Result<Client> {
        let url = args.server.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            bail!("--server {url:?}: expected http://host:port or https://host:port");
        }
        let mut endpoint = Endpoint::from_shared(url.to_string())
            .with_context(|| format!("--server {url:?} is not a valid address"))?
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .tcp_nodelay(true);
        let wants_tls = url.starts_with("https://") || args.ca_cert.is_some() || args.client_cert.is_some();
        if wants_tls {
            let mut tls = ClientTlsConfig::new();
            match &args.ca_cert {
                Some(path) => tls = tls.ca_certificate(Certificate::from_pem(read_pem(path, "CA certificate")?)),
                None => bail!("TLS needs --ca-cert (the CA that signed chipledgerd's certificate)"),
            }
            if let (Some(cert), Some(key)) = (&args.client_cert, &args.client_key) {
                tls = tls.identity(Identity::from_pem(
                    read_pem(cert, "client certificate")?,
                    read_pem(key, "client key")?,
                ));
            }
            endpoint = endpoint.tls_config(tls).context("invalid TLS settings")?;
        }
        let channel = endpoint
            .connect()
            .await
            .map_err(|error| anyhow::anyhow!("cannot reach chipledgerd at {url}: {}", error_chain(&error)))?;
        let token = match &args.token {
            Some(token) => Some(
                format!("Bearer {}", token.trim())
                    .parse::<MetadataValue<Ascii>>()
                    .context("--token contains characters not allowed in a header")?,
            ),
            None => None,
        };
        let service = InterceptedService::new(channel, BearerToken(token));
        Ok(Client {
            table: TableServiceClient::new(service.clone()).max_decoding_message_size(MAX_MESSAGE_BYTES),
            ledger: LedgerServiceClient::new(service.clone())
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
                .max_encoding_message_size(MAX_MESSAGE_BYTES),
            audit: AuditServiceClient::new(service.clone()).max_decoding_message_size(MAX_MESSAGE_BYTES),
            approval: ApprovalServiceClient::new(service.clone()),
            commands: Grpc::new(service).max_decoding_message_size(MAX_MESSAGE_BYTES).max_encoding_message_size(MAX_MESSAGE_BYTES),
            property_id: args.property.clone(),
            server: url.to_string(),
        })
    }
}

/// Every `source()` of an error on one line (transport errors hide the useful part there).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A command the rules refused: the `google.rpc.ErrorInfo` of a FAILED_PRECONDITION.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Stable reason code, e.g. `RATHOLING_FORBIDDEN`.
    pub code: String,
    /// Rule id, e.g. `R-STAKE-2`.
    pub rule_id: String,
    pub detail: String,
    /// The figures involved (`amount_left_with_cents` ...), sorted by name.
    pub numbers: Vec<(String, String)>,
}

impl Refusal {
    pub fn from_status(status: &Status) -> Option<Refusal> {
        if status.code() != Code::FailedPrecondition {
            return None;
        }
        let info = status.get_error_details().error_info()?.clone();
        let mut numbers: Vec<(String, String)> = info
            .metadata
            .iter()
            .filter(|(name, _)| name.as_str() != "rule_id" && name.as_str() != "detail")
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        numbers.sort();
        Some(Refusal {
            code: info.reason.clone(),
            rule_id: info.metadata.get("rule_id").cloned().unwrap_or_default(),
            detail: info.metadata.get("detail").cloned().unwrap_or_default(),
            numbers,
        })
    }

    pub fn numbers_text(&self) -> String {
        self.numbers.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>().join(", ")
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.code, self.rule_id)?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        if !self.numbers.is_empty() {
            write!(f, " [{}]", self.numbers_text())?;
        }
        Ok(())
    }
}

/// One line saying what went wrong with an RPC, with the hint an operator needs.
pub fn describe_status(status: &Status) -> String {
    if let Some(refusal) = Refusal::from_status(status) {
        return format!("refused: {refusal}");
    }
    let details = status.get_error_details();
    let message = status.message().replace('\n', " ");
    match status.code() {
        Code::InvalidArgument => match details.bad_request() {
            Some(bad) if !bad.field_violations.is_empty() => {
                let fields: Vec<String> = bad
                    .field_violations
                    .iter()
                    .map(|violation| format!("{}: {}", violation.field, violation.description))
                    .collect();
                format!("invalid request: {}", fields.join("; "))
            }
            _ => format!("invalid request: {message}"),
        },
        Code::Unauthenticated => format!("not authenticated: {message} (give --token or a client certificate)"),
        Code::PermissionDenied => format!("permission denied: {message}"),
        Code::Unavailable => format!("server unavailable: {message}"),
        Code::DeadlineExceeded => format!("timed out: {message}"),
        code => format!("{code:?}: {message}"),
    }
}

/// A failed RPC as an anyhow error with the one-line description.
pub fn rpc_error(what: &str, status: &Status) -> anyhow::Error {
    anyhow::anyhow!("{what}: {}", describe_status(status))
}
