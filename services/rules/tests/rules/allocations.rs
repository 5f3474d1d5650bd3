//! A quick allocation check (no benchmark harness): judging and applying a hand action costs
//! at most its event vector and its postings (ids are copied inline, never allocated), never a
//! copy of the table state (R-STAKE-4 states are rebuilt by `evolve` in place); with a reused
//! event buffer (`decide_table_into` + `apply`) only the postings of a bet or call remain.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use chipledger_rules::*;

use crate::support::*;

/// Counts allocations made by the current thread (tests run in parallel threads).
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations_during<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (out, ALLOCATIONS.with(Cell::get) - before)
}

/// Nine players after the blinds, and the preflop actions the tests judge one by one (two
/// raises, two calls, two folds that do not end the hand).
fn preflop() -> (TableState, [(Seat, Action); 6]) {
    let stacks: Vec<(Seat, Cents)> = (1..=9).map(|s| (s, d(200))).collect();
    let mut g = Game::new(example_config(TableConfig::no_limit_holdem(d(1), d(2))), &stacks);
    g.start(1, 9, &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    g.post(1, PostKind::SmallBlind, d(1)).unwrap();
    g.post(2, PostKind::BigBlind, d(2)).unwrap();
    let actions = [(3, raise(6)), (4, Action::Call), (5, Action::Fold), (6, raise(20)), (7, Action::Call), (8, Action::Fold)];
    (g.state().clone(), actions)
}

fn act(seat: Seat, action: Action) -> TableCommand {
    TableCommand { table_id: tid(TABLE), op: TableOp::Act { seat, action } }
}

#[test]
fn decide_and_evolve_of_a_hand_action_allocate_less_than_a_table_copy() {
    let (mut state, actions) = preflop();
    let ctx = ctx_at(0, "dealer-1");
    let (_, table_copy) = allocations_during(|| state.clone());
    for (seat, action) in actions {
        let command = act(seat, action);
        let (next, n) = allocations_during(|| {
            let events = decide_table(&state, &ctx, &command).expect("legal action");
            events.iter().fold(std::mem::take(&mut state), |s, e| s.evolve(e))
        });
        state = next;
        assert!(n <= 2, "seat {seat} {action:?}: {n} allocations for decide + evolve");
        assert!(n < table_copy, "seat {seat}: {n} allocations, a table copy costs {table_copy}");
    }
    assert_eq!(state.hand.as_ref().map(|h| h.round.bet_to_cents), Some(d(20)));
}

#[test]
fn decide_table_into_and_apply_of_a_hand_action_allocate_only_its_postings() {
    let (mut state, actions) = preflop();
    let ctx = ctx_at(0, "dealer-1");
    let mut events: Vec<TableEvent> = Vec::with_capacity(2);
    for (seat, action) in actions {
        let command = act(seat, action);
        let (moved, n) = allocations_during(|| {
            decide_table_into(&state, &ctx, &command, &mut events).expect("legal action");
            let moved = events.iter().any(|e| !e.postings().is_empty());
            for e in &events {
                state.apply(e);
            }
            events.clear();
            moved
        });
        // A fold moves nothing and allocates nothing; a bet or call allocates its postings.
        assert_eq!(n, u64::from(moved), "seat {seat} {action:?}: {n} allocations for decide_table_into + apply");
    }
    assert_eq!(state.hand.as_ref().map(|h| h.round.bet_to_cents), Some(d(20)));
}
