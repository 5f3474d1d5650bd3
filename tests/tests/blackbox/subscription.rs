//! Subscriptions (ARCHITECTURE.md, Storage): a subscriber sees every event of the session in
//! order: positions dense, none missing, none duplicated, across the catch-up/live switch and
//! while two writers commit concurrently.

use std::time::Duration;

use chipledger_proto::v1 as pb;
use chipledger_tests::{TestServer, all_events, head, header, principal};
use futures::StreamExt;

use crate::race::{send_until_decided, setup};
use crate::scenario::Sent;
use crate::scenario::TABLE;

/// Bound on waiting for the subscriber to reach the head.
const CATCH_UP_BOUND: Duration = Duration::from_secs(60);
const TIPS_PER_WRITER: usize = 12;

/// Collects a subscription until it delivers `until_position` (bounded).
async fn collect(
    mut stream: tonic::Streaming<pb::RecordedEvent>,
    mut until: tokio::sync::watch::Receiver<i64>,
) -> anyhow::Result<Vec<pb::RecordedEvent>> {
    let mut seen: Vec<pb::RecordedEvent> = Vec::new();
    let collecting = async {
        loop {
            let target = *until.borrow_and_update();
            if target > 0 && seen.last().is_some_and(|e| e.global_position >= target) {
                return anyhow::Ok(());
            }
            tokio::select! {
                event = stream.next() => match event {
                    Some(event) => seen.push(event?),
                    None => anyhow::bail!("the subscription ended after {} events", seen.len()),
                },
                changed = until.changed() => changed?,
            }
        }
    };
    tokio::time::timeout(CATCH_UP_BOUND, collecting).await.map_err(|_| anyhow::anyhow!("subscriber stuck"))??;
    Ok(seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn subscription_sees_every_event_in_order_dense_without_gaps_or_duplicates() -> anyhow::Result<()> {
    let server = TestServer::start("subscribe").await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    let (target_sender, target) = tokio::sync::watch::channel(0i64);

    // Live from the very start, before anything is written.
    let live = auditor.ledger.subscribe(pb::SubscribeRequest::default()).await?.into_inner();
    let live = tokio::spawn(collect(live, target.clone()));

    setup(&server).await?;
    let middle = head(&mut auditor).await?.global_position;
    // A second subscriber that starts mid-session: catch up from `middle`, then go live.
    let from_middle = auditor
        .ledger
        .subscribe(pb::SubscribeRequest { after_position: middle, ..Default::default() })
        .await?
        .into_inner();
    let from_middle = tokio::spawn(collect(from_middle, target.clone()));

    // Two dealers write concurrently (commits may finish out of position order).
    let dealer_a = server.client(principal::DEALER).await?;
    let dealer_b = server.client(principal::DEALER_2).await?;
    let mut writes = Vec::new();
    for i in 0..TIPS_PER_WRITER {
        for (client, seat) in [(&dealer_a, 1u32), (&dealer_b, 2u32)] {
            let tip = pb::Tip { header: header(&format!("sub-tip-{seat}-{i}")), table_id: TABLE.into(), seat, amount_cents: 100 };
            writes.push(tokio::spawn(send_until_decided(client.clone(), Sent::Tip(tip))));
        }
    }
    for write in writes {
        write.await?.map_err(anyhow::Error::msg)?.map_err(anyhow::Error::msg)?;
    }
    let final_head = head(&mut auditor).await?.global_position;
    target_sender.send_replace(final_head);

    let expected = all_events(&mut auditor, pb::EventFilter::default()).await?;
    assert_eq!(expected.len() as i64, final_head, "the log holds positions 1..=head");
    let expected_ids: Vec<(i64, String)> = expected.iter().map(|e| (e.global_position, e.event_id.clone())).collect();

    let live = live.await??;
    let live_ids: Vec<(i64, String)> = live.iter().map(|e| (e.global_position, e.event_id.clone())).collect();
    assert_eq!(live_ids, expected_ids, "the live subscriber saw every event once, in order");
    let positions: Vec<i64> = live.iter().map(|e| e.global_position).collect();
    assert_eq!(positions, (1..=final_head).collect::<Vec<_>>(), "dense positions");

    let from_middle = from_middle.await??;
    let middle_ids: Vec<(i64, String)> = from_middle.iter().map(|e| (e.global_position, e.event_id.clone())).collect();
    assert_eq!(middle_ids, expected_ids[middle as usize..].to_vec(), "catch-up then live, no gap at the switch");

    // Past the head nothing was ever recorded: a subscriber that saw a position the log does
    // not have (a restore from an earlier backup) is told so, not left waiting for ever.
    let past = auditor.ledger.subscribe(pb::SubscribeRequest { after_position: final_head + 1, ..Default::default() }).await;
    let refused = past.expect_err("a position past the head");
    assert_eq!(refused.code(), tonic::Code::OutOfRange, "{refused:?}");
    let info = chipledger_tests::error_info(&refused);
    assert_eq!((info.reason.as_str(), info.metadata.get("head_position")), ("POSITION_PAST_HEAD", Some(&final_head.to_string())), "{refused:?}");
    auditor.ledger.subscribe(pb::SubscribeRequest { after_position: final_head, ..Default::default() }).await?;
    server.stop().await
}
