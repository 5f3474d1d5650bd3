//! Issue 11: events and postings partitioned by month, partitions made ahead, the append-only
//! guarantees on every partition, an append past the last partition refused (typed, nothing
//! recorded), and the archive of an old partition with a signed digest that verifies (and
//! fails once the file is touched), never dropped without it.
//!
//! The clock. recorded_at is the database's: `greatest(clock_timestamp(), the property head's
//! last_recorded_at)` under the head lock (the guard that keeps it monotone per property). So a
//! test moves a property to another month the way the guard itself would after the database's
//! clock got there: as the superuser it sets the head's last_recorded_at to that moment. The
//! production function is the one under test, unchanged; the application role cannot do this
//! (it has no privilege on property_heads: privileges.rs).

use chipledger_store::partition::{ArchiveAdmin, ArchiveError, PartitionState};
use chipledger_store::*;
use sqlx::Connection;
use time::OffsetDateTime;

use crate::*;

/// Move `property`'s clock (see the module doc) to `at`.
async fn clock_at(admin_url: &str, property: &str, at: OffsetDateTime) -> anyhow::Result<()> {
    let mut superuser = admin(admin_url).await?;
    sqlx::query(
        "INSERT INTO property_heads (property, last_recorded_at) VALUES ($1, $2) \
         ON CONFLICT (property) DO UPDATE SET last_recorded_at = EXCLUDED.last_recorded_at",
    )
    .bind(property)
    .bind(at)
    .execute(&mut superuser)
    .await?;
    Ok(())
}

/// Where each event of the property is: (position, partition table), by position.
async fn placement(admin_url: &str, property: &str) -> anyhow::Result<Vec<(i64, String)>> {
    let mut superuser = admin(admin_url).await?;
    Ok(sqlx::query_as("SELECT position, tableoid::regclass::text FROM events WHERE property = $1 ORDER BY position")
        .bind(property)
        .fetch_all(&mut superuser)
        .await?)
}

fn in_property(property: &str, mut request: AppendRequest) -> AppendRequest {
    request.property = property.into();
    request
}

fn until_of(partitions: &[chipledger_store::partition::PartitionInfo]) -> OffsetDateTime {
    partitions.last().expect("partitions exist").until_at
}

/// The insider pass: a superuser detached and dropped a month ahead of now; it was still
/// listed as attached, and `partitions ensure` made nothing (it went by the last month listed),
/// so every append in that month would have failed. It is listed as missing, made again by the
/// next ensure, and a month only detached is refused, not taken back.
#[tokio::test]
async fn a_month_ahead_dropped_behind_the_service_is_listed_missing_and_made_again() -> anyhow::Result<()> {
    let db = fresh("partitions_dropped_ahead").await?;
    let mut partitions = ArchiveAdmin::connect(&db.admin_url).await?;
    let last = partitions.list().await?.pop().expect("months ahead");
    let mut superuser = admin(&db.admin_url).await?;
    for (table, parent) in [(&last.events_table, "events"), (&last.postings_table, "postings")] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ALTER TABLE {parent} DETACH PARTITION {table}; DROP TABLE {table}")))
            .execute(&mut superuser)
            .await?;
    }
    let listed = partitions.list().await?;
    assert_eq!(listed.last().map(|p| p.state), Some(PartitionState::Missing), "{listed:?}");
    assert_eq!(db.store.ensure_partitions(partition::DEFAULT_MONTHS_AHEAD).await?, 2, "both tables made again");
    assert_eq!(partitions.list().await?.last().map(|p| p.state), Some(PartitionState::Attached));
    // Detached only: refused by name, nothing made.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ALTER TABLE events DETACH PARTITION {}", last.events_table))).execute(&mut superuser).await?;
    assert_eq!(partitions.list().await?.last().map(|p| p.state), Some(PartitionState::Missing));
    let refused = db.store.ensure_partitions(partition::DEFAULT_MONTHS_AHEAD).await.expect_err("a detached month");
    assert!(refused.to_string().contains("detached"), "{refused}");
    Ok(())
}

#[tokio::test]
async fn a_month_boundary_creates_the_next_partition_and_appends_across_it_keep_positions_and_the_chain() -> anyhow::Result<()> {
    let db = fresh("partitions_boundary").await?;
    let mut partitions = ArchiveAdmin::connect(&db.admin_url).await?;
    let before = partitions.list().await?;
    // The cut-over partition (everything before next month) and three months ahead.
    assert_eq!(before.len(), 1 + partition::DEFAULT_MONTHS_AHEAD as usize, "{before:?}");
    assert!(before[0].label.starts_with("before-") && before[0].from_at.is_none(), "{before:?}");
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "c1"))).await?;

    // The last microsecond of the last month made ahead: appends go there.
    let boundary = until_of(&before);
    clock_at(&db.admin_url, PROPERTY, boundary - time::Duration::microseconds(1)).await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(2), buy_ins(3, "c2"))).await?;
    // The month boundary is near now: the next partitions are made (the service does this daily).
    let created = db.store.ensure_partitions(partition::DEFAULT_MONTHS_AHEAD).await?;
    assert_eq!(created, partition::DEFAULT_MONTHS_AHEAD, "months created ahead of the log's latest time");
    let after = partitions.list().await?;
    assert_eq!(after.len(), before.len() + created as usize);
    let next = after.iter().find(|p| p.from_at == Some(boundary)).expect("the month after the boundary");
    assert_eq!(next.state, PartitionState::Attached);
    assert_eq!(db.store.ensure_partitions(partition::DEFAULT_MONTHS_AHEAD).await?, 0, "nothing more to make");

    // Across the boundary: the same stream, the same chain.
    clock_at(&db.admin_url, PROPERTY, boundary).await?;
    let outcome = db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(5), buy_ins(2, "c3"))).await?;
    assert_eq!((outcome.first_position, outcome.last_position), (6, 7));
    let placed = placement(&db.admin_url, PROPERTY).await?;
    assert_eq!(placed.iter().map(|(position, _)| *position).collect::<Vec<_>>(), (1..=7).collect::<Vec<_>>(), "dense");
    let last_before = &before.last().unwrap().events_table;
    assert_eq!(placed[0].1, before[0].events_table);
    assert!(placed[2..5].iter().all(|(_, table)| table == last_before), "{placed:?}");
    assert!(placed[5..].iter().all(|(_, table)| *table == next.events_table), "{placed:?}");
    let report = db.store.verify_chain(PROPERTY).await?;
    assert!(report.ok, "{report:?}");
    assert_eq!((report.events_checked, report.head.position, report.anchor), (7, 7, None));
    assert_eq!(db.store.read_stream(PROPERTY, "table-T1", 0, 100).await?.len(), 7);
    assert_eq!(db.store.balances_sum(PROPERTY, AsOf::Head).await?, 0);
    assert_eq!(
        db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Head).await?,
        (100 + 101) + (100 + 101 + 102) + (100 + 101)
    );
    // Postings went to the same month as their events.
    let mut superuser = admin(&db.admin_url).await?;
    let misplaced: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM postings p JOIN events e ON e.property = p.property AND e.position = p.position \
         WHERE p.recorded_at <> e.recorded_at",
    )
    .fetch_one(&mut superuser)
    .await?;
    assert_eq!(misplaced, 0);
    Ok(())
}

#[tokio::test]
async fn an_append_past_the_last_partition_is_a_typed_error_and_records_nothing() -> anyhow::Result<()> {
    let db = fresh("partitions_missing").await?;
    let mut partitions = ArchiveAdmin::connect(&db.admin_url).await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(1, "c1"))).await?;
    let until = until_of(&partitions.list().await?);
    clock_at(&db.admin_url, PROPERTY, until).await?;
    let mut request = one_stream("table-T1", ExpectedVersion::Exact(1), buy_ins(2, "c2"));
    request.commands = vec![command("c2", "r2")];
    let error = db.store.append(&request).await.expect_err("no partition holds this month");
    let until_micros = (until.unix_timestamp_nanos() / 1000) as i64;
    match error {
        StoreError::NoPartition { recorded_at_micros: Some(at), partitions_until_micros: Some(end) } => {
            assert_eq!(end, until_micros);
            assert!(at >= end, "{at} < {end}");
        }
        other => panic!("expected NoPartition, got {other:?}"),
    }
    // Nothing recorded: head, stream, command, events.
    assert_eq!(db.store.chain_digest(PROPERTY).await?.position, 1);
    assert_eq!(db.store.stream_version(PROPERTY, "table-T1").await?, 1);
    assert!(db.store.recorded_command(PROPERTY, "c2").await?.is_none());
    assert_eq!(db.store.read_all(PROPERTY, 0, 10).await?.len(), 1);
    // Through a caller's transaction too.
    let mut tx = db.store.begin().await?;
    assert!(matches!(tx.append(&request).await, Err(StoreError::NoPartition { .. })));
    tx.rollback().await?;
    // Once the month exists, the same command is decided and recorded (not a replay).
    assert!(db.store.ensure_partitions(1).await? >= 1);
    let outcome = db.store.append(&request).await?;
    assert!(!outcome.replayed);
    assert_eq!((outcome.first_position, outcome.last_position), (2, 3));
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    Ok(())
}

#[tokio::test]
async fn no_role_updates_deletes_or_truncates_a_partition_and_the_application_role_cannot_detach_or_drop_one() -> anyhow::Result<()> {
    let db = fresh("partitions_privileges").await?;
    let mut partitions = ArchiveAdmin::connect(&db.admin_url).await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "c1"))).await?;
    // A partition made later, by the function the service calls, with rows in it.
    let until = until_of(&partitions.list().await?);
    clock_at(&db.admin_url, PROPERTY, until).await?;
    assert!(db.store.ensure_partitions(1).await? >= 1);
    db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(2), buy_ins(2, "c2"))).await?;
    let listed = partitions.list().await?;
    let with_rows = [&listed[0], listed.iter().find(|p| p.from_at == Some(until)).expect("made later")];
    let mut app = sqlx::PgConnection::connect_with(&Store::app_options(&db.admin_url, APP_PASSWORD)?).await?;
    let mut superuser = admin(&db.admin_url).await?;
    for partition in with_rows {
        let (events, postings) = (&partition.events_table, &partition.postings_table);
        let changes = [
            format!("UPDATE {events} SET event_type = 'Forged'"),
            format!("DELETE FROM {events}"),
            format!("TRUNCATE {events}"),
            format!("UPDATE {postings} SET amount_cents = 0"),
            format!("DELETE FROM {postings}"),
            format!("TRUNCATE {postings}"),
        ];
        let structure = [
            format!("ALTER TABLE events DETACH PARTITION {events}"),
            format!("ALTER TABLE postings DETACH PARTITION {postings}"),
            format!("DROP TABLE {events}"),
            format!("DROP TABLE {postings}"),
            format!("ALTER TABLE {events} DISABLE TRIGGER ALL"),
            format!("SELECT count(*) FROM {events}"),
        ];
        for statement in changes.iter().chain(&structure) {
            let error = sqlx::query(sqlx::AssertSqlSafe(statement.clone())).execute(&mut app).await.expect_err(statement);
            let code = error.as_database_error().and_then(|e| e.code()).map(|c| c.into_owned());
            assert_eq!(code.as_deref(), Some("42501"), "{statement}: {error}");
        }
        for statement in &changes {
            let error =
                sqlx::query(sqlx::AssertSqlSafe(statement.clone())).execute(&mut superuser).await.expect_err(statement);
            assert!(error.to_string().contains("append-only"), "{statement}: {error}");
        }
    }
    assert_eq!(db.store.read_all(PROPERTY, 0, 10).await?.len(), 4);
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    Ok(())
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("chipledger-{name}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Flip one byte inside the first event line's payload amount; returns what was there.
fn tamper(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    let original = std::fs::read(path)?;
    let at = original.windows(b"\"amount_cents\"".len()).position(|w| w == b"\"amount_cents\"").expect("an amount") + 16;
    let mut bytes = original.clone();
    assert!(bytes[at].is_ascii_digit(), "{:?}", String::from_utf8_lossy(&bytes[at - 16..at + 4]));
    bytes[at] = if bytes[at] == b'9' { b'8' } else { bytes[at] + 1 };
    std::fs::write(path, &bytes)?;
    Ok(original)
}

#[tokio::test]
async fn an_archived_partition_s_digest_verifies_a_tampered_one_fails_and_nothing_is_dropped_without_it() -> anyhow::Result<()> {
    let db = fresh("partitions_archive").await?;
    let dir = temp_dir("archive");
    let key = CheckpointKey::load_or_generate(&dir.join("checkpoint.key"))?;
    let mut partitions = ArchiveAdmin::connect(&db.admin_url).await?;
    let other = "casino-2";
    // December 2026 (the real clock when this was written; any month before the cut-over).
    db.store.append(&one_stream("table-A1", ExpectedVersion::NoStream, buy_ins(3, "a1"))).await?;
    db.store.append(&in_property(other, one_stream("table-A1", ExpectedVersion::NoStream, buy_ins(2, "b1")))).await?;
    let first = partitions.list().await?.remove(0);
    let label = first.label.clone();

    // Inside the retention: refused, with the numbers.
    let error = partitions
        .archive(&label, partition::DEFAULT_RETENTION_MONTHS, &dir, &key, OffsetDateTime::now_utc())
        .await
        .expect_err("inside retention");
    assert!(matches!(error, ArchiveError::InsideRetention { retention_months: 84, .. }), "{error}");
    // Never dropped without an archive.
    assert!(matches!(partitions.drop_archived(&label, &[]).await, Err(ArchiveError::NotArchived(_))));

    // Later: the log goes on in the next month, on other streams.
    let later = first.until_at + time::Duration::days(9);
    clock_at(&db.admin_url, PROPERTY, later).await?;
    clock_at(&db.admin_url, other, later).await?;
    db.store.append(&one_stream("table-B1", ExpectedVersion::NoStream, buy_ins(2, "a2"))).await?;
    db.store.append(&in_property(other, one_stream("table-B1", ExpectedVersion::NoStream, buy_ins(1, "b2")))).await?;
    let seat_before = db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Head).await?;
    let operator_now = first.until_at + time::Duration::days(70);

    let signed = partitions.archive(&label, 1, &dir, &key, operator_now).await?;
    let digest = &signed.archive;
    assert_eq!(digest.properties.len(), 2);
    let own = digest.properties.iter().find(|p| p.property == PROPERTY).expect("own property");
    assert_eq!((own.first_position, own.last_position, own.events, own.postings), (1, 3, 3, 6));
    assert_eq!(own.prev_hash, GENESIS_HASH);
    assert!(signed.verify_signature(&[key.public_key()]).is_ok());
    let listed = partitions.list().await?;
    assert_eq!(listed[0].state, PartitionState::Archived);
    // The live log: what is left still verifies, from the anchor, and says so.
    let report = db.store.verify_chain(PROPERTY).await?;
    assert!(report.ok, "{report:?}");
    assert_eq!(report.events_checked, 2);
    assert_eq!(report.anchor.as_ref().map(|a| (a.position, a.hash)), Some((3, own.last_hash)));
    assert_eq!(db.store.read_all(PROPERTY, 0, 10).await?.len(), 2);
    assert_eq!(db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Head).await?, seat_before, "balances carried");
    assert_eq!(db.store.balances_sum(PROPERTY, AsOf::Head).await?, 0);
    assert!(matches!(
        db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Position(2)).await,
        Err(StoreError::Archived { position: 2, archived_through: 3 })
    ));
    let more = db.store.append(&one_stream("table-B1", ExpectedVersion::Exact(2), buy_ins(1, "a3"))).await?;
    assert_eq!(more.first_position, 6);
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    // Archive only once.
    assert!(matches!(partitions.archive(&label, 1, &dir, &key, operator_now).await, Err(ArchiveError::AlreadyArchived(_))));

    let verdict = partitions.verify(&label, &[key.public_key()]).await?;
    assert_eq!(verdict.live_chains.iter().find(|c| c.0 == PROPERTY).map(|c| (c.1, c.2)), Some((3, 6)));
    // Signed by another key than the trusted one: refused.
    let stranger = CheckpointKey::load_or_generate(&dir.join("stranger.key"))?;
    assert!(matches!(partitions.verify(&label, &[stranger.public_key()]).await, Err(ArchiveError::Signature(_))));

    // One byte of an event changed: verify and drop refuse; the byte back: both go through.
    let original = tamper(&verdict.file)?;
    let error = partitions.verify(&label, &[key.public_key()]).await.expect_err("tampered");
    assert!(matches!(error, ArchiveError::File { .. }), "{error}");
    assert!(matches!(partitions.drop_archived(&label, &[key.public_key()]).await, Err(ArchiveError::File { .. })));
    assert_eq!(partitions.list().await?[0].state, PartitionState::Archived, "not dropped");
    std::fs::write(&verdict.file, &original)?;
    partitions.verify(&label, &[key.public_key()]).await?;
    partitions.drop_archived(&label, &[key.public_key()]).await?;
    assert_eq!(partitions.list().await?[0].state, PartitionState::Dropped);
    let mut superuser = admin(&db.admin_url).await?;
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_class WHERE relname = ANY ($1)")
        .bind(vec![first.events_table.clone(), first.postings_table.clone()])
        .fetch_one(&mut superuser)
        .await?;
    assert_eq!(left, 0, "the archived tables are gone");
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    assert!(db.store.verify_chain(other).await?.ok);
    // The anchor is taken with its archive signed by a trusted key (the insiders' pass: a
    // superuser without the key wrote an anchor and an empty document, deleted the log up to
    // it, and verify passed). Signed by a stranger, or not signed at all: not proven.
    let trusted = [key.public_key()];
    assert!(db.store.verify_log(PROPERTY, &[], &trusted).await?.chain.ok);
    let untrusted = db.store.verify_log(PROPERTY, &[], &[stranger.public_key()]).await?.chain;
    assert_eq!(untrusted.first_bad_position, Some(3), "{untrusted:?}");
    assert!(matches!(&untrusted.problem, Some(ChainProblem::NotArchived(why)) if why.contains("trusted key")), "{untrusted:?}");
    let document: String = sqlx::query_scalar("SELECT document FROM archived_partitions").fetch_one(&mut superuser).await?;
    sqlx::query("ALTER TABLE archived_partitions DISABLE TRIGGER USER").execute(&mut superuser).await?;
    sqlx::query("UPDATE archived_partitions SET document = '{}'").execute(&mut superuser).await?;
    let forged = db.store.verify_log(PROPERTY, &[], &trusted).await?.chain;
    assert!(matches!(&forged.problem, Some(ChainProblem::NotArchived(why)) if why.contains("no signed archive")), "{forged:?}");
    assert!(!db.store.verify_chain(PROPERTY).await?.ok, "an anchor without its signed archive proves nothing, whatever key");
    sqlx::query(sqlx::AssertSqlSafe(format!("UPDATE archived_partitions SET document = {}", quote(&document)))).execute(&mut superuser).await?;
    assert!(db.store.verify_log(PROPERTY, &[], &trusted).await?.chain.ok);
    // Balances carried by no archive of the property (the night's pass: a pair added to a
    // partition never archived moved a pocket by $5,000, and verify passed): left out of every
    // balance, and named.
    let before = db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Head).await?;
    sqlx::query(
        "INSERT INTO archived_partitions (from_at, until_at, file_path, file_sha256, document) \
         SELECT from_at, from_at + interval '1 month', '/nowhere', sha256('x'), '{}' FROM log_partitions \
          WHERE from_at NOT IN (SELECT from_at FROM archived_partitions) ORDER BY from_at DESC LIMIT 1",
    )
    .execute(&mut superuser)
    .await?;
    sqlx::query(
        "INSERT INTO archive_balances (property, account, from_at, balance_cents) \
         SELECT $1, account, (SELECT max(from_at) FROM archived_partitions), amount FROM \
         (VALUES ('table/T1/seat/1', 500000::bigint), ('house/patrons', -500000::bigint)) v(account, amount)",
    )
    .bind(PROPERTY)
    .execute(&mut superuser)
    .await?;
    assert_eq!(db.store.balance(PROPERTY, "table/T1/seat/1", AsOf::Head).await?, before, "a forged carried balance is left out");
    assert_eq!(db.store.balances_sum(PROPERTY, AsOf::Head).await?, 0);
    let forged = db.store.verify_log(PROPERTY, &[], &trusted).await?.chain;
    assert!(matches!(&forged.problem, Some(ChainProblem::NotArchived(why)) if why.contains("no archive anchor")), "{forged:?}");
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

/// `text` as an SQL string literal.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[tokio::test]
async fn a_partition_whose_streams_go_on_after_it_stays_live() -> anyhow::Result<()> {
    let db = fresh("partitions_streams").await?;
    let dir = temp_dir("streams");
    let key = CheckpointKey::load_or_generate(&dir.join("checkpoint.key"))?;
    let mut partitions = ArchiveAdmin::connect(&db.admin_url).await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(1, "c1"))).await?;
    let first = partitions.list().await?.remove(0);
    clock_at(&db.admin_url, PROPERTY, first.until_at).await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(1), buy_ins(1, "c2"))).await?;
    let error = partitions
        .archive(&first.label, 1, &dir, &key, first.until_at + time::Duration::days(70))
        .await
        .expect_err("the stream goes on");
    assert!(matches!(&error, ArchiveError::StreamsContinue { streams: 1, example, .. } if example == "casino-1/table-T1"), "{error}");
    assert_eq!(partitions.list().await?[0].state, PartitionState::Attached);
    assert!(std::fs::read_dir(&dir)?.all(|entry| entry.is_ok_and(|e| e.file_name() == "checkpoint.key")), "nothing exported");
    // Not the oldest: refused too.
    let second = partitions.list().await?.remove(1);
    let error = partitions.archive(&second.label, 1, &dir, &key, second.until_at + time::Duration::days(70)).await.expect_err("not oldest");
    assert!(matches!(error, ArchiveError::NotOldest { .. }), "{error}");
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
