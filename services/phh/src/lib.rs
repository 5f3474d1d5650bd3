//! chipledger-phh: reads PHH hand histories (the TOML Poker Hand History format,
//! phh.readthedocs.io) and turns each hand into the sequence of rules-core commands
//! that plays it at a table, so real play can be replayed through the ledger's rules.
//!
//! Pure: no I/O except [`load_file`], no clock, no network. Not a poker engine: it
//! ranks showdown hands (`rs_poker` for high hands, `aya_poker` for lows, 2-7, badugi and
//! short deck) but every chip movement, pot and award is decided by `chipledger-rules`.
//! The eleven variants of the PHH specification replay; a card room's record (its
//! `winnings` after rake, mucked hands shown as `????`, unknown stacks) is taken as the
//! dealer's report.

/// Integer minor units (R-UNIT-1).
pub use chipledger_rules::Cents;

pub mod amount;
pub mod card;
pub mod convert;
mod error;
mod files;
pub mod hand_rank;
pub mod history;
mod parse;
pub mod replay;
pub mod showdown;

pub use error::PhhError;
pub use files::{MAX_HAND_FILES, find_hand_files, is_hand_file};
pub use history::{Action, ActionEntry, HandHistory, PlayedOn, Player, Shown, Variant};
pub use convert::{Conversion, ConvertError, Step, commands, convert};
pub use parse::{MAX_FILE_BYTES, load_file, parse_hand, parse_hands};
pub use replay::{HandReport, RejectedStep, ReplayOutcome, StackMismatch, Streams, replay, replay_report};
