//! Casino markers (R-MARK-1, R-MARK-2): issued against an approved credit line for at most the
//! available credit, approver different from the issuer, numbered sequentially per cage,
//! redeemed in whole or part, written off only with an independent approver. A marker funds
//! chips to the pocket, or to a stack between hands, and creates a receivable.

use crate::accounts::{Account, HouseAccount, Posting};
use crate::aml::CashDirection;
use crate::cage::{CageEvent, CageState, MarkerDelivery};
use crate::money::{Cents, ChipCount};
use crate::player::{PlayerEvent, PlayerState};
use crate::rejection::{Reason, Rejection};
use crate::streams::{CageId, PlayerId, StreamId};
use crate::table::TableEvent;
use crate::{CommandContext, Event, Snapshot};

pub const CREDIT_LINE_EXCEEDED: Reason = Reason::new("CREDIT_LINE_EXCEEDED", "R-MARK-1");
pub const APPROVER_SAME_AS_ISSUER: Reason = Reason::new("APPROVER_SAME_AS_ISSUER", "R-MARK-1");
pub const MARKER_OUT_OF_SEQUENCE: Reason = Reason::new("MARKER_OUT_OF_SEQUENCE", "R-MARK-1");
pub const MARKER_NOT_FOUND: Reason = Reason::new("MARKER_NOT_FOUND", "R-MARK-1");
pub const MARKER_REDEEM_EXCEEDS: Reason = Reason::new("MARKER_REDEEM_EXCEEDS", "R-MARK-1");
pub const TOO_MANY_OPEN_MARKERS: Reason = Reason::new("TOO_MANY_OPEN_MARKERS", "R-MARK-1");

pub const REASONS: &[Reason] = &[
    CREDIT_LINE_EXCEEDED,
    APPROVER_SAME_AS_ISSUER,
    MARKER_OUT_OF_SEQUENCE,
    MARKER_NOT_FOUND,
    MARKER_REDEEM_EXCEEDS,
    TOO_MANY_OPEN_MARKERS,
];

#[allow(clippy::too_many_arguments)]
pub fn decide_issue(
    snapshot: &Snapshot,
    ctx: &CommandContext,
    cage: &CageState,
    player: &PlayerState,
    player_id: &PlayerId,
    marker_no: u64,
    chips: &[ChipCount],
    approved_by: &str,
    delivery: &MarkerDelivery,
) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let cage_id = cage.cage_id.clone().ok_or_else(|| Rejection::new(crate::cage::CAGE_NOT_OPEN, "the cage is not open"))?;
    if approved_by.trim().is_empty() || approved_by == ctx.actor.id {
        return Err(Rejection::new(APPROVER_SAME_AS_ISSUER, "the approver of a marker differs from its issuer"));
    }
    if marker_no != cage.last_marker_no + 1 {
        return Err(Rejection::new(MARKER_OUT_OF_SEQUENCE, "marker numbers are sequential")
            .with("marker_no", marker_no as Cents)
            .with("expected_marker_no", (cage.last_marker_no + 1) as Cents));
    }
    if player.markers.len() >= crate::player::MAX_OPEN_MARKERS {
        return Err(Rejection::new(TOO_MANY_OPEN_MARKERS, "too many open markers").with("open_markers", player.markers.len() as Cents));
    }
    let amount = crate::cage::check_cage_chips(cage, chips)?;
    if amount > player.available_credit_cents() {
        return Err(Rejection::new(CREDIT_LINE_EXCEEDED, "a marker is at most the available credit")
            .with("amount_cents", amount)
            .with("available_credit_cents", player.available_credit_cents())
            .with("credit_line_cents", player.credit_line_cents));
    }
    crate::cage::cage_has(cage, chips)?;
    let mut postings = Vec::with_capacity(chips.len() + 3);
    crate::accounts::transfer(&mut postings, Account::House(HouseAccount::Patrons), Account::CageMarkers { cage_id: cage_id.clone() }, amount);
    for c in chips {
        postings.push(Posting::new(Account::CageChips { cage_id: cage_id.clone(), denomination_cents: c.denomination_cents }, -c.value_cents()));
    }
    let csid = StreamId::Cage(cage_id.clone());
    let psid = StreamId::Player(player_id.clone());
    let cage_event = |postings| CageEvent::MarkerIssued {
        player_id: player_id.clone(),
        marker_no,
        chips: chips.to_vec(),
        amount_cents: amount,
        issued_by: ctx.actor.id.clone(),
        approved_by: approved_by.to_string(),
        postings,
    };
    let player_event = |to_pocket| PlayerEvent::MarkerIssued {
        cage_id: cage_id.clone(),
        marker_no,
        amount_cents: amount,
        issued_by: ctx.actor.id.clone(),
        to_pocket,
        approved_by: approved_by.to_string(),
    };
    match delivery {
        MarkerDelivery::Pocket => {
            postings.push(Posting::new(Account::Pocket { player_id: player_id.clone() }, amount));
            Ok(vec![(csid, Event::Cage(cage_event(postings))), (psid, Event::Player(player_event(true)))])
        }
        MarkerDelivery::Seat { table_id, seat } => {
            let table = snapshot
                .table(table_id)
                .ok_or_else(|| Rejection::new(crate::ledger::STREAM_NOT_LOADED, format!("stream table-{table_id} was not loaded")))?;
            let (_, config) = crate::ledger::open_table(table)?;
            // Chips to a seat are the table's playable chips (the money pass: 160 quarters from
            // the cage played as a $40 all-in at a $1-minimum table whose chip set has none).
            crate::betting::playable_chips(&config.chip_set, chips)?;
            crate::table_stakes::seated_as(table, *seat, player_id)?;
            // R-MARK-2: no credit during a hand (to the stack between hands, or after folding).
            crate::ledger::not_live_in_hand(table, *seat)?;
            // Marker chips at a seat arrive like any other chips: a buy-in (limits, the re-buy
            // wait, one seat per game) or a top-up (up to the maximum).
            let arrival = crate::table_stakes::Arrival::for_seat(table, *seat);
            let approver = approved_by.to_string();
            crate::table_stakes::check_arrival(table, config, table_id, ctx, *seat, player_id, player, amount, arrival, Some(&approver), false)?;
            let buy_in = matches!(arrival, crate::table_stakes::Arrival::BuyIn { .. });
            postings.push(Posting::new(Account::Seat { table_id: table_id.clone(), seat: *seat }, amount));
            let te = TableEvent::MarkerChipsSeated {
                seat: *seat,
                player_id: player_id.clone(),
                cage_id: cage_id.clone(),
                marker_no,
                amount_cents: amount,
                postings,
                buy_in,
            };
            let mut out = vec![
                (csid, Event::Cage(cage_event(Vec::new()))),
                (psid.clone(), Event::Player(player_event(false))),
                (StreamId::Table(table_id.clone()), Event::Table(te)),
            ];
            if buy_in {
                out.push((psid, Event::Player(crate::table_stakes::joined(table_id, *seat, config, amount))));
            }
            Ok(out)
        }
    }
}

fn find_marker<'a>(player: &'a PlayerState, cage_id: &CageId, marker_no: u64) -> Result<&'a crate::player::Marker, Rejection> {
    player
        .markers
        .iter()
        .find(|m| m.marker_no == marker_no && &m.cage_id == cage_id)
        .ok_or_else(|| Rejection::new(MARKER_NOT_FOUND, "no such open marker").with("marker_no", marker_no as Cents))
}

/// Redeem in whole or part with cash (a cash transaction in, R-AUDIT-4).
pub fn decide_redeem(
    snapshot: &Snapshot,
    ctx: &CommandContext,
    cage_id: &CageId,
    player: &PlayerState,
    player_id: &PlayerId,
    marker_no: u64,
    amount_cents: Cents,
) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let m = find_marker(player, cage_id, marker_no)?;
    crate::money::check_positive("amount_cents", amount_cents)?;
    if amount_cents > m.outstanding_cents {
        return Err(Rejection::new(MARKER_REDEEM_EXCEEDS, "more than the marker's outstanding amount")
            .with("amount_cents", amount_cents)
            .with("outstanding_cents", m.outstanding_cents));
    }
    let mut postings = Vec::with_capacity(2);
    crate::accounts::transfer(&mut postings, Account::CageMarkers { cage_id: cage_id.clone() }, Account::CageCash { cage_id: cage_id.clone() }, amount_cents);
    let psid = StreamId::Player(player_id.clone());
    Ok(vec![
        (StreamId::Cage(cage_id.clone()), Event::Cage(CageEvent::MarkerRedeemed { player_id: player_id.clone(), marker_no, amount_cents, postings })),
        (psid.clone(), Event::Player(PlayerEvent::MarkerRedeemed { cage_id: cage_id.clone(), marker_no, amount_cents })),
        (psid, Event::Player(crate::aml::cash_event(player, &ctx.gaming_day, CashDirection::In, amount_cents, &snapshot.aml)?)),
    ])
}

/// Write off the outstanding amount; the approver is independent of the marker: not the actor,
/// its issuer or the approver of its issue (the credit pass: the two who issued and approved a
/// $4,000 marker, paid out in cash, wrote it off between them).
pub fn decide_write_off(
    ctx: &CommandContext,
    cage_id: &CageId,
    player: &PlayerState,
    player_id: &PlayerId,
    marker_no: u64,
    approved_by: &str,
) -> Result<Vec<(StreamId, Event)>, Rejection> {
    let m = find_marker(player, cage_id, marker_no)?;
    if approved_by.trim().is_empty() || approved_by == ctx.actor.id || approved_by == m.issued_by || approved_by == m.approved_by {
        return Err(Rejection::new(APPROVER_SAME_AS_ISSUER, "a write-off needs an approver independent of the issuer and the actor"));
    }
    let amount = m.outstanding_cents;
    let mut postings = Vec::with_capacity(2);
    crate::accounts::transfer(&mut postings, Account::CageMarkers { cage_id: cage_id.clone() }, Account::House(HouseAccount::BadDebt), amount);
    Ok(vec![
        (
            StreamId::Cage(cage_id.clone()),
            Event::Cage(CageEvent::MarkerWrittenOff { player_id: player_id.clone(), marker_no, amount_cents: amount, approved_by: approved_by.to_string(), postings }),
        ),
        (
            StreamId::Player(player_id.clone()),
            Event::Player(PlayerEvent::MarkerWrittenOff { cage_id: cage_id.clone(), marker_no, amount_cents: amount, approved_by: approved_by.to_string() }),
        ),
    ])
}
