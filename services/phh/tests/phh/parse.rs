//! Parser: the five shared samples, and the edge cases of the format.

use chipledger_phh::amount::{AmountError, decimal_text_to_cents, integer_text_to_cents};
use chipledger_phh::card::Cards;
use chipledger_phh::{Action, PhhError, Player, Shown, Variant, load_file, parse_hand, parse_hands};

use crate::data::sample;

const MINIMAL_NT: &str = r#"
variant = "NT"
antes = [0, 0]
blinds_or_straddles = [1, 2]
min_bet = 2
starting_stacks = [200, 200]
actions = [
  "d dh p1 AhKh",
  "d dh p2 ????",
  "p2 cbr 6",
  "p1 f",
]
"#;

fn with_actions(actions: &str) -> String {
    let start = MINIMAL_NT.find("actions").expect("template has actions");
    format!("{}actions = [{actions}]\n", &MINIMAL_NT[..start])
}

#[test]
fn dwan_ivey_no_limit_holdem_parses_with_lines_and_cents() {
    let path = sample("dwan-ivey-2009.phh");
    let hands = load_file(&path);
    assert_eq!(hands.len(), 1);
    let hand = hands.into_iter().next().unwrap().expect("parses");
    assert_eq!(hand.variant, Variant::NoLimitHoldem);
    assert_eq!(hand.antes_cents, vec![50_000, 50_000, 50_000]);
    assert_eq!(hand.blinds_or_straddles_cents, vec![100_000, 200_000, 0]);
    assert_eq!(hand.min_bet_cents, Some(200_000));
    assert_eq!(hand.starting_stacks_cents, vec![Some(112_560_000), Some(200_000_000), Some(55_350_000)]);
    assert_eq!(hand.players, vec!["Phil Ivey", "Patrik Antonius", "Tom Dwan"]);
    assert_eq!(hand.finishing_stacks_cents, None);
    assert!(hand.ante_trimming_status);
    assert_eq!(hand.actions.len(), 18);
    let first = &hand.actions[0];
    assert_eq!(first.action, Action::DealHole { player: Player(0), cards: Cards::parse("Ac2d").unwrap() });
    let open = &hand.actions[3];
    assert_eq!(open.action, Action::CompleteBetOrRaiseTo { player: Player(2), amount_cents: 700_000 });
    assert_eq!(open.line, 17, "TOML comments are not commentaries and lines are exact");
    assert_eq!(open.commentary, None);
    assert!(hand.actions.iter().any(|entry| entry.line == 31
        && entry.action == Action::DealBoard { cards: Cards::parse("4h").unwrap() }));
    assert_eq!(
        hand.actions[15].action,
        Action::ShowOrMuck { player: Player(0), shown: Shown::Cards(Cards::parse("Ac2d").unwrap()) }
    );
}

#[test]
fn antonius_blom_pot_limit_omaha_decimal_stacks_are_exact_cents() {
    let path = sample("antonius-blom-2009.phh");
    let hand = load_file(&path).into_iter().next().unwrap().expect("parses");
    assert_eq!(hand.variant, Variant::PotLimitOmaha);
    assert_eq!(hand.starting_stacks_cents, vec![Some(125_945_025), Some(67_847_350)]);
    assert_eq!(hand.currency.as_deref(), Some("USD"));
    assert_eq!(hand.actions[1].action, Action::DealHole { player: Player(1), cards: Cards::parse("6d9s7d8h").unwrap() });
}

#[test]
fn samples_of_the_other_variants_parse_as_their_variant() {
    for (file, variant) in [
        ("alice-carol-wikipedia.phh", Variant::FixedLimitBadugi),
        ("arieh-yockey-2019.phh", Variant::FixedLimitDeuceToSevenTripleDraw),
        ("phua-xuan-2019.phh", Variant::NoLimitShortDeckHoldem),
    ] {
        let hand = load_file(&sample(file)).into_iter().next().unwrap().expect("parses");
        assert_eq!(hand.variant, variant, "{file}");
        assert!(hand.origin.ends_with(file));
    }
}

#[test]
fn every_phh_variant_code_is_known() {
    for code in ["FT", "NT", "NS", "PO", "FO/8", "F7S", "F7S/8", "FR", "N2L1D", "F2L3D", "FB"] {
        let variant = Variant::from_code(code).unwrap_or_else(|| panic!("{code}"));
        assert_eq!(variant.code(), code);
    }
    assert_eq!(Variant::from_code("FS"), Some(Variant::FixedLimitSevenCardStud));
    assert_eq!(Variant::from_code("XQ"), None);
}

#[test]
fn unknown_stacks_and_room_fields_parse() {
    // PHH: an unknown stack is `inf`; winnings, rake, pots and seats are optional fields, and
    // `_`-prefixed fields are the annotator's own (ignored).
    let text = MINIMAL_NT
        .replace("starting_stacks = [200, 200]", "starting_stacks = [inf, 200]")
        .replace("actions =", "winnings = [0, 3.5]\nrake = 0.5\ntotal_pot_amounts = [4]\nseats = [3, 7]\nseat_count = 9\n_sponsor = \"x\"\nactions =");
    let hand = parse_hand(&text, "room.phh").expect("parses");
    assert_eq!(hand.starting_stacks_cents, vec![None, Some(20_000)]);
    assert_eq!(hand.winnings_cents, Some(vec![0, 350]));
    assert_eq!(hand.rake_cents, Some(50));
    assert_eq!(hand.total_pot_amounts_cents, Some(vec![400]));
    assert_eq!((hand.seats.clone(), hand.seat_count), (Some(vec![3, 7]), Some(9)));
    let bad = MINIMAL_NT.replace("actions =", "seats = [1, 1]\nactions =");
    assert!(matches!(parse_hand(&bad, "seats.phh"), Err(PhhError::Field { field, .. }) if field == "seats"));
}

#[test]
fn minimal_hand_parses() {
    let hand = parse_hand(MINIMAL_NT, "mem.phh").expect("parses");
    assert_eq!(hand.player_count(), 2);
    assert_eq!(hand.actions.len(), 4);
    assert_eq!(hand.actions[1].action, Action::DealHole { player: Player(1), cards: Cards::parse("????").unwrap() });
    assert!(!hand.actions[1].action.eq(&hand.actions[0].action));
    assert_eq!(hand.player_name(Player(1)), "p2");
}

#[test]
fn decimal_bet_amounts_and_commentaries() {
    let text = with_actions(r##""p2 cbr 12.5  # tank, then raise", "   ", "# burn card exposed", "p1   cc", "p1 sm -""##);
    let hand = parse_hand(&text, "mem.phh").expect("parses");
    assert_eq!(hand.actions.len(), 3, "no-ops and standalone commentaries are dropped");
    assert_eq!(hand.actions[0].action, Action::CompleteBetOrRaiseTo { player: Player(1), amount_cents: 1_250 });
    assert_eq!(hand.actions[0].commentary.as_deref(), Some("tank, then raise"));
    assert_eq!(hand.actions[1].action, Action::CheckOrCall { player: Player(0) });
    assert_eq!(hand.actions[2].action, Action::ShowOrMuck { player: Player(0), shown: Shown::DealtCards });
}

#[test]
fn decimal_text_is_converted_exactly() {
    assert_eq!(decimal_text_to_cents("1259450.25"), Ok(125_945_025));
    assert_eq!(decimal_text_to_cents("0.1"), Ok(10));
    assert_eq!(decimal_text_to_cents("0.29"), Ok(29), "0.29 * 100 is 28.999... in f64");
    assert_eq!(decimal_text_to_cents("3.0"), Ok(300));
    assert_eq!(decimal_text_to_cents("1.5e3"), Ok(150_000));
    assert_eq!(decimal_text_to_cents("25E-2"), Ok(25));
    assert_eq!(decimal_text_to_cents("0.010"), Ok(1));
    assert_eq!(decimal_text_to_cents("-0.0"), Ok(0));
    assert!(matches!(decimal_text_to_cents("0.001"), Err(AmountError::TooPrecise(_))));
    assert!(matches!(decimal_text_to_cents("inf"), Err(AmountError::NotANumber(_))));
    assert!(matches!(decimal_text_to_cents("1.2.3"), Err(AmountError::NotANumber(_))));
    assert!(matches!(decimal_text_to_cents("-1.5"), Err(AmountError::Negative(_))));
    assert!(matches!(decimal_text_to_cents("1e30"), Err(AmountError::TooLarge(_))));
    assert_eq!(integer_text_to_cents("10000", 10), Ok(1_000_000));
    assert_eq!(integer_text_to_cents("ff", 16), Ok(25_500));
}

#[test]
fn sub_cent_amounts_make_the_hand_unsupported_not_rounded() {
    let text = MINIMAL_NT.replace("starting_stacks = [200, 200]", "starting_stacks = [200.005, 200]");
    let error = parse_hand(&text, "mem.phh").unwrap_err();
    assert!(error.is_unsupported(), "{error}");
    assert!(matches!(error, PhhError::UnsupportedHand { line: 6, .. }), "{error}");
    let error = parse_hand(&with_actions(r#""p1 cbr 2.001""#), "mem.phh").unwrap_err();
    assert!(error.is_unsupported(), "{error}");
}

#[test]
fn unknown_variant_is_unsupported_not_an_error() {
    let text = MINIMAL_NT.replace(r#""NT""#, r#""XQ""#);
    let error = parse_hand(&text, "x.phh").unwrap_err();
    assert_eq!(error, PhhError::Unsupported { origin: "x.phh".into(), variant: "XQ".into() });
    assert_eq!(error.to_string(), "x.phh: unsupported variant `XQ`");
}

#[test]
fn malformed_toml_names_file_and_line() {
    let text = MINIMAL_NT.replace("min_bet = 2", "min_bet = = 2");
    let error = parse_hand(&text, "bad.phh").unwrap_err();
    assert!(matches!(error, PhhError::Toml { line: 5, .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.starts_with("bad.phh:5: malformed TOML"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
}

#[test]
fn malformed_actions_name_the_action_and_line() {
    for (actions, expected) in [
        (r#""p3 f""#, "does not exist"),
        (r#""p1 raise 5""#, "unknown player action"),
        (r#""p1 cbr""#, "takes one amount"),
        (r#""p1 cbr lots""#, "not a finite decimal"),
        (r#""d dh p1 AhKx""#, "not a card list"),
        (r#""d db""#, "takes the board cards"),
        (r#""p1 f now""#, "takes no argument"),
        (r#""x9 f""#, "is not a player"),
        (r#""p1 cbr 0""#, "must be positive"),
    ] {
        let text = with_actions(actions);
        match parse_hand(&text, "a.phh") {
            Err(error @ PhhError::Action { line: 7, .. }) => {
                assert!(error.to_string().contains(expected), "{actions}: {error}");
            }
            other => panic!("{actions}: expected an action error on line 7, got {other:?}"),
        }
    }
}

#[test]
fn malformed_fields_name_the_field() {
    for (from, to, field) in [
        ("min_bet = 2\n", "", "min_bet"),
        ("antes = [0, 0]", "antes = [0, 0, 0]", "antes"),
        ("antes = [0, 0]", r#"antes = ["zero", 0]"#, "antes"),
        ("starting_stacks = [200, 200]", "starting_stacks = [200]", "starting_stacks"),
        ("starting_stacks = [200, 200]", "starting_stacks = [0, 200]", "starting_stacks"),
        (r#"variant = "NT""#, "variant = 7", "variant"),
    ] {
        let text = MINIMAL_NT.replace(from, to);
        match parse_hand(&text, "f.phh") {
            Err(PhhError::Field { field: got, .. }) => assert_eq!(got, field, "{to}"),
            other => panic!("{to}: expected a field error on {field}, got {other:?}"),
        }
    }
}

#[test]
fn phhs_file_holds_one_hand_per_table() {
    let hand_body = MINIMAL_NT.trim();
    let text = format!("[1]\n{hand_body}\n\n[second]\n{}\n", hand_body.replace(r#""NT""#, r#""XQ""#));
    let hands = parse_hands(&text, "set.phhs");
    assert_eq!(hands.len(), 2);
    let first = hands[0].as_ref().expect("first hand parses");
    assert_eq!(first.origin, "set.phhs[1]");
    assert!(matches!(&hands[1], Err(PhhError::Unsupported { variant, .. }) if variant == "XQ"));
}

#[test]
fn missing_file_is_a_read_error() {
    let hands = load_file(std::path::Path::new("/nonexistent/hand.phh"));
    assert!(matches!(hands.as_slice(), [Err(PhhError::Read { .. })]), "{hands:?}");
}

#[test]
fn every_shared_hand_parses() {
    let mut files = crate::data::phh_files(&crate::data::phh_dir());
    assert!(files.len() >= 10_000, "expected the 10,000 Pluribus hands, found {}", files.len());
    files.extend(crate::data::phh_files(&crate::data::generated_dir()));
    let mut parsed = 0;
    for file in &files {
        for hand in load_file(file) {
            let hand = hand.unwrap_or_else(|error| panic!("{error}"));
            parsed += 1;
            assert_eq!(hand.player_count(), hand.antes_cents.len());
        }
    }
    assert_eq!(parsed, 12_005, "10,000 Pluribus hands, 5 samples, 2,000 generated hands");
}
