//! A [`HandHistory`] as the rules-core commands that play it at a fresh table.
//!
//! The sequence is pure data (no state is consulted), so the same commands can be judged
//! offline ([`crate::replay`]) or sent to a server. Per hand:
//! 1. a cage opens with exactly the chips the table needs, the table opens with a
//!    replay configuration (below), and the cage fills the tray (R-CHIP-3);
//! 2. each PHH player `pN` sits at seat N and buys in with cash for the starting stack
//!    (the tray pays out the chips, the cash goes to the drop box); a stack the file gives
//!    as unknown (`inf`) buys in for enough to cover every bet of the hand, and is not
//!    compared at the end;
//! 3. the hand starts; antes (every player's, or the big blind's or the button's ante for
//!    the table, R-POST-1), then blinds and straddles are posted; every action follows in
//!    order; each `d db` (or a new stud street, or the betting after a draw) starts the next
//!    betting round. Stud up cards are reported to the core (`DealUpCards`) when the file
//!    shows every one of them, so the core itself names the bring-in and the first to act;
//! 4. unless the last fold settled the hand, the showdown reports the ranking computed with
//!    [`crate::hand_rank`] (a high and a low ranking in high-low games), or, where the cards
//!    cannot be ranked, the room's `winnings` as the dealer's award (`AwardPots`); with
//!    `winnings` or `rake` in the file the difference to the pots is the room's rake,
//!    reported at settlement (R-RAKE-1); the hand ends.
//!
//! Positions (PHH): `p1` is the small blind and the last player the button; heads-up the
//! forced bets are written reversed (PHH spec), and the player posting the smaller blind is
//! the button (blinds written big blind first, `[1, 0.50]`, are read the same way). A lone
//! blind (`[1, 0, ...]`) is a single blind left of the button. Stud has no button: the last
//! player sits at the dealer's right.
//!
//! Replay configuration: the rules crate's preset for the variant, with the hand's own
//! blinds, ante, bring-in and bet sizes; no rake unless the file reports one, no jackpot
//! drop, no kitty; buy-in limits wide open (a history's stacks are facts, not requests);
//! and a minimum playable chip of `gcd(every amount, 100 cents)`, i.e. one PHH unit when
//! every amount is whole, so every recorded amount is legal (R-UNIT-2) and split pots divide
//! as finely as the PHH unit, like the recorded results.

use chipledger_rules::cards::Card as RulesCard;
use chipledger_rules::config::StraddlePolicy;
use chipledger_rules::hand::{SeatAward, UpCard};
use chipledger_rules::table::Signers;
use chipledger_rules::{
    Action as BetAction, Actor, CageCommand, CageId, CageOp, ChipCount, ChipSet, Command, CommandContext, FeePolicy,
    FundsSource, PlayerId, PostKind, Role, Seat, TableCommand, TableConfig, TableId, TableOp,
};

use crate::Cents;
use crate::amount::CENTS_PER_UNIT;
use crate::card::{Card, Cards};
use crate::history::{Action, HandHistory, MAX_PLAYERS, Player, Variant};
use crate::showdown::{Contender, Ending, ending};

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
    /// Each player's expected final stack: from `finishing_stacks`, or else worked out from
    /// `winnings`; `None` where nothing is known (no such field, or an unknown stack).
    pub expected_finishing_cents: Option<Vec<Option<Cents>>>,
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

/// How the antes of a hand are posted (R-POST-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Antes {
    None,
    /// Every player the same ante.
    Uniform(Cents),
    /// One player posts the whole table's ante: the big blind, or the button.
    BigBlind { payer: Player, total_cents: Cents },
    Button { payer: Player, total_cents: Cents },
}

/// The forced bets of a button game: who posts what, and where the button is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Blinds {
    /// (small, big) nominal blinds of the configuration; small 0 for a single blind.
    config: Vec<Cents>,
    /// Posts in order: (player, kind, nominal amount).
    posts: Vec<(Player, PostKind, Cents)>,
    button: Player,
    /// A straddle from the button (Mississippi).
    button_straddle: bool,
    /// A lone blind posted by the button (short-deck ante games).
    button_blind: bool,
}

/// Per-player forced bets as posted (PHH writes them reversed heads-up).
fn effective(per_player: &[Cents]) -> Vec<Cents> {
    if per_player.len() == 2 { vec![per_player[1], per_player[0]] } else { per_player.to_vec() }
}

fn antes_of(hand: &HandHistory) -> Result<Antes, String> {
    let n = hand.player_count();
    let antes = effective(&hand.antes_cents);
    let first = antes[0];
    if antes.iter().all(|&a| a == first) {
        return Ok(if first == 0 { Antes::None } else { Antes::Uniform(first) });
    }
    let payers: Vec<usize> = (0..n).filter(|&i| antes[i] > 0).collect();
    let [payer] = payers[..] else {
        return Err(format!("antes {:?} are neither uniform nor one player's ante for the table", hand.antes_cents));
    };
    let total_cents = antes[payer];
    let blinds = blinds_of(hand)?;
    let big = blinds.posts.iter().find(|(_, kind, _)| *kind == PostKind::BigBlind).map(|(p, _, _)| *p);
    let payer = Player(payer as u8);
    if Some(payer) == big {
        Ok(Antes::BigBlind { payer, total_cents })
    } else if payer == blinds.button {
        if total_cents % n as Cents != 0 {
            return Err(format!("a button ante of {total_cents} cents does not divide among {n} players"));
        }
        Ok(Antes::Button { payer, total_cents })
    } else {
        Err(format!("an ante for the table posted by {payer}, neither the big blind nor the button"))
    }
}

fn blinds_of(hand: &HandHistory) -> Result<Blinds, String> {
    let n = hand.player_count();
    let raw = &hand.blinds_or_straddles_cents;
    if !hand.variant.has_button() {
        return Ok(Blinds { config: Vec::new(), posts: Vec::new(), button: Player((n - 1) as u8), button_straddle: false, button_blind: false });
    }
    if n == 2 {
        // PHH reverses heads-up: p1 posts index 1, p2 index 0. The smaller blind is the button's.
        let (p1, p2) = (raw[1], raw[0]);
        let (small, big, button) = match (p1, p2) {
            (0, 0) => return Ok(Blinds { config: Vec::new(), posts: Vec::new(), button: Player(1), button_straddle: false, button_blind: false }),
            (a, 0) => (None, (Player(0), a), Player(1)),
            (0, b) => (None, (Player(1), b), Player(0)),
            (a, b) if a > b => (Some((Player(1), b)), (Player(0), a), Player(1)),
            (a, b) if a < b => (Some((Player(0), a)), (Player(1), b), Player(0)),
            _ => return Err(format!("heads-up blinds {raw:?} of equal size: no small and big blind")),
        };
        let mut posts = Vec::new();
        posts.extend(small.map(|(p, a)| (p, PostKind::SmallBlind, a)));
        posts.push((big.0, PostKind::BigBlind, big.1));
        let config = vec![small.map_or(0, |(_, a)| a), big.1];
        return Ok(Blinds { config, posts, button, button_straddle: false, button_blind: false });
    }
    let button = Player((n - 1) as u8);
    let mut posts = Vec::new();
    // A lone blind on the button (short-deck ante games): the button acts last.
    if raw[..n - 1].iter().all(|&b| b == 0) && raw[n - 1] > 0 {
        posts.push((button, PostKind::BigBlind, raw[n - 1]));
        return Ok(Blinds { config: vec![0, raw[n - 1]], posts, button, button_straddle: false, button_blind: true });
    }
    let config = match (raw[0], raw[1]) {
        (0, 0) => Vec::new(),
        // A single blind left of the button.
        (single, 0) => {
            posts.push((Player(0), PostKind::BigBlind, single));
            vec![0, single]
        }
        // No small blind posted (a dead small blind): the big blind alone, in its seat.
        (0, big) => {
            posts.push((Player(1), PostKind::BigBlind, big));
            vec![big, big]
        }
        (small, big) => {
            posts.push((Player(0), PostKind::SmallBlind, small));
            posts.push((Player(1), PostKind::BigBlind, big));
            vec![small, big]
        }
    };
    let mut button_straddle = false;
    for (index, &amount) in raw.iter().enumerate().skip(2) {
        if amount > 0 {
            posts.push((Player(index as u8), PostKind::Straddle, amount));
            button_straddle |= index == n - 1 && raw[2..n - 1].iter().all(|&s| s == 0);
        }
    }
    Ok(Blinds { config, posts, button, button_straddle, button_blind: false })
}

/// The table configuration for replaying `hand` (see the module docs).
pub fn replay_config(hand: &HandHistory) -> Result<TableConfig, String> {
    let n = hand.player_count();
    let blinds = blinds_of(hand)?;
    let antes = antes_of(hand)?;
    let blind = |i: usize| blinds.config.get(i).copied().unwrap_or(0);
    let bets = || -> Result<(Cents, Cents), String> {
        let small = hand.small_bet_cents.ok_or("fixed limit without small_bet")?;
        let big = hand.big_bet_cents.ok_or("fixed limit without big_bet")?;
        Ok((small, big))
    };
    let stud = || -> Result<(Cents, Cents, Cents, Cents), String> {
        let (small, big) = bets()?;
        let bring_in = hand.bring_in_cents.ok_or("stud without bring_in")?;
        let Antes::Uniform(ante) = antes else { return Err("stud without a uniform ante".to_owned()) };
        Ok((ante, bring_in, small, big))
    };
    let mut config = match hand.variant {
        Variant::NoLimitHoldem => TableConfig::no_limit_holdem(blind(0), blind(1)),
        Variant::NoLimitShortDeckHoldem => TableConfig::short_deck_holdem(blind(0), blind(1)),
        Variant::PotLimitOmaha => TableConfig::pot_limit_omaha(blind(0), blind(1)),
        Variant::NoLimitDeuceToSevenSingleDraw => TableConfig::deuce_to_seven_single_draw(blind(0), blind(1)),
        Variant::FixedLimitHoldem => {
            let (small, big) = bets()?;
            // PHH fixed-limit games allow one bet and three raises per round.
            TableConfig::fixed_limit_holdem(small, big, 3)
        }
        Variant::FixedLimitOmahaHiLo => {
            let (small, big) = bets()?;
            TableConfig::omaha_hi_lo(small, big)
        }
        Variant::FixedLimitDeuceToSevenTripleDraw => {
            let (small, big) = bets()?;
            TableConfig::deuce_to_seven_triple_draw(small, big)
        }
        Variant::FixedLimitBadugi => {
            let (small, big) = bets()?;
            TableConfig::badugi(small, big)
        }
        Variant::FixedLimitSevenCardStud => {
            let (ante, bring_in, small, big) = stud()?;
            TableConfig::seven_card_stud(ante, bring_in, small, big)
        }
        Variant::FixedLimitSevenCardStudHiLo => {
            let (ante, bring_in, small, big) = stud()?;
            TableConfig::seven_card_stud_hi_lo(ante, bring_in, small, big)
        }
        Variant::FixedLimitRazz => {
            let (ante, bring_in, small, big) = stud()?;
            TableConfig::razz(ante, bring_in, small, big)
        }
    };
    if hand.variant.has_button() {
        config.blinds_cents = blinds.config.clone();
        if let Some(min_bet) = hand.min_bet_cents {
            config.min_bet_cents = min_bet;
        }
        let straddle_posts = blinds.posts.iter().filter(|(_, kind, _)| *kind == PostKind::Straddle).count();
        let straddles = straddle_posts > 0;
        // A recorded hand had the re-straddles its room allowed.
        config.max_restraddles = config.max_restraddles.max(u8::try_from(straddle_posts.saturating_sub(1)).unwrap_or(u8::MAX));
        config.straddle = match (straddles, blinds.button_straddle) {
            (false, _) => StraddlePolicy::None,
            (true, false) => StraddlePolicy::UnderTheGun,
            (true, true) => StraddlePolicy::UnderTheGunOrButton,
        };
        // One hand, no history: the blinds follow the button.
        config.button_policy = chipledger_rules::config::ButtonPolicy::Simplified;
        config.button_blind = blinds.button_blind;
    }
    match antes {
        Antes::None => config.ante_cents = 0,
        // `ante_trimming_status = false`: a short player's ante still earns every ante.
        Antes::Uniform(ante) => {
            config.ante_cents = ante;
            config.antes_to_main_pot = !hand.ante_trimming_status;
        }
        Antes::BigBlind { total_cents, .. } => {
            config.ante_cents = total_cents;
            config.big_blind_ante = true;
        }
        Antes::Button { total_cents, .. } => {
            config.ante_cents = total_cents / n as Cents;
            config.button_ante = true;
        }
    }
    config.game_key = format!("PHH {} {}", hand.variant.code(), config.game_key);
    let chip = min_chip_cents(hand);
    config.chip_set = ChipSet { denominations_cents: vec![chip], min_playable_chip_cents: chip };
    config.fee = if hand.winnings_cents.is_some() || hand.rake_cents.is_some() {
        // R-RAKE-1: the room's rake, as the file reports it, whether the hand saw a flop or not.
        FeePolicy::Reported { cap_cents: chipledger_rules::money::MAX_AMOUNT_CENTS, no_flop_no_drop: false }
    } else {
        FeePolicy::NoFee
    };
    config.jackpot_drop = None;
    config.kitty = None;
    config.buy_in.min_cents = chip;
    config.buy_in.max_cents = chipledger_rules::money::MAX_AMOUNT_CENTS;
    config.max_seats = config.max_seats.max(n as u8);
    Ok(config)
}

/// Replays the betting just enough to name each action (check or call, all in), to know
/// whose chips are gone, and what each player put in; the rules core judges everything again.
struct Shadow {
    stack_cents: [Cents; MAX_PLAYERS],
    round_cents: [Cents; MAX_PLAYERS],
    /// Everything each player put in this hand, and the part that goes whole to the main pot.
    hand_cents: [Cents; MAX_PLAYERS],
    dead_main_cents: [Cents; MAX_PLAYERS],
    bet_to_cents: Cents,
}

impl Shadow {
    /// The part of the largest contribution nobody matched (R-POT-4), and whose it is.
    fn uncalled(&self, players: usize) -> (Option<usize>, Cents) {
        let layered = |i: usize| self.hand_cents[i] - self.dead_main_cents[i];
        let Some(top) = (0..players).max_by_key(|&i| (layered(i), std::cmp::Reverse(i))) else { return (None, 0) };
        let second = (0..players).filter(|&i| i != top).map(layered).max().unwrap_or(0);
        (Some(top), (layered(top) - second).max(0))
    }
}

/// Stud streets as the dealer deals them: a street is complete when its last card is out.
#[derive(Default)]
struct StudStreets {
    /// Cards dealt to each player so far.
    cards: [usize; MAX_PLAYERS],
    /// The street being dealt (3..=7) and not yet opened for betting, if any.
    pending: Option<usize>,
    /// Up cards of the pending street.
    up: Vec<UpCard>,
    /// The last street opened (3 = third street, dealt with the hand).
    opened: usize,
}

struct Converter<'h> {
    hand: &'h HandHistory,
    table_id: TableId,
    cage_id: CageId,
    player_ids: Vec<PlayerId>,
    steps: Vec<Step>,
    shadow: Shadow,
    /// Starting stacks, with unknown ones made large enough to cover the hand.
    stacks_cents: Vec<Cents>,
    blinds: Blinds,
    antes: Antes,
    /// Stud: every up card is known, so the core is told them (R-POST-5).
    report_up_cards: bool,
    folded: [bool; MAX_PLAYERS],
}

const REPLAY_DAY: &str = "2019-07-11";

fn to_rules_card(card: Card) -> Option<RulesCard> {
    match card {
        Card::Known { .. } => card.to_string().parse().ok(),
        Card::Unknown => None,
    }
}

impl<'h> Converter<'h> {
    fn new(hand: &'h HandHistory, table_id: TableId) -> Result<Converter<'h>, ConvertError> {
        let cage_id = CageId::new(format!("{table_id}.cage"))
            .or_else(|_| CageId::new("phh-cage"))
            .map_err(|rejection| unsupported(hand, rejection.detail))?;
        let player_ids = (1..=hand.player_count())
            .map(|n| PlayerId::new(format!("{table_id}.p{n}")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|rejection| unsupported(hand, rejection.detail))?;
        let blinds = blinds_of(hand).map_err(|reason| unsupported(hand, reason))?;
        let antes = antes_of(hand).map_err(|reason| unsupported(hand, reason))?;
        let stacks_cents = covering_stacks(hand);
        let mut stack_cents = [0; MAX_PLAYERS];
        stack_cents[..hand.player_count()].copy_from_slice(&stacks_cents);
        let report_up_cards = hand.variant.is_stud() && stud_up_cards_known(hand);
        Ok(Converter {
            hand,
            table_id,
            cage_id,
            player_ids,
            steps: Vec::with_capacity(hand.actions.len() + 4 * hand.player_count() + 8),
            shadow: Shadow {
                stack_cents,
                round_cents: [0; MAX_PLAYERS],
                hand_cents: [0; MAX_PLAYERS],
                dead_main_cents: [0; MAX_PLAYERS],
                bet_to_cents: 0,
            },
            stacks_cents,
            blinds,
            antes,
            report_up_cards,
            folded: [false; MAX_PLAYERS],
        })
    }

    fn run(mut self) -> Result<Conversion, ConvertError> {
        let hand = self.hand;
        let config = replay_config(hand).map_err(|reason| unsupported(hand, reason))?;
        let antes_to_main = config.antes_to_main_pot;
        self.open_and_fund(config);
        self.start_and_post(antes_to_main);
        self.actions()?;
        let expected_finishing_cents = self.settle()?;
        self.table(TableOp::EndHand, None, Role::Dealer);
        Ok(Conversion {
            table_id: self.table_id,
            cage_id: self.cage_id,
            seats: (0..hand.player_count()).map(|i| seat_of(Player(i as u8))).collect(),
            steps: self.steps,
            expected_finishing_cents,
        })
    }

    /// The end of the hand: a ranking, or the room's award; and what each player should
    /// end with.
    fn settle(&mut self) -> Result<Option<Vec<Option<Cents>>>, ConvertError> {
        let hand = self.hand;
        let n = hand.player_count();
        let reported = hand.winnings_cents.is_some() || hand.rake_cents.is_some();
        let (returned_to, returned_cents) = self.shadow.uncalled(n);
        let contributed: Cents = self.shadow.hand_cents[..n].iter().sum();
        let pots_cents = contributed - returned_cents;
        if let Some(pots) = &hand.total_pot_amounts_cents {
            let recorded: Cents = pots.iter().sum();
            if recorded != pots_cents {
                return Err(unsupported(
                    hand,
                    format!("total_pot_amounts {pots:?} sum to {recorded} cents, the hand's pots to {pots_cents}"),
                ));
            }
        }
        let rake_cents = match (&hand.winnings_cents, hand.rake_cents) {
            (Some(winnings), rake) => {
                let collected: Cents = winnings.iter().sum();
                let implied = pots_cents - collected;
                if implied < 0 {
                    return Err(unsupported(hand, format!("winnings of {collected} cents exceed the pots of {pots_cents}")));
                }
                if let Some(rake) = rake
                    && rake != implied
                {
                    return Err(unsupported(hand, format!("rake {rake} cents, but pots less winnings leave {implied}")));
                }
                Some(implied)
            }
            (None, rake) => rake,
        };
        let ended = ending(hand);
        let uncontested = matches!(ended, Ok(Ending::Uncontested(_)));
        if uncontested && !reported {
            // The last fold settled the hand.
        } else {
            let op = match (ended, &hand.winnings_cents) {
                (Ok(Ending::Uncontested(_)), _) => TableOp::Showdown { high: Vec::new(), low: None, rake_cents },
                (Ok(Ending::Showdown { contenders }), _) => {
                    let (high, low) = self.rankings(contenders);
                    TableOp::Showdown { high, low, rake_cents }
                }
                // No ranking can be computed: the room's record of who collected what.
                (Err(_), Some(winnings)) => {
                    let awards = (0..n)
                        .filter(|&i| winnings[i] > 0 || returned_to == Some(i))
                        .map(|i| SeatAward {
                            seat: seat_of(Player(i as u8)),
                            amount_cents: winnings[i] + if returned_to == Some(i) { returned_cents } else { 0 },
                        })
                        .collect();
                    TableOp::AwardPots { awards, rake_cents }
                }
                (Err(reason), None) => return Err(unsupported(hand, reason)),
            };
            self.table(op, None, Role::Dealer);
        }
        let expected = match (&hand.finishing_stacks_cents, &hand.winnings_cents) {
            (Some(finishing), _) => Some(
                (0..n).map(|i| hand.starting_stacks_cents[i].and(finishing[i])).collect(),
            ),
            (None, Some(winnings)) => Some(
                (0..n)
                    .map(|i| {
                        let back = if returned_to == Some(i) { returned_cents } else { 0 };
                        hand.starting_stacks_cents[i].map(|start| start - self.shadow.hand_cents[i] + winnings[i] + back)
                    })
                    .collect(),
            ),
            (None, None) => None,
        };
        Ok(expected)
    }

    /// The dealer's report: high groups best first (ties together), and the qualifying lows.
    /// In stud (no button) tied seats are listed in the order the odd chip goes: the highest
    /// card by suit for the high half, the lowest for the low half (R-POT-5).
    fn rankings(&self, mut contenders: Vec<Contender>) -> (Vec<Vec<Seat>>, Option<Vec<Vec<Seat>>>) {
        contenders.sort_by_key(|c| std::cmp::Reverse((c.strength, c.high_card)));
        let high = group(&contenders, |c| Some(c.strength));
        let low = self.hand.variant.is_hi_lo().then(|| {
            contenders.sort_by_key(|c| std::cmp::Reverse((c.low, c.low_card)));
            group(&contenders, |c| c.low)
        });
        (high, low)
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
        let total_cents: Cents = self.stacks_cents.iter().sum();
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
        for index in 0..self.stacks_cents.len() {
            let amount_cents = self.stacks_cents[index];
            let seat = seat_of(Player(index as u8));
            let player_id = self.player_ids[index].clone();
            self.table(TableOp::SeatPlayer { seat, player_id: player_id.clone() }, None, Role::Dealer);
            let supervisor_id = (amount_cents >= supervisor_threshold_cents).then(|| "phh-floor".to_owned());
            self.table(
                TableOp::BuyIn { seat, player_id, amount_cents, source: FundsSource::Cash, supervisor_id, short_buy: false },
                None,
                Role::Dealer,
            );
        }
    }

    fn start_and_post(&mut self, antes_to_main: bool) {
        let n = self.hand.player_count();
        let dealt_seats: Vec<Seat> = (0..n).map(|i| seat_of(Player(i as u8))).collect();
        let button_seat = seat_of(self.blinds.button);
        self.table(TableOp::StartHand { hand_no: 1, button_seat, dealt_seats }, None, Role::Dealer);
        match self.antes {
            Antes::None => {}
            Antes::Uniform(ante) => {
                for index in 0..n {
                    self.post(Player(index as u8), PostKind::Ante, ante, false, antes_to_main);
                }
            }
            Antes::BigBlind { payer, total_cents } => self.post(payer, PostKind::BigBlindAnte, total_cents, false, true),
            Antes::Button { payer, total_cents } => self.post(payer, PostKind::ButtonAnte, total_cents, false, true),
        }
        for (player, kind, amount) in self.blinds.posts.clone() {
            self.post(player, kind, amount, true, false);
        }
    }

    fn post(&mut self, player: Player, kind: PostKind, nominal_cents: Cents, live: bool, whole_to_main: bool) {
        let i = player.index();
        let amount_cents = nominal_cents.min(self.shadow.stack_cents[i]);
        if amount_cents == 0 {
            return; // already all in (from the ante): nothing left to post
        }
        self.shadow.stack_cents[i] -= amount_cents;
        self.shadow.hand_cents[i] += amount_cents;
        if whole_to_main {
            self.shadow.dead_main_cents[i] += amount_cents;
        }
        if live {
            self.shadow.round_cents[i] += amount_cents;
            self.shadow.bet_to_cents = self.shadow.bet_to_cents.max(self.shadow.round_cents[i]);
        }
        self.table(TableOp::Post { seat: seat_of(player), kind, amount_cents }, None, Role::Dealer);
    }

    fn actions(&mut self) -> Result<(), ConvertError> {
        let hand = self.hand;
        let stud = hand.variant.is_stud();
        let mut streets = StudStreets { opened: 3, ..StudStreets::default() };
        // Draw games: a draw happened since the last betting round started.
        let mut drew = false;
        for entry in &hand.actions {
            let line = Some(entry.line);
            match entry.action {
                Action::DealBoard { .. } => self.next_round(None, line),
                Action::DealHole { player, cards } if stud => self.stud_deal(&mut streets, player, &cards, line),
                Action::DealHole { .. } | Action::ShowOrMuck { .. } => {}
                Action::StandPatOrDiscard { .. } => drew = true,
                Action::BringIn { player } => {
                    self.open_street(&mut streets, &mut drew, player, line);
                    let bring_in = hand.bring_in_cents.unwrap_or(0);
                    self.post(player, PostKind::BringIn, bring_in, true, false);
                }
                Action::Fold { player } => {
                    self.open_street(&mut streets, &mut drew, player, line);
                    self.folded[player.index()] = true;
                    self.act(player, BetAction::Fold, line);
                }
                Action::CheckOrCall { player } => {
                    self.open_street(&mut streets, &mut drew, player, line);
                    let i = player.index();
                    let owe = (self.shadow.bet_to_cents - self.shadow.round_cents[i]).max(0);
                    let action = if owe == 0 { BetAction::Check } else { BetAction::Call };
                    let paid = owe.min(self.shadow.stack_cents[i]);
                    self.shadow.stack_cents[i] -= paid;
                    self.shadow.round_cents[i] += paid;
                    self.shadow.hand_cents[i] += paid;
                    self.act(player, action, line);
                }
                Action::CompleteBetOrRaiseTo { player, amount_cents: to_cents } => {
                    self.open_street(&mut streets, &mut drew, player, line);
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
                    let paid = added.clamp(0, self.shadow.stack_cents[i]);
                    self.shadow.stack_cents[i] -= paid;
                    self.shadow.hand_cents[i] += paid;
                    self.shadow.round_cents[i] = self.shadow.round_cents[i].max(to_cents);
                    self.shadow.bet_to_cents = self.shadow.bet_to_cents.max(to_cents);
                    self.act(player, action, line);
                }
            }
        }
        // Streets dealt after the betting ended (all in): each one still a round of the hand.
        if self.report_up_cards
            && let Some(street) = streets.pending.take()
        {
            self.flush_street(&mut streets, street, None, None);
        }
        Ok(())
    }

    /// Stud: a card dealt; a card for a player past the pending street's count starts the
    /// next street (the streets of an all-in hand follow each other without betting).
    fn stud_deal(&mut self, streets: &mut StudStreets, player: Player, cards: &Cards, line: Option<u32>) {
        let i = player.index();
        streets.cards[i] += cards.len();
        let street = streets.cards[i].clamp(3, 7);
        if let Some(pending) = streets.pending
            && street > pending
            && self.report_up_cards
        {
            streets.pending = None;
            self.flush_street(streets, pending, None, line);
        }
        if streets.pending.is_none() && street > streets.opened || (street == 3 && streets.pending.is_none()) {
            streets.pending = Some(street);
        }
        // Up cards: the third of third street, the one card of fourth to sixth street.
        let up = match (street, cards.len()) {
            (3, 3) => Some(cards.as_slice()[2]),
            (4..=6, 1) => Some(cards.as_slice()[0]),
            _ => None,
        };
        if let Some(card) = up.and_then(to_rules_card) {
            streets.up.push(UpCard { seat: seat_of(player), card });
        }
    }

    /// Stud: the pending street's up cards go to the core, and from fourth street on its
    /// betting round starts: the core names the first to act from the up cards, or (when
    /// they are not all known) the file's first actor does.
    fn flush_street(&mut self, streets: &mut StudStreets, street: usize, first: Option<Player>, line: Option<u32>) {
        if self.report_up_cards && street <= 6 && !streets.up.is_empty() {
            let cards = std::mem::take(&mut streets.up);
            self.table(TableOp::DealUpCards { cards }, line, Role::Dealer);
        }
        streets.up.clear();
        if street >= 4 {
            let named = if self.report_up_cards { None } else { first.map(seat_of) };
            self.next_round(named, line);
        }
        streets.opened = street;
    }

    /// A betting action: a pending stud street, or the betting after a draw, opens first.
    fn open_street(&mut self, streets: &mut StudStreets, drew: &mut bool, player: Player, line: Option<u32>) {
        if let Some(street) = streets.pending.take() {
            self.flush_street(streets, street, Some(player), line);
        }
        if std::mem::take(drew) {
            self.next_round(None, line);
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

/// Groups of equal strength, best first (`contenders` sorted best first); `None` strengths
/// (no qualifying low) are left out.
fn group(contenders: &[Contender], key: impl Fn(&Contender) -> Option<crate::hand_rank::HandStrength>) -> Vec<Vec<Seat>> {
    let mut groups: Vec<Vec<Seat>> = Vec::new();
    let mut previous = None;
    for contender in contenders {
        let Some(strength) = key(contender) else { continue };
        let seat = seat_of(contender.player);
        match groups.last_mut() {
            Some(group) if previous == Some(strength) => group.push(seat),
            _ => groups.push(vec![seat]),
        }
        previous = Some(strength);
    }
    groups
}

/// Every stud up card of the hand is known (`??` nowhere an up card is dealt).
fn stud_up_cards_known(hand: &HandHistory) -> bool {
    let mut dealt = [0usize; MAX_PLAYERS];
    for entry in &hand.actions {
        if let Action::DealHole { player, cards } = entry.action {
            let before = dealt[player.index()];
            dealt[player.index()] += cards.len();
            for (k, card) in cards.as_slice().iter().enumerate() {
                let nth = before + k + 1; // 1-based card number of the player's hand
                if (3..=6).contains(&nth) && *card == Card::Unknown {
                    return false;
                }
            }
        }
    }
    true
}

/// Starting stacks in cents; an unknown stack (`inf`) becomes the smallest whole number of
/// chips that covers every other stack and every amount the hand bets, so that it never goes
/// all in by accident.
fn covering_stacks(hand: &HandHistory) -> Vec<Cents> {
    let chip = min_chip_cents(hand);
    let known: Cents = hand.starting_stacks_cents.iter().flatten().sum();
    let bets: Cents = hand
        .actions
        .iter()
        .map(|e| match e.action {
            Action::CompleteBetOrRaiseTo { amount_cents, .. } => amount_cents,
            _ => 0,
        })
        .sum();
    let forced: Cents = hand.antes_cents.iter().chain(&hand.blinds_or_straddles_cents).sum::<Cents>() + hand.bring_in_cents.unwrap_or(0);
    let cover = (known + bets + forced + chip).min(chipledger_rules::money::MAX_AMOUNT_CENTS);
    let cover = cover - cover % chip;
    hand.starting_stacks_cents.iter().map(|s| s.unwrap_or(cover)).collect()
}

/// `pN` sits at seat N.
pub fn seat_of(player: Player) -> Seat {
    player.0 + 1
}

fn unsupported(hand: &HandHistory, reason: String) -> ConvertError {
    ConvertError::Unsupported { origin: hand.origin.clone(), reason }
}
