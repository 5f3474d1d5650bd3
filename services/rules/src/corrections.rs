//! Corrections (R-AUDIT-1, R-BET-13): events are never updated or deleted; a correction is a
//! new event that reverses the postings of the one it references and names its approver.

use serde::{Deserialize, Serialize};

use crate::accounts::{Account, Posting};
use crate::aml::CashDirection;
use crate::cage::{CageEvent, CageState};
use crate::money::Cents;
use crate::player::{PlayerEvent, PlayerState};
use crate::rejection::{Reason, Rejection};
use crate::streams::{CageId, PlayerId, Seat, StreamId, TableId};
use crate::table::{TableEvent, TableState};

use crate::{CommandContext, Event, Snapshot};

pub const CORRECTION_APPROVER_REQUIRED: Reason = Reason::new("CORRECTION_APPROVER_REQUIRED", "R-AUDIT-1");
pub const CORRECTION_INVALID: Reason = Reason::new("CORRECTION_INVALID", "R-AUDIT-1");
pub const CORRECTION_WOULD_GO_NEGATIVE: Reason = Reason::new("CORRECTION_WOULD_GO_NEGATIVE", "R-UNIT-4");
pub const ALREADY_CORRECTED: Reason = Reason::new("ALREADY_CORRECTED", "R-AUDIT-1");
/// A correction may not leave chips in a pot between hands (R-UNIT-4: every pot is empty when
/// its hand ends): a hand is corrected as a whole, by its net effect on the seats.
pub const CORRECTION_LEAVES_POT: Reason = Reason::new("CORRECTION_LEAVES_POT", "R-UNIT-4");

pub const REASONS: &[Reason] =
    &[CORRECTION_APPROVER_REQUIRED, CORRECTION_INVALID, CORRECTION_WOULD_GO_NEGATIVE, ALREADY_CORRECTED, CORRECTION_LEAVES_POT];

/// [`CORRECTION_INVALID`] naming the rule the refused correction would have walked around
/// (R-AUDIT-4 for a cash record taken back alone, R-MARK-1 for a marker, ...).
pub const fn correction_invalid(rule: &'static str) -> Reason {
    Reason::new(CORRECTION_INVALID.code, rule)
}

/// What no correction reverses, on any stream: a correction (R-AUDIT-1: reversing it would put
/// the original movement back unjudged: a buy-in above the maximum since, chips at a game
/// closed since; the movement is recorded again by its own command, judged as any other), and
/// an event of a shift already counted and closed (R-CHIP-4: the count, its variance and the
/// drop were signed; a correction would change them behind the signers, and a difference found
/// later goes into the next count). `counted_through_version` is the stream version of the
/// stream's last count (0: never counted).
pub(crate) fn check_reversible(reverses_event_types: &[String], reverses_stream_version: u64, counted_through_version: u64) -> Result<(), Rejection> {
    if reverses_event_types.iter().any(|t| t == "Corrected") {
        return Err(Rejection::new(
            CORRECTION_INVALID,
            "a correction is not corrected: record the movement again with its own command, judged by the rules",
        ));
    }
    if counted_through_version > 0 && reverses_stream_version <= counted_through_version {
        return Err(Rejection::new(
            correction_invalid("R-CHIP-4"),
            "the event is in a shift already counted and closed: a difference goes into the next count",
        )
        .with("corrected_stream_version", reverses_stream_version as Cents)
        .with("counted_through_stream_version", counted_through_version as Cents));
    }
    Ok(())
}

/// Remember that `event_id` was reversed (used by `evolve` on every correction event).
pub(crate) fn remember_corrected(corrected: &mut Vec<String>, event_id: &str) {
    if !corrected.iter().any(|id| id == event_id) {
        corrected.push(event_id.to_string());
    }
}

/// R-AUDIT-1: an event is reversed at most once; a stream that reached the bound of
/// remembered corrections refuses further ones rather than forget one. The bound is a shift's:
/// a count (R-CHIP-4) ends what may be corrected, and what is remembered with it.
fn check_not_corrected(corrected: &[String], event_id: &str) -> Result<(), Rejection> {
    if corrected.iter().any(|id| id == event_id) {
        return Err(Rejection::new(ALREADY_CORRECTED, format!("event {event_id} was already corrected")));
    }
    if corrected.len() >= crate::player::MAX_CORRECTED_EVENTS {
        return Err(Rejection::new(CORRECTION_INVALID, "this shift reached its bound of corrections: close and count it, then correct")
            .with("corrections", corrected.len() as Cents));
    }
    Ok(())
}

/// Longest list of postings a correction may reverse (bound).
pub const MAX_CORRECTION_POSTINGS: usize = 64;

/// Reverse `original_postings` of event `reverses_event_id` (supplied by the caller from the
/// store) on this table, between hands. The reversal must keep every balance non-negative and
/// every pot empty; an event is reversed once. A seat's chips are corrected only in the session
/// the event was part of: a seat left and taken again since (`reverses_stream_version`, the
/// event's version on the table stream, before the session began) holds another session's
/// chips, maybe another patron's, and is refused. Chips of a patron's pocket that the postings
/// name are corrected on that patron's stream too (`PocketCorrected`), so the stream states
/// never drift from the postings. Cage accounts are not corrected here: a fill or credit is
/// voided (`VoidSlip`), a marker redeemed or written off.
#[allow(clippy::too_many_arguments)]

/// The table events of a hand: a correction of one of them is a correction of the whole hand
/// (the server gathers them; the rules refuse it once a later hand was dealt, R-STAKE-1).
pub const HAND_EVENT_TYPES: &[&str] = &[
    "HandStarted",
    "Posted",
    "Acted",
    "RoundStarted",
    "UpCardsDealt",
    "ShortBetBroughtUp",
    "ShortCallTakenBack",
    "SidePotPaid",
    "HandSettled",
    "HandEnded",
];
pub fn decide_correction(
    snapshot: &Snapshot,
    table: &TableState,
    ctx: &CommandContext,
    reversed_event: &Reversed,
    approved_by: &str,
    reason: &str,
) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let Reversed { event_id: reverses_event_id, stream_version: reverses_stream_version, event_types: reverses_event_types, postings: original_postings, .. } =
        *reversed_event;
    let (table_id, _) = crate::ledger::open_table(table)?;
    crate::ledger::between_hands(table)?;
    check_request(ctx, reverses_event_id, approved_by, reason)?;
    check_not_corrected(&table.corrected_event_ids, reverses_event_id)?;
    check_reversible(reverses_event_types, reverses_stream_version, table.shift.counted_through_version)?;
    if reverses_event_types.iter().any(|t| matches!(t.as_str(), "FillReceived" | "CreditSent" | "SlipVoided")) {
        return Err(Rejection::new(correction_invalid("R-CHIP-3"), "a fill or credit is not corrected: void its slip (VoidSlip)"));
    }
    // R-KITTY-1: the close settled the kitty; no correction puts chips back into it or takes
    // them out (the flows pass: a kitty expense from before the close, corrected, put $1 back
    // into the closed game's kitty, and one supervisor paid it to the dealers).
    if table.game_closed && original_postings.iter().any(|p| matches!(&p.account, Account::Kitty { table_id: t } if t == table_id)) {
        return Err(Rejection::new(correction_invalid("R-KITTY-1"), "the game has ended and its kitty was settled: no correction moves the kitty of a closed game"));
    }
    // R-STAKE-5: cash in play is converted to chips after its hand, never taken back by a
    // correction: reversing its postings left the cash recorded in play with no chips behind it,
    // the seat dealt in and a later conversion paying chips out of the tray for nothing (the
    // fixes' pass).
    if reverses_event_types.iter().any(|t| matches!(t.as_str(), "CashPutInPlay" | "CashInPlayConverted")) {
        return Err(Rejection::new(correction_invalid("R-STAKE-5"), "cash in play is not corrected: it is converted to chips after its hand")
            .with("corrected_stream_version", reverses_stream_version as Cents));
    }
    // R-KITTY-1: the game's end settled what was left in the kitty; taken back, the kitty came
    // back to a table that stays closed, where one supervisor paid it all out as an expense (the
    // rake pass).
    if reverses_event_types.iter().any(|t| t == "GameClosed") {
        return Err(Rejection::new(correction_invalid("R-KITTY-1"), "the end of a game is not corrected: what its kitty left was settled"));
    }
    if is_marker(reverses_event_types, original_postings) {
        return Err(marker_not_corrected());
    }
    // R-STAKE-6: a house move carries the stack between two tables in one decision; taken back
    // at one table it would leave the other's half standing. A move keyed wrong is undone by
    // moving the player again (the auditor's pass: the refusal had named no rule).
    if reverses_event_types.iter().any(|t| matches!(t.as_str(), "PlayerMovedIn" | "PlayerMovedOut")) {
        return Err(Rejection::new(correction_invalid("R-STAKE-6"), "a house move is not corrected: move the player again"));
    }
    check_postings(original_postings)?;
    for p in original_postings {
        match &p.account {
            account if account.table_id().is_some_and(|t| t != table_id) => {
                return Err(Rejection::new(CORRECTION_INVALID, "the postings belong to another table"));
            }
            Account::CageChips { .. } | Account::CageCash { .. } | Account::CageMarkers { .. } => {
                return Err(Rejection::new(correction_invalid("R-CHIP-3"), "cage postings are not corrected at the table: void the slip"));
            }
            // R-MARK-3: an IOU lives on its seat until it is paid; reversing its postings alone
            // would leave it owed (or paid) with the chips gone (or back).
            Account::Iou { .. } => {
                return Err(Rejection::new(correction_invalid("R-MARK-3"), "an IOU is not corrected: it is settled (SettleIou)"));
            }
            _ => {}
        }
    }
    // R-MARK-3: an IOU or a loan is owed on its seat until it is paid; reversing its chips alone
    // would leave the debt (or the payment) standing with the chips gone (or back).
    if reverses_event_types.iter().any(|t| matches!(t.as_str(), "IouWritten" | "IouSettled")) {
        return Err(Rejection::new(correction_invalid("R-MARK-3"), "an IOU or a loan is not corrected: it is settled or paid back (SettleIou)"));
    }
    let pot_net: Cents =
        original_postings.iter().filter(|p| matches!(p.account, Account::Pot { .. })).map(|p| p.amount_cents).sum();
    if pot_net != 0 {
        return Err(Rejection::new(CORRECTION_LEAVES_POT, "a hand's events are corrected together, by their net effect on the seats")
            .with("pot_cents", -pot_net));
    }
    let postings: Vec<Posting> = reversed(original_postings).into_iter().filter(|p| !matches!(p.account, Account::Pot { .. })).collect();
    // Check the effect on this table's accounts.
    let tip_chips_back: Vec<(Seat, Cents)> = table
        .tip_chip_moves
        .iter()
        .filter(|(version, ..)| *version == reverses_stream_version)
        .map(|(_, seat, change)| (*seat, -change))
        .collect();
    let mut corrected = TableEvent::Corrected {
        reverses_event_id: reverses_event_id.to_string(),
        approved_by: approved_by.to_string(),
        reason: reason.to_string(),
        postings: postings.clone(),
        buy_ins_taken_back: Vec::new(),
        // R-CHIP-2: a buy-in or top-up taken back no longer counts toward the supervisor's
        // threshold.
        arrivals_taken_back: if reverses_event_types.iter().any(|t| t == "BoughtIn" || t == "ToppedUp") {
            seat_amounts(original_postings).filter(|(_, amount)| *amount > 0).collect()
        } else {
            Vec::new()
        },
        time_owed_again: time_owed_again(table, reverses_event_types, reverses_stream_version, original_postings),
        allowance_back: allowance_back(reverses_event_types, original_postings),
        debts_owed_again: debts_owed_again(table, reverses_event_types, reverses_stream_version),
        // R-UNIT-2: a color change's or a tip's effect on the seat's tip chips, undone.
        tip_chips_back: tip_chips_back.clone(),
        tip_chips_version: if tip_chips_back.is_empty() { 0 } else { reverses_stream_version },
    };
    let mut after = table.clone().evolve(&corrected);
    // R-STAKE-3: a buy-in taken back is no buy-in any more: the seat buys in again within the
    // limits before it is dealt in, whatever top-ups it kept (a $1 top-up had been dealt in at
    // a $40 minimum, then a $1 top-up made before the correction).
    if reverses_event_types.iter().any(|t| t == "BoughtIn") {
        let credited: Vec<Seat> =
            seat_amounts(original_postings).filter(|(seat, amount)| *amount > 0 && after.seat(*seat).is_some()).map(|(seat, _)| seat).collect();
        if !credited.is_empty() {
            if let TableEvent::Corrected { buy_ins_taken_back, .. } = &mut corrected {
                *buy_ins_taken_back = credited;
            }
            after = table.clone().evolve(&corrected);
        }
    }
    // R-UNIT-2 with R-STAKE-1: a correction gives back no more tip chips than a color change
    // may give: corrections of color-ups had piled them up a chip at a time (the wave-2 pass: $6
    // of a $200 stack kept out of an all-in).
    let min_chip = table.config.as_ref().map_or(0, |config| config.chip_set.min_playable_chip_cents);
    for (seat, change) in &tip_chips_back {
        if let Some(now) = after.seat(*seat).filter(|s| *change > 0 && s.tip_chips_cents > min_chip) {
            return Err(Rejection::new(crate::inventory::TIP_CHIPS_ABOVE_ONE_CHIP, "the correction would leave the seat more chips below the minimum playable chip than one chip's worth: color them up first")
                .with("seat", Cents::from(*seat))
                .with("tip_chips_cents", now.tip_chips_cents)
                .with("min_playable_chip_cents", min_chip));
        }
    }
    for p in &postings {
        let crate::accounts::Account::Seat { seat, .. } = p.account else { continue };
        let Some(now) = table.seat(seat) else {
            return Err(Rejection::new(CORRECTION_INVALID, format!("seat {seat} is empty now: the session the event was part of has ended"))
                .with("seat", Cents::from(seat)));
        };
        if now.seated_at_version > reverses_stream_version {
            return Err(Rejection::new(
                CORRECTION_INVALID,
                format!("seat {seat} was left and taken again since the event: its chips are another session's ({})", now.player_id),
            )
            .with("seat", Cents::from(seat))
            .with("corrected_stream_version", reverses_stream_version as Cents)
            .with("seated_at_stream_version", now.seated_at_version as Cents));
        }
    }
    // R-STAKE-2: chips that came to a stack by any event but a hand's (a buy-in, a top-up, a
    // jackpot payout, ...) and have been played since are not taken off it by a correction: that
    // moved a played stack's chips back to the pocket, the cash drop or the jackpot fund,
    // ratholing by two signatures (the second stakes pass; the fixes' pass: a jackpot payout).
    // A hand's own events are R-STAKE-1's, below.
    if !reverses_event_types.iter().any(|t| HAND_EVENT_TYPES.contains(&t.as_str())) {
        for (seat, _) in seat_amounts(original_postings).filter(|(_, amount)| *amount > 0) {
            if let Some(now) = table.seat(seat).filter(|s| s.dealt_at_version > reverses_stream_version) {
                return Err(Rejection::new(correction_invalid("R-STAKE-2"), format!("seat {seat}'s chips have been played since: they leave the stack only by play or a cash-out"))
                    .with("seat", Cents::from(seat))
                    .with("corrected_stream_version", reverses_stream_version as Cents)
                    .with("dealt_at_stream_version", now.dealt_at_version as Cents));
            }
        }
    }
    // R-STAKE-1: a hand's events are not corrected once a later hand was dealt to a seat they
    // move: that hand was played with the stake as it stood (the cage pass took a hand back
    // after the next one, dealt with its chips, had put a player all in for less than the stake
    // the ledger then gave him).
    if reverses_event_types.iter().any(|t| HAND_EVENT_TYPES.contains(&t.as_str())) {
        for (seat, _) in seat_amounts(original_postings) {
            if let Some(now) = table.seat(seat).filter(|s| s.dealt_at_version > reverses_stream_version) {
                return Err(Rejection::new(correction_invalid("R-STAKE-1"), format!("seat {seat} has been dealt a hand since: that hand was played with the stake as it stood"))
                    .with("seat", Cents::from(seat))
                    .with("corrected_stream_version", reverses_stream_version as Cents)
                    .with("dealt_at_stream_version", now.dealt_at_version as Cents));
            }
        }
    }
    // The balances last: a played or another session's stack is refused for its rule whether
    // the patron is up or down (the auditor's pass: a played buy-in of a losing patron had been
    // refused as going negative, of a winning one as played).
    crate::iou::check_still_covered(table, &after)?;
    if let Some(neg) = after.balances().into_iter().find(|b| b.amount_cents < 0 && b.account.must_stay_non_negative()) {
        return Err(Rejection::new(CORRECTION_WOULD_GO_NEGATIVE, format!("{} would go negative", neg.account))
            .with("balance_cents", neg.amount_cents as Cents));
    }
    let pockets = pocket_corrections(snapshot, reverses_event_id, &postings)?;
    let bound = rebind_corrected_returns(snapshot, table, ctx, reverses_event_id, reverses_event_types, original_postings)?;
    // The patron who paid the cash: the one seat the postings name (a cash buy-in or top-up).
    // Postings of several seats name no one patron, and their cash is refused below.
    let cash_patron = match crate::ledger::seats_named(original_postings).as_slice() {
        [seat] => table.seat(*seat).map(|s| s.player_id.clone()),
        _ => None,
    };
    let cash = cash_record_corrected(snapshot, reversed_event, cash_patron.as_ref(), approved_by, reason)?;
    let mut out = Vec::with_capacity(2 + pockets.len() + bound.len());
    out.push((StreamId::Table(table_id.clone()), Event::Table(corrected)));
    out.extend(bound);
    out.extend(pockets);
    out.extend(cash);
    Ok(out)
}

/// R-RAKE-3: the seats a corrected time collection had paid the time now in effect for (the
/// seats its fee came from, still in the session it paid for): with the fee back on the stack
/// they owe the time again (the cage pass: a corrected collection left the seats paid, and the
/// house could not collect the interval again). A seat paid since by a later collection keeps
/// that one.
fn time_owed_again(table: &TableState, reverses_event_types: &[String], reverses_stream_version: u64, original_postings: &[Posting]) -> Vec<Seat> {
    if !reverses_event_types.iter().any(|t| t == "TimeCollected") {
        return Vec::new();
    }
    seat_amounts(original_postings)
        .filter(|(seat, amount)| *amount < 0 && table.seat(*seat).is_some_and(|s| s.time_paid_at_version == reverses_stream_version))
        .map(|(seat, _)| seat)
        .collect()
}

/// R-POST-1, R-POST-3: the seats dealt in a corrected hand, each with what it paid of its debts
/// in it (`SeatState::debts_paid`: the entry post, missed blinds, a missed button ante, by their
/// posts or by the big blind or button ante in position). The hand is the last each was dealt
/// (a later one refuses the correction, R-STAKE-1), so its version is the seat's
/// `dealt_at_version`. The hand's chips come back and what they paid is owed again (the hostile
/// tester: a $3 missed button ante came back and was owed no more). Read from the table, not
/// from the postings: netted, they say what a seat lost or won, not what it posted.
fn debts_owed_again(table: &TableState, reverses_event_types: &[String], reverses_stream_version: u64) -> Vec<(Seat, crate::table::SeatDebts)> {
    if !reverses_event_types.iter().any(|t| HAND_EVENT_TYPES.contains(&t.as_str())) {
        return Vec::new();
    }
    (1..=crate::MAX_SEATS as Seat)
        .filter_map(|seat| table.seat(seat).map(|s| (seat, s)))
        .filter(|(_, s)| s.dealt_at_version == reverses_stream_version && !s.debts_paid.is_none())
        .map(|(seat, s)| (seat, s.debts_paid))
        .collect()
}

/// R-STAKE-2: a corrected refreshment (`ChipsRemoved`) puts its chips back on the stack and in the
/// session's allowance; they had stayed spent and counted in the departure (the fixes' pass: a
/// patron who left with all $40 was asked $50).
fn allowance_back(reverses_event_types: &[String], original_postings: &[Posting]) -> Vec<(Seat, Cents)> {
    if !reverses_event_types.iter().any(|t| t == "ChipsRemoved") {
        return Vec::new();
    }
    seat_amounts(original_postings).filter(|(_, amount)| *amount < 0).map(|(seat, amount)| (seat, -amount)).collect()
}

/// The seats the reversed event's postings name, each with its posting's amount (positive:
/// chips the event brought to the seat; negative: chips it took off).
fn seat_amounts(postings: &[Posting]) -> impl Iterator<Item = (Seat, Cents)> + '_ {
    postings.iter().filter_map(|p| match p.account {
        Account::Seat { seat, .. } => Some((seat, p.amount_cents)),
        _ => None,
    })
}

/// What the log says of the event a correction reverses (the caller reads it from the store):
/// its id, its version on its stream (of its hand's `HandStarted` for a hand), its type (every
/// type of a hand), the gaming day it was recorded on and its postings (a hand's, netted).
#[derive(Debug, Clone, Copy)]
pub struct Reversed<'a> {
    pub event_id: &'a str,
    pub stream_version: u64,
    pub event_types: &'a [String],
    pub gaming_day: &'a str,
    pub postings: &'a [Posting],
}

/// R-AUDIT-4: the record of cash follows the money. A reversed event that moved cash with a
/// patron (postings on the patrons' account: a cash buy-in or top-up, chips sold or redeemed at
/// the cage) takes that cash off the patron's total of the day it was recorded on, on the
/// patron's stream (`Corrected` with a cash reversal), so the day's total and the reports it
/// requires count the cash that really changed hands (a $12,000 buy-in keyed for $1,200 and
/// corrected had stayed in the day's total). A CTR the day's total had required stays on the
/// record; when the corrected total is back at or under the threshold, the next crossing
/// requires one again (`ctr_rearmed`).
fn cash_record_corrected(
    snapshot: &Snapshot,
    reversed_event: &Reversed,
    patron: Option<&PlayerId>,
    approved_by: &str,
    reason: &str,
) -> Result<Option<(StreamId, Event)>, Rejection> {
    let cash_net: Cents = reversed_event
        .postings
        .iter()
        .filter(|p| matches!(p.account, Account::House(crate::accounts::HouseAccount::Patrons)))
        .map(|p| p.amount_cents)
        .sum();
    if cash_net == 0 {
        return Ok(None);
    }
    let Some(player_id) = patron else {
        return Err(Rejection::new(correction_invalid("R-AUDIT-4"), "the patron who paid or was paid the cash is not at the seat or pocket the postings name")
            .with("cash_cents", cash_net.abs()));
    };
    if reversed_event.gaming_day.trim().is_empty() {
        return Err(Rejection::new(correction_invalid("R-AUDIT-4"), "the gaming day of the reversed cash is not known: it comes off that day's total")
            .with("cash_cents", cash_net.abs()));
    }
    let player = snapshot
        .player(player_id)
        .ok_or_else(|| Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream player-{player_id} was not loaded")))?;
    // Cash out of the patrons' account came in from the patron.
    let (direction, amount_cents) = if cash_net < 0 { (CashDirection::In, -cash_net) } else { (CashDirection::Out, cash_net) };
    let day = &player.cash_day;
    // The cash was recorded on this patron's day (the seat's or pocket's patron paid it): a
    // total that would go below zero says it was not, and nothing is taken off.
    let recorded = match direction {
        CashDirection::In => day.cash_in_cents,
        CashDirection::Out => day.cash_out_cents,
    };
    if day.gaming_day == reversed_event.gaming_day && recorded < amount_cents {
        return Err(Rejection::new(CORRECTION_WOULD_GO_NEGATIVE, format!("the cash day of {player_id} holds less than the cash to take back"))
            .with("cash_cents", amount_cents)
            .with("day_total_cents", recorded));
    }
    let ctr_rearmed = day.gaming_day == reversed_event.gaming_day && {
        let (total, required) = match direction {
            CashDirection::In => (day.cash_in_cents, day.ctr_in_required),
            CashDirection::Out => (day.cash_out_cents, day.ctr_out_required),
        };
        required && total - amount_cents <= snapshot.aml.ctr_over_cents
    };
    let reversal = PlayerReversal::CashTransaction { gaming_day: reversed_event.gaming_day.to_string(), direction, amount_cents, ctr_rearmed };
    let e = PlayerEvent::Corrected {
        reverses_event_id: reversed_event.event_id.to_string(),
        approved_by: approved_by.to_string(),
        reason: reason.to_string(),
        reversal,
    };
    Ok(Some((StreamId::Player(player_id.clone()), Event::Player(e))))
}

/// R-REBUY-1: a way into the game (a buy-in; cash or a marker put in play and a house move are
/// refused before this) that a correction takes back may have met a departure from the game within the wait; the seat
/// it credited is then bound again (`SeatBound`): dealt in only with at least the amount left
/// with until the wait ends, as if the patron had just come back (the second betting pass:
/// a $500 return corrected away, then a $40 top-up was dealt in). The patrons' streams are the
/// command's dependent streams (`ledger::dependent_streams`).
fn rebind_corrected_returns(
    snapshot: &Snapshot,
    table: &TableState,
    ctx: &CommandContext,
    reverses_event_id: &str,
    reverses_event_types: &[String],
    original_postings: &[Posting],
) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let Some(config) = table.config.as_ref() else { return Ok(Vec::new()) };
    if !reverses_event_types.iter().any(|t| crate::rebuy::WAYS_IN.contains(&t.as_str())) {
        return Ok(Vec::new());
    }
    let game = config.same_game();
    let mut bound: Vec<(StreamId, Event)> = Vec::new();
    for p in original_postings.iter().filter(|p| p.amount_cents > 0) {
        let Account::Seat { seat, table_id } = &p.account else { continue };
        let Some(s) = table.seat(*seat) else { continue };
        let here = StreamId::Table(table_id.clone());
        if bound.iter().any(|(stream, b)| stream == &here && matches!(b, Event::Table(TableEvent::SeatBound { seat: at, .. }) if at == seat)) {
            continue;
        }
        let player = snapshot.player(&s.player_id).ok_or_else(|| {
            Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream player-{} was not loaded", s.player_id))
        })?;
        if let Some((departure, amount_cents, until_unix_ms)) = crate::rebuy::binding_since(player, table_id, &game, ctx.at_unix_ms, &config.rebuy) {
            bound.push((
                StreamId::Table(table_id.clone()),
                Event::Table(TableEvent::SeatBound {
                    seat: *seat,
                    player_id: s.player_id.clone(),
                    left_table_id: departure.table_id.clone(),
                    amount_cents,
                    until_unix_ms,
                }),
            ));
            // The patron's other seats of the game (a second seat a table allowed) are bound as
            // this one is, and the patron's other ways back into the game too.
            for held in player.other_seats_in_game(&game, table_id) {
                let other = snapshot.table(&held.table_id).ok_or_else(|| {
                    Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream table-{} was not loaded", held.table_id))
                })?;
                if other.seat(held.seat).is_none_or(|o| o.player_id != s.player_id) {
                    continue;
                }
                bound.push((
                    StreamId::Table(held.table_id.clone()),
                    Event::Table(TableEvent::SeatBound {
                        seat: held.seat,
                        player_id: s.player_id.clone(),
                        left_table_id: departure.table_id.clone(),
                        amount_cents,
                        until_unix_ms,
                    }),
                ));
            }
            bound.push((
                StreamId::Player(s.player_id.clone()),
                Event::Player(PlayerEvent::ReturnCorrected { reverses_event_id: reverses_event_id.to_string(), departure: departure.clone() }),
            ));
        }
    }
    Ok(bound)
}

/// The `PocketCorrected` events of the pockets that reversed `postings` name, each checked
/// against the patron's stream (never negative).
fn pocket_corrections(snapshot: &Snapshot, reverses_event_id: &str, postings: &[Posting]) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let mut out = Vec::new();
    for player_id in pocket_owners(postings) {
        let player = snapshot
            .player(&player_id)
            .ok_or_else(|| Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream player-{player_id} was not loaded")))?;
        let delta: Cents = postings
            .iter()
            .filter(|p| matches!(&p.account, Account::Pocket { player_id: q } if *q == player_id))
            .map(|p| p.amount_cents)
            .sum();
        if player.pocket_cents + delta < 0 {
            return Err(Rejection::new(CORRECTION_WOULD_GO_NEGATIVE, format!("the pocket of {player_id} would go negative"))
                .with("balance_cents", player.pocket_cents + delta));
        }
        let e = PlayerEvent::PocketCorrected { reverses_event_id: reverses_event_id.to_string(), amount_cents: delta };
        out.push((StreamId::Player(player_id), Event::Player(e)));
    }
    Ok(out)
}

/// Who approves and why (R-AUDIT-1): an approver other than the actor, the reversed event's id
/// and a reason.
fn check_request(ctx: &CommandContext, reverses_event_id: &str, approved_by: &str, reason: &str) -> Result<(), Rejection> {
    if approved_by.trim().is_empty() || approved_by == ctx.actor.id {
        return Err(Rejection::new(CORRECTION_APPROVER_REQUIRED, "a correction names an approver other than the actor"));
    }
    if reverses_event_id.trim().is_empty() || reason.trim().is_empty() {
        return Err(Rejection::new(CORRECTION_INVALID, "a correction references the event and gives a reason"));
    }
    Ok(())
}

fn check_postings(original_postings: &[Posting]) -> Result<(), Rejection> {
    if original_postings.is_empty() || original_postings.len() > MAX_CORRECTION_POSTINGS {
        return Err(Rejection::new(CORRECTION_INVALID, "a correction reverses 1..=64 postings"));
    }
    // Bounded before they are negated and summed (R-UNIT-1: no amount wraps).
    if let Some(p) = original_postings.iter().find(|p| p.amount_cents.unsigned_abs() > crate::money::MAX_AMOUNT_CENTS as u64) {
        return Err(Rejection::new(crate::money::AMOUNT_TOO_LARGE, "a posting to reverse is beyond the amount bound")
            .with("amount_cents", p.amount_cents)
            .with("max_amount_cents", crate::money::MAX_AMOUNT_CENTS));
    }
    crate::accounts::check_balanced(original_postings)
}

/// A marker's own event (at the cage, or its chips at a seat, with postings or without) or
/// one moving its receivable.
fn is_marker(reverses_event_types: &[String], original_postings: &[Posting]) -> bool {
    reverses_event_types.iter().any(|t| t.starts_with("Marker")) || original_postings.iter().any(|p| matches!(p.account, Account::CageMarkers { .. }))
}

/// R-MARK-1: a marker lives on the patron's stream until it is redeemed or written off;
/// reversing its postings alone would leave it open, redeemable and counted against the credit
/// line while the receivable (or the chips it brought to a seat) is gone.
fn marker_not_corrected() -> Rejection {
    Rejection::new(correction_invalid("R-MARK-1"), "a marker is not corrected: redeem it, or write it off with an independent approver")
}

fn reversed(postings: &[Posting]) -> Vec<Posting> {
    postings.iter().map(|p| Posting::new(p.account.clone(), -p.amount_cents)).collect()
}

/// Patrons whose pockets a cage correction touches (their streams are loaded too).
pub fn pocket_owners(postings: &[Posting]) -> Vec<PlayerId> {
    let mut out: Vec<PlayerId> = Vec::new();
    for p in postings {
        if let Account::Pocket { player_id } = &p.account
            && !out.contains(player_id) {
                out.push(player_id.clone());
            }
    }
    out
}

#[allow(clippy::too_many_arguments)]
/// R-AUDIT-1 on a cage stream: reverse `original_postings` of a cage event (cage chips, cash,
/// markers, patrons' pockets, house accounts; table accounts are corrected on the table). A
/// pocket reversed gets a `PocketCorrected` on that patron's stream. Nothing may go negative.
pub fn decide_cage_correction(
    snapshot: &Snapshot,
    ctx: &CommandContext,
    cage: &CageState,
    cage_id: &CageId,
    reversed_event: &Reversed,
    approved_by: &str,
    reason: &str,
) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let Reversed { event_id: reverses_event_id, stream_version: reverses_stream_version, event_types: reverses_event_types, postings: original_postings, .. } =
        *reversed_event;
    check_request(ctx, reverses_event_id, approved_by, reason)?;
    check_not_corrected(&cage.corrected_event_ids, reverses_event_id)?;
    check_reversible(reverses_event_types, reverses_stream_version, cage.counted_through_version)?;
    if reverses_event_types.iter().any(|t| matches!(t.as_str(), "FillIssued" | "CreditReceived" | "SlipVoided")) {
        return Err(Rejection::new(correction_invalid("R-CHIP-3"), "a fill or credit is not corrected: void its slip (VoidSlip)"));
    }
    // R-CHIP-4: a cage's opening inventory is a count; a difference goes into the next count
    // (the corrections pass: an opening taken back left an open cage with nothing, which could
    // neither be opened again nor stocked).
    if reverses_event_types.iter().any(|t| t == "CageOpened") {
        return Err(Rejection::new(
            correction_invalid("R-CHIP-4"),
            "a cage's opening inventory is not corrected: count the cage (CountCageShift) and the difference is recorded",
        ));
    }
    // R-MARK-1: a marker's own events are not taken back, those with postings or without (a
    // marker to a seat posts at the table; its cage record had been refused for having no
    // postings, naming R-AUDIT-1).
    if is_marker(reverses_event_types, original_postings) {
        return Err(marker_not_corrected());
    }
    check_postings(original_postings)?;
    let foreign = original_postings.iter().any(|p| match &p.account {
        Account::CageChips { cage_id: c, .. } | Account::CageCash { cage_id: c } | Account::CageMarkers { cage_id: c } => c != cage_id,
        Account::Pocket { .. } | Account::House(_) => false,
        _ => true,
    });
    if foreign {
        return Err(Rejection::new(CORRECTION_INVALID, "a cage correction touches this cage, pockets and house accounts only"));
    }
    let postings = reversed(original_postings);
    let corrected = CageEvent::Corrected {
        reverses_event_id: reverses_event_id.to_string(),
        approved_by: approved_by.to_string(),
        reason: reason.to_string(),
        postings: postings.clone(),
    };
    let after = cage.clone().evolve(&corrected);
    if let Some(c) = after.chips.iter().find(|c| c.count < 0) {
        return Err(Rejection::new(CORRECTION_WOULD_GO_NEGATIVE, "a cage denomination would go negative")
            .with("denomination_cents", c.denomination_cents)
            .with("balance_cents", c.value_cents()));
    }
    if after.cash_cents < 0 || after.markers_receivable_cents < 0 {
        return Err(Rejection::new(CORRECTION_WOULD_GO_NEGATIVE, "cage cash or markers would go negative")
            .with("balance_cents", after.cash_cents.min(after.markers_receivable_cents)));
    }
    let mut out = vec![(StreamId::Cage(cage_id.clone()), Event::Cage(corrected))];
    out.extend(pocket_corrections(snapshot, reverses_event_id, &postings)?);
    let owners = pocket_owners(original_postings);
    let cash_patron = if owners.len() == 1 { owners.first() } else { None };
    out.extend(cash_record_corrected(snapshot, reversed_event, cash_patron, approved_by, reason)?);
    Ok(out)
}

/// What a player-stream correction takes back (player events move no chips: they are records).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum PlayerReversal {
    /// R-AUDIT-4: a cash transaction record (refused: the record follows the money).
    CashTransaction {
        gaming_day: String,
        direction: CashDirection,
        amount_cents: Cents,
        /// The day's total in that direction is back at or under the CTR threshold after a CTR
        /// was required: the next crossing requires one again.
        #[serde(default)]
        ctr_rearmed: bool,
    },
    /// R-REBUY-1: a departure (refused: it follows the cash-out's money). Departures taken
    /// back before this was refused stay taken back (`PlayerEvent::Corrected`).
    Departure { table_id: TableId, at_unix_ms: i64 },
    /// Any other record of a patron's stream (refused: it records chips a table or cage event
    /// moved, a marker, a credit line or a correction). Never recorded.
    Record { event_type: String },
}

/// R-AUDIT-1 on a player stream: the records a patron's stream holds are not taken back
/// alone, each for the rule it serves; the refusal names it. (A correction of chips is made
/// on the table or cage event that moved them.)
pub fn decide_player_correction(
    ctx: &CommandContext,
    player: &PlayerState,
    reverses_event_id: &str,
    approved_by: &str,
    reason: &str,
    reversal: &PlayerReversal,
) -> Result<PlayerEvent, Rejection> {
    check_request(ctx, reverses_event_id, approved_by, reason)?;
    check_not_corrected(&player.corrected_event_ids, reverses_event_id)?;
    Err(match reversal {
        // R-AUDIT-4: the record of cash follows the money. Taking it back alone would lower the
        // patron's day total (and the reports it requires) while the cash stays in the cage or
        // the drop; the money is corrected with the cage or table event that moved it.
        PlayerReversal::CashTransaction { amount_cents, .. } => Rejection::new(
            correction_invalid("R-AUDIT-4"),
            "a cash transaction record is not taken back alone: correct the cage or table event that moved the cash",
        )
        .with("amount_cents", *amount_cents),
        // R-REBUY-1: the departure follows the money too. The patron left with the chips the
        // cash-out moved, and that stands; taking the departure back alone lifted the wait
        // while the chips stayed in the pocket (the audit pass: out with $80, back for $40).
        // A patron who did not mean to leave comes back with at least those chips, which the
        // wait accepts.
        PlayerReversal::Departure { table_id, .. } => Rejection::new(
            correction_invalid("R-REBUY-1"),
            format!("a departure is not taken back alone: the patron left table {table_id} with the chips the cash-out moved"),
        ),
        // R-MARK-1: a marker is redeemed or written off, never taken back (at the cage, at the
        // table, or here on the patron's stream, where it had been refused naming no rule).
        PlayerReversal::Record { event_type } if event_type.starts_with("Marker") => marker_not_corrected(),
        // R-AUDIT-1: the other records follow a table or cage event (corrected there), or a
        // decision made again (a credit line is set again; a correction is not corrected).
        PlayerReversal::Record { event_type } => Rejection::new(
            correction_invalid("R-AUDIT-1"),
            format!(
                "a {event_type} on a patron's stream is not taken back alone: correct the table or cage event that moved the chips, \
                 or set a credit line again"
            ),
        ),
    })
}
