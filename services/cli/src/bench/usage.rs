//! CPU time spent: this process (the bench client) from `getrusage` plus the embedded
//! `chipledgerd` from /proc, and the PostgreSQL server from /proc: the postmaster (with its
//! reaped children) plus every live child process (backends, WAL writer, checkpointer ...).

use std::time::Duration;

/// CPU time (user + system) at one instant.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSample {
    pub process: Duration,
    /// `None` when the PostgreSQL processes are not visible (remote server).
    pub postgres: Option<Duration>,
}

impl CpuSample {
    /// `server_pid`: a `chipledgerd` this process runs, counted with it.
    pub fn take(server_pid: Option<u32>, postmaster_pid: Option<u32>) -> CpuSample {
        let server = server_pid.and_then(|pid| stat(pid)).map_or(Duration::ZERO, |(_, ticks, _)| ticks_to_duration(ticks));
        CpuSample { process: process_cpu() + server, postgres: postmaster_pid.and_then(postgres_cpu) }
    }

    /// CPU spent between `earlier` and `self`.
    pub fn since(&self, earlier: &CpuSample) -> CpuSample {
        CpuSample {
            process: self.process.saturating_sub(earlier.process),
            postgres: match (self.postgres, earlier.postgres) {
                (Some(now), Some(then)) => Some(now.saturating_sub(then)),
                _ => None,
            },
        }
    }
}

fn process_cpu() -> Duration {
    // SAFETY: getrusage writes one plain struct that we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let status = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if status != 0 {
        return Duration::ZERO;
    }
    let timeval = |tv: libc::timeval| Duration::from_secs(tv.tv_sec as u64) + Duration::from_micros(tv.tv_usec as u64);
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

fn clock_ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as u64 } else { 100 }
}

/// (ppid, utime + stime, cutime + cstime) in clock ticks, from /proc/<pid>/stat.
fn stat(pid: u32) -> Option<(u32, u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    let number = |index: usize| fields.get(index)?.parse::<u64>().ok();
    let ppid = u32::try_from(number(1)?).ok()?;
    Some((ppid, number(11)? + number(12)?, number(13)? + number(14)?))
}

/// The postmaster's own and reaped children's CPU plus every live child's.
fn postgres_cpu(postmaster_pid: u32) -> Option<Duration> {
    let (_, own, reaped) = stat(postmaster_pid)?;
    let mut ticks = own + reaped;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        if let Some((ppid, child, _)) = stat(pid)
            && ppid == postmaster_pid
        {
            ticks += child;
        }
    }
    Some(ticks_to_duration(ticks))
}

fn ticks_to_duration(ticks: u64) -> Duration {
    Duration::from_micros(ticks * 1_000_000 / clock_ticks_per_second())
}

/// The postmaster of the server behind `backend_pid` (a backend's parent), if visible here.
pub fn postmaster_of(backend_pid: u32) -> Option<u32> {
    let (ppid, _, _) = stat(backend_pid)?;
    let comm = std::fs::read_to_string(format!("/proc/{ppid}/comm")).ok()?;
    comm.trim().starts_with("postgres").then_some(ppid)
}
