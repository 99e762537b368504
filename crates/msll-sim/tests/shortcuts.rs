//! The simulator's direct paths (a packet handed straight to a free link, a received frame's
//! packet routed without polling its interface) are shortcuts of the general interface path, not
//! a second model: with them on and off, every run gives the same per-hop trace, byte for byte,
//! and the same results. The scenarios cover each condition a shortcut checks: wired and wireless
//! links, Default with and without IP pacing, short IP queues (drops), Default as a one-service
//! MSLL (its scheduler statistics are results), two wireless links, schemes that are not Default
//! (SR/M2 beside conferencing), two Default services, per-service IP queues, and WWW's many short
//! connections. The test also checks that the endpoints' direct paths are taken where they
//! apply, and only there.

use std::io::Write;
use std::sync::{Arc, Mutex};

use msll_proto::{MsllConfig, SchemeConfig};
use msll_sim::presets::{self, Topology};
use msll_sim::tcp::TcpConfig;
use msll_sim::{AppSpec, IpQueues, RunResult, SimConfig, Simulation};

/// A trace sink the test can read back.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A run's results, trace, and how many packets and frames took the endpoints' direct paths.
fn traced(cfg: &SimConfig, shortcuts: bool) -> (RunResult, Vec<u8>, u64) {
    let mut sim = Simulation::new(cfg, std::path::Path::new(".")).unwrap();
    sim.set_shortcuts(shortcuts);
    let buf = Shared::default();
    sim.set_trace(Box::new(buf.clone()));
    let r = sim.run().unwrap();
    let direct = sim.engine_counters().direct;
    drop(sim);
    let t = std::mem::take(&mut *buf.0.lock().unwrap());
    (r, t, direct)
}

fn ftp(link: &str, bytes: u64) -> AppSpec {
    AppSpec::Ftp {
        bytes,
        tcp: TcpConfig::dissertation(presets::wireless(link).unwrap().frame_payload),
        start_s: 0.0,
    }
}

fn conference(link: &str, tos: u8) -> AppSpec {
    let p = presets::wireless(link).unwrap();
    AppSpec::Conference {
        peak_rate_bps: p.conf_rate_bps,
        packet_size: p.conf_packet,
        talk_mean_s: 1.0,
        silence_mean_s: 1.35,
        start_s: 0.0,
        tos,
    }
}

fn www(link: &str) -> AppSpec {
    AppSpec::Www {
        tcp: TcpConfig::dissertation(presets::wireless(link).unwrap().frame_payload),
        max_connections: 4,
        think_time: Default::default(),
        connections: Default::default(),
        start_s: 0.0,
    }
}

fn cfg(link: &str, topo: Topology, level: u8, apps: Vec<AppSpec>, duration_s: f64) -> SimConfig {
    SimConfig {
        apps,
        duration_s,
        drain_s: 5.0,
        seed: 7,
        ..SimConfig::for_link(link, topo, level).unwrap()
    }
}

/// (name, configuration, whether the endpoints' direct paths apply: one Default service with a
/// shared IP queue).
fn scenarios() -> Vec<(&'static str, SimConfig, bool)> {
    let wlan_ftp = |bytes| cfg("wlan", Topology::Lan1, 3, vec![ftp("wlan", bytes)], 500.0);
    let mut v = vec![
        ("wlan LAN1 Default FTP", wlan_ftp(2_000_000), true),
        (
            "hscsd WAN2 Default FTP (two wireless links)",
            cfg(
                "hscsd",
                Topology::Wan2,
                2,
                vec![ftp("hscsd", 200_000)],
                500.0,
            ),
            true,
        ),
        (
            "wlan LAN1 Default WWW",
            cfg("wlan", Topology::Lan1, 3, vec![www("wlan")], 60.0),
            true,
        ),
    ];
    let mut c = wlan_ftp(1_000_000);
    c.queue_limit = 3;
    // Pacing holds packets in the IP queue: a 3-packet queue drops.
    v.push(("wlan LAN1 Default FTP, 3-packet IP queues", c.clone(), true));
    c.pacing = false;
    v.push((
        "wlan LAN1 Default FTP, no pacing, 3-packet IP queues",
        c,
        true,
    ));
    // Default as a one-service MSLL: its endpoint's scheduler statistics are results.
    let mut c = wlan_ftp(1_000_000);
    c.msll = Some(MsllConfig::from_names(&["default"], &[1.0]).unwrap());
    v.push(("wlan LAN1 Default as a one-service MSLL", c.clone(), true));
    c.ip_queues = IpQueues::PerService;
    v.push(("wlan LAN1 one-service MSLL, per-service IP queue", c, false));
    let mut c = cfg(
        "cellular",
        Topology::Wan1,
        3,
        vec![ftp("cellular", 100_000), conference("cellular", 0)],
        100.0,
    );
    c.scheme = SchemeConfig::from_name("sr-m2").unwrap();
    v.push(("cellular WAN1 SR/M2, FTP + conferencing", c, false));
    let mut c = cfg(
        "wlan",
        Topology::Lan1,
        3,
        vec![ftp("wlan", 1_000_000), conference("wlan", 1)],
        100.0,
    );
    c.msll = Some(MsllConfig::from_names(&["default", "default"], &[1.0, 1.0]).unwrap());
    v.push(("wlan LAN1 two Default services", c.clone(), false));
    c.ip_queues = IpQueues::PerService;
    v.push((
        "wlan LAN1 two Default services, per-service IP queues",
        c,
        false,
    ));
    v
}

#[test]
fn shortcuts_change_no_trace_line_and_no_result() {
    for (name, c, applies) in scenarios() {
        let (r_on, t_on, direct_on) = traced(&c, true);
        let (r_off, t_off, direct_off) = traced(&c, false);
        assert_eq!(direct_off, 0, "{name}: a direct path taken with them off");
        assert_eq!(
            direct_on > 0,
            applies,
            "{name}: {direct_on} packets and frames took a direct path"
        );
        assert!(
            t_on.len() > 10_000,
            "{name}: a trace of {} bytes is too short to compare",
            t_on.len()
        );
        if t_on != t_off {
            let (a, b) = (
                String::from_utf8_lossy(&t_on),
                String::from_utf8_lossy(&t_off),
            );
            let (n, (x, y)) = a
                .lines()
                .zip(b.lines())
                .enumerate()
                .find(|(_, (x, y))| x != y)
                .unwrap_or((0, ("(one trace is a prefix of the other)", "")));
            panic!("{name}: traces differ at line {n}:\n  with shortcuts:    {x}\n  without shortcuts: {y}");
        }
        assert_eq!(r_on, r_off, "{name}: results differ");
    }
}
