//! `chipledger phh replay PATH...`: replays PHH hands offline through the rules core
//! (decide + evolve, no server) and compares the final stacks with `finishing_stacks`.
//!
//! Output: one line per hand with `--verbose`, malformed files on stderr, and always the
//! counts per variant, the rake the ledger recorded, and the summary
//! `hands: N, matched: M, mismatched: X, unsupported: U, rejected: R`. Exit code 0 when
//! nothing mismatched or was rejected, 1 otherwise, 2 for bad input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use std::collections::BTreeMap;

use chipledger_phh::{ReplayOutcome, Variant, load_file, replay_report};
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

/// How one hand ended, offline (`phh replay`) or through the server (`phh load`).
pub(crate) enum Outcome {
    Matched,
    NotCompared,
    Mismatched(String),
    Unsupported(String),
    Rejected(String),
}

impl Outcome {
    /// The hand's line; `verb` says what happened to a hand without finishing_stacks.
    pub(crate) fn line(&self, label: &str, verb: &str) -> String {
        match self {
            Outcome::Matched => format!("matched {label}"),
            Outcome::NotCompared => format!("{verb} {label} (no finishing_stacks to compare)"),
            Outcome::Mismatched(diffs) => format!("MISMATCHED {label}: {diffs}"),
            Outcome::Unsupported(reason) => format!("unsupported {label}: {reason}"),
            Outcome::Rejected(reason) => format!("REJECTED {label}: {reason}"),
        }
    }

    /// Mismatches and rejections are always worth a line; the rest only with --verbose.
    pub(crate) fn shown(&self, verbose: bool) -> bool {
        verbose || matches!(self, Outcome::Mismatched(_) | Outcome::Rejected(_))
    }
}

/// Outcome counts of a set of hands.
#[derive(Default, Clone, Copy)]
struct Counts {
    hands: u64,
    matched: u64,
    mismatched: u64,
    unsupported: u64,
    rejected: u64,
    not_compared: u64,
    /// Hands with rake, and the rake the ledger recorded (R-RAKE-1).
    raked_hands: u64,
    rake_cents: i64,
}

impl Counts {
    fn count(&mut self, outcome: &Outcome, rake_cents: i64) {
        self.hands += 1;
        match outcome {
            Outcome::Matched => self.matched += 1,
            Outcome::NotCompared => self.not_compared += 1,
            Outcome::Mismatched(_) => self.mismatched += 1,
            Outcome::Unsupported(_) => self.unsupported += 1,
            Outcome::Rejected(_) => self.rejected += 1,
        }
        self.raked_hands += u64::from(rake_cents > 0);
        self.rake_cents += rake_cents;
    }

    fn add(&mut self, other: &Counts) {
        self.hands += other.hands;
        self.matched += other.matched;
        self.mismatched += other.mismatched;
        self.unsupported += other.unsupported;
        self.rejected += other.rejected;
        self.not_compared += other.not_compared;
        self.raked_hands += other.raked_hands;
        self.rake_cents += other.rake_cents;
    }
}

/// Counts of the summary line, per variant, plus malformed files (reported on stderr).
#[derive(Default)]
pub(crate) struct Tally {
    total: Counts,
    /// By PHH variant code; hands whose variant could not be read count under `?`.
    by_variant: BTreeMap<&'static str, Counts>,
    pub(crate) malformed: u64,
}

/// Summary order of the variant codes (the PHH specification's), unknown last.
fn variant_order(code: &str) -> usize {
    Variant::ALL.iter().position(|v| v.code() == code).unwrap_or(Variant::ALL.len())
}

impl Tally {
    /// One hand; `variant` is `None` when the file's variant could not be read.
    pub(crate) fn count(&mut self, variant: Option<Variant>, outcome: &Outcome, rake_cents: i64) {
        self.total.count(outcome, rake_cents);
        let code = variant.map_or("?", Variant::code);
        self.by_variant.entry(code).or_default().count(outcome, rake_cents);
    }

    fn add(&mut self, other: &Tally) {
        self.total.add(&other.total);
        for (code, counts) in &other.by_variant {
            self.by_variant.entry(code).or_default().add(counts);
        }
        self.malformed += other.malformed;
    }

    /// Prints the counts per variant, the rake, and the summary, ending with `hands: N,
    /// matched: M, mismatched: X, unsupported: U, rejected: R`; `verb` as in [`Outcome::line`].
    pub(crate) fn print(&self, verb: &str) {
        let mut variants: Vec<(&&str, &Counts)> = self.by_variant.iter().collect();
        variants.sort_by_key(|(code, _)| variant_order(code));
        println!("{:<6} {:>6} {:>8} {:>10} {:>11} {:>8} {:>12} {:>14}", "variant", "hands", "matched", "mismatched", "unsupported", "rejected", "raked hands", "rake (cents)");
        for (code, c) in variants {
            println!(
                "{:<6} {:>6} {:>8} {:>10} {:>11} {:>8} {:>12} {:>14}",
                code, c.hands, c.matched, c.mismatched, c.unsupported, c.rejected, c.raked_hands, c.rake_cents
            );
        }
        let t = &self.total;
        println!("rake recorded: {} cents in {} hands", t.rake_cents, t.raked_hands);
        if t.not_compared > 0 {
            println!("{verb} without finishing_stacks (not compared): {}", t.not_compared);
        }
        if self.malformed > 0 {
            println!("malformed files: {}", self.malformed);
        }
        println!(
            "hands: {}, matched: {}, mismatched: {}, unsupported: {}, rejected: {}",
            t.hands, t.matched, t.mismatched, t.unsupported, t.rejected
        );
    }

    /// 2 for malformed input, 1 for a mismatch, a rejection or `failed`, else 0.
    pub(crate) fn exit_code(&self, failed: bool) -> ExitCode {
        if self.malformed > 0 {
            ExitCode::from(2)
        } else if self.total.mismatched > 0 || self.total.rejected > 0 || failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
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
    total.print("replayed");
    Ok(total.exit_code(false))
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
                report.tally.count(None, &Outcome::Unsupported(error.to_string()), 0);
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
        let replayed = replay_report(&hand);
        let outcome = match replayed.outcome {
            ReplayOutcome::Matched => Outcome::Matched,
            ReplayOutcome::NotCompared => Outcome::NotCompared,
            ReplayOutcome::Mismatched { stacks } => {
                let diffs: Vec<String> = stacks
                    .iter()
                    .map(|m| format!("{} expected {} got {} cents", m.player, m.expected_cents, m.got_cents))
                    .collect();
                Outcome::Mismatched(diffs.join("; "))
            }
            ReplayOutcome::Unsupported { reason } => Outcome::Unsupported(reason),
            ReplayOutcome::Rejected(rejected) => Outcome::Rejected(rejected.to_string()),
        };
        report.tally.count(Some(replayed.variant), &outcome, replayed.rake_cents);
        if outcome.shown(verbose) {
            report.lines.push(outcome.line(&hand.origin, "replayed"));
        }
    }
    report
}
