//! Replay through the rules core: small hands with known results, and every shared hand.

use std::collections::BTreeMap;

use chipledger_phh::{ReplayOutcome, Variant, load_file, parse_hand, replay};

/// Heads-up: p2 is the button and posts the small blind (PHH reverses heads-up blinds).
const HEADS_UP: &str = r#"
variant = "NT"
antes = [0, 0]
blinds_or_straddles = [1, 2]
min_bet = 2
starting_stacks = [200, 200]
actions = ["d dh p1 AhKh", "d dh p2 7c2d", "p2 cbr 6", "p1 f"]
finishing_stacks = [198, 202]
"#;

/// Three-handed showdown with a side pot: p3 is all in for 50, p1 and p2 play on.
const SIDE_POT: &str = r#"
variant = "NT"
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [200, 200, 50]
actions = [
  "d dh p1 AhAd", "d dh p2 KhKd", "d dh p3 QhQd",
  "p3 cbr 50", "p1 cbr 120", "p2 cc",
  "d db 2c7d9s", "p1 cbr 80", "p2 cc",
  "d db 3h", "d db 4s",
  "p1 sm AhAd", "p2 sm KhKd", "p3 sm QhQd",
]
finishing_stacks = [450, 0, 0]
"#;

#[test]
fn heads_up_raise_and_fold_matches() {
    let hand = parse_hand(HEADS_UP, "heads-up.phh").expect("parses");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
}

#[test]
fn side_pot_showdown_matches() {
    let hand = parse_hand(SIDE_POT, "side-pot.phh").expect("parses");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
}

#[test]
fn a_player_who_mucks_forfeits_both_pots() {
    // p1's aces are mucked: p2's kings take the main pot from p3 and the side pot.
    let text = SIDE_POT.replace(r#""p1 sm AhAd""#, r#""p1 sm""#).replace("[450, 0, 0]", "[0, 450, 0]");
    let hand = parse_hand(&text, "muck.phh").expect("parses");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
}

#[test]
fn wrong_finishing_stacks_are_reported_exactly() {
    let text = HEADS_UP.replace("finishing_stacks = [198, 202]", "finishing_stacks = [200, 200]");
    let hand = parse_hand(&text, "wrong.phh").expect("parses");
    match replay(&hand) {
        ReplayOutcome::Mismatched { stacks } => {
            assert_eq!(stacks.len(), 2);
            assert_eq!((stacks[0].expected_cents, stacks[0].got_cents), (20_000, 19_800));
            assert_eq!((stacks[1].expected_cents, stacks[1].got_cents), (20_000, 20_200));
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

#[test]
fn without_finishing_stacks_nothing_is_compared() {
    let text = HEADS_UP.replace("finishing_stacks = [198, 202]", "");
    let hand = parse_hand(&text, "open.phh").expect("parses");
    assert_eq!(replay(&hand), ReplayOutcome::NotCompared);
}

#[test]
fn illegal_raise_is_rejected_with_reason_and_rule() {
    // After the big blind of 2 a raise must go to at least 4 (R-BET-3).
    let text = HEADS_UP.replace("p2 cbr 6", "p2 cbr 3");
    let hand = parse_hand(&text, "short-raise.phh").expect("parses");
    match replay(&hand) {
        ReplayOutcome::Rejected(rejected) => {
            assert_eq!(rejected.rule, "R-BET-3", "{rejected}");
            assert_eq!(rejected.line, Some(7), "{rejected}");
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn a_losing_hand_recorded_as_unknown_cards_is_a_muck() {
    // A card room writes the loser's mucked hand as `????`: p2 forfeits, p1 takes both pots.
    let text = SIDE_POT.replace("d dh p2 KhKd", "d dh p2 ????").replace("p2 sm KhKd", "p2 sm ????");
    let hand = parse_hand(&text, "mucked.phh").expect("parses");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
}

#[test]
fn unknown_cards_needed_at_showdown_without_winnings_say_why() {
    // p2 shows "the cards dealt", which are unknown: no ranking, and no room award to use.
    let text = SIDE_POT.replace("d dh p2 KhKd", "d dh p2 ????").replace("p2 sm KhKd", "p2 sm -");
    let hand = parse_hand(&text, "unknown.phh").expect("parses");
    match replay(&hand) {
        ReplayOutcome::Unsupported { reason } => assert!(reason.contains("showdown of p2") && reason.contains("unknown"), "{reason}"),
        other => panic!("expected unsupported, got {other:?}"),
    }
}

#[test]
fn every_shared_hand_with_finishing_stacks_matches() {
    // Both folders: the 10,000 Pluribus hands and the samples, and the 2,000 generated hands
    // of the eleven variants (PokerKit-verified, finishing stacks following RULES.md).
    let mut files = crate::data::phh_files(&crate::data::phh_dir());
    files.extend(crate::data::phh_files(&crate::data::generated_dir()));
    let mut matched_by_variant: BTreeMap<&'static str, usize> = BTreeMap::new();
    let (mut matched, mut not_compared) = (0, 0);
    let mut failures = Vec::new();
    for file in &files {
        for hand in load_file(file) {
            let hand = hand.unwrap_or_else(|error| panic!("{error}"));
            match replay(&hand) {
                ReplayOutcome::Matched => {
                    matched += 1;
                    *matched_by_variant.entry(hand.variant.code()).or_default() += 1;
                }
                ReplayOutcome::NotCompared => {
                    not_compared += 1;
                    assert!(hand.finishing_stacks_cents.is_none(), "{}", hand.origin);
                }
                failure => failures.push(format!("{}: {failure:?}", hand.origin)),
            }
        }
    }
    println!("hands: {}, matched: {matched}, not compared: {not_compared}, failed: {}", matched + not_compared + failures.len(), failures.len());
    println!("matched by variant: {matched_by_variant:?}");
    for failure in failures.iter().take(20) {
        println!("{failure}");
    }
    assert!(failures.is_empty(), "{} hands failed; first: {}", failures.len(), failures[0]);
    assert_eq!(matched + not_compared, 12_005);
    assert!(matched >= 12_000, "every hand with finishing stacks matches, got {matched}");
    for variant in Variant::ALL {
        let n = matched_by_variant.get(variant.code()).copied().unwrap_or(0);
        assert!(n >= 180, "{}: only {n} hands matched", variant.code());
    }
}

/// A shared sample with `finishing_stacks` computed by hand appended (the file has none).
fn sample_with_finishing_stacks(file: &str, finishing: &str) -> chipledger_phh::HandHistory {
    let text = std::fs::read_to_string(crate::data::sample(file)).expect("sample readable");
    parse_hand(&format!("{text}\nfinishing_stacks = {finishing}\n"), file).expect("parses")
}

#[test]
fn dwan_ivey_uncalled_raise_returns_and_dwan_wins_the_pot() {
    // Turn: Ivey all in for 1,067,100, Dwan calls all in for 495,000: 572,100 goes back to
    // Ivey (R-POT-4); pot 1,500 antes + 2,000 dead big blind + 2 x (23,000 + 35,000 + 495,000)
    // = 1,109,500 to Dwan's six-high straight over Ivey's wheel.
    let hand = sample_with_finishing_stacks("dwan-ivey-2009.phh", "[572100, 1997500, 1109500]");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
}

#[test]
fn antonius_blom_pot_limit_omaha_with_cents_goes_to_the_wheel() {
    // Blom all in for 597,473.50 on the flop; 181,526.50 of Antonius's raise to 779,000 is
    // uncalled; the 1,356,947 pot goes to Antonius (A3 with 4-5-2: exactly two hole cards).
    let hand = sample_with_finishing_stacks("antonius-blom-2009.phh", "[1937923.75, 0]");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
}

#[test]
fn fixed_limit_holdem_raises_in_small_and_big_bets() {
    // Blinds 1/2, bets 2/4. p1 wins 28: 6 preflop, 4 on the flop, 4 on the turn from each.
    let text = r#"
variant = "FT"
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
small_bet = 2
big_bet = 4
starting_stacks = [100, 100, 100]
actions = [
  "d dh p1 AsAd", "d dh p2 KsKd", "d dh p3 7c2h",
  "p3 f", "p1 cbr 4", "p2 cbr 6", "p1 cc",
  "d db 2c3d9h", "p1 cc", "p2 cbr 2", "p1 cbr 4", "p2 cc",
  "d db Th", "p1 cbr 4", "p2 cc",
  "d db Js", "p1 cc", "p2 cc",
  "p1 sm AsAd", "p2 sm KsKd",
]
finishing_stacks = [114, 86, 100]
"#;
    let hand = parse_hand(text, "fixed-limit.phh").expect("parses");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
    // A bet of the wrong size in fixed limit is refused by the rules core (R-BET-6).
    let wrong = text.replace(r#""d db Th", "p1 cbr 4""#, r#""d db Th", "p1 cbr 3""#);
    let hand = parse_hand(&wrong, "fixed-limit-wrong.phh").expect("parses");
    assert!(matches!(replay(&hand), ReplayOutcome::Rejected(rejected) if rejected.rule == "R-BET-6"));
}

#[test]
fn seven_card_stud_bring_in_completion_and_streets() {
    // Antes 1, bring-in 2 by the low card, completed to 5; p3's straight beats p1's two pair.
    let text = r#"
variant = "F7S"
antes = [1, 1, 1]
bring_in = 2
small_bet = 5
big_bet = 10
starting_stacks = [100, 100, 100]
actions = [
  "d dh p1 AsAdKh", "d dh p2 QsQd2c", "d dh p3 7c8c9h",
  "p2 pb", "p3 cc", "p1 cbr 5", "p2 cc", "p3 cc",
  "d dh p1 Kd", "d dh p2 3h", "d dh p3 Tc",
  "p1 cbr 5", "p2 f", "p3 cc",
  "d dh p1 4s", "d dh p3 2h",
  "p1 cbr 10", "p3 cc",
  "d dh p1 5d", "d dh p3 Jd",
  "p1 cc", "p3 cc",
  "d dh p1 6c", "d dh p3 3c",
  "p1 cc", "p3 cc",
  "p1 sm AsAdKhKd4s5d6c", "p3 sm 7c8c9hTc2hJd3c",
]
finishing_stacks = [79, 94, 127]
"#;
    let hand = parse_hand(text, "stud.phh").expect("parses");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
}
