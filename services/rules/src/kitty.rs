//! The kitty (R-KITTY-1): the winner of a pot above a threshold contributes one minimum
//! playable chip; the kitty pays non-betting expenses only, each with a purpose, and never
//! goes negative.

use crate::accounts::{Account, Posting};
use crate::money::Cents;
use crate::pots::PotResult;
use crate::rejection::{Reason, Rejection};
use crate::table::{TableEvent, TableState};
use crate::config::{KittyFrom, TableConfig};

pub const KITTY_NOT_ENABLED: Reason = Reason::new("KITTY_NOT_ENABLED", "R-KITTY-1");
pub const KITTY_INSUFFICIENT: Reason = Reason::new("KITTY_INSUFFICIENT", "R-KITTY-1");
pub const KITTY_PURPOSE_REQUIRED: Reason = Reason::new("KITTY_PURPOSE_REQUIRED", "R-KITTY-1");
/// The kitty is to be shared among the seated players, and nobody is seated.
pub const KITTY_NOBODY_SEATED: Reason = Reason::new("KITTY_NOBODY_SEATED", "R-KITTY-1");

pub const REASONS: &[Reason] = &[KITTY_NOT_ENABLED, KITTY_INSUFFICIENT, KITTY_PURPOSE_REQUIRED, KITTY_NOBODY_SEATED];

/// Longest expense purpose kept.
pub const MAX_PURPOSE_LEN: usize = 200;

/// Take the kitty chips from the pots' winners as the policy says (`KittyFrom`): from the main
/// pot's first winner, from each pot's first winner, or from every winner of each pot. A pot
/// gives only when it was contested, is at least `min_pot_cents` (after uncalled chips go back)
/// and its winners won at least a chip.
pub fn kitty_take(config: &TableConfig, pots: &mut [PotResult]) -> Cents {
    let Some(k) = &config.kitty else { return 0 };
    let pots = match k.from {
        KittyFrom::MainPot => pots.get_mut(..1).unwrap_or_default(),
        KittyFrom::EachPot | KittyFrom::EachWinner => pots,
    };
    let givers = if k.from == KittyFrom::EachWinner { usize::MAX } else { 1 };
    pots.iter_mut().map(|pot| take_from_pot(config, pot, givers)).sum()
}

/// The kitty chip of a side pot paid at once to its one player (R-POT-3), unless only the main
/// pot gives (the wave-2 pass: a contested side pot paid early gave none under `EachPot`). Its
/// other awards are chips given back to folders, not won.
pub fn kitty_take_paid_at_once(config: &TableConfig, pot: &mut PotResult) -> Cents {
    match &config.kitty {
        Some(k) if k.from != KittyFrom::MainPot => take_from_pot(config, pot, 1),
        _ => 0,
    }
}

/// One chip from each of the pot's first `givers` awards that holds one, while its winners won
/// that much.
fn take_from_pot(config: &TableConfig, pot: &mut PotResult, givers: usize) -> Cents {
    let Some(k) = &config.kitty else { return 0 };
    let chip = config.chip_set.min_playable_chip_cents;
    let contested = pot.eligible.len() > 1 || pot.amount_cents > pot.returned_cents;
    if !contested || pot.amount_cents - pot.returned_cents < k.min_pot_cents {
        return 0;
    }
    // From what the pot's winners won, never from an uncalled bet handed back (R-POT-4; the
    // rake pass: a $5 jackpot drop left nothing won, and the chip came off the $2 returned).
    let mut won = pot.amount_cents - pot.returned_cents - pot.rake_cents - pot.jackpot_cents;
    let mut taken = 0;
    for (_, amount) in pot.awards.iter_mut().take(givers) {
        if won >= chip && *amount >= chip {
            *amount -= chip;
            won -= chip;
            taken += chip;
        }
    }
    taken
}

/// Pay an expense from the kitty.
pub fn decide_expense(table: &TableState, amount_cents: Cents, purpose: &str, to_dealer: bool) -> Result<TableEvent, Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    if config.kitty.is_none() {
        return Err(Rejection::new(KITTY_NOT_ENABLED, "this table has no kitty"));
    }
    // The close settled the kitty as configured (the flows pass: chips put back into a closed
    // game's kitty were paid out as an expense by one supervisor).
    if table.game_closed {
        return Err(Rejection::new(crate::table_stakes::GAME_CLOSED, "the game has ended: its kitty was settled at the close"));
    }
    crate::money::check_positive("amount_cents", amount_cents)?;
    // R-UNIT-2: the kitty box holds chips; an expense is paid in them.
    config.chip_set.check_playable("a kitty expense", amount_cents)?;
    if purpose.trim().is_empty() || purpose.len() > MAX_PURPOSE_LEN {
        return Err(Rejection::new(KITTY_PURPOSE_REQUIRED, "each kitty expense names its purpose (at most 200 chars)"));
    }
    if amount_cents > table.kitty_cents {
        return Err(Rejection::new(KITTY_INSUFFICIENT, "the kitty never goes negative")
            .with("amount_cents", amount_cents)
            .with("kitty_cents", table.kitty_cents));
    }
    // R-MARK-3: the kitty box is on the table; what it pays out is never IOU paper.
    crate::iou::check_stays_on_table(table, amount_cents, 0)?;
    let to = if to_dealer { Account::Toke { table_id: table_id.clone() } } else { Account::House(crate::accounts::HouseAccount::KittyExpenses) };
    let postings = vec![Posting::new(Account::Kitty { table_id: table_id.clone() }, -amount_cents), Posting::new(to, amount_cents)];
    Ok(TableEvent::KittyExpensePaid { amount_cents, purpose: purpose.to_string(), to_dealer, postings })
}

/// R-KITTY-1: the game ends: what is left in the kitty is settled as configured (shared among
/// the seated players in whole minimum chips with odd chips to the lowest seats, to the
/// dealers, or to the house); then no more hands, buy-ins or top-ups (the players cash out).
pub fn decide_close_game(table: &TableState) -> Result<TableEvent, Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    crate::ledger::between_hands(table)?;
    if table.game_closed {
        return Err(Rejection::new(crate::table_stakes::GAME_CLOSED, "the game has already ended"));
    }
    let leftover = config.kitty.as_ref().map(|k| k.leftover).unwrap_or_default();
    let kitty = table.kitty_cents;
    if leftover != crate::config::KittyLeftover::SplitAmongSeated {
        crate::iou::check_stays_on_table(table, kitty, 0)?;
    }
    let mut postings = Vec::new();
    if kitty > 0 {
        let from = Account::Kitty { table_id: table_id.clone() };
        match leftover {
            crate::config::KittyLeftover::ToDealers => {
                crate::accounts::transfer(&mut postings, from, Account::Toke { table_id: table_id.clone() }, kitty)
            }
            crate::config::KittyLeftover::ToHouse => {
                crate::accounts::transfer(&mut postings, from, Account::House(crate::accounts::HouseAccount::KittyExpenses), kitty)
            }
            crate::config::KittyLeftover::SplitAmongSeated => {
                // Among the players in the game: seats dealt a hand this session (the stakes pass:
                // four seats taken without chips a moment before the close took half the kitty).
                let seats: Vec<crate::streams::Seat> = table
                    .seats
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.as_ref().is_some_and(|s| s.dealt_this_session()))
                    .map(|(i, _)| (i + 1) as crate::streams::Seat)
                    .collect();
                if seats.is_empty() {
                    return Err(Rejection::new(
                        KITTY_NOBODY_SEATED,
                        "the kitty is shared among the seated players dealt in this session: close the game before they leave",
                    )
                    .with("kitty_cents", kitty));
                }
                let chip = config.chip_set.min_playable_chip_cents;
                let (units, dust) = (kitty / chip, kitty % chip);
                let n = seats.len() as Cents;
                postings.push(Posting::new(from, -kitty));
                for (i, seat) in seats.iter().enumerate() {
                    let mut share = (units / n) * chip + if (i as Cents) < units % n { chip } else { 0 };
                    if i == 0 {
                        share += dust;
                    }
                    if share > 0 {
                        postings.push(Posting::new(Account::Seat { table_id: table_id.clone(), seat: *seat }, share));
                    }
                }
            }
        }
    }
    Ok(TableEvent::GameClosed { kitty_cents: kitty, leftover, postings })
}
