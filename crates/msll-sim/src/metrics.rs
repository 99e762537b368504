//! Per-run metrics and their aggregation over replications.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Named metrics of one run (a `BTreeMap`: deterministic order in every output).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunResult {
    /// A metric the run did not measure is NaN (see `summarize`). JSON has no NaN or infinity:
    /// NaN is written as `null` and an infinity as the string `"inf"` or `"-inf"`, and both read
    /// back as they were (the `reproduce` cache; serde_json alone writes an infinity as `null`,
    /// which turned a measured infinity into "not measured" on the cache's second reading).
    #[serde(
        serialize_with = "non_finite_as_null_or_text",
        deserialize_with = "null_is_nan"
    )]
    pub metrics: BTreeMap<String, f64>,
}

/// One metric value as JSON can hold it (see `RunResult::metrics`).
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum JsonNum {
    Num(f64),
    Text(String),
    Null,
}

impl JsonNum {
    fn of(v: f64) -> JsonNum {
        if v.is_finite() {
            JsonNum::Num(v)
        } else if v.is_nan() {
            JsonNum::Null
        } else if v > 0.0 {
            JsonNum::Text("inf".into())
        } else {
            JsonNum::Text("-inf".into())
        }
    }
}

fn non_finite_as_null_or_text<S: serde::Serializer>(
    m: &BTreeMap<String, f64>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(m.iter().map(|(k, v)| (k, JsonNum::of(*v))))
}

fn null_is_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
    let m = BTreeMap::<String, JsonNum>::deserialize(d)?;
    m.into_iter()
        .map(|(k, v)| {
            let x = match v {
                JsonNum::Num(x) => x,
                JsonNum::Null => f64::NAN,
                JsonNum::Text(t) if t == "inf" => f64::INFINITY,
                JsonNum::Text(t) if t == "-inf" => f64::NEG_INFINITY,
                JsonNum::Text(t) => {
                    return Err(serde::de::Error::custom(format!(
                        "metric {k}: {t:?} is not a number (expected a number, null, \"inf\" or \"-inf\")"
                    )))
                }
            };
            Ok((k, x))
        })
        .collect()
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
        // One value says nothing about the spread: NaN, not 0 (a report would print "± 0" and
        // draw a confident point; `summarize`'s callers print no interval for a NaN).
        let sd = if n > 1 {
            (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            f64::NAN
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
        let one = summarize(&runs[..2])["m"];
        assert_eq!((one.mean, one.n), (1.0, 1));
        assert!(one.sd.is_nan(), "one value has no spread: {}", one.sd);
    }
}
