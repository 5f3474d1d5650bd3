//! A whole table session, from opening to the shift close, with every number checked to the
//! cent against hand-computed expectations.
//!
//! Cast: P1 (seat 1, $50), P2 (seat 2, $100), P3 (seat 3, $200) buy in with cash; P4 plays a
//! marker. NLHE $1/$2, 10% rake rounded down to $1 and capped at $5, kitty $1 from the winner
//! of a main pot of at least $20.

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, approved, chips, header, principal, reply_balance};

use crate::scenario::{self, CAGE, TABLE, act, balance, cash_buy_in, post, stack, table_view};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_session_open_to_shift_close_accounts_for_every_cent() -> anyhow::Result<()> {
    let server = TestServer::start("session").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut admin = server.client(principal::ADMIN).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    let mut cfo = server.client(principal::ADMIN_2).await?;

    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;

    // Kitty on (R-KITTY-1): a new configuration between hands, version 1 -> 2 (R-AUDIT-2).
    let mut config = table_view(&mut dealer, TABLE).await?.config.expect("the table has a config");
    // The main pot's winner only (KITTY_FROM_MAIN_POT; the default takes a chip from every pot).
    config.kitty = Some(pb::KittyPolicy {
        min_pot_cents: 2_000,
        leftover: pb::KittyLeftover::Unspecified as i32,
        from: pb::KittyFrom::MainPot as i32,
    });
    floor
        .table
        .change_table_config(pb::ChangeTableConfig {
            header: header("kitty-on"),
            table_id: TABLE.into(),
            configuration: Some(pb::change_table_config::Configuration::Config(config)),
        })
        .await?;
    assert_eq!(table_view(&mut dealer, TABLE).await?.config_version, 2);

    // ---- buy-ins (R-STAKE-3: $40..$200; R-CHIP-2: cash to the drop, chips from the tray)
    for (seat, player, amount_cents) in [(1, "P1", 5_000), (2, "P2", 10_000), (3, "P3", 20_000)] {
        scenario::seat(&mut dealer, TABLE, seat, player).await?;
        let result = dealer
            .table
            .buy_in(cash_buy_in(&format!("buy-{player}"), TABLE, seat, player, amount_cents))
            .await?
            .into_inner();
        assert_eq!(reply_balance(&result, &format!("table/T1/seat/{seat}")), Some(amount_cents), "{result:?}");
    }
    // Drop = 5,000 + 10,000 + 20,000 = 35,000. The tray pays largest chips first: $25 chips
    // 2 + 4 + 8 = 14 of them, so the $25 row goes 40 -> 26.
    let view = table_view(&mut dealer, TABLE).await?;
    assert_eq!(view.drop_cents, 35_000);
    assert_eq!(tray_count(&view, 2_500), 26);

    // ---- hand 1: three all-ins at different levels (R-POT-1, R-POT-2 layering).
    // Button seat 3; P1 small blind $1, P2 big blind $2; P3 raises to $10; P1 all in for
    // $50 (5,000), P2 all in for $100 (10,000), P3 calls 10,000 (adds 9,000).
    dealer
        .table
        .start_hand(pb::StartHand {
            header: header("h1-start"),
            table_id: TABLE.into(),
            hand_no: 1,
            button_seat: 3,
            dealt_seats: vec![1, 2, 3],
        })
        .await?;
    dealer.table.post(post("h1-sb", 1, pb::PostKind::SmallBlind, 100)).await?;
    dealer.table.post(post("h1-bb", 2, pb::PostKind::BigBlind, 200)).await?;
    let legal = dealer
        .table
        .get_legal_actions(pb::GetLegalActionsRequest { property_id: String::new(), table_id: TABLE.into() })
        .await?
        .into_inner();
    // Seat 3 is first to act preflop; call 200; min raise to 2 x 200 = 400 (R-BET-3);
    // max = the whole stack, 20,000 (no limit).
    assert_eq!((legal.seat, legal.call_cents), (3, 200), "{legal:?}");
    let raise = legal.raise.expect("a raise is open");
    assert_eq!((raise.min_to_cents, raise.max_to_cents), (400, 20_000), "{legal:?}");
    dealer.table.act(act("h1-p3-raise", 3, pb::ActionKind::Raise, 1_000)).await?;
    dealer.table.act(act("h1-p1-allin", 1, pb::ActionKind::AllIn, 0)).await?;
    dealer.table.act(act("h1-p2-allin", 2, pb::ActionKind::AllIn, 0)).await?;
    dealer.table.act(act("h1-p3-call", 3, pb::ActionKind::Call, 0)).await?;
    for street in ["flop", "turn", "river"] {
        dealer
            .table
            .next_round(pb::NextRound {
                header: header(&format!("h1-{street}")),
                table_id: TABLE.into(),
                first_to_act_seat: None,
            })
            .await?;
    }
    // P1 has the best hand, P2 the second best.
    let showdown = dealer
        .table
        .showdown(pb::Showdown {
            header: header("h1-showdown"),
            table_id: TABLE.into(),
            high: vec![pb::SeatGroup { seats: vec![1] }, pb::SeatGroup { seats: vec![2] }, pb::SeatGroup { seats: vec![3] }],
            low: vec![],
            has_low: false,
            rake_cents: None,
        })
        .await?
        .into_inner();
    // Main pot: 3 x 5,000 = 15,000 (seats 1, 2, 3). Side pot: 2 x (10,000 - 5,000) = 10,000
    // (seats 2, 3). Rake (R-RAKE-1): 10% of 25,000 = 2,500, capped at 500, taken from the
    // main pot first. Kitty (R-KITTY-1): main pot 15,000 >= 2,000, so its winner gives one
    // $1 chip: P1 gets 15,000 - 500 - 100 = 14,400; P2 gets the side pot 10,000.
    assert_eq!(reply_balance(&showdown, "table/T1/seat/1"), Some(14_400), "{showdown:?}");
    assert_eq!(reply_balance(&showdown, "table/T1/seat/2"), Some(10_000), "{showdown:?}");
    assert_eq!(reply_balance(&showdown, "table/T1/rake"), Some(500), "{showdown:?}");
    assert_eq!(reply_balance(&showdown, "table/T1/kitty"), Some(100), "{showdown:?}");
    dealer.table.end_hand(pb::EndHand { header: header("h1-end"), table_id: TABLE.into() }).await?;

    let hand = dealer
        .table
        .get_hand(pb::GetHandRequest { property_id: String::new(), table_id: TABLE.into(), hand_no: Some(1) })
        .await?
        .into_inner();
    assert!(hand.ended);
    let pots: Vec<(i64, Vec<u32>)> = hand.pots.iter().map(|p| (p.amount_cents, p.eligible_seats.clone())).collect();
    assert_eq!(pots, vec![(15_000, vec![1, 2, 3]), (10_000, vec![2, 3])], "R-POT-1 layers: {hand:?}");
    let awards: Vec<(u32, u32, i64)> = hand.awards.iter().map(|a| (a.pot_index, a.seat, a.amount_cents)).collect();
    assert_eq!(awards, vec![(0, 1, 14_400), (1, 2, 10_000)], "{hand:?}");
    assert_eq!(hand.rake_cents, 500);
    // Stacks after hand 1: P1 14,400; P2 10,000; P3 20,000 - 10,000 = 10,000.
    // Check: 14,400 + 10,000 + 10,000 + 500 rake + 100 kitty = 35,000 bought in.
    let view = table_view(&mut dealer, TABLE).await?;
    assert_eq!((stack(&view, 1), stack(&view, 2), stack(&view, 3)), (14_400, 10_000, 10_000));
    assert_eq!((view.rake_cents, view.kitty_cents, view.pot_total_cents), (500, 100, 0));

    // ---- a tip (R-TIP-1: de minimis, cap $25) and a color-up (R-CHIP-1: equal value).
    let tip = dealer
        .table
        .tip(pb::Tip { header: header("p1-tip"), table_id: TABLE.into(), seat: 1, amount_cents: 500 })
        .await?
        .into_inner();
    assert_eq!(reply_balance(&tip, "table/T1/seat/1"), Some(13_900), "14,400 - 500: {tip:?}");
    assert_eq!(reply_balance(&tip, "table/T1/toke"), Some(500), "{tip:?}");
    // P1 gives ten $5 chips (5,000) for two $25 chips (5,000): stack unchanged, tray $5 row
    // 200 -> 210, $25 row 26 -> 24.
    dealer
        .table
        .color_change(pb::ColorChange {
            header: header("p1-color-up"),
            table_id: TABLE.into(),
            seat: 1,
            give: vec![chips(500, 10)],
            receive: vec![chips(2_500, 2)],
        })
        .await?;
    let view = table_view(&mut dealer, TABLE).await?;
    assert_eq!(stack(&view, 1), 13_900);
    assert_eq!((tray_count(&view, 500), tray_count(&view, 2_500)), (210, 24));

    // ---- hand 2: a raise nobody calls. Button seat 1, P2 small blind, P3 big blind; P1 raises
    // to $6, both fold. The last fold settles at once: no flop, no drop (R-RAKE-1); the
    // uncalled 600 - 200 = 400 returns (R-POT-4); the pot net of it is 500 < $20, no kitty.
    dealer
        .table
        .start_hand(pb::StartHand {
            header: header("h2-start"),
            table_id: TABLE.into(),
            hand_no: 2,
            button_seat: 1,
            dealt_seats: vec![1, 2, 3],
        })
        .await?;
    dealer.table.post(post("h2-sb", 2, pb::PostKind::SmallBlind, 100)).await?;
    dealer.table.post(post("h2-bb", 3, pb::PostKind::BigBlind, 200)).await?;
    dealer.table.act(act("h2-p1-raise", 1, pb::ActionKind::Raise, 600)).await?;
    dealer.table.act(act("h2-p2-fold", 2, pb::ActionKind::Fold, 0)).await?;
    let last_fold = dealer.table.act(act("h2-p3-fold", 3, pb::ActionKind::Fold, 0)).await?.into_inner();
    let types: Vec<&str> = last_fold.events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["Acted", "HandSettled"], "the last fold settles the hand");
    dealer.table.end_hand(pb::EndHand { header: header("h2-end"), table_id: TABLE.into() }).await?;
    // P1: 13,900 - 600 + 900 = 14,200; P2: 10,000 - 100 = 9,900; P3: 10,000 - 200 = 9,800.
    let view = table_view(&mut dealer, TABLE).await?;
    assert_eq!((stack(&view, 1), stack(&view, 2), stack(&view, 3)), (14_200, 9_900, 9_800));
    assert_eq!((view.rake_cents, view.kitty_cents), (500, 100), "hand 2 is neither raked nor kittied");

    // ---- the kitty pays the dealer (R-KITTY-1: never negative, a purpose each time).
    let expense = floor
        .table
        .kitty_expense(pb::KittyExpense {
            header: header("kitty-to-dealer"),
            table_id: TABLE.into(),
            amount_cents: 100,
            purpose: "dealer toke from the kitty".into(),
            to_dealer: true,
        })
        .await?
        .into_inner();
    assert_eq!(reply_balance(&expense, "table/T1/kitty"), Some(0), "{expense:?}");
    assert_eq!(reply_balance(&expense, "table/T1/toke"), Some(600), "500 + 100: {expense:?}");

    // ---- a marker (R-MARK-1): credit line $500 approved by a second admin (proven by her
    // approval); marker 1 for four $25 chips (10,000) to P4's pocket, approved by the floor,
    // then a pocket-chip buy-in.
    let line = pb::SetCreditLine {
        header: header("p4-credit-line"),
        player_id: "P4".into(),
        line_cents: 50_000,
        approved_by: principal::ADMIN_2.0.into(),
    };
    admin.cage.set_credit_line(approved(line, &mut [&mut cfo]).await?).await?;
    let marker = pb::IssueMarker {
        header: header("p4-marker-1"),
        cage_id: CAGE.into(),
        player_id: "P4".into(),
        marker_no: 1,
        chips: vec![chips(2_500, 4)],
        approved_by: principal::FLOOR.0.into(),
        delivery: Some(pb::issue_marker::Delivery::ToPocket(true)),
    };
    let marker = cage.cage.issue_marker(approved(marker, &mut [&mut floor]).await?).await?.into_inner();
    assert_eq!(reply_balance(&marker, "player/P4/pocket"), Some(10_000), "{marker:?}");
    assert_eq!(reply_balance(&marker, "cage/MAIN/markers"), Some(10_000), "{marker:?}");
    scenario::seat(&mut dealer, TABLE, 4, "P4").await?;
    let pocket_buy_in = dealer
        .table
        .buy_in(pb::BuyIn {
            source: pb::FundsSource::PocketChips as i32,
            ..cash_buy_in("buy-P4", TABLE, 4, "P4", 10_000)
        })
        .await?
        .into_inner();
    assert_eq!(reply_balance(&pocket_buy_in, "table/T1/seat/4"), Some(10_000), "{pocket_buy_in:?}");
    assert_eq!(reply_balance(&pocket_buy_in, "player/P4/pocket"), Some(0), "{pocket_buy_in:?}");

    // ---- a credit (R-CHIP-3): one hundred $5 chips back to the cage, slip 1, two signers.
    let credit = pb::Credit {
        header: header("credit-1"),
        table_id: TABLE.into(),
        cage_id: CAGE.into(),
        slip_no: 1,
        chips: vec![chips(500, 100)],
        signer_1: principal::CAGE.0.into(),
        signer_2: principal::FLOOR.0.into(),
    };
    cage.cage.credit(approved(credit, &mut [&mut floor]).await?).await?;

    // ---- cash-outs: each player leaves with the whole stack, to the pocket (R-STAKE-2).
    for (seat, player, expected_cents) in [(1, "P1", 14_200), (2, "P2", 9_900), (3, "P3", 9_800), (4, "P4", 10_000)] {
        let out = dealer
            .table
            .cash_out(pb::CashOut {
                header: header(&format!("cash-out-{player}")),
                table_id: TABLE.into(),
                seat,
                player_id: player.into(),
            })
            .await?
            .into_inner();
        assert_eq!(reply_balance(&out, &format!("player/{player}/pocket")), Some(expected_cents), "{out:?}");
    }

    // ---- shift close (R-CHIP-4). Tray: $1 200; $5 200 + 10 - 100 = 110; $25 24.
    // Closing inventory = 200 x 100 + 110 x 500 + 24 x 2,500 = 20,000 + 55,000 + 60,000 = 135,000.
    // Result = drop + credits + closing - opening - fills
    //        = 35,000 + 50,000 + 135,000 - 0 - 220,000 = 0: the tray sold exactly the chips
    // the drop paid for; the house's win is in the rake box (500), not the tray.
    let view = table_view(&mut dealer, TABLE).await?;
    let counted_tray: Vec<pb::ChipCount> = view.tray.iter().filter(|c| c.count != 0).cloned().collect();
    assert_eq!(counted_tray, vec![chips(100, 200), chips(500, 110), chips(2_500, 24)]);
    // Counted by the floor (the caller) and the cage (by approval), R-CHIP-4.
    let close = pb::CloseShift {
        header: header("close-shift-1"),
        table_id: TABLE.into(),
        counted_tray,
        counted_drop_cents: Some(35_000),
        signer_1: principal::FLOOR.0.into(),
        signer_2: principal::CAGE.0.into(),
    };
    let close = chipledger_tests::approved(close, &mut [&mut cage]).await?;
    let close = floor.table.close_shift(close).await?.into_inner();
    let close_position = close.events.first().expect("ShiftClosed appended").global_position;
    let reconciliation = auditor
        .audit
        .table_shift_reconciliation(pb::TableShiftReconciliationRequest {
            property_id: String::new(),
            table_id: TABLE.into(),
            shift_close_position: None,
        })
        .await?
        .into_inner();
    assert_eq!(reconciliation.shift_close_position, close_position);
    assert_eq!(
        (
            reconciliation.opening_inventory_cents,
            reconciliation.closing_inventory_cents,
            reconciliation.fills_cents,
            reconciliation.credits_cents,
            reconciliation.drop_cents,
            reconciliation.result_cents,
            reconciliation.rake_cents,
            reconciliation.toke_cents,
        ),
        (0, 135_000, scenario::OPENING_FILL_CENTS, 50_000, 35_000, 0, 500, 600),
        "{reconciliation:?}"
    );

    // ---- the ledger as an auditor reads it at the end.
    // Pockets: P1 5,000 + 9,400 (hand 1) - 500 (tip) + 300 (hand 2) = 14,200; P2 9,900; P3 9,800;
    // P4 10,000 (marker chips, unplayed). Rake 500, toke 500 + 100 = 600, kitty 100 - 100 = 0;
    // at the close the drop (35,000) and the rake went to the count room, the tokes to the
    // dealers' pool. Marker receivable 10,000.
    for (account, expected_cents) in [
        ("player/P1/pocket", 14_200),
        ("player/P2/pocket", 9_900),
        ("player/P3/pocket", 9_800),
        ("player/P4/pocket", 10_000),
        ("table/T1/rake", 0),
        ("table/T1/toke", 0),
        ("house/count-room", 35_500),
        ("house/tokes", 600),
        ("table/T1/kitty", 0),
        ("table/T1/drop", 0),
        ("table/T1/seat/1", 0),
        ("cage/MAIN/markers", 10_000),
        // The cage's $25 row: 400 - 40 (fill) - 4 (marker) = 356 chips = 890,000.
        ("cage/MAIN/chips/2500", 890_000),
        // The cage's $5 row: 2,000 - 200 (fill) + 100 (credit) = 1,900 chips = 950,000.
        ("cage/MAIN/chips/500", 950_000),
    ] {
        assert_eq!(balance(&mut auditor, account).await?, expected_cents, "{account}");
    }
    // An account that could never hold anything is no empty account (the numbers pass: 0 had
    // been answered for seat 11 of a ten-seat table and for a patron under an id in another case).
    let asked = |account: &str| pb::GetBalanceRequest { account: account.into(), ..Default::default() };
    let refused = auditor.ledger.get_balance(asked("table/T1/seat/11")).await.expect_err("seat 11 of ten");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("seats 1 to 10"), "{refused:?}");
    // Nor is a seat of a table never opened (a typo of a table id had answered 0, as GetTable
    // answers NOT_FOUND).
    for never in ["table/t1/seat/1", "table/t1/rake", "table/T9/jackpot", "table/T9/tray/500", "cage/EAST/cash", "cage/main/chips/500"] {
        let refused = auditor.ledger.get_balance(asked(never)).await.expect_err(never);
        assert_eq!(refused.code(), tonic::Code::NotFound, "{never}: {refused:?}");
    }
    let refused = auditor.ledger.get_balance(asked("player/p1/pocket")).await.expect_err("p1 for P1");
    assert_eq!(chipledger_tests::error_info(&refused).reason, "PLAYER_ID_IN_ANOTHER_CASE", "{refused:?}");
    assert!(refused.message().contains("player/P1/pocket"), "{refused:?}");
    assert_eq!(balance(&mut auditor, "player/P77/pocket").await?, 0, "a patron never seen holds nothing");
    let gaming_day = close_gaming_day(&mut auditor).await?;
    let day = auditor
        .audit
        .gaming_day_reconciliation(pb::GamingDayReconciliationRequest { property_id: String::new(), gaming_day })
        .await?
        .into_inner();
    assert_eq!(day.sum_of_balances_cents, 0, "R-UNIT-4: the balances sum to zero");
    assert_eq!((day.rake_cents, day.toke_cents), (500, 600), "the day's rake and tokes, of its shifts closed");
    let chain = auditor.audit.verify_chain(pb::VerifyChainRequest::default()).await?.into_inner();
    assert!(chain.ok, "{chain:?}");
    assert_eq!(chain.events_checked, chain.head.as_ref().map_or(-1, |head| head.global_position));
    server.stop().await
}

fn tray_count(view: &pb::TableView, denomination_cents: i64) -> i64 {
    view.tray.iter().find(|c| c.denomination_cents == denomination_cents).map_or(0, |c| c.count)
}

/// The gaming day the events were recorded on (R-CHIP-6), read from the log.
async fn close_gaming_day(auditor: &mut chipledger_tests::Client) -> anyhow::Result<String> {
    let events = chipledger_tests::all_events(auditor, pb::EventFilter { table_id: TABLE.into(), ..Default::default() }).await?;
    let last = events.last().and_then(|event| event.metadata.as_ref()).map(|m| m.gaming_day.clone());
    last.ok_or_else(|| anyhow::anyhow!("no events"))
}
