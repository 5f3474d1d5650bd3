//! Open-stakes IOUs (R-MARK-2, R-MARK-3): in a private open-stakes game a player may bet with
//! an IOU only if every player still active in the pot accepts it (optionally any IOU below a
//! set amount is accepted); one who borrows to raise may not go all in that hand; IOUs in
//! play may not be taken off the table. Table-stakes games accept no IOUs.
//!
//! An IOU payable to the pot's winner is paper: it adds to the writer's stack chips the cage
//! never sold (the debt is booked to `player/<id>/iou`). Until the writer pays it, the chips in
//! front of the players and in the pot never fall below the paper at the table
//! ([`check_stays_on_table`]), so whatever leaves the table (a cash-out, a tip, a move, a time
//! charge) is chips the cage sold, and the cage never pays cash on an IOU. A loan from another
//! player of the table moves the lender's own chips to the borrower; the seat records the debt
//! ([`crate::table::Loan`]) until it is paid back to the lender's stack.

use crate::accounts::{Account, Posting};
use crate::config::StakesMode;
use crate::hand::InHand;
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::{PlayerId, Seat};
use crate::table::{TableEvent, TableState};

pub const IOU_NOT_ALLOWED: Reason = Reason::new("IOU_NOT_ALLOWED", "R-MARK-2");
pub const IOU_NOT_ACCEPTED: Reason = Reason::new("IOU_NOT_ACCEPTED", "R-MARK-3");
pub const IOU_OUTSTANDING: Reason = Reason::new("IOU_OUTSTANDING", "R-MARK-3");
pub const IOU_LENDER_IN_POT: Reason = Reason::new("IOU_LENDER_IN_POT", "R-MARK-3");
pub const IOU_LENDER_NOT_SEATED: Reason = Reason::new("IOU_LENDER_NOT_SEATED", "R-MARK-3");
pub const IOU_IN_PLAY: Reason = Reason::new("IOU_IN_PLAY", "R-MARK-3");

pub const REASONS: &[Reason] = &[IOU_NOT_ALLOWED, IOU_NOT_ACCEPTED, IOU_OUTSTANDING, IOU_LENDER_IN_POT, IOU_LENDER_NOT_SEATED, IOU_IN_PLAY];

/// The paper at the table: IOUs payable to the pot's winner, written at its seats and unpaid.
pub fn paper_cents(table: &TableState) -> Cents {
    table.seats.iter().flatten().map(|s| s.iou_cents.max(0)).sum()
}

/// The chips at the table: in front of the players, in the pot and in the kitty box.
fn chips_at(table: &TableState) -> Cents {
    table.seats.iter().flatten().map(|s| s.stack_cents).sum::<Cents>() + table.pot_cents + table.kitty_cents
}

/// R-MARK-3, IOUs in play may not be taken off the table: `leaving_cents` may leave the table
/// (and the writer pay `settled_cents` of paper with them) only if the chips left at the table
/// still cover the paper left there.
pub fn check_stays_on_table(table: &TableState, leaving_cents: Cents, settled_cents: Cents) -> Result<(), Rejection> {
    let paper = paper_cents(table) - settled_cents;
    if paper <= 0 || leaving_cents <= 0 {
        return Ok(());
    }
    let chips = chips_at(table) - settled_cents;
    if chips - leaving_cents >= paper {
        return Ok(());
    }
    Err(in_play(table, leaving_cents, chips, paper))
}

/// R-MARK-3 for a change judged on the state it leaves (a correction): chips may leave the
/// table only while what stays covers the paper.
pub fn check_still_covered(before: &TableState, after: &TableState) -> Result<(), Rejection> {
    let paper = paper_cents(after);
    let (was, now) = (chips_at(before), chips_at(after));
    if paper <= 0 || now >= was || now >= paper {
        return Ok(());
    }
    Err(in_play(before, was - now, was, paper))
}

fn in_play(table: &TableState, leaving_cents: Cents, chips_cents: Cents, paper_cents: Cents) -> Rejection {
    let writer = table.seats.iter().position(|s| s.as_ref().is_some_and(|s| s.iou_cents > 0)).map_or(0, |i| i as Cents + 1);
    Rejection::new(IOU_IN_PLAY, "IOUs in play may not be taken off the table: the chips left would not cover the IOUs unpaid here; the writer pays first")
        .with("leaving_cents", leaving_cents)
        .with("table_chips_cents", chips_cents)
        .with("iou_in_play_cents", paper_cents)
        .with("writer_seat", writer)
}

/// R-MARK-3: a loan from a player still seated at the table is paid back before the borrower
/// takes the seat's chips away (a lender who left is owed away from the table).
pub fn check_loans_paid(table: &TableState, seat: Seat) -> Result<(), Rejection> {
    let Some(s) = table.seat(seat) else { return Ok(()) };
    for loan in &s.loans {
        if let Some(lender_seat) = seat_of(table, &loan.lender) {
            return Err(Rejection::new(IOU_OUTSTANDING, "a loan from a player at the table is paid back first (SettleIou naming the lender)")
                .with("loan_cents", loan.amount_cents)
                .with("lender_seat", lender_seat as Cents));
        }
    }
    Ok(())
}

fn seat_of(table: &TableState, player_id: &PlayerId) -> Option<Seat> {
    table.seats.iter().position(|s| s.as_ref().is_some_and(|s| &s.player_id == player_id)).map(|i| (i + 1) as Seat)
}

/// R-MARK-3: pay back `amount_cents` of the loan `lender` made to `seat`, from its stack or
/// from the patron's pocket, to the lender's stack at this table.
pub fn settle_loan(table: &TableState, table_id: &crate::streams::TableId, seat: Seat, lender: &PlayerId, amount_cents: Cents, source: Account) -> Result<Vec<Posting>, Rejection> {
    let s = crate::ledger::occupied(table, seat)?;
    let owed = s.loans.iter().find(|l| &l.lender == lender).map_or(0, |l| l.amount_cents);
    if amount_cents > owed {
        return Err(Rejection::new(IOU_OUTSTANDING, "more than the seat owes the lender")
            .with("amount_cents", amount_cents)
            .with("loan_cents", owed));
    }
    let Some(lender_seat) = seat_of(table, lender) else {
        return Err(Rejection::new(IOU_LENDER_NOT_SEATED, "a loan is paid back at the table to the lender's stack; the lender has left it"));
    };
    // R-STAKE-1: nothing reaches the stack of a player live in a hand.
    crate::ledger::not_live_in_hand(table, lender_seat)?;
    let mut postings = Vec::with_capacity(2);
    crate::accounts::transfer(&mut postings, source, Account::Seat { table_id: table_id.clone(), seat: lender_seat }, amount_cents);
    Ok(postings)
}

pub fn decide_iou(
    table: &TableState,
    seat: Seat,
    amount_cents: Cents,
    lender: Option<&PlayerId>,
    accepted_by: &[Seat],
    to_raise: bool,
) -> Result<TableEvent, Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    let StakesMode::OpenStakes { iou_auto_accept_below_cents, ious_allowed } = &config.stakes else {
        return Err(Rejection::new(IOU_NOT_ALLOWED, "table-stakes games accept no IOUs"));
    };
    if !ious_allowed {
        return Err(Rejection::new(IOU_NOT_ALLOWED, "this open-stakes game buys chips for cash only, never with IOUs or loans")
            .with("seat", seat as Cents));
    }
    let s = crate::ledger::occupied(table, seat)?;
    crate::rebuy::check_full_rebuy(s, config.buy_in.min_cents, None)?;
    crate::money::check_positive("amount_cents", amount_cents)?;
    if !config.chip_set.is_playable(amount_cents) {
        return Err(Rejection::new(crate::money::NOT_MULTIPLE_OF_MIN_CHIP, "IOUs are whole minimum chips").with("amount_cents", amount_cents));
    }
    if let Some(hand) = &table.hand {
        if let Some(p) = hand.player(seat)
            && p.status != InHand::Active {
                return Err(Rejection::new(IOU_NOT_ALLOWED, "only an active player borrows during a hand"));
            }
        if let Some(lender) = lender {
            // R-MARK-3 (seeds: "borrow ... from a player not involved in the pot ... which the
            // players in the pot are then compelled to accept"): the lender is nobody still in
            // the pot, and the marker needs no acceptance.
            let in_pot = hand
                .players
                .iter()
                .filter(|p| p.status != InHand::Folded)
                .find(|p| table.seat(p.seat).is_some_and(|held| &held.player_id == lender));
            if let Some(p) = in_pot {
                return Err(Rejection::new(IOU_LENDER_IN_POT, "the lender of an IOU is a player not in the pot")
                    .with("lender_seat", p.seat as Cents));
            }
        } else if amount_cents >= *iou_auto_accept_below_cents {
            // Every other player still active in the pot must accept.
            let missing: Vec<Seat> = hand
                .players
                .iter()
                .filter(|p| p.seat != seat && p.status != InHand::Folded && !accepted_by.contains(&p.seat))
                .map(|p| p.seat)
                .collect();
            if let Some(first) = missing.first() {
                return Err(Rejection::new(IOU_NOT_ACCEPTED, "every player still in the pot must accept the IOU")
                    .with("first_missing_seat", *first as Cents)
                    .with("missing", missing.len() as Cents));
            }
        }
    } else {
        // Between hands an IOU is chips on credit for the hands to come: only beside chips
        // bought this session (never the first chips of a session, which the buy-in limits and
        // the re-buy wait judge), and, as paper, accepted by every other player in the game.
        if !s.has_bought_in {
            return Err(Rejection::new(crate::table_stakes::NOT_BOUGHT_IN, "an IOU plays beside chips bought this session: buy in first")
                .with("seat", seat as Cents));
        }
        if lender.is_none() && amount_cents >= *iou_auto_accept_below_cents {
            let missing: Vec<Seat> = (1..=table.seats.len() as Seat)
                .filter(|other| *other != seat && table.seat(*other).is_some_and(|o| !o.sitting_out) && !accepted_by.contains(other))
                .collect();
            if let Some(first) = missing.first() {
                return Err(Rejection::new(IOU_NOT_ACCEPTED, "between hands every other player in the game accepts the IOU")
                    .with("first_missing_seat", *first as Cents)
                    .with("missing", missing.len() as Cents));
            }
        }
    }
    // A loan is the lender's own chips: the lender sits at this table and is another player.
    let lender_seat = match lender {
        None => None,
        Some(lender) => match seat_of(table, lender) {
            Some(at) if at != seat => Some(at),
            Some(_) => return Err(Rejection::new(IOU_LENDER_NOT_SEATED, "a player does not lend to themselves")),
            None => {
                return Err(Rejection::new(IOU_LENDER_NOT_SEATED, "the lender is a player seated at this table (their chips are lent)"));
            }
        },
    };
    let borrower = s.player_id.clone();
    let mut postings: Vec<Posting> = Vec::with_capacity(2);
    let to = Account::Seat { table_id: table_id.clone(), seat };
    match lender_seat {
        // The lender's chips move; the seat records what it owes the lender.
        Some(from) => {
            let lent_from = crate::ledger::occupied(table, from)?;
            if lent_from.stack_cents - lent_from.cash_in_play_cents < amount_cents {
                return Err(Rejection::new(crate::betting::BET_EXCEEDS_STACK, "the lender's chips do not cover the loan")
                    .with("amount_cents", amount_cents)
                    .with("lender_stack_cents", lent_from.stack_cents - lent_from.cash_in_play_cents));
            }
            crate::accounts::transfer(&mut postings, Account::Seat { table_id: table_id.clone(), seat: from }, to, amount_cents);
        }
        // Paper: the borrower's IOU account records the debt; the chips go to the stack.
        None => crate::accounts::transfer(&mut postings, Account::Iou { player_id: borrower }, to, amount_cents),
    }
    // R-MARK-3: what the chips are for is what the stack says, not what the caller declares: a
    // stack that covers the call borrows to raise (declared "to call", such an IOU had kept the
    // all-in for a raise only the borrowed chips allowed: the second betting pass).
    let covers_the_call = table.hand.as_ref().and_then(|hand| {
        let p = hand.player(seat)?;
        Some(s.stack_cents >= hand.round.bet_to_cents - p.round_cents)
    });
    let to_raise = to_raise || covers_the_call == Some(true);
    Ok(TableEvent::IouWritten {
        seat,
        amount_cents,
        lender: lender.cloned(),
        lender_seat,
        accepted_by: accepted_by.to_vec(),
        to_raise,
        postings,
    })
}
