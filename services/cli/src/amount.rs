//! Amounts of money on the command line, both directions side by side: the one parser every
//! amount argument uses, and the one way an amount is printed (R-UNIT-1: integer cents on the
//! wire, never floating point).
//!
//! The syntax, one for every amount the CLI reads:
//! - a plain number is money in the property's currency, with at most two decimals and optional
//!   thousands separators: `200`, `200.50`, `1,000.00`;
//! - a number with a `c` suffix is whole cents: `20050c`.
//!
//! The older `--...-cents` flags read whole cents (a plain integer, or the same `c` form), so
//! scripts written for them keep their meaning. Chip lists (`500x20`) and awards (`2:950`)
//! stay in cents, as documented on those flags.

/// What every amount error names.
pub const EXPECTED_MONEY: &str = "expected an amount like 200 or 200.50 (money), or 20050c (cents)";
const EXPECTED_CENTS: &str = "expected whole cents like 20050 (or 20050c)";

/// `-1234567` -> `-12,345.67`, exact: the rules crate's one money formatter (the console's too).
pub fn money(cents: i64) -> String {
    chipledger_rules::money::format_cents(cents)
}

/// Whole cents from `digits` (ASCII digits only), refusing an overflow.
fn whole(digits: &str) -> Option<i64> {
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse::<i64>().ok()
}

/// `20050c` -> 20050.
fn cents_suffixed(text: &str) -> Option<i64> {
    text.strip_suffix(['c', 'C']).and_then(whole)
}

/// An amount in the syntax above (a plain number is money) as cents; the money form is the
/// rules crate's parser (the console reads amounts with it too).
pub fn parse_money(text: &str) -> Result<i64, String> {
    let text = text.trim();
    if let Some(cents) = cents_suffixed(text) {
        return Ok(cents);
    }
    chipledger_rules::money::parse_money(text).map_err(|problem| {
        if problem.contains("largest") { problem } else { format!("{text:?}: {EXPECTED_MONEY}") }
    })
}

/// A `--...-cents` argument: whole cents, plain or with the `c` suffix.
pub fn parse_cents(text: &str) -> Result<i64, String> {
    let text = text.trim();
    cents_suffixed(text).or_else(|| whole(text)).ok_or_else(|| format!("{text:?}: {EXPECTED_CENTS}"))
}

/// Declares a flattened pair of flags for one amount: `--NAME` (money, [`parse_money`]) and
/// the older `--NAME-cents` (whole cents, [`parse_cents`]), at most one of them; `required`
/// makes one of them mandatory.
macro_rules! amount_flags {
    ($type:ident, $money:literal, $cents:literal, required = $required:literal, $help:literal) => {
        #[derive(clap::Args, Debug, Clone, Copy)]
        #[group(id = concat!($money, "-amount"), required = $required, multiple = false)]
        pub struct $type {
            #[arg(
                id = $money,
                long = $money,
                value_name = "AMOUNT",
                value_parser = crate::amount::parse_money,
                help = concat!($help, ": money (200, 200.50, 1,000.00) or cents with a c suffix (20050c)")
            )]
            money: Option<i64>,
            #[arg(
                id = $cents,
                long = $cents,
                value_name = "CENTS",
                value_parser = crate::amount::parse_cents,
                help = concat!($help, " in whole cents (instead of --", $money, ")")
            )]
            cents: Option<i64>,
        }

        impl $type {
            /// The amount in cents, if given.
            #[allow(dead_code)]
            pub fn cents(self) -> Option<i64> {
                self.money.or(self.cents)
            }

            /// The amount in cents; 0 when not given (a required pair is always given).
            #[allow(dead_code)]
            pub fn cents_or_zero(self) -> i64 {
                self.cents().unwrap_or(0)
            }
        }
    };
}

pub(crate) use amount_flags;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_amounts_parse_to_cents() {
        assert_eq!(parse_money("200"), Ok(20_000));
        assert_eq!(parse_money("200.50"), Ok(20_050));
        assert_eq!(parse_money("200.5"), Ok(20_050));
        assert_eq!(parse_money("1,000.00"), Ok(100_000));
        assert_eq!(parse_money("12,345,678"), Ok(1_234_567_800));
        assert_eq!(parse_money("20050c"), Ok(20_050));
        assert_eq!(parse_money("0.01"), Ok(1));
    }

    #[test]
    fn garbage_amounts_name_the_expected_format() {
        for text in ["", "abc", "200.505", "1,00", "1,0000", ",100", "-5", "200.", ".5", "2 00", "$200", "1e3", "99999999999999999999"] {
            let error = parse_money(text).expect_err(text);
            assert!(error.contains("expected an amount like 200 or 200.50") || error.contains("largest"), "{text}: {error}");
        }
        assert!(parse_money("92233720368547758.08").is_err(), "overflow is refused, not wrapped");
    }

    #[test]
    fn cents_flags_read_whole_cents() {
        assert_eq!(parse_cents("20050"), Ok(20_050));
        assert_eq!(parse_cents("20050c"), Ok(20_050));
        assert!(parse_cents("200.50").unwrap_err().contains("expected whole cents"));
    }
}
