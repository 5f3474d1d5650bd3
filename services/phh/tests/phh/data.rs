//! Where the shared PHH data lives: `../shared/phh` from the repository root, or
//! `$CHIPLEDGER_PHH_DIR`. Tests that need it say so loudly when it is missing.

use std::path::PathBuf;

pub fn phh_dir() -> PathBuf {
    match std::env::var_os("CHIPLEDGER_PHH_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/phh"),
    }
}

/// The data folder, or `None` after printing why the calling test skips.
pub fn phh_dir_or_skip(test: &str) -> Option<PathBuf> {
    let dir = phh_dir();
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("SKIPPED {test}: PHH data folder {} is missing (set CHIPLEDGER_PHH_DIR)", dir.display());
        None
    }
}

pub fn sample(name: &str) -> Option<PathBuf> {
    let path = phh_dir_or_skip(name)?.join("samples").join(name);
    Some(path)
}

/// Every hand file under `dir`, recursively, in a stable order.
pub fn phh_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    chipledger_phh::find_hand_files(dir, &mut files).expect("readable data dir");
    files
}
