//! Black-box tests of `chipledgerd` over real gRPC against a real PostgreSQL
//! (chipledger-postgres: a container when Docker and the image are there, else a throwaway
//! local cluster; `CHIPLEDGER_TEST_PG=container|local` forces one).
//!
//! Each module proves one property of the service as a client sees it; the scenarios, with
//! their hand-computed numbers, are in the modules. Rule ids are cited where they are proved.

mod access;
mod approvals;
mod backup_restore;
mod bad_input;
mod cage_examples;
mod console;
mod device_stream;
mod embedded;
mod failover;
mod gaming_day;
mod idempotency;
mod least_privilege;
mod outage;
mod overflow;
mod plaintext;
mod race;
mod rebuy_race;
mod reflection;
mod refusal_memory;
mod refusals;
mod replicas;
mod rules_examples;
mod scenario;
mod seeds_hand;
mod session;
mod shards;
mod stakes;
mod standby_reads;
mod subscription;
mod tamper;
mod telemetry;
mod tenancy;
