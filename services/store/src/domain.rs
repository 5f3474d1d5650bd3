//! The rules' events as the log stores them, both ways, in one place: the payload is the event
//! of the stream's own kind (serde tag `type`), without the `Table`/`Player`/`Cage` wrapper, which
//! the stream the event is stored on gives back.

use chipledger_rules::{CageEvent, Event, PlayerEvent, StreamId, TableEvent};
use serde::{Deserialize, Deserializer};

use crate::event::StoredJson;

/// The stored payload of an event.
pub fn event_payload(event: &Event) -> serde_json::Value {
    let encoded = match event {
        Event::Table(event) => serde_json::to_value(event),
        Event::Player(event) => serde_json::to_value(event),
        Event::Cage(event) => serde_json::to_value(event),
    };
    encoded.expect("rules events serialise to JSON (no map has a non-string key)")
}

/// An event read back from its stream and stored payload: the inverse of [`event_payload`].
pub fn event_from_payload(stream: &StreamId, payload: &StoredJson) -> Result<Event, serde_json::Error> {
    let mut text = serde_json::Deserializer::from_str(payload.as_str());
    let event = event_from(stream, &mut text)?;
    text.end()?;
    Ok(event)
}

/// [`event_from_payload`] of a payload not read from the log (a new event's).
pub fn event_from_value(stream: &StreamId, payload: &serde_json::Value) -> Result<Event, serde_json::Error> {
    event_from(stream, payload)
}

fn event_from<'de, D: Deserializer<'de>>(stream: &StreamId, payload: D) -> Result<Event, D::Error> {
    Ok(match stream {
        StreamId::Table(_) => Event::Table(TableEvent::deserialize(payload)?),
        StreamId::Player(_) => Event::Player(PlayerEvent::deserialize(payload)?),
        StreamId::Cage(_) => Event::Cage(CageEvent::deserialize(payload)?),
    })
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
        assert_eq!(payload["type"], "JoinedTable", "tagged with the stream's own event type");
        let stream: StreamId = "player-P1".parse().unwrap();
        let stored = StoredJson::from_value(&payload);
        assert_eq!(event_from_payload(&stream, &stored).unwrap(), event);
        assert_eq!(event_from_value(&stream, &payload).unwrap(), event);
        let table: StreamId = "table-T1".parse().unwrap();
        assert!(event_from_payload(&table, &stored).is_err(), "a player event is no table event");
    }
}
