//! Issue 6: the `[msll]` scenario table and the multi-service scenario files of seed 004
//! (Figs 7.1-7.18, 8.2, 8.3) and seed 001 (Figs 13-20) parse into the intended sweeps.

use std::path::{Path, PathBuf};

use msll_lab::Scenario;
use msll_proto::{ClassifierConfig, Discipline, TimerScaling};
use msll_sim::IpQueues;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(rel: &str) -> Scenario {
    Scenario::load(&repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn seed004_chapter_7_and_8_files() {
    for n in 1..=18 {
        let s = load(&format!("scenarios/seed004/fig7_{n:02}.toml"));
        let curves = if n >= 13 { 5 } else { 4 };
        assert_eq!(s.points.len(), 4 * curves, "fig7_{n:02}");
        for p in &s.points {
            let m = p.config.msll.as_ref().expect("multi-service");
            assert_eq!(m.services.len(), 2);
            assert_eq!(m.scheduler, Discipline::Scfq);
            assert_eq!(m.timer_scaling, TimerScaling::Services);
            // Table 7.1: Cellular 1/3 : 2/3, PCS and WLAN 1/2 : 1/2.
            let want = if p.link == "cellular" {
                [1.0, 2.0]
            } else {
                [1.0, 1.0]
            };
            assert_eq!(m.rates, want, "{}", p.label);
            assert!(p.config.pacing);
            assert_eq!(p.config.ip_queues, IpQueues::PerService);
            assert!(
                p.config.apps.iter().any(|a| a.ends_run()),
                "FTP ends the run"
            );
        }
        assert_eq!(s.points[0].scheme, "default+default");
    }
    for (n, topo) in [(2, "LAN1"), (3, "WAN2")] {
        let s = load(&format!("scenarios/seed004/fig8_{n:02}.toml"));
        assert_eq!(s.points.len(), 8);
        let labels: Vec<&str> = s.points.iter().map(|p| p.scheme.as_str()).collect();
        assert_eq!(&labels[..2], ["default+default/fifo", "default+default"]);
        for p in &s.points {
            assert_eq!(p.topology, topo);
            assert!(!p.config.pacing, "sec. 8.2.1: IP blocking disabled");
            assert_eq!(p.config.ip_queues, IpQueues::Shared);
            // ns-2's default DropTail of 50: 49 waiting behind the frame on the link (session 47).
            assert_eq!(p.config.msll.as_ref().unwrap().queue_limit, Some(49));
        }
    }
}

#[test]
fn seed001_multi_service_files() {
    for n in 13..=20 {
        let s = load(&format!("scenarios/seed001/fig{n}.toml"));
        let levels = if n >= 18 { 5 } else { 4 };
        assert_eq!(s.points.len(), levels * 4, "fig{n}");
        for p in &s.points {
            let m = p.config.msll.as_ref().unwrap();
            // The CBR peak before overhead: 1/5 of 802.11b, 1/6 of HSCSD.
            let want = if p.link == "hscsd" {
                [5.0, 1.0]
            } else {
                [4.0, 1.0]
            };
            assert_eq!(m.rates, want);
        }
    }
}

fn parse(text: &str) -> Result<Scenario, String> {
    Scenario::parse("t.toml", text, Path::new(".")).map_err(|e| e.to_string())
}

const HEAD: &str = r#"
[scenario]
name = "t"
[link]
preset = "cellular"
[[app]]
kind = "conference"
tos = 1
"#;

#[test]
fn msll_table_forms_and_errors() {
    let s = parse(&format!(
        "{HEAD}
[msll]
services = [\"sr-m2\", {{ kind = \"rlp\", max_naks = 1, delivery = \"out-of-sequence\" }}]
classifier = \"heuristic\"
rates = [1, 2]
timer_scaling = {{ fixed = 3.0 }}
measure = {{ window_ms = 1000 }}
[sweep]
scheduler = [\"scfq\", \"fifo\"]
"
    ))
    .unwrap();
    assert_eq!(s.points.len(), 2);
    let m = s.points[1].config.msll.as_ref().unwrap();
    assert_eq!(m.label(), "sr-m2+rlp-oos/fifo");
    assert_eq!(
        m.classifier,
        ClassifierConfig::heuristic(0, 1, [5000, 5099])
    );
    assert_eq!(m.timer_scaling, TimerScaling::Fixed(3.0));
    assert_eq!(m.measure.unwrap().window_ms, 1000.0);
    assert_eq!(s.points[0].scheme, "sr-m2+rlp-oos");

    for (extra, want) in [
        ("[msll]\nservices = [\"bogus\"]\n", "unknown scheme"),
        (
            "[msll]\nservices = [\"default\"]\nrates = [1, 2]\n",
            "rates",
        ),
        (
            "[msll]\nservices = [\"default\"]\nclassifier = \"magic\"\n",
            "classifier",
        ),
        ("[msll]\nservices = []\n", "services"),
        (
            "[msll]\nservices = [\"default\"]\nqueue_limit = 0\n",
            "queue_limit",
        ),
        ("[sweep]\nscheduler = [\"fifo\"]\n", "[msll]"),
        (
            "[msll]\nservices = [\"default\"]\n[sweep]\nscheme = [\"sr\"]\n",
            "exclude",
        ),
        ("[msll]\nservices = [\"default\"]\nbogus = 1\n", "bogus"),
    ] {
        let e = parse(&format!("{HEAD}{extra}")).unwrap_err();
        assert!(e.contains(want), "{extra}: {e}");
    }
}

#[test]
fn a_multi_service_point_runs() {
    let s = parse(&format!(
        "{}
[msll]
services = [\"default\", \"rlp-oos\"]
rates = [1, 2]
",
        HEAD.replace("name = \"t\"", "name = \"t\"\nduration_s = 60.0")
    ))
    .unwrap();
    let cfg = &s.points[0].config;
    let r = msll_sim::Simulation::new(cfg, Path::new("."))
        .unwrap()
        .run()
        .unwrap();
    // Conferencing rides service 1 (DS 1), nothing on service 0.
    assert!(r.get("msll.s1.link_share").unwrap() > 0.99);
    assert!(r.get("msll.s1.goodput").unwrap() > 0.9);
    assert_eq!(r.get("msll.s1.share").unwrap(), 2.0 / 3.0);
}

#[test]
fn heuristic_classifier_finds_conferencing_by_port_without_ds() {
    // DS byte left at 0: only the UDP port rule (sec. 8.1 R-H2) puts conferencing on service 1.
    let head = HEAD
        .replace("tos = 1\n", "")
        .replace("name = \"t\"", "name = \"t\"\nduration_s = 60.0");
    let s = parse(&format!(
        "{head}
[msll]
services = [\"default\", \"rlp-oos\"]
classifier = \"heuristic\"
"
    ))
    .unwrap();
    let r = msll_sim::Simulation::new(&s.points[0].config, Path::new("."))
        .unwrap()
        .run()
        .unwrap();
    assert!(r.get("msll.s1.link_share").unwrap() > 0.99);
}

/// The Snoop-timer sensitivity companions (docs/www.md "Snoop on WWW"): the published figure's
/// runs plus one `snoop-no-timer` curve, the shared runs resolved identically (so the reproduce
/// cache runs them once).
#[test]
fn snoop_timer_companions_extend_their_figures() {
    for (published, companion, id) in [
        (
            "scenarios/seed001/fig5.toml",
            "scenarios/seed001/fig5-snoop-timer.toml",
            "seed001-fig5-snoop-timer",
        ),
        (
            "scenarios/seed000/fig7.toml",
            "scenarios/seed000/fig7-snoop-timer.toml",
            "seed000-fig7-snoop-timer",
        ),
    ] {
        let p = load(published);
        let c = load(companion);
        assert_ne!(p.name(), c.name());
        assert_eq!(c.raw.figure.len(), 1);
        assert_eq!(c.raw.figure[0].id, id);
        assert_eq!(c.points.len(), p.points.len() + 4, "{companion}");
        for cp in &c.points {
            let json = serde_json::to_string(&cp.config).unwrap();
            if cp.scheme == "snoop-no-timer" {
                assert!(json.contains(r#""local_timer":false"#), "{}", cp.label);
                continue;
            }
            let pp = p
                .points
                .iter()
                .find(|pp| pp.label == cp.label)
                .unwrap_or_else(|| panic!("{companion}: {} not in {published}", cp.label));
            assert_eq!(json, serde_json::to_string(&pp.config).unwrap());
            assert!(
                !json.contains("local_timer"),
                "default Snoop keys unchanged"
            );
        }
        let no_timer = c.points.iter().filter(|p| p.scheme == "snoop-no-timer");
        assert_eq!(no_timer.count(), 4);
    }
}

/// `link.levels` replaces the preset's four levels (seed 003's PER 1-5 %: five of them), and
/// `topology.wired_error` puts a loss process on the wired link (seed 003's congested node A).
#[test]
fn custom_levels_and_a_lossy_wired_link() {
    use msll_sim::error_model::ErrorSpec;
    let head = r#"
[scenario]
name = "t"
[[app]]
kind = "ftp"
bytes = 100000
[link]
preset = "wlan11b"
"#;
    let s = parse(&format!(
        "{head}levels = [{{ model = \"bernoulli\", p = 0.01 }}, {{ model = \"bernoulli\", p = 0.05 }}, \
         {{ model = \"bernoulli\", p = 0.2 }}, {{ model = \"bernoulli\", p = 0.3 }}, \
         {{ model = \"bernoulli\", p = 0.4 }}]
[topology]
wired_error = {{ model = \"bernoulli\", p = 0.01 }}
[sweep]
level = [0, 2, 5]
"
    ))
    .unwrap();
    let got: Vec<(u8, ErrorSpec)> = s
        .points
        .iter()
        .map(|p| (p.level, p.config.wireless.error.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, ErrorSpec::None {}),
            (2, ErrorSpec::Bernoulli { p: 0.05 }),
            (5, ErrorSpec::Bernoulli { p: 0.4 }),
        ]
    );
    assert_eq!(s.points[2].label, "wlan11b/LAN1/L5/default");
    for p in &s.points {
        assert_eq!(p.config.wired.error, ErrorSpec::Bernoulli { p: 0.01 });
        // the preset's rate and frame size stay
        assert_eq!(p.config.wireless.rate_bps, 5_000_000);
    }
    // An unreadable trace is named by the entry it came from, on the wireless and wired side.
    let missing = |table: &str| {
        let t = format!("{head}{table}\n[sweep]\nlevel = [1]\n");
        let s = parse(&t).unwrap();
        s.metric_names(0).unwrap_err().to_string()
    };
    let e = missing("levels = [{ model = \"trace\", path = \"/nonexistent/x.trace\" }]");
    assert!(e.contains("link.levels[0].path"), "{e}");
    let e =
        missing("[topology]\nwired_error = { model = \"trace\", path = \"/nonexistent/x.trace\" }");
    assert!(e.contains("topology.wired_error.path"), "{e}");
    // Without `levels` the preset's four levels stay, and the wired link is error-free.
    let plain = parse(&format!("{head}[sweep]\nlevel = [4]\n")).unwrap();
    assert_eq!(plain.points[0].config.wired.error, ErrorSpec::None {});
    assert!(matches!(
        plain.points[0].config.wireless.error,
        ErrorSpec::ByteInterval { .. }
    ));

    let one = "levels = [{ model = \"bernoulli\", p = 0.01 }]\n";
    for (extra, want) in [
        (
            format!("{one}[sweep]\nlevel = [2]\n"),
            "sweep.level = 2: link.levels defines levels 0 (error-free) to 1",
        ),
        ("levels = []\n".to_string(), "link.levels has 0 entries"),
        (
            format!(
                "levels = [{}]\n",
                ["{ model = \"bernoulli\", p = 0.01 }"; 9].join(", ")
            ),
            "link.levels has 9 entries",
        ),
        (
            "levels = [{ model = \"bernoulli\", p = 0.01 }, { model = \"bernoulli\", p = 1.5 }]\n"
                .to_string(),
            "link.levels[1].p",
        ),
        (
            format!("{one}error = {{ model = \"bernoulli\", p = 0.01 }}\n"),
            "link.levels and link.error both given",
        ),
        (
            "[topology]\nwired_error = { model = \"bernoulli\", p = -1 }\n".to_string(),
            "topology.wired_error.p",
        ),
        (
            "[sweep]\nlevel = [5]\n".to_string(),
            "sweep.level = 5: error levels are 0 (error-free) to 4",
        ),
    ] {
        let e = parse(&format!("{head}{extra}")).unwrap_err();
        assert!(e.contains(want), "{extra}: {e}");
    }
}

/// One long ns-2.35 Reno/Vegas bulk transfer (64-packet window, 960-byte segments) over the
/// 802.11b-like link, run for `duration_s`; `app` and `rest` add lines to the `[[app]]` table and
/// after it.
fn bulk_flow(duration_s: f64, app: &str, rest: &str) -> msll_sim::metrics::RunResult {
    let text = format!(
        r#"
[scenario]
name = "t"
duration_s = {duration_s:?}
[[app]]
kind = "ftp"
bytes = 1000000000
tcp = "ns2-2.35"
window = 64
segment_size = 960
{app}
[link]
preset = "wlan11b"
{rest}
"#
    );
    let s = parse(&text).unwrap();
    msll_sim::Simulation::new(&s.points[0].config, Path::new("."))
        .unwrap()
        .run()
        .unwrap()
}

/// A lossy wired link loses packets that no link layer recovers: over an error-free wireless
/// link, TCP's loss-event rate follows the wired loss (seed 003 Eq. 4 with p_W = 0), and the
/// run reports Eq. (3) fed with its own RTT and loss.
#[test]
fn wired_loss_reaches_tcp_and_eq3_is_reported() {
    let run = |wired: &str| {
        bulk_flow(
            60.0,
            "",
            &format!("[topology]\n{wired}\n[sweep]\nlevel = [0]\nscheme = [\"snoop\"]"),
        )
    };
    let lossy = run("wired_error = { model = \"bernoulli\", p = 0.02 }");
    let clean = run("");
    assert_eq!(lossy.get("link.lost"), Some(0.0));
    let p = lossy.get("ftp.loss_event_rate").unwrap();
    assert!((0.012..0.024).contains(&p), "loss-event rate {p}");
    // Error-free, the 64-packet window still overruns the 50-packet DropTail queue now and then.
    let p_clean = clean.get("ftp.loss_event_rate").unwrap();
    assert!(p_clean < 0.1 * p, "error-free loss-event rate {p_clean}");
    let (t, m) = (
        lossy.get("ftp.throughput_bps").unwrap(),
        lossy.get("ftp.mathis_bps").unwrap(),
    );
    let rtt = lossy.get("ftp.rtt_mean_s").unwrap();
    assert!((0.005..0.1).contains(&rtt), "mean RTT {rtt}");
    let want = msll_sim::tcp::model::mathis_pps(p, rtt).unwrap() * 960.0 * 8.0;
    assert!((m - want).abs() < 1e-6 * want);
    assert_eq!(lossy.get("ftp.mathis_ratio"), Some(t / m));
    assert!(t < m && t > 0.3 * m, "throughput {t}, Eq. (3) {m}");
    // Eq. (2) takes the timeouts into account: below Eq. (3), and fed the mean RTO (at least
    // ns-2.35's 0.2 s minimum).
    let rto = lossy.get("ftp.rto_mean_s").unwrap();
    assert!((0.199..1.0).contains(&rto), "mean RTO {rto}");
    let tfrc = lossy.get("ftp.tfrc_bps").unwrap();
    let want = msll_sim::tcp::model::tfrc_pps(p, rtt, rto).unwrap() * 960.0 * 8.0;
    assert!((tfrc - want).abs() < 1e-6 * want && tfrc < m);
    assert_eq!(lossy.get("ftp.tfrc_ratio"), Some(t / tfrc));
    assert!(clean.get("ftp.throughput_bps").unwrap() > t);
}

/// TCP Vegas (`variant = "vegas"`, ns-2 `Agent/TCP/Vegas`) keeps only alpha..beta packets queued
/// at the bottleneck: over error-free links it fills the 5 Mbit/s link as Reno does, without
/// Reno's queue overflows, at a mean RTT near the path's minimum.
#[test]
fn vegas_fills_the_link_with_a_short_queue_where_reno_overflows_it() {
    let run = |variant: &str| {
        bulk_flow(
            30.0,
            variant,
            "delay_s = 0.02\n[sim]\nqueue_limit = 30\n[sweep]\nlevel = [0]",
        )
    };
    let reno = run("");
    let vegas = run("variant = \"vegas\"");
    let get = |r: &msll_sim::metrics::RunResult, k: &str| r.get(k).unwrap();
    // Both near the 5 Mbit/s link: Reno's 2.35 packets are 960 + 40 bytes (4.8 Mbit/s of
    // segments at most), Vegas's 960 bytes whole (its `output` adds no header bytes).
    let t = get(&reno, "ftp.throughput_bps");
    assert!((3.5e6..4.81e6).contains(&t), "Reno throughput {t}");
    let t = get(&vegas, "ftp.throughput_bps");
    assert!((4.5e6..5.0e6).contains(&t), "Vegas throughput {t}");
    // The 64-packet window exceeds the ~28-packet path plus the 30-packet queue: Reno
    // overflows it; Vegas never does.
    assert!(get(&reno, "ip.queue_drops") > 0.0);
    assert_eq!(get(&vegas, "ip.queue_drops"), 0.0);
    assert_eq!(get(&vegas, "ftp.retransmissions"), 0.0);
    // Minimum RTT ~45 ms (2 x 21 ms + transmissions); Vegas queues a few packets (1.6 ms each).
    let (rr, rv) = (get(&reno, "ftp.rtt_mean_s"), get(&vegas, "ftp.rtt_mean_s"));
    assert!(
        rv < 0.05 && rr > rv + 0.008,
        "mean RTT Reno {rr}, Vegas {rv}"
    );
    // A Vegas sender's packet 0 is data, not a SYN: every byte is delivered and counted.
    assert_eq!(get(&vegas, "ftp.bytes") % 960.0, 0.0);
}

#[test]
fn tcp_variant_fields_are_checked() {
    let app = |extra: &str| {
        format!(
            "[scenario]\nname = \"t\"\n[link]\npreset = \"wlan\"\n[[app]]\nkind = \"ftp\"\nbytes = 10000\n{extra}\n"
        )
    };
    let s = parse(&app("variant = \"vegas\"\nvegas_beta = 5")).unwrap();
    assert_eq!(
        s.points[0].config.apps[0],
        msll_sim::config::AppSpec::Ftp {
            bytes: 10000,
            tcp: msll_sim::tcp::TcpConfig {
                variant: msll_sim::tcp::TcpVariant::Vegas {
                    alpha: 1,
                    beta: 5,
                    gamma: 1
                },
                ..msll_sim::tcp::TcpConfig::dissertation(1000)
            },
            start_s: 0.0,
        }
    );
    for (extra, want) in [
        (
            "variant = \"cubic\"",
            "app[0].variant = \"cubic\": unknown TCP variant (known: reno, vegas, westwood, real)",
        ),
        (
            "vegas_alpha = 2",
            "app[0].vegas_alpha = 2: applies to variant = \"vegas\" only",
        ),
        (
            "variant = \"vegas\"\nvegas_alpha = 4",
            "app[0].vegas_alpha = 4: must be at most vegas_beta (3, default)",
        ),
        (
            "variant = \"vegas\"\nvegas_alpha = 2\nvegas_beta = 1",
            "app[0].vegas_beta = 1: must be at least vegas_alpha (2)",
        ),
        (
            "variant = \"vegas\"\nwindow = 2000000",
            "app[0].window = 2000000: Vegas keeps one send-time slot per packet of the window; at most 1048576",
        ),
        (
            "variant = \"vegas\"\ntcp = \"ns2-2.35\"\nsegment_size = 40",
            "app[0].segment_size = 40: segment_size 40 cannot carry",
        ),
        (
            "variant = \"vegas\"\nvegas_gamma = -1",
            "app[0].vegas_gamma = -1: must be 0..=1000000",
        ),
    ] {
        let e = parse(&app(extra)).unwrap_err();
        assert!(e.contains(want), "{extra}: {e}");
    }
    // Not an FTP/WWW field elsewhere.
    let e = parse(
        "[scenario]\nname = \"t\"\n[link]\npreset = \"wlan\"\n[[app]]\nkind = \"conference\"\nvariant = \"vegas\"\n",
    )
    .unwrap_err();
    assert!(e.contains("app[0].variant: does not apply"), "{e}");
}

/// Seed 003's video app and the `sweep.flows` / `sweep.variant` axes: labels, per-point
/// configurations, and the errors a scenario can make with them.
#[test]
fn video_flows_and_variant_axes() {
    let text = |app: &str, sweep: &str| {
        format!(
            "[scenario]\nname = \"v\"\nduration_s = 10\n[link]\npreset = \"wlan11b\"\nframe_payload = 1040\n[[app]]\nkind = \"video\"\ntcp = \"ns2-2.35\"\nsegment_size = 1000\n{app}\n[sweep]\nscheme = [\"default\", \"snoop\"]\n{sweep}\n"
        )
    };
    let s = parse(&text(
        "rate_bps = 256000",
        "variant = [\"reno\", \"vegas\"]\nflows = [1, 20]",
    ))
    .unwrap();
    let labels: Vec<&str> = s.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels.len(), 8);
    assert_eq!(labels[0], "wlan11b/LAN1/L1/default/reno/N1");
    assert_eq!(labels[3], "wlan11b/LAN1/L1/default/vegas/N20");
    assert_eq!(labels[7], "wlan11b/LAN1/L1/snoop/vegas/N20");
    // Vegas's thresholds apply to the Vegas points of a variant sweep only.
    let tuned = parse(&text(
        "rate_bps = 256000\nvegas_beta = 5",
        "variant = [\"reno\", \"vegas\"]",
    ))
    .unwrap();
    assert_eq!(tuned.points.len(), 4);
    let p = &s.points[3];
    assert_eq!((p.variant.as_deref(), p.flows), (Some("vegas"), Some(20)));
    match &p.config.apps[0] {
        msll_sim::config::AppSpec::Video {
            flows,
            rate_bps,
            tcp,
            warmup_s,
            threshold_s,
            gop,
            ..
        } => {
            assert_eq!((*flows, *rate_bps), (20, 256_000.0));
            assert!(matches!(
                tcp.variant,
                msll_sim::tcp::TcpVariant::Vegas { .. }
            ));
            assert_eq!((*warmup_s, *threshold_s), (2.0, 0.075));
            assert_eq!(gop, "IBBPBBPBBPBB");
        }
        other => panic!("not a video app: {other:?}"),
    }
    for (app, sweep, want) in [
        ("", "", "app[0].rate_bps: missing"),
        (
            "rate_bps = 0",
            "",
            "app[0].rate_bps = 0: must be a positive bit rate",
        ),
        (
            "rate_bps = 1e5\ngop = \"IBX\"",
            "",
            "app[0].gop = \"IBX\": 'X' is not a frame type",
        ),
        (
            "rate_bps = 1e5\ntes_width = [0.1, 0.9, 0.1]",
            "",
            "app[0].tes_width = [0.1, 0.9, 0.1]: 0.9 must be in (0, 0.5]",
        ),
        (
            "rate_bps = 1e5\nwarmup_s = 10",
            "",
            "app[0].warmup_s = 10.0: not before the end of the run",
        ),
        (
            "rate_bps = 1e5\nbytes = 5",
            "",
            "app[0].bytes: does not apply to kind = \"video\"",
        ),
        (
            "rate_bps = 1e5",
            "flows = [0]",
            "sweep.flows = 0: must be 1..=1000",
        ),
        (
            "rate_bps = 1e5",
            "variant = [\"cubic\"]",
            "sweep.variant = \"cubic\": unknown TCP variant",
        ),
        ("rate_bps = 1e5", "flows = []", "an empty sweep axis"),
        (
            "rate_bps = 1e5\nvariant = \"reno\"",
            "variant = [\"vegas\"]",
            "app[0].variant = \"reno\": sweep.variant sets it at every point",
        ),
    ] {
        let e = parse(&text(app, sweep)).expect_err(want);
        assert!(e.contains(want), "{e}\n  wanted: {want}");
    }
    // The axes need an application to act on.
    let ftp = "[scenario]\nname = \"f\"\n[link]\npreset = \"wlan\"\n[[app]]\nkind = \"conference\"\n[sweep]\n";
    let e = parse(&format!("{ftp}flows = [2]")).unwrap_err();
    assert!(e.contains("sweep.flows: no video application"), "{e}");
    let e = parse(&format!("{ftp}variant = [\"vegas\"]")).unwrap_err();
    assert!(e.contains("sweep.variant: no TCP application"), "{e}");
}
