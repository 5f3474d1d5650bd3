//! Times on the command line in the property's own time zone, both directions side by side:
//! a time the operator types is a wall-clock time where the property is (R-CHIP-6 keeps the
//! gaming day in that zone too), and every time printed carries its offset, so a reader never
//! has to guess the zone. The zone and currency come from the server once per run
//! (`LedgerService.GetProperty`).

use anyhow::Context;
use chipledger_proto::v1 as pb;
use jiff::civil::DateTime;
use jiff::tz::{Offset, TimeZone};
use jiff::Timestamp;

use crate::connect::{Client, rpc_error};

/// What every time error names.
pub const EXPECTED_TIME: &str =
    "expected a time like \"2026-12-01 08:03\" (in the property's zone), 2026-12-01T08:03:00-08:00 (RFC 3339 with an offset) or Unix milliseconds";

/// The property's zone and currency, as the server has them configured.
#[derive(Debug, Clone)]
pub struct PropertyClock {
    pub currency: String,
    pub zone_name: String,
    zone: TimeZone,
}

/// `America/Los_Angeles`, `UTC` or a fixed offset `-07:00` (how `GetProperty` names a zone).
fn zone_named(name: &str) -> anyhow::Result<TimeZone> {
    if let Some(sign) = name.chars().next().filter(|sign| *sign == '+' || *sign == '-') {
        let (hours, minutes) = name[1..].split_once(':').context("offset is not +HH:MM")?;
        let minutes = hours.parse::<i32>()? * 60 + minutes.parse::<i32>()?;
        let seconds = if sign == '-' { -minutes * 60 } else { minutes * 60 };
        return Ok(TimeZone::fixed(Offset::from_seconds(seconds)?));
    }
    Ok(TimeZone::get(name)?)
}

impl PropertyClock {
    /// The clock of the property the client acts on.
    pub async fn fetch(client: &mut Client) -> anyhow::Result<PropertyClock> {
        let view = client
            .ledger
            .get_property(pb::GetPropertyRequest { property_id: client.property_id.clone() })
            .await
            .map_err(|status| rpc_error("reading the property's settings", &status))?
            .into_inner();
        PropertyClock::from_view(&view)
    }

    pub fn from_view(view: &pb::PropertyView) -> anyhow::Result<PropertyClock> {
        let zone = zone_named(&view.time_zone)
            .with_context(|| format!("the server names the property's time zone {:?}, which is not a zone", view.time_zone))?;
        Ok(PropertyClock {
            currency: view.currency.clone(),
            zone_name: view.time_zone.clone(),
            zone,
        })
    }

    #[cfg(test)]
    fn in_zone(name: &str) -> PropertyClock {
        PropertyClock {
            currency: "USD".into(),
            zone_name: name.into(),
            zone: zone_named(name).expect("a zone"),
        }
    }

    /// Unix milliseconds as the property's wall-clock time with its offset,
    /// `2026-12-01 08:03:07 -08:00` (the raw number if out of range).
    pub fn show(&self, unix_ms: i64) -> String {
        let Ok(at) = Timestamp::from_millisecond(unix_ms) else { return unix_ms.to_string() };
        let local = at.to_zoned_datetime(self.zone.clone());
        local.strftime("%Y-%m-%d %H:%M:%S %:z").to_string()
    }

    /// A time the operator typed, as Unix milliseconds: a wall-clock time in the property's zone
    /// (`2026-12-01 08:03`, seconds optional, `T` or a space between date and time), RFC 3339
    /// with an explicit offset or `Z`, or Unix milliseconds. A local time that a daylight-saving
    /// change makes ambiguous or skips is refused with the offsets to choose from.
    pub fn parse(&self, text: &str) -> anyhow::Result<i64> {
        let text = text.trim();
        if !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) {
            return text.parse::<i64>().with_context(|| format!("{text:?}: {EXPECTED_TIME}"));
        }
        if let Ok(at) = text.parse::<Timestamp>() {
            return Ok(at.as_millisecond());
        }
        let civil = text.replacen(' ', "T", 1);
        let local: DateTime = civil.parse().map_err(|_| anyhow::anyhow!("{text:?}: {EXPECTED_TIME}"))?;
        let ambiguous = self.zone.to_ambiguous_zoned_datetime(local);
        if ambiguous.is_ambiguous() {
            anyhow::bail!(
                "{text:?} is ambiguous or does not exist in {} (a daylight-saving change): give the offset, e.g. {}-08:00",
                self.zone_name,
                local.strftime("%Y-%m-%dT%H:%M")
            );
        }
        let zoned = ambiguous.unambiguous().map_err(|_| anyhow::anyhow!("{text:?}: {EXPECTED_TIME}"))?;
        Ok(zoned.timestamp().as_millisecond())
    }

    /// `--from`/`--to` as a time range (either may be open).
    pub fn range(&self, from: Option<&str>, to: Option<&str>) -> anyhow::Result<Option<pb::TimeRange>> {
        if from.is_none() && to.is_none() {
            return Ok(None);
        }
        Ok(Some(pb::TimeRange {
            from_unix_ms: from.map(|text| self.parse(text)).transpose()?,
            to_unix_ms: to.map(|text| self.parse(text)).transpose()?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wall_clock_time_is_read_and_shown_in_the_property_zone() {
        let clock = PropertyClock::in_zone("America/Los_Angeles");
        let at = clock.parse("2026-12-01 08:03").unwrap();
        assert_eq!(at, clock.parse("2026-12-01T16:03:00Z").unwrap());
        assert_eq!(clock.show(at), "2026-12-01 08:03:00 -08:00");
        // Summer: the same zone at -07:00.
        let summer = clock.parse("2026-07-01T08:03:05").unwrap();
        assert_eq!(clock.show(summer), "2026-07-01 08:03:05 -07:00");
        assert_eq!(clock.parse("2026-12-01T08:03:00-08:00").unwrap(), at);
        assert_eq!(clock.parse(&at.to_string()).unwrap(), at);
    }

    #[test]
    fn fixed_offsets_and_utc_are_zones_too() {
        assert_eq!(PropertyClock::in_zone("UTC").show(0), "1970-01-01 00:00:00 +00:00");
        assert_eq!(PropertyClock::in_zone("+05:30").show(0), "1970-01-01 05:30:00 +05:30");
        assert_eq!(PropertyClock::in_zone("-07:00").parse("1970-01-01 00:00").unwrap(), 7 * 3_600_000);
    }

    #[test]
    fn bad_and_ambiguous_times_name_what_is_expected() {
        let clock = PropertyClock::in_zone("America/Los_Angeles");
        for text in ["yesterday", "2026-13-01 08:00", "08:03", ""] {
            let error = clock.parse(text).unwrap_err().to_string();
            assert!(error.contains("expected a time like"), "{text}: {error}");
        }
        // 01:30 happens twice on the night summer time ends.
        let error = clock.parse("2026-11-01 01:30").unwrap_err().to_string();
        assert!(error.contains("ambiguous"), "{error}");
    }
}
