//! Wire enums that mirror a rules enum one to one: one table per enum, read both ways.

use chipledger_rules::config::{ButtonPolicy, Game, OddChipRule, StraddlePolicy, StraddleRaise};
use chipledger_rules::{FundsSource, IncompleteRaiseRule, PostKind};

use crate::v1 as pb;

/// Both directions of a wire enum that mirrors a rules enum one to one, side by side. The wire
/// -> rules direction is `None` for UNSPECIFIED and for values this build does not know.
macro_rules! enum_pairs {
    ($from:ident, $to:ident, $wire:ty, $domain:ty, { $($w:ident <=> $d:path),* $(,)? }) => {
        pub(super) fn $from(value: i32) -> Option<$domain> {
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
    MissedSmallBlind <=> PostKind::MissedSmallBlind,
    BigBlindAnte <=> PostKind::BigBlindAnte,
    Sleeper <=> PostKind::Sleeper,
    MissedButtonAnte <=> PostKind::MissedButtonAnte,
});

enum_pairs!(funds_source_from_wire, funds_source_to_wire, pb::FundsSource, FundsSource, {
    Cash <=> FundsSource::Cash,
    PocketChips <=> FundsSource::PocketChips,
});

enum_pairs!(game_from_wire, game_to_wire, pb::Game, Game, {
    Holdem <=> Game::Holdem,
    ShortDeckHoldem <=> Game::ShortDeckHoldem,
    Omaha <=> Game::Omaha,
    OmahaHiLo <=> Game::OmahaHiLo,
    SevenCardStud <=> Game::SevenCardStud,
    SevenCardStudHiLo <=> Game::SevenCardStudHiLo,
    Razz <=> Game::Razz,
    DeuceToSevenTripleDraw <=> Game::DeuceToSevenTripleDraw,
    DeuceToSevenSingleDraw <=> Game::DeuceToSevenSingleDraw,
    Badugi <=> Game::Badugi,
});

enum_pairs!(straddle_raise_from_wire, straddle_raise_to_wire, pb::StraddleRaise, StraddleRaise, {
    FullStraddle <=> StraddleRaise::FullStraddle,
    DifferenceOverBigBlind <=> StraddleRaise::DifferenceOverBigBlind,
});

enum_pairs!(odd_chip_from_wire, odd_chip_to_wire, pb::OddChipRule, OddChipRule, {
    ClockwiseFromButton <=> OddChipRule::ClockwiseFromButton,
    AsRanked <=> OddChipRule::AsRanked,
});

enum_pairs!(incomplete_raise_from_wire, incomplete_raise_to_wire, pb::IncompleteRaiseRule, IncompleteRaiseRule, {
    FullBet <=> IncompleteRaiseRule::FullBet,
    HalfBet <=> IncompleteRaiseRule::HalfBet,
});

enum_pairs!(straddle_policy_from_wire, straddle_policy_to_wire, pb::StraddlePolicy, StraddlePolicy, {
    None <=> StraddlePolicy::None,
    UnderTheGun <=> StraddlePolicy::UnderTheGun,
    UnderTheGunOrButton <=> StraddlePolicy::UnderTheGunOrButton,
});

enum_pairs!(button_policy_from_wire, button_policy_to_wire, pb::ButtonPolicy, ButtonPolicy, {
    Simplified <=> ButtonPolicy::Simplified,
    Moving <=> ButtonPolicy::Moving,
    Dead <=> ButtonPolicy::Dead,
});
