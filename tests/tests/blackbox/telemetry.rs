//! Telemetry (ARCHITECTURE.md, Service): with the standard OTEL_* variables set, one RPC
//! exports its span tree (RPC -> rules decision, RPC -> SQL) under the trace id the client sent
//! in `traceparent`, and the metrics arrive. The RPC span and `rpc.server.duration` carry the
//! OpenTelemetry RPC attributes (`rpc.system`, `rpc.service`, `rpc.method`,
//! `rpc.grpc.status_code`, also for a failed call), project attributes live under
//! `chipledger.`, and latency histograms are milliseconds in the explicit buckets of
//! `LATENCY_BUCKETS_MS`. The receiver is an OTLP/gRPC collector served by
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
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric};
use opentelemetry_proto::tonic::trace::v1::Span;
use tonic::metadata::MetadataValue;

/// What the in-test collector received.
#[derive(Default)]
struct Received {
    spans: Vec<Span>,
    metrics: Vec<Metric>,
}

/// An attribute's value as text (strings as they are, integers in decimal).
fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    let value = attributes.iter().find(|kv| kv.key == key)?.value.as_ref()?.value.as_ref()?;
    match value {
        any_value::Value::StringValue(text) => Some(text.clone()),
        any_value::Value::IntValue(number) => Some(number.to_string()),
        other => Some(format!("{other:?}")),
    }
}

fn int_attribute(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match attributes.iter().find(|kv| kv.key == key)?.value.as_ref()?.value.as_ref()? {
        any_value::Value::IntValue(number) => Some(*number),
        _ => None,
    }
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
        let metrics = request
            .into_inner()
            .resource_metrics
            .into_iter()
            .flat_map(|resource| resource.scope_metrics)
            .flat_map(|scope| scope.metrics);
        if let Ok(mut received) = self.0.lock() {
            received.metrics.extend(metrics);
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

    // Its own PostgreSQL, prepared by the admin step; the child runs as the application role.
    let postgres = TestPostgres::start().await?;
    let database_url = postgres.fresh_database("telemetry").await?;
    chipledger_tests::prepare_database(&database_url).await?;
    let database_url = chipledger_tests::app_url(&database_url)?;
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
    // A call the server answers with an error (NOT_FOUND = 5) under the same trace.
    let mut missing = tonic::Request::new(pb::GetTableRequest { property_id: String::new(), table_id: "T404".into(), as_of: None });
    missing.metadata_mut().insert("traceparent", format!("00-{TRACE_ID}-{CLIENT_SPAN_ID}-01").parse()?);
    let status = client.table.get_table(missing).await.expect_err("no such table");
    assert_eq!(status.code(), tonic::Code::NotFound);

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
    } else if !sql.iter().any(|span| descends_from(span, &rpc.span_id, &by_id)) {
        problems.push(format!("no SQL span under the OpenTable RPC span: {names:?}"));
    } else if !sql.iter().all(|span| trace.iter().any(|parent| parent.name.starts_with("chipledger.v1.") && descends_from(span, &parent.span_id, &by_id))) {
        problems.push(format!("SQL spans outside every RPC span: {names:?}"));
    }
    // The RPC span: semantic-convention attributes, the final status, project attributes.
    for (key, expected) in [
        ("rpc.system", "grpc"),
        ("rpc.service", "chipledger.v1.TableService"),
        ("rpc.method", "OpenTable"),
        ("chipledger.command_id", "traced-open"),
        ("chipledger.principal", "local-dev"),
        ("chipledger.role", "admin"),
    ] {
        if attribute(&rpc.attributes, key).as_deref() != Some(expected) {
            problems.push(format!("RPC span {key} = {:?}, expected {expected:?}", attribute(&rpc.attributes, key)));
        }
    }
    if int_attribute(&rpc.attributes, "rpc.grpc.status_code") != Some(0) {
        problems.push(format!("RPC span rpc.grpc.status_code: {:?}", attribute(&rpc.attributes, "rpc.grpc.status_code")));
    }
    for kv in &rpc.attributes {
        let known = kv.key.starts_with("rpc.") || kv.key.starts_with("chipledger.") || kv.key.starts_with("otel.")
            || kv.key.starts_with("code.") || kv.key.starts_with("thread.") || kv.key == "busy_ns" || kv.key == "idle_ns"
            || kv.key == "level" || kv.key == "target";
        if !known {
            problems.push(format!("RPC span attribute {} outside the rpc./chipledger. namespaces", kv.key));
        }
    }
    match trace.iter().find(|span| span.name.contains("TableService/GetTable")) {
        Some(failed) if int_attribute(&failed.attributes, "rpc.grpc.status_code") == Some(5) => {}
        Some(failed) => problems.push(format!("the failed call's span has status {:?}", attribute(&failed.attributes, "rpc.grpc.status_code"))),
        None => problems.push(format!("no span of the failed GetTable: {names:?}")),
    }

    // Metrics: names, units, explicit millisecond buckets, attributes.
    let names: Vec<&str> = received.metrics.iter().map(|metric| metric.name.as_str()).collect();
    for metric in ["chipledger.events.appended", "rpc.server.duration", "chipledger.append.duration"] {
        if !names.contains(&metric) {
            problems.push(format!("metric {metric} missing; received {names:?}"));
        }
    }
    let histogram_points = |name: &str| {
        received
            .metrics
            .iter()
            .filter(|metric| metric.name == name)
            .flat_map(|metric| match &metric.data {
                Some(metric::Data::Histogram(histogram)) => histogram.data_points.clone(),
                _ => Vec::new(),
            })
            .collect::<Vec<_>>()
    };
    for name in ["rpc.server.duration", "chipledger.append.duration"] {
        if let Some(metric) = received.metrics.iter().find(|metric| metric.name == name)
            && metric.unit != "ms"
        {
            problems.push(format!("{name} unit {:?}, expected ms", metric.unit));
        }
        let points = histogram_points(name);
        if points.is_empty() {
            problems.push(format!("{name}: no histogram points"));
        }
        for point in &points {
            if point.explicit_bounds != chipledger_server::telemetry::LATENCY_BUCKETS_MS {
                problems.push(format!("{name} buckets {:?}", point.explicit_bounds));
            }
            let counted: u64 = point.bucket_counts.iter().sum();
            // Every recorded call took well under a second: no count past the 1,000 ms bound.
            let past_a_second: u64 = point
                .bucket_counts
                .iter()
                .zip(std::iter::once(&f64::NEG_INFINITY).chain(point.explicit_bounds.iter()))
                .filter(|(_, lower)| **lower >= 1_000.0)
                .map(|(count, _)| *count)
                .sum();
            if counted != point.count || counted == 0 || past_a_second > 0 {
                problems.push(format!("{name} counts {:?} of {}", point.bucket_counts, point.count));
            }
        }
    }
    let rpc_points = histogram_points("rpc.server.duration");
    let point_of = |method: &str, code: i64| {
        rpc_points.iter().any(|point| {
            attribute(&point.attributes, "rpc.system").as_deref() == Some("grpc")
                && attribute(&point.attributes, "rpc.service").as_deref() == Some("chipledger.v1.TableService")
                && attribute(&point.attributes, "rpc.method").as_deref() == Some(method)
                && int_attribute(&point.attributes, "rpc.grpc.status_code") == Some(code)
        })
    };
    if !point_of("OpenTable", 0) || !point_of("GetTable", 5) {
        let seen: Vec<_> = rpc_points.iter().map(|point| point.attributes.iter().map(|kv| (kv.key.clone(), attribute(&point.attributes, &kv.key))).collect::<Vec<_>>()).collect();
        problems.push(format!("rpc.server.duration points lack rpc.* attributes with the status code: {seen:?}"));
    }
    let appended_attributes: Vec<Option<String>> = received
        .metrics
        .iter()
        .filter(|metric| metric.name == "chipledger.events.appended")
        .flat_map(|metric| match &metric.data {
            Some(metric::Data::Sum(sum)) => sum.data_points.iter().map(|point| attribute(&point.attributes, "chipledger.event_type")).collect(),
            _ => Vec::new(),
        })
        .collect();
    if !appended_attributes.contains(&Some("TableOpened".to_string())) {
        problems.push(format!("chipledger.events.appended chipledger.event_type: {appended_attributes:?}"));
    }
    assert!(problems.is_empty(), "telemetry problems:\n{}", problems.join("\n"));
    Ok(())
}
