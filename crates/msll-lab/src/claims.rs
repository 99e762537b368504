//! Published claims as machine checks over the results (`scenarios/claims.toml`).
//!
//! A claim names a scenario, a metric and a check over points. A point is selected by the end of
//! its label ("L4/rlp1" matches "cellular/LAN1/L4/rlp1"); `L*` repeats the check at every error
//! level > 0 of the scenario, `N*` at every number of flows of its `sweep.flows` axis (seed 003).
//! Means are compared; "nearly identical" uses the +/- 1 sd bars, as the
//! seeds' figures do.
//!
//! A claim is checked against the scenario catalogue when it is loaded, before anything runs: its
//! scenario must be in the catalogue, each point it selects must be exactly one point of that
//! scenario's sweep (at every level, for `L*`), and that point must report its metric. A typo is
//! then an error naming the file, the claim, the field and the value; it is never a claim that
//! quietly reads NOT-RUN. NOT-RUN is left for claims whose scenario exists but was not run (not
//! selected by `--only`, or results missing from a merge).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::runner::PointResult;
use crate::scenario::{toml_error, Scenario, ScenarioError};

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
    /// mean(a) < the mean of every one of `points`, in whatever order those stand ("RLP below
    /// MDLP and LAPB", seed 002 claim C26). `a` must not be one of `points`.
    Least { a: String, points: Vec<String> },
    /// means at equally spaced x rising at a growing rate: strictly increasing along the list,
    /// and no step smaller than the one before it (seed 002 Fig. 4.9: "rises, convex")
    Convex { points: Vec<String> },
    /// lo <= mean(a) / mean(b) <= hi
    Ratio {
        a: String,
        b: String,
        lo: f64,
        hi: f64,
    },
    /// |mean(a) - mean(b)| <= sd(a) + sd(b)
    Close { a: String, b: String },
    /// mean(a[0]) / mean(a[1]) > mean(b[0]) / mean(b[1]): one relative change beats another,
    /// for statements about how a gap or a degradation grows (seed 003: Snoop's "supportive role
    /// ... more effective as errors increase"; TCP-Real "notably improved" at N = 20; session 45).
    RatioGreater { a: [String; 2], b: [String; 2] },
    /// `a` is (nearly) the best of `points`: mean(a) >= (1 - rel_tol) * max of their means
    /// (seed002.md sec. 5.0: a "best value ~ x" holds when x's throughput is within 3 % of the
    /// sweep's maximum). `a` must be one of `points`.
    Best {
        a: String,
        points: Vec<String>,
        rel_tol: f64,
    },
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

/// Read the claims file at `path` and check every claim against `catalogue` (see [`parse`]).
pub fn load(path: &Path, catalogue: &[Scenario]) -> Result<Vec<Claim>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(parse(&path.display().to_string(), &text, catalogue)?)
}

/// Parse a claims file and check it against `catalogue` (the whole catalogue, not a `--only`
/// selection: a claim about a scenario that was not selected is still checked); the first
/// problem is an error naming `file`, the claim id, the field and the value.
pub fn parse(file: &str, text: &str, catalogue: &[Scenario]) -> Result<Vec<Claim>, ScenarioError> {
    let f: ClaimFile = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
    validate(&f.claim, catalogue).map_err(|msg| ScenarioError {
        file: file.into(),
        msg,
    })?;
    Ok(f.claim)
}

/// " (did you mean \"x\"?)" for the candidate nearest to `want`, if it is near enough to be a
/// likely typo (at most a third of the characters differ); else "".
fn did_you_mean<'a>(want: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(want, c), c))
        .filter(|(d, _)| *d > 0 && *d <= (want.chars().count() / 3).max(2))
        .min()
        .map_or_else(String::new, |(_, c)| format!(" (did you mean \"{c}\"?)"))
}

/// The point selectors of a check, each with its field name.
fn selectors(c: &Check) -> Vec<(String, &str)> {
    match c {
        Check::Below { a, .. }
        | Check::Above { a, .. }
        | Check::Approx { a, .. }
        | Check::Between { a, .. } => vec![("check.a".into(), a.as_str())],
        Check::Greater { a, b }
        | Check::Ratio { a, b, .. }
        | Check::Close { a, b }
        | Check::Drop { a, b, .. } => {
            vec![
                ("check.a".into(), a.as_str()),
                ("check.b".into(), b.as_str()),
            ]
        }
        Check::Order { points } | Check::Convex { points } | Check::Best { points, .. } => points
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("check.points[{i}]"), p.as_str()))
            .collect(),
        Check::RatioGreater { a, b } => vec![
            ("check.a[0]".into(), a[0].as_str()),
            ("check.a[1]".into(), a[1].as_str()),
            ("check.b[0]".into(), b[0].as_str()),
            ("check.b[1]".into(), b[1].as_str()),
        ],
        Check::Least { a, points } => std::iter::once(("check.a".into(), a.as_str()))
            .chain(
                points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (format!("check.points[{i}]"), p.as_str())),
            )
            .collect(),
    }
}

/// Numbers a check cannot be evaluated against (NaN), bounds that no value can meet, and an
/// ordering of fewer than two points: each would be a verdict that means nothing.
fn check_values(c: &Check) -> Result<(), String> {
    let bounds = |lo: f64, hi: f64| {
        if lo.is_nan() || hi.is_nan() || lo > hi {
            Err(format!("check.lo = {lo}, check.hi = {hi}: need lo <= hi"))
        } else if !lo.is_finite() && !hi.is_finite() {
            // One open side is a one-sided bound; two hold for every value (review, session 42).
            Err(format!(
                "check.lo = {lo}, check.hi = {hi}: at least one bound must be finite"
            ))
        } else {
            Ok(())
        }
    };
    match c {
        Check::Below { value, .. } | Check::Above { value, .. } if !value.is_finite() => {
            Err(format!("check.value = {value}: must be a finite number"))
        }
        Check::Approx { value, rel_tol, .. } => {
            if !value.is_finite() {
                Err(format!("check.value = {value}: must be a finite number"))
            } else if *value == 0.0 {
                // A relative tolerance around 0 is an exact-equality test.
                Err("check.value = 0: a relative tolerance around 0 tests equality; use below or between".into())
            } else if !(0.0..1.0).contains(rel_tol) {
                // 1 accepts a mean of 0 ("no effect") and more accepts anything: a check that
                // cannot fail (review, session 47; `best` bounds its tolerance the same way).
                Err(format!("check.rel_tol = {rel_tol}: must be in [0, 1)"))
            } else {
                Ok(())
            }
        }
        Check::Between { lo, hi, .. }
        | Check::Ratio { lo, hi, .. }
        | Check::Drop { lo, hi, .. } => bounds(*lo, *hi),
        Check::Order { points } if points.len() < 2 => Err(format!(
            "check.points = {points:?}: an ordering needs at least 2 points"
        )),
        Check::Least { a, points } if points.is_empty() || points.contains(a) => Err(format!(
            "check.points = {points:?}: a lowest value needs at least 1 other point, and not check.a = \"{a}\""
        )),
        Check::Convex { points } if points.len() < 3 => Err(format!(
            "check.points = {points:?}: a growing rate needs at least 3 points"
        )),
        Check::Best { a, points, rel_tol } => {
            if points.len() < 2 {
                Err(format!(
                    "check.points = {points:?}: a best value needs at least 2 points"
                ))
            } else if !points.contains(a) {
                Err(format!("check.a = \"{a}\": must be one of check.points"))
            } else if !(rel_tol.is_finite() && (0.0..1.0).contains(rel_tol)) {
                Err(format!("check.rel_tol = {rel_tol}: must be in [0, 1)"))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// Does selector `sel` pick the point labelled `label` (the whole label or a `/`-separated end)?
pub(crate) fn selects(label: &str, sel: &str) -> bool {
    label == sel
        || label
            .strip_suffix(sel)
            .is_some_and(|head| head.ends_with('/'))
}

/// Check `claims` against `catalogue`; the first problem, as "claim \"id\": field = value: why".
fn validate(claims: &[Claim], catalogue: &[Scenario]) -> Result<(), String> {
    let mut ids = BTreeSet::new();
    // Metric keys by (scenario, point), built once per point (`Scenario::metric_names`).
    let mut metrics: BTreeMap<(usize, usize), Option<BTreeSet<String>>> = BTreeMap::new();
    for c in claims {
        let fail = |msg: String| Err(format!("claim \"{}\": {msg}", c.id));
        if c.id.trim().is_empty() {
            return fail("id = \"\": must not be empty".into());
        }
        // The report has one row per id: two claims with one id could not be told apart.
        if !ids.insert(c.id.as_str()) {
            return fail(format!("id = \"{}\": given twice", c.id));
        }
        let Some(si) = catalogue.iter().position(|sc| sc.name() == c.scenario) else {
            return fail(format!(
                "scenario = \"{}\": no such scenario{}",
                c.scenario,
                did_you_mean(&c.scenario, catalogue.iter().map(Scenario::name))
            ));
        };
        let sc = &catalogue[si];
        if let Err(msg) = check_values(&c.check) {
            return fail(msg);
        }
        let pts: Vec<&crate::scenario::Point> = sc.points.iter().collect();
        let wild = wildcards(&pts);
        for (field, sel) in selectors(&c.check) {
            // `L*` and `N*` are checked as `evaluate` expands them: at every error level > 0,
            // every number of flows of the sweep.
            let mut expanded: Vec<String> = vec![sel.to_string()];
            for (pat, vals) in &wild {
                if sel.contains(pat) {
                    if vals.is_empty() {
                        let what = if *pat == "L*" {
                            "error level > 0"
                        } else {
                            "sweep.flows axis"
                        };
                        return fail(format!(
                            "{field} = \"{sel}\": scenario \"{}\" has no {what} for {pat}",
                            sc.name()
                        ));
                    }
                    expanded = expanded
                        .iter()
                        .flat_map(|e| vals.iter().map(move |v| e.replace(pat, v)))
                        .collect();
                }
            }
            for s in &expanded {
                let at = if s == sel {
                    String::new()
                } else {
                    format!(" (as \"{s}\")")
                };
                let hits: Vec<usize> = (0..sc.points.len())
                    .filter(|&i| selects(&sc.points[i].label, s))
                    .collect();
                let pi = match hits[..] {
                    [pi] => pi,
                    [] => {
                        // Every end of every label ("sr-m2", "L4/sr-m2", ...) is a selector.
                        let ends: BTreeSet<&str> = sc
                            .points
                            .iter()
                            .flat_map(|p| {
                                let l = p.label.as_str();
                                std::iter::once(l)
                                    .chain(l.match_indices('/').map(move |(i, _)| &l[i + 1..]))
                            })
                            .collect();
                        let hint = match did_you_mean(s, ends) {
                            h if h.is_empty() => format!(
                                " (points: {})",
                                sc.points
                                    .iter()
                                    .map(|p| p.label.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            h => h,
                        };
                        return fail(format!(
                            "{field} = \"{sel}\"{at}: no point of scenario \"{}\" ends with it{hint}",
                            sc.name()
                        ));
                    }
                    // `lookup` would read the first one, silently.
                    _ => {
                        let labels: Vec<&str> =
                            hits.iter().map(|&i| sc.points[i].label.as_str()).collect();
                        return fail(format!(
                            "{field} = \"{sel}\"{at}: matches {} points of scenario \"{}\" ({}); give more of the label",
                            hits.len(),
                            sc.name(),
                            labels.join(", ")
                        ));
                    }
                };
                // A point whose simulation cannot be built (e.g. a missing error trace) is not
                // checked here: running it reports that error.
                let known = metrics
                    .entry((si, pi))
                    .or_insert_with(|| sc.metric_names(pi).ok().map(BTreeSet::from_iter));
                if let Some(known) = known {
                    if !known.contains(&c.metric) {
                        return fail(format!(
                            "metric = \"{}\": point \"{}\" of scenario \"{}\" does not report it{}",
                            c.metric,
                            sc.points[pi].label,
                            sc.name(),
                            did_you_mean(&c.metric, known.iter().map(String::as_str))
                        ));
                    }
                }
            }
        }
        // Two selectors of one check on one point (perhaps spelt differently) compare it with
        // itself: "greater" always fails, "close" always passes, a ratio is 1 (review, session
        // 42). Judged on each concrete check `evaluate` runs, so that `L*` against a fixed
        // level is caught at that level (review, session 47: only selectors expanding to
        // lists of one length were compared). Every selector resolves to one point here (the
        // loop above refused anything else).
        for ch in expand(&c.check, &pts) {
            let at: Vec<(String, usize)> = selectors(&ch)
                .into_iter()
                .filter_map(|(f, sel)| {
                    let i = (0..sc.points.len()).find(|&i| selects(&sc.points[i].label, sel))?;
                    Some((f, i))
                })
                .collect();
            if let Some((fi, fj, k)) = self_comparison(&ch, &at) {
                let shown = |f: &str| {
                    let sel = selectors(&c.check)
                        .into_iter()
                        .find(|(g, _)| g == f)
                        .map(|(_, s)| s.to_string())
                        .unwrap_or_default();
                    match selectors(&ch).into_iter().find(|(g, _)| g == f) {
                        Some((_, e)) if e != sel => format!("{f} (\"{sel}\" as \"{e}\")"),
                        _ => f.to_string(),
                    }
                };
                return fail(format!(
                    "{} and {} select the same point \"{}\": the check would compare it with itself",
                    shown(&fi),
                    shown(&fj),
                    sc.points[k].label
                ));
            }
        }
    }
    Ok(())
}

/// Two selectors of `ch` (resolved to points `at`, in `selectors` order) whose sameness makes
/// the check compare a point with itself: `(field, field, point)`. (`best`'s `a`, one of its
/// points by design, is no selector.) `ratio-greater` compares two ratios, so only a ratio's own two ends,
/// or the same ratio on both sides, are self-comparisons (`a = [X, Y], b = [Y, Z]` asks
/// whether growth accelerates: review, session 47).
fn self_comparison(ch: &Check, at: &[(String, usize)]) -> Option<(String, String, usize)> {
    let same = |i: usize, j: usize| {
        (at[i].1 == at[j].1).then(|| (at[i].0.clone(), at[j].0.clone(), at[i].1))
    };
    if let Check::RatioGreater { .. } = ch {
        if at.len() != 4 {
            return None;
        }
        return same(0, 1).or_else(|| same(2, 3)).or_else(|| {
            (at[0].1 == at[2].1 && at[1].1 == at[3].1)
                .then(|| same(0, 2))
                .flatten()
        });
    }
    for i in 0..at.len() {
        for j in i + 1..at.len() {
            if let Some(hit) = same(i, j) {
                return Some(hit);
            }
        }
    }
    None
}

type Results = BTreeMap<String, (usize, Vec<PointResult>)>;

/// The point `sel` selects and its summary of `metric`, if it has all its replications.
fn complete_point<'a>(
    prs: &'a [PointResult],
    sel: &str,
    metric: &str,
) -> Option<(&'a PointResult, &'a msll_sim::metrics::Summary)> {
    let p = prs
        .iter()
        .find(|p| selects(&p.point.label, sel))
        .filter(|p| p.missing == 0)?;
    Some((p, p.summary.get(metric)?))
}

/// The mean and sd of `metric` at the point `sel` selects; `None` when that point is absent or
/// lacks some of its replications (a partial merge must not be judged on the runs it has). The
/// sd is NaN below two measurements (`Summary::of`): one run has no spread (a `close` check
/// cannot be judged).
fn lookup(prs: &[PointResult], sel: &str, metric: &str) -> Option<(f64, f64)> {
    let (_, s) = complete_point(prs, sel, metric)?;
    (s.n > 0 && s.mean.is_finite()).then_some((s.mean, s.sd))
}

/// How many of the runs of the point `sel` selects measured `metric`, when not all of them did
/// (a delay with nothing delivered is NaN in that run): `Some((measured, runs))`. `None`: every
/// run did, or the point is absent (which `lookup` reports).
fn partly_measured(prs: &[PointResult], sel: &str, metric: &str) -> Option<(usize, usize)> {
    let (p, s) = complete_point(prs, sel, metric)?;
    (s.n == 0 || s.n < p.runs.len()).then_some((s.n, p.runs.len().max(s.n)))
}

fn fmt(x: f64) -> String {
    fmt_at(x, 4)
}

/// `x` with `prec` digits after the point (in scientific notation when very small or large).
fn fmt_at(x: f64, prec: usize) -> String {
    if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e6) {
        format!("{x:.prec$e}")
    } else {
        format!("{x:.prec$}")
    }
}

/// `xs` formatted with the fewest digits (4 at least) that print different values differently,
/// so a measured value next to its threshold never reads "0.0050 < 0.0050".
fn fmt_many(xs: &[f64]) -> Vec<String> {
    let distinct = |p: usize| {
        (0..xs.len())
            .all(|i| (0..i).all(|j| xs[i] == xs[j] || fmt_at(xs[i], p) != fmt_at(xs[j], p)))
    };
    let prec = (4..=17).find(|&p| distinct(p)).unwrap_or(17);
    xs.iter().map(|&x| fmt_at(x, prec)).collect()
}

/// `fmt_many` over a fixed number of values.
fn fmt_all<const N: usize>(xs: [f64; N]) -> [String; N] {
    fmt_many(&xs).try_into().expect("one string per value")
}

/// A tolerance as a percentage, to 4 decimals (0.004 read "0%" as `{:.0}`: review, session 47).
fn percent(tol: f64) -> f64 {
    (tol * 100.0 * 1e4).round() / 1e4
}

/// One check at one level; `None` = not run (missing points).
fn check_once(c: &Check, prs: &[PointResult], m: &str) -> Option<(bool, String)> {
    let g = |s: &str| lookup(prs, s, m);
    // The means of `points`, and "p = mean" for each joined by `sep`.
    let means = |points: &[String], sep: &str| -> Option<(Vec<f64>, String)> {
        let vals: Vec<f64> = points
            .iter()
            .map(|p| g(p).map(|v| v.0))
            .collect::<Option<_>>()?;
        let s = points
            .iter()
            .zip(fmt_many(&vals))
            .map(|(p, v)| format!("{p} = {v}"))
            .collect::<Vec<_>>()
            .join(sep);
        Some((vals, s))
    };
    Some(match c {
        Check::Below { a, value } => {
            let (x, _) = g(a)?;
            let [xs, vs] = fmt_all([x, *value]);
            (x < *value, format!("{a} = {xs} < {vs}"))
        }
        Check::Above { a, value } => {
            let (x, _) = g(a)?;
            let [xs, vs] = fmt_all([x, *value]);
            (x > *value, format!("{a} = {xs} > {vs}"))
        }
        Check::Approx { a, value, rel_tol } => {
            let (x, _) = g(a)?;
            (
                (x - value).abs() <= rel_tol * value.abs(),
                format!(
                    "{a} = {} ~ {} (+/-{}%)",
                    fmt(x),
                    fmt(*value),
                    percent(*rel_tol)
                ),
            )
        }
        Check::Between { a, lo, hi } => {
            let (x, _) = g(a)?;
            let [xs, ls, hs] = fmt_all([x, *lo, *hi]);
            (x >= *lo && x <= *hi, format!("{a} = {xs} in [{ls}, {hs}]"))
        }
        Check::Greater { a, b } => {
            let ((x, _), (y, _)) = (g(a)?, g(b)?);
            let [xs, ys] = fmt_all([x, y]);
            (x > y, format!("{a} = {xs} > {b} = {ys}"))
        }
        Check::Order { points } => {
            let (vals, s) = means(points, " > ")?;
            (vals.windows(2).all(|w| w[0] > w[1]), s)
        }
        Check::Least { a, points } => {
            let (x, _) = g(a)?;
            let vals: Vec<f64> = points
                .iter()
                .map(|p| g(p).map(|v| v.0))
                .collect::<Option<_>>()?;
            let all: Vec<f64> = std::iter::once(x).chain(vals.iter().copied()).collect();
            let f = fmt_many(&all);
            let others = points
                .iter()
                .zip(&f[1..])
                .map(|(p, v)| format!("{p} = {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            (
                vals.iter().all(|&v| x < v),
                format!("{a} = {} < each of {others}", f[0]),
            )
        }
        Check::Convex { points } => {
            let (vals, s) = means(points, " < ")?;
            let steps: Vec<f64> = vals.windows(2).map(|w| w[1] - w[0]).collect();
            let ok = steps.iter().all(|&d| d > 0.0) && steps.windows(2).all(|w| w[1] >= w[0]);
            let st = fmt_many(&steps).join(" <= ");
            (ok, format!("{s}; steps {st}"))
        }
        Check::Best { a, points, rel_tol } => {
            let vals: Vec<f64> = points
                .iter()
                .map(|p| g(p).map(|v| v.0))
                .collect::<Option<_>>()?;
            let (x, _) = g(a)?;
            let (imax, max) =
                vals.iter()
                    .copied()
                    .enumerate()
                    .fold(
                        (0, f64::NEG_INFINITY),
                        |m, (i, v)| if v > m.1 { (i, v) } else { m },
                    );
            // Within rel_tol of the best, below it: `max - tol |max|`, so that a negative best
            // still passes itself (review, session 41: (1 - tol) max lies above a negative max).
            let floor = max - rel_tol * max.abs();
            let [xs, ms, ts] = fmt_all([x, max, floor]);
            (
                x >= floor,
                format!(
                    "{a} = {xs} vs best {} = {ms} (within {}%: >= {ts})",
                    points[imax],
                    percent(*rel_tol),
                ),
            )
        }
        Check::Ratio { a, b, lo, hi } => {
            let ((x, _), (y, _)) = (g(a)?, g(b)?);
            let r = x / y;
            let [rs, ls, hs] = fmt_all([r, *lo, *hi]);
            let msg = format!("{a}/{b} = {rs} in [{ls}, {hs}]");
            // x/0 = inf passed `hi = inf` (review, session 47): as `ratio-greater`, a failure
            // that says so.
            if !r.is_finite() {
                (false, format!("{msg}: undefined, a zero denominator"))
            } else {
                (r >= *lo && r <= *hi, msg)
            }
        }
        Check::RatioGreater { a, b } => {
            let (ra, rb) = (g(&a[0])?.0 / g(&a[1])?.0, g(&b[0])?.0 / g(&b[1])?.0);
            let [x, y] = fmt_all([ra, rb]);
            let msg = format!(
                "({}) / ({}) = {x} > ({}) / ({}) = {y}",
                a[0], a[1], b[0], b[1]
            );
            // A zero denominator makes no relative change (x/0 = inf would pass): a failure
            // that says so.
            if !(ra.is_finite() && rb.is_finite()) {
                (false, format!("{msg}: undefined, a zero denominator"))
            } else {
                (ra > rb, msg)
            }
        }
        Check::Close { a, b } => {
            let ((x, sx), (y, sy)) = (g(a)?, g(b)?);
            if (sx + sy).is_nan() {
                // One replication: "nearly identical" would demand equal values.
                return None;
            }
            let [ds, ss] = fmt_all([(x - y).abs(), sx + sy]);
            (
                (x - y).abs() <= sx + sy,
                format!("|{a} - {b}| = {ds} <= {ss} (sd sum)"),
            )
        }
        Check::Drop { a, b, lo, hi } => {
            let ((x, _), (y, _)) = (g(a)?, g(b)?);
            let d = 1.0 - y / x;
            // One decimal, more if that is what tells the drop from a bound it missed or met.
            let pc = |v: f64, p: usize| format!("{:.p$}", v * 100.0);
            let p = (1..=15)
                .find(|&p| [*lo, *hi].iter().all(|&b| b == d || pc(d, p) != pc(b, p)))
                .unwrap_or(15);
            let msg = format!(
                "drop {a} -> {b} = {}% in [{}%, {}%]",
                pc(d, p),
                pc(*lo, if p > 1 { p } else { 0 }),
                pc(*hi, if p > 1 { p } else { 0 })
            );
            // A drop from 0 is -inf (or NaN), which passed `lo = -inf` (review, session 47).
            if !d.is_finite() {
                (false, format!("{msg}: undefined, a zero baseline {a}"))
            } else {
                (d >= *lo && d <= *hi, msg)
            }
        }
    })
}

/// `c` with every `pat` (`L*`, `N*`) in its selectors replaced by `by` (`L3`, `N20`).
fn substitute(c: &Check, pat: &str, by: &str) -> Check {
    let r = |s: &String| s.replace(pat, by);
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
        Check::Convex { points } => Check::Convex {
            points: points.iter().map(r).collect(),
        },
        Check::Least { a, points } => Check::Least {
            a: r(a),
            points: points.iter().map(r).collect(),
        },
        Check::Ratio { a, b, lo, hi } => Check::Ratio {
            a: r(a),
            b: r(b),
            lo: *lo,
            hi: *hi,
        },
        Check::Close { a, b } => Check::Close { a: r(a), b: r(b) },
        Check::RatioGreater { a, b } => Check::RatioGreater {
            a: [r(&a[0]), r(&a[1])],
            b: [r(&b[0]), r(&b[1])],
        },
        Check::Best { a, points, rel_tol } => Check::Best {
            a: r(a),
            points: points.iter().map(r).collect(),
            rel_tol: *rel_tol,
        },
        Check::Drop { a, b, lo, hi } => Check::Drop {
            a: r(a),
            b: r(b),
            lo: *lo,
            hi: *hi,
        },
    }
}

fn uses(c: &Check, pat: &str) -> bool {
    format!("{c:?}").contains(pat)
}

/// `c` once per combination of the sweep values its `L*` and `N*` stand for (itself if it
/// uses neither).
fn expand(c: &Check, points: &[&crate::scenario::Point]) -> Vec<Check> {
    let mut checks = vec![c.clone()];
    for (pat, vals) in wildcards(points) {
        if uses(c, pat) {
            checks = checks
                .iter()
                .flat_map(|ch| vals.iter().map(|v| substitute(ch, pat, v)))
                .collect();
        }
    }
    checks
}

/// The sweep values `L*` and `N*` stand for: every error level > 0, every number of flows.
fn wildcards(points: &[&crate::scenario::Point]) -> [(&'static str, Vec<String>); 2] {
    let mut lv: Vec<u8> = points.iter().map(|p| p.level).filter(|l| *l > 0).collect();
    lv.sort_unstable();
    lv.dedup();
    let mut nf: Vec<u32> = points.iter().filter_map(|p| p.flows).collect();
    nf.sort_unstable();
    nf.dedup();
    [
        ("L*", lv.into_iter().map(|l| format!("L{l}")).collect()),
        ("N*", nf.into_iter().map(|n| format!("N{n}")).collect()),
    ]
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
            let pts: Vec<&crate::scenario::Point> = prs.iter().map(|p| &p.point).collect();
            let checks = expand(&c.check, &pts);
            if checks.is_empty() {
                // `L*` or `N*` with no level > 0 or no flows among the results: nothing was
                // judged, which is no pass (review, session 47).
                return Verdict {
                    claim: c.clone(),
                    status: Status::NotRun,
                    measured: "no point of the results for its L* or N*".into(),
                };
            }
            let (mut ok, mut not_run) = (true, false);
            let mut parts = Vec::new();
            for ch in &checks {
                // Runs that did not measure the metric: a point none of whose runs did fails
                // the check; one some did is judged on those, and the verdict says so.
                let (mut none, mut some) = (Vec::new(), Vec::new());
                for (_, sel) in selectors(ch) {
                    match partly_measured(prs, sel, &c.metric) {
                        Some((0, n)) => {
                            none.push(format!("{sel}: {} measured in 0 of {n} runs", c.metric))
                        }
                        Some((k, n)) => some.push(format!("{sel}: {k} of {n} runs measured it")),
                        None => {}
                    }
                }
                if !none.is_empty() {
                    ok = false;
                    parts.push(format!("**{}**", none.join("; ")));
                    continue;
                }
                let note = if some.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", some.join("; "))
                };
                match check_once(ch, prs, &c.metric) {
                    // Not judged here; a failure at another level still fails the claim
                    // (review, session 41: it turned the whole claim NOT-RUN).
                    None => {
                        not_run = true;
                        parts.push(format!(
                            "**{}: not judged: points or replications missing, a mean that is \
                             not finite, or a `close` side with fewer than 2 runs**",
                            selectors(ch)
                                .into_iter()
                                .map(|(_, sel)| sel)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                    Some((pass, s)) => {
                        ok &= pass;
                        parts.push(if pass {
                            format!("{s}{note}")
                        } else {
                            format!("**{s}**{note}")
                        });
                    }
                }
            }
            Verdict {
                claim: c.clone(),
                status: match (ok, not_run) {
                    (false, _) => Status::Fail,
                    (true, true) => Status::NotRun,
                    (true, false) => Status::Pass,
                },
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Two topologies, levels 0-2, two schemes: "L1/default" names two points, "LAN1/L1/default"
    /// one; the app is a conference, so "ftp.*" metrics do not exist.
    fn catalogue() -> Vec<Scenario> {
        let text = r#"
[scenario]
name = "conf_two"
replications = 1
duration_s = 5

[link]
preset = "cellular"

[[app]]
kind = "conference"

[sweep]
level = [0, 1, 2]
scheme = ["default", "rlp"]
topology = ["LAN1", "WAN2"]
"#;
        vec![Scenario::parse("conf_two.toml", text, Path::new(".")).unwrap()]
    }

    /// One claim with the given scenario, metric and inline check table.
    fn claim(scenario: &str, metric: &str, check: &str) -> String {
        format!(
            "[[claim]]\nid = \"C7\"\nsource = \"s\"\ntext = \"t\"\nscenario = \"{scenario}\"\nmetric = \"{metric}\"\ncheck = {check}\n"
        )
    }

    fn error(text: &str) -> String {
        parse("claims.toml", text, &catalogue())
            .expect_err("an error")
            .to_string()
    }

    const GREATER: &str = r#"{ kind = "greater", a = "LAN1/L1/default", b = "LAN1/L1/rlp" }"#;

    /// `N*` expands over the `sweep.flows` values, alone or with `L*`; a scenario without the
    /// axis rejects it, naming the field.
    #[test]
    fn flows_wildcard_expands_over_the_sweep() {
        let video = Scenario::parse(
            "v.toml",
            r#"
[scenario]
name = "v"
replications = 1
duration_s = 5
[link]
preset = "wlan11b"
frame_payload = 1040
[[app]]
kind = "video"
tcp = "ns2-2.35"
segment_size = 1000
rate_bps = 200000
[sweep]
level = [0, 1, 2]
scheme = ["default", "snoop"]
flows = [1, 3]
"#,
            Path::new("."),
        )
        .unwrap();
        let mut cat = catalogue();
        cat.push(video);
        let text = claim(
            "v",
            "video.rtpi",
            r#"{ kind = "greater", a = "L*/snoop/N*", b = "L*/default/N*" }"#,
        );
        let claims = parse("claims.toml", &text, &cat).unwrap();
        let pts: Vec<&crate::scenario::Point> = cat[1].points.iter().collect();
        let got: Vec<String> = expand(&claims[0].check, &pts)
            .iter()
            .map(|ch| match ch {
                Check::Greater { a, .. } => a.clone(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            got,
            ["L1/snoop/N1", "L1/snoop/N3", "L2/snoop/N1", "L2/snoop/N3"]
        );
        let e = parse(
            "claims.toml",
            &claim(
                "conf_two",
                "conf.loss",
                r#"{ kind = "greater", a = "LAN1/L1/default/N*", b = "LAN1/L1/rlp" }"#,
            ),
            &cat,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("has no sweep.flows axis for N*"), "{e}");
    }

    #[test]
    fn good_claims_load() {
        let text = [
            claim("conf_two", "conf.loss", GREATER),
            claim(
                "conf_two",
                "conf.delay_m2sd_ms",
                r#"{ kind = "close", a = "WAN2/L*/default", b = "WAN2/L*/rlp" }"#,
            )
            .replace("C7", "C8"),
        ]
        .concat();
        assert_eq!(parse("claims.toml", &text, &catalogue()).unwrap().len(), 2);
    }

    /// Each of these was a NOT-RUN verdict after the whole run ("scenario not run", "points
    /// missing from the results"), indistinguishable from a scenario left out by `--only`.
    #[test]
    fn unknown_scenario_metric_and_point_are_errors_naming_claim_field_and_value() {
        let cases: [(String, &[&str]); 7] = [
            (
                claim("conf_tow", "conf.loss", GREATER),
                &[
                    "scenario = \"conf_tow\"",
                    "no such scenario",
                    "did you mean \"conf_two\"?",
                ],
            ),
            (
                claim("conf_two", "conf.los", GREATER),
                &[
                    "metric = \"conf.los\"",
                    "does not report it",
                    "did you mean \"conf.loss\"?",
                ],
            ),
            (
                claim("conf_two", "ftp.throughput_bps", GREATER),
                &["metric = \"ftp.throughput_bps\"", "does not report it"],
            ),
            (
                claim(
                    "conf_two",
                    "conf.loss",
                    r#"{ kind = "below", a = "LAN1/L1/rlp1", value = 0.1 }"#,
                ),
                &[
                    "check.a = \"LAN1/L1/rlp1\"",
                    "no point",
                    "did you mean \"LAN1/L1/rlp\"?",
                ],
            ),
            (
                // The sweep has no level 3: the L* expansion does not reach it, a level named
                // outright does.
                claim(
                    "conf_two",
                    "conf.loss",
                    r#"{ kind = "order", points = ["LAN1/L1/default", "LAN1/L3/default"] }"#,
                ),
                &["check.points[1] = \"LAN1/L3/default\"", "no point"],
            ),
            (
                claim(
                    "conf_two",
                    "conf.loss",
                    r#"{ kind = "greater", a = "LAN1/L*/default", b = "LAN1/L*/xor" }"#,
                ),
                &["check.b = \"LAN1/L*/xor\" (as \"LAN1/L1/xor\")", "no point"],
            ),
            (
                // `lookup` would silently read the first of the two.
                claim(
                    "conf_two",
                    "conf.loss",
                    r#"{ kind = "greater", a = "L1/default", b = "LAN1/L1/rlp" }"#,
                ),
                &[
                    "check.a = \"L1/default\"",
                    "matches 2 points",
                    "WAN2/L1/default",
                ],
            ),
        ];
        for (text, needles) in cases {
            let e = error(&text);
            assert!(e.starts_with("claims.toml: claim \"C7\": "), "{e}");
            for n in needles {
                assert!(e.contains(n), "{n:?} not in: {e}");
            }
        }
    }

    #[test]
    fn duplicate_ids_and_meaningless_checks_are_errors() {
        let twice = claim("conf_two", "conf.loss", GREATER).repeat(2);
        assert!(error(&twice).contains("id = \"C7\": given twice"));
        for (check, needle) in [
            (
                r#"{ kind = "ratio", a = "LAN1/L1/default", b = "LAN1/L1/rlp", lo = 2.0, hi = 1.0 }"#,
                "check.lo = 2, check.hi = 1: need lo <= hi",
            ),
            (
                r#"{ kind = "order", points = ["LAN1/L1/default"] }"#,
                "an ordering needs at least 2 points",
            ),
            (
                r#"{ kind = "approx", a = "LAN1/L1/default", value = 0.1, rel_tol = -0.2 }"#,
                "check.rel_tol = -0.2",
            ),
            (
                r#"{ kind = "best", a = "LAN1/L2/rlp", points = ["LAN1/L1/default", "LAN1/L1/rlp"], rel_tol = 0.03 }"#,
                "check.a = \"LAN1/L2/rlp\": must be one of check.points",
            ),
            (
                r#"{ kind = "best", a = "LAN1/L1/rlp", points = ["LAN1/L1/default", "LAN1/L1/rlp"], rel_tol = 1.5 }"#,
                "check.rel_tol = 1.5: must be in [0, 1)",
            ),
            (
                r#"{ kind = "approx", a = "LAN1/L1/rlp", value = 0.0, rel_tol = 0.1 }"#,
                "check.value = 0: a relative tolerance around 0 tests equality",
            ),
            (
                r#"{ kind = "least", a = "LAN1/L1/rlp", points = ["LAN1/L1/default", "LAN1/L1/rlp"] }"#,
                "a lowest value needs at least 1 other point, and not check.a = \"LAN1/L1/rlp\"",
            ),
            (
                r#"{ kind = "least", a = "LAN1/L1/rlp", points = [] }"#,
                "check.points = []",
            ),
            // Review, session 42: checks that cannot depend on the results.
            (
                r#"{ kind = "greater", a = "LAN1/L1/rlp", b = "cellular/LAN1/L1/rlp" }"#,
                "check.a and check.b select the same point \"cellular/LAN1/L1/rlp\"",
            ),
            (
                r#"{ kind = "order", points = ["LAN1/L2/rlp", "LAN1/L1/rlp", "LAN1/L2/rlp"] }"#,
                "check.points[0] and check.points[2] select the same point",
            ),
            (
                r#"{ kind = "close", a = "LAN1/L*/rlp", b = "LAN1/L*/rlp" }"#,
                "select the same point",
            ),
            // Review, session 47: a wildcard against a fixed level meets it at that level; a
            // tolerance that accepts anything.
            (
                r#"{ kind = "greater", a = "LAN1/L*/default", b = "LAN1/L1/default" }"#,
                "check.a (\"LAN1/L*/default\" as \"LAN1/L1/default\") and check.b select the same point",
            ),
            (
                r#"{ kind = "ratio-greater", a = ["LAN1/L2/rlp", "LAN1/L*/rlp"], b = ["LAN1/L2/default", "LAN1/L1/default"] }"#,
                "check.a[0] and check.a[1] (\"LAN1/L*/rlp\" as \"LAN1/L2/rlp\") select the same point",
            ),
            (
                r#"{ kind = "ratio-greater", a = ["LAN1/L2/rlp", "LAN1/L1/rlp"], b = ["LAN1/L2/rlp", "LAN1/L1/rlp"] }"#,
                "check.a[0] and check.b[0] select the same point",
            ),
            (
                r#"{ kind = "approx", a = "LAN1/L1/rlp", value = 0.1, rel_tol = 1e6 }"#,
                "check.rel_tol = 1000000: must be in [0, 1)",
            ),
            (
                r#"{ kind = "approx", a = "LAN1/L1/rlp", value = 0.1, rel_tol = 1 }"#,
                "check.rel_tol = 1: must be in [0, 1)",
            ),
            (
                r#"{ kind = "below", a = "LAN1/L1/rlp", value = inf }"#,
                "check.value = inf: must be a finite number",
            ),
            (
                r#"{ kind = "between", a = "LAN1/L1/rlp", lo = -inf, hi = inf }"#,
                "at least one bound must be finite",
            ),
        ] {
            let e = error(&claim("conf_two", "conf.loss", check));
            assert!(e.contains(needle), "{needle:?} not in: {e}");
        }
    }

    /// Results of the catalogue's first points with `conf.loss` means `vals` (in point order).
    fn conf_loss_results(vals: &[f64]) -> Vec<PointResult> {
        catalogue()[0]
            .points
            .iter()
            .zip(vals)
            .map(|(p, &v)| PointResult {
                point: p.clone(),
                runs: Vec::new(),
                replications: Vec::new(),
                summary: BTreeMap::from([(
                    "conf.loss".to_string(),
                    // One replication: no spread (`Summary::of`).
                    msll_sim::metrics::Summary {
                        mean: v,
                        sd: f64::NAN,
                        n: 1,
                    },
                )]),
                missing: 0,
            })
            .collect()
    }

    /// `best` passes when the named point is within `rel_tol` of the largest mean, and names
    /// the best point either way.
    #[test]
    fn best_is_within_tolerance_of_the_maximum() {
        let prs = conf_loss_results(&[1.0, 0.99, 0.5, 0.2, 0.3, 0.4]);
        let labels: Vec<String> = prs.iter().map(|p| p.point.label.clone()).collect();
        let best = |a: usize, tol: f64| Check::Best {
            a: labels[a].clone(),
            points: labels.clone(),
            rel_tol: tol,
        };
        let (ok, msg) = check_once(&best(1, 0.03), &prs, "conf.loss").unwrap();
        assert!(ok, "{msg}");
        assert!(msg.contains(&format!("best {}", labels[0])), "{msg}");
        assert!(!check_once(&best(1, 0.005), &prs, "conf.loss").unwrap().0);
        assert!(!check_once(&best(2, 0.03), &prs, "conf.loss").unwrap().0);
        assert!(check_once(&best(0, 0.0), &prs, "conf.loss").unwrap().0);
        // Negative means: the best still passes itself, and the tolerance lies below it.
        let neg = conf_loss_results(&[-1.0, -1.02, -2.0, -3.0, -4.0, -5.0]);
        assert!(check_once(&best(0, 0.0), &neg, "conf.loss").unwrap().0);
        assert!(check_once(&best(1, 0.03), &neg, "conf.loss").unwrap().0);
        assert!(!check_once(&best(1, 0.01), &neg, "conf.loss").unwrap().0);
        assert!(!check_once(&best(2, 0.5), &neg, "conf.loss").unwrap().0);
    }

    /// Tolerances below 1 % are printed as they are, not rounded to "0%".
    #[test]
    fn approx_prints_its_tolerance() {
        let prs = conf_loss_results(&[0.1004]);
        let c = Check::Approx {
            a: prs[0].point.label.clone(),
            value: 0.1,
            rel_tol: 0.004,
        };
        let (ok, msg) = check_once(&c, &prs, "conf.loss").unwrap();
        assert!(ok && msg.ends_with("(+/-0.4%)"), "{msg}");
        assert_eq!(percent(0.2), 20.0);
    }

    /// Ratios over a zero denominator and drops from a zero baseline fail, saying so, instead
    /// of passing an infinite bound (review, session 47); a ratio of two ratios that share a
    /// point (accelerating growth) is a valid claim; `L*` with no level among the results is
    /// not a pass.
    #[test]
    fn zero_denominators_fail_and_shared_ratio_points_are_allowed() {
        let prs = conf_loss_results(&[0.4, 0.0, 0.0, 0.2]);
        let l: Vec<String> = prs.iter().map(|p| p.point.label.clone()).collect();
        let ratio = |a: usize, b: usize, lo: f64, hi: f64| Check::Ratio {
            a: l[a].clone(),
            b: l[b].clone(),
            lo,
            hi,
        };
        let (ok, msg) = check_once(&ratio(0, 1, 1.5, f64::INFINITY), &prs, "conf.loss").unwrap();
        assert!(!ok && msg.contains("zero denominator"), "{msg}");
        let (ok, msg) = check_once(&ratio(1, 2, 0.0, f64::INFINITY), &prs, "conf.loss").unwrap();
        assert!(!ok && msg.contains("zero denominator"), "{msg}");
        assert!(
            check_once(&ratio(0, 3, 1.5, f64::INFINITY), &prs, "conf.loss")
                .unwrap()
                .0
        );
        let drop = |a: usize, b: usize| Check::Drop {
            a: l[a].clone(),
            b: l[b].clone(),
            lo: f64::NEG_INFINITY,
            hi: 0.5,
        };
        let (ok, msg) = check_once(&drop(1, 0), &prs, "conf.loss").unwrap();
        assert!(!ok && msg.contains("zero baseline"), "{msg}");
        assert!(check_once(&drop(0, 3), &prs, "conf.loss").unwrap().0);

        let shared = claim(
            "conf_two",
            "conf.loss",
            r#"{ kind = "ratio-greater", a = ["LAN1/L2/rlp", "LAN1/L1/rlp"], b = ["LAN1/L1/rlp", "LAN1/L1/default"] }"#,
        );
        parse("claims.toml", &shared, &catalogue()).expect("a valid claim");

        let wild = claim(
            "conf_two",
            "conf.loss",
            r#"{ kind = "below", a = "LAN1/L*/rlp", value = 1.0 }"#,
        );
        let claims = parse("claims.toml", &wild, &catalogue()).unwrap();
        let level0: Vec<PointResult> = conf_loss_results(&[0.0; 12])
            .into_iter()
            .filter(|p| p.point.level == 0)
            .collect();
        assert!(!level0.is_empty());
        let results = BTreeMap::from([("conf_two".to_string(), (1, level0))]);
        let v = evaluate(&claims, &results);
        assert_eq!(v[0].status, Status::NotRun, "{}", v[0].measured);
    }

    /// `ratio-greater` compares two quotients of means, names all four points, and parses from
    /// a claims file with its selectors checked like any other.
    #[test]
    fn ratio_greater_compares_two_relative_changes() {
        let prs = conf_loss_results(&[1.0, 2.0, 4.0, 1.0, 3.0, 6.0]);
        let l: Vec<String> = prs.iter().map(|p| p.point.label.clone()).collect();
        let rg = |a: [usize; 2], b: [usize; 2]| Check::RatioGreater {
            a: [l[a[0]].clone(), l[a[1]].clone()],
            b: [l[b[0]].clone(), l[b[1]].clone()],
        };
        // 4/1 = 4 > 6/3 = 2; the other way round fails, and so does a tie.
        let (ok, msg) = check_once(&rg([2, 0], [5, 4]), &prs, "conf.loss").unwrap();
        assert!(ok, "{msg}");
        for x in [&l[2], &l[0], &l[5], &l[4]] {
            assert!(msg.contains(x.as_str()), "{msg}");
        }
        assert!(
            !check_once(&rg([5, 4], [2, 0]), &prs, "conf.loss")
                .unwrap()
                .0
        );
        // A zero denominator is no relative change: a failure that says so, not inf > x.
        let zero = conf_loss_results(&[0.0, 2.0, 4.0, 1.0, 3.0, 6.0]);
        let (ok, msg) = check_once(&rg([2, 0], [5, 4]), &zero, "conf.loss").unwrap();
        assert!(!ok && msg.contains("zero denominator"), "{msg}");
        assert!(
            !check_once(&rg([1, 0], [5, 4]), &prs, "conf.loss")
                .unwrap()
                .0
        );
        let text = claim(
            "conf_two",
            "conf.loss",
            r#"{ kind = "ratio-greater", a = ["LAN1/L2/rlp", "LAN1/L1/rlp"], b = ["LAN1/L2/default", "LAN1/L9/default"] }"#,
        );
        let e = error(&text);
        assert!(e.contains("check.b[1] = \"LAN1/L9/default\""), "{e}");
        let ok = text.replace("L9", "L1");
        assert_eq!(parse("claims.toml", &ok, &catalogue()).unwrap().len(), 1);
    }

    /// `convex` passes on rising means whose steps do not shrink, fails on a rise that slows
    /// or a fall, and refuses fewer than 3 points.
    #[test]
    fn convex_wants_a_rise_at_a_growing_rate() {
        let eval = |vals: [f64; 4]| {
            let prs = conf_loss_results(&vals);
            let points = prs.iter().map(|p| p.point.label.clone()).collect();
            check_once(&Check::Convex { points }, &prs, "conf.loss").unwrap()
        };
        let (ok, msg) = eval([1.0, 2.0, 3.0, 5.0]);
        assert!(ok, "{msg}");
        assert!(msg.contains("steps 1.0000 <= 1.0000 <= 2.0000"), "{msg}");
        assert!(!eval([1.0, 3.0, 4.0, 5.0]).0, "a slowing rise");
        assert!(!eval([1.0, 1.0, 2.0, 4.0]).0, "a flat step");
        assert!(!eval([4.0, 3.0, 2.0, 1.0]).0, "a fall");
        let two = r#"{ kind = "convex", points = ["LAN1/L1/default", "LAN1/L2/default"] }"#;
        assert!(error(&claim("conf_two", "conf.loss", two)).contains("at least 3 points"));
    }

    #[test]
    fn selectors_match_whole_label_components() {
        assert!(selects("cellular/LAN1/L4/sr-m2", "L4/sr-m2"));
        assert!(selects("cellular/LAN1/L4/sr-m2", "cellular/LAN1/L4/sr-m2"));
        // "m2" is the end of "sr-m2" but not a component of the label.
        assert!(!selects("cellular/LAN1/L4/sr-m2", "m2"));
        assert!(!selects("cellular/LAN1/L4/sr-m2", "4/sr-m2"));
    }

    /// A failing comparison never prints its two sides alike: the digits grow until they differ.
    #[test]
    fn a_value_next_to_its_threshold_prints_apart() {
        assert_eq!(fmt_all([1.0, 2.0]), ["1.0000", "2.0000"]);
        let [x, t] = fmt_all([0.499_999, 0.5]);
        assert_ne!(x, t);
        assert_eq!((x.as_str(), t.as_str()), ("0.499999", "0.500000"));
        // Equal values may print alike; scientific notation keeps its form.
        assert_eq!(fmt_all([0.5, 0.5]), ["0.5000", "0.5000"]);
        let [a, b] = fmt_all([5.0e-4, 5.000_01e-4]);
        assert_ne!(a, b);
        assert!(a.ends_with("e-4"), "{a}");
        let prs = conf_loss_results(&[0.049_999_9]);
        let sel = prs[0].point.label.clone();
        let (ok, msg) = check_once(
            &Check::Below {
                a: sel.clone(),
                value: 0.05,
            },
            &prs,
            "conf.loss",
        )
        .unwrap();
        assert!(ok);
        assert!(msg.ends_with("= 0.0499999 < 0.0500000"), "{msg}");
    }

    /// A point that lacks replications (a partial merge) is never judged.
    #[test]
    fn a_point_with_missing_replications_reads_not_run() {
        let mut prs = conf_loss_results(&[0.01]);
        let sel = prs[0].point.label.clone();
        let c = Check::Below {
            a: sel,
            value: 0.05,
        };
        assert!(check_once(&c, &prs, "conf.loss").unwrap().0);
        prs[0].missing = 1;
        assert!(check_once(&c, &prs, "conf.loss").is_none());
    }

    /// A point some of whose runs did not measure the metric is judged on those that did, and
    /// the verdict says how many; one that no run measured fails its check, and neither turns
    /// the claim into NOT-RUN or hides another level's failure (review, session 36).
    #[test]
    fn a_metric_some_runs_did_not_measure_is_judged_on_those_that_did() {
        let cat = catalogue();
        let below = r#"{ kind = "below", a = "LAN1/L*/default", value = 0.5 }"#;
        let claims = parse("claims.toml", &claim("conf_two", "conf.loss", below), &cat).unwrap();
        fn set(prs: &mut [PointResult], label: &str, mean: f64, n: usize) {
            let p = prs
                .iter_mut()
                .find(|p| p.point.label.ends_with(label))
                .unwrap();
            p.runs = vec![msll_sim::metrics::RunResult::default(); 30];
            p.replications = (0..30).collect();
            *p.summary.get_mut("conf.loss").unwrap() = msll_sim::metrics::Summary {
                mean,
                sd: if n > 1 { 0.0 } else { f64::NAN },
                n,
            };
        }
        let verdict = |prs: &[PointResult]| {
            let results: Results = BTreeMap::from([("conf_two".to_string(), (0, prs.to_vec()))]);
            evaluate(&claims, &results).remove(0)
        };
        // Point order: level 0, 1, 2 x default, rlp x LAN1, WAN2.
        let mut prs = conf_loss_results(&[0.0; 12]);
        set(&mut prs, "LAN1/L1/default", 0.1, 30);
        set(&mut prs, "LAN1/L2/default", 0.2, 29);
        let says = |v: &Verdict, text: &str| assert!(v.measured.contains(text), "{}", v.measured);
        let v = verdict(&prs);
        assert_eq!(v.status, Status::Pass, "{}", v.measured);
        says(
            &v,
            "0.2000 < 0.5000 (LAN1/L2/default: 29 of 30 runs measured it)",
        );
        says(&v, "LAN1/L1/default = 0.1000 < 0.5000;");
        // Judged on those runs: a value beyond the bound fails.
        set(&mut prs, "LAN1/L2/default", 0.7, 29);
        assert_eq!(verdict(&prs).status, Status::Fail);
        // Nothing measured at all (NaN mean) fails, beside a level that passes.
        set(&mut prs, "LAN1/L2/default", f64::NAN, 0);
        let v = verdict(&prs);
        assert_eq!(v.status, Status::Fail, "{}", v.measured);
        says(&v, "LAN1/L2/default: conf.loss measured in 0 of 30 runs");
        // A level that cannot be judged (a missing replication, an infinite mean) leaves the
        // claim NOT-RUN only if no other level failed (review, session 41: it hid a FAIL).
        set(&mut prs, "LAN1/L2/default", 0.2, 30);
        for broken in ["missing", "inf"] {
            let mut q = prs.clone();
            let p = q
                .iter_mut()
                .find(|p| p.point.label.ends_with("LAN1/L2/default"))
                .unwrap();
            match broken {
                "missing" => p.missing = 1,
                _ => p.summary.get_mut("conf.loss").unwrap().mean = f64::INFINITY,
            }
            let v = verdict(&q);
            assert_eq!(v.status, Status::NotRun, "{broken}: {}", v.measured);
            says(&v, "LAN1/L2/default: not judged");
            set(&mut q, "LAN1/L1/default", 0.7, 30);
            let v = verdict(&q);
            assert_eq!(v.status, Status::Fail, "{broken}: {}", v.measured);
            says(&v, "LAN1/L1/default = 0.7000");
        }
    }

    /// `reproduce` frees every run's metrics once a scenario's data files are written
    /// (`PointResult::forget_run_metrics`): the verdicts, which read the summaries and the number
    /// of runs, must not change, including the count of runs that measured a metric.
    #[test]
    fn verdicts_are_the_same_after_the_runs_metrics_are_forgotten() {
        let cat = catalogue();
        let below = r#"{ kind = "below", a = "LAN1/L*/default", value = 0.5 }"#;
        let claims = parse("claims.toml", &claim("conf_two", "conf.loss", below), &cat).unwrap();
        let mut prs = conf_loss_results(&[0.0; 12]);
        for (i, p) in prs.iter_mut().enumerate() {
            // 30 runs; the third point's first run measured nothing (NaN).
            p.runs = (0..30)
                .map(|r| msll_sim::metrics::RunResult {
                    metrics: BTreeMap::from([(
                        "conf.loss".to_string(),
                        if i == 2 && r == 0 {
                            f64::NAN
                        } else {
                            0.01 * (i + r) as f64
                        },
                    )]),
                })
                .collect();
            p.replications = (0..30).collect();
            p.summary = msll_sim::metrics::summarize(&p.runs);
        }
        let verdict = |prs: &[PointResult]| {
            let results: Results = BTreeMap::from([("conf_two".to_string(), (0, prs.to_vec()))]);
            evaluate(&claims, &results).remove(0)
        };
        let before = verdict(&prs);
        assert!(
            before.measured.contains("29 of 30 runs measured it"),
            "{}",
            before.measured
        );
        prs.iter_mut().for_each(PointResult::forget_run_metrics);
        assert!(prs.iter().all(|p| p.runs.len() == 30
            && p.runs.iter().all(|r| r.metrics.is_empty())
            && p.summary["conf.loss"].n >= 29));
        let after = verdict(&prs);
        assert_eq!(
            (after.status, after.measured),
            (before.status, before.measured)
        );
    }

    /// `close` over single runs has no spread to compare: not judged, rather than demanding
    /// equal values. Two runs a side are judged on their sds.
    #[test]
    fn close_needs_two_runs_a_side() {
        let mut prs = conf_loss_results(&[1.0, 1.1]);
        let l: Vec<String> = prs.iter().map(|p| p.point.label.clone()).collect();
        let c = Check::Close {
            a: l[0].clone(),
            b: l[1].clone(),
        };
        assert!(check_once(&c, &prs, "conf.loss").is_none());
        for p in &mut prs {
            let s = p.summary.get_mut("conf.loss").unwrap();
            s.n = 2;
            s.sd = 0.06;
        }
        let (ok, msg) = check_once(&c, &prs, "conf.loss").unwrap();
        assert!(ok, "{msg}");
        for p in &mut prs {
            p.summary.get_mut("conf.loss").unwrap().sd = 0.04;
        }
        assert!(!check_once(&c, &prs, "conf.loss").unwrap().0);
    }

    /// `least` asks only that `a` be below each other point, in any order among them.
    #[test]
    fn least_is_below_every_other_point_in_any_order() {
        let eval = |vals: &[f64]| {
            let prs = conf_loss_results(vals);
            let l: Vec<String> = prs.iter().map(|p| p.point.label.clone()).collect();
            let c = Check::Least {
                a: l[2].clone(),
                points: vec![l[0].clone(), l[1].clone()],
            };
            check_once(&c, &prs, "conf.loss").unwrap()
        };
        let (ok, msg) = eval(&[2.0, 3.0, 1.0]);
        assert!(ok, "{msg}");
        assert!(msg.contains("= 1.0000 < each of "), "{msg}");
        assert!(
            eval(&[3.0, 2.0, 1.0]).0,
            "the others' order does not matter"
        );
        assert!(!eval(&[3.0, 1.5, 2.0]).0, "above one of them");
        assert!(!eval(&[3.0, 1.0, 1.0]).0, "a tie is not below");
    }

    /// A drop that misses its bound by less than 0.05 % does not print as the bound.
    #[test]
    fn a_drop_next_to_its_bound_prints_apart() {
        let prs = conf_loss_results(&[1.0, 0.500_2, 0.5]);
        let l: Vec<String> = prs.iter().map(|p| p.point.label.clone()).collect();
        let drop = |b: &str| Check::Drop {
            a: l[0].clone(),
            b: b.to_string(),
            lo: 0.5,
            hi: 1.0,
        };
        let (ok, msg) = check_once(&drop(&l[1]), &prs, "conf.loss").unwrap();
        assert!(!ok);
        assert!(msg.ends_with("= 49.98% in [50.00%, 100.00%]"), "{msg}");
        let (ok, msg) = check_once(&drop(&l[2]), &prs, "conf.loss").unwrap();
        assert!(ok);
        assert!(msg.ends_with("= 50.0% in [50%, 100%]"), "{msg}");
    }
}
