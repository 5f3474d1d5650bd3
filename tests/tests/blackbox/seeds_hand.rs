//! The hand-engine seed examples of issue 14 through the gRPC API, as a dealer's terminal sends
//! them: blinds in position and missed blinds (R-POST-2, R-POST-3), the seeds' straddle house
//! rule and the sleeper (R-POST-4), stud up cards (R-POST-5), the side pot paid at once
//! (R-POT-3), a short call brought up before the round closes (R-BET-13), tip chips that never
//! play (R-UNIT-2), the rake a room reports and awards by amount (R-RAKE-1, R-POT-5).

use chipledger_proto::v1 as pb;
use chipledger_tests::{Client, TestServer, chips, error_info, header, principal};
use tonic::Code;

use crate::scenario::{self, TABLE, cash_buy_in, stack, table_view};

/// A dealer's terminal: every command gets a fresh id.
pub(crate) struct Dealer {
    pub(crate) client: Client,
    pub(crate) tag: &'static str,
    pub(crate) next: u32,
}

impl Dealer {
    pub(crate) fn id(&mut self) -> Option<pb::CommandHeader> {
        self.next += 1;
        header(&format!("{}-{}", self.tag, self.next))
    }

    pub(crate) async fn start(&mut self, hand_no: u64, button_seat: u32, dealt_seats: &[u32]) -> anyhow::Result<()> {
        let header = self.id();
        self.client
            .table
            .start_hand(pb::StartHand { header, table_id: TABLE.into(), hand_no, button_seat, dealt_seats: dealt_seats.to_vec() })
            .await?;
        Ok(())
    }

    pub(crate) async fn post(&mut self, seat: u32, kind: pb::PostKind, amount_cents: i64) -> Result<pb::CommandResult, tonic::Status> {
        let header = self.id();
        let post = pb::Post { header, table_id: TABLE.into(), seat, kind: kind as i32, amount_cents };
        self.client.table.post(post).await.map(|r| r.into_inner())
    }

    pub(crate) async fn act(&mut self, seat: u32, kind: pb::ActionKind, to_cents: i64) -> Result<pb::CommandResult, tonic::Status> {
        let header = self.id();
        let act = pb::Act { header, table_id: TABLE.into(), seat, kind: kind as i32, to_cents };
        self.client.table.act(act).await.map(|r| r.into_inner())
    }

    pub(crate) async fn next_round(&mut self, first_to_act_seat: Option<u32>) -> Result<pb::CommandResult, tonic::Status> {
        let header = self.id();
        self.client.table.next_round(pb::NextRound { header, table_id: TABLE.into(), first_to_act_seat }).await.map(|r| r.into_inner())
    }

    pub(crate) async fn up_cards(&mut self, cards: &[(u32, &str)]) -> Result<pb::CommandResult, tonic::Status> {
        let header = self.id();
        let cards = cards.iter().map(|(seat, card)| pb::UpCard { seat: *seat, card: (*card).into() }).collect();
        self.client.table.deal_up_cards(pb::DealUpCards { header, table_id: TABLE.into(), cards }).await.map(|r| r.into_inner())
    }

    pub(crate) async fn showdown(&mut self, high: &[&[u32]], rake_cents: Option<i64>) -> Result<pb::CommandResult, tonic::Status> {
        let header = self.id();
        let high = high.iter().map(|g| pb::SeatGroup { seats: g.to_vec() }).collect();
        let showdown = pb::Showdown { header, table_id: TABLE.into(), high, low: vec![], has_low: false, rake_cents };
        self.client.table.showdown(showdown).await.map(|r| r.into_inner())
    }

    pub(crate) async fn end(&mut self) -> anyhow::Result<()> {
        let header = self.id();
        self.client.table.end_hand(pb::EndHand { header, table_id: TABLE.into() }).await?;
        Ok(())
    }

    pub(crate) async fn legal(&mut self) -> anyhow::Result<pb::LegalActions> {
        let request = pb::GetLegalActionsRequest { property_id: String::new(), table_id: TABLE.into() };
        Ok(self.client.table.get_legal_actions(request).await?.into_inner())
    }

    /// Everybody still to act folds (the last fold settles the hand).
    pub(crate) async fn fold_round(&mut self) -> anyhow::Result<()> {
        for _ in 0..10 {
            let legal = self.legal().await?;
            if !legal.seat_to_act {
                return Ok(());
            }
            self.act(legal.seat, pb::ActionKind::Fold, 0).await?;
        }
        anyhow::bail!("the hand does not end")
    }
}

/// The refusal's reason code (FAILED_PRECONDITION with ErrorInfo), and the rule id.
pub(crate) fn refused<T: std::fmt::Debug>(result: Result<T, tonic::Status>) -> (String, String) {
    let status = result.expect_err("refused");
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    let info = error_info(&status);
    (info.reason, info.metadata.get("rule_id").cloned().unwrap_or_default())
}

/// As [`refused`], with one number of the refusal's metadata.
pub(crate) fn refused_at<T: std::fmt::Debug>(result: Result<T, tonic::Status>, number: &str) -> (String, String, Option<i64>) {
    let value = result.as_ref().err().and_then(|status| error_info(status).metadata.get(number).and_then(|v| v.parse().ok()));
    let (reason, rule) = refused(result);
    (reason, rule, value)
}

/// A stocked cage and a table opened from `preset`, its configuration then changed on the wire
/// by `change` (before anyone sits), players seated with cash buy-ins.
pub(crate) async fn table_with(
    server: &TestServer,
    preset: pb::TablePreset,
    change: impl FnOnce(&mut pb::TableConfig),
    stacks: &[(u32, i64)],
    tag: &'static str,
) -> anyhow::Result<Dealer> {
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    scenario::open_cage(&mut cage).await?;
    let configuration = Some(pb::open_table::Configuration::Preset(preset));
    floor.table.open_table(pb::OpenTable { header: header("open"), table_id: TABLE.into(), configuration }).await?;
    scenario::opening_fill(&mut cage, &mut floor, TABLE, 1).await?;
    let mut config = table_view(&mut floor, TABLE).await?.config.expect("the table has a configuration");
    change(&mut config);
    let configuration = Some(pb::change_table_config::Configuration::Config(config));
    floor.table.change_table_config(pb::ChangeTableConfig { header: header("config"), table_id: TABLE.into(), configuration }).await?;
    for (seat, amount_cents) in stacks {
        let player = format!("P{seat}");
        scenario::seat(&mut dealer, TABLE, *seat, &player).await?;
        dealer.table.buy_in(cash_buy_in(&format!("buy-{player}"), TABLE, *seat, &player, *amount_cents)).await?;
    }
    Ok(Dealer { client: dealer, tag, next: 0 })
}

/// NLHE $1/$2 from the preset with options changed on the wire: no rake, buy-ins from $1 to
/// $1,000 (the short stacks of the examples), then `change`.
pub(crate) async fn nlhe_with(server: &TestServer, change: impl FnOnce(&mut pb::TableConfig), stacks: &[(u32, i64)], tag: &'static str) -> anyhow::Result<Dealer> {
    let preset = pb::TablePreset { game: pb::GamePreset::NoLimitHoldem as i32, small_cents: 100, big_cents: 200, ..Default::default() };
    let change = |config: &mut pb::TableConfig| {
        config.fee = Some(pb::FeePolicy { kind: Some(pb::fee_policy::Kind::NoFee(pb::NoFee {})) });
        if let Some(buy_in) = config.buy_in.as_mut() {
            buy_in.min_cents = 100;
            buy_in.max_cents = 100_000;
        }
        change(config);
    };
    table_with(server, preset, change, stacks, tag).await
}

pub(crate) fn seat_view(view: &pb::TableView, seat: u32) -> pb::SeatView {
    view.seats.iter().find(|s| s.seat == seat).cloned().expect("seat is occupied")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_2_r_post_3_blinds_in_position_and_missed_blinds_of_a_seat_left_out() -> anyhow::Result<()> {
    let server = TestServer::start("seeds-blinds").await?;
    let stacks: Vec<(u32, i64)> = (1..=4).map(|s| (s, 10_000)).collect();
    let mut d = nlhe_with(&server, |c| c.button_policy = pb::ButtonPolicy::Moving as i32, &stacks, "blinds").await?;
    // Hand 1, button 4: a small blind from the button and a second big blind are refused.
    d.start(1, 4, &[1, 2, 3, 4]).await?;
    assert_eq!(refused(d.post(4, pb::PostKind::SmallBlind, 100).await), ("BLIND_OUT_OF_POSITION".into(), "R-POST-2".into()));
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    assert_eq!(refused(d.post(3, pb::PostKind::BigBlind, 200).await).0, "BLIND_OUT_OF_POSITION");
    d.fold_round().await?;
    d.end().await?;
    // Hands 2 and 3 are dealt without seat 3 (no SitOut): both blinds pass it.
    d.start(2, 1, &[1, 2, 4]).await?;
    let view = table_view(&mut d.client, TABLE).await?;
    assert_eq!(seat_view(&view, 3).status, pb::SeatStatus::SittingOut as i32, "absent from the hand in play");
    d.post(2, pb::PostKind::SmallBlind, 100).await?;
    d.post(4, pb::PostKind::BigBlind, 200).await?;
    d.fold_round().await?;
    d.end().await?;
    d.start(3, 2, &[1, 2, 4]).await?;
    d.post(4, pb::PostKind::SmallBlind, 100).await?;
    d.post(1, pb::PostKind::BigBlind, 200).await?;
    d.fold_round().await?;
    d.end().await?;
    let view = table_view(&mut d.client, TABLE).await?;
    let seat3 = seat_view(&view, 3);
    assert!(seat3.missed_blinds && seat3.missed_big_blind && seat3.missed_small_blind, "{seat3:?}");
    // Back in hand 4 under the seeds' moving button: the button moves on from seat 2 to seat 3
    // (button 4 is BUTTON_OUT_OF_TURN), the blinds are 4 and 1, and seat 3 pays one missed
    // blind a hand, biggest first, live, before anyone acts: the big blind now, the small
    // blind in the next hand.
    assert!(d.start(4, 4, &[1, 2, 3, 4]).await.is_err(), "the button moves on to seat 3");
    d.start(4, 3, &[1, 2, 3, 4]).await?;
    d.post(4, pb::PostKind::SmallBlind, 100).await?;
    d.post(1, pb::PostKind::BigBlind, 200).await?;
    assert_eq!(refused(d.act(2, pb::ActionKind::Call, 0).await), ("BLINDS_NOT_POSTED".into(), "R-POST-2".into()));
    assert_eq!(refused(d.post(3, pb::PostKind::MissedSmallBlindDead, 100).await).0, "POST_NOT_CONFIGURED");
    assert_eq!(refused(d.post(3, pb::PostKind::MissedSmallBlind, 100).await), ("ONE_MISSED_BLIND_PER_HAND".into(), "R-POST-3".into()));
    d.post(3, pb::PostKind::MissedBigBlind, 200).await?;
    d.act(2, pb::ActionKind::Fold, 0).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.can_check), (3, true), "the missed big blind is live: {legal:?}");
    let view = table_view(&mut d.client, TABLE).await?;
    let seat3 = seat_view(&view, 3);
    assert!(!seat3.missed_big_blind && seat3.missed_small_blind, "the small blind is owed in the next hand: {seat3:?}");
    assert_eq!(stack(&view, 3), 10_000 - 200);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_4_seeds_straddle_house_rule_and_sleeper() -> anyhow::Result<()> {
    let server = TestServer::start("seeds-straddle").await?;
    let stacks: Vec<(u32, i64)> = (1..=5).map(|s| (s, 20_000)).collect();
    let mut d = nlhe_with(
        &server,
        |c| {
            c.straddle = pb::StraddlePolicy::UnderTheGun as i32;
            c.straddle_raise = pb::StraddleRaise::DifferenceOverBigBlind as i32;
            c.sleeper_allowed = true;
        },
        &stacks,
        "straddle",
    )
    .await?;
    // The seeds' house rule at $1/$2 with a $4 straddle: the next raise is $2 more, to $6 (a
    // full straddle would be to $8).
    d.start(1, 5, &[1, 2, 3, 4, 5]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    d.post(3, pb::PostKind::Straddle, 400).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.raise.map(|r| r.min_to_cents)), (4, Some(600)), "{legal:?}");
    d.fold_round().await?;
    d.end().await?;
    // The sleeper (Kazakh seed) in hand 2: button 1, blinds 2 and 3, under the gun 4; seat 5
    // posts a $4 sleeper. It only raises the amount to call.
    d.start(2, 1, &[1, 2, 3, 4, 5]).await?;
    d.post(2, pb::PostKind::SmallBlind, 100).await?;
    d.post(3, pb::PostKind::BigBlind, 200).await?;
    assert_eq!(refused(d.post(4, pb::PostKind::Sleeper, 400).await).0, "SLEEPER_OUT_OF_POSITION");
    d.post(5, pb::PostKind::Sleeper, 400).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.call_cents), (4, 400), "under the gun faces the sleeper: {legal:?}");
    d.act(4, pb::ActionKind::Call, 0).await?;
    assert_eq!(d.legal().await?.seat, 1, "the sleeper has no option and is skipped");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_post_5_stud_bring_in_and_first_to_act_from_the_up_cards() -> anyhow::Result<()> {
    let server = TestServer::start("seeds-stud").await?;
    let preset = pb::TablePreset {
        game: pb::GamePreset::SevenCardStud as i32,
        small_cents: 500,
        big_cents: 1_000,
        ante_cents: 100,
        bring_in_cents: 200,
    };
    let stacks: Vec<(u32, i64)> = (1..=4).map(|s| (s, 10_000)).collect();
    let mut d = table_with(&server, preset, |_| {}, &stacks, "stud").await?;
    d.start(1, 4, &[1, 2, 3, 4]).await?;
    for seat in 1..=4 {
        d.post(seat, pb::PostKind::Ante, 100).await?;
    }
    assert_eq!(refused(d.up_cards(&[(1, "Kh"), (2, "3d")]).await).0, "UP_CARDS_INCOMPLETE");
    d.up_cards(&[(1, "Kh"), (2, "3d"), (3, "2c"), (4, "9s")]).await?;
    let legal = d.legal().await?;
    assert_eq!((legal.seat, legal.bring_in_cents, legal.can_fold), (3, Some(200), false), "{legal:?}");
    assert_eq!(refused(d.post(2, pb::PostKind::BringIn, 200).await), ("BRING_IN_OUT_OF_POSITION".into(), "R-POST-5".into()));
    // The low card opens for a full bet instead of bringing it in.
    d.act(3, pb::ActionKind::Bet, 500).await?;
    for seat in [4, 1, 2] {
        d.act(seat, pb::ActionKind::Call, 0).await?;
    }
    d.up_cards(&[(1, "Kd"), (2, "7d"), (3, "5s"), (4, "As")]).await?;
    let (code, _) = refused(d.next_round(Some(4)).await);
    assert_eq!(code, "FIRST_TO_ACT_MISMATCH", "the pair of kings showing acts first");
    d.next_round(None).await?;
    assert_eq!(d.legal().await?.seat, 1);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_pot_3_side_pot_paid_at_once_and_r_bet_13_short_call_brought_up() -> anyhow::Result<()> {
    let server = TestServer::start("seeds-pots").await?;
    // R-POT-3 example: antes $1 x 10, blinds $4/$8; Alice (seat 2) has $8.
    let mut stacks: Vec<(u32, i64)> = (1..=10).map(|s| (s, 10_000)).collect();
    stacks[1].1 = 800;
    let mut d = nlhe_with(
        &server,
        |c| {
            c.blinds_cents = vec![400, 800];
            c.min_bet_cents = 800;
            c.ante_cents = 100;
            c.button_policy = pb::ButtonPolicy::Moving as i32;
        },
        &stacks,
        "pots",
    )
    .await?;
    d.start(1, 10, &(1..=10).collect::<Vec<_>>()).await?;
    for seat in 1..=10 {
        d.post(seat, pb::PostKind::Ante, 100).await?;
    }
    d.post(1, pb::PostKind::SmallBlind, 400).await?;
    d.post(2, pb::PostKind::BigBlind, 700).await?; // Alice: all in for $7 of the big blind
    d.act(3, pb::ActionKind::Call, 0).await?; // Dianne calls $8
    d.act(4, pb::ActionKind::Raise, 1_600).await?; // Carol raises to $16
    for seat in [5, 6, 7, 8, 9, 10, 1] {
        d.act(seat, pb::ActionKind::Fold, 0).await?;
    }
    d.act(3, pb::ActionKind::Fold, 0).await?; // Dianne folds: the side pot is Carol's at once
    let view = table_view(&mut d.client, TABLE).await?;
    assert_eq!(stack(&view, 4), 10_000 - 1_700 + 1_000, "Carol has the $10 side pot before the showdown");
    assert_eq!(view.pot_total_cents, 3_500, "the main pot of $35 waits");
    for _ in 0..3 {
        d.next_round(None).await?;
    }
    d.showdown(&[&[2], &[4]], None).await?;
    assert_eq!(stack(&table_view(&mut d.client, TABLE).await?, 2), 3_500);
    d.end().await?;

    // R-BET-13: a short call cannot be left unpaid when the round closes. Alice (seat 2) is
    // left out. The seeds' moving button moves on to seat 1, the blinds to positions 3 and 4:
    // Dianne (seat 3) was due the big blind, pays it ($8 live) and no small blind is posted;
    // Carol (seat 4) posts the big blind.
    d.start(2, 1, &[1, 3, 4]).await?;
    for seat in [1, 3, 4] {
        d.post(seat, pb::PostKind::Ante, 100).await?;
    }
    d.post(3, pb::PostKind::MissedBigBlind, 800).await?;
    d.post(4, pb::PostKind::BigBlind, 800).await?;
    // Seat 1, on the button, says "call" ($8) and puts out one $5 chip.
    let call_short = |header| pb::PutOutChips {
        header,
        table_id: TABLE.into(),
        seat: 1,
        chips: vec![chips(500, 1)],
        declared_kind: Some(pb::ActionKind::Call as i32),
        declared_to_cents: 0,
    };
    let header = d.id();
    d.client.table.put_out_chips(call_short(header)).await?;
    // The Russian seed: unaware of a bet the dealer did not announce, the player may take it
    // back while it is the last action; the $5 return and seat 1 acts again. It calls short
    // again.
    let before = stack(&table_view(&mut d.client, TABLE).await?, 1);
    let header = d.id();
    d.client.table.take_back_short_call(pb::TakeBackShortCall { header, table_id: TABLE.into(), seat: 1 }).await?;
    assert_eq!(stack(&table_view(&mut d.client, TABLE).await?, 1), before + 500);
    let header = d.id();
    let again = d.client.table.take_back_short_call(pb::TakeBackShortCall { header, table_id: TABLE.into(), seat: 1 }).await;
    assert_eq!(refused(again), ("NO_SHORT_BET".into(), "R-BET-13".into()));
    let header = d.id();
    d.client.table.put_out_chips(call_short(header)).await?;
    d.act(3, pb::ActionKind::Check, 0).await?;
    d.act(4, pb::ActionKind::Check, 0).await?;
    assert_eq!(refused(d.next_round(None).await), ("SHORT_BET_NOT_BROUGHT_UP".into(), "R-BET-13".into()));
    let header = d.id();
    d.client.table.bring_up_short_bet(pb::BringUpShortBet { header, table_id: TABLE.into(), seat: 1 }).await?;
    d.next_round(None).await?;
    assert_eq!(stack(&table_view(&mut d.client, TABLE).await?, 1), 10_000 - 500 - 900, "hand 1: ante and small blind; hand 2: ante and the whole call");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_unit_2_tip_chips_never_play_whatever_their_number() -> anyhow::Result<()> {
    // Russian seed / the issue: ten $5 chips at a $25-minimum table are not a $50 bet.
    let server = TestServer::start("seeds-tips").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    scenario::open_cage(&mut cage).await?;
    // The configuration: the NLHE preset's, read back from a first table, with $5 chips that
    // do not play ($25 is the minimum playable chip), blinds $25/$50, no rake.
    scenario::open_nlhe_table(&mut floor, "T0").await?;
    let mut config = table_view(&mut floor, "T0").await?.config.expect("configuration");
    config.chip_set = Some(pb::ChipSet { denominations_cents: vec![500, 2_500, 10_000], min_playable_chip_cents: 2_500 });
    config.blinds_cents = vec![2_500, 5_000];
    config.min_bet_cents = 5_000;
    config.fee = Some(pb::FeePolicy { kind: Some(pb::fee_policy::Kind::NoFee(pb::NoFee {})) });
    if let Some(buy_in) = config.buy_in.as_mut() {
        (buy_in.min_cents, buy_in.max_cents) = (100_000, 1_000_000);
    }
    let configuration = Some(pb::open_table::Configuration::Config(config));
    floor.table.open_table(pb::OpenTable { header: header("open-T1"), table_id: TABLE.into(), configuration }).await?;
    let fill = pb::Fill {
        header: header("fill-T1"),
        table_id: TABLE.into(),
        cage_id: scenario::CAGE.into(),
        slip_no: 1,
        chips: vec![chips(500, 100), chips(2_500, 200)],
        signer_1: "carl-cage".into(),
        signer_2: "fred-floor".into(),
    };
    // Signed by the cage (the caller) and the floor (by approval, R-CHIP-3).
    cage.cage.fill(chipledger_tests::approved(fill, &mut [&mut floor]).await?).await?;
    for seat in 1..=3 {
        let player = format!("P{seat}");
        scenario::seat(&mut dealer, TABLE, seat, &player).await?;
        dealer.table.buy_in(cash_buy_in(&format!("buy-{player}"), TABLE, seat, &player, 100_000)).await?;
    }
    let mut d = Dealer { client: dealer, tag: "tips", next: 0 };
    d.start(1, 3, &[1, 2, 3]).await?;
    d.post(1, pb::PostKind::SmallBlind, 2_500).await?;
    d.post(2, pb::PostKind::BigBlind, 5_000).await?;
    let put_out = |header, chips| pb::PutOutChips { header, table_id: TABLE.into(), seat: 3, chips, declared_kind: None, declared_to_cents: 0 };
    let header = d.id();
    let refusal = d.client.table.put_out_chips(put_out(header, vec![chips(500, 10)])).await;
    assert_eq!(refused(refusal), ("TIP_CHIPS_DO_NOT_PLAY".into(), "R-UNIT-2".into()));
    let header = d.id();
    d.client.table.put_out_chips(put_out(header, vec![chips(2_500, 2)])).await?;
    assert_eq!(stack(&table_view(&mut d.client, TABLE).await?, 3), 95_000, "two $25 chips call the $50");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_rake_1_reported_rake_and_r_pot_5_award_by_amount() -> anyhow::Result<()> {
    let server = TestServer::start("seeds-rake").await?;
    let stacks = [(1, 1_000), (2, 10_000), (3, 10_000)];
    let mut d = nlhe_with(
        &server,
        |c| c.fee = Some(pb::FeePolicy { kind: Some(pb::fee_policy::Kind::ReportedRake(pb::ReportedRake { cap_cents: 500, no_flop_no_drop: None })) }),
        &stacks,
        "rake",
    )
    .await?;
    // Seat 1 all in for $10; seats 2 and 3 in for $30: main $30, side $40.
    d.start(1, 3, &[1, 2, 3]).await?;
    d.post(1, pb::PostKind::SmallBlind, 100).await?;
    d.post(2, pb::PostKind::BigBlind, 200).await?;
    d.act(3, pb::ActionKind::Raise, 3_000).await?;
    d.act(1, pb::ActionKind::AllIn, 0).await?;
    d.act(2, pb::ActionKind::Call, 0).await?;
    for _ in 0..3 {
        d.next_round(None).await?;
        d.act(2, pb::ActionKind::Check, 0).await?;
        d.act(3, pb::ActionKind::Check, 0).await?;
    }
    assert_eq!(refused(d.showdown(&[&[2]], Some(600)).await), ("RAKE_ABOVE_LIMIT".into(), "R-RAKE-1".into()));
    // The cards are unknown to the room's record: the dealer awards by amount.
    let award = |header, awards: Vec<(u32, i64)>, rake_cents| pb::AwardPots {
        header,
        table_id: TABLE.into(),
        awards: awards.into_iter().map(|(seat, amount_cents)| pb::SeatAward { seat, amount_cents }).collect(),
        rake_cents,
    };
    let header = d.id();
    assert_eq!(refused(d.client.table.award_pots(award(header, vec![(1, 7_000)], None)).await).0, "AWARD_NOT_ELIGIBLE");
    let header = d.id();
    d.client.table.award_pots(award(header, vec![(1, 3_000), (3, 3_800)], Some(200))).await?;
    let view = table_view(&mut d.client, TABLE).await?;
    assert_eq!((stack(&view, 1), stack(&view, 2), stack(&view, 3)), (3_000, 7_000, 10_800));
    assert_eq!(view.rake_cents, 200, "the room's rake, as reported");
    server.stop().await
}
