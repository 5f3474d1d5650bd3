//! How results are shown: human-readable tables (comfy-table) by default, one JSON document
//! per result with `--json` for scripts. Money is printed from integer cents (R-UNIT-1,
//! [`crate::amount::money`]), times in the property's zone with their offset
//! ([`crate::clock::PropertyClock::show`]).
//!
//! Standard output may be a pipe its reader closes early (`chipledger export | head -1`): the
//! process then ends quietly, as any Unix filter does, in this one place ([`end_quietly_on_closed_pipe`])
//! rather than in every command (also for writers: [`is_closed_pipe`]).

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

pub use crate::amount::money;

#[derive(Debug, Clone, Copy, Default)]
pub struct Output {
    pub json: bool,
}

impl Output {
    pub fn table(&self, headers: &[&str]) -> Table {
        let mut table = Table::new();
        table.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
        table.set_header(headers.iter().copied());
        table
    }
}

/// A write to a closed pipe ends the process quietly with exit 0. The Rust runtime ignores
/// SIGPIPE (so that sockets report EPIPE instead of killing the process), which makes
/// `println!` panic with "failed printing to stdout: Broken pipe": that one panic is turned into
/// a quiet exit here; every other panic keeps the default report.
pub fn end_quietly_on_closed_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or_default();
        if message.starts_with("failed printing to std") && message.contains(&closed_pipe_text()) {
            std::process::exit(0);
        }
        report(info);
    }));
}

/// How the standard library words EPIPE ("Broken pipe (os error 32)").
fn closed_pipe_text() -> String {
    std::io::Error::from_raw_os_error(libc::EPIPE).to_string()
}

/// True when `error` is a write to a closed pipe, from a plain, JSON or CSV writer: nothing
/// more can be shown, and there is nothing wrong to report.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    error.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == BrokenPipe)
            || cause.downcast_ref::<serde_json::Error>().is_some_and(|json| json.io_error_kind() == Some(BrokenPipe))
            || cause
                .downcast_ref::<csv::Error>()
                .is_some_and(|csv| matches!(csv.kind(), csv::ErrorKind::Io(io) if io.kind() == BrokenPipe))
    })
}
