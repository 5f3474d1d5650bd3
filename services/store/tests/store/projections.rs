//! Domain inline projections, written in the append statement and refused with it.

use std::sync::Arc;

use chipledger_store::*;
use serde_json::json;

use crate::*;

/// Stands in for the mapping of chipledger_rules events (same trait the real one implements).
struct TestProjection;

impl InlineProjection for TestProjection {
    fn project(&self, _stream: &str, event: &NewEvent, ops: &mut Vec<ProjectionOp>) {
        let player_id = event.payload["player_id"].as_str().unwrap_or("").to_owned();
        let amount_cents = event.payload["amount_cents"].as_i64().unwrap_or(0);
        match event.event_type.as_str() {
            "PlayerSeated" => ops.push(ProjectionOp::Seated { player_id, table_id: "T1".into(), seat: 3, game_key: "NLHE-1-2".into(), at_ms: 1_000 }),
            "PlayerCashedOut" => {
                ops.push(ProjectionOp::Departed { player_id: player_id.clone(), table_id: "T1".into(), game_key: "NLHE-1-2".into(), amount_left_cents: amount_cents, at_ms: 2_000 });
                ops.push(ProjectionOp::Cash { player_id, gaming_day: event.metadata.gaming_day.clone(), cash_in_cents: 0, cash_out_cents: amount_cents });
            }
            "CashBuyIn" => ops.push(ProjectionOp::Cash { player_id, gaming_day: event.metadata.gaming_day.clone(), cash_in_cents: amount_cents, cash_out_cents: 0 }),
            "MarkerIssued" => ops.push(ProjectionOp::Marker { player_id, outstanding_delta_cents: amount_cents }),
            _ => {}
        }
    }
}

fn domain_event(event_type: &str, player_id: &str, amount_cents: i64, postings: Vec<NewPosting>) -> NewEvent {
    NewEvent {
        payload: json!({"player_id": player_id, "amount_cents": amount_cents}),
        postings,
        ..movement(event_type, "-", "-", 0, event_type)
    }
}

fn posting(account: &str, amount_cents: i64) -> NewPosting {
    NewPosting { account: account.into(), amount_cents }
}

#[tokio::test]
async fn sessions_departures_daily_cash_stacks_and_tray_follow_the_events() -> anyhow::Result<()> {
    let db = fresh("projections").await?;
    let store = db.store.clone().with_projection(Arc::new(TestProjection));
    let events = vec![
        domain_event("TrayFilled", "-", 0, vec![posting("table/T1/tray/500", 30_000), posting("table/T1/tray/100", 10_000), posting("cage/MAIN/chips/500", -40_000)]),
        domain_event("PlayerSeated", "P7", 0, vec![]),
        domain_event("CashBuyIn", "P7", 20_000, vec![posting("table/T1/drop", 20_000), posting("house/cash-in", -20_000)]),
        domain_event("ChipsToSeat", "P7", 20_000, vec![posting("table/T1/tray/500", -20_000), posting("table/T1/seat/3", 20_000)]),
    ];
    store.append(&one_stream("table-T1", ExpectedVersion::NoStream, events)).await?;
    assert_eq!(store.player_session(PROPERTY, "P7").await?.and_then(|s| s.seat), Some(3));
    assert_eq!(store.seat_stacks(PROPERTY, "T1").await?, vec![(3, 20_000)]);
    assert_eq!(store.tray_inventory(PROPERTY, "T1").await?, vec![(100, 10_000), (500, 10_000)]);

    let cash_out = domain_event("PlayerCashedOut", "P7", 35_000, vec![]);
    let mut request = one_stream("table-T1", ExpectedVersion::Exact(4), vec![cash_out]);
    request.projection_ops.push(ProjectionOp::Cash { player_id: "P7".into(), gaming_day: "2026-03-14".into(), cash_in_cents: 5_000, cash_out_cents: 0 });
    store.append(&request).await?;
    let departure = store.departure(PROPERTY, "P7", "NLHE-1-2").await?.expect("departed");
    assert_eq!((departure.amount_left_cents, departure.departed_at_ms), (35_000, 2_000));
    assert_eq!(store.player_session(PROPERTY, "P7").await?.and_then(|s| s.table_id), None);
    // R-AUDIT-4: in and out summed separately, never netted.
    assert_eq!(store.daily_cash(PROPERTY, "P7", "2026-03-14").await?, DailyCash { cash_in_cents: 25_000, cash_out_cents: 35_000 });
    Ok(())
}

#[tokio::test]
async fn r_mark_1_markers_above_the_credit_line_are_refused_with_the_append() -> anyhow::Result<()> {
    let db = fresh("projections_markers").await?;
    let store = db.store.clone().with_projection(Arc::new(TestProjection));
    let mut request = one_stream("player-P7", ExpectedVersion::NoStream, vec![domain_event("CreditApproved", "P7", 0, vec![])]);
    request.projection_ops.push(ProjectionOp::CreditLimit { player_id: "P7".into(), limit_cents: 100_000 });
    store.append(&request).await?;
    let issue = |version: i64, amount_cents: i64| {
        let postings = vec![posting("player/P7/pocket", amount_cents), posting("cage/MAIN/markers", -amount_cents)];
        one_stream("player-P7", ExpectedVersion::Exact(version), vec![domain_event("MarkerIssued", "P7", amount_cents, postings)])
    };
    store.append(&issue(1, 60_000)).await?;
    let error = store.append(&issue(2, 50_000)).await.unwrap_err();
    assert!(matches!(&error, StoreError::ProjectionRefused { constraint } if constraint == "credit_lines_within_limit"), "{error:?}");
    assert_eq!(store.credit_line(PROPERTY, "P7").await?, CreditLine { limit_cents: 100_000, outstanding_cents: 60_000 });
    assert_eq!(store.read_all(PROPERTY, 0, 10).await?.len(), 2, "the refused marker wrote no event");
    assert_eq!(store.projected_balance(PROPERTY, "player/P7/pocket").await?, 60_000);
    Ok(())
}

/// The projection of the rules crate's own player events (R-REBUY-1 input, R-AUDIT-4, R-MARK-1).
#[tokio::test]
async fn rules_player_events_feed_departures_cash_and_markers() -> anyhow::Result<()> {
    use chipledger_rules::{CageId, CashDirection, PlayerEvent, TableId};
    let db = fresh("projections_rules").await?;
    let store = db.store.clone().with_projection(Arc::new(RulesProjection));
    let table_id = TableId::new("T1").map_err(|r| anyhow::anyhow!("{r:?}"))?;
    let cage_id = CageId::new("MAIN").map_err(|r| anyhow::anyhow!("{r:?}"))?;
    let player_events = [
        PlayerEvent::CreditLineSet { line_cents: 50_000, approved_by: "manager-1".into() },
        PlayerEvent::JoinedTable { table_id: table_id.clone(), seat: 4, game_key: "NLHE-1-2".into(), amount_cents: 20_000 },
        PlayerEvent::CashTransaction { gaming_day: "2026-03-14".into(), direction: CashDirection::In, amount_cents: 20_000, mtl_entry: false, ctr_required: false, day_total_cents: 20_000 },
        PlayerEvent::MarkerIssued { cage_id: cage_id.clone(), marker_no: 1, amount_cents: 30_000, issued_by: "cage-2".into(), to_pocket: true },
        PlayerEvent::MarkerRedeemed { cage_id, marker_no: 1, amount_cents: 10_000 },
        PlayerEvent::LeftTable { table_id, seat: 4, game_key: "NLHE-1-2".into(), amount_cents: 31_500, at_unix_ms: 1_773_500_000_000 },
    ];
    let events = player_events
        .iter()
        .map(|e| Ok(NewEvent { event_type: e.event_type().into(), payload: serde_json::to_value(e)?, postings: vec![], ..movement("-", "-", "-", 0, "c") }))
        .collect::<anyhow::Result<Vec<_>>>()?;
    store.append(&one_stream("player-P7", ExpectedVersion::NoStream, events)).await?;
    let departure = store.departure(PROPERTY, "P7", "NLHE-1-2").await?.expect("departed");
    assert_eq!((departure.table_id.as_str(), departure.amount_left_cents), ("T1", 31_500));
    assert_eq!(store.daily_cash(PROPERTY, "P7", "2026-03-14").await?, DailyCash { cash_in_cents: 20_000, cash_out_cents: 0 });
    assert_eq!(store.credit_line(PROPERTY, "P7").await?, CreditLine { limit_cents: 50_000, outstanding_cents: 20_000 });
    assert_eq!(store.player_session(PROPERTY, "P7").await?.and_then(|s| s.table_id), None);
    Ok(())
}
