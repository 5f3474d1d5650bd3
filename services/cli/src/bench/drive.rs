//! Drives the measured runs: live (one typed RPC per command), batch (one RecordBatch per
//! hand), their physical baseline (the rows the server wrote, re-inserted with plain INSERTs
//! at the same transaction granularity and concurrency), and the read paths (Subscribe
//! catch-up and live lag, VerifyChain, report rebuild).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use chipledger_proto::v1 as pb;
use futures::StreamExt;
use sqlx::PgPool;
use time::OffsetDateTime;

use super::figures::{Latencies, Run};
use super::target::{POOL_CONNECTIONS, Target};
use super::workload::{Plan, PlannedHand};
use crate::connect::{Client, ServerArgs, describe_status};
use crate::send::{send_batch_request, send_stamped};

/// Longest wait for the live subscriber to see the last event after the writers finished.
const SUBSCRIBER_DRAIN: Duration = Duration::from_secs(60);

/// A plain connection to the bench target for `property`.
async fn connect(grpc_url: &str, property: &str) -> anyhow::Result<Client> {
    Client::connect(&ServerArgs::plain(grpc_url, property)).await
}

/// Last global position of the property (0 before its first event).
pub async fn head(admin: &PgPool, property: &str) -> anyhow::Result<i64> {
    let position: Option<i64> = sqlx::query_scalar("SELECT last_position FROM property_heads WHERE property = $1")
        .bind(property)
        .fetch_optional(admin)
        .await?;
    Ok(position.unwrap_or(0))
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One unary RPC per command.
    Live,
    /// The same commands, one `RecordStream` per table (a dealer's device).
    Stream,
    /// One `RecordBatch` per hand.
    Batch,
}

/// Open-loop pacing: calls offered at a fixed total rate, spread evenly over the lanes. A lane
/// still sends in order (a table plays one command after the other); a call that starts late
/// because the previous one was slow counts its lateness in its latency (latency is measured
/// from the scheduled start, so a stall is not hidden by the calls it delayed).
#[derive(Clone, Copy)]
struct Pace {
    start: Instant,
    interval: Duration,
}

impl Pace {
    /// Lane `lane` of `lanes` at `rate` calls per second in total.
    fn for_lane(rate: f64, lanes: usize, lane: usize, start: Instant) -> Pace {
        let offset = Duration::from_secs_f64(lane as f64 / rate);
        Pace { start: start + offset, interval: Duration::from_secs_f64(lanes as f64 / rate) }
    }

    /// Waits for the slot of call `index` and returns its scheduled start.
    async fn slot(&self, index: u32) -> Instant {
        let scheduled = self.start + self.interval * index;
        tokio::time::sleep_until(scheduled.into()).await;
        scheduled
    }
}

/// The start a latency is measured from: the scheduled slot when paced, now otherwise.
async fn call_start(pace: Option<&Pace>, index: &mut u32) -> Instant {
    let Some(pace) = pace else { return Instant::now() };
    let scheduled = pace.slot(*index).await;
    *index += 1;
    scheduled
}

/// One server run: every lane (its own connection) plays its hands in order.
/// With `rate`, calls are paced (open loop) at that many per second in total.
pub async fn server_run(target: &Target, plan: Plan, mode: Mode, rate: Option<f64>, label: &str, property: &str) -> anyhow::Result<Run> {
    let tables = plan.lanes.len();
    let mut clients = Vec::with_capacity(tables);
    for _ in 0..tables {
        clients.push(connect(&target.grpc_url, property).await?);
    }
    let before = target.cpu();
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(tables);
    for (index, (lane, client)) in plan.lanes.into_iter().zip(clients).enumerate() {
        let pace = rate.map(|rate| Pace::for_lane(rate, tables, index, started));
        tasks.push(tokio::spawn(play_lane(client, lane, mode, pace)));
    }
    let mut latencies = Latencies::with_capacity(plan.commands as usize);
    let mut events = 0;
    for task in tasks {
        let (lane_latencies, lane_events) = task.await.context("lane task")??;
        latencies.merge(lane_latencies);
        events += lane_events;
    }
    let elapsed = started.elapsed();
    let cpu = target.cpu().since(&before);
    Ok(Run {
        label: label.to_owned(),
        tables,
        hands: plan.hands,
        calls: latencies.len() as u64,
        events,
        movements: plan.movements,
        elapsed,
        latencies,
        cpu,
    })
}

/// Plays one lane's hands through the operators' send path (`crate::send`).
async fn play_lane(mut client: Client, hands: Vec<PlannedHand>, mode: Mode, pace: Option<Pace>) -> anyhow::Result<(Latencies, u64)> {
    if mode == Mode::Stream {
        return play_lane_streamed(client, hands, pace).await;
    }
    let mut latencies = Latencies::with_capacity(hands.iter().map(|hand| hand.live.len()).sum());
    let mut events = 0;
    let mut slot = 0;
    for hand in hands {
        match mode {
            Mode::Live => {
                for command in hand.live {
                    let described = named(&command);
                    let started = call_start(pace.as_ref(), &mut slot).await;
                    let result = send_stamped(&mut client, command).await.map_err(|status| refused(&described, &status))?;
                    latencies.record(started.elapsed());
                    events += result.events.len() as u64;
                }
            }
            Mode::Stream => unreachable!("streamed lanes are played by play_lane_streamed"),
            Mode::Batch => {
                let described = hand.batch.header.as_ref().map(|h| h.command_id.clone()).unwrap_or_default();
                let started = call_start(pace.as_ref(), &mut slot).await;
                let result = send_batch_request(&mut client, hand.batch).await.map_err(|status| refused(&described, &status))?;
                latencies.record(started.elapsed());
                events += result.results.iter().map(|result| result.events.len() as u64).sum::<u64>();
            }
        }
    }
    Ok((latencies, events))
}

/// Plays one lane's live commands (the same ids and approvals) on one `RecordStream`: each is
/// sent when its reply to the one before has come back, as a dealer's device plays a table.
async fn play_lane_streamed(mut client: Client, hands: Vec<PlannedHand>, pace: Option<Pace>) -> anyhow::Result<(Latencies, u64)> {
    let mut latencies = Latencies::with_capacity(hands.iter().map(|hand| hand.live.len()).sum());
    let mut events = 0;
    let mut slot = 0;
    let (commands, outgoing) = tokio::sync::mpsc::channel::<pb::Command>(1);
    let mut replies = client
        .ledger
        .record_stream(tokio_stream::wrappers::ReceiverStream::new(outgoing))
        .await
        .map_err(|status| refused("RecordStream", &status))?
        .into_inner();
    for command in hands.into_iter().flat_map(|hand| hand.live) {
        let described = named(&command);
        let started = call_start(pace.as_ref(), &mut slot).await;
        commands.send(pb::Command { command: Some(command) }).await.context("the stream closed")?;
        let reply = replies.message().await.map_err(|status| refused(&described, &status))?.context("the stream ended early")?;
        if reply.code != 0 {
            return Err(refused(&described, &tonic::Status::new(tonic::Code::from(reply.code), reply.message)));
        }
        latencies.record(started.elapsed());
        events += reply.result.map_or(0, |result| result.events.len() as u64);
    }
    Ok((latencies, events))
}

/// What a refusal names: the command's RPC and id (kept before the command is sent; formatting
/// the whole command for every call would be CPU the bench counts as the server's side).
fn named(command: &pb::command::Command) -> String {
    format!("{} {}", command.rpc(), command.header().map_or("", |header| header.command_id.as_str()))
}

fn refused(what: &str, status: &tonic::Status) -> anyhow::Error {
    let mut what = what.to_owned();
    what.truncate(300);
    anyhow::anyhow!("{what}: {}", describe_status(status))
}

/// Lag of a live subscription: wall clock at delivery minus the event's recorded time.
pub struct LagProbe {
    last_position: tokio::sync::watch::Sender<i64>,
    task: tokio::task::JoinHandle<anyhow::Result<Latencies>>,
}

impl LagProbe {
    /// Subscribes from `after_position` (the head before the run) before the writers start.
    pub async fn start(grpc_url: &str, property: &str, after_position: i64) -> anyhow::Result<LagProbe> {
        let mut client = connect(grpc_url, property).await?;
        let request = pb::SubscribeRequest { property_id: property.to_owned(), after_position, ..Default::default() };
        let mut stream = client.ledger.subscribe(request).await.context("Subscribe")?.into_inner();
        let (last_position, mut target) = tokio::sync::watch::channel(i64::MAX);
        let task = tokio::spawn(async move {
            let mut lags = Latencies::default();
            let mut delivered = after_position;
            loop {
                if delivered >= *target.borrow() {
                    return Ok(lags);
                }
                tokio::select! {
                    event = stream.next() => {
                        let Some(event) = event else { bail!("the subscription ended at position {delivered}") };
                        let event = event.context("subscription")?;
                        let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as i64;
                        lags.record(Duration::from_millis((now_ms - event.recorded_at_unix_ms).max(0) as u64));
                        delivered = event.global_position;
                    }
                    changed = target.changed() => changed.context("lag probe target")?,
                }
            }
        });
        Ok(LagProbe { last_position, task })
    }

    /// Waits until the subscriber has seen `last_position`.
    pub async fn finish(self, last_position: i64) -> anyhow::Result<Latencies> {
        self.last_position.send_replace(last_position);
        match tokio::time::timeout(SUBSCRIBER_DRAIN, self.task).await {
            Ok(joined) => joined.context("subscriber task")?,
            Err(_) => bail!("the live subscription did not deliver position {last_position} within {SUBSCRIBER_DRAIN:?}"),
        }
    }
}

/// Catch-up read: Subscribe from position 0 until the head; returns (events, elapsed).
pub async fn catch_up(grpc_url: &str, property: &str, head_position: i64) -> anyhow::Result<(u64, Duration)> {
    let mut client = connect(grpc_url, property).await?;
    let started = Instant::now();
    let request = pb::SubscribeRequest { property_id: property.to_owned(), after_position: 0, ..Default::default() };
    let mut stream = client.ledger.subscribe(request).await.context("Subscribe")?.into_inner();
    let mut received = 0u64;
    let mut expected = 1;
    while let Some(event) = stream.next().await {
        let event = event.context("subscription")?;
        if event.global_position != expected {
            bail!("catch-up delivered position {} where {expected} was due", event.global_position);
        }
        received += 1;
        expected += 1;
        if event.global_position >= head_position {
            return Ok((received, started.elapsed()));
        }
    }
    bail!("the catch-up subscription ended at {received} of {head_position} events")
}

/// VerifyChain over gRPC; returns (events checked, elapsed).
pub async fn verify_chain(grpc_url: &str, property: &str) -> anyhow::Result<(u64, Duration)> {
    let mut client = connect(grpc_url, property).await?;
    let started = Instant::now();
    let verified = crate::audit::verify_chain(&mut client).await?;
    let elapsed = started.elapsed();
    if !verified.ok {
        bail!("chain does not verify: {}", verified.problem);
    }
    Ok((u64::try_from(verified.events_checked).unwrap_or(0), elapsed))
}

/// The events of one server transaction, as columns ready to bind.
#[derive(Default)]
struct Transaction {
    positions: Vec<i64>,
    streams: Vec<String>,
    versions: Vec<i64>,
    event_ids: Vec<uuid::Uuid>,
    types: Vec<String>,
    schema_versions: Vec<i16>,
    payloads: Vec<String>,
    metadata: Vec<String>,
    recorded_at: Vec<OffsetDateTime>,
    hashes: Vec<Vec<u8>>,
    posting_positions: Vec<i64>,
    /// The event's time on each of its postings (the month partition key since migration 0008).
    posting_recorded_at: Vec<OffsetDateTime>,
    posting_indexes: Vec<i16>,
    accounts: Vec<String>,
    amounts: Vec<i64>,
    movement: u64,
}

/// Copy tables with the store's exact definitions (columns, defaults, CHECKs, primary key,
/// unique constraints, indexes); LIKE copies no triggers (the store's only fire on
/// UPDATE/DELETE/TRUNCATE, never on INSERT).
pub async fn prepare_baseline_tables(admin: &PgPool) -> anyhow::Result<()> {
    for statement in [
        "CREATE TABLE IF NOT EXISTS bench_baseline_events (LIKE events INCLUDING ALL)",
        "CREATE TABLE IF NOT EXISTS bench_baseline_postings (LIKE postings INCLUDING ALL)",
    ] {
        sqlx::query(statement).execute(admin).await?;
    }
    Ok(())
}

type EventRow = (i64, String, i64, String, i16, String, String, OffsetDateTime, Vec<u8>, String);

/// Re-inserts the rows the server wrote in positions (from, to] under `base_property`: one
/// autocommit statement per server transaction (a command in live mode, a hand in batch
/// mode), the same lanes in the same order and concurrency, the same pool size.
/// With `rate`, transactions are paced like the server run's calls.
pub async fn baseline(
    target: &Target,
    property: &str,
    (from, to): (i64, i64),
    rate: Option<f64>,
    base_property: &str,
    reference: &Run,
) -> anyhow::Result<Run> {
    let rows: Vec<EventRow> = sqlx::query_as(
        "SELECT position, stream, stream_version, event_type, schema_version, payload::text, metadata::text, \
                recorded_at, hash, coalesce(metadata->>'correlation_id', '') \
           FROM events WHERE property = $1 AND position > $2 AND position <= $3 ORDER BY position",
    )
    .bind(property)
    .bind(from)
    .bind(to)
    .fetch_all(&target.admin)
    .await?;
    let postings: Vec<(i64, i16, String, i64)> = sqlx::query_as(
        "SELECT position, posting_index, account, amount_cents FROM postings \
          WHERE property = $1 AND position > $2 AND position <= $3 ORDER BY position, posting_index",
    )
    .bind(property)
    .bind(from)
    .bind(to)
    .fetch_all(&target.admin)
    .await?;
    if rows.len() as i64 != to - from {
        bail!("expected {} events in ({from}, {to}], read {}", to - from, rows.len());
    }
    // Group consecutive events of one correlation id (one append) into lanes by the id.
    let mut lanes: Vec<Vec<Transaction>> = (0..reference.tables).map(|_| Vec::new()).collect();
    let mut current: Option<(String, usize, Transaction)> = None;
    let mut posting_iter = postings.into_iter().peekable();
    for (position, stream, version, event_type, schema_version, payload, metadata, recorded_at, hash, correlation) in rows {
        if current.as_ref().is_none_or(|(id, _, _)| *id != correlation) {
            if let Some((_, lane, transaction)) = current.take() {
                lanes[lane].push(transaction);
            }
            let lane: usize = correlation
                .split('.')
                .nth(2)
                .and_then(|lane| lane.parse().ok())
                .filter(|lane| *lane < reference.tables)
                .with_context(|| format!("event {position}: command id {correlation:?} names no lane"))?;
            current = Some((correlation, lane, Transaction::default()));
        }
        let Some((_, _, transaction)) = current.as_mut() else { continue };
        transaction.positions.push(position);
        transaction.streams.push(stream);
        transaction.versions.push(version);
        transaction.event_ids.push(uuid::Uuid::now_v7());
        transaction.types.push(event_type);
        transaction.schema_versions.push(schema_version);
        transaction.payloads.push(payload);
        transaction.metadata.push(metadata);
        transaction.recorded_at.push(recorded_at);
        transaction.hashes.push(hash);
        let mut moved = false;
        while let Some((posting_position, index, account, amount_cents)) = posting_iter.next_if(|posting| posting.0 == position) {
            transaction.posting_positions.push(posting_position);
            transaction.posting_recorded_at.push(recorded_at);
            transaction.posting_indexes.push(index);
            transaction.accounts.push(account);
            transaction.amounts.push(amount_cents);
            moved = true;
        }
        transaction.movement += u64::from(moved);
    }
    if let Some((_, lane, transaction)) = current.take() {
        lanes[lane].push(transaction);
    }
    let movements = lanes.iter().flatten().map(|t| t.movement).sum();
    let transactions: usize = lanes.iter().map(Vec::len).sum();

    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(POOL_CONNECTIONS.min(reference.tables as u32).max(1))
        .connect(&target.admin_url)
        .await?;
    let before = target.cpu();
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(lanes.len());
    let lane_count = lanes.len();
    for (index, lane) in lanes.into_iter().enumerate() {
        let pool = pool.clone();
        let base_property = base_property.to_owned();
        let pace = rate.map(|rate| Pace::for_lane(rate, lane_count, index, started));
        tasks.push(tokio::spawn(async move {
            let mut latencies = Latencies::with_capacity(lane.len());
            let mut slot = 0;
            for transaction in &lane {
                let started = call_start(pace.as_ref(), &mut slot).await;
                insert(&pool, &base_property, transaction).await?;
                latencies.record(started.elapsed());
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut latencies = Latencies::with_capacity(transactions);
    for task in tasks {
        latencies.merge(task.await.context("baseline lane")??);
    }
    let elapsed = started.elapsed();
    let cpu = target.cpu().since(&before);
    pool.close().await;
    Ok(Run {
        label: format!("{} baseline (plain INSERT)", reference.label),
        tables: reference.tables,
        hands: reference.hands,
        calls: transactions as u64,
        events: (to - from) as u64,
        movements,
        elapsed,
        latencies,
        cpu,
    })
}

async fn insert(pool: &PgPool, property: &str, t: &Transaction) -> anyhow::Result<()> {
    sqlx::query(
        "WITH e AS (INSERT INTO bench_baseline_events (property, position, stream, stream_version, event_id, \
                    event_type, schema_version, payload, metadata, recorded_at, hash) \
                    SELECT $1, p, s, v, id, t, sv, pl::jsonb, md::jsonb, ra, h \
                      FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::uuid[], $6::text[], $7::smallint[], \
                                  $8::text[], $9::text[], $10::timestamptz[], $11::bytea[]) \
                           AS x(p, s, v, id, t, sv, pl, md, ra, h)) \
         INSERT INTO bench_baseline_postings (property, position, posting_index, account, amount_cents, recorded_at) \
         SELECT $1, p, i, a, m, r FROM unnest($12::bigint[], $13::smallint[], $14::text[], $15::bigint[], $16::timestamptz[]) \
                AS y(p, i, a, m, r)",
    )
    .bind(property)
    .bind(&t.positions)
    .bind(&t.streams)
    .bind(&t.versions)
    .bind(&t.event_ids)
    .bind(&t.types)
    .bind(&t.schema_versions)
    .bind(&t.payloads)
    .bind(&t.metadata)
    .bind(&t.recorded_at)
    .bind(&t.hashes)
    .bind(&t.posting_positions)
    .bind(&t.posting_indexes)
    .bind(&t.accounts)
    .bind(&t.amounts)
    .bind(&t.posting_recorded_at)
    .execute(pool)
    .await?;
    Ok(())
}
