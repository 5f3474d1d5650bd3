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
use chipledger_store::{AsOf, EventFilter, EventMetadata, RecordedEvent, Store};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use tonic::{Request, Response, Status};
use tracing::Instrument;

use crate::access::Principal;
use crate::ledger::{Ledger, store_status};
use crate::shards::ReadWish;
use crate::shutdown::Drain;
use crate::status;
use crate::telemetry;

/// Default page size when a request leaves it zero.
const DEFAULT_PAGE_SIZE: u32 = 100;
/// Events scanned at most per query call when filtering in the server (bound).
const MAX_SCAN_EVENTS: i64 = 50_000;
/// Events a hand may have at most when rebuilt (bound).
const MAX_HAND_EVENTS: i64 = 5_000;

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

    fn page_size(&self, page: Option<&pb::PageRequest>) -> i64 {
        let requested = page.map_or(0, |page| page.page_size);
        let size = if requested == 0 { DEFAULT_PAGE_SIZE } else { requested };
        i64::from(size.min(self.ledger.limits().max_page_size))
    }
}

fn principal<T>(request: &Request<T>) -> Result<Principal, Status> {
    request
        .extensions()
        .get::<Principal>()
        .cloned()
        .ok_or_else(|| Status::unauthenticated("no authenticated principal"))
}

/// Page tokens are the last global position returned.
fn page_after(page: Option<&pb::PageRequest>) -> Result<i64, Status> {
    match page.map(|page| page.page_token.as_str()) {
        None | Some("") => Ok(0),
        Some(token) => token
            .parse::<i64>()
            .ok()
            .filter(|position| *position >= 0)
            .ok_or_else(|| status::invalid_field("page.page_token", "not a token from a previous page")),
    }
}

fn next_token(last_position: Option<i64>, full_page: bool) -> Option<pb::PageResponse> {
    Some(pb::PageResponse {
        next_page_token: match (last_position, full_page) {
            (Some(position), true) => position.to_string(),
            _ => String::new(),
        },
    })
}

fn unix_ms(at: time::OffsetDateTime) -> i64 {
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// A stored event on the wire.
pub fn recorded_event_to_wire(event: &RecordedEvent) -> pb::RecordedEvent {
    // Deserialised from the stored JSON in place (no copy of the `Value` first).
    let metadata = EventMetadata::deserialize(&event.metadata).ok().map(|metadata| pb::EventMetadata {
        actor_id: metadata.actor_id,
        actor_role: wire_role(&metadata.actor_role) as i32,
        device: metadata.device,
        command_id: metadata.command_id.unwrap_or_default(),
        gaming_day: metadata.gaming_day,
        config_version: metadata.config_version,
        trace_id: metadata.trace_id.unwrap_or_default(),
        reason_note: metadata.reason_code.unwrap_or_default(),
        correlation_id: metadata.correlation_id.unwrap_or_default(),
    });
    pb::RecordedEvent {
        global_position: event.position,
        stream_id: event.stream.clone(),
        stream_version: event.stream_version,
        event_id: event.event_id.to_string(),
        event_type: event.event_type.clone(),
        schema_version: i32::from(event.schema_version),
        payload_json: event.payload.to_string(),
        metadata,
        recorded_at_unix_ms: unix_ms(event.recorded_at),
        hash_hex: hex::encode(event.hash),
        postings: event
            .postings
            .iter()
            .map(|posting| pb::Posting { account: posting.account.clone(), amount_cents: posting.amount_cents })
            .collect(),
    }
}

/// A role as recorded by name, on the wire (UNSPECIFIED for a name of no role).
fn wire_role(name: &str) -> pb::Role {
    role_from_name(name).map_or(pb::Role::Unspecified, role_to_wire)
}

fn table_stream(table_id: &str) -> Result<(rules::TableId, StreamId), Status> {
    let id = rules::TableId::new(table_id)
        .map_err(|_| status::invalid_field("table_id", "1 to 64 characters of A-Z a-z 0-9 _ . -"))?;
    Ok((id.clone(), StreamId::Table(id)))
}

fn player_stream_key(player_id: &str) -> Result<String, Status> {
    let id = rules::PlayerId::new(player_id)
        .map_err(|_| status::invalid_field("player_id", "1 to 64 characters of A-Z a-z 0-9 _ . -"))?;
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

/// Events of the store filter, further narrowed in the server by time range and event types,
/// scanning at most [`MAX_SCAN_EVENTS`]; returns the matches and the last position scanned.
async fn scan(
    ledger: &Ledger,
    store: &Store,
    property: &str,
    mut filter: EventFilter,
    event_types: &[String],
    time_range: Option<&pb::TimeRange>,
    page_size: i64,
) -> Result<(Vec<RecordedEvent>, Option<i64>, bool), Status> {
    check_time_range("time_range", time_range)?;
    if event_types.len() == 1 {
        filter.event_type = Some(event_types[0].clone());
    }
    let in_range = |event: &RecordedEvent| {
        let at = unix_ms(event.recorded_at);
        time_range.is_none_or(|range| {
            range.from_unix_ms.is_none_or(|from| at >= from) && range.to_unix_ms.is_none_or(|to| at <= to)
        })
    };
    let mut matched = Vec::new();
    let mut scanned = 0;
    let mut last_position = None;
    loop {
        filter.limit = page_size;
        let page = ledger
            .db_call("events_by_filter", "events", store.events_by_filter(property, &filter))
            .await
            .map_err(|error| store_status("list events", error))?;
        let exhausted = (page.len() as i64) < page_size;
        for event in page {
            scanned += 1;
            last_position = Some(event.position);
            filter.after_position = event.position;
            let type_ok = event_types.len() <= 1 || event_types.contains(&event.event_type);
            if type_ok && in_range(&event) {
                matched.push(event);
                if matched.len() as i64 >= page_size {
                    return Ok((matched, last_position, true));
                }
            }
        }
        if exhausted {
            return Ok((matched, last_position, false));
        }
        if scanned >= MAX_SCAN_EVENTS {
            // More may match: the caller continues from the token.
            return Ok((matched, last_position, true));
        }
    }
}

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

chipledger_proto::rpc_table!(service_impl!(TableService {
    async fn get_table(&self, request: Request<pb::GetTableRequest>) -> Result<Response<pb::TableView>, Status> {
        let principal = principal(&request)?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        let (table_id, stream) = table_stream(&request.table_id)?;
        let (state, version) = self.ledger.load(&property, &stream).await?;
        let Some(table) = state.as_table() else { return Err(status::internal("get table", &"not a table")) };
        if table.config.is_none() {
            return Err(status::not_found("table", table_id.as_str()));
        }
        Ok(Response::new(table_view(&table_id, table, version)))
    }

    async fn get_legal_actions(
        &self,
        request: Request<pb::GetLegalActionsRequest>,
    ) -> Result<Response<pb::LegalActions>, Status> {
        let principal = principal(&request)?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        let (table_id, stream) = table_stream(&request.table_id)?;
        let (state, _) = self.ledger.load(&property, &stream).await?;
        let Some(table) = state.as_table() else { return Err(status::internal("legal actions", &"not a table")) };
        if table.config.is_none() {
            return Err(status::not_found("table", table_id.as_str()));
        }
        let reply = legal_actions_to_wire(&table_id, table.hand.as_ref().map_or(0, |hand| hand.hand_no), rules::legal_actions(table));
        Ok(Response::new(reply))
    }

    async fn get_hand(&self, request: Request<pb::GetHandRequest>) -> Result<Response<pb::HandView>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        let (table_id, stream) = table_stream(&request.table_id)?;
        // A hand named by number may come from a standby; the hand in play (or the last one)
        // is the primary's, so it is read there.
        let hand_no = match request.hand_no {
            Some(hand_no) => hand_no,
            None => {
                let (state, _) = self.ledger.load(&property, &stream).await?;
                let Some(table) = state.as_table() else { return Err(status::internal("get hand", &"not a table")) };
                table.hand.as_ref().map_or(table.last_hand_no, |hand| hand.hand_no)
            }
        };
        let wish = if request.hand_no.is_some() { wish } else { ReadWish { max_staleness: Some(Duration::ZERO), ..wish } };
        let view = self.ledger.reader(&property, wish).await?;
        let hand = rebuild_hand(&self.ledger, &view.store, &property, &table_id, &stream.key(), hand_no).await?;
        Ok(view.annotate(Response::new(hand)))
    }
}));


/// Every event of one hand, from `HandStarted` to `HandEnded`, with pots and awards from
/// the settlement and the stacks at the start.
async fn rebuild_hand(
    ledger: &Ledger,
    store: &Store,
    property: &str,
    table_id: &rules::TableId,
    stream_key: &str,
    hand_no: u64,
) -> Result<pb::HandView, Status> {
    // Find the HandStarted event of this hand.
    let mut filter = EventFilter {
        stream: Some(stream_key.to_string()),
        event_type: Some("HandStarted".to_string()),
        ..Default::default()
    };
    let mut start: Option<RecordedEvent> = None;
    let mut scanned = 0;
    'search: loop {
        filter.limit = 1_000;
        let page = ledger
            .db_call("events_by_filter", "events", store.events_by_filter(property, &filter))
            .await
            .map_err(|error| store_status("find hand", error))?;
        let exhausted = page.len() < 1_000;
        for event in page {
            filter.after_position = event.position;
            scanned += 1;
            if event.payload.get("hand_no").and_then(serde_json::Value::as_u64) == Some(hand_no) {
                start = Some(event);
                break 'search;
            }
        }
        if exhausted || scanned >= MAX_SCAN_EVENTS {
            break;
        }
    }
    let Some(start) = start else {
        return Err(status::not_found("hand", &format!("{table_id}#{hand_no}")));
    };
    // The table as it was when the hand started: replay up to the event before.
    let mut before = rules::TableState::default();
    let mut after_version = 0;
    while after_version < start.stream_version - 1 {
        let limit = (start.stream_version - 1 - after_version).min(1_000);
        let page = ledger
            .db_call("read_stream", "events", store.read_stream(property, stream_key, after_version, limit))
            .await
            .map_err(|error| store_status("rebuild hand", error))?;
        if page.is_empty() {
            break;
        }
        for event in &page {
            let rules::Event::Table(table_event) = decode_event(event)? else {
                return Err(status::internal("rebuild hand", &"not a table event on a table stream"));
            };
            before = before.evolve(&table_event);
            after_version = event.stream_version;
        }
    }
    let mut view = pb::HandView {
        table_id: table_id.to_string(),
        hand_no,
        starting_seats: table_view(table_id, &before, after_version).seats,
        ..Default::default()
    };
    let mut after_version = start.stream_version - 1;
    let mut paid_at_once: Vec<rules::PotResult> = Vec::new();
    'events: loop {
        let page = ledger
            .db_call("read_stream", "events", store.read_stream(property, stream_key, after_version, 1_000))
            .await
            .map_err(|error| store_status("rebuild hand", error))?;
        let exhausted = page.len() < 1_000;
        for event in page {
            after_version = event.stream_version;
            let rules::Event::Table(table_event) = decode_event(&event)? else {
                return Err(status::internal("rebuild hand", &"not a table event on a table stream"));
            };
            match &table_event {
                TableEvent::HandStarted { button_seat, .. } => view.button_seat = u32::from(*button_seat),
                // R-POT-3: a side pot paid at once is a pot of the hand, listed after the others.
                TableEvent::SidePotPaid { pot, .. } => paid_at_once.push(pot.clone()),
                TableEvent::HandSettled { pots, rake_cents, jackpot_cents, .. } => {
                    view.rake_cents = *rake_cents;
                    view.jackpot_drop_cents = *jackpot_cents;
                    let settled = pots.len();
                    let at_once = paid_at_once.iter().enumerate().map(|(i, pot)| rules::PotResult { index: (settled + i) as u8, ..pot.clone() });
                    let pots: Vec<rules::PotResult> = pots.iter().cloned().chain(at_once).collect();
                    for pot in &pots {
                        view.pots.push(pb::PotView {
                            amount_cents: pot.amount_cents,
                            eligible_seats: pot.eligible.iter().map(|seat| u32::from(*seat)).collect(),
                        });
                        for (seat, amount_cents) in &pot.awards {
                            let player_id = before
                                .seat(*seat)
                                .map(|seat_state| seat_state.player_id.to_string())
                                .unwrap_or_default();
                            view.awards.push(pb::AwardView {
                                pot_index: u32::from(pot.index),
                                seat: u32::from(*seat),
                                player_id,
                                amount_cents: *amount_cents,
                            });
                        }
                    }
                }
                _ => {}
            }
            let ended = matches!(table_event, TableEvent::HandEnded { hand_no: ended } if ended == hand_no);
            view.events.push(recorded_event_to_wire(&event));
            if ended {
                view.ended = true;
                break 'events;
            }
            if view.events.len() as i64 >= MAX_HAND_EVENTS {
                return Err(status::internal("rebuild hand", &"hand longer than the bound"));
            }
        }
        if exhausted {
            break;
        }
    }
    Ok(view)
}

chipledger_proto::rpc_table!(service_impl!(CageService {}));

type EventStream = Pin<Box<dyn Stream<Item = Result<pb::RecordedEvent, Status>> + Send + 'static>>;
type ReplyStream = Pin<Box<dyn Stream<Item = Result<pb::StreamReply, Status>> + Send + 'static>>;

/// Replies a stream keeps ready ahead of a slow reader (the device reads them in order).
const STREAM_REPLIES_AHEAD: usize = 32;

/// One command of the oneof, judged and recorded exactly as its own unary RPC: its role-table
/// row first, then [`Ledger::submit`] (the stream of a dealer's device).
async fn submit_entry(ledger: &Ledger, principal: &Principal, entry: pb::command::Command) -> Result<pb::CommandResult, Status> {
    struct AsItsRpc<'a> {
        ledger: &'a Ledger,
        principal: &'a Principal,
    }
    impl<'a> CommandVisitor for AsItsRpc<'a> {
        type Output = Pin<Box<dyn Future<Output = Result<pb::CommandResult, Status>> + Send + 'a>>;
        fn visit<T: WireCommand>(self, message: T) -> Self::Output {
            Box::pin(async move {
                crate::access::authorize(self.principal, T::RPC)?;
                self.ledger.submit(self.principal, message).await
            })
        }
    }
    entry.visit(AsItsRpc { ledger, principal }).await
}

/// The reply to one command of a stream: its result, or its refusal as its unary RPC answers it.
fn stream_reply(command_id: String, outcome: Result<pb::CommandResult, Status>) -> pb::StreamReply {
    match outcome {
        Ok(result) => pb::StreamReply { command_id, result: Some(result), ..pb::StreamReply::default() },
        Err(status) => pb::StreamReply {
            command_id,
            result: None,
            code: status.code() as i32,
            message: status.message().to_string(),
            status_details: status.details().to_vec(),
        },
    }
}

chipledger_proto::rpc_table!(service_impl!(LedgerService {
    type RecordStreamStream = ReplyStream;

    /// Commands one after the other, each answered in order before the next is read; a refusal
    /// is a reply, not the end of the stream. A message that does not decode ends it with
    /// INVALID_ARGUMENT; a stopping server ends it between commands.
    async fn record_stream(
        &self,
        request: Request<tonic::Streaming<pb::Command>>,
    ) -> Result<Response<ReplyStream>, Status> {
        let principal = principal(&request)?;
        let mut commands = request.into_inner();
        let ledger = self.ledger.clone();
        let mut stopping = self.drain.stopping();
        let (replies, answered) = tokio::sync::mpsc::channel(STREAM_REPLIES_AHEAD);
        let span = tracing::Span::current();
        tokio::spawn(
            async move {
                loop {
                    let next = tokio::select! {
                        next = commands.message() => next,
                        _ = stopping.wait_for(|stopping| *stopping) => return,
                    };
                    let reply = match next {
                        Ok(Some(command @ pb::Command { command: Some(_) })) => {
                            // The gate's checks of request bytes, for this message (NUL in a
                            // string, an unknown enum value ...): bad input, never INTERNAL.
                            let checked = crate::protowire::compiled()
                                .check_message_of(".chipledger.v1.Command", &prost::Message::encode_to_vec(&command));
                            let entry = command.command.expect("matched Some");
                            let command_id = entry.header().map(|header| header.command_id.clone()).unwrap_or_default();
                            let outcome = match checked {
                                Ok(()) => submit_entry(&ledger, &principal, entry).await,
                                Err(malformed) => Err(malformed.into_status()),
                            };
                            Ok(stream_reply(command_id, outcome))
                        }
                        Ok(Some(pb::Command { command: None })) => {
                            Ok(stream_reply(String::new(), Err(status::invalid_field("command", "one command is required"))))
                        }
                        Ok(None) => return,
                        // tonic says INTERNAL for bytes that do not decode: the caller sent them.
                        Err(status) if status.code() == tonic::Code::Internal => {
                            Err(Status::invalid_argument(format!("a stream message does not decode: {}", status.message())))
                        }
                        Err(status) => Err(status),
                    };
                    let ends = reply.is_err();
                    if replies.send(reply).await.is_err() || ends {
                        return;
                    }
                }
            }
            .instrument(span),
        );
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(answered))))
    }

    async fn record_batch(&self, request: Request<pb::RecordBatch>) -> Result<Response<pb::BatchResult>, Status> {
        let principal = principal(&request)?;
        Ok(Response::new(self.ledger.submit_batch(&principal, request.into_inner()).await?))
    }

    async fn get_balance(
        &self,
        request: Request<pb::GetBalanceRequest>,
    ) -> Result<Response<pb::GetBalanceResponse>, Status> {
        use pb::get_balance_request::AsOf as WireAsOf;
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        if request.account.parse::<rules::Account>().is_err() {
            return Err(status::invalid_field("account", "an account key such as table/T1/seat/3 or player/P7/pocket"));
        }
        let as_of = match request.as_of {
            None => AsOf::Head,
            Some(WireAsOf::GlobalPosition(position)) if position >= 0 => AsOf::Position(position),
            Some(WireAsOf::GlobalPosition(_)) => return Err(status::invalid_field("global_position", "must be >= 0")),
            Some(WireAsOf::UnixMs(unix_ms)) => {
                // The log records microseconds, the API shows milliseconds: "as of" a displayed
                // time includes every event shown with that time, so the bound is the last
                // nanosecond of that millisecond.
                let end_of_millisecond_nanos = i128::from(unix_ms) * 1_000_000 + 999_999;
                let at = time::OffsetDateTime::from_unix_timestamp_nanos(end_of_millisecond_nanos)
                    .map_err(|_| status::invalid_field("unix_ms", "out of range"))?;
                AsOf::Time(at)
            }
        };
        let view = self.ledger.reader(&property, wish).await?;
        let (balance_cents, global_position) = self
            .ledger
            .db_call("balance", "postings", view.store.balance_with_position(&property, &request.account, as_of))
            .await
            .map_err(|error| store_status("balance", error))?;
        Ok(view.annotate(Response::new(pb::GetBalanceResponse { account: request.account, balance_cents, global_position })))
    }

    async fn list_events(
        &self,
        request: Request<pb::ListEventsRequest>,
    ) -> Result<Response<pb::ListEventsResponse>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        let wire = request.filter.unwrap_or_default();
        let mut streams = Vec::new();
        if !wire.stream_id.is_empty() {
            streams.push(wire.stream_id.parse::<StreamId>().map_err(|_| {
                status::invalid_field("filter.stream_id", "table-<id>, player-<id> or cage-<id>")
            })?.key());
        }
        if !wire.table_id.is_empty() {
            streams.push(table_stream(&wire.table_id)?.1.key());
        }
        if !wire.player_id.is_empty() {
            streams.push(player_stream_key(&wire.player_id)?);
        }
        if streams.len() > 1 {
            return Err(status::invalid_field("filter", "name at most one of stream_id, table_id, player_id"));
        }
        let after = page_after(request.page.as_ref())?.max(wire.from_position.saturating_sub(1));
        let filter = EventFilter {
            stream: streams.pop(),
            gaming_day: Some(wire.gaming_day.clone()).filter(|day| !day.is_empty()),
            after_position: after,
            ..Default::default()
        };
        let page_size = self.page_size(request.page.as_ref());
        let view = self.ledger.reader(&property, wish).await?;
        let (events, last, more) =
            scan(&self.ledger, &view.store, &property, filter, &wire.event_types, wire.time_range.as_ref(), page_size).await?;
        Ok(view.annotate(Response::new(pb::ListEventsResponse {
            events: events.iter().map(recorded_event_to_wire).collect(),
            page: next_token(last, more),
        })))
    }

    async fn list_player_history(
        &self,
        request: Request<pb::ListPlayerHistoryRequest>,
    ) -> Result<Response<pb::ListEventsResponse>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        let filter = EventFilter {
            stream: Some(player_stream_key(&request.player_id)?),
            after_position: page_after(request.page.as_ref())?,
            ..Default::default()
        };
        let page_size = self.page_size(request.page.as_ref());
        let view = self.ledger.reader(&property, wish).await?;
        let (events, last, more) =
            scan(&self.ledger, &view.store, &property, filter, &[], request.time_range.as_ref(), page_size).await?;
        Ok(view.annotate(Response::new(pb::ListEventsResponse {
            events: events.iter().map(recorded_event_to_wire).collect(),
            page: next_token(last, more),
        })))
    }

    async fn list_player_sessions(
        &self,
        request: Request<pb::ListPlayerSessionsRequest>,
    ) -> Result<Response<pb::ListPlayerSessionsResponse>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        let filter = EventFilter {
            stream: Some(player_stream_key(&request.player_id)?),
            after_position: page_after(request.page.as_ref())?,
            ..Default::default()
        };
        let page_size = self.page_size(request.page.as_ref());
        let types = ["JoinedTable".to_string(), "LeftTable".to_string()];
        let view = self.ledger.reader(&property, wish).await?;
        let (events, last, more) =
            scan(&self.ledger, &view.store, &property, filter, &types, request.time_range.as_ref(), page_size).await?;
        let mut sessions: Vec<pb::PlayerSession> = Vec::new();
        for event in &events {
            let rules::Event::Player(player_event) = decode_event(event)? else { continue };
            match player_event {
                rules::PlayerEvent::JoinedTable { table_id, seat, game_key, amount_cents } => sessions.push(pb::PlayerSession {
                    table_id: table_id.as_str().to_owned(),
                    seat: u32::from(seat),
                    game: game_key,
                    started_at_unix_ms: unix_ms(event.recorded_at),
                    ended_at_unix_ms: None,
                    bought_in_cents: amount_cents,
                    left_with_cents: None,
                }),
                rules::PlayerEvent::LeftTable { table_id, seat, game_key, amount_cents, at_unix_ms } => {
                    let table_id = table_id.as_str().to_owned();
                    let open = sessions
                        .iter_mut()
                        .rev()
                        .find(|session| session.table_id == table_id && session.ended_at_unix_ms.is_none());
                    match open {
                        Some(session) => {
                            session.ended_at_unix_ms = Some(at_unix_ms);
                            session.left_with_cents = Some(amount_cents);
                        }
                        // The session started before this page: report the departure alone.
                        None => sessions.push(pb::PlayerSession {
                            table_id,
                            seat: u32::from(seat),
                            game: game_key,
                            started_at_unix_ms: 0,
                            ended_at_unix_ms: Some(at_unix_ms),
                            bought_in_cents: 0,
                            left_with_cents: Some(amount_cents),
                        }),
                    }
                }
                _ => {}
            }
        }
        Ok(view.annotate(Response::new(pb::ListPlayerSessionsResponse { sessions, page: next_token(last, more) })))
    }

    type SubscribeStream = EventStream;

    async fn subscribe(&self, request: Request<pb::SubscribeRequest>) -> Result<Response<EventStream>, Status> {
        let principal = principal(&request)?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        if request.after_position < 0 {
            return Err(status::invalid_field("after_position", "must be >= 0"));
        }
        let subscription = self
            .ledger
            .db_call("subscribe", "events", self.ledger.store_of(&property).subscribe(&property, request.after_position))
            .await
            .map_err(|error| store_status("subscribe", error))?;
        let streams = request.stream_ids;
        let types = request.event_types;
        let mut stopping = self.drain.stopping();
        // The subscriber's lag reads are database calls of this RPC; what they need is shared,
        // not copied for every event.
        let lag_probe = Arc::new((self.ledger.store_of(&property), self.ledger.db().clone(), property, tracing::Span::current()));
        let events = subscription
            .take_until(async move {
                let _ = stopping.wait_for(|stopping| *stopping).await;
            })
            .filter_map(move |item| {
                let keep = match &item {
                    Ok(event) => {
                        (streams.is_empty() || streams.contains(&event.stream))
                            && (types.is_empty() || types.contains(&event.event_type))
                    }
                    Err(_) => true,
                };
                // Lag: events between this one and the head of the log, every 100th event.
                let probe = match &item {
                    Ok(event) if keep && event.position % 100 == 0 => Some((lag_probe.clone(), event.position)),
                    _ => None,
                };
                async move {
                    if !keep {
                        return None;
                    }
                    if let Some((probe, position)) = probe {
                        let (store, db, property, rpc_span) = &*probe;
                        if let Ok(lag) = db.call("lag", "events", store.lag(property, position)).instrument(rpc_span.clone()).await {
                            telemetry::metrics().subscription_lag.record(lag.positions_behind.max(0) as u64, &[]);
                        }
                    }
                    Some(match item {
                        Ok(event) => Ok(recorded_event_to_wire(&event)),
                        Err(error) => Err(store_status("subscription", error)),
                    })
                }
            });
        Ok(Response::new(Box::pin(events)))
    }

    /// What a client needs to read and show amounts and times the way the property does.
    async fn get_property(&self, request: Request<pb::GetPropertyRequest>) -> Result<Response<pb::PropertyView>, Status> {
        let principal = principal(&request)?;
        let property_id = self.ledger.property(&principal, &request.get_ref().property_id)?;
        let properties = self.ledger.router().properties();
        let property = properties.get(&property_id).ok_or_else(|| status::not_found("property", &property_id))?;
        let zone = &property.gaming_day.zone;
        // A zone without an IANA name is a fixed offset: sent as "+HH:MM", which clients parse.
        let time_zone = match (zone.iana_name(), zone.to_fixed_offset()) {
            (Some(name), _) => name.to_string(),
            (None, Ok(offset)) => {
                let seconds = offset.seconds();
                let sign = if seconds < 0 { '-' } else { '+' };
                let minutes = seconds.unsigned_abs() / 60;
                format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
            }
            (None, Err(_)) => property.gaming_day.zone_name(),
        };
        Ok(Response::new(pb::PropertyView {
            property_id: property.id.clone(),
            currency: property.currency.clone(),
            time_zone,
            gaming_day_cutoff_minutes: property.gaming_day.cutoff_minutes,
            mtl_over_cents: property.aml.mtl_over_cents,
            ctr_over_cents: property.aml.ctr_over_cents,
        }))
    }
}));

#[tonic::async_trait]
impl AuditService for Services {
    async fn table_shift_reconciliation(
        &self,
        request: Request<pb::TableShiftReconciliationRequest>,
    ) -> Result<Response<pb::TableShiftReconciliation>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        let (table_id, stream) = table_stream(&request.table_id)?;
        let filter = EventFilter {
            stream: Some(stream.key()),
            event_type: Some("ShiftClosed".to_string()),
            after_position: request.shift_close_position.map_or(0, |position| (position - 1).max(0)),
            ..Default::default()
        };
        let view = self.ledger.reader(&property, wish).await?;
        let (events, _, _) = scan(&self.ledger, &view.store, &property, filter, &[], None, MAX_SCAN_EVENTS.min(10_000)).await?;
        let chosen = match request.shift_close_position {
            Some(position) => events.into_iter().find(|event| event.position == position),
            None => events.into_iter().last(),
        };
        let Some(event) = chosen else { return Err(status::not_found("shift close of table", table_id.as_str())) };
        // A count that differed from the book was recorded just before the close (R-CHIP-4).
        let before = self
            .ledger
            .db_call("read_stream", "events", view.store.read_stream(&property, &event.stream, event.stream_version - 2, 1))
            .await
            .map_err(|error| store_status("read the count variance", error))?;
        let variance = before.iter().find(|e| e.event_type == "CountVarianceRecorded");
        Ok(view.annotate(Response::new(shift_reconciliation(&table_id, &event, variance)?)))
    }

    async fn gaming_day_reconciliation(
        &self,
        request: Request<pb::GamingDayReconciliationRequest>,
    ) -> Result<Response<pb::GamingDayReconciliation>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        if time::Date::parse(&request.gaming_day, &time::macros::format_description!("[year]-[month]-[day]")).is_err() {
            return Err(status::invalid_field("gaming_day", "YYYY-MM-DD"));
        }
        let day_filter = |event_type: &str| EventFilter {
            event_type: Some(event_type.to_string()),
            gaming_day: Some(request.gaming_day.clone()),
            ..Default::default()
        };
        let view = self.ledger.reader(&property, wish).await?;
        let store = &view.store;
        let (closes, _, _) = scan(&self.ledger, store, &property, day_filter("GamingDayClosed"), &[], None, 1_000).await?;
        let mut issued: BTreeMap<i64, i64> = BTreeMap::new();
        let mut returned: BTreeMap<i64, i64> = BTreeMap::new();
        for close in &closes {
            let rules::Event::Cage(rules::CageEvent::GamingDayClosed { issued: i, returned: r, .. }) =
                decode_event(close)?
            else {
                continue;
            };
            for chip in i {
                *issued.entry(chip.denomination_cents).or_default() += chip.count;
            }
            for chip in r {
                *returned.entry(chip.denomination_cents).or_default() += chip.count;
            }
        }
        let to_list = |map: &BTreeMap<i64, i64>| -> Vec<pb::ChipCount> {
            map.iter().map(|(denomination_cents, count)| pb::ChipCount { denomination_cents: *denomination_cents, count: *count }).collect()
        };
        let value = |map: &BTreeMap<i64, i64>| map.iter().map(|(d, c)| d * c).sum::<i64>();
        let (shifts, _, _) = scan(&self.ledger, store, &property, day_filter("ShiftClosed"), &[], None, 1_000).await?;
        let (variances, _, _) =
            scan(&self.ledger, store, &property, day_filter("CountVarianceRecorded"), &[], None, 1_000).await?;
        let mut count_variance_cents = 0;
        let mut cage_count_variances = Vec::new();
        for variance in &variances {
            match decode_event(variance)? {
                rules::Event::Cage(rules::CageEvent::CountVarianceRecorded {
                    chips_variance, cash_variance_cents, variance_cents, signers, ..
                }) => {
                    count_variance_cents += variance_cents;
                    cage_count_variances.push(pb::CountVariance {
                        stream_id: variance.stream.clone(),
                        global_position: variance.position,
                        chips_variance: chips_to_wire(&chips_variance),
                        cash_variance_cents,
                        variance_cents,
                        signer_1: signers.first,
                        signer_2: signers.second,
                    });
                }
                rules::Event::Table(rules::TableEvent::CountVarianceRecorded { variance_cents, .. }) => {
                    count_variance_cents += variance_cents;
                }
                _ => {}
            }
        }
        let mut tables = Vec::with_capacity(shifts.len());
        for shift in &shifts {
            let Ok(StreamId::Table(table_id)) = shift.stream.parse::<StreamId>() else {
                return Err(status::internal("reconcile", &"bad table stream"));
            };
            // The variance of a close is the event just before it on the table's stream.
            let variance = variances.iter().find(|v| v.stream == shift.stream && v.stream_version + 1 == shift.stream_version);
            tables.push(shift_reconciliation(&table_id, shift, variance)?);
        }
        let jackpot = self
            .ledger
            .db_call("jackpot_day", "postings", chipledger_store::report::jackpot_day(store, &property, &request.gaming_day))
            .await
            .map_err(|error| store_status("jackpot funds", error))?;
        let jackpot_liability_cents = jackpot.iter().map(|fund| fund.closing_cents).sum();
        let jackpot_funds = jackpot
            .into_iter()
            .map(|fund| pb::JackpotFund {
                table_id: fund.table_id,
                opening_cents: fund.opening_cents,
                drops_cents: fund.drops_cents,
                paid_cents: fund.paid_cents,
                closing_cents: fund.closing_cents,
            })
            .collect();
        let sum = self
            .ledger
            .db_call("balances_sum", "postings", store.balances_sum(&property, AsOf::Head))
            .await
            .map_err(|error| store_status("sum of balances", error))?;
        Ok(view.annotate(Response::new(pb::GamingDayReconciliation {
            gaming_day: request.gaming_day.clone(),
            chips_issued: to_list(&issued),
            chips_returned: to_list(&returned),
            chip_liability_cents: value(&issued) - value(&returned),
            tables,
            sum_of_balances_cents: i64::try_from(sum).map_err(|_| status::internal("sum of balances", &"overflow"))?,
            cage_count_variances,
            count_variance_cents,
            jackpot_funds,
            jackpot_liability_cents,
        })))
    }

    async fn patron_cash_activity(
        &self,
        request: Request<pb::PatronCashActivityRequest>,
    ) -> Result<Response<pb::PatronCashActivityResponse>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        if request.gaming_day.is_empty() {
            return Err(status::invalid_field("gaming_day", "required, YYYY-MM-DD"));
        }
        let filter = EventFilter {
            stream: if request.player_id.is_empty() { None } else { Some(player_stream_key(&request.player_id)?) },
            event_type: Some("CashTransaction".to_string()),
            gaming_day: Some(request.gaming_day.clone()),
            after_position: page_after(request.page.as_ref())?,
            ..Default::default()
        };
        let page_size = self.page_size(request.page.as_ref());
        let view = self.ledger.reader(&property, wish).await?;
        let (events, last, more) = scan(&self.ledger, &view.store, &property, filter, &[], None, page_size).await?;
        // R-AUDIT-4: cash in and cash out summed separately, never netted.
        let mut patrons: BTreeMap<String, pb::PatronCashActivity> = BTreeMap::new();
        for event in &events {
            let rules::Event::Player(rules::PlayerEvent::CashTransaction {
                direction, amount_cents, mtl_entry, ctr_required, ..
            }) = decode_event(event)?
            else {
                continue;
            };
            let Ok(StreamId::Player(player_id)) = event.stream.parse::<StreamId>() else { continue };
            let player_id = player_id.as_str().to_owned();
            let patron = patrons.entry(player_id.clone()).or_insert_with(|| pb::PatronCashActivity {
                player_id,
                gaming_day: request.gaming_day.clone(),
                ..Default::default()
            });
            let inbound = matches!(direction, rules::CashDirection::In);
            if inbound {
                patron.cash_in_cents += amount_cents;
                patron.ctr_required_cash_in |= ctr_required;
            } else {
                patron.cash_out_cents += amount_cents;
                patron.ctr_required_cash_out |= ctr_required;
            }
            if mtl_entry {
                patron.mtl_entries.push(pb::CashTransaction {
                    global_position: event.position,
                    amount_cents,
                    direction: if inbound { "in" } else { "out" }.to_string(),
                    event_type: event.event_type.clone(),
                    at_unix_ms: unix_ms(event.recorded_at),
                });
            }
        }
        Ok(view.annotate(Response::new(pb::PatronCashActivityResponse {
            patrons: patrons.into_values().collect(),
            page: next_token(last, more),
        })))
    }

    async fn list_rejections(
        &self,
        request: Request<pb::ListRejectionsRequest>,
    ) -> Result<Response<pb::ListRejectionsResponse>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        check_time_range("time_range", request.time_range.as_ref())?;
        let mut after_id = page_after(request.page.as_ref())?;
        let page_size = self.page_size(request.page.as_ref());
        let table_stream = (!request.table_id.is_empty()).then(|| format!("table-{}", request.table_id));
        let player_stream = (!request.player_id.is_empty()).then(|| format!("player-{}", request.player_id));
        let gaming_day = (!request.gaming_day.is_empty()).then_some(request.gaming_day.as_str());
        let mut matched = Vec::new();
        let mut scanned = 0;
        let mut more = false;
        let view = self.ledger.reader(&property, wish).await?;
        loop {
            let page = self
                .ledger
                .db_call(
                    "list_rejections",
                    "rejections",
                    view.store.rejections_of(&property, after_id, page_size, None, gaming_day),
                )
                .await
                .map_err(|error| store_status("list rejections", error))?;
            let exhausted = (page.len() as i64) < page_size;
            for rejection in page {
                after_id = rejection.rejection_id;
                scanned += 1;
                let record = &rejection.record;
                let at = unix_ms(rejection.recorded_at);
                let keep = table_stream.as_ref().is_none_or(|stream| record.streams.contains(stream))
                    && player_stream.as_ref().is_none_or(|stream| {
                        record.streams.contains(stream) || record.player_id.as_deref() == Some(request.player_id.as_str())
                    })
                    && (request.reason_code.is_empty() || record.reason_code == request.reason_code)
                    && request.time_range.as_ref().is_none_or(|range| {
                        range.from_unix_ms.is_none_or(|from| at >= from) && range.to_unix_ms.is_none_or(|to| at <= to)
                    });
                if keep {
                    matched.push(pb::RejectionRecord {
                        command_id: record.command_id.clone(),
                        command_type: record
                            .request
                            .pointer("/command")
                            .map(command_type_of)
                            .unwrap_or_default(),
                        reason_code: record.reason_code.clone(),
                        rule_id: record.rule_id.clone(),
                        numbers: record.numbers.iter().cloned().collect(),
                        detail: record.detail.clone(),
                        actor_id: record.actor_id.clone(),
                        actor_role: wire_role(&record.actor_role) as i32,
                        at_unix_ms: at,
                        gaming_day: record.gaming_day.clone().unwrap_or_default(),
                        request_json: record.request.to_string(),
                        player_id: record.player_id.clone().unwrap_or_default(),
                        refusal_seq: rejection.refusal_seq.unwrap_or_default(),
                    });
                    if matched.len() as i64 >= page_size {
                        more = true;
                        break;
                    }
                }
            }
            if more || exhausted {
                break;
            }
            if scanned >= MAX_SCAN_EVENTS {
                more = true;
                break;
            }
        }
        Ok(view.annotate(Response::new(pb::ListRejectionsResponse {
            rejections: matched,
            page: Some(pb::PageResponse { next_page_token: if more { after_id.to_string() } else { String::new() } }),
        })))
    }

    async fn verify_chain(
        &self,
        request: Request<pb::VerifyChainRequest>,
    ) -> Result<Response<pb::VerifyChainResponse>, Status> {
        let property = self.ledger.property(&principal(&request)?, &request.get_ref().property_id)?;
        let view = self.ledger.reader(&property, ReadWish::from_metadata(request.metadata())?).await?;
        Ok(view.annotate(Response::new(crate::evidence::verify(&self.ledger, &view.store, property, request.into_inner()).await?)))
    }

    async fn get_chain_digest(
        &self,
        request: Request<pb::GetChainDigestRequest>,
    ) -> Result<Response<pb::ChainDigest>, Status> {
        let property = self.ledger.property(&principal(&request)?, &request.get_ref().property_id)?;
        let view = self.ledger.reader(&property, ReadWish::from_metadata(request.metadata())?).await?;
        let (events, refusals) = self
            .ledger
            .db_call("chain_digest", "events", view.store.heads(&property))
            .await
            .map_err(|error| store_status("chain digest", error))?;
        Ok(view.annotate(Response::new(pb::ChainDigest {
            global_position: events.0,
            chain_hash_hex: hex::encode(events.1),
            refusal_seq: refusals.0,
            refusal_hash_hex: hex::encode(refusals.1),
        })))
    }

    async fn list_checkpoints(
        &self,
        request: Request<pb::ListCheckpointsRequest>,
    ) -> Result<Response<pb::ListCheckpointsResponse>, Status> {
        let property = self.ledger.property(&principal(&request)?, &request.get_ref().property_id)?;
        let page_size = self.page_size(request.get_ref().page.as_ref());
        let view = self.ledger.reader(&property, ReadWish::from_metadata(request.metadata())?).await?;
        Ok(view.annotate(Response::new(crate::evidence::list(&self.ledger, &view.store, property, request.into_inner(), page_size).await?)))
    }

    async fn sign_checkpoint(
        &self,
        request: Request<pb::SignCheckpointRequest>,
    ) -> Result<Response<pb::SignedCheckpoint>, Status> {
        let property = self.ledger.property(&principal(&request)?, &request.get_ref().property_id)?;
        Ok(Response::new(crate::evidence::sign(&self.ledger, property, request.into_inner()).await?))
    }

    async fn get_checkpoint_key(
        &self,
        _request: Request<pb::GetCheckpointKeyRequest>,
    ) -> Result<Response<pb::CheckpointKey>, Status> {
        Ok(Response::new(crate::evidence::key(&self.ledger)?))
    }
}

#[tonic::async_trait]
impl ApprovalService for Services {
    async fn approve(&self, request: Request<pb::ApproveRequest>) -> Result<Response<pb::ApprovalToken>, Status> {
        let approver = principal(&request)?;
        Ok(Response::new(self.ledger.approve(&approver, request.get_ref())?))
    }
}

/// The name of a recorded rules command (`{"Table":{"op":{"op":"BuyIn",...}}}` -> "BuyIn").
fn command_type_of(command: &serde_json::Value) -> String {
    command
        .as_object()
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

/// A shift close as reported, with the count variance recorded just before it, if any.
fn shift_reconciliation(
    table_id: &rules::TableId,
    event: &RecordedEvent,
    variance: Option<&RecordedEvent>,
) -> Result<pb::TableShiftReconciliation, Status> {
    let rules::Event::Table(TableEvent::ShiftClosed {
        opening_tray, closing_tray, fills_cents, credits_cents, drop_cents, result_cents, signers, ..
    }) = decode_event(event)?
    else {
        return Err(status::internal("reconcile", &"not a ShiftClosed event"));
    };
    let (tray_variance, drop_variance_cents, variance_cents) = match variance.map(decode_event).transpose()? {
        Some(rules::Event::Table(TableEvent::CountVarianceRecorded { tray_variance, drop_variance_cents, variance_cents, .. })) => {
            (chips_to_wire(&tray_variance), drop_variance_cents, variance_cents)
        }
        _ => (Vec::new(), 0, 0),
    };
    let signers = signers.unwrap_or_default();
    let gaming_day = event.typed_metadata().map(|metadata| metadata.gaming_day).unwrap_or_default();
    Ok(pb::TableShiftReconciliation {
        tray_variance,
        drop_variance_cents,
        variance_cents,
        signer_1: signers.first,
        signer_2: signers.second,
        table_id: table_id.to_string(),
        gaming_day,
        opening_inventory_cents: rules::money::chips_value_cents(&opening_tray),
        closing_inventory_cents: rules::money::chips_value_cents(&closing_tray),
        fills_cents,
        credits_cents,
        drop_cents,
        result_cents,
        shift_close_position: event.position,
        opening_tray: chips_to_wire(&opening_tray),
        closing_tray: chips_to_wire(&closing_tray),
    })
}
