//! Rake, jackpot drop and time collection (R-RAKE-1..3).

use crate::accounts::{Account, Posting};
use crate::config::{FeePolicy, TableConfig};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::Seat;
use crate::table::{TableEvent, TableState};

pub const TIME_COLLECTION_NOT_CONFIGURED: Reason = Reason::new("TIME_COLLECTION_NOT_CONFIGURED", "R-RAKE-3");
pub const TIME_FEE_EXCEEDS_STACK: Reason = Reason::new("TIME_FEE_EXCEEDS_STACK", "R-RAKE-3");
/// R-RAKE-3: time is paid once per interval, in advance.
pub const TIME_ALREADY_COLLECTED: Reason = Reason::new("TIME_ALREADY_COLLECTED", "R-RAKE-3");
/// R-RAKE-3: "paid in advance": a seat whose time is not paid is not dealt in.
pub const TIME_NOT_PAID: Reason = Reason::new("TIME_NOT_PAID", "R-RAKE-3");
pub const JACKPOT_FUND_INSUFFICIENT: Reason = Reason::new("JACKPOT_FUND_INSUFFICIENT", "R-RAKE-2");
pub const JACKPOT_PROMOTION_REQUIRED: Reason = Reason::new("JACKPOT_PROMOTION_REQUIRED", "R-RAKE-2");
/// R-RAKE-2: the jackpot fund is the players' money: a payout is approved by a second
/// supervisor (the cage pass: one floor supervisor paid the whole fund to an accomplice).
pub const JACKPOT_APPROVER_REQUIRED: Reason = Reason::new("JACKPOT_APPROVER_REQUIRED", "R-RAKE-2");
/// R-RAKE-2: "returned in full to players": the fund is paid to a player in the game, a seat
/// dealt a hand in this session (a seat taken without chips a moment before had been paid).
pub const JACKPOT_SEAT_NOT_DEALT: Reason = Reason::new("JACKPOT_SEAT_NOT_DEALT", "R-RAKE-2");

pub const REASONS: &[Reason] = &[
    TIME_NOT_PAID,
    TIME_COLLECTION_NOT_CONFIGURED,
    TIME_FEE_EXCEEDS_STACK,
    TIME_ALREADY_COLLECTED,
    JACKPOT_FUND_INSUFFICIENT,
    JACKPOT_PROMOTION_REQUIRED,
    JACKPOT_APPROVER_REQUIRED,
    JACKPOT_SEAT_NOT_DEALT,
];

/// Longest promotion name kept on a jackpot payout.
pub const MAX_PROMOTION_LEN: usize = 200;

/// R-RAKE-1: rake for each pot, given the rakeable amount of each pot (uncalled chips already
/// excluded): a percentage of the total, rounded down to the increment, capped, taken from the
/// main pot first. No flop, no drop.
pub fn rake_by_pot(fee: &FeePolicy, bases_cents: &[Cents], flop_seen: bool) -> Vec<Cents> {
    let mut out = vec![0; bases_cents.len()];
    rake_by_pot_into(fee, bases_cents, flop_seen, &mut out);
    out
}

/// [`rake_by_pot`] written into `out` (as long as `bases_cents`, zeroed by the caller).
pub(crate) fn rake_by_pot_into(fee: &FeePolicy, bases_cents: &[Cents], flop_seen: bool, out: &mut [Cents]) {
    let FeePolicy::Rake { percent_bps, increment_cents, cap_cents, no_flop_no_drop, min_pot_cents } = fee else {
        return;
    };
    if *no_flop_no_drop && !flop_seen {
        return;
    }
    let total: Cents = bases_cents.iter().sum();
    if total <= 0 || total < *min_pot_cents {
        return;
    }
    let raw = total * percent_bps / 10_000;
    let mut rake = (raw - raw % increment_cents).min(*cap_cents);
    for (i, base) in bases_cents.iter().enumerate() {
        let take = rake.min(*base);
        out[i] = take;
        rake -= take;
    }
}

/// R-RAKE-2: the jackpot drop from the main pot, after the rake, when the flop was seen.
pub fn jackpot_drop_cents(config: &TableConfig, main_pot_after_rake_cents: Cents, flop_seen: bool) -> Cents {
    match &config.jackpot_drop {
        Some(j) if flop_seen && main_pot_after_rake_cents >= j.min_pot_cents => j.amount_cents.min(main_pot_after_rake_cents),
        _ => 0,
    }
}

/// R-RAKE-3: time collection, paid in advance by each listed seat, between hands, once per
/// interval: a seat whose time is paid up to a moment after the command's time is refused.
pub fn decide_collect_time(table: &TableState, ctx: &crate::CommandContext, seats: &[Seat]) -> Result<TableEvent, Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    crate::ledger::between_hands(table)?;
    let FeePolicy::TimeCollection { fee_cents, interval_minutes } = &config.fee else {
        return Err(Rejection::new(TIME_COLLECTION_NOT_CONFIGURED, "this table takes rake, not time"));
    };
    let paid_until_unix_ms = ctx.at_unix_ms.saturating_add(i64::from(*interval_minutes) * 60_000);
    if seats.is_empty() || seats.len() > crate::MAX_SEATS {
        return Err(Rejection::new(crate::seating::INVALID_SEAT, "list 1 to 10 seats").with("seats", seats.len() as Cents));
    }
    let mut postings = Vec::with_capacity(seats.len() + 1);
    for (i, seat) in seats.iter().enumerate() {
        let s = crate::ledger::occupied(table, *seat)?;
        if seats[..i].contains(seat) {
            return Err(Rejection::new(crate::seating::INVALID_SEAT, "seat listed twice").with("seat", *seat as Cents));
        }
        if s.time_paid_until_unix_ms > ctx.at_unix_ms {
            return Err(Rejection::new(TIME_ALREADY_COLLECTED, "this seat's time is paid for the current interval")
                .with("seat", *seat as Cents)
                .with("paid_until_unix_ms", s.time_paid_until_unix_ms)
                .with("at_unix_ms", ctx.at_unix_ms));
        }
        // From chips: cash in play is cash until converted (R-STAKE-5; the fixes' pass took $5
        // of time from $100 of cash, and the conversion then paid $100 of chips for a $95 stack).
        if s.chips_cents() < *fee_cents {
            return Err(Rejection::new(TIME_FEE_EXCEEDS_STACK, "the stack's chips do not cover the time fee (cash in play is converted first)")
                .with("seat", *seat as Cents)
                .with("fee_cents", *fee_cents)
                .with("stack_cents", s.stack_cents)
                .with("cash_in_play_cents", s.cash_in_play_cents));
        }
        postings.push(Posting::new(Account::Seat { table_id: table_id.clone(), seat: *seat }, -fee_cents));
    }
    // R-MARK-3: the house takes chips, never the paper of an unpaid IOU.
    crate::iou::check_stays_on_table(table, fee_cents * seats.len() as Cents, 0)?;
    postings.push(Posting::new(Account::Rake { table_id: table_id.clone() }, fee_cents * seats.len() as Cents));
    Ok(TableEvent::TimeCollected { seats: seats.to_vec(), fee_cents: *fee_cents, postings, paid_until_unix_ms })
}

/// R-RAKE-2: the jackpot fund is the players' money: it is paid to a seated player (between
/// hands), for a named promotion, never beyond what the fund holds.
pub fn decide_pay_jackpot(
    table: &TableState,
    ctx: &crate::CommandContext,
    seat: Seat,
    amount_cents: Cents,
    promotion: &str,
    approved_by: &str,
) -> Result<TableEvent, Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    let s = crate::ledger::occupied(table, seat)?;
    crate::ledger::not_live_in_hand(table, seat)?;
    crate::money::check_positive("amount_cents", amount_cents)?;
    if promotion.trim().is_empty() || promotion.len() > MAX_PROMOTION_LEN {
        return Err(Rejection::new(JACKPOT_PROMOTION_REQUIRED, "a jackpot payout names its promotion (at most 200 bytes)"));
    }
    if approved_by.trim().is_empty() || approved_by == ctx.actor.id {
        return Err(Rejection::new(JACKPOT_APPROVER_REQUIRED, "a jackpot payout is approved by a second supervisor, not the caller"));
    }
    if !s.dealt_this_session() {
        return Err(Rejection::new(JACKPOT_SEAT_NOT_DEALT, "the jackpot is paid to a player dealt a hand at this seat, in this session")
            .with("seat", Cents::from(seat))
            .with("seated_at_stream_version", s.seated_at_version as Cents)
            .with("dealt_at_stream_version", s.dealt_at_version as Cents));
    }
    config.chip_set.check_playable("a jackpot payout", amount_cents)?;
    if amount_cents > table.jackpot_cents {
        return Err(Rejection::new(JACKPOT_FUND_INSUFFICIENT, "the jackpot fund does not hold that much")
            .with("amount_cents", amount_cents)
            .with("jackpot_cents", table.jackpot_cents));
    }
    let mut postings = Vec::with_capacity(2);
    crate::accounts::transfer(&mut postings, Account::Jackpot { table_id: table_id.clone() }, Account::Seat { table_id: table_id.clone(), seat }, amount_cents);
    Ok(TableEvent::JackpotPaid {
        seat,
        player_id: s.player_id.clone(),
        amount_cents,
        promotion: promotion.to_string(),
        approved_by: approved_by.to_string(),
        postings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rake10() -> FeePolicy {
        FeePolicy::Rake { percent_bps: 1000, increment_cents: 100, cap_cents: 500, no_flop_no_drop: true, min_pot_cents: 0 }
    }

    #[test]
    fn r_rake_1_table() {
        // (pots, flop seen, expected rake per pot)
        let cases: &[(&[Cents], bool, &[Cents])] = &[
            (&[2_000], true, &[200]),
            (&[1_990], true, &[100]),
            (&[10_000], true, &[500]),
            (&[10_000], false, &[0]),
            (&[300, 4_000], true, &[300, 100]),
            (&[0], true, &[0]),
        ];
        for (bases, flop, want) in cases {
            assert_eq!(rake_by_pot(&rake10(), bases, *flop), want.to_vec(), "{bases:?} flop={flop}");
        }
    }
}
