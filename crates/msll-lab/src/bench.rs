//! `msll bench`: wall-clock performance of the simulator on the fixed cases of issue 8. Benchmarks
//! print figures; they never assert on time.
//!
//! Every case is a scenario text (so the cases track the scenario format), run in a child process
//! (`msll bench --case NAME`) so that each case's peak RSS is its own.

use std::process::Command;
use std::time::Instant as WallClock;

use anyhow::{bail, Context, Result};
use msll_sim::Simulation;
use rayon::prelude::*;

use crate::scenario::Scenario;

/// (name, description, scenario TOML)
pub const CASES: &[(&str, &str, &str)] = &[
    (
        "a",
        "FTP 100 MB, WLAN LAN1, 2^15 B errors, Default",
        FTP_WLAN_DEFAULT,
    ),
    (
        "a10",
        "FTP 10 MB, WLAN LAN1, 2^15 B errors, Default (memory check)",
        FTP_WLAN_10MB,
    ),
    (
        "b-sr",
        "FTP 100 MB, WLAN LAN1, 2^15 B errors, SR/M2",
        FTP_WLAN_SRM2,
    ),
    (
        "b-snoop",
        "FTP 100 MB, WLAN LAN1, 2^15 B errors, Snoop",
        FTP_WLAN_SNOOP,
    ),
    (
        "c",
        "FTP 10 MB, HSCSD WAN2, 2% frame loss, Default",
        FTP_HSCSD,
    ),
    (
        "d",
        "WWW 500 s, WLAN LAN1, 2^15 B errors, Default",
        WWW_WLAN,
    ),
    (
        "e",
        "conferencing 500 s, WLAN LAN1, 2^14 B errors, RLP/OOS",
        CONF_WLAN,
    ),
];

const FTP_WLAN_DEFAULT: &str = r#"
[scenario]
name = "bench-a"
[link]
preset = "wlan"
[[app]]
kind = "ftp"
bytes = 100000000
[sweep]
level = [3]
scheme = ["default"]
"#;
const FTP_WLAN_10MB: &str = r#"
[scenario]
name = "bench-a10"
[link]
preset = "wlan"
[[app]]
kind = "ftp"
bytes = 10000000
[sweep]
level = [3]
scheme = ["default"]
"#;
const FTP_WLAN_SRM2: &str = r#"
[scenario]
name = "bench-b-sr"
[link]
preset = "wlan"
[[app]]
kind = "ftp"
bytes = 100000000
[sweep]
level = [3]
scheme = ["sr-m2"]
"#;
const FTP_WLAN_SNOOP: &str = r#"
[scenario]
name = "bench-b-snoop"
[link]
preset = "wlan"
[[app]]
kind = "ftp"
bytes = 100000000
[sweep]
level = [3]
scheme = ["snoop"]
"#;
const FTP_HSCSD: &str = r#"
[scenario]
name = "bench-c"
[link]
preset = "hscsd"
[topology]
name = "WAN2"
[[app]]
kind = "ftp"
bytes = 10000000
[sweep]
level = [2]
scheme = ["default"]
"#;
const WWW_WLAN: &str = r#"
[scenario]
name = "bench-d"
[link]
preset = "wlan"
[[app]]
kind = "www"
[sweep]
level = [3]
scheme = ["default"]
"#;
const CONF_WLAN: &str = r#"
[scenario]
name = "bench-e"
[link]
preset = "wlan"
[[app]]
kind = "conference"
[sweep]
level = [4]
scheme = ["rlp-oos"]
"#;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Run one case in this process and print one JSON line.
pub fn run_case(name: &str) -> Result<()> {
    let (_, _, text) = CASES
        .iter()
        .find(|c| c.0 == name)
        .with_context(|| format!("no bench case {name}"))?;
    let sc = Scenario::parse(
        &format!("bench case {name}"),
        text,
        std::path::Path::new("."),
    )?;
    let cfg = &sc.points[0].config;
    let mut sim = Simulation::new(cfg, std::path::Path::new("."))?;
    let t0 = WallClock::now();
    let r = sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let c = sim.engine_counters();
    println!(
        "{}",
        serde_json::json!({
            "case": name, "wall_s": wall, "hops": c.hops, "events": c.events,
            "hops_per_s": c.hops as f64 / wall, "events_per_s": c.events as f64 / wall,
            "peak_rss_kib": peak_rss_kib(), "sim_end_s": r.get("sim.end_s"),
            "ftp_throughput_bps": r.get("ftp.throughput_bps"),
        })
    );
    Ok(())
}

/// Run every case (each in a child process, best of `repeat`) and print a table; then the
/// parallel-replication speed-up on this machine's cores.
pub fn run(only: &[String], repeat: usize) -> Result<()> {
    let exe = std::env::current_exe()?;
    println!(
        "{:<8} {:<62} {:>9} {:>12} {:>12} {:>9}",
        "case", "scenario", "wall s", "hops/s", "events/s", "RSS MiB"
    );
    for (name, desc, _) in CASES {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let mut best: Option<serde_json::Value> = None;
        for _ in 0..repeat.max(1) {
            let out = Command::new(&exe)
                .args(["bench", "--case", name])
                .output()?;
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                println!(
                    "{name:<8} {desc:<62} skipped: {}",
                    err.lines().last().unwrap_or("failed")
                );
                best = None;
                break;
            }
            let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
            if best
                .as_ref()
                .is_none_or(|b| v["wall_s"].as_f64() < b["wall_s"].as_f64())
            {
                best = Some(v);
            }
        }
        if let Some(v) = best {
            println!(
                "{name:<8} {desc:<62} {:>9.3} {:>12.0} {:>12.0} {:>9.1}",
                v["wall_s"].as_f64().unwrap_or(0.0),
                v["hops_per_s"].as_f64().unwrap_or(0.0),
                v["events_per_s"].as_f64().unwrap_or(0.0),
                v["peak_rss_kib"].as_f64().unwrap_or(0.0) / 1024.0
            );
        }
    }
    if only.is_empty() || only.iter().any(|o| o == "scaling") {
        scaling()?;
    }
    Ok(())
}

/// Replications of case (e) on 1 thread vs all cores.
fn scaling() -> Result<()> {
    let sc = Scenario::parse("bench case e", CONF_WLAN, std::path::Path::new("."))?;
    let cfg = sc.points[0].config.clone();
    let reps: Vec<u32> = (0..8).collect();
    let time = |threads: usize| -> Result<f64> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        let t0 = WallClock::now();
        pool.install(|| {
            reps.par_iter().try_for_each(|&r| -> Result<()> {
                let mut c = cfg.clone();
                c.replication = r;
                Simulation::new(&c, std::path::Path::new("."))?.run();
                Ok(())
            })
        })?;
        Ok(t0.elapsed().as_secs_f64())
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t1 = time(1)?;
    let tn = time(cores)?;
    if t1 <= 0.0 {
        bail!("timer resolution");
    }
    println!("scaling: 8 replications of case e: 1 thread {t1:.3} s, {cores} threads {tn:.3} s, speed-up {:.2}x", t1 / tn);
    Ok(())
}
