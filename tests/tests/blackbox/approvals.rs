//! Dual control by authenticated principals (R-CHIP-2, R-CHIP-3, R-MARK-1, R-AUDIT-1): every
//! approver, slip signer and supervisor a command names proves it with an approval token that
//! principal obtained with its own credentials for exactly this command. Typed names, a caller
//! approving its own command, forged, tampered, expired or borrowed tokens, and approvers of the
//! wrong role are refused with PERMISSION_DENIED and move nothing.

use chipledger_proto::v1 as pb;
use chipledger_server::approval::{self, ApprovalKey, Subject};
use chipledger_tests::{Client, TestServer, approved, chips, error_info, head, header, principal};
use tonic::Code;
use tonic_types::StatusExt;

use crate::scenario::{self, CAGE, TABLE, cash_buy_in, table_view};

fn fill(command_id: &str, slip_no: u64, signer_1: &str, signer_2: &str) -> pb::Fill {
    pb::Fill {
        header: header(command_id),
        table_id: TABLE.into(),
        cage_id: CAGE.into(),
        slip_no,
        chips: vec![chips(100, 200), chips(500, 200), chips(2_500, 40)],
        signer_1: signer_1.into(),
        signer_2: signer_2.into(),
    }
}

fn with_tokens<T: chipledger_proto::WireCommand>(mut message: T, tokens: &[&str]) -> T {
    message.header_mut().get_or_insert_with(Default::default).approvals = tokens.iter().map(|t| (*t).to_string()).collect();
    message
}

/// The refusal's code and ErrorInfo reason, and the field its BadRequest names.
fn refusal(status: &tonic::Status) -> (Code, String, Vec<String>) {
    let fields = status
        .get_error_details()
        .bad_request()
        .map(|bad| bad.field_violations.iter().map(|violation| violation.field.clone()).collect())
        .unwrap_or_default();
    let reason = status.get_error_details().error_info().map(|info| info.reason.clone()).unwrap_or_default();
    (status.code(), reason, fields)
}

fn assert_denied(result: Result<tonic::Response<pb::CommandResult>, tonic::Status>, reason: &str, what: &str) {
    let status = result.expect_err(what);
    let (code, got, _) = refusal(&status);
    assert_eq!((code, got.as_str()), (Code::PermissionDenied, reason), "{what}: {status:?}");
    // R-AUDIT-3: the answer names the rule of the command's dual control.
    let rule = error_info(&status).metadata.get("rule_id").cloned().unwrap_or_default();
    assert!(["R-CHIP-3", "R-AUDIT-1", "R-CHIP-2"].contains(&rule.as_str()), "{what}: rule {rule:?} in {status:?}");
}

const FILL_RPC: &str = "/chipledger.v1.CageService/Fill";

/// The floor supervisor as the server knows her (to sign tokens with a given key and time).
/// The test server's floor supervisor as configured (an approval holds only while its approver's
/// configuration entry is the one it was given under).
fn floor_principal(server: &TestServer) -> chipledger_server::access::Principal {
    let properties = chipledger_server::config::PropertyScope::Only(vec![server.property_id.clone()]);
    let entry = chipledger_server::config::PrincipalConfig {
        id: principal::FLOOR.0.into(),
        role: chipledger_rules::Role::FloorSupervisor,
        cert_names: Vec::new(),
        tokens: vec![principal::FLOOR.2.into()],
        properties: properties.clone(),
    };
    chipledger_server::access::Principal {
        id: principal::FLOOR.0.into(),
        role: chipledger_rules::Role::FloorSupervisor,
        via: chipledger_server::access::Credential::BearerToken,
        properties,
        acting_in: None,
        entry: Some(std::sync::Arc::new(entry)),
    }
}

/// What an approval of fill `message` under `command_id` is bound to.
fn fill_subject<'a>(message: &pb::Fill, command_id: &'a str, property_id: &'a str) -> Subject<'a> {
    let bytes = chipledger_proto::WireCommand::approval_bytes(message, command_id, property_id);
    Subject { property_id, rpc: FILL_RPC, command_id, digest: approval::command_digest(FILL_RPC, &bytes, (None, None)) }
}

/// The log's head (position and hash) of a chain digest: what a refusal leaves unchanged.
fn log_head(digest: &pb::ChainDigest) -> (i64, String) {
    (digest.global_position, digest.chain_hash_hex.clone())
}

/// R-AUDIT-3: every command refused for its second persons is kept where auditors query
/// refusals, with the reason, the rule of its dual control and the principal who sent it (the
/// insiders' hostile pass found them only in the process log). `refused` are (command id,
/// reason code); the refusal chain grew by exactly these since `before`.
async fn assert_refusals_kept(auditor: &mut Client, before: &pb::ChainDigest, caller: &str, rule: &str, refused: &[(&str, &str)]) -> anyhow::Result<()> {
    let after = head(auditor).await?;
    assert_eq!(log_head(&after), log_head(before), "a refused command writes no event");
    assert_eq!(after.refusal_seq, before.refusal_seq + refused.len() as i64, "each refusal is chained once");
    let kept = auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
    for (command_id, reason) in refused {
        let record = kept.iter().find(|record| record.command_id == *command_id).unwrap_or_else(|| panic!("{command_id} kept: {kept:?}"));
        assert_eq!((record.reason_code.as_str(), record.rule_id.as_str(), record.actor_id.as_str()), (*reason, rule, caller), "{command_id}");
    }
    Ok(())
}

fn now_unix_ms() -> i64 {
    let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

async fn cage_and_table(cage: &mut Client, floor: &mut Client) -> anyhow::Result<()> {
    scenario::open_cage(cage).await?;
    scenario::open_nlhe_table(floor, TABLE).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_3_a_fill_signed_with_typed_names_is_refused_and_moves_nothing() -> anyhow::Result<()> {
    let server = TestServer::start("typed-signers").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    cage_and_table(&mut cage, &mut floor).await?;
    let before = head(&mut auditor).await?;

    // "made-up-1" / "made-up-2", and the caller with an unproven floor name.
    let status = cage.cage.fill(fill("fill-typed", 1, "made-up-1", "made-up-2")).await.expect_err("typed signers");
    let (code, reason, fields) = refusal(&status);
    assert_eq!((code, reason.as_str()), (Code::PermissionDenied, "APPROVAL_MISSING"), "{status:?}");
    assert_eq!(fields, ["signer_1"], "{status:?}");
    let status = cage.cage.fill(fill("fill-half", 1, principal::CAGE.0, principal::FLOOR.0)).await.expect_err("unproven floor");
    let (_, reason, fields) = refusal(&status);
    assert_eq!((reason.as_str(), fields.as_slice()), ("APPROVAL_MISSING", &["signer_2".to_string()][..]), "{status:?}");
    let refused = [("fill-typed", "APPROVAL_MISSING"), ("fill-half", "APPROVAL_MISSING")];
    assert_refusals_kept(&mut auditor, &before, principal::CAGE.0, "R-CHIP-3", &refused).await?;
    // Resent as it was, a kept refusal answers the same.
    let status = cage.cage.fill(fill("fill-half", 1, principal::CAGE.0, principal::FLOOR.0)).await.expect_err("resent");
    assert_eq!(refusal(&status).1, "APPROVAL_MISSING");
    assert_refusals_kept(&mut auditor, &before, principal::CAGE.0, "R-CHIP-3", &refused).await?;
    assert!(table_view(&mut auditor, TABLE).await?.tray.iter().all(|chip| chip.count == 0), "the tray is still empty");

    // The same slip with the floor's own approval goes through, naming the proven principals.
    let proven = approved(fill("fill-proven", 1, principal::CAGE.0, principal::FLOOR.0), &mut [&mut floor]).await?;
    let result = cage.cage.fill(proven).await?.into_inner();
    let events = chipledger_tests::all_events(&mut auditor, pb::EventFilter { from_position: result.events[0].global_position, ..Default::default() }).await?;
    let received = events.iter().find(|event| event.event_type == "FillReceived").expect("FillReceived");
    let payload: serde_json::Value = serde_json::from_str(&received.payload_json)?;
    assert_eq!(payload["signers"]["first"], principal::CAGE.0, "{payload}");
    assert_eq!(payload["signers"]["second"], principal::FLOOR.0, "{payload}");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_audit_1_a_self_approved_correction_is_refused_and_moves_nothing() -> anyhow::Result<()> {
    let server = TestServer::start("self-approval").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut floor_2 = server.client(principal::FLOOR_2).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    let bought = dealer.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 10_000)).await?.into_inner();
    let event_id = bought.events.iter().find(|event| event.stream_id == "table-T1").expect("the table's event").event_id.clone();
    let correction = |command_id: &str, approved_by: &str| pb::Correction {
        header: header(command_id),
        reverses_event_id: event_id.clone(),
        approved_by: approved_by.into(),
        reason: "keyed at the wrong seat".into(),
    };
    let before = head(&mut auditor).await?;

    // "Approved by nobody-we-know", by the caller itself, and with the caller's own token.
    assert_denied(floor.ledger.correct(correction("c-nobody", "nobody-we-know")).await, "APPROVAL_MISSING", "an unknown approver");
    assert_denied(floor.ledger.correct(correction("c-self", principal::FLOOR.0)).await, "APPROVER_IS_CALLER", "self by name");
    let own = approved(correction("c-own-token", principal::FLOOR.0), &mut [&mut floor]).await?;
    assert_denied(floor.ledger.correct(own).await, "APPROVER_IS_CALLER", "self by token");
    let refused = [("c-nobody", "APPROVAL_MISSING"), ("c-self", "APPROVER_IS_CALLER"), ("c-own-token", "APPROVER_IS_CALLER")];
    assert_refusals_kept(&mut auditor, &before, principal::FLOOR.0, "R-AUDIT-1", &refused).await?;
    // Found by the table and the patron of the event they would have reversed (the insider
    // pass: kept with no stream, they were missing from the table's refusals).
    let by_table = auditor
        .audit
        .list_rejections(pb::ListRejectionsRequest { table_id: TABLE.into(), ..Default::default() })
        .await?
        .into_inner()
        .rejections;
    let mut found: Vec<&str> = by_table.iter().map(|kept| kept.command_id.as_str()).collect();
    found.sort_unstable();
    assert_eq!(found, ["c-nobody", "c-own-token", "c-self"], "{by_table:?}");

    // A second floor supervisor's approval: recorded, naming her.
    let second = approved(correction("c-second", principal::FLOOR_2.0), &mut [&mut floor_2]).await?;
    floor.ledger.correct(second).await?;
    assert!(head(&mut auditor).await?.global_position > before.global_position);
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_tampered_expired_borrowed_and_wrong_role_approvals_are_refused_and_move_nothing() -> anyhow::Result<()> {
    let server = TestServer::start("bad-approvals").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    cage_and_table(&mut cage, &mut floor).await?;
    let before = head(&mut auditor).await?;
    let slip = |command_id: &str| fill(command_id, 1, principal::CAGE.0, principal::FLOOR.0);
    let now_ms = now_unix_ms();

    // Forged: the same claims signed by a key that is not the server's.
    let message = slip("fill-forged");
    let subject = fill_subject(&message, "fill-forged", &server.property_id);
    let forged = approval::issue(&ApprovalKey::generate()?, &floor_principal(&server), &subject, approval::DEFAULT_TTL, now_ms).token;
    assert_denied(cage.cage.fill(with_tokens(message, &[&forged])).await, "APPROVAL_INVALID", "forged");

    // Tampered: a genuine token whose claims were edited (longer validity) after signing.
    let genuine = floor.approve(&slip("fill-tampered")).await?.token;
    let mut parts: Vec<String> = genuine.split('.').map(str::to_string).collect();
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut claims: serde_json::Value = serde_json::from_slice(&engine.decode(&parts[1])?)?;
    claims["expires_at_unix_ms"] = serde_json::json!(now_ms + 86_400_000);
    parts[1] = engine.encode(serde_json::to_vec(&claims)?);
    assert_denied(cage.cage.fill(with_tokens(slip("fill-tampered"), &[&parts.join(".")])).await, "APPROVAL_INVALID", "tampered");

    // Expired: signed with the server's own key two hours ago.
    let message = slip("fill-expired");
    let subject = fill_subject(&message, "fill-expired", &server.property_id);
    let stale = approval::issue(&server.approval_key()?, &floor_principal(&server), &subject, approval::DEFAULT_TTL, now_ms - 7_200_000).token;
    assert_denied(cage.cage.fill(with_tokens(message, &[&stale])).await, "APPROVAL_EXPIRED", "expired");

    // Borrowed: an approval of another command id, or of other chips under the same id.
    let other_id = floor.approve(&slip("fill-a")).await?.token;
    assert_denied(cage.cage.fill(with_tokens(slip("fill-b"), &[&other_id])).await, "APPROVAL_FOR_ANOTHER_COMMAND", "other id");
    let small = pb::Fill { chips: vec![chips(100, 1)], ..slip("fill-c") };
    let for_small = floor.approve(&small).await?.token;
    assert_denied(cage.cage.fill(with_tokens(slip("fill-c"), &[&for_small])).await, "APPROVAL_FOR_ANOTHER_COMMAND", "other chips");

    // Wrong role: a floor supervisor in the cage's signer field; a dealer or an auditor cannot
    // approve at all; the cage approves no correction.
    let swapped = fill("fill-swapped", 1, principal::FLOOR.0, principal::CAGE.0);
    let swapped = approved(swapped, &mut [&mut floor]).await?;
    assert_denied(cage.cage.fill(swapped).await, "APPROVER_ROLE_NOT_PERMITTED", "floor as the cage signer");
    let status = dealer.approve(&slip("fill-dealer")).await.expect_err("a dealer approves nothing");
    assert_eq!((status.code(), error_info(&status).reason), (Code::PermissionDenied, "ROLE_NOT_PERMITTED".to_string()));
    let mut auditor_approver = server.client(principal::AUDITOR).await?;
    let status = auditor_approver.approve(&slip("fill-auditor")).await.expect_err("an auditor approves nothing");
    assert_eq!(status.code(), Code::PermissionDenied);
    let correction = pb::Correction { header: header("c-1"), reverses_event_id: uuid::Uuid::nil().to_string(), approved_by: String::new(), reason: "x".into() };
    let status = cage.approve(&correction).await.expect_err("the cage approves no correction");
    assert_eq!((status.code(), error_info(&status).reason), (Code::PermissionDenied, "ROLE_CANNOT_APPROVE".to_string()));
    // Unauthenticated: no approval without credentials.
    let mut anonymous = server.anonymous().await?;
    let status = anonymous.approve(&slip("fill-anonymous")).await.expect_err("no credentials");
    assert_eq!(status.code(), Code::Unauthenticated);

    // The commands refused for their approvals are kept (the approvals refused to the dealer,
    // the auditor and the cage are requests for a token, not commands: nothing to keep).
    let refused = [
        ("fill-forged", "APPROVAL_INVALID"),
        ("fill-tampered", "APPROVAL_INVALID"),
        ("fill-expired", "APPROVAL_EXPIRED"),
        ("fill-b", "APPROVAL_FOR_ANOTHER_COMMAND"),
        ("fill-c", "APPROVAL_FOR_ANOTHER_COMMAND"),
        ("fill-swapped", "APPROVER_ROLE_NOT_PERMITTED"),
    ];
    assert_refusals_kept(&mut auditor, &before, principal::CAGE.0, "R-CHIP-3", &refused).await?;
    assert!(table_view(&mut auditor, TABLE).await?.tray.iter().all(|chip| chip.count == 0));
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_in_a_batch_is_bound_to_its_entry_and_cannot_be_replayed_in_another_batch() -> anyhow::Result<()> {
    let server = TestServer::start("batch-approvals").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    cage_and_table(&mut cage, &mut floor).await?;
    // Entry 1 of batch "batch-1" is approved under its entry id "batch-1/1".
    // Entry 0 needs no approval: a sale at the cage.
    let sale = pb::command::Command::SellChips(pb::SellChips {
        header: None,
        cage_id: CAGE.into(),
        player_id: "P1".into(),
        chips: vec![pb::ChipCount { denomination_cents: 500, count: 1 }],
        supervisor_id: None,
    });
    let entry = pb::Fill { header: Some(pb::CommandHeader { command_id: "batch-1/1".into(), ..Default::default() }), ..fill("", 1, principal::CAGE.0, principal::FLOOR.0) };
    let token = floor.approve(&entry).await?.token;
    let batch = |batch_id: &str| pb::RecordBatch {
        header: header(batch_id),
        commands: vec![
            pb::Command { command: Some(sale.clone()) },
            pb::Command {
                command: Some(pb::command::Command::Fill(pb::Fill {
                    header: Some(pb::CommandHeader { approvals: vec![token.clone()], ..Default::default() }),
                    ..fill("", 1, principal::CAGE.0, principal::FLOOR.0)
                })),
            },
        ],
    };
    let before = head(&mut auditor).await?;
    let status = cage.ledger.record_batch(batch("batch-2")).await.expect_err("replayed in another batch");
    assert_eq!((status.code(), error_info(&status).reason), (Code::PermissionDenied, "APPROVAL_FOR_ANOTHER_COMMAND".to_string()), "{status:?}");
    assert_refusals_kept(&mut auditor, &before, principal::CAGE.0, "R-CHIP-3", &[("batch-2", "APPROVAL_FOR_ANOTHER_COMMAND")]).await?;
    let recorded = cage.ledger.record_batch(batch("batch-1")).await?.into_inner();
    assert_eq!(recorded.results.len(), 2);
    assert!(table_view(&mut auditor, TABLE).await?.tray.iter().any(|chip| chip.count > 0), "the fill stocked the tray");
    server.stop().await
}

/// R-CHIP-2: a buy-in at or above the table's supervisor threshold ($10,000) names a supervisor
/// who proves it; a typed supervisor is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_2_a_large_buy_in_needs_a_proven_supervisor() -> anyhow::Result<()> {
    let server = TestServer::start("large-buy-in").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    scenario::open_cage(&mut cage).await?;
    // NLHE $50/$100: buy-in $2,000 to $10,000.
    floor
        .table
        .open_table(pb::OpenTable {
            header: header("open-big"),
            table_id: TABLE.into(),
            configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
                game: pb::GamePreset::NoLimitHoldem as i32,
                small_cents: 5_000,
                big_cents: 10_000,
..Default::default()
})),
        })
        .await?;
    let stock = pb::Fill { chips: vec![chips(10_000, 100)], ..fill("fill-big", 1, principal::CAGE.0, principal::FLOOR.0) };
    cage.cage.fill(approved(stock, &mut [&mut floor]).await?).await?;
    scenario::seat(&mut dealer, TABLE, 1, "P1").await?;
    let large = |command_id: &str, supervisor: Option<&str>| pb::BuyIn {
        supervisor_id: supervisor.map(str::to_string),
        ..cash_buy_in(command_id, TABLE, 1, "P1", 1_000_000)
    };
    assert_denied(dealer.table.buy_in(large("big-typed", Some("shift-boss"))).await, "APPROVAL_MISSING", "typed supervisor");
    // R-AUDIT-3: the refusal is found by its patron.
    let about_p1 = floor.audit.list_rejections(pb::ListRejectionsRequest { player_id: "P1".into(), ..Default::default() }).await?.into_inner().rejections;
    assert!(about_p1.iter().any(|record| record.command_id == "big-typed"), "found by its patron: {about_p1:?}");
    let proven = approved(large("big-proven", Some(principal::FLOOR.0)), &mut [&mut floor]).await?;
    let result = dealer.table.buy_in(proven).await?.into_inner();
    assert_eq!(chipledger_tests::reply_balance(&result, "table/T1/seat/1"), Some(1_000_000), "{result:?}");
    server.stop().await
}

/// A resend of a recorded command is always safe (after OUTCOME_UNKNOWN a terminal resends the
/// same bytes, maybe much later): once its approval has expired, the same command id and bytes
/// still answer the first result, and move nothing again; other bytes are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_command_resent_after_its_approval_expired_answers_its_first_result() -> anyhow::Result<()> {
    let server = TestServer::start("expired-replay").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    cage_and_table(&mut cage, &mut floor).await?;
    let message = fill("fill-short-lived", 1, principal::CAGE.0, principal::FLOOR.0);
    let subject = fill_subject(&message, "fill-short-lived", &server.property_id);
    // Issued by the server's key so that it expires five seconds from now.
    let issued_at = now_unix_ms() - approval::DEFAULT_TTL.as_millis() as i64 + 5_000;
    let token = approval::issue(&server.approval_key()?, &floor_principal(&server), &subject, approval::DEFAULT_TTL, issued_at);
    let signed = with_tokens(message, &[&token.token]);
    let first = cage.cage.fill(signed.clone()).await?.into_inner();
    assert!(!first.replayed);
    let head_after_first = head(&mut auditor).await?;
    // The clock passes the token's expiry (a wait for time itself, bounded).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while now_unix_ms() <= token.expires_at_unix_ms {
        anyhow::ensure!(std::time::Instant::now() < deadline, "the clock did not pass the expiry");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let again = cage.cage.fill(signed.clone()).await?.into_inner();
    assert!(again.replayed, "{again:?}");
    assert_eq!(again.events.iter().map(|e| e.global_position).collect::<Vec<_>>(), first.events.iter().map(|e| e.global_position).collect::<Vec<_>>());
    assert_eq!(head(&mut auditor).await?, head_after_first, "the resend moved nothing");
    // The token does not carry over to another command.
    let other = with_tokens(fill("fill-other", 2, principal::CAGE.0, principal::FLOOR.0), &[&token.token]);
    assert_denied(cage.cage.fill(other).await, "APPROVAL_FOR_ANOTHER_COMMAND", "another command");
    server.stop().await
}

/// R-CHIP-3 with R-AUDIT-2: an approval binds an import's actor and time. Tokens given for a
/// fill as it happens do not record it as imported, under another actor, at another time (the
/// import pass: a fill approved live was imported with the same tokens as a floor supervisor's,
/// dated weeks before); tokens given for the import itself do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_given_for_a_live_command_does_not_approve_its_import() -> anyhow::Result<()> {
    let server = TestServer::start("import-approvals").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut admin = server.client(principal::ADMIN).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    cage_and_table(&mut cage, &mut floor).await?;
    let at = now_unix_ms();
    let import_header = |command_id: &str, approvals: Vec<String>| pb::CommandHeader {
        command_id: command_id.into(),
        import_actor_id: Some(principal::CAGE.0.into()),
        import_occurred_at_unix_ms: Some(at),
        approvals,
        ..Default::default()
    };
    let live = fill("imported-fill", 1, principal::CAGE.0, principal::FLOOR.0);
    let live_tokens = vec![cage.approve(&live).await?.token, floor.approve(&live).await?.token];
    let batch = |header: pb::CommandHeader| {
        let approvals = header.approvals.clone();
        pb::RecordBatch {
            header: Some(pb::CommandHeader { approvals: Vec::new(), ..header }),
            commands: vec![pb::Command {
                command: Some(pb::command::Command::Fill(pb::Fill {
                    header: Some(pb::CommandHeader { approvals, ..Default::default() }),
                    ..fill("", 1, principal::CAGE.0, principal::FLOOR.0)
                })),
            }],
        }
    };
    let before = head(&mut auditor).await?;
    let status = admin.ledger.record_batch(batch(import_header("imported-fill", live_tokens))).await.expect_err("live tokens on an import");
    assert_eq!((status.code(), error_info(&status).reason), (Code::PermissionDenied, "APPROVAL_FOR_ANOTHER_COMMAND".to_string()), "{status:?}");
    assert_eq!(head(&mut auditor).await?.global_position, before.global_position, "nothing recorded");
    // Approved as the import it is (under a command id of its own: the refused one is kept):
    // recorded, as the cage's, at that time.
    let imported = pb::Fill { header: Some(import_header("imported-fill-2", Vec::new())), ..fill("", 1, principal::CAGE.0, principal::FLOOR.0) };
    let tokens = vec![cage.approve(&imported).await?.token, floor.approve(&imported).await?.token];
    let recorded = admin.ledger.record_batch(batch(import_header("imported-fill-2", tokens))).await?.into_inner();
    assert_eq!(recorded.results.len(), 1);
    let events = chipledger_tests::all_events(&mut auditor, pb::EventFilter { stream_id: format!("table-{TABLE}"), ..Default::default() }).await?;
    let filled = events.iter().rfind(|event| event.event_type == "FillReceived").expect("the fill");
    let metadata = filled.metadata.clone().expect("metadata");
    assert_eq!((metadata.actor_id.as_str(), metadata.imported_by.as_deref()), (principal::CAGE.0, Some(principal::ADMIN.0)));
    server.stop().await
}
