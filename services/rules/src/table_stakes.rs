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
];

/// R-STAKE-2: taking chips off the table while seated is refused; the attempt is audited by
/// the caller (R-AUDIT-3).
pub fn rathole(table: &TableState, seat: Seat, amount_cents: Cents) -> Rejection {
    Rejection::new(RATHOLING_FORBIDDEN, "chips leave a seated stack only by play, tips, kitty, color change or a full cash-out")
        .with("seat", seat as Cents)
        .with("amount_cents", amount_cents)
        .with("stack_cents", table.stack_cents(seat))
}

/// R-CHIP-2: a large buy-in needs a supervisor's id (not the actor's own).
fn check_supervisor(config: &TableConfig, ctx: &CommandContext, amount_cents: Cents, supervisor_id: Option<&String>) -> Result<(), Rejection> {
    if amount_cents >= config.buy_in.supervisor_threshold_cents {
        let ok = supervisor_id.is_some_and(|s| !s.trim().is_empty() && *s != ctx.actor.id);
        if !ok {
            return Err(Rejection::new(SUPERVISOR_REQUIRED, "a buy-in this large needs a supervisor's id")
                .with("amount_cents", amount_cents)
                .with("threshold_cents", config.buy_in.supervisor_threshold_cents));
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
            crate::aml::cash_event(player, &ctx.gaming_day, CashDirection::In, amount_cents, &snapshot.aml)
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

/// BuyIn, TopUp, PutCashInPlay and CashOut: they touch the table and the player streams.
/// The events are appended to `out` once every check passed (a refusal appends nothing).
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
            crate::seating::check_free_for(table, seat, player_id)?;
            if table.seat(seat).is_some_and(|s| s.has_bought_in) {
                return Err(Rejection::new(ALREADY_BOUGHT_IN, "already bought in: top up instead").with("seat", seat as Cents));
            }
            crate::money::check_positive("amount_cents", amount)?;
            let rebuy_min = crate::rebuy::required_min_cents(player, &config.game_key, ctx.at_unix_ms, &config.rebuy);
            crate::rebuy::check(player, &config.game_key, ctx.at_unix_ms, &config.rebuy, amount)?;
            let min = if *short_buy {
                config.buy_in.short_buy_min_cents.ok_or_else(|| {
                    Rejection::new(SHORT_BUY_NOT_AVAILABLE, "this table has no short buy-in")
                })?
            } else {
                config.buy_in.min_cents
            };
            let max = config.buy_in.max_cents.max(rebuy_min.unwrap_or(0));
            if amount < min {
                return Err(Rejection::new(BUY_IN_BELOW_MINIMUM, "below the table's minimum buy-in")
                    .with("buy_in_cents", amount)
                    .with("min_buy_in_cents", min));
            }
            if amount > max {
                return Err(Rejection::new(BUY_IN_ABOVE_MAXIMUM, "above the table's maximum buy-in")
                    .with("buy_in_cents", amount)
                    .with("max_buy_in_cents", max));
            }
            check_supervisor(config, ctx, amount, supervisor_id.as_ref())?;
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
            out.push((psid.clone(), Event::Player(PlayerEvent::JoinedTable { table_id: table_id.clone(), seat, game_key: config.game_key.clone(), amount_cents: amount })));
            out.push((psid, Event::Player(player_event)));
        }
        TableOp::TopUp { seat, player_id, amount_cents, source, supervisor_id } => {
            let (seat, amount) = (*seat, *amount_cents);
            let s = seated_as(table, seat, player_id)?;
            if !s.has_bought_in {
                return Err(Rejection::new(NOT_BOUGHT_IN, "buy in first").with("seat", seat as Cents));
            }
            // R-STAKE-1: nothing is added during a hand unless folded; R-MARK-4: open stakes may.
            if !(open_stakes && *source == FundsSource::Cash) {
                crate::ledger::not_live_in_hand(table, seat)?;
            }
            crate::money::check_positive("amount_cents", amount)?;
            let player = player_of(player_id)?;
            crate::rebuy::check_full_rebuy(s, config.buy_in.min_cents, Some(amount))?;
            if s.stack_cents + amount > config.buy_in.max_cents && !open_stakes {
                return Err(Rejection::new(TOP_UP_ABOVE_MAXIMUM, "a top-up may bring the stack up to the maximum buy-in")
                    .with("stack_cents", s.stack_cents)
                    .with("top_up_cents", amount)
                    .with("max_buy_in_cents", config.buy_in.max_cents));
            }
            check_supervisor(config, ctx, amount, supervisor_id.as_ref())?;
            let Funding { chips, postings, player_event } = fund_seat(table, table_id, seat, player_id, player, snapshot, ctx, *source, amount)?;
            out.push((
                tsid,
                Event::Table(TableEvent::ToppedUp { seat, amount_cents: amount, source: *source, supervisor_id: supervisor_id.clone(), chips, postings }),
            ));
            out.push((StreamId::Player(player_id.clone()), Event::Player(player_event)));
        }
        TableOp::PutCashInPlay { seat, player_id, amount_cents } => {
            let (seat, amount) = (*seat, *amount_cents);
            if !config.cash_in_play_allowed {
                return Err(Rejection::new(CASH_IN_PLAY_NOT_ALLOWED, "this table does not play cash"));
            }
            seated_as(table, seat, player_id)?;
            crate::ledger::not_live_in_hand(table, seat)?;
            crate::money::check_positive("amount_cents", amount)?;
            if !config.chip_set.is_playable(amount) {
                return Err(Rejection::new(crate::money::NOT_MULTIPLE_OF_MIN_CHIP, "cash plays in whole minimum chips")
                    .with("amount_cents", amount));
            }
            let player = player_of(player_id)?;
            let mut postings = Vec::with_capacity(2);
            crate::accounts::transfer(&mut postings, Account::House(HouseAccount::Patrons), Account::Seat { table_id: table_id.clone(), seat }, amount);
            out.push((tsid, Event::Table(TableEvent::CashPutInPlay { seat, amount_cents: amount, postings })));
            let e = crate::aml::cash_event(player, &ctx.gaming_day, CashDirection::In, amount, &snapshot.aml);
            out.push((StreamId::Player(player_id.clone()), Event::Player(e)));
        }
        TableOp::CashOut { seat, player_id } => {
            let seat = *seat;
            let s = seated_as(table, seat, player_id)?;
            crate::ledger::not_live_in_hand(table, seat)?;
            player_of(player_id)?;
            if s.cash_in_play_cents > 0 {
                return Err(Rejection::new(CASH_IN_PLAY_NOT_CONVERTED, "convert the cash in play first")
                    .with("cash_in_play_cents", s.cash_in_play_cents));
            }
            if s.iou_cents > 0 {
                return Err(Rejection::new(crate::iou::IOU_OUTSTANDING, "IOUs in play may not leave the table")
                    .with("iou_cents", s.iou_cents));
            }
            let amount = s.stack_cents;
            let mut postings = Vec::with_capacity(2);
            crate::accounts::transfer(&mut postings, Account::Seat { table_id: table_id.clone(), seat }, Account::Pocket { player_id: player_id.clone() }, amount);
            out.push((tsid, Event::Table(TableEvent::CashedOut { seat, player_id: player_id.clone(), amount_cents: amount, postings })));
            out.push((
                StreamId::Player(player_id.clone()),
                Event::Player(PlayerEvent::LeftTable {
                    table_id: table_id.clone(),
                    seat,
                    game_key: config.game_key.clone(),
                    amount_cents: amount,
                    at_unix_ms: ctx.at_unix_ms,
                }),
            ));
        }
        _ => return Err(Rejection::new(crate::ledger::STREAM_NOT_LOADED, "not a funds command")),
    }
    Ok(())
}

fn seated_as<'a>(table: &'a TableState, seat: Seat, player_id: &PlayerId) -> Result<&'a crate::table::SeatState, Rejection> {
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
