//! chipledger-proto: the `chipledger.v1` gRPC API in Rust. The messages and tonic stubs are
//! generated from `proto/chipledger/v1/*.proto` ([`v1`]); beside them sit the one conversion
//! between those messages and the rules core ([`ToDomain`], [`command_to_wire`] and the
//! per-type mappings), the one table of RPCs with their roles and second-person fields
//! ([`RPCS`], [`APPROVAL_RULES`], [`WireCommand`]), and the format of approval tokens
//! ([`approval`]). The server and the command line both speak the API through this crate, so
//! each mapping and each list of commands is written once, for both sides.

/// Package `chipledger.v1`: messages, `*_server` and `*_client` modules.
pub mod v1 {
    tonic::include_proto!("chipledger.v1");

    impl RecordedEvent {
        /// When the event happened (R-AUDIT-2): an import's own time, else when it was recorded.
        pub fn happened_unix_ms(&self) -> i64 {
            self.metadata.as_ref().and_then(|metadata| metadata.occurred_at_unix_ms).unwrap_or(self.recorded_at_unix_ms)
        }
    }
}

/// Encoded `FileDescriptorSet` of every chipledger.v1 file, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/chipledger_v1_descriptor.bin"));

pub mod approval;
mod codec;
mod rpcs;

pub use codec::{
    CorrectionRequest, Decidable, EntryHeader, Envelope, FieldErrors, NoWireMessage, ToDomain, chips_to_wire, command_id_of, command_to_wire,
    entry_header, envelope, legal_actions_to_wire, preset_with_settings, table_view,
};
pub use rpcs::{
    APPROVAL_RULES, APPROVERS, ApprovalRule, ApprovalView, COMMAND_RPCS, CommandVisitor, RPCS, Rpc, WireCommand, allowed_roles,
    approval_rule, approval_view, dual_control_rule, batch_entry, entry_command_id, role_from_name, role_name, role_to_wire,
};
