//! Issue 3 acceptance through the whole simulator: error-free FTP throughput equals the analytic
//! window/link-limited value; the papers' Raw-link throughput drop from level 1 to level 2.

use msll_proto::DataRate;
use msll_sim::presets::{self, Topology};
use msll_sim::tcp::TcpConfig;
use msll_sim::{AppSpec, RunResult, SimConfig, Summary};

mod common;
use common::runs;

fn ftp(link: &str, topo: Topology, level: u8, bytes: u64, tcp: TcpConfig) -> SimConfig {
    SimConfig {
        apps: vec![AppSpec::Ftp {
            bytes,
            tcp,
            start_s: 0.0,
        }],
        duration_s: 1e6,
        drain_s: 0.0,
        seed: 3,
        ..SimConfig::for_link(link, topo, level).unwrap()
    }
}

/// One-way delay of `bytes` over the path: every hop's serialisation + propagation (no queueing).
fn one_way_s(link: &str, topo: Topology, wireless_bytes: usize, wired_bytes: usize) -> f64 {
    let p = presets::wireless(link).unwrap();
    let w = presets::wired(topo.wired_name(), p.frame_payload).unwrap();
    let wl = DataRate::from_bps(p.rate_bps)
        .unwrap()
        .tx_time(wireless_bytes)
        .as_secs_f64()
        + p.delay_s;
    let wd = DataRate::from_bps(w.rate_bps)
        .unwrap()
        .tx_time(wired_bytes)
        .as_secs_f64()
        + w.delay_s;
    wd + wl * topo.wireless_links() as f64
}

/// Analytic steady-state throughput of an error-free transfer:
///   T = min( R * S/(S+h),  W * S * 8 / RTT0 ),  RTT0 = one-way(data) + one-way(ACK)
/// with R the wireless rate (the bottleneck), S the segment size, h = 1 Default header byte,
/// W = window_ packets, ACK = 40 bytes. Slow start costs a few RTTs out of thousands.
fn analytic_bps(link: &str, topo: Topology, window: u32) -> f64 {
    let p = presets::wireless(link).unwrap();
    let s = p.frame_payload;
    let rtt = one_way_s(link, topo, s + 1, s) + one_way_s(link, topo, 41, 40);
    let link_limit = p.rate_bps as f64 * s as f64 / (s + 1) as f64;
    let window_limit = window as f64 * s as f64 * 8.0 / rtt;
    link_limit.min(window_limit)
}

#[test]
fn error_free_throughput_is_link_or_window_limited() {
    // WLAN LAN1, 100 MB: link-limited (RTT 13 ms, BDP ~3 packets << 20).
    let r = &runs(
        &ftp(
            "wlan",
            Topology::Lan1,
            0,
            100_000_000,
            TcpConfig::dissertation(1000),
        ),
        1,
    )[0];
    let t = r.get("ftp.throughput_bps").unwrap();
    let a = analytic_bps("wlan", Topology::Lan1, 20);
    assert!((a - 1_998_002.0).abs() < 1.0, "{a}");
    assert!(
        (t / a - 1.0).abs() < 0.002,
        "WLAN LAN1: measured {t} vs analytic {a}"
    );
    assert_eq!(r.get("ftp.completed"), Some(1.0));
    assert_eq!(r.get("ftp.timeouts"), Some(0.0));
    // Cellular WAN2: window-limited, 20 x 400 bits / 602.6 ms = 13.28 kbit/s < 14.12 (seed004-ch4 §8).
    let r = &runs(
        &ftp(
            "cellular",
            Topology::Wan2,
            0,
            2_000_000,
            TcpConfig::dissertation(50),
        ),
        1,
    )[0];
    let t = r.get("ftp.throughput_bps").unwrap();
    let a = analytic_bps("cellular", Topology::Wan2, 20);
    assert!((a - 13_276.0).abs() < 5.0, "{a}");
    assert!(
        (t / a - 1.0).abs() < 0.005,
        "Cellular WAN2: measured {t} vs analytic {a}"
    );
    // HSCSD WAN1 (the papers' HSCSD setup) is window-limited too: ~51 kbit/s of 86.4.
    let r = &runs(
        &ftp(
            "hscsd",
            Topology::Wan1,
            0,
            2_000_000,
            TcpConfig::dissertation(100),
        ),
        1,
    )[0];
    let t = r.get("ftp.throughput_bps").unwrap();
    let a = analytic_bps("hscsd", Topology::Wan1, 20);
    assert!(
        (t / a - 1.0).abs() < 0.01,
        "HSCSD WAN1: measured {t} vs analytic {a}"
    );
}

fn mean(rs: &[RunResult], k: &str) -> f64 {
    Summary::of(&rs.iter().map(|r| r.get(k).unwrap()).collect::<Vec<_>>()).mean
}

#[test]
fn raw_link_throughput_drop_from_level_1_to_2() {
    // Seed 000 Fig. 2 (HSCSD, 100 B packets) and seed 001 Fig. 2 (802.11b WLAN): "about 30%".
    // With the dissertation's TCP (ns-2.1b4, 500 ms tick) msll measures 37.5% (HSCSD) and 41%
    // (WLAN); with the ns-2.35 preset 33% and 21% (docs/tcp.md). Assert the broad band that holds
    // for both presets; the report's claims table carries the exact comparison.
    let drop = |link: &str, topo, bytes, tcp: &dyn Fn() -> TcpConfig| {
        let t1 = mean(
            &runs(&ftp(link, topo, 1, bytes, tcp()), 6),
            "ftp.throughput_bps",
        );
        let t2 = mean(
            &runs(&ftp(link, topo, 2, bytes, tcp()), 6),
            "ftp.throughput_bps",
        );
        1.0 - t2 / t1
    };
    let h = drop("hscsd", Topology::Wan1, 2_000_000, &|| {
        TcpConfig::dissertation(100)
    });
    assert!((0.2..0.5).contains(&h), "HSCSD drop {h}");
    let w = drop("wlan11b", Topology::Lan1, 20_000_000, &|| {
        TcpConfig::dissertation(1000)
    });
    // The packet-per-frame reading (seed000-001 "resolved"): doubling the loss rate costs
    // 1 - 1/sqrt(2) = 29 % under 1/sqrt(p) scaling, inside this band.
    assert!((0.2..0.5).contains(&w), "WLAN drop {w}");
}

#[test]
fn lossy_transfers_complete_and_count_recovery() {
    let rs = runs(
        &ftp(
            "cellular",
            Topology::Lan1,
            4,
            200_000,
            TcpConfig::dissertation(50),
        ),
        3,
    );
    for r in &rs {
        assert_eq!(r.get("ftp.completed"), Some(1.0));
        assert!(r.get("ftp.retransmissions").unwrap() > 0.0);
        assert!(r.get("ftp.timeouts").unwrap() + r.get("ftp.fast_retransmits").unwrap() > 0.0);
        let g = r.get("ftp.goodput").unwrap();
        assert!(g > 0.3 && g < 0.9, "goodput {g}");
    }
}
