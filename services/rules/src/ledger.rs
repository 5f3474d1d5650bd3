//! The decider: routes a command to the rules that judge it and returns the events for each
//! stream it touches. Pure: no clock, no I/O.

use crate::accounts::{Account, Posting};
use crate::cage::CageOp;
use crate::config::TableConfig;
use crate::hand::{HandPhase, InHand};
use crate::money::Cents;
use crate::player::{PlayerCommand, PlayerEvent, PlayerOp};
use crate::rejection::{Reason, Rejection};
use crate::streams::{Seat, StreamId, TableId};
use crate::table::{SeatState, TableCommand, TableEvent, TableOp, TableState};
use crate::{Command, CommandContext, Event, Snapshot};

pub const STREAM_NOT_LOADED: Reason = Reason::new("STREAM_NOT_LOADED", "R-AUDIT-2");
pub const TABLE_NOT_OPEN: Reason = Reason::new("TABLE_NOT_OPEN", "R-AUDIT-2");
pub const TABLE_ALREADY_OPEN: Reason = Reason::new("TABLE_ALREADY_OPEN", "R-AUDIT-2");
pub const HAND_IN_PROGRESS: Reason = Reason::new("HAND_IN_PROGRESS", "R-STAKE-1");
/// R-POT-4: the seat put chips in the hand in play that may still come back to it; it is left
/// once the hand ends ([`not_owed_by_hand`]).
pub const SEAT_OWED_BY_HAND: Reason = Reason::new("SEAT_OWED_BY_HAND", "R-POT-4");
pub const HAND_ALREADY_STARTED: Reason = Reason::new("HAND_ALREADY_STARTED", "R-STAKE-1");
pub const HAND_NUMBER_NOT_INCREASING: Reason = Reason::new("HAND_NUMBER_NOT_INCREASING", "R-AUDIT-2");
pub const TOO_FEW_PLAYERS: Reason = Reason::new("TOO_FEW_PLAYERS", "R-STAKE-1");
/// A configuration change that makes the table another game (blinds, structure, game) while
/// players sit there: they would be in a game they never bought into, past its re-buy wait
/// and its one seat per patron.
pub const GAME_CHANGE_WHILE_SEATED: Reason = Reason::new("GAME_CHANGE_WHILE_SEATED", "R-REBUY-1");

pub const REASONS: &[Reason] = &[
    STREAM_NOT_LOADED,
    TABLE_NOT_OPEN,
    TABLE_ALREADY_OPEN,
    HAND_IN_PROGRESS,
    SEAT_OWED_BY_HAND,
    HAND_ALREADY_STARTED,
    HAND_NUMBER_NOT_INCREASING,
    TOO_FEW_PLAYERS,
    GAME_CHANGE_WHILE_SEATED,
];

/// The table's id and configuration, or `TABLE_NOT_OPEN`.
pub fn open_table(table: &TableState) -> Result<(&TableId, &TableConfig), Rejection> {
    match (table.table_id.as_ref(), table.config.as_ref()) {
        (Some(id), Some(c)) => Ok((id, c)),
        _ => Err(Rejection::new(TABLE_NOT_OPEN, "the table has not been opened")),
    }
}

/// Refuse while a hand is in play (R-STAKE-1).
pub fn between_hands(table: &TableState) -> Result<(), Rejection> {
    match &table.hand {
        Some(h) => Err(Rejection::new(HAND_IN_PROGRESS, "only between hands").with("hand_no", h.hand_no as Cents)),
        None => Ok(()),
    }
}

/// Refuse while `seat` is live (dealt and not folded) in the hand in play (R-STAKE-1).
pub fn not_live_in_hand(table: &TableState, seat: Seat) -> Result<(), Rejection> {
    if let Some(h) = &table.hand
        && h.phase != HandPhase::Settled && h.player(seat).is_some_and(|p| p.status != InHand::Folded) {
            return Err(Rejection::new(HAND_IN_PROGRESS, "the seat is in the hand in play")
                .with("hand_no", h.hand_no as Cents)
                .with("seat", seat as Cents));
        }
    Ok(())
}

/// R-POT-4, R-STAKE-4: a seat left only when the hand in play can return nothing to it. Chips a
/// seat put in above every live player's level at the end go back to it by seat number, so a
/// seat emptied (cashed out, moved) before that would send them to whoever sits there next, or
/// leave them at an empty seat (the seating pass: a folded player's $40 went to the next patron
/// at the seat). What the hand can still return to a folded seat is what it put in above the
/// least level the players still live must reach: the highest all-in (they stay to the end) or,
/// at least, the lowest live level (one of them stays).
pub fn not_owed_by_hand(table: &TableState, seat: Seat) -> Result<(), Rejection> {
    not_live_in_hand(table, seat)?;
    let Some(h) = table.hand.as_ref().filter(|h| h.phase != HandPhase::Settled) else { return Ok(()) };
    let Some(folded) = h.player(seat) else { return Ok(()) };
    let live = || h.players.iter().filter(|p| p.status != InHand::Folded);
    let all_in = live().filter(|p| p.status == InHand::AllIn).map(|p| p.hand_cents).max().unwrap_or(0);
    let covered = all_in.max(live().map(|p| p.hand_cents).min().unwrap_or(0));
    // Chips above a side pot already paid at once are settled (R-POT-3): none of them comes back
    // later (the wave-2 pass: a folded seat was kept waiting for chips already paid).
    let at_stake = folded.hand_cents.min(h.contribution_cap_cents.unwrap_or(Cents::MAX));
    if at_stake > covered {
        return Err(Rejection::new(SEAT_OWED_BY_HAND, "the hand in play may still return chips to the seat: it leaves when the hand ends")
            .with("hand_no", h.hand_no as Cents)
            .with("seat", seat as Cents)
            .with("in_pot_cents", at_stake)
            .with("covered_cents", covered));
    }
    Ok(())
}

/// The occupied seat, or `INVALID_SEAT` / `SEAT_EMPTY`.
pub fn occupied(table: &TableState, seat: Seat) -> Result<&SeatState, Rejection> {
    crate::seating::check_seat_number(table, seat)?;
    table.seat(seat).ok_or_else(|| Rejection::new(crate::seating::SEAT_EMPTY, format!("seat {seat} is empty")).with("seat", seat as Cents))
}

/// Streams a command touches, its own first.
pub fn streams_of(command: &Command) -> Vec<StreamId> {
    // Room for the own stream and up to two more, so a second one does not reallocate.
    let mut v = Vec::with_capacity(3);
    streams_into(command, &mut v);
    v
}

/// [`streams_of`] appended to `v` (a caller loading many commands reuses one vector).
pub fn streams_into(command: &Command, v: &mut Vec<StreamId>) {
    match command {
        Command::Table(c) => {
            v.push(StreamId::Table(c.table_id.clone()));
            match &c.op {
                TableOp::BuyIn { player_id, .. }
                | TableOp::TopUp { player_id, .. }
                | TableOp::PutCashInPlay { player_id, .. }
                | TableOp::CashOut { player_id, .. }
                | TableOp::SettleIou { player_id, from_pocket: true, .. }
                | TableOp::RemoveChips { player_id: Some(player_id), .. } => v.push(StreamId::Player(player_id.clone())),
                TableOp::MovePlayer { to_table_id, player_id, .. } => {
                    v.push(StreamId::Table(to_table_id.clone()));
                    v.push(StreamId::Player(player_id.clone()));
                }
                TableOp::Correct { original_postings, .. } => {
                    v.extend(crate::corrections::pocket_owners(original_postings).into_iter().map(StreamId::Player));
                }
                TableOp::Fill { cage_id, .. } | TableOp::Credit { cage_id, .. } | TableOp::VoidSlip { cage_id, .. } => {
                    v.push(StreamId::Cage(cage_id.clone()))
                }
                _ => {}
            }
        }
        Command::Player(c) => v.push(StreamId::Player(c.player_id.clone())),
        Command::Cage(c) => {
            v.push(StreamId::Cage(c.cage_id.clone()));
            match &c.op {
                CageOp::SellChips { player_id, .. }
                | CageOp::ColorChange { player_id, .. }
                | CageOp::RedeemChips { player_id, .. }
                | CageOp::RedeemMarker { player_id, .. }
                | CageOp::WriteOffMarker { player_id, .. } => v.push(StreamId::Player(player_id.clone())),
                CageOp::IssueMarker { player_id, delivery, .. } => {
                    v.push(StreamId::Player(player_id.clone()));
                    if let crate::cage::MarkerDelivery::Seat { table_id, .. } = delivery {
                        v.push(StreamId::Table(table_id.clone()));
                    }
                }
                CageOp::Correct { original_postings, .. } => {
                    v.extend(crate::corrections::pocket_owners(original_postings).into_iter().map(StreamId::Player));
                }
                CageOp::OpenCage { .. } | CageOp::CloseGamingDay | CageOp::CountShift { .. } => {}
            }
        }
    }
}

/// Streams a command needs beyond [`streams_of`] once those are loaded: they depend on what
/// the loaded states hold. Today one case: with a second seat in a game allowed, a cash-out
/// binds the patron's other seats of that game (R-REBUY-1), so their tables are loaded and
/// written too. A caller loads these as well before deciding (`decide` reports a missing one
/// as `STREAM_NOT_LOADED`).
pub fn dependent_streams(command: &Command, snapshot: &Snapshot) -> Vec<StreamId> {
    let Command::Table(c) = command else { return Vec::new() };
    // R-REBUY-1: a way into the game corrected away: the patrons at the seats it credited.
    // R-AUDIT-4: cash paid in at a seat corrected away: the patron, whose day total it leaves.
    if let TableOp::Correct { reverses_event_types, original_postings, .. } = &c.op {
        let Some(table) = snapshot.table(&c.table_id) else { return Vec::new() };
        let moved_cash = original_postings.iter().any(|p| matches!(p.account, Account::House(crate::accounts::HouseAccount::Patrons)));
        if !moved_cash && !reverses_event_types.iter().any(|t| crate::rebuy::WAYS_IN.contains(&t.as_str())) {
            return Vec::new();
        }
        let mut players: Vec<StreamId> = Vec::new();
        for p in original_postings {
            if let (Account::Seat { seat, .. }, true) = (&p.account, p.amount_cents > 0 || moved_cash)
                && let Some(s) = table.seat(*seat)
                && !players.contains(&StreamId::Player(s.player_id.clone()))
            {
                players.push(StreamId::Player(s.player_id.clone()));
            }
        }
        // Once those are loaded: their other seats of the game, which a return corrected away
        // binds too (the fixes' pass: a second seat taken for $40 on the back of a $395 return
        // was dealt in after that return was corrected away). The caller asks again until
        // nothing more is named.
        if let Some(config) = table.config.as_ref() {
            let game = config.same_game();
            let mut tables: Vec<StreamId> = Vec::new();
            for stream in &players {
                let StreamId::Player(player_id) = stream else { continue };
                let Some(player) = snapshot.player(player_id) else { continue };
                for held in player.other_seats_in_game(&game, &c.table_id) {
                    let other = StreamId::Table(held.table_id.clone());
                    if !tables.contains(&other) {
                        tables.push(other);
                    }
                }
            }
            players.extend(tables);
        }
        return players;
    }
    // A cash-out, or a house move into another game, binds the patron's other seats of the game.
    let (player_id, to_table_id) = match &c.op {
        TableOp::CashOut { player_id, .. } => (player_id, None),
        TableOp::MovePlayer { player_id, to_table_id, .. } => (player_id, Some(to_table_id)),
        _ => return Vec::new(),
    };
    let (Some(table), Some(player)) = (snapshot.table(&c.table_id), snapshot.player(player_id)) else { return Vec::new() };
    let Some(config) = table.config.as_ref() else { return Vec::new() };
    // Whichever table allowed the second seat (this one or the other), it is bound.
    let game = config.same_game();
    player
        .other_seats_in_game(&game, &c.table_id)
        .filter(|held| Some(&held.table_id) != to_table_id)
        .map(|held| StreamId::Table(held.table_id.clone()))
        .collect()
}

/// The seats `postings` name, each once, in the order first named.
pub(crate) fn seats_named(postings: &[Posting]) -> Vec<Seat> {
    let mut seats = Vec::new();
    for p in postings {
        if let Account::Seat { seat, .. } = p.account
            && !seats.contains(&seat)
        {
            seats.push(seat);
        }
    }
    seats
}

fn table_of<'a>(snapshot: &Snapshot<'a>, id: &TableId) -> Result<&'a TableState, Rejection> {
    snapshot.table(id).ok_or_else(|| Rejection::new(STREAM_NOT_LOADED, format!("stream table-{id} was not loaded")))
}

/// Judge `command` against the loaded streams. On success, the events to append, each with
/// its stream; chip postings are on exactly one of them.
pub fn decide(snapshot: &Snapshot, ctx: &CommandContext, command: &Command) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let mut events = Vec::new();
    decide_into(snapshot, ctx, command, &mut events)?;
    Ok(events)
}

/// [`decide`] appending the events to `events`, so that a caller judging many commands reuses
/// one buffer. On refusal `events` is left as it was.
pub fn decide_into(snapshot: &Snapshot, ctx: &CommandContext, command: &Command, events: &mut Vec<(StreamId, Event)>) -> Result<(), Rejection> {
    let decided = match command {
        Command::Table(c) => {
            let table = table_of(snapshot, &c.table_id)?;
            match &c.op {
                // Buy-ins are most cross-stream commands: judged straight into the buffer.
                TableOp::BuyIn { .. }
                | TableOp::TopUp { .. }
                | TableOp::CashOut { .. }
                | TableOp::PutCashInPlay { .. }
                | TableOp::SettleIou { .. }
                | TableOp::RemoveChips { player_id: Some(_), .. } => {
                    return crate::table_stakes::decide_funds(snapshot, table, ctx, c, events);
                }
                TableOp::MovePlayer { seat, player_id, to_table_id, to_seat } => {
                    let to = table_of(snapshot, to_table_id)?;
                    let player = snapshot.player(player_id).ok_or_else(|| {
                        Rejection::new(STREAM_NOT_LOADED, format!("stream player-{player_id} was not loaded"))
                    })?;
                    let mut moved = crate::seating::decide_move(ctx, table, to, player, *seat, player_id, to_table_id, *to_seat)?;
                    // R-REBUY-1: moved into another game, the patron has left the first: its
                    // other seats of the first game are bound as after a cash-out (the second
                    // stakes pass: dealt in at $40 there after leaving with $200).
                    if let (Some(from_config), Some(to_config)) = (table.config.as_ref(), to.config.as_ref())
                        && from_config.same_game().key() != to_config.same_game().key()
                    {
                        let left_with = table.seat(*seat).map_or(0, |s| s.stack_cents + s.removed_cents);
                        moved.extend(crate::table_stakes::bind_other_seats(snapshot, from_config, &c.table_id, player_id, player, left_with, ctx)?);
                    }
                    moved
                }
                TableOp::Correct {
                    reverses_event_id,
                    reverses_stream_version,
                    reverses_event_types,
                    reverses_gaming_day,
                    original_postings,
                    approved_by,
                    reason,
                } => {
                    let reversed = crate::corrections::Reversed {
                        event_id: reverses_event_id,
                        stream_version: *reverses_stream_version,
                        event_types: reverses_event_types,
                        gaming_day: reverses_gaming_day,
                        postings: original_postings,
                    };
                    crate::corrections::decide_correction(snapshot, table, ctx, &reversed, approved_by, reason)?
                }
                // Judged straight into the buffer, like the buy-ins.
                TableOp::Fill { .. } | TableOp::Credit { .. } => return crate::inventory::decide_slip_into(snapshot, ctx, table, c, events),
                TableOp::VoidSlip { cage_id, kind, slip_no, reason, signers } => {
                    crate::inventory::decide_void_slip(snapshot, ctx, table, cage_id, *kind, *slip_no, reason, signers)?
                }
                _ => {
                    let decided = decide_table(table, ctx, c)?;
                    events.extend(decided.into_iter().map(|e| (StreamId::Table(c.table_id.clone()), Event::Table(e))));
                    return Ok(());
                }
            }
        }
        Command::Player(c) => decide_player(snapshot, ctx, c)?,
        Command::Cage(c) => crate::cage::decide_cage(snapshot, ctx, c)?,
    };
    events.extend(decided);
    Ok(())
}

fn decide_player(snapshot: &Snapshot, ctx: &CommandContext, c: &PlayerCommand) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let player = snapshot
        .player(&c.player_id)
        .ok_or_else(|| Rejection::new(STREAM_NOT_LOADED, format!("stream player-{} was not loaded", c.player_id)))?;
    match &c.op {
        PlayerOp::SetCreditLine { line_cents, approved_by } => {
            if *line_cents < 0 {
                return Err(Rejection::new(crate::money::AMOUNT_NOT_POSITIVE, "a credit line is zero or more").with("line_cents", *line_cents));
            }
            if *line_cents > crate::money::MAX_AMOUNT_CENTS {
                return Err(Rejection::new(crate::money::AMOUNT_TOO_LARGE, "a credit line is within the amount bound")
                    .with("line_cents", *line_cents)
                    .with("max_amount_cents", crate::money::MAX_AMOUNT_CENTS));
            }
            if approved_by.is_empty() || *approved_by == ctx.actor.id {
                return Err(Rejection::new(crate::markers::APPROVER_SAME_AS_ISSUER, "a credit line is approved by someone else"));
            }
            let e = PlayerEvent::CreditLineSet { line_cents: *line_cents, approved_by: approved_by.clone() };
            Ok(vec![(StreamId::Player(c.player_id.clone()), Event::Player(e))])
        }
        PlayerOp::Correct { reverses_event_id, approved_by, reason, reversal } => {
            let e = crate::corrections::decide_player_correction(ctx, player, reverses_event_id, approved_by, reason, reversal)?;
            Ok(vec![(StreamId::Player(c.player_id.clone()), Event::Player(e))])
        }
    }
}

/// Fast path for commands that touch only their table (every hand command). Cross-stream
/// commands (`BuyIn`, `TopUp`, `CashOut`, `MovePlayer`, `Fill`, `Credit`) need [`decide`].
pub fn decide_table(table: &TableState, ctx: &CommandContext, command: &TableCommand) -> Result<Vec<TableEvent>, Rejection> {
    let mut events = Vec::new();
    decide_table_into(table, ctx, command, &mut events)?;
    Ok(events)
}

/// [`decide_table`] appending the events to `events`, so that a caller judging many commands
/// reuses one buffer instead of allocating a vector per command. On refusal `events` is left
/// as it was.
pub fn decide_table_into(table: &TableState, ctx: &CommandContext, command: &TableCommand, events: &mut Vec<TableEvent>) -> Result<(), Rejection> {
    let event = match &command.op {
        // The two ways to act may also settle the hand (the last fold): two events.
        TableOp::Act { seat, action } => return act(table, *seat, *action, events),
        TableOp::PutOutChips { seat, chips, declared } => return put_out_chips(table, *seat, chips, *declared, events),
        TableOp::OpenTable { config } => {
            if table.table_id.is_some() {
                return Err(Rejection::new(TABLE_ALREADY_OPEN, "the table is already open"));
            }
            config.validate()?;
            let mut config = config.clone();
            config.version = 1;
            Ok(TableEvent::TableOpened { table_id: command.table_id.clone(), config: Box::new(config) })
        }
        TableOp::ChangeConfig { config } => {
            let (_, current) = open_table(table)?;
            between_hands(table)?;
            config.validate()?;
            if config.chip_set != current.chip_set {
                return Err(Rejection::new(crate::config::INVALID_CONFIG, "the chip set of an open table cannot change"));
            }
            // R-REBUY-1: a patron joins a game by a buy-in (or a move judged as one); a table
            // turned into another game under seated patrons would skip both checks.
            let seated = table.seats.iter().flatten().count();
            if seated > 0 && config.same_game().key() != current.same_game().key() {
                return Err(Rejection::new(GAME_CHANGE_WHILE_SEATED, "the table plays another game after this change: seat nobody first (move or cash out the players)")
                    .with("seated", seated as Cents));
            }
            // R-STAKE-4: no seat held falls outside the table (a patron at seat 9 of a table
            // cut to 6 seats could no longer cash out, top up or move: the second stakes pass).
            if let Some(held) = (1..=table.seats.len() as Seat).rev().find(|seat| table.seat(*seat).is_some())
                && held > config.max_seats
            {
                return Err(Rejection::new(crate::config::invalid_config("R-STAKE-4"), "a seat held lies beyond the table's seats after this change: move or cash out that player first")
                    .with("seat", Cents::from(held))
                    .with("max_seats", Cents::from(config.max_seats)));
            }
            let mut config = config.clone();
            config.version = current.version + 1;
            Ok(TableEvent::ConfigChanged { config: Box::new(config) })
        }
        TableOp::SeatPlayer { seat, player_id } => crate::seating::decide_seat(table, *seat, player_id),
        TableOp::ConvertCashInPlay { seat } => crate::table_stakes::decide_convert_cash(table, *seat),
        TableOp::RemoveChips { seat, amount_cents, .. } => {
            // Nothing or less than nothing is bad input, not ratholing (R-UNIT-1: the stakes pass
            // found it kept as a ratholing attempt against the patron).
            crate::money::check_positive("amount_cents", *amount_cents)?;
            Err(crate::table_stakes::rathole(table, *seat, *amount_cents))
        }
        TableOp::Tip { seat, amount_cents } => {
            not_live_in_hand(table, *seat)?;
            crate::tips::decide_tip(table, *seat, *amount_cents)
        }
        TableOp::PayKittyExpense { amount_cents, purpose, to_dealer } => {
            crate::kitty::decide_expense(table, *amount_cents, purpose, *to_dealer)
        }
        TableOp::CollectTime { seats } => crate::rake::decide_collect_time(table, ctx, seats),
        TableOp::ColorChange { seat, give, receive } => crate::inventory::decide_color_change(table, *seat, give, receive),
        TableOp::CloseShift { counted_tray, counted_drop_cents, signers } => {
            // A count that differs from the book is two events: the variance, then the close.
            events.extend(crate::inventory::decide_close_shift(table, counted_tray, *counted_drop_cents, signers)?);
            return Ok(());
        }
        TableOp::CloseGame => crate::kitty::decide_close_game(table),
        TableOp::PayJackpot { seat, amount_cents, promotion, approved_by } => {
            crate::rake::decide_pay_jackpot(table, ctx, *seat, *amount_cents, promotion, approved_by)
        }
        TableOp::StartHand { hand_no, button_seat, dealt_seats } => start_hand(table, ctx, *hand_no, *button_seat, dealt_seats),
        TableOp::Post { seat, kind, amount_cents } => {
            let all_in = crate::posts::judge_post(table, *seat, *kind, *amount_cents)?;
            let (table_id, _) = open_table(table)?;
            let postings = chips_to_pot(table_id, *seat, *amount_cents);
            Ok(TableEvent::Posted { seat: *seat, kind: *kind, amount_cents: *amount_cents, all_in, postings })
        }
        TableOp::NextRound { first_to_act_seat } => next_round(table, *first_to_act_seat),
        TableOp::Showdown { high, low, rake_cents } => {
            showdown(table, crate::pots::Award::Ranking { high, low: low.as_deref() }, *rake_cents)
        }
        TableOp::AwardPots { awards, rake_cents } => showdown(table, crate::pots::Award::Amounts(awards), *rake_cents),
        TableOp::DealUpCards { cards } => crate::stud::judge_up_cards(table, cards),
        TableOp::EndHand => {
            let Some(hand) = &table.hand else {
                return Err(Rejection::new(crate::betting::NO_HAND_IN_PROGRESS, "no hand is being played"));
            };
            if hand.phase != HandPhase::Settled {
                return Err(Rejection::new(crate::pots::HAND_NOT_SETTLED, "the pots are not awarded yet")
                    .with("pot_cents", hand.pot_cents));
            }
            Ok(TableEvent::HandEnded { hand_no: hand.hand_no })
        }
        TableOp::WriteIou { seat, amount_cents, lender, accepted_by, to_raise } => {
            crate::iou::decide_iou(table, *seat, *amount_cents, lender.as_ref(), accepted_by, *to_raise)
        }
        TableOp::SitOut { seat } => crate::posts::decide_sit(table, *seat, true),
        TableOp::SitIn { seat } => crate::posts::decide_sit(table, *seat, false),
        TableOp::TakeBackShortCall { seat } => {
            let amount_cents = crate::betting::judge_take_back(table, *seat)?;
            let (table_id, _) = open_table(table)?;
            let mut postings = Vec::with_capacity(2);
            crate::accounts::transfer(&mut postings, Account::Pot { table_id: table_id.clone(), pot_index: 0 }, Account::Seat { table_id: table_id.clone(), seat: *seat }, amount_cents);
            Ok(TableEvent::ShortCallTakenBack { seat: *seat, amount_cents, postings })
        }
        TableOp::BringUpShortBet { seat } => {
            let amount_cents = crate::betting::judge_bring_up(table, *seat)?;
            let (table_id, _) = open_table(table)?;
            Ok(TableEvent::ShortBetBroughtUp { seat: *seat, amount_cents, postings: chips_to_pot(table_id, *seat, amount_cents) })
        }
        TableOp::BuyIn { .. }
        | TableOp::TopUp { .. }
        | TableOp::CashOut { .. }
        | TableOp::PutCashInPlay { .. }
        | TableOp::MovePlayer { .. }
        | TableOp::Fill { .. }
        | TableOp::Credit { .. }
        | TableOp::VoidSlip { .. }
        | TableOp::SettleIou { .. }
        | TableOp::Correct { .. } => {
            Err(Rejection::new(STREAM_NOT_LOADED, "this command touches other streams: use decide()"))
        }
    }?;
    events.push(event);
    Ok(())
}

fn chips_to_pot(table_id: &TableId, seat: Seat, amount_cents: Cents) -> Vec<Posting> {
    // A check or fold moves nothing: no postings, and no allocation for them.
    let mut postings = Vec::with_capacity(if amount_cents == 0 { 0 } else { 2 });
    crate::accounts::transfer(
        &mut postings,
        Account::Seat { table_id: table_id.clone(), seat },
        Account::Pot { table_id: table_id.clone(), pot_index: 0 },
        amount_cents,
    );
    postings
}

fn start_hand(table: &TableState, ctx: &CommandContext, hand_no: u64, button_seat: Seat, dealt_seats: &[Seat]) -> Result<TableEvent, Rejection> {
    let (_, config) = open_table(table)?;
    if table.game_closed {
        return Err(Rejection::new(crate::table_stakes::GAME_CLOSED, "the game has ended"));
    }
    if let Some(h) = &table.hand {
        return Err(Rejection::new(HAND_ALREADY_STARTED, "end the hand in play first").with("hand_no", h.hand_no as Cents));
    }
    if hand_no <= table.last_hand_no {
        return Err(Rejection::new(HAND_NUMBER_NOT_INCREASING, "hand numbers increase")
            .with("hand_no", hand_no as Cents)
            .with("last_hand_no", table.last_hand_no as Cents));
    }
    if dealt_seats.len() < 2 || dealt_seats.len() > config.max_seats as usize {
        return Err(Rejection::new(TOO_FEW_PLAYERS, "a hand needs 2 to max_seats dealt players").with("dealt", dealt_seats.len() as Cents));
    }
    crate::seating::check_seat_number(table, button_seat)?;
    crate::posts::check_deal(table, config, button_seat, dealt_seats)?;
    for (i, seat) in dealt_seats.iter().enumerate() {
        let s = occupied(table, *seat)?;
        if dealt_seats[..i].contains(seat) {
            return Err(Rejection::new(crate::seating::INVALID_SEAT, "seat dealt twice").with("seat", *seat as Cents));
        }
        // R-UNIT-2: tip chips never play; a seat holding only them has nothing to play with.
        if table.playable_stack_cents(*seat) <= 0 {
            return Err(Rejection::new(crate::table_stakes::NO_CHIPS, "a player with no chips to play is not dealt in")
                .with("seat", *seat as Cents)
                .with("stack_cents", s.stack_cents));
        }
        // R-STAKE-3, R-REBUY-1: a seat is dealt in once it has bought in (within the limits and
        // the re-buy wait); chips that came another way (a jackpot paid to a seat taken without
        // chips, top-ups left after the buy-in was corrected away) are no buy-in.
        if !s.has_bought_in {
            return Err(Rejection::new(crate::table_stakes::NOT_BOUGHT_IN, "a seat that has not bought in is not dealt in: buy in first")
                .with("seat", *seat as Cents)
                .with("stack_cents", s.stack_cents));
        }
        // R-RAKE-3: time is paid in advance (the betting pass dealt in a seat that had not paid).
        if matches!(config.fee, crate::config::FeePolicy::TimeCollection { .. }) && s.time_paid_until_unix_ms <= ctx.at_unix_ms {
            return Err(Rejection::new(crate::rake::TIME_NOT_PAID, "time is paid in advance: collect this seat's time before dealing it in")
                .with("seat", *seat as Cents)
                .with("paid_until_unix_ms", s.time_paid_until_unix_ms));
        }
        // R-STAKE-5: cash in play plays in the hand after it was put down; it is converted to
        // chips after that hand, before the next.
        if s.cash_in_play_cents > 0 && s.cash_in_play_played {
            return Err(Rejection::new(crate::table_stakes::CASH_IN_PLAY_NOT_CONVERTED, "the cash in play has played: convert it to chips first")
                .with("seat", *seat as Cents)
                .with("cash_in_play_cents", s.cash_in_play_cents));
        }
        // R-REBUY-1: leaving another seat of this game bound this one.
        if let Some(bound) = crate::rebuy::bound_min_stack_cents(s, ctx.at_unix_ms)
            && s.stack_cents < bound
        {
            return Err(Rejection::new(crate::rebuy::REBUY_BELOW_AMOUNT_LEFT, "the player left another seat of this game: top up to the amount left with first")
                .with("seat", *seat as Cents)
                .with("stack_cents", s.stack_cents)
                .with("required_min_cents", bound));
        }
    }
    crate::posts::check_big_blind_covers_small_blind(table, config, button_seat, dealt_seats)?;
    Ok(TableEvent::HandStarted { hand_no, button_seat, dealt_seats: dealt_seats.to_vec() })
}

fn act(table: &TableState, seat: Seat, action: crate::hand::Action, events: &mut Vec<TableEvent>) -> Result<(), Rejection> {
    let judged = crate::betting::judge_action(table, seat, action)?;
    let (table_id, _) = open_table(table)?;
    let postings = chips_to_pot(table_id, seat, judged.amount_cents);
    acted_events(table, seat, judged, postings, events)
}

/// R-BET-14 / R-BET-13: the chips go to the pot; change comes back from the pot
/// (value-neutral), so the seat's postings net to the amount the chips pay.
fn put_out_chips(
    table: &TableState,
    seat: Seat,
    chips: &[crate::money::ChipCount],
    declared: Option<crate::hand::Action>,
    events: &mut Vec<TableEvent>,
) -> Result<(), Rejection> {
    let c = crate::betting::judge_chips(table, seat, chips, declared)?;
    let (table_id, _) = open_table(table)?;
    let mut postings = chips_to_pot(table_id, seat, c.chips_cents);
    if c.change_cents > 0 {
        crate::accounts::transfer(
            &mut postings,
            Account::Pot { table_id: table_id.clone(), pot_index: 0 },
            Account::Seat { table_id: table_id.clone(), seat },
            c.change_cents,
        );
    }
    acted_events(table, seat, c.judged, postings, events)
}

fn acted_events(
    table: &TableState,
    seat: Seat,
    judged: crate::betting::Judged,
    postings: Vec<Posting>,
    events: &mut Vec<TableEvent>,
) -> Result<(), Rejection> {
    let is_fold = judged.kind == crate::hand::ActionKind::Fold;
    let acted = TableEvent::Acted {
        seat,
        kind: judged.kind,
        to_cents: judged.to_cents,
        amount_cents: judged.amount_cents,
        all_in: judged.all_in,
        postings,
    };
    if !is_fold {
        // The usual case, moved into place once.
        events.push(acted);
        return Ok(());
    }
    // The last fold settles the hand at once: one live player takes every pot. Where the
    // dealer reports the rake (R-RAKE-1), the dealer settles it with `Showdown` instead.
    let reported_rake = table.config.as_ref().is_some_and(|c| matches!(c.fee, crate::config::FeePolicy::Reported { .. }));
    let last_fold = is_fold && table.hand.as_ref().is_some_and(|h| h.live_count() == 2);
    if is_fold && (reported_rake || !last_fold) {
        // R-POT-3: a side pot left to one player by this fold is paid at once.
        let (table_id, config) = open_table(table)?;
        events.push(acted);
        let paid = match table.hand.as_ref() {
            // Only a player all in leaves a side pot above the level.
            Some(hand) if hand.active_count() <= 2 && hand.players.iter().any(|p| p.status == InHand::AllIn) => {
                let mut after = hand.clone();
                crate::table::apply_acted(&mut after, config, seat, judged.kind, judged.to_cents, judged.amount_cents, &[], table.playable_stack_cents(seat));
                crate::pots::side_pot_at_once(&after, config, table_id)
            }
            _ => None,
        };
        if let Some(paid) = paid {
            events.push(paid);
        }
        return Ok(());
    }
    if !last_fold {
        events.push(acted);
        return Ok(());
    }
    let settled = match (&acted, table.hand.as_ref()) {
        // A fold moves no chips: after it only the hand differs, so settle a copy of the hand
        // (the table, with its seats and configuration, is ten times larger).
        (TableEvent::Acted { postings, .. }, Some(hand)) if postings.is_empty() => {
            let (table_id, config) = open_table(table)?;
            let mut after = hand.clone();
            crate::table::apply_acted(&mut after, config, seat, judged.kind, judged.to_cents, judged.amount_cents, &[], table.playable_stack_cents(seat));
            let nobody = crate::pots::Award::Ranking { high: &[], low: None };
            crate::pots::settle_hand(&after, config, table_id, nobody, None, false)?
        }
        _ => crate::pots::settle(&table.clone().evolve(&acted), &[], None, false)?,
    };
    events.push(acted);
    events.push(settled);
    Ok(())
}

/// The round is over, or the one player left to act has nothing to decide: nobody else can
/// bet (every opponent is all in or folded) and nothing is owed, so a check is all there is.
/// That player may still check; a hand record that leaves the check out is as good (PokerKit
/// writes none when the others went all in on their posts).
/// R-POT-6: a settled hand's pots are awarded; nothing more is dealt or awarded until it ends.
fn not_settled(hand: &crate::hand::HandState) -> Result<(), Rejection> {
    if hand.phase == HandPhase::Settled {
        return Err(Rejection::new(crate::pots::HAND_ALREADY_SETTLED, "this hand's pots are already awarded: end the hand")
            .with("hand_no", hand.hand_no as Cents));
    }
    Ok(())
}

fn round_closed(hand: &crate::hand::HandState) -> bool {
    if hand.phase == HandPhase::RoundComplete {
        return true;
    }
    hand.phase == HandPhase::Betting
        && !hand.awaiting_bring_in
        && hand.active_count() == 1
        && hand.round.to_act.and_then(|seat| hand.player(seat)).is_some_and(|p| p.status == InHand::Active && p.round_cents >= hand.round.bet_to_cents && p.short_cents == 0)
}

fn next_round(table: &TableState, first_to_act_seat: Option<Seat>) -> Result<TableEvent, Rejection> {
    let (_, config) = open_table(table)?;
    let Some(hand) = &table.hand else {
        return Err(Rejection::new(crate::betting::NO_HAND_IN_PROGRESS, "no hand is being played"));
    };
    not_settled(hand)?;
    if !round_closed(hand) {
        return Err(Rejection::new(crate::betting::ROUND_NOT_COMPLETE, "players still have to act in this round")
            .with("round_index", hand.round.index as Cents));
    }
    let next = hand.round.index + 1;
    if next >= config.betting_rounds {
        return Err(Rejection::new(crate::betting::NO_MORE_ROUNDS, "the last betting round is over: showdown")
            .with("betting_rounds", config.betting_rounds as Cents));
    }
    if let Some(s) = first_to_act_seat
        && hand.player(s).is_none_or(|p| p.status == InHand::Folded) {
            return Err(Rejection::new(crate::posts::SEAT_NOT_IN_HAND, "first to act must be a live player").with("seat", s as Cents));
        }
    short_bets_brought_up(hand)?;
    let first_to_act_seat = crate::stud::judge_first_to_act(hand, config, next, first_to_act_seat)?;
    Ok(TableEvent::RoundStarted { round_index: next, first_to_act_seat })
}

/// R-BET-13: a short bet or call of this round is brought up before the round can close.
fn short_bets_brought_up(hand: &crate::hand::HandState) -> Result<(), Rejection> {
    match hand.players.iter().find(|p| p.short_cents > 0 && p.short_round_index == hand.round.index && p.status != InHand::Folded) {
        Some(p) => Err(Rejection::new(crate::betting::SHORT_BET_NOT_BROUGHT_UP, "a short bet or call must be brought up before the round closes")
            .with("seat", p.seat as Cents)
            .with("short_cents", p.short_cents)),
        None => Ok(()),
    }
}

fn showdown(table: &TableState, award: crate::pots::Award, rake_cents: Option<Cents>) -> Result<TableEvent, Rejection> {
    let (_, config) = open_table(table)?;
    let Some(hand) = &table.hand else {
        return Err(Rejection::new(crate::betting::NO_HAND_IN_PROGRESS, "no hand is being played"));
    };
    not_settled(hand)?;
    let betting_over = hand.round.index + 1 >= config.betting_rounds || hand.active_count() <= 1;
    if !round_closed(hand) || !betting_over {
        return Err(Rejection::new(crate::pots::SHOWDOWN_NOT_READY, "betting is not over")
            .with("round_index", hand.round.index as Cents));
    }
    let too_long = match award {
        crate::pots::Award::Ranking { high, low } => high.len() > crate::MAX_SEATS || low.is_some_and(|l| l.len() > crate::MAX_SEATS),
        crate::pots::Award::Amounts(awards) => awards.len() > crate::MAX_SEATS,
    };
    if too_long {
        return Err(Rejection::new(crate::pots::SHOWDOWN_INVALID_RANKING, "at most 10 groups or awards"));
    }
    short_bets_brought_up(hand)?;
    crate::pots::settle_with(table, award, rake_cents, true)
}
