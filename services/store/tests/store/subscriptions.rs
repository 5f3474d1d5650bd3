//! Catch-up then live with no gap or duplicate at the switch; measurable lag.

use std::time::Duration;

use chipledger_store::*;
use futures::StreamExt;

use crate::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn catch_up_switches_to_live_without_gap_or_duplicate() -> anyhow::Result<()> {
    let db = fresh("subscribe_switch").await?;
    // More than two catch-up pages before subscribing (the reads ahead of catching up).
    let appends = 12;
    let per_append = (2 * subscription::PAGE_EVENTS as usize + 100).div_ceil(appends);
    for i in 0..appends {
        db.store.append(&one_stream("table-T1", ExpectedVersion::Any, buy_ins(per_append, &format!("pre-{i}")))).await?;
    }
    let mut from_zero = db.store.subscribe(PROPERTY, 0).await?;
    let mut from_middle = db.store.subscribe(PROPERTY, 333).await?;
    // Keep writing while they catch up.
    let writer = tokio::spawn({
        let store = db.store.clone();
        async move {
            for i in 0..40 {
                store.append(&one_stream("table-T2", ExpectedVersion::Any, buy_ins(3, &format!("live-{i}")))).await?;
            }
            anyhow::Ok(())
        }
    });
    let head = (appends * per_append + 40 * 3) as i64;
    for (subscription, first) in [(&mut from_zero, 1), (&mut from_middle, 334)] {
        let mut expected = first;
        while expected <= head {
            let event = tokio::time::timeout(Duration::from_secs(30), subscription.next()).await?.expect("open")?;
            assert_eq!(event.position, expected);
            expected += 1;
        }
    }
    writer.await??;
    assert_eq!(from_zero.delivered_position(), head);
    let lag = db.store.lag(PROPERTY, from_zero.delivered_position()).await?;
    assert_eq!((lag.positions_behind, lag.time_behind), (0, Duration::ZERO));
    Ok(())
}

#[tokio::test]
async fn lag_is_measured_in_positions_and_time() -> anyhow::Result<()> {
    let db = fresh("subscribe_lag").await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(5, "a"))).await?;
    let mut subscription = db.store.subscribe(PROPERTY, 0).await?;
    let first = subscription.next().await.expect("open")?;
    assert_eq!(first.position, 1);
    // Time passes in the database, not in the test: the oldest undelivered event ages.
    sqlx::query("SELECT pg_sleep(0.05)").execute(db.store.pool()).await?;
    let lag = db.store.lag(PROPERTY, subscription.delivered_position()).await?;
    assert_eq!((lag.head_position, lag.delivered_position, lag.positions_behind), (5, 1, 4));
    assert!(lag.time_behind >= Duration::from_millis(50), "{lag:?}");
    Ok(())
}

/// A subscriber of the store handle that commits a group is handed its events without a read
/// of the log, and what it is handed is what the log holds, field for field (payload and
/// metadata in the text a read gives, positions, versions, hashes, time, postings). Groups of
/// another handle (another process) still reach it, through the log, in order and without a gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn groups_committed_here_are_handed_over_as_the_log_holds_them() -> anyhow::Result<()> {
    let db = fresh("subscribe_local").await?;
    let elsewhere = migrated_store(&db.admin_url).await?;
    let mut subscription = db.store.subscribe(PROPERTY, 0).await?;
    let mut awkward = buy_ins(2, "numbers");
    awkward[0].payload = serde_json::json!({"amount_cents": 100, "big": 9_007_199_254_740_991_i64, "neg": -5, "z": [], "a": {"é": "\u{7f}\u{2028}", "": null, "\u{1f600}": true}}).into();
    // Each append's events are taken before the next append, so the subscriber is at the head
    // whenever a group comes: the groups committed here are handed over, not read.
    let mut delivered = Vec::new();
    let mut first_here = None;
    for i in 0..12 {
        let (store, events) = match i {
            0 => (&db.store, awkward.clone()),
            i if i % 4 == 3 => (&elsewhere, buy_ins(3, &format!("elsewhere-{i}"))),
            i => (&db.store, buy_ins(1 + i % 3, &format!("here-{i}"))),
        };
        let count = events.len();
        let mut request = one_stream(&format!("table-T{}", i % 2), ExpectedVersion::Any, events);
        request.commands = vec![command(&format!("command-{i}"), &format!("request-{i}"))];
        store.append(&request).await?;
        for _ in 0..count {
            delivered.push(tokio::time::timeout(Duration::from_secs(30), subscription.next()).await?.expect("open")?);
        }
        // A replay writes nothing, and hands nothing over.
        if i == 1 {
            first_here = Some(request);
        } else if i == 6 {
            assert!(db.store.append(first_here.as_ref().expect("kept")).await?.replayed);
        }
    }
    let expected = delivered.len() as i64;
    let logged = db.store.read_all(PROPERTY, 0, 100).await?;
    assert_eq!(logged.len(), expected as usize);
    assert_eq!(delivered, logged);
    assert_eq!(delivered.iter().map(|event| event.position).collect::<Vec<_>>(), (1..=expected).collect::<Vec<_>>());
    Ok(())
}

/// Groups committed while a subscriber is not taking its events leave it behind the handle's
/// queue of committed groups; it reads the log for them and loses nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_subscriber_left_behind_by_the_groups_committed_here_reads_them_from_the_log() -> anyhow::Result<()> {
    let db = fresh("subscribe_behind").await?;
    let mut subscription = db.store.subscribe(PROPERTY, 0).await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::Any, buy_ins(1, "first"))).await?;
    assert_eq!(tokio::time::timeout(Duration::from_secs(30), subscription.next()).await?.expect("open")?.position, 1);
    // Far more groups than the queue keeps, none taken meanwhile.
    let appends = 600;
    for i in 0..appends {
        db.store.append(&one_stream("table-T1", ExpectedVersion::Any, buy_ins(1, &format!("later-{i}")))).await?;
    }
    for position in 2..=appends + 1 {
        let event = tokio::time::timeout(Duration::from_secs(30), subscription.next()).await?.expect("open")?;
        assert_eq!(event.position, position);
    }
    Ok(())
}
