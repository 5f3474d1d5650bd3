//! `chipledger phh replay PATH...`: replays PHH hands offline through the rules core
//! (decide + evolve, no server) and compares the final stacks with `finishing_stacks`.
//!
//! Output: one line per hand with `--verbose`, malformed files on stderr, and always the
//! summary `hands: N, matched: M, mismatched: X, unsupported: U, rejected: R`. Exit code
//! 0 when nothing mismatched or was rejected, 1 otherwise, 2 for bad input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chipledger_phh::{ReplayOutcome, load_file, replay};
use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum PhhCommand {
    /// Replay hands offline through the rules core and check the finishing stacks.
    Replay(ReplayArgs),
}

#[derive(Args)]
pub struct ReplayArgs {
    /// `.phh`/`.phhs` files, or folders searched recursively for them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Print one line per hand.
    #[arg(long, short)]
    verbose: bool,
    /// Worker threads (default: the machine's available parallelism).
    #[arg(long)]
    threads: Option<usize>,
}

pub fn run(command: PhhCommand) -> anyhow::Result<ExitCode> {
    match command {
        PhhCommand::Replay(args) => replay_paths(&args),
    }
}

/// Counts of the summary line, plus malformed files (reported on stderr).
#[derive(Default)]
struct Tally {
    hands: u64,
    matched: u64,
    mismatched: u64,
    unsupported: u64,
    rejected: u64,
    not_compared: u64,
    malformed: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.hands += other.hands;
        self.matched += other.matched;
        self.mismatched += other.mismatched;
        self.unsupported += other.unsupported;
        self.rejected += other.rejected;
        self.not_compared += other.not_compared;
        self.malformed += other.malformed;
    }
}

/// What one file produced: its tally, the verbose lines and the error lines.
#[derive(Default)]
struct FileReport {
    tally: Tally,
    lines: Vec<String>,
    errors: Vec<String>,
}

fn replay_paths(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let mut files = Vec::new();
    for path in &args.paths {
        collect_files(path, &mut files)?;
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, 64);
    let chunk_len = files.len().div_ceil(threads).max(1);
    let chunks: Vec<Vec<FileReport>> = std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(chunk_len)
            .map(|chunk| scope.spawn(move || chunk.iter().map(|file| replay_file(file, args.verbose)).collect::<Vec<_>>()))
            .collect();
        // A worker that panicked would silently lose hands from the summary: fail instead.
        workers.into_iter().map(|worker| worker.join()).collect::<Result<_, _>>()
    })
    .map_err(|_| anyhow::anyhow!("internal error: a replay worker panicked; no summary printed"))?;
    let reports: Vec<FileReport> = chunks.into_iter().flatten().collect();
    let mut total = Tally::default();
    for report in &reports {
        for line in &report.lines {
            println!("{line}");
        }
        for error in &report.errors {
            eprintln!("error: {error}");
        }
        total.add(&report.tally);
    }
    if total.not_compared > 0 {
        println!("replayed without finishing_stacks (not compared): {}", total.not_compared);
    }
    if total.malformed > 0 {
        println!("malformed files: {}", total.malformed);
    }
    println!(
        "hands: {}, matched: {}, mismatched: {}, unsupported: {}, rejected: {}",
        total.hands, total.matched, total.mismatched, total.unsupported, total.rejected
    );
    Ok(if total.malformed > 0 {
        ExitCode::from(2)
    } else if total.mismatched > 0 || total.rejected > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The hand files named by `path` (a file, or a folder searched recursively).
pub(crate) fn collect_files(path: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    Ok(chipledger_phh::find_hand_files(path, files)?)
}

fn replay_file(file: &Path, verbose: bool) -> FileReport {
    let mut report = FileReport::default();
    for parsed in load_file(file) {
        let hand = match parsed {
            Ok(hand) => hand,
            Err(error) if error.is_unsupported() => {
                report.tally.hands += 1;
                report.tally.unsupported += 1;
                if verbose {
                    report.lines.push(format!("unsupported {error}"));
                }
                continue;
            }
            Err(error) => {
                report.tally.malformed += 1;
                report.errors.push(error.to_string());
                continue;
            }
        };
        report.tally.hands += 1;
        let outcome = replay(&hand);
        let label = &hand.origin;
        let line = match &outcome {
            ReplayOutcome::Matched => {
                report.tally.matched += 1;
                format!("matched {label}")
            }
            ReplayOutcome::NotCompared => {
                report.tally.not_compared += 1;
                format!("replayed {label} (no finishing_stacks to compare)")
            }
            ReplayOutcome::Mismatched { stacks } => {
                report.tally.mismatched += 1;
                let diffs: Vec<String> = stacks
                    .iter()
                    .map(|m| format!("{} expected {} got {} cents", m.player, m.expected_cents, m.got_cents))
                    .collect();
                format!("MISMATCHED {label}: {}", diffs.join("; "))
            }
            ReplayOutcome::Unsupported { reason } => {
                report.tally.unsupported += 1;
                format!("unsupported {label}: {reason}")
            }
            ReplayOutcome::Rejected(rejected) => {
                report.tally.rejected += 1;
                format!("REJECTED {label}: {rejected}")
            }
        };
        // Mismatches and rejections are always worth a line; the rest only with --verbose.
        if verbose || matches!(outcome, ReplayOutcome::Mismatched { .. } | ReplayOutcome::Rejected(_)) {
            report.lines.push(line);
        }
    }
    report
}
