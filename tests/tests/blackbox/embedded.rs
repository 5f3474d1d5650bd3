//! The embedded default (ARCHITECTURE.md, Service): `chipledgerd` with no configuration and no
//! database URL starts its own PostgreSQL from the installed binaries under a fresh data
//! directory, migrates, serves within seconds, and on SIGTERM stops cleanly, its PostgreSQL
//! included (no postmaster left running, no postmaster.pid left behind).

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use chipledger_tests::binary::{ChildServer, process_alive};
use chipledger_tests::wait_until_serving;

/// "Within seconds" on a shared 2-core machine: initdb, start, migrate, serve.
const SERVE_BOUND: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chipledgerd_without_configuration_serves_embedded_postgres_and_stops_cleanly_on_sigterm() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    // A working directory other users may traverse (the cluster runs as `postgres` when we are root).
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    let data_dir = dir.path().join("data");
    let data_arg = data_dir.to_string_lossy().to_string();

    // Build (or find) the binary first: only the server's own start-up is timed.
    chipledger_tests::binary::chipledgerd().await?;
    let started = Instant::now();
    let child = ChildServer::spawn(&["--data-dir", &data_arg, "--listen", "127.0.0.1:0"], &[], dir.path()).await?;
    let url = format!("http://{}", child.addr);
    wait_until_serving(&url, None).await.map_err(|error| anyhow::anyhow!("{error:#}\n{}", child.output_text()))?;
    let serving_after = started.elapsed();
    eprintln!("chipledgerd (embedded PostgreSQL, fresh data dir) SERVING after {serving_after:?}");
    assert!(serving_after < SERVE_BOUND, "took {serving_after:?}");

    let pid_file = data_dir.join("pgdata").join("postmaster.pid");
    let pid_text = std::fs::read_to_string(&pid_file)
        .map_err(|error| anyhow::anyhow!("{}: {error}\n{}", pid_file.display(), child.output_text()))?;
    let postmaster: i32 = pid_text.lines().next().unwrap_or_default().trim().parse()?;
    assert!(process_alive(postmaster), "the embedded postmaster {postmaster} runs while serving");

    let stopping = Instant::now();
    let (status, output) = child.terminate().await?;
    eprintln!("chipledgerd stopped {:?} after SIGTERM", stopping.elapsed());
    assert!(status.success(), "exit {status}:\n{}", output.join("\n"));
    assert!(!pid_file.exists(), "postmaster.pid left behind:\n{}", output.join("\n"));
    assert!(!process_alive(postmaster), "postmaster {postmaster} still running after chipledgerd exited");

    // The data directory is kept between runs (ARCHITECTURE.md): a second start reuses it.
    assert!(data_dir.join("pgdata").join("PG_VERSION").exists());
    Ok(())
}
