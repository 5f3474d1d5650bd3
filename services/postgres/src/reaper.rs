//! Cleanup that survives us: a small `sh` child, in its own process group, blocked reading a
//! pipe from this process. When the pipe closes (we dropped the handle, returned from `main`,
//! panicked, or were killed, even by SIGKILL) it runs its cleanup command: stop the cluster,
//! remove the container, delete the temporary directory. Statics are never dropped in Rust, so
//! this is also what cleans up a process-wide shared server.

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Child, Command, Stdio};

use std::os::unix::process::CommandExt;

use crate::PgError;
use crate::os_user::OsUser;

/// Reads one word; `disarm` means "nothing to do", anything else (EOF included) runs the cleanup
/// script. Output goes nowhere: cleanup is best effort and idempotent.
const WATCH_PREFIX: &str =
    r#"read -r word; [ "$word" = disarm ] && exit 0; exec >/dev/null 2>&1; "#;

/// A cleanup armed by [`Reaper::watch`]: it runs when the handle is dropped (and waits for it)
/// or when this process dies, however it dies; [`Reaper::disarm`] forgets it.
#[derive(Debug)]
pub struct Reaper {
    child: Option<Child>,
}

impl Reaper {
    /// Arm a cleanup: `cleanup_script` is `sh` code that reads its inputs from `$1`, `$2`, ...
    /// (`args`, never spliced into the code), run as `run_as` (or as ourselves).
    pub(crate) fn arm(
        cleanup_script: &str,
        args: &[&OsStr],
        run_as: Option<OsUser>,
    ) -> Result<Reaper, PgError> {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("{WATCH_PREFIX}{cleanup_script}"))
            .arg("chipledger-reaper")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .current_dir("/")
            // Own process group: a test runner killing our group must not kill the cleanup too.
            .process_group(0);
        if let Some(user) = run_as {
            command.uid(user.uid).gid(user.gid);
        }
        let child = command
            .spawn()
            .map_err(|e| PgError::io("spawn cleanup watcher `sh`", e))?;
        Ok(Reaper { child: Some(child) })
    }

    /// Arm a cleanup run as ourselves: `cleanup_script` is `sh` code reading its inputs from
    /// `$1`, `$2`, ... (`args`, never spliced into the code). For resources other than this
    /// crate's, e.g. a compose project a test started.
    pub fn watch(cleanup_script: &str, args: &[&OsStr]) -> Result<Reaper, PgError> {
        Reaper::arm(cleanup_script, args, None)
    }

    /// Forget the cleanup (the resource was released explicitly).
    pub fn disarm(mut self) {
        if let Some(mut child) = self.child.take() {
            if let Some(mut stdin) = child.stdin.take() {
                // A failed write closes the pipe, which runs the (idempotent) cleanup: still fine.
                let _ = stdin.write_all(b"disarm\n");
            }
            let _ = child.wait();
        }
    }
}

impl Drop for Reaper {
    /// Run the cleanup now and wait for it, so the resource is gone when the owner's drop returns.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }
}
