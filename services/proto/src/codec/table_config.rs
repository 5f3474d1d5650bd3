//! A table's configuration both ways, and the presets a request may name instead (RULES.md
//! defaults). What the wire leaves open (an UNSPECIFIED game, straddle raise or odd-chip rule)
//! reads as the rules default; the rest is required.

use chipledger_rules as rules;

use super::enums::*;
use super::fields::{FieldErrors, is_text_char, small_u8};
use crate::v1 as pb;

/// The configuration named by a request: a full one, or a preset of RULES.md defaults.
pub(super) fn configuration(
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

/// A preset with some of its settings changed, for operators' tools: each setting by the name
/// it is stored under (the `config` of a `TableOpened` event), a dot reaching into a part
/// (`straddle_any_position=true`, `rebuy.wait_window_ms=1800000`, `button_policy=Moving`); each
/// value is JSON, or else text. The result is checked as the service checks a configuration.
pub fn preset_with_settings(preset: &pb::TablePreset, settings: &[(String, String)]) -> Result<pb::TableConfig, String> {
    let mut errors = FieldErrors::new();
    let Some(config) = table_preset(&mut errors, preset) else {
        let problems: Vec<String> = errors.into_violations().into_iter().map(|v| format!("{}: {}", v.field, v.description)).collect();
        return Err(problems.join("; "));
    };
    let mut value = serde_json::to_value(&config).map_err(|error| error.to_string())?;
    for (name, text) in settings {
        let mut slot = &mut value;
        for part in name.split('.') {
            slot = slot
                .get_mut(part)
                .ok_or_else(|| format!("no setting {name:?}: the names are those of a TableOpened event's config"))?;
        }
        *slot = serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.clone()));
    }
    let config: rules::TableConfig = serde_json::from_value(value).map_err(|error| format!("settings: {error}"))?;
    config.validate().map_err(|rejection| format!("{} ({}): {}", rejection.reason.code, rejection.reason.rule, rejection.detail))?;
    Ok(table_config_to_wire(&config))
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
    let Some(incomplete_raise_rule) = incomplete_raise_from_wire(wire.incomplete_raise_rule) else {
        errors.add("config.incomplete_raise_rule", "required");
        return None;
    };
    let Some(straddle) = straddle_policy_from_wire(wire.straddle) else {
        errors.add("config.straddle", "required");
        return None;
    };
    let kill = match pb::KillPolicy::try_from(wire.kill) {
        Ok(pb::KillPolicy::Unspecified) => None,
        Ok(pb::KillPolicy::Full) => Some(rules::KillPolicy::Full),
        Ok(pb::KillPolicy::Half) => Some(rules::KillPolicy::Half),
        Ok(pb::KillPolicy::House) => match u16::try_from(wire.kill_house_percent) {
            Ok(percent) => Some(rules::KillPolicy::HousePercent(percent)),
            Err(_) => {
                errors.add("config.kill_house_percent", "out of range");
                return None;
            }
        },
        Err(_) => {
            errors.add("config.kill", "unknown value");
            return None;
        }
    };
    if wire.kill_house_percent != 0 && !matches!(kill, Some(rules::KillPolicy::HousePercent(_))) {
        errors.add("config.kill_house_percent", "only with KILL_POLICY_HOUSE");
    }
    let Some(button_policy) = button_policy_from_wire(wire.button_policy) else {
        errors.add("config.button_policy", "required");
        return None;
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
        Some(Fee::ReportedRake(reported)) => rules::FeePolicy::Reported {
            cap_cents: reported.cap_cents,
            no_flop_no_drop: reported.no_flop_no_drop.unwrap_or_else(rules::FeePolicy::no_flop_no_drop_by_default),
        },
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
        kill_trigger: match &wire.kill_trigger {
            None => None,
            Some(trigger) => Some(rules::config::KillTrigger {
                pot_at_least_cents: trigger.pot_at_least_cents,
                pots_in_a_row: small_u8(errors, "config.kill_trigger.pots_in_a_row", trigger.pots_in_a_row)?,
            }),
        },
        button_policy,
        stakes: match &wire.open_stakes {
            Some(open) => rules::StakesMode::OpenStakes {
                iou_auto_accept_below_cents: open.iou_auto_accept_below_cents,
                ious_allowed: open.ious_allowed.unwrap_or(rules::StakesMode::ious_allowed_by_default()),
            },
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
            from: match pb::KittyFrom::try_from(kitty.from) {
                Ok(pb::KittyFrom::EachPot | pb::KittyFrom::Unspecified) => rules::config::KittyFrom::EachPot,
                Ok(pb::KittyFrom::EachWinner) => rules::config::KittyFrom::EachWinner,
                Ok(pb::KittyFrom::MainPot) => rules::config::KittyFrom::MainPot,
                Err(_) => {
                    errors.add("config.kitty.from", "unknown value");
                    rules::config::KittyFrom::EachPot
                }
            },
        }),
        tip_cap_cents: wire.tip_cap_cents,
        refreshment_allowance_cents: wire.refreshment_allowance_cents,
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
        missed_blinds_one_per_hand: wire.missed_blinds_one_per_hand,
        missed_button_ante_owed: wire.missed_button_ante_owed,
        newcomer_takes_over_blinds: wire.newcomer_takes_over_blinds,
        big_blind_covers_small_blind: wire.big_blind_covers_small_blind,
        straddle_outside_raise_cap: wire.straddle_outside_raise_cap,
        straddle_any_position: wire.straddle_any_position,
        straddle_action_from_big_blind: wire.straddle_action_from_big_blind,
        straddle_at_least: wire.straddle_at_least,
        mandatory_straddle: wire.mandatory_straddle,
        max_restraddles: match wire.max_restraddles {
            Some(max) => small_u8(errors, "config.max_restraddles", max)?,
            None => rules::TableConfig::seeds_max_restraddles(),
        },
        bring_in_ties_by_position: wire.bring_in_ties_by_position,
        open_pair_big_bet: wire.open_pair_big_bet,
        heads_up_from_round_start: wire.heads_up_from_round_start,
        short_all_ins_add_up: wire.short_all_ins_add_up,
        check_raise_allowed: wire.check_raise_allowed.unwrap_or(rules::TableConfig::check_raise_allowed_by_default()),
        overbet_stands_unchallenged: wire.overbet_stands_unchallenged,
        betting_unit_cents: wire.betting_unit_cents,
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
        rules::FeePolicy::Reported { cap_cents, no_flop_no_drop } => {
            Fee::ReportedRake(pb::ReportedRake { cap_cents: *cap_cents, no_flop_no_drop: Some(*no_flop_no_drop) })
        }
    };
    pb::TableConfig {
        version: config.version,
        game_key: config.game_key.clone(),
        chip_set: Some(pb::ChipSet {
            denominations_cents: config.chip_set.denominations_cents.clone(),
            min_playable_chip_cents: config.chip_set.min_playable_chip_cents,
        }),
        betting: Some(pb::BettingStructure { kind: Some(betting) }),
        incomplete_raise_rule: incomplete_raise_to_wire(config.incomplete_raise_rule) as i32,
        betting_rounds: u32::from(config.betting_rounds),
        big_bet_from_round: u32::from(config.big_bet_from_round),
        blinds_cents: config.blinds_cents.clone(),
        ante_cents: config.ante_cents,
        button_ante: config.button_ante,
        min_bet_cents: config.min_bet_cents,
        bring_in_cents: config.bring_in_cents,
        straddle: straddle_policy_to_wire(config.straddle) as i32,
        kill: match config.kill {
            None => pb::KillPolicy::Unspecified,
            Some(rules::KillPolicy::Full) => pb::KillPolicy::Full,
            Some(rules::KillPolicy::Half) => pb::KillPolicy::Half,
            Some(rules::KillPolicy::HousePercent(_)) => pb::KillPolicy::House,
        } as i32,
        kill_house_percent: match config.kill {
            Some(rules::KillPolicy::HousePercent(percent)) => u32::from(percent),
            _ => 0,
        },
        kill_trigger: config
            .kill_trigger
            .map(|trigger| pb::KillTrigger { pot_at_least_cents: trigger.pot_at_least_cents, pots_in_a_row: u32::from(trigger.pots_in_a_row) }),
        button_policy: button_policy_to_wire(config.button_policy) as i32,
        open_stakes: match &config.stakes {
            rules::StakesMode::TableStakes => None,
            rules::StakesMode::OpenStakes { iou_auto_accept_below_cents, ious_allowed } => Some(pb::OpenStakes {
                iou_auto_accept_below_cents: *iou_auto_accept_below_cents,
                ious_allowed: Some(*ious_allowed),
            }),
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
            from: match kitty.from {
                rules::config::KittyFrom::EachPot => pb::KittyFrom::EachPot,
                rules::config::KittyFrom::EachWinner => pb::KittyFrom::EachWinner,
                rules::config::KittyFrom::MainPot => pb::KittyFrom::MainPot,
            } as i32,
        }),
        tip_cap_cents: config.tip_cap_cents,
        refreshment_allowance_cents: config.refreshment_allowance_cents,
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
        missed_blinds_one_per_hand: config.missed_blinds_one_per_hand,
        missed_button_ante_owed: config.missed_button_ante_owed,
        newcomer_takes_over_blinds: config.newcomer_takes_over_blinds,
        big_blind_covers_small_blind: config.big_blind_covers_small_blind,
        straddle_outside_raise_cap: config.straddle_outside_raise_cap,
        straddle_any_position: config.straddle_any_position,
        straddle_action_from_big_blind: config.straddle_action_from_big_blind,
        straddle_at_least: config.straddle_at_least,
        mandatory_straddle: config.mandatory_straddle,
        max_restraddles: Some(u32::from(config.max_restraddles)),
        bring_in_ties_by_position: config.bring_in_ties_by_position,
        open_pair_big_bet: config.open_pair_big_bet,
        heads_up_from_round_start: config.heads_up_from_round_start,
        short_all_ins_add_up: config.short_all_ins_add_up,
        check_raise_allowed: Some(config.check_raise_allowed),
        overbet_stands_unchallenged: config.overbet_stands_unchallenged,
        betting_unit_cents: config.betting_unit_cents,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
                c.missed_blinds_one_per_hand = true;
                c.newcomer_takes_over_blinds = true;
                c.big_blind_covers_small_blind = true;
                c.straddle_outside_raise_cap = true;
                c.straddle_any_position = true;
                c.straddle_action_from_big_blind = true;
                c.straddle_at_least = true;
                c.mandatory_straddle = true;
                c.fee = rules::FeePolicy::Reported { cap_cents: 500, no_flop_no_drop: false };
                c
            },
            {
                // The seeds' missed button ante (R-POST-1), away from its default.
                let mut c = rules::TableConfig::no_limit_holdem(100, 200);
                c.ante_cents = 100;
                c.button_ante = true;
                c.missed_button_ante_owed = true;
                c
            },
            {
                // The seeds' betting and stud rules (R-POST-5, R-BET-2, R-BET-6, R-MARK-2), away
                // from their defaults.
                let mut c = rules::TableConfig::seven_card_stud(25, 50, 200, 400);
                c.bring_in_ties_by_position = true;
                c.open_pair_big_bet = false;
                c.heads_up_from_round_start = true;
                c.check_raise_allowed = false;
                c
            },
            {
                let mut c = rules::TableConfig::pot_limit_holdem(100, 200);
                c.overbet_stands_unchallenged = true;
                c.betting_unit_cents = Some(200);
                c.short_all_ins_add_up = true;
                c
            },
            {
                let mut c = rules::TableConfig::fixed_limit_holdem_kill(200, 400, rules::KillPolicy::Half);
                c.kill_trigger = Some(rules::config::KillTrigger { pot_at_least_cents: 10_000, pots_in_a_row: 2 });
                c
            },
            {
                // The seeds' house kill (R-POST-6) and kitty from every winner (R-KITTY-1).
                let mut c = rules::TableConfig::fixed_limit_holdem_kill(200, 400, rules::KillPolicy::HousePercent(250));
                c.kitty = Some(rules::config::KittyPolicy {
                    min_pot_cents: 2_000,
                    leftover: rules::config::KittyLeftover::ToHouse,
                    from: rules::config::KittyFrom::EachWinner,
                });
                c
            },
            {
                let mut c = rules::TableConfig::no_limit_holdem(100, 200);
                c.kitty = Some(rules::config::KittyPolicy {
                    min_pot_cents: 0,
                    leftover: rules::config::KittyLeftover::ToDealers,
                    from: rules::config::KittyFrom::MainPot,
                });
                c
            },
            {
                let mut c = rules::TableConfig::no_limit_holdem(100, 200);
                c.stakes = rules::StakesMode::OpenStakes { iou_auto_accept_below_cents: 1_000, ious_allowed: false };
                c
            },
            {
                let mut c = rules::TableConfig::no_limit_holdem(100, 200);
                c.stakes = rules::StakesMode::OpenStakes { iou_auto_accept_below_cents: 1_000, ious_allowed: true };
                c
            },
        ] {
            let wire = table_config_to_wire(&config);
            let mut errors = FieldErrors::new();
            let back = table_config_from_wire(&mut errors, &wire);
            assert!(errors.is_empty(), "{:?}", errors.into_status());
            assert_eq!(back.as_ref(), Some(&config));
        }
        // An option the wire leaves out reads as its default: check-raise allowed (R-BET-2).
        let mut wire = table_config_to_wire(&rules::TableConfig::deuce_to_seven_triple_draw(200, 400));
        wire.check_raise_allowed = None;
        let mut errors = FieldErrors::new();
        assert!(table_config_from_wire(&mut errors, &wire).is_some_and(|c| c.check_raise_allowed));
        // A kitty without `from` takes from every pot (R-KITTY-1); a house percentage needs the
        // house kill (R-POST-6).
        let mut kitty = table_config_to_wire(&rules::TableConfig::no_limit_holdem(100, 200));
        kitty.kitty = Some(pb::KittyPolicy { min_pot_cents: 0, leftover: 0, from: 0 });
        let from = table_config_from_wire(&mut errors, &kitty).and_then(|c| c.kitty).map(|k| k.from);
        assert_eq!(from, Some(rules::config::KittyFrom::EachPot));
        kitty.kill_house_percent = 250;
        let mut refused = FieldErrors::new();
        table_config_from_wire(&mut refused, &kitty);
        assert!(!refused.is_empty());
        // Open stakes without `ious_allowed` take IOUs (R-MARK-3).
        wire.open_stakes = Some(pb::OpenStakes { iou_auto_accept_below_cents: 1_000, ious_allowed: None });
        let stakes = table_config_from_wire(&mut errors, &wire).map(|c| c.stakes);
        assert_eq!(stakes, Some(rules::StakesMode::OpenStakes { iou_auto_accept_below_cents: 1_000, ious_allowed: true }));
    }

    #[test]
    fn a_preset_with_settings_changes_only_those_and_refuses_unknown_names_and_bad_values() {
        let preset = pb::TablePreset { game: pb::GamePreset::NoLimitHoldem as i32, small_cents: 100, big_cents: 200, ..Default::default() };
        let set = |pairs: &[(&str, &str)]| {
            let settings: Vec<(String, String)> = pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
            preset_with_settings(&preset, &settings)
        };
        let wire = set(&[("button_policy", "Moving"), ("refreshment_allowance_cents", "500"), ("rebuy.wait_window_ms", "1800000")]).unwrap();
        let mut errors = FieldErrors::new();
        let config = table_config_from_wire(&mut errors, &wire).unwrap();
        assert_eq!(config.button_policy, rules::config::ButtonPolicy::Moving);
        assert_eq!((config.refreshment_allowance_cents, config.rebuy.wait_window_ms), (500, 1_800_000));
        let plain = rules::TableConfig::no_limit_holdem(100, 200);
        assert_eq!((config.blinds_cents.clone(), config.tip_cap_cents), (plain.blinds_cents.clone(), plain.tip_cap_cents), "the rest is the preset's");
        assert!(set(&[("straddle_anywhere", "true")]).unwrap_err().contains("no setting \"straddle_anywhere\""));
        assert!(set(&[("button_policy", "Sideways")]).unwrap_err().starts_with("settings:"));
        // Checked as the service checks a configuration: a tip cap below zero is refused.
        assert!(set(&[("tip_cap_cents", "-5")]).unwrap_err().contains("INVALID_CONFIG"));
    }
}
