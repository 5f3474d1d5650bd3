//! `chipledger demo` end to end against chipledgerd: exit code, the two refusals with reason
//! code, rule id and numbers, reconciliation figures that add up, and the printed chain digest
//! equal to the server's own.

use crate::server::{TestServer, stderr, stdout};

fn figure(line: &str, label: &str) -> i64 {
    let rest = line.split(label).nth(1).unwrap_or_else(|| panic!("{label:?} in {line:?}"));
    let text: String = rest.trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',' || *c == '-').collect();
    let digits: String = text.chars().filter(|c| c.is_ascii_digit() || *c == '-').collect();
    digits.parse().unwrap_or_else(|_| panic!("number after {label:?} in {line:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_runs_end_to_end_with_refusals_reconciliation_and_verified_chain() {
    let server = TestServer::start().await;
    let output = server.chipledger(&["demo"]).await;
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "stdout: {out}\nstderr: {}", stderr(&output));
    assert!(!stderr(&output).contains("panicked"));

    assert!(out.contains("REFUSED RATHOLING_FORBIDDEN rule R-STAKE-2"), "{out}");
    assert!(out.contains("numbers: amount_cents=5000, seat=4, stack_cents="), "{out}");
    assert!(out.contains("REFUSED REBUY_BELOW_AMOUNT_LEFT rule R-REBUY-1"), "{out}");
    assert!(out.contains("numbers: amount_left_with_cents="), "{out}");
    assert!(out.contains("pots: main 302.00, side 1 100.00"), "three-way all-in side pot: {out}");
    // The narration is in words, not enum names.
    assert!(out.contains("  seat 4 posts new player 2.00\n"), "{out}");
    assert!(!out.contains("ROLE_") && !out.contains("NewPlayer"), "{out}");

    // Each shift's figures satisfy R-CHIP-4; the log sums to zero (R-UNIT-4).
    let shifts: Vec<&str> = out.lines().filter(|line| line.starts_with("reconciliation ")).collect();
    assert_eq!(shifts.len(), 2, "{out}");
    for line in shifts {
        let result = figure(line, "drop ") + figure(line, "credits ") + figure(line, "closing ")
            - figure(line, "opening ")
            - figure(line, "fills ");
        assert_eq!(result, figure(line, "= result "), "{line}");
        assert!(figure(line, "fills ") > 0, "{line}");
    }
    assert!(out.lines().any(|line| line.starts_with("gaming day ") && line.ends_with("sum of all balances 0.00")), "{out}");
    assert!(out.contains("CTR required: in true out true"), "{out}");

    // The digest the demo printed is the server's chain head.
    let verified = out.lines().find(|line| line.starts_with("chain verified: ")).expect("chain line");
    let digest = server.chipledger(&["digest", "--json"]).await;
    assert_eq!(digest.status.code(), Some(0), "{}", stderr(&digest));
    let head: serde_json::Value = serde_json::from_str(stdout(&digest).trim()).expect("digest JSON");
    let hash = head["chain_hash_hex"].as_str().expect("hash");
    assert_eq!(hash.len(), 64);
    assert!(verified.ends_with(&format!("digest position {} hash {hash}", head["global_position"])), "{verified}");

    // A saved digest still verifies after more history is written.
    let dir = tempfile::tempdir().expect("temp dir");
    let saved = dir.path().join("digest.json");
    let saved = saved.to_str().expect("utf-8 path");
    assert_eq!(server.chipledger(&["digest", "--out", saved]).await.status.code(), Some(0));
    assert_eq!(server.chipledger(&["demo"]).await.status.code(), Some(0));
    let check = server.chipledger(&["verify", "--digest-file", saved]).await;
    assert_eq!(check.status.code(), Some(0), "{}{}", stdout(&check), stderr(&check));
    assert!(stdout(&check).starts_with("chain verified: "));
    server.stop().await;
}
