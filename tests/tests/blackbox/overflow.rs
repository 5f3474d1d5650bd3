//! Checked arithmetic as a client sees it (R-UNIT-1): counts and amounts that would overflow
//! a 64-bit sum, or pass the largest amount the ledger takes, are refused with a typed reason
//! naming the rule and move nothing; the service keeps serving and the log still verifies.

use chipledger_proto::v1 as pb;
use chipledger_tests::{Client, TestServer, approved, chips, error_info, header, principal};
use tonic::Code;
use tonic_types::StatusExt;

use crate::scenario::{self, CAGE, TABLE, balance, cash_buy_in, stack, table_view};

/// The refusal of an amount too large: reason, rule and status code of the answer.
fn too_large<T: std::fmt::Debug>(what: &str, result: Result<T, tonic::Status>) {
    let status = result.expect_err(what);
    assert!(matches!(status.code(), Code::FailedPrecondition | Code::InvalidArgument), "{what}: {status:?}");
    let info = error_info(&status);
    assert_eq!((info.reason.as_str(), info.metadata.get("rule_id").map(String::as_str)), ("AMOUNT_TOO_LARGE", Some("R-UNIT-1")), "{what}: {status:?}");
}

/// Everything a refusal must leave as it was: the cage's chips and cash, the tray, seat 1.
async fn books(auditor: &mut Client) -> anyhow::Result<(i64, i64, Vec<pb::ChipCount>, i64)> {
    let view = table_view(auditor, TABLE).await?;
    let mut cage_chips = 0;
    for denomination in [100, 500, 2_500, 10_000] {
        cage_chips += balance(auditor, &format!("cage/{CAGE}/chips/{denomination}")).await?;
    }
    let cage_cash = balance(auditor, &format!("cage/{CAGE}/cash")).await?;
    let seat_1 = stack(&view, 1);
    Ok((cage_chips, cage_cash, view.tray, seat_1))
}

/// A fill of `chips` on slip `slip_no`, signed by the cage (the caller) and the floor.
async fn fill(floor: &mut Client, slip_no: u64, chips: Vec<pb::ChipCount>) -> anyhow::Result<pb::Fill> {
    let fill = pb::Fill {
        header: header(&format!("fill-{slip_no}")),
        table_id: TABLE.into(),
        cage_id: CAGE.into(),
        slip_no,
        chips,
        signer_1: principal::CAGE.0.into(),
        signer_2: principal::FLOOR.0.into(),
    };
    Ok(approved(fill, &mut [floor]).await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overflowing_counts_and_amounts_are_refused_by_rule_and_move_nothing() -> anyhow::Result<()> {
    let server = TestServer::start("overflow").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    scenario::seat(&mut dealer, TABLE, 1, "P1").await?;
    dealer.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 10_000)).await?;
    let before = books(&mut auditor).await?;

    // Counts a JSON reader still takes exactly (below 2^53): $100 x (2^53 - 1) wraps a 64-bit
    // product, $25 x (2^53 - 1) fits in 64 bits but passes the ledger's largest amount.
    let count = (1_i64 << 53) - 1;
    for (slip_no, denomination) in [(2, 10_000), (3, 2_500)] {
        let fill = fill(&mut floor, slip_no, vec![chips(denomination, count)]).await?;
        too_large("fill", cage.cage.fill(fill).await);
    }
    // Two rows that each fit but whose sum overflows.
    let sum = fill(&mut floor, 4, vec![chips(100, count), chips(500, count)]).await?;
    too_large("fill with a sum that overflows", cage.cage.fill(sum).await);

    // A buy-in, a tip and a color change of impossible size.
    too_large("buy-in", dealer.table.buy_in(cash_buy_in("buy-huge", TABLE, 1, "P1", count)).await);
    let tip = pb::Tip { header: header("tip-huge"), table_id: TABLE.into(), seat: 1, amount_cents: count };
    too_large("tip", dealer.table.tip(tip).await);
    let color = pb::ColorChange {
        header: header("color-huge"),
        table_id: TABLE.into(),
        seat: 1,
        give: vec![chips(10_000, count)],
        receive: vec![chips(100, count)],
    };
    too_large("color change", dealer.table.color_change(color).await);

    // A shift close counting more chips than any sum can hold.
    let close = pb::CloseShift {
        header: header("close-huge"),
        table_id: TABLE.into(),
        counted_tray: vec![chips(100, count), chips(10_000, count)],
        counted_drop_cents: Some(10_000),
        signer_1: principal::FLOOR.0.into(),
        signer_2: principal::CAGE.0.into(),
    };
    let close = approved(close, &mut [&mut cage]).await?;
    too_large("shift close", floor.table.close_shift(close).await);

    // Beyond 2^53 an integer is not exact in every JSON reader (I-JSON), so it can be neither
    // judged nor recorded: bad input, with the field named, at the gate: the approver asked to
    // sign such a fill is told so, and so is the cage sending it.
    let named = |status: &tonic::Status| {
        let bad_request = status.get_error_details().bad_request().cloned().expect("a BadRequest");
        (status.code(), bad_request.field_violations.first().map(|violation| violation.field.clone()))
    };
    let beyond = fill(&mut floor, 5, vec![chips(100, i64::MAX)]).await;
    let status = beyond.expect_err("an approval of a count beyond 2^53").downcast::<tonic::Status>()?;
    assert_eq!(named(&status), (Code::InvalidArgument, Some("command.fill.chips[0].count".to_string())), "{status:?}");
    let unsigned = pb::Fill {
        header: header("fill-5"),
        table_id: TABLE.into(),
        cage_id: CAGE.into(),
        slip_no: 5,
        chips: vec![chips(100, i64::MAX)],
        signer_1: principal::CAGE.0.into(),
        signer_2: principal::FLOOR.0.into(),
    };
    let status = cage.cage.fill(unsigned).await.expect_err("a count beyond 2^53");
    assert_eq!(named(&status), (Code::InvalidArgument, Some("chips[0].count".to_string())), "{status:?}");

    // The wrap of the report: rows of 2^63 - 1 chips twice plus the true count plus two, which
    // a wrapping sum would have taken for the true count and two: refused at its first row.
    let view = table_view(&mut auditor, TABLE).await?;
    let true_ones = view.tray.iter().find(|c| c.denomination_cents == 100).map_or(0, |c| c.count);
    let wrapping = pb::CloseShift {
        header: header("close-wrap"),
        table_id: TABLE.into(),
        counted_tray: vec![chips(100, i64::MAX), chips(100, i64::MAX), chips(100, true_ones + 2)],
        counted_drop_cents: Some(10_000),
        signer_1: principal::FLOOR.0.into(),
        signer_2: principal::CAGE.0.into(),
    };
    let status = floor.table.close_shift(wrapping).await.expect_err("a wrapping count");
    assert_eq!(named(&status), (Code::InvalidArgument, Some("counted_tray[0].count".to_string())), "{status:?}");

    // Nothing moved, the service still serves and judges, and the log verifies.
    assert_eq!(books(&mut auditor).await?, before);
    dealer.table.tip(pb::Tip { header: header("tip-ok"), table_id: TABLE.into(), seat: 1, amount_cents: 100 }).await?;
    assert_eq!(stack(&table_view(&mut auditor, TABLE).await?, 1), before.3 - 100);
    let verified = auditor.audit.verify_chain(pb::VerifyChainRequest { projections: true, ..Default::default() }).await?.into_inner();
    assert!(verified.ok, "{verified:?}");
    server.stop().await
}
