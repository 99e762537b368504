//! Trace figures (seed 002 Figs 4.1-4.6, experiment E1): what one TCP connection did over time.
//!
//! A trace figure names points of its scenario; each is run again, first replication, with
//! `TcpConfig::trace` on for its FTP apps. Tracing only records, so the run is the one whose
//! metrics the sweep figures show (`tests::tracing_changes_nothing`). The first FTP app's trace
//! becomes one curve: its sender's congestion window in bytes, or its receiver's highest
//! in-order packet, as a step function of time.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use msll_sim::{AppSpec, Simulation, TcpTrace};

use crate::scenario::{FigureSpec, Point, Scenario, TraceKind};

/// One curve of a trace figure: a step function, given at its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The point's label.
    pub name: String,
    /// (time s, value), in time order; the value holds until the next step.
    pub steps: Vec<(f64, f64)>,
}

/// The point `sel` names (the scenario's validation made it exactly one, unless points were
/// dropped since, as `msll run --point` does).
fn point<'a>(sc: &'a Scenario, sel: &str) -> Result<&'a Point> {
    sc.points
        .iter()
        .find(|p| crate::claims::selects(&p.label, sel))
        .with_context(|| format!("{}: no point {sel} to trace", sc.file))
}

/// Run `point`'s replication `rep` with every FTP app traced; its traces, in app order.
pub fn run_traced(sc: &Scenario, point: &Point, seed: u64, rep: u32) -> Result<Vec<TcpTrace>> {
    let mut cfg = point.config.clone();
    cfg.seed = seed;
    cfg.replication = rep;
    for a in &mut cfg.apps {
        if let AppSpec::Ftp { tcp, .. } = a {
            tcp.trace = true;
        }
    }
    let mut sim = Simulation::new(&cfg, &sc.dir).map_err(|e| sc.point_error(point, e))?;
    sim.run().map_err(|e| sc.run_error(point, seed, rep, e))?;
    Ok(sim.tcp_traces())
}

/// `trace`'s curve of kind `kind` within `window` (seconds, both ends included).
pub fn steps(trace: &TcpTrace, kind: TraceKind, window: Option<[f64; 2]>) -> Vec<(f64, f64)> {
    let all: Vec<(f64, f64)> = match kind {
        TraceKind::Cwnd => trace
            .sender
            .iter()
            // The window the sender uses: ns-2's `cwnd_` grows past `window_` (4096 bytes in
            // seed 002), the thesis's cwnd stops there (seed002.md sec. 2, "cwnd cap").
            .map(|e| {
                let w = e.cwnd.min(trace.window as f64);
                (e.time.as_secs_f64(), w * trace.segment_size as f64)
            })
            .collect(),
        TraceKind::Received => trace
            .deliveries
            .iter()
            .map(|&(t, seq)| (t.as_secs_f64(), seq as f64))
            .collect(),
    };
    let Some([a, b]) = window else {
        return dedup(all);
    };
    // The value holding at the window's start begins the curve there.
    let before = all.iter().rev().find(|s| s.0 < a).map(|s| (a, s.1));
    dedup(
        before
            .into_iter()
            .chain(all.into_iter().filter(|s| (a..=b).contains(&s.0)))
            .collect(),
    )
}

/// Steps that repeat the value before them draw nothing and are left out (an ACK that leaves
/// cwnd at the window, thousands of times in a run), except the last sample, which shows how
/// long the final value held (RLP's cwnd at the window to the end of Fig. 4.5).
fn dedup(steps: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(steps.len());
    let last = steps.last().copied();
    for s in steps {
        if out.last().is_none_or(|l| l.1 != s.1) {
            out.push(s);
        }
    }
    if let (Some(l), Some(o)) = (last, out.last()) {
        if l.0 > o.0 {
            out.push(l);
        }
    }
    out
}

/// The curves of trace figure `f` of `sc` (scenario seed, first replication).
pub fn figure_curves(sc: &Scenario, f: &FigureSpec) -> Result<Vec<Curve>> {
    let kind = f.trace.expect("a trace figure");
    let mut out = Vec::new();
    for sel in &f.points {
        let p = point(sc, sel)?;
        let traces = run_traced(sc, p, sc.raw.scenario.seed, 0)
            .with_context(|| format!("figure {}: tracing point {}", f.id, p.label))?;
        let t = traces
            .first()
            .with_context(|| format!("figure {}: point {} has no FTP app", f.id, p.label))?;
        out.push(Curve {
            name: p.label.clone(),
            steps: steps(t, kind, f.window_s),
        });
    }
    Ok(out)
}

/// The curves as CSV (`figure,point,time_s,value`), with the scenario and seed recorded.
pub fn csv(sc: &Scenario, f: &FigureSpec, curves: &[Curve]) -> String {
    let mut s = format!(
        "# scenario={} seed={} replication=0 trace={:?}\nfigure,point,time_s,value\n",
        sc.name(),
        sc.raw.scenario.seed,
        f.trace.expect("a trace figure")
    );
    for c in curves {
        for (t, v) in &c.steps {
            let _ = writeln!(s, "{},{},{t},{v}", f.id, c.name);
        }
    }
    s
}

/// `msll run --tcp-trace`: every traced FTP app of a run, both kinds, whole run, as CSV
/// (`app,kind,time_s,value`; cwnd in bytes as the sender uses it, received as packet numbers).
pub fn run_csv(sc: &Scenario, point: &Point, seed: u64, rep: u32) -> Result<String> {
    let traces = run_traced(sc, point, seed, rep)?;
    if traces.is_empty() {
        anyhow::bail!(
            "{}: point {} has no FTP application to trace",
            sc.file,
            point.label
        );
    }
    let mut s = format!(
        "# scenario={} point={} seed={seed} replication={rep}\napp,kind,time_s,value\n",
        sc.name(),
        point.label
    );
    for t in &traces {
        for (kind, name) in [(TraceKind::Cwnd, "cwnd"), (TraceKind::Received, "received")] {
            for (x, v) in steps(t, kind, None) {
                let _ = writeln!(s, "{},{name},{x},{v}", t.app);
            }
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn scenario(extra_app: &str) -> Scenario {
        let text = format!(
            r#"
[scenario]
name = "t"
replications = 2
duration_s = 3000.0
[link]
preset = "cdpd"
levels = [{{ model = "bernoulli", p = 0.05 }}]
[topology]
name = "LAN1"
wired_delay_s = 0.02
[[app]]
kind = "ftp"
bytes = 200000
tcp = "wong1998"
{extra_app}
[sweep]
level = [1]
scheme = ["default", "status-rlp"]
[[figure]]
id = "t-cwnd"
trace = "cwnd"
points = ["L1/default", "L1/status-rlp"]
window_s = [0.0, 300.0]
[[figure]]
id = "t-rcv"
trace = "received"
points = ["L1/default"]
"#
        );
        Scenario::parse("t.toml", &text, std::path::Path::new(".")).expect("valid")
    }

    /// Tracing records and changes nothing: the same metrics with it on and off, but for the
    /// stall metric that only a traced run reports.
    #[test]
    fn tracing_changes_nothing() {
        let plain = scenario("");
        let traced = scenario("trace = true");
        for (p, q) in plain.points.iter().zip(&traced.points) {
            for rep in 0..2 {
                let run = |pt: &Point| {
                    let mut cfg = pt.config.clone();
                    cfg.replication = rep;
                    let mut sim = Simulation::new(&cfg, std::path::Path::new(".")).unwrap();
                    sim.run().unwrap()
                };
                let (a, mut b) = (run(p), run(q));
                let stall = b
                    .metrics
                    .remove("ftp.max_stall_s")
                    .expect("traced run has it");
                assert!(stall > 0.0, "{}: stall {stall}", p.label);
                assert!(!a.metrics.contains_key("ftp.max_stall_s"));
                assert_eq!(a, b, "{} rep {rep}", p.label);
            }
        }
    }

    /// The curves follow the sender and sink: cwnd in bytes within [1 segment, window], the
    /// received sequence increasing, every step inside the window, and the longest flat stretch
    /// of the received curve equal to the run's `ftp.max_stall_s`.
    #[test]
    fn curves_follow_the_run() {
        let sc = scenario("trace = true");
        let cwnd = figure_curves(&sc, &sc.raw.figure[0]).unwrap();
        assert_eq!(cwnd.len(), 2);
        assert_eq!(
            dedup(vec![
                (1.0, 2.0),
                (2.0, 2.0),
                (3.0, 5.0),
                (4.0, 5.0),
                (5.0, 5.0)
            ]),
            [(1.0, 2.0), (3.0, 5.0), (5.0, 5.0)]
        );
        assert_eq!(dedup(vec![(1.0, 2.0)]), [(1.0, 2.0)]);
        // Without recovery the window keeps falling; with RLP it climbs once and stays (C6).
        assert!(
            cwnd[0].steps.len() > 10,
            "default: {} steps",
            cwnd[0].steps.len()
        );
        assert_eq!(cwnd[1].steps.last().map(|s| s.1), Some(4096.0));
        // ... to its last trace point in the window (the transfer's last ACK, ~110 s here).
        let traced = run_traced(&sc, point(&sc, "L1/status-rlp").unwrap(), 1, 0).unwrap();
        let last = traced[0]
            .sender
            .iter()
            .rev()
            .find(|e| e.time.as_secs_f64() <= 300.0);
        assert_eq!(
            cwnd[1].steps.last().map(|s| s.0),
            last.map(|e| e.time.as_secs_f64())
        );
        assert!(cwnd[1].steps.len() < 10, "{:?}", cwnd[1].steps);
        for c in &cwnd {
            assert!(c.steps.iter().all(|s| (0.0..=300.0).contains(&s.0)));
            // Time order; a value repeats only in the closing sample.
            assert!(c.steps.windows(2).all(|w| w[0].0 <= w[1].0));
            let n = c.steps.len();
            assert!(c.steps[..n - 1].windows(2).all(|w| w[0].1 != w[1].1));
            // wong1998: 512-byte packets, window 8: cwnd in [512, 4096] bytes at every step.
            assert!(
                c.steps.iter().all(|s| (512.0..=4096.0).contains(&s.1)),
                "{}: {:?}",
                c.name,
                c.steps.iter().map(|s| s.1).fold(f64::NAN, f64::max)
            );
        }

        let rcv = figure_curves(&sc, &sc.raw.figure[1]).unwrap();
        let steps = &rcv[0].steps;
        // Every delivery raises the in-order packet: no closing repeat here.
        assert!(steps.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        // 200 kB in 512-byte packets: the last in-order packet is 390.
        assert_eq!(steps.last().unwrap().1, 390.0);
        let longest = steps
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .fold(0.0, f64::max);
        let mut cfg = point(&sc, "L1/default").unwrap().config.clone();
        cfg.seed = sc.raw.scenario.seed;
        let r = Simulation::new(&cfg, std::path::Path::new("."))
            .unwrap()
            .run()
            .unwrap();
        // ... or the stretch before the first delivery (the sender starts at 0 s); the run
        // completes, so nothing is open at its end.
        let expect = longest.max(steps[0].0);
        let stall = r.metrics["ftp.max_stall_s"];
        assert!((stall - expect).abs() < 1e-9, "{stall} vs {expect}");
        assert_eq!(r.metrics["ftp.completed"], 1.0);
        let all = run_csv(&sc, point(&sc, "L1/default").unwrap(), 1, 0).unwrap();
        assert!(all.starts_with("# scenario=t point=cdpd/LAN1/L1/default seed=1 replication=0\n"));
        assert!(all.contains("\n0,cwnd,") && all.contains("\n0,received,"));
        assert_eq!(
            all.lines().filter(|l| l.starts_with("0,received,")).count(),
            steps.len(),
            "the whole run: the window [0, 300] s held all of it"
        );
        let text = csv(&sc, &sc.raw.figure[1], &rcv);
        assert!(text.starts_with("# scenario=t seed=1 replication=0 trace=Received\n"));
        assert_eq!(text.lines().count(), 2 + steps.len());
    }

    #[test]
    fn trace_figures_are_checked() {
        let base = |fig: &str| {
            format!(
                r#"
[scenario]
name = "t"
[link]
preset = "cdpd"
levels = [{{ model = "bernoulli", p = 0.05 }}]
[[app]]
kind = "ftp"
bytes = 20000
[sweep]
level = [1]
scheme = ["default", "status-rlp"]
[[figure]]
id = "f"
{fig}
"#
            )
        };
        let err = |fig: &str| {
            Scenario::parse("t.toml", &base(fig), std::path::Path::new("."))
                .unwrap_err()
                .to_string()
        };
        assert!(err("trace = \"cwnd\"").contains("figure[0].points = []"));
        assert!(
            err("trace = \"cwnd\"\npoints = [\"L1/gbn\"]").contains("\"L1/gbn\" names 0 points")
        );
        assert!(err("trace = \"cwnd\"\npoints = [\"L1\"]").contains("names 0 points"));
        assert!(
            err("metric = \"ftp.throughput_bps\"\npoints = [\"L1/default\"]")
                .contains("belong to trace figures")
        );
        assert!(
            err("trace = \"cwnd\"\nmetric = \"x\"\npoints = [\"L1/default\"]")
                .contains("draws its trace, not a metric")
        );
        assert!(
            err("trace = \"cwnd\"\npoints = [\"L1/default\"]\nwindow_s = [5.0, 1.0]")
                .contains("window_s = [5, 1]")
        );
        assert!(err("trace = \"rtt\"\npoints = [\"L1/default\"]").contains("rtt"));
        assert!(err("title = \"x\"").contains("figure[0].metric = \"\""));
        assert!(
            err("trace = \"cwnd\"\npoints = [\"L1/default\"]\nlog_y = true")
                .contains("do not apply to a trace figure")
        );
        assert!(
            err("trace = \"cwnd\"\npoints = [\"L1/default\"]\nerror_bars = \"ci95\"")
                .contains("do not apply to a trace figure")
        );
        Scenario::parse(
            "t.toml",
            &base("trace = \"received\"\npoints = [\"L1/status-rlp\"]"),
            std::path::Path::new("."),
        )
        .expect("valid");
    }
}
