//! PostgreSQL refuses to run as root: when we are root, every server process runs as the
//! `postgres` OS user (uid/gid set on the child), and the files it uses are chowned to it.

use std::ffi::CString;
use std::path::Path;

use crate::PgError;

/// The OS account server processes run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OsUser {
    pub uid: u32,
    pub gid: u32,
}

impl OsUser {
    /// Whether this user may pass through directory `dir` (execute permission for its owner,
    /// group or others; supplementary groups are not considered).
    pub(crate) fn may_enter(&self, dir: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(metadata) = std::fs::metadata(dir) else {
            return false;
        };
        let mode = metadata.mode();
        (metadata.uid() == self.uid && mode & 0o100 != 0)
            || (metadata.gid() == self.gid && mode & 0o010 != 0)
            || mode & 0o001 != 0
    }
}

/// `None` when we are not root (children run as ourselves), else the `postgres` user.
pub(crate) fn server_owner() -> Result<Option<OsUser>, PgError> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if euid != 0 {
        return Ok(None);
    }
    lookup("postgres").map(Some).ok_or(PgError::NoPostgresUser)
}

fn lookup(name: &str) -> Option<OsUser> {
    let name = CString::new(name).ok()?;
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the call; getpwnam_r writes only into `entry` and
    // `buffer` (of the length given) and sets `found` to `&entry` or null.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    (rc == 0 && !found.is_null()).then_some(OsUser {
        uid: entry.pw_uid,
        gid: entry.pw_gid,
    })
}

/// Give `path` to the server's OS user (no-op when we are not root).
pub(crate) fn hand_over(path: &Path, owner: Option<OsUser>) -> Result<(), PgError> {
    if let Some(owner) = owner {
        std::os::unix::fs::chown(path, Some(owner.uid), Some(owner.gid))
            .map_err(|e| PgError::io(format!("chown {}", path.display()), e))?;
    }
    Ok(())
}
