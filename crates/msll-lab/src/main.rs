//! `msll`: run scenarios, benchmark the simulator.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use msll_lab::{output, run_scenario, RunOptions, Scenario};

/// The simulator allocates and frees a packet buffer per segment; mimalloc's thread-local free
/// lists make that several times cheaper than glibc malloc (measured in docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

#[derive(Subcommand)]
enum Cmd {
    /// Run every point of a scenario file and print a summary.
    Run {
        scenario: PathBuf,
        /// Replications per point (default: the scenario's).
        #[arg(long)]
        reps: Option<u32>,
        /// Master seed (default: the scenario's).
        #[arg(long)]
        seed: Option<u64>,
        /// Directory for CSV/JSON results.
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// Worker threads (default: all cores). Results do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// Write an ns-2-like event trace of the first point's first replication.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Only the points whose label contains one of these (comma separated), e.g.
        /// `--point L4/snoop,L4/default`.
        #[arg(long, value_delimiter = ',')]
        point: Vec<String>,
    },
    /// Run the experiment catalogue of the seeds: every figure, plots, claims, report.
    Reproduce {
        /// Only these figure ids, scenario names or file stems (comma separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Replications per point (default: each scenario's, 30).
        #[arg(long)]
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
        #[arg(long)]
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
        #[arg(long)]
        reps: Option<u32>,
        #[arg(long)]
        quick: bool,
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
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
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// Also write the figures to this JSON file (a baseline for later runs).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Compare each case with a JSON file written earlier by `--out`: adds the baseline's
        /// wall time and the speed-up (baseline over now).
        #[arg(long)]
        baseline: Option<PathBuf>,
        /// Internal: run one case in this process and print JSON.
        #[arg(long, hide = true)]
        case: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(()) => ExitCode::SUCCESS,
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

fn real_main(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Run {
            scenario,
            reps,
            seed,
            out,
            format,
            threads,
            trace,
            point,
        } => {
            let mut sc = Scenario::load(&scenario)?;
            sc.retain_points(&point)?;
            let opts = RunOptions {
                reps,
                seed,
                threads,
                progress: std::io::stderr().is_terminal(),
                trace,
            };
            let results = run_scenario(&sc, &opts)?;
            output::check_metrics(&sc, &results)?;
            let seed = seed.unwrap_or(sc.raw.scenario.seed);
            if let Some(dir) = &out {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                let base = dir.join(sc.name());
                std::fs::write(
                    base.with_extension("csv"),
                    output::summary_csv(&sc, &results, seed),
                )?;
                std::fs::write(
                    dir.join(format!("{}.runs.csv", sc.name())),
                    output::runs_csv(&sc, &results, seed),
                )?;
                std::fs::write(
                    base.with_extension("json"),
                    serde_json::to_string_pretty(&output::json(&sc, &results, seed))?,
                )?;
            }
            match format {
                Format::Table => print!("{}", output::table(&sc, &results)),
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&output::json(&sc, &results, seed))?
                ),
                Format::Csv => print!("{}", output::summary_csv(&sc, &results, seed)),
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
        Cmd::List { scenarios } => {
            for sc in msll_lab::reproduce::catalogue(&scenarios)? {
                let figs: Vec<&str> = sc.raw.figure.iter().map(|f| f.id.as_str()).collect();
                println!(
                    "{:<28} {:>4} points  {:<40} {}",
                    sc.name(),
                    sc.points.len(),
                    sc.file,
                    figs.join(" ")
                );
            }
            Ok(())
        }
        Cmd::Bench {
            only,
            repeat,
            out,
            baseline,
            case,
        } => match case {
            Some(c) => msll_lab::bench::run_case(&c),
            None => msll_lab::bench::run(&only, repeat, out.as_deref(), baseline.as_deref()),
        },
    }
}
