//! The gRPC services. Command RPCs hand the typed message to the [`Ledger`]; queries read the log
//! through the store and rebuild state with the rules core; approvals are signed by the ledger.
//! The role check happened at the gate; here the principal names the actor and bounds the
//! properties a request may name (every handler resolves its property through
//! [`Ledger::property`] before reading anything).

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use chipledger_proto::v1 as pb;
use chipledger_proto::v1::approval_service_server::ApprovalService;
use chipledger_proto::v1::audit_service_server::AuditService;
use chipledger_proto::v1::cage_service_server::CageService;
use chipledger_proto::v1::ledger_service_server::LedgerService;
use chipledger_proto::v1::table_service_server::TableService;
use chipledger_proto::{CommandVisitor, WireCommand, chips_to_wire, legal_actions_to_wire, role_from_name, role_to_wire, table_view};
use chipledger_rules::{self as rules, StreamId, TableEvent};
use chipledger_store::{AsOf, EventFilter, RecordedEvent, Store};
use futures::{Stream, StreamExt};
use tonic::{Request, Response, Status};
use tracing::Instrument;

use crate::access::Principal;
use crate::ledger::{Ledger, store_status};
use crate::shards::ReadWish;
use crate::shutdown::Drain;
use crate::status;
use crate::telemetry;

/// An impl of a service trait: the command RPCs of the service, read from the API's table
/// (`chipledger_proto::rpc_table!`), all go to [`Services::command`]; the other items follow in
/// the invocation. (`async_trait` must see the expanded methods, so the macro emits the whole
/// impl.)
macro_rules! service_impl {
    (TableService { $($items:tt)* } ; TableService { $($rows:tt)* } $($others:tt)*) => {
        service_impl!(@impl TableService { $($items)* } $($rows)*);
    };
    (CageService { $($items:tt)* } ; CageService { $($rows:tt)* } $($others:tt)*) => {
        service_impl!(@impl CageService { $($items)* } $($rows)*);
    };
    (LedgerService { $($items:tt)* } ; LedgerService { $($rows:tt)* } $($others:tt)*) => {
        service_impl!(@impl LedgerService { $($items)* } $($rows)*);
    };
    (@impl $service:ident { $($items:tt)* }
        $( $rust_name:ident: $method:ident $( ( $message:ident $($approvals:tt)* ) )? => $roles:ident, )*
    ) => {
        #[tonic::async_trait]
        impl $service for Services {
            $($(
                async fn $rust_name(&self, request: Request<pb::$message>) -> Result<Response<pb::CommandResult>, Status> {
                    self.command(request).await
                }
            )?)*
            $($items)*
        }
    };
    // Another service's group of the table: passed over.
    ($service:ident { $($items:tt)* } ; $other:ident { $($rows:tt)* } $($others:tt)*) => {
        service_impl!($service { $($items)* } ; $($others)*);
    };
}

mod approval;
mod audit;
mod ledger;
mod pager;
mod table;

use pager::{MAX_SCAN_EVENTS, Pager, scan, scan_all, scan_each};

#[derive(Clone)]
pub struct Services {
    ledger: Arc<Ledger>,
    drain: Drain,
}

impl Services {
    pub fn new(ledger: Arc<Ledger>, drain: Drain) -> Services {
        Services { ledger, drain }
    }

    async fn command<T: WireCommand>(&self, request: Request<T>) -> Result<Response<pb::CommandResult>, Status> {
        let principal = principal(&request)?;
        let result = self.ledger.submit(&principal, request.into_inner()).await?;
        Ok(Response::new(result))
    }

    /// The ledger the services answer from (the console reads property settings there).
    pub fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }
}

fn principal<T>(request: &Request<T>) -> Result<Principal, Status> {
    request
        .extensions()
        .get::<Principal>()
        .cloned()
        .ok_or_else(|| Status::unauthenticated("no authenticated principal"))
}

/// When `event` happened: an import's own time, else when it was recorded (R-AUDIT-2).
pub(crate) fn happened_unix_ms(event: &RecordedEvent) -> i64 {
    event.typed_metadata().ok().and_then(|metadata| metadata.occurred_at_unix_ms).unwrap_or_else(|| unix_ms(event.recorded_at))
}

pub(crate) fn unix_ms(at: time::OffsetDateTime) -> i64 {
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// A stored event on the wire, its strings moved rather than copied (the subscription sends
/// every event through here).
pub fn recorded_event_to_wire(event: RecordedEvent) -> pb::RecordedEvent {
    let metadata = event.typed_metadata().ok().map(|metadata| pb::EventMetadata {
        actor_id: metadata.actor_id,
        actor_role: wire_role(&metadata.actor_role) as i32,
        device: metadata.device,
        command_id: metadata.command_id.unwrap_or_default(),
        gaming_day: metadata.gaming_day,
        config_version: metadata.config_version,
        trace_id: metadata.trace_id.unwrap_or_default(),
        reason_note: metadata.reason_code.unwrap_or_default(),
        correlation_id: metadata.correlation_id.unwrap_or_default(),
        imported_by: metadata.imported_by,
        occurred_at_unix_ms: metadata.occurred_at_unix_ms,
    });
    pb::RecordedEvent {
        global_position: event.position,
        stream_id: event.stream,
        stream_version: event.stream_version,
        event_id: event.event_id.to_string(),
        event_type: event.event_type,
        schema_version: i32::from(event.schema_version),
        payload_json: event.payload.into_string(),
        metadata,
        recorded_at_unix_ms: unix_ms(event.recorded_at),
        hash_hex: hex::encode(event.hash),
        postings: event
            .postings
            .into_iter()
            .map(|posting| pb::Posting { account: posting.account, amount_cents: posting.amount_cents })
            .collect(),
    }
}

/// A role as recorded by name, on the wire (UNSPECIFIED for a name of no role).
fn wire_role(name: &str) -> pb::Role {
    role_from_name(name).map_or(pb::Role::Unspecified, role_to_wire)
}

fn table_stream(table_id: &str) -> Result<(rules::TableId, StreamId), Status> {
    let id = rules::TableId::new(table_id)
        .map_err(|_| status::invalid_field("table_id", chipledger_rules::ID_FORM))?;
    Ok((id.clone(), StreamId::Table(id)))
}

fn player_stream_key(player_id: &str) -> Result<String, Status> {
    let id = rules::PlayerId::new(player_id)
        .map_err(|_| status::invalid_field("player_id", chipledger_rules::ID_FORM))?;
    Ok(StreamId::Player(id).key())
}

/// A time range the log can answer: both bounds within the clock's range
/// ([`crate::config::MIN_CLOCK_UNIX_MS`]..=[`crate::config::MAX_CLOCK_UNIX_MS`]) and `from <= to`.
fn check_time_range(field: &str, range: Option<&pb::TimeRange>) -> Result<(), Status> {
    let Some(range) = range else { return Ok(()) };
    let bounds = crate::config::MIN_CLOCK_UNIX_MS..=crate::config::MAX_CLOCK_UNIX_MS;
    for (name, value) in [("from_unix_ms", range.from_unix_ms), ("to_unix_ms", range.to_unix_ms)] {
        if let Some(value) = value
            && !bounds.contains(&value)
        {
            return Err(status::invalid_field(
                &format!("{field}.{name}"),
                format!("{value} is outside {}..={} (years 1900 to 9000)", bounds.start(), bounds.end()),
            ));
        }
    }
    if let (Some(from), Some(to)) = (range.from_unix_ms, range.to_unix_ms)
        && from > to
    {
        return Err(status::invalid_field(field, format!("from_unix_ms {from} is after to_unix_ms {to}")));
    }
    Ok(())
}

/// A gaming day a request names (R-CHIP-6): "YYYY-MM-DD", a date of the calendar, within the
/// days of the clock's range ([`crate::config::MIN_CLOCK_UNIX_MS`]..=[`crate::config::MAX_CLOCK_UNIX_MS`],
/// years 1900 to 9000).
/// A query's point of the log (GetBalance, GetTable): the head, a position, or a time. A time is
/// "as of" a displayed millisecond, so it includes every event shown with that time (the log
/// records microseconds); a time after the server's clock is refused: the log cannot answer it
/// yet, and the same question asked later would answer otherwise (the auditor pass: a balance
/// "as of" next June was given as of the head, labelled with that date).
fn as_of_point(ledger: &Ledger, global_position: Option<i64>, unix_ms: Option<i64>) -> Result<AsOf, Status> {
    match (global_position, unix_ms) {
        (Some(position), _) if position < 0 => Err(status::invalid_field("global_position", "must be >= 0")),
        (Some(position), _) => Ok(AsOf::Position(position)),
        (None, Some(unix_ms)) => {
            let bounds = crate::config::MIN_CLOCK_UNIX_MS..=crate::config::MAX_CLOCK_UNIX_MS;
            if !bounds.contains(&unix_ms) {
                return Err(status::invalid_field(
                    "unix_ms",
                    format!("{unix_ms} is outside {}..={} (years 1900 to 9000)", bounds.start(), bounds.end()),
                ));
            }
            let now = ledger.now();
            if unix_ms > now {
                return Err(status::invalid_field(
                    "unix_ms",
                    format!("{unix_ms} is after the server's clock ({now}): the log cannot say yet what it will hold then"),
                ));
            }
            let end_of_millisecond_nanos = i128::from(unix_ms) * 1_000_000 + 999_999;
            let at = time::OffsetDateTime::from_unix_timestamp_nanos(end_of_millisecond_nanos)
                .map_err(|_| status::invalid_field("unix_ms", "out of range"))?;
            Ok(AsOf::Time(at))
        }
        (None, None) => Ok(AsOf::Head),
    }
}

fn check_gaming_day(field: &str, day: &str) -> Result<(), Status> {
    let date_of = |unix_ms: i64| time::OffsetDateTime::from_unix_timestamp(unix_ms.div_euclid(1000)).map(|at| at.date());
    let (Ok(first), Ok(last)) = (date_of(crate::config::MIN_CLOCK_UNIX_MS), date_of(crate::config::MAX_CLOCK_UNIX_MS)) else {
        return Err(status::internal("gaming day bounds", &"the clock's range is not a date range"));
    };
    match time::Date::parse(day, &time::macros::format_description!("[year]-[month]-[day]")) {
        Ok(date) if (first..=last).contains(&date) => Ok(()),
        Ok(_) => Err(status::invalid_field(field, format!("{day} is outside {first}..={last} (years 1900 to 9000)"))),
        Err(_) => Err(status::invalid_field(field, format!("{day:?} is not a date: YYYY-MM-DD"))),
    }
}

/// The name of a recorded rules command (`{"Table":{"op":{"op":"BuyIn",...}}}` -> "BuyIn").
/// The type of a refused command from its kept request ([`crate::ledger`]'s `attempted`): the
/// RPC's method (`CageColorChange`, `Correct`), else, for refusals kept before the RPC was, the
/// rules command's op.
fn command_type_of(request: &serde_json::Value) -> String {
    if let Some(method) = request.get("rpc").and_then(serde_json::Value::as_str).and_then(|rpc| rpc.rsplit('/').next()) {
        return method.to_string();
    }
    request
        .get("command")
        .and_then(serde_json::Value::as_object)
        .and_then(|outer| outer.values().next())
        .and_then(|inner| inner.pointer("/op/op"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// A stored event as the rules core's event, by its stream kind.
fn decode_event(event: &RecordedEvent) -> Result<rules::Event, Status> {
    let stream: StreamId = event.stream.parse().map_err(|_| status::internal("decode", &"bad stream key"))?;
    chipledger_store::domain::event_from_payload(&stream, &event.payload).map_err(|error| status::internal("decode stored event", &error))
}

