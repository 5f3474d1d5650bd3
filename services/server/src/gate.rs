//! The gate every request passes before it reaches a handler: opens the RPC span (continuing
//! the caller's W3C trace), authenticates the caller, checks the role table, answers UNAVAILABLE
//! at once while the database is unreachable, checks the request's protobuf bytes (bad input is
//! INVALID_ARGUMENT, never INTERNAL), and records the RPC's duration and final gRPC status code
//! on the span and in `rpc.server.duration`. Health and reflection are public so standard tools
//! work without credentials.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use opentelemetry::KeyValue;
use tonic::body::Body;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};
use tower::{Layer, Service};
use tracing::Instrument;

use crate::access::{self, Authenticator};
use crate::health::DatabaseHealth;
use crate::protowire::Schemas;
use crate::telemetry;

/// RPCs that answer without the database (they are not refused while it is unreachable).
const WITHOUT_DATABASE: &[&str] = &["/chipledger.v1.ApprovalService/Approve"];

#[derive(Clone)]
pub struct GateLayer {
    shared: Arc<Shared>,
}

struct Shared {
    authenticator: Arc<Authenticator>,
    database: DatabaseHealth,
    schemas: Schemas,
    /// Largest request body accepted (a frame header plus the largest message).
    max_body_bytes: usize,
}

impl GateLayer {
    pub fn new(authenticator: Arc<Authenticator>, database: DatabaseHealth, max_message_bytes: usize) -> GateLayer {
        let schemas = Schemas::from_descriptor_set(chipledger_proto::FILE_DESCRIPTOR_SET)
            .expect("the compiled-in descriptor set decodes");
        GateLayer {
            shared: Arc::new(Shared { authenticator, database, schemas, max_body_bytes: max_message_bytes + 5 }),
        }
    }
}

impl<S> Layer<S> for GateLayer {
    type Service = Gate<S>;
    fn layer(&self, inner: S) -> Gate<S> {
        Gate { inner, shared: self.shared.clone() }
    }
}

#[derive(Clone)]
pub struct Gate<S> {
    inner: S,
    shared: Arc<Shared>,
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
        let admitted = span.in_scope(|| admit(&self.shared, &path, &mut request));
        let shared = self.shared.clone();
        let observed_span = span.clone();
        let future = async move {
            let started = Instant::now();
            let outcome = match admitted {
                Ok(checks_body) => match checked_body(&shared, &path, request, checks_body).await {
                    Ok(request) => inner.call(request).await,
                    Err(status) => Ok(refuse(status)),
                },
                Err(status) => Ok(refuse(status)),
            };
            let observation = Observation { span: observed_span, path, started };
            outcome.map(|response| observation.watch(response))
        };
        Box::pin(future.instrument(span))
    }
}

fn refuse(status: tonic::Status) -> http::Response<Body> {
    tracing::info!(code = ?status.code(), message = status.message(), "refused at the gate");
    status.into_http()
}

/// Authenticates and authorizes; on success the principal is in the request extensions.
/// `Ok(true)`: a chipledger RPC whose body is to be checked.
fn admit(shared: &Shared, path: &str, request: &mut http::Request<Body>) -> Result<bool, tonic::Status> {
    if access::is_public(path) {
        return Ok(false);
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
    let principal = shared.authenticator.authenticate(certificate_names.as_deref(), authorization)?;
    let span = tracing::Span::current();
    span.record("chipledger.principal", principal.id.as_str());
    span.record("chipledger.role", access::role_name(&principal.role));
    // A command's role is checked by the ledger, which keeps a refusal for it among the
    // refusals (R-AUDIT-3); every other call's here, before its body is read.
    if !chipledger_proto::COMMAND_RPCS.contains(&path) {
        access::authorize_call(&principal, path)?;
    }
    if !shared.database.is_reachable() && !WITHOUT_DATABASE.contains(&path) {
        return Err(crate::status::unavailable(path, &"the database probe fails"));
    }
    request.extensions_mut().insert(principal);
    Ok(shared.schemas.knows(path))
}

/// The request with its body read and checked against the RPC's message ([`Schemas`]): bad
/// bytes are INVALID_ARGUMENT here, before tonic's decoder (which would say INTERNAL).
async fn checked_body(
    shared: &Shared,
    path: &str,
    request: http::Request<Body>,
    check: bool,
) -> Result<http::Request<Body>, tonic::Status> {
    if !check {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    let limited = http_body_util::Limited::new(body, shared.max_body_bytes);
    let bytes: Bytes = match http_body_util::BodyExt::collect(limited).await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            // The body is one message and its 5-byte gRPC frame prefix: the bound named is the message's.
            return Err(crate::status::message_too_large(shared.max_body_bytes - 5));
        }
        Err(error) => return Err(tonic::Status::cancelled(format!("request body: {error}"))),
    };
    shared.schemas.check_body(path, &bytes).map_err(|malformed| malformed.into_status())?;
    Ok(http::Request::from_parts(parts, Body::new(http_body_util::Full::new(bytes))))
}

/// What is recorded when the RPC's final status is known: from the response headers for an
/// immediate error (trailers-only), else from the trailers at the end of the body.
struct Observation {
    span: tracing::Span,
    path: String,
    started: Instant,
}

impl Observation {
    fn watch(self, response: http::Response<Body>) -> http::Response<Body> {
        if let Some(code) = grpc_status(response.headers()) {
            self.finish(code);
            return response;
        }
        let (parts, body) = response.into_parts();
        http::Response::from_parts(parts, Body::new(ObservedBody { inner: body, observation: Some(self) }))
    }

    fn finish(self, code: tonic::Code) {
        let code_number = code as i32;
        self.span.record("rpc.grpc.status_code", code_number);
        if telemetry::is_server_error(code) {
            self.span.record("otel.status_code", "ERROR");
        }
        let (service, method) = self.path.trim_start_matches('/').split_once('/').unwrap_or((&self.path, ""));
        telemetry::metrics().rpc_duration.record(
            telemetry::millis(self.started.elapsed()),
            &[
                KeyValue::new("rpc.system", "grpc"),
                KeyValue::new("rpc.service", service.to_string()),
                KeyValue::new("rpc.method", method.to_string()),
                KeyValue::new("rpc.grpc.status_code", i64::from(code_number)),
            ],
        );
    }
}

fn grpc_status(headers: &http::HeaderMap) -> Option<tonic::Code> {
    let value = headers.get("grpc-status")?.to_str().ok()?.parse::<i32>().ok()?;
    Some(tonic::Code::from_i32(value))
}

/// A response body that reports the status from its trailers (or CANCELLED when the client
/// went away before them).
struct ObservedBody {
    inner: Body,
    observation: Option<Observation>,
}

impl http_body::Body for ObservedBody {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(code) = frame.trailers_ref().and_then(grpc_status)
                    && let Some(observation) = self.observation.take()
                {
                    observation.finish(code);
                }
            }
            Poll::Ready(Some(Err(status))) => {
                if let Some(observation) = self.observation.take() {
                    observation.finish(status.code());
                }
            }
            Poll::Ready(None) => {
                // A gRPC response ends with trailers; one without says nothing of its outcome.
                if let Some(observation) = self.observation.take() {
                    observation.finish(tonic::Code::Unknown);
                }
            }
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for ObservedBody {
    fn drop(&mut self) {
        if let Some(observation) = self.observation.take() {
            observation.finish(tonic::Code::Cancelled);
        }
    }
}
