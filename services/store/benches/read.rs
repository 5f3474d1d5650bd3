//! Read paths of the store against a physical baseline: the same rows fetched by a plain scan
//! (events in position order, then the property's postings), with no decoding. Prints figures,
//! asserts nothing about timing.
//!
//! Measured: `read_all` paging (the subscription's page and the largest page), `subscribe`
//! catch-up from position 0 to the head, `verify_chain`, and `TableDayReport::rebuild`. Every
//! path runs once per round, rounds alternate, so shared-machine load hits all of them alike.
//!
//! Run: cargo bench -p chipledger-store --bench read
//! Env: CHIPLEDGER_BENCH_URL=<superuser url> to use an existing server (else a throwaway local
//! cluster is started, fsync off: only reads are timed), CHIPLEDGER_BENCH_EVENTS=<events,
//! default 50000>, CHIPLEDGER_BENCH_ROUNDS=<default 3>.

use std::time::{Duration, Instant};

use chipledger_postgres::{ClusterOptions, LocalCluster, StopMode};
use chipledger_store::report::TableDayReport;
use chipledger_store::*;
use futures::TryStreamExt;
use serde_json::json;
use uuid::Uuid;

const APP_PASSWORD: &str = "bench-password";
const PROPERTY: &str = "bench-casino";
const TABLES: usize = 8;
/// Events per append: about one hand of a six-handed table.
const HAND_EVENTS: usize = 15;

/// An event shaped like the server's table events: a tagged payload carrying its postings,
/// full metadata, and two postings for most (house to seat: no account can go negative).
fn table_event(table: usize, hand: usize, index: usize, command_id: &str) -> NewEvent {
    let seat = 1 + index % 6;
    let amount_cents = 100 + ((hand * 7 + index * 13) % 500) as i64;
    let moves = !index.is_multiple_of(5);
    let postings = if moves {
        vec![
            NewPosting { account: "house/bank".into(), amount_cents: -amount_cents },
            NewPosting { account: format!("table/T{table}/seat/{seat}"), amount_cents },
        ]
    } else {
        vec![]
    };
    let payload = if moves {
        json!({
            "type": "Acted", "seat": seat, "kind": "Raise", "to_cents": amount_cents * 2,
            "amount_cents": amount_cents, "all_in": false,
            "postings": postings.iter().map(|p| json!({"account": p.account, "amount_cents": p.amount_cents})).collect::<Vec<_>>(),
        })
    } else {
        json!({"type": "RoundStarted", "round_index": index % 4, "first_to_act_seat": seat})
    };
    NewEvent {
        event_id: Uuid::new_v4(),
        event_type: if moves { "Acted".into() } else { "RoundStarted".into() },
        schema_version: 1,
        payload: payload.into(),
        metadata: EventMetadata {
            actor_id: format!("dealer-{table}"),
            actor_role: "dealer".into(),
            device: Some(format!("tablet-T{table}")),
            command_id: Some(command_id.into()),
            correlation_id: Some(format!("hand-T{table}-{hand}")),
            causation_id: None,
            trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736".into()),
            gaming_day: if hand.is_multiple_of(2) { "2026-03-14".into() } else { "2026-03-15".into() },
            config_version: 3,
            ..Default::default()
        },
        postings,
    }
}

/// Fill the property with about `events` events: hands on `TABLES` table streams in turn.
async fn fill(store: &Store, events: usize) -> anyhow::Result<i64> {
    let hands = events.div_ceil(HAND_EVENTS);
    for hand_index in 0..hands {
        let (table, hand) = (hand_index % TABLES, hand_index / TABLES);
        let command_id = format!("T{table}-hand-{hand}");
        let version = (hand * HAND_EVENTS) as i64;
        store
            .append(&AppendRequest {
                property: PROPERTY.into(),
                decided: Default::default(),
                commands: vec![CommandRecord {
                    command_id: command_id.clone(),
                    request_hash: request_hash(command_id.as_bytes()),
                }],
                streams: vec![StreamAppend {
                    stream: format!("table-T{table}"),
                    expected_version: if version == 0 { ExpectedVersion::NoStream } else { ExpectedVersion::Exact(version) },
                    events: (0..HAND_EVENTS).map(|i| table_event(table, hand, i, &command_id)).collect(),
                }],
                reply: vec![],
                projection_ops: vec![],
            })
            .await?;
    }
    Ok((hands * HAND_EVENTS) as i64)
}

/// The physical limit of getting these rows to the client: one scan of the events and one of
/// the postings, rows streamed and counted, nothing decoded.
async fn baseline_scan(pool: &sqlx::PgPool) -> anyhow::Result<i64> {
    let mut events = 0;
    let mut rows = sqlx::query(
        "SELECT property, position, stream, stream_version, event_id, event_type, schema_version, payload, \
         metadata, recorded_at, hash FROM events WHERE property = $1 ORDER BY position",
    )
    .bind(PROPERTY)
    .fetch(pool);
    while rows.try_next().await?.is_some() {
        events += 1;
    }
    drop(rows);
    let mut postings =
        sqlx::query("SELECT position, account, amount_cents FROM postings WHERE property = $1 ORDER BY position, posting_index")
            .bind(PROPERTY)
            .fetch(pool);
    while postings.try_next().await?.is_some() {}
    Ok(events)
}

async fn page_through(store: &Store, page: i64) -> anyhow::Result<i64> {
    let (mut last, mut count) = (0, 0);
    loop {
        let events = store.read_all(PROPERTY, last, page).await?;
        let Some(event) = events.last() else { return Ok(count) };
        last = event.position;
        count += events.len() as i64;
    }
}

async fn catch_up(store: &Store, head: i64) -> anyhow::Result<i64> {
    let mut subscription = store.subscribe(PROPERTY, 0).await?;
    let mut expected = 1;
    while expected <= head {
        let event = subscription.try_next().await?.ok_or_else(|| anyhow::anyhow!("subscription ended"))?;
        anyhow::ensure!(event.position == expected, "delivered {} where {expected} was due", event.position);
        expected += 1;
    }
    Ok(head)
}

async fn verify(store: &Store) -> anyhow::Result<i64> {
    let report = store.verify_chain(PROPERTY).await?;
    anyhow::ensure!(report.ok, "chain does not verify: {report:?}");
    Ok(report.events_checked)
}

#[derive(Default, Clone, Copy)]
struct Figures {
    events: i64,
    elapsed: Duration,
    /// CPU time of this process and of the PostgreSQL server's processes, in clock ticks.
    client_ticks: u64,
    server_ticks: u64,
}

impl Figures {
    fn per_second(&self) -> f64 {
        self.events as f64 / self.elapsed.as_secs_f64()
    }

    /// CPU microseconds per event (a clock tick is 10 ms on Linux).
    fn cpu_per_event(&self, ticks: u64) -> f64 {
        ticks as f64 * 10_000.0 / self.events as f64
    }
}

/// utime + stime of a process, in clock ticks, from /proc/<pid>/stat (0 if it is gone).
fn process_ticks(pid: &str) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0 };
    // Fields after the command name (which may hold spaces) start at state (field 3).
    let fields: Vec<&str> = stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    fields.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + fields.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

/// CPU ticks of the postmaster's children (the backends), when this machine runs the server.
fn server_ticks(postmaster: Option<&str>) -> u64 {
    let Some(postmaster) = postmaster else { return 0 };
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_owned)))
                .is_some_and(|parent| parent == postmaster)
        })
        .map(|pid| process_ticks(&pid))
        .sum()
}

async fn timed(postmaster: Option<&str>, future: impl Future<Output = anyhow::Result<i64>>) -> anyhow::Result<Figures> {
    let (client, server) = (process_ticks("self"), server_ticks(postmaster));
    let started = Instant::now();
    let events = future.await?;
    let elapsed = started.elapsed();
    Ok(Figures {
        events,
        elapsed,
        client_ticks: process_ticks("self") - client,
        server_ticks: server_ticks(postmaster).saturating_sub(server),
    })
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let env = |name: &str, default: usize| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let events_wanted = env("CHIPLEDGER_BENCH_EVENTS", 50_000);
    let rounds = env("CHIPLEDGER_BENCH_ROUNDS", 3);
    let mut cluster = None;
    let admin_url = match std::env::var("CHIPLEDGER_BENCH_URL") {
        Ok(url) => url,
        Err(_) => {
            let dir = std::env::temp_dir().join(format!("chipledger-read-bench-{}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))?;
            let mut options = ClusterOptions::new(dir.join("data"));
            options.fsync = false;
            let started = LocalCluster::start(options).await?;
            let url = started.url();
            cluster = Some((started, dir));
            url
        }
    };
    Store::migrate(&admin_url).await?;
    Store::set_app_password(&admin_url, APP_PASSWORD).await?;
    let store = Store::connect_with(Store::app_options(&admin_url, APP_PASSWORD)?, 4).await?;
    // The baseline scans the tables themselves: the admin's connection (the application role
    // reaches the data only through the store's functions).
    let baseline_pool = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(&admin_url).await?;
    let mut head = store.chain_digest(PROPERTY).await?.position;
    if head == 0 {
        let started = Instant::now();
        head = fill(&store, events_wanted).await?;
        println!("filled {head} events in {:.1} s", started.elapsed().as_secs_f64());
        let admin = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(&admin_url).await?;
        sqlx::query("VACUUM ANALYZE events").execute(&admin).await?;
        sqlx::query("VACUUM ANALYZE postings").execute(&admin).await?;
    }
    // The server's processes, to tell its CPU from ours (only when it runs on this machine).
    let admin = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(&admin_url).await?;
    let data_directory: String = sqlx::query_scalar("SELECT current_setting('data_directory')").fetch_one(&admin).await?;
    drop(admin);
    let postmaster = std::fs::read_to_string(format!("{data_directory}/postmaster.pid"))
        .ok()
        .and_then(|pid| pid.lines().next().map(str::to_owned));
    let postmaster = postmaster.as_deref();
    println!("chipledger-store read benchmark: {head} events of {PROPERTY}, {rounds} alternating rounds");
    println!("load average before: {}", load_average());
    let names = [
        "baseline: plain scan, no decoding",
        "read_all, pages of 500",
        "read_all, pages of 5000",
        "subscribe catch-up from 0",
        "verify_chain",
        "TableDayReport::rebuild",
    ];
    let mut totals = [Figures::default(); 6];
    // Warm caches and prepared statements once before measuring.
    baseline_scan(&baseline_pool).await?;
    verify(&store).await?;
    for _ in 0..rounds {
        let round = [
            timed(postmaster, baseline_scan(&baseline_pool)).await?,
            timed(postmaster, page_through(&store, 500)).await?,
            timed(postmaster, page_through(&store, 5_000)).await?,
            timed(postmaster, catch_up(&store, head)).await?,
            timed(postmaster, verify(&store)).await?,
            timed(postmaster, async { Ok(TableDayReport::rebuild(&store, PROPERTY).await?) }).await?,
        ];
        for (total, figures) in totals.iter_mut().zip(round) {
            anyhow::ensure!(figures.events == head, "a path saw {} of {head} events", figures.events);
            total.events += figures.events;
            total.elapsed += figures.elapsed;
            total.client_ticks += figures.client_ticks;
            total.server_ticks += figures.server_ticks;
        }
    }
    let baseline = totals[0].per_second();
    println!("{:<36} {:>10} {:>9} {:>13} {:>13}", "path", "events/s", "baseline", "client us/ev", "server us/ev");
    for (name, figures) in names.iter().zip(totals) {
        println!(
            "{:<36} {:>10.0} {:>8.0}% {:>13.1} {:>13.1}",
            name,
            figures.per_second(),
            100.0 * figures.per_second() / baseline,
            figures.cpu_per_event(figures.client_ticks),
            figures.cpu_per_event(figures.server_ticks)
        );
    }
    println!("load average after: {}", load_average());
    println!("rerun: cargo bench -p chipledger-store --bench read");
    drop((store, baseline_pool));
    if let Some((cluster, dir)) = cluster {
        cluster.stop(StopMode::Fast).await?;
        std::fs::remove_dir_all(dir)?;
    }
    Ok(())
}
