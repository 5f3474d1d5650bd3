//! A PostgreSQL container for tests, through testcontainers. The image is any image compatible
//! with the official `postgres` one (env `POSTGRES_*`, readiness log line): ours is built offline
//! by `deploy/postgres-image/build.sh`.

use std::ffi::OsStr;
use std::time::Duration;

use testcontainers_modules::postgres::Postgres;
use testcontainers_modules::testcontainers::bollard::Docker;
use testcontainers_modules::testcontainers::bollard::query_parameters::KillContainerOptions;
use testcontainers_modules::testcontainers::core::IntoContainerPort;
use testcontainers_modules::testcontainers::runners::AsyncRunner;
use testcontainers_modules::testcontainers::{ContainerAsync, ImageExt};

use crate::cluster::{free_port, random_hex};
use crate::reaper::Reaper;
use crate::{PgError, sql};

const USER: &str = "postgres";
/// Test-only credentials: the container listens on a local port of a test machine.
const PASSWORD: &str = "postgres";
const CONTAINER_PORT: u16 = 5432;
/// Every container we start carries it, so leftovers can be found: `docker ps -aq --filter label=...`.
pub(crate) const LABEL: &str = "org.chipledger.test-postgres";
/// Label with the value of env `CHIPLEDGER_TEST_RUN` (when set): a CI run cleans up after itself
/// without touching the containers of other runs on the same machine.
const RUN_LABEL: &str = "org.chipledger.test-run";
const RUN_ENV: &str = "CHIPLEDGER_TEST_RUN";
/// Bounds: reaching the Docker engine, the whole container start, a killed container stopping.
const DOCKER_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
const STARTUP_TIMEOUT: Duration = Duration::from_secs(120);
const STOP_POLL_ATTEMPTS: u32 = 200;
const STOP_POLL_PAUSE: Duration = Duration::from_millis(50);

/// A running container with its host port fixed at creation, so the URL survives restarts.
#[derive(Debug)]
pub(crate) struct ContainerServer {
    image: String,
    host: String,
    port: u16,
    /// `None` only while being dropped.
    container: Option<ContainerAsync<Postgres>>,
    /// Removes the container when we go away (needs the `docker` CLI). Without it, the
    /// container's own drop removes it, but a killed process would leave it behind.
    reaper: Option<Reaper>,
}

/// Is the Docker engine reachable and does it hold `image`? (No registry: we never pull.)
pub(crate) async fn probe(image: &str) -> Result<(), PgError> {
    let unavailable = |reason: String| PgError::ContainerUnavailable { reason };
    let docker = Docker::connect_with_defaults()
        .map_err(|e| unavailable(format!("cannot reach the Docker engine: {e}")))?;
    match tokio::time::timeout(DOCKER_PROBE_TIMEOUT, docker.ping()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(unavailable(format!("Docker engine not reachable: {e}"))),
        Err(_) => {
            return Err(unavailable(
                "Docker engine did not answer a ping in 5 s".into(),
            ));
        }
    }
    docker.inspect_image(image).await.map_err(|e| {
        unavailable(format!(
            "image {image} is not present locally ({e}); build it with deploy/postgres-image/build.sh"
        ))
    })?;
    Ok(())
}

impl ContainerServer {
    pub(crate) async fn start(image: &str) -> Result<ContainerServer, PgError> {
        let (name, tag) = split_image(image);
        let host_port = free_port()?;
        // Named in advance so the cleanup can be armed before the container exists: a process
        // killed while the container starts leaves nothing behind either.
        let container_name = format!(
            "chipledger-test-pg-{}-{}",
            std::process::id(),
            random_hex::<6>()?
        );
        let reaper = match docker_cli() {
            Some(docker) => Some(Reaper::arm(
                r#""$1" rm -f -v "$2""#,
                &[docker.as_os_str(), OsStr::new(&container_name)],
                None,
            )?),
            None => {
                tracing::warn!(
                    "no `docker` CLI on PATH: a killed test process may leave its container behind"
                );
                None
            }
        };
        let container = Postgres::default()
            .with_db_name(sql::DATABASE)
            .with_user(USER)
            .with_password(PASSWORD)
            .with_name(name)
            .with_tag(tag)
            .with_mapped_port(host_port, CONTAINER_PORT.tcp())
            .with_container_name(&container_name)
            .with_label(LABEL, "true")
            .with_label(RUN_LABEL, std::env::var(RUN_ENV).unwrap_or_default())
            // Throwaway data: skip initdb's final fsync of every file (seconds on slow disks).
            .with_env_var("POSTGRES_INITDB_ARGS", "--no-sync")
            .with_cmd([
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
            ])
            .with_startup_timeout(STARTUP_TIMEOUT)
            .start()
            .await?;
        let host = container.get_host().await?.to_string();
        let port = container.get_host_port_ipv4(CONTAINER_PORT).await?;
        let server = ContainerServer {
            image: image.to_owned(),
            host,
            port,
            container: Some(container),
            reaper,
        };
        sql::wait_until_accepting(&server.url_to(sql::DATABASE), port).await?;
        Ok(server)
    }

    pub(crate) fn image(&self) -> &str {
        &self.image
    }

    pub(crate) fn url_to(&self, database: &str) -> String {
        sql::url(USER, PASSWORD, &self.host, self.port, database)
    }

    /// SIGKILL every process in the container (no shutdown at all), start it again on the same
    /// volume and port, and wait until it accepts connections again (after crash recovery).
    pub(crate) async fn restart_immediate(&mut self) -> Result<(), PgError> {
        let id = self.id().to_owned();
        let docker = Docker::connect_with_defaults()?;
        docker
            .kill_container(
                &id,
                Some(KillContainerOptions {
                    signal: "SIGKILL".into(),
                }),
            )
            .await?;
        let mut stopped = false;
        for _ in 0..STOP_POLL_ATTEMPTS {
            let inspect = docker.inspect_container(&id, None).await?;
            if !inspect
                .state
                .and_then(|state| state.running)
                .unwrap_or(false)
            {
                stopped = true;
                break;
            }
            tokio::time::sleep(STOP_POLL_PAUSE).await;
        }
        if !stopped {
            return Err(PgError::ContainerUnavailable {
                reason: format!("container {id} still running after SIGKILL"),
            });
        }
        docker.start_container(&id, None).await?;
        sql::wait_until_accepting(&self.url_to(sql::DATABASE), self.port).await
    }

    fn id(&self) -> &str {
        self.container
            .as_ref()
            .map_or("", |container| container.id())
    }
}

impl Drop for ContainerServer {
    fn drop(&mut self) {
        if let Some(reaper) = self.reaper.take() {
            drop(reaper); // `docker rm -f -v`, waited for
            // Removed already: skip testcontainers' own (asynchronous) removal.
            std::mem::forget(self.container.take());
        }
    }
}

/// `name[:tag]` (a registry port is not a tag: the tag comes after the last `/`).
fn split_image(image: &str) -> (&str, &str) {
    match image.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name, tag),
        _ => (image, "latest"),
    }
}

fn docker_cli() -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("docker"))
        .find(|path| path.is_file())
}
