//! A TCP link between chipledgerd and its PostgreSQL that a test can cut and restore: the
//! database is then unreachable exactly as after a crash or a network partition (every open
//! connection dropped, new ones refused), without touching the test server itself.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Forwards 127.0.0.1:<port> to `target` while up.
pub struct Link {
    addr: SocketAddr,
    up: Arc<AtomicBool>,
    /// Bumped by every cut: forwarders of an older generation stop.
    generation: watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Link {
    pub async fn start(target: SocketAddr) -> std::io::Result<Link> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let up = Arc::new(AtomicBool::new(true));
        let (generation, _) = watch::channel(0u64);
        let task = tokio::spawn(accept(listener, target, up.clone(), generation.clone()));
        Ok(Link { addr, up, generation, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Drops every open connection and refuses new ones until [`Link::restore`].
    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.generation.send_modify(|generation| *generation += 1);
    }

    pub fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.task.abort();
        self.cut();
    }
}

async fn accept(listener: TcpListener, target: SocketAddr, up: Arc<AtomicBool>, generation: watch::Sender<u64>) {
    loop {
        let Ok((client, _)) = listener.accept().await else { continue };
        if !up.load(Ordering::SeqCst) {
            drop(client); // refused: closed at once
            continue;
        }
        let mut cut = generation.subscribe();
        let born = *cut.borrow_and_update();
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(target).await else { return };
            let (mut client, mut server) = (client, server);
            tokio::select! {
                _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                _ = cut.wait_for(|now| *now != born) => {}
            }
            // Both sockets dropped here: the database sees its client go, chipledgerd sees EOF.
        });
    }
}
