//! Stud order of action from the up cards the dealer reports (R-POST-5).
//!
//! Third street: the lowest up card brings in (aces high, ties by suit: the lowest suit
//! brings in); in razz the highest up card brings in (aces low, ties: the highest suit). With
//! `TableConfig::bring_in_ties_by_position` (the seeds) a tie goes to the tied player closest
//! to the dealer in rotation instead. From
//! fourth street the best hand showing acts first (pairs and better count, straights and
//! flushes do not): the highest in high games, the lowest in razz; equal hands showing:
//! the first of them clockwise from the dealer's left. The action then goes clockwise from that
//! seat, past players who cannot act (all in).
//!
//! The dealer reports up cards with `TableOp::DealUpCards`. When every player of a street
//! has its up card, the core names the bring-in and the first actor itself and refuses a
//! dealer who names another seat; without a report the dealer's `first_to_act_seat` stands.

use crate::cards::{Card, Suit};
use crate::config::TableConfig;
use crate::hand::{HandPhase, HandState, InHand, UpCard};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::Seat;
use crate::table::{TableEvent, TableState};

pub const UP_CARDS_NOT_USED: Reason = Reason::new("UP_CARDS_NOT_USED", "R-POST-5");
pub const UP_CARDS_OUT_OF_TURN: Reason = Reason::new("UP_CARDS_OUT_OF_TURN", "R-POST-5");
pub const UP_CARDS_INCOMPLETE: Reason = Reason::new("UP_CARDS_INCOMPLETE", "R-POST-5");
pub const DUPLICATE_CARD: Reason = Reason::new("DUPLICATE_CARD", "R-POST-5");
pub const UP_CARDS_MISSING: Reason = Reason::new("UP_CARDS_MISSING", "R-POST-5");
pub const FIRST_TO_ACT_MISMATCH: Reason = Reason::new("FIRST_TO_ACT_MISMATCH", "R-POST-5");
/// A game without up cards: the street opens left of the button, whatever seat is named.
pub const FIRST_TO_ACT_NOT_LEFT_OF_BUTTON: Reason = Reason::new("FIRST_TO_ACT_NOT_LEFT_OF_BUTTON", "R-BET-1");

pub const REASONS: &[Reason] = &[
    UP_CARDS_NOT_USED,
    UP_CARDS_OUT_OF_TURN,
    UP_CARDS_INCOMPLETE,
    DUPLICATE_CARD,
    UP_CARDS_MISSING,
    FIRST_TO_ACT_MISMATCH,
    FIRST_TO_ACT_NOT_LEFT_OF_BUTTON,
];

/// Which hand showing acts first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpCardOrder {
    /// Seven-card stud and stud high-low: the lowest card brings in, the best high hand acts first.
    HighHand,
    /// Razz: the highest card brings in, the best (lowest) A-5 low hand acts first.
    LowHand,
}

/// Up cards a street has per player: one on third street, then one per street to sixth (the
/// seventh card is dealt down). `round_index` 0 is third street.
pub fn up_cards_on_street(round_index: u8) -> usize {
    usize::from(round_index).min(3) + 1
}

/// The seat that must bring in, if every dealt player has its third-street up card. Among
/// players who still have chips (one all in on the ante cannot bring in). Equal ranks go by
/// suit, or with `ties_by_position` to the tied player closest to the dealer in rotation (the
/// first of them clockwise from the dealer's left).
pub fn bring_in_seat(hand: &HandState, order: UpCardOrder, ties_by_position: bool) -> Option<Seat> {
    if hand.players.iter().any(|p| p.up_cards.is_empty()) {
        return None;
    }
    // Lowest brings in: ranks ascending; in low games the highest (aces low), inverted so the
    // minimum is the highest.
    let rank = |card: Card| match order {
        UpCardOrder::HighHand => card.rank(),
        UpCardOrder::LowHand => 15 - card.low_rank(),
    };
    let suit = |card: Card| match order {
        UpCardOrder::HighHand => card.suit(),
        UpCardOrder::LowHand => invert(card.suit()),
    };
    // Position in rotation: 0 for the dealer's left, counting clockwise.
    let position = |seat: Seat| if seat > hand.button_seat { (0, seat) } else { (1, seat) };
    hand.players
        .iter()
        .filter(|p| p.status == InHand::Active)
        .min_by_key(|p| {
            let card = p.up_cards[0];
            if ties_by_position { (rank(card), position(p.seat), suit(card)) } else { (rank(card), (0, 0), suit(card)) }
        })
        .map(|p| p.seat)
}

fn invert(suit: Suit) -> Suit {
    match suit {
        Suit::Clubs => Suit::Spades,
        Suit::Diamonds => Suit::Hearts,
        Suit::Hearts => Suit::Diamonds,
        Suit::Spades => Suit::Clubs,
    }
}

/// The seat whose showing hand acts first on the street `round_index` (1 = fourth street), if
/// every live player shows the street's up cards. Folded players do not count; all-in players
/// do (the action then starts with the next player who can act).
pub fn first_to_act_seat(hand: &HandState, order: UpCardOrder, round_index: u8) -> Option<Seat> {
    let want = up_cards_on_street(round_index);
    let live = || hand.players.iter().filter(|p| p.status != InHand::Folded);
    if live().any(|p| p.up_cards.len() < want) {
        return None;
    }
    // Clockwise from the dealer's left: the button seat is the dealer's right.
    let mut best: Option<(Showing, Seat)> = None;
    let mut seats = [0 as Seat; crate::MAX_SEATS];
    let mut n = 0;
    for p in live() {
        seats[n] = p.seat;
        n += 1;
    }
    hand.sort_clockwise_from_button(&mut seats[..n]);
    for &seat in &seats[..n] {
        let Some(p) = hand.player(seat) else { continue };
        let showing = Showing::of(&p.up_cards[..want], order);
        // Strictly better only: a tie stays with the earlier seat.
        if best.as_ref().is_none_or(|(b, _)| showing > *b) {
            best = Some((showing, seat));
        }
    }
    best.map(|(_, seat)| seat)
}

/// Judge `DealUpCards`: third street before the bring-in (one card for every dealt player),
/// or between streets before the next one (one card for every live player, up to sixth street).
pub fn judge_up_cards(table: &TableState, cards: &[UpCard]) -> Result<TableEvent, Rejection> {
    let (hand, config) = match (table.hand.as_ref(), table.config.as_ref()) {
        (Some(h), Some(c)) => (h, c),
        _ => return Err(Rejection::new(crate::betting::NO_HAND_IN_PROGRESS, "no hand is being played")),
    };
    if config.game.up_card_order().is_none() {
        return Err(Rejection::new(UP_CARDS_NOT_USED, format!("{:?} deals no up cards that decide the action", config.game)));
    }
    // Third street's up cards come before the bring-in (R-POST-5: they say who brings in); once
    // one was posted without them, the hand goes on without reported up cards.
    let third_street = hand.round.index == 0
        && !hand.round.opened
        && hand.players.iter().all(|p| p.up_cards.is_empty() && p.posted_mask & crate::hand::PostKind::BringIn.bit() == 0);
    let next_street = hand.phase == HandPhase::RoundComplete
        && hand.round.index < 3
        && hand.players.iter().filter(|p| p.status != InHand::Folded).all(|p| p.up_cards.len() == up_cards_on_street(hand.round.index));
    if !third_street && !next_street {
        return Err(Rejection::new(UP_CARDS_OUT_OF_TURN, "up cards are reported as each street is dealt, before its betting")
            .with("round_index", hand.round.index as Cents));
    }
    // Who gets a card: every dealt player on third street, every live player later.
    let receives = |seat: Seat| hand.player(seat).is_some_and(|p| third_street || p.status != InHand::Folded);
    let expected = hand.players.iter().filter(|p| receives(p.seat)).count();
    let mut seen: Vec<Card> = hand.players.iter().flat_map(|p| p.up_cards.iter().copied()).collect();
    for (i, up) in cards.iter().enumerate() {
        if !receives(up.seat) || cards[..i].iter().any(|o| o.seat == up.seat) {
            return Err(Rejection::new(UP_CARDS_INCOMPLETE, format!("seat {} gets no up card here, or gets two", up.seat))
                .with("seat", up.seat as Cents));
        }
        if seen.contains(&up.card) {
            return Err(Rejection::new(DUPLICATE_CARD, format!("{} is already showing", up.card)).with("seat", up.seat as Cents));
        }
        seen.push(up.card);
    }
    if cards.len() != expected {
        return Err(Rejection::new(UP_CARDS_INCOMPLETE, "one up card for every player of the street")
            .with("cards", cards.len() as Cents)
            .with("expected_cards", expected as Cents));
    }
    Ok(TableEvent::UpCardsDealt { cards: cards.to_vec() })
}

/// Apply `UpCardsDealt` (used by `evolve`): on third street the turn goes to the bring-in.
pub fn apply_up_cards(hand: &mut HandState, config: &TableConfig, cards: &[UpCard]) {
    for up in cards {
        if let Some(p) = hand.player_mut(up.seat) {
            p.up_cards.push(up.card);
        }
    }
    if let Some(order) = config.game.up_card_order()
        && hand.awaiting_bring_in
    {
        hand.round.to_act = bring_in_seat(hand, order, config.bring_in_ties_by_position);
    }
}

/// The first to act of the next street (R-POST-5), when the dealer reported its up cards:
/// `named` must be that seat (or absent). Without a report the dealer's seat stands.
pub fn judge_first_to_act(hand: &HandState, config: &TableConfig, next_round: u8, named: Option<Seat>) -> Result<Option<Seat>, Rejection> {
    let Some(order) = config.game.up_card_order() else {
        // R-BET-1: in a game without up cards the street opens with the first player able to
        // act left of the button; a seat named is that one, or refused (the betting pass: a
        // dealer named the button, which acted first on the flop).
        let first = {
            let start = hand.players.iter().position(|p| p.seat > hand.button_seat).unwrap_or(0);
            let (before, after) = hand.players.split_at(start);
            after.iter().chain(before).find(|p| p.status == InHand::Active).map(|p| p.seat)
        };
        return match (named, first) {
            (Some(seat), Some(first)) if seat != first => {
                Err(Rejection::new(FIRST_TO_ACT_NOT_LEFT_OF_BUTTON, format!("the first to act left of the button is seat {first}, not {seat}"))
                    .with("seat", seat as Cents)
                    .with("expected_seat", first as Cents))
            }
            _ => Ok(named),
        };
    };
    if hand.players.iter().all(|p| p.up_cards.is_empty()) {
        return Ok(named);
    }
    let Some(first) = first_to_act_seat(hand, order, next_round) else {
        return Err(Rejection::new(UP_CARDS_MISSING, "report the up cards of the street before it is bet")
            .with("round_index", next_round as Cents));
    };
    match named {
        Some(seat) if seat != first => Err(Rejection::new(FIRST_TO_ACT_MISMATCH, format!("the hand showing names seat {first}, not {seat}"))
            .with("seat", seat as Cents)
            .with("expected_seat", first as Cents)),
        _ => Ok(Some(first)),
    }
}

/// A hand showing, comparable: greater is better for the order it was built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Showing {
    category: i8,
    ranks: [i8; 4],
}

impl Showing {
    fn of(cards: &[Card], order: UpCardOrder) -> Showing {
        let rank = |c: &Card| match order {
            UpCardOrder::HighHand => c.rank() as i8,
            UpCardOrder::LowHand => c.low_rank() as i8,
        };
        // Groups of equal rank: (count, rank), larger groups first, then higher ranks.
        let mut groups: [(i8, i8); 4] = [(0, 0); 4];
        let mut n = 0;
        for c in cards.iter().take(4) {
            let r = rank(c);
            match groups[..n].iter_mut().find(|(_, gr)| *gr == r) {
                Some((count, _)) => *count += 1,
                None => {
                    groups[n] = (1, r);
                    n += 1;
                }
            }
        }
        groups[..n].sort_unstable_by(|a, b| b.cmp(a));
        let category = match (groups[0].0, groups[1].0) {
            (4, _) => 4,
            (3, _) => 3,
            (2, 2) => 2,
            (2, _) => 1,
            _ => 0,
        };
        let mut ranks = [0i8; 4];
        for (i, (_, r)) in groups[..n].iter().enumerate() {
            ranks[i] = *r;
        }
        match order {
            UpCardOrder::HighHand => Showing { category, ranks },
            // Lower is better in razz: negate so that the greatest value is the best low.
            UpCardOrder::LowHand => Showing { category: -category, ranks: ranks.map(|r| -r) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(text: &str) -> Vec<Card> {
        text.as_bytes().chunks(2).map(|c| std::str::from_utf8(c).unwrap().parse().unwrap()).collect()
    }

    fn high(text: &str) -> Showing {
        Showing::of(&cards(text), UpCardOrder::HighHand)
    }

    fn low(text: &str) -> Showing {
        Showing::of(&cards(text), UpCardOrder::LowHand)
    }

    #[test]
    fn r_post_5_high_hand_showing_counts_pairs_not_straights() {
        assert!(high("2c2d") > high("AsKs"));
        assert!(high("5c5d4h4s") > high("AcAdKh"));
        assert!(high("3c3d3h") > high("KcKdQhQs"));
        assert!(high("AcKd") > high("AcQd"));
        assert!(high("9c8d7h6s") < high("Tc2d3h4s"), "a straight showing does not count");
        assert_eq!(high("KcQd"), high("KsQh"));
    }

    #[test]
    fn r_post_5_razz_lowest_hand_showing_is_best() {
        assert!(low("Ac2d") > low("2c3d"), "ace is low");
        assert!(low("Kc2d") > low("QcQd"), "a pair is worse than any unpaired hand");
        assert!(low("5c4d") > low("6c2d"));
        assert!(low("8c7d6h5s") > low("9c2d3h4s"));
    }
}
