//! The hash chain and its verifier; tampering done as a superuser would (disable the trigger,
//! change rows, re-enable), and what an external digest adds.

use chipledger_store::*;

use crate::*;

/// Ten events in three appends on two streams.
async fn ten_events(db: &TestDb) -> anyhow::Result<()> {
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(4, "c1"))).await?;
    db.store.append(&one_stream("player-P1", ExpectedVersion::NoStream, buy_ins(3, "c2"))).await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(4), buy_ins(3, "c3"))).await?;
    Ok(())
}

async fn tamper(db: &TestDb, statements: &[&'static str]) -> anyhow::Result<()> {
    let mut superuser = admin(&db.admin_url).await?;
    sqlx::query("ALTER TABLE events DISABLE TRIGGER USER").execute(&mut superuser).await?;
    sqlx::query("ALTER TABLE postings DISABLE TRIGGER USER").execute(&mut superuser).await?;
    for statement in statements {
        sqlx::query(*statement).execute(&mut superuser).await?;
    }
    sqlx::query("ALTER TABLE events ENABLE TRIGGER USER").execute(&mut superuser).await?;
    sqlx::query("ALTER TABLE postings ENABLE TRIGGER USER").execute(&mut superuser).await?;
    Ok(())
}

async fn expect_bad(db: &TestDb, position: i64, problem: ChainProblem) -> anyhow::Result<()> {
    let report = db.store.verify_chain(PROPERTY).await?;
    assert!(!report.ok, "{report:?}");
    assert_eq!((report.first_bad_position, report.problem), (Some(position), Some(problem)));
    Ok(())
}

#[tokio::test]
async fn an_untouched_chain_verifies_and_matches_the_head() -> anyhow::Result<()> {
    let db = fresh("chain_ok").await?;
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    ten_events(&db).await?;
    let report = db.store.verify_chain(PROPERTY).await?;
    assert!(report.ok, "{report:?}");
    assert_eq!((report.events_checked, report.head.position), (10, 10));
    let digest = db.store.chain_digest(PROPERTY).await?;
    assert!(db.store.verify_digest(&digest).await?);
    assert_eq!(canonical_json(&serde_json::json!({"b": 1, "a": [true, null, "x"]}))?, br#"{"a":[true,null,"x"],"b":1}"#);
    Ok(())
}

#[tokio::test]
async fn tamper_flipped_byte_in_payload_is_found_at_its_position() -> anyhow::Result<()> {
    let db = fresh("chain_flip").await?;
    ten_events(&db).await?;
    tamper(&db, &["UPDATE events SET payload = jsonb_set(payload, '{amount_cents}', '109') WHERE position = 6"]).await?;
    expect_bad(&db, 6, ChainProblem::HashMismatch).await
}

#[tokio::test]
async fn tamper_changed_posting_is_found_at_its_event() -> anyhow::Result<()> {
    let db = fresh("chain_posting").await?;
    ten_events(&db).await?;
    tamper(&db, &["UPDATE postings SET account = 'table/T1/seat/2' WHERE position = 3 AND posting_index = 1"]).await?;
    expect_bad(&db, 3, ChainProblem::HashMismatch).await
}

#[tokio::test]
async fn tamper_deleted_row_is_found_as_a_missing_position() -> anyhow::Result<()> {
    let db = fresh("chain_delete").await?;
    ten_events(&db).await?;
    tamper(&db, &["DELETE FROM events WHERE position = 5", "DELETE FROM postings WHERE position = 5"]).await?;
    expect_bad(&db, 5, ChainProblem::MissingPosition).await
}

#[tokio::test]
async fn tamper_swapped_rows_are_found_at_the_first_of_them() -> anyhow::Result<()> {
    let db = fresh("chain_swap").await?;
    ten_events(&db).await?;
    tamper(
        &db,
        &[
            "UPDATE events SET position = 1000 WHERE position = 4",
            "UPDATE events SET position = 4 WHERE position = 7",
            "UPDATE events SET position = 7 WHERE position = 1000",
            "UPDATE postings SET position = 1000 WHERE position = 4",
            "UPDATE postings SET position = 4 WHERE position = 7",
            "UPDATE postings SET position = 7 WHERE position = 1000",
        ],
    )
    .await?;
    expect_bad(&db, 4, ChainProblem::HashMismatch).await
}

#[tokio::test]
async fn tamper_truncated_tail_is_found_against_the_head_and_a_rewritten_head_by_a_digest() -> anyhow::Result<()> {
    let db = fresh("chain_truncate").await?;
    ten_events(&db).await?;
    let saved_outside = db.store.chain_digest(PROPERTY).await?;
    tamper(&db, &["DELETE FROM events WHERE position > 8", "DELETE FROM postings WHERE position > 8"]).await?;
    expect_bad(&db, 9, ChainProblem::TruncatedTail).await?;
    // A superuser who also rewinds the head makes the chain self-consistent again: only a
    // digest saved outside the database still tells.
    tamper(
        &db,
        &["UPDATE property_heads h SET last_position = 8, last_hash = e.hash FROM events e \
           WHERE e.property = h.property AND e.position = 8"],
    )
    .await?;
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    assert!(!db.store.verify_digest(&saved_outside).await?);
    Ok(())
}
