//! R-CHIP-6 across daylight saving: a property in Las Vegas (IANA zone America/Los_Angeles,
//! cutoff 06:00) records each event under the gaming day of its local time. The cutoff stays at
//! 06:00 local on both sides of the spring-forward change (2024-03-10, 02:00 PST -> 03:00 PDT):
//! 13:59 UTC the day before is 05:59 PST, 12:59 UTC the day after is 05:59 PDT. A fixed offset
//! of -480 would have put the summer cutoff at 07:00 local (14:00 UTC).

use chipledger_proto::v1 as pb;
use chipledger_server::config::FileConfig;
use chipledger_tests::{ServerOptions, TestServer, all_events, chips, principal};

fn las_vegas(file: &mut FileConfig) {
    file.gaming_day.time_zone = Some("America/Los_Angeles".into());
    file.gaming_day.cutoff = Some("06:00".into());
}

/// A UTC instant (no time zone involved) in Unix milliseconds.
fn unix_ms(rfc3339: &str) -> i64 {
    rfc3339.parse::<jiff::Timestamp>().unwrap_or_else(|error| panic!("{rfc3339}: {error}")).as_millisecond()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_6_las_vegas_gaming_day_keeps_its_0600_local_cutoff_across_the_dst_change() -> anyhow::Result<()> {
    let options = ServerOptions { customize: Some(las_vegas), ..ServerOptions::default() };
    let server = TestServer::start_with("dst", options, None).await?;
    let mut admin = server.client(principal::ADMIN).await?;
    // (instant, the gaming day it belongs to), recorded as admin imports at those instants.
    let cases = [
        ("2024-03-09T13:59:59Z", "2024-03-08"), // 05:59:59 PST
        ("2024-03-09T14:00:00Z", "2024-03-09"), // 06:00 PST
        ("2024-03-10T12:59:59Z", "2024-03-09"), // 05:59:59 PDT, after the change at 10:00 UTC
        ("2024-03-10T13:00:00Z", "2024-03-10"), // 06:00 PDT (a fixed -480 would say 2024-03-09)
        ("2024-03-10T13:30:00Z", "2024-03-10"), // 06:30 PDT (a fixed -480: 05:30, the day before)
        ("2024-11-03T13:59:59Z", "2024-11-02"), // 05:59:59 PST, fall back at 09:00 UTC
        ("2024-11-03T14:00:00Z", "2024-11-03"),
    ];
    let mut expected = Vec::new();
    for (index, (instant, day)) in cases.iter().enumerate() {
        let header = Some(pb::CommandHeader {
            command_id: format!("dst-{index}"),
            import_occurred_at_unix_ms: Some(unix_ms(instant)),
            ..Default::default()
        });
        let cage_id = format!("C{index}");
        admin
            .cage
            .open_cage(pb::OpenCage { header, cage_id: cage_id.clone(), denominations_cents: vec![100], chips: vec![chips(100, 1)], cash_cents: 0 })
            .await?;
        expected.push((format!("cage-{cage_id}"), (*instant, *day)));
    }
    let events = all_events(&mut admin, pb::EventFilter::default()).await?;
    for (stream, (instant, day)) in expected {
        let event = events.iter().find(|event| event.stream_id == stream).unwrap_or_else(|| panic!("no event on {stream}"));
        let recorded = event.metadata.as_ref().map(|metadata| metadata.gaming_day.as_str()).unwrap_or_default();
        assert_eq!(recorded, day, "{instant} belongs to gaming day {day}");
        // R-AUDIT-2: an import names who sent it beside the actor and time it names.
        assert_eq!(event.metadata.as_ref().and_then(|metadata| metadata.imported_by.as_deref()), Some(principal::ADMIN.0), "{stream}");
        // And keeps its own time (the cage pass: only the day was kept).
        assert_eq!(event.metadata.as_ref().and_then(|metadata| metadata.occurred_at_unix_ms), Some(unix_ms(instant)), "{stream}");
    }

    // An import naming another actor records both: the cashier it names, and the admin who
    // recorded it (the insiders' hostile pass: an admin pinned a sale on a cashier).
    let header = Some(pb::CommandHeader {
        command_id: "import-as-cage".into(),
        import_actor_id: Some(principal::CAGE.0.into()),
        import_occurred_at_unix_ms: Some(unix_ms("2024-03-11T15:00:00Z")),
        ..Default::default()
    });
    admin.cage.open_cage(pb::OpenCage { header, cage_id: "CX".into(), denominations_cents: vec![100], chips: vec![chips(100, 1)], cash_cents: 0 }).await?;
    // Refused, it is kept naming both too (the insider pass: an admin's refused import was kept
    // as the floor supervisor's it named, the admin nowhere).
    let header = Some(pb::CommandHeader { command_id: "import-as-cage-again".into(), import_actor_id: Some(principal::CAGE.0.into()), ..Default::default() });
    let status = admin
        .cage
        .open_cage(pb::OpenCage { header, cage_id: "CX".into(), denominations_cents: vec![100], chips: vec![chips(100, 1)], cash_cents: 0 })
        .await
        .expect_err("the cage is open");
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    let kept = admin.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
    let record = kept.iter().find(|record| record.command_id == "import-as-cage-again").expect("the refused import is kept");
    assert_eq!((record.actor_id.as_str(), record.imported_by.as_str()), (principal::CAGE.0, principal::ADMIN.0), "{record:?}");
    // An import dated after the server's time is refused and records nothing (R-CHIP-6: it would
    // count on a gaming day not begun, or close one before it began).
    let tomorrow = jiff::Timestamp::now().as_millisecond() + 86_400_000;
    let header = Some(pb::CommandHeader { command_id: "import-tomorrow".into(), import_occurred_at_unix_ms: Some(tomorrow), ..Default::default() });
    let status = admin
        .cage
        .open_cage(pb::OpenCage { header, cage_id: "CY".into(), denominations_cents: vec![100], chips: vec![chips(100, 1)], cash_cents: 0 })
        .await
        .expect_err("an import dated tomorrow");
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("import_occurred_at_unix_ms"), "{status:?}");
    // The actor named is an id, not a sentence (the insiders' second pass: "cage 1", 300 chars),
    // in printable ASCII, and a principal's id in its own case (the insider pass: `floor1` with a
    // zero-width space, or `FLOOR1`, issued a marker floor1 approved, reading as two people).
    let in_another_case = principal::CAGE.0.to_uppercase();
    for actor in ["cage 1".to_string(), "x".repeat(300), format!("{}\u{200b}", principal::CAGE.0), in_another_case] {
        let header = Some(pb::CommandHeader { command_id: format!("import-actor-{}", actor.len()), import_actor_id: Some(actor), ..Default::default() });
        let status = admin
            .cage
            .open_cage(pb::OpenCage { header, cage_id: "CZ".into(), denominations_cents: vec![100], chips: vec![chips(100, 1)], cash_cents: 0 })
            .await
            .expect_err("an actor id with a space, 300 characters, a zero-width space, or a principal's in another case");
        assert!(status.message().contains("import_actor_id"), "{status:?}");
    }
    let events = all_events(&mut admin, pb::EventFilter::default()).await?;
    let as_cage = events.iter().find(|event| event.stream_id == "cage-CX").and_then(|event| event.metadata.clone()).expect("cage-CX opened");
    assert_eq!((as_cage.actor_id.as_str(), as_cage.imported_by.as_deref()), (principal::CAGE.0, Some(principal::ADMIN.0)));
    // In the role of the principal it names, one that may send the command (the cage pass: a
    // sale imported as the auditor's was recorded, in the admin's role).
    assert_eq!(as_cage.actor_role, pb::Role::Cage as i32, "{as_cage:?}");
    let header = Some(pb::CommandHeader { command_id: "import-as-auditor".into(), import_actor_id: Some(principal::AUDITOR.0.into()), ..Default::default() });
    let status = admin
        .cage
        .open_cage(pb::OpenCage { header, cage_id: "CW".into(), denominations_cents: vec![100], chips: vec![chips(100, 1)], cash_cents: 0 })
        .await
        .expect_err("an auditor opens no cage");
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("import_actor_id") && status.message().contains("R-AUDIT-2"), "{status:?}");
    assert!(events.iter().all(|event| event.stream_id != "cage-CY"), "a refused import moved nothing");
    // An import records the past in order (R-AUDIT-4): never dated before the latest gaming day
    // of a stream it writes (the cage pass sold $9,000 dated yesterday at a cage opened today,
    // beside the patron's live $9,000 of today: two days under the CTR threshold).
    let header = Some(pb::CommandHeader { command_id: "sale-today".into(), ..Default::default() });
    admin.cage.open_cage(pb::OpenCage { header, cage_id: "CT".into(), denominations_cents: vec![100], chips: vec![chips(100, 200)], cash_cents: 0 }).await?;
    let yesterday = jiff::Timestamp::now().as_millisecond() - 2 * 86_400_000; // two days: a gaming day before whatever the clock changes
    let header = Some(pb::CommandHeader { command_id: "sale-yesterday".into(), import_occurred_at_unix_ms: Some(yesterday), ..Default::default() });
    let status = admin
        .cage
        .sell_chips(pb::SellChips { header, cage_id: "CT".into(), player_id: "P11".into(), chips: vec![chips(100, 90)], supervisor_id: None })
        .await
        .expect_err("a sale dated before the cage's latest gaming day");
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("cage-CT") && status.message().contains("R-AUDIT-4"), "{status:?}");
    let sold = all_events(&mut admin, pb::EventFilter { stream_id: "player-P11".into(), ..Default::default() }).await?;
    assert!(sold.is_empty(), "a refused import moved nothing: {sold:?}");
    // A correction imported with a backdated time, the same (the fixes' pass: its streams are
    // those of the event it reverses).
    let header = Some(pb::CommandHeader { command_id: "sale-p12".into(), ..Default::default() });
    let sale = admin.cage.sell_chips(pb::SellChips { header, cage_id: "CT".into(), player_id: "P12".into(), chips: vec![chips(100, 5)], supervisor_id: None }).await?.into_inner();
    let mut cfo = server.client(principal::ADMIN_2).await?;
    let correction = pb::Correction {
        header: Some(pb::CommandHeader { command_id: "fix-p12".into(), import_occurred_at_unix_ms: Some(yesterday), ..Default::default() }),
        reverses_event_id: sale.events[0].event_id.clone(),
        approved_by: principal::ADMIN_2.0.into(),
        reason: "sold to the wrong patron".into(),
    };
    let correction = chipledger_tests::approved(correction, &mut [&mut cfo]).await?;
    let status = admin.ledger.correct(correction).await.expect_err("a correction dated before its stream's latest gaming day");
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("cage-CT"), "{status:?}");
    // In time too, within a day: imports in order go through; one dated before the last event of
    // its stream happened does not (the stakes pass: a cash-out dated two hours before the buy-in
    // recorded a second earlier ended the re-buy wait at once).
    let now = jiff::Timestamp::now().as_millisecond();
    let import = |command_id: &str, at: i64| Some(pb::CommandHeader { command_id: command_id.into(), import_occurred_at_unix_ms: Some(at), ..Default::default() });
    admin.cage.open_cage(pb::OpenCage { header: import("open-co", now - 600_000), cage_id: "CO".into(), denominations_cents: vec![100], chips: vec![chips(100, 50)], cash_cents: 0 }).await?;
    admin.cage.sell_chips(pb::SellChips { header: import("sale-co-1", now - 300_000), cage_id: "CO".into(), player_id: "P13".into(), chips: vec![chips(100, 5)], supervisor_id: None }).await?;
    let status = admin
        .cage
        .sell_chips(pb::SellChips { header: import("sale-co-2", now - 480_000), cage_id: "CO".into(), player_id: "P14".into(), chips: vec![chips(100, 5)], supervisor_id: None })
        .await
        .expect_err("an import dated before its stream's last event");
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("cage-CO"), "{status:?}");
    let live = Some(pb::CommandHeader { command_id: "sale-co-live".into(), ..Default::default() });
    admin.cage.sell_chips(pb::SellChips { header: live, cage_id: "CO".into(), player_id: "P15".into(), chips: vec![chips(100, 5)], supervisor_id: None }).await?;
    let status = admin
        .cage
        .sell_chips(pb::SellChips { header: import("sale-co-3", now - 60_000), cage_id: "CO".into(), player_id: "P16".into(), chips: vec![chips(100, 5)], supervisor_id: None })
        .await
        .expect_err("an import dated before a live event of its stream");
    assert!(status.message().contains("cage-CO"), "{status:?}");
    // Two imports of one stream at the same moment: the one dated earlier, sent while the later
    // one is in flight, is refused or recorded before it, never after it (the fixes' pass: it
    // was checked before the later one was recorded, then recorded after it).
    admin.cage.open_cage(pb::OpenCage { header: import("open-cr", now - 7_200_000), cage_id: "CR".into(), denominations_cents: vec![100], chips: vec![chips(100, 5_000)], cash_cents: 0 }).await?;
    for round in 0..3 {
        let later_at = now - 3_600_000 + round * 60_000;
        let sale = |_| pb::Command {
            command: Some(pb::command::Command::SellChips(pb::SellChips { header: None, cage_id: "CR".into(), player_id: format!("R{round}"), chips: vec![chips(100, 1)], supervisor_id: None })),
        };
        let batch = pb::RecordBatch { header: import(&format!("later-{round}"), later_at), commands: (0..500).map(sale).collect() };
        let mut first = server.client(principal::ADMIN).await?;
        let later = tokio::spawn(async move { first.ledger.record_batch(batch).await });
        // Earlier-dated imports, one after the other, for as long as the later one is in flight.
        let mut second = server.client(principal::ADMIN).await?;
        let mut sent = 0;
        while !later.is_finished() && sent < 200 {
            let earlier = pb::SellChips { header: import(&format!("earlier-{round}-{sent}"), later_at - 1_800_000), cage_id: "CR".into(), player_id: format!("E{round}"), chips: vec![chips(100, 1)], supervisor_id: None };
            let _ = second.cage.sell_chips(earlier).await;
            sent += 1;
        }
        later.await??;
        let events = all_events(&mut admin, pb::EventFilter { stream_id: "cage-CR".into(), ..Default::default() }).await?;
        let at = |event: &pb::RecordedEvent| event.metadata.as_ref().and_then(|metadata| metadata.occurred_at_unix_ms).unwrap_or_default();
        assert!(events.windows(2).all(|pair| at(&pair[0]) <= at(&pair[1])), "round {round}: the cage's imports in time order ({sent} sent)");
    }
    server.stop().await
}

/// R-CHIP-5, R-CHIP-6: a gaming day a cage of the property closed is final, for imports too (the
/// cage pass: an admin's import opened a new cage on a day closed and reported before, sold chips
/// there and closed it: the day's chip liability and a patron's cash changed). Checked against
/// the closes before each import, in the log and earlier in the same submission; days not closed
/// still take imports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_5_a_gaming_day_a_cage_closed_takes_no_import() -> anyhow::Result<()> {
    let server = TestServer::start_with("closed-day", ServerOptions::default(), None).await?;
    let mut admin = server.client(principal::ADMIN).await?;
    let now = jiff::Timestamp::now().as_millisecond();
    let days_ago = |days: i64| now - days * 86_400_000;
    let import = |command_id: &str, at: i64| Some(pb::CommandHeader { command_id: command_id.into(), import_occurred_at_unix_ms: Some(at), ..Default::default() });
    let command = |command: pb::command::Command| pb::Command { command: Some(command) };
    let open = |cage_id: &str| command(pb::command::Command::OpenCage(pb::OpenCage { header: None, cage_id: cage_id.into(), denominations_cents: vec![100], chips: vec![chips(100, 50)], cash_cents: 0 }));
    let close = |cage_id: &str| command(pb::command::Command::CloseGamingDay(pb::CloseGamingDay { header: None, cage_id: cage_id.into() }));
    let refused_as_closed = |status: tonic::Status, what: &str| {
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{what}: {status:?}");
        assert!(status.message().contains("import_occurred_at_unix_ms") && status.message().contains("R-CHIP-5"), "{what}: {status:?}");
    };
    let head = |digest: pb::ChainDigest| (digest.global_position, digest.chain_hash_hex);
    let before = head(admin.audit.get_chain_digest(pb::GetChainDigestRequest::default()).await?.into_inner());

    // One submission closing a day at one cage, then opening another on it: refused whole.
    let batch = pb::RecordBatch { header: import("close-then-open", days_ago(5)), commands: vec![open("C5"), close("C5"), open("G5")] };
    refused_as_closed(admin.ledger.record_batch(batch).await.expect_err("a cage opened on a day closed before it"), "in one submission");
    assert_eq!(head(admin.audit.get_chain_digest(pb::GetChainDigestRequest::default()).await?.into_inner()), before, "nothing written");
    // Closing it alone is history as it was: recorded.
    admin.ledger.record_batch(pb::RecordBatch { header: import("close-5", days_ago(5)), commands: vec![open("C5"), close("C5")] }).await?;
    // That day, or one before it, takes nothing more; a day after it does.
    for (command_id, days) in [("ghost-5", 5), ("ghost-6", 6)] {
        let batch = pb::RecordBatch { header: import(command_id, days_ago(days)), commands: vec![open("G"), close("G")] };
        refused_as_closed(admin.ledger.record_batch(batch).await.expect_err("an import on a closed day"), command_id);
    }
    admin.ledger.record_batch(pb::RecordBatch { header: import("open-3", days_ago(3)), commands: vec![open("C3")] }).await?;

    // A day closed as it happens: today's imports are refused, at any cage, new or not; live
    // commands go on.
    admin.ledger.record_batch(pb::RecordBatch { header: Some(pb::CommandHeader { command_id: "today".into(), ..Default::default() }), commands: vec![open("CT"), close("CT")] }).await?;
    let sale = pb::SellChips { header: import("ghost-sale", now - 60_000), cage_id: "C3".into(), player_id: "P1".into(), chips: vec![chips(100, 5)], supervisor_id: None };
    refused_as_closed(admin.cage.sell_chips(sale).await.expect_err("an import today, closed"), "today");
    let batch = pb::RecordBatch { header: import("ghost-today", now - 60_000), commands: vec![open("GT")] };
    refused_as_closed(admin.ledger.record_batch(batch).await.expect_err("a new cage today, closed"), "a new cage today");
    // At the cage that closed the day: the same answer, and the rules' refusal is not kept on the
    // closed day (the fixes' pass: DAY_ALREADY_CLOSED was kept there).
    let sale = pb::SellChips { header: import("closed-cage-sale", now - 60_000), cage_id: "CT".into(), player_id: "P1".into(), chips: vec![chips(100, 5)], supervisor_id: None };
    refused_as_closed(admin.cage.sell_chips(sale).await.expect_err("an import at the cage that closed today"), "the closed cage");
    let kept = admin.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
    assert!(kept.iter().all(|record| !["closed-cage-sale", "ghost-sale", "ghost-today"].contains(&record.command_id.as_str())), "{kept:?}");
    let live = pb::SellChips { header: Some(pb::CommandHeader { command_id: "live-sale".into(), ..Default::default() }), cage_id: "C3".into(), player_id: "P1".into(), chips: vec![chips(100, 5)], supervisor_id: None };
    admin.cage.sell_chips(live).await?;
    let events = all_events(&mut admin, pb::EventFilter::default()).await?;
    assert!(events.iter().all(|event| !event.stream_id.starts_with("cage-G")), "no refused import moved anything");
    server.stop().await
}
