//! PHH (TOML) text to [`HandHistory`]. The TOML document is read with spans so that
//! every error names its line, and numbers are read from their text (see [`crate::amount`]).

use std::path::Path;

use crate::Cents;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::amount::{self, AmountError};
use crate::card::Cards;
use crate::error::{PhhError, one_line};
use crate::history::{
    Action, ActionEntry, HandHistory, MAX_ACTIONS, MAX_PLAYERS, PlayedOn, Player, Shown, Variant,
};

/// Largest PHH file read (a `.phhs` file of many hands included).
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a `.phh` (one hand) or `.phhs` (one hand per top-level table) file.
/// A file that cannot be read or is not TOML gives a single error.
pub fn load_file(path: &Path) -> Vec<Result<HandHistory, PhhError>> {
    let origin = path.display().to_string();
    let read_error = |message: String| vec![Err(PhhError::Read { origin: origin.clone(), message })];
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_FILE_BYTES => {
            return read_error(format!("larger than {MAX_FILE_BYTES} bytes"));
        }
        Ok(_) => {}
        Err(error) => return read_error(one_line(&error.to_string())),
    }
    match std::fs::read_to_string(path) {
        Ok(text) => parse_hands(&text, &origin),
        Err(error) => read_error(one_line(&error.to_string())),
    }
}

/// Parses one hand (the `.phh` form).
pub fn parse_hand(text: &str, origin: &str) -> Result<HandHistory, PhhError> {
    let lines = Lines::new(text);
    let document = parse_document(text, origin, &lines)?;
    Fields { table: document.get_ref(), lines: &lines, origin, table_line: 1 }.hand_history()
}

/// Parses a `.phh` document (top-level `variant`) or a `.phhs` document (every
/// top-level value a table holding one hand, e.g. `[1]`, `[2]`, ...).
pub fn parse_hands(text: &str, origin: &str) -> Vec<Result<HandHistory, PhhError>> {
    let lines = Lines::new(text);
    let document = match parse_document(text, origin, &lines) {
        Ok(document) => document,
        Err(error) => return vec![Err(error)],
    };
    let table = document.get_ref();
    if table.contains_key("variant") {
        return vec![Fields { table, lines: &lines, origin, table_line: 1 }.hand_history()];
    }
    let mut hands = Vec::new();
    for (key, value) in table.iter() {
        let line = lines.line_of(key.span().start);
        let hand_origin = format!("{origin}[{}]", key.get_ref());
        match value.get_ref() {
            DeValue::Table(hand_table) => hands.push(
                Fields { table: hand_table, lines: &lines, origin: &hand_origin, table_line: line }
                    .hand_history(),
            ),
            other => hands.push(Err(PhhError::Field {
                origin: origin.to_owned(),
                line,
                field: key.get_ref().to_string(),
                message: format!(
                    "expected a hand table in a .phhs file, found {} (and no `variant` field)",
                    other.type_str()
                ),
            })),
        }
    }
    if hands.is_empty() {
        hands.push(Err(PhhError::Field {
            origin: origin.to_owned(),
            line: 1,
            field: "variant".to_owned(),
            message: "missing (the file holds no hand)".to_owned(),
        }));
    }
    hands
}

fn parse_document<'i>(
    text: &'i str,
    origin: &str,
    lines: &Lines,
) -> Result<Spanned<DeTable<'i>>, PhhError> {
    DeTable::parse(text).map_err(|error| PhhError::Toml {
        origin: origin.to_owned(),
        line: error.span().map_or(1, |span| lines.line_of(span.start)),
        message: one_line(error.message()),
    })
}

/// Byte offset to 1-based line number.
struct Lines {
    newline_offsets: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        Lines { newline_offsets: text.match_indices('\n').map(|(at, _)| at).collect() }
    }

    fn line_of(&self, offset: usize) -> u32 {
        let line = self.newline_offsets.partition_point(|&at| at < offset) + 1;
        u32::try_from(line).unwrap_or(u32::MAX)
    }
}

/// One hand's table, with what errors need to point at it.
struct Fields<'a, 'i> {
    table: &'a DeTable<'i>,
    lines: &'a Lines,
    origin: &'a str,
    table_line: u32,
}

type Value<'i> = Spanned<DeValue<'i>>;

impl<'a, 'i> Fields<'a, 'i> {
    fn hand_history(&self) -> Result<HandHistory, PhhError> {
        let code = self.string("variant")?.ok_or_else(|| self.missing("variant"))?;
        let variant = Variant::from_code(&code).ok_or_else(|| PhhError::Unsupported {
            origin: self.origin.to_owned(),
            variant: code.clone(),
        })?;
        let starting_stacks_cents = self.stacks("starting_stacks")?.ok_or_else(|| self.missing("starting_stacks"))?;
        let player_count = starting_stacks_cents.len();
        if !(2..=MAX_PLAYERS).contains(&player_count) {
            return Err(self.field_error(
                "starting_stacks",
                format!("{player_count} players; a hand has 2 to {MAX_PLAYERS}"),
            ));
        }
        if let Some(at) = starting_stacks_cents.iter().position(|&stack| stack == Some(0)) {
            return Err(self.field_error("starting_stacks", format!("stack of p{} is zero", at + 1)));
        }
        let per_player = |name: &'static str| -> Result<Option<Vec<Cents>>, PhhError> {
            let amounts = self.amounts(name)?;
            if let Some(amounts) = &amounts
                && amounts.len() != player_count
            {
                return Err(self.field_error(
                    name,
                    format!("{} entries for {player_count} players", amounts.len()),
                ));
            }
            Ok(amounts)
        };
        let antes_cents = per_player("antes")?.ok_or_else(|| self.missing("antes"))?;
        let blinds = per_player("blinds_or_straddles")?;
        let finishing_stacks_cents = self.stacks("finishing_stacks")?;
        if let Some(finishing) = &finishing_stacks_cents
            && finishing.len() != player_count
        {
            return Err(self.field_error("finishing_stacks", format!("{} entries for {player_count} players", finishing.len())));
        }
        let winnings_cents = per_player("winnings")?;
        let rake_cents = self.amount("rake")?;
        let total_pot_amounts_cents = self.amounts("total_pot_amounts")?;
        let seats = self.small_integers("seats", crate::history::MAX_SEAT_NUMBER)?;
        if let Some(seats) = &seats {
            if seats.len() != player_count {
                return Err(self.field_error("seats", format!("{} seats for {player_count} players", seats.len())));
            }
            if seats.iter().enumerate().any(|(i, s)| *s == 0 || seats[..i].contains(s)) {
                return Err(self.field_error("seats", "seat numbers are distinct and count from 1".to_owned()));
            }
        }
        let seat_count = match self.get("seat_count") {
            None => None,
            Some(value) => Some(self.small_integer(value, "seat_count", crate::history::MAX_SEAT_NUMBER)?),
        };
        let bring_in_cents = self.amount("bring_in")?;
        let small_bet_cents = self.amount("small_bet")?;
        let big_bet_cents = self.amount("big_bet")?;
        let min_bet_cents = self.amount("min_bet")?;
        match variant {
            _ if variant.is_stud() => {
                self.require(bring_in_cents, "bring_in")?;
                self.require(small_bet_cents, "small_bet")?;
                self.require(big_bet_cents, "big_bet")?;
                if blinds.as_ref().is_some_and(|blinds| blinds.iter().any(|&b| b != 0)) {
                    return Err(self.field_error(
                        "blinds_or_straddles",
                        "a stud game has a bring-in, never blinds".to_owned(),
                    ));
                }
            }
            _ if variant.is_fixed_limit() => {
                self.require(small_bet_cents, "small_bet")?;
                self.require(big_bet_cents, "big_bet")?;
                self.require(blinds.as_ref(), "blinds_or_straddles")?;
            }
            _ => {
                self.require(min_bet_cents, "min_bet")?;
                self.require(blinds.as_ref(), "blinds_or_straddles")?;
            }
        }
        let players = match self.get("players") {
            None => Vec::new(),
            Some(value) => {
                let names = self.array(value, "players")?;
                if names.len() != player_count {
                    return Err(self.field_error(
                        "players",
                        format!("{} names for {player_count} players", names.len()),
                    ));
                }
                names
                    .iter()
                    .map(|name| {
                        name.get_ref().as_str().map(str::to_owned).ok_or_else(|| {
                            self.error_at(name, "players", "expected a string".to_owned())
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
        };
        let ante_trimming_status = match self.get("ante_trimming_status") {
            None => false,
            Some(value) => value
                .get_ref()
                .as_bool()
                .ok_or_else(|| self.error_at(value, "ante_trimming_status", "expected a boolean".to_owned()))?,
        };
        let hand = self.get("hand").and_then(|value| match value.get_ref() {
            DeValue::String(text) => Some(text.to_string()),
            DeValue::Integer(number) => Some(number.to_string()),
            _ => None,
        });
        Ok(HandHistory {
            origin: self.origin.to_owned(),
            variant,
            antes_cents,
            blinds_or_straddles_cents: blinds.unwrap_or_else(|| vec![0; player_count]),
            bring_in_cents,
            small_bet_cents,
            big_bet_cents,
            min_bet_cents,
            starting_stacks_cents,
            actions: self.actions(player_count)?,
            ante_trimming_status,
            players,
            finishing_stacks_cents,
            winnings_cents,
            rake_cents,
            total_pot_amounts_cents,
            seats,
            seat_count,
            hand,
            currency: self.string("currency")?,
            played_on: self.played_on()?,
        })
    }

    /// `year`, `month`, `day`, `time` (a TOML local time) and `time_zone`: see [`PlayedOn`].
    fn played_on(&self) -> Result<Option<PlayedOn>, PhhError> {
        let Some(year) = self.integer_in("year", 1, 9999)? else { return Ok(None) };
        let month = self.integer_in("month", 1, 12)?.unwrap_or(1);
        let day = self.integer_in("day", 1, 31)?.unwrap_or(1);
        let time = match self.get("time") {
            None => None,
            Some(value) => match value.get_ref() {
                DeValue::Datetime(at) if at.date.is_none() && at.offset.is_none() => {
                    at.time.map(|time| (time.hour, time.minute, time.second.unwrap_or(0)))
                }
                _ => return Err(self.error_at(value, "time", "expected a local time such as 13:05:00".to_owned())),
            },
        };
        // Each fits its type: the bounds above are within u16 and u8.
        let (year, month, day) = (year as u16, month as u8, day as u8);
        Ok(Some(PlayedOn { year, month, day, time, time_zone: self.string("time_zone")? }))
    }

    /// An optional integer field within `min..=max`.
    fn integer_in(&self, name: &str, min: i64, max: i64) -> Result<Option<i64>, PhhError> {
        let Some(value) = self.get(name) else { return Ok(None) };
        integer_of(value)
            .filter(|n| (min..=max).contains(n))
            .map(Some)
            .ok_or_else(|| self.error_at(value, name, format!("expected an integer {min}..={max}")))
    }

    /// `starting_stacks` / `finishing_stacks`: amounts, or `inf` for a stack the annotator did
    /// not know.
    fn stacks(&self, name: &str) -> Result<Option<Vec<Option<Cents>>>, PhhError> {
        let Some(value) = self.get(name) else { return Ok(None) };
        let items = self.array(value, name)?;
        if items.len() > MAX_PLAYERS {
            return Err(self.error_at(value, name, format!("more than {MAX_PLAYERS} entries")));
        }
        items
            .iter()
            .map(|item| match item.get_ref() {
                DeValue::Float(number) if number.as_str().trim_start_matches('+') == "inf" => Ok(None),
                _ => self.amount_of(item, name).map(Some),
            })
            .collect::<Result<_, _>>()
            .map(Some)
    }

    fn small_integers(&self, name: &str, max: u8) -> Result<Option<Vec<u8>>, PhhError> {
        let Some(value) = self.get(name) else { return Ok(None) };
        let items = self.array(value, name)?;
        if items.len() > MAX_PLAYERS {
            return Err(self.error_at(value, name, format!("more than {MAX_PLAYERS} entries")));
        }
        items.iter().map(|item| self.small_integer(item, name, max)).collect::<Result<_, _>>().map(Some)
    }

    fn small_integer(&self, value: &Value<'_>, name: &str, max: u8) -> Result<u8, PhhError> {
        integer_of(value)
            .and_then(|n| u8::try_from(n).ok())
            .filter(|n| *n <= max)
            .ok_or_else(|| self.error_at(value, name, format!("expected an integer 0..={max}")))
    }

    fn get(&self, name: &str) -> Option<&'a Value<'i>> {
        self.table.get(name)
    }

    fn line(&self, value: &Value<'_>) -> u32 {
        self.lines.line_of(value.span().start)
    }

    fn missing(&self, field: &str) -> PhhError {
        PhhError::Field {
            origin: self.origin.to_owned(),
            line: self.table_line,
            field: field.to_owned(),
            message: "missing (required)".to_owned(),
        }
    }

    fn require<T>(&self, value: Option<T>, field: &str) -> Result<(), PhhError> {
        value.map(|_| ()).ok_or_else(|| self.missing(field))
    }

    fn field_error(&self, field: &str, message: String) -> PhhError {
        match self.get(field) {
            Some(value) => self.error_at(value, field, message),
            None => PhhError::Field {
                origin: self.origin.to_owned(),
                line: self.table_line,
                field: field.to_owned(),
                message,
            },
        }
    }

    fn error_at(&self, value: &Value<'_>, field: &str, message: String) -> PhhError {
        PhhError::Field {
            origin: self.origin.to_owned(),
            line: self.line(value),
            field: field.to_owned(),
            message,
        }
    }

    fn string(&self, name: &str) -> Result<Option<String>, PhhError> {
        let Some(value) = self.get(name) else { return Ok(None) };
        match value.get_ref().as_str() {
            Some(text) => Ok(Some(text.to_owned())),
            None => Err(self.error_at(value, name, format!("expected a string, found {}", value.get_ref().type_str()))),
        }
    }

    fn array(&self, value: &'a Value<'i>, name: &str) -> Result<&'a [Value<'i>], PhhError> {
        value.get_ref().as_array().map(|array| &**array).ok_or_else(|| {
            self.error_at(value, name, format!("expected an array, found {}", value.get_ref().type_str()))
        })
    }

    fn amount(&self, name: &str) -> Result<Option<Cents>, PhhError> {
        self.get(name).map(|value| self.amount_of(value, name)).transpose()
    }

    fn amounts(&self, name: &str) -> Result<Option<Vec<Cents>>, PhhError> {
        let Some(value) = self.get(name) else { return Ok(None) };
        let items = self.array(value, name)?;
        if items.len() > MAX_PLAYERS {
            return Err(self.error_at(value, name, format!("more than {MAX_PLAYERS} entries")));
        }
        items.iter().map(|item| self.amount_of(item, name)).collect::<Result<_, _>>().map(Some)
    }

    fn amount_of(&self, value: &Value<'_>, name: &str) -> Result<Cents, PhhError> {
        let converted = match value.get_ref() {
            DeValue::Integer(number) => amount::integer_text_to_cents(number.as_str(), number.radix()),
            DeValue::Float(number) => amount::decimal_text_to_cents(number.as_str()),
            other => {
                return Err(self.error_at(value, name, format!("expected a number, found {}", other.type_str())));
            }
        };
        converted.map_err(|error| self.amount_error(error, self.line(value), name))
    }

    /// Sub-cent amounts and `inf`/`nan` (the spec's "unknown stack") are valid PHH that
    /// cannot be replayed in cents: unsupported. Anything else is a malformed field.
    fn amount_error(&self, error: AmountError, line: u32, field: &str) -> PhhError {
        match error {
            AmountError::TooPrecise(_) | AmountError::NotANumber(_) => PhhError::UnsupportedHand {
                origin: self.origin.to_owned(),
                line,
                reason: format!("field `{field}`: {error}"),
            },
            AmountError::Negative(_) | AmountError::TooLarge(_) => PhhError::Field {
                origin: self.origin.to_owned(),
                line,
                field: field.to_owned(),
                message: error.to_string(),
            },
        }
    }

    fn actions(&self, player_count: usize) -> Result<Vec<ActionEntry>, PhhError> {
        let value = self.get("actions").ok_or_else(|| self.missing("actions"))?;
        let items = self.array(value, "actions")?;
        if items.len() > MAX_ACTIONS {
            return Err(self.error_at(value, "actions", format!("more than {MAX_ACTIONS} actions")));
        }
        let mut entries = Vec::with_capacity(items.len());
        for item in items {
            let line = self.line(item);
            let Some(text) = item.get_ref().as_str() else {
                return Err(self.error_at(item, "actions", format!("expected a string, found {}", item.get_ref().type_str())));
            };
            let (body, commentary) = match text.split_once('#') {
                Some((body, commentary)) => (body, Some(commentary.trim().to_owned())),
                None => (text, None),
            };
            let action_error = |message: String| PhhError::Action {
                origin: self.origin.to_owned(),
                line,
                text: text.to_owned(),
                message,
            };
            match parse_action(body, player_count) {
                Ok(Some(action)) => entries.push(ActionEntry { action, line, commentary }),
                Ok(None) => {} // a no-op: empty or a standalone commentary
                Err(ActionError::Amount(error @ AmountError::TooPrecise(_))) => {
                    return Err(self.amount_error(error, line, "actions"));
                }
                Err(ActionError::Amount(error)) => return Err(action_error(error.to_string())),
                Err(ActionError::Syntax(message)) => return Err(action_error(message)),
            }
        }
        Ok(entries)
    }
}

enum ActionError {
    Syntax(String),
    Amount(AmountError),
}

impl From<String> for ActionError {
    fn from(message: String) -> Self {
        ActionError::Syntax(message)
    }
}

/// One action notation without its commentary: `d dh p1 AhKs`, `p3 cbr 225`, ...
fn parse_action(body: &str, player_count: usize) -> Result<Option<Action>, ActionError> {
    let mut words = [""; 4];
    let mut word_count = 0;
    for word in body.split_whitespace() {
        if word_count == words.len() {
            return Err(format!("unexpected `{word}`").into());
        }
        words[word_count] = word;
        word_count += 1;
    }
    let [actor, verb, first, second] = words;
    match word_count {
        0 => return Ok(None),
        1 => return Err(format!("`{actor}` has no action").into()),
        _ => {}
    }
    let arity = word_count - 2;
    let expect = |wanted: &[usize], what: &str| -> Result<(), ActionError> {
        if wanted.contains(&arity) {
            Ok(())
        } else {
            Err(ActionError::Syntax(format!("`{actor} {verb}` takes {what}")))
        }
    };
    if actor == "d" {
        return match verb {
            "db" => {
                expect(&[1], "the board cards")?;
                Ok(Some(Action::DealBoard { cards: Cards::parse(first)? }))
            }
            "dh" => {
                expect(&[2], "a player and the cards")?;
                let player = parse_player(first, player_count)?;
                Ok(Some(Action::DealHole { player, cards: Cards::parse(second)? }))
            }
            _ => Err(format!("unknown dealer action `{verb}` (expected db or dh)").into()),
        };
    }
    let player = parse_player(actor, player_count)?;
    let action = match verb {
        "pb" => {
            expect(&[0], "no argument")?;
            Action::BringIn { player }
        }
        "f" => {
            expect(&[0], "no argument")?;
            Action::Fold { player }
        }
        "cc" => {
            expect(&[0], "no argument")?;
            Action::CheckOrCall { player }
        }
        "cbr" => {
            expect(&[1], "one amount")?;
            let amount_cents = amount::decimal_text_to_cents(first).map_err(ActionError::Amount)?;
            if amount_cents == 0 {
                return Err(format!("`cbr` amount must be positive, got `{first}`").into());
            }
            Action::CompleteBetOrRaiseTo { player, amount_cents }
        }
        "sd" => {
            expect(&[0, 1], "at most the discarded cards")?;
            let discarded = if arity == 0 { Cards::EMPTY } else { Cards::parse(first)? };
            Action::StandPatOrDiscard { player, discarded }
        }
        "sm" => {
            expect(&[0, 1], "at most the shown cards")?;
            let shown = match (arity, first) {
                (0, _) => Shown::Muck,
                (_, "-") => Shown::DealtCards,
                (_, cards) => Shown::Cards(Cards::parse(cards)?),
            };
            Action::ShowOrMuck { player, shown }
        }
        _ => {
            return Err(
                format!("unknown player action `{verb}` (expected pb, f, cc, cbr, sd or sm)").into()
            );
        }
    };
    Ok(Some(action))
}

fn parse_player(text: &str, player_count: usize) -> Result<Player, String> {
    let number: usize = text
        .strip_prefix('p')
        .and_then(|digits| digits.parse().ok())
        .ok_or_else(|| format!("`{text}` is not a player (p1, p2, ...)"))?;
    if number == 0 || number > player_count {
        return Err(format!("player `{text}` does not exist in a hand of {player_count} players"));
    }
    Ok(Player(u8::try_from(number - 1).map_err(|_| format!("player `{text}` out of range"))?))
}

/// A TOML integer, read from its text in its radix.
fn integer_of(value: &Value<'_>) -> Option<i64> {
    match value.get_ref() {
        DeValue::Integer(number) => i64::from_str_radix(number.as_str(), number.radix()).ok(),
        _ => None,
    }
}
