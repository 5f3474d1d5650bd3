//! Playing cards, as far as the rules need them: the up cards a stud dealer reports decide who
//! brings in and who acts first (R-POST-5). The core never sees hole cards and never ranks a
//! showdown (the dealer reports the ranking).
//!
//! Notation: rank `23456789TJQKA`, suit `cdhs` (`Ah`, `Tc`), as in PHH files and on the wire.
//! Suits rank clubs < diamonds < hearts < spades when a tie is broken by suit.

use serde::{Deserialize, Serialize};

use crate::rejection::{Reason, Rejection};

pub const INVALID_CARD: Reason = Reason::new("INVALID_CARD", "R-POST-5");
pub const REASONS: &[Reason] = &[INVALID_CARD];

/// Suits in tie-break order (R-POST-5: ties by suit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Suit {
    Clubs,
    Diamonds,
    Hearts,
    Spades,
}

/// A card: `rank` 2..=14 (ace 14; low games count it as 1 where they say so), and a suit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Card {
    rank: u8,
    suit: Suit,
}

impl Card {
    /// `rank` 2..=14.
    pub fn new(rank: u8, suit: Suit) -> Result<Card, Rejection> {
        if !(2..=14).contains(&rank) {
            return Err(Rejection::new(INVALID_CARD, format!("rank {rank} is not 2..=14")));
        }
        Ok(Card { rank, suit })
    }

    pub fn rank(self) -> u8 {
        self.rank
    }

    pub fn suit(self) -> Suit {
        self.suit
    }

    /// The rank with the ace low (1), as A-5 low games count it.
    pub fn low_rank(self) -> u8 {
        if self.rank == 14 { 1 } else { self.rank }
    }
}

impl std::str::FromStr for Card {
    type Err = Rejection;

    fn from_str(text: &str) -> Result<Card, Rejection> {
        let bad = || Rejection::new(INVALID_CARD, format!("`{text}` is not a card (rank 2-9TJQKA, suit cdhs)"));
        let &[rank, suit] = text.as_bytes() else { return Err(bad()) };
        let rank = match rank {
            b'2'..=b'9' => rank - b'0',
            b'T' | b't' => 10,
            b'J' | b'j' => 11,
            b'Q' | b'q' => 12,
            b'K' | b'k' => 13,
            b'A' | b'a' => 14,
            _ => return Err(bad()),
        };
        let suit = match suit {
            b'c' => Suit::Clubs,
            b'd' => Suit::Diamonds,
            b'h' => Suit::Hearts,
            b's' => Suit::Spades,
            _ => return Err(bad()),
        };
        Ok(Card { rank, suit })
    }
}

impl std::fmt::Display for Card {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rank = b"..23456789TJQKA"[usize::from(self.rank)] as char;
        let suit = match self.suit {
            Suit::Clubs => 'c',
            Suit::Diamonds => 'd',
            Suit::Hearts => 'h',
            Suit::Spades => 's',
        };
        write!(f, "{rank}{suit}")
    }
}

impl TryFrom<String> for Card {
    type Error = Rejection;
    fn try_from(text: String) -> Result<Card, Rejection> {
        text.parse()
    }
}

impl From<Card> for String {
    fn from(card: Card) -> String {
        card.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_round_trip_through_their_notation() {
        for text in ["2c", "Td", "Ah", "Ks", "9s"] {
            let card: Card = text.parse().unwrap();
            assert_eq!(card.to_string(), text);
        }
        assert_eq!("Ah".parse::<Card>().unwrap().low_rank(), 1);
        for bad in ["", "A", "1h", "Ax", "Ahh", "??"] {
            assert_eq!(bad.parse::<Card>().unwrap_err().reason, INVALID_CARD, "{bad}");
        }
        assert!(Card::new(15, Suit::Clubs).is_err());
    }
}

/// The up cards of one stud player (third to sixth street: at most four), held inline so a
/// hand copies without allocating. Reads as a slice; serialized as a list.
#[derive(Clone, Copy)]
pub struct UpCards {
    cards: [Card; UpCards::MAX],
    len: u8,
}

impl UpCards {
    pub const MAX: usize = 4;

    /// Add a card (a fifth and later card is not an up card and is ignored).
    pub fn push(&mut self, card: Card) {
        if let Some(slot) = self.cards.get_mut(self.len as usize) {
            *slot = card;
            self.len += 1;
        }
    }
}

impl Default for UpCards {
    fn default() -> Self {
        UpCards { cards: [Card { rank: 0, suit: Suit::Clubs }; UpCards::MAX], len: 0 }
    }
}

impl std::ops::Deref for UpCards {
    type Target = [Card];
    fn deref(&self) -> &[Card] {
        &self.cards[..self.len as usize]
    }
}

impl PartialEq for UpCards {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for UpCards {}

impl std::fmt::Debug for UpCards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for UpCards {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for UpCards {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let cards = Vec::<Card>::deserialize(deserializer)?;
        if cards.len() > UpCards::MAX {
            return Err(serde::de::Error::custom(format!("at most {} up cards", UpCards::MAX)));
        }
        let mut up = UpCards::default();
        for c in cards {
            up.push(c);
        }
        Ok(up)
    }
}
