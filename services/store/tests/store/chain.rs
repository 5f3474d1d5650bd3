//! The hash chain and its verifier; tampering done as a superuser would (disable the trigger,
//! change rows, re-enable), and what an external digest adds.

use chipledger_store::chain::Canonical;
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
    assert_eq!(jcs(&serde_json::json!({"b": 1, "a": [true, null, "x"]}))?, br#"{"a":[true,null,"x"],"b":1}"#);
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

#[tokio::test]
async fn canonical_json_straight_from_postgres_text_is_the_definition() -> anyhow::Result<()> {
    let db = fresh("chain_canonical").await?;
    let values = [
        serde_json::json!({"to": "x", "from": "y", "note": "é\"\\\u{1}", "amount_cents": 5}),
        serde_json::json!({"ab ": 1, "ab": 2, "ab!": 3, "a": {"zz": [], "z": {}, "": null}}),
        serde_json::json!({"b": 1, "a": 2, "B": 3, "é": 4, "z": 5, "日本": {"x": [{"d": 1, "c": [2, {"b": null}]}]}}),
        serde_json::json!({"text": "日本語 \u{7f} \u{1f} \t\n\r\u{8}\u{c} / <> \u{2028} 🂡", "space": " : , "}),
        serde_json::json!([-9_007_199_254_740_991_i64, 9_007_199_254_740_991_i64, 0, -1, true, false, null, "", [[]], {}]),
        // Keys ordered by UTF-16 code units (RFC 8785): U+FF61 before U+1F600 (a surrogate pair).
        serde_json::json!({"\u{ff61}": 1, "\u{1f600}": 2, "\u{e000}": 3, "z": 4}),
        serde_json::json!("just a string"),
        serde_json::json!(42),
    ];
    for value in values {
        let text: String = sqlx::query_scalar("SELECT $1::jsonb::text").bind(&value).fetch_one(db.store.pool()).await?;
        assert_eq!(
            chipledger_store::chain::canonical_from_jsonb_text(text.as_bytes(), Canonical::Jcs),
            Some(jcs(&value)?),
            "{text}"
        );
        // The definition is RFC 8785: an off-the-shelf implementation writes the same bytes.
        assert_eq!(jcs(&value)?, serde_json_canonicalizer::to_vec(&value)?, "{text}");
    }
    // What the shortcut leaves to the definition: a key with an escape, a float, malformed text.
    for text in [r#"{"a\"b": 1}"#, "[1.5]", "1e3", r#"{"a": 1"#, "[1, 2] x", "", "[9007199254740992]", "-0"] {
        assert_eq!(chipledger_store::chain::canonical_from_jsonb_text(text.as_bytes(), Canonical::Jcs), None, "{text}");
    }
    // Integers beyond 2^53 - 1 are refused by the append: no JCS verifier reads them exactly.
    let mut huge = movement("Note", "house/bank", "table/T1/seat/1", 5, "c9");
    huge.payload = serde_json::json!({"slip_no": u64::MAX});
    let error = db.store.append(&one_stream("table-T1", ExpectedVersion::Any, vec![huge])).await.unwrap_err();
    assert!(matches!(&error, StoreError::InvalidRequest(message) if message.contains("2^53")), "{error:?}");
    Ok(())
}

#[tokio::test]
async fn json_the_shortcut_leaves_to_the_definition_verifies_and_its_tampering_is_found() -> anyhow::Result<()> {
    let db = fresh("chain_fallback").await?;
    ten_events(&db).await?;
    let mut odd = movement("Note", "house/bank", "table/T1/seat/1", 5, "c4");
    odd.payload = serde_json::json!({"a\"b": 1, "a": 2, "nested": {"x\\y": [1, 2]}});
    db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(7), vec![odd])).await?;
    let report = db.store.verify_chain(PROPERTY).await?;
    assert!(report.ok, "{report:?}");
    assert_eq!(report.events_checked, 11);
    tamper(&db, &["UPDATE events SET payload = jsonb_set(payload, '{a}', '3') WHERE position = 11"]).await?;
    expect_bad(&db, 11, ChainProblem::HashMismatch).await
}

#[tokio::test]
async fn tamper_changed_metadata_is_found_at_its_position() -> anyhow::Result<()> {
    let db = fresh("chain_metadata").await?;
    ten_events(&db).await?;
    tamper(&db, &["UPDATE events SET metadata = jsonb_set(metadata, '{actor_id}', '\"dealer-8\"') WHERE position = 2"]).await?;
    expect_bad(&db, 2, ChainProblem::HashMismatch).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn verification_during_appends_sees_one_snapshot_of_events_and_head() -> anyhow::Result<()> {
    let db = fresh("chain_concurrent").await?;
    ten_events(&db).await?;
    let writer = tokio::spawn({
        let store = db.store.clone();
        async move {
            for i in 0..150 {
                store.append(&one_stream("table-T9", ExpectedVersion::Any, buy_ins(2, &format!("w{i}")))).await?;
            }
            anyhow::Ok(())
        }
    });
    let mut verifications = 0;
    while !writer.is_finished() || verifications == 0 {
        let report = db.store.verify_chain(PROPERTY).await?;
        assert!(report.ok, "{report:?}");
        assert_eq!(report.events_checked, report.head.position);
        verifications += 1;
    }
    writer.await??;
    let report = db.store.verify_chain(PROPERTY).await?;
    assert_eq!((report.ok, report.events_checked), (true, 10 + 150 * 2));
    Ok(())
}

#[tokio::test]
async fn pages_checked_apart_find_the_first_problem_across_page_boundaries_even_on_one_connection() -> anyhow::Result<()> {
    let db = fresh("chain_pages").await?;
    let page = chipledger_store::chain::VERIFY_PAGE_POSITIONS;
    let events = 2 * page + page / 4;
    let per_append = (events / 3) as usize;
    for i in 0..3 {
        db.store.append(&one_stream("table-T1", ExpectedVersion::Any, buy_ins(per_append, &format!("p{i}")))).await?;
    }
    let one_connection = Store::connect_with(Store::app_options(&db.admin_url, APP_PASSWORD)?, 1).await?;
    for store in [&db.store, &one_connection] {
        let report = tokio::time::timeout(std::time::Duration::from_secs(120), store.verify_chain(PROPERTY)).await??;
        assert!(report.ok, "{report:?}");
        assert_eq!(report.events_checked, events);
    }
    // Each tampering is earlier than the last, so each becomes the first problem.
    let third_page =
        format!("UPDATE events SET payload = jsonb_set(payload, '{{amount_cents}}', '1') WHERE position = {}", 2 * page + 1);
    let second_page_first = format!("DELETE FROM events WHERE position = {}", page + 1);
    let first_page_last = format!("DELETE FROM events WHERE position = {page}");
    let mut superuser = admin(&db.admin_url).await?;
    sqlx::query("ALTER TABLE events DISABLE TRIGGER USER").execute(&mut superuser).await?;
    for (statement, position, problem) in [
        (third_page, 2 * page + 1, ChainProblem::HashMismatch),
        (second_page_first, page + 1, ChainProblem::MissingPosition),
        (first_page_last, page, ChainProblem::MissingPosition),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement)).execute(&mut superuser).await?;
        expect_bad(&db, position, problem).await?;
        let report = one_connection.verify_chain(PROPERTY).await?;
        assert_eq!(report.first_bad_position, Some(position));
        assert_eq!(report.events_checked, position - 1);
    }
    sqlx::query("ALTER TABLE events ENABLE TRIGGER USER").execute(&mut superuser).await?;
    Ok(())
}
