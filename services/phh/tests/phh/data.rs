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

/// Every `.phh` file under `dir`, recursively, in a stable order.
pub fn phh_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect(dir, &mut files);
    files
}

fn collect(dir: &std::path::Path, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("readable data dir").map(|e| e.expect("dir entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "phh") {
            files.push(path);
        }
    }
}
