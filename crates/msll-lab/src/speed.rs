//! The speedometer: events per wall-clock second, simulated seconds per wall-clock second and
//! events per simulated second, the three numbers OMNeT++'s Cmdenv prints beside a run
//! (`Speed: ev/sec=… simsec/sec=… ev/simsec=…`) and that simulator users compare tools by
//! (../shared/design/peers.md §3.3; issue 8). `msll run` and `msll reproduce` show them while they
//! run and print them at the end; `msll bench` reports them per case; the report lists them per
//! scenario.
//!
//! Over parallel replications the rates are of the whole machine: the simulated seconds of every
//! run finished so far over the wall time since the start, so two busy cores show about twice the
//! rate of one.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant as WallClock;

use msll_sim::RunResult;

/// Work done by a set of runs, and the wall time it took.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Speed {
    pub runs: u64,
    /// Events popped (`sim.events`).
    pub events: u64,
    /// Simulated time covered (`sim.end_s`).
    pub sim_s: f64,
    pub wall_s: f64,
}

impl Speed {
    /// The work of one finished run (its `sim.events` and `sim.end_s`; 0 for a result without
    /// them), with no wall time yet.
    pub fn of_run(r: &RunResult) -> Speed {
        Speed {
            runs: 1,
            events: r.get("sim.events").filter(|e| *e > 0.0).unwrap_or(0.0) as u64,
            sim_s: r.get("sim.end_s").filter(|s| *s > 0.0).unwrap_or(0.0),
            wall_s: 0.0,
        }
    }

    fn per(x: f64, y: f64) -> f64 {
        if y > 0.0 {
            x / y
        } else {
            0.0
        }
    }

    pub fn events_per_s(&self) -> f64 {
        Self::per(self.events as f64, self.wall_s)
    }

    pub fn sim_s_per_s(&self) -> f64 {
        Self::per(self.sim_s, self.wall_s)
    }

    pub fn events_per_sim_s(&self) -> f64 {
        Self::per(self.events as f64, self.sim_s)
    }
}

impl std::ops::AddAssign for Speed {
    fn add_assign(&mut self, o: Speed) {
        self.runs += o.runs;
        self.events += o.events;
        self.sim_s += o.sim_s;
        self.wall_s += o.wall_s;
    }
}

/// `1234567.0` -> `1.23M`: three significant digits and an SI prefix, for a progress line.
pub fn si(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let (v, p) = match x.abs() {
        a if a >= 1e9 => (x / 1e9, "G"),
        a if a >= 1e6 => (x / 1e6, "M"),
        a if a >= 1e3 => (x / 1e3, "k"),
        _ => (x, ""),
    };
    let digits = match v.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    format!("{v:.digits$}{p}")
}

impl fmt::Display for Speed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ev/s={} simsec/s={} ev/simsec={}",
            si(self.events_per_s()),
            si(self.sim_s_per_s()),
            si(self.events_per_sim_s())
        )
    }
}

/// Shared by the worker threads of a run: each finished run adds its work; the wall time is that
/// since the speedometer was made.
#[derive(Debug)]
pub struct Speedometer {
    t0: WallClock,
    runs: AtomicU64,
    events: AtomicU64,
    /// Simulated nanoseconds (a u64 holds 584 years: ~7,700 catalogues of 30 replications).
    sim_ns: AtomicU64,
}

impl Default for Speedometer {
    fn default() -> Self {
        Self::new()
    }
}

impl Speedometer {
    pub fn new() -> Self {
        Speedometer {
            t0: WallClock::now(),
            runs: AtomicU64::new(0),
            events: AtomicU64::new(0),
            sim_ns: AtomicU64::new(0),
        }
    }

    pub fn add(&self, r: &RunResult) {
        let s = Speed::of_run(r);
        self.runs.fetch_add(1, Ordering::Relaxed);
        self.events.fetch_add(s.events, Ordering::Relaxed);
        self.sim_ns
            .fetch_add((s.sim_s * 1e9).round() as u64, Ordering::Relaxed);
    }

    /// The work added so far over the wall time since the start.
    pub fn now(&self) -> Speed {
        Speed {
            runs: self.runs.load(Ordering::Relaxed),
            events: self.events.load(Ordering::Relaxed),
            sim_s: self.sim_ns.load(Ordering::Relaxed) as f64 * 1e-9,
            wall_s: self.t0.elapsed().as_secs_f64(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(events: f64, end_s: f64) -> RunResult {
        let mut r = RunResult::default();
        r.set("sim.events", events);
        r.set("sim.end_s", end_s);
        r
    }

    #[test]
    fn rates_are_the_work_over_the_times() {
        let mut s = Speed::of_run(&run(3000.0, 2.0));
        s += Speed::of_run(&run(1000.0, 2.0));
        s.wall_s = 0.5;
        assert_eq!((s.runs, s.events, s.sim_s), (2, 4000, 4.0));
        assert_eq!(s.events_per_s(), 8000.0);
        assert_eq!(s.sim_s_per_s(), 8.0);
        assert_eq!(s.events_per_sim_s(), 1000.0);
        assert_eq!(s.to_string(), "ev/s=8.00k simsec/s=8.00 ev/simsec=1.00k");
    }

    #[test]
    fn no_time_gives_zero_rates_not_infinities() {
        let s = Speed::of_run(&RunResult::default());
        assert_eq!((s.events, s.sim_s), (0, 0.0));
        assert_eq!(
            (s.events_per_s(), s.sim_s_per_s(), s.events_per_sim_s()),
            (0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn si_prefixes() {
        assert_eq!(si(0.5), "0.50");
        assert_eq!(si(12.345), "12.3");
        assert_eq!(si(999.0), "999");
        assert_eq!(si(1234.0), "1.23k");
        assert_eq!(si(17_137_003.9), "17.1M");
        assert_eq!(si(2.5e9), "2.50G");
        assert_eq!(si(f64::NAN), "-");
    }

    #[test]
    fn the_speedometer_sums_runs_from_threads() {
        let m = Speedometer::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| m.add(&run(100.0, 1.5)));
            }
        });
        let n = m.now();
        assert_eq!((n.runs, n.events), (4, 400));
        assert!((n.sim_s - 6.0).abs() < 1e-9);
        assert!(n.wall_s > 0.0);
    }
}
