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
/// How long a postmaster that removed its pid file may take to be gone.
const EXIT_BOUND: Duration = Duration::from_secs(10);

/// A working directory other users may traverse (the cluster runs as `postgres` when we are
/// root), and the data directory chipledgerd is given in it (`--data-dir`).
fn working_dir() -> anyhow::Result<(tempfile::TempDir, std::path::PathBuf, String)> {
    let dir = tempfile::tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    let data_dir = dir.path().join("data");
    let data_arg = data_dir.to_string_lossy().to_string();
    Ok((dir, data_dir, data_arg))
}

/// The pid in the embedded cluster's `postmaster.pid`.
fn postmaster_pid(data_dir: &std::path::Path) -> anyhow::Result<i32> {
    let pid_file = data_dir.join("pgdata").join("postmaster.pid");
    let text = std::fs::read_to_string(&pid_file).map_err(|error| anyhow::anyhow!("{}: {error}", pid_file.display()))?;
    Ok(text.lines().next().unwrap_or_default().trim().parse()?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chipledgerd_without_configuration_serves_embedded_postgres_and_stops_cleanly_on_sigterm() -> anyhow::Result<()> {
    let (dir, data_dir, data_arg) = working_dir()?;

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
    let postmaster = postmaster_pid(&data_dir).map_err(|error| anyhow::anyhow!("{error:#}\n{}", child.output_text()))?;
    assert!(process_alive(postmaster), "the embedded postmaster {postmaster} runs while serving");

    let stopping = Instant::now();
    let (status, output) = child.terminate().await?;
    eprintln!("chipledgerd stopped {:?} after SIGTERM", stopping.elapsed());
    assert!(status.success(), "exit {status}:\n{}", output.join("\n"));
    assert!(!pid_file.exists(), "postmaster.pid left behind:\n{}", output.join("\n"));
    // Its log went to a pipe, as to a log collector: plain text, no terminal colour codes.
    assert!(output.iter().any(|line| line.contains(" INFO ")), "no log line:\n{}", output.join("\n"));
    assert!(!output.iter().any(|line| line.contains('\u{1b}')), "escape sequences in the log:\n{}", output.join("\n"));
    // `pg_ctl stop -w` returns once the postmaster removed its pid file, which it does as its
    // last act: the process itself is gone a moment later (bounded).
    let exiting = Instant::now();
    while process_alive(postmaster) {
        assert!(exiting.elapsed() < EXIT_BOUND, "postmaster {postmaster} still running {EXIT_BOUND:?} after chipledgerd exited");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The data directory is kept between runs (ARCHITECTURE.md): a second start reuses it.
    assert!(data_dir.join("pgdata").join("PG_VERSION").exists());
    Ok(())
}

/// After kill -9 of chipledgerd its embedded PostgreSQL is still up (or being stopped by the
/// dead process's cleanup): a start right away takes the cluster over (no "already runs"), its
/// data intact, checkpoints signed with the key kept in the data directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_right_after_kill_9_takes_over_the_embedded_cluster_with_its_data() -> anyhow::Result<()> {
    use chipledger_proto::v1 as pb;
    let (dir, _, data_arg) = working_dir()?;
    let args = ["--data-dir", data_arg.as_str(), "--listen", "127.0.0.1:0"];
    let first = ChildServer::spawn(&args, &[], dir.path()).await?;
    let url = format!("http://{}", first.addr);
    wait_until_serving(&url, None).await?;
    let mut client = chipledger_tests::Client::new(tonic::transport::Endpoint::from_shared(url)?.connect().await?, None);
    crate::scenario::open_cage(&mut client).await?;
    let key = client.audit.get_checkpoint_key(pb::GetCheckpointKeyRequest {}).await?.into_inner();
    let head = chipledger_tests::head(&mut client).await?;

    let pid = libc::pid_t::try_from(first.pid().expect("running"))?;
    // SAFETY: kill(2) on the child we spawned.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let started = Instant::now();
    let second = ChildServer::spawn(&args, &[], dir.path()).await?;
    let url = format!("http://{}", second.addr);
    wait_until_serving(&url, None).await.map_err(|error| anyhow::anyhow!("{error:#}\n{}", second.output_text()))?;
    eprintln!("restart after kill -9 SERVING after {:?}", started.elapsed());
    let mut client = chipledger_tests::Client::new(tonic::transport::Endpoint::from_shared(url)?.connect().await?, None);
    assert_eq!(chipledger_tests::head(&mut client).await?, head, "the data is there");
    let again = client.audit.get_checkpoint_key(pb::GetCheckpointKeyRequest {}).await?.into_inner();
    assert_eq!(again.public_key_hex, key.public_key_hex, "the same signing key");
    let verified = client.audit.verify_chain(pb::VerifyChainRequest::default()).await?.into_inner();
    assert!(verified.ok, "{verified:?}");
    let (status, output) = second.terminate().await?;
    assert!(status.success(), "exit {status}:\n{}", output.join("\n"));
    assert!(!dir.path().join("data").join("pgdata").join("postmaster.pid").exists(), "{}", output.join("\n"));
    Ok(())
}

/// How long chipledgerd may take to start its killed PostgreSQL again (crash recovery included).
const RESTART_BOUND: Duration = Duration::from_secs(60);

/// chipledgerd serving from a fresh data directory (kept until the first value is dropped), and
/// a client of it that opened the cage.
async fn serving_with_a_cage() -> anyhow::Result<(tempfile::TempDir, std::path::PathBuf, ChildServer, chipledger_tests::Client)> {
    let (dir, data_dir, data_arg) = working_dir()?;
    let child = ChildServer::spawn(&["--data-dir", &data_arg, "--listen", "127.0.0.1:0"], &[], dir.path()).await?;
    let url = format!("http://{}", child.addr);
    wait_until_serving(&url, None).await?;
    let mut client = chipledger_tests::Client::new(tonic::transport::Endpoint::from_shared(url)?.connect().await?, None);
    crate::scenario::open_cage(&mut client).await?;
    Ok((dir, data_dir, child, client))
}

/// kill -9 of the embedded postmaster while chipledgerd runs: chipledgerd starts it again by
/// itself (crash recovery from the WAL), the acknowledged history is all there and verifies, and
/// a command resent with its id while the service answers UNAVAILABLE is recorded once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_embedded_postgres_is_started_again_and_the_service_serves_with_its_data() -> anyhow::Result<()> {
    use chipledger_proto::v1 as pb;
    let (_dir, data_dir, child, mut client) = serving_with_a_cage().await?;
    let head = chipledger_tests::head(&mut client).await?;

    let pid_file = data_dir.join("pgdata").join("postmaster.pid");
    let killed = postmaster_pid(&data_dir)?;
    // SAFETY: kill(2) on the postmaster of the cluster this test's chipledgerd owns.
    assert_eq!(unsafe { libc::kill(killed, libc::SIGKILL) }, 0);
    let started = Instant::now();
    child.wait_for_output("the embedded PostgreSQL runs again", 1, RESTART_BOUND).await?;
    let again = postmaster_pid(&data_dir)?;
    eprintln!("embedded PostgreSQL (pid {killed}) killed; running again as pid {again} after {:?}", started.elapsed());
    assert_ne!(again, killed, "a new postmaster");
    assert!(process_alive(again), "the new postmaster {again} runs");

    // A client's retry: the same command id until the service takes it (UNAVAILABLE while its
    // health probe has not yet seen the database back).
    let opened = loop {
        match crate::scenario::open_nlhe_table(&mut client, "T7").await {
            Ok(result) => break result,
            Err(error) => {
                let status = error.downcast_ref::<tonic::Status>().map(|status| status.code());
                assert_eq!(status, Some(tonic::Code::Unavailable), "only UNAVAILABLE while the database comes back: {error:#}");
                assert!(started.elapsed() < RESTART_BOUND, "no command taken {RESTART_BOUND:?} after the kill: {error:#}\n{}", child.output_text());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    let first_new = opened.events.first().map(|event| event.global_position);
    assert_eq!(first_new, Some(head.global_position + 1), "recorded right after what was there: {opened:?} {head:?}");
    let resent = crate::scenario::open_nlhe_table(&mut client, "T7").await?;
    assert!(resent.replayed && resent.events == opened.events, "a resend answers the recorded result: {resent:?}");
    let after = chipledger_tests::head(&mut client).await?;
    let verified = client.audit.verify_chain(pb::VerifyChainRequest::default()).await?.into_inner();
    assert!(verified.ok, "{verified:?}");
    assert_eq!((verified.events_checked, verified.head), (after.global_position, Some(after)), "every event checked");

    let (status, output) = child.terminate().await?;
    assert!(status.success(), "exit {status}:\n{}", output.join("\n"));
    assert!(!pid_file.exists(), "postmaster.pid left behind:\n{}", output.join("\n"));
    Ok(())
}

/// The port in the embedded cluster's `postmaster.pid` (its fourth line).
fn postmaster_port(data_dir: &std::path::Path) -> anyhow::Result<u16> {
    let pid_file = data_dir.join("pgdata").join("postmaster.pid");
    let text = std::fs::read_to_string(&pid_file).map_err(|error| anyhow::anyhow!("{}: {error}", pid_file.display()))?;
    Ok(text.lines().nth(3).unwrap_or_default().trim().parse()?)
}

/// The operations pass: with the embedded postmaster killed, another local process took its
/// TCP port, asked for a cleartext password, and was sent the application role's by the pool
/// and the health probe (27 times in 12 s); the password then logged in to the real cluster.
/// The service reaches its cluster through the socket in the cluster's own data directory: a
/// listener on the freed port hears nothing from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_never_sends_its_credentials_to_whatever_takes_the_embedded_port() -> anyhow::Result<()> {
    let (_dir, data_dir, child, mut client) = serving_with_a_cage().await?;
    let port = postmaster_port(&data_dir)?;
    // Kill the postmaster and take its port before the keeper starts it again (again, if the
    // keeper was first: bounded).
    let started = Instant::now();
    let mut restarts = 0;
    let squatter = loop {
        let killed = postmaster_pid(&data_dir)?;
        // SAFETY: kill(2) on the postmaster of the cluster this test's chipledgerd owns.
        assert_eq!(unsafe { libc::kill(killed, libc::SIGKILL) }, 0);
        let taken = loop {
            match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
                Ok(listener) => break Some(listener),
                Err(_) if process_alive(killed) => tokio::task::yield_now().await,
                Err(_) => break None,
            }
        };
        if let Some(listener) = taken {
            break listener;
        }
        anyhow::ensure!(started.elapsed() < RESTART_BOUND, "the port was never free before the keeper took it back");
        restarts += 1;
        child.wait_for_output("the embedded PostgreSQL runs again", restarts, RESTART_BOUND).await?;
    };
    let heard = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counting = heard.clone();
    let listening = tokio::spawn(async move {
        while let Ok((connection, _)) = squatter.accept().await {
            counting.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(connection);
        }
    });
    // The keeper cannot start the cluster on a taken port; meanwhile the pool and the probe try
    // to reach it, and a command fails.
    child.wait_for_output("the embedded PostgreSQL did not start", 1, RESTART_BOUND).await?;
    let refused = crate::scenario::open_nlhe_table(&mut client, "T8").await.expect_err("no database");
    assert_eq!(refused.downcast_ref::<tonic::Status>().map(|status| status.code()), Some(tonic::Code::Unavailable), "{refused:#}");
    child.wait_for_output("the embedded PostgreSQL did not start", 2, RESTART_BOUND).await?;
    listening.abort();
    assert_eq!(heard.load(std::sync::atomic::Ordering::SeqCst), 0, "connections made to the port's new holder");
    // The port free again, the cluster runs again and the service with it.
    let _ = listening.await;
    child.wait_for_output("the embedded PostgreSQL runs again", restarts + 1, RESTART_BOUND).await?;
    let opened = loop {
        match crate::scenario::open_nlhe_table(&mut client, "T8").await {
            Ok(result) => break result,
            Err(error) => {
                anyhow::ensure!(started.elapsed() < 3 * RESTART_BOUND, "no command taken after the port was freed: {error:#}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    assert!(!opened.events.is_empty());
    let (status, output) = child.terminate().await?;
    assert!(status.success(), "exit {status}:\n{}", output.join("\n"));
    Ok(())
}
