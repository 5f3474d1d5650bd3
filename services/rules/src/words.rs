//! The words a person reads for the domain's names (`floor supervisor`, `big blind`, `raises to
//! 150.00`), for the command line and the console alike. Derived from the names the domain
//! already has where they read well spaced out; money is printed by the caller's formatter
//! (plain on the command line, with the currency in the console).

use crate::hand::{ActionKind, PostKind};
use crate::money::Cents;
use crate::Role;

/// `BoughtIn` -> `bought in`: a CamelCase name as lowercase words.
pub fn spaced(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (index, letter) in name.chars().enumerate() {
        if letter.is_uppercase() && index > 0 {
            out.push(' ');
        }
        out.extend(letter.to_lowercase());
    }
    out
}

pub fn role(role: Role) -> &'static str {
    match role {
        Role::Dealer => "dealer",
        Role::FloorSupervisor => "floor supervisor",
        Role::Cage => "cage cashier",
        Role::Auditor => "auditor",
        Role::Admin => "admin",
        Role::System => "system",
    }
}

/// `PostKind::MissedSmallBlindDead` -> `missed small blind dead`.
pub fn post_kind(kind: PostKind) -> String {
    spaced(&format!("{kind:?}"))
}

/// What a seat did, as a dealer calls it: `raises to 150.00`, `calls 50.00`, `checks`.
pub fn action(kind: ActionKind, to_cents: Cents, amount_cents: Cents, money: &dyn Fn(Cents) -> String) -> String {
    match kind {
        ActionKind::Fold => "folds".to_string(),
        ActionKind::Check => "checks".to_string(),
        ActionKind::Call => format!("calls {}", money(amount_cents)),
        ActionKind::Bet => format!("bets {}", money(to_cents)),
        ActionKind::Raise => format!("raises to {}", money(to_cents)),
        ActionKind::Complete => format!("completes to {}", money(to_cents)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_words() {
        assert_eq!(spaced("HandSettled"), "hand settled");
        assert_eq!(post_kind(PostKind::BigBlind), "big blind");
        assert_eq!(post_kind(PostKind::MissedSmallBlindDead), "missed small blind dead");
        assert_eq!(role(Role::FloorSupervisor), "floor supervisor");
        let money = |cents: Cents| crate::money::format_cents(cents);
        assert_eq!(action(ActionKind::Raise, 15_000, 14_000, &money), "raises to 150.00");
        assert_eq!(action(ActionKind::Call, 5_000, 5_000, &money), "calls 50.00");
        assert_eq!(action(ActionKind::Fold, 0, 0, &money), "folds");
    }
}

/// A text cell a spreadsheet will not run as a formula: one starting with `=`, `+`, `@`, a tab,
/// a carriage return, or a minus that is not a negative number or amount (`-$A$1+HYPERLINK(..)`)
/// gets a leading apostrophe; everything else is as it was. For every CSV a person may open (the
/// console's lists, `chipledger export --format csv`); the CSV quoting is the writer's.
pub fn spreadsheet_safe(field: &str) -> std::borrow::Cow<'_, str> {
    match field.chars().next() {
        Some('=' | '+' | '@' | '\t' | '\r') => format!("'{field}").into(),
        Some('-') if field.parse::<f64>().is_err() && !is_negative_money(field) => format!("'{field}").into(),
        _ => field.into(),
    }
}

/// `-$1,234.56`, `-€5.00`, `-0.05 MOP`: a negative amount as a money formatter writes it.
fn is_negative_money(field: &str) -> bool {
    let Some(rest) = field.strip_prefix('-') else { return false };
    let rest = rest.strip_prefix(|c: char| c == '$' || !c.is_ascii()).unwrap_or(rest);
    let (amount, currency) = rest.split_once(' ').unwrap_or((rest, ""));
    amount.starts_with(|c: char| c.is_ascii_digit())
        && amount.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '.')
        && currency.chars().all(|c| c.is_ascii_uppercase())
}
