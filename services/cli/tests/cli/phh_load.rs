//! `chipledger phh load` of the PHH samples and 200 Pluribus hands through chipledgerd: every
//! Pluribus hand's final stacks, read back from the server, equal its finishing_stacks, and
//! the chain verifies afterwards.

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

    // --live: one RPC per command gives the same result.
    let first = pluribus.join("100");
    let output = server.chipledger(&["phh", "load", "--live", "--limit", "5", "--verbose", first.to_str().expect("path")]).await;
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "stdout: {out}\nstderr: {}", stderr(&output));
    assert_eq!(out.lines().filter(|line| line.starts_with("matched ")).count(), 5, "{out}");
    assert!(out.lines().any(|line| line == "hands: 5, matched: 5, mismatched: 0, unsupported: 0, rejected: 0"), "{out}");
    server.stop().await;
}
