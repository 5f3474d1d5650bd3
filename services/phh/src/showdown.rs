//! Who contests the pots at the end of a hand, and with what strength.
//!
//! A player who folded is out. At showdown a player who mucks (`pN sm` with no
//! cards, or with unknown cards only: a card room's record of a mucked losing hand)
//! forfeits. Every other remaining player is ranked from the cards shown (or, if they
//! never showed, the cards dealt to them, less what they discarded in a draw game); a
//! needed card that is unknown (`??`) means no ranking can be computed (the conversion
//! then needs the room's `winnings`).

use crate::card::{Card, Cards};
use crate::hand_rank::{HandStrength, low_strength, strength};
use crate::history::{Action, HandHistory, MAX_PLAYERS, Player, Shown};

/// Most cards a player or the board may hold at once in one hand (seven-card stud: 7; a draw
/// hand is back to five after each discard).
const MAX_CARDS: usize = 8;

/// A player in the showdown and the strength of their best hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contender {
    pub player: Player,
    pub strength: HandStrength,
    /// High-low games: the qualifying 8-or-better low, if any.
    pub low: Option<HandStrength>,
    /// Stud odd-chip order (R-POT-5, no button): the highest card by suit, and the lowest
    /// card by suit (aces low) for the low half. Greater first.
    pub high_card: (u8, u8),
    pub low_card: (u8, u8),
}

/// The end of a hand as far as awards are concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Everyone else folded: the pot goes to this player without a showdown.
    Uncontested(Player),
    /// Two or more players reached the end; `contenders` excludes those who mucked.
    Showdown { contenders: Vec<Contender> },
}

#[derive(Clone, Copy)]
struct CardList {
    len: usize,
    cards: [Card; MAX_CARDS],
}

impl CardList {
    const EMPTY: CardList = CardList { len: 0, cards: [Card::Unknown; MAX_CARDS] };

    fn extend(&mut self, cards: &Cards) -> Result<(), String> {
        for card in cards.as_slice() {
            if self.len == MAX_CARDS {
                return Err(format!("more than {MAX_CARDS} cards dealt to one hand"));
            }
            self.cards[self.len] = *card;
            self.len += 1;
        }
        Ok(())
    }

    fn as_slice(&self) -> &[Card] {
        &self.cards[..self.len]
    }

    /// Draw games: the discarded cards leave the hand (an unknown discard takes an unknown card).
    fn discard(&mut self, cards: &Cards) -> Result<(), String> {
        for card in cards.as_slice() {
            let Some(at) = self.as_slice().iter().position(|held| held == card) else {
                return Err(format!("discard of {card}, which the player does not hold"));
            };
            self.cards.copy_within(at + 1..self.len, at);
            self.len -= 1;
        }
        Ok(())
    }
}

fn suit_order(suit: char) -> u8 {
    match suit {
        'c' => 0,
        'd' => 1,
        'h' => 2,
        _ => 3,
    }
}

/// (rank, suit) of the highest card, and of the lowest card with aces low inverted so that
/// greater means lower.
fn odd_chip_cards(cards: &[Card]) -> ((u8, u8), (u8, u8)) {
    let known = cards.iter().filter_map(|c| match *c {
        Card::Known { rank, suit } => Some((rank, suit_order(suit))),
        Card::Unknown => None,
    });
    let high = known.clone().max().unwrap_or((0, 0));
    let low = known
        .map(|(rank, suit)| (if rank == 14 { 1 } else { rank }, suit))
        .min()
        .map_or((0, 0), |(rank, suit)| (15 - rank, 3 - suit));
    (high, low)
}

/// Reads the whole action list and decides who contests the pot.
/// `Err` carries the reason the hand cannot be settled (unsupported, not malformed).
pub fn ending(hand: &HandHistory) -> Result<Ending, String> {
    let player_count = hand.player_count();
    let mut folded = [false; MAX_PLAYERS];
    let mut mucked = [false; MAX_PLAYERS];
    let mut dealt = [CardList::EMPTY; MAX_PLAYERS];
    let mut shown: [Option<Cards>; MAX_PLAYERS] = [None; MAX_PLAYERS];
    let mut board = CardList::EMPTY;
    for entry in &hand.actions {
        match entry.action {
            Action::DealHole { player, cards } => dealt[player.index()].extend(&cards)?,
            Action::DealBoard { cards } => board.extend(&cards)?,
            Action::Fold { player } => folded[player.index()] = true,
            Action::ShowOrMuck { player, shown: what } => match what {
                Shown::Muck => mucked[player.index()] = true,
                Shown::DealtCards => {}
                // A card room writes a mucked losing hand as unknown cards.
                Shown::Cards(cards) if !cards.is_empty() && cards.as_slice().iter().all(|c| *c == Card::Unknown) => {
                    mucked[player.index()] = true;
                }
                Shown::Cards(cards) => shown[player.index()] = Some(cards),
            },
            Action::StandPatOrDiscard { player, discarded } => {
                dealt[player.index()].discard(&discarded).map_err(|e| format!("{player}: {e}"))?;
                // What a draw player shows at the end is the hand after every draw.
                shown[player.index()] = None;
            }
            _ => {}
        }
    }
    let remaining: Vec<Player> = (0..player_count)
        .filter(|&index| !folded[index])
        .map(|index| Player(index as u8))
        .collect();
    match remaining.as_slice() {
        [] => return Err("every player folded".to_owned()),
        [winner] => return Ok(Ending::Uncontested(*winner)),
        _ => {}
    }
    let showing: Vec<Player> = remaining.iter().copied().filter(|p| !mucked[p.index()]).collect();
    if showing.is_empty() {
        return Err("every remaining player mucked".to_owned());
    }
    // A lone player left showing takes the pots without a ranking.
    let needs_ranking = showing.len() > 1;
    let mut contenders = Vec::with_capacity(showing.len());
    for player in showing {
        // The shown cards are the hole cards when given in full, else those dealt (a stud
        // player all in early shows part of the hand before the last cards are dealt).
        let hole = match shown[player.index()] {
            Some(cards) if cards.all_known() && cards.len() >= dealt[player.index()].len => {
                let mut list = CardList::EMPTY;
                list.extend(&cards)?;
                list
            }
            _ => dealt[player.index()],
        };
        let (strength, low) = if needs_ranking {
            let rank_error = |error| format!("showdown of {player}: {error}");
            let high = strength(hand.variant, hole.as_slice(), board.as_slice()).map_err(rank_error)?;
            let low = low_strength(hand.variant, hole.as_slice(), board.as_slice()).map_err(rank_error)?;
            (high, low)
        } else {
            (HandStrength(0), None)
        };
        let (high_card, low_card) = odd_chip_cards(hole.as_slice());
        contenders.push(Contender { player, strength, low, high_card, low_card });
    }
    Ok(Ending::Showdown { contenders })
}
