//! Configuration of `chipledgerd`: a TOML file, overridden by environment variables, overridden
//! by command-line flags. Everything has a safe default so that `chipledgerd` alone runs a local
//! development server on 127.0.0.1 with its own embedded PostgreSQL.
//!
//! Tenancy: a server serves the properties (tenants) it is configured with, each with its own
//! gaming day (IANA time zone and cutoff, R-CHIP-6), cash thresholds (R-AUDIT-4), currency and
//! list of game keys; every principal names the properties it may act on.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chipledger_proto::approval::DEV_APPROVERS;
use chipledger_proto::role_from_name;
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
/// Bound on configured properties and on game keys per property.
pub const MAX_PROPERTIES: usize = 1_000;
pub const MAX_GAME_KEYS: usize = 500;
/// A principal's property list entry meaning every configured property.
pub const ALL_PROPERTIES: &str = "*";
/// Currency of a property that does not name one (ISO 4217).
pub const DEFAULT_CURRENCY: &str = "USD";
/// File under the data directory holding the approval signing key when none is configured.
pub const DEFAULT_APPROVAL_KEY_FILE: &str = "approval-ed25519.key";
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
    /// Also serve gRPC health alone, plaintext, on this address (Kubernetes probes).
    #[arg(long, env = "CHIPLEDGER_HEALTH_LISTEN")]
    pub health_listen: Option<SocketAddr>,
    /// Serve the back-office web console on this address (default: on in the development mode,
    /// on loopback port 50080; off otherwise).
    #[arg(long, env = "CHIPLEDGER_CONSOLE_LISTEN")]
    pub console_listen: Option<SocketAddr>,
    /// Data directory of the embedded PostgreSQL (default ./data); unused with a database URL.
    #[arg(long, env = "CHIPLEDGER_DATA_DIR", global = true)]
    pub data_dir: Option<PathBuf>,
    /// PostgreSQL URL; without it chipledgerd runs its own embedded PostgreSQL.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, global = true)]
    pub database_url: Option<String>,
    /// A hot standby of the database of `--database-url` (the application role's URL), for
    /// auditor and report reads ([reads] bounds how stale they may be).
    #[arg(long, env = "CHIPLEDGER_READ_DATABASE_URL", hide_env_values = true)]
    pub read_database_url: Option<String>,
    /// Property (tenant) id used when a request leaves it empty.
    #[arg(long, env = "CHIPLEDGER_PROPERTY_ID")]
    pub property_id: Option<String>,
    /// Only run the migrations, then exit (the same as `chipledgerd migrate`).
    #[arg(long)]
    pub migrate_only: bool,
    /// Accept bearer tokens over plaintext on a non-loopback address (tokens then cross the
    /// network in clear: for a network you control end to end, never the casino floor).
    #[arg(long, env = "CHIPLEDGER_ALLOW_PLAINTEXT_TOKENS")]
    pub allow_plaintext_tokens: bool,
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
    /// Partitions of the log on the database of `--database-url` (an admin's URL, as for
    /// `migrate`): list them, make the months ahead, archive the oldest one past the retention
    /// (signed with the checkpoint key), verify an archive, drop an archived partition.
    Partitions {
        #[command(subcommand)]
        action: PartitionsAction,
    },
}

/// `chipledgerd partitions ...` (docs/OPERATIONS.md, "Partitions and archive").
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum PartitionsAction {
    /// Every partition, oldest first, with its state (attached, archived, dropped).
    List,
    /// Make the partitions up to `[partitions] months_ahead` months after the current one.
    Ensure,
    /// Export, sign, record and detach the partition LABEL (`YYYY-MM`, or `before-YYYY-MM`).
    Archive {
        label: String,
        /// Directory the export and its signed digest go to (default `[partitions] archive_dir`).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Recompute an archive's digest from its file, check the signature and the live chain.
    Verify { label: String },
    /// Drop the tables of an archived partition, once its archive verifies.
    Drop { label: String },
}

/// The TOML file. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub listen: Option<SocketAddr>,
    /// gRPC health alone, plaintext, on a second address (for probes).
    pub health_listen: Option<SocketAddr>,
    /// The back-office web console.
    #[serde(default)]
    pub console: ConsoleFile,
    pub data_dir: Option<PathBuf>,
    pub database_url: Option<String>,
    /// A hot standby of `database_url`, for reads (see [`ReadsFile`]).
    pub read_database_url: Option<String>,
    pub property_id: Option<String>,
    pub shutdown_grace_seconds: Option<u64>,
    /// The default property's currency (ISO 4217, default USD), when it has no `[[properties]]`
    /// entry of its own.
    pub currency: Option<String>,
    /// The default property's game keys, when it has no `[[properties]]` entry of its own.
    pub game_keys: Option<Vec<String>>,
    /// Properties (tenants) with their own settings; the default property may be one of them.
    #[serde(default)]
    pub properties: Vec<PropertyFile>,
    #[serde(default)]
    pub approvals: ApprovalsFile,
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
    #[serde(default)]
    pub partitions: PartitionsFile,
    #[serde(default)]
    pub reads: ReadsFile,
    /// Property shards: which database holds which properties (the others are in
    /// `database_url`). Reloaded with the properties on SIGHUP.
    #[serde(default)]
    pub shards: Vec<ShardFile>,
}

/// `[reads]`: reads served from a hot standby.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadsFile {
    /// The most a standby read may lag the primary, in milliseconds (default 5000): a standby
    /// further behind is passed over for the primary. A caller may ask for less, never more.
    pub max_staleness_ms: Option<u64>,
}

/// `[[shards]]`: a database holding the chains of some properties.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardFile {
    pub name: String,
    /// The application role's URL of the shard's primary.
    pub database_url: String,
    /// Its hot standby, for reads.
    pub read_database_url: Option<String>,
    /// The properties whose chains live there (each in one shard at most).
    pub properties: Vec<String>,
}

/// Partitions of the log and their archive (docs/OPERATIONS.md, "Partitions and archive").
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionsFile {
    /// Months of partitions kept ready after the current one (0..=120, default 3).
    pub months_ahead: Option<i32>,
    /// Months a partition must be past before it may be archived (at least 1, default 84).
    pub retention_months: Option<i32>,
    /// Where `partitions archive` writes (default `<data_dir>/archive`).
    pub archive_dir: Option<PathBuf>,
}

/// Resolved `[partitions]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionSettings {
    pub months_ahead: i32,
    pub retention_months: i32,
    pub archive_dir: PathBuf,
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
    /// IANA time zone of the property ("America/Los_Angeles"): the cutoff stays at the same
    /// local time across daylight-saving changes. Default UTC.
    pub time_zone: Option<String>,
    /// A fixed offset from UTC in minutes, for a property whose clocks never change; prefer
    /// `time_zone`. Not together with it.
    pub utc_offset_minutes: Option<i32>,
}

/// One `[[properties]]` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropertyFile {
    /// 1 to 64 characters of `A-Z a-z 0-9 _ . -` (the form of table ids).
    pub id: String,
    /// ISO 4217 code of the property's money (default USD).
    pub currency: Option<String>,
    /// The room's games and limits as its menus name them ("NLHE 100/200", ...): a table may
    /// only be opened with one of them. (The re-buy wait's room-wide scope, R-REBUY-1, is what
    /// the table plays, not this label: `TableConfig::same_game`.) Unset: any game key (a
    /// warning at start).
    pub game_keys: Option<Vec<String>>,
    #[serde(default)]
    pub gaming_day: GamingDayFile,
    #[serde(default)]
    pub aml: AmlFile,
}

/// `[approvals]`: the Ed25519 key approval tokens are signed with.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalsFile {
    /// File holding the 32-byte Ed25519 seed in hex. Replicas must share it (a token issued by
    /// one is then accepted by all). Unset: `<data dir>/approval-ed25519.key`, created on the
    /// first start. A configured file must exist.
    pub signing_key_file: Option<PathBuf>,
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
    /// Accept bearer tokens over plaintext on a non-loopback address (see the flag).
    #[serde(default)]
    pub allow_plaintext_tokens: bool,
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
    /// Properties this principal may act on; `["*"]` for every configured property. Unset:
    /// the default property only.
    #[serde(default)]
    pub properties: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    pub max_batch_commands: Option<u32>,
    pub max_page_size: Option<u32>,
    pub conflict_retries: Option<u32>,
}

/// `[console]`: the back-office web console (HTTP, TLS with the `[tls]` identity when that is
/// configured).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleFile {
    /// Address to serve it on. Unset: on in the development mode (loopback), off otherwise.
    pub listen: Option<SocketAddr>,
    /// `false` turns it off, also in the development mode.
    pub enabled: Option<bool>,
    /// Minutes a console sign-in lasts without use (default 480: a shift).
    pub session_idle_minutes: Option<u32>,
    /// The host names the console is reached by (`Host`, port aside); it answers those, IP
    /// addresses and `localhost`, and no other name (421): a page whose name a DNS rebinding
    /// points at the console gets nothing.
    pub hosts: Option<Vec<String>>,
}

/// The console's port in the development mode (beside gRPC's 50051).
pub const DEFAULT_CONSOLE_PORT: u16 = 50080;
const DEFAULT_CONSOLE_IDLE_MINUTES: u32 = 480;

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
    pub health_listen: Option<SocketAddr>,
    /// The web console's address (off: `None`) and how long a sign-in lasts idle.
    pub console_listen: Option<SocketAddr>,
    pub console_idle: Duration,
    /// `[console] hosts`, lowercase.
    pub console_hosts: Vec<String>,
    pub data_dir: PathBuf,
    pub database_url: Option<String>,
    /// The standby of `database_url`, for reads.
    pub read_database_url: Option<String>,
    /// Bound on the staleness of standby reads (a caller may ask for less).
    pub max_read_staleness: Duration,
    /// Properties kept in databases other than `database_url` (see `shards.rs`).
    pub shards: Vec<ShardConfig>,
    /// The file the configuration came from: what SIGHUP reads again.
    pub source: Option<PathBuf>,
    /// The default property (requests that leave `property_id` empty).
    pub property_id: String,
    /// Every property served, the default among them.
    pub properties: Properties,
    pub migrate_only: bool,
    pub shutdown_grace: Duration,
    pub embedded_postgres: EmbeddedPostgres,
    pub tls: Option<TlsFile>,
    pub dev_anonymous_role: Option<Role>,
    pub principals: Vec<PrincipalConfig>,
    /// Plaintext bearer tokens on a non-loopback address were explicitly allowed.
    pub plaintext_tokens_allowed: bool,
    /// Where the approval signing key is, and whether it may be created there.
    pub approval_key: ApprovalKeyFile,
    pub limits: Limits,
    pub checkpoints: CheckpointSettings,
    pub partitions: PartitionSettings,
    /// `chipledgerd partitions ...`: what to do instead of serving.
    pub partitions_action: Option<PartitionsAction>,
    /// `chipledgerd migrate --app-password-file`.
    pub app_password_file: Option<PathBuf>,
}

/// The approval signing key's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalKeyFile {
    pub path: PathBuf,
    /// True for the default path under the data directory; a configured file must exist.
    pub create_if_missing: bool,
}

/// One property (tenant) and its own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyConfig {
    pub id: String,
    pub gaming_day: GamingDayClock,
    pub aml: chipledger_rules::AmlThresholds,
    pub currency: String,
    /// `None`: any game key accepted.
    pub game_keys: Option<Vec<String>>,
}

impl PropertyConfig {
    /// A property with the defaults: gaming day at 06:00 UTC, the rules' cash thresholds, USD,
    /// any game key.
    pub fn with_defaults(id: &str) -> PropertyConfig {
        PropertyConfig {
            id: id.to_string(),
            gaming_day: GamingDayClock::default(),
            aml: chipledger_rules::AmlThresholds::default(),
            currency: DEFAULT_CURRENCY.to_string(),
            game_keys: None,
        }
    }
}

/// A property shard, checked: a name, its URLs, and properties that are configured and in no
/// other shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardConfig {
    pub name: String,
    pub database_url: String,
    pub read_database_url: Option<String>,
    pub properties: Vec<String>,
}

/// Default and largest bound on the staleness of a standby read.
pub const DEFAULT_READ_STALENESS_MS: u64 = 5_000;
pub const MAX_READ_STALENESS_MS: u64 = 3_600_000;
/// Bound on configured shards.
pub const MAX_SHARDS: usize = 256;

fn resolve_shards(files: &[ShardFile], properties: &Properties) -> Result<Vec<ShardConfig>, ConfigError> {
    if files.len() > MAX_SHARDS {
        return Err(invalid("shards", format!("at most {MAX_SHARDS}")));
    }
    let mut names = std::collections::HashSet::new();
    let mut placed: HashMap<&str, &str> = HashMap::new();
    let mut shards = Vec::with_capacity(files.len());
    for file in files {
        if !is_valid_property_id(&file.name) {
            return Err(invalid("shards.name", chipledger_rules::ID_FORM));
        }
        if !names.insert(file.name.as_str()) {
            return Err(invalid("shards.name", format!("shard {:?} is named twice", file.name)));
        }
        for url in std::iter::once(&file.database_url).chain(&file.read_database_url) {
            url.parse::<sqlx::postgres::PgConnectOptions>()
                .map_err(|error| invalid("shards.database_url", format!("shard {:?}: {error}", file.name)))?;
        }
        if file.properties.is_empty() {
            return Err(invalid("shards.properties", format!("shard {:?} holds no property", file.name)));
        }
        for property in &file.properties {
            if properties.get(property).is_none() {
                return Err(invalid(
                    "shards.properties",
                    format!("shard {:?} names {property:?}, which is not a configured property", file.name),
                ));
            }
            if let Some(other) = placed.insert(property, &file.name) {
                return Err(invalid(
                    "shards.properties",
                    format!("property {property:?} is in shard {other:?} and in shard {:?}", file.name),
                ));
            }
        }
        shards.push(ShardConfig {
            name: file.name.clone(),
            database_url: file.database_url.clone(),
            read_database_url: file.read_database_url.clone().filter(|url| !url.is_empty()),
            properties: file.properties.clone(),
        });
    }
    Ok(shards)
}

/// The configured properties by id, and which is the default.
#[derive(Debug, Clone)]
pub struct Properties {
    default_id: String,
    by_id: Arc<HashMap<String, Arc<PropertyConfig>>>,
}

impl Properties {
    pub fn new(default_id: &str, properties: Vec<PropertyConfig>) -> Properties {
        let by_id = properties.into_iter().map(|property| (property.id.clone(), Arc::new(property))).collect();
        Properties { default_id: default_id.to_string(), by_id: Arc::new(by_id) }
    }

    pub fn default_id(&self) -> &str {
        &self.default_id
    }

    pub fn get(&self, id: &str) -> Option<&Arc<PropertyConfig>> {
        self.by_id.get(id)
    }

    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.by_id.keys().map(String::as_str)
    }
}

/// True for a property id of the form of table ids: 1 to 64 characters of `A-Z a-z 0-9 _ . -`
/// (so no quote, blank, control or bidirectional-override character ever names a tenant).
pub fn is_valid_property_id(id: &str) -> bool {
    chipledger_rules::TableId::new(id).is_ok()
}

/// The properties a principal may act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropertyScope {
    /// Every configured property (`properties = ["*"]`, and the development anonymous caller).
    All,
    Only(Vec<String>),
}

impl PropertyScope {
    pub fn allows(&self, property_id: &str) -> bool {
        match self {
            PropertyScope::All => true,
            PropertyScope::Only(ids) => ids.iter().any(|id| id == property_id),
        }
    }
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
    pub properties: PropertyScope,
}

impl PrincipalConfig {
    /// The entry as one text, its lists taken as sets: the same grants written in another order
    /// are the same entry (the wave-2 pass: properties reordered by a reload had voided
    /// approvals; open streams and console sessions had ended). What approvals are stamped with
    /// and what an open session is held to.
    pub fn canonical(&self) -> String {
        let set = |items: &[String]| {
            let mut items: Vec<&str> = items.iter().map(String::as_str).collect();
            items.sort_unstable();
            items.dedup();
            items.join("\u{1f}")
        };
        let properties = match &self.properties {
            PropertyScope::All => "*".to_string(),
            PropertyScope::Only(ids) => set(ids),
        };
        format!(
            "chipledger approver entry\n{}\n{}\n{}\n{}\n{}",
            self.id,
            crate::access::role_name(&self.role),
            set(&self.cert_names),
            set(&self.tokens),
            properties
        )
    }

    /// The same entry, its lists as sets ([`PrincipalConfig::canonical`]).
    pub fn same_as(&self, other: &PrincipalConfig) -> bool {
        self == other || self.canonical() == other.canonical()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_batch_commands: u32,
    pub max_page_size: u32,
    pub conflict_retries: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_batch_commands: 1000, max_page_size: 1000, conflict_retries: 6 }
    }
}

/// Computes the gaming day of an instant (R-CHIP-6): one cutoff for the whole property, in the
/// property's own time zone. The cutoff is a local wall-clock time, so in a zone with daylight
/// saving it stays at (say) 06:00 local all year while its UTC instant moves by an hour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GamingDayClock {
    pub cutoff_minutes: i32,
    pub zone: jiff::tz::TimeZone,
}

impl Default for GamingDayClock {
    fn default() -> GamingDayClock {
        GamingDayClock { cutoff_minutes: 6 * 60, zone: jiff::tz::TimeZone::UTC }
    }
}

/// Instants a gaming day can be computed for: years 1900 to 9000, far beyond any record or
/// import, well inside what the time-zone arithmetic covers.
pub const MIN_CLOCK_UNIX_MS: i64 = -2_208_988_800_000;
pub const MAX_CLOCK_UNIX_MS: i64 = 221_845_392_000_000;

impl GamingDayClock {
    /// The clock of a named IANA zone.
    pub fn in_zone(cutoff_minutes: i32, zone_name: &str) -> Result<GamingDayClock, ConfigError> {
        let zone = jiff::tz::TimeZone::get(zone_name)
            .map_err(|error| invalid("gaming_day.time_zone", format!("{zone_name:?} is not an IANA time zone: {error}")))?;
        Ok(GamingDayClock { cutoff_minutes, zone })
    }

    /// The zone's IANA name, or its fixed offset.
    pub fn zone_name(&self) -> String {
        match self.zone.iana_name() {
            Some(name) => name.to_string(),
            None => format!("{:?}", self.zone),
        }
    }

    /// "YYYY-MM-DD" of the gaming day containing `at_unix_ms`: the local date, one day earlier
    /// before the local cutoff. A cutoff the clocks pass twice (in the hour they go back) starts
    /// the day at its first passing, one they skip (the hour they go forward) when the clocks
    /// resume: the days follow one another whatever the cutoff (the import pass: a 01:30 cutoff
    /// in Los Angeles put 01:15 PST, after 01:45 PDT, back on the day before).
    /// `None` outside [`MIN_CLOCK_UNIX_MS`]..=[`MAX_CLOCK_UNIX_MS`].
    pub fn gaming_day(&self, at_unix_ms: i64) -> Option<String> {
        if !(MIN_CLOCK_UNIX_MS..=MAX_CLOCK_UNIX_MS).contains(&at_unix_ms) {
            return None;
        }
        let instant = jiff::Timestamp::from_millisecond(at_unix_ms).ok()?;
        let local = self.zone.to_datetime(instant);
        let minutes = i32::from(local.hour()) * 60 + i32::from(local.minute());
        let mut date = if minutes < self.cutoff_minutes { local.date().yesterday().ok()? } else { local.date() };
        // The clock reads the cutoff twice: from its first passing on, the day has begun.
        if minutes < self.cutoff_minutes {
            let cutoff = local.date().at((self.cutoff_minutes / 60) as i8, (self.cutoff_minutes % 60) as i8, 0, 0);
            let passings = self.zone.to_ambiguous_timestamp(cutoff);
            if matches!(passings.offset(), jiff::tz::AmbiguousOffset::Fold { .. }) && passings.earlier().is_ok_and(|first| instant >= first) {
                date = local.date();
            }
        }
        Some(format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day()))
    }
}

impl GamingDayClock {
    /// The first instant (unix ms) after `at_unix_ms` whose gaming day is later than `day`, if
    /// it comes within two days (a day held ahead of the clock further than that: `None`).
    pub fn day_after_begins(&self, day: &str, at_unix_ms: i64) -> Option<i64> {
        self.first_instant(at_unix_ms, at_unix_ms.checked_add(DAYS_SEARCHED_MS)?, |of| of > day)
    }

    /// The first instant (unix ms) of gaming day `day`, the day of `at_unix_ms` (else `None`).
    pub fn day_begins(&self, day: &str, at_unix_ms: i64) -> Option<i64> {
        if self.gaming_day(at_unix_ms)? != day {
            return None;
        }
        self.first_instant(at_unix_ms.checked_sub(DAYS_SEARCHED_MS)?, at_unix_ms, |of| of >= day)
    }

    /// The first instant in `from..=to` whose gaming day `is_past` says yes to, if `to`'s does:
    /// the days follow one another in time, so it is found by halving.
    fn first_instant(&self, from: i64, to: i64, is_past: impl Fn(&str) -> bool) -> Option<i64> {
        let past = |at: i64| self.gaming_day(at).is_some_and(|of| is_past(&of));
        let (mut before, mut after) = (from, to);
        if past(before) {
            return Some(before);
        }
        if !past(after) {
            return None;
        }
        while after - before > 1 {
            let middle = before + (after - before) / 2;
            if past(middle) { after = middle } else { before = middle }
        }
        Some(after)
    }
}

/// How far the instants around a gaming day are searched: longer than any day (25 hours at a
/// change of the clocks).
const DAYS_SEARCHED_MS: i64 = 50 * 3_600_000;

/// Parses a role name as written in configuration: the stable names (`role_name`), any case,
/// `-` for `_`, and `floor` or `supervisor` for a floor supervisor.
pub fn parse_role(name: &str) -> Result<Role, ConfigError> {
    let name = name.trim().to_ascii_lowercase().replace('-', "_");
    let name = match name.as_str() {
        "floor" | "supervisor" => "floor_supervisor",
        other => other,
    };
    role_from_name(name).ok_or_else(|| invalid("role", format!("unknown role {name:?}")))
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
            .or(file.property_id.clone())
            .unwrap_or_else(|| DEFAULT_PROPERTY_ID.to_string());
        if !is_valid_property_id(&property_id) {
            return Err(invalid("property_id", chipledger_rules::ID_FORM));
        }
        let properties = resolve_properties(&property_id, &file)?;
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

        let mut principals = resolve_principals(&file.auth.principals, &properties)?;
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
        // A development server where anonymous callers are admins gets the demo's second
        // persons too (dual control needs someone other than the caller to approve).
        if dev_anonymous_role == Some(Role::Admin) && principals.is_empty() {
            principals = DEV_APPROVERS
                .iter()
                .map(|(id, role, token)| PrincipalConfig {
                    id: (*id).to_string(),
                    role: *role,
                    cert_names: Vec::new(),
                    tokens: vec![(*token).to_string()],
                    properties: PropertyScope::All,
                })
                .collect();
        }
        if let Some(tls) = &file.tls
            && tls.client_auth_optional
            && tls.client_ca.is_none()
        {
            return Err(invalid("tls.client_auth_optional", "needs tls.client_ca"));
        }
        // Bearer tokens in clear over a network anyone on it can read: refused unless the
        // operator says so explicitly (and is then warned at every start).
        let plaintext_tokens_allowed = flags.allow_plaintext_tokens || file.auth.allow_plaintext_tokens;
        let tokens_configured = principals.iter().any(|principal| !principal.tokens.is_empty());
        if file.tls.is_none() && !listen.ip().is_loopback() && tokens_configured && !plaintext_tokens_allowed {
            return Err(invalid(
                "listen",
                format!(
                    "{listen} is not a loopback address and bearer tokens are configured without TLS: \
                     tokens would cross the network in clear. Configure [tls], listen on 127.0.0.1, \
                     or pass --allow-plaintext-tokens (auth.allow_plaintext_tokens) on a network you control"
                ),
            ));
        }
        let console_listen = match file.console.enabled {
            Some(false) => None,
            _ => flags.console_listen.or(file.console.listen).or_else(|| {
                // The development mode's console sits beside gRPC on loopback; a gRPC listener
                // on a free port (tests, several servers) gets a free port for it too.
                let dev = dev_anonymous_role.is_some() && file.tls.is_none();
                let port = if listen.port() == 0 { 0 } else { DEFAULT_CONSOLE_PORT };
                dev.then(|| SocketAddr::new(listen.ip(), port))
            }),
        };
        if let Some(console) = console_listen
            && file.tls.is_none()
            && !console.ip().is_loopback()
            && tokens_configured
            && !plaintext_tokens_allowed
        {
            return Err(invalid(
                "console.listen",
                format!(
                    "{console} is not a loopback address and the console would take sign-in tokens without TLS. \
                     Configure [tls], serve it on 127.0.0.1, or pass --allow-plaintext-tokens on a network you control"
                ),
            ));
        }
        // The development mode's anonymous caller is an admin on the console too: only on
        // loopback, whatever else is allowed (the fixes' pass served it on a network address
        // with --allow-plaintext-tokens and signed in from there as admin).
        if let Some(console) = console_listen
            && dev_anonymous_role.is_some()
            && !console.ip().is_loopback()
        {
            return Err(invalid(
                "console.listen",
                format!(
                    "{console} is not a loopback address and the development mode makes anyone reaching the console an \
                     anonymous admin: serve it on 127.0.0.1, or configure principals ([auth]) to leave the development mode"
                ),
            ));
        }
        // A fully qualified name's final dot is the same name (the fixes' pass: one listed with
        // it refused the name browsers send).
        let console_hosts: Vec<String> =
            file.console.hosts.clone().unwrap_or_default().iter().map(|host| host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()).collect();
        if let Some(bad) = console_hosts.iter().find(|host| {
            host.is_empty() || host.len() > 253 || !host.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'.')
        }) {
            return Err(invalid("console.hosts", format!("{bad:?}: a host name (letters, digits, - and .), no port")));
        }
        let console_idle_minutes = file.console.session_idle_minutes.unwrap_or(DEFAULT_CONSOLE_IDLE_MINUTES);
        if console_idle_minutes == 0 || console_idle_minutes > 24 * 60 {
            return Err(invalid("console.session_idle_minutes", "1 to 1440 minutes"));
        }
        let data_dir = flags.data_dir.or(file.data_dir).unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        let database_url = flags.database_url.or(file.database_url).filter(|url| !url.is_empty());
        let read_database_url = flags.read_database_url.or(file.read_database_url).filter(|url| !url.is_empty());
        if let Some(url) = &read_database_url {
            url.parse::<sqlx::postgres::PgConnectOptions>().map_err(|error| invalid("read_database_url", error.to_string()))?;
        }
        let staleness_ms = file.reads.max_staleness_ms.unwrap_or(DEFAULT_READ_STALENESS_MS);
        if staleness_ms > MAX_READ_STALENESS_MS {
            return Err(invalid("reads.max_staleness_ms", format!("at most {MAX_READ_STALENESS_MS}")));
        }
        let shards = resolve_shards(&file.shards, &properties)?;
        let checkpoints = resolve_checkpoints(&file.checkpoints, &data_dir, database_url.is_none())?;
        let partitions = resolve_partitions(&file.partitions, &data_dir)?;
        let (migrate, app_password_file, partitions_action) = match flags.command {
            Some(DaemonCommand::Migrate { app_password_file }) => (true, app_password_file, None),
            Some(DaemonCommand::Partitions { action }) => (false, None, Some(action)),
            None => (false, None, None),
        };
        let approval_key = match file.approvals.signing_key_file {
            Some(path) => ApprovalKeyFile { path, create_if_missing: false },
            None => ApprovalKeyFile { path: data_dir.join(DEFAULT_APPROVAL_KEY_FILE), create_if_missing: true },
        };
        Ok(Config {
            listen,
            health_listen: flags.health_listen.or(file.health_listen),
            console_listen,
            console_idle: Duration::from_secs(u64::from(console_idle_minutes) * 60),
            console_hosts,
            data_dir,
            database_url,
            read_database_url,
            max_read_staleness: Duration::from_millis(staleness_ms),
            shards,
            source: flags.config,
            property_id,
            properties,
            migrate_only: flags.migrate_only || migrate,
            app_password_file,
            checkpoints,
            partitions,
            partitions_action,
            shutdown_grace: Duration::from_secs(file.shutdown_grace_seconds.unwrap_or(30)),
            embedded_postgres,
            tls: file.tls,
            dev_anonymous_role,
            principals,
            plaintext_tokens_allowed,
            approval_key,
            limits,
        })
    }

    /// The default property's settings.
    pub fn default_property(&self) -> &PropertyConfig {
        self.properties.get(&self.property_id).expect("the default property is always configured")
    }

    /// True when bearer tokens travel in clear beyond this machine (explicitly allowed).
    pub fn plaintext_tokens_exposed(&self) -> bool {
        self.tls.is_none()
            && !self.listen.ip().is_loopback()
            && self.principals.iter().any(|principal| !principal.tokens.is_empty())
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
        // The data dir's key also when the database is given by URL (`chipledgerd partitions
        // archive --data-dir data --database-url ...` against the embedded cluster did not find
        // it: the operations pass); made only in the embedded mode.
        key_file: file
            .key_file
            .clone()
            .or_else(|| (embedded || data_dir.join(EMBEDDED_CHECKPOINT_KEY).is_file()).then(|| data_dir.join(EMBEDDED_CHECKPOINT_KEY))),
        generate_key: embedded && file.key_file.is_none(),
        dir: file.dir.clone().or_else(|| embedded.then(|| data_dir.join(EMBEDDED_CHECKPOINT_DIR))),
        interval: Duration::from_secs(interval_seconds),
        previous_public_keys,
    })
}

fn resolve_partitions(file: &PartitionsFile, data_dir: &Path) -> Result<PartitionSettings, ConfigError> {
    use chipledger_store::partition::{DEFAULT_MONTHS_AHEAD, DEFAULT_RETENTION_MONTHS, MAX_MONTHS_AHEAD, MIN_RETENTION_MONTHS};
    let months_ahead = file.months_ahead.unwrap_or(DEFAULT_MONTHS_AHEAD);
    if !(0..=MAX_MONTHS_AHEAD).contains(&months_ahead) {
        return Err(invalid("partitions.months_ahead", format!("must be 0..={MAX_MONTHS_AHEAD}, got {months_ahead}")));
    }
    let retention_months = file.retention_months.unwrap_or(DEFAULT_RETENTION_MONTHS);
    if retention_months < MIN_RETENTION_MONTHS {
        return Err(invalid("partitions.retention_months", format!("must be at least {MIN_RETENTION_MONTHS}, got {retention_months}")));
    }
    Ok(PartitionSettings {
        months_ahead,
        retention_months,
        archive_dir: file.archive_dir.clone().unwrap_or_else(|| data_dir.join("archive")),
    })
}

fn check_bound(field: &'static str, value: u32, max: u32) -> Result<(), ConfigError> {
    if value == 0 || value > max {
        return Err(invalid(field, format!("must be 1..={max}, got {value}")));
    }
    Ok(())
}

/// The default property (from its `[[properties]]` entry, else the top-level settings) and every
/// other configured property.
fn resolve_properties(default_id: &str, file: &FileConfig) -> Result<Properties, ConfigError> {
    if file.properties.len() > MAX_PROPERTIES {
        return Err(invalid("properties", format!("at most {MAX_PROPERTIES}")));
    }
    let mut resolved = Vec::with_capacity(file.properties.len() + 1);
    let mut seen = std::collections::HashSet::new();
    for entry in &file.properties {
        if !is_valid_property_id(&entry.id) {
            return Err(invalid("properties.id", format!("{:?}: {}", entry.id, chipledger_rules::ID_FORM)));
        }
        if !seen.insert(entry.id.clone()) {
            return Err(invalid("properties.id", format!("{:?} given twice", entry.id)));
        }
        resolved.push(resolve_property(entry)?);
    }
    let top_level_set = file.gaming_day.cutoff.is_some()
        || file.gaming_day.time_zone.is_some()
        || file.gaming_day.utc_offset_minutes.is_some()
        || file.currency.is_some()
        || file.game_keys.is_some()
        || file.aml.mtl_over_cents.is_some()
        || file.aml.ctr_over_cents.is_some()
        || file.aml.ctr_due_days.is_some();
    if seen.contains(default_id) {
        if top_level_set {
            return Err(invalid(
                "properties",
                format!("the default property {default_id:?} has a [[properties]] entry: set its gaming day, aml, currency and game keys there, not at top level"),
            ));
        }
    } else {
        resolved.push(resolve_property(&PropertyFile {
            id: default_id.to_string(),
            currency: file.currency.clone(),
            game_keys: file.game_keys.clone(),
            gaming_day: file.gaming_day.clone(),
            aml: file.aml.clone(),
        })?);
    }
    Ok(Properties::new(default_id, resolved))
}

fn resolve_property(entry: &PropertyFile) -> Result<PropertyConfig, ConfigError> {
    let cutoff_minutes = match &entry.gaming_day.cutoff {
        Some(text) => parse_cutoff(text)?,
        None => GamingDayClock::default().cutoff_minutes,
    };
    let gaming_day = match (&entry.gaming_day.time_zone, entry.gaming_day.utc_offset_minutes) {
        (Some(_), Some(_)) => {
            return Err(invalid("gaming_day.utc_offset_minutes", "give time_zone or utc_offset_minutes, not both"));
        }
        (Some(zone), None) => GamingDayClock::in_zone(cutoff_minutes, zone)?,
        (None, Some(offset_minutes)) => {
            if offset_minutes.abs() > 14 * 60 {
                return Err(invalid("gaming_day.utc_offset_minutes", "must be within +-14 hours"));
            }
            let offset = jiff::tz::Offset::from_seconds(offset_minutes * 60)
                .map_err(|error| invalid("gaming_day.utc_offset_minutes", error.to_string()))?;
            GamingDayClock { cutoff_minutes, zone: jiff::tz::TimeZone::fixed(offset) }
        }
        (None, None) => GamingDayClock { cutoff_minutes, zone: jiff::tz::TimeZone::UTC },
    };
    let aml_defaults = chipledger_rules::AmlThresholds::default();
    let aml = chipledger_rules::AmlThresholds {
        mtl_over_cents: entry.aml.mtl_over_cents.unwrap_or(aml_defaults.mtl_over_cents),
        ctr_over_cents: entry.aml.ctr_over_cents.unwrap_or(aml_defaults.ctr_over_cents),
        ctr_due_days: entry.aml.ctr_due_days.unwrap_or(aml_defaults.ctr_due_days),
    };
    if aml.mtl_over_cents <= 0 || aml.ctr_over_cents <= 0 || aml.ctr_due_days == 0 {
        return Err(invalid("aml", "thresholds and ctr_due_days must be positive"));
    }
    let currency = entry.currency.clone().unwrap_or_else(|| DEFAULT_CURRENCY.to_string());
    if currency.len() != 3 || !currency.bytes().all(|byte| byte.is_ascii_uppercase()) {
        return Err(invalid("currency", format!("{currency:?} is not an ISO 4217 code such as USD")));
    }
    let game_keys = match &entry.game_keys {
        None => None,
        Some(keys) => {
            if keys.is_empty() || keys.len() > MAX_GAME_KEYS {
                return Err(invalid("game_keys", format!("1 to {MAX_GAME_KEYS} keys (leave it unset for any)")));
            }
            let mut seen = std::collections::HashSet::new();
            for key in keys {
                if key.is_empty() || key.len() > 64 || key.trim() != key || key.chars().any(char::is_control) {
                    return Err(invalid("game_keys", format!("{key:?}: 1 to 64 bytes, no surrounding blanks or control characters")));
                }
                if !seen.insert(key.as_str()) {
                    return Err(invalid("game_keys", format!("{key:?} given twice")));
                }
            }
            Some(keys.clone())
        }
    };
    Ok(PropertyConfig { id: entry.id.clone(), gaming_day, aml, currency, game_keys })
}

fn resolve_principals(files: &[PrincipalFile], properties: &Properties) -> Result<Vec<PrincipalConfig>, ConfigError> {
    let mut principals = Vec::with_capacity(files.len());
    let mut seen_names = std::collections::HashSet::new();
    let mut seen_tokens = std::collections::HashSet::new();
    // Ids in any case: one person, one id. Two ids differing only in case (or blanks) read as one
    // name in the record, where a second signer must be another person (R-AUDIT-1, R-CHIP-3,
    // R-MARK-1: the insider pass had "fred corrected, approved by Fred").
    let mut seen_ids = std::collections::HashMap::new();
    for file in files {
        // Printable ASCII only: a full-width "ｆｒｅｄ" or "fred" with a zero-width space read as
        // fred in the record (the fixes' pass approved fred's correction so).
        if file.id.is_empty() || file.id.len() > 64 || !file.id.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(invalid("auth.principals.id", "must be 1 to 64 printable ASCII characters, no blanks"));
        }
        if let Some(first) = seen_ids.insert(file.id.to_lowercase(), file.id.as_str()) {
            let twice = if first == file.id { format!("{:?} given twice", file.id) } else { format!("{:?} is {first:?} in another case: one person, one id", file.id) };
            return Err(invalid("auth.principals.id", twice));
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
        let scope = if file.properties.is_empty() {
            PropertyScope::Only(vec![properties.default_id().to_string()])
        } else if file.properties.iter().any(|id| id == ALL_PROPERTIES) {
            if file.properties.len() > 1 {
                return Err(invalid("auth.principals.properties", format!("{}: \"*\" stands alone", file.id)));
            }
            PropertyScope::All
        } else {
            for id in &file.properties {
                if properties.get(id).is_none() {
                    return Err(invalid(
                        "auth.principals.properties",
                        format!("{} names property {id:?}, which is not configured", file.id),
                    ));
                }
            }
            PropertyScope::Only(file.properties.clone())
        };
        principals.push(PrincipalConfig {
            id: file.id.clone(),
            role: parse_role(&file.role)?,
            cert_names: file.cert_names.clone(),
            tokens: file.tokens.clone(),
            properties: scope,
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
        assert_eq!(config.default_property().gaming_day.cutoff_minutes, 360);
        assert_eq!(config.default_property().currency, "USD");
        // A bare development server: anonymous admin plus the demo's approvers.
        assert_eq!(config.dev_anonymous_role, Some(Role::Admin));
        let ids: Vec<&str> = config.principals.iter().map(|principal| principal.id.as_str()).collect();
        assert_eq!(ids, ["dev-floor", "dev-cage", "dev-credit"]);
    }

    #[test]
    fn aml_thresholds_come_from_the_file_and_unset_keys_keep_the_defaults() {
        let config = Config::resolve(Flags::default(), parse("[aml]\nctr_over_cents = 500000\n")).unwrap();
        let defaults = chipledger_rules::AmlThresholds::default();
        let aml = &config.default_property().aml;
        assert_eq!(aml.ctr_over_cents, 500_000);
        assert_eq!(aml.mtl_over_cents, defaults.mtl_over_cents);
        assert_eq!(aml.ctr_due_days, defaults.ctr_due_days);
        assert!(Config::resolve(Flags::default(), parse("[aml]\nmtl_over_cents = 0\n")).is_err());
    }

    #[test]
    fn partitions_keep_three_months_ahead_and_seven_years_by_default_and_refuse_bounds_out_of_range() {
        let config = Config::resolve(Flags::default(), FileConfig::default()).unwrap();
        let expected = PartitionSettings { months_ahead: 3, retention_months: 84, archive_dir: PathBuf::from("./data/archive") };
        assert_eq!(config.partitions, expected);
        let config = Config::resolve(Flags::default(), parse("[partitions]
months_ahead = 0
retention_months = 120
")).unwrap();
        assert_eq!((config.partitions.months_ahead, config.partitions.retention_months), (0, 120));
        for (text, field) in [
            ("months_ahead = 121", "partitions.months_ahead"),
            ("months_ahead = -1", "partitions.months_ahead"),
            ("retention_months = 0", "partitions.retention_months"),
        ] {
            let error = Config::resolve(Flags::default(), parse(&format!("[partitions]\n{text}\n"))).unwrap_err();
            assert!(matches!(&error, ConfigError::Invalid { field: f, .. } if *f == field), "{text}: {error}");
        }
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
            listen: Some("127.0.0.2:9000".parse().unwrap()),
            database_url: Some("postgres://flag".into()),
            ..Flags::default()
        };
        let config = Config::resolve(flags, file).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.2:9000");
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
        let clock = &config.default_property().gaming_day;
        assert_eq!(clock.cutoff_minutes, 270);
        assert_eq!(clock.zone, jiff::tz::TimeZone::fixed(jiff::tz::Offset::from_seconds(-300 * 60).unwrap()));
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
    fn a_principal_id_is_one_person_in_any_case_r_audit_1() {
        for (second, said) in [("Fred", "in another case"), ("fred", "given twice"), ("fred ", "no blanks"), ("ｆｒｅｄ", "printable ASCII"), ("fred\u{200b}", "printable ASCII")] {
            let file = parse(&format!(
                "[[auth.principals]]\nid = \"fred\"\nrole = \"floor\"\n[[auth.principals]]\nid = \"{second}\"\nrole = \"floor\"\n"
            ));
            match Config::resolve(Flags::default(), file) {
                Err(ConfigError::Invalid { field: "auth.principals.id", message }) => assert!(message.contains(said), "{second:?}: {message}"),
                other => panic!("{second:?} beside fred: {other:?}"),
            }
        }
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
    fn roles_read_as_their_stable_names_in_any_case_and_floor_for_a_supervisor() {
        assert_eq!(parse_role(" Floor-Supervisor ").unwrap(), Role::FloorSupervisor);
        assert_eq!(parse_role("floor").unwrap(), Role::FloorSupervisor);
        assert_eq!(parse_role("SUPERVISOR").unwrap(), Role::FloorSupervisor);
        assert_eq!(parse_role("system").unwrap(), Role::System);
        assert!(parse_role("floor supervisor").is_err());
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
        assert_eq!(clock.gaming_day(before).as_deref(), Some("2024-03-09"));
        assert_eq!(clock.gaming_day(before + 1).as_deref(), Some("2024-03-10"));
        // A fixed UTC-5: 06:00 local is 11:00 UTC.
        let file = parse("[gaming_day]\nutc_offset_minutes = -300\n");
        let config = Config::resolve(Flags::default(), file).unwrap();
        let east_coast = &config.default_property().gaming_day;
        let ten_fifty_nine_utc = 1_710_068_399_000; // 2024-03-10T10:59:59Z
        assert_eq!(east_coast.gaming_day(ten_fifty_nine_utc).as_deref(), Some("2024-03-09"));
        assert_eq!(east_coast.gaming_day(ten_fifty_nine_utc + 1000).as_deref(), Some("2024-03-10"));
        assert_eq!(clock.gaming_day(i64::MAX), None, "out of the clock's range");
    }

    /// Las Vegas: 06:00 local is 14:00 UTC in winter (PST, UTC-8) and 13:00 UTC in summer (PDT,
    /// UTC-7). A fixed -480 would put the summer cutoff at 07:00 local; the IANA zone keeps it
    /// at 06:00 on both sides of the change (2024-03-10 02:00 local) and back (2024-11-03).
    #[test]
    fn r_chip_6_las_vegas_cutoff_stays_at_six_local_across_daylight_saving() {
        let vegas = GamingDayClock::in_zone(360, "America/Los_Angeles").unwrap();
        let at = |text: &str| text.parse::<jiff::Timestamp>().unwrap().as_millisecond();
        let day = |text: &str| vegas.gaming_day(at(text)).unwrap();
        // Winter, the day before the change: 05:59 PST is still the 8th's gaming day.
        assert_eq!(day("2024-03-09T13:59:59Z"), "2024-03-08");
        assert_eq!(day("2024-03-09T14:00:00Z"), "2024-03-09");
        // The change happens at 02:00 PST on the 10th; 06:00 PDT is 13:00 UTC.
        assert_eq!(day("2024-03-10T12:59:59Z"), "2024-03-09");
        assert_eq!(day("2024-03-10T13:00:00Z"), "2024-03-10");
        // Summer: 06:00 PDT = 13:00 UTC (a fixed -480 would say 14:00).
        assert_eq!(day("2024-07-04T13:00:00Z"), "2024-07-04");
        assert_eq!(day("2024-07-04T12:59:59Z"), "2024-07-03");
        // Back to PST on 2024-11-03 at 02:00 PDT: 06:00 PST is 14:00 UTC that morning.
        assert_eq!(day("2024-11-03T13:59:59Z"), "2024-11-02");
        assert_eq!(day("2024-11-03T14:00:00Z"), "2024-11-03");
        // The gaming day of the spring-forward date is 23 hours long, the fall-back one 25.
        let spring = at("2024-03-11T13:00:00Z") - at("2024-03-10T13:00:00Z");
        let fall = at("2024-11-04T14:00:00Z") - at("2024-11-03T13:00:00Z");
        assert_eq!((spring, fall), (24 * 3_600_000, 25 * 3_600_000));
        // A cutoff in the hour the clocks go back (01:30, passed at 08:30 and 09:30 UTC on
        // 2026-11-01) starts the day at its first passing; one in the hour they skip (02:30 on
        // 2026-03-08) when the clocks resume at 03:00 PDT. The days never go back.
        let repeated = GamingDayClock::in_zone(90, "America/Los_Angeles").unwrap();
        let repeated_day = |text: &str| repeated.gaming_day(at(text)).unwrap();
        assert_eq!(repeated_day("2026-11-01T08:29:59Z"), "2026-10-31");
        assert_eq!(repeated_day("2026-11-01T08:45:00Z"), "2026-11-01", "01:45 PDT");
        assert_eq!(repeated_day("2026-11-01T09:15:00Z"), "2026-11-01", "01:15 PST, after it");
        assert_eq!(repeated_day("2026-11-01T09:45:00Z"), "2026-11-01");
        let skipped = GamingDayClock::in_zone(150, "America/Los_Angeles").unwrap();
        assert_eq!(skipped.gaming_day(at("2026-03-08T09:59:59Z")).as_deref(), Some("2026-03-07"), "01:59:59 PST");
        assert_eq!(skipped.gaming_day(at("2026-03-08T10:00:00Z")).as_deref(), Some("2026-03-08"), "03:00 PDT");
        let fixed = GamingDayClock {
            cutoff_minutes: 360,
            zone: jiff::tz::TimeZone::fixed(jiff::tz::Offset::from_seconds(-480 * 60).unwrap()),
        };
        assert_eq!(fixed.gaming_day(at("2024-07-04T13:30:00Z")).as_deref(), Some("2024-07-03"), "the old fixed offset is an hour late in summer");
    }

    /// R-CHIP-6 (the time pass): the first instant of the next gaming day, where a command
    /// decided on a day is no longer recorded on it: at the cutoff, at the first passing of one
    /// the clocks repeat, when the clocks resume for one they skip; from a day held ahead of
    /// the clock, that day's end.
    #[test]
    fn r_chip_6_the_next_gaming_day_begins_at_the_cutoff() {
        let at = |text: &str| text.parse::<jiff::Timestamp>().unwrap().as_millisecond();
        let vegas = GamingDayClock::in_zone(360, "America/Los_Angeles").unwrap();
        assert_eq!(vegas.day_after_begins("2024-11-02", at("2024-11-03T13:59:59.990Z")), Some(at("2024-11-03T14:00:00Z")));
        assert_eq!(vegas.day_after_begins("2024-03-09", at("2024-03-09T20:00:00Z")), Some(at("2024-03-10T13:00:00Z")));
        assert_eq!(vegas.day_after_begins("2024-03-10", at("2024-03-09T20:00:00Z")), Some(at("2024-03-11T13:00:00Z")), "a day ahead of the clock");
        assert_eq!(vegas.day_after_begins("2024-03-20", at("2024-03-09T20:00:00Z")), None, "far ahead: no end within two days");
        assert_eq!(vegas.day_after_begins("2024-03-08", at("2024-03-09T20:00:00Z")), Some(at("2024-03-09T20:00:00Z")), "already past");
        let repeated = GamingDayClock::in_zone(90, "America/Los_Angeles").unwrap();
        assert_eq!(repeated.day_after_begins("2026-10-31", at("2026-11-01T08:00:00Z")), Some(at("2026-11-01T08:30:00Z")));
        let skipped = GamingDayClock::in_zone(150, "America/Los_Angeles").unwrap();
        assert_eq!(skipped.day_after_begins("2026-03-07", at("2026-03-08T09:00:00Z")), Some(at("2026-03-08T10:00:00Z")));
        // And where a day begins: the same instants, seen from within the day.
        assert_eq!(vegas.day_begins("2024-11-03", at("2024-11-03T20:00:00Z")), Some(at("2024-11-03T14:00:00Z")));
        assert_eq!(vegas.day_begins("2024-11-04", at("2024-11-03T20:00:00Z")), None, "not the clock's day");
        assert_eq!(repeated.day_begins("2026-11-01", at("2026-11-01T09:15:00Z")), Some(at("2026-11-01T08:30:00Z")));
        assert_eq!(skipped.day_begins("2026-03-08", at("2026-03-08T12:00:00Z")), Some(at("2026-03-08T10:00:00Z")));
    }

    #[test]
    fn time_zones_are_iana_names_and_not_together_with_an_offset() {
        let ok = parse("[gaming_day]\ntime_zone = \"America/Los_Angeles\"\ncutoff = \"06:00\"\n");
        let config = Config::resolve(Flags::default(), ok).unwrap();
        assert_eq!(config.default_property().gaming_day.zone_name(), "America/Los_Angeles");
        let bad = parse("[gaming_day]\ntime_zone = \"America/Las_Vegas_Strip\"\n");
        assert!(Config::resolve(Flags::default(), bad).is_err());
        let both = parse("[gaming_day]\ntime_zone = \"UTC\"\nutc_offset_minutes = 60\n");
        assert!(Config::resolve(Flags::default(), both).is_err());
    }

    #[test]
    fn properties_have_their_own_settings_and_ids_like_table_ids() {
        let file = parse(
            r#"
            property_id = "vegas"
            [[properties]]
            id = "vegas"
            currency = "USD"
            game_keys = ["NLHE 100/200", "PLO 200/500"]
            gaming_day = { cutoff = "06:00", time_zone = "America/Los_Angeles" }
            [[properties]]
            id = "macau"
            currency = "MOP"
            gaming_day = { time_zone = "Asia/Macau" }
            aml = { ctr_over_cents = 8000000 }
            [[auth.principals]]
            id = "dan"
            role = "dealer"
            tokens = ["dan-token-0123456789"]
            [[auth.principals]]
            id = "ann"
            role = "auditor"
            tokens = ["ann-token-0123456789"]
            properties = ["*"]
            "#,
        );
        let config = Config::resolve(Flags::default(), file).unwrap();
        let macau = config.properties.get("macau").unwrap();
        assert_eq!((macau.currency.as_str(), macau.aml.ctr_over_cents), ("MOP", 8_000_000));
        assert_eq!(macau.game_keys, None);
        let vegas = config.default_property();
        assert_eq!(vegas.game_keys.as_ref().unwrap().len(), 2);
        assert_eq!(config.principals[0].properties, PropertyScope::Only(vec!["vegas".into()]));
        assert_eq!(config.principals[1].properties, PropertyScope::All);

        for hostile in ["x'); DROP TABLE events;--", " ", "", "casino\u{202e}1", "a/b"] {
            let file = FileConfig { properties: vec![PropertyFile { id: hostile.into(), ..Default::default() }], ..Default::default() };
            assert!(Config::resolve(Flags::default(), file).is_err(), "{hostile:?}");
            let flags = Flags { property_id: Some(hostile.into()), ..Flags::default() };
            assert!(Config::resolve(flags, FileConfig::default()).is_err(), "{hostile:?}");
        }
        let unknown = parse("[[auth.principals]]\nid = \"x\"\nrole = \"dealer\"\nproperties = [\"elsewhere\"]\n");
        assert!(Config::resolve(Flags::default(), unknown).is_err());
        let twice = parse("property_id = \"a\"\ncurrency = \"EUR\"\n[[properties]]\nid = \"a\"\n");
        assert!(Config::resolve(Flags::default(), twice).is_err(), "the default configured in two places");
        let bad_keys = parse("game_keys = [\" NLHE 1/2\"]\n");
        assert!(Config::resolve(Flags::default(), bad_keys).is_err());
    }

    #[test]
    fn plaintext_bearer_tokens_on_a_public_address_need_an_explicit_allowance() {
        let text = "listen = \"0.0.0.0:50051\"\n[[auth.principals]]\nid = \"x\"\nrole = \"dealer\"\ntokens = [\"0123456789abcdef\"]\n";
        let refused = Config::resolve(Flags::default(), parse(text)).unwrap_err();
        assert!(refused.to_string().contains("--allow-plaintext-tokens"), "{refused}");
        let allowed = Config::resolve(Flags { allow_plaintext_tokens: true, ..Flags::default() }, parse(text)).unwrap();
        assert!(allowed.plaintext_tokens_exposed());
        let in_file = "listen = \"0.0.0.0:50051\"\n[auth]\nallow_plaintext_tokens = true\n[[auth.principals]]\nid = \"x\"\nrole = \"dealer\"\ntokens = [\"0123456789abcdef\"]\n";
        assert!(Config::resolve(Flags::default(), parse(in_file)).is_ok());
        // Loopback or TLS: nothing to refuse.
        let loopback = text.replace("0.0.0.0", "127.0.0.1");
        assert!(Config::resolve(Flags::default(), parse(&loopback)).is_ok());
        let with_tls = "listen = \"0.0.0.0:50051\"\n[tls]\ncert = \"c\"\nkey = \"k\"\n[[auth.principals]]\nid = \"x\"\nrole = \"dealer\"\ntokens = [\"0123456789abcdef\"]\n";
        assert!(Config::resolve(Flags::default(), parse(with_tls)).is_ok());
    }

    /// The development mode (no principals: anyone is an anonymous admin) serves its console on
    /// loopback only, whatever is allowed besides (the fixes' pass signed in from the network).
    #[test]
    fn the_development_console_stays_on_loopback() {
        let network = Flags { console_listen: Some("192.0.2.2:50080".parse().unwrap()), allow_plaintext_tokens: true, ..Flags::default() };
        let refused = Config::resolve(network, FileConfig::default()).unwrap_err();
        assert!(refused.to_string().contains("anonymous admin"), "{refused}");
        let loopback = Flags { console_listen: Some("127.0.0.1:50080".parse().unwrap()), ..Flags::default() };
        assert!(Config::resolve(loopback, FileConfig::default()).is_ok());
    }
}
