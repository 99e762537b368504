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
        match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => anyhow::bail!(
                "control = {}: another daemon is serving this socket",
                path.display()
            ),
            // Nobody listens: a stale socket of a crashed run.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                std::fs::remove_file(path)?
            }
            // Anything else (no permission to connect, ...) may be a live daemon's socket we
            // cannot reach: never deleted (review, session 47: any failure unlinked it).
            Err(e) => anyhow::bail!(
                "control = {}: a socket is there and connecting to it failed ({e}); refusing \
                 to replace it",
                path.display()
            ),
        }
    }
    let listener = UnixListener::bind(path)
        .map_err(|e| anyhow::anyhow!("binding control socket {}: {e}", path.display()))?;
    // Owner only, whatever the umask: `rate` changes the scheduling, and the counters are the
    // operator's (review, session 47: the mode came from the umask alone).
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| anyhow::anyhow!("control socket {}: {e}", path.display()))?;
    }
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
                    (&mut r).take(MAX_REQUEST as u64).read_line(&mut line),
                )
                .await;
                if !matches!(read, Ok(Ok(_))) {
                    return;
                }
                // A line cut at the limit would be parsed as a shorter, different request
                // (`rate 1 1000...0` read as a smaller rate): refuse it instead.
                let reply = if line.len() >= MAX_REQUEST && !line.ends_with('\n') {
                    serde_json::json!({
                        "error": format!("request longer than {} bytes", MAX_REQUEST - 1)
                    })
                    .to_string()
                } else {
                    match handle(&tx, line.trim()).await {
                        Some(r) => r,
                        None => return,
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

/// Longest request line read, newline included.
const MAX_REQUEST: usize = 64;

/// Client side: ask a running daemon for its stats (blocking; used by `mslld stats`).
pub fn query(path: &Path) -> anyhow::Result<String> {
    request(path, "stats")
}

/// Client side: send one request line, return the reply line.
pub fn request(path: &Path, line: &str) -> anyhow::Result<String> {
    use std::os::unix::fs::FileTypeExt;
    // "Connection refused" for a path that is a file or a directory says nothing useful.
    if let Ok(m) = std::fs::metadata(path) {
        if !m.file_type().is_socket() {
            anyhow::bail!(
                "{}: not a socket (the daemon's `control` path is a Unix socket)",
                path.display()
            );
        }
    }
    let mut s = std::os::unix::net::UnixStream::connect(path)
        .map_err(|e| anyhow::anyhow!("connecting to {}: {e}", path.display()))?;
    let wait = std::time::Duration::from_secs(5);
    s.set_read_timeout(Some(wait))?;
    s.write_all(format!("{line}\n").as_bytes())
        .map_err(|e| anyhow::anyhow!("sending to {}: {e}", path.display()))?;
    let mut out = String::new();
    s.read_to_string(&mut out).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            anyhow::anyhow!(
                "no reply from {} within {} s",
                path.display(),
                wait.as_secs()
            )
        }
        _ => anyhow::anyhow!("reading from {}: {e}", path.display()),
    })?;
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
        // Owner only, whatever the umask (review, session 47).
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&sock).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        }
        // A live one is another daemon's: refused, and left serving.
        let e = serve(&sock).err().expect("refused").to_string();
        assert!(e.contains("another daemon"), "{e}");
        assert!(sock.exists());
        drop(guard);
        assert!(!sock.exists(), "the guard removes its socket");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A request cut at the length limit was parsed as a shorter one: `rate 1 1000...0` (a rate
    /// written out in full) was set as a smaller rate and answered `ok` (input audit, session
    /// 23). It is refused whole now; the client also writes rates in exponent form.
    #[tokio::test(flavor = "current_thread")]
    async fn an_overlong_request_is_refused_not_truncated() {
        let dir = std::env::temp_dir().join(format!("mslld-ctl-long-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("ctl.sock");
        let (_rx, guard) = serve(&sock).unwrap();
        let long = format!("rate 1 {}", "1".repeat(80));
        let p = sock.clone();
        let reply = tokio::task::spawn_blocking(move || request(&p, &long))
            .await
            .unwrap()
            .unwrap();
        assert!(reply.contains("request longer than 63 bytes"), "{reply}");
        assert_eq!(format!("rate 1 {:e}", 1e60), "rate 1 1e60");
        // The client names what is wrong with a path that is no socket.
        let file = dir.join("plain");
        std::fs::write(&file, "x").unwrap();
        let e = request(&file, "stats").unwrap_err().to_string();
        assert!(e.contains("not a socket") && e.contains("plain"), "{e}");
        drop(guard);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
