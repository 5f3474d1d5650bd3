//! `chipledger phh load` of the PHH samples and 200 Pluribus hands through chipledgerd: every
//! Pluribus hand's final stacks, read back from the server, equal its finishing_stacks, and
//! the chain verifies afterwards. A hand history is the past: every event is an import
//! (R-AUDIT-2) at the time the file gives its hand, so its cash counts on that day (R-AUDIT-4),
//! not on the day of the load.

use std::collections::BTreeSet;

use crate::server::{TestServer, phh_dir, stderr, stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phh_load_matches_samples_and_pluribus_subset_and_verifies_the_chain() {
    let dir = phh_dir();
    let samples = dir.join("samples");
    let pluribus = dir.join("pluribus");
    let server = TestServer::start().await;
    // The 5 samples (hold'em, PLO, short deck, 2-7 triple draw, badugi) load; --limit counts
    // loadable hands, so 205 = the 5 samples + 200 Pluribus hands.
    let output = server
        .chipledger(&["phh", "load", samples.to_str().expect("path"), pluribus.to_str().expect("path"), "--limit", "205"])
        .await;
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "stdout: {out}\nstderr: {}", stderr(&output));
    assert!(out.lines().any(|line| line == "hands: 205, matched: 200, mismatched: 0, unsupported: 0, rejected: 0"), "{out}");
    assert!(out.contains("loaded without finishing_stacks (not compared): 5"), "{out}");
    assert!(out.lines().any(|line| line.starts_with("chain verified: ")), "{out}");
    // Every event names the loader as its actor and the admin who ran it beside it; the dated
    // samples are at their files' dates (the first of a month or day a file leaves out, UTC),
    // the undated Pluribus hands at the time of the load (no time of their own).
    let events = exported(&server).await;
    assert!(events.iter().all(|event| event["actor_id"] == "phh-import" && event["imported_by"].is_string()), "{:?}", events.first());
    let dated: BTreeSet<i64> = events.iter().filter_map(|event| event["occurred_at_unix_ms"].as_i64()).collect();
    // dwan-ivey and antonius-blom 2009, 2009-11; arieh-yockey 2019-06-28, phua-xuan 2019.
    assert_eq!(dated, BTreeSet::from([1_230_768_000_000, 1_257_033_600_000, 1_561_680_000_000, 1_546_300_800_000]));
    let cash_days: BTreeSet<&str> = events
        .iter()
        .filter(|event| event["event_type"] == "CashTransaction" && event["occurred_at_unix_ms"].is_i64())
        .filter_map(|event| event["payload"]["gaming_day"].as_str())
        .collect();
    // Midnight UTC is before the 06:00 cutoff: the gaming day before the date.
    assert_eq!(cash_days, BTreeSet::from(["2008-12-31", "2009-10-31", "2018-12-31", "2019-06-27"]), "the hands' own gaming days");

    // --live: one RPC per command gives the same result; --played-at dates the undated hands.
    let before = events.len();
    let first = pluribus.join("100");
    let at = ["--played-at", "2019-07-11T00:00:00Z"];
    let output = server.chipledger(&[&["phh", "load", "--live", "--limit", "5", "--verbose"][..], &at, &[first.to_str().expect("path")]].concat()).await;
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "stdout: {out}\nstderr: {}", stderr(&output));
    assert_eq!(out.lines().filter(|line| line.starts_with("matched ")).count(), 5, "{out}");
    assert!(out.lines().any(|line| line == "hands: 5, matched: 5, mismatched: 0, unsupported: 0, rejected: 0"), "{out}");
    let events = exported(&server).await;
    assert!(events[before..].iter().all(|event| event["occurred_at_unix_ms"] == 1_562_803_200_000_i64), "{:?}", events.get(before));
    server.stop().await;
}

/// The whole log, one JSON value per event.
async fn exported(server: &TestServer) -> Vec<serde_json::Value> {
    let jsonl = server.ok(&["export", "--format", "jsonl"]).await;
    jsonl.lines().map(|line| serde_json::from_str(line).expect("one JSON event per line")).collect()
}
