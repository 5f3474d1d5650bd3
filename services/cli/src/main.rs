//! `chipledger`: the operators' and auditors' command line. Each subcommand lives in
//! its own module; this file only parses arguments and dispatches.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod phh;

#[derive(Parser)]
#[command(name = "chipledger", version, about = "Chip ledger for casino poker rooms")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Poker Hand History (PHH) files: replay them through the rules core.
    Phh {
        #[command(subcommand)]
        command: phh::PhhCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Phh { command } => phh::run(command),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", format!("{error:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}
