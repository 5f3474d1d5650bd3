//! Measured figures of one run and their rendering as the Markdown table of BENCHMARKS.md.

use std::fmt::Write as _;
use std::time::Duration;

use super::usage::CpuSample;

/// Latencies in microseconds (every call kept: bounded by the planned calls).
#[derive(Debug, Default, Clone)]
pub struct Latencies {
    micros: Vec<u32>,
    sorted: bool,
}

impl Latencies {
    pub fn with_capacity(capacity: usize) -> Latencies {
        Latencies { micros: Vec::with_capacity(capacity), sorted: false }
    }

    pub fn record(&mut self, elapsed: Duration) {
        self.micros.push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
        self.sorted = false;
    }

    pub fn merge(&mut self, other: Latencies) {
        self.micros.extend(other.micros);
        self.sorted = false;
    }

    pub fn len(&self) -> usize {
        self.micros.len()
    }

    /// The `quantile` (0..=1) in milliseconds, nearest rank; 0 when empty.
    pub fn quantile_ms(&mut self, quantile: f64) -> f64 {
        if self.micros.is_empty() {
            return 0.0;
        }
        if !self.sorted {
            self.micros.sort_unstable();
            self.sorted = true;
        }
        let rank = ((quantile * self.micros.len() as f64).ceil() as usize).clamp(1, self.micros.len());
        f64::from(self.micros[rank - 1]) / 1000.0
    }
}

/// One measured run (a mode at a table count, or its baseline).
pub struct Run {
    pub label: String,
    pub tables: usize,
    pub hands: u64,
    /// RPCs (server modes) or transactions (baselines).
    pub calls: u64,
    pub events: u64,
    pub movements: u64,
    pub elapsed: Duration,
    pub latencies: Latencies,
    pub cpu: CpuSample,
}

impl Run {
    fn rate(&self, count: u64) -> f64 {
        count as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub fn hands_per_second(&self) -> f64 {
        self.rate(self.hands)
    }

    pub fn movements_per_second(&self) -> f64 {
        self.rate(self.movements)
    }

    pub fn events_per_second(&self) -> f64 {
        self.rate(self.events)
    }

    pub fn calls_per_second(&self) -> f64 {
        self.rate(self.calls)
    }

    fn cpu_per_movement_us(&self, cpu: Option<Duration>) -> String {
        self.per_movement_us(cpu).map_or_else(|| "n/a".into(), |us| format!("{us:.0}"))
    }

    fn per_movement_us(&self, cpu: Option<Duration>) -> Option<f64> {
        cpu.filter(|_| self.movements > 0).map(|cpu| cpu.as_secs_f64() * 1e6 / self.movements as f64)
    }

    /// CPU of the process and of PostgreSQL together per chip movement, in microseconds (None
    /// when PostgreSQL's processes are not visible).
    pub fn total_cpu_per_movement_us(&self) -> Option<f64> {
        self.per_movement_us(self.cpu.postgres.map(|postgres| postgres + self.cpu.process))
    }
}

/// A server run beside its baseline.
pub struct Pair {
    pub server: Run,
    pub baseline: Run,
    pub mode: super::drive::Mode,
    /// Offered commands per second of a paced run (both sides); None for closed loop.
    pub rate: Option<f64>,
}

pub fn markdown_table(pairs: &mut [Pair]) -> String {
    let mut out = String::new();
    out.push_str(
        "| run | tables | hands/s | movements/s | events/s | calls/s | p50 ms | p99 ms | p99.9 ms | CPU us/movement (bench process) | CPU us/movement (PostgreSQL) | vs baseline |\n",
    );
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for pair in pairs.iter_mut() {
        let ratio = pair.server.events_per_second() / pair.baseline.events_per_second().max(1e-9);
        let ratio = if pair.rate.is_some() { "paced".to_owned() } else { format!("{:.0}%", 100.0 * ratio) };
        for (run, ratio) in [(&mut pair.server, ratio), (&mut pair.baseline, "100%".into())] {
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} | {} | {} | {} |",
                run.label,
                run.tables,
                run.hands_per_second(),
                run.movements_per_second(),
                run.events_per_second(),
                run.calls_per_second(),
                run.latencies.quantile_ms(0.50),
                run.latencies.quantile_ms(0.99),
                run.latencies.quantile_ms(0.999),
                run.cpu_per_movement_us(Some(run.cpu.process)),
                run.cpu_per_movement_us(run.cpu.postgres),
                ratio,
            );
        }
    }
    out
}
