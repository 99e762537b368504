//! Runs every (point, replication) of a scenario, in parallel across replications (never inside
//! one run), collecting results in job order so the output is identical for any thread count.

use std::collections::BTreeMap;
use std::path::PathBuf;

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
    let run_one = |&(p, r): &(usize, u32)| -> anyhow::Result<RunResult> {
        let mut cfg = sc.points[p].config.clone();
        cfg.seed = seed;
        cfg.replication = r;
        let mut sim = Simulation::new(&cfg, &sc.dir)
            .map_err(|e| anyhow::Error::new(sc.point_error(&sc.points[p], e)))?;
        if p == 0 && r == 0 {
            if let Some(path) = &opts.trace {
                let f = std::fs::File::create(path)
                    .with_context(|| format!("creating trace file {}", path.display()))?;
                sim.set_trace(Box::new(std::io::BufWriter::new(f)));
            }
        }
        let res = sim
            .run()
            .map_err(|e| anyhow::Error::new(sc.run_error(&sc.points[p], seed, r, e)))?;
        if let Some(m) = speed {
            m.add(&res);
            pb.set_message(format!("{} {}", sc.name(), m.now()));
        }
        pb.inc(1);
        Ok(res)
    };
    let results: Vec<anyhow::Result<RunResult>> = match opts.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .context("building thread pool")?
            .install(|| jobs.par_iter().with_max_len(1).map(run_one).collect()),
        // One run per task, so no thread is left with a long unstealable range (reproduce.rs).
        None => jobs.par_iter().with_max_len(1).map(run_one).collect(),
    };
    pb.finish_and_clear();
    let mut it = results.into_iter();
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
