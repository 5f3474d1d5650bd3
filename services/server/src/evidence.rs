//! The evidence RPCs of the audit service: verifying the log against kept checkpoints (and the
//! projections against the events), and the signed checkpoints themselves.

use chipledger_proto::FieldErrors;
use chipledger_proto::v1 as pb;
use chipledger_store::checkpoint::CheckpointError;
use chipledger_store::{RulesProjection, SignedCheckpoint, Store};
use tonic::Status;

use crate::checkpoints::CheckpointingError;
use crate::ledger::{Ledger, store_status};
use crate::status;

/// Most checkpoint documents one VerifyChain call may carry (bound).
pub const MAX_VERIFY_CHECKPOINTS: usize = 100_000;

/// `VerifyChain`: both chains, the command ids, every checkpoint given, and the projections
/// when asked.
/// `property`: the request's, resolved against the caller's properties by the handler;
/// `store`: the database chosen to answer (the primary, or a standby close enough).
pub async fn verify(ledger: &Ledger, store: &Store, property: String, request: pb::VerifyChainRequest) -> Result<pb::VerifyChainResponse, Status> {
    if request.checkpoints.len() > MAX_VERIFY_CHECKPOINTS {
        return Err(status::invalid_field("checkpoints", format!("at most {MAX_VERIFY_CHECKPOINTS}")));
    }
    let own_keys = ledger.checkpointer().map(|checkpointer| checkpointer.own_public_keys()).unwrap_or_default();
    let mut errors = FieldErrors::new();
    let mut signed = Vec::with_capacity(request.checkpoints.len());
    let mut verdicts = Vec::new();
    for (index, document) in request.checkpoints.iter().enumerate() {
        match SignedCheckpoint::from_document(document) {
            Ok(checkpoint) => match checkpoint.verify(&[]) {
                Ok(()) => signed.push(checkpoint),
                Err(error) => verdicts.push(verdict(&checkpoint, false, Some(error.to_string()), &own_keys)),
            },
            Err(CheckpointError::Malformed(message)) => errors.add(format!("checkpoints[{index}]"), message),
            Err(other) => errors.add(format!("checkpoints[{index}]"), other.to_string()),
        }
    }
    errors.finish()?;
    // An archive anchor is taken with its archive signed by this server's keys. Not by the key
    // of a checkpoint in the request: the server does not know which keys its caller trusts, and
    // a self-signed checkpoint had vouched for a forged archive (the fixes' pass).
    let report = ledger
        .db_call("verify_log", "events", store.verify_log(&property, &signed, &own_keys))
        .await
        .map_err(|error| store_status("verify chain", error))?;
    for given in &report.checkpoints {
        let public_key = signed
            .iter()
            .find(|kept| kept.checkpoint == given.checkpoint)
            .map(|kept| kept.public_key)
            .unwrap_or_default();
        let signed_by_this_server = own_keys.contains(&public_key);
        verdicts.push(pb::CheckpointVerdict {
            signed_by_this_server,
            ..verdict_of(&given.checkpoint, given.agrees, given.reason.clone())
        });
    }
    verdicts.sort_by_key(|verdict| (verdict.global_position, verdict.refusal_seq, verdict.signed_at_unix_ms));
    let differences = if request.projections {
        ledger
            .db_call("verify_projections", "events", store.verify_projections(&property, &RulesProjection))
            .await
            .map_err(|error| store_status("verify projections", error))?
    } else {
        Vec::new()
    };
    let (first_bad_refusal, refusal_problem) = report.refusal_problem.clone().unzip();
    Ok(pb::VerifyChainResponse {
        ok: report.ok() && verdicts.iter().all(|verdict| verdict.agrees) && differences.is_empty(),
        events_checked: report.chain.events_checked,
        first_bad_position: report.chain.first_bad_position,
        problem: report.chain.problem.as_ref().map(|problem| format!("{problem:?}")).unwrap_or_default(),
        head: Some(pb::ChainDigest {
            global_position: report.chain.head.position,
            chain_hash_hex: hex::encode(report.chain.head.hash),
            refusal_seq: report.refusal_head.0,
            refusal_hash_hex: hex::encode(report.refusal_head.1),
        }),
        commands_checked: report.commands_checked,
        refusals_checked: report.refusals_checked,
        first_bad_refusal,
        refusal_problem: refusal_problem.map(|problem| format!("{problem:?}")).unwrap_or_default(),
        checkpoints: verdicts,
        functions_changed: report.functions_changed.clone(),
        projections_checked: request.projections,
        projection_differences: differences
            .into_iter()
            .map(|difference| pb::ProjectionDifference {
                projection: difference.projection.to_owned(),
                key: difference.key,
                stored: difference.stored,
                recomputed: difference.recomputed,
            })
            .collect(),
    })
}

fn verdict_of(checkpoint: &chipledger_store::Checkpoint, agrees: bool, reason: Option<String>) -> pb::CheckpointVerdict {
    pb::CheckpointVerdict {
        global_position: checkpoint.position,
        refusal_seq: checkpoint.refusal_seq,
        signed_at_unix_ms: checkpoint.signed_at_ms,
        key_id: checkpoint.key_id.clone(),
        agrees,
        reason: reason.unwrap_or_default(),
        signed_by_this_server: false,
    }
}

fn verdict(signed: &SignedCheckpoint, agrees: bool, reason: Option<String>, own_keys: &[[u8; 32]]) -> pb::CheckpointVerdict {
    pb::CheckpointVerdict { signed_by_this_server: own_keys.contains(&signed.public_key), ..verdict_of(&signed.checkpoint, agrees, reason) }
}

fn checkpointing_status(error: CheckpointingError) -> Status {
    match error {
        CheckpointingError::NoKey => Status::failed_precondition(error.to_string()),
        CheckpointingError::Store(error) => store_status("sign checkpoint", error),
        CheckpointingError::Sink { .. } => status::checkpoint_sink_failed(&error),
        CheckpointingError::Disagrees { .. } | CheckpointingError::LostWritten { .. } | CheckpointingError::SinkConflict { .. } => {
            status::log_disagrees_with_checkpoint(&error)
        }
    }
}

/// `SignCheckpoint`: the property's heads signed now (and kept like a periodic one).
pub async fn sign(ledger: &Ledger, property: String, _request: pb::SignCheckpointRequest) -> Result<pb::SignedCheckpoint, Status> {
    let checkpointer = ledger.checkpointer().ok_or_else(|| checkpointing_status(CheckpointingError::NoKey))?;
    let signed = checkpointer.sign_now(&property).await.map_err(checkpointing_status)?;
    Ok(pb::SignedCheckpoint { document: signed.to_document() })
}

/// `ListCheckpoints`: the kept copies in chain order; the page token is "position.refusal_seq".
pub async fn list(ledger: &Ledger, store: &Store, property: String, request: pb::ListCheckpointsRequest, page_size: i64) -> Result<pb::ListCheckpointsResponse, Status> {
    let token = request.page.as_ref().map(|page| page.page_token.as_str()).unwrap_or_default();
    if request.after_position < 0 {
        return Err(status::invalid_field("after_position", format!("{} is below 0", request.after_position)));
    }
    let after = match token.split_once('.') {
        None if token.is_empty() && request.after_position > 0 => (request.after_position, i64::MAX),
        None if token.is_empty() => (-1, -1),
        Some((position, seq)) => match (position.parse(), seq.parse()) {
            (Ok(position), Ok(seq)) => (position, seq),
            _ => return Err(status::invalid_field("page.page_token", "not a token from a previous page")),
        },
        None => return Err(status::invalid_field("page.page_token", "not a token from a previous page")),
    };
    let kept = ledger
        .db_call("list_checkpoints", "checkpoints", store.checkpoints(&property, after, page_size))
        .await
        .map_err(|error| store_status("list checkpoints", error))?;
    let full = kept.len() as i64 == page_size;
    let next = kept.last().filter(|_| full).map(|signed| format!("{}.{}", signed.checkpoint.position, signed.checkpoint.refusal_seq));
    Ok(pb::ListCheckpointsResponse {
        checkpoints: kept.iter().map(|signed| pb::SignedCheckpoint { document: signed.to_document() }).collect(),
        page: Some(pb::PageResponse { next_page_token: next.unwrap_or_default() }),
    })
}

/// `GetCheckpointKey`: the public key checkpoints are signed with.
pub fn key(ledger: &Ledger) -> Result<pb::CheckpointKey, Status> {
    let checkpointer = ledger.checkpointer().ok_or_else(|| checkpointing_status(CheckpointingError::NoKey))?;
    let key = checkpointer.key().ok_or_else(|| checkpointing_status(CheckpointingError::NoKey))?;
    Ok(pb::CheckpointKey {
        public_key_hex: hex::encode(key.public_key()),
        key_id: key.key_id(),
        interval_seconds: i64::try_from(checkpointer.interval().as_secs()).unwrap_or(i64::MAX),
    })
}
