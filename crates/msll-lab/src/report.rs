//! The human-readable report: `report/README.md` and a self-contained `report/index.html` (SVG
//! plots inline), with every figure, the claim verdicts, the resolved ambiguities and run time.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result};
use msll_sim::error_model::ErrorSpec;

use crate::claims::{Status, Verdict};
use crate::output::{MODEL_REVISION, VERSION};
use crate::plot::{self, Plot, Series};
use crate::runner::PointResult;
use crate::scenario::{FigureSpec, Scenario};

pub struct Context<'a> {
    pub scenarios: &'a [Scenario],
    pub results: &'a BTreeMap<String, (usize, Vec<PointResult>)>,
    pub verdicts: &'a [Verdict],
    pub wall_s: f64,
    pub runs_executed: usize,
    pub runs_total: usize,
    pub missing: usize,
    pub quick: bool,
    /// `--reps`, when given: replications per point instead of the scenarios' own (3 in quick
    /// mode).
    pub reps: Option<u32>,
    pub selection: Vec<String>,
    /// Simulation seconds (one core) per scenario, from the cache's run times (`wall_s`), with
    /// the events and simulated time of those runs.
    pub cpu_s: BTreeMap<String, crate::speed::Speed>,
    /// The curves of every trace figure, by figure id (`crate::traces`).
    pub traces: BTreeMap<String, Vec<crate::traces::Curve>>,
}

/// The x-axis label of an error level: the model parameter, as in the seeds' figures.
pub fn level_label(p: &PointResult) -> String {
    if p.point.level == 0 {
        return "0 (error-free)".into();
    }
    let e = match &p.point.config.wireless.error {
        ErrorSpec::Bernoulli { p } => format!("{:.0}%", p * 100.0),
        ErrorSpec::ByteInterval { mean, .. } => format!("2^{:.0} B", mean.log2()),
        ErrorSpec::TwoState { bad_mean_s, .. } => format!("bad {:.0} ms", bad_mean_s * 1000.0),
        ErrorSpec::None {} => "none".into(),
        _ => "custom".into(),
    };
    format!("{} ({e})", p.point.level)
}

/// The ids of the figures the report draws for `sc`: its `[[figure]]` tables', or one per
/// metric (`<scenario>-<metric>`) for a scenario without any.
pub(crate) fn figure_ids(sc: &Scenario) -> Vec<String> {
    figures_of(sc).into_iter().map(|f| f.id).collect()
}

fn figures_of(sc: &Scenario) -> Vec<FigureSpec> {
    if !sc.raw.figure.is_empty() {
        return sc.raw.figure.clone();
    }
    sc.raw
        .scenario
        .metrics
        .iter()
        .map(|m| FigureSpec {
            id: format!("{}-{}", sc.name(), m),
            title: format!(
                "{}: {m}",
                if sc.raw.scenario.title.is_empty() {
                    sc.name()
                } else {
                    &sc.raw.scenario.title
                }
            ),
            metric: m.clone(),
            y_label: m.clone(),
            scale: 1.0,
            log_y: false,
            error_bars: Default::default(),
            trace: None,
            points: Vec::new(),
            window_s: None,
        })
        .collect()
}

struct Fig {
    spec: FigureSpec,
    source: String,
    plot: Plot,
    table: String,
    png: bool,
}

fn build_figure(sc: &Scenario, prs: &[PointResult], f: &FigureSpec) -> Fig {
    // One curve per (link, topology, scheme[, TCP variant]) in sweep order; x = error level,
    // or the number of flows when the sweep has several and a single error level (seed 003).
    let mut order: Vec<String> = Vec::new();
    let mut by: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
    let mut ticks: BTreeMap<u32, String> = BTreeMap::new();
    let mut partial: BTreeMap<(String, u32), usize> = BTreeMap::new();
    let multi_link = prs
        .iter()
        .any(|p| p.point.link != prs[0].point.link || p.point.topology != prs[0].point.topology);
    let flows_x = prs.iter().all(|p| p.point.level == prs[0].point.level)
        && prs
            .iter()
            .any(|p| p.point.flows.is_some() && p.point.flows != prs[0].point.flows);
    for p in prs {
        let mut name = if multi_link {
            format!("{}/{}/{}", p.point.link, p.point.topology, p.point.scheme)
        } else {
            p.point.scheme.clone()
        };
        if let Some(v) = &p.point.variant {
            name = format!("{name}/{v}");
        }
        if let (Some(n), false) = (p.point.flows, flows_x) {
            name = format!("{name}/N{n}");
        }
        if !order.contains(&name) {
            order.push(name.clone());
        }
        let x = if flows_x {
            p.point.flows.unwrap_or(0)
        } else {
            p.point.level as u32
        };
        ticks.entry(x).or_insert_with(|| {
            if flows_x {
                x.to_string()
            } else {
                level_label(p)
            }
        });
        // A NaN half-width (one replication) draws no bar and prints no "±".
        let (m, sd) = p.summary.get(&f.metric).map_or((f64::NAN, f64::NAN), |s| {
            (s.mean * f.scale, f.error_bars.of(s) * f.scale.abs())
        });
        // Replications that measured nothing (NaN) are out of the mean: the table says how
        // many are in, as `msll run`'s table does (review, session 42: seed 002's L8 mean
        // covered 5 of 10 replications and read as a mean of 10).
        if let Some(s) = p.summary.get(&f.metric).filter(|s| s.n < p.runs.len()) {
            partial.insert((name.clone(), x), s.n);
        }
        by.entry(name).or_default().push((x as f64, m, sd));
    }
    let series: Vec<Series> = order
        .iter()
        .map(|n| Series {
            name: n.clone(),
            points: by[n].clone(),
        })
        .collect();
    let mut table = String::new();
    let _ = write!(table, "| scheme |");
    for t in ticks.values() {
        let _ = write!(table, " {t} |");
    }
    let _ = write!(table, "\n|---|");
    for _ in ticks.values() {
        let _ = write!(table, "---|");
    }
    table.push('\n');
    for s in &series {
        let _ = write!(table, "| {} |", s.name);
        for lv in ticks.keys() {
            let n = partial
                .get(&(s.name.clone(), *lv))
                .map_or(String::new(), |n| format!(" (n={n})"));
            match s.points.iter().find(|q| q.0 == *lv as f64) {
                Some(&(_, m, sd)) if m.is_finite() && sd.is_finite() => {
                    let _ = write!(table, " {} ± {}{n} |", sig(m), sig(sd));
                }
                Some(&(_, m, _)) if m.is_finite() => {
                    let _ = write!(table, " {}{n} |", sig(m));
                }
                _ => table.push_str(" - |"),
            }
        }
        table.push('\n');
    }
    let reps = crate::output::replications_label(prs);
    Fig {
        spec: f.clone(),
        source: format!(
            "{} ({}, {} replications, seed {})",
            sc.raw.scenario.source, sc.file, reps, sc.raw.scenario.seed
        ),
        plot: Plot {
            title: if f.title.is_empty() {
                f.id.clone()
            } else {
                f.title.clone()
            },
            x_label: if flows_x {
                format!(
                    "number of flows ({} {}, error level {})",
                    prs[0].point.link,
                    prs[0].point.topology,
                    level_label(&prs[0])
                )
            } else {
                format!(
                    "error level ({} {})",
                    prs[0].point.link, prs[0].point.topology
                )
            },
            y_label: if f.y_label.is_empty() {
                f.metric.clone()
            } else {
                f.y_label.clone()
            },
            x_ticks: ticks.iter().map(|(l, s)| (*l as f64, s.clone())).collect(),
            series,
            log_y: f.log_y,
            steps: false,
            x_range: None,
        },
        table,
        png: false,
    }
}

/// A trace figure (`crate::traces`): one step curve per point, and a table of what each
/// curve reached.
fn build_trace_figure(
    sc: &Scenario,
    curves: &[crate::traces::Curve],
    f: &FigureSpec,
    kind: crate::scenario::TraceKind,
) -> Fig {
    use crate::scenario::TraceKind;
    let (what, unit) = match kind {
        TraceKind::Cwnd => ("congestion window", "bytes"),
        TraceKind::Received => ("highest in-order packet received", "packet"),
    };
    let mut table = String::from(
        "| point | steps | min | max | longest flat stretch (s) |\n|---|---|---|---|---|\n",
    );
    for c in curves {
        if c.steps.is_empty() {
            // A window after the run's end, or a sender that never sent.
            let _ = writeln!(table, "| {} | 0 | - | - | - |", c.name);
            continue;
        }
        let (lo, hi) = c
            .steps
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), s| {
                (a.min(s.1), b.max(s.1))
            });
        let flat = c
            .steps
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .fold(0.0, f64::max);
        let _ = writeln!(
            table,
            "| {} | {} | {} | {} | {} |",
            c.name,
            c.steps.len(),
            sig(lo * f.scale),
            sig(hi * f.scale),
            sig(flat)
        );
    }
    Fig {
        spec: f.clone(),
        source: format!(
            "{} ({}, replication 0 (the first) of seed {}, traced: {what})",
            sc.raw.scenario.source, sc.file, sc.raw.scenario.seed
        ),
        plot: Plot {
            title: if f.title.is_empty() {
                f.id.clone()
            } else {
                f.title.clone()
            },
            x_label: "time (s)".into(),
            y_label: if f.y_label.is_empty() {
                format!("{what} ({unit})")
            } else {
                f.y_label.clone()
            },
            x_ticks: Vec::new(),
            series: curves
                .iter()
                .map(|c| Series {
                    name: c.name.clone(),
                    points: c
                        .steps
                        .iter()
                        .map(|&(t, v)| (t, v * f.scale, 0.0))
                        .collect(),
                })
                .collect(),
            log_y: false,
            steps: true,
            x_range: f.window_s.map(|[a, b]| (a, b)),
        },
        table,
        png: false,
    }
}

fn sig(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

pub(crate) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn md_table_to_html(t: &str) -> String {
    let mut h = String::from("<table>");
    for (i, line) in t.lines().enumerate() {
        if i == 1 {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let tag = if i == 0 { "th" } else { "td" };
        h.push_str("<tr>");
        for c in cells {
            let _ = write!(h, "<{tag}>{}</{tag}>", html_escape(c).replace("**", ""));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    h
}

pub fn write(dir: &Path, ctx: &Context) -> Result<()> {
    let figdir = dir.join("figures");
    std::fs::create_dir_all(&figdir).with_context(|| format!("creating {}", figdir.display()))?;
    let mut figs = Vec::new();
    for sc in ctx.scenarios {
        let Some((_, prs)) = ctx.results.get(sc.name()) else {
            continue;
        };
        if prs.is_empty() || prs.iter().all(|p| p.runs.is_empty()) {
            continue;
        }
        for f in figures_of(sc) {
            let mut fig = match f.trace {
                None => build_figure(sc, prs, &f),
                Some(kind) => match ctx.traces.get(&f.id) {
                    Some(curves) => build_trace_figure(sc, curves, &f, kind),
                    None => continue,
                },
            };
            fig.png = plot::render(&fig.plot, &figdir.join(&f.id))?;
            figs.push(fig);
        }
    }
    let (pass, fail, nr) = crate::claims::tally(ctx.verdicts);
    let mut md = String::new();
    // Timings compare only on one machine (`crate::machine`): the report names it.
    let machine = crate::machine::Machine::this();
    let _ = writeln!(md, "# msll reproduction report\n");
    let _ = writeln!(
        md,
        "msll {VERSION}, model revision {MODEL_REVISION}. {} scenarios, {} figures, {} simulation runs ({} executed in this invocation, {} missing). \
         Wall time of this invocation: {:.1} s on {}.{}{}\n",
        ctx.scenarios.len(),
        figs.len(),
        ctx.runs_total,
        ctx.runs_executed,
        ctx.missing,
        ctx.wall_s,
        machine,
        match (ctx.quick, ctx.reps) {
            (true, r) => format!(" **Quick mode**: {} replications, FTP files / 20, run lengths / 5 -- a first look, not a reproduction.", r.unwrap_or(3).max(1)),
            (false, Some(r)) => format!(" **{} replications per point** (`--reps`), not the scenarios' own.", r.max(1)),
            (false, None) => String::new(),
        },
        if ctx.selection.is_empty() { String::new() } else { format!(" Selection: {}.", ctx.selection.join(", ")) }
    );
    let total_cpu: f64 = ctx.cpu_s.values().map(|s| s.wall_s).sum();
    let cores = machine.cores;
    let _ = writeln!(
        md,
        "Simulation time of the whole selection (all runs, from the cache): {total_cpu:.1} CPU-seconds, i.e. about {:.1} s \
         of wall time on {cores} cores when run from scratch. Where the time goes is listed at the end.\n",
        total_cpu / cores as f64
    );
    let _ = writeln!(md, "## Claims: {pass} PASS, {fail} FAIL, {nr} NOT-RUN\n");
    let _ = writeln!(
        md,
        "| claim | source | statement | verdict | measured |\n|---|---|---|---|---|"
    );
    for v in ctx.verdicts {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            v.claim.id,
            v.claim.source,
            v.claim.text.replace('|', "/"),
            v.status.as_str(),
            v.measured.replace('|', "/")
        );
    }
    let fails: Vec<&Verdict> = ctx
        .verdicts
        .iter()
        .filter(|v| v.status == Status::Fail && !v.claim.note.is_empty())
        .collect();
    if !fails.is_empty() {
        let _ = writeln!(md, "\n### Notes on failing claims\n");
        for v in fails {
            let _ = writeln!(md, "- **{}**: {}", v.claim.id, v.claim.note);
        }
    }
    let _ = writeln!(md, "\n## Figures\n");
    for f in &figs {
        let _ = writeln!(md, "### {}\n", f.plot.title);
        if f.spec.trace.is_some() {
            let _ = writeln!(md, "Source: {}.\n", f.source);
        } else {
            let _ = writeln!(
                md,
                "Source: {}. Metric `{}` (x {}), mean {}.\n",
                f.source,
                f.spec.metric,
                f.spec.scale,
                f.spec.error_bars.short()
            );
        }
        let _ = writeln!(md, "![{}](figures/{}.svg)\n", f.spec.id, f.spec.id);
        let _ = writeln!(md, "{}", f.table);
    }
    // In both the Markdown and the HTML report.
    let time_intro =
        "CPU seconds of each scenario's runs (a run shared by several scenarios counts for \
         the first), and the simulator's speed on them, per CPU second: the numbers OMNeT++ prints \
         (events/s, simulated s/s, events per simulated s).";
    let mut time_table = String::from(
        "| scenario | CPU s | share | runs | events | events/s | simulated s/s | events/simulated s |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let mut by_cost: Vec<(&String, &crate::speed::Speed)> = ctx.cpu_s.iter().collect();
    by_cost.sort_by(|a, b| b.1.wall_s.total_cmp(&a.1.wall_s));
    for (name, s) in by_cost {
        let _ = writeln!(
            time_table,
            "| {name} | {:.1} | {:.1}% | {} | {} | {} | {} | {} |",
            s.wall_s,
            100.0 * s.wall_s / total_cpu.max(1e-9),
            s.runs,
            s.events,
            crate::speed::si(s.events_per_s()),
            crate::speed::si(s.sim_s_per_s()),
            crate::speed::si(s.events_per_sim_s()),
        );
    }
    let _ = writeln!(md, "## Where the time goes\n\n{time_intro}\n\n{time_table}");
    let _ = writeln!(
        md,
        "## Parameter choices\n\nEvery AMBIGUOUS item of the specification and the value msll uses is listed in \
         `docs/thesis-map.md` (copied below when present).\n"
    );
    let map = dir.join("../../docs/thesis-map.md");
    let map_text = std::fs::read_to_string(&map)
        .or_else(|_| std::fs::read_to_string("docs/thesis-map.md"))
        .unwrap_or_default();
    md.push_str(&map_text);
    std::fs::write(dir.join("README.md"), &md)?;

    let mut h = String::new();
    h.push_str("<!doctype html><html><head><meta charset=\"utf-8\"><title>msll reproduction report</title><style>body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #bbb;padding:2px 6px;font-size:13px}.PASS{background:#cfc}.FAIL{background:#fcc}.NOT-RUN{background:#eee}svg{max-width:100%;height:auto}</style></head><body>");
    let _ = write!(h, "<h1>msll reproduction report</h1><p>msll {VERSION}, model revision {MODEL_REVISION}: {} scenarios, {} figures, {} runs ({} executed now, {} missing), wall time {:.1} s.{}</p>",
        ctx.scenarios.len(), figs.len(), ctx.runs_total, ctx.runs_executed, ctx.missing, ctx.wall_s,
        if ctx.quick { " <b>Quick mode</b>: a first look, not a reproduction." } else { "" });
    let _ = write!(h, "<h2>Claims: {pass} PASS, {fail} FAIL, {nr} NOT-RUN</h2><table><tr><th>claim</th><th>source</th><th>statement</th><th>verdict</th><th>measured</th><th>note</th></tr>");
    for v in ctx.verdicts {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{s}\">{s}</td><td>{}</td><td>{}</td></tr>",
            html_escape(&v.claim.id),
            html_escape(&v.claim.source),
            html_escape(&v.claim.text),
            html_escape(&v.measured.replace("**", "")),
            html_escape(&v.claim.note),
            s = v.status.as_str()
        );
    }
    h.push_str("</table><h2>Figures</h2>");
    for f in &figs {
        let svg =
            std::fs::read_to_string(figdir.join(format!("{}.svg", f.spec.id))).unwrap_or_default();
        let svg = svg.trim_start_matches(|c| c != '<');
        let svg = svg
            .strip_prefix("<?xml")
            .map_or(svg, |r| r.split_once("?>").map_or(r, |x| x.1));
        let what = if f.spec.trace.is_some() {
            String::new()
        } else {
            format!(
                " Metric <code>{}</code>, mean {}.",
                f.spec.metric,
                html_escape(f.spec.error_bars.short())
            )
        };
        let _ = write!(
            h,
            "<h3 id=\"{}\">{}</h3><p>Source: {}.{what}</p>{}{}",
            f.spec.id,
            html_escape(&f.plot.title),
            html_escape(&f.source),
            svg,
            md_table_to_html(&f.table)
        );
    }
    let _ = write!(
        h,
        "<h2>Where the time goes</h2><p>{}</p>{}",
        html_escape(time_intro),
        md_table_to_html(&time_table)
    );
    let _ = write!(
        h,
        "<h2>Parameter choices</h2><pre>{}</pre></body></html>",
        html_escape(&map_text)
    );
    std::fs::write(dir.join("index.html"), h)?;
    Ok(())
}
