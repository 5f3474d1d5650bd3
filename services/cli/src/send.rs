//! The one path every operator command takes: stamp a command header (a fresh or given command
//! id, the property, the device), send it on its typed RPC, and print the reply or the refusal.
//! Commands are carried as `chipledger.v1.Command` (the `RecordBatch` oneof) so that one
//! function serves all of them.

use std::pin::Pin;

use chipledger_proto::v1 as pb;
use chipledger_proto::{CommandVisitor, WireCommand};
use http::uri::PathAndQuery;
use pb::command::Command as Wire;
use tonic::Status;

use crate::connect::{Client, Refusal, Service, describe_status};
use crate::output::{Output, money};

/// The header of one command.
#[derive(Debug, Clone)]
pub struct Header {
    pub command_id: String,
    pub property_id: String,
    pub device: Option<String>,
    pub reason_note: String,
    /// Second persons' approval tokens (`chipledger approve`).
    pub approvals: Vec<String>,
    /// History recorded as an import (admin or system only): its actor and time.
    pub import: Option<Import>,
}

/// An import's header fields: who acted, and when (`None`: now).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    pub actor_id: String,
    pub occurred_at_unix_ms: Option<i64>,
}

impl Import {
    /// Puts the import's fields in `header` (a batch entry's only in an approval request: the
    /// batch's header carries them when sent).
    pub fn stamp(&self, header: &mut pb::CommandHeader) {
        header.import_actor_id = Some(self.actor_id.clone());
        header.import_occurred_at_unix_ms = self.occurred_at_unix_ms;
    }
}

impl Header {
    pub fn new(command_id: impl Into<String>, property_id: &str) -> Header {
        Header {
            command_id: command_id.into(),
            property_id: property_id.to_string(),
            device: None,
            reason_note: String::new(),
            approvals: Vec::new(),
            import: None,
        }
    }

    fn to_wire(&self) -> pb::CommandHeader {
        let mut header = pb::CommandHeader {
            command_id: self.command_id.clone(),
            property_id: self.property_id.clone(),
            device: self.device.clone(),
            reason_note: self.reason_note.clone(),
            import_actor_id: None,
            import_occurred_at_unix_ms: None,
            approvals: self.approvals.clone(),
        };
        if let Some(import) = &self.import {
            import.stamp(&mut header);
        }
        header
    }
}

/// Sends a command whose header is already stamped on its typed RPC (the API's table names it:
/// `WireCommand::RPC`).
pub async fn send_stamped(client: &mut Client, command: Wire) -> Result<pb::CommandResult, Status> {
    struct OnItsRpc(tonic::client::Grpc<Service>);
    impl CommandVisitor for OnItsRpc {
        type Output = Pin<Box<dyn Future<Output = Result<tonic::Response<pb::CommandResult>, Status>> + Send>>;
        fn visit<T: WireCommand>(self, message: T) -> Self::Output {
            let mut grpc = self.0;
            Box::pin(async move {
                grpc.ready().await.map_err(|error| Status::unavailable(format!("the connection is not ready: {error}")))?;
                let codec = tonic_prost::ProstCodec::<T, pb::CommandResult>::default();
                grpc.unary(tonic::Request::new(message), PathAndQuery::from_static(T::RPC), codec).await
            })
        }
    }
    command.visit(OnItsRpc(client.commands.clone())).await.map(tonic::Response::into_inner)
}

/// Puts `header` into `command`'s header slot.
pub fn stamp(command: &mut Wire, header: &Header) {
    *command.header_mut() = Some(header.to_wire());
}

/// The `RecordBatch` of `commands` under one header (inner headers carry only the device).
pub fn batch_request(header: &Header, commands: Vec<Wire>) -> pb::RecordBatch {
    pb::RecordBatch {
        header: Some(header.to_wire()),
        commands: commands.into_iter().map(|command| pb::Command { command: Some(command) }).collect(),
    }
}

/// Records a batch built by [`batch_request`] atomically.
pub async fn send_batch_request(client: &mut Client, request: pb::RecordBatch) -> Result<pb::BatchResult, Status> {
    client.ledger.record_batch(request).await.map(tonic::Response::into_inner)
}

/// Records many commands atomically with `RecordBatch`.
pub async fn send_batch(client: &mut Client, header: &Header, commands: Vec<Wire>) -> Result<pb::BatchResult, Status> {
    send_batch_request(client, batch_request(header, commands)).await
}

/// Sends an operator command and prints what happened. A refusal is printed with its reason
/// and numbers and makes the process exit 1; other errors propagate as one-line errors.
pub async fn run(client: &mut Client, header: &Header, mut command: Wire, output: Output) -> anyhow::Result<std::process::ExitCode> {
    let kind = command.message_name();
    stamp(&mut command, header);
    crate::approvals::name_approvers(&mut command, &header.approvals)?;
    match send_stamped(client, command).await {
        Ok(result) => {
            print_result(kind, &result, output);
            Ok(std::process::ExitCode::SUCCESS)
        }
        Err(status) => match Refusal::from_status(&status) {
            Some(refusal) => {
                if output.json {
                    println!("{}", refusal_json(kind, &header.command_id, &refusal));
                } else {
                    eprintln!("{kind} refused: {refusal}");
                }
                Ok(std::process::ExitCode::from(1))
            }
            None => anyhow::bail!("{kind}: {}", describe_status(&status)),
        },
    }
}

pub fn refusal_json(kind: &str, command_id: &str, refusal: &Refusal) -> serde_json::Value {
    let numbers: serde_json::Map<String, serde_json::Value> = refusal
        .numbers
        .iter()
        .map(|(name, value)| {
            let value = value.parse::<i64>().map_or_else(|_| serde_json::json!(value), |n| serde_json::json!(n));
            (name.clone(), value)
        })
        .collect();
    serde_json::json!({
        "command": kind,
        "command_id": command_id,
        "refused": true,
        "reason_code": refusal.code,
        "rule_id": refusal.rule_id,
        "detail": refusal.detail,
        "numbers": numbers,
    })
}

pub fn result_json(kind: &str, result: &pb::CommandResult) -> serde_json::Value {
    serde_json::json!({
        "command": kind,
        "command_id": result.command_id,
        "replayed": result.replayed,
        "chain_hash_hex": result.chain_hash_hex,
        "events": result.events.iter().map(|event| serde_json::json!({
            "global_position": event.global_position,
            "stream_id": event.stream_id,
            "stream_version": event.stream_version,
            "event_type": event.event_type,
            "event_id": event.event_id,
        })).collect::<Vec<_>>(),
        "balances": result.balances.iter().map(|balance| serde_json::json!({
            "account": balance.account,
            "balance_cents": balance.balance_cents,
        })).collect::<Vec<_>>(),
    })
}

pub fn print_result(kind: &str, result: &pb::CommandResult, output: Output) {
    if output.json {
        println!("{}", result_json(kind, result));
        return;
    }
    let replayed = if result.replayed { " (replayed: already recorded)" } else { "" };
    println!("{kind} recorded, command id {}{replayed}", result.command_id);
    let mut events = output.table(&["position", "stream", "version", "event"]);
    for event in &result.events {
        events.add_row(vec![
            event.global_position.to_string(),
            event.stream_id.clone(),
            event.stream_version.to_string(),
            event.event_type.clone(),
        ]);
    }
    println!("{events}");
    if !result.balances.is_empty() {
        let mut balances = output.table(&["account", "balance"]);
        for balance in &result.balances {
            balances.add_row(vec![balance.account.clone(), money(balance.balance_cents)]);
        }
        println!("{balances}");
    }
    println!("chain head {}", result.chain_hash_hex);
}
