//! The cage's rules of RULES.md section 8 and 9 over gRPC: markers against an approved credit
//! line, numbered, redeemed in part and written off by an independent approver (R-MARK-1), and
//! chip liability per denomination at the gaming-day close (R-CHIP-5). Amounts are cents.

use chipledger_proto::v1 as pb;
use chipledger_tests::{Client, TestServer, all_events, approved, chips, error_info, header, principal};
use tonic::Code;

use crate::scenario::{self, CAGE, balance};
use crate::seeds_hand::refused_at;

fn marker(command_id: &str, marker_no: u64, hundreds: i64) -> pb::IssueMarker {
    pb::IssueMarker {
        header: header(command_id),
        cage_id: CAGE.into(),
        player_id: "P9".into(),
        marker_no,
        chips: vec![chips(10_000, hundreds)],
        approved_by: principal::FLOOR.0.into(),
        delivery: Some(pb::issue_marker::Delivery::ToPocket(true)),
    }
}

async fn issue(cage: &mut Client, floor: &mut Client, marker: pb::IssueMarker) -> Result<tonic::Response<pb::CommandResult>, tonic::Status> {
    let marker = approved(marker, &mut [floor]).await?;
    cage.cage.issue_marker(marker).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_mark_1_markers_against_the_credit_line_numbered_redeemed_in_part_and_written_off_by_an_independent_approver() -> anyhow::Result<()> {
    let server = TestServer::start("ex-mark-1").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut admin = server.client(principal::ADMIN).await?;
    let mut cfo = server.client(principal::ADMIN_2).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::open_cage(&mut cage).await?;
    // No credit line yet: no marker.
    assert_eq!(refused_at(issue(&mut cage, &mut floor, marker("m-none", 1, 10)).await, "available_cents").0, "CREDIT_LINE_EXCEEDED");
    // A $5,000 line, approved by a second admin.
    let line = pb::SetCreditLine { header: header("line"), player_id: "P9".into(), line_cents: 500_000, approved_by: principal::ADMIN_2.0.into() };
    admin.cage.set_credit_line(approved(line, &mut [&mut cfo]).await?).await?;
    // Marker 1: $3,000 in $100 chips to the pocket; the receivable is $3,000.
    issue(&mut cage, &mut floor, marker("m-1", 1, 30)).await?;
    assert_eq!(balance(&mut auditor, &format!("cage/{CAGE}/markers")).await?, 300_000);
    assert_eq!(balance(&mut auditor, "player/P9/pocket").await?, 300_000);
    // Numbered in sequence: 3 before 2 is refused; $2,500 is more than the $2,000 available.
    assert_eq!(refused_at(issue(&mut cage, &mut floor, marker("m-3", 3, 10)).await, "expected_marker_no").0, "MARKER_OUT_OF_SEQUENCE");
    let (reason, rule, _) = refused_at(issue(&mut cage, &mut floor, marker("m-2-big", 2, 25)).await, "available_cents");
    assert_eq!((reason.as_str(), rule.as_str()), ("CREDIT_LINE_EXCEEDED", "R-MARK-1"));
    issue(&mut cage, &mut floor, marker("m-2", 2, 20)).await?;
    // Redeemed in part: $1,000 of marker 1; not more than is owed on it.
    let redeem = |command_id: &str, amount_cents| pb::RedeemMarker { header: header(command_id), cage_id: CAGE.into(), player_id: "P9".into(), marker_no: 1, amount_cents };
    cage.cage.redeem_marker(redeem("r-1", 100_000)).await?;
    assert_eq!(refused_at(cage.cage.redeem_marker(redeem("r-2", 300_000)).await, "amount_cents").0, "MARKER_REDEEM_EXCEEDS");
    assert_eq!(balance(&mut auditor, &format!("cage/{CAGE}/markers")).await?, 200_000 + 200_000);
    // Written off only with an independent approver: the caller's own name is no approval.
    let write_off = |command_id: &str, approved_by: &str| pb::WriteOffMarker {
        header: header(command_id),
        cage_id: CAGE.into(),
        player_id: "P9".into(),
        marker_no: 1,
        approved_by: approved_by.into(),
    };
    let own = admin.cage.write_off_marker(write_off("w-own", principal::ADMIN.0)).await.expect_err("self-approved");
    assert_eq!(own.code(), Code::PermissionDenied, "{own:?}");
    admin.cage.write_off_marker(approved(write_off("w-1", principal::ADMIN_2.0), &mut [&mut cfo]).await?).await?;
    assert_eq!(balance(&mut auditor, &format!("cage/{CAGE}/markers")).await?, 200_000, "marker 2 is still owed");
    // The line cut to $1,000, then suspended, while $2,000 is owed (the insiders' pass: INTERNAL,
    // kept nowhere): recorded; what is owed stays owed, and no marker is issued against it.
    for (command_id, line_cents) in [("cut", 100_000), ("suspend", 0)] {
        let cut = pb::SetCreditLine { header: header(command_id), player_id: "P9".into(), line_cents, approved_by: principal::ADMIN_2.0.into() };
        admin.cage.set_credit_line(approved(cut, &mut [&mut cfo]).await?).await?;
    }
    let (reason, rule, available) = refused_at(issue(&mut cage, &mut floor, marker("m-3-after-cut", 3, 1)).await, "available_credit_cents");
    assert_eq!((reason.as_str(), rule.as_str(), available), ("CREDIT_LINE_EXCEEDED", "R-MARK-1", Some(-200_000)));
    assert_eq!(balance(&mut auditor, &format!("cage/{CAGE}/markers")).await?, 200_000, "marker 2 is owed still");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_5_chip_liability_per_denomination_is_chips_issued_less_chips_returned_at_the_day_close() -> anyhow::Result<()> {
    let server = TestServer::start("ex-chip-5").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::open_cage(&mut cage).await?;
    // P8 buys $500 in $100 chips and $50 in $5 chips, then cashes $200 of the $100s at the cage.
    let sell = pb::SellChips { header: header("sell"), cage_id: CAGE.into(), player_id: "P8".into(), chips: vec![chips(10_000, 5), chips(500, 10)], supervisor_id: None };
    cage.cage.sell_chips(sell).await?;
    let redeem = pb::RedeemChips { header: header("redeem"), cage_id: CAGE.into(), player_id: "P8".into(), chips: vec![chips(10_000, 2)] };
    cage.cage.redeem_chips(redeem).await?;
    // The pocket (the chips off the table the patron holds, by value) bounds what is cashed.
    let too_many = pb::RedeemChips { header: header("redeem-more"), cage_id: CAGE.into(), player_id: "P8".into(), chips: vec![chips(10_000, 4)] };
    let (reason, _, pocket) = refused_at(cage.cage.redeem_chips(too_many).await, "pocket_cents");
    assert_eq!((reason.as_str(), pocket), ("POCKET_INSUFFICIENT", Some(35_000)));
    cage.cage.close_gaming_day(pb::CloseGamingDay { header: header("close-day"), cage_id: CAGE.into() }).await?;
    let events = all_events(&mut auditor, pb::EventFilter::default()).await?;
    let gaming_day = events.last().and_then(|e| e.metadata.as_ref()).map(|m| m.gaming_day.clone()).expect("a gaming day");
    // R-CHIP-5: the day is closed once; a second close would count its liability twice.
    let again = cage.cage.close_gaming_day(pb::CloseGamingDay { header: header("close-day-again"), cage_id: CAGE.into() }).await.unwrap_err();
    assert_eq!((again.code(), error_info(&again).reason.as_str()), (tonic::Code::FailedPrecondition, "DAY_ALREADY_CLOSED"), "{again:?}");
    assert_eq!(error_info(&again).metadata.get("rule_id").map(String::as_str), Some("R-CHIP-5"));
    let day = auditor
        .audit
        .gaming_day_reconciliation(pb::GamingDayReconciliationRequest { property_id: String::new(), gaming_day: gaming_day.clone() })
        .await?
        .into_inner();
    assert_eq!(day.closed_cage_streams, ["cage-MAIN"]);
    // A day no cage closed says so rather than showing a liability of zero.
    let unclosed = auditor
        .audit
        .gaming_day_reconciliation(pb::GamingDayReconciliationRequest { property_id: String::new(), gaming_day: "2001-01-01".into() })
        .await?
        .into_inner();
    assert!(unclosed.closed_cage_streams.is_empty() && unclosed.chip_liability_cents == 0, "{unclosed:?}");
    // A gaming day is a date of the calendar within years 1900 to 9000.
    for bad in ["2026-02-30", "9999-12-31", "0001-01-01", "yesterday"] {
        let status = auditor
            .audit
            .gaming_day_reconciliation(pb::GamingDayReconciliationRequest { property_id: String::new(), gaming_day: bad.into() })
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{bad}: {status:?}");
    }
    let nonzero = |counts: &[pb::ChipCount]| counts.iter().filter(|c| c.count != 0).cloned().collect::<Vec<_>>();
    assert_eq!(nonzero(&day.chips_issued), [chips(500, 10), chips(10_000, 5)]);
    assert_eq!(nonzero(&day.chips_returned), [chips(10_000, 2)]);
    assert_eq!(day.chip_liability_cents, 5_000 + 30_000, "ten $5 and three $100 chips outstanding");
    assert_eq!(balance(&mut auditor, "player/P8/pocket").await?, 35_000);
    assert_eq!(day.sum_of_balances_cents, 0);
    server.stop().await
}
