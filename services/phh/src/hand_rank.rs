//! Showdown ranking with the `rs_poker` evaluator (high hands only: the supported
//! variants have no low half). Hold'em and stud take the best five of the player's
//! cards plus the board; Omaha uses exactly two hole cards and three board cards.

use rs_poker::core::{Card as EvalCard, CardBitSet, Rank, Rankable, Suit, Value};
use rs_poker::omaha::OmahaHand;

use crate::card::Card;
use crate::history::Variant;

/// A comparable hand strength: higher wins, equal splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HandStrength(pub u16);

impl From<Rank> for HandStrength {
    /// Category in the high bits, kickers below: the evaluator's own ordering.
    fn from(rank: Rank) -> Self {
        HandStrength(((rank.category() as u16) << 12) | rank.value_bits())
    }
}

/// Why a shown hand cannot be ranked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RankError {
    #[error("cards unknown (`??`) where the showdown needs them")]
    UnknownCard,
    #[error("{0} cards; a ranked hand needs at least five")]
    TooFewCards(usize),
    #[error("{0} cards; the evaluator ranks at most seven")]
    TooManyCards(usize),
    #[error("card {0} appears twice")]
    DuplicateCard(String),
    #[error("Omaha needs at least 2 hole and 3 board cards, got {hole} and {board}")]
    OmahaShape { hole: usize, board: usize },
}

/// Ranks `hole` (the player's cards: hole cards, or every stud card) with `board`.
pub fn strength(variant: Variant, hole: &[Card], board: &[Card]) -> Result<HandStrength, RankError> {
    let hole = to_bit_set(hole, CardBitSet::new())?;
    match variant {
        Variant::PotLimitOmaha => {
            let board = to_bit_set(board, CardBitSet::new())?;
            let omaha = OmahaHand::new(hole, board).map_err(|_| RankError::OmahaShape {
                hole: hole.count(),
                board: board.count(),
            })?;
            Ok(HandStrength::from(omaha.rank()))
        }
        Variant::NoLimitHoldem | Variant::FixedLimitHoldem | Variant::FixedLimitSevenCardStud => {
            let all = to_bit_set(board, hole)?;
            if all.count() < 5 {
                return Err(RankError::TooFewCards(all.count()));
            }
            if all.count() > 7 {
                return Err(RankError::TooManyCards(all.count()));
            }
            Ok(HandStrength::from(all.rank()))
        }
    }
}

fn to_bit_set(cards: &[Card], mut set: CardBitSet) -> Result<CardBitSet, RankError> {
    for card in cards {
        let eval_card = to_eval_card(*card)?;
        if set.contains(eval_card) {
            return Err(RankError::DuplicateCard(card.to_string()));
        }
        set.insert(eval_card);
    }
    Ok(set)
}

fn to_eval_card(card: Card) -> Result<EvalCard, RankError> {
    let Card::Known { rank, suit } = card else { return Err(RankError::UnknownCard) };
    let suit = match suit {
        'c' => Suit::Club,
        'd' => Suit::Diamond,
        'h' => Suit::Heart,
        _ => Suit::Spade,
    };
    Ok(EvalCard::new(Value::from_u8(rank - 2), suit))
}
