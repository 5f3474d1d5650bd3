//! `chipledger`: the operators' and auditors' command line. Each subcommand lives in
//! its own module; this file only parses arguments and dispatches.
//!
//! Exit codes: 0 success (also when a reader closes the output pipe early); 1 a refused
//! command, a mismatch or a broken chain; 2 bad input (arguments, files, server address) or a
//! failed RPC. Errors are one line on stderr.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod amount;
mod approvals;
mod audit;
mod bench;
mod clock;
mod connect;
mod demo;
mod evidence;
mod export;
mod follow;
mod operate;
mod output;
mod phh;
mod phh_load;
mod send;
mod words;

use connect::{Client, ServerArgs};
use output::Output;

#[derive(Parser)]
#[command(name = "chipledger", version, about = "Chip ledger for casino poker rooms")]
struct Cli {
    #[command(flatten)]
    server: ServerArgs,
    /// Print JSON instead of tables (for scripts).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

/// Header options of an operator command.
#[derive(Args, Debug)]
struct CommandOptions {
    /// Idempotency key (default: a new UUID). Resending the same id returns the first answer.
    #[arg(long)]
    command_id: Option<String>,
    /// Device the command is entered on (R-AUDIT-2).
    #[arg(long)]
    device: Option<String>,
    /// Why (required by some commands).
    #[arg(long, default_value = "")]
    reason: String,
    /// A second person's approval token (`chipledger approve`), for an approver, slip signer or
    /// supervisor the command names; repeat for two. An empty approver field is filled with the
    /// token's approver.
    #[arg(long = "approval")]
    approvals: Vec<String>,
}

/// What a second person approves: the same command, with the same options, as the caller will
/// send it.
#[derive(Subcommand)]
enum ApprovedCommand {
    /// A table movement (a large buy-in's or top-up's supervisor).
    Table {
        #[command(subcommand)]
        operation: operate::TableOperation,
    },
    /// A cage movement (slip signers, credit line, marker, write-off).
    Cage {
        #[command(subcommand)]
        operation: operate::CageOperation,
    },
    /// A correction (R-AUDIT-1).
    Correct(CorrectionArgs),
}

/// A correction: the event reversed, its approver, why.
#[derive(Args, Debug)]
struct CorrectionArgs {
    #[arg(long)]
    event_id: String,
    /// The approver (default: the approver of the --approval token).
    #[arg(long)]
    approved_by: Option<String>,
    #[arg(long = "why")]
    why: String,
}

impl CorrectionArgs {
    fn into_wire(self) -> chipledger_proto::v1::command::Command {
        chipledger_proto::v1::command::Command::Correction(chipledger_proto::v1::Correction {
            header: None,
            reverses_event_id: self.event_id,
            approved_by: self.approved_by.unwrap_or_default(),
            reason: self.why,
        })
    }
}

#[derive(Subcommand)]
enum Command {
    /// Movements at a table (dealer and floor).
    Table {
        #[command(flatten)]
        options: CommandOptions,
        #[command(subcommand)]
        operation: operate::TableOperation,
    },
    /// The cage: cash-ins, redemptions, fills, credits, markers.
    Cage {
        #[command(flatten)]
        options: CommandOptions,
        #[command(subcommand)]
        operation: operate::CageOperation,
    },
    /// Reverse a recorded event with a new one (R-AUDIT-1); a floor supervisor approves it.
    Correct {
        #[command(flatten)]
        options: CommandOptions,
        #[command(flatten)]
        correction: CorrectionArgs,
    },
    /// Approve a command as the second person (dual control), with your own --token or
    /// certificate: prints the approval token to hand to the caller (`--approval`). Give the
    /// same command, --command-id and --reason the caller will send.
    Approve {
        #[command(flatten)]
        options: CommandOptions,
        /// Seconds the approval is valid (default 600, at most 3600).
        #[arg(long, default_value_t = 0)]
        ttl_seconds: u32,
        #[command(subcommand)]
        command: ApprovedCommand,
    },
    /// An account's balance (cage cash, a pocket, a seat ...) now, as of a position or a time.
    Balance(audit::BalanceArgs),
    /// A player's history with running balances.
    History(audit::HistoryArgs),
    /// A player's sessions: table, seat, game, start and end, bought in, left with.
    Sessions(audit::SessionsArgs),
    /// Follow the log: one line per event as it is recorded, until Ctrl-C.
    Follow(follow::FollowArgs),
    /// A hand reconstructed: posts, contributions, pots, awards, rake.
    Hand(audit::HandArgs),
    /// Table stacks now or as of a time.
    Stacks(audit::StacksArgs),
    /// Reconciliation of a table shift or a gaming day.
    Reconcile {
        #[command(subcommand)]
        what: audit::ReconcileArgs,
    },
    /// Patron cash activity above the reporting thresholds (R-AUDIT-4).
    CashActivity(audit::CashActivityArgs),
    /// Refused commands kept for auditors (R-AUDIT-3).
    Rejections(audit::RejectionsArgs),
    /// The chain head digest (save it with --out).
    Digest(audit::DigestArgs),
    /// Verify the log: both hash chains and the command results they bind, optionally against
    /// kept checkpoints (names the last one the log agrees with), a saved digest, and with the
    /// projections recomputed from the events.
    Verify(audit::VerifyArgs),
    /// Signed checkpoints: fetch them from the server and keep them outside the database.
    Checkpoints {
        #[command(subcommand)]
        command: evidence::CheckpointsCommand,
    },
    /// Export events to CSV or JSON lines.
    Export(export::ExportArgs),
    /// Play a realistic room session against a running server.
    Demo(demo::DemoArgs),
    /// Poker Hand History (PHH) files: replay offline, or load through the server.
    Phh {
        #[command(subcommand)]
        command: PhhCli,
    },
    /// Throughput, latency and CPU of chipledgerd on Pluribus hands beside a plain-INSERT baseline.
    Bench(bench::BenchArgs),
}

#[derive(Subcommand)]
enum PhhCli {
    #[command(flatten)]
    Offline(phh::PhhCommand),
    /// Record hands through chipledgerd and check the finishing stacks and the chain.
    Load(phh_load::LoadArgs),
}

fn header(options: CommandOptions, property_id: &str) -> send::Header {
    let command_id = options.command_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut header = send::Header::new(command_id, property_id);
    header.device = options.device;
    header.reason_note = options.reason;
    header.approvals = options.approvals;
    header
}

/// `chipledger approve`: prints the token (JSON with --json).
async fn approve(
    client: &mut Client,
    options: CommandOptions,
    ttl_seconds: u32,
    command: ApprovedCommand,
    output: Output,
) -> anyhow::Result<ExitCode> {
    let Some(command_id) = options.command_id.clone() else {
        anyhow::bail!("approve needs --command-id: the id the caller will send the command with");
    };
    let wire = match command {
        ApprovedCommand::Table { operation } => operation.into_wire()?,
        ApprovedCommand::Cage { operation } => operation.into_wire(),
        ApprovedCommand::Correct(correction) => correction.into_wire(),
    };
    let property_id = client.property_id.clone();
    let mut stamped = wire;
    send::stamp(&mut stamped, &header(options, &property_id));
    let token = approvals::approve(client, &stamped, &command_id, &property_id, None, ttl_seconds)
        .await
        .map_err(|status| connect::rpc_error("approve", &status))?;
    if output.json {
        println!(
            "{}",
            serde_json::json!({
                "token": token.token,
                "approver_id": token.approver_id,
                "property_id": token.property_id,
                "rpc": token.rpc,
                "command_id": token.command_id,
                "expires_at_unix_ms": token.expires_at_unix_ms,
                "command_digest_hex": token.command_digest_hex,
            })
        );
    } else {
        println!("{}", token.token);
        eprintln!(
            "approved by {} for {} {} (property {}), valid until {} (unix ms)",
            token.approver_id, token.rpc, token.command_id, token.property_id, token.expires_at_unix_ms
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn run_online(server: ServerArgs, output: Output, command: Command) -> anyhow::Result<ExitCode> {
    let mut client = Client::connect(&server).await?;
    let property_id = client.property_id.clone();
    match command {
        Command::Table { options, operation } => {
            send::run(&mut client, &header(options, &property_id), operation.into_wire()?, output).await
        }
        Command::Cage { options, operation } => {
            send::run(&mut client, &header(options, &property_id), operation.into_wire(), output).await
        }
        Command::Correct { options, correction } => {
            send::run(&mut client, &header(options, &property_id), correction.into_wire(), output).await
        }
        Command::Approve { options, ttl_seconds, command } => approve(&mut client, options, ttl_seconds, command, output).await,
        Command::Balance(args) => audit::balance(&mut client, args, output).await,
        Command::History(args) => audit::history(&mut client, args, output).await,
        Command::Sessions(args) => audit::sessions(&mut client, args, output).await,
        Command::Follow(args) => follow::follow(&mut client, args, output).await,
        Command::Hand(args) => audit::hand(&mut client, args, output).await,
        Command::Stacks(args) => audit::stacks(&mut client, args, output).await,
        Command::Reconcile { what } => audit::reconcile(&mut client, what, output).await,
        Command::CashActivity(args) => audit::cash_activity(&mut client, args, output).await.map(|_| ExitCode::SUCCESS),
        Command::Rejections(args) => audit::rejections(&mut client, args, output).await,
        Command::Digest(args) => audit::digest(&mut client, args, output).await,
        Command::Verify(args) => evidence::verify(&mut client, args, output).await,
        Command::Checkpoints { command } => evidence::run(&mut client, command, output).await,
        Command::Export(args) => export::export(&mut client, args).await,
        Command::Demo(args) => demo::run(client, &server, args, output).await,
        Command::Phh { command: PhhCli::Load(args) } => phh_load::run(args, &server, client).await,
        Command::Phh { command: PhhCli::Offline(command) } => phh::run(command),
        Command::Bench(args) => bench::run(args, &server).await,
    }
}

/// The arguments, or the exit code of `--help`, `--version` or a one-line usage error.
fn parse_arguments() -> Result<Cli, ExitCode> {
    use clap::error::ErrorKind;
    match Cli::try_parse() {
        Ok(cli) => Ok(cli),
        Err(error) if matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) => {
            let _ = error.print();
            Err(ExitCode::from(if error.use_stderr() { 2 } else { 0 }))
        }
        Err(error) => {
            // clap's report is several lines (usage, a hint); the convention here is one line.
            let text = error.render().to_string();
            let line: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty() && !line.starts_with("Usage:") && !line.starts_with("For more information"))
                .collect();
            eprintln!("{}", line.join(" "));
            Err(ExitCode::from(2))
        }
    }
}

fn main() -> ExitCode {
    output::end_quietly_on_closed_pipe();
    let cli = match parse_arguments() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let output = Output { json: cli.json };
    let result = match cli.command {
        Command::Phh { command: PhhCli::Offline(command) } => phh::run(command),
        // Starts its own server unless --database-url names an existing one: no client first.
        Command::Bench(args) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(anyhow::Error::from)
            .and_then(|runtime| runtime.block_on(bench::run(args, &cli.server))),
        command => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(anyhow::Error::from)
            .and_then(|runtime| runtime.block_on(run_online(cli.server, output, command))),
    };
    match result {
        Ok(code) => code,
        Err(error) if output::is_closed_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", format!("{error:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}
