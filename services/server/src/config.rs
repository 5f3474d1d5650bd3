//! Configuration of `chipledgerd`: a TOML file, overridden by environment variables, overridden
//! by command-line flags. Everything has a safe default so that `chipledgerd` alone runs a local
//! development server on 127.0.0.1 with its own embedded PostgreSQL.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chipledger_rules::Role;
use clap::Parser;
use serde::Deserialize;

pub const DEFAULT_LISTEN: &str = "127.0.0.1:50051";
pub const DEFAULT_DATA_DIR: &str = "./data";
pub const DEFAULT_PROPERTY_ID: &str = "default";

/// Bounds (TigerStyle: everything that grows has an explicit limit).
pub const MAX_BATCH_COMMANDS_LIMIT: u32 = 10_000;
pub const MAX_PAGE_SIZE_LIMIT: u32 = 10_000;
pub const MAX_CONFLICT_RETRIES_LIMIT: u32 = 20;
/// Seconds between signed checkpoints, by default and at most (one a day).
pub const DEFAULT_CHECKPOINT_INTERVAL_SECONDS: u64 = 300;
pub const MAX_CHECKPOINT_INTERVAL_SECONDS: u64 = 86_400;
/// In the data directory (embedded mode): the checkpoint signing key, the kept checkpoints and
/// the application role's password, each made at the first start.
pub const EMBEDDED_CHECKPOINT_KEY: &str = "checkpoint.key";
pub const EMBEDDED_CHECKPOINT_DIR: &str = "checkpoints";
pub const EMBEDDED_APP_PASSWORD: &str = "chipledger_app.password";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid config file {path}: {source}")]
    Parse { path: PathBuf, source: toml::de::Error },
    #[error("invalid {field}: {message}")]
    Invalid { field: &'static str, message: String },
}

fn invalid(field: &'static str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { field, message: message.into() }
}

/// Command-line flags; each may also come from the environment variable named.
#[derive(Debug, Clone, Default, Parser)]
#[command(name = "chipledgerd", version, about = "The chip ledger gRPC service")]
pub struct Flags {
    /// TOML configuration file.
    #[arg(long, env = "CHIPLEDGER_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    /// Address to listen on (default 127.0.0.1:50051).
    #[arg(long, env = "CHIPLEDGER_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Data directory of the embedded PostgreSQL (default ./data); unused with a database URL.
    #[arg(long, env = "CHIPLEDGER_DATA_DIR", global = true)]
    pub data_dir: Option<PathBuf>,
    /// PostgreSQL URL; without it chipledgerd runs its own embedded PostgreSQL.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, global = true)]
    pub database_url: Option<String>,
    /// Property (tenant) id used when a request leaves it empty.
    #[arg(long, env = "CHIPLEDGER_PROPERTY_ID")]
    pub property_id: Option<String>,
    /// Only run the migrations, then exit (the same as `chipledgerd migrate`).
    #[arg(long)]
    pub migrate_only: bool,
    #[command(subcommand)]
    pub command: Option<DaemonCommand>,
}

/// What `chipledgerd` does other than serve.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum DaemonCommand {
    /// The admin step: create the roles, run the migrations and install the functions on the
    /// database of `--database-url` (an admin's URL: a member of chipledger_owner that may create
    /// roles), under an advisory lock; then exit. The service itself runs as chipledger_app.
    Migrate {
        /// Also let chipledger_app log in with the password in this file (first line).
        #[arg(long, env = "CHIPLEDGER_APP_PASSWORD_FILE")]
        app_password_file: Option<PathBuf>,
    },
}

/// The TOML file. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub listen: Option<SocketAddr>,
    pub data_dir: Option<PathBuf>,
    pub database_url: Option<String>,
    pub property_id: Option<String>,
    pub shutdown_grace_seconds: Option<u64>,
    #[serde(default)]
    pub gaming_day: GamingDayFile,
    #[serde(default)]
    pub embedded_postgres: EmbeddedPostgresFile,
    pub tls: Option<TlsFile>,
    #[serde(default)]
    pub auth: AuthFile,
    #[serde(default)]
    pub limits: LimitsFile,
    #[serde(default)]
    pub aml: AmlFile,
    #[serde(default)]
    pub checkpoints: CheckpointsFile,
}

/// Signed checkpoints (docs/OPERATIONS.md, "Checkpoints and key management").
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsFile {
    /// Ed25519 private key, PKCS#8 PEM. Embedded mode: `<data_dir>/checkpoint.key`, made at the
    /// first start. With a database URL and no key file, nothing is signed (a warning says so).
    pub key_file: Option<PathBuf>,
    /// Write-once directory the signed checkpoints go to. Embedded: `<data_dir>/checkpoints`.
    pub dir: Option<PathBuf>,
    /// Seconds between checkpoints (1..=86400, default 300).
    pub interval_seconds: Option<u64>,
    /// Public keys (hex) the server signed with before a rotation: verification still names
    /// checkpoints they signed as this server's.
    #[serde(default)]
    pub previous_public_keys: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GamingDayFile {
    /// Local time the gaming day starts, "HH:MM" (R-CHIP-6, default "06:00").
    pub cutoff: Option<String>,
    /// Offset of the property's local time from UTC, in minutes.
    pub utc_offset_minutes: Option<i32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddedPostgresFile {
    /// TCP port on 127.0.0.1; unset picks a free port at each start.
    pub port: Option<u16>,
    /// Server binaries; unset means env CHIPLEDGER_PG_BIN, else /usr/lib/postgresql/15/bin.
    pub bin_dir: Option<PathBuf>,
    pub fsync: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsFile {
    /// Server certificate chain (PEM).
    pub cert: PathBuf,
    /// Server private key (PEM).
    pub key: PathBuf,
    /// CA that signs client certificates; set it to require mutual TLS.
    pub client_ca: Option<PathBuf>,
    /// With `client_ca`: also accept clients without a certificate (they then need a token).
    #[serde(default)]
    pub client_auth_optional: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthFile {
    /// Plain local development only: the role given to callers with no credentials. Refused
    /// unless TLS is off and the listen address is a loopback address.
    pub dev_anonymous_role: Option<String>,
    #[serde(default)]
    pub principals: Vec<PrincipalFile>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrincipalFile {
    /// The actor id recorded on every event this principal writes.
    pub id: String,
    /// dealer, floor_supervisor, cage, auditor, admin or system.
    pub role: String,
    /// Client certificate names (subject CN or a DNS/email SAN) that authenticate as this principal.
    #[serde(default)]
    pub cert_names: Vec<String>,
    /// Bearer tokens (`authorization: Bearer <token>`) for local/dev use.
    #[serde(default)]
    pub tokens: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    pub max_batch_commands: Option<u32>,
    pub max_page_size: Option<u32>,
    pub conflict_retries: Option<u32>,
}

/// Cash-reporting thresholds (R-AUDIT-4); unset keys keep the rules core's defaults
/// ($3,000 MTL, $10,000 CTR, 15 days to file).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmlFile {
    pub mtl_over_cents: Option<i64>,
    pub ctr_over_cents: Option<i64>,
    pub ctr_due_days: Option<u32>,
}

/// The resolved configuration the server runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    pub database_url: Option<String>,
    pub property_id: String,
    pub migrate_only: bool,
    pub shutdown_grace: Duration,
    pub gaming_day: GamingDayClock,
    pub embedded_postgres: EmbeddedPostgres,
    pub tls: Option<TlsFile>,
    pub dev_anonymous_role: Option<Role>,
    pub principals: Vec<PrincipalConfig>,
    pub limits: Limits,
    pub aml: chipledger_rules::AmlThresholds,
    pub checkpoints: CheckpointSettings,
    /// `chipledgerd migrate --app-password-file`.
    pub app_password_file: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointSettings {
    pub key_file: Option<PathBuf>,
    /// Make the key file when it is missing (embedded mode).
    pub generate_key: bool,
    pub dir: Option<PathBuf>,
    pub interval: Duration,
    pub previous_public_keys: Vec<[u8; 32]>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedPostgres {
    pub port: Option<u16>,
    pub bin_dir: Option<PathBuf>,
    pub fsync: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrincipalConfig {
    pub id: String,
    pub role: Role,
    pub cert_names: Vec<String>,
    pub tokens: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_batch_commands: u32,
    pub max_page_size: u32,
    pub conflict_retries: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_batch_commands: 1000, max_page_size: 1000, conflict_retries: 3 }
    }
}

/// Computes the gaming day of an instant (R-CHIP-6): one cutoff for the whole property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GamingDayClock {
    pub cutoff_minutes: i32,
    pub utc_offset_minutes: i32,
}

impl Default for GamingDayClock {
    fn default() -> GamingDayClock {
        GamingDayClock { cutoff_minutes: 6 * 60, utc_offset_minutes: 0 }
    }
}

impl GamingDayClock {
    /// "YYYY-MM-DD" of the gaming day containing `at_unix_ms`: local time minus the cutoff.
    pub fn gaming_day(&self, at_unix_ms: i64) -> String {
        let shift_ms = i64::from(self.utc_offset_minutes - self.cutoff_minutes) * 60_000;
        let day = (at_unix_ms + shift_ms).div_euclid(86_400_000);
        let date = time::Date::from_julian_day(UNIX_EPOCH_JULIAN_DAY + day as i32)
            .unwrap_or(time::Date::MIN);
        format!("{:04}-{:02}-{:02}", date.year(), u8::from(date.month()), date.day())
    }
}

const UNIX_EPOCH_JULIAN_DAY: i32 = 2_440_588;

/// Parses a role name as written in configuration.
pub fn parse_role(name: &str) -> Result<Role, ConfigError> {
    match name.trim().to_ascii_lowercase().replace('-', "_").as_str() {
        "dealer" => Ok(Role::Dealer),
        "floor_supervisor" | "floor" | "supervisor" => Ok(Role::FloorSupervisor),
        "cage" => Ok(Role::Cage),
        "auditor" => Ok(Role::Auditor),
        "admin" => Ok(Role::Admin),
        "system" => Ok(Role::System),
        other => Err(invalid("role", format!("unknown role {other:?}"))),
    }
}

fn parse_cutoff(text: &str) -> Result<i32, ConfigError> {
    let bad = || invalid("gaming_day.cutoff", format!("{text:?} is not HH:MM"));
    let (hours, minutes) = text.split_once(':').ok_or_else(bad)?;
    let hours: i32 = hours.parse().map_err(|_| bad())?;
    let minutes: i32 = minutes.parse().map_err(|_| bad())?;
    if !(0..24).contains(&hours) || !(0..60).contains(&minutes) {
        return Err(bad());
    }
    Ok(hours * 60 + minutes)
}

impl Config {
    /// Reads the file named by `--config` (if any) and merges flags over it.
    pub fn load(flags: Flags) -> Result<Config, ConfigError> {
        let file = match &flags.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        Config::resolve(flags, file)
    }

    /// Flags (and their environment variables) win over the file; the file wins over defaults.
    pub fn resolve(flags: Flags, file: FileConfig) -> Result<Config, ConfigError> {
        let listen = match flags.listen.or(file.listen) {
            Some(listen) => listen,
            None => DEFAULT_LISTEN.parse().map_err(|_| invalid("listen", DEFAULT_LISTEN))?,
        };
        let property_id = flags
            .property_id
            .or(file.property_id)
            .unwrap_or_else(|| DEFAULT_PROPERTY_ID.to_string());
        if property_id.is_empty() || property_id.len() > 64 {
            return Err(invalid("property_id", "must be 1 to 64 characters"));
        }
        let gaming_day = GamingDayClock {
            cutoff_minutes: match &file.gaming_day.cutoff {
                Some(text) => parse_cutoff(text)?,
                None => GamingDayClock::default().cutoff_minutes,
            },
            utc_offset_minutes: file.gaming_day.utc_offset_minutes.unwrap_or(0),
        };
        if gaming_day.utc_offset_minutes.abs() > 14 * 60 {
            return Err(invalid("gaming_day.utc_offset_minutes", "must be within +-14 hours"));
        }
        let embedded_postgres = EmbeddedPostgres {
            port: file.embedded_postgres.port,
            bin_dir: file.embedded_postgres.bin_dir,
            fsync: file.embedded_postgres.fsync.unwrap_or(true),
        };
        let defaults = Limits::default();
        let limits = Limits {
            max_batch_commands: file.limits.max_batch_commands.unwrap_or(defaults.max_batch_commands),
            max_page_size: file.limits.max_page_size.unwrap_or(defaults.max_page_size),
            conflict_retries: file.limits.conflict_retries.unwrap_or(defaults.conflict_retries),
        };
        check_bound("limits.max_batch_commands", limits.max_batch_commands, MAX_BATCH_COMMANDS_LIMIT)?;
        check_bound("limits.max_page_size", limits.max_page_size, MAX_PAGE_SIZE_LIMIT)?;
        if limits.conflict_retries > MAX_CONFLICT_RETRIES_LIMIT {
            return Err(invalid("limits.conflict_retries", format!("at most {MAX_CONFLICT_RETRIES_LIMIT}")));
        }

        let principals = resolve_principals(&file.auth.principals)?;
        let mut dev_anonymous_role = file.auth.dev_anonymous_role.as_deref().map(parse_role).transpose()?;
        // A server started with no auth configuration at all, plain and on loopback, is a
        // developer's local server: its callers act as admin so that the demo and the CLI work
        // out of the box. Any principal, any TLS or any non-loopback address turns this off.
        if dev_anonymous_role.is_none()
            && principals.is_empty()
            && file.tls.is_none()
            && listen.ip().is_loopback()
        {
            dev_anonymous_role = Some(Role::Admin);
        }
        if dev_anonymous_role.is_some() && (file.tls.is_some() || !listen.ip().is_loopback()) {
            return Err(invalid(
                "auth.dev_anonymous_role",
                "anonymous access is only for plain (no TLS) loopback development servers",
            ));
        }
        if let Some(tls) = &file.tls
            && tls.client_auth_optional
            && tls.client_ca.is_none()
        {
            return Err(invalid("tls.client_auth_optional", "needs tls.client_ca"));
        }

        let aml_defaults = chipledger_rules::AmlThresholds::default();
        let aml = chipledger_rules::AmlThresholds {
            mtl_over_cents: file.aml.mtl_over_cents.unwrap_or(aml_defaults.mtl_over_cents),
            ctr_over_cents: file.aml.ctr_over_cents.unwrap_or(aml_defaults.ctr_over_cents),
            ctr_due_days: file.aml.ctr_due_days.unwrap_or(aml_defaults.ctr_due_days),
        };
        if aml.mtl_over_cents <= 0 || aml.ctr_over_cents <= 0 || aml.ctr_due_days == 0 {
            return Err(invalid("aml", "thresholds and ctr_due_days must be positive"));
        }
        let data_dir = flags.data_dir.or(file.data_dir).unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        let database_url = flags.database_url.or(file.database_url).filter(|url| !url.is_empty());
        let checkpoints = resolve_checkpoints(&file.checkpoints, &data_dir, database_url.is_none())?;
        let (migrate, app_password_file) = match flags.command {
            Some(DaemonCommand::Migrate { app_password_file }) => (true, app_password_file),
            None => (false, None),
        };
        Ok(Config {
            listen,
            data_dir,
            database_url,
            property_id,
            migrate_only: flags.migrate_only || migrate,
            app_password_file,
            checkpoints,
            shutdown_grace: Duration::from_secs(file.shutdown_grace_seconds.unwrap_or(30)),
            gaming_day,
            embedded_postgres,
            tls: file.tls,
            dev_anonymous_role,
            principals,
            limits,
            aml,
        })
    }

    /// True when callers may connect without any credentials (plain local development).
    pub fn is_plain_dev(&self) -> bool {
        self.tls.is_none() && self.dev_anonymous_role.is_some()
    }
}

fn resolve_checkpoints(file: &CheckpointsFile, data_dir: &Path, embedded: bool) -> Result<CheckpointSettings, ConfigError> {
    let interval_seconds = file.interval_seconds.unwrap_or(DEFAULT_CHECKPOINT_INTERVAL_SECONDS);
    if interval_seconds == 0 || interval_seconds > MAX_CHECKPOINT_INTERVAL_SECONDS {
        return Err(invalid(
            "checkpoints.interval_seconds",
            format!("must be 1..={MAX_CHECKPOINT_INTERVAL_SECONDS}, got {interval_seconds}"),
        ));
    }
    let previous_public_keys = file
        .previous_public_keys
        .iter()
        .map(|text| {
            let mut key = [0u8; 32];
            hex::decode_to_slice(text.trim(), &mut key)
                .map_err(|_| invalid("checkpoints.previous_public_keys", format!("{text:?} is not 32 bytes of hex")))?;
            Ok(key)
        })
        .collect::<Result<_, ConfigError>>()?;
    Ok(CheckpointSettings {
        key_file: file.key_file.clone().or_else(|| embedded.then(|| data_dir.join(EMBEDDED_CHECKPOINT_KEY))),
        generate_key: embedded && file.key_file.is_none(),
        dir: file.dir.clone().or_else(|| embedded.then(|| data_dir.join(EMBEDDED_CHECKPOINT_DIR))),
        interval: Duration::from_secs(interval_seconds),
        previous_public_keys,
    })
}

fn check_bound(field: &'static str, value: u32, max: u32) -> Result<(), ConfigError> {
    if value == 0 || value > max {
        return Err(invalid(field, format!("must be 1..={max}, got {value}")));
    }
    Ok(())
}

fn resolve_principals(files: &[PrincipalFile]) -> Result<Vec<PrincipalConfig>, ConfigError> {
    let mut principals = Vec::with_capacity(files.len());
    let mut seen_names = std::collections::HashSet::new();
    let mut seen_tokens = std::collections::HashSet::new();
    for file in files {
        if file.id.is_empty() || file.id.len() > 64 {
            return Err(invalid("auth.principals.id", "must be 1 to 64 characters"));
        }
        for name in &file.cert_names {
            if !seen_names.insert(name.clone()) {
                return Err(invalid("auth.principals.cert_names", format!("{name:?} given twice")));
            }
        }
        for token in &file.tokens {
            if token.len() < 16 {
                return Err(invalid("auth.principals.tokens", "tokens must be at least 16 characters"));
            }
            if !seen_tokens.insert(token.clone()) {
                return Err(invalid("auth.principals.tokens", format!("a token of {} is given twice", file.id)));
            }
        }
        principals.push(PrincipalConfig {
            id: file.id.clone(),
            role: parse_role(&file.role)?,
            cert_names: file.cert_names.clone(),
            tokens: file.tokens.clone(),
        });
    }
    Ok(principals)
}

fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
    toml::from_str(&text).map_err(|source| ConfigError::Parse { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> FileConfig {
        toml::from_str(text).expect("valid toml")
    }

    #[test]
    fn defaults_give_a_local_server_with_embedded_postgres() {
        let config = Config::resolve(Flags::default(), FileConfig::default()).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:50051");
        assert_eq!(config.data_dir, PathBuf::from("./data"));
        assert_eq!(config.database_url, None);
        assert_eq!(config.property_id, "default");
        assert_eq!(config.limits, Limits::default());
        assert_eq!(config.gaming_day.cutoff_minutes, 360);
        assert!(config.principals.is_empty());
    }

    #[test]
    fn aml_thresholds_come_from_the_file_and_unset_keys_keep_the_defaults() {
        let config = Config::resolve(Flags::default(), parse("[aml]\nctr_over_cents = 500000\n")).unwrap();
        let defaults = chipledger_rules::AmlThresholds::default();
        assert_eq!(config.aml.ctr_over_cents, 500_000);
        assert_eq!(config.aml.mtl_over_cents, defaults.mtl_over_cents);
        assert_eq!(config.aml.ctr_due_days, defaults.ctr_due_days);
        assert!(Config::resolve(Flags::default(), parse("[aml]\nmtl_over_cents = 0\n")).is_err());
    }

    #[test]
    fn flags_win_over_the_file() {
        let file = parse(
            r#"
            listen = "127.0.0.1:7000"
            data_dir = "/var/lib/chipledger"
            database_url = "postgres://file"
            "#,
        );
        let flags = Flags {
            listen: Some("0.0.0.0:9000".parse().unwrap()),
            database_url: Some("postgres://flag".into()),
            ..Flags::default()
        };
        let config = Config::resolve(flags, file).unwrap();
        assert_eq!(config.listen.to_string(), "0.0.0.0:9000");
        assert_eq!(config.database_url.as_deref(), Some("postgres://flag"));
        assert_eq!(config.data_dir, PathBuf::from("/var/lib/chipledger"));
    }

    #[test]
    fn full_file_parses_principals_tls_and_limits() {
        let file = parse(
            r#"
            listen = "0.0.0.0:50051"
            property_id = "casino-1"
            shutdown_grace_seconds = 5
            [gaming_day]
            cutoff = "04:30"
            utc_offset_minutes = -300
            [embedded_postgres]
            port = 6000
            fsync = false
            [tls]
            cert = "server.pem"
            key = "server.key"
            client_ca = "ca.pem"
            [limits]
            max_batch_commands = 50
            conflict_retries = 5
            [[auth.principals]]
            id = "anna"
            role = "dealer"
            cert_names = ["anna.dealers.example"]
            [[auth.principals]]
            id = "olga"
            role = "floor-supervisor"
            tokens = ["0123456789abcdef0123"]
            "#,
        );
        let config = Config::resolve(Flags::default(), file).unwrap();
        assert_eq!(config.property_id, "casino-1");
        assert_eq!(config.shutdown_grace, Duration::from_secs(5));
        assert_eq!(config.gaming_day, GamingDayClock { cutoff_minutes: 270, utc_offset_minutes: -300 });
        assert_eq!(config.embedded_postgres.port, Some(6000));
        assert!(!config.embedded_postgres.fsync);
        assert_eq!(config.limits.max_batch_commands, 50);
        assert_eq!(config.limits.max_page_size, 1000);
        assert_eq!(config.limits.conflict_retries, 5);
        assert_eq!(config.principals.len(), 2);
        assert_eq!(config.principals[0].role, Role::Dealer);
        assert_eq!(config.principals[1].role, Role::FloorSupervisor);
        assert!(config.tls.as_ref().unwrap().client_ca.is_some());
    }

    #[test]
    fn unknown_keys_and_roles_are_refused() {
        assert!(toml::from_str::<FileConfig>("lisen = \"127.0.0.1:1\"").is_err());
        let file = parse("[[auth.principals]]\nid = \"x\"\nrole = \"croupier\"\n");
        assert!(matches!(
            Config::resolve(Flags::default(), file),
            Err(ConfigError::Invalid { field: "role", .. })
        ));
    }

    #[test]
    fn anonymous_access_only_on_plain_loopback() {
        let ok = parse("[auth]\ndev_anonymous_role = \"admin\"\n");
        assert!(Config::resolve(Flags::default(), ok).unwrap().is_plain_dev());

        let public = parse("listen = \"0.0.0.0:50051\"\n[auth]\ndev_anonymous_role = \"admin\"\n");
        assert!(Config::resolve(Flags::default(), public).is_err());

        let tls = parse(
            "[tls]\ncert = \"c\"\nkey = \"k\"\n[auth]\ndev_anonymous_role = \"auditor\"\n",
        );
        assert!(Config::resolve(Flags::default(), tls).is_err());
    }

    #[test]
    fn limits_are_bounded_and_tokens_unique_and_long() {
        let zero = parse("[limits]\nmax_page_size = 0\n");
        assert!(Config::resolve(Flags::default(), zero).is_err());
        let huge = parse("[limits]\nmax_batch_commands = 1000000\n");
        assert!(Config::resolve(Flags::default(), huge).is_err());
        let short = parse("[[auth.principals]]\nid = \"x\"\nrole = \"admin\"\ntokens = [\"short\"]\n");
        assert!(Config::resolve(Flags::default(), short).is_err());
        let twice = parse(
            "[[auth.principals]]\nid = \"a\"\nrole = \"admin\"\ntokens = [\"0123456789abcdef\"]\n\
             [[auth.principals]]\nid = \"b\"\nrole = \"dealer\"\ntokens = [\"0123456789abcdef\"]\n",
        );
        assert!(Config::resolve(Flags::default(), twice).is_err());
    }

    #[test]
    fn bad_cutoff_is_refused() {
        for cutoff in ["6", "25:00", "06:60", "x:y"] {
            let file = parse(&format!("[gaming_day]\ncutoff = \"{cutoff}\"\n"));
            assert!(Config::resolve(Flags::default(), file).is_err(), "{cutoff}");
        }
    }

    #[test]
    fn r_chip_6_gaming_day_starts_at_the_cutoff() {
        let clock = GamingDayClock::default(); // 06:00 UTC
        // 2024-03-10T05:59:59.999Z belongs to the gaming day of March 9.
        let before = 1_710_050_399_999;
        assert_eq!(clock.gaming_day(before), "2024-03-09");
        assert_eq!(clock.gaming_day(before + 1), "2024-03-10");
        // Local time UTC-5: 06:00 local is 11:00 UTC.
        let east_coast = GamingDayClock { cutoff_minutes: 360, utc_offset_minutes: -300 };
        let ten_fifty_nine_utc = 1_710_068_399_000; // 2024-03-10T10:59:59Z
        assert_eq!(east_coast.gaming_day(ten_fifty_nine_utc), "2024-03-09");
        assert_eq!(east_coast.gaming_day(ten_fifty_nine_utc + 1000), "2024-03-10");
    }
}
