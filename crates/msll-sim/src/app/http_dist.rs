//! Mah's empirical HTTP distributions, sampled the way ns-2's `RandomVariable/Empirical` does.
//!
//! The CDF tables are ns-2's `tcl/http/data/Http*.cdf` (B. A. Mah, INFOCOM '97; copied verbatim
//! into `data/http-mah/`, see its README) and are compiled into the binary with `include_str!`.
//!
//! Sampling rule (ns2-semantics.md 6.4, identical in ns-2.1b4 and 2.35): draw `u` uniform in
//! `[minCDF, maxCDF) = [0, 1)`; take index 0 if `u <= cdf[0]`, else the smallest index with
//! `cdf[i] >= u` (the last index if none); with the default `interpolation_ 0` return the
//! tabulated value at that index, so only tabulated values occur. The HTTP module uses that
//! default. Interpolation modes 1 (linear between the previous and this point) and 2 (the same,
//! rounded up) are provided for completeness.
//!
//! Every variable owns its random stream (`crate::rng::Streams`): ns-2 drew all HTTP variables
//! from one generator, but with separate streams the sequence of, say, reply sizes is the same
//! for every link-layer scheme even when losses reorder the requests (common random numbers),
//! which is what the seeds' "separate, fixed-seed RNG" intends (seed004-ch4 1.2, L721).

use std::sync::OnceLock;

use rand::Rng;
use thiserror::Error;

use crate::rng::SimRng;

/// How a draw between two tabulated points is turned into a value (ns-2 `interpolation_`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interpolation {
    /// `interpolation_ 0`: the tabulated value (ns-2's default, used by the HTTP module).
    #[default]
    Discrete,
    /// `interpolation_ 1`: linear between the previous point and this one.
    Linear,
    /// `interpolation_ 2`: linear, rounded up.
    LinearCeil,
}

/// A problem in a CDF table.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CdfError {
    #[error("line {line}: expected `value count cumulative_probability`")]
    Syntax { line: usize },
    #[error("line {line}: cumulative probability {p} outside [0, 1] or decreasing")]
    BadProbability { line: usize, p: f64 },
    #[error("the table is empty")]
    Empty,
}

/// An empirical distribution given by its CDF points.
#[derive(Debug, Clone, PartialEq)]
pub struct EmpiricalCdf {
    values: Vec<f64>,
    cdf: Vec<f64>,
    interpolation: Interpolation,
}

impl EmpiricalCdf {
    /// Parse ns-2's CDF file format: one point per line, `value count cumulative_probability`
    /// (the count is ignored, as in ns-2). Blank lines and `#` comments are skipped.
    pub fn parse(text: &str) -> Result<Self, CdfError> {
        let mut values = Vec::new();
        let mut cdf: Vec<f64> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            // Three columns (value, unused, probability), split on ASCII whitespace and not
            // collected: every process that runs WWW parses ~2,600 lines at its start, and the
            // Unicode-aware split and trim and a vector per line made that 3.1 M instructions,
            // a fifth of `msll bench --case d`; now 2.0 M (session 20).
            let line = line.split_once('#').map_or(line, |(data, _)| data);
            let mut cols = line.split_ascii_whitespace();
            let Some(c0) = cols.next() else {
                continue;
            };
            let syntax = CdfError::Syntax { line: n + 1 };
            let (Some(_), Some(c2), None) = (cols.next(), cols.next(), cols.next()) else {
                return Err(syntax);
            };
            let v: f64 = c0.parse().map_err(|_| syntax.clone())?;
            let p: f64 = c2.parse().map_err(|_| syntax.clone())?;
            if !v.is_finite()
                || !(0.0..=1.0).contains(&p)
                || cdf.last().is_some_and(|&last| p < last)
            {
                return Err(CdfError::BadProbability { line: n + 1, p });
            }
            values.push(v);
            cdf.push(p);
        }
        if values.is_empty() {
            return Err(CdfError::Empty);
        }
        Ok(EmpiricalCdf {
            values,
            cdf,
            interpolation: Interpolation::Discrete,
        })
    }

    /// The same table with another interpolation rule.
    pub fn with_interpolation(mut self, i: Interpolation) -> Self {
        self.interpolation = i;
        self
    }

    /// Number of tabulated points.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Smallest and largest tabulated values.
    pub fn range(&self) -> (f64, f64) {
        (self.values[0], self.values[self.values.len() - 1])
    }

    /// The value for a uniform variate `u` in `[0, 1)` (ns2-semantics.md 6.4).
    pub fn value_at(&self, u: f64) -> f64 {
        // Index 0 if u <= cdf[0], else the smallest i with cdf[i] >= u; the last point if none.
        let i = self
            .cdf
            .partition_point(|&c| c < u)
            .min(self.values.len() - 1);
        match self.interpolation {
            Interpolation::Discrete => self.values[i],
            Interpolation::Linear | Interpolation::LinearCeil => {
                if i > 0 && u < self.cdf[i] {
                    let (c0, c1) = (self.cdf[i - 1], self.cdf[i]);
                    let (v0, v1) = (self.values[i - 1], self.values[i]);
                    let v = v0 + (u - c0) * (v1 - v0) / (c1 - c0);
                    if self.interpolation == Interpolation::LinearCeil {
                        v.ceil()
                    } else {
                        v
                    }
                } else {
                    self.values[i]
                }
            }
        }
    }

    /// One draw from `rng`.
    pub fn sample(&self, rng: &mut SimRng) -> f64 {
        self.value_at(rng.random::<f64>())
    }

    /// Exact mean of the discrete distribution the sampler produces (`interpolation_ 0`).
    pub fn mean(&self) -> f64 {
        let mut prev = 0.0;
        let mut m = 0.0;
        for (&v, &c) in self.values.iter().zip(&self.cdf) {
            m += v * (c - prev);
            prev = c;
        }
        // Probability mass above the last point (a table not ending at 1) goes to the last value,
        // exactly as the sampler does.
        m + self.values[self.values.len() - 1] * (1.0 - prev)
    }

    /// The `p`-quantile of the sampled distribution: the smallest tabulated value whose
    /// cumulative probability is at least `p` (`interpolation_ 0`).
    pub fn quantile(&self, p: f64) -> f64 {
        let i = self
            .cdf
            .partition_point(|&c| c < p)
            .min(self.values.len() - 1);
        self.values[i]
    }
}

/// The five tables of ns-2's HTTP module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MahCdf {
    /// Request size, bytes (`rvReqLen_`).
    RequestLength,
    /// Page size and embedded-object size, bytes (`rvRepLen_`, reused as `rvImgLen_`).
    ReplyLength,
    /// Embedded objects per page (`rvNumImg_`); ns-2 uses the value as the number of objects
    /// after the page, so it is at least 1 (seed004-ch4 1.2, last AMBIGUOUS item).
    Connections,
    /// User think time, seconds (`rvClientTime_`; the seeds use 0 instead).
    ThinkTime,
    /// Server stay (shipped with ns-2, not used by its `Http` class).
    ServerStay,
}

impl MahCdf {
    pub const ALL: [MahCdf; 5] = [
        MahCdf::RequestLength,
        MahCdf::ReplyLength,
        MahCdf::Connections,
        MahCdf::ThinkTime,
        MahCdf::ServerStay,
    ];

    /// ns-2's file name.
    pub fn file_name(self) -> &'static str {
        match self {
            MahCdf::RequestLength => "HttpRequestLength.cdf",
            MahCdf::ReplyLength => "HttpReplyLength.cdf",
            MahCdf::Connections => "HttpConnections.cdf",
            MahCdf::ThinkTime => "HttpThinkTime.cdf",
            MahCdf::ServerStay => "HttpServerStay.cdf",
        }
    }

    /// The file's text, embedded at build time.
    pub fn text(self) -> &'static str {
        match self {
            MahCdf::RequestLength => {
                include_str!("../../../../data/http-mah/HttpRequestLength.cdf")
            }
            MahCdf::ReplyLength => include_str!("../../../../data/http-mah/HttpReplyLength.cdf"),
            MahCdf::Connections => include_str!("../../../../data/http-mah/HttpConnections.cdf"),
            MahCdf::ThinkTime => include_str!("../../../../data/http-mah/HttpThinkTime.cdf"),
            MahCdf::ServerStay => include_str!("../../../../data/http-mah/HttpServerStay.cdf"),
        }
    }

    /// The parsed table (parsed once per process, shared by every run).
    pub fn cdf(self) -> &'static EmpiricalCdf {
        static TABLES: [OnceLock<EmpiricalCdf>; 5] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        TABLES[self as usize].get_or_init(|| {
            EmpiricalCdf::parse(self.text())
                .unwrap_or_else(|e| panic!("embedded {}: {e}", self.file_name()))
        })
    }
}

/// One HTTP random variable: a table and its own random stream.
#[derive(Debug, Clone)]
pub struct HttpVariable {
    cdf: &'static EmpiricalCdf,
    rng: SimRng,
}

impl HttpVariable {
    pub fn new(table: MahCdf, rng: SimRng) -> Self {
        HttpVariable {
            cdf: table.cdf(),
            rng,
        }
    }

    /// One draw (a tabulated value).
    pub fn draw(&mut self) -> f64 {
        self.cdf.sample(&mut self.rng)
    }

    /// One draw rounded to the nearest integer, as the HTTP module does for lengths and counts
    /// (ns2-semantics.md 7.2).
    pub fn draw_round(&mut self) -> i64 {
        self.draw().round() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Summary table of seed004-ch4 1.2 (computed there from the ns-2 files):
    /// (table, mean, min, median, p90, p99, max).
    const TABLE: [(MahCdf, f64, f64, f64, f64, f64, f64); 4] = [
        (
            MahCdf::RequestLength,
            337.0,
            0.0,
            231.0,
            1057.0,
            1134.0,
            1373.0,
        ),
        (
            MahCdf::ReplyLength,
            7231.0,
            0.0,
            2112.0,
            12581.0,
            67379.0,
            1_636_039.0,
        ),
        (MahCdf::Connections, 2.8, 1.0, 1.0, 6.0, 19.0, 65.0),
        (
            MahCdf::ThinkTime,
            1804.0,
            1.0,
            16.2,
            794.0,
            61568.0,
            86395.0,
        ),
    ];

    fn rng(name: &str) -> SimRng {
        crate::rng::Streams::new(1, 0).fixed(name)
    }

    #[test]
    fn embedded_tables_parse_and_match_the_spec_summary() {
        for t in MahCdf::ALL {
            let c = t.cdf();
            assert!(c.len() > 10, "{t:?}");
            assert_eq!(*c.cdf.last().unwrap(), 1.0, "{t:?} ends at probability 1");
        }
        assert_eq!(MahCdf::RequestLength.cdf().len(), 383);
        assert_eq!(MahCdf::ReplyLength.cdf().len(), 2233);
        assert_eq!(MahCdf::Connections.cdf().len(), 26);
        for (t, mean, min, med, p90, p99, max) in TABLE {
            let c = t.cdf();
            // The spec rounds the mean to 3-4 significant digits.
            let rel = (c.mean() - mean).abs() / mean;
            assert!(rel < 0.02, "{t:?} exact mean {} vs {mean}", c.mean());
            let (lo, hi) = c.range();
            assert!((lo - min).abs() <= 0.01 * min.max(1.0), "{t:?} min {lo}");
            assert!((hi - max).abs() < 1.0, "{t:?} max {hi}");
            for (p, want) in [(0.5, med), (0.9, p90), (0.99, p99)] {
                let got = c.quantile(p);
                assert!(
                    (got - want).abs() <= 0.001 * want + 0.5,
                    "{t:?} q{p}: {got} vs {want}"
                );
            }
        }
    }

    /// 10^6 draws from each table reproduce its mean and quantiles.
    #[test]
    fn million_draws_reproduce_mean_and_quantiles() {
        const N: usize = 1_000_000;
        for (t, mean, _min, med, p90, p99, _max) in TABLE {
            let c = t.cdf();
            let mut r = rng(t.file_name());
            let mut xs: Vec<f64> = (0..N).map(|_| c.sample(&mut r)).collect();
            let m = xs.iter().sum::<f64>() / N as f64;
            let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (N - 1) as f64;
            // Mean within 5 standard errors of the exact mean and within 2 % of the spec's.
            let se = (var / N as f64).sqrt();
            assert!(
                (m - c.mean()).abs() < 5.0 * se,
                "{t:?}: sample mean {m} exact {} se {se}",
                c.mean()
            );
            assert!((m - mean).abs() / mean < 0.02, "{t:?}: {m} vs spec {mean}");
            xs.sort_by(f64::total_cmp);
            for (p, want) in [(0.5, med), (0.9, p90), (0.99, p99)] {
                let got = xs[(p * N as f64) as usize - 1];
                // The empirical quantile is the tabulated quantile or a neighbouring point.
                let exact = c.quantile(p);
                let (lo, hi) = (c.quantile(p - 0.002), c.quantile(p + 0.002));
                assert!(
                    (lo..=hi).contains(&got),
                    "{t:?} q{p}: sample {got}, table {exact} (band {lo}..{hi})"
                );
                assert!(
                    (exact - want).abs() <= 0.001 * want + 0.5,
                    "{t:?} q{p}: table {exact} spec {want}"
                );
            }
            // Only tabulated values occur (interpolation_ 0).
            for x in xs.iter().step_by(997) {
                assert!(c.values.binary_search_by(|v| v.total_cmp(x)).is_ok());
            }
        }
    }

    #[test]
    fn sampling_rule_matches_ns2() {
        let c = EmpiricalCdf::parse("10 1 0.25\n20 1 0.5\n40 2 1\n").unwrap();
        assert_eq!(c.value_at(0.0), 10.0);
        assert_eq!(c.value_at(0.25), 10.0, "u <= cdf[0] -> index 0");
        assert_eq!(c.value_at(0.2500001), 20.0);
        assert_eq!(c.value_at(0.5), 20.0, "cdf[i] >= u, smallest i");
        assert_eq!(c.value_at(0.75), 40.0);
        assert_eq!(c.value_at(0.999), 40.0);
        assert_eq!(c.mean(), 10.0 * 0.25 + 20.0 * 0.25 + 40.0 * 0.5);
        let l = c.clone().with_interpolation(Interpolation::Linear);
        assert_eq!(l.value_at(0.1), 10.0, "below cdf[0]: no interpolation");
        assert!((l.value_at(0.75) - 30.0).abs() < 1e-9);
        assert_eq!(l.value_at(0.5), 20.0);
        let lc = c.with_interpolation(Interpolation::LinearCeil);
        assert_eq!(
            lc.value_at(0.31),
            13.0,
            "10 + 0.06 * 10 / 0.25 = 12.4, rounded up"
        );
        // A table ending below 1 returns its last value for larger u.
        let short = EmpiricalCdf::parse("1 1 0.5\n2 1 0.9\n").unwrap();
        assert_eq!(short.value_at(0.95), 2.0);
        assert!((short.mean() - (0.5 + 2.0 * 0.5)).abs() < 1e-12);
    }

    #[test]
    fn malformed_tables_are_rejected() {
        assert_eq!(EmpiricalCdf::parse(""), Err(CdfError::Empty));
        assert_eq!(
            EmpiricalCdf::parse("1 2\n"),
            Err(CdfError::Syntax { line: 1 })
        );
        assert_eq!(
            EmpiricalCdf::parse("1 1 0.5\n2 1 0.9 7\n"),
            Err(CdfError::Syntax { line: 2 })
        );
        assert_eq!(
            EmpiricalCdf::parse("1 1 x\n"),
            Err(CdfError::Syntax { line: 1 })
        );
        assert!(matches!(
            EmpiricalCdf::parse("1 1 0.5\n2 1 0.4\n"),
            Err(CdfError::BadProbability { line: 2, .. })
        ));
        assert!(matches!(
            EmpiricalCdf::parse("1 1 1.5\n"),
            Err(CdfError::BadProbability { .. })
        ));
        assert!(EmpiricalCdf::parse("# comment\n\n5 1 1\n").is_ok());
    }

    #[test]
    fn variables_are_deterministic_per_stream() {
        let mk = |s: u64| HttpVariable::new(MahCdf::ReplyLength, SimRng::seed_from_u64(s));
        let (mut a, mut b, mut c) = (mk(7), mk(7), mk(8));
        let xa: Vec<i64> = (0..100).map(|_| a.draw_round()).collect();
        let xb: Vec<i64> = (0..100).map(|_| b.draw_round()).collect();
        let xc: Vec<i64> = (0..100).map(|_| c.draw_round()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        let mut n = HttpVariable::new(MahCdf::Connections, SimRng::seed_from_u64(1));
        assert!((0..1000).all(|_| (1..=65).contains(&n.draw_round())));
    }
}
