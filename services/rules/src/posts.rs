//! Forced bets and posts (section 4): antes, blinds, straddle, bring-in, kill, new-player and
//! missed-blind posts, short-stacked posts.

use crate::config::{ButtonPolicy, StraddlePolicy, StraddleRaise, TableConfig};
use crate::hand::{ActsLast, BlindPositions, HandPhase, HandState, InHand, MissedAnteDue, MissedBlindDue, PostKind};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::Seat;
use crate::table::{TableEvent, TableState};

pub const POSTS_CLOSED: Reason = Reason::new("POSTS_CLOSED", "R-POST-1");
pub const SEAT_NOT_IN_HAND: Reason = Reason::new("SEAT_NOT_IN_HAND", "R-POST-1");
pub const DUPLICATE_POST: Reason = Reason::new("DUPLICATE_POST", "R-POST-2");
pub const POST_NOT_CONFIGURED: Reason = Reason::new("POST_NOT_CONFIGURED", "R-POST-2");
/// A post of another amount than its kind takes: from a player short of it, R-POST-7 (all in for
/// the whole stack); from one who has it, the rule of the kind posted ([`PostKind::rule`]).
pub const POST_WRONG_AMOUNT: Reason = Reason::new("POST_WRONG_AMOUNT", "R-POST-7");
pub const STRADDLE_OUT_OF_POSITION: Reason = Reason::new("STRADDLE_OUT_OF_POSITION", "R-POST-4");
pub const RESTRADDLE_LIMIT: Reason = Reason::new("RESTRADDLE_LIMIT", "R-POST-4");
pub const ENTRY_POST_REQUIRED: Reason = Reason::new("ENTRY_POST_REQUIRED", "R-POST-3");
pub const MISSED_BLINDS_REQUIRED: Reason = Reason::new("MISSED_BLINDS_REQUIRED", "R-POST-3");
pub const SEAT_SITTING_OUT: Reason = Reason::new("SEAT_SITTING_OUT", "R-POST-3");
pub const ALREADY_SITTING_OUT: Reason = Reason::new("ALREADY_SITTING_OUT", "R-POST-3");
pub const NOT_SITTING_OUT: Reason = Reason::new("NOT_SITTING_OUT", "R-POST-3");
pub const BUTTON_NOT_DEALT: Reason = Reason::new("BUTTON_NOT_DEALT", "R-POST-3");
pub const BIG_BLIND_OUT_OF_TURN: Reason = Reason::new("BIG_BLIND_OUT_OF_TURN", "R-POST-3");
/// R-POST-3: a simplified or moving button moves on one dealt player a hand; a dead button goes
/// where the last small blind was. Either way, from three players up, never on a blind.
pub const BUTTON_OUT_OF_TURN: Reason = Reason::new("BUTTON_OUT_OF_TURN", "R-POST-3");
pub const BLIND_OUT_OF_POSITION: Reason = Reason::new("BLIND_OUT_OF_POSITION", "R-POST-2");
pub const ANTE_BEFORE_BLIND: Reason = Reason::new("ANTE_BEFORE_BLIND", "R-POST-1");
pub const ANTE_OUT_OF_POSITION: Reason = Reason::new("ANTE_OUT_OF_POSITION", "R-POST-1");
pub const SLEEPER_OUT_OF_POSITION: Reason = Reason::new("SLEEPER_OUT_OF_POSITION", "R-POST-4");
pub const BRING_IN_OUT_OF_POSITION: Reason = Reason::new("BRING_IN_OUT_OF_POSITION", "R-POST-5");
/// R-POST-2: the blinds are forced bets: nobody acts before they are in.
pub const BLINDS_NOT_POSTED: Reason = Reason::new("BLINDS_NOT_POSTED", "R-POST-2");
/// R-POST-1: the antes are posted before the deal: nobody acts before they are in.
pub const ANTES_NOT_POSTED: Reason = Reason::new("ANTES_NOT_POSTED", "R-POST-1");
/// R-POST-3 option `missed_blinds_one_per_hand` and the seeds' moving button: one missed blind
/// per hand, the largest first.
pub const ONE_MISSED_BLIND_PER_HAND: Reason = Reason::new("ONE_MISSED_BLIND_PER_HAND", "R-POST-3");
pub const MISSED_BIG_BLIND_FIRST: Reason = Reason::new("MISSED_BIG_BLIND_FIRST", "R-POST-3");
/// R-POST-7 option `big_blind_covers_small_blind`: a big blind short of the small blind (and
/// its ante) is not dealt in.
pub const BIG_BLIND_SHORT: Reason = Reason::new("BIG_BLIND_SHORT", "R-POST-7");
/// R-POST-6 with a kill trigger: the player who caused the kill has not posted it.
pub const KILL_NOT_POSTED: Reason = Reason::new("KILL_NOT_POSTED", "R-POST-6");
/// R-POST-6: a kill blind from a seat that does not owe it, or a second one in a hand.
pub const KILL_NOT_DUE: Reason = Reason::new("KILL_NOT_DUE", "R-POST-6");
/// R-POST-3: an entry or missed-blind post from a seat that does not owe it.
pub const POST_NOT_OWED: Reason = Reason::new("POST_NOT_OWED", "R-POST-3");
/// R-POST-4 option (the seeds' rock): the holder under the gun posts a live straddle first.
pub const ROCK_STRADDLE_NOT_POSTED: Reason = Reason::new("ROCK_STRADDLE_NOT_POSTED", "R-POST-4");

pub const REASONS: &[Reason] = &[
    POSTS_CLOSED,
    SEAT_NOT_IN_HAND,
    DUPLICATE_POST,
    POST_NOT_CONFIGURED,
    POST_WRONG_AMOUNT,
    STRADDLE_OUT_OF_POSITION,
    RESTRADDLE_LIMIT,
    ENTRY_POST_REQUIRED,
    MISSED_BLINDS_REQUIRED,
    SEAT_SITTING_OUT,
    ALREADY_SITTING_OUT,
    NOT_SITTING_OUT,
    BUTTON_NOT_DEALT,
    BIG_BLIND_OUT_OF_TURN,
    BUTTON_OUT_OF_TURN,
    BLIND_OUT_OF_POSITION,
    ANTE_BEFORE_BLIND,
    ANTE_OUT_OF_POSITION,
    SLEEPER_OUT_OF_POSITION,
    BRING_IN_OUT_OF_POSITION,
    BLINDS_NOT_POSTED,
    ANTES_NOT_POSTED,
    ONE_MISSED_BLIND_PER_HAND,
    MISSED_BIG_BLIND_FIRST,
    BIG_BLIND_SHORT,
    KILL_NOT_POSTED,
    KILL_NOT_DUE,
    POST_NOT_OWED,
    ROCK_STRADDLE_NOT_POSTED,
];

/// R-POST-1 and R-POST-2: before anyone acts in the first round, the forced bets are in. The
/// antes first: every dealt player's ante, or the button's ante for the table (any seat's when
/// the button was dealt no cards), or the big blind's; then every blind of the hand (small,
/// big, third, as the table has them and as they fell at the deal), each from its seat. A
/// player all in already (a short stack that paid the ante first) owes nothing more; a dead
/// small blind (dead button) falls on no seat and is not owed. Under the seeds' moving button the
/// missed blinds due in this hand are forced bets too ("as if they were due for the upcoming
/// hand"). A kill, a straddle and the bring-in are not owed before the action (the bring-in is
/// the first action of stud).
pub fn check_forced_posts(hand: &HandState, config: &TableConfig) -> Result<(), Rejection> {
    if hand.round.index != 0 {
        return Ok(());
    }
    check_antes_in(hand, config, "before anyone acts")?;
    check_blinds_in(hand, config, "before anyone acts")?;
    let owes = |seat: Seat, kind: PostKind| owes_post(hand, seat, kind);
    // R-POST-4 option, the seeds' rock: its holder, under the gun, posts a live straddle of
    // twice the big blind before anyone acts (all in for less if short).
    // Under the gun is the seat after the last blind, before anyone has acted (the fixes' pass:
    // compared with the moving anchor, the rule caught a holder on the button or in the big
    // blind after others acted, and the hand could not go on).
    if let Some(holder) = hand.rock_holder
        && config.mandatory_straddle
        && !hand.round.opened
        && hand.blinds.third.or(hand.blinds.big).and_then(|last| hand.next_clockwise_to_act_after(last)) == Some(holder)
        && owes(holder, PostKind::Straddle)
        && let Some(straddle_cents) = nominal_cents(PostKind::Straddle, config, hand)
    {
        return Err(Rejection::new(ROCK_STRADDLE_NOT_POSTED, format!("seat {holder} holds the rock: under the gun, it posts a live straddle before anyone acts"))
            .with("seat", holder as Cents)
            .with("straddle_cents", straddle_cents));
    }
    // R-POST-6 (kill trigger): the player who caused the kill posts it before anyone acts.
    if let (Some(seat), Some(kill_cents)) = (hand.kill_owed_by, nominal_cents(PostKind::Kill, config, hand))
        && owes(seat, PostKind::Kill)
    {
        return Err(Rejection::new(KILL_NOT_POSTED, format!("seat {seat} caused the kill and posts the kill blind before anyone acts"))
            .with("seat", seat as Cents)
            .with("kill_cents", kill_cents));
    }
    for due in &hand.missed_blinds_due {
        let Some(blind_cents) = nominal_cents(due.kind, config, hand) else { continue };
        if owes(due.seat, due.kind) {
            return Err(Rejection::new(BLINDS_NOT_POSTED, format!("seat {} posts the {:?} it owes, live, before anyone acts", due.seat, due.kind))
                .with("seat", due.seat as Cents)
                .with("blind_cents", blind_cents));
        }
    }
    Ok(())
}

/// Whether `seat` is dealt in, has chips, and has not posted `kind` yet.
fn owes_post(hand: &HandState, seat: Seat, kind: PostKind) -> bool {
    hand.player(seat).is_some_and(|p| p.status == InHand::Active && p.posted_mask & kind.bit() == 0)
}

/// R-POST-1: the antes are in: every dealt player's ante, or the button's ante for the table
/// (any seat's when the button was dealt no cards), or the big blind's. `when` ends the refusal.
fn check_antes_in(hand: &HandState, config: &TableConfig, when: &str) -> Result<(), Rejection> {
    let owes = |seat: Seat, kind: PostKind| owes_post(hand, seat, kind);
    let antes_missing = |seat: Seat, ante_cents: Cents, what: &str| {
        Err(Rejection::new(ANTES_NOT_POSTED, format!("seat {seat} posts {what} {when}"))
            .with("seat", seat as Cents)
            .with("ante_cents", ante_cents))
    };
    if let Some(ante_cents) = nominal_cents(PostKind::Ante, config, hand)
        && let Some(p) = hand.players.iter().find(|p| owes(p.seat, PostKind::Ante))
    {
        return antes_missing(p.seat, ante_cents, "the ante");
    }
    if let Some(ante_cents) = nominal_cents(PostKind::ButtonAnte, config, hand)
        && let Some(due) = button_ante_seat(hand)
        && owes(due, PostKind::ButtonAnte)
    {
        return antes_missing(due, ante_cents, "the button ante");
    }
    if let (Some(ante_cents), Some(big)) = (nominal_cents(PostKind::BigBlindAnte, config, hand), hand.blinds.big)
        && owes(big, PostKind::BigBlindAnte)
    {
        return antes_missing(big, ante_cents, "the big blind ante");
    }
    // R-POST-1 option `missed_button_ante_owed`: an ante is posted before the deal, the one a
    // returning player owes too.
    if let Some(due) = hand.missed_antes_due.iter().find(|d| owes(d.seat, PostKind::MissedButtonAnte)) {
        return antes_missing(due.seat, due.ante_cents, "the button ante it missed");
    }
    Ok(())
}

/// R-POST-2: every blind of the hand is in (small, big, third, as the table has them and as
/// they fell at the deal), each from its seat; a seat all in already owes nothing more, a dead
/// small blind (dead button) falls on no seat.
fn check_blinds_in(hand: &HandState, config: &TableConfig, when: &str) -> Result<(), Rejection> {
    let blinds = [
        (PostKind::SmallBlind, hand.blinds.small, "small blind"),
        (PostKind::BigBlind, hand.blinds.big, "big blind"),
        (PostKind::ThirdBlind, hand.blinds.third, "third blind"),
    ];
    for (kind, seat, name) in blinds {
        let (Some(seat), Some(blind_cents)) = (seat, nominal_cents(kind, config, hand)) else { continue };
        if owes_post(hand, seat, kind) {
            return Err(Rejection::new(BLINDS_NOT_POSTED, format!("seat {seat} posts the {name} {when}"))
                .with("seat", seat as Cents)
                .with("blind_cents", blind_cents));
        }
    }
    Ok(())
}

/// R-POST-3: a player who sat down after the game started must post a live big blind (or be
/// in the big blind) before playing a hand. Checked at the player's first action.
pub fn check_entry_post(table: &TableState, hand: &HandState, seat: Seat) -> Result<(), Rejection> {
    let Some(s) = table.seat(seat).filter(|_| hand.round.index == 0) else { return Ok(()) };
    if s.owes_entry_post {
        return Err(Rejection::new(ENTRY_POST_REQUIRED, "a new player posts a live big blind to be dealt in")
            .with("seat", seat as Cents)
            .with("big_blind_cents", table.config.as_ref().map_or(0, |c| c.big_blind_cents())));
    }
    // R-POST-3: a returning player posts the missed big blind live and the small blind dead
    // (the flags are cleared by those posts, or by the big blind in position).
    let missed = (s.missed_big_blind, s.missed_small_blind);
    // The seeds' moving button: the missed blind due in this hand was fixed at the deal (the
    // others are owed in later hands), and it is a forced bet (`check_forced_posts`).
    if table.config.as_ref().is_some_and(|c| c.button_policy == ButtonPolicy::Moving) {
        let unpaid = |kind: PostKind| hand.player(seat).is_some_and(|p| p.posted_mask & kind.bit() == 0);
        if let Some(due) = hand.missed_blinds_due.iter().find(|d| d.seat == seat && unpaid(d.kind)) {
            return Err(Rejection::new(MISSED_BLINDS_REQUIRED, format!("the seat posts its {:?}, live, before playing", due.kind))
                .with("seat", seat as Cents)
                .with("missed_big_blind", missed.0 as Cents)
                .with("missed_small_blind", missed.1 as Cents));
        }
        return Ok(());
    }
    // The seeds' house rule: one missed blind per hand, the largest first; the small blind is
    // owed from the hand after the one the big blind was posted in.
    let one_per_hand = table.config.as_ref().is_some_and(|c| c.missed_blinds_one_per_hand);
    let big_posted_now = hand.player(seat).is_some_and(|p| p.posted_mask & PostKind::MissedBigBlind.bit() != 0);
    if one_per_hand && (missed.0 || (missed.1 && !big_posted_now)) {
        return Err(Rejection::new(MISSED_BLINDS_REQUIRED, "a returning player posts one missed blind a hand, the big blind first, live")
            .with("seat", seat as Cents)
            .with("missed_big_blind", missed.0 as Cents)
            .with("missed_small_blind", missed.1 as Cents));
    }
    if one_per_hand {
        return Ok(());
    }
    if missed.0 || missed.1 {
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

/// R-POST-2 / R-POST-3: the blind positions of a hand dealt to `dealt` (ascending seats) with
/// the button on `button_seat`. Heads-up the button posts the small blind. Otherwise the small
/// blind is the first dealt seat left of the button and the big blind the next (simplified and
/// moving button; what a moving button's rotation skips is owed by `owe_missed_blinds`). With a
/// dead button the big blind moves one player on from the previous hand's big blind, and the
/// small blind is posted by that previous big blind if still dealt in, else it is dead.
/// A single blind (`blinds_cents = [0, big]` or `[big]`) is posted left of the button, or by
/// the button itself with `button_blind`.
pub fn blind_positions(config: &TableConfig, previous_big: Option<Seat>, button_seat: Seat, dealt: &[Seat]) -> BlindPositions {
    let configured = config.blinds_cents.iter().filter(|b| **b > 0).count();
    if configured == 0 || dealt.len() < 2 {
        return BlindPositions::default();
    }
    let after = |from: Seat, k: usize| {
        let i = dealt.iter().position(|s| *s > from).unwrap_or(0);
        dealt[(i + k) % dealt.len()]
    };
    if config.single_blind() {
        let big = if config.button_blind && dealt.contains(&button_seat) { button_seat } else { after(button_seat, 0) };
        return BlindPositions { small: None, small_position: None, big: Some(big), third: None };
    }
    let previous = previous_big.filter(|_| config.button_policy == ButtonPolicy::Dead);
    let (small, small_position, big) = match (dealt.len(), previous) {
        (2, Some(prev)) => {
            let big = after(prev, 0);
            let small = if dealt[0] == big { dealt[1] } else { dealt[0] };
            (Some(small), Some(small), big)
        }
        (2, None) => {
            let small = if dealt.contains(&button_seat) { button_seat } else { after(button_seat, 0) };
            let big = after(small, 0);
            (Some(small), Some(small), big)
        }
        (_, Some(prev)) => {
            let big = after(prev, 0);
            let small = dealt.contains(&prev).then_some(prev).filter(|s| *s != big);
            (small, Some(prev), big)
        }
        (_, None) => {
            let three_from_button = config.first_blind_on_button && config.blinds_cents.len() >= 3 && dealt.contains(&button_seat);
            let small = if three_from_button { button_seat } else { after(button_seat, 0) };
            (Some(small), Some(small), after(small, 0))
        }
    };
    let third = (config.blinds_cents.len() >= 3 && dealt.len() >= 3).then(|| after(big, 0));
    BlindPositions { small, small_position, big: Some(big), third }
}

/// A seated player who is not dealt in (sat out, or simply left out of the deal) and is not a
/// newcomer still owing the entry post: an absent player, who misses the blinds that pass.
/// `dealt` is the bit set of the dealt seats (bit `seat`).
fn absent(table: &TableState, seat: Seat, dealt: u64) -> bool {
    table.seat(seat).is_some_and(|s| !s.owes_entry_post && (s.sitting_out || dealt & (1u64 << (seat & 63)) == 0))
}

/// R-POST-3, applied by `evolve` when a hand is dealt: the blinds of this hand pass the absent
/// seats since the previous hand's blinds; those seats owe them on return. One set at most
/// (flags, not counts). The first hand of a game (no blinds before it) passes the absent seats
/// from the button on: a seat sitting out between the button and the big blind missed it (the
/// seeds pass: "a player who is away from their seat and misses one or more blinds is also
/// required to post to reenter the game"; one away for a game's first hand had owed nothing):
/// one between the small and the big blind missed the big blind, one between the button and
/// the small blind the small blind.
/// Records this hand's blind positions for the next hand.
pub fn track_missed_blinds(table: &mut TableState, positions: BlindPositions, dealt: &[Seat], button: Seat) {
    let max_seats = table.config.as_ref().map_or(crate::MAX_SEATS as u8, |c| c.max_seats);
    let valid = |s: &Seat| *s >= 1 && *s <= max_seats;
    let dealt = dealt.iter().fold(0u64, |m, s| m | (1u64 << (s & 63)));
    // Nobody absent (the usual deal): nothing can be missed.
    if !(1..=max_seats).any(|s| absent(table, s, dealt)) {
        table.last_big_blind_seat = positions.big.or(table.last_big_blind_seat);
        table.last_small_blind_seat = positions.small_position.or(table.last_small_blind_seat);
        return;
    }
    let mut missed_big: [bool; crate::MAX_SEATS + 1] = [false; crate::MAX_SEATS + 1];
    let mut missed_small: [bool; crate::MAX_SEATS + 1] = [false; crate::MAX_SEATS + 1];
    // The first hand: a seat between the small and the big blind would have been the big blind,
    // one between the button and the small blind the small blind.
    let first_hand = table.last_big_blind_seat.filter(valid).is_none();
    let button = Some(button).filter(|seat| first_hand && valid(seat));
    let big_from = if first_hand { positions.small_position.filter(valid).or(button) } else { table.last_big_blind_seat.filter(valid) };
    // A first hand's big blind on the button (`button_blind`) passed nobody (the wave-2 pass:
    // every seat away was charged one).
    if let (Some(from), Some(to)) = (big_from, positions.big)
        && !(first_hand && from == to)
    {
        for passed in seats_between(from, to, max_seats).filter(|s| absent(table, *s, dealt)) {
            missed_big[passed as usize] = true;
        }
    }
    let small_from = if first_hand { button } else { table.last_small_blind_seat.filter(valid) };
    if let (Some(from), Some(to)) = (small_from, positions.small_position) {
        // From the button, its own small blind (heads-up) passed nobody.
        let through = seats_between(from, to, max_seats)
            .filter(move |_| !(first_hand && from == to))
            .chain(std::iter::once(to).filter(|s| *s != from));
        for passed in through.filter(|s| absent(table, *s, dealt)) {
            missed_small[passed as usize] = true;
        }
    }
    for seat in 1..=max_seats {
        if let Some(s) = table.seat_mut(seat) {
            s.missed_big_blind |= missed_big[seat as usize];
            s.missed_small_blind |= missed_small[seat as usize];
        }
    }
    if positions.big.is_some() {
        table.last_big_blind_seat = positions.big;
    }
    if positions.small_position.is_some() {
        table.last_small_blind_seat = positions.small_position;
    }
}

/// R-POST-3, the seeds' moving button: the dealt players this deal's rotation skipped. "Any
/// 'missed blinds' are paid by the player whom they skipped": the player due the big blind (the
/// first dealt player after the last hand's big blind) is skipped when this hand's big blind
/// lies beyond it, because a player before it left; likewise the small blind. A big blind that
/// stays on its seat (a player came back between the button and the blinds) skipped nobody:
/// the player due it has it in the next hand. A newcomer owing the entry post pays a big blind
/// anyway and is passed over. Nothing is skipped heads-up, or in the hand after a heads-up one
/// (the seeds' two-player rule puts the small blind on the button), or without two blinds.
/// Computed from the last hand's blinds, before `track_missed_blinds` moves them on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SkippedBlinds {
    pub big: Option<Seat>,
    pub small: Option<Seat>,
}

/// The [`SkippedBlinds`] of a deal to `dealt` (ascending seats) with the blinds at `positions`.
pub fn skipped_blinds(table: &TableState, positions: BlindPositions, dealt: &[Seat]) -> SkippedBlinds {
    let Some(config) = table.config.as_ref() else { return SkippedBlinds::default() };
    let two_blinds = config.blinds_cents.len() == 2 && config.blinds_cents.iter().all(|b| *b > 0);
    let after_heads_up = table.last_button_seat.is_none() || table.last_small_blind_seat == table.last_button_seat;
    if config.button_policy != ButtonPolicy::Moving || !two_blinds || dealt.len() < 3 || after_heads_up {
        return SkippedBlinds::default();
    }
    let max_seats = config.max_seats;
    let due = |s: &Seat| dealt.contains(s) && table.seat(*s).is_some_and(|held| !held.owes_entry_post);
    let skipped = |previous: Option<Seat>, now: Option<Seat>| {
        let (previous, now) = (previous.filter(|s| *s >= 1 && *s <= max_seats)?, now?);
        if previous == now {
            return None;
        }
        seats_between(previous, now, max_seats).find(due)
    };
    SkippedBlinds {
        big: skipped(table.last_big_blind_seat, positions.big),
        small: skipped(table.last_small_blind_seat, positions.small_position),
    }
}

/// R-POST-3, the seeds' moving button, applied by `evolve` when a hand is dealt (after
/// `track_missed_blinds`): the skipped players owe the blinds they were skipped for, and every
/// dealt player with missed blinds pays one of them in this hand, "as if they were due for the
/// upcoming hand, with one blind paid per player, per hand, biggest blind first", live:
/// - the big blind in position pays its blind (which clears the missed ones, R-POST-3), and the
///   third blind its own;
/// - a missed big blind is paid now (`MissedBigBlind`); a player owing it in the small blind's
///   position misses that small blind "because a bigger blind was due": nobody posts it in
///   this hand, and it "will be paid by the player in the following hand" (`MissedSmallBlind`);
/// - else a missed small blind is paid now (`MissedSmallBlind`), unless the player is in the
///   small blind's position (one blind a hand: that one, the missed one in the next hand).
///
/// The blinds due are forced bets (`check_forced_posts`). No other policy is touched.
pub fn owe_missed_blinds(table: &mut TableState, hand: &mut HandState, skipped: SkippedBlinds) {
    if table.config.as_ref().is_none_or(|c| c.button_policy != ButtonPolicy::Moving) {
        return;
    }
    if let Some(s) = skipped.big.and_then(|seat| table.seat_mut(seat)) {
        s.missed_big_blind = true;
    }
    if let Some(s) = skipped.small.and_then(|seat| table.seat_mut(seat)) {
        s.missed_small_blind = true;
    }
    hand.missed_blinds_due.clear();
    for i in 0..hand.players.len() {
        let seat = hand.players[i].seat;
        let Some(s) = table.seat_mut(seat) else { continue };
        if s.owes_entry_post || hand.blinds.big == Some(seat) || hand.blinds.third == Some(seat) {
            continue;
        }
        let kind = if s.missed_big_blind {
            if hand.blinds.small == Some(seat) {
                hand.blinds.small = None;
                s.missed_small_blind = true;
            }
            PostKind::MissedBigBlind
        } else if s.missed_small_blind && hand.blinds.small != Some(seat) {
            PostKind::MissedSmallBlind
        } else {
            continue;
        };
        hand.missed_blinds_due.push(MissedBlindDue { seat, kind });
    }
}

/// R-POST-1: who posts the button ante, once a hand: the button, or, with the button on an empty
/// seat (a dead button), the dealt player before the first blind, where the button would sit
/// (every seat had been let post it then: three of them paid the table's ante, the betting pass).
/// Nobody with `missed_button_ante_owed` when the dead button sits on an absent player: that
/// player owes it (`track_missed_button_ante`).
fn button_ante_seat(hand: &HandState) -> Option<Seat> {
    if hand.player(hand.button_seat).is_some() {
        return Some(hand.button_seat);
    }
    if hand.button_ante_missed_by.is_some() {
        return None;
    }
    let first_blind = hand.blinds.small.or(hand.blinds.big)?;
    let i = hand.index_of(first_blind)?;
    let n = hand.players.len();
    Some(hand.players[(i + n - 1) % n].seat)
}

/// R-POST-1 option `missed_button_ante_owed`, the seeds (000, 001): "the dealer (or some other
/// position relative to the button) provides the ante for each player ... causes minor
/// inequities if other players come and go or miss their turn to deal. During such times, the
/// player can be given a special button indicating the need to pay an ante to the pot ... upon
/// their return". Applied by `evolve` when a hand is dealt, as missed blinds are: a seated
/// player absent (`absent`) when the button reaches or passes their seat, since the last hand's
/// button, owes the table's ante of this hand (one at most, the last; flag and amount in
/// `SeatState::missed_button_ante_cents`).
///
/// Who pays the ante of the hand missed: when the dead button sits on the absent player, nobody
/// now. The seed has the absent player "pay an ante to the pot upon their return", and the
/// ante is theirs, like the small blind a dead button leaves dead; the player before the first
/// blind, who paid it again before, would pay twice in an orbit (the inequity the seed names).
/// When the button passes the absent seat (a simplified or moving button skips to the next
/// player), that button pays its own ante as usual, and the absent player still owes the one
/// missed on return, as a missed big blind is owed though the hand had its big blind.
///
/// Then every dealt player owing a missed ante posts it in this hand before anyone acts
/// (`HandState::missed_antes_due`, `check_antes_in`), but the player whose turn to post the
/// button ante it is again: that one pays it in position, which clears the one missed (the
/// button came back to the seat: the player was away a whole orbit and gained nothing, as a
/// big blind in position clears missed blinds, R-POST-3). Run before the last button moves on.
pub fn track_missed_button_ante(table: &mut TableState, hand: &mut HandState, dealt: &[Seat]) {
    let Some(config) = table.config.as_ref() else { return };
    let (owed, ante_cents, max_seats) = (config.missed_button_ante_owed && config.button_ante, config.ante_cents, config.max_seats);
    let dealt_mask = dealt.iter().fold(0u64, |m, s| m | (1u64 << (s & 63)));
    let button = hand.button_seat;
    if let Some(last) = table.last_button_seat.filter(|last| owed && ante_cents > 0 && *last != button && *last >= 1 && *last <= max_seats) {
        // Both bounded by `TableConfig::validate` and `MAX_SEATS` (R-UNIT-1): no wrap.
        let table_ante_cents = ante_cents * hand.players.len() as Cents;
        let reached = seats_between(last, button, max_seats).chain(std::iter::once(button));
        let mut missed: [bool; crate::MAX_SEATS + 1] = [false; crate::MAX_SEATS + 1];
        for seat in reached.filter(|s| absent(table, *s, dealt_mask)) {
            missed[seat as usize] = true;
        }
        for seat in 1..=max_seats {
            if let Some(s) = table.seat_mut(seat).filter(|_| missed[seat as usize]) {
                s.missed_button_ante_cents = table_ante_cents;
            }
        }
        if missed.get(button as usize).copied().unwrap_or(false) {
            hand.button_ante_missed_by = Some(button);
        }
    }
    let in_position = button_ante_seat(hand).filter(|_| table.config.as_ref().is_some_and(|c| c.button_ante && c.ante_cents > 0));
    hand.missed_antes_due = hand
        .players
        .iter()
        .filter(|p| Some(p.seat) != in_position)
        .filter_map(|p| table.seat(p.seat).map(|s| MissedAnteDue { seat: p.seat, ante_cents: s.missed_button_ante_cents }))
        .filter(|due| due.ante_cents > 0)
        .collect();
}

/// R-POST-3, applied by `evolve` on a post: the big blind in position clears the seat's
/// missed blinds (the big blind "returns to the seat"); the returning posts clear what they pay.
pub fn clear_missed_blinds(table: &mut TableState, seat: Seat, kind: PostKind) {
    // The seeds' moving button: "any blind a player misses ... will be paid by the player in the
    // following hand": the big blind in position pays the big blind owed, not the small one.
    let moving = table.config.as_ref().is_some_and(|c| c.button_policy == ButtonPolicy::Moving);
    let Some(s) = table.seat_mut(seat) else { return };
    match kind {
        // A third blind is a big blind and more: it pays what the big blind in position pays.
        PostKind::BigBlind | PostKind::ThirdBlind => {
            s.missed_big_blind = false;
            if !moving {
                s.missed_small_blind = false;
            }
        }
        PostKind::MissedBigBlind | PostKind::NewPlayer => s.missed_big_blind = false,
        PostKind::MissedSmallBlindDead | PostKind::MissedSmallBlind => s.missed_small_blind = false,
        // R-POST-1 option `missed_button_ante_owed`: the missed ante paid, or the button ante
        // paid in position (`track_missed_button_ante`).
        PostKind::MissedButtonAnte | PostKind::ButtonAnte => s.missed_button_ante_cents = 0,
        _ => {}
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
/// button the button is a dealt player (only a dead button may sit on an empty seat), and from
/// three dealt players up it moves on to the next one.
pub fn check_deal(table: &TableState, config: &TableConfig, button_seat: Seat, dealt_seats: &[Seat]) -> Result<(), Rejection> {
    if let Some(seat) = dealt_seats.iter().find(|s| table.seat(**s).is_some_and(|s| s.sitting_out)) {
        return Err(Rejection::new(SEAT_SITTING_OUT, "an absent player is not dealt in").with("seat", *seat as Cents));
    }
    if config.button_policy == ButtonPolicy::Dead {
        // The big blind moves on from the previous hand's by itself (`blind_positions`); the
        // button goes to where the last small blind was (dead if that player left), heads-up to
        // the small blind. The button decides who acts first after the first round and who
        // gets odd chips: the dealer does not choose it (the second betting pass named seat 4
        // where seat 2 was due).
        let Some(previous_big) = table.last_big_blind_seat else { return Ok(()) };
        if config.blinds_cents.iter().filter(|b| **b > 0).count() < 2 {
            return Ok(());
        }
        let (seats, n) = sorted_seats(dealt_seats);
        let dealt = &seats[..n];
        // With a dead button the blinds do not depend on the button named (the big blind moves
        // on from the previous one), so they are known before the button is judged.
        let blinds = blind_positions(config, Some(previous_big), button_seat, dealt);
        let before_small = blinds.small_position.map(|small| dealt.iter().copied().rev().find(|s| *s < small).unwrap_or(dealt[dealt.len() - 1]));
        // R-POST-2, R-POST-3: from three players up the button is never on a seat that posts
        // this hand's small or big blind: it decides the order of action after the first round
        // and the odd chip (R-POT-5), and a blind on the button gives one player both. Heads-up
        // the button posts the small blind (R-POST-2).
        let on_a_blind = |seat: Seat| dealt.len() > 2 && (blinds.small == Some(seat) || blinds.big == Some(seat));
        // The last small blind's seat, unless this hand's blinds fall on it (from heads-up to
        // three players, the last small blind is the new big blind: hostile tester's variant B):
        // then the dealt player just before the small blind.
        let expected = if dealt.len() == 2 {
            blinds.small
        } else {
            table.last_small_blind_seat.filter(|last| !on_a_blind(*last)).or(before_small)
        };
        // Where seats came and went around the blinds, a room may put the button on the next
        // dealt player after the last button, or on the dealt player just before the small
        // blind; with everybody in their seats all three are the same seat. Not on a blind: the
        // next player after the last button may be the small blind (hostile tester's variant A:
        // the last small blind left, and the dealer moved the button onto the new one).
        let next_after_last = table.last_button_seat.map(|last| dealt.iter().copied().find(|s| *s > last).unwrap_or(dealt[0]));
        // Heads-up the button is the small blind and nothing else: the player before the small
        // blind is then the big blind, who would act first after the flop (the betting pass).
        let room_choice = dealt.len() > 2
            && !on_a_blind(button_seat)
            && (Some(button_seat) == next_after_last || Some(button_seat) == before_small);
        if let Some(expected) = expected
            && button_seat != expected
            && !room_choice
        {
            let r = Rejection::new(BUTTON_OUT_OF_TURN, "a dead button goes to where the last small blind was, never on a blind (heads-up: to the small blind)")
                .with("button_seat", button_seat as Cents)
                .with("expected_button_seat", expected as Cents);
            return Err(match (on_a_blind(button_seat), blinds.small, blinds.big) {
                (true, small, Some(big)) => r.with("small_blind_seat", small.map_or(0, |s| s as Cents)).with("big_blind_seat", big as Cents),
                _ => r,
            });
        }
        return Ok(());
    }
    if !dealt_seats.contains(&button_seat) {
        return Err(Rejection::new(BUTTON_NOT_DEALT, "with a moving or simplified button the button is a dealt player")
            .with("button_seat", button_seat as Cents));
    }
    let (seats, n) = sorted_seats(dealt_seats);
    let dealt = &seats[..n];
    // R-POST-3, the seeds' simplified button: "the dealer button moves to the next active player
    // on the left, and the small and big blinds are paid by the first and second players
    // remaining to the left ... always rotates the button, but results in 'missed blinds'": a
    // player the big blind skips because the player before left has missed it (owes nothing).
    // The seeds' moving button rotates the same way ("as in Simplified, the button moves to the
    // left to the next active player, and the blinds move to the next two active players");
    // the players it skips owe the blinds (`skipped_blinds`).
    // Heads-up the rule below (the big blind keeps moving) still applies.
    if dealt.len() > 2 {
        let Some(previous) = table.last_button_seat else {
            return Ok(());
        };
        let expected = dealt.iter().copied().find(|s| *s > previous).unwrap_or(dealt[0]);
        if button_seat != expected {
            return Err(Rejection::new(BUTTON_OUT_OF_TURN, "a simplified or moving button moves on to the next dealt player after the last hand's button")
                .with("button_seat", button_seat as Cents)
                .with("expected_button_seat", expected as Cents)
                .with("previous_button_seat", previous as Cents));
        }
        return Ok(());
    }
    // R-POST-3 heads-up (seeds: "there is always a big blind"; it moves on one player a hand,
    // also from three players to two): the button the dealer names must put the big blind on the first
    // dealt player after the previous hand's big blind, so no player skips a blind or pays one
    // twice by where the button is put.
    let Some(previous) = table.last_big_blind_seat else {
        return Ok(());
    };
    let Some(big) = blind_positions(config, None, button_seat, dealt).big else {
        return Ok(());
    };
    // A newcomer who still owes the entry post may be passed over (R-POST-3: they post a live
    // big blind to play, or wait for the big blind).
    let due = |s: &Seat| table.seat(*s).is_none_or(|held| !held.owes_entry_post);
    let candidates = || dealt.iter().copied().filter(due);
    let Some(expected) = candidates().find(|s| *s > previous).or_else(|| candidates().next()) else {
        return Ok(());
    };
    if big != expected {
        return Err(Rejection::new(BIG_BLIND_OUT_OF_TURN, "the big blind moves on to the first dealt player after the last hand's big blind")
            .with("button_seat", button_seat as Cents)
            .with("big_blind_seat", big as Cents)
            .with("expected_big_blind_seat", expected as Cents)
            .with("previous_big_blind_seat", previous as Cents));
    }
    Ok(())
}

/// The dealt seats in clockwise (ascending) order, without allocating: the array and how many.
fn sorted_seats(dealt_seats: &[Seat]) -> ([Seat; crate::MAX_SEATS], usize) {
    let mut seats = [0 as Seat; crate::MAX_SEATS];
    let n = dealt_seats.len().min(crate::MAX_SEATS);
    seats[..n].copy_from_slice(&dealt_seats[..n]);
    seats[..n].sort_unstable();
    (seats, n)
}

/// R-POST-7 option, the seeds: "some cardrooms require players in the big blind position to
/// have at least enough chips to cover the small blind (and ante if applicable) in order to be
/// dealt in ... will not be dealt in unless they re-buy". Checked at the deal, on the seat the
/// blinds put the big blind on. By default a short big blind is all in for what it has.
pub fn check_big_blind_covers_small_blind(table: &TableState, config: &TableConfig, button_seat: Seat, dealt_seats: &[Seat]) -> Result<(), Rejection> {
    if !config.big_blind_covers_small_blind {
        return Ok(());
    }
    let (seats, n) = sorted_seats(dealt_seats);
    let dealt = &seats[..n];
    let Some(big) = blind_positions(config, table.last_big_blind_seat, button_seat, dealt).big else {
        return Ok(());
    };
    let small_blind_cents = config.blinds_cents.first().copied().filter(|b| *b > 0 && config.blinds_cents.len() >= 2).unwrap_or(0);
    // The big blind's own ante: every player's, or the table's with a big-blind ante.
    let ante_cents = if config.button_ante { 0 } else { config.ante_cents.max(0) };
    // Both bounded by `TableConfig::validate` (R-UNIT-1): the sum cannot wrap.
    let required_cents = small_blind_cents + ante_cents;
    let stack_cents = table.playable_stack_cents(big);
    if stack_cents < required_cents {
        return Err(Rejection::new(BIG_BLIND_SHORT, format!("seat {big} in the big blind has less than the small blind and ante: not dealt in unless it re-buys"))
            .with("seat", big as Cents)
            .with("stack_cents", stack_cents)
            .with("small_blind_cents", small_blind_cents)
            .with("ante_cents", ante_cents)
            .with("required_cents", required_cents));
    }
    Ok(())
}

/// The full amount of a post of `kind` now (a short-stacked player may post less, all in).
pub fn nominal_cents(kind: PostKind, config: &TableConfig, hand: &HandState) -> Option<Cents> {
    let blind = |i: usize| config.blinds_cents.get(i).copied().filter(|b| *b > 0);
    let big = config.big_blind_cents();
    let per_player_ante = config.ante_cents > 0 && !config.button_ante && !config.big_blind_ante;
    match kind {
        PostKind::Ante => per_player_ante.then_some(config.ante_cents),
        // R-POST-1: the button posts the ante of every dealt player.
        PostKind::ButtonAnte => {
            (config.ante_cents > 0 && config.button_ante).then_some(config.ante_cents * hand.players.len() as Cents)
        }
        // R-POST-1: the big blind posts the table's ante, one amount whatever the table size.
        PostKind::BigBlindAnte => (config.ante_cents > 0 && config.big_blind_ante).then_some(config.ante_cents),
        PostKind::SmallBlind => blind(0).filter(|_| config.blinds_cents.len() >= 2),
        // R-POST-3: the missed small blind is dead, or live one hand after the big blind
        // (`missed_blinds_one_per_hand`, and the seeds' moving button).
        PostKind::MissedSmallBlindDead => blind(0).filter(|_| config.blinds_cents.len() >= 2 && !config.one_missed_blind_per_hand()),
        PostKind::MissedSmallBlind => blind(0).filter(|_| config.blinds_cents.len() >= 2 && config.one_missed_blind_per_hand()),
        // R-POST-2: with a third blind, the big blind is the second of the three.
        PostKind::BigBlind => blind(1).or((big > 0).then_some(big)),
        PostKind::NewPlayer | PostKind::MissedBigBlind => (big > 0).then_some(big),
        PostKind::ThirdBlind => blind(2),
        // R-POST-4: twice the big blind, a re-straddle twice the straddle before it; a sleeper
        // only raises the amount to call (the fixes' pass: after a $4 sleeper the straddle was
        // asked at $8).
        PostKind::Straddle => (config.straddle != StraddlePolicy::None && hand.round.bet_to_cents > 0).then(|| 2 * straddled_over(config, hand)),
        PostKind::Sleeper => (config.sleeper_allowed && hand.round.bet_to_cents > 0).then_some(2 * hand.round.bet_to_cents),
        PostKind::BringIn => config.bring_in_cents.filter(|b| *b > 0),
        PostKind::Kill => config.kill.map(|k| {
            let (num, den) = k.factor();
            big * num / den
        }),
        // R-POST-1 option: the amount is the seat's (`HandState::missed_antes_due`).
        PostKind::MissedButtonAnte => None,
    }
}

/// What a straddle doubles: the last straddle's amount, else the live blind the hand's bet rests
/// on (a kill blind, a third blind, or the big blind).
fn straddled_over(config: &TableConfig, hand: &HandState) -> Cents {
    let last_straddle = hand.players.iter().filter(|p| p.posted_mask & PostKind::Straddle.bit() != 0).map(|p| p.round_cents).max();
    let blind = if hand.kill.is_some() {
        nominal_cents(PostKind::Kill, config, hand)
    } else if hand.blinds.third.is_some() {
        nominal_cents(PostKind::ThirdBlind, config, hand)
    } else {
        nominal_cents(PostKind::BigBlind, config, hand)
    };
    last_straddle.or(blind).unwrap_or(hand.round.bet_to_cents)
}

/// R-POST-2 / R-POST-1 / R-POST-4 / R-POST-5: the seat a post must come from, if it is bound
/// to one. Entry and missed-blind posts, kills and per-player antes come from their own seats.
fn check_position(hand: &HandState, config: &TableConfig, seat: Seat, kind: PostKind) -> Result<(), Rejection> {
    let out = |reason: Reason, expected: Option<Seat>, what: &str| {
        let r = Rejection::new(reason, format!("{what}; seat {seat} is not in that position")).with("seat", seat as Cents);
        Err(match expected {
            Some(e) => r.with("expected_seat", e as Cents),
            None => r,
        })
    };
    let b = hand.blinds;
    match kind {
        PostKind::SmallBlind if b.small != Some(seat) => {
            out(BLIND_OUT_OF_POSITION, b.small, "the small blind is posted left of the button (heads-up: by the button)")
        }
        PostKind::BigBlind | PostKind::BigBlindAnte if b.big != Some(seat) => {
            out(BLIND_OUT_OF_POSITION, b.big, "the big blind is posted by the next player after the small blind")
        }
        PostKind::ThirdBlind if b.third != Some(seat) => out(BLIND_OUT_OF_POSITION, b.third, "the third blind follows the big blind"),
        PostKind::ButtonAnte if button_ante_seat(hand) != Some(seat) => {
            out(ANTE_OUT_OF_POSITION, button_ante_seat(hand), "the button posts the button ante (a dead button: the player before the first blind)")
        }
        PostKind::Straddle => {
            // R-POST-4: a sleeper "buys neither the option nor last action": a straddle after
            // one, for the same amount, would buy last action for the price of a call.
            if hand.players.iter().any(|p| p.posted_mask & PostKind::Sleeper.bit() != 0) {
                return out(STRADDLE_OUT_OF_POSITION, None, "a straddle comes before any sleeper");
            }
            let straddles = hand.players.iter().filter(|p| p.posted_mask & PostKind::Straddle.bit() != 0).count();
            if straddles > usize::from(config.max_restraddles) {
                return Err(Rejection::new(RESTRADDLE_LIMIT, "no more re-straddles than the table allows")
                    .with("seat", seat as Cents)
                    .with("straddles", straddles as Cents)
                    .with("max_restraddles", Cents::from(config.max_restraddles)));
            }
            // Posted before the kill: the order of action and the bet never depend on the order
            // the dealer keys them in (the fixes' pass: a straddle keyed after a kill cost twice
            // as much and put the killer second).
            if hand.kill.is_some() {
                return out(STRADDLE_OUT_OF_POSITION, None, "a straddle comes before the kill");
            }
            // At the table: left of the last straddle (a re-straddle), else under the gun.
            let utg = hand.next_clockwise_to_act_after(hand.round.anchor_seat);
            let button_ok = config.straddle == StraddlePolicy::UnderTheGunOrButton && seat == hand.button_seat;
            // R-POST-4 option, the seeds' Mississippi straddle: the first straddle from any
            // seat but a blind (it then acts last; a re-straddle still comes from its left).
            let blind_seat = [b.small, b.big, b.third].contains(&Some(seat));
            let anywhere_ok = config.straddle_any_position && straddles == 0 && !blind_seat;
            if utg != Some(seat) && !button_ok && !anywhere_ok {
                return out(STRADDLE_OUT_OF_POSITION, utg, "a straddle is posted under the gun (or on the button where allowed)");
            }
            Ok(())
        }
        PostKind::Sleeper => {
            // From any other seat than under the gun (that is a straddle) or a blind.
            let utg = hand.next_clockwise_to_act_after(hand.round.anchor_seat);
            let blind_bits = PostKind::SmallBlind.bit() | PostKind::BigBlind.bit() | PostKind::ThirdBlind.bit() | PostKind::Straddle.bit();
            let posted_blind = hand.player(seat).is_some_and(|p| p.posted_mask & blind_bits != 0);
            if utg == Some(seat) || posted_blind {
                return out(SLEEPER_OUT_OF_POSITION, None, "a sleeper comes from a seat other than under the gun or a blind");
            }
            Ok(())
        }
        // R-POST-6: one kill a hand; with a trigger, only from the player who caused it.
        PostKind::Kill => {
            if hand.kill.is_some() {
                return out(KILL_NOT_DUE, None, "one kill blind a hand");
            }
            if config.kill_trigger.is_some() && hand.kill_owed_by != Some(seat) {
                return out(KILL_NOT_DUE, hand.kill_owed_by, "the kill blind is posted by the player who caused the kill");
            }
            Ok(())
        }
        PostKind::BringIn => {
            if !hand.awaiting_bring_in {
                return Err(Rejection::new(POSTS_CLOSED, "the bring-in was already made").with("seat", seat as Cents));
            }
            match hand.round.to_act {
                Some(low) if low != seat => out(BRING_IN_OUT_OF_POSITION, Some(low), "the up cards name another seat to bring in"),
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// Judge a post (R-POST-1..7). Returns whether it puts the player all in.
pub fn judge_post(table: &TableState, seat: Seat, kind: PostKind, amount_cents: Cents) -> Result<bool, Rejection> {
    let (hand, config) = match (table.hand.as_ref(), table.config.as_ref()) {
        (Some(h), Some(c)) => (h, c),
        _ => return Err(Rejection::new(crate::betting::NO_HAND_IN_PROGRESS, "no hand is being played")),
    };
    // Posts go in before the first voluntary action, even when the antes left nobody to act;
    // an entry or missed-blind post a seat owes, before that seat's own first action (R-POST-3:
    // the betting pass found such a seat could only fold once anyone had acted).
    let owed_kind = matches!(kind, PostKind::NewPlayer | PostKind::MissedBigBlind | PostKind::MissedSmallBlind | PostKind::MissedSmallBlindDead);
    let before_own_action = hand.player(seat).is_some_and(|p| !p.acted);
    if hand.phase == HandPhase::Settled || hand.round.index != 0 || (hand.round.opened && !(owed_kind && before_own_action)) {
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
    // R-POST-1 option `missed_button_ante_owed`: the missed ante is the seat's own amount, owed
    // in this hand only by a seat that missed one.
    let missed_ante_cents = hand.missed_antes_due.iter().find(|d| d.seat == seat).map(|d| d.ante_cents);
    if kind == PostKind::MissedButtonAnte && missed_ante_cents.is_none() {
        return Err(Rejection::new(Reason::new(POST_NOT_OWED.code, "R-POST-1"), format!("seat {seat} owes no missed button ante in this hand"))
            .with("seat", seat as Cents)
            .with("missed_button_ante_cents", table.seat(seat).map_or(0, |s| s.missed_button_ante_cents)));
    }
    let nominal = if kind == PostKind::MissedButtonAnte { missed_ante_cents } else { nominal_cents(kind, config, hand) };
    // R-POST-2: every blind before a straddle, sleeper or kill: the bet each makes and who acts
    // first are judged with the blinds in (the betting pass: a kill keyed before the blinds
    // acted first instead of last; a straddle before them was called not configured).
    let comes_after_blinds = match kind {
        PostKind::Straddle => config.straddle != StraddlePolicy::None,
        PostKind::Sleeper => config.sleeper_allowed,
        PostKind::Kill => nominal.is_some(),
        _ => false,
    };
    if comes_after_blinds {
        check_blinds_in(hand, config, &format!("before the {kind:?}"))?;
    }
    let Some(nominal) = nominal else {
        // The rule of the post refused (a sleeper's is R-POST-4, a kill's R-POST-6).
        return Err(Rejection::new(Reason::new(POST_NOT_CONFIGURED.code, kind.rule()), format!("{kind:?} is not part of this table's configuration")));
    };
    if config.button_policy == ButtonPolicy::Moving {
        check_one_missed_blind_due(table, hand, seat, kind)?;
    }
    check_position(hand, config, seat, kind)?;
    // R-POST-3: an entry or missed-blind post comes only from a seat that owes it (any other
    // would be chips in the pot that no call counts).
    let owed = table.seat(seat).map_or((false, false, false), |s| (s.owes_entry_post, s.missed_big_blind, s.missed_small_blind));
    // A seat in the big (or third) blind this hand pays what it owes with that blind, and posts
    // no second one on top (the fixes' pass: a new player in the big blind posted the entry and
    // the big blind). One in the small blind posts what it owes too, live, and its small blind is
    // then dead (a seat's live posts do not add up, `apply_post`): refused, it had been left able
    // only to fold, the blind it posted lost (the second betting pass).
    let in_a_blind = [hand.blinds.big, hand.blinds.third].contains(&Some(seat));
    let not_owed = match kind {
        PostKind::NewPlayer => !owed.0 || in_a_blind,
        PostKind::MissedBigBlind => !owed.1 || in_a_blind,
        PostKind::MissedSmallBlind => !owed.2 || in_a_blind,
        // In the big (or third) blind the blind clears what the seat owes, as above: keyed
        // before it, the dead small blind had been taken, and the seat paid more than keyed
        // after it (the fixes' pass).
        PostKind::MissedSmallBlindDead => !owed.2 || in_a_blind,
        _ => false,
    };
    if not_owed {
        return Err(Rejection::new(POST_NOT_OWED, format!("seat {seat} owes no {kind:?}"))
            .with("seat", seat as Cents)
            .with("owes_entry_post", owed.0 as Cents)
            .with("missed_big_blind", owed.1 as Cents)
            .with("missed_small_blind", owed.2 as Cents));
    }
    // R-POST-3 option: one missed blind per hand, the largest first.
    if kind == PostKind::MissedSmallBlind {
        let big_owed = table.seat(seat).is_some_and(|s| s.missed_big_blind);
        if big_owed || p.posted_mask & PostKind::MissedBigBlind.bit() != 0 {
            return Err(Rejection::new(ONE_MISSED_BLIND_PER_HAND, "one missed blind a hand, the big blind first; the small blind in a later hand")
                .with("seat", seat as Cents)
                .with("missed_big_blind", big_owed as Cents));
        }
    }
    // R-POST-3: a seat owing both missed blinds posts the big blind, live, before the small
    // blind, dead (the biggest first, as the seeds order missed blinds): whatever order the
    // dealer keys them in, a short stack's chips play live first (the pots pass: the two orders
    // settled differently, a short player's whole stack going dead in one of them).
    // So does a seat in the small blind owing the missed big blind: its small blind then goes
    // dead after it (keyed first, the small blind had stayed live and the missed big blind, all
    // in, had made a side pot the seat could not win).
    let small_after_big = kind == PostKind::SmallBlind && hand.blinds.small == Some(seat);
    if (kind == PostKind::MissedSmallBlindDead || small_after_big) && owed.1 && !in_a_blind && p.posted_mask & PostKind::MissedBigBlind.bit() == 0 {
        return Err(Rejection::new(MISSED_BIG_BLIND_FIRST, format!("seat {seat} posts its missed big blind (live) before the {kind:?}"))
            .with("seat", seat as Cents));
    }
    // R-POST-1: a (short-stacked) player pays the ante first, then the blind.
    let own_ante = match (kind.is_ante(), hand.blinds.big == Some(seat) && config.big_blind_ante) {
        (true, _) => None,
        (false, true) => nominal_cents(PostKind::BigBlindAnte, config, hand).map(|_| PostKind::BigBlindAnte),
        (false, false) => nominal_cents(PostKind::Ante, config, hand).map(|_| PostKind::Ante),
    };
    if let Some(ante) = own_ante
        && p.posted_mask & ante.bit() == 0
    {
        return Err(Rejection::new(ANTE_BEFORE_BLIND, format!("seat {seat} posts its {ante:?} before {kind:?}"))
            .with("seat", seat as Cents));
    }
    // R-POST-1: every ante before any blind, the other players' too: the bet a blind makes is
    // judged with the antes in (the betting pass: a small blind posted before the big blind's
    // ante, which put the big blind all in, left the hand's bet at the small blind).
    if !kind.is_ante() {
        check_antes_in(hand, config, &format!("before the {kind:?}"))?;
    }
    let stack = table.playable_stack_cents(seat);
    // R-POST-7 is for forced bets: a straddle or sleeper is a choice (the rock's straddle aside),
    // and one short of its amount had set the round's bet at the full straddle, which nobody
    // had put in (the betting pass). A stack short of it calls or raises all in instead.
    let voluntary = matches!(kind, PostKind::Straddle | PostKind::Sleeper)
        && !(kind == PostKind::Straddle && config.mandatory_straddle && hand.rock_holder == Some(seat));
    let short_all_in = amount_cents < nominal && amount_cents == stack && amount_cents > 0 && !voluntary;
    // R-POST-4 option, the seeds' Mississippi straddle: in no limit "at least a minimum raise".
    let straddle_above = kind == PostKind::Straddle
        && config.straddle_at_least
        && matches!(config.betting, crate::config::BettingStructure::NoLimit)
        && amount_cents > nominal;
    if amount_cents != nominal && !short_all_in && !straddle_above {
        // A player short of the post breaks R-POST-7 (all in for what they have); one who has
        // it, the rule of the post's kind.
        let rule = if stack < nominal && !voluntary { POST_WRONG_AMOUNT.rule } else { kind.rule() };
        // A voluntary post has no short form: the message says so (the games pass: a short
        // straddle was told the whole stack would do).
        let short = if voluntary { "a voluntary post is never short: a stack short of it calls or raises all in instead" } else { "or the whole stack if short" };
        return Err(Rejection::new(Reason::new(POST_WRONG_AMOUNT.code, rule), format!("{kind:?} must be the full amount, {short}"))
            .with("amount_cents", amount_cents)
            .with("required_cents", nominal)
            .with("stack_cents", stack));
    }
    if amount_cents > stack {
        return Err(Rejection::new(crate::betting::BET_EXCEEDS_STACK, "post larger than the stack")
            .with("amount_cents", amount_cents)
            .with("stack_cents", stack));
    }
    // R-UNIT-2: a straddle above the nominal amount is whole minimum playable chips too.
    if straddle_above && amount_cents != stack && !config.chip_set.is_playable(amount_cents) {
        return Err(Rejection::new(crate::money::NOT_MULTIPLE_OF_MIN_CHIP, "a straddle is whole minimum playable chips")
            .with("amount_cents", amount_cents)
            .with("min_playable_chip_cents", config.chip_set.min_playable_chip_cents));
    }
    Ok(amount_cents == stack)
}

/// R-POST-3, the seeds' moving button: "one blind paid per player, per hand, biggest blind
/// first". A seat pays the missed blind due in this hand (`owe_missed_blinds`) and no other: a
/// missed blind it owes for a later hand, or the small blind it misses because the big blind
/// is due, is refused.
fn check_one_missed_blind_due(table: &TableState, hand: &HandState, seat: Seat, kind: PostKind) -> Result<(), Rejection> {
    let due = |kind: PostKind| hand.missed_blinds_due.iter().any(|d| d.seat == seat && d.kind == kind);
    let owed = table.seat(seat).map_or((false, false), |s| (s.missed_big_blind, s.missed_small_blind));
    let refused = |what: &str| {
        Err(Rejection::new(ONE_MISSED_BLIND_PER_HAND, format!("one blind a hand, the biggest first: {what}"))
            .with("seat", seat as Cents)
            .with("missed_big_blind", owed.0 as Cents)
            .with("missed_small_blind", owed.1 as Cents))
    };
    let deferred_small = hand.blinds.small.is_none() && hand.blinds.small_position == Some(seat);
    if kind == PostKind::SmallBlind && deferred_small && due(PostKind::MissedBigBlind) {
        return refused("the missed big blind is due in this hand, the small blind in the next");
    }
    if matches!(kind, PostKind::MissedBigBlind | PostKind::MissedSmallBlind) && !due(kind) && (owed.0 || owed.1) {
        return refused("this missed blind is owed in a later hand");
    }
    Ok(())
}

/// R-POST-7: a big blind all in before its blind (on the ante) posts nothing, but the blind is
/// still the hand's bet: the others call the full big blind (as when it is all in for part of
/// it, R-POT-3) and the action starts left of it. Applied with the small blind's post.
fn big_blind_all_in_before_posting(hand: &mut HandState, config: &TableConfig) {
    let Some(big) = hand.blinds.big else { return };
    let unposted = hand.player(big).is_some_and(|p| p.status == InHand::AllIn && p.posted_mask & PostKind::BigBlind.bit() == 0);
    let Some(level) = nominal_cents(PostKind::BigBlind, config, hand).filter(|_| unposted) else { return };
    hand.round.bet_to_cents = hand.round.bet_to_cents.max(level);
    blind_makes_the_bet(hand, config, big, level, false);
}

/// A live blind of `level` from `seat` is the round's bet, and the action closes on it. A blind
/// smaller than the limit bet is an incomplete bet: the next player may call it or complete to
/// the full bet, which counts as the bet (seeds: $1/$2 blinds, $5 bet; three blinds of a
/// quarter, a quarter and half a bet). `sets_min_raise`: the next raise is at least its size
/// (R-BET-9: "at least equal to the previous bet"; with a third blind, the largest says).
fn blind_makes_the_bet(hand: &mut HandState, config: &TableConfig, seat: Seat, level: Cents, sets_min_raise: bool) {
    let incomplete = crate::betting::fixed_increment_cents(hand, config).is_some_and(|bet| level < bet);
    let r = &mut hand.round;
    if !incomplete {
        r.full_level_cents = r.full_level_cents.max(level);
        r.raises = r.raises.max(1);
        if sets_min_raise {
            r.min_raise_cents = r.min_raise_cents.max(level);
        }
    }
    r.anchor_seat = seat;
}

/// Apply a post (used by `evolve`). `stack_of` gives each seat's stack after the post.
pub fn apply_post(
    hand: &mut HandState,
    config: &TableConfig,
    seat: Seat,
    kind: PostKind,
    amount_cents: Cents,
    stack_of: impl Fn(Seat) -> Cents,
) {
    let stack_after_cents = stack_of(seat);
    let level = nominal_cents(kind, config, hand).unwrap_or(amount_cents).max(amount_cents);
    // R-POST-1: a button or big-blind ante (or every ante, with `antes_to_main_pot`) goes whole
    // into the main pot instead of being layered.
    // A dead small blind (R-POST-3) is the pot's, not a contribution its poster could get back.
    let whole_to_main = matches!(kind, PostKind::ButtonAnte | PostKind::BigBlindAnte | PostKind::MissedSmallBlindDead | PostKind::MissedButtonAnte)
        || (kind == PostKind::Ante && config.antes_to_main_pot);
    if let Some(p) = hand.player_mut(seat) {
        p.hand_cents += amount_cents;
        p.posted_mask |= kind.bit();
        if whole_to_main {
            p.dead_main_cents += amount_cents;
        } else if !kind.is_dead() {
            // R-POST-2, R-POST-6: a seat's live posts do not add up: only the largest is live
            // (a big blind who must kill posts both, the kill live; a blind who straddles). The
            // smaller is dead money in the main pot. Added up, the seat had more in than the
            // round's bet, the round closed unmatched and the excess went to the pot's winner
            // (the betting pass).
            let live = p.round_cents.max(amount_cents);
            p.dead_main_cents += p.round_cents + amount_cents - live;
            p.round_cents = live;
        }
        if stack_after_cents == 0 {
            p.status = InHand::AllIn;
        }
    }
    let previous_bet_to = hand.round.bet_to_cents;
    let r = &mut hand.round;
    if !kind.is_dead() {
        r.bet_to_cents = r.bet_to_cents.max(level);
    }
    match kind {
        // R-BET-9 / R-BET-3: a full blind is the round's bet; a raise is at least its size (the
        // third blind, the largest, has the last word).
        PostKind::BigBlind | PostKind::ThirdBlind => blind_makes_the_bet(hand, config, seat, level, true),
        PostKind::Straddle | PostKind::Sleeper => {
            // R-POST-4: live; the next minimum raise is a full straddle, or (the seeds' house
            // rule) the difference between straddle and big blind. The straddler acts last;
            // a sleeper buys neither the option nor last action: it counts as having acted.
            r.min_raise_cents = match config.straddle_raise {
                StraddleRaise::FullStraddle => level,
                StraddleRaise::DifferenceOverBigBlind => (level - previous_bet_to).max(config.chip_set.min_playable_chip_cents),
            };
            r.full_level_cents = level;
            // R-POST-4: a raise toward the cap, or (the seeds' other way) counted separately,
            // which raises the first round's maximum.
            if !config.straddle_outside_raise_cap {
                r.raises = r.raises.saturating_add(1);
            }
            if kind == PostKind::Straddle {
                // The seeds' common Mississippi variant: the first straddle acts last, the action
                // still starting left of the big blind; a re-straddle (from its left) after it.
                let first = hand.players.iter().filter(|p| p.posted_mask & PostKind::Straddle.bit() != 0).count() == 1;
                let blind = hand.round.anchor_seat;
                hand.round.acts_last = (config.straddle_action_from_big_blind && first).then_some(ActsLast { seat, after: blind });
                hand.round.anchor_seat = seat;
            } else {
                r.full_raise_no += 1;
                let raise_no = r.full_raise_no;
                if let Some(p) = hand.player_mut(seat) {
                    p.acted = true;
                    p.acted_at_raise_no = raise_no;
                }
            }
        }
        PostKind::Kill => {
            // R-POST-6: the kill blind becomes the blind; limits scale for this hand.
            hand.kill = config.kill;
            r.full_level_cents = level;
            r.min_raise_cents = r.min_raise_cents.max(level);
            r.raises = r.raises.max(1);
            // "The player who posts it normally acts last in the opening round (after the other
            // blinds, regardless of relative position at the table)": the others keep their
            // order from left of the big blind, and it acts as if it sat right after the last
            // blind, the whole round (the seeds' pass: a kill from the small blind had the big
            // blind act first; the fixes' pass: after a raise it answered after the others).
            r.acts_last = Some(ActsLast { seat, after: r.anchor_seat });
            r.anchor_seat = seat;
        }
        PostKind::BringIn => {
            // R-POST-5: the bring-in is the player's first action; the others act after it.
            // A bring-in as large as the bet (seeds: "rare and not recommended") is live like a
            // blind: a full bet, and its poster keeps the option if everyone calls.
            r.anchor_seat = seat;
            hand.awaiting_bring_in = false;
            let full = crate::betting::fixed_increment_cents(hand, config).is_some_and(|bet| level >= bet);
            if full {
                hand.round.full_level_cents = level;
                hand.round.raises = hand.round.raises.max(1);
            } else if let Some(p) = hand.player_mut(seat) {
                p.acted = true;
            }
        }
        _ => {}
    }
    // Under the seeds' moving button a hand whose small blind is missed for the big blind due
    // has no small blind: the missed big blind posted in its place settles the big blind then.
    let in_place_of_small = kind == PostKind::MissedBigBlind
        && config.button_policy == ButtonPolicy::Moving
        && hand.blinds.small.is_none()
        && hand.blinds.small_position == Some(seat);
    if kind == PostKind::SmallBlind || in_place_of_small {
        big_blind_all_in_before_posting(hand, config);
    }
    hand.mark_uncontested(stack_of);
    let anchor = hand.round.anchor_seat;
    hand.advance_from(anchor);
    if hand.phase == crate::hand::HandPhase::RoundComplete {
        // Posts never close the round by themselves: the dealer still has to deal; keep
        // betting open so the remaining players (if any) may act. Nobody to act = complete.
        hand.phase = if hand.round.to_act.is_some() { HandPhase::Betting } else { HandPhase::RoundComplete };
    }
}

/// R-POST-4 option, the seeds' rock: "the winner of the next pot takes the rock"; a pot split
/// gives it to the winner nearest clockwise (to the left) of the holder. The pot is the main
/// pot (every player in the hand contested it).
pub fn pass_the_rock(table: &mut TableState, pots: &[crate::pots::PotResult]) {
    if !table.config.as_ref().is_some_and(|c| c.mandatory_straddle) {
        return;
    }
    let Some(main) = pots.first() else { return };
    let winners: Vec<Seat> = main.awards.iter().filter(|(_, won)| *won > 0).map(|(seat, _)| *seat).collect();
    let from = table.rock_seat.or(table.hand.as_ref().map(|h| h.button_seat)).unwrap_or(0);
    // Clockwise from the holder: the next seat number up, wrapping around.
    let clockwise = |seat: &Seat| (Cents::from(*seat) - Cents::from(from) - 1).rem_euclid(crate::MAX_SEATS as Cents);
    if let Some(next) = winners.iter().min_by_key(|seat| clockwise(seat)) {
        table.rock_seat = Some(*next);
    }
}

/// R-POST-6 (kill trigger), on a settled hand (used by `evolve`): a player who won the hand's
/// pots whole extends the streak; a pot of at least the trigger's amount, or the streak's
/// length, makes that player owe the kill blind in the next hand. A split pot ends the streak.
pub fn track_kill_trigger(table: &mut TableState, pots: &[crate::pots::PotResult]) {
    // Winners of what was matched: chips of an uncalled bet going back to the bettor win
    // nothing (R-POT-4; they had counted the bettor as a second winner, and the kill the real
    // winner owed was not posted: the betting pass).
    let mut winners = pots
        .iter()
        .filter(|p| p.amount_cents > p.returned_cents)
        .flat_map(|p| p.awards.iter())
        .filter(|(_, won)| *won > 0)
        .map(|(seat, _)| *seat);
    let sole = winners.next().filter(|first| winners.all(|other| other == *first));
    table.winning_streak = sole.map(|seat| match table.winning_streak {
        Some((previous, n)) if previous == seat => (seat, n.saturating_add(1)),
        _ => (seat, 1),
    });
    let Some(trigger) = table.config.as_ref().and_then(|c| c.kill_trigger) else { return };
    let Some((seat, in_a_row)) = table.winning_streak else { return };
    // The pot won: what was matched (an uncalled bet returned is not won, R-POT-4).
    let pot_cents: Cents = pots.iter().map(|p| p.amount_cents - p.returned_cents).sum();
    let big_pot = trigger.pot_at_least_cents > 0 && pot_cents >= trigger.pot_at_least_cents;
    let streak = trigger.pots_in_a_row > 0 && in_a_row >= trigger.pots_in_a_row;
    table.kill_due_seat = (big_pot || streak).then_some(seat);
}
