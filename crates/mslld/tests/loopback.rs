//! The real daemon loop (`daemon::run`) on two loopback UDP sockets, with in-process IP sides:
//! emulated loss, hostile datagrams from a third socket, stats over the control socket, clean
//! shutdown. Needs no privileges.

use std::net::UdpSocket as StdUdp;
use std::time::Duration;

use bytes::Bytes;
use msll_proto::SchemeConfig;
use msll_sim::error_model::ErrorSpec;
use mslld::bench::{ip_packet, loopback_config};
use mslld::config::ImpairConfig;
use mslld::daemon::{self, IpSide};
use mslld::wire::{Cipher, Header, Kind, Psk};
use tokio::sync::{mpsc, oneshot};

const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// One daemon on the current `LocalSet`, with in-process IP channels; stops when the returned
/// sender fires (or is dropped).
fn spawn_daemon(
    cfg: mslld::config::Config,
    rx: mpsc::Receiver<Bytes>,
    tx: mpsc::Sender<Bytes>,
    socket: StdUdp,
    control: Option<mpsc::Receiver<mslld::daemon::ControlRequest>>,
) -> (
    tokio::task::JoinHandle<anyhow::Result<mslld::tunnel::Snapshot>>,
    oneshot::Sender<()>,
) {
    let (stop_tx, stop) = oneshot::channel::<()>();
    let task = tokio::task::spawn_local(daemon::run(
        cfg,
        IpSide::Chan { rx, tx },
        tokio::net::UdpSocket::from_std(socket).unwrap(),
        control,
        async move {
            let _ = stop.await;
        },
    ));
    (task, stop_tx)
}

/// Run `f` on a current-thread runtime inside a LocalSet: the daemon's endpoint holds non-`Send`
/// buffers (`msll_proto::Buf`), so its tasks stay on this thread, as `mslld` runs them on its
/// current-thread runtime.
fn on_local_set<F: std::future::Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&rt, f)
}

/// Two loopback sockets and SR/M2 configurations (20 Mbit/s, 2 ms) of daemons facing each other.
fn sr_pair() -> (StdUdp, StdUdp, mslld::config::Config, mslld::config::Config) {
    let sa = StdUdp::bind("127.0.0.1:0").unwrap();
    let sb = StdUdp::bind("127.0.0.1:0").unwrap();
    sa.set_nonblocking(true).unwrap();
    sb.set_nonblocking(true).unwrap();
    let (aa, ab) = (sa.local_addr().unwrap(), sb.local_addr().unwrap());
    let sr = SchemeConfig::from_name("sr-m2").unwrap();
    let ca = loopback_config(aa, ab, KEY, sr.clone(), 20.0, 2.0);
    let cb = loopback_config(ab, aa, KEY, sr, 20.0, 2.0);
    (sa, sb, ca, cb)
}

#[test]
fn lossy_loopback_transfer_survives_hostile_datagrams() {
    on_local_set(async {
        let (sa, sb, mut ca, mut cb) = sr_pair();
        let ab = sb.local_addr().unwrap();
        for (c, seed) in [(&mut ca, 1), (&mut cb, 2)] {
            c.impair = Some(ImpairConfig {
                error: ErrorSpec::Bernoulli { p: 0.05 },
                delay_ms: 2.0,
                jitter_ms: 0.0,
                reorder: false,
                seed,
            });
        }
        let dir = std::env::temp_dir().join(format!("mslld-loopback-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ctl = dir.join("b.sock");

        let (a_in_tx, a_in_rx) = mpsc::channel::<Bytes>(64);
        let (a_out_tx, _a_out_rx) = mpsc::channel::<Bytes>(64);
        let (_b_in_tx, b_in_rx) = mpsc::channel::<Bytes>(64);
        let (b_out_tx, mut b_out_rx) = mpsc::channel::<Bytes>(4096);
        let (ctl_rx, _guard) = mslld::control::serve(&ctl).unwrap();
        let (a, stop_a_tx) = spawn_daemon(ca, a_in_rx, a_out_tx, sa, None);
        let (b, stop_b_tx) = spawn_daemon(cb, b_in_rx, b_out_tx, sb, Some(ctl_rx));

        // An attacker on loopback: garbage, forgeries under a wrong key, and replays of
        // sniffed-looking datagrams it cannot produce validly.
        let attacker = StdUdp::bind("127.0.0.1:0").unwrap();
        let forger = Cipher::new(&Psk([9; 32]));
        let hostile = tokio::task::spawn_blocking(move || {
            for i in 0u64..600 {
                let mut d = Vec::new();
                forger.seal(
                    &Header {
                        kind: Kind::Data,
                        session: i + 1,
                        echo: 0,
                        counter: u64::MAX - i,
                    },
                    |o| o.extend_from_slice(&ip_packet(300, 7)),
                    &mut d,
                );
                let _ = attacker.send_to(&d, ab);
                let junk: Vec<u8> = (0..(i % 90) as u8).map(|k| k.wrapping_mul(31)).collect();
                let _ = attacker.send_to(&junk, ab);
                std::thread::sleep(Duration::from_micros(500));
            }
        });

        // 1000 packets of 1000 bytes at ~8 Mbit/s on a 20 Mbit/s link with 5 % loss each way.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let n = 1000u32;
        let sender = tokio::spawn(async move {
            for i in 0..n {
                a_in_tx.send(Bytes::from(ip_packet(1000, i))).await.unwrap();
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            a_in_tx
        });
        let mut got = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while got.len() < n as usize {
            match tokio::time::timeout_at(deadline, b_out_rx.recv()).await {
                Ok(Some(p)) => got.push(p),
                _ => break,
            }
        }
        let _keep_open = sender.await.unwrap();
        hostile.await.unwrap();
        let stats = tokio::task::spawn_blocking(move || mslld::control::query(&ctl))
            .await
            .unwrap()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(stats.trim()).unwrap();
        let _ = stop_a_tx.send(());
        let _ = stop_b_tx.send(());
        let sa = a.await.unwrap().unwrap();
        let sb = b.await.unwrap().unwrap();
        let _ = std::fs::remove_dir_all(&dir);

        let seqs: Vec<u32> = got
            .iter()
            .map(|p| u32::from_be_bytes(p[28..32].try_into().unwrap()))
            .collect();
        assert_eq!(
            seqs,
            (0..n).collect::<Vec<_>>(),
            "SR delivers all, in order"
        );
        for (i, p) in got.iter().enumerate() {
            assert_eq!(&p[..], &ip_packet(1000, i as u32)[..]);
        }
        assert!(sb.counters.impair_lost > 10, "{:?}", sb.counters);
        assert!(sa.services[0].counters.retransmissions > 10);
        // Hostile datagrams pass through the same impairment first, so only part arrive.
        assert!(sb.counters.auth_failed > 300, "{:?}", sb.counters);
        assert!(sb.counters.malformed > 300, "{:?}", sb.counters);
        assert_eq!(sb.counters.peer_restarts, 0);
        assert_eq!(v["link_up"], true);
        assert!(
            v["services"][0]["counters"]["packets_delivered"]
                .as_u64()
                .unwrap()
                > 0
        );
        // The Endpoint's Table 8.1 characterisation is part of the stats.
        assert_eq!(
            v["services"][0]["metrics"]["share"], 1.0,
            "{}",
            v["services"][0]
        );
    });
}

/// Packets the IP side refuses are counted, not only logged (input audit, session 23: a TUN
/// write failure was a warning per packet and no counter).
#[test]
fn refused_ip_writes_are_counted() {
    on_local_set(async {
        let (sa, sb, ca, cb) = sr_pair();
        let (a_in_tx, a_in_rx) = mpsc::channel::<Bytes>(64);
        let (a_out_tx, _a_out_rx) = mpsc::channel::<Bytes>(64);
        let (_b_in_tx, b_in_rx) = mpsc::channel::<Bytes>(64);
        // b's IP side is gone: every packet b delivers is refused.
        let (b_out_tx, b_out_rx) = mpsc::channel::<Bytes>(64);
        drop(b_out_rx);
        let (a, stop_a_tx) = spawn_daemon(ca, a_in_rx, a_out_tx, sa, None);
        let (b, stop_b_tx) = spawn_daemon(cb, b_in_rx, b_out_tx, sb, None);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let n = 40u32;
        for i in 0..n {
            a_in_tx.send(Bytes::from(ip_packet(500, i))).await.unwrap();
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let _ = stop_a_tx.send(());
        let _ = stop_b_tx.send(());
        let _sa = a.await.unwrap().unwrap();
        let sb = b.await.unwrap().unwrap();
        let delivered = sb.services[0].counters.packets_delivered;
        assert_eq!(delivered, n as u64, "{:?}", sb.services[0].counters);
        assert_eq!(sb.counters.ip_write_errors, delivered, "{:?}", sb.counters);
        // `ip_out` counts what the tunnel handed to the IP side, refused or not.
        assert_eq!(sb.counters.ip_out, delivered, "{:?}", sb.counters);
    });
}
