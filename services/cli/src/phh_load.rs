//! `chipledger phh load PATH...`: records PHH hands through a running `chipledgerd`, the same
//! commands `phh replay` judges offline (`chipledger_phh::convert`: cage, table opened with the
//! hand's stakes, fill, seats and buy-ins, every post and action, the showdown ranking), then
//! reads the final stacks back from the server (`GetTable`), compares them with
//! `finishing_stacks`, cashes every player out, and at the end verifies the hash chain.
//!
//! Each hand gets its own table id, unique per run (`<run>-<n>-<hand>`), so loading the same
//! files twice records them twice instead of colliding. By default a hand is one `RecordBatch`
//! (atomic); `--live` sends one RPC per command, like a dealer's terminal would.
//! The caller needs a principal allowed to open cages and tables (admin or system). The fill
//! that stocks each table and the buy-ins at or above the supervisor threshold are signed by
//! real second persons (`--floor-token`, `--cage-token`; R-CHIP-3, R-CHIP-2): the conversion's
//! placeholder names are replaced by the approvers who approve each command.
//!
//! A hand history is the past: every command is sent as an import (R-AUDIT-2), its actor
//! `phh-import` and its time the hand's date and time as the file gives them (`year`, `month`,
//! `day`, `time`, `time_zone`: the first of a month or day it leaves out, midnight without a
//! time, UTC without a zone), or the time of the load when it names no year. The events record
//! the caller beside it (`imported_by`), and the buy-ins' cash counts on the hand's own gaming
//! day (R-AUDIT-4), not on the day it was loaded. The patrons are made per table
//! (`<table>.p<n>`): the names in a file are not this room's patrons.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use chipledger_phh::{Conversion, ConvertError, HandHistory, PhhError, load_file};
use chipledger_proto::command_to_wire;
use chipledger_proto::v1 as pb;
use chipledger_rules::TableId;
use clap::Args;
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use pb::command::Command as Wire;

use crate::approvals::{ApproverTokens, Approvers, named_fields};
use crate::connect::{Client, Refusal, ServerArgs, describe_status, rpc_error};
use crate::phh::{Outcome, Tally};
use crate::send::{Header, Import, send_batch, send_stamped, stamp};

/// Most commands in one `RecordBatch` (the server's default `limits.max_batch_commands`).
const MAX_BATCH_COMMANDS: usize = 1_000;
/// Most hands in flight at once.
const MAX_JOBS: usize = 64;

/// Every variant code of the PHH specification. A code outside it is bad input (a typo or
/// not a PHH file), unlike a real variant this ledger does not replay.
const PHH_VARIANTS: &[&str] = &["FT", "NT", "NS", "PO", "FO/8", "F7S", "F7S/8", "FR", "N2L1D", "F2L3D", "FB"];

fn unknown_variant(error: &PhhError) -> bool {
    matches!(error, PhhError::Unsupported { variant, .. } if !PHH_VARIANTS.contains(&variant.as_str()))
}

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// `.phh`/`.phhs` files, or folders searched recursively for them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Print one line per hand.
    #[arg(long, short)]
    verbose: bool,
    /// One RPC per command instead of one batch per hand.
    #[arg(long)]
    live: bool,
    /// Hands recorded concurrently (each on its own table).
    #[arg(long, default_value_t = 4)]
    jobs: usize,
    /// Record at most this many hands (in path order).
    #[arg(long)]
    limit: Option<usize>,
    /// When the hands whose file names no date were played: "2026-12-01 08:03" in the
    /// property's zone, RFC 3339 with an offset, or Unix ms (default: the time of the load).
    #[arg(long)]
    played_at: Option<String>,
    #[command(flatten)]
    approvers: ApproverTokens,
}

/// The actor every loaded command names (the caller is recorded beside it as `imported_by`).
const IMPORT_ACTOR: &str = "phh-import";

/// When `hand` was played, Unix ms (see the module's header); `undated_at` when the file names
/// no year (`None`: the time it is recorded). A date or zone that does not exist, a time before
/// 1970 or after now is an error.
fn played_at(hand: &HandHistory, undated_at: Option<i64>, now_unix_ms: i64) -> Result<Option<i64>, String> {
    let Some(on) = &hand.played_on else { return Ok(undated_at) };
    let (hour, minute, second) = on.time.unwrap_or((0, 0, 0));
    // Each is within its type: the parser bounds them (year 1..=9999, the rest 0..=59 or less).
    let civil = jiff::civil::DateTime::new(on.year as i16, on.month as i8, on.day as i8, hour as i8, minute as i8, second as i8, 0)
        .map_err(|error| format!("the file's date: {error}"))?;
    let zone = match &on.time_zone {
        None => jiff::tz::TimeZone::UTC,
        Some(name) => jiff::tz::TimeZone::get(name).map_err(|error| format!("time_zone {name:?}: {error}"))?,
    };
    let at = civil.to_zoned_datetime(zone).map_err(|error| format!("the file's date: {error}"))?.timestamp().as_millisecond();
    if !(0..=now_unix_ms).contains(&at) {
        return Err(format!("played at {at} (Unix ms): an import records 1970 to now"));
    }
    Ok(Some(at))
}

/// The table id of the `seq`-th hand of a run: `<run>-<seq>-<hand>`, within the id bounds
/// (the conversion appends `.cage` and `.pN` to it).
fn table_id(run_tag: &str, seq: usize, hand: &HandHistory) -> anyhow::Result<TableId> {
    let base = chipledger_phh::convert::table_id_for(hand);
    let base = base.as_str().trim_start_matches("phh-");
    let mut id = format!("{run_tag}-{seq}-{base}");
    id.truncate(chipledger_rules::streams::MAX_ID_LEN - 6);
    TableId::new(id.clone()).map_err(|rejection| anyhow::anyhow!("table id {id:?}: {}", rejection.detail))
}

pub async fn run(args: LoadArgs, server: &ServerArgs, client: Client) -> anyhow::Result<ExitCode> {
    let approvers = Approvers::connect(server, &args.approvers.tokens(), 0).await?;
    let mut files = Vec::new();
    for path in &args.paths {
        crate::phh::collect_files(path, &mut files)?;
    }
    let mut summary = Tally::default();
    let mut hands = Vec::new();
    for file in &files {
        for parsed in load_file(file) {
            match parsed {
                Ok(hand) => hands.push(hand),
                Err(error) if unknown_variant(&error) => {
                    summary.malformed += 1;
                    eprintln!("error: {error} (not a PHH variant code)");
                }
                Err(error) if error.is_unsupported() => {
                    summary.count(None, &Outcome::Unsupported(error.to_string()), 0);
                    if args.verbose {
                        println!("unsupported {error}");
                    }
                }
                Err(error) => {
                    summary.malformed += 1;
                    eprintln!("error: {error}");
                }
            }
        }
    }
    if let Some(limit) = args.limit {
        hands.truncate(limit);
    }
    let undated_at = match &args.played_at {
        None => None,
        Some(text) => {
            let mut client = client.clone();
            let at = crate::clock::PropertyClock::fetch(&mut client).await?.parse(text)?;
            if !(0..=jiff::Timestamp::now().as_millisecond()).contains(&at) {
                bail!("--played-at {text}: an import records 1970 to now");
            }
            Some(at)
        }
    };
    let run_tag = format!("ld{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let jobs = args.jobs.clamp(1, MAX_JOBS);
    let progress = ProgressBar::new(hands.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} hands, {per_sec}, eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let live = args.live;
    let mut outcomes = futures::stream::iter(hands.iter().enumerate())
        .map(|(seq, hand)| {
            let mut client = client.clone();
            let mut approvers = approvers.clone();
            let run_tag = run_tag.as_str();
            async move { (hand, load_hand(&mut client, &mut approvers, run_tag, seq, hand, undated_at, live).await) }
        })
        .buffered(jobs);
    while let Some((hand, outcome)) = outcomes.next().await {
        let outcome = outcome?;
        progress.inc(1);
        summary.count(Some(hand.variant), &outcome, 0);
        if outcome.shown(args.verbose) {
            progress.suspend(|| println!("{}", outcome.line(&hand.origin, "loaded")));
        }
    }
    drop(outcomes);
    progress.finish_and_clear();

    let mut client = client;
    let verified = crate::audit::verify_chain(&mut client).await?;
    if verified.ok {
        println!(
            "chain verified: {} events, head position {} hash {}",
            verified.events_checked, verified.head.global_position, verified.head.chain_hash_hex
        );
    } else {
        println!("CHAIN BROKEN: {}", verified.problem);
    }
    summary.print("loaded");
    Ok(summary.exit_code(!verified.ok))
}

/// A refusal becomes the hand's outcome; anything else (transport, invalid request) stops the load.
fn refused(what: &str, status: &tonic::Status) -> anyhow::Result<Outcome> {
    match Refusal::from_status(status) {
        Some(refusal) => Ok(Outcome::Rejected(format!("{what}: {refusal}"))),
        None => bail!("{what}: {}", describe_status(status)),
    }
}

/// Sends `commands` as batches (or one by one with `live`); `Some(outcome)` on a refusal.
/// Commands with second-person fields are approved first (entries of a batch under their
/// entry ids, `<batch id>/<index>`).
async fn record(
    client: &mut Client,
    approvers: &mut Approvers,
    command_id: &str,
    import: &Import,
    commands: Vec<(Option<u32>, Wire)>,
    live: bool,
) -> anyhow::Result<Option<Outcome>> {
    let property_id = client.property_id.clone();
    let header_of = |command_id: String| Header { import: Some(import.clone()), ..Header::new(command_id, &property_id) };
    if live {
        for (index, (line, mut command)) in commands.into_iter().enumerate() {
            let kind = command.message_name();
            let header = header_of(format!("{command_id}-{index}"));
            stamp(&mut command, &header);
            let fields = named_fields(&command);
            approvers.approve_and_attach(&mut command, &fields, &header.command_id, &property_id, Some(import)).await?;
            if let Err(status) = send_stamped(client, command).await {
                let at = line.map_or_else(|| format!("command {index} ({kind})"), |line| format!("line {line} ({kind})"));
                return refused(&at, &status).map(Some);
            }
        }
        return Ok(None);
    }
    let mut rest = commands;
    let mut chunk_no = 0;
    while !rest.is_empty() {
        let tail = rest.split_off(rest.len().min(MAX_BATCH_COMMANDS));
        let mut chunk = std::mem::replace(&mut rest, tail);
        let lines: Vec<(Option<u32>, &'static str)> =
            chunk.iter().map(|(line, command)| (*line, command.message_name())).collect();
        let header = header_of(format!("{command_id}-b{chunk_no}"));
        for (index, (_, command)) in chunk.iter_mut().enumerate() {
            let entry_id = chipledger_proto::entry_command_id(&header.command_id, index);
            let fields = named_fields(command);
            approvers.approve_and_attach(command, &fields, &entry_id, &property_id, Some(import)).await?;
        }
        if let Err(status) = send_batch(client, &header, chunk.into_iter().map(|(_, command)| command).collect()).await {
            // The server names the refused command's index in the batch.
            let index = status
                .metadata()
                .get("x-chipledger-command-index")
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.parse::<usize>().ok());
            let at = match index.and_then(|index| lines.get(index).map(|entry| (index, entry))) {
                Some((_, (Some(line), kind))) => format!("line {line} ({kind})"),
                Some((index, (None, kind))) => format!("command {index} ({kind})"),
                None => "batch".to_string(),
            };
            return refused(&at, &status).map(Some);
        }
        chunk_no += 1;
    }
    Ok(None)
}

async fn load_hand(
    client: &mut Client,
    approvers: &mut Approvers,
    run_tag: &str,
    seq: usize,
    hand: &HandHistory,
    undated_at: Option<i64>,
    live: bool,
) -> anyhow::Result<Outcome> {
    let table_id = table_id(run_tag, seq, hand)?;
    let now_unix_ms = jiff::Timestamp::now().as_millisecond();
    let occurred_at_unix_ms = match played_at(hand, undated_at, now_unix_ms) {
        Ok(at) => at,
        Err(reason) => return Ok(Outcome::Unsupported(reason)),
    };
    let import = Import { actor_id: IMPORT_ACTOR.to_owned(), occurred_at_unix_ms };
    let conversion: Conversion = match chipledger_phh::convert::convert_at(hand, table_id.clone()) {
        Ok(conversion) => conversion,
        Err(ConvertError::Unsupported { reason, .. }) => return Ok(Outcome::Unsupported(reason)),
    };
    let command_id = format!("{table_id}-hand");
    let mut commands: Vec<(Option<u32>, Wire)> = Vec::with_capacity(conversion.steps.len());
    for step in &conversion.steps {
        match command_to_wire(&step.command) {
            // The conversion's placeholder signers and supervisors give way to real approvers
            // (`record`).
            Ok(wire) => commands.push((step.line, wire)),
            // A rules operation the API cannot carry: the hand cannot be loaded through it.
            Err(error) => return Ok(Outcome::Unsupported(format!("{error:#}"))),
        }
    }
    if let Some(outcome) = record(client, approvers, &command_id, &import, commands, live).await? {
        return Ok(outcome);
    }

    // The final stacks, as the server holds them.
    let view = client
        .table
        .get_table(pb::GetTableRequest { property_id: client.property_id.clone(), table_id: table_id.to_string(), as_of: None })
        .await
        .map_err(|status| rpc_error(&format!("reading table {table_id}"), &status))?
        .into_inner();
    let stack_of = |seat: u32| view.seats.iter().find(|view| view.seat == seat);
    let outcome = match &conversion.expected_finishing_cents {
        None => Outcome::NotCompared,
        Some(expected) => {
            let mut diffs = Vec::new();
            for (index, (&seat, expected_cents)) in conversion.seats.iter().zip(expected).enumerate() {
                // A stack the file did not know is not compared.
                let Some(expected_cents) = *expected_cents else { continue };
                let got_cents = stack_of(u32::from(seat)).map_or(0, |view| view.stack_cents);
                if got_cents != expected_cents {
                    diffs.push(format!("p{} expected {expected_cents} got {got_cents} cents", index + 1));
                }
            }
            if diffs.is_empty() { Outcome::Matched } else { Outcome::Mismatched(diffs.join("; ")) }
        }
    };

    // Everyone leaves with their whole stack (R-STAKE-2).
    let cash_outs: Vec<(Option<u32>, Wire)> = conversion
        .seats
        .iter()
        .filter_map(|&seat| stack_of(u32::from(seat)))
        .filter(|view| !view.player_id.is_empty())
        .map(|view| {
            let command = Wire::CashOut(pb::CashOut {
                header: None,
                table_id: table_id.to_string(),
                seat: view.seat,
                player_id: view.player_id.clone(),
            });
            (None, command)
        })
        .collect();
    if !cash_outs.is_empty()
        && let Some(refusal) = record(client, approvers, &format!("{table_id}-out"), &import, cash_outs, live).await?
    {
        return Ok(refusal);
    }
    Ok(outcome)
}
