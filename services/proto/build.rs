//! Generates the chipledger.v1 messages and tonic stubs from `proto/chipledger/v1/*.proto`,
//! plus a file descriptor set that the server hands to gRPC reflection.

use std::path::PathBuf;

const PROTO_FILES: &[&str] = &[
    "chipledger/v1/common.proto",
    "chipledger/v1/table.proto",
    "chipledger/v1/commands.proto",
    "chipledger/v1/queries.proto",
    "chipledger/v1/service.proto",
    "chipledger/v1/approvals.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let proto_root = manifest_dir.join("../../proto");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);

    // A $PROTOC set by the caller wins; otherwise use the vendored binary.
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path()?;
        // SAFETY: build scripts are single-threaded here; nothing else reads the environment.
        unsafe { std::env::set_var("PROTOC", protoc) };
    }
    println!("cargo:rerun-if-env-changed=PROTOC");

    let protos: Vec<PathBuf> = PROTO_FILES.iter().map(|file| proto_root.join(file)).collect();
    for proto in &protos {
        println!("cargo:rerun-if-changed={}", proto.display());
    }
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .file_descriptor_set_path(out_dir.join("chipledger_v1_descriptor.bin"))
        .compile_protos(&protos, &[proto_root])?;
    Ok(())
}
