//! `chipledgerd`: the chip ledger gRPC service.
//!
//! With no database URL it starts its own PostgreSQL from the installed server binaries (data
//! under `./data` or `--data-dir`, kept between runs), runs the admin step (roles, migrations,
//! functions) as the cluster's owner and serves on 127.0.0.1:50051 as the application role.
//! With `DATABASE_URL` it connects with those credentials (the application role's) and only
//! checks the schema; `chipledgerd migrate` with an admin's URL is the admin step.
//! SIGINT/SIGTERM stop it cleanly.

use std::sync::Arc;

use anyhow::Context;
use chipledger_server::checkpoints::Checkpointer;
use chipledger_server::config::{Config, Flags};
use chipledger_server::database::{self, Database};
use chipledger_server::ledger::Ledger;
use chipledger_server::shards::Router;
use chipledger_server::shutdown::{self, Drain};
use chipledger_server::{serve, telemetry};
use chipledger_store::Store;
use clap::Parser;

/// mimalloc instead of glibc's malloc: the command path allocates and frees many small buffers
/// across threads, which glibc's arenas spent a sixth of the process's CPU on (docs/BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A failure is one line on stderr (cause chain joined by ": ") and exit status 1.
#[tokio::main(flavor = "multi_thread")]
async fn main() -> std::process::ExitCode {
    let flags = Flags::parse();
    let config = match Config::load(flags.clone()).context("configuration") {
        Ok(config) => config,
        Err(error) => return fail(&error),
    };
    let telemetry = match telemetry::init().context("telemetry") {
        Ok(telemetry) => telemetry,
        Err(error) => return fail(&error),
    };
    let result = run(&config, &flags).await;
    if let Err(error) = &result {
        tracing::error!("{error:#}");
    }
    telemetry.shutdown().await;
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => fail(&error),
    }
}

fn fail(error: &anyhow::Error) -> std::process::ExitCode {
    eprintln!("chipledgerd: error: {error:#}");
    std::process::ExitCode::FAILURE
}

async fn run(config: &Config, flags: &Flags) -> anyhow::Result<()> {
    let database = Database::open(config).await.context("starting the database")?;
    let outcome = run_with(config, flags, &database).await;
    // Whatever happened, stop the embedded PostgreSQL cleanly (checkpoint, then exit).
    if let Some(data_dir) = database.embedded_data_dir() {
        tracing::info!(data_dir = %data_dir.display(), "stopping the embedded PostgreSQL");
    }
    database.close().await.context("stopping the embedded PostgreSQL")?;
    outcome
}

async fn run_with(config: &Config, flags: &Flags, database: &Database) -> anyhow::Result<()> {
    match (database.embedded_data_dir(), database.embedded_port()) {
        (Some(data_dir), Some(port)) => {
            tracing::info!(data_dir = %data_dir.display(), port, "embedded PostgreSQL running on 127.0.0.1")
        }
        _ => tracing::info!(url = %database.display_url(), "using DATABASE_URL"),
    }
    // The admin step: explicit with a URL (`chipledgerd migrate`), implied by the embedded mode
    // (chipledgerd owns that cluster). The service itself never migrates a database it does
    // not own, never creates a role and never changes a password.
    if let Some(action) = &config.partitions_action {
        return chipledger_server::partitions::run(config, database.url(), action).await.context("partitions");
    }
    if config.migrate_only || database.embedded_data_dir().is_some() {
        database
            .admin_step(config.app_password_file.as_deref(), config.partitions.months_ahead)
            .await
            .context("the admin step (migrations, roles, functions, partitions ahead)")?;
    }
    if config.migrate_only {
        println!("chipledgerd: database ready (migrations, roles, functions) at {}", database.display_url());
        return Ok(());
    }
    let options = database.app_options().context("application role options")?;
    let store = Store::connect_bounded(options, database::POOL_CONNECTIONS, database::ACQUIRE_TIMEOUT)
        .await
        .context("connecting as the application role")?;
    store.check_schema().await.context("checking the database")?;
    let role: String = sqlx::query_scalar("SELECT current_user::text").fetch_one(store.pool()).await?;
    if role != chipledger_store::APP_ROLE {
        tracing::warn!(%role, "connected as {role}, not {}: least privilege is not in force", chipledger_store::APP_ROLE);
    }

    let router = Arc::new(
        Router::connect(store.clone(), config).await.context("the property shards and standbys")?,
    );
    let checkpointer = Arc::new(
        Checkpointer::from_settings(router.clone(), &config.checkpoints).context("the checkpoint signing key")?,
    );
    let drain = Drain::new();
    let ledger = Arc::new(
        Ledger::for_router(router, config, drain.clone()).context("approvals")?.with_checkpointer(checkpointer.clone()),
    );
    tokio::spawn(reload_on_hangup(flags.clone(), ledger.clone(), drain.stopping()));
    let listener = serve::bind(config.listen).await?;
    let local_addr = listener.local_addr().context("listen address")?;
    // Before the banner: a stop asked for as soon as the server says it listens is honoured.
    let stop = shutdown::signal();
    print_banner(config, local_addr);
    if let Some(key) = checkpointer.key() {
        println!("  checkpoints: signed by key {} every {:?}", key.key_id(), checkpointer.interval());
    }
    let (stop_checkpoints, checkpoints_stopped) = tokio::sync::oneshot::channel::<()>();
    let checkpoints = tokio::spawn(checkpointer.clone().run(async move {
        let _ = checkpoints_stopped.await;
    }));
    // The partitions ahead, now and daily: the application role may make the next months.
    let (stop_partitions, partitions_stopped) = tokio::sync::oneshot::channel::<()>();
    let partitions = tokio::spawn(chipledger_server::partitions::keep_ahead(ledger.router().clone(), config.partitions.months_ahead, async move {
        let _ = partitions_stopped.await;
    }));
    let served = serve::serve(config, listener, ledger, drain, stop).await;
    let _ = stop_checkpoints.send(());
    let _ = checkpoints.await;
    let _ = stop_partitions.send(());
    let _ = partitions.await;
    // A last checkpoint of what this run wrote, so a kept copy covers it.
    if checkpointer.key().is_some()
        && let Err(error) = checkpointer.round().await
    {
        tracing::error!(%error, "could not sign the last checkpoint");
    }
    served?;
    store.pool().close().await;
    tracing::info!("stopped");
    Ok(())
}

/// SIGHUP: read the configuration file again and take its properties, property shards and
/// principals (anything else changed there waits for a restart). A reload that fails changes
/// nothing.
async fn reload_on_hangup(flags: Flags, ledger: Arc<Ledger>, mut stopping: tokio::sync::watch::Receiver<bool>) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(hangups) => hangups,
        Err(error) => {
            tracing::error!(%error, "cannot listen for SIGHUP: the shard map reloads only at a restart");
            return;
        }
    };
    loop {
        tokio::select! {
            _ = stopping.wait_for(|stopping| *stopping) => return,
            got = hangups.recv() => if got.is_none() { return },
        }
        let reloaded = match Config::load(flags.clone()) {
            Ok(config) => ledger.reload(&config).await.map_err(anyhow::Error::from),
            Err(error) => Err(anyhow::Error::from(error)),
        };
        match reloaded {
            Ok(reloaded) => {
                tracing::info!(?reloaded, "configuration reloaded");
                let principals = &reloaded.principals;
                println!(
                    "chipledgerd: reloaded: {} properties; shards connected {:?}; properties moved {:?}; principals added {:?}, removed {:?}, changed {:?}",
                    reloaded.properties, reloaded.shards_connected, reloaded.moved, principals.added, principals.removed, principals.changed
                );
            }
            Err(error) => {
                tracing::error!("reload refused, nothing changed: {error:#}");
                eprintln!("chipledgerd: reload refused, nothing changed: {error:#}");
            }
        }
    }
}

fn print_banner(config: &Config, addr: std::net::SocketAddr) {
    let scheme = if config.tls.is_some() { "TLS" } else { "plaintext" };
    println!("chipledgerd listening on {addr} ({scheme}), default property {:?}", config.property_id);
    if config.plaintext_tokens_exposed() {
        let warning = format!(
            "WARNING: bearer tokens accepted over plaintext on {addr} (--allow-plaintext-tokens): anyone on the \
             network path can read them and act as their principals. Configure [tls]."
        );
        eprintln!("chipledgerd: {warning}");
        tracing::warn!("{warning}");
    }
    let mut property_ids: Vec<&str> = config.properties.ids().collect();
    property_ids.sort_unstable();
    for id in property_ids {
        let Some(property) = config.properties.get(id) else { continue };
        let cutoff = property.gaming_day.cutoff_minutes;
        println!(
            "  property {id}: gaming day from {:02}:{:02} {}, {}, {}",
            cutoff / 60,
            cutoff % 60,
            property.gaming_day.zone_name(),
            property.currency,
            match &property.game_keys {
                Some(keys) => format!("{} game keys", keys.len()),
                None => "any game key".to_string(),
            }
        );
        if property.game_keys.is_none() && !config.is_plain_dev() {
            tracing::warn!(property = id, "no game_keys configured: a table may be opened under any game key (the re-buy wait, R-REBUY-1, binds by what a table plays, not by its key)");
        }
    }
    if config.tls.is_some() {
        println!("  connect: grpcurl -cacert ca.pem -cert client.pem -key client.key {addr} list");
    } else if config.is_plain_dev() {
        println!("  connect: grpcurl -plaintext {addr} list");
        if let Some(role) = config.dev_anonymous_role {
            println!("  (development mode: callers without credentials act as {role:?}; configure [auth] to turn this off)");
            for (id, role, token) in chipledger_proto::approval::DEV_APPROVERS {
                if config.principals.iter().any(|principal| principal.id == *id) {
                    println!("  development approver {id} ({role:?}): --token {token}");
                }
            }
        }
    } else {
        println!("  connect: grpcurl -plaintext -H 'authorization: Bearer <token>' {addr} list");
        if config.principals.is_empty() {
            println!("  note: no principals configured; only health and reflection will answer");
        }
    }
    println!("  health:  grpcurl -plaintext {addr} grpc.health.v1.Health/Check");
}
