//! Runs every (point, replication) of a scenario, in parallel across replications (never inside
//! one run), collecting results in job order so the output is identical for any thread count.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use msll_sim::metrics::{summarize, RunResult, Summary};
use msll_sim::Simulation;
use rayon::prelude::*;

use crate::scenario::{Point, Scenario};

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub reps: Option<u32>,
    pub seed: Option<u64>,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    pub progress: bool,
    /// ns-2-like event trace of the first point's first replication.
    pub trace: Option<PathBuf>,
    /// Counts every finished run's events and simulated time (`msll run` prints the rates at the
    /// end, and the progress bar shows them).
    pub speed: Option<std::sync::Arc<crate::speed::Speedometer>>,
}

#[derive(Debug, Clone)]
pub struct PointResult {
    pub point: Point,
    pub runs: Vec<RunResult>,
    /// The replication number of each of `runs` (0-based; gaps where a partial merge lacks one).
    pub replications: Vec<u32>,
    pub summary: BTreeMap<String, Summary>,
    /// Replications the point should have but whose results are absent (an incomplete `msll
    /// merge` of shards). Claims never judge such a point: they read NOT-RUN.
    pub missing: usize,
}

impl PointResult {
    /// Frees every run's metrics and keeps the rest: the summary, the replication numbers, and as
    /// many (empty) runs as there were, which is what the claims and the report read (how many
    /// runs measured a metric against how many ran). `reproduce` calls it once a scenario's data
    /// files are written, so the whole catalogue's runs are never held at once.
    pub fn forget_run_metrics(&mut self) {
        for run in &mut self.runs {
            run.metrics = BTreeMap::new();
        }
    }
}

/// One run: point `p`, replication `r`; the first point's first replication writes the trace
/// if one was asked for.
fn run_job(
    sc: &Scenario,
    opts: &RunOptions,
    seed: u64,
    p: usize,
    r: u32,
) -> anyhow::Result<RunResult> {
    let mut cfg = sc.points[p].config.clone();
    cfg.seed = seed;
    cfg.replication = r;
    let mut sim = Simulation::new(&cfg, &sc.dir)
        .map_err(|e| anyhow::Error::new(sc.point_error(&sc.points[p], e)))?;
    let mut trace = None;
    if p == 0 && r == 0 {
        if let Some(path) = &opts.trace {
            let f = std::fs::File::create(path)
                .with_context(|| format!("creating trace file {}", path.display()))?;
            let err = Arc::new(Mutex::new(None));
            sim.set_trace(Box::new(TraceFile {
                w: std::io::BufWriter::new(f),
                err: err.clone(),
            }));
            trace = Some((path, err));
        }
    }
    let res = sim
        .run()
        .map_err(|e| anyhow::Error::new(sc.run_error(&sc.points[p], seed, r, e)));
    // Dropping the simulation flushes the trace.
    drop(sim);
    if let Some((path, err)) = trace {
        if let Some(e) = err.lock().expect("trace error slot").take() {
            return Err(
                anyhow::Error::new(e).context(format!("writing trace file {}", path.display()))
            );
        }
    }
    res
}

/// A trace file that keeps its first write or flush error for the caller: the simulator's trace
/// lines ignore errors, and a full disk gave a cut-off trace with exit status 0 (review, session
/// 45). After an error it writes nothing more.
struct TraceFile {
    w: std::io::BufWriter<std::fs::File>,
    err: Arc<Mutex<Option<std::io::Error>>>,
}

impl TraceFile {
    fn keep(&self, e: &std::io::Error) -> std::io::Error {
        let mut slot = self.err.lock().expect("trace error slot");
        if slot.is_none() {
            *slot = Some(std::io::Error::new(e.kind(), e.to_string()));
        }
        std::io::Error::new(e.kind(), e.to_string())
    }

    fn broken(&self) -> bool {
        self.err.lock().expect("trace error slot").is_some()
    }
}

impl Write for TraceFile {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.broken() {
            return Ok(b.len());
        }
        self.w.write(b).map_err(|e| self.keep(&e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush().map_err(|e| self.keep(&e))
    }
}

impl Drop for TraceFile {
    fn drop(&mut self) {
        if !self.broken() {
            let _ = self.flush();
        }
    }
}

pub fn run_scenario(sc: &Scenario, opts: &RunOptions) -> anyhow::Result<Vec<PointResult>> {
    let reps = opts.reps.unwrap_or(sc.raw.scenario.replications).max(1);
    let seed = opts.seed.unwrap_or(sc.raw.scenario.seed);
    // A point whose replications are all the same run (error-free links, fixed traffic:
    // `SimConfig::replication_invariant`) runs once; its result stands for every replication.
    let once: Vec<bool> = sc
        .points
        .iter()
        .map(|p| p.config.replication_invariant())
        .collect();
    let jobs: Vec<(usize, u32)> = (0..sc.points.len())
        .flat_map(|p| (0..if once[p] { 1 } else { reps }).map(move |r| (p, r)))
        .collect();
    let pb = if opts.progress {
        ProgressBar::new(jobs.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    pb.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:40}] {pos}/{len} runs, {elapsed} elapsed, ETA {eta}",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    pb.set_message(sc.name().to_string());
    let speed = opts.speed.as_deref();
    // The lowest job that failed so far: runs after it not started yet are skipped (`None`),
    // as `reproduce` stops at its first error, instead of all finishing before the error is
    // shown (review, session 45). Runs before it still run, so the error reported is the first
    // in job order whatever the thread count.
    let failed = AtomicUsize::new(usize::MAX);
    let run_one = |(j, &(p, r)): (usize, &(usize, u32))| -> Option<anyhow::Result<RunResult>> {
        if j > failed.load(Ordering::Relaxed) {
            return None;
        }
        let res = run_job(sc, opts, seed, p, r);
        match &res {
            Ok(res) => {
                if let Some(m) = speed {
                    m.add(res);
                    pb.set_message(format!("{} {}", sc.name(), m.now()));
                }
                pb.inc(1);
            }
            Err(_) => {
                failed.fetch_min(j, Ordering::Relaxed);
            }
        }
        Some(res)
    };
    let results: Vec<Option<anyhow::Result<RunResult>>> = match opts.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .context("building thread pool")?
            .install(|| {
                jobs.par_iter()
                    .enumerate()
                    .with_max_len(1)
                    .map(run_one)
                    .collect()
            }),
        // One run per task, so no thread is left with a long unstealable range (reproduce.rs).
        None => jobs
            .par_iter()
            .enumerate()
            .with_max_len(1)
            .map(run_one)
            .collect(),
    };
    pb.finish_and_clear();
    if failed.load(Ordering::Relaxed) != usize::MAX {
        let first = results.into_iter().flatten().find_map(Result::err);
        return Err(first.expect("a failed run left its error"));
    }
    let mut it = results
        .into_iter()
        .map(|r| r.expect("no run is skipped without a failure"));
    let mut out = Vec::new();
    for (p, point) in sc.points.iter().enumerate() {
        let runs: Vec<RunResult> = if once[p] {
            let r = it.next().expect("one result per job")?;
            vec![r; reps as usize]
        } else {
            (0..reps)
                .map(|_| it.next().expect("one result per job"))
                .collect::<Result<_, _>>()?
        };
        let summary = summarize(&runs);
        out.push(PointResult {
            point: point.clone(),
            runs,
            replications: (0..reps).collect(),
            summary,
            missing: 0,
        });
    }
    Ok(out)
}
