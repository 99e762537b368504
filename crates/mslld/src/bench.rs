//! `mslld bench`: loopback throughput of the whole daemon data path, encryption on, no loss.
//!
//! ```text
//!  thread A: generator -> [daemon loop A: Tunnel + UDP 127.0.0.1] ==UDP==> [daemon loop B] -> sink   (thread B)
//! ```
//!
//! Both loops are the real `daemon::run` with an in-process IP side instead of TUN (so it needs no
//! privileges). The virtual link is set far above what the CPU can do, so the figure measures
//! the daemon's cost per packet: Gbit/s of IP payload delivered, and CPU seconds (user + system,
//! whole process, both loops and the generator) per Gbit delivered.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration as StdDuration;

use bytes::Bytes;
use msll_proto::{ClassifierConfig, Discipline, MsllConfig, Role, SchemeConfig, TimerScaling};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use crate::config::{Config, Limits, LinkConfig, MsllSection, TunConfig};
use crate::daemon::{self, IpSide};

#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    pub scheme: String,
    pub packet_bytes: usize,
    pub seconds: f64,
    pub packets: u64,
    pub gbit_per_s: f64,
    /// CPU seconds (all threads of the process) per Gbit of delivered IP bytes.
    pub cpu_s_per_gbit: f64,
    /// Cores kept busy on average.
    pub cpu_cores: f64,
}

fn cpu_seconds() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(r) => {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            t(r.user_time()) + t(r.system_time())
        }
        Err(_) => f64::NAN,
    }
}

/// The tunnel MTU of the loopback ends (`loopback_config`): the largest packet `run` can send.
pub const LOOPBACK_MTU: u16 = 1400;
/// The smallest packet `run` sends: an IPv4 and a UDP header (`ip_packet`).
pub const MIN_PACKET: usize = 28;

/// The longest measurement `run` accepts: a day. Longer is no benchmark, and a value past
/// `Duration`'s range would panic in the sleep after the CSV header is out (review, session 42:
/// `--seconds 1e20`).
pub const MAX_SECONDS: f64 = 86_400.0;

/// Refuse `run` parameters that would measure nothing, naming the option and its value: a time or
/// a rate that is not positive, a time over [`MAX_SECONDS`], a packet smaller than its headers or
/// larger than the loopback MTU (the tunnel would drop every packet and report 0 Gbit/s).
pub fn check_params(seconds: f64, packet_bytes: usize, rate_mbps: f64) -> anyhow::Result<()> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_SECONDS) {
        anyhow::bail!(
            "--seconds {seconds}: must be a positive number of seconds, at most {MAX_SECONDS}"
        );
    }
    if !(MIN_PACKET..=LOOPBACK_MTU as usize).contains(&packet_bytes) {
        anyhow::bail!(
            "--size {packet_bytes}: must be in {MIN_PACKET}..={LOOPBACK_MTU} (IPv4 + UDP headers \
             up to the loopback tunnel's MTU)"
        );
    }
    // The tunnel's own bound on `link.rate_mbps` (a rate past it is refused by every real end).
    if !crate::config::RATE_MBPS.contains(&rate_mbps) {
        anyhow::bail!(
            "--rate-mbps {rate_mbps}: must be a positive rate in {}..={} Mbit/s",
            crate::config::RATE_MBPS.start(),
            crate::config::RATE_MBPS.end()
        );
    }
    Ok(())
}

/// A configuration for one in-process end (no TUN is opened for it).
pub fn loopback_config(
    bind: SocketAddr,
    peer: SocketAddr,
    key_hex: &str,
    scheme: SchemeConfig,
    rate_mbps: f64,
    delay_ms: f64,
) -> Config {
    Config {
        bind,
        peer,
        key: Some(key_hex.to_string()),
        key_file: None,
        control: None,
        tun: TunConfig {
            name: "unused".into(),
            address: Ipv4Addr::new(198, 19, 0, 1),
            prefix: 24,
            mtu: LOOPBACK_MTU,
            address6: None,
            prefix6: 64,
            mss_clamp: Default::default(),
        },
        link: LinkConfig {
            rate_mbps,
            delay_ms,
            frame_payload: None,
        },
        msll: MsllSection {
            names: Vec::new(),
            config: MsllConfig {
                services: vec![scheme],
                classifier: ClassifierConfig::default(),
                scheduler: Discipline::Scfq,
                rates: Vec::new(),
                measure: None,
                queue_limit: Some(256),
                timer_scaling: TimerScaling::None,
            },
        },
        role: Role::Host,
        limits: Limits::default(),
        impair: None,
        hello_interval_s: 1.0,
        peer_timeout_s: None,
        base_dir: Default::default(),
    }
}

fn random_key() -> anyhow::Result<String> {
    let k: [u8; 32] = crate::os_random()?;
    Ok(k.iter().map(|b| format!("{b:02x}")).collect())
}

/// A plausible IPv4/UDP packet of `size` bytes (the classifier may look at headers).
pub fn ip_packet(size: usize, seq: u32) -> Vec<u8> {
    let size = size.max(28);
    let mut p = vec![0u8; size];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(size as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 17;
    p[12..16].copy_from_slice(&[198, 19, 0, 1]);
    p[16..20].copy_from_slice(&[198, 19, 0, 2]);
    p[20..22].copy_from_slice(&9000u16.to_be_bytes());
    p[22..24].copy_from_slice(&9001u16.to_be_bytes());
    p[24..26].copy_from_slice(&((size - 20) as u16).to_be_bytes());
    p[28..]
        .iter_mut()
        .enumerate()
        .for_each(|(i, b)| *b = i as u8);
    if size >= 32 {
        p[28..32].copy_from_slice(&seq.to_be_bytes());
    }
    p
}

/// `rate_mbps`: the virtual link rate; far above the CPU's capacity measures the unpaced path.
pub fn run(
    scheme: SchemeConfig,
    seconds: f64,
    packet_bytes: usize,
    rate_mbps: f64,
) -> anyhow::Result<BenchResult> {
    check_params(seconds, packet_bytes, rate_mbps)?;
    let sa = std::net::UdpSocket::bind("127.0.0.1:0")?;
    let sb = std::net::UdpSocket::bind("127.0.0.1:0")?;
    sa.set_nonblocking(true)?;
    sb.set_nonblocking(true)?;
    let (aa, ab) = (sa.local_addr()?, sb.local_addr()?);
    let key = random_key()?;
    // 1 ms one-way delay sizes the SR timers for loopback scheduling jitter rather than for the
    // microsecond loopback RTT.
    let ca = loopback_config(aa, ab, &key, scheme.clone(), rate_mbps, 1.0);
    let cb = loopback_config(ab, aa, &key, scheme.clone(), rate_mbps, 1.0);
    let delivered = Arc::new(AtomicU64::new(0));
    let packets = Arc::new(AtomicU64::new(0));
    let (stop_a_tx, stop_a) = oneshot::channel::<()>();
    let (stop_b_tx, stop_b) = oneshot::channel::<()>();

    let ta = std::thread::spawn(move || -> anyhow::Result<()> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async move {
            let (gen_tx, gen_rx) = mpsc::channel::<Bytes>(256);
            let (out_tx, mut out_rx) = mpsc::channel::<Bytes>(256);
            tokio::spawn(async move { while out_rx.recv().await.is_some() {} });
            let tmpl = ip_packet(packet_bytes, 0);
            tokio::spawn(async move {
                while gen_tx.send(Bytes::copy_from_slice(&tmpl)).await.is_ok() {}
            });
            let sock = tokio::net::UdpSocket::from_std(sa)?;
            daemon::run(
                ca,
                IpSide::Chan {
                    rx: gen_rx,
                    tx: out_tx,
                },
                sock,
                None,
                async move {
                    let _ = stop_a.await;
                },
            )
            .await
            .map(|_| ())
        })
    });
    let (d2, p2) = (delivered.clone(), packets.clone());
    let tb = std::thread::spawn(move || -> anyhow::Result<()> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async move {
            // Held open so the loop's IP source never reports end of input.
            let (_idle_tx, idle_rx) = mpsc::channel::<Bytes>(1);
            let (sink_tx, mut sink_rx) = mpsc::channel::<Bytes>(1024);
            tokio::spawn(async move {
                while let Some(b) = sink_rx.recv().await {
                    d2.fetch_add(b.len() as u64, Ordering::Relaxed);
                    p2.fetch_add(1, Ordering::Relaxed);
                }
            });
            let sock = tokio::net::UdpSocket::from_std(sb)?;
            daemon::run(
                cb,
                IpSide::Chan {
                    rx: idle_rx,
                    tx: sink_tx,
                },
                sock,
                None,
                async move {
                    let _ = stop_b.await;
                },
            )
            .await
            .map(|_| ())
        })
    });

    std::thread::sleep(StdDuration::from_millis(500));
    let (b0, p0, c0, t0) = (
        delivered.load(Ordering::Relaxed),
        packets.load(Ordering::Relaxed),
        cpu_seconds(),
        std::time::Instant::now(),
    );
    std::thread::sleep(StdDuration::from_secs_f64(seconds));
    let (b1, p1, c1, dt) = (
        delivered.load(Ordering::Relaxed),
        packets.load(Ordering::Relaxed),
        cpu_seconds(),
        t0.elapsed().as_secs_f64(),
    );
    let _ = stop_a_tx.send(());
    let _ = stop_b_tx.send(());
    ta.join()
        .map_err(|_| anyhow::anyhow!("bench thread A panicked"))??;
    tb.join()
        .map_err(|_| anyhow::anyhow!("bench thread B panicked"))??;
    let gbit = (b1 - b0) as f64 * 8.0 / 1e9;
    // Nothing delivered is a failed measurement (the link never came up, or a rate too low to
    // carry one packet in the time), not a speed of 0 (review, session 47: it printed 0.000
    // Gbit/s and exited 0).
    anyhow::ensure!(
        p1 > p0,
        "bench {}: no packet delivered in {dt:.1} s (did the link come up? is the rate enough \
         for {packet_bytes}-byte packets?)",
        scheme.label()
    );
    Ok(BenchResult {
        scheme: scheme.label(),
        packet_bytes,
        seconds: dt,
        packets: p1 - p0,
        gbit_per_s: gbit / dt,
        cpu_s_per_gbit: if gbit > 0.0 {
            (c1 - c0) / gbit
        } else {
            f64::INFINITY
        },
        cpu_cores: (c1 - c0) / dt,
    })
}
