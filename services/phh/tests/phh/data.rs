//! Where the shared PHH data lives: `../shared/phh` and `../shared/phh-generated` from the
//! repository root, or `$CHIPLEDGER_PHH_DIR` and `$CHIPLEDGER_PHH_GENERATED_DIR`. The data is
//! part of every checkout CI makes: a test that needs it fails when it is missing, it never
//! skips.

use std::path::PathBuf;

fn shared_dir(variable: &str, folder: &str) -> PathBuf {
    let dir = match std::env::var_os(variable) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared").join(folder),
    };
    assert!(dir.is_dir(), "PHH data folder {} is missing (set {variable})", dir.display());
    dir
}

/// `../shared/phh`: the Pluribus hands and the samples.
pub fn phh_dir() -> PathBuf {
    shared_dir("CHIPLEDGER_PHH_DIR", "phh")
}

/// `../shared/phh-generated`: 2,000 PokerKit hands over the eleven variants.
pub fn generated_dir() -> PathBuf {
    shared_dir("CHIPLEDGER_PHH_GENERATED_DIR", "phh-generated")
}

pub fn sample(name: &str) -> PathBuf {
    let path = phh_dir().join("samples").join(name);
    assert!(path.is_file(), "PHH sample {} is missing", path.display());
    path
}

/// Every hand file under `dir`, recursively, in a stable order.
pub fn phh_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    chipledger_phh::find_hand_files(dir, &mut files).expect("readable data dir");
    files
}
