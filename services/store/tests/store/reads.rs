//! Reading the log: every read path gives each event exactly its own postings, in posting
//! order, whatever the page size and however the streams interleave.

use chipledger_store::*;

use crate::*;

fn event_with(event_type: &str, postings: &[(&str, i64)]) -> NewEvent {
    NewEvent {
        postings: postings.iter().map(|&(account, amount_cents)| NewPosting { account: account.into(), amount_cents }).collect(),
        ..movement(event_type, "house/bank", "house/bank", 0, "reads")
    }
}

#[tokio::test]
async fn every_read_gives_each_event_its_own_postings_in_order() -> anyhow::Result<()> {
    let db = fresh("reads_postings").await?;
    let three = event_with("Split", &[("house/bank", -300), ("table/T1/seat/2", 100), ("table/T1/seat/1", 200)]);
    let none = event_with("Note", &[]);
    let two = event_with("Bet", &[("table/T1/seat/1", -50), ("table/T1/pot/0", 50)]);
    let other = event_with("ChipsBought", &[("house/bank", -70), ("table/T2/seat/1", 70)]);
    // table-T1 gets positions 1, 2 and 4; table-T2 position 3 in between.
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, vec![three.clone(), none.clone()])).await?;
    db.store.append(&one_stream("table-T2", ExpectedVersion::NoStream, vec![other.clone()])).await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(2), vec![two.clone()])).await?;
    let expected = [(1, &three), (2, &none), (3, &other), (4, &two)];
    let check = |events: &[RecordedEvent], positions: &[i64]| {
        let got: Vec<(i64, uuid::Uuid, Vec<NewPosting>)> =
            events.iter().map(|event| (event.position, event.event_id, event.postings.clone())).collect();
        let want: Vec<(i64, uuid::Uuid, Vec<NewPosting>)> = expected
            .iter()
            .filter(|(position, _)| positions.contains(position))
            .map(|(position, event)| (*position, event.event_id, event.postings.clone()))
            .collect();
        assert_eq!(got, want);
    };
    for page in [1, 2, 3, 10] {
        let (mut after, mut all) = (0, Vec::new());
        loop {
            let events = db.store.read_all(PROPERTY, after, page).await?;
            let Some(last) = events.last() else { break };
            after = last.position;
            all.extend(events);
        }
        check(&all, &[1, 2, 3, 4]);
    }
    check(&db.store.read_stream(PROPERTY, "table-T1", 0, 10).await?, &[1, 2, 4]);
    check(&db.store.read_stream(PROPERTY, "table-T1", 1, 10).await?, &[2, 4]);
    // Several streams in one call: each from its own version, at most the limit each, in the
    // order asked; a stream with nothing (yet) gives an empty list.
    let streams = ["table-T2".to_owned(), "table-T9".to_owned(), "table-T1".to_owned()];
    let pages = db.store.read_streams(PROPERTY, &streams, &[0, 0, 1], 10).await?;
    assert_eq!(pages.len(), 3);
    check(&pages[0], &[3]);
    assert!(pages[1].is_empty());
    check(&pages[2], &[2, 4]);
    let pages = db.store.read_streams(PROPERTY, &streams[..1].iter().chain(&streams[2..]).cloned().collect::<Vec<_>>(), &[0, 0], 1).await?;
    check(&pages[0], &[3]);
    check(&pages[1], &[1]);
    for (page, stream) in pages.iter().zip(["table-T2", "table-T1"]) {
        assert_eq!(page, &db.store.read_stream(PROPERTY, stream, 0, 1).await?, "the same events as a read of the one stream");
    }
    assert!(matches!(db.store.read_streams(PROPERTY, &streams, &[0], 10).await, Err(StoreError::InvalidRequest(_))));
    let touching_seat_1 = EventFilter { account: Some("table/T1/seat/1".into()), limit: 10, ..Default::default() };
    check(&db.store.events_by_filter(PROPERTY, &touching_seat_1).await?, &[1, 4]);
    Ok(())
}
