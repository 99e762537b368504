//! WWW against real ns-2.35 (issue 5: "this model must be faithful"). The references are 20 runs
//! of `tools/ns2-crosscheck/www.tcl` per configuration (`run_www.sh`, committed in
//! `tools/ns2-crosscheck/ref/www-*.txt`; ns-2 is never run here): ns-2's Http page transaction
//! with stock ns-2.35 Reno (tcpTick_ 0.5), 4 connection pairs reset per transfer, over
//! 10Mb/1ms + 2Mb/3ms with per-packet loss in both directions of the last hop, 500 s.
//! msll runs the same workload (`tcp = "ns2-2.35"`, `tick = 0.5`, per-replication HTTP draws;
//! or the 2.1b4 knobs) with 20 replications. The two simulators draw different pages and losses, so the comparison
//! is of means: requests issued, mean object latency and throughput.

use std::path::Path;

use msll_lab::{run_scenario, RunOptions, Scenario};
use msll_sim::config::AppSpec;

/// Mean of `field` over the runs of one reference file.
fn ns2_mean(reference: &str, field: &str) -> f64 {
    let vals: Vec<f64> = reference
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let i = f.iter().position(|&x| x == field).expect("field present");
            f[i + 1].parse::<f64>().expect("number")
        })
        .collect();
    assert_eq!(vals.len(), 20, "20 ns-2 runs per configuration");
    vals.iter().sum::<f64>() / vals.len() as f64
}

struct Means {
    requests: f64,
    latency: f64,
    throughput: f64,
}

fn ns2(reference: &str) -> Means {
    Means {
        requests: ns2_mean(reference, "requests"),
        latency: ns2_mean(reference, "lat_mean_s"),
        throughput: ns2_mean(reference, "thr_bps"),
    }
}

/// msll's means over 20 replications, for each scheme of `schemes`, with stock 2.35 TCP.
fn msll(loss: f64, schemes: &str) -> Vec<Means> {
    msll_with(loss, schemes, false)
}

/// `knobs`: TCP as ns-2.35 set to 2.1b4's knobs instead (`www.tcl ... 2.1b4`): our dissertation
/// preset with 2.35's Fast Recovery exit (`mark_exited`) and 2.35's `reset` (`full_reset`), with
/// 1000-byte packets (no headers).
fn msll_with(loss: f64, schemes: &str, knobs: bool) -> Vec<Means> {
    let (tcp, payload) = if knobs {
        ("dissertation", 1000)
    } else {
        ("ns2-2.35", 1040)
    };
    let error = if loss > 0.0 {
        format!(r#"{{ model = "bernoulli", p = {loss} }}"#)
    } else {
        r#"{ model = "none" }"#.to_string()
    };
    let text = format!(
        r#"
[scenario]
name = "www_ns2"
replications = 20
seed = 1
[link]
preset = "wlan"
rate_bps = 2000000
delay_s = 0.003
frame_payload = {payload}
error = {error}
[topology]
name = "LAN1"
[[app]]
kind = "www"
tcp = "{tcp}"
tick = 0.5
segment_size = 1000
connections = "ns2-new-ports"
[sim]
queue_limit = 1000
traffic_streams = "per-replication"
[sweep]
scheme = {schemes}
"#
    );
    let mut sc = Scenario::parse("www_ns2.toml", &text, Path::new(".")).unwrap();
    if knobs {
        for p in &mut sc.points {
            for a in &mut p.config.apps {
                if let AppSpec::Www { tcp, .. } = a {
                    tcp.mark_exited = true;
                    tcp.full_reset = true;
                }
            }
        }
    }
    run_scenario(&sc, &RunOptions::default())
        .unwrap()
        .iter()
        .map(|p| {
            let m = |k: &str| p.summary[k].mean;
            Means {
                requests: m("www.requests"),
                latency: m("www.object_latency_mean_s"),
                throughput: m("www.throughput_bps"),
            }
        })
        .collect()
}

fn within(what: &str, ours: f64, theirs: f64, tol: f64) {
    let dev = ours / theirs - 1.0;
    assert!(
        dev.abs() <= tol,
        "{what}: msll {ours:.4} vs ns-2.35 {theirs:.4} ({:+.1} %, tolerance {:.0} %)",
        dev * 100.0,
        tol * 100.0
    );
}

/// Default (no link-layer recovery) at 0, 1, 3 and 6 % loss: requests issued per run within
/// 10 %, mean object latency within 10 %, throughput within 15 % of ns-2's (measured when written:
/// within 6 %, 5 % and 10 %). The loss regime exercises lost SYNs, requests, last packets and last
/// ACKs, i.e. timeouts at the 3 s initial RTO and at the 1.5 s RTO after the first sample.
#[test]
fn default_www_matches_ns2_35() {
    check_default(
        &[
            (
                0.0,
                include_str!("../../../tools/ns2-crosscheck/ref/www-p2p-l0.txt"),
            ),
            (
                0.01,
                include_str!("../../../tools/ns2-crosscheck/ref/www-p2p-l0.01.txt"),
            ),
            (
                0.03,
                include_str!("../../../tools/ns2-crosscheck/ref/www-p2p-l0.03.txt"),
            ),
            (
                0.06,
                include_str!("../../../tools/ns2-crosscheck/ref/www-p2p-l0.06.txt"),
            ),
        ],
        false,
    );
}

/// Default WWW at each (loss, ns-2 reference): requests per run and mean object latency within
/// 10 %, throughput within 15 %.
fn check_default(cases: &[(f64, &str)], knobs: bool) {
    for &(loss, reference) in cases {
        let theirs = ns2(reference);
        let ours = &msll_with(loss, r#"["default"]"#, knobs)[0];
        within(
            &format!("requests at {loss}"),
            ours.requests,
            theirs.requests,
            0.10,
        );
        within(
            &format!("latency at {loss}"),
            ours.latency,
            theirs.latency,
            0.10,
        );
        within(
            &format!("throughput at {loss}"),
            ours.throughput,
            theirs.throughput,
            0.15,
        );
    }
}

/// Host-pair Snoop (ns-2 >= 2.1b6 keying) at the base station against ns-2.35's `LL/LLSnoop`.
/// ns-2 runs it inside a LAN (plain `Mac`), so the comparison is coarse and relative to the same
/// simulator's plain link: error-free, the shared state of the 4 connection pairs makes Snoop
/// suppress ACKs and reset caches across transfers, and WWW falls to a fraction of the plain
/// link's (ns-2 0.33, msll 0.19 when written); at 3 % loss Snoop is ahead again (ns-2 1.49x,
/// msll 1.28x). Requests per run with Snoop at 3 % agree within 15 %.
#[test]
fn host_pair_snoop_www_follows_ns2_35() {
    let ll0 = ns2(include_str!(
        "../../../tools/ns2-crosscheck/ref/www-lan-ll-l0.txt"
    ));
    let sn0 = ns2(include_str!(
        "../../../tools/ns2-crosscheck/ref/www-lan-snoop-l0.txt"
    ));
    let ll3 = ns2(include_str!(
        "../../../tools/ns2-crosscheck/ref/www-lan-ll-l0.03.txt"
    ));
    let sn3 = ns2(include_str!(
        "../../../tools/ns2-crosscheck/ref/www-lan-snoop-l0.03.txt"
    ));
    let schemes = r#"["default", { kind = "snoop", state = "host-pair" }]"#;
    let ours0 = msll(0.0, schemes);
    let ours3 = msll(0.03, schemes);
    let (r_ns2_0, r_ours_0) = (
        sn0.throughput / ll0.throughput,
        ours0[1].throughput / ours0[0].throughput,
    );
    let (r_ns2_3, r_ours_3) = (
        sn3.throughput / ll3.throughput,
        ours3[1].throughput / ours3[0].throughput,
    );
    assert!(
        r_ns2_0 < 0.5 && r_ours_0 < 0.5,
        "error-free host-pair Snoop / plain: ns-2 {r_ns2_0:.2}, msll {r_ours_0:.2}"
    );
    assert!(
        r_ns2_3 > 1.0 && r_ours_3 > 1.0,
        "host-pair Snoop / plain at 3 %: ns-2 {r_ns2_3:.2}, msll {r_ours_3:.2}"
    );
    within(
        "host-pair Snoop requests at 0.03",
        ours3[1].requests,
        sn3.requests,
        0.15,
    );
}

/// msll's default Snoop (state per connection, as in ns-2.1b4 which the dissertation ran) against
/// ns-2.35's `LL/LLSnoop` with each connection pair on its own client node, which gives every pair
/// its own Snoop state in 2.35 too. Real ns-2's Snoop is well ahead of the plain link on WWW
/// (1.72x at 1 %, 1.96x at 3 %), and so is ours (1.44x, 1.50x when written): Snoop ~ Raw on WWW
/// (seeds 000/001) is not ns-2's Snoop behaviour. Ours repairs somewhat less here (requests 10-17 %
/// fewer) because `ns2-new-ports` gives each transfer a fresh Snoop state with the initial RTT
/// estimate, where ns-2's per-pair object keeps its learned RTT (docs/www.md).
#[test]
fn per_connection_snoop_www_follows_ns2_35() {
    for (loss, ll, sn) in [
        (
            0.01,
            include_str!("../../../tools/ns2-crosscheck/ref/www-lan-ll-pairs-l0.01.txt"),
            include_str!("../../../tools/ns2-crosscheck/ref/www-lan-snoop-pairs-l0.01.txt"),
        ),
        (
            0.03,
            include_str!("../../../tools/ns2-crosscheck/ref/www-lan-ll-pairs-l0.03.txt"),
            include_str!("../../../tools/ns2-crosscheck/ref/www-lan-snoop-pairs-l0.03.txt"),
        ),
    ] {
        let (ll, sn) = (ns2(ll), ns2(sn));
        let ours = msll(loss, r#"["default", "snoop"]"#);
        let r_ns2 = sn.throughput / ll.throughput;
        let r_ours = ours[1].throughput / ours[0].throughput;
        assert!(
            r_ns2 > 1.3 && r_ours > 1.3,
            "Snoop / plain at {loss}: ns-2 {r_ns2:.2}, msll {r_ours:.2}"
        );
        within(
            &format!("Snoop requests at {loss}"),
            ours[1].requests,
            sn.requests,
            0.25,
        );
        within(
            &format!("plain-LAN requests at {loss}"),
            ours[0].requests,
            ll.requests,
            0.10,
        );
    }
}

/// The same with the dissertation's TCP, as far as ns-2.35 can be set to it (IW 1, no SYN, no
/// headers, 6 s initial RTO, no RTO floor: `www.tcl ... 2.1b4`): the regime of the WWW figures,
/// where lost requests cost 6 s. 2.35's `reset` stays, so the stale-RTT artefact of 2.1b4's reused
/// pairs is not part of this check. Requests and latency within 10 %, throughput within 15 %
/// (measured when written: 4.7 %, 3.6 %, 7.7 %).
#[test]
fn default_www_with_2_1b4_knobs_matches_ns2_35() {
    check_default(
        &[
            (
                0.01,
                include_str!("../../../tools/ns2-crosscheck/ref/www-p2p-l0.01-2.1b4.txt"),
            ),
            (
                0.03,
                include_str!("../../../tools/ns2-crosscheck/ref/www-p2p-l0.03-2.1b4.txt"),
            ),
        ],
        true,
    );
}
