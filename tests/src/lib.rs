//! chipledger-tests: shared fixtures for the black-box tests (`tests/blackbox`).
//!
//! For: starting `chipledgerd` against a real PostgreSQL (in-process through the server
//! library's `serve` entry point, or the built binary as a child process when the test needs
//! its own process environment), typed gRPC clients that authenticate as one principal, second
//! persons' approvals of a command, a TCP link to the database the test can cut ([`proxy`]),
//! and the small helpers every scenario uses (command headers, ErrorInfo, the head of the log).
//! Not for: assertions about the domain (those live in the tests, next to the arithmetic).

pub mod binary;
pub mod certs;
pub mod ha;
pub mod proxy;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context, bail};
use chipledger_postgres::TestPostgres;
use chipledger_proto::WireCommand;
use chipledger_proto::v1 as pb;
use chipledger_proto::v1::approval_service_client::ApprovalServiceClient;
use chipledger_proto::v1::audit_service_client::AuditServiceClient;
use chipledger_proto::v1::cage_service_client::CageServiceClient;
use chipledger_proto::v1::ledger_service_client::LedgerServiceClient;
use chipledger_proto::v1::table_service_client::TableServiceClient;
use chipledger_server::checkpoints::Checkpointer;
use chipledger_server::config::{Config, FileConfig, Flags, PrincipalFile, TlsFile};
use chipledger_server::database;
use chipledger_store::checkpoint::CheckpointKey;
use chipledger_server::ledger::Ledger;
use chipledger_server::shards::Router;
use chipledger_server::serve;
use chipledger_server::shutdown::Drain;
use chipledger_store::Store;
use tokio::net::TcpListener;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;
use tonic_types::{ErrorInfo, StatusExt};

/// Bearer tokens of the test principals (ids are what events record as the actor).
pub mod principal {
    pub const ADMIN: (&str, &str, &str) = ("alice-admin", "admin", "admin-token-0123456789");
    /// A second admin: credit decisions need one who is not the caller (R-MARK-1).
    pub const ADMIN_2: (&str, &str, &str) = ("olga-cfo", "admin", "admin2-token-0123456789");
    pub const FLOOR: (&str, &str, &str) = ("fred-floor", "floor_supervisor", "floor-token-0123456789");
    pub const FLOOR_2: (&str, &str, &str) = ("flo-floor", "floor_supervisor", "floor2-token-0123456789");
    pub const DEALER: (&str, &str, &str) = ("dan-dealer", "dealer", "dealer-token-0123456789");
    pub const DEALER_2: (&str, &str, &str) = ("dora-dealer", "dealer", "dealer2-token-0123456789");
    pub const CAGE: (&str, &str, &str) = ("carl-cage", "cage", "cage-token-0123456789");
    pub const AUDITOR: (&str, &str, &str) = ("ann-auditor", "auditor", "auditor-token-0123456789");
    pub const ALL: [(&str, &str, &str); 8] = [ADMIN, ADMIN_2, FLOOR, FLOOR_2, DEALER, DEALER_2, CAGE, AUDITOR];
}

/// How long a test waits for a server to answer health checks before failing.
pub const STARTUP_BOUND: Duration = Duration::from_secs(120);
/// Pause between health probes while waiting (bounded by [`STARTUP_BOUND`]).
const PROBE_INTERVAL: Duration = Duration::from_millis(100);

/// One application-role password per test process: the role is cluster-wide, so every
/// database of the shared test server must agree on it.
fn app_password() -> &'static str {
    static PASSWORD: OnceLock<String> = OnceLock::new();
    PASSWORD.get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
}

/// The application role's URL to the database of a superuser's `database_url`.
pub fn app_url(database_url: &str) -> anyhow::Result<String> {
    let (scheme, rest) = database_url.split_once("://").context("a URL")?;
    let (_, host) = rest.rsplit_once('@').context("a URL with credentials")?;
    Ok(format!("{scheme}://{}:{}@{host}", chipledger_store::APP_ROLE, app_password()))
}

/// The admin step on a database and the application role's password (the process's), as
/// `chipledgerd migrate --app-password-file` would.
pub async fn prepare_database(database_url: &str) -> anyhow::Result<()> {
    Store::migrate(database_url).await.context("migrations")?;
    Store::set_app_password(database_url, app_password()).await.context("application role")?;
    Ok(())
}

/// A file holding the process's application password (for `chipledgerd migrate --app-password-file`).
pub fn app_password_file(dir: &std::path::Path) -> anyhow::Result<PathBuf> {
    write_file(dir, "app.password", &format!("{}\n", app_password()))
}

/// Extra server settings for a scenario.
#[derive(Debug, Default, Clone)]
pub struct ServerOptions {
    /// Serve TLS (and mutual TLS when `client_ca` is set).
    pub tls: Option<TlsFile>,
    /// Principals authenticated by client certificate: (id, role, certificate name).
    pub cert_principals: Vec<(String, String, String)>,
    /// Changes to the configuration file before it is resolved (properties, principals' scopes).
    pub customize: Option<fn(&mut FileConfig)>,
    /// Reach the database through a [`proxy::Link`] the test can cut (`TestServer::link`).
    pub through_link: bool,
    /// A hot standby for reads (the application role's URL).
    pub read_database_url: Option<String>,
    /// Also serve gRPC health alone on a port of its own (`TestServer::health_addr`).
    pub health_listener: bool,
    /// Also serve the web console on a port of its own (`TestServer::console_addr`).
    pub console: bool,
}

/// `chipledgerd` served in-process on 127.0.0.1 (free port) against a fresh database of the
/// process's test PostgreSQL, exactly as `main` wires it: the admin step (migrations, roles,
/// functions) as the cluster's superuser, then the least-privileged application role; a
/// checkpoint signing key of its own and a write-once checkpoint directory.
pub struct TestServer {
    pub addr: SocketAddr,
    /// The health-only listener, with `ServerOptions::health_listener`.
    pub health_addr: Option<SocketAddr>,
    /// The web console, with `ServerOptions::console`.
    pub console_addr: Option<SocketAddr>,
    /// The superuser's URL of the database (for what only an administrator, or an attacker, does).
    pub database_url: String,
    pub property_id: String,
    /// The link to the database, with `ServerOptions::through_link`.
    pub link: Option<proxy::Link>,
    /// Where the server's signed checkpoints go, and its public key.
    pub checkpoint_dir: PathBuf,
    pub checkpoint_public_key: [u8; 32],
    /// The server's checkpointer, for a test to run a round of it (its timer is an hour).
    pub checkpointer: Arc<Checkpointer>,
    _checkpoint_root: Arc<tempfile::TempDir>,
    tls: Option<ClientTlsConfig>,
    /// Holds the approval signing key (replicas share it, as production replicas share the file).
    data_dir: Arc<tempfile::TempDir>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), serve::ServeError>>>,
}

impl TestServer {
    /// Plaintext, bearer-token authentication, no anonymous access.
    pub async fn start(name: &str) -> anyhow::Result<TestServer> {
        TestServer::start_with(name, ServerOptions::default(), None).await
    }

    /// With TLS settings; `client_tls` is what [`TestServer::channel`] uses to connect.
    pub async fn start_with(
        name: &str,
        options: ServerOptions,
        client_tls: Option<ClientTlsConfig>,
    ) -> anyhow::Result<TestServer> {
        let postgres = TestPostgres::shared().await.context("a PostgreSQL for the tests")?;
        let database_url = postgres.fresh_database(name).await.context("a fresh database")?;
        prepare_database(&database_url).await?;
        let data_dir = Arc::new(tempfile::tempdir().context("a data directory")?);
        TestServer::serve_database(database_url, format!("prop-{name}"), options, client_tls, data_dir, None).await
    }

    /// chipledgerd on a database of a server of the test's own (a failover cluster, a primary
    /// with a standby), whose admin step already ran with [`app_password_file`]'s password
    /// ([`prepare_database`]): `database_url` is the admin's URL; the service connects as the
    /// application role to the same host and port.
    pub async fn on_database(database_url: String, name: &str, options: ServerOptions) -> anyhow::Result<TestServer> {
        let data_dir = Arc::new(tempfile::tempdir().context("a data directory")?);
        TestServer::serve_database(database_url, format!("prop-{name}"), options, None, data_dir, None).await
    }

    /// A second chipledgerd on this server's database and property (another replica, with its
    /// own cache of stream states, the same approval key and the same checkpoint key and
    /// directory, as replicas are deployed), plaintext like [`TestServer::start`].
    pub async fn replica(&self) -> anyhow::Result<TestServer> {
        TestServer::serve_database(
            self.database_url.clone(),
            self.property_id.clone(),
            ServerOptions::default(),
            None,
            self.data_dir.clone(),
            Some(self._checkpoint_root.clone()),
        )
        .await
    }

    /// The URL the service itself uses: the application role's own credentials.
    pub fn app_url(&self) -> anyhow::Result<String> {
        app_url(&self.database_url)
    }

    async fn serve_database(
        database_url: String,
        property_id: String,
        options: ServerOptions,
        client_tls: Option<ClientTlsConfig>,
        data_dir: Arc<tempfile::TempDir>,
        checkpoint_root: Option<Arc<tempfile::TempDir>>,
    ) -> anyhow::Result<TestServer> {
        let mut options_pg = Store::app_options(&database_url, app_password()).context("app options")?;
        let link = if options.through_link {
            let target: SocketAddr = format!("127.0.0.1:{}", options_pg.get_port()).parse()?;
            let link = proxy::Link::start(target).await.context("a link to the database")?;
            options_pg = options_pg.host("127.0.0.1").port(link.addr().port());
            Some(link)
        } else {
            None
        };
        let store = Store::connect_bounded(options_pg, database::POOL_CONNECTIONS, database::ACQUIRE_TIMEOUT)
            .await
            .context("connect as the application role")?;
        store.check_schema().await.context("schema")?;

        let config = config(&options, &property_id, data_dir.path())?;
        let drain = Drain::new();
        let checkpoint_root = match checkpoint_root {
            Some(root) => root,
            None => Arc::new(tempfile::tempdir().context("checkpoint directory")?),
        };
        let checkpoint_dir = checkpoint_root.path().join("checkpoints");
        let key = CheckpointKey::load_or_generate(&checkpoint_root.path().join("checkpoint.key")).context("checkpoint key")?;
        let checkpoint_public_key = key.public_key();
        // As main wires it: the configured shards and standbys beside the test's database.
        let router = Arc::new(Router::connect(store, &config).await.context("shards")?);
        let checkpointer = Arc::new(Checkpointer::new(router.clone(), key, Some(&checkpoint_dir), Duration::from_secs(3_600)));
        let ledger = Arc::new(Ledger::for_router(router, &config, drain.clone()).context("ledger")?.with_checkpointer(checkpointer.clone()));
        let listener = serve::bind(config.listen).await.context("bind")?;
        let addr = listener.local_addr().context("local addr")?;
        let health = match options.health_listener {
            true => Some(serve::bind(config.listen).await.context("bind health")?),
            false => None,
        };
        let health_addr = health.as_ref().map(TcpListener::local_addr).transpose().context("health addr")?;
        let console = match options.console {
            true => Some(serve::bind(config.listen).await.context("bind console")?),
            false => None,
        };
        let console_addr = console.as_ref().map(TcpListener::local_addr).transpose().context("console addr")?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let listeners = serve::Listeners { grpc: listener, health, console };
            serve::serve_with_listeners(&config, listeners, ledger, drain, async move {
                let _ = stopped.await;
            })
            .await
        });
        let server = TestServer {
            addr,
            health_addr,
            console_addr,
            database_url,
            property_id,
            link,
            checkpoint_dir,
            checkpoint_public_key,
            checkpointer,
            _checkpoint_root: checkpoint_root,
            tls: client_tls,
            data_dir,
            stop: Some(stop),
            task: Some(task),
        };
        if server.tls.is_some() {
            // A TLS server is probed by the test itself (it may refuse the probe's identity).
            return Ok(server);
        }
        wait_until_serving(&format!("http://{addr}"), None).await?;
        Ok(server)
    }

    pub fn endpoint(&self) -> anyhow::Result<Endpoint> {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{}", self.addr))?
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60));
        if let Some(tls) = &self.tls {
            endpoint = endpoint.tls_config(tls.clone())?;
        }
        Ok(endpoint)
    }

    pub async fn channel(&self) -> anyhow::Result<Channel> {
        Ok(self.endpoint()?.connect().await?)
    }

    /// Clients on a new connection, authenticated by `principal`'s bearer token.
    pub async fn client(&self, principal: (&str, &str, &str)) -> anyhow::Result<Client> {
        Ok(Client::new(self.channel().await?, Some(principal.2)))
    }

    /// Clients without any credentials.
    pub async fn anonymous(&self) -> anyhow::Result<Client> {
        Ok(Client::new(self.channel().await?, None))
    }

    /// The server's approval signing key (what a replica sharing its key file holds).
    pub fn approval_key(&self) -> anyhow::Result<chipledger_server::approval::ApprovalKey> {
        let file = chipledger_server::config::ApprovalKeyFile {
            path: self.data_dir.path().join(chipledger_server::config::DEFAULT_APPROVAL_KEY_FILE),
            create_if_missing: false,
        };
        Ok(chipledger_server::approval::ApprovalKey::load(&file)?)
    }

    /// Graceful stop: the same path as SIGTERM in the binary.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(60), task).await.context("server stops")???;
        }
        Ok(())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn config(options: &ServerOptions, property_id: &str, data_dir: &std::path::Path) -> anyhow::Result<Config> {
    let mut principals: Vec<PrincipalFile> = principal::ALL
        .iter()
        .map(|(id, role, token)| PrincipalFile {
            id: (*id).to_string(),
            role: (*role).to_string(),
            cert_names: Vec::new(),
            tokens: vec![(*token).to_string()],
            properties: Vec::new(),
        })
        .collect();
    for (id, role, cert_name) in &options.cert_principals {
        principals.push(PrincipalFile {
            id: id.clone(),
            role: role.clone(),
            cert_names: vec![cert_name.clone()],
            tokens: Vec::new(),
            properties: Vec::new(),
        });
    }
    let mut file = FileConfig {
        tls: options.tls.clone(),
        read_database_url: options.read_database_url.clone(),
        shutdown_grace_seconds: Some(5),
        property_id: Some(property_id.to_string()),
        data_dir: Some(data_dir.to_path_buf()),
        ..FileConfig::default()
    };
    file.auth.principals = principals;
    if let Some(customize) = options.customize {
        customize(&mut file);
    }
    let flags = Flags { listen: Some("127.0.0.1:0".parse()?), ..Flags::default() };
    Ok(Config::resolve(flags, file)?)
}

/// Polls gRPC health until the server reports SERVING (bounded by [`STARTUP_BOUND`]).
pub async fn wait_until_serving(url: &str, tls: Option<ClientTlsConfig>) -> anyhow::Result<Duration> {
    let started = std::time::Instant::now();
    let mut last_problem = String::new();
    while started.elapsed() < STARTUP_BOUND {
        let mut endpoint = Endpoint::from_shared(url.to_string())?.connect_timeout(Duration::from_secs(2));
        if let Some(tls) = &tls {
            endpoint = endpoint.tls_config(tls.clone())?;
        }
        match endpoint.connect().await {
            Ok(channel) => {
                let answer = HealthClient::new(channel).check(HealthCheckRequest { service: String::new() }).await;
                match answer {
                    Ok(reply) if reply.get_ref().status == ServingStatus::Serving as i32 => return Ok(started.elapsed()),
                    Ok(reply) => last_problem = format!("health status {}", reply.get_ref().status),
                    Err(status) => last_problem = format!("health check: {status}"),
                }
            }
            Err(error) => last_problem = format!("connect: {error}"),
        }
        tokio::time::sleep(PROBE_INTERVAL).await;
    }
    bail!("{url} not SERVING within {STARTUP_BOUND:?}: {last_problem}")
}

/// Adds `authorization: Bearer <token>` to every request.
#[derive(Clone)]
pub struct Bearer(Option<AsciiMetadataValue>);

impl Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

pub type Authed = InterceptedService<Channel, Bearer>;

/// The chipledger services, as one principal.
#[derive(Clone)]
pub struct Client {
    pub table: TableServiceClient<Authed>,
    pub cage: CageServiceClient<Authed>,
    pub ledger: LedgerServiceClient<Authed>,
    pub audit: AuditServiceClient<Authed>,
    pub approval: ApprovalServiceClient<Authed>,
}

impl Client {
    pub fn new(channel: Channel, token: Option<&str>) -> Client {
        let bearer = Bearer(token.map(|token| {
            let value: MetadataValue<_> = format!("Bearer {token}").parse().expect("token is ASCII");
            value
        }));
        Client {
            table: TableServiceClient::with_interceptor(channel.clone(), bearer.clone()),
            cage: CageServiceClient::with_interceptor(channel.clone(), bearer.clone()),
            ledger: LedgerServiceClient::with_interceptor(channel.clone(), bearer.clone()),
            audit: AuditServiceClient::with_interceptor(channel.clone(), bearer.clone()),
            approval: ApprovalServiceClient::with_interceptor(channel, bearer),
        }
    }

    /// This principal approves `message` as a second person (as sent: its header's command id
    /// and property); the approval token.
    pub async fn approve<T: WireCommand>(&mut self, message: &T) -> Result<pb::ApprovalToken, Status> {
        let command = pb::Command { command: Some(message.clone().into_batch_entry()) };
        Ok(self.approval.approve(pb::ApproveRequest { command: Some(command), ttl_seconds: 0 }).await?.into_inner())
    }
}

/// `message` with the approvals of each of `approvers` in its header (each approves it first).
pub async fn approved<T: WireCommand>(mut message: T, approvers: &mut [&mut Client]) -> Result<T, Status> {
    let mut tokens = Vec::with_capacity(approvers.len());
    for approver in approvers.iter_mut() {
        tokens.push(approver.approve(&message).await?.token);
    }
    message.header_mut().get_or_insert_with(Default::default).approvals.extend(tokens);
    Ok(message)
}

/// A command header with this id and nothing else.
pub fn header(command_id: &str) -> Option<pb::CommandHeader> {
    Some(pb::CommandHeader { command_id: command_id.to_string(), ..Default::default() })
}

pub fn chips(denomination_cents: i64, count: i64) -> pb::ChipCount {
    pb::ChipCount { denomination_cents, count }
}

/// The `google.rpc.ErrorInfo` of a status (panics with the status when there is none: every
/// chipledger error must carry one).
pub fn error_info(status: &Status) -> ErrorInfo {
    status
        .get_error_details()
        .error_info()
        .cloned()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"))
}

/// Balance of `account` in a command's reply.
pub fn reply_balance(result: &pb::CommandResult, account: &str) -> Option<i64> {
    result.balances.iter().find(|balance| balance.account == account).map(|balance| balance.balance_cents)
}

/// Every event of the property, in global order (pages followed to the end, bounded).
pub async fn all_events(client: &mut Client, filter: pb::EventFilter) -> anyhow::Result<Vec<pb::RecordedEvent>> {
    const MAX_PAGES: usize = 1_000;
    let mut events = Vec::new();
    let mut token = String::new();
    for _ in 0..MAX_PAGES {
        let page = client
            .ledger
            .list_events(pb::ListEventsRequest {
                property_id: String::new(),
                filter: Some(filter.clone()),
                page: Some(pb::PageRequest { page_size: 500, page_token: token.clone() }),
            })
            .await?
            .into_inner();
        events.extend(page.events);
        token = page.page.map(|page| page.next_page_token).unwrap_or_default();
        if token.is_empty() {
            return Ok(events);
        }
    }
    bail!("more than {MAX_PAGES} pages of events")
}

/// The head of the log (position and chain hash), read as an auditor would.
pub async fn head(client: &mut Client) -> anyhow::Result<pb::ChainDigest> {
    Ok(client.audit.get_chain_digest(pb::GetChainDigestRequest::default()).await?.into_inner())
}

/// One gRPC frame (uncompressed) around `message`.
pub fn grpc_frame(message: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(message.len() + 5);
    frame.push(0);
    frame.extend_from_slice(&u32::try_from(message.len()).unwrap_or(u32::MAX).to_be_bytes());
    frame.extend_from_slice(message);
    frame
}

/// A unary gRPC call whose HTTP/2 request body is exactly `body` (frames included), as a client
/// with an encoder of its own would send it: the answer's status, from the headers of an
/// immediate error or from the trailers (OK with a reply).
pub async fn raw_grpc(channel: Channel, path: &str, token: Option<&str>, body: Vec<u8>) -> anyhow::Result<Status> {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let mut request = http::Request::builder()
        .method(http::Method::POST)
        .uri(path)
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let request = request.body(tonic::body::Body::new(http_body_util::Full::new(bytes::Bytes::from(body))))?;
    let response = channel.oneshot(request).await?;
    if let Some(status) = Status::from_header_map(response.headers()) {
        return Ok(status);
    }
    let collected = response.into_body().collect().await.map_err(|error| anyhow::anyhow!("response body: {error}"))?;
    let trailers = collected.trailers().cloned().unwrap_or_default();
    Status::from_header_map(&trailers).context("a gRPC answer ends with grpc-status")
}

/// Where the PEM files of a TLS scenario live.
pub fn write_file(dir: &std::path::Path, name: &str, contents: &str) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, contents).with_context(|| format!("write {}", path.display()))?;
    Ok(path)
}
