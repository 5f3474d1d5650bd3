//! Domain inline projections, written in the append statement and refused with it.

use std::sync::Arc;

use chipledger_store::*;
use serde_json::json;

use crate::*;

/// Stands in for the mapping of chipledger_rules events (same trait the real one implements).
struct TestProjection;

impl InlineProjection for TestProjection {
    fn project(&self, _stream: &str, event: &NewEvent, ops: &mut Vec<ProjectionOp>) {
        let player_id = event.payload.value()["player_id"].as_str().unwrap_or("").to_owned();
        let amount_cents = event.payload.value()["amount_cents"].as_i64().unwrap_or(0);
        match event.event_type.as_str() {
            "PlayerSeated" => ops.push(ProjectionOp::Seated {
                player_id,
                table_id: "T1".into(),
                seat: 3,
                game_key: "NLHE-1-2".into(),
                at_ms: Some(1_000),
                event_id: event.event_id,
            }),
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
        payload: json!({"player_id": player_id, "amount_cents": amount_cents}).into(),
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
    let session = store.player_session(PROPERTY, "P7").await?.expect("seated");
    assert_eq!((session.seat, session.seated_at_ms), (Some(3), Some(1_000)), "a time given in the op wins");
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
    // A line cut below what is owed stands (migration 0014); a marker above it is still refused,
    // and what is owed only comes down.
    let mut cut = one_stream("player-P7", ExpectedVersion::Exact(2), vec![domain_event("CreditApproved", "P7", 0, vec![])]);
    cut.projection_ops.push(ProjectionOp::CreditLimit { player_id: "P7".into(), limit_cents: 10_000 });
    store.append(&cut).await?;
    assert_eq!(store.credit_line(PROPERTY, "P7").await?, CreditLine { limit_cents: 10_000, outstanding_cents: 60_000 });
    let error = store.append(&issue(3, 1_000)).await.unwrap_err();
    assert!(matches!(&error, StoreError::ProjectionRefused { constraint } if constraint == "credit_lines_within_limit"), "{error:?}");
    let mut redeemed = one_stream("player-P7", ExpectedVersion::Exact(3), vec![domain_event("MarkerRedeemed", "P7", 0, vec![])]);
    redeemed.projection_ops.push(ProjectionOp::Marker { player_id: "P7".into(), outstanding_delta_cents: -20_000 });
    store.append(&redeemed).await?;
    assert_eq!(store.credit_line(PROPERTY, "P7").await?, CreditLine { limit_cents: 10_000, outstanding_cents: 40_000 });
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
        PlayerEvent::MarkerIssued { cage_id: cage_id.clone(), marker_no: 1, amount_cents: 30_000, issued_by: "cage-2".into(), to_pocket: true, approved_by: "floor-1".into() },
        PlayerEvent::MarkerRedeemed { cage_id, marker_no: 1, amount_cents: 10_000 },
        PlayerEvent::LeftTable { table_id, seat: 4, game_key: "NLHE-1-2".into(), amount_cents: 31_500, at_unix_ms: 1_773_500_000_000, wait: None, taken_off_cents: 0 },
    ];
    let events = player_events
        .iter()
        .map(|e| Ok(NewEvent { event_type: e.event_type().into(), payload: EventJson::of(e)?, postings: vec![], ..movement("-", "-", "-", 0, "c") }))
        .collect::<anyhow::Result<Vec<_>>>()?;
    store.append(&one_stream("player-P7", ExpectedVersion::NoStream, events)).await?;
    let departure = store.departure(PROPERTY, "P7", "NLHE-1-2").await?.expect("departed");
    assert_eq!((departure.table_id.as_str(), departure.amount_left_cents), ("T1", 31_500));
    assert_eq!(store.daily_cash(PROPERTY, "P7", "2026-03-14").await?, DailyCash { cash_in_cents: 20_000, cash_out_cents: 0 });
    assert_eq!(store.credit_line(PROPERTY, "P7").await?, CreditLine { limit_cents: 50_000, outstanding_cents: 20_000 });
    assert_eq!(store.player_session(PROPERTY, "P7").await?.and_then(|s| s.table_id), None);
    Ok(())
}

fn rules_event(event: &chipledger_rules::PlayerEvent) -> anyhow::Result<NewEvent> {
    Ok(NewEvent { event_type: event.event_type().into(), payload: EventJson::of(event)?, postings: vec![], ..movement("-", "-", "-", 0, "c") })
}

fn table(id: &str) -> anyhow::Result<chipledger_rules::TableId> {
    chipledger_rules::TableId::new(id).map_err(|r| anyhow::anyhow!("{r:?}"))
}

/// What the rules' re-buy check reads for a game: the most recent departure still held.
fn rules_departure(state: &chipledger_rules::PlayerState, game_key: &str) -> Option<Departure> {
    state.departures.iter().rev().find(|d| d.game_key == game_key).map(|d| Departure {
        table_id: d.table_id.as_str().to_owned(),
        amount_left_cents: d.amount_cents,
        departed_at_ms: d.at_unix_ms,
    })
}

/// R-REBUY-1 + R-AUDIT-1: after every event (departures, corrections, more departures than the
/// rules keep), the projection answers exactly what the rules state answers, for every game.
#[tokio::test]
async fn r_rebuy_1_departures_projection_equals_the_rules_state_through_corrections() -> anyhow::Result<()> {
    use chipledger_rules::{PlayerEvent, PlayerReversal, PlayerState};
    let db = fresh("projections_departures").await?;
    let store = db.store.clone().with_projection(Arc::new(RulesProjection));
    let left = |table_id: &str, game_key: &str, amount_cents: i64, at_unix_ms: i64| -> anyhow::Result<PlayerEvent> {
        Ok(PlayerEvent::LeftTable { table_id: table(table_id)?, seat: 2, game_key: game_key.into(), amount_cents, at_unix_ms, wait: None, taken_off_cents: 0 })
    };
    let reversed = |table_id: &str, at_unix_ms: i64| -> anyhow::Result<PlayerEvent> {
        Ok(PlayerEvent::Corrected {
            reverses_event_id: "e-1".into(),
            approved_by: "manager-1".into(),
            reason: "recorded at the wrong table".into(),
            reversal: PlayerReversal::Departure { table_id: table(table_id)?, at_unix_ms },
        })
    };
    let games = ["NLHE-1-2", "PLO-2-5"];
    let mut script = vec![
        left("T1", "NLHE-1-2", 30_000, 1_000)?,
        left("T2", "NLHE-1-2", 45_000, 2_000)?,
        // Taken back: the earlier departure from T1 binds again.
        reversed("T2", 2_000)?,
        // Taken back too: nothing binds.
        reversed("T1", 1_000)?,
        left("T3", "NLHE-1-2", 12_000, 3_000)?,
    ];
    // More departures from another game than the rules keep: the NLHE one falls out of the list.
    for i in 0..chipledger_store::projection::DEPARTURES_KEPT as i64 {
        script.push(left("T4", "PLO-2-5", 1_000 + i, 10_000 + i)?);
    }
    script.push(reversed("T4", 10_000 + chipledger_store::projection::DEPARTURES_KEPT as i64 - 1)?);

    let mut state = PlayerState::new();
    let mut checked_some = 0;
    let mut checked_none = 0;
    for (version, event) in script.iter().enumerate() {
        let expected = if version == 0 { ExpectedVersion::NoStream } else { ExpectedVersion::Exact(version as i64) };
        store.append(&one_stream("player-P9", expected, vec![rules_event(event)?])).await?;
        state = state.evolve(event);
        for game_key in games {
            let projected = store.departure(PROPERTY, "P9", game_key).await?;
            assert_eq!(projected, rules_departure(&state, game_key), "after event {version} ({event:?}), game {game_key}");
            if projected.is_some() { checked_some += 1 } else { checked_none += 1 }
        }
    }
    assert!(checked_some > 0 && checked_none > 0, "the script covers both answers");
    // The steps the task is about, spelled out.
    assert_eq!(script.len(), 5 + 32 + 1);
    assert_eq!(rules_departure(&state, "NLHE-1-2"), None, "evicted by the 32 later departures");
    assert_eq!(store.departure(PROPERTY, "P9", "PLO-2-5").await?.map(|d| d.departed_at_ms), Some(10_030));
    Ok(())
}

/// A departure taken back restores the previous one (checked on its own, with literal numbers).
#[tokio::test]
async fn r_audit_1_a_reversed_departure_gives_way_to_the_previous_one() -> anyhow::Result<()> {
    use chipledger_rules::{PlayerEvent, PlayerReversal};
    let db = fresh("projections_reversal").await?;
    let store = db.store.clone().with_projection(Arc::new(RulesProjection));
    let events = [
        PlayerEvent::LeftTable { table_id: table("T1")?, seat: 1, game_key: "NLHE-1-2".into(), amount_cents: 30_000, at_unix_ms: 1_000, wait: None, taken_off_cents: 0 },
        PlayerEvent::LeftTable { table_id: table("T2")?, seat: 5, game_key: "NLHE-1-2".into(), amount_cents: 45_000, at_unix_ms: 2_000, wait: None, taken_off_cents: 0 },
    ];
    store.append(&one_stream("player-P7", ExpectedVersion::NoStream, events.iter().map(rules_event).collect::<Result<_, _>>()?)).await?;
    assert_eq!(store.departure(PROPERTY, "P7", "NLHE-1-2").await?.map(|d| d.amount_left_cents), Some(45_000));
    let correction = PlayerEvent::Corrected {
        reverses_event_id: "e-2".into(),
        approved_by: "manager-1".into(),
        reason: "wrong table".into(),
        reversal: PlayerReversal::Departure { table_id: table("T2")?, at_unix_ms: 2_000 },
    };
    store.append(&one_stream("player-P7", ExpectedVersion::Exact(2), vec![rules_event(&correction)?])).await?;
    assert_eq!(
        store.departure(PROPERTY, "P7", "NLHE-1-2").await?,
        Some(Departure { table_id: "T1".into(), amount_left_cents: 30_000, departed_at_ms: 1_000 })
    );
    Ok(())
}

/// JoinedTable carries no time: the session's seat time is the event's recorded time.
#[tokio::test]
async fn joined_table_session_is_seated_at_the_events_recorded_time() -> anyhow::Result<()> {
    use chipledger_rules::PlayerEvent;
    let db = fresh("projections_seated_at").await?;
    let store = db.store.clone().with_projection(Arc::new(RulesProjection));
    let joined = PlayerEvent::JoinedTable { table_id: table("T1")?, seat: 4, game_key: "NLHE-1-2".into(), amount_cents: 20_000 };
    let outcome = store.append(&one_stream("player-P7", ExpectedVersion::NoStream, vec![rules_event(&joined)?])).await?;
    let session = store.player_session(PROPERTY, "P7").await?.expect("seated");
    assert_eq!(session.seat, Some(4));
    assert_eq!(session.seated_at_ms, Some(outcome.recorded_at_micros.div_euclid(1_000)));
    assert!(outcome.recorded_at_micros > 1_700_000_000_000_000, "a real time, not 0");
    let recorded = store.read_stream(PROPERTY, "player-P7", 0, 1).await?;
    assert_eq!(session.seated_at_ms, Some((recorded[0].recorded_at.unix_timestamp_nanos() / 1_000_000) as i64));
    Ok(())
}

/// Migration 0003 rebuilds the departures from the log (the rules' LeftTable and Corrected
/// events) on a database an 0002 release filled, and keeps departures no event backs. The 0002
/// database is filled as that release left it, by a superuser: its events (a departure
/// correction the 0002 projection could not apply) and its one-row-per-game departures.
#[tokio::test]
async fn migration_0003_rebuilds_departures_from_the_log() -> anyhow::Result<()> {
    use chipledger_rules::{PlayerEvent, PlayerReversal};
    let server = chipledger_postgres::TestPostgres::shared().await?;
    let admin_url = server.fresh_database("projections_upgrade").await?;
    Store::migrate_to(&admin_url, 2).await?;
    let correction = PlayerEvent::Corrected {
        reverses_event_id: "e-2".into(),
        approved_by: "manager-1".into(),
        reason: "wrong table".into(),
        reversal: PlayerReversal::Departure { table_id: table("T2")?, at_unix_ms: 2_000 },
    };
    let player_events = [
        PlayerEvent::LeftTable { table_id: table("T1")?, seat: 1, game_key: "NLHE-1-2".into(), amount_cents: 30_000, at_unix_ms: 1_000, wait: None, taken_off_cents: 0 },
        PlayerEvent::LeftTable { table_id: table("T2")?, seat: 5, game_key: "NLHE-1-2".into(), amount_cents: 45_000, at_unix_ms: 2_000, wait: None, taken_off_cents: 0 },
        correction,
    ];
    let mut superuser = admin(&admin_url).await?;
    for (index, event) in player_events.iter().enumerate() {
        let event = rules_event(event)?;
        sqlx::query(
            "INSERT INTO events (property, position, stream, stream_version, event_id, event_type, schema_version, \
             payload, metadata, recorded_at, hash) VALUES ($1, $2, 'player-P7', $2, $3, $4, 1, $5, '{}', now(), $6)",
        )
        .bind(PROPERTY)
        .bind(index as i64 + 1)
        .bind(event.event_id)
        .bind(&event.event_type)
        .bind(event.payload.value())
        .bind(vec![0u8; 32])
        .execute(&mut superuser)
        .await?;
    }
    // What the 0002 projection held: the latest departure per game, the correction not applied,
    // and a departure a caller gave directly (no event backs it).
    sqlx::raw_sql(
        "INSERT INTO player_departures VALUES ('casino-1', 'P7', 'NLHE-1-2', 'T2', 45000, 2000), \
                                              ('casino-1', 'P8', 'STUD-5-10', 'T9', 7000, 5000)",
    )
    .execute(&mut superuser)
    .await?;
    Store::set_app_password(&admin_url, APP_PASSWORD).await?;
    let store = Store::connect_with(Store::app_options(&admin_url, APP_PASSWORD)?, 4).await?;

    Store::migrate(&admin_url).await?;
    assert_eq!(
        store.departure(PROPERTY, "P7", "NLHE-1-2").await?,
        Some(Departure { table_id: "T1".into(), amount_left_cents: 30_000, departed_at_ms: 1_000 })
    );
    assert_eq!(
        store.departure(PROPERTY, "P8", "STUD-5-10").await?,
        Some(Departure { table_id: "T9".into(), amount_left_cents: 7_000, departed_at_ms: 5_000 })
    );
    Ok(())
}

/// Reads its op from the event's payload: the test writes the ops themselves as events, so
/// `verify_projections` recomputes them op by op (verify.rs, `Recomputed::apply`: the definition).
struct OpsAsEvents;

impl InlineProjection for OpsAsEvents {
    fn project(&self, _stream: &str, event: &NewEvent, ops: &mut Vec<ProjectionOp>) {
        if let Ok(op) = serde_json::from_str::<ProjectionOp>(event.payload.as_str()) {
            ops.push(op);
        }
    }
}

fn op_event(op: &ProjectionOp) -> anyhow::Result<NewEvent> {
    Ok(NewEvent { payload: EventJson::of(op)?, postings: vec![], ..movement("ProjectionOp", "-", "-", 0, "ops") })
}

/// Table play's ops (seated, departed, cash) in long runs per patron, one append each: the
/// group's ops are applied set-based (sql/fn_chipledger_append.sql, step 5) and must give what
/// the same ops give one after the other: sessions seated and cleared within one group, more
/// departures than are kept (R-REBUY-1's 32), cash in and out with corrections (R-AUDIT-4).
/// The same script once more with a credit line in each append (which sends the group op by op)
/// gives the same rows.
#[tokio::test]
async fn a_groups_table_play_ops_applied_at_once_equal_the_same_ops_one_by_one() -> anyhow::Result<()> {
    // A fixed pseudo-random script: 3 appends of 60 ops over 4 patrons and 2 gaming days.
    let mut seed: u64 = 0x5eed_cafe;
    let mut next = |bound: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % bound
    };
    let mut cash_in: std::collections::BTreeMap<(String, String), i64> = Default::default();
    let mut appends = Vec::new();
    for _ in 0..3 {
        let mut ops = Vec::new();
        for i in 0..60 {
            let player_id = format!("P{}", next(4));
            let gaming_day = format!("2026-03-{}", 14 + next(2));
            let amount = 100 * (1 + next(500) as i64);
            ops.push(match next(5) {
                0 | 1 => ProjectionOp::Seated {
                    player_id,
                    table_id: format!("T{}", next(3)),
                    seat: 1 + next(9) as i32,
                    game_key: "NLHE-1-2".into(),
                    at_ms: (next(2) == 0).then_some(1_000 + i),
                    event_id: uuid::Uuid::new_v4(),
                },
                2 => ProjectionOp::Departed { player_id, table_id: format!("T{}", next(3)), game_key: format!("G{}", next(2)), amount_left_cents: amount, at_ms: 2_000 + i },
                3 => {
                    *cash_in.entry((player_id.clone(), gaming_day.clone())).or_default() += amount;
                    ProjectionOp::Cash { player_id, gaming_day, cash_in_cents: amount, cash_out_cents: amount / 2 }
                }
                _ => {
                    // A correction takes back part of what the day holds (never below zero).
                    let held = cash_in.entry((player_id.clone(), gaming_day.clone())).or_default();
                    let back = *held / 2;
                    *held -= back;
                    ProjectionOp::Cash { player_id, gaming_day, cash_in_cents: -back, cash_out_cents: 0 }
                }
            });
        }
        // One patron leaves more often than the log keeps, within one group.
        for i in 0..40 {
            ops.push(ProjectionOp::Departed { player_id: "P0".into(), table_id: "T9".into(), game_key: "G0".into(), amount_left_cents: 100 + i, at_ms: 5_000 + i });
        }
        appends.push(ops);
    }

    let mut stored = Vec::new();
    for (name, op_by_op) in [("projections_set", false), ("projections_op_by_op", true)] {
        let db = fresh(name).await?;
        // Function calls counted (the sessions opened from now on), to see which path ran.
        let database = db.admin_url.rsplit('/').next().unwrap_or_default().to_owned();
        sqlx::query(sqlx::AssertSqlSafe(format!("ALTER DATABASE \"{database}\" SET track_functions = 'pl'"))).execute(&mut admin(&db.admin_url).await?).await?;
        let store = migrated_store(&db.admin_url).await?.with_projection(Arc::new(OpsAsEvents));
        for (n, ops) in appends.iter().enumerate() {
            let mut ops = ops.clone();
            if op_by_op {
                ops.push(ProjectionOp::CreditLimit { player_id: "P3".into(), limit_cents: 1_000 * (n as i64 + 1) });
            }
            let events = ops.iter().map(op_event).collect::<anyhow::Result<Vec<_>>>()?;
            let expected = if n == 0 { ExpectedVersion::NoStream } else { ExpectedVersion::Exact((n * (ops.len())) as i64) };
            let mut tx = store.begin().await?;
            tx.append(&one_stream("ops", expected, events)).await?;
            let op_by_op_calls: i64 = sqlx::query_scalar("SELECT coalesce(pg_stat_get_xact_function_calls('chipledger_apply_projection_ops'::regproc), 0)")
                .fetch_one(tx.connection())
                .await?;
            tx.commit().await?;
            assert_eq!(op_by_op_calls > 0, op_by_op, "{name}, append {n}: the op-by-op function ran {op_by_op_calls} times");
        }
        let differences = store.verify_projections(PROPERTY, &OpsAsEvents).await?;
        assert!(differences.is_empty(), "{name}: the stored projections differ from the ops one by one: {differences:#?}");
        // The tables themselves, as the owner sees them (the application role reads through functions).
        let admin = sqlx::PgPool::connect(&db.admin_url).await?;
        let rows: Vec<(String, Option<String>, Option<i32>, Option<i64>)> =
            sqlx::query_as("SELECT player_id, table_id, seat, seated_at_ms FROM player_sessions ORDER BY player_id").fetch_all(&admin).await?;
        let departures: Vec<(String, i64, String, i64)> =
            sqlx::query_as("SELECT player_id, seq, table_id, amount_left_cents FROM player_departure_log ORDER BY player_id, seq").fetch_all(&admin).await?;
        let cash: Vec<(String, String, i64, i64)> =
            sqlx::query_as("SELECT player_id, gaming_day::text, cash_in_cents, cash_out_cents FROM patron_daily_cash ORDER BY 1, 2").fetch_all(&admin).await?;
        admin.close().await;
        assert_eq!(departures.iter().filter(|d| d.0 == "P0").count(), chipledger_store::projection::DEPARTURES_KEPT, "{name}");
        assert!(rows.len() >= 3 && cash.len() >= 6, "{name}: the script reaches every projection: {rows:?} {cash:?}");
        stored.push((rows, departures, cash));
    }
    assert_eq!(stored[0], stored[1], "set-based and op by op store the same rows");
    Ok(())
}

/// A set-based group that breaks a projection's constraint (cash taken back that the day does
/// not hold) is refused as op by op would refuse it, naming the constraint, and writes nothing.
#[tokio::test]
async fn r_audit_4_cash_taken_back_below_zero_is_refused_with_its_constraint() -> anyhow::Result<()> {
    let db = fresh("projections_cash_refused").await?;
    let store = db.store.clone().with_projection(Arc::new(OpsAsEvents));
    let seated = ProjectionOp::Seated { player_id: "P1".into(), table_id: "T1".into(), seat: 2, game_key: "NLHE-1-2".into(), at_ms: Some(1), event_id: uuid::Uuid::new_v4() };
    let cash = |cash_in_cents: i64| ProjectionOp::Cash { player_id: "P1".into(), gaming_day: "2026-03-14".into(), cash_in_cents, cash_out_cents: 0 };
    let events = [seated, cash(5_000), cash(-7_000)].iter().map(op_event).collect::<anyhow::Result<Vec<_>>>()?;
    let error = store.append(&one_stream("ops", ExpectedVersion::NoStream, events)).await.unwrap_err();
    assert!(matches!(&error, StoreError::ProjectionRefused { constraint } if constraint.starts_with("patron_daily_cash")), "{error:?}");
    assert_eq!(store.read_all(PROPERTY, 0, 10).await?.len(), 0, "nothing written");
    assert_eq!(store.player_session(PROPERTY, "P1").await?, None);
    Ok(())
}

/// The recomputation and the stored projections are read in one snapshot: while commands are
/// written, `verify_projections` reported differences where nothing was wrong (the events read
/// first, the projections later, with the appends between them in one and not the other).
#[tokio::test]
async fn projections_verified_while_commands_are_written_show_no_false_differences() -> anyhow::Result<()> {
    let db = fresh("projections_under_writes").await?;
    let store = migrated_store(&db.admin_url).await?.with_projection(Arc::new(OpsAsEvents));
    let written = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (store, written, stop) = (store.clone(), written.clone(), stop.clone());
        tokio::spawn(async move {
            let mut version = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let op = ProjectionOp::Cash { player_id: "P1".into(), gaming_day: "2026-03-14".into(), cash_in_cents: 100, cash_out_cents: 0 };
                let expected = if version == 0 { ExpectedVersion::NoStream } else { ExpectedVersion::Exact(version) };
                let mut tx = store.begin().await?;
                tx.append(&one_stream("ops", expected, vec![op_event(&op)?])).await?;
                tx.commit().await?;
                version += 1;
                written.store(version, std::sync::atomic::Ordering::SeqCst);
            }
            anyhow::Ok(version)
        })
    };
    // Verified again and again while the writer goes on (at least ten times, and until it has
    // written during several of them).
    let mut verified = 0;
    while verified < 10 || written.load(std::sync::atomic::Ordering::SeqCst) < 50 {
        let before = written.load(std::sync::atomic::Ordering::SeqCst);
        let differences = store.verify_projections(PROPERTY, &OpsAsEvents).await?;
        assert!(differences.is_empty(), "verification {verified} (after {before} appends): {differences:#?}");
        verified += 1;
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let appended = writer.await??;
    assert!(appended >= 50, "{appended} appends");
    assert!(store.verify_projections(PROPERTY, &OpsAsEvents).await?.is_empty());
    Ok(())
}
