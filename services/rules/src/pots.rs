//! Pots, side pots and payouts (section 6).
//!
//! Contributions are layered at each all-in level (R-POT-1): the main pot holds the smallest
//! level from everyone, each side pot the next layer from those who reached it; folded
//! players' chips stay in the pots they reached. The part of the largest contribution that
//! nobody matched is uncalled (R-POT-4): it stays in the top pot, is recorded as
//! `returned_cents`, is never raked, and goes back to its bettor (the only one eligible).

use serde::{Deserialize, Serialize};

use crate::accounts::{Account, Posting};
use crate::config::{FeePolicy, OddChipRule, TableConfig};
use crate::hand::{HandState, InHand, SeatAward};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::{Seat, TableId};
use crate::table::{TableEvent, TableState};

pub const SHOWDOWN_NOT_READY: Reason = Reason::new("SHOWDOWN_NOT_READY", "R-POT-5");
pub const SHOWDOWN_NO_ELIGIBLE_WINNER: Reason = Reason::new("SHOWDOWN_NO_ELIGIBLE_WINNER", "R-POT-5");
pub const SHOWDOWN_INVALID_RANKING: Reason = Reason::new("SHOWDOWN_INVALID_RANKING", "R-POT-5");
/// A low ranking at a table that plays no high-low game: it would halve pots a high hand wins
/// whole (the stakes pass: half a hold'em pot went to the hand that lost it).
pub const LOW_NOT_PLAYED: Reason = Reason::new("LOW_NOT_PLAYED", "R-POT-5");
pub const HAND_NOT_SETTLED: Reason = Reason::new("HAND_NOT_SETTLED", "R-POT-6");
/// The hand's pots are awarded once: a second showdown, award or street is refused as such.
pub const HAND_ALREADY_SETTLED: Reason = Reason::new("HAND_ALREADY_SETTLED", "R-POT-6");
pub const AWARD_NOT_ELIGIBLE: Reason = Reason::new("AWARD_NOT_ELIGIBLE", "R-POT-5");
pub const AWARDS_DO_NOT_SUM: Reason = Reason::new("AWARDS_DO_NOT_SUM", "R-POT-6");
pub const RAKE_ABOVE_LIMIT: Reason = Reason::new("RAKE_ABOVE_LIMIT", "R-RAKE-1");
pub const RAKE_NOT_REPORTABLE: Reason = Reason::new("RAKE_NOT_REPORTABLE", "R-RAKE-1");
/// A rake reported at a table whose rake is computed (a percentage) and not what the policy takes:
/// the dealer has no discretion over the house's share, in either direction.
pub const RAKE_NOT_AS_COMPUTED: Reason = Reason::new("RAKE_NOT_AS_COMPUTED", "R-RAKE-1");

pub const REASONS: &[Reason] = &[
    SHOWDOWN_NOT_READY,
    SHOWDOWN_NO_ELIGIBLE_WINNER,
    SHOWDOWN_INVALID_RANKING,
    LOW_NOT_PLAYED,
    HAND_NOT_SETTLED,
    HAND_ALREADY_SETTLED,
    AWARD_NOT_ELIGIBLE,
    AWARDS_DO_NOT_SUM,
    RAKE_ABOVE_LIMIT,
    RAKE_NOT_REPORTABLE,
    RAKE_NOT_AS_COMPUTED,
];

/// One contributor to the hand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Contribution {
    pub seat: Seat,
    pub amount_cents: Cents,
    pub folded: bool,
    pub all_in: bool,
}

/// A layer of the pot (R-POT-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PotLayer {
    pub amount_cents: Cents,
    /// Not folded and reached the layer, clockwise (ascending seat) order.
    pub eligible: Vec<Seat>,
    /// Uncalled part in this layer (R-POT-4).
    pub returned_cents: Cents,
}

/// Layer contributions into main and side pots (R-POT-1..4). Pure query.
pub fn layer_pots(contributions: &[Contribution]) -> Vec<PotLayer> {
    layers_of(contributions, false)
}

/// [`layer_pots`]. `none_live_below`: no player still in the hand has a live chip in (the ones
/// left are all in on dead chips, which go whole into the main pot): the first layer, too, is
/// above every live player's level when all who reached it folded.
fn layers_of(contributions: &[Contribution], none_live_below: bool) -> Vec<PotLayer> {
    let mut levels: Vec<Cents> =
        contributions.iter().filter(|c| c.all_in && !c.folded && c.amount_cents > 0).map(|c| c.amount_cents).collect();
    let top = contributions.iter().map(|c| c.amount_cents).max().unwrap_or(0);
    levels.push(top);
    levels.sort_unstable();
    levels.dedup();
    let mut pots: Vec<PotLayer> = Vec::new();
    let mut low = 0;
    for &high in &levels {
        if high <= low {
            continue;
        }
        let amount: Cents = contributions.iter().map(|c| c.amount_cents.min(high) - c.amount_cents.min(low)).sum();
        let mut eligible: Vec<Seat> =
            contributions.iter().filter(|c| !c.folded && c.amount_cents > low).map(|c| c.seat).collect();
        eligible.sort_unstable();
        if amount > 0 {
            if eligible.is_empty() && (none_live_below || !pots.is_empty()) {
                // R-POT-1 / R-POT-4: chips above every live player's level (those who put them
                // in all folded, none of them facing a bet) are won by nobody: nobody still in
                // the hand matched them. Each contributor's part of the layer goes back to them,
                // unraked.
                for c in contributions {
                    let part = c.amount_cents.min(high) - c.amount_cents.min(low);
                    if part > 0 {
                        pots.push(PotLayer { amount_cents: part, eligible: vec![c.seat], returned_cents: part });
                    }
                }
            } else {
                pots.push(PotLayer { amount_cents: amount, eligible, returned_cents: 0 });
            }
        }
        low = high;
    }
    // R-POT-4: the unmatched part of the largest contribution.
    if let Some(top_c) = contributions.iter().max_by_key(|c| c.amount_cents) {
        let second = contributions.iter().filter(|c| c.seat != top_c.seat).map(|c| c.amount_cents).max().unwrap_or(0);
        if !top_c.folded && top_c.amount_cents > second
            && let Some(last) = pots.last_mut() {
                last.returned_cents = (top_c.amount_cents - second).min(last.amount_cents);
            }
    }
    pots
}

/// Result of one pot at settlement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PotResult {
    /// 0 = main pot, 1.. = side pots.
    pub index: u8,
    pub amount_cents: Cents,
    pub eligible: Vec<Seat>,
    /// Uncalled chips returned (R-POT-4).
    pub returned_cents: Cents,
    pub rake_cents: Cents,
    pub jackpot_cents: Cents,
    /// What each winner receives from this pot (returned chips included).
    pub awards: Vec<(Seat, Cents)>,
}

pub fn contributions(hand: &HandState) -> Vec<Contribution> {
    contributing(hand).collect()
}

/// What each player put in that is layered into pots: everything but the dead chips that go
/// whole into the main pot, and only up to the level already paid out at once (R-POT-3).
fn contributing(hand: &HandState) -> impl Iterator<Item = Contribution> + '_ {
    let cap = hand.contribution_cap_cents.unwrap_or(Cents::MAX);
    hand.players
        .iter()
        .map(move |p| Contribution {
            seat: p.seat,
            amount_cents: (p.hand_cents - p.dead_main_cents).min(cap),
            folded: p.status == InHand::Folded,
            all_in: p.status == InHand::AllIn,
        })
        .filter(|c| c.amount_cents > 0)
}

/// The pots of a hand in play as they stand (R-POT-1, R-POST-1): its layers with the dead
/// chips of the main pot, below the side pots already paid at once (R-POT-3), which are not
/// among them. Pure query; what settlement would pay.
pub fn pots_in_play(hand: &HandState) -> Vec<PotLayer> {
    hand_pots(hand)
}

/// The pots of the hand as they stand: the layers (R-POT-1) with the dead main-pot chips
/// (R-POST-1) added to the main pot, whose eligible players include their live posters.
fn hand_pots(hand: &HandState) -> Vec<PotLayer> {
    let contributions: SeatList<Contribution> = contributing(hand).collect();
    let dead: Cents = hand.players.iter().map(|p| p.dead_main_cents).sum();
    // A poster of dead chips all in on them (a big-blind or button ante the payer could only
    // just cover) put nothing live in: the dead chips alone are the main pot, every live chip
    // is a side pot without that player (R-POT-1: nobody wins from an opponent more than they
    // put in; R-POT-3).
    let dead_only = hand.players.iter().any(|p| {
        p.dead_main_cents > 0 && p.status == InHand::AllIn && contributions.iter().all(|c| c.seat != p.seat)
    });
    // Then live chips whose players all folded are above every live level from the first one
    // up, and go back to them as such chips do (R-POT-4; the hostile tester: a $2 all in on a
    // missed button ante, the blinds folded, and the big blind's fold that the legal actions
    // offered was refused for a side pot nobody was eligible for).
    let mut layers = layers_of(&contributions, dead_only);
    // The dead chips are then a main pot of their own, contested by every player still in: also
    // when no live chip is left to layer (the games pass: a big blind all in on its ante, the
    // caller's chips paid to it at once as a side pot, and the ante went back to the big blind
    // alone, who had lost the showdown).
    if dead > 0 && dead_only {
        let eligible = hand.players.iter().filter(|p| p.status != InHand::Folded).map(|p| p.seat).collect();
        layers.insert(0, PotLayer { amount_cents: dead, eligible, returned_cents: 0 });
    } else if dead > 0 {
        if layers.is_empty() {
            layers.push(PotLayer { amount_cents: 0, eligible: Vec::new(), returned_cents: 0 });
        }
        let main = &mut layers[0];
        main.amount_cents += dead;
        for p in hand.players.iter().filter(|p| p.dead_main_cents > 0 && p.status != InHand::Folded) {
            if !main.eligible.contains(&p.seat) {
                main.eligible.push(p.seat);
            }
        }
        main.eligible.sort_unstable();
        if main.eligible.is_empty() {
            // Every poster of dead chips folded: they stay with the live players' main pot.
            main.eligible = hand.players.iter().filter(|p| p.status != InHand::Folded).map(|p| p.seat).collect();
        }
    }
    layers
}

/// A list with at most one entry per seat (bound `MAX_SEATS`), kept on the stack: the working
/// lists of a settlement (contributions, winners, pots, amounts per seat) allocate nothing.
#[derive(Clone, Copy)]
struct SeatList<T: Copy + Default> {
    items: [T; crate::MAX_SEATS],
    len: usize,
}

impl<T: Copy + Default> SeatList<T> {
    fn new() -> SeatList<T> {
        SeatList { items: [T::default(); crate::MAX_SEATS], len: 0 }
    }

    /// More entries than seats would be a broken invariant: the index check stops it.
    fn push(&mut self, item: T) {
        self.items[self.len] = item;
        self.len += 1;
    }
}

impl<T: Copy + Default> std::ops::Deref for SeatList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items[..self.len]
    }
}

impl<T: Copy + Default> std::ops::DerefMut for SeatList<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items[..self.len]
    }
}

impl<T: Copy + Default> FromIterator<T> for SeatList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> SeatList<T> {
        let mut list = SeatList::new();
        for item in items {
            list.push(item);
        }
        list
    }
}

/// Split `amount_cents` among `winners` in minimum playable chips; odd chips (and any
/// sub-chip remainder) to the first winners clockwise from the button, or in the order the
/// dealer ranked them (`OddChipRule::AsRanked`, stud) (R-POT-5).
fn split(hand: &HandState, amount_cents: Cents, winners: &[Seat], chip: Cents, as_ranked: bool, out: &mut Vec<(Seat, Cents)>) {
    if winners.is_empty() || amount_cents <= 0 {
        return;
    }
    let mut order: SeatList<Seat> = winners.iter().copied().collect();
    if !as_ranked {
        hand.sort_clockwise_from_button(&mut order);
    }
    let k = order.len() as Cents;
    let units = amount_cents / chip;
    let dust = amount_cents % chip;
    for (i, seat) in order.iter().enumerate() {
        let mut share = (units / k) * chip;
        if (i as Cents) < units % k {
            share += chip;
        }
        if i == 0 {
            share += dust;
        }
        if share > 0 {
            match out.iter_mut().find(|(s, _)| s == seat) {
                Some((_, a)) => *a += share,
                None => out.push((*seat, share)),
            }
        }
    }
}

/// The first group of `ranking` with members in `eligible` (empty if none).
fn winners_in(ranking: &[Vec<Seat>], eligible: &[Seat]) -> SeatList<Seat> {
    ranking
        .iter()
        .map(|group| group.iter().copied().filter(|s| eligible.contains(s)).collect::<SeatList<Seat>>())
        .find(|g| !g.is_empty())
        .unwrap_or_else(SeatList::new)
}

fn check_ranking(hand: &HandState, ranking: &[Vec<Seat>]) -> Result<(), Rejection> {
    let mut seen: Vec<Seat> = Vec::new();
    for s in ranking.iter().flatten() {
        let live = hand.player(*s).is_some_and(|p| p.status != InHand::Folded);
        if !live || seen.contains(s) {
            return Err(Rejection::new(SHOWDOWN_INVALID_RANKING, format!("seat {s} is not a live player or is ranked twice"))
                .with("seat", *s as Cents));
        }
        seen.push(*s);
    }
    Ok(())
}

/// How the pots are awarded: by the dealer's ranking (ties grouped; an optional low ranking
/// for the low halves) or by the dealer's amounts.
#[derive(Debug, Clone, Copy)]
pub enum Award<'a> {
    Ranking { high: &'a [Vec<Seat>], low: Option<&'a [Vec<Seat>]> },
    Amounts(&'a [SeatAward]),
}

/// Settle the hand: pots, rake, jackpot drop, kitty, awards (R-POT-*, R-RAKE-*, R-KITTY-1).
/// With one live player left, `high` may be empty: that player wins everything.
pub fn settle(table: &TableState, high: &[Vec<Seat>], low: Option<&[Vec<Seat>]>, showdown: bool) -> Result<TableEvent, Rejection> {
    settle_with(table, Award::Ranking { high, low }, None, showdown)
}

/// [`settle`] by either kind of award, with the rake the dealer reports (R-RAKE-1), if any.
pub fn settle_with(table: &TableState, award: Award, reported_rake_cents: Option<Cents>, showdown: bool) -> Result<TableEvent, Rejection> {
    let (hand, config, table_id) = match (table.hand.as_ref(), table.config.as_ref(), table.table_id.as_ref()) {
        (Some(h), Some(c), Some(t)) => (h, c, t),
        _ => return Err(Rejection::new(crate::betting::NO_HAND_IN_PROGRESS, "no hand is being played")),
    };
    settle_hand(hand, config, table_id, award, reported_rake_cents, showdown)
}

/// R-RAKE-1: the rake of each pot: computed from the fee policy, or the dealer's report where the
/// table's rake is reported (at most its cap), taken from the main pot first, never from uncalled
/// chips. At a table whose rake is computed a report may only repeat it: a dealer cannot waive the
/// house's share to a player, nor take more.
/// Returns the reported rake when the award decides which pots it comes from (by amounts:
/// wherever the room's awards leave it); `out` is then left at zero.
/// `paid` are the rakeable amounts of the hand's side pots paid at once: the hand is raked over
/// all its pots (their share was taken when they were paid); these pots take theirs, main first.
fn rake_into(
    config: &TableConfig,
    bases: &[Cents],
    paid: &[Cents],
    flop_seen: bool,
    reported: Option<Cents>,
    spread: bool,
    out: &mut [Cents],
) -> Result<Cents, Rejection> {
    if paid.is_empty() {
        crate::rake::rake_by_pot_into(&config.fee, bases, flop_seen, out);
    } else {
        let all: Vec<Cents> = bases.iter().chain(paid).copied().collect();
        let mut rake = vec![0; all.len()];
        crate::rake::rake_by_pot_into(&config.fee, &all, true, &mut rake);
        out.copy_from_slice(&rake[..bases.len()]);
    }
    let Some(reported) = reported else { return Ok(0) };
    // R-UNIT-1: a rake below zero is no rake (the money pass: it was "above the limit").
    crate::money::check_non_negative("rake_cents", reported)?;
    let limit = match &config.fee {
        // R-RAKE-1: no flop, no drop (the betting pass: a dealer raked $3 of the blinds of a
        // hand that ended before the flop).
        FeePolicy::Reported { no_flop_no_drop: true, .. } if !flop_seen && reported > 0 => {
            return Err(Rejection::new(RAKE_NOT_REPORTABLE, "no flop, no drop: a hand that ended before the flop is not raked")
                .with("rake_cents", reported));
        }
        FeePolicy::Reported { cap_cents, .. } => {
            // R-UNIT-2: rake is taken in minimum playable chips (the money pass: $1.50 raked at
            // a $1-minimum table left a winner 50 cents no chip makes).
            config.chip_set.check_playable("a reported rake", reported)?;
            *cap_cents
        }
        FeePolicy::Rake { .. } => {
            let computed: Cents = out.iter().sum();
            if reported != computed {
                return Err(Rejection::new(RAKE_NOT_AS_COMPUTED, "this table's rake is computed from its policy; a reported rake must be that amount")
                    .with("rake_cents", reported)
                    .with("required_rake_cents", computed));
            }
            computed
        }
        _ if reported == 0 => 0,
        _ => {
            return Err(Rejection::new(RAKE_NOT_REPORTABLE, "this table takes no rake at settlement")
                .with("rake_cents", reported));
        }
    };
    let rakeable: Cents = bases.iter().sum();
    if reported < 0 || reported > limit || reported > rakeable {
        return Err(Rejection::new(RAKE_ABOVE_LIMIT, "the reported rake exceeds what the table may take from these pots")
            .with("rake_cents", reported)
            .with("max_rake_cents", limit.min(rakeable)));
    }
    out.iter_mut().for_each(|r| *r = 0);
    if !spread {
        return Ok(reported);
    }
    let mut left = reported;
    for (i, base) in bases.iter().enumerate() {
        out[i] = left.min(*base);
        left -= out[i];
    }
    Ok(0)
}

/// [`settle`] from its parts: settlement reads only the hand, the configuration and the table
/// id, so the last fold settles a copy of the hand instead of a copy of the whole table.
pub(crate) fn settle_hand(
    hand: &HandState,
    config: &TableConfig,
    table_id: &TableId,
    award: Award,
    reported_rake_cents: Option<Cents>,
    showdown: bool,
) -> Result<TableEvent, Rejection> {
    if let Award::Ranking { high, low } = award {
        check_ranking(hand, high)?;
        if let Some(low) = low {
            if !config.splits_low() && low.iter().any(|group| !group.is_empty()) {
                return Err(Rejection::new(LOW_NOT_PLAYED, "this table plays no high-low game: each pot goes to the best high hand")
                    .with("low_seats", low.iter().map(Vec::len).sum::<usize>() as Cents));
            }
            check_ranking(hand, low)?;
        }
    }
    let chip = config.chip_set.min_playable_chip_cents;
    let layers = hand_pots(hand);
    // A showdown between players deals the board out (the flop is seen); a "showdown" with
    // one player left is a hand won uncontested, before the flop if it ended there.
    let flop_seen = hand.flop_seen || (showdown && hand.live_count() > 1);
    // One pot per contribution level at most.
    let bases: SeatList<Cents> = layers.iter().map(|l| l.amount_cents - l.returned_cents).collect();
    let mut rake_per_pot: SeatList<Cents> = bases.iter().map(|_| 0).collect();
    let by_amounts = matches!(award, Award::Amounts(_));
    let unplaced_rake = rake_into(config, &bases, &hand.paid_at_once_bases, flop_seen, reported_rake_cents, !by_amounts, &mut rake_per_pot)?;
    let mut results: Vec<PotResult> = Vec::with_capacity(layers.len());
    for (i, layer) in layers.into_iter().enumerate() {
        let rake = rake_per_pot[i];
        // R-RAKE-2: the drop is judged on the main pot after its rake; a reported rake the
        // awards place comes from the main pot first (`award_by_amounts`).
        let main_rake = rake + if i == 0 { unplaced_rake.min(bases[0] - rake) } else { 0 };
        let jackpot = if i == 0 { crate::rake::jackpot_drop_cents(config, bases[0] - main_rake, flop_seen) } else { 0 };
        results.push(PotResult {
            index: i as u8,
            amount_cents: layer.amount_cents,
            eligible: layer.eligible,
            returned_cents: layer.returned_cents,
            rake_cents: rake,
            jackpot_cents: jackpot,
            awards: Vec::new(),
        });
    }
    match award {
        Award::Ranking { high, low } => award_by_ranking(hand, config, &mut results, high, low, chip)?,
        Award::Amounts(awards) => award_by_amounts(hand, &mut results, awards, unplaced_rake, chip)?,
    }
    let kitty_cents = crate::kitty::kitty_take(config, &mut results);
    let rake_cents: Cents = results.iter().map(|r| r.rake_cents).sum();
    let jackpot_cents: Cents = results.iter().map(|r| r.jackpot_cents).sum();
    let mut per_seat: SeatList<(Seat, Cents)> = SeatList::new();
    for (seat, a) in results.iter().flat_map(|r| r.awards.iter()) {
        match per_seat.iter_mut().find(|(s, _)| s == seat) {
            Some((_, t)) => *t += a,
            None => per_seat.push((*seat, *a)),
        }
    }
    per_seat.sort_unstable();
    let mut postings = Vec::with_capacity(per_seat.len() + 4);
    if hand.pot_cents != 0 {
        postings.push(Posting::new(Account::Pot { table_id: table_id.clone(), pot_index: 0 }, -hand.pot_cents));
    }
    for &(seat, amount) in per_seat.iter() {
        postings.push(Posting::new(Account::Seat { table_id: table_id.clone(), seat }, amount));
    }
    if rake_cents > 0 {
        postings.push(Posting::new(Account::Rake { table_id: table_id.clone() }, rake_cents));
    }
    if jackpot_cents > 0 {
        postings.push(Posting::new(Account::Jackpot { table_id: table_id.clone() }, jackpot_cents));
    }
    if kitty_cents > 0 {
        postings.push(Posting::new(Account::Kitty { table_id: table_id.clone() }, kitty_cents));
    }
    crate::accounts::check_balanced(&postings)?;
    let dealer_awarded = matches!(award, Award::Amounts(_));
    Ok(TableEvent::HandSettled { pots: results, rake_cents, jackpot_cents, kitty_cents, showdown, postings, dealer_awarded })
}

fn award_by_ranking(
    hand: &HandState,
    config: &TableConfig,
    results: &mut [PotResult],
    high: &[Vec<Seat>],
    low: Option<&[Vec<Seat>]>,
    chip: Cents,
) -> Result<(), Rejection> {
    let as_ranked = config.odd_chip == OddChipRule::AsRanked;
    for (i, pot) in results.iter_mut().enumerate() {
        let net = pot.amount_cents - pot.rake_cents - pot.jackpot_cents;
        let mut awards: Vec<(Seat, Cents)> = Vec::new();
        let ranked;
        let high_winners = if pot.eligible.len() == 1 {
            &pot.eligible[..]
        } else {
            ranked = winners_in(high, &pot.eligible);
            &ranked[..]
        };
        if high_winners.is_empty() {
            return Err(Rejection::new(SHOWDOWN_NO_ELIGIBLE_WINNER, "no seat eligible for this pot is ranked")
                .with("pot_index", i as Cents)
                .with("pot_cents", pot.amount_cents));
        }
        let low_winners = match low {
            Some(low) if pot.eligible.len() > 1 => winners_in(low, &pot.eligible),
            _ => SeatList::new(),
        };
        if low_winners.is_empty() {
            split(hand, net, high_winners, chip, as_ranked, &mut awards);
        } else {
            // R-POT-5: each pot is halved; the odd chip of the halving goes to the high half.
            let low_half = (net / 2) - (net / 2) % chip;
            split(hand, net - low_half, high_winners, chip, as_ranked, &mut awards);
            split(hand, low_half, &low_winners, chip, as_ranked, &mut awards);
        }
        pot.awards = awards;
    }
    Ok(())
}

/// R-POT-5 by amounts: spread each seat's award over the pots it is eligible for, and the
/// reported rake over what the awards leave (a room's record says what each player collected,
/// not from which pot its rake came). The eligible sets are nested (each side pot's players
/// are in every pot below it), so filling the pots from the top down, players first, finds a
/// split whenever one exists.
fn award_by_amounts(hand: &HandState, results: &mut [PotResult], awards: &[SeatAward], rake_cents: Cents, chip: Cents) -> Result<(), Rejection> {
    let mut left: SeatList<(Seat, Cents)> = SeatList::new();
    for (i, a) in awards.iter().enumerate() {
        let live = hand.player(a.seat).is_some_and(|p| p.status != InHand::Folded);
        if !live || a.amount_cents < 0 || awards[..i].iter().any(|o| o.seat == a.seat) || left.len() == crate::MAX_SEATS {
            return Err(Rejection::new(AWARD_NOT_ELIGIBLE, format!("seat {} is not a live player, is awarded twice, or a negative amount", a.seat))
                .with("seat", a.seat as Cents)
                .with("amount_cents", a.amount_cents));
        }
        if a.amount_cents > 0 {
            left.push((a.seat, a.amount_cents));
        }
    }
    let awarded: Cents = left.iter().map(|(_, a)| a).sum();
    let net_total: Cents = results.iter().map(|r| r.amount_cents - r.rake_cents - r.jackpot_cents).sum::<Cents>() - rake_cents;
    if awarded != net_total {
        return Err(Rejection::new(AWARDS_DO_NOT_SUM, "the awards must sum to the pots less rake and drops")
            .with("awards_cents", awarded)
            .with("pots_net_cents", net_total));
    }
    // R-UNIT-2, R-POT-5 ("equal shares in minimum playable chips"): each award is whole chips;
    // only what the pots themselves hold beyond whole chips may go, to one seat, with its award
    // (the games pass: $12.01 and $182.99 awarded at a table whose smallest chip is $1).
    let remainder = net_total.rem_euclid(chip);
    let mut broken = left.iter().filter(|(_, amount)| amount.rem_euclid(chip) != 0);
    let first_broken = broken.next();
    let whole = match first_broken {
        None => remainder == 0,
        Some((_, amount)) => remainder != 0 && amount.rem_euclid(chip) == remainder && broken.next().is_none(),
    };
    if !whole {
        let (seat, amount) = first_broken.or_else(|| left.first()).copied().unwrap_or((0, 0));
        return Err(Rejection::new(crate::money::NOT_MULTIPLE_OF_MIN_CHIP, "each award is whole minimum playable chips")
            .with("seat", seat as Cents)
            .with("amount_cents", amount)
            .with("min_playable_chip_cents", chip));
    }
    let mut rake_left = rake_cents;
    for pot in results.iter_mut().rev() {
        let mut net = pot.amount_cents - pot.rake_cents - pot.jackpot_cents;
        for (seat, remaining) in left.iter_mut().filter(|(s, _)| pot.eligible.contains(s)) {
            let take = (*remaining).min(net);
            if take > 0 {
                pot.awards.push((*seat, take));
                *remaining -= take;
                net -= take;
            }
        }
        // R-POT-4: never rake the uncalled chips.
        let rake = rake_left.min(net).min(pot.amount_cents - pot.returned_cents - pot.rake_cents);
        pot.rake_cents += rake;
        rake_left -= rake;
        net -= rake;
        if net > 0 {
            return Err(Rejection::new(AWARD_NOT_ELIGIBLE, "the awards leave part of a pot to players not eligible for it")
                .with("pot_index", pot.index as Cents)
                .with("unawarded_cents", net));
        }
    }
    Ok(())
}

/// R-POT-3: after a fold that leaves at most one player able to bet and nobody to act, the
/// chips above the second-highest live contribution can no longer be contested: that side pot
/// (with any uncalled chips in it, R-POT-4) is paid to its one player at once. `None` if
/// nothing is left to one player.
pub(crate) fn side_pot_at_once(hand: &HandState, config: &TableConfig, table_id: &TableId) -> Option<TableEvent> {
    if hand.phase != crate::hand::HandPhase::RoundComplete || hand.active_count() > 1 || hand.live_count() < 2 {
        return None;
    }
    let cap = hand.contribution_cap_cents.unwrap_or(Cents::MAX);
    let layered = |p: &crate::hand::HandPlayer| (p.hand_cents - p.dead_main_cents).min(cap);
    let mut live: SeatList<(Cents, Seat)> = hand.players.iter().filter(|p| p.status != InHand::Folded).map(|p| (layered(p), p.seat)).collect();
    live.sort_unstable();
    let (top, winner) = live[live.len() - 1];
    let level = live[live.len() - 2].0;
    if top <= level {
        return None;
    }
    // The one player left wins the layer up to its own contribution (R-POT-1); chips folders put
    // in above it were matched by nobody still in the hand and go back to them (R-POT-4).
    let won: Cents = hand.players.iter().map(|p| (layered(p).min(top) - level).max(0)).sum();
    let second_any = hand.players.iter().filter(|p| p.seat != winner).map(layered).max().unwrap_or(0);
    let mut awards: Vec<(Seat, Cents)> = vec![(winner, won)];
    awards.extend(hand.players.iter().filter(|p| p.seat != winner && layered(p) > top).map(|p| (p.seat, layered(p) - top)));
    let given_back: Cents = awards[1..].iter().map(|(_, back)| back).sum();
    let amount = won + given_back;
    let returned_cents = (top - second_any.max(level)).max(0) + given_back;
    // R-RAKE-1: the hand is raked as the showdown would rake it: this pot's share of the rake
    // of all the hand's pots (the pots below it are final: everyone in them but the winner is
    // all in), taken from the main pot first; settlement rakes its pots with the same figures
    // (`HandState::paid_at_once_bases`). Never on what goes back. The hand goes to a showdown
    // (two live players at least), so the flop is seen for the rake's sake. (A reported rake is
    // reported at the showdown.)
    let rake_cents = match &config.fee {
        FeePolicy::Rake { .. } => {
            let mut below = hand.clone();
            below.contribution_cap_cents = Some(level);
            let mut bases: Vec<Cents> = hand_pots(&below).iter().map(|l| l.amount_cents - l.returned_cents).collect();
            bases.extend(hand.paid_at_once_bases.iter().copied());
            bases.push(amount - returned_cents);
            let mut out = vec![0; bases.len()];
            crate::rake::rake_by_pot_into(&config.fee, &bases, true, &mut out);
            out[out.len() - 1].clamp(0, won)
        }
        _ => 0,
    };
    awards[0].1 -= rake_cents;
    let mut pot = PotResult { index: 1, amount_cents: amount, eligible: vec![winner], returned_cents, rake_cents, jackpot_cents: 0, awards };
    // R-KITTY-1: a contested side pot gives its chip as it is paid.
    let kitty_cents = crate::kitty::kitty_take_paid_at_once(config, &mut pot);
    let mut postings = Vec::with_capacity(3 + pot.awards.len());
    postings.push(Posting::new(Account::Pot { table_id: table_id.clone(), pot_index: 0 }, -amount));
    for (seat, paid) in &pot.awards {
        postings.push(Posting::new(Account::Seat { table_id: table_id.clone(), seat: *seat }, *paid));
    }
    if rake_cents > 0 {
        postings.push(Posting::new(Account::Rake { table_id: table_id.clone() }, rake_cents));
    }
    if kitty_cents > 0 {
        postings.push(Posting::new(Account::Kitty { table_id: table_id.clone() }, kitty_cents));
    }
    Some(TableEvent::SidePotPaid { level_cents: level, pot, postings, kitty_cents })
}

/// Apply `SidePotPaid` (used by `evolve`): contributions above the level are settled, and the
/// pot's rakeable amount is kept for the hand's rake.
pub(crate) fn apply_side_pot_paid(hand: &mut HandState, level_cents: Cents, pot: &PotResult) {
    hand.contribution_cap_cents = Some(level_cents);
    hand.paid_at_once_bases.push(pot.amount_cents - pot.returned_cents);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(seat: Seat, amount_cents: Cents, folded: bool, all_in: bool) -> Contribution {
        Contribution { seat, amount_cents, folded, all_in }
    }

    #[test]
    fn r_pot_1_layers_at_each_all_in_level() {
        let pots = layer_pots(&[c(1, 100, false, true), c(2, 300, false, true), c(3, 500, false, false), c(4, 500, false, false)]);
        let got: Vec<(Cents, Vec<Seat>)> = pots.iter().map(|p| (p.amount_cents, p.eligible.clone())).collect();
        assert_eq!(got, vec![(400, vec![1, 2, 3, 4]), (600, vec![2, 3, 4]), (400, vec![3, 4])]);
        assert!(pots.iter().all(|p| p.returned_cents == 0));
    }

    #[test]
    fn r_pot_4_uncalled_part_is_marked_returned() {
        let pots = layer_pots(&[c(1, 50, true, false), c(2, 200, false, false)]);
        assert_eq!(pots.len(), 1);
        assert_eq!((pots[0].amount_cents, pots[0].returned_cents), (250, 150));
    }
}
