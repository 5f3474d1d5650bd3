//! Least privilege in operation: the admin step is `chipledgerd migrate` with an admin's URL;
//! the service runs with the application role's own credentials only (it cannot read or write
//! a table, only execute the store's functions), never changes a password, and replicas keep
//! working across each other's restarts and a restart of PostgreSQL.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use chipledger_postgres::TestPostgres;
use chipledger_proto::v1 as pb;
use chipledger_tests::binary::{ChildServer, chipledgerd};
use chipledger_tests::{Client, app_password_file, app_url, header, wait_until_serving, write_file};
use sqlx::{Connection, PgConnection};
use tonic::transport::Endpoint;

use crate::scenario::{CAGE, open_cage};

/// Bound on waiting for a replica to answer again after PostgreSQL restarted.
const RECOVERY_BOUND: Duration = Duration::from_secs(60);
const PROBE: Duration = Duration::from_millis(200);

/// `chipledgerd migrate --database-url URL --app-password-file FILE`, to its exit.
async fn migrate(database_url: &str, dir: &Path) -> anyhow::Result<std::process::Output> {
    let password = app_password_file(dir)?;
    Ok(tokio::process::Command::new(chipledgerd().await?)
        .args(["migrate", "--database-url", database_url, "--app-password-file"])
        .arg(&password)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .await?)
}

/// A replica: the binary, as the application role, anonymous callers act as admin (loopback).
async fn replica(app_url: &str, dir: &Path) -> anyhow::Result<ChildServer> {
    replica_with(app_url, dir, "").await
}

async fn replica_with(app_url: &str, dir: &Path, extra_config: &str) -> anyhow::Result<ChildServer> {
    let config = write_file(dir, "chipledgerd.toml", &format!("[auth]\ndev_anonymous_role = \"admin\"\n{extra_config}"))?;
    let config = config.to_string_lossy().to_string();
    let child = ChildServer::spawn(&["--config", &config, "--listen", "127.0.0.1:0"], &[("DATABASE_URL", app_url.to_owned())], dir)
        .await?;
    wait_until_serving(&format!("http://{}", child.addr), None).await.map_err(|e| anyhow::anyhow!("{e:#}\n{}", child.output_text()))?;
    Ok(child)
}

async fn client(child: &ChildServer) -> anyhow::Result<Client> {
    Ok(Client::new(Endpoint::from_shared(format!("http://{}", child.addr))?.connect().await?, None))
}

/// A command that always goes through: a cash sale at the cage, with a fresh id.
async fn sell(client: &mut Client, command_id: &str) -> Result<(), tonic::Status> {
    let request = pb::SellChips {
        header: header(command_id),
        cage_id: CAGE.into(),
        player_id: "P1".into(),
        chips: vec![chipledger_tests::chips(100, 1)],
        supervisor_id: None,
    };
    client.cage.sell_chips(request).await.map(drop)
}

async fn app_password_hash(superuser: &mut PgConnection) -> anyhow::Result<Option<String>> {
    Ok(sqlx::query_scalar("SELECT rolpassword FROM pg_authid WHERE rolname = 'chipledger_app'").fetch_one(superuser).await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_starts_with_only_the_app_role_and_never_changes_its_password() -> anyhow::Result<()> {
    let postgres = TestPostgres::start().await?;
    let database_url = postgres.fresh_database("app_only").await?;
    let dir = tempfile::tempdir()?;
    let migrated = migrate(&database_url, dir.path()).await?;
    assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
    let mut superuser = PgConnection::connect(&database_url).await?;
    let password = app_password_hash(&mut superuser).await?;

    // Without the admin step a service refuses to start (it would not migrate by itself).
    let empty = postgres.fresh_database("app_only_empty").await?;
    let refused = tokio::process::Command::new(chipledgerd().await?)
        .args(["--listen", "127.0.0.1:0"])
        .env("DATABASE_URL", app_url(&empty)?)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .await?;
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("chipledgerd migrate"), "{refused:?}");

    // With a signing key of its own (PKCS#8 PEM), checkpoints every second into a sink dir.
    let key = dir.path().join("checkpoint.key");
    let public_key = chipledger_store::checkpoint::CheckpointKey::load_or_generate(&key)?.public_key();
    let sink = dir.path().join("kept");
    let checkpoints = format!("[checkpoints]\nkey_file = {key:?}\ndir = {sink:?}\ninterval_seconds = 1\n");
    let child = replica_with(&app_url(&database_url)?, dir.path(), &checkpoints).await?;
    let mut cage = client(&child).await?;
    open_cage(&mut cage).await?;
    sell(&mut cage, "sale-1").await?;
    // The periodic task signs the new head by itself and keeps it in the write-once sink.
    let head = chipledger_tests::head(&mut cage).await?;
    let started = Instant::now();
    loop {
        let kept = chipledger_store::checkpoint::CheckpointSink::read_all(&sink).unwrap_or_default();
        let at_head = kept.iter().filter_map(|(_, signed)| signed.as_ref().ok()).find(|signed| {
            signed.checkpoint.position == head.global_position && signed.checkpoint.property == "default"
        });
        if let Some(signed) = at_head {
            assert_eq!(signed.verify(&[public_key]), Ok(()));
            break;
        }
        anyhow::ensure!(started.elapsed() < RECOVERY_BOUND, "no checkpoint of the head in {}: {kept:?}", sink.display());
        tokio::time::sleep(PROBE).await;
    }
    let user: String = sqlx::query_scalar("SELECT string_agg(DISTINCT usename, ',') FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        .fetch_one(&mut superuser)
        .await?;
    assert_eq!(user, "chipledger_app", "the service's connections are the application role's");
    let (status, output) = child.terminate().await?;
    assert!(status.success(), "{}", output.join("\n"));
    assert_eq!(app_password_hash(&mut superuser).await?, password, "the service changed no password");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_migrate_runs_at_the_same_moment_on_a_fresh_database_both_succeed() -> anyhow::Result<()> {
    let postgres = TestPostgres::shared().await?;
    let database_url = postgres.fresh_database("migrate_race").await?;
    let (one, two) = (tempfile::tempdir()?, tempfile::tempdir()?);
    chipledgerd().await?;
    let (first, second) = tokio::join!(migrate(&database_url, one.path()), migrate(&database_url, two.path()));
    for output in [first?, second?] {
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_survive_each_others_restarts_and_a_database_restart() -> anyhow::Result<()> {
    let mut postgres = TestPostgres::start().await?;
    let database_url = postgres.fresh_database("replica_restarts").await?;
    let dir = tempfile::tempdir()?;
    assert!(migrate(&database_url, dir.path()).await?.status.success());
    let app = app_url(&database_url)?;
    let mut a = replica(&app, dir.path()).await?;
    let b = replica(&app, dir.path()).await?;
    open_cage(&mut client(&a).await?).await?;
    sell(&mut client(&a).await?, "a-1").await?;
    sell(&mut client(&b).await?, "b-1").await?;

    // A restarts while B serves; then B restarts while A serves. Nobody resets a password.
    a.terminate().await?;
    sell(&mut client(&b).await?, "b-2").await?;
    a = replica(&app, dir.path()).await?;
    sell(&mut client(&a).await?, "a-2").await?;
    b.terminate().await?;
    sell(&mut client(&a).await?, "a-3").await?;
    let b = replica(&app, dir.path()).await?;
    sell(&mut client(&b).await?, "b-3").await?;
    sell(&mut client(&a).await?, "a-4").await?;

    // PostgreSQL crashes and comes back: both replicas answer again within the bound.
    postgres.restart_immediate().await?;
    for (child, name) in [(&a, "a"), (&b, "b")] {
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            match sell(&mut client(child).await?, &format!("{name}-after-{attempt}")).await {
                Ok(()) => break,
                Err(status) if started.elapsed() < RECOVERY_BOUND => {
                    assert_ne!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
                    tokio::time::sleep(PROBE).await;
                }
                Err(status) => anyhow::bail!("replica {name} did not recover: {status:?}\n{}", child.output_text()),
            }
        }
    }
    let mut auditor = client(&a).await?;
    let verified = auditor.audit.verify_chain(pb::VerifyChainRequest::default()).await?.into_inner();
    assert!(verified.ok, "{verified:?}");
    for child in [a, b] {
        let (status, output) = child.terminate().await?;
        assert!(status.success(), "{}", output.join("\n"));
    }
    Ok(())
}
