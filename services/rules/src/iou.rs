//! Open-stakes IOUs (R-MARK-2, R-MARK-3): in a private open-stakes game a player may bet with
//! an IOU only if every player still active in the pot accepts it (optionally any IOU below a
//! set amount is accepted); one who borrows to raise may not go all in that hand; IOUs in
//! play may not be taken off the table. Table-stakes games accept no IOUs.

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

pub const REASONS: &[Reason] = &[IOU_NOT_ALLOWED, IOU_NOT_ACCEPTED, IOU_OUTSTANDING, IOU_LENDER_IN_POT];

pub fn decide_iou(
    table: &TableState,
    seat: Seat,
    amount_cents: Cents,
    lender: Option<&PlayerId>,
    accepted_by: &[Seat],
    to_raise: bool,
) -> Result<TableEvent, Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    let StakesMode::OpenStakes { iou_auto_accept_below_cents } = &config.stakes else {
        return Err(Rejection::new(IOU_NOT_ALLOWED, "table-stakes games accept no IOUs"));
    };
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
    }
    let borrower = s.player_id.clone();
    let mut postings: Vec<Posting> = Vec::with_capacity(2);
    // The borrower's IOU account records the debt; the chips (value) go to the stack.
    crate::accounts::transfer(&mut postings, Account::Iou { player_id: borrower }, Account::Seat { table_id: table_id.clone(), seat }, amount_cents);
    Ok(TableEvent::IouWritten {
        seat,
        amount_cents,
        lender: lender.cloned(),
        accepted_by: accepted_by.to_vec(),
        to_raise,
        postings,
    })
}
