//! `TableService`: the table's commands (from the RPC table) and its queries: the table, its
//! legal actions, a hand rebuilt from the log; and `CageService`, whose RPCs are all commands.

use super::*;

/// Events a hand may have at most when rebuilt (bound).
pub(super) const MAX_HAND_EVENTS: i64 = 5_000;

chipledger_proto::rpc_table!(service_impl!(TableService {
    async fn get_table(&self, request: Request<pb::GetTableRequest>) -> Result<Response<pb::TableView>, Status> {
        let principal = principal(&request)?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        let (table_id, stream) = table_stream(&request.table_id)?;
        use pb::get_table_request::AsOf as WireAsOf;
        let as_of = match request.as_of {
            None => None,
            Some(WireAsOf::GlobalPosition(position)) => Some(as_of_point(&self.ledger, Some(position), None)?),
            Some(WireAsOf::UnixMs(unix_ms)) => Some(as_of_point(&self.ledger, None, Some(unix_ms))?),
        };
        let (state, version, as_of_position) = match as_of {
            None => {
                let (state, version) = self.ledger.load(&property, &stream).await?;
                (state, version, 0)
            }
            Some(as_of) => self.ledger.load_as_of(&property, &stream, as_of).await?,
        };
        let Some(table) = state.as_table() else { return Err(status::internal("get table", &"not a table")) };
        if table.config.is_none() {
            return Err(status::not_found("table", table_id.as_str()));
        }
        let mut view = table_view(&table_id, table, version);
        view.as_of_position = as_of_position;
        Ok(Response::new(view))
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

/// A pot of the hand and its awards, the winners named from the table as the hand began.
fn add_pot(view: &mut pb::HandView, before: &rules::TableState, pot: &rules::PotResult, pot_index: u32) {
    view.pots.push(pb::PotView {
        amount_cents: pot.amount_cents,
        eligible_seats: pot.eligible.iter().map(|seat| u32::from(*seat)).collect(),
        returned_cents: pot.returned_cents,
    });
    for (seat, amount_cents) in &pot.awards {
        let player_id = before.seat(*seat).map(|seat_state| seat_state.player_id.to_string()).unwrap_or_default();
        view.awards.push(pb::AwardView { pot_index, seat: u32::from(*seat), player_id, amount_cents: *amount_cents });
    }
}

/// Every event of one hand, from `HandStarted` to `HandEnded`, with pots and awards from
/// the settlement and the stacks at the start.
pub(super) async fn rebuild_hand(
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
            let started = decode_event(&event)?;
            if matches!(started, rules::Event::Table(rules::TableEvent::HandStarted { hand_no: found, .. }) if found == hand_no) {
                start = Some(event);
                break 'search;
            }
        }
        if exhausted {
            break;
        }
        // Every hand of the table is searched (it stopped at 50,000 and answered a later hand
        // as none); past the reports' bound the answer says so instead.
        if scanned >= super::pager::MAX_REPORT_EVENTS {
            return Err(Status::out_of_range(format!(
                "table {table_id} has more than {} hands before the one asked for: not searched further",
                super::pager::MAX_REPORT_EVENTS
            )));
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
    // The table through the hand's events, for the pots of a hand still in play.
    let mut during = before.clone();
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
                    // The hand's rake: the settlement's and the side pots' paid at once (R-RAKE-1).
                    view.rake_cents = *rake_cents + paid_at_once.iter().map(|pot| pot.rake_cents).sum::<i64>();
                    view.jackpot_drop_cents = *jackpot_cents;
                    let settled = pots.len();
                    let at_once = paid_at_once.iter().enumerate().map(|(i, pot)| rules::PotResult { index: (settled + i) as u8, ..pot.clone() });
                    let pots: Vec<rules::PotResult> = pots.iter().cloned().chain(at_once).collect();
                    for pot in &pots {
                        add_pot(&mut view, &before, pot, u32::from(pot.index));
                    }
                }
                _ => {}
            }
            let ended = matches!(table_event, TableEvent::HandEnded { hand_no: ended } if ended == hand_no);
            during = during.evolve(&table_event);
            view.events.push(recorded_event_to_wire(event));
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
    // A hand still in play lists its pots as they stand (R-POT-1: main and side pots, dead
    // chips in the main pot; no awards yet), then the side pots already paid at once (R-POT-3):
    // paid, they are the hand's pots whatever comes next (the seeds pass: a hand in play showed
    // none; the pots pass: then only those paid at once, not the main pot still contested).
    if view.pots.is_empty() && !view.ended {
        let in_play = during.hand.as_ref().map(rules::pots::pots_in_play).unwrap_or_default();
        for layer in in_play.iter().filter(|layer| layer.amount_cents > 0) {
            view.pots.push(pb::PotView {
                amount_cents: layer.amount_cents,
                eligible_seats: layer.eligible.iter().map(|seat| u32::from(*seat)).collect(),
                returned_cents: layer.returned_cents,
            });
        }
        let first = view.pots.len();
        for (index, pot) in paid_at_once.iter().enumerate() {
            add_pot(&mut view, &before, pot, (first + index) as u32);
        }
    }
    // R-AUDIT-1: the corrections recorded since that reverse an event of the hand (the cage
    // pass: a hand voided by a correction still read as settled, the correction nowhere).
    let hand_events: Vec<&str> = view.events.iter().map(|event| event.event_id.as_str()).collect();
    let corrections = EventFilter {
        stream: Some(stream_key.to_string()),
        after_position: view.events.last().map_or(start.position, |event| event.global_position),
        ..Default::default()
    };
    let (corrections, _, _) = super::pager::scan(ledger, store, property, corrections, &["Corrected".to_string()], None, MAX_SCAN_EVENTS).await?;
    for event in corrections {
        if let rules::Event::Table(TableEvent::Corrected { reverses_event_id, .. }) = decode_event(&event)?
            && hand_events.contains(&reverses_event_id.as_str())
        {
            view.corrections.push(recorded_event_to_wire(event));
        }
    }
    Ok(view)
}

chipledger_proto::rpc_table!(service_impl!(CageService {}));
