//! The cage stream `cage-{id}`: chip and cash inventory, chip issue and redemption, fills and
//! credits (R-CHIP-3, R-CHIP-5), markers (R-MARK-1).

use serde::{Deserialize, Serialize};

use crate::money::{Cents, ChipCount};
use crate::streams::{CageId, PlayerId, TableId};
use crate::table::Signers;

/// How a marker's chips are delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum MarkerDelivery {
    /// To the patron's pocket.
    Pocket,
    /// To the stack at a seat, between hands (touches the table stream).
    Seat { table_id: TableId, seat: crate::streams::Seat },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CageCommand {
    pub cage_id: CageId,
    pub op: CageOp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op")]
pub enum CageOp {
    /// Open the cage with its chip stock (by denomination) and cash float.
    OpenCage { denominations_cents: Vec<Cents>, chips: Vec<ChipCount>, cash_cents: Cents },
    /// R-CHIP-2: cash for chips, chips to the patron's pocket. Touches the player stream. A sale
    /// that takes the patron's cash in for the gaming day to the large buy-in threshold names a
    /// supervisor (`sale_supervisor`).
    SellChips {
        player_id: PlayerId,
        chips: Vec<ChipCount>,
        #[serde(default)]
        supervisor_id: Option<String>,
    },
    /// R-CHIP-5: chips for cash. Touches the player stream.
    RedeemChips { player_id: PlayerId, chips: Vec<ChipCount> },
    /// R-MARK-1: a marker against the credit line. Touches the player stream (and the table).
    IssueMarker { player_id: PlayerId, marker_no: u64, chips: Vec<ChipCount>, approved_by: String, delivery: MarkerDelivery },
    /// R-MARK-1: redeem a marker in whole or part with cash. Touches the player stream.
    RedeemMarker { player_id: PlayerId, marker_no: u64, amount_cents: Cents },
    /// R-MARK-1: write off with an independent approver. Touches the player stream.
    WriteOffMarker { player_id: PlayerId, marker_no: u64, approved_by: String },
    /// R-CHIP-5: close the gaming day, recording chip liability per denomination.
    CloseGamingDay,
    /// R-CHIP-1: color up/down at the cage: the patron gives pocket chips `give` and receives
    /// `receive` of equal value (the pocket's value is unchanged). Touches the player stream.
    ColorChange { player_id: PlayerId, give: Vec<ChipCount>, receive: Vec<ChipCount> },
    /// R-CHIP-4: the cage's shift count, counted chips by denomination and cash, signed by two
    /// distinct people. A count that differs from the book is recorded as a variance
    /// (`CountVarianceRecorded`), never refused.
    CountShift { counted_chips: Vec<ChipCount>, counted_cash_cents: Cents, signers: Signers },
    /// R-AUDIT-1: reverse an earlier cage event (postings supplied by the caller from the
    /// store). Touches the streams of the patrons whose pockets the postings name.
    Correct {
        reverses_event_id: String,
        /// The reversed event's version on this cage's stream, and its type (from the store).
        #[serde(default)]
        reverses_stream_version: u64,
        #[serde(default)]
        reverses_event_types: Vec<String>,
        /// The gaming day the reversed event was recorded on (R-AUDIT-4, as on a table).
        #[serde(default)]
        reverses_gaming_day: String,
        original_postings: Vec<crate::accounts::Posting>,
        approved_by: String,
        reason: String,
    },
}

/// Fill or credit (R-CHIP-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SlipKind {
    Fill,
    Credit,
}

/// A fill or credit slip the cage remembers for voids (R-CHIP-3), most recent last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlipRecord {
    pub kind: SlipKind,
    pub slip_no: u64,
    pub table_id: TableId,
    pub chips: Vec<ChipCount>,
    pub voided: bool,
    /// Counted by a cage shift count since it was issued (R-CHIP-4: no longer voided).
    #[serde(default)]
    pub counted: bool,
}

/// Slips kept for voids; older ones can no longer be voided here (bound).
pub const MAX_SLIPS_KEPT: usize = 256;

/// Events of a cage stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CageEvent {
    CageOpened { cage_id: CageId, denominations_cents: Vec<Cents>, chips: Vec<ChipCount>, cash_cents: Cents, postings: Vec<crate::accounts::Posting> },
    ChipsSold {
        player_id: PlayerId,
        chips: Vec<ChipCount>,
        amount_cents: Cents,
        /// The supervisor of a large sale (R-CHIP-2); absent below the threshold.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        supervisor_id: Option<String>,
        postings: Vec<crate::accounts::Posting>,
    },
    ChipsRedeemed { player_id: PlayerId, chips: Vec<ChipCount>, amount_cents: Cents, postings: Vec<crate::accounts::Posting> },
    /// Chips out to a table tray; postings are on the table's `FillReceived`.
    FillIssued { table_id: TableId, slip_no: u64, chips: Vec<ChipCount>, signers: Signers },
    /// Chips back from a table tray; postings are on the table's `CreditSent`.
    CreditReceived { table_id: TableId, slip_no: u64, chips: Vec<ChipCount>, signers: Signers },
    /// Postings here when delivered to the pocket; on the table event when delivered to a seat.
    MarkerIssued { player_id: PlayerId, marker_no: u64, chips: Vec<ChipCount>, amount_cents: Cents, issued_by: String, approved_by: String, postings: Vec<crate::accounts::Posting> },
    MarkerRedeemed { player_id: PlayerId, marker_no: u64, amount_cents: Cents, postings: Vec<crate::accounts::Posting> },
    MarkerWrittenOff { player_id: PlayerId, marker_no: u64, amount_cents: Cents, approved_by: String, postings: Vec<crate::accounts::Posting> },
    /// R-CHIP-5: chips outstanding (outside the cage: trays and patrons) per denomination =
    /// issued - returned, cumulative.
    GamingDayClosed { gaming_day: String, issued: Vec<ChipCount>, returned: Vec<ChipCount>, liability: Vec<ChipCount> },
    /// R-CHIP-3: a fill or credit voided; the reversing postings are on the table's `SlipVoided`.
    SlipVoided { table_id: TableId, kind: SlipKind, slip_no: u64, chips: Vec<ChipCount>, reason: String, signers: Signers },
    /// R-CHIP-1: the patron's pocket chips exchanged at the cage, equal value.
    ChipsColorChanged { player_id: PlayerId, give: Vec<ChipCount>, receive: Vec<ChipCount>, postings: Vec<crate::accounts::Posting> },
    /// R-CHIP-4: the cage count (after any variance, the book equals what was counted).
    ShiftCounted {
        gaming_day: String,
        chips: Vec<ChipCount>,
        cash_cents: Cents,
        #[serde(default)]
        signers: Option<Signers>,
    },
    /// R-CHIP-4: the cage count differed from the book: per denomination counted minus ledger
    /// (signed counts), and the cash difference; the postings bring the cage to what was
    /// counted against `house/count-variance`. Overage positive.
    CountVarianceRecorded {
        gaming_day: String,
        chips_variance: Vec<ChipCount>,
        cash_variance_cents: Cents,
        variance_cents: Cents,
        signers: Signers,
        postings: Vec<crate::accounts::Posting>,
    },
    /// R-AUDIT-1: an earlier cage event's postings reversed.
    Corrected { reverses_event_id: String, approved_by: String, reason: String, postings: Vec<crate::accounts::Posting> },
}

impl CageEvent {
    pub fn event_type(&self) -> &'static str {
        match self {
            CageEvent::CageOpened { .. } => "CageOpened",
            CageEvent::ChipsSold { .. } => "ChipsSold",
            CageEvent::ChipsRedeemed { .. } => "ChipsRedeemed",
            CageEvent::FillIssued { .. } => "FillIssued",
            CageEvent::CreditReceived { .. } => "CreditReceived",
            CageEvent::MarkerIssued { .. } => "MarkerIssued",
            CageEvent::MarkerRedeemed { .. } => "MarkerRedeemed",
            CageEvent::MarkerWrittenOff { .. } => "MarkerWrittenOff",
            CageEvent::GamingDayClosed { .. } => "GamingDayClosed",
            CageEvent::SlipVoided { .. } => "SlipVoided",
            CageEvent::ChipsColorChanged { .. } => "ChipsColorChanged",
            CageEvent::ShiftCounted { .. } => "ShiftCounted",
            CageEvent::CountVarianceRecorded { .. } => "CountVarianceRecorded",
            CageEvent::Corrected { .. } => "Corrected",
        }
    }

    pub fn postings(&self) -> &[crate::accounts::Posting] {
        match self {
            CageEvent::CageOpened { postings, .. }
            | CageEvent::ChipsSold { postings, .. }
            | CageEvent::ChipsRedeemed { postings, .. }
            | CageEvent::MarkerIssued { postings, .. }
            | CageEvent::MarkerRedeemed { postings, .. }
            | CageEvent::MarkerWrittenOff { postings, .. }
            | CageEvent::ChipsColorChanged { postings, .. }
            | CageEvent::CountVarianceRecorded { postings, .. }
            | CageEvent::Corrected { postings, .. } => postings,
            CageEvent::FillIssued { .. }
            | CageEvent::CreditReceived { .. }
            | CageEvent::GamingDayClosed { .. }
            | CageEvent::SlipVoided { .. }
            | CageEvent::ShiftCounted { .. } => &[],
        }
    }
}

/// State of one cage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CageState {
    pub cage_id: Option<CageId>,
    pub denominations_cents: Vec<Cents>,
    /// Chips in the cage by denomination (`cage/C/chips/D`).
    pub chips: Vec<ChipCount>,
    pub cash_cents: Cents,
    pub markers_receivable_cents: Cents,
    pub last_fill_slip_no: u64,
    pub last_credit_slip_no: u64,
    pub last_marker_no: u64,
    /// Chips issued out of the cage (to patrons, tables, markers) and returned, cumulative:
    /// chips outstanding per denomination = issued - returned (R-CHIP-5).
    pub issued: Vec<ChipCount>,
    pub returned: Vec<ChipCount>,
    pub version: u64,
    /// Recent fill and credit slips, at most `MAX_SLIPS_KEPT` (R-CHIP-3 voids).
    #[serde(default)]
    pub slips: Vec<SlipRecord>,
    /// Events of this cage already reversed (R-AUDIT-1), at most `player::MAX_CORRECTED_EVENTS`.
    #[serde(default)]
    pub corrected_event_ids: Vec<String>,
    /// The last gaming day this cage closed (R-CHIP-5), "YYYY-MM-DD".
    #[serde(default)]
    pub last_closed_gaming_day: Option<String>,
    /// The stream version of the cage's last shift count (0: none): no correction reaches
    /// behind it (R-CHIP-4).
    #[serde(default)]
    pub counted_through_version: u64,
}

fn add_chips(list: &mut Vec<ChipCount>, chips: &[ChipCount], sign: i64) {
    for c in chips {
        match list.iter_mut().find(|x| x.denomination_cents == c.denomination_cents) {
            Some(x) => x.count += sign * c.count,
            None => {
                list.push(ChipCount { denomination_cents: c.denomination_cents, count: sign * c.count });
                list.sort_by_key(|x| x.denomination_cents);
            }
        }
    }
}

impl CageState {
    pub fn new() -> CageState {
        CageState::default()
    }

    pub fn chip_count(&self, denomination_cents: Cents) -> i64 {
        self.chips.iter().find(|c| c.denomination_cents == denomination_cents).map_or(0, |c| c.count)
    }

    pub fn slip(&self, kind: SlipKind, slip_no: u64) -> Option<&SlipRecord> {
        self.slips.iter().find(|s| s.kind == kind && s.slip_no == slip_no)
    }

    fn remember_slip(&mut self, kind: SlipKind, slip_no: u64, table_id: &TableId, chips: &[ChipCount]) {
        if self.slips.len() >= MAX_SLIPS_KEPT {
            self.slips.remove(0);
        }
        self.slips.push(SlipRecord { kind, slip_no, table_id: table_id.clone(), chips: chips.to_vec(), voided: false, counted: false });
    }

    /// Apply postings on this cage's accounts (chips by denomination, cash, markers).
    fn apply_postings(&mut self, postings: &[crate::accounts::Posting]) {
        for p in postings {
            match &p.account {
                Account::CageChips { cage_id, denomination_cents } if self.cage_id.as_ref() == Some(cage_id) => {
                    let d = *denomination_cents;
                    add_chips(&mut self.chips, &[ChipCount { denomination_cents: d, count: p.amount_cents / d }], 1);
                }
                Account::CageCash { cage_id } if self.cage_id.as_ref() == Some(cage_id) => self.cash_cents += p.amount_cents,
                Account::CageMarkers { cage_id } if self.cage_id.as_ref() == Some(cage_id) => self.markers_receivable_cents += p.amount_cents,
                _ => {}
            }
        }
    }

    /// Rebuild the state one event further, by value (see [`CageState::apply`]).
    pub fn evolve(mut self, event: &CageEvent) -> CageState {
        self.apply(event);
        self
    }

    /// Rebuild the state one event further in place: what `evolve` does, without moving
    /// the state in and out (the replay and store loops keep one state per stream).
    pub fn apply(&mut self, event: &CageEvent) {
        self.version += 1;
        match event {
            CageEvent::CageOpened { cage_id, denominations_cents, chips, cash_cents, .. } => {
                self.cage_id = Some(cage_id.clone());
                self.denominations_cents = denominations_cents.clone();
                add_chips(&mut self.chips, chips, 1);
                self.cash_cents += cash_cents;
            }
            CageEvent::ChipsSold { chips, amount_cents, .. } => {
                add_chips(&mut self.chips, chips, -1);
                add_chips(&mut self.issued, chips, 1);
                self.cash_cents += amount_cents;
            }
            CageEvent::ChipsRedeemed { chips, amount_cents, .. } => {
                add_chips(&mut self.chips, chips, 1);
                add_chips(&mut self.returned, chips, 1);
                self.cash_cents -= amount_cents;
            }
            CageEvent::FillIssued { table_id, slip_no, chips, .. } => {
                add_chips(&mut self.chips, chips, -1);
                add_chips(&mut self.issued, chips, 1);
                self.last_fill_slip_no = *slip_no;
                self.remember_slip(SlipKind::Fill, *slip_no, table_id, chips);
            }
            CageEvent::CreditReceived { table_id, slip_no, chips, .. } => {
                add_chips(&mut self.chips, chips, 1);
                add_chips(&mut self.returned, chips, 1);
                self.last_credit_slip_no = *slip_no;
                self.remember_slip(SlipKind::Credit, *slip_no, table_id, chips);
            }
            // The slip number stays used: the sequence is not rewound.
            CageEvent::SlipVoided { kind, slip_no, chips, .. } => {
                match kind {
                    SlipKind::Fill => {
                        add_chips(&mut self.chips, chips, 1);
                        add_chips(&mut self.issued, chips, -1);
                    }
                    SlipKind::Credit => {
                        add_chips(&mut self.chips, chips, -1);
                        add_chips(&mut self.returned, chips, -1);
                    }
                }
                if let Some(s) = self.slips.iter_mut().find(|s| s.kind == *kind && s.slip_no == *slip_no) {
                    s.voided = true;
                }
            }
            CageEvent::ChipsColorChanged { give, receive, .. } => {
                add_chips(&mut self.chips, give, 1);
                add_chips(&mut self.returned, give, 1);
                add_chips(&mut self.chips, receive, -1);
                add_chips(&mut self.issued, receive, 1);
            }
            CageEvent::ShiftCounted { .. } => {
                self.counted_through_version = self.version;
                // R-CHIP-4: as at a table's close, what was counted is corrected no more, and
                // the slips it counted are voided no more.
                self.corrected_event_ids.clear();
                for slip in &mut self.slips {
                    slip.counted = true;
                }
            }
            CageEvent::CountVarianceRecorded { postings, .. } => self.apply_postings(postings),
            CageEvent::Corrected { reverses_event_id, postings, .. } => {
                crate::corrections::remember_corrected(&mut self.corrected_event_ids, reverses_event_id);
                self.apply_postings(postings);
                // R-CHIP-5: chips back into the cage were never issued (a sale, the chips a color
                // change gave); chips out of it were never returned (a redemption, the chips a
                // color change took in). A corrected redemption had been counted as chips issued
                // (the cage pass: issued and returned both grew; the liability was right).
                // Chips between the cage and the chip stock (an opening's) are neither.
                let stock = postings.iter().any(|p| p.account == Account::House(crate::accounts::HouseAccount::ChipStock));
                for p in postings.iter().filter(|_| !stock) {
                    if let Account::CageChips { denomination_cents, .. } = &p.account {
                        let count = p.amount_cents / denomination_cents;
                        if count > 0 {
                            add_chips(&mut self.issued, &[ChipCount { denomination_cents: *denomination_cents, count }], -1);
                        } else {
                            add_chips(&mut self.returned, &[ChipCount { denomination_cents: *denomination_cents, count: -count }], -1);
                        }
                    }
                }
            }
            CageEvent::MarkerIssued { marker_no, chips, amount_cents, .. } => {
                add_chips(&mut self.chips, chips, -1);
                add_chips(&mut self.issued, chips, 1);
                self.markers_receivable_cents += amount_cents;
                self.last_marker_no = *marker_no;
            }
            CageEvent::MarkerRedeemed { amount_cents, .. } => {
                self.markers_receivable_cents -= amount_cents;
                self.cash_cents += amount_cents;
            }
            CageEvent::MarkerWrittenOff { amount_cents, .. } => self.markers_receivable_cents -= amount_cents,
            CageEvent::GamingDayClosed { gaming_day, .. } => self.last_closed_gaming_day = Some(gaming_day.clone()),
        }
    }
}



use crate::accounts::{Account, HouseAccount, Posting};
use crate::aml::CashDirection;
use crate::player::{PlayerEvent, PlayerState};
use crate::rejection::{Reason, Rejection};
use crate::streams::StreamId;
use crate::{CommandContext, Event, Snapshot};

pub const CAGE_NOT_OPEN: Reason = Reason::new("CAGE_NOT_OPEN", "R-CHIP-5");
pub const CAGE_ALREADY_OPEN: Reason = Reason::new("CAGE_ALREADY_OPEN", "R-CHIP-5");
pub const CAGE_CHIPS_SHORT: Reason = Reason::new("CAGE_CHIPS_SHORT", "R-CHIP-5");
pub const CAGE_CASH_SHORT: Reason = Reason::new("CAGE_CASH_SHORT", "R-CHIP-5");


/// R-CHIP-5: a cage closes each gaming day once, in order: the close is the day's chip
/// liability, and a second one would count the day twice. Once it is closed, the cage moves no
/// more chips or cash dated that day (the close's figures stay the day's).
pub const DAY_ALREADY_CLOSED: Reason = Reason::new("DAY_ALREADY_CLOSED", "R-CHIP-5");

/// R-CHIP-5: refuse a movement of this cage's chips, cash or markers dated a gaming day it has
/// closed (sales, redemptions, markers, fills, credits, voids, corrections): the close's
/// liability is the day's. Its own count may still be taken. Resumes with the next gaming day.
pub fn check_day_open(cage: &CageState, ctx: &CommandContext) -> Result<(), Rejection> {
    // "YYYY-MM-DD" orders as the days do.
    match cage.last_closed_gaming_day.as_deref() {
        Some(closed) if closed >= ctx.gaming_day.as_str() => Err(Rejection::new(
            DAY_ALREADY_CLOSED,
            format!("this cage closed gaming day {closed}: it moves nothing more dated {} until the next gaming day", ctx.gaming_day),
        )),
        _ => Ok(()),
    }
}
pub const REASONS: &[Reason] = &[CAGE_NOT_OPEN, CAGE_ALREADY_OPEN, CAGE_CHIPS_SHORT, CAGE_CASH_SHORT, DAY_ALREADY_CLOSED];

/// The cage holds these chips.
pub fn cage_has(cage: &CageState, chips: &[ChipCount]) -> Result<(), Rejection> {
    crate::money::check_holds(chips, |d| cage.chip_count(d), CAGE_CHIPS_SHORT, "cage_count")
}

/// Chips valid for this cage: known denominations, positive counts. Returns the total.
pub fn check_cage_chips(cage: &CageState, chips: &[ChipCount]) -> Result<Cents, Rejection> {
    let set = crate::money::ChipSet {
        denominations_cents: cage.denominations_cents.clone(),
        min_playable_chip_cents: cage.denominations_cents.first().copied().unwrap_or(1),
    };
    crate::money::check_chips(&set, chips)
}

fn chip_postings(cage_id: &CageId, chips: &[ChipCount], sign: i64, postings: &mut Vec<Posting>) {
    for c in chips {
        postings.push(Posting::new(
            Account::CageChips { cage_id: cage_id.clone(), denomination_cents: c.denomination_cents },
            sign * c.value_cents(),
        ));
    }
}

fn loaded_player<'a>(snapshot: &Snapshot<'a>, id: &PlayerId) -> Result<&'a PlayerState, Rejection> {
    snapshot
        .player(id)
        .ok_or_else(|| Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream player-{id} was not loaded")))
}

/// Decide a cage command (R-CHIP-2, R-CHIP-5, R-MARK-1, R-AUDIT-4).
pub fn decide_cage(snapshot: &Snapshot, ctx: &CommandContext, c: &CageCommand) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let cage = snapshot
        .cage(&c.cage_id)
        .ok_or_else(|| Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream cage-{} was not loaded", c.cage_id)))?;
    let csid = StreamId::Cage(c.cage_id.clone());
    let cage_id = &c.cage_id;
    if !matches!(c.op, CageOp::OpenCage { .. } | CageOp::CloseGamingDay | CageOp::CountShift { .. }) {
        check_day_open(cage, ctx)?;
    }
    if let CageOp::OpenCage { denominations_cents, chips, cash_cents } = &c.op {
        if cage.cage_id.is_some() {
            return Err(Rejection::new(CAGE_ALREADY_OPEN, "the cage is already open"));
        }
        let set = crate::money::ChipSet {
            denominations_cents: denominations_cents.clone(),
            min_playable_chip_cents: denominations_cents.first().copied().unwrap_or(0),
        };
        set.validate()?;
        let total = crate::money::check_chips(&set, chips)?;
        crate::money::check_non_negative("cash_cents", *cash_cents)?;
        let mut postings = Vec::with_capacity(chips.len() + 3);
        chip_postings(cage_id, chips, 1, &mut postings);
        postings.push(Posting::new(Account::House(HouseAccount::ChipStock), -total));
        crate::accounts::transfer(&mut postings, Account::House(HouseAccount::Bank), Account::CageCash { cage_id: cage_id.clone() }, *cash_cents);
        let e = CageEvent::CageOpened {
            cage_id: cage_id.clone(),
            denominations_cents: denominations_cents.clone(),
            chips: chips.clone(),
            cash_cents: *cash_cents,
            postings,
        };
        return Ok(vec![(csid, Event::Cage(e))]);
    }
    if cage.cage_id.is_none() {
        return Err(Rejection::new(CAGE_NOT_OPEN, "the cage is not open"));
    }
    match &c.op {
        CageOp::OpenCage { .. } => unreachable_open(),
        CageOp::SellChips { player_id, chips, supervisor_id } => {
            let player = loaded_player(snapshot, player_id)?;
            let amount = check_cage_chips(cage, chips)?;
            cage_has(cage, chips)?;
            // R-CHIP-2: chips bought at the cage are a buy-in; a large one, with the patron's
            // cash in for the day, needs a supervisor (the rule's $10,000, the bound of a table's
            // own threshold). A cashier had sold $50,000 of chips with no second person.
            let threshold = crate::config::MAX_SUPERVISOR_THRESHOLD_CENTS;
            crate::table_stakes::cash_supervisor(ctx, player, threshold, amount, supervisor_id.as_ref())?;
            let mut postings = Vec::with_capacity(chips.len() + 3);
            crate::accounts::transfer(&mut postings, Account::House(HouseAccount::Patrons), Account::CageCash { cage_id: cage_id.clone() }, amount);
            chip_postings(cage_id, chips, -1, &mut postings);
            postings.push(Posting::new(Account::Pocket { player_id: player_id.clone() }, amount));
            let psid = StreamId::Player(player_id.clone());
            Ok(vec![
                (csid, Event::Cage(CageEvent::ChipsSold {
                    player_id: player_id.clone(),
                    chips: chips.clone(),
                    amount_cents: amount,
                    supervisor_id: supervisor_id.clone(),
                    postings,
                })),
                (psid.clone(), Event::Player(PlayerEvent::ChipsBought { cage_id: cage_id.clone(), amount_cents: amount })),
                (psid, Event::Player(crate::aml::cash_event(player, &ctx.gaming_day, CashDirection::In, amount, &snapshot.aml)?)),
            ])
        }
        CageOp::RedeemChips { player_id, chips } => {
            let player = loaded_player(snapshot, player_id)?;
            let amount = check_cage_chips(cage, chips)?;
            if player.pocket_cents < amount {
                return Err(Rejection::new(crate::table_stakes::POCKET_INSUFFICIENT, "the patron's pocket does not hold that much")
                    .with("amount_cents", amount)
                    .with("pocket_cents", player.pocket_cents));
            }
            if cage.cash_cents < amount {
                return Err(Rejection::new(CAGE_CASH_SHORT, "not enough cash in the cage")
                    .with("amount_cents", amount)
                    .with("cage_cash_cents", cage.cash_cents));
            }
            let mut postings = Vec::with_capacity(chips.len() + 3);
            postings.push(Posting::new(Account::Pocket { player_id: player_id.clone() }, -amount));
            chip_postings(cage_id, chips, 1, &mut postings);
            crate::accounts::transfer(&mut postings, Account::CageCash { cage_id: cage_id.clone() }, Account::House(HouseAccount::Patrons), amount);
            let psid = StreamId::Player(player_id.clone());
            Ok(vec![
                (csid, Event::Cage(CageEvent::ChipsRedeemed { player_id: player_id.clone(), chips: chips.clone(), amount_cents: amount, postings })),
                (psid.clone(), Event::Player(PlayerEvent::ChipsRedeemed { cage_id: cage_id.clone(), amount_cents: amount })),
                (psid, Event::Player(crate::aml::cash_event(player, &ctx.gaming_day, CashDirection::Out, amount, &snapshot.aml)?)),
            ])
        }
        CageOp::IssueMarker { player_id, marker_no, chips, approved_by, delivery } => {
            let player = loaded_player(snapshot, player_id)?;
            crate::markers::decide_issue(snapshot, ctx, cage, player, player_id, *marker_no, chips, approved_by, delivery)
        }
        CageOp::RedeemMarker { player_id, marker_no, amount_cents } => {
            let player = loaded_player(snapshot, player_id)?;
            crate::markers::decide_redeem(snapshot, ctx, cage_id, player, player_id, *marker_no, *amount_cents)
        }
        CageOp::WriteOffMarker { player_id, marker_no, approved_by } => {
            let player = loaded_player(snapshot, player_id)?;
            crate::markers::decide_write_off(ctx, cage_id, player, player_id, *marker_no, approved_by)
        }
        CageOp::ColorChange { player_id, give, receive } => {
            let player = loaded_player(snapshot, player_id)?;
            let give_cents = check_cage_chips(cage, give)?;
            let receive_cents = check_cage_chips(cage, receive)?;
            crate::inventory::check_exchange(give, give_cents, receive, receive_cents)?;
            if player.pocket_cents < give_cents {
                return Err(Rejection::new(crate::table_stakes::POCKET_INSUFFICIENT, "the patron's pocket does not hold that much")
                    .with("give_cents", give_cents)
                    .with("pocket_cents", player.pocket_cents));
            }
            let incoming = |d: Cents| give.iter().filter(|g| g.denomination_cents == d).map(|g| g.count).sum::<i64>();
            crate::money::check_holds(receive, |d| cage.chip_count(d) + incoming(d), CAGE_CHIPS_SHORT, "cage_count")?;
            let mut postings = Vec::with_capacity(give.len() + receive.len());
            chip_postings(cage_id, give, 1, &mut postings);
            chip_postings(cage_id, receive, -1, &mut postings);
            let e = CageEvent::ChipsColorChanged { player_id: player_id.clone(), give: give.clone(), receive: receive.clone(), postings };
            Ok(vec![(csid, Event::Cage(e))])
        }
        CageOp::CountShift { counted_chips, counted_cash_cents, signers } => {
            crate::inventory::check_count_signers(signers)?;
            let counted = crate::inventory::check_count(&cage.denominations_cents, counted_chips, |d| cage.chip_count(d))?;
            crate::money::check_non_negative("counted_cash_cents", *counted_cash_cents)?;
            let mut chips_variance = Vec::new();
            let mut postings = Vec::new();
            for (d, counted) in cage.denominations_cents.iter().zip(&counted) {
                let over = counted - cage.chip_count(*d);
                if over != 0 {
                    chips_variance.push(ChipCount { denomination_cents: *d, count: over });
                    postings.push(Posting::new(Account::CageChips { cage_id: cage_id.clone(), denomination_cents: *d }, over * d));
                }
            }
            let cash_variance_cents = counted_cash_cents - cage.cash_cents;
            if cash_variance_cents != 0 {
                postings.push(Posting::new(Account::CageCash { cage_id: cage_id.clone() }, cash_variance_cents));
            }
            let mut out = Vec::with_capacity(2);
            let variance_cents: Cents = postings.iter().map(|p| p.amount_cents).sum();
            if !postings.is_empty() {
                postings.push(Posting::new(Account::House(HouseAccount::CountVariance), -variance_cents));
                out.push((
                    csid.clone(),
                    Event::Cage(CageEvent::CountVarianceRecorded {
                        gaming_day: ctx.gaming_day.clone(),
                        chips_variance,
                        cash_variance_cents,
                        variance_cents,
                        signers: signers.clone(),
                        postings,
                    }),
                ));
            }
            let chips: Vec<ChipCount> = cage
                .denominations_cents
                .iter()
                .zip(&counted)
                .map(|(d, count)| ChipCount { denomination_cents: *d, count: *count })
                .collect();
            let e = CageEvent::ShiftCounted { gaming_day: ctx.gaming_day.clone(), chips, cash_cents: *counted_cash_cents, signers: Some(signers.clone()) };
            out.push((csid, Event::Cage(e)));
            Ok(out)
        }
        CageOp::Correct {
            reverses_event_id,
            reverses_stream_version,
            reverses_event_types,
            reverses_gaming_day,
            original_postings,
            approved_by,
            reason,
        } => {
            let reversed = crate::corrections::Reversed {
                event_id: reverses_event_id,
                stream_version: *reverses_stream_version,
                event_types: reverses_event_types,
                gaming_day: reverses_gaming_day,
                postings: original_postings,
            };
            crate::corrections::decide_cage_correction(snapshot, ctx, cage, cage_id, &reversed, approved_by, reason)
        }
        CageOp::CloseGamingDay => {
            check_day_open(cage, ctx)?;
            let mut liability = cage.issued.clone();
            add_chips(&mut liability, &cage.returned, -1);
            let e = CageEvent::GamingDayClosed {
                gaming_day: ctx.gaming_day.clone(),
                issued: cage.issued.clone(),
                returned: cage.returned.clone(),
                liability,
            };
            Ok(vec![(csid, Event::Cage(e))])
        }
    }
}

fn unreachable_open() -> Result<Vec<(StreamId, Event)>, Rejection> {
    Err(Rejection::new(CAGE_ALREADY_OPEN, "the cage is already open"))
}
