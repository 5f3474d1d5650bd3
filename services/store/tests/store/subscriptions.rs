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
