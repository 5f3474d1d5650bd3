//! The rules' events in the forms the store keeps, in one place: the payload, both ways (the
//! event of the stream's own kind, serde tag `type`, without the `Table`/`Player`/`Cage` wrapper,
//! which the stream the event is stored on gives back), and the projection ops a player event
//! writes in the same append ([`player_ops`]).

use chipledger_rules::{CageEvent, Event, PlayerEvent, StreamId, TableEvent};
use serde::{Deserialize, Deserializer};
use uuid::Uuid;

use crate::event::{EventJson, NewEvent, StoredJson};
use crate::projection::{InlineProjection, ProjectionOp};

/// The payload of an event to append, serialised once from its type (the append writes its
/// RFC 8785 form).
pub fn event_payload(event: &Event) -> EventJson {
    let encoded = match event {
        Event::Table(event) => EventJson::of(event),
        Event::Player(event) => EventJson::of(event),
        Event::Cage(event) => EventJson::of(event),
    };
    encoded.expect("rules events serialise to JSON (no map has a non-string key)")
}

/// An event read back from its stream and stored payload: the inverse of [`event_payload`].
pub fn event_from_payload(stream: &StreamId, payload: &StoredJson) -> Result<Event, serde_json::Error> {
    event_from_json(stream, payload.as_str())
}

/// [`event_from_payload`] of a payload as JSON text (a new event's, [`EventJson::as_str`]).
pub fn event_from_json(stream: &StreamId, json: &str) -> Result<Event, serde_json::Error> {
    let mut text = serde_json::Deserializer::from_str(json);
    let event = event_from(stream, &mut text)?;
    text.end()?;
    Ok(event)
}

fn event_from<'de, D: Deserializer<'de>>(stream: &StreamId, payload: D) -> Result<Event, D::Error> {
    Ok(match stream {
        StreamId::Table(_) => Event::Table(TableEvent::deserialize(payload)?),
        StreamId::Player(_) => Event::Player(PlayerEvent::deserialize(payload)?),
        StreamId::Cage(_) => Event::Cage(CageEvent::deserialize(payload)?),
    })
}

/// The projection writes of one player event, from the typed event: what the server adds to
/// the append it decided ([`crate::AppendRequest::projection_ops`]), and what
/// [`RulesProjection`] gives for an event read back from the log. Table and cage events need no
/// op: their chip effects (seat stacks, tray by denomination, markers receivable) are postings.
pub fn player_ops(player_id: &chipledger_rules::PlayerId, event: &PlayerEvent, event_id: Uuid, ops: &mut Vec<ProjectionOp>) {
    use chipledger_rules::{CashDirection, PlayerReversal};
    let player_id = player_id.as_str().to_owned();
    match event {
        PlayerEvent::CreditLineSet { line_cents, .. } => ops.push(ProjectionOp::CreditLimit { player_id, limit_cents: *line_cents }),
        // The event carries no time: the seat time is its recorded_at in the log.
        PlayerEvent::JoinedTable { table_id, seat, game_key, .. } => ops.push(seated(player_id, table_id, *seat, game_key, event_id)),
        // R-STAKE-6: a house move keeps the session going at the new seat.
        // R-REBUY-1: into another game with chips, the departure from the first comes first.
        PlayerEvent::MovedTable { to_table_id, to_seat, game_key, left_game, .. } => {
            if let Some(left) = left_game {
                ops.push(ProjectionOp::Departed {
                    player_id: player_id.clone(),
                    table_id: left.table_id.as_str().to_owned(),
                    game_key: left.game_key.clone(),
                    amount_left_cents: left.amount_cents,
                    at_ms: left.at_unix_ms,
                });
            }
            ops.push(seated(player_id, to_table_id, *to_seat, game_key, event_id))
        }
        // The departure: the stack and the chips taken off within the refreshment allowance.
        PlayerEvent::LeftTable { table_id, game_key, amount_cents, at_unix_ms, taken_off_cents, .. } => ops.push(ProjectionOp::Departed {
            player_id,
            table_id: table_id.as_str().to_owned(),
            game_key: game_key.clone(),
            amount_left_cents: amount_cents + taken_off_cents,
            at_ms: *at_unix_ms,
        }),
        PlayerEvent::CashTransaction { gaming_day, direction, amount_cents, .. } => {
            let (cash_in_cents, cash_out_cents) = match direction {
                CashDirection::In => (*amount_cents, 0),
                CashDirection::Out => (0, *amount_cents),
            };
            ops.push(ProjectionOp::Cash { player_id, gaming_day: gaming_day.clone(), cash_in_cents, cash_out_cents });
        }
        PlayerEvent::MarkerIssued { amount_cents, .. } => ops.push(ProjectionOp::Marker { player_id, outstanding_delta_cents: *amount_cents }),
        PlayerEvent::MarkerRedeemed { amount_cents, .. } | PlayerEvent::MarkerWrittenOff { amount_cents, .. } => {
            ops.push(ProjectionOp::Marker { player_id, outstanding_delta_cents: -*amount_cents })
        }
        // R-AUDIT-1: a reversed cash transaction comes off that day's total.
        PlayerEvent::Corrected { reversal: PlayerReversal::CashTransaction { gaming_day, direction, amount_cents, .. }, .. } => {
            let (cash_in_cents, cash_out_cents) = match direction {
                CashDirection::In => (-*amount_cents, 0),
                CashDirection::Out => (0, -*amount_cents),
            };
            ops.push(ProjectionOp::Cash { player_id, gaming_day: gaming_day.clone(), cash_in_cents, cash_out_cents });
        }
        // R-AUDIT-1, R-REBUY-1: a departure taken back no longer binds the re-buy.
        PlayerEvent::Corrected { reversal: PlayerReversal::Departure { table_id, at_unix_ms }, .. } => {
            ops.push(ProjectionOp::DepartureReversed { player_id, table_id: table_id.as_str().to_owned(), at_ms: *at_unix_ms })
        }
        // Refused in the rules: never recorded.
        PlayerEvent::Corrected { reversal: PlayerReversal::Record { .. }, .. }
        | PlayerEvent::PocketChipsPlayed { .. }
        | PlayerEvent::IouPaidFromPocket { .. }
        | PlayerEvent::ChipsTakenOffTable { .. }
        | PlayerEvent::ChipsBought { .. }
        | PlayerEvent::ChipsRedeemed { .. }
        | PlayerEvent::PocketCorrected { .. }
        // The departure it binds to again is in the departure log already.
        | PlayerEvent::ReturnCorrected { .. } => {}
    }
}

/// A seat taken (a join or a house move), at the seating event's recorded time (`at_ms: None`).
fn seated(player_id: String, table_id: &chipledger_rules::TableId, seat: u8, game_key: &str, event_id: Uuid) -> ProjectionOp {
    ProjectionOp::Seated { player_id, table_id: table_id.as_str().to_owned(), seat: i32::from(seat), game_key: game_key.to_owned(), at_ms: None, event_id }
}

/// The domain projection of `chipledger_rules` events as stored (a player stream's payload is
/// the serialised `PlayerEvent`, above): for rebuilding the projections from the log
/// ([`crate::Store::verify_projections`]) and for a store handle whose caller does not add the
/// ops itself.
pub struct RulesProjection;

impl InlineProjection for RulesProjection {
    fn project(&self, stream: &str, event: &NewEvent, ops: &mut Vec<ProjectionOp>) {
        let Ok(stream) = stream.parse::<chipledger_rules::StreamId>() else { return };
        let chipledger_rules::StreamId::Player(player_id) = &stream else { return };
        let Ok(chipledger_rules::Event::Player(player_event)) = event_from_json(&stream, event.payload.as_str()) else { return };
        player_ops(player_id, &player_event, event.event_id, ops);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_payload_reads_back_as_the_event_on_its_stream() {
        let table_id = chipledger_rules::TableId::new("T1").unwrap();
        let event = Event::Player(PlayerEvent::JoinedTable {
            table_id,
            seat: 3,
            game_key: "NLHE-1-2".into(),
            amount_cents: 20_000,
        });
        let payload = event_payload(&event);
        let value: serde_json::Value = serde_json::from_str(payload.as_str()).unwrap();
        assert_eq!(value["type"], "JoinedTable", "tagged with the stream's own event type");
        let stream: StreamId = "player-P1".parse().unwrap();
        let stored = StoredJson::from_value(&value);
        assert_eq!(event_from_payload(&stream, &stored).unwrap(), event);
        assert_eq!(event_from_json(&stream, payload.as_str()).unwrap(), event);
        let table: StreamId = "table-T1".parse().unwrap();
        assert!(event_from_payload(&table, &stored).is_err(), "a player event is no table event");
    }
}
