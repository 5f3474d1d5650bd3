//! The database going away, as the service sees it: the link between chipledgerd and PostgreSQL
//! is cut (every connection dropped, new ones refused) and restored. Health turns NOT_SERVING
//! within seconds and SERVING again after; calls meanwhile answer UNAVAILABLE at once instead of
//! waiting for a connection; an append cut off inside its transaction answers UNAVAILABLE with
//! OUTCOME_UNKNOWN, and resending it with the same command id records it exactly once.

use std::time::{Duration, Instant};

use anyhow::Context;
use chipledger_proto::v1 as pb;
use chipledger_tests::{Client, ServerOptions, TestServer, all_events, error_info, header, principal};
use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::scenario::{self, TABLE, cash_buy_in};

/// How long health may take to follow the database (the probe runs every 0.5 s, 1 s timeout).
const HEALTH_BOUND: Duration = Duration::from_secs(10);
/// A call during an outage must answer within this (sqlx alone would wait 30 s for a connection).
const FAIL_FAST_BOUND: Duration = Duration::from_secs(8);
const POLL: Duration = Duration::from_millis(50);
/// An append waiting on a lock held elsewhere answers within this (the store's 10 s lock timeout
/// and the rest).
const LOCK_WAIT_BOUND: Duration = Duration::from_secs(30);

async fn health(server: &TestServer, service: &str) -> anyhow::Result<i32> {
    let mut client = HealthClient::new(server.channel().await?);
    Ok(client.check(HealthCheckRequest { service: service.into() }).await?.into_inner().status)
}

/// Polls health (whole server and TableService) until both report `wanted`, within the bound.
async fn wait_for_health(server: &TestServer, wanted: ServingStatus) -> anyhow::Result<Duration> {
    let started = Instant::now();
    loop {
        let whole = health(server, "").await?;
        let table = health(server, "chipledger.v1.TableService").await?;
        if whole == wanted as i32 && table == wanted as i32 {
            return Ok(started.elapsed());
        }
        anyhow::ensure!(started.elapsed() < HEALTH_BOUND, "health still {whole}/{table}, wanted {wanted:?} after {HEALTH_BOUND:?}");
        tokio::time::sleep(POLL).await;
    }
}

async fn linked_server(name: &str) -> anyhow::Result<TestServer> {
    let options = ServerOptions { through_link: true, health_listener: true, ..ServerOptions::default() };
    TestServer::start_with(name, options, None).await
}

/// What the health-only listener (Kubernetes' probes) says of `service`.
/// A linked server with a stocked table `TABLE`, P1 seated at seat 1; its dealer and auditor.
async fn stocked_linked_server(name: &str) -> anyhow::Result<(TestServer, Client, Client)> {
    let server = linked_server(name).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    scenario::seat(&mut dealer, TABLE, 1, "P1").await?;
    Ok((server, dealer, auditor))
}

async fn probe(server: &TestServer, service: &str) -> anyhow::Result<i32> {
    let addr = server.health_addr.context("a health listener")?;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?.connect().await?;
    let mut client = HealthClient::new(channel);
    Ok(client.check(HealthCheckRequest { service: service.into() }).await?.into_inner().status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_turns_not_serving_within_seconds_of_the_database_going_away_and_serving_after() -> anyhow::Result<()> {
    let server = linked_server("health").await?;
    let link = server.link.as_ref().expect("a link");
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    assert_eq!(health(&server, "").await?, ServingStatus::Serving as i32);
    assert_eq!(probe(&server, "").await?, ServingStatus::Serving as i32);

    link.cut();
    let took = wait_for_health(&server, ServingStatus::NotServing).await?;
    eprintln!("NOT_SERVING {took:?} after the cut");
    // The probes' listener says the same: not ready, but alive (a restart would not help).
    assert_eq!(probe(&server, "").await?, ServingStatus::NotServing as i32);
    assert_eq!(probe(&server, chipledger_server::serve::LIVENESS_SERVICE).await?, ServingStatus::Serving as i32);
    // Calls answer UNAVAILABLE at once (reads and writes), and say nothing happened.
    let started = Instant::now();
    let status = tokio::time::timeout(FAIL_FAST_BOUND, dealer.table.buy_in(cash_buy_in("buy-down", TABLE, 1, "P1", 10_000)))
        .await?
        .expect_err("the database is unreachable");
    assert_eq!((status.code(), error_info(&status).reason), (Code::Unavailable, "DATABASE_UNAVAILABLE".to_string()), "{status:?}");
    let status = tokio::time::timeout(FAIL_FAST_BOUND, dealer.table.get_table(pb::GetTableRequest { property_id: String::new(), table_id: TABLE.into(), as_of: None }))
        .await?
        .expect_err("the database is unreachable");
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    eprintln!("two calls refused in {:?}", started.elapsed());
    // Approvals need no database: a second person can still approve.
    let correction = pb::Correction { header: header("c-down"), reverses_event_id: uuid::Uuid::nil().to_string(), approved_by: String::new(), reason: "x".into() };
    floor.approve(&correction).await?;

    link.restore();
    let took = wait_for_health(&server, ServingStatus::Serving).await?;
    eprintln!("SERVING {took:?} after the restore");
    assert_eq!(probe(&server, "").await?, ServingStatus::Serving as i32);
    // The command refused during the outage was never recorded; sent now, it is.
    let result = dealer.table.buy_in(cash_buy_in("buy-down", TABLE, 1, "P1", 10_000)).await?.into_inner();
    assert!(!result.replayed, "{result:?}");
    server.stop().await
}

/// Holds the table lock the append needs, as a superuser in a transaction of its own, so that
/// an append is inside its transaction, waiting, when the link is cut.
struct LockHolder {
    connection: tokio::task::JoinHandle<anyhow::Result<()>>,
    release: Option<tokio::sync::oneshot::Sender<()>>,
}

impl LockHolder {
    async fn take(database_url: &str) -> anyhow::Result<LockHolder> {
        let store = chipledger_store::Store::connect(database_url).await?;
        let (locked, is_locked) = tokio::sync::oneshot::channel::<()>();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let connection = tokio::spawn(async move {
            let pool = store.pool().clone();
            let mut transaction = pool.begin().await?;
            sqlx::query("LOCK TABLE events IN EXCLUSIVE MODE").execute(&mut *transaction).await?;
            let _ = locked.send(());
            let _ = released.await;
            transaction.rollback().await?;
            Ok(())
        });
        is_locked.await.map_err(|_| anyhow::anyhow!("the lock was not taken"))?;
        Ok(LockHolder { connection, release: Some(release) })
    }

    async fn release(mut self) -> anyhow::Result<()> {
        if let Some(release) = self.release.take() {
            let _ = release.send(());
        }
        self.connection.await?
    }
}

/// Waits until a backend of the application role waits for a lock (the append is inside its
/// transaction), within the bound.
async fn wait_for_blocked_append(database_url: &str) -> anyhow::Result<()> {
    let store = chipledger_store::Store::connect(database_url).await?;
    let started = Instant::now();
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND usename = 'chipledger_app'",
        )
        .fetch_one(store.pool())
        .await?;
        if waiting > 0 {
            return Ok(());
        }
        anyhow::ensure!(started.elapsed() < HEALTH_BOUND, "no append waits for the lock");
        tokio::time::sleep(POLL).await;
    }
}

/// The operations pass: a session holding a lock the append needs (here the log's table, as a
/// superuser's `LOCK TABLE` or a forgotten transaction would) had made every append wait for as
/// long as it was held, the caller told nothing. The append gives up after the store's lock
/// timeout with UNAVAILABLE `LOCK_TIMEOUT`, nothing of it written, and the same command sent
/// once the lock is gone is recorded once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_waiting_on_a_lock_held_elsewhere_gives_up_and_writes_nothing() -> anyhow::Result<()> {
    let (server, mut dealer, mut auditor) = stocked_linked_server("lock-timeout").await?;
    let before = all_events(&mut auditor, pb::EventFilter::default()).await?.len();
    let lock = LockHolder::take(&server.database_url).await?;
    let started = Instant::now();
    let waiting = dealer.table.buy_in(cash_buy_in("buy-locked", TABLE, 1, "P1", 10_000));
    let status = tokio::time::timeout(LOCK_WAIT_BOUND, waiting).await.context("the append still waits")?.expect_err("the lock is held");
    let waited = started.elapsed();
    assert_eq!((status.code(), error_info(&status).reason.as_str()), (Code::Unavailable, "LOCK_TIMEOUT"), "{status:?}");
    assert_eq!(error_info(&status).metadata.get("lock_timeout").map(String::as_str), Some(chipledger_store::LOCK_TIMEOUT));
    eprintln!("gave up after {waited:?}");
    assert_eq!(all_events(&mut auditor, pb::EventFilter::default()).await?.len(), before, "nothing written");
    lock.release().await?;
    let first = dealer.table.buy_in(cash_buy_in("buy-locked", TABLE, 1, "P1", 10_000)).await?.into_inner();
    assert!(!first.replayed, "{first:?}");
    let again = dealer.table.buy_in(cash_buy_in("buy-locked", TABLE, 1, "P1", 10_000)).await?.into_inner();
    assert!(again.replayed, "{again:?}");
    assert_eq!(all_events(&mut auditor, pb::EventFilter::default()).await?.len(), before + first.events.len());
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_cut_off_inside_its_transaction_is_outcome_unknown_and_a_resend_with_the_same_id_is_recorded_once() -> anyhow::Result<()> {
    let (server, mut dealer, mut auditor) = stocked_linked_server("outcome-unknown").await?;
    let link = server.link.as_ref().expect("a link");

    let lock = LockHolder::take(&server.database_url).await?;
    let mut blocked: Client = dealer.clone();
    let append = tokio::spawn(async move { blocked.table.buy_in(cash_buy_in("buy-cut", TABLE, 1, "P1", 10_000)).await });
    wait_for_blocked_append(&server.database_url).await?;
    link.cut();
    let status = tokio::time::timeout(FAIL_FAST_BOUND, append).await??.expect_err("the connection broke mid-append");
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    let info = error_info(&status);
    assert_eq!(info.reason, "OUTCOME_UNKNOWN", "{status:?}");
    assert_eq!(info.metadata.get("command_id").map(String::as_str), Some("buy-cut"));
    assert!(status.message().contains("same command id"), "{status:?}");
    lock.release().await?;
    wait_for_health(&server, ServingStatus::NotServing).await?;

    link.restore();
    wait_for_health(&server, ServingStatus::Serving).await?;
    // The resend: recorded now (the cut transaction never committed), and only once however
    // often it is sent.
    let first = dealer.table.buy_in(cash_buy_in("buy-cut", TABLE, 1, "P1", 10_000)).await?.into_inner();
    let again = dealer.table.buy_in(cash_buy_in("buy-cut", TABLE, 1, "P1", 10_000)).await?.into_inner();
    assert!(again.replayed, "{again:?}");
    let events = all_events(&mut auditor, pb::EventFilter::default()).await?;
    let recorded: Vec<_> = events
        .iter()
        .filter(|event| event.metadata.as_ref().is_some_and(|metadata| metadata.command_id == "buy-cut"))
        .collect();
    assert_eq!(recorded.len(), first.events.len(), "the buy-in's events, once: {recorded:?}");
    assert_eq!(chipledger_tests::reply_balance(&first, "table/T1/seat/1"), Some(10_000));
    server.stop().await
}

/// A dealer's stream stops at a command the database never decided: that command's reply says
/// so, the stream ends, and the command sent after it is not decided on a table without it (the
/// crash pass: the next commands were judged on the wrong table state, refused for good or
/// recorded in the wrong round). Resent in order under the same ids, both are recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_ends_at_a_command_not_decided_and_decides_nothing_after_it() -> anyhow::Result<()> {
    let (server, mut dealer, mut auditor) = stocked_linked_server("stream-outage").await?;
    let link = server.link.as_ref().expect("a link");
    scenario::seat(&mut dealer, TABLE, 2, "P2").await?;
    let entry = |command| pb::Command { command: Some(command) };
    let (send, commands) = tokio::sync::mpsc::channel(4);
    let mut replies = dealer.ledger.record_stream(tokio_stream::wrappers::ReceiverStream::new(commands)).await?.into_inner();
    link.cut();
    send.send(entry(pb::command::Command::BuyIn(cash_buy_in("stream-cut-1", TABLE, 1, "P1", 10_000)))).await?;
    let first = tokio::time::timeout(FAIL_FAST_BOUND, replies.message()).await??.context("a reply to the first command")?;
    assert_eq!((first.command_id.as_str(), Code::from(first.code)), ("stream-cut-1", Code::Unavailable), "{first:?}");
    // The database is back before the second command is sent: a stream that went on would
    // record it.
    link.restore();
    wait_for_health(&server, ServingStatus::Serving).await?;
    let _ = send.send(entry(pb::command::Command::BuyIn(cash_buy_in("stream-cut-2", TABLE, 2, "P2", 10_000)))).await;
    let end = tokio::time::timeout(FAIL_FAST_BOUND, replies.message()).await?.expect_err("the stream ends");
    assert_eq!(end.code(), Code::Unavailable, "{end:?}");
    assert!(end.message().contains("stream-cut-1"), "{end:?}");
    let recorded = |events: &[pb::RecordedEvent], id: &str| events.iter().any(|event| event.metadata.as_ref().is_some_and(|m| m.command_id == id));
    let events = all_events(&mut auditor, pb::EventFilter::default()).await?;
    assert!(!recorded(&events, "stream-cut-2"), "nothing decided after the command not decided");
    // Resent in order, on a new stream: both recorded.
    let resent = vec![
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-cut-1", TABLE, 1, "P1", 10_000))),
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-cut-2", TABLE, 2, "P2", 10_000))),
    ];
    let mut replies = dealer.ledger.record_stream(tokio_stream::iter(resent)).await?.into_inner();
    while let Some(reply) = replies.message().await? {
        assert!(reply.result.is_some(), "{reply:?}");
    }
    let events = all_events(&mut auditor, pb::EventFilter::default()).await?;
    assert!(recorded(&events, "stream-cut-1") && recorded(&events, "stream-cut-2"));
    server.stop().await
}
