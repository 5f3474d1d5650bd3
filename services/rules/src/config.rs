//! Table configuration as data, versioned (R-AUDIT-2): betting structure, forced bets, chip
//! set, buy-in limits, re-buy wait, rake and fees. Presets give the defaults of RULES.md.

use serde::{Deserialize, Serialize};

use crate::money::{Cents, ChipSet};
use crate::rejection::{Reason, Rejection};

/// A table configuration that is not a game the rules can run. The code is one; the rule id is
/// the rule the failed check belongs to ([`invalid_config`]), R-UNIT-2 for the chip set's.
pub const INVALID_CONFIG: Reason = Reason::new("INVALID_CONFIG", "R-UNIT-2");
/// A table's re-buy wait or tolerance outside the room's bounds (R-REBUY-1).
pub const INVALID_REBUY_POLICY: Reason = Reason::new("INVALID_REBUY_POLICY", "R-REBUY-1");
pub const REASONS: &[Reason] = &[INVALID_CONFIG, INVALID_REBUY_POLICY];

/// [`INVALID_CONFIG`] naming the rule whose check failed (R-POST-6 for a kill without blinds).
pub const fn invalid_config(rule: &'static str) -> Reason {
    Reason::new(INVALID_CONFIG.code, rule)
}

/// R-RAKE-3: the interval a time fee pays for, in minutes (default 30).
pub const MIN_TIME_INTERVAL_MINUTES: u32 = 15;
pub const MAX_TIME_INTERVAL_MINUTES: u32 = 240;

/// R-REBUY-1: rooms use a wait window of 30 to 120 minutes. A table configuration outside it is
/// refused, so the wait cannot be switched off (or stretched into a ban) table by table.
pub const MIN_REBUY_WAIT_WINDOW_MS: i64 = 30 * 60 * 1000;
pub const MAX_REBUY_WAIT_WINDOW_MS: i64 = 120 * 60 * 1000;
/// R-REBUY-1's optional tolerance below the amount left with (default 0%): at most 20%, so a
/// returning player still brings back at least four fifths of what they left with.
pub const MAX_REBUY_TOLERANCE_BPS: i64 = 2_000;

/// The room's bounds on a table's own controls: like the re-buy wait, a table may make them
/// stricter, never looser than these, so one supervisor's configuration change cannot switch a
/// control off. R-CHIP-2: buy-ins from $10,000 need a supervisor (the rule's default; a table may
/// lower the threshold).
pub const MAX_SUPERVISOR_THRESHOLD_CENTS: Cents = 1_000_000;
/// R-TIP-1: a tip is de minimis: a table's cap per tip is at most $100.
pub const MAX_TIP_CAP_CENTS: Cents = 10_000;
/// R-STAKE-2, the seeds' "small amounts for refreshments": at most $100 a session.
pub const MAX_REFRESHMENT_ALLOWANCE_CENTS: Cents = 10_000;

/// Betting structures of RULES.md section 5.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum BettingStructure {
    /// R-BET-3.
    NoLimit,
    /// R-BET-7.
    PotLimit,
    /// R-BET-8.
    HalfPotLimit,
    /// R-BET-6: small bet for rounds before `big_bet_from_round`, big bet after.
    FixedLimit { small_bet_cents: Cents, big_bet_cents: Cents, max_raises: u8, heads_up_uncapped: bool },
    /// R-BET-9: bet/raise sizes within `min..=max`; optionally a larger maximum on the last round.
    /// `max_raises` caps the bets and raises of a round like fixed limit (the seeds: "fixed limit
    /// and spread limit games cap the number of raises"); 0 is no cap (tables recorded before).
    SpreadLimit {
        min_bet_cents: Cents,
        max_bet_cents: Cents,
        last_round_max_bet_cents: Option<Cents>,
        #[serde(default)]
        max_raises: u8,
    },
    /// R-BET-10: no-limit (or pot-limit) play with a per-player cap on the hand total.
    CapLimit { pot_limit: bool, cap_cents: Cents },
}

impl BettingStructure {
    /// R-BET-6, R-BET-9: the cap of a round's bets and raises, `(bet and raises allowed,
    /// heads-up exception)`, for the structures that have one.
    pub fn raise_cap(&self) -> Option<(u8, bool)> {
        match self {
            BettingStructure::FixedLimit { max_raises, heads_up_uncapped, .. } => Some((*max_raises, *heads_up_uncapped)),
            BettingStructure::SpreadLimit { max_raises, .. } if *max_raises > 0 => Some((*max_raises, true)),
            _ => None,
        }
    }
}

/// R-BET-11: which all-in raises reopen the betting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IncompleteRaiseRule {
    /// An all-in short of a full raise does not reopen (default NL/PL).
    FullBet,
    /// An all-in of at least half a bet counts as a full raise (option for limit games).
    HalfBet,
}

/// R-STAKE-1 / R-MARK-3.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum StakesMode {
    TableStakes,
    /// Private games: IOUs with acceptance, cash buys at any time (R-MARK-3, R-MARK-4).
    OpenStakes {
        iou_auto_accept_below_cents: Cents,
        /// R-MARK-2 within open stakes, seeds 000: casinos let players buy chips during a hand
        /// "but never to borrow money or use IOUs". Default true (R-MARK-3); false refuses every
        /// IOU and loan (`IOU_NOT_ALLOWED`) while cash buys stay open (R-MARK-4).
        #[serde(default = "StakesMode::ious_allowed_by_default")]
        ious_allowed: bool,
    },
}

impl StakesMode {
    /// Open stakes take IOUs unless the table says otherwise (R-MARK-3).
    pub const fn ious_allowed_by_default() -> bool {
        true
    }
}

/// R-POST-4: where a straddle may be posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StraddlePolicy {
    None,
    UnderTheGun,
    UnderTheGunOrButton,
}

/// R-POST-6: kill blind size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KillPolicy {
    /// 2x the big blind, limits doubled.
    Full,
    /// 1.5x the big blind, limits x1.5.
    Half,
    /// The seeds' "any other amount per house rules": the kill blind is this percentage of the
    /// big blind (250: 2.5x), and the limits scale by the same factor. 101 to 1,000.
    HousePercent(u16),
}

/// R-POST-6: what makes a kill hand (either, or both; 0 is off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KillTrigger {
    /// A player who wins the whole of a hand's pots of at least this much.
    pub pot_at_least_cents: Cents,
    /// A player who wins this many hands in a row (each whole).
    pub pots_in_a_row: u8,
}

impl KillPolicy {
    /// R-POST-6: a house kill blind raises the stakes (more than the big blind) and stays
    /// bounded (R-UNIT-1).
    pub const HOUSE_PERCENT_MIN: u16 = 101;
    pub const HOUSE_PERCENT_MAX: u16 = 1_000;

    /// (numerator, denominator) of the scale factor.
    pub fn factor(self) -> (Cents, Cents) {
        match self {
            KillPolicy::Full => (2, 1),
            KillPolicy::Half => (3, 2),
            KillPolicy::HousePercent(percent) => (Cents::from(percent), 100),
        }
    }
}

/// R-POST-4: how large the next raise is after a straddle (or a sleeper).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum StraddleRaise {
    /// The next raise is a full straddle (RULES.md default: 5/10 with a 20 straddle: to 40).
    #[default]
    FullStraddle,
    /// The seeds' house rule: the raise is the difference between the straddle and the big
    /// blind (5/10 with a 20 straddle: 10 more, to 30; "no need to double it to 40").
    DifferenceOverBigBlind,
}

/// R-POT-5: who receives the odd chip of a split.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum OddChipRule {
    /// The first winner clockwise from the button (RULES.md default for button games).
    #[default]
    ClockwiseFromButton,
    /// The dealer lists tied seats in the order the room gives odd chips (stud, which has no
    /// button: the high card by suit for the high half, the low card by suit for the low half);
    /// the first listed receives the odd chip.
    AsRanked,
}

/// The games a room spreads (RULES.md section 5). The game decides the order of action in
/// stud games (R-POST-5); everything else about a game is in the other fields of the
/// configuration (betting rounds, structure, blinds or bring-in, high-low).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Game {
    #[default]
    Holdem,
    /// 36 cards; the dealer ranks a flush above a full house.
    ShortDeckHoldem,
    Omaha,
    /// Omaha high-low, 8 or better (R-POT-5 halves).
    OmahaHiLo,
    SevenCardStud,
    /// Seven-card stud high-low, 8 or better.
    SevenCardStudHiLo,
    /// Seven-card stud, A-5 low: the highest up card brings in, the lowest showing hand acts first.
    Razz,
    /// 2-7 lowball, three draws (fixed limit): four betting rounds.
    DeuceToSevenTripleDraw,
    /// 2-7 lowball, one draw (no limit): two betting rounds.
    DeuceToSevenSingleDraw,
    /// Badugi, three draws: four betting rounds.
    Badugi,
}

impl Game {
    /// R-POST-5: stud games bring in by the up cards and act by the hand showing.
    pub fn up_card_order(self) -> Option<crate::stud::UpCardOrder> {
        match self {
            Game::SevenCardStud | Game::SevenCardStudHiLo => Some(crate::stud::UpCardOrder::HighHand),
            Game::Razz => Some(crate::stud::UpCardOrder::LowHand),
            _ => None,
        }
    }

    /// Draw games: a draw between betting rounds moves no chips.
    pub fn is_draw(self) -> bool {
        matches!(self, Game::DeuceToSevenTripleDraw | Game::DeuceToSevenSingleDraw | Game::Badugi)
    }
}

/// R-POST-3 button policy: where the button and blinds go when players leave (the seeds' three
/// rulesets, 000 and 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ButtonPolicy {
    /// The button moves on to the next dealt player, the blinds are the next two; a blind the
    /// rotation skips is missed and owed by nobody.
    Simplified,
    /// The seeds' moving button: Simplified's rotation, but a blind the rotation skips is paid
    /// by the player it skipped "as if they were due for the upcoming hand, with one blind paid
    /// per player, per hand, biggest blind first"; every missed blind is live.
    Moving,
    /// The big blind moves on one seat a hand; the small blind and the button may be dead.
    Dead,
}

/// R-STAKE-3 / R-CHIP-2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuyInLimits {
    pub min_cents: Cents,
    pub max_cents: Cents,
    /// One short buy-in per session (option of R-STAKE-3), at least this much.
    pub short_buy_min_cents: Option<Cents>,
    /// Buy-ins at or above this need a supervisor's id (R-CHIP-2, default $10,000).
    pub supervisor_threshold_cents: Cents,
}

/// R-REBUY-1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RebuyPolicy {
    /// Default 60 minutes.
    pub wait_window_ms: i64,
    /// Tolerance in basis points below the amount left with (default 0).
    pub tolerance_bps: i64,
    /// A second seat in the same game and limits (default refused). When a room allows it,
    /// leaving one of the seats binds the others for the window: each is dealt in again only
    /// with a stack of at least the amount left with.
    #[serde(default)]
    pub allow_second_seat: bool,
}

impl RebuyPolicy {
    /// The wait a departure from a table of this policy records: (window ms, tolerance bps).
    pub fn wait(&self) -> (i64, i64) {
        (self.wait_window_ms, self.tolerance_bps)
    }
}

/// R-RAKE-1 / R-RAKE-3: one fee type per table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum FeePolicy {
    NoFee,
    Rake {
        /// Basis points: 1000 = 10%.
        percent_bps: i64,
        increment_cents: Cents,
        cap_cents: Cents,
        no_flop_no_drop: bool,
        min_pot_cents: Cents,
    },
    TimeCollection { fee_cents: Cents, interval_minutes: u32 },
    /// R-RAKE-1 as the dealer reports it: at settlement the dealer states the rake the room
    /// took (at most `cap_cents`, never from uncalled chips), e.g. a hand history recorded
    /// by a card room. No report means no rake. With `no_flop_no_drop` (the default, R-RAKE-1)
    /// a hand that ended before the flop is not raked; a card room's history whose rake was
    /// taken regardless sets it off.
    Reported {
        cap_cents: Cents,
        #[serde(default = "FeePolicy::no_flop_no_drop_by_default")]
        no_flop_no_drop: bool,
    },
}

impl FeePolicy {
    /// R-RAKE-1: "no flop, no drop (default on)".
    pub fn no_flop_no_drop_by_default() -> bool {
        true
    }
}

/// R-RAKE-2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JackpotDrop {
    pub amount_cents: Cents,
    /// Only when the pot (after rake) is at least this.
    pub min_pot_cents: Cents,
}

/// R-KITTY-1: where the kitty left at the end of the game goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum KittyLeftover {
    /// Shared equally among the players still seated (whole minimum chips; odd chips to the
    /// lowest seats): the kitty is the players' money.
    #[default]
    SplitAmongSeated,
    /// To the dealers' toke box.
    ToDealers,
    /// To the house (`house/kitty-expenses`), e.g. for the next game's supplies.
    ToHouse,
}

/// R-KITTY-1: which winners give the kitty its chip.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum KittyFrom {
    /// Only the main pot, from its first winner (tables configured before the choice existed
    /// keep it: a stored configuration without `from` reads as this).
    #[default]
    MainPot,
    /// Every pot, main and side, at least `min_pot_cents`: one chip from the pot's first winner
    /// (RULES.md: "the winner of a pot"; the wire's default).
    EachPot,
    /// Every winner of every such pot, one chip each (the seeds: players contribute "when they
    /// win a pot", a split pot's winners each won it).
    EachWinner,
}

/// R-KITTY-1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KittyPolicy {
    /// The winner of a pot at least this large contributes one minimum playable chip.
    pub min_pot_cents: Cents,
    /// What happens to the kitty at the end of the game.
    #[serde(default)]
    pub leftover: KittyLeftover,
    /// Which pots and which of their winners contribute.
    #[serde(default)]
    pub from: KittyFrom,
}

/// Everything that varies from table to table. `version` increases on each change; every
/// event of the table is judged under `TableState::config.version` (R-AUDIT-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableConfig {
    pub version: u32,
    /// Game and limits, e.g. "NLHE 1/2". Scope of the re-buy wait (R-REBUY-1).
    pub game_key: String,
    pub chip_set: ChipSet,
    pub betting: BettingStructure,
    pub incomplete_raise_rule: IncompleteRaiseRule,
    /// Betting rounds per hand: 4 for hold'em/Omaha, 5 for seven-card stud.
    pub betting_rounds: u8,
    /// Fixed limit: rounds with index >= this use the big bet (2 for hold'em and stud).
    pub big_bet_from_round: u8,
    /// Blinds in posting order: small, big, optional third. Empty for stud.
    pub blinds_cents: Vec<Cents>,
    pub ante_cents: Cents,
    pub button_ante: bool,
    /// Minimum opening bet (NL/PL: the big blind).
    pub min_bet_cents: Cents,
    /// Stud bring-in (R-POST-5).
    pub bring_in_cents: Option<Cents>,
    pub straddle: StraddlePolicy,
    pub kill: Option<KillPolicy>,
    /// R-POST-6, the seeds (001 Persian: "a kill hand begins when a player wins a pot of a
    /// predetermined amount, and also when a player wins a given number of hands in a row; the
    /// player who causes the kill must post a kill blind"): with a trigger the kill is owed by
    /// that player in the next hand, before anyone acts, and nobody else posts one. Without (the
    /// default) a kill is posted at will.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill_trigger: Option<KillTrigger>,
    pub button_policy: ButtonPolicy,
    pub stakes: StakesMode,
    pub buy_in: BuyInLimits,
    pub rebuy: RebuyPolicy,
    pub fee: FeePolicy,
    pub jackpot_drop: Option<JackpotDrop>,
    pub kitty: Option<KittyPolicy>,
    /// R-TIP-1 cap per tip.
    pub tip_cap_cents: Cents,
    /// R-STAKE-2, the seeds' exception ("except small amounts for refreshments, tips, etc."):
    /// chips a seated player may take off the table between hands, in all, per session at the
    /// seat (to the pocket). 0 (the default): none; anything else is ratholing.
    #[serde(default)]
    pub refreshment_allowance_cents: Cents,
    /// R-STAKE-5.
    pub cash_in_play_allowed: bool,
    /// High-low split games (R-POT-5).
    pub hi_lo: bool,
    pub max_seats: u8,
    /// R-BET-7 option "assumed call" (pot limit, default off): the first preflop raiser's
    /// maximum counts the small blind as called (at most four big blinds).
    #[serde(default)]
    pub pot_limit_assumed_call: bool,
    /// The game (stud order of action, R-POST-5). Older configurations are hold'em.
    #[serde(default)]
    pub game: Game,
    /// R-POST-1 option: the big blind posts the whole table's ante (`ante_cents`, one amount),
    /// first, then the blind; it goes whole into the main pot.
    #[serde(default)]
    pub big_blind_ante: bool,
    /// Every ante goes whole into the main pot, whoever is all in for less (a hand history's
    /// `ante_trimming_status = false`). Default: antes are layered like bets (R-POT-3).
    #[serde(default)]
    pub antes_to_main_pot: bool,
    /// R-POST-4: the next raise after a straddle or sleeper.
    #[serde(default)]
    pub straddle_raise: StraddleRaise,
    /// R-POST-4: a sleeper blind may be posted (from a seat other than under the gun).
    #[serde(default)]
    pub sleeper_allowed: bool,
    /// R-POST-4, the seeds: the player left of a straddler may re-straddle (twice the last);
    /// "most card rooms allow no more than one re-straddle". At most 8.
    #[serde(default = "TableConfig::seeds_max_restraddles")]
    pub max_restraddles: u8,
    /// R-POT-5: who receives the odd chip of a split.
    #[serde(default)]
    pub odd_chip: OddChipRule,
    /// R-POST-2 option: a single blind (`blinds_cents = [0, big]`) is posted by the button,
    /// which then acts last (short-deck ante games); by default the seat left of the button.
    #[serde(default)]
    pub button_blind: bool,
    /// R-POST-2, the seeds' three-blind structure: "the first blind goes on the button", the
    /// second and third to its left. By default (RULES.md) the small blind is left of the button
    /// and the third blind left of the big blind.
    #[serde(default)]
    pub first_blind_on_button: bool,
    /// R-POST-5, the seeds: two equal up cards on third street tie for the bring-in; "the high
    /// card by suit order can be used to break ties, but more often the person closest to the
    /// dealer in order of rotation pays the bring in" (Kazakh and Persian alike). Default
    /// (RULES.md): by suit. On: the tied player first clockwise from the dealer's left brings
    /// in (razz too, where the highest card brings in).
    #[serde(default)]
    pub bring_in_ties_by_position: bool,
    /// R-BET-6, the seeds (000 English and Kazakh, 001 Persian): "in seven-card stud, with a
    /// face-up pair on fourth street, players may choose the small or the big bet". While any
    /// live player's up cards show a pair on fourth street, a bet or raise may be the big bet;
    /// once one is, the round's raises are big bets. RULES.md is silent; the seven-card stud
    /// preset turns it on (the seeds give it as that game's rule), stud high-low and razz
    /// leave it off; tables recorded before it read off.
    #[serde(default)]
    pub open_pair_big_bet: bool,
    /// R-BET-6, the heads-up exception to the raise cap (fixed limit's `heads_up_uncapped`,
    /// spread limit's cap). Default (RULES.md, seeds 002 Russian: "в любое время, когда действие
    /// становится хедз-апом до того, как рейз был ограничен"): whenever two players are left
    /// before the cap is reached. On, seeds 000 Kazakh and 001 Persian: only "тіксіз раунд
    /// басталғанда екі ойыншының қолында болғанда" ("when two players are in the hand at the
    /// start of the betting round"); a round that starts with more stays capped.
    #[serde(default)]
    pub heads_up_from_round_start: bool,
    /// R-BET-2: a player who checked may raise later in the same round (check-raise). Seeds
    /// 002 (Russian): "Чек-рейз разрешен во всех играх, за исключением некоторых форм лоубола"
    /// ("check-raise is allowed in all games except some forms of lowball"). Default on; off,
    /// a player who checked may only call or fold in that round (`CHECK_RAISE_NOT_ALLOWED`).
    #[serde(default = "TableConfig::check_raise_allowed_by_default")]
    pub check_raise_allowed: bool,
    /// R-BET-11 option, the card rooms' rule: in no limit and pot limit, several all-ins each
    /// short of a full raise that leave a player who already acted facing at least a full raise
    /// in all reopen the betting to that player. Default off (RULES.md and the seeds' full bet
    /// rule, 000 English: "if the amount of an all in raise is less than the full amount of the
    /// previous raise, it does not constitute a 'real' raise, and therefore does not reopen the
    /// betting action": such a player may only call or fold, `RAISE_NOT_REOPENED`). Limit games
    /// count short all-ins from the full level already (R-BET-12). Tables recorded before the
    /// option read on, as their hands were judged.
    #[serde(default = "TableConfig::short_all_ins_add_up_when_not_recorded")]
    pub short_all_ins_add_up: bool,
    /// R-BET-7 / R-BET-8 option, the seeds (001 Persian: "in some cash games ... if an illegal
    /// bet amount is not challenged by a player before any further action, the bet stands"): a
    /// pot-limit or half-pot-limit bet or raise above the maximum is recorded as it stood (the
    /// dealer records the amount the table let stand; one challenged is recorded at the maximum,
    /// the excess returned). Default off: above the maximum is refused.
    #[serde(default)]
    pub overbet_stands_unchallenged: bool,
    /// R-UNIT-2 option, the seeds (001 Persian: "such games usually have a betting unit, the
    /// smallest amount one can bet in; $20 and $40 games commonly have a $5 unit, so every bet
    /// is a multiple of $5"): bets and raises are multiples of this, a multiple of the minimum
    /// playable chip (posts, antes and the rake stay in playable chips). Absent: the minimum
    /// playable chip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub betting_unit_cents: Option<Cents>,
    /// R-POST-3 option, the seeds' house rule (000: "some house rules allow posting one blind
    /// per hand, largest first, meaning all posts of missed blinds are live"): a returning
    /// player posts the missed big blind (`MissedBigBlind`) and, in a later hand, the missed
    /// small blind (`MissedSmallBlind`), both live. By default (RULES.md) both at once, the big
    /// blind live and the small blind dead (`MissedSmallBlindDead`).
    #[serde(default)]
    pub missed_blinds_one_per_hand: bool,
    /// R-POST-7 option, the seeds (000: "some cardrooms require players in the big blind
    /// position to have at least enough chips to cover the small blind (and ante if applicable)
    /// in order to be dealt in"): the deal is refused (`BIG_BLIND_SHORT`) until that player
    /// re-buys or is left out. By default a short big blind is all in for what it has.
    #[serde(default)]
    pub big_blind_covers_small_blind: bool,
    /// R-POST-4 option, the seeds (000, 001: "a straddle or sleeper blind counts as a raise
    /// toward the cap, or is counted separately, which raises the first round's maximum"): a
    /// straddle or sleeper is not counted toward the raise cap of a limit round. By default it
    /// counts as a raise.
    #[serde(default)]
    pub straddle_outside_raise_cap: bool,
    /// R-POST-4 option, the seeds' Mississippi straddle ("may be posted by any player, depending
    /// on house rules"): the first straddle may come from any dealt seat but a blind, and acts
    /// last. By default under the gun, or the button with `UnderTheGunOrButton`.
    #[serde(default)]
    pub straddle_any_position: bool,
    /// R-POST-4 option, the seeds' common Mississippi variant ("play starts to the left of the
    /// big blind and skips over the straddler, who acts last"): preflop the action starts left
    /// of the big blind whatever seat the first straddle came from, and the straddler acts
    /// after every other player's first action. By default it starts left of the straddle.
    #[serde(default)]
    pub straddle_action_from_big_blind: bool,
    /// R-POST-4 option, the seeds' Mississippi straddle ("must be at least a minimum raise"): in
    /// no limit a straddle may be more than twice the bet. By default exactly twice.
    #[serde(default)]
    pub straddle_at_least: bool,
    /// R-POST-4 option, the seeds' mandatory straddle ("house rules can make the straddle
    /// mandatory with a marker called the rock"): the player holding the rock posts a live
    /// straddle of twice the big blind when under the gun (`ROCK_STRADDLE_NOT_POSTED` until
    /// then); the winner of the next pot takes the rock, a split pot's to the winner nearest
    /// clockwise from the holder. By default a straddle is voluntary.
    #[serde(default)]
    pub mandatory_straddle: bool,
    /// R-POST-1 option, the seeds (000 and 001: where the dealer "provides the ante for each
    /// player", a player who misses their turn to deal "can be given a special button
    /// indicating the need to pay an ante to the pot ... upon their return"): with a button
    /// ante, a seated player absent when the button reaches or passes their seat owes the
    /// table's ante of that hand (`SeatState::missed_button_ante_cents`) and posts it
    /// (`MissedButtonAnte`, dead, whole into the main pot) before anyone acts in the first hand
    /// they are dealt back in. By default (tables opened before it too) nothing is owed, and a
    /// dead button's ante is posted by the player before the first blind.
    #[serde(default)]
    pub missed_button_ante_owed: bool,
    /// R-POST-3 option, the seeds (000: "when a player immediately takes the place of a player
    /// who leaves, the player may have the option to either pay the blinds in the leaving
    /// player's stead, in which case play continues as if the player never left, or to 'sit
    /// out'"): a newcomer who takes a seat a player in the game just left (no hand dealt since,
    /// the leaver owing nothing) owes no entry post: dealt in, it posts the blinds that fall on
    /// the seat and plays on; not dealt in, it misses them as a returning player does. By
    /// default (RULES.md, tables opened before it too) it posts a live big blind to be dealt in.
    #[serde(default)]
    pub newcomer_takes_over_blinds: bool,
}

/// R-REBUY-1: which tables are "the same game and limits", for the re-buy wait and one seat per
/// game. Taken from what the table plays (the game, the betting structure and its amounts, the
/// blinds, the bring-in, high-low, table or open stakes), not from its label: no spelling of `game_key` ("NLHE
/// 100/200", "nlhe 1/2 ", a look-alike letter) takes a table out of its game's scope or puts it
/// in another's. Antes, rake, buy-in limits and the chip set do not make another game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SameGame<'c> {
    key: String,
    /// The key as recorded before the structure was named by its play (a cap, a spread limit up
    /// to the largest buy-in, a limit game's bets never or always big).
    legacy: Option<String>,
    label: &'c str,
}

impl SameGame<'_> {
    /// What a patron's stream records for a seat taken or left at the table (`JoinedTable`,
    /// `LeftTable`, `MovedTable`), e.g. "holdem no limit blinds 100/200".
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether a game recorded on a patron's stream is this one: its key, or the table's label,
    /// which streams recorded before the key existed, unless the label reads as a key (the
    /// stakes pass: a PLO table labelled "holdem no limit blinds 100/200" was bound by the no
    /// limit game's departures).
    pub fn holds(&self, recorded: &str) -> bool {
        recorded == self.key
            || self.legacy.as_deref() == Some(recorded)
            || (recorded == self.label && ![" no limit", " pot limit", " limit "].iter().any(|structure| recorded.contains(structure)))
    }
}

impl TableConfig {
    /// The game and limits this table plays (R-REBUY-1), see [`SameGame`].
    pub fn same_game(&self) -> SameGame<'_> {
        // Omaha or stud with the high-low flag is the high-low game (the flag had made "omaha
        // ... hi-lo" another game than "omaha hi-lo": a way around the wait).
        let game = match self.game {
            Game::Holdem => "holdem",
            Game::ShortDeckHoldem => "short deck holdem",
            Game::Omaha | Game::OmahaHiLo if self.splits_low() => "omaha hi-lo",
            Game::Omaha | Game::OmahaHiLo => "omaha",
            Game::SevenCardStud | Game::SevenCardStudHiLo if self.splits_low() => "seven card stud hi-lo",
            Game::SevenCardStud | Game::SevenCardStudHiLo => "seven card stud",
            Game::Razz => "razz",
            Game::DeuceToSevenTripleDraw => "2-7 triple draw",
            Game::DeuceToSevenSingleDraw => "2-7 single draw",
            Game::Badugi => "badugi",
        };
        // A spelling of the structure departures and seats recorded before may carry, when the
        // key now names the structure by its play.
        let mut spelled = None;
        let structure = match &self.betting {
            BettingStructure::NoLimit => format!("{game} no limit"),
            BettingStructure::PotLimit => format!("{game} pot limit"),
            BettingStructure::HalfPotLimit => format!("{game} half pot limit"),
            BettingStructure::FixedLimit { small_bet_cents, big_bet_cents, .. } => {
                // Named by the bets it plays: a big bet from a round the game never reaches is no
                // big bet, and one from the first round leaves no small bet (the stakes pass:
                // limit 100/400000 with the big bet from round 9 of 4 played 100/100 flat and
                // was "another game" than 100/100). An open pair, where the table allows its big
                // bet, may bet big on fourth street (the option, not the game's name: razz with
                // the big bet from round 5 of 5 played flat, the fixes' pass).
                // The option plays only in a stud game that reaches fourth street with the big bet
                // still to come (the fixes' pass: set at hold'em, or at one round of stud, it
                // kept a flat game's big bet in its name).
                let open_pair = self.open_pair_big_bet && self.game.up_card_order().is_some() && self.betting_rounds >= 2 && self.big_bet_from_round > 1;
                let small = if self.big_bet_from_round == 0 { *big_bet_cents } else { *small_bet_cents };
                let big = if self.big_bet_from_round >= self.betting_rounds && !open_pair { *small_bet_cents } else { *big_bet_cents };
                let key = format!("{game} limit {small}/{big}");
                let written = format!("{game} limit {small_bet_cents}/{big_bet_cents}");
                if written != key {
                    spelled = Some(written);
                }
                key
            }
            BettingStructure::SpreadLimit { min_bet_cents, max_bet_cents, last_round_max_bet_cents, .. } => {
                // A last round's maximum equal to the others' changes no play.
                let last = last_round_max_bet_cents
                    .filter(|last| last != max_bet_cents)
                    .map(|last| format!(" last round {last}"))
                    .unwrap_or_default();
                let written = format!("{game} spread limit {min_bet_cents}-{max_bet_cents}{last}");
                // Bets up to a big-bet game's stack in every round (R-STAKE-3's no-limit maximum
                // buy-in, 100 big blinds, or 100 of its minimum bets without blinds): a big-bet game, no
                // limit for the wait, as a cap game is (the stakes pass: spread limit $2 to $10
                // million was "another game" than no limit $1/$2, and a patron who left with
                // $200 came back for $40). By the blinds, never by the table's buy-in limits,
                // which make no other game (the fixes' pass). A spread of one amount is that
                // amount's fixed limit.
                // Without blinds, by the spread's own minimum, which is in its name (the table's
                // minimum bet is not: the fixes' pass made one spread two games with it).
                let unit = if self.has_blinds() { self.big_blind_cents() } else { *min_bet_cents };
                let big_bet = unit.saturating_mul(100);
                let last_max = last_round_max_bet_cents.unwrap_or(*max_bet_cents);
                if *max_bet_cents >= big_bet && last_max >= big_bet {
                    spelled = Some(written);
                    format!("{game} no limit")
                } else if min_bet_cents == max_bet_cents && last_max == *max_bet_cents {
                    spelled = Some(written);
                    format!("{game} limit {min_bet_cents}/{min_bet_cents}")
                } else {
                    written
                }
            }
            // A cap game is its big-bet game for the wait, whatever the cap (the stakes pass: a
            // $1 billion cap no stack reaches made "another game" of no limit $1/$2, and a
            // patron who left with $200 came back for $40).
            BettingStructure::CapLimit { pot_limit, .. } => format!("{game} {}", if *pot_limit { "pot limit" } else { "no limit" }),
        };
        // What follows the structure in the key.
        let mut rest = String::new();
        // Blinds of nothing are no blinds (a stud table with blinds of 0/0 had made another game),
        // and a single blind is one blind however it is written (0/200, 200 and 0/0/200 had been
        // three games: the second stakes pass).
        if self.has_blinds() {
            let blinds: Vec<String> = if self.single_blind() {
                vec![self.big_blind_cents().to_string()]
            } else {
                self.blinds_cents.iter().map(Cents::to_string).collect()
            };
            rest.push_str(&format!(" blinds {}", blinds.join("/")));
        }
        if let Some(bring_in) = self.bring_in_cents {
            rest.push_str(&format!(" bring-in {bring_in}"));
        }
        if self.hi_lo && self.game == Game::Holdem {
            rest.push_str(" hi-lo");
        }
        if matches!(self.stakes, StakesMode::OpenStakes { .. }) {
            rest.push_str(" open stakes");
        }
        // Departures and seats recorded before, with the cap in the key, still count.
        let legacy = match &self.betting {
            BettingStructure::CapLimit { cap_cents, .. } => Some(format!("{structure} cap {cap_cents}{rest}")),
            _ => spelled.map(|spelled| spelled + &rest),
        };
        SameGame { key: structure + &rest, legacy, label: &self.game_key }
    }

    /// R-POT-5: each pot is halved between the best high and the best qualifying low: the
    /// high-low games, or a game the table flags high-low. Elsewhere no low is ranked.
    pub fn splits_low(&self) -> bool {
        self.hi_lo || matches!(self.game, Game::OmahaHiLo | Game::SevenCardStudHiLo)
    }

    fn base(game_key: &str, betting: BettingStructure, small_blind_cents: Cents, big_blind_cents: Cents) -> TableConfig {
        TableConfig {
            version: 1,
            game_key: game_key.to_string(),
            chip_set: ChipSet::standard(),
            betting,
            incomplete_raise_rule: IncompleteRaiseRule::FullBet,
            betting_rounds: 4,
            big_bet_from_round: 2,
            blinds_cents: vec![small_blind_cents, big_blind_cents],
            ante_cents: 0,
            button_ante: false,
            min_bet_cents: big_blind_cents,
            bring_in_cents: None,
            straddle: StraddlePolicy::UnderTheGun,
            kill: None,
            kill_trigger: None,
            button_policy: ButtonPolicy::Dead,
            stakes: StakesMode::TableStakes,
            buy_in: BuyInLimits {
                min_cents: 20 * big_blind_cents,
                max_cents: 100 * big_blind_cents,
                short_buy_min_cents: None,
                supervisor_threshold_cents: 1_000_000,
            },
            rebuy: RebuyPolicy { wait_window_ms: 60 * 60 * 1000, tolerance_bps: 0, allow_second_seat: false },
            fee: FeePolicy::Rake {
                percent_bps: 1000,
                increment_cents: 100,
                cap_cents: 500,
                no_flop_no_drop: true,
                min_pot_cents: 0,
            },
            jackpot_drop: None,
            kitty: None,
            tip_cap_cents: 2_500,
            refreshment_allowance_cents: 0,
            cash_in_play_allowed: false,
            hi_lo: false,
            max_seats: 10,
            pot_limit_assumed_call: false,
            game: Game::Holdem,
            big_blind_ante: false,
            antes_to_main_pot: false,
            straddle_raise: StraddleRaise::FullStraddle,
            sleeper_allowed: false,
            odd_chip: OddChipRule::ClockwiseFromButton,
            button_blind: false,
            first_blind_on_button: false,
            missed_blinds_one_per_hand: false,
            big_blind_covers_small_blind: false,
            straddle_outside_raise_cap: false,
            straddle_any_position: false,
            straddle_action_from_big_blind: false,
            straddle_at_least: false,
            mandatory_straddle: false,
            missed_button_ante_owed: false,
            newcomer_takes_over_blinds: false,
            max_restraddles: TableConfig::seeds_max_restraddles(),
            bring_in_ties_by_position: false,
            open_pair_big_bet: false,
            heads_up_from_round_start: false,
            check_raise_allowed: TableConfig::check_raise_allowed_by_default(),
            short_all_ins_add_up: false,
            overbet_stands_unchallenged: false,
            betting_unit_cents: None,
        }
    }

    /// Check-raise is allowed in every game unless a table says otherwise (R-BET-2).
    pub const fn check_raise_allowed_by_default() -> bool {
        true
    }

    /// A table recorded before `short_all_ins_add_up` existed: judged as it was, short all-ins
    /// adding up to a full raise reopening the betting.
    pub const fn short_all_ins_add_up_when_not_recorded() -> bool {
        true
    }

    /// The seeds' limit: one re-straddle after the straddle.
    pub const fn seeds_max_restraddles() -> u8 {
        1
    }

    /// No-limit hold'em, e.g. `no_limit_holdem(100, 200)` for $1/$2 (buy-in $40..$200).
    pub fn no_limit_holdem(small_blind_cents: Cents, big_blind_cents: Cents) -> TableConfig {
        let key = format!("NLHE {small_blind_cents}/{big_blind_cents}");
        TableConfig::base(&key, BettingStructure::NoLimit, small_blind_cents, big_blind_cents)
    }

    /// Pot-limit hold'em.
    pub fn pot_limit_holdem(small_blind_cents: Cents, big_blind_cents: Cents) -> TableConfig {
        let key = format!("PLHE {small_blind_cents}/{big_blind_cents}");
        TableConfig::base(&key, BettingStructure::PotLimit, small_blind_cents, big_blind_cents)
    }

    /// Pot-limit Omaha.
    pub fn pot_limit_omaha(small_blind_cents: Cents, big_blind_cents: Cents) -> TableConfig {
        let key = format!("PLO {small_blind_cents}/{big_blind_cents}");
        let mut c = TableConfig::base(&key, BettingStructure::PotLimit, small_blind_cents, big_blind_cents);
        // R-REBUY-1: Omaha, not hold'em: "the same game" is what a table plays (the night's pass
        // found the preset playing hold'em under a PLO key, one game with pot-limit hold'em).
        c.game = Game::Omaha;
        c.max_seats = 9;
        c
    }

    /// Half-pot limit hold'em (R-BET-8).
    pub fn half_pot_limit_holdem(small_blind_cents: Cents, big_blind_cents: Cents) -> TableConfig {
        let key = format!("HPLHE {small_blind_cents}/{big_blind_cents}");
        TableConfig::base(&key, BettingStructure::HalfPotLimit, small_blind_cents, big_blind_cents)
    }

    /// Cap-limit no-limit hold'em (R-BET-10).
    pub fn cap_limit_holdem(small_blind_cents: Cents, big_blind_cents: Cents, cap_cents: Cents) -> TableConfig {
        let key = format!("CAP {small_blind_cents}/{big_blind_cents} cap {cap_cents}");
        let betting = BettingStructure::CapLimit { pot_limit: false, cap_cents };
        TableConfig::base(&key, betting, small_blind_cents, big_blind_cents)
    }

    /// Fixed-limit hold'em `small_bet/big_bet`, blinds half and one small bet, cap `max_raises`
    /// (3 or 4) raises after the bet, heads-up exception on, half bet rule (R-BET-6, R-BET-12).
    pub fn fixed_limit_holdem(small_bet_cents: Cents, big_bet_cents: Cents, max_raises: u8) -> TableConfig {
        let key = format!("LHE {small_bet_cents}/{big_bet_cents}");
        let betting =
            BettingStructure::FixedLimit { small_bet_cents, big_bet_cents, max_raises, heads_up_uncapped: true };
        // The small blind is half a small bet in whole chips, as rooms post it ($3/$6: $1/$3,
        // $4/$8: $2/$4), and at least one chip (R-UNIT-2).
        let chip = ChipSet::standard().min_playable_chip_cents;
        let small_blind_cents = (small_bet_cents / 2 - (small_bet_cents / 2) % chip).max(chip.min(small_bet_cents));
        let mut c = TableConfig::base(&key, betting, small_blind_cents, small_bet_cents);
        c.incomplete_raise_rule = IncompleteRaiseRule::HalfBet;
        c.buy_in.min_cents = 10 * big_bet_cents;
        c.buy_in.max_cents = 100 * big_bet_cents;
        c
    }

    /// Fixed-limit hold'em with a kill blind (R-POST-6).
    pub fn fixed_limit_holdem_kill(small_bet_cents: Cents, big_bet_cents: Cents, kill: KillPolicy) -> TableConfig {
        let mut c = TableConfig::fixed_limit_holdem(small_bet_cents, big_bet_cents, 3);
        c.kill = Some(kill);
        c.game_key.push_str(" kill");
        c
    }

    /// Spread-limit hold'em, e.g. $1-$5 with $10 on the end.
    pub fn spread_limit_holdem(
        small_blind_cents: Cents,
        big_blind_cents: Cents,
        min_bet_cents: Cents,
        max_bet_cents: Cents,
        last_round_max_bet_cents: Option<Cents>,
    ) -> TableConfig {
        let key = format!("SPREAD {min_bet_cents}-{max_bet_cents}");
        // The seeds' cap: a bet and three raises, as in fixed limit.
        let betting = BettingStructure::SpreadLimit { min_bet_cents, max_bet_cents, last_round_max_bet_cents, max_raises: 3 };
        let mut c = TableConfig::base(&key, betting, small_blind_cents, big_blind_cents);
        c.min_bet_cents = min_bet_cents;
        c.incomplete_raise_rule = IncompleteRaiseRule::HalfBet;
        c
    }

    /// Seven-card stud: antes, bring-in, five rounds, small bet on 3rd and 4th street.
    pub fn seven_card_stud(ante_cents: Cents, bring_in_cents: Cents, small_bet_cents: Cents, big_bet_cents: Cents) -> TableConfig {
        let key = format!("STUD {small_bet_cents}/{big_bet_cents}");
        let betting =
            BettingStructure::FixedLimit { small_bet_cents, big_bet_cents, max_raises: 3, heads_up_uncapped: true };
        let mut c = TableConfig::base(&key, betting, 0, small_bet_cents);
        c.blinds_cents = Vec::new();
        c.ante_cents = ante_cents;
        c.bring_in_cents = Some(bring_in_cents);
        c.min_bet_cents = small_bet_cents;
        c.betting_rounds = 5;
        c.big_bet_from_round = 2;
        c.straddle = StraddlePolicy::None;
        c.incomplete_raise_rule = IncompleteRaiseRule::HalfBet;
        c.buy_in.min_cents = 10 * big_bet_cents;
        c.buy_in.max_cents = 100 * big_bet_cents;
        c.max_seats = 8;
        c.game = Game::SevenCardStud;
        c.odd_chip = OddChipRule::AsRanked;
        c.open_pair_big_bet = true;
        c
    }

    /// Seven-card stud high-low, 8 or better (R-POT-5 halves).
    pub fn seven_card_stud_hi_lo(ante_cents: Cents, bring_in_cents: Cents, small_bet_cents: Cents, big_bet_cents: Cents) -> TableConfig {
        let mut c = TableConfig::seven_card_stud(ante_cents, bring_in_cents, small_bet_cents, big_bet_cents);
        c.game_key = format!("STUD8 {small_bet_cents}/{big_bet_cents}");
        c.game = Game::SevenCardStudHiLo;
        c.hi_lo = true;
        c.open_pair_big_bet = false;
        c
    }

    /// Razz: seven-card stud for the A-5 low; the highest up card brings in (R-POST-5).
    pub fn razz(ante_cents: Cents, bring_in_cents: Cents, small_bet_cents: Cents, big_bet_cents: Cents) -> TableConfig {
        let mut c = TableConfig::seven_card_stud(ante_cents, bring_in_cents, small_bet_cents, big_bet_cents);
        c.game_key = format!("RAZZ {small_bet_cents}/{big_bet_cents}");
        c.game = Game::Razz;
        c.open_pair_big_bet = false;
        c
    }

    /// Fixed-limit Omaha high-low, 8 or better: blinds half and one small bet, four rounds.
    pub fn omaha_hi_lo(small_bet_cents: Cents, big_bet_cents: Cents) -> TableConfig {
        let mut c = TableConfig::fixed_limit_holdem(small_bet_cents, big_bet_cents, 3);
        c.game_key = format!("O8 {small_bet_cents}/{big_bet_cents}");
        c.game = Game::OmahaHiLo;
        c.hi_lo = true;
        c
    }

    /// No-limit short-deck hold'em (36 cards; the dealer ranks the hands).
    pub fn short_deck_holdem(small_blind_cents: Cents, big_blind_cents: Cents) -> TableConfig {
        let mut c = TableConfig::no_limit_holdem(small_blind_cents, big_blind_cents);
        c.game_key = format!("NLSD {small_blind_cents}/{big_blind_cents}");
        c.game = Game::ShortDeckHoldem;
        c
    }

    /// 2-7 triple draw, fixed limit: four betting rounds (before the first draw and after each
    /// of three), the big bet from the third; six seats.
    pub fn deuce_to_seven_triple_draw(small_bet_cents: Cents, big_bet_cents: Cents) -> TableConfig {
        let mut c = TableConfig::fixed_limit_holdem(small_bet_cents, big_bet_cents, 3);
        c.game_key = format!("27TD {small_bet_cents}/{big_bet_cents}");
        c.game = Game::DeuceToSevenTripleDraw;
        c.max_seats = 6;
        c
    }

    /// 2-7 single draw, no limit: two betting rounds; six seats.
    pub fn deuce_to_seven_single_draw(small_blind_cents: Cents, big_blind_cents: Cents) -> TableConfig {
        let mut c = TableConfig::no_limit_holdem(small_blind_cents, big_blind_cents);
        c.game_key = format!("27SD {small_blind_cents}/{big_blind_cents}");
        c.game = Game::DeuceToSevenSingleDraw;
        c.betting_rounds = 2;
        c.max_seats = 6;
        c
    }

    /// Badugi, fixed limit, three draws: four betting rounds; six seats.
    pub fn badugi(small_bet_cents: Cents, big_bet_cents: Cents) -> TableConfig {
        let mut c = TableConfig::fixed_limit_holdem(small_bet_cents, big_bet_cents, 3);
        c.game_key = format!("BADUGI {small_bet_cents}/{big_bet_cents}");
        c.game = Game::Badugi;
        c.max_seats = 6;
        c
    }

    /// R-UNIT-2: what bets and raises are multiples of (the betting unit, or the minimum
    /// playable chip).
    pub fn betting_unit(&self) -> Cents {
        self.betting_unit_cents.unwrap_or(self.chip_set.min_playable_chip_cents)
    }

    /// `amount_cents` rounded down to whole betting units.
    pub fn floor_to_unit(&self, amount_cents: Cents) -> Cents {
        amount_cents - amount_cents.rem_euclid(self.betting_unit())
    }

    /// R-POST-2: a game with blinds; blinds of nothing are none (a stud table with blinds of 0/0
    /// is a game without blinds).
    pub fn has_blinds(&self) -> bool {
        self.blinds_cents.iter().any(|blind| *blind > 0)
    }

    /// R-POST-2: one blind only, the last amount listed, left of the button (no small blind:
    /// fewer than two blinds, or a first blind of nothing).
    pub fn single_blind(&self) -> bool {
        self.blinds_cents.len() < 2 || self.blinds_cents[0] <= 0
    }

    pub fn big_blind_cents(&self) -> Cents {
        self.blinds_cents.last().copied().unwrap_or(self.min_bet_cents)
    }

    /// R-POST-3: missed blinds are paid one a hand, the biggest first, all live: the seeds'
    /// house rule (`missed_blinds_one_per_hand`), and always under the seeds' moving button.
    pub fn one_missed_blind_per_hand(&self) -> bool {
        self.missed_blinds_one_per_hand || self.button_policy == ButtonPolicy::Moving
    }

    pub fn is_limit(&self) -> bool {
        matches!(self.betting, BettingStructure::FixedLimit { .. } | BettingStructure::SpreadLimit { .. })
    }

    /// Every amount of the configuration, named, and whether it is paid in chips (posts, bet
    /// limits, buy-in limits, fees: whole minimum playable chips, R-UNIT-2). One list for the two
    /// checks of [`TableConfig::validate`]: every amount bounded (R-UNIT-1), chip amounts whole.
    /// Returns the first amount, in this order, for which `hit(amount, paid_in_chips)` holds;
    /// the amounts are walked, not collected (no allocation per table opened).
    fn find_amount(&self, mut hit: impl FnMut(Cents, bool) -> bool) -> Option<(&'static str, Cents)> {
        const CHIPS: bool = true;
        macro_rules! amount {
            ($name:expr, $amount:expr, $chips:expr) => {{
                let (name, amount): (&'static str, Cents) = ($name, $amount);
                if hit(amount, $chips) {
                    return Some((name, amount));
                }
            }};
        }
        for (index, blind) in self.blinds_cents.iter().enumerate() {
            amount!(["small_blind_cents", "big_blind_cents", "third_blind_cents"][index.min(2)], *blind, CHIPS);
        }
        amount!("ante_cents", self.ante_cents, CHIPS);
        amount!("min_bet_cents", self.min_bet_cents, CHIPS);
        if let Some(bring_in) = self.bring_in_cents {
            amount!("bring_in_cents", bring_in, CHIPS);
        }
        match &self.betting {
            BettingStructure::FixedLimit { small_bet_cents, big_bet_cents, .. } => {
                amount!("small_bet_cents", *small_bet_cents, CHIPS);
                amount!("big_bet_cents", *big_bet_cents, CHIPS);
            }
            BettingStructure::SpreadLimit { min_bet_cents, max_bet_cents, last_round_max_bet_cents, .. } => {
                amount!("spread_min_bet_cents", *min_bet_cents, CHIPS);
                amount!("spread_max_bet_cents", *max_bet_cents, CHIPS);
                if let Some(last) = last_round_max_bet_cents {
                    amount!("last_round_max_bet_cents", *last, CHIPS);
                }
            }
            BettingStructure::CapLimit { cap_cents, .. } => amount!("cap_cents", *cap_cents, CHIPS),
            BettingStructure::NoLimit | BettingStructure::PotLimit | BettingStructure::HalfPotLimit => {}
        }
        amount!("buy_in_min_cents", self.buy_in.min_cents, CHIPS);
        amount!("buy_in_max_cents", self.buy_in.max_cents, CHIPS);
        if let Some(short) = self.buy_in.short_buy_min_cents {
            amount!("short_buy_min_cents", short, CHIPS);
        }
        amount!("supervisor_threshold_cents", self.buy_in.supervisor_threshold_cents, !CHIPS);
        amount!("tip_cap_cents", self.tip_cap_cents, !CHIPS);
        amount!("refreshment_allowance_cents", self.refreshment_allowance_cents, !CHIPS);
        if let Some(unit) = self.betting_unit_cents {
            amount!("betting_unit_cents", unit, !CHIPS);
        }
        if let Some(trigger) = &self.kill_trigger {
            amount!("kill_pot_at_least_cents", trigger.pot_at_least_cents, !CHIPS);
        }
        for denomination in &self.chip_set.denominations_cents {
            amount!("denomination_cents", *denomination, !CHIPS);
        }
        match &self.fee {
            FeePolicy::Rake { increment_cents, cap_cents, min_pot_cents, .. } => {
                amount!("rake_increment_cents", *increment_cents, CHIPS);
                amount!("rake_cap_cents", *cap_cents, CHIPS);
                amount!("rake_min_pot_cents", *min_pot_cents, !CHIPS);
            }
            FeePolicy::TimeCollection { fee_cents, .. } => amount!("time_fee_cents", *fee_cents, CHIPS),
            FeePolicy::Reported { cap_cents, .. } => amount!("reported_rake_cap_cents", *cap_cents, !CHIPS),
            FeePolicy::NoFee => {}
        }
        if let Some(drop) = &self.jackpot_drop {
            amount!("jackpot_drop_cents", drop.amount_cents, CHIPS);
            amount!("jackpot_min_pot_cents", drop.min_pot_cents, !CHIPS);
        }
        if let Some(kitty) = &self.kitty {
            amount!("kitty_min_pot_cents", kitty.min_pot_cents, !CHIPS);
        }
        if let StakesMode::OpenStakes { iou_auto_accept_below_cents, .. } = &self.stakes {
            amount!("iou_auto_accept_below_cents", *iou_auto_accept_below_cents, !CHIPS);
        }
        None
    }

    pub fn validate(&self) -> Result<(), Rejection> {
        self.chip_set.validate()?;
        let bad = |rule: &'static str, what: &str| Err(Rejection::new(invalid_config(rule), what.to_string()));
        // R-UNIT-1: every amount is bounded, so no product or sum of them can wrap (a kill
        // blind is 2x, a button ante 10x, a buy-in limit 100x a blind).
        if let Some((name, out)) = self.find_amount(|a, _| !(0..=crate::money::MAX_AMOUNT_CENTS).contains(&a)) {
            return Err(Rejection::new(invalid_config("R-UNIT-1"), format!("{name} {out} is not between 0 and the amount bound"))
                .with("amount_cents", out)
                .with("max_amount_cents", crate::money::MAX_AMOUNT_CENTS));
        }
        if self.max_seats == 0 || self.max_seats as usize > crate::MAX_SEATS {
            return bad("R-UNIT-2", "max_seats must be 1..=10");
        }
        if self.betting_rounds == 0 || self.betting_rounds > 8 {
            return bad("R-BET-1", "betting_rounds must be 1..=8");
        }
        if self.min_bet_cents <= 0 || self.blinds_cents.iter().any(|b| *b < 0) || self.ante_cents < 0 {
            return bad("R-BET-3", "forced bets must be non-negative and the minimum bet positive");
        }
        if self.buy_in.min_cents <= 0 || self.buy_in.max_cents < self.buy_in.min_cents {
            return bad("R-STAKE-3", "buy-in limits must satisfy 0 < min <= max");
        }
        // A short buy-in is below the minimum and something (a short buy-in of nothing, or above
        // the minimum, is no short buy-in: the stakes pass).
        if self.buy_in.short_buy_min_cents.is_some_and(|short| short <= 0 || short >= self.buy_in.min_cents) {
            return Err(Rejection::new(invalid_config("R-STAKE-3"), "a short buy-in must satisfy 0 < short < min")
                .with("short_buy_min_cents", self.buy_in.short_buy_min_cents.unwrap_or(0))
                .with("min_buy_in_cents", self.buy_in.min_cents));
        }
        if self.blinds_cents.len() > 3 {
            return bad("R-POST-2", "at most three blinds");
        }
        if self.blinds_cents.windows(2).any(|pair| pair[1] < pair[0]) {
            return bad("R-POST-2", "blinds in order: small <= big <= third");
        }
        // A blind of nothing first makes a single-blind game: blinds after it but the last
        // would never be posted (the stakes pass: 0/100/200 opened as a 1/2 game and played a
        // single $2 blind).
        if self.blinds_cents.first().is_some_and(|first| *first == 0) && self.blinds_cents.iter().filter(|b| **b > 0).count() > 1 {
            return bad("R-POST-2", "a blind of 0 first makes a single-blind game: 0/200, or the blinds without the 0");
        }
        if let Some(unit) = self.betting_unit_cents {
            if unit <= 0 || !self.chip_set.is_playable(unit) {
                return bad("R-UNIT-2", "a betting unit is a positive multiple of the minimum playable chip");
            }
            // The sizes bets are made of are whole units, so every legal bet can be made.
            let sizes = match &self.betting {
                BettingStructure::FixedLimit { small_bet_cents, big_bet_cents, .. } => [*small_bet_cents, *big_bet_cents],
                BettingStructure::SpreadLimit { min_bet_cents, max_bet_cents, .. } => [*min_bet_cents, *max_bet_cents],
                _ => [self.big_blind_cents(), self.min_bet_cents],
            };
            if sizes.iter().any(|size| size % unit != 0) {
                return bad("R-UNIT-2", "the bet sizes (big blind and minimum bet, or the limits) are whole betting units");
            }
        }
        // A kill scales the sizes, and its blind is the big blind scaled: the kill hand's sizes
        // and its blind are whole betting units (or minimum chips), so every bet can be made (a
        // half kill of $7.50 with $1 chips left the next player no raise: the betting pass).
        if let Some(KillPolicy::HousePercent(percent)) = self.kill
            && !(KillPolicy::HOUSE_PERCENT_MIN..=KillPolicy::HOUSE_PERCENT_MAX).contains(&percent)
        {
            return Err(Rejection::new(invalid_config("R-POST-6"), "a house kill blind is more than the big blind and at most ten times it")
                .with("kill_percent", Cents::from(percent))
                .with("min_percent", Cents::from(KillPolicy::HOUSE_PERCENT_MIN))
                .with("max_percent", Cents::from(KillPolicy::HOUSE_PERCENT_MAX)));
        }
        if let Some((num, den)) = self.kill.map(KillPolicy::factor) {
            let unit = self.betting_unit_cents.unwrap_or(self.chip_set.min_playable_chip_cents).max(1);
            let sizes = match &self.betting {
                BettingStructure::FixedLimit { small_bet_cents, big_bet_cents, .. } => [*small_bet_cents, *big_bet_cents, self.big_blind_cents()],
                BettingStructure::SpreadLimit { min_bet_cents, max_bet_cents, .. } => [*min_bet_cents, *max_bet_cents, self.big_blind_cents()],
                _ => [self.big_blind_cents(), self.min_bet_cents, self.big_blind_cents()],
            };
            if let Some(size) = sizes.iter().find(|size| *size * num % den != 0 || *size * num / den % unit != 0) {
                return Err(Rejection::new(invalid_config("R-POST-6"), "the kill hand's bet sizes and its blind are whole betting units or minimum chips")
                    .with("size_cents", *size)
                    .with("kill_size_cents", *size * num / den)
                    .with("unit_cents", unit));
            }
        }
        // R-POST-6: the kill blind is a blind, posted beside the blinds (the seeds' kill games are
        // blind games; a stud bring-in has no place for it).
        if self.kill.is_some() && (self.bring_in_cents.is_some() || self.blinds_cents.iter().all(|b| *b <= 0)) {
            return bad("R-POST-6", "a kill game is a game with blinds");
        }
        if let Some(trigger) = &self.kill_trigger
            && (self.kill.is_none() || trigger.pot_at_least_cents < 0 || (trigger.pot_at_least_cents == 0 && trigger.pots_in_a_row == 0))
        {
            return bad("R-POST-6", "a kill trigger needs a kill blind and a pot amount or a number of pots in a row");
        }
        if self.max_restraddles > 8 {
            return bad("R-POST-4", "at most 8 re-straddles");
        }
        if self.mandatory_straddle && (self.straddle == StraddlePolicy::None || self.bring_in_cents.is_some() || self.blinds_cents.len() < 2) {
            return bad("R-POST-4", "a mandatory straddle (the rock) is a straddle under the gun in a game with blinds: allow straddles");
        }
        match &self.betting {
            BettingStructure::FixedLimit { small_bet_cents, big_bet_cents, max_raises, .. }
                if (*small_bet_cents <= 0 || *big_bet_cents < *small_bet_cents || !(1..=10).contains(max_raises)) => {
                    return bad("R-BET-6", "fixed limit needs 0 < small bet <= big bet and 1..=10 raises");
                }
            BettingStructure::SpreadLimit { min_bet_cents, max_bet_cents, max_raises, .. }
                if (*min_bet_cents <= 0 || *max_bet_cents < *min_bet_cents || *max_raises > 10) => {
                    return bad("R-BET-9", "spread limit needs 0 < min <= max and at most 10 raises (0: no cap)");
                }
            BettingStructure::CapLimit { cap_cents, .. }
                if *cap_cents <= 0 => {
                    return bad("R-BET-10", "cap must be positive");
                }
            _ => {}
        }
        if self.missed_button_ante_owed && !self.button_ante {
            return bad("R-POST-1", "a missed button ante is owed only at a table with a button ante");
        }
        if self.button_ante && self.big_blind_ante {
            return bad("R-POST-1", "one ante form: a button ante or a big-blind ante, not both");
        }
        if self.game.up_card_order().is_some() && self.bring_in_cents.is_none() {
            return bad("R-POST-5", "a stud game brings in: set bring_in_cents");
        }
        // A bring-in is a stud game's (R-POST-5), high-low a game with a high hand to halve
        // (R-POT-5): set elsewhere they changed no play, only the game's name, and so made a
        // table of the same game another game for the re-buy wait (the stakes pass).
        if self.bring_in_cents.is_some() && self.game.up_card_order().is_none() {
            return bad("R-POST-5", "a bring-in belongs to a stud game");
        }
        if self.hi_lo && !matches!(self.game, Game::Holdem | Game::Omaha | Game::OmahaHiLo | Game::SevenCardStud | Game::SevenCardStudHiLo) {
            return bad("R-POT-5", "high-low is played in hold'em, Omaha and seven-card stud; this game is a low game or has no low");
        }
        if let FeePolicy::Reported { cap_cents, .. } = &self.fee
            && *cap_cents < 0 {
                return bad("R-RAKE-1", "a reported rake needs a non-negative cap");
            }
        if let FeePolicy::Rake { percent_bps, increment_cents, cap_cents, .. } = &self.fee
            && (!(0..=10_000).contains(percent_bps) || *increment_cents <= 0 || *cap_cents < 0) {
                return Err(Rejection::new(invalid_config("R-RAKE-1"), "rake needs 0..=10000 bps, a positive increment and a non-negative cap")
                    .with("percent_bps", i64::from(*percent_bps))
                    .with("increment_cents", *increment_cents)
                    .with("cap_cents", *cap_cents));
            }
        // R-RAKE-3: time is a fee per interval paid in advance; an interval of nothing let the
        // same seat pay again and again (the rake pass). Rooms collect every 15 minutes to 2 hours.
        if let FeePolicy::TimeCollection { interval_minutes, .. } = &self.fee
            && !(MIN_TIME_INTERVAL_MINUTES..=MAX_TIME_INTERVAL_MINUTES).contains(interval_minutes)
        {
            return Err(Rejection::new(invalid_config("R-RAKE-3"), "time is collected every 15 to 240 minutes")
                .with("interval_minutes", i64::from(*interval_minutes))
                .with("min_interval_minutes", i64::from(MIN_TIME_INTERVAL_MINUTES))
                .with("max_interval_minutes", i64::from(MAX_TIME_INTERVAL_MINUTES)));
        }
        self.validate_whole_chips()?;
        self.validate_rebuy()?;
        self.validate_control_bounds()
    }

    /// The controls a table may only tighten ([`MAX_SUPERVISOR_THRESHOLD_CENTS`],
    /// [`MAX_TIP_CAP_CENTS`], [`MAX_REFRESHMENT_ALLOWANCE_CENTS`]).
    fn validate_control_bounds(&self) -> Result<(), Rejection> {
        let bounds = [
            ("supervisor_threshold_cents", self.buy_in.supervisor_threshold_cents, MAX_SUPERVISOR_THRESHOLD_CENTS, "R-CHIP-2", "large buy-ins need a supervisor from $10,000 at the most"),
            ("tip_cap_cents", self.tip_cap_cents, MAX_TIP_CAP_CENTS, "R-TIP-1", "a tip is de minimis: the cap per tip is $100 at the most"),
            ("refreshment_allowance_cents", self.refreshment_allowance_cents, MAX_REFRESHMENT_ALLOWANCE_CENTS, "R-STAKE-2", "the refreshment allowance is a small amount: $100 a session at the most"),
        ];
        match bounds.into_iter().find(|(_, value, max, _, _)| value > max) {
            Some((name, value, max, rule, what)) => Err(Rejection::new(invalid_config(rule), format!("{what}; the room's bound, not the table's"))
                .with(name, value)
                .with("max_cents", max)),
            None => Ok(()),
        }
    }

    /// R-UNIT-2: every post, bet limit, buy-in limit and fee of the table is a whole number of
    /// minimum playable chips (the chip antes, blinds, rake and collection are paid in).
    fn validate_whole_chips(&self) -> Result<(), Rejection> {
        let chip = self.chip_set.min_playable_chip_cents;
        if let Some((name, amount)) = self.find_amount(|amount, chips| chips && !self.chip_set.is_playable(amount)) {
            return Err(Rejection::new(
                INVALID_CONFIG,
                format!("{name} {amount} is not a whole number of minimum playable chips of {chip}"),
            )
            .with(name, amount)
            .with("min_playable_chip_cents", chip));
        }
        Ok(())
    }

    /// R-REBUY-1: the wait window within [`MIN_REBUY_WAIT_WINDOW_MS`]..=[`MAX_REBUY_WAIT_WINDOW_MS`],
    /// the tolerance within 0..=[`MAX_REBUY_TOLERANCE_BPS`].
    fn validate_rebuy(&self) -> Result<(), Rejection> {
        let RebuyPolicy { wait_window_ms, tolerance_bps, .. } = self.rebuy.clone();
        if !(MIN_REBUY_WAIT_WINDOW_MS..=MAX_REBUY_WAIT_WINDOW_MS).contains(&wait_window_ms) {
            return Err(Rejection::new(
                INVALID_REBUY_POLICY,
                "the re-buy wait window must be 30 to 120 minutes (rooms may not switch it off per table)",
            )
            .with("wait_window_ms", wait_window_ms)
            .with("min_wait_window_ms", MIN_REBUY_WAIT_WINDOW_MS)
            .with("max_wait_window_ms", MAX_REBUY_WAIT_WINDOW_MS));
        }
        if !(0..=MAX_REBUY_TOLERANCE_BPS).contains(&tolerance_bps) {
            return Err(Rejection::new(INVALID_REBUY_POLICY, "the re-buy tolerance must be 0 to 20% (0 to 2000 bps)")
                .with("tolerance_bps", tolerance_bps)
                .with("max_tolerance_bps", MAX_REBUY_TOLERANCE_BPS));
        }
        Ok(())
    }
}
