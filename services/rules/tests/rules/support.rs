//! A small in-memory world for the tests: stream states, a global balance sheet, and a
//! command runner that checks the ledger invariants after every event (R-UNIT-3, R-UNIT-4).

use std::collections::BTreeMap;

use chipledger_rules::*;

/// Dollars to cents.
pub const fn d(dollars: i64) -> Cents {
    dollars * 100
}

pub fn tid(s: &str) -> TableId {
    TableId::new(s).unwrap()
}
pub fn pid(s: &str) -> PlayerId {
    PlayerId::new(s).unwrap()
}
pub fn cid(s: &str) -> CageId {
    CageId::new(s).unwrap()
}

pub fn ctx_at(at_unix_ms: i64, actor: &str) -> CommandContext {
    CommandContext {
        at_unix_ms,
        gaming_day: "2026-03-01".to_string(),
        actor: Actor { id: actor.to_string(), role: Role::Dealer },
    }
}

/// All stream states plus every account's balance, rebuilt from the events.
pub struct World {
    pub tables: BTreeMap<TableId, TableState>,
    pub players: BTreeMap<PlayerId, PlayerState>,
    pub cages: BTreeMap<CageId, CageState>,
    pub balances: BTreeMap<String, Cents>,
    pub log: Vec<(StreamId, Event)>,
    pub ctx: CommandContext,
}

impl World {
    pub fn new() -> World {
        World {
            tables: BTreeMap::new(),
            players: BTreeMap::new(),
            cages: BTreeMap::new(),
            balances: BTreeMap::new(),
            log: Vec::new(),
            ctx: ctx_at(1_700_000_000_000, "dealer-1"),
        }
    }

    /// Decide and apply; checks conservation and non-negative balances after every event.
    pub fn exec(&mut self, command: Command) -> Result<Vec<(StreamId, Event)>, Rejection> {
        for s in command.streams() {
            match s {
                StreamId::Table(id) => {
                    self.tables.entry(id).or_default();
                }
                StreamId::Player(id) => {
                    self.players.entry(id).or_default();
                }
                StreamId::Cage(id) => {
                    self.cages.entry(id).or_default();
                }
            }
        }
        let events = {
            let mut snap = Snapshot::new();
            for (id, s) in &self.tables {
                snap = snap.with_table(id, s);
            }
            for (id, s) in &self.players {
                snap = snap.with_player(id, s);
            }
            for (id, s) in &self.cages {
                snap = snap.with_cage(id, s);
            }
            let decided = decide(&snap, &self.ctx, &command);
            self.check_buffered_forms(&snap, &command, &decided);
            decided?
        };
        if let Command::Table(c) = &command {
            check_last_fold_settlement(&self.tables[&c.table_id], &events);
        }
        // The postings of a command are on one stream (a shift close with a count variance
        // carries two table events with postings: the variance, then the close), but for a
        // house move, each of whose tables posts its own side through the moves account, which
        // the move leaves at zero (R-STAKE-6).
        let mut posting_streams: Vec<&StreamId> = events.iter().filter(|(_, e)| e.moves_chips()).map(|(s, _)| s).collect();
        posting_streams.dedup();
        let moved = events.iter().any(|(_, e)| e.event_type() == "PlayerMovedIn");
        assert!(posting_streams.len() <= 1 || (moved && posting_streams.len() == 2), "postings on more than one stream of a command: {events:?}");
        let in_transit: Cents = events
            .iter()
            .flat_map(|(_, e)| e.postings())
            .filter(|p| p.account == Account::House(HouseAccount::Moves))
            .map(|p| p.amount_cents)
            .sum();
        assert_eq!(in_transit, 0, "a move leaves nothing in transit: {events:?}");
        for (sid, e) in &events {
            self.apply(sid, e);
        }
        self.check_invariants();
        Ok(events)
    }

    /// `decide_into` (and `decide_table_into` for a table's own commands) judge as `decide`
    /// does, append after what the buffer held, and leave it as it was on a refusal.
    fn check_buffered_forms(&self, snap: &Snapshot, command: &Command, decided: &Result<Vec<(StreamId, Event)>, Rejection>) {
        let held = (StreamId::Table(tid("HELD")), Event::Table(TableEvent::HandEnded { hand_no: 0 }));
        let mut buffer = vec![held.clone()];
        let into = decide_into(snap, &self.ctx, command, &mut buffer);
        match decided {
            Ok(events) => {
                assert!(into.is_ok(), "decide_into refused what decide accepted: {command:?}");
                assert_eq!(&buffer[1..], &events[..], "decide_into appends decide's events");
            }
            Err(rejection) => assert_eq!(into.map_err(|r| r.reason.code), Err(rejection.reason.code)),
        }
        assert_eq!(buffer[0], held, "decide_into keeps what the buffer held");
        if decided.is_err() {
            assert_eq!(buffer.len(), 1, "a refusal appends nothing");
        }
        let Command::Table(c) = command else { return };
        let Some(table) = snap.table(&c.table_id) else { return };
        let (Ok(only_table), Ok(events)) = (decide_table(table, &self.ctx, c), decided) else { return };
        let held = TableEvent::HandEnded { hand_no: 0 };
        let mut buffer = vec![held.clone()];
        decide_table_into(table, &self.ctx, c, &mut buffer).expect("decide_table accepted it");
        assert_eq!(buffer[0], held);
        assert_eq!(buffer[1..], only_table[..], "decide_table_into appends decide_table's events");
        let wrapped: Vec<Event> = only_table.into_iter().map(Event::Table).collect();
        let from_decide: Vec<Event> = events.iter().map(|(_, e)| e.clone()).collect();
        assert_eq!(wrapped, from_decide, "decide_table and decide agree on a table's own command");
    }

    pub fn apply(&mut self, sid: &StreamId, e: &Event) {
        let postings = e.postings();
        let sum: Cents = postings.iter().map(|p| p.amount_cents).sum();
        assert_eq!(sum, 0, "R-UNIT-3: postings of {} do not sum to zero", e.event_type());
        for p in &postings {
            *self.balances.entry(p.account.key()).or_default() += p.amount_cents;
        }
        match (sid, e) {
            (StreamId::Table(id), Event::Table(te)) => {
                let s = self.tables.remove(id).unwrap_or_default();
                // `apply_taking` (the replay's form, moving out of an event it drops) agrees.
                let mut taking = s.clone();
                taking.apply_taking(&mut te.clone());
                let s = s.evolve(te);
                assert_eq!(taking, s, "apply_taking and evolve differ on {}", te.event_type());
                self.tables.insert(id.clone(), s);
            }
            (StreamId::Player(id), Event::Player(pe)) => {
                let s = self.players.remove(id).unwrap_or_default();
                let mut taking = s.clone();
                taking.apply_taking(&mut pe.clone());
                let s = s.evolve(pe);
                assert_eq!(taking, s, "apply_taking and evolve differ on {}", pe.event_type());
                self.players.insert(id.clone(), s);
            }
            (StreamId::Cage(id), Event::Cage(ce)) => {
                let s = self.cages.remove(id).unwrap_or_default();
                self.cages.insert(id.clone(), s.evolve(ce));
            }
            _ => panic!("event on the wrong stream: {sid} {e:?}"),
        }
        self.log.push((sid.clone(), e.clone()));
    }

    /// R-UNIT-4 and R-STAKE-4: sum zero, nothing negative, table states equal the ledger.
    pub fn check_invariants(&self) {
        let total: Cents = self.balances.values().sum();
        assert_eq!(total, 0, "R-UNIT-4: the sum of all balances is not zero");
        for (key, v) in &self.balances {
            let account: Account = key.parse().unwrap();
            if account.must_stay_non_negative() {
                assert!(*v >= 0, "R-UNIT-4: {key} is negative: {v}");
            }
        }
        for t in self.tables.values() {
            for b in t.balances() {
                assert_eq!(self.balances.get(&b.account.key()).copied().unwrap_or(0), b.amount_cents, "table state differs from ledger for {}", b.account);
            }
            if let Some(h) = &t.hand {
                assert_eq!(h.pot_cents, t.pot_cents);
            } else {
                assert_eq!(t.pot_cents, 0, "R-UNIT-4: a pot is not empty between hands");
            }
        }
        for (id, p) in &self.players {
            let key = Account::Pocket { player_id: id.clone() }.key();
            assert_eq!(self.balances.get(&key).copied().unwrap_or(0), p.pocket_cents, "pocket of {id}");
        }
    }

    pub fn balance(&self, account: &Account) -> Cents {
        self.balances.get(&account.key()).copied().unwrap_or(0)
    }
}

pub const TABLE: &str = "T1";
pub const CAGE: &str = "MAIN";

/// A table with seated players, driven by the dealer, inside a world with a cage.
/// The last fold settles a copy of the hand (not of the table): its settlement must equal the
/// one computed on the whole table after the fold.
fn check_last_fold_settlement(before: &TableState, events: &[(StreamId, Event)]) {
    let [(_, Event::Table(acted @ TableEvent::Acted { .. })), (_, Event::Table(settled @ TableEvent::HandSettled { .. }))] = events else {
        return;
    };
    let after = before.clone().evolve(acted);
    let expected = pots::settle(&after, &[], None, false).expect("the table settles after the last fold");
    assert_eq!(settled, &expected, "last-fold settlement");
}

pub struct Game {
    pub world: World,
    pub table_id: TableId,
    pub next_fill_slip: u64,
}

/// A configuration for the worked examples: no blinds unless set, no fee, wide buy-in limits.
pub fn example_config(mut c: TableConfig) -> TableConfig {
    c.fee = FeePolicy::NoFee;
    c.buy_in.min_cents = c.chip_set.min_playable_chip_cents;
    c.buy_in.max_cents = d(1_000_000);
    c.buy_in.supervisor_threshold_cents = config::MAX_SUPERVISOR_THRESHOLD_CENTS;
    c
}

impl Game {
    /// Open the cage and the table, fill the tray, seat `stacks` (seat, cents) by cash buy-ins.
    pub fn new(config: TableConfig, stacks: &[(Seat, Cents)]) -> Game {
        let mut g = Game { world: World::new(), table_id: tid(TABLE), next_fill_slip: 1 };
        let denoms = config.chip_set.denominations_cents.clone();
        let chips: Vec<ChipCount> = denoms.iter().map(|d| ChipCount { denomination_cents: *d, count: 100_000 }).collect();
        g.world
            .exec(Command::Cage(CageCommand { cage_id: cid(CAGE), op: CageOp::OpenCage { denominations_cents: denoms.clone(), chips, cash_cents: d(100_000) } }))
            .unwrap();
        g.table(TableOp::OpenTable { config }).unwrap();
        let fill: Vec<ChipCount> = denoms.iter().map(|d| ChipCount { denomination_cents: *d, count: 2_000 }).collect();
        g.fill(fill).unwrap();
        for (seat, stack) in stacks {
            g.sit(*seat, &format!("P{seat}"), *stack).unwrap();
        }
        g
    }

    pub fn table(&mut self, op: TableOp) -> Result<Vec<(StreamId, Event)>, Rejection> {
        self.world.exec(Command::Table(TableCommand { table_id: self.table_id.clone(), op }))
    }

    pub fn fill(&mut self, chips: Vec<ChipCount>) -> Result<Vec<(StreamId, Event)>, Rejection> {
        let slip_no = self.next_fill_slip;
        let r = self.table(TableOp::Fill {
            cage_id: cid(CAGE),
            slip_no,
            chips,
            signers: Signers { first: "cage-1".into(), second: "floor-1".into() },
        });
        if r.is_ok() {
            self.next_fill_slip += 1;
        }
        r
    }

    /// A cash buy-in; from the table's supervisor threshold (R-CHIP-2), with the patron's cash in
    /// for the day, the floor is there.
    pub fn sit(&mut self, seat: Seat, player: &str, amount_cents: Cents) -> Result<Vec<(StreamId, Event)>, Rejection> {
        let threshold = self.state().config.as_ref().map_or(Cents::MAX, |c| c.buy_in.supervisor_threshold_cents);
        let day_cash = self.world.players.get(&pid(player)).map_or(0, |p| p.cash_day.on(&self.world.ctx.gaming_day).cash_in_cents);
        self.table(TableOp::BuyIn {
            seat,
            player_id: pid(player),
            amount_cents,
            source: FundsSource::Cash,
            supervisor_id: (amount_cents + day_cash >= threshold).then(|| "floor-1".to_string()),
            short_buy: false,
        })
    }

    pub fn state(&self) -> &TableState {
        &self.world.tables[&self.table_id]
    }

    pub fn hand(&self) -> &HandState {
        self.state().hand.as_ref().expect("a hand in play")
    }

    pub fn stack(&self, seat: Seat) -> Cents {
        self.state().stack_cents(seat)
    }

    pub fn start(&mut self, hand_no: u64, button_seat: Seat, dealt_seats: &[Seat]) {
        self.table(TableOp::StartHand { hand_no, button_seat, dealt_seats: dealt_seats.to_vec() }).unwrap();
    }

    pub fn post(&mut self, seat: Seat, kind: PostKind, amount_cents: Cents) -> Result<Vec<(StreamId, Event)>, Rejection> {
        self.table(TableOp::Post { seat, kind, amount_cents })
    }

    pub fn act(&mut self, seat: Seat, action: Action) -> Result<Vec<(StreamId, Event)>, Rejection> {
        self.table(TableOp::Act { seat, action })
    }

    pub fn ok(&mut self, seat: Seat, action: Action) {
        if let Err(r) = self.act(seat, action) {
            panic!("seat {seat} {action:?} refused: {r} {:?}", r.numbers);
        }
    }

    pub fn next_round(&mut self) {
        self.table(TableOp::NextRound { first_to_act_seat: None }).unwrap();
    }

    pub fn showdown(&mut self, high: Vec<Vec<Seat>>) -> Vec<PotResult> {
        let events = self.table(TableOp::Showdown { high, low: None, rake_cents: None }).unwrap();
        settled_pots(&events)
    }

    /// Everyone checks the remaining rounds, in `order`, each after a `NextRound`.
    pub fn check_down(&mut self, order: &[Seat]) {
        let rounds = self.state().config.as_ref().map_or(4, |c| c.betting_rounds);
        while self.hand().round.index + 1 < rounds {
            self.next_round();
            for s in order {
                self.ok(*s, Action::Check);
            }
        }
    }

    pub fn legal(&self) -> LegalActions {
        legal_actions(self.state()).expect("someone is to act")
    }

    pub fn end(&mut self) {
        self.table(TableOp::EndHand).unwrap();
    }
}

pub fn settled_pots(events: &[(StreamId, Event)]) -> Vec<PotResult> {
    events
        .iter()
        .find_map(|(_, e)| match e {
            Event::Table(TableEvent::HandSettled { pots, .. }) => Some(pots.clone()),
            _ => None,
        })
        .expect("the hand was settled")
}

/// Assert a refusal with `code`, returning it for further checks.
pub fn rejected<T: std::fmt::Debug>(result: Result<T, Rejection>, code: &str) -> Rejection {
    match result {
        Ok(v) => panic!("expected {code}, got {v:?}"),
        Err(r) => {
            assert_eq!(r.reason.code, code, "{r} {:?}", r.numbers);
            assert!(r.reason.rule.starts_with("R-"), "rule id of {code}");
            r
        }
    }
}

pub fn bet(to_dollars: i64) -> Action {
    Action::Bet { to_cents: d(to_dollars) }
}
pub fn raise(to_dollars: i64) -> Action {
    Action::Raise { to_cents: d(to_dollars) }
}

/// The version on its stream of the event at `index` of the world's log (the test world has
/// no store: a correction names the version the log gives it).
pub fn stream_version_at(log: &[(StreamId, Event)], index: usize) -> u64 {
    log[..=index].iter().filter(|(stream, _)| *stream == log[index].0).count() as u64
}
