//! How the console shows things: money in the property's currency, times in its zone with the
//! offset, lists as paged tables that also export as CSV, and small SVG charts. The templates,
//! the style sheet and the script are compiled into the binary.

use std::collections::HashMap;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tonic::Status;
use tonic_types::StatusExt;

use crate::config::PropertyConfig;

pub const CSS: &str = include_str!("assets/console.css");
pub const JS: &str = include_str!("assets/console.js");

/// Rows per page of every list.
pub const PAGE_ROWS: usize = 25;

const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("templates/base.html")),
    ("macros.html", include_str!("templates/macros.html")),
    ("signin.html", include_str!("templates/signin.html")),
    ("refused.html", include_str!("templates/refused.html")),
    ("floor.html", include_str!("templates/floor.html")),
    ("floor_tables.html", include_str!("templates/floor_tables.html")),
    ("table.html", include_str!("templates/table.html")),
    ("hand.html", include_str!("templates/hand.html")),
    ("player.html", include_str!("templates/player.html")),
    ("cage.html", include_str!("templates/cage.html")),
    ("compliance.html", include_str!("templates/compliance.html")),
    ("chain.html", include_str!("templates/chain.html")),
    ("recorded.html", include_str!("templates/recorded.html")),
];

/// The templates; `.html` names are auto-escaped (every value a template prints is text).
pub fn templates() -> minijinja::Environment<'static> {
    let mut environment = minijinja::Environment::new();
    for (name, source) in TEMPLATES {
        environment.add_template(name, source).expect("the console's templates parse");
    }
    environment
}

/// The property's money and clock, for one page.
pub struct Units {
    symbol: Option<&'static str>,
    currency: String,
    zone: jiff::tz::TimeZone,
    pub zone_name: String,
}

impl Units {
    pub fn of(property: &PropertyConfig) -> Units {
        let symbol = match property.currency.as_str() {
            "USD" => Some("$"),
            "EUR" => Some("€"),
            "GBP" => Some("£"),
            _ => None,
        };
        Units {
            symbol,
            currency: property.currency.clone(),
            zone: property.gaming_day.zone.clone(),
            zone_name: property.gaming_day.zone_name(),
        }
    }

    /// `$1,234.50` (or `1,234.50 MOP` for a currency without a symbol here).
    pub fn money(&self, cents: i64) -> String {
        let text = chipledger_rules::money::format_cents(cents.abs());
        let sign = if cents < 0 { "-" } else { "" };
        match self.symbol {
            Some(symbol) => format!("{sign}{symbol}{text}"),
            None => format!("{sign}{text} {}", self.currency),
        }
    }

    /// `2026-12-01 08:03:12 -08:00`: the property's wall clock with its offset.
    pub fn time(&self, unix_ms: i64) -> String {
        match jiff::Timestamp::from_millisecond(unix_ms) {
            Ok(at) => at.to_zoned_datetime(self.zone.clone()).strftime("%Y-%m-%d %H:%M:%S %:z").to_string(),
            Err(_) => unix_ms.to_string(),
        }
    }

    /// The hour of the day (0-23) on the property's clock.
    /// The local hour an instant falls in: when it began (Unix milliseconds), its hour on the
    /// clock and the zone's offset then (seconds). The hour a clock change repeats is two
    /// hours, told apart by their offsets.
    pub fn hour_of(&self, unix_ms: i64) -> Option<(i64, i8, i32)> {
        let zoned = jiff::Timestamp::from_millisecond(unix_ms).ok()?.to_zoned_datetime(self.zone.clone());
        let offset_ms = i64::from(zoned.offset().seconds()) * 1_000;
        let local_ms = unix_ms + offset_ms;
        Some((local_ms - local_ms.rem_euclid(3_600_000) - offset_ms, zoned.hour(), zoned.offset().seconds()))
    }

    pub fn currency(&self) -> &str {
        &self.currency
    }
}

/// One cell of a list: text, and where it links.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub text: String,
    pub href: Option<String>,
    /// `num` right-aligns money and counts.
    pub class: Option<&'static str>,
}

pub fn text(text: impl Into<String>) -> Cell {
    Cell { text: text.into(), href: None, class: None }
}

pub fn link(text: impl Into<String>, href: impl Into<String>) -> Cell {
    Cell { text: text.into(), href: Some(href.into()), class: None }
}

pub fn num(text: impl Into<String>) -> Cell {
    Cell { text: text.into(), href: None, class: Some("num") }
}

/// A list as a person reads it: a title, its columns and rows; paged on the page, whole in CSV.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    pub name: &'static str,
    pub title: String,
    pub headers: Vec<&'static str>,
    pub rows: Vec<Vec<Cell>>,
    pub total: usize,
    pub first_row: usize,
    pub previous: Option<String>,
    pub next: Option<String>,
    pub csv: String,
    /// Said when the list is empty.
    pub empty: String,
    /// Said when the read behind the list stopped at its bound with more left: the list is not
    /// the whole (on the page and as the CSV's last line), never silently.
    pub cut: Option<String>,
}

impl Listing {
    pub fn new(name: &'static str, title: impl Into<String>, headers: &[&'static str], rows: Vec<Vec<Cell>>) -> Listing {
        Listing {
            name,
            title: title.into(),
            headers: headers.to_vec(),
            total: rows.len(),
            rows,
            first_row: 1,
            previous: None,
            next: None,
            csv: String::new(),
            empty: "None.".to_string(),
            cut: None,
        }
    }

    pub fn empty_text(mut self, text: impl Into<String>) -> Listing {
        self.empty = text.into();
        self
    }

    /// With `more`, the list says it is not the whole, in `text`.
    pub fn cut_if(mut self, more: bool, text: &str) -> Listing {
        self.cut = more.then(|| text.to_string());
        self
    }

    /// The rows of the page the query asks for (`<name>_page`, from 0), with the links.
    fn paged(mut self, path: &str, query: &HashMap<String, String>) -> Listing {
        let key = format!("{}_page", self.name);
        let pages = self.total.div_ceil(PAGE_ROWS).max(1);
        let page = query.get(&key).and_then(|page| page.parse::<usize>().ok()).unwrap_or(0).min(pages - 1);
        let link_to = |page: usize| {
            let mut query = query.clone();
            query.insert(key.clone(), page.to_string());
            format!("{path}?{}", encode_query(&query))
        };
        self.previous = (page > 0).then(|| link_to(page - 1));
        self.next = (page + 1 < pages).then(|| link_to(page + 1));
        let mut csv_query = query.clone();
        csv_query.retain(|name, _| !name.ends_with("_page"));
        csv_query.insert("csv".to_string(), self.name.to_string());
        self.csv = format!("{path}?{}", encode_query(&csv_query));
        self.first_row = page * PAGE_ROWS + 1;
        self.rows = self.rows.into_iter().skip(page * PAGE_ROWS).take(PAGE_ROWS).collect();
        self
    }

    fn to_csv(&self) -> String {
        let mut out = String::new();
        let line = |fields: Vec<&str>, out: &mut String| {
            let quoted: Vec<String> = fields.iter().map(|field| csv_field(field)).collect();
            out.push_str(&quoted.join(","));
            out.push_str("\r\n");
        };
        line(self.headers.clone(), &mut out);
        for row in &self.rows {
            line(row.iter().map(|cell| cell.text.as_str()).collect(), &mut out);
        }
        if let Some(cut) = &self.cut {
            line(vec![cut.as_str()], &mut out);
        }
        out
    }
}

/// RFC 4180 quoting; a leading `= + - @` is prefixed so a spreadsheet never runs a cell as a
/// formula (names and notes are free text).
fn csv_field(field: &str) -> String {
    let guarded = chipledger_rules::words::spreadsheet_safe(field);
    if guarded.contains([',', '"', '\n', '\r']) { format!("\"{}\"", guarded.replace('"', "\"\"")) } else { guarded.into_owned() }
}

fn encode_query(query: &HashMap<String, String>) -> String {
    let mut pairs: Vec<(&String, &String)> = query.iter().collect();
    pairs.sort();
    pairs.iter().map(|(name, value)| format!("{}={}", percent(name), percent(value))).collect::<Vec<_>>().join("&")
}

pub fn percent(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// The page's lists: the one `?csv=<name>` asks for as a CSV download, or all of them paged.
pub enum Lists {
    Csv(Response),
    Paged(Vec<Listing>),
}

pub fn lists(listings: Vec<Listing>, path: &str, query: &HashMap<String, String>) -> Lists {
    if let Some(wanted) = query.get("csv")
        && let Some(listing) = listings.iter().find(|listing| listing.name == wanted)
    {
        let file = format!("attachment; filename=\"{}.csv\"", listing.name);
        let response = (
            [(header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()), (header::CONTENT_DISPOSITION, file)],
            listing.to_csv(),
        )
            .into_response();
        return Lists::Csv(response);
    }
    Lists::Paged(listings.into_iter().map(|listing| listing.paged(path, query)).collect())
}

/// A bar chart: one group of bars per label, one bar per series; values in cents.
pub fn bar_chart(units: &Units, title: &str, labels: &[String], series: &[(&str, &str, Vec<i64>)]) -> String {
    const HEIGHT: i64 = 160;
    const BAR: i64 = 10;
    // A group is at least as wide as its label ("12-01", "19h").
    let group = (BAR * series.len().max(1) as i64 + 8).max(36);
    // Wide enough for the bars and for the legend under them.
    let width = (40 + group * labels.len().max(1) as i64).max(40 + 90 * series.len() as i64);
    let top = series.iter().flat_map(|(_, _, values)| values.iter().copied()).map(i64::abs).max().unwrap_or(0).max(1);
    let mut svg = format!(
        "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 {width} {}\" width=\"{width}\" height=\"{}\"><title>{}</title>",
        HEIGHT + 30,
        HEIGHT + 30,
        escape(title)
    );
    svg.push_str(&format!("<line x1=\"36\" y1=\"{HEIGHT}\" x2=\"{width}\" y2=\"{HEIGHT}\" class=\"axis\"/>"));
    svg.push_str(&format!("<text x=\"0\" y=\"12\" class=\"scale\">{}</text>", escape(&units.money(top))));
    for (index, label) in labels.iter().enumerate() {
        let x0 = 40 + group * index as i64;
        for (series_index, (name, class, values)) in series.iter().enumerate() {
            let value = values.get(index).copied().unwrap_or(0);
            let height = (value.abs() * (HEIGHT - 16) / top).max(if value == 0 { 0 } else { 1 });
            let x = x0 + BAR * series_index as i64;
            svg.push_str(&format!(
                "<rect class=\"{class}{}\" x=\"{x}\" y=\"{}\" width=\"{}\" height=\"{height}\"><title>{} {}: {}</title></rect>",
                if value < 0 { " negative" } else { "" },
                HEIGHT - height,
                BAR - 1,
                escape(label),
                escape(name),
                escape(&units.money(value))
            ));
        }
        svg.push_str(&format!("<text x=\"{x0}\" y=\"{}\" class=\"label\">{}</text>", HEIGHT + 14, escape(label)));
    }
    let mut legend_x = 40;
    for (name, class, _) in series {
        svg.push_str(&format!(
            "<rect class=\"{class}\" x=\"{legend_x}\" y=\"{}\" width=\"8\" height=\"8\"/><text x=\"{}\" y=\"{}\" class=\"label\">{}</text>",
            HEIGHT + 20,
            legend_x + 11,
            HEIGHT + 28,
            escape(name)
        ));
        legend_x += 90;
    }
    svg.push_str("</svg>");
    svg
}

/// The pots of a hand as layers, the main pot at the bottom: each bar's width is its share of
/// the chips, labelled with its amount and the seats that may win it.
pub fn pot_layers(units: &Units, pots: &[(i64, Vec<u32>)]) -> String {
    const WIDTH: i64 = 520;
    const ROW: i64 = 30;
    let total: i64 = pots.iter().map(|(amount, _)| *amount).sum::<i64>().max(1);
    let height = ROW * pots.len().max(1) as i64 + 4;
    let mut svg = format!(
        "<svg class=\"pots\" role=\"img\" viewBox=\"0 0 {} {height}\" width=\"{}\" height=\"{height}\"><title>Pots</title>",
        WIDTH + 260,
        WIDTH + 260
    );
    for (index, (amount, eligible)) in pots.iter().enumerate() {
        let y = height - 4 - ROW * (index as i64 + 1);
        let width = (amount * WIDTH / total).max(2);
        let name = if index == 0 { "Main pot".to_string() } else { format!("Side pot {index}") };
        let seats: Vec<String> = eligible.iter().map(|seat| seat.to_string()).collect();
        svg.push_str(&format!(
            "<rect class=\"pot pot{}\" x=\"0\" y=\"{y}\" width=\"{width}\" height=\"{}\"/><text x=\"{}\" y=\"{}\" class=\"label\">{}: {} (seats {})</text>",
            index % 4,
            ROW - 4,
            width + 6,
            y + ROW / 2 + 2,
            escape(&name),
            escape(&units.money(*amount)),
            escape(&seats.join(", "))
        ));
    }
    svg.push_str("</svg>");
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// What a refusal's `google.rpc.ErrorInfo` says: the reason code, then its metadata (rule id,
/// the numbers involved), for the refusal page.
pub fn refusal_details(status: &Status) -> Vec<(String, String)> {
    let details = status.get_error_details();
    let Some(info) = details.error_info() else { return Vec::new() };
    let mut fields = vec![("reason".to_string(), info.reason.clone())];
    let mut metadata: Vec<(String, String)> = info.metadata.iter().map(|(key, value)| (key.clone(), value.clone())).collect();
    metadata.sort();
    fields.extend(metadata);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(currency: &str, zone: &str) -> Units {
        let mut property = PropertyConfig::with_defaults("p");
        property.currency = currency.to_string();
        property.gaming_day = crate::config::GamingDayClock::in_zone(6 * 60, zone).unwrap();
        Units::of(&property)
    }

    #[test]
    fn money_is_in_the_property_currency_and_exact() {
        assert_eq!(units("USD", "UTC").money(-123_456), "-$1,234.56");
        assert_eq!(units("MOP", "UTC").money(5), "0.05 MOP");
    }

    #[test]
    fn times_are_on_the_property_clock_with_the_offset() {
        // 2026-12-01 16:03:12 UTC is 08:03:12 in Las Vegas (PST, -08:00).
        let at = 1_764_604_992_000;
        assert_eq!(units("USD", "America/Los_Angeles").time(at), "2025-12-01 08:03:12 -08:00");
        assert_eq!(units("USD", "America/Los_Angeles").hour_of(at).map(|(_, hour, _)| hour), Some(8));
    }

    #[test]
    fn csv_quotes_and_defuses_formulas() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(csv_field("-$5.00"), "-$5.00");
        assert_eq!(csv_field("-$1,234.56"), "\"-$1,234.56\"");
        assert_eq!(csv_field("-12"), "-12");
        // The console pass: an import actor of `-$A$1+HYPERLINK(...)` went out as a formula.
        assert_eq!(csv_field("-$A$1+HYPERLINK(\"x\")"), "\"'-$A$1+HYPERLINK(\"\"x\"\")\"");
    }

    #[test]
    fn lists_page_and_link_in_both_directions() {
        let rows: Vec<Vec<Cell>> = (0..60).map(|index| vec![text(index.to_string())]).collect();
        let listing = Listing::new("events", "Events", &["n"], rows);
        let query = HashMap::from([("events_page".to_string(), "1".to_string())]);
        let paged = listing.paged("/tables/t1", &query);
        assert_eq!(paged.rows.len(), PAGE_ROWS);
        assert_eq!(paged.rows[0][0].text, "25");
        assert_eq!(paged.previous.as_deref(), Some("/tables/t1?events_page=0"));
        assert_eq!(paged.next.as_deref(), Some("/tables/t1?events_page=2"));
        assert_eq!(paged.csv, "/tables/t1?csv=events");
    }

    #[test]
    fn chart_text_is_escaped() {
        let svg = bar_chart(&units("USD", "UTC"), "<b>", &["<i>".to_string()], &[("drop", "drop", vec![100])]);
        assert!(!svg.contains("<b>") && !svg.contains("<i>"));
    }
}
