//! R-CHIP-6 across daylight saving: a property in Las Vegas (IANA zone America/Los_Angeles,
//! cutoff 06:00) records each event under the gaming day of its local time. The cutoff stays at
//! 06:00 local on both sides of the spring-forward change (2024-03-10, 02:00 PST -> 03:00 PDT):
//! 13:59 UTC the day before is 05:59 PST, 12:59 UTC the day after is 05:59 PDT. A fixed offset
//! of -480 would have put the summer cutoff at 07:00 local (14:00 UTC).

use chipledger_proto::v1 as pb;
use chipledger_server::config::FileConfig;
use chipledger_tests::{ServerOptions, TestServer, all_events, chips, principal};

fn las_vegas(file: &mut FileConfig) {
    file.gaming_day.time_zone = Some("America/Los_Angeles".into());
    file.gaming_day.cutoff = Some("06:00".into());
}

/// A UTC instant (no time zone involved) in Unix milliseconds.
fn unix_ms(rfc3339: &str) -> i64 {
    rfc3339.parse::<jiff::Timestamp>().unwrap_or_else(|error| panic!("{rfc3339}: {error}")).as_millisecond()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_chip_6_las_vegas_gaming_day_keeps_its_0600_local_cutoff_across_the_dst_change() -> anyhow::Result<()> {
    let options = ServerOptions { customize: Some(las_vegas), ..ServerOptions::default() };
    let server = TestServer::start_with("dst", options, None).await?;
    let mut admin = server.client(principal::ADMIN).await?;
    // (instant, the gaming day it belongs to), recorded as admin imports at those instants.
    let cases = [
        ("2024-03-09T13:59:59Z", "2024-03-08"), // 05:59:59 PST
        ("2024-03-09T14:00:00Z", "2024-03-09"), // 06:00 PST
        ("2024-03-10T12:59:59Z", "2024-03-09"), // 05:59:59 PDT, after the change at 10:00 UTC
        ("2024-03-10T13:00:00Z", "2024-03-10"), // 06:00 PDT (a fixed -480 would say 2024-03-09)
        ("2024-03-10T13:30:00Z", "2024-03-10"), // 06:30 PDT (a fixed -480: 05:30, the day before)
        ("2024-11-03T13:59:59Z", "2024-11-02"), // 05:59:59 PST, fall back at 09:00 UTC
        ("2024-11-03T14:00:00Z", "2024-11-03"),
    ];
    let mut expected = Vec::new();
    for (index, (instant, day)) in cases.iter().enumerate() {
        let header = Some(pb::CommandHeader {
            command_id: format!("dst-{index}"),
            import_occurred_at_unix_ms: Some(unix_ms(instant)),
            ..Default::default()
        });
        let cage_id = format!("C{index}");
        admin
            .cage
            .open_cage(pb::OpenCage { header, cage_id: cage_id.clone(), denominations_cents: vec![100], chips: vec![chips(100, 1)], cash_cents: 0 })
            .await?;
        expected.push((format!("cage-{cage_id}"), (*instant, *day)));
    }
    let events = all_events(&mut admin, pb::EventFilter::default()).await?;
    for (stream, (instant, day)) in expected {
        let event = events.iter().find(|event| event.stream_id == stream).unwrap_or_else(|| panic!("no event on {stream}"));
        let recorded = event.metadata.as_ref().map(|metadata| metadata.gaming_day.as_str()).unwrap_or_default();
        assert_eq!(recorded, day, "{instant} belongs to gaming day {day}");
    }
    server.stop().await
}
