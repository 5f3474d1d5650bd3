//! The worked examples of RULES.md and the seeds about stakes, the cage and the house's funds,
//! over gRPC: table stakes and every door that brings chips to a seat (R-STAKE-*), the re-buy
//! wait (R-REBUY-*), large buy-ins (R-CHIP-2), counts that differ (R-CHIP-4), IOUs (R-MARK-3),
//! time collection (R-RAKE-3), the jackpot fund (R-RAKE-2), the kitty at the game's end
//! (R-KITTY-1) and corrections (R-AUDIT-1). Each starts its own server and database; the numbers
//! are worked out in the comments. $1/$2 no limit from the preset unless a test changes it:
//! buy-in $40..$200, 10% rake capped at $5, 60-minute re-buy wait.

use chipledger_proto::v1 as pb;
use chipledger_tests::{Client, TestServer, all_events, approved, chips, error_info, header, principal};
use tonic::Code;

use crate::scenario::{self, TABLE, act, cash_buy_in, post, stack, table_view};

/// The room of a scenario: a server and its staff, with the command ids they number.
struct Room {
    server: TestServer,
    floor: Client,
    dealer: Client,
    cage: Client,
    auditor: Client,
    next_id: u32,
}

impl Room {
    /// A stocked $1/$2 table `T1`, its configuration changed by `change` (if any).
    async fn open(name: &str, change: impl FnOnce(&mut pb::TableConfig)) -> anyhow::Result<Room> {
        let server = TestServer::start(name).await?;
        let mut room = Room {
            floor: server.client(principal::FLOOR).await?,
            dealer: server.client(principal::DEALER).await?,
            cage: server.client(principal::CAGE).await?,
            auditor: server.client(principal::AUDITOR).await?,
            server,
            next_id: 0,
        };
        scenario::stocked_table(&mut room.cage, &mut room.floor, TABLE).await?;
        let mut config = table_view(&mut room.dealer, TABLE).await?.config.expect("a configuration");
        let before = config.clone();
        change(&mut config);
        if config != before {
            let header = room.id("config");
            room.floor
                .table
                .change_table_config(pb::ChangeTableConfig {
                    header,
                    table_id: TABLE.into(),
                    configuration: Some(pb::change_table_config::Configuration::Config(config)),
                })
                .await?;
        }
        Ok(room)
    }

    fn id(&mut self, what: &str) -> Option<pb::CommandHeader> {
        self.next_id += 1;
        header(&format!("{what}-{}", self.next_id))
    }

    async fn buy_in(&mut self, seat: u32, player: &str, amount_cents: i64) -> Result<pb::CommandResult, tonic::Status> {
        let mut buy = cash_buy_in("", TABLE, seat, player, amount_cents);
        buy.header = self.id("buy");
        self.dealer.table.buy_in(buy).await.map(tonic::Response::into_inner)
    }

    async fn cash_out(&mut self, seat: u32, player: &str) -> Result<pb::CommandResult, tonic::Status> {
        let header = self.id("out");
        self.dealer
            .table
            .cash_out(pb::CashOut { header, table_id: TABLE.into(), seat, player_id: player.into() })
            .await
            .map(tonic::Response::into_inner)
    }

    async fn stack(&mut self, seat: u32) -> anyhow::Result<i64> {
        Ok(stack(&table_view(&mut self.auditor, TABLE).await?, seat))
    }

    /// Heads-up hand, seat `button` on the button posting the small blind: the button moves
    /// all in, the big blind calls, and `winner` takes the pot at the showdown.
    async fn all_in_hand(&mut self, hand_no: u64, button: u32, big: u32, winner: u32) -> anyhow::Result<()> {
        let header = self.id("start");
        self.dealer
            .table
            .start_hand(pb::StartHand { header, table_id: TABLE.into(), hand_no, button_seat: button, dealt_seats: vec![button.min(big), button.max(big)] })
            .await?;
        let ids: Vec<String> = (0..4).map(|_| self.id("h").unwrap().command_id).collect();
        self.dealer.table.post(post(&ids[0], button, pb::PostKind::SmallBlind, 100)).await?;
        self.dealer.table.post(post(&ids[1], big, pb::PostKind::BigBlind, 200)).await?;
        self.dealer.table.act(act(&ids[2], button, pb::ActionKind::AllIn, 0)).await?;
        self.dealer.table.act(act(&ids[3], big, pb::ActionKind::Call, 0)).await?;
        let header = self.id("showdown");
        self.dealer
            .table
            .showdown(pb::Showdown { header, table_id: TABLE.into(), high: vec![pb::SeatGroup { seats: vec![winner] }], ..Default::default() })
            .await?;
        let header = self.id("end");
        self.dealer.table.end_hand(pb::EndHand { header, table_id: TABLE.into() }).await?;
        Ok(())
    }

}

/// The reason and rule of a refusal (a refusal is FAILED_PRECONDITION with an ErrorInfo).
fn refusal(result: Result<pb::CommandResult, tonic::Status>) -> (String, String) {
    let status = result.expect_err("refused");
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    let info = error_info(&status);
    (info.reason, info.metadata.get("rule_id").cloned().unwrap_or_default())
}

fn number(status: &tonic::Status, name: &str) -> Option<i64> {
    error_info(status).metadata.get(name).and_then(|value| value.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_stake_3_buy_in_limits_are_20_and_100_big_blinds() -> anyhow::Result<()> {
    let mut room = Room::open("stake-3", |_| {}).await?;
    let below = room.buy_in(1, "P1", 3_999).await.unwrap_err();
    assert_eq!(error_info(&below).reason, "BUY_IN_BELOW_MINIMUM");
    assert_eq!(number(&below, "min_buy_in_cents"), Some(4_000));
    let above = room.buy_in(1, "P1", 20_001).await.unwrap_err();
    assert_eq!(error_info(&above).reason, "BUY_IN_ABOVE_MAXIMUM");
    assert_eq!(number(&above, "max_buy_in_cents"), Some(20_000));
    room.buy_in(1, "P1", 4_000).await?;
    room.buy_in(2, "P2", 20_000).await?;
    assert_eq!((room.stack(1).await?, room.stack(2).await?), (4_000, 20_000));
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_rebuy_1_a_return_within_the_window_brings_the_amount_left_even_above_the_maximum() -> anyhow::Result<()> {
    // P1 and P2 buy in for $200; P1 wins P2's stack: $400 less the $5 rake, $395 on the
    // table, almost twice the maximum.
    let mut room = Room::open("rebuy-1", |_| {}).await?;
    room.buy_in(1, "P1", 20_000).await?;
    room.buy_in(2, "P2", 20_000).await?;
    room.all_in_hand(1, 1, 2, 1).await?;
    assert_eq!(room.stack(1).await?, 39_500);
    // R-REBUY-2: the hit and run is allowed.
    room.cash_out(1, "P1").await?;
    // Back within the hour: at least $395, although the table maximum is $200.
    let (reason, rule) = refusal(room.buy_in(1, "P1", 20_000).await);
    assert_eq!((reason.as_str(), rule.as_str()), ("REBUY_BELOW_AMOUNT_LEFT", "R-REBUY-1"));
    room.buy_in(1, "P1", 39_500).await?;
    assert_eq!(room.stack(1).await?, 39_500);
    room.server.stop().await
}

/// R-STAKE-3 with R-AUDIT-1: a buy-in taken back by a correction and made again is one session,
/// bought in for what stands (the night's pass: two open sessions, $250 bought in for $150).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_stake_3_a_buy_in_corrected_and_made_again_is_one_session() -> anyhow::Result<()> {
    let mut room = Room::open("stake-3-session", |_| {}).await?;
    room.buy_in(1, "P1", 10_000).await?;
    let mut admin = room.server.client(principal::ADMIN).await?;
    let bought = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["BoughtIn".into()], ..Default::default() }).await?;
    let fix = pb::Correction { header: header("fix-buy"), reverses_event_id: bought[0].event_id.clone(), approved_by: principal::ADMIN.0.into(), reason: "keyed $100 for $150".into() };
    let fix = approved(fix, &mut [&mut admin]).await?;
    room.floor.ledger.correct(fix).await?;
    room.buy_in(1, "P1", 15_000).await?;
    let sessions = room.auditor.ledger.list_player_sessions(pb::ListPlayerSessionsRequest { player_id: "P1".into(), ..Default::default() }).await?.into_inner().sessions;
    assert_eq!(sessions.iter().map(|s| (s.table_id.as_str(), s.bought_in_cents, s.ended_at_unix_ms)).collect::<Vec<_>>(), vec![(TABLE, 15_000, None)]);
    // Two sessions more (the last one open): paged one at a time, the same three sessions as
    // in one page (the auditor's pass: at page size 1 a session was cut in two, listed twice,
    // and a departure without its start made up).
    room.cash_out(1, "P1").await?;
    room.buy_in(1, "P1", 15_000).await?;
    room.cash_out(1, "P1").await?;
    room.buy_in(1, "P1", 16_000).await?;
    let page = |size: u32, token: String| pb::ListPlayerSessionsRequest {
        player_id: "P1".into(),
        page: Some(pb::PageRequest { page_size: size, page_token: token }),
        ..Default::default()
    };
    let whole = room.auditor.ledger.list_player_sessions(page(100, String::new())).await?.into_inner();
    let listed = |sessions: &[pb::PlayerSession]| {
        sessions.iter().map(|s| (s.bought_in_cents, s.left_with_cents, s.ended_at_unix_ms.is_some(), s.started_at_unix_ms > 0)).collect::<Vec<_>>()
    };
    assert_eq!(listed(&whole.sessions), vec![(15_000, Some(15_000), true, true), (15_000, Some(15_000), true, true), (16_000, None, false, true)]);
    assert_eq!(whole.page.map(|page| page.next_page_token).unwrap_or_default(), "");
    let (mut one_by_one, mut token) = (Vec::new(), String::new());
    loop {
        let answer = room.auditor.ledger.list_player_sessions(page(1, token)).await?.into_inner();
        assert!(answer.sessions.len() <= 1, "{answer:?}");
        one_by_one.extend(answer.sessions);
        token = answer.page.map(|page| page.next_page_token).unwrap_or_default();
        if token.is_empty() {
            break;
        }
        assert!(one_by_one.len() < 10, "the pages end");
    }
    assert_eq!(one_by_one, whole.sessions);
    room.server.stop().await
}

/// R-AUDIT-1: a hand whose settlement a correction took back (a misdeal) says so where it is
/// read: GetHand lists the correction beside the hand as recorded (the cage pass: a voided hand
/// still read as settled, the correction nowhere).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_audit_1_a_hand_shows_the_corrections_that_reversed_it() -> anyhow::Result<()> {
    let mut room = Room::open("audit-1-hand", |_| {}).await?;
    room.buy_in(1, "P1", 10_000).await?;
    room.buy_in(2, "P2", 10_000).await?;
    room.all_in_hand(1, 1, 2, 1).await?;
    let hand = |room: &mut Room| {
        let mut dealer = room.dealer.clone();
        async move { dealer.table.get_hand(pb::GetHandRequest { property_id: String::new(), table_id: TABLE.into(), hand_no: Some(1) }).await.map(tonic::Response::into_inner) }
    };
    let recorded = hand(&mut room).await?;
    assert!(recorded.corrections.is_empty(), "{recorded:?}");
    let settled = recorded.events.iter().find(|event| event.event_type == "HandSettled").expect("settled").event_id.clone();
    let mut admin = room.server.client(principal::ADMIN).await?;
    let fix = pb::Correction { header: header("misdeal-1"), reverses_event_id: settled.clone(), approved_by: principal::ADMIN.0.into(), reason: "misdeal: the deck was short".into() };
    let fix = approved(fix, &mut [&mut admin]).await?;
    room.floor.ledger.correct(fix).await?;
    let corrected = hand(&mut room).await?;
    assert_eq!(corrected.corrections.len(), 1, "{corrected:?}");
    // A settlement is taken back with its hand: the correction names an event of the hand.
    assert!(recorded.events.iter().any(|event| corrected.corrections[0].payload_json.contains(&event.event_id)), "{corrected:?}");
    assert_eq!(corrected.events, recorded.events, "the hand as recorded");
    room.server.stop().await
}

/// R-REBUY-1: a patron's id is one patron in any case. A new id that differs from a known one
/// only in case is refused, naming the known one, and kept among the refusals (the stakes pass:
/// "Alice" left with $200 and "alice" bought in for $40 at once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_rebuy_1_a_known_patron_in_another_case_is_no_new_patron() -> anyhow::Result<()> {
    let mut room = Room::open("rebuy-1-case", |_| {}).await?;
    room.buy_in(1, "Alice", 20_000).await?;
    room.cash_out(1, "Alice").await?;
    let refused = room.buy_in(2, "alice", 4_000).await.expect_err("Alice in another case");
    assert_eq!((refused.code(), error_info(&refused).reason.as_str()), (Code::FailedPrecondition, "PLAYER_ID_IN_ANOTHER_CASE"), "{refused:?}");
    assert_eq!(error_info(&refused).metadata.get("rule_id").map(String::as_str), Some("R-REBUY-1"));
    assert!(refused.message().contains("Alice"), "{refused:?}");
    let kept = room.auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
    assert!(kept.iter().any(|record| record.reason_code == "PLAYER_ID_IN_ANOTHER_CASE"), "{kept:?}");
    // The refusals under "alice" are Alice's: listed for her (the AML pass: attempts under a
    // case variant were only found under the variant).
    let hers = pb::ListRejectionsRequest { player_id: "Alice".into(), ..Default::default() };
    let hers = room.auditor.audit.list_rejections(hers).await?.into_inner().rejections;
    assert!(hers.iter().any(|record| record.reason_code == "PLAYER_ID_IN_ANOTHER_CASE"), "{hers:?}");
    // Nor does a read under "alice" answer an empty history, no sessions, no events or no cash
    // for Alice: each is refused, naming her.
    let auditor = &mut room.auditor;
    let history = auditor.ledger.list_player_history(pb::ListPlayerHistoryRequest { player_id: "alice".into(), ..Default::default() }).await;
    let sessions = auditor.ledger.list_player_sessions(pb::ListPlayerSessionsRequest { player_id: "alice".into(), ..Default::default() }).await;
    let filter = pb::EventFilter { player_id: "alice".into(), ..Default::default() };
    let events = auditor.ledger.list_events(pb::ListEventsRequest { filter: Some(filter), ..Default::default() }).await;
    let filter = pb::EventFilter { stream_id: "player-alice".into(), ..Default::default() };
    let stream = auditor.ledger.list_events(pb::ListEventsRequest { filter: Some(filter), ..Default::default() }).await;
    let subscribed = auditor.ledger.subscribe(pb::SubscribeRequest { stream_ids: vec!["player-alice".into()], ..Default::default() }).await;
    let gaming_day = all_events(auditor, pb::EventFilter { player_id: "Alice".into(), ..Default::default() }).await?[0]
        .metadata
        .as_ref()
        .map(|metadata| metadata.gaming_day.clone())
        .unwrap_or_default();
    let cash = pb::PatronCashActivityRequest { player_id: "alice".into(), gaming_day, ..Default::default() };
    let cash = auditor.audit.patron_cash_activity(cash).await;
    let reads = [
        ("history", history.err()),
        ("sessions", sessions.err()),
        ("events", events.err()),
        ("stream", stream.err()),
        ("subscription", subscribed.err()),
        ("cash", cash.err()),
    ];
    for (read, refused) in reads {
        let refused = refused.unwrap_or_else(|| panic!("{read} under alice is refused"));
        assert_eq!(error_info(&refused).reason.as_str(), "PLAYER_ID_IN_ANOTHER_CASE", "{read}: {refused:?}");
        assert!(refused.message().contains("Alice"), "{read}: {refused:?}");
    }
    // A seat taken without chips under that id is refused too: it had held the seat for good
    // (every way to clear it refused under one id or the other: the stakes pass).
    let header = room.id("seat");
    let seat = room.dealer.table.seat_player(pb::SeatPlayer { header, table_id: TABLE.into(), seat: 3, player_id: "ALICE".into() }).await;
    let refused = seat.expect_err("ALICE is Alice");
    assert_eq!(error_info(&refused).reason.as_str(), "PLAYER_ID_IN_ANOTHER_CASE", "{refused:?}");
    // Two spellings of an id no stream has yet, seated without chips at one table: the second is
    // that patron, refused naming the seat held (the client pass: "p1" took a seat beside "P1").
    let header = room.id("seat");
    room.dealer.table.seat_player(pb::SeatPlayer { header, table_id: TABLE.into(), seat: 5, player_id: "zed".into() }).await?;
    let header = room.id("seat");
    let twin = room.dealer.table.seat_player(pb::SeatPlayer { header, table_id: TABLE.into(), seat: 6, player_id: "ZED".into() }).await;
    let refused = twin.expect_err("ZED is zed");
    assert_eq!(error_info(&refused).reason.as_str(), "PLAYER_ID_IN_ANOTHER_CASE", "{refused:?}");
    assert_eq!(error_info(&refused).metadata.get("seat").map(String::as_str), Some("5"), "{refused:?}");
    room.buy_in(5, "zed", 4_000).await?;
    // Nor may one batch write a new patron under two spellings (the fixes' pass: $6,000 sold to
    // each of "ct7" and "CT7", two patrons under the CTR threshold).
    let sale = |player_id: &str| pb::Command {
        command: Some(pb::command::Command::SellChips(pb::SellChips { header: None, cage_id: scenario::CAGE.into(), player_id: player_id.into(), chips: vec![chips(10_000, 1)], supervisor_id: None })),
    };
    let header = room.id("twins");
    let twins = room.cage.ledger.record_batch(pb::RecordBatch { header, commands: vec![sale("ct7"), sale("CT7")] }).await;
    let refused = twins.expect_err("one patron under two spellings");
    assert_eq!(error_info(&refused).reason.as_str(), "PLAYER_ID_IN_ANOTHER_CASE", "{refused:?}");
    // Nor two submissions at the same moment, on two connections (the stakes pass: "mallory" and
    // "MALLORY" bought in at two tables of the game at once were two patrons, ten tries in ten):
    // one spelling buys in, the other is refused, naming it.
    scenario::open_nlhe_table(&mut room.floor, "T2").await?;
    scenario::opening_fill(&mut room.cage, &mut room.floor, "T2", 2).await?;
    for round in 0..4u32 {
        let spellings = [(TABLE, format!("race{round}")), ("T2", format!("RACE{round}"))];
        let mut buys = Vec::new();
        for (table, spelling) in &spellings {
            let mut dealer = room.server.client(principal::DEALER).await?;
            let mut buy = cash_buy_in("", table, 7 + round % 2, spelling, 10_000);
            buy.header = room.id("race");
            buys.push(tokio::spawn(async move { dealer.table.buy_in(buy).await }));
        }
        let mut bought = Vec::new();
        for ((table, spelling), buy) in spellings.iter().zip(buys) {
            match buy.await? {
                Ok(_) => bought.push((*table, spelling.clone())),
                Err(refused) => assert_eq!(error_info(&refused).reason.as_str(), "PLAYER_ID_IN_ANOTHER_CASE", "{refused:?}"),
            }
        }
        assert_eq!(bought.len(), 1, "round {round}: one patron, one spelling: {bought:?}");
        let (table, spelling) = bought.remove(0);
        let header = room.id("out");
        room.dealer.table.cash_out(pb::CashOut { header, table_id: table.into(), seat: 7 + round % 2, player_id: spelling }).await?;
    }
    // Under the known id, the wait applies as ever.
    let (reason, _) = refusal(room.buy_in(2, "Alice", 4_000).await);
    assert_eq!(reason, "REBUY_BELOW_AMOUNT_LEFT");
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_stake_5_cash_in_play_plays_in_the_hand_and_is_converted_after_it() -> anyhow::Result<()> {
    let mut room = Room::open("stake-5", |config| config.cash_in_play_allowed = true).await?;
    room.buy_in(1, "P1", 10_000).await?;
    room.buy_in(2, "P2", 20_000).await?;
    // $50 of cash on the table while chips are fetched: it plays.
    let header = room.id("cash");
    room.dealer
        .table
        .cash_in_play(pb::CashInPlay { header, table_id: TABLE.into(), seat: 1, amount_cents: 5_000, player_id: "P1".into(), supervisor_id: None })
        .await?;
    assert_eq!(room.stack(1).await?, 15_000);
    // The button goes all in for $150, cash included, and wins $150 from P2 ($5 raked).
    room.all_in_hand(1, 1, 2, 1).await?;
    assert_eq!((room.stack(1).await?, room.stack(2).await?), (29_500, 5_000));
    // Converted after the hand, before the next one.
    let header = room.id("start");
    let next = pb::StartHand { header, table_id: TABLE.into(), hand_no: 2, button_seat: 2, dealt_seats: vec![1, 2] };
    let (reason, _) = refusal(room.dealer.table.start_hand(next.clone()).await.map(tonic::Response::into_inner));
    assert_eq!(reason, "CASH_IN_PLAY_NOT_CONVERTED");
    let header = room.id("convert");
    room.dealer.table.convert_cash_in_play(pb::ConvertCashInPlay { header, table_id: TABLE.into(), seat: 1 }).await?;
    let view = table_view(&mut room.auditor, TABLE).await?;
    assert_eq!(view.drop_cents, 10_000 + 20_000 + 5_000, "the cash is in the drop box");
    let header = room.id("start");
    room.dealer.table.start_hand(pb::StartHand { header, ..next }).await?;
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_stake_5_cash_in_play_cannot_walk_around_the_maximum_or_the_rebuy_wait() -> anyhow::Result<()> {
    let mut room = Room::open("stake-5-doors", |config| config.cash_in_play_allowed = true).await?;
    room.buy_in(1, "P1", 20_000).await?;
    let header = room.id("cash");
    let over = room
        .dealer
        .table
        .cash_in_play(pb::CashInPlay { header, table_id: TABLE.into(), seat: 1, amount_cents: 100, player_id: "P1".into(), supervisor_id: None })
        .await
        .unwrap_err();
    assert_eq!(error_info(&over).reason, "TOP_UP_ABOVE_MAXIMUM");
    room.cash_out(1, "P1").await?;
    scenario::seat(&mut room.dealer, TABLE, 1, "P1").await?;
    let header = room.id("cash");
    let short = room
        .dealer
        .table
        .cash_in_play(pb::CashInPlay { header, table_id: TABLE.into(), seat: 1, amount_cents: 4_000, player_id: "P1".into(), supervisor_id: None })
        .await
        .unwrap_err();
    assert_eq!(error_info(&short).reason, "REBUY_BELOW_AMOUNT_LEFT");
    assert_eq!(number(&short, "required_min_cents"), Some(20_000));
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_4_a_count_that_differs_is_recorded_and_reconciled_not_refused() -> anyhow::Result<()> {
    let mut room = Room::open("chip-4", |_| {}).await?;
    room.buy_in(1, "P1", 10_000).await?;
    // The tray after the opening fill ($1 x 200, $5 x 200, $25 x 40) paid $100 in four $25s.
    let view = table_view(&mut room.auditor, TABLE).await?;
    assert_eq!(view.drop_cents, 10_000);
    // Counted: two $5 chips short and the drop $20 short.
    let counted_tray = vec![chips(100, 200), chips(500, 198), chips(2_500, 36)];
    // Counted by the floor (the caller, signing as itself) and the cage (by approval).
    let header = room.id("close");
    let close = pb::CloseShift {
        header,
        table_id: TABLE.into(),
        counted_tray: counted_tray.clone(),
        counted_drop_cents: Some(8_000),
        signer_1: principal::FLOOR.0.into(),
        signer_2: principal::CAGE.0.into(),
    };
    let close = approved(close, &mut [&mut room.cage]).await?;
    let close = room.floor.table.close_shift(close).await?.into_inner();
    let types: Vec<&str> = close.events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["CountVarianceRecorded", "ShiftClosed"]);
    let reconciliation = room
        .auditor
        .audit
        .table_shift_reconciliation(pb::TableShiftReconciliationRequest {
            property_id: String::new(),
            table_id: TABLE.into(),
            shift_close_position: None,
        })
        .await?
        .into_inner();
    assert_eq!(reconciliation.tray_variance, vec![chips(500, -2)]);
    assert_eq!((reconciliation.drop_variance_cents, reconciliation.variance_cents), (-2_000, -3_000));
    let closing: Vec<pb::ChipCount> = reconciliation.closing_tray.iter().filter(|c| c.count != 0).cloned().collect();
    assert_eq!(closing, counted_tray, "the shift closes on what was counted");
    assert_eq!(reconciliation.drop_cents, 8_000);
    assert_eq!((reconciliation.signer_1.as_str(), reconciliation.signer_2.as_str()), ("fred-floor", "carl-cage"));
    let variance = scenario::balance(&mut room.auditor, "house/count-variance").await?;
    assert_eq!(variance, 3_000, "the shortage is booked against the count-variance account");
    // The same close with one signer is refused: a count is signed by two.
    let header = room.id("close");
    let one = room
        .floor
        .table
        .close_shift(pb::CloseShift {
            header,
            table_id: TABLE.into(),
            counted_tray,
            counted_drop_cents: Some(0),
            signer_1: "fred-floor".into(),
            signer_2: "fred-floor".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(error_info(&one).reason, "SIGNERS_NOT_DISTINCT");
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_4_a_cage_count_that_differs_shows_in_the_gaming_day_reconciliation() -> anyhow::Result<()> {
    let mut room = Room::open("chip-4-cage", |_| {}).await?;
    // Cage stock after the opening fill: $1 x 1800, $5 x 1800, $25 x 360, $100 x 100, $10,000 cash.
    let header = room.id("count");
    let count = pb::CountCageShift {
        header,
        cage_id: scenario::CAGE.into(),
        counted_chips: vec![chips(100, 1_800), chips(500, 1_800), chips(2_500, 360), chips(10_000, 101)],
        counted_cash_cents: Some(995_000),
        signer_1: principal::CAGE.0.into(),
        signer_2: principal::FLOOR.0.into(),
    };
    let count = approved(count, &mut [&mut room.floor]).await?;
    let counted = room.cage.cage.count_cage_shift(count).await?.into_inner();
    let day = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["ShiftCounted".into()], ..Default::default() }).await?;
    let gaming_day = day[0].metadata.as_ref().expect("metadata").gaming_day.clone();
    assert_eq!(counted.events[0].event_type, "CountVarianceRecorded");
    let report = room
        .auditor
        .audit
        .gaming_day_reconciliation(pb::GamingDayReconciliationRequest { property_id: String::new(), gaming_day })
        .await?
        .into_inner();
    // One $100 chip over, $50 of cash short: a $50 overage.
    assert_eq!(report.cage_count_variances.len(), 1);
    let variance = &report.cage_count_variances[0];
    assert_eq!((variance.chips_variance.clone(), variance.cash_variance_cents, variance.variance_cents), (vec![chips(10_000, 1)], -5_000, 5_000));
    assert_eq!(report.count_variance_cents, 5_000);
    // Gross too: the $50 short is not hidden by the $100 over (the credit pass: $500 of cash
    // short beside five $100 chips over had read $0).
    assert_eq!((variance.shortage_cents, variance.overage_cents), (5_000, 10_000));
    assert_eq!((report.count_shortage_cents, report.count_overage_cents), (5_000, 10_000));
    assert_eq!(report.sum_of_balances_cents, 0);
    room.server.stop().await
}

/// R-CHIP-4, R-CHIP-5: a gaming day's reconciliation is the whole day. The auditor's pass closed
/// a table's shift 1,001 times: the report listed 1,000 closes and left the rest (and another
/// table's rake and drop) out, with nothing to say so; the table's reconciliation answered an
/// earlier close as its last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_4_the_gaming_days_reconciliation_reads_every_close_of_the_day() -> anyhow::Result<()> {
    let mut room = Room::open("chip-4-every-close", |_| {}).await?;
    // Every close counts the tray as it stands (every denomination the book holds).
    let tray: Vec<pb::ChipCount> = table_view(&mut room.auditor, TABLE).await?.tray.into_iter().filter(|chip| chip.count != 0).collect();
    let close = |header| pb::CloseShift {
        header,
        table_id: TABLE.into(),
        counted_tray: tray.clone(),
        counted_drop_cents: Some(0),
        signer_1: principal::FLOOR.0.into(),
        signer_2: principal::CAGE.0.into(),
    };
    let mut last = 0;
    for _ in 0..1_001 {
        let header = room.id("close");
        let signed = approved(close(header), &mut [&mut room.cage]).await?;
        let closed = room.floor.table.close_shift(signed).await?.into_inner();
        last = closed.events.last().expect("the close").global_position;
    }
    let closes = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["ShiftClosed".into()], ..Default::default() }).await?;
    assert_eq!(closes.len(), 1_001);
    let gaming_day = closes[0].metadata.as_ref().expect("metadata").gaming_day.clone();
    let day = pb::GamingDayReconciliationRequest { property_id: String::new(), gaming_day };
    let report = room.auditor.audit.gaming_day_reconciliation(day).await?.into_inner();
    assert_eq!(report.tables.len(), 1_001, "every close of the day");
    assert_eq!(report.tables.last().map(|shift| shift.shift_close_position), Some(last));
    let request = pb::TableShiftReconciliationRequest { property_id: String::new(), table_id: TABLE.into(), shift_close_position: None };
    let latest = room.auditor.audit.table_shift_reconciliation(request).await?.into_inner();
    assert_eq!(latest.shift_close_position, last, "the table's last close");
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_rake_2_the_jackpot_fund_is_paid_to_players_and_reconciled_every_gaming_day() -> anyhow::Result<()> {
    // $1 to the jackpot fund from every pot of $10 or more that saw the flop (after the rake).
    let mut room = Room::open("rake-2", |config| {
        config.jackpot_drop = Some(pb::JackpotDrop { amount_cents: 100, min_pot_cents: 1_000 });
    })
    .await?;
    room.buy_in(1, "P1", 10_000).await?;
    room.buy_in(2, "P2", 10_000).await?;
    // All in preflop and called: a showdown pot of $200, raked $5, then the $1 drop.
    room.all_in_hand(1, 1, 2, 1).await?;
    assert_eq!(room.stack(1).await?, 20_000 - 500 - 100);
    // A payout is approved by a second supervisor (the cage pass: one floor supervisor paid the
    // fund to an accomplice who had just sat down): without one it is refused, moving nothing.
    let mut admin = room.server.client(principal::ADMIN).await?;
    let pay = |header, seat| pb::PayJackpot {
        header,
        table_id: TABLE.into(),
        seat,
        amount_cents: 100,
        promotion: "high hand".into(),
        approved_by: principal::ADMIN.0.into(),
    };
    let unapproved = pay(room.id("jackpot"), 1);
    let alone = room.floor.table.pay_jackpot(unapproved).await.unwrap_err();
    assert_eq!((alone.code(), error_info(&alone).reason.as_str()), (tonic::Code::PermissionDenied, "APPROVAL_MISSING"), "{alone:?}");
    // To a seat taken a moment before, never dealt in: refused (R-RAKE-2).
    let header = room.id("seat");
    room.dealer.table.seat_player(pb::SeatPlayer { header, table_id: TABLE.into(), seat: 3, player_id: "P3".into() }).await?;
    let to_fresh_seat = approved(pay(room.id("jackpot"), 3), &mut [&mut admin]).await?;
    let fresh = room.floor.table.pay_jackpot(to_fresh_seat).await.unwrap_err();
    let info = error_info(&fresh);
    assert_eq!((info.reason.as_str(), info.metadata["rule_id"].as_str(), info.metadata["seat"].as_str()), ("JACKPOT_SEAT_NOT_DEALT", "R-RAKE-2", "3"));
    assert_eq!(room.stack(3).await?, 0);
    let payout = approved(pay(room.id("jackpot"), 1), &mut [&mut admin]).await?;
    room.floor.table.pay_jackpot(payout).await?;
    let again = approved(pay(room.id("jackpot"), 1), &mut [&mut admin]).await?;
    let empty = room.floor.table.pay_jackpot(again).await.unwrap_err();
    assert_eq!(error_info(&empty).reason, "JACKPOT_FUND_INSUFFICIENT");
    let paid = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["JackpotPaid".into()], ..Default::default() }).await?;
    let gaming_day = paid[0].metadata.as_ref().expect("metadata").gaming_day.clone();
    let day = pb::GamingDayReconciliationRequest { property_id: String::new(), gaming_day };
    let report = room.auditor.audit.gaming_day_reconciliation(day.clone()).await?.into_inner();
    assert_eq!(
        report.jackpot_funds,
        vec![pb::JackpotFund { table_id: TABLE.into(), opening_cents: 0, drops_cents: 100, paid_cents: 100, closing_cents: 0 }]
    );
    assert_eq!(report.jackpot_liability_cents, 0);
    // The payout corrected: less paid, not one more drop (the cage pass: drops grew with no hand).
    let fix = pb::Correction { header: room.id("fix-jackpot"), reverses_event_id: paid[0].event_id.clone(), approved_by: principal::ADMIN.0.into(), reason: "paid to the wrong seat".into() };
    let fix = approved(fix, &mut [&mut admin]).await?;
    room.floor.ledger.correct(fix).await?;
    let report = room.auditor.audit.gaming_day_reconciliation(day).await?.into_inner();
    assert_eq!(
        report.jackpot_funds,
        vec![pb::JackpotFund { table_id: TABLE.into(), opening_cents: 0, drops_cents: 100, paid_cents: 0, closing_cents: 100 }]
    );
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_rake_3_time_is_collected_once_per_interval() -> anyhow::Result<()> {
    let mut room = Room::open("rake-3", |config| {
        config.fee = Some(pb::FeePolicy {
            kind: Some(pb::fee_policy::Kind::TimeCollection(pb::TimeCollection { fee_cents: 600, interval_minutes: 30 })),
        });
    })
    .await?;
    room.buy_in(1, "P1", 10_000).await?;
    room.buy_in(2, "P2", 10_000).await?;
    let header = room.id("time");
    room.dealer.table.collect_time(pb::CollectTime { header, table_id: TABLE.into(), seats: vec![1, 2] }).await?;
    let header = room.id("time");
    let twice = room.dealer.table.collect_time(pb::CollectTime { header, table_id: TABLE.into(), seats: vec![2] }).await.unwrap_err();
    assert_eq!(error_info(&twice).reason, "TIME_ALREADY_COLLECTED");
    assert_eq!(error_info(&twice).metadata.get("rule_id").map(String::as_str), Some("R-RAKE-3"));
    assert_eq!((room.stack(1).await?, room.stack(2).await?), (9_400, 9_400));
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_kitty_1_the_kitty_left_at_the_end_of_the_game_is_settled() -> anyhow::Result<()> {
    // A kitty chip from every pot won; left to the dealers at the end of the game.
    let mut room = Room::open("kitty-1", |config| {
        config.kitty = Some(pb::KittyPolicy { min_pot_cents: 0, leftover: pb::KittyLeftover::ToDealers as i32, ..Default::default() });
    })
    .await?;
    room.buy_in(1, "P1", 10_000).await?;
    room.buy_in(2, "P2", 10_000).await?;
    room.all_in_hand(1, 1, 2, 1).await?;
    let before = table_view(&mut room.auditor, TABLE).await?;
    assert_eq!(before.kitty_cents, 100);
    let header = room.id("close");
    room.floor.table.close_game(pb::CloseGame { header, table_id: TABLE.into() }).await?;
    let after = table_view(&mut room.auditor, TABLE).await?;
    assert_eq!((after.kitty_cents, after.toke_cents - before.toke_cents), (0, 100));
    // The game is over: no more hands.
    let header = room.id("start");
    let (reason, _) = refusal(
        room.dealer
            .table
            .start_hand(pb::StartHand { header, table_id: TABLE.into(), hand_no: 2, button_seat: 2, dealt_seats: vec![1, 2] })
            .await
            .map(tonic::Response::into_inner),
    );
    assert_eq!(reason, "GAME_CLOSED");
    room.cash_out(1, "P1").await?;
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_mark_3_an_iou_writer_cashes_out_and_the_iou_is_paid_from_the_stack() -> anyhow::Result<()> {
    let mut room = Room::open("mark-3", |config| {
        config.open_stakes = Some(pb::OpenStakes { iou_auto_accept_below_cents: 100_000, ious_allowed: None });
    })
    .await?;
    room.buy_in(1, "P1", 10_000).await?;
    let header = room.id("iou");
    room.dealer
        .table
        .write_iou(pb::WriteIou { header, table_id: TABLE.into(), seat: 1, amount_cents: 3_000, ..Default::default() })
        .await?;
    assert_eq!(room.stack(1).await?, 13_000);
    let left = room.cash_out(1, "P1").await?;
    assert_eq!(chipledger_tests::reply_balance(&left, "player/P1/pocket"), Some(10_000));
    assert_eq!(scenario::balance(&mut room.auditor, "player/P1/iou").await?, 0, "the IOU is paid");
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_mark_3_the_paper_of_an_unpaid_iou_never_reaches_the_cage_and_a_loan_is_the_lenders_chips() -> anyhow::Result<()> {
    let mut room = Room::open("mark-3-paper", |config| {
        config.open_stakes = Some(pb::OpenStakes { iou_auto_accept_below_cents: 100_000, ious_allowed: None });
    })
    .await?;
    room.buy_in(1, "P1", 10_000).await?;
    room.buy_in(2, "P2", 20_000).await?;
    // P1 writes $30 of paper and loses everything to P2.
    let header = room.id("iou");
    room.dealer
        .table
        .write_iou(pb::WriteIou { header, table_id: TABLE.into(), seat: 1, amount_cents: 3_000, ..Default::default() })
        .await?;
    room.all_in_hand(1, 1, 2, 2).await?;
    assert_eq!(room.stack(1).await?, 0);
    let won = room.stack(2).await?;
    // The winner's stack holds the paper: it stays at the table until P1 pays.
    let refused = room.cash_out(2, "P2").await.expect_err("the paper stays at the table");
    let info = error_info(&refused);
    assert_eq!((info.reason.as_str(), info.metadata.get("rule_id").map(String::as_str)), ("IOU_IN_PLAY", Some("R-MARK-3")));
    assert_eq!(info.metadata.get("iou_in_play_cents").map(String::as_str), Some("3000"));
    assert_eq!(info.metadata.get("leaving_cents").map(String::as_str), Some(won.to_string().as_str()));
    assert_eq!(room.stack(2).await?, won, "nothing moved");
    // A loan from a player who sits at the table moves that player's chips.
    room.buy_in(3, "P3", 10_000).await?;
    let header = room.id("loan");
    let loan = pb::WriteIou { header, table_id: TABLE.into(), seat: 1, amount_cents: 4_000, lender_player_id: Some("P3".into()), ..Default::default() };
    room.dealer.table.write_iou(loan).await?;
    assert_eq!((room.stack(1).await?, room.stack(3).await?), (4_000, 6_000));
    // Paid back to the lender, and the paper with the borrowed chips: now the winner may leave.
    let header = room.id("repay");
    let repay = pb::SettleIou { header, table_id: TABLE.into(), seat: 1, player_id: "P1".into(), amount_cents: 1_000, lender_player_id: Some("P3".into()), ..Default::default() };
    room.dealer.table.settle_iou(repay).await?;
    let header = room.id("settle");
    let settle = pb::SettleIou { header, table_id: TABLE.into(), seat: 1, player_id: "P1".into(), amount_cents: 3_000, ..Default::default() };
    room.dealer.table.settle_iou(settle).await?;
    let left = room.cash_out(2, "P2").await?;
    assert_eq!(chipledger_tests::reply_balance(&left, "player/P2/pocket"), Some(won));
    assert_eq!(scenario::balance(&mut room.auditor, "player/P1/iou").await?, 0, "the IOU is paid");
    assert_eq!(room.stack(3).await?, 7_000);
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_audit_1_a_hand_is_corrected_as_a_whole_and_only_once() -> anyhow::Result<()> {
    let mut room = Room::open("audit-1", |_| {}).await?;
    room.buy_in(1, "P1", 10_000).await?;
    room.buy_in(2, "P2", 10_000).await?;
    room.all_in_hand(1, 1, 2, 1).await?;
    // P1 won $100 from P2 less the $5 rake. The floor finds the hand was misdealt.
    assert_eq!((room.stack(1).await?, room.stack(2).await?), (19_500, 0));
    let settled = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["HandSettled".into()], ..Default::default() }).await?;
    // Asked by the floor, approved by the admin with a token of their own (R-AUDIT-1).
    let mut admin = room.server.client(principal::ADMIN).await?;
    let correct = |command_id: &str, event_id: &str| pb::Correction {
        header: header(command_id),
        reverses_event_id: event_id.into(),
        approved_by: principal::ADMIN.0.into(),
        reason: "misdeal: two cards exposed".into(),
    };
    let fix = approved(correct("fix-1", &settled[0].event_id), &mut [&mut admin]).await?;
    room.floor.ledger.correct(fix).await?;
    // The whole hand is reversed: stacks as before it, nothing left in the pot.
    assert_eq!((room.stack(1).await?, room.stack(2).await?), (10_000, 10_000));
    assert_eq!(table_view(&mut room.auditor, TABLE).await?.pot_total_cents, 0);
    // Naming another event of the same hand corrects nothing more.
    let posted = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["Posted".into()], ..Default::default() }).await?;
    let again = approved(correct("fix-2", &posted[0].event_id), &mut [&mut admin]).await?;
    let twice = room.floor.ledger.correct(again).await.unwrap_err();
    assert_eq!(error_info(&twice).reason, "ALREADY_CORRECTED", "{twice:?}");
    room.server.stop().await
}

/// R-AUDIT-1 with R-AUDIT-4: a hand is corrected by its own events. A seat not in the hand that
/// topped up with cash meanwhile keeps its top-up, and the cash stays on its patron's day (the
/// cash pass: the top-up was netted into the hand, and its cash taken off another patron's day,
/// one whose real cash then passed $10,000 with no CTR); the top-up is corrected on its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_audit_1_a_hand_correction_leaves_a_top_up_made_meanwhile_and_its_cash() -> anyhow::Result<()> {
    let mut room = Room::open("audit-1-top-up", |_| {}).await?;
    for seat in 1..=3 {
        room.buy_in(seat, &format!("P{seat}"), 10_000).await?;
    }
    let start = room.id("start");
    room.dealer.table.start_hand(pb::StartHand { header: start, table_id: TABLE.into(), hand_no: 1, button_seat: 1, dealt_seats: vec![1, 2] }).await?;
    let ids: Vec<String> = (0..4).map(|_| room.id("h").unwrap().command_id).collect();
    room.dealer.table.post(post(&ids[0], 1, pb::PostKind::SmallBlind, 100)).await?;
    room.dealer.table.post(post(&ids[1], 2, pb::PostKind::BigBlind, 200)).await?;
    // Seat 3, not dealt in, tops up $50 in cash while the hand goes on.
    let top_up = pb::TopUp { header: room.id("top-up"), table_id: TABLE.into(), seat: 3, amount_cents: 5_000, source: pb::FundsSource::Cash as i32, supervisor_id: None, player_id: "P3".into() };
    room.dealer.table.top_up(top_up).await?;
    room.dealer.table.act(act(&ids[2], 1, pb::ActionKind::AllIn, 0)).await?;
    room.dealer.table.act(act(&ids[3], 2, pb::ActionKind::Call, 0)).await?;
    let showdown = room.id("showdown");
    room.dealer.table.showdown(pb::Showdown { header: showdown, table_id: TABLE.into(), high: vec![pb::SeatGroup { seats: vec![1] }], ..Default::default() }).await?;
    let end = room.id("end");
    room.dealer.table.end_hand(pb::EndHand { header: end, table_id: TABLE.into() }).await?;
    let mut admin = room.server.client(principal::ADMIN).await?;
    let correct = |command_id: &str, event_id: &str| pb::Correction {
        header: header(command_id),
        reverses_event_id: event_id.into(),
        approved_by: principal::ADMIN.0.into(),
        reason: "misdeal".into(),
    };
    let settled = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["HandSettled".into()], ..Default::default() }).await?;
    let fix = approved(correct("fix-hand", &settled[0].event_id), &mut [&mut admin]).await?;
    room.floor.ledger.correct(fix).await?;
    assert_eq!((room.stack(1).await?, room.stack(2).await?, room.stack(3).await?), (10_000, 10_000, 15_000), "the hand undone, the top-up kept");
    let cash = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["CashTransaction".into()], ..Default::default() }).await?;
    let gaming_day = cash[0].metadata.as_ref().expect("metadata").gaming_day.clone();
    let day = |room: &mut Room| {
        let request = pb::PatronCashActivityRequest { property_id: String::new(), gaming_day: gaming_day.clone(), player_id: String::new(), page: None };
        let mut audit = room.auditor.audit.clone();
        async move {
            let patrons = audit.patron_cash_activity(request).await?.into_inner().patrons;
            anyhow::Ok(patrons.into_iter().map(|p| (p.player_id, p.cash_in_cents, p.cash_in_corrected_cents)).collect::<Vec<_>>())
        }
    };
    let whole = |p: &str, cents: i64, back: i64| (p.to_string(), cents, back);
    assert_eq!(day(&mut room).await?, vec![whole("P1", 10_000, 0), whole("P2", 10_000, 0), whole("P3", 15_000, 0)]);
    // The top-up, corrected on its own, comes off its patron's day.
    let topped = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["ToppedUp".into()], ..Default::default() }).await?;
    let fix = approved(correct("fix-top-up", &topped[0].event_id), &mut [&mut admin]).await?;
    room.floor.ledger.correct(fix).await?;
    assert_eq!(room.stack(3).await?, 10_000);
    assert_eq!(day(&mut room).await?, vec![whole("P1", 10_000, 0), whole("P2", 10_000, 0), whole("P3", 10_000, 5_000)]);
    let verified = room.auditor.audit.verify_chain(pb::VerifyChainRequest { projections: true, ..Default::default() }).await?.into_inner();
    assert!(verified.ok, "{verified:?}");
    room.server.stop().await
}

/// R-MARK-3 with R-AUDIT-1: a hand in which a player borrowed from another is not corrected
/// (reversing its chips would leave the loan owed on the seat and pay the lender twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_mark_3_a_hand_with_a_loan_in_it_is_not_corrected() -> anyhow::Result<()> {
    let mut room = Room::open("mark-3-loan-hand", |config| {
        config.open_stakes = Some(pb::OpenStakes { iou_auto_accept_below_cents: 100_000, ..Default::default() });
    })
    .await?;
    for seat in 1..=3 {
        room.buy_in(seat, &format!("P{seat}"), 10_000).await?;
    }
    let start = room.id("start");
    room.dealer.table.start_hand(pb::StartHand { header: start, table_id: TABLE.into(), hand_no: 1, button_seat: 1, dealt_seats: vec![1, 2, 3] }).await?;
    let ids: Vec<String> = (0..6).map(|_| room.id("h").unwrap().command_id).collect();
    room.dealer.table.post(post(&ids[0], 2, pb::PostKind::SmallBlind, 100)).await?;
    room.dealer.table.post(post(&ids[1], 3, pb::PostKind::BigBlind, 200)).await?;
    room.dealer.table.act(act(&ids[2], 1, pb::ActionKind::Fold, 0)).await?;
    // P2 borrows $50 from P1, who folded, and raises to $120 with it (its stack covered the call:
    // borrowed to raise, R-MARK-3); P3 calls all in and wins.
    let loan_id = room.id("loan");
    let loan = pb::WriteIou { header: loan_id, table_id: TABLE.into(), seat: 2, amount_cents: 5_000, lender_player_id: Some("P1".into()), ..Default::default() };
    room.dealer.table.write_iou(loan).await?;
    let all_in = room.dealer.table.act(act(&ids[3], 2, pb::ActionKind::AllIn, 0)).await.expect_err("borrowed to raise");
    assert_eq!(error_info(&all_in).reason, "ALL_IN_AFTER_BORROW_TO_RAISE");
    let raise_id = room.id("raise").unwrap().command_id;
    room.dealer.table.act(act(&raise_id, 2, pb::ActionKind::Raise, 12_000)).await?;
    room.dealer.table.act(act(&ids[4], 3, pb::ActionKind::Call, 0)).await?;

    let showdown = room.id("showdown");
    room.dealer.table.showdown(pb::Showdown { header: showdown, table_id: TABLE.into(), high: vec![pb::SeatGroup { seats: vec![3] }], ..Default::default() }).await?;
    let end = room.id("end");
    room.dealer.table.end_hand(pb::EndHand { header: end, table_id: TABLE.into() }).await?;
    let stacks = (room.stack(1).await?, room.stack(2).await?, room.stack(3).await?);
    let settled = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["HandSettled".into()], ..Default::default() }).await?;
    let mut admin = room.server.client(principal::ADMIN).await?;
    let fix = pb::Correction {
        header: header("fix-loan-hand"),
        reverses_event_id: settled[0].event_id.clone(),
        approved_by: principal::ADMIN.0.into(),
        reason: "misdeal".into(),
    };
    let fix = approved(fix, &mut [&mut admin]).await?;
    let refused = room.floor.ledger.correct(fix).await.expect_err("a loan is paid back, not corrected");
    let info = error_info(&refused);
    assert_eq!((info.reason.as_str(), info.metadata.get("rule_id").map(String::as_str)), ("CORRECTION_INVALID", Some("R-MARK-3")));
    assert_eq!((room.stack(1).await?, room.stack(2).await?, room.stack(3).await?), stacks, "nothing moved");
    room.server.stop().await
}

/// R-AUDIT-1 with R-STAKE-4: a correction moves the chips of the session its event was part of.
/// The winner of a hand cashed out and another patron sat down in the seat: correcting the hand
/// would take the newcomer's chips, and is refused with the numbers; nothing moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_audit_1_a_correction_never_takes_the_chips_of_the_next_patron_in_the_seat() -> anyhow::Result<()> {
    let mut room = Room::open("audit-1-session", |_| {}).await?;
    room.buy_in(1, "P1", 10_000).await?;
    room.buy_in(2, "P2", 10_000).await?;
    room.all_in_hand(1, 1, 2, 1).await?;
    let settled = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["HandSettled".into()], ..Default::default() }).await?;
    room.cash_out(1, "P1").await?;
    room.buy_in(1, "P99", 10_000).await?;
    let mut admin = room.server.client(principal::ADMIN).await?;
    let fix = pb::Correction {
        header: header("fix-late"),
        reverses_event_id: settled[0].event_id.clone(),
        approved_by: principal::ADMIN.0.into(),
        reason: "misdeal found after the winner left".into(),
    };
    let fix = approved(fix, &mut [&mut admin]).await?;
    let refused = room.floor.ledger.correct(fix).await.unwrap_err();
    assert_eq!((refused.code(), error_info(&refused).reason.as_str()), (tonic::Code::FailedPrecondition, "CORRECTION_INVALID"), "{refused:?}");
    assert_eq!(error_info(&refused).metadata.get("rule_id").map(String::as_str), Some("R-AUDIT-1"));
    assert_eq!(number(&refused, "seat"), Some(1));
    assert!(number(&refused, "seated_at_stream_version") > number(&refused, "corrected_stream_version"), "{refused:?}");
    assert_eq!((room.stack(1).await?, room.stack(2).await?), (10_000, 0), "nothing moved");
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_stake_6_a_house_move_keeps_a_short_stack_without_a_new_buy_in() -> anyhow::Result<()> {
    let mut room = Room::open("stake-6", |_| {}).await?;
    scenario::open_nlhe_table(&mut room.floor, "T2").await?;
    room.buy_in(1, "P1", 4_000).await?;
    room.buy_in(2, "P2", 20_000).await?;
    // P1 loses half the stack: $20, below the $40 minimum.
    let header = room.id("tip");
    room.dealer.table.tip(pb::Tip { header, table_id: TABLE.into(), seat: 1, amount_cents: 100 }).await?;
    room.all_in_hand(1, 2, 1, 2).await?;
    let header = room.id("move");
    room.floor
        .table
        .move_player(pb::MovePlayer { header, table_id: TABLE.into(), seat: 2, to_table_id: "T2".into(), to_seat: 5, player_id: "P2".into() })
        .await?;
    let t2 = table_view(&mut room.auditor, "T2").await?;
    assert_eq!(stack(&t2, 5), 20_000 + 3_900 - 500, "the stack moves unchanged");
    // The held seat moved with the player: a seat back at T1 would be a second one.
    scenario::seat(&mut room.dealer, TABLE, 3, "P2").await?;
    let second = room.buy_in(3, "P2", 4_000).await.unwrap_err();
    assert_eq!(error_info(&second).reason, "SECOND_SEAT_SAME_GAME");
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_2_a_buy_in_of_10000_dollars_needs_a_supervisor() -> anyhow::Result<()> {
    // $50/$100 no limit: buy-in $2,000 to $10,000; the tray filled with $100 chips.
    let server = TestServer::start("chip-2").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    scenario::open_cage(&mut cage).await?;
    floor
        .table
        .open_table(pb::OpenTable {
            header: header("open-big"),
            table_id: TABLE.into(),
            configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
                game: pb::GamePreset::NoLimitHoldem as i32,
                small_cents: 5_000,
                big_cents: 10_000,
..Default::default()
})),
        })
        .await?;
    let fill = pb::Fill {
        header: header("fill-big"),
        table_id: TABLE.into(),
        cage_id: scenario::CAGE.into(),
        slip_no: 1,
        chips: vec![chips(10_000, 100)],
        signer_1: principal::CAGE.0.into(),
        signer_2: principal::FLOOR.0.into(),
    };
    cage.cage.fill(approved(fill, &mut [&mut floor]).await?).await?;
    let unsupervised = dealer.table.buy_in(cash_buy_in("big-1", TABLE, 1, "P1", 1_000_000)).await.unwrap_err();
    assert_eq!(error_info(&unsupervised).reason, "SUPERVISOR_REQUIRED");
    assert_eq!(number(&unsupervised, "threshold_cents"), Some(1_000_000));
    // Under the threshold needs nobody ($9,900 in $100 chips).
    dealer.table.buy_in(cash_buy_in("big-2", TABLE, 2, "P2", 990_000)).await?;
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_tip_1_a_tip_is_limited_to_the_cap_and_r_chip_3_slips_are_sequential() -> anyhow::Result<()> {
    let mut room = Room::open("tip-1", |_| {}).await?;
    room.buy_in(1, "P1", 10_000).await?;
    // The preset's cap is $25 a tip.
    let tip_header = room.id("tip");
    let big = room.dealer.table.tip(pb::Tip { header: tip_header, table_id: TABLE.into(), seat: 1, amount_cents: 2_600 }).await.unwrap_err();
    assert_eq!(error_info(&big).reason, "TIP_ABOVE_CAP");
    let tip_header = room.id("tip");
    room.dealer.table.tip(pb::Tip { header: tip_header, table_id: TABLE.into(), seat: 1, amount_cents: 2_500 }).await?;
    assert_eq!(room.stack(1).await?, 7_500);
    // Fill slip 1 was the opening fill; slip 3 before slip 2 is out of sequence.
    let fill = |command_id: &str, slip_no: u64| pb::Fill {
        header: header(command_id),
        table_id: TABLE.into(),
        cage_id: scenario::CAGE.into(),
        slip_no,
        chips: vec![chips(100, 10)],
        signer_1: "carl-cage".into(),
        signer_2: "fred-floor".into(),
    };
    let skipped = approved(fill("fill-3", 3), &mut [&mut room.floor]).await?;
    let skipped = room.cage.cage.fill(skipped).await.unwrap_err();
    assert_eq!(error_info(&skipped).reason, "SLIP_OUT_OF_SEQUENCE");
    assert_eq!(number(&skipped, "expected_slip_no"), Some(2));
    let next = approved(fill("fill-2", 2), &mut [&mut room.floor]).await?;
    room.cage.cage.fill(next).await?;
    room.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_audit_4_cash_over_3000_is_logged_and_the_first_total_over_10000_needs_a_ctr() -> anyhow::Result<()> {
    let mut room = Room::open("audit-4", |_| {}).await?;
    let sell = |command_id: &str, chips: Vec<pb::ChipCount>| pb::SellChips {
        header: header(command_id),
        cage_id: scenario::CAGE.into(),
        player_id: "P9".into(),
        chips,
        supervisor_id: None,
    };
    // $2,000 (below the MTL threshold), $3,500 (logged), $5,000 (logged; the day's cash in
    // reaches $10,500: the first total over $10,000 needs a CTR, and the sale that takes it
    // there a supervisor, R-CHIP-2).
    let supervised = |sale: pb::SellChips| pb::SellChips { supervisor_id: Some(principal::FLOOR.0.into()), ..sale };
    room.cage.cage.sell_chips(sell("sell-1", vec![chips(10_000, 20)])).await?;
    room.cage.cage.sell_chips(sell("sell-2", vec![chips(10_000, 35)])).await?;
    let third = approved(supervised(sell("sell-3", vec![chips(10_000, 45), chips(2_500, 20)])), &mut [&mut room.floor]).await?;
    room.cage.cage.sell_chips(third).await?;
    let cash = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["CashTransaction".into()], ..Default::default() }).await?;
    let gaming_day = cash[0].metadata.as_ref().expect("metadata").gaming_day.clone();
    let activity = room
        .auditor
        .audit
        .patron_cash_activity(pb::PatronCashActivityRequest { property_id: String::new(), gaming_day, player_id: "P9".into(), page: None })
        .await?
        .into_inner();
    let patron = &activity.patrons[0];
    assert_eq!((patron.cash_in_cents, patron.cash_out_cents), (1_050_000, 0));
    assert_eq!(patron.mtl_entries.iter().map(|e| e.amount_cents).collect::<Vec<_>>(), vec![350_000, 500_000]);
    assert!(patron.ctr_required_cash_in && !patron.ctr_required_cash_out);
    // Paged by one transaction, with another patron's cash between: each patron is listed
    // once, with the whole day (the cage pass: a page of events split one patron's day into
    // partial rows, the first showing no CTR).
    room.cage.cage.sell_chips(pb::SellChips { player_id: "P8".into(), ..sell("sell-4", vec![chips(2_500, 4)]) }).await?;
    let fifth = approved(supervised(sell("sell-5", vec![chips(2_500, 4)])), &mut [&mut room.floor]).await?;
    room.cage.cage.sell_chips(fifth).await?;
    let mut token = String::new();
    let mut rows = Vec::new();
    loop {
        let page = pb::PageRequest { page_size: 1, page_token: token.clone() };
        let request = pb::PatronCashActivityRequest { property_id: String::new(), gaming_day: patron.gaming_day.clone(), player_id: String::new(), page: Some(page) };
        let answer = room.auditor.audit.patron_cash_activity(request).await?.into_inner();
        rows.extend(answer.patrons.into_iter().map(|p| (p.player_id, p.cash_in_cents, p.ctr_required_cash_in)));
        token = answer.page.map(|page| page.next_page_token).unwrap_or_default();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(rows, vec![("P9".to_string(), 1_060_000, true), ("P8".to_string(), 10_000, false)]);
    room.server.stop().await
}

/// R-AUDIT-4 with R-AUDIT-1: the record of cash follows the money. A $12,000 sale keyed in error
/// and a cash buy-in at a table, both corrected, come off the patron's day in the report and in
/// the day's projection (they had stayed in the total and its CTR); the corrected amounts are
/// shown apart, and the projections verify.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_audit_4_cash_corrected_away_comes_off_the_patrons_day() -> anyhow::Result<()> {
    let mut room = Room::open("audit-4-corrected", |_| {}).await?;
    let sale = pb::SellChips { header: header("sale-1"), cage_id: scenario::CAGE.into(), player_id: "P1".into(), chips: vec![chips(10_000, 100), chips(2_500, 80)], supervisor_id: None };
    // R-CHIP-2: a sale this large names a supervisor, who approves it with their own token.
    let status = room.cage.cage.sell_chips(sale.clone()).await.expect_err("a $12,000 sale without a supervisor");
    let info = error_info(&status);
    assert_eq!((status.code(), info.reason.as_str(), info.metadata.get("rule_id").map(String::as_str)), (Code::FailedPrecondition, "SUPERVISOR_REQUIRED", Some("R-CHIP-2")));
    assert_eq!(info.metadata.get("threshold_cents").map(String::as_str), Some("1000000"), "{info:?}");
    // The refused sale is kept under its id: the supervised one is another command.
    let sale = pb::SellChips { header: header("sale-1-supervised"), supervisor_id: Some(principal::FLOOR.0.into()), ..sale };
    let sale = approved(sale, &mut [&mut room.floor]).await?;
    room.cage.cage.sell_chips(sale).await?;
    // Cash at the table after $12,000 at the cage: the floor is there too (R-CHIP-2).
    let mut buy = cash_buy_in("", TABLE, 1, "P1", 10_000);
    buy.header = room.id("buy");
    buy.supervisor_id = Some(principal::FLOOR.0.into());
    let buy = approved(buy, &mut [&mut room.floor]).await?;
    room.dealer.table.buy_in(buy).await?;
    let cash = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["CashTransaction".into()], ..Default::default() }).await?;
    let gaming_day = cash[0].metadata.as_ref().expect("metadata").gaming_day.clone();
    let activity = |room: &mut Room| {
        let request = pb::PatronCashActivityRequest { property_id: String::new(), gaming_day: gaming_day.clone(), player_id: "P1".into(), page: None };
        let mut audit = room.auditor.audit.clone();
        async move { anyhow::Ok(audit.patron_cash_activity(request).await?.into_inner().patrons) }
    };
    let before = activity(&mut room).await?;
    assert_eq!((before[0].cash_in_cents, before[0].ctr_required_cash_in), (1_210_000, true));
    let mut admin = room.server.client(principal::ADMIN).await?;
    let correct = |command_id: &str, event_id: &str| pb::Correction {
        header: header(command_id),
        reverses_event_id: event_id.into(),
        approved_by: principal::ADMIN.0.into(),
        reason: "keyed $12,000 for $1,200".into(),
    };
    let sold = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["ChipsSold".into()], ..Default::default() }).await?;
    let fix = approved(correct("fix-sale", &sold[0].event_id), &mut [&mut admin]).await?;
    room.floor.ledger.correct(fix).await?;
    let bought = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["BoughtIn".into()], ..Default::default() }).await?;
    let fix = approved(correct("fix-buy-in", &bought[0].event_id), &mut [&mut admin]).await?;
    room.floor.ledger.correct(fix).await?;
    let after = activity(&mut room).await?;
    let row = |p: &pb::PatronCashActivity| (p.cash_in_cents, p.cash_in_corrected_cents, p.cash_out_cents, p.ctr_required_cash_in);
    // The CTR the sale required stays on the record for compliance to amend.
    assert_eq!(after.iter().map(row).collect::<Vec<_>>(), vec![(0, 1_210_000, 0, true)]);
    let mut db = <sqlx::PgConnection as sqlx::Connection>::connect(&room.server.database_url).await?;
    let day: (i64, i64) =
        sqlx::query_as("SELECT cash_in_cents, cash_out_cents FROM patron_daily_cash WHERE player_id = 'P1' AND gaming_day = $1::date")
            .bind(&gaming_day)
            .fetch_one(&mut db)
            .await?;
    assert_eq!(day, (0, 0), "the day's projection");
    // The day's real cash crosses the threshold: a CTR of its own, beside the first.
    let sale = pb::SellChips { header: header("sale-2"), cage_id: scenario::CAGE.into(), player_id: "P1".into(), chips: vec![chips(10_000, 100), chips(2_500, 20)], supervisor_id: Some(principal::FLOOR.0.into()) };
    let sale = approved(sale, &mut [&mut room.floor]).await?;
    room.cage.cage.sell_chips(sale).await?;
    let after = activity(&mut room).await?;
    assert_eq!(after[0].cash_in_cents, 1_050_000);
    assert_eq!(after[0].ctr_entries.iter().map(|e| (e.direction.as_str(), e.amount_cents)).collect::<Vec<_>>(), vec![("in", 1_200_000), ("in", 1_050_000)]);
    // R-AUDIT-1: the MTL lists both sales as recorded, the first marked with the correction that
    // took it back (its position), the second standing.
    let fixed = all_events(&mut room.auditor, pb::EventFilter { event_types: vec!["Corrected".into()], ..Default::default() }).await?;
    let fix_sale = fixed.iter().find(|event| event.stream_id.starts_with("player-") && event.payload_json.contains(&sold[0].event_id)).expect("the sale's cash taken back");
    assert_eq!(
        after[0].mtl_entries.iter().map(|e| (e.amount_cents, e.taken_back_at_position)).collect::<Vec<_>>(),
        vec![(1_200_000, fix_sale.global_position), (1_050_000, 0)]
    );
    let verified = room.auditor.audit.verify_chain(pb::VerifyChainRequest { projections: true, ..Default::default() }).await?.into_inner();
    assert!(verified.ok, "{verified:?}");
    room.server.stop().await
}
