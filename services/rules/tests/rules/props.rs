//! Property tests over random tables and random legal play, driven by `legal_actions`:
//! chips conserved after every event (postings sum to zero, all balances sum to zero), no
//! negative balance, table state equal to the ledger, pots empty at hand end, every
//! contribution ends as an award, rake, drop or return (R-POT-6), and replaying the log
//! through `evolve` reproduces every state.

use std::collections::BTreeMap;

use chipledger_rules::*;
use proptest::prelude::*;

use crate::support::*;

fn config_for(family: u8, antes: bool, fee: bool, extras: bool) -> TableConfig {
    let mut c = match family {
        0 => TableConfig::no_limit_holdem(d(1), d(2)),
        1 => TableConfig::pot_limit_holdem(d(1), d(2)),
        2 => TableConfig::pot_limit_omaha(d(1), d(2)),
        3 => TableConfig::fixed_limit_holdem(d(2), d(4), 3),
        4 => TableConfig::spread_limit_holdem(d(1), d(1), d(1), d(5), Some(d(10))),
        5 => TableConfig::half_pot_limit_holdem(d(1), d(2)),
        6 => TableConfig::cap_limit_holdem(d(1), d(2), d(30)),
        _ => TableConfig::seven_card_stud(d(1), d(1), d(2), d(4)),
    };
    c = example_config(c);
    if antes && c.ante_cents == 0 {
        c.ante_cents = d(1);
    }
    if fee {
        c.fee = FeePolicy::Rake { percent_bps: 1000, increment_cents: d(1), cap_cents: d(5), no_flop_no_drop: true, min_pot_cents: 0 };
    }
    if extras {
        c.jackpot_drop = Some(config::JackpotDrop { amount_cents: d(1), min_pot_cents: d(10) });
        c.kitty = Some(config::KittyPolicy { min_pot_cents: d(5), leftover: Default::default(), from: config::KittyFrom::MainPot });
        c.incomplete_raise_rule = IncompleteRaiseRule::HalfBet;
    }
    c
}

/// Pick a legal command for the seat in turn from `seed`.
fn choose(l: &LegalActions, seed: u32) -> Action {
    let options = 3 + l.raise.is_some() as u32 + l.all_in_allowed as u32;
    match seed % options {
        0 if l.can_call => Action::Fold,
        0..=2 => {
            if l.can_check {
                Action::Check
            } else {
                Action::Call
            }
        }
        3 if l.raise.is_some() => {
            let r = l.raise.unwrap_or(RaiseRange { kind: ActionKind::Bet, min_to_cents: 0, max_to_cents: 0 });
            let span = r.max_to_cents - r.min_to_cents;
            let pick = r.min_to_cents + if span > 0 { (seed as i64 / 7) % (span + 1) } else { 0 };
            let floored = pick - pick % l.min_chip_cents;
            let to = if floored < r.min_to_cents { r.min_to_cents } else { floored };
            Action::Raise { to_cents: to }
        }
        _ => Action::AllIn,
    }
}

/// Random ranking of the live seats: shuffled, with random ties.
fn ranking(live: &[Seat], seed: u32) -> Vec<Vec<Seat>> {
    let mut seats = live.to_vec();
    let n = seats.len();
    for i in 0..n {
        let j = (seed as usize / (i + 1)) % n;
        seats.swap(i, j);
    }
    let mut groups: Vec<Vec<Seat>> = Vec::new();
    for (i, s) in seats.into_iter().enumerate() {
        if i > 0 && (seed >> (i % 16)) & 3 == 0 {
            groups.last_mut().unwrap().push(s);
        } else {
            groups.push(vec![s]);
        }
    }
    groups
}

#[derive(Debug, Clone)]
struct Play {
    family: u8,
    antes: bool,
    fee: bool,
    extras: bool,
    stacks: Vec<i64>,
    seeds: Vec<u32>,
    hands: u8,
}

fn play_strategy() -> impl Strategy<Value = Play> {
    (
        0u8..8,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(1i64..400, 2..=7),
        prop::collection::vec(any::<u32>(), 64..400),
        1u8..5,
    )
        .prop_map(|(family, antes, fee, extras, stacks, seeds, hands)| Play { family, antes, fee, extras, stacks, seeds, hands })
}

fn contributions_of(events: &[(StreamId, Event)]) -> Cents {
    events
        .iter()
        .map(|(_, e)| match e {
            Event::Table(TableEvent::Posted { amount_cents, .. }) | Event::Table(TableEvent::Acted { amount_cents, .. }) => *amount_cents,
            _ => 0,
        })
        .sum()
}

/// Counts of what a run exercised: (hands, showdowns, side pots, uncalled returns).
fn run(play: &Play) -> (u32, u32, u32, u32) {
    let mut stats = (0, 0, 0, 0);
    let config = config_for(play.family, play.antes, play.fee, play.extras);
    let stacks: Vec<(Seat, Cents)> = play.stacks.iter().enumerate().map(|(i, s)| ((i + 1) as Seat, d(*s))).collect();
    let mut g = Game::new(config.clone(), &stacks);
    let mut seeds = play.seeds.iter().copied().cycle();
    let mut next = move || seeds.next().unwrap_or(0);
    let mut button: Seat = 1;
    for hand_no in 1..=play.hands as u64 {
        let dealt: Vec<Seat> = (1..=stacks.len() as Seat).filter(|s| g.stack(*s) > 0).collect();
        if dealt.len() < 2 {
            break;
        }
        button = dealt.iter().copied().find(|s| *s > button).unwrap_or(dealt[0]);
        // Heads-up a dead button is the small blind: the dealer puts it where the core says.
        if let Err(r) = g.table(TableOp::StartHand { hand_no, button_seat: button, dealt_seats: dealt.clone() }) {
            assert_eq!(r.reason.code, "BUTTON_OUT_OF_TURN", "{r}");
            button = r.number("expected_button_seat").expect("the button due") as Seat;
            g.start(hand_no, button, &dealt);
        }
        let mut hand_events: Vec<(StreamId, Event)> = Vec::new();
        // Posts: antes, then blinds left of the button (or the bring-in in stud).
        let after = |from: Seat, k: usize| {
            let i = dealt.iter().position(|s| *s > from).unwrap_or(0);
            dealt[(i + k) % dealt.len()]
        };
        let mut posts: Vec<(Seat, PostKind, Cents)> = Vec::new();
        if config.ante_cents > 0 {
            posts.extend(dealt.iter().map(|s| (*s, PostKind::Ante, config.ante_cents)));
        }
        if let Some(b) = config.bring_in_cents {
            // The first seat left of the button still active after the antes (a low card all
            // in on the ante passes the bring-in on; no up cards are reported here).
            let bring_in_seat = (0..dealt.len())
                .map(|k| after(button, k))
                .find(|s| config.ante_cents == 0 || g.stack(*s) > config.ante_cents)
                .unwrap_or(after(button, 0));
            posts.push((bring_in_seat, PostKind::BringIn, b));
        } else {
            // R-POST-2: where the core says the blinds fall (a dead button follows the big blind).
            let blinds = g.hand().blinds;
            posts.extend(blinds.small.map(|s| (s, PostKind::SmallBlind, config.blinds_cents[0])));
            posts.extend(blinds.big.map(|s| (s, PostKind::BigBlind, config.blinds_cents[1])));
        }
        for (seat, kind, amount) in posts {
            let in_hand = g.hand().player(seat).is_some_and(|p| p.status == InHand::Active);
            if !in_hand || g.hand().phase != HandPhase::Betting {
                continue;
            }
            let amount = amount.min(g.stack(seat));
            hand_events.extend(g.post(seat, kind, amount).unwrap_or_else(|r| panic!("post refused: {r}")));
        }
        let mut steps = 0;
        loop {
            steps += 1;
            assert!(steps < 500, "hand does not end");
            let phase = g.hand().phase;
            if let Some(l) = legal_actions(g.state()) {
                let action = choose(&l, next());
                let events = g.act(l.seat, action).unwrap_or_else(|r| panic!("legal action refused: {action:?} {l:?}: {r} {:?}", r.numbers));
                hand_events.extend(events);
                continue;
            }
            match phase {
                HandPhase::Settled => break,
                HandPhase::Betting => panic!("betting phase with nobody to act"),
                HandPhase::RoundComplete => {
                    let h = g.hand();
                    let more_rounds = h.round.index + 1 < config.betting_rounds;
                    let betting_over = !more_rounds || h.active_count() <= 1;
                    if more_rounds && !(betting_over && next() % 2 == 0) {
                        let first = if config.bring_in_cents.is_some() {
                            h.players.iter().find(|p| p.status == InHand::Active).map(|p| p.seat)
                        } else {
                            None
                        };
                        g.table(TableOp::NextRound { first_to_act_seat: first }).unwrap();
                    } else {
                        let live: Vec<Seat> = h.players.iter().filter(|p| p.status != InHand::Folded).map(|p| p.seat).collect();
                        let high = ranking(&live, next());
                        let low = (config.hi_lo || next() % 4 == 0).then(|| ranking(&live, next()).into_iter().take(1).collect());
                        let low = if config.hi_lo { low } else { None };
                        hand_events.extend(g.table(TableOp::Showdown { high, low, rake_cents: None }).unwrap_or_else(|r| panic!("showdown refused: {r}")));
                    }
                }
            }
        }
        // R-POT-6: contributions = awards + rake + drops (+ returns, inside the awards).
        let contributed = contributions_of(&hand_events);
        let (mut pots, rake, jackpot, kitty) = hand_events
            .iter()
            .find_map(|(_, e)| match e {
                Event::Table(TableEvent::HandSettled { pots, rake_cents, jackpot_cents, kitty_cents, .. }) => {
                    Some((pots.clone(), *rake_cents, *jackpot_cents, *kitty_cents))
                }
                _ => None,
            })
            .expect("settled");
        // R-POT-3: side pots paid at once are pots of the hand too.
        pots.extend(hand_events.iter().filter_map(|(_, e)| match e {
            Event::Table(TableEvent::SidePotPaid { pot, .. }) => Some(pot.clone()),
            _ => None,
        }));
        stats.0 += 1;
        stats.1 += hand_events.iter().any(|(_, e)| matches!(e, Event::Table(TableEvent::HandSettled { showdown: true, .. }))) as u32;
        stats.2 += (pots.len() > 1) as u32;
        stats.3 += pots.iter().any(|p| p.returned_cents > 0) as u32;
        let pot_total: Cents = pots.iter().map(|p| p.amount_cents).sum();
        let awards: Cents = pots.iter().flat_map(|p| p.awards.iter().map(|a| a.1)).sum();
        assert_eq!(pot_total, contributed, "every contribution is in a pot");
        // The hand's rake: the settlement's and that of the side pots paid at once (R-RAKE-1).
        let settled_pots = pots.len() - hand_events.iter().filter(|(_, e)| matches!(e, Event::Table(TableEvent::SidePotPaid { .. }))).count();
        assert_eq!(pots[..settled_pots].iter().map(|p| p.rake_cents).sum::<Cents>(), rake, "the settlement's rake is its pots'");
        let rake: Cents = pots.iter().map(|p| p.rake_cents).sum();
        assert_eq!(contributed, awards + rake + jackpot + kitty, "R-POT-6");
        for p in &pots {
            assert!(p.awards.iter().all(|(s, a)| *a >= 0 && p.eligible.contains(s)), "R-POT-5: only eligible players win");
            assert!(p.rake_cents <= p.amount_cents - p.returned_cents, "R-POT-4: uncalled chips never raked");
        }
        g.end();
        assert_eq!(g.state().pot_cents, 0, "R-UNIT-4: pot empty at hand end");
    }
    replay_matches(&g.world);
    stats
}

/// Rebuild every stream from the log (through JSON, as the store keeps it) and compare.
fn replay_matches(world: &World) {
    let mut tables: BTreeMap<TableId, TableState> = BTreeMap::new();
    let mut players: BTreeMap<PlayerId, PlayerState> = BTreeMap::new();
    let mut cages: BTreeMap<CageId, CageState> = BTreeMap::new();
    for (sid, e) in &world.log {
        let json = serde_json::to_string(e).unwrap();
        let back: Event = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, e, "JSON round trip");
        match (sid, back) {
            (StreamId::Table(id), Event::Table(te)) => {
                let s = tables.remove(id).unwrap_or_default();
                tables.insert(id.clone(), s.evolve(&te));
            }
            (StreamId::Player(id), Event::Player(pe)) => {
                let s = players.remove(id).unwrap_or_default();
                players.insert(id.clone(), s.evolve(&pe));
            }
            (StreamId::Cage(id), Event::Cage(ce)) => {
                let s = cages.remove(id).unwrap_or_default();
                cages.insert(id.clone(), s.evolve(&ce));
            }
            _ => panic!("event on the wrong stream"),
        }
    }
    assert_eq!(tables, world.tables, "replay(evolve) reproduces the tables");
    assert_eq!(players, world.players, "replay(evolve) reproduces the players");
    assert_eq!(cages, world.cages, "replay(evolve) reproduces the cages");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn prop_random_legal_play_conserves_chips_and_replays(play in play_strategy()) {
        run(&play);
    }
}

#[test]
fn prop_every_family_plays_a_long_session() {
    let mut total = (0, 0, 0, 0);
    for family in 0..8u8 {
        let play = Play {
            family,
            antes: family % 2 == 0,
            fee: true,
            extras: family % 3 == 0,
            stacks: vec![50, 120, 7, 300, 90, 33],
            seeds: (0..997u32).map(|i| i.wrapping_mul(2_654_435_761)).collect(),
            hands: 12,
        };
        let s = run(&play);
        total = (total.0 + s.0, total.1 + s.1, total.2 + s.2, total.3 + s.3);
    }
    let (hands, showdowns, side_pots, returns) = total;
    assert!(hands >= 40 && showdowns > 0 && side_pots > 0 && returns > 0, "the session exercises the engine: {total:?}");
}
