//! The simulator's direct paths (a packet handed straight to a free link, a received frame's
//! packet routed without polling its interface) are shortcuts of the general interface path, not
//! a second model: with them on and off, every run gives the same per-hop trace, byte for byte,
//! and the same results. The scenarios cover each condition a shortcut checks: wired and wireless
//! links, Default with and without IP pacing, short IP queues, two wireless links, schemes that
//! are not Default (SR/M2 beside conferencing), two Default services (one is not idle Default),
//! per-service IP queues, and WWW's many short connections.

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

fn traced(cfg: &SimConfig, shortcuts: bool) -> (RunResult, Vec<u8>) {
    let mut sim = Simulation::new(cfg, std::path::Path::new(".")).unwrap();
    sim.set_shortcuts(shortcuts);
    let buf = Shared::default();
    sim.set_trace(Box::new(buf.clone()));
    let r = sim.run();
    drop(sim);
    let t = std::mem::take(&mut *buf.0.lock().unwrap());
    (r, t)
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

fn scenarios() -> Vec<(&'static str, SimConfig)> {
    let mut v = vec![
        (
            "wlan LAN1 Default FTP",
            cfg(
                "wlan",
                Topology::Lan1,
                3,
                vec![ftp("wlan", 2_000_000)],
                500.0,
            ),
        ),
        (
            "hscsd WAN2 Default FTP (two wireless links)",
            cfg(
                "hscsd",
                Topology::Wan2,
                2,
                vec![ftp("hscsd", 200_000)],
                500.0,
            ),
        ),
        (
            "wlan LAN1 Default WWW",
            cfg("wlan", Topology::Lan1, 3, vec![www("wlan")], 60.0),
        ),
    ];
    let mut c = cfg(
        "wlan",
        Topology::Lan1,
        3,
        vec![ftp("wlan", 1_000_000)],
        500.0,
    );
    c.pacing = false;
    c.queue_limit = 3;
    v.push(("wlan LAN1 Default FTP, no pacing, 3-packet IP queues", c));
    let mut c = cfg(
        "cellular",
        Topology::Wan1,
        3,
        vec![ftp("cellular", 100_000), conference("cellular", 0)],
        100.0,
    );
    c.scheme = SchemeConfig::from_name("sr-m2").unwrap();
    v.push(("cellular WAN1 SR/M2, FTP + conferencing", c));
    let mut c = cfg(
        "wlan",
        Topology::Lan1,
        3,
        vec![ftp("wlan", 1_000_000), conference("wlan", 1)],
        100.0,
    );
    c.msll = Some(MsllConfig::from_names(&["default", "default"], &[1.0, 1.0]).unwrap());
    v.push(("wlan LAN1 two Default services", c.clone()));
    c.ip_queues = IpQueues::PerService;
    v.push(("wlan LAN1 two Default services, per-service IP queues", c));
    v
}

#[test]
fn shortcuts_change_no_trace_line_and_no_result() {
    for (name, c) in scenarios() {
        let (r_on, t_on) = traced(&c, true);
        let (r_off, t_off) = traced(&c, false);
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
