//! `chipledgerd`: the chip ledger gRPC service.
//!
//! With no database URL it starts its own PostgreSQL from the installed server binaries (data
//! under `./data` or `--data-dir`, kept between runs), runs the migrations and serves on
//! 127.0.0.1:50051. With `DATABASE_URL` it uses that server. SIGINT/SIGTERM stop it cleanly.

use std::sync::Arc;

use anyhow::Context;
use chipledger_server::config::{Config, Flags};
use chipledger_server::database::Database;
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
    let store = Store::connect_with(options, 16).await.context("connecting as the application role")?;

    let drain = Drain::new();
    let ledger = Arc::new(Ledger::for_config(store.clone(), config, drain.clone()));
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
    println!("chipledgerd listening on {addr} ({scheme}), property {:?}", config.property_id);
    if config.tls.is_some() {
        println!("  connect: grpcurl -cacert ca.pem -cert client.pem -key client.key {addr} list");
    } else if config.is_plain_dev() {
        println!("  connect: grpcurl -plaintext {addr} list");
        if let Some(role) = config.dev_anonymous_role {
            println!("  (development mode: callers without credentials act as {role:?}; configure [auth] to turn this off)");
        }
    } else {
        println!("  connect: grpcurl -plaintext -H 'authorization: Bearer <token>' {addr} list");
        if config.principals.is_empty() {
            println!("  note: no principals configured; only health and reflection will answer");
        }
    }
    println!("  health:  grpcurl -plaintext {addr} grpc.health.v1.Health/Check");
}
