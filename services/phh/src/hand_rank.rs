//! Showdown ranking, per variant, with maintained evaluators: `rs_poker` for high hands
//! (hold'em and stud best five of the player's cards plus the board; Omaha exactly two hole
//! and three board cards), `aya_poker` for short-deck (A-6-7-8-9 is a straight, a flush
//! beats a full house), the A-5 lows (razz; the 8-or-better low half of Omaha and stud
//! high-low), 2-7 lowball and badugi.
//!
//! Every ranking is a [`HandStrength`] where greater is better, so the showdown code is the
//! same for high and low games; strengths of different variants are not comparable.

use aya_poker::base::{Card as AyaCard, Hand as AyaHand};
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
    #[error("{variant} ranks hands of {want} cards, got {got}")]
    WrongCount { variant: &'static str, want: usize, got: usize },
    #[error("card {0} is not in the 36-card short deck")]
    NotShortDeck(String),
}

/// Ranks `hole` (the player's cards: hole cards, every stud card, or the drawn hand) with
/// `board`, by the variant's main ranking: the high hand, or the low hand in razz, 2-7 and
/// badugi.
pub fn strength(variant: Variant, hole: &[Card], board: &[Card]) -> Result<HandStrength, RankError> {
    match variant {
        Variant::PotLimitOmaha | Variant::FixedLimitOmahaHiLo => {
            let hole = to_bit_set(hole, CardBitSet::new())?;
            let board = to_bit_set(board, CardBitSet::new())?;
            let omaha = OmahaHand::new(hole, board).map_err(|_| RankError::OmahaShape {
                hole: hole.count(),
                board: board.count(),
            })?;
            Ok(HandStrength::from(omaha.rank()))
        }
        Variant::NoLimitHoldem
        | Variant::FixedLimitHoldem
        | Variant::FixedLimitSevenCardStud
        | Variant::FixedLimitSevenCardStudHiLo => {
            let all = to_bit_set(board, to_bit_set(hole, CardBitSet::new())?)?;
            if all.count() < 5 {
                return Err(RankError::TooFewCards(all.count()));
            }
            if all.count() > 7 {
                return Err(RankError::TooManyCards(all.count()));
            }
            Ok(HandStrength::from(all.rank()))
        }
        Variant::NoLimitShortDeckHoldem => {
            let all = aya_hand(hole, board, 5, 7)?;
            if let Some(low) = hole.iter().chain(board).find(|c| matches!(c, Card::Known { rank, .. } if *rank < 6)) {
                return Err(RankError::NotShortDeck(low.to_string()));
            }
            Ok(HandStrength(aya_poker::short_deck_rank(&all).0))
        }
        Variant::FixedLimitRazz => Ok(HandStrength(aya_poker::ace_five_rank(&aya_hand(hole, board, 5, 7)?).0)),
        Variant::NoLimitDeuceToSevenSingleDraw | Variant::FixedLimitDeuceToSevenTripleDraw => {
            exactly(variant, hole, board, 5)?;
            Ok(HandStrength(aya_poker::deuce_seven_rank(&aya_hand(hole, board, 5, 5)?).0))
        }
        Variant::FixedLimitBadugi => {
            exactly(variant, hole, board, 4)?;
            Ok(HandStrength(aya_poker::badugi_rank(&aya_hand(hole, board, 4, 4)?).0))
        }
    }
}

/// The 8-or-better low of a high-low variant (R-POT-5), `None` without a qualifying low (and
/// for variants without a low half).
pub fn low_strength(variant: Variant, hole: &[Card], board: &[Card]) -> Result<Option<HandStrength>, RankError> {
    let low = match variant {
        Variant::FixedLimitOmahaHiLo => {
            // Shape and duplicates checked as for the high hand.
            strength(variant, hole, board)?;
            aya_poker::omaha_lo_rank(&aya_hand(hole, &[], 2, 7)?, &aya_hand(board, &[], 3, 5)?)
        }
        Variant::FixedLimitSevenCardStudHiLo => aya_poker::ace_five_rank(&aya_hand(hole, board, 5, 7)?),
        _ => return Ok(None),
    };
    let qualified = low.to_lo_8_rank();
    Ok((qualified.0 != 0).then_some(HandStrength(qualified.0)))
}

fn exactly(variant: Variant, hole: &[Card], board: &[Card], want: usize) -> Result<(), RankError> {
    let got = hole.len() + board.len();
    if got != want {
        return Err(RankError::WrongCount { variant: variant.code(), want, got });
    }
    Ok(())
}

/// The cards as an `aya_poker` hand of `min..=max` distinct known cards.
fn aya_hand(hole: &[Card], board: &[Card], min: usize, max: usize) -> Result<AyaHand, RankError> {
    let mut hand = AyaHand::new();
    for card in hole.iter().chain(board) {
        let Card::Known { .. } = card else { return Err(RankError::UnknownCard) };
        let aya: AyaCard = card.to_string().parse().map_err(|_| RankError::UnknownCard)?;
        if hand.contains(&aya) {
            return Err(RankError::DuplicateCard(card.to_string()));
        }
        if hand.len() == max {
            return Err(RankError::TooManyCards(max + 1));
        }
        hand.insert_unchecked(&aya);
    }
    if hand.len() < min {
        return Err(RankError::TooFewCards(hand.len()));
    }
    Ok(hand)
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
