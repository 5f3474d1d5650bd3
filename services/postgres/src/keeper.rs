//! A kept cluster kept running: when its postmaster exits while we own it (killed, crashed, or
//! stopped by someone else's `pg_ctl stop`), it is started again on the same port with the same
//! data, so the service comes back by itself instead of answering UNAVAILABLE until an operator
//! restarts it. Crash recovery from the WAL runs at that start: nothing committed is lost.
//!
//! The postmaster's exit is awaited, not polled: a pidfd (pidfd_open(2)) of the pid in
//! `postmaster.pid` turns readable when that process has ended (at the latest once it is
//! reaped), whoever its parent is.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::PgError;
use crate::cluster::start_server;
use crate::os_user::OsUser;

/// First wait before a start is tried again (the dead postmaster's backends may still hold its
/// shared memory for a moment: PostgreSQL refuses to start until they are gone).
const FIRST_RETRY: Duration = Duration::from_millis(100);
/// The longest wait between two tries.
const LAST_RETRY: Duration = Duration::from_secs(5);

/// The task that restarts the cluster's postmaster when it exits, until [`Keeper::stop`].
#[derive(Debug)]
pub struct Keeper {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Keeper {
    pub(crate) fn spawn(bin_dir: PathBuf, data_dir: PathBuf, owner: Option<OsUser>) -> Keeper {
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(keep(Server { bin_dir, data_dir, owner }, stopped));
        Keeper { stop: Some(stop), task: Some(task) }
    }

    /// Stop keeping (before the cluster is stopped on purpose); waits for a start in progress.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

struct Server {
    bin_dir: PathBuf,
    data_dir: PathBuf,
    owner: Option<OsUser>,
}

async fn keep(server: Server, mut stopped: oneshot::Receiver<()>) {
    let mut restarts: u64 = 0;
    // The wait before the next try while starts fail; `None` while the postmaster runs.
    let mut retry: Option<Duration> = None;
    // The postmaster seen to exit: until its parent reaps it, its pid still names a process.
    let mut exited: Option<i32> = None;
    loop {
        match watch_postmaster(&server.data_dir) {
            Ok(Some((pid, _))) if exited == Some(pid) => {}
            Ok(Some((pid, exit))) => {
                retry = None;
                tokio::select! {
                    _ = exit.readable() => {}
                    _ = &mut stopped => return,
                }
                exited = Some(pid);
                tracing::error!(pid, data_dir = %server.data_dir.display(), "the embedded PostgreSQL exited; starting it again (crash recovery from the WAL)");
            }
            // No postmaster (gone before we could watch it, or a start that failed): start it.
            Ok(None) => {}
            Err(error) => {
                tracing::error!(%error, "cannot watch the embedded PostgreSQL; it will not be restarted if it exits");
                let _ = (&mut stopped).await;
                return;
            }
        }
        if let Some(wait) = retry {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = &mut stopped => return,
            }
        }
        match start_server(&server.bin_dir, &server.data_dir, server.owner).await {
            Ok(()) => {
                restarts += 1;
                tracing::warn!(restarts, "the embedded PostgreSQL runs again");
            }
            Err(error) => {
                let wait = retry.map_or(FIRST_RETRY, |wait| (wait * 2).min(LAST_RETRY));
                tracing::warn!(%error, retry_in = ?wait, "the embedded PostgreSQL did not start");
                retry = Some(wait);
            }
        }
    }
}

/// The postmaster's pid (from `postmaster.pid`) and a descriptor that turns readable when it
/// exits; `None` when there is no postmaster (no pid file, or its process is gone already).
fn watch_postmaster(data_dir: &Path) -> Result<Option<(i32, AsyncFd<OwnedFd>)>, PgError> {
    let pid_file = data_dir.join("postmaster.pid");
    let text = match std::fs::read_to_string(&pid_file) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(PgError::io(format!("read {}", pid_file.display()), error)),
    };
    let Some(pid) = text.lines().next().and_then(|line| line.trim().parse::<i32>().ok()).filter(|pid| *pid > 0) else {
        return Ok(None);
    };
    // SAFETY: pidfd_open(2) takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::ESRCH) {
            return Ok(None);
        }
        return Err(PgError::io(format!("pidfd_open({pid})"), error));
    }
    // SAFETY: the descriptor was just returned to us and nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: the OwnedFd is valid and open, and the AsyncFd owns it for as long as it lives.
    let exit = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
        .map_err(|error| PgError::io("watch a pidfd", std::io::Error::other(error.to_string())))?;
    Ok(Some((pid, exit)))
}
