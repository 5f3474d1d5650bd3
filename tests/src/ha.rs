//! A PostgreSQL cluster that fails over, for tests: the compose stack of `deploy/ha` (three etcd
//! members, three Patroni nodes with synchronous replication, HAProxy routing to the primary)
//! under a compose project of its own, hence on a Docker network of its own. Its containers carry
//! `org.chipledger.test-run=$CHIPLEDGER_TEST_RUN`; the stack is taken down when [`HaStack`] is
//! dropped, and by a [`Reaper`] when the test process dies without dropping it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use chipledger_postgres::Reaper;
use sqlx::Connection as _;
use tokio::process::Command;

/// The image of every role, built by `deploy/ha/build.sh`.
pub const HA_IMAGE: &str = "chipledger/patroni:15";
/// The PostgreSQL services of the compose file (Patroni member names).
pub const NODES: [&str; 3] = ["pg1", "pg2", "pg3"];
/// Bound on the stack coming up: etcd quorum, bootstrap, two replicas copied, the router.
pub const READY_BOUND: Duration = Duration::from_secs(240);
/// Bound on one `docker`/compose command.
const COMMAND_BOUND: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(250);
/// The admin step's role and database, made by the stack's bootstrap hook (post-bootstrap.sh).
pub const ADMIN_ROLE: &str = "chipledger";
pub const DATABASE: &str = "chipledger";

/// A member as `patronictl list -f json` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    /// "Leader", "Sync Standby", "Replica".
    pub role: String,
    /// "running", "streaming", "starting", "creating replica", ...
    pub state: String,
    pub timeline: Option<i64>,
}

impl Member {
    pub fn is_running(&self) -> bool {
        matches!(self.state.as_str(), "running" | "streaming")
    }
}

/// The leader, when exactly one member leads and runs.
pub fn running_leader(members: &[Member]) -> Option<&Member> {
    let mut leaders = members.iter().filter(|member| member.role == "Leader" && member.is_running());
    match (leaders.next(), leaders.next()) {
        (Some(leader), None) => Some(leader),
        _ => None,
    }
}

/// The compose command of this machine (`docker compose` v2 or `docker-compose` v1), Docker
/// reachable and the image present; else what is missing.
pub async fn prerequisites() -> Result<Vec<String>, String> {
    let answers = |program: &str, args: &[&str]| {
        let mut command = Command::new(program);
        command.args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        async move { matches!(tokio::time::timeout(COMMAND_BOUND, command.status()).await, Ok(Ok(status)) if status.success()) }
    };
    if !answers("docker", &["info"]).await {
        return Err("no Docker engine reachable (`docker info` fails)".into());
    }
    if !answers("docker", &["image", "inspect", HA_IMAGE]).await {
        return Err(format!("image {HA_IMAGE} missing (build it: deploy/ha/build.sh)"));
    }
    if answers("docker", &["compose", "version"]).await {
        return Ok(vec!["docker".into(), "compose".into()]);
    }
    if answers("docker-compose", &["version"]).await {
        return Ok(vec!["docker-compose".into()]);
    }
    Err("neither `docker compose` nor `docker-compose` is installed".into())
}

/// A running stack (see the module doc).
pub struct HaStack {
    /// The compose program and its arguments up to the subcommand (`-f FILE -p PROJECT`).
    compose: Vec<String>,
    pub project: String,
    admin_password: String,
    /// HAProxy's primary port (5000 in the stack), published on 127.0.0.1.
    pub primary_port: u16,
    reaper: Option<Reaper>,
}

fn compose_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/ha/compose.yaml")
}

fn secret() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl HaStack {
    /// `compose up` under a fresh project name, then waits (bounded by [`READY_BOUND`]) until a
    /// leader, a synchronous standby and a replica run and the admin role answers through the router.
    pub async fn start(compose_program: Vec<String>) -> anyhow::Result<HaStack> {
        let project = format!("chipledger-ha-{}", &secret()[..10]);
        let file = compose_file();
        let mut compose = compose_program;
        compose.extend(["-f".into(), file.display().to_string(), "-p".into(), project.clone()]);
        // Armed before `up`: whatever part of the stack exists goes when we do. `down` reads the
        // file, whose required variables need values (any will do to remove things).
        let script = "export PATRONI_SUPERUSER_PASSWORD=x PATRONI_REPLICATION_PASSWORD=x CHIPLEDGER_ADMIN_PASSWORD=x; \
                      \"$@\" down -v --remove-orphans -t 0";
        let args: Vec<&OsStr> = compose.iter().map(OsStr::new).collect();
        let reaper = Reaper::watch(script, &args).context("arm the stack's cleanup")?;
        let mut stack = HaStack {
            compose,
            project,
            admin_password: secret(),
            primary_port: 0,
            reaper: Some(reaper),
        };
        stack.run_compose(&["up", "-d"]).await.context("compose up")?;
        let port = stack.run_compose(&["port", "haproxy", "5000"]).await?;
        stack.primary_port = port
            .trim()
            .rsplit_once(':')
            .and_then(|(_, port)| port.parse().ok())
            .with_context(|| format!("published port of haproxy:5000: {port:?}"))?;
        stack.wait_until_ready().await?;
        Ok(stack)
    }

    /// The admin step's URL through the router's primary port.
    pub fn admin_url(&self) -> String {
        format!("postgres://{ADMIN_ROLE}:{}@127.0.0.1:{}/{DATABASE}", self.admin_password, self.primary_port)
    }

    async fn run_compose(&self, args: &[&str]) -> anyhow::Result<String> {
        let mut command = Command::new(&self.compose[0]);
        command
            .args(&self.compose[1..])
            .args(args)
            .env("PATRONI_SUPERUSER_PASSWORD", format!("su-{}", self.admin_password))
            .env("PATRONI_REPLICATION_PASSWORD", format!("repl-{}", self.admin_password))
            .env("CHIPLEDGER_ADMIN_PASSWORD", &self.admin_password)
            .env("CHIPLEDGER_HA_PRIMARY_PUBLISH", "127.0.0.1:")
            .env("CHIPLEDGER_HA_REPLICA_PUBLISH", "127.0.0.1:")
            .env("CHIPLEDGER_HA_IMAGE", HA_IMAGE);
        output(command, &format!("compose {}", args.join(" "))).await
    }

    /// The container of a service (`pg1`, `haproxy`, ...).
    pub async fn container(&self, service: &str) -> anyhow::Result<String> {
        let id = self.run_compose(&["ps", "-q", service]).await?.trim().to_string();
        anyhow::ensure!(!id.is_empty(), "no container for {service}");
        Ok(id)
    }

    /// The members as Patroni sees them, asked on `node`'s container.
    pub async fn members(&self, node: &str) -> anyhow::Result<Vec<Member>> {
        let container = self.container(node).await?;
        let mut command = Command::new("docker");
        command.args(["exec", &container, "patronictl", "-c", "/etc/patroni/patroni.yml", "list", "-f", "json"]);
        let text = output(command, "patronictl list").await?;
        let rows: Vec<serde_json::Value> = serde_json::from_str(&text).with_context(|| format!("patronictl list: {text}"))?;
        Ok(rows
            .iter()
            .map(|row| Member {
                name: row["Member"].as_str().unwrap_or_default().to_string(),
                role: row["Role"].as_str().unwrap_or_default().to_string(),
                state: row["State"].as_str().unwrap_or_default().to_string(),
                timeline: row["TL"].as_i64(),
            })
            .collect())
    }

    /// Polls [`HaStack::members`] on `node` until `done` holds (bounded): the members then.
    pub async fn wait_for_members(
        &self,
        node: &str,
        bound: Duration,
        what: &str,
        done: impl Fn(&[Member]) -> bool,
    ) -> anyhow::Result<Vec<Member>> {
        let started = Instant::now();
        let mut last;
        loop {
            match self.members(node).await {
                Ok(members) if done(&members) => return Ok(members),
                Ok(members) => last = format!("{members:?}"),
                Err(error) => last = format!("{error:#}"),
            }
            if started.elapsed() > bound {
                bail!("{what}: not within {bound:?}; last seen: {last}");
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn wait_until_ready(&self) -> anyhow::Result<()> {
        let started = Instant::now();
        self.wait_for_members(NODES[0], READY_BOUND, "a leader, a synchronous standby and a replica", |members| {
            running_leader(members).is_some()
                && members.iter().filter(|member| member.role == "Sync Standby" && member.is_running()).count() == 1
                && members.iter().filter(|member| member.role == "Replica" && member.is_running()).count() == 1
        })
        .await?;
        // The router has found the primary and the bootstrap hook made the admin role.
        loop {
            let answer = async {
                let mut connection = sqlx::PgConnection::connect(&self.admin_url()).await?;
                sqlx::query_scalar::<_, i32>("SELECT 1").fetch_one(&mut connection).await
            };
            match tokio::time::timeout(Duration::from_secs(5), answer).await {
                Ok(Ok(_)) => return Ok(()),
                Ok(Err(error)) if started.elapsed() > READY_BOUND => bail!("the admin role does not answer through the router: {error}"),
                _ if started.elapsed() > READY_BOUND => bail!("the admin role does not answer through the router"),
                _ => tokio::time::sleep(POLL).await,
            }
        }
    }

    /// `docker kill` (SIGKILL) of a service's container: the host dies, nothing is shut down.
    pub async fn kill(&self, service: &str) -> anyhow::Result<()> {
        let container = self.container(service).await?;
        let mut command = Command::new("docker");
        command.args(["kill", &container]);
        output(command, "docker kill").await.map(drop)
    }

    /// The address of a service's container on the stack's network.
    pub async fn address(&self, service: &str) -> anyhow::Result<String> {
        let container = self.container(service).await?;
        let mut command = Command::new("docker");
        command.args(["inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", &container]);
        Ok(output(command, "docker inspect").await?.trim().to_string())
    }
}

impl Drop for HaStack {
    /// `compose down -v` (containers, network, volumes), waited for.
    fn drop(&mut self) {
        drop(self.reaper.take());
    }
}

/// Runs a command to its end (bounded): its stdout, or an error with its stderr.
async fn output(mut command: Command, what: &str) -> anyhow::Result<String> {
    command.stdin(Stdio::null()).kill_on_drop(true);
    let output = tokio::time::timeout(COMMAND_BOUND, command.output())
        .await
        .with_context(|| format!("{what}: no answer within {COMMAND_BOUND:?}"))?
        .with_context(|| format!("{what}: cannot run"))?;
    if !output.status.success() {
        bail!("{what}: {}: {}", output.status, String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
