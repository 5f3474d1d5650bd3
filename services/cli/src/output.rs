//! How results are shown: human-readable tables (comfy-table) by default, one JSON document
//! per result with `--json` for scripts. Money is printed from integer cents (R-UNIT-1).

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

#[derive(Debug, Clone, Copy, Default)]
pub struct Output {
    pub json: bool,
}

impl Output {
    pub fn table(&self, headers: &[&str]) -> Table {
        let mut table = Table::new();
        table.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
        table.set_header(headers.iter().copied());
        table
    }
}

/// `-1234567` -> `-12,345.67`, exact (no floating point).
pub fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let magnitude = cents.unsigned_abs();
    let whole = (magnitude / 100).to_string();
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (index, digit) in whole.chars().enumerate() {
        if index > 0 && (whole.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}.{:02}", magnitude % 100)
}

/// Unix milliseconds as an RFC 3339 UTC time (or the raw number if out of range).
pub fn timestamp(unix_ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(unix_ms) * 1_000_000)
        .ok()
        .and_then(|at| at.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| unix_ms.to_string())
}

#[cfg(test)]
mod tests {
    use super::money;

    #[test]
    fn money_is_exact_with_grouping() {
        assert_eq!(money(0), "0.00");
        assert_eq!(money(5), "0.05");
        assert_eq!(money(-1_234_567), "-12,345.67");
        assert_eq!(money(100_000_000), "1,000,000.00");
    }
}
