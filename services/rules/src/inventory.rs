//! Table inventory: the tray by denomination, chips paid out for cash, color changes, fills
//! and credits with slip numbers and two signers, and the shift close (R-CHIP-1, -3, -4).

use crate::accounts::{Account, HouseAccount, Posting};
use crate::cage::CageEvent;
use crate::money::{Cents, ChipCount};
use crate::rejection::{Reason, Rejection};
use crate::streams::{Seat, StreamId};
use crate::table::{Signers, TableCommand, TableEvent, TableOp, TableState};
use crate::{CommandContext, Event, Snapshot};

pub const TRAY_SHORT: Reason = Reason::new("TRAY_SHORT", "R-CHIP-1");
pub const COLOR_CHANGE_UNEQUAL: Reason = Reason::new("COLOR_CHANGE_UNEQUAL", "R-CHIP-1");
pub const COLOR_CHANGE_EXCEEDS_STACK: Reason = Reason::new("COLOR_CHANGE_EXCEEDS_STACK", "R-CHIP-1");
/// R-CHIP-1: a colour change gives chips of some denominations for chips of others; a
/// denomination on both sides exchanges nothing (the cage pass: $100 for $100 was recorded, and
/// counted in the day's chips issued and returned).
pub const COLOR_CHANGE_SAME_DENOMINATION: Reason = Reason::new("COLOR_CHANGE_SAME_DENOMINATION", "R-CHIP-1");
/// R-UNIT-2 with R-STAKE-1: a colour change leaves a seat at most one minimum playable chip's
/// worth of chips below it (tip chips), the change of a chip to tip with; more would take the
/// stake out of play without leaving the table (the seating pass: $195 of a $200 stack colored
/// into 25-cent chips played a hand for $5, then colored back).
pub const TIP_CHIPS_ABOVE_ONE_CHIP: Reason = Reason::new("TIP_CHIPS_ABOVE_ONE_CHIP", "R-UNIT-2");
pub const SLIP_OUT_OF_SEQUENCE: Reason = Reason::new("SLIP_OUT_OF_SEQUENCE", "R-CHIP-3");
pub const SIGNERS_NOT_DISTINCT: Reason = Reason::new("SIGNERS_NOT_DISTINCT", "R-CHIP-3");
/// A count names a denomination the table or cage does not use, or one twice.
pub const COUNT_INVALID: Reason = Reason::new("COUNT_INVALID", "R-CHIP-4");
/// R-CHIP-3 with R-CHIP-4: a credit of a denomination the cage does not use (its counts would
/// never cover it).
pub const CAGE_DENOMINATION_NOT_USED: Reason = Reason::new("CAGE_DENOMINATION_NOT_USED", "R-CHIP-3");

pub const SLIP_NOT_FOUND: Reason = Reason::new("SLIP_NOT_FOUND", "R-CHIP-3");
pub const SLIP_ALREADY_VOIDED: Reason = Reason::new("SLIP_ALREADY_VOIDED", "R-CHIP-3");
pub const VOID_REASON_REQUIRED: Reason = Reason::new("VOID_REASON_REQUIRED", "R-CHIP-3");
/// A slip of a shift counted and closed is in that count: it is not voided after (R-CHIP-4).
pub const SLIP_IN_COUNTED_SHIFT: Reason = Reason::new("SLIP_IN_COUNTED_SHIFT", "R-CHIP-4");

pub const REASONS: &[Reason] = &[
    CAGE_DENOMINATION_NOT_USED,
    SLIP_IN_COUNTED_SHIFT,
    TRAY_SHORT,
    COLOR_CHANGE_UNEQUAL,
    COLOR_CHANGE_EXCEEDS_STACK,
    COLOR_CHANGE_SAME_DENOMINATION,
    TIP_CHIPS_ABOVE_ONE_CHIP,
    SLIP_OUT_OF_SEQUENCE,
    SIGNERS_NOT_DISTINCT,
    COUNT_INVALID,
    SLIP_NOT_FOUND,
    SLIP_ALREADY_VOIDED,
    VOID_REASON_REQUIRED,
];

/// Chips from the tray for `amount_cents`, largest denominations first (R-CHIP-2), or `TRAY_SHORT`.
pub fn tray_payout(table: &TableState, amount_cents: Cents) -> Result<Vec<ChipCount>, Rejection> {
    let mut left = amount_cents;
    // At most one entry per denomination of the tray (one allocation, no regrowth).
    let mut out = Vec::with_capacity(table.tray.len());
    for c in table.tray.iter().rev() {
        if left <= 0 {
            break;
        }
        let n = (left / c.denomination_cents).min(c.count);
        if n > 0 {
            out.push(ChipCount { denomination_cents: c.denomination_cents, count: n });
            left -= n * c.denomination_cents;
        }
    }
    if left != 0 {
        return Err(Rejection::new(TRAY_SHORT, "the tray cannot pay this amount: a fill is needed")
            .with("amount_cents", amount_cents)
            .with("short_cents", left)
            .with("tray_cents", table.tray_value_cents()));
    }
    out.reverse();
    Ok(out)
}

fn tray_has(table: &TableState, chips: &[ChipCount]) -> Result<(), Rejection> {
    crate::money::check_holds(chips, |d| table.tray_count(d), TRAY_SHORT, "tray_count")
}

/// R-CHIP-1: a colour change (at a table or the cage) is of equal value both ways, and gives
/// chips of some denominations for chips of others.
pub fn check_exchange(give: &[ChipCount], give_cents: Cents, receive: &[ChipCount], receive_cents: Cents) -> Result<(), Rejection> {
    if give_cents != receive_cents {
        return Err(Rejection::new(COLOR_CHANGE_UNEQUAL, "a color change is of equal value")
            .with("give_cents", give_cents)
            .with("receive_cents", receive_cents));
    }
    if let Some(both) = give.iter().find(|g| receive.iter().any(|r| r.denomination_cents == g.denomination_cents)) {
        return Err(Rejection::new(COLOR_CHANGE_SAME_DENOMINATION, "a color change gives chips of some denominations for chips of others")
            .with("denomination_cents", both.denomination_cents));
    }
    Ok(())
}

/// R-CHIP-1: color up/down between a seated player and the tray, equal value both ways.
pub fn decide_color_change(table: &TableState, seat: Seat, give: &[ChipCount], receive: &[ChipCount]) -> Result<TableEvent, Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    let s = crate::ledger::occupied(table, seat)?;
    crate::ledger::not_live_in_hand(table, seat)?;
    let give_cents = crate::money::check_chips(&config.chip_set, give)?;
    let receive_cents = crate::money::check_chips(&config.chip_set, receive)?;
    check_exchange(give, give_cents, receive, receive_cents)?;
    // Chips only: cash in play is cash until converted (R-STAKE-5; the cage pass coloured $1,000
    // of cash in play into $25 chips, then converted the cash into chips again).
    if give_cents > s.chips_cents() {
        return Err(Rejection::new(COLOR_CHANGE_EXCEEDS_STACK, "a player colors up or down chips of the stack only, not cash in play")
            .with("give_cents", give_cents)
            .with("stack_cents", s.stack_cents)
            .with("cash_in_play_cents", s.cash_in_play_cents));
    }
    let min_chip = config.chip_set.min_playable_chip_cents;
    let small = |chips: &[ChipCount]| chips.iter().filter(|c| c.denomination_cents < min_chip).map(ChipCount::value_cents).sum::<Cents>();
    let tip_chips_after = s.tip_chips_cents.clamp(0, s.stack_cents.max(0)) + small(receive) - small(give);
    if small(receive) > 0 && tip_chips_after > min_chip {
        return Err(Rejection::new(TIP_CHIPS_ABOVE_ONE_CHIP, "chips below the minimum playable chip are change for one chip to tip with, not a stake out of play")
            .with("tip_chips_cents", tip_chips_after)
            .with("min_playable_chip_cents", min_chip));
    }
    // The tray must hold what it gives after taking what it receives.
    let incoming = |d: Cents| give.iter().filter(|g| g.denomination_cents == d).map(|g| g.count).sum::<i64>();
    crate::money::check_holds(receive, |d| table.tray_count(d) + incoming(d), TRAY_SHORT, "tray_count")?;
    let mut postings = Vec::with_capacity(give.len() + receive.len());
    for g in give {
        postings.push(Posting::new(Account::Tray { table_id: table_id.clone(), denomination_cents: g.denomination_cents }, g.value_cents()));
    }
    for r in receive {
        postings.push(Posting::new(Account::Tray { table_id: table_id.clone(), denomination_cents: r.denomination_cents }, -r.value_cents()));
    }
    Ok(TableEvent::ColorChanged { seat, give: give.to_vec(), receive: receive.to_vec(), postings })
}

/// R-CHIP-3: a slip carries two distinct, named signers.
pub fn check_signers(signers: &Signers) -> Result<(), Rejection> {
    distinct_signers(signers, SIGNERS_NOT_DISTINCT, "a slip carries two distinct signers")
}

/// R-CHIP-4: a count (a table's shift close, the cage's) is signed by two distinct people.
pub fn check_count_signers(signers: &Signers) -> Result<(), Rejection> {
    distinct_signers(signers, Reason::new(SIGNERS_NOT_DISTINCT.code, "R-CHIP-4"), "a count is signed by two distinct people")
}

fn distinct_signers(signers: &Signers, reason: Reason, what: &str) -> Result<(), Rejection> {
    let (a, b) = (signers.first.trim(), signers.second.trim());
    if a.is_empty() || b.is_empty() || a == b {
        return Err(Rejection::new(reason, what));
    }
    Ok(())
}

/// R-CHIP-3: a fill (cage to tray) or credit (tray to cage). Postings ride on the table event;
/// the cage event records the slip.
pub fn decide_slip(snapshot: &Snapshot, ctx: &CommandContext, table: &TableState, c: &TableCommand) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let mut out = Vec::with_capacity(2);
    decide_slip_into(snapshot, ctx, table, c, &mut out)?;
    Ok(out)
}

/// [`decide_slip`] appending the table's and the cage's event to `out` once every check
/// passed (a refusal appends nothing).
pub fn decide_slip_into(
    snapshot: &Snapshot,
    ctx: &CommandContext,
    table: &TableState,
    c: &TableCommand,
    out: &mut Vec<(StreamId, Event)>,
) -> Result<(), Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    let (cage_id, slip_no, chips, signers, is_fill) = match &c.op {
        TableOp::Fill { cage_id, slip_no, chips, signers } => (cage_id, *slip_no, chips, signers, true),
        TableOp::Credit { cage_id, slip_no, chips, signers } => (cage_id, *slip_no, chips, signers, false),
        _ => return Err(Rejection::new(crate::ledger::STREAM_NOT_LOADED, "not a slip command")),
    };
    let cage = snapshot
        .cage(cage_id)
        .ok_or_else(|| Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream cage-{cage_id} was not loaded")))?;
    if cage.cage_id.is_none() {
        return Err(Rejection::new(crate::cage::CAGE_NOT_OPEN, "the cage is not open"));
    }
    crate::cage::check_day_open(cage, ctx)?;
    // A game that ended takes no more chips, from the cage either (its tray goes back by
    // credits); the cage pass filled a closed game.
    if is_fill && table.game_closed {
        return Err(Rejection::new(crate::table_stakes::GAME_CLOSED, "the game has ended: no more chips come to this table"));
    }
    check_signers(signers)?;
    crate::money::check_chips(&config.chip_set, chips)?;
    let last = if is_fill { cage.last_fill_slip_no } else { cage.last_credit_slip_no };
    if slip_no != last + 1 {
        return Err(Rejection::new(SLIP_OUT_OF_SEQUENCE, "slip numbers are sequential")
            .with("slip_no", slip_no as Cents)
            .with("expected_slip_no", (last + 1) as Cents));
    }
    if is_fill {
        crate::cage::cage_has(cage, chips)?;
    } else {
        tray_has(table, chips)?;
        // The cage takes back only chips it uses: its counts cover those alone (the credit
        // pass: $50 chips credited to a cage without them stayed on its book, never counted,
        // and could go with no count to see it).
        if let Some(chip) = chips.iter().find(|chip| !cage.denominations_cents.contains(&chip.denomination_cents)) {
            return Err(Rejection::new(CAGE_DENOMINATION_NOT_USED, "the cage does not use this denomination: credit it to a cage that does")
                .with("denomination_cents", chip.denomination_cents));
        }
    }
    let sign = if is_fill { 1 } else { -1 };
    let mut postings = Vec::with_capacity(2 * chips.len());
    for ch in chips {
        let v = sign * ch.value_cents();
        postings.push(Posting::new(Account::CageChips { cage_id: cage_id.clone(), denomination_cents: ch.denomination_cents }, -v));
        postings.push(Posting::new(Account::Tray { table_id: table_id.clone(), denomination_cents: ch.denomination_cents }, v));
    }
    let (te, ce) = if is_fill {
        (
            TableEvent::FillReceived { cage_id: cage_id.clone(), slip_no, chips: chips.clone(), signers: signers.clone(), postings },
            CageEvent::FillIssued { table_id: table_id.clone(), slip_no, chips: chips.clone(), signers: signers.clone() },
        )
    } else {
        (
            TableEvent::CreditSent { cage_id: cage_id.clone(), slip_no, chips: chips.clone(), signers: signers.clone(), postings },
            CageEvent::CreditReceived { table_id: table_id.clone(), slip_no, chips: chips.clone(), signers: signers.clone() },
        )
    };
    out.push((StreamId::Table(table_id.clone()), Event::Table(te)));
    out.push((StreamId::Cage(cage_id.clone()), Event::Cage(ce)));
    Ok(())
}

/// R-CHIP-3: void a fill or credit of this table: a reason and two distinct signers. The
/// slip's postings are reversed (the tray must still hold a voided fill's chips, the cage a
/// voided credit's); the slip number stays used. Postings ride on the table event.
#[allow(clippy::too_many_arguments)]
pub fn decide_void_slip(
    snapshot: &Snapshot,
    ctx: &CommandContext,
    table: &TableState,
    cage_id: &crate::streams::CageId,
    kind: crate::cage::SlipKind,
    slip_no: u64,
    reason: &str,
    signers: &Signers,
) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let (table_id, _) = crate::ledger::open_table(table)?;
    let cage = snapshot
        .cage(cage_id)
        .ok_or_else(|| Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream cage-{cage_id} was not loaded")))?;
    crate::cage::check_day_open(cage, ctx)?;
    if reason.trim().is_empty() || reason.len() > 500 {
        return Err(Rejection::new(VOID_REASON_REQUIRED, "a void gives a reason (1 to 500 bytes)"));
    }
    check_signers(signers)?;
    let Some(slip) = cage.slip(kind, slip_no).filter(|s| &s.table_id == table_id) else {
        return Err(Rejection::new(SLIP_NOT_FOUND, "no such slip of this table at this cage").with("slip_no", slip_no as Cents));
    };
    if slip.voided {
        return Err(Rejection::new(SLIP_ALREADY_VOIDED, "the slip is already void").with("slip_no", slip_no as Cents));
    }
    // R-CHIP-4: a slip of a shift counted and closed is in that count (its fills or credits and
    // its result were signed); a void would change the shift behind its signers, as a
    // correction would (the fixes' pass voided a fill after the close: the next shift opened
    // with a negative fill).
    if table.shift.counted_through_version > 0 && !table.shift.slips.iter().any(|(c, k, n)| c == cage_id && *k == kind && *n == slip_no) {
        return Err(Rejection::new(SLIP_IN_COUNTED_SHIFT, "the slip is in a shift already counted and closed: a difference goes into the next count")
        .with("slip_no", slip_no as Cents)
        .with("counted_through_stream_version", table.shift.counted_through_version as Cents));
    }
    // Nor one the cage has counted since: its count was signed with the slip's chips where they
    // were (the corrections pass: a fill voided after the cage's count put its $500 back on the
    // cage's book, and the next count of the same chips found a $500 shortage).
    if slip.counted {
        return Err(Rejection::new(SLIP_IN_COUNTED_SHIFT, "the slip is in a cage shift already counted: a difference goes into the next count")
            .with("slip_no", slip_no as Cents)
            .with("cage_counted_through_stream_version", cage.counted_through_version as Cents));
    }
    // A game that ended takes no more chips: its credits stand (R-KITTY-1, R-STAKE-3).
    if kind == crate::cage::SlipKind::Credit && table.game_closed {
        return Err(Rejection::new(crate::table_stakes::GAME_CLOSED, "the game has ended: a credit's chips do not come back to its tray")
            .with("slip_no", slip_no as Cents));
    }
    let chips = slip.chips.clone();
    let sign = match kind {
        crate::cage::SlipKind::Fill => {
            tray_has(table, &chips)?;
            -1
        }
        crate::cage::SlipKind::Credit => {
            crate::cage::cage_has(cage, &chips)?;
            1
        }
    };
    let mut postings = Vec::with_capacity(2 * chips.len());
    for ch in &chips {
        let v = sign * ch.value_cents();
        postings.push(Posting::new(Account::CageChips { cage_id: cage_id.clone(), denomination_cents: ch.denomination_cents }, -v));
        postings.push(Posting::new(Account::Tray { table_id: table_id.clone(), denomination_cents: ch.denomination_cents }, v));
    }
    let te = TableEvent::SlipVoided {
        cage_id: cage_id.clone(),
        kind,
        slip_no,
        chips: chips.clone(),
        reason: reason.to_string(),
        signers: signers.clone(),
        postings,
    };
    let ce = CageEvent::SlipVoided { table_id: table_id.clone(), kind, slip_no, chips, reason: reason.to_string(), signers: signers.clone() };
    Ok(vec![(StreamId::Table(table_id.clone()), Event::Table(te)), (StreamId::Cage(cage_id.clone()), Event::Cage(ce))])
}

/// Most chips of one denomination a count may report (bound: no sum of counts can overflow).
pub const MAX_COUNTED_CHIPS: i64 = 100_000_000;

/// R-CHIP-4: a count by denomination: every entry a denomination of `denominations_cents`,
/// named once, with a count in `0..=MAX_COUNTED_CHIPS` whose value is within the amount bound,
/// and every denomination the book holds (`book`) named: a line left out of a count sheet is
/// no count, not a zero (the cage pass: a count naming only the $1 chips recorded a -$19,600
/// variance and emptied the book of the others). Returns the count of each denomination, in
/// the order of `denominations_cents` (unnamed ones, of which the book holds none, count zero).
pub fn check_count(denominations_cents: &[Cents], counted: &[ChipCount], book: impl Fn(Cents) -> i64) -> Result<Vec<i64>, Rejection> {
    if counted.len() > crate::money::MAX_DENOMINATIONS {
        return Err(Rejection::new(COUNT_INVALID, "a count lists at most 16 denominations").with("entries", counted.len() as Cents));
    }
    let mut counts = vec![0i64; denominations_cents.len()];
    let mut named = vec![false; denominations_cents.len()];
    for c in counted {
        let Some(i) = denominations_cents.iter().position(|d| *d == c.denomination_cents) else {
            return Err(Rejection::new(COUNT_INVALID, "counted a denomination that is not in use here")
                .with("denomination_cents", c.denomination_cents));
        };
        if named[i] {
            return Err(Rejection::new(COUNT_INVALID, "a denomination is counted once").with("denomination_cents", c.denomination_cents));
        }
        if c.count < 0 {
            return Err(Rejection::new(crate::money::AMOUNT_NOT_POSITIVE, "a counted number of chips is never negative")
                .with("denomination_cents", c.denomination_cents)
                .with("count", c.count));
        }
        // The fewer of two bounds: the chips a count may name, and the chips worth the most amount
        // the ledger takes (denominations are positive, checked with the chip set).
        let max_count = MAX_COUNTED_CHIPS.min(crate::money::MAX_AMOUNT_CENTS / c.denomination_cents);
        if c.count > max_count {
            return Err(Rejection::new(crate::money::AMOUNT_TOO_LARGE, "a counted number of chips is between zero and the bound")
                .with("denomination_cents", c.denomination_cents)
                .with("count", c.count)
                .with("max_count", max_count));
        }
        named[i] = true;
        counts[i] = c.count;
    }
    if let Some((d, _)) = denominations_cents.iter().zip(&named).find(|(d, named)| !**named && book(**d) != 0) {
        return Err(Rejection::new(COUNT_INVALID, "every denomination the book holds is counted: a line left out is no zero")
            .with("denomination_cents", *d)
            .with("book_count", book(*d)));
    }
    Ok(counts)
}

/// R-CHIP-4: close the shift on what was counted, signed by two distinct people. Where the
/// counted tray or drop differs from the book, the variance is recorded first, as its own
/// event, posted against `house/count-variance`; then result = drop + credits + closing -
/// opening - fills on the counted figures, and the drop goes to the count room.
pub fn decide_close_shift(
    table: &TableState,
    counted_tray: &[ChipCount],
    counted_drop_cents: Cents,
    signers: &Signers,
) -> Result<Vec<TableEvent>, Rejection> {
    let (table_id, _) = crate::ledger::open_table(table)?;
    crate::ledger::between_hands(table)?;
    check_count_signers(signers)?;
    let denominations: Vec<Cents> = table.tray.iter().map(|c| c.denomination_cents).collect();
    let counted = check_count(&denominations, counted_tray, |d| table.tray_count(d))?;
    crate::money::check_non_negative("counted_drop_cents", counted_drop_cents)?;
    let mut tray_variance = Vec::new();
    let mut postings = Vec::new();
    for (c, counted) in table.tray.iter().zip(&counted) {
        let over = counted - c.count;
        if over != 0 {
            tray_variance.push(ChipCount { denomination_cents: c.denomination_cents, count: over });
            postings.push(Posting::new(Account::Tray { table_id: table_id.clone(), denomination_cents: c.denomination_cents }, over * c.denomination_cents));
        }
    }
    let drop_variance_cents = counted_drop_cents - table.drop_cents;
    if drop_variance_cents != 0 {
        postings.push(Posting::new(Account::Drop { table_id: table_id.clone() }, drop_variance_cents));
    }
    let mut events = Vec::with_capacity(2);
    if !postings.is_empty() {
        let variance_cents: Cents = postings.iter().map(|p| p.amount_cents).sum();
        postings.push(Posting::new(Account::House(HouseAccount::CountVariance), -variance_cents));
        events.push(TableEvent::CountVarianceRecorded {
            tray_variance,
            drop_variance_cents,
            variance_cents,
            signers: signers.clone(),
            postings,
        });
    }
    let closing_tray: Vec<ChipCount> = table
        .tray
        .iter()
        .zip(&counted)
        .map(|(c, count)| ChipCount { denomination_cents: c.denomination_cents, count: *count })
        .collect();
    let opening = crate::money::chips_value_cents(&table.shift.opening_tray);
    let closing = crate::money::chips_value_cents(&closing_tray);
    let result_cents = counted_drop_cents + table.shift.credits_cents + closing - opening - table.shift.fills_cents;
    // The rake box (house revenue, R-RAKE-1/R-RAKE-3) goes to the count room with the drop, the
    // toke box to the dealers' pool: each shift reports what it collected, and the boxes start
    // the next shift empty.
    let (rake_cents, toke_cents) = (table.rake_cents, table.toke_cents);
    let mut postings = Vec::with_capacity(6);
    crate::accounts::transfer(&mut postings, Account::Drop { table_id: table_id.clone() }, Account::House(HouseAccount::CountRoom), counted_drop_cents);
    crate::accounts::transfer(&mut postings, Account::Rake { table_id: table_id.clone() }, Account::House(HouseAccount::CountRoom), rake_cents);
    crate::accounts::transfer(&mut postings, Account::Toke { table_id: table_id.clone() }, Account::House(HouseAccount::Tokes), toke_cents);
    events.push(TableEvent::ShiftClosed {
        opening_tray: table.shift.opening_tray.clone(),
        closing_tray,
        fills_cents: table.shift.fills_cents,
        credits_cents: table.shift.credits_cents,
        drop_cents: counted_drop_cents,
        result_cents,
        rake_cents,
        toke_cents,
        postings,
        signers: Some(signers.clone()),
    });
    Ok(events)
}
