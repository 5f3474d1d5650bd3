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

#[cfg(test)]
mod tests {
    use super::{EVICTED_AT_ONCE, MAX_CACHED_STREAMS, StateCache, StreamState};
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
}
