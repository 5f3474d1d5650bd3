//! Pots, side pots and payouts (section 6).
//!
//! Contributions are layered at each all-in level (R-POT-1): the main pot holds the smallest
//! level from everyone, each side pot the next layer from those who reached it; folded
//! players' chips stay in the pots they reached. The part of the largest contribution that
//! nobody matched is uncalled (R-POT-4): it stays in the top pot, is recorded as
//! `returned_cents`, is never raked, and goes back to its bettor (the only one eligible).

use serde::{Deserialize, Serialize};

use crate::accounts::{Account, Posting};
use crate::config::TableConfig;
use crate::hand::{HandState, InHand};
use crate::money::Cents;
use crate::rejection::{Reason, Rejection};
use crate::streams::{Seat, TableId};
use crate::table::{TableEvent, TableState};

pub const SHOWDOWN_NOT_READY: Reason = Reason::new("SHOWDOWN_NOT_READY", "R-POT-5");
pub const SHOWDOWN_NO_ELIGIBLE_WINNER: Reason = Reason::new("SHOWDOWN_NO_ELIGIBLE_WINNER", "R-POT-5");
pub const SHOWDOWN_INVALID_RANKING: Reason = Reason::new("SHOWDOWN_INVALID_RANKING", "R-POT-5");
pub const HAND_NOT_SETTLED: Reason = Reason::new("HAND_NOT_SETTLED", "R-POT-6");

pub const REASONS: &[Reason] = &[SHOWDOWN_NOT_READY, SHOWDOWN_NO_ELIGIBLE_WINNER, SHOWDOWN_INVALID_RANKING, HAND_NOT_SETTLED];

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
            match (eligible.is_empty(), pots.last_mut()) {
                // Dead chips above every live player's level stay with the pot below.
                (true, Some(prev)) => prev.amount_cents += amount,
                _ => pots.push(PotLayer { amount_cents: amount, eligible, returned_cents: 0 }),
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

fn contributing(hand: &HandState) -> impl Iterator<Item = Contribution> + '_ {
    hand.players.iter().filter(|p| p.hand_cents > 0).map(|p| Contribution {
        seat: p.seat,
        amount_cents: p.hand_cents,
        folded: p.status == InHand::Folded,
        all_in: p.status == InHand::AllIn,
    })
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
/// sub-chip remainder) to the first winners clockwise from the button (R-POT-5).
fn split(hand: &HandState, amount_cents: Cents, winners: &[Seat], chip: Cents, out: &mut Vec<(Seat, Cents)>) {
    if winners.is_empty() || amount_cents <= 0 {
        return;
    }
    let mut order: SeatList<Seat> = winners.iter().copied().collect();
    hand.sort_clockwise_from_button(&mut order);
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

/// Settle the hand: pots, rake, jackpot drop, kitty, awards (R-POT-*, R-RAKE-*, R-KITTY-1).
/// With one live player left, `high` may be empty: that player wins everything.
pub fn settle(table: &TableState, high: &[Vec<Seat>], low: Option<&[Vec<Seat>]>, showdown: bool) -> Result<TableEvent, Rejection> {
    let (hand, config, table_id) = match (table.hand.as_ref(), table.config.as_ref(), table.table_id.as_ref()) {
        (Some(h), Some(c), Some(t)) => (h, c, t),
        _ => return Err(Rejection::new(crate::betting::NO_HAND_IN_PROGRESS, "no hand is being played")),
    };
    settle_hand(hand, config, table_id, high, low, showdown)
}

/// [`settle`] from its parts: settlement reads only the hand, the configuration and the table
/// id, so the last fold settles a copy of the hand instead of a copy of the whole table.
pub(crate) fn settle_hand(
    hand: &HandState,
    config: &TableConfig,
    table_id: &TableId,
    high: &[Vec<Seat>],
    low: Option<&[Vec<Seat>]>,
    showdown: bool,
) -> Result<TableEvent, Rejection> {
    check_ranking(hand, high)?;
    if let Some(low) = low {
        check_ranking(hand, low)?;
    }
    let chip = config.chip_set.min_playable_chip_cents;
    let contributions: SeatList<Contribution> = contributing(hand).collect();
    let layers = layer_pots(&contributions);
    let flop_seen = hand.flop_seen || showdown;
    // One pot per contribution level at most.
    let bases: SeatList<Cents> = layers.iter().map(|l| l.amount_cents - l.returned_cents).collect();
    let mut rake_per_pot: SeatList<Cents> = bases.iter().map(|_| 0).collect();
    crate::rake::rake_by_pot_into(&config.fee, &bases, flop_seen, &mut rake_per_pot);
    let mut results: Vec<PotResult> = Vec::with_capacity(layers.len());
    for (i, layer) in layers.into_iter().enumerate() {
        let rake = rake_per_pot[i];
        let jackpot = if i == 0 { crate::rake::jackpot_drop_cents(config, bases[0] - rake, flop_seen) } else { 0 };
        let net = layer.amount_cents - rake - jackpot;
        let mut awards: Vec<(Seat, Cents)> = Vec::new();
        let ranked;
        let high_winners = if layer.eligible.len() == 1 {
            &layer.eligible[..]
        } else {
            ranked = winners_in(high, &layer.eligible);
            &ranked[..]
        };
        if high_winners.is_empty() {
            return Err(Rejection::new(SHOWDOWN_NO_ELIGIBLE_WINNER, "no seat eligible for this pot is ranked")
                .with("pot_index", i as Cents)
                .with("pot_cents", layer.amount_cents));
        }
        let low_winners = match low {
            Some(low) if layer.eligible.len() > 1 => winners_in(low, &layer.eligible),
            _ => SeatList::new(),
        };
        if low_winners.is_empty() {
            split(hand, net, high_winners, chip, &mut awards);
        } else {
            // R-POT-5: the odd chip of a high-low split goes to the high hand.
            let low_half = (net / 2) - (net / 2) % chip;
            split(hand, net - low_half, high_winners, chip, &mut awards);
            split(hand, low_half, &low_winners, chip, &mut awards);
        }
        results.push(PotResult {
            index: i as u8,
            amount_cents: layer.amount_cents,
            eligible: layer.eligible,
            returned_cents: layer.returned_cents,
            rake_cents: rake,
            jackpot_cents: jackpot,
            awards,
        });
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
    Ok(TableEvent::HandSettled { pots: results, rake_cents, jackpot_cents, kitty_cents, showdown, postings })
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
