//! The rules' events as the log stores them, both ways, in one place: the payload is the event
//! of the stream's own kind (serde tag `type`), without the `Table`/`Player`/`Cage` wrapper, which
//! the stream the event is stored on gives back.

use chipledger_rules::{CageEvent, Event, PlayerEvent, StreamId, TableEvent};
use serde::{Deserialize, Deserializer};

use crate::event::{EventJson, StoredJson};

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
