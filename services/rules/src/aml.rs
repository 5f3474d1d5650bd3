//! Anti-money-laundering aggregation per patron per gaming day (R-AUDIT-4).
//!
//! Cash in and cash out are summed separately, never netted. Each cash transaction over the
//! MTL threshold (default $3,000) goes to the multiple transaction log; the first time a day's
//! total in either direction goes over the CTR threshold (default $10,000) a currency
//! transaction report is required (due within 15 days). Thresholds are configuration.

use serde::{Deserialize, Serialize};

use crate::money::Cents;
use crate::rejection::{Reason, Rejection};

/// A cash transaction dated on a gaming day before the patron's latest one (an import dated
/// back): a day's totals are kept in order, so one patron's cash is never split across days
/// after the fact to keep each under the CTR threshold.
pub const CASH_DAY_OUT_OF_ORDER: Reason = Reason::new("CASH_DAY_OUT_OF_ORDER", "R-AUDIT-4");

pub const REASONS: &[Reason] = &[CASH_DAY_OUT_OF_ORDER];

/// Direction of a cash transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CashDirection {
    In,
    Out,
}

/// Property-wide AML thresholds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AmlThresholds {
    /// A single transaction strictly over this goes to the MTL.
    pub mtl_over_cents: Cents,
    /// A day's total strictly over this requires a CTR.
    pub ctr_over_cents: Cents,
    pub ctr_due_days: u32,
}

impl Default for AmlThresholds {
    fn default() -> AmlThresholds {
        AmlThresholds { mtl_over_cents: 300_000, ctr_over_cents: 1_000_000, ctr_due_days: 15 }
    }
}

/// A patron's cash totals for one gaming day.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CashDay {
    pub gaming_day: String,
    pub cash_in_cents: Cents,
    pub cash_out_cents: Cents,
    pub ctr_in_required: bool,
    pub ctr_out_required: bool,
}

impl CashDay {
    /// The totals as seen on `gaming_day` (a new day starts from zero).
    pub fn on(&self, gaming_day: &str) -> CashDay {
        if self.gaming_day == gaming_day {
            self.clone()
        } else {
            CashDay { gaming_day: gaming_day.to_string(), ..CashDay::default() }
        }
    }

    /// `gaming_day` by reference (copied on a new day) or owned (moved in).
    pub(crate) fn record<D: AsRef<str> + Into<String>>(&mut self, gaming_day: D, direction: CashDirection, amount_cents: Cents, ctr_required: bool) {
        if self.gaming_day != gaming_day.as_ref() {
            *self = CashDay { gaming_day: gaming_day.into(), ..CashDay::default() };
        }
        match direction {
            CashDirection::In => {
                self.cash_in_cents = self.cash_in_cents.saturating_add(amount_cents);
                self.ctr_in_required |= ctr_required;
            }
            CashDirection::Out => {
                self.cash_out_cents = self.cash_out_cents.saturating_add(amount_cents);
                self.ctr_out_required |= ctr_required;
            }
        }
    }

    /// R-AUDIT-1: cash recorded on `gaming_day` taken back by a correction (another day's
    /// totals are not held here); with `ctr_rearmed` the next crossing requires a CTR again.
    pub(crate) fn take_back(&mut self, gaming_day: &str, direction: CashDirection, amount_cents: Cents, ctr_rearmed: bool) {
        if self.gaming_day != gaming_day {
            return;
        }
        let (total, required) = match direction {
            CashDirection::In => (&mut self.cash_in_cents, &mut self.ctr_in_required),
            CashDirection::Out => (&mut self.cash_out_cents, &mut self.ctr_out_required),
        };
        *total -= amount_cents;
        *required &= !ctr_rearmed;
    }
}

/// The largest cash total of one patron in one direction on one gaming day: a thousand times the
/// largest amount, well inside the integers JSON readers hold exactly (2^53).
pub const MAX_DAY_TOTAL_CENTS: Cents = 1_000 * crate::money::MAX_AMOUNT_CENTS;

/// The AML record of one cash transaction: (mtl_entry, ctr_required, day_total_cents).
pub fn assess(day: &CashDay, gaming_day: &str, direction: CashDirection, amount_cents: Cents, t: &AmlThresholds) -> (bool, bool, Cents) {
    // `day.on(gaming_day)` without copying it: another day's totals count as zero.
    let (before, already) = match (day.gaming_day == gaming_day, direction) {
        (false, _) => (0, false),
        (true, CashDirection::In) => (day.cash_in_cents, day.ctr_in_required),
        (true, CashDirection::Out) => (day.cash_out_cents, day.ctr_out_required),
    };
    // Saturating: a day's total past the amount range is over every threshold anyway.
    let after = before.saturating_add(amount_cents);
    let mtl = amount_cents > t.mtl_over_cents;
    // The first transaction that finds the day's total over the threshold in force requires the
    // report, whatever the total was before (the cage pass: a threshold lowered below a total
    // already reached had never required one that day).
    let ctr = !already && after > t.ctr_over_cents;
    (mtl, ctr, after)
}

/// The player event recording a cash transaction; refused on a gaming day before the patron's
/// latest cash day ([`CASH_DAY_OUT_OF_ORDER`]).
pub fn cash_event(
    player: &crate::player::PlayerState,
    gaming_day: &str,
    direction: CashDirection,
    amount_cents: Cents,
    t: &AmlThresholds,
) -> Result<crate::player::PlayerEvent, Rejection> {
    let latest = player.cash_day.gaming_day.as_str();
    // `YYYY-MM-DD` texts order as the days do.
    if !latest.is_empty() && gaming_day < latest {
        let day_number = |day: &str| day.replace('-', "").parse::<Cents>().unwrap_or(0);
        return Err(Rejection::new(CASH_DAY_OUT_OF_ORDER, format!("the patron's cash is already counted on gaming day {latest}: a cash transaction dated {gaming_day} would count apart from it"))
            .with("gaming_day", day_number(gaming_day))
            .with("latest_gaming_day", day_number(latest))
            .with("amount_cents", amount_cents));
    }
    let (mtl_entry, ctr_required, day_total_cents) = assess(&player.cash_day, gaming_day, direction, amount_cents, t);
    // R-UNIT-1: a day's total stays an amount every reader holds exactly (the cage pass: past
    // 2^53 the patron's cash was refused for the rest of the day as the caller's bad request).
    if day_total_cents > MAX_DAY_TOTAL_CENTS {
        return Err(Rejection::new(crate::money::AMOUNT_TOO_LARGE, "the patron's cash total for the gaming day would pass the largest total kept")
            .with("day_total_cents", day_total_cents)
            .with("max_day_total_cents", MAX_DAY_TOTAL_CENTS)
            .with("amount_cents", amount_cents));
    }
    Ok(crate::player::PlayerEvent::CashTransaction {
        gaming_day: gaming_day.to_string(),
        direction,
        amount_cents,
        mtl_entry,
        ctr_required,
        day_total_cents,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_audit_4_in_and_out_never_netted_and_ctr_once() {
        let t = AmlThresholds::default();
        let mut day = CashDay::default();
        let cases = [
            (CashDirection::In, 400_000, true, false, 400_000),
            (CashDirection::Out, 900_000, true, false, 900_000),
            (CashDirection::In, 200_000, false, false, 600_000),
            (CashDirection::In, 500_000, true, true, 1_100_000),
            (CashDirection::In, 500_000, true, false, 1_600_000),
            (CashDirection::Out, 200_000, false, true, 1_100_000),
        ];
        for (dir, amount, mtl, ctr, total) in cases {
            let got = assess(&day, "2026-01-02", dir, amount, &t);
            assert_eq!(got, (mtl, ctr, total), "{dir:?} {amount}");
            day.record("2026-01-02", dir, amount, got.1);
        }
        // A new gaming day starts from zero.
        assert_eq!(assess(&day, "2026-01-03", CashDirection::In, 100, &t), (false, false, 100));
    }

    /// R-AUDIT-4 (the cage pass): with the threshold lowered below a total already reached, the
    /// next transaction requires the report.
    #[test]
    fn r_audit_4_a_ctr_once_over_the_threshold_in_force() {
        let mut day = CashDay::default();
        let got = assess(&day, "2026-01-02", CashDirection::In, 800_000, &AmlThresholds::default());
        assert_eq!(got, (true, false, 800_000));
        day.record("2026-01-02", CashDirection::In, 800_000, got.1);
        let lowered = AmlThresholds { ctr_over_cents: 500_000, ..AmlThresholds::default() };
        let got = assess(&day, "2026-01-02", CashDirection::In, 100_000, &lowered);
        assert_eq!(got, (false, true, 900_000));
        day.record("2026-01-02", CashDirection::In, 100_000, got.1);
        assert_eq!(assess(&day, "2026-01-02", CashDirection::In, 100_000, &lowered), (false, false, 1_000_000), "once a day");
    }
}
