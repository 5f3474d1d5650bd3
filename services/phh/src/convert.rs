//! A [`HandHistory`] as the rules-core commands that play it at a fresh table.
//!
//! The sequence is pure data (no state is consulted), so the same commands can be judged
//! offline ([`crate::replay`]) or sent to a server. Per hand:
//! 1. a cage opens with exactly the chips the table needs, the table opens with a
//!    replay configuration (below), and the cage fills the tray (R-CHIP-3);
//! 2. each PHH player `pN` sits at seat N and buys in with cash for the starting stack
//!    (the tray pays out the chips, the cash goes to the drop box);
//! 3. the hand starts; antes, then blinds/straddles are posted; every action follows in
//!    order; each `d db` (or a new stud street) starts the next betting round;
//! 4. unless the last fold settled the hand, the showdown reports the ranking computed
//!    with [`crate::hand_rank`]; the hand ends.
//!
//! Replay configuration: the rules crate's preset for the variant, with the hand's own
//! blinds, ante, bring-in and bet sizes; no rake, no jackpot drop, no kitty (the
//! recorded hands paid none); buy-in limits wide open (a history's stacks are facts,
//! not requests); and a minimum playable chip of `gcd(every amount, 100 cents)`, i.e.
//! one PHH unit when every amount is whole, so every recorded amount is legal (R-UNIT-2)
//! and split pots divide as finely as the PHH unit, like the recorded results.

use chipledger_rules::config::StraddlePolicy;
use chipledger_rules::{
    Action as BetAction, Actor, CageCommand, CageId, CageOp, ChipCount, ChipSet,
    Command, CommandContext, FeePolicy, FundsSource, PlayerId, PostKind, Role, Seat, TableCommand,
    TableConfig, TableId, TableOp,
};
use chipledger_rules::table::Signers;

use crate::Cents;
use crate::amount::CENTS_PER_UNIT;
use crate::history::{Action, HandHistory, MAX_PLAYERS, Player, Variant};
use crate::showdown::{Ending, ending};

/// Why a hand could not become commands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// A valid hand this conversion does not cover (the reason says what). Actions that
    /// break the rules are not caught here: they are converted as written and the rules
    /// core refuses them.
    #[error("{origin}: unsupported: {reason}")]
    Unsupported { origin: String, reason: String },
}

/// One command of the sequence, with the PHH line it comes from (if it is an action).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub context: CommandContext,
    pub command: Command,
    pub line: Option<u32>,
}

/// A hand converted: its table, the cage that funds it, and the steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    pub table_id: TableId,
    pub cage_id: CageId,
    /// Seat of each PHH player (`pN` sits at seat N).
    pub seats: Vec<Seat>,
    pub steps: Vec<Step>,
}

/// The commands that replay `hand`, each with its context (the contract shared with gRPC loading).
pub fn commands(hand: &HandHistory) -> Result<Vec<(CommandContext, Command)>, ConvertError> {
    Ok(convert(hand)?.steps.into_iter().map(|step| (step.context, step.command)).collect())
}

/// Converts a hand with its own table id (derived from the `hand` field or the origin).
pub fn convert(hand: &HandHistory) -> Result<Conversion, ConvertError> {
    let table_id = table_id_for(hand);
    convert_at(hand, table_id)
}

/// Converts a hand at the given table (ids of the cage and the players derive from it).
pub fn convert_at(hand: &HandHistory, table_id: TableId) -> Result<Conversion, ConvertError> {
    Converter::new(hand, table_id)?.run()
}

/// `phh-<hand>`, or `phh-<file stem>`, restricted to the id alphabet and length.
pub fn table_id_for(hand: &HandHistory) -> TableId {
    let name = match &hand.hand {
        Some(number) => number.clone(),
        None => {
            let stem = hand.origin.rsplit(['/', '\\']).next().unwrap_or(&hand.origin);
            stem.trim_end_matches(".phh").to_owned()
        }
    };
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' { c } else { '_' })
        .take(chipledger_rules::streams::MAX_ID_LEN - 8)
        .collect();
    TableId::new(format!("phh-{cleaned}")).unwrap_or_else(|_| TableId::new("phh-hand").expect("valid literal id"))
}

/// The minimum playable chip: the gcd of every amount and of one PHH unit (100 cents).
pub fn min_chip_cents(hand: &HandHistory) -> Cents {
    hand.amounts_cents().filter(|&amount| amount > 0).fold(CENTS_PER_UNIT, gcd)
}

fn gcd(a: Cents, b: Cents) -> Cents {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The table configuration for replaying `hand` (see the module docs).
pub fn replay_config(hand: &HandHistory) -> Result<TableConfig, String> {
    let n = hand.player_count();
    let blind = |i: usize| hand.blinds_or_straddles_cents.get(i).copied().unwrap_or(0);
    let ante = uniform_ante(hand)?;
    let mut config = match hand.variant {
        Variant::NoLimitHoldem => TableConfig::no_limit_holdem(blind(0), blind(1)),
        Variant::PotLimitOmaha => TableConfig::pot_limit_omaha(blind(0), blind(1)),
        Variant::FixedLimitHoldem => {
            let small = hand.small_bet_cents.ok_or("fixed limit without small_bet")?;
            let big = hand.big_bet_cents.ok_or("fixed limit without big_bet")?;
            // PHH fixed-limit games allow one bet and three raises per round.
            let mut config = TableConfig::fixed_limit_holdem(small, big, 3);
            config.blinds_cents = vec![blind(0), blind(1)];
            config
        }
        Variant::FixedLimitSevenCardStud => {
            let small = hand.small_bet_cents.ok_or("stud without small_bet")?;
            let big = hand.big_bet_cents.ok_or("stud without big_bet")?;
            let bring_in = hand.bring_in_cents.ok_or("stud without bring_in")?;
            TableConfig::seven_card_stud(ante, bring_in, small, big)
        }
    };
    if hand.variant.has_button() {
        if blind(1) == 0 {
            return Err("no big blind".to_owned());
        }
        if let Some(min_bet) = hand.min_bet_cents {
            config.min_bet_cents = min_bet;
        }
        let straddles = hand.blinds_or_straddles_cents.iter().skip(2).filter(|&&b| b > 0).count();
        config.straddle = if straddles == 0 { StraddlePolicy::None } else { StraddlePolicy::UnderTheGun };
    }
    config.ante_cents = ante;
    config.game_key = format!("PHH {} {}", hand.variant.code(), config.game_key);
    let chip = min_chip_cents(hand);
    config.chip_set = ChipSet { denominations_cents: vec![chip], min_playable_chip_cents: chip };
    config.fee = FeePolicy::NoFee;
    config.jackpot_drop = None;
    config.kitty = None;
    config.buy_in.min_cents = chip;
    config.buy_in.max_cents = chipledger_rules::money::MAX_AMOUNT_CENTS;
    config.max_seats = config.max_seats.max(n as u8);
    Ok(config)
}

/// The ante every player posts; PHH also allows big-blind or button antes, not replayed.
fn uniform_ante(hand: &HandHistory) -> Result<Cents, String> {
    let first = hand.antes_cents.first().copied().unwrap_or(0);
    if hand.antes_cents.iter().any(|&ante| ante != first) {
        return Err(format!("non-uniform antes {:?} (big-blind or button antes)", hand.antes_cents));
    }
    Ok(first)
}

/// Heads-up, PHH reverses the forced bets: the button (p2) posts index 0, the small blind.
fn effective(per_player: &[Cents]) -> Vec<Cents> {
    if per_player.len() == 2 { vec![per_player[1], per_player[0]] } else { per_player.to_vec() }
}

/// Replays the betting just enough to name each action (check or call, all in) and to
/// know whose chips are gone; the rules core judges everything again.
struct Shadow {
    stack_cents: [Cents; MAX_PLAYERS],
    round_cents: [Cents; MAX_PLAYERS],
    bet_to_cents: Cents,
}

struct Converter<'h> {
    hand: &'h HandHistory,
    table_id: TableId,
    cage_id: CageId,
    player_ids: Vec<PlayerId>,
    steps: Vec<Step>,
    shadow: Shadow,
}

const REPLAY_DAY: &str = "2019-07-11";

impl<'h> Converter<'h> {
    fn new(hand: &'h HandHistory, table_id: TableId) -> Result<Converter<'h>, ConvertError> {
        let cage_id = CageId::new(format!("{table_id}.cage"))
            .or_else(|_| CageId::new("phh-cage"))
            .map_err(|rejection| unsupported(hand, rejection.detail))?;
        let player_ids = (1..=hand.player_count())
            .map(|n| PlayerId::new(format!("{table_id}.p{n}")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|rejection| unsupported(hand, rejection.detail))?;
        let mut stack_cents = [0; MAX_PLAYERS];
        stack_cents[..hand.player_count()].copy_from_slice(&hand.starting_stacks_cents);
        Ok(Converter {
            hand,
            table_id,
            cage_id,
            player_ids,
            steps: Vec::with_capacity(hand.actions.len() + 4 * hand.player_count() + 8),
            shadow: Shadow { stack_cents, round_cents: [0; MAX_PLAYERS], bet_to_cents: 0 },
        })
    }

    fn run(mut self) -> Result<Conversion, ConvertError> {
        let hand = self.hand;
        let config = replay_config(hand).map_err(|reason| unsupported(hand, reason))?;
        // The showdown is decided up front: an unknown card needed there makes the hand unsupported.
        let ending = ending(hand).map_err(|reason| unsupported(hand, reason))?;
        self.open_and_fund(config);
        self.start_and_post();
        self.actions()?;
        if let Ending::Showdown { contenders } = ending {
            let mut ranked = contenders;
            ranked.sort_by_key(|contender| std::cmp::Reverse(contender.strength));
            let mut high: Vec<Vec<Seat>> = Vec::new();
            let mut previous = None;
            for contender in ranked {
                let seat = seat_of(contender.player);
                match high.last_mut() {
                    Some(group) if previous == Some(contender.strength) => group.push(seat),
                    _ => high.push(vec![seat]),
                }
                previous = Some(contender.strength);
            }
            self.table(TableOp::Showdown { high, low: None }, None, Role::Dealer);
        }
        self.table(TableOp::EndHand, None, Role::Dealer);
        Ok(Conversion {
            table_id: self.table_id,
            cage_id: self.cage_id,
            seats: (0..hand.player_count()).map(|i| seat_of(Player(i as u8))).collect(),
            steps: self.steps,
        })
    }

    fn context(&self, role: Role) -> CommandContext {
        let actor_id = match role {
            Role::Dealer => "phh-dealer",
            Role::Cage => "phh-cage-cashier",
            _ => "phh-floor",
        };
        CommandContext {
            at_unix_ms: 1_562_803_200_000 + self.steps.len() as i64,
            gaming_day: REPLAY_DAY.to_owned(),
            actor: Actor { id: actor_id.to_owned(), role },
        }
    }

    fn table(&mut self, op: TableOp, line: Option<u32>, role: Role) {
        let context = self.context(role);
        let command = Command::Table(TableCommand { table_id: self.table_id.clone(), op });
        self.steps.push(Step { context, command, line });
    }

    fn open_and_fund(&mut self, config: TableConfig) {
        let chip = config.chip_set.min_playable_chip_cents;
        let total_cents: Cents = self.hand.starting_stacks_cents.iter().sum();
        let chips = vec![ChipCount { denomination_cents: chip, count: total_cents / chip }];
        let supervisor_threshold_cents = config.buy_in.supervisor_threshold_cents;
        let context = self.context(Role::Cage);
        self.steps.push(Step {
            context,
            command: Command::Cage(CageCommand {
                cage_id: self.cage_id.clone(),
                op: CageOp::OpenCage { denominations_cents: vec![chip], chips: chips.clone(), cash_cents: 0 },
            }),
            line: None,
        });
        self.table(TableOp::OpenTable { config }, None, Role::FloorSupervisor);
        let signers = Signers { first: "phh-cage-cashier".to_owned(), second: "phh-floor".to_owned() };
        self.table(TableOp::Fill { cage_id: self.cage_id.clone(), slip_no: 1, chips, signers }, None, Role::Dealer);
        for (index, &amount_cents) in self.hand.starting_stacks_cents.iter().enumerate() {
            let seat = seat_of(Player(index as u8));
            let player_id = self.player_ids[index].clone();
            self.table(TableOp::SeatPlayer { seat, player_id: player_id.clone() }, None, Role::Dealer);
            let supervisor_id =
                (amount_cents >= supervisor_threshold_cents).then(|| "phh-floor".to_owned());
            self.table(
                TableOp::BuyIn { seat, player_id, amount_cents, source: FundsSource::Cash, supervisor_id, short_buy: false },
                None,
                Role::Dealer,
            );
        }
    }

    fn start_and_post(&mut self) {
        let hand = self.hand;
        let n = hand.player_count();
        let dealt_seats: Vec<Seat> = (0..n).map(|i| seat_of(Player(i as u8))).collect();
        // The button is the last player: the seat before the small blind, or (heads-up) the
        // small blind itself. Stud has no button; the last player is the dealer's right.
        let button_seat = seat_of(Player((n - 1) as u8));
        self.table(TableOp::StartHand { hand_no: 1, button_seat, dealt_seats }, None, Role::Dealer);
        let antes = effective(&hand.antes_cents);
        for (index, &ante) in antes.iter().enumerate() {
            if ante > 0 {
                self.post(Player(index as u8), PostKind::Ante, ante, false);
            }
        }
        if hand.variant.has_button() {
            let blinds = effective(&hand.blinds_or_straddles_cents);
            // Posting order: small blind, big blind, then straddles clockwise from UTG.
            let order: Vec<usize> = if n == 2 { vec![1, 0] } else { (0..n).collect() };
            for (position, &index) in order.iter().enumerate() {
                let amount = blinds[index];
                if amount == 0 {
                    continue;
                }
                let kind = match position {
                    0 => PostKind::SmallBlind,
                    1 => PostKind::BigBlind,
                    _ => PostKind::Straddle,
                };
                self.post(Player(index as u8), kind, amount, true);
            }
        }
    }

    fn post(&mut self, player: Player, kind: PostKind, nominal_cents: Cents, live: bool) {
        let i = player.index();
        let amount_cents = nominal_cents.min(self.shadow.stack_cents[i]);
        if amount_cents == 0 {
            return; // already all in (from the ante): nothing left to post
        }
        self.shadow.stack_cents[i] -= amount_cents;
        if live {
            self.shadow.round_cents[i] += amount_cents;
            self.shadow.bet_to_cents = self.shadow.bet_to_cents.max(self.shadow.round_cents[i]);
        }
        self.table(TableOp::Post { seat: seat_of(player), kind, amount_cents }, None, Role::Dealer);
    }

    fn actions(&mut self) -> Result<(), ConvertError> {
        let hand = self.hand;
        let stud = hand.variant == Variant::FixedLimitSevenCardStud;
        // A betting action seen since the last street began: the next deal starts a round.
        let mut betting_seen = false;
        let mut stud_street_pending = false;
        for entry in &hand.actions {
            let line = Some(entry.line);
            match entry.action {
                Action::DealBoard { .. } => {
                    self.next_round(None, line);
                    betting_seen = false;
                }
                Action::DealHole { .. } => {
                    if stud && betting_seen {
                        stud_street_pending = true;
                    }
                }
                Action::BringIn { player } => {
                    let bring_in = hand.bring_in_cents.unwrap_or(0);
                    self.post(player, PostKind::BringIn, bring_in, true);
                    betting_seen = true;
                }
                Action::Fold { player } => {
                    self.stud_street(&mut stud_street_pending, player, line);
                    self.act(player, BetAction::Fold, line);
                    betting_seen = true;
                }
                Action::CheckOrCall { player } => {
                    self.stud_street(&mut stud_street_pending, player, line);
                    let i = player.index();
                    let owe = (self.shadow.bet_to_cents - self.shadow.round_cents[i]).max(0);
                    let action = if owe == 0 { BetAction::Check } else { BetAction::Call };
                    let paid = owe.min(self.shadow.stack_cents[i]);
                    self.shadow.stack_cents[i] -= paid;
                    self.shadow.round_cents[i] += paid;
                    self.act(player, action, line);
                    betting_seen = true;
                }
                Action::CompleteBetOrRaiseTo { player, amount_cents: to_cents } => {
                    self.stud_street(&mut stud_street_pending, player, line);
                    let i = player.index();
                    let added = to_cents - self.shadow.round_cents[i];
                    let action = if added > 0 && added == self.shadow.stack_cents[i] {
                        BetAction::AllIn
                    } else if self.shadow.bet_to_cents == 0 {
                        BetAction::Bet { to_cents }
                    } else {
                        BetAction::Raise { to_cents }
                    };
                    // An impossible amount is passed on as written: the rules core refuses it.
                    self.shadow.stack_cents[i] -= added.clamp(0, self.shadow.stack_cents[i]);
                    self.shadow.round_cents[i] = self.shadow.round_cents[i].max(to_cents);
                    self.shadow.bet_to_cents = self.shadow.bet_to_cents.max(to_cents);
                    self.act(player, action, line);
                    betting_seen = true;
                }
                Action::StandPatOrDiscard { .. } => {
                    return Err(unsupported(hand, format!("line {}: draws are not replayed", entry.line)));
                }
                Action::ShowOrMuck { .. } => {} // ranked once the board is complete
            }
        }
        Ok(())
    }

    /// Stud: the first action after new cards opens the next street, that player first.
    fn stud_street(&mut self, pending: &mut bool, player: Player, line: Option<u32>) {
        if std::mem::take(pending) {
            self.next_round(Some(seat_of(player)), line);
        }
    }

    fn next_round(&mut self, first_to_act_seat: Option<Seat>, line: Option<u32>) {
        self.shadow.round_cents = [0; MAX_PLAYERS];
        self.shadow.bet_to_cents = 0;
        self.table(TableOp::NextRound { first_to_act_seat }, line, Role::Dealer);
    }

    fn act(&mut self, player: Player, action: BetAction, line: Option<u32>) {
        self.table(TableOp::Act { seat: seat_of(player), action }, line, Role::Dealer);
    }
}

/// `pN` sits at seat N.
pub fn seat_of(player: Player) -> Seat {
    player.0 + 1
}

fn unsupported(hand: &HandHistory, reason: String) -> ConvertError {
    ConvertError::Unsupported { origin: hand.origin.clone(), reason }
}
