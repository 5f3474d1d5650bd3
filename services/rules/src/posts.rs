//! Forced bets and posts (section 4): antes, blinds, straddle, bring-in, kill, new-player and
//! missed-blind posts, short-stacked posts.

use crate::config::{ButtonPolicy, StraddlePolicy, TableConfig};
use crate::hand::{HandPhase, HandState, InHand, PostKind};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::Seat;
use crate::table::{TableEvent, TableState};

pub const POSTS_CLOSED: Reason = Reason::new("POSTS_CLOSED", "R-POST-1");
pub const SEAT_NOT_IN_HAND: Reason = Reason::new("SEAT_NOT_IN_HAND", "R-POST-1");
pub const DUPLICATE_POST: Reason = Reason::new("DUPLICATE_POST", "R-POST-2");
pub const POST_NOT_CONFIGURED: Reason = Reason::new("POST_NOT_CONFIGURED", "R-POST-2");
pub const POST_WRONG_AMOUNT: Reason = Reason::new("POST_WRONG_AMOUNT", "R-POST-7");
pub const STRADDLE_OUT_OF_POSITION: Reason = Reason::new("STRADDLE_OUT_OF_POSITION", "R-POST-4");
pub const ENTRY_POST_REQUIRED: Reason = Reason::new("ENTRY_POST_REQUIRED", "R-POST-3");
pub const MISSED_BLINDS_REQUIRED: Reason = Reason::new("MISSED_BLINDS_REQUIRED", "R-POST-3");
pub const SEAT_SITTING_OUT: Reason = Reason::new("SEAT_SITTING_OUT", "R-POST-3");
pub const ALREADY_SITTING_OUT: Reason = Reason::new("ALREADY_SITTING_OUT", "R-POST-3");
pub const NOT_SITTING_OUT: Reason = Reason::new("NOT_SITTING_OUT", "R-POST-3");
pub const BUTTON_NOT_DEALT: Reason = Reason::new("BUTTON_NOT_DEALT", "R-POST-3");

pub const REASONS: &[Reason] = &[
    POSTS_CLOSED,
    SEAT_NOT_IN_HAND,
    DUPLICATE_POST,
    POST_NOT_CONFIGURED,
    POST_WRONG_AMOUNT,
    STRADDLE_OUT_OF_POSITION,
    ENTRY_POST_REQUIRED,
    MISSED_BLINDS_REQUIRED,
    SEAT_SITTING_OUT,
    ALREADY_SITTING_OUT,
    NOT_SITTING_OUT,
    BUTTON_NOT_DEALT,
];

/// R-POST-3: a player who sat down after the game started must post a live big blind (or be
/// in the big blind) before playing a hand. Checked at the player's first action.
pub fn check_entry_post(table: &TableState, hand: &HandState, seat: Seat) -> Result<(), Rejection> {
    let owes = table.seat(seat).is_some_and(|s| s.owes_entry_post);
    if owes && hand.round.index == 0 {
        return Err(Rejection::new(ENTRY_POST_REQUIRED, "a new player posts a live big blind to be dealt in")
            .with("seat", seat as Cents)
            .with("big_blind_cents", table.config.as_ref().map_or(0, |c| c.big_blind_cents())));
    }
    // R-POST-3: a returning player posts the missed big blind live and the small blind dead
    // (the flags are cleared by those posts, or by the big blind in position).
    let missed = table.seat(seat).map_or((false, false), |s| (s.missed_big_blind, s.missed_small_blind));
    if (missed.0 || missed.1) && hand.round.index == 0 {
        return Err(Rejection::new(MISSED_BLINDS_REQUIRED, "a returning player posts the missed big blind live and the small blind dead")
            .with("seat", seat as Cents)
            .with("missed_big_blind", missed.0 as Cents)
            .with("missed_small_blind", missed.1 as Cents));
    }
    Ok(())
}

/// Seats strictly between `from` and `to`, clockwise over `1..=max_seats`.
fn seats_between(from: Seat, to: Seat, max_seats: u8) -> impl Iterator<Item = Seat> {
    let n = max_seats.max(1);
    let steps = (to as i16 - from as i16 - 1).rem_euclid(n as i16) as u8;
    (1..=steps).map(move |k| ((from - 1 + k) % n) + 1)
}

/// R-POST-3, applied by `evolve` on every post: a blind posted at `seat` passes the absent
/// (sat-out) seats since the previous blind of that kind, which owe it on return. Only one
/// set accumulates (flags, not counts). The big blind at a seat clears its missed blinds
/// (it "returns to the seat"); the returning posts clear what they pay.
pub fn track_missed_blinds(table: &mut TableState, seat: Seat, kind: PostKind) {
    let max_seats = table.config.as_ref().map_or(crate::MAX_SEATS as u8, |c| c.max_seats);
    let (previous, is_big) = match kind {
        PostKind::BigBlind => (table.last_big_blind_seat, true),
        PostKind::SmallBlind => (table.last_small_blind_seat, false),
        PostKind::MissedBigBlind | PostKind::NewPlayer => {
            if let Some(s) = table.seat_mut(seat) {
                s.missed_big_blind = false;
            }
            return;
        }
        PostKind::MissedSmallBlindDead => {
            if let Some(s) = table.seat_mut(seat) {
                s.missed_small_blind = false;
            }
            return;
        }
        _ => return,
    };
    if let Some(from) = previous.filter(|p| *p != seat && *p >= 1 && *p <= max_seats) {
        for passed in seats_between(from, seat, max_seats) {
            if let Some(s) = table.seat_mut(passed).filter(|s| s.sitting_out) {
                if is_big {
                    s.missed_big_blind = true;
                } else {
                    s.missed_small_blind = true;
                }
            }
        }
    }
    if is_big {
        table.last_big_blind_seat = Some(seat);
        if let Some(s) = table.seat_mut(seat) {
            s.missed_big_blind = false;
            s.missed_small_blind = false;
        }
    } else {
        table.last_small_blind_seat = Some(seat);
    }
}

/// R-POST-3: sit out (absent) or sit back in. Not while live in the hand in play.
pub fn decide_sit(table: &TableState, seat: Seat, out: bool) -> Result<TableEvent, Rejection> {
    let s = crate::ledger::occupied(table, seat)?;
    crate::ledger::not_live_in_hand(table, seat)?;
    match (out, s.sitting_out) {
        (true, true) => Err(Rejection::new(ALREADY_SITTING_OUT, "the player is already sitting out").with("seat", seat as Cents)),
        (false, false) => Err(Rejection::new(NOT_SITTING_OUT, "the player is not sitting out").with("seat", seat as Cents)),
        (true, false) => Ok(TableEvent::SatOut { seat }),
        (false, true) => Ok(TableEvent::SatIn { seat }),
    }
}

/// R-POST-3 at the deal: an absent player is not dealt in; under a moving or simplified
/// button the button is a dealt player (only a dead button may sit on an empty seat).
pub fn check_deal(table: &TableState, config: &TableConfig, button_seat: Seat, dealt_seats: &[Seat]) -> Result<(), Rejection> {
    if let Some(seat) = dealt_seats.iter().find(|s| table.seat(**s).is_some_and(|s| s.sitting_out)) {
        return Err(Rejection::new(SEAT_SITTING_OUT, "an absent player is not dealt in").with("seat", *seat as Cents));
    }
    if config.button_policy != ButtonPolicy::Dead && !dealt_seats.contains(&button_seat) {
        return Err(Rejection::new(BUTTON_NOT_DEALT, "with a moving or simplified button the button is a dealt player")
            .with("button_seat", button_seat as Cents));
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
        // R-POST-2: with a third blind, the big blind is the second of the three.
        PostKind::BigBlind => blind(1).or((big > 0).then_some(big)),
        PostKind::NewPlayer | PostKind::MissedBigBlind => (big > 0).then_some(big),
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
        PostKind::BigBlind => {
            r.full_level_cents = r.full_level_cents.max(level);
            r.raises = r.raises.max(1);
            r.anchor_seat = seat;
        }
        PostKind::ThirdBlind => {
            // R-POST-2: the third blind is the largest; the next raise is measured from it.
            r.full_level_cents = r.full_level_cents.max(level);
            r.min_raise_cents = r.min_raise_cents.max(level);
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
