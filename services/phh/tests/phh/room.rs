//! Hands as a card room records them: `winnings` after the room's rake, mucked losing hands
//! shown as `????`, a big blind alone, heads-up blinds written big blind first, unknown stacks
//! (`inf`), the room's `rake` and `total_pot_amounts`; and mixed-game hands of our own (big-blind
//! antes, O8, stud8, razz, 2-7 triple and single draw) in `data/mixed-game.phhs`.

use chipledger_phh::{ReplayOutcome, Variant, load_file, parse_hand, replay, replay_report};

/// Three-handed no-limit: p3 raises to 20, both blinds call, p1 bets 40 on the river and p3
/// calls: a pot of 140 (p2 folded on the river), p1's aces win.
const SHOWDOWN: &str = r#"
variant = "NT"
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [200, 200, 200]
actions = [
  "d dh p1 AhAd", "d dh p2 7c2d", "d dh p3 KsKd",
  "p3 cbr 20", "p1 cc", "p2 cc",
  "d db 2h5c9s", "p1 cc", "p2 cc", "p3 cc",
  "d db Jd", "p1 cc", "p2 cc", "p3 cc",
  "d db 4s", "p1 cbr 40", "p2 f", "p3 cc",
  "p1 sm AhAd", "p3 sm KsKd",
]
"#;

fn hand(text: &str, tail: &str) -> chipledger_phh::HandHistory {
    parse_hand(&format!("{text}\n{tail}\n"), "room.phh").expect("parses")
}

#[test]
fn r_rake_1_winnings_after_rake_record_the_rooms_rake() {
    // The pot is 140; the room reports p1 collected 135: a rake of 5, recorded at settlement.
    let hand = hand(SHOWDOWN, "winnings = [135, 0, 0]\nfinishing_stacks = [275, 180, 140]");
    let report = replay_report(&hand);
    assert_eq!(report.outcome, ReplayOutcome::Matched);
    assert_eq!(report.rake_cents, 500);
    assert_eq!(report.variant, Variant::NoLimitHoldem);
    // Without finishing stacks the winnings alone give the expected stacks.
    let hand = hand_without_finishing(SHOWDOWN, "winnings = [135, 0, 0]");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
    // Winnings that disagree with the cards shown are a mismatch, not a silent award.
    let hand = hand_without_finishing(SHOWDOWN, "winnings = [0, 0, 135]");
    assert!(matches!(replay(&hand), ReplayOutcome::Mismatched { .. }));
}

fn hand_without_finishing(text: &str, tail: &str) -> chipledger_phh::HandHistory {
    hand(text, tail)
}

#[test]
fn r_pot_5_winnings_stand_for_the_award_when_the_cards_are_unknown() {
    // Both hands unknown (a room's record that shows no cards): the winnings are the award.
    let text = SHOWDOWN
        .replace("d dh p1 AhAd", "d dh p1 ????")
        .replace("d dh p3 KsKd", "d dh p3 ????")
        .replace("p1 sm AhAd", "p1 sm -")
        .replace("p3 sm KsKd", "p3 sm -");
    let unranked = hand(&text, "");
    match replay(&unranked) {
        ReplayOutcome::Unsupported { reason } => assert!(reason.contains("unknown"), "{reason}"),
        other => panic!("no ranking and no winnings: {other:?}"),
    }
    let hand = hand(&text, "winnings = [0, 0, 138]\nfinishing_stacks = [140, 180, 278]");
    let report = replay_report(&hand);
    assert_eq!(report.outcome, ReplayOutcome::Matched);
    assert_eq!(report.rake_cents, 200);
    // The room's `rake` field must agree with the winnings; `total_pot_amounts` with the pots.
    let disagree = hand_without_finishing(&text, "winnings = [0, 0, 138]\nrake = 3");
    match replay(&disagree) {
        ReplayOutcome::Unsupported { reason } => assert!(reason.contains("rake"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let pots = hand_without_finishing(&text, "winnings = [0, 0, 138]\ntotal_pot_amounts = [150]");
    match replay(&pots) {
        ReplayOutcome::Unsupported { reason } => assert!(reason.contains("total_pot_amounts"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let pots = hand_without_finishing(&text, "winnings = [0, 0, 138]\nrake = 2\ntotal_pot_amounts = [140]");
    assert_eq!(replay(&pots), ReplayOutcome::Matched);
}

#[test]
fn r_rake_1_a_raked_pot_won_uncontested() {
    // p1 bets the river and both fold: of the 60 in the pot p1 collects 55 (rake 5); the
    // uncalled 40 comes back and is never raked (R-POT-4).
    let text = SHOWDOWN.replace("\"p1 cbr 40\", \"p2 f\", \"p3 cc\",", "\"p1 cbr 40\", \"p2 f\", \"p3 f\",").replace("\"p1 sm AhAd\", \"p3 sm KsKd\",", "");
    let hand = hand(&text, "winnings = [55, 0, 0]\nfinishing_stacks = [235, 180, 180]");
    let report = replay_report(&hand);
    assert_eq!(report.outcome, ReplayOutcome::Matched, "{:?}", report.outcome);
    assert_eq!(report.rake_cents, 500);
}

#[test]
fn r_post_2_a_big_blind_alone_is_a_single_blind_left_of_the_button() {
    // `blinds_or_straddles = [1, 0, 0]`: p1 posts the one blind; p2 acts first.
    let text = r#"
variant = "NT"
antes = [0, 0, 0]
blinds_or_straddles = [1, 0, 0]
min_bet = 1
starting_stacks = [50, 50, 50]
actions = [
  "d dh p1 AhAd", "d dh p2 7c2d", "d dh p3 KsKd",
  "p2 f", "p3 cbr 3", "p1 cc",
  "d db 2h5c9s", "p1 cbr 5", "p3 f",
]
finishing_stacks = [53, 50, 47]
"#;
    assert_eq!(replay(&parse_hand(text, "single-blind.phh").unwrap()), ReplayOutcome::Matched);
}

#[test]
fn r_post_2_heads_up_blinds_written_big_blind_first() {
    // `[1, 0.50]` heads-up: p1 posts the 0.50, so p1 is the button and small blind and acts
    // first; PokerKit reads the PHH reversal the same way.
    let text = r#"
variant = "NT"
antes = [0, 0]
blinds_or_straddles = [1, 0.50]
min_bet = 1
starting_stacks = [100, 100]
actions = [
  "d dh p1 AhAd", "d dh p2 7c2d",
  "p1 cbr 3", "p2 cc",
  "d db 2h5c9s", "p2 cc", "p1 cbr 4", "p2 f",
]
finishing_stacks = [103, 97]
"#;
    assert_eq!(replay(&parse_hand(text, "bb-first.phh").unwrap()), ReplayOutcome::Matched);
    // The ordinary order `[0.50, 1]` plays the same hand with the seats swapped.
    let swapped = text.replace("[1, 0.50]", "[0.50, 1]").replace("p1 cbr 3\", \"p2 cc\"", "p2 cbr 3\", \"p1 cc\"");
    let swapped = swapped.replace("\"p2 cc\", \"p1 cbr 4\", \"p2 f\"", "\"p1 cc\", \"p2 cbr 4\", \"p1 f\"").replace("[103, 97]", "[97, 103]");
    assert_eq!(replay(&parse_hand(&swapped, "bb-second.phh").unwrap()), ReplayOutcome::Matched);
}

#[test]
fn unknown_stacks_buy_in_enough_and_are_not_compared() {
    // p2's stack is unknown (`inf`), and so its final stack; the others are compared.
    let text = SHOWDOWN.replace("starting_stacks = [200, 200, 200]", "starting_stacks = [200, inf, 200]");
    let hand = hand(&text, "finishing_stacks = [280, inf, 140]");
    assert_eq!(replay(&hand), ReplayOutcome::Matched);
    let wrong = hand_without_finishing(&text, "finishing_stacks = [281, inf, 140]");
    assert!(matches!(replay(&wrong), ReplayOutcome::Mismatched { stacks } if stacks.len() == 1));
}

#[test]
fn mixed_game_hands_of_our_own_replay_to_their_finishing_stacks() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/phh/data/mixed-game.phhs");
    let hands: Vec<_> = load_file(&path).into_iter().map(|h| h.expect("parses")).collect();
    let variants: Vec<&str> = hands.iter().map(|h| h.variant.code()).collect();
    assert_eq!(variants, ["NT", "FO/8", "F7S/8", "FR", "F2L3D", "N2L1D"]);
    for hand in &hands {
        assert_eq!(replay(hand), ReplayOutcome::Matched, "{}", hand.origin);
    }
    // The stud hands go through the up cards: a dealer naming another bring-in is refused.
    let stud = &hands[2];
    let mut wrong = stud.clone();
    if let Some(entry) = wrong.actions.iter_mut().find(|e| matches!(e.action, chipledger_phh::Action::BringIn { .. })) {
        entry.action = chipledger_phh::Action::BringIn { player: chipledger_phh::Player(0) };
    }
    match replay(&wrong) {
        ReplayOutcome::Rejected(rejected) => assert_eq!(rejected.code, "BRING_IN_OUT_OF_POSITION", "{rejected}"),
        other => panic!("{other:?}"),
    }
}
