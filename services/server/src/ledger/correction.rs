//! Corrections (R-AUDIT-1): the rules command that reverses a stored event, by its stream.

use chipledger_proto::CorrectionRequest;
use chipledger_rules::{self as rules, Command, StreamId};
use chipledger_store::NewPosting;
use tonic::Status;

use crate::status;

/// The rules command that reverses a stored event (R-AUDIT-1), by the stream it is on: a table
/// or cage event has its postings reversed; a player event (a record, no postings) is taken back
/// through the [`rules::PlayerReversal`] it allows: a cash transaction or a departure.
pub(super) fn correction_for(
    stream: &str,
    version: i64,
    gaming_day: &str,
    payload: &chipledger_store::StoredJson,
    postings: &[NewPosting],
    event_types: Vec<String>,
    correction: &CorrectionRequest,
) -> Result<Command, Status> {
    let original_postings = || -> Result<Vec<rules::Posting>, Status> {
        postings
            .iter()
            .map(|posting| {
                let account = posting
                    .account
                    .parse::<rules::Account>()
                    .map_err(|_| status::internal("read reversed event", &format!("account {:?}", posting.account)))?;
                Ok(rules::Posting { account, amount_cents: posting.amount_cents })
            })
            .collect()
    };
    let stream_id =
        stream.parse::<StreamId>().map_err(|_| status::internal("read reversed event", &format!("stream {stream:?}")))?;
    let reverses_event_id = correction.reverses_event_id.clone();
    let approved_by = correction.approved_by.clone();
    let reason = correction.reason.clone();
    Ok(match stream_id {
        StreamId::Table(table_id) => Command::Table(rules::TableCommand {
            op: rules::TableOp::Correct {
                reverses_event_id,
                reverses_stream_version: u64::try_from(version).unwrap_or(0),
                reverses_event_types: event_types,
                reverses_gaming_day: gaming_day.to_string(),
                original_postings: original_postings()?,
                approved_by,
                reason,
            },
            table_id,
        }),
        StreamId::Cage(cage_id) => Command::Cage(rules::CageCommand {
            cage_id,
            op: rules::CageOp::Correct {
                reverses_event_id,
                reverses_stream_version: u64::try_from(version).unwrap_or(0),
                reverses_event_types: event_types,
                reverses_gaming_day: gaming_day.to_string(),
                original_postings: original_postings()?,
                approved_by,
                reason,
            },
        }),
        StreamId::Player(player_id) => {
            let stored = chipledger_store::domain::event_from_payload(&StreamId::Player(player_id.clone()), payload)
                .map_err(|error| status::internal("decode reversed event", &error))?;
            let rules::Event::Player(event) = stored else {
                return Err(status::internal("decode reversed event", &"a player stream holds player events"));
            };
            let reversal = match event {
                rules::PlayerEvent::CashTransaction { gaming_day, direction, amount_cents, .. } => {
                    rules::PlayerReversal::CashTransaction { gaming_day, direction, amount_cents, ctr_rearmed: false }
                }
                rules::PlayerEvent::LeftTable { table_id, at_unix_ms, .. } => {
                    rules::PlayerReversal::Departure { table_id, at_unix_ms }
                }
                // The rules refuse every other record, each naming its rule (R-MARK-1, R-AUDIT-1).
                other => rules::PlayerReversal::Record { event_type: other.event_type().to_string() },
            };
            Command::Player(rules::PlayerCommand {
                player_id,
                op: rules::PlayerOp::Correct { reverses_event_id, approved_by, reason, reversal },
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> CorrectionRequest {
        CorrectionRequest {
            reverses_event_id: "0190f3a0-0000-7000-8000-000000000001".to_string(),
            approved_by: "floor-2".to_string(),
            reason: "keyed twice".to_string(),
        }
    }

    fn player_payload(event: &rules::PlayerEvent) -> chipledger_store::StoredJson {
        chipledger_store::StoredJson::from_value(&serde_json::to_value(event).expect("player event serialises"))
    }

    #[test]
    fn a_cage_event_is_reversed_by_its_postings() {
        let postings = vec![
            NewPosting { account: "cage/main/cash".to_string(), amount_cents: 5_000 },
            NewPosting { account: "player/p1/pocket".to_string(), amount_cents: -5_000 },
        ];
        let command = correction_for("cage-main", 1, "2026-11-28", &chipledger_store::StoredJson::from_value(&serde_json::json!({})), &postings, Vec::new(), &request()).expect("maps");
        let Command::Cage(rules::CageCommand { cage_id, op: rules::CageOp::Correct { original_postings, approved_by, .. } }) =
            command
        else {
            panic!("expected a cage correction, got {command:?}");
        };
        assert_eq!(cage_id.as_str(), "main");
        assert_eq!(approved_by, "floor-2");
        let keys: Vec<(String, i64)> = original_postings.iter().map(|p| (p.account.key(), p.amount_cents)).collect();
        assert_eq!(keys, vec![("cage/main/cash".to_string(), 5_000), ("player/p1/pocket".to_string(), -5_000)]);
    }

    #[test]
    fn a_cash_transaction_is_taken_back_on_its_day_and_direction() {
        let event = rules::PlayerEvent::CashTransaction {
            gaming_day: "2026-11-28".to_string(),
            direction: rules::CashDirection::Out,
            amount_cents: 1_250_000,
            mtl_entry: true,
            ctr_required: true,
            day_total_cents: 1_250_000,
        };
        let command = correction_for("player-p1", 1, "2026-11-28", &player_payload(&event), &[], Vec::new(), &request()).expect("maps");
        let Command::Player(rules::PlayerCommand { player_id, op: rules::PlayerOp::Correct { reversal, reverses_event_id, .. } }) =
            command
        else {
            panic!("expected a player correction, got {command:?}");
        };
        assert_eq!(player_id.as_str(), "p1");
        assert_eq!(reverses_event_id, request().reverses_event_id);
        assert_eq!(
            reversal,
            rules::PlayerReversal::CashTransaction {
                gaming_day: "2026-11-28".to_string(),
                direction: rules::CashDirection::Out,
                amount_cents: 1_250_000,
                ctr_rearmed: false,
            }
        );
    }

    #[test]
    fn a_departure_is_taken_back_by_table_and_time() {
        let table_id = rules::TableId::new("t7").expect("table id");
        let event = rules::PlayerEvent::LeftTable {
            table_id: table_id.clone(),
            seat: 3,
            game_key: "nlhe-1-2".to_string(),
            amount_cents: 40_000,
            at_unix_ms: 1_790_000_000_123,
            wait: None,
            taken_off_cents: 0,
        };
        let command = correction_for("player-p1", 1, "2026-11-28", &player_payload(&event), &[], Vec::new(), &request()).expect("maps");
        let Command::Player(rules::PlayerCommand { op: rules::PlayerOp::Correct { reversal, .. }, .. }) = command else {
            panic!("expected a player correction, got {command:?}");
        };
        assert_eq!(reversal, rules::PlayerReversal::Departure { table_id, at_unix_ms: 1_790_000_000_123 });
    }

    #[test]
    fn other_player_events_go_to_the_rules_as_records_they_refuse() {
        let event = rules::PlayerEvent::JoinedTable {
            table_id: rules::TableId::new("t7").expect("table id"),
            seat: 3,
            game_key: "nlhe-1-2".to_string(),
            amount_cents: 40_000,
        };
        let command = correction_for("player-p1", 1, "2026-11-28", &player_payload(&event), &[], Vec::new(), &request()).expect("maps");
        let Command::Player(rules::PlayerCommand { op: rules::PlayerOp::Correct { reversal, .. }, .. }) = command else {
            panic!("expected a player correction, got {command:?}");
        };
        assert_eq!(reversal, rules::PlayerReversal::Record { event_type: "JoinedTable".to_string() });
    }
}
