//! A PostgreSQL cluster run from the installed server binaries: `initdb` once, `pg_ctl` to start
//! and stop. Used by `chipledgerd`'s embedded mode and, as a throwaway, by tests.

use std::fmt::Write as _;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::process::Command;

use crate::os_user::{self, OsUser};
use crate::reaper::Reaper;
use crate::keeper::Keeper;
use crate::{PgError, sql};

/// Where Debian's postgresql-15 package puts the server binaries.
const DEFAULT_BIN_DIR: &str = "/usr/lib/postgresql/15/bin";
/// Env override for [`DEFAULT_BIN_DIR`].
const BIN_DIR_ENV: &str = "CHIPLEDGER_PG_BIN";
/// The cluster's superuser (created by initdb).
const SUPERUSER: &str = "postgres";
/// In the data directory: the superuser's generated password (mode 0600).
const PASSWORD_FILE: &str = "chipledger.password";
/// In the data directory: settings we own, rewritten at every start, included by postgresql.conf.
const SETTINGS_FILE: &str = "chipledger.conf";
/// In the data directory: what the server prints before its logging collector takes over.
const STARTUP_LOG: &str = "chipledger-startup.log";
/// Bound on every `pg_ctl` wait (start includes crash recovery).
const PG_CTL_TIMEOUT_SECONDS: &str = "120";
/// Attempts when we pick the port ourselves and someone takes it between pick and bind.
const AUTO_PORT_ATTEMPTS: u32 = 3;
/// How long a busy owner lock is tried again (a killed owner's exit), and how often.
const OWNER_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
const OWNER_LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(50);
/// Bytes of output kept in an error message.
const ERROR_OUTPUT_BYTES: usize = 4000;

/// How to stop a server (`pg_ctl stop -m ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// Roll back open transactions, checkpoint, exit cleanly.
    Fast,
    /// Exit at once without a checkpoint: the next start runs crash recovery from the WAL.
    /// This is how tests simulate a crash.
    Immediate,
}

impl StopMode {
    fn pg_ctl_name(self) -> &'static str {
        match self {
            StopMode::Fast => "fast",
            StopMode::Immediate => "immediate",
        }
    }
}

/// What [`LocalCluster::start`] needs.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// The cluster's data directory (PGDATA). Created and initialised when missing or empty;
    /// reused as it is otherwise.
    pub data_dir: PathBuf,
    /// TCP port on 127.0.0.1; `None` picks a free one at each start.
    pub port: Option<u16>,
    /// Server binaries; `None` means env `CHIPLEDGER_PG_BIN`, else `/usr/lib/postgresql/15/bin`.
    pub bin_dir: Option<PathBuf>,
    /// `false` trades durability across an OS crash for speed (throwaway test clusters only).
    /// A crash of the server alone (see [`StopMode::Immediate`]) loses nothing either way.
    pub fsync: bool,
    /// More `postgresql.conf` settings, applied last.
    pub extra_settings: Vec<(String, String)>,
}

impl ClusterOptions {
    /// Durable defaults: free port, default binaries, fsync on, no extra settings.
    pub fn new(data_dir: impl Into<PathBuf>) -> ClusterOptions {
        ClusterOptions {
            data_dir: data_dir.into(),
            port: None,
            bin_dir: None,
            fsync: true,
            extra_settings: Vec::new(),
        }
    }
}

/// A PostgreSQL cluster started from the installed server binaries. Runs as OS user `postgres`
/// when we are root. Listens on 127.0.0.1 only, password authentication (the superuser's
/// password is generated at initdb and kept in the data directory, readable by its owner only).
///
/// Dropping it stops the server (fast for a kept cluster, immediate plus directory removal for
/// a throwaway one); so does the death of this process, however it dies (see `reaper`).
#[derive(Debug)]
pub struct LocalCluster {
    data_dir: PathBuf,
    bin_dir: PathBuf,
    port: u16,
    password: Password,
    /// Settings written at each start (fsync choice, then the caller's extra settings).
    settings: Vec<(String, String)>,
    owner: Option<OsUser>,
    /// `Some` for a throwaway cluster: the directory removed together with the server.
    throwaway_root: Option<PathBuf>,
    /// Stops the server (and removes a throwaway directory) if we go away without `stop`.
    reaper: Option<Reaper>,
    /// Held for as long as we own the cluster (an flock, released by the kernel however this
    /// process ends): a second process refuses the data directory while we live, and takes the
    /// server over once we are gone.
    _owner_lock: OwnerLock,
}

impl LocalCluster {
    /// Initialise `data_dir` if it is empty, start the server, wait until it is ready (`pg_ctl
    /// -w`: bounded), and create database `chipledger` if missing.
    pub async fn start(opts: ClusterOptions) -> Result<LocalCluster, PgError> {
        LocalCluster::start_with(opts, None).await
    }

    /// As [`LocalCluster::start`], for a cluster living under `throwaway_root` (already owned by
    /// the server's user), which is deleted when the cluster is dropped or stopped.
    pub(crate) async fn start_throwaway(
        opts: ClusterOptions,
        throwaway_root: PathBuf,
    ) -> Result<LocalCluster, PgError> {
        LocalCluster::start_with(opts, Some(throwaway_root)).await
    }

    async fn start_with(
        opts: ClusterOptions,
        throwaway_root: Option<PathBuf>,
    ) -> Result<LocalCluster, PgError> {
        let bin_dir = opts
            .bin_dir
            .clone()
            .or_else(|| std::env::var_os(BIN_DIR_ENV).map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(DEFAULT_BIN_DIR));
        if !["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|tool| bin_dir.join(tool).is_file())
        {
            return Err(PgError::BinariesMissing { bin_dir });
        }
        let settings = settings_for(&opts)?;
        let owner = os_user::server_owner()?;
        let data_dir = prepare_data_dir(&opts.data_dir, owner)?;
        // A live owner: refuse before arming a cleanup that would stop its server.
        let owner_lock = OwnerLock::acquire(&data_dir).await?;
        if server_running(&bin_dir, &data_dir, owner).await? {
            // Nobody owns it (the process that started it died, e.g. kill -9, and its cleanup
            // may still be stopping it): stop it ourselves, waiting until it is gone (pg_ctl -w,
            // bounded), then start it as ours. Crash recovery, if any, runs at our start.
            tracing::warn!(data_dir = %data_dir.display(), "taking over a PostgreSQL left running by a previous owner");
            take_over(&bin_dir, &data_dir, owner).await?;
        }
        // Armed before anything runs, so even a start interrupted midway is cleaned up.
        let reaper = arm_reaper(&bin_dir, &data_dir, throwaway_root.as_deref(), owner)?;

        if !data_dir.join("PG_VERSION").is_file() {
            init_cluster(&bin_dir, &data_dir, owner, opts.fsync).await?;
        }
        include_settings_file(&data_dir)?;
        let password_path = data_dir.join(PASSWORD_FILE);
        let password = Password(
            std::fs::read_to_string(&password_path)
                .map_err(|e| PgError::io(format!("read {}", password_path.display()), e))?
                .trim()
                .to_owned(),
        );

        let mut cluster = LocalCluster {
            data_dir,
            bin_dir,
            port: 0,
            password,
            settings,
            owner,
            throwaway_root,
            reaper: Some(reaper),
            _owner_lock: owner_lock,
        };
        cluster.launch(opts.port).await?;
        sql::ensure_database(&cluster.url_to("postgres"), sql::DATABASE).await?;
        Ok(cluster)
    }

    /// A hot standby of this cluster under `throwaway_root` (owned by the server's user; its
    /// `opts.data_dir` missing or empty): a base backup streamed over a replication connection
    /// (`pg_basebackup -R`, which also configures the standby to follow), then started. It
    /// replays the primary's WAL as it arrives and answers read-only queries.
    pub(crate) async fn start_standby_throwaway(
        &self,
        opts: ClusterOptions,
        throwaway_root: PathBuf,
    ) -> Result<LocalCluster, PgError> {
        let owner = os_user::server_owner()?;
        let data_dir = prepare_data_dir(&opts.data_dir, owner)?;
        let mut command = server_command(&self.bin_dir.join("pg_basebackup"), owner);
        command
            .arg("-D")
            .arg(&data_dir)
            .args(["--write-recovery-conf", "--wal-method=stream", "--checkpoint=fast", "-h", "127.0.0.1", "-U", SUPERUSER])
            .arg(format!("--port={}", self.port))
            .env("PGPASSWORD", &self.password.0);
        run(command).await?;
        let opts = ClusterOptions { bin_dir: Some(self.bin_dir.clone()), port: None, ..opts };
        LocalCluster::start_with(opts, Some(throwaway_root)).await
    }

    /// Superuser URL to database `chipledger`.
    pub fn url(&self) -> String {
        self.url_to(sql::DATABASE)
    }

    /// The TCP port the server listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Superuser URL to database `chipledger` through the socket in the data directory, which
    /// only the cluster's owner (and root) can reach; the TCP URL when there is no socket. What
    /// the embedded service connects with: over TCP, a process that takes the port while the
    /// server is down (killed, restarting) is answered the service's passwords in clear (the
    /// operations pass: a fake server on the freed port asked for a cleartext password and got
    /// the application role's, which then logged in to the real one).
    pub fn local_url(&self) -> String {
        match socket_dir(&self.data_dir, self.port) {
            Some(dir) => format!("{}?host={}", self.url_to(sql::DATABASE), dir.display()),
            None => self.url(),
        }
    }

    /// The data directory (absolute).
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Stop the server and wait until it is gone. A throwaway cluster's directory is removed.
    pub async fn stop(mut self, mode: StopMode) -> Result<(), PgError> {
        self.pg_ctl_stop(mode).await?;
        if let Some(reaper) = self.reaper.take() {
            if self.throwaway_root.is_some() {
                drop(reaper); // runs the cleanup now: removes the directory
            } else {
                reaper.disarm();
            }
        }
        Ok(())
    }

    /// Stop the server and start it again on the same port with the same data. With
    /// [`StopMode::Immediate`] this is a crash: the start runs recovery from the WAL.
    pub async fn restart(&mut self, mode: StopMode) -> Result<(), PgError> {
        self.pg_ctl_stop(mode).await?;
        self.launch(Some(self.port)).await
    }

    pub(crate) fn url_to(&self, database: &str) -> String {
        sql::url(
            SUPERUSER,
            &self.password.0,
            "127.0.0.1",
            self.port,
            database,
        )
    }

    /// Write the settings file and `pg_ctl start -w`. With no port requested, pick a free one and
    /// retry (bounded) if it was taken meanwhile.
    async fn launch(&mut self, requested_port: Option<u16>) -> Result<(), PgError> {
        let attempts = if requested_port.is_some() {
            1
        } else {
            AUTO_PORT_ATTEMPTS
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let port = match requested_port {
                Some(port) => port,
                None => free_port()?,
            };
            self.write_settings(port)?;
            match start_server(&self.bin_dir, &self.data_dir, self.owner).await {
                Ok(()) => {
                    self.port = port;
                    tracing::info!(port, data_dir = %self.data_dir.display(), "PostgreSQL started");
                    return Ok(());
                }
                Err(error) if attempt < attempts => {
                    tracing::warn!(port, %error, "PostgreSQL did not start, trying another port");
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Keep the server running while we own it: started again (same port, same data, crash
    /// recovery) whenever its postmaster exits, until [`Keeper::stop`], which comes before a
    /// deliberate [`LocalCluster::stop`].
    pub fn keep_running(&self) -> Keeper {
        Keeper::spawn(self.bin_dir.clone(), self.data_dir.clone(), self.owner)
    }

    async fn pg_ctl_stop(&self, mode: StopMode) -> Result<(), PgError> {
        self.pg_ctl(&[
            "stop".as_ref(),
            "-m".as_ref(),
            mode.pg_ctl_name().as_ref(),
            "-w".as_ref(),
            "-t".as_ref(),
            PG_CTL_TIMEOUT_SECONDS.as_ref(),
        ])
        .await
    }

    async fn pg_ctl(&self, args: &[&std::ffi::OsStr]) -> Result<(), PgError> {
        let mut command = server_command(&self.bin_dir.join("pg_ctl"), self.owner);
        command.arg("-D").arg(&self.data_dir).args(args);
        run(command).await
    }

    fn write_settings(&self, port: u16) -> Result<(), PgError> {
        let mut text = String::from(
            "# Written by chipledger-postgres at every start: edits here are overwritten.\n",
        );
        let fixed = [
            ("listen_addresses", "127.0.0.1".to_owned()),
            ("port", port.to_string()),
            // A socket in the data directory (its owner's alone: 0700), for [`Self::local_url`];
            // none when its path would be too long for a socket. pg_ctl -w reads the pid file.
            ("unix_socket_directories", socket_dir(&self.data_dir, port).map(|dir| dir.display().to_string()).unwrap_or_default()),
            // Bounded logs: one file per weekday, truncated when the week comes round.
            ("logging_collector", "on".to_owned()),
            ("log_directory", "log".to_owned()),
            ("log_filename", "postgresql-%a.log".to_owned()),
            ("log_truncate_on_rotation", "on".to_owned()),
            ("log_rotation_age", "1d".to_owned()),
            ("log_rotation_size", "0".to_owned()),
        ];
        let all = fixed
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .chain(self.settings.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        for (name, value) in all {
            let _ = writeln!(text, "{name} = '{}'", value.replace('\'', "''"));
        }
        let path = self.data_dir.join(SETTINGS_FILE);
        std::fs::write(&path, text)
            .map_err(|e| PgError::io(format!("write {}", path.display()), e))?;
        os_user::hand_over(&path, self.owner)
    }
}

/// Longest socket path PostgreSQL takes (`sun_path` is 108 bytes with its NUL), less a margin.
const MAX_SOCKET_PATH: usize = 100;

/// The data directory as the socket directory, when the socket's path fits and is plain enough
/// to go in a URL unescaped (letters, digits, `/ _ . -`).
fn socket_dir(data_dir: &Path, port: u16) -> Option<&Path> {
    let text = data_dir.to_str()?;
    let plain = text.starts_with('/') && text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'.' | b'-'));
    (plain && text.len() + format!("/.s.PGSQL.{port}").len() <= MAX_SOCKET_PATH).then_some(data_dir)
}

/// `pg_ctl start -w` with the settings file as it is (bounded); a failure carries the tail of
/// the server's startup log.
pub(crate) async fn start_server(bin_dir: &Path, data_dir: &Path, owner: Option<OsUser>) -> Result<(), PgError> {
    let startup_log = data_dir.join(STARTUP_LOG);
    let mut command = server_command(&bin_dir.join("pg_ctl"), owner);
    command.arg("-D").arg(data_dir).args(["start", "-w", "-t", PG_CTL_TIMEOUT_SECONDS, "-l"]).arg(&startup_log);
    match run(command).await {
        Err(PgError::Command { command, status, mut output }) => {
            output.push_str("\n--- server startup log (tail) ---\n");
            output.push_str(&tail_of_file(&startup_log));
            Err(PgError::Command { command, status, output })
        }
        other => other,
    }
}

/// `pg_ctl status`: exit code 0 means a server runs on `data_dir`, 3 that none does, 4 that there
/// is no data directory yet.
async fn server_running(
    bin_dir: &Path,
    data_dir: &Path,
    owner: Option<OsUser>,
) -> Result<bool, PgError> {
    let mut command = server_command(&bin_dir.join("pg_ctl"), owner);
    command
        .arg("-D")
        .arg(data_dir)
        .arg("status")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let status = command
        .status()
        .await
        .map_err(|e| PgError::io("run pg_ctl status", e))?;
    Ok(status.success())
}

/// An exclusive flock on `<data_dir>.lock`, beside the data directory (initdb wants the data
/// directory itself empty).
#[derive(Debug)]
struct OwnerLock {
    _file: std::fs::File,
}

impl OwnerLock {
    /// Take the lock. A process killed a moment ago may still hold it while the kernel tears it
    /// down, so a busy lock is tried again (polling, bounded by [`OWNER_LOCK_WAIT`]) before the
    /// data directory counts as owned by a live process.
    async fn acquire(data_dir: &Path) -> Result<OwnerLock, PgError> {
        use std::os::fd::AsRawFd;
        let path = data_dir.with_extension("lock");
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| PgError::io(format!("open {}", path.display()), e))?;
        let started = std::time::Instant::now();
        loop {
            // SAFETY: flock(2) on a descriptor we own; non-blocking, released when it closes.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                break;
            }
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(PgError::io(format!("lock {}", path.display()), error));
            }
            if started.elapsed() >= OWNER_LOCK_WAIT {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                return Err(PgError::OwnedByAnother { data_dir: data_dir.to_path_buf(), holder: holder.trim().to_owned() });
            }
            tokio::time::sleep(OWNER_LOCK_POLL).await;
        }
        // Who owns it, for the message a second process gets (the lock is what counts).
        let _ = file.set_len(0).and_then(|()| file.write_all(format!("pid {}\n", std::process::id()).as_bytes()));
        Ok(OwnerLock { _file: file })
    }
}

/// Stop a server nobody owns any more and wait until it is gone; a server that stops by itself
/// meanwhile (its previous owner's cleanup) is just as good.
async fn take_over(bin_dir: &Path, data_dir: &Path, owner: Option<OsUser>) -> Result<(), PgError> {
    let mut command = server_command(&bin_dir.join("pg_ctl"), owner);
    command
        .arg("-D")
        .arg(data_dir)
        .args(["stop", "-m", "fast", "-w", "-t", PG_CTL_TIMEOUT_SECONDS]);
    let stopped = run(command).await;
    if server_running(bin_dir, data_dir, owner).await? {
        return match stopped {
            Err(error) => Err(error),
            Ok(()) => Err(PgError::AlreadyRunning { data_dir: data_dir.to_path_buf() }),
        };
    }
    Ok(())
}

/// What stops the server (and deletes a throwaway root) if we go away without `stop`.
fn arm_reaper(
    bin_dir: &Path,
    data_dir: &Path,
    throwaway_root: Option<&Path>,
    owner: Option<OsUser>,
) -> Result<Reaper, PgError> {
    let pg_ctl = bin_dir.join("pg_ctl");
    match throwaway_root {
        None => Reaper::arm(
            r#""$1" -D "$2" stop -m fast -w -t 120"#,
            &[pg_ctl.as_os_str(), data_dir.as_os_str()],
            owner,
        ),
        Some(root) => Reaper::arm(
            r#""$1" -D "$2" stop -m immediate -w -t 120; rm -rf -- "$3""#,
            &[pg_ctl.as_os_str(), data_dir.as_os_str(), root.as_os_str()],
            owner,
        ),
    }
}

/// The superuser's password: in URLs, never in debug output or logs.
struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"***\"")
    }
}

/// fsync choice, then the caller's settings; names checked so the settings file stays valid.
fn settings_for(opts: &ClusterOptions) -> Result<Vec<(String, String)>, PgError> {
    let mut settings = Vec::new();
    if !opts.fsync {
        // Only what an OS crash would need; committed transactions still reach the kernel
        // before commit returns, so a server crash (immediate stop) loses nothing.
        settings.push(("fsync".to_owned(), "off".to_owned()));
        settings.push(("full_page_writes".to_owned(), "off".to_owned()));
    }
    for (name, value) in &opts.extra_settings {
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
        if !valid {
            return Err(PgError::InvalidSetting { name: name.clone() });
        }
        settings.push((name.clone(), value.clone()));
    }
    Ok(settings)
}

/// Create the directory if needed, make it absolute, owned by the server's user, mode 0700.
fn prepare_data_dir(data_dir: &Path, owner: Option<OsUser>) -> Result<PathBuf, PgError> {
    std::fs::create_dir_all(data_dir)
        .map_err(|e| PgError::io(format!("create {}", data_dir.display()), e))?;
    let data_dir = std::fs::canonicalize(data_dir)
        .map_err(|e| PgError::io(format!("resolve {}", data_dir.display()), e))?;
    if let Some(owner) = owner
        && let Some(closed_dir) = data_dir
            .ancestors()
            .skip(1)
            .find(|dir| !owner.may_enter(dir))
            .map(Path::to_path_buf)
    {
        return Err(PgError::DataDirUnreachable {
            data_dir,
            closed_dir,
        });
    }
    os_user::hand_over(&data_dir, owner)?;
    std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| PgError::io(format!("chmod 0700 {}", data_dir.display()), e))?;
    Ok(data_dir)
}

/// `initdb` with a generated superuser password, password authentication, UTF8 and C collation
/// (byte order: the same everywhere, no dependence on installed locales).
async fn init_cluster(
    bin_dir: &Path,
    data_dir: &Path,
    owner: Option<OsUser>,
    fsync: bool,
) -> Result<(), PgError> {
    let password = random_hex::<16>()?; // 128 bits
    let password_file = tempfile::NamedTempFile::new()
        .map_err(|e| PgError::io("create initdb password file", e))?;
    std::fs::write(password_file.path(), &password)
        .map_err(|e| PgError::io("write initdb password file", e))?;
    os_user::hand_over(password_file.path(), owner)?;

    let mut command = server_command(&bin_dir.join("initdb"), owner);
    command
        .arg("-D")
        .arg(data_dir)
        .args([
            "-U",
            SUPERUSER,
            "--auth=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
        ])
        .arg(format!("--pwfile={}", password_file.path().display()));
    if !fsync {
        command.arg("--no-sync");
    }
    run(command).await?;

    let path = data_dir.join(PASSWORD_FILE);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| PgError::io(format!("create {}", path.display()), e))?;
    file.write_all(password.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| PgError::io(format!("write {}", path.display()), e))?;
    os_user::hand_over(&path, owner)
}

/// Make postgresql.conf include our settings file (once).
fn include_settings_file(data_dir: &Path) -> Result<(), PgError> {
    let path = data_dir.join("postgresql.conf");
    let include = format!("include_if_exists = '{SETTINGS_FILE}'");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| PgError::io(format!("read {}", path.display()), e))?;
    if text.lines().any(|line| line.trim() == include) {
        return Ok(());
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .map_err(|e| PgError::io(format!("open {}", path.display()), e))?;
    writeln!(
        file,
        "\n# Settings managed by chipledger-postgres.\n{include}"
    )
    .map_err(|e| PgError::io(format!("append to {}", path.display()), e))
}

/// `N` random bytes from the kernel, as hex (no escaping needed anywhere).
pub(crate) fn random_hex<const N: usize>() -> Result<String, PgError> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| std::io::Read::read_exact(&mut random, &mut bytes))
        .map_err(|e| PgError::io("read /dev/urandom", e))?;
    Ok(bytes
        .iter()
        .fold(String::with_capacity(32), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        }))
}

pub(crate) fn free_port() -> Result<u16, PgError> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|e| PgError::io("pick a free TCP port", e))
}

/// A server tool run as the server's user, from `/` (root's home may be closed to it).
fn server_command(program: &Path, owner: Option<OsUser>) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .env("LC_ALL", "C")
        // Spares initdb its search of the time zone database; the server logs in UTC.
        .env("TZ", "Etc/UTC");
    if let Some(owner) = owner {
        command.uid(owner.uid).gid(owner.gid);
    }
    command
}

async fn run(mut command: Command) -> Result<(), PgError> {
    let description = format!("{:?}", command.as_std());
    let output = command
        .output()
        .await
        .map_err(|e| PgError::io(format!("run {description}"), e))?;
    if output.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Err(PgError::Command {
        command: description,
        status: output.status.to_string(),
        output: tail(&text),
    })
}

fn tail_of_file(path: &Path) -> String {
    std::fs::read(path)
        .map(|bytes| tail(&String::from_utf8_lossy(&bytes)))
        .unwrap_or_else(|e| format!("(cannot read {}: {e})", path.display()))
}

fn tail(text: &str) -> String {
    let start = text.len().saturating_sub(ERROR_OUTPUT_BYTES);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    text[start..].to_owned()
}
