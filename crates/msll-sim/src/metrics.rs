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

/// The text JSON gives a non-finite number that was measured: `"inf"` or `"-inf"` (`None` for a
/// finite number or NaN, which is `null`). The one rule for the run cache and the output JSON.
pub fn infinity_text(x: f64) -> Option<&'static str> {
    match x {
        f64::INFINITY => Some("inf"),
        f64::NEG_INFINITY => Some("-inf"),
        _ => None,
    }
}

fn non_finite_as_null_or_text<S: serde::Serializer>(
    m: &BTreeMap<String, f64>,
    s: S,
) -> Result<S::Ok, S::Error> {
    struct Value(f64);
    impl Serialize for Value {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match infinity_text(self.0) {
                Some(t) => s.serialize_str(t),
                None if self.0.is_nan() => s.serialize_none(),
                None => s.serialize_f64(self.0),
            }
        }
    }
    s.collect_map(m.iter().map(|(k, v)| (k, Value(*v))))
}

/// Reads what `non_finite_as_null_or_text` writes; any other value is an error that names the
/// metric (a corrupt cache file is reported, not read as "not measured").
fn null_is_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
    use serde::de::{DeserializeSeed, Error, MapAccess, Visitor};
    use std::fmt;

    struct ValueVisitor;
    impl<'de> Visitor<'de> for ValueVisitor {
        type Value = f64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number, null, \"inf\" or \"-inf\"")
        }
        fn visit_f64<E: Error>(self, x: f64) -> Result<f64, E> {
            Ok(x)
        }
        fn visit_u64<E: Error>(self, x: u64) -> Result<f64, E> {
            Ok(x as f64)
        }
        fn visit_i64<E: Error>(self, x: i64) -> Result<f64, E> {
            Ok(x as f64)
        }
        fn visit_unit<E: Error>(self) -> Result<f64, E> {
            Ok(f64::NAN)
        }
        fn visit_none<E: Error>(self) -> Result<f64, E> {
            Ok(f64::NAN)
        }
        fn visit_str<E: Error>(self, t: &str) -> Result<f64, E> {
            match t {
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                _ => Err(E::invalid_value(serde::de::Unexpected::Str(t), &self)),
            }
        }
    }
    struct Metric<'a>(&'a str);
    impl<'de> DeserializeSeed<'de> for Metric<'_> {
        type Value = f64;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<f64, D::Error> {
            d.deserialize_any(ValueVisitor)
                .map_err(|e| D::Error::custom(format!("metric {}: {e}", self.0)))
        }
    }
    struct MapVisitor;
    impl<'de> Visitor<'de> for MapVisitor {
        type Value = BTreeMap<String, f64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map of metric names to values")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
            let mut m = BTreeMap::new();
            while let Some(k) = a.next_key::<String>()? {
                let v = a.next_value_seed(Metric(&k))?;
                m.insert(k, v);
            }
            Ok(m)
        }
    }
    d.deserialize_map(MapVisitor)
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

/// Mean, sample standard deviation and count of one metric over replications. Not serde: its NaN
/// fields would not read back from JSON; outputs write them through `output::json_num`.
#[derive(Debug, Clone, Copy, PartialEq)]
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
        // Equal values (a point whose replications are one run, e.g. an error-free level):
        // exactly that value and no spread, not the sum's rounding (review, session 42: sd
        // 2.2e-11 printed as "± 0.0000" beside another point's "± 0").
        if xs.iter().all(|&x| x == xs[0]) {
            let sd = if n > 1 { 0.0 } else { f64::NAN };
            return Summary { mean: xs[0], sd, n };
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

    /// Thirty copies of one value: that value, and a spread of exactly 0 (the sum of 30 copies
    /// divided by 30 is not always the value, and then the spread was 2e-11).
    #[test]
    fn equal_values_have_exactly_no_spread() {
        let x = 50959.621024565786;
        let s = Summary::of(&[x; 30]);
        assert_eq!((s.mean, s.sd, s.n), (x, 0.0, 30));
        let naive = [x; 30].iter().sum::<f64>() / 30.0;
        assert_ne!(naive, x, "the case the rule is for");
    }
}
