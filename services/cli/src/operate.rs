//! Operator commands: one subcommand per movement the API offers (`chipledger table buy-in`,
//! `chipledger cage fill`, ...). Each only builds its wire message; sending, the header and
//! printing the reply or refusal are the one shared path in [`crate::send`].
//! Amounts are money or cents in the one syntax of [`crate::amount`] (`--amount 200.50`,
//! `--amount 20050c`, or the older `--amount-cents 20050`); chip lists are
//! `DENOMINATIONxCOUNT,...` with the denomination in cents, e.g. `500x20,2500x4`.

use anyhow::{Context, bail};
use chipledger_proto::v1 as pb;
use clap::{Subcommand, ValueEnum};
use pb::command::Command as Wire;

use crate::amount::amount_flags;

amount_flags!(AmountFlags, "amount", "amount-cents", required = true, "The amount");
amount_flags!(SmallFlags, "small", "small-cents", required = true, "Small blind (small bet for limit games)");
amount_flags!(BigFlags, "big", "big-cents", required = true, "Big blind (big bet for limit games)");
amount_flags!(AnteFlags, "ante", "ante-cents", required = false, "Stud games: the ante (default 0)");
amount_flags!(BringInFlags, "bring-in", "bring-in-cents", required = false, "Stud games: the bring-in (default 0)");
amount_flags!(CountedDropFlags, "counted-drop", "counted-drop-cents", required = true, "The counted drop");
amount_flags!(ToFlags, "to", "to-cents", required = false, "A bet's or raise's \"raise to\" total (R-BET-5)");
amount_flags!(RakeFlags, "rake", "rake-cents", required = false, "The rake the room took, where the dealer reports it (R-RAKE-1)");
amount_flags!(LineFlags, "line", "line-cents", required = true, "The approved credit line");
amount_flags!(CashFlags, "cash", "cash-cents", required = false, "The cash float (default 0)");
amount_flags!(CountedCashFlags, "counted-cash", "counted-cash-cents", required = true, "The counted cash");

/// Most entries in a chip list (the rules' bound on denominations).
const MAX_CHIP_ENTRIES: usize = 16;

/// `500x20,2500x4` -> chip counts.
pub fn parse_chips(text: &str) -> anyhow::Result<Vec<pb::ChipCount>> {
    let mut chips = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
        let (denomination, count) = entry
            .split_once(['x', 'X'])
            .with_context(|| format!("chip entry {entry:?}: expected DENOMINATION_CENTSxCOUNT, e.g. 500x20"))?;
        let denomination_cents = crate::amount::parse_cents(denomination)
            .map_err(|error| anyhow::anyhow!("chip entry {entry:?}: denomination {error}"))?;
        let count: i64 = count.trim().parse().with_context(|| format!("chip entry {entry:?}: bad count"))?;
        chips.push(pb::ChipCount { denomination_cents, count });
    }
    if chips.len() > MAX_CHIP_ENTRIES {
        bail!("at most {MAX_CHIP_ENTRIES} chip entries");
    }
    Ok(chips)
}

/// A chip list argument.
#[derive(Debug, Clone)]
pub struct Chips(pub Vec<pb::ChipCount>);

fn chips_arg(text: &str) -> Result<Chips, String> {
    parse_chips(text).map(Chips).map_err(|error| format!("{error:#}"))
}

/// Showdown groups argument.
#[derive(Debug, Clone)]
pub struct Groups(pub Vec<pb::SeatGroup>);

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Game {
    Nlhe,
    Plhe,
    Plo,
    Hplhe,
    Lhe,
    /// No-limit short-deck hold'em.
    ShortDeck,
    /// Fixed-limit Omaha high-low, 8 or better.
    O8,
    /// Seven-card stud (needs --ante and --bring-in).
    Stud,
    /// Seven-card stud high-low, 8 or better.
    Stud8,
    Razz,
    /// 2-7 triple draw (fixed limit).
    TripleDraw,
    /// 2-7 single draw (no limit).
    SingleDraw,
    Badugi,
}

impl Game {
    fn preset(self) -> pb::GamePreset {
        match self {
            Game::Nlhe => pb::GamePreset::NoLimitHoldem,
            Game::Plhe => pb::GamePreset::PotLimitHoldem,
            Game::Plo => pb::GamePreset::PotLimitOmaha,
            Game::Hplhe => pb::GamePreset::HalfPotLimitHoldem,
            Game::Lhe => pb::GamePreset::FixedLimitHoldem,
            Game::ShortDeck => pb::GamePreset::ShortDeckHoldem,
            Game::O8 => pb::GamePreset::OmahaHiLo,
            Game::Stud => pb::GamePreset::SevenCardStud,
            Game::Stud8 => pb::GamePreset::SevenCardStudHiLo,
            Game::Razz => pb::GamePreset::Razz,
            Game::TripleDraw => pb::GamePreset::DeuceToSevenTripleDraw,
            Game::SingleDraw => pb::GamePreset::DeuceToSevenSingleDraw,
            Game::Badugi => pb::GamePreset::Badugi,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Source {
    Cash,
    Pocket,
}

impl Source {
    fn wire(self) -> i32 {
        match self {
            Source::Cash => pb::FundsSource::Cash as i32,
            Source::Pocket => pb::FundsSource::PocketChips as i32,
        }
    }
}

/// A table's game and stakes, for opening it or changing its configuration: the preset of the
/// game (RULES.md defaults) at these stakes.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct PresetArgs {
    #[arg(long, value_enum)]
    game: Game,
    #[command(flatten)]
    small: SmallFlags,
    #[command(flatten)]
    big: BigFlags,
    #[command(flatten)]
    ante: AnteFlags,
    #[command(flatten)]
    bring_in: BringInFlags,
}

/// `NAME=VALUE`: a setting changed from the preset (`--set straddle_any_position=true`).
fn parse_setting(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once('=').ok_or_else(|| format!("{text:?}: expected NAME=VALUE, e.g. button_policy=Moving"))?;
    Ok((name.trim().to_owned(), value.to_owned()))
}

/// The configuration of `table open` / `table config`: the preset, or the preset with the
/// settings changed (checked here as the service checks it).
fn configuration(preset: PresetArgs, settings: &[(String, String)]) -> anyhow::Result<Result<pb::TableConfig, pb::TablePreset>> {
    if settings.is_empty() {
        return Ok(Err(preset.wire()));
    }
    chipledger_proto::preset_with_settings(&preset.wire(), settings).map(Ok).map_err(|problem| anyhow::anyhow!("table configuration: {problem}"))
}

impl PresetArgs {
    fn wire(self) -> pb::TablePreset {
        pb::TablePreset {
            game: self.game.preset() as i32,
            small_cents: self.small.cents_or_zero(),
            big_cents: self.big.cents_or_zero(),
            ante_cents: self.ante.cents_or_zero(),
            bring_in_cents: self.bring_in.cents_or_zero(),
        }
    }
}

/// Which slip (R-CHIP-3).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SlipArg {
    Fill,
    Credit,
}

impl SlipArg {
    fn wire(self) -> i32 {
        let kind = match self {
            SlipArg::Fill => pb::SlipKind::Fill,
            SlipArg::Credit => pb::SlipKind::Credit,
        };
        kind as i32
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Post {
    Ante,
    ButtonAnte,
    SmallBlind,
    BigBlind,
    ThirdBlind,
    Straddle,
    BringIn,
    Kill,
    NewPlayer,
    MissedBigBlind,
    MissedSmallBlindDead,
    BigBlindAnte,
    Sleeper,
    MissedSmallBlind,
    MissedButtonAnte,
}

impl Post {
    /// The wire kind (the one mapping; [`crate::words::post_kind`] reads it back as words).
    pub(crate) fn wire(self) -> i32 {
        let kind = match self {
            Post::Ante => pb::PostKind::Ante,
            Post::ButtonAnte => pb::PostKind::ButtonAnte,
            Post::SmallBlind => pb::PostKind::SmallBlind,
            Post::BigBlind => pb::PostKind::BigBlind,
            Post::ThirdBlind => pb::PostKind::ThirdBlind,
            Post::Straddle => pb::PostKind::Straddle,
            Post::BringIn => pb::PostKind::BringIn,
            Post::Kill => pb::PostKind::Kill,
            Post::NewPlayer => pb::PostKind::NewPlayer,
            Post::MissedBigBlind => pb::PostKind::MissedBigBlind,
            Post::MissedSmallBlindDead => pb::PostKind::MissedSmallBlindDead,
            Post::BigBlindAnte => pb::PostKind::BigBlindAnte,
            Post::Sleeper => pb::PostKind::Sleeper,
            Post::MissedSmallBlind => pb::PostKind::MissedSmallBlind,
            Post::MissedButtonAnte => pb::PostKind::MissedButtonAnte,
        };
        kind as i32
    }
}

/// `1:Ah,3:2c` -> up cards (seat:card).
fn up_cards(text: &str) -> Result<UpCards, String> {
    text.split(',')
        .map(|entry| {
            let (seat, card) = entry.split_once(':').ok_or_else(|| format!("{entry:?} is not seat:card"))?;
            let seat = seat.trim().parse::<u32>().map_err(|_| format!("bad seat {seat:?} in {text:?}"))?;
            Ok(pb::UpCard { seat, card: card.trim().to_owned() })
        })
        .collect::<Result<Vec<_>, String>>()
        .map(UpCards)
}

/// Up cards argument.
#[derive(Debug, Clone)]
pub struct UpCards(pub Vec<pb::UpCard>);

/// `2:950,4:200` -> awards (seat:cents).
fn awards(text: &str) -> Result<Awards, String> {
    text.split(',')
        .map(|entry| {
            let (seat, amount) = entry.split_once(':').ok_or_else(|| format!("{entry:?} is not seat:cents"))?;
            let seat = seat.trim().parse::<u32>().map_err(|_| format!("bad seat {seat:?} in {text:?}"))?;
            let amount_cents = crate::amount::parse_cents(amount).map_err(|error| format!("{text:?}: {error}"))?;
            Ok(pb::SeatAward { seat, amount_cents })
        })
        .collect::<Result<Vec<_>, String>>()
        .map(Awards)
}

/// Awards argument.
#[derive(Debug, Clone)]
pub struct Awards(pub Vec<pb::SeatAward>);

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ActionArg {
    Fold,
    Check,
    Call,
    Bet,
    Raise,
    Complete,
    AllIn,
}

impl ActionArg {
    fn wire(self) -> i32 {
        let kind = match self {
            ActionArg::Fold => pb::ActionKind::Fold,
            ActionArg::Check => pb::ActionKind::Check,
            ActionArg::Call => pb::ActionKind::Call,
            ActionArg::Bet => pb::ActionKind::Bet,
            ActionArg::Raise => pb::ActionKind::Raise,
            ActionArg::Complete => pb::ActionKind::Complete,
            ActionArg::AllIn => pb::ActionKind::AllIn,
        };
        kind as i32
    }
}

/// `1,2;3` -> groups [[1,2],[3]] (best first, ties share a group).
fn seat_groups(text: &str) -> Result<Groups, String> {
    text.split(';')
        .map(|group| {
            group
                .split(',')
                .map(|seat| seat.trim().parse::<u32>().map_err(|_| format!("bad seat {seat:?} in {text:?}")))
                .collect::<Result<Vec<u32>, String>>()
                .map(|seats| pb::SeatGroup { seats })
        })
        .collect::<Result<Vec<_>, String>>()
        .map(Groups)
}

/// Movements at a table (dealer and floor).
#[derive(Debug, Subcommand)]
pub enum TableOperation {
    /// Open a table with a preset configuration (RULES.md defaults for the game), with any of
    /// its settings changed by `--set`.
    Open {
        #[arg(long)]
        table: String,
        #[command(flatten)]
        preset: PresetArgs,
        /// A setting changed from the preset, by its name in a TableOpened event's config (a dot
        /// reaches into a part): `--set button_policy=Moving --set rebuy.wait_window_ms=1800000
        /// --set refreshment_allowance_cents=500`. Repeat for each.
        #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_setting)]
        settings: Vec<(String, String)>,
    },
    /// Change an open table's configuration to a preset, with any settings changed by `--set`
    /// (between hands; the new version is stamped on every later event).
    Config {
        #[arg(long)]
        table: String,
        #[command(flatten)]
        preset: PresetArgs,
        /// As for `table open`.
        #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_setting)]
        settings: Vec<(String, String)>,
    },
    /// Close the shift with the counted tray and drop, signed by the two who counted
    /// (R-CHIP-4). A count that differs from the book is recorded as a variance.
    CloseShift {
        #[arg(long)]
        table: String,
        #[arg(long, value_parser = chips_arg)]
        counted_tray: Chips,
        #[command(flatten)]
        counted_drop: CountedDropFlags,
        /// One of the two who counted (default: the caller, or the approver of an --approval
        /// token).
        #[arg(long)]
        signer1: Option<String>,
        /// The other (default: the approver of an --approval token).
        #[arg(long)]
        signer2: Option<String>,
    },
    /// Seat a patron (a buy-in follows).
    Seat {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[arg(long)]
        player: String,
    },
    /// Move a player with the stack unchanged (R-STAKE-6).
    Move {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        /// The player in the seat.
        #[arg(long)]
        player: String,
        #[arg(long)]
        to_table: String,
        #[arg(long)]
        to_seat: u32,
    },
    /// First chips of a session (R-STAKE-3, R-REBUY-1).
    BuyIn {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[arg(long)]
        player: String,
        #[command(flatten)]
        amount: AmountFlags,
        #[arg(long, value_enum, default_value = "cash")]
        source: Source,
        /// The supervisor of a large buy-in (default: the approver of an --approval token).
        #[arg(long)]
        supervisor: Option<String>,
        #[arg(long)]
        short_buy: bool,
    },
    /// Add chips between hands (R-STAKE-1, R-STAKE-3).
    TopUp {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[arg(long)]
        player: String,
        #[command(flatten)]
        amount: AmountFlags,
        #[arg(long, value_enum, default_value = "cash")]
        source: Source,
        /// The supervisor of a large buy-in (default: the approver of an --approval token).
        #[arg(long)]
        supervisor: Option<String>,
    },
    /// Cash on the table deemed in play (R-STAKE-5).
    CashInPlay {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[arg(long)]
        player: String,
        #[command(flatten)]
        amount: AmountFlags,
        /// The supervisor of a large amount (default: the approver of an --approval token).
        #[arg(long)]
        supervisor: Option<String>,
    },
    /// Convert the seat's cash in play to chips (R-STAKE-5).
    ConvertCash {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
    },
    /// The player leaves with the whole stack (R-STAKE-2, starts the re-buy wait).
    CashOut {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[arg(long)]
        player: String,
    },
    /// Take chips off a seated stack: ratholing, refused and recorded for auditors (R-STAKE-2),
    /// except between hands within the table's refreshment allowance, naming the player.
    RemoveChips {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[command(flatten)]
        amount: AmountFlags,
        /// The patron whose pocket takes the chips (the refreshment allowance).
        #[arg(long)]
        player: Option<String>,
    },
    /// Color up / down with the tray (R-CHIP-1).
    ColorChange {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[arg(long, value_parser = chips_arg)]
        give: Chips,
        #[arg(long, value_parser = chips_arg)]
        receive: Chips,
    },
    /// A tip to the toke box (R-TIP-1).
    Tip {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[command(flatten)]
        amount: AmountFlags,
    },
    /// Pay an expense from the kitty (R-KITTY-1).
    KittyExpense {
        #[arg(long)]
        table: String,
        #[command(flatten)]
        amount: AmountFlags,
        #[arg(long)]
        purpose: String,
        #[arg(long)]
        to_dealer: bool,
    },
    /// Collect the time fee from seats (R-RAKE-3).
    CollectTime {
        #[arg(long)]
        table: String,
        #[arg(long, value_delimiter = ',')]
        seats: Vec<u32>,
    },
    /// Deal a hand.
    StartHand {
        #[arg(long)]
        table: String,
        #[arg(long)]
        hand_no: u64,
        #[arg(long)]
        button: u32,
        #[arg(long, value_delimiter = ',')]
        seats: Vec<u32>,
    },
    /// A forced bet (section 4).
    Post {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[arg(long, value_enum)]
        kind: Post,
        #[command(flatten)]
        amount: AmountFlags,
    },
    /// A betting action; `--to` is the "raise to" total (R-BET-5).
    Act {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[arg(long, value_enum)]
        action: ActionArg,
        #[command(flatten)]
        to: ToFlags,
    },
    /// Deal the next street.
    NextRound {
        #[arg(long)]
        table: String,
        #[arg(long)]
        first_to_act: Option<u32>,
    },
    /// Report the showdown: `--high "3;1,5"` (best first, ties comma-separated).
    Showdown {
        #[arg(long)]
        table: String,
        #[arg(long, value_parser = seat_groups)]
        high: Groups,
        #[arg(long, value_parser = seat_groups)]
        low: Option<Groups>,
        #[command(flatten)]
        rake: RakeFlags,
    },
    /// Stud: report the up cards just dealt, `--cards "1:Ah,3:2c"` (R-POST-5).
    DealUpCards {
        #[arg(long)]
        table: String,
        #[arg(long, value_parser = up_cards)]
        cards: UpCards,
    },
    /// Award the pots by amount when the cards cannot be ranked, `--awards "2:950"` (seat:cents,
    /// R-POT-5).
    AwardPots {
        #[arg(long)]
        table: String,
        #[arg(long, value_parser = awards)]
        awards: Awards,
        #[command(flatten)]
        rake: RakeFlags,
    },
    /// Close a settled hand.
    EndHand {
        #[arg(long)]
        table: String,
    },
    /// The player at the seat steps away: not dealt in until back (R-POST-3).
    SitOut {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
    },
    /// The absent player returns (owed missed blinds are posted before playing, R-POST-3).
    SitIn {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
    },
    /// An IOU in an open-stakes game (R-MARK-3).
    WriteIou {
        #[arg(long)]
        table: String,
        #[arg(long)]
        seat: u32,
        #[command(flatten)]
        amount: AmountFlags,
        #[arg(long)]
        lender: Option<String>,
        #[arg(long, value_delimiter = ',')]
        accepted_by: Vec<u32>,
        #[arg(long)]
        to_raise: bool,
    },
}

/// The cage: chips for cash, fills and credits, markers.
#[derive(Debug, Subcommand)]
pub enum CageOperation {
    /// Open a cage with its chip stock and cash float.
    Open {
        #[arg(long)]
        cage: String,
        #[arg(long, value_delimiter = ',')]
        denominations_cents: Vec<i64>,
        #[arg(long, value_parser = chips_arg)]
        chips: Chips,
        #[command(flatten)]
        cash: CashFlags,
    },
    /// Cash-in: chips to the patron's pocket (R-CHIP-2).
    Sell {
        #[arg(long)]
        cage: String,
        #[arg(long)]
        player: String,
        #[arg(long, value_parser = chips_arg)]
        chips: Chips,
        /// The supervisor of a large sale (default: the approver of an --approval token).
        #[arg(long)]
        supervisor: Option<String>,
    },
    /// Redemption: chips back, cash out (R-CHIP-5).
    Redeem {
        #[arg(long)]
        cage: String,
        #[arg(long)]
        player: String,
        #[arg(long, value_parser = chips_arg)]
        chips: Chips,
    },
    /// Chips from the cage to a table tray (R-CHIP-3).
    Fill {
        #[arg(long)]
        cage: String,
        #[arg(long)]
        table: String,
        #[arg(long)]
        slip: u64,
        #[arg(long, value_parser = chips_arg)]
        chips: Chips,
        /// The cage's signer (default: the cage approver of an --approval token).
        #[arg(long)]
        signer1: Option<String>,
        /// The floor's signer (default: the floor approver of an --approval token).
        #[arg(long)]
        signer2: Option<String>,
    },
    /// Chips from a table tray to the cage (R-CHIP-3).
    Credit {
        #[arg(long)]
        cage: String,
        #[arg(long)]
        table: String,
        #[arg(long)]
        slip: u64,
        #[arg(long, value_parser = chips_arg)]
        chips: Chips,
        /// The cage's signer (default: the cage approver of an --approval token).
        #[arg(long)]
        signer1: Option<String>,
        /// The floor's signer (default: the floor approver of an --approval token).
        #[arg(long)]
        signer2: Option<String>,
    },
    /// Void a fill or credit slip (R-CHIP-3): its postings are reversed and its number stays
    /// used; signed by the cage and the floor, with a reason.
    VoidSlip {
        #[arg(long)]
        cage: String,
        #[arg(long)]
        table: String,
        #[arg(long, value_enum)]
        kind: SlipArg,
        #[arg(long)]
        slip: u64,
        /// Why the slip is void (recorded on the event).
        #[arg(long)]
        why: String,
        /// The cage's signer (default: the cage approver of an --approval token).
        #[arg(long)]
        signer1: Option<String>,
        /// The floor's signer (default: the floor approver of an --approval token).
        #[arg(long)]
        signer2: Option<String>,
    },
    /// Color up or down at the cage: the patron's pocket chips for the same value in other
    /// denominations (R-CHIP-1).
    ColorChange {
        #[arg(long)]
        cage: String,
        #[arg(long)]
        player: String,
        #[arg(long, value_parser = chips_arg)]
        give: Chips,
        #[arg(long, value_parser = chips_arg)]
        receive: Chips,
    },
    /// The cage's shift count, chips and cash, signed by the two who counted (R-CHIP-4). A count
    /// that differs from the book is recorded as a variance.
    Count {
        #[arg(long)]
        cage: String,
        /// The chips counted, DENOMINATION_CENTSxCOUNT,... e.g. 500x20,2500x4.
        #[arg(long, value_parser = chips_arg)]
        counted_chips: Chips,
        #[command(flatten)]
        counted_cash: CountedCashFlags,
        /// One of the two who counted (default: the caller, or the approver of an --approval
        /// token).
        #[arg(long)]
        signer1: Option<String>,
        /// The other (default: the approver of an --approval token).
        #[arg(long)]
        signer2: Option<String>,
    },
    /// Close the gaming day (R-CHIP-5).
    CloseDay {
        #[arg(long)]
        cage: String,
    },
    /// Set a patron's approved credit line (R-MARK-1).
    CreditLine {
        #[arg(long)]
        player: String,
        #[command(flatten)]
        line: LineFlags,
        /// The approver (default: the approver of the --approval token).
        #[arg(long)]
        approved_by: Option<String>,
    },
    /// Issue a marker to the pocket, or to a seat with `--table/--seat` (R-MARK-1).
    Marker {
        #[arg(long)]
        cage: String,
        #[arg(long)]
        player: String,
        #[arg(long)]
        marker_no: u64,
        #[arg(long, value_parser = chips_arg)]
        chips: Chips,
        /// The approver (default: the approver of the --approval token).
        #[arg(long)]
        approved_by: Option<String>,
        #[arg(long, requires = "seat")]
        table: Option<String>,
        #[arg(long, requires = "table")]
        seat: Option<u32>,
    },
    /// Redeem a marker in whole or part.
    RedeemMarker {
        #[arg(long)]
        cage: String,
        #[arg(long)]
        player: String,
        #[arg(long)]
        marker_no: u64,
        #[command(flatten)]
        amount: AmountFlags,
    },
    /// Write a marker off (independent approver).
    WriteOff {
        #[arg(long)]
        cage: String,
        #[arg(long)]
        player: String,
        #[arg(long)]
        marker_no: u64,
        /// The approver (default: the approver of the --approval token).
        #[arg(long)]
        approved_by: Option<String>,
    },
}

impl TableOperation {
    pub fn into_wire(self) -> anyhow::Result<Wire> {
        Ok(match self {
            TableOperation::Open { table, preset, settings } => {
                use pb::open_table::Configuration;
                let configuration = match configuration(preset, &settings)? {
                    Ok(config) => Configuration::Config(config),
                    Err(preset) => Configuration::Preset(preset),
                };
                Wire::OpenTable(pb::OpenTable { header: None, table_id: table, configuration: Some(configuration) })
            }
            TableOperation::Config { table, preset, settings } => {
                use pb::change_table_config::Configuration;
                let configuration = match configuration(preset, &settings)? {
                    Ok(config) => Configuration::Config(config),
                    Err(preset) => Configuration::Preset(preset),
                };
                Wire::ChangeTableConfig(pb::ChangeTableConfig { header: None, table_id: table, configuration: Some(configuration) })
            }
            TableOperation::CloseShift { table, counted_tray, counted_drop, signer1, signer2 } => {
                Wire::CloseShift(pb::CloseShift {
                    header: None,
                    table_id: table,
                    counted_tray: counted_tray.0,
                    counted_drop_cents: counted_drop.cents(),
                    signer_1: signer1.unwrap_or_default(),
                    signer_2: signer2.unwrap_or_default(),
                })
            }
            TableOperation::Seat { table, seat, player } => {
                Wire::SeatPlayer(pb::SeatPlayer { header: None, table_id: table, seat, player_id: player })
            }
            TableOperation::Move { table, seat, player, to_table, to_seat } => Wire::MovePlayer(pb::MovePlayer {
                header: None,
                table_id: table,
                seat,
                to_table_id: to_table,
                to_seat,
                player_id: player,
            }),
            TableOperation::BuyIn { table, seat, player, amount, source, supervisor, short_buy } => {
                Wire::BuyIn(pb::BuyIn {
                    header: None,
                    table_id: table,
                    seat,
                    player_id: player,
                    amount_cents: amount.cents_or_zero(),
                    source: source.wire(),
                    supervisor_id: supervisor,
                    short_buy,
                })
            }
            TableOperation::TopUp { table, seat, player, amount, source, supervisor } => Wire::TopUp(pb::TopUp {
                header: None,
                table_id: table,
                seat,
                amount_cents: amount.cents_or_zero(),
                source: source.wire(),
                supervisor_id: supervisor,
                player_id: player,
            }),
            TableOperation::CashInPlay { table, seat, player, amount, supervisor } => Wire::CashInPlay(pb::CashInPlay {
                header: None,
                table_id: table,
                seat,
                amount_cents: amount.cents_or_zero(),
                player_id: player,
                supervisor_id: supervisor,
            }),
            TableOperation::ConvertCash { table, seat } => {
                Wire::ConvertCashInPlay(pb::ConvertCashInPlay { header: None, table_id: table, seat })
            }
            TableOperation::CashOut { table, seat, player } => {
                Wire::CashOut(pb::CashOut { header: None, table_id: table, seat, player_id: player })
            }
            TableOperation::RemoveChips { table, seat, amount, player } => {
                Wire::RemoveChips(pb::RemoveChips { header: None, table_id: table, seat, amount_cents: amount.cents_or_zero(), player_id: player })
            }
            TableOperation::ColorChange { table, seat, give, receive } => Wire::ColorChange(pb::ColorChange {
                header: None,
                table_id: table,
                seat,
                give: give.0,
                receive: receive.0,
            }),
            TableOperation::Tip { table, seat, amount } => {
                Wire::Tip(pb::Tip { header: None, table_id: table, seat, amount_cents: amount.cents_or_zero() })
            }
            TableOperation::KittyExpense { table, amount, purpose, to_dealer } => {
                Wire::KittyExpense(pb::KittyExpense { header: None, table_id: table, amount_cents: amount.cents_or_zero(), purpose, to_dealer })
            }
            TableOperation::CollectTime { table, seats } => {
                Wire::CollectTime(pb::CollectTime { header: None, table_id: table, seats })
            }
            TableOperation::StartHand { table, hand_no, button, seats } => Wire::StartHand(pb::StartHand {
                header: None,
                table_id: table,
                hand_no,
                button_seat: button,
                dealt_seats: seats,
            }),
            TableOperation::Post { table, seat, kind, amount } => {
                Wire::Post(pb::Post { header: None, table_id: table, seat, kind: kind.wire(), amount_cents: amount.cents_or_zero() })
            }
            TableOperation::Act { table, seat, action, to } => {
                Wire::Act(pb::Act { header: None, table_id: table, seat, kind: action.wire(), to_cents: to.cents_or_zero() })
            }
            TableOperation::NextRound { table, first_to_act } => {
                Wire::NextRound(pb::NextRound { header: None, table_id: table, first_to_act_seat: first_to_act })
            }
            TableOperation::Showdown { table, high, low, rake } => Wire::Showdown(pb::Showdown {
                header: None,
                table_id: table,
                has_low: low.is_some(),
                low: low.map(|groups| groups.0).unwrap_or_default(),
                high: high.0,
                rake_cents: rake.cents(),
            }),
            TableOperation::DealUpCards { table, cards } => {
                Wire::DealUpCards(pb::DealUpCards { header: None, table_id: table, cards: cards.0 })
            }
            TableOperation::AwardPots { table, awards, rake } => {
                Wire::AwardPots(pb::AwardPots { header: None, table_id: table, awards: awards.0, rake_cents: rake.cents() })
            }
            TableOperation::SitOut { table, seat } => Wire::SitOut(pb::SitOut { header: None, table_id: table, seat }),
            TableOperation::SitIn { table, seat } => Wire::SitIn(pb::SitIn { header: None, table_id: table, seat }),
            TableOperation::EndHand { table } => Wire::EndHand(pb::EndHand { header: None, table_id: table }),
            TableOperation::WriteIou { table, seat, amount, lender, accepted_by, to_raise } => {
                Wire::WriteIou(pb::WriteIou {
                    header: None,
                    table_id: table,
                    seat,
                    amount_cents: amount.cents_or_zero(),
                    lender_player_id: lender,
                    accepted_by,
                    to_raise,
                })
            }
        })
    }
}

impl CageOperation {
    pub fn into_wire(self) -> Wire {
        match self {
            CageOperation::Open { cage, denominations_cents, chips, cash } => Wire::OpenCage(pb::OpenCage {
                header: None,
                cage_id: cage,
                denominations_cents,
                chips: chips.0,
                cash_cents: cash.cents_or_zero(),
            }),
            CageOperation::Sell { cage, player, chips, supervisor } => {
                Wire::SellChips(pb::SellChips { header: None, cage_id: cage, player_id: player, chips: chips.0, supervisor_id: supervisor })
            }
            CageOperation::Redeem { cage, player, chips } => {
                Wire::RedeemChips(pb::RedeemChips { header: None, cage_id: cage, player_id: player, chips: chips.0 })
            }
            CageOperation::Fill { cage, table, slip, chips, signer1, signer2 } => Wire::Fill(pb::Fill {
                header: None,
                table_id: table,
                cage_id: cage,
                slip_no: slip,
                chips: chips.0,
                signer_1: signer1.unwrap_or_default(),
                signer_2: signer2.unwrap_or_default(),
            }),
            CageOperation::Credit { cage, table, slip, chips, signer1, signer2 } => Wire::Credit(pb::Credit {
                header: None,
                table_id: table,
                cage_id: cage,
                slip_no: slip,
                chips: chips.0,
                signer_1: signer1.unwrap_or_default(),
                signer_2: signer2.unwrap_or_default(),
            }),
            CageOperation::VoidSlip { cage, table, kind, slip, why, signer1, signer2 } => Wire::VoidSlip(pb::VoidSlip {
                header: None,
                table_id: table,
                cage_id: cage,
                kind: kind.wire(),
                slip_no: slip,
                reason: why,
                signer_1: signer1.unwrap_or_default(),
                signer_2: signer2.unwrap_or_default(),
            }),
            CageOperation::ColorChange { cage, player, give, receive } => Wire::CageColorChange(pb::CageColorChange {
                header: None,
                cage_id: cage,
                player_id: player,
                give: give.0,
                receive: receive.0,
            }),
            CageOperation::Count { cage, counted_chips, counted_cash, signer1, signer2 } => {
                Wire::CountCageShift(pb::CountCageShift {
                    header: None,
                    cage_id: cage,
                    counted_chips: counted_chips.0,
                    counted_cash_cents: counted_cash.cents(),
                    signer_1: signer1.unwrap_or_default(),
                    signer_2: signer2.unwrap_or_default(),
                })
            }
            CageOperation::CloseDay { cage } => Wire::CloseGamingDay(pb::CloseGamingDay { header: None, cage_id: cage }),
            CageOperation::CreditLine { player, line, approved_by } => {
                Wire::SetCreditLine(pb::SetCreditLine {
                    header: None,
                    player_id: player,
                    line_cents: line.cents_or_zero(),
                    approved_by: approved_by.unwrap_or_default(),
                })
            }
            CageOperation::Marker { cage, player, marker_no, chips, approved_by, table, seat } => {
                let delivery = match (table, seat) {
                    (Some(table_id), Some(seat)) => pb::issue_marker::Delivery::ToSeat(pb::MarkerToSeat { table_id, seat }),
                    _ => pb::issue_marker::Delivery::ToPocket(true),
                };
                Wire::IssueMarker(pb::IssueMarker {
                    header: None,
                    cage_id: cage,
                    player_id: player,
                    marker_no,
                    chips: chips.0,
                    approved_by: approved_by.unwrap_or_default(),
                    delivery: Some(delivery),
                })
            }
            CageOperation::RedeemMarker { cage, player, marker_no, amount } => {
                Wire::RedeemMarker(pb::RedeemMarker { header: None, cage_id: cage, player_id: player, marker_no, amount_cents: amount.cents_or_zero() })
            }
            CageOperation::WriteOff { cage, player, marker_no, approved_by } => {
                Wire::WriteOffMarker(pb::WriteOffMarker {
                    header: None,
                    cage_id: cage,
                    player_id: player,
                    marker_no,
                    approved_by: approved_by.unwrap_or_default(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chip_lists_parse_and_refuse_garbage() {
        let chips = parse_chips("500x20, 2500X4").unwrap();
        assert_eq!(chips, vec![
            pb::ChipCount { denomination_cents: 500, count: 20 },
            pb::ChipCount { denomination_cents: 2_500, count: 4 },
        ]);
        assert!(parse_chips("500").is_err());
        assert!(parse_chips("fivex2").is_err());
    }

    #[test]
    fn seat_groups_parse_best_first() {
        let groups = seat_groups("3;1,5").unwrap().0;
        assert_eq!(groups, vec![pb::SeatGroup { seats: vec![3] }, pb::SeatGroup { seats: vec![1, 5] }]);
    }
}
