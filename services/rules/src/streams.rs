//! Identifiers and streams. A table, a player (patron) and a cage each own one event stream:
//! `table-{id}`, `player-{id}`, `cage-{id}`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::rejection::{Reason, Rejection};

/// Longest identifier accepted.
pub const MAX_ID_LEN: usize = 64;

pub const INVALID_ID: Reason = Reason::new("INVALID_ID", "R-AUDIT-2");
pub const REASONS: &[Reason] = &[INVALID_ID];

/// Seat number at a table, 1..=10 (R: seats per table are bounded to [`crate::MAX_SEATS`]).
pub type Seat = u8;

fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_LEN
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

macro_rules! id_type {
    ($name:ident, $what:literal) => {
        #[doc = concat!("Validated ", $what, " id: 1 to 64 chars of `[A-Za-z0-9_.-]`.")]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn new(id: impl Into<String>) -> Result<$name, Rejection> {
                let id = id.into();
                if !valid_id(&id) {
                    return Err(Rejection::new(INVALID_ID, format!("invalid {} id {:?}", $what, id))
                        .with("length", id.len() as i64));
                }
                Ok($name(id))
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl FromStr for $name {
            type Err = Rejection;
            fn from_str(s: &str) -> Result<$name, Rejection> {
                $name::new(s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s = String::deserialize(d)?;
                $name::new(s).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_type!(TableId, "table");
id_type!(PlayerId, "player");
id_type!(CageId, "cage");

/// The stream an event belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StreamId {
    Table(TableId),
    Player(PlayerId),
    Cage(CageId),
}

impl StreamId {
    /// Stable key: `table-T1`, `player-P7`, `cage-MAIN`.
    pub fn key(&self) -> String {
        match self {
            StreamId::Table(id) => format!("table-{id}"),
            StreamId::Player(id) => format!("player-{id}"),
            StreamId::Cage(id) => format!("cage-{id}"),
        }
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}

impl FromStr for StreamId {
    type Err = Rejection;
    fn from_str(s: &str) -> Result<StreamId, Rejection> {
        if let Some(id) = s.strip_prefix("table-") {
            return Ok(StreamId::Table(TableId::new(id)?));
        }
        if let Some(id) = s.strip_prefix("player-") {
            return Ok(StreamId::Player(PlayerId::new(id)?));
        }
        if let Some(id) = s.strip_prefix("cage-") {
            return Ok(StreamId::Cage(CageId::new(id)?));
        }
        Err(Rejection::new(INVALID_ID, format!("unknown stream key {s:?}")))
    }
}

impl Serialize for StreamId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.key())
    }
}

impl<'de> Deserialize<'de> for StreamId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<StreamId, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
