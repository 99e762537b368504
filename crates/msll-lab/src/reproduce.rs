//! `msll reproduce`: the experiment catalogue of the seeds, end to end.
//!
//! ```text
//!  scenarios/**/*.toml --select (--only)--> jobs (scenario x point x replication)
//!      --shard i/n--> run the missing ones (rayon, progress+ETA) --> cache/<key[..2]>/<key>.json
//!      --> data/*.csv|json --> report/figures/*.svg|png --> claims --> report/{index.html,README.md}
//! ```
//!
//! The cache key hashes the run: its resolved configuration, the contents of the files it reads
//! (error traces), the seed, the replication, the msll version, a model revision and the quick flag,
//! so a rerun skips finished replications, figures that publish the same run share it, and any
//! change reruns exactly what it affects. `--shard i/n` runs the deterministic subset
//! `job index % n == i` (a Slurm array or Kubernetes indexed job runs one shard each); `msll merge`
//! unions shard caches and renders.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant as WallClock;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use msll_sim::metrics::{summarize, RunResult};
use msll_sim::{AppSpec, Simulation};
use rayon::prelude::*;

use crate::output::{self, VERSION};
use crate::runner::PointResult;
use crate::scenario::{Point, Scenario};
use crate::speed::{Speed, Speedometer};
use crate::{claims, report};

#[derive(Debug, Clone)]
pub struct ReproduceOptions {
    pub scenarios_dir: PathBuf,
    pub only: Vec<String>,
    pub reps: Option<u32>,
    pub quick: bool,
    pub out: PathBuf,
    pub shard: Option<(usize, usize)>,
    pub threads: Option<usize>,
    pub progress: bool,
    /// Render from the cache only; never run a simulation.
    pub no_run: bool,
}

/// Every scenario file under `dir`, sorted by path.
pub fn catalogue(dir: &Path) -> Result<Vec<Scenario>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d)
            .with_context(|| format!("reading scenario directory {}", d.display()))?;
        for e in rd {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "toml")
                && p.file_name().is_some_and(|n| n != "claims.toml")
            {
                files.push(p);
            }
        }
    }
    files.sort();
    // An empty catalogue (a wrong `--scenarios` directory, scenario files named otherwise) would
    // "reproduce" nothing and succeed.
    if files.is_empty() {
        bail!(
            "{}: no scenario files (*.toml other than claims.toml) in this directory or below",
            dir.display()
        );
    }
    let scenarios: Vec<Scenario> = files
        .iter()
        .map(|f| Scenario::load(f).map_err(anyhow::Error::new))
        .collect::<Result<_>>()?;
    // Results and figures are keyed by scenario name and figure id: two files sharing one would
    // show one file's data under the other's name.
    let mut names = std::collections::BTreeMap::new();
    let mut ids = std::collections::BTreeMap::new();
    for sc in &scenarios {
        if let Some(other) = names.insert(sc.name().to_string(), sc.file.clone()) {
            return Err(input_error(
                &sc.file,
                format!(
                    "scenario.name = \"{}\" is already the name of {other}",
                    sc.name()
                ),
            ));
        }
        // The report's figures, the automatic ones (`<scenario>-<metric>`) included: two of one
        // id would write one `figures/<id>.svg` (review, session 47).
        for id in crate::report::figure_ids(sc) {
            if let Some(other) = ids.insert(id.clone(), sc.file.clone()) {
                return Err(input_error(
                    &sc.file,
                    format!("figure id = \"{id}\" is already a figure of {other}"),
                ));
            }
        }
    }
    // Data files are NAME.csv and NAME.runs.csv: scenario "a.runs" would write over the runs of
    // scenario "a" (review, session 42).
    for (n, file) in &names {
        if let Some(base) = n.strip_suffix(".runs") {
            if let Some(other) = names.get(base) {
                return Err(input_error(
                    file,
                    format!("scenario.name = \"{n}\": its data file {n}.csv is that of the runs of \"{base}\" ({other})"),
                ));
            }
        }
    }
    Ok(scenarios)
}

/// A problem of the catalogue's files: a [`crate::ScenarioError`], so that the command exits
/// with status 2 as for any other bad input.
fn input_error(file: &str, msg: String) -> anyhow::Error {
    crate::ScenarioError {
        file: file.to_string(),
        msg,
    }
    .into()
}

fn stem(sc: &Scenario) -> String {
    Path::new(&sc.file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Does `sel` name this scenario (its name, file stem, or one of its figure ids)?
fn selected(sc: &Scenario, only: &[String]) -> bool {
    only.is_empty()
        || only
            .iter()
            .any(|o| o == sc.name() || *o == stem(sc) || sc.raw.figure.iter().any(|f| f.id == *o))
}

fn fnv64(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

struct Job {
    sc: usize,
    point: usize,
    rep: u32,
    key: String,
}

/// Shorten runs for `--quick`: a first look, not a reproduction.
fn quicken(p: &mut Point) {
    let c = &mut p.config;
    let ftp = c.apps.iter().any(AppSpec::ends_run);
    for a in &mut c.apps {
        if let AppSpec::Ftp { bytes, tcp, .. } = a {
            *bytes = (*bytes / 20).max(200 * tcp.segment_size as u64);
        }
    }
    let full = c.duration_s;
    if !ftp {
        c.duration_s = (c.duration_s / 5.0).max(60.0);
    } else if c.duration_s < 1.0e6 {
        // A transfer cut by the scenario's own duration (seed 003's 60 s flows of a file too
        // large to finish) would not be shortened by the smaller file: shorten the run instead.
        c.duration_s = (c.duration_s / 5.0).max(12.0);
    }
    // An app starting (or a video measuring from) past the shortened end would leave an empty
    // window and NaN results without a word (the loader checks them against the full run only;
    // review, session 45): such times shrink with the run. None of the catalogue's points needs
    // it; times that still fit are kept, so quick runs stay what they were.
    if full.is_nan() || full <= 0.0 {
        return;
    }
    let scale = c.duration_s / full;
    let end = c.duration_s;
    for a in &mut c.apps {
        match a {
            AppSpec::Ftp { start_s, .. }
            | AppSpec::Www { start_s, .. }
            | AppSpec::Conference { start_s, .. } => {
                if *start_s >= end {
                    *start_s *= scale;
                }
            }
            // A video's times move together, so that its flows still start before the window
            // opens and all of them inside the run.
            AppSpec::Video {
                start_s,
                start_spread_s,
                warmup_s,
                ..
            } => {
                if *start_s + *start_spread_s >= end || *warmup_s >= end {
                    *start_s *= scale;
                    *start_spread_s *= scale;
                    *warmup_s *= scale;
                }
            }
        }
    }
}

/// Bumped whenever a model default changes results without changing a run's resolved
/// configuration (e.g. a default timer rule), so an existing cache is not reused for it.
/// `tests/golden.rs` holds the model to it: a run whose configuration is unchanged but whose
/// results changed fails the test until this is bumped.
/// 2: RLP NAK timer allows 8 frames of sender queueing (AMB-4).
/// 3: GBN/SR retransmission timeout gets the same allowance ("the same values", L777).
/// 4: only the engine's counters: `sim.events` no longer counts skipped wake-ups the queue now
///    keeps out of the heap, and `sim.end_s` of a run capped by its duration is that duration
///    (it was its last event's instant). Every model metric is unchanged.
/// 5: a time that was not measured is NaN, not 0: conferencing delays when nothing was
///    received, WWW transaction and object times when none completed; summaries leave NaN runs
///    out of the mean and of `n`.
/// 6: FTP runs report seed 003's model inputs, Eq. (3) and Eq. (2) (`ftp.rtt_mean_s`,
///    `ftp.rto_mean_s`, `ftp.loss_event_rate`, `ftp.mathis_bps`, `ftp.mathis_ratio`,
///    `ftp.tfrc_bps`, `ftp.tfrc_ratio`); every earlier metric is unchanged, but cached results
///    lack the new ones.
/// 7: seed 002's schemes after review (session 28): best-effort HDLC keeps T1 running while it
///    waits for its SABME's answer, a reset responder drops its own pending SABME, and status-RLP
///    counts an unreported frame as sent after 5 status periods, not 1. Only runs of the new
///    `hdlc` and `status-rlp` schemes change; every earlier scheme's results are identical.
/// 8: Snoop's local retransmissions hold IP pacing back for their link time, as ns-2's Snoop
///    sends them into the interface queue (`Service::frames_share_ip_pacing`, session 29); they
///    had waited below IP in an unbounded FIFO. Every Snoop run changes; no other scheme's.
/// 9: seed 003's video metrics after review (session 29): retransmission counts cover the
///    measurement window only, Westwood+'s RTT_min ignores the SYN's round trip, and an
///    application-limited sender never fast-retransmits data not yet written. Only the video
///    and Westwood+ runs of session 29 change.
/// 10: Westwood+'s RTT_min takes the SYN's sample again (leaving it out cost 12 % on an
///    error-free link); only Westwood+ and TCP-Real runs (whose epochs use the RTT) change.
/// 11: new metrics, no behaviour change: status-RLP runs report `ll.delay_s` and
///    `ll.delay_all_s` (seed 002 Figs 4.9, 5.3), FTP with `e2e_delay` `ftp.e2e_delay_s` (Fig.
///    4.8); cached runs without them must not be reused.
/// 12: with a FIFO random link delay, a packet lost on the link no longer holds later packets
///    back (seed 002's ch. 5 scenarios, whose Internet drops packets while congested).
/// 13: `ftp.max_stall_s` also counts the stretch before the first in-order delivery and, for an
///    unfinished transfer, after the last (seed 002 claim C7; session 31's review).
/// 14: RLP takes a frame 128 ahead of the highest number seen (after a run of 127 losses) as
///    new, not as a duplicate (session 34's review); RLP and RLP/OOS runs may change.
/// 15: conferencing loss in runs that end without a drain (a file transfer completes, or the
///     cap) leaves out the last `conf_end_guard_s` (5 s) of sends (AMB-10); the UDP sink drops
///     packets whose IPv4 header checksum or instrumentation check word fails (an XOR rebuild
///     from an aliased block);
///     `video.local_rtx_per_flow` counts the window's retransmissions only (session 36 review).
/// 16: the UDP sink also checks a nonlinear check word of sequence number and send time: the
///     IPv4 header checksum let most XOR rebuilds from aliased blocks through (one in the
///     catalogue: seed 004 Fig. 5.10/5.11, PCS/WAN2 L4 XOR/Ad, replication 9).
/// 17: status RLP and HDLC tell a late transmit report (of a frame taken as sent after going
///     unreported for five status periods or T1) from the report of the next frame of the same
///     identity, a status or RR (`LateReports`, session 39); before, they handed a further frame
///     over with that one still waiting. Runs change where a frame of theirs waits past the
///     fallback (a long MAC access delay, a low scheduler share, a slow link): in the catalogue
///     one point of seed 002 ch. 4's MAC sensitivity, status RLP non-sequencing at L0, < 0.1 %.
///     And a reported queue drop restarts the quiet period after which GBN, SR and RLP take
///     their unreported copies for dropped (`HandOffLog::discard`): runs whose bounded queues
///     drop frames of these schemes may change (none in the catalogue).
/// 18: TCP-Real's hold and gamma cut adjust the window in congestion avoidance only (seed 003
///     sec. 3.5; session 40 review): a slow start could be frozen or cut before. TCP-Real runs
///     change. Also (no catalogue run changes): a video run that drains past its window keeps
///     its metrics to the window.
/// 19: a run without a drain (ended by a file transfer or its cap) leaves the conferencing
///     packets sent in its last `conf_end_guard_s` out of the delay statistics too, as out of
///     the loss since revision 15 (`UdpSink::hold_back`; session 41): the delays counted them.
///     Conferencing delays of seed 001 Figs. 13-20 and seed 004 ch. 7-8 change; one delivered
///     packet gives a NaN delay SD (no spread measured), not 0.
/// 20: Snoop takes only positive RTT samples (ns-2's `snoop_rtt`; session 41 review): an ACK
///     that frees a packet at the instant it was (re)sent no longer pulls the estimate to 0.
///     14 HSCSD Snoop points of seeds 000/001 change. Also (no catalogue run changes): a full
///     cache counts the dup ACKs to hide round ns-2's ring; a SYN resets a connection's state;
///     RSTs and IP fragments are passed on untouched.
/// 21: `video.segments` counts the window's segments, as `video.sent` its packets (session 41;
///     it counted from the start), and every conferencing run reports `conf.malformed`, the
///     packets its sink refused. No other metric changes.
/// 22: DropTail holds at most `queue_limit - 1` waiting packets behind the one on the link,
///     as ns-2's (ns2-semantics.md sec. 5.1; session 41 review, checked against ns-2.35: a
///     CBR at twice the link rate, limit 3, spreads delays over 1.95 frame times); it held
///     `queue_limit`. Every run with queue drops changes (seed 003's 30-packet queues, the
///     congested multi-service and WWW runs); `queue_limit` must now be at least 2.
/// 23: HDLC original reset: the initiator discards I frames while it waits for its UA (the
///     responder's new numbering, its UA lost; session 42's review): they were taken by the old
///     V(R), delivered, and then counted among the frames the responder's next reset gave up.
///     Seed 002 ch. 5's MDLP non-sequencing with N2 changes at PER 30-60 % (8 points of the
///     golden quick check; over the full catalogue up to -27 % in throughput, no verdict). Also (no catalogue run
///     changes): datagrams the simulation fragments get IP identifications from one counter
///     (two flows between one host pair completed each other's datagrams); XOR/Ad's and
///     RSE/Ad's idle timer stops when a data frame arrives from IP (L998); the RSE receiver
///     remembers what the last 64 blocks delivered and tells an outage by the gap before it;
///     HDLC's backlog cap counts only packets beyond the window's room.
/// 24: seconds and milliseconds are the nearest double of the integer nanoseconds (a division
///     by 1e9, not a product with 1e-9: 60 s read 60.00000000000001; session 43's review). Every
///     metric computed from float seconds moves in its last digits (`sim.end_s`, `*.time_s`,
///     throughputs, delays), and TCP's float RTT arithmetic can fall the other way at an exact
///     tie (one Vegas cross-check run now follows ns-2 to its end). Also: `ip.reassembly_expired`
///     counts the buffers whose timeout passed with no later fragment to drop them; RLP's
///     `ll.give_ups` no longer counts a frame delivered after its give-up (RLP/OOS, AMB-7).
///     Full catalogue: seed 003's Vegas, Westwood+ and TCP-Real runs move (Reno's do not), and
///     five near-tie claims flip (docs/claims.md); elsewhere only last digits, `ll.give_ups`
///     (RLP) and `ip.reassembly_expired` (seed 002's MDLP) change.
/// 25: the MSLL endpoint reports every frame it transmits or drops, so GBN, SR and RLP no longer
///     take a frame that waited in the scheduler longer than their retransmission (NAK) timeout
///     for dropped, and status RLP and HDLC no longer take a frame unreported for 5 periods / T1
///     for sent (`Service::set_drops_reported`; review, session 44: behind a backlogged service
///     of a 200 times larger share SR sent a frame twice before any acknowledgement). In the
///     catalogue the fallback fired rarely (go-back-N bursts, long MAC delays): 171 of the golden
///     check's points move, e.g. seed 000 Fig. 3's GBN at L2-L4 by 0.01-0.06 %.
/// 26: TCP-Real's gamma cut sets ssthresh to the cut window (it stays in congestion avoidance;
///     slow start used to give the cut back within a few ACKs), and after any cut of its own (a
///     gamma cut, a congestion halving, a timeout) it measures its receiving rate afresh instead
///     of reading the drop it caused as congestion (`RateCtl::rebase`; review, session 45).
///     Only TCP-Real runs change (seed 003). The same session changed results no catalogue run
///     reaches: conferencing with a drain shorter than `conf_end_guard_s`, a zero Vegas base
///     RTT (zero-delay links), a 2.35 sink packet over 2^20 packets and the window ahead.
/// 27: HDLC with N2 (seed 002): a UA arriving after the reset completed (it answers a second
///     SABME T1 sent while the first UA was on its way) restarts the initiator's receiver, as
///     the peer restarted its numbers (original reset), and a SABME T1 asked for is not sent
///     after the answer came (both: review, session 46). The video app counts a delivery at the
///     window's last instant in goodput as it does in RTPI. The classifier reads no ports from
///     any IPv4 fragment (the first one's went to a port rule, the rest elsewhere). HDLC fills
///     a queued RR's N(R) in when it leaves, and drops a queued REJ or SREJ whose frame arrived
///     meanwhile (it sent the peer back over frames already received). The golden check's seed
///     002 ch. 4 MAC points of MDLP (L1-L7) move: their frames wait for the medium.
/// 28: results no catalogue run reaches (review, session 47): with `pacing = false` and no
///     `msll.queue_limit` the wireless endpoint's scheduler holds `queue_limit` - 1 waiting
///     frames (per service queue; it had no bound) and `ip.queue_drops` counts its drops; the
///     RSE receiver takes a block a frame of the next one overtook whole for the block before
///     the newest (its frames were dropped as stale) and refuses a data index beyond its block.
///     (Figs 8.2/8.3 moved too, by their own configuration: 49 waiting frames, not 50.)
pub const MODEL_REVISION: u32 = 28;

/// How a cached run is written, part of its key like `MODEL_REVISION`: 2 since session 37, when
/// infinities became `"inf"` / `"-inf"` (format 1 wrote them as `null`, which reads back as an
/// unmeasured NaN; such an entry is not reused).
pub const CACHE_FORMAT: u8 = 2;

/// One point's fingerprint: what the cache keys a run by, and what the run gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    pub scenario: String,
    pub point: String,
    /// Resolved configuration, input files and seed (the model-independent part of a cache
    /// key).
    pub config: u64,
    /// Every metric of replication 0 of the `--quick` run, to 9 significant digits (robust to
    /// last-bit differences of a platform's libm, sensitive to any change of behaviour).
    pub results: u64,
}

/// Fingerprints of every point of `catalogue`, each run once as `reproduce --quick` runs it
/// (replication 0, scenario seed), in parallel; in catalogue order.
pub fn fingerprints(catalogue: &[Scenario]) -> Result<Vec<Fingerprint>> {
    let mut input_cache = BTreeMap::new();
    let mut jobs = Vec::new();
    for sc in catalogue {
        for p in &sc.points {
            let mut p = p.clone();
            quicken(&mut p);
            let cfg = serde_json::to_vec(&p.config)?;
            let inputs = input_digest(&p.config, &sc.dir, &mut input_cache);
            let seed = sc.raw.scenario.seed.to_le_bytes();
            jobs.push((sc, p, fnv64(&[&cfg, inputs.as_bytes(), &seed])));
        }
    }
    jobs.par_iter()
        .with_max_len(1)
        .map(|(sc, p, config)| {
            let r = run_job(sc, p, sc.raw.scenario.seed, 0)?;
            let text: String = r
                .metrics
                .iter()
                .map(|(k, v)| format!("{k}={v:.8e};"))
                .collect();
            Ok(Fingerprint {
                scenario: sc.name().to_string(),
                point: p.label.clone(),
                config: *config,
                results: fnv64(&[text.as_bytes()]),
            })
        })
        .collect()
}

fn cache_path(out: &Path, _sc: &Scenario, key: &str) -> PathBuf {
    out.join("cache")
        .join(&key[..2])
        .join(format!("{key}.json"))
}

/// Content hashes of the files a run reads (see `SimConfig::input_files`), as a key component:
/// equal traces give equal runs wherever they are. An unreadable file hashes as such (0), and
/// `Simulation::new` then reports the error.
fn input_digest(
    cfg: &msll_sim::SimConfig,
    dir: &Path,
    cache: &mut BTreeMap<PathBuf, u64>,
) -> String {
    let mut out = String::new();
    for f in cfg.input_files(dir) {
        let h = *cache
            .entry(f.clone())
            .or_insert_with(|| match std::fs::read(&f) {
                Ok(b) => fnv64(&[&b]),
                Err(_) => 0,
            });
        out.push_str(&format!("{h:016x};"));
    }
    out
}

/// Write `bytes` to `path` through a temporary file renamed into place, so that a reader never
/// sees half a file. The temporary name carries the process id: two processes writing one
/// output directory (the same `reproduce` started twice) each rename a whole file of their own.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

/// Run one job and store its result and its run time in the cache.
fn run_and_store(sc: &Scenario, job: &Job, path: &Path) -> Result<RunResult> {
    let t = WallClock::now();
    let res = run_job(sc, &sc.points[job.point], sc.raw.scenario.seed, job.rep)?;
    let secs = t.elapsed().as_secs_f64();
    let dir = path.parent().expect("has parent");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // Run time is kept beside the result, never in it: results stay bit-identical.
    write_atomic(&path.with_extension("time"), format!("{secs}").as_bytes())?;
    write_atomic(path, &serde_json::to_vec(&res)?)?;
    Ok(res)
}

fn run_job(sc: &Scenario, point: &Point, seed: u64, rep: u32) -> Result<RunResult> {
    let mut cfg = point.config.clone();
    cfg.seed = seed;
    cfg.replication = rep;
    let mut sim =
        Simulation::new(&cfg, &sc.dir).map_err(|e| anyhow::Error::new(sc.point_error(point, e)))?;
    sim.run()
        .map_err(|e| anyhow::Error::new(sc.run_error(point, seed, rep, e)))
}

pub fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let (i, n) = s.split_once('/').context("--shard takes i/n, e.g. 0/4")?;
    let (i, n): (usize, usize) = (
        i.trim().parse().context("shard index")?,
        n.trim().parse().context("shard count")?,
    );
    if n == 0 || i >= n {
        bail!("--shard {s}: need 0 <= i < n");
    }
    Ok((i, n))
}

pub fn reproduce(opts: &ReproduceOptions) -> Result<()> {
    let t0 = WallClock::now();
    let mut all = catalogue(&opts.scenarios_dir)?;
    for o in &opts.only {
        if !all.iter().any(|sc| selected(sc, std::slice::from_ref(o))) {
            bail!("--only {o}: no scenario or figure with that id (see `msll list`)");
        }
    }
    // The claims are checked against the whole catalogue before anything runs: a claim naming a
    // scenario, point or metric that does not exist is an error now, not a NOT-RUN verdict after
    // the runs.
    let claim_file = opts.scenarios_dir.join("claims.toml");
    let claims = if claim_file.exists() {
        claims::load(&claim_file, &all)?
    } else {
        Vec::new()
    };
    all.retain(|sc| selected(sc, &opts.only));
    if opts.quick {
        for sc in &mut all {
            sc.points.iter_mut().for_each(quicken);
        }
    }
    // Every selected scenario's metric names (and every point the simulator would refuse: an
    // unreadable trace file, say) are checked before anything runs, as `msll run` does: a
    // misspelt figure metric used to fail only when that scenario's data were written, after
    // the whole catalogue had been simulated, and a shard never checked it (review, session 45).
    for sc in &all {
        output::check_before_running(sc)?;
    }
    let reps_of = |sc: &Scenario| {
        opts.reps
            .unwrap_or(if opts.quick {
                3
            } else {
                sc.raw.scenario.replications
            })
            .max(1)
    };
    let mut jobs = Vec::new();
    let mut input_cache = BTreeMap::new();
    let (q, rev, fmt) = (
        [opts.quick as u8],
        MODEL_REVISION.to_le_bytes(),
        [CACHE_FORMAT],
    );
    for (si, sc) in all.iter().enumerate() {
        let seed = sc.raw.scenario.seed.to_le_bytes();
        for (pi, p) in sc.points.iter().enumerate() {
            // The key is the run itself (resolved configuration, input files, seed,
            // replication), not the scenario it came from: figures that share runs (seed 004
            // Figs 7.1, 7.7, 7.13; the WLAN figures that seeds 000 and 001 both publish) run
            // them once. A trace file counts by its contents, so editing it reruns.
            let cfg = serde_json::to_vec(&p.config)?;
            let inputs = input_digest(&p.config, &sc.dir, &mut input_cache);
            // Every replication of an error-free point with fixed traffic is the same run
            // (`SimConfig::replication_invariant`): one key, so it runs once.
            let once = p.config.replication_invariant();
            for rep in 0..reps_of(sc) {
                let r = if once { 0u32 } else { rep }.to_le_bytes();
                let k = fnv64(&[
                    &cfg,
                    inputs.as_bytes(),
                    &seed,
                    &r,
                    VERSION.as_bytes(),
                    &q,
                    &rev,
                    &fmt,
                ]);
                jobs.push(Job {
                    sc: si,
                    point: pi,
                    rep,
                    key: format!("{k:016x}"),
                });
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let todo: Vec<&Job> = jobs
        .iter()
        .filter(|job| seen.insert(job.key.clone()))
        .enumerate()
        .filter(|(j, _)| opts.shard.is_none_or(|(i, n)| j % n == i))
        .map(|(_, job)| job)
        // An empty result file (a crash before the file system wrote what was renamed into
        // place) is run again here, so a shard repairs it too; any other damage is found and
        // rerun when results are loaded below (review, session 45).
        .filter(|job| {
            !cache_path(&opts.out, &all[job.sc], &job.key)
                .metadata()
                .is_ok_and(|m| m.len() > 0)
        })
        .collect();
    let speed = Speedometer::new();
    if !opts.no_run {
        // Before anything runs: an output path that cannot hold the cache (a file, no
        // permission) fails now, naming it, not after the whole catalogue has been simulated.
        let cache = opts.out.join("cache");
        std::fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
        let probe = cache.join(format!("probe{}", std::process::id()));
        std::fs::write(&probe, b"").with_context(|| format!("writing {}", probe.display()))?;
        let _ = std::fs::remove_file(&probe);
    }
    if !opts.no_run && !todo.is_empty() {
        let pb = if opts.progress {
            ProgressBar::new(todo.len() as u64)
        } else {
            ProgressBar::hidden()
        };
        pb.set_style(
            ProgressStyle::with_template(
                "reproduce [{bar:40}] {pos}/{len} runs  {elapsed} elapsed, ETA {eta}  {msg}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        // Without a terminal (a batch job, a shard on a cluster, a log file) the bar is hidden:
        // a line at every tenth of a long run instead, so hours of work are not silent (review,
        // session 42).
        let done = std::sync::atomic::AtomicUsize::new(0);
        let lines = !opts.progress && todo.len() >= 200;
        let started = WallClock::now();
        let work = |job: &&Job| -> Result<()> {
            let sc = &all[job.sc];
            let res = run_and_store(sc, job, &cache_path(&opts.out, sc, &job.key))?;
            speed.add(&res);
            let k = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if lines && (k * 10 / todo.len()) > ((k - 1) * 10 / todo.len()) {
                eprintln!(
                    "reproduce: {k}/{} runs ({}0 %) in {:.0} s",
                    todo.len(),
                    k * 10 / todo.len(),
                    started.elapsed().as_secs_f64()
                );
            }
            pb.set_message(format!("{} {}", sc.name(), speed.now()));
            pb.inc(1);
            Ok(())
        };
        // One run per rayon task (`with_max_len(1)`). Left to itself rayon cuts the list into a
        // few long ranges, each run start to end by one thread that nobody can steal from: the
        // other core idled while the last range finished (~28 s of a 607 s catalogue, session
        // 10). A task per run costs nothing next to a run (~0.05 s on average).
        // The first error stops the rest (`try_for_each`): a full disk or a bad point must not
        // let every remaining run be simulated and thrown away.
        let result: Result<()> = match opts.threads {
            Some(n) => rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()?
                .install(|| todo.par_iter().with_max_len(1).try_for_each(work)),
            None => todo.par_iter().with_max_len(1).try_for_each(work),
        };
        pb.finish_and_clear();
        result?;
    }
    // Measured before the report is drawn: the rates of the simulations alone.
    let run_speed = speed.now();
    let ran = if opts.no_run { 0 } else { todo.len() };
    if let Some((i, n)) = opts.shard {
        eprintln!(
            "shard {i}/{n}: {ran} runs done, results in {}; combine shards with `msll merge <dirs..> --out DIR`",
            opts.out.join("cache").display()
        );
        return Ok(());
    }
    // Load the results from the cache one scenario at a time (jobs are in scenario order), write
    // that scenario's data files, then keep only what the claims and the report read: each
    // point's summary and its number of runs. Holding every run's metrics of the whole catalogue
    // at once (~38 k runs of ~100 named metrics) made the report phase the peak of the run's
    // memory: 324 MB of 328 MB in session 39.
    let mut missing = 0usize;
    // Damaged cached runs run again while loading (counted among the runs executed now).
    let mut rerun = 0usize;
    // CPU seconds per scenario (a run shared by several scenarios is counted where it first
    // appears), with the events and simulated time of those runs (`wall_s` holds the CPU seconds).
    let mut cpu: BTreeMap<String, Speed> = BTreeMap::new();
    let mut counted = std::collections::BTreeSet::new();
    let data = opts.out.join("data");
    std::fs::create_dir_all(&data).with_context(|| format!("creating {}", data.display()))?;
    let mut results: BTreeMap<String, (usize, Vec<PointResult>)> = BTreeMap::new();
    let mut next_job = jobs.iter().peekable();
    for (si, sc) in all.iter().enumerate() {
        let mut per_point: Vec<Vec<(u32, RunResult)>> = vec![Vec::new(); sc.points.len()];
        // Replications absent per point: a claim over such a point reads NOT-RUN.
        let mut absent = vec![0usize; sc.points.len()];
        while let Some(job) = next_job.next_if(|job| job.sc == si) {
            let path = cache_path(&opts.out, sc, &job.key);
            // Only a run's first job counts it, so a scenario whose runs all appeared before has
            // no row.
            let first = counted.insert(job.key.clone());
            if first {
                cpu.entry(sc.name().to_string()).or_default().wall_s +=
                    std::fs::read_to_string(path.with_extension("time"))
                        .ok()
                        .and_then(|s| s.trim().parse::<f64>().ok())
                        .unwrap_or(0.0);
            }
            match std::fs::read(&path) {
                Ok(b) => {
                    let r: RunResult = match serde_json::from_slice(&b) {
                        Ok(r) => r,
                        // A damaged cache file (an interrupted copy, a full disk): run it again
                        // when runs are allowed, rather than fail until someone deletes it.
                        Err(e) if !opts.no_run => {
                            eprintln!(
                                "msll: {}: unreadable cached run ({e}); running it again",
                                path.display()
                            );
                            rerun += 1;
                            run_and_store(sc, job, &path)?
                        }
                        Err(e) => {
                            return Err(anyhow::Error::new(e).context(format!(
                                "reading {}: a damaged cached run (delete it and run its \
                                 scenario, or its shard, again)",
                                path.display()
                            )))
                        }
                    };
                    if first {
                        *cpu.entry(sc.name().to_string()).or_default() += Speed {
                            wall_s: 0.0,
                            ..Speed::of_run(&r)
                        };
                    }
                    per_point[job.point].push((job.rep, r));
                }
                Err(_) => {
                    missing += 1;
                    absent[job.point] += 1;
                }
            }
        }
        let mut prs: Vec<PointResult> = sc
            .points
            .iter()
            .zip(per_point)
            .zip(&absent)
            .map(|((p, runs), &missing)| {
                let (replications, runs): (Vec<u32>, Vec<RunResult>) = runs.into_iter().unzip();
                let summary = summarize(&runs);
                PointResult {
                    point: p.clone(),
                    runs,
                    replications,
                    summary,
                    missing,
                }
            })
            .collect();
        output::check_metrics(sc, &prs)?;
        let seed = sc.raw.scenario.seed;
        let write = |suffix: &str, text: String| {
            let f = data.join(format!("{}.{suffix}", sc.name()));
            std::fs::write(&f, text).with_context(|| format!("writing {}", f.display()))
        };
        write("csv", output::summary_csv(sc, &prs, seed))?;
        write("runs.csv", output::runs_csv(sc, &prs, seed))?;
        write(
            "json",
            serde_json::to_string_pretty(&output::json(sc, &prs, seed))?,
        )?;
        prs.iter_mut().for_each(PointResult::forget_run_metrics);
        results.insert(sc.name().to_string(), (si, prs));
    }
    debug_assert!(
        next_job.next().is_none(),
        "jobs are built in scenario order"
    );
    // Trace figures (seed 002 E1): their points' first replications, run again traced (a few
    // runs, ~0.1 s each). Their curves go to data/traces/<figure>.csv.
    // `--no-run` (and `merge`) never simulate: their report leaves trace figures out.
    let mut traces = BTreeMap::new();
    for sc in all.iter().filter(|_| !opts.no_run) {
        for f in sc.raw.figure.iter().filter(|f| f.trace.is_some()) {
            let curves = crate::traces::figure_curves(sc, f)?;
            let dir = data.join("traces");
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let file = dir.join(format!("{}.csv", f.id));
            std::fs::write(&file, crate::traces::csv(sc, f, &curves))
                .with_context(|| format!("writing {}", file.display()))?;
            traces.insert(f.id.clone(), curves);
        }
    }
    let untraced = all
        .iter()
        .flat_map(|sc| sc.raw.figure.iter())
        .filter(|f| f.trace.is_some() && !traces.contains_key(&f.id))
        .count();
    if untraced > 0 {
        eprintln!(
            "reproduce: {untraced} trace figure(s) left out: they rerun a replication, which --no-run (and merge) never do; `msll reproduce --only <figure id>` draws them"
        );
    }
    // With --only, claims about scenarios outside the selection are not part of the report.
    let claims: Vec<claims::Claim> = if opts.only.is_empty() {
        claims
    } else {
        claims
            .into_iter()
            .filter(|c| results.contains_key(&c.scenario))
            .collect()
    };
    let verdicts = claims::evaluate(&claims, &results);
    let ctx = report::Context {
        scenarios: &all,
        results: &results,
        verdicts: &verdicts,
        wall_s: t0.elapsed().as_secs_f64(),
        runs_executed: ran + rerun,
        runs_total: jobs.len(),
        missing,
        quick: opts.quick,
        reps: opts.reps,
        selection: opts.only.clone(),
        cpu_s: cpu,
        traces,
    };
    report::write(&opts.out.join("report"), &ctx)?;
    let (pass, fail, nr) = claims::tally(&verdicts);
    eprintln!(
        "reproduce: {} scenarios, {} runs ({} executed now, {} missing) in {:.1} s; claims {pass} PASS, {fail} FAIL, {nr} NOT-RUN; report: {}",
        all.len(),
        jobs.len(),
        ran + rerun,
        missing,
        t0.elapsed().as_secs_f64(),
        opts.out.join("report/index.html").display()
    );
    if run_speed.runs > 0 {
        eprintln!(
            "reproduce: speed of the {} runs executed now, on all cores: {run_speed}",
            run_speed.runs
        );
    }
    Ok(())
}

/// `msll merge`: union the caches of shard output directories into `out`, then render.
pub fn merge(from: &[PathBuf], opts: &ReproduceOptions) -> Result<()> {
    for d in from {
        let cache = d.join("cache");
        let rd =
            std::fs::read_dir(&cache).with_context(|| format!("reading {}", cache.display()))?;
        for scdir in rd {
            let scdir = scdir?.path();
            if !scdir.is_dir() {
                continue;
            }
            let target = opts
                .out
                .join("cache")
                .join(scdir.file_name().expect("dir name"));
            std::fs::create_dir_all(&target)
                .with_context(|| format!("creating {}", target.display()))?;
            for f in std::fs::read_dir(&scdir)? {
                let f = f?.path();
                // Results and their run times (the report's CPU seconds); each copied whole
                // (`write_atomic`), so an interrupted merge leaves no truncated file that the
                // next merge would skip as present.
                if f.extension().is_some_and(|e| e == "json" || e == "time") {
                    let dst = target.join(f.file_name().expect("file name"));
                    // A destination left damaged by an earlier crash is replaced, not kept
                    // because it exists: a run's result is the same bytes wherever it was made,
                    // so one whose length differs from the source's is a cut-off copy (review,
                    // session 45).
                    let len = |p: &Path| p.metadata().map(|m| m.len()).ok();
                    if len(&dst).is_none() || len(&dst) != len(&f) {
                        let bytes = std::fs::read(&f)
                            .with_context(|| format!("reading {}", f.display()))?;
                        // A damaged source would be copied and fail the load, naming the copy:
                        // deleting that would not help, the next merge copies it again.
                        if f.extension().is_some_and(|e| e == "json")
                            && serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_err()
                        {
                            bail!(
                                "{}: a damaged cached run (delete it and run the shard that \
                                 made it again, or leave it out: merge reports its runs missing)",
                                f.display()
                            );
                        }
                        write_atomic(&dst, &bytes)?;
                    }
                }
            }
        }
    }
    reproduce(&ReproduceOptions {
        no_run: true,
        ..opts.clone()
    })
}

#[cfg(test)]
mod tests {
    use msll_sim::RunResult;

    /// A run with an unmeasured (NaN) metric survives the cache's JSON round trip: `serde_json`
    /// writes NaN as `null`, which `reproduce` refused to read back (session 24).
    #[test]
    fn cached_runs_keep_nan_metrics() {
        let mut r = RunResult::default();
        r.set("conf.delay_mean_ms", f64::NAN);
        r.set("conf.sent", 12.0);
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("null"), "{text}");
        let back: RunResult = serde_json::from_str(&text).unwrap();
        assert!(back.get("conf.delay_mean_ms").unwrap().is_nan());
        assert_eq!(back.get("conf.sent"), Some(12.0));
    }

    /// NaN and both infinities survive JSON (the `reproduce` cache) as themselves; serde_json
    /// alone writes an infinity as `null`, which read back as NaN ("not measured").
    #[test]
    fn non_finite_metrics_round_trip_through_json() {
        let mut r = RunResult::default();
        for (k, v) in [
            ("a", f64::INFINITY),
            ("b", f64::NEG_INFINITY),
            ("c", f64::NAN),
            ("d", -0.5),
        ] {
            r.set(k, v);
        }
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"metrics":{"a":"inf","b":"-inf","c":null,"d":-0.5}}"#
        );
        let back: RunResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        // Anything else is an error that names the metric.
        for bad in [r#""many""#, "true", "[]", "{}", r#""""#] {
            let text = format!(r#"{{"metrics":{{"a":1,"x":{bad}}}}}"#);
            let err = serde_json::from_str::<RunResult>(&text).unwrap_err();
            assert!(err.to_string().contains("metric x"), "{bad}: {err}");
        }
        // Integers, exponents and negative zero read back as written.
        let back: RunResult =
            serde_json::from_str(r#"{"metrics":{"i":12,"n":-3,"e":1.5e-7,"z":-0.0}}"#).unwrap();
        assert_eq!(back.get("i"), Some(12.0));
        assert_eq!(back.get("n"), Some(-3.0));
        assert_eq!(back.get("e"), Some(1.5e-7));
        assert_eq!(back.get("z").map(f64::to_bits), Some((-0.0f64).to_bits()));
    }

    /// A cached run reads back bit for bit, so `reproduce` reports what `msll run` reports
    /// (session 42: serde_json's default float parser is off by one unit in the last place on
    /// some values, 1.8725602001524722 read back as 1.872560200152472 in seed 002's e2e delay;
    /// its `float_roundtrip` feature parses exactly). 100 000 values spread over every exponent.
    #[test]
    fn cached_metrics_round_trip_bit_for_bit() {
        let mut z = 0x9e37_79b9_7f4a_7c15u64;
        let mut r = RunResult::default();
        let mut want = Vec::new();
        for i in 0..100_000 {
            z = z
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = f64::from_bits(z >> 1); // positive, any exponent (NaN/inf excluded below)
            let x = if x.is_finite() { x } else { 1.0 };
            let x = if i % 2 == 0 { x } else { -x };
            r.set(&format!("m{i}"), x);
            want.push(x);
        }
        r.set("seen", 1.8725602001524722);
        let back: RunResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(
            back.get("seen").map(f64::to_bits),
            Some(1.8725602001524722f64.to_bits())
        );
        for (i, x) in want.iter().enumerate() {
            assert_eq!(
                back.get(&format!("m{i}")).map(f64::to_bits),
                Some(x.to_bits()),
                "{x:e}"
            );
        }
    }
}
