//! The hand in play: its life cycle and state (R-STAKE-1, R-BET-1).
//!
//! Life cycle, driven by the dealer's commands:
//! `StartHand` -> `Post`* (antes, blinds, straddle, bring-in, kill, new-player and missed-blind
//! posts) -> `Act`* until the round closes -> `NextRound` -> `Act`* ... -> `Showdown` (or the
//! last fold, which settles at once) -> `EndHand`.
//! Chips bet or posted go from the seat to `pot/0`; at settlement `pots` layers them into main
//! and side pots, `rake` takes rake and the jackpot drop, and awards go back to the seats.

use serde::{Deserialize, Serialize};

use crate::cards::Card;
use crate::config::KillPolicy;
use crate::money::Cents;
use crate::streams::Seat;

/// Where the hand is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HandPhase {
    /// Players are (or will be) acting in the current round.
    Betting,
    /// Nobody has to act in this round; next is `NextRound` or `Showdown`.
    RoundComplete,
    /// Pots are awarded; next is `EndHand`.
    Settled,
}

/// A player's standing in the hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InHand {
    Active,
    Folded,
    /// No chips left to bet (or capped, R-BET-10).
    AllIn,
}

/// A dealt player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandPlayer {
    pub seat: Seat,
    pub status: InHand,
    /// Live chips in front of the player in the current round (the "raise to" total, R-BET-5).
    pub round_cents: Cents,
    /// Everything the player put in the pot this hand, live and dead.
    pub hand_cents: Cents,
    /// The player has acted voluntarily in this round (posts do not count, a bring-in does).
    pub acted: bool,
    /// `BettingRound::full_raise_no` when the player last acted (R-BET-11 reopening).
    pub acted_at_raise_no: u32,
    /// Post kinds already posted this hand (bit set of `PostKind::bit`).
    pub posted_mask: u16,
    /// R-MARK-3: borrowed to raise, so may not go all in this hand.
    pub borrowed_to_raise: bool,
    /// R-MARK-3: borrowed in this hand (an IOU or a loan): a bet or raise after it is made with
    /// borrowed chips, and forfeits the all-in as borrowing to raise does.
    #[serde(default)]
    pub borrowed: bool,
    /// R-BET-13: chips the player's recorded action owes but did not put in (a short bet or
    /// call); not in `hand_cents` until brought up.
    #[serde(default)]
    pub short_cents: Cents,
    /// Round index in which the short was made (it can be brought up only in that round).
    #[serde(default)]
    pub short_round_index: u8,
    /// Dead chips that go whole into the main pot, outside the layering (R-POST-1: a button or
    /// big-blind ante; with `antes_to_main_pot`, every ante). Part of `hand_cents`.
    #[serde(default)]
    pub dead_main_cents: Cents,
    /// The player checked in this round (R-BET-2: a table without check-raise refuses that
    /// player's raise until the round ends).
    #[serde(default)]
    pub checked: bool,
    /// Stud: the up cards the dealer reported, in the order dealt (R-POST-5).
    #[serde(default, skip_serializing_if = "<[Card]>::is_empty")]
    pub up_cards: crate::cards::UpCards,
}

/// State of the current betting round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BettingRound {
    pub index: u8,
    /// Highest live total any player has in this round: what a call matches.
    pub bet_to_cents: Cents,
    /// The level set by the last full bet or raise (or the big blind): fixed limit completes from it.
    pub full_level_cents: Cents,
    /// Size of the last full bet or raise; the next raise adds at least this (R-BET-3).
    pub min_raise_cents: Cents,
    /// Bets and raises that count toward the fixed-limit cap (R-BET-6).
    pub raises: u8,
    /// The fixed-limit cap was reached with more than two players (R-BET-6).
    pub capped: bool,
    /// Count of full bets/raises; a player may raise again only after a later one (R-BET-11).
    pub full_raise_no: u32,
    /// Seat after which action starts (the big blind or straddle preflop, the button later).
    pub anchor_seat: Seat,
    /// R-POST-6, R-POST-4: a seat that acts in this round as if it sat right after another (a
    /// kill blind's poster "after the other blinds, regardless of relative position"; a
    /// straddler under `straddle_action_from_big_blind`, after the big blind): the others keep
    /// their order, the action starting after it (it is the anchor).
    #[serde(default)]
    pub acts_last: Option<ActsLast>,
    /// A voluntary action happened in this round (no more posts).
    pub opened: bool,
    /// Whose turn it is, if anybody's.
    pub to_act: Option<Seat>,
    /// Pot at the start of the round (pot-limit `S`, R-BET-7).
    pub start_pot_cents: Cents,
    /// R-BET-6, `TableConfig::open_pair_big_bet`: a bet or raise of the big bet was made on
    /// fourth street with an open pair showing; the rest of the round raises by the big bet.
    #[serde(default)]
    pub big_bet_made: bool,
    /// Two players were in the hand when the round started (R-BET-6, the heads-up exception
    /// under `TableConfig::heads_up_from_round_start`).
    #[serde(default)]
    pub started_heads_up: bool,
}

/// A seat placed, for a round's order of action, right after another (see
/// [`BettingRound::acts_last`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActsLast {
    pub seat: Seat,
    /// The seat it acts right after: the last blind (or straddle) before it.
    pub after: Seat,
}

/// The hand in play.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandState {
    pub hand_no: u64,
    pub button_seat: Seat,
    /// Dealt players in clockwise (ascending seat) order.
    pub players: Vec<HandPlayer>,
    pub phase: HandPhase,
    pub round: BettingRound,
    /// Chips in the middle (`pot/0`).
    pub pot_cents: Cents,
    /// R-POST-6: the kill blind was posted; limits scale.
    pub kill: Option<KillPolicy>,
    /// The hand reached a second round or a showdown (no flop, no drop: R-RAKE-1).
    pub flop_seen: bool,
    /// R-POST-5 (stud): third street waits for the bring-in, or for the low card to open
    /// for a full bet. Nobody else may act.
    #[serde(default)]
    pub awaiting_bring_in: bool,
    /// R-POT-3: chips above this contribution level were already paid at once (a side pot
    /// left to one player when the last opponent in it folded); settlement layers up to it.
    #[serde(default)]
    pub contribution_cap_cents: Option<Cents>,
    /// R-RAKE-1: the rakeable amounts of the side pots paid at once (after the pots below them),
    /// so that settlement rakes the hand as one (percentage, minimum and cap over all its pots).
    #[serde(default)]
    pub paid_at_once_bases: Vec<Cents>,
    /// Where this hand's blinds fall (R-POST-2), fixed when it is dealt.
    #[serde(default)]
    pub blinds: BlindPositions,
    /// R-BET-13 (seeds): the last action of the hand was a short call, which the seat may take
    /// back (it did not know of a bet the dealer did not announce): how to undo it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub take_back: Option<TakeBack>,
    /// R-POST-6 (kill trigger): the seat that must post the kill blind before anyone acts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill_owed_by: Option<Seat>,
    /// R-POST-4 option (the rock): the seat dealt in holding the rock; it owes a live straddle
    /// when it is under the gun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rock_holder: Option<Seat>,
    /// R-POST-3, the seeds' moving button: the missed blinds owed in this hand, fixed when it
    /// is dealt (one a seat, at most `MAX_SEATS`); see `posts::owe_missed_blinds`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missed_blinds_due: Vec<MissedBlindDue>,
    /// R-POST-1 option `missed_button_ante_owed`: the button antes missed that dealt players
    /// owe in this hand, fixed when it is dealt (one a seat); see `posts::track_missed_button_ante`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missed_antes_due: Vec<MissedAnteDue>,
    /// R-POST-1 option `missed_button_ante_owed`: the absent player the dead button sits on: the
    /// ante of this hand is theirs, owed on return, and nobody posts it now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button_ante_missed_by: Option<Seat>,
}

/// R-POST-1 option `missed_button_ante_owed`: a seat posts the button ante it missed
/// (`MissedButtonAnte`, `ante_cents`) in this hand before anyone acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissedAnteDue {
    pub seat: Seat,
    pub ante_cents: Cents,
}

/// R-POST-3, the seeds' moving button: a seat pays this missed blind (`MissedBigBlind` or
/// `MissedSmallBlind`, live) in this hand before anyone acts, "as if it were due".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissedBlindDue {
    pub seat: Seat,
    pub kind: PostKind,
}

/// R-BET-13: what a short call changed, to undo it if the seat takes it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TakeBack {
    pub seat: Seat,
    pub round_index: u8,
    /// The chips the call put in the pot, returned to the stack.
    pub put_in_cents: Cents,
    pub round_cents_before: Cents,
    pub acted_before: bool,
    pub acted_at_raise_no_before: u32,
}

/// Where the blinds of a hand fall (R-POST-2, R-POST-3); see `posts::blind_positions`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindPositions {
    /// The seat that posts the small blind; `None` for a dead small blind (dead button) or a
    /// single-blind game.
    pub small: Option<Seat>,
    /// The seat where the small blind falls, dealt or not (an absent player there misses it).
    pub small_position: Option<Seat>,
    pub big: Option<Seat>,
    /// With three blinds, the seat after the big blind.
    pub third: Option<Seat>,
}

impl HandState {
    pub fn player(&self, seat: Seat) -> Option<&HandPlayer> {
        self.players.iter().find(|p| p.seat == seat)
    }

    pub fn player_mut(&mut self, seat: Seat) -> Option<&mut HandPlayer> {
        self.players.iter_mut().find(|p| p.seat == seat)
    }

    pub fn index_of(&self, seat: Seat) -> Option<usize> {
        self.players.iter().position(|p| p.seat == seat)
    }

    /// Players not folded.
    pub fn live_count(&self) -> usize {
        self.players.iter().filter(|p| p.status != InHand::Folded).count()
    }

    /// Players who can still bet.
    pub fn active_count(&self) -> usize {
        self.players.iter().filter(|p| p.status == InHand::Active).count()
    }

    /// Does `p` still have to act in this round? A player who can bet must match the bet, and
    /// act once in the round unless nobody could contest a bet at the round's start
    /// ([`HandState::mark_uncontested`] marks those as having acted).
    pub fn needs_action(&self, p: &HandPlayer) -> bool {
        if p.status != InHand::Active {
            return false;
        }
        p.round_cents < self.round.bet_to_cents || !p.acted
    }

    /// At the start of a round (and while the forced bets go in): a player whose effective
    /// stack is zero, because no other live player has more than what the player already put
    /// in this round, has nothing to decide and is marked as having acted. Effective stacks
    /// only shrink while posts go in, so the marking never has to be undone.
    pub fn mark_uncontested(&mut self, stack_of: impl Fn(Seat) -> Cents) {
        // The two largest totals (round + stack) of the live players, the largest's seat.
        let (mut first, mut second, mut first_seat) = (0 as Cents, 0 as Cents, 0 as Seat);
        let (mut broke, mut max_round) = (false, 0 as Cents);
        for p in self.players.iter().filter(|p| p.status != InHand::Folded) {
            let stack = stack_of(p.seat);
            broke |= stack == 0 && p.status == InHand::Active;
            max_round = max_round.max(p.round_cents);
            let total = p.round_cents + stack;
            if total > first {
                (second, first, first_seat) = (first, total, p.seat);
            } else if total > second {
                second = total;
            }
        }
        // Two live players could still bet above every round total: nobody is uncontested.
        if !broke && second > max_round {
            return;
        }
        let raise_no = self.round.full_raise_no;
        for p in self.players.iter_mut().filter(|p| p.status == InHand::Active && !p.acted) {
            // The most any other live player could still put in against this one.
            let others = if p.seat == first_seat { second } else { first };
            if stack_of(p.seat) == 0 || others <= p.round_cents {
                p.acted = true;
                p.acted_at_raise_no = raise_no;
            }
        }
    }

    /// First player after `seat` in the round's order of action who has to act: clockwise, with
    /// the round's [`BettingRound::acts_last`] seat moved to right after the seat it follows.
    pub fn next_to_act_after(&self, seat: Seat) -> Option<Seat> {
        if let Some(last) = self.round.acts_last
            && let Some(moved) = self.player(last.seat)
        {
            let mut order: Vec<&HandPlayer> = self.players.iter().filter(|p| p.seat != last.seat).collect();
            if let Some(at) = order.iter().position(|p| p.seat == last.after) {
                order.insert(at + 1, moved);
                if let Some(at) = order.iter().position(|p| p.seat == seat) {
                    let (through, after) = order.split_at(at + 1);
                    return after.iter().chain(through).find(|p| self.needs_action(p)).map(|p| p.seat);
                }
            }
        }
        self.next_clockwise_to_act_after(seat)
    }

    /// First player clockwise (by seat) strictly after `seat` who has to act: positions at the
    /// table (under the gun, left of a straddler), whatever the round's order.
    pub fn next_clockwise_to_act_after(&self, seat: Seat) -> Option<Seat> {
        let start = self.players.iter().position(|p| p.seat > seat).unwrap_or(0);
        let (before, after) = self.players.split_at(start);
        after.iter().chain(before).find(|p| self.needs_action(p)).map(|p| p.seat)
    }

    /// Recompute whose turn it is after `seat` acted (or from the anchor) and close the round.
    /// While third street waits for the bring-in (R-POST-5) the turn stays with the bring-in
    /// seat the up cards named (or with nobody until they are reported), unless nobody is left
    /// who could bring in.
    pub fn advance_from(&mut self, seat: Seat) {
        if self.awaiting_bring_in {
            if self.players.iter().any(|p| p.status == InHand::Active && !p.acted) {
                self.phase = HandPhase::Betting;
                return;
            }
            self.awaiting_bring_in = false;
        }
        self.round.to_act = self.next_to_act_after(seat);
        if self.round.to_act.is_none() && self.phase == HandPhase::Betting {
            self.phase = HandPhase::RoundComplete;
        }
    }

    /// Clockwise order starting after the button (odd chips, R-POT-5).
    pub fn clockwise_from_button(&self, seats: &[Seat]) -> Vec<Seat> {
        let mut v: Vec<Seat> = seats.to_vec();
        self.sort_clockwise_from_button(&mut v);
        v
    }

    /// [`HandState::clockwise_from_button`] in place.
    pub fn sort_clockwise_from_button(&self, seats: &mut [Seat]) {
        let b = self.button_seat;
        seats.sort_by_key(|s| if *s > b { (0, *s) } else { (1, *s) });
    }
}

/// Kinds of forced bets (section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PostKind {
    /// R-POST-1, dead.
    Ante,
    /// R-POST-1 option: one player posts the ante for everyone, dead.
    ButtonAnte,
    /// R-POST-2, live.
    SmallBlind,
    BigBlind,
    ThirdBlind,
    /// R-POST-4, live, twice the current level.
    Straddle,
    /// R-POST-5 (stud), live, counts as the first action.
    BringIn,
    /// R-POST-6, live, scales the limits of this hand.
    Kill,
    /// R-POST-3: a new player posts a live big blind to be dealt in.
    NewPlayer,
    /// R-POST-3: a returning player's missed big blind, live (and, under the seeds' moving
    /// button, a big blind the rotation skipped).
    MissedBigBlind,
    /// R-POST-3: a returning player's missed small blind, dead.
    MissedSmallBlindDead,
    /// R-POST-1 option: the big blind posts the whole table's ante, dead, before the blind;
    /// it goes whole into the main pot.
    BigBlindAnte,
    /// R-POST-4: a sleeper blind from a seat other than under the gun: it only raises the
    /// amount to call; it buys neither the option nor last action.
    Sleeper,
    /// R-POST-3 option `missed_blinds_one_per_hand` (always under the seeds' moving button): a
    /// missed small blind, live, posted in a later hand than a missed big blind.
    MissedSmallBlind,
    /// R-POST-1 option `missed_button_ante_owed`: the button ante of a hand the player was
    /// absent for, posted on return, dead, whole into the main pot.
    MissedButtonAnte,
}

impl PostKind {
    pub fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// Dead posts go to the pot without counting toward the player's bet in the round.
    pub fn is_dead(self) -> bool {
        matches!(self, PostKind::Ante | PostKind::ButtonAnte | PostKind::BigBlindAnte | PostKind::MissedSmallBlindDead | PostKind::MissedButtonAnte)
    }

    /// Antes (R-POST-1): posted before any blind of the same player.
    pub fn is_ante(self) -> bool {
        matches!(self, PostKind::Ante | PostKind::ButtonAnte | PostKind::BigBlindAnte | PostKind::MissedButtonAnte)
    }

    /// The rule that says what this post is and how much it takes (a refusal of its amount
    /// names it).
    pub fn rule(self) -> &'static str {
        match self {
            PostKind::Ante | PostKind::ButtonAnte | PostKind::BigBlindAnte | PostKind::MissedButtonAnte => "R-POST-1",
            PostKind::SmallBlind | PostKind::BigBlind | PostKind::ThirdBlind => "R-POST-2",
            PostKind::NewPlayer | PostKind::MissedBigBlind | PostKind::MissedSmallBlindDead | PostKind::MissedSmallBlind => "R-POST-3",
            PostKind::Straddle | PostKind::Sleeper => "R-POST-4",
            PostKind::BringIn => "R-POST-5",
            PostKind::Kill => "R-POST-6",
        }
    }
}

/// What a player does when it is their turn (R-BET-2). Amounts are "raise to" totals for the
/// round (R-BET-5): `Bet { to_cents }` and `Raise { to_cents }` are the same request (the engine
/// classifies it), so an importer may map PHH `cbr X` to either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum Action {
    Fold,
    Check,
    Call,
    Bet { to_cents: Cents },
    Raise { to_cents: Cents },
    /// Complete an incomplete bet (bring-in or short all-in) to a full bet (R-POST-5, R-BET-11).
    Complete,
    /// A complete naming its total, as [`crate::legal_actions`] offers it (its `raise` range):
    /// refused unless the complete goes to exactly that total (R-BET-11).
    CompleteTo { to_cents: Cents },
    /// Everything the player has: a call, bet or raise for the whole stack.
    AllIn,
}

/// How the engine classified an accepted action (recorded in the event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ActionKind {
    Fold,
    Check,
    Call,
    Bet,
    Raise,
    Complete,
}

/// A stud up card the dealer reports for a seat (R-POST-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpCard {
    pub seat: Seat,
    pub card: Card,
}

/// What the dealer awards a seat when the cards are not ranked (R-POT-5): the chips the seat
/// collects from the pots, before any kitty chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatAward {
    pub seat: Seat,
    pub amount_cents: Cents,
}
