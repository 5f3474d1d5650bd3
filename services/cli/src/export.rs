//! `chipledger export`: events of the log (optionally filtered) to CSV or JSON lines, read page
//! by page with a progress bar. Every field the server gives of an event is kept: position,
//! stream and version, ids, the whole metadata (an import's importer and time too), postings,
//! payload and chain hash. The chain itself is recomputed by `chipledger verify` (the hash
//! covers the stored forms, which the export does not repeat byte for byte).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use chipledger_proto::v1 as pb;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::audit::{MAX_PAGES, PAGE_SIZE, event_json};
use crate::connect::{Client, rpc_error};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Csv,
    Jsonl,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[arg(long, value_enum)]
    format: Format,
    /// Output file (default: standard output).
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long, default_value = "")]
    table: String,
    #[arg(long, default_value = "")]
    player: String,
    /// Stream id, e.g. cage-MAIN.
    #[arg(long, default_value = "")]
    stream: String,
    /// Gaming day (YYYY-MM-DD).
    #[arg(long, default_value = "")]
    day: String,
    /// Only these event types (comma-separated).
    #[arg(long, value_delimiter = ',')]
    types: Vec<String>,
    /// First global position to export.
    #[arg(long, default_value_t = 1)]
    from_position: i64,
}

/// Every field of an event the server gives, metadata whole (the auditor's pass: the device,
/// the correction's reason note, who imported it and when it happened had been left out, so an
/// imported row read as the historic actor acting today in the importer's role).
const CSV_HEADER: [&str; 21] = [
    "global_position",
    "stream_id",
    "stream_version",
    "event_id",
    "event_type",
    "recorded_at_unix_ms",
    "gaming_day",
    "actor_id",
    "actor_role",
    "command_id",
    "hash_hex",
    "postings",
    "payload_json",
    "schema_version",
    "config_version",
    "device",
    "reason_note",
    "correlation_id",
    "trace_id",
    "imported_by",
    "occurred_at_unix_ms",
];

fn csv_row(event: &pb::RecordedEvent) -> [String; 21] {
    let metadata = event.metadata.clone().unwrap_or_default();
    let postings: Vec<String> = event.postings.iter().map(|p| format!("{}:{}", p.account, p.amount_cents)).collect();
    [
        event.global_position.to_string(),
        event.stream_id.clone(),
        event.stream_version.to_string(),
        event.event_id.clone(),
        event.event_type.clone(),
        event.recorded_at_unix_ms.to_string(),
        metadata.gaming_day,
        metadata.actor_id,
        crate::audit::role_text(metadata.actor_role).to_string(),
        metadata.command_id,
        event.hash_hex.clone(),
        postings.join(";"),
        event.payload_json.clone(),
        event.schema_version.to_string(),
        metadata.config_version.to_string(),
        metadata.device.unwrap_or_default(),
        metadata.reason_note,
        metadata.correlation_id,
        metadata.trace_id,
        metadata.imported_by.unwrap_or_default(),
        metadata.occurred_at_unix_ms.map(|at| at.to_string()).unwrap_or_default(),
    ]
}

pub async fn export(client: &mut Client, args: ExportArgs) -> anyhow::Result<ExitCode> {
    let sink: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let sink = std::io::BufWriter::new(sink);
    // The head position bounds the progress bar (the filter may select fewer).
    let head = crate::audit::chain_head(client).await?;
    let progress = if args.out.is_some() { ProgressBar::new(head.global_position.max(0) as u64) } else { ProgressBar::hidden() };
    progress.set_style(
        ProgressStyle::with_template("{bar:40} position {pos}/{len}, {per_sec}").unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut csv_writer = None;
    let mut jsonl_writer = None;
    match args.format {
        Format::Csv => {
            let mut writer = csv::Writer::from_writer(sink);
            writer.write_record(CSV_HEADER)?;
            csv_writer = Some(writer);
        }
        Format::Jsonl => jsonl_writer = Some(sink),
    }
    let filter = pb::EventFilter {
        stream_id: args.stream.clone(),
        player_id: args.player.clone(),
        table_id: args.table.clone(),
        event_types: args.types.clone(),
        time_range: None,
        gaming_day: args.day.clone(),
        from_position: args.from_position,
    };
    let mut token = String::new();
    let mut exported: u64 = 0;
    for _ in 0..MAX_PAGES {
        let reply = client
            .ledger
            .list_events(pb::ListEventsRequest {
                property_id: client.property_id.clone(),
                filter: Some(filter.clone()),
                page: Some(pb::PageRequest { page_size: PAGE_SIZE, page_token: token.clone() }),
            })
            .await
            .map_err(|status| rpc_error("listing events", &status))?
            .into_inner();
        for event in &reply.events {
            if let Some(writer) = csv_writer.as_mut() {
                // Cells a spreadsheet would run as formulas (a reason note or device typed as
                // `=HYPERLINK(..)`) are defused as the console's CSVs are; JSON lines are exact.
                writer.write_record(csv_row(event).iter().map(|field| chipledger_rules::words::spreadsheet_safe(field).into_owned()))?;
            }
            if let Some(writer) = jsonl_writer.as_mut() {
                serde_json::to_writer(&mut *writer, &event_json(event))?;
                writer.write_all(b"\n")?;
            }
            exported += 1;
            progress.set_position(event.global_position.max(0) as u64);
        }
        match reply.page.map(|page| page.next_page_token).filter(|token| !token.is_empty()) {
            Some(next) => token = next,
            None => break,
        }
    }
    if let Some(mut writer) = csv_writer {
        writer.flush()?;
    }
    if let Some(mut writer) = jsonl_writer {
        writer.flush()?;
    }
    progress.finish_and_clear();
    if let Some(path) = &args.out {
        eprintln!("exported {exported} events to {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
