//! Subscriptions: catch up from a position, then follow live, with no gap and no duplicate.
//!
//! One loop does both: read the next page after the last delivered position; when a page is
//! empty, wait for a NOTIFY on [`crate::NOTIFY_CHANNEL`] or the polling interval, whichever
//! comes first. LISTEN is issued before the first read, so a commit between "page empty" and
//! "wait" still leaves its notification queued: no lost wake-up. Because positions commit in
//! order (see the crate docs), every page is a dense continuation; the loop still checks
//! density and re-reads instead of delivering past a hole.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use sqlx::postgres::PgListener;
use time::OffsetDateTime;
use tokio::sync::mpsc;

use crate::error::StoreError;
use crate::event::RecordedEvent;
use crate::{NOTIFY_CHANNEL, Store};

const PAGE_EVENTS: i64 = 500;
const BUFFERED_EVENTS: usize = 1_000;
/// Fallback polling when no notification arrives (lost connection, NOTIFY disabled).
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// A live, ordered feed of one property's events. Dropping it stops the reader.
pub struct Subscription {
    receiver: mpsc::Receiver<Result<RecordedEvent, StoreError>>,
    delivered_position: Arc<AtomicI64>,
    reader: tokio::task::JoinHandle<()>,
}

/// How far a subscriber is behind the head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lag {
    pub head_position: i64,
    pub delivered_position: i64,
    pub positions_behind: i64,
    /// Age of the oldest event not yet delivered; zero when caught up.
    pub time_behind: Duration,
}

impl Subscription {
    /// Position of the last event handed to the consumer.
    pub fn delivered_position(&self) -> i64 {
        self.delivered_position.load(Ordering::Acquire)
    }
}

impl Stream for Subscription {
    type Item = Result<RecordedEvent, StoreError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.receiver.poll_recv(cx);
        if let Poll::Ready(Some(Ok(event))) = &polled {
            self.delivered_position.store(event.position, Ordering::Release);
        }
        polled
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Store {
    /// Subscribe to the events of `property` with position > `after_position`.
    pub async fn subscribe(&self, property: &str, after_position: i64) -> Result<Subscription, StoreError> {
        let mut listener = PgListener::connect_with(self.pool()).await?;
        listener.listen(NOTIFY_CHANNEL).await?;
        let (sender, receiver) = mpsc::channel(BUFFERED_EVENTS);
        let store = self.clone();
        let property = property.to_owned();
        let reader = tokio::spawn(async move {
            if let Err(error) = follow(&store, &property, after_position, listener, &sender).await {
                let _ = sender.send(Err(error)).await;
            }
        });
        Ok(Subscription { receiver, delivered_position: Arc::new(AtomicI64::new(after_position)), reader })
    }

    /// Lag of a subscriber that has delivered up to `delivered_position`.
    pub async fn lag(&self, property: &str, delivered_position: i64) -> Result<Lag, StoreError> {
        let (head_position, oldest_pending, now): (i64, Option<OffsetDateTime>, OffsetDateTime) = sqlx::query_as(
            "SELECT coalesce((SELECT last_position FROM property_heads WHERE property = $1), 0), \
                    (SELECT recorded_at FROM events WHERE property = $1 AND position = $2 + 1), \
                    clock_timestamp()",
        )
        .bind(property)
        .bind(delivered_position)
        .fetch_one(self.pool())
        .await?;
        let time_behind = oldest_pending
            .map(|at| Duration::try_from(now - at).unwrap_or(Duration::ZERO))
            .unwrap_or(Duration::ZERO);
        Ok(Lag {
            head_position,
            delivered_position,
            positions_behind: (head_position - delivered_position).max(0),
            time_behind,
        })
    }
}

async fn follow(
    store: &Store,
    property: &str,
    after_position: i64,
    mut listener: PgListener,
    sender: &mpsc::Sender<Result<RecordedEvent, StoreError>>,
) -> Result<(), StoreError> {
    let mut last = after_position;
    loop {
        let page = store.read_all(property, last, PAGE_EVENTS).await?;
        let full_page = page.len() as i64 == PAGE_EVENTS;
        let mut dense = true;
        for event in page {
            if event.position != last + 1 {
                // Cannot happen while positions commit in order; never deliver past a hole.
                tracing::warn!(property, expected = last + 1, found = event.position, "hole in positions, re-reading");
                dense = false;
                break;
            }
            last = event.position;
            if sender.send(Ok(event)).await.is_err() {
                return Ok(()); // the subscriber is gone
            }
        }
        if full_page && dense {
            continue;
        }
        // Drain notifications already queued, then wait for one or for the poll interval.
        tokio::select! {
            notification = listener.recv() => { notification?; }
            _ = tokio::time::sleep(POLL_INTERVAL) => {}
            _ = sender.closed() => return Ok(()),
        }
    }
}
