//! Published claims as machine checks over the results (`scenarios/claims.toml`).
//!
//! A claim names a scenario, a metric and a check over points. A point is selected by the end of
//! its label ("L4/rlp1" matches "cellular/LAN1/L4/rlp1"); `L*` repeats the check at every error
//! level > 0 of the scenario. Means are compared; "nearly identical" uses the +/- 1 sd bars, as the
//! seeds' figures do.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::runner::PointResult;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimFile {
    claim: Vec<Claim>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    pub source: String,
    pub text: String,
    pub scenario: String,
    pub metric: String,
    pub check: Check,
    /// What we learned when the claim fails (model difference, ambiguity, bug).
    #[serde(default)]
    pub note: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Check {
    /// mean(a) < value
    Below { a: String, value: f64 },
    /// mean(a) > value
    Above { a: String, value: f64 },
    /// |mean(a) - value| <= rel_tol * |value|
    Approx { a: String, value: f64, rel_tol: f64 },
    /// lo <= mean(a) <= hi
    Between { a: String, lo: f64, hi: f64 },
    /// mean(a) > mean(b)
    Greater { a: String, b: String },
    /// means strictly decreasing along the list
    Order { points: Vec<String> },
    /// lo <= mean(a) / mean(b) <= hi
    Ratio {
        a: String,
        b: String,
        lo: f64,
        hi: f64,
    },
    /// |mean(a) - mean(b)| <= sd(a) + sd(b)
    Close { a: String, b: String },
    /// lo <= 1 - mean(b) / mean(a) <= hi  (relative drop from a to b)
    Drop {
        a: String,
        b: String,
        lo: f64,
        hi: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    NotRun,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::NotRun => "NOT-RUN",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Verdict {
    pub claim: Claim,
    pub status: Status,
    pub measured: String,
}

pub fn load(path: &Path) -> Result<Vec<Claim>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let f: ClaimFile = toml::from_str(&text)
        .with_context(|| format!("{}: invalid claims file", path.display()))?;
    Ok(f.claim)
}

type Results = BTreeMap<String, (usize, Vec<PointResult>)>;

fn lookup(prs: &[PointResult], sel: &str, metric: &str) -> Option<(f64, f64)> {
    let p = prs
        .iter()
        .find(|p| p.point.label == sel || p.point.label.ends_with(&format!("/{sel}")))?;
    let s = p.summary.get(metric)?;
    (s.n > 0 && s.mean.is_finite()).then_some((s.mean, s.sd))
}

fn fmt(x: f64) -> String {
    if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e6) {
        format!("{x:.4e}")
    } else {
        format!("{x:.4}")
    }
}

/// One check at one level; `None` = not run (missing points).
fn check_once(c: &Check, prs: &[PointResult], m: &str) -> Option<(bool, String)> {
    let g = |s: &str| lookup(prs, s, m);
    Some(match c {
        Check::Below { a, value } => {
            let (x, _) = g(a)?;
            (x < *value, format!("{a} = {} < {}", fmt(x), fmt(*value)))
        }
        Check::Above { a, value } => {
            let (x, _) = g(a)?;
            (x > *value, format!("{a} = {} > {}", fmt(x), fmt(*value)))
        }
        Check::Approx { a, value, rel_tol } => {
            let (x, _) = g(a)?;
            (
                (x - value).abs() <= rel_tol * value.abs(),
                format!(
                    "{a} = {} ~ {} (+/-{:.0}%)",
                    fmt(x),
                    fmt(*value),
                    rel_tol * 100.0
                ),
            )
        }
        Check::Between { a, lo, hi } => {
            let (x, _) = g(a)?;
            (
                x >= *lo && x <= *hi,
                format!("{a} = {} in [{}, {}]", fmt(x), fmt(*lo), fmt(*hi)),
            )
        }
        Check::Greater { a, b } => {
            let ((x, _), (y, _)) = (g(a)?, g(b)?);
            (x > y, format!("{a} = {} > {b} = {}", fmt(x), fmt(y)))
        }
        Check::Order { points } => {
            let vals: Vec<f64> = points
                .iter()
                .map(|p| g(p).map(|v| v.0))
                .collect::<Option<_>>()?;
            let ok = vals.windows(2).all(|w| w[0] > w[1]);
            let s = points
                .iter()
                .zip(&vals)
                .map(|(p, v)| format!("{p} = {}", fmt(*v)))
                .collect::<Vec<_>>()
                .join(" > ");
            (ok, s)
        }
        Check::Ratio { a, b, lo, hi } => {
            let ((x, _), (y, _)) = (g(a)?, g(b)?);
            let r = x / y;
            (
                r >= *lo && r <= *hi,
                format!("{a}/{b} = {} in [{}, {}]", fmt(r), fmt(*lo), fmt(*hi)),
            )
        }
        Check::Close { a, b } => {
            let ((x, sx), (y, sy)) = (g(a)?, g(b)?);
            (
                (x - y).abs() <= sx + sy,
                format!(
                    "|{a} - {b}| = {} <= {} (sd sum)",
                    fmt((x - y).abs()),
                    fmt(sx + sy)
                ),
            )
        }
        Check::Drop { a, b, lo, hi } => {
            let ((x, _), (y, _)) = (g(a)?, g(b)?);
            let d = 1.0 - y / x;
            (
                d >= *lo && d <= *hi,
                format!(
                    "drop {a} -> {b} = {:.1}% in [{:.0}%, {:.0}%]",
                    d * 100.0,
                    lo * 100.0,
                    hi * 100.0
                ),
            )
        }
    })
}

fn with_level(c: &Check, lv: u8) -> Check {
    let r = |s: &String| s.replace("L*", &format!("L{lv}"));
    match c {
        Check::Below { a, value } => Check::Below {
            a: r(a),
            value: *value,
        },
        Check::Above { a, value } => Check::Above {
            a: r(a),
            value: *value,
        },
        Check::Approx { a, value, rel_tol } => Check::Approx {
            a: r(a),
            value: *value,
            rel_tol: *rel_tol,
        },
        Check::Between { a, lo, hi } => Check::Between {
            a: r(a),
            lo: *lo,
            hi: *hi,
        },
        Check::Greater { a, b } => Check::Greater { a: r(a), b: r(b) },
        Check::Order { points } => Check::Order {
            points: points.iter().map(r).collect(),
        },
        Check::Ratio { a, b, lo, hi } => Check::Ratio {
            a: r(a),
            b: r(b),
            lo: *lo,
            hi: *hi,
        },
        Check::Close { a, b } => Check::Close { a: r(a), b: r(b) },
        Check::Drop { a, b, lo, hi } => Check::Drop {
            a: r(a),
            b: r(b),
            lo: *lo,
            hi: *hi,
        },
    }
}

fn uses_all_levels(c: &Check) -> bool {
    format!("{c:?}").contains("L*")
}

pub fn evaluate(claims: &[Claim], results: &Results) -> Vec<Verdict> {
    claims
        .iter()
        .map(|c| {
            let Some((_, prs)) = results.get(&c.scenario) else {
                return Verdict {
                    claim: c.clone(),
                    status: Status::NotRun,
                    measured: "scenario not run".into(),
                };
            };
            let checks: Vec<Check> = if uses_all_levels(&c.check) {
                let mut lv: Vec<u8> = prs
                    .iter()
                    .map(|p| p.point.level)
                    .filter(|l| *l > 0)
                    .collect();
                lv.sort_unstable();
                lv.dedup();
                lv.into_iter().map(|l| with_level(&c.check, l)).collect()
            } else {
                vec![c.check.clone()]
            };
            let mut ok = true;
            let mut parts = Vec::new();
            for ch in &checks {
                match check_once(ch, prs, &c.metric) {
                    None => {
                        return Verdict {
                            claim: c.clone(),
                            status: Status::NotRun,
                            measured: "points missing from the results".into(),
                        }
                    }
                    Some((pass, s)) => {
                        ok &= pass;
                        parts.push(if pass { s } else { format!("**{s}**") });
                    }
                }
            }
            Verdict {
                claim: c.clone(),
                status: if ok { Status::Pass } else { Status::Fail },
                measured: parts.join("; "),
            }
        })
        .collect()
}

pub fn tally(v: &[Verdict]) -> (usize, usize, usize) {
    v.iter().fold((0, 0, 0), |(p, f, n), x| match x.status {
        Status::Pass => (p + 1, f, n),
        Status::Fail => (p, f + 1, n),
        Status::NotRun => (p, f, n + 1),
    })
}
