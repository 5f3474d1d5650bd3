//! `chipledger checkpoints fetch` keeps signed checkpoints outside the database and
//! `chipledger verify --checkpoints` names the last one the log agrees with, before and after a
//! superuser changes a recorded event.

use sqlx::Connection;

use crate::server::{TestServer, stderr, stdout};

fn last_agreeing_position(out: &str) -> Option<i64> {
    let line = out.lines().find(|line| line.trim_start().starts_with("last agreeing checkpoint: position "))?;
    line.trim_start().strip_prefix("last agreeing checkpoint: position ")?.split_whitespace().next()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_names_the_last_kept_checkpoint_the_log_agrees_with() {
    let server = TestServer::start().await;
    let kept = tempfile::tempdir().expect("temp dir");
    let dir = kept.path().to_str().expect("utf-8 path").to_owned();
    let key = server.public_key_hex.clone();
    assert_eq!(server.chipledger(&["demo"]).await.status.code(), Some(0));
    let fetched = server.chipledger(&["checkpoints", "fetch", "--dir", &dir, "--public-key", &key]).await;
    assert_eq!(fetched.status.code(), Some(0), "{}{}", stdout(&fetched), stderr(&fetched));
    assert!(stdout(&fetched).starts_with("checkpoints: ") && stdout(&fetched).contains(" served; 1 new kept"), "{}", stdout(&fetched));
    let first: i64 = {
        let digest = server.chipledger(&["digest", "--json"]).await;
        let head: serde_json::Value = serde_json::from_str(stdout(&digest).trim()).expect("digest JSON");
        head["global_position"].as_i64().expect("position")
    };
    assert_eq!(server.chipledger(&["demo"]).await.status.code(), Some(0));
    let again = server.chipledger(&["checkpoints", "fetch", "--dir", &dir, "--public-key", &key]).await;
    assert!(stdout(&again).starts_with("checkpoints: ") && stdout(&again).contains(" served; 1 new kept"), "{}", stdout(&again));

    let check = server.chipledger(&["verify", "--checkpoints", &dir, "--public-key", &key, "--projections"]).await;
    let out = stdout(&check);
    assert_eq!(check.status.code(), Some(0), "{out}{}", stderr(&check));
    assert!(out.contains("checkpoints: the log agrees with 2 of 2"), "{out}");
    assert!(out.contains("projections: recomputed from the events, all equal"), "{out}");
    let second = last_agreeing_position(&out).expect("a last agreeing checkpoint");
    assert!(second > first, "{out}");

    // A key that did not sign them is not trusted.
    let stranger = "11".repeat(32);
    let untrusted = server.chipledger(&["verify", "--checkpoints", &dir, "--public-key", &stranger]).await;
    assert_eq!(untrusted.status.code(), Some(1), "{}", stdout(&untrusted));
    assert!(stdout(&untrusted).contains("checkpoint not trusted"), "{}", stdout(&untrusted));

    // A superuser edits an event recorded between the two checkpoints.
    let mut superuser = sqlx::PgConnection::connect(&server.database_url).await.expect("superuser");
    sqlx::raw_sql("ALTER TABLE events DISABLE TRIGGER USER").execute(&mut superuser).await.expect("disable");
    sqlx::query("UPDATE events SET metadata = jsonb_set(metadata, '{actor_id}', '\"nobody\"') WHERE position = $1")
        .bind(first + 1)
        .execute(&mut superuser)
        .await
        .expect("tamper");
    let check = server.chipledger(&["verify", "--checkpoints", &dir, "--public-key", &key]).await;
    let out = stdout(&check);
    assert_eq!(check.status.code(), Some(1), "{out}");
    assert!(out.starts_with("CHAIN NOT VERIFIED"), "{out}");
    assert!(out.contains(&format!("first bad position {}", first + 1)), "{out}");
    assert_eq!(last_agreeing_position(&out), Some(first), "{out}");
    server.stop().await;
}
