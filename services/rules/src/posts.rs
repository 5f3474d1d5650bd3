//! Forced bets and posts (section 4): antes, blinds, straddle, bring-in, kill, new-player and
//! missed-blind posts, short-stacked posts.

use crate::config::{StraddlePolicy, TableConfig};
use crate::hand::{HandPhase, HandState, InHand, PostKind};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::Seat;
use crate::table::TableState;

pub const POSTS_CLOSED: Reason = Reason::new("POSTS_CLOSED", "R-POST-1");
pub const SEAT_NOT_IN_HAND: Reason = Reason::new("SEAT_NOT_IN_HAND", "R-POST-1");
pub const DUPLICATE_POST: Reason = Reason::new("DUPLICATE_POST", "R-POST-2");
pub const POST_NOT_CONFIGURED: Reason = Reason::new("POST_NOT_CONFIGURED", "R-POST-2");
pub const POST_WRONG_AMOUNT: Reason = Reason::new("POST_WRONG_AMOUNT", "R-POST-7");
pub const STRADDLE_OUT_OF_POSITION: Reason = Reason::new("STRADDLE_OUT_OF_POSITION", "R-POST-4");
pub const ENTRY_POST_REQUIRED: Reason = Reason::new("ENTRY_POST_REQUIRED", "R-POST-3");

pub const REASONS: &[Reason] =
    &[POSTS_CLOSED, SEAT_NOT_IN_HAND, DUPLICATE_POST, POST_NOT_CONFIGURED, POST_WRONG_AMOUNT, STRADDLE_OUT_OF_POSITION, ENTRY_POST_REQUIRED];

/// R-POST-3: a player who sat down after the game started must post a live big blind (or be
/// in the big blind) before playing a hand. Checked at the player's first action.
pub fn check_entry_post(table: &TableState, hand: &HandState, seat: Seat) -> Result<(), Rejection> {
    let owes = table.seat(seat).is_some_and(|s| s.owes_entry_post);
    if owes && hand.round.index == 0 {
        return Err(Rejection::new(ENTRY_POST_REQUIRED, "a new player posts a live big blind to be dealt in")
            .with("seat", seat as Cents)
            .with("big_blind_cents", table.config.as_ref().map_or(0, |c| c.big_blind_cents())));
    }
    Ok(())
}

/// The full amount of a post of `kind` now (a short-stacked player may post less, all in).
pub fn nominal_cents(kind: PostKind, config: &TableConfig, hand: &HandState) -> Option<Cents> {
    let blind = |i: usize| config.blinds_cents.get(i).copied().filter(|b| *b > 0);
    let big = config.big_blind_cents();
    match kind {
        PostKind::Ante => (config.ante_cents > 0).then_some(config.ante_cents),
        PostKind::ButtonAnte => {
            (config.ante_cents > 0 && config.button_ante).then_some(config.ante_cents * hand.players.len() as Cents)
        }
        PostKind::SmallBlind | PostKind::MissedSmallBlindDead => blind(0).filter(|_| config.blinds_cents.len() >= 2),
        PostKind::BigBlind | PostKind::NewPlayer | PostKind::MissedBigBlind => (big > 0).then_some(big),
        PostKind::ThirdBlind => blind(2),
        PostKind::Straddle => {
            (config.straddle != StraddlePolicy::None && hand.round.bet_to_cents > 0).then_some(2 * hand.round.bet_to_cents)
        }
        PostKind::BringIn => config.bring_in_cents.filter(|b| *b > 0),
        PostKind::Kill => config.kill.map(|k| {
            let (num, den) = k.factor();
            big * num / den
        }),
    }
}

/// Judge a post (R-POST-1..7). Returns whether it puts the player all in.
pub fn judge_post(table: &TableState, seat: Seat, kind: PostKind, amount_cents: Cents) -> Result<bool, Rejection> {
    let (hand, config) = match (table.hand.as_ref(), table.config.as_ref()) {
        (Some(h), Some(c)) => (h, c),
        _ => return Err(Rejection::new(crate::betting::NO_HAND_IN_PROGRESS, "no hand is being played")),
    };
    if hand.phase != HandPhase::Betting || hand.round.index != 0 || hand.round.opened {
        return Err(Rejection::new(POSTS_CLOSED, "posts are made before the first action of the hand"));
    }
    let Some(p) = hand.player(seat) else {
        return Err(Rejection::new(SEAT_NOT_IN_HAND, format!("seat {seat} is not dealt in")).with("seat", seat as Cents));
    };
    if p.status != InHand::Active {
        return Err(Rejection::new(SEAT_NOT_IN_HAND, "the seat has no chips left to post").with("seat", seat as Cents));
    }
    if p.posted_mask & kind.bit() != 0 {
        return Err(Rejection::new(DUPLICATE_POST, format!("seat {seat} already posted {kind:?}")));
    }
    let Some(nominal) = nominal_cents(kind, config, hand) else {
        return Err(Rejection::new(POST_NOT_CONFIGURED, format!("{kind:?} is not part of this table's configuration")));
    };
    if kind == PostKind::Straddle {
        let utg = hand.next_to_act_after(hand.round.anchor_seat);
        let button_ok = config.straddle == StraddlePolicy::UnderTheGunOrButton && seat == hand.button_seat;
        if utg != Some(seat) && !button_ok {
            return Err(Rejection::new(STRADDLE_OUT_OF_POSITION, "a straddle is posted under the gun (or on the button where allowed)")
                .with("seat", seat as Cents));
        }
    }
    let stack = table.stack_cents(seat);
    let short_all_in = amount_cents < nominal && amount_cents == stack && amount_cents > 0;
    if amount_cents != nominal && !short_all_in {
        return Err(Rejection::new(POST_WRONG_AMOUNT, format!("{kind:?} must be the full amount, or the whole stack if short"))
            .with("amount_cents", amount_cents)
            .with("required_cents", nominal)
            .with("stack_cents", stack));
    }
    if amount_cents > stack {
        return Err(Rejection::new(crate::betting::BET_EXCEEDS_STACK, "post larger than the stack")
            .with("amount_cents", amount_cents)
            .with("stack_cents", stack));
    }
    Ok(amount_cents == stack)
}

/// Apply a post (used by `evolve`). `stack_after_cents` is the stack after the post.
pub fn apply_post(hand: &mut HandState, config: &TableConfig, seat: Seat, kind: PostKind, amount_cents: Cents, stack_after_cents: Cents) {
    let level = nominal_cents(kind, config, hand).unwrap_or(amount_cents).max(amount_cents);
    if let Some(p) = hand.player_mut(seat) {
        p.hand_cents += amount_cents;
        p.posted_mask |= kind.bit();
        if !kind.is_dead() {
            p.round_cents += amount_cents;
        }
        if stack_after_cents == 0 {
            p.status = InHand::AllIn;
        }
        if kind == PostKind::BringIn {
            // R-POST-5: the bring-in is the player's first action.
            p.acted = true;
        }
    }
    let r = &mut hand.round;
    if !kind.is_dead() {
        r.bet_to_cents = r.bet_to_cents.max(level);
    }
    match kind {
        PostKind::BigBlind | PostKind::ThirdBlind => {
            r.full_level_cents = r.full_level_cents.max(level);
            r.raises = r.raises.max(1);
            r.anchor_seat = seat;
        }
        PostKind::Straddle => {
            // R-POST-4: the straddle is live and the next minimum raise is measured from it.
            r.full_level_cents = level;
            r.min_raise_cents = level;
            r.raises = r.raises.saturating_add(1);
            r.anchor_seat = seat;
        }
        PostKind::Kill => {
            // R-POST-6: the kill blind becomes the blind; limits scale for this hand.
            hand.kill = config.kill;
            r.full_level_cents = level;
            r.min_raise_cents = r.min_raise_cents.max(level);
            r.raises = r.raises.max(1);
            r.anchor_seat = seat;
        }
        PostKind::BringIn => r.anchor_seat = seat,
        _ => {}
    }
    let anchor = hand.round.anchor_seat;
    hand.advance_from(anchor);
    if hand.phase == crate::hand::HandPhase::RoundComplete {
        // Posts never close the round by themselves: the dealer still has to deal; keep
        // betting open so the remaining players (if any) may act. Nobody to act = complete.
        hand.phase = if hand.round.to_act.is_some() { HandPhase::Betting } else { HandPhase::RoundComplete };
    }
}
