//! `mslld`: run the tunnel daemon, query its stats, benchmark it, make a key.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use msll_proto::SchemeConfig;
use mslld::config::Config;
use mslld::daemon::{self, IpSide};
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "mslld",
    version,
    about = "multi-service link layer tunnel daemon"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum StatsFormat {
    Json,
    Prometheus,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the daemon (needs CAP_NET_ADMIN for the TUN device).
    Run {
        #[arg(long, short)]
        config: PathBuf,
        /// Log as JSON lines instead of text. Filter with RUST_LOG (default: info).
        #[arg(long)]
        log_json: bool,
    },
    /// Print a running daemon's counters (JSON, or Prometheus text exposition).
    Stats {
        /// The daemon's control socket (config key `control`).
        #[arg(long)]
        control: PathBuf,
        /// `prometheus`: the text exposition format, e.g. for node_exporter's textfile collector
        /// (`mslld stats --format prometheus > DIR/mslld.prom`).
        #[arg(long, value_enum, default_value = "json")]
        format: StatsFormat,
    },
    /// Set a service's scheduler rate (relative share) in a running daemon.
    Rate {
        #[arg(long)]
        control: PathBuf,
        #[arg(long)]
        service: u8,
        #[arg(long)]
        rate: f64,
    },
    /// Loopback throughput with encryption on and no loss (in-process, no TUN needed).
    Bench {
        /// Schemes to run: default, sr-m2 (or sr, sr-m1), rlp, rlp-oos, gbn, xor, rse (8:2) or
        /// rse<n>-<h> (Reed-Solomon, n data and h parity frames per block, e.g. rse20-10).
        #[arg(long, value_delimiter = ',', default_value = "default,sr-m2")]
        scheme: Vec<String>,
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        #[arg(long, default_value_t = 1400)]
        size: usize,
        /// Virtual link rate; the default is far above what a CPU core encrypts, so the figure
        /// is the unpaced cost. A Default service has no flow control: above the receiver's
        /// capacity the excess is lost in the kernel, so try e.g. --rate-mbps 1000 as well.
        #[arg(long, default_value_t = 100_000.0)]
        rate_mbps: f64,
    },
    /// Print a fresh random pre-shared key (64 hex digits).
    Keygen,
    /// Check a configuration file and print it as understood.
    Check {
        #[arg(long, short)]
        config: PathBuf,
    },
}

fn scheme_by_name(s: &str) -> anyhow::Result<SchemeConfig> {
    SchemeConfig::from_name(s).ok_or_else(|| {
        anyhow::anyhow!(
            "--scheme {s}: unknown scheme (schemes: {})",
            SchemeConfig::NAMES.join(", ")
        )
    })
}

fn init_logs(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        b.json().init();
    } else {
        b.init();
    }
}

fn run_daemon(cfg: Config) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let socket = tokio::net::UdpSocket::bind(cfg.bind)
            .await
            .with_context(|| format!("binding UDP {}", cfg.bind))?;
        let dev = daemon::open_tun(&cfg)?;
        let (control, _guard) = match &cfg.control_path() {
            Some(p) => {
                let (rx, g) = mslld::control::serve(p)?;
                (Some(rx), Some(g))
            }
            None => (None, None),
        };
        daemon::run(
            cfg,
            IpSide::Tun(Arc::new(dev)),
            socket,
            control,
            daemon::shutdown_signal(),
        )
        .await?;
        Ok(())
    })
}

fn main() -> ExitCode {
    match real_main(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stopped early (`mslld bench | head`) is not an error: stop quietly, as
        // Unix tools do (Rust ignores SIGPIPE, so the write fails with EPIPE instead).
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mslld: error: {e:#}");
            ExitCode::FAILURE
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
    let mut o = std::io::stdout();
    match cli.cmd {
        Cmd::Run { config, log_json } => {
            init_logs(log_json);
            let cfg = Config::from_file(&config)?;
            for w in cfg.warnings() {
                tracing::warn!("{w}");
            }
            run_daemon(cfg)
        }
        Cmd::Stats { control, format } => {
            let reply = mslld::control::query(&control)?;
            let v: serde_json::Value =
                serde_json::from_str(reply.trim()).context("daemon reply is not JSON")?;
            if let Some(e) = v.get("error") {
                anyhow::bail!("daemon refused: {e}");
            }
            match format {
                StatsFormat::Json => writeln!(o, "{}", serde_json::to_string_pretty(&v)?)?,
                StatsFormat::Prometheus => write!(o, "{}", mslld::prom::exposition(&v)?)?,
            }
            Ok(())
        }
        Cmd::Rate {
            control,
            service,
            rate,
        } => {
            let reply = mslld::control::request(&control, &format!("rate {service} {rate:e}"))?;
            let v: serde_json::Value =
                serde_json::from_str(reply.trim()).context("daemon reply is not JSON")?;
            if let Some(e) = v.get("error") {
                anyhow::bail!("daemon refused: {e}");
            }
            writeln!(o, "{v}")?;
            Ok(())
        }
        Cmd::Bench {
            scheme,
            seconds,
            size,
            rate_mbps,
        } => {
            // Every argument is checked before the CSV header is printed.
            let schemes = scheme
                .iter()
                .map(|s| scheme_by_name(s).map(|c| (s, c)))
                .collect::<anyhow::Result<Vec<_>>>()?;
            mslld::bench::check_params(seconds, size, rate_mbps)?;
            init_logs(false);
            writeln!(
                o,
                "scheme,packet_bytes,seconds,packets,gbit_per_s,cpu_s_per_gbit,cpu_cores"
            )?;
            for (s, cfg) in schemes {
                let r = mslld::bench::run(cfg, seconds, size, rate_mbps)?;
                writeln!(
                    o,
                    "{},{},{:.2},{},{:.3},{:.3},{:.2}",
                    s,
                    r.packet_bytes,
                    r.seconds,
                    r.packets,
                    r.gbit_per_s,
                    r.cpu_s_per_gbit,
                    r.cpu_cores
                )?;
            }
            Ok(())
        }
        Cmd::Keygen => {
            let k: [u8; 32] = mslld::os_random()?;
            writeln!(o, "{}", mslld::wire::Psk(k).to_hex())?;
            Ok(())
        }
        Cmd::Check { config } => {
            let mut cfg = Config::from_file(&config)?;
            for w in cfg.warnings() {
                eprintln!("warning: {w}");
            }
            // Never echo the secret.
            if cfg.key.is_some() {
                cfg.key = Some("<redacted>".into());
            }
            write!(o, "{}", cfg.to_toml_explicit()?)?;
            Ok(())
        }
    }
}
