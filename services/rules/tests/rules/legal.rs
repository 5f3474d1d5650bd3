//! `legal_actions` and `Act` agree (R-BET-2, R-MARK-3): over random tables and random play,
//! every action `legal_actions` offers is accepted, the ends of its raise range are accepted,
//! one chip beyond either end is refused, and what it withholds is refused.

use chipledger_rules::*;
use proptest::prelude::*;

use crate::support::*;

fn config_for(family: u8, open_stakes: bool) -> TableConfig {
    let mut c = match family {
        0 => TableConfig::no_limit_holdem(d(1), d(2)),
        1 => TableConfig::pot_limit_omaha(d(1), d(2)),
        2 => TableConfig::fixed_limit_holdem(d(2), d(4), 3),
        3 => TableConfig::spread_limit_holdem(d(1), d(1), d(1), d(5), Some(d(10))),
        4 => TableConfig::half_pot_limit_holdem(d(1), d(2)),
        5 => TableConfig::cap_limit_holdem(d(1), d(2), d(30)),
        6 => TableConfig::razz(d(1), d(1), d(2), d(4)),
        _ => {
            let mut c = TableConfig::fixed_limit_holdem(d(5), d(10), 3);
            c.blinds_cents = vec![d(1), d(2)]; // blinds below the bet: completions
            c
        }
    };
    c = example_config(c);
    if open_stakes {
        c.stakes = StakesMode::OpenStakes { iou_auto_accept_below_cents: d(1_000), ious_allowed: true };
    }
    c
}

fn probe(g: &Game, seat: Seat, action: Action) -> Result<Vec<TableEvent>, Rejection> {
    let command = TableCommand { table_id: g.table_id.clone(), op: TableOp::Act { seat, action } };
    decide_table(g.state(), &g.world.ctx, &command)
}

/// Everything `l` offers is accepted; one chip past it, or anything it withholds, is refused.
fn check_agreement(g: &Game, l: &LegalActions) {
    let ok = |action: Action| probe(g, l.seat, action).is_ok();
    let chip = l.min_chip_cents;
    assert_eq!(ok(Action::Fold), l.can_fold, "fold {l:?}");
    assert_eq!(ok(Action::Check), l.can_check, "check {l:?}");
    if l.call_cents > 0 {
        assert_eq!(ok(Action::Call), l.can_call, "call {l:?}");
    }
    assert_eq!(ok(Action::AllIn), l.all_in_allowed, "all in {l:?}");
    match l.raise {
        Some(r) => {
            assert!(ok(Action::Raise { to_cents: r.min_to_cents }), "raise to the minimum {l:?}");
            assert!(ok(Action::Raise { to_cents: r.max_to_cents }), "raise to the maximum {l:?}");
            let below = r.min_to_cents - chip;
            let is_all_in = below == l.all_in_to_cents && l.all_in_allowed;
            if below > l.bet_to_cents && !is_all_in {
                assert!(!ok(Action::Raise { to_cents: below }), "one chip below the minimum {l:?}");
            }
            let above = r.max_to_cents + chip;
            assert!(!ok(Action::Raise { to_cents: above }), "one chip above the maximum {l:?}");
        }
        None => {
            for to_cents in [l.bet_to_cents + chip, l.all_in_to_cents] {
                if to_cents > l.bet_to_cents && !(to_cents == l.all_in_to_cents && l.all_in_allowed) {
                    assert!(!ok(Action::Raise { to_cents }), "no raise was offered {l:?}");
                }
            }
        }
    }
}

fn pick(l: &LegalActions, seed: u32) -> Action {
    if l.bring_in_cents.is_some() {
        return Action::Raise { to_cents: l.raise.map_or(0, |r| r.min_to_cents) };
    }
    match seed % 6 {
        0 if l.can_fold && !l.can_check => Action::Fold,
        1 | 2 if l.raise.is_some() => {
            let r = l.raise.unwrap_or(RaiseRange { kind: ActionKind::Bet, min_to_cents: 0, max_to_cents: 0 });
            let span = (r.max_to_cents - r.min_to_cents) / l.min_chip_cents;
            let to = r.min_to_cents + (seed as i64 / 6 % (span + 1)) * l.min_chip_cents;
            Action::Raise { to_cents: to }
        }
        3 if l.all_in_allowed => Action::AllIn,
        _ if l.can_check => Action::Check,
        _ if l.can_call => Action::Call,
        _ => Action::Fold,
    }
}

const DECK: &str = "2c2d2h2s3c3d3h3s4c4d4h4s5c5d5h5s6c6d6h6s7c7d7h7s8c8d8h8s9c9d9h9sTcTdThTsJcJdJhJsQcQdQhQsKcKdKhKsAcAdAhAs";

fn run(family: u8, open_stakes: bool, stacks: &[i64], seeds: &[u32]) {
    let config = config_for(family, open_stakes);
    let seated: Vec<(Seat, Cents)> = stacks.iter().enumerate().map(|(i, s)| ((i + 1) as Seat, d(*s))).collect();
    let mut g = Game::new(config.clone(), &seated);
    let mut seeds = seeds.iter().copied().cycle();
    let mut next = move || seeds.next().unwrap_or(0);
    let dealt: Vec<Seat> = seated.iter().map(|(s, _)| *s).collect();
    let button = dealt[dealt.len() - 1];
    g.start(1, button, &dealt);
    // Razz: the dealer reports each street's up cards (distinct cards from the deck); the core
    // names the bring-in and the first to act.
    let mut deck = (next() as usize % 13) * 2;
    let mut deal_up = |g: &mut Game, live_only: bool| {
        let seats: Vec<Seat> =
            g.hand().players.iter().filter(|p| !live_only || p.status != InHand::Folded).map(|p| p.seat).collect();
        let cards: Vec<hand::UpCard> = seats
            .into_iter()
            .map(|seat| {
                deck = (deck + 2) % DECK.len();
                hand::UpCard { seat, card: DECK[deck..deck + 2].parse().unwrap() }
            })
            .collect();
        g.table(TableOp::DealUpCards { cards }).unwrap();
    };
    if config.bring_in_cents.is_some() {
        for seat in &dealt {
            g.post(*seat, PostKind::Ante, config.ante_cents.min(g.stack(*seat))).unwrap();
        }
        deal_up(&mut g, false);
    } else {
        let blinds = g.hand().blinds;
        let posts = [(blinds.small, PostKind::SmallBlind, config.blinds_cents[0]), (blinds.big, PostKind::BigBlind, config.blinds_cents[1])];
        for (seat, kind, amount) in posts {
            if let Some(seat) = seat.filter(|s| g.hand().player(*s).is_some_and(|p| p.status == InHand::Active)) {
                g.post(seat, kind, amount.min(g.stack(seat))).unwrap();
            }
        }
    }
    for _ in 0..200 {
        let Some(l) = legal_actions(g.state()) else {
            let h = g.hand();
            if h.phase != HandPhase::RoundComplete || h.round.index + 1 >= config.betting_rounds {
                break;
            }
            let stud_street = config.bring_in_cents.is_some() && h.round.index < 3;
            if stud_street {
                deal_up(&mut g, true);
            }
            g.table(TableOp::NextRound { first_to_act_seat: None }).unwrap();
            continue;
        };
        check_agreement(&g, &l);
        // Open stakes: now and then the seat in turn borrows to raise (R-MARK-3).
        if open_stakes && next() % 5 == 0 {
            let others: Vec<Seat> = g.hand().players.iter().filter(|p| p.seat != l.seat && p.status == InHand::Active).map(|p| p.seat).collect();
            let iou = TableOp::WriteIou { seat: l.seat, amount_cents: d(20), lender: None, accepted_by: others, to_raise: true };
            if g.table(iou).is_ok()
                && let Some(l) = legal_actions(g.state())
            {
                check_agreement(&g, &l);
            }
            continue;
        }
        let l = legal_actions(g.state()).expect("still in turn");
        // R-POST-5: the bring-in seat posts it, or opens for a full bet.
        if let Some(bring_in) = l.bring_in_cents
            && next() % 2 == 0
        {
            g.post(l.seat, PostKind::BringIn, bring_in).unwrap_or_else(|r| panic!("offered bring-in refused: {r} {l:?}"));
            continue;
        }
        let action = pick(&l, next());
        g.act(l.seat, action).unwrap_or_else(|r| panic!("offered {action:?} refused: {r} {l:?}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn prop_r_bet_2_legal_actions_and_act_agree(
        family in 0u8..8,
        open_stakes in any::<bool>(),
        stacks in prop::collection::vec(1i64..120, 2..=6),
        seeds in prop::collection::vec(any::<u32>(), 16..64),
    ) {
        run(family, open_stakes, &stacks, &seeds);
    }
}
