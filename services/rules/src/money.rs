//! Money and chips (R-UNIT-1, R-UNIT-2).
//!
//! Every amount is an integer number of cents (`Cents`). A table plays with a [`ChipSet`]:
//! the denominations it uses and its *minimum playable chip*, the smallest chip that may be
//! bet, posted, raked or collected. Smaller chips (tip chips) never play.

use serde::{Deserialize, Serialize};

use crate::rejection::{Reason, Rejection};

/// R-UNIT-1: integer minor units (cents). Never a float.
pub type Cents = i64;

/// Largest amount accepted in any command: $10,000,000,000. Keeps every sum far from overflow.
pub const MAX_AMOUNT_CENTS: Cents = 1_000_000_000_000;

/// Largest number of denominations in a chip set.
pub const MAX_DENOMINATIONS: usize = 16;

pub const AMOUNT_NOT_POSITIVE: Reason = Reason::new("AMOUNT_NOT_POSITIVE", "R-UNIT-1");
pub const AMOUNT_TOO_LARGE: Reason = Reason::new("AMOUNT_TOO_LARGE", "R-UNIT-1");
pub const NOT_MULTIPLE_OF_MIN_CHIP: Reason = Reason::new("NOT_MULTIPLE_OF_MIN_CHIP", "R-UNIT-2");
pub const UNKNOWN_DENOMINATION: Reason = Reason::new("UNKNOWN_DENOMINATION", "R-UNIT-2");
pub const INVALID_CHIP_SET: Reason = Reason::new("INVALID_CHIP_SET", "R-UNIT-2");
/// An amount no set of the table's chips makes (a 50-cent tip where the smallest chip is $1).
pub const NOT_IN_TABLE_CHIPS: Reason = Reason::new("NOT_IN_TABLE_CHIPS", "R-UNIT-2");
/// A chip list naming a denomination twice: every holder's count is judged on the whole list,
/// which the split hid (R-UNIT-4: a cage issued 20 chips of the 10 it held, in two entries).
pub const DENOMINATION_LISTED_TWICE: Reason = Reason::new("DENOMINATION_LISTED_TWICE", "R-UNIT-4");

pub const REASONS: &[Reason] = &[
    AMOUNT_NOT_POSITIVE,
    AMOUNT_TOO_LARGE,
    NOT_MULTIPLE_OF_MIN_CHIP,
    UNKNOWN_DENOMINATION,
    INVALID_CHIP_SET,
    NOT_IN_TABLE_CHIPS,
    DENOMINATION_LISTED_TWICE,
];

/// `-1234567` -> `-12,345.67`: cents as money with thousands grouped, exact (no floating
/// point). The one money formatter of the CLI and the console.
pub fn format_cents(cents: Cents) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let magnitude = cents.unsigned_abs();
    let whole = (magnitude / 100).to_string();
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (index, digit) in whole.chars().enumerate() {
        if index > 0 && (whole.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}.{:02}", magnitude % 100)
}

/// `200`, `200.5`, `200.50`, `1,000.00` -> cents: an amount of money as people write it, exact
/// (no floating point). The error names the expected form.
pub fn parse_money(text: &str) -> Result<Cents, String> {
    let expected = || format!("expected an amount like 200 or 200.50, got {text:?}");
    let trimmed = text.trim();
    let (whole, fraction) = trimmed.split_once('.').unwrap_or((trimmed, ""));
    let groups: Vec<&str> = whole.split(',').collect();
    let grouped_right = groups.len() == 1
        || (!groups[0].is_empty() && groups[0].len() <= 3 && groups[1..].iter().all(|group| group.len() == 3));
    let whole: String = groups.concat();
    if whole.is_empty() || !grouped_right || !whole.bytes().all(|byte| byte.is_ascii_digit()) || whole.len() > 13 {
        return Err(expected());
    }
    if fraction.len() > 2 || !fraction.bytes().all(|byte| byte.is_ascii_digit()) || (trimmed.contains('.') && fraction.is_empty()) {
        return Err(expected());
    }
    let units: Cents = whole.parse().map_err(|_| expected())?;
    let cents: Cents = format!("{fraction:0<2}").parse().map_err(|_| expected())?;
    let amount = units.checked_mul(100).and_then(|value| value.checked_add(cents)).ok_or_else(expected)?;
    if amount > MAX_AMOUNT_CENTS {
        return Err(format!("{text:?} is more than the largest amount accepted ({})", format_cents(MAX_AMOUNT_CENTS)));
    }
    Ok(amount)
}

/// A count of chips of one denomination, e.g. 4 x $25 = `ChipCount { denomination_cents: 2500, count: 4 }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipCount {
    pub denomination_cents: Cents,
    pub count: i64,
}

impl ChipCount {
    pub fn value_cents(&self) -> Cents {
        self.denomination_cents * self.count
    }
}

/// Total value of a list of chip counts.
pub fn chips_value_cents(chips: &[ChipCount]) -> Cents {
    chips.iter().map(ChipCount::value_cents).sum()
}

/// For `skip_serializing_if`: an amount that is nothing is not written.
pub fn is_zero(amount_cents: &Cents) -> bool {
    *amount_cents == 0
}

/// R-UNIT-2: a table's chips. Denominations ascending; `min_playable_chip_cents` is one of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipSet {
    pub denominations_cents: Vec<Cents>,
    pub min_playable_chip_cents: Cents,
}

impl ChipSet {
    /// The usual casino set: $1, $5, $25, $100, $500, $1,000, $5,000; $1 plays.
    pub fn standard() -> ChipSet {
        ChipSet {
            denominations_cents: vec![100, 500, 2_500, 10_000, 50_000, 100_000, 500_000],
            min_playable_chip_cents: 100,
        }
    }

    /// A chip set whose minimum playable chip is one cent (imports of hand histories).
    pub fn cent_chips() -> ChipSet {
        ChipSet {
            denominations_cents: vec![1, 5, 25, 100, 500, 2_500, 10_000, 50_000, 100_000, 500_000],
            min_playable_chip_cents: 1,
        }
    }

    pub fn validate(&self) -> Result<(), Rejection> {
        let d = &self.denominations_cents;
        let ascending = d.windows(2).all(|w| w[0] < w[1]);
        if d.is_empty()
            || d.len() > MAX_DENOMINATIONS
            || !ascending
            || d[0] <= 0
            || !d.contains(&self.min_playable_chip_cents)
        {
            return Err(Rejection::new(INVALID_CHIP_SET, "denominations must be ascending, positive, and contain the minimum playable chip")
                .with("min_playable_chip_cents", self.min_playable_chip_cents));
        }
        Ok(())
    }

    pub fn has_denomination(&self, denomination_cents: Cents) -> bool {
        self.denominations_cents.contains(&denomination_cents)
    }

    /// The unit every amount of this set's chips is a multiple of: the greatest common divisor
    /// of the denominations (the smallest chip, in every usual set).
    pub fn chip_unit_cents(&self) -> Cents {
        fn gcd(a: Cents, b: Cents) -> Cents {
            if b == 0 { a } else { gcd(b, a % b) }
        }
        self.denominations_cents.iter().fold(0, |unit, denomination| gcd(*denomination, unit)).max(1)
    }

    /// R-UNIT-2: refuse an amount no set of these chips makes (not a multiple of
    /// [`ChipSet::chip_unit_cents`]).
    pub fn check_makes(&self, name: &'static str, amount_cents: Cents) -> Result<(), Rejection> {
        let unit = self.chip_unit_cents();
        if amount_cents % unit != 0 {
            return Err(Rejection::new(NOT_IN_TABLE_CHIPS, "no set of this table's chips makes this amount")
                .with(name, amount_cents)
                .with("chip_unit_cents", unit));
        }
        Ok(())
    }

    /// R-UNIT-2: is `amount_cents` a whole number of minimum playable chips?
    pub fn is_playable(&self, amount_cents: Cents) -> bool {
        amount_cents % self.min_playable_chip_cents == 0
    }

    /// R-UNIT-2: refuse a payment (`what`: "a jackpot payout") that is not whole minimum
    /// playable chips.
    pub fn check_playable(&self, what: &str, amount_cents: Cents) -> Result<(), Rejection> {
        if self.is_playable(amount_cents) {
            return Ok(());
        }
        Err(Rejection::new(NOT_MULTIPLE_OF_MIN_CHIP, format!("{what} is whole minimum playable chips"))
            .with("amount_cents", amount_cents)
            .with("min_playable_chip_cents", self.min_playable_chip_cents))
    }
}

/// R-UNIT-1: a command amount must be positive and bounded.
pub fn check_positive(name: &'static str, amount_cents: Cents) -> Result<(), Rejection> {
    if amount_cents <= 0 {
        return Err(Rejection::new(AMOUNT_NOT_POSITIVE, "amount must be positive").with(name, amount_cents));
    }
    if amount_cents > MAX_AMOUNT_CENTS {
        return Err(Rejection::new(AMOUNT_TOO_LARGE, "amount above the bound")
            .with(name, amount_cents)
            .with("max_amount_cents", MAX_AMOUNT_CENTS));
    }
    Ok(())
}

/// R-UNIT-1: a counted or reported amount may be zero, never negative, and is bounded.
pub fn check_non_negative(name: &'static str, amount_cents: Cents) -> Result<(), Rejection> {
    if amount_cents < 0 {
        return Err(Rejection::new(AMOUNT_NOT_POSITIVE, "amount must not be negative").with(name, amount_cents));
    }
    if amount_cents > MAX_AMOUNT_CENTS {
        return Err(Rejection::new(AMOUNT_TOO_LARGE, "amount above the bound")
            .with(name, amount_cents)
            .with("max_amount_cents", MAX_AMOUNT_CENTS));
    }
    Ok(())
}

/// Validate a list of chips against a chip set: known denominations, each named once,
/// positive counts, bounded.
pub fn check_chips(chip_set: &ChipSet, chips: &[ChipCount]) -> Result<Cents, Rejection> {
    if chips.is_empty() || chips.len() > MAX_DENOMINATIONS {
        return Err(Rejection::new(AMOUNT_NOT_POSITIVE, "a chip list needs 1 to 16 entries")
            .with("entries", chips.len() as Cents));
    }
    let mut total_cents: Cents = 0;
    for (i, c) in chips.iter().enumerate() {
        if !chip_set.has_denomination(c.denomination_cents) {
            return Err(Rejection::new(UNKNOWN_DENOMINATION, "denomination not in the chip set used here")
                .with("denomination_cents", c.denomination_cents));
        }
        if chips[..i].iter().any(|earlier| earlier.denomination_cents == c.denomination_cents) {
            return Err(Rejection::new(DENOMINATION_LISTED_TWICE, "a chip list names each denomination once")
                .with("denomination_cents", c.denomination_cents));
        }
        if c.count <= 0 {
            return Err(Rejection::new(AMOUNT_NOT_POSITIVE, "chip counts must be positive")
                .with("denomination_cents", c.denomination_cents)
                .with("count", c.count));
        }
        let max_count = MAX_AMOUNT_CENTS / c.denomination_cents;
        if c.count > max_count {
            return Err(Rejection::new(AMOUNT_TOO_LARGE, "more chips of this denomination than any amount the ledger takes")
                .with("denomination_cents", c.denomination_cents)
                .with("count", c.count)
                .with("max_count", max_count));
        }
        total_cents += c.value_cents();
    }
    check_positive("total_cents", total_cents)?;
    Ok(total_cents)
}

/// Refuse with `reason` unless a holder (tray, cage) has every chip of `chips`; `count_of`
/// gives the holder's count of a denomination (R-CHIP-1, R-CHIP-5: never negative).
pub fn check_holds(
    chips: &[ChipCount],
    count_of: impl Fn(Cents) -> i64,
    reason: Reason,
    holder_count_name: &'static str,
) -> Result<(), Rejection> {
    for c in chips {
        let have = count_of(c.denomination_cents);
        if have < c.count {
            return Err(Rejection::new(reason, "not that many chips of this denomination")
                .with("denomination_cents", c.denomination_cents)
                .with("count", c.count)
                .with(holder_count_name, have));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{format_cents, parse_money};

    #[test]
    fn money_formats_exactly_with_grouping() {
        assert_eq!(format_cents(0), "0.00");
        assert_eq!(format_cents(5), "0.05");
        assert_eq!(format_cents(-1_234_567), "-12,345.67");
        assert_eq!(format_cents(100_000_000), "1,000,000.00");
    }

    #[test]
    fn money_parses_as_people_write_it() {
        assert_eq!(parse_money("200"), Ok(20_000));
        assert_eq!(parse_money("200.5"), Ok(20_050));
        assert_eq!(parse_money(" 200.50 "), Ok(20_050));
        assert_eq!(parse_money("1,000.00"), Ok(100_000));
        assert_eq!(parse_money("0.05"), Ok(5));
        for bad in ["", "-5", "1.234", "1,00", "12a", "1.", ".5x", "1e3", "99999999999999"] {
            let problem = parse_money(bad).unwrap_err();
            assert!(problem.contains("200.50") || problem.contains("largest"), "{bad}: {problem}");
        }
    }
}
