//! The kitty (R-KITTY-1): the winner of a pot above a threshold contributes one minimum
//! playable chip; the kitty pays non-betting expenses only, each with a purpose, and never
//! goes negative.

use crate::accounts::{Account, Posting};
use crate::money::Cents;
use crate::pots::PotResult;
use crate::rejection::{Reason, Rejection};
use crate::table::{TableEvent, TableState};
use crate::config::TableConfig;

pub const KITTY_NOT_ENABLED: Reason = Reason::new("KITTY_NOT_ENABLED", "R-KITTY-1");
pub const KITTY_INSUFFICIENT: Reason = Reason::new("KITTY_INSUFFICIENT", "R-KITTY-1");
pub const KITTY_PURPOSE_REQUIRED: Reason = Reason::new("KITTY_PURPOSE_REQUIRED", "R-KITTY-1");

pub const REASONS: &[Reason] = &[KITTY_NOT_ENABLED, KITTY_INSUFFICIENT, KITTY_PURPOSE_REQUIRED];

/// Longest expense purpose kept.
pub const MAX_PURPOSE_LEN: usize = 200;

/// Take the kitty chip from the main pot's first winner, if the main pot qualifies.
pub fn kitty_take(config: &TableConfig, pots: &mut [PotResult]) -> Cents {
    let Some(k) = &config.kitty else { return 0 };
    let chip = config.chip_set.min_playable_chip_cents;
    let Some(main) = pots.first_mut() else { return 0 };
    let contested = main.eligible.len() > 1 || main.amount_cents > main.returned_cents;
    if !contested || main.amount_cents - main.returned_cents < k.min_pot_cents {
        return 0;
    }
    match main.awards.first_mut() {
        Some((_, amount)) if *amount >= chip => {
            *amount -= chip;
            chip
        }
        _ => 0,
    }
}

/// Pay an expense from the kitty.
pub fn decide_expense(table: &TableState, amount_cents: Cents, purpose: &str, to_dealer: bool) -> Result<TableEvent, Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    if config.kitty.is_none() {
        return Err(Rejection::new(KITTY_NOT_ENABLED, "this table has no kitty"));
    }
    crate::money::check_positive("amount_cents", amount_cents)?;
    if purpose.trim().is_empty() || purpose.len() > MAX_PURPOSE_LEN {
        return Err(Rejection::new(KITTY_PURPOSE_REQUIRED, "each kitty expense names its purpose (at most 200 chars)"));
    }
    if amount_cents > table.kitty_cents {
        return Err(Rejection::new(KITTY_INSUFFICIENT, "the kitty never goes negative")
            .with("amount_cents", amount_cents)
            .with("kitty_cents", table.kitty_cents));
    }
    let to = if to_dealer { Account::Toke { table_id: table_id.clone() } } else { Account::House(crate::accounts::HouseAccount::KittyExpenses) };
    let postings = vec![Posting::new(Account::Kitty { table_id: table_id.clone() }, -amount_cents), Posting::new(to, amount_cents)];
    Ok(TableEvent::KittyExpensePaid { amount_cents, purpose: purpose.to_string(), to_dealer, postings })
}
