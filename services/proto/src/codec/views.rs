//! The state the queries answer with, as the API shows it (rules -> wire only: nobody sends a
//! table view in).

use chipledger_rules::{self as rules, TableId};

use super::fields::chips_to_wire;
use super::table_config::table_config_to_wire;
use crate::v1 as pb;

/// The table as the API shows it (R-STAKE-4: every stack answerable from the ledger).
pub fn table_view(table_id: &rules::TableId, table: &rules::TableState, version: i64) -> pb::TableView {
    let seats = table
        .seats
        .iter()
        .enumerate()
        .filter_map(|(index, seat)| {
            let seat_state = seat.as_ref()?;
            let seat_no = (index + 1) as rules::Seat;
            let in_hand = table.hand.as_ref().and_then(|hand| hand.player(seat_no));
            // R-POST-3: absent, by SitOut or by being left out of the hand in play.
            let absent = seat_state.sitting_out || (table.hand.is_some() && in_hand.is_none());
            let status = match in_hand.map(|player| player.status) {
                Some(rules::InHand::Active) => pb::SeatStatus::InHand,
                Some(rules::InHand::Folded) => pb::SeatStatus::Folded,
                Some(rules::InHand::AllIn) => pb::SeatStatus::AllIn,
                None if absent => pb::SeatStatus::SittingOut,
                None => pb::SeatStatus::Seated,
            };
            Some(pb::SeatView {
                seat: u32::from(seat_no),
                player_id: seat_state.player_id.to_string(),
                status: status as i32,
                stack_cents: seat_state.stack_cents,
                cash_in_play_cents: seat_state.cash_in_play_cents,
                committed_this_round_cents: in_hand.map_or(0, |player| player.round_cents),
                missed_blinds: seat_state.missed_big_blind || seat_state.missed_small_blind,
                missed_big_blind: seat_state.missed_big_blind,
                missed_small_blind: seat_state.missed_small_blind,
                missed_button_ante_cents: seat_state.missed_button_ante_cents,
                owes_entry_post: seat_state.owes_entry_post,
                iou_cents: seat_state.iou_cents,
                loans: seat_state
                    .loans
                    .iter()
                    .map(|loan| pb::SeatLoan { lender_player_id: loan.lender.to_string(), amount_cents: loan.amount_cents })
                    .collect(),
            })
        })
        .collect();
    pb::TableView {
        table_id: table_id.to_string(),
        open: table.config.is_some(),
        game_closed: table.game_closed,
        config: table.config.as_ref().map(table_config_to_wire),
        config_version: table.config.as_ref().map_or(0, |config| i64::from(config.version)),
        stream_version: version,
        seats,
        tray: chips_to_wire(&table.tray),
        drop_cents: table.drop_cents,
        rake_cents: table.rake_cents,
        toke_cents: table.toke_cents,
        kitty_cents: table.kitty_cents,
        jackpot_cents: table.jackpot_cents,
        hand_no: table.hand.as_ref().map(|hand| hand.hand_no),
        pot_total_cents: table.pot_cents,
        as_of_position: 0,
    }
}

/// The legal actions of the seat in turn, as the API shows them (`None`: nobody to act).
pub fn legal_actions_to_wire(table_id: &TableId, hand_no: u64, legal: Option<rules::LegalActions>) -> pb::LegalActions {
    let mut reply = pb::LegalActions { table_id: table_id.to_string(), hand_no, ..Default::default() };
    if let Some(legal) = legal {
        reply.seat_to_act = true;
        reply.seat = u32::from(legal.seat);
        reply.stack_cents = legal.stack_cents;
        reply.round_cents = legal.round_cents;
        reply.bet_to_cents = legal.bet_to_cents;
        reply.call_cents = legal.call_cents;
        reply.can_fold = legal.can_fold;
        reply.can_check = legal.can_check;
        reply.can_call = legal.can_call;
        reply.raise = legal.raise.map(|raise| pb::RaiseRange {
            kind: action_kind_to_wire(raise.kind) as i32,
            min_to_cents: raise.min_to_cents,
            max_to_cents: raise.max_to_cents,
        });
        reply.all_in_to_cents = legal.all_in_to_cents;
        reply.all_in_allowed = legal.all_in_allowed;
        reply.min_chip_cents = legal.min_chip_cents;
        reply.bring_in_cents = legal.bring_in_cents;
    }
    reply
}

fn action_kind_to_wire(kind: rules::ActionKind) -> pb::ActionKind {
    match kind {
        rules::ActionKind::Fold => pb::ActionKind::Fold,
        rules::ActionKind::Check => pb::ActionKind::Check,
        rules::ActionKind::Call => pb::ActionKind::Call,
        rules::ActionKind::Bet => pb::ActionKind::Bet,
        rules::ActionKind::Raise => pb::ActionKind::Raise,
        rules::ActionKind::Complete => pb::ActionKind::Complete,
    }
}
