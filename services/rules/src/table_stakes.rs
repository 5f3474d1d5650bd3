//! Table stakes (R-STAKE-1..5): buy-in limits, top-ups between hands or after folding, cash in
//! play, cash-out on leaving, and the ratholing refusal. Buy-ins also enforce the re-buy wait
//! (R-REBUY-1), the supervisor threshold (R-CHIP-2) and the AML record (R-AUDIT-4).

use crate::accounts::{Account, HouseAccount, Posting};
use crate::aml::CashDirection;
use crate::config::{StakesMode, TableConfig};
use crate::money::{Cents, ChipCount};
use crate::player::{PlayerEvent, PlayerState};
use crate::rejection::{Reason, Rejection};
use crate::streams::{PlayerId, Seat, StreamId, TableId};
use crate::table::{FundsSource, TableCommand, TableEvent, TableOp, TableState};
use crate::{CommandContext, Event, Snapshot};

pub const RATHOLING_FORBIDDEN: Reason = Reason::new("RATHOLING_FORBIDDEN", "R-STAKE-2");
pub const BUY_IN_BELOW_MINIMUM: Reason = Reason::new("BUY_IN_BELOW_MINIMUM", "R-STAKE-3");
pub const BUY_IN_ABOVE_MAXIMUM: Reason = Reason::new("BUY_IN_ABOVE_MAXIMUM", "R-STAKE-3");
pub const TOP_UP_ABOVE_MAXIMUM: Reason = Reason::new("TOP_UP_ABOVE_MAXIMUM", "R-STAKE-3");
pub const SHORT_BUY_NOT_AVAILABLE: Reason = Reason::new("SHORT_BUY_NOT_AVAILABLE", "R-STAKE-3");
pub const ALREADY_BOUGHT_IN: Reason = Reason::new("ALREADY_BOUGHT_IN", "R-STAKE-3");
pub const NOT_BOUGHT_IN: Reason = Reason::new("NOT_BOUGHT_IN", "R-STAKE-3");
pub const SUPERVISOR_REQUIRED: Reason = Reason::new("SUPERVISOR_REQUIRED", "R-CHIP-2");
pub const POCKET_INSUFFICIENT: Reason = Reason::new("POCKET_INSUFFICIENT", "R-CHIP-2");
pub const CASH_IN_PLAY_NOT_ALLOWED: Reason = Reason::new("CASH_IN_PLAY_NOT_ALLOWED", "R-STAKE-5");
pub const CASH_IN_PLAY_NOT_CONVERTED: Reason = Reason::new("CASH_IN_PLAY_NOT_CONVERTED", "R-STAKE-5");
pub const NO_CASH_IN_PLAY: Reason = Reason::new("NO_CASH_IN_PLAY", "R-STAKE-5");
pub const NO_CHIPS: Reason = Reason::new("NO_CHIPS", "R-POST-7");
pub const WRONG_PLAYER: Reason = Reason::new("WRONG_PLAYER", "R-STAKE-4");
pub const GAME_CLOSED: Reason = Reason::new("GAME_CLOSED", "R-STAKE-3");
/// R-STAKE-2: chips for refreshments beyond what the stack holds.
pub const REMOVAL_EXCEEDS_STACK: Reason = Reason::new("REMOVAL_EXCEEDS_STACK", "R-STAKE-2");

pub const REASONS: &[Reason] = &[
    RATHOLING_FORBIDDEN,
    BUY_IN_BELOW_MINIMUM,
    BUY_IN_ABOVE_MAXIMUM,
    TOP_UP_ABOVE_MAXIMUM,
    SHORT_BUY_NOT_AVAILABLE,
    ALREADY_BOUGHT_IN,
    NOT_BOUGHT_IN,
    SUPERVISOR_REQUIRED,
    POCKET_INSUFFICIENT,
    CASH_IN_PLAY_NOT_ALLOWED,
    CASH_IN_PLAY_NOT_CONVERTED,
    NO_CASH_IN_PLAY,
    NO_CHIPS,
    WRONG_PLAYER,
    GAME_CLOSED,
    REMOVAL_EXCEEDS_STACK,
];

/// R-STAKE-2: taking chips off the table while seated is refused; the attempt is audited by
/// the caller (R-AUDIT-3).
pub fn rathole(table: &TableState, seat: Seat, amount_cents: Cents) -> Rejection {
    Rejection::new(RATHOLING_FORBIDDEN, "chips leave a seated stack only by play, tips, kitty, color change, the table's refreshment allowance or a full cash-out")
        .with("seat", seat as Cents)
        .with("amount_cents", amount_cents)
        .with("stack_cents", table.stack_cents(seat))
}

/// R-CHIP-2: a large buy-in needs a supervisor's id (not the actor's own). Large is what the
/// seat brings in between two deals, this arrival with those before it since the seat was last
/// dealt a hand (the walk-around pass: $29,700 reached one seat as a $9,900 buy-in and two
/// $9,900 top-ups in one break, no supervisor).
fn check_supervisor(config: &TableConfig, ctx: &CommandContext, since_deal_cents: Cents, amount_cents: Cents, supervisor_id: Option<&String>) -> Result<(), Rejection> {
    let earlier = ("since_deal_cents", since_deal_cents);
    let what = "a buy-in this large, with what the seat brought in since it was last dealt, needs a supervisor's id";
    require_supervisor(ctx, config.buy_in.supervisor_threshold_cents, earlier, amount_cents, supervisor_id, what)
}

/// R-CHIP-2 for chips bought with cash, at a table or at the cage: the amount with the patron's
/// cash in for the gaming day (at every table and cage, marker redemptions included) at or over
/// `threshold_cents` needs a supervisor's id. Cash at two seats of a table in one break, or at
/// the cage and then at a table, is not each below it (the wave-2 pass: $9,900 at the cage and
/// $9,900 at a table went without one, and $9,900 at one seat, cashed out and bought in again
/// at the next).
pub(crate) fn cash_supervisor(ctx: &CommandContext, player: &PlayerState, threshold_cents: Cents, amount_cents: Cents, supervisor_id: Option<&String>) -> Result<(), Rejection> {
    let day = player.cash_day.on(&ctx.gaming_day);
    let what = "chips bought with cash this large, with the patron's cash in for the gaming day, need a supervisor's id";
    require_supervisor(ctx, threshold_cents, ("day_cash_in_cents", day.cash_in_cents), amount_cents, supervisor_id, what)
}

/// R-CHIP-2, one check for every purchase of chips: `amount_cents` with what counts with it
/// (`earlier`: its detail's name and amount) at or over `threshold_cents` needs a supervisor's
/// id, some character of it not white space, and not the actor's own; `what` says so.
pub(crate) fn require_supervisor(
    ctx: &CommandContext,
    threshold_cents: Cents,
    earlier: (&'static str, Cents),
    amount_cents: Cents,
    supervisor_id: Option<&String>,
    what: &'static str,
) -> Result<(), Rejection> {
    if earlier.1.saturating_add(amount_cents) >= threshold_cents {
        // `!s.trim().is_empty()`, without trimming: some character is not white space.
        let ok = supervisor_id.is_some_and(|s| s.chars().any(|c| !c.is_whitespace()) && *s != ctx.actor.id);
        if !ok {
            return Err(Rejection::new(SUPERVISOR_REQUIRED, what)
                .with("amount_cents", amount_cents)
                .with(earlier.0, earlier.1)
                .with("threshold_cents", threshold_cents));
        }
    }
    Ok(())
}

/// What funds arriving at a seat produce: tray chips paid out, postings, the player's event.
struct Funding {
    chips: Vec<ChipCount>,
    postings: Vec<Posting>,
    player_event: PlayerEvent,
}

/// Postings and chips for funds arriving at a seat, plus the player's event.
#[allow(clippy::too_many_arguments)]
fn fund_seat(
    table: &TableState,
    table_id: &TableId,
    seat: Seat,
    player_id: &PlayerId,
    player: &PlayerState,
    snapshot: &Snapshot,
    ctx: &CommandContext,
    source: FundsSource,
    amount_cents: Cents,
) -> Result<Funding, Rejection> {
    let seat_account = Account::Seat { table_id: table_id.clone(), seat };
    let mut postings = Vec::with_capacity(8);
    let mut chips = Vec::new();
    let player_event = match source {
        FundsSource::Cash => {
            chips = crate::inventory::tray_payout(table, amount_cents)?;
            postings.push(Posting::new(Account::House(HouseAccount::Patrons), -amount_cents));
            postings.push(Posting::new(Account::Drop { table_id: table_id.clone() }, amount_cents));
            for c in &chips {
                postings.push(Posting::new(
                    Account::Tray { table_id: table_id.clone(), denomination_cents: c.denomination_cents },
                    -c.value_cents(),
                ));
            }
            postings.push(Posting::new(seat_account, amount_cents));
            crate::aml::cash_event(player, &ctx.gaming_day, CashDirection::In, amount_cents, &snapshot.aml)?
        }
        FundsSource::PocketChips => {
            if player.pocket_cents < amount_cents {
                return Err(Rejection::new(POCKET_INSUFFICIENT, "not that many chips in the pocket")
                    .with("amount_cents", amount_cents)
                    .with("pocket_cents", player.pocket_cents));
            }
            crate::accounts::transfer(&mut postings, Account::Pocket { player_id: player_id.clone() }, seat_account, amount_cents);
            PlayerEvent::PocketChipsPlayed { table_id: table_id.clone(), seat, amount_cents }
        }
    };
    Ok(Funding { chips, postings, player_event })
}

/// How chips arriving at a seat are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// The first chips of a session: the buy-in limits (R-STAKE-3), the re-buy wait and one
    /// seat per game (R-REBUY-1).
    BuyIn { short_buy: bool },
    /// More chips for a seat that has bought in: up to the maximum (R-STAKE-3).
    TopUp,
}

impl Arrival {
    /// A buy-in if the seat holds no chips of this session yet, else a top-up.
    pub(crate) fn for_seat(table: &TableState, seat: Seat) -> Arrival {
        if table.seat(seat).is_some_and(|s| s.has_bought_in) { Arrival::TopUp } else { Arrival::BuyIn { short_buy: false } }
    }
}

/// Every door that adds chips to a stack (buy-in, top-up, cash in play, a marker to the seat)
/// is judged here, so none of them walks around a limit: between hands (R-STAKE-1; open
/// stakes may add cash during a hand, R-MARK-4, `during_hand_ok`), the buy-in minimum and
/// maximum or the top-up maximum (R-STAKE-3), the re-buy wait and one seat per game
/// (R-REBUY-1), a seat bound by leaving another seat of the game, the full re-buy after a short
/// all-in win (R-REBUY-3), and the supervisor for large amounts (R-CHIP-2).
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_arrival(
    table: &TableState,
    config: &TableConfig,
    table_id: &TableId,
    ctx: &CommandContext,
    seat: Seat,
    player_id: &PlayerId,
    player: &PlayerState,
    amount: Cents,
    arrival: Arrival,
    supervisor_id: Option<&String>,
    during_hand_ok: bool,
) -> Result<(), Rejection> {
    if table.game_closed {
        return Err(Rejection::new(GAME_CLOSED, "the game has ended: no more chips come to this table"));
    }
    crate::money::check_positive("amount_cents", amount)?;
    match arrival {
        Arrival::BuyIn { short_buy } => {
            crate::seating::check_free_for(table, seat, player_id)?;
            if table.seat(seat).is_some_and(|s| s.has_bought_in) {
                return Err(Rejection::new(ALREADY_BOUGHT_IN, "already bought in: top up instead").with("seat", seat as Cents));
            }
            let game = config.same_game();
            crate::rebuy::check_second_seat(player, table_id, &game, &config.rebuy)?;
            crate::rebuy::check_departures_bound(player, &game, ctx.at_unix_ms)?;
            let return_max = crate::rebuy::return_max_cents(player, &game, ctx.at_unix_ms, &config.rebuy);
            crate::rebuy::check(player, &game, ctx.at_unix_ms, &config.rebuy, amount)?;
            let min = if short_buy {
                config.buy_in.short_buy_min_cents.ok_or_else(|| {
                    Rejection::new(SHORT_BUY_NOT_AVAILABLE, "this table has no short buy-in")
                })?
            } else {
                config.buy_in.min_cents
            };
            let max = config.buy_in.max_cents.max(return_max.unwrap_or(0));
            if amount < min {
                return Err(Rejection::new(BUY_IN_BELOW_MINIMUM, "below the table's minimum buy-in")
                    .with("buy_in_cents", amount)
                    .with("min_buy_in_cents", min));
            }
            // Chips the seat holds already (a jackpot paid to it, top-ups left after its buy-in
            // was corrected away) count toward the maximum.
            let held = table.seat(seat).map_or(0, |s| s.stack_cents);
            if held + amount > max {
                return Err(Rejection::new(BUY_IN_ABOVE_MAXIMUM, "above the table's maximum buy-in")
                    .with("buy_in_cents", amount)
                    .with("stack_cents", held)
                    .with("max_buy_in_cents", max));
            }
        }
        Arrival::TopUp => {
            let s = seated_as(table, seat, player_id)?;
            if !s.has_bought_in {
                return Err(Rejection::new(NOT_BOUGHT_IN, "buy in first").with("seat", seat as Cents));
            }
            if !during_hand_ok {
                crate::ledger::not_live_in_hand(table, seat)?;
            }
            crate::rebuy::check_full_rebuy(s, config.buy_in.min_cents, Some(amount))?;
            let open_stakes = matches!(config.stakes, StakesMode::OpenStakes { .. });
            // R-STAKE-3: chips for a stack that went broke are a re-buy: at least the minimum
            // buy-in (a $2 top-up from nothing had been dealt in at a $40 minimum: the stakes
            // pass), and the session's one short buy-in is spent.
            // Broke: no playable chip left (a $5 tip chip under a $25 minimum chip is no stack:
            // the second stakes pass re-bought $25 on it and was dealt in with $30).
            // Nor are tip chips known from a color change, whatever their value (the wave-2 pass:
            // five $1 chips at a $5 minimum were topped up with $5 and dealt in).
            let broke = table.playable_stack_cents(seat) <= 0;
            if broke && amount < config.buy_in.min_cents && !open_stakes {
                return Err(Rejection::new(BUY_IN_BELOW_MINIMUM, "a stack that went broke re-buys at least the table's minimum buy-in")
                    .with("buy_in_cents", amount)
                    .with("min_buy_in_cents", config.buy_in.min_cents));
            }
            // A seat bound by leaving another seat of the game may be brought up to the amount
            // left with, even above the maximum (R-REBUY-1).
            let max = config.buy_in.max_cents.max(crate::rebuy::bound_min_stack_cents(s, ctx.at_unix_ms).unwrap_or(0));
            if s.stack_cents + amount > max && !open_stakes {
                return Err(Rejection::new(TOP_UP_ABOVE_MAXIMUM, "a top-up may bring the stack up to the maximum buy-in")
                    .with("stack_cents", s.stack_cents)
                    .with("top_up_cents", amount)
                    .with("max_buy_in_cents", max));
            }
        }
    }
    config.chip_set.check_makes("amount_cents", amount)?;
    let since_deal = table.seat(seat).filter(|s| s.player_id == *player_id).map_or(0, |s| s.bought_since_deal_cents);
    check_supervisor(config, ctx, since_deal, amount, supervisor_id)
}

/// The player event of the first chips of a session: the patron now holds the seat.
pub(crate) fn joined(table_id: &TableId, seat: Seat, config: &TableConfig, amount_cents: Cents) -> PlayerEvent {
    PlayerEvent::JoinedTable { table_id: table_id.clone(), seat, game_key: config.same_game().key().to_owned(), amount_cents }
}

/// BuyIn, TopUp, PutCashInPlay, CashOut, SettleIou and RemoveChips within the refreshment
/// allowance: they touch the table and the player
/// streams. The events are appended to `out` once every check passed (a refusal appends nothing).
pub fn decide_funds(
    snapshot: &Snapshot,
    table: &TableState,
    ctx: &CommandContext,
    c: &TableCommand,
    out: &mut Vec<(StreamId, Event)>,
) -> Result<(), Rejection> {
    let (table_id, config) = crate::ledger::open_table(table)?;
    let player_of = |id: &PlayerId| {
        snapshot
            .player(id)
            .ok_or_else(|| Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream player-{id} was not loaded")))
    };
    let tsid = StreamId::Table(table_id.clone());
    let open_stakes = matches!(config.stakes, StakesMode::OpenStakes { .. });
    match &c.op {
        TableOp::BuyIn { seat, player_id, amount_cents, source, supervisor_id, short_buy } => {
            let (seat, amount) = (*seat, *amount_cents);
            let player = player_of(player_id)?;
            let arrival = Arrival::BuyIn { short_buy: *short_buy };
            check_arrival(table, config, table_id, ctx, seat, player_id, player, amount, arrival, supervisor_id.as_ref(), false)?;
            if *source == FundsSource::Cash {
                cash_supervisor(ctx, player, config.buy_in.supervisor_threshold_cents, amount, supervisor_id.as_ref())?;
            }
            let Funding { chips, postings, player_event } = fund_seat(table, table_id, seat, player_id, player, snapshot, ctx, *source, amount)?;
            out.push((
                tsid,
                Event::Table(TableEvent::BoughtIn {
                    seat,
                    player_id: player_id.clone(),
                    amount_cents: amount,
                    source: *source,
                    supervisor_id: supervisor_id.clone(),
                    short_buy: *short_buy,
                    chips,
                    postings,
                }),
            ));
            let psid = StreamId::Player(player_id.clone());
            out.push((psid.clone(), Event::Player(joined(table_id, seat, config, amount))));
            out.push((psid, Event::Player(player_event)));
        }
        TableOp::TopUp { seat, player_id, amount_cents, source, supervisor_id } => {
            let (seat, amount) = (*seat, *amount_cents);
            let player = player_of(player_id)?;
            // R-STAKE-1: nothing is added during a hand unless folded; R-MARK-4: open stakes may.
            let during_hand_ok = open_stakes && *source == FundsSource::Cash;
            check_arrival(table, config, table_id, ctx, seat, player_id, player, amount, Arrival::TopUp, supervisor_id.as_ref(), during_hand_ok)?;
            if *source == FundsSource::Cash {
                cash_supervisor(ctx, player, config.buy_in.supervisor_threshold_cents, amount, supervisor_id.as_ref())?;
            }
            let Funding { chips, postings, player_event } = fund_seat(table, table_id, seat, player_id, player, snapshot, ctx, *source, amount)?;
            out.push((
                tsid,
                Event::Table(TableEvent::ToppedUp { seat, amount_cents: amount, source: *source, supervisor_id: supervisor_id.clone(), chips, postings }),
            ));
            out.push((StreamId::Player(player_id.clone()), Event::Player(player_event)));
        }
        TableOp::PutCashInPlay { seat, player_id, amount_cents, supervisor_id } => {
            let (seat, amount) = (*seat, *amount_cents);
            if !config.cash_in_play_allowed {
                return Err(Rejection::new(CASH_IN_PLAY_NOT_ALLOWED, "this table does not play cash"));
            }
            // The patron is seated (the cash is on the table in front of them).
            seated_as(table, seat, player_id)?;
            crate::ledger::not_live_in_hand(table, seat)?;
            if !config.chip_set.is_playable(amount) {
                return Err(Rejection::new(crate::money::NOT_MULTIPLE_OF_MIN_CHIP, "cash plays in whole minimum chips")
                    .with("amount_cents", amount));
            }
            let player = player_of(player_id)?;
            // R-STAKE-5: cash in play is chips arriving like any other: a buy-in or a top-up.
            let arrival = Arrival::for_seat(table, seat);
            check_arrival(table, config, table_id, ctx, seat, player_id, player, amount, arrival, supervisor_id.as_ref(), false)?;
            cash_supervisor(ctx, player, config.buy_in.supervisor_threshold_cents, amount, supervisor_id.as_ref())?;
            let mut postings = Vec::with_capacity(2);
            crate::accounts::transfer(&mut postings, Account::House(HouseAccount::Patrons), Account::Seat { table_id: table_id.clone(), seat }, amount);
            let buy_in = matches!(arrival, Arrival::BuyIn { .. });
            let supervisor_id = supervisor_id.clone();
            out.push((tsid, Event::Table(TableEvent::CashPutInPlay { seat, amount_cents: amount, postings, buy_in, supervisor_id })));
            let psid = StreamId::Player(player_id.clone());
            if buy_in {
                out.push((psid.clone(), Event::Player(joined(table_id, seat, config, amount))));
            }
            let e = crate::aml::cash_event(player, &ctx.gaming_day, CashDirection::In, amount, &snapshot.aml)?;
            out.push((psid, Event::Player(e)));
        }
        TableOp::CashOut { seat, player_id } => {
            let seat = *seat;
            let s = seated_as(table, seat, player_id)?;
            crate::ledger::not_owed_by_hand(table, seat)?;
            let player = player_of(player_id)?;
            if s.cash_in_play_cents > 0 {
                return Err(Rejection::new(CASH_IN_PLAY_NOT_CONVERTED, "convert the cash in play first")
                    .with("cash_in_play_cents", s.cash_in_play_cents));
            }
            // R-MARK-3: IOUs in play may not leave the table: the stack pays them back first.
            let iou_settled_cents = s.iou_cents.max(0);
            if iou_settled_cents > s.stack_cents {
                return Err(Rejection::new(crate::iou::IOU_OUTSTANDING, "the stack does not cover the IOUs written here: settle the rest from the pocket first")
                    .with("iou_cents", s.iou_cents)
                    .with("stack_cents", s.stack_cents));
            }
            let amount = s.stack_cents - iou_settled_cents;
            crate::iou::check_loans_paid(table, seat)?;
            crate::iou::check_stays_on_table(table, amount, iou_settled_cents)?;
            let mut postings = Vec::with_capacity(3);
            if s.stack_cents > 0 {
                postings.push(Posting::new(Account::Seat { table_id: table_id.clone(), seat }, -s.stack_cents));
            }
            if iou_settled_cents > 0 {
                postings.push(Posting::new(Account::Iou { player_id: player_id.clone() }, iou_settled_cents));
            }
            if amount > 0 {
                postings.push(Posting::new(Account::Pocket { player_id: player_id.clone() }, amount));
            }
            // R-REBUY-1 with R-STAKE-2: the patron left the game with the stack and the chips
            // taken off within the session's refreshment allowance; a return brings both back
            // (cash-out and re-buy cycles had taken the allowance again and again: the stakes
            // pass, $60 off a $10 allowance in six cycles).
            let left_with = amount + s.removed_cents;
            let bound = bind_other_seats(snapshot, config, table_id, player_id, player, left_with, ctx)?;
            out.push((tsid, Event::Table(TableEvent::CashedOut { seat, player_id: player_id.clone(), amount_cents: amount, postings, iou_settled_cents })));
            // A seat taken and left without ever buying in (the patron holds no seat here) is no
            // departure: the patron's record is not written (such a seat under a known patron's
            // id in another case could not be freed: the fixes' pass).
            if !s.has_bought_in && left_with == 0 && !player.seats.iter().any(|held| &held.table_id == table_id) {
                out.extend(bound);
                return Ok(());
            }
            out.push((
                StreamId::Player(player_id.clone()),
                Event::Player(PlayerEvent::LeftTable {
                    table_id: table_id.clone(),
                    seat,
                    game_key: config.same_game().key().to_owned(),
                    amount_cents: amount,
                    at_unix_ms: ctx.at_unix_ms,
                    wait: Some(config.rebuy.wait()),
                    taken_off_cents: s.removed_cents,
                }),
            ));
            out.extend(bound);
        }
        TableOp::SettleIou { seat, player_id, amount_cents, from_pocket, lender } => {
            let (seat, amount) = (*seat, *amount_cents);
            let s = seated_as(table, seat, player_id)?;
            crate::money::check_positive("amount_cents", amount)?;
            if lender.is_none() && amount > s.iou_cents {
                return Err(Rejection::new(crate::iou::IOU_OUTSTANDING, "more than the IOUs written at this seat")
                    .with("amount_cents", amount)
                    .with("iou_cents", s.iou_cents));
            }
            let iou = Account::Iou { player_id: player_id.clone() };
            let mut postings = Vec::with_capacity(2);
            if *from_pocket {
                let player = player_of(player_id)?;
                if player.pocket_cents < amount {
                    return Err(Rejection::new(POCKET_INSUFFICIENT, "not that many chips in the pocket")
                        .with("amount_cents", amount)
                        .with("pocket_cents", player.pocket_cents));
                }
                match lender {
                    Some(lender) => postings = crate::iou::settle_loan(table, table_id, seat, lender, amount, Account::Pocket { player_id: player_id.clone() })?,
                    None => crate::accounts::transfer(&mut postings, Account::Pocket { player_id: player_id.clone() }, iou, amount),
                }
            } else {
                // Paying the holder of the IOU with chips from the stack: between hands only.
                crate::ledger::not_live_in_hand(table, seat)?;
                if s.stack_cents < amount {
                    return Err(Rejection::new(crate::betting::BET_EXCEEDS_STACK, "the stack does not cover the amount")
                        .with("amount_cents", amount)
                        .with("stack_cents", s.stack_cents));
                }
                let stack = Account::Seat { table_id: table_id.clone(), seat };
                match lender {
                    Some(lender) => postings = crate::iou::settle_loan(table, table_id, seat, lender, amount, stack)?,
                    None => crate::accounts::transfer(&mut postings, stack, iou, amount),
                }
            }
            out.push((
                tsid,
                Event::Table(TableEvent::IouSettled {
                    seat,
                    player_id: player_id.clone(),
                    amount_cents: amount,
                    from_pocket: *from_pocket,
                    lender: lender.clone(),
                    postings,
                }),
            ));
            if *from_pocket {
                out.push((
                    StreamId::Player(player_id.clone()),
                    Event::Player(PlayerEvent::IouPaidFromPocket { table_id: table_id.clone(), seat, amount_cents: amount }),
                ));
            }
        }
        TableOp::RemoveChips { seat, amount_cents, player_id: Some(player_id) } => {
            let (seat, amount) = (*seat, *amount_cents);
            let s = seated_as(table, seat, player_id)?;
            // R-STAKE-2: within the refreshment allowance of the session, else ratholing.
            let allowance = config.refreshment_allowance_cents;
            // Nothing or less than nothing is bad input, not ratholing (R-UNIT-1).
            crate::money::check_positive("amount_cents", amount)?;
            if s.removed_cents + amount > allowance {
                return Err(rathole(table, seat, amount)
                    .with("refreshment_allowance_cents", allowance)
                    .with("removed_cents", s.removed_cents));
            }
            // R-STAKE-1: between hands only.
            crate::ledger::between_hands(table)?;
            // R-MARK-3: a writer of unpaid IOUs takes nothing off the table before paying them.
            if s.iou_cents > 0 {
                return Err(Rejection::new(crate::iou::IOU_OUTSTANDING, "the IOUs written at this seat are paid before chips leave it")
                    .with("iou_cents", s.iou_cents));
            }
            config.chip_set.check_makes("amount_cents", amount)?;
            if amount > s.stack_cents - s.cash_in_play_cents {
                return Err(Rejection::new(REMOVAL_EXCEEDS_STACK, "the stack does not hold that many chips")
                    .with("amount_cents", amount)
                    .with("stack_cents", s.stack_cents - s.cash_in_play_cents));
            }
            crate::iou::check_stays_on_table(table, amount, 0)?;
            let mut postings = Vec::with_capacity(2);
            crate::accounts::transfer(&mut postings, Account::Seat { table_id: table_id.clone(), seat }, Account::Pocket { player_id: player_id.clone() }, amount);
            out.push((tsid, Event::Table(TableEvent::ChipsRemoved { seat, player_id: player_id.clone(), amount_cents: amount, postings })));
            out.push((
                StreamId::Player(player_id.clone()),
                Event::Player(PlayerEvent::ChipsTakenOffTable { table_id: table_id.clone(), seat, amount_cents: amount }),
            ));
        }
        _ => return Err(Rejection::new(crate::ledger::STREAM_NOT_LOADED, "not a funds command")),
    }
    Ok(())
}

/// R-REBUY-1 with a second seat allowed: leaving this table binds the patron's other seats of
/// the same game for the wait window (each is dealt in again only with at least `amount`),
/// whichever table allowed the second seat (the one left may not allow one itself), by the
/// wait of both tables together, as a return is judged (`rebuy::stricter`: a 30-minute table
/// left had freed a seat at a 120-minute table after 30 minutes).
/// Those tables are the command's dependent streams (`Command::dependent_streams`).
pub(crate) fn bind_other_seats(
    snapshot: &Snapshot,
    config: &TableConfig,
    table_id: &TableId,
    player_id: &PlayerId,
    player: &PlayerState,
    amount: Cents,
    ctx: &CommandContext,
) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let mut out = Vec::new();
    if amount <= 0 {
        return Ok(out);
    }
    let game = config.same_game();
    for held in player.other_seats_in_game(&game, table_id) {
        let other = snapshot.table(&held.table_id).ok_or_else(|| {
            Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream table-{} was not loaded", held.table_id))
        })?;
        if other.seat(held.seat).is_none_or(|s| &s.player_id != player_id) {
            continue;
        }
        let wait = match &other.config {
            Some(held_at) => crate::rebuy::stricter(&config.rebuy, held_at.rebuy.wait_window_ms, held_at.rebuy.tolerance_bps),
            None => config.rebuy.clone(),
        };
        let until_unix_ms = ctx.at_unix_ms.saturating_add(wait.wait_window_ms);
        out.push((
            StreamId::Table(held.table_id.clone()),
            Event::Table(TableEvent::SeatBound {
                seat: held.seat,
                player_id: player_id.clone(),
                left_table_id: table_id.clone(),
                amount_cents: crate::rebuy::required_amount_cents(amount, &wait),
                until_unix_ms,
            }),
        ));
    }
    Ok(out)
}

pub(crate) fn seated_as<'a>(table: &'a TableState, seat: Seat, player_id: &PlayerId) -> Result<&'a crate::table::SeatState, Rejection> {
    let s = crate::ledger::occupied(table, seat)?;
    if &s.player_id != player_id {
        return Err(Rejection::new(WRONG_PLAYER, format!("seat {seat} is held by another player")).with("seat", seat as Cents));
    }
    Ok(s)
}

/// R-STAKE-5: convert the cash in play after the hand: cash to the drop, chips from the tray.
pub fn decide_convert_cash(table: &TableState, seat: Seat) -> Result<TableEvent, Rejection> {
    let (table_id, _) = crate::ledger::open_table(table)?;
    let s = crate::ledger::occupied(table, seat)?;
    crate::ledger::not_live_in_hand(table, seat)?;
    let amount = s.cash_in_play_cents;
    if amount <= 0 {
        return Err(Rejection::new(NO_CASH_IN_PLAY, "no cash in play at this seat").with("seat", seat as Cents));
    }
    let chips = crate::inventory::tray_payout(table, amount)?;
    let mut postings = Vec::with_capacity(chips.len() + 1);
    postings.push(Posting::new(Account::Drop { table_id: table_id.clone() }, amount));
    for c in &chips {
        postings.push(Posting::new(Account::Tray { table_id: table_id.clone(), denomination_cents: c.denomination_cents }, -c.value_cents()));
    }
    Ok(TableEvent::CashInPlayConverted { seat, amount_cents: amount, chips, postings })
}
