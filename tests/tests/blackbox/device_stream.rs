//! A dealer's device on one stream (`LedgerService.RecordStream`): commands in, one reply per
//! command out, in the order sent, each judged as its unary RPC would be. A refusal is a reply
//! with its reason, rule and numbers (R-STAKE-3 here), and then the stream ends: the commands sent
//! after it were meant for the table with it, and none is decided without it. A command the
//! dealer's role may not send is refused by the role table inside the stream; a command id sent
//! again is a replay (nothing recorded twice); the log holds exactly what the replies say.

use chipledger_proto::v1 as pb;
use chipledger_tests::{Client, TestServer, all_events, error_info, header, principal};
use tonic::Code;

use crate::scenario::{TABLE, cash_buy_in, stocked_table};

fn entry(command: pb::command::Command) -> pb::Command {
    pb::Command { command: Some(command) }
}

/// The replies to `sent` on one stream, and how it ended (`None`: the server closed it after the
/// last reply).
async fn on_one_stream(device: &mut Client, sent: Vec<pb::Command>) -> anyhow::Result<(Vec<pb::StreamReply>, Option<tonic::Status>)> {
    let mut replies = device.ledger.record_stream(tokio_stream::iter(sent)).await?.into_inner();
    let mut answered = Vec::new();
    loop {
        match replies.message().await {
            Ok(Some(reply)) => answered.push(reply),
            Ok(None) => return Ok((answered, None)),
            Err(ended) => return Ok((answered, Some(ended))),
        }
    }
}

/// The status a stream's reply carries.
fn refusal(reply: &pb::StreamReply) -> tonic::Status {
    tonic::Status::with_details(Code::from(reply.code), reply.message.clone(), reply.status_details.clone().into())
}

/// The stream's end after a command it did not record names it (R-AUDIT-3).
fn ended_after_refusal(ended: Option<tonic::Status>, command_id: &str) {
    let ended = ended.expect("the stream ends after a refusal");
    let info = error_info(&ended);
    assert_eq!((ended.code(), info.reason.as_str()), (Code::Aborted, "STREAM_ENDS_AFTER_REFUSAL"), "{ended:?}");
    assert_eq!(info.metadata.get("command_id").map(String::as_str), Some(command_id), "{ended:?}");
    assert_eq!(info.metadata.get("rule_id").map(String::as_str), Some("R-AUDIT-3"), "{ended:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_stream_answers_in_order_and_ends_after_a_refusal() -> anyhow::Result<()> {
    let server = TestServer::start("device-stream").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    stocked_table(&mut cage, &mut floor, TABLE).await?;
    let before = all_events(&mut floor, pb::EventFilter::default()).await?.len();
    let mut dealer = server.client(principal::DEALER).await?;

    // R-STAKE-3: a buy-in below the minimum, refused with its reason and numbers as the unary
    // RPC says it; the buy-in sent after it on the strength of it is not decided.
    let sent = vec![
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-1", TABLE, 1, "P1", 10_000))),
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-2", TABLE, 2, "P2", 3_999))),
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-3", TABLE, 3, "P3", 20_000))),
    ];
    let (answered, ended) = on_one_stream(&mut dealer, sent).await?;
    let ids: Vec<&str> = answered.iter().map(|reply| reply.command_id.as_str()).collect();
    assert_eq!(ids, ["stream-1", "stream-2"], "one reply per command, in order, up to the refusal");
    let first = answered[0].result.as_ref().expect("the first buy-in is recorded");
    assert_eq!(answered[0].code, 0);
    assert!(!first.replayed);
    let below = refusal(&answered[1]);
    assert_eq!(below.code(), Code::FailedPrecondition, "{below:?}");
    assert_eq!(error_info(&below).reason, "BUY_IN_BELOW_MINIMUM");
    assert_eq!(error_info(&below).metadata.get("min_buy_in_cents").map(String::as_str), Some("4000"));
    assert!(answered[1].result.is_none());
    ended_after_refusal(ended, "stream-2");

    // The device sends what it still means on a new stream. A dealer may not issue a marker: the
    // role table holds inside the stream, and that refusal ends this one.
    let marker = pb::IssueMarker {
        header: header("stream-4"),
        cage_id: "MAIN".into(),
        player_id: "P1".into(),
        marker_no: 1,
        chips: vec![chipledger_tests::chips(2_500, 4)],
        approved_by: String::new(),
        delivery: Some(pb::issue_marker::Delivery::ToPocket(true)),
    };
    let sent = vec![
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-3", TABLE, 3, "P3", 20_000))),
        entry(pb::command::Command::IssueMarker(marker)),
        entry(pb::command::Command::SitOut(pb::SitOut { header: header("stream-5"), table_id: TABLE.into(), seat: 1 })),
    ];
    let (answered, ended) = on_one_stream(&mut dealer, sent).await?;
    let ids: Vec<&str> = answered.iter().map(|reply| reply.command_id.as_str()).collect();
    assert_eq!(ids, ["stream-3", "stream-4"]);
    let third = answered[0].result.clone().expect("the next command is recorded");
    assert_eq!(Code::from(answered[1].code), Code::PermissionDenied, "{:?}", answered[1]);
    ended_after_refusal(ended, "stream-4");

    // The same command id again: the first result, replayed. A replay is no refusal: the stream
    // goes on, to a command whose id is recorded without the white space around it (and so is
    // the reply's), then an empty command (bad input, which ends it).
    let sent = vec![
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-1", TABLE, 1, "P1", 10_000))),
        entry(pb::command::Command::SitOut(pb::SitOut { header: header(" stream-6 "), table_id: TABLE.into(), seat: 1 })),
        pb::Command { command: None },
        entry(pb::command::Command::SitIn(pb::SitIn { header: header("stream-9"), table_id: TABLE.into(), seat: 1 })),
    ];
    let (answered, ended) = on_one_stream(&mut dealer, sent).await?;
    let ids: Vec<&str> = answered.iter().map(|reply| reply.command_id.as_str()).collect();
    assert_eq!(ids, ["stream-1", "stream-6", ""], "{answered:?}");
    let again = answered[0].result.as_ref().expect("a replay");
    assert!(again.replayed);
    assert_eq!(again.events, first.events, "the replay names the same events");
    let sat_out = answered[1].result.clone().expect("the sit-out is recorded");
    assert_eq!(Code::from(answered[2].code), Code::InvalidArgument, "an empty command is bad input");
    ended_after_refusal(ended, "");

    // A NUL in a string is bad input inside a stream too (the gate's check, per message).
    let sent = vec![
        entry(pb::command::Command::BuyIn(pb::BuyIn {
            header: Some(pb::CommandHeader { reason_note: "a\0b".into(), ..header("stream-7").unwrap_or_default() }),
            ..cash_buy_in("stream-7", TABLE, 4, "P4", 10_000)
        })),
        entry(pb::command::Command::SitOut(pb::SitOut { header: header("stream-8"), table_id: TABLE.into(), seat: 1 })),
    ];
    let (answered, ended) = on_one_stream(&mut dealer, sent).await?;
    assert_eq!(answered.len(), 1);
    assert_eq!(Code::from(answered[0].code), Code::InvalidArgument, "{:?}", answered[0]);
    assert!(answered[0].result.is_none());
    ended_after_refusal(ended, "stream-7");

    // The log holds exactly the two recorded buy-ins and the sit-out: nothing sent after a
    // refusal was decided.
    let after = all_events(&mut floor, pb::EventFilter::default()).await?;
    let new: Vec<&pb::RecordedEvent> = after[before..].iter().collect();
    let commands: std::collections::BTreeSet<String> =
        new.iter().filter_map(|event| event.metadata.as_ref().map(|metadata| metadata.command_id.clone())).collect();
    assert_eq!(commands, ["stream-1", "stream-3", "stream-6"].map(String::from).into(), "{commands:?}");
    let recorded = first.events.len() + third.events.len() + sat_out.events.len();
    assert_eq!(new.len(), recorded, "nothing recorded twice or beyond the replies");
    server.stop().await
}

/// A device that sends ahead of the server (the stream pass): 3,000 small commands written as
/// fast as HTTP/2 lets it. Each small message is its own DATA frame, charged against the
/// connection's frame budget until the server reads it; with the windows hyper gives a server
/// by default, the frames a fast client could have unread exceeded that budget, and the whole
/// connection was cut (GOAWAY ENHANCE_YOUR_CALM, `too_many_data_frames`) after a few dozen
/// replies, a subscription on the same connection with it. The server's windows bound what a
/// stream may have unread to well within the budget: the device is slowed, never cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_sending_far_ahead_is_slowed_not_cut_off() -> anyhow::Result<()> {
    const SENT: usize = 3_000;
    let server = TestServer::start("device-stream-ahead").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    stocked_table(&mut cage, &mut floor, TABLE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    dealer.table.buy_in(cash_buy_in("ahead-buy-in", TABLE, 1, "P1", 10_000)).await?;
    let sent = (0..SENT).map(|i| {
        let (header, table_id, seat) = (header(&format!("ahead-{i}")), TABLE.to_string(), 1);
        entry(if i % 2 == 0 {
            pb::command::Command::SitOut(pb::SitOut { header, table_id, seat })
        } else {
            pb::command::Command::SitIn(pb::SitIn { header, table_id, seat })
        })
    });
    // One message a DATA frame, as a device writing each command when it is made does: the
    // stream pauses between items, so the encoder does not gather them into one frame.
    let sent = futures::StreamExt::then(futures::stream::iter(sent), |command| async move {
        tokio::task::yield_now().await;
        command
    });
    let mut replies = dealer.ledger.record_stream(sent).await?.into_inner();
    let mut answered = 0;
    while let Some(reply) = replies.message().await? {
        assert_eq!(reply.code, 0, "{reply:?}");
        assert_eq!(reply.command_id, format!("ahead-{answered}"));
        answered += 1;
    }
    assert_eq!(answered, SENT, "one reply per command");

    // A message past the bound ends the stream with the refusal a unary call gets, with details.
    let huge = pb::SitOut {
        header: Some(pb::CommandHeader { reason_note: "x".repeat(17 * 1024 * 1024), ..header("ahead-huge").unwrap_or_default() }),
        table_id: TABLE.into(),
        seat: 1,
    };
    let mut replies = dealer.ledger.record_stream(tokio_stream::iter([entry(pb::command::Command::SitOut(huge.clone()))])).await?.into_inner();
    let ended = replies.message().await.expect_err("a message past the bound");
    assert_eq!((ended.code(), error_info(&ended).reason.as_str()), (Code::ResourceExhausted, "MESSAGE_TOO_LARGE"), "{ended:?}");
    let unary = dealer.table.sit_out(huge).await.expect_err("the same message, unary");
    assert_eq!((unary.code(), error_info(&unary).metadata.get("max_message_bytes")), (Code::ResourceExhausted, error_info(&ended).metadata.get("max_message_bytes")), "{unary:?}");
    server.stop().await
}
