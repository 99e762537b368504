//! `msll bench`: wall-clock rates of the simulator on fixed scenarios. Benchmarks print figures;
//! they never assert on time.

use std::time::Instant as WallClock;

use msll_proto::SchemeConfig;
use msll_sim::presets::{self, Topology};
use msll_sim::{AppSpec, SimConfig, Simulation, TrafficStreams};

fn wlan_conference(seconds: f64, level: u8) -> SimConfig {
    let p = presets::wireless("wlan").expect("preset");
    SimConfig {
        topology: Topology::Lan1,
        wired: presets::wired("lan", p.frame_payload).expect("preset"),
        wireless: p.link(level).expect("level"),
        scheme: SchemeConfig::Default,
        queue_limit: 50,
        pacing: true,
        apps: vec![AppSpec::Conference {
            peak_rate_bps: p.conf_rate_bps,
            packet_size: p.conf_packet,
            talk_mean_s: 1.0,
            silence_mean_s: 1.35,
            start_s: 0.0,
            tos: 0,
        }],
        duration_s: seconds,
        drain_s: 1.0,
        seed: 1,
        replication: 0,
        traffic_streams: TrafficStreams::Fixed,
        msll: None,
        ip_queues: Default::default(),
    }
}

pub fn run(seconds: f64) -> anyhow::Result<()> {
    println!(
        "{:<40} {:>10} {:>14} {:>14}",
        "scenario", "wall s", "hops/s", "events/s"
    );
    let cfg = wlan_conference(seconds, 4);
    // best of 3 to damp noise on a shared machine
    let mut best = f64::INFINITY;
    let mut counters = None;
    for _ in 0..3 {
        let mut sim = Simulation::new(&cfg, std::path::Path::new("."))?;
        let t0 = WallClock::now();
        sim.run();
        let dt = t0.elapsed().as_secs_f64();
        if dt < best {
            best = dt;
            counters = Some(sim.engine_counters());
        }
    }
    let c = counters.expect("ran");
    println!(
        "{:<40} {:>10.4} {:>14.0} {:>14.0}",
        format!("conference wlan LAN1 L4 default {seconds}s"),
        best,
        c.hops as f64 / best,
        c.events as f64 / best
    );
    Ok(())
}
