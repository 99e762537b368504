//! `msll`: run scenarios, benchmark the simulator.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use msll_lab::{output, run_scenario, RunOptions, Scenario};

/// The simulator allocates and frees a packet buffer per segment; mimalloc's thread-local free
/// lists make that several times cheaper than glibc malloc (measured in docs/performance.md).
#[global_allocator]
static GLOBAL: MiMallocPlain = MiMallocPlain;

/// mimalloc, asked for plain blocks when the alignment is one `mi_malloc` always gives.
///
/// The `mimalloc` crate's allocator calls `mi_malloc_aligned` for every request. For blocks over
/// 1 KiB (every 1000-byte segment the simulator builds) that takes mimalloc's generic aligned path,
/// ~50 instructions where `mi_malloc` takes ~20 (callgrind, issue 8, session 15). On x86-64
/// mimalloc aligns every block of more than 8 bytes to 16 (`MI_MAX_ALIGN_SIZE`: its size classes
/// are whole double words and a page's first block is 16-aligned) and smaller ones to 8, so the
/// plain functions are exact when `align <= 16 && align <= size`, the test std's `System`
/// allocator makes for glibc. A unit test checks the alignment over sizes and alignments.
struct MiMallocPlain;

impl MiMallocPlain {
    #[inline(always)]
    fn plain(layout: std::alloc::Layout) -> bool {
        layout.align() <= 16 && layout.align() <= layout.size()
    }
}

// SAFETY: every block comes from mimalloc and goes back to it (`mi_free` frees blocks of either
// kind); the plain functions are used only where they guarantee the requested alignment (above).
unsafe impl std::alloc::GlobalAlloc for MiMallocPlain {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        if Self::plain(layout) {
            mi::mi_malloc(layout.size()).cast()
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        if Self::plain(layout) {
            mi::mi_zalloc(layout.size()).cast()
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        libmimalloc_sys::mi_free(ptr.cast());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys as mi;
        // The new block must have the alignment for `new_size` too.
        if layout.align() <= 16 && layout.align() <= new_size {
            mi::mi_realloc(ptr.cast(), new_size).cast()
        } else {
            mi::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}

#[derive(Parser)]
#[command(
    name = "msll",
    version,
    about = "Multi-service link layer: simulate, reproduce, tunnel"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
    Csv,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum FitModel {
    Gilbert,
    GilbertElliott,
    Both,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run every point of a scenario file and print a summary.
    Run {
        scenario: PathBuf,
        /// Replications per point (default: the scenario's).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=msll_lab::scenario::MAX_REPLICATIONS as i64))]
        reps: Option<u32>,
        /// Master seed (default: the scenario's).
        #[arg(long)]
        seed: Option<u64>,
        /// Directory for CSV/JSON results.
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// What the table prints after each mean's "±" (CSV and JSON carry both, as `sd` and
        /// `ci95`).
        #[arg(long, value_enum, default_value = "sd")]
        interval: output::Interval,
        /// Worker threads (default: all cores). Results do not depend on it.
        #[arg(long, value_parser = at_least_one)]
        threads: Option<usize>,
        /// Write an ns-2-like event trace of the first point's first replication.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Write the TCP traces of the first point's first replication as CSV: each FTP app's
        /// congestion window and highest in-order packet received over time (seed 002 Figs
        /// 4.2-4.6).
        #[arg(long)]
        tcp_trace: Option<PathBuf>,
        /// Only the points whose label contains one of these (comma separated), e.g.
        /// `--point L4/snoop,L4/default`.
        #[arg(long, value_delimiter = ',')]
        point: Vec<String>,
        /// Print the metrics the points report (names for `scenario.metrics` and figures;
        /// docs/metrics.md defines them) and exit without running.
        #[arg(long)]
        list_metrics: bool,
    },
    /// Run the experiment catalogue of the seeds: every figure, plots, claims, report.
    Reproduce {
        /// Only these figure ids, scenario names or file stems (comma separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Replications per point (default: each scenario's, 30).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=msll_lab::scenario::MAX_REPLICATIONS as i64))]
        reps: Option<u32>,
        /// A first look: 3 replications, FTP files / 20, run lengths / 5.
        #[arg(long)]
        quick: bool,
        /// Output directory: cache/, data/, report/.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Run only the deterministic shard i of n (e.g. 0/4); combine with `msll merge`.
        #[arg(long)]
        shard: Option<String>,
        /// Worker threads (default: all cores). Results do not depend on it.
        #[arg(long, value_parser = at_least_one)]
        threads: Option<usize>,
        /// Scenario catalogue directory.
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
    },
    /// Combine the caches of shard runs and render the report.
    Merge {
        /// Output directories of the shard runs.
        #[arg(required = true)]
        from: Vec<PathBuf>,
        #[arg(long, default_value = "out")]
        out: PathBuf,
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=msll_lab::scenario::MAX_REPLICATIONS as i64))]
        reps: Option<u32>,
        #[arg(long)]
        quick: bool,
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
    },
    /// Fit a Gilbert-Elliott channel to a recorded per-frame loss trace (0/1 per frame, the
    /// `trace` error model's `frames` format) and print the `error = { ... }` line for it.
    Fit {
        trace: PathBuf,
        /// `gilbert`: closed form, the bad state always loses and the good one never;
        /// `gilbert-elliott`: all four parameters by expectation-maximisation; `both`.
        #[arg(long, value_enum, default_value = "both")]
        model: FitModel,
    },
    /// List the scenario catalogue and its figure ids.
    List {
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
    },
    /// Benchmark the simulator on fixed scenarios and print rates.
    Bench {
        /// Only these cases (a, a10, b-sr, b-snoop, c, d, d-sr, e, f, scaling).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Runs per case; the best is reported.
        #[arg(long, default_value_t = 3, value_parser = at_least_one)]
        repeat: usize,
        /// Also write the figures to this JSON file (a baseline for later runs).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Compare each case with a JSON file written earlier by `--out`: adds the baseline's
        /// wall time and the speed-up (baseline over now).
        #[arg(long)]
        baseline: Option<PathBuf>,
        /// Compare this binary with another msll build (e.g. one from before a change): the cases
        /// run in alternating pairs; prints the median ratio, a sign test, and whether the two
        /// simulated the same results.
        #[arg(long, value_name = "MSLL_BINARY", conflicts_with_all = ["out", "baseline"])]
        against: Option<PathBuf>,
        /// Pairs per case with --against.
        #[arg(long, default_value_t = 15, value_parser = at_least_one)]
        pairs: usize,
        /// Internal: run one case in this process and print JSON.
        #[arg(long, hide = true)]
        case: Option<String>,
    },
}

/// A count that must be positive (threads, repeats, pairs): 0 is refused as clap refuses any
/// other bad value, naming the option, rather than quietly taken as 1 or as "all cores".
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stopped early (`msll list | head`) is not an error: stop quietly, as
        // Unix tools do (Rust ignores SIGPIPE, so the write fails with EPIPE instead).
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("msll: error: {e:#}");
            if e.downcast_ref::<msll_lab::ScenarioError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Whether the error is a write to a closed pipe, anywhere in its chain.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn real_main(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Run {
            scenario,
            reps,
            seed,
            out,
            format,
            interval,
            threads,
            trace,
            tcp_trace,
            point,
            list_metrics,
        } => {
            let mut sc = Scenario::load(&scenario)?;
            sc.retain_points(&point)?;
            if list_metrics {
                write!(std::io::stdout().lock(), "{}", output::metric_listing(&sc)?)?;
                return Ok(());
            }
            if let Some(path) = &tcp_trace {
                let first = sc.points.first().context("no point to trace")?;
                let text =
                    msll_lab::traces::run_csv(&sc, first, seed.unwrap_or(sc.raw.scenario.seed), 0)?;
                std::fs::write(path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            let opts = RunOptions {
                reps,
                seed,
                threads,
                progress: std::io::stderr().is_terminal(),
                trace,
                speed: Some(Default::default()),
            };
            output::check_before_running(&sc)?;
            let results = run_scenario(&sc, &opts)?;
            let speed = opts.speed.as_ref().map(|m| m.now());
            output::check_metrics(&sc, &results)?;
            for w in output::incomplete_warnings(&results) {
                eprintln!("{w}");
            }
            let seed = seed.unwrap_or(sc.raw.scenario.seed);
            if let Some(dir) = &out {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                // Suffixes are appended, not swapped in: a name may hold '.' ("fig5.4"), which
                // `with_extension` would cut ("fig5.csv", shared with "fig5.5").
                let write = |suffix: &str, text: String| {
                    let path = dir.join(format!("{}.{suffix}", sc.name()));
                    std::fs::write(&path, text)
                        .with_context(|| format!("writing {}", path.display()))
                };
                write("csv", output::summary_csv(&sc, &results, seed))?;
                write("runs.csv", output::runs_csv(&sc, &results, seed))?;
                write(
                    "json",
                    serde_json::to_string_pretty(&output::json(&sc, &results, seed))?,
                )?;
            }
            let mut o = std::io::stdout().lock();
            match format {
                Format::Table => write!(o, "{}", output::table(&sc, &results, seed, interval))?,
                Format::Json => writeln!(
                    o,
                    "{}",
                    serde_json::to_string_pretty(&output::json(&sc, &results, seed))?
                )?,
                Format::Csv => write!(o, "{}", output::summary_csv(&sc, &results, seed))?,
            }
            if let Some(s) = speed {
                // The three numbers of OMNeT++'s Cmdenv (peers.md §3.3), on stderr so that the
                // table, CSV or JSON on stdout stays clean.
                eprintln!(
                    "speed: {s} ({} runs, {} events, {} simulated s in {:.2} s)",
                    s.runs,
                    s.events,
                    msll_lab::speed::si(s.sim_s),
                    s.wall_s
                );
            }
            Ok(())
        }
        Cmd::Reproduce {
            only,
            reps,
            quick,
            out,
            shard,
            threads,
            scenarios,
        } => {
            let shard = shard
                .as_deref()
                .map(msll_lab::reproduce::parse_shard)
                .transpose()?;
            msll_lab::reproduce::reproduce(&msll_lab::reproduce::ReproduceOptions {
                scenarios_dir: scenarios,
                only,
                reps,
                quick,
                out,
                shard,
                threads,
                progress: std::io::stderr().is_terminal(),
                no_run: false,
            })
        }
        Cmd::Merge {
            from,
            out,
            only,
            reps,
            quick,
            scenarios,
        } => msll_lab::reproduce::merge(
            &from,
            &msll_lab::reproduce::ReproduceOptions {
                scenarios_dir: scenarios,
                only,
                reps,
                quick,
                out,
                shard: None,
                threads: None,
                progress: false,
                no_run: true,
            },
        ),
        Cmd::Fit { trace, model } => {
            let file = trace.display().to_string();
            let bad = |msg: String| msll_lab::ScenarioError {
                file: file.clone(),
                msg,
            };
            let text = std::fs::read_to_string(&trace)
                .map_err(|e| bad(format!("cannot read the trace: {e}")))?;
            let frames = msll_lab::fit::parse_frames(&text).map_err(bad)?;
            let st = msll_lab::fit::TraceStats::of(&frames);
            let mut o = std::io::stdout().lock();
            writeln!(
                o,
                "# {file}: {} frames, {} lost ({:.4} %), {} loss bursts of {:.2} frames on average",
                st.frames,
                st.lost,
                100.0 * st.loss(),
                st.bursts,
                st.mean_burst()
            )?;
            let Some(g) = msll_lab::fit::gilbert(&frames) else {
                let p = if st.lost == 0 { 0 } else { 1 };
                writeln!(o, "# the trace never changes state: a constant channel")?;
                writeln!(o, "error = {{ model = \"bernoulli\", p = {p} }}")?;
                return Ok(());
            };
            if model != FitModel::GilbertElliott {
                writeln!(
                    o,
                    "# Gilbert (closed form): long-run loss {:.4} %",
                    100.0 * g.loss()
                )?;
                writeln!(o, "{g}")?;
            }
            if model != FitModel::Gilbert {
                let f = msll_lab::fit::gilbert_elliott(&frames).expect("the trace changes state");
                writeln!(
                    o,
                    "# Gilbert-Elliott (Baum-Welch, {} iterations, log-likelihood {:.3}): long-run loss {:.4} %",
                    f.iterations,
                    f.log_likelihood,
                    100.0 * f.ge.loss()
                )?;
                writeln!(o, "{}", f.ge)?;
            }
            Ok(())
        }
        Cmd::List { scenarios } => {
            let mut o = std::io::stdout().lock();
            for sc in msll_lab::reproduce::catalogue(&scenarios)? {
                let figs: Vec<&str> = sc.raw.figure.iter().map(|f| f.id.as_str()).collect();
                writeln!(
                    o,
                    "{:<28} {:>4} points  {:<40} {}",
                    sc.name(),
                    sc.points.len(),
                    sc.file,
                    figs.join(" ")
                )?;
            }
            Ok(())
        }
        Cmd::Bench {
            only,
            repeat,
            out,
            baseline,
            against,
            pairs,
            case,
        } => match (case, against) {
            (Some(c), _) => msll_lab::bench::run_case(&c),
            (None, Some(other)) => {
                msll_lab::bench::check_only(&only, false)?;
                msll_lab::bench::against(&only, pairs, &other)
            }
            (None, None) => {
                msll_lab::bench::check_only(&only, true)?;
                msll_lab::bench::run(&only, repeat, out.as_deref(), baseline.as_deref())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::MiMallocPlain;
    use std::alloc::{GlobalAlloc, Layout};

    /// Every block the allocator returns has its layout's alignment, through alloc, alloc_zeroed
    /// and realloc (grown and shrunk), over sizes around mimalloc's small, medium and large size
    /// classes; zeroed blocks are zero and realloc keeps the contents.
    #[test]
    fn blocks_have_the_requested_alignment_and_contents() {
        let a = MiMallocPlain;
        let sizes = [
            1usize,
            3,
            7,
            8,
            9,
            15,
            16,
            17,
            24,
            31,
            40,
            56,
            64,
            72,
            100,
            1000,
            1016,
            1024,
            1056,
            4000,
            70_000,
            300_000,
            5 << 20,
        ];
        for &align in &[1usize, 2, 4, 8, 16, 32, 64, 4096] {
            for &size in &sizes {
                let l = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes; every block is freed with its layout.
                unsafe {
                    let mut held = Vec::new();
                    for _ in 0..8 {
                        let p = a.alloc(l);
                        assert!(!p.is_null());
                        assert_eq!(p as usize % align, 0, "alloc size {size} align {align}");
                        p.write_bytes(0xa5, size);
                        held.push(p);
                    }
                    let z = a.alloc_zeroed(l);
                    assert_eq!(
                        z as usize % align,
                        0,
                        "alloc_zeroed size {size} align {align}"
                    );
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    a.dealloc(z, l);
                    for (i, p) in held.into_iter().enumerate() {
                        let new = if i % 2 == 0 {
                            size * 3 + 5
                        } else {
                            size.div_ceil(2)
                        };
                        let q = a.realloc(p, l, new);
                        assert_eq!(q as usize % align, 0, "realloc {size}->{new} align {align}");
                        let kept = size.min(new);
                        assert!(std::slice::from_raw_parts(q, kept)
                            .iter()
                            .all(|&b| b == 0xa5));
                        a.dealloc(q, Layout::from_size_align(new, align).unwrap());
                    }
                }
            }
        }
    }
}
