//! Reads from a hot standby (a second PostgreSQL replaying the primary's WAL): every answer
//! says which database gave it and the position it reflects; a standby behind the primary is
//! used only within the staleness bound the caller accepts, never for a caller who must see a
//! position it has not replayed (read-your-writes), and never shows anything the primary did
//! not commit: what it shows is the primary's log, event for event, hash for hash.

use chipledger_postgres::TestPostgres;
use chipledger_proto::v1 as pb;
use chipledger_tests::{Client, ServerOptions, TestServer, app_url, header, prepare_database, principal};
use tonic_types::StatusExt;
use tonic::{Code, Request, Response};

use crate::scenario::{self, TABLE, cash_buy_in};

const SOURCE: &str = "chipledger-read-source";
const POSITION: &str = "chipledger-read-position";
const MIN_POSITION: &str = "chipledger-read-min-position";
const MAX_STALENESS: &str = "chipledger-read-max-staleness-ms";

/// Bound on the standby catching up once replay resumes.
const CATCH_UP_BOUND: std::time::Duration = std::time::Duration::from_secs(60);

/// What the answer says about itself: (source, position).
fn read_facts<T>(response: &Response<T>) -> (String, i64) {
    let text = |name: &str| response.metadata().get(name).and_then(|value| value.to_str().ok()).unwrap_or_default().to_string();
    (text(SOURCE), text(POSITION).parse().unwrap_or(-1))
}

/// Every event of the property, from whichever database the headers lead to.
async fn events(auditor: &mut Client, headers: &[(&'static str, String)]) -> anyhow::Result<(String, i64, Vec<pb::RecordedEvent>)> {
    let mut request = Request::new(pb::ListEventsRequest {
        page: Some(pb::PageRequest { page_size: 1_000, ..Default::default() }),
        ..Default::default()
    });
    for (name, value) in headers {
        request.metadata_mut().insert(*name, value.parse()?);
    }
    let response = auditor.ledger.list_events(request).await?;
    let (source, position) = read_facts(&response);
    Ok((source, position, response.into_inner().events))
}

fn last_position(result: &pb::CommandResult) -> i64 {
    result.events.iter().map(|event| event.global_position).max().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn standby_reads_report_their_position_and_show_only_what_the_primary_committed() -> anyhow::Result<()> {
    let (primary, standby) = TestPostgres::start_with_standby().await?;
    let database_url = primary.fresh_database("standby_reads").await?;
    let database = database_url.rsplit('/').next().unwrap_or_default().to_string();
    let options = ServerOptions {
        read_database_url: Some(app_url(&standby.url_to(&database))?),
        // A bound no step of this test comes near: staleness is asked for per call below.
        customize: Some(|file| file.reads.max_staleness_ms = Some(600_000)),
        ..ServerOptions::default()
    };
    prepare_database(&database_url).await?;
    let server = TestServer::on_database(database_url, "standby_reads", options).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;

    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    let seated = dealer.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 20_000)).await?.into_inner();
    let first_head = last_position(&seated);

    // Read-your-writes: whoever answers has replayed the caller's last write.
    let (source, position, seen) = events(&mut auditor, &[(MIN_POSITION, first_head.to_string())]).await?;
    assert!(position >= first_head, "{source} answered at {position}, before the caller's write at {first_head}");
    assert_eq!(seen.last().map(|event| event.global_position), Some(first_head));

    // The standby stops replaying; the primary goes on.
    standby.pause_replay().await?;
    let mut last = first_head;
    for (n, seat) in [(1, 2), (2, 3)] {
        let buy_in = cash_buy_in(&format!("buy-late-{n}"), TABLE, seat, &format!("P{seat}"), 10_000);
        last = last_position(&dealer.table.buy_in(buy_in).await?.into_inner());
    }
    let (_, primary_position, on_primary) = events(&mut auditor, &[(MAX_STALENESS, "0".into())]).await?;
    assert_eq!(primary_position, last, "a read that accepts no staleness reflects the primary's head");
    assert_eq!(on_primary.last().map(|event| event.global_position), Some(last));

    // Within the bound the standby answers, says so, and says how far it got: it shows the
    // primary's events up to that position, identical, and nothing beyond.
    let (source, stale_position, on_standby) = events(&mut auditor, &[]).await?;
    assert_eq!(source, "standby");
    assert!(stale_position < last, "the paused standby reports {stale_position}, the primary is at {last}");
    assert!(stale_position >= first_head);
    assert_eq!(on_standby.last().map(|event| event.global_position), Some(stale_position));
    assert_eq!(on_standby, on_primary[..on_standby.len()], "the standby shows the primary's log, hash for hash");

    // A caller who just wrote `last` is not answered from behind it; nor is one who accepts
    // no staleness.
    let (source, position, fresh) = events(&mut auditor, &[(MIN_POSITION, last.to_string())]).await?;
    assert_eq!((source.as_str(), position), ("primary", last));
    assert_eq!(fresh, on_primary);
    let (source, _, _) = events(&mut auditor, &[(MAX_STALENESS, "0".into())]).await?;
    assert_eq!(source, "primary");

    // Other audit reads carry the same facts: the chain digest from the standby is the
    // primary's digest at the position it reports.
    let digest = auditor.audit.get_chain_digest(pb::GetChainDigestRequest::default()).await?;
    let (source, position) = read_facts(&digest);
    assert_eq!((source.as_str(), position), ("standby", stale_position));
    let digest = digest.into_inner();
    assert_eq!(digest.global_position, stale_position);
    let at_that_position = on_primary.iter().find(|event| event.global_position == stale_position).map(|event| event.hash_hex.clone());
    assert_eq!(Some(digest.chain_hash_hex), at_that_position);

    // Replay resumes: the standby catches up and answers the read-your-writes caller itself.
    standby.resume_replay().await?;
    let deadline = tokio::time::Instant::now() + CATCH_UP_BOUND;
    loop {
        let (source, position, seen) = events(&mut auditor, &[(MIN_POSITION, last.to_string())]).await?;
        assert!(position >= last);
        if source == "standby" {
            assert_eq!(seen, on_primary);
            break;
        }
        anyhow::ensure!(tokio::time::Instant::now() < deadline, "the standby did not catch up within {CATCH_UP_BOUND:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    // A malformed wish is the caller's error, named.
    let mut bad = Request::new(pb::ListEventsRequest::default());
    bad.metadata_mut().insert(MIN_POSITION, "-3".parse()?);
    let status = auditor.ledger.list_events(bad).await.expect_err("a negative position is refused");
    assert_eq!(status.code(), Code::InvalidArgument);
    let violations = status.get_details_bad_request().map(|bad| bad.field_violations).unwrap_or_default();
    assert!(violations.iter().any(|violation| violation.field == MIN_POSITION), "{status:?}");

    // Writes never go to the standby: a command after all this lands on the primary's chain.
    let tip = pb::Tip { header: header("tip-after"), table_id: TABLE.into(), seat: 1, amount_cents: 100 };
    let tipped = dealer.table.tip(tip).await?.into_inner();
    assert_eq!(last_position(&tipped), last + 1);
    server.stop().await?;
    Ok(())
}
