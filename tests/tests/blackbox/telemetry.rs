//! Telemetry (ARCHITECTURE.md, Service): with the standard OTEL_* variables set, one RPC
//! exports its span tree (RPC -> rules decision, RPC -> SQL) under the trace id the client sent
//! in `traceparent`, and the metrics arrive. The receiver is an OTLP/gRPC collector served by
//! this test on 127.0.0.1; the server is the `chipledgerd` binary in a process of its own,
//! since OpenTelemetry is configured from the process environment.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chipledger_postgres::TestPostgres;
use chipledger_proto::v1 as pb;
use chipledger_tests::binary::ChildServer;
use chipledger_tests::{Client, header, wait_until_serving, write_file};
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{MetricsService, MetricsServiceServer};
use opentelemetry_proto::tonic::collector::metrics::v1::{ExportMetricsServiceRequest, ExportMetricsServiceResponse};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::trace::v1::Span;
use tonic::metadata::MetadataValue;

/// What the in-test collector received.
#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    metric_names: Vec<String>,
}

#[derive(Clone, Default)]
struct Collector(Arc<Mutex<Received>>);

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let spans = request
            .into_inner()
            .resource_spans
            .into_iter()
            .flat_map(|resource| resource.scope_spans)
            .flat_map(|scope| scope.spans);
        if let Ok(mut received) = self.0.lock() {
            received.spans.extend(spans);
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

#[tonic::async_trait]
impl MetricsService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        let names = request
            .into_inner()
            .resource_metrics
            .into_iter()
            .flat_map(|resource| resource.scope_metrics)
            .flat_map(|scope| scope.metrics)
            .map(|metric| metric.name);
        if let Ok(mut received) = self.0.lock() {
            received.metric_names.extend(names);
        }
        Ok(tonic::Response::new(ExportMetricsServiceResponse { partial_success: None }))
    }
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN_ID: &str = "00f067aa0ba902b7";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// True when `span` descends from the span `ancestor_id` (following parents within `by_id`).
fn descends_from(span: &Span, ancestor_id: &[u8], by_id: &HashMap<Vec<u8>, &Span>) -> bool {
    let mut parent = span.parent_span_id.clone();
    for _ in 0..64 {
        if parent == ancestor_id {
            return true;
        }
        match by_id.get(&parent) {
            Some(next) => parent = next.parent_span_id.clone(),
            None => return false,
        }
    }
    false
}

fn is_sql_span(span: &Span) -> bool {
    let name = span.name.to_ascii_lowercase();
    let has_db_attribute = span.attributes.iter().any(|kv| kv.key.starts_with("db.") || kv.key == "db.system");
    has_db_attribute || name.starts_with("sql") || name.starts_with("db") || name.contains("select") || name.contains("insert")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_rpc_exports_its_span_tree_under_the_callers_trace_id_and_metrics_arrive() -> anyhow::Result<()> {
    // The collector.
    let collector = Collector::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let collector_addr = listener.local_addr()?;
    let (stop_collector, collector_stopped) = tokio::sync::oneshot::channel::<()>();
    let collector_task = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(collector.clone()))
            .add_service(MetricsServiceServer::new(collector.clone()))
            .serve_with_incoming_shutdown(tokio_stream::wrappers::TcpListenerStream::new(listener), async {
                let _ = collector_stopped.await;
            }),
    );

    // Its own PostgreSQL: the child sets the cluster-wide application role's password.
    let postgres = TestPostgres::start().await?;
    let database_url = postgres.fresh_database("telemetry").await?;
    let dir = tempfile::tempdir()?;
    let config = write_file(dir.path(), "chipledgerd.toml", "[auth]\ndev_anonymous_role = \"admin\"\n")?;
    let config = config.to_string_lossy().to_string();
    let env = [
        ("DATABASE_URL", database_url),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{collector_addr}")),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_string()),
        ("OTEL_SERVICE_NAME", "chipledgerd-under-test".to_string()),
    ];
    let child = ChildServer::spawn(&["--config", &config, "--listen", "127.0.0.1:0"], &env, dir.path()).await?;
    let url = format!("http://{}", child.addr);
    wait_until_serving(&url, None).await?;

    // One RPC, continuing the client's trace.
    let channel = tonic::transport::Endpoint::from_shared(url)?.connect().await?;
    let mut client = Client::new(channel, None);
    let mut request = tonic::Request::new(pb::OpenTable {
        header: header("traced-open"),
        table_id: "T1".into(),
        configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
            game: pb::GamePreset::NoLimitHoldem as i32,
            small_cents: 100,
            big_cents: 200,
            ..Default::default()
        })),
    });
    let traceparent: MetadataValue<_> = format!("00-{TRACE_ID}-{CLIENT_SPAN_ID}-01").parse()?;
    request.metadata_mut().insert("traceparent", traceparent);
    let result = client.table.open_table(request).await?.into_inner();
    assert_eq!(result.events.len(), 1);

    // SIGTERM flushes the exporters (batch spans and the last metric reading) before exit.
    let (status, output) = child.terminate().await?;
    assert!(status.success(), "chipledgerd exit {status}: {}", output.join("\n"));
    let _ = stop_collector.send(());
    collector_task.await??;

    let received = collector.0.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
    let trace: Vec<&Span> = received.spans.iter().filter(|span| hex(&span.trace_id) == TRACE_ID).collect();
    let names: Vec<&str> = trace.iter().map(|span| span.name.as_str()).collect();
    let by_id: HashMap<Vec<u8>, &Span> = trace.iter().map(|span| (span.span_id.clone(), *span)).collect();
    let rpc = trace
        .iter()
        .find(|span| span.name.contains("TableService/OpenTable"))
        .unwrap_or_else(|| panic!("no RPC span under trace {TRACE_ID}; spans of the trace: {names:?}; all: {:?}",
            received.spans.iter().map(|s| (hex(&s.trace_id), s.name.clone())).collect::<Vec<_>>()));
    assert_eq!(hex(&rpc.parent_span_id), CLIENT_SPAN_ID, "the RPC span's parent is the caller's span");
    // Every expectation is checked and reported together.
    let mut problems: Vec<String> = Vec::new();
    match trace.iter().find(|span| span.name == "rules.decide") {
        Some(decision) if descends_from(decision, &rpc.span_id, &by_id) => {}
        Some(_) => problems.push(format!("the rules decision span is not under the RPC span: {names:?}")),
        None => problems.push(format!("no rules decision span under the trace: {names:?}")),
    }
    let sql: Vec<&&Span> = trace.iter().filter(|span| is_sql_span(span)).collect();
    if sql.is_empty() {
        problems.push(format!("no SQL span (db.* attributes or an sql/db name) under trace {TRACE_ID}: {names:?}"));
    } else if !sql.iter().all(|span| descends_from(span, &rpc.span_id, &by_id)) {
        problems.push(format!("SQL spans not under the RPC span: {names:?}"));
    }
    for metric in ["chipledger.events.appended", "rpc.server.duration", "chipledger.append.duration"] {
        if !received.metric_names.iter().any(|name| name == metric) {
            problems.push(format!("metric {metric} missing; received {:?}", received.metric_names));
        }
    }
    assert!(problems.is_empty(), "telemetry problems:\n{}", problems.join("\n"));
    Ok(())
}
