//! Property tests that throw random commands from every door (buy-in, top-up, cash in play,
//! marker to a seat, IOU and its settlement, move, correction, tip, color change, removal,
//! cash-out, hands in progress) at random table states, and check after every accepted command:
//! - R-STAKE-2: chips leave a seated stack only by the ways the rule lists (a bet or post, time,
//!   a tip within the cap, the refreshment allowance, a full cash-out that empties the seat, a
//!   house move, an IOU paid back, a loan to another seat,
//!   an approved correction); a color change leaves the stack's value unchanged;
//! - R-STAKE-1: nothing is added to the stack of a player live in a hand (open stakes excepted,
//!   R-MARK-4) except what the hand itself awards;
//! - R-MARK-3: nothing leaving a table (a cash-out, a move, a tip, time) takes the paper of an
//!   unpaid IOU with it;
//! - R-REBUY-1: no return to a game within the wait window buys in below the amount left with,
//!   and no patron holds two seats of one game;
//! - and, through the test world, conservation and non-negative balances (R-UNIT-3, R-UNIT-4).

use std::collections::BTreeMap;

use chipledger_rules::*;
use proptest::prelude::*;

use crate::support::*;

const MINUTE: i64 = 60_000;
const PLAYERS: [&str; 5] = ["A", "B", "C", "D", "E"];
/// Tables 0 and 1 play the same game (the re-buy scope); table 2 is an open-stakes game.
const TABLES: [&str; 3] = ["T1", "T2", "T3"];

fn table_config(open_stakes: bool) -> TableConfig {
    let mut c = TableConfig::no_limit_holdem(d(1), d(2));
    c.fee = FeePolicy::NoFee;
    c.cash_in_play_allowed = true;
    c.buy_in.supervisor_threshold_cents = d(150);
    // R-STAKE-2: $5 a session for refreshments.
    c.refreshment_allowance_cents = d(5);
    if open_stakes {
        c.stakes = StakesMode::OpenStakes { iou_auto_accept_below_cents: d(50), ious_allowed: true };
        c.game_key = "NLHE 100/200 private".into();
    }
    c
}

/// One random command, interpreted against the world as it is.
#[derive(Debug, Clone)]
enum Door {
    Seat { table: u8, seat: u8, player: u8 },
    BuyIn { table: u8, seat: u8, player: u8, amount: u8, supervised: bool },
    TopUp { table: u8, seat: u8, amount: u8 },
    CashInPlay { table: u8, seat: u8, amount: u8 },
    Convert { table: u8, seat: u8 },
    Marker { table: u8, seat: u8, amount: u8 },
    Iou { seat: u8, amount: u8 },
    SettleIou { seat: u8, amount: u8, from_pocket: bool },
    Loan { seat: u8, lender_seat: u8, amount: u8 },
    Repay { seat: u8, amount: u8, from_pocket: bool },
    CashOut { table: u8, seat: u8 },
    Move { table: u8, seat: u8, to_table: u8, to_seat: u8 },
    Remove { table: u8, seat: u8, amount: u8 },
    Tip { table: u8, seat: u8, amount: u8 },
    ColorUp { table: u8, seat: u8 },
    Correct { table: u8, back: u8 },
    StartHand { table: u8 },
    Act { table: u8, seed: u32 },
    FinishHand { table: u8, seed: u32 },
    Wait { minutes: u8 },
}

/// The unpaid IOUs payable to a pot's winner, written at the table's seats.
fn unpaid_paper_cents(table: &TableState) -> Cents {
    table.seats.iter().flatten().map(|s| s.iou_cents).sum()
}

fn door() -> impl Strategy<Value = Door> {
    let t = 0u8..3;
    let s = 1u8..=4;
    prop_oneof![
        1 => (t.clone(), s.clone(), 0u8..5).prop_map(|(table, seat, player)| Door::Seat { table, seat, player }),
        4 => (t.clone(), s.clone(), 0u8..5, any::<u8>(), any::<bool>())
            .prop_map(|(table, seat, player, amount, supervised)| Door::BuyIn { table, seat, player, amount, supervised }),
        1 => (t.clone(), s.clone(), any::<u8>()).prop_map(|(table, seat, amount)| Door::TopUp { table, seat, amount }),
        1 => (t.clone(), s.clone(), any::<u8>()).prop_map(|(table, seat, amount)| Door::CashInPlay { table, seat, amount }),
        1 => (t.clone(), s.clone()).prop_map(|(table, seat)| Door::Convert { table, seat }),
        1 => (t.clone(), s.clone(), any::<u8>()).prop_map(|(table, seat, amount)| Door::Marker { table, seat, amount }),
        1 => (s.clone(), any::<u8>()).prop_map(|(seat, amount)| Door::Iou { seat, amount }),
        1 => (s.clone(), any::<u8>(), any::<bool>()).prop_map(|(seat, amount, from_pocket)| Door::SettleIou { seat, amount, from_pocket }),
        1 => (s.clone(), s.clone(), any::<u8>()).prop_map(|(seat, lender_seat, amount)| Door::Loan { seat, lender_seat, amount }),
        1 => (s.clone(), any::<u8>(), any::<bool>()).prop_map(|(seat, amount, from_pocket)| Door::Repay { seat, amount, from_pocket }),
        3 => (t.clone(), s.clone()).prop_map(|(table, seat)| Door::CashOut { table, seat }),
        1 => (t.clone(), s.clone(), t.clone(), s.clone()).prop_map(|(table, seat, to_table, to_seat)| Door::Move { table, seat, to_table, to_seat }),
        1 => (t.clone(), s.clone(), any::<u8>()).prop_map(|(table, seat, amount)| Door::Remove { table, seat, amount }),
        1 => (t.clone(), s.clone(), any::<u8>()).prop_map(|(table, seat, amount)| Door::Tip { table, seat, amount }),
        1 => (t.clone(), s.clone()).prop_map(|(table, seat)| Door::ColorUp { table, seat }),
        1 => (t.clone(), any::<u8>()).prop_map(|(table, back)| Door::Correct { table, back }),
        3 => t.clone().prop_map(|table| Door::StartHand { table }),
        3 => (t.clone(), any::<u32>()).prop_map(|(table, seed)| Door::Act { table, seed }),
        3 => (t.clone(), any::<u32>()).prop_map(|(table, seed)| Door::FinishHand { table, seed }),
        2 => (0u8..90).prop_map(|minutes| Door::Wait { minutes }),
    ]
}

/// An amount from a byte: the interesting edges of $1/$2 (limits $40/$200) and anything else.
fn amount(byte: u8) -> Cents {
    match byte % 10 {
        0 => d(39),
        1 => d(40),
        2 => d(200),
        3 => d(201),
        4 => d(150),
        5 => d(1 + i64::from(byte)),
        _ => d(40 + i64::from(byte) % 110),
    }
}

struct Run {
    g: Game,
    hands: [u64; 3],
    /// (player, game) -> (left at, amount left with), from the log (R-REBUY-1 model).
    /// Per patron and game: the departures with chips not yet met by a return (at, amount).
    departures: BTreeMap<(String, String), Vec<(i64, Cents)>>,
    next_marker: u64,
}

impl Run {
    fn new() -> Run {
        let mut g = Game::new(table_config(false), &[]);
        for (i, name) in TABLES.iter().enumerate().skip(1) {
            let config = table_config(i == 2);
            let t = tid(name);
            g.world.exec(Command::Table(TableCommand { table_id: t.clone(), op: TableOp::OpenTable { config } })).unwrap();
            let fill = vec![ChipCount { denomination_cents: d(1), count: 5_000 }, ChipCount { denomination_cents: d(5), count: 2_000 }];
            let slip_no = g.next_fill_slip;
            g.world
                .exec(Command::Table(TableCommand {
                    table_id: t,
                    op: TableOp::Fill { cage_id: cid(CAGE), slip_no, chips: fill, signers: Signers { first: "c".into(), second: "f".into() } },
                }))
                .unwrap();
            g.next_fill_slip += 1;
        }
        for p in PLAYERS {
            g.world
                .exec(Command::Player(PlayerCommand {
                    player_id: pid(p),
                    op: PlayerOp::SetCreditLine { line_cents: d(100_000), approved_by: "credit".into() },
                }))
                .unwrap();
        }
        Run { g, hands: [0; 3], departures: BTreeMap::new(), next_marker: 1 }
    }

    fn table(&self, t: u8) -> &TableState {
        &self.g.world.tables[&tid(TABLES[t as usize % 3])]
    }

    fn occupant(&self, t: u8, seat: Seat) -> Option<PlayerId> {
        self.table(t).seat(seat).map(|s| s.player_id.clone())
    }

    fn exec_table(&mut self, t: u8, op: TableOp) -> Result<Vec<(StreamId, Event)>, Rejection> {
        let table_id = tid(TABLES[t as usize % 3]);
        self.g.world.exec(Command::Table(TableCommand { table_id, op }))
    }

    /// The command the door stands for, if the world lets one be formed.
    fn command(&mut self, door: &Door) -> Option<Command> {
        let table_cmd = |t: u8, op: TableOp| Some(Command::Table(TableCommand { table_id: tid(TABLES[t as usize % 3]), op }));
        let occupant = |run: &Run, t: u8, seat: u8| run.occupant(t, seat).unwrap_or_else(|| pid(PLAYERS[seat as usize % 5]));
        match door.clone() {
            Door::Seat { table, seat, player } => table_cmd(table, TableOp::SeatPlayer { seat, player_id: pid(PLAYERS[player as usize]) }),
            Door::BuyIn { table, seat, player, amount: a, supervised } => table_cmd(
                table,
                TableOp::BuyIn {
                    seat,
                    player_id: pid(PLAYERS[player as usize]),
                    amount_cents: amount(a),
                    source: FundsSource::Cash,
                    supervisor_id: supervised.then(|| "floor-9".into()),
                    short_buy: false,
                },
            ),
            Door::TopUp { table, seat, amount: a } => table_cmd(
                table,
                TableOp::TopUp { seat, player_id: occupant(self, table, seat), amount_cents: amount(a), source: FundsSource::Cash, supervisor_id: None },
            ),
            Door::CashInPlay { table, seat, amount: a } => {
                table_cmd(table, TableOp::PutCashInPlay { seat, player_id: occupant(self, table, seat), amount_cents: amount(a), supervisor_id: None })
            }
            Door::Convert { table, seat } => table_cmd(table, TableOp::ConvertCashInPlay { seat }),
            Door::Marker { table, seat, amount: a } => {
                let marker_no = self.next_marker;
                Some(Command::Cage(CageCommand {
                    cage_id: cid(CAGE),
                    op: CageOp::IssueMarker {
                        player_id: occupant(self, table, seat),
                        marker_no,
                        chips: vec![ChipCount { denomination_cents: d(1), count: amount(a) / d(1) }],
                        approved_by: "credit".into(),
                        delivery: MarkerDelivery::Seat { table_id: tid(TABLES[table as usize % 3]), seat },
                    },
                }))
            }
            Door::Iou { seat, amount: a } => {
                table_cmd(2, TableOp::WriteIou { seat, amount_cents: amount(a) % d(60), lender: None, accepted_by: vec![1, 2, 3, 4], to_raise: false })
            }
            Door::SettleIou { seat, amount: a, from_pocket } => {
                table_cmd(2, TableOp::SettleIou { seat, player_id: occupant(self, 2, seat), amount_cents: amount(a) % d(60), from_pocket, lender: None })
            }
            Door::Loan { seat, lender_seat, amount: a } => table_cmd(
                2,
                TableOp::WriteIou {
                    seat,
                    amount_cents: amount(a) % d(60),
                    lender: Some(occupant(self, 2, lender_seat)),
                    accepted_by: vec![1, 2, 3, 4],
                    to_raise: false,
                },
            ),
            Door::Repay { seat, amount: a, from_pocket } => {
                let lender = self.table(2).seat(seat).and_then(|s| s.loans.first()).map(|l| l.lender.clone());
                table_cmd(2, TableOp::SettleIou { seat, player_id: occupant(self, 2, seat), amount_cents: amount(a) % d(60), from_pocket, lender })
            }
            Door::CashOut { table, seat } => table_cmd(table, TableOp::CashOut { seat, player_id: occupant(self, table, seat) }),
            Door::Move { table, seat, to_table, to_seat } => table_cmd(
                table,
                TableOp::MovePlayer { seat, player_id: occupant(self, table, seat), to_table_id: tid(TABLES[to_table as usize % 3]), to_seat },
            ),
            Door::Remove { table, seat, amount: a } => table_cmd(
                table,
                TableOp::RemoveChips { seat, amount_cents: amount(a) / 16, player_id: (a % 2 == 0).then(|| occupant(self, table, seat)) },
            ),
            Door::Tip { table, seat, amount: a } => table_cmd(table, TableOp::Tip { seat, amount_cents: amount(a) / 4 }),
            Door::ColorUp { table, seat } => table_cmd(
                table,
                TableOp::ColorChange {
                    seat,
                    give: vec![ChipCount { denomination_cents: d(1), count: 5 }],
                    receive: vec![ChipCount { denomination_cents: d(5), count: 1 }],
                },
            ),
            Door::Correct { table, back } => {
                let stream = StreamId::Table(tid(TABLES[table as usize % 3]));
                let moving: Vec<usize> = (0..self.g.world.log.len())
                    .filter(|i| self.g.world.log[*i].0 == stream && self.g.world.log[*i].1.moves_chips())
                    .collect();
                let i = *moving.get(moving.len().checked_sub(1 + back as usize % 8)?)?;
                let postings = self.g.world.log[i].1.postings();
                table_cmd(
                    table,
                    TableOp::Correct {
                        reverses_event_id: format!("event-{i}"),
                        reverses_stream_version: stream_version_at(&self.g.world.log, i),
                        reverses_event_types: vec![self.g.world.log[i].1.event_type().into()],
                        reverses_gaming_day: self.g.world.ctx.gaming_day.clone(),
                        original_postings: postings,
                        approved_by: "floor-2".into(),
                        reason: "prop".into(),
                    },
                )
            }
            Door::StartHand { .. } | Door::Act { .. } | Door::FinishHand { .. } | Door::Wait { .. } => None,
        }
    }

    /// Deal a hand at `t` to every seat with chips and post the blinds in position.
    fn start_hand(&mut self, t: u8) {
        let table = self.table(t);
        if table.hand.is_some() {
            return;
        }
        let dealt: Vec<Seat> = (1..=4u8).filter(|s| table.seat(*s).is_some_and(|x| x.stack_cents > 0 && !x.sitting_out)).collect();
        if dealt.len() < 2 {
            return;
        }
        let n = self.hands[t as usize] as usize;
        let button = dealt[n % dealt.len()];
        let (small, big) = if dealt.len() == 2 {
            (button, dealt[(n + 1) % 2])
        } else {
            (dealt[(n + 1) % dealt.len()], dealt[(n + 2) % dealt.len()])
        };
        let hand_no = table.last_hand_no + 1;
        if self.exec_table(t, TableOp::StartHand { hand_no, button_seat: button, dealt_seats: dealt.clone() }).is_err() {
            return;
        }
        self.hands[t as usize] += 1;
        for (seat, kind, cents) in [(small, PostKind::SmallBlind, d(1)), (big, PostKind::BigBlind, d(2))] {
            let stack = self.table(t).stack_cents(seat);
            let _ = self.exec_table(t, TableOp::Post { seat, kind, amount_cents: cents.min(stack) });
        }
        // Seats that owe an entry post pay it, or fold when their turn comes.
        for seat in dealt {
            if self.table(t).seat(seat).is_some_and(|s| s.owes_entry_post || s.missed_big_blind || s.missed_small_blind) {
                let stack = self.table(t).stack_cents(seat);
                let _ = self.exec_table(t, TableOp::Post { seat, kind: PostKind::NewPlayer, amount_cents: d(2).min(stack) });
            }
        }
    }

    /// One legal action (or the next round, or the showdown and the end of the hand).
    fn step(&mut self, t: u8, seed: u32) -> Option<Result<Vec<(StreamId, Event)>, Rejection>> {
        let table = self.table(t).clone();
        let hand = table.hand.as_ref()?;
        if hand.phase == HandPhase::Settled {
            return Some(self.exec_table(t, TableOp::EndHand));
        }
        if let Some(l) = legal_actions(&table) {
            let action = match seed % 5 {
                0 if l.can_call => Action::Fold,
                1 | 2 if l.raise.is_some() && !l.can_call => Action::Bet { to_cents: l.raise.map_or(0, |r| r.min_to_cents) },
                3 if l.all_in_allowed => Action::AllIn,
                _ if l.can_check => Action::Check,
                _ => Action::Call,
            };
            let result = self.exec_table(t, TableOp::Act { seat: l.seat, action });
            if result.is_err() {
                // The dealer folds a player who cannot act as chosen (an entry post owed...).
                return Some(self.exec_table(t, TableOp::Act { seat: l.seat, action: Action::Fold }));
            }
            return Some(result);
        }
        let next = self.exec_table(t, TableOp::NextRound { first_to_act_seat: None });
        if next.is_ok() {
            return Some(next);
        }
        // A random winner: the live seats rotated by the seed, each its own rank.
        let mut live: Vec<Seat> = hand.players.iter().filter(|p| p.status != InHand::Folded).map(|p| p.seat).collect();
        let turn = seed as usize % live.len().max(1);
        live.rotate_left(turn);
        Some(self.exec_table(t, TableOp::Showdown { high: live.into_iter().map(|s| vec![s]).collect(), low: None, rake_cents: None }))
    }

    fn apply(&mut self, door: &Door) {
        match door {
            Door::Wait { minutes } => {
                self.g.world.ctx.at_unix_ms += i64::from(*minutes) * MINUTE;
                return;
            }
            Door::StartHand { table } => return self.start_hand(*table),
            Door::Act { table, seed } => {
                if let Some(Ok(events)) = self.step(*table, *seed) {
                    self.check(&events, None);
                }
                return;
            }
            Door::FinishHand { table, seed } => {
                for k in 0..200 {
                    match self.step(*table, seed.wrapping_add(k)) {
                        Some(Ok(events)) => self.check(&events, None),
                        Some(Err(_)) | None => break,
                    }
                }
                return;
            }
            _ => {}
        }
        let Some(command) = self.command(door) else { return };
        let before = self.g.world.tables.clone();
        if let Ok(events) = self.g.world.exec(command.clone()) {
            if matches!(command, Command::Cage(CageCommand { op: CageOp::IssueMarker { .. }, .. })) {
                self.next_marker += 1;
            }
            self.check_stakes(&before, &events);
            self.check(&events, Some(&before));
        }
    }

    /// R-STAKE-1 / R-STAKE-2 over the events of one command, against the tables before it.
    fn check_stakes(&self, before: &BTreeMap<TableId, TableState>, events: &[(StreamId, Event)]) {
        for (stream, event) in events {
            let (StreamId::Table(event_table), Event::Table(te)) = (stream, event) else { continue };
            for p in te.postings() {
                let Account::Seat { table_id, seat } = &p.account else { continue };
                let old = &before[table_id];
                let after = &self.g.world.tables[table_id];
                if p.amount_cents < 0 {
                    // R-STAKE-2: the ways chips leave a seated stack.
                    match te {
                        TableEvent::Posted { .. } | TableEvent::Acted { .. } | TableEvent::ShortBetBroughtUp { .. } => {}
                        TableEvent::TimeCollected { .. } | TableEvent::IouSettled { .. } | TableEvent::Corrected { .. } => {}
                        // R-MARK-3: a loan moves the lender's chips to another seat of the table.
                        TableEvent::IouWritten { lender_seat: Some(from), .. } => assert_eq!(from, seat, "a loan is the lender's chips"),
                        TableEvent::Tipped { amount_cents, .. } => {
                            assert!(*amount_cents <= old.config.as_ref().unwrap().tip_cap_cents, "R-TIP-1: a tip above the cap");
                        }
                        TableEvent::ChipsRemoved { amount_cents, .. } => {
                            let allowance = old.config.as_ref().unwrap().refreshment_allowance_cents;
                            let removed = after.seat(*seat).map_or(0, |s| s.removed_cents);
                            assert!(*amount_cents > 0 && removed <= allowance, "R-STAKE-2: {removed} taken off against an allowance of {allowance}");
                        }
                        TableEvent::CashedOut { .. } => {
                            assert_eq!(-p.amount_cents, old.stack_cents(*seat), "R-STAKE-2: a cash-out takes the whole stack");
                            assert!(after.seat(*seat).is_none(), "R-STAKE-2: a cash-out leaves the seat");
                        }
                        TableEvent::PlayerMovedOut { .. } => assert!(after.seat(*seat).is_none()),
                        other => panic!("R-STAKE-2: chips left seat {seat} of {table_id} by {}", other.event_type()),
                    }
                } else {
                    // R-STAKE-1: nothing added to a player live in a hand but what the hand gives.
                    let live = old.hand.as_ref().is_some_and(|h| {
                        h.phase != HandPhase::Settled && h.player(*seat).is_some_and(|x| x.status != InHand::Folded)
                    });
                    let open = matches!(old.config.as_ref().unwrap().stakes, StakesMode::OpenStakes { .. });
                    if live && !open {
                        assert!(
                            matches!(te, TableEvent::HandSettled { .. } | TableEvent::SidePotPaid { .. } | TableEvent::Acted { .. }),
                            "R-STAKE-1: {} added to seat {seat} of {table_id} during the hand",
                            te.event_type()
                        );
                    }
                }
            }
            // R-MARK-3: what leaves the table is never the paper of an unpaid IOU: the chips left
            // in front of the players and in the pot cover the IOUs written there.
            // (A correction may have left the table's chips below the paper before: then nothing
            // more leaves until the writer pays.)
            let leaving = match te {
                TableEvent::CashedOut { amount_cents, .. }
                | TableEvent::Tipped { amount_cents, .. }
                | TableEvent::ChipsRemoved { amount_cents, .. } => *amount_cents,
                TableEvent::PlayerMovedOut { .. } | TableEvent::TimeCollected { .. } | TableEvent::Corrected { .. } => {
                    -te.postings().iter().filter(|p| matches!(p.account, Account::Seat { .. })).map(|p| p.amount_cents).sum::<Cents>()
                }
                _ => 0,
            };
            if leaving > 0 {
                let after = &self.g.world.tables[event_table];
                let chips: Cents = after.seats.iter().flatten().map(|s| s.stack_cents).sum::<Cents>() + after.pot_cents + after.kitty_cents;
                let paper = unpaid_paper_cents(after);
                assert!(chips >= paper, "R-MARK-3: {} took IOU paper off {event_table}: {chips} chips left for {paper} of IOUs", te.event_type());
            }
            if let TableEvent::ColorChanged { seat, .. } = te {
                let (old, new) = (before[event_table].stack_cents(*seat), self.g.world.tables[event_table].stack_cents(*seat));
                assert_eq!(old, new, "R-CHIP-1: a color change keeps the stack's value");
            }
        }
    }

    /// R-REBUY-1 on the events of one command, against the model of departures.
    fn check(&mut self, events: &[(StreamId, Event)], _before: Option<&BTreeMap<TableId, TableState>>) {
        let now = self.g.world.ctx.at_unix_ms;
        for (stream, event) in events {
            let StreamId::Player(player) = stream else { continue };
            match event {
                Event::Player(PlayerEvent::LeftTable { game_key, amount_cents, at_unix_ms, .. }) => {
                    if *amount_cents > 0 {
                        self.departures.entry((player.to_string(), game_key.clone())).or_default().push((*at_unix_ms, *amount_cents));
                    }
                }
                // A house move from another game is a way back in: bound like a buy-in.
                Event::Player(PlayerEvent::MovedTable { from_table_id, to_table_id, game_key, .. }) => {
                    let from_game = self.g.world.tables[from_table_id].config.as_ref().unwrap().same_game().key().to_owned();
                    if &from_game != game_key {
                        let window = self.g.world.tables[to_table_id].config.as_ref().unwrap().rebuy.wait_window_ms;
                        let stack: Cents = events
                            .iter()
                            .find_map(|(_, e)| match e {
                                Event::Table(TableEvent::PlayerMovedIn { amount_cents, .. }) => Some(*amount_cents),
                                _ => None,
                            })
                            .unwrap_or(0);
                        for (left_at, left_with) in self.departures.remove(&(player.to_string(), game_key.clone())).unwrap_or_default() {
                            if now - left_at < window {
                                assert!(stack >= left_with, "R-REBUY-1: {player} moved back into {game_key} with {stack} < {left_with}");
                            }
                        }
                    }
                }
                // Every departure with chips since the last return binds, not only the latest.
                Event::Player(PlayerEvent::JoinedTable { game_key, amount_cents, table_id, .. }) => {
                    let window = self.g.world.tables[table_id].config.as_ref().unwrap().rebuy.wait_window_ms;
                    for (left_at, left_with) in self.departures.remove(&(player.to_string(), game_key.clone())).unwrap_or_default() {
                        if now - left_at < window {
                            assert!(*amount_cents >= left_with, "R-REBUY-1: {player} came back to {game_key} with {amount_cents} < {left_with}");
                        }
                    }
                    let seats = &self.g.world.players[player].seats;
                    assert_eq!(seats.iter().filter(|s| &s.game_key == game_key).count(), 1, "R-REBUY-1: two seats of {game_key}: {seats:?}");
                }
                _ => {}
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn prop_no_door_moves_chips_off_a_seat_or_under_the_rebuy_wait(doors in prop::collection::vec(door(), 40..200)) {
        let mut run = Run::new();
        let start = run.g.world.log.len();
        for door in &doors {
            run.apply(door);
        }
        if std::env::var("DOOR_PROPS_STATS").is_ok() {
            let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
            for (_, e) in &run.g.world.log[start..] {
                *kinds.entry(e.event_type()).or_default() += 1;
            }
            eprintln!("{kinds:?}");
        }
        // Every seat's stack is what the ledger holds (checked by the world after every event),
        // and every patron's held seats match the tables.
        for (player_id, player) in &run.g.world.players {
            for held in &player.seats {
                let at = run.g.world.tables[&held.table_id].seat(held.seat);
                prop_assert!(at.is_some_and(|s| &s.player_id == player_id), "{player_id} holds {held:?} but the seat says {at:?}");
            }
        }
    }
}
