//! The one conversion between the wire ([`crate::v1`]) and the rules core (`chipledger_rules`),
//! both directions side by side. Wire messages mirror `TableOp`, `CageOp` and `PlayerOp` one to
//! one, so each mapping is a field copy plus validation of what the wire cannot type: ids (1..=64
//! of `[A-Za-z0-9_.-]`), seats (1..=10), enums left UNSPECIFIED, required oneofs. Such errors are
//! collected per field into one INVALID_ARGUMENT (`google.rpc.BadRequest`). Amount rules
//! (positive, multiples of the minimum chip, limits) are rules, judged by the core (R-UNIT-1,
//! R-UNIT-2).
//!
//! Layered bottom up: [`FieldErrors`] and the field checks, the enum tables, the table
//! configuration, the query views, the commands.

mod commands;
mod enums;
mod fields;
mod table_config;
mod views;

pub use commands::{CorrectionRequest, Decidable, EntryHeader, Envelope, NoWireMessage, ToDomain, command_id_of, command_to_wire, entry_header, envelope};
pub use fields::{FieldErrors, chips_to_wire};
pub use table_config::preset_with_settings;
pub use views::{legal_actions_to_wire, table_view};
