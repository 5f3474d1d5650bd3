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

/// The stored reply is bound to the chain by its digest, which the database computes as the
/// verifier reads the command row: a reply changed alone (its outcome untouched) is found at
/// the last event of its append.
#[tokio::test]
async fn tamper_a_reply_changed_alone_is_found_at_the_last_event_of_its_append() -> anyhow::Result<()> {
    let db = fresh("chain_reply").await?;
    ten_events(&db).await?;
    let mut request = one_stream("table-T1", ExpectedVersion::Exact(7), buy_ins(2, "c4"));
    request.commands = vec![command("c4", "buy in twice")];
    request.reply = b"two buy-ins recorded".to_vec();
    db.store.append(&request).await?;
    assert!(db.store.verify_chain(PROPERTY).await?.ok);
    tamper(
        &db,
        &[
            "ALTER TABLE commands DISABLE TRIGGER USER",
            "UPDATE commands SET reply = 'two buy-ins refused'::bytea WHERE command_id = 'c4'",
            "ALTER TABLE commands ENABLE TRIGGER USER",
        ],
    )
    .await?;
    expect_bad(&db, 12, ChainProblem::HashMismatch).await
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
        // An event to append is serde_json's text of its type (`EventJson`): the same shortcut
        // takes it to the same bytes, with no decoded value on the way.
        assert_eq!(
            chipledger_store::chain::canonical_from_jsonb_text(value.to_string().as_bytes(), Canonical::Jcs),
            Some(jcs(&value)?),
            "{value}"
        );
    }
    // What the shortcut leaves to the definition: a key with an escape, a float, malformed text.
    for text in [r#"{"a\"b": 1}"#, r#"{"a": 1, "a": 2}"#, "[1.5]", "1e3", r#"{"a": 1"#, "[1, 2] x", "", "[9007199254740992]", "-0", "01", "[-007]", r#"{"a": tru}"#] {
        assert_eq!(chipledger_store::chain::canonical_from_jsonb_text(text.as_bytes(), Canonical::Jcs), None, "{text}");
    }
    // Integers beyond 2^53 - 1 are refused by the append: no JCS verifier reads them exactly.
    let mut huge = movement("Note", "house/bank", "table/T1/seat/1", 5, "c9");
    huge.payload = serde_json::json!({"slip_no": u64::MAX}).into();
    let error = db.store.append(&one_stream("table-T1", ExpectedVersion::Any, vec![huge])).await.unwrap_err();
    assert!(matches!(&error, StoreError::InvalidRequest(message) if message.contains("2^53")), "{error:?}");
    Ok(())
}

#[tokio::test]
async fn json_the_shortcut_leaves_to_the_definition_verifies_and_its_tampering_is_found() -> anyhow::Result<()> {
    let db = fresh("chain_fallback").await?;
    ten_events(&db).await?;
    let mut odd = movement("Note", "house/bank", "table/T1/seat/1", 5, "c4");
    odd.payload = serde_json::json!({"a\"b": 1, "a": 2, "nested": {"x\\y": [1, 2]}}).into();
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

/// The format 1 body (chain.rs, "Format 1"), written here from the documented layout.
fn v1_body(stream: &str, event: &NewEvent) -> anyhow::Result<Vec<u8>> {
    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(bytes);
    }
    let mut out = b"chipledger.event.v1".to_vec();
    put(&mut out, PROPERTY.as_bytes());
    put(&mut out, stream.as_bytes());
    out.extend_from_slice(event.event_id.as_bytes());
    put(&mut out, event.event_type.as_bytes());
    out.extend_from_slice(&event.schema_version.to_be_bytes());
    put(&mut out, &chipledger_store::chain::canonical_json_v1(&serde_json::from_str(event.payload.as_str())?)?);
    put(&mut out, &chipledger_store::chain::canonical_json_v1(&serde_json::to_value(&event.metadata)?)?);
    out.extend_from_slice(&(event.postings.len() as u32).to_be_bytes());
    for posting in &event.postings {
        put(&mut out, posting.account.as_bytes());
        out.extend_from_slice(&posting.amount_cents.to_be_bytes());
    }
    Ok(out)
}

/// A database an 0006 release filled (format 1 events through its own append function, a
/// command, an unchained rejection) is migrated: its chain still verifies, new events continue
/// it in format 2, and tampering on either side of the change is found.
#[tokio::test]
async fn format_1_events_keep_verifying_after_the_upgrade_and_format_2_continues_their_chain() -> anyhow::Result<()> {
    let server = chipledger_postgres::TestPostgres::shared().await?;
    let admin_url = server.fresh_database("chain_upgrade").await?;
    Store::migrate_to(&admin_url, 6).await?;
    let mut superuser = admin(&admin_url).await?;
    for (index, stream) in ["table-T1", "player-P1"].iter().enumerate() {
        let events = buy_ins(2, &format!("old-{index}"));
        let bodies: Vec<Vec<u8>> = events.iter().map(|event| v1_body(stream, event)).collect::<Result<_, _>>()?;
        let postings: Vec<(i32, i16, String, i64)> = events
            .iter()
            .enumerate()
            .flat_map(|(e, event)| {
                event.postings.iter().enumerate().map(move |(i, p)| (e as i32 + 1, i as i16, p.account.clone(), p.amount_cents))
            })
            .collect();
        let metadata: Vec<serde_json::Value> =
            events.iter().map(|event| serde_json::to_value(&event.metadata)).collect::<Result<_, _>>()?;
        sqlx::query(
            "SELECT * FROM chipledger_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)",
        )
        .bind(PROPERTY)
        .bind(uuid::Uuid::new_v4())
        .bind(vec![format!("old-{index}")])
        .bind(vec![request_hash(b"old").to_vec()])
        .bind(b"old reply".to_vec())
        .bind(vec![stream.to_string()])
        .bind(vec![-1i64])
        .bind(vec![1i32; events.len()])
        .bind(events.iter().map(|event| event.event_id).collect::<Vec<_>>())
        .bind(events.iter().map(|event| event.event_type.clone()).collect::<Vec<_>>())
        .bind(vec![1i16; events.len()])
        .bind(events.iter().map(|event| serde_json::from_str::<serde_json::Value>(event.payload.as_str()).unwrap()).collect::<Vec<_>>())
        .bind(metadata)
        .bind(bodies)
        .bind(postings.iter().map(|p| p.0).collect::<Vec<_>>())
        .bind(postings.iter().map(|p| p.1).collect::<Vec<_>>())
        .bind(postings.iter().map(|p| p.2.clone()).collect::<Vec<_>>())
        .bind(postings.iter().map(|p| p.3).collect::<Vec<_>>())
        .bind(Vec::<serde_json::Value>::new())
        .execute(&mut superuser)
        .await?;
    }
    sqlx::raw_sql(
        "INSERT INTO rejections (property, command_id, reason_code, rule_id, numbers, detail, actor_id, actor_role, streams, request) \
         VALUES ('casino-1', 'old-refused', 'RATHOLING_FORBIDDEN', 'R-STAKE-2', '[]', '', 'd', 'Dealer', '{}', '{}')",
    )
    .execute(&mut superuser)
    .await?;

    let store = migrated_store(&admin_url).await?;
    let report = store.verify_log(PROPERTY, &[], &[]).await?;
    assert!(report.ok(), "{report:?}");
    assert_eq!((report.chain.events_checked, report.commands_checked, report.refusals_checked), (4, 2, 0));
    let mut request = one_stream("table-T1", ExpectedVersion::Exact(2), buy_ins(3, "new-1"));
    request.commands = vec![command("new-1", "new")];
    store.append(&request).await?;
    let formats: Vec<i16> = sqlx::query_scalar("SELECT chain_format FROM events ORDER BY position").fetch_all(&mut superuser).await?;
    assert_eq!(formats, vec![1, 1, 1, 1, 2, 2, 2]);
    let report = store.verify_log(PROPERTY, &[], &[]).await?;
    assert!(report.ok(), "{report:?}");
    assert_eq!((report.chain.events_checked, report.commands_checked), (7, 3));
    assert_eq!(store.rejections(PROPERTY, 0, 10).await?[0].refusal_seq, None, "recorded before refusals were chained");

    sqlx::raw_sql("ALTER TABLE events DISABLE TRIGGER USER").execute(&mut superuser).await?;
    // A format 2 entry passed off as format 1 comes after format 2: refused.
    sqlx::raw_sql("UPDATE events SET chain_format = 1 WHERE position = 6").execute(&mut superuser).await?;
    let report = store.verify_chain(PROPERTY).await?;
    assert_eq!(report.first_bad_position, Some(6), "{report:?}");
    sqlx::raw_sql("UPDATE events SET chain_format = 2 WHERE position = 6").execute(&mut superuser).await?;
    assert!(store.verify_chain(PROPERTY).await?.ok);
    // A changed format 1 event is found at its position.
    sqlx::raw_sql("UPDATE events SET payload = jsonb_set(payload, '{amount_cents}', '1') WHERE position = 2")
        .execute(&mut superuser)
        .await?;
    expect_bad(&TestDb { admin_url, store }, 2, ChainProblem::HashMismatch).await
}

/// A third party recomputes every hash from the stored rows with an off-the-shelf RFC 8785
/// library and the format as documented (chain.rs): an entry is a plain JSON object.
#[tokio::test]
async fn an_off_the_shelf_jcs_library_recomputes_every_stored_hash_from_the_documented_format() -> anyhow::Result<()> {
    use sha2::Digest;
    let db = fresh("chain_third_party").await?;
    let mut first = one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(2, "c1"));
    first.commands = vec![command("c1", "one"), command("c0", "zero")];
    first.reply = b"the reply".to_vec();
    db.store.append(&first).await?;
    let mut odd = movement("Note", "house/bank", "table/T1/seat/1", 5, "c2");
    odd.payload = serde_json::json!({"\u{1f600}": "emoji key", "\u{ff61}": [1, -2], "a\"b": {"z": null, "y": true}}).into();
    db.store.append(&one_stream("table-T1", ExpectedVersion::Exact(2), vec![odd])).await?;
    let mut superuser = admin(&db.admin_url).await?;
    type EventRow = (i64, String, i64, uuid::Uuid, String, i16, serde_json::Value, serde_json::Value, i64, Vec<u8>);
    let rows: Vec<EventRow> = sqlx::query_as(
        "SELECT position, stream, stream_version, event_id, event_type, schema_version, payload, metadata, \
         (extract(epoch FROM recorded_at) * 1000000)::bigint, hash FROM events ORDER BY position",
    )
    .fetch_all(&mut superuser)
    .await?;
    let mut previous = hex::encode(GENESIS_HASH);
    for (position, stream, stream_version, event_id, event_type, schema_version, payload, metadata, micros, hash) in rows {
        let postings: Vec<(String, i64)> =
            sqlx::query_as("SELECT account, amount_cents FROM postings WHERE position = $1 ORDER BY posting_index")
                .bind(position)
                .fetch_all(&mut superuser)
                .await?;
        let commands: Vec<(String, Vec<u8>, uuid::Uuid, Vec<u8>)> = sqlx::query_as(
            "SELECT command_id, request_hash, append_id, reply FROM commands WHERE last_position = $1 ORDER BY command_id",
        )
        .bind(position)
        .fetch_all(&mut superuser)
        .await?;
        let mut body = serde_json::json!({
            "event_id": event_id.to_string(), "event_type": event_type, "metadata": metadata, "payload": payload,
            "postings": postings.iter().map(|(account, amount)| serde_json::json!({"account": account, "amount_cents": amount})).collect::<Vec<_>>(),
            "property": PROPERTY, "schema_version": schema_version, "stream": stream,
        });
        if let Some((_, _, append_id, reply)) = commands.first() {
            body["append"] = serde_json::json!({
                "append_id": append_id.to_string(),
                "commands": commands.iter().map(|(id, hash, _, _)| serde_json::json!({"command_id": id, "request_sha256": hex::encode(hash)})).collect::<Vec<_>>(),
                "reply_sha256": hex::encode(sha2::Sha256::digest(reply)),
            });
        }
        let entry = serde_json::json!({
            "body": body, "format": 2, "kind": "event", "position": position, "prev": previous,
            "recorded_at_micros": micros, "stream_version": stream_version,
        });
        let recomputed = sha2::Sha256::digest(serde_json_canonicalizer::to_vec(&entry)?);
        assert_eq!(hex::encode(recomputed), hex::encode(&hash), "position {position}");
        previous = hex::encode(hash);
    }
    Ok(())
}
