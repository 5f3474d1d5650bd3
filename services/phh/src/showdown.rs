//! Who contests the pots at the end of a hand, and with what strength.
//!
//! A player who folded is out. At showdown a player who mucks (`pN sm` with no
//! cards) forfeits. Every other remaining player is ranked from the cards shown (or,
//! if they never showed, the cards dealt to them); a needed card that is unknown
//! (`??`) makes the hand unsupported, since no honest award can be computed.

use crate::card::{Card, Cards};
use crate::hand_rank::{HandStrength, strength};
use crate::history::{Action, HandHistory, MAX_PLAYERS, Player, Shown};

/// Most cards a player or the board may collect in one hand (seven-card stud: 7).
const MAX_CARDS: usize = 8;

/// A player in the showdown and the strength of their best hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contender {
    pub player: Player,
    pub strength: HandStrength,
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
                Shown::Cards(cards) => shown[player.index()] = Some(cards),
            },
            Action::StandPatOrDiscard { discarded, .. } if !discarded.is_empty() => {
                return Err("draw games (discards) are not replayed".to_owned());
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
        // The shown cards are the hole cards when given in full, else those dealt.
        let hole = match shown[player.index()] {
            Some(cards) if cards.all_known() => {
                let mut list = CardList::EMPTY;
                list.extend(&cards)?;
                list
            }
            _ => dealt[player.index()],
        };
        let strength = if needs_ranking {
            strength(hand.variant, hole.as_slice(), board.as_slice())
                .map_err(|error| format!("showdown of {player}: {error}"))?
        } else {
            HandStrength(0)
        };
        contenders.push(Contender { player, strength });
    }
    Ok(Ending::Showdown { contenders })
}
