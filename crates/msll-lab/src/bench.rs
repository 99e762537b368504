//! `msll bench`: wall-clock performance of the simulator on the fixed cases of issue 8. Benchmarks
//! print figures; they never assert on time.
//!
//! Every case is a scenario text (so the cases track the scenario format), run in a child process
//! (`msll bench --case NAME`) so that each case's peak RSS is its own.

use std::io::Write;
use std::process::Command;
use std::time::Instant as WallClock;

use anyhow::{bail, Context, Result};
use msll_sim::sim::EventKinds;
use msll_sim::Simulation;
use rayon::prelude::*;

use crate::scenario::Scenario;

/// (name, description, link preset, topology, application table, error level, scheme)
pub const CASES: &[(&str, &str, &str, &str, &str, u8, &str)] = &[
    (
        "a",
        "FTP 100 MB, WLAN LAN1, 2^15 B errors, Default",
        "wlan",
        "LAN1",
        "kind = \"ftp\"\nbytes = 100000000",
        3,
        "default",
    ),
    (
        "a10",
        "FTP 10 MB, WLAN LAN1, 2^15 B errors, Default (memory check)",
        "wlan",
        "LAN1",
        "kind = \"ftp\"\nbytes = 10000000",
        3,
        "default",
    ),
    (
        "b-sr",
        "FTP 100 MB, WLAN LAN1, 2^15 B errors, SR/M2",
        "wlan",
        "LAN1",
        "kind = \"ftp\"\nbytes = 100000000",
        3,
        "sr-m2",
    ),
    (
        "b-snoop",
        "FTP 100 MB, WLAN LAN1, 2^15 B errors, Snoop",
        "wlan",
        "LAN1",
        "kind = \"ftp\"\nbytes = 100000000",
        3,
        "snoop",
    ),
    (
        "c",
        "FTP 10 MB, HSCSD WAN2, 2% frame loss, Default",
        "hscsd",
        "WAN2",
        "kind = \"ftp\"\nbytes = 10000000",
        2,
        "default",
    ),
    (
        "d",
        "WWW 500 s, WLAN LAN1, 2^15 B errors, Default",
        "wlan",
        "LAN1",
        "kind = \"www\"",
        3,
        "default",
    ),
    (
        "d-sr",
        "WWW 500 s, WLAN LAN1, 2^16 B errors, SR/M2 (the busiest WWW run)",
        "wlan",
        "LAN1",
        "kind = \"www\"",
        1,
        "sr-m2",
    ),
    (
        "e",
        "conferencing 500 s, WLAN LAN1, 2^14 B errors, RLP/OOS",
        "wlan",
        "LAN1",
        "kind = \"conference\"",
        4,
        "rlp-oos",
    ),
    (
        "f",
        "MSLL: FTP 10 MB + WWW + conferencing, WLAN LAN1, 2^15 B, SR/M2 + RLP/OOS",
        "wlan",
        "LAN1",
        // Seed 004 Fig. 7.5's run (scenarios/seed004/fig7_05.toml) at level 3, with a 10 MB file
        // so that a case stays short; the run ends when the transfer completes.
        "kind = \"ftp\"\nbytes = 10000000\n[[app]]\nkind = \"www\"\n[[app]]\nkind = \"conference\"\n\
         tos = 1\n[sim]\nip_queues = \"per-service\"\n[msll]\nclassifier = \"diffserv\"\n\
         scheduler = \"scfq\"\nrates = [1, 2]\ntimer_scaling = \"services\"",
        3,
        "[\"sr-m2\", \"rlp-oos\"]",
    ),
];

/// The scenario text of a case (cases are scenario files, so they follow the scenario format).
fn case_text(name: &str) -> Result<String> {
    let (_, _, link, topo, app, level, scheme) = CASES
        .iter()
        .find(|c| c.0 == name)
        .with_context(|| format!("no bench case {name}"))?;
    // A bracketed scheme is a multi-service list (one scheme per service).
    let sweep = if scheme.starts_with('[') {
        format!("services = [{scheme}]")
    } else {
        format!("scheme = [\"{scheme}\"]")
    };
    Ok(format!(
        "[scenario]\nname = \"bench-{name}\"\n[link]\npreset = \"{link}\"\n[topology]\nname = \"{topo}\"\n\
         [[app]]\n{app}\n[sweep]\nlevel = [{level}]\n{sweep}\n"
    ))
}

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

/// Refuse `--only` names that are not cases (nor `scaling`, where it may run), naming them and the
/// cases: a typo would otherwise run nothing and end as a success.
pub fn check_only(only: &[String], scaling: bool) -> Result<()> {
    let known = |o: &str| CASES.iter().any(|c| c.0 == o) || (scaling && o == "scaling");
    let unknown: Vec<&str> = only
        .iter()
        .map(String::as_str)
        .filter(|o| !known(o))
        .collect();
    if !unknown.is_empty() {
        let mut names: Vec<&str> = CASES.iter().map(|c| c.0).collect();
        if scaling {
            names.push("scaling");
        }
        bail!(
            "--only: no bench case {} (cases: {})",
            unknown.join(", "),
            names.join(", ")
        );
    }
    Ok(())
}

/// Run one case in this process and print one JSON line.
pub fn run_case(name: &str) -> Result<()> {
    let v = case_value(name)?;
    writeln!(std::io::stdout().lock(), "{v}")?;
    Ok(())
}

/// Run one case in this process: its figures as `run_case` prints them.
fn case_value(name: &str) -> Result<serde_json::Value> {
    let text = case_text(name)?;
    let sc = Scenario::parse(
        &format!("bench case {name}"),
        &text,
        std::path::Path::new("."),
    )?;
    let cfg = &sc.points[0].config;
    let mut sim = Simulation::new(cfg, std::path::Path::new("."))?;
    let t0 = WallClock::now();
    let r = sim.run()?;
    let wall = t0.elapsed().as_secs_f64();
    let c = sim.engine_counters();
    let speed = crate::speed::Speed {
        wall_s: wall,
        ..crate::speed::Speed::of_run(&r)
    };
    Ok(serde_json::json!({
        "case": name, "wall_s": wall, "hops": c.hops, "events": c.events,
        "hops_per_s": c.hops as f64 / wall, "events_per_s": c.events as f64 / wall,
        "sim_s_per_s": speed.sim_s_per_s(), "events_per_sim_s": speed.events_per_sim_s(),
        "peak_rss_kib": peak_rss_kib(), "sim_end_s": r.get("sim.end_s"),
        "ftp_throughput_bps": r.get("ftp.throughput_bps"),
        "events_by_kind": c.kinds,
    }))
}

/// What `msll bench --out FILE` writes and `--baseline FILE` reads back: every case's best run,
/// the core scaling, and the msll version that measured them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub msll_version: String,
    /// The machine that measured the figures (`crate::machine`); absent (unknown) in reports
    /// written before session 20.
    #[serde(default)]
    pub machine: crate::machine::Machine,
    /// Runs per case; each case's figures are those of its fastest run.
    pub repeat: usize,
    pub cases: Vec<CaseResult>,
    #[serde(default)]
    pub scaling: Option<Scaling>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CaseResult {
    pub case: String,
    pub scenario: String,
    /// Wall time of the simulation of the fastest run (process start and parsing excluded).
    pub wall_s: f64,
    pub hops: u64,
    pub events: u64,
    pub hops_per_s: f64,
    pub events_per_s: f64,
    /// Simulated seconds per wall second and events per simulated second: with `events_per_s`,
    /// the three numbers of OMNeT++'s speedometer (`crate::speed`). Absent (0) in reports written
    /// before session 19.
    #[serde(default)]
    pub sim_s_per_s: f64,
    #[serde(default)]
    pub events_per_sim_s: f64,
    pub peak_rss_kib: u64,
    /// The events by kind (absent in reports written before session 22, and from binaries
    /// that do not print them).
    #[serde(default)]
    pub events_by_kind: Option<EventKinds>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Scaling {
    pub replications: usize,
    pub one_thread_s: f64,
    pub threads: usize,
    pub all_threads_s: f64,
    pub speedup: f64,
}

/// Read a report written by `--out`, naming the file in every error.
pub fn read_report(path: &std::path::Path) -> Result<Report> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading bench baseline {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "bench baseline {}: not a report written by `msll bench --out`",
            path.display()
        )
    })
}

/// Baseline wall time over current wall time (above 1: faster now), for a case the baseline has.
pub fn speedup_over(base: &Report, now: &CaseResult) -> Option<f64> {
    let b = base.cases.iter().find(|c| c.case == now.case)?;
    (now.wall_s > 0.0 && b.wall_s > 0.0).then(|| b.wall_s / now.wall_s)
}

/// Run every case (each in a child process, best of `repeat`) and print a table; then the
/// parallel-replication speed-up on this machine's cores. With `out`, the figures are written
/// there as JSON; with `baseline`, each case is compared with that earlier report.
pub fn run(
    only: &[String],
    repeat: usize,
    out: Option<&std::path::Path>,
    baseline: Option<&std::path::Path>,
) -> Result<()> {
    let base = baseline.map(read_report).transpose()?;
    let exe = std::env::current_exe()?;
    let mut report = Report {
        msll_version: crate::output::VERSION.to_string(),
        machine: crate::machine::Machine::this(),
        repeat: repeat.max(1),
        cases: Vec::new(),
        scaling: None,
    };
    let mut o = std::io::stdout().lock();
    writeln!(o, "machine: {}", report.machine)?;
    if let Some(b) = &base {
        if !b.machine.same_as(&report.machine) {
            writeln!(
                o,
                "note: the baseline was measured on {}: its speed-ups compare machines as well \
                 as builds",
                b.machine
            )?;
        }
    }
    write!(
        o,
        "{:<8} {:<62} {:>9} {:>12} {:>12} {:>9} {:>9} {:>9}",
        "case", "scenario", "wall s", "hops/s", "events/s", "sim s/s", "ev/sim s", "RSS MiB"
    )?;
    if base.is_some() {
        write!(o, " {:>9} {:>9}", "base s", "speed-up")?;
    }
    writeln!(o)?;
    // Cases whose child failed: reported and left out, and the command then fails (review,
    // session 47: it exited 0, so a script reading the status or the JSON saw nothing wrong).
    let mut failed: Vec<&str> = Vec::new();
    for (name, desc, ..) in CASES {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let mut best: Option<serde_json::Value> = None;
        for _ in 0..repeat.max(1) {
            let v = match case_run(&exe, name)? {
                Ok(v) => v,
                Err(err) => {
                    writeln!(o, "{name:<8} {desc:<62} skipped: {err}")?;
                    failed.push(name);
                    best = None;
                    break;
                }
            };
            if best
                .as_ref()
                .is_none_or(|b| v["wall_s"].as_f64() < b["wall_s"].as_f64())
            {
                best = Some(v);
            }
        }
        if let Some(v) = best {
            let r = CaseResult {
                case: name.to_string(),
                scenario: desc.to_string(),
                wall_s: v["wall_s"].as_f64().unwrap_or(0.0),
                hops: v["hops"].as_u64().unwrap_or(0),
                events: v["events"].as_u64().unwrap_or(0),
                hops_per_s: v["hops_per_s"].as_f64().unwrap_or(0.0),
                events_per_s: v["events_per_s"].as_f64().unwrap_or(0.0),
                sim_s_per_s: v["sim_s_per_s"].as_f64().unwrap_or(0.0),
                events_per_sim_s: v["events_per_sim_s"].as_f64().unwrap_or(0.0),
                peak_rss_kib: v["peak_rss_kib"].as_u64().unwrap_or(0),
                events_by_kind: serde_json::from_value(v["events_by_kind"].clone()).ok(),
            };
            write!(
                o,
                "{name:<8} {desc:<62} {:>9.3} {:>12.0} {:>12.0} {:>9} {:>9} {:>9.1}",
                r.wall_s,
                r.hops_per_s,
                r.events_per_s,
                crate::speed::si(r.sim_s_per_s),
                crate::speed::si(r.events_per_sim_s),
                r.peak_rss_kib as f64 / 1024.0
            )?;
            if let Some(b) = &base {
                match (
                    b.cases.iter().find(|c| c.case == r.case),
                    speedup_over(b, &r),
                ) {
                    (Some(c), Some(x)) => write!(o, " {:>9.3} {:>8.2}x", c.wall_s, x)?,
                    _ => write!(o, " {:>9} {:>9}", "-", "-")?,
                }
            }
            writeln!(o)?;
            report.cases.push(r);
        }
    }
    write_kinds(&mut o, &report.cases)?;
    if only.is_empty() || only.iter().any(|o| o == "scaling") {
        let sc = scaling()?;
        write!(o,
            "scaling: {} replications of case c, best of 3 alternating rounds: 1 thread {:.3} s, {} threads {:.3} s, speed-up {:.2}x",
            sc.replications, sc.one_thread_s, sc.threads, sc.all_threads_s, sc.speedup
        )?;
        if let Some(b) = base.as_ref().and_then(|b| b.scaling.as_ref()) {
            write!(o, " (baseline {:.2}x)", b.speedup)?;
        }
        writeln!(o)?;
        report.scaling = Some(sc);
    }
    if let Some(b) = &base {
        writeln!(o,
            "(speed-up: the baseline's wall time over this one's, per case; baseline by msll {}, best of {})",
            b.msll_version, b.repeat
        )?;
    }
    if let Some(path) = out {
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("writing bench report {}", path.display()))?;
        writeln!(o, "wrote {}", path.display())?;
    }
    anyhow::ensure!(
        failed.is_empty(),
        "bench: {} case(s) failed and were left out: {}",
        failed.len(),
        failed.join(", ")
    );
    Ok(())
}

/// The events of each case by kind, in thousands (the cases measured by a binary that reports
/// them): what the events/s column counts.
fn write_kinds(o: &mut impl Write, cases: &[CaseResult]) -> std::io::Result<()> {
    let rows: Vec<_> = cases
        .iter()
        .filter_map(|c| c.events_by_kind.map(|k| (c, k)))
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(
        o,
        "events by kind, thousands (transmit-completes, packet and frame arrivals, acting and stale interface wake-ups, agent wake-ups):"
    )?;
    writeln!(
        o,
        "{:<8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "case", "events", "tx-done", "pkt-arr", "frame-arr", "if-wake", "(stale)", "agent"
    )?;
    let k = |n: u64| n as f64 / 1e3;
    for (c, e) in rows {
        writeln!(
            o,
            "{:<8} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
            c.case,
            k(c.events),
            k(e.tx_done),
            k(e.packet_arrivals),
            k(e.frame_arrivals),
            k(e.iface_wakes),
            k(e.stale_iface_wakes),
            k(e.agent_wakes + e.stale_agent_wakes)
        )?;
    }
    Ok(())
}

/// Two-sided p-value of the sign test: the chance, under "either is as likely to be faster", of a
/// split at least as uneven as `wins` of `n` pairs (exact binomial sum; ties are left out by the
/// caller).
pub fn sign_test_p(wins: usize, n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let k = wins.min(n - wins);
    // sum_{i<=k} C(n, i) / 2^n, with the binomial coefficients built as floats (n is small).
    let (mut c, mut tail) = (1.0f64, 0.0f64);
    for i in 0..=k {
        if i > 0 {
            c = c * (n - i + 1) as f64 / i as f64;
        }
        tail += c;
    }
    (2.0 * tail / 2f64.powi(n as i32)).min(1.0)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// One case run by a binary as `bench --case NAME`: its JSON line, or (inner `Err`) the last line
/// of its stderr if the case failed. A binary that cannot be run, or prints something else, is an
/// error naming it.
fn case_run(exe: &std::path::Path, name: &str) -> Result<Result<serde_json::Value, String>> {
    let out = Command::new(exe)
        .args(["bench", "--case", name])
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Ok(Err(err.lines().last().unwrap_or("failed").to_string()));
    }
    serde_json::from_slice(&out.stdout)
        .map(Ok)
        .with_context(|| {
            format!(
                "{} bench --case {name}: not msll bench output (is it an msll binary?)",
                exe.display()
            )
        })
}

/// [`case_run`] for a case that must succeed.
fn case_json(exe: &std::path::Path, name: &str) -> Result<serde_json::Value> {
    case_run(exe, name)?
        .map_err(|err| anyhow::anyhow!("{} bench --case {name}: {err}", exe.display()))
}

/// `msll bench --against OTHER`: this binary and another msll build, run in alternating pairs
/// (the order swapped every pair), each pair close in time so that both meet the same machine
/// state. A noisy machine (session 18-19: 10-20 % between runs of one binary) hides a few per cent
/// in minima and medians of separate runs; the paired comparison asks how often one was faster
/// (sign test) and by how much (median of the pairs' ratios). It also says whether both simulated
/// the same thing (events, simulated time, throughput): an optimisation must keep results.
pub fn against(only: &[String], pairs: usize, other: &std::path::Path) -> Result<()> {
    let exe = std::env::current_exe()?;
    // Checked before the table's header is printed.
    if !other.is_file() {
        bail!("--against {}: no such file", other.display());
    }
    let pairs = pairs.max(1);
    let mut o = std::io::stdout().lock();
    writeln!(o, "machine: {}", crate::machine::Machine::this())?;
    writeln!(
        o,
        "{:<8} {:>17} {:>17} {:>11} {:>12} {:>8}  verdict",
        "case", "this min/med s", "other min/med s", "other/this", "this faster", "p"
    )?;
    for (name, ..) in CASES {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let (mut wins, mut ties) = (0usize, 0usize);
        let mut same = true;
        for i in 0..pairs {
            let (x, y) = if i % 2 == 0 {
                let x = case_json(&exe, name)?;
                (x, case_json(other, name)?)
            } else {
                let y = case_json(other, name)?;
                (case_json(&exe, name)?, y)
            };
            let strip = |v: &serde_json::Value| {
                ["events", "hops", "sim_end_s", "ftp_throughput_bps"].map(|k| v[k].to_string())
            };
            same &= strip(&x) == strip(&y);
            let (tx, ty) = (
                x["wall_s"].as_f64().unwrap_or(f64::NAN),
                y["wall_s"].as_f64().unwrap_or(f64::NAN),
            );
            if tx < ty {
                wins += 1;
            } else if tx == ty {
                ties += 1;
            }
            a.push(tx);
            b.push(ty);
            ratios.push(ty / tx);
        }
        let n = pairs - ties;
        let p = sign_test_p(wins, n);
        let r = median(&mut ratios);
        let verdict = match (p < 0.05, 2 * wins > n) {
            (true, true) => format!("this is faster by {:.1} %", 100.0 * (1.0 - 1.0 / r)),
            (true, false) => format!("this is slower by {:.1} %", 100.0 * (1.0 / r - 1.0)),
            _ => "no difference shown".into(),
        };
        let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let (amin, bmin) = (min(&a), min(&b));
        writeln!(
            o,
            "{name:<8} {:>17} {:>17} {:>10.3}x {:>12} {:>8.4}  {verdict}{}",
            format!("{amin:.4}/{:.4}", median(&mut a)),
            format!("{bmin:.4}/{:.4}", median(&mut b)),
            r,
            format!("{wins}/{n}"),
            p,
            if same {
                ", same results"
            } else {
                ", RESULTS DIFFER"
            }
        )?;
    }
    writeln!(o,
        "({pairs} alternating pairs per case; other/this: median of the pairs' wall-time ratios; p: two-sided sign test; other = {})",
        other.display()
    )?;
    Ok(())
}

/// Replications of case (c) (about 35 ms each, so thread start-up does not dominate) on 1 thread vs
/// all cores, three rounds alternating, the best time of each: this machine switches between fast
/// and slow states within a second, and one round once read 1.39x where the next three read
/// 1.88-1.96x (session 14).
fn scaling() -> Result<Scaling> {
    let sc = Scenario::parse("bench case c", &case_text("c")?, std::path::Path::new("."))?;
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
                Simulation::new(&c, std::path::Path::new("."))?.run()?;
                Ok(())
            })
        })?;
        Ok(t0.elapsed().as_secs_f64())
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut t1, mut tn) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        t1 = t1.min(time(1)?);
        tn = tn.min(time(cores)?);
    }
    if t1 <= 0.0 || tn <= 0.0 {
        bail!("timer resolution");
    }
    Ok(Scaling {
        replications: reps.len(),
        one_thread_s: t1,
        threads: cores,
        all_threads_s: tn,
        speedup: t1 / tn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_test_p_values() {
        // All 15 pairs one way: 2 / 2^15.
        assert!((sign_test_p(15, 15) - 2.0 / 32768.0).abs() < 1e-15);
        assert!((sign_test_p(0, 15) - 2.0 / 32768.0).abs() < 1e-15);
        // 12 of 15: 2 * (1 + 15 + 105 + 455) / 2^15 = 0.03515625.
        assert!((sign_test_p(12, 15) - 0.03515625).abs() < 1e-12);
        // An even split, or no pairs, shows nothing.
        assert_eq!(sign_test_p(8, 15), 1.0);
        assert_eq!(sign_test_p(5, 10), 1.0);
        assert_eq!(sign_test_p(0, 0), 1.0);
        // 4 of 4 cannot reach 5 %.
        assert!(sign_test_p(4, 4) > 0.05);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    /// The instruction-count baseline (`tools/instr-count/baseline.tsv`) names bench cases and
    /// records what each simulates now (events, hops, simulated end, throughput, as `bench --case`
    /// prints them): a change of results must come with a new baseline (`run.sh --update`), or the
    /// tool would report every case as differing.
    #[test]
    fn the_instruction_count_baseline_matches_the_cases() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tools/instr-count/baseline.tsv"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("case\tinstructions\tevents\thops\tsim_end_s\tftp_throughput_bps\trustc\tpgo")
        );
        let mut seen = 0;
        for line in lines {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 8, "{line}");
            assert!(CASES.iter().any(|c| c.0 == f[0]), "unknown case {}", f[0]);
            assert!(f[1].parse::<u64>().is_ok_and(|n| n > 0), "{line}");
            let v = case_value(f[0]).unwrap();
            let now =
                ["events", "hops", "sim_end_s", "ftp_throughput_bps"].map(|k| v[k].to_string());
            assert_eq!(now, [f[2], f[3], f[4], f[5]], "case {}", f[0]);
            seen += 1;
        }
        assert!(seen >= 4, "baseline has {seen} cases");
    }

    /// Every case is a valid one-point scenario (a broken case would only show when benchmarked).
    #[test]
    fn every_case_parses_to_one_point() {
        for (name, ..) in CASES {
            let text = case_text(name).unwrap();
            let sc = Scenario::parse(
                &format!("bench case {name}"),
                &text,
                std::path::Path::new("."),
            )
            .unwrap_or_else(|e| panic!("case {name}: {e}"));
            assert_eq!(sc.points.len(), 1, "case {name}");
        }
        assert!(case_text("nope").is_err());
    }

    /// The events-by-kind table has a row per case that reports them, and is left out when
    /// none does (a report or binary from before session 22).
    #[test]
    fn events_by_kind_table_lists_the_cases_that_have_them() {
        let v = case_value("a10").unwrap();
        let k: EventKinds = serde_json::from_value(v["events_by_kind"].clone()).unwrap();
        assert_eq!(Some(k.total()), v["events"].as_u64());
        assert!(k.packet_arrivals > 0 && k.frame_arrivals > 0 && k.iface_wakes > 0);
        let row = |case: &str, kinds| CaseResult {
            case: case.into(),
            scenario: String::new(),
            wall_s: 1.0,
            hops: 0,
            events: 50_900,
            hops_per_s: 0.0,
            events_per_s: 0.0,
            sim_s_per_s: 0.0,
            events_per_sim_s: 0.0,
            peak_rss_kib: 0,
            events_by_kind: kinds,
        };
        let mut out = Vec::new();
        write_kinds(&mut out, &[row("old", None)]).unwrap();
        assert!(out.is_empty());
        write_kinds(&mut out, &[row("old", None), row("a10", Some(k))]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[2].starts_with("a10 ") && lines[2].contains(" 50.9 "),
            "{text}"
        );
        assert!(!text.contains("old"), "{text}");
    }

    #[test]
    fn speedup_is_baseline_over_now_for_cases_the_baseline_has() {
        let case = |name: &str, wall_s: f64| CaseResult {
            case: name.into(),
            scenario: String::new(),
            wall_s,
            hops: 1,
            events: 1,
            hops_per_s: 1.0,
            events_per_s: 1.0,
            sim_s_per_s: 1.0,
            events_per_sim_s: 1.0,
            peak_rss_kib: 1,
            events_by_kind: None,
        };
        let base = Report {
            msll_version: "0".into(),
            machine: Default::default(),
            repeat: 1,
            cases: vec![case("a", 0.030), case("c", 0.0)],
            scaling: None,
        };
        assert_eq!(speedup_over(&base, &case("a", 0.020)), Some(1.5));
        assert_eq!(speedup_over(&base, &case("b-sr", 0.020)), None);
        assert_eq!(
            speedup_over(&base, &case("c", 0.020)),
            None,
            "no zero times"
        );
        // A report survives its own JSON.
        let back: Report = serde_json::from_str(&serde_json::to_string(&base).unwrap()).unwrap();
        assert_eq!(back.cases.len(), 2);
    }
}
