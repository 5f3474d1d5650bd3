//! Graceful shutdown: on SIGINT or SIGTERM stop accepting, end the subscriptions, let every
//! append already started finish (it runs to its COMMIT even if its caller went away), then
//! close the pool and stop the embedded PostgreSQL.

use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};

/// Tracks appends in flight. `enter` is refused once `close` has begun.
#[derive(Clone)]
pub struct Drain {
    sender: Arc<Mutex<Option<mpsc::Sender<()>>>>,
    receiver: Arc<tokio::sync::Mutex<mpsc::Receiver<()>>>,
    stopping: watch::Sender<bool>,
}

/// Held while an append is in flight.
pub struct InFlight {
    _sender: mpsc::Sender<()>,
}

impl Default for Drain {
    fn default() -> Drain {
        Drain::new()
    }
}

impl Drain {
    pub fn new() -> Drain {
        // Nothing is ever sent: the channel only counts live senders.
        let (sender, receiver) = mpsc::channel(1);
        Drain {
            sender: Arc::new(Mutex::new(Some(sender))),
            receiver: Arc::new(tokio::sync::Mutex::new(receiver)),
            stopping: watch::channel(false).0,
        }
    }

    /// A guard for one append, or `None` when shutting down.
    pub fn enter(&self) -> Option<InFlight> {
        let guard = self.sender.lock().ok()?;
        guard.as_ref().map(|sender| InFlight { _sender: sender.clone() })
    }

    /// Resolves when shutdown begins (subscriptions end on it).
    pub fn stopping(&self) -> watch::Receiver<bool> {
        self.stopping.subscribe()
    }

    /// Refuses new appends, signals the subscriptions, and waits until every append in flight
    /// has finished.
    pub async fn close(&self) {
        if let Ok(mut sender) = self.sender.lock() {
            sender.take();
        }
        self.stopping.send_replace(true);
        // `recv` returns None once the last guard is dropped.
        let mut receiver = self.receiver.lock().await;
        while receiver.recv().await.is_some() {}
    }
}

/// Waits for SIGINT (Ctrl-C) or SIGTERM.
pub async fn signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(terminate) => terminate,
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM; only SIGINT stops the server");
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => tracing::info!("SIGINT received, shutting down"),
            _ = terminate.recv() => tracing::info!("SIGTERM received, shutting down"),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn close_waits_for_appends_in_flight_and_refuses_new_ones() {
        let drain = Drain::new();
        let guard = drain.enter().expect("open");
        let closing = {
            let drain = drain.clone();
            tokio::spawn(async move { drain.close().await })
        };
        let mut stopping = drain.stopping();
        stopping.wait_for(|stopping| *stopping).await.expect("stopping signalled");
        assert!(drain.enter().is_none(), "no new append once closing");
        // Single-threaded test runtime: the closer has run up to its wait and is parked there.
        assert!(!closing.is_finished(), "close returned while an append was in flight");
        drop(guard);
        closing.await.expect("close completes after the last guard");
    }
}
