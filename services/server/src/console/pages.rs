//! The console's pages. Each reads through the gRPC service implementations as the signed-in
//! principal ([`Console::call`]) and shows what it got: nothing here computes a balance, a pot
//! or a reconciliation of its own; it arranges what the ledger answered for a person to read.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use chipledger_proto::v1 as pb;
use chipledger_proto::v1::audit_service_server::AuditService;
use chipledger_proto::v1::ledger_service_server::LedgerService;
use chipledger_proto::v1::table_service_server::TableService;
use chipledger_rules::{self as rules, CageEvent, PlayerEvent, StreamId, TableEvent};
use futures::StreamExt;
use minijinja::context;
use serde::Serialize;
use tonic::Status;

use super::view::{self, Cell, Listing, Lists, Units, link, num, text};
use super::{Console, Signed, rpc};

/// Events read at most for one list (the lists page through them; CSV has them all).
const MAX_LIST_EVENTS: usize = 5_000;
/// What a list cut at [`MAX_LIST_EVENTS`] says.
const LIST_CUT: &str = "Only the first 5,000 are listed here: there are more. Narrow the view (a gaming day, a table, a player) or read them with the CLI.";
/// Gaming days the chip-liability chart goes back.
const LIABILITY_DAYS: i64 = 14;
/// Events of one cage stream folded at most.
const MAX_FOLD_EVENTS: usize = 100_000;

type Query_ = Query<HashMap<String, String>>;

/// The answer of a page: the page, or the refusal it met.
fn answer(console: &Console, signed: &Signed, result: Result<Response, Status>) -> Response {
    result.unwrap_or_else(|status| console.refusal(signed, &status))
}

/// Every page of a paged read, in order, until the last page or `bound` items: `read` asks
/// for one page and answers its items and the next page's token. Answers the items (at most
/// `bound`) and whether more were left: a list cut short says so ([`Listing::cut_if`]), never
/// silently (the console pass: past 5,000 refusals the newest were missing from the page). The
/// one place the console pages through an RPC.
async fn all_pages<T, Fut>(bound: usize, mut read: impl FnMut(pb::PageRequest) -> Fut) -> Result<(Vec<T>, bool), Status>
where
    Fut: Future<Output = Result<(Vec<T>, Option<pb::PageResponse>), Status>>,
{
    let mut all = Vec::new();
    let mut page_token = String::new();
    loop {
        let page_size = u32::try_from((bound - all.len()).clamp(1, 1_000)).unwrap_or(1_000);
        let (items, page) = read(pb::PageRequest { page_size, page_token }).await?;
        all.extend(items);
        page_token = page.map(|page| page.next_page_token).unwrap_or_default();
        if page_token.is_empty() {
            return Ok((all, false));
        }
        if all.len() >= bound {
            all.truncate(bound);
            return Ok((all, true));
        }
    }
}

/// Events matching `filter`, oldest first, at most [`MAX_LIST_EVENTS`], and the property's head
/// position the read reflects.
async fn events(console: &Console, signed: &Signed, filter: pb::EventFilter) -> Result<(Vec<pb::RecordedEvent>, i64), Status> {
    events_bounded(console, signed, filter, MAX_LIST_EVENTS).await
}

/// As [`events`], at most `bound` (a state folded from a whole stream needs all of it).
async fn events_bounded(
    console: &Console,
    signed: &Signed,
    filter: pb::EventFilter,
    bound: usize,
) -> Result<(Vec<pb::RecordedEvent>, i64), Status> {
    let (all, more, head) = events_read(console, signed, filter, bound).await?;
    if more {
        return Err(Status::resource_exhausted(format!("more than {bound} events to show: narrow the view")));
    }
    Ok((all, head))
}

/// Events matching `filter` for a list, oldest first, at most [`MAX_LIST_EVENTS`], and whether
/// more were left (the list says so: [`Listing::cut_if`]).
async fn events_listed(console: &Console, signed: &Signed, filter: pb::EventFilter) -> Result<(Vec<pb::RecordedEvent>, bool), Status> {
    let (all, more, _) = events_read(console, signed, filter, MAX_LIST_EVENTS).await?;
    Ok((all, more))
}

/// Events matching `filter`, oldest first, at most `bound`; whether more were left; the
/// property's head position the read reflects.
async fn events_read(
    console: &Console,
    signed: &Signed,
    filter: pb::EventFilter,
    bound: usize,
) -> Result<(Vec<pb::RecordedEvent>, bool, i64), Status> {
    let head = std::sync::atomic::AtomicI64::new(0);
    let all = all_pages(bound, |page| {
        let request = pb::ListEventsRequest { property_id: String::new(), filter: Some(filter.clone()), page: Some(page) };
        let head = &head;
        async move {
            let (page, position) = console
                .call_at(&signed.principal, rpc!(LedgerService / ListEvents), request, |s, r| async move { s.list_events(r).await })
                .await?;
            head.fetch_max(position, std::sync::atomic::Ordering::Relaxed);
            Ok((page.events, page.page))
        }
    })
    .await?;
    Ok((all.0, all.1, head.into_inner()))
}

fn of_types(types: &[&str]) -> pb::EventFilter {
    pb::EventFilter { event_types: types.iter().map(|name| name.to_string()).collect(), ..pb::EventFilter::default() }
}

/// The rules core's event of a recorded one (the stream's kind says which).
fn decode(event: &pb::RecordedEvent) -> Option<rules::Event> {
    let stream: StreamId = event.stream_id.parse().ok()?;
    match stream {
        StreamId::Table(_) => serde_json::from_str(&event.payload_json).ok().map(rules::Event::Table),
        StreamId::Player(_) => serde_json::from_str(&event.payload_json).ok().map(rules::Event::Player),
        StreamId::Cage(_) => serde_json::from_str(&event.payload_json).ok().map(rules::Event::Cage),
    }
}

fn table_event(event: &pb::RecordedEvent) -> Option<TableEvent> {
    match decode(event)? {
        rules::Event::Table(event) => Some(event),
        _ => None,
    }
}

fn chips_text(units: &Units, chips: &[rules::ChipCount]) -> String {
    chips.iter().map(|chip| format!("{} x {}", chip.count, units.money(chip.denomination_cents))).collect::<Vec<_>>().join(", ")
}

fn wire_chips_text(units: &Units, chips: &[pb::ChipCount]) -> String {
    chips.iter().map(|chip| format!("{} x {}", chip.count, units.money(chip.denomination_cents))).collect::<Vec<_>>().join(", ")
}

/// One line saying what an event did, in words.
pub fn describe(units: &Units, event: &pb::RecordedEvent) -> String {
    let all_in = |all_in: bool| if all_in { ", all in" } else { "" };
    match decode(event) {
        Some(rules::Event::Table(event)) => match event {
            TableEvent::TableOpened { config, .. } => format!("table opened: {}", config.game_key),
            TableEvent::ConfigChanged { config } => format!("configuration changed (version {})", config.version),
            TableEvent::PlayerSeated { seat, player_id } => format!("{player_id} sits in seat {seat}"),
            TableEvent::BoughtIn { seat, player_id, amount_cents, source, .. } => {
                let source = match source {
                    rules::FundsSource::Cash => "cash",
                    rules::FundsSource::PocketChips => "pocket chips",
                };
                format!("{player_id} buys in for {} at seat {seat} ({source})", units.money(amount_cents))
            }
            TableEvent::ToppedUp { seat, amount_cents, .. } => format!("seat {seat} tops up {}", units.money(amount_cents)),
            TableEvent::CashedOut { seat, player_id, amount_cents, .. } => {
                format!("{player_id} leaves seat {seat} with {}", units.money(amount_cents))
            }
            TableEvent::Tipped { seat, amount_cents, .. } => format!("seat {seat} tips {}", units.money(amount_cents)),
            TableEvent::KittyExpensePaid { amount_cents, purpose, .. } => {
                format!("kitty pays {} for {purpose}", units.money(amount_cents))
            }
            TableEvent::TimeCollected { seats, fee_cents, .. } => {
                format!("time collected: {} from {} seats", units.money(fee_cents), seats.len())
            }
            TableEvent::ColorChanged { seat, give, receive, .. } => {
                format!("seat {seat} colors up {} for {}", chips_text(units, &give), chips_text(units, &receive))
            }
            TableEvent::FillReceived { slip_no, chips, signers, .. } => format!(
                "fill slip {slip_no}: {} ({}) signed {} and {}",
                units.money(rules::money::chips_value_cents(&chips)),
                chips_text(units, &chips),
                signers.first,
                signers.second
            ),
            TableEvent::CreditSent { slip_no, chips, signers, .. } => format!(
                "credit slip {slip_no}: {} ({}) signed {} and {}",
                units.money(rules::money::chips_value_cents(&chips)),
                chips_text(units, &chips),
                signers.first,
                signers.second
            ),
            TableEvent::ShiftClosed { result_cents, drop_cents, rake_cents, toke_cents, .. } => format!(
                "shift closed: drop {}, result {}, rake {}, tokes {}",
                units.money(drop_cents),
                units.money(result_cents),
                units.money(rake_cents),
                units.money(toke_cents)
            ),
            TableEvent::HandStarted { hand_no, button_seat, dealt_seats } => {
                format!("hand {hand_no} dealt to {} seats, button at seat {button_seat}", dealt_seats.len())
            }
            TableEvent::Posted { seat, kind, amount_cents, all_in: a, .. } => {
                format!("seat {seat} posts the {} of {}{}", rules::words::post_kind(kind), units.money(amount_cents), all_in(a))
            }
            TableEvent::Acted { seat, kind, to_cents, amount_cents, all_in: a, .. } => {
                format!("seat {seat} {}{}", rules::words::action(kind, to_cents, amount_cents, &|cents| units.money(cents)), all_in(a))
            }
            TableEvent::RoundStarted { round_index, .. } => format!("betting round {} begins", round_index + 1),
            TableEvent::HandSettled { pots, rake_cents, kitty_cents, jackpot_cents, .. } => format!(
                "settled: {} pot(s) of {} ({} of it uncalled, returned), rake {}, jackpot drop {}, kitty {}",
                pots.len(),
                units.money(pots.iter().map(|pot| pot.amount_cents).sum()),
                units.money(pots.iter().map(|pot| pot.returned_cents).sum()),
                units.money(rake_cents),
                units.money(jackpot_cents),
                units.money(kitty_cents)
            ),
            TableEvent::HandEnded { hand_no } => format!("hand {hand_no} ended"),
            TableEvent::IouWritten { seat, amount_cents, lender: Some(lender), lender_seat: Some(from), .. } => {
                format!("seat {seat} borrows {} from {lender} (seat {from})", units.money(amount_cents))
            }
            TableEvent::IouWritten { seat, amount_cents, .. } => format!("seat {seat} writes an IOU of {}", units.money(amount_cents)),
            TableEvent::IouSettled { player_id, amount_cents, lender: Some(lender), .. } => {
                format!("{player_id} pays {lender} back {}", units.money(amount_cents))
            }
            TableEvent::IouSettled { player_id, amount_cents, .. } => {
                format!("{player_id} settles an IOU of {}", units.money(amount_cents))
            }
            TableEvent::SlipVoided { slip_no, reason, signers, .. } => {
                format!("slip {slip_no} voided by {} and {}: {reason}", signers.first, signers.second)
            }
            TableEvent::SeatBound { player_id, amount_cents, until_unix_ms, .. } => format!(
                "{player_id} must bring {} to a seat of this game until {}",
                units.money(amount_cents),
                units.time(until_unix_ms)
            ),
            TableEvent::Corrected { reason, approved_by, .. } => format!("correction approved by {approved_by}: {reason}"),
            TableEvent::JackpotPaid { player_id, amount_cents, .. } => {
                format!("jackpot of {} paid to {player_id}", units.money(amount_cents))
            }
            TableEvent::GameClosed { kitty_cents, .. } => format!("game closed, kitty {}", units.money(kitty_cents)),
            other => rules::words::spaced(other.event_type()),
        },
        Some(rules::Event::Player(event)) => match event {
            PlayerEvent::CashTransaction { direction, amount_cents, .. } => {
                let way = if direction == rules::CashDirection::In { "in" } else { "out" };
                format!("cash {way}: {}", units.money(amount_cents))
            }
            PlayerEvent::JoinedTable { table_id, seat, amount_cents, .. } => {
                format!("sat at {table_id} seat {seat} with {}", units.money(amount_cents))
            }
            PlayerEvent::LeftTable { table_id, seat, amount_cents, .. } => {
                format!("left {table_id} seat {seat} with {}", units.money(amount_cents))
            }
            PlayerEvent::PocketChipsPlayed { table_id, seat, amount_cents } => {
                format!("played {} of pocket chips at {table_id} seat {seat}", units.money(amount_cents))
            }
            PlayerEvent::ChipsTakenOffTable { table_id, seat, amount_cents } => {
                format!("took {} off {table_id} seat {seat} to the pocket", units.money(amount_cents))
            }
            PlayerEvent::IouPaidFromPocket { table_id, seat, amount_cents } => {
                format!("paid an IOU of {} at {table_id} seat {seat} from the pocket", units.money(amount_cents))
            }
            PlayerEvent::MovedTable { from_table_id, to_table_id, to_seat, .. } => {
                format!("moved by the house from {from_table_id} to {to_table_id} seat {to_seat}")
            }
            PlayerEvent::PocketCorrected { amount_cents, .. } => format!("pocket corrected by {}", units.money(amount_cents)),
            PlayerEvent::ChipsBought { cage_id, amount_cents } => format!("bought {} of chips at {cage_id}", units.money(amount_cents)),
            PlayerEvent::ChipsRedeemed { cage_id, amount_cents } => format!("redeemed {} of chips at {cage_id}", units.money(amount_cents)),
            PlayerEvent::MarkerIssued { marker_no, amount_cents, .. } => {
                format!("marker {marker_no} of {}", units.money(amount_cents))
            }
            PlayerEvent::MarkerRedeemed { marker_no, amount_cents, .. } => {
                format!("marker {marker_no}: {} redeemed", units.money(amount_cents))
            }
            PlayerEvent::MarkerWrittenOff { marker_no, amount_cents, approved_by, .. } => {
                format!("marker {marker_no}: {} written off, approved by {approved_by}", units.money(amount_cents))
            }
            PlayerEvent::Corrected { reversal: rules::PlayerReversal::CashTransaction { gaming_day, direction, amount_cents, .. }, approved_by, reason, .. } => {
                let way = if direction == rules::CashDirection::In { "in" } else { "out" };
                format!("cash {way} of {} on {gaming_day} taken back, approved by {approved_by}: {reason}", units.money(amount_cents))
            }
            other => rules::words::spaced(other.event_type()),
        },
        Some(rules::Event::Cage(event)) => match event {
            CageEvent::FillIssued { table_id, slip_no, chips, .. } => format!(
                "fill slip {slip_no} to {table_id}: {}",
                units.money(rules::money::chips_value_cents(&chips))
            ),
            CageEvent::CreditReceived { table_id, slip_no, chips, .. } => format!(
                "credit slip {slip_no} from {table_id}: {}",
                units.money(rules::money::chips_value_cents(&chips))
            ),
            CageEvent::MarkerIssued { player_id, marker_no, amount_cents, approved_by, .. } => format!(
                "marker {marker_no} of {} to {player_id}, approved by {approved_by}",
                units.money(amount_cents)
            ),
            CageEvent::MarkerRedeemed { player_id, marker_no, amount_cents, .. } => {
                format!("marker {marker_no} of {player_id} redeemed: {}", units.money(amount_cents))
            }
            CageEvent::GamingDayClosed { gaming_day, .. } => format!("gaming day {gaming_day} closed"),
            other => rules::words::spaced(other.event_type()),
        },
        None => rules::words::spaced(&event.event_type),
    }
}

fn short_hash(hash_hex: &str) -> String {
    hash_hex.chars().take(16).collect()
}

/// Who acted: the actor, and for an import the principal who sent it (R-AUDIT-2).
fn by(actor_id: &str, imported_by: Option<&str>) -> String {
    match imported_by.filter(|principal| !principal.is_empty()) {
        Some(principal) => format!("{actor_id} (imported by {principal})"),
        None => actor_id.to_owned(),
    }
}

/// The events of a list as rows: position, time, stream, what happened, hash.
fn event_rows(units: &Units, events: &[pb::RecordedEvent]) -> Vec<Vec<Cell>> {
    events
        .iter()
        .rev()
        .map(|event| {
            vec![
                num(event.global_position.to_string()),
                text(units.time(event.happened_unix_ms())),
                stream_link(&event.stream_id),
                text(describe(units, event)),
                text(event.metadata.as_ref().map(|metadata| by(&metadata.actor_id, metadata.imported_by.as_deref())).unwrap_or_default()),
                text(short_hash(&event.hash_hex)),
            ]
        })
        .collect()
}

const EVENT_HEADERS: &[&str] = &["Position", "Time", "Stream", "What", "By", "Hash"];

fn stream_link(stream: &str) -> Cell {
    match stream.parse::<StreamId>() {
        Ok(StreamId::Table(table_id)) => link(stream, format!("/tables/{}", view::percent(table_id.as_str()))),
        Ok(StreamId::Player(player_id)) => link(stream, format!("/players/{}", view::percent(player_id.as_str()))),
        _ => text(stream),
    }
}

// ------------------------------------------------------------------ floor

#[derive(Serialize)]
struct FloorTable {
    id: String,
    href: String,
    game: String,
    limits: String,
    seats: Vec<FloorSeat>,
    hand: Option<FloorHand>,
    tray: String,
    drop: String,
    rake: String,
}

#[derive(Serialize)]
struct FloorSeat {
    seat: u32,
    player: String,
    href: String,
    stack: String,
    status: String,
}

#[derive(Serialize)]
struct FloorHand {
    hand_no: u64,
    href: String,
    pot_total: String,
    pots: String,
}

fn limits_text(units: &Units, config: Option<&pb::TableConfig>) -> String {
    let Some(config) = config else { return String::new() };
    let blinds: Vec<String> = config.blinds_cents.iter().map(|cents| units.money(*cents)).collect();
    let mut parts = Vec::new();
    if !blinds.is_empty() {
        parts.push(format!("blinds {}", blinds.join("/")));
    }
    if config.ante_cents > 0 {
        parts.push(format!("ante {}", units.money(config.ante_cents)));
    }
    if let Some(buy_in) = &config.buy_in {
        parts.push(format!("buy-in {}-{}", units.money(buy_in.min_cents), units.money(buy_in.max_cents)));
    }
    parts.join(", ")
}

fn seat_status(status: i32) -> String {
    match pb::SeatStatus::try_from(status) {
        // `SEAT_STATUS_IN_HAND` -> `in hand` (spaced splits CamelCase, not snake case).
        Ok(status) => status.as_str_name().trim_start_matches("SEAT_STATUS_").to_ascii_lowercase().replace('_', " "),
        Err(_) => String::new(),
    }
}

/// Every open table as the floor sees it, and the head position it reflects.
async fn floor_tables_view(console: &Console, signed: &Signed, units: &Units) -> Result<(Vec<FloorTable>, i64), Status> {
    let (opened, head) = events(console, signed, of_types(&["TableOpened"])).await?;
    let mut tables = Vec::new();
    for event in &opened {
        let Some(TableEvent::TableOpened { table_id, .. }) = table_event(event) else { continue };
        let request = pb::GetTableRequest { property_id: String::new(), table_id: table_id.to_string(), as_of: None };
        let table = console
            .call(&signed.principal, rpc!(TableService / GetTable), request, |s, r| async move { s.get_table(r).await })
            .await?;
        // A game that has ended stays on the floor only while players sit there to cash out
        // (the cage pass read closed games among the open tables).
        if !table.open || (table.game_closed && table.seats.iter().all(|seat| seat.player_id.is_empty())) {
            continue;
        }
        let hand = match table.hand_no {
            Some(hand_no) => {
                let request = pb::GetHandRequest { property_id: String::new(), table_id: table_id.to_string(), hand_no: Some(hand_no) };
                let hand = console
                    .call(&signed.principal, rpc!(TableService / GetHand), request, |s, r| async move { s.get_hand(r).await })
                    .await?;
                let pots: Vec<(i64, Vec<u32>)> = hand.pots.iter().map(|pot| (pot.amount_cents, pot.eligible_seats.clone())).collect();
                Some(FloorHand {
                    hand_no,
                    href: format!("/tables/{}/hands/{hand_no}", view::percent(table_id.as_str())),
                    pot_total: units.money(table.pot_total_cents),
                    pots: if pots.is_empty() { String::new() } else { view::pot_layers(units, &pots) },
                })
            }
            None => None,
        };
        tables.push(FloorTable {
            id: table.table_id.clone(),
            href: format!("/tables/{}", view::percent(&table.table_id)),
            game: table
                .config
                .as_ref()
                .map(|config| if table.game_closed { format!("{} (game ended)", config.game_key) } else { config.game_key.clone() })
                .unwrap_or_default(),
            limits: limits_text(units, table.config.as_ref()),
            seats: table
                .seats
                .iter()
                .filter(|seat| !seat.player_id.is_empty())
                .map(|seat| FloorSeat {
                    seat: seat.seat,
                    player: seat.player_id.clone(),
                    href: format!("/players/{}", view::percent(&seat.player_id)),
                    stack: units.money(seat.stack_cents),
                    status: seat_status(seat.status),
                })
                .collect(),
            hand,
            tray: units.money(table.tray.iter().map(|chip| chip.denomination_cents * chip.count).sum()),
            drop: units.money(table.drop_cents),
            rake: units.money(table.rake_cents),
        });
    }
    Ok((tables, head))
}

pub async fn floor(State(console): State<Arc<Console>>, signed: Signed) -> Response {
    let result = async {
        let units = Units::of(console.property(&signed.principal)?.as_ref());
        let (tables, head) = floor_tables_view(&console, &signed, &units).await?;
        let body = context! { tables => tables, head => head, zone => units.zone_name };
        Ok(console.page(&signed, "floor.html", "Floor", body))
    }
    .await;
    answer(&console, &signed, result)
}

/// The open tables alone (what the floor page redraws on a live update).
pub async fn floor_tables(State(console): State<Arc<Console>>, signed: Signed) -> Response {
    let result = async {
        let units = Units::of(console.property(&signed.principal)?.as_ref());
        let (tables, _) = floor_tables_view(&console, &signed, &units).await?;
        Ok(console.render("floor_tables.html", context! { tables => tables }))
    }
    .await;
    answer(&console, &signed, result)
}

/// Server-sent events: one `recorded` event (its position) per event appended after `after`,
/// from the Subscribe RPC, until the server stops.
pub async fn live(State(console): State<Arc<Console>>, signed: Signed, Query(query): Query_) -> Response {
    let after = query.get("after").and_then(|after| after.parse::<i64>().ok()).unwrap_or(0).max(0);
    let request = pb::SubscribeRequest { property_id: String::new(), after_position: after, ..pb::SubscribeRequest::default() };
    let stream = match console
        .call(&signed.principal, rpc!(LedgerService / Subscribe), request, |s, r| async move { s.subscribe(r).await })
        .await
    {
        Ok(stream) => stream,
        Err(status) => return console.refusal(&signed, &status),
    };
    // The feed ends with the session: signed out (or idle past the timeout), it delivers no
    // more (the console pass: positions kept coming after the sign-out).
    let session = signed.session;
    let events = stream.take_while(move |_| std::future::ready(console.session_open(&session))).map(|item| {
        let event = match item {
            Ok(event) => SseEvent::default().event("recorded").data(event.global_position.to_string()),
            Err(status) => SseEvent::default().event("failed").data(status.message().to_string()),
        };
        Ok::<_, std::convert::Infallible>(event)
    });
    Sse::new(events).keep_alive(KeepAlive::default()).into_response()
}

// ------------------------------------------------------------------ table

/// What a seat owes before it plays (R-POST-1, R-POST-3), as the floor says it: the games pass
/// found the seat view carrying it and the table page showing none of it.
fn owed_posts(units: &Units, seat: &pb::SeatView) -> String {
    let mut owed = Vec::new();
    if seat.owes_entry_post {
        owed.push("entry big blind".to_string());
    }
    if seat.missed_big_blind {
        owed.push("missed big blind".to_string());
    }
    if seat.missed_small_blind {
        owed.push("missed small blind".to_string());
    }
    if seat.missed_button_ante_cents > 0 {
        owed.push(format!("missed ante {}", units.money(seat.missed_button_ante_cents)));
    }
    owed.join(", ")
}

fn table_path(table_id: &str) -> String {
    format!("/tables/{}", view::percent(table_id))
}

pub async fn table(State(console): State<Arc<Console>>, signed: Signed, Path(table_id): Path<String>, Query(query): Query_) -> Response {
    let result = async {
        let units = Units::of(console.property(&signed.principal)?.as_ref());
        let request = pb::GetTableRequest { property_id: String::new(), table_id: table_id.clone(), as_of: None };
        let table = console
            .call(&signed.principal, rpc!(TableService / GetTable), request, |s, r| async move { s.get_table(r).await })
            .await?;
        // The events of one gaming day (the one asked for, else today's), and the table's slips
        // whatever their day: a table's whole history had been read, and past 5,000 events its
        // page answered nothing at all (the console pass).
        let today = console.property(&signed.principal)?.gaming_day.gaming_day(console.now_ms()).unwrap_or_default();
        let day = query.get("day").filter(|day| !day.is_empty()).cloned().unwrap_or(today);
        let of_the_day = pb::EventFilter { table_id: table_id.clone(), gaming_day: day.clone(), ..pb::EventFilter::default() };
        let (timeline, more_timeline) = events_listed(&console, &signed, of_the_day).await?;
        let slip_types = ["FillReceived", "CreditSent", "SlipVoided"].iter().map(|name| name.to_string()).collect();
        let of_slips = pb::EventFilter { table_id: table_id.clone(), event_types: slip_types, ..pb::EventFilter::default() };
        let (slip_events, more_slips) = events_listed(&console, &signed, of_slips).await?;
        let reconciliation = {
            let request = pb::TableShiftReconciliationRequest { property_id: String::new(), table_id: table_id.clone(), shift_close_position: None };
            match console
                .call(&signed.principal, rpc!(AuditService / TableShiftReconciliation), request, |s, r| async move {
                    s.table_shift_reconciliation(r).await
                })
                .await
            {
                Ok(reconciliation) => Some(reconciliation),
                Err(status) if matches!(status.code(), tonic::Code::NotFound | tonic::Code::FailedPrecondition) => None,
                Err(status) => return Err(status),
            }
        };

        let mut hands = Vec::new();
        let mut slips = Vec::new();
        // R-CHIP-3: a voided slip is shown as voided, with its reason and its two signers.
        let voids: BTreeMap<(String, rules::SlipKind, u64), String> = slip_events
            .iter()
            .filter_map(|event| match table_event(event) {
                Some(TableEvent::SlipVoided { cage_id, kind, slip_no, reason, signers, .. }) => Some((
                    (cage_id.to_string(), kind, slip_no),
                    format!("voided by {} and {}: {reason}", signers.first, signers.second),
                )),
                _ => None,
            })
            .collect();
        let slip_kind = |cage_id: &rules::CageId, kind: rules::SlipKind, slip_no: u64, name: &str| match voids.get(&(cage_id.to_string(), kind, slip_no)) {
            Some(void) => format!("{name} ({void})"),
            None => name.to_string(),
        };
        for event in &timeline {
            if let Some(TableEvent::HandStarted { hand_no, dealt_seats, .. }) = table_event(event) {
                hands.push(vec![
                    link(format!("Hand {hand_no}"), format!("{}/hands/{hand_no}", table_path(&table_id))),
                    text(units.time(event.happened_unix_ms())),
                    num(dealt_seats.len().to_string()),
                    num(event.global_position.to_string()),
                ]);
            }
        }
        for event in &slip_events {
            match table_event(event) {
                Some(TableEvent::FillReceived { cage_id, slip_no, chips, signers, .. }) => {
                    let kind = slip_kind(&cage_id, rules::SlipKind::Fill, slip_no, "fill");
                    slips.push(slip_row(&units, event, &kind, &cage_id.to_string(), slip_no, &chips, &signers))
                }
                Some(TableEvent::CreditSent { cage_id, slip_no, chips, signers, .. }) => {
                    let kind = slip_kind(&cage_id, rules::SlipKind::Credit, slip_no, "credit");
                    slips.push(slip_row(&units, event, &kind, &cage_id.to_string(), slip_no, &chips, &signers))
                }
                _ => {}
            }
        }
        hands.reverse();
        slips.reverse();
        let tray_rows: Vec<Vec<Cell>> = table
            .tray
            .iter()
            .map(|chip| {
                vec![num(units.money(chip.denomination_cents)), num(chip.count.to_string()), num(units.money(chip.denomination_cents * chip.count))]
            })
            .collect();
        let seats: Vec<Vec<Cell>> = table
            .seats
            .iter()
            .filter(|seat| !seat.player_id.is_empty())
            .map(|seat| {
                vec![
                    num(seat.seat.to_string()),
                    link(seat.player_id.clone(), format!("/players/{}", view::percent(&seat.player_id))),
                    num(units.money(seat.stack_cents)),
                    text(seat_status(seat.status)),
                    text(owed_posts(&units, seat)),
                ]
            })
            .collect();
        let chart_day = day.clone();
        let chart = hourly_chart(&units, &timeline, &chart_day);
        let listings = vec![
            Listing::new("seats", "Seats", &["Seat", "Player", "Stack", "Status", "Owes"], seats).empty_text("Nobody is seated."),
            Listing::new("tray", "Tray by denomination", &["Chip", "Count", "Value"], tray_rows),
            Listing::new("slips", "Fills and credits", &["Slip", "Kind", "Cage", "Chips", "Value", "Signed by", "Time", "Position"], slips)
                .empty_text("No fills or credits.")
                .cut_if(more_slips, LIST_CUT),
            Listing::new("hands", format!("Hands, gaming day {day}"), &["Hand", "Dealt", "Players", "Position"], hands)
                .empty_text("No hands this gaming day.")
                .cut_if(more_timeline, LIST_CUT),
            Listing::new("timeline", format!("Timeline, gaming day {day}"), EVENT_HEADERS, event_rows(&units, &timeline))
                .empty_text("No events this gaming day.")
                .cut_if(more_timeline, LIST_CUT),
        ];
        let path = table_path(&table_id);
        let listings = match view::lists(listings, &path, &query) {
            Lists::Csv(response) => return Ok(response),
            Lists::Paged(listings) => listings,
        };
        let shift = reconciliation.map(|shift| {
            context! {
                gaming_day => shift.gaming_day,
                opening => units.money(shift.opening_inventory_cents),
                closing => units.money(shift.closing_inventory_cents),
                fills => units.money(shift.fills_cents),
                credits => units.money(shift.credits_cents),
                drop => units.money(shift.drop_cents),
                result => units.money(shift.result_cents),
                rake => units.money(shift.rake_cents),
                toke => units.money(shift.toke_cents),
                variance => units.money(shift.variance_cents),
                drop_variance => units.money(shift.drop_variance_cents),
                tray_variance => wire_chips_text(&units, &shift.tray_variance),
                signers => format!("{} and {}", shift.signer_1, shift.signer_2),
                position => shift.shift_close_position,
            }
        });
        let body = context! {
            table_id => table.table_id,
            open => table.open,
            game => table.config.as_ref().map(|config| config.game_key.clone()).unwrap_or_default(),
            limits => limits_text(&units, table.config.as_ref()),
            drop => units.money(table.drop_cents),
            rake => units.money(table.rake_cents),
            kitty => units.money(table.kitty_cents),
            toke => units.money(table.toke_cents),
            jackpot => units.money(table.jackpot_cents),
            shift => shift,
            chart => chart,
            chart_day => chart_day,
            listings => listings,
            zone => units.zone_name,
        };
        Ok(console.page(&signed, "table.html", &format!("Table {table_id}"), body))
    }
    .await;
    answer(&console, &signed, result)
}

fn slip_row(
    units: &Units,
    event: &pb::RecordedEvent,
    kind: &str,
    cage_id: &str,
    slip_no: u64,
    chips: &[rules::ChipCount],
    signers: &rules::Signers,
) -> Vec<Cell> {
    vec![
        num(slip_no.to_string()),
        text(kind),
        text(cage_id),
        text(chips_text(units, chips)),
        num(units.money(rules::money::chips_value_cents(chips))),
        text(format!("{} and {}", signers.first, signers.second)),
        text(units.time(event.happened_unix_ms())),
        num(event.global_position.to_string()),
    ]
}

/// Drop, rake and result per hour of the property's clock, from the postings of the table's
/// events: what reached the drop box and the rake, and the house's win (rake, time and the
/// shift's result as recorded at its close). A correction of an event of the same day counts in
/// that event's hour (a buy-in keyed at 21h and taken back at 23h had left 23h with a negative
/// drop, and 21h with money that never came); one of an earlier day's event is that day's
/// adjustment, in the hour it was recorded.
fn hourly_chart(units: &Units, timeline: &[pb::RecordedEvent], gaming_day: &str) -> String {
    let hours = hourly_totals(units, timeline, gaming_day);
    if hours.is_empty() {
        return String::new();
    }
    // In the order they happened; an hour the clock repeats is shown twice, each with its offset.
    let labels: Vec<String> = hours
        .values()
        .map(|totals| {
            let repeated = hours.values().filter(|other| other.hour == totals.hour).count() > 1;
            let offset = totals.offset_seconds;
            let sign = if offset < 0 { '-' } else { '+' };
            let (h, m) = (offset.abs() / 3_600, offset.abs() % 3_600 / 60);
            if repeated { format!("{:02}h ({sign}{h:02}:{m:02})", totals.hour) } else { format!("{:02}h", totals.hour) }
        })
        .collect();
    let series = [
        ("drop", "drop as booked", hours.values().map(|totals| totals.drop_cents).collect()),
        ("rake", "rake", hours.values().map(|totals| totals.rake_cents).collect()),
        ("result", "result", hours.values().map(|totals| totals.result_cents).collect()),
    ];
    // The drop as booked, before the count: the shift close above gives the counted drop and
    // its variance (the console pass read two figures both called "drop").
    view::bar_chart(units, &format!("Drop as booked (before the count), rake and result per hour, gaming day {gaming_day}"), &labels, &series)
}

/// One hour of the chart: its hour on the clock, the offset then, and its figures.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct HourTotals {
    hour: i8,
    offset_seconds: i32,
    drop_cents: i64,
    rake_cents: i64,
    result_cents: i64,
}

/// The chart's figures by hour of the gaming day, keyed by when the hour began: the hour a
/// clock change repeats is two hours, in the order they happened (the auditor pass: $4 of rake
/// at 01:10 PDT and a $60 drop at 01:20 PST were one bar, and 21h came after 03h).
fn hourly_totals(units: &Units, timeline: &[pb::RecordedEvent], gaming_day: &str) -> BTreeMap<i64, HourTotals> {
    let mut hours: BTreeMap<i64, HourTotals> = BTreeMap::new();
    let of_the_day: Vec<&pb::RecordedEvent> =
        timeline.iter().filter(|event| event.metadata.as_ref().is_some_and(|metadata| metadata.gaming_day == gaming_day)).collect();
    let hour_of: BTreeMap<&str, i64> = of_the_day.iter().map(|event| (event.event_id.as_str(), event.happened_unix_ms())).collect();
    for event in of_the_day {
        let closed = table_event(event);
        let booked_at = match &closed {
            Some(TableEvent::Corrected { reverses_event_id, .. }) => {
                hour_of.get(reverses_event_id.as_str()).copied().unwrap_or(event.happened_unix_ms())
            }
            _ => event.happened_unix_ms(),
        };
        let Some((began, hour, offset_seconds)) = units.hour_of(booked_at) else { continue };
        let entry = hours.entry(began).or_insert(HourTotals { hour, offset_seconds, ..HourTotals::default() });
        if let Some(TableEvent::ShiftClosed { result_cents, .. }) = &closed {
            entry.result_cents += result_cents;
        }
        // What came into the drop and the rake, net of corrections (a buy-in corrected away
        // had stayed in the hour's drop); the close's emptying of the boxes and a count's
        // variance are no takings.
        if matches!(closed, Some(TableEvent::ShiftClosed { .. } | TableEvent::CountVarianceRecorded { .. })) {
            continue;
        }
        for posting in &event.postings {
            if posting.account.ends_with("/drop") {
                entry.drop_cents += posting.amount_cents;
            }
            if posting.account.ends_with("/rake") {
                entry.rake_cents += posting.amount_cents;
            }
        }
    }
    hours
}

// ------------------------------------------------------------------ hand

#[derive(Serialize)]
struct HandRound {
    name: String,
    lines: Vec<HandLine>,
}

#[derive(Serialize)]
struct HandLine {
    position: i64,
    hash: String,
    text: String,
}

pub async fn hand(
    State(console): State<Arc<Console>>,
    signed: Signed,
    Path((table_id, hand_no)): Path<(String, u64)>,
    Query(query): Query_,
) -> Response {
    let result = async {
        let units = Units::of(console.property(&signed.principal)?.as_ref());
        let request = pb::GetHandRequest { property_id: String::new(), table_id: table_id.clone(), hand_no: Some(hand_no) };
        let hand = console
            .call(&signed.principal, rpc!(TableService / GetHand), request, |s, r| async move { s.get_hand(r).await })
            .await?;
        let mut rounds = vec![HandRound { name: "Posts and the first round (pre-flop / third street)".to_string(), lines: Vec::new() }];
        let mut settlement = Vec::new();
        let mut kitty_cents = 0;
        for event in &hand.events {
            let decoded = table_event(event);
            match &decoded {
                Some(TableEvent::RoundStarted { round_index, .. }) => {
                    rounds.push(HandRound { name: round_name(*round_index), lines: Vec::new() });
                    continue;
                }
                Some(TableEvent::HandSettled { kitty_cents: kitty, .. } | TableEvent::SidePotPaid { kitty_cents: kitty, .. }) => kitty_cents += kitty,
                _ => {}
            }
            let line = HandLine { position: event.global_position, hash: event.hash_hex.clone(), text: describe(&units, event) };
            match decoded {
                Some(TableEvent::HandSettled { .. } | TableEvent::SidePotPaid { .. } | TableEvent::HandEnded { .. }) => {
                    settlement.push(line)
                }
                _ => rounds.last_mut().expect("the posts round").lines.push(line),
            }
        }
        let pots: Vec<(i64, Vec<u32>)> = hand.pots.iter().map(|pot| (pot.amount_cents, pot.eligible_seats.clone())).collect();
        // R-POT-4: the chips of a layer nobody else reached go back to their bettor; such a
        // layer is no pot won (the hands pass: an uncalled bet had read as a side pot awarded).
        let pot_name = |index: usize| match hand.pots.get(index) {
            Some(pot) if pot.returned_cents > 0 && pot.returned_cents == pot.amount_cents => "uncalled bet, returned".to_string(),
            _ if index == 0 => "main pot".to_string(),
            _ => format!("side pot {index}"),
        };
        let pot_rows: Vec<Vec<Cell>> = hand
            .pots
            .iter()
            .enumerate()
            .map(|(index, pot)| {
                let seats: Vec<String> = pot.eligible_seats.iter().map(u32::to_string).collect();
                vec![
                    text(pot_name(index)),
                    num(units.money(pot.amount_cents)),
                    num(units.money(pot.returned_cents)),
                    text(seats.join(", ")),
                ]
            })
            .collect();
        let awards: Vec<Vec<Cell>> = hand
            .awards
            .iter()
            .map(|award| {
                let returned = hand.pots.get(award.pot_index as usize).map_or(0, |pot| pot.returned_cents);
                vec![
                    text(pot_name(award.pot_index as usize)),
                    num(award.seat.to_string()),
                    link(award.player_id.clone(), format!("/players/{}", view::percent(&award.player_id))),
                    num(units.money(award.amount_cents - returned.min(award.amount_cents))),
                    num(units.money(returned.min(award.amount_cents))),
                ]
            })
            .collect();
        let starting: Vec<Vec<Cell>> = hand
            .starting_seats
            .iter()
            .map(|seat| vec![num(seat.seat.to_string()), text(seat.player_id.clone()), num(units.money(seat.stack_cents))])
            .collect();
        let path = format!("{}/hands/{hand_no}", table_path(&table_id));
        let listings = vec![Listing::new("events", "Every event of the hand", EVENT_HEADERS, event_rows(&units, &hand.events))];
        let listings = match view::lists(listings, &path, &query) {
            Lists::Csv(response) => return Ok(response),
            Lists::Paged(listings) => listings,
        };
        let body = context! {
            listings => listings,
            table_id => table_id,
            table_href => table_path(&table_id),
            hand_no => hand.hand_no,
            ended => hand.ended,
            button => hand.button_seat,
            board => hand.board.join(" "),
            rounds => rounds,
            settlement => settlement,
            pots_svg => view::pot_layers(&units, &pots),
            has_pots => !pots.is_empty(),
            rake => units.money(hand.rake_cents),
            jackpot => units.money(hand.jackpot_drop_cents),
            kitty => units.money(kitty_cents),
            pots => pot_rows,
            awards => awards,
            starting => starting,
            corrections => event_rows(&units, &hand.corrections),
            event_headers => EVENT_HEADERS,
        };
        Ok(console.page(&signed, "hand.html", &format!("Hand {hand_no} at {table_id}"), body))
    }
    .await;
    answer(&console, &signed, result)
}

fn round_name(index: u8) -> String {
    match index {
        0 => "First round (pre-flop / third street)".to_string(),
        1 => "Second round (flop / fourth street)".to_string(),
        2 => "Third round (turn / fifth street)".to_string(),
        3 => "Fourth round (river / sixth street)".to_string(),
        other => format!("Round {}", other + 1),
    }
}

// ------------------------------------------------------------------ player

pub async fn player_search(Query(query): Query_) -> Response {
    match query.get("id").map(|id| id.trim()).filter(|id| !id.is_empty()) {
        Some(id) => Redirect::to(&format!("/players/{}", view::percent(id))).into_response(),
        None => Redirect::to("/").into_response(),
    }
}

pub async fn player(State(console): State<Arc<Console>>, signed: Signed, Path(player_id): Path<String>, Query(query): Query_) -> Response {
    let result = async {
        let property = console.property(&signed.principal)?;
        let units = Units::of(&property);
        let who = &signed.principal;
        let console: &Console = &console;
        let (sessions, more_sessions) = all_pages(MAX_LIST_EVENTS, |page| {
            let request = pb::ListPlayerSessionsRequest { player_id: player_id.clone(), page: Some(page), ..Default::default() };
            async move {
                let page = console
                    .call(who, rpc!(LedgerService / ListPlayerSessions), request, |s, r| async move { s.list_player_sessions(r).await })
                    .await?;
                Ok((page.sessions, page.page))
            }
        })
        .await?;
        let (history, more_history) = all_pages(MAX_LIST_EVENTS, |page| {
            let request = pb::ListPlayerHistoryRequest { player_id: player_id.clone(), page: Some(page), ..Default::default() };
            async move {
                let page = console
                    .call(who, rpc!(LedgerService / ListPlayerHistory), request, |s, r| async move { s.list_player_history(r).await })
                    .await?;
                Ok((page.events, page.page))
            }
        })
        .await?;
        let now_ms = console.now_ms();
        let mut seat_ms = 0;
        let mut session_rows = Vec::new();
        for session in &sessions {
            let ended = session.ended_at_unix_ms;
            seat_ms += ended.unwrap_or(now_ms) - session.started_at_unix_ms;
            session_rows.push(vec![
                link(session.table_id.clone(), table_path(&session.table_id)),
                num(session.seat.to_string()),
                text(session.game.clone()),
                text(units.time(session.started_at_unix_ms)),
                text(ended.map(|ended| units.time(ended)).unwrap_or_else(|| "seated".to_string())),
                num(units.money(session.bought_in_cents)),
                num(session.left_with_cents.map(|cents| units.money(cents)).unwrap_or_default()),
            ]);
        }
        // The re-buy wait (R-REBUY-1) per game, as the rules judge it: the patron's stream folded
        // by the rules (its unmet departures), not rebuilt from sessions (the console had missed
        // a move into another game, a corrected return and the chips taken off: the stakes
        // passes). A history cut short cannot say it.
        let mut patron = rules::PlayerState::new();
        for event in &history {
            if let Some(rules::Event::Player(player_event)) = decode(event) {
                patron.apply(&player_event);
            }
        }
        let mut unmet: BTreeMap<String, Vec<(i64, i64, String, Option<(i64, i64)>)>> = BTreeMap::new();
        if !more_history {
            for departure in &patron.unmet_departures {
                unmet.entry(departure.game_key.clone()).or_default().push((
                    departure.at_unix_ms,
                    departure.amount_cents,
                    departure.table_id.as_str().to_owned(),
                    departure.wait,
                ));
            }
        }
        session_rows.reverse();
        let mut departure_rows = Vec::new();
        for (game, departures) in &unmet {
            let Some((_, _, table_id, wait)) = departures.last() else { continue };
            // The wait the departure recorded (the table left's), else the table's now.
            let (window_ms, tolerance_bps) = match wait {
                Some(wait) => *wait,
                None => {
                    let request = pb::GetTableRequest { property_id: String::new(), table_id: table_id.clone(), as_of: None };
                    match console.call(who, rpc!(TableService / GetTable), request, |s, r| async move { s.get_table(r).await }).await {
                        Ok(table) => table.config.and_then(|config| config.rebuy).map(|rebuy| (rebuy.wait_window_ms, rebuy.tolerance_bps)).unwrap_or((0, 0)),
                        Err(status) if status.code() == tonic::Code::NotFound => (0, 0),
                        Err(status) => return Err(status),
                    }
                }
            };
            // The one that binds now at the wait of the table left: the largest still within
            // its window, else the latest. The rules bind a return by the longer window and the
            // smaller tolerance of the table left and the table returned to, so the page says
            // what the table left asks and that another table of the game may ask more (it had
            // said "closed" while a table with a longer wait still bound: the console pass).
            let binding = departures.iter().filter(|(ended, _, _, _)| ended + window_ms > now_ms).max_by_key(|(_, left_with, _, _)| *left_with);
            let (ended, left_with, table_id, _) = binding.or(departures.last()).expect("not empty");
            let until = ended + window_ms;
            let at_least = rules::rebuy::less_tolerance_bps(*left_with, tolerance_bps);
            departure_rows.push(vec![
                text(game.clone()),
                link(table_id.clone(), table_path(table_id)),
                text(units.time(*ended)),
                num(units.money(*left_with)),
                text(if until > now_ms {
                    format!(
                        "at {table_id}'s wait, open until {}: a buy-in to this game must be at least {} (R-REBUY-1; a table of the game with a longer wait or a smaller tolerance asks more, for longer)",
                        units.time(until),
                        units.money(at_least)
                    )
                } else {
                    format!("past {table_id}'s wait (a table of the game with a longer wait may still bind a return)")
                }),
            ]);
        }
        let mut money_rows = Vec::new();
        let mut markers = Vec::new();
        let mut gaming_days: Vec<String> = Vec::new();
        for event in history.iter().rev() {
            let kind = match decode(event) {
                // The patron's own stream: a seat taken with its buy-in, a seat left with its chips.
                Some(rules::Event::Player(PlayerEvent::JoinedTable { .. })) => Some("buy-in"),
                // Pocket chips brought to a seat, a buy-in or a top-up (the auditor's pass: a
                // $50 top-up from the pocket was nowhere on the page).
                Some(rules::Event::Player(PlayerEvent::PocketChipsPlayed { .. })) => Some("pocket chips played"),
                Some(rules::Event::Player(PlayerEvent::ChipsTakenOffTable { .. })) => Some("chips taken off"),
                Some(rules::Event::Player(PlayerEvent::MovedTable { .. })) => Some("house move"),
                Some(rules::Event::Player(PlayerEvent::IouPaidFromPocket { .. })) => Some("IOU"),
                Some(rules::Event::Player(PlayerEvent::LeftTable { .. })) => Some("cash-out"),
                Some(rules::Event::Table(TableEvent::BoughtIn { .. } | TableEvent::ToppedUp { .. })) => Some("buy-in"),
                Some(rules::Event::Table(TableEvent::CashedOut { .. })) => Some("cash-out"),
                Some(rules::Event::Table(TableEvent::IouWritten { .. } | TableEvent::IouSettled { .. })) => Some("IOU"),
                Some(rules::Event::Cage(CageEvent::MarkerIssued { .. } | CageEvent::MarkerRedeemed { .. } | CageEvent::MarkerWrittenOff { .. })) => {
                    Some("marker")
                }
                Some(rules::Event::Player(PlayerEvent::MarkerIssued { .. } | PlayerEvent::MarkerRedeemed { .. } | PlayerEvent::MarkerWrittenOff { .. })) => {
                    Some("marker")
                }
                Some(rules::Event::Player(PlayerEvent::ChipsBought { .. } | PlayerEvent::ChipsRedeemed { .. })) => Some("cage"),
                // Cash is recorded at a table as at the cage (a table's cash buy-in had read "cage").
                Some(rules::Event::Player(PlayerEvent::CashTransaction { .. })) => Some("cash"),
                Some(rules::Event::Player(PlayerEvent::Corrected { .. } | PlayerEvent::PocketCorrected { .. } | PlayerEvent::ReturnCorrected { .. })) => {
                    Some("correction")
                }
                _ => None,
            };
            if let Some(day) = event.metadata.as_ref().map(|metadata| metadata.gaming_day.clone())
                && !day.is_empty()
                && !gaming_days.contains(&day)
            {
                gaming_days.push(day);
            }
            let Some(kind) = kind else { continue };
            let row = vec![
                text(units.time(event.happened_unix_ms())),
                text(kind),
                text(describe(&units, event)),
                stream_link(&event.stream_id),
                num(event.global_position.to_string()),
            ];
            if kind == "marker" || kind == "IOU" {
                markers.push(row.clone());
            }
            money_rows.push(row);
        }
        let mut cash_rows = Vec::new();
        gaming_days.sort();
        gaming_days.reverse();
        // The latest 31 gaming days; more are said to be there (R-AUDIT-4: never cut silently).
        let more_days = gaming_days.len() > 31;
        for day in gaming_days.iter().take(31) {
            let request = pb::PatronCashActivityRequest {
                property_id: String::new(),
                gaming_day: day.clone(),
                player_id: player_id.clone(),
                page: None,
            };
            let activity = console
                .call(who, rpc!(AuditService / PatronCashActivity), request, |s, r| async move { s.patron_cash_activity(r).await })
                .await;
            let activity = match activity {
                Ok(activity) => activity,
                // A floor supervisor sees the player but not the cash reports (R-AUDIT-4 roles).
                Err(status) if status.code() == tonic::Code::PermissionDenied => break,
                Err(status) => return Err(status),
            };
            for patron in activity.patrons {
                cash_rows.push(vec![
                    text(patron.gaming_day.clone()),
                    num(units.money(patron.cash_in_cents)),
                    num(units.money(patron.cash_out_cents)),
                    num(patron.mtl_entries.len().to_string()),
                    text(if patron.ctr_required_cash_in { "CTR (cash in)" } else { "" }),
                    text(if patron.ctr_required_cash_out { "CTR (cash out)" } else { "" }),
                    text(
                        [("in", patron.cash_in_corrected_cents), ("out", patron.cash_out_corrected_cents)]
                            .iter()
                            .filter(|(_, cents)| *cents != 0)
                            .map(|(way, cents)| format!("{way} {}", units.money(*cents)))
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                ]);
            }
        }
        let refusals = rejections(&console, &signed, pb::ListRejectionsRequest { player_id: player_id.clone(), ..Default::default() }).await;
        let (refusal_rows, more_refusals) = match refusals {
            Ok((records, more)) => (records.iter().map(|record| rejection_row(&units, record)).collect(), more),
            Err(status) if status.code() == tonic::Code::PermissionDenied => (Vec::new(), false),
            Err(status) => return Err(status),
        };
        let listings = vec![
            Listing::new("sessions", "Sessions", &["Table", "Seat", "Game", "Sat down", "Left", "Bought in", "Left with"], session_rows)
                .empty_text("No sessions.")
                .cut_if(more_sessions, LIST_CUT),
            Listing::new("departures", "Departures and the re-buy wait", &["Game", "Table", "Left", "Left with", "Re-buy window"], departure_rows)
                .empty_text("No departure binds a return.")
                .cut_if(more_history, "The patron's history is longer than this page reads: the re-buy wait is the ledger's to say (a buy-in is judged by it)."),
            Listing::new("money", "Buy-ins, cash-outs, cage and markers", &["Time", "Kind", "What", "Stream", "Position"], money_rows)
                .cut_if(more_history, LIST_CUT),
            Listing::new("markers", "Markers and IOUs", &["Time", "Kind", "What", "Stream", "Position"], markers)
                .empty_text("No markers or IOUs.")
                .cut_if(more_history, LIST_CUT),
            Listing::new("cash", "Cash activity per gaming day", &["Gaming day", "Cash in", "Cash out", "MTL entries", "CTR in", "CTR out", "Taken back"], cash_rows)
                .empty_text("No cash activity (or not visible to this role).")
                .cut_if(more_days, "Only the latest 31 gaming days are listed here: read the others with `chipledger cash-activity --day ...`."),
            Listing::new("refusals", "Refusals", REJECTION_HEADERS, refusal_rows)
                .empty_text("No refusals (or not visible to this role).")
                .cut_if(more_refusals, LIST_CUT),
        ];
        let path = format!("/players/{}", view::percent(&player_id));
        let listings = match view::lists(listings, &path, &query) {
            Lists::Csv(response) => return Ok(response),
            Lists::Paged(listings) => listings,
        };
        let hours = seat_ms / 3_600_000;
        let minutes = (seat_ms % 3_600_000) / 60_000;
        let body = context! { player_id => player_id, seat_time => format!("{hours} h {minutes:02} min"), listings => listings, zone => units.zone_name };
        Ok(console.page(&signed, "player.html", &format!("Player {player_id}"), body))
    }
    .await;
    answer(&console, &signed, result)
}

// ------------------------------------------------------------------ refusals

const REJECTION_HEADERS: &[&str] = &["Time", "Gaming day", "Command", "Reason", "Rule", "Numbers", "Player", "By", "Detail"];

fn rejection_row(units: &Units, record: &pb::RejectionRecord) -> Vec<Cell> {
    let mut numbers: Vec<String> = record.numbers.iter().map(|(name, value)| format!("{name}={value}")).collect();
    numbers.sort();
    vec![
        text(units.time(record.at_unix_ms)),
        text(record.gaming_day.clone()),
        text(record.command_type.clone()),
        text(record.reason_code.clone()),
        text(record.rule_id.clone()),
        text(numbers.join(" ")),
        if record.player_id.is_empty() { text("") } else { link(record.player_id.clone(), format!("/players/{}", view::percent(&record.player_id))) },
        text(by(&record.actor_id, Some(record.imported_by.as_str()))),
        text(record.detail.clone()),
    ]
}

/// The refusals `request` asks for, newest first, and whether more were left past the bound.
async fn rejections(console: &Console, signed: &Signed, request: pb::ListRejectionsRequest) -> Result<(Vec<pb::RejectionRecord>, bool), Status> {
    let (mut all, more) = all_pages(MAX_LIST_EVENTS, |page| {
        let request = pb::ListRejectionsRequest { page: Some(page), ..request.clone() };
        async move {
            let page = console
                .call(&signed.principal, rpc!(AuditService / ListRejections), request, |s, r| async move { s.list_rejections(r).await })
                .await?;
            Ok((page.rejections, page.page))
        }
    })
    .await?;
    all.reverse();
    Ok((all, more))
}

// ------------------------------------------------------------------ cage

pub async fn cage(State(console): State<Arc<Console>>, signed: Signed, Query(query): Query_) -> Response {
    let result = async {
        // The page is for those who may work a cage window.
        crate::access::authorize(&signed.principal, rpc!(CageService / SellChips))?;
        let property = console.property(&signed.principal)?;
        let units = Units::of(&property);
        // Each cage's stream, folded by the rules core into the cage's state.
        let (opened, _) = events(&console, &signed, of_types(&["CageOpened"])).await?;
        let mut cage_events = Vec::new();
        for stream in opened.iter().map(|event| event.stream_id.clone()) {
            let filter = pb::EventFilter { stream_id: stream, ..pb::EventFilter::default() };
            cage_events.extend(events_bounded(&console, &signed, filter, MAX_FOLD_EVENTS).await?.0);
        }
        let mut cages: BTreeMap<String, rules::CageState> = BTreeMap::new();
        let mut marker_issued: BTreeMap<(String, u64), (pb::RecordedEvent, String, i64)> = BTreeMap::new();
        let mut closes = Vec::new();
        for event in &cage_events {
            let Some(rules::Event::Cage(cage_event)) = decode(event) else { continue };
            let state = cages.remove(&event.stream_id).unwrap_or_default();
            match &cage_event {
                CageEvent::MarkerIssued { player_id, marker_no, amount_cents, .. } => {
                    marker_issued.insert((event.stream_id.clone(), *marker_no), (event.clone(), player_id.to_string(), *amount_cents));
                }
                // R-MARK-1: redeemed in whole or in part; outstanding until nothing is owed.
                CageEvent::MarkerRedeemed { marker_no, amount_cents, .. } => {
                    let key = (event.stream_id.clone(), *marker_no);
                    if let Some(issued) = marker_issued.get_mut(&key) {
                        issued.2 -= amount_cents;
                        if issued.2 <= 0 {
                            marker_issued.remove(&key);
                        }
                    }
                }
                CageEvent::MarkerWrittenOff { marker_no, .. } => {
                    marker_issued.remove(&(event.stream_id.clone(), *marker_no));
                }
                CageEvent::GamingDayClosed { gaming_day, liability, .. } => closes.push(vec![
                    text(gaming_day.clone()),
                    text(units.time(event.happened_unix_ms())),
                    num(units.money(rules::money::chips_value_cents(liability))),
                    text(chips_text(&units, liability)),
                    num(event.global_position.to_string()),
                ]),
                _ => {}
            }
            cages.insert(event.stream_id.clone(), state.evolve(&cage_event));
        }
        let now_ms = console.now_ms();
        let mut inventory = Vec::new();
        for (stream, state) in &cages {
            inventory.push(vec![text(stream.clone()), text("cash"), num(""), num(units.money(state.cash_cents))]);
            for chip in &state.chips {
                inventory.push(vec![
                    text(stream.clone()),
                    text(format!("{} chips", units.money(chip.denomination_cents))),
                    num(chip.count.to_string()),
                    num(units.money(chip.value_cents())),
                ]);
            }
            inventory.push(vec![text(stream.clone()), text("markers receivable"), num(""), num(units.money(state.markers_receivable_cents))]);
        }
        let outstanding: Vec<Vec<Cell>> = marker_issued
            .iter()
            .map(|((stream, marker_no), (event, player, amount))| {
                let days = (now_ms - event.happened_unix_ms()).max(0) / 86_400_000;
                let hours = ((now_ms - event.happened_unix_ms()).max(0) % 86_400_000) / 3_600_000;
                vec![
                    text(stream.clone()),
                    num(marker_no.to_string()),
                    link(player.clone(), format!("/players/{}", view::percent(player))),
                    num(units.money(*amount)),
                    text(units.time(event.happened_unix_ms())),
                    text(format!("{days} d {hours} h")),
                ]
            })
            .collect();
        // Chip liability by denomination for today's gaming day, and per day for the chart.
        let today = property.gaming_day.gaming_day(now_ms).unwrap_or_default();
        let mut liability_rows = Vec::new();
        let mut liability_chart = String::new();
        let mut summary = None;
        let mut variance_rows = Vec::new();
        if let Ok(day) = gaming_day_reconciliation(&console, &signed, &today).await {
            // R-CHIP-4: each cage count that differed, short and over apart (the page showed only
            // the day's net, which an overage of chips had brought to $0 beside cash short).
            for variance in &day.cage_count_variances {
                let chips: Vec<String> =
                    variance.chips_variance.iter().map(|chip| format!("{:+} x {}", chip.count, units.money(chip.denomination_cents))).collect();
                variance_rows.push(vec![
                    stream_link(&variance.stream_id),
                    num(units.money(variance.shortage_cents)),
                    num(units.money(variance.overage_cents)),
                    num(units.money(variance.cash_variance_cents)),
                    text(chips.join(", ")),
                    text(format!("{} and {}", variance.signer_1, variance.signer_2)),
                    num(variance.global_position.to_string()),
                ]);
            }
            let issued: BTreeMap<i64, i64> = day.chips_issued.iter().map(|chip| (chip.denomination_cents, chip.count)).collect();
            let returned: BTreeMap<i64, i64> = day.chips_returned.iter().map(|chip| (chip.denomination_cents, chip.count)).collect();
            let mut denominations: Vec<i64> = issued.keys().chain(returned.keys()).copied().collect();
            denominations.sort_unstable();
            denominations.dedup();
            for denomination in denominations {
                let out = issued.get(&denomination).copied().unwrap_or(0) - returned.get(&denomination).copied().unwrap_or(0);
                liability_rows.push(vec![num(units.money(denomination)), num(out.to_string()), num(units.money(out * denomination))]);
            }
            summary = Some(context! {
                gaming_day => day.gaming_day,
                // Whose close it is (the figure stays as the closing cages left it).
                liability => if day.closed_cage_streams.is_empty() {
                    "not closed yet (no cage has closed this gaming day)".to_string()
                } else {
                    let below: Vec<String> = day
                        .liability_below_zero
                        .iter()
                        .map(|chip| format!("{} x {}", chip.count, units.money(chip.denomination_cents)))
                        .collect();
                    let warning = if below.is_empty() {
                        String::new()
                    } else {
                        format!("; more came back than was issued: {} (R-CHIP-5: chips not the property's own, or substituted)", below.join(", "))
                    };
                    format!("{} (at the close of {}){warning}", units.money(day.chip_liability_cents), day.closed_cage_streams.join(", "))
                },
                balances => units.money(day.sum_of_balances_cents),
                count_variance => units.money(day.count_variance_cents),
                count_shortage => units.money(day.count_shortage_cents),
                count_overage => units.money(day.count_overage_cents),
                jackpot => units.money(day.jackpot_liability_cents),
                rake => units.money(day.rake_cents),
                toke => units.money(day.toke_cents),
            });
            let mut labels = Vec::new();
            let mut values = Vec::new();
            let today_date: Option<jiff::civil::Date> = today.parse().ok();
            if let Some(today_date) = today_date {
                for back in (0..LIABILITY_DAYS).rev() {
                    let Ok(date) = today_date.checked_sub(jiff::Span::new().days(back)) else { continue };
                    let label = date.to_string();
                    let liability = match gaming_day_reconciliation(&console, &signed, &label).await {
                        Ok(day) => day.chip_liability_cents,
                        Err(_) => 0,
                    };
                    labels.push(label[5..].to_string());
                    values.push(liability);
                }
                liability_chart = view::bar_chart(&units, "Chip liability per gaming day", &labels, &[("liability", "liability", values)]);
            }
        }
        let listings = vec![
            Listing::new("inventory", "Cage inventory", &["Cage", "Item", "Count", "Value"], inventory).empty_text("No cage is open."),
            Listing::new("liability", format!("Chip liability by denomination, gaming day {today}, at its cages' close"), &["Chip", "Outstanding", "Value"], liability_rows),
            Listing::new("markers", "Markers outstanding", &["Cage", "Marker", "Player", "Outstanding", "Issued", "Age"], outstanding)
                .empty_text("No markers outstanding."),
            Listing::new(
                "cage_counts",
                format!("Cage counts that differed from the book, gaming day {today}"),
                &["Cage", "Short", "Over", "Cash", "Chips", "Counted by", "Position"],
                variance_rows,
            )
            .empty_text("Every cage count agreed with the book."),
            Listing::new("closes", "Gaming-day closes", &["Gaming day", "Closed at", "Liability", "Chips out", "Position"], closes)
                .empty_text("No gaming day closed yet."),
        ];
        let listings = match view::lists(listings, "/cage", &query) {
            Lists::Csv(response) => return Ok(response),
            Lists::Paged(listings) => listings,
        };
        let cage_ids: Vec<String> = cages.keys().map(|stream| stream.trim_start_matches("cage-").to_string()).collect();
        // Slips are numbered in sequence per cage and kind (R-CHIP-3): the next of the first cage.
        let first = cages.values().next();
        let next_slip = context! {
            fill => first.map_or(0, |state| state.last_fill_slip_no) + 1,
            credit => first.map_or(0, |state| state.last_credit_slip_no) + 1,
        };
        let mut denominations: Vec<i64> = cages.values().flat_map(|state| state.denominations_cents.iter().copied()).collect();
        denominations.sort_unstable_by_key(|cents| std::cmp::Reverse(*cents));
        denominations.dedup();
        let denominations: Vec<minijinja::Value> =
            denominations.iter().map(|cents| context! { cents => cents, label => units.money(*cents) }).collect();
        let body = context! {
            denominations => denominations,
            listings => listings,
            summary => summary,
            chart => liability_chart,
            cage_ids => cage_ids,
            next_slip => next_slip,
            forms => super::actions::forms(&signed, &console.property(&signed.principal)?.id),
            currency => units.currency(),
        };
        Ok(console.page(&signed, "cage.html", "Cage", body))
    }
    .await;
    answer(&console, &signed, result)
}

async fn gaming_day_reconciliation(console: &Console, signed: &Signed, day: &str) -> Result<pb::GamingDayReconciliation, Status> {
    let request = pb::GamingDayReconciliationRequest { property_id: String::new(), gaming_day: day.to_string() };
    console
        .call(&signed.principal, rpc!(AuditService / GamingDayReconciliation), request, |s, r| async move {
            s.gaming_day_reconciliation(r).await
        })
        .await
}

// ------------------------------------------------------------------ compliance

pub async fn compliance(State(console): State<Arc<Console>>, signed: Signed, Query(query): Query_) -> Response {
    let result = async {
        crate::access::authorize(&signed.principal, rpc!(AuditService / PatronCashActivity))?;
        let property = console.property(&signed.principal)?;
        let units = Units::of(&property);
        let now_ms = console.now_ms();
        let day = query
            .get("day")
            .filter(|day| !day.is_empty())
            .cloned()
            .unwrap_or_else(|| property.gaming_day.gaming_day(now_ms).unwrap_or_default());
        let (console, signed): (&Console, &Signed) = (&console, &signed);
        let (patrons, more_patrons) = all_pages(MAX_LIST_EVENTS, |page| {
            let request = pb::PatronCashActivityRequest { gaming_day: day.clone(), page: Some(page), ..Default::default() };
            async move {
                let page = console
                    .call(&signed.principal, rpc!(AuditService / PatronCashActivity), request, |s, r| async move { s.patron_cash_activity(r).await })
                    .await?;
                Ok((page.patrons, page.page))
            }
        })
        .await?;
        let due = day
            .parse::<jiff::civil::Date>()
            .ok()
            .and_then(|date| date.checked_add(jiff::Span::new().days(i64::from(property.aml.ctr_due_days))).ok())
            .map(|date| date.to_string())
            .unwrap_or_default();
        let mut mtl = Vec::new();
        let mut ctrs = Vec::new();
        // Each patron's day net of corrections, with what corrections took back (the console pass:
        // a $3,500 cash-in taken back stood in the MTL with nothing to say so).
        let mut totals = Vec::new();
        // R-AUDIT-1: an entry a correction took back stays listed, with the correction.
        let taken_back = |entry: &pb::CashTransaction| match entry.taken_back_at_position {
            0 => text(String::new()),
            position => text(format!("by the correction at position {position}")),
        };
        for patron in &patrons {
            let player = link(patron.player_id.clone(), format!("/players/{}", view::percent(&patron.player_id)));
            totals.push(vec![
                player.clone(),
                num(units.money(patron.cash_in_cents)),
                num(units.money(patron.cash_out_cents)),
                num(units.money(patron.cash_in_corrected_cents)),
                num(units.money(patron.cash_out_corrected_cents)),
                num(patron.mtl_entries.len().to_string()),
            ]);
            for entry in &patron.mtl_entries {
                mtl.push(vec![
                    text(units.time(entry.at_unix_ms)),
                    player.clone(),
                    text(entry.direction.clone()),
                    num(units.money(entry.amount_cents)),
                    text(rules::words::spaced(&entry.event_type)),
                    num(entry.global_position.to_string()),
                    taken_back(entry),
                ]);
            }
            // One report per crossing of the threshold (a second follows a correction that took
            // the day back under it).
            for entry in &patron.ctr_entries {
                let (direction, total) =
                    if entry.direction == "in" { ("cash in", patron.cash_in_cents) } else { ("cash out", patron.cash_out_cents) };
                ctrs.push(vec![
                    player.clone(),
                    text(direction),
                    num(units.money(total)),
                    text(units.time(entry.at_unix_ms)),
                    num(entry.global_position.to_string()),
                    text(day.clone()),
                    text(due.clone()),
                ]);
            }
        }
        let filter = |name: &str| query.get(name).cloned().unwrap_or_default();
        let request = pb::ListRejectionsRequest {
            table_id: filter("table"),
            player_id: filter("player"),
            reason_code: filter("reason"),
            gaming_day: filter("refusal_day"),
            ..Default::default()
        };
        let (records, more_refusals) = rejections(&console, &signed, request).await?;
        let rule_filter = filter("rule");
        let records: Vec<&pb::RejectionRecord> = records.iter().filter(|record| rule_filter.is_empty() || record.rule_id == rule_filter).collect();
        let mut by_reason: BTreeMap<(String, String), usize> = BTreeMap::new();
        for record in &records {
            *by_reason.entry((record.reason_code.clone(), record.rule_id.clone())).or_default() += 1;
        }
        let reason_rows: Vec<Vec<Cell>> = by_reason
            .iter()
            .map(|((reason, rule), count)| {
                vec![
                    link(reason.clone(), format!("/compliance?reason={}", view::percent(reason))),
                    link(rule.clone(), format!("/compliance?rule={}", view::percent(rule))),
                    num(count.to_string()),
                ]
            })
            .collect();
        let refusal_rows: Vec<Vec<Cell>> = records.iter().map(|record| rejection_row(&units, record)).collect();
        let (corrections, _) = events(&console, &signed, of_types(&["Corrected", "PocketCorrected"])).await?;
        let payloads: Vec<serde_json::Value> =
            corrections.iter().map(|event| serde_json::from_str(&event.payload_json).unwrap_or_default()).collect();
        let field = |payload: &serde_json::Value, name: &str| payload.get(name).and_then(|value| value.as_str()).unwrap_or_default().to_string();
        // R-AUDIT-1: a pocket's follow-up of a correction names the reason and approver of the
        // correction it follows (the event it reverses is the same).
        let approvals: BTreeMap<String, (String, String)> = payloads
            .iter()
            .filter(|payload| payload.get("approved_by").is_some())
            .map(|payload| (field(payload, "reverses_event_id"), (field(payload, "reason"), field(payload, "approved_by"))))
            .collect();
        let correction_rows: Vec<Vec<Cell>> = corrections
            .iter()
            .zip(&payloads)
            .rev()
            .map(|(event, payload)| {
                let reverses = field(payload, "reverses_event_id");
                let (reason, approved_by) = approvals.get(&reverses).cloned().unwrap_or_default();
                vec![
                    text(units.time(event.happened_unix_ms())),
                    stream_link(&event.stream_id),
                    text(reverses),
                    text(reason),
                    text(event.metadata.as_ref().map(|metadata| by(&metadata.actor_id, metadata.imported_by.as_deref())).unwrap_or_default()),
                    text(approved_by),
                    num(event.global_position.to_string()),
                ]
            })
            .collect();
        let listings = vec![
            Listing::new("mtl", format!("Multiple transaction log, gaming day {day}, as recorded"), &["Time", "Player", "Direction", "Amount", "Kind", "Position", "Taken back"], mtl)
                .empty_text("No entries above the MTL threshold.")
                .cut_if(more_patrons, LIST_CUT),
            Listing::new(
                "patron_totals",
                format!("Cash per patron, gaming day {day}, net of corrections"),
                &["Player", "Cash in", "Cash out", "Taken back in", "Taken back out", "MTL entries"],
                totals,
            )
            .empty_text("No cash transactions.")
            .cut_if(more_patrons, LIST_CUT),
            Listing::new("ctr", "Currency transaction reports due", &["Player", "Direction", "Day's total", "Crossed at", "Position", "Gaming day", "Due by"], ctrs)
                .empty_text("No CTR required.")
                .cut_if(more_patrons, LIST_CUT),
            Listing::new("refusal_counts", "Refusals by reason and rule", &["Reason", "Rule", "Count"], reason_rows)
                .empty_text("No refusals.")
                .cut_if(more_refusals, LIST_CUT),
            Listing::new("refusals", "Refusals", REJECTION_HEADERS, refusal_rows).empty_text("No refusals.").cut_if(more_refusals, LIST_CUT),
            Listing::new("corrections", "Corrections", &["Time", "Stream", "Reverses", "Reason", "Entered by", "Approved by", "Position"], correction_rows)
                .empty_text("No corrections."),
        ];
        let listings = match view::lists(listings, "/compliance", &query) {
            Lists::Csv(response) => return Ok(response),
            Lists::Paged(listings) => listings,
        };
        let body = context! {
            day => day,
            listings => listings,
            mtl_over => units.money(property.aml.mtl_over_cents),
            ctr_over => units.money(property.aml.ctr_over_cents),
            filters => context! { table => filter("table"), player => filter("player"), reason => filter("reason"), rule => rule_filter, refusal_day => filter("refusal_day") },
        };
        Ok(console.page(&signed, "compliance.html", "Compliance", body))
    }
    .await;
    answer(&console, &signed, result)
}

// ------------------------------------------------------------------ chain

/// A chain verification run from the console.
#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    pub at: String,
    pub by: String,
    pub ok: bool,
    pub events_checked: i64,
    pub commands_checked: i64,
    pub refusals_checked: i64,
    pub projections_checked: bool,
    /// The chains (events, commands, refusals) and the store's functions verify, whatever the
    /// projections say: a derived row edited behind the service is not a broken chain.
    pub chain_ok: bool,
    pub projection_differences: usize,
    /// The first [`DIFFERENCES_SHOWN`] rows that differ: projection, key, stored, recomputed.
    pub differences: Vec<[String; 4]>,
    pub problem: String,
    pub head_position: i64,
}

/// Projection rows a verification lists on the chain page (all of them are counted).
const DIFFERENCES_SHOWN: usize = 50;

async fn chain_digest(console: &Console, signed: &Signed) -> Result<pb::ChainDigest, Status> {
    console
        .call(&signed.principal, rpc!(AuditService / GetChainDigest), pb::GetChainDigestRequest::default(), |s, r| async move {
            s.get_chain_digest(r).await
        })
        .await
}

async fn latest_checkpoint(console: &Console, signed: &Signed) -> Result<Option<String>, Status> {
    let checkpoints = all_pages(usize::MAX, |page| {
        let request = pb::ListCheckpointsRequest { page: Some(page), ..Default::default() };
        async move {
            let page = console
                .call(&signed.principal, rpc!(AuditService / ListCheckpoints), request, |s, r| async move { s.list_checkpoints(r).await })
                .await?;
            Ok((page.checkpoints, page.page))
        }
    })
    .await?;
    Ok(checkpoints.0.last().map(|checkpoint| checkpoint.document.clone()))
}

pub async fn chain(State(console): State<Arc<Console>>, signed: Signed) -> Response {
    let result = async {
        crate::access::authorize(&signed.principal, rpc!(AuditService / VerifyChain))?;
        let property = console.property(&signed.principal)?;
        let head = chain_digest(&console, &signed).await?;
        let checkpoint = latest_checkpoint(&console, &signed).await?;
        let key = console
            .call(&signed.principal, rpc!(AuditService / GetCheckpointKey), pb::GetCheckpointKeyRequest {}, |s, r| async move {
                s.get_checkpoint_key(r).await
            })
            .await
            .ok();
        let verification = console.verifications.lock().expect("console verifications").get(&property.id).cloned();
        let body = context! {
            head => context! { position => head.global_position, hash => head.chain_hash_hex, refusal_seq => head.refusal_seq, refusal_hash => head.refusal_hash_hex },
            checkpoint => checkpoint,
            key => key.map(|key| context! { id => key.key_id, public => key.public_key_hex, interval => key.interval_seconds }),
            verification => verification,
            property => property.id,
        };
        Ok(console.page(&signed, "chain.html", "Chain", body))
    }
    .await;
    answer(&console, &signed, result)
}

/// Runs VerifyChain (with the projections) and keeps its verdict for the chain page.
pub async fn verify_chain(State(console): State<Arc<Console>>, signed: Signed, Form(form): Form<HashMap<String, String>>) -> Response {
    if let Err(refused) = signed.check_csrf(&form) {
        return refused;
    }
    let result = async {
        let property = console.property(&signed.principal)?;
        let units = Units::of(&property);
        let request = pb::VerifyChainRequest { property_id: String::new(), checkpoints: Vec::new(), projections: true };
        let verdict = console
            .call(&signed.principal, rpc!(AuditService / VerifyChain), request, |s, r| async move { s.verify_chain(r).await })
            .await?;
        let functions = if verdict.functions_changed.is_empty() {
            String::new()
        } else {
            format!("store functions not this build's: {}", verdict.functions_changed.join(", "))
        };
        let problem = [verdict.problem.clone(), verdict.refusal_problem.clone(), functions].into_iter().filter(|text| !text.is_empty()).collect::<Vec<_>>().join("; ");
        // The chain page had said BROKEN for one projection row edited behind the service, and
        // named no row (the console pass); the CLI keeps the two apart and lists the rows.
        let chain_ok = problem.is_empty()
            && verdict.first_bad_position.is_none()
            && verdict.first_bad_refusal.is_none()
            && verdict.checkpoints.iter().all(|checkpoint| checkpoint.agrees);
        let differences = verdict
            .projection_differences
            .iter()
            .take(DIFFERENCES_SHOWN)
            .map(|row| [row.projection.clone(), row.key.clone(), row.stored.clone(), row.recomputed.clone()])
            .collect();
        let verification = Verification {
            at: units.time(console.now_ms()),
            by: signed.principal.id.clone(),
            ok: verdict.ok,
            events_checked: verdict.events_checked,
            commands_checked: verdict.commands_checked,
            refusals_checked: verdict.refusals_checked,
            projections_checked: verdict.projections_checked,
            chain_ok,
            projection_differences: verdict.projection_differences.len(),
            differences,
            problem,
            head_position: verdict.head.map(|head| head.global_position).unwrap_or(0),
        };
        console.verifications.lock().expect("console verifications").insert(property.id.clone(), verification);
        Ok(Redirect::to("/chain").into_response())
    }
    .await;
    answer(&console, &signed, result)
}

/// The head and the latest signed checkpoint as a JSON file to keep off this machine.
pub async fn digest_download(State(console): State<Arc<Console>>, signed: Signed) -> Response {
    let result = async {
        let property = console.property(&signed.principal)?;
        let head = chain_digest(&console, &signed).await?;
        let checkpoint = latest_checkpoint(&console, &signed).await?;
        let document = serde_json::json!({
            "property_id": property.id,
            "taken_at_unix_ms": console.now_ms(),
            "taken_by": signed.principal.id,
            "head": {
                "global_position": head.global_position,
                "chain_hash_hex": head.chain_hash_hex,
                "refusal_seq": head.refusal_seq,
                "refusal_hash_hex": head.refusal_hash_hex,
            },
            "latest_signed_checkpoint": checkpoint.and_then(|document| serde_json::from_str::<serde_json::Value>(&document).ok()),
        });
        let file = format!("attachment; filename=\"chipledger-{}-{}.json\"", property.id, head.global_position);
        Ok((
            [(axum::http::header::CONTENT_TYPE, "application/json".to_string()), (axum::http::header::CONTENT_DISPOSITION, file)],
            serde_json::to_string_pretty(&document).unwrap_or_default(),
        )
            .into_response())
    }
    .await;
    answer(&console, &signed, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-POST-1, R-POST-3: the table page says what each seat owes before it plays.
    #[test]
    fn r_post_3_the_table_page_names_what_a_seat_owes() {
        let units = Units::of(&crate::config::PropertyConfig::with_defaults("p"));
        let seat = |view: pb::SeatView| owed_posts(&units, &view);
        assert_eq!(seat(pb::SeatView::default()), "");
        let owing = pb::SeatView { owes_entry_post: true, missed_big_blind: true, missed_small_blind: true, missed_button_ante_cents: 400, ..Default::default() };
        assert_eq!(seat(owing), "entry big blind, missed big blind, missed small blind, missed ante $4.00");
    }

    fn event(event_id: &str, at_unix_ms: i64, payload_json: String, drop_cents: i64) -> pb::RecordedEvent {
        pb::RecordedEvent {
            stream_id: "table-T1".into(),
            event_id: event_id.into(),
            payload_json,
            recorded_at_unix_ms: at_unix_ms,
            metadata: Some(pb::EventMetadata { gaming_day: "2026-12-01".into(), ..Default::default() }),
            postings: vec![pb::Posting { account: "table/T1/drop".into(), amount_cents: drop_cents }],
            ..Default::default()
        }
    }

    /// R-AUDIT-1: a buy-in keyed at 09h and taken back at 11h counts in neither hour (the chart
    /// had shown 09h with $500 that never came and 11h with a drop of -$500); a correction of an
    /// event the day does not hold stays in the hour it was recorded.
    #[test]
    fn a_correction_counts_in_the_hour_of_the_event_it_takes_back() {
        let mut property = crate::config::PropertyConfig::with_defaults("p");
        property.gaming_day = crate::config::GamingDayClock::in_zone(6 * 60, "UTC").unwrap();
        let units = Units::of(&property);
        let hour = 3_600_000;
        let nine = 1_764_579_600_000; // 2025-12-01 09:00 UTC
        let corrected = |reverses: &str| {
            serde_json::json!({ "type": "Corrected", "reverses_event_id": reverses, "approved_by": "floor-2", "reason": "wrong seat", "postings": [] })
                .to_string()
        };
        let timeline = vec![
            event("buy-in", nine, "{}".into(), 50_000),
            event("other", nine + hour, "{}".into(), 20_000),
            event("fix", nine + 2 * hour, corrected("buy-in"), -50_000),
            event("fix-of-yesterday", nine + 2 * hour, corrected("not-today"), -7_000),
        ];
        let totals = hourly_totals(&units, &timeline, "2026-12-01");
        let drops: Vec<(i8, i64)> = totals.values().map(|totals| (totals.hour, totals.drop_cents)).collect();
        assert_eq!(drops, vec![(9, 0), (10, 20_000), (11, -7_000)]);
    }

    /// The night the clocks go back in Los Angeles, 01:10 PDT and 01:20 PST are two hours, in
    /// the order they happened, after the evening before (the auditor pass: one bar "01h", and
    /// the evening's 21h drawn after 03h).
    #[test]
    fn the_hour_a_clock_change_repeats_is_two_hours_in_the_order_they_happened() {
        let mut property = crate::config::PropertyConfig::with_defaults("p");
        property.gaming_day = crate::config::GamingDayClock::in_zone(6 * 60, "America/Los_Angeles").unwrap();
        let units = Units::of(&property);
        let evening = 1_793_505_600_000; // 2026-10-31 21:00 PDT (04:00 UTC, Nov 1)
        let pdt_0110 = 1_793_520_600_000; // 2026-11-01 01:10 PDT (08:10 UTC)
        let pst_0120 = 1_793_524_800_000; // 2026-11-01 01:20 PST (09:20 UTC)
        let pst_0310 = 1_793_531_400_000; // 2026-11-01 03:10 PST (11:10 UTC)
        let timeline = vec![
            event("a", evening, "{}".into(), 1_000),
            event("b", pdt_0110, "{}".into(), 2_000),
            event("c", pst_0120, "{}".into(), 3_000),
            event("d", pst_0310, "{}".into(), 4_000),
        ];
        let totals = hourly_totals(&units, &timeline, "2026-12-01");
        let hours: Vec<(i8, i32, i64)> = totals.values().map(|totals| (totals.hour, totals.offset_seconds, totals.drop_cents)).collect();
        assert_eq!(hours, vec![(21, -7 * 3_600, 1_000), (1, -7 * 3_600, 2_000), (1, -8 * 3_600, 3_000), (3, -8 * 3_600, 4_000)]);
        let chart = hourly_chart(&units, &timeline, "2026-12-01");
        assert!(chart.contains("01h (-07:00)") && chart.contains("01h (-08:00)") && chart.contains("21h"), "{chart}");
    }
}
