//! The console under TLS: the `[tls]` identity of the gRPC listener, and with `client_ca` the
//! client certificates it verifies (optional, so a token can still sign in). A verified
//! certificate's names reach the sign-in handler as [`PeerNames`].

use std::sync::Arc;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, RootCertStore, ServerConfig};
use tower::ServiceExt;

use crate::config::TlsFile;

/// The names of the client certificate the connection presented (verified against `client_ca`).
#[derive(Debug, Clone)]
pub struct PeerNames(pub Vec<String>);

#[derive(Clone)]
pub struct Acceptor(tokio_rustls::TlsAcceptor);

impl Acceptor {
    pub fn from_files(files: &TlsFile) -> Result<Acceptor, String> {
        let read = |path: &std::path::Path| std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()));
        let chain = CertificateDer::pem_slice_iter(&read(&files.cert)?)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| format!("{}: {error}", files.cert.display()))?;
        let key = PrivateKeyDer::from_pem_slice(&read(&files.key)?).map_err(|error| format!("{}: {error}", files.key.display()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|error| error.to_string())?;
        let builder = match &files.client_ca {
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                for certificate in CertificateDer::pem_slice_iter(&read(ca)?) {
                    let certificate = certificate.map_err(|error| format!("{}: {error}", ca.display()))?;
                    roots.add(certificate).map_err(|error| format!("{}: {error}", ca.display()))?;
                }
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .allow_unauthenticated()
                    .build()
                    .map_err(|error| error.to_string())?;
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let mut config = builder.with_single_cert(chain, key).map_err(|error| error.to_string())?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Acceptor(tokio_rustls::TlsAcceptor::from(Arc::new(config))))
    }
}

/// Accepts TLS connections until `stop`, each served by hyper with the console's router.
pub async fn serve(
    listener: TcpListener,
    acceptor: Acceptor,
    app: Router,
    stop: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut stop = std::pin::pin!(stop);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = &mut stop => return Ok(()),
        };
        let acceptor = acceptor.0.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(tcp).await else { return };
            let names = stream
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|leaf| crate::access::certificate_names(leaf).ok())
                .map(PeerNames);
            let service = hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                if let Some(names) = &names {
                    request.extensions_mut().insert(names.clone());
                }
                request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                app.clone().oneshot(request.map(axum::body::Body::new))
            });
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            if let Err(error) = builder.serve_connection(TokioIo::new(stream), service).await {
                tracing::debug!(%error, "a console connection ended");
            }
        });
    }
}
