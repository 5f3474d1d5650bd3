//! The table stream `table-{id}`: commands, events, state and `evolve`.
//!
//! The state keeps the balance of every table account (seat stacks, tray by denomination,
//! pot, drop, rake, toke, kitty, jackpot, cash in play). `evolve` applies the postings of each
//! event to the accounts of this table, then the event's other effects, so the balances are
//! by construction what the ledger says (R-STAKE-4).

use serde::{Deserialize, Serialize};

use crate::accounts::{Account, Posting};
use crate::config::TableConfig;
use crate::hand::{Action, ActionKind, HandPhase, HandState, PostKind, SeatAward, UpCard};
use crate::money::{Cents, ChipCount};
use crate::pots::PotResult;
use crate::streams::{CageId, PlayerId, Seat, TableId};

/// Where the money for a buy-in or top-up comes from (R-CHIP-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FundsSource {
    /// Cash handed to the dealer: to the drop box, chips from the tray. Touches the player
    /// stream for AML aggregation (R-AUDIT-4).
    Cash,
    /// Chips from the player's pocket (bought at the cage): touches the player stream.
    PocketChips,
}

/// A command for one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableCommand {
    pub table_id: TableId,
    pub op: TableOp,
}

/// Two distinct signers of a slip (R-CHIP-3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signers {
    pub first: String,
    pub second: String,
}

/// Everything a table can be asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op")]
pub enum TableOp {
    /// Create the table with its first configuration (version forced to 1).
    OpenTable { config: TableConfig },
    /// New configuration between hands; version becomes previous + 1.
    ChangeConfig { config: TableConfig },
    /// Sit a patron down at an empty seat with no chips (a buy-in follows).
    SeatPlayer { seat: Seat, player_id: PlayerId },
    /// First chips of a session (R-STAKE-3, R-REBUY-1, R-CHIP-2). Touches the player stream.
    BuyIn {
        seat: Seat,
        player_id: PlayerId,
        amount_cents: Cents,
        source: FundsSource,
        /// Required at or above the configured threshold (R-CHIP-2).
        supervisor_id: Option<String>,
        /// Use the session's one short buy-in (R-STAKE-3 option).
        short_buy: bool,
    },
    /// Add chips between hands, or after folding (R-STAKE-1, R-STAKE-3). Touches the player stream.
    TopUp { seat: Seat, player_id: PlayerId, amount_cents: Cents, source: FundsSource, supervisor_id: Option<String> },
    /// R-STAKE-5: cash on the table deemed in play: it plays as part of the stack and must be
    /// converted to chips after the hand. Touches the player stream (AML).
    PutCashInPlay {
        seat: Seat,
        player_id: PlayerId,
        amount_cents: Cents,
        /// R-CHIP-2: as for a buy-in or top-up at or above the supervisor threshold.
        #[serde(default)]
        supervisor_id: Option<String>,
    },
    /// R-STAKE-5: the cash in play is converted to chips after the hand.
    ConvertCashInPlay { seat: Seat },
    /// The player leaves with the whole stack (R-STAKE-2). Touches the player stream (departure).
    CashOut { seat: Seat, player_id: PlayerId },
    /// Take part of a stack off the table: always refused (R-STAKE-2), the attempt is audited.
    RemoveChips {
        seat: Seat,
        amount_cents: Cents,
        /// The patron whose pocket takes the chips (within the table's refreshment allowance).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player_id: Option<PlayerId>,
    },
    /// R-STAKE-6: the house moves the player with the stack unchanged. Touches both tables and
    /// the player (whose held seat follows, R-REBUY-1).
    MovePlayer { seat: Seat, player_id: PlayerId, to_table_id: TableId, to_seat: Seat },
    /// R-TIP-1.
    Tip { seat: Seat, amount_cents: Cents },
    /// R-KITTY-1: pay a non-betting expense from the kitty; `to_dealer` pays the toke box.
    PayKittyExpense { amount_cents: Cents, purpose: String, to_dealer: bool },
    /// R-RAKE-3: collect the time fee, in advance, from the listed seats (between hands).
    CollectTime { seats: Vec<Seat> },
    /// R-CHIP-1: the player gives `give` to the tray and receives `receive`, equal value.
    ColorChange { seat: Seat, give: Vec<ChipCount>, receive: Vec<ChipCount> },
    /// R-CHIP-3: chips from the cage to the tray. Touches the cage stream.
    Fill { cage_id: CageId, slip_no: u64, chips: Vec<ChipCount>, signers: Signers },
    /// R-CHIP-3: chips from the tray to the cage. Touches the cage stream.
    Credit { cage_id: CageId, slip_no: u64, chips: Vec<ChipCount>, signers: Signers },
    /// R-CHIP-4: close the shift with the counted tray and the counted drop, signed by two
    /// distinct people. A count that differs from the book is recorded as a variance
    /// (`CountVarianceRecorded`), never refused: the shift closes on what was counted.
    CloseShift { counted_tray: Vec<ChipCount>, counted_drop_cents: Cents, signers: Signers },
    /// Deal a hand to `dealt_seats` (R-STAKE-1: stacks are fixed from here).
    StartHand { hand_no: u64, button_seat: Seat, dealt_seats: Vec<Seat> },
    /// A forced bet (section 4). `amount_cents` may be short only when it is the whole stack.
    Post { seat: Seat, kind: PostKind, amount_cents: Cents },
    /// A betting action by the seat in turn (R-BET-1).
    Act { seat: Seat, action: Action },
    /// Deal the next street: the next betting round starts. Stud names who acts first.
    NextRound { first_to_act_seat: Option<Seat> },
    /// The dealer reports the showdown: groups of seats, best first, ties in one group; seats
    /// not listed mucked. `low` ranks qualifying low hands in high-low games. `rake_cents`:
    /// the rake the room took, where the dealer reports it (R-RAKE-1, `FeePolicy::Reported`,
    /// or under `FeePolicy::Rake` only the computed rake itself: `RAKE_NOT_AS_COMPUTED`).
    Showdown {
        high: Vec<Vec<Seat>>,
        low: Option<Vec<Vec<Seat>>>,
        #[serde(default)]
        rake_cents: Option<Cents>,
    },
    /// R-POST-5 (stud): the up cards just dealt, one per player (third street: every dealt
    /// player; later streets: every live player). The core then names the bring-in and the
    /// first to act and holds the dealer to them.
    DealUpCards { cards: Vec<UpCard> },
    /// R-POT-5: the dealer awards the pots by amount where no ranking can be given (a card
    /// room's record of who collected what, cards unknown). Each award goes to a live player
    /// eligible for the pots it comes from; awards and rake sum to the pots.
    AwardPots { awards: Vec<SeatAward>, #[serde(default)] rake_cents: Option<Cents> },
    /// Close a settled hand.
    EndHand,
    /// R-MARK-3: an IOU in an open-stakes game, accepted by the listed seats.
    WriteIou { seat: Seat, amount_cents: Cents, lender: Option<PlayerId>, accepted_by: Vec<Seat>, to_raise: bool },
    /// R-AUDIT-1: reverse an earlier event of this table. The caller supplies the original
    /// event id and postings (from the store); the approver must differ from the actor.
    Correct {
        reverses_event_id: String,
        /// The table stream version of the reversed event (of its hand's `HandStarted` for a
        /// hand), from the log: the sessions it may correct began at or before it.
        reverses_stream_version: u64,
        /// The types of the events reversed (one, or every event of a hand), from the log: some
        /// records are not corrected but settled.
        #[serde(default)]
        reverses_event_types: Vec<String>,
        /// The gaming day the reversed event was recorded on, from the log: cash it moved with a
        /// patron comes off that day's total (R-AUDIT-4).
        #[serde(default)]
        reverses_gaming_day: String,
        original_postings: Vec<Posting>,
        approved_by: String,
        reason: String,
    },
    /// R-POST-3: the player at `seat` is absent: not dealt in; the blinds that pass the seat
    /// meanwhile are owed on return (one set at most). Not while live in a hand.
    SitOut { seat: Seat },
    /// R-POST-3: the absent player returns; owed missed blinds are posted before playing.
    SitIn { seat: Seat },
    /// R-BET-14 / R-BET-13: the seat in turn puts out `chips`, with or without a declared
    /// action. Becomes `Acted`; its postings net to what the chips pay (change back from the pot).
    PutOutChips { seat: Seat, chips: Vec<ChipCount>, declared: Option<Action> },
    /// R-BET-13: bring a short bet or call up to the proper amount (before its round ends).
    BringUpShortBet { seat: Seat },
    /// R-BET-13 (seeds): the seat put out a short call unaware of a bet the dealer did not
    /// announce, and takes it back: its chips return and it acts again (fold, call or raise).
    /// Only while that call is still the hand's last action.
    TakeBackShortCall { seat: Seat },
    /// R-MARK-3: pay back an open-stakes IOU written at `seat`, from the stack (between hands)
    /// or with the patron's pocket chips (touches the player stream). With `lender`, the loan
    /// of that player (seated at this table) is paid back to their stack.
    SettleIou { seat: Seat, player_id: PlayerId, amount_cents: Cents, from_pocket: bool, #[serde(default)] lender: Option<PlayerId> },
    /// R-KITTY-1: the game ends: no more hands or buy-ins; what is left in the kitty is settled
    /// as the configuration says (`KittyPolicy::leftover`).
    CloseGame,
    /// R-RAKE-2: pay the table's jackpot fund (a liability to players) to a seated player who
    /// has been dealt in this session, between hands, for the named promotion, approved by a
    /// second supervisor (`approved_by`, not the caller).
    PayJackpot { seat: Seat, amount_cents: Cents, promotion: String, #[serde(default)] approved_by: String },
    /// R-CHIP-3: void a fill or credit slip of this table: a reason and two distinct signers;
    /// its postings are reversed and the slip number stays used. Touches the cage stream.
    VoidSlip { cage_id: CageId, kind: crate::cage::SlipKind, slip_no: u64, reason: String, signers: Signers },
}

/// Seat occupant and the stack in front of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatState {
    pub player_id: PlayerId,
    /// Balance of `table/T/seat/N`.
    pub stack_cents: Cents,
    /// Part of the stack that is cash deemed in play, to convert after the hand (R-STAKE-5).
    pub cash_in_play_cents: Cents,
    /// Total bought in this session (for the record).
    pub bought_in_cents: Cents,
    /// R-CHIP-2: bought in since the seat was last dealt a hand (buy-in, top-ups, cash in play,
    /// marker chips): a supervisor's id is needed once it reaches the threshold.
    #[serde(default)]
    pub bought_since_deal_cents: Cents,
    /// R-UNIT-2: the value of the chips below the minimum playable chip the seat is known to hold
    /// (received in a color change, less those given back or tipped). They never play: not in a
    /// bet, a call or an all-in (the numbers pass: five $5 chips colored down at a $25 table went
    /// into an all-in as $25).
    #[serde(default)]
    pub tip_chips_cents: Cents,
    pub has_bought_in: bool,
    pub short_buy_used: bool,
    /// Outstanding open-stakes IOUs written at this seat, payable to the pot's winner: paper in
    /// the chips of the table until paid (R-MARK-3).
    pub iou_cents: Cents,
    /// R-STAKE-2: chips taken off the table this session within the refreshment allowance.
    #[serde(default)]
    pub removed_cents: Cents,
    /// R-MARK-3: what this seat borrowed from other players of the table (their chips), by lender.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loans: Vec<Loan>,
    /// R-POST-3: sat down after the game started and has not yet posted a big blind (in the
    /// big blind position or as a new-player post).
    #[serde(default)]
    pub owes_entry_post: bool,
    /// R-REBUY-3 (open stakes): went all in and won a pot smaller than the minimum buy-in;
    /// may add chips or borrow only by re-buying to a full buy-in.
    #[serde(default)]
    pub needs_full_rebuy: bool,
    /// R-POST-3: absent (sat out): never dealt in until `SitIn`.
    #[serde(default)]
    pub sitting_out: bool,
    /// R-POST-3: the big blind passed the seat while absent (or, under the seeds' moving
    /// button, skipped it at a deal): owes a live big blind.
    #[serde(default)]
    pub missed_big_blind: bool,
    /// R-POST-3: the small blind passed the seat while absent: owes a dead small blind (live
    /// with `missed_blinds_one_per_hand`; under the seeds' moving button also a small blind the
    /// rotation skipped, or missed because a bigger blind was due: live, in a later hand).
    #[serde(default)]
    pub missed_small_blind: bool,
    /// R-POST-1 option `missed_button_ante_owed`: the button ante of the hand the seat missed
    /// while absent (0: none; one at most, the last), posted on return (`MissedButtonAnte`).
    #[serde(default)]
    pub missed_button_ante_cents: Cents,
    /// R-STAKE-5: the cash in play was in front of the player when a hand was dealt: it has
    /// played and must be converted before the next hand.
    #[serde(default)]
    pub cash_in_play_played: bool,
    /// R-REBUY-1 (second seat allowed): leaving another seat of this game bound this one: it
    /// is dealt in again only with at least this stack, until `bound_until_unix_ms`.
    #[serde(default)]
    pub bound_min_stack_cents: Cents,
    #[serde(default)]
    pub bound_until_unix_ms: i64,
    /// R-RAKE-3: time is paid up to this moment (paid in advance, once per interval).
    #[serde(default)]
    pub time_paid_until_unix_ms: i64,
    /// R-RAKE-3: the table stream version of the collection that paid the time now in effect
    /// (0: none at this table): its correction leaves the seat owing the time again.
    #[serde(default)]
    pub time_paid_at_version: u64,
    /// The table stream version of the last hand the seat was dealt (0: none in this session):
    /// chips that reached the stack before it have been played (R-STAKE-2, corrections).
    #[serde(default)]
    pub dealt_at_version: u64,
    /// The table stream version of the event that began this session at the seat (seated,
    /// bought in, or moved in by the house): a correction of an event before it is another
    /// session's and moves none of these chips (R-AUDIT-1).
    #[serde(default)]
    pub seated_at_version: u64,
    /// R-AUDIT-1: what the seat paid of its debts in the last hand it was dealt (at
    /// `dealt_at_version`), by its posts or by the big blind or button ante in position: a
    /// correction of that hand gives the chips back and leaves it owed again.
    #[serde(default, skip_serializing_if = "SeatDebts::is_none")]
    pub debts_paid: SeatDebts,
}

/// R-POST-1, R-POST-3: what a player owes at this table before playing: the entry post (a live
/// big blind), one set of missed blinds, a missed button ante.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatDebts {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub entry_post: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missed_big_blind: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missed_small_blind: bool,
    #[serde(default, skip_serializing_if = "crate::money::is_zero")]
    pub missed_button_ante_cents: Cents,
}

impl SeatDebts {
    /// Nothing owed.
    pub fn is_none(&self) -> bool {
        *self == SeatDebts::default()
    }

    /// What `seat` owes now.
    pub fn of(seat: &SeatState) -> SeatDebts {
        SeatDebts {
            entry_post: seat.owes_entry_post,
            missed_big_blind: seat.missed_big_blind,
            missed_small_blind: seat.missed_small_blind,
            missed_button_ante_cents: seat.missed_button_ante_cents,
        }
    }

    /// What was owed in `self` and is not in `now`: what was paid (or cleared) between the two.
    fn paid_by(self, now: SeatDebts) -> SeatDebts {
        SeatDebts {
            entry_post: self.entry_post && !now.entry_post,
            missed_big_blind: self.missed_big_blind && !now.missed_big_blind,
            missed_small_blind: self.missed_small_blind && !now.missed_small_blind,
            missed_button_ante_cents: if now.missed_button_ante_cents == 0 { self.missed_button_ante_cents } else { 0 },
        }
    }

    /// Both owed. One set of missed blinds at most, and one missed ante, the larger (R-POST-1,
    /// R-POST-3: what is missed never adds up).
    fn and(self, other: SeatDebts) -> SeatDebts {
        SeatDebts {
            entry_post: self.entry_post || other.entry_post,
            missed_big_blind: self.missed_big_blind || other.missed_big_blind,
            missed_small_blind: self.missed_small_blind || other.missed_small_blind,
            missed_button_ante_cents: self.missed_button_ante_cents.max(other.missed_button_ante_cents),
        }
    }

    /// The seat owes these too.
    fn owed_at(self, seat: &mut SeatState) {
        let all = SeatDebts::of(seat).and(self);
        seat.owes_entry_post = all.entry_post;
        seat.missed_big_blind = all.missed_big_blind;
        seat.missed_small_blind = all.missed_small_blind;
        seat.missed_button_ante_cents = all.missed_button_ante_cents;
    }
}

/// R-POST-3: a player who left this table owing something here, or since the last hand was
/// dealt (`TableState::departed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Departed {
    pub player_id: PlayerId,
    #[serde(default)]
    pub debts: SeatDebts,
}

/// Bound of `TableState::departed`: beyond it the oldest record is dropped.
pub const MAX_DEPARTED: usize = 4 * crate::MAX_SEATS;

impl SeatState {
    /// The seat has been dealt a hand since it was taken (this session): a player in the game,
    /// not a seat taken a moment before (R-RAKE-2 jackpots, R-KITTY-1 the kitty's leftover).
    pub fn dealt_this_session(&self) -> bool {
        self.dealt_at_version > self.seated_at_version
    }

    /// The chips in front of the player: the stack less its cash in play (R-STAKE-5), which is
    /// cash until converted after the hand, not chips to colour, tip or take off.
    pub fn chips_cents(&self) -> Cents {
        self.stack_cents - self.cash_in_play_cents
    }
}

/// R-MARK-3: chips a player lent from their stack to the seat, not yet paid back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loan {
    pub lender: PlayerId,
    pub amount_cents: Cents,
}

/// Totals of the current shift (R-CHIP-4).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShiftTotals {
    pub opening_tray: Vec<ChipCount>,
    pub fills_cents: Cents,
    pub credits_cents: Cents,
    /// The stream version of the last `ShiftClosed` (0: none): the events up to it are in a
    /// shift counted and signed, which no correction changes (R-CHIP-4).
    #[serde(default)]
    pub counted_through_version: u64,
    /// The slips received in this shift (cage, fill or credit, number): only these are voided
    /// (R-CHIP-4: a slip of a shift counted is in that count).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slips: Vec<(CageId, crate::cage::SlipKind, u64)>,
}

/// State of one table stream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableState {
    pub table_id: Option<TableId>,
    pub config: Option<TableConfig>,
    /// Index `seat - 1`; length `MAX_SEATS`.
    pub seats: Vec<Option<SeatState>>,
    /// Tray counts, one entry per denomination of the chip set, ascending.
    pub tray: Vec<ChipCount>,
    pub pot_cents: Cents,
    pub drop_cents: Cents,
    pub rake_cents: Cents,
    pub toke_cents: Cents,
    pub kitty_cents: Cents,
    pub jackpot_cents: Cents,
    pub hand: Option<HandState>,
    pub last_hand_no: u64,
    /// R-POST-3: seat of the last big blind posted (the big blind "passes" the seats from here
    /// to the next big blind).
    #[serde(default)]
    pub last_big_blind_seat: Option<Seat>,
    /// R-POST-3: seat of the last small blind posted.
    #[serde(default)]
    pub last_small_blind_seat: Option<Seat>,
    /// R-POST-3: the button of the last hand dealt (a simplified button moves on from it).
    #[serde(default)]
    pub last_button_seat: Option<Seat>,
    /// R-POST-6 (kill trigger): the seat that won the last hand whole, and how many in a row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winning_streak: Option<(Seat, u8)>,
    /// R-POST-6 (kill trigger): the seat that owes the kill blind in the next hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill_due_seat: Option<Seat>,
    /// R-POST-4 option (`mandatory_straddle`): the seat holding the rock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rock_seat: Option<Seat>,
    /// R-POST-3 option `newcomer_takes_over_blinds`: the seats a player in the game, owing
    /// nothing, left since the last hand was dealt (bit `seat`); a newcomer there takes over.
    #[serde(default, skip_serializing_if = "no_seats")]
    pub left_since_deal: u16,
    /// R-UNIT-2: what each color change and tip did to a seat's tip chips, by the event's
    /// version (seat, change): a correction of that event undoes it (the wave-2 pass: a color-up
    /// or a tip corrected away left the seat's tip chips as they were). Forgotten when the seat
    /// takes its next occupant.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tip_chip_moves: Vec<(u64, Seat, Cents)>,
    /// R-POST-3: the players who left a seat here since the last hand was dealt, or owing an
    /// entry post, missed blinds or a missed button ante (oldest first, at most `MAX_DEPARTED`).
    /// Such a player is no newcomer here: back at this table, in any seat, they take over no
    /// seat's blinds and owe again what they owed when they left. A debt follows its player for
    /// as long as the game goes on (one set, as for a player sitting out: it does not grow while
    /// they are away); the game ends when its last player leaves, and the record with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub departed: Vec<Departed>,
    pub shift: ShiftTotals,
    /// Events applied (the stream version this state reflects).
    pub version: u64,
    /// Events of this table already reversed (R-AUDIT-1), at most
    /// `player::MAX_CORRECTED_EVENTS`.
    #[serde(default)]
    pub corrected_event_ids: Vec<String>,
    /// R-KITTY-1: the game has ended (`CloseGame`): no more hands, buy-ins or top-ups.
    #[serde(default)]
    pub game_closed: bool,
}

/// Events of a table stream. Chip-moving events carry their postings (R-UNIT-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum TableEvent {
    /// The configuration is boxed: it is four times the size of any other event, and every
    /// event is moved into the log.
    TableOpened { table_id: TableId, config: Box<TableConfig> },
    ConfigChanged { config: Box<TableConfig> },
    PlayerSeated { seat: Seat, player_id: PlayerId },
    BoughtIn {
        seat: Seat,
        player_id: PlayerId,
        amount_cents: Cents,
        source: FundsSource,
        supervisor_id: Option<String>,
        short_buy: bool,
        /// Chips handed out of the tray (cash buy-ins).
        chips: Vec<ChipCount>,
        postings: Vec<Posting>,
    },
    ToppedUp {
        seat: Seat,
        amount_cents: Cents,
        source: FundsSource,
        supervisor_id: Option<String>,
        chips: Vec<ChipCount>,
        postings: Vec<Posting>,
    },
    /// `buy_in`: the first chips of the session (judged as a buy-in, R-STAKE-3, R-REBUY-1).
    CashPutInPlay {
        seat: Seat,
        amount_cents: Cents,
        postings: Vec<Posting>,
        #[serde(default)]
        buy_in: bool,
        /// R-CHIP-2, R-AUDIT-2: the supervisor of an amount at the threshold, recorded as for a
        /// buy-in (the fixes' pass: proven, then recorded nowhere).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        supervisor_id: Option<String>,
    },
    CashInPlayConverted { seat: Seat, amount_cents: Cents, chips: Vec<ChipCount>, postings: Vec<Posting> },
    /// `amount_cents` goes to the pocket; `iou_settled_cents` of the stack first paid back the
    /// IOUs written at the seat (R-MARK-3: IOUs in play may not leave the table).
    CashedOut {
        seat: Seat,
        player_id: PlayerId,
        amount_cents: Cents,
        postings: Vec<Posting>,
        #[serde(default)]
        iou_settled_cents: Cents,
    },
    PlayerMovedOut { seat: Seat, player_id: PlayerId, to_table_id: TableId, to_seat: Seat, amount_cents: Cents, postings: Vec<Posting> },
    /// The arriving side of a move: its `postings` take the stack from the house's moves account
    /// to the seat (moves recorded before had both sides on `PlayerMovedOut`, none here).
    PlayerMovedIn {
        seat: Seat,
        player_id: PlayerId,
        from_table_id: TableId,
        amount_cents: Cents,
        /// R-STAKE-2: the session goes on, and with it what it took off for refreshments.
        #[serde(default, skip_serializing_if = "crate::money::is_zero")]
        removed_cents: Cents,
        /// Whether the seat had bought in: a seat taken without chips arrives as one, its first
        /// chips a buy-in (R-REBUY-1, R-STAKE-3). Moves recorded before this field were of
        /// bought-in seats.
        #[serde(default = "bought_in_before", skip_serializing_if = "is_bought_in")]
        bought_in: bool,
        /// R-REBUY-1: the seat's binding travels with it (the stack it must reach before it is
        /// dealt in, and until when).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bound: Option<(Cents, i64)>,
        /// R-REBUY-3: the seat must re-buy to a full buy-in before adding chips; that travels
        /// with it too (the stakes pass: a move to another open-stakes table dropped it).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        needs_full_rebuy: bool,
        /// R-RAKE-3: time paid at the table left counts at the new one until it runs out.
        #[serde(default, skip_serializing_if = "crate::money::is_zero")]
        time_paid_until_unix_ms: i64,
        /// R-CHIP-2: what the seat brought in since it was last dealt, which a supervisor's
        /// threshold counts at the new seat too (the wave-2 pass: a move between two $9,900
        /// arrivals had reset it).
        #[serde(default, skip_serializing_if = "crate::money::is_zero")]
        bought_since_deal_cents: Cents,
        /// R-UNIT-2: the tip chips in the stack go with it, and do not play at the new seat
        /// either (the wave-2 pass: a move made them playable).
        #[serde(default, skip_serializing_if = "crate::money::is_zero")]
        tip_chips_cents: Cents,
        /// The seat's side of the move (the stack is placed from `amount_cents`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        postings: Vec<Posting>,
    },
    Tipped { seat: Seat, amount_cents: Cents, postings: Vec<Posting> },
    KittyExpensePaid { amount_cents: Cents, purpose: String, to_dealer: bool, postings: Vec<Posting> },
    /// The seats' time is paid up to `paid_until_unix_ms` (R-RAKE-3).
    TimeCollected {
        seats: Vec<Seat>,
        fee_cents: Cents,
        postings: Vec<Posting>,
        #[serde(default)]
        paid_until_unix_ms: i64,
    },
    ColorChanged { seat: Seat, give: Vec<ChipCount>, receive: Vec<ChipCount>, postings: Vec<Posting> },
    FillReceived { cage_id: CageId, slip_no: u64, chips: Vec<ChipCount>, signers: Signers, postings: Vec<Posting> },
    CreditSent { cage_id: CageId, slip_no: u64, chips: Vec<ChipCount>, signers: Signers, postings: Vec<Posting> },
    /// R-CHIP-4: result = drop + credits + closing - opening - fills. The drop and the rake box
    /// go to the count room, the toke box to the dealers' toke pool.
    ShiftClosed {
        opening_tray: Vec<ChipCount>,
        closing_tray: Vec<ChipCount>,
        fills_cents: Cents,
        credits_cents: Cents,
        drop_cents: Cents,
        result_cents: Cents,
        /// The rake (or time) the shift collected (R-RAKE-1, R-RAKE-3), and the dealers' tips
        /// (R-TIP-1): the boxes emptied at the close. Zero on closes recorded before they were.
        #[serde(default)]
        rake_cents: Cents,
        #[serde(default)]
        toke_cents: Cents,
        postings: Vec<Posting>,
        /// Who counted (two distinct signers, R-CHIP-3/R-CHIP-4).
        #[serde(default)]
        signers: Option<Signers>,
    },
    HandStarted { hand_no: u64, button_seat: Seat, dealt_seats: Vec<Seat> },
    Posted { seat: Seat, kind: PostKind, amount_cents: Cents, all_in: bool, postings: Vec<Posting> },
    /// `to_cents` is the player's live total for the round after the action; `amount_cents`
    /// what it added.
    Acted { seat: Seat, kind: ActionKind, to_cents: Cents, amount_cents: Cents, all_in: bool, postings: Vec<Posting> },
    RoundStarted { round_index: u8, first_to_act_seat: Option<Seat> },
    /// Pots, rake, drop, kitty and awards (R-POT-*, R-RAKE-*, R-KITTY-1).
    HandSettled {
        pots: Vec<PotResult>,
        rake_cents: Cents,
        jackpot_cents: Cents,
        kitty_cents: Cents,
        showdown: bool,
        postings: Vec<Posting>,
        /// Awarded by the dealer's amounts (`AwardPots`), not by a ranking.
        #[serde(default)]
        dealer_awarded: bool,
    },
    HandEnded { hand_no: u64 },
    /// R-POST-5: stud up cards reported; `bring_in_seat` / `first_to_act_seat` as the core
    /// reads them (third street / the next street), when every player has its card.
    UpCardsDealt { cards: Vec<UpCard> },
    /// R-POT-3: a side pot left to one player when the last opponent in it folded, paid at
    /// once (uncalled chips in it, R-POT-4, included). Never raked.
    SidePotPaid {
        level_cents: Cents,
        pot: PotResult,
        postings: Vec<Posting>,
        /// R-KITTY-1: the kitty chip the pot gave as it was paid (in `postings` too).
        #[serde(default, skip_serializing_if = "crate::money::is_zero")]
        kitty_cents: Cents,
    },
    /// R-MARK-1: marker chips delivered to a seat between hands (postings here, not on the cage event).
    MarkerChipsSeated {
        seat: Seat,
        player_id: PlayerId,
        cage_id: CageId,
        marker_no: u64,
        amount_cents: Cents,
        postings: Vec<Posting>,
        /// The first chips of the session (judged as a buy-in).
        #[serde(default)]
        buy_in: bool,
    },
    /// R-MARK-3: with `lender_seat`, the lender's own chips came from that seat (a loan between
    /// two players); without, the IOU is paper payable to the pot's winner (`iou_cents`).
    IouWritten {
        seat: Seat,
        amount_cents: Cents,
        lender: Option<PlayerId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lender_seat: Option<Seat>,
        accepted_by: Vec<Seat>,
        to_raise: bool,
        postings: Vec<Posting>,
    },
    Corrected {
        reverses_event_id: String,
        approved_by: String,
        reason: String,
        postings: Vec<Posting>,
        /// R-STAKE-3: seats whose buy-in the correction took back: they buy in again (within
        /// the limits) before they are dealt in.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        buy_ins_taken_back: Vec<Seat>,
        /// R-CHIP-2: chips of a buy-in or top-up the correction took back, by seat: no longer
        /// brought in since the seat was last dealt (the wave-2 pass: a $9,500 buy-in keyed for
        /// $950 and corrected still counted, and the $950 needed a supervisor).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        arrivals_taken_back: Vec<(Seat, Cents)>,
        /// R-RAKE-3: seats whose time the corrected collection had paid (the time in effect):
        /// their fee is back on the stack and they owe the time again.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        time_owed_again: Vec<Seat>,
        /// R-STAKE-2: chips a corrected refreshment took off, back on the stack and back in the
        /// session's allowance (and out of what the departure counts), by seat.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        allowance_back: Vec<(Seat, Cents)>,
        /// R-POST-1, R-POST-3: what the seats of a corrected hand paid in it of their debts (the
        /// entry post, missed blinds, a missed button ante), by seat: with the chips back on the
        /// stack, they owe it again.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        debts_owed_again: Vec<(Seat, SeatDebts)>,
        /// R-UNIT-2: the tip chips a corrected color change or tip had given or taken, by seat:
        /// taken or given back.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tip_chips_back: Vec<(Seat, Cents)>,
        /// R-UNIT-2: the table version of the corrected event, when it moved tip chips: what of
        /// them cannot be taken or given back, because a later event of the seat spent or gave
        /// them, is taken off that later event's record (0 in events recorded before it).
        #[serde(default, skip_serializing_if = "is_zero_version")]
        tip_chips_version: u64,
    },
    /// R-POST-3.
    SatOut { seat: Seat },
    /// R-POST-3.
    SatIn { seat: Seat },
    /// R-BET-13: the missing chips of a short bet or call, from the stack to the pot.
    ShortBetBroughtUp { seat: Seat, amount_cents: Cents, postings: Vec<Posting> },
    /// R-STAKE-2 (seeds): chips taken off the table within the refreshment allowance, to the
    /// patron's pocket.
    ChipsRemoved { seat: Seat, player_id: PlayerId, amount_cents: Cents, postings: Vec<Posting> },
    /// R-BET-13 (seeds): a short call taken back; its chips returned from the pot to the stack.
    ShortCallTakenBack { seat: Seat, amount_cents: Cents, postings: Vec<Posting> },
    /// R-CHIP-3: a fill or credit voided; `postings` reverse the slip's.
    SlipVoided { cage_id: CageId, kind: crate::cage::SlipKind, slip_no: u64, chips: Vec<ChipCount>, reason: String, signers: Signers, postings: Vec<Posting> },
    /// R-REBUY-1 (second seat allowed): the patron left `left_table_id` of the same game with
    /// `amount_cents`; this seat is dealt in again only with at least that stack until
    /// `until_unix_ms`.
    SeatBound { seat: Seat, player_id: PlayerId, left_table_id: TableId, amount_cents: Cents, until_unix_ms: i64 },
    /// R-MARK-3: an IOU paid back, from the stack or from the pocket; with `lender`, a loan paid
    /// back to that player's stack.
    IouSettled {
        seat: Seat,
        player_id: PlayerId,
        amount_cents: Cents,
        from_pocket: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lender: Option<PlayerId>,
        postings: Vec<Posting>,
    },
    /// R-KITTY-1: the game ended; the kitty left (`kitty_cents`) went where `leftover` says.
    GameClosed { kitty_cents: Cents, leftover: crate::config::KittyLeftover, postings: Vec<Posting> },
    /// R-RAKE-2: the jackpot fund paid to a player; `approved_by` the second supervisor (empty
    /// on payouts recorded before a second one was required).
    JackpotPaid {
        seat: Seat,
        player_id: PlayerId,
        amount_cents: Cents,
        promotion: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        approved_by: String,
        postings: Vec<Posting>,
    },
    /// R-CHIP-4: the count differed from the book: per denomination the counted minus the
    /// ledger count (signed), and the drop's difference; the postings bring the tray and the
    /// drop to what was counted against `house/count-variance`. Overage positive.
    CountVarianceRecorded { tray_variance: Vec<ChipCount>, drop_variance_cents: Cents, variance_cents: Cents, signers: Signers, postings: Vec<Posting> },
}

impl TableEvent {
    pub fn event_type(&self) -> &'static str {
        match self {
            TableEvent::TableOpened { .. } => "TableOpened",
            TableEvent::ConfigChanged { .. } => "ConfigChanged",
            TableEvent::PlayerSeated { .. } => "PlayerSeated",
            TableEvent::BoughtIn { .. } => "BoughtIn",
            TableEvent::ToppedUp { .. } => "ToppedUp",
            TableEvent::CashPutInPlay { .. } => "CashPutInPlay",
            TableEvent::CashInPlayConverted { .. } => "CashInPlayConverted",
            TableEvent::CashedOut { .. } => "CashedOut",
            TableEvent::PlayerMovedOut { .. } => "PlayerMovedOut",
            TableEvent::PlayerMovedIn { .. } => "PlayerMovedIn",
            TableEvent::Tipped { .. } => "Tipped",
            TableEvent::KittyExpensePaid { .. } => "KittyExpensePaid",
            TableEvent::TimeCollected { .. } => "TimeCollected",
            TableEvent::ColorChanged { .. } => "ColorChanged",
            TableEvent::FillReceived { .. } => "FillReceived",
            TableEvent::CreditSent { .. } => "CreditSent",
            TableEvent::ShiftClosed { .. } => "ShiftClosed",
            TableEvent::HandStarted { .. } => "HandStarted",
            TableEvent::Posted { .. } => "Posted",
            TableEvent::Acted { .. } => "Acted",
            TableEvent::RoundStarted { .. } => "RoundStarted",
            TableEvent::HandSettled { .. } => "HandSettled",
            TableEvent::HandEnded { .. } => "HandEnded",
            TableEvent::MarkerChipsSeated { .. } => "MarkerChipsSeated",
            TableEvent::IouWritten { .. } => "IouWritten",
            TableEvent::Corrected { .. } => "Corrected",
            TableEvent::SatOut { .. } => "SatOut",
            TableEvent::SatIn { .. } => "SatIn",
            TableEvent::ShortBetBroughtUp { .. } => "ShortBetBroughtUp",
            TableEvent::ShortCallTakenBack { .. } => "ShortCallTakenBack",
            TableEvent::ChipsRemoved { .. } => "ChipsRemoved",
            TableEvent::SlipVoided { .. } => "SlipVoided",
            TableEvent::SeatBound { .. } => "SeatBound",
            TableEvent::IouSettled { .. } => "IouSettled",
            TableEvent::GameClosed { .. } => "GameClosed",
            TableEvent::JackpotPaid { .. } => "JackpotPaid",
            TableEvent::CountVarianceRecorded { .. } => "CountVarianceRecorded",
            TableEvent::UpCardsDealt { .. } => "UpCardsDealt",
            TableEvent::SidePotPaid { .. } => "SidePotPaid",
        }
    }

    /// The postings of this event (empty if it moves no chips).
    pub fn postings(&self) -> &[Posting] {
        match self {
            TableEvent::BoughtIn { postings, .. }
            | TableEvent::ToppedUp { postings, .. }
            | TableEvent::CashPutInPlay { postings, .. }
            | TableEvent::CashInPlayConverted { postings, .. }
            | TableEvent::CashedOut { postings, .. }
            | TableEvent::PlayerMovedOut { postings, .. }
            | TableEvent::PlayerMovedIn { postings, .. }
            | TableEvent::Tipped { postings, .. }
            | TableEvent::KittyExpensePaid { postings, .. }
            | TableEvent::TimeCollected { postings, .. }
            | TableEvent::ColorChanged { postings, .. }
            | TableEvent::FillReceived { postings, .. }
            | TableEvent::CreditSent { postings, .. }
            | TableEvent::ShiftClosed { postings, .. }
            | TableEvent::Posted { postings, .. }
            | TableEvent::Acted { postings, .. }
            | TableEvent::HandSettled { postings, .. }
            | TableEvent::IouWritten { postings, .. }
            | TableEvent::MarkerChipsSeated { postings, .. }
            | TableEvent::Corrected { postings, .. }
            | TableEvent::ShortBetBroughtUp { postings, .. }
            | TableEvent::ShortCallTakenBack { postings, .. }
            | TableEvent::ChipsRemoved { postings, .. }
            | TableEvent::SlipVoided { postings, .. }
            | TableEvent::IouSettled { postings, .. }
            | TableEvent::GameClosed { postings, .. }
            | TableEvent::JackpotPaid { postings, .. }
            | TableEvent::CountVarianceRecorded { postings, .. } => postings,
            | TableEvent::SidePotPaid { postings, .. } => postings,
            TableEvent::TableOpened { .. }
            | TableEvent::ConfigChanged { .. }
            | TableEvent::PlayerSeated { .. }
            | TableEvent::HandStarted { .. }
            | TableEvent::RoundStarted { .. }
            | TableEvent::HandEnded { .. }
            | TableEvent::SatOut { .. }
            | TableEvent::SatIn { .. }
            | TableEvent::SeatBound { .. } => &[],
            | TableEvent::UpCardsDealt { .. } => &[],
        }
    }
}

fn is_zero_version(version: &u64) -> bool {
    *version == 0
}

fn no_seats(seat_bits: &u16) -> bool {
    *seat_bits == 0
}

fn bought_in_before() -> bool {
    true
}

fn is_bought_in(bought_in: &bool) -> bool {
    *bought_in
}

impl TableState {
    pub fn new() -> TableState {
        TableState::default()
    }

    pub fn seat(&self, seat: Seat) -> Option<&SeatState> {
        self.seats.get((seat as usize).wrapping_sub(1)).and_then(|s| s.as_ref())
    }

    pub(crate) fn seat_mut(&mut self, seat: Seat) -> Option<&mut SeatState> {
        self.seats.get_mut((seat as usize).wrapping_sub(1)).and_then(|s| s.as_mut())
    }

    /// Stack of a seat (0 if empty), R-STAKE-4.
    pub fn stack_cents(&self, seat: Seat) -> Cents {
        self.seat(seat).map_or(0, |s| s.stack_cents)
    }

    /// R-UNIT-2: the part of a stack that plays: whole minimum playable chips. Smaller chips
    /// (tip chips) never play, whatever their number; an all-in is for this much, and a player
    /// with no more of it is all in (the betting pass: a $0.25 chip went into an all-in and was
    /// won).
    pub fn playable_stack_cents(&self, seat: Seat) -> Cents {
        let stack = self.seat(seat).map_or(0, |s| s.stack_cents - s.tip_chips_cents.clamp(0, s.stack_cents.max(0)));
        match self.config.as_ref().map(|c| c.chip_set.min_playable_chip_cents).filter(|chip| *chip > 0) {
            Some(chip) => stack - stack.rem_euclid(chip),
            None => stack,
        }
    }

    /// The playable stacks of the players dealt in, indexed by seat number (index 0 and seats
    /// not dealt 0): a copy to read while the hand is borrowed mutably.
    pub(crate) fn stacks_by_seat(&self) -> [Cents; crate::MAX_SEATS + 1] {
        let mut stacks = [0; crate::MAX_SEATS + 1];
        if let Some(hand) = &self.hand {
            for p in &hand.players {
                if let Some(slot) = stacks.get_mut(p.seat as usize) {
                    *slot = self.playable_stack_cents(p.seat);
                }
            }
        }
        stacks
    }

    /// Tray count of a denomination.
    pub fn tray_count(&self, denomination_cents: Cents) -> i64 {
        self.tray.iter().find(|c| c.denomination_cents == denomination_cents).map_or(0, |c| c.count)
    }

    pub fn tray_value_cents(&self) -> Cents {
        crate::money::chips_value_cents(&self.tray)
    }

    /// Balances of this table's accounts (non-zero ones), for audits and tests.
    pub fn balances(&self) -> Vec<Posting> {
        let Some(table_id) = self.table_id.clone() else { return Vec::new() };
        let mut out = Vec::new();
        let mut push = |account: Account, amount_cents: Cents| {
            if amount_cents != 0 {
                out.push(Posting::new(account, amount_cents));
            }
        };
        for (i, s) in self.seats.iter().enumerate() {
            if let Some(s) = s {
                let seat = (i + 1) as Seat;
                push(Account::Seat { table_id: table_id.clone(), seat }, s.stack_cents);
            }
        }
        for c in &self.tray {
            push(Account::Tray { table_id: table_id.clone(), denomination_cents: c.denomination_cents }, c.value_cents());
        }
        push(Account::Pot { table_id: table_id.clone(), pot_index: 0 }, self.pot_cents);
        push(Account::Drop { table_id: table_id.clone() }, self.drop_cents);
        push(Account::Rake { table_id: table_id.clone() }, self.rake_cents);
        push(Account::Toke { table_id: table_id.clone() }, self.toke_cents);
        push(Account::Kitty { table_id: table_id.clone() }, self.kitty_cents);
        push(Account::Jackpot { table_id }, self.jackpot_cents);
        out
    }

    /// Apply the postings that belong to this table.
    fn apply_postings(&mut self, postings: &[Posting]) {
        for p in postings {
            let Some(tid) = p.account.table_id() else { continue };
            if self.table_id.as_ref() != Some(tid) {
                continue;
            }
            let a = p.amount_cents;
            match &p.account {
                Account::Seat { seat, .. } => {
                    if let Some(s) = self.seat_mut(*seat) {
                        s.stack_cents += a;
                    }
                }
                Account::Tray { denomination_cents, .. } => {
                    let d = *denomination_cents;
                    match self.tray.iter_mut().find(|c| c.denomination_cents == d) {
                        Some(c) => c.count += a / d,
                        None => {
                            self.tray.push(ChipCount { denomination_cents: d, count: a / d });
                            self.tray.sort_by_key(|c| c.denomination_cents);
                        }
                    }
                }
                Account::Pot { .. } => {
                    self.pot_cents += a;
                    if let Some(h) = self.hand.as_mut() {
                        h.pot_cents += a;
                    }
                }
                Account::Drop { .. } => self.drop_cents += a,
                Account::Rake { .. } => self.rake_cents += a,
                Account::Toke { .. } => self.toke_cents += a,
                Account::Kitty { .. } => self.kitty_cents += a,
                Account::Jackpot { .. } => self.jackpot_cents += a,
                _ => {}
            }
        }
    }

    /// R-UNIT-2: sets a seat's tip chips from what they were and its stack, and remembers the
    /// change under this event's version for a correction of it.
    fn move_tip_chips(&mut self, seat: Seat, to: impl FnOnce(Cents, Cents) -> Cents) {
        let version = self.version;
        let Some(s) = self.seat_mut(seat) else { return };
        let before = s.tip_chips_cents;
        s.tip_chips_cents = to(before, s.stack_cents);
        let change = s.tip_chips_cents - before;
        if change != 0 {
            self.tip_chip_moves.push((version, seat, change));
        }
    }

    /// R-UNIT-2: tip chips a correction could not take or give back (`short`, signed as the
    /// change it asked), because events of the seat after version `since` spent or gave them
    /// (the tip paid with the $1 chips of a color change corrected before it): those events no
    /// longer moved them, so their own correction moves none (the wave-2b pass: $5 of tip
    /// chips had come back with the tip where none remained).
    fn tip_chips_spent_since(&mut self, since: u64, seat: Seat, mut short: Cents) {
        if since == 0 || short == 0 {
            return;
        }
        for (version, moved, change) in self.tip_chip_moves.iter_mut() {
            if *version > since && *moved == seat && change.signum() == short.signum() {
                let taken = if short < 0 { short.max(*change) } else { short.min(*change) };
                *change -= taken;
                short -= taken;
                if short == 0 {
                    break;
                }
            }
        }
        self.tip_chip_moves.retain(|(.., change)| *change != 0);
    }

    fn place(&mut self, seat: Seat, player_id: &PlayerId, owes_entry_post: bool) {
        self.tip_chip_moves.retain(|(_, moved, _)| *moved != seat);
        let i = (seat as usize).wrapping_sub(1);
        if i < self.seats.len() && self.seats[i].is_none() {
            // R-POST-3 option `newcomer_takes_over_blinds`: the seat a player of the game just
            // left: the newcomer pays its blinds in that player's stead, no entry post.
            // A player who left a seat here since the last deal, or owing something here, is no
            // newcomer (a seat change, a return): no takeover, and what they owed follows them
            // (the hostile tester: a player owing a small blind and an ante moved to the seat of
            // one who left owing nothing and played posting nothing; without the option the seat
            // change shed all but the entry big blind).
            let bit = if (seat as usize) < 16 { 1u16 << seat } else { 0 };
            let returning = self.departed.iter().position(|d| &d.player_id == player_id).map(|i| self.departed.remove(i));
            let takes_over = returning.is_none()
                && self.left_since_deal & bit != 0
                && self.config.as_ref().is_some_and(|c| c.newcomer_takes_over_blinds);
            self.left_since_deal &= !bit;
            // R-POST-3 is a rule of blind games: a newcomer to a game without blinds (stud, open
            // stakes) antes and plays (the fuzz pass: a stud newcomer was asked for a "big blind").
            let blind_game = self.config.as_ref().is_some_and(TableConfig::has_blinds);
            let owes_entry_post = owes_entry_post && !takes_over && blind_game;
            self.seats[i] = Some(SeatState {
                player_id: player_id.clone(),
                stack_cents: 0,
                cash_in_play_cents: 0,
                bought_in_cents: 0,
                bought_since_deal_cents: 0,
                tip_chips_cents: 0,
                has_bought_in: false,
                short_buy_used: false,
                iou_cents: 0,
                loans: Vec::new(),
                removed_cents: 0,
                owes_entry_post,
                needs_full_rebuy: false,
                sitting_out: false,
                missed_big_blind: false,
                missed_small_blind: false,
                missed_button_ante_cents: 0,
                cash_in_play_played: false,
                bound_min_stack_cents: 0,
                bound_until_unix_ms: 0,
                time_paid_until_unix_ms: 0,
                time_paid_at_version: 0,
                dealt_at_version: 0,
                seated_at_version: self.version,
                debts_paid: SeatDebts::default(),
            });
            if let (Some(back), Some(s)) = (returning, self.seats[i].as_mut()) {
                back.debts.owed_at(s);
            }
        }
    }

    /// R-REBUY-3: in open stakes, an all-in player who won less than the minimum buy-in.
    fn mark_short_all_in_winners(&mut self, pots: &[PotResult]) {
        let Some(config) = self.config.as_ref() else { return };
        if !matches!(config.stakes, crate::config::StakesMode::OpenStakes { .. }) {
            return;
        }
        let min_cents = config.buy_in.min_cents;
        let Some(hand) = self.hand.as_ref() else { return };
        let all_in: Vec<Seat> = hand.players.iter().filter(|p| p.status == crate::hand::InHand::AllIn).map(|p| p.seat).collect();
        for seat in all_in {
            let won: Cents = pots.iter().flat_map(|p| p.awards.iter()).filter(|(s, _)| *s == seat).map(|(_, a)| a).sum();
            if won > 0 && won < min_cents
                && let Some(s) = self.seat_mut(seat) {
                    s.needs_full_rebuy = true;
                }
        }
    }

    /// Rebuild the state one event further, by value (see [`TableState::apply`]). Never
    /// fails: events were judged by `decide`.
    pub fn evolve(mut self, event: &TableEvent) -> TableState {
        self.apply(event);
        self
    }

    /// `TableOpened`: empty seats, an empty tray of the chip set's denominations.
    fn open(&mut self, table_id: TableId, config: TableConfig) {
        self.table_id = Some(table_id);
        self.seats = vec![None; crate::MAX_SEATS];
        self.tray = config
            .chip_set
            .denominations_cents
            .iter()
            .map(|d| ChipCount { denomination_cents: *d, count: 0 })
            .collect();
        self.config = Some(config);
    }

    /// [`TableState::apply`] for a caller that drops the event next: the configuration of
    /// `TableOpened` and `ConfigChanged` is moved out of the event instead of copied (such an
    /// event is left as some other event). The resulting state is the same.
    pub fn apply_taking(&mut self, event: &mut TableEvent) {
        if !matches!(event, TableEvent::TableOpened { .. } | TableEvent::ConfigChanged { .. }) {
            return self.apply(event);
        }
        self.version += 1;
        match std::mem::replace(event, TableEvent::HandEnded { hand_no: 0 }) {
            TableEvent::TableOpened { table_id, config } => self.open(table_id, *config),
            TableEvent::ConfigChanged { config } => self.config = Some(*config),
            _ => unreachable!("matched above"),
        }
    }

    /// Rebuild the state one event further in place: what `evolve` does, without moving
    /// the state in and out (the replay and store loops keep one state per stream).
    pub fn apply(&mut self, event: &TableEvent) {
        self.version += 1;
        match event {
            TableEvent::TableOpened { table_id, config } => self.open(table_id.clone(), TableConfig::clone(config)),
            TableEvent::ConfigChanged { config } => self.config = Some(TableConfig::clone(config)),
            TableEvent::PlayerSeated { seat, player_id } => self.place(*seat, player_id, self.last_button_seat.is_some()),
            TableEvent::BoughtIn { seat, player_id, amount_cents, short_buy, postings, .. } => {
                self.place(*seat, player_id, self.last_button_seat.is_some());
                self.apply_postings(postings);
                if let Some(s) = self.seat_mut(*seat) {
                    s.bought_in_cents += amount_cents;
                    s.bought_since_deal_cents += amount_cents;
                    s.has_bought_in = true;
                    s.short_buy_used |= *short_buy;
                }
            }
            TableEvent::ToppedUp { seat, amount_cents, postings, .. } => {
                self.apply_postings(postings);
                let min_cents = self.config.as_ref().map_or(0, |c| c.buy_in.min_cents);
                if let Some(s) = self.seat_mut(*seat) {
                    s.bought_in_cents += amount_cents;
                    s.bought_since_deal_cents += amount_cents;
                    if s.stack_cents >= min_cents {
                        s.needs_full_rebuy = false;
                    }
                }
            }
            TableEvent::CashedOut { seat, postings, .. } | TableEvent::PlayerMovedOut { seat, postings, .. } => {
                self.apply_postings(postings);
                // R-POST-3 option `newcomer_takes_over_blinds`: a player of the game who owed
                // nothing leaves a seat whose blinds a newcomer may take over.
                let in_the_game = self.seat(*seat).is_some_and(|s| {
                    s.dealt_this_session()
                        && !s.owes_entry_post
                        && !s.sitting_out
                        && !s.missed_big_blind
                        && !s.missed_small_blind
                        && s.missed_button_ante_cents == 0
                });
                if in_the_game && (*seat as usize) < 16 {
                    self.left_since_deal |= 1 << *seat;
                }
                // R-POST-3: what the player owes here leaves with them, and comes back with them.
                if let Some(s) = self.seat(*seat) {
                    let departed = Departed { player_id: s.player_id.clone(), debts: SeatDebts::of(s) };
                    self.departed.retain(|d| d.player_id != departed.player_id);
                    if self.departed.len() >= MAX_DEPARTED {
                        // The oldest that owes at most the entry post any newcomer owes goes
                        // first: missed blinds are not forgotten for forty seatings without a
                        // chip (the seating pass: forty phantoms had wiped a dead small blind).
                        let weakest = self.departed.iter().position(|d| !d.debts.missed_big_blind && !d.debts.missed_small_blind && d.debts.missed_button_ante_cents == 0);
                        self.departed.remove(weakest.unwrap_or(0));
                    }
                    self.departed.push(departed);
                }
                if let Some(slot) = self.seats.get_mut((*seat as usize).wrapping_sub(1)) {
                    *slot = None;
                }
                // R-POST-6: a winning streak and a kill owed are the player's, and leave with them.
                if self.winning_streak.is_some_and(|(won_at, _)| won_at == *seat) {
                    self.winning_streak = None;
                }
                if self.kill_due_seat == Some(*seat) {
                    self.kill_due_seat = None;
                }
                // The rock stays at the table: the next pot's winner takes it.
                if self.rock_seat == Some(*seat) {
                    self.rock_seat = None;
                }
                // The last player gone: the game is over; the next one starts its blinds anew.
                if self.seats.iter().all(Option::is_none) {
                    self.last_big_blind_seat = None;
                    self.last_small_blind_seat = None;
                    self.last_button_seat = None;
                    self.left_since_deal = 0;
                    self.departed.clear();
                }
            }
            TableEvent::PlayerMovedIn {
                seat,
                player_id,
                amount_cents,
                removed_cents,
                bought_in,
                bound,
                needs_full_rebuy,
                time_paid_until_unix_ms,
                bought_since_deal_cents,
                tip_chips_cents,
                ..
            } => {
                // R-STAKE-6: a house move is not a new player.
                self.place(*seat, player_id, false);
                if let Some(s) = self.seat_mut(*seat) {
                    s.stack_cents += amount_cents;
                    s.tip_chips_cents = (*tip_chips_cents).clamp(0, s.stack_cents.max(0));
                    s.removed_cents = *removed_cents;
                    s.has_bought_in = *bought_in;
                    s.needs_full_rebuy = *needs_full_rebuy;
                    s.time_paid_until_unix_ms = *time_paid_until_unix_ms;
                    s.bought_since_deal_cents = *bought_since_deal_cents;
                    if let Some((min_stack_cents, until_unix_ms)) = bound {
                        s.bound_min_stack_cents = *min_stack_cents;
                        s.bound_until_unix_ms = *until_unix_ms;
                    }
                }
            }
            TableEvent::FillReceived { cage_id, slip_no, chips, postings, .. } => {
                self.apply_postings(postings);
                self.shift.fills_cents += crate::money::chips_value_cents(chips);
                self.shift.slips.push((cage_id.clone(), crate::cage::SlipKind::Fill, *slip_no));
            }
            TableEvent::CreditSent { cage_id, slip_no, chips, postings, .. } => {
                self.apply_postings(postings);
                self.shift.credits_cents += crate::money::chips_value_cents(chips);
                self.shift.slips.push((cage_id.clone(), crate::cage::SlipKind::Credit, *slip_no));
            }
            TableEvent::SlipVoided { kind, chips, postings, .. } => {
                self.apply_postings(postings);
                let value = crate::money::chips_value_cents(chips);
                match kind {
                    crate::cage::SlipKind::Fill => self.shift.fills_cents -= value,
                    crate::cage::SlipKind::Credit => self.shift.credits_cents -= value,
                }
            }
            TableEvent::CountVarianceRecorded { postings, .. } => self.apply_postings(postings),
            TableEvent::ShiftClosed { closing_tray, postings, .. } => {
                self.apply_postings(postings);
                // R-CHIP-4: nothing counted is corrected any more, so the corrections to remember
                // start again with the shift (a table had refused every correction for good after
                // 4,096 of them, over its whole life).
                self.corrected_event_ids.clear();
                self.shift = ShiftTotals {
                    opening_tray: closing_tray.clone(),
                    fills_cents: 0,
                    credits_cents: 0,
                    counted_through_version: self.version,
                    slips: Vec::new(),
                };
            }
            TableEvent::IouWritten { seat, amount_cents, lender, lender_seat, to_raise, postings, .. } => {
                self.apply_postings(postings);
                if let Some(s) = self.seat_mut(*seat) {
                    match (lender, lender_seat) {
                        (Some(lender), Some(_)) => match s.loans.iter_mut().find(|l| &l.lender == lender) {
                            Some(l) => l.amount_cents += amount_cents,
                            None => s.loans.push(Loan { lender: lender.clone(), amount_cents: *amount_cents }),
                        },
                        // Paper (and an IOU named to a lender before loans moved the lender's chips).
                        _ => s.iou_cents += amount_cents,
                    }
                }
                if let Some(p) = self.hand.as_mut().and_then(|h| h.player_mut(*seat)) {
                    p.borrowed = true;
                    p.borrowed_to_raise |= *to_raise;
                }
            }
            TableEvent::HandStarted { hand_no, button_seat, dealt_seats } => {
                self.last_hand_no = *hand_no;
                self.left_since_deal = 0;
                // R-POST-3: who left owing nothing is a newcomer from this deal on.
                self.departed.retain(|d| !d.debts.is_none());
                let version = self.version;
                // R-STAKE-5: cash in front of a dealt player plays in this hand.
                for seat in dealt_seats {
                    if let Some(s) = self.seat_mut(*seat) {
                        s.dealt_at_version = version;
                        s.bought_since_deal_cents = 0;
                        s.debts_paid = SeatDebts::default();
                        if s.cash_in_play_cents > 0 {
                            s.cash_in_play_played = true;
                        }
                    }
                }
                if let Some(config) = self.config.as_ref() {
                    let mut hand = crate::betting::new_hand(*hand_no, *button_seat, dealt_seats, config);
                    // The dealt seats, ascending (at most MAX_SEATS: no allocation).
                    let mut seats = [0 as Seat; crate::MAX_SEATS];
                    let n = hand.players.len().min(crate::MAX_SEATS);
                    for (slot, p) in seats.iter_mut().zip(&hand.players) {
                        *slot = p.seat;
                    }
                    let dealt = &seats[..n];
                    hand.blinds = crate::posts::blind_positions(config, self.last_big_blind_seat, *button_seat, dealt);
                    let positions = hand.blinds;
                    let skipped = crate::posts::skipped_blinds(self, positions, dealt);
                    crate::posts::track_missed_blinds(self, positions, dealt, *button_seat);
                    crate::posts::owe_missed_blinds(self, &mut hand, skipped);
                    crate::posts::track_missed_button_ante(self, &mut hand, dealt);
                    // R-POST-6: the kill is owed in this hand, by a player dealt in; else it lapses.
                    hand.kill_owed_by = self.kill_due_seat.take().filter(|seat| dealt.contains(seat));
                    // R-POST-4 option: the rock's holder, if dealt in (a straddle needs three).
                    let rock = self.config.as_ref().is_some_and(|c| c.mandatory_straddle);
                    hand.rock_holder = self.rock_seat.filter(|seat| rock && dealt.len() >= 3 && dealt.contains(seat));
                    self.last_button_seat = Some(*button_seat);
                    self.hand = Some(hand);
                }
            }
            TableEvent::Posted { seat, kind, amount_cents, postings, .. } => {
                self.apply_postings(postings);
                let owed_before = self.seat(*seat).map(SeatDebts::of);
                if matches!(kind, PostKind::BigBlind | PostKind::ThirdBlind | PostKind::NewPlayer | PostKind::MissedBigBlind | PostKind::Kill)
                    && let Some(s) = self.seat_mut(*seat) {
                        s.owes_entry_post = false;
                    }
                crate::posts::clear_missed_blinds(self, *seat, *kind);
                // R-AUDIT-1: what the post paid, owed again if the hand is corrected.
                if let (Some(before), Some(s)) = (owed_before, self.seat_mut(*seat)) {
                    s.debts_paid = s.debts_paid.and(before.paid_by(SeatDebts::of(s)));
                }
                let stacks = self.stacks_by_seat();
                if let (Some(hand), Some(config)) = (self.hand.as_mut(), self.config.as_ref()) {
                    crate::posts::apply_post(hand, config, *seat, *kind, *amount_cents, |s| stacks[s as usize]);
                }
            }
            TableEvent::UpCardsDealt { cards } => {
                if let (Some(hand), Some(config)) = (self.hand.as_mut(), self.config.as_ref()) {
                    crate::stud::apply_up_cards(hand, config, cards);
                }
            }
            TableEvent::SidePotPaid { level_cents, pot, postings, .. } => {
                self.apply_postings(postings);
                if let Some(hand) = self.hand.as_mut() {
                    crate::pots::apply_side_pot_paid(hand, *level_cents, pot);
                }
            }
            TableEvent::Acted { seat, kind, to_cents, amount_cents, postings, .. } => {
                self.apply_postings(postings);
                let stack_cents = self.playable_stack_cents(*seat);
                if let (Some(hand), Some(config)) = (self.hand.as_mut(), self.config.as_ref()) {
                    apply_acted(hand, config, *seat, *kind, *to_cents, *amount_cents, postings, stack_cents);
                }
            }
            TableEvent::ShortBetBroughtUp { seat, amount_cents, postings } => {
                self.apply_postings(postings);
                let stack_cents = self.playable_stack_cents(*seat);
                if let Some(hand) = self.hand.as_mut() {
                    crate::betting::apply_bring_up(hand, *seat, *amount_cents, stack_cents);
                    hand.take_back = None;
                }
            }
            TableEvent::ChipsRemoved { seat, amount_cents, postings, .. } => {
                self.apply_postings(postings);
                if let Some(s) = self.seat_mut(*seat) {
                    s.removed_cents += amount_cents;
                }
            }
            TableEvent::ShortCallTakenBack { postings, .. } => {
                self.apply_postings(postings);
                if let Some(hand) = self.hand.as_mut() {
                    crate::betting::apply_take_back(hand);
                }
            }
            TableEvent::RoundStarted { round_index, first_to_act_seat } => {
                let stacks = self.stacks_by_seat();
                if let (Some(hand), Some(config)) = (self.hand.as_mut(), self.config.as_ref()) {
                    crate::betting::start_round(hand, *round_index, *first_to_act_seat, config, |s| stacks[s as usize]);
                }
            }
            TableEvent::HandSettled { pots, postings, .. } => {
                self.apply_postings(postings);
                self.mark_short_all_in_winners(pots);
                crate::posts::track_kill_trigger(self, pots);
                crate::posts::pass_the_rock(self, pots);
                if let Some(hand) = self.hand.as_mut() {
                    hand.phase = HandPhase::Settled;
                    hand.round.to_act = None;
                }
            }
            TableEvent::HandEnded { .. } => self.hand = None,
            TableEvent::SatOut { seat } | TableEvent::SatIn { seat } => {
                let out = matches!(event, TableEvent::SatOut { .. });
                if let Some(s) = self.seat_mut(*seat) {
                    s.sitting_out = out;
                }
            }
            TableEvent::CashPutInPlay { seat, amount_cents, postings, buy_in, .. } => {
                self.apply_postings(postings);
                let min_cents = self.config.as_ref().map_or(0, |c| c.buy_in.min_cents);
                if let Some(s) = self.seat_mut(*seat) {
                    s.cash_in_play_cents += amount_cents;
                    s.bought_in_cents += amount_cents;
                    s.bought_since_deal_cents += amount_cents;
                    s.has_bought_in |= *buy_in;
                    if s.stack_cents >= min_cents {
                        s.needs_full_rebuy = false;
                    }
                }
            }
            TableEvent::CashInPlayConverted { seat, amount_cents, postings, .. } => {
                self.apply_postings(postings);
                if let Some(s) = self.seat_mut(*seat) {
                    s.cash_in_play_cents -= amount_cents;
                    if s.cash_in_play_cents <= 0 {
                        s.cash_in_play_played = false;
                    }
                }
            }
            TableEvent::SeatBound { seat, amount_cents, until_unix_ms, .. } => {
                if let Some(s) = self.seat_mut(*seat) {
                    s.bound_min_stack_cents = *amount_cents;
                    s.bound_until_unix_ms = *until_unix_ms;
                }
            }
            TableEvent::IouSettled { seat, amount_cents, lender, postings, .. } => {
                self.apply_postings(postings);
                if let Some(s) = self.seat_mut(*seat) {
                    match lender {
                        Some(lender) => {
                            if let Some(l) = s.loans.iter_mut().find(|l| &l.lender == lender) {
                                l.amount_cents -= amount_cents;
                            }
                            s.loans.retain(|l| l.amount_cents > 0);
                        }
                        None => s.iou_cents -= amount_cents,
                    }
                }
            }
            TableEvent::GameClosed { postings, .. } => {
                self.apply_postings(postings);
                self.game_closed = true;
            }
            TableEvent::TimeCollected { seats, postings, paid_until_unix_ms, .. } => {
                self.apply_postings(postings);
                let version = self.version;
                for seat in seats {
                    if let Some(s) = self.seat_mut(*seat) {
                        s.time_paid_until_unix_ms = s.time_paid_until_unix_ms.max(*paid_until_unix_ms);
                        s.time_paid_at_version = version;
                    }
                }
            }
            TableEvent::MarkerChipsSeated { seat, amount_cents, postings, buy_in, .. } => {
                self.apply_postings(postings);
                let min_cents = self.config.as_ref().map_or(0, |c| c.buy_in.min_cents);
                if let Some(s) = self.seat_mut(*seat) {
                    s.bought_in_cents += amount_cents;
                    s.bought_since_deal_cents += amount_cents;
                    s.has_bought_in |= *buy_in;
                    if s.stack_cents >= min_cents {
                        s.needs_full_rebuy = false;
                    }
                }
            }
            TableEvent::Corrected {
                reverses_event_id,
                postings,
                buy_ins_taken_back,
                arrivals_taken_back,
                time_owed_again,
                allowance_back,
                debts_owed_again,
                tip_chips_back,
                tip_chips_version,
                ..
            } => {
                self.apply_postings(postings);
                crate::corrections::remember_corrected(&mut self.corrected_event_ids, reverses_event_id);
                for (seat, change) in tip_chips_back {
                    let Some(s) = self.seat_mut(*seat) else { continue };
                    let before = s.tip_chips_cents;
                    s.tip_chips_cents = (before + change).clamp(0, s.stack_cents.max(0));
                    let short = change - (s.tip_chips_cents - before);
                    self.tip_chips_spent_since(*tip_chips_version, *seat, short);
                }
                for seat in buy_ins_taken_back {
                    if let Some(s) = self.seat_mut(*seat) {
                        s.has_bought_in = false;
                    }
                }
                for (seat, amount_cents) in arrivals_taken_back {
                    if let Some(s) = self.seat_mut(*seat) {
                        s.bought_since_deal_cents = (s.bought_since_deal_cents - amount_cents).max(0);
                    }
                }
                for seat in time_owed_again {
                    if let Some(s) = self.seat_mut(*seat) {
                        s.time_paid_until_unix_ms = 0;
                        s.time_paid_at_version = 0;
                    }
                }
                for (seat, amount_cents) in allowance_back {
                    if let Some(s) = self.seat_mut(*seat) {
                        s.removed_cents = (s.removed_cents - amount_cents).max(0);
                    }
                }
                for (seat, debts) in debts_owed_again {
                    if let Some(s) = self.seat_mut(*seat) {
                        debts.owed_at(s);
                        s.debts_paid = SeatDebts::default();
                    }
                }
            }
            // R-UNIT-2: the tip chips a seat holds, by what a color change gives it and takes
            // back below the minimum playable chip; a tip is paid from them first.
            TableEvent::ColorChanged { seat, give, receive, postings } => {
                let min_chip = self.config.as_ref().map_or(0, |c| c.chip_set.min_playable_chip_cents);
                let small = |chips: &[ChipCount]| chips.iter().filter(|c| c.denomination_cents < min_chip).map(ChipCount::value_cents).sum::<Cents>();
                let (received, given) = (small(receive), small(give));
                self.apply_postings(postings);
                self.move_tip_chips(*seat, |tip, stack| (tip + received - given).clamp(0, stack.max(0)));
            }
            TableEvent::Tipped { seat, amount_cents, postings } => {
                self.apply_postings(postings);
                self.move_tip_chips(*seat, |tip, stack| (tip - amount_cents).clamp(0, stack.max(0)));
            }
            TableEvent::KittyExpensePaid { postings, .. } | TableEvent::JackpotPaid { postings, .. } => self.apply_postings(postings),
        }
        // R-UNIT-2: a seat holds no more tip chips than its stack; chips gone by any way (taken
        // off, paid as time) take tip chips with them, and chips bought later are not tip chips
        // (the wave-2b pass: $5 of tip chips taken off with the stack came back against new ones).
        for s in self.seats.iter_mut().flatten() {
            s.tip_chips_cents = s.tip_chips_cents.min(s.stack_cents.max(0));
        }
    }
}

/// The hand side of an `Acted` event, once its postings are on the stacks (`stack_after_cents`
/// is the seat's stack then). Shared by `apply` and by the last fold, which settles a copy of
/// the hand without copying the table.
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_acted(
    hand: &mut HandState,
    config: &TableConfig,
    seat: Seat,
    kind: ActionKind,
    to_cents: Cents,
    amount_cents: Cents,
    postings: &[Posting],
    stack_after_cents: Cents,
) {
    // R-BET-13: chips short of the action (the seat's postings net to less).
    let put_in: Cents = -postings
        .iter()
        .filter(|p| matches!(p.account, Account::Seat { seat: s, .. } if s == seat))
        .map(|p| p.amount_cents)
        .sum::<Cents>();
    let short_cents = amount_cents - put_in;
    let before = hand.player(seat).map(|p| (p.round_cents, p.acted, p.acted_at_raise_no));
    crate::betting::apply_action(hand, config, seat, kind, to_cents, stack_after_cents);
    // R-MARK-3: a bet or raise after borrowing in this hand is made with the borrowed chips.
    if matches!(kind, ActionKind::Bet | ActionKind::Raise | ActionKind::Complete)
        && let Some(p) = hand.player_mut(seat)
        && p.borrowed
    {
        p.borrowed_to_raise = true;
    }
    hand.take_back = None;
    if short_cents > 0 {
        crate::betting::apply_short(hand, seat, short_cents);
        if let (ActionKind::Call, Some((round_cents_before, acted_before, acted_at_raise_no_before))) = (kind, before) {
            hand.take_back = Some(crate::hand::TakeBack {
                seat,
                round_index: hand.round.index,
                put_in_cents: put_in,
                round_cents_before,
                acted_before,
                acted_at_raise_no_before,
            });
        }
    }
}
