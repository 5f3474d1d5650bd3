//! The backup and restore drill of docs/OPERATIONS.md, run as written: `pg_dump -Fc` of a live
//! ledger, `pg_restore --no-owner --no-privileges` into a fresh PostgreSQL where none of the
//! chipledger roles exist, `chipledgerd migrate` (roles, ownership, functions, grants), then
//! chipledgerd as the application role: it serves, the log verifies against the checkpoint
//! signed before the backup, and a refusal recorded before the backup still answers.

use std::path::PathBuf;
use std::process::Stdio;

use chipledger_postgres::TestPostgres;
use chipledger_proto::v1 as pb;
use chipledger_tests::binary::{ChildServer, chipledgerd};
use chipledger_tests::{Client, TestServer, app_password_file, app_url, header, principal, wait_until_serving, write_file};
use tonic::Code;

use crate::scenario::{self, TABLE, cash_buy_in};

fn pg_tool(name: &str) -> PathBuf {
    let bin = std::env::var("CHIPLEDGER_PG_BIN").unwrap_or_else(|_| "/usr/lib/postgresql/15/bin".to_owned());
    PathBuf::from(bin).join(name)
}

async fn run(command: &mut tokio::process::Command) -> anyhow::Result<()> {
    let output = command.stdin(Stdio::null()).output().await?;
    anyhow::ensure!(
        output.status.success(),
        "{command:?}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_into_a_fresh_postgresql_serves_and_verifies_against_the_checkpoint_signed_before_the_backup() -> anyhow::Result<()> {
    let server = TestServer::start("backup").await?;
    let mut floor = server.client(principal::FLOOR).await?;
    let mut cage = server.client(principal::CAGE).await?;
    let mut dealer = server.client(principal::DEALER).await?;
    let mut auditor = server.client(principal::AUDITOR).await?;
    scenario::stocked_table(&mut cage, &mut floor, TABLE).await?;
    dealer.table.buy_in(cash_buy_in("buy-P1", TABLE, 1, "P1", 20_000)).await?;
    let rathole = pb::RemoveChips { header: header("rathole-1"), table_id: TABLE.into(), seat: 1, amount_cents: 5_000, player_id: None };
    let refused = dealer.table.remove_chips(rathole.clone()).await.expect_err("ratholing is refused");
    let checkpoint = auditor.audit.sign_checkpoint(pb::SignCheckpointRequest::default()).await?.into_inner().document;

    // Backup: a custom-format dump of the database.
    let dir = tempfile::tempdir()?;
    let dump = dir.path().join("chipledger.dump");
    run(tokio::process::Command::new(pg_tool("pg_dump")).arg("--format=custom").arg("--file").arg(&dump).arg(&server.database_url))
        .await?;
    let property_id = server.property_id.clone();
    server.stop().await?;

    // Restore into a fresh PostgreSQL: no chipledger role exists there.
    let fresh = TestPostgres::start().await?;
    let restored = fresh.fresh_database("restored").await?;
    let mut superuser = <sqlx::PgConnection as sqlx::Connection>::connect(&restored).await?;
    let roles: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'chipledger%'")
        .fetch_one(&mut superuser)
        .await?;
    assert_eq!(roles, 0, "the fresh server knows no chipledger role");
    run(tokio::process::Command::new(pg_tool("pg_restore"))
        .args(["--no-owner", "--no-privileges", "--exit-on-error", "--dbname"])
        .arg(&restored)
        .arg(&dump))
    .await?;
    let password = app_password_file(dir.path())?;
    run(tokio::process::Command::new(chipledgerd().await?)
        .args(["migrate", "--database-url", &restored, "--app-password-file"])
        .arg(&password)
        .current_dir(dir.path()))
    .await?;

    // chipledgerd as the application role, on the restored database.
    let config = write_file(dir.path(), "chipledgerd.toml", "[auth]\ndev_anonymous_role = \"admin\"\n")?;
    let config = config.to_string_lossy().to_string();
    let child = ChildServer::spawn(
        &["--config", &config, "--listen", "127.0.0.1:0", "--property-id", &property_id],
        &[("DATABASE_URL", app_url(&restored)?)],
        dir.path(),
    )
    .await?;
    let url = format!("http://{}", child.addr);
    wait_until_serving(&url, None).await?;
    let mut client = Client::new(tonic::transport::Endpoint::from_shared(url)?.connect().await?, None);
    let verified = client
        .audit
        .verify_chain(pb::VerifyChainRequest { checkpoints: vec![checkpoint], projections: true, ..Default::default() })
        .await?
        .into_inner();
    assert!(verified.ok, "{verified:?}");
    assert_eq!(verified.checkpoints.len(), 1);
    assert!(verified.checkpoints[0].agrees, "{verified:?}");
    assert_eq!(verified.refusals_checked, 1);
    // The refusal kept in the backup still answers its command id, byte for byte.
    let again = client.table.remove_chips(rathole).await.expect_err("remembered");
    assert_eq!((again.code(), again.details()), (refused.code(), refused.details()));
    assert_eq!(again.code(), Code::FailedPrecondition);
    // And the restored ledger takes new commands.
    client.table.tip(pb::Tip { header: header("tip-after-restore"), table_id: TABLE.into(), seat: 1, amount_cents: 100 }).await?;
    let (status, output) = child.terminate().await?;
    assert!(status.success(), "{}", output.join("\n"));
    Ok(())
}
