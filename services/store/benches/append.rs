//! Append throughput: the store against a physical baseline (the same rows inserted with plain
//! multi-row INSERTs, one transaction per batch, into tables of the same shape and indexes).
//! Prints figures, asserts nothing about timing. fsync stays on.
//!
//! Run: cargo bench -p chipledger-store --bench append
//! Env: CHIPLEDGER_BENCH_URL=<superuser url> to use an existing server (else a throwaway local
//! cluster with fsync on is started), CHIPLEDGER_BENCH_EVENTS=<events per batch size, default 3000>.

use std::time::{Duration, Instant};

use chipledger_postgres::{ClusterOptions, LocalCluster, StopMode};
use chipledger_store::*;
use serde_json::json;
use uuid::Uuid;

const BATCH_SIZES: [usize; 3] = [1, 15, 150];
const ROUNDS: usize = 5;
const APP_PASSWORD: &str = "bench-password";
const PROPERTY: &str = "bench-casino";

fn event(index: usize, command_id: &str) -> NewEvent {
    let amount_cents = 100 + (index % 50) as i64;
    NewEvent {
        event_id: Uuid::new_v4(),
        event_type: "BetPlaced".into(),
        schema_version: 1,
        payload: json!({"hand_id": index / 15, "seat": 1 + index % 9, "amount_cents": amount_cents, "street": "flop"}).into(),
        metadata: EventMetadata {
            actor_id: "dealer-7".into(),
            actor_role: "Dealer".into(),
            device: Some("tablet-3".into()),
            command_id: Some(command_id.into()),
            gaming_day: "2026-03-14".into(),
            config_version: 3,
            ..Default::default()
        },
        postings: vec![
            NewPosting { account: "house/bank".into(), amount_cents: -amount_cents },
            NewPosting { account: format!("table/T1/pot/{}", index % 2), amount_cents },
        ],
    }
}

#[derive(Default)]
struct Figures {
    events: usize,
    elapsed: Duration,
}

impl Figures {
    fn add(&mut self, other: Figures) {
        self.events += other.events;
        self.elapsed += other.elapsed;
    }

    fn per_second(&self) -> f64 {
        self.events as f64 / self.elapsed.as_secs_f64()
    }
}

/// Appends `batches` batches to `stream`, continuing after batch number `first_batch`.
async fn run_store(store: &Store, batch_size: usize, first_batch: usize, batches: usize, stream: &str) -> anyhow::Result<Figures> {
    let requests: Vec<AppendRequest> = (first_batch..first_batch + batches)
        .map(|b| {
            let command_id = format!("{stream}-{b}");
            AppendRequest {
                property: PROPERTY.into(),
                decided: Default::default(),
                commands: vec![CommandRecord { command_id: command_id.clone(), request_hash: request_hash(command_id.as_bytes()) }],
                streams: vec![StreamAppend {
                    stream: stream.into(),
                    expected_version: if b == 0 { ExpectedVersion::NoStream } else { ExpectedVersion::Exact((b * batch_size) as i64) },
                    events: (0..batch_size).map(|i| event(b * batch_size + i, &command_id)).collect(),
                }],
                reply: vec![],
                projection_ops: vec![],
            }
        })
        .collect();
    let started = Instant::now();
    for request in &requests {
        store.append(request).await?;
    }
    Ok(Figures { events: batches * batch_size, elapsed: started.elapsed() })
}

/// The same rows, plain INSERTs: one statement (events and postings) per batch, autocommit.
async fn run_baseline(pool: &sqlx::PgPool, batch_size: usize, batches: usize, stream: &str, first_position: i64) -> anyhow::Result<Figures> {
    struct Batch {
        positions: Vec<i64>,
        versions: Vec<i64>,
        ids: Vec<Uuid>,
        payloads: Vec<serde_json::Value>,
        metadata: Vec<serde_json::Value>,
        hashes: Vec<Vec<u8>>,
        posting_positions: Vec<i64>,
        posting_indexes: Vec<i16>,
        accounts: Vec<String>,
        amounts: Vec<i64>,
    }
    let mut prepared = Vec::with_capacity(batches);
    for b in 0..batches {
        let command_id = format!("{stream}-{b}");
        let mut batch = Batch {
            positions: vec![], versions: vec![], ids: vec![], payloads: vec![], metadata: vec![], hashes: vec![],
            posting_positions: vec![], posting_indexes: vec![], accounts: vec![], amounts: vec![],
        };
        for i in 0..batch_size {
            let n = b * batch_size + i;
            let event = event(n, &command_id);
            let position = first_position + n as i64;
            batch.positions.push(position);
            batch.versions.push(n as i64 + 1);
            batch.ids.push(event.event_id);
            batch.payloads.push(serde_json::from_str::<serde_json::Value>(event.payload.as_str())?);
            batch.metadata.push(serde_json::to_value(&event.metadata)?);
            batch.hashes.push(request_hash(&position.to_be_bytes()).to_vec());
            for (index, posting) in event.postings.into_iter().enumerate() {
                batch.posting_positions.push(position);
                batch.posting_indexes.push(index as i16);
                batch.accounts.push(posting.account);
                batch.amounts.push(posting.amount_cents);
            }
        }
        prepared.push(batch);
    }
    let started = Instant::now();
    for batch in &prepared {
        sqlx::query(
            "WITH e AS (INSERT INTO bench_events (property, position, stream, stream_version, event_id, event_type, \
               schema_version, payload, metadata, recorded_at, hash) \
             SELECT $1, p, $2, v, id, 'BetPlaced', 1, pl, md, clock_timestamp(), h \
               FROM unnest($3::bigint[], $4::bigint[], $5::uuid[], $6::jsonb[], $7::jsonb[], $8::bytea[]) AS x(p, v, id, pl, md, h)) \
             INSERT INTO bench_postings (property, position, posting_index, account, amount_cents, recorded_at) \
             SELECT $1, p, i, a, m, clock_timestamp() FROM unnest($9::bigint[], $10::smallint[], $11::text[], $12::bigint[]) AS y(p, i, a, m)",
        )
        .bind(PROPERTY)
        .bind(stream)
        .bind(&batch.positions)
        .bind(&batch.versions)
        .bind(&batch.ids)
        .bind(&batch.payloads)
        .bind(&batch.metadata)
        .bind(&batch.hashes)
        .bind(&batch.posting_positions)
        .bind(&batch.posting_indexes)
        .bind(&batch.accounts)
        .bind(&batch.amounts)
        .execute(pool)
        .await?;
    }
    Ok(Figures { events: batches * batch_size, elapsed: started.elapsed() })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let events_per_size: usize = std::env::var("CHIPLEDGER_BENCH_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let mut cluster = None;
    let mut bench_dir = None;
    let admin_url = match std::env::var("CHIPLEDGER_BENCH_URL") {
        Ok(url) => url,
        Err(_) => {
            let dir = std::env::temp_dir().join(format!("chipledger-bench-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))?;
            let started = LocalCluster::start(ClusterOptions::new(dir.join("data"))).await?;
            let url = started.url();
            cluster = Some(started);
            bench_dir = Some(dir);
            url
        }
    };
    Store::migrate(&admin_url).await?;
    Store::set_app_password(&admin_url, APP_PASSWORD).await?;
    let store = Store::connect_with(Store::app_options(&admin_url, APP_PASSWORD)?, 4).await?;
    let admin = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(&admin_url).await?;
    for statement in [
        "CREATE TABLE IF NOT EXISTS bench_events (LIKE events INCLUDING ALL)",
        "CREATE TABLE IF NOT EXISTS bench_postings (LIKE postings INCLUDING ALL)",
        "GRANT SELECT, INSERT ON bench_events, bench_postings TO chipledger_app",
    ] {
        sqlx::query(statement).execute(&admin).await?;
    }
    let baseline_pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(4)
        .connect_with(Store::app_options(&admin_url, APP_PASSWORD)?)
        .await?;
    let settings: Vec<(String, String)> = sqlx::query_as(
        "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'wal_sync_method', 'server_version') ORDER BY name",
    )
    .fetch_all(&admin)
    .await?;
    println!("chipledger-store append benchmark (single writer, one transaction per batch, {ROUNDS} alternating rounds)");
    println!("server: {}", settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "));
    println!("{:>6} {:>8} {:>14} {:>14} {:>8}", "batch", "events", "store ev/s", "baseline ev/s", "ratio");
    // The machine may be shared: store and baseline run in alternating rounds so both see the
    // same background load; the figures are the sums over all rounds.
    let mut baseline_position = 1_000_000_000;
    for batch_size in BATCH_SIZES {
        let batches_per_round = (events_per_size / batch_size / ROUNDS).max(1);
        let stream = format!("table-B{batch_size}");
        // Warm up both paths (prepared statements, plan caches) before measuring.
        run_store(&store, batch_size, 0, 2, &format!("{stream}-warm")).await?;
        run_baseline(&baseline_pool, batch_size, 2, &format!("{stream}-warm"), baseline_position).await?;
        baseline_position += 1_000_000;
        let (mut store_total, mut baseline_total) = (Figures::default(), Figures::default());
        for round in 0..ROUNDS {
            store_total.add(run_store(&store, batch_size, round * batches_per_round, batches_per_round, &stream).await?);
            baseline_total.add(run_baseline(&baseline_pool, batch_size, batches_per_round, &format!("{stream}-r{round}"), baseline_position).await?);
            baseline_position += 1_000_000;
        }
        println!(
            "{:>6} {:>8} {:>14.0} {:>14.0} {:>7.0}%",
            batch_size,
            store_total.events,
            store_total.per_second(),
            baseline_total.per_second(),
            100.0 * store_total.per_second() / baseline_total.per_second()
        );
    }
    let report = store.verify_chain(PROPERTY).await?;
    println!("chain verified: {} ({} events)", report.ok, report.events_checked);
    println!("rerun: cargo bench -p chipledger-store --bench append");
    drop((store, baseline_pool, admin));
    if let Some(cluster) = cluster {
        cluster.stop(StopMode::Fast).await?;
    }
    if let Some(dir) = bench_dir {
        std::fs::remove_dir_all(dir)?;
    }
    Ok(())
}
