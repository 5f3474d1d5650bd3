//! # chipledger-rules: the pure rules core of the chip ledger
//!
//! Deciders and pure queries for every rule of `RULES.md`: a command is judged against the
//! state of the streams it touches and either becomes events (each chip movement carrying its
//! double-entry postings) or is refused with a stable reason. No I/O, no async, no clock (time
//! comes in the [`CommandContext`]), no SQL, no gRPC, no randomness. Not for: persistence,
//! authentication, wire formats.
//!
//! ## API map
//! - Units: [`Cents`] (`i64`, R-UNIT-1), [`ChipSet`], [`ChipCount`] (`money`).
//! - Ids and streams: [`TableId`], [`PlayerId`], [`CageId`], [`StreamId`] (`key()`/`FromStr`:
//!   `table-T1`, `player-P7`, `cage-MAIN`), [`Seat`] (`u8`, 1..=10).
//! - Accounts: [`Account`] (`key()`/`FromStr`, serde as the key string), [`Posting`],
//!   [`HouseAccount`] (`accounts`).
//! - Refusals: [`Reason`] `{code, rule}`, [`Rejection`] `{reason, numbers, detail}`,
//!   [`all_reasons()`]. Each module lists its reasons in `REASONS`.
//! - Configuration: [`TableConfig`] with presets `no_limit_holdem`, `pot_limit_holdem`,
//!   `pot_limit_omaha`, `half_pot_limit_holdem`, `cap_limit_holdem`, `fixed_limit_holdem`,
//!   `fixed_limit_holdem_kill`, `spread_limit_holdem`, `seven_card_stud`,
//!   `seven_card_stud_hi_lo`, `razz`, `omaha_hi_lo`, `short_deck_holdem`,
//!   `deuce_to_seven_triple_draw`, `deuce_to_seven_single_draw`, `badugi` (`config`); the
//!   game itself is `TableConfig::game` ([`config::Game`]).
//! - Commands: [`Command`] = `Table(`[`TableCommand`]` {table_id, op: `[`TableOp`]`})`
//!   | `Player(`[`PlayerCommand`]`)` | `Cage(`[`CageCommand`]`)`; [`Command::streams`].
//! - Events: [`Event`] = `Table(`[`TableEvent`]`)` | `Player(`[`PlayerEvent`]`)` |
//!   `Cage(`[`CageEvent`]`)`; [`Event::event_type`], [`Event::postings`], [`Event::moves_chips`].
//!   Serde: internally tagged with `"type"` = the variant name.
//! - Deciding: [`decide`]`(&`[`Snapshot`]`, &`[`CommandContext`]`, &Command) ->
//!   Result<Vec<(StreamId, Event)>, Rejection>`. Fast path for one table:
//!   [`decide_table`]`(&TableState, &CommandContext, &TableCommand)`.
//! - Evolving: [`TableState::evolve`], [`PlayerState::evolve`], [`CageState::evolve`] (by value);
//!   `apply(&mut self, &event)` on each does the same in place (no move of the state).
//! - Queries: [`legal_actions`]`(&TableState) -> Option<`[`LegalActions`]`>`,
//!   [`pots::layer_pots`], [`TableState::balances`], [`TableState::stack_cents`].
//! - Hand commands ([`TableOp`]): `StartHand{hand_no, button_seat, dealt_seats}`,
//!   `Post{seat, kind: `[`PostKind`]`, amount_cents}`, `Act{seat, action: `[`Action`]`}`
//!   (`Bet{to_cents}`/`Raise{to_cents}` are "raise to" totals and interchangeable; `AllIn`;
//!   `Complete`), `DealUpCards{cards}` (stud), `NextRound{first_to_act_seat}`,
//!   `Showdown{high, low, rake_cents}`, `AwardPots{awards, rake_cents}`, `EndHand`.
//!
//! ### Additions (after the first release of this map; all additive)
//! - R-POST-3 missed blinds: `TableOp::SitOut{seat}` / `SitIn{seat}` -> `TableEvent::SatOut` /
//!   `SatIn`; `SeatState::{sitting_out, missed_big_blind, missed_small_blind}` and
//!   `TableState::{last_big_blind_seat, last_small_blind_seat}` (serde default). A blind posted
//!   passes the sat-out seats since the previous blind of its kind: they owe it (one set, flags).
//!   The big blind in position clears the set; `MissedBigBlind` (live) and
//!   `MissedSmallBlindDead` (dead) posts pay it. Reasons `MISSED_BLINDS_REQUIRED` (first
//!   non-fold action before paying), `SEAT_SITTING_OUT` (dealt while absent),
//!   `ALREADY_SITTING_OUT`, `NOT_SITTING_OUT`, `BUTTON_NOT_DEALT` (`ButtonPolicy::Moving` /
//!   `Simplified`: the button is a dealt player; `Dead` (the default) may sit on an empty seat).
//!   `TableState::last_button_seat` (serde default) and `BUTTON_OUT_OF_TURN`: a simplified
//!   or moving button moves on one dealt player a hand (the seeds), the blinds following it.
//!   The seeds' moving button: the dealt players its rotation skips owe those blinds
//!   (`posts::skipped_blinds`, the missed-blind flags), and each dealt player pays one missed
//!   blind a hand, biggest first, live, as a forced bet (`HandState::missed_blinds_due`, serde
//!   default, fixed at the deal by `posts::owe_missed_blinds`; `BLINDS_NOT_POSTED`); a player
//!   due the big blind in the small blind's position leaves that small blind unposted and pays
//!   it in the next hand (`ONE_MISSED_BLIND_PER_HAND` for it or any other blind not due now).
//!   `TableConfig::missed_blinds_one_per_hand` (serde default false) and the live
//!   `PostKind::MissedSmallBlind` (appended: the posted-mask bits of the others are unchanged):
//!   the seeds' one missed blind per hand, largest first, all live; `ONE_MISSED_BLIND_PER_HAND`.
//!   `TableConfig::big_blind_covers_small_blind` (serde default false): `StartHand` refuses a
//!   big blind short of the small blind and its ante (`BIG_BLIND_SHORT`, R-POST-7, the seeds).
//!   `TableConfig::straddle_outside_raise_cap` (serde default false): a straddle or sleeper is
//!   not counted toward a limit round's raise cap (R-POST-4, the seeds).
//!   `TableConfig::{straddle_any_position, straddle_at_least}` (serde default false): the seeds'
//!   Mississippi straddle from any seat but a blind, and in no limit at least twice the bet.
//! - R-BET-7 assumed call: config flag `TableConfig::pot_limit_assumed_call` (serde default
//!   false): pot limit, the first preflop raise counts the small blind as called (4 big blinds).
//! - R-BET-14 / R-BET-13: `TableOp::PutOutChips{seat, chips, declared: Option<Action>}` ->
//!   `Acted` whose postings are the chips in (`seat -> pot/0`) and the change back
//!   (`pot/0 -> seat`), netting to the amount the chips pay. Undeclared: one chip facing a bet
//!   is a call; otherwise a bet/raise to the chips' value. Chips worth less than the action
//!   (not the whole stack) make a short bet or call: `HandPlayer::{short_cents,
//!   short_round_index}`, kept out of `hand_cents`; `TableOp::BringUpShortBet{seat}` ->
//!   `TableEvent::ShortBetBroughtUp{seat, amount_cents, postings}` (a new event, never an
//!   edit). Reasons `NO_SHORT_BET`, `SHORT_BET_ROUND_ENDED` (after `NextRound`/settlement).
//! - R-CHIP-3 voids: `TableOp::VoidSlip{cage_id, kind: `[`SlipKind`]`, slip_no, reason, signers}`
//!   (touches the cage) -> `TableEvent::SlipVoided` (reversing postings, shift totals net of
//!   it) + `CageEvent::SlipVoided`; the number stays used. The cage remembers its last 256
//!   slips (`CageState::slips`, serde default). Reasons `VOID_REASON_REQUIRED`,
//!   `SLIP_NOT_FOUND`, `SLIP_ALREADY_VOIDED` (and `SIGNERS_NOT_DISTINCT`, `TRAY_SHORT`,
//!   `CAGE_CHIPS_SHORT`).
//! - R-CHIP-1 at the cage: `CageOp::ColorChange{player_id, give, receive}` (touches the
//!   player for the pocket check) -> `CageEvent::ChipsColorChanged` (postings on cage chip
//!   accounts only; the pocket's value is unchanged; issued/returned per denomination follow).
//! - R-CHIP-4 at the cage: `CageOp::CountShift{counted_chips, counted_cash_cents, signers}` ->
//!   `CageEvent::ShiftCounted` (a variance first when the count differs, see below).
//! - R-AUDIT-1 on cage streams: `CageOp::Correct{reverses_event_id, original_postings,
//!   approved_by, reason}` -> `CageEvent::Corrected` (cage, pocket and house accounts only) plus
//!   `PlayerEvent::PocketCorrected{amount_cents}` for each pocket named (those player streams
//!   are in `Command::streams`). On player streams: `PlayerOp::Correct{.., reversal:`
//!   [`PlayerReversal`]`}` (`CashTransaction` off the day's AML total, or a `Departure` off the
//!   re-buy wait) -> `PlayerEvent::Corrected`. Same reasons as table corrections.
//! - R-POST-2 third blind: with `blinds_cents = [small, big, third]` a `BigBlind` post is the
//!   second amount (it was the last one before), `ThirdBlind` the third; the third blind sets
//!   the minimum raise. R-POST-1 `ButtonAnte` (option `button_ante`): ante x dealt players, dead.
//! - One judgement for every door that adds chips to a seat (`table_stakes::check_arrival`):
//!   `BuyIn`, `TopUp`, `PutCashInPlay` (a buy-in when it is the session's first chips, else a
//!   top-up; it plays in the next hand and is converted before the one after, R-STAKE-5) and
//!   `IssueMarker` to a seat (`TableEvent::MarkerChipsSeated{buy_in}`): limits, re-buy wait,
//!   supervisor, one seat per game. The first chips of a session emit `JoinedTable`.
//! - R-REBUY-1 on the log: a departure binds while `now - left_at < window`, also when it is
//!   stamped after the command's own time. `PlayerState::seats` ([`player::HeldSeat`]) holds
//!   the seats of a patron (`JoinedTable`, `LeftTable`, `MovedTable`); a second seat in the same
//!   game is `SECOND_SEAT_SAME_GAME` unless `RebuyPolicy::allow_second_seat`, and then a
//!   cash-out binds the other seats (`TableEvent::SeatBound`, dealt in again only with the
//!   amount left; [`Command::dependent_streams`] names their tables). `TableOp::MovePlayer`
//!   carries `player_id` and touches the player stream.
//! - R-MARK-3: `TableOp::SettleIou{seat, player_id, amount_cents, from_pocket, lender}`; a
//!   cash-out pays the seat's IOUs from the stack first (`CashedOut::iou_settled_cents`) and a
//!   move is refused while IOUs are outstanding; the paper of unpaid IOUs never leaves the table
//!   (`iou::check_stays_on_table`); a loan moves the lender's chips (`SeatState::loans`).
//! - R-AUDIT-1: each state remembers the events it reversed (`corrected_event_ids`):
//!   `ALREADY_CORRECTED`. A table correction loads and corrects the pockets it names
//!   (`PocketCorrected`), refuses cage postings (void the slip instead) and any correction
//!   that leaves chips in a pot (`CORRECTION_LEAVES_POT`: a hand is corrected by its net).
//! - R-CHIP-4: `CloseShift{counted_tray, counted_drop_cents, signers}` and
//!   `CageOp::CountShift{.., signers}` record a count that differs as
//!   `CountVarianceRecorded` (signed counts by denomination, posted to
//!   `house/count-variance`) before `ShiftClosed`/`ShiftCounted`; counts are bounded
//!   (`inventory::check_count`: `COUNT_INVALID`, `AMOUNT_TOO_LARGE`), never summed unchecked.
//! - R-RAKE-3 once per interval (`SeatState::time_paid_until_unix_ms`,
//!   `TIME_ALREADY_COLLECTED`); R-RAKE-2 `TableOp::PayJackpot{seat, amount_cents, promotion}`;
//!   R-KITTY-1 `TableOp::CloseGame` settles the kitty per `KittyPolicy::leftover` and ends the
//!   game (`GAME_CLOSED`).
//! - Cost: `decide_table` + `evolve` of a hand action make at most 2 allocations (the event
//!   vector and the postings; ids of 22 bytes or less are copied inline, longer ones share one
//!   heap copy) and never copy the `TableState` (the last fold settles a copy of the hand;
//!   corrections clone the table). Buffered forms for callers judging many commands:
//!   [`decide_table_into`], [`decide_into`] (append to a reused vector; a refusal appends
//!   nothing) and [`Command::streams_into`]. `tests/rules/allocations.rs` counts allocations
//!   with a per-thread counting allocator.
//!
//! - Games of issue 14 (all additive, serde defaults): `TableConfig::{game, big_blind_ante,
//!   antes_to_main_pot, straddle_raise, sleeper_allowed, odd_chip, button_blind,
//!   first_blind_on_button}`, `BettingStructure::SpreadLimit::max_raises` (the seeds' spread cap);
//!   `FeePolicy::Reported{cap_cents}` (R-RAKE-1: the dealer reports the rake at settlement).
//!   Posts `BigBlindAnte` (the table's ante by the big blind, first, whole into the main pot:
//!   `HandPlayer::dead_main_cents`) and `Sleeper` (R-POST-4: raises the amount to call, no
//!   option, no last action). Blinds are judged against [`hand::BlindPositions`]
//!   (`HandState::blinds`, from `posts::blind_positions`: heads-up the button posts the small
//!   blind; a dead button moves the big blind one player on from the previous hand's, with a
//!   dead small blind when that player is gone); reason `BLIND_OUT_OF_POSITION`. Missed blinds
//!   (R-POST-3) are tracked at the deal for seats sat out or simply left out of `dealt_seats`.
//!   Stud ([`cards::Card`], `stud`): `DealUpCards` -> `TableEvent::UpCardsDealt`;
//!   `HandState::awaiting_bring_in` until the bring-in or a full opening bet by the seat the up
//!   cards name (R-POST-5); from fourth street `NextRound` must name the best hand showing (or
//!   `None`: the core names it), reasons `UP_CARDS_*`, `FIRST_TO_ACT_MISMATCH`,
//!   `BRING_IN_REQUIRED`, `BRING_IN_OUT_OF_POSITION`. `TableEvent::SidePotPaid` (R-POT-3: a
//!   side pot left to one player by a fold is paid at once; `HandState::contribution_cap_cents`
//!   keeps the rest of the layering). `TableEvent::HandSettled::dealer_awarded`. With a reported
//!   rake the last fold does not settle: the dealer's `Showdown` does. A short bet blocks
//!   `NextRound`, `Showdown` and the short player's own actions (`SHORT_BET_NOT_BROUGHT_UP`);
//!   chips below the minimum playable chip never play (`TIP_CHIPS_DO_NOT_PLAY`).
//!   [`legal_actions`] and `judge_action` read one judgement (`betting::Turn`);
//!   `LegalActions::{can_fold, bring_in_cents}`. A player with nothing to decide at a round's
//!   start (no opponent could contest a bet) counts as having acted
//!   (`HandState::mark_uncontested`); one who had something to decide still acts when the
//!   others go all in.
//! - R-POST-1 missed button ante (the seeds): `TableConfig::missed_button_ante_owed` (serde
//!   default false; needs `button_ante`), `SeatState::missed_button_ante_cents` (serde default
//!   0), `HandState::{missed_antes_due, button_ante_missed_by}` (serde default), and the dead
//!   `PostKind::MissedButtonAnte` (appended: the posted-mask bits of the others are unchanged).
//!   An absent player the button reaches or passes owes that hand's table ante and posts it
//!   before anyone acts in the hand it is dealt back in (`ANTES_NOT_POSTED`); a dead button on
//!   that player's seat leaves the hand's ante to them (`posts::track_missed_button_ante`).
//! - R-POST-3 newcomer taking over (the seeds): `TableConfig::newcomer_takes_over_blinds` (serde
//!   default false) and `TableState::left_since_deal` (serde default, bit `seat`): a newcomer in
//!   a seat a player of the game left owing nothing, no hand dealt since, owes no entry post.
//!   `TableState::departed` (serde default, [`table::Departed`], [`table::SeatDebts`]): who left
//!   a seat since the last deal, or owing an entry post, missed blinds or a missed button ante
//!   here, is no newcomer: back at this table (a seat change, a return) they take over nothing
//!   and owe what they owed, option on or off, for as long as the game goes on.
//! - R-AUDIT-1 with R-POST-1, R-POST-3: `SeatState::debts_paid` (serde default) keeps what a
//!   seat paid of its debts in the last hand it was dealt; a correction of that hand leaves it
//!   owed again (`TableEvent::Corrected::debts_owed_again`, serde default), from the table: the
//!   caller passes the hand's event types and netted postings, as before.
//!
//! ## The snapshot
//! [`Snapshot`] is the set of stream states the caller loaded for a command: build it with
//! `Snapshot::new().with_table(&id, &state).with_player(..).with_cage(..)`. A stream that does
//! not exist yet is passed as its `Default` state. [`Command::streams`] says which streams to
//! load; a missing one is refused with `STREAM_NOT_LOADED`. AML thresholds ride on the snapshot
//! (`Snapshot::aml`, default $3,000 / $10,000).
//!
//! ## The model
//! **Accounts** (R-UNIT-3). Every chip or cash holding is an [`Account`]: per table the seat
//! stacks, the tray by denomination, the drop box, rake box, toke box, kitty, jackpot fund and
//! `pot/0` (chips of the hand in play); per patron the pocket (chips off the table) and IOUs;
//! per cage the chips by denomination, cash and marker receivable; and house accounts for
//! value entering or leaving (`house/patrons` for cash and credit, `house/chip-stock` for
//! chips put into circulation). An event's postings sum to zero; so the sum of all balances
//! is zero at every position of the log. No stack, tray denomination, kitty or pot is ever
//! negative (R-UNIT-4).
//!
//! **Streams.** `table-{id}` holds the table session (config version, seats, hands, tray,
//! fills/credits, rake, kitty, tips, shift closes); `player-{id}` the patron (pocket chips,
//! credit line and markers, departures for the re-buy wait, daily cash totals); `cage-{id}`
//! the cage (inventory, chip issue and redemption, slip and marker numbers). A command that
//! touches several streams returns one event per stream, and its postings are on exactly one
//! of them: the table event if a table is touched, else the cage event, else the player event.
//! Each state's `evolve` reads its own event; [`TableState`] applies the postings on its own
//! accounts, so its balances are exactly the ledger's.
//!
//! **A hand.** `StartHand` fixes who is dealt (R-STAKE-1: from now on the stacks change only
//! by betting). `Post`s put antes (dead) and blinds (live) into `pot/0`. Then `Act` by the seat
//! in turn only (R-BET-1); [`legal_actions`] tells who is in turn and the minimum and maximum
//! "raise to" for the structure (no limit, pot limit, half pot, fixed limit with cap and
//! heads-up exception, spread, cap limit) and the full-bet or half-bet rule for short all-ins.
//! When nobody has to act the round is complete; `NextRound` deals the next street (the round
//! index gives small or big bet in fixed limit). The last fold settles the hand at once;
//! otherwise `Showdown` reports the ranking (ties grouped, optional low ranking) and the
//! engine layers contributions into main and side pots at the all-in levels (R-POT-1..3),
//! returns what was not called (R-POT-4), takes rake from the main pot first and the jackpot
//! drop (R-RAKE-1, -2), the kitty chip (R-KITTY-1), and awards each pot to its eligible
//! winners with odd chips clockwise from the button (R-POT-5). `EndHand` closes it; between
//! hands players may buy in, top up, color change, tip, or cash out.
//!
//! ## Details other crates rely on
//! - `Act`: `Bet{to_cents}` and `Raise{to_cents}` are the same request ("raise to" total for
//!   the round); `Call` with nothing owed is a check (PHH `cc`); `AllIn` is a call, bet or
//!   raise for the whole stack; `Fold` is accepted from the seat in turn even when it could
//!   check. A bet or raise short of the minimum is accepted only as an all-in (or, in cap
//!   limit, as the amount that reaches the cap).
//! - First to act: preflop the seat after the last big blind / third blind / straddle /
//!   bring-in poster (heads-up this is the button), later rounds the first live seat after
//!   the button, or `NextRound{first_to_act_seat}` (stud: held to the up cards when reported).
//!   A kill's poster (and, with `straddle_action_from_big_blind`, a first straddler) acts last
//!   in the opening round wherever it sits: passed over until every other seat has acted once
//!   (`BettingRound::acts_last`).
//! - The last fold returns two events: `Acted` and `HandSettled` (uncontested, no ranking).
//!   `Showdown` is accepted once the round is complete and either it was the last round or at
//!   most one player can still bet (all-in showdowns before the board is dealt out).
//! - Uncalled chips (R-POT-4) stay in the top pot as `PotResult::returned_cents`, are never
//!   raked, and are included in that pot's award to the bettor (the only one eligible): the
//!   R-POT-3 example reads "side pot $10 paid to Carol", of which $8 returned.
//! - R-POST-3: a player seated after the table's first hand owes a live big blind
//!   (`BigBlind`, `NewPlayer` or `MissedBigBlind` post) before any action other than a fold
//!   (`ENTRY_POST_REQUIRED`); a house move (R-STAKE-6) does not owe it.
//! - Postings of a cross-stream command: on the table event if a table is touched
//!   (buy-in, top-up, cash in play, cash-out, move, fill, credit, marker to a seat), else on
//!   the cage event (cage sales, redemptions, markers to the pocket); player events never
//!   carry postings.
//! - Cage chip liability (`GamingDayClosed::liability`) is cumulative chips issued out of the
//!   cage (sales, fills, markers) minus returned (redemptions, credits): chips outside the
//!   cage, in trays and with patrons (R-CHIP-5).
//!
//! ## Not enforced here (the dealer or the caller decides)
//! - The button seat itself is the dealer's (the blinds are then judged from it, or from the
//!   previous big blind under a dead button); moving-button make-up of blinds skipped by
//!   departures is the dealer's (`MissedBigBlind` posts).
//! - Stud without reported up cards: the dealer's bring-in and `first_to_act_seat` stand.
//! - Draws: a draw moves no chips; the dealer's `NextRound` after it starts the next betting
//!   round (2-7 single draw: two rounds; triple draw and badugi: four).
//! - Corrections (R-AUDIT-1): the caller supplies the reversed event's id and postings from
//!   the store; a cage correction of a marker does not touch the patron's marker list.
//!
//! **Configuration version** (R-AUDIT-2): every table event is judged under
//! `TableState::config.version`; the store records it in the event metadata together with the
//! actor, role and gaming day of the [`CommandContext`].

pub mod accounts;
pub mod aml;
pub mod betting;
pub mod cage;
pub mod cards;
pub mod config;
pub mod corrections;
pub mod hand;
pub mod inventory;
pub mod iou;
pub mod kitty;
pub mod ledger;
pub mod markers;
pub mod money;
pub mod player;
pub mod posts;
pub mod pots;
pub mod rake;
pub mod rebuy;
pub mod rejection;
pub mod seating;
pub mod streams;
pub mod stud;
pub mod table;
pub mod table_stakes;
pub mod tips;
pub mod words;

use serde::{Deserialize, Serialize};

pub use accounts::{Account, HouseAccount, Posting};
pub use aml::{AmlThresholds, CashDirection};
pub use betting::{LegalActions, RaiseRange, legal_actions};
pub use cage::{CageCommand, CageEvent, CageOp, CageState, MarkerDelivery, SlipKind};
pub use corrections::PlayerReversal;
pub use config::{BettingStructure, FeePolicy, IncompleteRaiseRule, KillPolicy, SameGame, StakesMode, TableConfig};
pub use hand::{Action, ActionKind, ActsLast, HandPhase, HandState, InHand, PostKind};
pub use ledger::{decide, decide_into, decide_table, decide_table_into};
pub use money::{Cents, ChipCount, ChipSet};
pub use player::{PlayerCommand, PlayerEvent, PlayerOp, PlayerState};
pub use pots::PotResult;
pub use rejection::{Reason, Rejection};
pub use streams::{CageId, ID_FORM, PlayerId, Seat, StreamId, TableId};
pub use table::{FundsSource, Signers, TableCommand, TableEvent, TableOp, TableState};

/// Seats per table, at most (bound).
pub const MAX_SEATS: usize = 10;

/// Who issued a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    Dealer,
    FloorSupervisor,
    Cage,
    Auditor,
    Admin,
    System,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    pub id: String,
    pub role: Role,
}

/// Context of a command: time and gaming day come from the caller (no clock in the core).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandContext {
    pub at_unix_ms: i64,
    /// `YYYY-MM-DD`, computed by the caller per R-CHIP-6.
    pub gaming_day: String,
    pub actor: Actor,
}

/// Any command.
#[allow(clippy::large_enum_variant)] // a table command carries its configuration; commands are short-lived
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    Table(TableCommand),
    Player(PlayerCommand),
    Cage(CageCommand),
}

/// Any event.
#[allow(clippy::large_enum_variant)] // `TableOpened` carries the configuration; events are short-lived
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    Table(TableEvent),
    Player(PlayerEvent),
    Cage(CageEvent),
}

impl Command {
    /// The streams `decide` needs (and may append to), the command's own stream first.
    pub fn streams(&self) -> Vec<StreamId> {
        ledger::streams_of(self)
    }

    /// [`Command::streams`] appended to `streams`, for a caller that reuses one vector.
    pub fn streams_into(&self, streams: &mut Vec<StreamId>) {
        ledger::streams_into(self, streams)
    }

    /// Streams to load after [`Command::streams`], which depend on their states (see
    /// [`ledger::dependent_streams`]). Empty for almost every command.
    pub fn dependent_streams(&self, snapshot: &Snapshot) -> Vec<StreamId> {
        ledger::dependent_streams(self, snapshot)
    }
}

impl Event {
    pub fn event_type(&self) -> &'static str {
        match self {
            Event::Table(e) => e.event_type(),
            Event::Player(e) => e.event_type(),
            Event::Cage(e) => e.event_type(),
        }
    }

    /// The double-entry postings of this event (R-UNIT-3); they sum to zero.
    pub fn postings(&self) -> Vec<Posting> {
        match self {
            Event::Table(e) => e.postings().to_vec(),
            Event::Player(_) => Vec::new(),
            Event::Cage(e) => e.postings().to_vec(),
        }
    }

    /// A chip movement: an event with postings.
    pub fn moves_chips(&self) -> bool {
        match self {
            Event::Table(e) => !e.postings().is_empty(),
            Event::Player(_) => false,
            Event::Cage(e) => !e.postings().is_empty(),
        }
    }
}

/// The states of the streams a command touches, loaded by the caller.
#[derive(Debug, Clone, Default)]
pub struct Snapshot<'a> {
    pub tables: Vec<(&'a TableId, &'a TableState)>,
    pub players: Vec<(&'a PlayerId, &'a PlayerState)>,
    pub cages: Vec<(&'a CageId, &'a CageState)>,
    pub aml: AmlThresholds,
}

impl<'a> Snapshot<'a> {
    pub fn new() -> Snapshot<'a> {
        Snapshot::default()
    }
    pub fn with_table(mut self, id: &'a TableId, state: &'a TableState) -> Snapshot<'a> {
        self.tables.push((id, state));
        self
    }
    pub fn with_player(mut self, id: &'a PlayerId, state: &'a PlayerState) -> Snapshot<'a> {
        self.players.push((id, state));
        self
    }
    pub fn with_cage(mut self, id: &'a CageId, state: &'a CageState) -> Snapshot<'a> {
        self.cages.push((id, state));
        self
    }
    pub fn table(&self, id: &TableId) -> Option<&'a TableState> {
        self.tables.iter().find(|(t, _)| *t == id).map(|(_, s)| *s)
    }
    pub fn player(&self, id: &PlayerId) -> Option<&'a PlayerState> {
        self.players.iter().find(|(p, _)| *p == id).map(|(_, s)| *s)
    }
    pub fn cage(&self, id: &CageId) -> Option<&'a CageState> {
        self.cages.iter().find(|(c, _)| *c == id).map(|(_, s)| *s)
    }
}

/// Every reason code the core can return, across modules.
pub fn all_reasons() -> Vec<Reason> {
    let lists: &[&[Reason]] = &[
        money::REASONS,
        accounts::REASONS,
        streams::REASONS,
        config::REASONS,
        ledger::REASONS,
        seating::REASONS,
        table_stakes::REASONS,
        rebuy::REASONS,
        posts::REASONS,
        cards::REASONS,
        stud::REASONS,
        betting::REASONS,
        pots::REASONS,
        tips::REASONS,
        kitty::REASONS,
        rake::REASONS,
        inventory::REASONS,
        cage::REASONS,
        markers::REASONS,
        iou::REASONS,
        corrections::REASONS,
        aml::REASONS,
    ];
    lists.iter().flat_map(|l| l.iter().copied()).collect()
}
