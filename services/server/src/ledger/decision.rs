//! One submission decided: the events per stream with their postings, the projection ops of
//! the player events, the states after them, and the reply without positions; then the append
//! that records it. A refusal is decided here too ([`Refused`]).

use std::collections::HashMap;

use chipledger_proto::v1 as pb;
use chipledger_proto::{Decidable, Envelope, entry_command_id};
use chipledger_rules::{self as rules, Command, CommandContext, Event, Snapshot, StreamId};
use chipledger_store::{AppendRequest, CommandRecord, EventMetadata, ExpectedVersion, NewEvent, NewPosting, StreamAppend};
use prost::Message;
use tonic::Status;
use uuid::Uuid;

use crate::{access, status, telemetry};
use super::cache::StreamState;
use super::reply::{StoredReply, StreamLayout};

/// Stored payload format of every event this server writes.
pub(super) const SCHEMA_VERSION: i16 = 1;

/// One command of a submission.
pub(super) struct Entry {
    pub(super) rpc: &'static str,
    pub(super) decidable: Decidable,
    /// Where and why, as the entry's own header says (a batch entry's); else the envelope's.
    pub(super) device: Option<String>,
    pub(super) reason_note: Option<String>,
}

pub(super) fn snapshot_of<'a>(
    states: &'a HashMap<StreamId, StreamState>,
    streams: &'a [StreamId],
    aml: rules::AmlThresholds,
) -> Snapshot<'a> {
    let mut snapshot = Snapshot::new();
    snapshot.aml = aml;
    for stream in streams {
        match (stream, states.get(stream)) {
            (StreamId::Table(id), Some(StreamState::Table(state))) => snapshot = snapshot.with_table(id, state),
            (StreamId::Player(id), Some(StreamState::Player(state))) => snapshot = snapshot.with_player(id, state),
            (StreamId::Cage(id), Some(StreamState::Cage(state))) => snapshot = snapshot.with_cage(id, state),
            _ => {}
        }
    }
    snapshot
}

/// A refusal as decided: which command, why, what it touched, whom it was about.
pub(super) struct Refused {
    pub(super) index: usize,
    pub(super) rejection: rules::Rejection,
    pub(super) streams: Vec<String>,
    /// What was attempted, as the refusal keeps it ([`super::attempted`]).
    pub(super) request: serde_json::Value,
    pub(super) player_id: Option<String>,
}

/// The patron a refused command was about: the player stream it touches, else the player at
/// the table seat it names (from the state it was decided on), else none.
pub(super) fn refused_player(command: &Command, states: &HashMap<StreamId, StreamState>) -> Option<String> {
    let streams = command.streams();
    if let Some(player) = streams.iter().find_map(|stream| match stream {
        StreamId::Player(player) => Some(player.as_str().to_owned()),
        _ => None,
    }) {
        return Some(player);
    }
    let value = serde_json::to_value(command).ok()?;
    let op = value.pointer("/Table/op").or_else(|| value.pointer("/Cage/op"))?;
    if let Some(player) = op.get("player_id").and_then(serde_json::Value::as_str) {
        return Some(player.to_owned());
    }
    let seat = u8::try_from(op.get("seat")?.as_u64()?).ok()?;
    streams.iter().find_map(|stream| match states.get(stream) {
        Some(StreamState::Table(table)) => table.seat(seat).map(|occupant| occupant.player_id.as_str().to_owned()),
        _ => None,
    })
}

/// Events decided for a submission, per stream, and the reply without positions.
#[derive(Default)]
pub(super) struct Decision {
    /// Streams in the order first touched (the append's request order).
    pub(super) order: Vec<StreamId>,
    pub(super) base_versions: HashMap<StreamId, i64>,
    pub(super) states: HashMap<StreamId, StreamState>,
    pub(super) events: HashMap<StreamId, Vec<NewEvent>>,
    /// Player sessions, departures, daily cash and credit lines, kept in the append transaction
    /// (R-REBUY-1, R-AUDIT-4, R-MARK-1): the writes of the typed player events, in event order.
    pub(super) projection_ops: Vec<chipledger_store::ProjectionOp>,
    pub(super) event_types: Vec<&'static str>,
    pub(super) results: Vec<pb::CommandResult>,
    /// The principal of an import, recorded beside the actor it names (R-AUDIT-2).
    pub(super) imported_by: Option<String>,
    /// R-REBUY-1: the new patron ids this submission asked the store about, with the known id in
    /// another case if any: asked once per submission (a hand's batch seats and buys in each
    /// patron: two questions each had been asked).
    pub(super) case_checked: HashMap<rules::PlayerId, Option<String>>,
}

impl Decision {
    pub(super) fn record(
        &mut self,
        index: usize,
        entry: &Entry,
        envelope: &Envelope,
        context: &CommandContext,
        events: Vec<(StreamId, Event)>,
    ) -> Result<(), Status> {
        let command_id = entry_command_id(&envelope.command_id, index);
        let mut result = pb::CommandResult { command_id: command_id.clone(), ..Default::default() };
        let mut touched_accounts: Vec<rules::Account> = Vec::new();
        for (stream, event) in events {
            let state = self
                .states
                .remove(&stream)
                .ok_or_else(|| status::internal("decide", &format!("event for unloaded stream {stream}")))?;
            let config_version = state.as_table().and_then(|table| table.config.as_ref()).map_or(0, |c| i64::from(c.version));
            let postings: Vec<NewPosting> = event
                .postings()
                .iter()
                .map(|posting| {
                    if !touched_accounts.contains(&posting.account) {
                        touched_accounts.push(posting.account.clone());
                    }
                    NewPosting { account: posting.account.key(), amount_cents: posting.amount_cents }
                })
                .collect();
            let event_id = Uuid::now_v7();
            let new_event = NewEvent {
                event_id,
                event_type: event.event_type().to_string(),
                schema_version: SCHEMA_VERSION,
                payload: chipledger_store::domain::event_payload(&event),
                metadata: EventMetadata {
                    actor_id: context.actor.id.clone(),
                    actor_role: access::role_name(&context.actor.role).to_string(),
                    device: entry.device.clone().or_else(|| envelope.device.clone()),
                    command_id: Some(command_id.clone()),
                    correlation_id: Some(envelope.command_id.clone()),
                    causation_id: None,
                    trace_id: Some(telemetry::current_trace_id()).filter(|id| !id.is_empty()),
                    gaming_day: context.gaming_day.clone(),
                    config_version,
                    reason_code: entry.reason_note.clone().or_else(|| Some(envelope.reason_note.clone()).filter(|note| !note.is_empty())),
                    imported_by: self.imported_by.clone(),
                    occurred_at_unix_ms: self.imported_by.as_ref().and(envelope.import_occurred_at_unix_ms),
                },
                postings,
            };
            if let (StreamId::Player(player_id), Event::Player(player_event)) = (&stream, &event) {
                chipledger_store::domain::player_ops(player_id, player_event, event_id, &mut self.projection_ops);
            }
            self.event_types.push(event.event_type());
            result.events.push(pb::AppendedEvent {
                global_position: 0,
                stream_id: stream.key(),
                stream_version: 0,
                event_type: event.event_type().to_string(),
                event_id: event_id.to_string(),
            });
            self.events.entry(stream.clone()).or_default().push(new_event);
            let state = state.evolve_decided(&event)?;
            self.states.insert(stream, state);
        }
        // A table's balances are listed once per command, however many of its accounts it touched.
        let mut tables: HashMap<rules::TableId, Vec<rules::Posting>> = HashMap::new();
        result.balances = touched_accounts
            .iter()
            .filter_map(|account| self.balance_of(account, &mut tables).map(|balance_cents| pb::AccountBalance {
                account: account.key(),
                balance_cents,
            }))
            .collect();
        self.results.push(result);
        Ok(())
    }

    /// Balance after the decision of an account whose stream state holds it (table accounts,
    /// pockets, cage inventory). House and IOU accounts are answered by `GetBalance`.
    /// `tables` keeps the balances of the tables listed so far.
    fn balance_of(&self, account: &rules::Account, tables: &mut HashMap<rules::TableId, Vec<rules::Posting>>) -> Option<i64> {
        match account {
            rules::Account::Pocket { player_id } => match self.states.get(&StreamId::Player(player_id.clone()))? {
                StreamState::Player(player) => Some(player.pocket_cents),
                _ => None,
            },
            rules::Account::CageChips { cage_id, denomination_cents } => {
                match self.states.get(&StreamId::Cage(cage_id.clone()))? {
                    StreamState::Cage(cage) => Some(
                        cage.chips
                            .iter()
                            .find(|chip| chip.denomination_cents == *denomination_cents)
                            .map_or(0, |chip| chip.value_cents()),
                    ),
                    _ => None,
                }
            }
            rules::Account::CageCash { cage_id } => match self.states.get(&StreamId::Cage(cage_id.clone()))? {
                StreamState::Cage(cage) => Some(cage.cash_cents),
                _ => None,
            },
            rules::Account::CageMarkers { cage_id } => match self.states.get(&StreamId::Cage(cage_id.clone()))? {
                StreamState::Cage(cage) => Some(cage.markers_receivable_cents),
                _ => None,
            },
            _ => {
                let table_id = account.table_id()?;
                let balances = match tables.entry(table_id.clone()) {
                    std::collections::hash_map::Entry::Occupied(listed) => listed.into_mut(),
                    std::collections::hash_map::Entry::Vacant(unlisted) => match self.states.get(&StreamId::Table(table_id.clone()))? {
                        StreamState::Table(table) => unlisted.insert(table.balances()),
                        _ => return None,
                    },
                };
                Some(balances.iter().find(|posting| &posting.account == account).map_or(0, |posting| posting.amount_cents))
            }
        }
    }

    /// The append: every loaded stream with its expected version (streams that only guarded a
    /// decision are locked and checked, not written). The events, projection ops and results
    /// move into it (a decision is appended once; another attempt decides anew).
    pub(super) fn request(&mut self, property: &str, envelope: &Envelope, request_hash: [u8; 32]) -> Result<AppendRequest, Status> {
        let mut layout = Vec::with_capacity(self.order.len());
        let mut streams = Vec::with_capacity(self.order.len());
        for stream in &self.order {
            let events = self.events.remove(stream).unwrap_or_default();
            let base = self.base_versions.get(stream).copied().unwrap_or(0);
            layout.push(StreamLayout {
                stream: stream.key(),
                event_ids: events.iter().map(|event| event.event_id.as_bytes().to_vec()).collect(),
            });
            streams.push(StreamAppend {
                stream: stream.key(),
                expected_version: if base == 0 { ExpectedVersion::NoStream } else { ExpectedVersion::Exact(base) },
                events,
            });
        }
        let result = pb::BatchResult { command_id: envelope.command_id.clone(), results: std::mem::take(&mut self.results), ..Default::default() };
        let reply = StoredReply { layout, result: Some(result) }.encode_to_vec();
        Ok(AppendRequest {
            property: property.to_string(),
            decided: Default::default(),
            commands: vec![CommandRecord { command_id: envelope.command_id.clone(), request_hash }],
            streams,
            reply,
            projection_ops: std::mem::take(&mut self.projection_ops),
        })
    }
}
