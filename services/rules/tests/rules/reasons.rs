//! The remaining refusals, one named test each, and the guard that every reason code of
//! `all_reasons()` is exercised by a test of this binary (R-AUDIT-3).

use std::collections::BTreeSet;

use chipledger_rules::*;

use crate::support::*;

fn nl() -> TableConfig {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.straddle = config::StraddlePolicy::UnderTheGun;
    c
}

fn three() -> Game {
    Game::new(nl(), &[(1, d(100)), (2, d(100)), (3, d(100))])
}

#[test]
fn every_reason_has_a_named_test() {
    let sources = [
        include_str!("betting.rs"),
        include_str!("blinds.rs"),
        include_str!("chips.rs"),
        include_str!("doors.rs"),
        include_str!("games.rs"),
        include_str!("seeds.rs"),
        include_str!("pots.rs"),
        include_str!("sessions.rs"),
        include_str!("treasury.rs"),
        include_str!("voids.rs"),
        include_str!("props.rs"),
        include_str!("reasons.rs"),
    ]
    .concat();
    let mut seen = BTreeSet::new();
    for reason in all_reasons() {
        assert!(seen.insert(reason.code), "duplicate code {}", reason.code);
        assert!(reason.code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'), "{} is SCREAMING_SNAKE_CASE", reason.code);
        let id = reason.rule.strip_prefix("R-").unwrap_or_else(|| panic!("{} has a rule id", reason.code));
        assert!(id.split('-').count() == 2, "rule id {}", reason.rule);
        assert!(sources.contains(&format!("\"{}\"", reason.code)), "no test asserts the refusal {}", reason.code);
    }
    assert!(seen.len() >= 90);
}

#[test]
fn r_audit_2_invalid_ids_and_accounts() {
    assert_eq!(TableId::new("").unwrap_err().reason.code, "INVALID_ID");
    assert_eq!(PlayerId::new("a b").unwrap_err().reason.code, "INVALID_ID");
    assert_eq!(TableId::new("x".repeat(65)).unwrap_err().reason.code, "INVALID_ID");
    // Not `.` or `..`: a path's own page or its parent (the identity pass: such a patron had no
    // page in the console); dots among other characters are ids.
    for dots in [".", ".."] {
        assert_eq!(PlayerId::new(dots).unwrap_err().reason.code, "INVALID_ID");
        assert_eq!(TableId::new(dots).unwrap_err().reason.code, "INVALID_ID");
    }
    assert!(PlayerId::new("...").is_ok() && PlayerId::new("J.R.").is_ok());
    assert_eq!("bank-7".parse::<StreamId>().unwrap_err().reason.code, "INVALID_ID");
    assert_eq!("table/T1/bogus".parse::<Account>().unwrap_err().reason.code, "INVALID_ACCOUNT");
    // Numbers as keys write them (the client pass: `tray/-100` read as an account with 0).
    for key in ["table/T1/tray/-100", "table/T1/tray/0", "table/T1/tray/+500", "table/T1/tray/0500", "table/T1/seat/03", "table/T1/seat/0", "cage/MAIN/chips/-5"] {
        assert_eq!(key.parse::<Account>().unwrap_err().reason.code, "INVALID_ACCOUNT", "{key}");
    }
    for key in ["table/T1/seat/3", "table/T1/tray/500", "table/T1/pot/0", "player/P7/pocket", "player/P7/iou", "cage/MAIN/chips/500", "cage/MAIN/markers", "house/patrons"] {
        let a: Account = key.parse().unwrap();
        assert_eq!(a.key(), key);
        assert_eq!(serde_json::to_string(&a).unwrap(), format!("\"{key}\""));
    }
    assert_eq!("table-T1".parse::<StreamId>().unwrap().key(), "table-T1");
}

#[test]
fn r_unit_2_invalid_chip_set_and_config() {
    let mut g = Game::new(nl(), &[]);
    let mut bad = nl();
    bad.chip_set.min_playable_chip_cents = 7;
    let t2 = tid("T2");
    let open = |c: TableConfig| Command::Table(TableCommand { table_id: t2.clone(), op: TableOp::OpenTable { config: c } });
    rejected(g.world.exec(open(bad)), "INVALID_CHIP_SET");
    let mut bad = nl();
    bad.max_seats = 0;
    rejected(g.world.exec(open(bad)), "INVALID_CONFIG");
    // R-POST-2: the small blind is left of the button and the big one next, never smaller.
    let mut bad = nl();
    bad.blinds_cents = vec![200, 100];
    let r = rejected(g.world.exec(open(bad)), "INVALID_CONFIG");
    assert_eq!(r.reason.rule, "R-POST-2", "the refusal names the rule whose check failed");
    // R-STAKE-3: the buy-in limits; R-UNIT-1: every amount within the bound.
    let mut bad = nl();
    bad.buy_in.max_cents = bad.buy_in.min_cents - 1;
    assert_eq!(rejected(g.world.exec(open(bad)), "INVALID_CONFIG").reason.rule, "R-STAKE-3");
    let mut bad = nl();
    bad.ante_cents = money::MAX_AMOUNT_CENTS + 1;
    let r = rejected(g.world.exec(open(bad)), "INVALID_CONFIG");
    assert_eq!((r.reason.rule, r.number("amount_cents")), ("R-UNIT-1", Some(money::MAX_AMOUNT_CENTS + 1)));
    rejected(g.table(TableOp::OpenTable { config: nl() }), "TABLE_ALREADY_OPEN");
    let seat = Command::Table(TableCommand { table_id: tid("T9"), op: TableOp::SeatPlayer { seat: 1, player_id: pid("P1") } });
    rejected(g.world.exec(seat), "TABLE_NOT_OPEN");
}

/// R-UNIT-2: posts, bet limits, buy-in limits and fees are whole minimum chips; R-REBUY-1: the
/// wait window stays within the room's 30 to 120 minutes and the tolerance within 20%, so no
/// table can switch the re-buy wait off.
#[test]
fn r_unit_2_r_rebuy_1_table_configuration_is_bounded() {
    let mut g = Game::new(nl(), &[]);
    let t2 = tid("T2");
    let open = |c: TableConfig| Command::Table(TableCommand { table_id: t2.clone(), op: TableOp::OpenTable { config: c } });
    let chip = nl().chip_set.min_playable_chip_cents;
    let odd = chip + chip / 2;
    type Change = Box<dyn Fn(&mut TableConfig)>;
    let cases: Vec<(&str, Change)> = vec![
        ("small_blind_cents", Box::new(move |c| c.blinds_cents[0] = odd)),
        ("big_blind_cents", Box::new(move |c| c.blinds_cents[1] = 3 * odd)),
        ("ante_cents", Box::new(move |c| c.ante_cents = odd)),
        ("buy_in_max_cents", Box::new(move |c| c.buy_in.max_cents += chip / 2)),
        ("rake_increment_cents", Box::new(move |c| c.fee = config::FeePolicy::Rake { percent_bps: 1000, increment_cents: odd, cap_cents: 5 * chip, no_flop_no_drop: true, min_pot_cents: 0 })),
    ];
    for (name, change) in cases {
        let mut bad = nl();
        change(&mut bad);
        let r = rejected(g.world.exec(open(bad)), "INVALID_CONFIG");
        assert_eq!(r.number("min_playable_chip_cents"), Some(chip), "{name}");
        assert!(r.number(name).is_some(), "{name}: {r:?}");
    }
    for (window_ms, tolerance_bps) in [(0, 0), (config::MIN_REBUY_WAIT_WINDOW_MS - 1, 0), (config::MAX_REBUY_WAIT_WINDOW_MS + 1, 0), (3_600_000, config::MAX_REBUY_TOLERANCE_BPS + 1), (3_600_000, -1)] {
        let mut bad = nl();
        bad.rebuy = config::RebuyPolicy { wait_window_ms: window_ms, tolerance_bps, allow_second_seat: false };
        rejected(g.world.exec(open(bad)), "INVALID_REBUY_POLICY");
    }
    // The bounds themselves are allowed, and so are the presets of RULES.md.
    for (window_ms, tolerance_bps) in [(config::MIN_REBUY_WAIT_WINDOW_MS, 0), (config::MAX_REBUY_WAIT_WINDOW_MS, config::MAX_REBUY_TOLERANCE_BPS)] {
        let mut ok = nl();
        ok.rebuy = config::RebuyPolicy { wait_window_ms: window_ms, tolerance_bps, allow_second_seat: false };
        assert!(ok.validate().is_ok(), "{window_ms} {tolerance_bps}");
    }
    for preset in [TableConfig::no_limit_holdem(100, 200), TableConfig::pot_limit_omaha(200, 500), TableConfig::fixed_limit_holdem(400, 800, 4)] {
        assert!(preset.validate().is_ok(), "{}", preset.game_key);
    }
}

/// R-CHIP-2, R-TIP-1, R-STAKE-2: like the re-buy wait, the controls a floor supervisor could
/// otherwise switch off with one configuration change (the insiders' hostile pass: a
/// supervisor threshold of $90 million, a $19,000 "refreshment allowance" that is ratholing,
/// a $50,000 tip cap) are bounded by the room; a table may tighten them, on opening or on a
/// change.
#[test]
fn r_chip_2_r_tip_1_r_stake_2_a_table_cannot_loosen_the_room_controls() {
    let mut g = three();
    type Change = Box<dyn Fn(&mut TableConfig, Cents)>;
    let cases: Vec<(&str, &str, Cents, Change)> = vec![
        ("R-CHIP-2", "supervisor_threshold_cents", config::MAX_SUPERVISOR_THRESHOLD_CENTS, Box::new(|c, v| c.buy_in.supervisor_threshold_cents = v)),
        ("R-TIP-1", "tip_cap_cents", config::MAX_TIP_CAP_CENTS, Box::new(|c, v| c.tip_cap_cents = v)),
        ("R-STAKE-2", "refreshment_allowance_cents", config::MAX_REFRESHMENT_ALLOWANCE_CENTS, Box::new(|c, v| c.refreshment_allowance_cents = v)),
    ];
    let version = g.state().config.as_ref().unwrap().version;
    for (rule, name, max, change) in &cases {
        let mut loose = nl();
        change(&mut loose, max + 1);
        let r = rejected(g.table(TableOp::ChangeConfig { config: loose }), "INVALID_CONFIG");
        assert_eq!((r.reason.rule, r.number(name), r.number("max_cents")), (*rule, Some(max + 1), Some(*max)), "{name}");
        let mut tight = nl();
        change(&mut tight, *max);
        assert!(tight.validate().is_ok(), "{name} at the bound");
        change(&mut tight, 0);
        assert!(tight.validate().is_ok(), "{name} at 0");
    }
    assert_eq!(g.state().config.as_ref().unwrap().version, version, "no loosening change was recorded");
}

#[test]
fn r_unit_2_bets_in_whole_minimum_chips() {
    let mut g = three();
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    let r = rejected(g.act(3, Action::Raise { to_cents: 450 }), "NOT_MULTIPLE_OF_MIN_CHIP");
    assert_eq!(r.number("min_playable_chip_cents"), Some(100));
}

/// R-UNIT-2 (the betting pass): "smaller chips (tip chips) never play, whatever their number".
/// A $0.25 chip in a $10.25 stack at a $1-minimum table went into an all-in and was won. The
/// all-in is the playable stack, $10; the quarter stays in front of the player, who is all in.
#[test]
fn r_unit_2_an_all_in_is_for_the_playable_stack_only() {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.chip_set = ChipSet { denominations_cents: vec![25, 100, 500, 2_500], min_playable_chip_cents: 100 };
    c.buy_in.min_cents = d(10);
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100)), (3, 1_025)]);
    g.start(1, 1, &[1, 2, 3]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(3, PostKind::BigBlind, d(2)).unwrap();
    g.ok(1, Action::Raise { to_cents: d(30) });
    g.ok(2, Action::Fold);
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents, l.all_in_to_cents), (3, d(8), d(10)), "the quarter does not play");
    g.ok(3, Action::AllIn);
    assert_eq!(g.stack(3), 25);
    let pots = g.showdown(vec![vec![3], vec![1]]);
    assert_eq!(pots[0].amount_cents, d(10) + d(10) + d(1), "$10 from each, the small blind's $1");
    assert_eq!(g.stack(3), d(21) + 25, "the winner keeps the quarter, and wins none of it");
    // Lost, the quarter is all the seat holds: it is not dealt in (the fixes' pass: it was, and
    // "called" for nothing).
    g.end();
    g.start(2, 2, &[1, 2, 3]);
    g.post(3, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Fold);
    g.ok(3, Action::AllIn);
    g.ok(1, Action::Call);
    g.check_down(&[]);
    g.showdown(vec![vec![1], vec![3]]);
    g.end();
    assert_eq!(g.stack(3), 25);
    let r = rejected(g.table(TableOp::StartHand { hand_no: 3, button_seat: 3, dealt_seats: vec![1, 2, 3] }), "NO_CHIPS");
    assert_eq!((r.number("seat"), r.number("stack_cents")), (Some(3), Some(25)));
}

#[test]
fn r_audit_2_stream_must_be_loaded() {
    let ctx = ctx_at(0, "dealer-1");
    let cmd = Command::Table(TableCommand { table_id: tid("T1"), op: TableOp::EndHand });
    rejected(decide(&Snapshot::new(), &ctx, &cmd), "STREAM_NOT_LOADED");
    assert_eq!(cmd.streams(), vec![StreamId::Table(tid("T1"))]);
}

#[test]
fn r_stake_1_hand_life_cycle_refusals() {
    let mut g = three();
    rejected(g.act(1, Action::Check), "NO_HAND_IN_PROGRESS");
    rejected(g.table(TableOp::StartHand { hand_no: 1, button_seat: 3, dealt_seats: vec![1] }), "TOO_FEW_PLAYERS");
    g.table(TableOp::SeatPlayer { seat: 5, player_id: pid("P5") }).unwrap();
    rejected(g.table(TableOp::StartHand { hand_no: 1, button_seat: 3, dealt_seats: vec![1, 5] }), "NO_CHIPS");
    g.start(1, 3, &[1, 2, 3]);
    rejected(g.table(TableOp::StartHand { hand_no: 2, button_seat: 3, dealt_seats: vec![1, 2] }), "HAND_ALREADY_STARTED");
    rejected(g.table(TableOp::EndHand), "HAND_NOT_SETTLED");
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, Action::Fold);
    g.ok(1, Action::Fold);
    g.end();
    let r = rejected(g.table(TableOp::StartHand { hand_no: 1, button_seat: 1, dealt_seats: vec![1, 2] }), "HAND_NUMBER_NOT_INCREASING");
    assert_eq!(r.number("last_hand_no"), Some(1));
}

#[test]
fn r_post_refusals() {
    let mut g = Game::new(nl(), &[(1, d(100)), (2, d(100)), (3, d(100)), (4, d(100))]);
    g.start(1, 4, &[1, 2, 3]);
    rejected(g.post(4, PostKind::BigBlind, d(2)), "SEAT_NOT_IN_HAND");
    rejected(g.post(1, PostKind::Ante, d(1)), "POST_NOT_CONFIGURED");
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    rejected(g.post(1, PostKind::SmallBlind, d(1)), "DUPLICATE_POST");
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    rejected(g.post(1, PostKind::Straddle, d(4)), "STRADDLE_OUT_OF_POSITION");
    g.ok(3, Action::Call);
    rejected(g.post(3, PostKind::Straddle, d(4)), "POSTS_CLOSED");
}

#[test]
fn r_bet_1_round_and_showdown_sequence_refusals() {
    let mut g = three();
    g.start(1, 3, &[1, 2, 3]);
    rejected(g.table(TableOp::NextRound { first_to_act_seat: None }), "ROUND_NOT_COMPLETE");
    rejected(g.table(TableOp::Showdown { high: vec![vec![1]], low: None, rake_cents: None }), "SHOWDOWN_NOT_READY");
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    rejected(g.act(1, Action::Check), "BETTING_ROUND_CLOSED");
    g.check_down(&[1, 2, 3]);
    rejected(g.table(TableOp::NextRound { first_to_act_seat: None }), "NO_MORE_ROUNDS");
    rejected(g.table(TableOp::Showdown { high: vec![vec![9]], low: None, rake_cents: None }), "SHOWDOWN_INVALID_RANKING");
    rejected(g.table(TableOp::Showdown { high: vec![vec![1], vec![1]], low: None, rake_cents: None }), "SHOWDOWN_INVALID_RANKING");
    rejected(g.table(TableOp::Showdown { high: vec![], low: None, rake_cents: None }), "SHOWDOWN_NO_ELIGIBLE_WINNER");
    g.showdown(vec![vec![2]]);
}

#[test]
fn r_bet_2_raise_needs_chips_and_an_opponent() {
    let mut g = Game::new(nl(), &[(1, d(52)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Call);
    let r = rejected(g.act(1, bet(53)), "BET_EXCEEDS_STACK");
    assert_eq!(r.number("stack_cents"), Some(d(50)));
    g.ok(1, Action::AllIn);
    let r = rejected(g.act(2, raise(100)), "NO_OPPONENT_TO_RAISE");
    assert_eq!(r.reason.rule, "R-BET-2");
    rejected(g.act(2, Action::Complete), "NOTHING_TO_COMPLETE");
    g.ok(2, Action::Call);
}

#[test]
fn r_stake_5_cash_in_play_only_where_allowed() {
    let mut g = Game::new(nl(), &[(1, d(100))]);
    rejected(g.table(TableOp::PutCashInPlay { seat: 1, player_id: pid("P1"), amount_cents: d(20), supervisor_id: None }), "CASH_IN_PLAY_NOT_ALLOWED");
}

/// R-BET-1 (the betting pass): outside stud a dealer named the button first to act on the flop,
/// and it acted first. The street opens with the first player able to act left of the button.
#[test]
fn r_bet_1_a_street_without_up_cards_opens_left_of_the_button() {
    let mut g = three();
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    g.ok(3, Action::Call);
    g.ok(1, Action::Call);
    g.ok(2, Action::Check);
    let r = rejected(g.table(TableOp::NextRound { first_to_act_seat: Some(3) }), "FIRST_TO_ACT_NOT_LEFT_OF_BUTTON");
    assert_eq!((r.reason.rule, r.number("seat"), r.number("expected_seat")), ("R-BET-1", Some(3), Some(1)));
    g.table(TableOp::NextRound { first_to_act_seat: Some(1) }).unwrap();
    assert_eq!(g.legal().seat, 1);
}

/// R-UNIT-1 (the stakes pass): chips of nothing or less taken off a stack were refused as
/// ratholing (R-STAKE-2) and kept against the patron; they are bad input.
#[test]
fn r_unit_1_nothing_taken_off_a_stack_is_bad_input_not_ratholing() {
    let mut g = three();
    for amount_cents in [0, -d(10)] {
        for player_id in [None, Some(pid("P1"))] {
            let r = rejected(g.table(TableOp::RemoveChips { seat: 1, amount_cents, player_id: player_id.clone() }), "AMOUNT_NOT_POSITIVE");
            assert_eq!((r.reason.rule, r.number("amount_cents")), ("R-UNIT-1", Some(amount_cents)));
        }
    }
    rejected(g.table(TableOp::RemoveChips { seat: 1, amount_cents: d(10), player_id: None }), "RATHOLING_FORBIDDEN");
}

/// R-POST-4 (the betting pass): a straddle all in for less than its amount set the round's bet at
/// the full straddle nobody had put in. A straddle is a choice: a stack short of it is refused
/// (it calls or raises all in when its turn comes).
#[test]
fn r_post_4_a_stack_short_of_the_straddle_does_not_straddle() {
    let mut g = Game::new(nl(), &[(1, d(100)), (2, d(100)), (3, d(3))]);
    g.start(1, 3, &[1, 2, 3]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    let r = rejected(g.post(3, PostKind::Straddle, d(3)), "POST_WRONG_AMOUNT");
    assert_eq!((r.reason.rule, r.number("required_cents"), r.number("stack_cents")), ("R-POST-4", Some(d(4)), Some(d(3))));
    g.ok(3, Action::AllIn);
    let l = g.legal();
    assert_eq!((l.seat, l.call_cents), (1, d(2)), "the bet is the $3 all in");
}

/// R-STAKE-6 (the stakes pass): a move to another seat of the same table was answered as a table
/// not open under R-AUDIT-2.
#[test]
fn r_stake_6_a_house_move_goes_to_another_table() {
    let mut g = three();
    let r = rejected(g.table(TableOp::MovePlayer { seat: 1, player_id: pid("P1"), to_table_id: tid(TABLE), to_seat: 5 }), "MOVE_TO_SAME_TABLE");
    assert_eq!((r.reason.rule, r.number("to_seat")), ("R-STAKE-6", Some(5)));
}

/// R-STAKE-3 (the stakes pass): a short buy-in of nothing, or above the minimum, was accepted.
#[test]
fn r_stake_3_a_short_buy_in_is_above_nothing_and_below_the_minimum() {
    for short in [0, d(40), d(50)] {
        let mut c = nl();
        c.buy_in.min_cents = d(40);
        c.buy_in.short_buy_min_cents = Some(short);
        let r = c.validate().unwrap_err();
        assert_eq!((r.reason.code, r.reason.rule, r.number("short_buy_min_cents")), ("INVALID_CONFIG", "R-STAKE-3", Some(short)));
    }
    let mut c = nl();
    c.buy_in.min_cents = d(40);
    c.buy_in.short_buy_min_cents = Some(d(20));
    c.validate().unwrap();
}

/// R-STAKE-4 (the second stakes pass): a table cut to 6 seats under a patron at seat 9 left the
/// seat unreachable (cash-out, top-up and move refused as no seat), its $200 still on the table.
#[test]
fn r_stake_4_a_table_is_not_cut_below_a_seat_held() {
    let mut g = Game::new(nl(), &[(1, d(100)), (9, d(200))]);
    let mut smaller = g.state().config.clone().unwrap();
    smaller.max_seats = 6;
    let r = rejected(g.table(TableOp::ChangeConfig { config: smaller.clone() }), "INVALID_CONFIG");
    assert_eq!((r.reason.rule, r.number("seat"), r.number("max_seats")), ("R-STAKE-4", Some(9), Some(6)));
    g.table(TableOp::CashOut { seat: 9, player_id: pid("P9") }).unwrap();
    g.table(TableOp::ChangeConfig { config: smaller }).unwrap();
}

/// R-REBUY-1 (the second stakes pass): 128 games joined and left with the same $200 pushed out
/// the departure that bound, and $40 bought back in at once. A patron whose unmet departures fill
/// the record returns to one of their games first.
#[test]
fn r_rebuy_1_departures_at_the_bound_keep_the_patron_to_their_games() {
    let mut g = Game::new(nl(), &[(1, d(200)), (2, d(100))]);
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let mut last = None;
    for n in 0..player::MAX_UNMET_DEPARTURES {
        let mut c = nl();
        c.blinds_cents = vec![d(1), d(3 + n as Cents)];
        c.min_bet_cents = d(3 + n as Cents);
        let t = TableId::new(&format!("G{n}")).unwrap();
        g.world.exec(Command::Table(TableCommand { table_id: t.clone(), op: TableOp::OpenTable { config: c } })).unwrap();
        let buy = TableOp::BuyIn { seat: 1, player_id: pid("P1"), amount_cents: d(200), source: FundsSource::PocketChips, supervisor_id: None, short_buy: false };
        let result = g.world.exec(Command::Table(TableCommand { table_id: t.clone(), op: buy }));
        if let Err(r) = result {
            assert_eq!(r.reason.code, "DEPARTURES_AT_BOUND", "{r}");
            assert_eq!((r.reason.rule, r.number("max_unmet_departures")), ("R-REBUY-1", Some(player::MAX_UNMET_DEPARTURES as Cents)));
            last = Some(n);
            break;
        }
        g.world.exec(Command::Table(TableCommand { table_id: t, op: TableOp::CashOut { seat: 1, player_id: pid("P1") } })).unwrap();
    }
    assert_eq!(last, Some(player::MAX_UNMET_DEPARTURES - 1), "the record full, no further game");
    let back = TableOp::BuyIn { seat: 1, player_id: pid("P1"), amount_cents: d(40), source: FundsSource::PocketChips, supervisor_id: None, short_buy: false };
    let r = rejected(g.table(back), "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(r.number("amount_left_with_cents"), Some(d(200)));
}
