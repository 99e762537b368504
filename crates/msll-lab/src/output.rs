//! Result formats: a human table, JSON (scenario, seed, version and per-point mean/sd/n/ci95 of
//! every metric) and CSV (one summary row per point and metric; one row per replication and
//! metric). `ci95` is the half-width of the 95 % confidence interval of the mean (`stats.rs`).
//! No wall-clock value is ever written into these, so equal runs give equal bytes.

use std::fmt::Write as _;

use serde_json::json;

use crate::runner::PointResult;
use crate::scenario::Scenario;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The simulation model's revision (`reproduce::MODEL_REVISION`), written into every data file
/// beside the version: the version does not move when results do, so files from before and after
/// a model change left in one output directory are told apart by this (review, session 42).
pub use crate::reproduce::MODEL_REVISION;

fn default_metrics(results: &[PointResult]) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(r) = results.first() {
        for k in [
            "ftp.throughput_bps",
            "ftp.goodput",
            "www.throughput_bps",
            "www.transactions",
            "conf.loss",
            "conf.delay_m2sd_ms",
            "link.frame_loss",
        ] {
            if r.summary.contains_key(k) {
                v.push(k.to_string());
            }
        }
    }
    v
}

/// The table's columns: `scenario.metrics` if given; otherwise the metrics the scenario's figures
/// plot (e.g. seed 001's mean + 1 sd delay), then the usual ones its points report.
pub fn primary_metrics(sc: &Scenario, results: &[PointResult]) -> Vec<String> {
    if !sc.raw.scenario.metrics.is_empty() {
        return sc.raw.scenario.metrics.clone();
    }
    let mut v: Vec<String> = Vec::new();
    for m in sc
        .raw
        .figure
        .iter()
        .filter(|f| f.trace.is_none())
        .map(|f| f.metric.clone())
        .chain(default_metrics(results))
    {
        if !v.contains(&m) {
            v.push(m);
        }
    }
    v
}

/// Every metric the scenario names (`scenario.metrics`, `figure[i].metric`) must be reported by
/// at least one of its points; a typo would otherwise show as an empty column or figure.
/// Checked once all points have results (metric names depend on the applications).
pub fn check_metrics(
    sc: &Scenario,
    results: &[PointResult],
) -> Result<(), crate::scenario::ScenarioError> {
    if results.is_empty() || results.iter().any(|r| r.runs.is_empty()) {
        return Ok(());
    }
    let known: std::collections::BTreeSet<&str> = results
        .iter()
        .flat_map(|r| r.summary.keys().map(String::as_str))
        .collect();
    check_metric_names(sc, &known)
}

/// What `msll run --list-metrics` prints: every metric the scenario's points report, one per
/// line, each with the points that report it when not all do (metric names depend on the
/// applications, the schemes and the MSLL services; docs/metrics.md defines them). Built from
/// the simulations built but not run (`Scenario::metric_names`), so it costs no simulation.
pub fn metric_listing(sc: &Scenario) -> Result<String, crate::scenario::ScenarioError> {
    let mut by_name: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for i in 0..sc.points.len() {
        for m in sc.metric_names(i)? {
            by_name.entry(m).or_default().push(i);
        }
    }
    let mut out = String::new();
    for (m, points) in by_name {
        if points.len() == sc.points.len() {
            out.push_str(&format!("{m}\n"));
        } else {
            let labels: Vec<&str> = points
                .iter()
                .map(|&i| sc.points[i].label.as_str())
                .collect();
            out.push_str(&format!(
                "{m}  (only {} of {} points: {})\n",
                points.len(),
                sc.points.len(),
                labels.join(", ")
            ));
        }
    }
    Ok(out)
}

/// The same check before anything runs, on the metric names of every point's simulation built
/// but not run (`Scenario::metric_names`), which also refuses every point the simulator would
/// refuse (an unreadable error trace, a parameter out of its range): `msll run` used to simulate
/// every point first (review, session 42).
pub fn check_before_running(sc: &Scenario) -> Result<(), crate::scenario::ScenarioError> {
    let mut names = std::collections::BTreeSet::new();
    for i in 0..sc.points.len() {
        names.extend(sc.metric_names(i)?);
    }
    check_metric_names(sc, &names.iter().map(String::as_str).collect())
}

fn check_metric_names(
    sc: &Scenario,
    known: &std::collections::BTreeSet<&str>,
) -> Result<(), crate::scenario::ScenarioError> {
    let named = sc
        .raw
        .scenario
        .metrics
        .iter()
        .enumerate()
        .map(|(i, m)| (format!("scenario.metrics[{i}]"), m))
        .chain(
            sc.raw
                .figure
                .iter()
                .enumerate()
                .filter(|(_, f)| f.trace.is_none())
                .map(|(i, f)| (format!("figure[{i}].metric"), &f.metric)),
        );
    for (field, m) in named {
        if !known.contains(m.as_str()) {
            let all: Vec<&str> = known.iter().copied().collect();
            return Err(crate::scenario::ScenarioError {
                file: sc.file.clone(),
                msg: format!(
                    "{field} = \"{m}\": no point of this scenario reports it (reported: {})",
                    all.join(", ")
                ),
            });
        }
    }
    Ok(())
}

/// What follows the mean's "±" in the table: the seeds' spread (one standard deviation across
/// replications, the error bars of their figures) or the 95 % confidence interval of the mean.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Interval {
    /// One standard deviation across replications (the seeds' error bars).
    #[default]
    Sd,
    /// Half-width of the mean's 95 % confidence interval (Student t, n - 1 degrees of freedom).
    Ci95,
}

impl Interval {
    pub fn is_sd(&self) -> bool {
        *self == Interval::Sd
    }
    /// The half-width this interval puts around `s.mean`.
    pub fn of(self, s: &msll_sim::Summary) -> f64 {
        match self {
            Interval::Sd => s.sd,
            Interval::Ci95 => crate::stats::ci95(s),
        }
    }
    /// How a report names it.
    pub fn short(self) -> &'static str {
        match self {
            Interval::Sd => "± 1 sd",
            Interval::Ci95 => "± 95 % confidence interval of the mean",
        }
    }
    fn legend(self) -> &'static str {
        match self {
            Interval::Sd => "mean ± sd over replications",
            Interval::Ci95 => "mean ± half-width of its 95 % confidence interval (Student t)",
        }
    }
}

/// Replications per point, as a caption states them: "30", or "5-10" when the points differ
/// (a partial merge of shards, a cache topped up with more replications for some points).
/// Points without any result (a partial merge that lacks all of them) do not count: their
/// cells say "not measured" or "-".
pub fn replications_label(results: &[PointResult]) -> String {
    let n = results.iter().map(|r| r.runs.len()).filter(|&n| n > 0);
    match (n.clone().min(), n.max()) {
        (Some(lo), Some(hi)) if lo != hi => format!("{lo}-{hi}"),
        (_, hi) => hi.unwrap_or(0).to_string(),
    }
}

/// `seed`: the master seed the runs used (`--seed` or the scenario's).
pub fn table(sc: &Scenario, results: &[PointResult], seed: u64, interval: Interval) -> String {
    let metrics = primary_metrics(sc, results);
    let mut s = String::new();
    let title = if sc.raw.scenario.title.is_empty() {
        sc.name()
    } else {
        &sc.raw.scenario.title
    };
    let reps = replications_label(results);
    let _ = writeln!(
        s,
        "{title}  ({reps} replications, seed {seed}; {})",
        interval.legend()
    );
    let w = results
        .iter()
        .map(|r| r.point.label.len())
        .max()
        .unwrap_or(5)
        .max(5);
    // Cells first, so a column is as wide as its widest cell (a "(n=...)" note makes it wider).
    let cells: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            metrics
                .iter()
                .map(|m| match r.summary.get(m) {
                    // Replications that did not measure the metric (NaN: a delay with nothing
                    // received, a page time with no page) are out of the summary; say so.
                    Some(x) if x.n == 0 => "not measured".to_string(),
                    Some(x) => {
                        // One measuring replication has no spread to print (NaN): the mean alone.
                        let bar = interval.of(x);
                        let mut c = if bar.is_finite() {
                            format!("{:.6} ± {:.6}", x.mean, bar)
                        } else {
                            format!("{:.6}", x.mean)
                        };
                        if x.n < r.runs.len() {
                            let _ = write!(c, " (n={})", x.n);
                        }
                        c
                    }
                    None => "-".to_string(),
                })
                .collect()
        })
        .collect();
    let widths: Vec<usize> = metrics
        .iter()
        .enumerate()
        .map(|(j, m)| {
            cells
                .iter()
                .map(|row| row[j].chars().count())
                .chain([m.chars().count(), 26])
                .max()
                .unwrap_or(26)
        })
        .collect();
    let _ = write!(s, "{:w$}", "point");
    for (m, cw) in metrics.iter().zip(&widths) {
        let _ = write!(s, "  {m:>cw$}");
    }
    s.push('\n');
    for (r, row) in results.iter().zip(&cells) {
        let _ = write!(s, "{:w$}", r.point.label);
        for (c, cw) in row.iter().zip(&widths) {
            let _ = write!(s, "  {c:>cw$}");
        }
        s.push('\n');
    }
    s
}

pub fn json(sc: &Scenario, results: &[PointResult], seed: u64) -> serde_json::Value {
    json!({
        "msll_version": VERSION,
        "model_revision": MODEL_REVISION,
        "scenario": sc.name(),
        "title": sc.raw.scenario.title,
        "source": sc.raw.scenario.source,
        "file": sc.file,
        "seed": seed,
        // The most any point has; each point states its own (they differ after a partial merge).
        "replications": results.iter().map(|r| r.runs.len()).max().unwrap_or(0),
        "points": results.iter().map(|r| json!({
            "label": r.point.label,
            "link": r.point.link,
            "topology": r.point.topology,
            "level": r.point.level,
            "scheme": r.point.scheme,
            // The seed the runs used (`--seed` or the scenario's), not the configuration's
            // placeholder: rerunning from this configuration must give these results (review,
            // session 45).
            "config": msll_sim::SimConfig { seed, ..r.point.config.clone() },
            "replications": r.runs.len(),
            "metrics": r.summary.iter().map(|(k, v)| (k.clone(), json!({
                "mean": json_num(v.mean),
                "sd": json_num(v.sd),
                "n": v.n,
                "ci95": json_num(crate::stats::ci95(v)),
            }))).collect::<serde_json::Map<_, _>>(),
        })).collect::<Vec<_>>(),
    })
}

/// A number as JSON can hold it, the run cache's convention (`msll_sim::metrics::infinity_text`):
/// NaN (not measured) is `null`, an infinity `"inf"` or `"-inf"` (serde_json alone makes it `null`).
fn json_num(x: f64) -> serde_json::Value {
    match msll_sim::metrics::infinity_text(x) {
        Some(t) => json!(t),
        None => json!(x),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The columns that identify a point: scenario, point, link, topology, level, scheme.
fn point_columns(sc: &Scenario, p: &crate::scenario::Point) -> String {
    format!(
        "{},{},{},{},{},{}",
        csv_field(sc.name()),
        csv_field(&p.label),
        p.link,
        p.topology,
        p.level,
        csv_field(&p.scheme)
    )
}

pub fn summary_csv(sc: &Scenario, results: &[PointResult], seed: u64) -> String {
    let mut s = String::from(
        "scenario,point,link,topology,level,scheme,metric,mean,sd,n,ci95,seed,msll_version,model_revision\n",
    );
    for r in results {
        let p = &r.point;
        for (k, v) in &r.summary {
            let _ = writeln!(
                s,
                "{},{k},{},{},{},{},{seed},{VERSION},{MODEL_REVISION}",
                point_columns(sc, p),
                v.mean,
                v.sd,
                v.n,
                crate::stats::ci95(v)
            );
        }
    }
    s
}

pub fn runs_csv(sc: &Scenario, results: &[PointResult], seed: u64) -> String {
    let mut s =
        String::from("scenario,point,link,topology,level,scheme,replication,metric,value,seed,msll_version,model_revision\n");
    for r in results {
        let p = &r.point;
        // The run's own replication number, not its position: a partial merge leaves gaps.
        for (i, run) in r.replications.iter().zip(&r.runs) {
            for (k, v) in &run.metrics {
                // The version and revision close every row, as in the summary file (review,
                // session 45: a per-run file copied out of its directory could not be dated).
                let _ = writeln!(
                    s,
                    "{},{i},{k},{v},{seed},{VERSION},{MODEL_REVISION}",
                    point_columns(sc, p)
                );
            }
        }
    }
    s
}

/// One line per point and transfer that did not complete in some replications (`*.completed`
/// = 0): its run reached the end (`scenario.duration_s`, or the 1e6 s cap of a file transfer)
/// first, so its throughput covers only what was sent by then. `msll run` prints these on
/// stderr: a stalled transfer otherwise shows a normal-looking throughput.
pub fn incomplete_warnings(results: &[PointResult]) -> Vec<String> {
    let mut out = Vec::new();
    for r in results {
        let mut keys: Vec<&str> = r
            .runs
            .iter()
            .flat_map(|run| run.metrics.keys())
            .map(String::as_str)
            .filter(|k| k.ends_with(".completed"))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for k in keys {
            let missed = r
                .runs
                .iter()
                .filter(|run| run.get(k).is_some_and(|v| v < 1.0))
                .count();
            if missed > 0 {
                out.push(format!(
                    "warning: {}: {k} = 0 in {missed} of {} replications: the transfer did not \
                     finish within the run ({} s); its throughput covers only what was sent",
                    r.point.label,
                    r.runs.len(),
                    r.point.config.duration_s
                ));
            }
        }
    }
    out
}
