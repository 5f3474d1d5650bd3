//! Offline replay: each command judged by `chipledger_rules::decide` against the states of
//! the streams it touches, its events applied with `apply` (`evolve` in place), then the seat stacks compared
//! with the hand's `finishing_stacks`. No store, no server: the states live in [`Streams`].

use chipledger_rules::{
    CageId, CageState, Command, CommandContext, Event, PlayerId, PlayerState, Rejection, Snapshot,
    StreamId, TableEvent, TableId, TableOp, TableState, decide_into, decide_table_into,
};

use crate::Cents;
use crate::convert::{Conversion, ConvertError, convert};
use crate::history::{HandHistory, Player, Variant};

/// How replaying one hand ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayOutcome {
    /// Every final stack equals `finishing_stacks`.
    Matched,
    /// Replayed without a refusal, but the file has no `finishing_stacks` to compare with.
    NotCompared,
    /// Replayed without a refusal, and some final stacks differ from the file's.
    Mismatched { stacks: Vec<StackMismatch> },
    /// The hand uses something this crate does not replay (variant, antes, unknown cards...).
    Unsupported { reason: String },
    /// The rules core refused a command.
    Rejected(RejectedStep),
}

/// One player's final stack, expected (from the file) against what the ledger holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackMismatch {
    pub player: Player,
    pub expected_cents: Cents,
    pub got_cents: Cents,
}

/// A command the rules core refused, located in the hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedStep {
    /// Index of the command in the converted sequence.
    pub step: usize,
    /// PHH line of the action, when the command comes from one.
    pub line: Option<u32>,
    /// The command, shortly (`Act { seat: 3, action: Raise { to_cents: 450 } }`).
    pub command: String,
    pub code: &'static str,
    pub rule: &'static str,
    pub detail: String,
}

impl std::fmt::Display for RejectedStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = self.line.map_or_else(|| format!("step {}", self.step), |line| format!("line {line}"));
        write!(f, "{} ({}) at {at}: {} [{}]", self.code, self.rule, self.detail, self.command)
    }
}

/// The states of the streams one hand touches: its table, its cage and its players.
#[derive(Debug, Clone, Default)]
pub struct Streams {
    pub table_id: Option<TableId>,
    pub table: TableState,
    pub cage_id: Option<CageId>,
    pub cage: CageState,
    pub players: Vec<(PlayerId, PlayerState)>,
    /// Storage reused from one command to the next: the replay judges some twenty commands
    /// per hand, and allocating these afresh for each cost more than some rules do.
    scratch: Scratch,
}

/// Buffers of [`Streams::apply`], empty between commands.
#[derive(Debug, Clone, Default)]
struct Scratch {
    table_events: Vec<TableEvent>,
    events: Vec<(StreamId, Event)>,
    streams: Vec<StreamId>,
    // The snapshot's vectors between two commands: they hold nothing, so no borrow.
    tables: Vec<(&'static TableId, &'static TableState)>,
    players: Vec<(&'static PlayerId, &'static PlayerState)>,
    cages: Vec<(&'static CageId, &'static CageState)>,
}

/// `spent`, emptied, as a vector of another element type. For the snapshot's vectors the two
/// types differ only in the lifetime of their references, and collecting a vector's own
/// iterator into the same layout reuses its allocation (std's in-place collect).
fn reuse<T, U>(mut spent: Vec<T>) -> Vec<U> {
    spent.clear();
    spent.into_iter().filter_map(|_| None).collect()
}

impl Streams {
    /// Back to fresh (default) stream states for the next hand, keeping the buffers: a replay
    /// of many hands then allocates them once.
    pub fn clear(&mut self) {
        let Streams { table_id, table, cage_id, cage, players, scratch: _ } = self;
        *table_id = None;
        *table = TableState::default();
        *cage_id = None;
        *cage = CageState::default();
        players.clear();
    }

    /// Judges `command` against the loaded states and applies its events.
    /// Returns the number of chip movements (events with postings).
    pub fn apply(&mut self, context: &CommandContext, command: &Command) -> Result<usize, Rejection> {
        // Fast path: hand commands touch only their table (no snapshot to assemble).
        if let Command::Table(table_command) = command
            && touches_only_its_table(&table_command.op)
        {
            self.table_id.get_or_insert_with(|| table_command.table_id.clone());
            let events = &mut self.scratch.table_events;
            decide_table_into(&self.table, context, table_command, events)?;
            let mut movements = 0;
            // The events are dropped next: the state takes what it keeps from them.
            for event in events.iter_mut() {
                movements += usize::from(!event.postings().is_empty());
                self.table.apply_taking(event);
            }
            events.clear();
            return Ok(movements);
        }
        let mut streams = std::mem::take(&mut self.scratch.streams);
        command.streams_into(&mut streams);
        for stream in &streams {
            match stream {
                StreamId::Table(id) => {
                    self.table_id.get_or_insert_with(|| id.clone());
                }
                StreamId::Cage(id) => {
                    self.cage_id.get_or_insert_with(|| id.clone());
                }
                StreamId::Player(id) => {
                    if !self.players.iter().any(|(known, _)| known == id) {
                        self.players.push((id.clone(), PlayerState::default()));
                    }
                }
            }
        }
        // Load exactly the streams the command names (a store would do the same).
        let mut snapshot = Snapshot::new();
        snapshot.tables = reuse(std::mem::take(&mut self.scratch.tables));
        snapshot.players = reuse(std::mem::take(&mut self.scratch.players));
        snapshot.cages = reuse(std::mem::take(&mut self.scratch.cages));
        for stream in &streams {
            match stream {
                StreamId::Table(id) if self.table_id.as_ref() == Some(id) => {
                    snapshot = snapshot.with_table(id, &self.table);
                }
                StreamId::Cage(id) if self.cage_id.as_ref() == Some(id) => {
                    snapshot = snapshot.with_cage(id, &self.cage);
                }
                StreamId::Player(id) => {
                    if let Some((id, state)) = self.players.iter().find(|(known, _)| known == id) {
                        snapshot = snapshot.with_player(id, state);
                    }
                }
                // A second table or cage is not part of a one-hand replay: decide reports
                // the stream as not loaded.
                _ => {}
            }
        }
        let mut events = std::mem::take(&mut self.scratch.events);
        let decided = decide_into(&snapshot, context, command, &mut events);
        let Snapshot { tables, players, cages, .. } = snapshot;
        self.scratch.tables = reuse(tables);
        self.scratch.players = reuse(players);
        self.scratch.cages = reuse(cages);
        streams.clear();
        self.scratch.streams = streams;
        decided?;
        let mut movements = 0;
        for (stream, event) in &mut events {
            movements += usize::from(event.moves_chips());
            self.evolve(stream, event);
        }
        events.clear();
        self.scratch.events = events;
        Ok(movements)
    }

    /// Applies an event the replay drops next: the states take what they keep from it
    /// ([`TableState::apply_taking`], [`PlayerState::apply_taking`]).
    fn evolve(&mut self, stream: &StreamId, event: &mut Event) {
        match (stream, event) {
            (StreamId::Table(id), Event::Table(event)) if self.table_id.as_ref() == Some(id) => {
                self.table.apply_taking(event);
            }
            (StreamId::Cage(id), Event::Cage(event)) if self.cage_id.as_ref() == Some(id) => {
                self.cage.apply(event);
            }
            (StreamId::Player(id), Event::Player(event)) => {
                if let Some((_, state)) = self.players.iter_mut().find(|(known, _)| known == id) {
                    state.apply_taking(event);
                }
            }
            // One hand touches one table and one cage; anything else is a conversion bug.
            (_, event) => panic!("event {} for stream {} outside this replay", event.event_type(), stream.key()),
        }
    }
}

/// Table commands judged by the table alone (`decide_table`); the others also load a
/// player or cage stream and go through `decide`.
fn touches_only_its_table(op: &TableOp) -> bool {
    !matches!(
        op,
        TableOp::BuyIn { .. }
            | TableOp::TopUp { .. }
            | TableOp::CashOut { .. }
            | TableOp::PutCashInPlay { .. }
            | TableOp::MovePlayer { .. }
            | TableOp::Fill { .. }
            | TableOp::Credit { .. }
    )
}

/// Replays one hand: convert, judge and apply every command, compare the stacks.
pub fn replay(hand: &HandHistory) -> ReplayOutcome {
    replay_report(hand).outcome
}

/// What replaying one hand gave: the outcome, and the rake the ledger recorded for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandReport {
    pub variant: Variant,
    pub outcome: ReplayOutcome,
    /// The room's rake recorded at settlement (R-RAKE-1); 0 when the hand was not replayed.
    pub rake_cents: Cents,
}

/// [`replay`], with the hand's variant and rake.
pub fn replay_report(hand: &HandHistory) -> HandReport {
    let report = |outcome, rake_cents| HandReport { variant: hand.variant, outcome, rake_cents };
    let conversion = match convert(hand) {
        Ok(conversion) => conversion,
        Err(ConvertError::Unsupported { reason, .. }) => return report(ReplayOutcome::Unsupported { reason }, 0),
    };
    let mut streams = Streams::default();
    if let Err(rejected) = run(&conversion, &mut streams) {
        return report(ReplayOutcome::Rejected(rejected), 0);
    }
    report(compare(&conversion, &streams.table), streams.table.rake_cents)
}

/// Applies every step of a conversion; the first refusal stops it.
pub fn run(conversion: &Conversion, streams: &mut Streams) -> Result<usize, RejectedStep> {
    let mut movements = 0;
    for (step, entry) in conversion.steps.iter().enumerate() {
        movements += streams.apply(&entry.context, &entry.command).map_err(|rejection| RejectedStep {
            step,
            line: entry.line,
            command: describe(&entry.command),
            code: rejection.reason.code,
            rule: rejection.reason.rule,
            detail: rejection.detail.clone(),
        })?;
    }
    Ok(movements)
}

fn describe(command: &Command) -> String {
    match command {
        Command::Table(table) => format!("{:?}", table.op),
        Command::Cage(cage) => format!("{:?}", cage.op),
        Command::Player(player) => format!("{:?}", player.op),
    }
}

/// The final stacks against those expected (`finishing_stacks`, or worked out from
/// `winnings`); a player whose starting stack was unknown is not compared.
fn compare(conversion: &Conversion, table: &TableState) -> ReplayOutcome {
    let Some(expected) = &conversion.expected_finishing_cents else { return ReplayOutcome::NotCompared };
    let stacks: Vec<StackMismatch> = conversion
        .seats
        .iter()
        .zip(expected)
        .enumerate()
        .filter_map(|(index, (&seat, expected_cents))| {
            let expected_cents = (*expected_cents)?;
            let got_cents = table.stack_cents(seat);
            (got_cents != expected_cents).then_some(StackMismatch {
                player: Player(index as u8),
                expected_cents,
                got_cents,
            })
        })
        .collect();
    if stacks.is_empty() { ReplayOutcome::Matched } else { ReplayOutcome::Mismatched { stacks } }
}
