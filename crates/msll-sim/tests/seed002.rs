//! Seed 002's system through the whole simulator (docs/seed002.md): the 19.2 kbit/s `cdpd` link
//! with 5 IP fragments per datagram, the MAC access delay, and the shared congestion state.

use msll_proto::SchemeConfig;
use msll_sim::error_model::{ErrorSpec, InitialState};
use msll_sim::presets::{ExtraDelay, MacAccess, MacSides, Topology};
use msll_sim::tcp::TcpConfig;
use msll_sim::{AppSpec, IpService, RunResult, SimConfig, Simulation};

mod common;
use common::runs;

fn wong(level: u8, bytes: u64) -> SimConfig {
    let mut c = SimConfig {
        apps: vec![AppSpec::Ftp {
            bytes,
            tcp: TcpConfig::wong1998(),
            start_s: 0.0,
        }],
        duration_s: 1e5,
        drain_s: 0.0,
        queue_limit: 1000,
        ..SimConfig::for_link("cdpd", Topology::Lan1, level).unwrap()
    };
    c.wired.delay_s = 0.03;
    c
}

fn mean(rs: &[RunResult], k: &str) -> f64 {
    rs.iter().map(|r| r.get(k).unwrap()).sum::<f64>() / rs.len() as f64
}

/// Error-free, the link carries each 552-byte datagram as 5 frames (4 x 133 + 105 bytes with the
/// Default scheme's 1-byte header): 265.4 ms of air time, so 512 bytes of data per 265.4 ms
/// (15.43 kbit/s), the ceiling of seed002.md sec. 1.10 less the header bytes.
#[test]
fn error_free_throughput_is_the_fragmented_air_time_bound() {
    let r = &runs(&wong(0, 500_000), 1)[0];
    assert_eq!(r.get("ftp.completed"), Some(1.0));
    assert_eq!(r.get("ip.fragmented"), Some(977.0), "one per data segment");
    let bound = 512.0 * 8.0 / (637.0 * 8.0 / 19_200.0);
    let t = r.get("ftp.throughput_bps").unwrap();
    assert!((t / bound - 1.0).abs() < 0.01, "{t} vs {bound}");
}

/// Seed 002's MAC (sec. 1.5): an exponential access delay before every frame. At both ends
/// with mean 50 ms, each 5-frame datagram takes 265.4 + 250 ms on average: throughput falls to
/// about 0.515 of the error-free value; at the mobile host only (the default) the data
/// direction is untouched and only the acknowledgments wait.
#[test]
fn mac_access_delay_stretches_each_frame() {
    let base = mean(&runs(&wong(0, 300_000), 1), "ftp.throughput_bps");
    let with = |sides| {
        let mut c = wong(0, 300_000);
        c.wireless.mac_access = Some(MacAccess {
            mean_s: 0.05,
            sides,
        });
        assert!(
            !c.replication_invariant(),
            "the delay draws per replication"
        );
        mean(&runs(&c, 3), "ftp.throughput_bps") / base
    };
    let both = with(MacSides::Both);
    assert!((0.47..0.56).contains(&both), "both sides: {both}");
    let host = with(MacSides::Host);
    assert!((0.97..1.0).contains(&host), "host only: {host}");
}

/// Forward wired packets (FH -> BS) as (send time, arrival time), matched by IP ident in the
/// ns-2-like trace, in sending order.
fn wired_delays(cfg: &SimConfig) -> Vec<(f64, f64)> {
    let buf = Buf::default();
    let mut sim = Simulation::new(cfg, std::path::Path::new(".")).unwrap();
    sim.set_trace(Box::new(buf.clone()));
    sim.run().unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let mut sent: Vec<(u32, f64)> = Vec::new();
    let mut arrived = std::collections::HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if (f[2], f[3], f[4]) != ("0", "1", "ip") {
            continue;
        }
        let (t, id) = (f[1].parse::<f64>().unwrap(), f[6].parse::<u32>().unwrap());
        match f[0] {
            "-" => sent.push((id, t)),
            "r" => {
                arrived.insert(id, t);
            }
            _ => {}
        }
    }
    sent.iter().map(|&(id, t)| (t, arrived[&id])).collect()
}

/// Seed 002's Internet delay (sec. 1.7, A3/A4): 0.02 s + Erlang(k = 2) of mean 0.01 s per
/// packet. Allowed to reorder, the random part has the Erlang's mean (0.01 s) and variance
/// (mean^2 / k = 5e-5 s^2); in FIFO order (the default) no packet overtakes another and each
/// takes at least its own draw, so the mean is at least as large.
#[test]
fn internet_delay_is_erlang_and_fifo() {
    let cfg = |reorder| {
        let mut c = wong(0, 300_000);
        c.wired.delay_s = 0.02;
        c.wired.extra_delay = Some(ExtraDelay {
            mean_s: 0.01,
            k: 2,
            reorder,
        });
        assert!(
            !c.replication_invariant(),
            "the delay draws per replication"
        );
        c
    };
    // 552 bytes at 10 Mbit/s, then the constant 20 ms.
    let fixed = 552.0 * 8.0 / 10e6 + 0.02;
    let free = wired_delays(&cfg(true));
    let extra: Vec<f64> = free.iter().map(|(s, a)| a - s - fixed).collect();
    let n = extra.len() as f64;
    assert!(n > 500.0, "{n} packets");
    let m = extra.iter().sum::<f64>() / n;
    let v = extra.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    // The mean of n draws has sd 0.0071 / sqrt(n) (< 0.3 ms here): 4 sds.
    assert!((m - 0.01).abs() < 4.0 * 0.00707 / n.sqrt(), "mean {m}");
    assert!((v / 5e-5 - 1.0).abs() < 0.25, "variance {v}");
    assert!(extra.iter().all(|&x| x > -1e-9));
    let fifo = wired_delays(&cfg(false));
    assert!(fifo.windows(2).all(|w| w[1].1 >= w[0].1), "overtaken");
    let mf = fifo.iter().map(|(s, a)| a - s - fixed).sum::<f64>() / fifo.len() as f64;
    assert!(mf >= m - 4.0 * 0.00707 / n.sqrt(), "FIFO mean {mf} vs {m}");
    let overtaken = free.windows(2).filter(|w| w[1].1 < w[0].1).count();
    assert!(
        overtaken > 0,
        "with reordering some packet overtakes another"
    );
}

/// The delay metrics through the whole simulator (seed 002 Figs 4.8, 4.9). Error-free, each
/// forward frame's link-layer delay is its air time: a 552-byte datagram is four 134-byte frames
/// and one of 106 (2-byte status-RLP header), 53.5 ms on average at 19.2 kbit/s; both directions
/// together average less (the 42-byte ACK frames). Lossy, frames wait for a status after MTBT;
/// a segment's end-to-end delay covers its link-layer delays and more. Nothing is misordered.
#[test]
fn delay_metrics_through_the_simulator() {
    let run = |level: u8| {
        let mut c = wong(level, 100_000);
        c.scheme = SchemeConfig::from_name("status-rlp").unwrap();
        if let AppSpec::Ftp { tcp, .. } = &mut c.apps[0] {
            tcp.e2e_delay = true;
        }
        runs(&c, 2)
    };
    let clean = run(0);
    let air = (4.0 * 134.0 + 106.0) / 5.0 * 8.0 / 19_200.0;
    let ll = mean(&clean, "ll.delay_s");
    assert!((ll - air).abs() < 1e-6, "{ll} vs {air}");
    let all = mean(&clean, "ll.delay_all_s");
    assert!(all < ll && all > 42.0 * 8.0 / 19_200.0, "{all}");
    let e2e0 = mean(&clean, "ftp.e2e_delay_s");
    assert!(e2e0 > 5.0 * air, "{e2e0}");
    let lossy = run(4); // PER 20 %
    let ll20 = mean(&lossy, "ll.delay_s");
    assert!(ll20 > ll + 0.05, "{ll20}");
    assert!(
        mean(&lossy, "ftp.e2e_delay_s") > e2e0,
        "end-to-end grows with PER"
    );
    for r in clean.iter().chain(&lossy) {
        assert_eq!(r.get("ll.delay_misordered"), Some(0.0));
    }
    // Without `e2e_delay`, and for a scheme that keeps no frame log, the metrics are absent.
    let plain = &runs(&wong(0, 100_000), 1)[0];
    assert_eq!(plain.get("ftp.e2e_delay_s"), None);
    assert_eq!(plain.get("ll.delay_s"), None);
}

/// How close in time a delivery and a loss must be to count as a disagreement.
const WINDOW_S: f64 = 0.1;

/// A trace sink the test can read back.
#[derive(Clone, Default)]
struct Buf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Wired-link packets (FH -> BS forward, BS -> FH reverse) as (time, forward, lost), from the
/// ns-2-like trace: a transmission ('-') is lost when an 'e' line for it follows.
fn wired_fates(cfg: &SimConfig) -> (RunResult, Vec<(f64, bool, bool)>) {
    let buf = Buf::default();
    let mut sim = Simulation::new(cfg, std::path::Path::new(".")).unwrap();
    sim.set_trace(Box::new(buf.clone()));
    let r = sim.run().unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let mut out: Vec<(f64, bool, bool)> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let wired = matches!((f[2], f[3]), ("0", "1") | ("1", "0"));
        match f[0] {
            "-" if wired => out.push((f[1].parse().unwrap(), f[2] == "0", false)),
            "e" if wired => out.last_mut().unwrap().2 = true,
            _ => {}
        }
    }
    (r, out)
}

/// The Internet's congestion loss (sec. 1.7) as an on-off chain on the wired link, `shared`: a
/// congested Internet drops data and acknowledgments alike, so a packet gets through in one
/// direction within 0.1 s of a loss in the other only when the state changes in between. With
/// independent directions (the default) that happens all the time.
#[test]
fn shared_congestion_state_drops_both_directions_together() {
    let cfg = |shared| {
        let mut c = wong(0, 1_000_000);
        c.scheme = SchemeConfig::from_name("status-rlp-ns").unwrap();
        c.wired.error = ErrorSpec::TwoState {
            good_mean_s: 95.0,
            bad_mean_s: 5.0,
            ber_good: 0.0,
            ber_bad: 1.0,
            initial: InitialState::Stationary,
            shared,
        };
        c
    };
    let crossings = |shared| {
        let (mut n, mut lost, mut timeouts) = (0usize, 0usize, 0.0);
        for rep in 0..4 {
            let mut c = cfg(shared);
            c.replication = rep;
            let (r, fates) = wired_fates(&c);
            assert_eq!(r.get("ftp.completed"), Some(1.0));
            timeouts += r.get("ftp.timeouts").unwrap();
            let drops: Vec<(f64, bool)> =
                fates.iter().filter(|x| x.2).map(|x| (x.0, x.1)).collect();
            lost += drops.len();
            n += fates
                .iter()
                .filter(|&&(t, fwd, l)| {
                    !l && drops
                        .iter()
                        .any(|&(td, dfwd)| dfwd != fwd && (t - td).abs() < WINDOW_S)
                })
                .count();
        }
        assert!(
            lost > 20 && timeouts > 4.0,
            "lost {lost}, timeouts {timeouts}"
        );
        n
    };
    // Only a state change inside the window makes the shared model disagree (seeds 0-3: 3
    // deliveries next to a loss, against 104 with independent directions).
    let (shared, independent) = (crossings(true), crossings(false));
    assert!(
        independent >= 30 && shared * 10 <= independent,
        "shared {shared}, independent {independent}"
    );
}

/// Seed 002's IP servers (sec. 1.6): a sparse UDP stream (one
/// packet every 0.8 s during talkspurts, so nothing ever waits for a server) gains exactly the
/// three service times on its way, 0.2 ms at the fixed host and 1 ms at the base station and at
/// the mobile host, whether the datagram crosses the link whole or as five fragments (the
/// mobile host serves each fragment, 55 ms apart, and reassembles after the last one's
/// service). The fastest packet is the same packet with and without servers. The servers'
/// counts tell where each packet was served: 3 times whole (fixed host, base station, mobile
/// host), 7 times fragmented (the base station serves the datagram once, before it fragments
/// it; the mobile host each of its 5 fragments, and not the datagram it reassembles).
#[test]
fn ip_service_adds_each_nodes_service_time() {
    for size in [100usize, 500] {
        let cfg = |service| {
            let mut c = wong(0, 0);
            c.apps = vec![AppSpec::Conference {
                // One packet every 0.8 s in a talkspurt, far apart even as five fragments.
                peak_rate_bps: (size * 8 * 5 / 4) as u64,
                packet_size: size,
                talk_mean_s: 1.0,
                silence_mean_s: 1.35,
                start_s: 0.0,
                tos: 0,
            }];
            c.duration_s = 200.0;
            c.drain_s = 10.0;
            c.ip_service = service;
            c
        };
        let plain = &runs(&cfg(None), 1)[0];
        let mut sim =
            Simulation::new(&cfg(Some(IpService::WONG1998)), std::path::Path::new(".")).unwrap();
        let served = &sim.run().unwrap();
        let per_packet = if size > 132 { 7.0 } else { 3.0 };
        assert_eq!(
            sim.engine_counters().kinds.ip_served as f64,
            per_packet * served.get("conf.received").unwrap(),
            "size {size}"
        );
        let frags = plain.get("ip.fragmented").unwrap();
        assert_eq!(frags > 0.0, size > 132, "size {size}: {frags} fragmented");
        let got = plain.get("conf.received").unwrap();
        assert!(got > 50.0, "size {size}: {got} received");
        assert_eq!(plain.get("conf.received"), served.get("conf.received"));
        let gain =
            served.get("conf.delay_min_ms").unwrap() - plain.get("conf.delay_min_ms").unwrap();
        assert!((gain - 2.2).abs() < 1e-6, "size {size}: +{gain} ms");
        let max_gain =
            served.get("conf.delay_max_ms").unwrap() - plain.get("conf.delay_max_ms").unwrap();
        assert!(
            (max_gain - 2.2).abs() < 1e-6,
            "size {size}: max +{max_gain} ms"
        );
    }
}

/// A slow server is a bottleneck: at 2 packets/s the base station serves two datagrams per second,
/// data segments and ACKs together. A delayed ACK for every second segment would leave 4/3
/// segments per second (5.5 kbit/s of data); segments arrive 0.5 s apart, past the 0.2 s delayed-
/// ACK timer, so most get an ACK of their own and the transfer runs near 1 segment per second
/// (4.1 kbit/s). Data alone through the server would reach 8.2 kbit/s;
/// rates of zero are no servers at all (the same run, metric for metric); a bad rate is refused
/// naming the field.
#[test]
fn ip_service_queues_and_zero_rates_change_nothing() {
    let mut slow = wong(0, 100_000);
    slow.ip_service = Some(IpService {
        base_station_pps: 2.0,
        ..IpService::WONG1998
    });
    let r = &runs(&slow, 1)[0];
    assert_eq!(r.get("ftp.completed"), Some(1.0));
    let t = r.get("ftp.throughput_bps").unwrap();
    assert!(t < 1.5 * 512.0 * 8.0 && t > 0.8 * 512.0 * 8.0, "{t}");

    let base = wong(1, 100_000);
    let mut zero = base.clone();
    zero.ip_service = Some(IpService {
        wired_host_pps: 0.0,
        base_station_pps: 0.0,
        wireless_host_pps: 0.0,
    });
    let (a, b) = (&runs(&base, 1)[0], &runs(&zero, 1)[0]);
    assert!(
        a.get("ftp.retransmissions").unwrap() > 0.0,
        "PER 1 %: a lossy run"
    );
    assert_eq!(a, b, "bit for bit");

    let mut bad = base;
    bad.ip_service = Some(IpService {
        wireless_host_pps: -1.0,
        ..IpService::WONG1998
    });
    let e = Simulation::new(&bad, std::path::Path::new("."))
        .err()
        .expect("refused");
    assert_eq!(e.field, "ip_service.wireless_host_pps");
    assert_eq!(e.value, "-1");
}

/// The reassembly timeout reaches the hosts: a datagram's five fragments take 265 ms of air
/// time, so with a 0.2 s timeout the mobile host gives every datagram up (nothing is delivered
/// and the buffers expire), while the default 30 s loses none. An impossible value is refused.
#[test]
fn reassembly_timeout_is_the_hosts() {
    let mut short = wong(0, 20_000);
    short.duration_s = 60.0;
    short.reassembly_timeout_s = 0.2;
    let r = &runs(&short, 1)[0];
    assert_eq!(r.get("ftp.completed"), Some(0.0));
    assert_eq!(r.get("ftp.bytes"), Some(0.0));
    assert!(r.get("ip.reassembly_expired").unwrap() > 0.0);
    let base = &runs(&wong(0, 20_000), 1)[0];
    assert_eq!(base.get("ftp.completed"), Some(1.0));
    assert_eq!(base.get("ip.reassembly_expired"), Some(0.0));
    short.reassembly_timeout_s = f64::NAN;
    let e = Simulation::new(&short, std::path::Path::new("."))
        .err()
        .expect("refused");
    assert_eq!(e.field, "reassembly_timeout_s");
}
