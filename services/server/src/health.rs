//! Whether the database answers, known before a request needs it: a background probe runs
//! `SELECT 1` on a connection of its own (not the pool's, so a busy pool never reads as an
//! outage) every [`PROBE_INTERVAL`], each step bounded by [`PROBE_TIMEOUT`]. While the database
//! is unreachable gRPC health says NOT_SERVING and the gate answers UNAVAILABLE at once instead
//! of letting calls wait for a pool connection; the first probe that succeeds again turns both
//! back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

/// Time between probes.
pub const PROBE_INTERVAL: Duration = Duration::from_millis(500);
/// Bound on one probe's connect and on its query.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The probe's last verdict, shared with the gate. Starts reachable: the server only starts
/// serving after it connected.
#[derive(Debug, Clone)]
pub struct DatabaseHealth(Arc<AtomicBool>);

impl Default for DatabaseHealth {
    fn default() -> DatabaseHealth {
        DatabaseHealth(Arc::new(AtomicBool::new(true)))
    }
}

impl DatabaseHealth {
    pub fn is_reachable(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    fn set(&self, reachable: bool) -> bool {
        self.0.swap(reachable, Ordering::AcqRel) != reachable
    }
}

/// Probes until `stopping` turns true, keeping `health` and the gRPC health statuses of
/// `services` (and of the whole server, "") in step with the database.
pub async fn probe_database(
    options: PgConnectOptions,
    health: DatabaseHealth,
    reporter: HealthReporter,
    services: Vec<&'static str>,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    let mut connection: Option<PgConnection> = None;
    loop {
        let reachable = probe_once(&options, &mut connection).await;
        if health.set(reachable) {
            let status = if reachable { ServingStatus::Serving } else { ServingStatus::NotServing };
            if reachable {
                tracing::info!("database reachable again: SERVING");
            } else {
                tracing::warn!("database unreachable: NOT_SERVING, calls answer UNAVAILABLE");
            }
            if !*stopping.borrow() {
                reporter.set_service_status("", status).await;
                for service in &services {
                    reporter.set_service_status(*service, status).await;
                }
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(PROBE_INTERVAL) => {}
            _ = stopping.wait_for(|stopping| *stopping) => break,
        }
    }
    if let Some(connection) = connection {
        let _ = tokio::time::timeout(PROBE_TIMEOUT, connection.close()).await;
    }
}

/// One verdict: the kept connection answers, or (when it broke, e.g. after a database restart)
/// a new one does. Unreachable only when no connection can be made or none answers.
async fn probe_once(options: &PgConnectOptions, connection: &mut Option<PgConnection>) -> bool {
    if connection.is_some() && ask(options, connection).await {
        return true;
    }
    ask(options, connection).await
}

async fn ask(options: &PgConnectOptions, connection: &mut Option<PgConnection>) -> bool {
    if connection.is_none() {
        match tokio::time::timeout(PROBE_TIMEOUT, PgConnection::connect_with(options)).await {
            Ok(Ok(connected)) => *connection = Some(connected),
            Ok(Err(error)) => {
                tracing::debug!(%error, "database probe cannot connect");
                return false;
            }
            Err(_) => return false,
        }
    }
    let Some(open) = connection.as_mut() else { return false };
    let answered = tokio::time::timeout(PROBE_TIMEOUT, sqlx::query_scalar::<_, i32>("SELECT 1").fetch_one(&mut *open)).await;
    match answered {
        Ok(Ok(1)) => true,
        _ => {
            // Broken or stuck: a new connection next time.
            *connection = None;
            false
        }
    }
}
