//! End-to-end smoke test of chipledgerd's service over real gRPC against a real PostgreSQL
//! (chipledger-postgres picks a container or a local throwaway cluster): roles, a buy-in with
//! positions and balances, a rejection with ErrorInfo recorded for auditors, idempotent replay,
//! command id reuse, health, reflection, chain verification, graceful shutdown.

use std::sync::Arc;

use chipledger_postgres::TestPostgres;
use chipledger_proto::v1 as pb;
use chipledger_proto::v1::audit_service_client::AuditServiceClient;
use chipledger_proto::v1::cage_service_client::CageServiceClient;
use chipledger_proto::v1::table_service_client::TableServiceClient;
use chipledger_server::config::{Config, FileConfig, Flags};
use chipledger_server::ledger::Ledger;
use chipledger_server::shutdown::Drain;
use chipledger_server::serve;
use chipledger_store::Store;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;
use tonic::{Code, Request};
use tonic_types::StatusExt;

const ADMIN: &str = "admin-token-0123456789";
const DEALER: &str = "dealer-token-0123456789";
const AUDITOR: &str = "auditor-token-0123456789";
const CAGE: &str = "cage-token-0123456789";
const FLOOR: &str = "floor-token-0123456789";

fn config(data_dir: &std::path::Path) -> Config {
    let file: FileConfig = toml::from_str(&format!(
        r#"
        property_id = "casino"
        data_dir = {data_dir:?}
        [[auth.principals]]
        id = "fred-floor"
        role = "floor_supervisor"
        tokens = ["{FLOOR}"]
        [[auth.principals]]
        id = "alice-admin"
        role = "admin"
        tokens = ["{ADMIN}"]
        [[auth.principals]]
        id = "dan-dealer"
        role = "dealer"
        tokens = ["{DEALER}"]
        [[auth.principals]]
        id = "ann-auditor"
        role = "auditor"
        tokens = ["{AUDITOR}"]
        [[auth.principals]]
        id = "carl-cage"
        role = "cage"
        tokens = ["{CAGE}"]
        "#
    ))
    .expect("test config parses");
    let flags = Flags { listen: Some("127.0.0.1:0".parse().unwrap()), ..Flags::default() };
    Config::resolve(flags, file).expect("test config resolves")
}

fn authed<T>(token: &str, message: T) -> Request<T> {
    let mut request = Request::new(message);
    let value: MetadataValue<_> = format!("Bearer {token}").parse().unwrap();
    request.metadata_mut().insert("authorization", value);
    request
}

fn header(command_id: &str) -> Option<pb::CommandHeader> {
    Some(pb::CommandHeader { command_id: command_id.to_string(), ..Default::default() })
}

fn chips(denomination_cents: i64, count: i64) -> pb::ChipCount {
    pb::ChipCount { denomination_cents, count }
}

/// The floor supervisor's approval token for `command` (dual control).
async fn floor_approval(channel: &Channel, command: pb::command::Command) -> String {
    let mut approvals = chipledger_proto::v1::approval_service_client::ApprovalServiceClient::new(channel.clone());
    let request = pb::ApproveRequest { command: Some(pb::Command { command: Some(command) }), ttl_seconds: 0 };
    approvals.approve(authed(FLOOR, request)).await.expect("the floor approves").into_inner().token
}

fn with_approval(header: Option<pb::CommandHeader>, token: String) -> Option<pb::CommandHeader> {
    header.map(|header| pb::CommandHeader { approvals: vec![token], ..header })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chipledgerd_serves_commands_queries_and_errors_over_grpc() {
    let postgres = TestPostgres::start().await.expect("a PostgreSQL for the test");
    let url = postgres.url();
    Store::migrate(&url).await.expect("migrations");
    let store = Store::connect(&url).await.expect("connect");
    let reader = store.clone();

    let data_dir = tempfile::tempdir().expect("a data directory");
    let config = config(data_dir.path());
    let drain = Drain::new();
    let ledger = Arc::new(Ledger::for_config(store, &config, drain.clone()).expect("ledger"));
    let listener = serve::bind(config.listen).await.expect("bind");
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = {
        let config = config.clone();
        tokio::spawn(async move {
            serve::serve(&config, listener, ledger, drain, async move {
                let _ = stopped.await;
            })
            .await
        })
    };

    let channel = Channel::from_shared(format!("http://{addr}")).unwrap().connect().await.expect("connect");
    let mut table = TableServiceClient::new(channel.clone());
    let mut cage = CageServiceClient::new(channel.clone());
    let mut audit = AuditServiceClient::new(channel.clone());

    // Health and reflection need no credentials.
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel.clone());
    let serving = health
        .check(tonic_health::pb::HealthCheckRequest { service: "chipledger.v1.TableService".into() })
        .await
        .expect("health answers");
    assert_eq!(serving.into_inner().status, tonic_health::pb::health_check_response::ServingStatus::Serving as i32);

    // Reflection, both versions, lists our services.
    {
        use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
        use tonic_reflection::pb::v1::ServerReflectionRequest;
        let mut reflection = ServerReflectionClient::new(channel.clone());
        let request = ServerReflectionRequest { host: String::new(), message_request: Some(MessageRequest::ListServices(String::new())) };
        let mut responses = reflection.server_reflection_info(futures::stream::iter([request])).await.expect("v1").into_inner();
        let response = responses.message().await.expect("v1 answer").expect("one response");
        let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else { panic!("list services") };
        let names: Vec<String> = list.service.into_iter().map(|service| service.name).collect();
        for name in ["chipledger.v1.TableService", "chipledger.v1.CageService", "chipledger.v1.LedgerService", "chipledger.v1.AuditService", "grpc.health.v1.Health"] {
            assert!(names.iter().any(|n| n == name), "{name} missing from {names:?}");
        }
    }
    {
        use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
        use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
        let mut reflection = ServerReflectionClient::new(channel.clone());
        let request = ServerReflectionRequest { host: String::new(), message_request: Some(MessageRequest::ListServices(String::new())) };
        let mut responses = reflection.server_reflection_info(futures::stream::iter([request])).await.expect("v1alpha").into_inner();
        let response = responses.message().await.expect("v1alpha answer").expect("one response");
        let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else { panic!("list services") };
        assert!(list.service.iter().any(|service| service.name == "chipledger.v1.LedgerService"));
    }

    // No credentials: refused.
    let anonymous = table
        .get_table(pb::GetTableRequest { table_id: "T1".into(), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(anonymous.code(), Code::Unauthenticated);

    // The cage opens with chips; the table opens from a preset and gets a fill.
    cage.open_cage(authed(
        CAGE,
        pb::OpenCage {
            header: header("open-cage"),
            cage_id: "MAIN".into(),
            denominations_cents: vec![100, 500, 2_500, 10_000],
            chips: vec![chips(100, 1_000), chips(500, 1_000), chips(2_500, 400), chips(10_000, 100)],
            cash_cents: 1_000_000,
        },
    ))
    .await
    .expect("open cage");
    table
        .open_table(authed(
            ADMIN,
            pb::OpenTable {
                header: header("open-T1"),
                table_id: "T1".into(),
                configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
                    game: pb::GamePreset::NoLimitHoldem as i32,
                    small_cents: 100,
                    big_cents: 200,
                    ..Default::default()
                })),
            },
        ))
        .await
        .expect("open table");
    // The fill is signed by the cage (the caller) and the floor (its approval, R-CHIP-3).
    let fill = pb::Fill {
        header: header("fill-1"),
        table_id: "T1".into(),
        cage_id: "MAIN".into(),
        slip_no: 1,
        chips: vec![chips(100, 200), chips(500, 200), chips(2_500, 40)],
        signer_1: "carl-cage".into(),
        signer_2: "fred-floor".into(),
    };
    let token = floor_approval(&channel, pb::command::Command::Fill(fill.clone())).await;
    cage.fill(authed(CAGE, pb::Fill { header: with_approval(fill.header.clone(), token), ..fill }))
        .await
        .expect("fill");

    // A dealer seats a player and takes a cash buy-in.
    table
        .seat_player(authed(
            DEALER,
            pb::SeatPlayer { header: header("seat-P7"), table_id: "T1".into(), seat: 3, player_id: "P7".into() },
        ))
        .await
        .expect("seat");
    let buy_in = pb::BuyIn {
        header: header("buyin-P7"),
        table_id: "T1".into(),
        seat: 3,
        player_id: "P7".into(),
        amount_cents: 20_000,
        source: pb::FundsSource::Cash as i32,
        supervisor_id: None,
        short_buy: false,
    };
    let first = table.buy_in(authed(DEALER, buy_in.clone())).await.expect("buy-in").into_inner();
    assert!(!first.replayed);
    assert!(first.events.iter().all(|event| event.global_position > 0), "{first:?}");
    let seat_balance = first.balances.iter().find(|balance| balance.account == "table/T1/seat/3");
    assert_eq!(seat_balance.map(|balance| balance.balance_cents), Some(20_000), "{first:?}");

    // The same command again: the first answer, marked as a replay.
    let again = table.buy_in(authed(DEALER, buy_in.clone())).await.expect("replay").into_inner();
    assert!(again.replayed);
    assert_eq!(
        again.events.iter().map(|event| event.global_position).collect::<Vec<_>>(),
        first.events.iter().map(|event| event.global_position).collect::<Vec<_>>()
    );
    // The same id for a different request: ALREADY_EXISTS.
    let reused = table
        .buy_in(authed(DEALER, pb::BuyIn { amount_cents: 30_000, ..buy_in.clone() }))
        .await
        .unwrap_err();
    assert_eq!(reused.code(), Code::AlreadyExists);

    // The inline projections are kept in the append (R-AUDIT-4, R-REBUY-1): the seat and the
    // day's cash in of the patron, replay or not, counted once.
    let session = reader.player_session("casino", "P7").await.expect("session").expect("P7 is seated");
    assert_eq!((session.table_id.as_deref(), session.seat), (Some("T1"), Some(3)));
    let player_events = reader.read_stream("casino", "player-P7", 0, 100).await.expect("player stream");
    let cash = player_events.iter().find(|event| event.event_type == "CashTransaction").expect("a cash transaction");
    let gaming_day = cash.payload.value()["gaming_day"].as_str().expect("gaming day").to_string();
    let day = reader.daily_cash("casino", "P7", &gaming_day).await.expect("daily cash");
    assert_eq!((day.cash_in_cents, day.cash_out_cents), (20_000, 0));

    // R-AUDIT-1 on a player stream: a seating is no record a correction takes back; refused
    // by the rules like any other, naming the rule (it had been INVALID_ARGUMENT naming none).
    let mut ledger_client =
        chipledger_proto::v1::ledger_service_client::LedgerServiceClient::new(channel.clone());
    let correction = |command_id: &str, event_id: &str| pb::Correction {
        header: header(command_id),
        reverses_event_id: event_id.to_string(),
        approved_by: "fred-floor".into(),
        reason: "keyed for the wrong patron".into(),
    };
    let approved = async |correction: pb::Correction| {
        let token = floor_approval(&channel, pb::command::Command::Correction(correction.clone())).await;
        pb::Correction { header: with_approval(correction.header.clone(), token), ..correction }
    };
    let joined = player_events.iter().find(|event| event.event_type == "JoinedTable").expect("a seating");
    let refused = ledger_client
        .correct(authed(ADMIN, approved(correction("correct-join-P7", &joined.event_id.to_string())).await))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert!(refused.message().starts_with("CORRECTION_INVALID") && refused.message().contains("R-AUDIT-1"), "{refused:?}");
    // R-AUDIT-1 + R-AUDIT-4: the record of a cash transaction follows the money: taken back
    // alone, it would lower the patron's day total while the $200 stays in the drop. Refused,
    // with the amount; the day's projected cash in stays 20,000.
    let refused = ledger_client
        .correct(authed(ADMIN, approved(correction("correct-cash-P7", &cash.event_id.to_string())).await))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert!(refused.message().starts_with("CORRECTION_INVALID"), "{refused:?}");
    let day = reader.daily_cash("casino", "P7", &gaming_day).await.expect("daily cash");
    assert_eq!((day.cash_in_cents, day.cash_out_cents), (20_000, 0));

    // The stack is answerable (R-STAKE-4).
    let view = table
        .get_table(authed(AUDITOR, pb::GetTableRequest { table_id: "T1".into(), ..Default::default() }))
        .await
        .expect("auditor reads the table")
        .into_inner();
    let seat = view.seats.iter().find(|seat| seat.seat == 3).expect("seat 3");
    assert_eq!((seat.player_id.as_str(), seat.stack_cents), ("P7", 20_000));

    // Roles: a dealer cannot issue a marker; an auditor cannot write.
    let denied = cage
        .issue_marker(authed(
            DEALER,
            pb::IssueMarker {
                header: header("marker-1"),
                cage_id: "MAIN".into(),
                player_id: "P7".into(),
                marker_no: 1,
                chips: vec![chips(10_000, 1)],
                approved_by: "boss".into(),
                delivery: Some(pb::issue_marker::Delivery::ToPocket(true)),
            },
        ))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    let denied = table
        .tip(authed(AUDITOR, pb::Tip { header: header("tip-1"), table_id: "T1".into(), seat: 3, amount_cents: 100 }))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);

    // Ratholing: refused with the reason and rule id, and recorded for auditors (R-STAKE-2).
    let rathole = table
        .remove_chips(authed(
            DEALER,
            pb::RemoveChips { header: header("rathole-1"), table_id: "T1".into(), seat: 3, amount_cents: 5_000, player_id: None },
        ))
        .await
        .unwrap_err();
    assert_eq!(rathole.code(), Code::FailedPrecondition);
    let details = rathole.get_error_details();
    let info = details.error_info().expect("ErrorInfo");
    assert_eq!(info.reason, "RATHOLING_FORBIDDEN");
    assert_eq!(info.domain, "chipledger.v1");
    assert_eq!(info.metadata.get("rule_id").map(String::as_str), Some("R-STAKE-2"));
    let rejections = audit
        .list_rejections(authed(AUDITOR, pb::ListRejectionsRequest::default()))
        .await
        .expect("auditor lists rejections")
        .into_inner();
    assert!(
        rejections.rejections.iter().any(|r| r.command_id == "rathole-1" && r.reason_code == "RATHOLING_FORBIDDEN"),
        "{rejections:?}"
    );

    // Malformed input: INVALID_ARGUMENT with a BadRequest naming the fields.
    let malformed = table
        .buy_in(authed(DEALER, pb::BuyIn { header: header("bad-1"), seat: 0, ..Default::default() }))
        .await
        .unwrap_err();
    assert_eq!(malformed.code(), Code::InvalidArgument);
    assert!(malformed.get_error_details().bad_request().is_some());

    // Two more players, then a whole hand in one atomic batch (the docs/API.md example).
    for (seat, player) in [(1, "P8"), (5, "P9")] {
        table
            .seat_player(authed(
                DEALER,
                pb::SeatPlayer { header: header(&format!("seat-{player}")), table_id: "T1".into(), seat, player_id: player.into() },
            ))
            .await
            .expect("seat");
        table
            .buy_in(authed(
                DEALER,
                pb::BuyIn {
                    header: header(&format!("buyin-{player}")),
                    seat,
                    player_id: player.into(),
                    ..buy_in.clone()
                },
            ))
            .await
            .expect("buy-in");
    }
    let mut ledger_client = chipledger_proto::v1::ledger_service_client::LedgerServiceClient::new(channel.clone());
    let entry = |command: pb::command::Command| pb::Command { command: Some(command) };
    let batch = pb::RecordBatch {
        header: header("hand-T1-1"),
        commands: vec![
            entry(pb::command::Command::StartHand(pb::StartHand {
                table_id: "T1".into(),
                hand_no: 1,
                button_seat: 3,
                dealt_seats: vec![1, 3, 5],
                ..Default::default()
            })),
            entry(pb::command::Command::Post(pb::Post {
                table_id: "T1".into(),
                seat: 5,
                kind: pb::PostKind::SmallBlind as i32,
                amount_cents: 100,
                ..Default::default()
            })),
            entry(pb::command::Command::Post(pb::Post {
                table_id: "T1".into(),
                seat: 1,
                kind: pb::PostKind::BigBlind as i32,
                amount_cents: 200,
                ..Default::default()
            })),
            entry(pb::command::Command::Act(pb::Act { table_id: "T1".into(), seat: 3, kind: pb::ActionKind::Fold as i32, ..Default::default() })),
            entry(pb::command::Command::Act(pb::Act { table_id: "T1".into(), seat: 5, kind: pb::ActionKind::Fold as i32, ..Default::default() })),
            entry(pb::command::Command::EndHand(pb::EndHand { table_id: "T1".into(), ..Default::default() })),
        ],
    };
    let recorded = ledger_client.record_batch(authed(DEALER, batch)).await.expect("hand batch").into_inner();
    assert_eq!(recorded.results.len(), 6);
    let positions: Vec<i64> = recorded.results.iter().flat_map(|r| r.events.iter().map(|e| e.global_position)).collect();
    assert!(positions.windows(2).all(|pair| pair[1] == pair[0] + 1), "dense positions {positions:?}");
    let hand = table
        .get_hand(authed(AUDITOR, pb::GetHandRequest { table_id: "T1".into(), hand_no: Some(1), ..Default::default() }))
        .await
        .expect("hand")
        .into_inner();
    assert!(hand.ended);
    assert_eq!(hand.button_seat, 3);
    // No flop, no drop (R-RAKE-1): the big blind gets the small blind back with their own.
    assert_eq!(hand.rake_cents, 0);
    let to_seat_1: i64 = hand.awards.iter().filter(|award| award.seat == 1).map(|award| award.amount_cents).sum();
    assert_eq!(to_seat_1, 300, "{hand:?}");
    let stacks = table
        .get_table(authed(DEALER, pb::GetTableRequest { table_id: "T1".into(), ..Default::default() }))
        .await
        .unwrap()
        .into_inner();
    let stack = |seat: u32| stacks.seats.iter().find(|s| s.seat == seat).map(|s| s.stack_cents);
    assert_eq!((stack(1), stack(3), stack(5)), (Some(20_100), Some(20_000), Some(19_900)));

    // The seat in turn and its options, from the rules core.
    table
        .start_hand(authed(
            DEALER,
            pb::StartHand { header: header("h2-start"), table_id: "T1".into(), hand_no: 2, button_seat: 5, dealt_seats: vec![1, 3, 5] },
        ))
        .await
        .expect("start hand 2");
    for (seat, kind, amount, id) in [(1, pb::PostKind::SmallBlind, 100, "h2-sb"), (3, pb::PostKind::BigBlind, 200, "h2-bb")] {
        table
            .post(authed(DEALER, pb::Post { header: header(id), table_id: "T1".into(), seat, kind: kind as i32, amount_cents: amount }))
            .await
            .expect("post");
    }
    let legal = table
        .get_legal_actions(authed(DEALER, pb::GetLegalActionsRequest { table_id: "T1".into(), ..Default::default() }))
        .await
        .expect("legal actions")
        .into_inner();
    assert!(legal.seat_to_act);
    assert_eq!((legal.seat, legal.call_cents, legal.hand_no), (5, 200, 2), "{legal:?}");
    assert_eq!(legal.raise.map(|raise| raise.min_to_cents), Some(400), "R-BET-3: raise to at least twice the big blind");
    // Out of turn is refused (R-BET-1).
    let out_of_turn = table
        .act(authed(DEALER, pb::Act { header: header("h2-oot"), table_id: "T1".into(), seat: 1, kind: pb::ActionKind::Fold as i32, to_cents: 0 }))
        .await
        .unwrap_err();
    assert_eq!(out_of_turn.code(), Code::FailedPrecondition);
    assert!(out_of_turn.get_error_details().error_info().is_some_and(|info| info.metadata.contains_key("rule_id")));

    // The chain verifies and the digest is at the head.
    let verified = audit.verify_chain(authed(AUDITOR, pb::VerifyChainRequest::default())).await.expect("verify").into_inner();
    assert!(verified.ok, "{verified:?}");
    let digest = audit.get_chain_digest(authed(AUDITOR, pb::GetChainDigestRequest::default())).await.expect("digest").into_inner();
    assert!(digest.global_position >= first.events.iter().map(|event| event.global_position).max().unwrap());

    stop.send(()).expect("server running");
    server.await.expect("server task").expect("server stopped cleanly");
}

/// Mutual TLS: the client certificate's CN names the principal, whose role the gate enforces;
/// a client without a certificate does not get through the handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_maps_the_client_certificate_to_its_role() {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    use tonic::transport::{Certificate, ClientTlsConfig, Identity};

    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "chipledger test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let server_cert = CertificateParams::new(vec!["localhost".to_string()]).unwrap().signed_by(&server_key, &ca).unwrap();
    let client_key = KeyPair::generate().unwrap();
    let mut client_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    client_params.distinguished_name.push(DnType::CommonName, "dana");
    let client_cert = client_params.signed_by(&client_key, &ca).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let cert = write("server.pem", server_cert.pem());
    let key = write("server.key", server_key.serialize_pem());
    let ca_path = write("ca.pem", ca.pem());
    let data_dir = dir.path().join("data");
    let file: FileConfig = toml::from_str(&format!(
        "property_id = \"casino\"\ndata_dir = {data_dir:?}\n[tls]\ncert = {cert:?}\nkey = {key:?}\nclient_ca = {ca_path:?}\n\
         [[auth.principals]]\nid = \"dana\"\nrole = \"dealer\"\ncert_names = [\"dana\"]\n"
    ))
    .unwrap();
    let flags = Flags { listen: Some("127.0.0.1:0".parse().unwrap()), ..Flags::default() };
    let config = Config::resolve(flags, file).unwrap();

    let postgres = TestPostgres::start().await.expect("a PostgreSQL for the test");
    Store::migrate(&postgres.url()).await.expect("migrations");
    let store = Store::connect(&postgres.url()).await.expect("connect");
    let drain = Drain::new();
    let ledger = Arc::new(Ledger::for_config(store, &config, drain.clone()).expect("ledger"));
    let listener = serve::bind(config.listen).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = {
        let config = config.clone();
        tokio::spawn(async move {
            serve::serve(&config, listener, ledger, drain, async move {
                let _ = stopped.await;
            })
            .await
        })
    };

    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(ca.pem()))
        .domain_name("localhost")
        .identity(Identity::from_pem(client_cert.pem(), client_key.serialize_pem()));
    let channel = Channel::from_shared(format!("https://{addr}")).unwrap().tls_config(tls).unwrap().connect().await.expect("mTLS connects");
    let mut table = TableServiceClient::new(channel.clone());
    let mut audit = AuditServiceClient::new(channel);
    // Dana is a dealer: she may read a table (unknown here: NOT_FOUND comes from the handler) ...
    let missing = table.get_table(pb::GetTableRequest { table_id: "T9".into(), ..Default::default() }).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound, "{missing:?}");
    // ... but not verify the chain.
    let denied = audit.verify_chain(pb::VerifyChainRequest::default()).await.unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    assert_eq!(denied.get_error_details().error_info().unwrap().metadata["principal"], "dana");

    // Without a client certificate the handshake is refused.
    let anonymous = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca.pem())).domain_name("localhost");
    let refused = match Channel::from_shared(format!("https://{addr}")).unwrap().tls_config(anonymous).unwrap().connect().await {
        Err(_) => true,
        Ok(channel) => TableServiceClient::new(channel)
            .get_table(pb::GetTableRequest { table_id: "T9".into(), ..Default::default() })
            .await
            .is_err_and(|status| status.code() != Code::NotFound),
    };
    assert!(refused, "a client without a certificate got through");

    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}
