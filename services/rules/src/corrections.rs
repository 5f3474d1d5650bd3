//! Corrections (R-AUDIT-1, R-BET-13): events are never updated or deleted; a correction is a
//! new event that reverses the postings of the one it references and names its approver.

use crate::accounts::Posting;
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::table::{TableEvent, TableState};
use crate::CommandContext;

pub const CORRECTION_APPROVER_REQUIRED: Reason = Reason::new("CORRECTION_APPROVER_REQUIRED", "R-AUDIT-1");
pub const CORRECTION_INVALID: Reason = Reason::new("CORRECTION_INVALID", "R-AUDIT-1");
pub const CORRECTION_WOULD_GO_NEGATIVE: Reason = Reason::new("CORRECTION_WOULD_GO_NEGATIVE", "R-UNIT-4");

pub const REASONS: &[Reason] = &[CORRECTION_APPROVER_REQUIRED, CORRECTION_INVALID, CORRECTION_WOULD_GO_NEGATIVE];

/// Longest list of postings a correction may reverse (bound).
pub const MAX_CORRECTION_POSTINGS: usize = 64;

/// Reverse `original_postings` of event `reverses_event_id` (supplied by the caller from the
/// store) on this table, between hands. The reversal must keep every balance non-negative.
pub fn decide_correction(
    table: &TableState,
    ctx: &CommandContext,
    reverses_event_id: &str,
    original_postings: &[Posting],
    approved_by: &str,
    reason: &str,
) -> Result<TableEvent, Rejection> {
    let (table_id, _) = crate::ledger::open_table(table)?;
    crate::ledger::between_hands(table)?;
    if approved_by.trim().is_empty() || approved_by == ctx.actor.id {
        return Err(Rejection::new(CORRECTION_APPROVER_REQUIRED, "a correction names an approver other than the actor"));
    }
    if reverses_event_id.trim().is_empty() || reason.trim().is_empty() || original_postings.is_empty() || original_postings.len() > MAX_CORRECTION_POSTINGS {
        return Err(Rejection::new(CORRECTION_INVALID, "a correction references the event, gives a reason and reverses 1..=64 postings"));
    }
    crate::accounts::check_balanced(original_postings)?;
    if original_postings.iter().any(|p| p.account.table_id().is_some_and(|t| t != table_id)) {
        return Err(Rejection::new(CORRECTION_INVALID, "the postings belong to another table"));
    }
    let postings: Vec<Posting> = original_postings.iter().map(|p| Posting::new(p.account.clone(), -p.amount_cents)).collect();
    // Check the effect on this table's accounts.
    let after = table.clone().evolve(&TableEvent::Corrected {
        reverses_event_id: reverses_event_id.to_string(),
        approved_by: approved_by.to_string(),
        reason: reason.to_string(),
        postings: postings.clone(),
    });
    if let Some(neg) = after.balances().into_iter().find(|b| b.amount_cents < 0 && b.account.must_stay_non_negative()) {
        return Err(Rejection::new(CORRECTION_WOULD_GO_NEGATIVE, format!("{} would go negative", neg.account))
            .with("balance_cents", neg.amount_cents as Cents));
    }
    if postings.iter().any(|p| matches!(p.account, crate::accounts::Account::Seat { seat, .. } if after.seat(seat).is_none())) {
        return Err(Rejection::new(CORRECTION_INVALID, "the seat is empty now; correct through the player's current seat"));
    }
    Ok(TableEvent::Corrected {
        reverses_event_id: reverses_event_id.to_string(),
        approved_by: approved_by.to_string(),
        reason: reason.to_string(),
        postings,
    })
}
