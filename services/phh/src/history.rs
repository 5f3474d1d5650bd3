//! The typed hand history: what one PHH file (or one table of a `.phhs` file) says.

use crate::Cents;

use crate::card::Cards;

/// Most players one hand may have (a table has at most 10 seats).
pub const MAX_PLAYERS: usize = 10;

/// Largest seat number or seat count a hand may name.
pub const MAX_SEAT_NUMBER: u8 = 10;

/// Most actions one hand may have (bounds memory on hostile input; real hands have < 100).
pub const MAX_ACTIONS: usize = 1_000;

/// The variants this crate replays: the eleven of the PHH specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// `NT`: no-limit Texas hold 'em.
    NoLimitHoldem,
    /// `NS`: no-limit short-deck hold 'em (36 cards, A-6-7-8-9 straight, flush above full house).
    NoLimitShortDeckHoldem,
    /// `FT`: fixed-limit Texas hold 'em.
    FixedLimitHoldem,
    /// `PO`: pot-limit Omaha hold 'em (best hand uses exactly 2 hole + 3 board cards).
    PotLimitOmaha,
    /// `FO/8`: fixed-limit Omaha hold 'em high-low, 8 or better.
    FixedLimitOmahaHiLo,
    /// `F7S` (also accepted as `FS`): fixed-limit seven-card stud, with a bring-in.
    FixedLimitSevenCardStud,
    /// `F7S/8`: fixed-limit seven-card stud high-low, 8 or better.
    FixedLimitSevenCardStudHiLo,
    /// `FR`: fixed-limit razz (A-5 low).
    FixedLimitRazz,
    /// `N2L1D`: no-limit 2-7 lowball, single draw.
    NoLimitDeuceToSevenSingleDraw,
    /// `F2L3D`: fixed-limit 2-7 lowball, triple draw.
    FixedLimitDeuceToSevenTripleDraw,
    /// `FB`: fixed-limit badugi.
    FixedLimitBadugi,
}

impl Variant {
    /// Every variant, in the order of the replay summary.
    pub const ALL: [Variant; 11] = [
        Variant::NoLimitHoldem,
        Variant::NoLimitShortDeckHoldem,
        Variant::FixedLimitHoldem,
        Variant::PotLimitOmaha,
        Variant::FixedLimitOmahaHiLo,
        Variant::FixedLimitSevenCardStud,
        Variant::FixedLimitSevenCardStudHiLo,
        Variant::FixedLimitRazz,
        Variant::NoLimitDeuceToSevenSingleDraw,
        Variant::FixedLimitDeuceToSevenTripleDraw,
        Variant::FixedLimitBadugi,
    ];

    /// The PHH variant code, or `None` for codes this crate does not know.
    pub fn from_code(code: &str) -> Option<Variant> {
        match code {
            "FS" => Some(Variant::FixedLimitSevenCardStud),
            _ => Variant::ALL.into_iter().find(|v| v.code() == code),
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            Variant::NoLimitHoldem => "NT",
            Variant::NoLimitShortDeckHoldem => "NS",
            Variant::FixedLimitHoldem => "FT",
            Variant::PotLimitOmaha => "PO",
            Variant::FixedLimitOmahaHiLo => "FO/8",
            Variant::FixedLimitSevenCardStud => "F7S",
            Variant::FixedLimitSevenCardStudHiLo => "F7S/8",
            Variant::FixedLimitRazz => "FR",
            Variant::NoLimitDeuceToSevenSingleDraw => "N2L1D",
            Variant::FixedLimitDeuceToSevenTripleDraw => "F2L3D",
            Variant::FixedLimitBadugi => "FB",
        }
    }

    /// Button games have blinds; stud has a bring-in and no button.
    pub fn has_button(self) -> bool {
        !self.is_stud()
    }

    pub fn is_stud(self) -> bool {
        matches!(
            self,
            Variant::FixedLimitSevenCardStud | Variant::FixedLimitSevenCardStudHiLo | Variant::FixedLimitRazz
        )
    }

    /// Draw games: discards between betting rounds, no board.
    pub fn is_draw(self) -> bool {
        matches!(
            self,
            Variant::NoLimitDeuceToSevenSingleDraw | Variant::FixedLimitDeuceToSevenTripleDraw | Variant::FixedLimitBadugi
        )
    }

    /// High-low split games, 8 or better (R-POT-5).
    pub fn is_hi_lo(self) -> bool {
        matches!(self, Variant::FixedLimitOmahaHiLo | Variant::FixedLimitSevenCardStudHiLo)
    }

    pub fn is_fixed_limit(self) -> bool {
        self.code().starts_with('F')
    }
}

/// A player by position in the PHH arrays: `p1` is `Player(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Player(pub u8);

impl Player {
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl std::fmt::Display for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "p{}", self.0 + 1)
    }
}

/// What a player shows at showdown (`pN sm ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// `pN sm` with no cards: the player mucks and forfeits any claim to the pot.
    Muck,
    /// `pN sm -`: shows the hole cards already dealt to them.
    DealtCards,
    /// `pN sm Ah3s...`: the cards shown (some may be `??`).
    Cards(Cards),
}

/// One action of the `actions` array (no-ops and pure commentaries are dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `d dh pN cards`: hole cards (or stud up/down cards) dealt to a player.
    DealHole { player: Player, cards: Cards },
    /// `d db cards`: community cards dealt to the board.
    DealBoard { cards: Cards },
    /// `pN pb`: posts the bring-in (stud).
    BringIn { player: Player },
    /// `pN f`.
    Fold { player: Player },
    /// `pN cc`: check when nothing is owed, call otherwise.
    CheckOrCall { player: Player },
    /// `pN cbr X`: complete, bet or raise *to* X for the round (R-BET-5).
    CompleteBetOrRaiseTo { player: Player, amount_cents: Cents },
    /// `pN sd [cards]`: stand pat (empty) or discard the cards named.
    StandPatOrDiscard { player: Player, discarded: Cards },
    /// `pN sm [cards|-]`: show or muck at showdown.
    ShowOrMuck { player: Player, shown: Shown },
}

impl Action {
    /// The acting player, or `None` for the dealer's actions.
    pub fn player(&self) -> Option<Player> {
        match *self {
            Action::DealBoard { .. } => None,
            Action::DealHole { player, .. }
            | Action::BringIn { player }
            | Action::Fold { player }
            | Action::CheckOrCall { player }
            | Action::CompleteBetOrRaiseTo { player, .. }
            | Action::StandPatOrDiscard { player, .. }
            | Action::ShowOrMuck { player, .. } => Some(player),
        }
    }
}

/// An action with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionEntry {
    pub action: Action,
    /// 1-based line in the source file.
    pub line: u32,
    /// The commentary after `#` in the action string, if any.
    pub commentary: Option<String>,
}

/// A parsed PHH hand. All amounts are integer cents (see [`crate::amount`]); every
/// per-player array has exactly `starting_stacks_cents.len()` entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandHistory {
    /// File path (and `[table]` for `.phhs` files): where errors point.
    pub origin: String,
    pub variant: Variant,
    pub antes_cents: Vec<Cents>,
    /// Index 0 is the small blind, 1 the big blind, further ones straddles (button games).
    pub blinds_or_straddles_cents: Vec<Cents>,
    pub bring_in_cents: Option<Cents>,
    pub small_bet_cents: Option<Cents>,
    pub big_bet_cents: Option<Cents>,
    pub min_bet_cents: Option<Cents>,
    /// `None` for a stack the file gives as unknown (`inf`).
    pub starting_stacks_cents: Vec<Option<Cents>>,
    pub actions: Vec<ActionEntry>,
    /// If `true`, a player short of the full ante can win only in proportion to it.
    pub ante_trimming_status: bool,
    pub players: Vec<String>,
    /// `None` entries: a final stack the file gives as unknown (`inf`).
    pub finishing_stacks_cents: Option<Vec<Option<Cents>>>,
    /// What each player collected from the pots, after the room's rake (`winnings`).
    pub winnings_cents: Option<Vec<Cents>>,
    /// The rake the room took from the hand (`rake`).
    pub rake_cents: Option<Cents>,
    /// The pots as the room recorded them (`total_pot_amounts`), main pot first.
    pub total_pot_amounts_cents: Option<Vec<Cents>>,
    /// Seat numbers at the table (`seats`), and the table's seat count (`seat_count`).
    pub seats: Option<Vec<u8>>,
    pub seat_count: Option<u8>,
    /// The `hand` field (a number or a name), as text.
    pub hand: Option<String>,
    pub currency: Option<String>,
    /// When the hand was played, as far as the file says (`year`, `month`, `day`, `time`,
    /// `time_zone`); `None` when it names no year.
    pub played_on: Option<PlayedOn>,
}

/// The date (and time) a file gives its hand. A file that names a year but not the month or
/// the day is read as the first of them (the start of the period it names); a time it does not
/// give is 00:00:00, a zone it does not give UTC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayedOn {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    /// Hour, minute, second.
    pub time: Option<(u8, u8, u8)>,
    /// An IANA zone name (`time_zone`), as the file writes it.
    pub time_zone: Option<String>,
}

impl HandHistory {
    pub fn player_count(&self) -> usize {
        self.starting_stacks_cents.len()
    }

    /// The name of a player, or `pN` when the file gives none.
    pub fn player_name(&self, player: Player) -> String {
        match self.players.get(player.index()) {
            Some(name) if !name.is_empty() => name.clone(),
            _ => player.to_string(),
        }
    }

    /// Every amount the hand names (forced bets, bet sizes, stacks, bets), for the
    /// minimum playable chip (R-UNIT-2).
    pub fn amounts_cents(&self) -> impl Iterator<Item = Cents> + '_ {
        let scalars = [self.bring_in_cents, self.small_bet_cents, self.big_bet_cents, self.min_bet_cents, self.rake_cents];
        let finishing = self.finishing_stacks_cents.iter().flatten().flatten().copied();
        let winnings = self.winnings_cents.iter().flatten().copied();
        let pots = self.total_pot_amounts_cents.iter().flatten().copied();
        self.antes_cents
            .iter()
            .chain(&self.blinds_or_straddles_cents)
            .copied()
            .chain(self.starting_stacks_cents.iter().flatten().copied())
            .chain(scalars.into_iter().flatten())
            .chain(finishing)
            .chain(winnings)
            .chain(pots)
            .chain(self.actions.iter().filter_map(|entry| match entry.action {
                Action::CompleteBetOrRaiseTo { amount_cents, .. } => Some(amount_cents),
                _ => None,
            }))
    }
}
