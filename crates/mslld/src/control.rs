//! The control socket: a Unix stream socket on which `mslld stats` asks for a JSON snapshot.
//!
//! Protocol: the client sends one line, `stats`; the daemon answers with one line of JSON and
//! closes. A Unix socket (not UDP) so that only local users with file permissions on the path can
//! read the counters, and nothing listens on the network.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixListener;
use tokio::sync::{mpsc, oneshot};
use tracing::{debug, warn};

use crate::daemon::StatsRequest;

/// Removes the socket file when the daemon stops.
pub struct ControlGuard(PathBuf);

impl Drop for ControlGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Bind the socket and serve requests in a task; returns the receiver the main loop polls.
pub fn serve(path: &Path) -> anyhow::Result<(mpsc::Receiver<StatsRequest>, ControlGuard)> {
    // A stale file from a crashed run would make bind fail.
    if path.exists() {
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)
        .map_err(|e| anyhow::anyhow!("binding control socket {}: {e}", path.display()))?;
    let (tx, rx) = mpsc::channel::<StatsRequest>(8);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let tx = tx.clone();
            tokio::spawn(async move {
                let (r, mut w) = stream.into_split();
                let mut line = String::new();
                let mut r = BufReader::new(r);
                // Bounded wait and length: a stuck or hostile client cannot hold the task.
                let read = tokio::time::timeout(
                    std::time::Duration::from_secs(2),
                    (&mut r).take(64).read_line(&mut line),
                )
                .await;
                if !matches!(read, Ok(Ok(_))) {
                    return;
                }
                let reply = match line.trim() {
                    "stats" => {
                        let (otx, orx) = oneshot::channel();
                        if tx.send(otx).await.is_err() {
                            return;
                        }
                        match orx.await {
                            Ok(snap) => serde_json::to_string(&snap)
                                .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}")),
                            Err(_) => return,
                        }
                    }
                    other => {
                        debug!(request = other, "unknown control request");
                        "{\"error\":\"unknown request; try: stats\"}".to_string()
                    }
                };
                if let Err(e) = w.write_all(format!("{reply}\n").as_bytes()).await {
                    warn!(error = %e, "control reply failed");
                }
            });
        }
    });
    Ok((rx, ControlGuard(path.to_path_buf())))
}

/// Client side: ask a running daemon for its stats (blocking; used by `mslld stats`).
pub fn query(path: &Path) -> anyhow::Result<String> {
    let mut s = std::os::unix::net::UnixStream::connect(path)
        .map_err(|e| anyhow::anyhow!("connecting to {}: {e}", path.display()))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    s.write_all(b"stats\n")?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}
