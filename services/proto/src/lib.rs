//! chipledger-proto: the wire types and tonic stubs of the `chipledger.v1` gRPC API, generated
//! from `proto/chipledger/v1/*.proto`. No logic lives here: the one conversion between these
//! types and the rules core is in the server crate (`chipledger_server::convert`).

/// Package `chipledger.v1`: messages, `*_server` and `*_client` modules.
pub mod v1 {
    tonic::include_proto!("chipledger.v1");
}

/// Encoded `FileDescriptorSet` of every chipledger.v1 file, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/chipledger_v1_descriptor.bin"));
