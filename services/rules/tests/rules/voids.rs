//! Slip voids (R-CHIP-3), color changes at the cage (R-CHIP-1), cage shift counts (R-CHIP-4)
//! and corrections on cage and player streams (R-AUDIT-1).

use chipledger_rules::*;

use crate::support::*;

fn nl() -> TableConfig {
    example_config(TableConfig::no_limit_holdem(d(1), d(2)))
}

fn cage(g: &mut Game, op: CageOp) -> Result<Vec<(StreamId, Event)>, Rejection> {
    g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op }))
}

fn chips(denomination_dollars: i64, count: i64) -> Vec<ChipCount> {
    vec![ChipCount { denomination_cents: d(denomination_dollars), count }]
}

fn signers() -> Signers {
    Signers { first: "cage-1".into(), second: "floor-1".into() }
}

fn void(kind: SlipKind, slip_no: u64, reason: &str, signers: Signers) -> TableOp {
    TableOp::VoidSlip { cage_id: cid(CAGE), kind, slip_no, reason: reason.into(), signers }
}

#[test]
fn r_chip_3_void_needs_reason_and_two_signers_reverses_postings_and_keeps_the_number() {
    let mut g = Game::new(nl(), &[]);
    let tray_before = g.state().tray_value_cents();
    let cage_before = g.world.cages[&cid(CAGE)].chip_count(d(100));
    let events = g.fill(chips(100, 10)).unwrap();
    let fill_postings = events[0].1.postings();
    let fills_before = g.state().shift.fills_cents;
    rejected(g.table(void(SlipKind::Fill, 2, " ", signers())), "VOID_REASON_REQUIRED");
    rejected(g.table(void(SlipKind::Fill, 2, "wrong table", Signers { first: "x".into(), second: "x".into() })), "SIGNERS_NOT_DISTINCT");
    let r = rejected(g.table(void(SlipKind::Fill, 7, "wrong table", signers())), "SLIP_NOT_FOUND");
    assert_eq!(r.number("slip_no"), Some(7));
    let events = g.table(void(SlipKind::Fill, 2, "wrong table", signers())).unwrap();
    // The void's postings are the fill's, reversed.
    let mut reversed: Vec<Posting> = fill_postings.iter().map(|p| Posting::new(p.account.clone(), -p.amount_cents)).collect();
    let mut got = events[0].1.postings();
    reversed.sort_by_key(|p| p.account.key());
    got.sort_by_key(|p| p.account.key());
    assert_eq!(got, reversed);
    assert!(matches!(&events[1].1, Event::Cage(CageEvent::SlipVoided { slip_no: 2, .. })));
    assert_eq!(g.state().tray_value_cents(), tray_before);
    assert_eq!(g.world.cages[&cid(CAGE)].chip_count(d(100)), cage_before);
    assert_eq!(g.state().shift.fills_cents, fills_before - d(1000));
    rejected(g.table(void(SlipKind::Fill, 2, "again", signers())), "SLIP_ALREADY_VOIDED");
    // The number stays used: the next fill is slip 3.
    let r = rejected(g.table(TableOp::Fill { cage_id: cid(CAGE), slip_no: 2, chips: chips(100, 1), signers: signers() }), "SLIP_OUT_OF_SEQUENCE");
    assert_eq!(r.number("expected_slip_no"), Some(3));
    // A credit void returns the chips to the tray.
    g.table(TableOp::Credit { cage_id: cid(CAGE), slip_no: 1, chips: chips(5, 4), signers: signers() }).unwrap();
    let tray_5 = g.state().tray_count(d(5));
    g.table(void(SlipKind::Credit, 1, "keyed on the wrong table", signers())).unwrap();
    assert_eq!(g.state().tray_count(d(5)), tray_5 + 4);
    assert_eq!(g.world.cages[&cid(CAGE)].last_credit_slip_no, 1);
}

#[test]
fn r_chip_1_color_change_at_the_cage_keeps_the_pocket_value() {
    let mut g = Game::new(nl(), &[]);
    cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(100, 5), supervisor_id: None }).unwrap();
    let give = chips(100, 1);
    let receive = chips(25, 4);
    let r = rejected(cage(&mut g, CageOp::ColorChange { player_id: pid("P1"), give: give.clone(), receive: chips(25, 3) }), "COLOR_CHANGE_UNEQUAL");
    assert_eq!(r.number("receive_cents"), Some(d(75)));
    rejected(cage(&mut g, CageOp::ColorChange { player_id: pid("P2"), give: give.clone(), receive: receive.clone() }), "POCKET_INSUFFICIENT");
    // $100 for $100 exchanges nothing (the cage pass: it was recorded, and counted in the day's
    // chips issued and returned).
    let r = rejected(cage(&mut g, CageOp::ColorChange { player_id: pid("P1"), give: give.clone(), receive: give.clone() }), "COLOR_CHANGE_SAME_DENOMINATION");
    assert_eq!((r.reason.rule, r.number("denomination_cents")), ("R-CHIP-1", Some(d(100))));
    let c = &g.world.cages[&cid(CAGE)];
    let (hundreds, quarters) = (c.chip_count(d(100)), c.chip_count(d(25)));
    let events = cage(&mut g, CageOp::ColorChange { player_id: pid("P1"), give, receive }).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, d(500));
    let c = &g.world.cages[&cid(CAGE)];
    assert_eq!((c.chip_count(d(100)), c.chip_count(d(25))), (hundreds + 1, quarters - 4));
    // R-CHIP-5 liability by denomination follows the exchange.
    let events = cage(&mut g, CageOp::CloseGamingDay).unwrap();
    let Event::Cage(CageEvent::GamingDayClosed { liability, .. }) = &events[0].1 else { panic!() };
    let of = |dn: Cents| liability.iter().find(|c| c.denomination_cents == dn).map_or(0, |c| c.count);
    // Issued: 2,000 of each in the opening fill; then 5 x $100 sold; 4 x $25 out and 1 x $100 back.
    assert_eq!((of(d(25)), of(d(100))), (2_004, 2_004));
}

#[test]
fn r_chip_4_cage_shift_count_equal_to_the_book_records_no_variance() {
    let mut g = Game::new(nl(), &[]);
    let c = g.world.cages[&cid(CAGE)].clone();
    let signers = Signers { first: "cage-1".into(), second: "cage-2".into() };
    let events = cage(&mut g, CageOp::CountShift { counted_chips: c.chips.clone(), counted_cash_cents: c.cash_cents, signers }).unwrap();
    assert_eq!(events.len(), 1);
    assert!(matches!(&events[0].1, Event::Cage(CageEvent::ShiftCounted { cash_cents, .. }) if *cash_cents == c.cash_cents));
}

/// R-CHIP-4 (the corrections pass): what a cage count was signed over stays as counted. A fill
/// voided after the cage's count had put its chips back on the cage's book, and the next count
/// of the same chips recorded a shortage that never happened; a cage's opening, taken back,
/// left an open cage with nothing that could neither be opened again nor stocked.
#[test]
fn r_chip_4_a_cage_count_is_not_undone_by_a_void_or_a_correction_of_the_opening() {
    let mut g = Game::new(nl(), &[]);
    g.fill(chips(100, 10)).unwrap();
    g.table(TableOp::Credit { cage_id: cid(CAGE), slip_no: 1, chips: chips(5, 4), signers: signers() }).unwrap();
    let c = g.world.cages[&cid(CAGE)].clone();
    let count = CageOp::CountShift { counted_chips: c.chips.clone(), counted_cash_cents: c.cash_cents, signers: Signers { first: "cage-1".into(), second: "cage-2".into() } };
    cage(&mut g, count).unwrap();
    let counted_through = g.world.cages[&cid(CAGE)].counted_through_version as Cents;
    for (kind, slip_no) in [(SlipKind::Fill, 2), (SlipKind::Credit, 1)] {
        let r = rejected(g.table(void(kind, slip_no, "keyed in error", signers())), "SLIP_IN_COUNTED_SHIFT");
        assert_eq!((r.reason.rule, r.number("slip_no"), r.number("cage_counted_through_stream_version")), ("R-CHIP-4", Some(slip_no as Cents), Some(counted_through)));
    }
    // A slip after the count is voided as before.
    g.fill(chips(100, 1)).unwrap();
    g.table(void(SlipKind::Fill, 3, "keyed in error", signers())).unwrap();

    let mut fresh = World::new();
    let east = cid("EAST");
    let open = CageOp::OpenCage { denominations_cents: vec![d(1)], chips: chips(1, 10), cash_cents: d(50) };
    let opened = fresh.exec(Command::Cage(CageCommand { cage_id: east.clone(), op: open })).unwrap();
    let correct = CageOp::Correct {
        reverses_event_id: "evt-open".into(),
        reverses_stream_version: 1,
        reverses_event_types: vec!["CageOpened".into()],
        reverses_gaming_day: "2026-03-01".into(),
        original_postings: opened[0].1.postings(),
        approved_by: "cage-mgr".into(),
        reason: "opened with the wrong float".into(),
    };
    let r = rejected(fresh.exec(Command::Cage(CageCommand { cage_id: east.clone(), op: correct })), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-CHIP-4");
    assert_eq!((fresh.cages[&east].cash_cents, fresh.cages[&east].chip_count(d(1))), (d(50), 10));
}

fn correct_cage(reverses: &str, postings: Vec<Posting>, approved_by: &str) -> CageOp {
    CageOp::Correct {
        reverses_event_id: reverses.into(),
        reverses_stream_version: 0,
        reverses_event_types: vec!["ChipsSold".into()],
        reverses_gaming_day: "2026-03-01".into(),
        original_postings: postings,
        approved_by: approved_by.into(),
        reason: "sold to the wrong patron".into(),
    }
}

#[test]
fn r_audit_1_cage_correction_reverses_a_sale_and_the_pocket_follows() {
    let mut g = Game::new(nl(), &[]);
    let cash_before = g.world.cages[&cid(CAGE)].cash_cents;
    let events = cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(100, 5), supervisor_id: None }).unwrap();
    let original = events[0].1.postings();
    let command = Command::Cage(CageCommand { cage_id: cid(CAGE), op: correct_cage("evt-7", original.clone(), "cage-mgr") });
    assert_eq!(command.streams(), vec![StreamId::Cage(cid(CAGE)), StreamId::Player(pid("P1"))]);
    rejected(cage(&mut g, correct_cage("evt-7", original.clone(), "dealer-1")), "CORRECTION_APPROVER_REQUIRED");
    let table_side = vec![
        Posting::new(Account::Tray { table_id: tid(TABLE), denomination_cents: d(100) }, d(100)),
        Posting::new(Account::CageChips { cage_id: cid(CAGE), denomination_cents: d(100) }, -d(100)),
    ];
    rejected(cage(&mut g, correct_cage("evt-8", table_side, "cage-mgr")), "CORRECTION_INVALID");
    let events = cage(&mut g, correct_cage("evt-7", original.clone(), "cage-mgr")).unwrap();
    assert!(matches!(&events[1].1, Event::Player(PlayerEvent::PocketCorrected { amount_cents, .. }) if *amount_cents == -d(500)));
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, 0);
    assert_eq!(g.world.cages[&cid(CAGE)].cash_cents, cash_before);
    // An event is reversed once (R-AUDIT-1).
    rejected(cage(&mut g, correct_cage("evt-7", original.clone(), "cage-mgr")), "ALREADY_CORRECTED");
    // Reversing the same postings under another event's name would take chips the patron no
    // longer has.
    let r = rejected(cage(&mut g, correct_cage("evt-9", original, "cage-mgr")), "CORRECTION_WOULD_GO_NEGATIVE");
    assert_eq!(r.number("balance_cents"), Some(-d(500)));
}

/// R-CHIP-5 with R-AUDIT-1 (the cage pass): a corrected redemption was counted as chips issued;
/// issued and returned both grew, the liability right. Chips a correction takes back into the
/// cage were never issued, chips it takes out were never returned.
#[test]
fn r_chip_5_a_corrected_sale_or_redemption_comes_off_what_was_issued_or_returned() {
    let mut g = Game::new(nl(), &[]);
    let issued_before = g.world.cages[&cid(CAGE)].issued.clone();
    let sold = cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(100, 8), supervisor_id: None }).unwrap();
    let redeemed = cage(&mut g, CageOp::RedeemChips { player_id: pid("P1"), chips: chips(100, 8) }).unwrap();
    let mut undo_redemption = correct_cage("evt-redeem", redeemed[0].1.postings(), "cage-mgr");
    if let CageOp::Correct { reverses_event_types, .. } = &mut undo_redemption {
        *reverses_event_types = vec!["ChipsRedeemed".into()];
    }
    cage(&mut g, undo_redemption).unwrap();
    let count = |list: &[ChipCount]| list.iter().find(|c| c.denomination_cents == d(100)).map_or(0, |c| c.count);
    let state = &g.world.cages[&cid(CAGE)];
    assert_eq!((count(&state.issued) - count(&issued_before), count(&state.returned)), (8, 0), "{state:?}");
    // The sale corrected too: nothing issued by the two.
    let redeemed_back = g.world.players[&pid("P1")].pocket_cents;
    assert_eq!(redeemed_back, d(800));
    cage(&mut g, correct_cage("evt-sale", sold[0].1.postings(), "cage-mgr")).unwrap();
    let state = &g.world.cages[&cid(CAGE)];
    assert_eq!((count(&state.issued) - count(&issued_before), count(&state.returned)), (0, 0), "{state:?}");
}

/// R-MARK-1 with R-AUDIT-1: a marker is redeemed or written off, never corrected at the cage:
/// reversing its postings alone left it open, redeemable and using the credit line while the
/// receivable went (and a redemption then took the receivable below zero).
#[test]
fn r_mark_1_a_marker_is_not_corrected_away() {
    let mut g = Game::new(nl(), &[]);
    g.world
        .exec(Command::Player(PlayerCommand { player_id: pid("P1"), op: PlayerOp::SetCreditLine { line_cents: d(1000), approved_by: "credit-mgr".into() } }))
        .unwrap();
    let issued = cage(
        &mut g,
        CageOp::IssueMarker { player_id: pid("P1"), marker_no: 1, chips: chips(100, 6), approved_by: "credit-mgr".into(), delivery: MarkerDelivery::Pocket },
    )
    .unwrap();
    let receivable = g.world.cages[&cid(CAGE)].markers_receivable_cents;
    let r = rejected(cage(&mut g, correct_cage("evt-1", issued[0].1.postings(), "cage-mgr")), "CORRECTION_INVALID");
    assert!(r.detail.contains("redeem"), "{}", r.detail);
    assert_eq!(g.world.cages[&cid(CAGE)].markers_receivable_cents, receivable);
}

/// A patron's records are not taken back alone: the record of cash (R-AUDIT-4) and the
/// departure (R-REBUY-1) follow the money the cage or table event moved. The audit pass took a
/// departure back alone: out of T1 with $80 in the pocket, back in the game for $40.
#[test]
fn r_audit_1_player_corrections_of_a_cash_record_a_departure_or_any_record_are_refused() {
    let mut g = Game::new(nl(), &[(1, d(200))]);
    let player = |g: &Game| g.world.players[&pid("P1")].clone();
    assert_eq!(player(&g).cash_day.cash_in_cents, d(200));
    let correct = |reversal: PlayerReversal, approved_by: &str| {
        // The record's own event id: the cash transaction is evt-3, the departure evt-9.
        let reverses_event_id = match reversal {
            PlayerReversal::CashTransaction { .. } => "evt-3",
            PlayerReversal::Departure { .. } => "evt-9",
            PlayerReversal::Record { .. } => "evt-4",
        };
        Command::Player(PlayerCommand {
            player_id: pid("P1"),
            op: PlayerOp::Correct { reverses_event_id: reverses_event_id.into(), approved_by: approved_by.into(), reason: "keyed twice".into(), reversal },
        })
    };
    let cash = |amount_cents| PlayerReversal::CashTransaction { gaming_day: "2026-03-01".into(), direction: CashDirection::In, amount_cents, ctr_rearmed: false };
    rejected(g.world.exec(correct(cash(d(50)), "dealer-1")), "CORRECTION_APPROVER_REQUIRED");
    // R-AUDIT-4: the record of cash follows the money; taken back alone it would lower the
    // day's total (and the reports it requires) while the $200 stays in the drop.
    let r = rejected(g.world.exec(correct(cash(d(50)), "floor-2")), "CORRECTION_INVALID");
    assert_eq!((r.reason.rule, r.number("amount_cents")), ("R-AUDIT-4", Some(d(50))));
    assert_eq!(player(&g).cash_day.cash_in_cents, d(200));
    // R-REBUY-1: out with $200; the departure taken back alone would let a $40 buy-in in.
    g.table(TableOp::CashOut { seat: 1, player_id: pid("P1") }).unwrap();
    let left = player(&g).departures[0].clone();
    let departure = PlayerReversal::Departure { table_id: left.table_id, at_unix_ms: left.at_unix_ms };
    let r = rejected(g.world.exec(correct(departure, "floor-2")), "CORRECTION_INVALID");
    assert_eq!(r.reason.rule, "R-REBUY-1");
    assert_eq!(player(&g).departures.len(), 1, "the departure still binds");
    // Every other record names its rule too (a marker's had been refused naming none): R-MARK-1
    // for a marker's records, R-AUDIT-1 for a record of chips a table or cage event moved.
    let record = |event_type: &str| PlayerReversal::Record { event_type: event_type.into() };
    for marker in ["MarkerIssued", "MarkerRedeemed", "MarkerWrittenOff"] {
        let r = rejected(g.world.exec(correct(record(marker), "floor-2")), "CORRECTION_INVALID");
        assert_eq!(r.reason.rule, "R-MARK-1", "{marker}");
    }
    for other in ["JoinedTable", "PocketChipsPlayed", "ChipsBought", "CreditLineSet", "PocketCorrected"] {
        let r = rejected(g.world.exec(correct(record(other), "floor-2")), "CORRECTION_INVALID");
        assert_eq!(r.reason.rule, "R-AUDIT-1", "{other}");
        assert!(r.detail.contains(other), "{}", r.detail);
    }
    g.table(TableOp::SeatPlayer { seat: 2, player_id: pid("P1") }).unwrap();
    let r = rejected(
        g.table(TableOp::BuyIn { seat: 2, player_id: pid("P1"), amount_cents: d(40), source: FundsSource::Cash, supervisor_id: None, short_buy: false }),
        "REBUY_BELOW_AMOUNT_LEFT",
    );
    assert_eq!(r.reason.rule, "R-REBUY-1");
}

#[test]
fn r_chip_6_events_carry_the_callers_gaming_day_and_totals_restart_with_it() {
    let mut g = Game::new(nl(), &[(1, d(200))]);
    let day = |g: &Game| g.world.players[&pid("P1")].cash_day.clone();
    assert_eq!((day(&g).gaming_day.as_str(), day(&g).cash_in_cents), ("2026-03-01", d(200)));
    g.world.ctx.gaming_day = "2026-03-02".into();
    let events = g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(50), source: FundsSource::Cash, supervisor_id: None }).unwrap();
    assert!(events.iter().any(|(_, e)| matches!(e, Event::Player(PlayerEvent::CashTransaction { gaming_day, .. }) if gaming_day == "2026-03-02")));
    assert_eq!((day(&g).gaming_day.as_str(), day(&g).cash_in_cents), ("2026-03-02", d(50)));
}

#[test]
fn r_unit_1_amounts_are_positive_bounded_integer_cents() {
    rejected(money::check_positive("amount_cents", 0), "AMOUNT_NOT_POSITIVE");
    rejected(money::check_positive("amount_cents", money::MAX_AMOUNT_CENTS + 1), "AMOUNT_TOO_LARGE");
    rejected(money::check_non_negative("counted_drop_cents", money::MAX_AMOUNT_CENTS + 1), "AMOUNT_TOO_LARGE");
    // A chip count is refused for its size (not for its sign) before any product can wrap.
    let chip_set = ChipSet { denominations_cents: vec![d(1), d(100)], min_playable_chip_cents: d(1) };
    let huge = [ChipCount { denomination_cents: d(100), count: i64::MAX / 2 }];
    let r = rejected(money::check_chips(&chip_set, &huge), "AMOUNT_TOO_LARGE");
    assert_eq!(r.number("max_count"), Some(money::MAX_AMOUNT_CENTS / d(100)));
    rejected(money::check_chips(&chip_set, &[ChipCount { denomination_cents: d(1), count: 0 }]), "AMOUNT_NOT_POSITIVE");
    let mut g = Game::new(nl(), &[(1, d(100))]);
    rejected(g.table(TableOp::Tip { seat: 1, amount_cents: -d(1) }), "AMOUNT_NOT_POSITIVE");
    // Serialized amounts are JSON integers, never floats.
    let events = g.table(TableOp::Tip { seat: 1, amount_cents: d(1) }).unwrap();
    let json = serde_json::to_string(&events[0].1).unwrap();
    assert!(json.contains("\"amount_cents\":100") && !json.contains("100.0"), "{json}");
}

/// R-AUDIT-4 with R-AUDIT-1: the record of cash follows the money. A sale of $12,000 keyed in
/// error and corrected at the cage comes off the patron's day (it had stayed there, and the CTR
/// report with it); the CTR it required stays on the record, and the day's real crossing later
/// requires one again. (Each sale of a day past $10,000 names its supervisor, R-CHIP-2.)
#[test]
fn r_audit_4_a_corrected_cash_sale_comes_off_the_patrons_day_and_the_next_crossing_requires_a_ctr() {
    let mut g = Game::new(nl(), &[]);
    let day = |g: &Game| g.world.players[&pid("P1")].cash_day.clone();
    let sold = cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(100, 120), supervisor_id: Some("floor-1".into()) }).unwrap();
    assert!(sold.iter().any(|(_, e)| matches!(e, Event::Player(PlayerEvent::CashTransaction { ctr_required: true, .. }))));
    assert_eq!((day(&g).cash_in_cents, day(&g).ctr_in_required), (d(12_000), true));
    let events = cage(&mut g, correct_cage("evt-12", sold[0].1.postings(), "cage-mgr")).unwrap();
    let cash = events.iter().find_map(|(stream, e)| match e {
        Event::Player(PlayerEvent::Corrected { reverses_event_id, reversal: PlayerReversal::CashTransaction { gaming_day, direction, amount_cents, ctr_rearmed }, .. }) => {
            Some((stream.clone(), reverses_event_id.clone(), gaming_day.clone(), *direction, *amount_cents, *ctr_rearmed))
        }
        _ => None,
    });
    assert_eq!(cash, Some((StreamId::Player(pid("P1")), "evt-12".to_string(), "2026-03-01".to_string(), CashDirection::In, d(12_000), true)));
    assert_eq!((day(&g).cash_in_cents, day(&g).ctr_in_required), (0, false));
    // The day's real cash: $10,500 crosses the threshold, and that crossing requires a CTR.
    let sold = cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(100, 105), supervisor_id: Some("floor-1".into()) }).unwrap();
    assert!(sold.iter().any(|(_, e)| matches!(e, Event::Player(PlayerEvent::CashTransaction { ctr_required: true, day_total_cents, .. }) if *day_total_cents == d(10_500))));
    // A redemption corrected gives back cash out; an exchange of chips moved no cash and
    // leaves the day alone.
    let redeemed = cage(&mut g, CageOp::RedeemChips { player_id: pid("P1"), chips: chips(100, 5) }).unwrap();
    assert_eq!(day(&g).cash_out_cents, d(500));
    let events = cage(&mut g, correct_cage("evt-13", redeemed[0].1.postings(), "cage-mgr")).unwrap();
    assert!(events.iter().any(|(_, e)| matches!(e, Event::Player(PlayerEvent::Corrected { reversal: PlayerReversal::CashTransaction { direction: CashDirection::Out, amount_cents, ctr_rearmed: false, .. }, .. }) if *amount_cents == d(500))));
    assert_eq!((day(&g).cash_in_cents, day(&g).cash_out_cents), (d(10_500), 0));
    let exchanged = cage(&mut g, CageOp::ColorChange { player_id: pid("P1"), give: chips(100, 1), receive: chips(25, 4) }).unwrap();
    let events = cage(&mut g, correct_cage("evt-14", exchanged[0].1.postings(), "cage-mgr")).unwrap();
    assert!(!events.iter().any(|(_, e)| matches!(e, Event::Player(PlayerEvent::Corrected { .. }))), "{events:?}");
    // Without the day the cash was recorded on, the correction does not guess one.
    let sold = cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(100, 1), supervisor_id: Some("floor-1".into()) }).unwrap();
    let mut undated = correct_cage("evt-15", sold[0].1.postings(), "cage-mgr");
    if let CageOp::Correct { reverses_gaming_day, .. } = &mut undated {
        reverses_gaming_day.clear();
    }
    let r = rejected(cage(&mut g, undated), "CORRECTION_INVALID");
    assert_eq!((r.reason.rule, r.number("cash_cents")), ("R-AUDIT-4", Some(d(100))));
}

/// R-AUDIT-4 with R-AUDIT-1 at a table: a cash buy-in corrected away comes off the patron's
/// day on the day it was recorded; a buy-in from the pocket moved no cash and records none.
#[test]
fn r_audit_4_a_corrected_cash_buy_in_comes_off_the_patrons_day() {
    let mut g = Game::new(nl(), &[]);
    g.table(TableOp::SeatPlayer { seat: 1, player_id: pid("P1") }).unwrap();
    g.table(TableOp::BuyIn { seat: 1, player_id: pid("P1"), amount_cents: d(150), source: FundsSource::Cash, supervisor_id: None, short_buy: false }).unwrap();
    let index = g.world.log.iter().rposition(|(_, e)| e.event_type() == "BoughtIn").unwrap();
    let op = |g: &Game, index: usize, event_type: &str, gaming_day: &str| TableOp::Correct {
        reverses_event_id: format!("event-{index}"),
        reverses_stream_version: stream_version_at(&g.world.log, index),
        reverses_event_types: vec![event_type.into()],
        reverses_gaming_day: gaming_day.into(),
        original_postings: g.world.log[index].1.postings(),
        approved_by: "floor-2".into(),
        reason: "keyed $150 for $50".into(),
    };
    assert_eq!(g.world.players[&pid("P1")].cash_day.cash_in_cents, d(150));
    // Corrected the next gaming day: the cash comes off the day it was paid in on.
    g.world.ctx.gaming_day = "2026-03-02".into();
    let events = g.table(op(&g, index, "BoughtIn", "2026-03-01")).unwrap();
    assert!(events.iter().any(|(stream, e)| *stream == StreamId::Player(pid("P1"))
        && matches!(e, Event::Player(PlayerEvent::Corrected { reversal: PlayerReversal::CashTransaction { gaming_day, direction: CashDirection::In, amount_cents, .. }, .. }) if gaming_day == "2026-03-01" && *amount_cents == d(150))));
    assert_eq!(g.world.players[&pid("P1")].cash_day.cash_in_cents, 0);
    // The seat buys in again, from chips in the pocket this time: no cash, no cash record.
    g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op: CageOp::SellChips { player_id: pid("P1"), chips: chips(25, 2), supervisor_id: None } })).unwrap();
    g.table(TableOp::BuyIn { seat: 1, player_id: pid("P1"), amount_cents: d(50), source: FundsSource::PocketChips, supervisor_id: None, short_buy: false }).unwrap();
    let index = g.world.log.iter().rposition(|(_, e)| e.event_type() == "BoughtIn").unwrap();
    let events = g.table(op(&g, index, "BoughtIn", "2026-03-02")).unwrap();
    assert!(!events.iter().any(|(_, e)| matches!(e, Event::Player(PlayerEvent::Corrected { .. }))), "{events:?}");
    assert_eq!(g.world.players[&pid("P1")].cash_day.cash_in_cents, d(50), "the sale stays on the day");
}

/// R-AUDIT-4: the cash of a correction is taken off the day of the one patron who paid it. Cash
/// postings naming several seats name no one patron, and are refused with the amount (a hand
/// netted with a top-up made meanwhile had taken one patron's cash off another's day).
#[test]
fn r_audit_4_cash_of_several_seats_is_not_taken_off_one_patrons_day() {
    let mut g = Game::new(nl(), &[]);
    for (seat, player) in [(1, "P1"), (2, "P2")] {
        g.table(TableOp::SeatPlayer { seat, player_id: pid(player) }).unwrap();
        g.table(TableOp::BuyIn { seat, player_id: pid(player), amount_cents: d(100), source: FundsSource::Cash, supervisor_id: None, short_buy: false }).unwrap();
    }
    let bought: Vec<usize> = g.world.log.iter().enumerate().filter(|(_, (_, e))| e.event_type() == "BoughtIn").map(|(i, _)| i).collect();
    let postings: Vec<Posting> = bought.iter().flat_map(|i| g.world.log[*i].1.postings()).collect();
    let op = TableOp::Correct {
        reverses_event_id: format!("event-{}", bought[1]),
        reverses_stream_version: stream_version_at(&g.world.log, bought[1]),
        reverses_event_types: vec!["BoughtIn".into()],
        reverses_gaming_day: "2026-03-01".into(),
        original_postings: postings,
        approved_by: "floor-2".into(),
        reason: "two buy-ins as one".into(),
    };
    let r = rejected(g.table(op), "CORRECTION_INVALID");
    assert_eq!((r.reason.rule, r.number("cash_cents")), ("R-AUDIT-4", Some(d(200))));
    assert_eq!((g.world.players[&pid("P1")].cash_day.cash_in_cents, g.world.players[&pid("P2")].cash_day.cash_in_cents), (d(100), d(100)));
}
