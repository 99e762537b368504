//! The control socket: a Unix stream socket on which `mslld stats` asks for a JSON snapshot.
//!
//! Protocol: the client sends one line, `stats` or `rate <service> <r>`; the daemon answers with
//! one line of JSON and closes. A Unix socket (not UDP) so that only local users with file permissions on the path can
//! read the counters, and nothing listens on the network.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixListener;
use tokio::sync::{mpsc, oneshot};
use tracing::{debug, warn};

use crate::daemon::ControlRequest;

/// Removes the socket file when the daemon stops.
pub struct ControlGuard(PathBuf);

impl Drop for ControlGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Bind the socket and serve requests in a task; returns the receiver the main loop polls.
pub fn serve(path: &Path) -> anyhow::Result<(mpsc::Receiver<ControlRequest>, ControlGuard)> {
    // A stale file from a crashed run would make bind fail.
    if path.exists() {
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)
        .map_err(|e| anyhow::anyhow!("binding control socket {}: {e}", path.display()))?;
    let (tx, rx) = mpsc::channel::<ControlRequest>(8);
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
                let reply = match handle(&tx, line.trim()).await {
                    Some(r) => r,
                    None => return,
                };
                if let Err(e) = w.write_all(format!("{reply}\n").as_bytes()).await {
                    warn!(error = %e, "control reply failed");
                }
            });
        }
    });
    Ok((rx, ControlGuard(path.to_path_buf())))
}

/// One request line to its JSON reply; `None` when the daemon loop has gone.
async fn handle(tx: &mpsc::Sender<ControlRequest>, line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["stats"] => {
            let (otx, orx) = oneshot::channel();
            tx.send(ControlRequest::Stats(otx)).await.ok()?;
            let snap = orx.await.ok()?;
            Some(
                serde_json::to_string(&snap)
                    .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string()),
            )
        }
        ["rate", service, rate] => {
            let (Ok(service), Ok(rate)) = (service.parse::<u8>(), rate.parse::<f64>()) else {
                return Some(
                    serde_json::json!({ "error": "usage: rate <service> <r>" }).to_string(),
                );
            };
            let (otx, orx) = oneshot::channel();
            tx.send(ControlRequest::SetRate {
                service,
                rate,
                reply: otx,
            })
            .await
            .ok()?;
            Some(match orx.await.ok()? {
                Ok(()) => serde_json::json!({ "ok": true }).to_string(),
                Err(e) => serde_json::json!({ "error": e }).to_string(),
            })
        }
        _ => {
            debug!(request = line, "unknown control request");
            Some(
                serde_json::json!({ "error": "unknown request; try: stats | rate <service> <r>" })
                    .to_string(),
            )
        }
    }
}

/// Client side: ask a running daemon for its stats (blocking; used by `mslld stats`).
pub fn query(path: &Path) -> anyhow::Result<String> {
    request(path, "stats")
}

/// Client side: send one request line, return the reply line.
pub fn request(path: &Path, line: &str) -> anyhow::Result<String> {
    let mut s = std::os::unix::net::UnixStream::connect(path)
        .map_err(|e| anyhow::anyhow!("connecting to {}: {e}", path.display()))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
    s.write_all(format!("{line}\n").as_bytes())?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}
