//! Races against a real PostgreSQL: concurrent writers whose transactions start and commit out
//! of order, one rolling back, one sleeping inside its transaction (pg_sleep, holding or not yet
//! holding the commit lock); subscribers started before and after. Every acknowledged event must
//! be seen exactly once, in position order, with dense positions.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chipledger_store::*;
use futures::StreamExt;
use tokio::sync::Barrier;
use uuid::Uuid;

use crate::*;

const WRITERS: usize = 6;
const APPENDS_PER_WRITER: usize = 15;

fn request(stream: &str, events: Vec<NewEvent>) -> AppendRequest {
    one_stream(stream, ExpectedVersion::Any, events)
}

/// Record (position -> event id) of an acknowledged append.
fn acknowledge(acked: &mut BTreeMap<i64, Uuid>, outcome: &AppendOutcome, request: &AppendRequest) {
    let ids = request.streams.iter().flat_map(|s| s.events.iter().map(|e| e.event_id));
    for (position, id) in outcome.positions().zip(ids) {
        assert!(acked.insert(position, id).is_none(), "position {position} acknowledged twice");
    }
}

async fn collect(mut subscription: Subscription, until_position: i64) -> anyhow::Result<Vec<RecordedEvent>> {
    let mut seen = Vec::new();
    while seen.last().map(|e: &RecordedEvent| e.position) != Some(until_position) {
        // A guard against a hung test, not synchronisation: events arrive by NOTIFY.
        let next = tokio::time::timeout(Duration::from_secs(30), subscription.next()).await?;
        seen.push(next.ok_or_else(|| anyhow::anyhow!("subscription ended"))??);
    }
    Ok(seen)
}

/// Bound on restarting a caller's transaction after `StoreError::Contention`.
const CALLER_RETRIES: usize = 5;

/// Appends in the caller's transaction. In a caller's transaction a concurrent creator of the
/// same stream or account aborts the append (the store retries only its own transactions), so
/// the caller rolls back and starts again, a bounded number of times.
async fn append_restarting(store: &Store, mut tx: StoreTx, request: &AppendRequest) -> anyhow::Result<(StoreTx, AppendOutcome)> {
    let mut appended = tx.append(request).await;
    for _ in 0..CALLER_RETRIES {
        if !matches!(appended, Err(StoreError::Contention(_))) {
            break;
        }
        tx.rollback().await?;
        tx = store.begin().await?;
        appended = tx.append(request).await;
    }
    Ok((tx, appended?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn late_commits_rollbacks_and_sleepers_never_make_a_reader_skip() -> anyhow::Result<()> {
    let db = fresh("race_writers").await?;
    let store = db.store.clone();
    let early = store.subscribe(PROPERTY, 0).await?;
    let start = Arc::new(Barrier::new(WRITERS + 4));
    let mut tasks = tokio::task::JoinSet::new();

    // A transaction that starts first (older xid) but sleeps before appending: it commits last.
    tasks.spawn({
        let (store, start) = (store.clone(), start.clone());
        async move {
            let mut tx = store.begin().await?;
            sqlx::query("SELECT txid_current()").execute(tx.connection()).await?;
            start.wait().await;
            sqlx::query("SELECT pg_sleep(0.4)").execute(tx.connection()).await?;
            let request = request("table-LATE", buy_ins(3, "late"));
            let (tx, outcome) = append_restarting(&store, tx, &request).await?;
            tx.commit().await?;
            let mut acked = BTreeMap::new();
            acknowledge(&mut acked, &outcome, &request);
            anyhow::Ok(acked)
        }
    });
    // A writer that takes positions, then sleeps inside its transaction holding the commit lock.
    tasks.spawn({
        let (store, start) = (store.clone(), start.clone());
        async move {
            start.wait().await;
            let tx = store.begin().await?;
            let request = request("table-SLEEPER", buy_ins(4, "sleeper"));
            let (mut tx, outcome) = append_restarting(&store, tx, &request).await?;
            sqlx::query("SELECT pg_sleep(0.3)").execute(tx.connection()).await?;
            tx.commit().await?;
            let mut acked = BTreeMap::new();
            acknowledge(&mut acked, &outcome, &request);
            anyhow::Ok(acked)
        }
    });
    // Writers that take positions and roll back: their positions are reused, never seen.
    let rolled_back: Arc<std::sync::Mutex<Vec<Uuid>>> = Arc::default();
    for round in 0..2 {
        let (store, start, rolled_back) = (store.clone(), start.clone(), rolled_back.clone());
        tasks.spawn(async move {
            start.wait().await;
            for i in 0..5 {
                let tx = store.begin().await?;
                let request = request(&format!("table-ROLLBACK-{round}"), buy_ins(2, &format!("rb-{i}")));
                let (mut tx, _) = append_restarting(&store, tx, &request).await?;
                sqlx::query("SELECT pg_sleep(0.02)").execute(tx.connection()).await?;
                tx.rollback().await?;
                rolled_back.lock().unwrap().extend(request.streams[0].events.iter().map(|e| e.event_id));
            }
            anyhow::Ok(BTreeMap::new())
        });
    }
    // Plain concurrent writers; odd ones touch two streams in opposite name order.
    for writer in 0..WRITERS {
        let (store, start) = (store.clone(), start.clone());
        tasks.spawn(async move {
            start.wait().await;
            let mut acked = BTreeMap::new();
            for i in 0..APPENDS_PER_WRITER {
                let mut request = request(&format!("table-W{writer}"), buy_ins(1 + (i % 4), &format!("w{writer}-{i}")));
                if writer % 2 == 1 {
                    let shared = StreamAppend { stream: "player-SHARED".into(), expected_version: ExpectedVersion::Any, events: buy_ins(1, "shared") };
                    if writer % 4 == 1 { request.streams.insert(0, shared) } else { request.streams.push(shared) }
                }
                let outcome = store.append(&request).await?;
                acknowledge(&mut acked, &outcome, &request);
            }
            anyhow::Ok(acked)
        });
    }

    let mut acked = BTreeMap::new();
    while let Some(result) = tasks.join_next().await {
        for (position, id) in result?? {
            assert!(acked.insert(position, id).is_none(), "position {position} acknowledged twice");
        }
    }
    let head = *acked.keys().last().expect("events were appended");
    assert_eq!(acked.keys().copied().collect::<Vec<_>>(), (1..=head).collect::<Vec<_>>(), "positions are dense");
    let late = store.subscribe(PROPERTY, 0).await?;
    let rolled_back = rolled_back.lock().unwrap().clone();
    assert_eq!(rolled_back.len(), 20);
    for (name, seen) in [("early", collect(early, head).await?), ("late", collect(late, head).await?)] {
        let seen: Vec<(i64, Uuid)> = seen.iter().map(|e| (e.position, e.event_id)).collect();
        let expected: Vec<(i64, Uuid)> = acked.iter().map(|(p, id)| (*p, *id)).collect();
        assert_eq!(seen, expected, "{name} subscriber saw every acknowledged event once, in order");
        assert!(seen.iter().all(|(_, id)| !rolled_back.contains(id)));
    }
    assert!(store.verify_chain(PROPERTY).await?.ok);
    assert_eq!(store.balances_sum(PROPERTY, AsOf::Head).await?, 0);
    Ok(())
}

/// Two buy-ins by the same player at two tables at the same moment: the player stream's
/// expected version lets exactly one through (the other must re-decide, R-REBUY-1 etc.).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_buy_ins_by_one_player_at_two_tables_serialise_on_the_player_stream() -> anyhow::Result<()> {
    let db = fresh("race_player").await?;
    let fund = movement("ChipsIssued", "cage/MAIN/chips/100", "player/P1/pocket", 1_000_000, "fund");
    db.store.append(&one_stream("player-P1", ExpectedVersion::NoStream, vec![fund])).await?;
    for round in 0..20 {
        let version = db.store.stream_version(PROPERTY, "player-P1").await?;
        let barrier = Arc::new(Barrier::new(2));
        let attempts = ["T1", "T2"].map(|table| {
            let (store, barrier) = (db.store.clone(), barrier.clone());
            tokio::spawn(async move {
                let table_stream = format!("table-{table}");
                let table_version = store.stream_version(PROPERTY, &table_stream).await?;
                let command_id = format!("buy-{table}-{round}");
                let buy_in = movement("PocketBuyIn", "player/P1/pocket", &format!("table/{table}/seat/1"), 100, &command_id);
                let request = AppendRequest {
                    property: PROPERTY.into(),
                    decided: Default::default(),
                    commands: vec![command(&command_id, &command_id)],
                    streams: vec![
                        StreamAppend { stream: table_stream, expected_version: expected(table_version), events: vec![buy_in] },
                        StreamAppend {
                            stream: "player-P1".into(),
                            expected_version: ExpectedVersion::Exact(version),
                            events: vec![NewEvent { postings: vec![], ..movement("PlayerSeated", "-", "-", 0, &command_id) }],
                        },
                    ],
                    reply: vec![],
                    projection_ops: vec![],
                };
                barrier.wait().await;
                anyhow::Ok(store.append(&request).await)
            })
        });
        let mut wins = 0;
        for attempt in attempts {
            match attempt.await?? {
                Ok(_) => wins += 1,
                Err(StoreError::VersionConflict { stream, .. }) => assert_eq!(stream, "player-P1"),
                Err(other) => return Err(other.into()),
            }
        }
        assert_eq!(wins, 1, "round {round}");
    }
    let stacks = db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Head).await?
        + db.store.balance(PROPERTY, "table/T2/seat/1", AsOf::Head).await?;
    assert_eq!(stacks, 20 * 100);
    Ok(())
}

fn expected(version: i64) -> ExpectedVersion {
    if version == 0 { ExpectedVersion::NoStream } else { ExpectedVersion::Exact(version) }
}

/// Two dealers' devices racing on one table: one append wins each round, the other gets a
/// typed conflict and nothing of it is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_dealers_racing_on_one_table_serialise_on_the_table_stream() -> anyhow::Result<()> {
    let db = fresh("race_table").await?;
    for round in 0..20 {
        let version = db.store.stream_version(PROPERTY, "table-T1").await?;
        let barrier = Arc::new(Barrier::new(2));
        let attempts = [0, 1].map(|dealer| {
            let (store, barrier) = (db.store.clone(), barrier.clone());
            tokio::spawn(async move {
                let request = one_stream("table-T1", expected(version), buy_ins(2, &format!("d{dealer}-{round}")));
                barrier.wait().await;
                anyhow::Ok(store.append(&request).await)
            })
        });
        let mut wins = 0;
        for attempt in attempts {
            match attempt.await?? {
                Ok(outcome) => {
                    wins += 1;
                    assert_eq!(outcome.stream_versions, vec![("table-T1".to_owned(), version + 2)]);
                }
                Err(StoreError::VersionConflict { expected, actual, .. }) => {
                    assert_eq!((expected, actual), (version, version + 2));
                }
                Err(other) => return Err(other.into()),
            }
        }
        assert_eq!(wins, 1, "round {round}");
    }
    assert_eq!(db.store.read_all(PROPERTY, 0, 1000).await?.len(), 40);
    Ok(())
}

/// Streams and accounts created by racing appends (the append writes both with upserts that
/// only update rows it locked): a creator that lost the race is retried and then gets the typed
/// conflict, and no credit to a freshly created account is lost. The racers are split over two
/// store handles (two processes): within one, the group commit judges them one after the
/// other; across the two, one may create the stream or the account after the other's checks,
/// which moves the head the other hashed from, so the other is answered with the new head and
/// judged again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_creators_of_one_stream_and_one_account_lose_nothing() -> anyhow::Result<()> {
    const RACERS: usize = 6;
    let db = fresh("race_create").await?;
    let stores = [db.store.clone(), migrated_store(&db.admin_url).await?];
    for round in 0..10_i64 {
        let barrier = Arc::new(Barrier::new(2 * RACERS));
        let mut tasks = Vec::new();
        for racer in 0..RACERS {
            // Half create the same new stream; all credit the same new account.
            let account = format!("table/T{round}/seat/1");
            let create = one_stream(&format!("table-new-{round}"), ExpectedVersion::NoStream, vec![movement("Fill", "house/bank", &account, 100, "c")]);
            let credit = one_stream(&format!("table-own-{round}-{racer}"), ExpectedVersion::NoStream, vec![movement("Fill", "house/bank", &account, 1, "c")]);
            for (index, request) in [create, credit].into_iter().enumerate() {
                let (store, barrier) = (stores[(racer + index) % 2].clone(), barrier.clone());
                tasks.push(tokio::spawn(async move {
                    barrier.wait().await;
                    anyhow::Ok(store.append(&request).await)
                }));
            }
        }
        let (mut created, mut credited) = (0, 0);
        for task in tasks {
            match task.await?? {
                Ok(outcome) if outcome.stream_versions[0].0.starts_with("table-new-") => created += 1,
                Ok(_) => credited += 1,
                Err(StoreError::VersionConflict { expected: 0, actual: 1, .. }) => {}
                Err(other) => return Err(other.into()),
            }
        }
        assert_eq!((created, credited), (1, RACERS), "round {round}");
        let balance = db.store.projected_balance(PROPERTY, &format!("table/T{round}/seat/1")).await?;
        assert_eq!(balance, 100 + RACERS as i64, "round {round}: every credit counted once");
        assert_eq!(db.store.balance(PROPERTY, &format!("table/T{round}/seat/1"), AsOf::Head).await?, balance);
    }
    assert_eq!(db.store.balances_sum(PROPERTY, AsOf::Head).await?, 0);
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    Ok(())
}

/// R-REBUY-1: a patron's id is one patron in any case. Appends creating the same new patron
/// under several spellings at once, through two store handles (two replicas) and within one
/// group commit: one spelling is written, the others are answered a version conflict on their
/// own stream (the server decides them again, and its case check refuses them), and a spelling
/// sent after that meets the same conflict. An append to the known spelling goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_patron_written_under_two_spellings_at_once_is_one_patron_r_rebuy_1() -> anyhow::Result<()> {
    let db = fresh("race_case").await?;
    let stores = [db.store.clone(), migrated_store(&db.admin_url).await?];
    for round in 0..10 {
        let spellings = [format!("mallory{round}"), format!("MALLORY{round}"), format!("Mallory{round}"), format!("mAllory{round}")];
        let barrier = Arc::new(Barrier::new(spellings.len()));
        let mut tasks = Vec::new();
        for (index, spelling) in spellings.iter().enumerate() {
            let stream = format!("player-{spelling}");
            let command_id = format!("sell-{spelling}");
            let sale = movement("ChipsIssued", "cage/MAIN/chips/100", &format!("player/{spelling}/pocket"), 100, &command_id);
            let request = one_stream(&stream, ExpectedVersion::NoStream, vec![sale]);
            let (store, barrier) = (stores[index % 2].clone(), barrier.clone());
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                anyhow::Ok((stream, store.append(&request).await))
            }));
        }
        let mut written = Vec::new();
        for task in tasks {
            match task.await?? {
                (stream, Ok(_)) => written.push(stream),
                (stream, Err(StoreError::VersionConflict { stream: in_conflict, expected: 0, .. })) => assert_eq!(in_conflict, stream),
                (_, Err(other)) => return Err(other.into()),
            }
        }
        assert_eq!(written.len(), 1, "round {round}: one spelling is the patron: {written:?}");
        let late = format!("player-MaLLoRy{round}");
        let sale = movement("ChipsIssued", "cage/MAIN/chips/100", &format!("player/MaLLoRy{round}/pocket"), 100, "late");
        match db.store.append(&one_stream(&late, ExpectedVersion::NoStream, vec![sale])).await {
            Err(StoreError::VersionConflict { stream, expected: 0, actual: 1 }) => assert_eq!(stream, late),
            other => anyhow::bail!("round {round}: a later spelling: {other:?}"),
        }
        let known = written.remove(0);
        let more = movement("ChipsIssued", "cage/MAIN/chips/100", &format!("player/{}/pocket", &known["player-".len()..]), 100, "more");
        db.store.append(&one_stream(&known, ExpectedVersion::Exact(1), vec![more])).await?;
    }
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    Ok(())
}
