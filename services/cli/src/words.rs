//! The words a person reads for the API's enums (`floor supervisor`, `big blind`, `raises to
//! 150.00`), never their Rust or protobuf names: wire roles from the `chipledger.v1.Role` names,
//! the domain's names through `chipledger_rules::words` (which the console uses too).

use chipledger_proto::v1 as pb;
use chipledger_rules::{ActionKind, PostKind, Seat, TableEvent};

use crate::amount::money;

/// `ROLE_FLOOR_SUPERVISOR` -> `floor supervisor`.
pub fn role(role: i32) -> String {
    match pb::Role::try_from(role) {
        Ok(pb::Role::Unspecified) | Err(_) => "unknown role".to_string(),
        Ok(role) => role.as_str_name().trim_start_matches("ROLE_").to_ascii_lowercase().replace('_', " "),
    }
}

/// `Role::FloorSupervisor` -> `floor supervisor` (the rules crate's words, the console's too).
pub fn rules_role(role: &chipledger_rules::Role) -> String {
    chipledger_rules::words::role(*role).to_string()
}

/// `PostKind::BigBlind` -> `big blind`.
pub fn post_kind(kind: PostKind) -> String {
    chipledger_rules::words::post_kind(kind)
}

/// What a seat did, as a dealer would call it: `raises to 150.00`, `calls 50.00`, `checks`.
fn action(kind: ActionKind, to_cents: i64, amount_cents: i64, all_in: bool) -> String {
    let text = chipledger_rules::words::action(kind, to_cents, amount_cents, &money);
    if all_in { format!("{text}, all in") } else { text }
}

/// One line for a hand's posts and actions (`seat 3 raises to 150.00`); `None` for the other
/// events of a hand.
pub fn hand_step(event: &TableEvent) -> Option<String> {
    let seat_text = |seat: &Seat| format!("seat {seat}");
    match event {
        TableEvent::Posted { seat, kind, amount_cents, all_in, .. } => {
            let all_in = if *all_in { ", all in" } else { "" };
            Some(format!("{} posts {} {}{all_in}", seat_text(seat), post_kind(*kind), money(*amount_cents)))
        }
        TableEvent::Acted { seat, kind, to_cents, amount_cents, all_in, .. } => {
            Some(format!("{} {}", seat_text(seat), action(*kind, *to_cents, *amount_cents, *all_in)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_read_as_words() {
        assert_eq!(role(pb::Role::FloorSupervisor as i32), "floor supervisor");
        assert_eq!(role(pb::Role::Dealer as i32), "dealer");
        assert_eq!(rules_role(&chipledger_rules::Role::FloorSupervisor), "floor supervisor");
        assert_eq!(post_kind(PostKind::BigBlind), "big blind");
        assert_eq!(post_kind(PostKind::MissedSmallBlindDead), "missed small blind dead");
        assert_eq!(action(ActionKind::Raise, 15_000, 14_000, false), "raises to 150.00");
        assert_eq!(action(ActionKind::Call, 5_000, 5_000, true), "calls 50.00, all in");
        assert_eq!(action(ActionKind::Check, 0, 0, false), "checks");
        assert_eq!(action(ActionKind::Fold, 0, 0, false), "folds");
    }
}
