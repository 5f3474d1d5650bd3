//! Checks a request's protobuf bytes against its message descriptor before tonic decodes them,
//! so that bad input is INVALID_ARGUMENT with a `google.rpc.BadRequest` naming the field, never
//! INTERNAL: a malformed encoding (truncated, a varint too long, a wire type that is not the
//! field's, a message nested too deep), a string that is not UTF-8, or a string holding a NUL
//! (PostgreSQL text cannot store it) anywhere in the message. Fields this server does not know
//! are skipped as prost skips them; their encoding must still be well formed.

use std::collections::HashMap;

use prost::Message;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FileDescriptorSet};

use chipledger_proto::FieldErrors;

/// Nesting bound (prost's own decoder stops at 100).
const MAX_DEPTH: usize = 32;

#[derive(Debug, Clone)]
struct Field {
    name: String,
    kind: Type,
    repeated: bool,
    /// Fully qualified message type of a message field (".chipledger.v1.CommandHeader").
    message: Option<String>,
    /// A 64-bit integer field, bounded by [`check_integers`].
    integer: Option<Integer>,
}

/// How a 64-bit varint field reads its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Integer {
    /// int64 named `*_cents`: money (R-UNIT-1).
    Amount,
    Signed,
    Unsigned,
}

/// Message layouts of every chipledger.v1 type and the request type of every RPC.
#[derive(Debug, Default)]
pub struct Schemas {
    messages: HashMap<String, HashMap<u32, Field>>,
    /// "/chipledger.v1.TableService/BuyIn" -> ".chipledger.v1.BuyIn".
    inputs: HashMap<String, String>,
}

/// Why a request's bytes were refused: the field path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub field: String,
    pub problem: String,
}

impl Malformed {
    fn at(field: &str, problem: impl Into<String>) -> Malformed {
        Malformed { field: if field.is_empty() { "request".to_string() } else { field.to_string() }, problem: problem.into() }
    }

    pub fn into_status(self) -> tonic::Status {
        let mut errors = FieldErrors::new();
        errors.add(self.field, self.problem);
        errors.into_status()
    }
}

/// The schemas of the compiled-in descriptor set, built once.
pub fn compiled() -> &'static Schemas {
    static SCHEMAS: std::sync::OnceLock<Schemas> = std::sync::OnceLock::new();
    SCHEMAS.get_or_init(|| {
        Schemas::from_descriptor_set(chipledger_proto::FILE_DESCRIPTOR_SET).expect("the compiled-in descriptor set decodes")
    })
}

impl Schemas {
    /// From an encoded `FileDescriptorSet` (the one served to reflection).
    pub fn from_descriptor_set(encoded: &[u8]) -> Result<Schemas, prost::DecodeError> {
        let set = FileDescriptorSet::decode(encoded)?;
        let mut schemas = Schemas::default();
        for file in &set.file {
            let package = format!(".{}", file.package());
            for message in &file.message_type {
                schemas.add_message(&package, message);
            }
            for service in &file.service {
                for method in &service.method {
                    // A client stream's messages arrive over time: they are checked as the
                    // handler reads them (a request body cannot be read whole first).
                    if method.client_streaming() {
                        continue;
                    }
                    let path = format!("/{}.{}/{}", file.package(), service.name(), method.name());
                    schemas.inputs.insert(path, method.input_type().to_string());
                }
            }
        }
        Ok(schemas)
    }

    fn add_message(&mut self, scope: &str, message: &DescriptorProto) {
        let name = format!("{scope}.{}", message.name());
        let fields = message
            .field
            .iter()
            .map(|field| {
                let kind = field.r#type();
                let described = Field {
                    name: field.name().to_string(),
                    kind,
                    repeated: field.label() == Label::Repeated,
                    message: matches!(kind, Type::Message).then(|| field.type_name().to_string()),
                    integer: match kind {
                        Type::Int64 if field.name().ends_with("_cents") => Some(Integer::Amount),
                        Type::Int64 => Some(Integer::Signed),
                        Type::Uint64 => Some(Integer::Unsigned),
                        _ => None,
                    },
                };
                (field.number() as u32, described)
            })
            .collect();
        for nested in &message.nested_type {
            self.add_message(&name, nested);
        }
        self.messages.insert(name, fields);
    }

    /// Checks one message of the named type (`.chipledger.v1.Command`): what the handler of a
    /// client stream does for each message it reads.
    pub fn check_message_of(&self, type_name: &str, bytes: &[u8]) -> Result<(), Malformed> {
        self.check_message(type_name, bytes, "", 0)
    }

    /// Checks one request message of the RPC at `path` (`/chipledger.v1.TableService/Fill`):
    /// what the gate checks of a request a caller sends, for one built in this process (the
    /// console's forms), so that no way in skips it. An unknown path is not checked.
    pub fn check_request(&self, path: &str, bytes: &[u8]) -> Result<(), Malformed> {
        match self.inputs.get(path) {
            Some(input) => self.check_message(input, bytes, "", 0),
            None => Ok(()),
        }
    }

    /// True when `path` is an RPC of these files.
    pub fn knows(&self, path: &str) -> bool {
        self.inputs.contains_key(path)
    }

    /// Checks every gRPC frame of a request body for `path` (an unknown path is not checked:
    /// it is refused elsewhere). Compressed frames are left to tonic.
    pub fn check_body(&self, path: &str, mut body: &[u8]) -> Result<(), Malformed> {
        let Some(input) = self.inputs.get(path) else { return Ok(()) };
        while !body.is_empty() {
            if body.len() < 5 {
                return Err(Malformed::at("", "truncated gRPC frame header"));
            }
            let compressed = body[0] != 0;
            let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
            let rest = &body[5..];
            if rest.len() < length {
                return Err(Malformed::at("", format!("gRPC frame announces {length} bytes, {} sent", rest.len())));
            }
            if !compressed {
                self.check_message(input, &rest[..length], "", 0)?;
            }
            body = &rest[length..];
        }
        Ok(())
    }

    fn check_message(&self, message: &str, mut bytes: &[u8], path: &str, depth: usize) -> Result<(), Malformed> {
        if depth > MAX_DEPTH {
            return Err(Malformed::at(path, format!("messages nested deeper than {MAX_DEPTH}")));
        }
        let fields = self.messages.get(message);
        let mut occurrences: HashMap<u32, usize> = HashMap::new();
        while !bytes.is_empty() {
            let key = varint(&mut bytes).ok_or_else(|| Malformed::at(path, "malformed field key"))?;
            let number = u32::try_from(key >> 3).map_err(|_| Malformed::at(path, "field number out of range"))?;
            let wire_type = (key & 7) as u8;
            if number == 0 {
                return Err(Malformed::at(path, "field number 0"));
            }
            let field = fields.and_then(|fields| fields.get(&number));
            let field_path = match field {
                Some(field) => {
                    let name = if path.is_empty() { field.name.clone() } else { format!("{path}.{}", field.name) };
                    if field.repeated {
                        let index = occurrences.entry(number).or_default();
                        *index += 1;
                        format!("{name}[{}]", *index - 1)
                    } else {
                        name
                    }
                }
                None => format!("{}#{number}", if path.is_empty() { "request" } else { path }),
            };
            let value = take_value(&mut bytes, wire_type).ok_or_else(|| {
                Malformed::at(&field_path, format!("malformed or truncated value (wire type {wire_type})"))
            })?;
            let Some(field) = field else { continue };
            check_wire_type(field, wire_type, value, &field_path)?;
            if let Some(integer) = field.integer {
                check_integers(integer, value, &field_path)?;
            }
            match (field.kind, wire_type) {
                (Type::String, 2) => {
                    let text = std::str::from_utf8(value).map_err(|_| Malformed::at(&field_path, "not valid UTF-8"))?;
                    if text.contains('\0') {
                        return Err(Malformed::at(&field_path, "contains a NUL character (U+0000)"));
                    }
                }
                (Type::Message, 2) => {
                    let nested = field.message.as_deref().unwrap_or_default();
                    self.check_message(nested, value, &field_path, depth + 1)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The wire type must be the field's (or, for a repeated scalar, the packed form).
fn check_wire_type(field: &Field, wire_type: u8, value: &[u8], path: &str) -> Result<(), Malformed> {
    let expected = match field.kind {
        Type::Int32 | Type::Int64 | Type::Uint32 | Type::Uint64 | Type::Sint32 | Type::Sint64 | Type::Bool | Type::Enum => 0,
        Type::Fixed64 | Type::Sfixed64 | Type::Double => 1,
        Type::Fixed32 | Type::Sfixed32 | Type::Float => 5,
        Type::String | Type::Bytes | Type::Message => 2,
        Type::Group => 3,
    };
    if wire_type == expected {
        return Ok(());
    }
    if wire_type == 2 && field.repeated && expected != 2 && expected != 3 {
        // Packed repeated scalars: whole elements only.
        let mut rest = value;
        while !rest.is_empty() {
            let ok = match expected {
                0 => varint(&mut rest).is_some(),
                1 => skip(&mut rest, 8),
                _ => skip(&mut rest, 4),
            };
            if !ok {
                return Err(Malformed::at(path, "malformed packed repeated field"));
            }
        }
        return Ok(());
    }
    Err(Malformed::at(path, format!("wire type {wire_type} is not that of a {:?} field", field.kind)))
}

/// Every 64-bit integer of a field (one varint, or a packed run of them) within 2^53 - 1 either
/// way: what a command carries goes into the chained JSON of an event or of a refusal, which
/// holds no larger integer exactly (chain.rs), so a larger one is refused here, with its field,
/// before a rule judges it. (No count, slip, marker or hand number, time or position the ledger
/// keeps comes near it; an amount names R-UNIT-1.)
fn check_integers(integer: Integer, mut value: &[u8], path: &str) -> Result<(), Malformed> {
    let limit = chipledger_store::chain::MAX_SAFE_INTEGER as u64;
    while let Some(raw) = varint(&mut value) {
        let signed = integer != Integer::Unsigned;
        if (if signed { (raw as i64).unsigned_abs() } else { raw }) <= limit {
            continue;
        }
        let shown = if signed { (raw as i64).to_string() } else { raw.to_string() };
        let problem = match integer {
            Integer::Amount => format!("{shown} cents is beyond 2^53 - 1, the largest amount the hash chain's JSON holds exactly (R-UNIT-1)"),
            Integer::Signed | Integer::Unsigned => format!("{shown} is beyond 2^53 - 1, the largest integer the hash chain's JSON holds exactly"),
        };
        return Err(Malformed::at(path, problem));
    }
    Ok(())
}

fn skip(bytes: &mut &[u8], count: usize) -> bool {
    if bytes.len() < count {
        return false;
    }
    *bytes = &bytes[count..];
    true
}

/// A base-128 varint of at most 10 bytes that fits 64 bits.
fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value: u64 = 0;
    for index in 0..10 {
        let byte = *bytes.get(index)?;
        if index == 9 && byte > 1 {
            return None;
        }
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            *bytes = &bytes[index + 1..];
            return Some(value);
        }
    }
    None
}

/// The bytes of one value (its payload for length-delimited values), advancing past it.
/// Groups (wire types 3 and 4, deprecated, unused by this API) are refused.
fn take_value<'a>(bytes: &mut &'a [u8], wire_type: u8) -> Option<&'a [u8]> {
    let all: &'a [u8] = bytes;
    let length = match wire_type {
        0 => {
            let before = bytes.len();
            varint(bytes)?;
            return Some(&all[..before - bytes.len()]);
        }
        1 => 8,
        5 => 4,
        2 => usize::try_from(varint(bytes)?).ok()?,
        _ => return None,
    };
    let payload: &'a [u8] = bytes;
    if payload.len() < length {
        return None;
    }
    *bytes = &payload[length..];
    Some(&payload[..length])
}

#[cfg(test)]
mod tests {
    use chipledger_proto::v1 as pb;

    use super::*;

    fn schemas() -> Schemas {
        Schemas::from_descriptor_set(chipledger_proto::FILE_DESCRIPTOR_SET).expect("descriptor set")
    }

    fn frame(message: &[u8]) -> Vec<u8> {
        let mut body = vec![0];
        body.extend_from_slice(&(message.len() as u32).to_be_bytes());
        body.extend_from_slice(message);
        body
    }

    const BUY_IN: &str = "/chipledger.v1.TableService/BuyIn";
    const OPEN_CAGE: &str = "/chipledger.v1.CageService/OpenCage";
    const START_HAND: &str = "/chipledger.v1.TableService/StartHand";

    fn buy_in(player_id: &str) -> Vec<u8> {
        pb::BuyIn {
            header: Some(pb::CommandHeader { command_id: "c1".into(), reason_note: "ok".into(), ..Default::default() }),
            table_id: "T1".into(),
            seat: 3,
            player_id: player_id.into(),
            amount_cents: 20_000,
            source: 1,
            supervisor_id: None,
            short_buy: false,
        }
        .encode_to_vec()
    }

    #[test]
    fn a_well_formed_request_passes_and_every_rpc_has_a_known_input() {
        let schemas = schemas();
        assert!(schemas.check_body(BUY_IN, &frame(&buy_in("P7"))).is_ok());
        let batch = pb::RecordBatch {
            header: None,
            commands: vec![pb::Command { command: Some(pb::command::Command::Act(pb::Act { seat: 2, ..Default::default() })) }],
        };
        assert!(schemas.check_body("/chipledger.v1.LedgerService/RecordBatch", &frame(&batch.encode_to_vec())).is_ok());
        let packed = pb::CollectTime { header: None, table_id: "T1".into(), seats: vec![1, 2, 300] };
        assert!(schemas.check_body("/chipledger.v1.TableService/CollectTime", &frame(&packed.encode_to_vec())).is_ok());
        for input in schemas.inputs.values() {
            assert!(schemas.messages.contains_key(input), "{input}");
        }
    }

    #[test]
    fn a_nul_anywhere_is_refused_with_the_field_path() {
        let schemas = schemas();
        let refused = schemas.check_body(BUY_IN, &frame(&buy_in("P\0"))).unwrap_err();
        assert_eq!(refused.field, "player_id");
        let nested = pb::RecordBatch {
            header: None,
            commands: vec![
                pb::Command { command: Some(pb::command::Command::Tip(pb::Tip::default())) },
                pb::Command {
                    command: Some(pb::command::Command::KittyExpense(pb::KittyExpense {
                        header: Some(pb::CommandHeader { reason_note: "a\0b".into(), ..Default::default() }),
                        ..Default::default()
                    })),
                },
            ],
        };
        let refused = schemas.check_body("/chipledger.v1.LedgerService/RecordBatch", &frame(&nested.encode_to_vec())).unwrap_err();
        assert_eq!(refused.field, "commands[1].kitty_expense.header.reason_note");
        assert_eq!(refused.into_status().code(), tonic::Code::InvalidArgument);
    }

    #[test]
    fn an_integer_beyond_what_the_chain_holds_exactly_is_refused_with_its_field() {
        let schemas = schemas();
        let limit = chipledger_store::chain::MAX_SAFE_INTEGER;
        let with_amount = |amount_cents: i64| {
            let mut message = pb::BuyIn::decode(buy_in("P7").as_slice()).unwrap();
            message.amount_cents = amount_cents;
            frame(&message.encode_to_vec())
        };
        for amount in [limit, -limit, 0] {
            assert!(schemas.check_body(BUY_IN, &with_amount(amount)).is_ok(), "{amount}");
        }
        for amount in [limit + 1, -limit - 1, i64::MAX, i64::MIN] {
            let refused = schemas.check_body(BUY_IN, &with_amount(amount)).unwrap_err();
            assert_eq!(refused.field, "amount_cents", "{amount}");
            assert!(refused.problem.contains("R-UNIT-1"), "{}", refused.problem);
        }
        // A packed repeated amount, each element.
        let cage = pb::OpenCage { cage_id: "K1".into(), denominations_cents: vec![100, limit + 1], ..Default::default() };
        let refused = schemas.check_body(OPEN_CAGE, &frame(&cage.encode_to_vec())).unwrap_err();
        assert_eq!(refused.field, "denominations_cents[0]", "one packed run");
        // Any other 64-bit integer too: a chip count (int64), a hand number (uint64, where the
        // largest values would read as small negatives if taken as signed).
        let cage = pb::OpenCage { cage_id: "K1".into(), chips: vec![pb::ChipCount { denomination_cents: 100, count: limit + 1 }], ..Default::default() };
        let refused = schemas.check_body(OPEN_CAGE, &frame(&cage.encode_to_vec())).unwrap_err();
        assert_eq!(refused.field, "chips[0].count");
        assert!(refused.problem.contains(&(limit + 1).to_string()) && !refused.problem.contains("cents"), "{}", refused.problem);
        for hand_no in [limit as u64 + 1, u64::MAX] {
            let start = pb::StartHand { table_id: "T1".into(), hand_no, ..Default::default() };
            let refused = schemas.check_body(START_HAND, &frame(&start.encode_to_vec())).unwrap_err();
            assert_eq!((refused.field.as_str(), refused.problem.contains(&hand_no.to_string())), ("hand_no", true), "{hand_no}");
        }
        let start = pb::StartHand { table_id: "T1".into(), hand_no: limit as u64, ..Default::default() };
        assert!(schemas.check_body(START_HAND, &frame(&start.encode_to_vec())).is_ok());
    }

    #[test]
    fn malformed_encodings_are_refused() {
        let schemas = schemas();
        let good = buy_in("P7");
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("truncated", good[..good.len() - 3].to_vec()),
            ("length past the end", vec![0x22, 0x7f, b'P']),
            ("endless varint", vec![0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
            ("string field sent as varint", vec![0x22, 0x01, b'x', 0x20, 0x05, 0x12, 0x00, 0x12, 0x02, 0x08]),
            ("field number zero", vec![0x00, 0x01]),
            ("group wire type", vec![0x0b, 0x0c]),
            ("invalid utf-8", vec![0x22, 0x02, 0xc3, 0x28]),
            ("message field as fixed32", vec![0x0d, 0, 0, 0, 0]),
        ];
        for (what, message) in cases {
            let refused = schemas.check_body(BUY_IN, &frame(&message));
            assert!(refused.is_err(), "{what} passed");
        }
        // A frame shorter than it says.
        let mut short = frame(&good);
        short.truncate(short.len() - 1);
        assert!(schemas.check_body(BUY_IN, &short).is_err());
        // Unknown fields are skipped when well formed, refused when not.
        let mut unknown = good.clone();
        unknown.extend_from_slice(&[0xf8, 0x07, 0x01]); // field 127, varint 1
        assert!(schemas.check_body(BUY_IN, &frame(&unknown)).is_ok());
        let mut broken_unknown = good;
        broken_unknown.extend_from_slice(&[0xfa, 0x07, 0x05, 0x01]); // field 127, 5 bytes announced
        assert!(schemas.check_body(BUY_IN, &frame(&broken_unknown)).is_err());
    }
}
