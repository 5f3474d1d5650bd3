//! Checks of what the wire cannot type (ids, seats, free text, chip lists), each recording what
//! is wrong in a [`FieldErrors`] under the field's path in the request.

use chipledger_rules::{self as rules, CageId, ChipCount, PlayerId, Seat, Signers, TableId};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, FieldViolation, StatusExt};

use crate::v1 as pb;

/// Longest free text accepted (reason notes, purposes, signer and approver ids).
pub const MAX_TEXT_LEN: usize = 500;
/// Longest command id (the store's bound).
pub const MAX_COMMAND_ID_LEN: usize = 128;
/// Times an import may name (`import_occurred_at_unix_ms`): 1970 to 2100.
pub const MIN_IMPORT_UNIX_MS: i64 = 0;
pub const MAX_IMPORT_UNIX_MS: i64 = 4_102_444_800_000;

/// Collects field violations while a request is checked; `finish` turns them into one
/// INVALID_ARGUMENT (`google.rpc.BadRequest`) listing every bad field at once.
#[derive(Debug, Default)]
pub struct FieldErrors {
    violations: Vec<FieldViolation>,
}

impl FieldErrors {
    pub fn new() -> FieldErrors {
        FieldErrors::default()
    }

    pub fn add(&mut self, field: impl Into<String>, description: impl Into<String>) {
        self.violations.push(FieldViolation::new(field, description));
    }

    /// Records a violation when `ok` is false.
    pub fn check(&mut self, ok: bool, field: &str, description: impl FnOnce() -> String) {
        if !ok {
            self.add(field, description());
        }
    }

    pub fn into_violations(self) -> Vec<FieldViolation> {
        self.violations
    }

    /// Forgets the violations of these fields (those a caller fills in afterwards).
    pub fn forget(&mut self, fields: &[&str]) {
        self.violations.retain(|violation| !fields.contains(&violation.field.as_str()));
    }

    pub fn is_empty(&self) -> bool {
        self.violations.is_empty()
    }

    pub fn finish(self) -> Result<(), Status> {
        if self.violations.is_empty() {
            return Ok(());
        }
        Err(self.into_status())
    }

    pub fn into_status(self) -> Status {
        let summary = self
            .violations
            .iter()
            .map(|violation| format!("{}: {}", violation.field, violation.description))
            .collect::<Vec<_>>()
            .join("; ");
        Status::with_error_details(
            Code::InvalidArgument,
            format!("invalid request: {summary}"),
            ErrorDetails::with_bad_request(self.violations),
        )
    }
}

fn id<T>(
    errors: &mut FieldErrors,
    field: &str,
    value: &str,
    parse: impl FnOnce(String) -> Result<T, rules::Rejection>,
) -> Option<T> {
    if value.is_empty() {
        errors.add(field, "required");
        return None;
    }
    match parse(value.to_string()) {
        Ok(id) => Some(id),
        Err(_) => {
            errors.add(field, rules::ID_FORM);
            None
        }
    }
}

pub(super) fn table_id(errors: &mut FieldErrors, field: &str, value: &str) -> Option<TableId> {
    id(errors, field, value, TableId::new)
}

pub(super) fn player_id(errors: &mut FieldErrors, field: &str, value: &str) -> Option<PlayerId> {
    id(errors, field, value, PlayerId::new)
}

pub(super) fn cage_id(errors: &mut FieldErrors, field: &str, value: &str) -> Option<CageId> {
    id(errors, field, value, CageId::new)
}

pub(super) fn seat(errors: &mut FieldErrors, field: &str, value: u32) -> Option<Seat> {
    if value == 0 || value as usize > rules::MAX_SEATS {
        errors.add(field, format!("seat must be 1..={}", rules::MAX_SEATS));
        return None;
    }
    Some(value as Seat)
}

pub(super) fn seats(errors: &mut FieldErrors, field: &str, values: &[u32]) -> Option<Vec<Seat>> {
    if values.len() > rules::MAX_SEATS {
        errors.add(field, format!("at most {} seats", rules::MAX_SEATS));
        return None;
    }
    let mut out = Vec::with_capacity(values.len());
    for (index, value) in values.iter().enumerate() {
        out.push(seat(errors, &format!("{field}[{index}]"), *value)?);
    }
    Some(out)
}

pub(super) fn seats_to_wire(values: &[Seat]) -> Vec<u32> {
    values.iter().map(|&seat| u32::from(seat)).collect()
}

pub(super) fn text(errors: &mut FieldErrors, field: &str, value: &str, required: bool) -> Option<String> {
    if required && value.trim().is_empty() {
        errors.add(field, "required");
        return None;
    }
    if value.len() > MAX_TEXT_LEN {
        errors.add(field, format!("at most {MAX_TEXT_LEN} bytes"));
        return None;
    }
    if let Some(bad) = value.chars().find(|c| !is_text_char(*c)) {
        errors.add(field, format!("contains the character U+{:04X}: no control or bidirectional-override characters", u32::from(bad)));
        return None;
    }
    Some(value.to_string())
}

/// Characters free text may hold: no C0/C1 controls (NUL among them: PostgreSQL text cannot
/// hold it) except tab and newline, and no bidirectional controls (which make a record display
/// as something other than what it says).
pub fn is_text_char(c: char) -> bool {
    let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}');
    (!c.is_control() || c == '\t' || c == '\n') && !bidi
}

pub(super) fn optional_text(errors: &mut FieldErrors, field: &str, value: Option<&String>) -> Option<Option<String>> {
    match value {
        None => Some(None),
        Some(value) => text(errors, field, value, true).map(Some),
    }
}

pub(super) fn chips(errors: &mut FieldErrors, field: &str, values: &[pb::ChipCount]) -> Option<Vec<ChipCount>> {
    if values.len() > rules::money::MAX_DENOMINATIONS {
        errors.add(field, format!("at most {} entries", rules::money::MAX_DENOMINATIONS));
        return None;
    }
    Some(
        values
            .iter()
            .map(|chip| ChipCount { denomination_cents: chip.denomination_cents, count: chip.count })
            .collect(),
    )
}

pub fn chips_to_wire(values: &[ChipCount]) -> Vec<pb::ChipCount> {
    values
        .iter()
        .map(|chip| pb::ChipCount { denomination_cents: chip.denomination_cents, count: chip.count })
        .collect()
}

pub(super) fn card(errors: &mut FieldErrors, field: &str, value: &str) -> Option<rules::cards::Card> {
    match value.parse() {
        Ok(card) => Some(card),
        Err(_) => {
            errors.add(field, "a card: rank 23456789TJQKA and suit cdhs, e.g. Ah");
            None
        }
    }
}

pub(super) fn signers(errors: &mut FieldErrors, first: &str, second: &str) -> Option<Signers> {
    let first = text(errors, "signer_1", first, true)?;
    let second = text(errors, "signer_2", second, true)?;
    Some(Signers { first, second })
}

pub(super) fn small_u8(errors: &mut FieldErrors, field: &str, value: u32) -> Option<u8> {
    match u8::try_from(value) {
        Ok(value) => Some(value),
        Err(_) => {
            errors.add(field, "too large");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_errors_become_one_bad_request_with_every_violation() {
        let mut errors = FieldErrors::new();
        errors.check(true, "seat", || "fine".into());
        errors.check(false, "amount_cents", || "must be positive".into());
        errors.add("header.command_id", "required");
        let status = errors.finish().unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        let details = status.get_error_details();
        let bad_request = details.bad_request().expect("bad request");
        let fields: Vec<&str> = bad_request.field_violations.iter().map(|v| v.field.as_str()).collect();
        assert_eq!(fields, ["amount_cents", "header.command_id"]);
        assert!(FieldErrors::new().finish().is_ok());
    }
}
