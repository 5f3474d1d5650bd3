//! Who may do what (ARCHITECTURE.md, flow step 1): PERMISSION_DENIED by role, UNAUTHENTICATED
//! without (or with unknown) credentials, and mutual TLS that refuses a client certificate from
//! an unknown CA. A refused call writes nothing.

use chipledger_proto::v1 as pb;
use chipledger_server::config::TlsFile;
use chipledger_tests::certs::Authority;
use chipledger_tests::{Client, ServerOptions, TestServer, approved, error_info, head, header, principal, write_file};
use tonic::Code;
use tonic_types::StatusExt;
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

use crate::scenario::{self, CAGE, TABLE, cash_buy_in, table_view};

fn assert_denied(result: Result<tonic::Response<pb::CommandResult>, tonic::Status>, what: &str) {
    let status = result.expect_err(what);
    assert_eq!(status.code(), Code::PermissionDenied, "{what}: {status:?}");
    let info = error_info(&status);
    assert_eq!(info.reason, "ROLE_NOT_PERMITTED", "{what}");
    assert_eq!(info.metadata.get("rule_id").map(String::as_str), Some("R-AUDIT-2"), "{what}: {status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_dealer_cannot_issue_markers_or_approve_corrections_and_auditor_only_reads() -> anyhow::Result<()> {
    let server = TestServer::start("roles").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    let mut admin = server.client(principal::ADMIN).await?;
    let mut cfo = server.client(principal::ADMIN_2).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    let bought = dealer.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 10_000)).await?.into_inner();
    let line = pb::SetCreditLine {
        header: header("line-P1"),
        player_id: "P1".into(),
        line_cents: 50_000,
        approved_by: principal::ADMIN_2.0.into(),
    };
    admin.cage.set_credit_line(approved(line, &mut [&mut cfo]).await?).await?;
    let before = head(&mut auditor).await?;

    // A dealer cannot issue a marker (R-MARK-1 is a cage/floor act) ...
    let marker = pb::IssueMarker {
        header: header("dealer-marker"),
        cage_id: CAGE.into(),
        player_id: "P1".into(),
        marker_no: 1,
        chips: vec![chipledger_tests::chips(2_500, 2)],
        approved_by: "fred-floor".into(),
        delivery: Some(pb::issue_marker::Delivery::ToPocket(true)),
    };
    assert_denied(dealer.cage.issue_marker(marker.clone()).await, "dealer issues a marker");
    // ... nor approve a correction (R-AUDIT-1).
    let buy_in_event = bought.events.first().expect("BoughtIn").event_id.clone();
    let correction = pb::Correction {
        header: header("dealer-correction"),
        reverses_event_id: buy_in_event,
        approved_by: "fred-floor".into(),
        reason: "wrong seat".into(),
    };
    assert_denied(dealer.ledger.correct(correction).await, "dealer approves a correction");
    // A dealer cannot sell chips at the cage either.
    assert_denied(
        dealer
            .cage
            .sell_chips(pb::SellChips {
                header: header("dealer-sell"),
                cage_id: CAGE.into(),
                player_id: "P1".into(),
                chips: vec![chipledger_tests::chips(500, 1)],
                supervisor_id: None,
            })
            .await,
        "dealer sells chips",
    );

    // An auditor can only read: every kind of write is refused ...
    assert_denied(auditor.table.buy_in(cash_buy_in("auditor-buy", TABLE, 2, "P2", 10_000)).await, "auditor buys in");
    assert_denied(scenario_open_table(&mut auditor).await, "auditor opens a table");
    assert_denied(
        auditor.cage.issue_marker(pb::IssueMarker { header: header("auditor-marker"), ..marker.clone() }).await,
        "auditor issues a marker",
    );
    let batch = auditor
        .ledger
        .record_batch(pb::RecordBatch {
            header: header("auditor-batch"),
            commands: vec![pb::Command {
                command: Some(pb::command::Command::Tip(pb::Tip {
                    header: None,
                    table_id: TABLE.into(),
                    seat: 1,
                    amount_cents: 100,
                })),
            }],
        })
        .await
        .expect_err("auditor records a batch");
    assert_eq!(batch.code(), Code::PermissionDenied, "{batch:?}");
    // ... and every kind of read works.
    let view = table_view(&mut auditor, TABLE).await?;
    assert_eq!(scenario::stack(&view, 1), 10_000);
    auditor.ledger.list_events(pb::ListEventsRequest::default()).await?;
    auditor.audit.verify_chain(pb::VerifyChainRequest::default()).await?;
    // R-AUDIT-3: each command refused for the role is kept among the refusals, naming the
    // caller (an insider trying what the role table forbids); nothing else was written. (The
    // auditor's batch is refused at the gate: RecordBatch itself is not an auditor's call.)
    let kept = auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
    for (command_id, caller) in [
        ("dealer-marker", principal::DEALER.0),
        ("dealer-correction", principal::DEALER.0),
        ("dealer-sell", principal::DEALER.0),
        ("auditor-buy", principal::AUDITOR.0),
        ("auditor-marker", principal::AUDITOR.0),
    ] {
        // Kept under its own key: the id itself stays free for whoever may send the command.
        let key = format!("{command_id}~denied~{caller}~");
        let record = kept.iter().find(|record| record.command_id.starts_with(&key)).unwrap_or_else(|| panic!("{key} kept: {kept:?}"));
        assert_eq!((record.reason_code.as_str(), record.rule_id.as_str(), record.actor_id.as_str()), ("ROLE_NOT_PERMITTED", "R-AUDIT-2", caller));
    }
    // R-AUDIT-3: the attempts about a patron are found by the patron (they named none).
    let about_p1 = auditor
        .audit
        .list_rejections(pb::ListRejectionsRequest { player_id: "P1".into(), ..Default::default() })
        .await?
        .into_inner()
        .rejections;
    for command_id in ["dealer-marker", "dealer-sell", "auditor-marker"] {
        assert!(about_p1.iter().any(|record| record.command_id.starts_with(&format!("{command_id}~denied~"))), "{command_id} found by its patron: {about_p1:?}");
    }
    // Every attempt is kept (the insider pass: they had gone unkept): another under the same id
    // with other contents, one without a header, one naming a property the dealer may not act
    // on. A command id with '~' is no caller's: it is the refusals' key.
    let bigger = pb::IssueMarker { chips: vec![chipledger_tests::chips(2_500, 40)], ..marker.clone() };
    assert_denied(dealer.cage.issue_marker(bigger).await, "dealer issues a bigger marker under the same id");
    assert_denied(dealer.cage.issue_marker(pb::IssueMarker { header: None, ..marker.clone() }).await, "dealer issues a marker without a header");
    let elsewhere = pb::CommandHeader { property_id: "elsewhere".into(), ..header("dealer-marker-elsewhere").expect("a header") };
    assert_denied(dealer.cage.issue_marker(pb::IssueMarker { header: Some(elsewhere), ..marker.clone() }).await, "dealer issues a marker elsewhere");
    let tilde = dealer.table.tip(pb::Tip { header: header("tip~denied~dealer"), table_id: TABLE.into(), seat: 1, amount_cents: 100 }).await.expect_err("'~' is reserved");
    assert_eq!(tilde.code(), Code::InvalidArgument, "{tilde:?}");
    let kept = auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
    let dealers: Vec<&str> = kept
        .iter()
        .filter(|record| record.actor_id == principal::DEALER.0 && record.reason_code == "ROLE_NOT_PERMITTED")
        .map(|record| record.command_id.as_str())
        .collect();
    assert_eq!(dealers.iter().filter(|key| key.starts_with("dealer-marker~denied~")).count(), 2, "{dealers:?}");
    assert_eq!(dealers.iter().filter(|key| key.starts_with("~denied~")).count(), 2, "no header, and a foreign property: {dealers:?}");
    assert_eq!(head(&mut auditor).await?.global_position, before.global_position, "a refusal for the role writes no event");

    // The cage may do what the dealer may not (the refusals above were about the role), even
    // under the very command id the dealer tried (the hostile pass: a dealer's refused attempt
    // had taken a supervisor's command id in advance).
    let marker = approved(pb::IssueMarker { header: header("dealer-marker"), ..marker }, &mut [&mut floor]).await?;
    cage.cage.issue_marker(marker).await?;
    let after = head(&mut auditor).await?;
    assert_eq!(after.global_position, before.global_position + 2, "only the cage's marker was written (cage + player events)");
    server.stop().await
}

async fn scenario_open_table(client: &mut Client) -> Result<tonic::Response<pb::CommandResult>, tonic::Status> {
    client
        .table
        .open_table(pb::OpenTable {
            header: header("open-T9"),
            table_id: "T9".into(),
            configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
                game: pb::GamePreset::NoLimitHoldem as i32,
                small_cents: 100,
                big_cents: 200,
                ..Default::default()
            })),
        })
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_credentials_or_with_an_unknown_token_calls_are_unauthenticated() -> anyhow::Result<()> {
    let server = TestServer::start("unauthenticated").await?;
    let mut anonymous = server.anonymous().await?;
    let status = anonymous
        .table
        .get_table(pb::GetTableRequest { property_id: String::new(), table_id: TABLE.into(), as_of: None })
        .await
        .expect_err("no credentials");
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(error_info(&status).reason, "NO_CREDENTIALS");
    let status = scenario_open_table(&mut anonymous).await.expect_err("no credentials");
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");

    let mut stranger = Client::new(server.channel().await?, Some("not-a-known-token-at-all"));
    let status = stranger.ledger.list_events(pb::ListEventsRequest::default()).await.expect_err("unknown token");
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert_eq!(error_info(&status).reason, "UNKNOWN_TOKEN");

    let mut auditor = server.client(principal::AUDITOR).await?;
    assert_eq!(head(&mut auditor).await?.global_position, 0, "nothing was written");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mtls_accepts_a_known_client_certificate_and_rejects_one_from_an_unknown_ca() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let ca = Authority::new("chipledger test CA")?;
    let server_pem = ca.server()?;
    let known = ca.client("dan.dealers.example")?;
    let rogue_ca = Authority::new("someone else's CA")?;
    // Same name as the known dealer: only the signature tells them apart.
    let rogue = rogue_ca.client("dan.dealers.example")?;

    let tls = TlsFile {
        cert: write_file(dir.path(), "server.pem", &server_pem.cert)?,
        key: write_file(dir.path(), "server.key", &server_pem.key)?,
        client_ca: Some(write_file(dir.path(), "ca.pem", &ca.cert_pem())?),
        client_auth_optional: false,
    };
    let options = ServerOptions {
        tls: Some(tls),
        cert_principals: vec![("dan-by-cert".into(), "dealer".into(), "dan.dealers.example".into())],
        ..ServerOptions::default()
    };
    let client_tls = |identity: Option<&chipledger_tests::certs::Pem>| {
        let config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca.cert_pem())).domain_name("localhost");
        match identity {
            Some(pem) => config.identity(Identity::from_pem(&pem.cert, &pem.key)),
            None => config,
        }
    };
    let server = TestServer::start_with("mtls", options, Some(client_tls(Some(&known)))).await?;
    let url = format!("https://{}", server.addr);
    chipledger_tests::wait_until_serving(&url, Some(client_tls(Some(&known)))).await?;

    // The known certificate authenticates as its principal (a dealer): reads work, and the
    // dealer's actor id is what a command records.
    let mut dealer = Client::new(server.channel().await?, None);
    let status = dealer.table.get_table(pb::GetTableRequest { property_id: String::new(), table_id: TABLE.into(), as_of: None }).await;
    let status = status.expect_err("no table T1 yet");
    assert_eq!(status.code(), Code::NotFound, "authenticated, then not found: {status:?}");
    assert_denied(scenario_open_table(&mut dealer).await, "a dealer by certificate still cannot open a table");

    // A client certificate from another CA never gets through the handshake.
    let rogue_call = async {
        let endpoint = tonic::transport::Endpoint::from_shared(url.clone())?.tls_config(client_tls(Some(&rogue)))?;
        let channel = endpoint.connect().await?;
        let mut client = Client::new(channel, None);
        client.table.get_table(pb::GetTableRequest { property_id: String::new(), table_id: TABLE.into(), as_of: None }).await?;
        anyhow::Ok(())
    };
    let refused = rogue_call.await.expect_err("a certificate from an unknown CA is rejected");
    eprintln!("rogue client refused: {refused:#}");
    assert_refused_before_the_gate(&refused);
    // No certificate at all is refused too (client authentication is required).
    let anonymous_call = async {
        let endpoint = tonic::transport::Endpoint::from_shared(url.clone())?.tls_config(client_tls(None))?;
        let channel = endpoint.connect().await?;
        let mut client = Client::new(channel, None);
        client.table.get_table(pb::GetTableRequest { property_id: String::new(), table_id: TABLE.into(), as_of: None }).await?;
        anyhow::Ok(())
    };
    let refused = anonymous_call.await.expect_err("no client certificate is rejected");
    eprintln!("client without certificate refused: {refused:#}");
    assert_refused_before_the_gate(&refused);
    server.stop().await
}

/// The TLS handshake refused the client: the failure is a transport error, never an answer of
/// the service (which would carry a chipledger ErrorInfo, e.g. UNAUTHENTICATED from the gate).
fn assert_refused_before_the_gate(error: &anyhow::Error) {
    if let Some(status) = error.downcast_ref::<tonic::Status>() {
        let answered = status.get_error_details().error_info().is_some_and(|info| info.domain == "chipledger.v1");
        assert!(!answered, "the request reached the service: {status:?}");
        assert!(
            matches!(status.code(), Code::Cancelled | Code::Unavailable | Code::Unknown),
            "expected a transport failure, got {status:?}"
        );
    }
}
