//! The command path (ARCHITECTURE.md, "Flow of one command"): actor and time, load the state of
//! the streams the commands touch (cached aggregate + the events since), decide with the rules
//! core, append every event atomically with the expected versions, reply with positions and
//! new balances. A rejection moves no chips and is recorded for auditors (R-AUDIT-3). A version
//! conflict reloads and decides again, a bounded number of times. Idempotency: the client's
//! command id and the hash of the request bytes; a repeat returns the first answer, a refusal
//! included: a refusal is recorded durably (chained, naming the player and gaming day) before it
//! is answered, and the same id with the same request answers the same status bytes for good.
//!
//! Before anything is read or decided, a command passes the edge checks of trust: the caller
//! may act on the property it names (tenancy), a table's game key is one of the room's, and
//! every approver, signer and supervisor it names is proven ([`crate::approval`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chipledger_proto::v1 as pb;
use chipledger_proto::{self as convert, CorrectionRequest, Decidable, Envelope, FieldErrors, WireCommand, entry_command_id};
use chipledger_rules::{
    self as rules, Actor, CageState, Command, CommandContext, Event, PlayerState, Role, Snapshot, StreamId,
    TableState,
};
use chipledger_store::{
    AppendOutcome, AppendRequest, CommandRecord, EventMetadata, ExpectedVersion, NewEvent, NewPosting,
    RefusalOutcome, RejectionRecord, StoreError, StreamAppend,
};
use opentelemetry::KeyValue;
use prost::Message;
use serde::{Deserialize, Serialize};
use tonic::Status;
use tracing::Instrument;
use uuid::Uuid;

use crate::access::{self, Authenticator, Principal};
use crate::approval::{self, ApprovalKey, ApprovalKeyError};
use crate::config::{Limits, PropertyConfig, is_valid_property_id};
use crate::shards::{ReadView, ReadWish, Reloaded, Router, RouterError};
use crate::shutdown::Drain;
use crate::status;
use crate::telemetry;

/// Events read per page while catching a stream up.
const READ_PAGE: i64 = 1_000;
/// The table events of a hand: a correction of one of them is a correction of the whole hand.
const HAND_EVENT_TYPES: &[&str] =
    &["HandStarted", "Posted", "Acted", "RoundStarted", "UpCardsDealt", "ShortBetBroughtUp", "SidePotPaid", "HandSettled", "HandEnded"];
/// Most events one hand may span on its table stream (bound of the search for its start).
const MAX_HAND_EVENTS: i64 = 2_000;
/// Stream states kept in memory (bound); the least recently used goes first.
const MAX_CACHED_STREAMS: usize = 10_000;
/// Stored payload format of every event this server writes.
const SCHEMA_VERSION: i16 = 1;

/// The state of one stream as the rules core sees it.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // one per loaded stream; boxing buys nothing here
pub enum StreamState {
    Table(TableState),
    Player(PlayerState),
    Cage(CageState),
}

impl StreamState {
    fn empty(stream: &StreamId) -> StreamState {
        match stream {
            StreamId::Table(_) => StreamState::Table(TableState::default()),
            StreamId::Player(_) => StreamState::Player(PlayerState::default()),
            StreamId::Cage(_) => StreamState::Cage(CageState::default()),
        }
    }

    /// Applies an event just decided. A mismatch of stream and event kind is a core bug.
    fn evolve_decided(self, event: &Event) -> Result<StreamState, Status> {
        Ok(match (self, event) {
            (StreamState::Table(state), Event::Table(event)) => StreamState::Table(state.evolve(event)),
            (StreamState::Player(state), Event::Player(event)) => StreamState::Player(state.evolve(event)),
            (StreamState::Cage(state), Event::Cage(event)) => StreamState::Cage(state.evolve(event)),
            (_, event) => {
                return Err(status::internal("decide", &format!("event {} on a stream of another kind", event.event_type())));
            }
        })
    }

    pub fn as_table(&self) -> Option<&TableState> {
        match self {
            StreamState::Table(state) => Some(state),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
struct Cached {
    state: StreamState,
    version: i64,
    last_used: u64,
}

/// Aggregates by (property, stream): a hit only needs the events after its version.
#[derive(Debug, Default)]
struct StateCache {
    entries: HashMap<(String, String), Cached>,
    tick: u64,
}

impl StateCache {
    fn get(&mut self, key: &(String, String)) -> Option<(StreamState, i64)> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|cached| {
            cached.last_used = tick;
            (cached.state.clone(), cached.version)
        })
    }

    fn put(&mut self, key: (String, String), state: StreamState, version: i64) {
        self.tick += 1;
        if let Some(existing) = self.entries.get(&key)
            && existing.version > version
        {
            return; // a newer state is already cached
        }
        if self.entries.len() >= MAX_CACHED_STREAMS && !self.entries.contains_key(&key) {
            let oldest = self.entries.iter().min_by_key(|(_, cached)| cached.last_used).map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                self.entries.remove(&oldest);
            }
        }
        self.entries.insert(key, Cached { state, version, last_used: self.tick });
    }

    fn forget(&mut self, key: &(String, String)) {
        self.entries.remove(key);
    }
}

/// One command of a submission.
struct Entry {
    rpc: &'static str,
    decidable: Decidable,
    device: Option<String>,
}

/// What the reply needs that only the append can tell (positions), kept with the command so
/// that a replay rebuilds the same answer: the order events were sent in, and the reply with
/// zero positions. Stored once per append as these protobuf bytes (chained by their SHA-256).
#[derive(Clone, PartialEq, Message)]
struct StoredReply {
    /// Streams in request order, each with its event ids in order.
    #[prost(message, repeated, tag = "1")]
    layout: Vec<StreamLayout>,
    /// Positions and versions still zero.
    #[prost(message, optional, tag = "2")]
    result: Option<pb::BatchResult>,
}

#[derive(Clone, PartialEq, Message)]
struct StreamLayout {
    #[prost(string, tag = "1")]
    stream: String,
    /// The events' ids, 16 bytes each.
    #[prost(bytes = "vec", repeated, tag = "2")]
    event_ids: Vec<Vec<u8>>,
}

/// The stored reply of appends recorded before it was protobuf: JSON with the result as hex.
/// Read for replays of those commands; never written.
#[derive(Deserialize)]
struct JsonStoredReply {
    layout: Vec<(String, Vec<Uuid>)>,
    result_hex: String,
}

impl StoredReply {
    fn decode_stored(bytes: &[u8]) -> Result<StoredReply, String> {
        // A JSON object starts with '{' (0x7b): as protobuf that would be field 15 as a group,
        // which this message never holds.
        if bytes.first() != Some(&b'{') {
            return StoredReply::decode(bytes).map_err(|error| error.to_string());
        }
        let json: JsonStoredReply = serde_json::from_slice(bytes).map_err(|error| error.to_string())?;
        let result = hex::decode(&json.result_hex).map_err(|error| error.to_string())?;
        Ok(StoredReply {
            layout: json
                .layout
                .into_iter()
                .map(|(stream, ids)| StreamLayout { stream, event_ids: ids.iter().map(|id| id.as_bytes().to_vec()).collect() })
                .collect(),
            result: Some(pb::BatchResult::decode(result.as_slice()).map_err(|error| error.to_string())?),
        })
    }
}

/// The command service: stateless apart from the cache, so replicas can run side by side.
pub struct Ledger {
    /// Which database holds each property's chain (and answers its reads), with the
    /// properties themselves: both reloadable ([`Ledger::reload`]).
    router: Arc<Router>,
    limits: Limits,
    /// Every configured principal: who authenticates, and who an approval names.
    authenticator: Arc<Authenticator>,
    approval_key: Arc<ApprovalKey>,
    cache: Mutex<StateCache>,
    drain: Drain,
    db: telemetry::DbTracing,
    checkpointer: Option<std::sync::Arc<crate::checkpoints::Checkpointer>>,
}

fn now_unix_ms() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

/// A store failure as the API reports it.
pub fn store_status(context: &str, error: StoreError) -> Status {
    match error {
        StoreError::IdempotencyConflict { command_id } => status::command_id_reused(&command_id),
        StoreError::SchemaMismatch { .. } => status::unavailable(context, &error),
        StoreError::VersionConflict { stream, expected, .. } => status::version_conflict(&stream, expected, 1),
        StoreError::Contention(_) => status::version_conflict("(several)", -1, 1),
        StoreError::InvalidRequest(message) => status::invalid_field("request", message),
        StoreError::NoPartition { recorded_at_micros, partitions_until_micros } => {
            status::partition_missing(recorded_at_micros, partitions_until_micros)
        }
        StoreError::Archived { position, archived_through } => status::position_archived(position, archived_through),
        StoreError::Database(error) if is_unstorable_text(&error) => status::invalid_field(
            "request",
            "a string holds a character PostgreSQL cannot store (NUL or an invalid escape)",
        ),
        StoreError::Database(error) if is_connection_failure(&error) => status::unavailable(context, &error),
        // Unbalanced postings or a negative balance refused by PostgreSQL: the rules core let
        // through what the database's own invariants (R-UNIT-3, R-UNIT-4) refuse. Nothing was
        // written; it is a bug to investigate, not a user error.
        other => status::internal(context, &other),
    }
}

/// The failure of an append whose transaction may or may not have committed: the connection
/// went away after the statements were sent (the COMMIT may have reached the server). Refusals
/// the store knows to be before any write keep their own answers.
fn append_status(command_id: &str, error: StoreError) -> Status {
    match error {
        StoreError::Database(sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) => {
            // No connection was ever handed out: nothing was sent.
            status::unavailable("append", &error)
        }
        StoreError::Database(ref database) if is_connection_failure(database) => {
            status::outcome_unknown(command_id, &error)
        }
        other => store_status("append", other),
    }
}

/// A SQLSTATE PostgreSQL gives for text it cannot hold (22021 character_not_in_repertoire,
/// 22P05 untranslatable_character, e.g. a NUL): the request's fault, not the server's.
fn is_unstorable_text(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(database) if matches!(database.code().as_deref(), Some("22021" | "22P05")))
}

/// The database went away or is not accepting connections: I/O, TLS or protocol errors, the
/// pool giving up, and the SQLSTATEs of connection loss (08*) and of a server shutting down or
/// starting (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now).
fn is_connection_failure(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(database) => database
            .code()
            .is_some_and(|code| code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03")),
        _ => false,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LedgerSetupError {
    #[error(transparent)]
    ApprovalKey(#[from] ApprovalKeyError),
}

impl Ledger {
    /// A ledger serving the properties, principals and limits of a server configuration, with
    /// its approval signing key (created under the data directory on the first start unless a
    /// key file is configured).
    pub fn for_config(
        store: chipledger_store::Store,
        config: &crate::config::Config,
        drain: Drain,
    ) -> Result<Ledger, LedgerSetupError> {
        let key = ApprovalKey::load(&config.approval_key)?;
        Ok(Ledger::with_key(store, config, key, drain))
    }

    /// As [`Ledger::for_config`], over a router of property shards ([`Router::connect`]).
    pub fn for_router(router: Arc<Router>, config: &crate::config::Config, drain: Drain) -> Result<Ledger, LedgerSetupError> {
        let key = ApprovalKey::load(&config.approval_key)?;
        Ok(Ledger::with_router(router, config, key, drain))
    }

    /// As [`Ledger::for_config`], with a given approval key.
    pub fn with_key(store: chipledger_store::Store, config: &crate::config::Config, key: ApprovalKey, drain: Drain) -> Ledger {
        let router = Router::single(store, config.properties.clone());
        Ledger::with_router(Arc::new(router), config, key, drain)
    }

    /// As [`Ledger::with_key`], over a router of property shards ([`Router::connect`]).
    pub fn with_router(router: Arc<Router>, config: &crate::config::Config, key: ApprovalKey, drain: Drain) -> Ledger {
        Ledger {
            db: telemetry::DbTracing::for_pool(router.default_primary().pool()),
            router,
            limits: config.limits,
            authenticator: Arc::new(Authenticator::from_config(config)),
            approval_key: Arc::new(key),
            cache: Mutex::new(StateCache::default()),
            drain,
            checkpointer: None,
        }
    }

    /// Who may call: the gate authenticates with the same principals approvals are checked against.
    pub fn authenticator(&self) -> Arc<Authenticator> {
        self.authenticator.clone()
    }

    pub fn approval_key(&self) -> &ApprovalKey {
        &self.approval_key

    }

    /// Sign checkpoints with this (the RPCs use it; main runs its periodic task).
    pub fn with_checkpointer(mut self, checkpointer: std::sync::Arc<crate::checkpoints::Checkpointer>) -> Ledger {
        self.checkpointer = Some(checkpointer);
        self
    }

    pub fn checkpointer(&self) -> Option<&crate::checkpoints::Checkpointer> {
        self.checkpointer.as_deref()
    }

    pub fn router(&self) -> &Arc<Router> {
        &self.router
    }

    /// The primary holding `property`'s chain.
    pub fn store_of(&self, property: &str) -> chipledger_store::Store {
        self.router.primary(property)
    }

    /// The database a read of `property` goes to ([`Router::reader`]), as the caller asks
    /// ([`ReadWish::from_metadata`]: read-your-writes, a tighter staleness bound).
    pub async fn reader(&self, property: &str, wish: ReadWish) -> Result<ReadView, Status> {
        self.db
            .call("choose_reader", "events", self.router.reader(property, wish))
            .await
            .map_err(|error| store_status("choose a database to read", error))
    }

    /// The properties and shard map of `config` in place of the running ones (SIGHUP). The
    /// cache of stream states is emptied when a property moved.
    pub async fn reload(&self, config: &crate::config::Config) -> Result<Reloaded, RouterError> {
        let reloaded = self.router.reload(config).await?;
        if !reloaded.moved.is_empty() {
            *self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = StateCache::default();
        }
        Ok(reloaded)
    }

    /// Database spans for store calls (every store call runs inside one).
    pub fn db(&self) -> &telemetry::DbTracing {
        &self.db
    }

    /// One store call inside its database span ([`telemetry::DbTracing::call`]).
    pub async fn db_call<T>(
        &self,
        operation: &'static str,
        collection: &'static str,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        self.db.call(operation, collection, call).await
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The property a request names (empty: the default), once the caller may act on it:
    /// INVALID_ARGUMENT for an id that is not of the form of table ids, PERMISSION_DENIED for a
    /// property outside the principal's, NOT_FOUND for one this server does not serve.
    pub fn property(&self, principal: &Principal, requested: &str) -> Result<String, Status> {
        self.property_at(principal, requested, "property_id").map(|property| property.id.clone())
    }

    /// The settings of the property a request names (as [`Ledger::property`]).
    pub fn property_config(&self, principal: &Principal, requested: &str) -> Result<Arc<PropertyConfig>, Status> {
        self.property_at(principal, requested, "property_id")
    }

    fn property_at(&self, principal: &Principal, requested: &str, field: &str) -> Result<Arc<PropertyConfig>, Status> {
        let properties = self.router.properties();
        let id = if requested.is_empty() { properties.default_id() } else { requested };
        if !is_valid_property_id(id) {
            return Err(status::invalid_field(field, "1 to 64 characters of A-Z a-z 0-9 _ . -"));
        }
        access::authorize_property(principal, id)?;
        properties.get(id).cloned().ok_or_else(|| status::not_found("property", id))
    }

    /// One typed command RPC.
    pub async fn submit<T: WireCommand>(&self, principal: &Principal, request: T) -> Result<pb::CommandResult, Status> {
        let mut errors = FieldErrors::new();
        let envelope = convert::envelope(&mut errors, "header", request.header());
        let decidable = request.to_domain(&mut errors);
        let (Some(envelope), Some(decidable)) = (envelope, decidable) else {
            return Err(errors.into_status());
        };
        let property = self.property_at(principal, &envelope.property_id, "header.property_id")?;
        check_room(&property, &decidable, "")?;
        let request_hash = request_hash(T::RPC, &request.encode_to_vec());
        let approvals = request.header().map_or(&[][..], |header| header.approvals.as_slice());
        let fields = request.approval_fields();
        if !approvals.is_empty() || fields.iter().any(|(_, named)| named.is_some()) {
            let digest = approval::command_digest(T::RPC, &request.approval_bytes(&envelope.command_id, &property.id));
            let subject = approval::Subject { property_id: &property.id, rpc: T::RPC, command_id: &envelope.command_id, digest };
            if let Err(refused) = self.check_approvals(principal, &subject, &fields, approvals, "") {
                let mut replay = self.replay_or(refused, &property.id, &envelope.command_id, &request_hash).await?;
                let mut result = replay.results.pop().ok_or_else(|| status::internal("reply", &"no result"))?;
                result.replayed = replay.replayed;
                return Ok(result);
            }
        }
        let device = envelope.device.clone();
        let entries = vec![Entry { rpc: T::RPC, decidable, device }];
        let mut batch = self.run(principal, &property, envelope, entries, request_hash).await?;
        let mut result = batch.results.pop().ok_or_else(|| status::internal("reply", &"no result"))?;
        result.replayed = batch.replayed;
        Ok(result)
    }

    /// `RecordBatch`: every command decided in order, one atomic append.
    pub async fn submit_batch(&self, principal: &Principal, request: pb::RecordBatch) -> Result<pb::BatchResult, Status> {
        let mut errors = FieldErrors::new();
        let envelope = convert::envelope(&mut errors, "header", request.header.as_ref());
        let max = self.limits.max_batch_commands as usize;
        if request.commands.is_empty() || request.commands.len() > max {
            errors.add("commands", format!("1 to {max} commands"));
        }
        if request.header.as_ref().is_some_and(|header| !header.approvals.is_empty()) {
            errors.add("header.approvals", "approvals go in the header of the command they approve (commands[i].header.approvals)");
        }
        let mut entries = Vec::with_capacity(request.commands.len().min(max));
        let mut approved = Vec::new();
        for (index, command) in request.commands.iter().enumerate().take(max) {
            let Some(command) = &command.command else {
                errors.add(format!("commands[{index}]"), "empty command");
                continue;
            };
            let mut entry_errors = FieldErrors::new();
            let (header, rpc, decidable) = convert::batch_entry(command, &mut entry_errors);
            for violation in entry_errors.into_violations() {
                errors.add(format!("commands[{index}].{}", violation.field), violation.description);
            }
            // Each command is checked against the role table as if sent on its own.
            access::authorize(principal, rpc)?;
            if header.is_some_and(|header| !header.approvals.is_empty()) || rpc_has_approvals(rpc) {
                approved.push((index, command));
            }
            if let Some(decidable) = decidable {
                let device = header.and_then(|header| header.device.clone());
                entries.push(Entry { rpc, decidable, device });
            }
        }
        let Some(envelope) = envelope else { return Err(errors.into_status()) };
        errors.finish()?;
        let property = self.property_at(principal, &envelope.property_id, "header.property_id")?;
        for (index, entry) in entries.iter().enumerate() {
            check_room(&property, &entry.decidable, &format!("commands[{index}]."))?;
        }
        let request_hash = request_hash("/chipledger.v1.LedgerService/RecordBatch", &request.encode_to_vec());
        for (index, command) in approved {
            let command_id = entry_command_id(&envelope.command_id, index);
            let view = convert::approval_view(command, &command_id, &property.id);
            let approvals = view.header.map_or(&[][..], |header| header.approvals.as_slice());
            if approvals.is_empty() && view.fields.iter().all(|(_, named)| named.is_none()) {
                continue;
            }
            let digest = approval::command_digest(view.rpc, &view.bytes);
            let subject = approval::Subject { property_id: &property.id, rpc: view.rpc, command_id: &command_id, digest };
            if let Err(refused) = self.check_approvals(principal, &subject, &view.fields, approvals, &format!("commands[{index}].")) {
                return self.replay_or(refused, &property.id, &envelope.command_id, &request_hash).await;
            }
        }
        self.run(principal, &property, envelope, entries, request_hash).await
    }

    /// A command whose approvals no longer check (typically expired since) that was recorded
    /// with these very bytes when they did: the recorded answer, as for any resend of the same
    /// command (a resend after OUTCOME_UNKNOWN must stay safe). Anything else: `refused`.
    async fn replay_or(
        &self,
        refused: Status,
        property: &str,
        command_id: &str,
        request_hash: &[u8; 32],
    ) -> Result<pb::BatchResult, Status> {
        match self.recorded(property, command_id).await? {
            Some(chipledger_store::RecordedCommand::Accepted { request_hash: hash, outcome }) if &hash == request_hash => {
                rebuild_reply(&outcome)
            }
            Some(chipledger_store::RecordedCommand::Refused { request_hash: hash, refusal }) if &hash == request_hash => {
                Err(status_from_reply(&refusal.record.reply)?)
            }
            _ => Err(refused),
        }
    }

    fn check_approvals(
        &self,
        principal: &Principal,
        subject: &approval::Subject<'_>,
        fields: &[(&'static str, Option<&str>)],
        tokens: &[String],
        prefix: &str,
    ) -> Result<(), Status> {
        let checked =
            approval::check(&self.approval_key, &self.authenticator, principal, subject, fields, tokens, prefix, now_unix_ms());
        if let Err(status) = &checked {
            let reason = tonic_types::StatusExt::get_error_details(status)
                .error_info()
                .map(|info| info.reason.clone())
                .unwrap_or_default();
            tracing::warn!(
                principal = %principal.id,
                rpc = subject.rpc,
                command_id = subject.command_id,
                %reason,
                "approval refused: {}",
                status.message()
            );
            telemetry::metrics().approvals_refused.add(1, &[KeyValue::new("chipledger.reason_code", reason)]);
        }
        checked
    }

    /// `ApprovalService.Approve`: the caller approves `command` as a second person. Refused
    /// unless the caller's role may fill some second-person field of that command and the
    /// caller may act on its property; nothing is written.
    pub fn approve(&self, approver: &Principal, request: &pb::ApproveRequest) -> Result<pb::ApprovalToken, Status> {
        let Some(command) = request.command.as_ref().and_then(|command| command.command.as_ref()) else {
            return Err(status::invalid_field("command", "required: the command approved"));
        };
        let ttl = match request.ttl_seconds {
            0 => approval::DEFAULT_TTL,
            seconds if u64::from(seconds) <= approval::MAX_TTL.as_secs() => std::time::Duration::from_secs(u64::from(seconds)),
            _ => return Err(status::invalid_field("ttl_seconds", format!("at most {}", approval::MAX_TTL.as_secs()))),
        };
        let probe = convert::approval_view(command, "", "");
        // A batch entry is approved under its entry id, "<batch id>/<index>" (index >= 1).
        let mut header = probe.header.cloned().unwrap_or_default();
        let entry_index = match header.command_id.rsplit_once('/') {
            Some((batch_id, index)) => {
                let max = self.limits.max_batch_commands as usize;
                match index.parse::<usize>() {
                    Ok(parsed) if (1..max).contains(&parsed) && parsed.to_string() == index => {
                        header.command_id = batch_id.to_string();
                        Some(parsed)
                    }
                    _ => {
                        return Err(status::invalid_field(
                            "command.header.command_id",
                            format!("a batch entry id is <batch id>/<index>, index 1 to {}", max - 1),
                        ));
                    }
                }
            }
            None => None,
        };
        let mut errors = FieldErrors::new();
        let envelope = convert::envelope(&mut errors, "command.header", Some(&header));
        let Some(mut envelope) = envelope else { return Err(errors.into_status()) };
        if let Some(index) = entry_index {
            envelope.command_id = entry_command_id(&envelope.command_id, index);
        }
        if self.authenticator.principal_by_id(&approver.id).is_none() {
            // The anonymous caller of a development server is nobody a command could name.
            return Err(<Status as tonic_types::StatusExt>::with_error_details(
                tonic::Code::PermissionDenied,
                format!("{} is no configured principal and cannot approve; approve with a principal's own credentials", approver.id),
                tonic_types::ErrorDetails::with_error_info("APPROVER_NOT_AUTHORIZED", status::DOMAIN, std::collections::HashMap::new()),
            ));
        }
        if !access::may_approve(approver.role, probe.rpc) {
            let metadata = std::collections::HashMap::from([
                ("rpc".to_string(), probe.rpc.to_string()),
                ("role".to_string(), access::role_name(&approver.role).to_string()),
            ]);
            return Err(<Status as tonic_types::StatusExt>::with_error_details(
                tonic::Code::PermissionDenied,
                format!("role {} approves no field of {}", access::role_name(&approver.role), probe.rpc),
                tonic_types::ErrorDetails::with_error_info("ROLE_CANNOT_APPROVE", status::DOMAIN, metadata),
            ));
        }
        let property = self.property_at(approver, &envelope.property_id, "command.header.property_id")?;
        let view = convert::approval_view(command, &envelope.command_id, &property.id);
        let subject = approval::Subject {
            property_id: &property.id,
            rpc: view.rpc,
            command_id: &envelope.command_id,
            digest: approval::command_digest(view.rpc, &view.bytes),
        };
        let token = approval::issue(&self.approval_key, approver, &subject, ttl, now_unix_ms());
        tracing::info!(approver = %approver.id, rpc = view.rpc, command_id = %envelope.command_id, "approval issued");
        Ok(token)
    }

    fn context(&self, principal: &Principal, property: &PropertyConfig, envelope: &Envelope) -> Result<CommandContext, Status> {
        let importing = envelope.import_actor_id.is_some() || envelope.import_occurred_at_unix_ms.is_some();
        if importing && !matches!(principal.role, Role::Admin | Role::System) {
            return Err(status::invalid_field(
                "header.import_actor_id",
                "only admin or system principals may import with another actor or time",
            ));
        }
        let at_unix_ms = envelope.import_occurred_at_unix_ms.unwrap_or_else(now_unix_ms);
        let actor_id = envelope.import_actor_id.clone().unwrap_or_else(|| principal.id.clone());
        let gaming_day = property
            .gaming_day
            .gaming_day(at_unix_ms)
            .ok_or_else(|| status::invalid_field("header.import_occurred_at_unix_ms", "outside the gaming-day clock's range"))?;
        Ok(CommandContext { at_unix_ms, gaming_day, actor: Actor { id: actor_id, role: principal.role } })
    }

    async fn run(
        &self,
        principal: &Principal,
        property_config: &PropertyConfig,
        envelope: Envelope,
        entries: Vec<Entry>,
        request_hash: [u8; 32],
    ) -> Result<pb::BatchResult, Status> {
        tracing::Span::current().record("chipledger.command_id", envelope.command_id.as_str());
        let property = property_config.id.clone();
        let aml = &property_config.aml;
        let context = self.context(principal, property_config, &envelope)?;
        // Refused once shutdown has begun; appends already started are waited for.
        if self.drain.enter().is_none() {
            return Err(status::shutting_down());
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            // First on the cached states as they are (a stale one ends in a version conflict
            // at the append, which forgets it and decides again); a refusal is only given on
            // states read up to the head, so a cache behind another replica never refuses.
            let mut decision = self.decide_all(&property, aml, &context, &envelope, &entries, false).await?;
            if decision.is_err() {
                decision = self.decide_all(&property, aml, &context, &envelope, &entries, true).await?;
            }
            let decision = match decision {
                Ok(decision) => decision,
                Err(refused) => return self.refuse(&property, &context, &envelope, &request_hash, refused).await,
            };
            let started = Instant::now();
            // The append runs in its own task holding a drain guard: it reaches its COMMIT (or
            // rollback) even if the caller goes away, and shutdown waits for it.
            let request = decision.request(&property, &envelope, request_hash)?;
            let in_flight = self.drain.enter().ok_or_else(status::shutting_down)?;
            let store = self.router.primary(&property);
            let db = self.db.clone();
            // The span is made here, under the RPC span; the task carries it.
            let appended = tokio::spawn(
                async move {
                    let _in_flight = in_flight;
                    db.call("append", "events", store.append(&request)).await
                }
                .in_current_span(),
            )
            .await
            .map_err(|error| status::internal("append task", &error))?;
            telemetry::metrics().append_duration.record(telemetry::millis(started.elapsed()), &[]);
            match appended {
                Ok(outcome) => {
                    if !outcome.replayed {
                        self.remember(&property, &decision, &outcome);
                        for event_type in &decision.event_types {
                            telemetry::metrics()
                                .events_appended
                                .add(1, &[KeyValue::new("chipledger.event_type", *event_type)]);
                        }
                    }
                    return rebuild_reply(&outcome);
                }
                Err(StoreError::VersionConflict { stream, expected, .. }) => {
                    telemetry::metrics().version_conflicts.add(1, &[]);
                    self.cache_forget(&property, &stream);
                    if attempt > self.limits.conflict_retries {
                        return Err(status::version_conflict(&stream, expected, attempt));
                    }
                    tracing::debug!(%stream, attempt, "version conflict, deciding again");
                }
                // Refused before with this very request (R-AUDIT-3): that refusal answers.
                Err(StoreError::RefusedBefore { refusal_seq, .. }) => return self.replay_refusal(&property, refusal_seq).await,
                Err(error) => return Err(append_status(&envelope.command_id, error)),
            }
        }
    }

    /// The stored answer of a command id refused before.
    async fn replay_refusal(&self, property: &str, refusal_seq: i64) -> Result<pb::BatchResult, Status> {
        let refusal = self
            .db
            .call("find_refusal", "rejections", self.router.primary(property).refusal(property, refusal_seq))
            .await
            .map_err(|error| store_status("find refusal", error))?
            .ok_or_else(|| status::internal("find refusal", &format!("refusal {refusal_seq} is missing")))?;
        Err(status_from_reply(&refusal.record.reply)?)
    }

    /// A refusal: recorded durably (R-AUDIT-3, chained, with the exact answer) and only then
    /// answered. If the command id is already known with this very request, what it is answers
    /// instead: the first refusal, byte for byte, or the result of a command that went through
    /// (a retry of it, which the changed state now refuses).
    async fn refuse(
        &self,
        property: &str,
        context: &CommandContext,
        envelope: &Envelope,
        request_hash: &[u8; 32],
        refused: Refused<'_>,
    ) -> Result<pb::BatchResult, Status> {
        let Refused { index, rejection, streams, command, player_id } = refused;
        let mut status = status::rejection(&rejection);
        if let Ok(value) = index.to_string().parse() {
            status.metadata_mut().insert(COMMAND_INDEX_HEADER, value);
        }
        let record = RejectionRecord {
            property: property.to_string(),
            command_id: envelope.command_id.clone(),
            reason_code: rejection.reason.code.to_string(),
            rule_id: rejection.reason.rule.to_string(),
            numbers: rejection.numbers.iter().map(|(name, value)| ((*name).to_string(), *value)).collect(),
            detail: rejection.detail.clone(),
            actor_id: context.actor.id.clone(),
            actor_role: access::role_name(&context.actor.role).to_string(),
            device: envelope.device.clone(),
            streams,
            request: serde_json::json!({ "index": index, "command": command }),
            request_hash: *request_hash,
            player_id,
            gaming_day: Some(context.gaming_day.clone()),
            reply: status_to_reply(&status),
        };
        let recorded = self.db.call("record_refusal", "rejections", self.router.primary(property).record_refusal(&record)).await;
        match recorded {
            Ok(RefusalOutcome::Recorded(_)) => {
                telemetry::metrics().rejections.add(
                    1,
                    &[
                        KeyValue::new("chipledger.reason_code", rejection.reason.code),
                        KeyValue::new("chipledger.rule_id", rejection.reason.rule),
                    ],
                );
                Err(status)
            }
            Ok(RefusalOutcome::Replayed(first)) => Err(status_from_reply(&first.record.reply)?),
            Ok(RefusalOutcome::Accepted(outcome)) => rebuild_reply(&outcome),
            // Not recorded, so not answered as a refusal: the caller retries with the same id.
            Err(error) => Err(store_status("record refusal", error)),
        }
    }

    /// Decides every entry in order on a working copy of the loaded states; `catch_up` reads
    /// the events after a cached state's version first (see [`Ledger::load`]).
    #[allow(clippy::too_many_arguments)]
    async fn decide_all<'e>(
        &self,
        property: &str,
        aml: &rules::AmlThresholds,
        context: &CommandContext,
        envelope: &Envelope,
        entries: &'e [Entry],
        catch_up: bool,
    ) -> Result<Result<Decision, Refused<'e>>, Status> {
        let mut decision = Decision::default();
        let mut commands = Vec::with_capacity(entries.len());
        for entry in entries {
            commands.push(match &entry.decidable {
                Decidable::Command(command) => command.clone(),
                Decidable::Correction(correction) => self.correction_command(property, correction).await?,
            });
        }
        for (index, (entry, command)) in entries.iter().zip(&commands).enumerate() {
            let mut streams = command.streams();
            self.load_into(&mut decision, property, &streams, catch_up).await?;
            // Streams that depend on what the loaded states hold (R-REBUY-1: a cash-out binds
            // the patron's other seats of the game when a room allows two).
            let dependent = command.dependent_streams(&snapshot_of(&decision.states, &streams, aml.clone()));
            if !dependent.is_empty() {
                self.load_into(&mut decision, property, &dependent, catch_up).await?;
                streams.extend(dependent);
            }
            let decided = {
                let snapshot = snapshot_of(&decision.states, &streams, aml.clone());
                let _span = tracing::info_span!("rules.decide", rpc = entry.rpc).entered();
                rules::decide(&snapshot, context, command)
            };
            let events = match decided {
                Ok(events) => events,
                Err(rejection) => {
                    let keys = streams.iter().map(StreamId::key).collect();
                    let original = match &entry.decidable {
                        Decidable::Command(command) => Some(command),
                        Decidable::Correction(_) => None,
                    };
                    let player_id = refused_player(command, &decision.states);
                    return Ok(Err(Refused { index, rejection, streams: keys, command: original, player_id }));
                }
            };
            decision.record(index, entry, envelope, context, events)?;
        }
        Ok(Ok(decision))
    }

    /// Loads into `decision` each of `streams` it does not hold yet.
    async fn load_into(&self, decision: &mut Decision, property: &str, streams: &[StreamId], catch_up: bool) -> Result<(), Status> {
        for stream in streams {
            if !decision.states.contains_key(stream) {
                let (state, version) = self.load_state(property, stream, catch_up).await?;
                decision.order.push(stream.clone());
                decision.base_versions.insert(stream.clone(), version);
                decision.states.insert(stream.clone(), state);
            }
        }
        Ok(())
    }

    /// Completes a correction from the log: the reversed event's table and postings (R-AUDIT-1).
    async fn correction_command(&self, property: &str, correction: &CorrectionRequest) -> Result<Command, Status> {
        let Ok(event_id) = Uuid::parse_str(&correction.reverses_event_id) else {
            return Err(status::invalid_field("reverses_event_id", "not a UUID"));
        };
        let found = self
            .db
            .call("find_event", "events", self.router.primary(property).event_location(property, event_id))
            .await
            .map_err(|error| store_status("find reversed event", error))?;
        let Some((stream, version)) = found else {
            return Err(status::not_found("event", &correction.reverses_event_id));
        };
        let events = self
            .db
            .call("read_stream", "events", self.router.primary(property).read_stream(property, &stream, version - 1, 1))
            .await
            .map_err(|error| store_status("read reversed event", error))?;
        let event = events.first().ok_or_else(|| status::not_found("event", &correction.reverses_event_id))?;
        if stream.starts_with("table-") && HAND_EVENT_TYPES.contains(&event.event_type.as_str()) {
            return self.hand_correction(property, &stream, version, correction).await;
        }
        correction_for(&stream, &event.payload, &event.postings, correction)
    }

    /// R-AUDIT-1 with R-UNIT-4: an event of a hand is corrected with its whole hand (a pot is
    /// never left holding chips between hands): the postings of every event from the hand's
    /// `HandStarted` to its `HandEnded`, netted per account, reversed under the id of the
    /// `HandStarted` (so the hand is corrected once, whichever of its events is named).
    async fn hand_correction(&self, property: &str, stream: &str, version: i64, correction: &CorrectionRequest) -> Result<Command, Status> {
        let from = (version - MAX_HAND_EVENTS).max(0);
        let mut events = Vec::new();
        let mut after = from;
        loop {
            let page = self
                .db
                .call("read_stream", "events", self.router.primary(property).read_stream(property, stream, after, READ_PAGE))
                .await
                .map_err(|error| store_status("read the corrected hand", error))?;
            let Some(last) = page.last() else { break };
            after = last.stream_version;
            let ended = page.iter().any(|event| event.stream_version >= version && event.event_type == "HandEnded");
            events.extend(page);
            if ended || after >= version + MAX_HAND_EVENTS {
                break;
            }
        }
        let start = events
            .iter()
            .rposition(|event| event.stream_version <= version && event.event_type == "HandStarted")
            .ok_or_else(|| status::invalid_field("reverses_event_id", "the hand of this event could not be found"))?;
        let hand = &events[start..];
        let end = hand.iter().position(|event| event.event_type == "HandEnded").map_or(hand.len(), |i| i + 1);
        let mut net: Vec<NewPosting> = Vec::new();
        for posting in hand[..end].iter().flat_map(|event| &event.postings) {
            match net.iter_mut().find(|p| p.account == posting.account) {
                Some(p) => p.amount_cents += posting.amount_cents,
                None => net.push(posting.clone()),
            }
        }
        net.retain(|p| p.amount_cents != 0);
        let whole = CorrectionRequest { reverses_event_id: hand[0].event_id.to_string(), ..correction.clone() };
        correction_for(stream, &hand[0].payload, &net, &whole)
    }

    /// The state of a stream as of the head: the cached aggregate plus the events after it.
    pub async fn load(&self, property: &str, stream: &StreamId) -> Result<(StreamState, i64), Status> {
        self.load_state(property, stream, true).await
    }

    /// The state of a stream; without `catch_up` a cached aggregate is taken as it is. That
    /// is safe for a decision that is then appended: every loaded stream goes into the append
    /// with its version as the expected one, so a state behind the log is refused there
    /// (version conflict), forgotten and read again. It saves a read per stream per command.
    async fn load_state(&self, property: &str, stream: &StreamId, catch_up: bool) -> Result<(StreamState, i64), Status> {
        let key = (property.to_string(), stream.key());
        let cached = self.cache.lock().map_err(|_| status::internal("cache", &"poisoned"))?.get(&key);
        if !catch_up && let Some(cached) = cached {
            return Ok(cached);
        }
        let (mut state, mut version) = cached.unwrap_or_else(|| (StreamState::empty(stream), 0));
        loop {
            let page = self
                .db
                .call("read_stream", "events", self.router.primary(property).read_stream(property, &key.1, version, READ_PAGE))
                .await
                .map_err(|error| store_status("read stream", error))?;
            for event in &page {
                if event.stream_version != version + 1 {
                    return Err(status::internal("read stream", &format!("{} skips version {}", key.1, version + 1)));
                }
                let decoded = chipledger_store::domain::event_from_payload(stream, &event.payload)
                    .map_err(|error| status::internal("decode stored event", &error))?;
                state = state.evolve_decided(&decoded)?;
                version = event.stream_version;
            }
            if (page.len() as i64) < READ_PAGE {
                break;
            }
        }
        if let Ok(mut cache) = self.cache.lock() {
            cache.put(key, state.clone(), version);
        }
        Ok((state, version))
    }

    fn remember(&self, property: &str, decision: &Decision, outcome: &AppendOutcome) {
        let Ok(mut cache) = self.cache.lock() else { return };
        for (stream_key, version) in &outcome.stream_versions {
            let Some(stream) = decision.order.iter().find(|stream| &stream.key() == stream_key) else { continue };
            if let Some(state) = decision.states.get(stream) {
                cache.put((property.to_string(), stream_key.clone()), state.clone(), *version);
            }
        }
    }

    fn cache_forget(&self, property: &str, stream: &str) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.forget(&(property.to_string(), stream.to_string()));
        }
    }

    /// What a command id already is: accepted (its request hash and outcome) or refused.
    async fn recorded(&self, property: &str, command_id: &str) -> Result<Option<chipledger_store::RecordedCommand>, Status> {
        self.db
            .call("find_command", "commands", self.router.primary(property).recorded_command(property, command_id))
            .await
            .map_err(|error| store_status("idempotency lookup", error))
    }
}

/// True when the command at `rpc` has second-person fields.
fn rpc_has_approvals(rpc: &str) -> bool {
    access::APPROVAL_RULES.iter().any(|rule| rule.rpc == rpc)
}

/// A table opened or reconfigured with a game key that is not one of the room's (when the
/// property lists them): INVALID_ARGUMENT, before anything is decided. The re-buy wait binds
/// room-wide by game key (R-REBUY-1); a key spelled another way would escape it. The rules
/// core's config validation has no notion of the room, so the server checks this edge.
fn check_room(property: &PropertyConfig, decidable: &Decidable, prefix: &str) -> Result<(), Status> {
    let (Some(keys), Decidable::Command(Command::Table(command))) = (&property.game_keys, decidable) else {
        return Ok(());
    };
    let (rules::TableOp::OpenTable { config } | rules::TableOp::ChangeConfig { config }) = &command.op else {
        return Ok(());
    };
    if keys.iter().any(|key| key == &config.game_key) {
        return Ok(());
    }
    Err(status::invalid_field(
        &format!("{prefix}config.game_key"),
        format!(
            "{:?} is not one of property {}'s game keys ({}); R-REBUY-1 binds room-wide by game key",
            config.game_key,
            property.id,
            keys.iter().map(|key| format!("{key:?}")).collect::<Vec<_>>().join(", ")
        ),
    ))
}

/// The rules command that reverses a stored event (R-AUDIT-1), by the stream it is on: a table
/// or cage event has its postings reversed; a player event (a record, no postings) is taken back
/// through the [`rules::PlayerReversal`] it allows: a cash transaction or a departure.
fn correction_for(
    stream: &str,
    payload: &serde_json::Value,
    postings: &[NewPosting],
    correction: &CorrectionRequest,
) -> Result<Command, Status> {
    let original_postings = || -> Result<Vec<rules::Posting>, Status> {
        postings
            .iter()
            .map(|posting| {
                let account = posting
                    .account
                    .parse::<rules::Account>()
                    .map_err(|_| status::internal("read reversed event", &format!("account {:?}", posting.account)))?;
                Ok(rules::Posting { account, amount_cents: posting.amount_cents })
            })
            .collect()
    };
    let stream_id =
        stream.parse::<StreamId>().map_err(|_| status::internal("read reversed event", &format!("stream {stream:?}")))?;
    let reverses_event_id = correction.reverses_event_id.clone();
    let approved_by = correction.approved_by.clone();
    let reason = correction.reason.clone();
    Ok(match stream_id {
        StreamId::Table(table_id) => Command::Table(rules::TableCommand {
            table_id,
            op: rules::TableOp::Correct { reverses_event_id, original_postings: original_postings()?, approved_by, reason },
        }),
        StreamId::Cage(cage_id) => Command::Cage(rules::CageCommand {
            cage_id,
            op: rules::CageOp::Correct { reverses_event_id, original_postings: original_postings()?, approved_by, reason },
        }),
        StreamId::Player(player_id) => {
            let event = rules::PlayerEvent::deserialize(payload).map_err(|error| status::internal("decode reversed event", &error))?;
            let reversal = match event {
                rules::PlayerEvent::CashTransaction { gaming_day, direction, amount_cents, .. } => {
                    rules::PlayerReversal::CashTransaction { gaming_day, direction, amount_cents }
                }
                rules::PlayerEvent::LeftTable { table_id, at_unix_ms, .. } => {
                    rules::PlayerReversal::Departure { table_id, at_unix_ms }
                }
                other => {
                    return Err(status::invalid_field(
                        "reverses_event_id",
                        format!(
                            "a {} on a player stream cannot be corrected: only CashTransaction and LeftTable can \
                             (chip movements are corrected on their table or cage event)",
                            other.event_type()
                        ),
                    ));
                }
            };
            Command::Player(rules::PlayerCommand {
                player_id,
                op: rules::PlayerOp::Correct { reverses_event_id, approved_by, reason, reversal },
            })
        }
    })
}

fn snapshot_of<'a>(
    states: &'a HashMap<StreamId, StreamState>,
    streams: &'a [StreamId],
    aml: rules::AmlThresholds,
) -> Snapshot<'a> {
    let mut snapshot = Snapshot::new();
    snapshot.aml = aml;
    for stream in streams {
        match (stream, states.get(stream)) {
            (StreamId::Table(id), Some(StreamState::Table(state))) => snapshot = snapshot.with_table(id, state),
            (StreamId::Player(id), Some(StreamState::Player(state))) => snapshot = snapshot.with_player(id, state),
            (StreamId::Cage(id), Some(StreamState::Cage(state))) => snapshot = snapshot.with_cage(id, state),
            _ => {}
        }
    }
    snapshot
}

/// SHA-256 over the RPC path and the request's protobuf bytes (deterministic for our
/// messages: no maps, fields in number order).
pub fn request_hash(rpc: &str, request_bytes: &[u8]) -> [u8; 32] {
    let mut bytes = Vec::with_capacity(rpc.len() + 1 + request_bytes.len());
    bytes.extend_from_slice(rpc.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(request_bytes);
    chipledger_store::request_hash(&bytes)
}

/// Where the index of the refused command of a batch goes in a refusal's metadata.
const COMMAND_INDEX_HEADER: &str = "x-chipledger-command-index";

/// A refusal as decided: which command, why, what it touched, whom it was about.
struct Refused<'e> {
    index: usize,
    rejection: rules::Rejection,
    streams: Vec<String>,
    command: Option<&'e Command>,
    player_id: Option<String>,
}

/// The patron a refused command was about: the player stream it touches, else the player at
/// the table seat it names (from the state it was decided on), else none.
fn refused_player(command: &Command, states: &HashMap<StreamId, StreamState>) -> Option<String> {
    let streams = command.streams();
    if let Some(player) = streams.iter().find_map(|stream| match stream {
        StreamId::Player(player) => Some(player.as_str().to_owned()),
        _ => None,
    }) {
        return Some(player);
    }
    let value = serde_json::to_value(command).ok()?;
    let op = value.pointer("/Table/op").or_else(|| value.pointer("/Cage/op"))?;
    if let Some(player) = op.get("player_id").and_then(serde_json::Value::as_str) {
        return Some(player.to_owned());
    }
    let seat = u8::try_from(op.get("seat")?.as_u64()?).ok()?;
    streams.iter().find_map(|stream| match states.get(stream) {
        Some(StreamState::Table(table)) => table.seat(seat).map(|occupant| occupant.player_id.as_str().to_owned()),
        _ => None,
    })
}

/// The answer of a refusal as stored with it (the store keeps the bytes unchanged): gRPC code,
/// message, the details (`grpc-status-details-bin`) and the command index, as JSON.
#[derive(Serialize, Deserialize)]
struct StoredStatus {
    code: i32,
    message: String,
    details_hex: String,
    command_index: Option<String>,
}

fn status_to_reply(status: &Status) -> Vec<u8> {
    let stored = StoredStatus {
        code: status.code() as i32,
        message: status.message().to_owned(),
        details_hex: hex::encode(status.details()),
        command_index: status.metadata().get(COMMAND_INDEX_HEADER).and_then(|value| value.to_str().ok()).map(str::to_owned),
    };
    serde_json::to_vec(&stored).expect("a status serialises")
}

fn status_from_reply(reply: &[u8]) -> Result<Status, Status> {
    let stored: StoredStatus = serde_json::from_slice(reply).map_err(|error| status::internal("decode refusal", &error))?;
    let details = hex::decode(&stored.details_hex).map_err(|error| status::internal("decode refusal", &error))?;
    let mut status = Status::with_details(tonic::Code::from(stored.code), stored.message, details.into());
    if let Some(index) = stored.command_index.and_then(|index| index.parse().ok()) {
        status.metadata_mut().insert(COMMAND_INDEX_HEADER, index);
    }
    Ok(status)
}

/// Events decided for a submission, per stream, and the reply without positions.
#[derive(Default)]
struct Decision {
    /// Streams in the order first touched (the append's request order).
    order: Vec<StreamId>,
    base_versions: HashMap<StreamId, i64>,
    states: HashMap<StreamId, StreamState>,
    events: HashMap<StreamId, Vec<NewEvent>>,
    /// Player sessions, departures, daily cash and credit lines, kept in the append transaction
    /// (R-REBUY-1, R-AUDIT-4, R-MARK-1): the writes of the typed player events, in event order.
    projection_ops: Vec<chipledger_store::ProjectionOp>,
    event_types: Vec<&'static str>,
    results: Vec<pb::CommandResult>,
}

impl Decision {
    fn record(
        &mut self,
        index: usize,
        entry: &Entry,
        envelope: &Envelope,
        context: &CommandContext,
        events: Vec<(StreamId, Event)>,
    ) -> Result<(), Status> {
        let command_id = entry_command_id(&envelope.command_id, index);
        let mut result = pb::CommandResult { command_id: command_id.clone(), ..Default::default() };
        let mut touched_accounts: Vec<String> = Vec::new();
        for (stream, event) in events {
            let state = self
                .states
                .remove(&stream)
                .ok_or_else(|| status::internal("decide", &format!("event for unloaded stream {stream}")))?;
            let config_version = state.as_table().and_then(|table| table.config.as_ref()).map_or(0, |c| i64::from(c.version));
            let postings: Vec<NewPosting> = event
                .postings()
                .iter()
                .map(|posting| NewPosting { account: posting.account.key(), amount_cents: posting.amount_cents })
                .collect();
            for posting in &postings {
                if !touched_accounts.contains(&posting.account) {
                    touched_accounts.push(posting.account.clone());
                }
            }
            let event_id = Uuid::now_v7();
            let new_event = NewEvent {
                event_id,
                event_type: event.event_type().to_string(),
                schema_version: SCHEMA_VERSION,
                payload: chipledger_store::domain::event_payload(&event),
                metadata: EventMetadata {
                    actor_id: context.actor.id.clone(),
                    actor_role: access::role_name(&context.actor.role).to_string(),
                    device: entry.device.clone().or_else(|| envelope.device.clone()),
                    command_id: Some(command_id.clone()),
                    correlation_id: Some(envelope.command_id.clone()),
                    causation_id: None,
                    trace_id: Some(telemetry::current_trace_id()).filter(|id| !id.is_empty()),
                    gaming_day: context.gaming_day.clone(),
                    config_version,
                    reason_code: Some(envelope.reason_note.clone()).filter(|note| !note.is_empty()),
                },
                postings,
            };
            if let (StreamId::Player(player_id), Event::Player(player_event)) = (&stream, &event) {
                chipledger_store::projection::player_ops(player_id, player_event, event_id, &mut self.projection_ops);
            }
            self.event_types.push(event.event_type());
            result.events.push(pb::AppendedEvent {
                global_position: 0,
                stream_id: stream.key(),
                stream_version: 0,
                event_type: event.event_type().to_string(),
                event_id: event_id.to_string(),
            });
            self.events.entry(stream.clone()).or_default().push(new_event);
            let state = state.evolve_decided(&event)?;
            self.states.insert(stream, state);
        }
        result.balances = touched_accounts
            .iter()
            .filter_map(|account| self.balance_of(account).map(|balance_cents| pb::AccountBalance {
                account: account.clone(),
                balance_cents,
            }))
            .collect();
        self.results.push(result);
        Ok(())
    }

    /// Balance after the decision of an account whose stream state holds it (table accounts,
    /// pockets, cage inventory). House and IOU accounts are answered by `GetBalance`.
    fn balance_of(&self, account_key: &str) -> Option<i64> {
        let account: rules::Account = account_key.parse().ok()?;
        match &account {
            rules::Account::Pocket { player_id } => match self.states.get(&StreamId::Player(player_id.clone()))? {
                StreamState::Player(player) => Some(player.pocket_cents),
                _ => None,
            },
            rules::Account::CageChips { cage_id, denomination_cents } => {
                match self.states.get(&StreamId::Cage(cage_id.clone()))? {
                    StreamState::Cage(cage) => Some(
                        cage.chips
                            .iter()
                            .find(|chip| chip.denomination_cents == *denomination_cents)
                            .map_or(0, |chip| chip.value_cents()),
                    ),
                    _ => None,
                }
            }
            rules::Account::CageCash { cage_id } => match self.states.get(&StreamId::Cage(cage_id.clone()))? {
                StreamState::Cage(cage) => Some(cage.cash_cents),
                _ => None,
            },
            rules::Account::CageMarkers { cage_id } => match self.states.get(&StreamId::Cage(cage_id.clone()))? {
                StreamState::Cage(cage) => Some(cage.markers_receivable_cents),
                _ => None,
            },
            _ => {
                let table_id = account.table_id()?;
                match self.states.get(&StreamId::Table(table_id.clone()))? {
                    StreamState::Table(table) => Some(
                        table
                            .balances()
                            .iter()
                            .find(|posting| posting.account == account)
                            .map_or(0, |posting| posting.amount_cents),
                    ),
                    _ => None,
                }
            }
        }
    }

    /// The append: every loaded stream with its expected version (streams that only guarded a
    /// decision are locked and checked, not written).
    fn request(&self, property: &str, envelope: &Envelope, request_hash: [u8; 32]) -> Result<AppendRequest, Status> {
        let mut layout = Vec::with_capacity(self.order.len());
        let mut streams = Vec::with_capacity(self.order.len());
        for stream in &self.order {
            let events = self.events.get(stream).cloned().unwrap_or_default();
            let base = self.base_versions.get(stream).copied().unwrap_or(0);
            layout.push(StreamLayout {
                stream: stream.key(),
                event_ids: events.iter().map(|event| event.event_id.as_bytes().to_vec()).collect(),
            });
            streams.push(StreamAppend {
                stream: stream.key(),
                expected_version: if base == 0 { ExpectedVersion::NoStream } else { ExpectedVersion::Exact(base) },
                events,
            });
        }
        let result = pb::BatchResult { command_id: envelope.command_id.clone(), results: self.results.clone(), ..Default::default() };
        let reply = StoredReply { layout, result: Some(result) }.encode_to_vec();
        Ok(AppendRequest {
            property: property.to_string(),
            commands: vec![CommandRecord { command_id: envelope.command_id.clone(), request_hash }],
            streams,
            reply,
            projection_ops: self.projection_ops.clone(),
        })
    }
}

/// The reply of an append (first time or replay): positions from the outcome and the layout.
fn rebuild_reply(outcome: &AppendOutcome) -> Result<pb::BatchResult, Status> {
    let stored = StoredReply::decode_stored(&outcome.reply).map_err(|error| status::internal("decode reply", &error))?;
    let mut result = stored.result.unwrap_or_default();
    let mut placed: HashMap<String, (i64, i64)> = HashMap::new();
    let mut position = outcome.first_position;
    for StreamLayout { stream, event_ids } in &stored.layout {
        let new_version = outcome
            .stream_versions
            .iter()
            .find(|(key, _)| key == stream)
            .map(|(_, version)| *version)
            .ok_or_else(|| status::internal("reply", &format!("no version for {stream}")))?;
        let first_version = new_version - event_ids.len() as i64 + 1;
        for (offset, event_id) in event_ids.iter().enumerate() {
            let event_id = Uuid::from_slice(event_id).map_err(|error| status::internal("decode reply", &error))?;
            placed.insert(event_id.to_string(), (position, first_version + offset as i64));
            position += 1;
        }
    }
    for command in &mut result.results {
        for event in &mut command.events {
            if let Some((position, version)) = placed.get(&event.event_id) {
                event.global_position = *position;
                event.stream_version = *version;
            }
        }
        command.replayed = outcome.replayed;
        command.chain_hash_hex = hex::encode(outcome.last_hash);
    }
    result.replayed = outcome.replayed;
    result.chain_hash_hex = hex::encode(outcome.last_hash);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 11: an append no partition can hold is the operator's to fix, reported with its
    /// numbers, never INTERNAL; so is a balance asked for at an archived position.
    #[test]
    fn a_missing_partition_and_an_archived_position_are_failed_preconditions_with_their_numbers() {
        let missing = StoreError::NoPartition { recorded_at_micros: Some(1_806_537_600_000_000), partitions_until_micros: Some(1_806_537_600_000_000) };
        let status = append_status("c1", missing);
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        let details = tonic_types::StatusExt::get_error_details(&status);
        let info = details.error_info().expect("error info");
        assert_eq!(info.reason, "LOG_PARTITION_MISSING");
        assert_eq!(info.metadata["recorded_at_micros"], "1806537600000000");
        assert_eq!(info.metadata["partitions_until_micros"], "1806537600000000");
        let backstop = store_status("append", StoreError::NoPartition { recorded_at_micros: None, partitions_until_micros: None });
        assert_eq!(backstop.code(), tonic::Code::FailedPrecondition);

        let status = store_status("balance", StoreError::Archived { position: 2, archived_through: 3 });
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        let details = tonic_types::StatusExt::get_error_details(&status);
        let info = details.error_info().expect("error info");
        assert_eq!(info.reason, "POSITION_ARCHIVED");
        assert_eq!((info.metadata["position"].as_str(), info.metadata["archived_through"].as_str()), ("2", "3"));
    }

    fn request() -> CorrectionRequest {
        CorrectionRequest {
            reverses_event_id: "0190f3a0-0000-7000-8000-000000000001".to_string(),
            approved_by: "floor-2".to_string(),
            reason: "keyed twice".to_string(),
        }
    }

    /// Replies stored as JSON before they were protobuf still answer their replays the same.
    #[test]
    fn a_reply_stored_as_json_before_decodes_as_its_protobuf_form() {
        let id = Uuid::now_v7();
        let result = pb::BatchResult { command_id: "c-1".into(), ..Default::default() };
        let json = serde_json::json!({
            "layout": [["table-T1", [id]]],
            "result_hex": hex::encode(result.encode_to_vec()),
        });
        let from_json = StoredReply::decode_stored(&serde_json::to_vec(&json).unwrap()).unwrap();
        let stored = StoredReply {
            layout: vec![StreamLayout { stream: "table-T1".into(), event_ids: vec![id.as_bytes().to_vec()] }],
            result: Some(result),
        };
        assert_eq!(from_json, stored);
        assert_eq!(StoredReply::decode_stored(&stored.encode_to_vec()).unwrap(), stored);
    }

    fn player_payload(event: &rules::PlayerEvent) -> serde_json::Value {
        serde_json::to_value(event).expect("player event serialises")
    }

    #[test]
    fn a_cage_event_is_reversed_by_its_postings() {
        let postings = vec![
            NewPosting { account: "cage/main/cash".to_string(), amount_cents: 5_000 },
            NewPosting { account: "player/p1/pocket".to_string(), amount_cents: -5_000 },
        ];
        let command = correction_for("cage-main", &serde_json::json!({}), &postings, &request()).expect("maps");
        let Command::Cage(rules::CageCommand { cage_id, op: rules::CageOp::Correct { original_postings, approved_by, .. } }) =
            command
        else {
            panic!("expected a cage correction, got {command:?}");
        };
        assert_eq!(cage_id.as_str(), "main");
        assert_eq!(approved_by, "floor-2");
        let keys: Vec<(String, i64)> = original_postings.iter().map(|p| (p.account.key(), p.amount_cents)).collect();
        assert_eq!(keys, vec![("cage/main/cash".to_string(), 5_000), ("player/p1/pocket".to_string(), -5_000)]);
    }

    #[test]
    fn a_cash_transaction_is_taken_back_on_its_day_and_direction() {
        let event = rules::PlayerEvent::CashTransaction {
            gaming_day: "2026-11-28".to_string(),
            direction: rules::CashDirection::Out,
            amount_cents: 1_250_000,
            mtl_entry: true,
            ctr_required: true,
            day_total_cents: 1_250_000,
        };
        let command = correction_for("player-p1", &player_payload(&event), &[], &request()).expect("maps");
        let Command::Player(rules::PlayerCommand { player_id, op: rules::PlayerOp::Correct { reversal, reverses_event_id, .. } }) =
            command
        else {
            panic!("expected a player correction, got {command:?}");
        };
        assert_eq!(player_id.as_str(), "p1");
        assert_eq!(reverses_event_id, request().reverses_event_id);
        assert_eq!(
            reversal,
            rules::PlayerReversal::CashTransaction {
                gaming_day: "2026-11-28".to_string(),
                direction: rules::CashDirection::Out,
                amount_cents: 1_250_000,
            }
        );
    }

    #[test]
    fn a_departure_is_taken_back_by_table_and_time() {
        let table_id = rules::TableId::new("t7").expect("table id");
        let event = rules::PlayerEvent::LeftTable {
            table_id: table_id.clone(),
            seat: 3,
            game_key: "nlhe-1-2".to_string(),
            amount_cents: 40_000,
            at_unix_ms: 1_790_000_000_123,
        };
        let command = correction_for("player-p1", &player_payload(&event), &[], &request()).expect("maps");
        let Command::Player(rules::PlayerCommand { op: rules::PlayerOp::Correct { reversal, .. }, .. }) = command else {
            panic!("expected a player correction, got {command:?}");
        };
        assert_eq!(reversal, rules::PlayerReversal::Departure { table_id, at_unix_ms: 1_790_000_000_123 });
    }

    #[test]
    fn other_player_events_are_invalid_arguments() {
        let event = rules::PlayerEvent::JoinedTable {
            table_id: rules::TableId::new("t7").expect("table id"),
            seat: 3,
            game_key: "nlhe-1-2".to_string(),
            amount_cents: 40_000,
        };
        let error = correction_for("player-p1", &player_payload(&event), &[], &request()).expect_err("refused");
        assert_eq!(error.code(), tonic::Code::InvalidArgument);
        let details = format!("{error:?}");
        assert!(details.contains("JoinedTable"), "{details}");
    }
}
