//! Bearer tokens never cross a network in clear by accident: `chipledgerd` configured with
//! token principals, no TLS and a non-loopback listen address refuses to start, naming the fix;
//! with `--allow-plaintext-tokens` it starts and warns loudly. Loopback stays allowed.

use chipledger_postgres::TestPostgres;
use chipledger_tests::binary::{ChildServer, run_to_exit};
use chipledger_tests::write_file;

const CONFIG: &str = "[[auth.principals]]\nid = \"dan\"\nrole = \"dealer\"\ntokens = [\"dan-token-0123456789\"]\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plaintext_bearer_tokens_on_0_0_0_0_refuse_to_start_unless_explicitly_allowed() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let config = write_file(dir.path(), "chipledgerd.toml", CONFIG)?;
    let config = config.to_string_lossy().to_string();

    let (status, output) = run_to_exit(&["--config", &config, "--listen", "0.0.0.0:0"], &[], dir.path()).await?;
    assert_eq!(status.code(), Some(1), "{output}");
    assert!(output.contains("tokens would cross the network in clear"), "{output}");
    assert!(output.contains("--allow-plaintext-tokens"), "the refusal names the way out: {output}");
    assert!(!output.contains("listening on"), "{output}");

    // Explicitly allowed: it starts and says what it exposes.
    let postgres = TestPostgres::start().await?;
    let database_url = postgres.fresh_database("plaintext").await?;
    // The admin step first: the service never migrates a database it does not own.
    chipledger_tests::prepare_database(&database_url).await?;
    let env = [("DATABASE_URL", database_url)];
    let child = ChildServer::spawn(&["--config", &config, "--listen", "0.0.0.0:0", "--allow-plaintext-tokens"], &env, dir.path()).await?;
    // The warning follows the listen line; its reader may be a moment behind.
    let started = std::time::Instant::now();
    while !child.output_text().contains("WARNING: bearer tokens accepted over plaintext") {
        anyhow::ensure!(started.elapsed() < std::time::Duration::from_secs(10), "no warning: {}", child.output_text());
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (status, output) = child.terminate().await?;
    assert!(status.success(), "{}", output.join("\n"));
    Ok(())
}
