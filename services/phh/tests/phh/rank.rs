//! Showdown ranking through the evaluator: hold'em best five of seven, Omaha
//! exactly two hole plus three board cards, unknown cards refused.

use chipledger_phh::Variant;
use chipledger_phh::card::{Card, Cards};
use chipledger_phh::hand_rank::{HandStrength, RankError, strength};

fn cards(text: &str) -> Vec<Card> {
    Cards::parse(text).expect("test cards").as_slice().to_vec()
}

fn rank(variant: Variant, hole: &str, board: &str) -> Result<HandStrength, RankError> {
    strength(variant, &cards(hole), &cards(board))
}

#[test]
fn holdem_six_high_straight_beats_the_wheel() {
    // Dwan-Ivey 2009: 7h6h against Ac2d on Jc3d5c4h Jh.
    let board = "Jc3d5c4hJh";
    let dwan = rank(Variant::NoLimitHoldem, "7h6h", board).unwrap();
    let ivey = rank(Variant::NoLimitHoldem, "Ac2d", board).unwrap();
    assert!(dwan > ivey);
}

#[test]
fn holdem_equal_hands_tie() {
    let board = "AsKsQsJsTs";
    assert_eq!(
        rank(Variant::FixedLimitHoldem, "2c3d", board).unwrap(),
        rank(Variant::FixedLimitHoldem, "4h5h", board).unwrap()
    );
}

#[test]
fn omaha_uses_exactly_two_hole_cards() {
    // Four hearts in the hand and one on the board is no flush in Omaha.
    let omaha = rank(Variant::PotLimitOmaha, "AhKhQhJh", "Th2c3d4s9c").unwrap();
    let flush = rank(Variant::NoLimitHoldem, "AhKh", "QhJhTh2c3d").unwrap();
    let holdem_view = rank(Variant::NoLimitHoldem, "AhKh", "QhJh9c").unwrap_or(flush);
    assert!(omaha < flush, "omaha {omaha:?} flush {flush:?} {holdem_view:?}");
    // Antonius-Blom 2009: A3 with 4-5-2 makes the wheel; Blom has two pair at best.
    let antonius = rank(Variant::PotLimitOmaha, "Ah3sKsKh", "4s5c2h5h9c").unwrap();
    let blom = rank(Variant::PotLimitOmaha, "6d9s7d8h", "4s5c2h5h9c").unwrap();
    assert!(antonius > blom);
}

#[test]
fn stud_ranks_the_players_seven_cards() {
    let full_house = rank(Variant::FixedLimitSevenCardStud, "2c2d2h9s9c3d4h", "").unwrap();
    let flush = rank(Variant::FixedLimitSevenCardStud, "Ac2c5c9cKc3d4h", "").unwrap();
    assert!(full_house > flush);
}

#[test]
fn unknown_or_missing_cards_cannot_be_ranked() {
    assert_eq!(rank(Variant::NoLimitHoldem, "????", "Jc3d5c4hJh"), Err(RankError::UnknownCard));
    assert_eq!(rank(Variant::NoLimitHoldem, "AhKh", "Jc3d"), Err(RankError::TooFewCards(4)));
    assert!(matches!(rank(Variant::NoLimitHoldem, "AhKh", "AhKhQhJhTh"), Err(RankError::DuplicateCard(_))));
    assert!(matches!(rank(Variant::PotLimitOmaha, "AhKh2c3c", "Jc3d"), Err(RankError::OmahaShape { .. })));
}

#[test]
fn deuce_to_seven_the_ace_is_only_high_and_straights_and_flushes_count_against() {
    let single = Variant::NoLimitDeuceToSevenSingleDraw;
    let r = |cards: &str| rank(single, cards, "").unwrap();
    // A-5-4-3-2 is ace high, not a straight: it beats every pair (a pair is worse than any
    // no-pair hand) and loses to every eight-high hand; A-6-4-3-2 is worse than A-5-4-3-2.
    assert!(r("As5d4c3h2s") > r("7s7d4c3h2s"), "ace high beats a pair");
    assert!(r("As5d4c3h2s") > r("As6d4c3h2s"), "A-5 beats A-6");
    assert!(r("7s5d4c3h2s") > r("8s5d4c3h2s"), "the nuts: 7-5-4-3-2");
    assert!(r("8s5d4c3h2s") > r("As5d4c3h2s"), "any eight beats ace high");
    assert!(r("Ks5d4c3h2s") > r("6s5d4c3h2s"), "6-5-4-3-2 is a straight");
    assert!(r("8s6s4s3s2d") > r("7s5s4s3s2s"), "a flush is bad");
    assert_eq!(r("7s5d4c3h2s"), r("7h5c4d3s2h"), "suits do not matter without a flush");
    assert_eq!(rank(Variant::FixedLimitDeuceToSevenTripleDraw, "As5d4c3h2s", "").unwrap(), r("As5d4c3h2s"));
}
