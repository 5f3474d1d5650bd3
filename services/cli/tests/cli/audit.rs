//! The auditor commands against one session whose figures are worked out by hand:
//!
//! - cage MAIN opens; table T1 (NLHE 100/200, rake 10% in $1 steps, cap $5) gets fill slip 1 of
//!   $2,200.00 (100x200, 500x200, 2500x40);
//! - P3 buys $200.00 of chips at the cage; P1 and P2 buy in for $200.00 cash at seats 1 and 2
//!   (8 x $25 from the tray each), P3 for $200.00 of pocket chips at seat 3;
//! - hand 1, button 3: SB 1 posts 100, BB 2 posts 200, 3 raises to 600, 1 folds, 2 calls; flop:
//!   2 checks, 3 bets 1,000, 2 folds. Pot 2,300 = 1,300 contested + 1,000 uncalled; rake 10% of
//!   1,300 = 130 -> 100 (whole dollars); seat 3 receives 1,200 + 1,000 = 2,200.
//!   Stacks after: 19,900 / 19,400 / 20,600 (sum 59,900 + rake 100 = 60,000);
//! - everyone cashes out; P3 redeems $200.00 (pocket left: $6.00); the shift closes with the
//!   tray at 100x200, 500x200, 2500x24 ($1,800.00) and a $400.00 drop: result = 400 + 0 +
//!   1,800 - 0 - 2,200 = 0 (the rake sits in its own account, not in the drop box);
//! - the cage closes the day: chip liability $2,200.00, all balances sum to zero.

use serde_json::Value;

use crate::server::{TestServer, stderr, stdout};

async fn ok(server: &TestServer, args: &[&str]) -> String {
    server.ok(args).await
}

async fn json(server: &TestServer, args: &[&str]) -> Value {
    server.json(args).await
}

async fn play_session(server: &TestServer) {
    let fill = ["fill", "--cage", "MAIN", "--table", "T1", "--slip", "1", "--chips", "100x200,500x200,2500x40"];
    let steps: &[&[&str]] = &[
        &["cage", "open", "--cage", "MAIN", "--denominations-cents", "100,500,2500", "--chips", "100x1000,500x1000,2500x400"],
        &["table", "open", "--table", "T1", "--game", "nlhe", "--small-cents", "100", "--big-cents", "200"],
        &["cage", "sell", "--cage", "MAIN", "--player", "P3", "--chips", "500x40"],
        &["table", "seat", "--table", "T1", "--seat", "1", "--player", "P1"],
        &["table", "buy-in", "--table", "T1", "--seat", "1", "--player", "P1", "--amount-cents", "20000"],
        &["table", "seat", "--table", "T1", "--seat", "2", "--player", "P2"],
        &["table", "buy-in", "--table", "T1", "--seat", "2", "--player", "P2", "--amount-cents", "20000"],
        &["table", "seat", "--table", "T1", "--seat", "3", "--player", "P3"],
        &["table", "buy-in", "--table", "T1", "--seat", "3", "--player", "P3", "--amount-cents", "20000", "--source", "pocket"],
        &["table", "start-hand", "--table", "T1", "--hand-no", "1", "--button", "3", "--seats", "1,2,3"],
        &["table", "post", "--table", "T1", "--seat", "1", "--kind", "small-blind", "--amount-cents", "100"],
        &["table", "post", "--table", "T1", "--seat", "2", "--kind", "big-blind", "--amount-cents", "200"],
        &["table", "act", "--table", "T1", "--seat", "3", "--action", "raise", "--to-cents", "600"],
        &["table", "act", "--table", "T1", "--seat", "1", "--action", "fold"],
        &["table", "act", "--table", "T1", "--seat", "2", "--action", "call"],
        &["table", "next-round", "--table", "T1"],
        &["table", "act", "--table", "T1", "--seat", "2", "--action", "check"],
        &["table", "act", "--table", "T1", "--seat", "3", "--action", "bet", "--to-cents", "1000"],
        &["table", "act", "--table", "T1", "--seat", "2", "--action", "fold"],
        &["table", "end-hand", "--table", "T1"],
        &["table", "cash-out", "--table", "T1", "--seat", "3", "--player", "P3"],
        &["cage", "redeem", "--cage", "MAIN", "--player", "P3", "--chips", "2500x8"],
        &["table", "cash-out", "--table", "T1", "--seat", "1", "--player", "P1"],
        &["table", "cash-out", "--table", "T1", "--seat", "2", "--player", "P2"],
    ];
    for (index, args) in steps.iter().enumerate() {
        ok(server, args).await;
        if index == 1 {
            // Fill slip 1, signed by the cage and the floor, each with its own approval (R-CHIP-3).
            let output = server.chipledger_approved("cage", &fill, &["cage-cal", "floor-fay"]).await;
            assert_eq!(output.status.code(), Some(0), "fill: {}{}", stdout(&output), stderr(&output));
        }
    }
    // The count, signed by the two who counted, each with an approval of their own (R-CHIP-4).
    let close = ["close-shift", "--table", "T1", "--counted-tray", "100x200,500x200,2500x24", "--counted-drop-cents", "40000"];
    let output = server.chipledger_approved("table", &close, &["floor-fay", "cage-cal"]).await;
    assert_eq!(output.status.code(), Some(0), "close-shift: {}{}", stdout(&output), stderr(&output));
}

/// Position of the first event of `event_type` on `stream` in a JSON event list.
fn position_of(events: &[Value], stream: &str, event_type: &str) -> i64 {
    events
        .iter()
        .find(|event| event["stream_id"] == stream && event["event_type"] == event_type)
        .and_then(|event| event["global_position"].as_i64())
        .unwrap_or_else(|| panic!("no {event_type} on {stream}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auditor_commands_report_the_session_figures_exactly() {
    let server = TestServer::start().await;
    play_session(&server).await;

    // The whole log, as JSON lines: dense positions, and the postings of every event sum to
    // zero (R-UNIT-4).
    let jsonl = ok(&server, &["export", "--format", "jsonl"]).await;
    let events: Vec<Value> = jsonl.lines().map(|line| serde_json::from_str(line).expect("one JSON event per line")).collect();
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event["global_position"], index as i64 + 1);
        let sum: i64 = event["postings"].as_array().expect("postings").iter().map(|p| p["amount_cents"].as_i64().expect("cents")).sum();
        assert_eq!(sum, 0, "event {event}");
    }
    let digest = json(&server, &["digest"]).await;
    assert_eq!(digest["global_position"], events.len() as i64);
    assert_eq!(events.last().expect("events")["hash_hex"], digest["chain_hash_hex"]);
    let day = events[0]["gaming_day"].as_str().expect("gaming day").to_string();

    // The same log as CSV, to a file: one row per event with the same hashes and postings.
    let dir = tempfile::tempdir().expect("temp dir");
    let csv_path = dir.path().join("events.csv");
    ok(&server, &["export", "--format", "csv", "--out", csv_path.to_str().expect("path")]).await;
    let mut reader = csv::Reader::from_path(&csv_path).expect("CSV export");
    let header: Vec<String> = reader.headers().expect("header").iter().map(str::to_string).collect();
    assert_eq!(header.first().map(String::as_str), Some("global_position"));
    assert_eq!(header.len(), 21);
    assert!(header.iter().any(|column| column == "imported_by") && header.iter().any(|column| column == "device"), "{header:?}");
    let rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().expect("rows");
    assert_eq!(rows.len(), events.len());
    for (row, event) in rows.iter().zip(&events) {
        assert_eq!(&row[0], event["global_position"].to_string());
        assert_eq!(&row[4], event["event_type"].as_str().expect("type"));
        assert_eq!(&row[10], event["hash_hex"].as_str().expect("hash"));
        let postings: Vec<String> = event["postings"]
            .as_array()
            .expect("postings")
            .iter()
            .map(|p| format!("{}:{}", p["account"].as_str().expect("account"), p["amount_cents"]))
            .collect();
        assert_eq!(&row[11], postings.join(";"));
    }
    let p1_buy_in = position_of(&events, "table-T1", "BoughtIn") as usize;
    assert_eq!(
        &rows[p1_buy_in - 1][11],
        "house/patrons:-20000;table/T1/drop:20000;table/T1/tray/2500:-20000;table/T1/seat/1:20000"
    );
    // Free text a spreadsheet would run as a formula is defused in the CSV (the console pass:
    // a reason note `=HYPERLINK(..)` opened as a live link), and exact in JSON lines.
    ok(&server, &["table", "--reason", "=HYPERLINK(\"http://x\",\"y\")", "--device", "@dev", "open", "--table", "TCSV", "--game", "plo", "--small", "2", "--big", "5"]).await;
    let csv_path = dir.path().join("formulas.csv");
    ok(&server, &["export", "--format", "csv", "--out", csv_path.to_str().expect("path")]).await;
    let rows: Vec<csv::StringRecord> = csv::Reader::from_path(&csv_path).expect("CSV").records().collect::<Result<_, _>>().expect("rows");
    let opened = rows.iter().find(|row| &row[1] == "table-TCSV").expect("the table opened");
    assert_eq!((&opened[15], &opened[16]), ("'@dev", "'=HYPERLINK(\"http://x\",\"y\")"));
    let exact = ok(&server, &["export", "--format", "jsonl", "--table", "TCSV"]).await;
    assert!(exact.contains("\"reason_note\":\"=HYPERLINK("), "{exact}");
    // A filtered export: only P3's stream, in order.
    let p3_lines = ok(&server, &["export", "--format", "jsonl", "--player", "P3"]).await;
    let p3_types: Vec<String> = p3_lines
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("JSON")["event_type"].as_str().expect("type").to_string())
        .collect();
    assert_eq!(
        p3_types,
        ["ChipsBought", "CashTransaction", "JoinedTable", "PocketChipsPlayed", "LeftTable", "ChipsRedeemed", "CashTransaction"]
    );

    // History with running balances of P3's pocket: +200.00 bought, -200.00 into the buy-in,
    // +206.00 at the cash-out, -200.00 redeemed, 6.00 left.
    let history = json(&server, &["history", "--player", "P3"]).await;
    let rows: Vec<(String, i64, i64)> = history["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|event| {
            (
                event["event_type"].as_str().expect("type").to_string(),
                event["pocket_change_cents"].as_i64().expect("change"),
                event["pocket_balance_cents"].as_i64().expect("balance"),
            )
        })
        .collect();
    let expected = [
        ("ChipsBought", 20_000, 20_000),
        ("CashTransaction", 0, 20_000),
        ("JoinedTable", -20_000, 0),
        ("PocketChipsPlayed", 0, 0),
        ("LeftTable", 20_600, 20_600),
        ("ChipsRedeemed", -20_000, 600),
        ("CashTransaction", 0, 600),
    ];
    let expected: Vec<(String, i64, i64)> = expected.iter().map(|(t, c, b)| (t.to_string(), *c, *b)).collect();
    assert_eq!(rows, expected);
    // A range that starts later shows each row's change as the whole history does: the first
    // row's against the pocket just before it (the auditor pass: a range from the redemption
    // showed the 6.00 left as +6.00, not -200.00).
    let redeemed_at = history["events"][5]["recorded_at_unix_ms"].as_i64().expect("time").to_string();
    let later = json(&server, &["history", "--player", "P3", "--from", &redeemed_at]).await;
    let later = later["events"].as_array().expect("events");
    assert!(!later.is_empty() && later.len() < 7, "{later:?}");
    for row in later {
        let whole = history["events"].as_array().expect("events").iter().find(|e| e["global_position"] == row["global_position"]).expect("in the whole history");
        assert_eq!((&row["pocket_change_cents"], &row["pocket_balance_cents"]), (&whole["pocket_change_cents"], &whole["pocket_balance_cents"]), "{row}");
    }
    assert!(later.iter().any(|row| row["event_type"] == "ChipsRedeemed" && row["pocket_change_cents"] == -20_000), "{later:?}");
    let table = ok(&server, &["history", "--player", "P3"]).await;
    assert!(table.starts_with("history of player P3 (7 events)\n"), "{table}");
    assert!(table.lines().any(|line| line.contains("LeftTable") && line.contains("206.00") && line.ends_with("206.00 ┆ 0.00 │")), "{table}");

    // The hand reconstructed: who put in and got back what, the pot, the award, the rake.
    let hand = json(&server, &["hand", "--table", "T1", "--hand-no", "1"]).await;
    assert_eq!(hand["ended"], true);
    assert_eq!(hand["button_seat"], 3);
    let contributions: Vec<(i64, i64, i64)> = hand["contributions"]
        .as_array()
        .expect("contributions")
        .iter()
        .map(|c| (c["seat"].as_i64().expect("seat"), c["put_in_cents"].as_i64().expect("in"), c["received_cents"].as_i64().expect("out")))
        .collect();
    assert_eq!(contributions, [(1, 100, 0), (2, 600, 0), (3, 1_600, 2_200)]);
    // R-POT-4: $10 of it is seat 3's bet nobody called, returned (never raked).
    assert_eq!(hand["pots"], serde_json::json!([{"amount_cents": 2300, "returned_cents": 1000, "eligible_seats": [3]}]));
    assert_eq!(hand["awards"], serde_json::json!([{"pot_index": 0, "seat": 3, "player_id": "P3", "amount_cents": 2200}]));
    assert_eq!(hand["rake_cents"], 100);
    let starting: Vec<i64> = hand["starting_seats"].as_array().expect("seats").iter().map(|s| s["stack_cents"].as_i64().expect("stack")).collect();
    assert_eq!(starting, [20_000, 20_000, 20_000]);
    let text = ok(&server, &["hand", "--table", "T1", "--hand-no", "1"]).await;
    assert!(text.starts_with("hand 1 at table T1 (button seat 3, ended)\n"), "{text}");
    assert!(text.lines().any(|line| line.contains("P3") && line.contains("16.00") && line.contains("22.00") && line.contains(" 6.00")), "{text}");
    assert!(text.contains("rake 1.00, kitty 0.00, jackpot drop 0.00"), "{text}");
    // Each post and action in words, with its amount.
    for step in ["seat 1 posts small blind 1.00", "seat 2 posts big blind 2.00", "seat 3 raises to 6.00", "seat 3 bets 10.00"] {
        assert!(text.contains(step), "{step:?} in {text}");
    }
    assert_eq!(hand["kitty_cents"], 0);

    // Stacks as of a position: after the last buy-in, after the settlement, and now (empty).
    let last_buy_in = position_of(&events, "player-P3", "PocketChipsPlayed");
    let settled = position_of(&events, "table-T1", "HandSettled");
    let stacks = |value: &Value| -> Vec<(i64, i64)> {
        value["seats"].as_array().expect("seats").iter().map(|s| (s["seat"].as_i64().expect("seat"), s["stack_cents"].as_i64().expect("stack"))).collect()
    };
    let before = json(&server, &["stacks", "--table", "T1", "--position", &last_buy_in.to_string()]).await;
    assert_eq!(stacks(&before), [(1, 20_000), (2, 20_000), (3, 20_000)]);
    let after = json(&server, &["stacks", "--table", "T1", "--position", &settled.to_string()]).await;
    assert_eq!(stacks(&after), [(1, 19_900), (2, 19_400), (3, 20_600)]);
    // Who sat there then, from the table's events up to the position (the numbers pass: a past
    // table had been shown without its players, and an all-in seat with nothing behind left out).
    let players: Vec<&str> = after["seats"].as_array().expect("seats").iter().map(|s| s["player_id"].as_str().expect("player")).collect();
    assert_eq!((players, &after["as_of_position"]), (vec!["P1", "P2", "P3"], &serde_json::json!(settled)));
    // A position past the head is answered, and labelled, as of the head (the auditor pass).
    let head = json(&server, &["balance", "house/patrons"]).await["global_position"].as_i64().expect("the head");
    let past = ok(&server, &["stacks", "--table", "T1", "--position", "999999"]).await;
    assert!(past.starts_with(&format!("stacks at table T1 as of position {head}\n")), "{past}");
    // "As of" the settlement's own displayed millisecond includes it (the log keeps
    // microseconds; the server bounds the query at the end of that millisecond).
    let at_time = events[settled as usize - 1]["recorded_at_unix_ms"].as_i64().expect("time");
    let after_by_time = json(&server, &["stacks", "--table", "T1", "--at", &at_time.to_string()]).await;
    assert_eq!(stacks(&after_by_time), [(1, 19_900), (2, 19_400), (3, 20_600)]);
    let now = json(&server, &["stacks", "--table", "T1"]).await;
    assert_eq!(stacks(&now), []);
    let text = ok(&server, &["stacks", "--table", "T1", "--position", &settled.to_string()]).await;
    assert!(text.starts_with(&format!("stacks at table T1 as of position {settled}\n")), "{text}");
    assert!(text.contains("194.00") && text.contains("206.00") && text.contains("199.00"), "{text}");

    // The shift (R-CHIP-4) and the gaming day (R-CHIP-5, R-UNIT-4).
    let shift = json(&server, &["reconcile", "shift", "--table", "T1"]).await;
    let shift_closed = position_of(&events, "table-T1", "ShiftClosed");
    assert_eq!(
        shift,
        serde_json::json!({
            "table_id": "T1", "gaming_day": day, "opening_inventory_cents": 0, "closing_inventory_cents": 180_000,
            "fills_cents": 220_000, "credits_cents": 0, "drop_cents": 40_000, "result_cents": 0, "rake_cents": 100, "toke_cents": 0,
            "shift_close_position": shift_closed, "tray_variance": [], "drop_variance_cents": 0, "variance_cents": 0,
            "signers": ["floor-fay", "cage-cal"],
        })
    );
    let text = ok(&server, &["reconcile", "shift", "--table", "T1"]).await;
    assert!(
        text.contains("drop 400.00 + credits 0.00 + closing 1,800.00 - opening 0.00 - fills 2,200.00 = result 0.00 (R-CHIP-4)"),
        "{text}"
    );
    ok(&server, &["cage", "close-day", "--cage", "MAIN"]).await;
    let report = json(&server, &["reconcile", "day", "--day", &day]).await;
    // Issued: the fill (100x200, 500x200, 2500x40) and P3's purchase (500x40); returned: P3's
    // redemption (2500x8). Liability 240,000 - 20,000 = 220,000 = tray 180,000 + pockets
    // 19,900 + 19,400 + 600 + the rake, 100, gone to the count room at the close.
    let chips = |list: &Value| -> Vec<(i64, i64)> {
        list.as_array().expect("chips").iter().map(|c| (c["denomination_cents"].as_i64().expect("d"), c["count"].as_i64().expect("n"))).collect()
    };
    assert_eq!(chips(&report["chips_issued"]), [(100, 200), (500, 240), (2_500, 40)]);
    assert_eq!(chips(&report["chips_returned"]), [(2_500, 8)]);
    assert_eq!(report["chip_liability_cents"], 220_000);
    assert_eq!(report["sum_of_balances_cents"], 0);
    assert_eq!(report["tables"], serde_json::json!([shift]));
    server.stop().await;
}
