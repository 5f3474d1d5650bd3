//! Builds and runs the tonic server: the chipledger services behind the gate, gRPC health (v1,
//! NOT_SERVING while the database is unreachable) and server reflection (v1 and v1alpha), plain
//! or TLS/mTLS, with graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chipledger_proto::v1::approval_service_server::ApprovalServiceServer;
use chipledger_proto::v1::audit_service_server::AuditServiceServer;
use chipledger_proto::v1::cage_service_server::CageServiceServer;
use chipledger_proto::v1::ledger_service_server::LedgerServiceServer;
use chipledger_proto::v1::table_service_server::TableServiceServer;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::server::NamedService;
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};

use crate::config::{Config, TlsFile};
use crate::gate::GateLayer;
use crate::health::{self, DatabaseHealth};
use crate::ledger::Ledger;
use crate::service::Services;
use crate::shutdown::Drain;

/// Largest request accepted (a batch of 1000 commands fits easily).
pub(crate) const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// HTTP/2 flow-control windows of the gRPC listener. A DATA frame under 256 bytes (one small
/// command of a device's stream) is charged against the connection's frame budget until the
/// server reads it, and h2 cuts the whole connection when the budget runs out (GOAWAY
/// ENHANCE_YOUR_CALM, `too_many_data_frames`); the budget is half the connection window. With
/// hyper's defaults (1 MiB each) a device writing ahead of its replies had a megabyte of small
/// frames unread and was cut after a few dozen replies, with every other call on its
/// connection (the stream pass). A stream may have at most its window unread: 64 KiB of
/// messages of 5 bytes or more cost at most 3.2 MB of a 4 MiB budget, so a client that sends
/// ahead is slowed by flow control, never cut; a connection still carries 8 MiB in flight.
const STREAM_WINDOW_BYTES: u32 = 64 * 1024;
const CONNECTION_WINDOW_BYTES: u32 = 8 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot read TLS file {path}: {source}")]
    TlsFile { path: std::path::PathBuf, source: std::io::Error },
    #[error("invalid TLS configuration: {0}")]
    Tls(tonic::transport::Error),
    #[error("cannot build reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    #[error("server failed: {0}")]
    Transport(tonic::transport::Error),
    #[error("the console: {0}")]
    Console(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
}

fn read(path: &std::path::Path) -> Result<Vec<u8>, ServeError> {
    std::fs::read(path).map_err(|source| ServeError::TlsFile { path: path.to_path_buf(), source })
}

fn tls_config(tls: &TlsFile) -> Result<ServerTlsConfig, ServeError> {
    let identity = Identity::from_pem(read(&tls.cert)?, read(&tls.key)?);
    let mut config = ServerTlsConfig::new().identity(identity);
    if let Some(ca) = &tls.client_ca {
        config = config.client_ca_root(Certificate::from_pem(read(ca)?)).client_auth_optional(tls.client_auth_optional);
    }
    Ok(config)
}

/// Binds the listen address (port 0 picks a free port; see `local_addr`).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })
}

/// The health service name that says only "this process runs and answers" (Kubernetes'
/// liveness probe): SERVING from the start, whatever the database does.
pub const LIVENESS_SERVICE: &str = "liveness";

/// Where chipledgerd listens: gRPC, and optionally gRPC health alone and the web console.
pub struct Listeners {
    pub grpc: TcpListener,
    /// gRPC health alone, plaintext (for probes that cannot present a client certificate).
    pub health: Option<TcpListener>,
    /// The back-office web console (`crate::console`).
    pub console: Option<TcpListener>,
}

impl Listeners {
    /// The configured extra listeners beside an already bound gRPC one.
    pub async fn beside(config: &Config, grpc: TcpListener) -> Result<Listeners, ServeError> {
        let health = match config.health_listen {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        let console = match config.console_listen {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        Ok(Listeners { grpc, health, console })
    }
}

/// Serves until `shutdown` resolves, then stops accepting, ends subscriptions, waits for the
/// appends in flight (at most `config.shutdown_grace`) and returns. The configured health
/// listener and console are bound and served beside it.
pub async fn serve(
    config: &Config,
    listener: TcpListener,
    ledger: Arc<Ledger>,
    drain: Drain,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let listeners = Listeners::beside(config, listener).await?;
    serve_with_listeners(config, listeners, ledger, drain, shutdown).await
}

/// How often a server reads the database's clock again ([`Ledger::measure_clock`]).
const CLOCK_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// As [`serve`], with every listener bound by the caller.
pub async fn serve_with_listeners(
    config: &Config,
    listeners: Listeners,
    ledger: Arc<Ledger>,
    drain: Drain,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let Listeners { grpc: listener, health: health_listener, console: console_listener } = listeners;
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter.set_service_status(LIVENESS_SERVICE, tonic_health::ServingStatus::Serving).await;
    let _health_only = match health_listener {
        Some(listener) => {
            if let Ok(addr) = listener.local_addr() {
                println!("chipledgerd health on {addr} (plaintext, gRPC health only)");
            }
            let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
            let served = Server::builder().add_service(health_service.clone()).serve_with_incoming(incoming);
            Some(AbortOnDrop(tokio::spawn(async move {
                if let Err(error) = served.await {
                    tracing::error!(%error, "the health listener failed");
                }
            })))
        }
        None => None,
    };
    let services_served = vec![
        <TableServiceServer<Services> as NamedService>::NAME,
        <CageServiceServer<Services> as NamedService>::NAME,
        <LedgerServiceServer<Services> as NamedService>::NAME,
        <AuditServiceServer<Services> as NamedService>::NAME,
        <ApprovalServiceServer<Services> as NamedService>::NAME,
    ];
    for service in &services_served {
        health_reporter.set_service_status(*service, tonic_health::ServingStatus::Serving).await;
    }
    let database = DatabaseHealth::default();
    tokio::spawn(health::probe_database(
        (*ledger.router().default_primary().pool().connect_options()).clone(),
        database.clone(),
        health_reporter.clone(),
        services_served.clone(),
        drain.stopping(),
    ));

    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(chipledger_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(chipledger_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;

    // Commands are timed by the database's clock (R-CHIP-6): measured before the first is
    // served, then every CLOCK_EVERY while the server runs.
    if let Err(error) = ledger.measure_clock().await {
        tracing::warn!(%error, "could not read the database's clock; this host's is used until it can");
    }
    let _clock = {
        let (ledger, mut stopping) = (ledger.clone(), drain.stopping());
        AbortOnDrop(tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stopping.wait_for(|stopping| *stopping) => return,
                    _ = tokio::time::sleep(CLOCK_EVERY) => {}
                }
                if let Err(error) = ledger.measure_clock().await {
                    tracing::debug!(%error, "could not read the database's clock");
                }
            }
        }))
    };
    let authenticator = ledger.authenticator();
    let services = Services::new(ledger, drain.clone());
    let _console = match console_listener {
        Some(listener) => {
            let console = crate::console::Console::new(services.clone(), authenticator.clone(), config)
                .map_err(ServeError::Console)?;
            if let Ok(addr) = listener.local_addr() {
                let scheme = if console.is_tls() { "https" } else { "http" };
                println!("chipledgerd console on {scheme}://{addr}/");
            }
            let stopping = drain.stopping();
            Some(AbortOnDrop(tokio::spawn(console.serve(listener, stopping))))
        }
        None => None,
    };
    let mut builder = Server::builder()
        .initial_stream_window_size(STREAM_WINDOW_BYTES)
        .initial_connection_window_size(CONNECTION_WINDOW_BYTES);
    if let Some(tls) = &config.tls {
        builder = builder.tls_config(tls_config(tls)?).map_err(ServeError::Tls)?;
    }
    let router = builder
        .layer(GateLayer::new(authenticator, database, MAX_MESSAGE_BYTES))
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(TableServiceServer::new(services.clone()).max_decoding_message_size(MAX_MESSAGE_BYTES))
        .add_service(CageServiceServer::new(services.clone()).max_decoding_message_size(MAX_MESSAGE_BYTES))
        .add_service(LedgerServiceServer::new(services.clone()).max_decoding_message_size(MAX_MESSAGE_BYTES))
        .add_service(AuditServiceServer::new(services.clone()).max_decoding_message_size(MAX_MESSAGE_BYTES))
        .add_service(ApprovalServiceServer::new(services).max_decoding_message_size(MAX_MESSAGE_BYTES));

    let grace = config.shutdown_grace;
    let (stop_accepting, stopped_accepting) = tokio::sync::oneshot::channel::<()>();
    let (shutdown_began, shutdown_signalled) = tokio::sync::oneshot::channel::<()>();
    let drain_on_signal = {
        let drain = drain.clone();
        async move {
            shutdown.await;
            let _ = shutdown_began.send(());
            health_reporter.set_service_status("", tonic_health::ServingStatus::NotServing).await;
            for service in &services_served {
                health_reporter.set_service_status(*service, tonic_health::ServingStatus::NotServing).await;
            }
            // End subscriptions so that connections can close, then let hyper drain the rest.
            let drained = tokio::time::timeout(grace, drain.close()).await;
            if drained.is_err() {
                tracing::warn!(?grace, "appends still in flight after the grace period");
            }
            let _ = stop_accepting.send(());
        }
    };
    tokio::spawn(drain_on_signal);
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let served = router.serve_with_incoming_shutdown(incoming, async move {
        let _ = stopped_accepting.await;
    });
    let mut served = std::pin::pin!(served);
    // Serve without a time limit until the shutdown signal; only the drain after it is bounded.
    tokio::select! {
        result = &mut served => return result.map_err(ServeError::Transport),
        _ = shutdown_signalled => {}
    }
    // Hyper's graceful shutdown waits for open requests; bound it too.
    match tokio::time::timeout(grace + Duration::from_secs(5), served).await {
        Ok(result) => result.map_err(ServeError::Transport),
        Err(_) => {
            tracing::warn!("connections still open after the grace period; closing them");
            Ok(())
        }
    }
}

/// The health listener lives as long as the main server's `serve` call.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
