//! `chipledgerd`: the chip ledger gRPC service.
//!
//! With no database URL it starts its own PostgreSQL from the installed server binaries (data
//! under `./data` or `--data-dir`, kept between runs), runs the migrations and serves on
//! 127.0.0.1:50051. With `DATABASE_URL` it uses that server. SIGINT/SIGTERM stop it cleanly.

use std::sync::Arc;

use anyhow::Context;
use chipledger_server::config::{Config, Flags};
use chipledger_server::database::{self, Database};
use chipledger_server::ledger::Ledger;
use chipledger_server::shutdown::{self, Drain};
use chipledger_server::{serve, telemetry};
use chipledger_store::Store;
use clap::Parser;

/// A failure is one line on stderr (cause chain joined by ": ") and exit status 1.
#[tokio::main(flavor = "multi_thread")]
async fn main() -> std::process::ExitCode {
    let config = match Config::load(Flags::parse()).context("configuration") {
        Ok(config) => config,
        Err(error) => return fail(&error),
    };
    let telemetry = match telemetry::init().context("telemetry") {
        Ok(telemetry) => telemetry,
        Err(error) => return fail(&error),
    };
    let result = run(&config).await;
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

async fn run(config: &Config) -> anyhow::Result<()> {
    let database = Database::open(config).await.context("starting the database")?;
    let outcome = run_with(config, &database).await;
    // Whatever happened, stop the embedded PostgreSQL cleanly (checkpoint, then exit).
    if let Some(data_dir) = database.embedded_data_dir() {
        tracing::info!(data_dir = %data_dir.display(), "stopping the embedded PostgreSQL");
    }
    database.close().await.context("stopping the embedded PostgreSQL")?;
    outcome
}

async fn run_with(config: &Config, database: &Database) -> anyhow::Result<()> {
    match database.embedded_data_dir() {
        Some(data_dir) => tracing::info!(data_dir = %data_dir.display(), "embedded PostgreSQL running"),
        None => tracing::info!(url = %database.display_url(), "using DATABASE_URL"),
    }
    Store::migrate(database.url()).await.context("running migrations")?;
    if config.migrate_only {
        println!("chipledgerd: migrations applied to {}", database.display_url());
        return Ok(());
    }
    // Least privilege: the service connects as the application role (INSERT/SELECT only on the
    // append-only tables), with a password generated for this run.
    let app_password = uuid::Uuid::new_v4().simple().to_string();
    Store::set_app_password(database.url(), &app_password).await.context("preparing the application role")?;
    let options = Store::app_options(database.url(), &app_password).context("application role options")?;
    let store = Store::connect_bounded(options, database::POOL_CONNECTIONS, database::ACQUIRE_TIMEOUT)
        .await
        .context("connecting as the application role")?;

    let drain = Drain::new();
    let ledger = Arc::new(Ledger::for_config(store.clone(), config, drain.clone()).context("approvals")?);
    let listener = serve::bind(config.listen).await?;
    let local_addr = listener.local_addr().context("listen address")?;
    print_banner(config, local_addr);
    serve::serve(config, listener, ledger, drain, shutdown::signal()).await?;
    store.pool().close().await;
    tracing::info!("stopped");
    Ok(())
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
            tracing::warn!(property = id, "no game_keys configured: any spelling of a game opens a table, and the re-buy wait (R-REBUY-1) binds per spelling");
        }
    }
    if config.tls.is_some() {
        println!("  connect: grpcurl -cacert ca.pem -cert client.pem -key client.key {addr} list");
    } else if config.is_plain_dev() {
        println!("  connect: grpcurl -plaintext {addr} list");
        if let Some(role) = config.dev_anonymous_role {
            println!("  (development mode: callers without credentials act as {role:?}; configure [auth] to turn this off)");
            for (id, role, token) in chipledger_server::config::DEV_APPROVERS {
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
