//! The stream states the command path decides on, and the cache that keeps them between
//! commands: a hit only needs the events after its version.

use std::collections::HashMap;

use chipledger_rules::{CageState, Event, PlayerState, StreamId, TableState};
use tonic::Status;

use crate::status;

/// Stream states kept in memory (bound); the least recently used goes first.
pub(super) const MAX_CACHED_STREAMS: usize = 10_000;

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
            let oldest = self.entries.iter().min_by_key(|(_, cached)| cached.last_used).map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(key, Cached { state, version, last_used: self.tick });
    }

    pub(super) fn forget(&mut self, key: &(String, String)) {
        self.entries.remove(key);
    }
}
