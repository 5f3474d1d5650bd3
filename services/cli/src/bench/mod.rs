//! `chipledger bench`: throughput, latency and CPU of chipledgerd on real hands, beside the
//! physical baseline (the same rows, plain INSERTs, same PostgreSQL, same transaction
//! granularity), plus the rules core alone, report rebuild, Subscribe catch-up and lag, and
//! chain verification. Prints a Markdown report (docs/BENCHMARKS.md) and the command to rerun.
//!
//! Figures only: no goal is asserted; each is printed as MET / NOT MET.

mod drive;
mod figures;
mod profile;
mod target;
mod usage;
mod workload;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use chipledger_store::Store;
use chipledger_store::report::TableDayReport;
use clap::Args;

use drive::Mode;
use figures::{Latencies, Pair};
use target::Target;

/// Largest table count accepted (each is one connection and one task).
const MAX_TABLES: usize = 256;
/// Most hands per run (bound on memory: every call's latency is kept).
const MAX_HANDS: usize = 10_000;
/// Validity asked for the approvals of a run (obtained before it; the server's maximum).
const MAX_APPROVAL_TTL_SECONDS: u32 = 3_600;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Bench the chipledgerd at the global --server, whose PostgreSQL this superuser URL
    /// names (baseline tables, settings). Without it, a chipledgerd (--chipledgerd) is started
    /// on a fresh PostgreSQL (fsync on) and removed afterwards.
    #[arg(long)]
    database_url: Option<String>,
    /// The chipledgerd binary to start without --database-url (default: the one beside this
    /// executable).
    #[arg(long)]
    chipledgerd: Option<PathBuf>,
    /// Concurrent tables (dealers) per run, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    tables: Vec<usize>,
    /// Pluribus hands per run (each table count runs every mode with this many hands).
    #[arg(long, default_value_t = 200)]
    hands: usize,
    /// PHH data directory (holds pluribus/).
    #[arg(long, env = "CHIPLEDGER_PHH_DIR", default_value = "../shared/phh")]
    phh_dir: PathBuf,
    /// Closed-loop modes run at each table count, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "live,stream,batch")]
    modes: Vec<Mode>,
    /// Paced live runs (open loop): commands offered per second in total, comma separated;
    /// each runs on --paced-tables tables beside a plain-INSERT baseline paced the same way.
    #[arg(long, value_delimiter = ',', default_value = "250,1000")]
    rates: Vec<u32>,
    /// Tables (dealers) sharing the offered rate of a paced run.
    #[arg(long, default_value_t = 64)]
    paced_tables: usize,
    /// Load pg_stat_statements in the embedded PostgreSQL and print, per server run, the
    /// statements that took its time (nested statements of the append function included).
    #[arg(long)]
    profile_sql: bool,
    /// Minimum seconds of the rules-core measurement.
    #[arg(long, default_value_t = 3)]
    core_seconds: u64,
    /// Also write the Markdown report to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    approvers: crate::approvals::ApproverTokens,
}

/// One measured run and how it is named in the report.
struct Spec {
    tables: usize,
    mode: Mode,
    rate: Option<f64>,
    tag: String,
    label: String,
}

fn specs(args: &BenchArgs) -> Vec<Spec> {
    let mut specs = Vec::new();
    for &tables in &args.tables {
        for &mode in &args.modes {
            let (tag, label) = match mode {
                Mode::Live => (format!("live{tables}"), format!("live, 1 RPC per command, {tables} tables")),
                Mode::Stream => (format!("stream{tables}"), format!("stream, 1 RecordStream per table, {tables} tables")),
                Mode::Batch => (format!("batch{tables}"), format!("batch, 1 RecordBatch per hand, {tables} tables")),
            };
            specs.push(Spec { tables, mode, rate: None, tag, label });
        }
    }
    for &rate in args.rates.iter().filter(|&&rate| rate > 0) {
        let tables = args.paced_tables;
        specs.push(Spec {
            tables,
            mode: Mode::Live,
            rate: Some(f64::from(rate)),
            tag: format!("paced{rate}x{tables}"),
            label: format!("live paced at {rate} commands/s, {tables} tables"),
        });
    }
    specs
}

pub async fn run(args: BenchArgs, server_args: &crate::connect::ServerArgs) -> anyhow::Result<ExitCode> {
    let server_url = server_args.server.as_str();
    if args.tables.iter().chain([&args.paced_tables]).any(|&t| t == 0 || t > MAX_TABLES) {
        bail!("--tables and --paced-tables: each count must be 1..={MAX_TABLES}");
    }
    if specs(&args).is_empty() {
        bail!("nothing to run: give --tables with --modes, or --rates");
    }
    if args.profile_sql && args.database_url.is_some() {
        bail!("--profile-sql needs the embedded PostgreSQL (load pg_stat_statements on yours and read it there)");
    }
    if args.hands == 0 || args.hands > MAX_HANDS {
        bail!("--hands must be 1..={MAX_HANDS}");
    }
    let server = args.database_url.as_ref().map(|_| server_url.to_owned());
    if server.is_some() && server_args.property.is_empty() {
        bail!("an external chipledgerd: name the property it serves for the bench with --property");
    }
    let report = bench(&args, server.as_deref(), &server_args.property).await?;
    println!("{report}");
    if let Some(path) = &args.out {
        std::fs::write(path, &report).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn rerun_command(args: &BenchArgs, server: Option<&str>) -> String {
    let tables: Vec<String> = args.tables.iter().map(usize::to_string).collect();
    let modes: Vec<String> =
        args.modes.iter().filter_map(clap::ValueEnum::to_possible_value).map(|value| value.get_name().to_owned()).collect();
    let rates: Vec<String> = args.rates.iter().map(u32::to_string).collect();
    let mut command = format!(
        "chipledger bench --tables {} --modes {} --rates {} --paced-tables {} --hands {} --phh-dir {} --core-seconds {}",
        tables.join(","),
        modes.join(","),
        rates.join(","),
        args.paced_tables,
        args.hands,
        args.phh_dir.display(),
        args.core_seconds
    );
    if args.profile_sql {
        command.push_str(" --profile-sql");
    }
    if let Some(server) = server {
        let _ = write!(command, " --server {server} --property \"$BENCH_PROPERTY\" --database-url \"$BENCH_DATABASE_URL\"");
    }
    command
}

async fn bench(args: &BenchArgs, server: Option<&str>, external_property: &str) -> anyhow::Result<String> {
    let hands = workload::load_hands(&args.phh_dir, args.hands)?;
    eprintln!("bench: {} Pluribus hands loaded from {}", hands.len(), args.phh_dir.display());
    let run_id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let (target, property) = match (server, &args.database_url) {
        (Some(server), Some(url)) => (Target::external(server, url).await?, external_property.to_owned()),
        _ => {
            let property = format!("bench-{run_id}");
            let chipledgerd = target::chipledgerd_path(args.chipledgerd.as_deref())?;
            (Target::embedded(args.profile_sql, &property, &chipledgerd).await?, property)
        }
    };
    let outcome = measure(args, server, &hands, &target, &run_id, &property).await;
    let closed = target.close().await;
    if let (Err(_), Err(error)) = (&outcome, &closed) {
        eprintln!("bench: also, stopping the target failed: {error:#}");
    }
    let report = outcome?;
    closed?;
    Ok(report)
}

async fn measure(
    args: &BenchArgs,
    server: Option<&str>,
    hands: &[chipledger_phh::HandHistory],
    target: &Target,
    run_id: &str,
    property: &str,
) -> anyhow::Result<String> {
    let machine = target::describe(&target.admin).await?;
    // Fills and large buy-ins are signed by second persons (R-CHIP-3, R-CHIP-2): their
    // approvals are obtained before each run, outside the measured time.
    let approver_server = crate::connect::ServerArgs::plain(&target.grpc_url, property);
    let mut approvers = crate::approvals::Approvers::connect(&approver_server, &args.approvers.tokens(), MAX_APPROVAL_TTL_SECONDS)
        .await
        .context("the bench's approvers")?;
    drive::prepare_baseline_tables(&target.admin).await?;

    let mut pairs = Vec::new();
    let mut lags: Vec<(String, Latencies)> = Vec::new();
    let mut profiles = String::new();
    for spec in specs(args) {
        // Table ids carry the run id: runs against one external server never collide.
        let mut plan = workload::plan(hands, spec.tables, &format!("{run_id}{}", spec.tag), property, run_id)?;
        workload::approve(&mut plan, &mut approvers, property).await?;
        let from = drive::head(&target.admin, property).await?;
        let probe = drive::LagProbe::start(&target.grpc_url, property, from).await?;
        eprintln!("bench: {}: {} hands, {} commands ...", spec.label, plan.hands, plan.commands);
        if args.profile_sql {
            profile::reset(&target.admin).await?;
        }
        let server = drive::server_run(target, plan, spec.mode, spec.rate, &spec.label, property).await?;
        if args.profile_sql {
            let (statements, toplevel_ms) = profile::read(&target.admin).await?;
            profiles.push_str(&profile::markdown(&spec.label, &statements, toplevel_ms, server.movements));
        }
        let to = drive::head(&target.admin, property).await?;
        if (to - from) as u64 != server.events {
            bail!("{}: replies name {} events, the log grew by {}", spec.label, server.events, to - from);
        }
        lags.push((spec.label.clone(), probe.finish(to).await?));
        eprintln!("bench: {}: baseline ...", spec.label);
        let base_property = format!("{property}.base.{}", spec.tag);
        let baseline = drive::baseline(target, property, (from, to), spec.rate, &base_property, &server).await?;
        if baseline.movements != server.movements {
            bail!("{}: {} movements planned, {} found in the log", spec.label, server.movements, baseline.movements);
        }
        pairs.push(Pair { server, baseline, mode: spec.mode, rate: spec.rate });
    }

    let head = drive::head(&target.admin, property).await?;
    eprintln!("bench: read paths over {head} events ...");
    let (caught_up, catch_up_time) = drive::catch_up(&target.grpc_url, property, head).await?;
    let store = Store::connect(&target.admin_url).await?;
    let started = Instant::now();
    let rebuilt = TableDayReport::rebuild(&store, property).await?;
    let rebuild_time = started.elapsed();
    store.pool().close().await;
    let (verified, verify_time) = drive::verify_chain(&target.grpc_url, property).await?;
    eprintln!("bench: rules core ...");
    let core = workload::rules_core(hands, Duration::from_secs(args.core_seconds))?;

    let mut out = String::new();
    let _ = writeln!(out, "## Figures\n");
    let _ = writeln!(out, "Command: `{}`\n", rerun_command(args, server));
    let server_kind = if target.server_pid.is_some() { "embedded (chipledgerd child process, fresh LocalCluster)" } else { "external" };
    let _ = writeln!(out, "Server: {server_kind}; property `{property}`; {} hands per run.\n", hands.len());
    let _ = writeln!(out, "| machine / PostgreSQL | value |\n|---|---|");
    for (name, value) in &machine {
        let _ = writeln!(out, "| {name} | {value} |");
    }
    let _ = writeln!(out);
    out.push_str(&figures::markdown_table(&mut pairs));
    let _ = writeln!(out);
    let process = if target.server_pid.is_some() { "bench client + server" } else { "bench client only" };
    let _ = writeln!(
        out,
        "CPU columns: `{process}` (getrusage, /proc) and PostgreSQL (postmaster + children via /proc), per chip movement. \
         Latency is per RPC (server runs) or per transaction (baselines). `vs baseline` compares events/s.\n"
    );
    let _ = writeln!(out, "| read path / core | events | seconds | events/s |\n|---|---:|---:|---:|");
    let rate = |count: u64, time: Duration| count as f64 / time.as_secs_f64().max(1e-9);
    let _ = writeln!(out, "| Subscribe catch-up from 0 | {caught_up} | {:.3} | {:.0} |", catch_up_time.as_secs_f64(), rate(caught_up, catch_up_time));
    let _ = writeln!(out, "| report rebuild from 0 (TableDayReport) | {rebuilt} | {:.3} | {:.0} |", rebuild_time.as_secs_f64(), rate(rebuilt as u64, rebuild_time));
    let _ = writeln!(out, "| VerifyChain | {verified} | {:.3} | {:.0} |", verify_time.as_secs_f64(), rate(verified, verify_time));
    let core_rate = rate(core.movements, core.elapsed);
    let _ = writeln!(
        out,
        "| rules core decide+evolve, 1 thread ({} passes, {} commands) | {} movements | {:.3} | {:.0} movements/s |",
        core.passes,
        core.commands,
        core.movements,
        core.elapsed.as_secs_f64(),
        core_rate
    );
    let _ = writeln!(out, "\n| live subscription lag (delivery - recorded_at) | events | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|");
    let mut worst_lag_p99: f64 = 0.0;
    for (label, lag) in &mut lags {
        let p99 = lag.quantile_ms(0.99);
        worst_lag_p99 = worst_lag_p99.max(p99);
        let _ = writeln!(out, "| during {label} | {} | {:.0} | {:.0} | {:.0} |", lag.len(), lag.quantile_ms(0.5), p99, lag.quantile_ms(1.0));
    }

    if !profiles.is_empty() {
        let _ = writeln!(
            out,
            "\n## Where PostgreSQL's time goes (pg_stat_statements, per server run)\n\n\
             Nested statements run inside the top-level ones (the append function's statements inside \
             `chipledger_append`), so shares do not add up to 100%."
        );
        out.push_str(&profiles);
    }
    let _ = writeln!(out, "\n## Goals\n");
    let verdict = |met: bool| if met { "MET" } else { "NOT MET" };
    // Throughput and CPU against the baseline are closed-loop questions: a paced run carries
    // what is offered (or falls behind), so its ratio says nothing about capacity.
    for pair in pairs.iter_mut().filter(|pair| pair.rate.is_none()) {
        let ratio = pair.server.events_per_second() / pair.baseline.events_per_second().max(1e-9);
        let goal = match pair.mode {
            Mode::Stream => 0.6,
            Mode::Live | Mode::Batch => 0.5,
        };
        let _ = writeln!(
            out,
            "- {} at >= {:.0}% of its baseline: {:.0}% {}",
            pair.server.label,
            100.0 * goal,
            100.0 * ratio,
            verdict(ratio >= goal)
        );
        if let (Some(server), Some(baseline)) = (pair.server.total_cpu_per_movement_us(), pair.baseline.total_cpu_per_movement_us()) {
            let times = server / baseline.max(1e-9);
            let _ = writeln!(
                out,
                "- {}: CPU per chip movement (process + PostgreSQL) <= 2x its baseline's: {server:.0} against {baseline:.0} us, {times:.2}x {}",
                pair.server.label,
                verdict(times <= 2.0)
            );
        }
    }
    for pair in pairs.iter_mut() {
        let Some(offered) = pair.rate else { continue };
        let achieved = pair.server.calls_per_second();
        let p99 = pair.server.latencies.quantile_ms(0.99);
        // The schedule is kept when the run carried what was offered, 5% short at most (both
        // sides play the same calls paced the same way).
        let baseline_calls = pair.baseline.calls_per_second();
        let kept = achieved >= 0.95 * baseline_calls;
        let label = &pair.server.label;
        if offered >= 1_000.0 {
            let baseline_p99 = pair.baseline.latencies.quantile_ms(0.99);
            let _ = writeln!(
                out,
                "- {label}: the schedule kept ({achieved:.0} calls/s, the baseline {baseline_calls:.0}) and p99 <= 2x the baseline's: {p99:.2} against {baseline_p99:.2} ms {}",
                verdict(kept && p99 <= 2.0 * baseline_p99)
            );
        } else if offered <= 250.0 {
            let _ = writeln!(
                out,
                "- {label}: the schedule kept ({achieved:.0} calls/s, the baseline {baseline_calls:.0}) and p99 <= 10 ms: {p99:.2} ms {}",
                verdict(kept && p99 <= 10.0)
            );
        }
    }
    let _ = writeln!(out, "- rules core >= 1,000,000 movements/s per core: {core_rate:.0} {}", verdict(core_rate >= 1e6));
    let catch_up_rate = rate(caught_up, catch_up_time);
    let rebuild_rate = rate(rebuilt as u64, rebuild_time);
    let verify_rate = rate(verified, verify_time);
    let _ = writeln!(out, "- catch-up >= 100,000 events/s: {catch_up_rate:.0} {}", verdict(catch_up_rate >= 1e5));
    let _ = writeln!(out, "- rebuild >= 100,000 events/s: {rebuild_rate:.0} {}", verdict(rebuild_rate >= 1e5));
    let _ = writeln!(out, "- chain verification >= 200,000 events/s: {verify_rate:.0} {}", verdict(verify_rate >= 2e5));
    let _ = writeln!(out, "- subscription lag p99 <= 50 ms in every run: worst {worst_lag_p99:.0} ms {}", verdict(worst_lag_p99 <= 50.0));
    let _ = writeln!(out, "\nRerun: `{}`", rerun_command(args, server));
    Ok(out)
}
