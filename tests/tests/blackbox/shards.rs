//! Property shards: one chipledgerd serving properties whose chains live in different
//! databases. Each property's chain and positions are in its own database only (the other
//! holds nothing of it); the map is read again on SIGHUP, so a property is added without a
//! restart; and a reload that would point a property at a database without its chain is
//! refused whole, leaving the running map as it was.

use std::time::Duration;

use chipledger_postgres::TestPostgres;
use chipledger_proto::v1 as pb;
use chipledger_tests::binary::ChildServer;
use chipledger_tests::{Client, app_url, prepare_database, wait_until_serving, write_file};
use sqlx::{Connection, PgConnection};
use tonic::Code;
use tonic::transport::Endpoint;

const RELOAD_BOUND: Duration = Duration::from_secs(60);

fn config(shards: &[(&str, &str, &[&str])], properties: &[&str]) -> String {
    let mut text = String::from("property_id = \"north\"\n[auth]\ndev_anonymous_role = \"admin\"\n");
    for property in properties {
        text.push_str(&format!("[[properties]]\nid = \"{property}\"\n"));
    }
    for (name, url, held) in shards {
        let held: Vec<String> = held.iter().map(|property| format!("\"{property}\"")).collect();
        text.push_str(&format!("[[shards]]\nname = \"{name}\"\ndatabase_url = \"{url}\"\nproperties = [{}]\n", held.join(", ")));
    }
    text
}

/// The same cage opening in any property (command ids are per property).
async fn open_cage(client: &mut Client, property: &str) -> Result<pb::CommandResult, tonic::Status> {
    let request = pb::OpenCage {
        header: Some(pb::CommandHeader { command_id: "open-cage".into(), property_id: property.into(), ..Default::default() }),
        cage_id: "MAIN".into(),
        denominations_cents: vec![100, 500],
        chips: vec![chipledger_tests::chips(100, 100), chipledger_tests::chips(500, 100)],
        cash_cents: 100_000,
    };
    client.cage.open_cage(request).await.map(tonic::Response::into_inner)
}

async fn digest(client: &mut Client, property: &str) -> anyhow::Result<pb::ChainDigest> {
    let request = pb::GetChainDigestRequest { property_id: property.into() };
    Ok(client.audit.get_chain_digest(request).await?.into_inner())
}

async fn verified(client: &mut Client, property: &str) -> anyhow::Result<bool> {
    let request = pb::VerifyChainRequest { property_id: property.into(), ..Default::default() };
    Ok(client.audit.verify_chain(request).await?.into_inner().ok)
}

/// (property, rows) of the events held in a database, by property.
async fn properties_held(superuser_url: &str) -> anyhow::Result<Vec<(String, i64, i64, i64)>> {
    let mut connection = PgConnection::connect(superuser_url).await?;
    Ok(sqlx::query_as(
        "SELECT property, count(*), min(position), max(position) FROM events GROUP BY property ORDER BY property",
    )
    .fetch_all(&mut connection)
    .await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_properties_on_two_databases_each_with_its_own_chain_and_the_map_reloads() -> anyhow::Result<()> {
    let postgres = TestPostgres::shared().await?;
    let mut databases = Vec::new();
    for name in ["shard_north", "shard_south", "shard_east"] {
        let url = postgres.fresh_database(name).await?;
        prepare_database(&url).await?;
        databases.push(url);
    }
    let [north_db, south_db, east_db] = [&databases[0], &databases[1], &databases[2]];
    let (south_app, east_app) = (app_url(south_db)?, app_url(east_db)?);

    let dir = tempfile::tempdir()?;
    let path = write_file(dir.path(), "chipledgerd.toml", &config(&[("south-db", &south_app, &["south"])], &["north", "south"]))?;
    let path_text = path.to_string_lossy().to_string();
    let child = ChildServer::spawn(
        &["--config", &path_text, "--listen", "127.0.0.1:0"],
        &[("DATABASE_URL", app_url(north_db)?)],
        dir.path(),
    )
    .await?;
    wait_until_serving(&format!("http://{}", child.addr), None).await?;
    let mut client = Client::new(Endpoint::from_shared(format!("http://{}", child.addr))?.connect().await?, None);

    // The same command in each property: two chains, each starting at position 1, each in
    // its own database.
    let north = open_cage(&mut client, "north").await?;
    let south = open_cage(&mut client, "south").await?;
    assert!(!north.replayed && !south.replayed, "command ids are per property");
    assert_eq!(north.events[0].global_position, 1);
    assert_eq!(south.events[0].global_position, 1);
    assert_ne!(north.chain_hash_hex, south.chain_hash_hex, "each chain hashes its own property");
    let held = |property: &str, events: usize| (property.to_string(), events as i64, 1, events as i64);
    assert_eq!(properties_held(north_db).await?, vec![held("north", north.events.len())]);
    assert_eq!(properties_held(south_db).await?, vec![held("south", south.events.len())]);
    for property in ["north", "south"] {
        assert!(verified(&mut client, property).await?, "{property}'s chain verifies");
    }
    assert_eq!(digest(&mut client, "south").await?.chain_hash_hex, south.chain_hash_hex);

    // A property not configured yet is not served.
    let status = open_cage(&mut client, "east").await.expect_err("east is not configured");
    assert_eq!(status.code(), Code::NotFound);

    // Added with its shard and reloaded, without a restart.
    let shards: [(&str, &str, &[&str]); 2] = [("south-db", &south_app, &["south"]), ("east-db", &east_app, &["east"])];
    std::fs::write(&path, config(&shards, &["north", "south", "east"]))?;
    child.hangup()?;
    child.wait_for_output("chipledgerd: reloaded", 1, RELOAD_BOUND).await?;
    let east = open_cage(&mut client, "east").await?;
    assert_eq!(east.events[0].global_position, 1);
    assert_eq!(properties_held(east_db).await?, vec![held("east", east.events.len())]);
    assert!(verified(&mut client, "east").await?);

    // Pointing south at a database that does not hold its chain would start a second one:
    // the whole reload is refused and south stays where its chain is.
    let moved: [(&str, &str, &[&str]); 1] = [("east-db", &east_app, &["east", "south"])];
    std::fs::write(&path, config(&moved, &["north", "south", "east"]))?;
    child.hangup()?;
    child.wait_for_output("reload refused", 1, RELOAD_BOUND).await?;
    assert!(child.output_text().contains("property south cannot move to shard east-db"), "{}", child.output_text());
    let tip_sale = pb::SellChips {
        header: Some(pb::CommandHeader { command_id: "sell-after".into(), property_id: "south".into(), ..Default::default() }),
        cage_id: "MAIN".into(),
        player_id: "P1".into(),
        chips: vec![chipledger_tests::chips(100, 1)],
        supervisor_id: None,
    };
    client.cage.sell_chips(tip_sale).await?;
    let south_rows = properties_held(south_db).await?;
    assert_eq!(south_rows.len(), 1);
    assert!(south_rows[0].1 > south.events.len() as i64, "the sale went to south's own database");
    assert_eq!(properties_held(east_db).await?, vec![held("east", east.events.len())], "nothing of south in east's");
    assert!(verified(&mut client, "south").await?);

    let (status, _) = child.terminate().await?;
    assert!(status.success());
    Ok(())
}

/// One chipledgerd on a fresh database (`name`), serving the configuration file `config` (kept
/// in the returned directory, to be written again before a reload), with `env` beside its
/// database URL; and a channel to it.
async fn configured(name: &str, config: &str, env: &[(&str, String)]) -> anyhow::Result<(ChildServer, tempfile::TempDir, std::path::PathBuf, tonic::transport::Channel)> {
    let postgres = TestPostgres::shared().await?;
    let url = postgres.fresh_database(name).await?;
    prepare_database(&url).await?;
    let dir = tempfile::tempdir()?;
    let path = write_file(dir.path(), "chipledgerd.toml", config)?;
    let path_text = path.to_string_lossy().to_string();
    let mut env = env.to_vec();
    env.push(("DATABASE_URL", app_url(&url)?));
    let child = ChildServer::spawn(&["--config", &path_text, "--listen", "127.0.0.1:0"], &env, dir.path()).await?;
    wait_until_serving(&format!("http://{}", child.addr), None).await?;
    let channel = Endpoint::from_shared(format!("http://{}", child.addr))?.connect().await?;
    Ok((child, dir, path, channel))
}

/// Principals are read again at a reload (SIGHUP): a principal removed is refused from the next
/// call, one added acts at once, and the reload says which (the insider pass: a reload said
/// "reloaded", and a removed admin's token and a demoted supervisor's approvals kept working).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn principals_are_read_again_at_a_reload() -> anyhow::Result<()> {
    let principals = |entries: &[(&str, &str)]| {
        let mut text = String::from("property_id = \"north\"\n");
        for (id, role) in entries {
            text.push_str(&format!("[[auth.principals]]\nid = \"{id}\"\nrole = \"{role}\"\ntokens = [\"token-of-{id}-0123456789\"]\n"));
        }
        text
    };
    let start = principals(&[("ann", "admin"), ("fred", "auditor"), ("cara", "cage")]);
    let (child, _dir, path, channel) = configured("principals_reload", &start, &[]).await?;
    let (mut fred, mut gina) = (Client::new(channel.clone(), Some("token-of-fred-0123456789")), Client::new(channel.clone(), Some("token-of-gina-0123456789")));
    assert!(verified(&mut fred, "north").await?);
    assert_eq!(verified(&mut gina, "north").await.expect_err("not a principal yet").downcast::<tonic::Status>()?.code(), Code::Unauthenticated);
    // What they hold open: fred's subscription, cara's command stream (a cage opened on it).
    let mut feed = fred.ledger.subscribe(pb::SubscribeRequest::default()).await?.into_inner();
    let mut cara = Client::new(channel.clone(), Some("token-of-cara-0123456789"));
    let (send, commands) = tokio::sync::mpsc::channel(4);
    let mut replies = cara.ledger.record_stream(tokio_stream::wrappers::ReceiverStream::new(commands)).await?.into_inner();
    let open = pb::OpenCage {
        header: Some(pb::CommandHeader { command_id: "open-cage".into(), ..Default::default() }),
        cage_id: "MAIN".into(),
        denominations_cents: vec![100, 500],
        chips: vec![chipledger_tests::chips(100, 100), chipledger_tests::chips(500, 100)],
        cash_cents: 100_000,
    };
    send.send(pb::Command { command: Some(pb::command::Command::OpenCage(open)) }).await?;
    let opened = replies.message().await?.expect("a reply");
    assert_eq!(opened.code, 0, "{opened:?}");
    assert!(feed.message().await?.is_some(), "the feed delivers the cage's opening");

    // fred removed, gina added, cara made a dealer.
    std::fs::write(&path, principals(&[("ann", "admin"), ("gina", "auditor"), ("cara", "dealer")]))?;
    child.hangup()?;
    child.wait_for_output("chipledgerd: reloaded", 1, RELOAD_BOUND).await?;
    assert!(child.output_text().contains(r#"principals added ["gina"], removed ["fred"], changed ["cara"]"#), "{}", child.output_text());
    assert_eq!(verified(&mut fred, "north").await.expect_err("removed").downcast::<tonic::Status>()?.code(), Code::Unauthenticated);
    assert!(verified(&mut gina, "north").await?, "added, and acting at once");
    // The open stream records nothing more as a cage principal, and the feed ends.
    let sale = pb::SellChips {
        header: Some(pb::CommandHeader { command_id: "sale-on-the-open-stream".into(), ..Default::default() }),
        cage_id: "MAIN".into(),
        player_id: "P1".into(),
        chips: vec![chipledger_tests::chips(500, 1)],
        supervisor_id: None,
    };
    send.send(pb::Command { command: Some(pb::command::Command::SellChips(sale)) }).await?;
    let ended = replies.message().await.expect_err("the stream ends");
    assert_eq!(ended.code(), Code::Unauthenticated, "{ended:?}");
    let mut ann = Client::new(channel.clone(), Some("token-of-ann-0123456789"));
    let sold = chipledger_tests::all_events(&mut ann, pb::EventFilter { event_types: vec!["ChipsSold".into()], ..Default::default() }).await?;
    assert!(sold.is_empty(), "nothing recorded on the stream after the reload: {sold:?}");
    let open_again = pb::OpenCage {
        header: Some(pb::CommandHeader { command_id: "open-cage-2".into(), ..Default::default() }),
        cage_id: "SECOND".into(),
        denominations_cents: vec![100],
        chips: vec![chipledger_tests::chips(100, 1)],
        cash_cents: 0,
    };
    ann.cage.open_cage(open_again).await?;
    let fed = feed.message().await.expect_err("the feed ends");
    assert_eq!(fed.code(), Code::Unauthenticated, "{fed:?}");

    // The development mode is a start's: a configuration without principals would make anonymous
    // callers admins; the whole reload is refused.
    std::fs::write(&path, "property_id = \"north\"\n")?;
    child.hangup()?;
    child.wait_for_output("reload refused", 1, RELOAD_BOUND).await?;
    assert!(child.output_text().contains("the development mode"), "{}", child.output_text());
    assert!(verified(&mut gina, "north").await?, "nothing changed");
    Ok(())
}

/// R-CHIP-6 with R-AUDIT-4: the gaming day of what is recorded as it happens never goes back. A
/// reload that moves the property's clock a day back (here from UTC+12 to UTC-12, the cutoff at
/// midnight) had put the next sale on the day before the one already recorded (the insider
/// pass: $9,000 on each of two days seven seconds apart, and no CTR).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_moves_the_clock_back_does_not_move_the_gaming_day_back() -> anyhow::Result<()> {
    let clock = |zone: &str| format!("property_id = \"north\"\n[gaming_day]\ncutoff = \"00:00\"\ntime_zone = \"{zone}\"\n");
    let (child, _dir, path, channel) = configured("gaming_day_never_back", &clock("Etc/GMT-12"), &[]).await?;
    let mut client = Client::new(channel, None);
    open_cage(&mut client, "north").await?;
    let sale = |command_id: &str| pb::SellChips {
        header: Some(pb::CommandHeader { command_id: command_id.into(), ..Default::default() }),
        cage_id: "MAIN".into(),
        player_id: "P1".into(),
        chips: vec![chipledger_tests::chips(500, 10)],
        supervisor_id: None,
    };
    client.cage.sell_chips(sale("sale-before")).await?;
    std::fs::write(&path, clock("Etc/GMT+12"))?;
    child.hangup()?;
    child.wait_for_output("chipledgerd: reloaded", 1, RELOAD_BOUND).await?;
    client.cage.sell_chips(sale("sale-after")).await?;
    let days: Vec<String> = chipledger_tests::all_events(&mut client, pb::EventFilter::default())
        .await?
        .iter()
        .map(|event| event.metadata.as_ref().map(|metadata| metadata.gaming_day.clone()).unwrap_or_default())
        .collect();
    assert!(days.len() >= 4 && days.iter().all(|day| *day == days[0]), "one gaming day throughout: {days:?}");
    Ok(())
}

/// R-CHIP-6 with R-REBUY-1 and R-AUDIT-4: a replica times commands by the database's clock, not
/// its host's. A replica 65 minutes ahead had opened the next gaming day early (a patron's cash on
/// two days, no CTR) and judged a re-buy wait over before it was (the replicas pass). Here the
/// gaming day turns 30 minutes from now: the replica's host clock is past it, the database's not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_clock_runs_ahead_times_commands_by_the_databases_clock() -> anyhow::Result<()> {
    const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
    anyhow::ensure!(std::path::Path::new(FAKETIME).exists(), "{FAKETIME} is missing: install Debian's faketime (.ci/run does)");
    let now = jiff::tz::Offset::UTC.to_datetime(jiff::Timestamp::now());
    let cutoff = now.checked_add(jiff::Span::new().minutes(30))?;
    let (cutoff_time, now_time) = (cutoff.time(), now.time());
    let expected = if now_time >= cutoff_time { now.date() } else { now.date().yesterday()? };
    let config = format!(
        "property_id = \"north\"\n[gaming_day]\ncutoff = \"{:02}:{:02}\"\ntime_zone = \"UTC\"\n",
        cutoff_time.hour(),
        cutoff_time.minute()
    );
    let ahead = [
        ("LD_PRELOAD", FAKETIME.to_string()),
        ("FAKETIME", "+65m".to_string()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_string()),
    ];
    let (_child, _dir, _path, channel) = configured("replica_clock_ahead", &config, &ahead).await?;
    let mut client = Client::new(channel, None);
    open_cage(&mut client, "north").await?;
    let days: Vec<String> = chipledger_tests::all_events(&mut client, pb::EventFilter::default())
        .await?
        .iter()
        .map(|event| event.metadata.as_ref().map(|metadata| metadata.gaming_day.clone()).unwrap_or_default())
        .collect();
    assert_eq!(days, vec![expected.to_string()], "the day by the database's clock");
    Ok(())
}
