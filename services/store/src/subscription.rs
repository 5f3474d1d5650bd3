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
//!
//! Following live, the log is read only when it may hold something not delivered yet. A
//! notification names the new head, the group's first append id and the property, so one of
//! another property, or of a head already delivered, wakes nothing. A group committed through
//! the same store handle (group.rs) comes with its events, exactly as the log holds them, and
//! is handed over as it is when it continues the last delivered position (its notification,
//! naming a group still in flight here, is passed over); when it does not (another process
//! committed in between, or this subscription fell behind), the log is read.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use sqlx::postgres::PgListener;
use time::OffsetDateTime;
use tokio::sync::{broadcast, mpsc};
use uuid::Uuid;

use crate::error::StoreError;
use crate::event::RecordedEvent;
use crate::group::{Committed, GroupCommit};
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
        // Both before the first read: nothing committed after it goes unnoticed.
        let local = self.group.committed();
        let mut listener = PgListener::connect_with(self.pool()).await?;
        listener.listen(NOTIFY_CHANNEL).await?;
        let (sender, receiver) = mpsc::channel(BUFFERED_PAGES);
        let store = self.clone();
        let property = property.to_owned();
        let reader = tokio::spawn(async move {
            let woken = Wakers { listener, local: Some(local), group: Arc::clone(&store.group) };
            if let Err(error) = follow(&store, &property, after_position, woken, &sender).await {
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

/// What tells a subscription that the log has grown.
struct Wakers {
    /// Every commit of any process: `chipledger_append` notifies its new head, the group's
    /// first append id and the property.
    listener: PgListener,
    /// The groups this store handle committed, with their events (group.rs); gone if closed.
    local: Option<broadcast::Receiver<Arc<Committed>>>,
    group: Arc<GroupCommit>,
}

/// Why a wait ended.
enum Woken {
    /// Something may be in the log past the last delivered position: read it.
    Read,
    /// The events of a group committed here, to hand over without reading them back.
    Committed(Arc<Committed>),
    SubscriberGone,
}

impl Wakers {
    /// Wait until there may be something past `last` to read, or a group committed here.
    /// Passed over: notifications of other properties, of heads already delivered, and of
    /// groups running here (their events come as [`Woken::Committed`], sent before the group
    /// stops being in flight, so one seen in flight is always followed by its own).
    async fn wait(&mut self, property: &str, last: i64, sender: &mpsc::Sender<Result<Vec<RecordedEvent>, StoreError>>) -> Result<Woken, StoreError> {
        let poll = tokio::time::sleep(POLL_INTERVAL);
        tokio::pin!(poll);
        loop {
            let local = async {
                match &mut self.local {
                    Some(local) => local.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                // A group already handed over makes its notification one to pass over.
                biased;
                committed = local => match committed {
                    Ok(committed) if committed.property != property => {}
                    Ok(committed) if committed.events.is_empty() => return Ok(Woken::Read),
                    Ok(committed) => return Ok(Woken::Committed(committed)),
                    // Groups went by unseen: the log has them.
                    Err(broadcast::error::RecvError::Lagged(_)) => return Ok(Woken::Read),
                    Err(broadcast::error::RecvError::Closed) => {
                        self.local = None;
                        return Ok(Woken::Read);
                    }
                },
                notification = self.listener.recv() => match notified(notification?.payload(), property, last) {
                    Notified::Nothing => {}
                    Notified::Here(append_id) if self.local.is_some() && self.group.in_flight(&append_id) => {}
                    Notified::Here(_) | Notified::Read => return Ok(Woken::Read),
                },
                _ = &mut poll => return Ok(Woken::Read),
                _ = sender.closed() => return Ok(Woken::SubscriberGone),
            }
        }
    }
}

/// What a notification means to a subscriber of `property` that has delivered up to `last`.
#[derive(Debug, PartialEq, Eq)]
enum Notified {
    /// Another property's, or a head already delivered.
    Nothing,
    /// Positions past `last`, from the group with this first append id.
    Here(Uuid),
    /// It may mean new positions (a payload of another form, such as an older release's).
    Read,
}

/// A notification's payload is `<head position> <first append id> <property>`.
fn notified(payload: &str, property: &str, last: i64) -> Notified {
    let mut parts = payload.splitn(3, ' ');
    let head = parts.next().and_then(|head| head.parse::<i64>().ok());
    let append_id = parts.next().and_then(|id| Uuid::parse_str(id).ok());
    match (head, append_id, parts.next()) {
        (Some(_), Some(_), Some(of)) if of != property => Notified::Nothing,
        (Some(head), Some(_), Some(_)) if head <= last => Notified::Nothing,
        (Some(_), Some(append_id), Some(_)) => Notified::Here(append_id),
        _ => Notified::Read,
    }
}

async fn follow(
    store: &Store,
    property: &str,
    after_position: i64,
    mut woken: Wakers,
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
        // Live: groups committed here are handed over as they are; the log is read when
        // another process committed, when one of ours is not the next (a gap: the log has
        // what lies between), or at the poll interval.
        loop {
            match woken.wait(property, last, sender).await? {
                Woken::Read => break,
                Woken::SubscriberGone => return Ok(()),
                Woken::Committed(committed) => {
                    let first = committed.events.first().map_or(i64::MAX, |event| event.position);
                    if first > last + 1 {
                        break;
                    }
                    let page = committed.events.iter().filter(|event| event.position > last).cloned().collect();
                    if let Delivered::SubscriberGone = deliver(property, &mut last, page, sender).await {
                        return Ok(());
                    }
                }
            }
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

#[cfg(test)]
mod tests {
    use super::{Notified, notified};

    #[test]
    fn a_notification_means_new_positions_only_past_the_last_delivered_one_of_its_property() {
        let id = "0190b6a4-2f4e-7c2a-9d1e-3b5c7a9e1f20";
        let here = Notified::Here(uuid::Uuid::parse_str(id).unwrap());
        assert_eq!(notified(&format!("43 {id} casino-1"), "casino-1", 42), here);
        assert_eq!(notified(&format!("42 {id} casino-1"), "casino-1", 42), Notified::Nothing, "a head already delivered");
        assert_eq!(notified(&format!("99 {id} casino-2"), "casino-1", 42), Notified::Nothing, "another property");
        assert_eq!(notified(&format!("99 {id} casino 1"), "casino", 42), Notified::Nothing, "the property is all the rest");
        // An older release's payload (the property alone), or anything else, means a read.
        for payload in ["casino-1".to_owned(), String::new(), format!("x {id} casino-1"), format!("43 x casino-1"), format!("43 {id}")] {
            assert_eq!(notified(&payload, "casino-1", 42), Notified::Read, "{payload:?}");
        }
    }
}
