use std::os::unix::fs::PermissionsExt;

use chipledger_postgres::{ClusterOptions, LocalCluster, StopMode};

use crate::{commit_marker, port_open, read_markers, select_one};

/// A directory the server's OS user (`postgres` when we are root) can pass through.
fn scratch_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("chipledger-pg-test-")
        .tempdir()
        .expect("temporary directory");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

#[tokio::test]
async fn data_dir_is_initialised_once_and_reused_across_starts() {
    let scratch = scratch_dir();
    let data_dir = scratch.path().join("data");

    let cluster = LocalCluster::start(ClusterOptions::new(&data_dir))
        .await
        .expect("first start");
    assert_eq!(select_one(&cluster.url()).await, 1);
    commit_marker(&cluster.url(), "before stop").await;
    let first_port = cluster.port();
    cluster.stop(StopMode::Fast).await.expect("stop");
    assert!(!port_open(first_port), "server still listening after stop");

    let cluster = LocalCluster::start(ClusterOptions::new(&data_dir))
        .await
        .expect("second start");
    assert_eq!(read_markers(&cluster.url()).await, ["before stop"]);
    cluster.stop(StopMode::Fast).await.expect("stop");
}

#[tokio::test]
async fn immediate_restart_keeps_committed_rows_and_port() {
    let scratch = scratch_dir();
    let options = ClusterOptions {
        extra_settings: vec![("application_name".into(), "chipledger 'test'".into())],
        ..ClusterOptions::new(scratch.path().join("data"))
    };
    let mut cluster = LocalCluster::start(options).await.expect("start");
    let port = cluster.port();
    commit_marker(&cluster.url(), "committed").await;

    cluster
        .restart(StopMode::Immediate)
        .await
        .expect("crash and restart");

    assert_eq!(cluster.port(), port);
    assert_eq!(read_markers(&cluster.url()).await, ["committed"]);
    cluster.stop(StopMode::Fast).await.expect("stop");
}

#[tokio::test]
async fn dropping_a_cluster_stops_its_server() {
    let scratch = scratch_dir();
    let cluster = LocalCluster::start(ClusterOptions::new(scratch.path().join("data")))
        .await
        .expect("start");
    let port = cluster.port();
    assert!(port_open(port));
    drop(cluster);
    assert!(!port_open(port), "server still listening after drop");
}

#[tokio::test]
async fn bad_setting_names_are_refused_before_anything_starts() {
    let scratch = scratch_dir();
    let options = ClusterOptions {
        extra_settings: vec![("max_connections = 1\nfsync".into(), "off".into())],
        ..ClusterOptions::new(scratch.path().join("data"))
    };
    let error = LocalCluster::start(options).await.expect_err("must refuse");
    assert!(
        error.to_string().contains("invalid server setting name"),
        "{error}"
    );
}

#[tokio::test]
async fn a_data_dir_the_server_user_cannot_reach_is_refused_with_the_closed_directory() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("SKIP: only as root does the server run as another user");
        return;
    }
    let closed = tempfile::tempdir().expect("temporary directory");
    std::fs::set_permissions(closed.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let error = LocalCluster::start(ClusterOptions::new(closed.path().join("data")))
        .await
        .expect_err("postgres cannot enter a root-only directory");
    let message = error.to_string();
    assert!(message.contains("cannot enter"), "{message}");
    assert!(
        message.contains(&closed.path().display().to_string()),
        "{message}"
    );
}

#[tokio::test]
async fn a_second_start_on_a_running_data_dir_is_refused_and_leaves_the_first_running() {
    let scratch = scratch_dir();
    let data_dir = scratch.path().join("data");
    let first = LocalCluster::start(ClusterOptions::new(&data_dir))
        .await
        .expect("first start");

    let error = LocalCluster::start(ClusterOptions::new(&data_dir))
        .await
        .expect_err("the data directory is in use");

    assert!(error.to_string().contains("already runs"), "{error}");
    assert_eq!(
        select_one(&first.url()).await,
        1,
        "the first server was disturbed"
    );
    first.stop(StopMode::Fast).await.expect("stop");
}
