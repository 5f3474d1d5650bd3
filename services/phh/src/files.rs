//! Finding hand-history files: a path is a `.phh`/`.phhs` file, or a folder searched
//! recursively for them (in a stable, sorted order).

use std::path::{Path, PathBuf};

use crate::error::{PhhError, one_line};

/// Most files one search returns (an explicit bound on what a caller may load).
pub const MAX_HAND_FILES: usize = 10_000_000;

/// True for the PHH extensions: `.phh` (one hand) and `.phhs` (several).
pub fn is_hand_file(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "phh" || ext == "phhs")
}

/// Appends to `files` the path itself if it is a file (whatever its extension: it was
/// named explicitly), or every hand file below it if it is a folder.
pub fn find_hand_files(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), PhhError> {
    let read_error = |error: std::io::Error| PhhError::Read {
        origin: path.display().to_string(),
        message: one_line(&error.to_string()),
    };
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if !meta.is_dir() {
        files.push(path.to_owned());
    } else {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(read_error)?
            .map(|entry| entry.map(|entry| entry.path()))
            .collect::<Result<_, _>>()
            .map_err(read_error)?;
        entries.sort();
        for entry in entries {
            if entry.is_dir() {
                find_hand_files(&entry, files)?;
            } else if is_hand_file(&entry) {
                files.push(entry);
            }
        }
    }
    if files.len() > MAX_HAND_FILES {
        return Err(PhhError::Read {
            origin: path.display().to_string(),
            message: format!("more than {MAX_HAND_FILES} hand files"),
        });
    }
    Ok(())
}
