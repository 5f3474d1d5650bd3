//! The commands and conventions of issue 12, from a new user's side: balances as of a position
//! and a time, sessions, following the log, money amounts beside cents, times in the property's
//! zone with their offset, the cage's void-slip, color-change and count, table config, a closed
//! pipe, and bad amounts and times named in one line.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdout};

use crate::server::{TestServer, assert_one_line_error, stderr, stdout};

/// The property's zone in these tests: not UTC, with daylight saving.
const ZONE: &str = "America/Los_Angeles";
/// How long a line from a running `chipledger` may take to arrive (a bound, not a wait).
const LINE_TIMEOUT: Duration = Duration::from_secs(30);

async fn la_server() -> TestServer {
    TestServer::start_with(&format!("[gaming_day]\ntime_zone = \"{ZONE}\"\ncutoff = \"06:00\"\n")).await
}

async fn ok(server: &TestServer, args: &[&str]) -> String {
    server.ok(args).await
}

async fn json(server: &TestServer, args: &[&str]) -> Value {
    server.json(args).await
}

async fn approved(server: &TestServer, group: &str, operation: &[&str], approvers: &[&str]) -> String {
    let output = server.chipledger_approved(group, operation, approvers).await;
    assert_eq!(output.status.code(), Some(0), "{operation:?}\nstdout: {}\nstderr: {}", stdout(&output), stderr(&output));
    stdout(&output)
}

/// A cage with chips and cash, a NLHE table filled from it (slip 1).
async fn open_room(server: &TestServer) {
    ok(server, &["cage", "open", "--cage", "MAIN", "--denominations-cents", "100,500,2500", "--chips", "100x1000,500x1000,2500x400", "--cash", "5,000.00"]).await;
    ok(server, &["table", "open", "--table", "T1", "--game", "nlhe", "--small", "1", "--big", "2"]).await;
    approved(server, "cage", &["fill", "--cage", "MAIN", "--table", "T1", "--slip", "1", "--chips", "100x200,500x200,2500x40"], &["cage-cal", "floor-fay"]).await;
}

/// Every event of the log (JSON lines), oldest first.
async fn events(server: &TestServer) -> Vec<Value> {
    ok(server, &["export", "--format", "jsonl"]).await.lines().map(|line| serde_json::from_str(line).expect("an event")).collect()
}

fn last_of<'a>(events: &'a [Value], event_type: &str) -> &'a Value {
    events.iter().rev().find(|event| event["event_type"] == event_type).unwrap_or_else(|| panic!("no {event_type}"))
}

/// `unix_ms` as a wall clock in [`ZONE`] to the millisecond, and as the CLI must print it.
fn local(unix_ms: i64) -> (String, String) {
    let zoned = jiff::Timestamp::from_millisecond(unix_ms).expect("a time").in_tz(ZONE).expect("the zone");
    (zoned.strftime("%Y-%m-%d %H:%M:%S%.3f").to_string(), zoned.strftime("%Y-%m-%d %H:%M:%S %:z").to_string())
}

async fn next_line<R: tokio::io::AsyncRead + Unpin>(lines: &mut Lines<BufReader<R>>, what: &str) -> String {
    match tokio::time::timeout(LINE_TIMEOUT, lines.next_line()).await {
        Ok(Ok(Some(line))) => line,
        other => panic!("no {what} line within {LINE_TIMEOUT:?}: {other:?}"),
    }
}

/// A running `chipledger` with its output read line by line.
struct Running {
    child: Child,
    out: Lines<BufReader<ChildStdout>>,
    err: Lines<BufReader<ChildStderr>>,
}

fn spawn(server: &TestServer, args: &[&str]) -> Running {
    let mut child = server.command(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("chipledger starts");
    let out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let err = BufReader::new(child.stderr.take().expect("stderr")).lines();
    Running { child, out, err }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn balance_as_of_a_position_and_a_wall_clock_time_in_the_property_zone() {
    let server = la_server().await;
    open_room(&server).await;
    ok(&server, &["cage", "sell", "--cage", "MAIN", "--player", "P1", "--chips", "2500x20"]).await;
    let log = events(&server).await;
    let opened = last_of(&log, "CageOpened");
    let sold = last_of(&log, "ChipsSold");
    let opened_at = opened["global_position"].as_i64().expect("position");

    // Now: the float plus the $500 sale, at the head of the log.
    let now = json(&server, &["balance", "cage/MAIN/cash"]).await;
    assert_eq!(now["balance_cents"], 550_000);
    assert_eq!(now["currency"], "USD");
    assert_eq!(now["global_position"], log.last().expect("events")["global_position"]);
    assert_eq!(json(&server, &["balance", "player/P1/pocket"]).await["balance_cents"], 50_000);

    // As of the cage's opening, by position and by the wall-clock time it was recorded at.
    let by_position = json(&server, &["balance", "cage/MAIN/cash", "--position", &opened_at.to_string()]).await;
    assert_eq!((by_position["balance_cents"].as_i64(), by_position["global_position"].as_i64()), (Some(500_000), Some(opened_at)));
    let (typed, shown) = local(opened["recorded_at_unix_ms"].as_i64().expect("time"));
    assert!(sold["recorded_at_unix_ms"].as_i64() > opened["recorded_at_unix_ms"].as_i64(), "the sale is a later millisecond");
    let by_time = json(&server, &["balance", "cage/MAIN/cash", "--at", &typed]).await;
    assert_eq!(by_time["balance_cents"], 500_000, "as of {typed} local");
    assert!(by_time["global_position"].as_i64() >= Some(opened_at) && by_time["global_position"].as_i64() < sold["global_position"].as_i64());

    // The human form: money, currency, position, and the time in the zone with its offset.
    let text = ok(&server, &["balance", "cage/MAIN/cash", "--at", &typed]).await;
    assert!(text.starts_with("cage/MAIN/cash 5,000.00 USD as of position "), "{text}");
    assert!(text.trim_end().ends_with(&format!("({shown})")), "{text} should show {shown}");
    assert!(shown.ends_with(" -08:00") || shown.ends_with(" -07:00"), "{shown}");
    // The same instant in RFC 3339 with its offset reads the same balance.
    let rfc3339 = jiff::Timestamp::from_millisecond(opened["recorded_at_unix_ms"].as_i64().expect("time")).expect("time").to_string();
    assert_eq!(json(&server, &["balance", "cage/MAIN/cash", "--at", &rfc3339]).await["balance_cents"], 500_000);
    // Before anything was recorded: nothing.
    assert_eq!(json(&server, &["balance", "cage/MAIN/cash", "--at", "2020-01-01 00:00"]).await["balance_cents"], 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_table_seat_game_times_and_amounts() {
    let server = la_server().await;
    open_room(&server).await;
    ok(&server, &["table", "seat", "--table", "T1", "--seat", "4", "--player", "P1"]).await;
    ok(&server, &["table", "buy-in", "--table", "T1", "--seat", "4", "--player", "P1", "--amount", "150"]).await;
    ok(&server, &["table", "cash-out", "--table", "T1", "--seat", "4", "--player", "P1"]).await;
    ok(&server, &["table", "seat", "--table", "T1", "--seat", "2", "--player", "P1"]).await;
    ok(&server, &["table", "buy-in", "--table", "T1", "--seat", "2", "--player", "P1", "--amount", "150"]).await;

    let listed = json(&server, &["sessions", "P1"]).await;
    let sessions = listed["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 2, "{listed}");
    assert_eq!((sessions[0]["table_id"].as_str(), sessions[0]["seat"].as_i64()), (Some("T1"), Some(4)));
    assert_eq!((sessions[0]["bought_in_cents"].as_i64(), sessions[0]["left_with_cents"].as_i64()), (Some(15_000), Some(15_000)));
    assert!(sessions[0]["ended_at_unix_ms"].as_i64() >= sessions[0]["started_at_unix_ms"].as_i64());
    assert_eq!((sessions[1]["seat"].as_i64(), &sessions[1]["left_with_cents"]), (Some(2), &Value::Null));

    let text = ok(&server, &["sessions", "P1"]).await;
    assert!(text.starts_with(&format!("sessions of player P1 (2, times in {ZONE})")), "{text}");
    let (_, started) = local(sessions[0]["started_at_unix_ms"].as_i64().expect("start"));
    let first = text.lines().find(|line| line.contains("┆ 4 ")).unwrap_or_else(|| panic!("seat 4 row in {text}"));
    assert!(first.contains(&started) && first.contains("150.00") && first.contains(sessions[0]["game"].as_str().expect("game")), "{first}");
    assert!(text.lines().any(|line| line.contains("┆ 2 ") && line.contains("still seated")), "{text}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_prints_each_event_as_it_is_recorded() {
    let server = la_server().await;
    open_room(&server).await;
    let mut follow = spawn(&server, &["follow", "--table", "T1"]);
    let ready = next_line(&mut follow.err, "ready").await;
    assert!(ready.starts_with("following the log after position "), "{ready}");

    // Recorded after the subscription opened: printed, in words, in the property's zone.
    ok(&server, &["table", "seat", "--table", "T1", "--seat", "3", "--player", "P9"]).await;
    let seated = next_line(&mut follow.out, "PlayerSeated").await;
    assert!(seated.contains(" table-T1 PlayerSeated by test-admin (admin)"), "{seated}");
    assert!(seated.contains(" -08:00 ") || seated.contains(" -07:00 "), "{seated}");
    // A cage event is not of the table's stream; the next table event is the next line.
    ok(&server, &["cage", "sell", "--cage", "MAIN", "--player", "P9", "--chips", "2500x4"]).await;
    ok(&server, &["table", "buy-in", "--table", "T1", "--seat", "3", "--player", "P9", "--amount", "100", "--source", "pocket"]).await;
    let bought = next_line(&mut follow.out, "buy-in").await;
    assert!(bought.contains(" table-T1 ") && bought.contains("table/T1/seat/3 +100.00"), "{bought}");
    follow.child.start_kill().expect("kill follow");
    follow.child.wait().await.expect("follow ends");

    // From a position: the log from there, in order.
    let mut from_start = spawn(&server, &["follow", "--from-position", "1"]);
    let first = next_line(&mut from_start.out, "first event").await;
    assert!(first.starts_with("1 ") && first.contains(" cage-MAIN CageOpened by test-admin (admin)"), "{first}");
    let second = next_line(&mut from_start.out, "second event").await;
    assert!(second.starts_with("2 "), "{second}");
    from_start.child.start_kill().expect("kill follow");
    from_start.child.wait().await.expect("follow ends");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_money_amount_records_the_same_postings_as_its_cents() {
    let server = TestServer::start().await;
    open_room(&server).await;
    for (seat, player, amount) in [("1", "P1", ["--amount", "151.00"]), ("2", "P2", ["--amount-cents", "15100"]), ("3", "P3", ["--amount", "15100c"])] {
        ok(&server, &["table", "seat", "--table", "T1", "--seat", seat, "--player", player]).await;
        let result = json(&server, &["table", "buy-in", "--table", "T1", "--seat", seat, "--player", player, amount[0], amount[1]]).await;
        let account = format!("table/T1/seat/{seat}");
        let balance = result["balances"].as_array().expect("balances").iter().find(|b| b["account"] == account.as_str()).cloned();
        assert_eq!(balance.map(|b| b["balance_cents"].clone()), Some(Value::from(15_100)), "{amount:?}: {result}");
    }
    // The three buy-ins' postings are the same but for the seat.
    let log = events(&server).await;
    let postings: Vec<Vec<(String, i64)>> = log
        .iter()
        .filter(|event| event["event_type"] == "BoughtIn")
        .map(|event| {
            let mut list: Vec<(String, i64)> = event["postings"]
                .as_array()
                .expect("postings")
                .iter()
                .map(|p| (p["account"].as_str().expect("account").replace(['1', '2', '3'], "N"), p["amount_cents"].as_i64().expect("cents")))
                .collect();
            list.sort();
            list
        })
        .collect();
    assert_eq!(postings.len(), 3);
    assert!(postings.iter().all(|list| *list == postings[0] && list.iter().any(|(_, cents)| *cents == 15_100)), "{postings:?}");
    // A plain number is money in the other amount flags too.
    ok(&server, &["table", "tip", "--table", "T1", "--seat", "1", "--amount", "1"]).await;
    assert_eq!(json(&server, &["balance", "table/T1/seat/1"]).await["balance_cents"], 15_000);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_amounts_times_and_accounts_are_one_line_naming_the_format() {
    let server = la_server().await;
    open_room(&server).await;
    let buy_in = |amount: &'static [&'static str]| {
        let mut args = vec!["table", "buy-in", "--table", "T1", "--seat", "1", "--player", "P1"];
        args.extend_from_slice(amount);
        args
    };
    for (amount, needle) in [
        (&["--amount", "2x"][..], "expected an amount like 200 or 200.50"),
        (&["--amount", "200.505"], "expected an amount like 200 or 200.50"),
        (&["--amount", "1,00"], "expected an amount like 200 or 200.50"),
        (&["--amount-cents", "200.50"], "expected whole cents like 20050"),
        (&["--amount", "1", "--amount-cents", "100"], "cannot be used with"),
        (&[], "--amount <AMOUNT>|--amount-cents <CENTS>"),
    ] {
        let output = server.chipledger(&buy_in(amount)).await;
        assert_one_line_error(&output, 2, needle);
    }
    let output = server.chipledger(&["stacks", "--table", "T1", "--at", "tomorrow at 8"]).await;
    assert_one_line_error(&output, 2, "expected a time like \"2026-12-01 08:03\" (in the property's zone), 2026-12-01T08:03:00-08:00");
    let output = server.chipledger(&["history", "--player", "P1", "--from", "2026-13-01 08:03"]).await;
    assert_one_line_error(&output, 2, "expected a time like");
    // The night summer time ends, 01:30 happens twice in Los Angeles.
    let output = server.chipledger(&["balance", "cage/MAIN/cash", "--at", "2026-11-01 01:30"]).await;
    assert_one_line_error(&output, 2, "is ambiguous or does not exist in America/Los_Angeles");
    let output = server.chipledger(&["balance", "cage/MAIN"]).await;
    assert_one_line_error(&output, 2, "expected an account like cage/MAIN/cash");
    let output = server.chipledger(&["follow", "--from-position", "0"]).await;
    assert_one_line_error(&output, 2, "expected a global position of 1 or more");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_pipe_ends_export_and_follow_quietly() {
    let server = TestServer::start().await;
    // Far more than a pipe holds (64 KiB), so that the reader closes it while the writer is
    // still writing.
    assert_eq!(server.chipledger(&["demo"]).await.status.code(), Some(0));
    for args in [&["export", "--format", "jsonl"][..], &["export", "--format", "csv"], &["follow", "--from-position", "1"]] {
        let mut running = spawn(&server, args);
        let first = next_line(&mut running.out, "first").await;
        assert!(!first.is_empty());
        drop(running.out); // the reader goes away, like `| head -1`
        if args[0] == "follow" {
            // A follower that caught up writes again when the next event is recorded.
            ok(&server, &["cage", "open", "--cage", "SPARE", "--denominations-cents", "100", "--chips", "100x10"]).await;
        }
        let status = tokio::time::timeout(LINE_TIMEOUT, running.child.wait()).await.expect("ends within the bound").expect("status");
        let mut rest = Vec::new();
        while let Ok(Ok(Some(line))) = tokio::time::timeout(LINE_TIMEOUT, running.err.next_line()).await {
            rest.push(line);
        }
        let rest: Vec<String> = rest.into_iter().filter(|line| !line.starts_with("following the log")).collect();
        assert_eq!(status.code(), Some(0), "{args:?}: {status:?}, stderr {rest:?}");
        assert!(rest.is_empty(), "{args:?}: no error line, got {rest:?}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn void_slip_cage_color_change_count_and_table_config_are_recorded() {
    let server = TestServer::start().await;
    open_room(&server).await;

    // Table config: the stakes change between hands, a new configuration version.
    let config = ok(&server, &["table", "config", "--table", "T1", "--game", "nlhe", "--small", "2", "--big", "5"]).await;
    assert!(config.starts_with("ChangeTableConfig recorded") && config.contains("ConfigChanged"), "{config}");
    let table = json(&server, &["stacks", "--table", "T1"]).await;
    assert_eq!(table["table_id"], "T1");

    // A second fill, then voided: signed by the cage and the floor, with the reason.
    approved(&server, "cage", &["fill", "--cage", "MAIN", "--table", "T1", "--slip", "2", "--chips", "2500x4"], &["cage-cal", "floor-fay"]).await;
    let tray_before_void = json(&server, &["balance", "table/T1/tray/2500"]).await["balance_cents"].as_i64();
    let void = approved(&server, "cage", &["void-slip", "--cage", "MAIN", "--table", "T1", "--kind", "fill", "--slip", "2", "--why", "sent to the wrong table"], &["cage-cal", "floor-fay"]).await;
    assert!(void.starts_with("VoidSlip recorded") && void.contains("SlipVoided"), "{void}");
    let tray_after_void = json(&server, &["balance", "table/T1/tray/2500"]).await["balance_cents"].as_i64();
    assert_eq!(tray_before_void.zip(tray_after_void).map(|(before, after)| before - after), Some(10_000), "the void reversed the fill");
    let unsigned = server.chipledger(&["cage", "void-slip", "--cage", "MAIN", "--table", "T1", "--kind", "fill", "--slip", "1", "--why", "x"]).await;
    assert_ne!(unsigned.status.code(), Some(0), "a void needs its two signers");

    // A color change at the cage: the patron's $100 in 25s for twenty 5s.
    ok(&server, &["cage", "sell", "--cage", "MAIN", "--player", "P1", "--chips", "2500x4"]).await;
    let color = ok(&server, &["cage", "color-change", "--cage", "MAIN", "--player", "P1", "--give", "2500x4", "--receive", "500x20"]).await;
    assert!(color.starts_with("CageColorChange recorded") && color.contains("ChipsColorChanged"), "{color}");
    assert_eq!(json(&server, &["balance", "player/P1/pocket"]).await["balance_cents"], 10_000);

    // The cage's shift count, signed by the two who counted; $1 of cash short is a variance.
    let count = [
        "count", "--cage", "MAIN", "--counted-chips", "100x800,500x780,2500x360", "--counted-cash", "5,099.00",
    ];
    let counted = approved(&server, "cage", &count, &["cage-cal", "floor-fay"]).await;
    assert!(counted.starts_with("CountCageShift recorded") && counted.contains("ShiftCounted"), "{counted}");
    assert!(counted.contains("CountVarianceRecorded"), "a count off the book is recorded as a variance: {counted}");
    server.stop().await;
}
