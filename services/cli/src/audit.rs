//! Auditor queries: a balance as of a position or a time, a player's history with running
//! balances and sessions, a hand reconstructed, table stacks as of a time, the log followed
//! live, shift and gaming-day reconciliation (R-CHIP-4, R-CHIP-5), cash activity
//! above the reporting thresholds (R-AUDIT-4), refused commands (R-AUDIT-3), and the chain
//! checked against a saved digest. Every list is read page by page (bounded pages). Times are
//! read and shown in the property's zone ([`PropertyClock`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chipledger_proto::v1 as pb;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::clock::PropertyClock;
use crate::connect::{Client, rpc_error};
use crate::output::{Output, money};

/// Events or rows asked for per page.
pub const PAGE_SIZE: u32 = 1_000;
/// Most pages one query reads (1,000,000 rows).
pub const MAX_PAGES: usize = 1_000;

fn page(token: &str) -> Option<pb::PageRequest> {
    Some(pb::PageRequest { page_size: PAGE_SIZE, page_token: token.to_string() })
}

fn next_token(page: Option<&pb::PageResponse>) -> Option<String> {
    page.map(|page| page.next_page_token.clone()).filter(|token| !token.is_empty())
}

/// Every row of a paged list: `fetch` reads the page after a token (empty: the first) and
/// answers its rows and page; at most [`MAX_PAGES`] pages.
async fn all_pages<T>(mut fetch: impl AsyncFnMut(String) -> anyhow::Result<(Vec<T>, Option<pb::PageResponse>)>) -> anyhow::Result<Vec<T>> {
    let mut rows = Vec::new();
    let mut token = String::new();
    for _ in 0..MAX_PAGES {
        let (page_rows, page) = fetch(token).await?;
        rows.extend(page_rows);
        match next_token(page.as_ref()) {
            Some(next) => token = next,
            None => break,
        }
    }
    Ok(rows)
}

fn postings_text(postings: &[pb::Posting]) -> String {
    postings.iter().map(|p| format!("{}:{}", p.account, p.amount_cents)).collect::<Vec<_>>().join(";")
}

fn payload_field(event: &pb::RecordedEvent, field: &str) -> Option<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(&event.payload_json).ok()?.get(field).cloned()
}

/// A role as the wire names it (`ROLE_ADMIN`).
pub fn role_text(role: i32) -> &'static str {
    pb::Role::try_from(role).map_or("UNKNOWN", |role| role.as_str_name())
}

pub fn event_json(event: &pb::RecordedEvent) -> serde_json::Value {
    let metadata = event.metadata.clone().unwrap_or_default();
    json!({
        "global_position": event.global_position,
        "stream_id": event.stream_id,
        "stream_version": event.stream_version,
        "event_id": event.event_id,
        "event_type": event.event_type,
        "schema_version": event.schema_version,
        "recorded_at_unix_ms": event.recorded_at_unix_ms,
        "gaming_day": metadata.gaming_day,
        "actor_id": metadata.actor_id,
        "actor_role": role_text(metadata.actor_role),
        "command_id": metadata.command_id,
        "config_version": metadata.config_version,
        "device": metadata.device,
        "reason_note": metadata.reason_note,
        "correlation_id": metadata.correlation_id,
        "trace_id": metadata.trace_id,
        // An import: who sent it, and when it happened (R-AUDIT-2).
        "imported_by": metadata.imported_by,
        "occurred_at_unix_ms": metadata.occurred_at_unix_ms,
        "hash_hex": event.hash_hex,
        "postings": event.postings.iter().map(|p| json!({"account": p.account, "amount_cents": p.amount_cents})).collect::<Vec<_>>(),
        "payload": serde_json::from_str::<serde_json::Value>(&event.payload_json).unwrap_or(serde_json::Value::Null),
    })
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[arg(long)]
    player: String,
    /// From this time: "2026-12-01 08:03" in the property's zone, RFC 3339 with an offset, or
    /// Unix ms.
    #[arg(long)]
    from: Option<String>,
    /// Up to this time (same forms).
    #[arg(long)]
    to: Option<String>,
}

#[derive(Debug, Args)]
pub struct BalanceArgs {
    /// The account key, e.g. cage/MAIN/cash, player/P7/pocket, table/T1/seat/3, table/T1/kitty.
    account: String,
    /// As of this time: "2026-12-01 08:03" in the property's zone, RFC 3339 with an offset, or
    /// Unix ms (default: now).
    #[arg(long, conflicts_with = "position")]
    at: Option<String>,
    /// As of this global position.
    #[arg(long)]
    position: Option<i64>,
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// The player.
    player: String,
    /// Sessions from this time (same forms as `history --from`).
    #[arg(long)]
    from: Option<String>,
    #[arg(long)]
    to: Option<String>,
}

#[derive(Debug, Args)]
pub struct HandArgs {
    #[arg(long)]
    table: String,
    /// The hand number (default: the hand in progress or the last one).
    #[arg(long)]
    hand_no: Option<u64>,
}

#[derive(Debug, Args)]
pub struct StacksArgs {
    #[arg(long)]
    table: String,
    /// As of this time: "2026-12-01 08:03" in the property's zone, RFC 3339 with an offset, or
    /// Unix ms (default: now).
    #[arg(long, conflicts_with = "position")]
    at: Option<String>,
    /// As of this global position.
    #[arg(long)]
    position: Option<i64>,
}

#[derive(Debug, Subcommand)]
pub enum ReconcileArgs {
    /// A table's shift (R-CHIP-4): result = drop + credits + closing - opening - fills.
    Shift {
        #[arg(long)]
        table: String,
        /// The ShiftClosed event's position (default: the last closed shift).
        #[arg(long)]
        position: Option<i64>,
    },
    /// A gaming day (R-CHIP-5): chip liability per denomination, shifts, sum of balances.
    Day {
        #[arg(long)]
        day: String,
    },
}

#[derive(Debug, Args)]
pub struct CashActivityArgs {
    #[arg(long)]
    day: String,
    #[arg(long, default_value = "")]
    player: String,
}

impl CashActivityArgs {
    pub fn for_player(day: &str, player: &str) -> CashActivityArgs {
        CashActivityArgs { day: day.to_string(), player: player.to_string() }
    }
}

#[derive(Debug, Args)]
pub struct RejectionsArgs {
    #[arg(long, default_value = "")]
    table: String,
    #[arg(long, default_value = "")]
    player: String,
    #[arg(long, default_value = "")]
    reason: String,
    /// Only refusals of this gaming day (YYYY-MM-DD).
    #[arg(long, default_value = "")]
    gaming_day: String,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// A digest saved earlier with `chipledger digest --out FILE`; the chain must still pass
    /// through it (same hash at the same position).
    #[arg(long)]
    pub digest_file: Option<PathBuf>,
    /// A directory of signed checkpoints kept with `chipledger checkpoints fetch`: each is
    /// checked (signature, then the log against it) and the last one the log agrees with named.
    #[arg(long)]
    pub checkpoints: Option<PathBuf>,
    /// Public key(s) trusted to sign checkpoints (64 hex digits, or a file holding them or a
    /// PEM public key). Without one the key the server publishes is used, and the report says so.
    #[arg(long = "public-key")]
    pub public_keys: Vec<String>,
    /// Also recompute the inline projections (seat balances, sessions and departures, tray,
    /// markers, daily cash) and the account balances from the events and compare.
    #[arg(long)]
    pub projections: bool,
}

#[derive(Debug, Args)]
pub struct DigestArgs {
    /// Save the digest (JSON) to this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// `chipledger balance`: one account's balance, as money, with the position it is read at.
pub async fn balance(client: &mut Client, args: BalanceArgs, output: Output) -> anyhow::Result<ExitCode> {
    if let Err(rejection) = args.account.parse::<chipledger_rules::Account>() {
        anyhow::bail!(
            "{}: expected an account like cage/MAIN/cash, player/P7/pocket, player/P7/iou, table/T1/seat/3, table/T1/kitty or house/bank",
            rejection.detail
        );
    }
    let clock = PropertyClock::fetch(client).await?;
    let as_of = match (&args.at, args.position) {
        (Some(at), _) => Some(pb::get_balance_request::AsOf::UnixMs(clock.parse(at)?)),
        (None, Some(position)) => Some(pb::get_balance_request::AsOf::GlobalPosition(position)),
        (None, None) => None,
    };
    let reply = client
        .ledger
        .get_balance(pb::GetBalanceRequest { property_id: client.property_id.clone(), account: args.account.clone(), as_of })
        .await
        .map_err(|status| rpc_error("reading the balance", &status))?
        .into_inner();
    if output.json {
        println!(
            "{}",
            json!({
                "account": reply.account,
                "balance_cents": reply.balance_cents,
                "currency": clock.currency,
                "global_position": reply.global_position,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let when = match &args.at {
        Some(at) => format!(" ({})", clock.show(clock.parse(at)?)),
        None => String::new(),
    };
    println!(
        "{} {} {} as of position {}{when}",
        reply.account,
        money(reply.balance_cents),
        clock.currency,
        reply.global_position
    );
    Ok(ExitCode::SUCCESS)
}

/// `chipledger sessions`: a player's sessions at the tables, every page.
pub async fn sessions(client: &mut Client, args: SessionsArgs, output: Output) -> anyhow::Result<ExitCode> {
    let clock = PropertyClock::fetch(client).await?;
    let range = clock.range(args.from.as_deref(), args.to.as_deref())?;
    let property_id = client.property_id.clone();
    let sessions = all_pages(async |token: String| {
        let reply = client
            .ledger
            .list_player_sessions(pb::ListPlayerSessionsRequest {
                property_id: property_id.clone(),
                player_id: args.player.clone(),
                time_range: range,
                page: page(&token),
            })
            .await
            .map_err(|status| rpc_error("player sessions", &status))?
            .into_inner();
        Ok((reply.sessions, reply.page))
    })
    .await?;
    if output.json {
        let list: Vec<_> = sessions
            .iter()
            .map(|s| {
                json!({
                    "table_id": s.table_id,
                    "seat": s.seat,
                    "game": s.game,
                    "started_at_unix_ms": s.started_at_unix_ms,
                    "ended_at_unix_ms": s.ended_at_unix_ms,
                    "bought_in_cents": s.bought_in_cents,
                    "left_with_cents": s.left_with_cents,
                })
            })
            .collect();
        println!("{}", json!({ "player_id": args.player, "sessions": list }));
        return Ok(ExitCode::SUCCESS);
    }
    println!("sessions of player {} ({}, times in {})", args.player, sessions.len(), clock.zone_name);
    let mut table = output.table(&["table", "seat", "game", "start", "end", "bought in", "left with"]);
    for s in &sessions {
        // A session whose start is before the range (or the page) has no start time.
        let started = if s.started_at_unix_ms == 0 { "-".to_string() } else { clock.show(s.started_at_unix_ms) };
        table.add_row(vec![
            s.table_id.clone(),
            s.seat.to_string(),
            s.game.clone(),
            started,
            s.ended_at_unix_ms.map_or_else(|| "still seated".to_string(), |at| clock.show(at)),
            money(s.bought_in_cents),
            s.left_with_cents.map(money).unwrap_or_default(),
        ]);
    }
    println!("{table}");
    Ok(ExitCode::SUCCESS)
}

/// The position just before the first event of the command that recorded `event`: a command's
/// events are consecutive, and its pocket postings may sit on an event before the patron's (a
/// cage's sale before the patron's `ChipsBought`).
async fn position_before_command(client: &mut Client, event: &pb::RecordedEvent) -> anyhow::Result<i64> {
    const LOOK_BACK: i64 = 16;
    let command_id = event.metadata.as_ref().map(|metadata| metadata.command_id.clone()).unwrap_or_default();
    let mut first = event.global_position;
    loop {
        let from = (first - LOOK_BACK).max(1);
        if command_id.is_empty() || from >= first {
            return Ok(first - 1);
        }
        let before = client
            .ledger
            .list_events(pb::ListEventsRequest {
                property_id: client.property_id.clone(),
                filter: Some(pb::EventFilter { from_position: from, ..Default::default() }),
                page: Some(pb::PageRequest { page_size: (first - from) as u32, page_token: String::new() }),
            })
            .await
            .map_err(|status| rpc_error("the command's events", &status))?
            .into_inner()
            .events;
        for earlier in before.iter().rev() {
            if earlier.global_position >= first {
                continue;
            }
            let same = earlier.metadata.as_ref().is_some_and(|metadata| metadata.command_id == command_id);
            if earlier.global_position != first - 1 || !same {
                return Ok(first - 1);
            }
            first -= 1;
        }
        if first > from {
            return Ok(first - 1);
        }
    }
}

pub async fn history(client: &mut Client, args: HistoryArgs, output: Output) -> anyhow::Result<ExitCode> {
    let clock = PropertyClock::fetch(client).await?;
    let range = clock.range(args.from.as_deref(), args.to.as_deref())?;
    let property_id = client.property_id.clone();
    let events = all_pages(async |token: String| {
        let reply = client
            .ledger
            .list_player_history(pb::ListPlayerHistoryRequest {
                property_id: property_id.clone(),
                player_id: args.player.clone(),
                time_range: range,
                page: page(&token),
            })
            .await
            .map_err(|status| rpc_error("player history", &status))?
            .into_inner();
        Ok((reply.events, reply.page))
    })
    .await?;
    // Running balances of the player's own accounts after each event. A command appends its
    // events at consecutive positions and the chip postings sit on the table or cage event of
    // the same command, so the balance is read as of each event's position from the ledger.
    let mut rows = Vec::with_capacity(events.len());
    let mut previous_pocket = None;
    for event in &events {
        let before_first = match previous_pocket {
            None => Some(position_before_command(client, event).await?),
            Some(_) => None,
        };
        let balance_at = |account: &'static str, position: i64| {
            let request = pb::GetBalanceRequest {
                property_id: client.property_id.clone(),
                account: format!("player/{}/{account}", args.player),
                as_of: Some(pb::get_balance_request::AsOf::GlobalPosition(position)),
            };
            let mut ledger = client.ledger.clone();
            async move {
                ledger
                    .get_balance(request)
                    .await
                    .map(|reply| reply.into_inner().balance_cents)
                    .map_err(|status| rpc_error("running balance", &status))
            }
        };
        let pocket = balance_at("pocket", event.global_position).await?;
        let iou = balance_at("iou", event.global_position).await?;
        // The first row's change is against the pocket just before it: a range that starts
        // after the patron's first event (`--from`) does not show the pocket held then as
        // moved by that row (the auditor pass: a cash buy-in shown as +216.00 in the pocket).
        let previous = match (previous_pocket, before_first) {
            (Some(previous), _) => previous,
            (None, Some(before)) if before > 0 => balance_at("pocket", before).await?,
            (None, _) => 0,
        };
        let change = pocket - previous;
        previous_pocket = Some(pocket);
        rows.push((event, change, pocket, iou));
    }
    if output.json {
        let list: Vec<_> = rows
            .iter()
            .map(|(event, change, pocket, iou)| {
                let mut value = event_json(event);
                value["pocket_change_cents"] = json!(change);
                value["pocket_balance_cents"] = json!(pocket);
                value["iou_balance_cents"] = json!(iou);
                value
            })
            .collect();
        println!("{}", json!({ "player_id": args.player, "events": list }));
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output.table(&["position", "time", "event", "table", "amount", "change", "pocket", "iou"]);
    for (event, change, pocket, iou) in &rows {
        let table_id = payload_field(event, "table_id").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let amount = payload_field(event, "amount_cents").and_then(|v| v.as_i64()).map(money).unwrap_or_default();
        table.add_row(vec![
            event.global_position.to_string(),
            clock.show(event.happened_unix_ms()),
            event.event_type.clone(),
            table_id,
            amount,
            money(*change),
            money(*pocket),
            money(*iou),
        ]);
    }
    println!("history of player {} ({} events)", args.player, rows.len());
    println!("{table}");
    Ok(ExitCode::SUCCESS)
}

pub async fn hand(client: &mut Client, args: HandArgs, output: Output) -> anyhow::Result<ExitCode> {
    let view = client
        .table
        .get_hand(pb::GetHandRequest {
            property_id: client.property_id.clone(),
            table_id: args.table.clone(),
            hand_no: args.hand_no,
        })
        .await
        .map_err(|status| rpc_error("reading the hand", &status))?
        .into_inner();
    print_hand(&view, output);
    Ok(ExitCode::SUCCESS)
}

/// Per seat: chips put in (posts, bets, calls) and chips received (awards, uncalled returns).
pub fn contributions(view: &pb::HandView) -> BTreeMap<u32, (i64, i64)> {
    let prefix = format!("table/{}/seat/", view.table_id);
    let mut per_seat: BTreeMap<u32, (i64, i64)> = BTreeMap::new();
    for event in &view.events {
        for posting in &event.postings {
            let Some(seat) = posting.account.strip_prefix(&prefix).and_then(|seat| seat.parse::<u32>().ok()) else {
                continue;
            };
            let entry = per_seat.entry(seat).or_default();
            if posting.amount_cents < 0 {
                entry.0 += -posting.amount_cents;
            } else {
                entry.1 += posting.amount_cents;
            }
        }
    }
    per_seat
}

/// The kitty taken from the hand's pots (R-KITTY-1), from its settlement and the side pots paid
/// at once.
pub fn kitty_cents(view: &pb::HandView) -> i64 {
    view.events
        .iter()
        .filter_map(|event| serde_json::from_str::<chipledger_rules::TableEvent>(&event.payload_json).ok())
        .map(|event| match event {
            chipledger_rules::TableEvent::HandSettled { kitty_cents, .. } | chipledger_rules::TableEvent::SidePotPaid { kitty_cents, .. } => kitty_cents,
            _ => 0,
        })
        .sum()
}

/// What happened in one event of a hand, in words (`seat 3 raises to 150.00`).
fn hand_step_text(event: &pb::RecordedEvent) -> String {
    serde_json::from_str::<chipledger_rules::TableEvent>(&event.payload_json)
        .ok()
        .and_then(|decoded| crate::words::hand_step(&decoded))
        .unwrap_or_default()
}

pub fn print_hand(view: &pb::HandView, output: Output) {
    let per_seat = contributions(view);
    let kitty = kitty_cents(view);
    if output.json {
        println!(
            "{}",
            json!({
                "table_id": view.table_id,
                "hand_no": view.hand_no,
                "ended": view.ended,
                "button_seat": view.button_seat,
                "starting_seats": view.starting_seats.iter().map(|s| json!({"seat": s.seat, "player_id": s.player_id, "stack_cents": s.stack_cents})).collect::<Vec<_>>(),
                "contributions": per_seat.iter().map(|(seat, (put_in, received))| json!({"seat": seat, "put_in_cents": put_in, "received_cents": received})).collect::<Vec<_>>(),
                "pots": view.pots.iter().map(|p| json!({"amount_cents": p.amount_cents, "returned_cents": p.returned_cents, "eligible_seats": p.eligible_seats})).collect::<Vec<_>>(),
                "awards": view.awards.iter().map(|a| json!({"pot_index": a.pot_index, "seat": a.seat, "player_id": a.player_id, "amount_cents": a.amount_cents})).collect::<Vec<_>>(),
                "rake_cents": view.rake_cents,
                "kitty_cents": kitty,
                "jackpot_drop_cents": view.jackpot_drop_cents,
                "board": view.board,
                "events": view.events.iter().map(event_json).collect::<Vec<_>>(),
                "corrections": view.corrections.iter().map(event_json).collect::<Vec<_>>(),
            })
        );
        return;
    }
    println!(
        "hand {} at table {} (button seat {}, {})",
        view.hand_no,
        view.table_id,
        view.button_seat,
        if view.ended { "ended" } else { "in progress" }
    );
    // R-AUDIT-1: what undid the hand comes first (the fixes' second pass read a voided hand here
    // as settled).
    if !view.corrections.is_empty() {
        println!("CORRECTED AFTERWARDS: the hand below is as recorded, before these corrections (R-AUDIT-1)");
        let mut corrections = output.table(&["position", "event", "postings"]);
        for event in &view.corrections {
            corrections.add_row(vec![event.global_position.to_string(), event.event_type.clone(), postings_text(&event.postings)]);
        }
        println!("{corrections}");
    }
    let mut seats = output.table(&["seat", "player", "starting stack", "put in", "received", "net"]);
    for seat in &view.starting_seats {
        let (put_in, received) = per_seat.get(&seat.seat).copied().unwrap_or_default();
        seats.add_row(vec![
            seat.seat.to_string(),
            seat.player_id.clone(),
            money(seat.stack_cents),
            money(put_in),
            money(received),
            money(received - put_in),
        ]);
    }
    println!("{seats}");
    let mut events = output.table(&["position", "event", "what", "postings"]);
    for event in &view.events {
        events.add_row(vec![
            event.global_position.to_string(),
            event.event_type.clone(),
            hand_step_text(event),
            postings_text(&event.postings),
        ]);
    }
    println!("{events}");
    // R-POT-4: the chips of a layer only its bettor reached are returned, not won.
    let mut pots = output.table(&["pot", "amount", "uncalled, returned", "eligible seats"]);
    for (index, pot) in view.pots.iter().enumerate() {
        let eligible: Vec<String> = pot.eligible_seats.iter().map(u32::to_string).collect();
        pots.add_row(vec![index.to_string(), money(pot.amount_cents), money(pot.returned_cents), eligible.join(",")]);
    }
    println!("{pots}");
    let mut awards = output.table(&["pot", "seat", "player", "award", "of which returned"]);
    for award in &view.awards {
        let returned = view.pots.get(award.pot_index as usize).map_or(0, |pot| pot.returned_cents.min(award.amount_cents));
        awards.add_row(vec![
            award.pot_index.to_string(),
            award.seat.to_string(),
            award.player_id.clone(),
            money(award.amount_cents),
            money(returned),
        ]);
    }
    println!("{awards}");
    println!("rake {}, kitty {}, jackpot drop {}", money(view.rake_cents), money(kitty), money(view.jackpot_drop_cents));
}

pub async fn stacks(client: &mut Client, args: StacksArgs, output: Output) -> anyhow::Result<ExitCode> {
    let at_unix_ms = match &args.at {
        Some(at) => {
            let clock = PropertyClock::fetch(client).await?;
            Some((clock.parse(at)?, clock))
        }
        None => None,
    };
    // As of a point of the log the server folds the table's events up to it: the seats then,
    // with their players and stacks (an all-in seat with nothing behind is still seated), and
    // the position it was read at (a position past the head is the head).
    let as_of = match (&at_unix_ms, args.position) {
        (Some((at, _)), _) => Some(pb::get_table_request::AsOf::UnixMs(*at)),
        (None, Some(position)) => Some(pb::get_table_request::AsOf::GlobalPosition(position)),
        (None, None) => None,
    };
    let view = client
        .table
        .get_table(pb::GetTableRequest { property_id: client.property_id.clone(), table_id: args.table.clone(), as_of })
        .await
        .map_err(|status| rpc_error("reading the table", &status))?
        .into_inner();
    let rows: Vec<(u32, String, i64)> = view.seats.iter().map(|seat| (seat.seat, seat.player_id.clone(), seat.stack_cents)).collect();
    let read_at = (as_of.is_some()).then_some(view.as_of_position);
    if output.json {
        let seats: Vec<_> = rows
            .iter()
            .map(|(seat, player, stack)| json!({"seat": seat, "player_id": player, "stack_cents": stack}))
            .collect();
        println!("{}", json!({"table_id": args.table, "as_of_position": read_at, "seats": seats}));
        return Ok(ExitCode::SUCCESS);
    }
    let when = match (&at_unix_ms, read_at) {
        (Some((at, clock)), Some(position)) => format!("as of {} (position {position})", clock.show(*at)),
        (_, Some(position)) => format!("as of position {position}"),
        _ => "now".to_string(),
    };
    println!("stacks at table {} {when}", args.table);
    let mut table = output.table(&["seat", "player", "stack"]);
    for (seat, player, stack) in &rows {
        table.add_row(vec![seat.to_string(), player.clone(), money(*stack)]);
    }
    println!("{table}");
    Ok(ExitCode::SUCCESS)
}

fn chips_text(chips: &[pb::ChipCount]) -> String {
    chips.iter().map(|c| format!("{}x{}", money(c.denomination_cents), c.count)).collect::<Vec<_>>().join(", ")
}

pub fn shift_json(shift: &pb::TableShiftReconciliation) -> serde_json::Value {
    json!({
        "table_id": shift.table_id,
        "gaming_day": shift.gaming_day,
        "opening_inventory_cents": shift.opening_inventory_cents,
        "closing_inventory_cents": shift.closing_inventory_cents,
        "fills_cents": shift.fills_cents,
        "credits_cents": shift.credits_cents,
        "drop_cents": shift.drop_cents,
        "result_cents": shift.result_cents,
        "rake_cents": shift.rake_cents,
        "toke_cents": shift.toke_cents,
        "shift_close_position": shift.shift_close_position,
        "tray_variance": shift.tray_variance.iter().map(|c| json!({"denomination_cents": c.denomination_cents, "count": c.count})).collect::<Vec<_>>(),
        "drop_variance_cents": shift.drop_variance_cents,
        "variance_cents": shift.variance_cents,
        "signers": [shift.signer_1.clone(), shift.signer_2.clone()],
    })
}

pub fn print_shift(shift: &pb::TableShiftReconciliation, output: Output) {
    let mut table = output.table(&["table", "day", "opening", "fills", "credits", "drop", "closing", "result", "rake", "tokes"]);
    table.add_row(vec![
        shift.table_id.clone(),
        shift.gaming_day.clone(),
        money(shift.opening_inventory_cents),
        money(shift.fills_cents),
        money(shift.credits_cents),
        money(shift.drop_cents),
        money(shift.closing_inventory_cents),
        money(shift.result_cents),
        money(shift.rake_cents),
        money(shift.toke_cents),
    ]);
    println!("{table}");
    println!("  {} (R-CHIP-4)", shift_formula(shift));
    println!("  counted by {} and {}", shift.signer_1, shift.signer_2);
    if shift.variance_cents != 0 || !shift.tray_variance.is_empty() || shift.drop_variance_cents != 0 {
        println!(
            "  count variance {} (tray {}, drop {}; counted minus book, R-CHIP-4)",
            money(shift.variance_cents),
            chips_text(&shift.tray_variance),
            money(shift.drop_variance_cents)
        );
    }
}

/// `drop D + credits C + closing X - opening O - fills F = result R` (R-CHIP-4).
pub fn shift_formula(shift: &pb::TableShiftReconciliation) -> String {
    format!(
        "drop {} + credits {} + closing {} - opening {} - fills {} = result {}",
        money(shift.drop_cents),
        money(shift.credits_cents),
        money(shift.closing_inventory_cents),
        money(shift.opening_inventory_cents),
        money(shift.fills_cents),
        money(shift.result_cents)
    )
}

pub fn day_json(day: &pb::GamingDayReconciliation) -> serde_json::Value {
    let chips = |list: &[pb::ChipCount]| -> Vec<serde_json::Value> {
        list.iter().map(|c| json!({"denomination_cents": c.denomination_cents, "count": c.count})).collect()
    };
    json!({
        "gaming_day": day.gaming_day,
        "chips_issued": chips(&day.chips_issued),
        "chips_returned": chips(&day.chips_returned),
        "chip_liability_cents": day.chip_liability_cents,
        "liability_below_zero": chips(&day.liability_below_zero),
        "closed_cage_streams": day.closed_cage_streams,
        "sum_of_balances_cents": day.sum_of_balances_cents,
        "rake_cents": day.rake_cents,
        "toke_cents": day.toke_cents,
        "count_variance_cents": day.count_variance_cents,
        "count_shortage_cents": day.count_shortage_cents,
        "count_overage_cents": day.count_overage_cents,
        "cage_count_variances": day.cage_count_variances.iter().map(|v| json!({
            "stream_id": v.stream_id, "global_position": v.global_position, "chips_variance": chips(&v.chips_variance),
            "cash_variance_cents": v.cash_variance_cents, "variance_cents": v.variance_cents, "signers": [v.signer_1.clone(), v.signer_2.clone()],
            "shortage_cents": v.shortage_cents, "overage_cents": v.overage_cents,
        })).collect::<Vec<_>>(),
        "jackpot_funds": day.jackpot_funds.iter().map(|f| json!({
            "table_id": f.table_id, "opening_cents": f.opening_cents, "drops_cents": f.drops_cents, "paid_cents": f.paid_cents, "closing_cents": f.closing_cents,
        })).collect::<Vec<_>>(),
        "jackpot_liability_cents": day.jackpot_liability_cents,
        "tables": day.tables.iter().map(shift_json).collect::<Vec<_>>(),
    })
}

pub fn print_day(day: &pb::GamingDayReconciliation, output: Output) {
    println!("gaming day {}", day.gaming_day);
    println!("  chips issued:   {}", chips_text(&day.chips_issued));
    println!("  chips returned: {}", chips_text(&day.chips_returned));
    if day.closed_cage_streams.is_empty() {
        println!("  chip liability: not closed yet: no cage has closed this gaming day (R-CHIP-5)");
    } else {
        println!("  chip liability: {} (R-CHIP-5; closed by {})", money(day.chip_liability_cents), day.closed_cage_streams.join(", "));
    }
    if !day.liability_below_zero.is_empty() {
        println!("  WARNING: more came back than was issued of {} (R-CHIP-5: chips not the property's own, or substituted)", chips_text(&day.liability_below_zero));
    }
    println!("  sum of all balances: {} (R-UNIT-4: must be 0.00)", money(day.sum_of_balances_cents));
    println!("  rake (or time) collected: {}; tokes to the pool: {} (the shifts closed this day)", money(day.rake_cents), money(day.toke_cents));
    println!(
        "  counts of the day (tables and cages, R-CHIP-4): short {}, over {} (gross); net {}",
        money(day.count_shortage_cents),
        money(day.count_overage_cents),
        money(day.count_variance_cents)
    );
    for variance in &day.cage_count_variances {
        println!(
            "    {} at position {}: {} (chips {}, cash {}), counted by {} and {}",
            variance.stream_id,
            variance.global_position,
            money(variance.variance_cents),
            chips_text(&variance.chips_variance),
            money(variance.cash_variance_cents),
            variance.signer_1,
            variance.signer_2
        );
    }
    for fund in &day.jackpot_funds {
        println!(
            "  jackpot fund {}: opening {} + drops {} - paid {} = closing {} (R-RAKE-2)",
            fund.table_id,
            money(fund.opening_cents),
            money(fund.drops_cents),
            money(fund.paid_cents),
            money(fund.closing_cents)
        );
    }
    println!("  jackpot liability: {}", money(day.jackpot_liability_cents));
    for shift in &day.tables {
        print_shift(shift, output);
    }
}

pub async fn reconcile(client: &mut Client, args: ReconcileArgs, output: Output) -> anyhow::Result<ExitCode> {
    match args {
        ReconcileArgs::Shift { table, position } => {
            let shift = client
                .audit
                .table_shift_reconciliation(pb::TableShiftReconciliationRequest {
                    property_id: client.property_id.clone(),
                    table_id: table,
                    shift_close_position: position,
                })
                .await
                .map_err(|status| rpc_error("shift reconciliation", &status))?
                .into_inner();
            if output.json {
                println!("{}", shift_json(&shift));
            } else {
                print_shift(&shift, output);
            }
        }
        ReconcileArgs::Day { day } => {
            let report = client
                .audit
                .gaming_day_reconciliation(pb::GamingDayReconciliationRequest {
                    property_id: client.property_id.clone(),
                    gaming_day: day,
                })
                .await
                .map_err(|status| rpc_error("gaming-day reconciliation", &status))?
                .into_inner();
            if output.json {
                println!("{}", day_json(&report));
            } else {
                print_day(&report, output);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn cash_activity(client: &mut Client, args: CashActivityArgs, output: Output) -> anyhow::Result<Vec<pb::PatronCashActivity>> {
    let clock = PropertyClock::fetch(client).await?;
    let property_id = client.property_id.clone();
    let patrons = all_pages(async |token: String| {
        let reply = client
            .audit
            .patron_cash_activity(pb::PatronCashActivityRequest {
                property_id: property_id.clone(),
                gaming_day: args.day.clone(),
                player_id: args.player.clone(),
                page: page(&token),
            })
            .await
            .map_err(|status| rpc_error("cash activity", &status))?
            .into_inner();
        Ok((reply.patrons, reply.page))
    })
    .await?;
    if output.json {
        let list: Vec<_> = patrons
            .iter()
            .map(|p| {
                json!({
                    "player_id": p.player_id,
                    "gaming_day": p.gaming_day,
                    "cash_in_cents": p.cash_in_cents,
                    "cash_out_cents": p.cash_out_cents,
                    "ctr_required_cash_in": p.ctr_required_cash_in,
                    "ctr_required_cash_out": p.ctr_required_cash_out,
                    "cash_in_corrected_cents": p.cash_in_corrected_cents,
                    "cash_out_corrected_cents": p.cash_out_corrected_cents,
                    "mtl_entries": p.mtl_entries.iter().map(transaction_json).collect::<Vec<_>>(),
                    "ctr_entries": p.ctr_entries.iter().map(transaction_json).collect::<Vec<_>>(),
                })
            })
            .collect();
        println!("{}", json!({"gaming_day": args.day, "patrons": list}));
        return Ok(patrons);
    }
    println!("cash activity on gaming day {} (R-AUDIT-4: in and out summed separately)", args.day);
    let mut table = output.table(&["patron", "cash in", "cash out", "MTL entries", "CTR", "taken back"]);
    for p in &patrons {
        // One CTR per crossing: "in" for one, "in x2" after a correction and a second crossing.
        let ctr: Vec<String> = ["in", "out"]
            .iter()
            .filter_map(|way| match p.ctr_entries.iter().filter(|e| e.direction == *way).count() {
                0 => None,
                1 => Some(way.to_string()),
                n => Some(format!("{way} x{n}")),
            })
            .collect();
        let ctr = if ctr.is_empty() { "-".to_string() } else { ctr.join(" + ") };
        let mtl: Vec<String> =
            p.mtl_entries
                .iter()
                .map(|e| match e.taken_back_at_position {
                    0 => format!("{} {} at {}", e.direction, money(e.amount_cents), clock.show(e.at_unix_ms)),
                    by => format!("{} {} at {} (taken back at position {by})", e.direction, money(e.amount_cents), clock.show(e.at_unix_ms)),
                })
                .collect();
        let taken_back: Vec<String> = [("in", p.cash_in_corrected_cents), ("out", p.cash_out_corrected_cents)]
            .iter()
            .filter(|(_, cents)| *cents != 0)
            .map(|(way, cents)| format!("{way} {}", money(*cents)))
            .collect();
        let taken_back = if taken_back.is_empty() { "-".to_string() } else { taken_back.join(", ") };
        table.add_row(vec![p.player_id.clone(), money(p.cash_in_cents), money(p.cash_out_cents), mtl.join("; "), ctr, taken_back]);
    }
    println!("{table}");
    Ok(patrons)
}

fn transaction_json(e: &pb::CashTransaction) -> serde_json::Value {
    json!({"global_position": e.global_position, "amount_cents": e.amount_cents, "direction": e.direction, "event_type": e.event_type, "at_unix_ms": e.at_unix_ms, "taken_back_at_position": e.taken_back_at_position})
}

pub async fn rejections(client: &mut Client, args: RejectionsArgs, output: Output) -> anyhow::Result<ExitCode> {
    let clock = PropertyClock::fetch(client).await?;
    let property_id = client.property_id.clone();
    let rows = all_pages(async |token: String| {
        let reply = client
            .audit
            .list_rejections(pb::ListRejectionsRequest {
                property_id: property_id.clone(),
                table_id: args.table.clone(),
                player_id: args.player.clone(),
                reason_code: args.reason.clone(),
                time_range: None,
                page: page(&token),
                gaming_day: args.gaming_day.clone(),
            })
            .await
            .map_err(|status| rpc_error("rejections", &status))?
            .into_inner();
        Ok((reply.rejections, reply.page))
    })
    .await?;
    if output.json {
        let list: Vec<_> = rows
            .iter()
            .map(|r| json!({"command_id": r.command_id, "command_type": r.command_type, "reason_code": r.reason_code, "rule_id": r.rule_id, "numbers": r.numbers, "detail": r.detail, "actor_id": r.actor_id, "at_unix_ms": r.at_unix_ms, "gaming_day": r.gaming_day}))
            .collect();
        println!("{}", json!({"rejections": list}));
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = output.table(&["time", "command", "reason", "rule", "numbers", "actor"]);
    for r in &rows {
        let numbers: Vec<String> = r.numbers.iter().map(|(k, v)| format!("{k}={v}")).collect();
        table.add_row(vec![
            clock.show(r.at_unix_ms),
            r.command_type.clone(),
            r.reason_code.clone(),
            r.rule_id.clone(),
            numbers.join(", "),
            r.actor_id.clone(),
        ]);
    }
    println!("{table}");
    Ok(ExitCode::SUCCESS)
}

/// A chain digest saved for later comparison.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct SavedDigest {
    pub global_position: i64,
    pub chain_hash_hex: String,
}

/// The chain head: last position and its hash.
pub async fn chain_head(client: &mut Client) -> anyhow::Result<pb::ChainDigest> {
    client
        .audit
        .get_chain_digest(pb::GetChainDigestRequest { property_id: client.property_id.clone() })
        .await
        .map(tonic::Response::into_inner)
        .map_err(|status| rpc_error("chain digest", &status))
}

pub async fn digest(client: &mut Client, args: DigestArgs, output: Output) -> anyhow::Result<ExitCode> {
    let head = chain_head(client).await?;
    let saved = SavedDigest { global_position: head.global_position, chain_hash_hex: head.chain_hash_hex };
    let text = serde_json::to_string_pretty(&saved)?;
    if let Some(path) = &args.out {
        std::fs::write(path, format!("{text}\n")).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if output.json {
        println!("{}", serde_json::to_string(&saved)?);
    } else {
        println!("chain head: position {} hash {}", saved.global_position, saved.chain_hash_hex);
    }
    Ok(ExitCode::SUCCESS)
}

/// The verified chain, or the reason it is not.
pub struct Verified {
    pub ok: bool,
    pub events_checked: i64,
    pub head: pb::ChainDigest,
    pub problem: String,
}

pub async fn verify_chain(client: &mut Client) -> anyhow::Result<Verified> {
    let reply = client
        .audit
        .verify_chain(pb::VerifyChainRequest { property_id: client.property_id.clone(), ..Default::default() })
        .await
        .map_err(|status| rpc_error("verifying the chain", &status))?
        .into_inner();
    let problem = match reply.first_bad_position {
        Some(position) => format!("first bad position {position}: {}", reply.problem),
        None => reply.problem.clone(),
    };
    Ok(Verified { ok: reply.ok, events_checked: reply.events_checked, head: reply.head.unwrap_or_default(), problem })
}

/// Whether the chain still passes through a digest saved with `chipledger digest --out`:
/// `None` if it does, else what is wrong.
pub async fn saved_digest_problem(client: &mut Client, path: &std::path::Path, head: &pb::ChainDigest) -> anyhow::Result<Option<String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let saved: SavedDigest = serde_json::from_str(&text).with_context(|| format!("{}: not a saved digest", path.display()))?;
    if saved.global_position > head.global_position {
        return Ok(Some(format!(
            "saved digest is at position {} but the chain ends at {} (events lost)",
            saved.global_position, head.global_position
        )));
    }
    if saved.global_position == 0 {
        return Ok(None);
    }
    let reply = client
        .ledger
        .list_events(pb::ListEventsRequest {
            property_id: client.property_id.clone(),
            filter: Some(pb::EventFilter { from_position: saved.global_position, ..Default::default() }),
            page: Some(pb::PageRequest { page_size: 1, page_token: String::new() }),
        })
        .await
        .map_err(|status| rpc_error("reading the saved position", &status))?
        .into_inner();
    Ok(match reply.events.first() {
        Some(event) if event.global_position == saved.global_position && event.hash_hex == saved.chain_hash_hex => None,
        Some(event) => Some(format!(
            "at position {} the chain hash is {} but the saved digest says {}",
            event.global_position, event.hash_hex, saved.chain_hash_hex
        )),
        None => Some(format!("position {} is missing from the log", saved.global_position)),
    })
}
