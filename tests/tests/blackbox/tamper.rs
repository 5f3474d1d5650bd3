//! Evidence nobody can quietly rewrite: what a database superuser does to the log, and what
//! `VerifyChain` against the checkpoints chipledgerd signed says about it.
//!
//! Every scenario records the same ledger with three signed checkpoints kept outside the
//! database (C1 after P1's buy-in; C2 after P2's buy-in and a refused rathole; C3 after P3's
//! buy-in), then tampers as a superuser who knows the published chain format: rewriting an
//! event and recomputing every later hash and the head is self-consistent, so only the
//! checkpoints tell, and the report names the last one the log still agrees with.

use chipledger_proto::v1 as pb;
use chipledger_store::chain::{self, AppendLink, StoredFields};
use chipledger_tests::{Client, TestServer, error_info, header, principal};
use sqlx::{Connection, PgConnection, Row};

use crate::scenario::{self, TABLE, cash_buy_in};

struct Recorded {
    server: TestServer,
    auditor: Client,
    /// C1, C2, C3 as kept (documents).
    checkpoints: Vec<String>,
    /// Global position of each checkpoint.
    positions: Vec<i64>,
}

async fn sign(auditor: &mut Client) -> anyhow::Result<(String, i64)> {
    let signed = auditor.audit.sign_checkpoint(pb::SignCheckpointRequest::default()).await?.into_inner();
    let kept = chipledger_store::SignedCheckpoint::from_document(&signed.document)?;
    Ok((signed.document, kept.checkpoint.position))
}

async fn recorded(name: &str) -> anyhow::Result<Recorded> {
    let server = TestServer::start(name).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    dealer.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 20_000)).await?;
    let (c1, p1) = sign(&mut auditor).await?;
    dealer.table.buy_in(cash_buy_in("buy-P2", TABLE, 2, "P2", 15_000)).await?;
    let refused = dealer
        .table
        .remove_chips(pb::RemoveChips { header: header("rathole-1"), table_id: TABLE.into(), seat: 1, amount_cents: 5_000, player_id: None })
        .await;
    assert!(refused.is_err(), "ratholing is refused");
    let (c2, p2) = sign(&mut auditor).await?;
    dealer.table.buy_in(cash_buy_in("buy-P3", TABLE, 3, "P3", 18_000)).await?;
    let (c3, p3) = sign(&mut auditor).await?;
    // Kept outside the database: the server's write-once directory has them too.
    let kept = chipledger_store::checkpoint::CheckpointSink::read_all(&server.checkpoint_dir)?;
    assert_eq!(kept.len(), 3, "{kept:?}");
    Ok(Recorded { server, auditor, checkpoints: vec![c1, c2, c3], positions: vec![p1, p2, p3] })
}

async fn verify(recorded: &mut Recorded, checkpoints: bool, projections: bool) -> anyhow::Result<pb::VerifyChainResponse> {
    let request = pb::VerifyChainRequest {
        property_id: String::new(),
        checkpoints: if checkpoints { recorded.checkpoints.clone() } else { Vec::new() },
        projections,
    };
    Ok(recorded.auditor.audit.verify_chain(request).await?.into_inner())
}

/// The projection differences of a reply as (projection, key, stored, recomputed).
fn differences(reply: &pb::VerifyChainResponse) -> Vec<(&str, &str, &str, &str)> {
    reply.projection_differences.iter().map(|d| (d.projection.as_str(), d.key.as_str(), d.stored.as_str(), d.recomputed.as_str())).collect()
}

/// Which of C1, C2, C3 the log agrees with.
fn agreeing(reply: &pb::VerifyChainResponse) -> Vec<bool> {
    reply.checkpoints.iter().map(|verdict| verdict.agrees).collect()
}

/// A superuser connection whose changes the append-only triggers do not stop (this session
/// only: a thorough insider leaves no trigger disabled, which verify would name).
async fn superuser(server: &TestServer) -> anyhow::Result<PgConnection> {
    let mut connection = PgConnection::connect(&server.database_url).await?;
    sqlx::raw_sql("SET session_replication_role = replica").execute(&mut connection).await?;
    Ok(connection)
}

/// What an attacker with the published format does after changing rows: recompute the hash
/// of every event from `from` on (RFC 8785 entries, chain.rs), the outcomes' hashes, the head.
async fn rechain(connection: &mut PgConnection, property: &str, from: i64) -> anyhow::Result<()> {
    let previous: Vec<u8> = sqlx::query_scalar("SELECT hash FROM events WHERE property = $1 AND position = $2")
        .bind(property)
        .bind(from - 1)
        .fetch_one(&mut *connection)
        .await?;
    let mut previous: [u8; 32] = previous.try_into().map_err(|_| anyhow::anyhow!("hash size"))?;
    let rows = sqlx::query(
        "SELECT position, stream, stream_version, event_id, event_type, schema_version, payload, metadata, \
         (extract(epoch FROM recorded_at) * 1000000)::bigint FROM events WHERE property = $1 AND position >= $2 ORDER BY position",
    )
    .bind(property)
    .bind(from)
    .fetch_all(&mut *connection)
    .await?;
    for row in rows {
        let position: i64 = row.get(0);
        let stream: String = row.get(1);
        let event_id: uuid::Uuid = row.get(3);
        let event_type: String = row.get(4);
        let postings: Vec<(String, i64)> = sqlx::query_as(
            "SELECT account, amount_cents FROM postings WHERE property = $1 AND position = $2 ORDER BY posting_index",
        )
        .bind(property)
        .bind(position)
        .fetch_all(&mut *connection)
        .await?;
        let commands: Vec<(String, Vec<u8>, uuid::Uuid, Vec<u8>)> = sqlx::query_as(
            "SELECT command_id, request_hash, append_id, reply FROM commands WHERE property = $1 AND last_position = $2 \
             ORDER BY command_id COLLATE \"C\"",
        )
        .bind(property)
        .bind(position)
        .fetch_all(&mut *connection)
        .await?;
        let fields = StoredFields {
            property,
            stream: &stream,
            event_id: &event_id,
            event_type: &event_type,
            schema_version: row.get(5),
        };
        let link = commands.first().map(|(_, _, append_id, reply)| AppendLink {
            append_id,
            commands: commands.iter().map(|(id, hash, _, _)| (id.as_str(), hash.as_slice())).collect(),
            reply_sha256: chipledger_store::request_hash(reply),
        });
        let payload = chain::jcs(&row.get::<serde_json::Value, _>(6))?;
        let metadata = chain::jcs(&row.get::<serde_json::Value, _>(7))?;
        let mut entry = Vec::new();
        chain::event_entry_start(
            &mut entry,
            &fields,
            &payload,
            &metadata,
            postings.iter().map(|(account, amount)| (account.as_str(), *amount)),
            link.as_ref(),
        )
        .map_err(|error| anyhow::anyhow!(error))?;
        let hash = chain::event_entry_hash(&entry, position, &previous, row.get(8), row.get(2));
        sqlx::query("UPDATE events SET hash = $3 WHERE property = $1 AND position = $2")
            .bind(property)
            .bind(position)
            .bind(hash.to_vec())
            .execute(&mut *connection)
            .await?;
        sqlx::query(
            "UPDATE commands SET outcome = jsonb_set(outcome::jsonb, '{last_hash}', to_jsonb($3::text))::text \
             WHERE property = $1 AND last_position = $2",
        )
        .bind(property)
        .bind(position)
        .bind(hex::encode(hash))
        .execute(&mut *connection)
        .await?;
        previous = hash;
    }
    sqlx::query(
        "UPDATE property_heads h SET last_hash = e.hash FROM events e \
         WHERE h.property = $1 AND e.property = h.property AND e.position = h.last_position",
    )
    .bind(property)
    .execute(&mut *connection)
    .await?;
    Ok(())
}

async fn last_position_of(connection: &mut PgConnection, property: &str, command_id: &str) -> anyhow::Result<i64> {
    Ok(sqlx::query_scalar("SELECT last_position FROM commands WHERE property = $1 AND command_id = $2")
        .bind(property)
        .bind(command_id)
        .fetch_one(connection)
        .await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untouched_log_agrees_with_every_checkpoint() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_none").await?;
    let reply = verify(&mut recorded, true, true).await?;
    assert!(reply.ok, "{reply:?}");
    assert_eq!(agreeing(&reply), vec![true, true, true]);
    assert!(reply.checkpoints.iter().all(|verdict| verdict.signed_by_this_server), "{reply:?}");
    assert_eq!((reply.refusals_checked, reply.projections_checked), (1, true));
    assert!(reply.commands_checked >= 4, "{reply:?}");
    recorded.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_superuser_rewrite_with_every_later_hash_recomputed_is_caught_at_the_first_checkpoint_after_it() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_rewrite").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    let rewritten = last_position_of(&mut connection, &property, "buy-P2").await?;
    assert!(recorded.positions[0] < rewritten && rewritten <= recorded.positions[1]);
    sqlx::query(
        "UPDATE events SET metadata = jsonb_set(metadata, '{actor_id}', '\"someone-else\"') WHERE property = $1 AND position = $2",
    )
    .bind(&property)
    .bind(rewritten)
    .execute(&mut connection)
    .await?;
    rechain(&mut connection, &property, rewritten).await?;

    // The chain alone is self-consistent again: nothing in the database tells.
    let alone = verify(&mut recorded, false, false).await?;
    assert!(alone.ok, "the rewrite recomputed every hash: {alone:?}");
    // The checkpoints kept outside do: C1 still agrees, C2 and C3 do not.
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    assert_eq!(agreeing(&reply), vec![true, false, false], "{reply:?}");
    let last = reply.checkpoints.iter().rev().find(|verdict| verdict.agrees).expect("C1 agrees");
    assert_eq!(last.global_position, recorded.positions[0]);
    assert!(reply.checkpoints[1].reason.contains("hash"), "{:?}", reply.checkpoints[1]);
    recorded.server.stop().await
}

/// The insider pass: a superuser rewrote the head at a position the server had signed and
/// recomputed its hash; the server signed the rewritten head over again, the auditor's fetch
/// kept the forgery and verify against it passed. The server checks the log against the last
/// checkpoint it signed before it signs again, and a replica started after the rewrite (nothing
/// in memory) against the last one kept in the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_signs_nothing_over_a_log_rewritten_where_it_signed() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_resign").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    let head = recorded.positions[2];
    sqlx::query("UPDATE events SET metadata = jsonb_set(metadata, '{actor_id}', '\"someone-else\"') WHERE property = $1 AND position = $2")
        .bind(&property)
        .bind(head)
        .execute(&mut connection)
        .await?;
    rechain(&mut connection, &property, head).await?;
    // The timed round finds it with no signing asked for: the heads did not move, and the log is
    // checked all the same (the evidence pass: a rewrite that kept the positions was refused
    // only after a restart).
    let round = recorded.server.checkpointer.round().await;
    assert!(matches!(round, Err(chipledger_server::checkpoints::CheckpointingError::Disagrees { .. })), "{round:?}");
    let replica = recorded.server.replica().await?;
    let mut replica_auditor = replica.client(principal::AUDITOR).await?;
    for auditor in [&mut recorded.auditor, &mut replica_auditor] {
        let refused = auditor.audit.sign_checkpoint(pb::SignCheckpointRequest::default()).await.expect_err("a rewritten log");
        assert_eq!(refused.code(), tonic::Code::DataLoss, "{refused:?}");
        assert_eq!(error_info(&refused).reason, "LOG_DISAGREES_WITH_CHECKPOINT");
        assert!(refused.message().contains(&format!("position {head}")), "{refused:?}");
    }
    // Nothing more was kept, outside or in the database.
    assert_eq!(chipledger_store::checkpoint::CheckpointSink::read_all(&recorded.server.checkpoint_dir)?.len(), 3);
    let listed = recorded.auditor.audit.list_checkpoints(pb::ListCheckpointsRequest::default()).await?.into_inner().checkpoints;
    assert_eq!(listed.len(), 3, "{listed:?}");
    // A position below 0 is the caller's mistake, named (it had been taken as "all").
    let below = pb::ListCheckpointsRequest { after_position: -1, ..Default::default() };
    let refused = recorded.auditor.audit.list_checkpoints(below).await.expect_err("after_position -1");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("after_position"), "{refused:?}");
    replica.stop().await?;
    recorded.server.stop().await
}

/// The wave-2 pass: refusals recorded after the last checkpoint, deleted with the head set back,
/// and the next refusal under the first one's number: the next checkpoint had vouched for it.
/// The server checks the log against the latest entries it wrote itself too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_signs_nothing_over_entries_it_wrote_and_that_were_taken_out() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_witness").await?;
    let property = recorded.server.property_id.clone();
    let mut dealer = recorded.server.client(principal::DEALER).await?;
    let rathole = |id: &str| pb::RemoveChips { header: header(id), table_id: TABLE.into(), seat: 1, amount_cents: 5_000, player_id: None };
    dealer.table.remove_chips(rathole("rathole-2")).await.expect_err("refused");
    dealer.table.remove_chips(rathole("rathole-3")).await.expect_err("refused");
    let mut connection = superuser(&recorded.server).await?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DELETE FROM commands WHERE property = '{property}' AND command_id IN ('rathole-2', 'rathole-3'); \
         DELETE FROM rejections WHERE property = '{property}' AND command_id IN ('rathole-2', 'rathole-3'); \
         UPDATE property_heads h SET last_refusal_seq = r.refusal_seq, last_refusal_hash = r.hash FROM rejections r \
          WHERE h.property = '{property}' AND r.property = h.property AND r.command_id = 'rathole-1'"
    )))
    .execute(&mut connection)
    .await?;
    dealer.table.remove_chips(rathole("rathole-4")).await.expect_err("refused, under the deleted one's number");
    let refused = recorded.auditor.audit.sign_checkpoint(pb::SignCheckpointRequest::default()).await.expect_err("entries taken out");
    assert_eq!((refused.code(), error_info(&refused).reason.as_str()), (tonic::Code::DataLoss, "LOG_DISAGREES_WITH_CHECKPOINT"), "{refused:?}");
    recorded.server.stop().await
}

/// As a superuser: the log's tail from position `first` cut out (the events, their postings and
/// ids, the command row of `command_id`, the streams' versions) and the head set back to what is
/// left, a log that agrees with itself.
async fn cut_tail(server: &TestServer, property: &str, first: i64, command_id: &str) -> anyhow::Result<()> {
    let mut connection = superuser(server).await?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE TEMP TABLE cut AS SELECT position, stream, stream_version, event_id FROM events WHERE property = '{property}' AND position >= {first}; \
         DELETE FROM postings p USING cut c WHERE p.property = '{property}' AND p.position = c.position; \
         DELETE FROM event_ids e USING cut c WHERE e.property = '{property}' AND e.event_id = c.event_id; \
         DELETE FROM commands WHERE property = '{property}' AND command_id = '{command_id}'; \
         DELETE FROM events e USING cut c WHERE e.property = '{property}' AND e.position = c.position; \
         DELETE FROM streams s WHERE property = '{property}' AND stream IN (SELECT stream FROM cut GROUP BY stream HAVING min(stream_version) = 1); \
         UPDATE streams s SET version = (SELECT min(stream_version) - 1 FROM cut c WHERE c.stream = s.stream) \
          WHERE property = '{property}' AND stream IN (SELECT stream FROM cut); \
         UPDATE property_heads h SET last_position = e.position, last_hash = e.hash, last_recorded_at = e.recorded_at \
           FROM (SELECT position, hash, recorded_at FROM events WHERE property = '{property}' ORDER BY position DESC LIMIT 1) e \
          WHERE h.property = '{property}'"
    )))
    .execute(&mut connection)
    .await?;
    Ok(())
}

/// The wave-2 evidence pass: a signing held up inside its check (a superuser's lock on the
/// refusals) while an acknowledged append was cut out and written over, had then signed the
/// heads as they stood after it, over the cut, and forgotten the cut append unchecked. The heads
/// signed are read before the check, and what was written meanwhile is checked next time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signing_held_up_by_a_lock_signs_nothing_over_what_was_cut_meanwhile() -> anyhow::Result<()> {
    let server = TestServer::start("tamper_signing_race").await?;
    let property = server.property_id.clone();
    let (mut floor, mut dealer, mut cage) = (server.client(principal::FLOOR).await?, server.client(principal::DEALER).await?, server.client(principal::CAGE).await?);
    let auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    sign(&mut auditor.clone()).await?;
    // A refusal after the checkpoint: the next signing reads the refusals it wrote.
    let rathole = pb::RemoveChips { header: header("rathole-r"), table_id: TABLE.into(), seat: 1, amount_cents: 5_000, player_id: None };
    dealer.table.remove_chips(rathole).await.expect_err("refused");
    let mut locker = superuser(&server).await?;
    sqlx::raw_sql("BEGIN; LOCK TABLE rejections IN ACCESS EXCLUSIVE MODE").execute(&mut locker).await?;
    let mut signer = auditor.clone();
    let signing = tokio::spawn(async move { signer.audit.sign_checkpoint(pb::SignCheckpointRequest::default()).await });
    wait_for_a_lock_wait(&server).await?;
    let bought = dealer.table.buy_in(cash_buy_in("buy-victim", TABLE, 4, "P4", 12_000)).await?.into_inner();
    let first = bought.events.first().map_or(0, |event| event.global_position);
    cut_tail(&server, &property, first, "buy-victim").await?;
    let sale = pb::SellChips { header: header("sale-filler"), cage_id: scenario::CAGE.into(), player_id: "P9".into(), chips: vec![chipledger_tests::chips(500, 2)], supervisor_id: None };
    let filled = cage.cage.sell_chips(sale).await?.into_inner();
    assert_eq!(filled.events.first().map(|event| event.global_position), Some(first), "written over the cut");
    sqlx::raw_sql("COMMIT").execute(&mut locker).await?;
    // Whatever the held-up signing answers, it signed nothing at or past the cut, and the next
    // one finds the cut append gone.
    if let Ok(signed) = signing.await? {
        let kept = chipledger_store::SignedCheckpoint::from_document(&signed.into_inner().document)?;
        assert!(kept.checkpoint.position < first, "signed over the cut: {kept:?}");
    }
    let refused = auditor.clone().audit.sign_checkpoint(pb::SignCheckpointRequest::default()).await.expect_err("the cut append is gone");
    assert_eq!((refused.code(), error_info(&refused).reason.as_str()), (tonic::Code::DataLoss, "LOG_DISAGREES_WITH_CHECKPOINT"), "{refused:?}");
    server.stop().await
}

/// Until a backend of the application role waits for a lock.
async fn wait_for_a_lock_wait(server: &TestServer) -> anyhow::Result<()> {
    let mut connection = superuser(server).await?;
    let started = std::time::Instant::now();
    loop {
        let waiting: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND usename = 'chipledger_app'")
            .fetch_one(&mut connection)
            .await?;
        if waiting > 0 {
            return Ok(());
        }
        anyhow::ensure!(started.elapsed() < std::time::Duration::from_secs(8), "no statement waits for the lock");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The operations pass: an acknowledged append after the last checkpoint cut out, the head set
/// back, and the next append written at its positions: the log agrees with itself and its
/// latest entry is the server's own, and the next tick had signed it (and, once refused, a tick
/// after more appends had signed all the same). The server checks every append it wrote since
/// the last checkpoint, and signs nothing more for the property once it found one gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_signs_nothing_over_an_append_cut_out_and_written_over() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_cut_tail").await?;
    let property = recorded.server.property_id.clone();
    let mut dealer = recorded.server.client(principal::DEALER).await?;
    let mut cage = recorded.server.client(principal::CAGE).await?;
    let bought = dealer.table.buy_in(cash_buy_in("buy-P4", TABLE, 4, "P4", 12_000)).await?.into_inner();
    let first = bought.events.first().map_or(0, |event| event.global_position);
    cut_tail(&recorded.server, &property, first, "buy-P4").await?;
    // A sale at the cage (streams the cut did not touch) is written at the positions cut out.
    let sale = |id: &str| pb::SellChips {
        header: header(id),
        cage_id: scenario::CAGE.into(),
        player_id: "P9".into(),
        chips: vec![chipledger_tests::chips(500, 2)],
        supervisor_id: None,
    };
    let sold = cage.cage.sell_chips(sale("sale-after-cut")).await?.into_inner();
    assert_eq!(sold.events.first().map(|event| event.global_position), Some(first), "written over the cut");
    let refused = recorded.auditor.audit.sign_checkpoint(pb::SignCheckpointRequest::default()).await.expect_err("an append it wrote is gone");
    assert_eq!((refused.code(), error_info(&refused).reason.as_str()), (tonic::Code::DataLoss, "LOG_DISAGREES_WITH_CHECKPOINT"), "{refused:?}");
    assert!(refused.message().contains("not in the log as written"), "{refused:?}");
    // Later appends agree with the log, and nothing more is signed for the property all the same.
    cage.cage.sell_chips(sale("sale-later")).await?;
    let again = recorded.auditor.audit.sign_checkpoint(pb::SignCheckpointRequest::default()).await.expect_err("still refused");
    assert_eq!(again.code(), tonic::Code::DataLoss, "{again:?}");
    let kept = chipledger_store::checkpoint::CheckpointSink::read_all(&recorded.server.checkpoint_dir)?;
    assert_eq!(kept.len(), 3, "no checkpoint signed over the cut: {kept:?}");
    recorded.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_refusal_is_caught_even_with_the_refusal_head_fixed() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_refusal").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    // Only deleting the row: the refusal chain itself says so.
    sqlx::query("DELETE FROM rejections WHERE property = $1 AND command_id = 'rathole-1'")
        .bind(&property)
        .execute(&mut connection)
        .await?;
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok);
    assert_eq!(reply.first_bad_refusal, Some(1), "{reply:?}");
    assert_eq!(agreeing(&reply), vec![true, false, false], "{reply:?}");
    // A thorough superuser also frees the command id and rewinds the refusal head: the
    // refusal chain is consistent again, and only C2 and C3 (which counted it) tell.
    sqlx::query("DELETE FROM commands WHERE property = $1 AND command_id = 'rathole-1'")
        .bind(&property)
        .execute(&mut connection)
        .await?;
    sqlx::query("UPDATE property_heads SET last_refusal_seq = 0, last_refusal_hash = $2 WHERE property = $1")
        .bind(&property)
        .bind(vec![0u8; 32])
        .execute(&mut connection)
        .await?;
    let alone = verify(&mut recorded, false, false).await?;
    assert!(alone.ok, "{alone:?}");
    let reply = verify(&mut recorded, true, false).await?;
    assert_eq!(agreeing(&reply), vec![true, false, false], "{reply:?}");
    assert!(reply.checkpoints[1].reason.contains("refusal"), "{:?}", reply.checkpoints[1]);
    recorded.server.stop().await
}

/// R-AUDIT-3: a refusal written by a superuser without a place in the chain (as refusals were
/// before they were chained) is no refusal of the ledger: `verify` names it (the insider pass
/// framed a patron with a ratholing refusal so, listed like any other and unseen).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchained_refusal_written_after_the_chain_began_is_caught() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_unchained_refusal").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    sqlx::query(
        "INSERT INTO rejections (property, command_id, reason_code, rule_id, numbers, detail, actor_id, actor_role, streams, request, player_id, gaming_day) \
         VALUES ($1, 'framed-1', 'RATHOLING_FORBIDDEN', 'R-STAKE-2', '[[\"amount_cents\", 500000]]', 'taking chips off the table', 'floor-2', 'floor_supervisor', '{table-T1}', '{}', 'P1', current_date)",
    )
    .bind(&property)
    .execute(&mut connection)
    .await?;
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    assert!(reply.refusal_problem.contains("UnchainedAfterChain") && reply.refusal_problem.contains("framed-1"), "{reply:?}");
    assert_eq!(agreeing(&reply), vec![true, true, true], "the chain itself holds: {reply:?}");
    recorded.server.stop().await
}

/// A superuser gives a refusal's row another id (an identity column: deleted and written
/// again with the id chosen, the append-only triggers off), nothing chained changed.
async fn renumber_refusal(connection: &mut PgConnection, property: &str, command_id: &str, to: i64) -> anyhow::Result<()> {
    let mut tx = sqlx::Connection::begin(connection).await?;
    sqlx::query("SET LOCAL session_replication_role = replica").execute(&mut *tx).await?;
    sqlx::query("CREATE TEMP TABLE moved ON COMMIT DROP AS SELECT * FROM rejections WHERE property = $1 AND command_id = $2")
        .bind(property)
        .bind(command_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM rejections WHERE property = $1 AND command_id = $2").bind(property).bind(command_id).execute(&mut *tx).await?;
    sqlx::query("UPDATE moved SET rejection_id = $1").bind(to).execute(&mut *tx).await?;
    sqlx::query("INSERT INTO rejections OVERRIDING SYSTEM VALUE SELECT * FROM moved").execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

/// R-AUDIT-3: what auditors list is what the chain holds. A refusal renumbered out of the
/// listing (its row id, by which ListRejections pages, set to -12 with nothing chained changed:
/// the insider pass hid a ratholing attempt so from every listing and verify passed), and a
/// listing function replaced to leave rows out, are both named by `verify`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_renumbered_out_of_the_listing_or_a_listing_replaced_is_caught() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_listing").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    let row_id: i64 = sqlx::query_scalar("SELECT rejection_id FROM rejections WHERE property = $1 AND command_id = 'rathole-1'")
        .bind(&property)
        .fetch_one(&mut connection)
        .await?;
    renumber_refusal(&mut connection, &property, "rathole-1", -12).await?;
    let listed = recorded.auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
    assert!(listed.iter().all(|record| record.command_id != "rathole-1"), "gone from the listing: {listed:?}");
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    assert_eq!(reply.first_bad_refusal, Some(1), "{reply:?}");
    assert!(reply.refusal_problem.contains("NotListed") && reply.refusal_problem.contains("-12"), "{reply:?}");
    // Put back, then the listing itself replaced: the chains hold, the function is named.
    renumber_refusal(&mut connection, &property, "rathole-1", row_id).await?;
    assert!(verify(&mut recorded, true, false).await?.ok);
    let original = chipledger_store::schema::FUNCTIONS.iter().find(|(name, _)| *name == "chipledger_rejections").expect("the listing's file").1;
    let hiding = original.replace("WHERE r.property = p_property", "WHERE r.property = p_property AND r.command_id <> 'rathole-1'");
    assert_ne!(hiding, original);
    sqlx::raw_sql(sqlx::AssertSqlSafe(hiding)).execute(&mut connection).await?;
    let listed = recorded.auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
    assert!(listed.iter().all(|record| record.command_id != "rathole-1"), "{listed:?}");
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    assert_eq!(reply.functions_changed, vec!["chipledger_rejections".to_owned()], "{reply:?}");
    assert_eq!(agreeing(&reply), vec![true, true, true], "the chains themselves hold: {reply:?}");
    // The file again: verified. Then the same listing through a filtering view its search path
    // names, its text untouched (the fixes' pass), and a function of the same name in another
    // schema, and the schema's own account check weakened: each is named.
    sqlx::raw_sql(sqlx::AssertSqlSafe(original)).execute(&mut connection).await?;
    assert!(verify(&mut recorded, true, false).await?.ok);
    sqlx::raw_sql(
        "CREATE SCHEMA hide; \
         CREATE VIEW hide.rejections AS SELECT * FROM public.rejections WHERE reason_code <> 'RATHOLING_FORBIDDEN'; \
         ALTER FUNCTION chipledger_rejections(text, bigint, bigint, text, date) SET search_path = hide, public, pg_temp; \
         CREATE FUNCTION hide.chipledger_head(p_property text) RETURNS bigint LANGUAGE sql AS $$ SELECT 0::bigint $$; \
         CREATE OR REPLACE FUNCTION chipledger_account_non_negative(account text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE \
           AS $$ SELECT account ~ '^table/[^/]+/(tray/[^/]+|kitty|pot/[^/]+)$' $$;",
    )
    .execute(&mut connection)
    .await?;
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    let mut named = reply.functions_changed.clone();
    named.sort();
    assert_eq!(named, ["chipledger_account_non_negative", "chipledger_head", "chipledger_rejections", "hide.chipledger_head"], "{reply:?}");
    // Put back; then the tables themselves: a policy that filters the listing's queries, and a
    // view in the place of the table (the fixes' second pass hid refusals and a CTR so).
    sqlx::raw_sql(
        "ALTER FUNCTION chipledger_rejections(text, bigint, bigint, text, date) RESET search_path; \
         DROP FUNCTION hide.chipledger_head(text); DROP VIEW hide.rejections; DROP SCHEMA hide;",
    )
    .execute(&mut connection)
    .await?;
    for (_, text) in chipledger_store::schema::all_functions() {
        sqlx::raw_sql(sqlx::AssertSqlSafe(*text)).execute(&mut connection).await?;
    }
    assert!(verify(&mut recorded, true, false).await?.ok);
    sqlx::raw_sql(
        "ALTER TABLE rejections ENABLE ROW LEVEL SECURITY; ALTER TABLE rejections FORCE ROW LEVEL SECURITY; \
         CREATE POLICY hide ON rejections USING (reason_code <> 'RATHOLING_FORBIDDEN'); \
         ALTER TABLE patron_daily_cash RENAME TO patron_daily_cash_t; \
         CREATE VIEW patron_daily_cash AS SELECT * FROM patron_daily_cash_t WHERE player_id <> 'WHALE'; \
         CREATE RULE quiet AS ON INSERT TO checkpoints DO INSTEAD NOTHING; \
         ALTER TABLE events DISABLE TRIGGER events_append_only;",
    )
    .execute(&mut connection)
    .await?;
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    let named = reply.functions_changed.join("; ");
    for object in ["table rejections: row-level security", "table rejections: policy hide", "table patron_daily_cash: not a table", "table checkpoints: rule quiet", "table events: trigger events_append_only"] {
        assert!(named.contains(object), "{object}: {reply:?}");
    }
    recorded.server.stop().await
}

/// The evidence pass: command rows planted for command ids not yet sent answer their first
/// sending as a replay of something else, recording nothing. The constraints refuse them; with
/// the constraints dropped, verify names a row bound to no position of the log and a second row
/// pointing at a refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_row_planted_for_a_command_not_yet_sent_is_caught() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_planted").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    let plant_accepted = "INSERT INTO commands (property, command_id, request_hash, append_id, outcome, reply, recorded_at, last_position) \
         SELECT property, 'not-yet-sent', request_hash, append_id, outcome, reply, recorded_at, -1 FROM commands \
          WHERE property = $1 AND refusal_seq IS NULL ORDER BY last_position DESC LIMIT 1";
    let refused = sqlx::query(plant_accepted).bind(&property).execute(&mut connection).await;
    assert!(refused.is_err(), "the constraint refuses a row bound to no position: {refused:?}");
    sqlx::raw_sql("ALTER TABLE commands DROP CONSTRAINT commands_bound_to_the_log").execute(&mut connection).await?;
    sqlx::query(plant_accepted).bind(&property).execute(&mut connection).await?;
    let reply = verify(&mut recorded, false, false).await?;
    assert!(!reply.ok && reply.problem.contains("bound to no position"), "{reply:?}");
    sqlx::query("DELETE FROM commands WHERE property = $1 AND command_id = 'not-yet-sent'").bind(&property).execute(&mut connection).await?;
    assert!(verify(&mut recorded, false, false).await?.ok);
    // A second row pointing at the ratholing attempt's refusal.
    sqlx::raw_sql("DROP INDEX commands_one_per_refusal").execute(&mut connection).await?;
    sqlx::query(
        "INSERT INTO commands (property, command_id, request_hash, recorded_at, refusal_seq) \
         SELECT property, 'not-yet-sent', request_hash, recorded_at, refusal_seq FROM commands WHERE property = $1 AND command_id = 'rathole-1'",
    )
    .bind(&property)
    .execute(&mut connection)
    .await?;
    let reply = verify(&mut recorded, false, false).await?;
    assert!(!reply.ok && reply.refusal_problem.contains("CommandNotHeld"), "{reply:?}");
    recorded.server.stop().await
}

/// The evidence pass, as the cluster's superuser: a search path set on the application role in
/// front of `pg_catalog` (a schema of look-alike functions and a `pg_proc` view hiding them), a
/// listing made STRICT, an append-only trigger set to fire only on replicas and another dropped,
/// a table privilege granted to the application role. The service's connections pin their
/// search path, so the listings answer as ever, and verify names every one of the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadowing_search_path_a_strict_listing_a_sleeping_trigger_and_a_grant_are_each_caught() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_catalog").await?;
    let mut connection = superuser(&recorded.server).await?;
    sqlx::raw_sql(
        "CREATE SCHEMA evil; \
         CREATE FUNCTION evil.chipledger_rejections(p_property text, p_after bigint, p_limit bigint, p_stream text, p_day date) \
           RETURNS SETOF rejections LANGUAGE sql AS $$ SELECT * FROM public.rejections WHERE false $$; \
         CREATE VIEW evil.pg_proc AS SELECT * FROM pg_catalog.pg_proc \
           WHERE pronamespace <> (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'evil'); \
         GRANT USAGE ON SCHEMA evil TO chipledger_app; GRANT SELECT ON evil.pg_proc TO chipledger_app;",
    )
    .execute(&mut connection)
    .await?;
    let database: String = sqlx::query_scalar("SELECT current_database()::text").fetch_one(&mut connection).await?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ALTER ROLE chipledger_app IN DATABASE \"{database}\" SET search_path = evil, pg_catalog, public")))
        .execute(&mut connection)
        .await?;
    // The service's connections are made again (as the attacker ends them).
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND usename = 'chipledger_app'")
        .execute(&mut connection)
        .await?;
    let mut listed = None;
    for _ in 0..5 {
        if let Ok(reply) = recorded.auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await {
            listed = Some(reply.into_inner().rejections);
            break;
        }
    }
    let listed = listed.expect("the listing answers once its connections are made again");
    assert!(listed.iter().any(|record| record.command_id == "rathole-1"), "the look-alike listing is not the one read: {listed:?}");
    sqlx::raw_sql(
        "ALTER FUNCTION chipledger_events_by_filter STRICT; \
         ALTER TABLE rejections ENABLE REPLICA TRIGGER rejections_append_only; \
         DROP TRIGGER commands_no_truncate ON commands; \
         GRANT UPDATE ON events TO chipledger_app;",
    )
    .execute(&mut connection)
    .await?;
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    let named = reply.functions_changed.join("; ");
    for object in [
        "evil.chipledger_rejections",
        "chipledger_events_by_filter",
        "table rejections: trigger rejections_append_only",
        "table commands: trigger commands_no_truncate missing or changed",
        "role chipledger_app: may UPDATE on events",
    ] {
        assert!(named.contains(object), "{object}: {reply:?}");
    }
    assert_eq!(agreeing(&reply), vec![true, true, true], "the chains themselves hold: {reply:?}");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("ALTER ROLE chipledger_app IN DATABASE \"{database}\" RESET search_path; REVOKE UPDATE ON events FROM chipledger_app")))
        .execute(&mut connection)
        .await?;
    recorded.server.stop().await
}

/// The insider pass: append-only triggers made again under their names, each weakened (only
/// on DELETE, only when one column is updated, only when a condition holds): a plain UPDATE
/// of the table then worked, and verify said nothing. Each is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_only_trigger_made_again_weaker_under_its_name_is_caught() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_trigger").await?;
    let mut connection = superuser(&recorded.server).await?;
    sqlx::raw_sql(
        "DROP TRIGGER commands_append_only ON commands; \
         CREATE TRIGGER commands_append_only BEFORE DELETE ON commands FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change(); \
         DROP TRIGGER rejections_append_only ON rejections; \
         CREATE TRIGGER rejections_append_only BEFORE UPDATE OF refusal_seq OR DELETE ON rejections \
           FOR EACH ROW EXECUTE FUNCTION chipledger_refuse_change(); \
         DROP TRIGGER checkpoints_append_only ON checkpoints; \
         CREATE TRIGGER checkpoints_append_only BEFORE UPDATE OR DELETE ON checkpoints \
           FOR EACH ROW WHEN (old.position < 0) EXECUTE FUNCTION chipledger_refuse_change();",
    )
    .execute(&mut connection)
    .await?;
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    let named = reply.functions_changed.join("; ");
    for table in ["commands", "rejections", "checkpoints"] {
        let object = format!("table {table}: trigger {table}_append_only missing or changed");
        assert!(named.contains(&object), "{object}: {reply:?}");
    }
    recorded.server.stop().await
}

/// The insider pass: the streams projection's row of a patron renamed for a moment let the same
/// patron in under another case (the service checks new ids against it), and renamed back, every
/// verification passed. The log keeps both spellings: verify names them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patron_let_in_under_another_case_behind_the_projection_is_named() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_case").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    let rename = |from: &'static str, to: &'static str| {
        sqlx::query("UPDATE streams SET stream = $3 WHERE property = $1 AND stream = $2").bind(property.clone()).bind(from).bind(to)
    };
    let mut dealer = recorded.server.client(principal::DEALER).await?;
    // P3 leaves with $180 (R-REBUY-1 binds a return below it), and comes back as "p3" for $100
    // while the projection's row is renamed.
    dealer.table.cash_out(pb::CashOut { header: header("out-P3"), table_id: TABLE.into(), seat: 3, player_id: "P3".into() }).await?;
    rename("player-P3", "player-P3-hidden").execute(&mut connection).await?;
    dealer.table.buy_in(cash_buy_in("buy-p3", TABLE, 4, "p3", 10_000)).await?;
    rename("player-P3-hidden", "player-P3").execute(&mut connection).await?;
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    assert!(reply.functions_changed.iter().any(|found| found.contains("player-P3, player-p3 differ only in case")), "{reply:?}");
    assert_eq!(agreeing(&reply), vec![true, true, true], "the chains themselves hold: {reply:?}");
    recorded.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_reply_is_caught_at_its_command() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_reply").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    let forged_at = last_position_of(&mut connection, &property, "buy-P2").await?;
    // Resending buy-P2 would now answer buy-P3's result.
    sqlx::query(
        "UPDATE commands a SET outcome = b.outcome, reply = b.reply FROM commands b \
         WHERE a.property = $1 AND b.property = $1 AND a.command_id = 'buy-P2' AND b.command_id = 'buy-P3'",
    )
    .bind(&property)
    .execute(&mut connection)
    .await?;
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok);
    assert_eq!(reply.first_bad_position, Some(forged_at), "{reply:?}");
    assert_eq!(agreeing(&reply), vec![true, false, false], "{reply:?}");
    recorded.server.stop().await
}

/// The insider pass: a command row's outcome edited to other positions (7..=9 for 293..=295)
/// and a stream at version 77 was answered so on a replay, and every verification passed: the
/// outcome is what a replay rebuilds its positions and versions from. Each edit is named at the
/// command's position.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outcome_edited_to_other_positions_or_versions_is_caught_at_its_command() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_outcome").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    let forged_at = last_position_of(&mut connection, &property, "buy-P2").await?;
    let original: String = sqlx::query_scalar("SELECT outcome FROM commands WHERE property = $1 AND command_id = 'buy-P2'")
        .bind(&property)
        .fetch_one(&mut connection)
        .await?;
    let outcome: serde_json::Value = serde_json::from_str(&original)?;
    let mut earlier = outcome.clone();
    earlier["first_position"] = (outcome["first_position"].as_i64().unwrap_or(2) - 1).into();
    let mut bumped = outcome.clone();
    bumped["stream_versions"][0][1] = 77.into();
    let mut twice = outcome.clone();
    let first = outcome["stream_versions"][0].clone();
    twice["stream_versions"].as_array_mut().map(|versions| versions.push(first));
    for forged in [earlier, bumped, twice] {
        sqlx::query("UPDATE commands SET outcome = $2 WHERE property = $1 AND command_id = 'buy-P2'")
            .bind(&property)
            .bind(forged.to_string())
            .execute(&mut connection)
            .await?;
        let reply = verify(&mut recorded, false, false).await?;
        assert!(!reply.ok, "{forged}: {reply:?}");
        assert_eq!(reply.first_bad_position, Some(forged_at), "{forged}: {reply:?}");
        assert!(reply.problem.contains("buy-P2"), "{reply:?}");
    }
    // A replay answers nothing from an outcome that places the events elsewhere than the log:
    // one reaching past the head (the wave-2 pass: positions 284..=286 with the head at 284).
    let mut later = outcome.clone();
    later["first_position"] = (outcome["first_position"].as_i64().unwrap_or(2) + 1).into();
    let mut bumped = outcome.clone();
    bumped["stream_versions"][0][1] = 77.into();
    let mut dealer = recorded.server.client(principal::DEALER).await?;
    for forged in [later, bumped] {
        sqlx::query("UPDATE commands SET outcome = $2 WHERE property = $1 AND command_id = 'buy-P2'")
            .bind(&property)
            .bind(forged.to_string())
            .execute(&mut connection)
            .await?;
        let refused = dealer.table.buy_in(cash_buy_in("buy-P2", TABLE, 2, "P2", 15_000)).await.expect_err("a forged outcome");
        assert_eq!((refused.code(), error_info(&refused).reason.as_str()), (tonic::Code::DataLoss, "STORED_OUTCOME_DISAGREES"), "{forged}: {refused:?}");
    }
    sqlx::query("UPDATE commands SET outcome = $2 WHERE property = $1 AND command_id = 'buy-P2'")
        .bind(&property)
        .bind(&original)
        .execute(&mut connection)
        .await?;
    assert!(verify(&mut recorded, true, false).await?.ok, "as it was");
    let replayed = dealer.table.buy_in(cash_buy_in("buy-P2", TABLE, 2, "P2", 15_000)).await?.into_inner();
    assert!(replayed.replayed, "{replayed:?}");
    recorded.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_last_events_and_fixing_the_head_is_caught_by_the_checkpoint_after_them() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_truncate").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    let keep = recorded.positions[1];
    for statement in [
        "DELETE FROM events WHERE property = $1 AND position > $2",
        "DELETE FROM postings WHERE property = $1 AND position > $2",
        "DELETE FROM commands WHERE property = $1 AND last_position > $2",
        "UPDATE property_heads h SET last_position = $2, last_hash = e.hash FROM events e \
         WHERE h.property = $1 AND e.property = $1 AND e.position = $2",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(statement)).bind(&property).bind(keep).execute(&mut connection).await?;
    }
    let alone = verify(&mut recorded, false, false).await?;
    assert!(alone.ok, "the cut log is self-consistent: {alone:?}");
    let reply = verify(&mut recorded, true, false).await?;
    assert_eq!(agreeing(&reply), vec![true, true, false], "{reply:?}");
    assert!(reply.checkpoints[2].reason.contains("no event"), "{:?}", reply.checkpoints[2]);
    recorded.server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_dollars_added_to_a_projected_seat_balance_is_reported_by_verify_projections() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_projection").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = PgConnection::connect(&recorded.server.database_url).await?;
    sqlx::query("UPDATE account_balances SET balance_cents = balance_cents + 1000000 WHERE property = $1 AND account = $2")
        .bind(&property)
        .bind(format!("table/{TABLE}/seat/1"))
        .execute(&mut connection)
        .await?;
    let cash = sqlx::query("UPDATE patron_daily_cash SET cash_in_cents = 0 WHERE property = $1 AND player_id = 'P2'")
        .bind(&property)
        .execute(&mut connection)
        .await?;
    assert_eq!(cash.rows_affected(), 1, "P2's cash buy-in is on the day's total (R-AUDIT-4)");
    // The chain does not cover derived rows: it still verifies, and so do the checkpoints ...
    let chain_only = verify(&mut recorded, true, false).await?;
    assert!(chain_only.ok, "{chain_only:?}");
    // ... but the projections recomputed from the events do not match.
    let reply = verify(&mut recorded, true, true).await?;
    assert!(!reply.ok);
    let differences = differences(&reply);
    assert!(differences.contains(&("account_balances", "table/T1/seat/1", "1020000", "20000")), "{differences:?}");
    assert!(differences.iter().any(|d| d.0 == "patron_daily_cash" && d.1.starts_with("P2 ")), "{differences:?}");
    assert_eq!(differences.len(), 2, "{differences:?}");
    recorded.server.stop().await
}

/// The audit pass: the rows no chain covers, changed outside the ledger, went unseen. The index
/// of event ids pointed at another event, so an approved correction of P1's buy-in reversed
/// P2's; a stream's version was raised, which blocks the table; a table/day report row was
/// written for a table that never existed (with the application role's own credentials).
/// `verify --projections` names each one, and the correction through the bad index moves
/// nothing (DATA_LOSS, not another event reversed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_event_index_stream_version_or_report_row_is_reported_by_verify_projections() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_index").await?;
    let property = recorded.server.property_id.clone();
    let buy_ins = chipledger_tests::all_events(&mut recorded.auditor, pb::EventFilter { event_types: vec!["BoughtIn".into()], ..Default::default() }).await?;
    let (p1, p2) = (&buy_ins[0], &buy_ins[1]);
    let mut connection = PgConnection::connect(&recorded.server.database_url).await?;
    sqlx::query("SET session_replication_role = replica").execute(&mut connection).await?;
    sqlx::query("UPDATE event_ids SET position = $2 WHERE event_id = $1::uuid")
        .bind(&p1.event_id)
        .bind(p2.global_position)
        .execute(&mut connection)
        .await?;
    sqlx::query("UPDATE streams SET version = version + 5 WHERE property = $1 AND stream = $2")
        .bind(&property)
        .bind(format!("table-{TABLE}"))
        .execute(&mut connection)
        .await?;
    let mut as_app = PgConnection::connect(&recorded.server.app_url()?).await?;
    let checkpoint: i64 = sqlx::query_scalar("SELECT chipledger_report_table_day_checkpoint($1, false)").bind(&property).fetch_one(&mut as_app).await?;
    sqlx::query("SELECT chipledger_report_table_day_apply($1, $2, $2, ARRAY['T9'], ARRAY['2026-12-06'], ARRAY[5::bigint], ARRAY[5::bigint], ARRAY[99999999::bigint], ARRAY[0::bigint], ARRAY[$2])")
        .bind(&property)
        .bind(checkpoint)
        .execute(&mut as_app)
        .await?;

    let mut floor = recorded.server.client(principal::FLOOR).await?;
    let mut second = recorded.server.client(principal::FLOOR_2).await?;
    let correction = pb::Correction {
        header: header("fix-p1"),
        reverses_event_id: p1.event_id.clone(),
        approved_by: principal::FLOOR_2.0.into(),
        reason: "keyed at the wrong seat".into(),
    };
    let correction = chipledger_tests::approved(correction, &mut [&mut second]).await?;
    let refused = floor.ledger.correct(correction).await.expect_err("no correction through a bad index");
    assert_eq!(refused.code(), tonic::Code::DataLoss, "{refused:?}");

    let reply = verify(&mut recorded, true, true).await?;
    assert!(!reply.ok);
    let differences = differences(&reply);
    let at = |position: i64| position.to_string();
    assert!(differences.contains(&("event_ids", p1.event_id.as_str(), at(p2.global_position).as_str(), at(p1.global_position).as_str())), "{differences:?}");
    assert!(differences.iter().any(|d| d.0 == "streams" && d.1 == format!("table-{TABLE}")), "{differences:?}");
    assert!(differences.iter().any(|d| d.0 == "report_table_day" && d.1.starts_with("T9 ") && d.3 == "-"), "{differences:?}");
    assert_eq!(differences.len(), 3, "{differences:?}");
    recorded.server.stop().await
}

/// The evidence pass, round two: an archive anchor written by hand (no archive, its partition
/// still attached) made `verify` start after it, so the events before it were edited and deleted
/// unseen. An anchor over a live event is no archive: the chain does not verify, at that event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_anchor_over_live_events_is_no_archive() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_anchor").await?;
    let property = recorded.server.property_id.clone();
    let mut connection = superuser(&recorded.server).await?;
    sqlx::query("SET session_replication_role = replica").execute(&mut connection).await?;
    sqlx::query("INSERT INTO archived_partitions VALUES ('-infinity', '2000-01-01', '/nonexistent', sha256('x'), '{}')")
        .execute(&mut connection)
        .await?;
    let at = recorded.positions[1];
    sqlx::query(
        "INSERT INTO archive_anchors SELECT property, position, hash, chain_format, position, '-infinity' FROM events WHERE property = $1 AND position = $2",
    )
    .bind(&property)
    .bind(at)
    .execute(&mut connection)
    .await?;
    let reply = verify(&mut recorded, true, false).await?;
    assert!(!reply.ok, "{reply:?}");
    assert_eq!(reply.first_bad_position, Some(1), "{reply:?}");
    assert!(reply.problem.contains("NotArchived"), "{reply:?}");
    // With a balance it "carries", the balances served would move: they are refused instead,
    // as long as the anchor is not proven by an archive this server signed (the operations
    // pass: $1,000,000 more in the cage's cash, served by GetBalance while only verify said so).
    sqlx::query("INSERT INTO archive_balances VALUES ($1, 'cage/MAIN/cash', '-infinity', 100000000)")
        .bind(&property)
        .execute(&mut connection)
        .await?;
    let request = pb::GetBalanceRequest { property_id: String::new(), account: "cage/MAIN/cash".into(), as_of: None };
    let refused = recorded.auditor.ledger.get_balance(request).await.expect_err("no balance across an unproven anchor");
    assert_eq!((refused.code(), error_info(&refused).reason.as_str()), (tonic::Code::FailedPrecondition, "ARCHIVE_NOT_PROVEN"), "{refused:?}");
    recorded.server.stop().await
}

/// The insiders' second pass: with the application role's credentials, one call kept the row
/// `'not a document'` as a checkpoint; rows are never deleted, so every later listing (the
/// auditors' `checkpoints fetch`, the console's chain page) failed for good. The function keeps
/// only a signed checkpoint document of the property, position, refusal sequence and key named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_application_role_cannot_keep_a_checkpoint_no_reader_can_read() -> anyhow::Result<()> {
    let mut recorded = recorded("tamper_checkpoint_row").await?;
    let property = recorded.server.property_id.clone();
    let mut app = PgConnection::connect(&recorded.server.app_url()?).await?;
    let kept = chipledger_store::SignedCheckpoint::from_document(&recorded.checkpoints[2])?;
    let record = |document: String, position: i64| {
        sqlx::query("SELECT chipledger_record_checkpoint($1, $2, $3, $4, now(), $5)")
            .bind(property.clone())
            .bind(position)
            .bind(kept.checkpoint.refusal_seq)
            .bind(kept.checkpoint.key_id.clone())
            .bind(document)
    };
    for (document, position) in [
        ("not a document".to_string(), 1_000_000_000),
        ("{}".to_string(), 1_000_000_000),
        // A real document under another position than its own.
        (recorded.checkpoints[2].clone(), kept.checkpoint.position + 1),
    ] {
        let refused = record(document.clone(), position).fetch_one(&mut app).await;
        let error = refused.expect_err(&document);
        assert!(error.to_string().contains("not a checkpoint document"), "{error}");
    }
    // Nor one the log does not hold (the insider pass: documents with a made-up signature at
    // positions the head had not reached kept the server's own out of the database for good).
    let forged = |position: i64, hash: &str| -> anyhow::Result<String> {
        let mut document: serde_json::Value = serde_json::from_str(&recorded.checkpoints[2])?;
        document["checkpoint"]["position"] = position.into();
        document["checkpoint"]["hash"] = hash.into();
        document["signature"] = "00".repeat(64).into();
        Ok(document.to_string())
    };
    let head = kept.checkpoint.position;
    for (document, position) in [(forged(head + 5, &hex::encode(kept.checkpoint.hash))?, head + 5), (forged(head, &"ab".repeat(32))?, head)] {
        let error = record(document.clone(), position).fetch_one(&mut app).await.expect_err(&document);
        assert!(error.to_string().contains("not a checkpoint of this log"), "{error}");
    }
    // The listing still reads every checkpoint kept.
    let listed = recorded.auditor.audit.list_checkpoints(pb::ListCheckpointsRequest::default()).await?.into_inner().checkpoints;
    assert_eq!(listed.len(), 3, "{listed:?}");
    // The evidence pass, round two: a refusal whose figures no reader decodes made every later
    // listing of the property's refusals answer INTERNAL. The function keeps only [name, number]
    // pairs.
    let refused = sqlx::query(
        "SELECT * FROM chipledger_record_refusal($1, 'forged-1', sha256('x'), convert_to('x', 'UTF8'), 'X', 'R-AUDIT-3',          '{\"a\":1}'::jsonb, 'forged', 'nobody', 'admin', NULL, ARRAY[]::text[], '{}'::jsonb, NULL, NULL, convert_to('x', 'UTF8'), NULL)",
    )
    .bind(property.clone())
    .fetch_all(&mut app)
    .await
    .expect_err("figures that are not [name, number] pairs");
    assert!(refused.to_string().contains("not a refusal's figures"), "{refused}");
    recorded.auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await?;
    recorded.server.stop().await
}
