//! Accounts and double-entry postings (R-UNIT-3, R-UNIT-4).
//!
//! A positive balance means the account holds that value (chips, cash, a receivable). Value
//! that enters or leaves the property is booked against the house accounts (`house/patrons`
//! for cash and credit from and to patrons, `house/chip-stock` for chips put into or taken out
//! of circulation), so the sum over every account is zero at every position of the log.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::{CageId, PlayerId, Seat, TableId};

pub const POSTINGS_UNBALANCED: Reason = Reason::new("POSTINGS_UNBALANCED", "R-UNIT-3");
pub const INVALID_ACCOUNT: Reason = Reason::new("INVALID_ACCOUNT", "R-UNIT-3");
pub const REASONS: &[Reason] = &[POSTINGS_UNBALANCED, INVALID_ACCOUNT];

/// House-level accounts (outside any table, cage or patron).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HouseAccount {
    /// Cash and credit exchanged with patrons (the outside world). Negative = received.
    Patrons,
    /// Chips put into circulation (a cage's opening chip stock) or withdrawn.
    ChipStock,
    /// Cash float given to a cage at opening.
    Bank,
    /// Drop boxes emptied at shift close go to the count room.
    CountRoom,
    /// Kitty expenses paid out of the game (decks, rent) (R-KITTY-1).
    KittyExpenses,
    /// Markers written off (R-MARK-1).
    BadDebt,
    /// Count overages and shortages of tables and cages (R-CHIP-4): counted minus book.
    CountVariance,
    /// The dealers' tips taken from the toke boxes at shift close (R-TIP-1), for the toke pool.
    Tokes,
    /// A stack moved by the house between tables (R-STAKE-6): the table left posts it here and
    /// the table joined takes it, in the same decision (back at zero after every move), so each
    /// table's own events carry its own side of the move.
    Moves,
}

impl HouseAccount {
    fn name(self) -> &'static str {
        match self {
            HouseAccount::Patrons => "patrons",
            HouseAccount::ChipStock => "chip-stock",
            HouseAccount::Bank => "bank",
            HouseAccount::CountRoom => "count-room",
            HouseAccount::KittyExpenses => "kitty-expenses",
            HouseAccount::BadDebt => "bad-debt",
            HouseAccount::CountVariance => "count-variance",
            HouseAccount::Tokes => "tokes",
            HouseAccount::Moves => "moves",
        }
    }
    const ALL: [HouseAccount; 9] = [
        HouseAccount::Patrons,
        HouseAccount::ChipStock,
        HouseAccount::Bank,
        HouseAccount::CountRoom,
        HouseAccount::KittyExpenses,
        HouseAccount::BadDebt,
        HouseAccount::CountVariance,
        HouseAccount::Tokes,
        HouseAccount::Moves,
    ];
}

/// Every chip or cash account of R-UNIT-3. `key()` gives the stable string form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Account {
    /// `table/T1/seat/3`: the stack in front of a seat.
    Seat { table_id: TableId, seat: Seat },
    /// `table/T1/tray/500`: the dealer's chip bank, one account per denomination.
    Tray { table_id: TableId, denomination_cents: Cents },
    /// `table/T1/drop`: cash dropped at the table.
    Drop { table_id: TableId },
    /// `table/T1/rake`: rake and time collection (house revenue).
    Rake { table_id: TableId },
    /// `table/T1/toke`: dealer tips.
    Toke { table_id: TableId },
    /// `table/T1/kitty`: the players' kitty (R-KITTY-1).
    Kitty { table_id: TableId },
    /// `table/T1/jackpot`: jackpot/promotion fund, a liability to players (R-RAKE-2).
    Jackpot { table_id: TableId },
    /// `table/T1/pot/0`: the chips in the middle of the hand in play. Bets and posts go to pot 0;
    /// the layering into main and side pots is computed at settlement (see `pots`).
    Pot { table_id: TableId, pot_index: u8 },
    /// `player/P7/pocket`: chips the patron holds off the table (chip liability).
    Pocket { player_id: PlayerId },
    /// `player/P7/iou`: IOUs the patron wrote in open-stakes games (R-MARK-3); negative = owed.
    Iou { player_id: PlayerId },
    /// `cage/MAIN/chips/500`: cage chip inventory by denomination.
    CageChips { cage_id: CageId, denomination_cents: Cents },
    /// `cage/MAIN/cash`.
    CageCash { cage_id: CageId },
    /// `cage/MAIN/markers`: marker receivable (R-MARK-1).
    CageMarkers { cage_id: CageId },
    /// `house/patrons`, `house/chip-stock`, ...
    House(HouseAccount),
}

impl Account {
    /// Stable string form, e.g. `table/T1/seat/3`.
    pub fn key(&self) -> String {
        match self {
            Account::Seat { table_id, seat } => format!("table/{table_id}/seat/{seat}"),
            Account::Tray { table_id, denomination_cents } => format!("table/{table_id}/tray/{denomination_cents}"),
            Account::Drop { table_id } => format!("table/{table_id}/drop"),
            Account::Rake { table_id } => format!("table/{table_id}/rake"),
            Account::Toke { table_id } => format!("table/{table_id}/toke"),
            Account::Kitty { table_id } => format!("table/{table_id}/kitty"),
            Account::Jackpot { table_id } => format!("table/{table_id}/jackpot"),
            Account::Pot { table_id, pot_index } => format!("table/{table_id}/pot/{pot_index}"),
            Account::Pocket { player_id } => format!("player/{player_id}/pocket"),
            Account::Iou { player_id } => format!("player/{player_id}/iou"),
            Account::CageChips { cage_id, denomination_cents } => format!("cage/{cage_id}/chips/{denomination_cents}"),
            Account::CageCash { cage_id } => format!("cage/{cage_id}/cash"),
            Account::CageMarkers { cage_id } => format!("cage/{cage_id}/markers"),
            Account::House(h) => format!("house/{}", h.name()),
        }
    }

    /// The table this account belongs to, if any.
    pub fn table_id(&self) -> Option<&TableId> {
        match self {
            Account::Seat { table_id, .. }
            | Account::Tray { table_id, .. }
            | Account::Drop { table_id }
            | Account::Rake { table_id }
            | Account::Toke { table_id }
            | Account::Kitty { table_id }
            | Account::Jackpot { table_id }
            | Account::Pot { table_id, .. } => Some(table_id),
            _ => None,
        }
    }

    /// R-UNIT-4: accounts that must never go negative. House accounts, the patron IOU account
    /// (a debt) and the cage's external-facing accounts may.
    pub fn must_stay_non_negative(&self) -> bool {
        !matches!(self, Account::House(_) | Account::Iou { .. })
    }
}

impl fmt::Display for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}

fn bad_account(s: &str) -> Rejection {
    Rejection::new(INVALID_ACCOUNT, format!("unknown account key {s:?}"))
}

impl FromStr for Account {
    type Err = Rejection;
    fn from_str(s: &str) -> Result<Account, Rejection> {
        let parts: Vec<&str> = s.split('/').collect();
        // Numbers as keys write them: positive, no sign, no leading zero (a key read otherwise
        // names no account the ledger ever posts to: `tray/-100` and `seat/03` had answered 0).
        let num = |p: &str| p.parse::<i64>().ok().filter(|n| *n > 0 && n.to_string() == p).ok_or_else(|| bad_account(s));
        let seat = |p: &str| p.parse::<Seat>().ok().filter(|n| *n > 0 && n.to_string() == p).ok_or_else(|| bad_account(s));
        let account = match parts.as_slice() {
            ["table", t, "seat", n] => Account::Seat { table_id: TableId::new(*t)?, seat: seat(n)? },
            ["table", t, "tray", d] => Account::Tray { table_id: TableId::new(*t)?, denomination_cents: num(d)? },
            ["table", t, "drop"] => Account::Drop { table_id: TableId::new(*t)? },
            ["table", t, "rake"] => Account::Rake { table_id: TableId::new(*t)? },
            ["table", t, "toke"] => Account::Toke { table_id: TableId::new(*t)? },
            ["table", t, "kitty"] => Account::Kitty { table_id: TableId::new(*t)? },
            ["table", t, "jackpot"] => Account::Jackpot { table_id: TableId::new(*t)? },
            ["table", t, "pot", n] => Account::Pot {
                table_id: TableId::new(*t)?,
                pot_index: n.parse::<u8>().map_err(|_| bad_account(s))?,
            },
            ["player", p, "pocket"] => Account::Pocket { player_id: PlayerId::new(*p)? },
            ["player", p, "iou"] => Account::Iou { player_id: PlayerId::new(*p)? },
            ["cage", c, "chips", d] => Account::CageChips { cage_id: CageId::new(*c)?, denomination_cents: num(d)? },
            ["cage", c, "cash"] => Account::CageCash { cage_id: CageId::new(*c)? },
            ["cage", c, "markers"] => Account::CageMarkers { cage_id: CageId::new(*c)? },
            ["house", h] => Account::House(
                HouseAccount::ALL.into_iter().find(|a| a.name() == *h).ok_or_else(|| bad_account(s))?,
            ),
            _ => return Err(bad_account(s)),
        };
        Ok(account)
    }
}

impl Serialize for Account {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.key())
    }
}

impl<'de> Deserialize<'de> for Account {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Account, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One leg of a double-entry movement. Positive = the account receives value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Posting {
    pub account: Account,
    pub amount_cents: Cents,
}

impl Posting {
    pub fn new(account: Account, amount_cents: Cents) -> Posting {
        Posting { account, amount_cents }
    }
}

/// A transfer of `amount_cents` from one account to another: two postings.
pub fn transfer(postings: &mut Vec<Posting>, from: Account, to: Account, amount_cents: Cents) {
    if amount_cents != 0 {
        postings.push(Posting::new(from, -amount_cents));
        postings.push(Posting::new(to, amount_cents));
    }
}

/// R-UNIT-3: the postings of one event sum to zero.
pub fn check_balanced(postings: &[Posting]) -> Result<(), Rejection> {
    // Postings can come from outside the core (a correction names the reversed event's), so
    // the sum is checked: an overflowing list is unbalanced, not wrapped into balance.
    match postings.iter().try_fold(0 as Cents, |sum, p| sum.checked_add(p.amount_cents)) {
        Some(0) => Ok(()),
        Some(sum) => Err(Rejection::new(POSTINGS_UNBALANCED, "postings do not sum to zero").with("sum_cents", sum)),
        None => Err(Rejection::new(POSTINGS_UNBALANCED, "postings overflow the amount range")),
    }
}
