//! Group commit: concurrent appends of one property share one transaction and one WAL flush.
//!
//! Why: the head-row commit lock (append.rs) makes commits of a property strictly sequential,
//! and each holds the lock through its own WAL flush. Under concurrency the flushes queue up
//! behind the lock, so N waiting appends cost N flushes one after the other, while plain INSERTs
//! from N connections share flushes (PostgreSQL's own group commit). Here the appends that
//! arrive while a transaction of their property is in flight wait in a queue; the next
//! statement takes them all (bounded): one `chipledger_append` call for the group, in arrival
//! order, committed once. Every guarantee of the single append holds for each member: the
//! function judges the members one after the other, each against the writes of the ones before
//! it (versions, balances, projections), then writes every member's events, postings and command
//! rows in one statement under one head lock, so the result is exactly the serial
//! execution of the members in queue order, made durable together. Members never share a
//! command id: such a member waits for the next group, where the earlier one's row is committed.
//! Why one statement and not one call per member inside a transaction: in PostgreSQL most of an
//! append's cost is per statement (executor start, CHECK constraints prepared again for every
//! partition written), not per row, so the group pays it once.
//!
//! Failure of one member: a domain refusal (version conflict, command id reused, negative
//! balance, projection constraint) or any other error of one member aborts the statement; the
//! function names the member in the error (error.rs, `member_of`), that member gets its error,
//! and the others run again without it (nothing of theirs was committed). A member that lost a creation race with another process
//! (`Contention`) is retried a bounded number of times like the single append. An error of the
//! connection itself, or of COMMIT, is given to every member: whether the COMMIT reached the disk
//! is unknown to us, and the caller resolves it the usual way, by repeating the command id
//! (idempotency answers the first outcome if it did commit).
//!
//! A group of one is the same statement with one member, so an idle property pays nothing for
//! the queue. The group runs in its own task: a caller that goes away (a
//! cancelled RPC) never abandons a transaction that others are waiting on.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use sqlx::pool::PoolConnection;
use sqlx::{PgPool, Postgres};
use tokio::sync::{Notify, broadcast, oneshot};
use uuid::Uuid;

use crate::append::{self, EncodedAppend, Head};
use crate::error::StoreError;
use crate::event::{AppendOutcome, RecordedEvent};

/// Most appends in one transaction. Bounds the head-lock hold and the first member's wait.
const MAX_GROUP_APPENDS: usize = 32;
/// Most events in one transaction (four or five hands of 43 events), unless one append alone
/// has more. The events of a group are recorded at its start and seen by subscribers at its
/// COMMIT, so the statement's length is their lag: with 4,000, 64 tables sending a hand per
/// batch waited 550 ms p99 to be delivered; with 200, 80 ms, at the same events/s
/// (docs/BENCHMARKS.md). The statement's fixed cost is small beside 200 events' work.
const MAX_GROUP_EVENTS: usize = 200;
/// Attempts of a member that lost a race to create a stream, account or command.
pub(crate) const MAX_APPEND_ATTEMPTS: usize = 4;
/// Committed groups kept for subscriptions that have not taken them yet; one further behind
/// reads the log instead (subscription.rs).
const COMMITTED_GROUPS: usize = 256;
/// How long a driver whose queue ran empty keeps its connection for the next append of its
/// property, while the pool has another to give. sqlx's pool checks a connection when it is
/// taken and again when it is given back (a round trip to PostgreSQL each); a dealer's next
/// command usually comes within this. It is also the longest a caller that wants every pooled
/// connection (`verify_log`) waits for an idle property's one.
const LINGER: std::time::Duration = std::time::Duration::from_millis(50);

/// The events of one group this handle committed, in position order: handed to the
/// subscriptions of the same handle at once (subscription.rs), which then have nothing to read
/// back from the database for them. Sent only after the statement's COMMIT succeeded, and only
/// when someone listens. No events: the group wrote none (replays), failed (it may have
/// committed before its answer was lost), or its events did not come out whole; the log says.
pub(crate) struct Committed {
    pub(crate) property: String,
    pub(crate) events: Vec<RecordedEvent>,
}

type Reply = oneshot::Sender<Result<AppendOutcome, StoreError>>;

struct Member {
    encoded: EncodedAppend,
    attempts: usize,
    reply: Reply,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Member>,
    /// A driver task is running for this property.
    driving: bool,
    /// Wakes a driver that waits, its queue empty, for the next append ([`LINGER`]).
    arrived: Arc<Notify>,
}

/// The queues of every property this store handle appends to.
pub(crate) struct GroupCommit {
    pool: PgPool,
    queues: Mutex<HashMap<String, Queue>>,
    /// Each property's head as its last group left it: what the next group's hashes continue
    /// (append.rs; the database checks it under the lock and answers the real one if it moved).
    heads: Mutex<HashMap<String, Head>>,
    committed: broadcast::Sender<Arc<Committed>>,
    /// The first append id of each group running now, until its [`Committed`] is sent: the
    /// notification of its commit names it (subscription.rs).
    in_flight: Mutex<HashSet<Uuid>>,
}

impl GroupCommit {
    pub(crate) fn new(pool: PgPool) -> Arc<GroupCommit> {
        Arc::new(GroupCommit {
            pool,
            queues: Mutex::new(HashMap::new()),
            heads: Mutex::new(HashMap::new()),
            committed: broadcast::channel(COMMITTED_GROUPS).0,
            in_flight: Mutex::new(HashSet::new()),
        })
    }

    /// The groups committed from now on, as [`Committed`].
    pub(crate) fn committed(&self) -> broadcast::Receiver<Arc<Committed>> {
        self.committed.subscribe()
    }

    /// Whether the group with this append id is running here: its [`Committed`] is yet to come.
    pub(crate) fn in_flight(&self, append_id: &Uuid) -> bool {
        self.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).contains(append_id)
    }

    /// Queue an append and wait for its outcome.
    pub(crate) async fn append(self: &Arc<Self>, encoded: EncodedAppend) -> Result<AppendOutcome, StoreError> {
        let (reply, outcome) = oneshot::channel();
        let property = encoded.property().to_owned();
        let start_driver = {
            let mut queues = self.queues.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let queue = queues.entry(property.clone()).or_default();
            queue.waiting.push_back(Member { encoded, attempts: 1, reply });
            queue.arrived.notify_one();
            !std::mem::replace(&mut queue.driving, true)
        };
        if start_driver {
            tokio::spawn(Arc::clone(self).drive(property));
        }
        outcome.await.map_err(|_| StoreError::Database(sqlx::Error::WorkerCrashed))?
    }

    /// Runs groups for one property until its queue stays empty for [`LINGER`].
    async fn drive(self: Arc<Self>, property: String) {
        let mut guard = DriveGuard { commit: &self, property: &property, finished: false };
        // One connection for the groups of this run: taken from the pool (which checks it) for
        // the first, kept while groups follow one another and for [`LINGER`] after the queue
        // runs empty, so a busy property does not pay the pool's check on taking and giving
        // back (a round trip to PostgreSQL each) per group. A group whose connection failed
        // gives it up; the next takes a checked one again, and an empty queue then ends the run.
        let mut connection = None;
        let mut lingered = false;
        loop {
            let next = {
                let mut queues = self.queues.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                let Some(queue) = queues.get_mut(&property) else {
                    guard.finished = true;
                    return;
                };
                if queue.waiting.is_empty() {
                    if connection.is_none() || lingered || !self.pool_has_room() {
                        queues.remove(&property);
                        guard.finished = true;
                        return;
                    }
                    Next::Wait(Arc::clone(&queue.arrived))
                } else {
                    let mut group: Vec<Member> = Vec::new();
                    let mut events = 0;
                    while let Some(next) = queue.waiting.front() {
                        let next_events = next.encoded.event_count();
                        let full = group.len() == MAX_GROUP_APPENDS || events + next_events > MAX_GROUP_EVENTS;
                        // A command id already in the group waits for the next one, where it
                        // sees the first member's committed row (a replay or a conflict, as in
                        // serial).
                        let shares_a_command = group.iter().any(|member| member.encoded.shares_a_command_with(&next.encoded));
                        if !group.is_empty() && (full || shares_a_command) {
                            break;
                        }
                        events += next_events;
                        group.extend(queue.waiting.pop_front());
                    }
                    Next::Group(group)
                }
            };
            let group = match next {
                Next::Group(group) => group,
                Next::Wait(arrived) => {
                    // A wake-up left by an append this driver already took only costs a look.
                    lingered = tokio::time::timeout(LINGER, arrived.notified()).await.is_err();
                    continue;
                }
            };
            lingered = false;
            self.commit_group(group, &mut connection).await;
        }
    }

    /// Whether a caller of the pool would get a connection without waiting for the one this
    /// driver holds: only then does an idle driver keep it ([`LINGER`]).
    fn pool_has_room(&self) -> bool {
        self.pool.num_idle() > 0 || self.pool.size() < self.pool.options().get_max_connections()
    }

    /// Commits a group, taking out members whose own statement fails, and answers everyone.
    async fn commit_group(&self, mut group: Vec<Member>, connection: &mut Option<PoolConnection<Postgres>>) {
        while !group.is_empty() {
            match self.attempt(&group, connection).await {
                Ok(outcomes) => {
                    for (member, outcome) in group.into_iter().zip(outcomes) {
                        let _ = member.reply.send(Ok(outcome));
                    }
                    return;
                }
                Err(Failure::Member(index, StoreError::Contention(_))) if group[index].attempts < MAX_APPEND_ATTEMPTS => {
                    group[index].attempts += 1;
                }
                Err(Failure::Member(index, error)) => {
                    let _ = group.remove(index).reply.send(Err(error));
                }
                Err(Failure::All(error)) => {
                    for member in group.drain(1..) {
                        let _ = member.reply.send(Err(shared(&error)));
                    }
                    if let Some(first) = group.pop() {
                        let _ = first.reply.send(Err(error));
                    }
                    return;
                }
            }
        }
    }

    /// One statement for the whole group (autocommit: atomic, one round trip when the head
    /// the hashes continue is the property's); nothing is committed unless every member
    /// succeeded.
    async fn attempt(&self, group: &[Member], connection: &mut Option<PoolConnection<Postgres>>) -> Result<Vec<AppendOutcome>, Failure> {
        let conn = match connection {
            Some(conn) => conn,
            None => connection.insert(self.pool.acquire().await.map_err(|error| Failure::All(error.into()))?),
        };
        let members: Vec<&EncodedAppend> = group.iter().map(|member| &member.encoded).collect();
        let property = members.first().map_or("", |member| member.property());
        let lock_heads = || self.heads.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut head = lock_heads().get(property).copied();
        let mut written = (self.committed.receiver_count() > 0).then(Vec::new);
        let lock_in_flight = || self.in_flight.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let first = members.first().map(|member| member.append_id());
        if written.is_some() {
            lock_in_flight().extend(first);
        }
        let result = append::execute_group(conn, &members, &mut head, written.as_mut()).await;
        if result.as_ref().is_err_and(|(_, error)| connection_failed(error)) {
            *connection = None;
        }
        if let Some(head) = head {
            lock_heads().insert(property.to_owned(), head);
        }
        if let Some(mut events) = written {
            // Autocommit: the statement's answer came after its COMMIT. A failure sends no
            // events: whatever did commit is read from the log.
            if result.is_err() {
                events.clear();
            }
            let _ = self.committed.send(Arc::new(Committed { property: property.to_owned(), events }));
            if let Some(first) = first {
                lock_in_flight().remove(&first);
            }
        }
        result.map_err(|(index, error)| Failure::of_member(index, error))
    }
}

/// What a driver does next: commit a group, or wait for one to arrive.
enum Next {
    Group(Vec<Member>),
    Wait(Arc<Notify>),
}

/// Ends a driver that stops any other way than by finding its queue empty (a panic, or the
/// runtime shutting down): the property is released, so a later append starts a new driver,
/// and whoever still waits is answered instead of waiting forever. Members of the group in
/// flight see their reply channel closed (an error: outcome unknown, the command id tells).
struct DriveGuard<'a> {
    commit: &'a GroupCommit,
    property: &'a str,
    finished: bool,
}

impl Drop for DriveGuard<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut queues = self.commit.queues.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(queue) = queues.remove(self.property) {
            for member in queue.waiting {
                let stopped = sqlx::Error::Protocol("the group commit driver stopped before this append ran".into());
                let _ = member.reply.send(Err(StoreError::Database(stopped)));
            }
        }
    }
}

enum Failure {
    /// This member's statement failed; the transaction was rolled back.
    Member(usize, StoreError),
    /// The connection or the COMMIT failed: every member shares the outcome.
    All(StoreError),
}

impl Failure {
    /// An error of a member's statement belongs to that member, unless the connection itself
    /// broke (then nobody's statement can be blamed).
    fn of_member(index: usize, error: StoreError) -> Failure {
        if connection_failed(&error) { Failure::All(error) } else { Failure::Member(index, error) }
    }
}

/// The connection broke (or never answered): no statement of the database refused anything.
fn connection_failed(error: &StoreError) -> bool {
    matches!(error, StoreError::Database(inner) if inner.as_database_error().is_none())
}

/// The same failure for another member of the group (sqlx errors are not `Clone`): the kind the
/// server maps to "unavailable" stays that kind; anything else says the outcome is unknown.
fn shared(error: &StoreError) -> StoreError {
    let message = format!("group commit failed, outcome unknown: {error}");
    StoreError::Database(match error {
        StoreError::Database(sqlx::Error::Io(io)) => sqlx::Error::Io(std::io::Error::new(io.kind(), message)),
        StoreError::Database(sqlx::Error::PoolTimedOut) => sqlx::Error::PoolTimedOut,
        StoreError::Database(sqlx::Error::PoolClosed) => sqlx::Error::PoolClosed,
        _ => sqlx::Error::Protocol(message),
    })
}
