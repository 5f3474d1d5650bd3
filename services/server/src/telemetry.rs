//! Logs, traces and metrics. `tracing` spans for each RPC, rules decision and SQL call are
//! always on (printed per `RUST_LOG`); when the standard `OTEL_*` variables name an OTLP endpoint
//! the spans and the metrics below are also exported over OTLP. Trace context comes from the
//! caller's `traceparent` metadata (W3C), so a client's trace continues into the ledger.
//!
//! Names follow the OpenTelemetry RPC conventions (`rpc.system`, `rpc.service`, `rpc.method`,
//! `rpc.grpc.status_code` on the RPC span and on `rpc.server.duration`); the project's own
//! attributes live under `chipledger.` (`chipledger.principal`, `chipledger.reason_code`, ...).
//! Durations are milliseconds in explicit buckets from 0.1 ms to 10 s ([`LATENCY_BUCKETS_MS`]),
//! so that an append of a few milliseconds lands in a bucket of its own size.

use std::sync::OnceLock;

use tracing::Instrument;

use opentelemetry::metrics::{Counter, Histogram, Meter};
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

const SERVICE_NAME: &str = "chipledgerd";

/// Bucket boundaries of every latency histogram, in milliseconds: fine below 10 ms (where
/// appends and reads are), coarse up to 10 s (timeouts).
pub const LATENCY_BUCKETS_MS: &[f64] = &[
    0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 1_000.0, 2_500.0,
    5_000.0, 10_000.0,
];

/// A duration in milliseconds (the unit of every latency histogram).
pub fn millis(elapsed: std::time::Duration) -> f64 {
    elapsed.as_secs_f64() * 1_000.0
}

/// gRPC status codes that mark a server span as failed (OpenTelemetry RPC conventions: the
/// server's own faults, not the caller's).
pub fn is_server_error(code: tonic::Code) -> bool {
    matches!(
        code,
        tonic::Code::Unknown
            | tonic::Code::DeadlineExceeded
            | tonic::Code::Unimplemented
            | tonic::Code::Internal
            | tonic::Code::Unavailable
            | tonic::Code::DataLoss
    )
}

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("cannot build the OTLP exporter: {0}")]
    Exporter(String),
    #[error("cannot install the tracing subscriber: {0}")]
    Subscriber(String),
}

/// The installed OpenTelemetry providers; shut them down to flush what is buffered.
#[derive(Debug, Default)]
pub struct Telemetry {
    tracer_provider: Option<SdkTracerProvider>,
    meter_provider: Option<SdkMeterProvider>,
}

fn env_set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| !value.trim().is_empty())
}

fn env_is(name: &str, expected: &str) -> bool {
    std::env::var(name).is_ok_and(|value| value.trim().eq_ignore_ascii_case(expected))
}

/// OTLP export is on when an endpoint is configured and the SDK is not disabled.
fn otlp_wanted(signal_endpoint: &str, signal_exporter: &str) -> bool {
    !env_is("OTEL_SDK_DISABLED", "true")
        && !env_is(signal_exporter, "none")
        && (env_set("OTEL_EXPORTER_OTLP_ENDPOINT") || env_set(signal_endpoint))
}

fn uses_http(signal_protocol: &str) -> bool {
    let protocol = std::env::var(signal_protocol)
        .or_else(|_| std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL"))
        .unwrap_or_default();
    protocol.trim().starts_with("http")
}

fn resource() -> Resource {
    let builder = Resource::builder();
    if env_set("OTEL_SERVICE_NAME") {
        builder.build()
    } else {
        builder.with_service_name(SERVICE_NAME).build()
    }
}

/// Installs the global subscriber (fmt + env filter + OpenTelemetry when enabled), the W3C
/// propagator and the meter provider. Call once, inside the Tokio runtime.
pub fn init() -> Result<Telemetry, TelemetryError> {
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let mut telemetry = Telemetry::default();

    if otlp_wanted("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER") {
        let exporter = if uses_http("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") {
            opentelemetry_otlp::SpanExporter::builder().with_http().build()
        } else {
            opentelemetry_otlp::SpanExporter::builder().with_tonic().build()
        }
        .map_err(|error| TelemetryError::Exporter(error.to_string()))?;
        telemetry.tracer_provider = Some(
            SdkTracerProvider::builder()
                .with_resource(resource())
                .with_batch_exporter(exporter)
                .build(),
        );
    }
    if otlp_wanted("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_METRICS_EXPORTER") {
        let exporter = if uses_http("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL") {
            opentelemetry_otlp::MetricExporter::builder().with_http().build()
        } else {
            opentelemetry_otlp::MetricExporter::builder().with_tonic().build()
        }
        .map_err(|error| TelemetryError::Exporter(error.to_string()))?;
        let provider = SdkMeterProvider::builder()
            .with_resource(resource())
            .with_periodic_exporter(exporter)
            .build();
        opentelemetry::global::set_meter_provider(provider.clone());
        telemetry.meter_provider = Some(provider);
    }

    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,h2=warn,tower=warn"));
    let otel_layer = telemetry
        .tracer_provider
        .as_ref()
        .map(|provider| tracing_opentelemetry::layer().with_tracer(provider.tracer(SERVICE_NAME)));
    // Colours only for a person at a terminal (where the layer's default also honours
    // NO_COLOR): a log file, journald or a container's log collector gets plain text, without
    // escape sequences around every field.
    let fmt_layer = tracing_subscriber::fmt::layer().with_target(false);
    let fmt_layer = if std::io::IsTerminal::is_terminal(&std::io::stdout()) { fmt_layer } else { fmt_layer.with_ansi(false) };
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt_layer)
        .with(otel_layer)
        .try_init()
        .map_err(|error| TelemetryError::Subscriber(error.to_string()))?;
    Ok(telemetry)
}

impl Telemetry {
    pub fn exporting(&self) -> (bool, bool) {
        (self.tracer_provider.is_some(), self.meter_provider.is_some())
    }

    /// Flushes and stops the exporters. The SDK's shutdown blocks, so it runs on a blocking
    /// thread of the multi-thread runtime.
    pub async fn shutdown(self) {
        let Telemetry { tracer_provider, meter_provider } = self;
        let flushed = tokio::task::spawn_blocking(move || {
            if let Some(provider) = tracer_provider
                && let Err(error) = provider.shutdown()
            {
                eprintln!("chipledgerd: trace exporter shutdown: {error}");
            }
            if let Some(provider) = meter_provider
                && let Err(error) = provider.shutdown()
            {
                eprintln!("chipledgerd: metric exporter shutdown: {error}");
            }
        })
        .await;
        if let Err(error) = flushed {
            eprintln!("chipledgerd: telemetry shutdown task failed: {error}");
        }
    }
}

/// Reads W3C `traceparent`/`tracestate` from gRPC metadata (HTTP/2 headers).
struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// The span of one RPC, child of the caller's trace when `traceparent` is present.
pub fn rpc_span(path: &str, headers: &http::HeaderMap) -> tracing::Span {
    let (service, method) = path.trim_start_matches('/').split_once('/').unwrap_or((path, ""));
    let span = tracing::info_span!(
        "rpc",
        otel.name = %path.trim_start_matches('/'),
        otel.kind = "server",
        rpc.system = "grpc",
        rpc.service = %service,
        rpc.method = %method,
        rpc.grpc.status_code = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        chipledger.principal = tracing::field::Empty,
        chipledger.role = tracing::field::Empty,
        chipledger.command_id = tracing::field::Empty,
    );
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&HeaderExtractor(headers))
    });
    // An invalid or absent traceparent leaves the span a root; that is not an error.
    let _ = span.set_parent(parent);
    span
}

/// The database spans' fixed attributes (OpenTelemetry database conventions for PostgreSQL):
/// `db.namespace` is the connection's schema qualified by its database ("chipledger.public").
#[derive(Debug, Clone)]
pub struct DbTracing {
    namespace: String,
}

impl DbTracing {
    /// From the pool's connection options: the database name, else the user name (PostgreSQL's
    /// own default database).
    pub fn for_pool(pool: &sqlx::PgPool) -> DbTracing {
        let options = pool.connect_options();
        let database = options.get_database().unwrap_or_else(|| options.get_username());
        DbTracing { namespace: format!("{database}.public") }
    }

    /// The span of one database call, a child of the current span: named
    /// `{db.operation.name} {db.collection.name}` (e.g. "append events"), kind client, with
    /// `db.system.name` "postgresql". A store operation may run several statements in one
    /// transaction, so `db.operation.name` is the store operation ("append", "read_stream").
    pub fn span(&self, operation: &'static str, collection: &'static str) -> tracing::Span {
        tracing::info_span!(
            "db",
            otel.name = %format_args!("{operation} {collection}"),
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            db.system.name = "postgresql",
            db.namespace = %self.namespace,
            db.operation.name = operation,
            db.collection.name = collection,
            db.response.status_code = tracing::field::Empty,
            error.type = tracing::field::Empty,
        )
    }

    /// Runs one store call inside a fresh [`DbTracing::span`]; a failure marks the span
    /// (`error.type`, the SQLSTATE in `db.response.status_code`, status ERROR).
    pub async fn call<T>(
        &self,
        operation: &'static str,
        collection: &'static str,
        call: impl Future<Output = Result<T, chipledger_store::StoreError>>,
    ) -> Result<T, chipledger_store::StoreError> {
        let span = self.span(operation, collection);
        let result = call.instrument(span.clone()).await;
        if let Err(error) = &result {
            record_db_error(&span, error);
        }
        result
    }
}

/// Marks a database span failed with a low-cardinality error class.
fn record_db_error(span: &tracing::Span, error: &chipledger_store::StoreError) {
    use chipledger_store::StoreError;
    let sqlstate = match error {
        StoreError::Database(sqlx::Error::Database(database)) => database.code().map(|code| code.into_owned()),
        _ => None,
    };
    let class = match (error, &sqlstate) {
        (_, Some(code)) => code.as_str(),
        (StoreError::VersionConflict { .. }, _) => "version_conflict",
        (StoreError::IdempotencyConflict { .. }, _) => "idempotency_conflict",
        (StoreError::Unbalanced { .. }, _) => "unbalanced",
        (StoreError::NegativeBalance { .. }, _) => "negative_balance",
        (StoreError::ProjectionRefused { .. }, _) => "projection_refused",
        (StoreError::InvalidRequest(_), _) => "invalid_request",
        (StoreError::AppendSize { .. }, _) => "append_size",
        (StoreError::Contention(_), _) => "contention",
        (StoreError::Corrupt(_), _) => "corrupt",
        (StoreError::NoPartition { .. }, _) => "no_partition",
        (StoreError::Archived { .. }, _) => "archived",
        (StoreError::GamingDayBehind { .. }, _) => "gaming_day_behind",
        (StoreError::OutsideGamingDay { .. }, _) => "outside_gaming_day",
        (StoreError::ImportOnClosedDay { .. }, _) => "import_on_closed_day",
        (StoreError::Database(sqlx::Error::PoolTimedOut), _) => "pool_timeout",
        (StoreError::Database(_), _) => "database",
        _ => "_OTHER",
    };
    span.record("error.type", class);
    span.record("otel.status_code", "ERROR");
    if let Some(code) = &sqlstate {
        span.record("db.response.status_code", code.as_str());
    }
}

/// The trace id of the current span (hex), recorded in event metadata (R-AUDIT-2).
pub fn current_trace_id() -> String {
    use opentelemetry::trace::TraceContextExt;
    let context = tracing::Span::current().context();
    let span_context = context.span().span_context().clone();
    if span_context.is_valid() { span_context.trace_id().to_string() } else { String::new() }
}

/// The service's metric instruments.
pub struct Metrics {
    /// Events appended, by event type.
    pub events_appended: Counter<u64>,
    /// Commands refused by the rules, by reason code and rule id.
    pub rejections: Counter<u64>,
    /// RPC latency in milliseconds, by `rpc.system`, `rpc.service`, `rpc.method` and
    /// `rpc.grpc.status_code`.
    pub rpc_duration: Histogram<f64>,
    /// Time to append one command's events (transaction included), milliseconds.
    pub append_duration: Histogram<f64>,
    /// Approvals refused (dual control), by `chipledger.reason_code`.
    pub approvals_refused: Counter<u64>,
    /// Calls an authenticated principal's role may not make, by `rpc.method` and
    /// `chipledger.role` (refused before the body is read, so not among the refusals).
    pub access_denied: Counter<u64>,
    /// Version conflicts retried.
    pub version_conflicts: Counter<u64>,
    /// How far a subscriber is behind the head of the log when an event is delivered (events).
    pub subscription_lag: Histogram<u64>,
    /// Periodic checkpoint rounds that failed (an unwritable sink, the database): while they
    /// fail, the entries after the last kept checkpoint are protected by nothing outside the
    /// database (an alert, not only a log line: the operations pass).
    pub checkpoint_failures: Counter<u64>,
}

impl Metrics {
    fn new(meter: &Meter) -> Metrics {
        Metrics {
            events_appended: meter
                .u64_counter("chipledger.events.appended")
                .with_description("Events appended, by event type")
                .build(),
            rejections: meter
                .u64_counter("chipledger.commands.rejected")
                .with_description("Commands refused by the rules, by reason")
                .build(),
            rpc_duration: meter
                .f64_histogram("rpc.server.duration")
                .with_unit("ms")
                .with_description("Duration of inbound RPCs")
                .with_boundaries(LATENCY_BUCKETS_MS.to_vec())
                .build(),
            append_duration: meter
                .f64_histogram("chipledger.append.duration")
                .with_unit("ms")
                .with_description("Append latency (one transaction)")
                .with_boundaries(LATENCY_BUCKETS_MS.to_vec())
                .build(),
            approvals_refused: meter
                .u64_counter("chipledger.approvals.refused")
                .with_description("Commands refused because an approval, signer or supervisor was not proven")
                .build(),
            access_denied: meter
                .u64_counter("chipledger.access.denied")
                .with_description("Calls refused for the caller's role (ROLE_NOT_PERMITTED)")
                .build(),
            version_conflicts: meter
                .u64_counter("chipledger.append.version_conflicts")
                .with_description("Optimistic concurrency conflicts, retried or returned as ABORTED")
                .build(),
            subscription_lag: meter
                .u64_histogram("chipledger.subscription.lag")
                .with_unit("{event}")
                .with_description("Events between a delivered event and the head of the log")
                .build(),
            checkpoint_failures: meter
                .u64_counter("chipledger.checkpoints.failed")
                .with_description("Periodic checkpoint rounds that failed (sink or database): alert on any")
                .build(),
        }
    }
}

/// The instruments, created on first use from the global meter provider (a no-op provider
/// until `init` installs the OTLP one, so call `init` first).
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| Metrics::new(&opentelemetry::global::meter(SERVICE_NAME)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_from_metadata_becomes_the_parent_of_the_rpc_span() {
        use opentelemetry::trace::TraceContextExt;
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".parse().unwrap(),
        );
        let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.extract(&HeaderExtractor(&headers))
        });
        let span_context = parent.span().span_context().clone();
        assert!(span_context.is_remote());
        assert_eq!(span_context.trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(span_context.span_id().to_string(), "00f067aa0ba902b7");
    }
}
