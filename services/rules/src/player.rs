//! The player (patron) stream `player-{id}`: pocket chips, credit line and markers, departures
//! for the re-buy wait (R-REBUY-1), cash aggregation per gaming day (R-AUDIT-4).

use serde::{Deserialize, Serialize};

use crate::aml::{CashDay, CashDirection};
use crate::config::SameGame;
use crate::money::Cents;
use crate::streams::{CageId, PlayerId, Seat, TableId};

/// Departures kept for the re-buy wait; older ones are dropped (bound).
pub const MAX_DEPARTURES: usize = 32;
/// Departures still unmet by a return kept for the re-buy wait (bound): past the longest wait
/// they go; beyond the bound, the smallest goes. Reaching it takes departures from that many
/// games within two hours.
pub const MAX_UNMET_DEPARTURES: usize = 128;
/// Open markers per patron (bound).
pub const MAX_OPEN_MARKERS: usize = 64;
/// Seats one patron may hold at once across the room (bound; R-REBUY-1 allows one per game by
/// default).
pub const MAX_SEATS_HELD: usize = 8;
/// Corrections remembered per stream, so that no event is reversed twice (R-AUDIT-1). A stream
/// that reaches the bound refuses further corrections (an anomaly for an auditor to look at).
pub const MAX_CORRECTED_EVENTS: usize = 4_096;

/// A command for one patron.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerCommand {
    pub player_id: PlayerId,
    pub op: PlayerOp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op")]
pub enum PlayerOp {
    /// R-MARK-1: set the approved credit line; the approver differs from the actor.
    SetCreditLine { line_cents: Cents, approved_by: String },
    /// R-AUDIT-1: take back a recorded cash transaction or departure; the approver differs
    /// from the actor.
    Correct { reverses_event_id: String, approved_by: String, reason: String, reversal: crate::corrections::PlayerReversal },
}

/// One cash-out from a game, for the re-buy wait (R-REBUY-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Departure {
    pub game_key: String,
    pub table_id: TableId,
    pub amount_cents: Cents,
    pub at_unix_ms: i64,
    /// The wait of the table left (window ms, tolerance bps): a return binds by the longer
    /// window and the smaller tolerance of the two tables (the stakes pass: a 30-minute table
    /// took back a patron 40 minutes after leaving a 120-minute one). Departures recorded
    /// before it bind by the table returned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<(i64, i64)>,
}

impl Departure {
    /// R-REBUY-1: this departure binds a return to the game at least as much, and for at
    /// least as long, as `earlier` does: for as many chips or more, with a window no shorter
    /// and a tolerance no larger (a departure recorded without its wait binds by the table
    /// returned to, which every departure's wait includes).
    fn covers(&self, earlier: &Departure) -> bool {
        let wait_covers = match (self.wait, earlier.wait) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some((window, tolerance)), Some((earlier_window, earlier_tolerance))) => {
                window >= earlier_window && tolerance <= earlier_tolerance
            }
        };
        self.amount_cents >= earlier.amount_cents && self.at_unix_ms >= earlier.at_unix_ms && wait_covers
    }
}

/// Adds `departure` to a list kept within `bound`: departures past the longest wait any table
/// may have bind no more and go first; a list still full loses its smallest departure (the
/// oldest of equals), not the largest that binds (the oldest had gone: 32 departures from
/// other games pushed out the one that bound the return: the stakes pass).
fn keep_within_bound<T: AsRef<Departure>>(list: &mut Vec<T>, item: T, bound: usize) {
    let expired_before = item.as_ref().at_unix_ms.saturating_sub(crate::config::MAX_REBUY_WAIT_WINDOW_MS);
    list.retain(|d| d.as_ref().at_unix_ms >= expired_before);
    if list.len() >= bound
        && let Some(smallest) = list.iter().enumerate().min_by_key(|(i, d)| (d.as_ref().amount_cents, *i)).map(|(i, _)| i)
    {
        list.remove(smallest);
    }
    list.push(item);
}

impl AsRef<Departure> for Departure {
    fn as_ref(&self) -> &Departure {
        self
    }
}

impl AsRef<Departure> for MetDeparture {
    fn as_ref(&self) -> &Departure {
        &self.departure
    }
}

/// A departure a return met (R-REBUY-1), with the return that met it (`PlayerState::returns_meeting`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetDeparture {
    pub by_return: u64,
    pub departure: Departure,
}

/// A seat the patron holds now, with its game (R-REBUY-1: one seat per game and limits).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldSeat {
    pub table_id: TableId,
    pub seat: Seat,
    pub game_key: String,
    /// The return (`PlayerState::returns_meeting`) that funded this seat's session and met
    /// departures from its game; 0: it met none. A correction of it binds those again
    /// (`rebuy::binding_since`).
    #[serde(default)]
    pub met_by_return: u64,
}

/// The seats a patron holds, oldest first, at most `MAX_SEATS_HELD` (R-REBUY-1): a list
/// that keeps the common single seat inline, so that a buy-in allocates nothing. Reads as a
/// slice; equality, `Debug` and serde (a JSON array, missing = empty) are the list's, the same
/// as the `Vec<HeldSeat>` it replaces.
#[derive(Clone, Default)]
pub struct HeldSeats(SeatsRepr);

#[derive(Clone, Default)]
enum SeatsRepr {
    #[default]
    None,
    One(HeldSeat),
    /// Two or more (may shrink to fewer by `retain`; still read as a slice).
    Many(Vec<HeldSeat>),
}

impl HeldSeats {
    pub fn new() -> HeldSeats {
        HeldSeats::default()
    }

    pub fn as_slice(&self) -> &[HeldSeat] {
        match &self.0 {
            SeatsRepr::None => &[],
            SeatsRepr::One(seat) => std::slice::from_ref(seat),
            SeatsRepr::Many(seats) => seats,
        }
    }

    /// Appended as the most recent.
    pub fn push(&mut self, seat: HeldSeat) {
        match std::mem::take(&mut self.0) {
            SeatsRepr::None => self.0 = SeatsRepr::One(seat),
            SeatsRepr::One(first) => self.0 = SeatsRepr::Many(vec![first, seat]),
            SeatsRepr::Many(mut seats) => {
                seats.push(seat);
                self.0 = SeatsRepr::Many(seats);
            }
        }
    }

    /// Keeps the seats for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&HeldSeat) -> bool) {
        match &mut self.0 {
            SeatsRepr::None => {}
            SeatsRepr::One(seat) => {
                if !keep(seat) {
                    self.0 = SeatsRepr::None;
                }
            }
            SeatsRepr::Many(seats) => seats.retain(|s| keep(s)),
        }
    }

    /// Removes and returns the seat at `index` (panics when out of range, like `Vec::remove`).
    pub fn remove(&mut self, index: usize) -> HeldSeat {
        match &mut self.0 {
            SeatsRepr::Many(seats) => seats.remove(index),
            _ => {
                assert!(index < self.len(), "removal index (is {index}) should be < len (is {})", self.len());
                match std::mem::take(&mut self.0) {
                    SeatsRepr::One(seat) => seat,
                    _ => unreachable!("checked above"),
                }
            }
        }
    }
}

impl std::ops::Deref for HeldSeats {
    type Target = [HeldSeat];
    fn deref(&self) -> &[HeldSeat] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a HeldSeats {
    type Item = &'a HeldSeat;
    type IntoIter = std::slice::Iter<'a, HeldSeat>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl From<Vec<HeldSeat>> for HeldSeats {
    fn from(mut seats: Vec<HeldSeat>) -> HeldSeats {
        HeldSeats(match seats.len() {
            0 => SeatsRepr::None,
            1 => SeatsRepr::One(seats.pop().expect("one seat")),
            _ => SeatsRepr::Many(seats),
        })
    }
}

impl PartialEq for HeldSeats {
    fn eq(&self, other: &HeldSeats) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for HeldSeats {}

impl std::fmt::Debug for HeldSeats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl Serialize for HeldSeats {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

impl<'de> Deserialize<'de> for HeldSeats {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<HeldSeats, D::Error> {
        Vec::<HeldSeat>::deserialize(d).map(HeldSeats::from)
    }
}

/// An outstanding casino marker (R-MARK-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    pub cage_id: CageId,
    pub marker_no: u64,
    pub amount_cents: Cents,
    pub outstanding_cents: Cents,
    pub issued_by: String,
    /// Who approved its issue (R-MARK-1; empty for a marker recorded before this was kept).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub approved_by: String,
}

/// Events of a player stream. Chip and cash postings of cross-stream commands are carried
/// by the table (or cage) event of the same command; player events carry amounts only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum PlayerEvent {
    CreditLineSet { line_cents: Cents, approved_by: String },
    /// Pocket chips brought to a table (buy-in or top-up).
    PocketChipsPlayed { table_id: TableId, seat: Seat, amount_cents: Cents },
    /// Chips taken from a table into the pocket on leaving.
    LeftTable {
        table_id: TableId,
        seat: Seat,
        game_key: String,
        amount_cents: Cents,
        at_unix_ms: i64,
        /// The wait of the table left (window ms, tolerance bps), see [`Departure::wait`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wait: Option<(i64, i64)>,
        /// R-STAKE-2 with R-REBUY-1: chips taken off within the session's refreshment allowance.
        /// The patron left the game with them too: the departure is `amount_cents` and these.
        #[serde(default, skip_serializing_if = "crate::money::is_zero")]
        taken_off_cents: Cents,
    },
    /// Seated at a table with the first chips of a session (buy-in, cash in play or a marker
    /// to the seat): the patron now holds that seat (R-REBUY-1).
    JoinedTable { table_id: TableId, seat: Seat, game_key: String, amount_cents: Cents },
    /// R-STAKE-6: moved by the house with the stack; the held seat follows (no departure).
    MovedTable {
        from_table_id: TableId,
        to_table_id: TableId,
        to_seat: Seat,
        game_key: String,
        /// R-REBUY-1: a move into another game with chips is a departure from the first game.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        left_game: Option<Departure>,
    },
    /// R-MARK-3: an open-stakes IOU paid back with pocket chips (the postings are on the table).
    IouPaidFromPocket { table_id: TableId, seat: Seat, amount_cents: Cents },
    /// R-STAKE-2 (seeds): chips taken off the table within its refreshment allowance.
    ChipsTakenOffTable { table_id: TableId, seat: Seat, amount_cents: Cents },
    /// Chips bought at the cage (to the pocket).
    ChipsBought { cage_id: CageId, amount_cents: Cents },
    /// Chips redeemed at the cage (from the pocket).
    ChipsRedeemed { cage_id: CageId, amount_cents: Cents },
    /// R-AUDIT-4: a cash transaction, aggregated per gaming day.
    CashTransaction {
        gaming_day: String,
        direction: CashDirection,
        amount_cents: Cents,
        /// Over the MTL threshold: entered in the multiple transaction log.
        mtl_entry: bool,
        /// This transaction first took the day's total in this direction over the CTR threshold.
        ctr_required: bool,
        day_total_cents: Cents,
    },
    MarkerIssued {
        cage_id: CageId,
        marker_no: u64,
        amount_cents: Cents,
        issued_by: String,
        to_pocket: bool,
        /// Who approved it (R-MARK-1: its write-off needs someone else).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        approved_by: String,
    },
    MarkerRedeemed { cage_id: CageId, marker_no: u64, amount_cents: Cents },
    MarkerWrittenOff { cage_id: CageId, marker_no: u64, amount_cents: Cents, approved_by: String },
    /// R-AUDIT-1: a record taken back (no chips move).
    Corrected { reverses_event_id: String, approved_by: String, reason: String, reversal: crate::corrections::PlayerReversal },
    /// R-AUDIT-1: the pocket side of a cage correction (the postings are on the cage event).
    PocketCorrected { reverses_event_id: String, amount_cents: Cents },
    /// R-REBUY-1: a way back into a game (a buy-in, cash or a marker put in play, a move) was
    /// corrected away: the departure it met binds the patron's returns again.
    ReturnCorrected { reverses_event_id: String, departure: Departure },
}

impl PlayerEvent {
    pub fn event_type(&self) -> &'static str {
        match self {
            PlayerEvent::CreditLineSet { .. } => "CreditLineSet",
            PlayerEvent::PocketChipsPlayed { .. } => "PocketChipsPlayed",
            PlayerEvent::LeftTable { .. } => "LeftTable",
            PlayerEvent::JoinedTable { .. } => "JoinedTable",
            PlayerEvent::MovedTable { .. } => "MovedTable",
            PlayerEvent::IouPaidFromPocket { .. } => "IouPaidFromPocket",
            PlayerEvent::ChipsTakenOffTable { .. } => "ChipsTakenOffTable",
            PlayerEvent::ChipsBought { .. } => "ChipsBought",
            PlayerEvent::ChipsRedeemed { .. } => "ChipsRedeemed",
            PlayerEvent::CashTransaction { .. } => "CashTransaction",
            PlayerEvent::MarkerIssued { .. } => "MarkerIssued",
            PlayerEvent::MarkerRedeemed { .. } => "MarkerRedeemed",
            PlayerEvent::MarkerWrittenOff { .. } => "MarkerWrittenOff",
            PlayerEvent::Corrected { .. } => "Corrected",
            PlayerEvent::PocketCorrected { .. } => "PocketCorrected",
            PlayerEvent::ReturnCorrected { .. } => "ReturnCorrected",
        }
    }
}

/// State of one patron.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerState {
    /// Chips held off the table (`player/P/pocket`).
    pub pocket_cents: Cents,
    pub credit_line_cents: Cents,
    /// R-MARK-1: markers written off since the credit line was last set. A write-off is a debt
    /// not collected, not credit given back: it stays in use until the line is approved again
    /// (the walk-around pass: after a $600 write-off a $1,000 line let $1,600 of markers out).
    #[serde(default)]
    pub written_off_since_line_cents: Cents,
    pub markers: Vec<Marker>,
    /// Departures, most recent last, at most `MAX_DEPARTURES` (the log the inline projection
    /// keeps too).
    pub departures: Vec<Departure>,
    /// Departures with chips not yet met by a return to their game: what the re-buy wait
    /// binds (R-REBUY-1, `rebuy.rs`), most recent last, at most `MAX_DEPARTURES`.
    #[serde(default)]
    pub unmet_departures: Vec<Departure>,
    /// Departures with chips a return met, each with the return that met it, kept like the
    /// unmet ones (expired first, then the smallest; at most `MAX_UNMET_DEPARTURES`): what a
    /// corrected return leaves the seat bound to again (`rebuy::binding_since`). The 32 last
    /// `departures` had been all it looked at, and 32 seats taken and left empty pushed the met
    /// one out (the stakes pass); and any of them bound, also one a return still standing had
    /// met (the fixes' pass: $200 asked where $40 was left with).
    #[serde(default)]
    pub met_departures: Vec<MetDeparture>,
    /// Returns to a game that met departures, counted: the tag of `met_departures`.
    #[serde(default)]
    pub returns_meeting: u64,
    pub cash_day: CashDay,
    pub version: u64,
    /// Seats held now, at most `MAX_SEATS_HELD` (R-REBUY-1).
    #[serde(default)]
    pub seats: HeldSeats,
    /// Events of this stream already reversed (R-AUDIT-1), at most `MAX_CORRECTED_EVENTS`.
    #[serde(default)]
    pub corrected_event_ids: Vec<String>,
}

impl PlayerState {
    pub fn new() -> PlayerState {
        PlayerState::default()
    }

    /// Credit in use: outstanding markers.
    pub fn markers_outstanding_cents(&self) -> Cents {
        self.markers.iter().map(|m| m.outstanding_cents).sum()
    }

    /// The line less the markers outstanding and those written off since it was set.
    pub fn available_credit_cents(&self) -> Cents {
        self.credit_line_cents - self.markers_outstanding_cents() - self.written_off_since_line_cents
    }

    /// The seats held in `game` other than at `table_id` (R-REBUY-1).
    pub fn other_seats_in_game<'a>(&'a self, game: &'a SameGame<'a>, table_id: &'a TableId) -> impl Iterator<Item = &'a HeldSeat> + 'a {
        self.seats.iter().filter(move |s| game.holds(&s.game_key) && &s.table_id != table_id)
    }

    /// `game_key` by reference (copied) or owned (moved in, see [`PlayerState::apply_taking`]).
    fn hold_seat(&mut self, table_id: &TableId, seat: Seat, game_key: impl Into<String>, met_by_return: u64) {
        self.seats.retain(|s| &s.table_id != table_id);
        if self.seats.len() >= MAX_SEATS_HELD {
            self.seats.remove(0);
        }
        self.seats.push(HeldSeat { table_id: table_id.clone(), seat, game_key: game_key.into(), met_by_return });
    }

    /// R-REBUY-1: a departure with chips binds the patron's return to its game until a return
    /// meets it. Departures without chips bind nothing and are not kept; an earlier departure
    /// from the game for no more than this one binds nothing this one does not (it ends first),
    /// so it goes. What the list keeps is what the re-buy wait needs: the largest amount of
    /// every departure still unmet.
    fn departed(&mut self, departure: Departure) {
        if departure.amount_cents <= 0 {
            return;
        }
        // An earlier departure from the game goes only when this one binds at least as much
        // for at least as long (a later one from a 30-minute table had erased one from a
        // 120-minute table: the stakes pass).
        self.unmet_departures.retain(|d| d.game_key != departure.game_key || !departure.covers(d));
        keep_within_bound(&mut self.unmet_departures, departure, MAX_UNMET_DEPARTURES);
    }

    /// R-REBUY-1: back in `game_key` with chips (a buy-in, or a house move from another game):
    /// that return was judged against every departure from the game still binding, so they
    /// are met and bind no more. Only such a return meets them: a seat taken and left without
    /// chips, or a departure from a seat funded before, leaves them binding.
    /// Answers the return's tag in `met_departures` (0: it met none).
    fn returned_to(&mut self, game_key: &str) -> u64 {
        if !self.unmet_departures.iter().any(|d| d.game_key == game_key) {
            return 0;
        }
        self.returns_meeting += 1;
        let by_return = self.returns_meeting;
        let mut i = 0;
        while i < self.unmet_departures.len() {
            if self.unmet_departures[i].game_key == game_key {
                let departure = self.unmet_departures.remove(i);
                keep_within_bound(&mut self.met_departures, MetDeparture { by_return, departure }, MAX_UNMET_DEPARTURES);
            } else {
                i += 1;
            }
        }
        by_return
    }

    /// Rebuild the state one event further, by value (see [`PlayerState::apply`]).
    pub fn evolve(mut self, event: &PlayerEvent) -> PlayerState {
        self.apply(event);
        self
    }

    /// [`PlayerState::apply`] for a caller that drops the event next: the texts the state
    /// keeps (the game key of a seat taken, the gaming day of a cash transaction) are moved out
    /// of the event instead of copied (the event is left with those texts empty). The
    /// resulting state is the same.
    pub fn apply_taking(&mut self, event: &mut PlayerEvent) {
        match event {
            PlayerEvent::JoinedTable { table_id, seat, game_key, .. } => {
                self.version += 1;
                let met_by_return = self.returned_to(game_key);
                self.hold_seat(table_id, *seat, std::mem::take(game_key), met_by_return);
            }
            PlayerEvent::CashTransaction { gaming_day, direction, amount_cents, ctr_required, .. } => {
                self.version += 1;
                self.cash_day.record(std::mem::take(gaming_day), *direction, *amount_cents, *ctr_required);
            }
            event => self.apply(event),
        }
    }

    /// Rebuild the state one event further in place: what `evolve` does, without moving
    /// the state in and out (the replay and store loops keep one state per stream).
    pub fn apply(&mut self, event: &PlayerEvent) {
        self.version += 1;
        match event {
            PlayerEvent::CreditLineSet { line_cents, .. } => {
                self.credit_line_cents = *line_cents;
                self.written_off_since_line_cents = 0;
            }
            PlayerEvent::PocketChipsPlayed { amount_cents, .. } => self.pocket_cents -= amount_cents,
            PlayerEvent::LeftTable { table_id, game_key, amount_cents, at_unix_ms, wait, taken_off_cents, .. } => {
                self.pocket_cents += amount_cents;
                self.seats.retain(|s| &s.table_id != table_id);
                let departure = Departure {
                    game_key: game_key.clone(),
                    table_id: table_id.clone(),
                    amount_cents: amount_cents + taken_off_cents,
                    at_unix_ms: *at_unix_ms,
                    wait: *wait,
                };
                // The record of the last departures, as the store's departure log keeps them.
                if self.departures.len() >= MAX_DEPARTURES {
                    self.departures.remove(0);
                }
                self.departures.push(departure.clone());
                self.departed(departure);
            }
            PlayerEvent::JoinedTable { table_id, seat, game_key, .. } => {
                let met_by_return = self.returned_to(game_key);
                self.hold_seat(table_id, *seat, game_key, met_by_return);
            }
            PlayerEvent::MovedTable { from_table_id, to_table_id, to_seat, game_key, left_game } => {
                if let Some(departure) = left_game {
                    self.departed(departure.clone());
                }
                // A house move of a session into another game was judged as a return to it
                // (R-REBUY-1); one within the game is no return, and neither is the move of a
                // seat taken without chips (no session: it meets no departure, whichever game it
                // was at; its first chips are a buy-in, judged as one).
                let from = self.seats.iter().find(|s| &s.table_id == from_table_id).map(|s| (s.game_key.clone(), s.met_by_return));
                // Within the game the session, and the return that funded it, move on.
                let met_by_return = match from {
                    Some((from_game, _)) if &from_game != game_key => self.returned_to(game_key),
                    Some((_, met_by_return)) => met_by_return,
                    None => 0,
                };
                self.seats.retain(|s| &s.table_id != from_table_id);
                self.hold_seat(to_table_id, *to_seat, game_key, met_by_return);
            }
            PlayerEvent::IouPaidFromPocket { amount_cents, .. } => self.pocket_cents -= amount_cents,
            PlayerEvent::ChipsTakenOffTable { amount_cents, .. } => self.pocket_cents += amount_cents,
            PlayerEvent::ChipsBought { amount_cents, .. } => self.pocket_cents += amount_cents,
            PlayerEvent::ChipsRedeemed { amount_cents, .. } => self.pocket_cents -= amount_cents,
            PlayerEvent::CashTransaction { gaming_day, direction, amount_cents, ctr_required, .. } => {
                self.cash_day.record(gaming_day.as_str(), *direction, *amount_cents, *ctr_required);
            }
            PlayerEvent::MarkerIssued { cage_id, marker_no, amount_cents, issued_by, to_pocket, approved_by } => {
                if *to_pocket {
                    self.pocket_cents += amount_cents;
                }
                self.markers.push(Marker {
                    cage_id: cage_id.clone(),
                    marker_no: *marker_no,
                    amount_cents: *amount_cents,
                    outstanding_cents: *amount_cents,
                    issued_by: issued_by.clone(),
                    approved_by: approved_by.clone(),
                });
            }
            PlayerEvent::MarkerRedeemed { cage_id, marker_no, amount_cents }
            | PlayerEvent::MarkerWrittenOff { cage_id, marker_no, amount_cents, .. } => {
                if matches!(event, PlayerEvent::MarkerWrittenOff { .. }) {
                    self.written_off_since_line_cents += amount_cents;
                }
                if let Some(m) = self.markers.iter_mut().find(|m| m.marker_no == *marker_no && &m.cage_id == cage_id) {
                    m.outstanding_cents -= amount_cents;
                }
                self.markers.retain(|m| m.outstanding_cents > 0);
            }
            PlayerEvent::PocketCorrected { amount_cents, .. } => self.pocket_cents += amount_cents,
            PlayerEvent::ReturnCorrected { departure, .. } => self.departed(departure.clone()),
            PlayerEvent::Corrected { reverses_event_id, reversal, .. } => {
                crate::corrections::remember_corrected(&mut self.corrected_event_ids, reverses_event_id);
                match reversal {
                crate::corrections::PlayerReversal::CashTransaction { gaming_day, direction, amount_cents, ctr_rearmed } => {
                    self.cash_day.take_back(gaming_day, *direction, *amount_cents, *ctr_rearmed);
                }
                crate::corrections::PlayerReversal::Departure { table_id, at_unix_ms } => {
                    let recorded_in_error = |d: &Departure| &d.table_id == table_id && d.at_unix_ms == *at_unix_ms;
                    self.departures.retain(|d| !recorded_in_error(d));
                    self.unmet_departures.retain(|d| !recorded_in_error(d));
                    self.met_departures.retain(|m| !recorded_in_error(&m.departure));
                }
                crate::corrections::PlayerReversal::Record { .. } => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod held_seats_tests {
    use super::*;

    fn held(table: &str, seat: Seat, game: &str) -> HeldSeat {
        HeldSeat { table_id: TableId::new(table).unwrap(), seat, game_key: game.into(), met_by_return: 0 }
    }

    /// The inline list behaves, compares and serializes as the `Vec<HeldSeat>` it replaced.
    #[test]
    fn held_seats_are_a_vec_to_every_reader() {
        let mut list = HeldSeats::new();
        let mut vec: Vec<HeldSeat> = Vec::new();
        let steps: [(&str, Seat); 7] = [("T1", 1), ("T2", 2), ("T1", 3), ("T3", 4), ("T2", 5), ("T4", 6), ("T4", 7)];
        for (i, (table, seat)) in steps.into_iter().enumerate() {
            let s = held(table, seat, "nlhe");
            list.retain(|h| h.table_id != s.table_id);
            vec.retain(|h| h.table_id != s.table_id);
            if i % 3 == 2 {
                list.retain(|_| false);
                vec.retain(|_| false);
            }
            list.push(s.clone());
            vec.push(s);
            if list.len() >= 3 {
                assert_eq!(list.remove(0), vec.remove(0));
            }
            assert_eq!(list.as_slice(), vec.as_slice());
            assert_eq!(list, HeldSeats::from(vec.clone()));
            assert_eq!(format!("{list:?}"), format!("{vec:?}"));
            let json = serde_json::to_string(&list).unwrap();
            assert_eq!(json, serde_json::to_string(&vec).unwrap());
            assert_eq!(serde_json::from_str::<HeldSeats>(&json).unwrap(), list);
        }
        let mut one = HeldSeats::from(vec![held("T1", 1, "nlhe")]);
        assert_eq!(one.remove(0), held("T1", 1, "nlhe"));
        assert!(one.is_empty());
        // Old states without the field still read (empty), and an empty list writes `[]`.
        let state: PlayerState = serde_json::from_value(serde_json::json!({
            "pocket_cents": 0, "credit_line_cents": 0, "markers": [], "departures": [],
            "cash_day": serde_json::to_value(CashDay::default()).unwrap(), "version": 0
        }))
        .unwrap();
        assert!(state.seats.is_empty());
        assert_eq!(serde_json::to_value(&state).unwrap()["seats"], serde_json::json!([]));
    }
}
