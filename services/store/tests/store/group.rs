//! Group commit: concurrent appends of one property share a transaction. A member refused by
//! the database (version conflict, R-UNIT-4, a projection's own constraint) or repeating a
//! command must get exactly the answer it would get alone, and must not take the rest of its
//! group down with it.

use std::sync::Arc;
use std::time::Duration;

use chipledger_store::*;
use tokio::sync::Barrier;

use crate::*;

const GOOD: usize = 30;
const STALE: usize = 5;
const OVERDRAWN: usize = 3;
const OVER_LIMIT: usize = 2;

enum Kind {
    Good(usize),
    /// Expects version 5 of a stream that does not exist.
    Stale(usize),
    /// Takes chips out of an empty seat (R-UNIT-4).
    Overdrawn(usize),
    /// A marker for a patron without a credit line: PostgreSQL's own CHECK on the projection
    /// refuses it (R-MARK-1), not the append function.
    OverLimit(usize),
    /// The same command and request as good member 0.
    Repeat,
}

fn good_request(index: usize) -> AppendRequest {
    let command_id = format!("good-{index}");
    let mut request = one_stream(
        &format!("table-G{index}"),
        ExpectedVersion::NoStream,
        vec![movement("ChipsBought", "house/bank", &format!("table/G{index}/seat/1"), 500, &command_id)],
    );
    request.commands = vec![command(&command_id, &format!("request {index}"))];
    request
}

fn request_of(kind: &Kind) -> AppendRequest {
    match kind {
        Kind::Good(index) => good_request(*index),
        Kind::Stale(index) => one_stream(
            &format!("table-S{index}"),
            ExpectedVersion::Exact(5),
            vec![movement("ChipsBought", "house/bank", &format!("table/S{index}/seat/1"), 500, "stale")],
        ),
        Kind::Overdrawn(index) => one_stream(
            &format!("table-O{index}"),
            ExpectedVersion::Any,
            vec![movement("ChipsCashedOut", &format!("table/O{index}/seat/1"), "house/bank", 700, "overdrawn")],
        ),
        Kind::OverLimit(index) => {
            let mut request = one_stream(
                &format!("player-L{index}"),
                ExpectedVersion::Any,
                vec![movement("MarkerIssued", "house/markers", &format!("player/L{index}/pocket"), 100, "over-limit")],
            );
            request.projection_ops =
                vec![ProjectionOp::Marker { player_id: format!("L{index}"), outstanding_delta_cents: 100 }];
            request
        }
        Kind::Repeat => good_request(0),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refused_member_gets_its_own_answer_and_the_rest_of_its_group_commits() -> anyhow::Result<()> {
    let db = fresh("group_commit").await?;
    let store = db.store.clone();
    store.append(&one_stream("table-FIRST", ExpectedVersion::NoStream, buy_ins(1, "first"))).await?;

    // Hold the property's commit lock from outside, so every append below queues behind the
    // first one and the groups that follow mix good and refused members.
    let mut blocker = admin(&db.admin_url).await?;
    sqlx::raw_sql("BEGIN; SELECT 1 FROM property_heads FOR UPDATE").execute(&mut blocker).await?;

    let mut kinds: Vec<Kind> = (0..GOOD).map(Kind::Good).collect();
    kinds.extend((0..STALE).map(Kind::Stale));
    kinds.extend((0..OVERDRAWN).map(Kind::Overdrawn));
    kinds.extend((0..OVER_LIMIT).map(Kind::OverLimit));
    kinds.push(Kind::Repeat);
    // Interleave so refused members sit between good ones in the queue.
    kinds.sort_by_key(|kind| match kind {
        Kind::Good(index) => index * 10,
        Kind::Stale(index) => index * 60 + 5,
        Kind::Overdrawn(index) => index * 90 + 7,
        Kind::OverLimit(index) => index * 110 + 3,
        Kind::Repeat => 45,
    });
    let start = Arc::new(Barrier::new(kinds.len() + 1));
    let mut tasks = Vec::new();
    for kind in kinds {
        let (store, start) = (store.clone(), start.clone());
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let result = store.append(&request_of(&kind)).await;
            (kind, result)
        }));
    }
    start.wait().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    sqlx::raw_sql("COMMIT").execute(&mut blocker).await?;

    let mut good_outcomes = Vec::new();
    let mut replays = 0;
    for task in tasks {
        match task.await? {
            (Kind::Good(_) | Kind::Repeat, result) => {
                let outcome = result?;
                if outcome.replayed {
                    replays += 1;
                } else {
                    good_outcomes.push(outcome);
                }
            }
            (Kind::Stale(index), result) => match result {
                Err(StoreError::VersionConflict { stream, expected: 5, actual: 0 }) => {
                    assert_eq!(stream, format!("table-S{index}"));
                }
                other => panic!("stale member {index}: {other:?}"),
            },
            (Kind::Overdrawn(index), result) => match result {
                Err(StoreError::NegativeBalance { account, balance_cents: -700 }) => {
                    assert_eq!(account, format!("table/O{index}/seat/1"));
                }
                other => panic!("overdrawn member {index}: {other:?}"),
            },
            (Kind::OverLimit(index), result) => match result {
                Err(StoreError::ProjectionRefused { constraint }) => assert_eq!(constraint, "credit_lines_within_limit"),
                other => panic!("over-limit member {index}: {other:?}"),
            },
        }
    }
    // Good member 0 and its repeat: one wrote, the other was answered with the same outcome.
    assert_eq!(replays, 1, "the repeated command is answered once as a replay");
    assert_eq!(good_outcomes.len(), GOOD);

    // Exactly the good members' events are in the log, densely numbered and chained.
    let head = store.chain_digest(PROPERTY).await?.position;
    assert_eq!(head, 1 + GOOD as i64);
    let mut positions: Vec<i64> = good_outcomes.iter().flat_map(|outcome| outcome.positions()).collect();
    positions.sort_unstable();
    assert_eq!(positions, (2..=head).collect::<Vec<_>>());
    let report = store.verify_chain(PROPERTY).await?;
    assert!(report.ok && report.events_checked == head, "{report:?}");
    for index in 0..STALE {
        assert_eq!(store.stream_version(PROPERTY, &format!("table-S{index}")).await?, 0);
    }
    for index in 0..OVERDRAWN {
        assert_eq!(store.balance(PROPERTY, &format!("table/O{index}/seat/1"), AsOf::Head).await?, 0);
    }

    // The queued members really shared transactions: fewer transactions than appends.
    let mut conn = admin(&db.admin_url).await?;
    let transactions: i64 =
        sqlx::query_scalar("SELECT count(DISTINCT xmin::text) FROM events WHERE property = $1 AND position > 1")
            .bind(PROPERTY)
            .fetch_one(&mut conn)
            .await?;
    assert!(transactions < GOOD as i64, "{GOOD} appends in {transactions} transactions: no group formed");
    Ok(())
}

/// The store hashes the chain from the head its group commit last saw (append.rs). Two store
/// handles on one property, as two chipledgerd processes would be, append in turn: each finds
/// the head moved by the other, the database answers the head as it is under the lock, and
/// the group is hashed again. Nothing is written from a stale head: the positions stay dense
/// and every hash verifies (a hash computed from the wrong head would break the chain there).
#[tokio::test]
async fn two_writers_taking_turns_on_one_property_hash_from_the_head_the_database_holds() -> anyhow::Result<()> {
    let db = fresh("group_two_writers").await?;
    let other = Store::connect_with(Store::app_options(&db.admin_url, APP_PASSWORD)?, 4).await?;
    let writers = [&db.store, &other];
    const TURNS: i64 = 12;
    for turn in 0..TURNS {
        let expected = if turn == 0 { ExpectedVersion::NoStream } else { ExpectedVersion::Exact(turn * 2) };
        let command_id = format!("turn-{turn}");
        let mut request = one_stream("table-T1", expected, buy_ins(2, &command_id));
        request.commands = vec![command(&command_id, &command_id)];
        let outcome = writers[turn as usize % 2].append(&request).await?;
        assert_eq!(outcome.positions(), turn * 2 + 1..=turn * 2 + 2, "turn {turn}");
        assert_eq!(outcome.stream_versions, vec![("table-T1".to_string(), turn * 2 + 2)]);
        // A replay through the other writer answers the first outcome and moves nothing.
        let replay = writers[(turn as usize + 1) % 2].append(&request).await?;
        assert!(replay.replayed);
        assert_eq!((replay.last_position, replay.last_hash), (outcome.last_position, outcome.last_hash));
    }
    let digest = db.store.chain_digest(PROPERTY).await?;
    assert_eq!(digest.position, TURNS * 2);
    let report = other.verify_chain(PROPERTY).await?;
    assert!(report.ok && report.events_checked == TURNS * 2, "{report:?}");
    Ok(())
}

/// The application role calling `chipledger_append` itself, as an insider with the service's
/// credentials could: hashes that assume a head the property does not have write nothing (the
/// answer is "hash again" with the real head); hashes that assume the right head but are not
/// the entries' hashes are written, as any content the role sends would be, and verification
/// names their position.
#[tokio::test]
async fn the_application_role_cannot_continue_the_chain_from_a_head_it_does_not_have_and_forged_hashes_are_found()
-> anyhow::Result<()> {
    use sqlx::Connection;
    let db = fresh("group_forged_head").await?;
    db.store.append(&one_stream("table-T1", ExpectedVersion::NoStream, buy_ins(1, "first"))).await?;
    let head = db.store.chain_digest(PROPERTY).await?;
    let mut app = sqlx::PgConnection::connect_with(&Store::app_options(&db.admin_url, APP_PASSWORD)?).await?;
    let event = &buy_ins(1, "forged")[0];
    let now_micros = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_micros() as i64;
    let call = |head_position: i64, head_hash: Vec<u8>| {
        sqlx::query_as::<_, (bool, Option<i64>)>(
            "SELECT written, head_position FROM chipledger_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
             $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32)",
        )
        .bind(PROPERTY)
        .bind(vec![uuid::Uuid::now_v7()])
        .bind(vec![Vec::<u8>::new()])
        .bind(vec![0i32])
        .bind(vec![1i32])
        .bind(vec![1i32])
        .bind(vec![0i32])
        .bind(vec![0i32])
        .bind(Vec::<i32>::new())
        .bind(vec![1i32])
        .bind(Vec::<String>::new())
        .bind(Vec::<Vec<u8>>::new())
        .bind(vec!["table-T2".to_string()])
        .bind(vec![0i64])
        .bind(vec![1i32])
        .bind(vec![event.event_id])
        .bind(vec![event.event_type.clone()])
        .bind(vec![1i16])
        .bind(vec![event.payload.value()])
        .bind(vec![serde_json::to_value(&event.metadata).expect("metadata")])
        .bind(vec![vec![0xab_u8; 32]])
        .bind(Vec::<i32>::new())
        .bind(Vec::<i16>::new())
        .bind(Vec::<String>::new())
        .bind(Vec::<i64>::new())
        .bind(Vec::<serde_json::Value>::new())
        .bind(head_position)
        .bind(head_hash)
        .bind(vec![false])
        .bind(vec![0i64])
        .bind(now_micros)
        .bind(None::<i64>)
    };
    // A head the property does not have: nothing written, the real head answered.
    let (written, answered) = call(head.position, vec![0; 32]).fetch_one(&mut app).await?;
    assert!(!written);
    assert_eq!(answered, Some(head.position));
    let (written, _) = call(head.position + 5, head.hash.to_vec()).fetch_one(&mut app).await?;
    assert!(!written);
    assert_eq!(db.store.chain_digest(PROPERTY).await?.position, head.position, "nothing was appended");
    // The right head with a hash that is not the entry's: written, and found.
    let (written, _) = call(head.position, head.hash.to_vec()).fetch_one(&mut app).await?;
    assert!(written);
    let report = db.store.verify_chain(PROPERTY).await?;
    assert_eq!(report.first_bad_position, Some(head.position + 1), "{report:?}");
    Ok(())
}
