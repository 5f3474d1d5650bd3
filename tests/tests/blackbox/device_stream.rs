//! A dealer's device on one stream (`LedgerService.RecordStream`): commands in, one reply per
//! command out, in the order sent, each judged as its unary RPC would be. A refusal is a reply
//! with its reason, rule and numbers (R-STAKE-3 here) and the stream goes on; a command the
//! dealer's role may not send is refused by the role table inside the stream; a command id sent
//! again is a replay (nothing recorded twice); the log holds exactly what the replies say.

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, all_events, error_info, header, principal};
use tonic::Code;

use crate::scenario::{TABLE, cash_buy_in, stocked_table};

fn entry(command: pb::command::Command) -> pb::Command {
    pb::Command { command: Some(command) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_stream_answers_every_command_in_order_refusals_included() -> anyhow::Result<()> {
    let server = TestServer::start("device-stream").await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    stocked_table(&mut cage, &mut floor, TABLE).await?;
    let before = all_events(&mut floor, pb::EventFilter::default()).await?.len();

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
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-1", TABLE, 1, "P1", 10_000))),
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-2", TABLE, 2, "P2", 3_999))),
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-3", TABLE, 3, "P3", 20_000))),
        entry(pb::command::Command::IssueMarker(marker)),
        entry(pb::command::Command::BuyIn(cash_buy_in("stream-1", TABLE, 1, "P1", 10_000))),
        pb::Command { command: None },
        entry(pb::command::Command::BuyIn(pb::BuyIn {
            header: Some(pb::CommandHeader { reason_note: "a\0b".into(), ..header("stream-7").unwrap_or_default() }),
            ..cash_buy_in("stream-7", TABLE, 4, "P4", 10_000)
        })),
    ];
    let mut dealer = server.client(principal::DEALER).await?;
    let mut replies = dealer.ledger.record_stream(tokio_stream::iter(sent)).await?.into_inner();
    let mut answered = Vec::new();
    while let Some(reply) = replies.message().await? {
        answered.push(reply);
    }
    let ids: Vec<&str> = answered.iter().map(|reply| reply.command_id.as_str()).collect();
    assert_eq!(ids, ["stream-1", "stream-2", "stream-3", "stream-4", "stream-1", "", "stream-7"], "one reply per command, in order");

    let first = answered[0].result.as_ref().expect("the first buy-in is recorded");
    assert_eq!(answered[0].code, 0);
    assert!(!first.replayed);
    // R-STAKE-3: below the minimum, refused with its reason and numbers, as the unary RPC says it.
    let below = tonic::Status::with_details(Code::from(answered[1].code), answered[1].message.clone(), answered[1].status_details.clone().into());
    assert_eq!(below.code(), Code::FailedPrecondition, "{below:?}");
    assert_eq!(error_info(&below).reason, "BUY_IN_BELOW_MINIMUM");
    assert_eq!(error_info(&below).metadata.get("min_buy_in_cents").map(String::as_str), Some("4000"));
    assert!(answered[1].result.is_none());
    // The stream went on after the refusal.
    assert!(answered[2].result.is_some(), "the next command is recorded: {:?}", answered[2]);
    // A dealer may not issue a marker: the role table holds inside the stream.
    assert_eq!(Code::from(answered[3].code), Code::PermissionDenied, "{:?}", answered[3]);
    // The same command id again: the first result, replayed.
    let again = answered[4].result.as_ref().expect("a replay");
    assert!(again.replayed);
    assert_eq!(again.events, first.events, "the replay names the same events");
    assert_eq!(Code::from(answered[5].code), Code::InvalidArgument, "an empty command is bad input");
    // A NUL in a string is bad input inside a stream too (the gate's check, per message).
    assert_eq!(Code::from(answered[6].code), Code::InvalidArgument, "{:?}", answered[6]);
    assert!(answered[6].result.is_none());

    // The log holds exactly the two recorded buy-ins.
    let after = all_events(&mut floor, pb::EventFilter::default()).await?;
    let new: Vec<&pb::RecordedEvent> = after[before..].iter().collect();
    let commands: Vec<String> =
        new.iter().filter_map(|event| event.metadata.as_ref().map(|metadata| metadata.command_id.clone())).collect();
    assert!(commands.iter().all(|id| id == "stream-1" || id == "stream-3"), "{commands:?}");
    assert!(commands.contains(&"stream-1".to_string()) && commands.contains(&"stream-3".to_string()));
    let recorded: usize = first.events.len() + answered[2].result.as_ref().map_or(0, |result| result.events.len());
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
