//! Betting: whose turn, what is legal, and how an action changes the round (section 5).
//!
//! All amounts are "raise to" totals for the round (R-BET-5). The round keeps the current bet
//! (`bet_to_cents`), the level of the last *full* bet or raise (`full_level_cents`) and its
//! size (`min_raise_cents`). A short all-in raises the bet without moving the full level; under
//! the full bet rule it reopens nothing (R-BET-11), under the half bet rule an all-in of at
//! least half a bet counts as full (R-BET-11, R-BET-12). A player may raise again only if a
//! full bet or raise happened after their last action.

use serde::{Deserialize, Serialize};

use crate::config::{BettingStructure, IncompleteRaiseRule, TableConfig};
use crate::hand::{Action, ActionKind, BettingRound, HandPhase, HandPlayer, HandState, InHand};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::Seat;
use crate::table::TableState;

pub const NO_HAND_IN_PROGRESS: Reason = Reason::new("NO_HAND_IN_PROGRESS", "R-BET-1");
pub const NOT_YOUR_TURN: Reason = Reason::new("NOT_YOUR_TURN", "R-BET-1");
pub const BETTING_ROUND_CLOSED: Reason = Reason::new("BETTING_ROUND_CLOSED", "R-BET-1");
pub const ROUND_NOT_COMPLETE: Reason = Reason::new("ROUND_NOT_COMPLETE", "R-BET-1");
pub const NO_MORE_ROUNDS: Reason = Reason::new("NO_MORE_ROUNDS", "R-BET-6");
pub const CANNOT_CHECK_FACING_BET: Reason = Reason::new("CANNOT_CHECK_FACING_BET", "R-BET-2");
pub const NO_OPPONENT_TO_RAISE: Reason = Reason::new("NO_OPPONENT_TO_RAISE", "R-BET-2");
/// A player who checked raises in the same round where the table allows no check-raise.
pub const CHECK_RAISE_NOT_ALLOWED: Reason = Reason::new("CHECK_RAISE_NOT_ALLOWED", "R-BET-2");
pub const BET_EXCEEDS_STACK: Reason = Reason::new("BET_EXCEEDS_STACK", "R-STAKE-1");
pub const BET_BELOW_MINIMUM: Reason = Reason::new("BET_BELOW_MINIMUM", "R-BET-3");
pub const RAISE_BELOW_MINIMUM: Reason = Reason::new("RAISE_BELOW_MINIMUM", "R-BET-3");
pub const RAISE_NOT_REOPENED: Reason = Reason::new("RAISE_NOT_REOPENED", "R-BET-11");
pub const NOTHING_TO_COMPLETE: Reason = Reason::new("NOTHING_TO_COMPLETE", "R-BET-11");
pub const COMPLETE_WRONG_TOTAL: Reason = Reason::new("COMPLETE_WRONG_TOTAL", "R-BET-11");
pub const FIXED_LIMIT_AMOUNT: Reason = Reason::new("FIXED_LIMIT_AMOUNT", "R-BET-6");
pub const BETTING_CAPPED: Reason = Reason::new("BETTING_CAPPED", "R-BET-6");
pub const RAISE_ABOVE_POT_LIMIT: Reason = Reason::new("RAISE_ABOVE_POT_LIMIT", "R-BET-7");
pub const RAISE_ABOVE_HALF_POT: Reason = Reason::new("RAISE_ABOVE_HALF_POT", "R-BET-8");
pub const BET_OUTSIDE_SPREAD: Reason = Reason::new("BET_OUTSIDE_SPREAD", "R-BET-9");
pub const ABOVE_HAND_CAP: Reason = Reason::new("ABOVE_HAND_CAP", "R-BET-10");
pub const ALL_IN_AFTER_BORROW_TO_RAISE: Reason = Reason::new("ALL_IN_AFTER_BORROW_TO_RAISE", "R-MARK-3");
pub const NO_SHORT_BET: Reason = Reason::new("NO_SHORT_BET", "R-BET-13");
pub const SHORT_BET_ROUND_ENDED: Reason = Reason::new("SHORT_BET_ROUND_ENDED", "R-BET-13");
pub const SHORT_BET_NOT_BROUGHT_UP: Reason = Reason::new("SHORT_BET_NOT_BROUGHT_UP", "R-BET-13");
pub const BRING_IN_REQUIRED: Reason = Reason::new("BRING_IN_REQUIRED", "R-POST-5");
pub const TIP_CHIPS_DO_NOT_PLAY: Reason = Reason::new("TIP_CHIPS_DO_NOT_PLAY", "R-UNIT-2");

pub const REASONS: &[Reason] = &[
    NO_HAND_IN_PROGRESS,
    NOT_YOUR_TURN,
    BETTING_ROUND_CLOSED,
    ROUND_NOT_COMPLETE,
    NO_MORE_ROUNDS,
    CANNOT_CHECK_FACING_BET,
    NO_OPPONENT_TO_RAISE,
    CHECK_RAISE_NOT_ALLOWED,
    BET_EXCEEDS_STACK,
    BET_BELOW_MINIMUM,
    RAISE_BELOW_MINIMUM,
    RAISE_NOT_REOPENED,
    NOTHING_TO_COMPLETE,
    COMPLETE_WRONG_TOTAL,
    FIXED_LIMIT_AMOUNT,
    BETTING_CAPPED,
    RAISE_ABOVE_POT_LIMIT,
    RAISE_ABOVE_HALF_POT,
    BET_OUTSIDE_SPREAD,
    ABOVE_HAND_CAP,
    ALL_IN_AFTER_BORROW_TO_RAISE,
    NO_SHORT_BET,
    SHORT_BET_ROUND_ENDED,
    SHORT_BET_NOT_BROUGHT_UP,
    BRING_IN_REQUIRED,
    TIP_CHIPS_DO_NOT_PLAY,
];

/// The range of legal "raise to" totals for a bet, raise or completion. Fixed limit: the two
/// ends only (the small or, on fourth street with an open pair, the big bet, R-BET-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaiseRange {
    /// `Bet`, `Raise` or `Complete`.
    pub kind: ActionKind,
    /// Smallest legal total (the all-in total if the stack is short of a full bet, R-BET-4).
    pub min_to_cents: Cents,
    /// Largest legal total (pot limit, spread, cap, or the whole stack).
    pub max_to_cents: Cents,
}

/// What the seat in turn may do (R-BET-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegalActions {
    pub seat: Seat,
    pub stack_cents: Cents,
    /// Live chips already in front of the player this round.
    pub round_cents: Cents,
    /// Current bet of the round.
    pub bet_to_cents: Cents,
    /// What a call adds (at most the stack).
    pub call_cents: Cents,
    /// A fold is refused only while third street waits for the bring-in (R-POST-5) and while
    /// the seat's short bet is not brought up (R-BET-13).
    pub can_fold: bool,
    pub can_check: bool,
    pub can_call: bool,
    /// Bet, raise or complete, if allowed.
    pub raise: Option<RaiseRange>,
    /// The round total if the player goes all in; `all_in_allowed` says if that is legal.
    pub all_in_to_cents: Cents,
    pub all_in_allowed: bool,
    /// Chips must be whole minimum playable chips except all in (R-UNIT-2).
    pub min_chip_cents: Cents,
    /// R-POST-5: third street waits for this seat's bring-in (the post, or a full opening bet
    /// in `raise`).
    pub bring_in_cents: Option<Cents>,
}

/// A fresh hand: nobody has posted or acted.
pub fn new_hand(hand_no: u64, button_seat: Seat, dealt_seats: &[Seat], config: &TableConfig) -> HandState {
    let mut seats: Vec<Seat> = dealt_seats.to_vec();
    seats.sort_unstable();
    seats.dedup();
    let players = seats
        .into_iter()
        .map(|seat| HandPlayer {
            seat,
            status: InHand::Active,
            round_cents: 0,
            hand_cents: 0,
            acted: false,
            acted_at_raise_no: 0,
            posted_mask: 0,
            borrowed_to_raise: false,
            borrowed: false,
            short_cents: 0,
            short_round_index: 0,
            dead_main_cents: 0,
            checked: false,
            up_cards: Default::default(),
        })
        .collect();
    let awaiting_bring_in = config.bring_in_cents.is_some_and(|b| b > 0);
    let mut hand = HandState {
        hand_no,
        button_seat,
        players,
        phase: HandPhase::Betting,
        round: fresh_round(0, button_seat, 0, config),
        pot_cents: 0,
        kill: None,
        flop_seen: false,
        awaiting_bring_in,
        contribution_cap_cents: None,
        paid_at_once_bases: Vec::new(),
        blinds: Default::default(),
        take_back: None,
        missed_blinds_due: Vec::new(),
        missed_antes_due: Vec::new(),
        button_ante_missed_by: None,
        kill_owed_by: None,
        rock_holder: None,
    };
    hand.round.started_heads_up = hand.active_count() == 2;
    // Stud: nobody acts before the bring-in; the up cards name the seat (R-POST-5).
    hand.round.to_act = if awaiting_bring_in { None } else { hand.next_to_act_after(button_seat) };
    hand
}

fn fresh_round(index: u8, anchor_seat: Seat, start_pot_cents: Cents, config: &TableConfig) -> BettingRound {
    BettingRound {
        index,
        bet_to_cents: 0,
        full_level_cents: 0,
        min_raise_cents: config.min_bet_cents,
        raises: 0,
        capped: false,
        full_raise_no: 0,
        anchor_seat,
        acts_last: None,
        opened: false,
        to_act: None,
        start_pot_cents,
        big_bet_made: false,
        started_heads_up: false,
    }
}

/// Start betting round `index` (R-BET-1): first to act is `first_to_act_seat` (stud) or the
/// first player left of the button who has to act.
pub fn start_round(
    hand: &mut HandState,
    index: u8,
    first_to_act_seat: Option<Seat>,
    config: &TableConfig,
    stack_of: impl Fn(Seat) -> Cents,
) {
    let anchor = match first_to_act_seat {
        // The seat before the named one, so `next_to_act_after(anchor)` finds it first.
        Some(seat) => {
            let i = hand.index_of(seat).unwrap_or(0);
            let n = hand.players.len();
            hand.players[(i + n - 1) % n].seat
        }
        None => hand.button_seat,
    };
    hand.round = fresh_round(index, anchor, hand.pot_cents, config);
    hand.round.started_heads_up = hand.active_count() == 2;
    for p in &mut hand.players {
        p.round_cents = 0;
        p.acted = false;
        p.acted_at_raise_no = 0;
        p.checked = false;
    }
    if index >= 1 {
        hand.flop_seen = true;
    }
    hand.phase = HandPhase::Betting;
    hand.mark_uncontested(stack_of);
    hand.advance_from(anchor);
}

/// Fixed-limit bet size of the round, scaled by a kill (R-BET-6, R-POST-6): the big bet from
/// `big_bet_from_round`, or once a big bet was made on fourth street with an open pair.
pub fn fixed_increment_cents(hand: &HandState, config: &TableConfig) -> Option<Cents> {
    let BettingStructure::FixedLimit { small_bet_cents, big_bet_cents, .. } = &config.betting else {
        return None;
    };
    let big = hand.round.index >= config.big_bet_from_round || hand.round.big_bet_made;
    Some(scaled_by_kill(hand, if big { *big_bet_cents } else { *small_bet_cents }))
}

fn scaled_by_kill(hand: &HandState, base: Cents) -> Cents {
    match hand.kill {
        Some(k) => {
            let (num, den) = k.factor();
            base * num / den
        }
        None => base,
    }
}

/// R-BET-6, the seeds' seven-card stud rule (`TableConfig::open_pair_big_bet`): on fourth
/// street, while any live player's up cards show a pair, a bet or raise may be the big bet
/// instead of the small one. The big bet's size, if a player may choose it now (not once a
/// big bet was made: from then on it is the round's only size).
fn open_pair_big_bet_cents(hand: &HandState, config: &TableConfig) -> Option<Cents> {
    let BettingStructure::FixedLimit { big_bet_cents, .. } = &config.betting else {
        return None;
    };
    let fourth_street = hand.round.index == 1 && hand.round.index < config.big_bet_from_round;
    if !config.open_pair_big_bet || !fourth_street || hand.round.big_bet_made || config.game.up_card_order().is_none() {
        return None;
    }
    let open_pair = hand
        .players
        .iter()
        .filter(|p| p.status != InHand::Folded)
        .any(|p| p.up_cards.len() >= 2 && p.up_cards[0].rank() == p.up_cards[1].rank());
    open_pair.then(|| scaled_by_kill(hand, *big_bet_cents))
}

/// Structural sizing of a bet/raise for `p`, before looking at the stack.
struct Sizing {
    kind: ActionKind,
    min_to_cents: Cents,
    max_to_cents: Cents,
    over_max: Reason,
}

/// Why `p` may not bet or raise now, if so (R-BET-2, R-BET-6, R-BET-10, R-BET-11).
fn raise_blocked(hand: &HandState, config: &TableConfig, p: &HandPlayer, stack_cents: Cents) -> Option<Rejection> {
    let owe = (hand.round.bet_to_cents - p.round_cents).max(0);
    // R-BET-11: short all-ins reopen nothing, one by one or together (the seeds' full bet
    // rule); with `short_all_ins_add_up`, in big-bet games a player whom several of them leave
    // facing at least a full raise in all may raise again (the card rooms' rule; limit games
    // count them from the full level already, R-BET-12).
    let faces_full_raise = config.short_all_ins_add_up
        && fixed_increment_cents(hand, config).is_none()
        && hand.round.min_raise_cents > 0
        && owe >= hand.round.min_raise_cents;
    if p.acted && hand.round.full_raise_no <= p.acted_at_raise_no && !faces_full_raise {
        return Some(
            Rejection::new(RAISE_NOT_REOPENED, "no full bet or raise since this player acted; call or fold")
                .with("call_cents", owe.min(stack_cents)),
        );
    }
    if p.checked && !config.check_raise_allowed {
        return Some(
            Rejection::new(CHECK_RAISE_NOT_ALLOWED, "no check-raise at this table: a player who checked may call or fold")
                .with("seat", p.seat as Cents)
                .with("call_cents", owe.min(stack_cents)),
        );
    }
    if !hand.players.iter().any(|o| o.seat != p.seat && o.status == InHand::Active) {
        // R-BET-10: at a cap table an opponent whose total reached the cap is all in by the cap;
        // the refusal names the cap's rule when that is why no one is left to raise.
        if let BettingStructure::CapLimit { cap_cents, .. } = &config.betting
            && hand.players.iter().any(|o| o.seat != p.seat && o.status == InHand::AllIn && o.hand_cents >= *cap_cents)
        {
            return Some(Rejection::new(ABOVE_HAND_CAP, "every opponent is all in or folded, at least one by the cap").with("cap_cents", *cap_cents));
        }
        return Some(Rejection::new(NO_OPPONENT_TO_RAISE, "every opponent is all in or folded"));
    }
    if stack_cents <= owe {
        return Some(Rejection::new(BET_EXCEEDS_STACK, "the stack does not cover more than a call").with("stack_cents", stack_cents));
    }
    if let Some((max_raises, heads_up_uncapped)) = config.betting.raise_cap() {
        let reached = hand.round.raises > max_raises;
        // The heads-up exception: two players betting before the cap is reached (the seed:
        // "only two players betting in the round ... since either player can call the last
        // raise"; a player all in bets no more), or with `heads_up_from_round_start` only when
        // the round started with two.
        let heads_up = heads_up_uncapped
            && hand.active_count() == 2
            && !hand.round.capped
            && (!config.heads_up_from_round_start || hand.round.started_heads_up);
        if hand.round.capped || (reached && !heads_up) {
            return Some(Rejection::new(BETTING_CAPPED, "the round is capped").with("raises", hand.round.raises as Cents));
        }
    }
    if let BettingStructure::CapLimit { cap_cents, .. } = &config.betting
        && p.hand_cents + owe >= *cap_cents {
            return Some(Rejection::new(ABOVE_HAND_CAP, "a call reaches the cap").with("cap_cents", *cap_cents));
        }
    None
}

fn sizing(hand: &HandState, config: &TableConfig, p: &HandPlayer) -> Sizing {
    let r = &hand.round;
    let owe = (r.bet_to_cents - p.round_cents).max(0);
    let open_or_raise = if r.bet_to_cents == 0 { ActionKind::Bet } else { ActionKind::Raise };
    let chip = config.betting_unit();
    let nl_min = r.bet_to_cents + r.min_raise_cents;
    match &config.betting {
        BettingStructure::FixedLimit { .. } => {
            let inc = fixed_increment_cents(hand, config).unwrap_or(r.min_raise_cents);
            let target = r.full_level_cents + inc;
            // Fourth street with an open pair: the small bet or the big bet, nothing between.
            let big_target = open_pair_big_bet_cents(hand, config).map_or(target, |big| r.full_level_cents + big);
            let kind = if r.bet_to_cents > r.full_level_cents { ActionKind::Complete } else { open_or_raise };
            Sizing { kind, min_to_cents: target, max_to_cents: big_target.max(target), over_max: FIXED_LIMIT_AMOUNT }
        }
        BettingStructure::NoLimit => {
            Sizing { kind: open_or_raise, min_to_cents: nl_min, max_to_cents: Cents::MAX, over_max: BET_EXCEEDS_STACK }
        }
        BettingStructure::PotLimit => Sizing {
            kind: open_or_raise,
            min_to_cents: nl_min,
            max_to_cents: (r.bet_to_cents + hand.pot_cents + owe + assumed_call_cents(hand, config, p)).max(nl_min),
            over_max: RAISE_ABOVE_POT_LIMIT,
        },
        BettingStructure::HalfPotLimit => {
            let half = (hand.pot_cents + owe) / 2;
            let half = half - half % chip;
            Sizing {
                kind: open_or_raise,
                min_to_cents: nl_min,
                max_to_cents: (r.bet_to_cents + half).max(nl_min),
                over_max: RAISE_ABOVE_HALF_POT,
            }
        }
        BettingStructure::SpreadLimit { min_bet_cents, max_bet_cents, last_round_max_bet_cents, .. } => {
            let last = r.index + 1 >= config.betting_rounds;
            let max_inc = match (last, last_round_max_bet_cents) {
                (true, Some(m)) => *m,
                _ => *max_bet_cents,
            };
            let min_inc = r.min_raise_cents.max(*min_bet_cents).min(max_inc);
            Sizing {
                kind: open_or_raise,
                min_to_cents: r.bet_to_cents + min_inc,
                max_to_cents: r.bet_to_cents + max_inc,
                over_max: BET_OUTSIDE_SPREAD,
            }
        }
        BettingStructure::CapLimit { pot_limit, cap_cents } => {
            let room = p.round_cents + (cap_cents - p.hand_cents);
            let pot_max = if *pot_limit { (r.bet_to_cents + hand.pot_cents + owe).max(nl_min) } else { Cents::MAX };
            Sizing { kind: open_or_raise, min_to_cents: nl_min, max_to_cents: pot_max.min(room), over_max: ABOVE_HAND_CAP }
        }
    }
}

/// R-BET-7 option "assumed call" (`TableConfig::pot_limit_assumed_call`): the first preflop
/// raiser's pot counts the small blind as if it had called the big blind, even if it folded,
/// so the first raise is at most four big blinds. The small blind raising first calls for real.
fn assumed_call_cents(hand: &HandState, config: &TableConfig, p: &HandPlayer) -> Cents {
    if !config.pot_limit_assumed_call || hand.round.index != 0 || hand.round.full_raise_no != 0 {
        return 0;
    }
    let small_bit = crate::hand::PostKind::SmallBlind.bit();
    hand.players
        .iter()
        .find(|o| o.posted_mask & small_bit != 0 && o.seat != p.seat)
        .map_or(0, |sb| (config.big_blind_cents() - sb.round_cents).max(0))
}

/// Legal actions for the seat in turn, or `None` if nobody is to act (R-BET-2). Read from the
/// same [`Turn`] that [`judge_action`] judges with: what this offers, `Act` accepts.
pub fn legal_actions(table: &TableState) -> Option<LegalActions> {
    let hand = table.hand.as_ref()?;
    let seat = hand.round.to_act?;
    let turn = turn(table, seat).ok()?;
    Some(turn.legal())
}

/// The one judgement of what the seat in turn may do. `legal_actions` reports it and
/// `judge_action` checks an action against it, so the two cannot drift apart.
struct Turn<'a> {
    table: &'a TableState,
    hand: &'a HandState,
    config: &'a TableConfig,
    p: &'a HandPlayer,
    stack: Cents,
    owe: Cents,
    all_in_to: Cents,
}

/// The turn of `seat`: there is a hand, a round open for betting, and it is this seat's turn
/// (R-BET-1); a short bet of the seat's is brought up first (R-BET-13).
#[inline]
fn turn(table: &TableState, seat: Seat) -> Result<Turn<'_>, Rejection> {
    let (hand, config) = match (table.hand.as_ref(), table.config.as_ref()) {
        (Some(h), Some(c)) => (h, c),
        _ => return Err(Rejection::new(NO_HAND_IN_PROGRESS, "no hand is being played")),
    };
    if hand.phase != HandPhase::Betting {
        return Err(Rejection::new(BETTING_ROUND_CLOSED, "nobody is to act in this round")
            .with("round_index", hand.round.index as Cents));
    }
    crate::posts::check_forced_posts(hand, config)?;
    match hand.round.to_act {
        Some(to_act) if to_act != seat => {
            return Err(Rejection::new(NOT_YOUR_TURN, format!("seat {seat} acted out of turn; seat {to_act} is to act"))
                .with("seat", seat as Cents)
                .with("seat_to_act", to_act as Cents));
        }
        Some(_) => {}
        // R-POST-5 without reported up cards: the dealer names the low card by its opening.
        None if hand.awaiting_bring_in => {}
        None => return Err(Rejection::new(BETTING_ROUND_CLOSED, "nobody is to act in this round")),
    }
    let Some(p) = hand.player(seat) else {
        return Err(Rejection::new(NOT_YOUR_TURN, "seat not in the hand").with("seat", seat as Cents));
    };
    if p.status != InHand::Active || (hand.awaiting_bring_in && p.acted) {
        return Err(Rejection::new(NOT_YOUR_TURN, "the seat cannot act in this hand").with("seat", seat as Cents));
    }
    if p.short_cents > 0 && p.short_round_index == hand.round.index {
        return Err(Rejection::new(SHORT_BET_NOT_BROUGHT_UP, "bring the short bet or call up to the proper amount first")
            .with("seat", seat as Cents)
            .with("short_cents", p.short_cents));
    }
    let stack = table.playable_stack_cents(seat);
    let owe = (hand.round.bet_to_cents - p.round_cents).max(0);
    // R-BET-10: in a cap game a player is all in at the cap: all in means to the cap (offered
    // beyond it, it was then refused as above the cap: the second betting pass).
    let reach = match &config.betting {
        BettingStructure::CapLimit { cap_cents, .. } => stack.min((cap_cents - p.hand_cents).max(0)),
        _ => stack,
    };
    Ok(Turn { table, hand, config, p, stack, owe, all_in_to: p.round_cents + reach })
}

impl Turn<'_> {
    fn done(&self, kind: ActionKind, to_cents: Cents) -> Judged {
        let amount_cents = to_cents - self.p.round_cents;
        Judged { kind, to_cents, amount_cents, all_in: amount_cents > 0 && amount_cents == self.stack }
    }

    /// R-POST-5: third street waits for the bring-in or a full opening bet.
    fn bring_in_first(&self) -> Result<(), Rejection> {
        if self.hand.awaiting_bring_in {
            return Err(Rejection::new(BRING_IN_REQUIRED, "the low card brings it in, or opens for a full bet")
                .with("seat", self.p.seat as Cents)
                .with("bring_in_cents", self.config.bring_in_cents.unwrap_or(0)));
        }
        Ok(())
    }

    fn post_owed(&self) -> Result<(), Rejection> {
        // R-POST-3: an entry or missed-blind post is owed before anything but a fold.
        crate::posts::check_entry_post(self.table, self.hand, self.p.seat)
    }

    /// A fold is accepted from the seat in turn even when it could check.
    fn fold(&self) -> Result<Judged, Rejection> {
        self.bring_in_first()?;
        Ok(self.done(ActionKind::Fold, self.p.round_cents))
    }

    fn check(&self) -> Result<Judged, Rejection> {
        self.bring_in_first()?;
        self.post_owed()?;
        if self.owe > 0 {
            return Err(Rejection::new(CANNOT_CHECK_FACING_BET, "facing a bet: call, raise or fold")
                .with("amount_owed_cents", self.owe));
        }
        Ok(self.done(ActionKind::Check, self.p.round_cents))
    }

    fn call(&self) -> Result<Judged, Rejection> {
        if self.owe == 0 {
            // A call with nothing owed is a check (PHH `cc`).
            return self.check();
        }
        self.bring_in_first()?;
        self.post_owed()?;
        if self.p.borrowed_to_raise && self.owe >= self.stack {
            return Err(Rejection::new(ALL_IN_AFTER_BORROW_TO_RAISE, "borrowed to raise: may not go all in this hand")
                .with("stack_cents", self.stack));
        }
        Ok(self.done(ActionKind::Call, self.p.round_cents + self.owe.min(self.stack)))
    }

    fn all_in(&self) -> Result<Judged, Rejection> {
        self.post_owed()?;
        if self.stack == 0 {
            return Err(Rejection::new(BET_EXCEEDS_STACK, "no chips left").with("stack_cents", 0));
        }
        if self.p.borrowed_to_raise {
            return Err(Rejection::new(ALL_IN_AFTER_BORROW_TO_RAISE, "borrowed to raise: may not go all in this hand")
                .with("stack_cents", self.stack));
        }
        if self.all_in_to <= self.hand.round.bet_to_cents {
            self.bring_in_first()?;
            return Ok(self.done(ActionKind::Call, self.all_in_to));
        }
        self.raise_to(self.all_in_to)
    }

    fn complete(&self) -> Result<Judged, Rejection> {
        let r = &self.hand.round;
        if !self.config.is_limit() || (r.bet_to_cents <= r.full_level_cents && !self.hand.awaiting_bring_in) {
            return Err(Rejection::new(NOTHING_TO_COMPLETE, "no incomplete bet to complete").with("bet_to_cents", r.bet_to_cents));
        }
        let target = sizing(self.hand, self.config, self.p).min_to_cents.min(self.all_in_to);
        self.raise_to(target)
    }

    /// The range of legal "raise to" totals, each end accepted by [`Turn::raise_to`].
    fn raise_range(&self) -> Result<RaiseRange, Rejection> {
        if let Some(r) = raise_blocked(self.hand, self.config, self.p, self.stack) {
            return Err(r);
        }
        let s = sizing(self.hand, self.config, self.p);
        let chip = self.config.betting_unit();
        let mut max_to = s.max_to_cents.min(self.all_in_to);
        if max_to == self.p.round_cents + self.stack && self.p.borrowed_to_raise {
            max_to -= chip; // R-MARK-3: anything but all in (the cap is no all in of the stack)
        }
        if max_to != self.all_in_to {
            max_to = self.config.floor_to_unit(max_to);
        }
        // The smallest legal total in whole betting units (a short all-in can leave the minimum
        // raise between two units).
        let min_to = match s.min_to_cents.rem_euclid(chip) {
            0 => s.min_to_cents,
            rem => s.min_to_cents.saturating_add(chip - rem),
        }
        .min(max_to);
        let low = self.raise_to(min_to)?;
        self.raise_to(max_to)?;
        Ok(RaiseRange { kind: low.kind, min_to_cents: min_to, max_to_cents: max_to })
    }

    fn raise_to(&self, to_cents: Cents) -> Result<Judged, Rejection> {
        self.post_owed()?;
        judge_raise(self.hand, self.config, self.p, self.stack, to_cents)
    }

    fn legal(&self) -> LegalActions {
        let raise = self.raise_range().ok();
        let bring_in_cents = if self.hand.awaiting_bring_in && self.post_owed().is_ok() {
            self.config.bring_in_cents.map(|b| b.min(self.stack))
        } else {
            None
        };
        LegalActions {
            seat: self.p.seat,
            stack_cents: self.stack,
            round_cents: self.p.round_cents,
            bet_to_cents: self.hand.round.bet_to_cents,
            call_cents: self.owe.min(self.stack),
            can_fold: self.fold().is_ok(),
            can_check: self.owe == 0 && self.check().is_ok(),
            can_call: self.owe > 0 && self.call().is_ok(),
            raise,
            all_in_to_cents: self.all_in_to,
            all_in_allowed: self.all_in().is_ok(),
            min_chip_cents: self.config.betting_unit(),
            bring_in_cents,
        }
    }
}

/// An accepted action: the classified kind and the player's new total for the round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judged {
    pub kind: ActionKind,
    pub to_cents: Cents,
    pub amount_cents: Cents,
    pub all_in: bool,
}

/// Judge `action` by `seat` (R-BET-1..12), against the same [`Turn`] `legal_actions` reads.
pub fn judge_action(table: &TableState, seat: Seat, action: Action) -> Result<Judged, Rejection> {
    let turn = turn(table, seat)?;
    match action {
        Action::Fold => turn.fold(),
        Action::Check => turn.check(),
        Action::Call => turn.call(),
        Action::AllIn => turn.all_in(),
        Action::Complete => turn.complete(),
        Action::CompleteTo { to_cents } => {
            let judged = turn.complete()?;
            if judged.to_cents != to_cents {
                return Err(Rejection::new(COMPLETE_WRONG_TOTAL, "a complete goes to the full bet, no other total")
                    .with("to_cents", to_cents)
                    .with("complete_to_cents", judged.to_cents));
            }
            Ok(judged)
        }
        Action::Bet { to_cents } | Action::Raise { to_cents } => turn.raise_to(to_cents),
    }
}

fn judge_raise(hand: &HandState, config: &TableConfig, p: &HandPlayer, stack: Cents, to_cents: Cents) -> Result<Judged, Rejection> {
    let all_in_to = p.round_cents + stack;
    let bet_to = hand.round.bet_to_cents;
    if to_cents > all_in_to {
        return Err(Rejection::new(BET_EXCEEDS_STACK, "more than the chips in front of the player (table stakes)")
            .with("to_cents", to_cents)
            .with("max_to_cents", all_in_to)
            .with("stack_cents", stack));
    }
    if let Some(r) = raise_blocked(hand, config, p, stack) {
        return Err(r);
    }
    let s = sizing(hand, config, p);
    let all_in = to_cents == all_in_to;
    // R-BET-10: reaching the cap is like going all in (short of a full raise is allowed).
    let cap_to = match &config.betting {
        BettingStructure::CapLimit { cap_cents, .. } => p.round_cents + cap_cents - p.hand_cents,
        _ => Cents::MAX,
    };
    let short_ok = all_in || to_cents == cap_to;
    if all_in && p.borrowed_to_raise {
        return Err(Rejection::new(ALL_IN_AFTER_BORROW_TO_RAISE, "borrowed to raise: may not go all in this hand")
            .with("stack_cents", stack));
    }
    // The seeds' house rule: an unchallenged pot-limit overbet stands (within the stack).
    let overbet_stands = config.overbet_stands_unchallenged && (s.over_max == RAISE_ABOVE_POT_LIMIT || s.over_max == RAISE_ABOVE_HALF_POT);
    if to_cents > s.max_to_cents && !overbet_stands {
        return Err(Rejection::new(s.over_max, "above the largest bet or raise allowed")
            .with("to_cents", to_cents)
            .with("max_raise_to_cents", s.max_to_cents));
    }
    if to_cents < s.min_to_cents && !short_ok || to_cents <= bet_to {
        let reason = if bet_to == 0 { BET_BELOW_MINIMUM } else { RAISE_BELOW_MINIMUM };
        let reason = match config.betting {
            BettingStructure::FixedLimit { .. } => FIXED_LIMIT_AMOUNT,
            // R-BET-9: a spread game's raise is at least the previous bet or raise.
            BettingStructure::SpreadLimit { .. } => Reason::new(reason.code, "R-BET-9"),
            _ => reason,
        };
        let name = if bet_to == 0 { "min_bet_to_cents" } else { "min_raise_to_cents" };
        return Err(Rejection::new(reason, "below the smallest legal bet or raise")
            .with("to_cents", to_cents)
            .with(name, s.min_to_cents.min(all_in_to)));
    }
    // R-BET-6: a fixed-limit bet is one of the round's sizes (two on fourth street with an
    // open pair), never an amount between them.
    if matches!(config.betting, BettingStructure::FixedLimit { .. }) && !short_ok && to_cents != s.min_to_cents && to_cents != s.max_to_cents {
        return Err(Rejection::new(FIXED_LIMIT_AMOUNT, "a fixed-limit bet or raise is the small bet or, with an open pair on fourth street, the big bet")
            .with("to_cents", to_cents)
            .with("min_raise_to_cents", s.min_to_cents)
            .with("max_raise_to_cents", s.max_to_cents));
    }
    if !short_ok && to_cents % config.betting_unit() != 0 {
        return Err(Rejection::new(crate::money::NOT_MULTIPLE_OF_MIN_CHIP, "bets are whole betting units (the minimum playable chip, or the table's unit)")
            .with("to_cents", to_cents)
            .with("min_playable_chip_cents", config.chip_set.min_playable_chip_cents)
            .with("betting_unit_cents", config.betting_unit()));
    }
    Ok(Judged { kind: s.kind, to_cents, amount_cents: to_cents - p.round_cents, all_in })
}

/// Does a bet or raise to `to_cents` count as a full bet/raise (reopening the betting)?
fn is_full_raise(hand: &HandState, config: &TableConfig, to_cents: Cents) -> bool {
    let r = &hand.round;
    let half_rule = config.incomplete_raise_rule == IncompleteRaiseRule::HalfBet;
    match fixed_increment_cents(hand, config) {
        Some(inc) => {
            let over = to_cents - r.full_level_cents;
            over >= inc || (half_rule && 2 * over >= inc)
        }
        None => {
            let over = to_cents - r.bet_to_cents;
            over >= r.min_raise_cents || (half_rule && 2 * over >= r.min_raise_cents)
        }
    }
}

/// Apply an accepted action (used by `evolve`). `stack_after_cents` is the seat's stack after
/// the action's postings.
pub fn apply_action(hand: &mut HandState, config: &TableConfig, seat: Seat, kind: ActionKind, to_cents: Cents, stack_after_cents: Cents) {
    if hand.awaiting_bring_in {
        // R-POST-5: the low card opened for a full bet instead of bringing it in.
        hand.awaiting_bring_in = false;
        hand.round.anchor_seat = seat;
    }
    if matches!(kind, ActionKind::Bet | ActionKind::Raise | ActionKind::Complete) && to_cents > hand.round.bet_to_cents {
        if is_full_raise(hand, config, to_cents) {
            // R-BET-6: the big bet chosen on fourth street with an open pair sets the size.
            let big_bet = open_pair_big_bet_cents(hand, config).is_some_and(|big| to_cents - hand.round.full_level_cents >= big);
            let r = &mut hand.round;
            r.big_bet_made |= big_bet;
            if fixed_increment_cents_for(config).is_none() {
                r.min_raise_cents = r.min_raise_cents.max(to_cents - r.bet_to_cents);
            }
            r.full_level_cents = to_cents;
            r.full_raise_no += 1;
            r.raises = r.raises.saturating_add(1);
            if let Some((max_raises, _)) = config.betting.raise_cap()
                && hand.round.raises > max_raises
                && hand.active_count() > 2
            {
                hand.round.capped = true;
            }
        }
        hand.round.bet_to_cents = to_cents;
    }
    let raise_no = hand.round.full_raise_no;
    let cap = match &config.betting {
        BettingStructure::CapLimit { cap_cents, .. } => Some(*cap_cents),
        _ => None,
    };
    if let Some(p) = hand.player_mut(seat) {
        match kind {
            ActionKind::Fold => p.status = InHand::Folded,
            ActionKind::Check => p.checked = true,
            _ => {
                let added = to_cents - p.round_cents;
                p.round_cents = to_cents;
                p.hand_cents += added;
                if stack_after_cents == 0 || cap.is_some_and(|c| p.hand_cents >= c) {
                    p.status = InHand::AllIn;
                }
            }
        }
        p.acted = true;
        p.acted_at_raise_no = raise_no;
    }
    hand.round.opened = true;
    hand.advance_from(seat);
}

fn fixed_increment_cents_for(config: &TableConfig) -> Option<()> {
    matches!(config.betting, BettingStructure::FixedLimit { .. }).then_some(())
}

/// Chips put out for an action (R-BET-13, R-BET-14): what the action requires, what the chips
/// are worth, and the change the pot gives back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChipsJudged {
    pub judged: Judged,
    /// Value of the chips put out.
    pub chips_cents: Cents,
    /// Returned to the player from the pot (chips worth more than the action).
    pub change_cents: Cents,
    /// Missing (chips worth less than the action, not all in): a short bet or call.
    pub short_cents: Cents,
}

/// The value of chips that play at a table with this chip set: of its denominations (R-UNIT-1),
/// none below its minimum playable chip (R-UNIT-2: those are tip chips and never play, whatever
/// their number; ten $5 chips at a $25-minimum table are not a $50 bet).
pub fn playable_chips(chip_set: &crate::money::ChipSet, chips: &[crate::money::ChipCount]) -> Result<Cents, Rejection> {
    let chips_cents = crate::money::check_chips(chip_set, chips)?;
    let min_chip = chip_set.min_playable_chip_cents;
    if let Some(tip) = chips.iter().find(|c| c.denomination_cents < min_chip) {
        return Err(Rejection::new(TIP_CHIPS_DO_NOT_PLAY, "chips below the minimum playable chip never play")
            .with("denomination_cents", tip.denomination_cents)
            .with("count", tip.count)
            .with("min_playable_chip_cents", min_chip));
    }
    Ok(chips_cents)
}

/// R-BET-14: chips put out by the seat in turn. Without a declaration a single chip is a call
/// when facing a bet (however large; the change is returned), otherwise a bet of its value;
/// several undeclared chips are a call if they match, else a bet or raise to their value.
/// With a declaration the action is judged as declared. Chips worth less than the action
/// (and not the whole stack) are a short bet or call (R-BET-13), to be brought up.
pub fn judge_chips(table: &TableState, seat: Seat, chips: &[crate::money::ChipCount], declared: Option<Action>) -> Result<ChipsJudged, Rejection> {
    let (hand, config) = match (table.hand.as_ref(), table.config.as_ref()) {
        (Some(h), Some(c)) => (h, c),
        _ => return Err(Rejection::new(NO_HAND_IN_PROGRESS, "no hand is being played")),
    };
    let chips_cents = playable_chips(&config.chip_set, chips)?;
    let stack = table.playable_stack_cents(seat);
    if chips_cents > stack {
        return Err(Rejection::new(BET_EXCEEDS_STACK, "more chips than the stack").with("chips_cents", chips_cents).with("stack_cents", stack));
    }
    let round_cents = hand.player(seat).map_or(0, |p| p.round_cents);
    let owe = (hand.round.bet_to_cents - round_cents).max(0);
    let single_chip = chips.len() == 1 && chips[0].count == 1;
    let action = match declared {
        Some(a) => a,
        None if owe > 0 && (single_chip || chips_cents <= owe) => Action::Call,
        None => Action::Raise { to_cents: round_cents + chips_cents },
    };
    let action = if chips_cents == stack && declared.is_none() && !single_chip && chips_cents > owe { Action::AllIn } else { action };
    let judged = match judge_action(table, seat, action) {
        // Undeclared chips more than the call but short of a raise are a call, the rest change
        // (the seeds: chips "of sufficient value to raise" make a raise; "the player must at
        // least match that amount": the second betting pass had them refused, the chips out).
        Err(refused)
            if declared.is_none()
                && owe > 0
                && matches!(action, Action::Raise { .. })
                && [RAISE_BELOW_MINIMUM.code, FIXED_LIMIT_AMOUNT.code].contains(&refused.reason.code) =>
        {
            judge_action(table, seat, Action::Call)?
        }
        judged => judged?,
    };
    let short_cents = if chips_cents < judged.amount_cents && chips_cents < stack { judged.amount_cents - chips_cents } else { 0 };
    let change_cents = (chips_cents - judged.amount_cents).max(0);
    Ok(ChipsJudged { judged, chips_cents, change_cents, short_cents })
}

/// R-BET-13: the missing chips of a short bet or call, brought up from the stack before the
/// round ends.
pub fn judge_bring_up(table: &TableState, seat: Seat) -> Result<Cents, Rejection> {
    let Some(hand) = table.hand.as_ref() else {
        return Err(Rejection::new(NO_HAND_IN_PROGRESS, "no hand is being played"));
    };
    let short = hand.player(seat).map_or((0, 0), |p| (p.short_cents, p.short_round_index));
    if short.0 <= 0 {
        return Err(Rejection::new(NO_SHORT_BET, "the seat owes no chips for its action").with("seat", seat as Cents));
    }
    if short.1 != hand.round.index || hand.phase == HandPhase::Settled {
        return Err(Rejection::new(SHORT_BET_ROUND_ENDED, "a short bet is brought up only before its round ends")
            .with("short_cents", short.0)
            .with("round_index", hand.round.index as Cents));
    }
    let amount = short.0.min(table.playable_stack_cents(seat));
    if amount <= 0 {
        return Err(Rejection::new(BET_EXCEEDS_STACK, "no chips left to bring the bet up").with("stack_cents", 0));
    }
    Ok(amount)
}

/// R-BET-13, the seeds ("if the player is unaware of a previous bet and the dealer did NOT
/// announce it, the player may take back his bet"): a short call is taken back while it is the
/// hand's last action; its chips (`put_in_cents`) return to the stack.
pub fn judge_take_back(table: &TableState, seat: Seat) -> Result<Cents, Rejection> {
    let Some(hand) = table.hand.as_ref() else {
        return Err(Rejection::new(NO_HAND_IN_PROGRESS, "no hand is being played"));
    };
    match hand.take_back {
        Some(t) if t.seat == seat && t.round_index == hand.round.index && hand.phase != HandPhase::Settled => Ok(t.put_in_cents),
        _ => Err(Rejection::new(NO_SHORT_BET, "only a short call that is still the hand's last action is taken back")
            .with("seat", seat as Cents)
            .with("short_cents", hand.player(seat).map_or(0, |p| p.short_cents))),
    }
}

/// Undo the short call `hand.take_back` names (used by `evolve`): the seat is to act again,
/// facing the bet as before the call.
pub fn apply_take_back(hand: &mut HandState) {
    let Some(t) = hand.take_back.take() else { return };
    if let Some(p) = hand.player_mut(t.seat) {
        p.hand_cents -= t.put_in_cents;
        p.round_cents = t.round_cents_before;
        p.short_cents = 0;
        p.acted = t.acted_before;
        p.acted_at_raise_no = t.acted_at_raise_no_before;
    }
    hand.round.to_act = Some(t.seat);
}

/// Record a short (used by `evolve` on `Acted`): `short_cents` of the action were not put in.
pub fn apply_short(hand: &mut HandState, seat: Seat, short_cents: Cents) {
    let round = hand.round.index;
    if let Some(p) = hand.player_mut(seat) {
        p.hand_cents -= short_cents;
        p.short_cents += short_cents;
        p.short_round_index = round;
    }
}

/// Bring a short up (used by `evolve`).
pub fn apply_bring_up(hand: &mut HandState, seat: Seat, amount_cents: Cents, stack_after_cents: Cents) {
    if let Some(p) = hand.player_mut(seat) {
        p.hand_cents += amount_cents;
        p.short_cents -= amount_cents;
        if stack_after_cents == 0 && p.status == InHand::Active {
            p.status = InHand::AllIn;
        }
    }
}
