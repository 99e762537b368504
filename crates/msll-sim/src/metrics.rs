//! Per-run metrics and their aggregation over replications.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Named metrics of one run (a `BTreeMap`: deterministic order in every output).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunResult {
    /// A metric the run did not measure is NaN (see `summarize`). JSON has no NaN:
    /// `serde_json` writes it as `null`, which reads back as NaN (the `reproduce` cache).
    #[serde(deserialize_with = "null_is_nan")]
    pub metrics: BTreeMap<String, f64>,
}

fn null_is_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
    let m = BTreeMap::<String, Option<f64>>::deserialize(d)?;
    Ok(m.into_iter()
        .map(|(k, v)| (k, v.unwrap_or(f64::NAN)))
        .collect())
}

/// Bit for bit, as the determinism checks mean it: equal names and equal values, with a NaN
/// (an unmeasured metric) equal to itself.
impl PartialEq for RunResult {
    fn eq(&self, other: &Self) -> bool {
        self.metrics.len() == other.metrics.len()
            && self
                .metrics
                .iter()
                .zip(&other.metrics)
                .all(|((ka, a), (kb, b))| ka == kb && a.to_bits() == b.to_bits())
    }
}

impl RunResult {
    pub fn set(&mut self, k: &str, v: f64) {
        self.metrics.insert(k.to_string(), v);
    }
    pub fn get(&self, k: &str) -> Option<f64> {
        self.metrics.get(k).copied()
    }
}

/// Mean, sample standard deviation and count of one metric over replications.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub mean: f64,
    pub sd: f64,
    pub n: usize,
}

impl Summary {
    pub fn of(xs: &[f64]) -> Summary {
        let n = xs.len();
        if n == 0 {
            return Summary {
                mean: f64::NAN,
                sd: f64::NAN,
                n,
            };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Summary { mean, sd, n }
    }
}

/// Summaries of every metric across the runs of one point. A NaN value (a run in which the
/// metric was not measured: a delay with nothing delivered, a latency with no object) is left
/// out, so `n` counts the runs that measured it.
pub fn summarize(runs: &[RunResult]) -> BTreeMap<String, Summary> {
    let mut keys: Vec<&String> = runs.iter().flat_map(|r| r.metrics.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            let xs: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.metrics.get(k).copied())
                .filter(|x| !x.is_nan())
                .collect();
            (k.clone(), Summary::of(&xs))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_leave_unmeasured_runs_out() {
        let runs: Vec<RunResult> = [1.0, f64::NAN, 3.0]
            .into_iter()
            .map(|v| {
                let mut r = RunResult::default();
                r.set("m", v);
                r
            })
            .collect();
        let s = summarize(&runs)["m"];
        assert_eq!((s.mean, s.n), (2.0, 2));
        assert!((s.sd - 2f64.sqrt()).abs() < 1e-12);
        // Runs compare bit for bit: an unmeasured metric does not make a run unequal to itself.
        assert_eq!(runs[1], runs[1].clone());
        assert_ne!(runs[0], runs[2]);
        let none = summarize(&runs[1..2])["m"];
        assert_eq!(none.n, 0);
        assert!(none.mean.is_nan());
    }
}
