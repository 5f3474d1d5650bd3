//! decide + evolve throughput over the 10,000 Pluribus hands, single thread (= per core).
//!
//! Rerun: `cargo bench -p chipledger-phh --bench decide_evolve`
//! (data from `../shared/phh/pluribus`, or `$CHIPLEDGER_PHH_DIR/pluribus`).
//!
//! Set-up (not measured): parse every hand and convert it to commands once. Measured:
//! `decide_evolve` judges and applies every command of every hand on fresh stream states;
//! `baseline_clone_commands` only clones each command and context (the floor any replay
//! pays to hand commands over). A chip movement is an event with postings. Rates are given by
//! the wall clock and by this thread's on-CPU time (the machine is shared: under load the
//! wall clock also counts the time other processes held the core).
//!
//! Instructions per pass, independent of load: the set-up replays every hand once through
//! `replay::run` to count the movements, so `valgrind --tool=callgrind
//! --toggle-collect='chipledger_phh::replay::run' <bench binary> --bench no-such-bench`
//! counts exactly one pass (the filter skips the timed runs).

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
    // Fresh stream states for every hand (its own table); the replay's buffers carry over.
    let mut streams = Streams::default();
    for conversion in conversions {
        streams.clear();
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

/// On-CPU time of this thread so far (`/proc/thread-self/schedstat`, Linux), if readable.
fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok().map(Duration::from_nanos)
}

/// Mean seconds per pass: by the wall clock (what criterion reports), and on the CPU (the
/// time this thread actually ran; on a machine shared with other work the wall clock also
/// counts the time others held the core).
struct PerPass {
    wall: f64,
    on_cpu: Option<f64>,
}

/// Runs `pass` under criterion and also returns what a pass took on average (`None` when a
/// filter on the command line left it out).
fn measure(c: &mut Criterion, name: &str, pass: impl Fn()) -> Option<PerPass> {
    let total = Cell::new((Duration::ZERO, Some(Duration::ZERO), 0u64));
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let cpu_start = thread_cpu_time();
            let start = Instant::now();
            for _ in 0..iters {
                pass();
            }
            let elapsed = start.elapsed();
            let on_cpu = cpu_start.zip(thread_cpu_time()).map(|(before, after)| after.saturating_sub(before));
            let (wall, cpu, count) = total.get();
            total.set((wall + elapsed, cpu.zip(on_cpu).map(|(sum, more)| sum + more), count + iters));
            elapsed
        })
    });
    let (wall, cpu, count) = total.get();
    let per_pass = |sum: Duration| sum.as_secs_f64() / count as f64;
    (count > 0).then(|| PerPass { wall: per_pass(wall), on_cpu: cpu.map(per_pass) })
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
    let decide = measure(c, "decide_evolve/pluribus", || {
        replay_all(&workload.conversions).expect("replays");
    });
    let clone = measure(c, "baseline_clone_commands/pluribus", || clone_all(&workload.conversions));
    let (Some(decide), Some(clone)) = (decide, clone) else {
        println!("decide_evolve and its baseline were not both measured (filtered): no figures");
        return;
    };
    let (decide_seconds, clone_seconds) = (decide.wall, clone.wall);
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
    let met = |per_second: f64| if per_second >= GOAL_MOVEMENTS_PER_SECOND { "MET" } else { "NOT MET" };
    println!("goal >= {GOAL_MOVEMENTS_PER_SECOND:.0} movements/s per core (wall clock): {}", met(movements_per_second));
    if let (Some(decide_cpu), Some(clone_cpu)) = (decide.on_cpu, clone.on_cpu) {
        let on_cpu_per_second = per_second(workload.movements, decide_cpu);
        println!(
            "on-CPU (this thread's run time): decide+evolve {:.1} ms per pass = {:.0} chip movements/s per core \
             (ran {:.0}% of the wall time); clone baseline {:.1} ms per pass",
            decide_cpu * 1e3,
            on_cpu_per_second,
            100.0 * decide_cpu / decide_seconds.max(f64::MIN_POSITIVE),
            clone_cpu * 1e3,
        );
        println!("goal >= {GOAL_MOVEMENTS_PER_SECOND:.0} movements/s per core (on-CPU): {}", met(on_cpu_per_second));
    }
    breakdown(&workload.conversions);
    println!("rerun: {RERUN}");
}

fn config() -> Criterion {
    Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(10))
}

criterion_group! { name = benches; config = config(); targets = bench }
criterion_main!(benches);
