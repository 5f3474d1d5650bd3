//! Showdown ranking, per variant, with maintained evaluators: `rs_poker` for high hands
//! (hold'em and stud best five of the player's cards plus the board; Omaha exactly two hole
//! and three board cards), `aya_poker` for short-deck (A-6-7-8-9 is a straight, a flush
//! beats a full house), the A-5 lows (razz; the 8-or-better low half of Omaha and stud
//! high-low) and badugi. 2-7 lowball is ranked here ([`deuce_to_seven`]): `aya_poker` 0.1 takes
//! A-5-4-3-2 for a straight there, where in 2-7 the ace is only high (an ace-high hand).
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
pub struct HandStrength(pub u32);

impl From<Rank> for HandStrength {
    /// Category in the high bits, kickers below: the evaluator's own ordering.
    fn from(rank: Rank) -> Self {
        HandStrength((u32::from(rank.category() as u16) << 12) | u32::from(rank.value_bits()))
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
            Ok(HandStrength(u32::from(aya_poker::short_deck_rank(&all).0)))
        }
        Variant::FixedLimitRazz => Ok(HandStrength(u32::from(aya_poker::ace_five_rank(&aya_hand(hole, board, 5, 7)?).0))),
        Variant::NoLimitDeuceToSevenSingleDraw | Variant::FixedLimitDeuceToSevenTripleDraw => {
            exactly(variant, hole, board, 5)?;
            // Shape and duplicates as for the other games.
            aya_hand(hole, board, 5, 5)?;
            let mut five = [(0u8, ' '); 5];
            for (slot, card) in five.iter_mut().zip(hole.iter().chain(board)) {
                let Card::Known { rank, suit } = *card else { return Err(RankError::UnknownCard) };
                *slot = (rank, suit);
            }
            Ok(deuce_to_seven(five))
        }
        Variant::FixedLimitBadugi => {
            exactly(variant, hole, board, 4)?;
            Ok(HandStrength(u32::from(aya_poker::badugi_rank(&aya_hand(hole, board, 4, 4)?).0)))
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
    Ok((qualified.0 != 0).then_some(HandStrength(u32::from(qualified.0))))
}

/// 2-7 lowball ("deuce to seven"): the worst high hand wins. Straights and flushes count
/// against the hand, the ace is only high (A-5-4-3-2 is ace high, not a straight), so the best
/// hand is 7-5-4-3-2 of mixed suits. `five` holds (rank 2..=14, suit).
pub fn deuce_to_seven(five: [(u8, char); 5]) -> HandStrength {
    let mut counts = [0u8; 15];
    for (rank, _) in five {
        counts[usize::from(rank.min(14))] += 1;
    }
    // Ranks by (count, rank), both descending: the order a high hand compares them in.
    let mut groups: Vec<(u8, u8)> = (2..=14u8).filter(|r| counts[usize::from(*r)] > 0).map(|r| (counts[usize::from(r)], r)).collect();
    groups.sort_unstable_by(|a, b| b.cmp(a));
    let flush = five.iter().all(|(_, suit)| *suit == five[0].1);
    let straight = groups.len() == 5 && groups[0].1 - groups[4].1 == 4;
    let category: u32 = match (groups[0].0, groups.get(1).map_or(0, |g| g.0), straight, flush) {
        (_, _, true, true) => 8,
        (4, _, _, _) => 7,
        (3, 2, _, _) => 6,
        (_, _, false, true) => 5,
        (_, _, true, false) => 4,
        (3, _, _, _) => 3,
        (2, 2, _, _) => 2,
        (2, _, _, _) => 1,
        _ => 0,
    };
    let mut high = category;
    for (count, rank) in &groups {
        for _ in 0..*count {
            high = (high << 4) | u32::from(*rank);
        }
    }
    // Greater is better: the lower the high hand, the stronger the 2-7 hand.
    HandStrength((1 << 24) - 1 - high)
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
