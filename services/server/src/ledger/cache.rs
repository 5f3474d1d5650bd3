//! The stream states the command path decides on, and the cache that keeps them between
//! commands: a hit only needs the events after its version.

use std::collections::HashMap;

use chipledger_rules::{CageState, Event, PlayerState, StreamId, TableState};
use tonic::Status;

use crate::status;

/// Stream states kept in memory (bound); the least recently used goes first.
pub(super) const MAX_CACHED_STREAMS: usize = 10_000;

/// Entries dropped together when the cache is full (a tenth of it).
const EVICTED_AT_ONCE: usize = MAX_CACHED_STREAMS / 10;

/// The state of one stream as the rules core sees it.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // one per loaded stream; boxing buys nothing here
pub enum StreamState {
    Table(TableState),
    Player(PlayerState),
    Cage(CageState),
}

impl StreamState {
    pub(super) fn empty(stream: &StreamId) -> StreamState {
        match stream {
            StreamId::Table(_) => StreamState::Table(TableState::default()),
            StreamId::Player(_) => StreamState::Player(PlayerState::default()),
            StreamId::Cage(_) => StreamState::Cage(CageState::default()),
        }
    }

    /// Applies an event just decided. A mismatch of stream and event kind is a core bug.
    pub(super) fn evolve_decided(self, event: &Event) -> Result<StreamState, Status> {
        Ok(match (self, event) {
            (StreamState::Table(state), Event::Table(event)) => StreamState::Table(state.evolve(event)),
            (StreamState::Player(state), Event::Player(event)) => StreamState::Player(state.evolve(event)),
            (StreamState::Cage(state), Event::Cage(event)) => StreamState::Cage(state.evolve(event)),
            (_, event) => {
                return Err(status::internal("decide", &format!("event {} on a stream of another kind", event.event_type())));
            }
        })
    }

    pub fn as_table(&self) -> Option<&TableState> {
        match self {
            StreamState::Table(state) => Some(state),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct Cached {
    pub(super) state: StreamState,
    pub(super) version: i64,
    pub(super) last_used: u64,
}

/// Aggregates by (property, stream): a hit only needs the events after its version.
#[derive(Debug, Default)]
pub(super) struct StateCache {
    pub(super) entries: HashMap<(String, String), Cached>,
    pub(super) tick: u64,
}

impl StateCache {
    pub(super) fn get(&mut self, key: &(String, String)) -> Option<(StreamState, i64)> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|cached| {
            cached.last_used = tick;
            (cached.state.clone(), cached.version)
        })
    }

    pub(super) fn put(&mut self, key: (String, String), state: StreamState, version: i64) {
        self.tick += 1;
        if let Some(existing) = self.entries.get(&key)
            && existing.version > version
        {
            return; // a newer state is already cached
        }
        if self.entries.len() >= MAX_CACHED_STREAMS && !self.entries.contains_key(&key) {
            self.evict();
        }
        self.entries.insert(key, Cached { state, version, last_used: self.tick });
    }

    /// Drops the least recently used [`EVICTED_AT_ONCE`] entries: one pass over the cache for
    /// that many inserts, where dropping one at a time would scan it on every insert.
    fn evict(&mut self) {
        let mut ticks: Vec<u64> = self.entries.values().map(|cached| cached.last_used).collect();
        let cut = EVICTED_AT_ONCE.min(ticks.len()).saturating_sub(1);
        let (_, newest_evicted, _) = ticks.select_nth_unstable(cut);
        let newest_evicted = *newest_evicted;
        // Ticks are unique (each get and put takes a new one), so exactly `cut + 1` go.
        self.entries.retain(|_, cached| cached.last_used > newest_evicted);
    }

    pub(super) fn forget(&mut self, key: &(String, String)) {
        self.entries.remove(key);
    }
}

/// Writers of one stream inside this replica take turns: a busy cage's windows, or a dealer and
/// the floor on one table, each decide on the state the one before left (the cache), so none is
/// answered a version conflict that only another submission of the same replica caused (a cage
/// with several windows selling at once had refusals to resend after three tries: the night's
/// pass). Keyed by property and stream (in any case), taken in key order (two submissions naming the same
/// streams never wait for each other crosswise), an entry dropped when nobody holds or awaits it.
/// Replicas still meet at the append's expected versions (a conflict, decided again).
#[derive(Default)]
pub(super) struct StreamTurns {
    turns: std::sync::Mutex<HashMap<String, std::sync::Arc<tokio::sync::Mutex<()>>>>,
}

/// The turns one submission holds; given back when dropped.
pub(super) struct Turns<'a> {
    owner: &'a StreamTurns,
    held: Vec<(String, Option<tokio::sync::OwnedMutexGuard<()>>)>,
}

impl StreamTurns {
    /// Waits for the turn of every stream named (duplicates once). Cancel-safe: a submission
    /// dropped while waiting gives back what it took.
    pub(super) async fn take<'a>(&'a self, property: &str, streams: &[StreamId]) -> Turns<'a> {
        // In any case: a patron's two spellings are one patron, whose first writer the other
        // waits for (and then meets its case check, R-REBUY-1); tables differing in case only
        // wait for each other, rarely and harmlessly.
        let mut keys: Vec<String> = streams.iter().map(|stream| format!("{property}\u{1f}{}", stream.key().to_lowercase())).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut turns = Turns { owner: self, held: Vec::with_capacity(keys.len()) };
        for key in keys {
            let turn = {
                let mut map = self.turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                map.entry(key.clone()).or_default().clone()
            };
            turns.held.push((key, None));
            let guard = turn.lock_owned().await;
            if let Some(last) = turns.held.last_mut() {
                last.1 = Some(guard);
            }
        }
        turns
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }
}

impl Drop for Turns<'_> {
    fn drop(&mut self) {
        let mut turns = self.owner.turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (key, guard) in self.held.drain(..) {
            drop(guard);
            // The map's own reference alone: nobody holds the turn or waits for it.
            if turns.get(&key).is_some_and(|turn| std::sync::Arc::strong_count(turn) == 1) {
                turns.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{EVICTED_AT_ONCE, MAX_CACHED_STREAMS, StateCache, StreamId, StreamState, StreamTurns};
    use chipledger_rules::PlayerState;

    fn key(index: usize) -> (String, String) {
        ("casino-1".to_owned(), format!("player-{index}"))
    }

    #[test]
    fn a_full_cache_drops_its_least_recently_used_tenth_and_keeps_what_was_used() {
        let mut cache = StateCache::default();
        for index in 0..MAX_CACHED_STREAMS {
            cache.put(key(index), StreamState::Player(PlayerState::default()), 1);
        }
        // Stream 0, the oldest put, is read again: it is now the most recently used.
        assert!(cache.get(&key(0)).is_some());
        cache.put(key(MAX_CACHED_STREAMS), StreamState::Player(PlayerState::default()), 1);
        assert_eq!(cache.entries.len(), MAX_CACHED_STREAMS - EVICTED_AT_ONCE + 1);
        assert!(cache.get(&key(0)).is_some(), "used again, kept");
        assert!(cache.get(&key(MAX_CACHED_STREAMS)).is_some(), "just put, kept");
        assert!((1..=EVICTED_AT_ONCE).all(|index| cache.get(&key(index)).is_none()), "the least recently used went");
        assert!(cache.get(&key(EVICTED_AT_ONCE + 1)).is_some(), "the next oldest stayed");
        // Filling it again evicts again: the bound holds.
        for index in 0..3 * MAX_CACHED_STREAMS {
            cache.put(key(MAX_CACHED_STREAMS + 1 + index), StreamState::Player(PlayerState::default()), 1);
        }
        assert!(cache.entries.len() <= MAX_CACHED_STREAMS);
    }

    fn table(id: &str) -> StreamId {
        StreamId::Table(chipledger_rules::TableId::new(id).expect("a table id"))
    }

    #[tokio::test]
    async fn a_second_writer_of_a_stream_waits_for_the_first_and_the_turn_is_forgotten_after() {
        let turns = StreamTurns::default();
        let first = turns.take("p", &[table("T1"), StreamId::Player(chipledger_rules::PlayerId::new("A").expect("a player id")), table("T1")]).await;
        assert_eq!(turns.len(), 2, "duplicates take one turn");
        // Another stream, or the same stream of another property, is not held up.
        drop(turns.take("p", &[table("T2")]).await);
        drop(turns.take("q", &[table("T1")]).await);
        let t1 = [table("T1")];
        let second = turns.take("p", &t1);
        tokio::pin!(second);
        assert!(futures::poll!(second.as_mut()).is_pending(), "T1 is the first writer's turn");
        drop(first);
        let second = second.await;
        assert_eq!(turns.len(), 1);
        drop(second);
        assert_eq!(turns.len(), 0, "no turn is kept once given back");
    }
}
