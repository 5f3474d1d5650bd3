//! `chipledger follow`: the log as it is written (`LedgerService.Subscribe`), one line per event
//! as it arrives, until interrupted. The subscription never skips or repeats an event (the
//! server's catch-up then live switch), so following from a position and then from the last
//! position printed sees every event once. Ctrl-C ends it with exit 0; a closed pipe ends it
//! quietly ([`crate::output`]).

use std::process::ExitCode;

use anyhow::bail;
use chipledger_proto::v1 as pb;
use chipledger_rules::{CageId, PlayerId, StreamId, TableId};
use clap::Args;

use crate::audit::event_json;
use crate::clock::PropertyClock;
use crate::connect::{Client, rpc_error};
use crate::output::{Output, money};

#[derive(Debug, Args)]
pub struct FollowArgs {
    /// First global position to print (default: only events recorded from now on).
    #[arg(long)]
    from_position: Option<i64>,
    /// Only this table's stream (its seats, hands, tray).
    #[arg(long)]
    table: Vec<String>,
    /// Only this cage's stream.
    #[arg(long)]
    cage: Vec<String>,
    /// Only this player's own stream (pocket, sessions, markers).
    #[arg(long)]
    player: Vec<String>,
    /// Only these event types (comma-separated, e.g. BoughtIn,CashedOut).
    #[arg(long, value_delimiter = ',')]
    types: Vec<String>,
}

impl FollowArgs {
    /// The stream keys the filters name (the rules' own stream naming).
    fn streams(&self) -> anyhow::Result<Vec<String>> {
        let bad = |what: &str, id: &str| anyhow::anyhow!("--{what} {id:?}: expected {}", chipledger_rules::ID_FORM);
        let mut streams = Vec::new();
        for id in &self.table {
            streams.push(StreamId::Table(TableId::new(id.as_str()).map_err(|_| bad("table", id))?).key());
        }
        for id in &self.cage {
            streams.push(StreamId::Cage(CageId::new(id.as_str()).map_err(|_| bad("cage", id))?).key());
        }
        for id in &self.player {
            streams.push(StreamId::Player(PlayerId::new(id.as_str()).map_err(|_| bad("player", id))?).key());
        }
        Ok(streams)
    }
}

/// The last position of the log, as the position a current balance is read at (readable by
/// every role that may subscribe, unlike the chain digest).
async fn head_position(client: &mut Client) -> anyhow::Result<i64> {
    let reply = client
        .ledger
        .get_balance(pb::GetBalanceRequest {
            property_id: client.property_id.clone(),
            account: "house/bank".to_string(),
            as_of: None,
        })
        .await
        .map_err(|status| rpc_error("reading the head of the log", &status))?
        .into_inner();
    Ok(reply.global_position)
}

/// One event as a line: position, time, stream, type, who, and the postings in money.
pub fn event_line(event: &pb::RecordedEvent, clock: &PropertyClock) -> String {
    let metadata = event.metadata.clone().unwrap_or_default();
    let postings: Vec<String> =
        event.postings.iter().map(|p| format!("{} {}{}", p.account, if p.amount_cents >= 0 { "+" } else { "" }, money(p.amount_cents))).collect();
    let mut line = format!(
        "{} {} {} {} by {} ({})",
        event.global_position,
        clock.show(event.recorded_at_unix_ms),
        event.stream_id,
        event.event_type,
        metadata.actor_id,
        crate::words::role(metadata.actor_role)
    );
    if !postings.is_empty() {
        line.push_str(": ");
        line.push_str(&postings.join(", "));
    }
    line
}

pub async fn follow(client: &mut Client, args: FollowArgs, output: Output) -> anyhow::Result<ExitCode> {
    let streams = args.streams()?;
    let clock = PropertyClock::fetch(client).await?;
    let after_position = match args.from_position {
        Some(position) if position < 1 => bail!("--from-position {position}: expected a global position of 1 or more"),
        Some(position) => position - 1,
        None => head_position(client).await?,
    };
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    let mut after_position = after_position;
    let mut pause = std::time::Duration::from_millis(200);
    let mut first = true;
    // A subscription that ends (the server restarting, a connection lost) is opened again after
    // the last position printed, so nothing is missed or printed twice (the crash pass: follow
    // stopped at the first restart, without saying where to go on from).
    loop {
        let subscribed = client
            .ledger
            .subscribe(pb::SubscribeRequest {
                property_id: client.property_id.clone(),
                after_position,
                stream_ids: streams.clone(),
                event_types: args.types.clone(),
            })
            .await;
        let mut events = match subscribed {
            Ok(events) => events.into_inner(),
            Err(status) if first || !resumable(&status) => return Err(rpc_error("following the log", &status)),
            Err(status) => {
                eprintln!("the log is not reachable ({}): trying again after position {after_position}", status.message());
                tokio::select! {
                    _ = &mut interrupted => return Ok(ExitCode::SUCCESS),
                    () = tokio::time::sleep(pause) => {}
                }
                pause = (pause * 2).min(std::time::Duration::from_secs(5));
                continue;
            }
        };
        // The subscription is open from here on: nothing recorded after this line is missed.
        if first {
            eprintln!("following the log after position {after_position} (times in {}; Ctrl-C to stop)", clock.zone_name);
        } else {
            eprintln!("following again after position {after_position}");
        }
        first = false;
        loop {
            let next = tokio::select! {
                _ = &mut interrupted => return Ok(ExitCode::SUCCESS),
                next = events.message() => next,
            };
            match next {
                Ok(Some(event)) => {
                    after_position = event.global_position;
                    pause = std::time::Duration::from_millis(200);
                    if output.json {
                        println!("{}", event_json(&event));
                    } else {
                        println!("{}", event_line(&event, &clock));
                    }
                }
                Ok(None) => {
                    eprintln!("the server ended the subscription (shutting down?) after position {after_position}: following again");
                    break;
                }
                Err(status) if resumable(&status) => {
                    eprintln!("the subscription broke ({}) after position {after_position}: following again", status.message());
                    break;
                }
                Err(status) => return Err(rpc_error("following the log", &status)),
            }
        }
    }
}

/// A subscription's end that following again can get past: the server or the connection gone,
/// not a refusal of the caller or the request.
fn resumable(status: &tonic::Status) -> bool {
    matches!(status.code(), tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Internal | tonic::Code::Cancelled | tonic::Code::Aborted | tonic::Code::DeadlineExceeded)
}
