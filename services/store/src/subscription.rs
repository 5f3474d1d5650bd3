//! Subscriptions: catch up from a position, then follow live, with no gap and no duplicate.
//!
//! One loop does both: read the next page after the last delivered position; when a page is
//! empty, wait for a NOTIFY on [`crate::NOTIFY_CHANNEL`] or the polling interval, whichever
//! comes first. LISTEN is issued before the first read, so a commit between "page empty" and
//! "wait" still leaves its notification queued: no lost wake-up. Because positions commit in
//! order (see the crate docs), every page is a dense continuation; the loop still checks
//! density and re-reads instead of delivering past a hole.
//!
//! Catching up (a page came back full): the next ranges of positions are read ahead, each on
//! its own connection and task, and delivered in order until one comes back short (the head
//! or a hole), when the loop above takes over again. Whole pages cross the channel.

use std::collections::VecDeque;
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
use crate::read;
use crate::{NOTIFY_CHANNEL, Store};

/// Events per read: catching up reads full pages; following live reads what is new.
pub const PAGE_EVENTS: i64 = 2_000;
/// Pages handed to the consumer but not taken yet, beside the one it is taking events from.
/// With the reads ahead, a subscriber that does not keep up holds at most about
/// (1 + BUFFERED_PAGES + READS_AHEAD + 1) * PAGE_EVENTS events in memory.
const BUFFERED_PAGES: usize = 1;
/// Reads in flight while catching up, each on its own connection and task, so that
/// PostgreSQL producing one page and this process decoding another overlap.
const READS_AHEAD: usize = 2;
/// Fallback polling when no notification arrives (lost connection, NOTIFY disabled).
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// A live, ordered feed of one property's events. Dropping it stops the reader.
pub struct Subscription {
    /// Whole pages cross the channel (one hand-off per page, not per event).
    receiver: mpsc::Receiver<Result<Vec<RecordedEvent>, StoreError>>,
    /// The page being handed out, in order.
    current: std::vec::IntoIter<RecordedEvent>,
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
        loop {
            if let Some(event) = self.current.next() {
                self.delivered_position.store(event.position, Ordering::Release);
                return Poll::Ready(Some(Ok(event)));
            }
            match self.receiver.poll_recv(cx) {
                Poll::Ready(Some(Ok(page))) => self.current = page.into_iter(),
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Some(Err(error))),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
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
        let (sender, receiver) = mpsc::channel(BUFFERED_PAGES);
        let store = self.clone();
        let property = property.to_owned();
        let reader = tokio::spawn(async move {
            if let Err(error) = follow(&store, &property, after_position, listener, &sender).await {
                let _ = sender.send(Err(error)).await;
            }
        });
        Ok(Subscription {
            receiver,
            current: Vec::new().into_iter(),
            delivered_position: Arc::new(AtomicI64::new(after_position)),
            reader,
        })
    }

    /// Lag of a subscriber that has delivered up to `delivered_position`.
    pub async fn lag(&self, property: &str, delivered_position: i64) -> Result<Lag, StoreError> {
        let (head_position, oldest_pending, now): (i64, Option<OffsetDateTime>, OffsetDateTime) = sqlx::query_as("SELECT * FROM chipledger_lag($1, $2)")
        .bind(property)
        .bind(delivered_position)
        .fetch_one(self.pool())
        .await?;
        let time_behind =
            oldest_pending.map(|at| Duration::try_from(now - at).unwrap_or(Duration::ZERO)).unwrap_or(Duration::ZERO);
        Ok(Lag { head_position, delivered_position, positions_behind: (head_position - delivered_position).max(0), time_behind })
    }
}

async fn follow(
    store: &Store,
    property: &str,
    after_position: i64,
    mut listener: PgListener,
    sender: &mpsc::Sender<Result<Vec<RecordedEvent>, StoreError>>,
) -> Result<(), StoreError> {
    let mut last = after_position;
    loop {
        let page = store.read_all(property, last, PAGE_EVENTS).await?;
        let full_page = page.len() as i64 == PAGE_EVENTS;
        match deliver(property, &mut last, page, sender).await {
            Delivered::SubscriberGone => return Ok(()),
            Delivered::Dense if full_page => match catch_up(store, property, &mut last, sender).await? {
                Delivered::SubscriberGone => return Ok(()),
                // Near the head: read again at once, the next wait starts from a short page.
                _ => continue,
            },
            _ => {}
        }
        // Drain notifications already queued, then wait for one or for the poll interval.
        tokio::select! {
            notification = listener.recv() => { notification?; }
            _ = tokio::time::sleep(POLL_INTERVAL) => {}
            _ = sender.closed() => return Ok(()),
        }
    }
}

enum Delivered {
    Dense,
    /// The page stopped before a missing position; what came before it was delivered.
    Hole,
    SubscriberGone,
}

/// Hand over the dense part of a page continuing `last`, and move `last` past it.
async fn deliver(
    property: &str,
    last: &mut i64,
    mut page: Vec<RecordedEvent>,
    sender: &mpsc::Sender<Result<Vec<RecordedEvent>, StoreError>>,
) -> Delivered {
    // Cannot happen while positions commit in order; never deliver past a hole.
    let hole = page.iter().zip(*last + 1..).position(|(event, expected)| event.position != expected);
    if let Some(at) = hole {
        tracing::warn!(property, expected = *last + 1 + at as i64, found = page[at].position, "hole in positions, re-reading");
        page.truncate(at);
    }
    if let Some(event) = page.last() {
        *last = event.position;
        if sender.send(Ok(page)).await.is_err() {
            return Delivered::SubscriberGone;
        }
    }
    if hole.is_some() { Delivered::Hole } else { Delivered::Dense }
}

/// Far behind the head: read the next pages of positions ahead, [`READS_AHEAD`] at once, and
/// deliver them in order until one comes back short (the head, or a hole: re-read from there).
async fn catch_up(
    store: &Store,
    property: &str,
    last: &mut i64,
    sender: &mpsc::Sender<Result<Vec<RecordedEvent>, StoreError>>,
) -> Result<Delivered, StoreError> {
    let mut requested = *last;
    let mut reads = VecDeque::new();
    loop {
        while reads.len() < READS_AHEAD {
            let (store, property, after) = (store.clone(), property.to_owned(), requested);
            let read =
                tokio::spawn(
                    async move { read::read_range(store.pool(), &property, after, after + PAGE_EVENTS, PAGE_EVENTS).await },
                );
            reads.push_back(AbortOnDrop(read));
            requested += PAGE_EVENTS;
        }
        let mut read = reads.pop_front().expect("filled above");
        let page = (&mut read.0).await.map_err(|error| StoreError::Corrupt(format!("subscription read: {error}")))??;
        let full_page = page.len() as i64 == PAGE_EVENTS;
        match deliver(property, last, page, sender).await {
            Delivered::Dense if full_page => {}
            delivered => return Ok(delivered),
        }
    }
}

/// A spawned task that stops when its handle is dropped (a read no longer wanted).
pub(crate) struct AbortOnDrop<T>(pub(crate) tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
