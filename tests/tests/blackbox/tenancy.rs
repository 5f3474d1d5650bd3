//! Tenancy: a principal acts only on the properties it is configured for. A dealer of property
//! A gets PERMISSION_DENIED for property B on commands, queries, subscriptions and approvals, and
//! B's log does not move; property ids have the form of table ids (an SQL fragment, a blank or
//! a bidirectional-override character is INVALID_ARGUMENT), and a property the server does not
//! serve is NOT_FOUND; nothing is ever recorded under such an id.

use chipledger_proto::v1 as pb;
use chipledger_server::config::{FileConfig, PrincipalFile, PropertyFile};
use chipledger_store::Store;
use chipledger_tests::{Client, ServerOptions, TestServer, approved, chips, error_info, header, principal};
use futures::StreamExt;
use tonic::Code;

use crate::scenario::{CAGE, TABLE, cash_buy_in};

const B: &str = "casino-b";
const BEA: (&str, &str, &str) = ("bea-dealer", "dealer", "bea-token-0123456789");

/// Property B beside the default one; the floor, the cage and the auditor serve both, Bea deals
/// at B only, every other principal at the default property only.
fn two_properties(file: &mut FileConfig) {
    file.properties.push(PropertyFile { id: B.into(), ..PropertyFile::default() });
    for entry in &mut file.auth.principals {
        if [principal::FLOOR.0, principal::CAGE.0, principal::AUDITOR.0].contains(&entry.id.as_str()) {
            entry.properties = vec!["*".into()];
        }
    }
    file.auth.principals.push(PrincipalFile {
        id: BEA.0.into(),
        role: BEA.1.into(),
        cert_names: Vec::new(),
        tokens: vec![BEA.2.into()],
        properties: vec![B.into()],
    });
}

fn header_in(command_id: &str, property_id: &str) -> Option<pb::CommandHeader> {
    Some(pb::CommandHeader { command_id: command_id.into(), property_id: property_id.into(), ..Default::default() })
}

/// Cage, NLHE $1/$2 table and its fill, in `property_id`.
async fn stock(cage: &mut Client, floor: &mut Client, property_id: &str) -> anyhow::Result<()> {
    cage.cage
        .open_cage(pb::OpenCage {
            header: header_in("open-cage", property_id),
            cage_id: CAGE.into(),
            denominations_cents: vec![100, 500, 2_500],
            chips: vec![chips(100, 1_000), chips(500, 1_000), chips(2_500, 400)],
            cash_cents: 0,
        })
        .await?;
    floor
        .table
        .open_table(pb::OpenTable {
            header: header_in("open-table", property_id),
            table_id: TABLE.into(),
            configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
                game: pb::GamePreset::NoLimitHoldem as i32,
                small_cents: 100,
                big_cents: 200,
..Default::default()
})),
        })
        .await?;
    let fill = pb::Fill {
        header: header_in("fill-1", property_id),
        table_id: TABLE.into(),
        cage_id: CAGE.into(),
        slip_no: 1,
        chips: vec![chips(100, 200), chips(500, 200)],
        signer_1: principal::CAGE.0.into(),
        signer_2: principal::FLOOR.0.into(),
    };
    cage.cage.fill(approved(fill, &mut [floor]).await?).await?;
    Ok(())
}

fn assert_not_permitted(status: &tonic::Status, what: &str) {
    assert_eq!(status.code(), Code::PermissionDenied, "{what}: {status:?}");
    assert_eq!(error_info(status).reason, "PROPERTY_NOT_PERMITTED", "{what}: {status:?}");
}

async fn head_of(auditor: &mut Client, property_id: &str) -> anyhow::Result<pb::ChainDigest> {
    Ok(auditor.audit.get_chain_digest(pb::GetChainDigestRequest { property_id: property_id.into() }).await?.into_inner())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dealer_of_property_a_cannot_touch_property_b_by_command_query_subscription_or_approval() -> anyhow::Result<()> {
    let options = ServerOptions { customize: Some(two_properties), ..ServerOptions::default() };
    let server = TestServer::start_with("tenancy", options, None).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    let mut dan = server.client(principal::DEALER).await?;
    let mut bea = server.client(BEA).await?;
    let mut flo = server.client(principal::FLOOR_2).await?;
    stock(&mut cage, &mut floor, "").await?;
    stock(&mut cage, &mut floor, B).await?;

    // Each dealer works at their own property.
    dan.table.seat_player(pb::SeatPlayer { header: header("seat-a"), table_id: TABLE.into(), seat: 1, player_id: "PA".into() }).await?;
    dan.table.buy_in(cash_buy_in("buy-a", TABLE, 1, "PA", 10_000)).await?;
    bea.table.seat_player(pb::SeatPlayer { header: header_in("seat-b", B), table_id: TABLE.into(), seat: 1, player_id: "PB".into() }).await?;
    bea.table.buy_in(pb::BuyIn { header: header_in("buy-b", B), ..cash_buy_in("", TABLE, 1, "PB", 20_000) }).await?;
    let b_before = head_of(&mut auditor, B).await?;
    let a_before = head_of(&mut auditor, "").await?;

    // Dan at B: commands, a batch, queries, a subscription and the balance of B's seat.
    let status = dan.table.tip(pb::Tip { header: header_in("tip-b", B), table_id: TABLE.into(), seat: 1, amount_cents: 100 }).await.expect_err("command");
    assert_not_permitted(&status, "a command at B");
    let status = dan
        .table
        .seat_player(pb::SeatPlayer { header: header_in("seat-b2", B), table_id: TABLE.into(), seat: 2, player_id: "PX".into() })
        .await
        .expect_err("command");
    assert_not_permitted(&status, "seating at B");
    let batch = pb::RecordBatch {
        header: header_in("batch-b", B),
        commands: vec![pb::Command { command: Some(pb::command::Command::Tip(pb::Tip { header: None, table_id: TABLE.into(), seat: 1, amount_cents: 100 })) }],
    };
    assert_not_permitted(&dan.ledger.record_batch(batch).await.expect_err("batch"), "a batch at B");
    let status = dan.table.get_table(pb::GetTableRequest { property_id: B.into(), table_id: TABLE.into(), as_of: None }).await.expect_err("query");
    assert_not_permitted(&status, "GetTable at B");
    let status = dan
        .table
        .get_legal_actions(pb::GetLegalActionsRequest { property_id: B.into(), table_id: TABLE.into() })
        .await
        .expect_err("query");
    assert_not_permitted(&status, "GetLegalActions at B");
    // A floor supervisor of A only cannot approve at B either.
    let correction = pb::Correction { header: header_in("corr-b", B), reverses_event_id: uuid::Uuid::nil().to_string(), approved_by: String::new(), reason: "x".into() };
    assert_not_permitted(&flo.approve(&correction).await.expect_err("approval"), "an approval at B");
    // Bea at A (the default property): the same walls the other way.
    let status = bea.table.tip(pb::Tip { header: header("tip-a"), table_id: TABLE.into(), seat: 1, amount_cents: 100 }).await.expect_err("command");
    assert_not_permitted(&status, "Bea at A");
    let batch = pb::RecordBatch {
        header: header_in("batch-a", ""),
        commands: vec![pb::Command { command: Some(pb::command::Command::Tip(pb::Tip { header: None, table_id: TABLE.into(), seat: 1, amount_cents: 100 })) }],
    };
    assert_not_permitted(&bea.ledger.record_batch(batch).await.expect_err("batch"), "Bea's batch naming no property, A by default");
    let status = bea.table.get_table(pb::GetTableRequest { property_id: String::new(), table_id: TABLE.into(), as_of: None }).await.expect_err("query");
    assert_not_permitted(&status, "Bea reads A");

    // Subscriptions and the ledger's queries need a reading role: the floor of A only (Flo).
    let status = flo.ledger.subscribe(pb::SubscribeRequest { property_id: B.into(), ..Default::default() }).await.expect_err("subscription");
    assert_not_permitted(&status, "Subscribe to B");
    let status = flo.ledger.list_events(pb::ListEventsRequest { property_id: B.into(), ..Default::default() }).await.expect_err("events");
    assert_not_permitted(&status, "ListEvents of B");
    let status = flo
        .ledger
        .get_balance(pb::GetBalanceRequest { property_id: B.into(), account: "table/T1/seat/1".into(), as_of: None })
        .await
        .expect_err("balance");
    assert_not_permitted(&status, "GetBalance at B");
    let status = flo.audit.verify_chain(pb::VerifyChainRequest { property_id: B.into(), ..Default::default() }).await.expect_err("chain");
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");

    let b_after = head_of(&mut auditor, B).await?;
    assert_eq!((b_after.global_position, &b_after.chain_hash_hex), (b_before.global_position, &b_before.chain_hash_hex), "nothing moved at B");
    let a_after = head_of(&mut auditor, "").await?;
    assert_eq!((a_after.global_position, &a_after.chain_hash_hex), (a_before.global_position, &a_before.chain_hash_hex), "nor at A");
    // Every command naming B is kept among A's refusals, with the caller (the insider pass:
    // they had been kept nowhere, while a role refusal was kept); queries are not commands.
    let kept = auditor.audit.list_rejections(pb::ListRejectionsRequest::default()).await?.into_inner().rejections;
    let walls: Vec<_> = kept.iter().filter(|kept| kept.reason_code == "PROPERTY_NOT_PERMITTED").collect();
    assert_eq!(walls.len(), 3, "{kept:?}");
    assert!(walls.iter().all(|kept| kept.actor_id == principal::DEALER.0 && kept.command_id.contains("~denied~")), "{walls:?}");
    assert_eq!(a_after.refusal_seq, a_before.refusal_seq + 3);
    // Bea may act on B only: her attempts at A, the default property, are kept at B, R-AUDIT-3
    // (the identity pass: they had been kept nowhere, neither property being both named and hers).
    assert_eq!(b_after.refusal_seq, b_before.refusal_seq + 2);
    let kept = auditor.audit.list_rejections(pb::ListRejectionsRequest { property_id: B.into(), ..Default::default() }).await?.into_inner().rejections;
    let walls: Vec<_> = kept.iter().filter(|kept| kept.reason_code == "PROPERTY_NOT_PERMITTED").collect();
    assert_eq!(walls.len(), 2, "{kept:?}");
    assert!(walls.iter().all(|kept| kept.actor_id == BEA.0 && kept.rule_id == "R-AUDIT-2"), "{walls:?}");
    // An import naming Bea as its actor at A is refused: she acts at B only (R-AUDIT-2; the
    // fixes' pass imported a RENO-only dealer's seating at another property).
    let mut admin = server.client(principal::ADMIN).await?;
    let header = Some(pb::CommandHeader { command_id: "import-bea-at-a".into(), import_actor_id: Some(BEA.0.into()), ..Default::default() });
    let status = admin.table.seat_player(pb::SeatPlayer { header, table_id: TABLE.into(), seat: 3, player_id: "PZ".into() }).await.expect_err("Bea acts at B only");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("import_actor_id") && status.message().contains("R-AUDIT-2"), "{status:?}");
    // A principal of both reads both; the subscription of B sees only B's events.
    let mut events = auditor
        .ledger
        .subscribe(pb::SubscribeRequest { property_id: B.into(), ..Default::default() })
        .await?
        .into_inner();
    let first = events.next().await.expect("B's first event")?;
    assert_eq!(first.global_position, 1);
    let view = auditor.table.get_table(pb::GetTableRequest { property_id: B.into(), table_id: TABLE.into(), as_of: None }).await?.into_inner();
    assert_eq!(view.seats.iter().find(|seat| seat.seat == 1).map(|seat| seat.player_id.as_str()), Some("PB"));
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_property_ids_are_invalid_argument_and_nothing_is_recorded_under_them() -> anyhow::Result<()> {
    let options = ServerOptions { customize: Some(two_properties), ..ServerOptions::default() };
    let server = TestServer::start_with("hostile-properties", options, None).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    let open = |property_id: &str| pb::OpenTable {
        header: header_in("open-hostile", property_id),
        table_id: TABLE.into(),
        configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
            game: pb::GamePreset::NoLimitHoldem as i32,
            small_cents: 100,
            big_cents: 200,
..Default::default()
})),
    };
    let hostile = ["x'); DROP TABLE events;--", " ", "casino\u{202e}b", "a/b", "tab\tle", &"p".repeat(65)];
    for id in hostile {
        let status = floor.table.open_table(open(id)).await.expect_err("a hostile property id");
        assert_eq!(status.code(), Code::InvalidArgument, "{id:?}: {status:?}");
        let status = auditor.table.get_table(pb::GetTableRequest { property_id: id.into(), table_id: TABLE.into(), as_of: None }).await.expect_err("query");
        assert_eq!(status.code(), Code::InvalidArgument, "{id:?}: {status:?}");
    }
    // A well-formed id this server does not serve: NOT_FOUND for a principal of every property,
    // PERMISSION_DENIED for one scoped to others.
    let status = floor.table.open_table(open("casino-z")).await.expect_err("unserved");
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let mut flo = server.client(principal::FLOOR_2).await?;
    assert_not_permitted(&flo.table.open_table(open("casino-z")).await.expect_err("unserved"), "a scoped principal");

    let store = Store::connect(&server.database_url).await?;
    for id in hostile.iter().copied().chain(["casino-z"]) {
        let digest = store.chain_digest(id).await?;
        assert_eq!(digest.position, 0, "events recorded under {id:?}");
        assert!(store.rejections(id, 0, 10).await?.is_empty(), "refusals recorded under {id:?}");
    }
    server.stop().await
}

fn room_with_game_keys(file: &mut FileConfig) {
    file.game_keys = Some(vec!["NLHE 100/200".into(), "PLO 200/500".into()]);
}

/// R-REBUY-1 binds room-wide by game key: a room that lists its games opens (and reconfigures)
/// tables only with one of them, so "nlhe 1/2" cannot stand beside "NLHE 100/200" and let a
/// player escape the re-buy wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_rebuy_1_a_room_with_game_keys_opens_tables_only_with_one_of_them() -> anyhow::Result<()> {
    let options = ServerOptions { customize: Some(room_with_game_keys), ..ServerOptions::default() };
    let server = TestServer::start_with("game-keys", options, None).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let preset = |table_id: &str, game: pb::GamePreset, small_cents: i64, big_cents: i64| pb::OpenTable {
        header: header(&format!("open-{table_id}")),
        table_id: table_id.into(),
        configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset { game: game as i32, small_cents, big_cents, ..Default::default() })),
    };
    let opened = floor.table.open_table(preset("T1", pb::GamePreset::NoLimitHoldem, 100, 200)).await?.into_inner();
    assert_eq!(opened.events.len(), 1);
    // The same game spelled another way, through a full configuration.
    let mut config = floor.table.get_table(pb::GetTableRequest { property_id: String::new(), table_id: "T1".into(), as_of: None }).await?.into_inner().config.expect("config");
    config.game_key = "nlhe 1/2".into();
    let open_other = pb::OpenTable {
        header: header("open-T2"),
        table_id: "T2".into(),
        configuration: Some(pb::open_table::Configuration::Config(config.clone())),
    };
    let status = floor.table.open_table(open_other).await.expect_err("another spelling");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let violation = tonic_types::StatusExt::get_error_details(&status).bad_request().expect("BadRequest").field_violations[0].clone();
    assert_eq!(violation.field, "config.game_key");
    assert!(violation.description.contains("R-REBUY-1"), "{violation:?}");
    let change = pb::ChangeTableConfig {
        header: header("respell-T1"),
        table_id: "T1".into(),
        configuration: Some(pb::change_table_config::Configuration::Config(config)),
    };
    assert_eq!(floor.table.change_table_config(change).await.expect_err("respelled").code(), Code::InvalidArgument);
    // A listed game opens; an unlisted one (PLHE) does not.
    floor.table.open_table(preset("T3", pb::GamePreset::PotLimitOmaha, 200, 500)).await?;
    let status = floor.table.open_table(preset("T4", pb::GamePreset::PotLimitHoldem, 100, 200)).await.expect_err("unlisted");
    assert_eq!(status.code(), Code::InvalidArgument);
    server.stop().await
}
