//! FTP through the whole simulator against real ns-2.35, on the links of seeds 000/001: HSCSD
//! (WAN1 and the two-link WAN2, 100-byte packets, per-packet loss) and 802.11b (LAN1, 1000-byte
//! packets, byte errors at exponential intervals); and on seed 004's 2 Mb/s WLAN at its two worst
//! levels. References: 30 runs per point of
//! `tools/ns2-crosscheck/ftp.tcl` (`run_ftp.sh`, committed in `ref/ftp-*.txt`; ns-2 is never run
//! here). msll runs the same transfers (queues of 1000, 30 replications) from the
//! link presets, so this checks presets, error models, links and TCP together. The two draw
//! different losses; means are compared.
//!
//! It also pins the finding behind claims S000.F2.a / S001.F2.a: the seeds' "Raw drops ~30 %"
//! from level 1 to level 2 is not what ns-2's Reno gives on these links (36-38 % on HSCSD,
//! 48-49 % on 802.11b, both profiles; 41-43 % on two HSCSD links).

use std::path::Path;

use msll_lab::{run_scenario, RunOptions, Scenario};
use msll_sim::config::AppSpec;

/// Mean of field `field` (whitespace-separated, from 0) over the 30 ns-2 runs of `link` at `p`.
/// A run's line: `<link> <p> <seed> thr_bps <x> timeouts <n>`.
fn ns2_field_mean(reference: &str, link: &str, p: &str, field: usize) -> f64 {
    let vals: Vec<f64> = reference
        .lines()
        .filter(|l| l.starts_with(&format!("{link} {p} ")))
        .map(|l| {
            l.split_whitespace()
                .nth(field)
                .unwrap()
                .parse::<f64>()
                .unwrap()
        })
        .collect();
    assert_eq!(vals.len(), 30, "{link} {p}: 30 ns-2 runs");
    vals.iter().sum::<f64>() / 30.0
}

/// Mean throughput of the ns-2 runs of `link` at `p`.
fn ns2_mean(reference: &str, link: &str, p: &str) -> f64 {
    ns2_field_mean(reference, link, p, 4)
}

/// msll's mean throughput and timeouts at `levels` of `link` (`hscsd2` = HSCSD on WAN2, `wlan` =
/// seed 004's 2 Mb/s WLAN). `knobs` = the dissertation preset with ns-2.35's Fast Recovery exit
/// rule (`mark_exited`), i.e. what ns-2.35 can be configured into ("2.1b4 knobs",
/// tools/ns2-crosscheck/README.md); otherwise stock 2.35 with the 0.5 s tick.
fn msll_at(link: &str, knobs: bool, levels: [u8; 2]) -> [(f64, f64); 2] {
    let (preset, topo, seg, bytes) = match link {
        "hscsd" => ("hscsd", "WAN1", 100, 10_000_000),
        "hscsd2" => ("hscsd", "WAN2", 100, 10_000_000),
        "wlan" => ("wlan", "LAN1", 1000, 100_000_000),
        _ => ("wlan11b", "LAN1", 1000, 100_000_000),
    };
    // 2.35 adds 40 header bytes to every packet: let the frame carry it whole.
    let (tcp, payload) = if knobs {
        ("dissertation", seg)
    } else {
        ("ns2-2.35", seg + 40)
    };
    let text = format!(
        r#"
[scenario]
name = "ftp_ns2"
replications = 30
seed = 1
[link]
preset = "{preset}"
frame_payload = {payload}
[topology]
name = "{topo}"
[[app]]
kind = "ftp"
tcp = "{tcp}"
tick = 0.5
segment_size = {seg}
bytes = {bytes}
[sim]
queue_limit = 1000
[sweep]
level = [{l1}, {l2}]
scheme = ["default"]
"#,
        l1 = levels[0],
        l2 = levels[1],
    );
    let mut sc = Scenario::parse("ftp_ns2.toml", &text, Path::new(".")).unwrap();
    if knobs {
        for p in &mut sc.points {
            for a in &mut p.config.apps {
                if let AppSpec::Ftp { tcp, .. } = a {
                    tcp.mark_exited = true;
                }
            }
        }
    }
    let res = run_scenario(&sc, &RunOptions::default()).unwrap();
    let m = |i: usize| {
        (
            res[i].summary["ftp.throughput_bps"].mean,
            res[i].summary["ftp.timeouts"].mean,
        )
    };
    [m(0), m(1)]
}

/// msll's mean throughput at levels 1 and 2 of `link`.
fn msll(link: &str, knobs: bool) -> [f64; 2] {
    msll_at(link, knobs, [1, 2]).map(|(thr, _)| thr)
}

/// Mean timeouts (`nrexmit_`) of the ns-2 runs of `link` at `p`.
fn ns2_timeouts(reference: &str, link: &str, p: &str) -> f64 {
    ns2_field_mean(reference, link, p, 6)
}

/// Seed 004's 2 Mb/s WLAN on LAN1 at levels 3 and 4 (byte errors every 2^15 and 2^14 bytes on
/// average; level 3 is `msll bench` case a, the scenario timed against ns-2 by
/// tools/bench-vs-peers): the high-loss regime, where ~700 and ~2,000 timeouts per 100 MB transfer
/// set the throughput. Mean throughput within 4 % and mean timeouts within 5 % of ns-2's.
fn check_wlan_high_loss(reference: &str, knobs: bool) {
    let ours = msll_at("wlan", knobs, [3, 4]);
    for (l, p) in ["32768", "16384"].iter().enumerate() {
        let (thr, to) = ours[l];
        let (thr2, to2) = (
            ns2_mean(reference, "wlan", p),
            ns2_timeouts(reference, "wlan", p),
        );
        let (d_thr, d_to) = (thr / thr2 - 1.0, to / to2 - 1.0);
        eprintln!(
            "wlan level {}: msll {thr:.0} bit/s, {to:.1} timeouts; ns-2.35 {thr2:.0} bit/s, \
             {to2:.1} timeouts ({:+.2} %, {:+.2} %)",
            l + 3,
            d_thr * 100.0,
            d_to * 100.0
        );
        assert!(
            d_thr.abs() <= 0.04 && d_to.abs() <= 0.05,
            "wlan level {} (p {p}): msll {thr:.0} bit/s, {to:.1} timeouts vs ns-2.35 {thr2:.0}, \
             {to2:.1} ({:+.1} %, {:+.1} %)",
            l + 3,
            d_thr * 100.0,
            d_to * 100.0
        );
    }
}

#[test]
fn ftp_matches_stock_ns2_35_on_the_2_mbit_wlan_at_high_loss() {
    check_wlan_high_loss(
        include_str!("../../../tools/ns2-crosscheck/ref/ftp-2.35.txt"),
        false,
    );
}

#[test]
fn ftp_matches_ns2_35_with_2_1b4_knobs_on_the_2_mbit_wlan_at_high_loss() {
    check_wlan_high_loss(
        include_str!("../../../tools/ns2-crosscheck/ref/ftp-2.1b4.txt"),
        true,
    );
}

fn check(reference: &str, knobs: bool) {
    for (link, ps) in [
        ("hscsd", ["0.01", "0.02"]),
        ("hscsd2", ["0.01", "0.02"]),
        ("wlan11b", ["131072", "65536"]),
    ] {
        let ours = msll(link, knobs);
        let theirs = [
            ns2_mean(reference, link, ps[0]),
            ns2_mean(reference, link, ps[1]),
        ];
        for l in 0..2 {
            let dev = ours[l] / theirs[l] - 1.0;
            eprintln!(
                "{link} level {}: msll {:.0}, ns-2.35 {:.0} ({:+.2} %)",
                l + 1,
                ours[l],
                theirs[l],
                dev * 100.0
            );
            assert!(
                dev.abs() <= 0.04,
                "{link} level {} ({}): msll {:.0} vs ns-2.35 {:.0} bit/s ({:+.1} %)",
                l + 1,
                ps[l],
                ours[l],
                theirs[l],
                dev * 100.0
            );
        }
        let drop = |t: [f64; 2]| 1.0 - t[1] / t[0];
        let (d_ours, d_ns2) = (drop(ours), drop(theirs));
        assert!(
            (d_ours - d_ns2).abs() <= 0.03 && d_ns2 > 0.36,
            "{link}: level 1 -> 2 drop msll {:.1} %, ns-2.35 {:.1} % (the seeds: ~30 %)",
            d_ours * 100.0,
            d_ns2 * 100.0
        );
    }
}

/// Stock ns-2.35 Reno (SYN, IW 2, 40-byte headers, Limited Transmit, RFC 2988 RTO) with the
/// dissertation's 0.5 s tick. Within 4 % (measured when written: 0.6 %).
#[test]
fn ftp_matches_stock_ns2_35_on_hscsd_and_80211b_links() {
    check(
        include_str!("../../../tools/ns2-crosscheck/ref/ftp-2.35.txt"),
        false,
    );
}

/// ns-2.35 set to 2.1b4's knobs against our dissertation preset with 2.35's Fast Recovery exit.
#[test]
fn ftp_matches_ns2_35_with_2_1b4_knobs_on_hscsd_and_80211b() {
    check(
        include_str!("../../../tools/ns2-crosscheck/ref/ftp-2.1b4.txt"),
        true,
    );
}
