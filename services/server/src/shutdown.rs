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

/// Waits for SIGINT (Ctrl-C) or SIGTERM. The handlers are installed when this is called, not
/// when the future is first polled: a signal that arrives right after the "listening" banner
/// (which a supervisor may take as ready) is seen, instead of killing the process by default.
pub fn signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let handlers = signal(SignalKind::terminate()).and_then(|terminate| Ok((terminate, signal(SignalKind::interrupt())?)));
        async move {
            match handlers {
                Ok((mut terminate, mut interrupt)) => tokio::select! {
                    _ = interrupt.recv() => tracing::info!("SIGINT received, shutting down"),
                    _ = terminate.recv() => tracing::info!("SIGTERM received, shutting down"),
                },
                Err(error) => {
                    tracing::warn!(%error, "cannot listen for SIGTERM; only Ctrl-C stops the server");
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async move {
            let _ = tokio::signal::ctrl_c().await;
        }
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

/// Run `round` now and then every `period` until `stop` resolves (a round in progress finishes
/// first); ticks missed while a round ran are not made up. The periodic tasks of the service
/// (checkpoints, partitions ahead) run on this.
pub async fn every<F, R>(period: std::time::Duration, stop: impl Future<Output = ()>, mut round: F)
where
    F: FnMut() -> R,
    R: Future<Output = ()>,
{
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = ticks.tick() => {}
        }
        round().await;
    }
}
