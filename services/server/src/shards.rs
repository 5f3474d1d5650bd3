//! Where each property's chain lives, and which database answers a read.
//!
//! - Shards: every property's chain and positions are on one primary. The properties a
//!   `[[shards]]` entry names are in its database; the others in `database_url` (the default
//!   shard, or the embedded cluster). The map and the properties are read again on SIGHUP
//!   ([`Router::reload`]); a property may only move to a database that already holds its chain
//!   up to the same head, so a reload can never start a second chain for one property.
//! - Standby reads: a shard may name a hot standby. Audit and report reads go there when it is
//!   close enough: [`Router::reader`] measures how far behind the primary it is (the head it
//!   has replayed, and how long ago the first event it lacks was recorded), passes it over for
//!   the primary when it lags more than allowed or has not reached the position the caller
//!   asks to see (read-your-writes), and tells the caller which database answered and the
//!   position it reflects. A standby only ever replays what the primary committed.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use chipledger_store::{EventFilter, Store, StoreError};
use sqlx::postgres::PgConnectOptions;
use tonic::Status;
use tonic::metadata::{MetadataMap, MetadataValue};

use crate::config::{Config, Properties, ShardConfig};
use crate::database::{ACQUIRE_TIMEOUT, POOL_CONNECTIONS};
use crate::status;

/// Request metadata: a read must reflect at least this position (the caller's last write).
pub const MIN_POSITION_HEADER: &str = "chipledger-read-min-position";
/// Request metadata: the most staleness the caller accepts, in milliseconds (at most the
/// server's `[reads] max_staleness_ms`).
pub const MAX_STALENESS_HEADER: &str = "chipledger-read-max-staleness-ms";
/// Response metadata: `primary` or `standby`.
pub const SOURCE_HEADER: &str = "chipledger-read-source";
/// Response metadata: the property's head position the read reflects (at least).
pub const POSITION_HEADER: &str = "chipledger-read-position";
/// Response metadata: how far behind the primary the answer may be, in milliseconds.
pub const STALENESS_HEADER: &str = "chipledger-read-staleness-ms";

/// The name of the shard of `database_url`.
pub const DEFAULT_SHARD: &str = "default";

#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error("shard {shard}: invalid URL: {message}")]
    Url { shard: String, message: String },
    #[error("shard {shard}: {source}")]
    Store { shard: String, source: StoreError },
    #[error(
        "property {property} cannot move to shard {to}: its chain there is at position {to_position}, \
         here at {from_position} (copy the chain first, with writes stopped; docs/OPERATIONS.md)"
    )]
    MoveRefused { property: String, to: String, from_position: i64, to_position: i64 },
    #[error(
        "anonymous callers are {was} now and would be {now}: the development mode (anonymous callers as admins) is \
         decided by principals, TLS and the listen address at a start; restart to change it"
    )]
    DevelopmentModeChanged { was: String, now: String },
}

/// One database holding chains, and its standby.
pub struct Shard {
    name: String,
    urls: (String, Option<String>),
    primary: Store,
    standby: Option<Store>,
}

impl std::fmt::Debug for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shard").field("name", &self.name).field("standby", &self.standby.is_some()).finish()
    }
}

struct Map {
    properties: Properties,
    default: Arc<Shard>,
    by_property: HashMap<String, Arc<Shard>>,
}

impl Map {
    fn shard(&self, property: &str) -> &Arc<Shard> {
        self.by_property.get(property).unwrap_or(&self.default)
    }

    fn shards(&self) -> Vec<Arc<Shard>> {
        let mut shards = vec![self.default.clone()];
        for shard in self.by_property.values() {
            if !shards.iter().any(|known| Arc::ptr_eq(known, shard)) {
                shards.push(shard.clone());
            }
        }
        shards
    }
}

/// Which database answered a read, and what it reflects.
#[derive(Clone)]
pub struct ReadView {
    pub store: Store,
    pub from_standby: bool,
    /// The property's head position the answer reflects (it may show later events too).
    pub position: i64,
    pub staleness: Duration,
}

impl std::fmt::Debug for ReadView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadView")
            .field("from_standby", &self.from_standby)
            .field("position", &self.position)
            .field("staleness", &self.staleness)
            .finish()
    }
}

impl ReadView {
    /// The view's facts as response metadata.
    pub fn annotate<T>(&self, mut response: tonic::Response<T>) -> tonic::Response<T> {
        let metadata = response.metadata_mut();
        metadata.insert(SOURCE_HEADER, MetadataValue::from_static(if self.from_standby { "standby" } else { "primary" }));
        metadata.insert(POSITION_HEADER, MetadataValue::from(self.position));
        let staleness_ms = i64::try_from(self.staleness.as_millis()).unwrap_or(i64::MAX);
        metadata.insert(STALENESS_HEADER, MetadataValue::from(staleness_ms));
        response
    }
}

/// What a caller asks of a read: a position to reflect, and a staleness bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadWish {
    pub min_position: i64,
    pub max_staleness: Option<Duration>,
}

impl ReadWish {
    /// From the request's metadata; INVALID_ARGUMENT naming the header for a malformed value.
    pub fn from_metadata(metadata: &MetadataMap) -> Result<ReadWish, Status> {
        let number = |header: &str| -> Result<Option<i64>, Status> {
            let Some(value) = metadata.get(header) else { return Ok(None) };
            value
                .to_str()
                .ok()
                .and_then(|text| text.trim().parse::<i64>().ok())
                .filter(|number| *number >= 0)
                .map(Some)
                .ok_or_else(|| status::invalid_field(header, "a whole number >= 0"))
        };
        Ok(ReadWish {
            min_position: number(MIN_POSITION_HEADER)?.unwrap_or(0),
            max_staleness: number(MAX_STALENESS_HEADER)?.map(|ms| Duration::from_millis(ms.unsigned_abs())),
        })
    }
}

/// The shard map, swapped whole on reload.
pub struct Router {
    map: RwLock<Arc<Map>>,
    max_staleness: Duration,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router").field("shards", &self.current().shards()).finish()
    }
}

/// What a reload changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reloaded {
    pub properties: usize,
    pub shards_connected: Vec<String>,
    pub moved: Vec<String>,
    /// The principals taken again (ids added, removed, changed).
    pub principals: crate::access::PrincipalsReloaded,
}

impl Router {
    /// Every property in `primary` (tests, tools): no standby, no other shard.
    pub fn single(primary: Store, properties: Properties) -> Router {
        Router::with_default(primary, None, None, properties, Duration::ZERO)
    }

    /// The default shard on `primary` (connected by the caller as the application role), with
    /// the configured standby and the other shards connected here.
    pub async fn connect(primary: Store, config: &Config) -> Result<Router, RouterError> {
        let standby = match &config.read_database_url {
            Some(url) => Some(connect_standby(DEFAULT_SHARD, url)?),
            None => None,
        };
        let router = Router::with_default(
            primary,
            standby,
            config.read_database_url.clone(),
            config.properties.clone(),
            config.max_read_staleness,
        );
        router.reload(config).await?;
        Ok(router)
    }

    fn with_default(
        primary: Store,
        standby: Option<Store>,
        read_url: Option<String>,
        properties: Properties,
        max_staleness: Duration,
    ) -> Router {
        let default = Arc::new(Shard {
            name: DEFAULT_SHARD.into(),
            urls: (String::new(), read_url),
            primary,
            standby,
        });
        let map = Map { properties, default, by_property: HashMap::new() };
        Router { map: RwLock::new(Arc::new(map)), max_staleness }
    }

    fn current(&self) -> Arc<Map> {
        Arc::clone(&self.map.read().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    pub fn properties(&self) -> Properties {
        self.current().properties.clone()
    }

    /// The primary holding `property`'s chain.
    pub fn primary(&self, property: &str) -> Store {
        self.current().shard(property).primary.clone()
    }

    /// The default shard's primary (health probe, the shared pool's tracing).
    pub fn default_primary(&self) -> Store {
        self.current().default.primary.clone()
    }

    /// Every shard's primary, once each.
    pub fn primaries(&self) -> Vec<Store> {
        self.current().shards().iter().map(|shard| shard.primary.clone()).collect()
    }

    /// Reads the properties and the shard map of `config`: shards whose URLs did not change
    /// keep their pools, new ones are connected (and their schema checked) before anything is
    /// swapped; a property whose database changes must find its chain there at the same head.
    /// On any error the running map stays as it was.
    pub async fn reload(&self, config: &Config) -> Result<Reloaded, RouterError> {
        let old = self.current();
        if old.default.urls.1 != config.read_database_url {
            tracing::warn!("read_database_url of the default database changed: it takes effect at a restart");
        }
        let mut reloaded = Reloaded { properties: config.properties.ids().count(), ..Reloaded::default() };
        let mut by_property = HashMap::new();
        for shard_config in &config.shards {
            let shard = match old.shards().into_iter().find(|shard| same_shard(shard, shard_config)) {
                Some(shard) => shard,
                None => {
                    reloaded.shards_connected.push(shard_config.name.clone());
                    Arc::new(self.connect_shard(shard_config).await?)
                }
            };
            for property in &shard_config.properties {
                by_property.insert(property.clone(), shard.clone());
            }
        }
        let new = Map { properties: config.properties.clone(), default: old.default.clone(), by_property };
        for property in config.properties.ids() {
            let (from, to) = (old.shard(property), new.shard(property));
            if Arc::ptr_eq(from, to) {
                continue;
            }
            let head = |store: Store, shard: String| async move {
                store.heads(property).await.map(|(events, _)| events).map_err(|source| RouterError::Store { shard, source })
            };
            let here = head(from.primary.clone(), from.name.clone()).await?;
            let there = head(to.primary.clone(), to.name.clone()).await?;
            if here.0 > 0 && here != there {
                return Err(RouterError::MoveRefused {
                    property: property.to_owned(),
                    to: to.name.clone(),
                    from_position: here.0,
                    to_position: there.0,
                });
            }
            reloaded.moved.push(property.to_owned());
        }
        *self.map.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(new);
        Ok(reloaded)
    }

    async fn connect_shard(&self, config: &ShardConfig) -> Result<Shard, RouterError> {
        let primary = connect_primary(&config.name, &config.database_url).await?;
        let standby = match &config.read_database_url {
            Some(url) => Some(connect_standby(&config.name, url)?),
            None => None,
        };
        Ok(Shard {
            name: config.name.clone(),
            urls: (config.database_url.clone(), config.read_database_url.clone()),
            primary,
            standby,
        })
    }

    /// The database a read of `property` goes to, and what it reflects (see the module docs).
    /// A standby that cannot be asked is passed over (logged); only the primary's failure fails.
    pub async fn reader(&self, property: &str, wish: ReadWish) -> Result<ReadView, StoreError> {
        let shard = Arc::clone(self.current().shard(property));
        let (primary_head, _) = shard.primary.heads(property).await?;
        let on_primary = ReadView {
            store: shard.primary.clone(),
            from_standby: false,
            position: primary_head.0,
            staleness: Duration::ZERO,
        };
        let Some(standby) = &shard.standby else { return Ok(on_primary) };
        let bound = wish.max_staleness.map_or(self.max_staleness, |asked| asked.min(self.max_staleness));
        let replayed = match standby.heads(property).await {
            Ok((events, _)) => events.0,
            Err(error) => {
                tracing::warn!(shard = %shard.name, %error, "standby not answering: reading from the primary");
                return Ok(on_primary);
            }
        };
        if replayed < wish.min_position {
            return Ok(on_primary);
        }
        let staleness = if replayed >= primary_head.0 {
            Duration::ZERO
        } else {
            // The oldest event the standby lacks: the answer is as old as its recording.
            let filter = EventFilter { after_position: replayed, limit: 1, ..EventFilter::default() };
            match shard.primary.events_by_filter(property, &filter).await?.first() {
                Some(missing) => {
                    let age = time::OffsetDateTime::now_utc() - missing.recorded_at;
                    Duration::try_from(age).unwrap_or(Duration::ZERO)
                }
                None => Duration::ZERO,
            }
        };
        if staleness > bound || (bound.is_zero() && replayed < primary_head.0) {
            return Ok(on_primary);
        }
        Ok(ReadView { store: standby.clone(), from_standby: true, position: replayed, staleness })
    }
}

fn same_shard(shard: &Shard, config: &ShardConfig) -> bool {
    shard.name == config.name && shard.urls == (config.database_url.clone(), config.read_database_url.clone())
}

fn options(shard: &str, url: &str) -> Result<PgConnectOptions, RouterError> {
    url.parse().map_err(|error: sqlx::Error| RouterError::Url { shard: shard.to_owned(), message: error.to_string() })
}

/// A shard's primary, connected now (a shard that cannot be reached fails the start or the
/// reload) and its schema checked.
async fn connect_primary(shard: &str, url: &str) -> Result<Store, RouterError> {
    let store_error = |source| RouterError::Store { shard: shard.to_owned(), source };
    let store = Store::connect_bounded(options(shard, url)?, POOL_CONNECTIONS, ACQUIRE_TIMEOUT).await.map_err(store_error)?;
    store.check_schema().await.map_err(store_error)?;
    Ok(store)
}

/// A standby, connected on first use: while it is away, its reads go to the primary.
fn connect_standby(shard: &str, url: &str) -> Result<Store, RouterError> {
    Ok(Store::connect_lazy(options(shard, url)?, POOL_CONNECTIONS, ACQUIRE_TIMEOUT))
}
