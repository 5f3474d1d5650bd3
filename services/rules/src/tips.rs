//! Tips (R-TIP-1): from a stack to the toke box while seated, up to a cap per tip — the de
//! minimis exception to table stakes.

use crate::accounts::{Account, Posting};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::Seat;
use crate::table::{TableEvent, TableState};

pub const TIP_ABOVE_CAP: Reason = Reason::new("TIP_ABOVE_CAP", "R-TIP-1");
pub const TIP_EXCEEDS_STACK: Reason = Reason::new("TIP_EXCEEDS_STACK", "R-TIP-1");

pub const REASONS: &[Reason] = &[TIP_ABOVE_CAP, TIP_EXCEEDS_STACK];

pub fn decide_tip(table: &TableState, seat: Seat, amount_cents: Cents) -> Result<TableEvent, Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    let s = crate::ledger::occupied(table, seat)?;
    crate::money::check_positive("amount_cents", amount_cents)?;
    // Tip chips may be smaller than the minimum playable chip, never smaller than the table's.
    config.chip_set.check_makes("amount_cents", amount_cents)?;
    if amount_cents > config.tip_cap_cents {
        return Err(Rejection::new(TIP_ABOVE_CAP, "a tip is limited to the table's cap")
            .with("amount_cents", amount_cents)
            .with("tip_cap_cents", config.tip_cap_cents));
    }
    // From chips: cash in play is cash until converted (R-STAKE-5).
    if amount_cents > s.chips_cents() {
        return Err(Rejection::new(TIP_EXCEEDS_STACK, "the stack's chips do not cover the tip (cash in play is converted first)")
            .with("amount_cents", amount_cents)
            .with("stack_cents", s.stack_cents)
            .with("cash_in_play_cents", s.cash_in_play_cents));
    }
    crate::iou::check_stays_on_table(table, amount_cents, 0)?;
    let postings = vec![
        Posting::new(Account::Seat { table_id: table_id.clone(), seat }, -amount_cents),
        Posting::new(Account::Toke { table_id: table_id.clone() }, amount_cents),
    ];
    Ok(TableEvent::Tipped { seat, amount_cents, postings })
}
