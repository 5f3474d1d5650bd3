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
//!
//! By job: this module submits (the [`Ledger`]: edge checks, load, decide, append, retry);
//! `cache` keeps the stream states between commands; `decision` turns what the rules decided
//! into the append (events, postings, projection ops, the reply without positions); `reply`
//! stores and rebuilds answers and maps store failures to statuses; `correction` reverses a
//! stored event (R-AUDIT-1).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chipledger_proto::v1 as pb;
use chipledger_proto::{self as convert, CorrectionRequest, Decidable, Envelope, FieldErrors, WireCommand, entry_command_id};
use chipledger_rules::{
    self as rules, Actor, Command, CommandContext, Role, StreamId,
};
use chipledger_store::{
    AppendOutcome, AsOf, NewPosting,
    RefusalOutcome, RejectionRecord, StoreError,
};
use opentelemetry::KeyValue;
use prost::Message;
use tonic::Status;
use tracing::Instrument;
use uuid::Uuid;

use crate::access::{self, Authenticator, Principal};
use crate::approval::{self, ApprovalKey, ApprovalKeyError};
use crate::config::{Limits, PropertyConfig, PropertyScope, is_valid_property_id};
use crate::shards::{ReadView, ReadWish, Reloaded, Router, RouterError};
use crate::shutdown::Drain;
use crate::status;
use crate::telemetry;

mod cache;
mod correction;
mod decision;
mod reply;

pub use cache::StreamState;
pub use reply::store_status;
use cache::{StateCache, StreamTurns};
use correction::correction_for;
use decision::{Decision, Entry, Refused, refused_player, snapshot_of};
use reply::{COMMAND_INDEX_HEADER, append_status, placements, rebuild_reply, status_from_reply, status_to_reply};

/// Events read per page while catching a stream up.
const READ_PAGE: i64 = 1_000;

/// How far ahead of the server's clock an import's time may be (the caller's clock, a few
/// seconds off): further is a time to come, refused.
const IMPORT_CLOCK_SKEW_MS: i64 = 5_000;
/// The longest actor id an import may name (a principal's or a former system's employee id).
const MAX_IMPORT_ACTOR_LEN: usize = 64;
/// Events that may come between a hand's start and end without being part of it, but tie its
/// chips to a record a correction of the hand cannot undo (cash played in it, a loan, an IOU):
/// named to the rules, which refuse such a hand's correction.
const BINDING_A_HAND: &[&str] = &["CashPutInPlay", "CashInPlayConverted", "IouWritten", "IouSettled"];
/// R-REBUY-1: a new patron id that is a known one in another case (see
/// [`Ledger::new_player_in_another_case`]).
pub use rules::seating::PLAYER_ID_IN_ANOTHER_CASE;
/// Most events one hand may span on its table stream (bound of the search for its start).
const MAX_HAND_EVENTS: i64 = 2_000;

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
    /// Submissions writing the same stream take turns (`cache.rs`).
    turns: StreamTurns,
    drain: Drain,
    db: telemetry::DbTracing,
    checkpointer: Option<std::sync::Arc<crate::checkpoints::Checkpointer>>,
    /// Per property, the latest time and gaming day this process gave a command recorded as it
    /// happens ([`Ledger::never_back`]).
    clock_floor: Mutex<HashMap<String, (i64, String)>>,
    /// The database's clock less this host's, in ms ([`Ledger::measure_clock`]): commands are
    /// timed by the database's clock, which every replica shares.
    clock_offset_ms: std::sync::atomic::AtomicI64,
}

pub(crate) fn now_unix_ms() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
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
            turns: StreamTurns::default(),
            drain,
            checkpointer: None,
            clock_floor: Mutex::new(HashMap::new()),
            clock_offset_ms: std::sync::atomic::AtomicI64::new(0),
        }
    }

    /// The time commands are given: this host's clock set to the database's (R-CHIP-6). A
    /// replica whose clock ran ahead had judged a re-buy wait over an hour early and opened the
    /// next gaming day early (the replicas pass: back in the game for $40 a moment after leaving
    /// with $200, and $12,000 of cash on two days).
    pub fn now(&self) -> i64 {
        now_unix_ms().saturating_add(self.clock_offset_ms.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Reads the database's clock and keeps this host's offset from it (taken at the middle of
    /// the round trip); an offset over a second is logged. Run at the start and every few
    /// seconds after ([`crate::serve`]).
    pub async fn measure_clock(&self) -> Result<i64, StoreError> {
        let (before, database, after) = self.db.call("database_now", "clock", self.router.default_primary().database_clock_ms(now_unix_ms)).await?;
        let offset = database - (before + (after - before) / 2);
        let was = self.clock_offset_ms.swap(offset, std::sync::atomic::Ordering::Relaxed);
        if offset.abs() > 1_000 && (offset - was).abs() > 100 {
            tracing::warn!(offset_ms = offset, "this host's clock differs from the database's: commands are timed by the database's");
        }
        Ok(offset)
    }

    /// The gaming day of a command refused before it is decided: by the database's clock, never
    /// before the latest day this process gave (R-CHIP-6).
    /// After a restart that is the day of the log's last event at least (the time pass: restarted
    /// with the clock an hour back, the first refusals went on the day before the log's).
    async fn refusal_day(&self, property: &PropertyConfig) -> Option<String> {
        let day = property.gaming_day.gaming_day(self.now())?;
        Some(match self.clock_floor_of(property).await {
            Ok((_, floor)) => day.max(floor),
            Err(_) => day,
        })
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
        // Balances are served across an archive anchor only when these keys signed its archive
        // (the operations pass: a forged anchor moved the balances served by $1,000,000).
        chipledger_store::trust_archives_signed_by(checkpointer.own_public_keys());
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
        // Anonymous callers are admins in the development mode only, decided at a start: a
        // reload adding principals to it (or taking them all away) is refused whole.
        let (was, now) = (self.authenticator.dev_anonymous_role(), config.dev_anonymous_role);
        if was != now {
            let name = |role: Option<Role>| role.map_or_else(|| "refused".to_string(), |role| format!("{}s", access::role_name(&role)));
            return Err(RouterError::DevelopmentModeChanged { was: name(was), now: name(now) });
        }
        let mut reloaded = self.router.reload(config).await?;
        if !reloaded.moved.is_empty() {
            *self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = StateCache::default();
        }
        reloaded.principals = self.authenticator.reload(&config.principals);
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

    /// The property a command's header names; one the caller may not act on is refused and the
    /// attempt kept, as a role refusal is ([`Ledger::refuse_for_role`]).
    async fn command_property(
        &self,
        principal: &Principal,
        envelope: &Envelope,
        attempt: (&str, usize, Option<&Command>),
        request_hash: &[u8; 32],
    ) -> Result<Arc<PropertyConfig>, Status> {
        match self.property_at(principal, &envelope.property_id, "header.property_id") {
            Err(denied) if denied.code() == tonic::Code::PermissionDenied => {
                Err(self.refuse_for_role(principal, Some(envelope), attempt, request_hash, denied).await)
            }
            other => other,
        }
    }

    fn property_at(&self, principal: &Principal, requested: &str, field: &str) -> Result<Arc<PropertyConfig>, Status> {
        let properties = self.router.properties();
        // Left empty: the property a console session acts in, else the configured default.
        let id = if requested.is_empty() { principal.acting_in.as_deref().unwrap_or(properties.default_id()) } else { requested };
        if !is_valid_property_id(id) {
            return Err(status::invalid_field(field, chipledger_rules::ID_FORM));
        }
        access::authorize_property(principal, id)?;
        properties.get(id).cloned().ok_or_else(|| status::not_found("property", id))
    }

    /// The property an attempt is kept in when it names none the caller may act on: the one a
    /// request naming none acts on (a console session's, else the default), else the first of
    /// the caller's own the server serves (the identity pass: a RENO-only dealer's commands
    /// naming MAIN, or none, were kept nowhere, the default being MAIN).
    fn own_property(&self, principal: &Principal) -> Option<Arc<PropertyConfig>> {
        self.property_at(principal, "", "header.property_id").ok().or_else(|| match &principal.properties {
            PropertyScope::Only(ids) => {
                let properties = self.router.properties();
                ids.iter().find_map(|id| properties.get(id).cloned())
            }
            PropertyScope::All => None,
        })
    }

    /// One typed command RPC.
    pub async fn submit<T: WireCommand>(&self, principal: &Principal, request: T) -> Result<pb::CommandResult, Status> {
        let mut errors = FieldErrors::new();
        let envelope = convert::envelope(&mut errors, "header", request.header());
        let decidable = request.to_domain(&mut errors);
        let request_hash = request_hash(T::RPC, &request.encode_to_vec());
        // The role first (the gate leaves a command's to here): nothing else is answered to a
        // caller whose role may not send it.
        if let Err(denied) = access::authorize_call(principal, T::RPC) {
            let command = match &decidable {
                Some(Decidable::Command(command)) => Some(command),
                _ => None,
            };
            return Err(self.refuse_for_role(principal, envelope.as_ref(), (T::RPC, 0, command), &request_hash, denied).await);
        }
        let (Some(envelope), Some(decidable)) = (envelope, decidable) else {
            return Err(errors.into_status());
        };
        // Any field refused refuses the command, also where the codec could still build one (the
        // spot check: an unknown kitty `from` and a house percent without the house kill were
        // taken and dropped).
        if !errors.is_empty() {
            return Err(errors.into_status());
        }
        let command = match &decidable {
            Decidable::Command(command) => Some(command),
            _ => None,
        };
        let property = self.command_property(principal, &envelope, (T::RPC, 0, command), &request_hash).await?;
        check_room(&property, &decidable, "")?;
        let device = envelope.device.clone();
        let entries = vec![Entry { rpc: T::RPC, decidable, device, reason_note: None }];
        let approvals = request.header().map_or(&[][..], |header| header.approvals.as_slice());
        let fields = request.approval_fields();
        if !approvals.is_empty() || fields.iter().any(|(_, named)| named.is_some()) {
            let digest = approval::command_digest(T::RPC, &request.approval_bytes(&envelope.command_id, &property.id), envelope.import());
            let subject = approval::Subject { property_id: &property.id, rpc: T::RPC, command_id: &envelope.command_id, digest };
            let now = self.approval_time(&property).await?;
            if let Err(refused) = self.check_approvals(principal, &subject, (&fields, approvals), "", now) {
                let mut replay =
                    self.refuse_unapproved(principal, &property, &envelope, (0, &entries[0]), &request_hash, refused).await?;
                let mut result = replay.results.pop().ok_or_else(|| status::internal("reply", &"no result"))?;
                result.replayed = replay.replayed;
                return Ok(result);
            }
        }
        let mut batch = self.run(principal, &property, envelope, entries, request_hash).await?;
        let mut result = batch.results.pop().ok_or_else(|| status::internal("reply", &"no result"))?;
        result.replayed = batch.replayed;
        Ok(result)
    }

    /// A command refused for its second person before it could be sent with an approval (the
    /// console's forms: a second token that is nobody's, the caller's own, missing, or of
    /// someone who may not approve it): kept among the refusals with the rule of its dual
    /// control, as the same command sent over gRPC with a bad approval is (R-AUDIT-3). Answers
    /// the refusal; a request with bad fields is answered with its field errors, unrecorded,
    /// as [`Ledger::submit`] answers them.
    pub async fn refuse_second_person<T: WireCommand>(
        &self,
        principal: &Principal,
        request: &T,
        form: serde_json::Value,
        refused: Status,
    ) -> Status {
        let mut errors = FieldErrors::new();
        let Some(envelope) = convert::envelope(&mut errors, "header", request.header()) else { return errors.into_status() };
        // Without its second person the command may not decode (a fill names both signers):
        // the refusal keeps the form as it was filled.
        let (streams, player_id, request_json) = match request.to_domain(&mut errors) {
            Some(decidable) => (streams_of(&decidable), player_of(&decidable), attempted(T::RPC, 0, Some(&decidable), None)),
            // The streams the form names (its table, cage and patron, when they are ids), so the
            // refusal is found by those filters too (the console's second pass: a refused fill
            // was missing from the table's refusals).
            None => {
                let named = |field: &str, make: fn(&str) -> Option<StreamId>| {
                    form.get(field).and_then(serde_json::Value::as_str).and_then(make).map(|stream| stream.key())
                };
                let streams = [
                    named("table_id", |id| rules::TableId::new(id).ok().map(StreamId::Table)),
                    named("cage_id", |id| rules::CageId::new(id).ok().map(StreamId::Cage)),
                    named("player_id", |id| rules::PlayerId::new(id).ok().map(StreamId::Player)),
                ];
                let player_id = form
                    .get("player_id")
                    .and_then(serde_json::Value::as_str)
                    .and_then(|id| rules::PlayerId::new(id).ok())
                    .map(|id| id.as_str().to_owned());
                (streams.into_iter().flatten().collect(), player_id, serde_json::json!({ "index": 0, "rpc": T::RPC, "form": form }))
            }
        };
        let property = match self.property_at(principal, &envelope.property_id, "header.property_id") {
            Ok(property) => property,
            Err(status) => return status,
        };
        let refused = status::with_rule_id(refused, access::dual_control_rule(T::RPC).unwrap_or("R-AUDIT-3"));
        let request_hash = request_hash(T::RPC, &request.encode_to_vec());
        let attempt = Attempt { rpc: T::RPC, index: 0, device: envelope.device.clone(), streams, player_id, request: request_json };
        match self.keep_unapproved(principal, &property, &envelope, attempt, &request_hash, refused).await {
            Err(status) => status,
            // The id was accepted before with these very bytes: never a form's unsent request.
            Ok(_) => status::invalid_field("header.command_id", "already recorded: open a fresh form"),
        }
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
        let mut role_denied: Option<(&'static str, usize, Option<Command>, Status)> = None;
        let mut entry_properties: Vec<(usize, String)> = Vec::new();
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
            if let Err(denied) = access::authorize_call(principal, rpc) {
                let command = match &decidable {
                    Some(Decidable::Command(command)) => Some(command.clone()),
                    _ => None,
                };
                role_denied = Some((rpc, index, command, denied));
                break;
            }
            // R-AUDIT-2: who and when an import names is the batch's, in its header; named in a
            // command's own header it had been dropped without a word, the command recorded as
            // the caller's, now (the fixes' pass).
            if let Some(header) = header {
                if header.import_actor_id.is_some() {
                    errors.add(format!("commands[{index}].header.import_actor_id"), "an import names its actor in the batch header (header.import_actor_id)");
                }
                if header.import_occurred_at_unix_ms.is_some() {
                    errors.add(format!("commands[{index}].header.import_occurred_at_unix_ms"), "an import names its time in the batch header (header.import_occurred_at_unix_ms)");
                }
            }
            if header.is_some_and(|header| !header.approvals.is_empty()) || rpc_has_approvals(rpc) {
                approved.push((index, command));
            }
            // The entry's device and note are checked as a command's own are (the client pass: a
            // bidirectional override and 60,000 bytes were kept as an entry's device, and an
            // entry's note was dropped), its property held to the batch's below.
            let own = convert::entry_header(&mut errors, &format!("commands[{index}].header"), header);
            if let (Some(decidable), Some(own)) = (decidable, own) {
                entry_properties.push((index, own.property_id));
                let reason_note = Some(own.reason_note).filter(|note| !note.is_empty());
                entries.push(Entry { rpc, decidable, device: own.device, reason_note });
            }
        }
        let request_hash = request_hash("/chipledger.v1.LedgerService/RecordBatch", &request.encode_to_vec());
        if let Some((rpc, index, command, denied)) = role_denied {
            return Err(self.refuse_for_role(principal, envelope.as_ref(), (rpc, index, command.as_ref()), &request_hash, denied).await);
        }
        let Some(envelope) = envelope else { return Err(errors.into_status()) };
        errors.finish()?;
        let property = self.command_property(principal, &envelope, ("/chipledger.v1.LedgerService/RecordBatch", 0, None), &request_hash).await?;
        // A batch is recorded on its own property: an entry naming another is refused, not
        // recorded on the batch's (the client pass: a MAIN-only dealer's entry naming RENO had
        // been recorded on MAIN without a word).
        for (index, named) in &entry_properties {
            if !named.is_empty() && *named != property.id {
                return Err(status::invalid_field(
                    &format!("commands[{index}].header.property_id"),
                    format!("a batch's commands are recorded on the batch's property ({}); this entry names {named:?}: send it in a batch of its own property", property.id),
                ));
            }
        }
        for (index, entry) in entries.iter().enumerate() {
            check_room(&property, &entry.decidable, &format!("commands[{index}]."))?;
        }
        let now = if approved.is_empty() { 0 } else { self.approval_time(&property).await? };
        for (index, command) in approved {
            let command_id = entry_command_id(&envelope.command_id, index);
            let view = convert::approval_view(command, &command_id, &property.id);
            let approvals = view.header.map_or(&[][..], |header| header.approvals.as_slice());
            if approvals.is_empty() && view.fields.iter().all(|(_, named)| named.is_none()) {
                continue;
            }
            let digest = approval::command_digest(view.rpc, &view.bytes, envelope.import());
            let subject = approval::Subject { property_id: &property.id, rpc: view.rpc, command_id: &command_id, digest };
            if let Err(refused) = self.check_approvals(principal, &subject, (&view.fields, approvals), &format!("commands[{index}]."), now) {
                let entry = entries.get(index).ok_or_else(|| status::internal("approvals", &"an entry for every command"))?;
                return self.refuse_unapproved(principal, &property, &envelope, (index, entry), &request_hash, refused).await;
            }
        }
        self.run(principal, &property, envelope, entries, request_hash).await
    }

    /// The time approvals of `property` are judged at: the server's, never before the latest
    /// it gave a command there (the time pass: restarted with its clock an hour back, the server
    /// took an approval that had expired before the log's last event).
    async fn approval_time(&self, property: &PropertyConfig) -> Result<i64, Status> {
        Ok(self.now().max(self.clock_floor_of(property).await?.0))
    }

    fn check_approvals(
        &self,
        principal: &Principal,
        subject: &approval::Subject<'_>,
        (fields, tokens): (&[(&'static str, Option<&str>)], &[String]),
        prefix: &str,
        now_unix_ms: i64,
    ) -> Result<(), Status> {
        // A refusal names the rule of the command's dual control (R-AUDIT-3).
        let checked = approval::check(&self.approval_key, &self.authenticator, principal, subject, fields, tokens, prefix, now_unix_ms)
            .map_err(|status| status::with_rule_id(status, access::dual_control_rule(subject.rpc).unwrap_or("R-AUDIT-3")));
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
    pub async fn approve(&self, approver: &Principal, request: &pb::ApproveRequest) -> Result<pb::ApprovalToken, Status> {
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
            digest: approval::command_digest(view.rpc, &view.bytes, envelope.import()),
        };
        // Issued on the time it is judged on (the wave-3 pass: issued by the host's clock and
        // judged by the database's, fresh approvals were refused as expired or from the future).
        let now = self.approval_time(&property).await?;
        let token = approval::issue(&self.approval_key, approver, &subject, ttl, now);
        tracing::info!(approver = %approver.id, rpc = view.rpc, command_id = %envelope.command_id, "approval issued");
        Ok(token)
    }

    /// R-AUDIT-4, R-CHIP-6: an import records the past in order: never dated on a gaming day
    /// before the latest one of a stream it writes. The cage pass imported a $9,000 sale dated
    /// yesterday at a cage opened today, after the patron's live $9,000 of today was due: two
    /// days under the CTR threshold, and a cage stream out of order. (Imports are an admin's;
    /// the extra reads are theirs alone.)
    /// `written`: every stream the decision writes, those its commands name, a correction's
    /// (of the event it reverses: the fixes' pass backdated an imported correction past its
    /// stream's latest day) and those a loaded state made it write (a `SeatBound`, a cash
    /// reversal: the fixes' second pass).
    async fn check_import_order(&self, property: &str, context: &CommandContext, written: &[String]) -> Result<(), Status> {
        let store = self.router.primary(property);
        for stream in written {
            let version = self.db.call("stream_version", "streams", store.stream_version(property, &stream)).await;
            let version = version.map_err(|error| store_status("read stream version", error))?;
            if version == 0 {
                continue;
            }
            let last = self.db.call("read_stream", "events", store.read_stream(property, &stream, version - 1, 1)).await;
            let last = last.map_err(|error| store_status("read stream", error))?;
            let Some(last) = last.first() else { continue };
            let metadata = last.typed_metadata().ok();
            let latest_day = metadata.as_ref().map(|metadata| metadata.gaming_day.clone()).unwrap_or_default();
            // "YYYY-MM-DD" orders as the days do.
            if latest_day.as_str() > context.gaming_day.as_str() {
                return Err(status::invalid_field(
                    "header.import_occurred_at_unix_ms",
                    format!(
                        "an import records the past in order: {stream} already holds gaming day {latest_day}, later than the import's {} (R-AUDIT-4)",
                        context.gaming_day
                    ),
                ));
            }
            // And in time: never before the last event of the stream happened (its own time
            // if imported, else when it was recorded). An admin's import dated a cash-out two
            // hours before the buy-in recorded a second earlier, and the re-buy wait was over
            // at once (R-REBUY-1, R-AUDIT-2: the stakes pass).
            let latest_at = crate::service::happened_unix_ms(last);
            if context.at_unix_ms < latest_at {
                return Err(status::invalid_field(
                    "header.import_occurred_at_unix_ms",
                    format!(
                        "an import records the past in order: {stream}'s last event happened at {latest_at}, after the import's {} (R-AUDIT-2)",
                        context.at_unix_ms
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The latest time and gaming day this process gave a command of `property` (on its first
    /// for a property: those of the log's last event).
    async fn clock_floor_of(&self, property: &PropertyConfig) -> Result<(i64, String), Status> {
        let known = self.clock_floor.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&property.id).cloned();
        Ok(match known {
            Some(floor) => floor,
            None => {
                let store = self.router.primary(&property.id);
                let head = self.db.call("chain_digest", "events", store.chain_digest(&property.id)).await;
                let head = head.map_err(|error| store_status("read the log's head", error))?;
                let last = match head.position {
                    0 => Vec::new(),
                    position => {
                        let last = self.db.call("read_all", "events", store.read_all(&property.id, position - 1, 1)).await;
                        last.map_err(|error| store_status("read the log's last event", error))?
                    }
                };
                let (at, day) = last
                    .first()
                    .map(|event| {
                        let day = event.typed_metadata().map(|metadata| metadata.gaming_day).unwrap_or_default();
                        (crate::service::unix_ms(event.recorded_at), day)
                    })
                    .unwrap_or_default();
                self.raise_floor(&property.id, at, &day);
                (at, day)
            }
        })
    }

    /// R-CHIP-6 with R-AUDIT-4: what is recorded as it happens never goes back in time or in
    /// gaming day. A server clock stepped back, or a reload that moved the gaming day's cutoff
    /// later, had put commands on the day before the one already recorded (the insider pass:
    /// $9,000 on each of two days seven seconds apart, no CTR); the command takes the latest time
    /// and day this process gave (on its first command for a property: those of the log's last
    /// event), so the day holds until the clock catches up. Across replicas the store holds the
    /// line: it keeps the property's latest day with its head and refuses a member on an earlier
    /// one (`GamingDayBehind`), which is decided again on that day (`run`).
    async fn never_back(&self, property: &PropertyConfig, mut context: CommandContext) -> Result<CommandContext, Status> {
        let (floor_at, floor_day) = self.clock_floor_of(property).await?;
        if context.at_unix_ms < floor_at {
            context.at_unix_ms = floor_at;
            if let Some(day) = property.gaming_day.gaming_day(floor_at) {
                context.gaming_day = day;
            }
        }
        // "YYYY-MM-DD" orders as the days do.
        if context.gaming_day < floor_day {
            context.gaming_day = floor_day;
        }
        self.raise_floor(&property.id, context.at_unix_ms, &context.gaming_day);
        Ok(context)
    }

    /// R-CHIP-6: when a command was decided, for the store to record it at (by the server's
    /// reading of the database's clock, never the host's own): a command as it happens at its
    /// context's time and not past the end of its gaming day; an import at the server's time now
    /// (its own time is when it happened, kept apart).
    fn decided_at(&self, property: &PropertyConfig, context: &CommandContext, imported: bool) -> chipledger_store::DecidedAt {
        if imported {
            return chipledger_store::DecidedAt { at_micros: Some(self.now().saturating_mul(1000)), ..Default::default() };
        }
        // The day's beginning is checked only when the day is the clock's (a day held ahead of
        // the clock, after a reload moved the cutoff, begins later by design).
        let day_begins_micros = property.gaming_day.day_begins(&context.gaming_day, context.at_unix_ms).map(|at| at.saturating_mul(1000));
        chipledger_store::DecidedAt {
            at_micros: Some(context.at_unix_ms.saturating_mul(1000)),
            day_begins_micros,
            day_ends_micros: property.gaming_day.day_after_begins(&context.gaming_day, context.at_unix_ms).map(|at| at.saturating_mul(1000)),
        }
    }

    /// The floor of a property's commands set to a time and day the store records at (lowered
    /// from one a clock running ahead had raised).
    fn set_floor(&self, property: &str, at_unix_ms: i64, gaming_day: &str) {
        let mut floors = self.clock_floor.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        floors.insert(property.to_owned(), (at_unix_ms, gaming_day.to_owned()));
    }

    /// The latest time and gaming day this process gave a property's commands, raised to these.
    fn raise_floor(&self, property: &str, at_unix_ms: i64, gaming_day: &str) {
        let mut floors = self.clock_floor.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let floor = floors.entry(property.to_owned()).or_default();
        floor.0 = floor.0.max(at_unix_ms);
        if gaming_day > floor.1.as_str() {
            floor.1 = gaming_day.to_owned();
        }
    }

    /// The command's context and, for an import, the principal who sent it (recorded beside the
    /// actor the import names, R-AUDIT-2).
    fn context(&self, principal: &Principal, property: &PropertyConfig, envelope: &Envelope) -> Result<(CommandContext, Option<String>), Status> {
        let importing = envelope.import_actor_id.is_some() || envelope.import_occurred_at_unix_ms.is_some();
        if importing && !matches!(principal.role, Role::Admin | Role::System) {
            return Err(status::invalid_field(
                "header.import_actor_id",
                "only admin or system principals may import with another actor or time",
            ));
        }
        let now = self.now();
        // An import records what happened: never a time to come (a movement dated tomorrow would
        // count on a gaming day not begun, R-CHIP-6, R-AUDIT-4; a day closed before it began).
        if let Some(at) = envelope.import_occurred_at_unix_ms
            && at > now + IMPORT_CLOCK_SKEW_MS
        {
            return Err(status::invalid_field(
                "header.import_occurred_at_unix_ms",
                format!("an import records the past: {at} is after the server's time {now} (R-CHIP-6)"),
            ));
        }
        let at_unix_ms = envelope.import_occurred_at_unix_ms.unwrap_or(now);
        // The actor an import names is recorded as who acted (R-AUDIT-2): an id, not a sentence.
        if let Some(actor) = &envelope.import_actor_id
            && (actor.is_empty() || actor.len() > MAX_IMPORT_ACTOR_LEN || !actor.bytes().all(|byte| byte.is_ascii_graphic()))
        {
            // Printable ASCII, as principal ids are (the insider pass recorded `floor1` followed
            // by a zero-width space as a marker's issuer, approved by floor1).
            return Err(status::invalid_field(
                "header.import_actor_id",
                format!("an actor id: 1 to {MAX_IMPORT_ACTOR_LEN} printable ASCII characters, no blanks (R-AUDIT-2)"),
            ));
        }
        // One person, one id: an actor naming a principal in another case is that principal, and
        // would read as another person beside it (`FLOOR1` issued, floor1 approved).
        if let Some(actor) = &envelope.import_actor_id
            && let Some(known) = self.authenticator.principal_in_another_case(actor)
        {
            return Err(status::invalid_field(
                "header.import_actor_id",
                format!("{actor} is principal {known} in another case: name {known} (R-AUDIT-2)"),
            ));
        }
        let actor_id = envelope.import_actor_id.clone().unwrap_or_else(|| principal.id.clone());
        // An actor the import names who is a principal acted in its own role, recorded as such
        // (the cage pass: a sale imported as an auditor's was recorded in the admin's role), and
        // only where it may act (the fixes' pass: a RENO-only dealer's seating was imported at
        // another property); one who is not (history from before, `phh-import`) acted in the
        // role of the principal importing.
        let named = envelope.import_actor_id.as_deref().and_then(|actor| self.authenticator.principal_by_id(actor));
        if let Some(actor) = &named
            && !actor.properties.allows(&property.id)
        {
            return Err(status::invalid_field(
                "header.import_actor_id",
                format!("{} is a principal who may not act on property {:?} (R-AUDIT-2)", actor.id, property.id),
            ));
        }
        let role = named.map_or(principal.role, |actor| actor.role);
        let gaming_day = property
            .gaming_day
            .gaming_day(at_unix_ms)
            .ok_or_else(|| status::invalid_field("header.import_occurred_at_unix_ms", "outside the gaming-day clock's range"))?;
        // Within the clocks' allowance an import may be a moment ahead, but never on a gaming
        // day not begun (the import pass: one dated a second past the cutoff, sent just before
        // it, opened the next day and drew live cash onto it).
        if envelope.import_occurred_at_unix_ms.is_some()
            && let Some(today) = property.gaming_day.gaming_day(now)
            && gaming_day > today
        {
            return Err(status::invalid_field(
                "header.import_occurred_at_unix_ms",
                format!("an import records the past: {at_unix_ms} is on gaming day {gaming_day}, after today's {today} (R-CHIP-6)"),
            ));
        }
        let context = CommandContext { at_unix_ms, gaming_day, actor: Actor { id: actor_id, role } };
        Ok((context, importing.then(|| principal.id.clone())))
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
        let (context, imported_by) = self.context(principal, property_config, &envelope)?;
        let mut context = if imported_by.is_some() { context } else { self.never_back(property_config, context).await? };
        // And in a role that may send each of its commands (the cage pass: an auditor "sold"
        // chips): the role table, as for a caller.
        if imported_by.is_some()
            && let Some(denied) = entries.iter().find(|entry| !access::allowed_roles(entry.rpc).is_some_and(|roles| roles.contains(&context.actor.role)))
        {
            return Err(status::invalid_field(
                "header.import_actor_id",
                format!(
                    "{} is a principal in role {}, which may not call {} (R-AUDIT-2)",
                    context.actor.id,
                    access::role_name(&context.actor.role),
                    denied.rpc
                ),
            ));
        }
        // Refused once shutdown has begun; appends already started are waited for.
        if self.drain.enter().is_none() {
            return Err(status::shutting_down());
        }
        // The streams the commands name, in turn with this replica's other writers of them (a
        // correction's streams are known once its event is read: those meet at the append).
        let mut named = Vec::new();
        for entry in &entries {
            if let Decidable::Command(command) = &entry.decidable {
                command.streams_into(&mut named);
            }
        }
        // One append writes at most so many streams: a submission naming more is refused before
        // anything is decided (the operations pass: 64 patrons' sales were decided for seconds,
        // then refused without a reason).
        let mut distinct: Vec<&StreamId> = named.iter().collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() > chipledger_store::MAX_STREAMS_PER_APPEND {
            return Err(status::invalid_field(
                "commands",
                format!(
                    "one submission writes at most {} streams (tables, cages, patrons); these commands name {}: send them in smaller batches",
                    chipledger_store::MAX_STREAMS_PER_APPEND,
                    distinct.len()
                ),
            ));
        }
        let _turns = self.turns.take(&property, &named).await;
        let mut attempt = 0;
        loop {
            attempt += 1;

            // First on the cached states as they are (a stale one ends in a version conflict
            // at the append, which forgets it and decides again); a refusal is only given on
            // states read up to the head, so a cache behind another replica never refuses.
            let mut decision = self.decide_all(&property, aml, (&context, &imported_by), &envelope, &entries, false).await?;
            if decision.is_err() {
                decision = self.decide_all(&property, aml, (&context, &imported_by), &envelope, &entries, true).await?;
            }
            let mut decision = match decision {
                Ok(decision) => decision,
                Err(refused) => return self.refuse(&property, (&context, imported_by.as_deref()), &envelope, &request_hash, refused).await,
            };
            // An import's order is checked in its turn, at every attempt, on every stream the
            // decision writes: against what the writers before it recorded, on this replica or
            // on another whose append made this one decide again (the fixes' passes: an import
            // dated earlier, sent while a later one was in flight, was checked before it and
            // recorded after it; then across two replicas; then on a stream written as a
            // consequence).
            if imported_by.is_some() {
                let mut written: Vec<String> = decision.events.keys().map(StreamId::key).collect();
                written.sort_unstable();
                self.check_import_order(&property, &context, &written).await?;
            }
            let started = Instant::now();
            // The append runs in its own task holding a drain guard: it reaches its COMMIT (or
            // rollback) even if the caller goes away, and shutdown waits for it.
            let mut request = decision.request(&property, &envelope, request_hash)?;
            request.decided = self.decided_at(property_config, &context, imported_by.is_some());
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
                        if let Some(checkpointer) = &self.checkpointer {
                            checkpointer.witness_event(&property, outcome.last_position, outcome.last_hash);
                        }
                        self.remember(&property, &decision, &outcome);
                        for event_type in &decision.event_types {
                            telemetry::metrics()
                                .events_appended
                                .add(1, &[KeyValue::new("chipledger.event_type", *event_type)]);
                        }
                    }
                    if outcome.replayed {
                        self.check_replayed(&property, &outcome).await?;
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
                    // Another replica is writing the stream: from the second conflict on, a short
                    // pause of a varying length before deciding again, so two replicas retrying
                    // at once do not meet again (the replicas pass: one command in twenty on a
                    // shared cage was answered ABORTED after its retries, all immediate).
                    if attempt > 1 {
                        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().subsec_nanos();
                        let ceiling_us = 500u64 << attempt.min(5);
                        tokio::time::sleep(std::time::Duration::from_micros(u64::from(nanos) % ceiling_us)).await;
                    }
                }
                // R-CHIP-6: another writer (a replica) recorded a later gaming day: this process
                // takes it as its floor and decides again on it.
                Err(StoreError::GamingDayBehind { gaming_day }) if imported_by.is_none() && gaming_day > context.gaming_day => {
                    if attempt > self.limits.conflict_retries {
                        return Err(status::internal("append", &format!("gaming day still behind {gaming_day} after {attempt} attempts")));
                    }
                    self.raise_floor(&property, context.at_unix_ms, &gaming_day);
                    tracing::info!(%gaming_day, behind = %context.gaming_day, "a later gaming day was recorded by another writer; deciding again on it");
                    context.gaming_day = gaming_day;
                }
                // R-CHIP-6: it would be recorded outside the gaming day it was decided on: after
                // its end (decided just before the cutoff, recorded after it), or before its
                // beginning (decided by a clock that ran ahead of the database's, which records
                // it at its own): decided again at the time it would be recorded at, on that
                // time's day, and this process's floor set to them (a floor raised by a clock
                // that ran ahead had held the next day for every command after: the wave-3 pass).
                Err(StoreError::OutsideGamingDay { recorded_micros }) if imported_by.is_none() => {
                    if attempt > self.limits.conflict_retries {
                        return Err(status::unavailable("append", &format!("the command would be recorded outside its gaming day, {attempt} times")));
                    }
                    let at = recorded_micros.div_euclid(1000) + 1;
                    let Some(day) = property_config.gaming_day.gaming_day(at) else {
                        return Err(status::unavailable("append", &format!("no gaming day for the time {at}")));
                    };
                    context.at_unix_ms = at;
                    context.gaming_day = day;
                    self.set_floor(&property, at, &context.gaming_day);
                    tracing::info!(gaming_day = %context.gaming_day, "the command would be recorded outside the gaming day it was decided on; deciding again");
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
    /// An import's refusal names the principal who sent it beside the actor it names, as its
    /// events would (`imported_by` in the kept request, chained: the insider pass had an admin's
    /// refused import kept as a floor supervisor's, the admin nowhere).
    async fn refuse(
        &self,
        property: &str,
        (context, imported_by): (&CommandContext, Option<&str>),
        envelope: &Envelope,
        request_hash: &[u8; 32],
        refused: Refused,
    ) -> Result<pb::BatchResult, Status> {
        let Refused { index, rejection, streams, mut request, player_id } = refused;
        if let Some(imported_by) = imported_by {
            request[IMPORTED_BY] = serde_json::json!(imported_by);
        }
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
            request,
            request_hash: *request_hash,
            player_id,
            gaming_day: Some(context.gaming_day.clone()),
            reply: status_to_reply(&status),
        };
        self.keep_refusal(record, status).await
    }

    /// A refusal kept for good (R-AUDIT-3) and answered: `status` when this call recorded it,
    /// A replay answers from the command row's stored outcome: the log must hold the append's
    /// events where it says, at the versions it says (the wave-2 pass: an outcome edited to
    /// positions past the head and a stream at version 77 was answered so, and verified).
    async fn check_replayed(&self, property: &str, outcome: &chipledger_store::AppendOutcome) -> Result<(), Status> {
        let (_, placed) = placements(outcome)?;
        let count = outcome.last_position - outcome.first_position + 1;
        let events = self
            .db
            .call("read_all", "events", self.router.primary(property).read_all(property, outcome.first_position - 1, count))
            .await
            .map_err(|error| store_status("replay", error))?;
        let agrees = events.len() as i64 == count
            && events.iter().all(|event| placed.get(&event.event_id) == Some(&(event.position, event.stream_version)));
        if agrees { Ok(()) } else { Err(status::stored_outcome_disagrees(&format!("positions {}..={}", outcome.first_position, outcome.last_position))) }
    }

    /// else what the command id already answers (the same request refused or accepted before).
    async fn keep_refusal(&self, mut record: RejectionRecord, status: Status) -> Result<pb::BatchResult, Status> {
        // R-CHIP-6: a refusal is kept on a gaming day its time is in. One whose day ended before
        // the log's lock was had (a commit of another waited past the cutoff) is kept on the day
        // it is recorded on (the wave-2 pass: it had gone on the day already ended, and that day's
        // refusals changed after its close). An import's refusal keeps its own day.
        let live = if record.request.get(IMPORTED_BY).is_none() { self.router.properties().get(&record.property).cloned() } else { None };
        let day_ends = |record: &RejectionRecord| {
            let (property, day) = (live.as_ref()?, record.gaming_day.as_deref()?);
            property.gaming_day.day_after_begins(day, self.now()).map(|at| at.saturating_mul(1000))
        };
        let store = self.router.primary(&record.property);
        let mut recorded = self.db.call("record_refusal", "rejections", store.record_refusal(&record, day_ends(&record))).await;
        if let (Err(StoreError::OutsideGamingDay { .. }), Some(property)) = (&recorded, &live) {
            record.gaming_day = self.refusal_day(property).await;
            recorded = self.db.call("record_refusal", "rejections", store.record_refusal(&record, day_ends(&record))).await;
        }
        match recorded {
            Ok(RefusalOutcome::Recorded(recorded)) => {
                if let (Some(checkpointer), Some(seq), Some(hash)) = (&self.checkpointer, recorded.refusal_seq, recorded.hash) {
                    checkpointer.witness_refusal(&record.property, seq, hash);
                }
                telemetry::metrics().rejections.add(
                    1,
                    &[
                        KeyValue::new("chipledger.reason_code", record.reason_code),
                        KeyValue::new("chipledger.rule_id", record.rule_id),
                    ],
                );
                Err(status)
            }
            Ok(RefusalOutcome::Replayed(first)) => Err(status_from_reply(&first.record.reply)?),
            Ok(RefusalOutcome::Accepted(outcome)) => {
                self.check_replayed(&record.property, &outcome).await?;
                rebuild_reply(&outcome)
            }
            // Not recorded, so not answered as a refusal: the caller retries with the same id.
            Err(error) => Err(store_status("record refusal", error)),
        }
    }

    /// A command the caller's role may not send (ROLE_NOT_PERMITTED), or naming a property it may
    /// not act on (PROPERTY_NOT_PERMITTED): kept among the refusals
    /// (an insider trying what the role table forbids is what R-AUDIT-3 keeps for auditors),
    /// under [`role_refusal_key`], never the command id itself (a dealer could otherwise block
    /// a supervisor's command by its id in advance), and answered with `denied` (naming rule
    /// R-AUDIT-2). Every attempt is kept: one without a usable header, or naming a property the
    /// caller may not act on, on the caller's own property (they had gone unkept, answered
    /// alike: the insider pass).
    async fn refuse_for_role(
        &self,
        principal: &Principal,
        envelope: Option<&Envelope>,
        (rpc, index, command): (&str, usize, Option<&Command>),
        request_hash: &[u8; 32],
        denied: Status,
    ) -> Status {
        let mut denied = status::with_rule_id(denied, access::ROLE_RULE);
        if let Ok(value) = index.to_string().parse() {
            denied.metadata_mut().insert(COMMAND_INDEX_HEADER, value);
        }
        let named = envelope.and_then(|envelope| {
            let property = self.property_at(principal, &envelope.property_id, "header.property_id").ok()?;
            Some((property, envelope.command_id.as_str()))
        });
        let (property, command_id) = match named.or_else(|| Some((self.own_property(principal)?, ""))) {
            Some(kept_in) => kept_in,
            None => return denied,
        };
        // The role, or a property the caller may not act on (the insider pass: a cage or floor
        // principal's command naming another property had been kept nowhere).
        let reason_code = tonic_types::StatusExt::get_error_details(&denied)
            .error_info()
            .map_or_else(|| access::ROLE_NOT_PERMITTED.to_string(), |info| info.reason.clone());
        let record = RejectionRecord {
            property: property.id.clone(),
            command_id: role_refusal_key(command_id, &principal.id, request_hash),
            reason_code,
            rule_id: access::ROLE_RULE.to_string(),
            numbers: Vec::new(),
            detail: denied.message().to_string(),
            actor_id: principal.id.clone(),
            actor_role: access::role_name(&principal.role).to_string(),
            device: envelope.and_then(|envelope| envelope.device.clone()),
            streams: command.map(|command| command.streams().iter().map(StreamId::key).collect()).unwrap_or_default(),
            request: attempted(rpc, index, None, command),
            request_hash: *request_hash,
            player_id: command.and_then(|command| refused_player(command, &HashMap::new())),
            gaming_day: self.refusal_day(&property).await,
            reply: status_to_reply(&denied),
        };
        if let Err(error) = self.keep_refusal(record, denied.clone()).await
            && error.code() != denied.code()
        {
            tracing::warn!(principal = %principal.id, %command_id, %error, "a refusal for the role was not kept");
        }
        denied
    }

    /// A command refused for its second persons (dual control: an approval forged, expired,
    /// borrowed, for other contents, the caller's own, or missing) before it is decided: kept
    /// like any refusal (R-AUDIT-3), where auditors query refusals, naming the rule of its dual
    /// control and the principal who sent it; answered with `refused`. A command id accepted
    /// before with these very bytes (a resend after its approval expired) answers its result.
    async fn refuse_unapproved(
        &self,
        principal: &Principal,
        property: &PropertyConfig,
        envelope: &Envelope,
        (index, entry): (usize, &Entry),
        request_hash: &[u8; 32],
        refused: Status,
    ) -> Result<pb::BatchResult, Status> {
        let request = attempted(entry.rpc, index, Some(&entry.decidable), None);
        let device = entry.device.clone().or_else(|| envelope.device.clone());
        let (mut streams, mut player_id) = (streams_of(&entry.decidable), player_of(&entry.decidable));
        // A correction names its stream only through the event it reverses: that event's stream
        // (and patron), so the refusal is found by table or patron (the insider pass: corrections
        // refused for their second person were kept with no stream, missing from the table's).
        if let Decidable::Correction(correction) = &entry.decidable
            && let Ok(event_id) = uuid::Uuid::parse_str(&correction.reverses_event_id)
            && let Ok(Some((stream, _))) =
                self.db.call("event_location", "events", self.router.primary(&property.id).event_location(&property.id, event_id)).await
        {
            if let Ok(StreamId::Player(patron)) = stream.parse::<StreamId>() {
                player_id = player_id.or_else(|| Some(patron.as_str().to_owned()));
            }
            streams.push(stream);
        }
        let attempt = Attempt { rpc: entry.rpc, index, device, streams, player_id, request };
        self.keep_unapproved(principal, property, envelope, attempt, request_hash, refused).await
    }

    /// [`Ledger::refuse_unapproved`] for an attempt as the refusal describes it.
    async fn keep_unapproved(
        &self,
        principal: &Principal,
        property: &PropertyConfig,
        envelope: &Envelope,
        Attempt { rpc, index, device, streams, player_id, mut request }: Attempt<'_>,
        request_hash: &[u8; 32],
        mut refused: Status,
    ) -> Result<pb::BatchResult, Status> {
        // An import is kept as the import it was: its actor, its day, who sent it (the import
        // pass: an import refused for its approvals was kept as the admin's own, today).
        let (actor_id, actor_role, gaming_day) = match self.context(principal, property, envelope) {
            Ok((context, Some(imported_by))) => {
                request[IMPORTED_BY] = serde_json::json!(imported_by);
                (context.actor.id, access::role_name(&context.actor.role).to_string(), Some(context.gaming_day))
            }
            _ => (principal.id.clone(), access::role_name(&principal.role).to_string(), self.refusal_day(property).await),
        };
        if let Ok(value) = index.to_string().parse() {
            refused.metadata_mut().insert(COMMAND_INDEX_HEADER, value);
        }
        let reason_code = tonic_types::StatusExt::get_error_details(&refused)
            .error_info()
            .map(|info| info.reason.clone())
            .unwrap_or_else(|| "APPROVAL_INVALID".to_string());
        let record = RejectionRecord {
            property: property.id.clone(),
            command_id: envelope.command_id.clone(),
            reason_code,
            rule_id: access::dual_control_rule(rpc).unwrap_or("R-AUDIT-3").to_string(),
            numbers: Vec::new(),
            detail: refused.message().to_string(),
            actor_id,
            actor_role,
            device,
            streams,
            request,
            request_hash: *request_hash,
            player_id,
            gaming_day,
            reply: status_to_reply(&refused),
        };
        self.keep_refusal(record, refused).await
    }

    /// Decides every entry in order on a working copy of the loaded states; `catch_up` reads
    /// the events after a cached state's version first (see [`Ledger::load`]).
    #[allow(clippy::too_many_arguments)]
    async fn decide_all(
        &self,
        property: &str,
        aml: &rules::AmlThresholds,
        (context, imported_by): (&CommandContext, &Option<String>),
        envelope: &Envelope,
        entries: &[Entry],
        catch_up: bool,
    ) -> Result<Result<Decision, Refused>, Status> {
        let mut decision = Decision { imported_by: imported_by.clone(), ..Decision::default() };
        let mut commands = Vec::with_capacity(entries.len());
        for entry in entries {
            commands.push(match &entry.decidable {
                Decidable::Command(command) => command.clone(),
                Decidable::Correction(correction) => self.correction_command(property, correction).await?,
            });
        }
        // The streams the commands name, read in one call (a batch's new table, cage and players
        // at once); those a loaded state makes a command depend on come as it is decided.
        let named: Vec<StreamId> = commands.iter().flat_map(Command::streams).collect();
        self.load_into(&mut decision, property, &named, catch_up).await?;
        // R-REBUY-1: the patrons new to the store that the submission names or seats, asked
        // about other spellings in one call (each is checked as its command is decided).
        let mut new_players: Vec<&str> = Vec::new();
        let seated = commands.iter().filter_map(|command| match command {
            Command::Table(rules::TableCommand { op: rules::TableOp::SeatPlayer { player_id, .. }, .. }) => Some(player_id),
            _ => None,
        });
        let named_players = named.iter().filter_map(|stream| match stream {
            StreamId::Player(player_id) => Some(player_id),
            _ => None,
        });
        for player_id in named_players.chain(seated) {
            let stream = StreamId::Player(player_id.clone());
            if decision.base_versions.get(&stream).copied().unwrap_or(0) == 0 && !new_players.contains(&player_id.as_str()) {
                new_players.push(player_id.as_str());
            }
        }
        self.ask_other_spellings(property, &mut decision, &new_players).await?;
        for (index, (entry, command)) in entries.iter().zip(&commands).enumerate() {
            let mut streams = command.streams();
            // Streams that depend on what the loaded states hold (R-REBUY-1: a cash-out binds
            // the patron's other seats of the game when a room allows two).
            // Asked again once those are loaded, until nothing more is named (a correction's
            // patrons, then their other seats of the game).
            let mut dependent = command.dependent_streams(&snapshot_of(&decision.states, &streams, aml.clone()));
            while !dependent.is_empty() {
                self.load_into(&mut decision, property, &dependent, catch_up).await?;
                streams.extend(dependent);
                dependent = command.dependent_streams(&snapshot_of(&decision.states, &streams, aml.clone()));
                dependent.retain(|stream| !streams.contains(stream));
            }
            let decided = {
                let snapshot = snapshot_of(&decision.states, &streams, aml.clone());
                let _span = tracing::info_span!("rules.decide", rpc = entry.rpc).entered();
                rules::decide(&snapshot, context, command)
            };
            // The patron streams the command writes, and the patron a seat taken names without
            // writing to (an id in another case would hold the seat for good: the stakes pass).
            // A chipless seat that never bought in leaves writing none, so such a seat is freed.
            let decided = match decided {
                Ok(events) => {
                    let mut written: Vec<StreamId> = Vec::new();
                    for (stream, _) in &events {
                        if matches!(stream, StreamId::Player(_)) && !written.contains(stream) {
                            written.push(stream.clone());
                        }
                    }
                    if let Command::Table(rules::TableCommand { op: rules::TableOp::SeatPlayer { player_id, .. }, .. }) = command {
                        written.push(StreamId::Player(player_id.clone()));
                    }
                    match self.new_player_in_another_case(property, &mut decision, &written).await? {
                        Some(rejection) => Err(rejection),
                        None => Ok(events),
                    }
                }
                Err(rejection) => Err(rejection),
            };
            let events = match decided {
                Ok(events) => events,
                Err(rejection) => {
                    let keys = streams.iter().map(StreamId::key).collect();
                    let request = attempted(entry.rpc, index, Some(&entry.decidable), Some(command));
                    let player_id = refused_player(command, &decision.states);
                    return Ok(Err(Refused { index, rejection, streams: keys, request, player_id }));
                }
            };
            decision.record(index, entry, envelope, context, events)?;
        }
        Ok(Ok(decision))
    }

    /// R-REBUY-1: a patron id new to the property that differs from a known one only in case is
    /// that patron under another spelling: refused, naming the known id (the stakes pass: "Alice"
    /// left with $200 and "alice" bought in for $40). Asked only for streams not written yet.
    async fn new_player_in_another_case(&self, property: &str, decision: &mut Decision, streams: &[StreamId]) -> Result<Option<rules::Rejection>, Status> {
        for stream in streams {
            let StreamId::Player(player_id) = stream else { continue };
            if decision.base_versions.get(stream).copied().unwrap_or(0) != 0 || decision.events.contains_key(stream) {
                continue;
            }
            // One submission writing the patron under two spellings: the first is known to
            // it, not yet to the store (the fixes' pass: one batch sold $6,000 to "ct7" and
            // $6,000 to "CT7", two patrons under the CTR threshold).
            let twin = decision.events.keys().find_map(|written| match written {
                StreamId::Player(other) if other != player_id && other.as_str().to_lowercase() == player_id.as_str().to_lowercase() => Some(other.clone()),
                _ => None,
            });
            if let Some(known) = twin {
                return Ok(Some(rules::Rejection::new(PLAYER_ID_IN_ANOTHER_CASE, format!("patron {known} is written under that id in another case in this submission: use {known}"))));
            }
            if !decision.case_checked.contains_key(player_id) {
                self.ask_other_spellings(property, decision, &[player_id.as_str()]).await?;
            }
            if let Some(Some(known)) = decision.case_checked.get(player_id) {
                return Ok(Some(rules::Rejection::new(PLAYER_ID_IN_ANOTHER_CASE, format!("patron {known} is known under that id in another case: use {known}"))));
            }
        }
        Ok(None)
    }

    /// Asks the store, in one call, for each of `player_ids` the known patron id equal to it but
    /// for case, and keeps the answers in `decision.case_checked`.
    async fn ask_other_spellings(&self, property: &str, decision: &mut Decision, player_ids: &[&str]) -> Result<(), Status> {
        if player_ids.is_empty() {
            return Ok(());
        }
        let known = self
            .db
            .call("players_in_another_case", "streams", self.router.primary(property).players_in_another_case(property, player_ids))
            .await
            .map_err(|error| store_status("find the patrons", error))?;
        for (player_id, known) in known {
            if let Ok(player_id) = rules::PlayerId::new(&player_id) {
                decision.case_checked.insert(player_id, known);
            }
        }
        Ok(())
    }

    /// Loads into `decision` each of `streams` it does not hold yet, those not cached in one read.
    async fn load_into(&self, decision: &mut Decision, property: &str, streams: &[StreamId], catch_up: bool) -> Result<(), Status> {
        let mut missing: Vec<StreamId> = Vec::new();
        for stream in streams {
            if !decision.states.contains_key(stream) && !missing.contains(stream) {
                missing.push(stream.clone());
            }
        }
        let loaded = self.load_states(property, &missing, catch_up).await?;
        for (stream, (state, version)) in missing.into_iter().zip(loaded) {
            decision.order.push(stream.clone());
            decision.base_versions.insert(stream.clone(), version);
            decision.states.insert(stream, state);
        }
        Ok(())
    }

    /// An event of the log by its id, read from `store` (the primary, or a reader's view).
    pub async fn event_by_id(&self, store: &chipledger_store::Store, property: &str, event_id: Uuid) -> Result<Option<chipledger_store::RecordedEvent>, Status> {
        let found = self
            .db
            .call("find_event", "events", store.event_location(property, event_id))
            .await
            .map_err(|error| store_status("find event", error))?;
        let Some((stream, version)) = found else { return Ok(None) };
        let mut events = self
            .db
            .call("read_stream", "events", store.read_stream(property, &stream, version - 1, 1))
            .await
            .map_err(|error| store_status("read event", error))?;
        let Some(event) = events.pop() else { return Ok(None) };
        // The index of event ids is no part of the chain: an index edited to point at another
        // event would make an approved correction reverse that one (the audit pass). The event
        // read must be the one named, else nothing is done with it and `verify` says where.
        if event.event_id != event_id {
            return Err(Status::data_loss(format!(
                "the index of event ids places {event_id} at {stream} version {version}, which holds event {}: the store was changed outside the ledger (run `chipledger verify --projections`)",
                event.event_id
            )));
        }
        Ok(Some(event))
    }

    /// Completes a correction from the log: the reversed event's table and postings (R-AUDIT-1).
    async fn correction_command(&self, property: &str, correction: &CorrectionRequest) -> Result<Command, Status> {
        let Ok(event_id) = Uuid::parse_str(&correction.reverses_event_id) else {
            return Err(status::invalid_field("reverses_event_id", "not a UUID"));
        };
        let event = self
            .event_by_id(&self.router.primary(property), property, event_id)
            .await?
            .ok_or_else(|| status::not_found("event", &correction.reverses_event_id))?;
        let (stream, version) = (event.stream.clone(), event.stream_version);
        if stream.starts_with("table-") && rules::corrections::HAND_EVENT_TYPES.contains(&event.event_type.as_str()) {
            return self.hand_correction(property, &stream, version, correction).await;
        }
        let gaming_day = event.typed_metadata().map(|metadata| metadata.gaming_day).map_err(|error| status::internal("read reversed event", &error))?;
        correction_for(&stream, event.stream_version, &gaming_day, &event.payload, &event.postings, vec![event.event_type.clone()], correction)
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
        // The hand's own events: a top-up, a buy-in or a tip made meanwhile (a folded seat may
        // top up) is no part of it and stays, correctable on its own (the cash pass: a folded
        // seat's $5,000 cash top-up was netted into the hand and its cash taken off another
        // patron's day). Chips into or out of a pot are the hand's whatever the event.
        let in_the_hand = |event: &&chipledger_store::RecordedEvent| {
            rules::corrections::HAND_EVENT_TYPES.contains(&event.event_type.as_str())
                || event.postings.iter().any(|p| p.account.parse::<rules::Account>().is_ok_and(|a| matches!(a, rules::Account::Pot { .. })))
        };
        let mut net: Vec<NewPosting> = Vec::new();
        for posting in hand[..end].iter().filter(in_the_hand).flat_map(|event| &event.postings) {
            match net.iter_mut().find(|p| p.account == posting.account) {
                Some(p) => p.amount_cents += posting.amount_cents,
                None => net.push(posting.clone()),
            }
        }
        net.retain(|p| p.amount_cents != 0);
        let whole = CorrectionRequest { reverses_event_id: hand[0].event_id.to_string(), ..correction.clone() };
        let event_types = hand[..end]
            .iter()
            .filter(|event| in_the_hand(event) || BINDING_A_HAND.contains(&event.event_type.as_str()))
            .map(|event| event.event_type.clone())
            .collect();
        let gaming_day = hand[0].typed_metadata().map(|metadata| metadata.gaming_day).map_err(|error| status::internal("read the corrected hand", &error))?;
        correction_for(stream, hand[0].stream_version, &gaming_day, &hand[0].payload, &net, event_types, &whole)
    }

    /// The state of a stream as of the head: the cached aggregate plus the events after it.
    pub async fn load(&self, property: &str, stream: &StreamId) -> Result<(StreamState, i64), Status> {
        self.load_state(property, stream, true).await
    }

    /// The state of a stream as its events up to a point of the log left it, its version then,
    /// and the position the point resolved to (a position past the head is the head).
    pub async fn load_as_of(&self, property: &str, stream: &StreamId, as_of: AsOf) -> Result<(StreamState, i64, i64), Status> {
        let store = self.router.primary(property);
        let position = self
            .db
            .call("position_of", "events", store.position_of(property, as_of))
            .await
            .map_err(|error| store_status("resolve the point of the log", error))?;
        let (mut state, mut version) = (StreamState::empty(stream), 0);
        loop {
            let page = self
                .db
                .call("read_stream", "events", store.read_stream(property, &stream.key(), version, READ_PAGE))
                .await
                .map_err(|error| store_status("read stream", error))?;
            let full = page.len() as i64 >= READ_PAGE;
            let until = page.iter().take_while(|event| event.position <= position).count();
            (state, version) = fold_page(stream, state, version, &page[..until])?;
            if !full || until < page.len() {
                return Ok((state, version, position));
            }
        }
    }

    /// The state of a stream; without `catch_up` a cached aggregate is taken as it is. That
    /// is safe for a decision that is then appended: every loaded stream goes into the append
    /// with its version as the expected one, so a state behind the log is refused there
    /// (version conflict), forgotten and read again. It saves a read per stream per command.
    async fn load_state(&self, property: &str, stream: &StreamId, catch_up: bool) -> Result<(StreamState, i64), Status> {
        let mut loaded = self.load_states(property, std::slice::from_ref(stream), catch_up).await?;
        loaded.pop().ok_or_else(|| status::internal("read stream", &"no state"))
    }

    /// The states of distinct streams, as [`Ledger::load_state`] gives each: the ones to read
    /// (not cached, or behind) in one call from their cached versions on, then any stream with
    /// more than a page left page by page.
    async fn load_states(&self, property: &str, streams: &[StreamId], catch_up: bool) -> Result<Vec<(StreamState, i64)>, Status> {
        let mut loaded: Vec<Option<(StreamState, i64)>> = Vec::with_capacity(streams.len());
        let mut to_read: Vec<(usize, StreamState, i64)> = Vec::new();
        {
            let mut cache = self.cache.lock().map_err(|_| status::internal("cache", &"poisoned"))?;
            for (at, stream) in streams.iter().enumerate() {
                let cached = cache.get(&(property.to_string(), stream.key()));
                if !catch_up && let Some(cached) = cached {
                    loaded.push(Some(cached));
                    continue;
                }
                let (state, version) = cached.unwrap_or_else(|| (StreamState::empty(stream), 0));
                loaded.push(None);
                to_read.push((at, state, version));
            }
        }
        if !to_read.is_empty() {
            let keys: Vec<String> = to_read.iter().map(|(at, ..)| streams[*at].key()).collect();
            let after: Vec<i64> = to_read.iter().map(|(.., version)| *version).collect();
            let store = self.router.primary(property);
            let pages = self
                .db
                .call("read_streams", "events", store.read_streams(property, &keys, &after, READ_PAGE))
                .await
                .map_err(|error| store_status("read streams", error))?;
            for ((at, mut state, mut version), mut page) in to_read.into_iter().zip(pages) {
                let stream = &streams[at];
                loop {
                    let full = page.len() as i64 >= READ_PAGE;
                    (state, version) = fold_page(stream, state, version, &page)?;
                    if !full {
                        break;
                    }
                    page = self
                        .db
                        .call("read_stream", "events", store.read_stream(property, &stream.key(), version, READ_PAGE))
                        .await
                        .map_err(|error| store_status("read stream", error))?;
                }
                if let Ok(mut cache) = self.cache.lock() {
                    cache.put((property.to_string(), stream.key()), state.clone(), version);
                }
                loaded[at] = Some((state, version));
            }
        }
        loaded.into_iter().map(|state| state.ok_or_else(|| status::internal("read streams", &"a stream not loaded"))).collect()
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

/// SHA-256 over the RPC path and the request's protobuf bytes (deterministic for our
/// messages: no maps, fields in number order).
/// The key a refusal for the role is kept under: `<command id>~denied~<caller>~<request>`, the
/// request's digest telling apart attempts under one id with other contents (a second attempt
/// had been answered as the first and not kept); with no command id, `~denied~...`. A key past
/// the store's 128 bytes keeps the id's start and a digest of the whole.
pub(crate) fn role_refusal_key(command_id: &str, caller: &str, request_hash: &[u8; 32]) -> String {
    const MAX_KEY: usize = 128;
    let key = format!("{command_id}~denied~{caller}~{}", hex::encode(&request_hash[..8]));
    if key.len() <= MAX_KEY {
        return key;
    }
    let digest = hex::encode(&<sha2::Sha256 as sha2::Digest>::digest(key.as_bytes())[..16]);
    let mut cut = MAX_KEY - "~denied~".len() - digest.len();
    while !command_id.is_char_boundary(cut.min(command_id.len())) {
        cut -= 1;
    }
    format!("{}~denied~{digest}", &command_id[..cut.min(command_id.len())])
}

pub fn request_hash(rpc: &str, request_bytes: &[u8]) -> [u8; 32] {
    let mut bytes = Vec::with_capacity(rpc.len() + 1 + request_bytes.len());
    bytes.extend_from_slice(rpc.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(request_bytes);
    chipledger_store::request_hash(&bytes)
}

/// A stream's state folded over the next events of its stream, which must continue `version`.
fn fold_page(
    stream: &StreamId,
    mut state: StreamState,
    mut version: i64,
    page: &[chipledger_store::RecordedEvent],
) -> Result<(StreamState, i64), Status> {
    for event in page {
        if event.stream_version != version + 1 {
            return Err(status::internal("read stream", &format!("{} skips version {}", stream.key(), version + 1)));
        }
        let decoded = chipledger_store::domain::event_from_payload(stream, &event.payload)
            .map_err(|error| status::internal("decode stored event", &error))?;
        state = state.evolve_decided(&decoded)?;
        version = event.stream_version;
    }
    Ok((state, version))
}

/// A refused attempt as its refusal describes it: the RPC, the command's place in the
/// submission, the device, the streams it names and the request ([`attempted`]).
struct Attempt<'a> {
    rpc: &'a str,
    index: usize,
    device: Option<String>,
    streams: Vec<String>,
    /// The patron it was about, as far as the command itself names one (no state is read).
    player_id: Option<String>,
    request: serde_json::Value,
}

/// The patron a command names without reading any state: its player stream or its player id
/// (a refusal before the decision keeps it, so a patron's refusals are found by the patron).
fn player_of(decidable: &Decidable) -> Option<String> {
    match decidable {
        Decidable::Command(command) => refused_player(command, &HashMap::new()),
        Decidable::Correction(_) => None,
    }
}

/// The streams a command names (none for a correction: they are read from the log).
fn streams_of(decidable: &Decidable) -> Vec<String> {
    match decidable {
        Decidable::Command(command) => command.streams().iter().map(StreamId::key).collect(),
        Decidable::Correction(_) => Vec::new(),
    }
}

/// What a refused submission attempted, as the refusal keeps it for auditors (R-AUDIT-3): the
/// RPC and the command's place in the submission, the command as sent (`decidable`: a rules
/// command, or a correction as named by the caller) and the rules command it was judged as
/// (`judged`: for a correction, the reversal read from the log).
/// The key of a kept request naming the principal who sent an import (R-AUDIT-2).
pub const IMPORTED_BY: &str = "imported_by";

pub(super) fn attempted(rpc: &str, index: usize, decidable: Option<&Decidable>, judged: Option<&Command>) -> serde_json::Value {
    let mut request = serde_json::json!({ "index": index, "rpc": rpc });
    match decidable {
        Some(Decidable::Command(command)) => request["command"] = serde_json::json!(command),
        Some(Decidable::Correction(correction)) => {
            request["correction"] = serde_json::json!(correction);
            if let Some(judged) = judged {
                request["command"] = serde_json::json!(judged);
            }
        }
        None => request["command"] = serde_json::json!(judged),
    }
    request
}
