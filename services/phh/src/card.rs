//! Card notation of PHH: rank `23456789TJQKA`, suit `cdhs`, `??` for an unknown card.

/// One card as written in a PHH file: known, or `??` (unknown to the annotator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Card {
    /// `rank` is 2..=14 (ace high), `suit` one of `c d h s`.
    Known { rank: u8, suit: char },
    Unknown,
}

impl Card {
    /// Two characters: `??`, or a card as the rules core reads it (one notation, one parser).
    fn parse(pair: &[u8]) -> Option<Card> {
        if pair == b"??" {
            return Some(Card::Unknown);
        }
        let card: chipledger_rules::cards::Card = std::str::from_utf8(pair).ok()?.parse().ok()?;
        let suit = match card.suit() {
            chipledger_rules::cards::Suit::Clubs => 'c',
            chipledger_rules::cards::Suit::Diamonds => 'd',
            chipledger_rules::cards::Suit::Hearts => 'h',
            chipledger_rules::cards::Suit::Spades => 's',
        };
        Some(Card::Known { rank: card.rank(), suit })
    }
}

impl std::fmt::Display for Card {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Card::Unknown => f.write_str("??"),
            Card::Known { rank, suit } => {
                let rank = b"..23456789TJQKA"[usize::from(rank)] as char;
                write!(f, "{rank}{suit}")
            }
        }
    }
}

/// Most cards one action may name (a five-card draw hand, a seven-card stud hand).
pub const MAX_CARDS_PER_ACTION: usize = 7;

/// The cards of one action, stored inline (no allocation per action).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cards {
    len: u8,
    cards: [Card; MAX_CARDS_PER_ACTION],
}

impl Cards {
    pub const EMPTY: Cards = Cards { len: 0, cards: [Card::Unknown; MAX_CARDS_PER_ACTION] };

    /// Parses concatenated two-character cards such as `Ah3sKsKh` or `????`.
    pub fn parse(text: &str) -> Result<Cards, String> {
        let bytes = text.as_bytes();
        if !bytes.len().is_multiple_of(2) {
            return Err(format!("cards `{text}` have an odd number of characters"));
        }
        if bytes.len() / 2 > MAX_CARDS_PER_ACTION {
            return Err(format!("cards `{text}` name more than {MAX_CARDS_PER_ACTION} cards"));
        }
        let mut cards = Cards::EMPTY;
        for pair in bytes.chunks_exact(2) {
            let card = Card::parse(pair)
                .ok_or_else(|| format!("`{text}` is not a card list (rank 2-9TJQKA, suit cdhs, or ??)"))?;
            cards.cards[usize::from(cards.len)] = card;
            cards.len += 1;
        }
        Ok(cards)
    }

    pub fn as_slice(&self) -> &[Card] {
        &self.cards[..usize::from(self.len)]
    }

    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when every card is known.
    pub fn all_known(&self) -> bool {
        self.as_slice().iter().all(|card| *card != Card::Unknown)
    }
}

impl std::fmt::Display for Cards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for card in self.as_slice() {
            write!(f, "{card}")?;
        }
        Ok(())
    }
}
