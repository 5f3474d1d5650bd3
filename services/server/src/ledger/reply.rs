//! What a command answers, and how the answer is stored so that a replay of the same command
//! id answers the same: the reply of an append (protobuf, positions filled in from the
//! outcome), a refusal's status, and store failures as API statuses.

use std::collections::HashMap;

use chipledger_proto::v1 as pb;
use chipledger_store::{AppendOutcome, StoreError};
use prost::Message;
use serde::{Deserialize, Serialize};
use tonic::Status;
use uuid::Uuid;

use crate::status;

/// What the reply needs that only the append can tell (positions), kept with the command so
/// that a replay rebuilds the same answer: the order events were sent in, and the reply with
/// zero positions. Stored once per append as these protobuf bytes (chained by their SHA-256).
#[derive(Clone, PartialEq, Message)]
pub(super) struct StoredReply {
    /// Streams in request order, each with its event ids in order.
    #[prost(message, repeated, tag = "1")]
    pub(super) layout: Vec<StreamLayout>,
    /// Positions and versions still zero.
    #[prost(message, optional, tag = "2")]
    pub(super) result: Option<pb::BatchResult>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct StreamLayout {
    #[prost(string, tag = "1")]
    pub(super) stream: String,
    /// The events' ids, 16 bytes each.
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub(super) event_ids: Vec<Vec<u8>>,
}

/// The stored reply of appends recorded before it was protobuf: JSON with the result as hex.
/// Read for replays of those commands; never written.
#[derive(Deserialize)]
pub(super) struct JsonStoredReply {
    pub(super) layout: Vec<(String, Vec<Uuid>)>,
    pub(super) result_hex: String,
}

impl StoredReply {
    pub(super) fn decode_stored(bytes: &[u8]) -> Result<StoredReply, String> {
        // A JSON object starts with '{' (0x7b): as protobuf that would be field 15 as a group,
        // which this message never holds.
        if bytes.first() != Some(&b'{') {
            return StoredReply::decode(bytes).map_err(|error| error.to_string());
        }
        let json: JsonStoredReply = serde_json::from_slice(bytes).map_err(|error| error.to_string())?;
        let result = hex::decode(&json.result_hex).map_err(|error| error.to_string())?;
        Ok(StoredReply {
            layout: json
                .layout
                .into_iter()
                .map(|(stream, ids)| StreamLayout { stream, event_ids: ids.iter().map(|id| id.as_bytes().to_vec()).collect() })
                .collect(),
            result: Some(pb::BatchResult::decode(result.as_slice()).map_err(|error| error.to_string())?),
        })
    }
}

/// A store failure as the API reports it.
pub fn store_status(context: &str, error: StoreError) -> Status {
    match error {
        StoreError::IdempotencyConflict { command_id } => status::command_id_reused(&command_id),
        StoreError::SchemaMismatch { .. } | StoreError::OutsideGamingDay { .. } => status::unavailable(context, &error),
        StoreError::VersionConflict { stream, expected, .. } => status::version_conflict(&stream, expected, 1),
        StoreError::Contention(_) => status::version_conflict("(several)", -1, 1),
        StoreError::InvalidRequest(message) => status::invalid_field("request", message),
        StoreError::ImportOnClosedDay { gaming_day, closed_through } => status::import_on_closed_day(&gaming_day, &closed_through),
        StoreError::AppendSize { what, count, max } => status::append_too_large(what, count, max),
        StoreError::NoPartition { recorded_at_micros, partitions_until_micros } => {
            status::partition_missing(recorded_at_micros, partitions_until_micros)
        }
        StoreError::Archived { position, archived_through } => status::position_archived(position, archived_through),
        StoreError::ArchiveUnproven(problem) => status::archive_not_proven(&problem),
        StoreError::Database(error) if is_unstorable_text(&error) => status::invalid_field(
            "request",
            "a string holds a character PostgreSQL cannot store (NUL or an invalid escape)",
        ),
        // 53100 disk_full: said so, not taken for an outage (the crash pass: every write answered
        // DATABASE_UNAVAILABLE, and the operator looked for a network fault).
        StoreError::Database(sqlx::Error::Database(ref database)) if database.code().as_deref() == Some("53100") => {
            status::out_of_space(context, &error)
        }
        StoreError::Database(error) if is_connection_failure(&error) || is_resource_failure(&error) => status::unavailable(context, &error),
        StoreError::Database(error) if is_lock_timeout(&error) => status::lock_timeout(context, &error),
        // Unbalanced postings or a negative balance refused by PostgreSQL: the rules core let
        // through what the database's own invariants (R-UNIT-3, R-UNIT-4) refuse. Nothing was
        // written; it is a bug to investigate, not a user error.
        other => status::internal(context, &other),
    }
}

/// The failure of an append whose transaction may or may not have committed: the connection
/// went away after the statements were sent (the COMMIT may have reached the server). Refusals
/// the store knows to be before any write keep their own answers.
pub(super) fn append_status(command_id: &str, error: StoreError) -> Status {
    match error {
        StoreError::Database(sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) => {
            // No connection was ever handed out: nothing was sent.
            status::unavailable("append", &error)
        }
        StoreError::Database(ref database) if is_connection_failure(database) => {
            status::outcome_unknown(command_id, &error)
        }
        other => store_status("append", other),
    }
}

/// A SQLSTATE PostgreSQL gives for text it cannot hold (22021 character_not_in_repertoire,
/// 22P05 untranslatable_character, e.g. a NUL): the request's fault, not the server's.
pub(super) fn is_unstorable_text(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(database) if matches!(database.code().as_deref(), Some("22021" | "22P05")))
}

/// The database went away or is not accepting connections: I/O, TLS or protocol errors, the
/// pool giving up, and the SQLSTATEs of connection loss (08*) and of a server shutting down or
/// starting (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now).
pub(super) fn is_connection_failure(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(database) => database
            .code()
            .is_some_and(|code| code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03")),
        _ => false,
    }
}

/// The database could not do it for want of resources: SQLSTATE class 53 (disk full, out of
/// memory, too many connections) or 58 (I/O error). The statement failed and its transaction
/// with it: nothing was written, the command may be sent again (the operations pass: a full
/// disk answered INTERNAL to every append, which a client cannot tell is safe to resend).
pub(super) fn is_resource_failure(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(database) if database.code().is_some_and(|code| code.starts_with("53") || code.starts_with("58")))
}

/// A lock the statement needed was held by another session past the store's lock timeout
/// (SQLSTATE 55P03 lock_not_available): the statement failed and its transaction with it.
pub(super) fn is_lock_timeout(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(database) if database.code().as_deref() == Some("55P03"))
}

/// Where the index of the refused command of a batch goes in a refusal's metadata.
pub(super) const COMMAND_INDEX_HEADER: &str = "x-chipledger-command-index";

/// The answer of a refusal as stored with it (the store keeps the bytes unchanged): gRPC code,
/// message, the details (`grpc-status-details-bin`) and the command index, as JSON.
#[derive(Serialize, Deserialize)]
pub(super) struct StoredStatus {
    pub(super) code: i32,
    pub(super) message: String,
    pub(super) details_hex: String,
    pub(super) command_index: Option<String>,
}

pub(super) fn status_to_reply(status: &Status) -> Vec<u8> {
    let stored = StoredStatus {
        code: status.code() as i32,
        message: status.message().to_owned(),
        details_hex: hex::encode(status.details()),
        command_index: status.metadata().get(COMMAND_INDEX_HEADER).and_then(|value| value.to_str().ok()).map(str::to_owned),
    };
    serde_json::to_vec(&stored).expect("a status serialises")
}

pub(super) fn status_from_reply(reply: &[u8]) -> Result<Status, Status> {
    let stored: StoredStatus = serde_json::from_slice(reply).map_err(|error| status::internal("decode refusal", &error))?;
    let details = hex::decode(&stored.details_hex).map_err(|error| status::internal("decode refusal", &error))?;
    let mut status = Status::with_details(tonic::Code::from(stored.code), stored.message, details.into());
    if let Some(index) = stored.command_index.and_then(|index| index.parse().ok()) {
        status.metadata_mut().insert(COMMAND_INDEX_HEADER, index);
    }
    Ok(status)
}

/// Where the stored outcome and layout place each event of an append: event id -> (position,
/// stream version). A layout that does not fill the outcome's positions, or names a stream the
/// outcome has no version of, is a stored outcome changed behind the service (DATA_LOSS).
pub(super) fn placements(outcome: &AppendOutcome) -> Result<(StoredReply, HashMap<Uuid, (i64, i64)>), Status> {
    let stored = StoredReply::decode_stored(&outcome.reply).map_err(|error| status::internal("decode reply", &error))?;
    let mut placed: HashMap<Uuid, (i64, i64)> = HashMap::new();
    let mut position = outcome.first_position;
    for StreamLayout { stream, event_ids } in &stored.layout {
        let new_version = outcome
            .stream_versions
            .iter()
            .find(|(key, _)| key == stream)
            .map(|(_, version)| *version)
            .ok_or_else(|| status::stored_outcome_disagrees(&format!("no version for {stream}")))?;
        let first_version = new_version - event_ids.len() as i64 + 1;
        for (offset, event_id) in event_ids.iter().enumerate() {
            let event_id = Uuid::from_slice(event_id).map_err(|error| status::internal("decode reply", &error))?;
            placed.insert(event_id, (position, first_version + offset as i64));
            position += 1;
        }
    }
    if position != outcome.last_position + 1 {
        return Err(status::stored_outcome_disagrees(&format!(
            "positions {}..={} for {} events",
            outcome.first_position,
            outcome.last_position,
            position - outcome.first_position
        )));
    }
    Ok((stored, placed))
}

/// The reply of an append (first time or replay): positions from the outcome and the layout.
pub(super) fn rebuild_reply(outcome: &AppendOutcome) -> Result<pb::BatchResult, Status> {
    let (stored, placed) = placements(outcome)?;
    let mut result = stored.result.unwrap_or_default();
    let placed: HashMap<String, (i64, i64)> = placed.into_iter().map(|(id, at)| (id.to_string(), at)).collect();
    for command in &mut result.results {
        for event in &mut command.events {
            if let Some((position, version)) = placed.get(&event.event_id) {
                event.global_position = *position;
                event.stream_version = *version;
            }
        }
        command.replayed = outcome.replayed;
        command.chain_hash_hex = hex::encode(outcome.last_hash);
    }
    result.replayed = outcome.replayed;
    result.chain_hash_hex = hex::encode(outcome.last_hash);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 11: an append no partition can hold is the operator's to fix, reported with its
    /// numbers, never INTERNAL; so is a balance asked for at an archived position.
    #[test]
    fn a_missing_partition_and_an_archived_position_are_failed_preconditions_with_their_numbers() {
        let missing = StoreError::NoPartition { recorded_at_micros: Some(1_806_537_600_000_000), partitions_until_micros: Some(1_806_537_600_000_000) };
        let status = append_status("c1", missing);
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        let details = tonic_types::StatusExt::get_error_details(&status);
        let info = details.error_info().expect("error info");
        assert_eq!(info.reason, "LOG_PARTITION_MISSING");
        assert_eq!(info.metadata["recorded_at_micros"], "1806537600000000");
        assert_eq!(info.metadata["partitions_until_micros"], "1806537600000000");
        let backstop = store_status("append", StoreError::NoPartition { recorded_at_micros: None, partitions_until_micros: None });
        assert_eq!(backstop.code(), tonic::Code::FailedPrecondition);

        let status = store_status("balance", StoreError::Archived { position: 2, archived_through: 3 });
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        let details = tonic_types::StatusExt::get_error_details(&status);
        let info = details.error_info().expect("error info");
        assert_eq!(info.reason, "POSITION_ARCHIVED");
        assert_eq!((info.metadata["position"].as_str(), info.metadata["archived_through"].as_str()), ("2", "3"));
    }

    /// Replies stored as JSON before they were protobuf still answer their replays the same.
    #[test]
    fn a_reply_stored_as_json_before_decodes_as_its_protobuf_form() {
        let id = Uuid::now_v7();
        let result = pb::BatchResult { command_id: "c-1".into(), ..Default::default() };
        let json = serde_json::json!({
            "layout": [["table-T1", [id]]],
            "result_hex": hex::encode(result.encode_to_vec()),
        });
        let from_json = StoredReply::decode_stored(&serde_json::to_vec(&json).unwrap()).unwrap();
        let stored = StoredReply {
            layout: vec![StreamLayout { stream: "table-T1".into(), event_ids: vec![id.as_bytes().to_vec()] }],
            result: Some(result),
        };
        assert_eq!(from_json, stored);
        assert_eq!(StoredReply::decode_stored(&stored.encode_to_vec()).unwrap(), stored);
    }
}
