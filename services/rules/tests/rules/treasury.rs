//! Chips, cage and inventory (R-CHIP-*), markers and IOUs (R-MARK-*), corrections (R-AUDIT-1).

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

#[test]
fn r_chip_1_color_up_keeps_value_and_tray_counts() {
    let mut g = Game::new(nl(), &[(1, d(100))]);
    let before = (g.state().tray_count(d(1)), g.state().tray_count(d(25)));
    g.table(TableOp::ColorChange { seat: 1, give: chips(1, 50), receive: chips(25, 2) }).unwrap();
    assert_eq!(g.stack(1), d(100), "the value of the stack is unchanged");
    assert_eq!((g.state().tray_count(d(1)), g.state().tray_count(d(25))), (before.0 + 50, before.1 - 2));
    let r = rejected(g.table(TableOp::ColorChange { seat: 1, give: chips(1, 5), receive: chips(5, 2) }), "COLOR_CHANGE_UNEQUAL");
    assert_eq!((r.number("give_cents"), r.number("receive_cents")), (Some(d(5)), Some(d(10))));
    // $5,000 of $5 chips from a $100 stack: of equal value, but not the player's chips.
    let r = rejected(g.table(TableOp::ColorChange { seat: 1, give: chips(5, 1000), receive: chips(500, 10) }), "COLOR_CHANGE_EXCEEDS_STACK");
    assert_eq!((r.reason.rule, r.number("give_cents"), r.number("stack_cents")), ("R-CHIP-1", Some(d(5000)), Some(d(100))));
    let r = rejected(g.table(TableOp::ColorChange { seat: 1, give: chips(3, 1), receive: chips(1, 3) }), "UNKNOWN_DENOMINATION");
    assert_eq!(r.number("denomination_cents"), Some(d(3)));
    // A denomination on both sides exchanges nothing: refused, nothing recorded.
    let version = g.state().version;
    let r = rejected(g.table(TableOp::ColorChange { seat: 1, give: chips(25, 2), receive: [chips(25, 1), chips(5, 5)].concat() }), "COLOR_CHANGE_SAME_DENOMINATION");
    assert_eq!((r.reason.rule, r.number("denomination_cents")), ("R-CHIP-1", Some(d(25))));
    assert_eq!(g.state().version, version);
}

/// R-UNIT-4 (the cage and console passes): a chip list naming a denomination twice had every
/// holder's count judged entry by entry: a cage filled 20 of the 10 chips it held, sold chips
/// it did not have, and a credit or a color change split in two reached the database's check
/// (an internal error, no refusal kept). Every list names each denomination once.
#[test]
fn r_unit_4_a_chip_list_names_each_denomination_once() {
    let mut g = Game::new(nl(), &[(1, d(100))]);
    let twice = |denomination: i64, count: i64| [chips(denomination, count), chips(denomination, count)].concat();
    let slip_no = g.next_fill_slip;
    let fill = TableOp::Fill { cage_id: cid(CAGE), slip_no, chips: twice(100, 1), signers: signers() };
    let r = rejected(g.table(fill), "DENOMINATION_LISTED_TWICE");
    assert_eq!((r.reason.rule, r.number("denomination_cents")), ("R-UNIT-4", Some(d(100))));
    let credit = TableOp::Credit { cage_id: cid(CAGE), slip_no: 1, chips: twice(1, 1), signers: signers() };
    rejected(g.table(credit), "DENOMINATION_LISTED_TWICE");
    rejected(g.table(TableOp::ColorChange { seat: 1, give: chips(25, 2), receive: twice(1, 25) }), "DENOMINATION_LISTED_TWICE");
    let sale = CageOp::SellChips { player_id: pid("P9"), chips: twice(5, 1), supervisor_id: None };
    rejected(g.world.exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op: sale })), "DENOMINATION_LISTED_TWICE");
}

#[test]
fn r_chip_1_tray_never_negative() {
    let mut g = Game::new(nl(), &[(1, d(100))]);
    // Empty the $5 chips of the tray by credit, then ask for them.
    let n = g.state().tray_count(d(5));
    g.table(TableOp::Credit { cage_id: cid(CAGE), slip_no: 1, chips: chips(5, n), signers: signers() }).unwrap();
    let r = rejected(g.table(TableOp::ColorChange { seat: 1, give: chips(25, 1), receive: chips(5, 5) }), "TRAY_SHORT");
    assert_eq!(r.number("tray_count"), Some(0));
}

#[test]
fn r_chip_2_buying_chips_at_the_table_needs_a_tray_that_can_pay() {
    let mut c = nl();
    c.buy_in.max_cents = d(100_000_000);
    let mut g = Game::new(c, &[]);
    let r = rejected(g.sit(1, "P1", d(20_000_000)), "TRAY_SHORT");
    assert!(r.number("short_cents").unwrap() > 0);
}

#[test]
fn r_chip_3_fills_and_credits_sequential_slips_two_signers() {
    let mut g = Game::new(nl(), &[]);
    let tray_before = g.state().tray_value_cents();
    g.fill(chips(100, 10)).unwrap();
    assert_eq!(g.state().tray_value_cents(), tray_before + d(1000));
    let r = rejected(
        g.table(TableOp::Fill { cage_id: cid(CAGE), slip_no: 9, chips: chips(100, 1), signers: signers() }),
        "SLIP_OUT_OF_SEQUENCE",
    );
    assert_eq!(r.number("expected_slip_no"), Some(3));
    rejected(
        g.table(TableOp::Fill { cage_id: cid(CAGE), slip_no: 3, chips: chips(100, 1), signers: Signers { first: "a".into(), second: "a".into() } }),
        "SIGNERS_NOT_DISTINCT",
    );
    g.table(TableOp::Credit { cage_id: cid(CAGE), slip_no: 1, chips: chips(100, 5), signers: signers() }).unwrap();
    assert_eq!(g.world.cages[&cid(CAGE)].last_credit_slip_no, 1);
    let r = rejected(g.table(TableOp::Credit { cage_id: cid(CAGE), slip_no: 2, chips: chips(100, 100_000), signers: signers() }), "TRAY_SHORT");
    assert!(r.number("tray_count").is_some());
    let r = rejected(g.table(TableOp::Fill { cage_id: cid(CAGE), slip_no: 3, chips: chips(5000, 200_000), signers: signers() }), "CAGE_CHIPS_SHORT");
    assert!(r.number("cage_count").is_some());
}

#[test]
fn r_chip_4_shift_close_table_result() {
    let mut g = Game::new(nl(), &[]);
    // Opening inventory: the first fill. Play: a $200 cash buy-in pays chips out of the tray.
    g.sit(1, "P1", d(200)).unwrap();
    g.sit(2, "P2", d(100)).unwrap();
    g.table(TableOp::Credit { cage_id: cid(CAGE), slip_no: 1, chips: chips(1, 100), signers: signers() }).unwrap();
    let fills = g.state().shift.fills_cents;
    let tray = g.state().tray.clone();
    let drop = g.state().drop_cents;
    let same = Signers { first: "floor-1".into(), second: "floor-1".into() };
    let r = rejected(g.table(TableOp::CloseShift { counted_tray: tray.clone(), counted_drop_cents: drop, signers: same }), "SIGNERS_NOT_DISTINCT");
    assert_eq!(r.reason.rule, "R-CHIP-4", "a count's signers are R-CHIP-4's");
    let events = g.table(TableOp::CloseShift { counted_tray: tray.clone(), counted_drop_cents: drop, signers: signers() }).unwrap();
    assert_eq!(events.len(), 1, "a count equal to the book records no variance");
    match &events[0].1 {
        Event::Table(TableEvent::ShiftClosed { result_cents, fills_cents, credits_cents, drop_cents, .. }) => {
            let closing = g.state().tray_value_cents();
            assert_eq!((*fills_cents, *credits_cents, *drop_cents), (fills, d(100), d(300)));
            // drop + credits + closing - opening - fills = 300 + 100 + (fills - 300 - 100) - 0 - fills = 0
            assert_eq!(*result_cents, d(300) + d(100) + closing - fills);
            assert_eq!(*result_cents, 0, "no rake taken: the table neither won nor lost");
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(g.state().drop_cents, 0, "the drop went to the count room");
    assert_eq!(g.state().shift.opening_tray, tray, "the next opening inventory is this closing");
}

/// R-CHIP-4 with R-RAKE-3 and R-TIP-1: the shift close empties the rake box (rake or time,
/// house revenue) into the count room with the drop, and the toke box into the dealers' pool,
/// and reports what each shift collected (the boxes had grown for ever, in no report).
#[test]
fn r_chip_4_shift_close_empties_the_rake_and_toke_boxes_and_reports_them() {
    let mut c = nl();
    c.fee = FeePolicy::TimeCollection { fee_cents: d(12), interval_minutes: 30 };
    let mut g = Game::new(c, &[(1, d(100)), (2, d(100))]);
    g.table(TableOp::CollectTime { seats: vec![1, 2] }).unwrap();
    g.table(TableOp::Tip { seat: 1, amount_cents: d(5) }).unwrap();
    let close = |g: &mut Game| {
        let (tray, drop) = (g.state().tray.clone(), g.state().drop_cents);
        let events = g.table(TableOp::CloseShift { counted_tray: tray, counted_drop_cents: drop, signers: signers() }).unwrap();
        match &events.last().unwrap().1 {
            Event::Table(TableEvent::ShiftClosed { rake_cents, toke_cents, result_cents, .. }) => (*rake_cents, *toke_cents, *result_cents),
            e => panic!("{e:?}"),
        }
    };
    let count_room = g.world.balance(&Account::House(HouseAccount::CountRoom));
    let (rake, toke, result) = close(&mut g);
    assert_eq!((rake, toke), (d(24), d(5)), "two seats' time and one tip");
    assert_eq!(result, 0, "R-CHIP-4's result is the tray and drop's: the fees are reported beside it");
    assert_eq!((g.state().rake_cents, g.state().toke_cents), (0, 0), "the boxes start the next shift empty");
    assert_eq!(g.world.balance(&Account::House(HouseAccount::CountRoom)) - count_room, d(200) + d(24), "the drop and the time");
    assert_eq!(g.world.balance(&Account::House(HouseAccount::Tokes)), d(5));
    assert_eq!(g.world.balances.values().sum::<Cents>(), 0, "R-UNIT-4");
    // The next shift reports its own collections only.
    g.table(TableOp::Tip { seat: 2, amount_cents: d(3) }).unwrap();
    assert_eq!(close(&mut g), (0, d(3), 0));
}

#[test]
fn r_chip_5_cage_sells_redeems_and_reports_liability() {
    let mut g = Game::new(nl(), &[]);
    let events = cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(100, 5), supervisor_id: None }).unwrap();
    assert_eq!(events.len(), 3);
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, d(500));
    let r = rejected(cage(&mut g, CageOp::RedeemChips { player_id: pid("P1"), chips: chips(100, 6) }), "POCKET_INSUFFICIENT");
    assert_eq!(r.number("pocket_cents"), Some(d(500)));
    cage(&mut g, CageOp::RedeemChips { player_id: pid("P1"), chips: chips(100, 2) }).unwrap();
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, d(300));
    // Pocket chips brought to a table are a buy-in.
    g.table(TableOp::BuyIn { seat: 1, player_id: pid("P1"), amount_cents: d(200), source: FundsSource::PocketChips, supervisor_id: None, short_buy: false })
        .unwrap();
    rejected(
        g.table(TableOp::BuyIn { seat: 2, player_id: pid("P2"), amount_cents: d(200), source: FundsSource::PocketChips, supervisor_id: None, short_buy: false }),
        "POCKET_INSUFFICIENT",
    );
    let events = cage(&mut g, CageOp::CloseGamingDay).unwrap();
    match &events[0].1 {
        Event::Cage(CageEvent::GamingDayClosed { liability, .. }) => {
            let hundreds = liability.iter().find(|c| c.denomination_cents == d(100)).map(|c| c.count);
            assert_eq!(hundreds, Some(2_000 + 5 - 2), "issued (fill and sale) minus returned");
        }
        e => panic!("{e:?}"),
    }
    // A day is closed once: a second close would count its liability twice.
    let r = rejected(cage(&mut g, CageOp::CloseGamingDay), "DAY_ALREADY_CLOSED");
    assert!(r.detail.contains("2026-03-01"), "{}", r.detail);
    // Closed, the day's figures stay its own: no chips or cash of this cage move dated it.
    rejected(cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(100, 1), supervisor_id: None }), "DAY_ALREADY_CLOSED");
    rejected(g.fill(chips(100, 10)), "DAY_ALREADY_CLOSED");
    g.world.ctx.gaming_day = "2026-03-02".into();
    cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(100, 1), supervisor_id: None }).unwrap();
    g.fill(chips(100, 10)).unwrap();
    cage(&mut g, CageOp::CloseGamingDay).unwrap();
    // A command carrying an earlier day (an import) closes no day before the last one.
    g.world.ctx.gaming_day = "2026-03-01".into();
    rejected(cage(&mut g, CageOp::CloseGamingDay), "DAY_ALREADY_CLOSED");
}

/// R-CHIP-2 at the cage: chips bought at the cage are a buy-in, and a large one needs a
/// supervisor's id, not the cashier's own. Large is $10,000 reached by the sale with the
/// patron's cash in for the gaming day, so $9,900 sales one after another, or a sale after a cash
/// buy-in at a table, need one too. A cashier had sold $50,000 of chips with no second person.
#[test]
fn r_chip_2_a_large_sale_at_the_cage_needs_a_supervisor() {
    let mut g = Game::new(nl(), &[]);
    let sale = |count, supervisor: Option<&str>| CageOp::SellChips { player_id: pid("P1"), chips: chips(100, count), supervisor_id: supervisor.map(Into::into) };
    let r = rejected(cage(&mut g, sale(100, None)), "SUPERVISOR_REQUIRED");
    let numbers = (r.number("amount_cents"), r.number("day_cash_in_cents"), r.number("threshold_cents"));
    assert_eq!((r.reason.rule, numbers), ("R-CHIP-2", (Some(d(10_000)), Some(0), Some(d(10_000)))));
    let cashier = g.world.ctx.actor.id.clone();
    rejected(cage(&mut g, sale(100, Some(&cashier))), "SUPERVISOR_REQUIRED");
    rejected(cage(&mut g, sale(100, Some(" "))), "SUPERVISOR_REQUIRED");
    assert_eq!(g.world.players.get(&pid("P1")).map_or(0, |p| p.pocket_cents), 0, "nothing refused moved");
    // Below the threshold alone, then a second sale the same day takes the day to it.
    cage(&mut g, sale(99, None)).unwrap();
    let r = rejected(cage(&mut g, sale(99, None)), "SUPERVISOR_REQUIRED");
    assert_eq!(r.number("day_cash_in_cents"), Some(d(9_900)));
    let events = cage(&mut g, sale(99, Some("floor-1"))).unwrap();
    match &events[0].1 {
        Event::Cage(CageEvent::ChipsSold { supervisor_id, amount_cents, .. }) => assert_eq!((supervisor_id.as_deref(), *amount_cents), (Some("floor-1"), d(9_900))),
        e => panic!("{e:?}"),
    }
    // A cash buy-in at a table counts with the sale: $9,950 at the table, then $100 at the cage.
    g.table(TableOp::BuyIn { seat: 1, player_id: pid("P2"), amount_cents: d(200), source: FundsSource::Cash, supervisor_id: None, short_buy: false }).unwrap();
    let p2 = |count| CageOp::SellChips { player_id: pid("P2"), chips: chips(100, count), supervisor_id: None };
    cage(&mut g, p2(97)).unwrap();
    let r = rejected(cage(&mut g, p2(1)), "SUPERVISOR_REQUIRED");
    assert_eq!((r.number("amount_cents"), r.number("day_cash_in_cents")), (Some(d(100)), Some(d(9_900))));
    // And the other way round: after $9,900 at the cage, cash at a table is chips bought with
    // cash too (the wave-2 pass: $9,900 at the cage, then $9,900 at a table, no supervisor).
    let p3 = CageOp::SellChips { player_id: pid("P3"), chips: chips(100, 99), supervisor_id: None };
    cage(&mut g, p3).unwrap();
    let buy_in = |supervisor_id: Option<&str>| TableOp::BuyIn {
        seat: 3,
        player_id: pid("P3"),
        amount_cents: d(100),
        source: FundsSource::Cash,
        supervisor_id: supervisor_id.map(Into::into),
        short_buy: false,
    };
    let r = rejected(g.table(buy_in(None)), "SUPERVISOR_REQUIRED");
    assert_eq!((r.reason.rule, r.number("amount_cents"), r.number("day_cash_in_cents")), ("R-CHIP-2", Some(d(100)), Some(d(9_900))));
    g.table(buy_in(Some("floor-1"))).unwrap();
    // Pocket chips are no cash: they were counted when bought.
    let p4 = CageOp::SellChips { player_id: pid("P4"), chips: chips(100, 99), supervisor_id: None };
    cage(&mut g, p4).unwrap();
    let pocket = TableOp::BuyIn { seat: 4, player_id: pid("P4"), amount_cents: d(200), source: FundsSource::PocketChips, supervisor_id: None, short_buy: false };
    g.table(pocket).unwrap();
    // The next gaming day counts from nothing.
    g.world.ctx.gaming_day = "2026-03-02".into();
    cage(&mut g, sale(99, None)).unwrap();
}

/// R-CHIP-2 at one table: cash brought to two seats in one break counts together for the
/// patron's day, not seat by seat (the wave-2 pass: $9,900 at seat 3, cashed out, and $9,900
/// again at seat 4, no hand dealt between and no supervisor asked).
#[test]
fn r_chip_2_cash_at_two_seats_counts_for_the_patrons_day() {
    let mut config = nl();
    config.buy_in.max_cents = d(9_900);
    let mut g = Game::new(config, &[]);
    let buy_in = |seat, supervisor_id: Option<&str>| TableOp::BuyIn {
        seat,
        player_id: pid("P5"),
        amount_cents: d(9_900),
        source: FundsSource::Cash,
        supervisor_id: supervisor_id.map(Into::into),
        short_buy: false,
    };
    g.table(buy_in(3, None)).unwrap();
    g.table(TableOp::CashOut { seat: 3, player_id: pid("P5") }).unwrap();
    let r = rejected(g.table(buy_in(4, None)), "SUPERVISOR_REQUIRED");
    assert_eq!((r.number("amount_cents"), r.number("day_cash_in_cents")), (Some(d(9_900)), Some(d(9_900))));
}

#[test]
fn r_chip_5_cage_open_once_and_cash_limits() {
    let mut g = Game::new(nl(), &[]);
    rejected(cage(&mut g, CageOp::OpenCage { denominations_cents: vec![100], chips: chips(1, 1), cash_cents: 0 }), "CAGE_ALREADY_OPEN");
    let other = Command::Cage(CageCommand { cage_id: cid("EAST"), op: CageOp::SellChips { player_id: pid("P1"), chips: chips(1, 1), supervisor_id: None } });
    rejected(g.world.exec(other), "CAGE_NOT_OPEN");
    rejected(cage(&mut g, CageOp::SellChips { player_id: pid("P1"), chips: chips(5000, 200_000), supervisor_id: None }), "CAGE_CHIPS_SHORT");
    // A credit line beyond the amount bound is too large, not "not positive" (the cage pass).
    let line = |line_cents| Command::Player(PlayerCommand { player_id: pid("P1"), op: PlayerOp::SetCreditLine { line_cents, approved_by: "credit-mgr".into() } });
    let r = rejected(g.world.exec(line(10_000_000_000_000)), "AMOUNT_TOO_LARGE");
    assert_eq!(r.number("max_amount_cents"), Some(1_000_000_000_000));
    rejected(g.world.exec(line(-1)), "AMOUNT_NOT_POSITIVE");
    // So is a cage's cash float (the cage pass: it was "not positive").
    let open = |cash_cents| Command::Cage(CageCommand { cage_id: cid("EAST"), op: CageOp::OpenCage { denominations_cents: vec![d(100)], chips: chips(100, 1), cash_cents } });
    let r = rejected(g.world.exec(open(10_000_000_000_000)), "AMOUNT_TOO_LARGE");
    assert_eq!((r.reason.rule, r.number("cash_cents"), r.number("max_amount_cents")), ("R-UNIT-1", Some(10_000_000_000_000), Some(1_000_000_000_000)));
    rejected(g.world.exec(open(-1)), "AMOUNT_NOT_POSITIVE");
    // Patron holds more chips than the cage has cash.
    g.world.exec(line(d(10_000_000))).unwrap();
    cage(&mut g, CageOp::IssueMarker { player_id: pid("P1"), marker_no: 1, chips: chips(5000, 30), approved_by: "shift-mgr".into(), delivery: MarkerDelivery::Pocket })
        .unwrap();
    let r = rejected(cage(&mut g, CageOp::RedeemChips { player_id: pid("P1"), chips: chips(5000, 30) }), "CAGE_CASH_SHORT");
    assert_eq!(r.number("cage_cash_cents"), Some(d(100_000)));
}

fn credit(g: &mut Game, line: Cents) {
    g.world
        .exec(Command::Player(PlayerCommand { player_id: pid("P1"), op: PlayerOp::SetCreditLine { line_cents: line, approved_by: "credit-mgr".into() } }))
        .unwrap();
}

fn marker(g: &mut Game, no: u64, dollars: i64, approved_by: &str, delivery: MarkerDelivery) -> Result<Vec<(StreamId, Event)>, Rejection> {
    cage(g, CageOp::IssueMarker { player_id: pid("P1"), marker_no: no, chips: chips(100, dollars / 100), approved_by: approved_by.into(), delivery })
}

#[test]
fn r_mark_1_markers_against_the_credit_line() {
    let mut g = Game::new(nl(), &[]);
    rejected(
        g.world.exec(Command::Player(PlayerCommand { player_id: pid("P1"), op: PlayerOp::SetCreditLine { line_cents: d(1000), approved_by: "dealer-1".into() } })),
        "APPROVER_SAME_AS_ISSUER",
    );
    credit(&mut g, d(1000));
    let r = rejected(marker(&mut g, 1, 1100, "shift-mgr", MarkerDelivery::Pocket), "CREDIT_LINE_EXCEEDED");
    assert_eq!(r.number("available_credit_cents"), Some(d(1000)));
    rejected(marker(&mut g, 1, 500, "dealer-1", MarkerDelivery::Pocket), "APPROVER_SAME_AS_ISSUER");
    rejected(marker(&mut g, 2, 500, "shift-mgr", MarkerDelivery::Pocket), "MARKER_OUT_OF_SEQUENCE");
    marker(&mut g, 1, 600, "shift-mgr", MarkerDelivery::Pocket).unwrap();
    assert_eq!(g.world.players[&pid("P1")].pocket_cents, d(600));
    assert_eq!(g.world.balance(&Account::CageMarkers { cage_id: cid(CAGE) }), d(600));
    rejected(marker(&mut g, 2, 500, "shift-mgr", MarkerDelivery::Pocket), "CREDIT_LINE_EXCEEDED");
    // Redeem in part, then write off the rest with an independent approver.
    let redeem = |no, amount| CageOp::RedeemMarker { player_id: pid("P1"), marker_no: no, amount_cents: amount };
    rejected(cage(&mut g, redeem(7, d(1))), "MARKER_NOT_FOUND");
    let r = rejected(cage(&mut g, redeem(1, d(700))), "MARKER_REDEEM_EXCEEDS");
    assert_eq!(r.number("outstanding_cents"), Some(d(600)));
    cage(&mut g, redeem(1, d(400))).unwrap();
    assert_eq!(g.world.players[&pid("P1")].available_credit_cents(), d(800));
    rejected(cage(&mut g, CageOp::WriteOffMarker { player_id: pid("P1"), marker_no: 1, approved_by: "dealer-1".into() }), "APPROVER_SAME_AS_ISSUER");
    // Nor the one who approved its issue (the credit pass: the two who issued and approved a
    // marker paid out in cash wrote it off between them).
    let r = rejected(cage(&mut g, CageOp::WriteOffMarker { player_id: pid("P1"), marker_no: 1, approved_by: "shift-mgr".into() }), "APPROVER_SAME_AS_ISSUER");
    assert_eq!(r.reason.rule, "R-MARK-1");
    cage(&mut g, CageOp::WriteOffMarker { player_id: pid("P1"), marker_no: 1, approved_by: "controller".into() }).unwrap();
    assert_eq!(g.world.balance(&Account::CageMarkers { cage_id: cid(CAGE) }), 0);
    assert_eq!(g.world.balance(&Account::House(HouseAccount::BadDebt)), d(200));
    assert!(g.world.players[&pid("P1")].markers.is_empty());
    // The $200 written off is a debt, not credit given back (the walk-around pass: a write-off
    // had freed its part of the line): $800 left until the line is approved again.
    assert_eq!(g.world.players[&pid("P1")].available_credit_cents(), d(800));
    let r = rejected(marker(&mut g, 2, 900, "shift-mgr", MarkerDelivery::Pocket), "CREDIT_LINE_EXCEEDED");
    assert_eq!((r.reason.rule, r.number("available_credit_cents")), ("R-MARK-1", Some(d(800))));
    credit(&mut g, d(1000));
    assert_eq!(g.world.players[&pid("P1")].available_credit_cents(), d(1000));
    marker(&mut g, 2, 900, "shift-mgr", MarkerDelivery::Pocket).unwrap();
}

#[test]
fn r_mark_2_marker_to_the_stack_only_between_hands() {
    let mut g = Game::new(nl(), &[]);
    credit(&mut g, d(5000));
    g.sit(1, "P1", d(100)).unwrap();
    g.sit(2, "P2", d(100)).unwrap();
    let at_seat = MarkerDelivery::Seat { table_id: tid(TABLE), seat: 1 };
    g.start(1, 2, &[1, 2]);
    rejected(marker(&mut g, 1, 100, "shift-mgr", at_seat.clone()), "HAND_IN_PROGRESS");
    g.post(2, PostKind::SmallBlind, d(1)).unwrap();
    g.post(1, PostKind::BigBlind, d(2)).unwrap();
    g.ok(2, Action::Fold);
    g.end();
    let events = marker(&mut g, 1, 100, "shift-mgr", at_seat).unwrap();
    assert_eq!(events.len(), 3, "cage, player and table events");
    assert_eq!(g.stack(1), d(201), "the stack, the small blind won and the marker");
}

/// R-UNIT-2 with R-MARK-2 (the money pass): marker chips sent to a seat are the table's playable
/// chips. 160 quarters from a cage that stocks them had played as a $40 all-in at a $1-minimum
/// table; chips the table does not use are refused as a fill's are, chips below its minimum
/// playable chip as a bet's are.
#[test]
fn r_unit_2_marker_chips_to_a_seat_are_the_tables_playable_chips() {
    let mut c = nl();
    c.chip_set = ChipSet { denominations_cents: vec![25, 100, 500, 2_500], min_playable_chip_cents: 100 };
    let mut g = Game::new(c, &[]);
    credit(&mut g, d(5000));
    g.sit(1, "P1", d(100)).unwrap();
    let to_seat = |no, chips: Vec<ChipCount>| CageOp::IssueMarker {
        player_id: pid("P1"),
        marker_no: no,
        chips,
        approved_by: "shift-mgr".into(),
        delivery: MarkerDelivery::Seat { table_id: tid(TABLE), seat: 1 },
    };
    let quarters = vec![ChipCount { denomination_cents: 25, count: 160 }];
    let r = rejected(cage(&mut g, to_seat(1, quarters)), "TIP_CHIPS_DO_NOT_PLAY");
    assert_eq!((r.reason.rule, r.number("denomination_cents"), r.number("min_playable_chip_cents")), ("R-UNIT-2", Some(25), Some(100)));
    // A cage stocking a chip the table does not use.
    let other = cid("EAST");
    let open = CageOp::OpenCage { denominations_cents: vec![100, 10_000], chips: vec![ChipCount { denomination_cents: 10_000, count: 10 }], cash_cents: d(1_000) };
    g.world.exec(Command::Cage(CageCommand { cage_id: other.clone(), op: open })).unwrap();
    let hundreds = vec![ChipCount { denomination_cents: 10_000, count: 1 }];
    let r = g.world.exec(Command::Cage(CageCommand { cage_id: other, op: to_seat(1, hundreds) })).expect_err("a $100 chip at a table without one");
    assert_eq!((r.reason.code, r.number("denomination_cents")), ("UNKNOWN_DENOMINATION", Some(10_000)));
    cage(&mut g, to_seat(1, chips(1, 40))).unwrap();
    assert_eq!(g.stack(1), d(140));
}

#[test]
fn r_mark_1_open_markers_are_bounded() {
    let mut g = Game::new(nl(), &[]);
    credit(&mut g, d(1_000_000));
    for no in 1..=64 {
        marker(&mut g, no, 100, "shift-mgr", MarkerDelivery::Pocket).unwrap();
    }
    rejected(marker(&mut g, 65, 100, "shift-mgr", MarkerDelivery::Pocket), "TOO_MANY_OPEN_MARKERS");
}

fn open_stakes() -> TableConfig {
    let mut c = example_config(TableConfig::no_limit_holdem(d(1), d(2)));
    c.stakes = StakesMode::OpenStakes { iou_auto_accept_below_cents: d(10), ious_allowed: true };
    c.blinds_cents = Vec::new();
    c
}

#[test]
fn r_mark_3_iou_needs_every_active_player_and_borrow_to_raise_forfeits_all_in() {
    let mut g = Game::new(open_stakes(), &[(1, d(50)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(50));
    let iou = |accepted_by: Vec<Seat>, to_raise| TableOp::WriteIou { seat: 2, amount_cents: d(100), lender: None, accepted_by, to_raise };
    let r = rejected(g.table(iou(vec![1], true)), "IOU_NOT_ACCEPTED");
    assert_eq!(r.number("first_missing_seat"), Some(3));
    g.table(iou(vec![1, 3], true)).unwrap();
    assert_eq!(g.stack(2), d(200));
    rejected(g.act(2, Action::AllIn), "ALL_IN_AFTER_BORROW_TO_RAISE");
    g.ok(2, raise(150));
    g.ok(3, Action::Fold);
    // IOUs in play may not be taken off the table: leaving, the stack pays them back first.
    g.showdown(vec![vec![2], vec![1]]);
    g.end();
    let stack = g.stack(2);
    let events = g.table(TableOp::CashOut { seat: 2, player_id: pid("P2") }).unwrap();
    assert!(matches!(&events[0].1, Event::Table(TableEvent::CashedOut { amount_cents, iou_settled_cents, .. })
        if *iou_settled_cents == d(100) && *amount_cents == stack - d(100)));
}

#[test]
fn r_mark_3_small_iou_accepted_automatically_and_r_mark_4_cash_during_hand() {
    let mut g = Game::new(open_stakes(), &[(1, d(50)), (2, d(100))]);
    g.start(1, 2, &[1, 2]);
    g.table(TableOp::WriteIou { seat: 1, amount_cents: d(5), lender: None, accepted_by: vec![], to_raise: false }).unwrap();
    g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: d(20), source: FundsSource::Cash, supervisor_id: None }).unwrap();
    assert_eq!(g.stack(1), d(75));
}

#[test]
fn r_mark_2_table_stakes_accept_no_iou() {
    let mut g = Game::new(nl(), &[(1, d(100)), (2, d(100))]);
    rejected(g.table(TableOp::WriteIou { seat: 1, amount_cents: d(5), lender: None, accepted_by: vec![2], to_raise: false }), "IOU_NOT_ALLOWED");
}

#[test]
fn r_audit_1_correction_reverses_with_an_approver() {
    let mut g = Game::new(nl(), &[(1, d(100))]);
    let events = g.table(TableOp::Tip { seat: 1, amount_cents: d(5) }).unwrap();
    let original = events[0].1.postings();
    let version = g.state().version;
    let correct = |approved_by: &str, postings: Vec<Posting>| TableOp::Correct {
        reverses_event_id: "evt-42".into(),
        reverses_stream_version: version,
        reverses_event_types: vec!["Tipped".into()],
        reverses_gaming_day: "2026-03-01".into(),
        original_postings: postings,
        approved_by: approved_by.into(),
        reason: "tip keyed twice".into(),
    };
    rejected(g.table(correct("dealer-1", original.clone())), "CORRECTION_APPROVER_REQUIRED");
    rejected(g.table(correct("floor-2", Vec::new())), "CORRECTION_INVALID");
    let mut unbalanced = original.clone();
    unbalanced[0].amount_cents -= 1;
    rejected(g.table(correct("floor-2", unbalanced)), "POSTINGS_UNBALANCED");
    let too_much = vec![
        Posting::new(Account::Seat { table_id: tid(TABLE), seat: 1 }, -d(50)),
        Posting::new(Account::Toke { table_id: tid(TABLE) }, d(50)),
    ];
    let r = rejected(g.table(correct("floor-2", too_much)), "CORRECTION_WOULD_GO_NEGATIVE");
    assert!(r.number("balance_cents").unwrap() < 0);
    let events = g.table(correct("floor-2", original)).unwrap();
    assert!(matches!(&events[0].1, Event::Table(TableEvent::Corrected { reverses_event_id, approved_by, .. }) if reverses_event_id == "evt-42" && approved_by == "floor-2"));
    assert_eq!(g.stack(1), d(100));
    assert_eq!(g.state().toke_cents, 0);
}

#[test]
fn r_tip_1_tip_capped_and_within_the_stack() {
    let mut g = Game::new(nl(), &[(1, d(10))]);
    let r = rejected(g.table(TableOp::Tip { seat: 1, amount_cents: d(26) }), "TIP_ABOVE_CAP");
    assert_eq!(r.number("tip_cap_cents"), Some(d(25)));
    rejected(g.table(TableOp::Tip { seat: 1, amount_cents: d(11) }), "TIP_EXCEEDS_STACK");
    rejected(g.table(TableOp::Tip { seat: 1, amount_cents: 0 }), "AMOUNT_NOT_POSITIVE");
    rejected(g.table(TableOp::Tip { seat: 1, amount_cents: i64::MAX / 2 }), "AMOUNT_TOO_LARGE");
    g.table(TableOp::Tip { seat: 1, amount_cents: d(2) }).unwrap();
    assert_eq!(g.state().toke_cents, d(2));
}

/// R-UNIT-2: an amount no set of the table's chips makes moves nothing: a 50-cent tip, or a
/// buy-in of $40.50, where the smallest chip is $1 (refused as such, not as a short tray).
#[test]
fn r_unit_2_amounts_no_table_chips_make_are_refused() {
    let mut g = Game::new(nl(), &[(1, d(10))]);
    let r = rejected(g.table(TableOp::Tip { seat: 1, amount_cents: 50 }), "NOT_IN_TABLE_CHIPS");
    assert_eq!((r.number("amount_cents"), r.number("chip_unit_cents")), (Some(50), Some(d(1))));
    assert_eq!((g.stack(1), g.state().toke_cents), (d(10), 0));
    let r = rejected(g.sit(2, "P2", d(40) + 50), "NOT_IN_TABLE_CHIPS");
    assert_eq!(r.number("amount_cents"), Some(d(40) + 50));
    rejected(g.table(TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: 150, source: FundsSource::Cash, supervisor_id: None }), "NOT_IN_TABLE_CHIPS");
    // A set with 50-cent tip chips makes it.
    let mut c = nl();
    c.chip_set = ChipSet { denominations_cents: vec![50, 100, 500, 2_500], min_playable_chip_cents: 100 };
    let mut g = Game::new(c, &[(1, d(10))]);
    g.table(TableOp::Tip { seat: 1, amount_cents: 50 }).unwrap();
    assert_eq!(g.state().toke_cents, 50);
}

#[test]
fn r_kitty_1_kitty_pays_named_expenses_and_never_goes_negative() {
    let mut g = Game::new(nl(), &[(1, d(10))]);
    rejected(g.table(TableOp::PayKittyExpense { amount_cents: d(1), purpose: "decks".into(), to_dealer: false }), "KITTY_NOT_ENABLED");
    let mut c = nl();
    c.kitty = Some(config::KittyPolicy { min_pot_cents: 0, leftover: Default::default(), from: config::KittyFrom::MainPot });
    let mut g = Game::new(c, &[(1, d(10))]);
    rejected(g.table(TableOp::PayKittyExpense { amount_cents: d(1), purpose: " ".into(), to_dealer: false }), "KITTY_PURPOSE_REQUIRED");
    let r = rejected(g.table(TableOp::PayKittyExpense { amount_cents: d(1), purpose: "decks".into(), to_dealer: true }), "KITTY_INSUFFICIENT");
    assert_eq!(r.number("kitty_cents"), Some(0));
    // R-UNIT-2 (the insiders' second pass: 50 cents paid from a $1-chip kitty box).
    let chip = g.state().config.as_ref().unwrap().chip_set.min_playable_chip_cents;
    let r = rejected(g.table(TableOp::PayKittyExpense { amount_cents: chip / 2, purpose: "decks".into(), to_dealer: true }), "NOT_MULTIPLE_OF_MIN_CHIP");
    assert_eq!((r.reason.rule, r.number("min_playable_chip_cents")), ("R-UNIT-2", Some(chip)));
}

#[test]
fn r_rake_3_time_collection_refusals() {
    let mut g = Game::new(nl(), &[(1, d(10))]);
    rejected(g.table(TableOp::CollectTime { seats: vec![1] }), "TIME_COLLECTION_NOT_CONFIGURED");
    let mut c = nl();
    c.fee = FeePolicy::TimeCollection { fee_cents: d(12), interval_minutes: 30 };
    let mut g = Game::new(c, &[(1, d(10))]);
    let r = rejected(g.table(TableOp::CollectTime { seats: vec![1] }), "TIME_FEE_EXCEEDS_STACK");
    assert_eq!(r.number("fee_cents"), Some(d(12)));
}

#[test]
fn r_rebuy_3_open_stakes_short_all_in_winner_must_rebuy_in_full() {
    let mut c = open_stakes();
    c.buy_in.min_cents = d(100);
    c.buy_in.max_cents = d(1000);
    let mut g = Game::new(c, &[(1, d(100)), (2, d(300)), (3, d(300))]);
    // Seat 1 loses most of the stack, then goes all in for $20 and wins $60.
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(80));
    g.ok(2, Action::Call);
    g.ok(3, Action::Fold);
    g.check_down(&[1, 2]);
    g.showdown(vec![vec![2], vec![1]]);
    g.end();
    assert_eq!(g.stack(1), d(20));
    g.start(2, 1, &[1, 2, 3]);
    g.ok(2, bet(20));
    g.ok(3, Action::Call);
    g.ok(1, Action::AllIn);
    g.check_down(&[2, 3]);
    g.showdown(vec![vec![1], vec![2, 3]]);
    g.end();
    assert_eq!(g.stack(1), d(60));
    assert!(g.state().seat(1).unwrap().needs_full_rebuy);
    let top_up = |amount| TableOp::TopUp { seat: 1, player_id: pid("P1"), amount_cents: amount, source: FundsSource::Cash, supervisor_id: None };
    let r = rejected(g.table(top_up(d(10))), "FULL_REBUY_REQUIRED");
    assert_eq!(r.number("min_buy_in_cents"), Some(d(100)));
    rejected(g.table(TableOp::WriteIou { seat: 1, amount_cents: d(5), lender: None, accepted_by: vec![], to_raise: false }), "FULL_REBUY_REQUIRED");
    g.table(top_up(d(40))).unwrap();
    assert!(!g.state().seat(1).unwrap().needs_full_rebuy);
}

/// R-MARK-3 (the second betting pass): "borrowed to call" was what the caller declared. A stack
/// that covers the call borrows to raise; and a bet or raise after borrowing in the hand is made
/// with the borrowed chips: either way the all-in is forfeit for the hand.
#[test]
fn r_mark_3_borrowing_to_raise_is_judged_by_the_stack_and_what_follows() {
    let iou = |seat, amount_cents| TableOp::WriteIou { seat, amount_cents, lender: None, accepted_by: vec![1, 2, 3], to_raise: false };
    // Declared to call while the stack covered the $50 call.
    let mut g = Game::new(open_stakes(), &[(1, d(50)), (2, d(100)), (3, d(100))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(50));
    g.table(iou(2, d(100))).unwrap();
    rejected(g.act(2, Action::AllIn), "ALL_IN_AFTER_BORROW_TO_RAISE");
    // Borrowed to call, truly short of it; then raised with the borrowed chips.
    let mut g = Game::new(open_stakes(), &[(1, d(100)), (2, d(30)), (3, d(500))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(50));
    g.table(iou(2, d(100))).unwrap();
    g.ok(2, raise(100));
    g.ok(3, raise(400));
    g.ok(1, Action::Fold);
    rejected(g.act(2, Action::AllIn), "ALL_IN_AFTER_BORROW_TO_RAISE");
    // Borrowed to call and only called: the all-in stays (the seeds: "may later go all in").
    let mut g = Game::new(open_stakes(), &[(1, d(100)), (2, d(30)), (3, d(500))]);
    g.start(1, 3, &[1, 2, 3]);
    g.ok(1, bet(50));
    g.table(iou(2, d(100))).unwrap();
    g.ok(2, Action::Call);
    g.ok(3, raise(400));
    g.ok(1, Action::Fold);
    g.ok(2, Action::AllIn);
}
