//! Identifiers and streams. A table, a player (patron) and a cage each own one event stream:
//! `table-{id}`, `player-{id}`, `cage-{id}`.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::rejection::{Reason, Rejection};

/// Longest identifier accepted.
pub const MAX_ID_LEN: usize = 64;

pub const INVALID_ID: Reason = Reason::new("INVALID_ID", "R-AUDIT-2");
pub const REASONS: &[Reason] = &[INVALID_ID];

/// Seat number at a table, 1..=10 (R: seats per table are bounded to [`crate::MAX_SEATS`]).
pub type Seat = u8;

/// The form of every id (tables, cages, patrons, properties), as errors name it.
pub const ID_FORM: &str = "1 to 64 characters of A-Z a-z 0-9 _ . -, not . or ..";

/// [`ID_FORM`]. Not `.` or `..`: in a path (the console's pages of a patron or a table) they are
/// the page itself or its parent, so such a patron had no page (the identity pass).
fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_LEN
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
        && s != "."
        && s != ".."
}

/// Ids up to this many bytes live inline: every id the floor uses (`T12`, `P7`, `MAIN`, a
/// PHH `phh-30.p3`) and most generated ones.
const INLINE_ID_LEN: usize = 22;

/// The text of an id. Ids are copied into every account, posting, event and stream id of a
/// command, so a copy must be cheap: short ids are copied as 24 bytes (no heap, no reference
/// count), longer ones share one immutable heap copy. The representation follows the length
/// (inline exactly when it fits), so equal texts have equal representations.
#[derive(Clone)]
enum IdText {
    /// `bytes[..len]` is the id; the rest is zero.
    Inline { len: u8, bytes: [u8; INLINE_ID_LEN] },
    Shared(Arc<str>),
}

impl IdText {
    /// `id` must be valid (ASCII, at most `MAX_ID_LEN` bytes).
    fn new(id: &str) -> IdText {
        if id.len() <= INLINE_ID_LEN {
            let mut bytes = [0; INLINE_ID_LEN];
            bytes[..id.len()].copy_from_slice(id.as_bytes());
            IdText::Inline { len: id.len() as u8, bytes }
        } else {
            IdText::Shared(Arc::from(id))
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // Valid ids are ASCII: the check cannot fail.
            IdText::Inline { len, bytes } => std::str::from_utf8(&bytes[..*len as usize]).expect("ids are ASCII"),
            IdText::Shared(text) => text,
        }
    }
}

impl PartialEq for IdText {
    fn eq(&self, other: &IdText) -> bool {
        match (self, other) {
            // Whole arrays (zero past the id): a few word compares, no call.
            (IdText::Inline { len: a, bytes: x }, IdText::Inline { len: b, bytes: y }) => a == b && x == y,
            (IdText::Shared(x), IdText::Shared(y)) => Arc::ptr_eq(x, y) || x == y,
            // Different lengths.
            _ => false,
        }
    }
}

impl Eq for IdText {}

impl std::hash::Hash for IdText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for IdText {
    fn partial_cmp(&self, other: &IdText) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for IdText {
    fn cmp(&self, other: &IdText) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

macro_rules! id_type {
    ($name:ident, $what:literal) => {
        #[doc = concat!("Validated ", $what, " id: 1 to 64 chars of `[A-Za-z0-9_.-]`.")]
        ///
        /// Cheap to clone (see `IdText`): equality, order and hash are the string's; serde
        /// writes the plain string.
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(IdText);

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple(stringify!($name)).field(&self.as_str()).finish()
            }
        }

        impl $name {
            pub fn new(id: impl Into<String>) -> Result<$name, Rejection> {
                let id = id.into();
                if !valid_id(&id) {
                    return Err(Rejection::new(INVALID_ID, format!("invalid {} id {:?}", $what, id))
                        .with("length", id.len() as i64));
                }
                Ok($name(IdText::new(&id)))
            }
            pub fn as_str(&self) -> &str {
                self.0.as_str()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
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
                s.serialize_str(self.as_str())
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

#[cfg(test)]
mod tests {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};

    use super::*;

    fn hash_of<T: Hash>(value: &T) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    /// Inline (up to 22 bytes) or shared, an id behaves as its text: equality, hash, order,
    /// display, debug and serde (stored events keep the plain string).
    #[test]
    fn ids_behave_as_their_text_inline_or_shared() {
        let lengths = [1, INLINE_ID_LEN - 1, INLINE_ID_LEN, INLINE_ID_LEN + 1, MAX_ID_LEN];
        let texts: Vec<String> = lengths.iter().flat_map(|&n| ["a", "b"].map(|last| format!("{}{last}", "t".repeat(n - 1)))).collect();
        for text in &texts {
            let (one, other) = (TableId::new(text.as_str()).unwrap(), TableId::new(text.clone()).unwrap());
            assert_eq!(one, other);
            assert_eq!(hash_of(&one), hash_of(&other));
            assert_eq!(hash_of(&one), hash_of(&text.to_string()), "hashes as the string did");
            assert_eq!((one.as_str(), one.to_string()), (text.as_str(), text.clone()));
            assert_eq!(format!("{one:?}"), format!("TableId({text:?})"));
            let json = serde_json::to_string(&one).unwrap();
            assert_eq!(json, format!("{text:?}"));
            assert_eq!(serde_json::from_str::<TableId>(&json).unwrap(), one);
            for second in &texts {
                let id = TableId::new(second.as_str()).unwrap();
                assert_eq!(one == id, text == second, "{text} == {second}");
                assert_eq!(one.cmp(&id), text.cmp(second), "{text} cmp {second}");
            }
        }
    }
}
