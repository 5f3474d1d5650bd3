//! `LedgerService`: the stream and batch of a dealer's device, balances, event lists, player
//! history and sessions, the live subscription, and the property's settings.

use std::time::Instant;

use super::*;

pub(super) type EventStream = Pin<Box<dyn Stream<Item = Result<pb::RecordedEvent, Status>> + Send + 'static>>;
pub(super) type ReplyStream = Pin<Box<dyn Stream<Item = Result<pb::StreamReply, Status>> + Send + 'static>>;

/// Replies a stream keeps ready ahead of a slow reader (the device reads them in order).
pub(super) const STREAM_REPLIES_AHEAD: usize = 32;

/// How often a subscription reads its lag behind the head (`chipledger.subscription.lag`).
const LAG_PROBE_EVERY: Duration = Duration::from_millis(100);

/// One command of the oneof, judged and recorded exactly as its own unary RPC: its role-table
/// row first, then [`Ledger::submit`] (the stream of a dealer's device).
pub(super) async fn submit_entry(ledger: &Ledger, principal: &Principal, entry: pb::command::Command) -> Result<pb::CommandResult, Status> {
    struct AsItsRpc<'a> {
        ledger: &'a Ledger,
        principal: &'a Principal,
    }
    impl<'a> CommandVisitor for AsItsRpc<'a> {
        type Output = Pin<Box<dyn Future<Output = Result<pb::CommandResult, Status>> + Send + 'a>>;
        fn visit<T: WireCommand>(self, message: T) -> Self::Output {
            // The role is the ledger's first check (Ledger::submit), as for the unary RPC.
            Box::pin(async move { self.ledger.submit(self.principal, message).await })
        }
    }
    entry.visit(AsItsRpc { ledger, principal }).await
}

/// The reply to one command of a stream: its result, or its refusal as its unary RPC answers it.
pub(super) fn stream_reply(command_id: String, outcome: Result<pb::CommandResult, Status>) -> pb::StreamReply {
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

/// A status that decides nothing: the command's outcome is unknown or it was not judged (the
/// database away, the server stopping, a bound reached); a refusal, bad input or a replay is a
/// decision.
fn not_decided(code: tonic::Code) -> bool {
    use tonic::Code::*;
    matches!(code, Unavailable | Unknown | Internal | DeadlineExceeded | Aborted | Cancelled | DataLoss | ResourceExhausted)
}

chipledger_proto::rpc_table!(service_impl!(LedgerService {
    type RecordStreamStream = ReplyStream;

    /// Commands one after the other, each answered in order before the next is read. A command
    /// not recorded (refused, bad input, or not decided: outcome unknown, database away) is
    /// answered, then the stream ends before the next is read (`status::stream_ends_after`). A
    /// message that does not decode ends it with INVALID_ARGUMENT; a stopping server ends it
    /// between commands.
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
                        next = commands.message() => Some(next),
                        _ = stopping.wait_for(|stopping| *stopping) => None,
                    };
                    let Some(next) = next else {
                        // Between commands: said so, not a plain end.
                        let _ = replies.send(Err(status::shutting_down())).await;
                        return;
                    };
                    let reply = match next {
                        Ok(Some(command @ pb::Command { command: Some(_) })) => {
                            // The gate's checks of request bytes, for this message (NUL in a
                            // string, an unknown enum value ...): bad input, never INTERNAL.
                            let checked = crate::protowire::compiled()
                                .check_message_of(".chipledger.v1.Command", &prost::Message::encode_to_vec(&command));
                            let entry = command.command.expect("matched Some");
                            let command_id = entry.header().map(|header| chipledger_proto::command_id_of(header).to_string()).unwrap_or_default();
                            // Each command as the principal stands now: one a reload removed or
                            // changed ends the stream (its open stream had kept recording).
                            if !ledger.authenticator().still_holds(&principal) {
                                let _ = replies.send(Err(status::principal_changed(&principal.id))).await;
                                return;
                            }
                            let outcome = match checked {
                                Ok(()) => submit_entry(&ledger, &principal, entry).await,
                                Err(malformed) => Err(malformed.into_status()),
                            };
                            // A command not recorded: the commands after it were sent for the
                            // table as it would be with it, so none is decided without it. Its
                            // reply goes out, then the stream ends (the crash pass: after a
                            // command not decided, the next were judged on a table without it,
                            // refused for good or recorded in the wrong round; after a refused
                            // StartHand, the new hand's posts and actions went into the hand
                            // still open). The device sends what it still means on a new stream.
                            // Not recorded: Some(refused), else not decided.
                            let unrecorded = outcome.as_ref().err().map(|status| !not_decided(status.code()));
                            let reply = stream_reply(command_id.clone(), outcome);
                            if let Some(refused) = unrecorded {
                                let _ = replies.send(Ok(reply)).await;
                                let _ = replies.send(Err(status::stream_ends_after(&command_id, refused))).await;
                                return;
                            }
                            Ok(reply)
                        }
                        Ok(Some(pb::Command { command: None })) => {
                            let refused = stream_reply(String::new(), Err(status::invalid_field("command", "one command is required")));
                            let _ = replies.send(Ok(refused)).await;
                            let _ = replies.send(Err(status::stream_ends_after("", true))).await;
                            return;
                        }
                        Ok(None) => return,
                        // tonic says INTERNAL for bytes that do not decode and OUT_OF_RANGE for a
                        // message past the bound: the caller sent them (answered with details).
                        Err(status) if status.code() == tonic::Code::Internal => {
                            Err(status::invalid_field("command", format!("a stream message does not decode: {}", status.message())))
                        }
                        Err(status) if status.code() == tonic::Code::OutOfRange => Err(status::message_too_large(crate::serve::MAX_MESSAGE_BYTES)),
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
        let Ok(account) = request.account.parse::<rules::Account>() else {
            return Err(status::invalid_field("account", "an account key such as table/T1/seat/3 or player/P7/pocket"));
        };
        let as_of = match request.as_of {
            None => as_of_point(&self.ledger, None, None)?,
            Some(WireAsOf::GlobalPosition(position)) => as_of_point(&self.ledger, Some(position), None)?,
            Some(WireAsOf::UnixMs(unix_ms)) => as_of_point(&self.ledger, None, Some(unix_ms))?,
        };
        let view = self.ledger.reader(&property, wish).await?;
        let (balance_cents, global_position) = self
            .ledger
            .db_call("balance", "postings", view.store.balance_with_position(&property, &request.account, as_of))
            .await
            .map_err(|error| store_status("balance", error))?;
        if balance_cents == 0 {
            self.account_can_hold(&property, &view.store, &account, request.as_of.is_some()).await?;
        }
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
        if !wire.gaming_day.is_empty() {
            check_gaming_day("filter.gaming_day", &wire.gaming_day)?;
        }
        if wire.from_position < 0 {
            return Err(status::invalid_field("filter.from_position", format!("{} is below 0", wire.from_position)));
        }
        let pager = Pager::of(request.page.as_ref(), self.ledger.limits())?;
        let after = pager.after.max(wire.from_position.saturating_sub(1));
        let filter = EventFilter {
            stream: streams.pop(),
            gaming_day: Some(wire.gaming_day.clone()).filter(|day| !day.is_empty()),
            after_position: after,
            ..Default::default()
        };
        let page_size = pager.size;
        let view = self.ledger.reader(&property, wish).await?;
        let (events, last, more) =
            scan(&self.ledger, &view.store, &property, filter, &wire.event_types, wire.time_range.as_ref(), page_size).await?;
        // A patron named by `player_id` or by `stream_id` (the wave-2 pass: `player-pf` answered
        // empty for PF).
        let named_patron = match wire.stream_id.parse::<StreamId>() {
            Ok(StreamId::Player(id)) => Some(id.as_str().to_owned()),
            _ => Some(wire.player_id.clone()).filter(|id| !id.is_empty()),
        };
        if events.is_empty()
            && let Some(patron) = named_patron
        {
            self.patron_in_its_own_case(&property, &view.store, &patron, |known| format!("player {known}")).await?;
        }
        Ok(view.annotate(Response::new(pb::ListEventsResponse {
            events: events.into_iter().map(recorded_event_to_wire).collect(),
            page: Pager::next(last, more),
        })))
    }

    async fn list_player_history(
        &self,
        request: Request<pb::ListPlayerHistoryRequest>,
    ) -> Result<Response<pb::ListEventsResponse>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let player = PlayerPage { property_id: &request.property_id, player_id: &request.player_id, page: request.page.as_ref() };
        let (view, events, last, more) = self.player_page(&principal, wish, player, &[], request.time_range.as_ref()).await?;
        if events.is_empty() {
            let property = self.ledger.property(&principal, &request.property_id)?;
            self.patron_in_its_own_case(&property, &view.store, &request.player_id, |known| format!("player {known}")).await?;
        }
        Ok(view.annotate(Response::new(pb::ListEventsResponse {
            events: events.into_iter().map(recorded_event_to_wire).collect(),
            page: Pager::next(last, more),
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
        let pager = Pager::of(request.page.as_ref(), self.ledger.limits())?;
        let stream = player_stream_key(&request.player_id)?;
        let view = self.ledger.reader(&property, wish).await?;
        // Sessions are built from the patron's seat events from the start of the range, whatever
        // the page: a page of events cut sessions in two, listed one twice and made departures
        // without a start (the auditor's pass: three rows at page size 1 for two sessions). The
        // token is the position of the last listed session's first event; a page ends once its
        // sessions are complete (ended, or the history read to its end).
        let types = ["JoinedTable".to_string(), "LeftTable".to_string(), "MovedTable".to_string()];
        let mut sessions = Sessions::default();
        let mut after = 0;
        loop {
            let filter = EventFilter { stream: Some(stream.clone()), after_position: after, ..Default::default() };
            let (events, last, more) =
                scan(&self.ledger, &view.store, &property, filter, &types, request.time_range.as_ref(), chipledger_store::MAX_PAGE).await?;
            for event in &events {
                sessions.apply(event)?;
            }
            if !more || sessions.page_complete(pager.after, pager.size) {
                break;
            }
            if sessions.read > MAX_SESSION_EVENTS {
                return Err(Status::failed_precondition(format!(
                    "the patron has more than {MAX_SESSION_EVENTS} seat events in the range: narrow time_range"
                )));
            }
            after = last.unwrap_or(after);
        }
        let (sessions, next) = sessions.page(pager.after, pager.size);
        if sessions.is_empty() {
            self.patron_in_its_own_case(&property, &view.store, &request.player_id, |known| format!("player {known}")).await?;
        }
        Ok(view.annotate(Response::new(pb::ListPlayerSessionsResponse {
            sessions,
            page: Some(pb::PageResponse { next_page_token: next.map(|position| position.to_string()).unwrap_or_default() }),
        })))
    }

    type SubscribeStream = EventStream;

    async fn subscribe(&self, request: Request<pb::SubscribeRequest>) -> Result<Response<EventStream>, Status> {
        let principal = principal(&request)?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        if request.after_position < 0 {
            return Err(status::invalid_field("after_position", "must be >= 0"));
        }
        if request.after_position > 0 {
            let head = self
                .ledger
                .db_call("subscribe", "events", self.ledger.store_of(&property).chain_digest(&property))
                .await
                .map_err(|error| store_status("subscribe", error))?;
            if request.after_position > head.position {
                return Err(status::position_past_head(request.after_position, head.position));
            }
        }
        // A patron's stream named in another case of the id is refused, as reads are.
        let store = self.ledger.store_of(&property);
        for stream in &request.stream_ids {
            if let Ok(StreamId::Player(id)) = stream.parse::<StreamId>() {
                self.patron_in_its_own_case(&property, &store, id.as_str(), |known| format!("player-{known}")).await?;
            }
        }
        let subscription = self
            .ledger
            .db_call("subscribe", "events", self.ledger.store_of(&property).subscribe(&property, request.after_position))
            .await
            .map_err(|error| store_status("subscribe", error))?;
        let streams = request.stream_ids;
        let types = request.event_types;
        let mut stopping = self.drain.stopping();
        let authenticator = self.ledger.authenticator();
        // The subscriber's lag is read at most every LAG_PROBE_EVERY, by a task of its own: a
        // database call never holds up delivery (catching up, the stream moves ~100k events/s).
        let lag_probe = Arc::new((self.ledger.store_of(&property), self.ledger.db().clone(), property, tracing::Span::current()));
        let mut probed_at: Option<Instant> = None;
        // A stopping server ends the subscription with UNAVAILABLE SHUTTING_DOWN, not a plain
        // end a client takes for "nothing more" (the crash pass).
        let stopped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped_at_end = stopped.clone();
        let events = subscription
            .take_until(async move {
                let _ = stopping.wait_for(|stopping| *stopping).await;
                stopped.store(true, std::sync::atomic::Ordering::Release);
            })
            .filter_map(move |item| {
                // Each event as the principal stands now: one a reload removed or changed gets
                // no more (a removed auditor's subscription had kept delivering).
                if !authenticator.still_holds(&principal) {
                    return std::future::ready(Some(Err(status::principal_changed(&principal.id))));
                }
                let keep = match &item {
                    Ok(event) => {
                        (streams.is_empty() || streams.contains(&event.stream))
                            && (types.is_empty() || types.contains(&event.event_type))
                    }
                    Err(_) => true,
                };
                if let Ok(event) = &item
                    && keep
                    && probed_at.is_none_or(|at| at.elapsed() >= LAG_PROBE_EVERY)
                {
                    probed_at = Some(Instant::now());
                    let (probe, position) = (lag_probe.clone(), event.position);
                    tokio::spawn(async move {
                        let (store, db, property, rpc_span) = &*probe;
                        if let Ok(lag) = db.call("lag", "events", store.lag(property, position)).instrument(rpc_span.clone()).await {
                            telemetry::metrics().subscription_lag.record(lag.positions_behind.max(0) as u64, &[]);
                        }
                    });
                }
                std::future::ready(keep.then(|| match item {
                    Ok(event) => Ok(recorded_event_to_wire(event)),
                    Err(error) => Err(store_status("subscription", error)),
                }))
            })
            .chain(futures::stream::once(async move { stopped_at_end.load(std::sync::atomic::Ordering::Acquire) }).filter_map(|stopped| {
                std::future::ready(stopped.then(|| Err(status::shutting_down())))
            }))
            // The stream ends with that answer.
            .scan(false, |ended, item: Result<pb::RecordedEvent, Status>| {
                if *ended {
                    return std::future::ready(None);
                }
                *ended = matches!(&item, Err(status) if status.code() == tonic::Code::Unauthenticated);
                std::future::ready(Some(item))
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

/// The page of one player's stream a list RPC asks for.
struct PlayerPage<'r> {
    property_id: &'r str,
    player_id: &'r str,
    page: Option<&'r pb::PageRequest>,
}

impl Services {
    /// A patron named by an id the property never wrote, but wrote in another case, is refused
    /// (`PLAYER_ID_IN_ANOTHER_CASE`, naming what to `ask_for` with the known id) as a write under
    /// it is: one person, one id. Reads of a balance, a history, sessions, events or cash under
    /// the wrong case had answered nothing, "no cash" for a patron over the CTR threshold (the
    /// numbers and AML passes).
    pub(super) async fn patron_in_its_own_case(
        &self,
        property: &str,
        store: &Store,
        player_id: &str,
        ask_for: impl FnOnce(&str) -> String,
    ) -> Result<(), Status> {
        let Ok(id) = rules::PlayerId::new(player_id) else { return Ok(()) };
        let stream = StreamId::Player(id).key();
        let version = self
            .ledger
            .db_call("patron", "streams", store.stream_version(property, &stream))
            .await
            .map_err(|error| store_status("find the patron", error))?;
        if version > 0 {
            return Ok(());
        }
        let known = self
            .ledger
            .db_call("patron", "streams", store.players_in_another_case(property, &[player_id]))
            .await
            .map_err(|error| store_status("find the patron", error))?;
        match known.first() {
            Some((_, Some(known))) => Err(status::rejection(&rules::Rejection::new(
                crate::ledger::PLAYER_ID_IN_ANOTHER_CASE,
                format!("patron {known} is known under that id in another case: ask for {}", ask_for(known)),
            ))),
            _ => Ok(()),
        }
    }

    /// `GetBalance` of an account that holds nothing: refused when the account could never hold
    /// anything, so that a mistyped key is not read as an empty account (the numbers pass: 0 for
    /// `seat/11` at a ten-seat table, and for a patron under an id in another case).
    /// A seat is held to the table's seats now, or, read as of a past point, to the most seats a
    /// table ever has (the wave-2 pass: a seat of a table since made smaller was refused as of
    /// when it was there).
    async fn account_can_hold(&self, property: &str, store: &Store, account: &rules::Account, as_of: bool) -> Result<(), Status> {
        match account {
            rules::Account::Pocket { player_id } | rules::Account::Iou { player_id } => {
                let key = account.key();
                self.patron_in_its_own_case(property, store, player_id.as_str(), |known| key.replacen(player_id.as_str(), known, 1)).await?;
            }
            rules::Account::Seat { seat, .. } if as_of => {
                if usize::from(*seat) > rules::MAX_SEATS {
                    return Err(status::invalid_field("account", format!("a table has seats 1 to {} at most, not {seat}", rules::MAX_SEATS)));
                }
            }
            rules::Account::Seat { table_id, seat } => {
                let (state, _) = self.ledger.load(property, &StreamId::Table(table_id.clone())).await?;
                // A table never opened holds nothing and answers as GetTable does (a typo's 0
                // would read as an empty seat); as of a past point it may not be open yet.
                let Some(config) = state.as_table().and_then(|table| table.config.as_ref()) else {
                    return Err(status::not_found("table", table_id.as_str()));
                };
                if *seat > config.max_seats {
                    return Err(status::invalid_field("account", format!("table {table_id} has seats 1 to {}, not {seat}", config.max_seats)));
                }
            }
            // Any other account of a table or cage never opened, alike (the flows pass: a
            // mistyped table's rake box or jackpot fund read $0).
            account if !as_of => {
                let owner = match account {
                    rules::Account::Tray { table_id, .. }
                    | rules::Account::Drop { table_id }
                    | rules::Account::Rake { table_id }
                    | rules::Account::Toke { table_id }
                    | rules::Account::Kitty { table_id }
                    | rules::Account::Jackpot { table_id }
                    | rules::Account::Pot { table_id, .. } => Some(("table", table_id.to_string(), StreamId::Table(table_id.clone()))),
                    rules::Account::CageChips { cage_id, .. } | rules::Account::CageCash { cage_id } | rules::Account::CageMarkers { cage_id } => {
                        Some(("cage", cage_id.to_string(), StreamId::Cage(cage_id.clone())))
                    }
                    _ => None,
                };
                if let Some((what, id, stream)) = owner {
                    let version = self
                        .ledger
                        .db_call("balance", "streams", store.stream_version(property, &stream.key()))
                        .await
                        .map_err(|error| store_status("find the account's owner", error))?;
                    if version == 0 {
                        return Err(status::not_found(what, &id));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A page of one player's own stream (history, sessions), of the given event types.
    async fn player_page(
        &self,
        principal: &Principal,
        wish: ReadWish,
        player: PlayerPage<'_>,
        event_types: &[String],
        time_range: Option<&pb::TimeRange>,
    ) -> Result<(crate::shards::ReadView, Vec<RecordedEvent>, Option<i64>, bool), Status> {
        let property = self.ledger.property(principal, player.property_id)?;
        let pager = Pager::of(player.page, self.ledger.limits())?;
        let filter = EventFilter { stream: Some(player_stream_key(player.player_id)?), after_position: pager.after, ..Default::default() };
        let view = self.ledger.reader(&property, wish).await?;
        let (events, last, more) = scan(&self.ledger, &view.store, &property, filter, event_types, time_range, pager.size).await?;
        Ok((view, events, last, more))
    }
}

/// Seat events a session listing reads at most for one page (a patron's joins, departures and
/// moves over years are thousands).
const MAX_SESSION_EVENTS: usize = 200_000;

/// A patron's sessions, built from their seat events in log order, each keyed by the position of
/// its first event.
#[derive(Default)]
struct Sessions {
    sessions: Vec<(i64, pb::PlayerSession)>,
    read: usize,
}

impl Sessions {
    fn apply(&mut self, event: &RecordedEvent) -> Result<(), Status> {
        self.read += 1;
        let rules::Event::Player(player_event) = decode_event(event)? else { return Ok(()) };
        match player_event {
            rules::PlayerEvent::JoinedTable { table_id, seat, game_key, amount_cents } => {
                let table_id = table_id.as_str().to_owned();
                // A second buy-in at a table the patron never left follows a buy-in taken back by
                // a correction (R-STAKE-3: the seat buys in again): one session, bought in for
                // what stands (the night's pass: two open sessions, $250 bought in for $150).
                match self.open_at(&table_id) {
                    Some(session) => session.bought_in_cents = amount_cents,
                    None => self.begin(event, pb::PlayerSession { table_id, seat: u32::from(seat), game: game_key, bought_in_cents: amount_cents, ..Default::default() }),
                }
            }
            rules::PlayerEvent::LeftTable { table_id, seat, game_key, amount_cents, at_unix_ms, .. } => {
                let table_id = table_id.as_str().to_owned();
                match self.open_at(&table_id) {
                    Some(session) => {
                        session.ended_at_unix_ms = Some(at_unix_ms);
                        session.left_with_cents = Some(amount_cents);
                    }
                    // The session started before the time range: the departure alone.
                    None => self.sessions.push((
                        event.position,
                        pb::PlayerSession {
                            table_id,
                            seat: u32::from(seat),
                            game: game_key,
                            ended_at_unix_ms: Some(at_unix_ms),
                            left_with_cents: Some(amount_cents),
                            ..Default::default()
                        },
                    )),
                }
            }
            // R-STAKE-6: a house move carries the session on to the new seat (the night's pass:
            // the old session never ended, and the new one had no start).
            rules::PlayerEvent::MovedTable { from_table_id, to_table_id, to_seat, game_key, .. } => match self.open_at(from_table_id.as_str()) {
                Some(session) => {
                    session.table_id = to_table_id.as_str().to_owned();
                    session.seat = u32::from(to_seat);
                    session.game = game_key;
                }
                None => self.begin(event, pb::PlayerSession { table_id: to_table_id.as_str().to_owned(), seat: u32::from(to_seat), game: game_key, ..Default::default() }),
            },
            _ => {}
        }
        Ok(())
    }

    /// A session begun by `event` (its time the event's).
    fn begin(&mut self, event: &RecordedEvent, session: pb::PlayerSession) {
        self.sessions.push((event.position, pb::PlayerSession { started_at_unix_ms: super::happened_unix_ms(event), ..session }));
    }

    /// The patron's open session at `table_id`, if any.
    fn open_at(&mut self, table_id: &str) -> Option<&mut pb::PlayerSession> {
        self.sessions.iter_mut().rev().map(|(_, session)| session).find(|session| session.table_id == table_id && session.ended_at_unix_ms.is_none())
    }

    /// The page after `after` is known: more than `size` sessions begin after it and the first
    /// `size` of them have ended (an open one may end further on).
    fn page_complete(&self, after: i64, size: i64) -> bool {
        let mut listed = self.sessions.iter().filter(|(first, _)| *first > after);
        let page: Vec<_> = listed.by_ref().take(size.max(0) as usize).collect();
        page.len() as i64 == size && page.iter().all(|(_, session)| session.ended_at_unix_ms.is_some()) && listed.next().is_some()
    }

    /// The sessions beginning after `after`, at most `size`, and the token of the next page.
    fn page(self, after: i64, size: i64) -> (Vec<pb::PlayerSession>, Option<i64>) {
        let mut listed = self.sessions.into_iter().filter(|(first, _)| *first > after);
        let page: Vec<(i64, pb::PlayerSession)> = listed.by_ref().take(size.max(0) as usize).collect();
        let next = if listed.next().is_some() { page.last().map(|(first, _)| *first) } else { None };
        (page.into_iter().map(|(_, session)| session).collect(), next)
    }
}
