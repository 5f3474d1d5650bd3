//! Cage actions from the console: fill, credit, count, marker issue and redemption. Each form is
//! drawn with a fresh command id; posting it sends the same command RPC a cage terminal sends,
//! as the signed-in principal. The second person of dual control (R-CHIP-3, R-CHIP-4,
//! R-MARK-1) proves it by entering their own token on the form: the console authenticates it
//! and asks the Approve RPC as that principal for exactly this command.
//!
//! A form posted again (a double click, the browser's resubmit) carries the same command id;
//! the console then resends the very request it sent the first time (same bytes, same
//! approvals), so the ledger's idempotency answers it with the first result and nothing is
//! recorded twice.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Form;
use axum::extract::{Path, State};
use axum::response::Response;
use chipledger_proto::WireCommand;
use chipledger_proto::v1 as pb;
use chipledger_proto::v1::approval_service_server::ApprovalService;
use chipledger_rules::money;
use minijinja::context;
use serde::Serialize;
use tonic::Status;

use super::view::Units;
use super::{Console, Signed, rpc};
use crate::access::{self, Principal};
use crate::approval;
use crate::status;

/// Requests kept for resubmission, at most (the oldest go first).
const MAX_SENT: usize = 10_000;
/// Whether a refused form's field is kept as filled: one of the cage forms' own fields (chip
/// counts `chip_<cents>`), holding a value of its form (an id, a number, the note as the header
/// checks it).
fn kept_as_filled(name: &str, value: &str) -> bool {
    let number = || !value.is_empty() && value.bytes().all(|byte| byte.is_ascii_digit() || b".,-".contains(&byte));
    match name {
        "table_id" | "cage_id" | "player_id" => chipledger_rules::TableId::new(value).is_ok(),
        "slip_no" | "marker_no" | "amount" | "cash" => number(),
        // Checked as the command's header before the second person is asked for.
        "command_id" | "property" | "note" => true,
        _ => name.strip_prefix("chip_").is_some_and(|d| d.parse::<i64>().is_ok()) && number(),
    }
}

/// Characters kept of each field of a refused form (the command's own checks bound them too).
const MAX_KEPT_FIELD_CHARS: usize = 500;
/// Command ids minted by the console start with this.
const COMMAND_ID_PREFIX: &str = "console-";

/// The requests the console sent, by command id. The first submission of a form builds the
/// request (and gets the second person's approval) once; any submission of the same form at
/// the same time waits for it, later ones take it as it was.
#[derive(Default)]
pub struct Sent {
    by_command_id: HashMap<String, Arc<SentRequest>>,
    order: std::collections::VecDeque<String>,
}

/// Who sent a form's command, and the request as sent (its RPC and protobuf bytes), once built.
pub struct SentRequest {
    principal_id: String,
    request: tokio::sync::OnceCell<(&'static str, Vec<u8>)>,
}

impl Sent {
    /// The entry of `command_id`, made for `principal_id` when new.
    fn entry(&mut self, command_id: &str, principal_id: &str) -> Arc<SentRequest> {
        if let Some(entry) = self.by_command_id.get(command_id) {
            return entry.clone();
        }
        if self.order.len() >= MAX_SENT
            && let Some(oldest) = self.order.pop_front()
        {
            self.by_command_id.remove(&oldest);
        }
        let entry = Arc::new(SentRequest { principal_id: principal_id.to_string(), request: tokio::sync::OnceCell::new() });
        self.order.push_back(command_id.to_string());
        self.by_command_id.insert(command_id.to_string(), entry.clone());
        entry
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Fill,
    Credit,
    Count,
    IssueMarker,
    RedeemMarker,
}

impl Action {
    const ALL: [Action; 5] = [Action::Fill, Action::Credit, Action::Count, Action::IssueMarker, Action::RedeemMarker];

    fn name(self) -> &'static str {
        match self {
            Action::Fill => "fill",
            Action::Credit => "credit",
            Action::Count => "count",
            Action::IssueMarker => "issue-marker",
            Action::RedeemMarker => "redeem-marker",
        }
    }

    /// The form's name in templates.
    fn key(self) -> &'static str {
        match self {
            Action::IssueMarker => "issue_marker",
            Action::RedeemMarker => "redeem_marker",
            other => other.name(),
        }
    }

    fn rpc(self) -> &'static str {
        match self {
            Action::Fill => <pb::Fill as WireCommand>::RPC,
            Action::Credit => <pb::Credit as WireCommand>::RPC,
            Action::Count => <pb::CountCageShift as WireCommand>::RPC,
            Action::IssueMarker => <pb::IssueMarker as WireCommand>::RPC,
            Action::RedeemMarker => <pb::RedeemMarker as WireCommand>::RPC,
        }
    }
}

#[derive(Serialize)]
pub struct FormView {
    name: &'static str,
    command_id: String,
    /// The property the session acts in as the form is drawn: a post from a session switched
    /// to another since is refused (the console pass: a fill drawn in one property, posted after
    /// another tab switched the session, moved chips in the other).
    property_id: String,
}

/// The forms the principal's role may send, each with a fresh command id.
pub fn forms(signed: &Signed, property_id: &str) -> HashMap<&'static str, FormView> {
    Action::ALL
        .iter()
        .filter(|action| access::authorize(&signed.principal, action.rpc()).is_ok())
        .map(|action| {
            let command_id = format!("{COMMAND_ID_PREFIX}{}", uuid::Uuid::new_v4());
            (action.key(), FormView { name: action.name(), command_id, property_id: property_id.to_owned() })
        })
        .collect()
}

pub async fn cage_action(
    State(console): State<Arc<Console>>,
    signed: Signed,
    Path(action): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    if let Err(refused) = signed.check_csrf(&form) {
        return refused;
    }
    let Some(action) = Action::ALL.iter().copied().find(|candidate| candidate.name() == action) else {
        return console.refusal(&signed, &status::not_found("console action", &action));
    };
    let result = match action {
        Action::Fill => send(&console, &signed, &form, |form| slip(form, |header, table_id, cage_id, slip_no, chips| pb::Fill {
            header,
            table_id,
            cage_id,
            slip_no,
            chips,
            ..Default::default()
        }))
        .await,
        Action::Credit => send(&console, &signed, &form, |form| slip(form, |header, table_id, cage_id, slip_no, chips| pb::Credit {
            header,
            table_id,
            cage_id,
            slip_no,
            chips,
            ..Default::default()
        }))
        .await,
        Action::Count => send(&console, &signed, &form, |form| {
            Ok(pb::CountCageShift {
                header: None,
                cage_id: required(form, "cage_id")?,
                counted_chips: counted_chips(form)?,
                counted_cash_cents: Some(amount(form, "cash")?),
                ..Default::default()
            })
        })
        .await,
        Action::IssueMarker => send(&console, &signed, &form, |form| {
            Ok(pb::IssueMarker {
                header: None,
                cage_id: required(form, "cage_id")?,
                player_id: required(form, "player_id")?,
                marker_no: number(form, "marker_no")?,
                chips: chips(form)?,
                approved_by: String::new(),
                delivery: Some(pb::issue_marker::Delivery::ToPocket(true)),
            })
        })
        .await,
        Action::RedeemMarker => send(&console, &signed, &form, |form| {
            Ok(pb::RedeemMarker {
                header: None,
                cage_id: required(form, "cage_id")?,
                player_id: required(form, "player_id")?,
                marker_no: number(form, "marker_no")?,
                amount_cents: amount(form, "amount")?,
            })
        })
        .await,
    };
    match result {
        Ok(response) => response,
        // A refused command id stays refused (R-AUDIT-3): a corrected action needs a fresh form.
        Err(status) => console.refusal_with_back(&signed, &status, "/cage", "Open a fresh form on the cage page"),
    }
}

type Fields = HashMap<String, String>;

fn required(form: &Fields, name: &'static str) -> Result<String, Status> {
    form.get(name)
        .map(|value| value.trim().to_string())
        .filter(|value| !value.is_empty())
        .ok_or_else(|| status::invalid_field(name, "required"))
}

fn number(form: &Fields, name: &'static str) -> Result<u64, Status> {
    required(form, name)?.parse::<u64>().map_err(|_| status::invalid_field(name, "expected a whole number like 12"))
}

fn amount(form: &Fields, name: &'static str) -> Result<i64, Status> {
    money::parse_money(&required(form, name)?).map_err(|problem| status::invalid_field(name, &problem))
}

/// The chip counts of the form: `chip_<denomination in cents>` = count; blank or 0 fields are
/// no chips.
fn chips(form: &Fields) -> Result<Vec<pb::ChipCount>, Status> {
    chips_of(form, false)
}

/// The chips a count names: an explicit 0 is counted (none of them found), a blank field is no
/// count of that denomination (R-CHIP-4: refused where the book holds some, not taken as 0).
fn counted_chips(form: &Fields) -> Result<Vec<pb::ChipCount>, Status> {
    chips_of(form, true)
}

fn chips_of(form: &Fields, zero_counts: bool) -> Result<Vec<pb::ChipCount>, Status> {
    let mut chips = Vec::new();
    for (name, value) in form {
        let Some(denomination) = name.strip_prefix("chip_") else { continue };
        let value = value.trim();
        if value.is_empty() || (value == "0" && !zero_counts) {
            continue;
        }
        // The form's own field names only: `chip_0100` or `chip_+100` is no second $1 field.
        let denomination_cents = denomination
            .parse::<i64>()
            .ok()
            .filter(|cents| *cents > 0 && cents.to_string() == denomination)
            .ok_or_else(|| status::invalid_field("chips", "unknown chip field"))?;
        let count = value.parse::<i64>().map_err(|_| status::invalid_field("chips", "a chip count is a whole number like 20"))?;
        chips.push(pb::ChipCount { denomination_cents, count });
    }
    chips.sort_by_key(|chip| std::cmp::Reverse(chip.denomination_cents));
    Ok(chips)
}

fn slip<T>(form: &Fields, make: impl FnOnce(Option<pb::CommandHeader>, String, String, u64, Vec<pb::ChipCount>) -> T) -> Result<T, Status> {
    Ok(make(None, required(form, "table_id")?, required(form, "cage_id")?, number(form, "slip_no")?, chips(form)?))
}

/// Builds the command from the form, names the caller and the second person in its fields,
/// gets the second person's approval, sends it, and shows the result. A command id sent before
/// by this principal is answered by resending what was sent.
async fn send<T: WireCommand>(
    console: &Console,
    signed: &Signed,
    form: &Fields,
    build: impl FnOnce(&Fields) -> Result<T, Status>,
) -> Result<Response, Status> {
    let who = &signed.principal;
    // A role that may not send the command gets no approval asked for it; the ledger refuses
    // it and keeps the attempt, as it does a gRPC caller's (R-AUDIT-2, R-AUDIT-3).
    let permitted = access::authorize_call(who, T::RPC).is_ok();
    let command_id = required(form, "command_id")?;
    if !command_id.starts_with(COMMAND_ID_PREFIX) {
        return Err(status::invalid_field("command_id", "a command id drawn by this console"));
    }
    let property_id = console.property(who)?.id.clone();
    if form.get("property").map(String::as_str) != Some(property_id.as_str()) {
        return Err(status::invalid_field("property", "the form was drawn for another property than this session acts in now: open a fresh form"));
    }
    let entry = console.sent.lock().expect("console sent commands").entry(&command_id, &who.id);
    if entry.principal_id != who.id {
        return Err(status::invalid_field("command_id", "drawn for someone else"));
    }
    // Built once per form; a failure to build (a missing or malformed field) leaves it unbuilt,
    // so the corrected form can be sent under the same id.
    let (rpc, bytes) = entry
        .request
        .get_or_try_init(|| async {
            let mut message = build(form)?;
            // The session's property (the form's), named: a second person's approval is bound
            // to it (the approver's own default may be another).
            *message.header_mut() = Some(pb::CommandHeader {
                command_id: command_id.clone(),
                property_id: property_id.clone(),
                device: Some("console".to_string()),
                reason_note: form.get("note").map(|note| note.trim().to_string()).unwrap_or_default(),
                ..pb::CommandHeader::default()
            });
            // The gate's checks of request bytes (no integer beyond 2^53 - 1, no NUL, ...), as
            // for a request sent over gRPC: a form is no way around them.
            crate::protowire::compiled()
                .check_request(T::RPC, &message.encode_to_vec())
                .map_err(crate::protowire::Malformed::into_status)?;
            // And its fields as the ledger checks a gRPC request's, before a second person is
            // considered: a malformed form is answered as a malformed request, and nothing of it
            // is kept (the console pass had script and formula text kept as ids among the
            // refusals of a form refused for its second person). The people's fields are
            // named below.
            let mut errors = chipledger_proto::FieldErrors::new();
            let _ = message.to_domain(&mut errors);
            let people: Vec<&str> = message.approval_fields().iter().map(|(field, _)| *field).collect();
            errors.forget(&people);
            errors.finish()?;
            match if permitted { name_people(console, who, form, &mut message).await } else { Ok(()) } {
                Ok(()) => {}
                Err(Unnamed::Unsent(status)) => return Err(status),
                // Refused for its second person: kept among the refusals, as gRPC keeps a bad
                // approval (R-AUDIT-3), so the form's command id is spent.
                Err(Unnamed::Refused(refused)) => {
                    // The form as filled: its own fields (which the command was built from and
                    // checked as), without the tokens it carried or anything else posted with it
                    // (the console pass kept 1.5 MB of an extra field in the refusal chain), and
                    // only values of their field's form: a field this action does not read is
                    // checked by nothing else (the fixes' pass kept script, formula and
                    // bidirectional-override text as a fill's `player_id` and `amount`).
                    let filled: serde_json::Map<String, serde_json::Value> = form
                        .iter()
                        // As read and checked: trimmed (the fixes' pass kept line breaks and C1
                        // controls around a note the header had checked trimmed).
                        .map(|(name, value)| (name, value.trim()))
                        .filter(|(name, value)| kept_as_filled(name, value))
                        .map(|(name, value)| (name.clone(), serde_json::Value::String(value.chars().take(MAX_KEPT_FIELD_CHARS).collect())))
                        .collect();
                    return Err(console.services.ledger().refuse_second_person(who, &message, filled.into(), refused).await);
                }
            }
            Ok::<_, Status>((T::RPC, message.encode_to_vec()))
        })
        .await?;
    if *rpc != T::RPC {
        return Err(status::invalid_field("command_id", "drawn for another action"));
    }
    let message = T::decode(bytes.as_slice()).map_err(|error| status::internal("console resubmission", &error))?;
    let result = console.services.ledger().submit(who, message).await?;
    let units = Units::of(console.property(who)?.as_ref());
    let events: Vec<minijinja::Value> = result
        .events
        .iter()
        .map(|event| context! { position => event.global_position, stream => event.stream_id, kind => event.event_type })
        .collect();
    let balances: Vec<minijinja::Value> = result
        .balances
        .iter()
        .map(|balance| context! { account => balance.account, balance => units.money(balance.balance_cents) })
        .collect();
    let body = context! {
        action => T::RPC.rsplit('/').next().unwrap_or_default(),
        command_id => result.command_id,
        replayed => result.replayed,
        events => events,
        balances => balances,
        chain => result.chain_hash_hex,
    };
    Ok(console.page(signed, "recorded.html", "Recorded", body))
}

/// Why a form's command went without its second person.
enum Unnamed {
    /// Not considered (wrong second tokens entered too often): nothing to record.
    Unsent(Status),
    /// Refused for its second person: recorded as a refusal of the command.
    Refused(Status),
}

/// The second-person fields of the command: the caller where its role may sign, the person
/// whose token the form carries for the other field, proven by their approval token.
async fn name_people<T: WireCommand>(
    console: &Console,
    who: &Principal,
    form: &Fields,
    message: &mut T,
) -> Result<(), Unnamed> {
    let fields: Vec<&'static str> = message.approval_fields().iter().map(|(field, _)| *field).collect();
    if fields.is_empty() {
        return Ok(());
    }
    // The caller takes the first field its role may sign; the second person the other (a
    // refusal names the second person's field: it had named the caller's, `signer_1` of a
    // cage caller's fill).
    let caller_field = fields.iter().copied().find(|field| {
        access::approval_rule(T::RPC, field).is_some_and(|rule| rule.caller_may_sign && rule.roles.contains(&who.role))
    });
    let second_field = fields.iter().copied().find(|field| Some(*field) != caller_field).unwrap_or(fields[0]);
    let source = format!("second tokens entered by {}", who.id);
    if let Some(wait) = console.failures.wait(&source) {
        return Err(Unnamed::Unsent(Status::resource_exhausted(format!(
            "too many wrong second tokens: try again in {} s",
            wait.as_secs() + 1
        ))));
    }
    let refused = |reason: &str, why: &str| Unnamed::Refused(approval::denied(reason, "second_token", why.to_string(), &[("field", second_field)]));
    let second = match form.get("second_token").map(|token| token.trim()).filter(|token| !token.is_empty()) {
        Some(token) => match console.authenticator.authenticate(None, Some(&format!("Bearer {token}"))) {
            Ok(second) => second,
            Err(_) => {
                console.failures.failed(&source);
                return Err(refused("APPROVAL_INVALID", "the second token is not the token of a principal of this server"));
            }
        },
        None => return Err(refused("APPROVAL_MISSING", "the second person enters their own token (dual control)")),
    };
    if second.id == who.id {
        return Err(refused("APPROVER_IS_CALLER", "the second token is the caller's own: the second person must be someone else"));
    }
    let mut named: Vec<(&'static str, String)> = Vec::new();
    for field in &fields {
        if Some(*field) == caller_field {
            named.push((field, who.id.clone()));
        } else {
            named.push((field, second.id.clone()));
        }
    }
    for (field, id) in &named {
        message.set_approval_field(field, id);
    }
    let request = pb::ApproveRequest {
        command: Some(pb::Command { command: Some(message.clone().into_batch_entry()) }),
        ttl_seconds: 0,
    };
    let token = console
        .call(&second, rpc!(ApprovalService / Approve), request, |s, r| async move { s.approve(r).await })
        .await
        .map_err(|status| match status.code() {
            // The second person may not approve this command (their role, or the property).
            tonic::Code::PermissionDenied => Unnamed::Refused(approval::denied(
                "APPROVER_ROLE_NOT_PERMITTED",
                "second_token",
                format!("the second person {} may not approve this command: {}", second.id, status.message()),
                &[("field", second_field), ("approver", second.id.as_str())],
            )),
            _ => Unnamed::Unsent(status),
        })?;
    if let Some(header) = message.header_mut() {
        header.approvals.push(token.token);
    }
    Ok(())
}
