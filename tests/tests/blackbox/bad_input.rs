//! Bad input is the caller's fault and says so: INVALID_ARGUMENT with a `google.rpc.BadRequest`
//! naming the field, never INTERNAL, and nothing moves. A NUL character in any string field of
//! any RPC (PostgreSQL text cannot hold it), an integer beyond 2^53 in any 64-bit field of any
//! RPC (the hash chain's JSON cannot hold it exactly), malformed protobuf sent as raw HTTP/2 request bodies
//! (truncated, overrun, wrong wire types, invalid UTF-8, a short gRPC frame, garbage), and times
//! outside what the log can answer.

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, grpc_frame, head, header, principal, raw_grpc};
use prost::Message;
use prost_types::field_descriptor_proto::{Label, Type};
use tonic::Code;
use tonic_types::StatusExt;

fn varint(mut value: u64, out: &mut Vec<u8>) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// One length-delimited field.
fn field(number: u32, payload: &[u8], out: &mut Vec<u8>) {
    varint((u64::from(number) << 3) | 2, out);
    varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

const NUL_TEXT: &[u8] = b"x\0y";

/// The field whose BadRequest violation a refusal names.
fn violated_field(status: &tonic::Status) -> String {
    status
        .get_error_details()
        .bad_request()
        .and_then(|bad| bad.field_violations.first().map(|violation| violation.field.clone()))
        .unwrap_or_else(|| panic!("no BadRequest in {status:?}"))
}

/// Every RPC's path with one request per field `value_of` gives bytes for (the value's
/// encoding, key included): each field of the request, and each field of its command header;
/// with the field path the refusal must name.
fn one_field_requests(value_of: impl Fn(&prost_types::FieldDescriptorProto) -> Option<Vec<u8>>) -> anyhow::Result<Vec<(String, String, Vec<u8>)>> {
    let set = prost_types::FileDescriptorSet::decode(chipledger_proto::FILE_DESCRIPTOR_SET)?;
    let messages: std::collections::HashMap<String, &prost_types::DescriptorProto> = set
        .file
        .iter()
        .flat_map(|file| file.message_type.iter().map(move |message| (format!(".{}.{}", file.package(), message.name()), message)))
        .collect();
    let header_type = ".chipledger.v1.CommandHeader";
    let index = |described: &prost_types::FieldDescriptorProto| if described.label() == Label::Repeated { "[0]" } else { "" };
    let mut requests = Vec::new();
    for file in &set.file {
        for service in &file.service {
            for method in &service.method {
                let path = format!("/{}.{}/{}", file.package(), service.name(), method.name());
                for described in &messages[method.input_type()].field {
                    if let Some(bytes) = value_of(described) {
                        requests.push((path.clone(), format!("{}{}", described.name(), index(described)), bytes));
                    }
                    if described.type_name() == header_type {
                        for header_field in &messages[header_type].field {
                            let Some(inner) = value_of(header_field) else { continue };
                            let mut bytes = Vec::new();
                            field(described.number() as u32, &inner, &mut bytes);
                            requests.push((path.clone(), format!("{}.{}{}", described.name(), header_field.name(), index(header_field)), bytes));
                        }
                    }
                }
            }
        }
    }
    Ok(requests)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nul_in_any_string_field_of_any_rpc_is_invalid_argument_and_moves_nothing() -> anyhow::Result<()> {
    let server = TestServer::start("nul-sweep").await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    let before = head(&mut auditor).await?;
    let requests = one_field_requests(|described| {
        (described.r#type() == Type::String).then(|| {
            let mut bytes = Vec::new();
            field(described.number() as u32, NUL_TEXT, &mut bytes);
            bytes
        })
    })?;
    let mut checked = 0;
    for (path, expected, bytes) in requests {
        let status = raw_grpc(server.channel().await?, &path, Some(principal::ADMIN.2), grpc_frame(&bytes)).await?;
        assert_eq!(status.code(), Code::InvalidArgument, "{path} {expected}: {status:?}");
        assert_eq!(violated_field(&status), expected, "{path}");
        checked += 1;
    }
    assert!(checked > 150, "string fields checked: {checked}");
    // Deep inside a batch, and through the typed client (what prost encodes).
    let mut admin = server.client(principal::ADMIN).await?;
    let batch = pb::RecordBatch {
        header: header("batch-nul"),
        commands: vec![pb::Command {
            command: Some(pb::command::Command::SeatPlayer(pb::SeatPlayer {
                header: None,
                table_id: "T1".into(),
                seat: 1,
                player_id: "P\0".into(),
            })),
        }],
    };
    let status = admin.ledger.record_batch(batch).await.expect_err("NUL in a batch entry");
    assert_eq!((status.code(), violated_field(&status)), (Code::InvalidArgument, "commands[0].seat_player.player_id".to_string()));
    // An import's time in a command's own header (R-AUDIT-2: it had been dropped without a word,
    // the command recorded as the caller's, now).
    let batch = pb::RecordBatch {
        header: header("batch-import-inside"),
        commands: vec![pb::Command {
            command: Some(pb::command::Command::SeatPlayer(pb::SeatPlayer {
                header: Some(pb::CommandHeader { import_occurred_at_unix_ms: Some(1_700_000_000_000), ..Default::default() }),
                table_id: "T1".into(),
                seat: 1,
                player_id: "P1".into(),
            })),
        }],
    };
    let status = admin.ledger.record_batch(batch).await.expect_err("an import's time in an entry's header");
    assert_eq!((status.code(), violated_field(&status)), (Code::InvalidArgument, "commands[0].header.import_occurred_at_unix_ms".to_string()));
    assert_eq!(head(&mut auditor).await?, before, "nothing was written");
    server.stop().await
}

/// 2^53 in any 64-bit integer field of any RPC (an amount, a count, a slip, marker or hand
/// number, a time, a position): beyond what the hash chain's JSON holds exactly, so bad input
/// naming the field (an amount with R-UNIT-1), never INTERNAL, and nothing moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_integer_beyond_2_pow_53_in_any_field_of_any_rpc_is_invalid_argument_and_moves_nothing() -> anyhow::Result<()> {
    let server = TestServer::start("integer-sweep").await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    let before = head(&mut auditor).await?;
    let beyond: u64 = 1 << 53;
    let requests = one_field_requests(|described| {
        (matches!(described.r#type(), Type::Int64 | Type::Uint64) && described.label() != Label::Repeated).then(|| {
            let mut bytes = Vec::new();
            varint(u64::from(described.number() as u32) << 3, &mut bytes);
            varint(beyond, &mut bytes);
            bytes
        })
    })?;
    let mut amounts = 0;
    for (path, expected, bytes) in &requests {
        let status = raw_grpc(server.channel().await?, path, Some(principal::ADMIN.2), grpc_frame(bytes)).await?;
        assert_eq!(status.code(), Code::InvalidArgument, "{path} {expected}: {status:?}");
        assert_eq!(&violated_field(&status), expected, "{path}");
        assert!(status.message().contains(&beyond.to_string()), "{path}: {status:?}");
        if expected.ends_with("_cents") {
            assert!(status.message().contains("R-UNIT-1"), "{path}: {status:?}");
            amounts += 1;
        }
    }
    assert!(requests.len() > 50 && amounts > 10, "integer fields checked: {}, amounts {amounts}", requests.len());
    assert_eq!(head(&mut auditor).await?, before, "nothing was written");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_protobuf_is_invalid_argument_with_a_bad_request_and_moves_nothing() -> anyhow::Result<()> {
    let server = TestServer::start("malformed").await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    let before = head(&mut auditor).await?;
    let good = pb::BuyIn {
        header: header("buy-raw"),
        table_id: "T1".into(),
        seat: 3,
        player_id: "P7".into(),
        amount_cents: 20_000,
        source: pb::FundsSource::Cash as i32,
        supervisor_id: None,
        short_buy: false,
    }
    .encode_to_vec();
    let mut garbage = Vec::with_capacity(64);
    let mut state: u32 = 0x9e37_79b9;
    for _ in 0..64 {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        garbage.push((state >> 24) as u8);
    }
    let mut short_frame = grpc_frame(&good);
    short_frame.truncate(short_frame.len() - 4);
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("truncated message", grpc_frame(&good[..good.len() - 2])),
        ("length beyond the message", grpc_frame(&[0x22, 0x40, b'P'])),
        ("string field as a varint", grpc_frame(&[0x20, 0x07])),
        ("message field as fixed32", grpc_frame(&[0x0d, 1, 2, 3, 4])),
        ("invalid UTF-8 in a string", grpc_frame(&[0x22, 0x02, 0xc3, 0x28])),
        ("varint of eleven bytes", grpc_frame(&[0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])),
        ("deprecated group wire type", grpc_frame(&[0x0b, 0x0c])),
        ("a frame shorter than it says", short_frame),
        ("a frame header cut short", vec![0, 0, 0]),
        ("garbage", grpc_frame(&garbage)),
    ];
    for (what, body) in bodies {
        let status = raw_grpc(server.channel().await?, "/chipledger.v1.TableService/BuyIn", Some(principal::ADMIN.2), body).await?;
        assert_eq!(status.code(), Code::InvalidArgument, "{what}: {status:?}");
        assert!(status.get_error_details().bad_request().is_some(), "{what}: no BadRequest in {status:?}");
    }
    // The well-formed bytes through the same raw path reach the service (here: a table that
    // does not exist, a refusal by the rules, not a decoding problem).
    let status = raw_grpc(server.channel().await?, "/chipledger.v1.TableService/BuyIn", Some(principal::ADMIN.2), grpc_frame(&good)).await?;
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    // The refusal is recorded on the refusal chain (R-AUDIT-3); no event was written.
    let after = head(&mut auditor).await?;
    assert_eq!((after.global_position, after.chain_hash_hex), (before.global_position, before.chain_hash_hex), "nothing was written");
    assert_eq!(after.refusal_seq, before.refusal_seq + 1, "the refusal was recorded");
    server.stop().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn times_outside_what_the_log_can_answer_are_invalid_argument() -> anyhow::Result<()> {
    let server = TestServer::start("bad-times").await?;
    let mut admin = server.client(principal::ADMIN).await?;
    let ranges = [
        pb::TimeRange { from_unix_ms: Some(2_000), to_unix_ms: Some(1_000) },
        pb::TimeRange { from_unix_ms: Some(i64::MAX), to_unix_ms: None },
        pb::TimeRange { from_unix_ms: None, to_unix_ms: Some(i64::MIN) },
    ];
    for range in ranges {
        let request = pb::ListEventsRequest {
            filter: Some(pb::EventFilter { time_range: Some(range), ..Default::default() }),
            ..Default::default()
        };
        let status = admin.ledger.list_events(request).await.expect_err("bad range");
        assert_eq!(status.code(), Code::InvalidArgument, "{range:?}: {status:?}");
        let status = admin
            .audit
            .list_rejections(pb::ListRejectionsRequest { time_range: Some(range), ..Default::default() })
            .await
            .expect_err("bad range");
        assert_eq!(status.code(), Code::InvalidArgument, "{range:?}: {status:?}");
    }
    let status = admin
        .ledger
        .get_balance(pb::GetBalanceRequest { account: "house/patrons".into(), as_of: Some(pb::get_balance_request::AsOf::UnixMs(i64::MAX)), ..Default::default() })
        .await
        .expect_err("far future");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    // A time after the server's clock: the log cannot answer it yet (the auditor pass: a balance
    // and the stacks "as of" next June were answered as of the head, labelled with that date).
    let in_an_hour = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis() as i64 + 3_600_000;
    let status = admin
        .ledger
        .get_balance(pb::GetBalanceRequest { account: "house/patrons".into(), as_of: Some(pb::get_balance_request::AsOf::UnixMs(in_an_hour)), ..Default::default() })
        .await
        .expect_err("an hour ahead");
    assert_eq!((status.code(), violated_field(&status)), (Code::InvalidArgument, "unix_ms".to_string()), "{status:?}");
    let status = admin
        .table
        .get_table(pb::GetTableRequest { table_id: "T1".into(), as_of: Some(pb::get_table_request::AsOf::UnixMs(in_an_hour)), ..Default::default() })
        .await
        .expect_err("an hour ahead");
    assert_eq!((status.code(), violated_field(&status)), (Code::InvalidArgument, "unix_ms".to_string()), "{status:?}");
    // An import dated far outside 1970..2100.
    let header = Some(pb::CommandHeader { command_id: "import-far".into(), import_occurred_at_unix_ms: Some(i64::MAX), ..Default::default() });
    let status = admin
        .cage
        .open_cage(pb::OpenCage { header, cage_id: "MAIN".into(), denominations_cents: vec![100], chips: vec![], cash_cents: 0 })
        .await
        .expect_err("far import");
    assert_eq!((status.code(), violated_field(&status)), (Code::InvalidArgument, "header.import_occurred_at_unix_ms".to_string()));
    server.stop().await
}

/// A batch writes at most 64 streams (one append): one naming more is refused on `commands`,
/// with the count, before anything is decided, and nothing moves (the operations pass: 64
/// patrons' sales were decided for seconds and then refused without a reason).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_naming_more_streams_than_one_append_writes_is_invalid_argument() -> anyhow::Result<()> {
    let server = TestServer::start("bad_input_streams").await?;
    let mut cage = server.client(principal::CAGE).await?;
    crate::scenario::open_cage(&mut cage).await?;
    let sale = |index: usize| pb::Command {
        command: Some(pb::command::Command::SellChips(pb::SellChips {
            header: None,
            cage_id: crate::scenario::CAGE.into(),
            player_id: format!("W{index}"),
            chips: vec![chipledger_tests::chips(100, 1)],
            supervisor_id: None,
        })),
    };
    // The cage and 63 patrons: 64 streams, recorded.
    cage.ledger.record_batch(pb::RecordBatch { header: header("sales-63"), commands: (0..63).map(sale).collect() }).await?;
    let refused = cage
        .ledger
        .record_batch(pb::RecordBatch { header: header("sales-64"), commands: (100..164).map(sale).collect() })
        .await
        .expect_err("65 streams");
    assert_eq!((refused.code(), violated_field(&refused).as_str()), (Code::InvalidArgument, "commands"), "{refused:?}");
    assert!(refused.message().contains("65"), "{refused:?}");
    let mut auditor = server.client(principal::AUDITOR).await?;
    let sold = chipledger_tests::all_events(&mut auditor, pb::EventFilter { stream_id: "player-W100".into(), ..Default::default() }).await?;
    assert!(sold.is_empty(), "nothing moved: {sold:?}");
    server.stop().await
}

/// A field the codec refuses refuses the command even where it could still build one (the
/// closing spot check: an unknown kitty `from` and a house kill percentage without the house kill
/// were taken and dropped): INVALID_ARGUMENT naming the field, nothing opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_config_with_a_refused_option_is_invalid_argument_and_opens_nothing() -> anyhow::Result<()> {
    let server = TestServer::start("bad_input_config").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    crate::scenario::stocked_table(&mut cage, &mut floor, crate::scenario::TABLE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let config = crate::scenario::table_view(&mut dealer, crate::scenario::TABLE).await?.config.expect("a config");
    let mut unknown_from = config.clone();
    unknown_from.kitty = Some(pb::KittyPolicy { min_pot_cents: 0, leftover: 0, from: 99 });
    let mut percent_alone = config.clone();
    percent_alone.kill_house_percent = 250;
    for (name, config, field) in [("TX1", unknown_from, "config.kitty.from"), ("TX2", percent_alone, "config.kill_house_percent")] {
        let refused = floor
            .table
            .open_table(pb::OpenTable { header: header(name), table_id: name.into(), configuration: Some(pb::open_table::Configuration::Config(config)) })
            .await
            .expect_err(field);
        assert_eq!((refused.code(), violated_field(&refused)), (Code::InvalidArgument, field.to_string()), "{refused:?}");
    }
    let mut auditor = server.client(principal::AUDITOR).await?;
    let opened = chipledger_tests::all_events(&mut auditor, pb::EventFilter { stream_id: "table-TX1".into(), ..Default::default() }).await?;
    assert!(opened.is_empty(), "{opened:?}");
    server.stop().await
}

/// A batch entry's own header (R-AUDIT-2): its device and note are checked as any header's and
/// kept on that command's events (else the batch's are); a property other than the batch's is
/// refused, and nothing is recorded (the client pass: a bidirectional override and 600 bytes were
/// kept as an entry's device, an entry naming another property was recorded on the batch's, and
/// an entry's note was dropped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_entry_header_is_checked_kept_and_held_to_the_batch_property() -> anyhow::Result<()> {
    let server = TestServer::start("bad_input_entry_header").await?;
    let mut cage = server.client(principal::CAGE).await?;
    crate::scenario::open_cage(&mut cage).await?;
    let sale = |player: &str, header: Option<pb::CommandHeader>| pb::Command {
        command: Some(pb::command::Command::SellChips(pb::SellChips {
            header,
            cage_id: crate::scenario::CAGE.into(),
            player_id: player.into(),
            chips: vec![chipledger_tests::chips(100, 1)],
            supervisor_id: None,
        })),
    };
    let own = |device: Option<&str>, note: &str, property: &str| {
        Some(pb::CommandHeader { device: device.map(Into::into), reason_note: note.into(), property_id: property.into(), ..Default::default() })
    };
    let long = "x".repeat(600);
    let refused = [
        (own(Some("d\u{202e}"), "", ""), "commands[1].header.device"),
        (own(Some(long.as_str()), "", ""), "commands[1].header.device"),
        (own(None, "n\u{1}", ""), "commands[1].header.reason_note"),
        (own(None, "", "ELSEWHERE"), "commands[1].header.property_id"),
    ];
    for (index, (entry_header, field)) in refused.into_iter().enumerate() {
        let batch = pb::RecordBatch { header: header(&format!("entry-bad-{index}")), commands: vec![sale("E1", None), sale("E2", entry_header)] };
        let status = cage.ledger.record_batch(batch).await.expect_err(field);
        assert_eq!((status.code(), violated_field(&status)), (Code::InvalidArgument, field.to_string()), "{status:?}");
    }
    let mut auditor = server.client(principal::AUDITOR).await?;
    for player in ["player-E1", "player-E2"] {
        let sold = chipledger_tests::all_events(&mut auditor, pb::EventFilter { stream_id: player.into(), ..Default::default() }).await?;
        assert!(sold.is_empty(), "nothing moved: {sold:?}");
    }
    // Kept: the second entry's device and note on its events, the first the batch's; naming the
    // batch's own property is the batch's.
    let batch_header = pb::CommandHeader { device: Some("window-2".into()), reason_note: "batch note".into(), ..header("entry-kept").unwrap_or_default() };
    let batch = pb::RecordBatch {
        header: Some(batch_header),
        commands: vec![sale("E1", None), sale("E2", own(Some("window-3"), "entry note", &server.property_id))],
    };
    cage.ledger.record_batch(batch).await?;
    for (player, device, note) in [("player-E1", "window-2", "batch note"), ("player-E2", "window-3", "entry note")] {
        let events = chipledger_tests::all_events(&mut auditor, pb::EventFilter { stream_id: player.into(), ..Default::default() }).await?;
        assert!(!events.is_empty(), "{player} sold");
        for event in events {
            let metadata = event.metadata.expect("metadata");
            assert_eq!((metadata.device.as_deref(), metadata.reason_note.as_str()), (Some(device), note), "{player}");
        }
    }
    server.stop().await
}
