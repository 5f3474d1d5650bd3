//! Every error the API returns is a `tonic::Status` with rich details (never a bare string):
//! - a rules rejection is FAILED_PRECONDITION with `google.rpc.ErrorInfo` (reason = stable code,
//!   domain "chipledger.v1", metadata `rule_id`, `detail` and every number involved; R-AUDIT-3);
//! - malformed input is INVALID_ARGUMENT with `google.rpc.BadRequest` field violations
//!   (`chipledger_proto::FieldErrors`, shared with the conversion that finds them);
//! - a concurrent writer that outlasted the retries is ABORTED (safe to retry the command);
//! - a command id reused for a different request is ALREADY_EXISTS;
//! - the database unreachable is UNAVAILABLE (reason DATABASE_UNAVAILABLE: nothing happened,
//!   retry), and an append cut off around its COMMIT is UNAVAILABLE with reason OUTCOME_UNKNOWN:
//!   it may or may not be recorded, and resending it with the same command id is safe (the
//!   first answer comes back if it was);
//! - another tenant's property, or an approval that does not prove its approver, is
//!   PERMISSION_DENIED.

use std::collections::HashMap;

use chipledger_proto::FieldErrors;
use chipledger_rules::Rejection;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// `google.rpc.ErrorInfo.domain` of every chipledger error.
pub const DOMAIN: &str = "chipledger.v1";

/// A refused command.
pub fn rejection(rejection: &Rejection) -> Status {
    let mut metadata = HashMap::with_capacity(rejection.numbers.len() + 2);
    metadata.insert("rule_id".to_string(), rejection.reason.rule.to_string());
    if !rejection.detail.is_empty() {
        metadata.insert("detail".to_string(), rejection.detail.clone());
    }
    for (name, value) in &rejection.numbers {
        metadata.insert((*name).to_string(), value.to_string());
    }
    let message = format!("{} ({}): {}", rejection.reason.code, rejection.reason.rule, rejection.detail);
    Status::with_error_details(
        Code::FailedPrecondition,
        message,
        ErrorDetails::with_error_info(rejection.reason.code, DOMAIN, metadata),
    )
}

fn with_info(code: Code, reason: &str, message: impl Into<String>, metadata: HashMap<String, String>) -> Status {
    Status::with_error_details(code, message, ErrorDetails::with_error_info(reason, DOMAIN, metadata))
}

/// A principal authenticated before that a reload has since removed or changed (role,
/// properties, tokens): what it holds open ends; it authenticates again.
pub fn principal_changed(principal_id: &str) -> Status {
    with_info(
        Code::Unauthenticated,
        "PRINCIPAL_CHANGED",
        format!("principal {principal_id} was removed or changed by a configuration reload: authenticate again"),
        HashMap::from([("principal".to_string(), principal_id.to_string())]),
    )
}

/// The same command id was recorded earlier for a different request (idempotency).
pub fn command_id_reused(command_id: &str) -> Status {
    with_info(
        Code::AlreadyExists,
        "COMMAND_ID_REUSED",
        format!("command id {command_id:?} was already used for a different request"),
        HashMap::from([("command_id".to_string(), command_id.to_string())]),
    )
}

/// Another writer kept changing a stream this command needs; retrying later is safe.
pub fn version_conflict(stream_id: &str, expected_version: i64, attempts: u32) -> Status {
    with_info(
        Code::Aborted,
        "VERSION_CONFLICT",
        format!("stream {stream_id} changed concurrently {attempts} times; retry the command"),
        HashMap::from([
            ("stream_id".to_string(), stream_id.to_string()),
            ("expected_version".to_string(), expected_version.to_string()),
            ("attempts".to_string(), attempts.to_string()),
        ]),
    )
}

/// The property's archive anchor is not proven by a signed archive document: balances carried
/// past it are not served (R-AUDIT-1; `chipledger verify` says why). Not the caller's fault,
/// and not a retry's either: the operator must look.
pub fn archive_not_proven(problem: &str) -> Status {
    tracing::error!(problem, "balance read refused: the archive anchor is not proven");
    with_info(
        Code::FailedPrecondition,
        "ARCHIVE_NOT_PROVEN",
        format!("balances are not served across an archive anchor that is not proven ({problem}); run chipledger verify"),
        HashMap::new(),
    )
}

/// The checkpoint sink (the write-once directory) refused the signed checkpoint: nothing was
/// kept. The database is not the cause (the operations pass was told it was); the operator
/// must make the directory writable. The detail (a path, an OS error) is the operator's.
pub fn checkpoint_sink_failed(error: &dyn std::fmt::Display) -> Status {
    tracing::error!(%error, "checkpoint sink failed");
    with_info(
        Code::Unavailable,
        "CHECKPOINT_SINK_FAILED",
        format!("the checkpoint could not be kept in the server's checkpoint directory ({error}); nothing was signed into it: the operator must make it writable"),
        HashMap::new(),
    )
}

/// A batch whose commands make more events or touch more streams than one append holds: the
/// caller's to split (nothing was written).
pub fn append_too_large(what: &str, count: usize, max: usize) -> Status {
    let mut metadata = HashMap::new();
    metadata.insert(format!("{what}_count"), count.to_string());
    metadata.insert(format!("max_{what}"), max.to_string());
    with_info(
        Code::InvalidArgument,
        "APPEND_TOO_LARGE",
        format!("the commands make {count} {what}; one append (a batch) holds at most {max}: send them in smaller batches"),
        metadata,
    )
}

/// A request message past the bound of one message: the same refusal, with its bound, on a
/// unary call and on a stream (they had answered RESOURCE_EXHAUSTED and OUT_OF_RANGE, both
/// without details: the stream pass).
pub fn message_too_large(max_bytes: usize) -> Status {
    with_info(
        Code::ResourceExhausted,
        "MESSAGE_TOO_LARGE",
        format!("a request message is larger than {max_bytes} bytes: send it in parts (a batch in smaller batches)"),
        HashMap::from([("max_message_bytes".to_string(), max_bytes.to_string())]),
    )
}

/// A command row's stored outcome does not place its events where the log has them: it was
/// changed behind the service, and a replay answers nothing from it.
pub fn stored_outcome_disagrees(detail: &str) -> Status {
    tracing::error!(detail, "a stored outcome disagrees with the log");
    with_info(
        Code::DataLoss,
        "STORED_OUTCOME_DISAGREES",
        format!("the command's stored outcome disagrees with the log ({detail}): nothing is answered from it; verify the chain"),
        HashMap::new(),
    )
}

/// The log no longer agrees with a checkpoint the server signed: nothing is signed over it.
pub fn log_disagrees_with_checkpoint(error: &dyn std::fmt::Display) -> Status {
    tracing::error!(%error, "refused to sign a checkpoint");
    with_info(Code::DataLoss, "LOG_DISAGREES_WITH_CHECKPOINT", error.to_string(), HashMap::new())
}

/// Something the server could not do through no fault of the request. The detail is logged,
/// not returned: it may carry SQL or connection strings.
pub fn internal(context: &str, error: &dyn std::fmt::Display) -> Status {
    tracing::error!(%error, context, "internal error");
    with_info(Code::Internal, "INTERNAL", format!("internal error during {context}"), HashMap::new())
}

/// The database cannot be reached; nothing was done. Retrying later is safe.
pub fn unavailable(context: &str, error: &dyn std::fmt::Display) -> Status {
    tracing::warn!(%error, context, "database unavailable");
    with_info(
        Code::Unavailable,
        "DATABASE_UNAVAILABLE",
        format!("{context}: database unavailable, nothing was done; retry later"),
        HashMap::new(),
    )
}

/// The database has no space left to write: nothing was done. Reads still answer (health stays
/// SERVING for them); writes succeed again once the operator frees space.
pub fn out_of_space(context: &str, error: &dyn std::fmt::Display) -> Status {
    tracing::error!(%error, context, "the database has no space left: writes are refused until space is freed");
    with_info(
        Code::Unavailable,
        "DATABASE_OUT_OF_SPACE",
        format!("{context}: the database has no space left to write, nothing was done; retry once the operator has freed space"),
        HashMap::new(),
    )
}

/// No partition of the log holds the time an append would be recorded at: the operator has to
/// make the partitions ahead (`chipledgerd partitions ensure`, or `chipledgerd migrate`).
/// Nothing was recorded; the same command sent again afterwards is decided and recorded then.
/// A lock the store needed was held elsewhere longer than it waits (`chipledger_store::LOCK_TIMEOUT`):
/// nothing was written; the same command may be sent again.
pub fn lock_timeout(context: &str, error: &dyn std::fmt::Display) -> Status {
    tracing::warn!(%error, context, "a lock the store needs is held by another session: statements give up after {}", chipledger_store::LOCK_TIMEOUT);
    with_info(
        Code::Unavailable,
        "LOCK_TIMEOUT",
        format!(
            "{context}: a lock it needs was held by another database session for more than {}; nothing was written: \
             send it again with the same command id",
            chipledger_store::LOCK_TIMEOUT
        ),
        HashMap::from([("lock_timeout".to_string(), chipledger_store::LOCK_TIMEOUT.to_string())]),
    )
}

pub fn partition_missing(recorded_at_micros: Option<i64>, partitions_until_micros: Option<i64>) -> Status {
    tracing::error!(?recorded_at_micros, ?partitions_until_micros, "append refused: no partition of the log for its time");
    let mut metadata = HashMap::new();
    for (name, value) in [("recorded_at_micros", recorded_at_micros), ("partitions_until_micros", partitions_until_micros)] {
        if let Some(value) = value {
            metadata.insert(name.to_string(), value.to_string());
        }
    }
    with_info(
        Code::FailedPrecondition,
        "LOG_PARTITION_MISSING",
        "no partition of the log holds the time of this append: nothing was recorded; the operator must create          the partitions ahead (chipledgerd partitions ensure), then the command may be sent again",
        metadata,
    )
}

/// A position asked about lies in an archived partition: the live log answers from
/// `archived_through` on.
pub fn position_archived(position: i64, archived_through: i64) -> Status {
    with_info(
        Code::FailedPrecondition,
        "POSITION_ARCHIVED",
        format!("position {position} is archived; the live log answers from position {archived_through} on"),
        HashMap::from([
            ("position".to_string(), position.to_string()),
            ("archived_through".to_string(), archived_through.to_string()),
        ]),
    )
}

/// A subscription asked to start past the head of the log: no event was ever recorded there. A
/// subscriber that saw a position the log no longer has (a log restored from an earlier backup,
/// a position of another property) learns it here instead of waiting for ever.
pub fn position_past_head(position: i64, head: i64) -> Status {
    with_info(
        Code::OutOfRange,
        "POSITION_PAST_HEAD",
        format!(
            "position {position} is past the log's head, position {head}: the log holds nothing there (a position seen before \
             and past the head now means the log was restored to an earlier state)"
        ),
        HashMap::from([("position".to_string(), position.to_string()), ("head_position".to_string(), head.to_string())]),
    )
}

/// The connection to the database broke while an append was committing: it may or may not be
/// recorded. The same command (same id, same bytes) sent again answers the recorded result if
/// it went through, or is decided and recorded now if it did not.
pub fn outcome_unknown(command_id: &str, error: &dyn std::fmt::Display) -> Status {
    tracing::warn!(%error, command_id, "append outcome unknown: the database connection broke around COMMIT");
    with_info(
        Code::Unavailable,
        "OUTCOME_UNKNOWN",
        format!(
            "the database connection broke while command {command_id:?} was committing: it may or may not be \
             recorded; resend it with the same command id (safe: a recorded command answers its first result)"
        ),
        HashMap::from([
            ("command_id".to_string(), command_id.to_string()),
            ("retry_same_command_id".to_string(), "safe".to_string()),
        ]),
    )
}

/// A device's stream ends after a command it did not record: the commands the device sent after
/// it were meant for the table with it, so none is decided without it (R-AUDIT-3: a refusal
/// moves nothing, nor does what was sent on its strength). `refused`: refused or bad input
/// (ABORTED, `STREAM_ENDS_AFTER_REFUSAL`), else not decided (UNAVAILABLE, `STREAM_ENDS_UNDECIDED`).
pub fn stream_ends_after(command_id: &str, refused: bool) -> Status {
    let (code, reason, what) = if refused {
        (Code::Aborted, "STREAM_ENDS_AFTER_REFUSAL", "was refused")
    } else {
        (Code::Unavailable, "STREAM_ENDS_UNDECIDED", "was not decided")
    };
    with_info(
        code,
        reason,
        format!(
            "command {command_id:?} {what}: the stream ends before the next command, which was sent for the table with it; \
             send what is still meant on a new stream, in order (a command resent with its id is answered as recorded)"
        ),
        HashMap::from([("command_id".to_string(), command_id.to_string()), ("rule_id".to_string(), "R-AUDIT-3".to_string())]),
    )
}

pub fn not_found(what: &str, id: &str) -> Status {
    with_info(
        Code::NotFound,
        "NOT_FOUND",
        format!("{what} {id:?} not found"),
        HashMap::from([(what.to_string(), id.to_string())]),
    )
}

pub fn shutting_down() -> Status {
    with_info(Code::Unavailable, "SHUTTING_DOWN", "the server is shutting down", HashMap::new())
}

/// One bad field, as a ready Status.
/// `status` with `rule_id` added to its ErrorInfo (one without is returned as it is): a refusal
/// made outside the rules core names its rule too (R-AUDIT-3).
pub fn with_rule_id(status: Status, rule: &str) -> Status {
    let details = tonic_types::StatusExt::get_error_details(&status);
    let Some(info) = details.error_info() else { return status };
    let mut metadata = info.metadata.clone();
    metadata.insert("rule_id".to_string(), rule.to_string());
    let mut rebuilt = tonic_types::ErrorDetails::with_error_info(info.reason.clone(), info.domain.clone(), metadata);
    for violation in details.bad_request().map(|bad| bad.field_violations.clone()).unwrap_or_default() {
        rebuilt.add_bad_request_violation(violation.field, violation.description);
    }
    <Status as tonic_types::StatusExt>::with_error_details(status.code(), status.message(), rebuilt)
}

pub fn invalid_field(field: &str, description: impl Into<String>) -> Status {
    let mut errors = FieldErrors::new();
    errors.add(field, description);
    errors.into_status()
}

/// An import on a gaming day a cage of the property closed, or before it (R-CHIP-5).
pub fn import_on_closed_day(gaming_day: &str, closed_through: &str) -> Status {
    invalid_field(
        "header.import_occurred_at_unix_ms",
        format!("an import on gaming day {gaming_day}, which the property closed (closed through {closed_through}): a closed day is final (R-CHIP-5)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chipledger_rules::Reason;

    #[test]
    fn rejection_carries_reason_rule_and_numbers_in_error_info() {
        let rejection = Rejection {
            reason: Reason::new("REBUY_BELOW_AMOUNT_LEFT", "R-REBUY-1"),
            numbers: vec![("amount_left_with_cents", 30_000), ("buy_in_cents", 20_000)],
            detail: "left with 300.00 within the wait window".to_string(),
        };
        let status = super::rejection(&rejection);
        assert_eq!(status.code(), Code::FailedPrecondition);
        assert!(status.message().starts_with("REBUY_BELOW_AMOUNT_LEFT (R-REBUY-1)"));
        let details = status.get_error_details();
        let info = details.error_info().expect("error info");
        assert_eq!(info.reason, "REBUY_BELOW_AMOUNT_LEFT");
        assert_eq!(info.domain, "chipledger.v1");
        assert_eq!(info.metadata["rule_id"], "R-REBUY-1");
        assert_eq!(info.metadata["amount_left_with_cents"], "30000");
        assert_eq!(info.metadata["buy_in_cents"], "20000");
        assert_eq!(info.metadata["detail"], "left with 300.00 within the wait window");
    }

    #[test]
    fn conflicts_and_reuse_have_their_own_codes() {
        let status = version_conflict("table-T1", 7, 3);
        assert_eq!(status.code(), Code::Aborted);
        assert_eq!(status.get_error_details().error_info().unwrap().metadata["expected_version"], "7");
        let status = command_id_reused("c-1");
        assert_eq!(status.code(), Code::AlreadyExists);
        assert_eq!(status.get_error_details().error_info().unwrap().reason, "COMMAND_ID_REUSED");
    }

    #[test]
    fn outages_are_unavailable_and_an_unknown_outcome_says_to_resend_the_same_id() {
        let status = unavailable("read stream", &"connection refused");
        assert_eq!(status.code(), Code::Unavailable);
        assert_eq!(status.get_error_details().error_info().unwrap().reason, "DATABASE_UNAVAILABLE");
        let status = outcome_unknown("buy-7", &"connection reset");
        assert_eq!(status.code(), Code::Unavailable);
        let info = status.get_error_details().error_info().unwrap().clone();
        assert_eq!(info.reason, "OUTCOME_UNKNOWN");
        assert_eq!(info.metadata["command_id"], "buy-7");
        assert!(status.message().contains("same command id"));
    }

    #[test]
    fn internal_errors_do_not_leak_detail() {
        let status = internal("append", &"password=secret host=db");
        assert_eq!(status.code(), Code::Internal);
        assert!(!status.message().contains("secret"));
    }
}
