//! The I/O loop: TUN (or an in-process channel) and one UDP socket around a [`Tunnel`].
//!
//! ```text
//! loop {
//!     send every pending datagram, write every pending IP packet;
//!     wait for: shutdown | stats request | UDP datagram | IP packet | tunnel.poll_timeout();
//!     feed that ONE input to the tunnel (which runs the Endpoint's run-loop contract);
//! }
//! ```
//!
//! Thin on purpose: no protocol decision is made here. Clock: one `std::time::Instant` epoch
//! fixed at start, mapped to `msll_proto::Instant` nanoseconds (architecture sec. 2.5).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use msll_proto::{Buf, Instant};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};

use crate::config::Config;
use crate::tunnel::{Snapshot, Tunnel};
use crate::wire::MAX_DATAGRAM;

/// Where IP packets come from and go to.
pub enum IpSide {
    Tun(Arc<tun_rs::AsyncDevice>),
    /// In-process packets (tests and `mslld bench`). Unlike TUN, the source waits while the
    /// ingress queue is full instead of having its excess dropped.
    Chan {
        rx: mpsc::Receiver<Bytes>,
        tx: mpsc::Sender<Bytes>,
    },
}

/// A request from the control socket, answered by the loop.
pub enum ControlRequest {
    Stats(oneshot::Sender<Snapshot>),
    /// Set a service's scheduler rate r_i (the thesis's administrative module), live.
    SetRate {
        service: u8,
        rate: f64,
        reply: oneshot::Sender<Result<(), String>>,
    },
}

/// A fresh random session id and the wall-clock counter base (see `wire.rs`).
pub fn new_session() -> std::io::Result<(u64, u64)> {
    let mut s = 0;
    while s == 0 {
        s = u64::from_le_bytes(crate::os_random()?);
    }
    let base = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    Ok((s, base))
}

/// Create and configure the TUN device named in the config.
pub fn open_tun(cfg: &Config) -> anyhow::Result<tun_rs::AsyncDevice> {
    let mut b = tun_rs::DeviceBuilder::new()
        .name(&cfg.tun.name)
        .ipv4(cfg.tun.address, cfg.tun.prefix, None)
        .mtu(cfg.tun.mtu);
    if let Some(a6) = cfg.tun.address6 {
        b = b.ipv6(a6, cfg.tun.prefix6);
    }
    let dev = b
        .build_async()
        .map_err(|e| anyhow::anyhow!("creating TUN device {}: {e}", cfg.tun.name))?;
    Ok(dev)
}

/// Run until `shutdown` resolves; returns the final counters.
pub async fn run(
    cfg: Config,
    mut ip: IpSide,
    socket: UdpSocket,
    mut control: Option<mpsc::Receiver<ControlRequest>>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<Snapshot> {
    size_socket_buffers(&socket, cfg.limits.socket_buffer);
    let (session, base) = new_session()?;
    let mut tunnel = Tunnel::new(&cfg, session, base)?;
    let peer: SocketAddr = cfg.peer;
    let epoch = std::time::Instant::now();
    let now = move || Instant::from_nanos(epoch.elapsed().as_nanos() as u64);
    let to_tokio = move |t: Instant| {
        tokio::time::Instant::from_std(epoch + std::time::Duration::from_nanos(t.as_nanos()))
    };
    info!(session = %format!("{session:016x}"), bind = %cfg.bind, peer = %peer,
          services = ?cfg.service_names(), rate_mbps = cfg.link.rate_mbps, "mslld running");
    let mut ubuf = vec![0u8; MAX_DATAGRAM + 1];
    let mut tbuf = vec![0u8; 65_536];
    tokio::pin!(shutdown);
    loop {
        // Outputs first: the tunnel has already decided what to send.
        while let Some(d) = tunnel.poll_datagram() {
            if let Err(e) = socket.send_to(&d, peer).await {
                let n = tunnel.count_send_error();
                // An unreachable peer fails every send: log the 1st, 2nd, 4th, 8th ... only.
                if n.is_power_of_two() {
                    warn!(error = %e, failures = n, "UDP send failed");
                }
            }
        }
        while let Some(p) = tunnel.poll_ip() {
            let err = match &ip {
                IpSide::Tun(dev) => dev.send(p.as_slice()).await.err().map(|e| e.to_string()),
                // The channel carries `bytes::Bytes`; packets are `Buf`s (one copy, as a TUN write is).
                IpSide::Chan { tx, .. } => tx
                    .send(Bytes::copy_from_slice(p.as_slice()))
                    .await
                    .err()
                    .map(|_| "in-process receiver closed".to_string()),
            };
            if let Some(e) = err {
                let n = tunnel.count_ip_write_error();
                // A TUN device that refuses writes (down, or a packet it will not take) fails
                // packet after packet: counted in `ip_write_errors`, logged 1st, 2nd, 4th ...
                if n.is_power_of_two() {
                    warn!(error = %e, failures = n, "IP side write failed");
                }
            }
        }
        let deadline = tunnel.poll_timeout();
        let sleep = tokio::time::sleep_until(to_tokio(deadline.unwrap_or(Instant::MAX).min(
            // Wake at least once a minute so a lost deadline can never stall the loop.
            now() + msll_proto::Duration::from_secs(60),
        )));
        let ip_open = !matches!(&ip, IpSide::Chan { .. }) || !tunnel.ingress_full();
        tokio::select! {
            biased;
            _ = &mut shutdown => break,
            Some(req) = async { match &mut control { Some(c) => c.recv().await, None => None } } => {
                match req {
                    ControlRequest::Stats(reply) => {
                        let _ = reply.send(tunnel.snapshot());
                    }
                    ControlRequest::SetRate { service, rate, reply } => {
                        let r = tunnel.set_rate(service, rate);
                        match &r {
                            Ok(()) => info!(service, rate, "rate set"),
                            Err(e) => warn!(error = %e, "rate not set"),
                        }
                        let _ = reply.send(r);
                    }
                }
            }
            r = socket.recv_from(&mut ubuf) => match r {
                Ok((n, _from)) => {
                    tunnel.on_datagram(now(), ubuf[..n].to_vec());
                    // Drain what else is queued without another trip through the scheduler.
                    drain_udp(&socket, &mut ubuf, &mut tunnel, &now, BATCH - 1);
                    // Then the IP side's queue as well: under `biased` a socket that never
                    // empties (a flood of junk, which needs no key) would otherwise keep the IP
                    // branch from ever being polled (review, session 46).
                    drain_ip(&mut ip, &mut tbuf, &mut tunnel, &now, BATCH);
                }
                Err(e) => {
                    let n = tunnel.count_recv_error();
                    if n.is_power_of_two() {
                        warn!(error = %e, failures = n, "UDP receive failed");
                    }
                }
            },
            r = ip_recv(&mut ip, &mut tbuf), if ip_open => match r {
                Ok(Some(b)) => {
                    tunnel.on_ip_packet(now(), b);
                    // Same batching as for UDP: take what is already queued, on both sides.
                    drain_ip(&mut ip, &mut tbuf, &mut tunnel, &now, BATCH - 1);
                    drain_udp(&socket, &mut ubuf, &mut tunnel, &now, BATCH);
                }
                Ok(None) => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // A TUN device that fails to read (deleted, or the driver gone) will not recover:
                // stop rather than spin on the error.
                Err(e) => anyhow::bail!("IP side read failed: {e}"),
            },
            _ = sleep => tunnel.on_timeout(now()),
        }
    }
    let snap = tunnel.snapshot();
    info!(counters = ?snap.counters, "mslld stopped");
    Ok(snap)
}

/// Packets or datagrams taken per readiness without another trip through the scheduler.
const BATCH: usize = 64;

/// Up to `max` datagrams already queued on the socket.
fn drain_udp(
    socket: &UdpSocket,
    buf: &mut [u8],
    tunnel: &mut Tunnel,
    now: &impl Fn() -> Instant,
    max: usize,
) {
    for _ in 0..max {
        match socket.try_recv_from(buf) {
            Ok((n, _)) => tunnel.on_datagram(now(), buf[..n].to_vec()),
            Err(e) => {
                if e.kind() != std::io::ErrorKind::WouldBlock {
                    let n = tunnel.count_recv_error();
                    if n.is_power_of_two() {
                        warn!(error = %e, failures = n, "UDP receive failed");
                    }
                }
                break;
            }
        }
    }
}

/// Up to `max` packets already queued on the IP side (an in-process source only while the
/// ingress has room: it can wait, a TUN device cannot).
fn drain_ip(
    ip: &mut IpSide,
    buf: &mut [u8],
    tunnel: &mut Tunnel,
    now: &impl Fn() -> Instant,
    max: usize,
) {
    for _ in 0..max {
        if matches!(ip, IpSide::Chan { .. }) && tunnel.ingress_full() {
            break;
        }
        match ip_try_recv(ip, buf) {
            Some(b) => tunnel.on_ip_packet(now(), b),
            None => break,
        }
    }
}

/// One packet from the IP side; `None` when an in-process source has closed. Copied once into
/// the protocol code's `Buf` (whose reference counts are not atomic; the channel's side is
/// `bytes::Bytes`).
async fn ip_recv(ip: &mut IpSide, buf: &mut [u8]) -> std::io::Result<Option<Buf>> {
    match ip {
        IpSide::Tun(dev) => {
            let n = dev.recv(buf).await?;
            Ok(Some(Buf::copy_from_slice(&buf[..n])))
        }
        IpSide::Chan { rx, .. } => Ok(rx.recv().await.map(|b| Buf::copy_from_slice(&b))),
    }
}

/// A packet already queued on the IP side, without waiting.
fn ip_try_recv(ip: &mut IpSide, buf: &mut [u8]) -> Option<Buf> {
    match ip {
        IpSide::Tun(dev) => dev
            .try_recv(buf)
            .ok()
            .map(|n| Buf::copy_from_slice(&buf[..n])),
        IpSide::Chan { rx, .. } => rx.try_recv().ok().map(|b| Buf::copy_from_slice(&b)),
    }
}

/// Enlarge the UDP socket buffers: a burst of frames (a whole SR window, or a scheduler catch-up
/// after a late timer) must not overflow the kernel's default ~200 KiB receive buffer. As root,
/// the `Force` variants exceed net.core.rmem_max; otherwise the kernel caps the request.
pub fn size_socket_buffers(socket: &UdpSocket, bytes: usize) {
    use nix::sys::socket::{setsockopt, sockopt};
    let fd = std::os::fd::AsFd::as_fd(socket);
    if setsockopt(&fd, sockopt::RcvBufForce, &bytes).is_err() {
        let _ = setsockopt(&fd, sockopt::RcvBuf, &bytes);
    }
    if setsockopt(&fd, sockopt::SndBufForce, &bytes).is_err() {
        let _ = setsockopt(&fd, sockopt::SndBuf, &bytes);
    }
}

/// SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        warn!("cannot install signal handlers; stop with SIGKILL");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => info!("SIGINT"),
        _ = term.recv() => info!("SIGTERM"),
    }
}
