//! Amounts: PHH numbers (TOML integers or floats) to integer cents, exactly.
//!
//! Unit choice (R-UNIT-1): one PHH amount unit is one major currency unit and is
//! stored as 100 cents, for every hand, whatever its `currency`. A Pluribus chip
//! (blinds 50/100) is therefore 100 cents, and `1259450.25` is 125,945,025 cents.
//! The conversion reads the number's *text* (the TOML parser keeps it), never an
//! `f64`, so no binary rounding can creep in. A number with a non-zero digit
//! beyond the second decimal cannot be represented in cents: the hand is then
//! unsupported (not silently rounded).

use crate::Cents;

/// Scale between one PHH unit and the ledger's minor unit.
pub const CENTS_PER_UNIT: Cents = 100;

/// Why a number could not become cents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AmountError {
    /// Not a finite decimal number (e.g. `inf`, `nan`, garbage).
    NotANumber(String),
    /// Negative amounts have no meaning in PHH.
    Negative(String),
    /// Non-zero digits beyond the cent.
    TooPrecise(String),
    /// Does not fit an i64 of cents.
    TooLarge(String),
}

impl std::fmt::Display for AmountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotANumber(text) => write!(f, "`{text}` is not a finite decimal amount"),
            Self::Negative(text) => write!(f, "`{text}` is negative"),
            Self::TooPrecise(text) => {
                write!(f, "`{text}` has non-zero digits below one cent (1/100 unit)")
            }
            Self::TooLarge(text) => write!(f, "`{text}` does not fit in 64-bit cents"),
        }
    }
}

/// A TOML integer's decoded text (underscores removed) in the given radix, to cents.
pub fn integer_text_to_cents(text: &str, radix: u32) -> Result<Cents, AmountError> {
    let units = i64::from_str_radix(text, radix)
        .map_err(|_| AmountError::TooLarge(text.to_owned()))?;
    if units < 0 {
        return Err(AmountError::Negative(text.to_owned()));
    }
    units
        .checked_mul(CENTS_PER_UNIT)
        .ok_or_else(|| AmountError::TooLarge(text.to_owned()))
}

/// A TOML float's decoded text (`[+-]digits[.digits][e[+-]digits]`) to cents, exactly.
pub fn decimal_text_to_cents(text: &str) -> Result<Cents, AmountError> {
    let not_a_number = || AmountError::NotANumber(text.to_owned());
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => {
            let exponent: i32 = unsigned[at + 1..].parse().map_err(|_| not_a_number())?;
            (&unsigned[..at], exponent)
        }
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return Err(not_a_number());
    }
    // value = digits * 10^(exponent - fraction.len()); cents = value * 10^2.
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    let shift = i64::from(exponent) - fraction.len() as i64 + 2;
    let cents = if digits.is_empty() {
        0
    } else if shift >= 0 {
        let shift = u32::try_from(shift).map_err(|_| AmountError::TooLarge(text.to_owned()))?;
        let base: i128 = digits.parse().map_err(|_| AmountError::TooLarge(text.to_owned()))?;
        10i128
            .checked_pow(shift)
            .and_then(|scale| base.checked_mul(scale))
            .ok_or_else(|| AmountError::TooLarge(text.to_owned()))?
    } else {
        let dropped = usize::try_from(-shift).map_err(|_| AmountError::TooPrecise(text.to_owned()))?;
        let kept_len = digits.len().saturating_sub(dropped);
        let (kept, below_cent) = digits.split_at(kept_len);
        if below_cent.bytes().any(|b| b != b'0') {
            return Err(AmountError::TooPrecise(text.to_owned()));
        }
        if kept.is_empty() {
            0
        } else {
            kept.parse().map_err(|_| AmountError::TooLarge(text.to_owned()))?
        }
    };
    if negative && cents != 0 {
        return Err(AmountError::Negative(text.to_owned()));
    }
    i64::try_from(cents).map_err(|_| AmountError::TooLarge(text.to_owned()))
}
