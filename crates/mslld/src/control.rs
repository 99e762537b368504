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
    // A stale socket from a crashed run would make bind fail: remove it, but only if it is a
    // socket nobody answers on. Anything else at that path (a typo naming a real file, or a
    // running daemon's live socket) is an error, never deleted.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_socket() {
            anyhow::bail!(
                "control = {}: exists and is not a socket; refusing to replace it",
                path.display()
            );
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            anyhow::bail!(
                "control = {}: another daemon is serving this socket",
                path.display()
            );
        }
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)
        .map_err(|e| anyhow::anyhow!("binding control socket {}: {e}", path.display()))?;
    let (tx, rx) = mpsc::channel::<ControlRequest>(8);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                // Out of file descriptors, typically: retrying at once would spin a core.
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn socket_path_is_replaced_only_when_stale() {
        let dir = std::env::temp_dir().join(format!("mslld-ctl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A regular file at the path (a typo naming real data) is an error and survives.
        let file = dir.join("data.toml");
        std::fs::write(&file, "precious").unwrap();
        let e = serve(&file).err().expect("refused").to_string();
        assert!(e.contains("not a socket") && e.contains("data.toml"), "{e}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
        // A stale socket (its daemon gone) is replaced.
        let sock = dir.join("ctl.sock");
        drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
        assert!(sock.exists());
        let (_rx, guard) = serve(&sock).expect("stale socket replaced");
        // A live one is another daemon's: refused, and left serving.
        let e = serve(&sock).err().expect("refused").to_string();
        assert!(e.contains("another daemon"), "{e}");
        assert!(sock.exists());
        drop(guard);
        assert!(!sock.exists(), "the guard removes its socket");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
