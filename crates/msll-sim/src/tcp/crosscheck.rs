//! Cross-check against traces recorded from real ns-2 (ns-2.35, Debian `ns2`) with
//! `tools/ns2-crosscheck/make_ref.sh`. ns-2 is never run here: the committed reference files are
//! compiled in.
//!
//! Scenario (tools/ns2-crosscheck/chain.tcl): n0 --10Mb/1ms-- n1 --2Mb/3ms-- n2, FTP of 1000
//! packets of 1000 bytes, TCP Reno -> TCPSink, tcpTick_ 0.5, window_ 20. Error-free traces
//! are compared segment by segment; lossy runs (30 seeds) statistically. Profile
//! "2.1b4" is ns-2.35 with the 2.1b4 knobs of ns2-semantics.md section 10 (compared with
//! `TcpConfig::dissertation`); profile "2.35" is stock ns-2.35 (compared with
//! `TcpConfig::ns2_2_35` with tick 0.5).

use std::collections::{BTreeMap, BTreeSet};

use msll_proto::{Duration, Instant};

use super::tests::{Hop, Path};
use super::TcpConfig;

struct Reference {
    /// (time s, packet number, bytes, dropped) of every data packet entering the n0->n1 queue;
    /// `dropped` if ns-2's error model on n1->n2 dropped that transmission.
    sends: Vec<(f64, i64, usize, bool)>,
    /// (time s, cwnd_) of every cwnd_ assignment, time printed with 5 decimals by ns-2.
    cwnd: Vec<(f64, f64)>,
    /// When ns-2's `done` fired.
    done: f64,
    /// Candidates for the sender's `boot_time_`, seconds (see chain.tcl).
    boot: Vec<f64>,
    /// Which ACKs (k-th sent by the sink, from 1) ns-2's reverse error model dropped.
    ack_drops: BTreeSet<u64>,
}

fn parse(csv: &str) -> Reference {
    let mut r = Reference {
        sends: vec![],
        cwnd: vec![],
        done: f64::NAN,
        boot: vec![],
        ack_drops: BTreeSet::new(),
    };
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        match f[0] {
            "send" => r.sends.push((
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4] == "1",
            )),
            "cwnd" => r.cwnd.push((f[1].parse().unwrap(), f[2].parse().unwrap())),
            "done" => r.done = f[1].parse().unwrap(),
            "boot" => r.boot = f[1..].iter().map(|x| x.parse().unwrap()).collect(),
            "ack" => {
                if f[2] == "1" {
                    r.ack_drops.insert(f[1].parse().unwrap());
                }
            }
            other => panic!("unknown event {other}"),
        }
    }
    r
}

fn chain() -> (Path, Path) {
    (
        Path(vec![
            Hop::new(10_000_000, Duration::from_millis(1)),
            Hop::new(2_000_000, Duration::from_millis(3)),
        ]),
        Path(vec![
            Hop::new(2_000_000, Duration::from_millis(3)),
            Hop::new(10_000_000, Duration::from_millis(1)),
        ]),
    )
}

/// Replay an ns-2 run: drop exactly the transmissions ns-2's error model dropped (identified
/// by packet number and transmission count), then require the same transmissions at the same
/// times, the same cwnd_ history and the same completion time.
fn replay(cfg: TcpConfig, reference: &str) {
    let (fwd, rev) = chain();
    let r = parse(reference);
    if let Err(e) = replay_on(cfg, &r, fwd, rev, 1000, 0.0) {
        panic!("{e}");
    }
}

fn replay_on(
    cfg: TcpConfig,
    r: &Reference,
    fwd: Path,
    rev: Path,
    n: u64,
    boot: f64,
) -> Result<(), String> {
    replay_until(cfg, r, fwd, rev, n, boot, f64::INFINITY)
}

/// [`replay_on`] comparing only what happens before `until` seconds (and not the completion
/// time if `until` is finite).
fn replay_until(
    cfg: TcpConfig,
    r: &Reference,
    fwd: Path,
    rev: Path,
    n: u64,
    boot: f64,
    until: f64,
) -> Result<(), String> {
    let mut count: BTreeMap<i64, u32> = BTreeMap::new();
    let mut dropped: BTreeSet<(i64, u32)> = BTreeSet::new();
    for &(_, seq, _, d) in &r.sends {
        let c = count.entry(seq).or_insert(0);
        *c += 1;
        if d {
            dropped.insert((seq, *c));
        }
    }
    let run = super::tests::run_pipe_lossy_acks(
        cfg,
        fwd,
        rev,
        n,
        Instant::from_secs_f64(10_000.0),
        Duration::from_secs_f64(boot),
        &mut |seq, k| dropped.contains(&(seq, k)),
        &mut |k| r.ack_drops.contains(&k),
    );
    // Every transmission (retransmissions included) leaves at ns-2's time (to 1.5 us: ns-2
    // prints 6 decimals here and our clock is integer nanoseconds), with ns-2's number and size.
    let before = |t: f64| t < until;
    for (i, (&(seq, t, len), &(rt, rseq, rlen, _))) in run.sends.iter().zip(&r.sends).enumerate() {
        if !before(rt) {
            break;
        }
        if (seq, len) != (rseq, rlen) || (t.as_secs_f64() - rt).abs() >= 1.5e-6 {
            return Err(format!(
                "transmission #{i}: ours seq {seq} ({len} B) at {t}, ns-2 seq {rseq} ({rlen} B) at {rt}"
            ));
        }
    }
    if until.is_finite() {
        let ours = run
            .sends
            .iter()
            .filter(|s| before(s.1.as_secs_f64()))
            .count();
        let theirs = r.sends.iter().filter(|s| before(s.0)).count();
        if ours != theirs {
            return Err(format!(
                "{ours} transmissions before {until} s, ns-2 {theirs}"
            ));
        }
    } else if run.sends.len() != r.sends.len() {
        return Err(format!(
            "{} transmissions, ns-2 {}",
            run.sends.len(),
            r.sends.len()
        ));
    }
    // cwnd_: at each instant ns-2 assigned cwnd_, our value after the events of that instant
    // agrees to ns-2's 3 printed decimals.
    let trace = run.sender.trace();
    for (j, &(rt, rv)) in r.cwnd.iter().enumerate() {
        if !before(rt) {
            break;
        }
        if r.cwnd.get(j + 1).is_some_and(|&(nt, _)| nt == rt) {
            continue; // several assignments at one instant: compare the last
        }
        let mine = trace
            .iter()
            .take_while(|e| e.time.as_secs_f64() <= rt + 5e-6)
            .last()
            .map_or(f64::NAN, |e| e.cwnd);
        // A missing trace event (NaN) is a mismatch too.
        if mine.is_nan() || (mine - rv).abs() >= 6e-4 {
            return Err(format!("cwnd at {rt}: ours {mine}, ns-2 {rv}"));
        }
    }
    let done = run.sender.stats().done_at.unwrap().as_secs_f64();
    if until.is_infinite() && (done - r.done).abs() >= 1e-6 {
        return Err(format!("done at {done}, ns-2 {}", r.done));
    }
    Ok(())
}

fn cell() -> (Path, Path) {
    (
        Path(vec![
            Hop::new(2_000_000, Duration::from_millis(50)),
            Hop::new(14_400, Duration::from_millis(100)),
        ]),
        Path(vec![
            Hop::new(14_400, Duration::from_millis(100)),
            Hop::new(2_000_000, Duration::from_millis(50)),
        ]),
    )
}

/// Seed 004 Cellular/WAN1-like chain (2Mb/50ms + 14.4kb/100ms, 50-byte packets, 300 packets):
/// RTTs of 0.4-0.8 s span one or two 0.5 s ticks, so the RTO depends on the tick-clock phase
/// `boot_time_`. ns-2 draws it from the default RNG; the replays identify it as the *second*
/// draw after seeding (`boot` candidates of chain.tcl), and with any other phase the lossy 2.35
/// replays diverge -- so these tests also pin the tick quantisation of ns2-semantics.md 1.9.
fn cell_replay(cfg: TcpConfig, reference: &str) -> Reference {
    let r = parse(reference);
    let (fwd, rev) = cell();
    if let Err(e) = replay_on(cfg, &r, fwd, rev, 300, r.boot[1]) {
        panic!("{e}");
    }
    r
}

#[test]
fn cellular_replay_matches_ns2_with_2_1b4_knobs() {
    let cfg = TcpConfig {
        mark_exited: true,
        ..TcpConfig::dissertation(50)
    };
    for r in [
        include_str!("../../../../tools/ns2-crosscheck/ref/cell-2.1b4-l0-s1.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/cell-2.1b4-l0.02-s3.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/cell-2.1b4-l0.05-s4.csv"),
    ] {
        cell_replay(cfg.clone(), r);
    }
}

#[test]
fn cellular_replay_matches_stock_ns2_35_and_needs_the_right_tick_phase() {
    let cfg = TcpConfig {
        tick: 0.5,
        ..TcpConfig::ns2_2_35(50)
    };
    for r in [
        include_str!("../../../../tools/ns2-crosscheck/ref/cell-2.35-l0-s1.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/cell-2.35-l0.02-s3.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/cell-2.35-l0.05-s4.csv"),
    ] {
        cell_replay(cfg.clone(), r);
    }
    // With phase 0 the same run diverges: a retransmit timeout fires one tick (0.5 s) late.
    let r = parse(include_str!(
        "../../../../tools/ns2-crosscheck/ref/cell-2.35-l0.02-s3.csv"
    ));
    let (fwd, rev) = cell();
    assert!(replay_on(cfg, &r, fwd, rev, 300, 0.0).is_err());
}

/// `Agent/TCPSink/DelAck` (100 ms) on the LAN chain, error-free and 3 % loss. The 2.1b4 profile
/// turns off 2.35's two immediate-ACK exceptions, as our 2.1b4 preset does.
#[test]
fn delack_replay_matches_ns2() {
    let delack = |mut c: TcpConfig| {
        c.sink.delayed_ack = true;
        c
    };
    for (cfg, r) in [
        (
            delack(ns2_35_with_2_1b4_knobs()),
            include_str!("../../../../tools/ns2-crosscheck/ref/delack-2.1b4-l0-s1.csv"),
        ),
        (
            delack(ns2_35_with_2_1b4_knobs()),
            include_str!("../../../../tools/ns2-crosscheck/ref/delack-2.1b4-l0.03-s7.csv"),
        ),
        (
            delack(stock_ns2_35_tick_half()),
            include_str!("../../../../tools/ns2-crosscheck/ref/delack-2.35-l0-s1.csv"),
        ),
        (
            delack(stock_ns2_35_tick_half()),
            include_str!("../../../../tools/ns2-crosscheck/ref/delack-2.35-l0.03-s7.csv"),
        ),
    ] {
        let r = parse(r);
        let (fwd, rev) = chain();
        if let Err(e) = replay_on(cfg, &r, fwd, rev, 1000, r.boot[1]) {
            panic!("{e}");
        }
    }
}

/// ns-2.35 configured with the 2.1b4 knobs of ns2-semantics.md section 10. ns-2.35 cannot be
/// configured into 2.1b4's repeated Fast Retransmit (it marks Fast Recovery EXITED on every new
/// ACK whatever `exitFastRetrans_` says, 1.7 and 9), so this is our 2.1b4 preset with
/// `mark_exited`. Identical to `TcpConfig::dissertation` when there is no loss.
fn ns2_35_with_2_1b4_knobs() -> TcpConfig {
    TcpConfig {
        mark_exited: true,
        ..TcpConfig::dissertation(1000)
    }
}

fn stock_ns2_35_tick_half() -> TcpConfig {
    TcpConfig {
        tick: 0.5,
        ..TcpConfig::ns2_2_35(1000)
    }
}

#[test]
fn error_free_trace_matches_ns2_with_2_1b4_knobs() {
    replay(
        TcpConfig::dissertation(1000),
        include_str!("../../../../tools/ns2-crosscheck/ref/errfree-2.1b4.csv"),
    );
}

#[test]
fn error_free_trace_matches_stock_ns2_35() {
    replay(
        stock_ns2_35_tick_half(),
        include_str!("../../../../tools/ns2-crosscheck/ref/errfree-2.35.csv"),
    );
}

/// 3 % and 10 % loss (the latter with up to ~60 timeouts, repeated backoff and estimator
/// clobbering), two seeds each.
#[test]
fn lossy_replay_matches_ns2_with_2_1b4_knobs() {
    for r in [
        include_str!("../../../../tools/ns2-crosscheck/ref/replay-2.1b4-l0.03-s7.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/replay-2.1b4-l0.03-s8.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/replay-2.1b4-l0.10-s9.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/replay-2.1b4-l0.10-s10.csv"),
    ] {
        replay(ns2_35_with_2_1b4_knobs(), r);
    }
}

#[test]
fn lossy_replay_matches_stock_ns2_35() {
    for r in [
        include_str!("../../../../tools/ns2-crosscheck/ref/replay-2.35-l0.03-s7.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/replay-2.35-l0.03-s8.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/replay-2.35-l0.10-s9.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/replay-2.35-l0.10-s10.csv"),
    ] {
        replay(stock_ns2_35_tick_half(), r);
    }
}

/// One ns-2 run of `run_lossy.sh`.
struct LossyRun {
    loss: f64,
    throughput: f64,
    timeouts: f64,
    retransmissions: f64,
}

fn parse_lossy(txt: &str) -> Vec<LossyRun> {
    txt.lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let get = |k: &str| -> f64 {
                let i = f.iter().position(|&x| x == k).unwrap();
                f[i + 1].parse().unwrap()
            };
            LossyRun {
                loss: get("loss"),
                throughput: get("npkts") * 8000.0 / get("done"),
                timeouts: get("nrexmit"),
                retransmissions: get("nrexmitpack"),
            }
        })
        .collect()
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, var.sqrt())
}

/// 30 seeds of uniform per-packet loss on the 2 Mb/s hop: the mean throughput over the seeds
/// agrees with ns-2's within 3 standard errors of the difference (the loss draws differ, so only
/// the distributions can agree), and timeouts/retransmissions per run within 15 %.
fn compare_lossy(cfg: TcpConfig, reference: &str) {
    use rand::{Rng, SeedableRng};
    let ns2 = parse_lossy(reference);
    for loss in [0.01, 0.02, 0.05] {
        let theirs: Vec<&LossyRun> = ns2.iter().filter(|r| r.loss == loss).collect();
        assert_eq!(theirs.len(), 30);
        let mut ours = vec![];
        for seed in 1..=30u64 {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let boot = Duration::from_secs_f64(rng.random::<f64>() * cfg.tick);
            let (fwd, rev) = chain();
            let mut drop = |_: i64, _: u32| rng.random::<f64>() < loss;
            let run = super::tests::run_pipe_phase(
                cfg.clone(),
                fwd,
                rev,
                5000,
                Instant::from_secs_f64(100_000.0),
                boot,
                &mut drop,
            );
            let st = run.sender.stats();
            assert!(run.sender.is_done());
            let span = (st.done_at.unwrap() - st.first_send.unwrap()).as_secs_f64();
            ours.push(LossyRun {
                loss,
                throughput: st.bytes_acked as f64 * 8.0 / span,
                timeouts: st.timeouts as f64,
                retransmissions: st.retransmissions as f64,
            });
        }
        let stat = |v: &[&LossyRun], f: fn(&LossyRun) -> f64| {
            mean_sd(&v.iter().map(|r| f(r)).collect::<Vec<_>>())
        };
        let ours_ref: Vec<&LossyRun> = ours.iter().collect();
        let (m1, s1) = stat(&ours_ref, |r| r.throughput);
        let (m2, s2) = stat(&theirs, |r| r.throughput);
        let se = ((s1 * s1 + s2 * s2) / 30.0).sqrt();
        // The comparison table of the closing note (`cargo test -- --nocapture lossy_chain`).
        eprintln!("loss {loss}: msll {m1:.0} +- {s1:.0} bit/s, ns-2 {m2:.0} +- {s2:.0} bit/s");
        assert!(
            (m1 - m2).abs() < 3.0 * se,
            "loss {loss}: throughput ours {m1:.0}+-{s1:.0}, ns-2 {m2:.0}+-{s2:.0}"
        );
        for (name, f) in [
            (
                "timeouts",
                (|r: &LossyRun| r.timeouts) as fn(&LossyRun) -> f64,
            ),
            ("retransmissions", |r: &LossyRun| r.retransmissions),
        ] {
            let (a, _) = stat(&ours_ref, f);
            let (b, _) = stat(&theirs, f);
            assert!(
                (a / b - 1.0).abs() < 0.15,
                "loss {loss}: {name} ours {a:.1}, ns-2 {b:.1}"
            );
        }
    }
}

/// ns-2.35 cannot be configured into 2.1b4's repeated Fast Retransmit: its Reno marks Fast
/// Recovery EXITED on every new ACK whatever `exitFastRetrans_` says (ns2-semantics.md 1.7, 9).
/// The ns-2 "2.1b4" profile therefore equals our 2.1b4 preset with `mark_exited`. (With the
/// real 2.1b4 behaviour, `mark_exited: false`, this scenario gives ~17 % more throughput at 1 %
/// loss and half the timeouts; that difference is what section 9 predicts and cannot be checked
/// against a binary here.)
#[test]
fn lossy_chain_matches_ns2_statistically_2_1b4_knobs() {
    compare_lossy(
        ns2_35_with_2_1b4_knobs(),
        include_str!("../../../../tools/ns2-crosscheck/ref/lossy-2.1b4.txt"),
    );
}

#[test]
fn lossy_chain_matches_ns2_statistically_2_35() {
    compare_lossy(
        stock_ns2_35_tick_half(),
        include_str!("../../../../tools/ns2-crosscheck/ref/lossy-2.35.txt"),
    );
}

macro_rules! short_refs {
    ($profile:literal: $($seed:literal)*) => {
        [$((
            concat!("short-", $profile, "-s", $seed),
            include_str!(concat!(
                "../../../../tools/ns2-crosscheck/ref/short-", $profile, "-s", $seed, ".csv"
            )),
        )),*]
    };
}

/// Short transfers (5 packets, a typical WWW reply) with 20 % loss in both directions, the
/// regime WWW runs live in: lost SYNs and SYN ACKs (timeouts at the initial RTO, `bugfix_ss_`'s
/// IW 1 in 2.35), lost last packets and last ACKs (timeouts after the first RTT sample), lost
/// ACKs hiding dup ACKs. Each replay drops exactly the data packets and the ACKs ns-2 dropped and
/// must reproduce every transmission, the cwnd_ history and the completion time, in both
/// profiles. Ignoring the ACK drops breaks most of them, so the ACK path is really checked.
#[test]
fn short_transfers_with_ack_loss_replay_exactly() {
    let runs = [
        (
            stock_ns2_35_tick_half(),
            short_refs!("2.35": "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11" "12"),
        ),
        (
            ns2_35_with_2_1b4_knobs(),
            short_refs!("2.1b4": "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11" "12"),
        ),
    ];
    let mut acks_dropped = 0;
    let mut broken_without_ack_loss = 0;
    for (cfg, refs) in runs {
        for (name, text) in refs {
            let r = parse(text);
            acks_dropped += r.ack_drops.len();
            let (fwd, rev) = chain();
            if let Err(e) = replay_on(cfg.clone(), &r, fwd, rev, 5, r.boot[1]) {
                panic!("{name}: {e}");
            }
            let blind = Reference {
                ack_drops: BTreeSet::new(),
                ..parse(text)
            };
            let (fwd, rev) = chain();
            if replay_on(cfg.clone(), &blind, fwd, rev, 5, r.boot[1]).is_err() {
                broken_without_ack_loss += 1;
            }
        }
    }
    assert!(
        acks_dropped >= 24,
        "only {acks_dropped} ACKs dropped in 24 runs"
    );
    assert!(
        broken_without_ack_loss >= 12,
        "ignoring ns-2's ACK drops broke only {broken_without_ack_loss} of 24 replays"
    );
}

/// `Agent/TCP/Vegas` (ns-2's alpha 1, beta 3, gamma 1) on the LAN chain, error-free and at 1, 3
/// and 10 % loss, in both profiles: every transmission at ns-2's time, the same cwnd_ history and
/// completion (tools/ns2-crosscheck/make_ref.sh, `vegas-*`).
#[test]
fn vegas_replay_matches_ns2() {
    let vegas = |c: TcpConfig| TcpConfig {
        variant: super::TcpVariant::VEGAS,
        ..c
    };
    let refs_2_1b4 = [
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.1b4-l0-s1.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.1b4-l0.01-s5.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.1b4-l0.03-s7.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.1b4-l0.03-s8.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.1b4-l0.10-s9.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.1b4-l0.10-s10.csv"),
    ];
    let refs_2_35 = [
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.35-l0-s1.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.35-l0.01-s5.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.35-l0.03-s7.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.35-l0.03-s8.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.35-l0.10-s9.csv"),
        include_str!("../../../../tools/ns2-crosscheck/ref/vegas-2.35-l0.10-s10.csv"),
    ];
    // A 10 % run of the 2.1b4 profile parts from ns-2 at a tie of Vegas's per-RTT rounding,
    // `int((expect - actual) * baseRTT + 0.5)` with the RTT exactly twice baseRTT, so the
    // argument is an integer up to the last bit of the clocks: ns-2's clock is a sum of doubles,
    // ours integer nanoseconds, and at 1.9999999999999996 (162.62 s) the two round apart (the
    // value is what a debug print of that expression showed). That run is compared up to the
    // tie, and the whole run is checked to part from ns-2 indeed. A second run parted at
    // 1.0000000000014 (108.58 s) until seconds were made the nearest double of the nanoseconds
    // (`Instant::as_secs_f64` divides by 1e9; it multiplied by 1e-9: session 43); it now
    // follows ns-2 to the end.
    let until = |name: &str, i: usize| match (name, i) {
        ("2.1b4", 5) => 162.6167,
        _ => f64::INFINITY,
    };
    let mut failures = Vec::new();
    for (name, cfg, refs) in [
        (
            "2.1b4",
            vegas(TcpConfig {
                backoff_past_64: true,
                ..ns2_35_with_2_1b4_knobs()
            }),
            refs_2_1b4,
        ),
        ("2.35", vegas(stock_ns2_35_tick_half()), refs_2_35),
    ] {
        for (i, text) in refs.iter().enumerate() {
            let r = parse(text);
            let (fwd, rev) = chain();
            let u = until(name, i);
            if let Err(e) = replay_until(cfg.clone(), &r, fwd, rev, 1000, r.boot[1], u) {
                failures.push(format!("{name} ref #{i}: {e}"));
            }
            if u.is_finite() {
                // The whole run does part from ns-2 (or the tie would not be needed).
                let (fwd, rev) = chain();
                assert!(replay_on(cfg.clone(), &r, fwd, rev, 1000, r.boot[1]).is_err());
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
