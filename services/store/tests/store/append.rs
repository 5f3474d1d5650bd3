//! Append, expected versions, idempotency, postings and balances.

use chipledger_store::*;

use crate::*;

#[tokio::test]
async fn append_then_read_back_in_order_with_dense_positions() -> anyhow::Result<()> {
    let db = fresh("append_read").await?;
    let first = db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(3, "c1"))).await?;
    assert_eq!((first.first_position, first.last_position), (1, 3));
    assert_eq!(first.stream_versions, vec![("table-T1".to_owned(), 3)]);
    let second = db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(3), buy_ins(2, "c2"))).await?;
    assert_eq!((second.first_position, second.last_position), (4, 5));

    let all = db.store.read_all(PROPERTY, 0, 100).await?;
    assert_eq!(all.iter().map(|e| e.position).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    assert_eq!(all.iter().map(|e| e.stream_version).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    assert_eq!(all[0].payload.value()["note"], "é\"\\\u{1}");
    assert_eq!(all[0].postings[1], NewPosting { account: "table/T1/seat/1".into(), amount_cents: 100 });
    assert_eq!(all[4].hash, second.last_hash);
    assert_eq!(all[0].typed_metadata()?, metadata("c1"));
    let stream = db.store.read_stream(PROPERTY, "table-T1", 3, 10).await?;
    assert_eq!(stream.iter().map(|e| e.position).collect::<Vec<_>>(), vec![4, 5]);
    // Another property has its own positions and chain.
    let other = AppendRequest { property: "casino-2".into(), ..one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(1, "c1")) };
    assert_eq!(db.store.append(&other).await?.first_position, 1);
    Ok(())
}

#[tokio::test]
async fn version_conflict_is_typed_and_writes_nothing() -> anyhow::Result<()> {
    let db = fresh("append_conflict").await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "c1"))).await?;
    // Two streams, the second one stale: nothing of the first may land either.
    let mut request = one_stream("player-P1", ExpectedVersion::NoStream, buy_ins(1, "c2"));
    request.commands = vec![command("c2", "buy-in 1")];
    request.streams.push(StreamAppend {
        stream: "table-T1".into(),
        expected_version: ExpectedVersion::Exact(1),
        events: buy_ins(1, "c2"),
    });
    let error = db.store.append(&request).await.unwrap_err();
    assert!(
        matches!(&error, StoreError::VersionConflict { stream, expected: 1, actual: 2 } if stream == "table-T1"),
        "{error:?}"
    );
    assert_eq!(db.store.read_all(PROPERTY, 0, 100).await?.len(), 2);
    assert_eq!(db.store.stream_version(PROPERTY, "player-P1").await?, 0);
    // NoStream on an existing stream conflicts too; the command id was not consumed.
    let error = db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(1, "c3"))).await.unwrap_err();
    assert!(matches!(error, StoreError::VersionConflict { expected: 0, actual: 2, .. }), "{error:?}");
    request.streams[1].expected_version = ExpectedVersion::Exact(2);
    assert!(!db.store.append(&request).await?.replayed);
    Ok(())
}

#[tokio::test]
async fn idempotent_replay_returns_the_original_bytes_and_a_changed_request_conflicts() -> anyhow::Result<()> {
    let db = fresh("append_idem").await?;
    let mut request = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "cmd-1"));
    request.commands = vec![command("cmd-1", "buy-in 200")];
    request.reply = b"decision: two events".to_vec();
    let original = db.store.append(&request).await?;
    assert!(!original.replayed);

    // A retry (new event ids, as a client retry would produce) returns the original outcome,
    // even from another Store (a restarted server) and even though the version moved on.
    let restarted = migrated_store(&db.admin_url).await?;
    let mut retry = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "cmd-1"));
    retry.commands = request.commands.clone();
    let replay = restarted.append(&retry).await?;
    assert!(replay.replayed);
    assert_eq!(replay.outcome_json.as_bytes(), original.outcome_json.as_bytes());
    assert_eq!(replay.reply, b"decision: two events");
    assert_eq!((replay.first_position, replay.last_position, replay.last_hash), (1, 2, original.last_hash));
    assert_eq!(db.store.read_all(PROPERTY, 0, 100).await?.len(), 2);

    // Same id, different request: conflict, nothing written.
    retry.commands = vec![command("cmd-1", "buy-in 300")];
    let error = restarted.append(&retry).await.unwrap_err();
    assert!(matches!(&error, StoreError::IdempotencyConflict { command_id } if command_id == "cmd-1"), "{error:?}");

    // Inside one batch: the same id twice with equal requests is one command; with different
    // requests it is a conflict.
    let mut batch = one_stream("table-T1", ExpectedVersion::Exact(2), buy_ins(1, "cmd-2"));
    batch.commands = vec![command("cmd-2", "a"), command("cmd-3", "b"), command("cmd-2", "a")];
    assert!(!db.store.append(&batch).await?.replayed);
    assert!(db.store.append(&batch).await?.replayed);
    batch.commands = vec![command("cmd-4", "a"), command("cmd-4", "b")];
    assert!(matches!(db.store.append(&batch).await, Err(StoreError::IdempotencyConflict { .. })));
    // A new batch reusing an executed command id alongside new ones is a conflict, not a replay.
    batch.commands = vec![command("cmd-5", "x"), command("cmd-2", "a")];
    assert!(matches!(db.store.append(&batch).await, Err(StoreError::IdempotencyConflict { .. })));
    assert_eq!(db.store.read_all(PROPERTY, 0, 100).await?.len(), 3);
    Ok(())
}

/// A batch's reply is several kB: stored compressed with lz4 (migration 0011, when the server
/// offers it, as every PostgreSQL this project ships with does) in the command's own row, not in
/// the TOAST table, and a replay answers the same bytes.
#[tokio::test]
async fn a_large_reply_is_stored_with_lz4_in_its_row_and_replays_byte_for_byte() -> anyhow::Result<()> {
    let db = fresh("append_lz4").await?;
    let mut superuser = admin(&db.admin_url).await?;
    let offered: Vec<String> =
        sqlx::query_scalar("SELECT unnest(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
            .fetch_all(&mut superuser)
            .await?;
    assert!(offered.iter().any(|method| method == "lz4"), "the test server offers {offered:?}");
    // An answer the size of a hand's (about 7 kB), repetitive as results are, far above the
    // 2 kB at which PostgreSQL starts to compress or move a row's values.
    let reply: Vec<u8> = (0..200).flat_map(|i| format!("result {i}: positions {i}..{}; ", i + 43).into_bytes()).collect();
    assert!(reply.len() > 6_000);
    let mut request = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "big-1"));
    request.commands = vec![command("big-1", "a hand")];
    request.reply = reply.clone();
    db.store.append(&request).await?;
    let (method, stored): (Option<String>, i32) = sqlx::query_as(
        "SELECT pg_column_compression(reply), pg_column_size(reply) FROM commands WHERE command_id = 'big-1'",
    )
    .fetch_one(&mut superuser)
    .await?;
    assert_eq!(method.as_deref(), Some("lz4"));
    assert!((stored as usize) < reply.len() / 2, "{stored} bytes stored for {}", reply.len());
    let toast: String =
        sqlx::query_scalar("SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'commands'::regclass")
            .fetch_one(&mut superuser)
            .await?;
    let moved_out: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {toast}")))
        .fetch_one(&mut superuser)
        .await?;
    assert_eq!(moved_out, 0, "the reply went to {toast}");
    let replay = db.store.append(&request).await?;
    assert!(replay.replayed);
    assert_eq!(replay.reply, reply);
    Ok(())
}

#[tokio::test]
async fn r_unit_3_unbalanced_postings_are_refused() -> anyhow::Result<()> {
    let db = fresh("append_unbalanced").await?;
    let mut events = buy_ins(2, "c1");
    events[1].postings[0].amount_cents -= 1;
    let error = db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, events)).await.unwrap_err();
    assert!(matches!(error, StoreError::Unbalanced { event_index: 1, sum_cents: -1 }), "{error:?}");
    assert!(db.store.read_all(PROPERTY, 0, 10).await?.is_empty());
    Ok(())
}

#[tokio::test]
async fn r_unit_4_seat_stack_may_not_go_negative() -> anyhow::Result<()> {
    let db = fresh("append_negative").await?;
    let request = one_stream("table-T1", ExpectedVersion::NoStream, vec![movement("BuyIn", "house/bank", "table/T1/seat/2", 500, "c1")]);
    db.store.append(&request).await?;
    let bet = movement("Bet", "table/T1/seat/2", "table/T1/pot/0", 600, "c2");
    let error = db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(1), vec![bet])).await.unwrap_err();
    assert!(
        matches!(&error, StoreError::NegativeBalance { account, balance_cents: -100 } if account == "table/T1/seat/2"),
        "{error:?}"
    );
    // house accounts may go negative; a fresh pocket may not.
    let pocket = movement("Cashout", "player/P1/pocket", "cage/MAIN/cash", 1, "c3");
    assert!(matches!(
        db.store.append(&one_stream("player-P1", ExpectedVersion::NoStream, vec![pocket])).await,
        Err(StoreError::NegativeBalance { .. })
    ));
    assert_eq!(db.store.projected_balance(PROPERTY, "table/T1/seat/2").await?, 500);
    assert_eq!(db.store.projected_balance(PROPERTY, "house/bank").await?, -500);
    Ok(())
}

#[tokio::test]
async fn balances_as_of_position_and_time_and_the_sum_is_zero_everywhere() -> anyhow::Result<()> {
    let db = fresh("append_balances").await?;
    let a = db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "c1"))).await?; // 100 + 101
    let events = db.store.read_all(PROPERTY, 0, 10).await?;
    let b = db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(2), vec![movement("Bet", "table/T1/seat/1", "table/T1/pot/0", 150, "c2")])).await?;
    assert_eq!(db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Position(1)).await?, 100);
    assert_eq!(db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Position(a.last_position)).await?, 201);
    // A position the log has not reached answers as of the head, labelled with the head.
    let beyond = db.store.balance_with_position(PROPERTY, "table/T1/seat/1", AsOf::Position(a.last_position + 100)).await?;
    let head = db.store.balance_with_position(PROPERTY, "table/T1/seat/1", AsOf::Head).await?;
    assert_eq!(beyond, head, "as of a future position: the head, and its position");
    assert_eq!(db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Head).await?, 51);
    assert_eq!(db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Time(events[1].recorded_at)).await?, 201);
    assert_eq!(db.store.projected_balance(PROPERTY, "table/T1/seat/1").await?, 51);
    for position in 0..=b.last_position {
        assert_eq!(db.store.balances_sum(PROPERTY, AsOf::Position(position)).await?, 0);
    }
    let filtered = db
        .store
        .events_by_filter(PROPERTY, &EventFilter { account: Some("table/T1/pot/0".into()), limit: 10, ..Default::default() })
        .await?;
    assert_eq!(filtered.iter().map(|e| e.position).collect::<Vec<_>>(), vec![3]);
    let by_command = db
        .store
        .events_by_filter(PROPERTY, &EventFilter { command_id: Some("c1".into()), limit: 10, ..Default::default() })
        .await?;
    assert_eq!(by_command.len(), 2);
    Ok(())
}

#[tokio::test]
async fn floats_and_oversized_batches_are_refused_before_the_database() -> anyhow::Result<()> {
    let db = fresh("append_invalid").await?;
    let mut events = buy_ins(1, "c1");
    events[0].payload = serde_json::json!({"amount": 1.5}).into();
    assert!(matches!(
        db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, events)).await,
        Err(StoreError::InvalidRequest(_))
    ));
    let too_many = buy_ins(MAX_EVENTS_PER_APPEND + 1, "c1");
    assert!(matches!(
        db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, too_many)).await,
        Err(StoreError::AppendSize { what: "events", count, max: MAX_EVENTS_PER_APPEND }) if count == MAX_EVENTS_PER_APPEND + 1
    ));
    Ok(())
}

fn refusal(command_id: &str, request: &str) -> RejectionRecord {
    RejectionRecord {
        property: PROPERTY.into(),
        command_id: command_id.into(),
        reason_code: "RATHOLING_FORBIDDEN".into(),
        rule_id: "R-STAKE-2".into(),
        numbers: vec![("stack_cents".into(), 30_000), ("removed_cents".into(), 10_000)],
        detail: "took chips off the table".into(),
        actor_id: "dealer-7".into(),
        actor_role: "Dealer".into(),
        device: None,
        streams: vec!["table-T1".into()],
        request: serde_json::json!({"remove_cents": 10000, "slip_no": u64::MAX}),
        request_hash: request_hash(request.as_bytes()),
        player_id: Some("P1".into()),
        gaming_day: Some("2026-03-14".into()),
        reply: format!("refused {command_id}").into_bytes(),
    }
}

#[tokio::test]
async fn r_audit_3_a_refusal_is_recorded_chained_and_answers_its_command_id_for_good() -> anyhow::Result<()> {
    let db = fresh("append_rejections").await?;
    let record = refusal("cmd-9", "remove 100");
    let RefusalOutcome::Recorded(first) = db.store.record_refusal(&record, None).await? else { panic!("recorded") };
    assert_eq!(first.refusal_seq, Some(1));
    // The request JSON is kept with integers beyond 2^53 - 1 as strings (they chain exactly).
    assert_eq!(first.record.request["slip_no"], serde_json::json!(u64::MAX.to_string()));
    assert_eq!((&first.record.reply, &first.record.player_id), (&record.reply, &record.player_id));
    let stored = db.store.rejections_of(PROPERTY, 0, 10, Some("P1"), Some("2026-03-14")).await?;
    assert_eq!(stored, vec![first.clone()]);
    assert!(db.store.rejections_of(PROPERTY, 0, 10, Some("P2"), None).await?.is_empty());
    assert!(db.store.read_all(PROPERTY, 0, 10).await?.is_empty(), "a refusal moves nothing");

    // The same id and request again: the first refusal, byte for byte; another request: conflict.
    assert_eq!(db.store.record_refusal(&record, None).await?, RefusalOutcome::Replayed(first.clone()));
    let other = refusal("cmd-9", "remove 200");
    assert!(matches!(db.store.record_refusal(&other, None).await, Err(StoreError::IdempotencyConflict { .. })));
    // An append carrying the refused id with the same request is answered by the refusal ...
    let mut request = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(1, "cmd-9"));
    request.commands = vec![command("cmd-9", "remove 100")];
    let error = db.store.append(&request).await.unwrap_err();
    assert!(matches!(&error, StoreError::RefusedBefore { command_id, refusal_seq: 1 } if command_id == "cmd-9"), "{error:?}");
    // ... with another request it is a reused id; nothing is written either way.
    request.commands = vec![command("cmd-9", "remove 300")];
    assert!(matches!(db.store.append(&request).await, Err(StoreError::IdempotencyConflict { .. })));
    assert!(db.store.read_all(PROPERTY, 0, 10).await?.is_empty());
    // An id accepted before answers its result, not a refusal.
    let mut accepted = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(1, "cmd-10"));
    accepted.commands = vec![command("cmd-10", "buy 100")];
    let outcome = db.store.append(&accepted).await?;
    let late = refusal("cmd-10", "buy 100");
    let RefusalOutcome::Accepted(replayed) = db.store.record_refusal(&late, None).await? else { panic!("accepted") };
    assert_eq!(replayed.outcome_json, outcome.outcome_json);
    let report = db.store.verify_log(PROPERTY, &[], &[]).await?;
    assert!(report.ok(), "{report:?}");
    assert_eq!((report.refusals_checked, report.commands_checked), (1, 1));

    // R-CHIP-6 (the wave-2 pass): a refusal whose gaming day has ended by the time it would be
    // kept is not kept on that day (its caller takes the day again); one whose day runs on is.
    let now_micros = i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_micros())?;
    let ended = db.store.record_refusal(&refusal("cmd-11", "remove 400"), Some(now_micros - 1_000)).await.unwrap_err();
    assert!(matches!(ended, StoreError::OutsideGamingDay { recorded_micros } if recorded_micros >= now_micros), "{ended:?}");
    assert_eq!(db.store.rejections_of(PROPERTY, 0, 10, None, None).await?.len(), 1, "nothing kept on the day that ended");
    let RefusalOutcome::Recorded(kept) = db.store.record_refusal(&refusal("cmd-11", "remove 400"), Some(now_micros + 60_000_000)).await? else {
        panic!("recorded")
    };
    assert_eq!(kept.refusal_seq, Some(2));
    Ok(())
}

/// R-CHIP-6 with R-AUDIT-4: what is recorded as it happens never goes on a gaming day before the
/// latest its property recorded, whichever writer recorded it (the insider pass: two replicas,
/// one's clock ahead and then set right, put a patron's cash on two days 28 ms apart, no CTR).
/// The member behind is refused with the day, to be decided again on it; an import, which names
/// its own time, is not (its server checks it against its streams).
#[tokio::test]
async fn a_live_append_on_a_gaming_day_before_the_propertys_latest_is_refused_with_that_day() -> anyhow::Result<()> {
    let db = fresh("append_gaming_day").await?;
    let on = |day: &str, command_id: &str| {
        let mut events = buy_ins(1, command_id);
        events[0].metadata.gaming_day = day.into();
        events
    };
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, on("2026-03-15", "c1"))).await?;
    let refused = db.store.append(&one_stream("table-T2", ExpectedVersion::NoStream, on("2026-03-14", "c2"))).await.expect_err("an earlier day");
    assert!(matches!(&refused, StoreError::GamingDayBehind { gaming_day } if gaming_day == "2026-03-15"), "{refused:?}");
    assert_eq!(db.store.read_all(PROPERTY, 0, 10).await?.len(), 1, "nothing written");
    let mut imported = on("2026-03-14", "c2");
    imported[0].metadata.imported_by = Some("admin-1".into());
    db.store.append(&one_stream("table-T2", ExpectedVersion::NoStream, imported)).await?;
    db.store.append(&one_stream("table-T3", ExpectedVersion::NoStream, on("2026-03-15", "c3"))).await?;
    db.store.append(&one_stream("table-T4", ExpectedVersion::NoStream, on("2026-03-16", "c4"))).await?;
    let refused = db.store.append(&one_stream("table-T5", ExpectedVersion::NoStream, on("2026-03-15", "c5"))).await.expect_err("a day back");
    assert!(matches!(&refused, StoreError::GamingDayBehind { gaming_day } if gaming_day == "2026-03-16"), "{refused:?}");
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    Ok(())
}

/// R-CHIP-5: a gaming day a cage closed takes no import, neither its events (CL011) nor its
/// refusals (the fixes' pass: imports refused while a cage closed the day were kept on it).
#[tokio::test]
async fn r_chip_5_a_closed_day_takes_no_import_nor_an_imports_refusal() -> anyhow::Result<()> {
    let db = fresh("append_closed_day").await?;
    let mut close = movement("GamingDayClosed", "house/bank", "table/T1/seat/1", 100, "close");
    close.payload = serde_json::json!({"gaming_day": "2026-03-14"}).into();
    close.metadata.gaming_day = "2026-03-15".into();
    db.store.append(&one_stream("cage-MAIN", ExpectedVersion::NoStream, vec![close])).await?;
    let mut imported = buy_ins(1, "import-1");
    imported[0].metadata.gaming_day = "2026-03-14".into();
    imported[0].metadata.imported_by = Some("admin-1".into());
    let refused = db.store.append(&one_stream("table-T2", ExpectedVersion::NoStream, imported)).await.expect_err("an import on a closed day");
    assert!(matches!(&refused, StoreError::ImportOnClosedDay { gaming_day, closed_through } if gaming_day == "2026-03-14" && closed_through == "2026-03-14"), "{refused:?}");
    let mut record = refusal("import-2", "an import");
    record.request = serde_json::json!({"imported_by": "admin-1"});
    let refused = db.store.record_refusal(&record, None).await.expect_err("an import's refusal on a closed day");
    assert!(matches!(&refused, StoreError::ImportOnClosedDay { .. }), "{refused:?}");
    // The day after it takes both; a refusal as it happens is kept whatever the day.
    record.gaming_day = Some("2026-03-15".into());
    assert!(matches!(db.store.record_refusal(&record, None).await?, RefusalOutcome::Recorded(_)));
    assert!(matches!(db.store.record_refusal(&refusal("live-1", "live"), None).await?, RefusalOutcome::Recorded(_)));
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    Ok(())
}

/// R-CHIP-6 (the time pass): events are recorded at the time their writer decided them by its
/// reading of the database's clock, raised to the head's, not at the store host's own clock
/// (an hour behind the database, events had been stamped on a gaming day their times were not
/// in); a request decided on a gaming day that has ended by the time it would be recorded is not
/// written (`OutsideGamingDay`: decided again on the next).
#[tokio::test]
async fn r_chip_6_recorded_at_the_decided_time_and_never_past_its_gaming_day() -> anyhow::Result<()> {
    let db = fresh("append_decided").await?;
    let now_micros = i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_micros())?;
    // Decided two seconds before the store's clock reads it: recorded then.
    let mut first = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(1, "c1"));
    first.decided = DecidedAt { at_micros: Some(now_micros - 2_000_000), ..DecidedAt::default() };
    let outcome = db.store.append(&first).await?;
    assert_eq!(outcome.recorded_at_micros, now_micros - 2_000_000);
    // Decided earlier than the head: raised to the head's time.
    let mut second = one_stream("table-T1", ExpectedVersion::Exact(1), buy_ins(1, "c2"));
    second.decided = DecidedAt { at_micros: Some(now_micros - 3_000_000), ..DecidedAt::default() };
    assert_eq!(db.store.append(&second).await?.recorded_at_micros, now_micros - 2_000_000);
    // Its gaming day ended at the head's time: nothing written, the command id not taken.
    let mut late = one_stream("table-T1", ExpectedVersion::Exact(2), buy_ins(1, "c3"));
    late.decided = DecidedAt { at_micros: Some(now_micros - 2_500_000), day_ends_micros: Some(now_micros - 2_000_000), ..DecidedAt::default() };
    let error = db.store.append(&late).await.unwrap_err();
    assert!(matches!(error, StoreError::OutsideGamingDay { recorded_micros } if recorded_micros == now_micros - 2_000_000), "{error:?}");
    assert_eq!(db.store.read_all(PROPERTY, 0, 100).await?.len(), 2);
    late.decided = DecidedAt { at_micros: Some(now_micros - 1_000_000), day_begins_micros: Some(now_micros - 60_000_000), day_ends_micros: Some(now_micros + 60_000_000) };
    assert_eq!(db.store.append(&late).await?.recorded_at_micros, now_micros - 1_000_000);
    let events = db.store.read_all(PROPERTY, 0, 100).await?;
    assert_eq!(events.last().map(|event| event.recorded_at.unix_timestamp_nanos() / 1_000), Some(i128::from(now_micros - 1_000_000)));
    // Decided an hour ahead of the database's clock, on a day the database has not begun (a
    // writer's clock stepped forward): the store records at its own clock, before that day, so
    // it is not written either (the wave-3 pass: cash went on the next day two minutes early).
    let mut ahead = one_stream("table-T1", ExpectedVersion::Exact(3), buy_ins(1, "c4"));
    ahead.decided = DecidedAt { at_micros: Some(now_micros + 3_600_000_000), day_begins_micros: Some(now_micros + 3_000_000_000), day_ends_micros: None };
    let error = db.store.append(&ahead).await.unwrap_err();
    assert!(matches!(error, StoreError::OutsideGamingDay { .. }), "{error:?}");
    assert_eq!(db.store.read_all(PROPERTY, 0, 100).await?.len(), 3);
    Ok(())
}

/// R-CHIP-6 (the crash pass): a request decided before its gaming day ended, at or after the
/// head's time, whose day has ended by the time the database has the head lock (its commit
/// waited past the cutoff) is not written on the day that ended: the database answers its own
/// time and the store finds the request outside its day (`OutsideGamingDay`: decided again on
/// the next). A $5,000 sale decided a second before the cutoff and committed two after had been
/// added to a day already reported.
#[tokio::test]
async fn r_chip_6_a_commit_that_waited_past_its_days_end_is_not_written_on_that_day() -> anyhow::Result<()> {
    let db = fresh("append_day_end").await?;
    let now_micros = i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_micros())?;
    let mut first = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(1, "c1"));
    first.decided = DecidedAt { at_micros: Some(now_micros - 2_000_000), ..DecidedAt::default() };
    db.store.append(&first).await?;
    let mut waited = one_stream("table-T1", ExpectedVersion::Exact(1), buy_ins(1, "c2"));
    waited.decided = DecidedAt { at_micros: Some(now_micros - 900_000), day_begins_micros: Some(now_micros - 60_000_000), day_ends_micros: Some(now_micros - 500_000) };
    let error = db.store.append(&waited).await.unwrap_err();
    assert!(matches!(error, StoreError::OutsideGamingDay { recorded_micros } if recorded_micros >= now_micros), "{error:?}");
    assert_eq!(db.store.read_all(PROPERTY, 0, 100).await?.len(), 1, "nothing written on the day that ended");
    // Its day still running when the lock is had: written (no earlier than it was decided).
    waited.decided.day_ends_micros = Some(now_micros + 60_000_000);
    assert!(db.store.append(&waited).await?.recorded_at_micros >= now_micros - 900_000);
    assert_eq!(db.store.read_all(PROPERTY, 0, 100).await?.len(), 2);
    Ok(())
}
