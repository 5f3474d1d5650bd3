//! The gate every request passes before it reaches a handler: opens the RPC span (continuing
//! the caller's W3C trace), authenticates the caller, checks the role table, records latency.
//! Health and reflection are public so standard tools work without credentials.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use opentelemetry::KeyValue;
use tonic::body::Body;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};
use tower::{Layer, Service};
use tracing::Instrument;

use crate::access::{self, Authenticator};
use crate::telemetry;

#[derive(Clone)]
pub struct GateLayer {
    authenticator: Arc<Authenticator>,
}

impl GateLayer {
    pub fn new(authenticator: Authenticator) -> GateLayer {
        GateLayer { authenticator: Arc::new(authenticator) }
    }
}

impl<S> Layer<S> for GateLayer {
    type Service = Gate<S>;
    fn layer(&self, inner: S) -> Gate<S> {
        Gate { inner, authenticator: self.authenticator.clone() }
    }
}

#[derive(Clone)]
pub struct Gate<S> {
    inner: S,
    authenticator: Arc<Authenticator>,
}

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send + 'static>>;

impl<S> Service<http::Request<Body>> for Gate<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<Body>) -> Self::Future {
        // The clone that was driven to readiness handles this request (tower's usual dance).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let path = request.uri().path().to_string();
        let span = telemetry::rpc_span(&path, request.headers());
        let admitted = span.in_scope(|| admit(&self.authenticator, &path, &mut request));
        let future = async move {
            let started = Instant::now();
            let response = match admitted {
                Ok(()) => inner.call(request).await,
                Err(status) => {
                    tracing::info!(code = ?status.code(), message = status.message(), "refused at the gate");
                    Ok(status.into_http())
                }
            };
            telemetry::metrics()
                .rpc_duration
                .record(started.elapsed().as_secs_f64(), &[KeyValue::new("rpc.method", path)]);
            response
        };
        Box::pin(future.instrument(span))
    }
}

/// Authenticates and authorizes; on success the principal is in the request extensions.
fn admit(
    authenticator: &Authenticator,
    path: &str,
    request: &mut http::Request<Body>,
) -> Result<(), tonic::Status> {
    if access::is_public(path) {
        return Ok(());
    }
    let certificate_names = match request
        .extensions()
        .get::<TlsConnectInfo<TcpConnectInfo>>()
        .and_then(TlsConnectInfo::peer_certs)
    {
        Some(chain) => match chain.first() {
            Some(leaf) => Some(access::certificate_names(leaf)?),
            None => None,
        },
        None => None,
    };
    let authorization = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    let principal = authenticator.authenticate(certificate_names.as_deref(), authorization)?;
    let span = tracing::Span::current();
    span.record("principal", principal.id.as_str());
    span.record("role", access::role_name(&principal.role));
    access::authorize(&principal, path)?;
    request.extensions_mut().insert(principal);
    Ok(())
}
