//! Black-box tests of the `chipledger` binary: each starts chipledgerd's service in-process
//! (the server library, a real PostgreSQL from chipledger-postgres's TestPostgres) and runs
//! `chipledger` as a subprocess, checking exit codes and output lines.

mod audit;
mod bad_input;
mod demo;
mod evidence;
mod gaps;
mod phh_load;
mod server;
