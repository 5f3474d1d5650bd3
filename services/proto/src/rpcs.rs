//! The one table of the API's RPCs ([`rpc_table!`] below): per RPC its service, its method, the
//! roles that may call it and, for a command, its wire message (named as its variant of the
//! `Command` oneof) and its second-person fields with the roles that may fill them. Everything
//! else is generated from it: the role table of the gate ([`RPCS`], [`allowed_roles`]), the
//! approval table ([`APPROVAL_RULES`]), each command message's [`WireCommand`] impl, and the
//! dispatch of a batch or stream entry (`pb::command::Command`) to its RPC, header, domain form
//! and approval fields. A dealer cannot issue a marker or approve a correction, an auditor can
//! only read.

use chipledger_rules::Role;
use prost::Message;

use crate::codec::{Decidable, FieldErrors, ToDomain};
use crate::v1 as pb;

use Role::{Admin, Auditor, Cage, Dealer, FloorSupervisor, System};

/// Plays at a table: seating, chips in and out of a seat, hands.
const TABLE_PLAY: &[Role] = &[Dealer, FloorSupervisor, Admin, System];
/// Table management and approvals (corrections, kitty expenses, moves).
const FLOOR: &[Role] = &[FloorSupervisor, Admin, System];
/// Cage windows: cash for chips, chips for cash, marker redemption.
const CAGE: &[Role] = &[Cage, Admin, System];
/// Fills and credits need the cage and the floor (R-CHIP-3).
const CAGE_AND_FLOOR: &[Role] = &[Cage, FloorSupervisor, Admin, System];
/// Credit decisions (credit lines, write-offs).
const CREDIT: &[Role] = &[Admin, System];
/// What a dealer needs to read to run the table.
const TABLE_READ: &[Role] = &[Dealer, FloorSupervisor, Cage, Auditor, Admin, System];
/// The log and balances.
const LEDGER_READ: &[Role] = &[FloorSupervisor, Cage, Auditor, Admin, System];
/// Reconciliation reports.
const RECONCILE: &[Role] = &[FloorSupervisor, Cage, Auditor, Admin, System];
/// Compliance (cash activity per patron).
const COMPLIANCE: &[Role] = &[Cage, Auditor, Admin, System];
/// Rejected attempts and the chain.
const AUDIT: &[Role] = &[Auditor, FloorSupervisor, Admin, System];
const CHAIN: &[Role] = &[Auditor, Admin, System];
/// A batch is allowed to anyone who writes; each command inside is checked on its own.
const BATCH: &[Role] = &[Dealer, FloorSupervisor, Cage, Admin, System];
/// Approvals: every role that may fill some field of [`APPROVAL_RULES`].
pub const APPROVERS: &[Role] = &[Cage, FloorSupervisor, Admin];

/// Supervisors of the floor: large buy-ins (R-CHIP-2), corrections (R-AUDIT-1), markers (R-MARK-1).
const SUPERVISORS: &[Role] = &[FloorSupervisor, Admin];
/// A slip's two signers (R-CHIP-3): one from the cage, one from the floor.
const CAGE_SIGNER: &[Role] = &[Cage];
const FLOOR_SIGNER: &[Role] = &[FloorSupervisor, Admin];
/// A count's two signers (R-CHIP-4): the people who counted, from the floor or the cage; the
/// caller may be one of them.
const COUNT_SIGNER: &[Role] = &[FloorSupervisor, Cage, Admin];
/// Credit decisions: a credit line and a write-off need a second admin (R-MARK-1).
const CREDIT_APPROVER: &[Role] = &[Admin];

/// One RPC of the API and the roles that may call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rpc {
    /// "/chipledger.v1.TableService/BuyIn"
    pub path: &'static str,
    pub roles: &'static [Role],
}

/// One second-person field of a command (dual control): the RPC, the wire field, the roles whose
/// principals may fill it, and whether the caller may fill it with its own id (a slip's own
/// signer; proven by the caller's credential). Every other name must be proven by an approval
/// token of that principal (`CommandHeader.approvals`), and nobody approves their own command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalRule {
    pub rpc: &'static str,
    pub field: &'static str,
    pub roles: &'static [Role],
    pub caller_may_sign: bool,
    /// The rule of this dual control (R-CHIP-3 for a slip's signers), named by its refusals.
    pub rule: &'static str,
}

/// A wire command message: its RPC (the key of the role table), header, domain form and
/// second-person fields.
pub trait WireCommand: ToDomain + Message + Clone + Default + 'static {
    /// The RPC path of this command ([`allowed_roles`]).
    const RPC: &'static str;
    fn header(&self) -> Option<&pb::CommandHeader>;
    fn header_mut(&mut self) -> &mut Option<pb::CommandHeader>;
    /// The same message as a batch entry.
    fn into_batch_entry(self) -> pb::command::Command;
    /// The second-person fields (wire name, principal id named), as listed for this RPC in
    /// [`APPROVAL_RULES`].
    fn approval_fields(&self) -> Vec<(&'static str, Option<&str>)>;
    fn clear_approval_fields(&mut self);
    /// Names `principal_id` in the second-person field `field`; false for no such field.
    fn set_approval_field(&mut self, field: &str, principal_id: &str) -> bool;

    /// What an approval of this command is bound to: the message with the header's device and
    /// approvals and the second-person fields cleared, under `command_id` and `property_id` (as
    /// the server resolves them). Protobuf encoding of our messages is deterministic (no maps).
    fn approval_bytes(&self, command_id: &str, property_id: &str) -> Vec<u8> {
        let mut message = self.clone();
        message.clear_approval_fields();
        let header = message.header_mut().get_or_insert_with(pb::CommandHeader::default);
        header.command_id = command_id.to_string();
        header.property_id = property_id.to_string();
        header.device = None;
        header.approvals.clear();
        // An import's actor and time are bound beside the bytes, from the header that names
        // them (a batch's for its entries): `approval::command_digest`.
        header.import_actor_id = None;
        header.import_occurred_at_unix_ms = None;
        message.encode_to_vec()
    }
}

/// A second-person field of a wire message (`approved_by: string`, `supervisor_id: optional string`).
trait ApprovalField {
    fn named(&self) -> Option<&str>;
    fn clear(&mut self);
    fn set(&mut self, principal_id: &str);
}

impl ApprovalField for String {
    fn named(&self) -> Option<&str> {
        Some(self.as_str()).filter(|name| !name.is_empty())
    }
    fn clear(&mut self) {
        self.clear();
    }
    fn set(&mut self, principal_id: &str) {
        *self = principal_id.to_string();
    }
}

impl ApprovalField for Option<String> {
    fn named(&self) -> Option<&str> {
        self.as_deref().filter(|name| !name.is_empty())
    }
    fn clear(&mut self) {
        *self = None;
    }
    fn set(&mut self, principal_id: &str) {
        *self = Some(principal_id.to_string());
    }
}

/// What is done with the message of a `Command` oneof entry, whichever message it is (the
/// server submits it exactly as its own unary RPC).
pub trait CommandVisitor {
    type Output;
    fn visit<T: WireCommand>(self, message: T) -> Self::Output;
}

/// `$value`, for a repetition that must name `$row`'s metavariable to be repeated with it.
macro_rules! of_row {
    ($row:tt, $value:expr) => {
        $value
    };
}

/// `| caller` after a second-person field: the caller may fill it with its own id.
macro_rules! caller_may_sign {
    () => {
        false
    };
    (caller) => {
        true
    };
}

/// What the table makes in this crate. A row of [`rpc_table!`] is `method: Method => ROLES` for
/// an RPC that is no single command, and `method: Method(Message; field: FIELD_ROLES [| caller],
/// ...) => ROLES` for a command: `method` is the RPC's Rust name (tonic's), `Message` its
/// request message and its variant of the `Command` oneof, the fields after `;` its
/// second-person fields.
macro_rules! rpcs {
    (; $(
        $service:ident {
            $( $rust_name:ident: $method:ident $( ( $message:ident $( ; $( $field:ident: $field_roles:ident $(| $caller:ident)? ),+ ; $rule:literal )? ) )? => $roles:ident, )*
        }
    )*) => {
        /// Every RPC of every chipledger.v1 service, with the roles that may call it.
        pub const RPCS: &[Rpc] = &[$($(
            Rpc { path: concat!("/chipledger.v1.", stringify!($service), "/", stringify!($method)), roles: $roles },
        )*)*];

        /// The RPCs that are one command each (their message a [`WireCommand`]): the ledger
        /// checks their role itself, so that a call refused for it is kept among the refusals.
        pub const COMMAND_RPCS: &[&str] = &[$($($(
            of_row!($message, concat!("/chipledger.v1.", stringify!($service), "/", stringify!($method))),
        )?)*)*];

        /// Every second-person field of the API. System principals (machines) never approve.
        pub const APPROVAL_RULES: &[ApprovalRule] = &[$($($($($(
            ApprovalRule {
                rpc: concat!("/chipledger.v1.", stringify!($service), "/", stringify!($method)),
                field: stringify!($field),
                roles: $field_roles,
                caller_may_sign: caller_may_sign!($($caller)?),
                rule: $rule,
            },
        )+)?)?)*)*];

        $($($(
            impl WireCommand for pb::$message {
                const RPC: &'static str = concat!("/chipledger.v1.", stringify!($service), "/", stringify!($method));
                fn header(&self) -> Option<&pb::CommandHeader> {
                    self.header.as_ref()
                }
                fn header_mut(&mut self) -> &mut Option<pb::CommandHeader> {
                    &mut self.header
                }
                fn into_batch_entry(self) -> pb::command::Command {
                    pb::command::Command::$message(self)
                }
                fn approval_fields(&self) -> Vec<(&'static str, Option<&str>)> {
                    vec![$($((stringify!($field), ApprovalField::named(&self.$field))),+)?]
                }
                fn clear_approval_fields(&mut self) {
                    $($(ApprovalField::clear(&mut self.$field);)+)?
                }
                #[allow(unused_variables)]
                fn set_approval_field(&mut self, field: &str, principal_id: &str) -> bool {
                    $($(if field == stringify!($field) {
                        ApprovalField::set(&mut self.$field, principal_id);
                        return true;
                    })+)?
                    false
                }
            }
        )?)*)*

        /// A batch or stream entry is the command of its message, checked as its own RPC.
        impl ToDomain for pb::command::Command {
            fn to_domain(&self, errors: &mut FieldErrors) -> Option<Decidable> {
                match self {
                    $($($(pb::command::Command::$message(message) => message.to_domain(errors),)?)*)*
                }
            }
        }

        /// The [`WireCommand`] of whichever message an entry holds.
        impl pb::command::Command {
            /// The message's name ("BuyIn").
            pub fn message_name(&self) -> &'static str {
                match self {
                    $($($(pb::command::Command::$message(_) => stringify!($message),)?)*)*
                }
            }

            /// The RPC path the entry is checked as.
            pub fn rpc(&self) -> &'static str {
                match self {
                    $($($(pb::command::Command::$message(_) => <pb::$message as WireCommand>::RPC,)?)*)*
                }
            }

            pub fn header(&self) -> Option<&pb::CommandHeader> {
                match self {
                    $($($(pb::command::Command::$message(message) => message.header(),)?)*)*
                }
            }

            pub fn header_mut(&mut self) -> &mut Option<pb::CommandHeader> {
                match self {
                    $($($(pb::command::Command::$message(message) => message.header_mut(),)?)*)*
                }
            }

            /// [`WireCommand::approval_fields`] of the message.
            pub fn approval_fields(&self) -> Vec<(&'static str, Option<&str>)> {
                match self {
                    $($($(pb::command::Command::$message(message) => message.approval_fields(),)?)*)*
                }
            }

            /// [`WireCommand::approval_bytes`] of the message.
            pub fn approval_bytes(&self, command_id: &str, property_id: &str) -> Vec<u8> {
                match self {
                    $($($(pb::command::Command::$message(message) => message.approval_bytes(command_id, property_id),)?)*)*
                }
            }

            /// Names `principal_id` in the second-person field `field`; false for no such field.
            pub fn set_approval_field(&mut self, field: &str, principal_id: &str) -> bool {
                match self {
                    $($($(pb::command::Command::$message(message) => message.set_approval_field(field, principal_id),)?)*)*
                }
            }

            /// Hands the message, as its own type, to `visitor`.
            pub fn visit<V: CommandVisitor>(self, visitor: V) -> V::Output {
                match self {
                    $($($(pb::command::Command::$message(message) => visitor.visit(message),)?)*)*
                }
            }
        }

        /// (method, Rust name) of every row, for the test that they agree.
        #[cfg(test)]
        const RUST_NAMES: &[(&str, &str)] = &[$($((stringify!($method), stringify!($rust_name)),)*)*];

        /// One empty message of every command (tests walk every command with it).
        #[cfg(test)]
        fn every_command() -> Vec<pb::command::Command> {
            vec![$($($(pb::command::Command::$message(Default::default()),)?)*)*]
        }
    };
}

/// Calls `$callback! { $($args)* ; <the table> }`: the one list of RPCs, for what has to be
/// written once per RPC in another crate (chipledgerd's service impls). The rows are read by
/// `rpcs!`'s grammar (below).
#[macro_export]
macro_rules! rpc_table {
    ($callback:ident ! ($($args:tt)*)) => {
        $callback! { $($args)* ;
            TableService {
                open_table: OpenTable(OpenTable) => FLOOR,
                change_table_config: ChangeTableConfig(ChangeTableConfig) => FLOOR,
                close_shift: CloseShift(CloseShift; signer_1: COUNT_SIGNER | caller, signer_2: COUNT_SIGNER | caller; "R-CHIP-4") => FLOOR,
                seat_player: SeatPlayer(SeatPlayer) => TABLE_PLAY,
                move_player: MovePlayer(MovePlayer) => FLOOR,
                buy_in: BuyIn(BuyIn; supervisor_id: SUPERVISORS; "R-CHIP-2") => TABLE_PLAY,
                top_up: TopUp(TopUp; supervisor_id: SUPERVISORS; "R-CHIP-2") => TABLE_PLAY,
                cash_in_play: CashInPlay(CashInPlay; supervisor_id: SUPERVISORS; "R-CHIP-2") => TABLE_PLAY,
                convert_cash_in_play: ConvertCashInPlay(ConvertCashInPlay) => TABLE_PLAY,
                cash_out: CashOut(CashOut) => TABLE_PLAY,
                remove_chips: RemoveChips(RemoveChips) => TABLE_PLAY,
                color_change: ColorChange(ColorChange) => TABLE_PLAY,
                tip: Tip(Tip) => TABLE_PLAY,
                kitty_expense: KittyExpense(KittyExpense) => FLOOR,
                collect_time: CollectTime(CollectTime) => TABLE_PLAY,
                start_hand: StartHand(StartHand) => TABLE_PLAY,
                post: Post(Post) => TABLE_PLAY,
                act: Act(Act) => TABLE_PLAY,
                next_round: NextRound(NextRound) => TABLE_PLAY,
                showdown: Showdown(Showdown) => TABLE_PLAY,
                end_hand: EndHand(EndHand) => TABLE_PLAY,
                write_iou: WriteIou(WriteIou) => TABLE_PLAY,
                sit_out: SitOut(SitOut) => TABLE_PLAY,
                sit_in: SitIn(SitIn) => TABLE_PLAY,
                put_out_chips: PutOutChips(PutOutChips) => TABLE_PLAY,
                bring_up_short_bet: BringUpShortBet(BringUpShortBet) => TABLE_PLAY,
                take_back_short_call: TakeBackShortCall(TakeBackShortCall) => TABLE_PLAY,
                settle_iou: SettleIou(SettleIou) => TABLE_PLAY,
                close_game: CloseGame(CloseGame) => FLOOR,
                pay_jackpot: PayJackpot(PayJackpot; approved_by: SUPERVISORS; "R-RAKE-2") => FLOOR,
                deal_up_cards: DealUpCards(DealUpCards) => TABLE_PLAY,
                award_pots: AwardPots(AwardPots) => TABLE_PLAY,
                get_table: GetTable => TABLE_READ,
                get_legal_actions: GetLegalActions => TABLE_READ,
                get_hand: GetHand => TABLE_READ,
            }
            CageService {
                open_cage: OpenCage(OpenCage) => CAGE,
                sell_chips: SellChips(SellChips; supervisor_id: SUPERVISORS; "R-CHIP-2") => CAGE,
                redeem_chips: RedeemChips(RedeemChips) => CAGE,
                fill: Fill(Fill; signer_1: CAGE_SIGNER | caller, signer_2: FLOOR_SIGNER | caller; "R-CHIP-3") => CAGE_AND_FLOOR,
                credit: Credit(Credit; signer_1: CAGE_SIGNER | caller, signer_2: FLOOR_SIGNER | caller; "R-CHIP-3") => CAGE_AND_FLOOR,
                close_gaming_day: CloseGamingDay(CloseGamingDay) => CAGE,
                void_slip: VoidSlip(VoidSlip; signer_1: CAGE_SIGNER | caller, signer_2: FLOOR_SIGNER | caller; "R-CHIP-3") => CAGE_AND_FLOOR,
                cage_color_change: CageColorChange(CageColorChange) => CAGE,
                count_cage_shift: CountCageShift(CountCageShift; signer_1: COUNT_SIGNER | caller, signer_2: COUNT_SIGNER | caller; "R-CHIP-4") => CAGE,
                set_credit_line: SetCreditLine(SetCreditLine; approved_by: CREDIT_APPROVER; "R-MARK-1") => CREDIT,
                issue_marker: IssueMarker(IssueMarker; approved_by: SUPERVISORS; "R-MARK-1") => CAGE_AND_FLOOR,
                redeem_marker: RedeemMarker(RedeemMarker) => CAGE,
                write_off_marker: WriteOffMarker(WriteOffMarker; approved_by: CREDIT_APPROVER; "R-MARK-1") => CREDIT,
            }
            LedgerService {
                // Each command of a batch or a stream is checked again against its own RPC's roles.
                record_batch: RecordBatch => BATCH,
                record_stream: RecordStream => BATCH,
                correct: Correct(Correction; approved_by: SUPERVISORS; "R-AUDIT-1") => FLOOR,
                get_balance: GetBalance => LEDGER_READ,
                list_events: ListEvents => LEDGER_READ,
                list_player_history: ListPlayerHistory => LEDGER_READ,
                list_player_sessions: ListPlayerSessions => LEDGER_READ,
                subscribe: Subscribe => LEDGER_READ,
                get_property: GetProperty => TABLE_READ,
            }
            AuditService {
                table_shift_reconciliation: TableShiftReconciliation => RECONCILE,
                gaming_day_reconciliation: GamingDayReconciliation => RECONCILE,
                patron_cash_activity: PatronCashActivity => COMPLIANCE,
                list_rejections: ListRejections => AUDIT,
                verify_chain: VerifyChain => CHAIN,
                get_chain_digest: GetChainDigest => CHAIN,
                list_checkpoints: ListCheckpoints => CHAIN,
                sign_checkpoint: SignCheckpoint => CHAIN,
                get_checkpoint_key: GetCheckpointKey => CHAIN,
            }
            ApprovalService {
                approve: Approve => APPROVERS,
            }
        }
    };
}

crate::rpc_table!(rpcs!());

/// The roles allowed to call the RPC at `path` ("/chipledger.v1.TableService/BuyIn").
/// `None` for an unknown path: refused (deny by default).
pub fn allowed_roles(path: &str) -> Option<&'static [Role]> {
    RPCS.iter().find(|rpc| rpc.path == path).map(|rpc| rpc.roles)
}

/// The rule of the dual control of the command at `rpc` (its second-person fields share one).
pub fn dual_control_rule(rpc: &str) -> Option<&'static str> {
    APPROVAL_RULES.iter().find(|rule| rule.rpc == rpc).map(|rule| rule.rule)
}

/// The second-person field `field` of the command at `rpc`.
pub fn approval_rule(rpc: &str, field: &str) -> Option<&'static ApprovalRule> {
    APPROVAL_RULES.iter().find(|rule| rule.rpc == rpc && rule.field == field)
}

/// The command id of entry `index` of a submission: the submission's own id for the first (a
/// single command is a submission of one), `<id>/<index>` for the others. Approvals of batch
/// entries are bound to it.
pub fn entry_command_id(command_id: &str, index: usize) -> String {
    if index == 0 { command_id.to_string() } else { format!("{command_id}/{index}") }
}

/// One command as a second person sees it: its RPC, header, second-person fields, and the bytes
/// an approval binds (`WireCommand::approval_bytes`).
pub struct ApprovalView<'a> {
    pub rpc: &'static str,
    pub header: Option<&'a pb::CommandHeader>,
    pub fields: Vec<(&'static str, Option<&'a str>)>,
    pub bytes: Vec<u8>,
}

/// The [`ApprovalView`] of a command under `command_id` and `property_id`.
pub fn approval_view<'a>(entry: &'a pb::command::Command, command_id: &str, property_id: &str) -> ApprovalView<'a> {
    ApprovalView {
        rpc: entry.rpc(),
        header: entry.header(),
        fields: entry.approval_fields(),
        bytes: entry.approval_bytes(command_id, property_id),
    }
}

/// The header, role-table key and domain form of one batch entry.
pub fn batch_entry<'a>(
    entry: &'a pb::command::Command,
    errors: &mut FieldErrors,
) -> (Option<&'a pb::CommandHeader>, &'static str, Option<Decidable>) {
    (entry.header(), entry.rpc(), entry.to_domain(errors))
}

/// Stable lowercase names of the roles, as written in configuration, metrics, recorded events
/// and approval tokens, beside their wire values: one table, read every way.
macro_rules! roles {
    ($($role:ident <=> $wire:ident <=> $name:literal),* $(,)?) => {
        /// Stable lowercase role name ("floor_supervisor").
        pub fn role_name(role: &Role) -> &'static str {
            match role {
                $(Role::$role => $name,)*
            }
        }

        /// The role of a name written by [`role_name`]; `None` for any other text.
        pub fn role_from_name(name: &str) -> Option<Role> {
            match name {
                $($name => Some(Role::$role),)*
                _ => None,
            }
        }

        pub fn role_to_wire(role: Role) -> pb::Role {
            match role {
                $(Role::$role => pb::Role::$wire,)*
            }
        }
    };
}

roles! {
    Dealer <=> Dealer <=> "dealer",
    FloorSupervisor <=> FloorSupervisor <=> "floor_supervisor",
    Cage <=> Cage <=> "cage",
    Auditor <=> Auditor <=> "auditor",
    Admin <=> Admin <=> "admin",
    System <=> System <=> "system",
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn descriptor_methods() -> Vec<(String, String)> {
        let set = prost_types::FileDescriptorSet::decode(crate::FILE_DESCRIPTOR_SET).expect("descriptor set decodes");
        let mut methods = Vec::new();
        for file in &set.file {
            for service in &file.service {
                for method in &service.method {
                    let path = format!("/{}.{}/{}", file.package(), service.name(), method.name());
                    methods.push((path, method.input_type().to_string()));
                }
            }
        }
        methods
    }

    /// Every RPC of every chipledger.v1 service has exactly one row, and every row is an RPC:
    /// nothing falls through to "deny" by accident. A command's message is the RPC's request.
    #[test]
    fn the_table_lists_every_rpc_of_the_descriptor_set_once() {
        let methods = descriptor_methods();
        let rows: Vec<&str> = RPCS.iter().map(|rpc| rpc.path).collect();
        let unique: HashSet<&str> = rows.iter().copied().collect();
        assert_eq!(unique.len(), rows.len(), "an RPC has two rows");
        let listed: HashSet<&str> = methods.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(unique, listed, "rows and the services' methods differ");
        assert!(allowed_roles("/chipledger.v1.TableService/Nope").is_none());
        for entry in every_command() {
            let rpc = entry.rpc();
            let (_, input) = methods.iter().find(|(path, _)| path == rpc).expect("a command row is an RPC");
            let message = input.rsplit('.').next().unwrap_or_default();
            assert_eq!(format!("{entry:?}").split('(').next(), Some(message), "{rpc} takes {input}");
        }
    }

    /// Each row's Rust name is the one tonic gives its method (the server's impls use it).
    #[test]
    fn rust_names_are_the_methods_in_snake_case() {
        assert_eq!(RUST_NAMES.len(), RPCS.len());
        for (method, rust_name) in RUST_NAMES {
            let mut snake = String::new();
            for (index, c) in method.char_indices() {
                if c.is_ascii_uppercase() && index > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            }
            assert_eq!(*rust_name, snake, "{method}");
        }
    }

    /// The oneof has a row for each of its variants (a missing one does not compile) and no
    /// RPC twice.
    #[test]
    fn every_oneof_variant_is_the_command_of_one_rpc() {
        let commands = every_command();
        assert_eq!(commands.len(), 46, "every variant of the Command oneof");
        let rpcs: HashSet<&str> = commands.iter().map(pb::command::Command::rpc).collect();
        assert_eq!(rpcs.len(), commands.len());
        assert_eq!(<pb::BuyIn as WireCommand>::RPC, "/chipledger.v1.TableService/BuyIn");
        assert_eq!(<pb::Correction as WireCommand>::RPC, "/chipledger.v1.LedgerService/Correct");
    }

    /// The approval form of a message ignores its second-person fields, device and approvals,
    /// but not anything else.
    #[test]
    fn approval_bytes_leave_out_the_approvers_and_nothing_else() {
        let fill = |signer_2: &str, device: Option<&str>, count: i64| {
            pb::command::Command::Fill(pb::Fill {
                header: Some(pb::CommandHeader {
                    command_id: "ignored".into(),
                    device: device.map(str::to_string),
                    approvals: vec!["cla1.x.y".into()],
                    ..Default::default()
                }),
                table_id: "T1".into(),
                cage_id: "MAIN".into(),
                slip_no: 7,
                chips: vec![pb::ChipCount { denomination_cents: 500, count }],
                signer_1: "carl".into(),
                signer_2: signer_2.into(),
            })
        };
        let bytes = |entry: &pb::command::Command| approval_view(entry, "fill-7", "casino").bytes;
        assert_eq!(bytes(&fill("fred", Some("cage-3"), 20)), bytes(&fill("", None, 20)));
        assert_ne!(bytes(&fill("fred", None, 20)), bytes(&fill("fred", None, 21)), "the chips are approved");
        assert_ne!(approval_view(&fill("fred", None, 20), "fill-8", "casino").bytes, bytes(&fill("fred", None, 20)));
        let mut entry = fill("", None, 20);
        assert!(entry.set_approval_field("signer_2", "fred"));
        assert!(!entry.set_approval_field("approved_by", "fred"));
        assert_eq!(entry.approval_fields(), [("signer_1", Some("carl")), ("signer_2", Some("fred"))]);
    }

    #[test]
    fn role_names_read_back_and_every_role_has_a_wire_value() {
        for role in [Dealer, FloorSupervisor, Cage, Auditor, Admin, System] {
            assert_eq!(role_from_name(role_name(&role)), Some(role));
            assert_ne!(role_to_wire(role), pb::Role::Unspecified);
        }
        assert_eq!(role_name(&FloorSupervisor), "floor_supervisor");
        assert_eq!(role_from_name("floor"), None);
    }

    #[test]
    fn entry_ids_are_the_batch_id_then_numbered() {
        assert_eq!(entry_command_id("b-1", 0), "b-1");
        assert_eq!(entry_command_id("b-1", 3), "b-1/3");
    }
}
