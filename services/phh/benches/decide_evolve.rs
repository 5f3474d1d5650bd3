//! decide + evolve throughput over the 10,000 Pluribus hands, single thread (= per core).
//!
//! Rerun: `cargo bench -p chipledger-phh --bench decide_evolve`
//! (data from `../shared/phh/pluribus`, or `$CHIPLEDGER_PHH_DIR/pluribus`).
//!
//! Set-up (not measured): parse every hand and convert it to commands once. Measured:
//! `decide_evolve` judges and applies every command of every hand on fresh stream states;
//! `baseline_clone_commands` only clones each command and context (the floor any replay
//! pays to hand commands over). A chip movement is an event with postings.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chipledger_phh::replay::run;
use chipledger_phh::{Conversion, Streams, convert, find_hand_files, load_file};
use chipledger_rules::{Action, Command, TableOp};
use criterion::{Criterion, criterion_group, criterion_main};

const RERUN: &str = "cargo bench -p chipledger-phh --bench decide_evolve";
const GOAL_MOVEMENTS_PER_SECOND: f64 = 1_000_000.0;

fn pluribus_dir() -> PathBuf {
    let base = match std::env::var_os("CHIPLEDGER_PHH_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/phh"),
    };
    base.join("pluribus")
}

struct Workload {
    conversions: Vec<Conversion>,
    commands: u64,
    movements: u64,
}

fn load_workload(dir: &Path) -> Workload {
    let mut files = Vec::new();
    find_hand_files(dir, &mut files).expect("readable Pluribus folder");
    let mut conversions = Vec::with_capacity(files.len());
    for file in &files {
        for hand in load_file(file).into_iter().flatten() {
            if let Ok(conversion) = convert(&hand) {
                conversions.push(conversion);
            }
        }
    }
    let commands = conversions.iter().map(|c| c.steps.len() as u64).sum();
    // Movements per pass, counted once (every pass replays the same commands).
    let movements = replay_all(&conversions).expect("every converted Pluribus hand replays");
    Workload { conversions, commands, movements }
}

fn replay_all(conversions: &[Conversion]) -> Result<u64, String> {
    let mut movements = 0;
    for conversion in conversions {
        let mut streams = Streams::default();
        movements += run(conversion, &mut streams).map_err(|rejected| format!("{}: {rejected}", conversion.table_id))? as u64;
        black_box(&streams);
    }
    Ok(movements)
}

/// Label of a command for the per-kind breakdown.
fn kind_of(command: &Command) -> &'static str {
    match command {
        Command::Cage(_) => "cage (open)",
        Command::Player(_) => "player",
        Command::Table(table) => match &table.op {
            TableOp::OpenTable { .. } => "table: open",
            TableOp::Fill { .. } => "table: fill",
            TableOp::SeatPlayer { .. } => "table: seat",
            TableOp::BuyIn { .. } => "table: buy-in (cash)",
            TableOp::StartHand { .. } => "hand: start",
            TableOp::Post { .. } => "hand: post",
            TableOp::Act { action: Action::Fold, .. } => "hand: fold",
            TableOp::Act { action: Action::Check | Action::Call, .. } => "hand: check/call",
            TableOp::Act { .. } => "hand: bet/raise/all-in",
            TableOp::NextRound { .. } => "hand: next round",
            TableOp::Showdown { .. } => "hand: showdown",
            TableOp::EndHand => "hand: end",
            _ => "table: other",
        },
    }
}

/// One untimed-by-criterion pass that times each command kind (Instant adds ~20-30 ns per
/// command, so the sum exceeds a criterion pass): where decide+evolve spends its time.
fn breakdown(conversions: &[Conversion]) {
    let mut by_kind: BTreeMap<&'static str, (Duration, u64, u64)> = BTreeMap::new();
    for conversion in conversions {
        let mut streams = Streams::default();
        for step in &conversion.steps {
            let kind = kind_of(&step.command);
            let start = Instant::now();
            let moved = streams.apply(&step.context, &step.command).expect("replays");
            let elapsed = start.elapsed();
            let entry = by_kind.entry(kind).or_default();
            entry.0 += elapsed;
            entry.1 += 1;
            entry.2 += moved as u64;
        }
    }
    let total: Duration = by_kind.values().map(|entry| entry.0).sum();
    println!("--- breakdown by command kind (one timed pass) ---");
    for (kind, (time, count, moved)) in &by_kind {
        println!(
            "{kind:24} {count:>8} commands {moved:>8} movements {:>7.0} ns/command {:>5.1}% of time",
            time.as_nanos() as f64 / *count as f64,
            100.0 * time.as_secs_f64() / total.as_secs_f64().max(f64::MIN_POSITIVE),
        );
    }
}

fn clone_all(conversions: &[Conversion]) {
    for conversion in conversions {
        for step in &conversion.steps {
            black_box((step.context.clone(), step.command.clone()));
        }
    }
}

/// Runs `pass` under criterion and also returns the mean seconds per pass it measured.
fn measure(c: &mut Criterion, name: &str, pass: impl Fn()) -> f64 {
    let total = Cell::new((Duration::ZERO, 0u64));
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                pass();
            }
            let elapsed = start.elapsed();
            let (sum, count) = total.get();
            total.set((sum + elapsed, count + iters));
            elapsed
        })
    });
    let (sum, count) = total.get();
    sum.as_secs_f64() / count.max(1) as f64
}

fn bench(c: &mut Criterion) {
    let dir = pluribus_dir();
    if !dir.is_dir() {
        println!("SKIPPED decide_evolve: Pluribus hands not found at {} (set CHIPLEDGER_PHH_DIR)", dir.display());
        return;
    }
    let workload = load_workload(&dir);
    let hands = workload.conversions.len();
    println!(
        "decide_evolve workload: {hands} hands, {} commands, {} chip movements per pass",
        workload.commands, workload.movements
    );
    let decide_seconds = measure(c, "decide_evolve/pluribus", || {
        replay_all(&workload.conversions).expect("replays");
    });
    let clone_seconds = measure(c, "baseline_clone_commands/pluribus", || clone_all(&workload.conversions));
    let per_second = |count: u64, seconds: f64| count as f64 / seconds.max(f64::MIN_POSITIVE);
    let movements_per_second = per_second(workload.movements, decide_seconds);
    println!("--- results (one thread = per core) ---");
    println!(
        "decide+evolve: {:.1} ms per pass, {:.0} chip movements/s per core, {:.0} commands/s, {:.0} hands/s",
        decide_seconds * 1e3,
        movements_per_second,
        per_second(workload.commands, decide_seconds),
        per_second(hands as u64, decide_seconds),
    );
    println!(
        "baseline (clone commands, no decide): {:.1} ms per pass, {:.0} commands/s; decide+evolve costs {:.1}x the clone",
        clone_seconds * 1e3,
        per_second(workload.commands, clone_seconds),
        decide_seconds / clone_seconds.max(f64::MIN_POSITIVE),
    );
    println!(
        "goal >= {GOAL_MOVEMENTS_PER_SECOND:.0} movements/s per core: {}",
        if movements_per_second >= GOAL_MOVEMENTS_PER_SECOND { "MET" } else { "NOT MET" }
    );
    breakdown(&workload.conversions);
    println!("rerun: {RERUN}");
}

fn config() -> Criterion {
    Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(10))
}

criterion_group! { name = benches; config = config(); targets = bench }
criterion_main!(benches);
