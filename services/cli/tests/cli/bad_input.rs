//! Bad input gives one clear error line and a non-zero exit, never a panic: a malformed PHH
//! file, an unknown variant, a wrong server address, a refused command.

use crate::server::{TestServer, assert_one_line_error, run, stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_server_address_is_one_line() {
    let refused = run(&["--server", "http://127.0.0.1:1", "digest"], &[]).await;
    assert_one_line_error(&refused, 2, "cannot reach chipledgerd at http://127.0.0.1:1");
    let nonsense = run(&["--server", "not-an-address", "verify"], &[]).await;
    assert_one_line_error(&nonsense, 2, "expected http://host:port");
    let no_file = run(&["--server", "https://127.0.0.1:1", "--ca-cert", "/nonexistent/ca.pem", "digest"], &[]).await;
    assert_one_line_error(&no_file, 2, "cannot read the CA certificate /nonexistent/ca.pem");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_phh_and_unknown_variant_are_one_line() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let broken = dir.path().join("broken.phh");
    std::fs::write(&broken, "variant = 'NT'\nstarting_stacks = [100,\nactions = [\n").expect("write");
    let output = server.chipledger(&["phh", "load", broken.to_str().expect("path")]).await;
    assert_one_line_error(&output, 2, "broken.phh:3: malformed TOML");
    assert!(stdout(&output).contains("hands: 0, matched: 0, mismatched: 0, unsupported: 0, rejected: 0"));

    let unknown = dir.path().join("unknown.phh");
    std::fs::write(
        &unknown,
        "variant = 'XX'\nantes = [0, 0]\nblinds_or_straddles = [1, 2]\nstarting_stacks = [100, 100]\nactions = []\n",
    )
    .expect("write");
    let output = server.chipledger(&["phh", "load", unknown.to_str().expect("path")]).await;
    assert_one_line_error(&output, 2, "unsupported variant `XX` (not a PHH variant code)");

    let missing = server.chipledger(&["phh", "load", "/nonexistent/hands"]).await;
    assert_one_line_error(&missing, 2, "/nonexistent/hands: cannot read");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_command_is_one_line_with_reason_rule_and_numbers() {
    let server = TestServer::start().await;
    for args in [
        &["cage", "open", "--cage", "MAIN", "--denominations-cents", "100,500,2500", "--chips", "100x1000,500x1000,2500x400"][..],
        &["table", "open", "--table", "T1", "--game", "nlhe", "--small-cents", "100", "--big-cents", "200"],
        &["table", "seat", "--table", "T1", "--seat", "3", "--player", "P7"],
        &["table", "buy-in", "--table", "T1", "--seat", "3", "--player", "P7", "--amount-cents", "20000"],
    ] {
        let output = server.chipledger(args).await;
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}{}", stdout(&output), crate::server::stderr(&output));
        assert!(stdout(&output).contains("recorded, command id"), "{}", stdout(&output));
        if args[1] == "open" && args[0] == "table" {
            let fill = ["fill", "--cage", "MAIN", "--table", "T1", "--slip", "1", "--chips", "100x200,500x200,2500x40"];
            let output = server.chipledger_approved("cage", &fill, &["cage-cal", "floor-fay"]).await;
            assert_eq!(output.status.code(), Some(0), "fill: {}{}", stdout(&output), crate::server::stderr(&output));
        }
    }
    // A slip signed with typed names (R-CHIP-3 dual control): one line, nothing recorded.
    let typed = ["cage", "fill", "--cage", "MAIN", "--table", "T1", "--slip", "2", "--chips", "100x10", "--signer1", "made-up-1", "--signer2", "made-up-2"];
    let output = server.chipledger(&typed).await;
    assert_one_line_error(&output, 2, "signer_1 names \"made-up-1\" without proof");

    let output = server.chipledger(&["table", "remove-chips", "--table", "T1", "--seat", "3", "--amount-cents", "5000"]).await;
    assert_one_line_error(&output, 1, "RemoveChips refused: RATHOLING_FORBIDDEN (R-STAKE-2)");
    assert!(crate::server::stderr(&output).contains("amount_cents=5000"));

    // The same refusal for scripts.
    let output = server
        .chipledger(&["--json", "table", "remove-chips", "--table", "T1", "--seat", "3", "--amount-cents", "5000"])
        .await;
    assert_eq!(output.status.code(), Some(1));
    let refusal: serde_json::Value = serde_json::from_str(stdout(&output).trim()).expect("refusal JSON");
    assert_eq!(refusal["reason_code"], "RATHOLING_FORBIDDEN");
    assert_eq!(refusal["rule_id"], "R-STAKE-2");
    assert_eq!(refusal["numbers"]["amount_cents"], 5000);

    // Invalid arguments the server checks (seat 11) are one line too.
    let output = server.chipledger(&["table", "seat", "--table", "T1", "--seat", "11", "--player", "P8"]).await;
    assert_one_line_error(&output, 2, "invalid request: seat");
    // The auditor queries read what was recorded.
    let output = server.chipledger(&["rejections", "--reason", "RATHOLING_FORBIDDEN"]).await;
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("R-STAKE-2"), "{}", stdout(&output));
    let output = server.chipledger(&["stacks", "--table", "T1"]).await;
    assert!(stdout(&output).contains("200.00"), "{}", stdout(&output));
    server.stop().await;
}
