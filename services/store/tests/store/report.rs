//! Async report projection: checkpoint in the same transaction, rebuild equals incremental.

use chipledger_store::report::{TableDayReport, TableDayRow};
use chipledger_store::*;

use crate::*;

fn day(mut events: Vec<NewEvent>, gaming_day: &str) -> Vec<NewEvent> {
    for event in &mut events {
        event.metadata.gaming_day = gaming_day.into();
    }
    events
}

#[tokio::test]
async fn incremental_processing_and_rebuild_from_zero_give_the_same_rows() -> anyhow::Result<()> {
    let db = fresh("report").await?;
    let store = &db.store;
    let mut applied = 0;
    for round in 0..6 {
        let gaming_day = if round < 3 { "2026-03-14" } else { "2026-03-15" };
        let to_table = |table: &str, amount: i64| movement("ChipsBought", "house/bank", &format!("table/{table}/seat/1"), amount, "r");
        let bet = movement("Bet", "table/T1/seat/1", "table/T1/pot/0", 50, "r");
        store.append(&one_stream("table-T1", ExpectedVersion::Any, day(vec![to_table("T1", 1_000), bet], gaming_day))).await?;
        let note = NewEvent { postings: vec![], ..to_table("T2", 0) };
        store.append(&one_stream("table-T2", ExpectedVersion::Any, day(vec![to_table("T2", 700), note], gaming_day))).await?;
        store.append(&one_stream("player-P1", ExpectedVersion::Any, day(vec![to_table("T9", 5)], gaming_day))).await?;
        // Process in uneven steps while the log grows.
        applied += TableDayReport::catch_up(store, PROPERTY, 3).await?;
        // `verify --projections` recomputes the rows up to the checkpoint, behind the log or not.
        let differences = store.verify_projections(PROPERTY, &NoOps).await?;
        assert!(differences.is_empty(), "round {round}: {differences:?}");
    }
    applied += TableDayReport::catch_up(store, PROPERTY, i64::MAX).await?;
    assert_eq!(applied, 6 * 5);
    assert_eq!(TableDayReport::checkpoint(store, PROPERTY).await?, 30);
    let incremental = TableDayReport::rows(store, PROPERTY).await?;
    assert_eq!(
        incremental[0],
        TableDayRow {
            table_id: "T1".into(),
            gaming_day: "2026-03-14".into(),
            event_count: 6,
            movement_count: 6,
            chips_in_cents: 3 * (1_000 + 50),
            chips_out_cents: 3 * 50,
            last_position: 12,
        }
    );
    assert_eq!(incremental.len(), 4, "T1 and T2 on two days; player streams are not tables");
    assert_eq!(TableDayReport::rebuild(store, PROPERTY).await?, 30);
    assert_eq!(TableDayReport::rows(store, PROPERTY).await?, incremental);
    assert!(store.verify_projections(PROPERTY, &NoOps).await?.is_empty());
    Ok(())
}

/// The appends of these tests carry no projection ops: nothing to recompute but the report.
struct NoOps;

impl InlineProjection for NoOps {
    fn project(&self, _stream: &str, _event: &NewEvent, _ops: &mut Vec<ProjectionOp>) {}
}
