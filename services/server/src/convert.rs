//! The one conversion between the wire (`chipledger_proto::v1`) and the rules core
//! (`chipledger_rules`). Wire messages mirror `TableOp`, `CageOp` and `PlayerOp` one to one, so
//! each mapping is a field copy plus validation of what the wire cannot type: ids (1..=64 of
//! `[A-Za-z0-9_.-]`), seats (1..=10), enums left UNSPECIFIED, required oneofs. Such errors are
//! collected per field into one INVALID_ARGUMENT (`google.rpc.BadRequest`). Amount rules (positive,
//! multiples of the minimum chip, limits) are rules, judged by the core (R-UNIT-1, R-UNIT-2).

use chipledger_proto::v1 as pb;
use chipledger_rules as rules;
use chipledger_rules::{
    Action, CageCommand, CageId, CageOp, ChipCount, Command, FundsSource, MarkerDelivery, PlayerCommand,
    PlayerId, PlayerOp, PostKind, Role, Seat, Signers, TableCommand, TableId, TableOp,
};


use crate::status::FieldErrors;

/// Longest free text accepted (reason notes, purposes, signer and approver ids).
pub const MAX_TEXT_LEN: usize = 500;
/// Longest command id (the store's bound).
pub const MAX_COMMAND_ID_LEN: usize = 128;
/// Times an import may name (`import_occurred_at_unix_ms`): 1970 to 2100.
pub const MIN_IMPORT_UNIX_MS: i64 = 0;
pub const MAX_IMPORT_UNIX_MS: i64 = 4_102_444_800_000;

// ---------------------------------------------------------------- field helpers

fn id<T>(
    errors: &mut FieldErrors,
    field: &str,
    value: &str,
    parse: impl FnOnce(String) -> Result<T, rules::Rejection>,
) -> Option<T> {
    if value.is_empty() {
        errors.add(field, "required");
        return None;
    }
    match parse(value.to_string()) {
        Ok(id) => Some(id),
        Err(_) => {
            errors.add(field, "1 to 64 characters of A-Z a-z 0-9 _ . -");
            None
        }
    }
}

fn table_id(errors: &mut FieldErrors, field: &str, value: &str) -> Option<TableId> {
    id(errors, field, value, TableId::new)
}

fn player_id(errors: &mut FieldErrors, field: &str, value: &str) -> Option<PlayerId> {
    id(errors, field, value, PlayerId::new)
}

fn cage_id(errors: &mut FieldErrors, field: &str, value: &str) -> Option<CageId> {
    id(errors, field, value, CageId::new)
}

fn seat(errors: &mut FieldErrors, field: &str, value: u32) -> Option<Seat> {
    if value == 0 || value as usize > rules::MAX_SEATS {
        errors.add(field, format!("seat must be 1..={}", rules::MAX_SEATS));
        return None;
    }
    Some(value as Seat)
}

fn seats(errors: &mut FieldErrors, field: &str, values: &[u32]) -> Option<Vec<Seat>> {
    if values.len() > rules::MAX_SEATS {
        errors.add(field, format!("at most {} seats", rules::MAX_SEATS));
        return None;
    }
    let mut out = Vec::with_capacity(values.len());
    for (index, value) in values.iter().enumerate() {
        out.push(seat(errors, &format!("{field}[{index}]"), *value)?);
    }
    Some(out)
}

fn text(errors: &mut FieldErrors, field: &str, value: &str, required: bool) -> Option<String> {
    if required && value.trim().is_empty() {
        errors.add(field, "required");
        return None;
    }
    if value.len() > MAX_TEXT_LEN {
        errors.add(field, format!("at most {MAX_TEXT_LEN} bytes"));
        return None;
    }
    if let Some(bad) = value.chars().find(|c| !is_text_char(*c)) {
        errors.add(field, format!("contains the character U+{:04X}: no control or bidirectional-override characters", u32::from(bad)));
        return None;
    }
    Some(value.to_string())
}

/// Characters free text may hold: no C0/C1 controls (NUL among them: PostgreSQL text cannot
/// hold it) except tab and newline, and no bidirectional controls (which make a record display
/// as something other than what it says).
pub fn is_text_char(c: char) -> bool {
    let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}');
    (!c.is_control() || c == '\t' || c == '\n') && !bidi
}

fn optional_text(errors: &mut FieldErrors, field: &str, value: Option<&String>) -> Option<Option<String>> {
    match value {
        None => Some(None),
        Some(value) => text(errors, field, value, true).map(Some),
    }
}

fn chips(errors: &mut FieldErrors, field: &str, values: &[pb::ChipCount]) -> Option<Vec<ChipCount>> {
    if values.len() > rules::money::MAX_DENOMINATIONS {
        errors.add(field, format!("at most {} entries", rules::money::MAX_DENOMINATIONS));
        return None;
    }
    Some(
        values
            .iter()
            .map(|chip| ChipCount { denomination_cents: chip.denomination_cents, count: chip.count })
            .collect(),
    )
}

pub fn chips_to_wire(values: &[ChipCount]) -> Vec<pb::ChipCount> {
    values
        .iter()
        .map(|chip| pb::ChipCount { denomination_cents: chip.denomination_cents, count: chip.count })
        .collect()
}

fn funds_source(errors: &mut FieldErrors, field: &str, value: i32) -> Option<FundsSource> {
    match pb::FundsSource::try_from(value) {
        Ok(pb::FundsSource::Cash) => Some(FundsSource::Cash),
        Ok(pb::FundsSource::PocketChips) => Some(FundsSource::PocketChips),
        _ => {
            errors.add(field, "FUNDS_SOURCE_CASH or FUNDS_SOURCE_POCKET_CHIPS");
            None
        }
    }
}

/// Both directions of a wire enum that mirrors a rules enum one to one, side by side.
macro_rules! enum_pairs {
    ($from:ident, $to:ident, $wire:ty, $domain:ty, { $($w:ident <=> $d:path),* $(,)? }) => {
        fn $from(value: i32) -> Option<$domain> {
            match <$wire>::try_from(value) {
                $(Ok(<$wire>::$w) => Some($d),)*
                _ => None,
            }
        }
        pub fn $to(value: $domain) -> $wire {
            match value {
                $($d => <$wire>::$w,)*
            }
        }
    };
}

enum_pairs!(post_kind_from_wire, post_kind_to_wire, pb::PostKind, PostKind, {
    Ante <=> PostKind::Ante,
    ButtonAnte <=> PostKind::ButtonAnte,
    SmallBlind <=> PostKind::SmallBlind,
    BigBlind <=> PostKind::BigBlind,
    ThirdBlind <=> PostKind::ThirdBlind,
    Straddle <=> PostKind::Straddle,
    BringIn <=> PostKind::BringIn,
    Kill <=> PostKind::Kill,
    NewPlayer <=> PostKind::NewPlayer,
    MissedBigBlind <=> PostKind::MissedBigBlind,
    MissedSmallBlindDead <=> PostKind::MissedSmallBlindDead,
    BigBlindAnte <=> PostKind::BigBlindAnte,
    Sleeper <=> PostKind::Sleeper,
});

enum_pairs!(game_from_wire, game_to_wire, pb::Game, rules::config::Game, {
    Holdem <=> rules::config::Game::Holdem,
    ShortDeckHoldem <=> rules::config::Game::ShortDeckHoldem,
    Omaha <=> rules::config::Game::Omaha,
    OmahaHiLo <=> rules::config::Game::OmahaHiLo,
    SevenCardStud <=> rules::config::Game::SevenCardStud,
    SevenCardStudHiLo <=> rules::config::Game::SevenCardStudHiLo,
    Razz <=> rules::config::Game::Razz,
    DeuceToSevenTripleDraw <=> rules::config::Game::DeuceToSevenTripleDraw,
    DeuceToSevenSingleDraw <=> rules::config::Game::DeuceToSevenSingleDraw,
    Badugi <=> rules::config::Game::Badugi,
});

enum_pairs!(straddle_raise_from_wire, straddle_raise_to_wire, pb::StraddleRaise, rules::config::StraddleRaise, {
    FullStraddle <=> rules::config::StraddleRaise::FullStraddle,
    DifferenceOverBigBlind <=> rules::config::StraddleRaise::DifferenceOverBigBlind,
});

enum_pairs!(odd_chip_from_wire, odd_chip_to_wire, pb::OddChipRule, rules::config::OddChipRule, {
    ClockwiseFromButton <=> rules::config::OddChipRule::ClockwiseFromButton,
    AsRanked <=> rules::config::OddChipRule::AsRanked,
});

fn post_kind(errors: &mut FieldErrors, field: &str, value: i32) -> Option<PostKind> {
    let kind = post_kind_from_wire(value);
    if kind.is_none() {
        errors.add(field, "a POST_KIND_* value is required");
    }
    kind
}

/// An enum field whose UNSPECIFIED (0) reads as the rules default.
fn defaulted<T: Default>(errors: &mut FieldErrors, field: &str, value: i32, from: fn(i32) -> Option<T>) -> Option<T> {
    if value == 0 {
        return Some(T::default());
    }
    let parsed = from(value);
    if parsed.is_none() {
        errors.add(field, "unknown value");
    }
    parsed
}

fn card(errors: &mut FieldErrors, field: &str, value: &str) -> Option<rules::cards::Card> {
    match value.parse() {
        Ok(card) => Some(card),
        Err(_) => {
            errors.add(field, "a card: rank 23456789TJQKA and suit cdhs, e.g. Ah");
            None
        }
    }
}

fn action(errors: &mut FieldErrors, kind: i32, to_cents: i64) -> Option<Action> {
    let action = match pb::ActionKind::try_from(kind) {
        Ok(pb::ActionKind::Fold) => Action::Fold,
        Ok(pb::ActionKind::Check) => Action::Check,
        Ok(pb::ActionKind::Call) => Action::Call,
        Ok(pb::ActionKind::Bet) => Action::Bet { to_cents },
        Ok(pb::ActionKind::Raise) => Action::Raise { to_cents },
        Ok(pb::ActionKind::Complete) => Action::Complete,
        Ok(pb::ActionKind::AllIn) => Action::AllIn,
        Ok(pb::ActionKind::Unspecified) | Err(_) => {
            errors.add("kind", "an ACTION_KIND_* value is required");
            return None;
        }
    };
    Some(action)
}

pub fn action_kind_to_wire(kind: rules::ActionKind) -> pb::ActionKind {
    match kind {
        rules::ActionKind::Fold => pb::ActionKind::Fold,
        rules::ActionKind::Check => pb::ActionKind::Check,
        rules::ActionKind::Call => pb::ActionKind::Call,
        rules::ActionKind::Bet => pb::ActionKind::Bet,
        rules::ActionKind::Raise => pb::ActionKind::Raise,
        rules::ActionKind::Complete => pb::ActionKind::Complete,
    }
}

pub fn role_to_wire(role: Role) -> pb::Role {
    match role {
        Role::Dealer => pb::Role::Dealer,
        Role::FloorSupervisor => pb::Role::FloorSupervisor,
        Role::Cage => pb::Role::Cage,
        Role::Auditor => pb::Role::Auditor,
        Role::Admin => pb::Role::Admin,
        Role::System => pb::Role::System,
    }
}

fn signers(errors: &mut FieldErrors, first: &str, second: &str) -> Option<Signers> {
    let first = text(errors, "signer_1", first, true)?;
    let second = text(errors, "signer_2", second, true)?;
    Some(Signers { first, second })
}

// ---------------------------------------------------------------- queries

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
            })
        })
        .collect();
    pb::TableView {
        table_id: table_id.to_string(),
        open: table.config.is_some(),
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

// ---------------------------------------------------------------- table configuration

/// The configuration named by a request: a full one, or a preset of RULES.md defaults.
fn configuration(
    errors: &mut FieldErrors,
    config: Option<&pb::TableConfig>,
    preset: Option<&pb::TablePreset>,
) -> Option<rules::TableConfig> {
    match (config, preset) {
        (Some(config), None) => table_config_from_wire(errors, config),
        (None, Some(preset)) => table_preset(errors, preset),
        _ => {
            errors.add("configuration", "give either config or preset");
            None
        }
    }
}

fn table_preset(errors: &mut FieldErrors, preset: &pb::TablePreset) -> Option<rules::TableConfig> {
    let (small, big) = (preset.small_cents, preset.big_cents);
    if small <= 0 || big < small {
        errors.add("preset", "needs 0 < small_cents <= big_cents");
        return None;
    }
    let config = match pb::GamePreset::try_from(preset.game) {
        Ok(pb::GamePreset::NoLimitHoldem) => rules::TableConfig::no_limit_holdem(small, big),
        Ok(pb::GamePreset::PotLimitHoldem) => rules::TableConfig::pot_limit_holdem(small, big),
        Ok(pb::GamePreset::PotLimitOmaha) => rules::TableConfig::pot_limit_omaha(small, big),
        Ok(pb::GamePreset::HalfPotLimitHoldem) => rules::TableConfig::half_pot_limit_holdem(small, big),
        Ok(pb::GamePreset::FixedLimitHoldem) => rules::TableConfig::fixed_limit_holdem(small, big, 3),
        Ok(pb::GamePreset::ShortDeckHoldem) => rules::TableConfig::short_deck_holdem(small, big),
        Ok(pb::GamePreset::DeuceToSevenSingleDraw) => rules::TableConfig::deuce_to_seven_single_draw(small, big),
        Ok(pb::GamePreset::OmahaHiLo) => rules::TableConfig::omaha_hi_lo(small, big),
        Ok(pb::GamePreset::DeuceToSevenTripleDraw) => rules::TableConfig::deuce_to_seven_triple_draw(small, big),
        Ok(pb::GamePreset::Badugi) => rules::TableConfig::badugi(small, big),
        Ok(stud @ (pb::GamePreset::SevenCardStud | pb::GamePreset::SevenCardStudHiLo | pb::GamePreset::Razz)) => {
            let (ante, bring_in) = (preset.ante_cents, preset.bring_in_cents);
            if ante < 0 || bring_in <= 0 || bring_in > small {
                errors.add("preset", "stud needs 0 <= ante_cents and 0 < bring_in_cents <= small_cents");
                return None;
            }
            match stud {
                pb::GamePreset::SevenCardStud => rules::TableConfig::seven_card_stud(ante, bring_in, small, big),
                pb::GamePreset::SevenCardStudHiLo => rules::TableConfig::seven_card_stud_hi_lo(ante, bring_in, small, big),
                _ => rules::TableConfig::razz(ante, bring_in, small, big),
            }
        }
        Ok(pb::GamePreset::Unspecified) | Err(_) => {
            errors.add("preset.game", "a GAME_PRESET_* value is required");
            return None;
        }
    };
    Some(config)
}

fn small_u8(errors: &mut FieldErrors, field: &str, value: u32) -> Option<u8> {
    match u8::try_from(value) {
        Ok(value) => Some(value),
        Err(_) => {
            errors.add(field, "too large");
            None
        }
    }
}

pub fn table_config_from_wire(errors: &mut FieldErrors, wire: &pb::TableConfig) -> Option<rules::TableConfig> {
    use pb::betting_structure::Kind as Betting;
    use pb::fee_policy::Kind as Fee;
    let chip_set = match &wire.chip_set {
        Some(set) => rules::ChipSet {
            denominations_cents: set.denominations_cents.clone(),
            min_playable_chip_cents: set.min_playable_chip_cents,
        },
        None => {
            errors.add("config.chip_set", "required");
            return None;
        }
    };
    let betting = match wire.betting.as_ref().and_then(|betting| betting.kind.as_ref()) {
        Some(Betting::NoLimit(_)) => rules::BettingStructure::NoLimit,
        Some(Betting::PotLimit(_)) => rules::BettingStructure::PotLimit,
        Some(Betting::HalfPotLimit(_)) => rules::BettingStructure::HalfPotLimit,
        Some(Betting::FixedLimit(fixed)) => rules::BettingStructure::FixedLimit {
            small_bet_cents: fixed.small_bet_cents,
            big_bet_cents: fixed.big_bet_cents,
            max_raises: small_u8(errors, "config.betting.fixed_limit.max_raises", fixed.max_raises)?,
            heads_up_uncapped: fixed.heads_up_uncapped,
        },
        Some(Betting::SpreadLimit(spread)) => rules::BettingStructure::SpreadLimit {
            min_bet_cents: spread.min_bet_cents,
            max_bet_cents: spread.max_bet_cents,
            last_round_max_bet_cents: spread.last_round_max_bet_cents,
            max_raises: small_u8(errors, "config.betting.spread_limit.max_raises", spread.max_raises)?,
        },
        Some(Betting::CapLimit(cap)) => {
            rules::BettingStructure::CapLimit { pot_limit: cap.pot_limit, cap_cents: cap.cap_cents }
        }
        None => {
            errors.add("config.betting", "required");
            return None;
        }
    };
    let incomplete_raise_rule = match pb::IncompleteRaiseRule::try_from(wire.incomplete_raise_rule) {
        Ok(pb::IncompleteRaiseRule::FullBet) => rules::IncompleteRaiseRule::FullBet,
        Ok(pb::IncompleteRaiseRule::HalfBet) => rules::IncompleteRaiseRule::HalfBet,
        _ => {
            errors.add("config.incomplete_raise_rule", "required");
            return None;
        }
    };
    let straddle = match pb::StraddlePolicy::try_from(wire.straddle) {
        Ok(pb::StraddlePolicy::None) => rules::config::StraddlePolicy::None,
        Ok(pb::StraddlePolicy::UnderTheGun) => rules::config::StraddlePolicy::UnderTheGun,
        Ok(pb::StraddlePolicy::UnderTheGunOrButton) => rules::config::StraddlePolicy::UnderTheGunOrButton,
        _ => {
            errors.add("config.straddle", "required");
            return None;
        }
    };
    let kill = match pb::KillPolicy::try_from(wire.kill) {
        Ok(pb::KillPolicy::Unspecified) => None,
        Ok(pb::KillPolicy::Full) => Some(rules::KillPolicy::Full),
        Ok(pb::KillPolicy::Half) => Some(rules::KillPolicy::Half),
        Err(_) => {
            errors.add("config.kill", "unknown value");
            return None;
        }
    };
    let button_policy = match pb::ButtonPolicy::try_from(wire.button_policy) {
        Ok(pb::ButtonPolicy::Simplified) => rules::config::ButtonPolicy::Simplified,
        Ok(pb::ButtonPolicy::Moving) => rules::config::ButtonPolicy::Moving,
        Ok(pb::ButtonPolicy::Dead) => rules::config::ButtonPolicy::Dead,
        _ => {
            errors.add("config.button_policy", "required");
            return None;
        }
    };
    let Some(buy_in) = &wire.buy_in else {
        errors.add("config.buy_in", "required");
        return None;
    };
    let Some(rebuy) = &wire.rebuy else {
        errors.add("config.rebuy", "required");
        return None;
    };
    let fee = match wire.fee.as_ref().and_then(|fee| fee.kind.as_ref()) {
        Some(Fee::NoFee(_)) => rules::FeePolicy::NoFee,
        Some(Fee::Rake(rake)) => rules::FeePolicy::Rake {
            percent_bps: rake.percent_bps,
            increment_cents: rake.increment_cents,
            cap_cents: rake.cap_cents,
            no_flop_no_drop: rake.no_flop_no_drop,
            min_pot_cents: rake.min_pot_cents,
        },
        Some(Fee::TimeCollection(time)) => {
            rules::FeePolicy::TimeCollection { fee_cents: time.fee_cents, interval_minutes: time.interval_minutes }
        }
        Some(Fee::ReportedRake(reported)) => rules::FeePolicy::Reported { cap_cents: reported.cap_cents },
        None => {
            errors.add("config.fee", "required");
            return None;
        }
    };
    let game = defaulted(errors, "config.game", wire.game, game_from_wire);
    let straddle_raise = defaulted(errors, "config.straddle_raise", wire.straddle_raise, straddle_raise_from_wire);
    let odd_chip = defaulted(errors, "config.odd_chip", wire.odd_chip, odd_chip_from_wire);
    if wire.game_key.is_empty() || wire.game_key.len() > 64 || !wire.game_key.chars().all(is_text_char) {
        errors.add("config.game_key", "1 to 64 bytes, no control characters");
        return None;
    }
    if wire.blinds_cents.len() > 3 {
        errors.add("config.blinds_cents", "at most three blinds");
        return None;
    }
    Some(rules::TableConfig {
        // The core numbers versions itself (open: 1, change: previous + 1).
        version: wire.version,
        game_key: wire.game_key.clone(),
        chip_set,
        betting,
        incomplete_raise_rule,
        betting_rounds: small_u8(errors, "config.betting_rounds", wire.betting_rounds)?,
        big_bet_from_round: small_u8(errors, "config.big_bet_from_round", wire.big_bet_from_round)?,
        blinds_cents: wire.blinds_cents.clone(),
        ante_cents: wire.ante_cents,
        button_ante: wire.button_ante,
        min_bet_cents: wire.min_bet_cents,
        bring_in_cents: wire.bring_in_cents,
        straddle,
        kill,
        button_policy,
        stakes: match &wire.open_stakes {
            Some(open) => rules::StakesMode::OpenStakes { iou_auto_accept_below_cents: open.iou_auto_accept_below_cents },
            None => rules::StakesMode::TableStakes,
        },
        buy_in: rules::config::BuyInLimits {
            min_cents: buy_in.min_cents,
            max_cents: buy_in.max_cents,
            short_buy_min_cents: buy_in.short_buy_min_cents,
            supervisor_threshold_cents: buy_in.supervisor_threshold_cents,
        },
        rebuy: rules::config::RebuyPolicy {
            wait_window_ms: rebuy.wait_window_ms,
            tolerance_bps: rebuy.tolerance_bps,
            allow_second_seat: rebuy.allow_second_seat,
        },
        fee,
        jackpot_drop: wire
            .jackpot_drop
            .as_ref()
            .map(|drop| rules::config::JackpotDrop { amount_cents: drop.amount_cents, min_pot_cents: drop.min_pot_cents }),
        kitty: wire.kitty.as_ref().map(|kitty| rules::config::KittyPolicy {
            min_pot_cents: kitty.min_pot_cents,
            leftover: match pb::KittyLeftover::try_from(kitty.leftover) {
                Ok(pb::KittyLeftover::ToDealers) => rules::config::KittyLeftover::ToDealers,
                Ok(pb::KittyLeftover::ToHouse) => rules::config::KittyLeftover::ToHouse,
                Ok(pb::KittyLeftover::SplitAmongSeated | pb::KittyLeftover::Unspecified) => {
                    rules::config::KittyLeftover::SplitAmongSeated
                }
                Err(_) => {
                    errors.add("config.kitty.leftover", "unknown value");
                    rules::config::KittyLeftover::SplitAmongSeated
                }
            },
        }),
        tip_cap_cents: wire.tip_cap_cents,
        cash_in_play_allowed: wire.cash_in_play_allowed,
        hi_lo: wire.hi_lo,
        max_seats: small_u8(errors, "config.max_seats", wire.max_seats)?,
        pot_limit_assumed_call: wire.pot_limit_assumed_call,
        game: game?,
        big_blind_ante: wire.big_blind_ante,
        antes_to_main_pot: wire.antes_to_main_pot,
        straddle_raise: straddle_raise?,
        sleeper_allowed: wire.sleeper_allowed,
        odd_chip: odd_chip?,
        button_blind: wire.button_blind,
        first_blind_on_button: wire.first_blind_on_button,
        max_restraddles: match wire.max_restraddles {
            Some(max) => small_u8(errors, "config.max_restraddles", max)?,
            None => rules::TableConfig::seeds_max_restraddles(),
        },
    })
}

pub fn table_config_to_wire(config: &rules::TableConfig) -> pb::TableConfig {
    use pb::betting_structure::Kind as Betting;
    use pb::fee_policy::Kind as Fee;
    let betting = match &config.betting {
        rules::BettingStructure::NoLimit => Betting::NoLimit(pb::NoLimit {}),
        rules::BettingStructure::PotLimit => Betting::PotLimit(pb::PotLimit {}),
        rules::BettingStructure::HalfPotLimit => Betting::HalfPotLimit(pb::HalfPotLimit {}),
        rules::BettingStructure::FixedLimit { small_bet_cents, big_bet_cents, max_raises, heads_up_uncapped } => {
            Betting::FixedLimit(pb::FixedLimit {
                small_bet_cents: *small_bet_cents,
                big_bet_cents: *big_bet_cents,
                max_raises: u32::from(*max_raises),
                heads_up_uncapped: *heads_up_uncapped,
            })
        }
        rules::BettingStructure::SpreadLimit { min_bet_cents, max_bet_cents, last_round_max_bet_cents, max_raises } => {
            Betting::SpreadLimit(pb::SpreadLimit {
                min_bet_cents: *min_bet_cents,
                max_bet_cents: *max_bet_cents,
                last_round_max_bet_cents: *last_round_max_bet_cents,
                max_raises: u32::from(*max_raises),
            })
        }
        rules::BettingStructure::CapLimit { pot_limit, cap_cents } => {
            Betting::CapLimit(pb::CapLimit { pot_limit: *pot_limit, cap_cents: *cap_cents })
        }
    };
    let fee = match &config.fee {
        rules::FeePolicy::NoFee => Fee::NoFee(pb::NoFee {}),
        rules::FeePolicy::Rake { percent_bps, increment_cents, cap_cents, no_flop_no_drop, min_pot_cents } => {
            Fee::Rake(pb::Rake {
                percent_bps: *percent_bps,
                increment_cents: *increment_cents,
                cap_cents: *cap_cents,
                no_flop_no_drop: *no_flop_no_drop,
                min_pot_cents: *min_pot_cents,
            })
        }
        rules::FeePolicy::TimeCollection { fee_cents, interval_minutes } => {
            Fee::TimeCollection(pb::TimeCollection { fee_cents: *fee_cents, interval_minutes: *interval_minutes })
        }
        rules::FeePolicy::Reported { cap_cents } => Fee::ReportedRake(pb::ReportedRake { cap_cents: *cap_cents }),
    };
    pb::TableConfig {
        version: config.version,
        game_key: config.game_key.clone(),
        chip_set: Some(pb::ChipSet {
            denominations_cents: config.chip_set.denominations_cents.clone(),
            min_playable_chip_cents: config.chip_set.min_playable_chip_cents,
        }),
        betting: Some(pb::BettingStructure { kind: Some(betting) }),
        incomplete_raise_rule: match config.incomplete_raise_rule {
            rules::IncompleteRaiseRule::FullBet => pb::IncompleteRaiseRule::FullBet,
            rules::IncompleteRaiseRule::HalfBet => pb::IncompleteRaiseRule::HalfBet,
        } as i32,
        betting_rounds: u32::from(config.betting_rounds),
        big_bet_from_round: u32::from(config.big_bet_from_round),
        blinds_cents: config.blinds_cents.clone(),
        ante_cents: config.ante_cents,
        button_ante: config.button_ante,
        min_bet_cents: config.min_bet_cents,
        bring_in_cents: config.bring_in_cents,
        straddle: match config.straddle {
            rules::config::StraddlePolicy::None => pb::StraddlePolicy::None,
            rules::config::StraddlePolicy::UnderTheGun => pb::StraddlePolicy::UnderTheGun,
            rules::config::StraddlePolicy::UnderTheGunOrButton => pb::StraddlePolicy::UnderTheGunOrButton,
        } as i32,
        kill: match config.kill {
            None => pb::KillPolicy::Unspecified,
            Some(rules::KillPolicy::Full) => pb::KillPolicy::Full,
            Some(rules::KillPolicy::Half) => pb::KillPolicy::Half,
        } as i32,
        button_policy: match config.button_policy {
            rules::config::ButtonPolicy::Simplified => pb::ButtonPolicy::Simplified,
            rules::config::ButtonPolicy::Moving => pb::ButtonPolicy::Moving,
            rules::config::ButtonPolicy::Dead => pb::ButtonPolicy::Dead,
        } as i32,
        open_stakes: match &config.stakes {
            rules::StakesMode::TableStakes => None,
            rules::StakesMode::OpenStakes { iou_auto_accept_below_cents } => {
                Some(pb::OpenStakes { iou_auto_accept_below_cents: *iou_auto_accept_below_cents })
            }
        },
        buy_in: Some(pb::BuyInLimits {
            min_cents: config.buy_in.min_cents,
            max_cents: config.buy_in.max_cents,
            short_buy_min_cents: config.buy_in.short_buy_min_cents,
            supervisor_threshold_cents: config.buy_in.supervisor_threshold_cents,
        }),
        rebuy: Some(pb::RebuyPolicy {
            wait_window_ms: config.rebuy.wait_window_ms,
            tolerance_bps: config.rebuy.tolerance_bps,
            allow_second_seat: config.rebuy.allow_second_seat,
        }),
        fee: Some(pb::FeePolicy { kind: Some(fee) }),
        jackpot_drop: config
            .jackpot_drop
            .as_ref()
            .map(|drop| pb::JackpotDrop { amount_cents: drop.amount_cents, min_pot_cents: drop.min_pot_cents }),
        kitty: config.kitty.as_ref().map(|kitty| pb::KittyPolicy {
            min_pot_cents: kitty.min_pot_cents,
            leftover: match kitty.leftover {
                rules::config::KittyLeftover::SplitAmongSeated => pb::KittyLeftover::SplitAmongSeated,
                rules::config::KittyLeftover::ToDealers => pb::KittyLeftover::ToDealers,
                rules::config::KittyLeftover::ToHouse => pb::KittyLeftover::ToHouse,
            } as i32,
        }),
        tip_cap_cents: config.tip_cap_cents,
        cash_in_play_allowed: config.cash_in_play_allowed,
        hi_lo: config.hi_lo,
        max_seats: u32::from(config.max_seats),
        pot_limit_assumed_call: config.pot_limit_assumed_call,
        game: game_to_wire(config.game) as i32,
        big_blind_ante: config.big_blind_ante,
        antes_to_main_pot: config.antes_to_main_pot,
        straddle_raise: straddle_raise_to_wire(config.straddle_raise) as i32,
        sleeper_allowed: config.sleeper_allowed,
        odd_chip: odd_chip_to_wire(config.odd_chip) as i32,
        button_blind: config.button_blind,
        first_blind_on_button: config.first_blind_on_button,
        max_restraddles: Some(u32::from(config.max_restraddles)),
    }
}

// ---------------------------------------------------------------- commands

/// Where and why a command was entered, from its header (R-AUDIT-2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    pub command_id: String,
    /// Empty: the server's default property.
    pub property_id: String,
    pub device: Option<String>,
    pub reason_note: String,
    pub import_actor_id: Option<String>,
    pub import_occurred_at_unix_ms: Option<i64>,
}

/// Validates a command header. `prefix` locates it in the request ("header" or
/// "commands[3].header").
pub fn envelope(errors: &mut FieldErrors, prefix: &str, header: Option<&pb::CommandHeader>) -> Option<Envelope> {
    let Some(header) = header else {
        errors.add(prefix, "required (command_id at least)");
        return None;
    };
    let command_id = header.command_id.trim();
    if command_id.is_empty()
        || command_id.len() > MAX_COMMAND_ID_LEN
        || command_id.contains('/')
        || !command_id.chars().all(|c| is_text_char(c) && c != '\t' && c != '\n')
    {
        errors.add(
            format!("{prefix}.command_id"),
            format!("required, 1 to {MAX_COMMAND_ID_LEN} bytes, no '/' or control characters"),
        );
        return None;
    }
    if header.property_id.len() > 64 {
        errors.add(format!("{prefix}.property_id"), "at most 64 bytes");
        return None;
    }
    if let Some(at) = header.import_occurred_at_unix_ms
        && !(MIN_IMPORT_UNIX_MS..=MAX_IMPORT_UNIX_MS).contains(&at)
    {
        errors.add(
            format!("{prefix}.import_occurred_at_unix_ms"),
            format!("{at} is outside {MIN_IMPORT_UNIX_MS}..={MAX_IMPORT_UNIX_MS} (1970 to 2100, Unix milliseconds)"),
        );
        return None;
    }
    if header.approvals.len() > crate::approval::MAX_APPROVALS_PER_COMMAND {
        errors.add(format!("{prefix}.approvals"), format!("at most {} approval tokens", crate::approval::MAX_APPROVALS_PER_COMMAND));
        return None;
    }
    Some(Envelope {
        command_id: command_id.to_string(),
        property_id: header.property_id.clone(),
        device: optional_text(errors, &format!("{prefix}.device"), header.device.as_ref())?,
        reason_note: text(errors, &format!("{prefix}.reason_note"), &header.reason_note, false)?,
        import_actor_id: optional_text(errors, &format!("{prefix}.import_actor_id"), header.import_actor_id.as_ref())?,
        import_occurred_at_unix_ms: header.import_occurred_at_unix_ms,
    })
}

/// A correction names the event it reverses; the server completes it from the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorrectionRequest {
    pub reverses_event_id: String,
    pub approved_by: String,
    pub reason: String,
}

/// What a wire command becomes: a rules command, or a correction to complete from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // built once per command, moved rarely
pub enum Decidable {
    Command(Command),
    Correction(CorrectionRequest),
}

fn table(table_id: TableId, op: TableOp) -> Option<Decidable> {
    Some(Decidable::Command(Command::Table(TableCommand { table_id, op })))
}

fn cage(cage_id: CageId, op: CageOp) -> Option<Decidable> {
    Some(Decidable::Command(Command::Cage(CageCommand { cage_id, op })))
}

/// A wire command message: its header, its place in the role table, and its domain form.
pub trait WireCommand: prost::Message + Clone + Default + 'static {
    /// The RPC path of this command, the key of the role table ([`crate::access::allowed_roles`]).
    const RPC: &'static str;
    fn header(&self) -> Option<&pb::CommandHeader>;
    fn header_mut(&mut self) -> &mut Option<pb::CommandHeader>;
    /// The domain command; `None` after recording the bad fields in `errors`.
    fn to_domain(&self, errors: &mut FieldErrors) -> Option<Decidable>;
    /// The same message as a batch entry.
    fn into_batch_entry(self) -> pb::command::Command;
    /// The second-person fields (wire name, principal id named), as listed for this RPC in
    /// [`crate::access::APPROVAL_RULES`].
    fn approval_fields(&self) -> Vec<(&'static str, Option<&str>)>;
    fn clear_approval_fields(&mut self);
    /// Names `principal_id` in the second-person field `field`; false for no such field.
    fn set_approval_field(&mut self, field: &str, principal_id: &str) -> bool;

    /// What an approval of this command is bound to: the message with the header's device and
    /// approvals and the second-person fields cleared, under `command_id` and `property_id` (as
    /// the server resolves them). Protobuf encoding of our messages is deterministic (no maps).
    fn approval_bytes(&self, command_id: &str, property_id: &str) -> Vec<u8> {
        let mut message = self.clone();
        message.clear_approval_fields();
        let header = message.header_mut().get_or_insert_with(pb::CommandHeader::default);
        header.command_id = command_id.to_string();
        header.property_id = property_id.to_string();
        header.device = None;
        header.approvals.clear();
        message.encode_to_vec()
    }
}

/// A second-person field of a wire message (`approved_by: string`, `supervisor_id: optional string`).
trait ApprovalField {
    fn named(&self) -> Option<&str>;
    fn clear(&mut self);
    fn set(&mut self, principal_id: &str);
}

impl ApprovalField for String {
    fn named(&self) -> Option<&str> {
        Some(self.as_str()).filter(|name| !name.is_empty())
    }
    fn clear(&mut self) {
        self.clear();
    }
    fn set(&mut self, principal_id: &str) {
        *self = principal_id.to_string();
    }
}

impl ApprovalField for Option<String> {
    fn named(&self) -> Option<&str> {
        self.as_deref().filter(|name| !name.is_empty())
    }
    fn clear(&mut self) {
        *self = None;
    }
    fn set(&mut self, principal_id: &str) {
        *self = Some(principal_id.to_string());
    }
}

macro_rules! wire_command {
    ($message:ident, $service:literal, |$m:ident, $e:ident| $body:expr) => {
        wire_command!($message, $service, [], |$m, $e| $body);
    };
    ($message:ident, $service:literal, [$($approval:ident),*], |$m:ident, $e:ident| $body:expr) => {
        impl WireCommand for pb::$message {
            const RPC: &'static str = concat!("/chipledger.v1.", $service, "/", stringify!($message));
            fn header(&self) -> Option<&pb::CommandHeader> {
                self.header.as_ref()
            }
            fn header_mut(&mut self) -> &mut Option<pb::CommandHeader> {
                &mut self.header
            }
            fn to_domain(&self, $e: &mut FieldErrors) -> Option<Decidable> {
                let $m = self;
                $body
            }
            fn into_batch_entry(self) -> pb::command::Command {
                pb::command::Command::$message(self)
            }
            fn approval_fields(&self) -> Vec<(&'static str, Option<&str>)> {
                vec![$((stringify!($approval), ApprovalField::named(&self.$approval))),*]
            }
            fn clear_approval_fields(&mut self) {
                $(ApprovalField::clear(&mut self.$approval);)*
            }
            #[allow(unused_variables)]
            fn set_approval_field(&mut self, field: &str, principal_id: &str) -> bool {
                $(if field == stringify!($approval) {
                    ApprovalField::set(&mut self.$approval, principal_id);
                    return true;
                })*
                false
            }
        }
    };
}

wire_command!(OpenTable, "TableService", |m, e| {
    use pb::open_table::Configuration;
    let id = table_id(e, "table_id", &m.table_id);
    let config = match &m.configuration {
        Some(Configuration::Config(config)) => configuration(e, Some(config), None),
        Some(Configuration::Preset(preset)) => configuration(e, None, Some(preset)),
        None => configuration(e, None, None),
    };
    table(id?, TableOp::OpenTable { config: config? })
});

wire_command!(ChangeTableConfig, "TableService", |m, e| {
    use pb::change_table_config::Configuration;
    let id = table_id(e, "table_id", &m.table_id);
    let config = match &m.configuration {
        Some(Configuration::Config(config)) => configuration(e, Some(config), None),
        Some(Configuration::Preset(preset)) => configuration(e, None, Some(preset)),
        None => configuration(e, None, None),
    };
    table(id?, TableOp::ChangeConfig { config: config? })
});

wire_command!(CloseShift, "TableService", [signer_1, signer_2], |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let counted_tray = chips(e, "counted_tray", &m.counted_tray);
    let signers = signers(e, &m.signer_1, &m.signer_2);
    table(id?, TableOp::CloseShift { counted_tray: counted_tray?, counted_drop_cents: m.counted_drop_cents, signers: signers? })
});

wire_command!(SeatPlayer, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let player = player_id(e, "player_id", &m.player_id);
    table(id?, TableOp::SeatPlayer { seat: seat?, player_id: player? })
});

wire_command!(MovePlayer, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let from = seat(e, "seat", m.seat);
    let to_table = table_id(e, "to_table_id", &m.to_table_id);
    let to_seat = seat(e, "to_seat", m.to_seat);
    let player = player_id(e, "player_id", &m.player_id);
    table(id?, TableOp::MovePlayer { seat: from?, player_id: player?, to_table_id: to_table?, to_seat: to_seat? })
});

wire_command!(BuyIn, "TableService", [supervisor_id], |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let player = player_id(e, "player_id", &m.player_id);
    let source = funds_source(e, "source", m.source);
    let supervisor_id = optional_text(e, "supervisor_id", m.supervisor_id.as_ref());
    table(
        id?,
        TableOp::BuyIn {
            seat: seat?,
            player_id: player?,
            amount_cents: m.amount_cents,
            source: source?,
            supervisor_id: supervisor_id?,
            short_buy: m.short_buy,
        },
    )
});

wire_command!(TopUp, "TableService", [supervisor_id], |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let player = player_id(e, "player_id", &m.player_id);
    let source = funds_source(e, "source", m.source);
    let supervisor_id = optional_text(e, "supervisor_id", m.supervisor_id.as_ref());
    table(
        id?,
        TableOp::TopUp {
            seat: seat?,
            player_id: player?,
            amount_cents: m.amount_cents,
            source: source?,
            supervisor_id: supervisor_id?,
        },
    )
});

wire_command!(CashInPlay, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let player = player_id(e, "player_id", &m.player_id);
    table(id?, TableOp::PutCashInPlay { seat: seat?, player_id: player?, amount_cents: m.amount_cents })
});

wire_command!(ConvertCashInPlay, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    table(id?, TableOp::ConvertCashInPlay { seat: seat? })
});

wire_command!(CashOut, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let player = player_id(e, "player_id", &m.player_id);
    table(id?, TableOp::CashOut { seat: seat?, player_id: player? })
});

wire_command!(RemoveChips, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    table(id?, TableOp::RemoveChips { seat: seat?, amount_cents: m.amount_cents })
});

wire_command!(ColorChange, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let give = chips(e, "give", &m.give);
    let receive = chips(e, "receive", &m.receive);
    table(id?, TableOp::ColorChange { seat: seat?, give: give?, receive: receive? })
});

wire_command!(Tip, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    table(id?, TableOp::Tip { seat: seat?, amount_cents: m.amount_cents })
});

wire_command!(KittyExpense, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let purpose = text(e, "purpose", &m.purpose, true);
    table(id?, TableOp::PayKittyExpense { amount_cents: m.amount_cents, purpose: purpose?, to_dealer: m.to_dealer })
});

wire_command!(CollectTime, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seats = seats(e, "seats", &m.seats);
    table(id?, TableOp::CollectTime { seats: seats? })
});

wire_command!(Fill, "CageService", [signer_1, signer_2], |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let cage = cage_id(e, "cage_id", &m.cage_id);
    let chips = chips(e, "chips", &m.chips);
    let signers = signers(e, &m.signer_1, &m.signer_2);
    table(id?, TableOp::Fill { cage_id: cage?, slip_no: m.slip_no, chips: chips?, signers: signers? })
});

wire_command!(Credit, "CageService", [signer_1, signer_2], |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let cage = cage_id(e, "cage_id", &m.cage_id);
    let chips = chips(e, "chips", &m.chips);
    let signers = signers(e, &m.signer_1, &m.signer_2);
    table(id?, TableOp::Credit { cage_id: cage?, slip_no: m.slip_no, chips: chips?, signers: signers? })
});

wire_command!(StartHand, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let button = seat(e, "button_seat", m.button_seat);
    let dealt = seats(e, "dealt_seats", &m.dealt_seats);
    table(id?, TableOp::StartHand { hand_no: m.hand_no, button_seat: button?, dealt_seats: dealt? })
});

wire_command!(Post, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let kind = post_kind(e, "kind", m.kind);
    table(id?, TableOp::Post { seat: seat?, kind: kind?, amount_cents: m.amount_cents })
});

wire_command!(Act, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let action = action(e, m.kind, m.to_cents);
    table(id?, TableOp::Act { seat: seat?, action: action? })
});

wire_command!(SitOut, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    table(id?, TableOp::SitOut { seat: seat? })
});

wire_command!(SitIn, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    table(id?, TableOp::SitIn { seat: seat? })
});

wire_command!(PutOutChips, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let chips = chips(e, "chips", &m.chips);
    let declared = match m.declared_kind {
        Some(kind) => Some(action(e, kind, m.declared_to_cents)?),
        None => None,
    };
    table(id?, TableOp::PutOutChips { seat: seat?, chips: chips?, declared })
});

wire_command!(BringUpShortBet, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    table(id?, TableOp::BringUpShortBet { seat: seat? })
});

wire_command!(VoidSlip, "CageService", [signer_1, signer_2], |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let cage = cage_id(e, "cage_id", &m.cage_id);
    let kind = match pb::SlipKind::try_from(m.kind) {
        Ok(pb::SlipKind::Fill) => Some(rules::SlipKind::Fill),
        Ok(pb::SlipKind::Credit) => Some(rules::SlipKind::Credit),
        _ => {
            e.add("kind", "required: fill or credit");
            None
        }
    };
    let reason = text(e, "reason", &m.reason, true);
    let signers = signers(e, &m.signer_1, &m.signer_2);
    table(id?, TableOp::VoidSlip { cage_id: cage?, kind: kind?, slip_no: m.slip_no, reason: reason?, signers: signers? })
});

wire_command!(CageColorChange, "CageService", |m, e| {
    let id = cage_id(e, "cage_id", &m.cage_id);
    let player = player_id(e, "player_id", &m.player_id);
    let give = chips(e, "give", &m.give);
    let receive = chips(e, "receive", &m.receive);
    cage(id?, CageOp::ColorChange { player_id: player?, give: give?, receive: receive? })
});

wire_command!(CountCageShift, "CageService", [signer_1, signer_2], |m, e| {
    let id = cage_id(e, "cage_id", &m.cage_id);
    let counted = chips(e, "counted_chips", &m.counted_chips);
    let signers = signers(e, &m.signer_1, &m.signer_2);
    cage(id?, CageOp::CountShift { counted_chips: counted?, counted_cash_cents: m.counted_cash_cents, signers: signers? })
});

wire_command!(SettleIou, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let player = player_id(e, "player_id", &m.player_id);
    table(
        id?,
        TableOp::SettleIou { seat: seat?, player_id: player?, amount_cents: m.amount_cents, from_pocket: m.from_pocket },
    )
});

wire_command!(CloseGame, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    table(id?, TableOp::CloseGame)
});

wire_command!(PayJackpot, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let promotion = text(e, "promotion", &m.promotion, true);
    table(id?, TableOp::PayJackpot { seat: seat?, amount_cents: m.amount_cents, promotion: promotion? })
});

wire_command!(NextRound, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let first = match m.first_to_act_seat {
        Some(value) => Some(seat(e, "first_to_act_seat", value)?),
        None => None,
    };
    table(id?, TableOp::NextRound { first_to_act_seat: first })
});

wire_command!(Showdown, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let groups = |e: &mut FieldErrors, field: &str, groups: &[pb::SeatGroup]| -> Option<Vec<Vec<Seat>>> {
        if groups.len() > rules::MAX_SEATS {
            e.add(field, format!("at most {} groups", rules::MAX_SEATS));
            return None;
        }
        groups
            .iter()
            .enumerate()
            .map(|(index, group)| seats(e, &format!("{field}[{index}].seats"), &group.seats))
            .collect()
    };
    let high = groups(e, "high", &m.high);
    let low = if m.has_low { Some(groups(e, "low", &m.low)) } else { None };
    let low = match low {
        Some(low) => Some(low?),
        None => None,
    };
    table(id?, TableOp::Showdown { high: high?, low, rake_cents: m.rake_cents })
});

wire_command!(DealUpCards, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    if m.cards.len() > rules::MAX_SEATS {
        e.add("cards", format!("at most {} cards", rules::MAX_SEATS));
        return None;
    }
    let cards: Option<Vec<rules::hand::UpCard>> = m
        .cards
        .iter()
        .enumerate()
        .map(|(index, up)| {
            let seat = seat(e, &format!("cards[{index}].seat"), up.seat);
            let card = card(e, &format!("cards[{index}].card"), &up.card);
            Some(rules::hand::UpCard { seat: seat?, card: card? })
        })
        .collect();
    table(id?, TableOp::DealUpCards { cards: cards? })
});

wire_command!(AwardPots, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    if m.awards.len() > rules::MAX_SEATS {
        e.add("awards", format!("at most {} awards", rules::MAX_SEATS));
        return None;
    }
    let awards: Option<Vec<rules::hand::SeatAward>> = m
        .awards
        .iter()
        .enumerate()
        .map(|(index, award)| {
            let seat = seat(e, &format!("awards[{index}].seat"), award.seat)?;
            Some(rules::hand::SeatAward { seat, amount_cents: award.amount_cents })
        })
        .collect();
    table(id?, TableOp::AwardPots { awards: awards?, rake_cents: m.rake_cents })
});

wire_command!(EndHand, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    table(id?, TableOp::EndHand)
});

wire_command!(WriteIou, "TableService", |m, e| {
    let id = table_id(e, "table_id", &m.table_id);
    let seat = seat(e, "seat", m.seat);
    let accepted_by = seats(e, "accepted_by", &m.accepted_by);
    let lender = m.lender_player_id.as_ref().map(|lender| player_id(e, "lender_player_id", lender));
    let lender = lender.map(|lender| lender.ok_or(())).transpose().ok()?;
    table(
        id?,
        TableOp::WriteIou {
            seat: seat?,
            amount_cents: m.amount_cents,
            lender,
            accepted_by: accepted_by?,
            to_raise: m.to_raise,
        },
    )
});

wire_command!(OpenCage, "CageService", |m, e| {
    let id = cage_id(e, "cage_id", &m.cage_id);
    let chips = chips(e, "chips", &m.chips);
    if m.denominations_cents.len() > rules::money::MAX_DENOMINATIONS {
        e.add("denominations_cents", format!("at most {}", rules::money::MAX_DENOMINATIONS));
        return None;
    }
    cage(
        id?,
        CageOp::OpenCage {
            denominations_cents: m.denominations_cents.clone(),
            chips: chips?,
            cash_cents: m.cash_cents,
        },
    )
});

wire_command!(SellChips, "CageService", |m, e| {
    let id = cage_id(e, "cage_id", &m.cage_id);
    let player = player_id(e, "player_id", &m.player_id);
    let chips = chips(e, "chips", &m.chips);
    cage(id?, CageOp::SellChips { player_id: player?, chips: chips? })
});

wire_command!(RedeemChips, "CageService", |m, e| {
    let id = cage_id(e, "cage_id", &m.cage_id);
    let player = player_id(e, "player_id", &m.player_id);
    let chips = chips(e, "chips", &m.chips);
    cage(id?, CageOp::RedeemChips { player_id: player?, chips: chips? })
});

wire_command!(CloseGamingDay, "CageService", |m, e| {
    let id = cage_id(e, "cage_id", &m.cage_id);
    cage(id?, CageOp::CloseGamingDay)
});

wire_command!(SetCreditLine, "CageService", [approved_by], |m, e| {
    let player = player_id(e, "player_id", &m.player_id);
    let approved_by = text(e, "approved_by", &m.approved_by, true);
    Some(Decidable::Command(Command::Player(PlayerCommand {
        player_id: player?,
        op: PlayerOp::SetCreditLine { line_cents: m.line_cents, approved_by: approved_by? },
    })))
});

wire_command!(IssueMarker, "CageService", [approved_by], |m, e| {
    use pb::issue_marker::Delivery;
    let id = cage_id(e, "cage_id", &m.cage_id);
    let player = player_id(e, "player_id", &m.player_id);
    let chips = chips(e, "chips", &m.chips);
    let approved_by = text(e, "approved_by", &m.approved_by, true);
    let delivery = match &m.delivery {
        Some(Delivery::ToPocket(true)) => Some(MarkerDelivery::Pocket),
        Some(Delivery::ToSeat(to_seat)) => {
            let to_table = table_id(e, "to_seat.table_id", &to_seat.table_id);
            let to = seat(e, "to_seat.seat", to_seat.seat);
            match (to_table, to) {
                (Some(table_id), Some(seat)) => Some(MarkerDelivery::Seat { table_id, seat }),
                _ => None,
            }
        }
        Some(Delivery::ToPocket(false)) | None => {
            e.add("delivery", "to_pocket: true or to_seat");
            None
        }
    };
    cage(
        id?,
        CageOp::IssueMarker {
            player_id: player?,
            marker_no: m.marker_no,
            chips: chips?,
            approved_by: approved_by?,
            delivery: delivery?,
        },
    )
});

wire_command!(RedeemMarker, "CageService", |m, e| {
    let id = cage_id(e, "cage_id", &m.cage_id);
    let player = player_id(e, "player_id", &m.player_id);
    cage(id?, CageOp::RedeemMarker { player_id: player?, marker_no: m.marker_no, amount_cents: m.amount_cents })
});

wire_command!(WriteOffMarker, "CageService", [approved_by], |m, e| {
    let id = cage_id(e, "cage_id", &m.cage_id);
    let player = player_id(e, "player_id", &m.player_id);
    let approved_by = text(e, "approved_by", &m.approved_by, true);
    cage(id?, CageOp::WriteOffMarker { player_id: player?, marker_no: m.marker_no, approved_by: approved_by? })
});

impl WireCommand for pb::Correction {
    const RPC: &'static str = "/chipledger.v1.LedgerService/Correct";
    fn header(&self) -> Option<&pb::CommandHeader> {
        self.header.as_ref()
    }
    fn header_mut(&mut self) -> &mut Option<pb::CommandHeader> {
        &mut self.header
    }
    fn approval_fields(&self) -> Vec<(&'static str, Option<&str>)> {
        vec![("approved_by", ApprovalField::named(&self.approved_by))]
    }
    fn clear_approval_fields(&mut self) {
        self.approved_by.clear();
    }
    fn set_approval_field(&mut self, field: &str, principal_id: &str) -> bool {
        if field == "approved_by" {
            self.approved_by = principal_id.to_string();
            return true;
        }
        false
    }
    fn to_domain(&self, e: &mut FieldErrors) -> Option<Decidable> {
        let reverses_event_id = text(e, "reverses_event_id", &self.reverses_event_id, true);
        let approved_by = text(e, "approved_by", &self.approved_by, true);
        let reason = text(e, "reason", &self.reason, true);
        Some(Decidable::Correction(CorrectionRequest {
            reverses_event_id: reverses_event_id?,
            approved_by: approved_by?,
            reason: reason?,
        }))
    }
    fn into_batch_entry(self) -> pb::command::Command {
        pb::command::Command::Correction(self)
    }
}

/// Runs `$body` with `$m` bound to the message of whichever variant `$entry` is (the one list
/// of the `Command` oneof's variants).
macro_rules! with_message {
    ($entry:expr, |$m:ident| $body:expr) => {
        command_variants!(with_message, @variants $entry, $m, $body,)
    };
    (@variants $entry:expr, $m:ident, $body:expr, $($variant:ident),*) => {
        match $entry {
            $(pb::command::Command::$variant($m) => $body,)*
        }
    };
}

/// Calls `$callback!($($prefix)* <every variant of the Command oneof>)`: the list written once.
macro_rules! command_variants {
    ($callback:ident, $($prefix:tt)*) => {
        $callback!($($prefix)*
            OpenTable, ChangeTableConfig, CloseShift, SeatPlayer, MovePlayer, BuyIn, TopUp, CashInPlay,
            ConvertCashInPlay, CashOut, RemoveChips, ColorChange, Tip, KittyExpense, CollectTime, Fill,
            Credit, StartHand, Post, Act, NextRound, Showdown, EndHand, WriteIou, OpenCage, SellChips,
            RedeemChips, CloseGamingDay, SetCreditLine, IssueMarker, RedeemMarker, WriteOffMarker,
            Correction, SitOut, SitIn, PutOutChips, BringUpShortBet, VoidSlip, CageColorChange, CountCageShift,
            SettleIou, CloseGame, PayJackpot, DealUpCards, AwardPots)
    };
}

/// One empty message of every command (tests walk every command with it).
#[cfg(test)]
pub fn every_command() -> Vec<pb::command::Command> {
    macro_rules! defaults {
        ($($variant:ident),*) => { vec![$(pb::command::Command::$variant(Default::default())),*] };
    }
    command_variants!(defaults,)
}

/// The header, role-table key and domain form of one batch entry.
pub fn batch_entry<'a>(
    entry: &'a pb::command::Command,
    errors: &mut FieldErrors,
) -> (Option<&'a pb::CommandHeader>, &'static str, Option<Decidable>) {
    with_message!(entry, |m| (m.header(), rpc_of(m), m.to_domain(errors)))
}

fn rpc_of<T: WireCommand>(_: &T) -> &'static str {
    T::RPC
}

/// The command id in the header of one command of the oneof (empty without a header).
pub fn command_id_of(entry: &pb::command::Command) -> String {
    with_message!(entry, |m| m.header().map(|header| header.command_id.clone()).unwrap_or_default())
}

/// One command of the oneof, judged and recorded exactly as its own unary RPC: its role-table
/// row first, then [`crate::ledger::Ledger::submit`] (the stream of a dealer's device).
pub async fn submit_entry(
    ledger: &crate::ledger::Ledger,
    principal: &crate::access::Principal,
    entry: pb::command::Command,
) -> Result<pb::CommandResult, tonic::Status> {
    async fn as_its_rpc<T: WireCommand>(
        ledger: &crate::ledger::Ledger,
        principal: &crate::access::Principal,
        message: T,
    ) -> Result<pb::CommandResult, tonic::Status> {
        crate::access::authorize(principal, T::RPC)?;
        ledger.submit(principal, message).await
    }
    with_message!(entry, |m| Box::pin(as_its_rpc(ledger, principal, m)).await)
}

/// One command as a second person sees it: its RPC, header, second-person fields, and the bytes
/// an approval binds (`WireCommand::approval_bytes`).
pub struct ApprovalView<'a> {
    pub rpc: &'static str,
    pub header: Option<&'a pb::CommandHeader>,
    pub fields: Vec<(&'static str, Option<&'a str>)>,
    pub bytes: Vec<u8>,
}

/// Names `principal_id` in the second-person field `field` of a command; false for no such field.
pub fn set_approval_field(entry: &mut pb::command::Command, field: &str, principal_id: &str) -> bool {
    with_message!(entry, |m| m.set_approval_field(field, principal_id))
}

/// The [`ApprovalView`] of a command under `command_id` and `property_id`.
pub fn approval_view<'a>(entry: &'a pb::command::Command, command_id: &str, property_id: &str) -> ApprovalView<'a> {
    with_message!(entry, |m| ApprovalView {
        rpc: rpc_of(m),
        header: m.header(),
        fields: m.approval_fields(),
        bytes: m.approval_bytes(command_id, property_id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(command_id: &str) -> Option<pb::CommandHeader> {
        Some(pb::CommandHeader { command_id: command_id.into(), ..Default::default() })
    }

    #[test]
    fn buy_in_maps_field_by_field() {
        let wire = pb::BuyIn {
            header: header("c1"),
            table_id: "T1".into(),
            seat: 3,
            player_id: "P7".into(),
            amount_cents: 20_000,
            source: pb::FundsSource::Cash as i32,
            supervisor_id: None,
            short_buy: false,
        };
        let mut errors = FieldErrors::new();
        let domain = wire.to_domain(&mut errors);
        assert!(errors.is_empty());
        assert_eq!(
            domain,
            Some(Decidable::Command(Command::Table(TableCommand {
                table_id: TableId::new("T1").unwrap(),
                op: TableOp::BuyIn {
                    seat: 3,
                    player_id: PlayerId::new("P7").unwrap(),
                    amount_cents: 20_000,
                    source: FundsSource::Cash,
                    supervisor_id: None,
                    short_buy: false,
                },
            })))
        );
        assert_eq!(<pb::BuyIn as WireCommand>::RPC, "/chipledger.v1.TableService/BuyIn");
    }

    #[test]
    fn every_bad_field_is_reported_at_once() {
        let wire = pb::BuyIn {
            header: header("c1"),
            table_id: "".into(),
            seat: 11,
            player_id: "bad id!".into(),
            source: pb::FundsSource::Unspecified as i32,
            ..Default::default()
        };
        let mut errors = FieldErrors::new();
        assert_eq!(wire.to_domain(&mut errors), None);
        let status = errors.into_status();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        use tonic_types::StatusExt;
        let fields: Vec<String> = status
            .get_error_details()
            .bad_request()
            .unwrap()
            .field_violations
            .iter()
            .map(|v| v.field.clone())
            .collect();
        assert_eq!(fields, ["table_id", "seat", "player_id", "source"]);
    }

    #[test]
    fn r_bet_5_raise_is_a_raise_to_total() {
        let wire = pb::Act {
            header: header("c2"),
            table_id: "T1".into(),
            seat: 4,
            kind: pb::ActionKind::Raise as i32,
            to_cents: 1_500,
        };
        let mut errors = FieldErrors::new();
        let Some(Decidable::Command(Command::Table(command))) = wire.to_domain(&mut errors) else {
            panic!("expected a table command");
        };
        assert_eq!(command.op, TableOp::Act { seat: 4, action: Action::Raise { to_cents: 1_500 } });
    }

    #[test]
    fn table_config_round_trips_through_the_wire() {
        for config in [
            rules::TableConfig::no_limit_holdem(100, 200),
            rules::TableConfig::pot_limit_omaha(100, 200),
            rules::TableConfig::fixed_limit_holdem(300, 600, 4),
            rules::TableConfig::spread_limit_holdem(100, 200, 100, 500, Some(1_000)),
            rules::TableConfig::cap_limit_holdem(100, 200, 6_000),
            rules::TableConfig::seven_card_stud(25, 50, 200, 400),
            rules::TableConfig::seven_card_stud_hi_lo(25, 50, 200, 400),
            rules::TableConfig::razz(25, 50, 200, 400),
            rules::TableConfig::omaha_hi_lo(200, 400),
            rules::TableConfig::short_deck_holdem(100, 200),
            rules::TableConfig::deuce_to_seven_triple_draw(200, 400),
            rules::TableConfig::deuce_to_seven_single_draw(100, 200),
            rules::TableConfig::badugi(200, 400),
            {
                // Every option added for the games of issue 14, away from its default.
                let mut c = rules::TableConfig::no_limit_holdem(100, 200);
                c.ante_cents = 200;
                c.big_blind_ante = true;
                c.antes_to_main_pot = true;
                c.straddle_raise = rules::config::StraddleRaise::DifferenceOverBigBlind;
                c.sleeper_allowed = true;
                c.odd_chip = rules::config::OddChipRule::AsRanked;
                c.button_blind = true;
                c.fee = rules::FeePolicy::Reported { cap_cents: 500 };
                c
            },
        ] {
            let wire = table_config_to_wire(&config);
            let mut errors = FieldErrors::new();
            let back = table_config_from_wire(&mut errors, &wire);
            assert!(errors.is_empty(), "{:?}", errors.into_status());
            assert_eq!(back.as_ref(), Some(&config));
        }
    }

    #[test]
    fn presets_of_every_game_a_room_spreads() {
        let preset = |game: pb::GamePreset, small_cents, big_cents, ante_cents, bring_in_cents| pb::OpenTable {
            header: header("c4"),
            table_id: "T1".into(),
            configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
                game: game as i32,
                small_cents,
                big_cents,
                ante_cents,
                bring_in_cents,
            })),
        };
        for (wire, expected) in [
            (preset(pb::GamePreset::Razz, 200, 400, 25, 50), rules::TableConfig::razz(25, 50, 200, 400)),
            (preset(pb::GamePreset::SevenCardStudHiLo, 200, 400, 25, 50), rules::TableConfig::seven_card_stud_hi_lo(25, 50, 200, 400)),
            (preset(pb::GamePreset::OmahaHiLo, 200, 400, 0, 0), rules::TableConfig::omaha_hi_lo(200, 400)),
            (preset(pb::GamePreset::Badugi, 200, 400, 0, 0), rules::TableConfig::badugi(200, 400)),
            (preset(pb::GamePreset::DeuceToSevenTripleDraw, 200, 400, 0, 0), rules::TableConfig::deuce_to_seven_triple_draw(200, 400)),
            (preset(pb::GamePreset::DeuceToSevenSingleDraw, 100, 200, 0, 0), rules::TableConfig::deuce_to_seven_single_draw(100, 200)),
            (preset(pb::GamePreset::ShortDeckHoldem, 100, 200, 0, 0), rules::TableConfig::short_deck_holdem(100, 200)),
        ] {
            let mut errors = FieldErrors::new();
            let Some(Decidable::Command(Command::Table(command))) = wire.to_domain(&mut errors) else {
                panic!("expected a table command: {:?}", errors.into_status());
            };
            assert_eq!(command.op, TableOp::OpenTable { config: expected });
        }
        // A stud preset needs its bring-in.
        let mut errors = FieldErrors::new();
        assert!(preset(pb::GamePreset::SevenCardStud, 200, 400, 25, 0).to_domain(&mut errors).is_none());
        assert!(!errors.is_empty());
    }

    #[test]
    fn up_cards_and_awards_come_from_the_wire() {
        let deal = pb::DealUpCards {
            header: header("c5"),
            table_id: "T1".into(),
            cards: vec![pb::UpCard { seat: 1, card: "Ah".into() }, pb::UpCard { seat: 2, card: "Tc".into() }],
        };
        let mut errors = FieldErrors::new();
        let Some(Decidable::Command(Command::Table(command))) = deal.to_domain(&mut errors) else { panic!() };
        let TableOp::DealUpCards { cards } = &command.op else { panic!("{:?}", command.op) };
        assert_eq!(cards.iter().map(|c| (c.seat, c.card.to_string())).collect::<Vec<_>>(), [(1, "Ah".to_string()), (2, "Tc".to_string())]);
        let bad = pb::DealUpCards { cards: vec![pb::UpCard { seat: 1, card: "1h".into() }], ..deal };
        let mut errors = FieldErrors::new();
        assert!(bad.to_domain(&mut errors).is_none(), "a card that is not a card is INVALID_ARGUMENT");
        assert!(!errors.is_empty());
        let award = pb::AwardPots {
            header: header("c6"),
            table_id: "T1".into(),
            awards: vec![pb::SeatAward { seat: 2, amount_cents: 950 }],
            rake_cents: Some(50),
        };
        let mut errors = FieldErrors::new();
        let Some(Decidable::Command(Command::Table(command))) = award.to_domain(&mut errors) else { panic!() };
        assert_eq!(
            command.op,
            TableOp::AwardPots { awards: vec![rules::hand::SeatAward { seat: 2, amount_cents: 950 }], rake_cents: Some(50) }
        );
    }

    #[test]
    fn preset_gives_rules_md_defaults() {
        let wire = pb::OpenTable {
            header: header("c3"),
            table_id: "T1".into(),
            configuration: Some(pb::open_table::Configuration::Preset(pb::TablePreset {
                game: pb::GamePreset::NoLimitHoldem as i32,
                small_cents: 100,
                big_cents: 200,
                ..Default::default()
            })),
        };
        let mut errors = FieldErrors::new();
        let Some(Decidable::Command(Command::Table(command))) = wire.to_domain(&mut errors) else {
            panic!("expected a table command");
        };
        assert_eq!(command.op, TableOp::OpenTable { config: rules::TableConfig::no_limit_holdem(100, 200) });
    }

    #[test]
    fn header_needs_a_command_id() {
        let mut errors = FieldErrors::new();
        assert!(envelope(&mut errors, "header", None).is_none());
        assert!(envelope(&mut errors, "header", header(" ").as_ref()).is_none());
        assert!(envelope(&mut errors, "header", header("a/b").as_ref()).is_none());
        let mut errors = FieldErrors::new();
        let ok = envelope(&mut errors, "header", header("c-1").as_ref()).unwrap();
        assert_eq!(ok.command_id, "c-1");
        assert!(errors.is_empty());
    }

    /// The second-person fields each message reports are exactly the rows of the approval
    /// table for its RPC, and the approval form of a message ignores them (and the device and
    /// approvals), but not anything else.
    #[test]
    fn approval_fields_match_the_approval_table_and_are_left_out_of_the_digest() {
        let commands = every_command();
        assert_eq!(commands.len(), 45, "every variant of the Command oneof");
        let mut covered = 0;
        for entry in &commands {
            let view = approval_view(entry, "c-1", "casino");
            let mut fields: Vec<&str> = view.fields.iter().map(|(field, _)| *field).collect();
            let mut rules: Vec<&str> =
                crate::access::APPROVAL_RULES.iter().filter(|rule| rule.rpc == view.rpc).map(|rule| rule.field).collect();
            fields.sort_unstable();
            rules.sort_unstable();
            assert_eq!(fields, rules, "{}", view.rpc);
            covered += rules.len();
        }
        assert_eq!(covered, crate::access::APPROVAL_RULES.len());

        let fill = |signer_2: &str, device: Option<&str>, count: i64| {
            pb::command::Command::Fill(pb::Fill {
                header: Some(pb::CommandHeader {
                    command_id: "ignored".into(),
                    device: device.map(str::to_string),
                    approvals: vec!["cla1.x.y".into()],
                    ..Default::default()
                }),
                table_id: "T1".into(),
                cage_id: "MAIN".into(),
                slip_no: 7,
                chips: vec![pb::ChipCount { denomination_cents: 500, count }],
                signer_1: "carl".into(),
                signer_2: signer_2.into(),
            })
        };
        let bytes = |entry: &pb::command::Command| approval_view(entry, "fill-7", "casino").bytes;
        assert_eq!(bytes(&fill("fred", Some("cage-3"), 20)), bytes(&fill("", None, 20)));
        assert_ne!(bytes(&fill("fred", None, 20)), bytes(&fill("fred", None, 21)), "the chips are approved");
        assert_ne!(approval_view(&fill("fred", None, 20), "fill-8", "casino").bytes, bytes(&fill("fred", None, 20)));
    }

    #[test]
    fn nul_control_and_bidi_characters_are_refused_in_text_and_ids() {
        for bad in ["nul\0here", "bell\u{7}", "rtl\u{202E}drawkcab", "c\u{85}1"] {
            let wire = pb::KittyExpense { header: header("k1"), table_id: "T1".into(), amount_cents: 100, purpose: bad.into(), to_dealer: false };
            let mut errors = FieldErrors::new();
            assert!(wire.to_domain(&mut errors).is_none(), "{bad:?}");
            let mut errors = FieldErrors::new();
            assert!(envelope(&mut errors, "header", header(bad).as_ref()).is_none(), "{bad:?}");
        }
        let mut errors = FieldErrors::new();
        assert!(text(&mut errors, "reason", "two lines\nand a\ttab", true).is_some());
        let far = Some(pb::CommandHeader { command_id: "c".into(), import_occurred_at_unix_ms: Some(i64::MAX), ..Default::default() });
        assert!(envelope(&mut FieldErrors::new(), "header", far.as_ref()).is_none());
    }

    #[test]
    fn issue_marker_needs_a_delivery() {
        let wire = pb::IssueMarker {
            header: header("m1"),
            cage_id: "MAIN".into(),
            player_id: "P7".into(),
            marker_no: 1,
            chips: vec![pb::ChipCount { denomination_cents: 10_000, count: 5 }],
            approved_by: "boss".into(),
            delivery: None,
        };
        let mut errors = FieldErrors::new();
        assert!(wire.to_domain(&mut errors).is_none());
        assert!(!errors.is_empty());
    }
}
