//! The `msll` binary: determinism of its files, and one-line errors (exit code 2) for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn msll() -> Command {
    Command::new(env!("CARGO_BIN_EXE_msll"))
}

/// Run `cmd` to completion and require success, showing its stderr otherwise.
fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scratch directory under the system temp dir, removed when the test ends (pass or fail), so
/// repeated test runs do not pile up reports in /tmp. Set `MSLL_KEEP_TEST_DIRS=1` to keep them.
struct TmpDir(PathBuf);

impl std::ops::Deref for TmpDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TmpDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        if std::env::var_os("MSLL_KEEP_TEST_DIRS").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn tmpdir(tag: &str) -> TmpDir {
    let d = std::env::temp_dir().join(format!("msll-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TmpDir(d)
}

fn run_to(dir: &Path, scenario: &Path, threads: usize) {
    let st = msll()
        .args([
            "run",
            "--reps",
            "6",
            "--threads",
            &threads.to_string(),
            "--format",
            "csv",
            "--out",
        ])
        .arg(dir)
        .arg(scenario)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn identical_csv_for_reruns_and_thread_counts() {
    let sc = repo().join("scenarios/seed004/fig5_10-11.toml");
    let (a, b, c) = (tmpdir("a"), tmpdir("b"), tmpdir("c"));
    run_to(&a, &sc, 1);
    run_to(&b, &sc, 1);
    run_to(&c, &sc, 2);
    for f in [
        "seed004_fig5_10-11.csv",
        "seed004_fig5_10-11.runs.csv",
        "seed004_fig5_10-11.json",
    ] {
        let x = std::fs::read(a.join(f)).unwrap();
        assert!(x.len() > 1000, "{f} has content");
        assert_eq!(x, std::fs::read(b.join(f)).unwrap(), "{f}: rerun differs");
        assert_eq!(
            x,
            std::fs::read(c.join(f)).unwrap(),
            "{f}: 1 vs 2 threads differ"
        );
    }
    let csv = String::from_utf8(std::fs::read(a.join("seed004_fig5_10-11.csv")).unwrap()).unwrap();
    assert!(csv.starts_with(
        "scenario,point,link,topology,level,scheme,metric,mean,sd,n,ci95,seed,msll_version,model_revision\n"
    ));
    let rev = msll_lab::reproduce::MODEL_REVISION;
    assert!(
        csv.lines().nth(1).unwrap().ends_with(&format!(",{rev}")),
        "{csv}"
    );
    assert!(csv.contains("pcs/WAN2/L4/default,pcs,WAN2,4,default,conf.loss,"));
    // The per-run file ends every row with the same two columns (review, session 45).
    let runs =
        String::from_utf8(std::fs::read(a.join("seed004_fig5_10-11.runs.csv")).unwrap()).unwrap();
    assert!(runs.starts_with(
        "scenario,point,link,topology,level,scheme,replication,metric,value,seed,msll_version,model_revision\n"
    ));
    let tail = format!(",{},{rev}", env!("CARGO_PKG_VERSION"));
    assert!(runs.lines().skip(1).all(|l| l.ends_with(&tail)), "{runs}");
}

const GOOD: &str = r#"
[scenario]
name = "t"
replications = 1
duration_s = 5

[link]
preset = "cellular"

[[app]]
kind = "conference"
"#;

/// Run a scenario text; return (exit code, stderr).
fn bad(tag: &str, text: &str) -> (i32, String) {
    let d = tmpdir(tag);
    let f = d.join("bad.toml");
    std::fs::write(&f, text).unwrap();
    let out = msll().arg("run").arg(&f).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn assert_one_line_error(tag: &str, text: &str, needles: &[&str]) {
    let (code, err) = bad(tag, text);
    assert_eq!(code, 2, "{tag}: exit code, stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{tag}: one line: {err}");
    assert!(err.contains("bad.toml"), "{tag}: names the file: {err}");
    for n in needles {
        assert!(err.contains(n), "{tag}: mentions {n}: {err}");
    }
    assert!(!err.contains("panicked"), "{tag}: {err}");
}

/// Values a run cannot be made of: each once hung (a zero-length timer or packet interval), ate
/// memory, ran for simulated centuries, wrote outside the output directory, or was silently
/// clamped or ignored. Each must now be a one-line error naming the field and the value.
#[test]
fn impossible_values_are_named_not_run() {
    let ftp = GOOD.replace("kind = \"conference\"", "kind = \"ftp\"\nbytes = 20000");
    let sweep = |scheme: &str| format!("{GOOD}\n[sweep]\nscheme = [{scheme}]\n");
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "gbn-rto0",
            sweep("{ kind = \"gbn\", rto_ms = 0 }"),
            vec!["rto_ms = 0"],
        ),
        (
            "sr-rto-neg",
            sweep("{ kind = \"sr\", rto_ms = -5 }"),
            vec!["rto_ms = -5"],
        ),
        (
            "rlp-ka0",
            sweep("{ kind = \"rlp\", keepalive_ms = 0 }"),
            vec!["keepalive_ms = 0"],
        ),
        (
            "sr-w0",
            sweep("{ kind = \"sr\", window = 0 }"),
            vec!["window = 0"],
        ),
        (
            "xor200",
            sweep("{ kind = \"xor\", block = 200 }"),
            vec!["block = 200"],
        ),
        (
            "snoop-b0",
            sweep("{ kind = \"snoop\", buffer = 0 }"),
            vec!["buffer = 0"],
        ),
        (
            "conf-rate",
            GOOD.replace(
                "kind = \"conference\"",
                "kind = \"conference\"\npeak_rate_bps = 1000000000000",
            ),
            vec!["peak_rate_bps = 1000000000000"],
        ),
        (
            "conf-size",
            GOOD.replace(
                "kind = \"conference\"",
                "kind = \"conference\"\npacket_size = 70000",
            ),
            vec!["packet_size = 70000"],
        ),
        (
            "conf-window",
            GOOD.replace("kind = \"conference\"", "kind = \"conference\"\nwindow = 5"),
            vec!["app[0].window", "does not apply"],
        ),
        (
            "ftp-tick",
            ftp.replace("bytes = 20000", "bytes = 20000\ntick = 1e-20"),
            vec!["tick = "],
        ),
        (
            "ftp-window",
            ftp.replace("bytes = 20000", "bytes = 20000\nwindow = 4294967297"),
            vec!["app[0].window = 4294967297"],
        ),
        (
            "byte-mean",
            GOOD.replace(
                "[link]",
                "[link]\nerror = { model = \"byte-interval\", mean = 1e-300 }",
            ),
            vec!["link.error.mean"],
        ),
        (
            "duration",
            GOOD.replace("duration_s = 5", "duration_s = 1e300"),
            vec!["scenario.duration_s"],
        ),
        (
            "delay",
            GOOD.replace("[link]", "[link]\ndelay_s = 1e300"),
            vec!["link.delay_s"],
        ),
        (
            "name",
            GOOD.replace("name = \"t\"", "name = \"../up\""),
            vec!["scenario.name", "../up"],
        ),
        (
            "figure-id",
            format!("{GOOD}\n[[figure]]\nid = \"../../x\"\nmetric = \"conf.loss\"\n"),
            vec!["figure[0].id", "../../x"],
        ),
        (
            "dup-level",
            format!("{GOOD}\n[sweep]\nlevel = [1, 2, 1]\n"),
            vec!["appears twice", "L1"],
        ),
        (
            "dup-scheme",
            format!("{GOOD}\n[sweep]\nscheme = [\"rlp\", {{ kind = \"rlp\" }}]\n"),
            vec!["appears twice", "rlp"],
        ),
        (
            "figure-metric",
            format!("{GOOD}\n[[figure]]\nid = \"f\"\nmetric = \"conf.lossy\"\n"),
            vec!["figure[0].metric", "conf.lossy", "conf.loss,"],
        ),
        (
            "scenario-metric",
            GOOD.replace(
                "replications = 1",
                "replications = 1\nmetrics = [\"bogus.metric\"]",
            ),
            vec!["scenario.metrics[0]", "bogus.metric"],
        ),
        (
            "think-time",
            GOOD.replace("kind = \"conference\"", "kind = \"www\"\nthink_time = true"),
            vec!["think_time", "seconds"],
        ),
        // Found by the input audit of session 23: each of these hung, aborted or ran to the
        // 1e6 s cap before it was refused.
        (
            "reps-max",
            GOOD.replace("replications = 1", "replications = 4294967295"),
            vec!["scenario.replications = 4294967295", "100000"],
        ),
        (
            "gbn-rto-below-frame",
            sweep("{ kind = \"gbn\", rto_ms = 0.001 }"),
            vec!["sweep.scheme[0].rto_ms = 0.001", "frame's transmission"],
        ),
        (
            "rlp-ka-below-frame",
            sweep("{ kind = \"rlp\", keepalive_ms = 0.001 }"),
            vec!["sweep.scheme[0].keepalive_ms = 0.001"],
        ),
        (
            "msll-rto-below-frame",
            format!(
                "{GOOD}\n[msll]\nservices = [{{ kind = \"gbn\", rto_ms = 1 }}, \"rlp-oos\"]\n"
            ),
            vec!["msll.services[0].rto_ms = 1"],
        ),
        (
            "timer-factor",
            format!(
                "{GOOD}\n[msll]\nservices = [\"sr-m2\", \"rlp-oos\"]\ntimer_scaling = {{ fixed = 0.1 }}\n"
            ),
            vec!["timer_scaling.fixed = 0.1"],
        ),
        (
            "zero-share-floor",
            format!(
                "{GOOD}\n[msll]\nservices = [\"sr-m2\", \"rlp-oos\"]\nmeasure = {{ window_ms = 1000, min_share = 0 }}\n"
            ),
            vec!["measure.min_share = 0: must be in [1e-6, 1)"],
        ),
        (
            "video-with-ftp",
            "[scenario]\nname = \"v\"\nreplications = 1\nduration_s = 5\n[link]\npreset = \"wlan11b\"\nframe_payload = 1040\n[[app]]\nkind = \"ftp\"\nbytes = 100000\n[[app]]\nkind = \"video\"\nrate_bps = 256000\n".to_string(),
            vec!["app[1].kind = video", "cannot share a run with an ftp app"],
        ),
        (
            "video-spread-huge",
            "[scenario]\nname = \"v\"\nreplications = 1\nduration_s = 5\n[link]\npreset = \"wlan11b\"\nframe_payload = 1040\n[[app]]\nkind = \"video\"\nrate_bps = 256000\nstart_spread_s = 1e300\n".to_string(),
            vec!["app[0].start_spread_s = 1e300: must be 0..=3.2e7 seconds"],
        ),
        (
            "status-period-below-status",
            sweep("{ kind = \"status-rlp\", status_period_ms = 0.001 }"),
            vec![
                "sweep.scheme[0].status_period_ms = 0.001",
                "status frame's transmission",
            ],
        ),
        (
            "frame-payload-27",
            GOOD.replace("preset = \"cellular\"", "preset = \"cellular\"\nframe_payload = 27"),
            vec!["link.frame_payload = 27", "28..=65535"],
        ),
        (
            "xor-idle-not-adaptive",
            sweep("{ kind = \"xor\", idle_timeout_ms = 5 }"),
            vec!["idle_timeout_ms = 5", "adaptive = true"],
        ),
        (
            "error-model-unused",
            format!(
                "{}\n[sweep]\nlevel = [0]\n",
                GOOD.replace("[link]", "[link]\nerror = { model = \"bernoulli\", p = 0.5 }")
            ),
            vec!["sweep.level = [0]", "link.error is given"],
        ),
        (
            "name-too-long",
            GOOD.replace("name = \"t\"", &format!("name = \"{}\"", "n".repeat(201))),
            vec!["scenario.name", "at most 200"],
        ),
        (
            "conf-overload",
            GOOD.replace(
                "kind = \"conference\"",
                "kind = \"conference\"\npeak_rate_bps = 2000000000",
            ),
            vec!["app[0].peak_rate_bps = 2000000000", "fastest link"],
        ),
        (
            "two-state-fast",
            GOOD.replace(
                "[link]",
                "[link]\nerror = { model = \"two-state\", good_mean_s = 1e-6, bad_mean_s = 1e-6, ber_good = 0, ber_bad = 1 }",
            ),
            vec!["link.error.good_mean_s"],
        ),
        (
            "start-after-end",
            GOOD.replace("kind = \"conference\"", "kind = \"conference\"\nstart_s = 5"),
            vec!["app[0].start_s = 5.0", "end of the run"],
        ),
        (
            "drain",
            GOOD.replace("duration_s = 5", "duration_s = 5\ndrain_s = 1e300"),
            vec!["scenario.drain_s = 1e300"],
        ),
        // Review, session 42.
        (
            "too-many-apps",
            format!("{GOOD}{}", "[[app]]\nkind = \"conference\"\n".repeat(64)),
            vec!["app: 65 [[app]] tables given, at most 64"],
        ),
        (
            "sweep-services-path",
            format!(
                "{GOOD}\n[msll]\nservices = [\"sr-m2\", \"rlp-oos\"]\n[sweep]\nservices = [[\"sr-m2\", \"rlp-oos\"], [\"sr-m2\", \"bogus\"]]\n"
            ),
            vec!["sweep.services[1][1] = \"bogus\": unknown scheme"],
        ),
        (
            "sweep-scheme-index",
            sweep("\"rlp\", { kind = \"gbn\", window = 0 }"),
            vec!["sweep.scheme[1].window = 0"],
        ),
        (
            "flows-twice",
            "[scenario]\nname = \"v\"\nreplications = 1\nduration_s = 5\n[link]\npreset = \"wlan11b\"\nframe_payload = 1040\n[[app]]\nkind = \"video\"\nrate_bps = 256000\nflows = 5\n[sweep]\nflows = [1, 10]\n".to_string(),
            vec!["app[0].flows = 5: sweep.flows sets it at every point"],
        ),
        (
            "metric-typo-before-running",
            GOOD.replace("duration_s = 5", "duration_s = 5\nmetrics = [\"conf.los\"]"),
            vec!["scenario.metrics[0] = \"conf.los\"", "no point of this scenario reports it"],
        ),
        (
            "ip-queues-without-msll",
            format!("{GOOD}\n[sim]\nip_queues = \"per-service\"\n"),
            vec!["sim.ip_queues"],
        ),
        (
            "frame-payload-as-segment",
            ftp.replace("[link]", "[link]\nframe_payload = 1"),
            vec!["link.frame_payload = 1"],
        ),
        (
            "ftp-bytes-beyond-cap",
            ftp.replace("duration_s = 5\n", "")
                .replace("bytes = 20000", "bytes = 9223372036854775807"),
            vec!["app[0].bytes = 9223372036854775807"],
        ),
        (
            "sweep-link",
            format!("{GOOD}\n[sweep]\nlink = [\"cellular\", \"lte\"]\n"),
            vec!["sweep.link = \"lte\""],
        ),
        (
            "heuristic-classifier-one-service",
            format!(
                "{GOOD}\n[msll]\nservices = [\"sr-m2\"]\nclassifier = \"heuristic\"\n"
            ),
            vec!["msll.classifier", "service 1", "1 entry"],
        ),
        (
            "msll-rates",
            format!("{GOOD}\n[msll]\nservices = [\"sr-m2\", \"rlp-oos\"]\nrates = [1, 2, 3]\n"),
            vec!["msll.rates"],
        ),
        (
            "sweep-empty-axis",
            format!("{GOOD}\n[sweep]\nlevel = []\n"),
            vec!["level = []", "empty sweep axis"],
        ),
        (
            "explicit-error-many-levels",
            format!(
                "{}\n[sweep]\nlevel = [1, 4]\n",
                GOOD.replace("[link]", "[link]\nerror = { model = \"bernoulli\", p = 0.1 }")
            ),
            vec!["sweep.level = [1, 4]", "link.error"],
        ),
        (
            "sweep-topology",
            format!("{GOOD}\n[sweep]\ntopology = [\"LAN9\"]\n"),
            vec!["sweep.topology = \"LAN9\""],
        ),
        // Input audit of session 34: accepted, then silently ignored or drawn empty.
        (
            "mac-sides-zero-delay",
            GOOD.replace("[link]", "[link]\nmac_delay_s = 0.0\nmac_sides = \"both\""),
            vec!["link.mac_sides = \"both\"", "positive link.mac_delay_s"],
        ),
        (
            "video-fps-tiny",
            "[scenario]\nname = \"v\"\nreplications = 1\nduration_s = 5\n[link]\npreset = \"wlan11b\"\nframe_payload = 1040\n[[app]]\nkind = \"video\"\nrate_bps = 256000\nfps = 1e-300\n".to_string(),
            vec!["app[0].fps = 1e-300: must be in [0.1, 1000]"],
        ),
        (
            "packetise-not-video",
            GOOD.replace("kind = \"conference\"", "kind = \"conference\"\npacketise = \"frame\""),
            vec!["packetise"],
        ),
        (
            "video-packetise",
            "[scenario]\nname = \"v\"\nreplications = 1\nduration_s = 5\n[link]\npreset = \"wlan11b\"\nframe_payload = 1040\n[[app]]\nkind = \"video\"\nrate_bps = 256000\npacketise = \"bytes\"\n".to_string(),
            vec!["app[0].packetise = \"bytes\": unknown (known: frame, stream)"],
        ),
        (
            "video-size-ratio-spread",
            "[scenario]\nname = \"v\"\nreplications = 1\nduration_s = 5\n[link]\npreset = \"wlan11b\"\nframe_payload = 1040\n[[app]]\nkind = \"video\"\nrate_bps = 256000\nsize_ratio = [1e308, 1e308, 1e308]\n".to_string(),
            vec!["size_ratio", "1e100"],
        ),
        (
            "log-y-negative-scale",
            format!(
                "{GOOD}\n[[figure]]\nid = \"f\"\nmetric = \"conf.loss\"\nscale = -1.0\nlog_y = true\n"
            ),
            vec!["figure[0].scale = -1", "log_y"],
        ),
        (
            "extra-delay-k0",
            format!("{GOOD}\n[topology]\nwired_extra_delay = {{ mean_s = 0.01, k = 0 }}\n"),
            vec!["topology.wired_extra_delay.k = 0", "1..=64"],
        ),
        (
            "reassembly-timeout-zero",
            format!("{GOOD}\n[sim]\nreassembly_timeout_s = 0\n"),
            vec!["sim.reassembly_timeout_s = 0", "0.001..=1e6"],
        ),
        (
            "conf-end-guard-negative",
            format!("{GOOD}\n[sim]\nconf_end_guard_s = -1\n"),
            vec!["sim.conf_end_guard_s = -1", "0..=1e6"],
        ),
        (
            "ip-service-negative",
            format!("{GOOD}\n[sim]\nip_service = {{ base_station_pps = -5.0 }}\n"),
            vec!["sim.ip_service.base_station_pps = -5", "packets/s"],
        ),
        (
            "ip-service-too-fast",
            format!("{GOOD}\n[sim]\nip_service = {{ wired_host_pps = 1e12 }}\n"),
            vec!["sim.ip_service.wired_host_pps = 1000000000000", "1e9"],
        ),
        (
            "ip-service-unknown-node",
            format!("{GOOD}\n[sim]\nip_service = {{ router_pps = 100.0 }}\n"),
            vec!["router_pps", "wired_host_pps"],
        ),
        (
            "extra-delay-negative",
            format!("{GOOD}\n[topology]\nwired_extra_delay = {{ mean_s = -1.0 }}\n"),
            vec!["topology.wired_extra_delay.mean_s = -1"],
        ),
        (
            "e2e-delay-not-ftp",
            GOOD.replace("kind = \"conference\"", "kind = \"conference\"\ne2e_delay = true"),
            vec!["e2e_delay", "does not apply"],
        ),
        (
            "trace-not-ftp",
            GOOD.replace("kind = \"conference\"", "kind = \"conference\"\ntrace = true"),
            vec!["app[0].trace", "does not apply"],
        ),
        (
            "rto-model-unknown",
            GOOD.replace(
                "kind = \"conference\"",
                "kind = \"ftp\"\nbytes = 20000\nrto_model = \"nearest\"",
            ),
            vec!["app[0].rto_model = \"nearest\"", "ns2-ticks, exact-nearest"],
        ),
        (
            "rto-model-not-tcp",
            GOOD.replace(
                "kind = \"conference\"",
                "kind = \"conference\"\nrto_model = \"exact-nearest\"",
            ),
            vec!["app[0].rto_model", "does not apply"],
        ),
    ];
    for (tag, text, needles) in cases {
        assert_one_line_error(tag, &text, &needles);
    }
}

/// A transfer cut short by an explicit `duration_s` still reports a throughput: `msll run` says
/// on stderr that it did not complete, so a stalled transfer is not mistaken for a slow one.
#[test]
fn an_incomplete_transfer_is_reported() {
    let ftp = GOOD.replace("kind = \"conference\"", "kind = \"ftp\"\nbytes = 2000000");
    let d = tmpdir("incomplete");
    let f = d.join("cut.toml");
    std::fs::write(&f, ftp).unwrap();
    let out = run_ok(msll().arg("run").arg(&f));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("warning: cellular/LAN1/L1/default: ftp.completed = 0 in 1 of 1"),
        "{err}"
    );
    // A transfer that completes gets no warning.
    let small = GOOD.replace("kind = \"conference\"", "kind = \"ftp\"\nbytes = 2000");
    std::fs::write(&f, small).unwrap();
    let out = run_ok(msll().arg("run").arg(&f));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("warning"), "{err}");
}

/// `--point ""` would match every label (each contains the empty string): refused.
#[test]
fn an_empty_point_pattern_is_refused() {
    let d = tmpdir("emptypoint");
    let f = d.join("p.toml");
    std::fs::write(&f, GOOD).unwrap();
    let out = msll()
        .arg("run")
        .arg(&f)
        .args(["--point", ""])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("--point \"\"") && err.contains("every point"),
        "{err}"
    );
}

/// Results and figures are keyed by scenario name and figure id: a catalogue where two files
/// share one is refused before anything runs, naming both files.
#[test]
fn catalogue_refuses_shared_names_and_figure_ids() {
    for (tag, second) in [
        ("dup-name", GOOD.replace("duration_s = 5", "duration_s = 6")),
        (
            "dup-figure",
            format!(
                "{}\n[[figure]]\nid = \"f\"\nmetric = \"conf.loss\"\n",
                GOOD.replace("name = \"t\"", "name = \"u\"")
            ),
        ),
    ] {
        let d = tmpdir(tag);
        let first = format!("{GOOD}\n[[figure]]\nid = \"f\"\nmetric = \"conf.loss\"\n");
        std::fs::write(d.join("a.toml"), first).unwrap();
        std::fs::write(d.join("b.toml"), second).unwrap();
        let out = msll()
            .args(["reproduce", "--reps", "1", "--scenarios"])
            .arg(&d)
            .arg("--out")
            .arg(d.join("out"))
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success(), "{tag}: {err}");
        assert!(
            err.contains("a.toml") && err.contains("b.toml"),
            "{tag}: {err}"
        );
        assert!(!d.join("out").join("cache").exists(), "{tag}: nothing ran");
    }
}

/// `reproduce` checked a figure's metric name only when it wrote that scenario's data, after
/// every run of the catalogue; a shard never checked it. It is now refused before anything runs,
/// naming the file, the field and the value (review, session 45).
#[test]
fn reproduce_refuses_a_misspelt_figure_metric_before_running() {
    for shard in [&[][..], &["--shard", "0/2"][..]] {
        let d = tmpdir(&format!("fig-metric{}", shard.len()));
        std::fs::write(
            d.join("a.toml"),
            format!("{GOOD}\n[[figure]]\nid = \"f\"\nmetric = \"conf.los\"\n"),
        )
        .unwrap();
        let out = quick_reproduce(&d, shard);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{shard:?}: {err}");
        assert!(
            err.contains("a.toml") && err.contains("figure[0].metric = \"conf.los\""),
            "{shard:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            !d.join("out").join("cache").exists(),
            "{shard:?}: nothing ran"
        );
    }
}

/// A scenario without `[[figure]]` tables gets one figure per metric, `<name>-<metric>`; another
/// scenario's figure of that id would write the same `figures/<id>.svg`. Refused before
/// anything runs, as two declared ids are (review, session 47).
#[test]
fn reproduce_refuses_a_figure_id_taken_by_an_automatic_figure() {
    let d = tmpdir("fig-auto-id");
    let auto = GOOD.replace(
        "duration_s = 5",
        "duration_s = 5\nmetrics = [\"conf.loss\"]",
    );
    std::fs::write(d.join("a.toml"), auto).unwrap();
    std::fs::write(
        d.join("b.toml"),
        format!(
            "{}\n[[figure]]\nid = \"t-conf.loss\"\nmetric = \"conf.loss\"\n",
            GOOD.replace("name = \"t\"", "name = \"u\"")
        ),
    )
    .unwrap();
    let out = quick_reproduce(&d, &[]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("b.toml")
            && err.contains("figure id = \"t-conf.loss\" is already a figure of"),
        "{err}"
    );
    assert!(!d.join("out").join("cache").exists(), "nothing ran");
}

/// `--quick` cuts a 300 s conferencing run to 60 s; an app that starts at 100 s used to send
/// nothing (loss NaN, no error). Its start now shrinks with the run (review, session 45).
#[test]
fn quick_runs_keep_a_late_start_inside_the_shortened_run() {
    let d = tmpdir("quick-late-start");
    std::fs::write(
        d.join("a.toml"),
        GOOD.replace("duration_s = 5", "duration_s = 300").replace(
            "kind = \"conference\"",
            "kind = \"conference\"\nstart_s = 100",
        ),
    )
    .unwrap();
    let out = quick_reproduce(&d, &[]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    let runs = std::fs::read_to_string(d.join("out").join("data").join("t.runs.csv")).unwrap();
    let sent: f64 = runs
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.get(7) == Some(&"conf.sent")).then(|| f[8].parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no conf.sent in {runs}"));
    assert!(sent > 100.0, "packets sent in the quick run: {sent}");
}

/// A claim about scenario `sc`, point `a` against `b` (check `greater`), metric `metric`.
fn claim_text(id: &str, sc: &str, metric: &str, a: &str, b: &str) -> String {
    format!(
        "[[claim]]\nid = \"{id}\"\nsource = \"test\"\ntext = \"test\"\nscenario = \"{sc}\"\nmetric = \"{metric}\"\ncheck = {{ kind = \"greater\", a = \"{a}\", b = \"{b}\" }}\n"
    )
}

/// `msll reproduce --quick --reps 1` on the catalogue in `d`, into `d/out`, with `args`.
fn quick_reproduce(d: &Path, args: &[&str]) -> Output {
    msll()
        .args(["reproduce", "--quick", "--reps", "1", "--scenarios"])
        .arg(d)
        .arg("--out")
        .arg(d.join("out"))
        .args(args)
        .output()
        .unwrap()
}

/// A catalogue of two scenarios, "t" (levels 1-2, default and rlp) and "u" (GOOD renamed), with
/// `claims` as its claims file; `reproduce --quick --reps 1` on it with `args`: (exit code,
/// stderr, whether anything ran).
fn reproduce_with_claims(tag: &str, claims: &str, args: &[&str]) -> (i32, String, bool) {
    let d = tmpdir(tag);
    let t = format!("{GOOD}\n[sweep]\nlevel = [1, 2]\nscheme = [\"default\", \"rlp\"]\n");
    std::fs::write(d.join("t.toml"), t).unwrap();
    std::fs::write(
        d.join("u.toml"),
        GOOD.replace("name = \"t\"", "name = \"u\""),
    )
    .unwrap();
    std::fs::write(d.join("claims.toml"), claims).unwrap();
    let out = quick_reproduce(&d, args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stderr).unwrap(),
        d.join("out").join("cache").exists(),
    )
}

/// A claim naming a scenario, metric or point that does not exist was reported after the whole
/// run as NOT-RUN ("scenario not run", "points missing from the results"), the verdict of a
/// scenario merely left out by `--only`. It is now a one-line error before anything runs, naming
/// the claims file, the claim, the field and the value.
#[test]
fn claims_naming_what_does_not_exist_are_refused_before_running() {
    let ok = claim_text("ok", "t", "conf.loss", "L2/default", "L1/default");
    for (tag, bad, needles) in [
        (
            "claim-scenario",
            claim_text("C7", "t2", "conf.loss", "L2/default", "L1/default"),
            &["claim \"C7\"", "scenario = \"t2\"", "no such scenario"][..],
        ),
        (
            "claim-metric",
            claim_text("C7", "t", "conf.losss", "L2/default", "L1/default"),
            &[
                "claim \"C7\"",
                "metric = \"conf.losss\"",
                "did you mean \"conf.loss\"?",
            ][..],
        ),
        (
            "claim-point",
            claim_text("C7", "t", "conf.loss", "L2/default", "L3/default"),
            &["claim \"C7\"", "check.b = \"L3/default\"", "no point"][..],
        ),
        (
            "claim-scheme",
            claim_text("C7", "t", "conf.loss", "L*/rlp1", "L*/default"),
            &[
                "claim \"C7\"",
                "check.a = \"L*/rlp1\"",
                "did you mean \"L1/rlp\"?",
            ][..],
        ),
    ] {
        // Also with `--only u`: the claims are checked against the whole catalogue.
        for only in [&[][..], &["--only", "u"][..]] {
            let (code, err, ran) = reproduce_with_claims(tag, &format!("{ok}{bad}"), only);
            assert_eq!(code, 2, "{tag} {only:?}: exit code, stderr: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{tag}: one line: {err}");
            assert!(err.contains("claims.toml: claim \"C7\": "), "{tag}: {err}");
            for n in needles {
                assert!(err.contains(n), "{tag}: mentions {n}: {err}");
            }
            assert!(!err.contains("panicked"), "{tag}: {err}");
            assert!(!ran, "{tag} {only:?}: nothing ran");
        }
    }
    // Valid claims about a scenario outside `--only` are left out of the report, as before.
    let (code, err, _) = reproduce_with_claims(
        "claim-good",
        &format!(
            "{ok}{}",
            // "u" has one point: a bound, not a comparison (a point against itself is refused).
            claim_text("u1", "u", "conf.loss", "L1/default", "L1/default").replace(
                "kind = \"greater\", a = \"L1/default\", b = \"L1/default\"",
                "kind = \"below\", a = \"L1/default\", value = 2",
            )
        ),
        &["--only", "t"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("reproduce: 1 scenarios"), "{err}");
    // Only the claim about "t" is evaluated (PASS or FAIL: 1 replication of a quick run).
    assert!(
        err.contains("claims 1 PASS, 0 FAIL, 0 NOT-RUN")
            || err.contains("claims 0 PASS, 1 FAIL, 0 NOT-RUN"),
        "{err}"
    );
}

/// `reproduce --scenarios DIR` on a directory with no scenario files "reproduced" 0 scenarios
/// and succeeded, as `--only` selecting nothing would have if it were not an error too.
#[test]
fn reproduce_refuses_an_empty_catalogue() {
    let d = tmpdir("empty-cat");
    for claims in [false, true] {
        if claims {
            // A claims file alone is no catalogue.
            std::fs::write(d.join("claims.toml"), "claim = []\n").unwrap();
        }
        let out = msll()
            .args(["reproduce", "--quick", "--scenarios"])
            .arg(&*d)
            .arg("--out")
            .arg(d.join("out"))
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success(), "claims file: {claims}: {err}");
        assert!(
            err.contains(&d.display().to_string()) && err.contains("no scenario files"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(!d.join("out").exists(), "nothing written");
    }
}

#[test]
fn good_scenario_runs() {
    let (code, err) = bad("good", GOOD);
    assert_eq!(code, 0, "{err}");
}

/// The JSON's point configurations carry the seed the runs used: each said the placeholder 1
/// under `--seed 9`, so rerunning from it gave other results (review, session 45).
#[test]
fn json_configurations_carry_the_seed_used() {
    let d = tmpdir("json-seed");
    let f = d.join("s.toml");
    std::fs::write(&f, GOOD).unwrap();
    for (args, want) in [(&["--seed", "9"][..], 9), (&[][..], 1)] {
        let out = run_ok(
            msll()
                .arg("run")
                .arg(&f)
                .args(["--format", "json"])
                .args(args),
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
        assert_eq!(json["seed"], want);
        assert_eq!(json["points"][0]["config"]["seed"], want, "{args:?}");
    }
    // A scenario seed of its own.
    std::fs::write(
        &f,
        GOOD.replace("replications = 1", "replications = 1\nseed = 77"),
    )
    .unwrap();
    let out = run_ok(msll().arg("run").arg(&f).args(["--format", "json"]));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["points"][0]["config"]["seed"], 77);
}

/// `msll run` ends with OMNeT++'s three speed figures on stderr, counting exactly the events and
/// simulated time of the runs it made (here 3 replications of 35 s), and leaves stdout alone.
#[test]
fn run_prints_its_speed() {
    let d = tmpdir("speed");
    let f = d.join("s.toml");
    std::fs::write(&f, GOOD.replace("replications = 1", "replications = 3")).unwrap();
    let out = run_ok(msll().arg("run").arg(&f).args(["--format", "json"]));
    let err = String::from_utf8(out.stderr).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let m = &json["points"][0]["metrics"];
    let events = m["sim.events"]["mean"].as_f64().unwrap() * 3.0;
    // 5 s of traffic and the 30 s drain, in each replication.
    assert_eq!(m["sim.end_s"]["mean"].as_f64().unwrap(), 35.0);
    let line = err
        .lines()
        .find(|l| l.starts_with("speed: ev/s="))
        .unwrap_or_else(|| panic!("no speed line: {err}"));
    assert!(
        line.contains(" simsec/s=") && line.contains(" ev/simsec="),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "(3 runs, {} events, 105 simulated s in ",
            events as u64
        )),
        "{line}"
    );
}

/// `--list-metrics` names what the points report, without running them: seed 002's MAC
/// comparison reports the link-layer delay metrics only at its status-RLP points.
#[test]
fn list_metrics_names_what_each_point_reports_without_running() {
    let f = repo().join("scenarios/seed002/ch4_mac.toml");
    let out = run_ok(msll().arg("run").arg(&f).arg("--list-metrics"));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(&"ftp.throughput_bps"), "{text}");
    assert!(lines.contains(&"sim.events"), "{text}");
    let delay = lines
        .iter()
        .find(|l| l.starts_with("ll.delay_s "))
        .unwrap_or_else(|| panic!("no ll.delay_s: {text}"));
    assert!(
        delay.contains("(only ") && delay.contains("/status-rlp-ns"),
        "{delay}"
    );
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "one line per metric, sorted");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("speed:"),
        "nothing ran"
    );
    // Restricted to status-RLP points, every point reports it.
    let out =
        run_ok(
            msll()
                .arg("run")
                .arg(&f)
                .args(["--list-metrics", "--point", "status-rlp-ns"]),
        );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().any(|l| l == "ll.delay_s"), "{text}");
}

#[test]
fn unknown_key() {
    assert_one_line_error(
        "unknown",
        &GOOD.replace("[link]", "[link]\nspeed = 3"),
        &["speed = 3", "unknown field"],
    );
}

/// An error-free model with a stray parameter is refused, not run error-free (review, session
/// 46: serde's internally tagged unit variant skipped every other key).
#[test]
fn error_free_model_with_a_parameter() {
    assert_one_line_error(
        "none-p",
        &GOOD.replace("[link]", "[link]\nerror = { model = \"none\", p = 0.05 }"),
        &["unknown field", "p"],
    );
    let (code, err) = bad(
        "none-ok",
        &GOOD.replace("[link]", "[link]\nerror = { model = \"none\" }"),
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn negative_rate() {
    assert_one_line_error(
        "rate",
        &GOOD.replace("[link]", "[link]\nrate_bps = -5"),
        &["link.rate_bps", "-5"],
    );
}

#[test]
fn loss_probability_above_one() {
    let t = GOOD.replace(
        "[link]",
        "[link]\nerror = { model = \"bernoulli\", p = 1.5 }",
    );
    assert_one_line_error("p", &t, &["link.error.p", "1.5"]);
}

/// An N-state Markov channel runs from a scenario file; a matrix it cannot run with is named
/// down to the row or entry.
#[test]
fn markov_error_model_runs_and_its_bad_rows_are_named() {
    let chain = "[link]\nerror = { model = \"markov\", transition = [[0.9, 0.1, 0.0], \
                 [0.2, 0.7, 0.1], [0.0, 0.5, 0.5]], loss = [0.0, 0.1, 0.8] }";
    let (code, err) = bad("markov", &GOOD.replace("[link]", chain));
    assert_eq!(code, 0, "{err}");
    let row = GOOD.replace(
        "[link]",
        "[link]\nerror = { model = \"markov\", transition = [[0.9, 0.1], [0.2, 0.7]], loss = [0.0, 0.5] }",
    );
    assert_one_line_error(
        "markov-row",
        &row,
        &["link.error.transition[1]", "sum to 1"],
    );
    let absorbing = GOOD.replace(
        "[link]",
        "[link]\nerror = { model = \"markov\", transition = [[0.9, 0.1], [0.0, 1.0]], loss = [0.0, 0.5] }",
    );
    assert_one_line_error(
        "markov-absorbing",
        &absorbing,
        &["link.error.transition", "reachable"],
    );
}

#[test]
fn unknown_preset_topology_scheme() {
    assert_one_line_error(
        "preset",
        &GOOD.replace("\"cellular\"", "\"lte\""),
        &["link.preset", "lte"],
    );
    assert_one_line_error(
        "topo",
        &format!("{GOOD}\n[topology]\nname = \"MESH\"\n"),
        &["topology.name", "MESH"],
    );
    assert_one_line_error(
        "scheme",
        &format!("{GOOD}\n[sweep]\nscheme = [\"magic\"]\n"),
        &["sweep.scheme", "magic"],
    );
    // A bad value inside a scheme table names the field (not "no variant matched").
    assert_one_line_error(
        "scheme-field",
        &format!(
            "{GOOD}\n[sweep]\nscheme = [\"snoop\", {{ kind = \"snoop\", local_timer = \"no\" }}]\n"
        ),
        &["scheme = ", "local_timer", "\"no\"", "expected a boolean"],
    );
    assert_one_line_error(
        "scheme-kind",
        &format!("{GOOD}\n[sweep]\nscheme = [{{ window = 3 }}]\n"),
        &["missing field `kind`"],
    );
    assert_one_line_error(
        "level",
        &format!("{GOOD}\n[sweep]\nlevel = [7]\n"),
        &["sweep.level", "7"],
    );
}

#[test]
fn missing_trace_file_and_missing_scenario() {
    let t = GOOD.replace(
        "[link]",
        "[link]\nerror = { model = \"trace\", path = \"nowhere.txt\" }",
    );
    // Named as the file has it (`[link] error`), not as the simulator's config calls it.
    assert_one_line_error("trace", &t, &["link.error.path", "nowhere.txt"]);
    let out = msll()
        .args(["run", "/definitely/not/here.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/definitely/not/here.toml"));
}

#[test]
fn malformed_toml() {
    assert_one_line_error("syntax", "[scenario\nname = 1", &["bad.toml"]);
}

#[test]
fn trace_has_ns2_like_lines() {
    let d = tmpdir("trace");
    let t = d.join("run.tr");
    let sc = repo().join("scenarios/seed004/fig5_04-05.toml");
    run_ok(
        msll()
            .args(["run", "--reps", "1"])
            .arg(&sc)
            .arg("--trace")
            .arg(&t),
    );
    let text = std::fs::read_to_string(&t).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 1000);
    // <ev> <time> <from> <to> <kind> <bytes> <id>: the first packet enters the FH->BS queue at t=0.
    assert_eq!(lines[0], "+ 0.000000000 0 1 ip 50 0");
    assert_eq!(lines[1], "- 0.000000000 0 1 ip 50 0");
    assert!(
        lines.iter().any(|l| l.starts_with("e ")),
        "some error losses traced"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("r ") && l.contains(" 1 2 frame 51 ")),
        "frame receptions at MH"
    );
}

/// A trace that cannot be written (a full disk) was cut off silently, with exit status 0: the
/// error now fails the command, naming the file (review, session 45).
#[test]
fn a_trace_that_cannot_be_written_is_an_error() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let d = tmpdir("trace-full");
    let f = d.join("s.toml");
    std::fs::write(&f, GOOD).unwrap();
    let out = msll()
        .args(["run", "--reps", "1"])
        .arg(&f)
        .args(["--trace", "/dev/full"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("writing trace file /dev/full"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `--tcp-trace` and a trace figure through `reproduce` (seed 002 E1).
#[test]
fn tcp_traces_from_run_and_reproduce() {
    let d = tmpdir("tcp-trace");
    let t = d.join("tcp.csv");
    let sc = repo().join("scenarios/seed002/ch4_rlp.toml");
    run_ok(
        msll()
            .args(["run", "--reps", "1", "--point", "L1/status-rlp"])
            .arg(&sc)
            .arg("--tcp-trace")
            .arg(&t),
    );
    let text = std::fs::read_to_string(&t).unwrap();
    assert!(text.starts_with(
        "# scenario=seed002_ch4_rlp point=cdpd/LAN1/L1/status-rlp seed=1 replication=0\napp,kind,time_s,value\n"
    ));
    // 5 MB in 512-byte segments: packets 0..9765 delivered in order, the last one last.
    let last = text
        .lines()
        .rfind(|l| l.starts_with("0,received,"))
        .unwrap();
    assert!(last.ends_with(",9765"), "{last}");
    assert!(text
        .lines()
        .any(|l| l.starts_with("0,cwnd,") && l.ends_with(",4096")));
    // A point without FTP: a clear error.
    let out = msll()
        .args(["run", "--reps", "1"])
        .arg(repo().join("scenarios/seed004/fig5_04-05.toml"))
        .arg("--tcp-trace")
        .arg(d.join("none.csv"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no FTP application to trace"));

    let out = d.join("repro");
    run_ok(
        msll()
            .current_dir(repo())
            .args(["reproduce", "--quick", "--only", "seed002-fig4.5", "--out"])
            .arg(&out),
    );
    let csv = std::fs::read_to_string(out.join("data/traces/seed002-fig4.5.csv")).unwrap();
    assert!(csv.contains(",cdpd/LAN1/L1/default,") && csv.contains(",cdpd/LAN1/L1/status-rlp,"));
    assert!(out.join("report/figures/seed002-fig4.5.svg").exists());
    let report = std::fs::read_to_string(out.join("report/README.md")).unwrap();
    assert!(report.contains("Seed 002 Fig. 4.5: cwnd at PER 1 %"));
}

#[test]
fn reproduce_quick_two_figures_writes_report_csv_and_plots() {
    let out = tmpdir("repro");
    run_ok(
        msll()
            .current_dir(repo())
            .args([
                "reproduce",
                "--quick",
                "--only",
                "seed004-fig5.4,seed004-fig5.12",
                "--out",
            ])
            .arg(&out),
    );
    let report = std::fs::read_to_string(out.join("report/README.md")).unwrap();
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    // The wall time is given with the machine it was measured on.
    let machine = msll_lab::machine::Machine::this().to_string();
    assert!(
        report.contains(&format!(" s on {machine}.")),
        "report names {machine}"
    );
    for id in [
        "seed004-fig5.4",
        "seed004-fig5.5",
        "seed004-fig5.12",
        "seed004-fig5.13",
    ] {
        assert!(
            report.contains(&format!("figures/{id}.svg")),
            "report links {id}"
        );
        let svg = std::fs::read_to_string(out.join(format!("report/figures/{id}.svg"))).unwrap();
        assert!(svg.contains("<svg"), "{id} is an SVG");
        assert!(html.contains(&format!("id=\"{id}\"")), "html has {id}");
    }
    // every curve of Fig. 5.4 is in the CSV and the plot legend
    let csv = std::fs::read_to_string(out.join("data/seed004_fig5_04-05.csv")).unwrap();
    let svg = std::fs::read_to_string(out.join("report/figures/seed004-fig5.4.svg")).unwrap();
    for scheme in ["default", "xor", "xor-ad", "rlp1", "rlp-oos"] {
        assert!(
            csv.contains(&format!("cellular/LAN1/L4/{scheme},")),
            "csv has {scheme}"
        );
        assert!(
            svg.lines().any(|l| l.trim() == scheme),
            "legend has {scheme}"
        );
    }
    // a second invocation reuses the cache: nothing is executed again
    let st = msll()
        .current_dir(repo())
        .args(["reproduce", "--quick", "--only", "seed004-fig5.4", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&st.stderr).contains("(0 executed now, 0 missing)"),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    // Where the time goes: each scenario's runs, with their events and simulated time per CPU
    // second; the events are those of the runs in the data files.
    let report = std::fs::read_to_string(out.join("report/README.md")).unwrap();
    assert!(
        report.contains("| scenario | CPU s | share | runs | events | events/s | simulated s/s | events/simulated s |"),
        "{report}"
    );
    let row: Vec<&str> = report
        .lines()
        .find(|l| l.starts_with("| seed004_fig5_04-05 |"))
        .expect("a row for the scenario")
        .split('|')
        .map(str::trim)
        .collect();
    let runs_csv = std::fs::read_to_string(out.join("data/seed004_fig5_04-05.runs.csv")).unwrap();
    let head: Vec<&str> = runs_csv.lines().next().unwrap().split(',').collect();
    let (mi, vi) = (
        head.iter().position(|h| *h == "metric").unwrap(),
        head.iter().position(|h| *h == "value").unwrap(),
    );
    let (mut n, mut events) = (0u64, 0f64);
    for l in runs_csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        if f[mi] == "sim.events" {
            n += 1;
            events += f[vi].parse::<f64>().unwrap();
        }
    }
    assert_eq!(row[4], n.to_string(), "{row:?}");
    assert_eq!(row[5], (events as u64).to_string(), "{row:?}");
    // The HTML report has the same table.
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(
        html.contains("<h2>Where the time goes</h2>")
            && html.contains("<th>events/simulated s</th>")
            && html.contains(&format!("<td>seed004_fig5_04-05</td><td>{}</td>", row[2])),
        "html time table"
    );
}

/// The reproduce cache keys a run by what determines it, not by where its scenario lives: equal
/// runs in two scenario directories run once, and an error trace counts by its contents.
#[test]
fn reproduce_shares_equal_runs_and_keys_traces_by_content() {
    let root = tmpdir("share");
    let traced = "[link]\nerror = { model = \"trace\", path = \"loss.txt\" }";
    for (dir, name, trace) in [
        ("a", "sa", true),
        ("b", "sb", true),
        ("c", "sc", false),
        ("d", "sd", false),
    ] {
        let d = root.join("cat").join(dir);
        std::fs::create_dir_all(&d).unwrap();
        let mut text = GOOD.replace("name = \"t\"", &format!("name = \"{name}\""));
        if trace {
            text = text.replace("[link]", traced);
            std::fs::write(d.join("loss.txt"), "0010000100").unwrap();
        }
        std::fs::write(d.join("s.toml"), text).unwrap();
    }
    let reproduce = || {
        let out = run_ok(
            msll()
                .arg("reproduce")
                .args(["--reps", "2", "--scenarios"])
                .arg(root.join("cat"))
                .arg("--out")
                .arg(root.join("out")),
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // 4 scenarios x 2 replications; a = b and c = d
    let first = reproduce();
    assert!(
        first.contains("8 runs (4 executed now, 0 missing)"),
        "{first}"
    );
    // the same trace text again: nothing to run; a different one: b's runs again
    assert!(reproduce().contains("(0 executed now"));
    std::fs::write(root.join("cat/b/loss.txt"), "0100000000").unwrap();
    let third = reproduce();
    assert!(
        third.contains("8 runs (2 executed now, 0 missing)"),
        "{third}"
    );
}

/// A result file left empty by a crash (renamed into place before the file system wrote it) was
/// skipped by a shard as present, and copied by `merge`, which then stopped on it without saying
/// what to do. Now the shard runs it again, `merge` replaces a damaged destination with a whole
/// copy, and a damaged source is named with the way out (review, session 45).
#[test]
fn damaged_cached_runs_are_rerun_by_shards_and_replaced_by_merge() {
    let (a, m) = (tmpdir("dmg-shard"), tmpdir("dmg-merged"));
    let shard = |dir: &Path| {
        msll()
            .current_dir(repo())
            .args([
                "reproduce",
                "--quick",
                "--reps",
                "1",
                "--only",
                "seed004-fig5.2",
                "--shard",
                "0/1",
                "--out",
            ])
            .arg(dir)
            .output()
            .unwrap()
    };
    let merge = |from: &Path, to: &Path| {
        msll()
            .current_dir(repo())
            .arg("merge")
            .arg(from)
            .args([
                "--quick",
                "--reps",
                "1",
                "--only",
                "seed004-fig5.2",
                "--out",
            ])
            .arg(to)
            .output()
            .unwrap()
    };
    assert!(shard(&a).status.success());
    let results: Vec<PathBuf> = walk(&a.join("cache"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    let victim = &results[0];
    let whole = std::fs::read(victim).unwrap();
    std::fs::write(victim, b"").unwrap();
    let out = shard(&a);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(err.contains("1 runs done"), "{err}");
    assert_eq!(std::fs::read(victim).unwrap(), whole, "run again, the same");
    // A merge destination damaged by an earlier crash is replaced.
    assert!(merge(&a, &m).status.success());
    let dst = m.join(victim.strip_prefix(&*a).unwrap());
    std::fs::write(&dst, &whole[..whole.len() / 2]).unwrap();
    let out = merge(&a, &m);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&dst).unwrap(), whole);
    // A damaged source: merge never runs anything, so it fails, naming the file and the way out.
    std::fs::write(victim, &whole[..whole.len() / 2]).unwrap();
    std::fs::remove_file(&dst).unwrap();
    let out = merge(&a, &m);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    // The source is named, not the copy (deleting the copy would not help: the next merge
    // copies the source again).
    assert!(
        err.contains(&*victim.to_string_lossy()) && err.contains("delete it"),
        "{err}"
    );
    assert!(!dst.exists(), "a damaged source is not copied");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn shards_merge_to_the_same_results() {
    let (a, b, m, whole) = (
        tmpdir("sh0"),
        tmpdir("sh1"),
        tmpdir("merged"),
        tmpdir("whole"),
    );
    for (dir, shard) in [(&a, Some("0/2")), (&b, Some("1/2")), (&whole, None)] {
        let mut c = msll();
        c.current_dir(repo())
            .args([
                "reproduce",
                "--quick",
                "--reps",
                "2",
                "--only",
                "seed004-fig5.2",
                "--out",
            ])
            .arg(dir);
        if let Some(s) = shard {
            c.args(["--shard", s]);
        }
        assert!(c.status().unwrap().success());
    }
    let st = msll()
        .current_dir(repo())
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .args([
            "--quick",
            "--reps",
            "2",
            "--only",
            "seed004-fig5.2",
            "--out",
        ])
        .arg(&m)
        .status()
        .unwrap();
    assert!(st.success());
    let f = "data/seed004_fig5_02-03.runs.csv";
    assert_eq!(
        std::fs::read(m.join(f)).unwrap(),
        std::fs::read(whole.join(f)).unwrap()
    );
    // The run times came along (review, session 42: only results were copied, and the merged
    // report said "0.0 CPU-seconds"; quick runs can sum below 0.05 s, so the files are checked,
    // not the printed total).
    let cached = walk(&m.join("cache"));
    let results = cached
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"));
    for r in results {
        assert!(
            r.with_extension("time").exists(),
            "no run time for {}",
            r.display()
        );
    }
    assert!(cached
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "json")));
    // One shard alone is an incomplete merge: every point lacks replications, so no claim is
    // judged on the runs it happens to have (each reads NOT-RUN), and the report says why.
    // (Shard 1/2: replication 1 of every point, which was written as replication 0 before
    // session 36.)
    let part = tmpdir("merged-part");
    let out = msll()
        .current_dir(repo())
        .arg("merge")
        .arg(&b)
        .args([
            "--quick",
            "--reps",
            "2",
            "--only",
            "seed004-fig5.2",
            "--out",
        ])
        .arg(&part)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    let report = std::fs::read_to_string(part.join("report/README.md")).unwrap();
    let full = std::fs::read_to_string(m.join("report/README.md")).unwrap();
    let judged = |r: &str| r.matches("| PASS |").count() + r.matches("| FAIL |").count();
    assert!(judged(&full) > 0, "{full}");
    assert_eq!(judged(&report), 0, "{err}\n{report}");
    assert!(
        report.contains("not judged: points or replications missing"),
        "{report}"
    );
    // Its runs keep their own replication numbers (not their positions among the runs it has):
    // every row is a row of the whole run's file.
    let whole_rows = std::fs::read_to_string(whole.join(f)).unwrap();
    let part_rows = std::fs::read_to_string(part.join(f)).unwrap();
    let whole_rows: std::collections::BTreeSet<&str> = whole_rows.lines().collect();
    assert!(part_rows.lines().count() > 1, "{part_rows}");
    for row in part_rows.lines() {
        assert!(whole_rows.contains(row), "{row}");
    }
}

/// `msll run --point` keeps the points whose label contains one of the patterns (union), and a
/// pattern that matches nothing is a one-line error with exit code 2 that lists the labels.
#[test]
fn run_selects_points_by_label() {
    let d = tmpdir("point");
    let f = d.join("sweep.toml");
    std::fs::write(
        &f,
        format!("{GOOD}\n[sweep]\nlevel = [1, 2]\nscheme = [\"default\", \"rlp-oos\"]\n"),
    )
    .unwrap();
    let out = run_ok(
        msll()
            .args(["run", "--format", "csv", "--point", "L2/rlp-oos,L1/default"])
            .arg(&f),
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let points: std::collections::BTreeSet<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(
        points.into_iter().collect::<Vec<_>>(),
        ["cellular/LAN1/L1/default", "cellular/LAN1/L2/rlp-oos"],
        "{csv}"
    );
    let out = msll()
        .args(["run", "--point", "L9"])
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("sweep.toml")
            && err.contains("--point \"L9\"")
            && err.contains("cellular/LAN1/L2/rlp-oos"),
        "{err}"
    );
}

/// `msll bench --out` writes a report that `--baseline` reads back and compares against; a file
/// that is not such a report is a one-line error naming it, before anything runs.
/// `bench --against` runs two builds in alternating pairs and says whether they simulated the same
/// thing; a path that is not an msll build is an error naming it, not a panic.
#[test]
fn bench_against_another_build() {
    let me = PathBuf::from(env!("CARGO_BIN_EXE_msll"));
    let out = run_ok(
        msll()
            .args(["bench", "--only", "a10", "--pairs", "2", "--against"])
            .arg(&me),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("a10"))
        .expect("a10 row");
    assert!(row.contains("same results"), "{text}");
    // 2 pairs cannot show a difference at 5 %.
    assert!(row.contains("no difference shown"), "{text}");
    assert!(text.contains("2 alternating pairs per case"), "{text}");

    let d = tmpdir("against");
    let fake = d.join("not-msll");
    for f in [fake.clone(), PathBuf::from("/bin/true")] {
        let out = msll()
            .args(["bench", "--only", "a10", "--pairs", "1", "--against"])
            .arg(&f)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(f.to_str().unwrap()) && !err.contains("panicked"),
            "{err}"
        );
    }
}

#[test]
fn bench_reports_serve_as_baselines() {
    let d = tmpdir("bench");
    let base = d.join("base.json");
    let out = run_ok(
        msll()
            .args(["bench", "--only", "a10", "--repeat", "1", "--out"])
            .arg(&base),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("a10") && !text.contains("speed-up"), "{text}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    assert_eq!(report["cases"][0]["case"], "a10");
    assert!(report["cases"][0]["events"].as_u64().unwrap() > 10_000);
    assert!(report["cases"][0]["wall_s"].as_f64().unwrap() > 0.0);
    // OMNeT++'s speedometer: simulated seconds per second, events per simulated second.
    let c = &report["cases"][0];
    let (wall, events) = (c["wall_s"].as_f64().unwrap(), c["events"].as_f64().unwrap());
    let sim_s = c["sim_s_per_s"].as_f64().unwrap() * wall;
    assert!(sim_s > 100.0, "a10 simulates minutes: {c}");
    let ev_per_sim_s = c["events_per_sim_s"].as_f64().unwrap();
    assert!((ev_per_sim_s * sim_s / events - 1.0).abs() < 1e-9, "{c}");

    let out = run_ok(
        msll()
            .args(["bench", "--only", "a10", "--repeat", "1", "--baseline"])
            .arg(&base),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text.lines().find(|l| l.starts_with("a10")).unwrap();
    assert!(
        text.contains("speed-up") && row.trim_end().ends_with('x'),
        "{text}"
    );
    // The report names the machine that measured it; against a baseline from the same machine
    // there is no warning, against one from another (or an unrecorded) machine there is.
    let m = &report["machine"];
    assert!(m["cores"].as_u64().unwrap() >= 1, "{report}");
    assert!(!m["cpu"].as_str().unwrap().is_empty(), "{report}");
    assert!(
        text.lines().next().unwrap().starts_with("machine: "),
        "{text}"
    );
    assert!(!text.contains("baseline was measured on"), "{text}");
    let mut other = report.clone();
    other["machine"]["cpu"] = "Some Other CPU".into();
    let other_path = d.join("other.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    let mut old = report.clone();
    old.as_object_mut().unwrap().remove("machine");
    let old_path = d.join("old.json");
    std::fs::write(&old_path, old.to_string()).unwrap();
    for (f, says) in [
        (&other_path, "Some Other CPU"),
        (&old_path, "an unrecorded machine"),
    ] {
        let out = run_ok(
            msll()
                .args(["bench", "--only", "a10", "--repeat", "1", "--baseline"])
                .arg(f),
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains(&format!("note: the baseline was measured on {says}")),
            "{text}"
        );
    }

    let bad = d.join("bad.json");
    std::fs::write(&bad, "{\"cases\": 3}").unwrap();
    for f in [bad, d.join("missing.json")] {
        let out = msll()
            .args(["bench", "--only", "a10", "--baseline"])
            .arg(&f)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("bench baseline")
                && err.contains(f.file_name().unwrap().to_str().unwrap()),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "nothing ran");
    }
}

/// A reader that stops early (`msll list | head`, `msll run ... | head`) ends the command quietly
/// with success, as Unix tools do, instead of a panic: the read end is closed before the command
/// writes anything.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let d = tmpdir("pipe");
    let f = d.join("s.toml");
    std::fs::write(&f, GOOD).unwrap();
    let catalogue = repo().join("scenarios");
    let mut list = msll();
    list.arg("list").arg("--scenarios").arg(&catalogue);
    let mut run = msll();
    run.arg("run").arg(&f);
    for cmd in [&mut list, &mut run] {
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{cmd:?}: {err}");
        assert!(!err.contains("panicked"), "{cmd:?}: {err}");
    }
}

/// Counts that must be positive are refused at 0, and `bench --only` refuses names that are not
/// cases, instead of quietly running one replication, all cores, or nothing at all.
#[test]
fn zero_counts_and_unknown_bench_cases_are_refused() {
    let scenario = repo().join("scenarios/seed004/fig5_04-05.toml");
    let s = scenario.to_str().unwrap();
    for (args, needle) in [
        (vec!["run", s, "--reps", "0"], "'--reps <REPS>'"),
        (vec!["run", s, "--threads", "0"], "'--threads <THREADS>'"),
        (vec!["reproduce", "--reps", "0"], "'--reps <REPS>'"),
        (vec!["reproduce", "--threads", "0"], "'--threads <THREADS>'"),
        (vec!["bench", "--repeat", "0"], "'--repeat <REPEAT>'"),
        (
            vec!["bench", "--pairs", "0", "--against", "x"],
            "'--pairs <PAIRS>'",
        ),
    ] {
        let out = msll().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(needle) && err.contains("'0'"),
            "{args:?}: {err}"
        );
    }
    let out = msll()
        .args(["bench", "--only", "a10,nope"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--only: no bench case nope (cases: a, a10,") && err.contains("scaling"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing measured");
    // `scaling` is no case of `--against`, and a missing binary is named before any output.
    let out = msll()
        .args(["bench", "--only", "scaling", "--against", "/bin/true"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no bench case scaling"));
    let out = msll()
        .args(["bench", "--only", "a10", "--against", "/nonexistent/msll"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--against /nonexistent/msll: no such file"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// A run that measured no time (here: WWW over the worst cellular level, where the quick run
/// completes no page) records NaN, which the cache keeps across invocations (it was written as
/// JSON `null` and then refused on reading: session 24) and the summary counts out of `n`.
#[test]
fn unmeasured_times_survive_the_cache_as_nan() {
    let out = tmpdir("nan-cache");
    for executed in [
        "(60 executed now, 0 missing)",
        "(0 executed now, 0 missing)",
    ] {
        let st = run_ok(
            msll()
                .current_dir(repo())
                .args(["reproduce", "--quick", "--only", "seed004-fig4.12", "--out"])
                .arg(&out.0),
        );
        let err = String::from_utf8_lossy(&st.stderr);
        assert!(err.contains(executed), "{err}");
    }
    let csv = std::fs::read_to_string(out.0.join("data/seed004_fig4_12.csv")).unwrap();
    let row = csv
        .lines()
        .find(|l| {
            l.contains(",cellular/WAN2/L4/default,") && l.contains(",www.mean_transaction_s,")
        })
        .expect("a row for the point");
    assert!(row.contains(",www.mean_transaction_s,NaN,NaN,0,"), "{row}");
}

/// `msll run`'s table says when replications measured nothing: "not measured" for none, "(n=k)"
/// when only k did (the WWW client completes no page in 20 s of the worst cellular level, and a
/// page in 2 of 6 replications of 1000 s).
#[test]
fn the_table_says_how_many_runs_measured_a_time() {
    let text = |duration: u32, reps: u32| {
        format!(
            "[scenario]\nname = \"w\"\nmetrics = [\"www.transactions\", \"www.mean_transaction_s\"]\n\
             replications = {reps}\nseed = 1\nduration_s = {duration}\n[link]\npreset = \"cellular\"\n\
             [topology]\nname = \"WAN2\"\n[sweep]\nlevel = [4]\nscheme = [\"default\"]\n\
             [[app]]\nkind = \"www\"\n"
        )
    };
    let d = tmpdir("notmeasured");
    let f = d.join("w.toml");
    std::fs::write(&f, text(20, 3)).unwrap();
    let out = String::from_utf8(run_ok(msll().arg("run").arg(&f)).stdout).unwrap();
    let row = out.lines().find(|l| l.starts_with("cellular/")).unwrap();
    assert!(row.ends_with(" not measured"), "{out}");
    std::fs::write(&f, text(1000, 6)).unwrap();
    let out = String::from_utf8(run_ok(msll().arg("run").arg(&f)).stdout).unwrap();
    let row = out.lines().find(|l| l.starts_with("cellular/")).unwrap();
    assert!(row.ends_with(" (n=2)"), "{out}");
    // The columns stay aligned: the header is as wide as the widest row.
    let head = out.lines().find(|l| l.starts_with("point")).unwrap();
    assert_eq!(head.chars().count(), row.chars().count(), "{out}");
}

/// The `column` cell of a summary CSV's first row for `metric`.
fn summary_cell(csv: &str, metric: &str, column: &str) -> String {
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = head
        .iter()
        .position(|&h| h == column)
        .unwrap_or_else(|| panic!("no {column} column in\n{csv}"));
    let row = csv
        .lines()
        .find(|l| l.contains(&format!(",{metric},")))
        .unwrap_or_else(|| panic!("no {metric} row in\n{csv}"));
    row.split(',').nth(col).unwrap().to_string()
}

/// Every summary carries the 95 % confidence interval of its mean: the CSV's `ci95` column, the
/// JSON's `ci95` field and the table with `--interval ci95` agree with each other and with the
/// Student-t half-width recomputed from the replications of `*.runs.csv`.
#[test]
fn summaries_carry_the_confidence_interval_of_the_mean() {
    let d = tmpdir("ci95");
    let f = d.join("c.toml");
    std::fs::write(
        &f,
        "[scenario]\nname = \"c\"\nmetrics = [\"conf.loss\"]\nreplications = 5\nseed = 3\n\
         duration_s = 60\n[link]\npreset = \"cellular\"\n[sweep]\nlevel = [3]\n\
         scheme = [\"default\"]\n[[app]]\nkind = \"conference\"\n",
    )
    .unwrap();
    // Run with `extra` options into `dir`; the summary CSV and the JSON it wrote.
    let run_into = |dir: &Path, extra: &[&str]| {
        run_ok(msll().arg("run").args(extra).arg("--out").arg(dir).arg(&f));
        let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
        let json: serde_json::Value = serde_json::from_str(&read("c.json")).unwrap();
        (
            read("c.csv"),
            json["points"][0]["metrics"]["conf.loss"].clone(),
        )
    };
    let out = d.join("out");
    let (csv, m) = run_into(&out, &[]);
    // The five replications' losses, from the per-run CSV.
    let runs = std::fs::read_to_string(out.join("c.runs.csv")).unwrap();
    let xs: Vec<f64> = runs
        .lines()
        .filter(|l| l.contains(",conf.loss,"))
        .map(|l| l.split(',').nth(8).unwrap().parse().unwrap())
        .collect();
    assert_eq!(xs.len(), 5, "{runs}");
    let mean = xs.iter().sum::<f64>() / 5.0;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 4.0).sqrt();
    assert!(sd > 0.0, "the replications differ: {xs:?}");
    // t(0.975, 4) = 2.776445.
    let expect = 2.776_445 * sd / 5f64.sqrt();
    let ci: f64 = summary_cell(&csv, "conf.loss", "ci95").parse().unwrap();
    assert!((ci - expect).abs() < 1e-4 * expect, "{ci} vs {expect}");
    // (serde_json's default float parsing may be one unit in the last place off.)
    let j = m["ci95"].as_f64().expect("a number");
    assert!((j - ci).abs() <= 1e-15 * ci, "{m} vs {ci}");
    assert_eq!(m["n"].as_u64(), Some(5), "{m}");
    // The table prints the sd by default and the interval when asked.
    let table = |iv: &str| {
        let o = run_ok(msll().args(["run", "--interval", iv]).arg(&f));
        String::from_utf8(o.stdout).unwrap()
    };
    let (t_sd, t_ci) = (table("sd"), table("ci95"));
    assert!(t_sd.contains(&format!("± {sd:.6}")), "{t_sd}");
    assert!(t_ci.contains(&format!("± {ci:.6}")), "{t_ci}");
    assert!(t_ci.contains("95 % confidence interval"), "{t_ci}");
    // A single replication has no interval: NaN in the CSV, null in the JSON.
    let (csv, m) = run_into(&d.join("one"), &["--reps", "1"]);
    assert_eq!(summary_cell(&csv, "conf.loss", "ci95"), "NaN", "{csv}");
    assert!(m["ci95"].is_null(), "{m}");
}

/// `msll fit` on a recorded trace prints `error = { ... }` lines that a scenario takes as they
/// are; a trace with other characters is a one-line error naming the file and line.
#[test]
fn fit_prints_error_lines_a_scenario_accepts() {
    let d = tmpdir("fit");
    // A Gilbert channel (p = 0.05, r = 0.4) from a fixed-seed generator.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut u = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut bad_state = false;
    let mut trace = String::new();
    for i in 0..20_000 {
        trace.push(if bad_state { '1' } else { '0' });
        if i % 80 == 79 {
            trace.push('\n');
        }
        bad_state = u() < if bad_state { 0.6 } else { 0.05 };
    }
    let f = d.join("radio.txt");
    std::fs::write(&f, &trace).unwrap();
    let out = String::from_utf8(run_ok(msll().arg("fit").arg(&f)).stdout).unwrap();
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("error = ")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    let field = |l: &str, k: &str| -> f64 {
        let rest = &l[l.find(&format!("{k} = ")).unwrap() + k.len() + 3..];
        rest.split([',', ' ']).next().unwrap().parse().unwrap()
    };
    assert!(
        (field(lines[0], "p_good_to_bad") - 0.05).abs() < 0.006,
        "{out}"
    );
    assert!(
        (field(lines[0], "p_bad_to_good") - 0.4).abs() < 0.03,
        "{out}"
    );
    assert_eq!(field(lines[0], "loss_bad"), 1.0);
    // Each printed line is a valid scenario error model.
    for (i, l) in lines.iter().enumerate() {
        let (code, err) = bad(
            &format!("fit-{i}"),
            &GOOD.replace("[link]", &format!("[link]\n{l}")),
        );
        assert_eq!(code, 0, "{l}: {err}");
    }
    std::fs::write(&f, "0 1 0\n0 2 1\n").unwrap();
    let o = msll().arg("fit").arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("radio.txt") && err.contains("line 2") && err.contains("'2'"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A figure with `error_bars = "ci95"` draws and tabulates the mean's 95 % confidence interval
/// (the value of the data file's `ci95` column), and says so; others keep ± 1 sd.
#[test]
fn figures_can_draw_confidence_intervals() {
    let d = tmpdir("ci-figure");
    let sc = format!(
        "{}\n[sweep]\nlevel = [3]\nscheme = [\"default\"]\n\
         [[figure]]\nid = \"t-ci\"\nmetric = \"conf.loss\"\nerror_bars = \"ci95\"\n\
         [[figure]]\nid = \"t-sd\"\nmetric = \"conf.loss\"\n",
        GOOD.replace("duration_s = 5", "duration_s = 60")
    );
    std::fs::write(d.join("t.toml"), sc).unwrap();
    let out = d.join("out");
    run_ok(
        msll()
            .args(["reproduce", "--reps", "4", "--scenarios"])
            .arg(&d)
            .arg("--out")
            .arg(&out),
    );
    let csv = std::fs::read_to_string(out.join("data").join("t.csv")).unwrap();
    let col = |k: &str| -> f64 { summary_cell(&csv, "conf.loss", k).parse().unwrap() };
    let (sd, ci) = (col("sd"), col("ci95"));
    assert!(
        ci > sd,
        "4 replications: t(0.975, 3) / 2 = 1.59 > 1 ({ci} vs {sd})"
    );
    let md = std::fs::read_to_string(out.join("report").join("README.md")).unwrap();
    let section = |id: &str| {
        let start = md.find(&format!("![{id}]")).expect("figure in the report");
        let before = &md[..start];
        let src = before.rfind("Source: ").unwrap();
        md[src..start + 400.min(md.len() - start)].to_string()
    };
    let (ci_sec, sd_sec) = (section("t-ci"), section("t-sd"));
    assert!(
        ci_sec.contains("mean ± 95 % confidence interval of the mean"),
        "{ci_sec}"
    );
    assert!(sd_sec.contains("mean ± 1 sd"), "{sd_sec}");
    // The report's cells print 4 significant decimals for values below 1.
    assert!(
        ci_sec.contains(&format!("± {ci:.4} |")),
        "{ci_sec}\nci95 {ci}"
    );
    assert!(
        sd_sec.contains(&format!("± {sd:.4} |")),
        "{sd_sec}\nsd {sd}"
    );
}

/// Without `scenario.metrics`, `msll run`'s table shows first what the scenario's figures plot
/// (seed 001's CBR figures plot mean + 1 sd, not the dissertation's mean + 2 sd), then the usual
/// metrics.
#[test]
fn the_table_leads_with_the_figures_metrics() {
    let d = tmpdir("figcols");
    let f = d.join("t.toml");
    std::fs::write(
        &f,
        format!("{GOOD}\n[[figure]]\nid = \"t-m1\"\nmetric = \"conf.delay_m1sd_ms\"\n"),
    )
    .unwrap();
    let out = String::from_utf8(run_ok(msll().arg("run").arg(&f)).stdout).unwrap();
    let head: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("point"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        head,
        [
            "point",
            "conf.delay_m1sd_ms",
            "conf.loss",
            "conf.delay_m2sd_ms",
            "link.frame_loss"
        ],
        "{out}"
    );
}

/// `msll run --out` names its three files after the whole scenario name, dots included: two
/// scenarios "fig5.4" and "fig5.5" once shared "fig5.csv" and "fig5.json". A conference whose
/// source sends nothing reports its loss as not measured (NaN), not as a perfect 0.
#[test]
fn run_out_keeps_dotted_names_and_nothing_sent_is_not_measured() {
    let d = tmpdir("dotted");
    for name in ["fig5.4", "fig5.5"] {
        let f = d.join(format!("{name}.toml"));
        std::fs::write(
            &f,
            GOOD.replace("name = \"t\"", &format!("name = \"{name}\"")),
        )
        .unwrap();
        let out = msll()
            .args(["run", "--reps", "1", "--out"])
            .arg(d.join("out"))
            .arg(&f)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for name in ["fig5.4", "fig5.5"] {
        for suffix in ["csv", "runs.csv", "json"] {
            let p = d.join("out").join(format!("{name}.{suffix}"));
            assert!(p.exists(), "{} missing", p.display());
        }
    }
    assert!(!d.join("out/fig5.csv").exists());
    // A source started 0.1 ns before the end (its start rounds to the end's nanosecond) sends
    // nothing.
    let f = d.join("late.toml");
    std::fs::write(
        &f,
        GOOD.replace(
            "kind = \"conference\"",
            "kind = \"conference\"\nstart_s = 4.9999999999",
        ),
    )
    .unwrap();
    let out = msll()
        .args(["run", "--format", "csv", "--reps", "1"])
        .arg(&f)
        .output()
        .unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    let row = |m: &str| {
        csv.lines()
            .find(|l| l.split(',').nth(6) == Some(m))
            .unwrap_or_else(|| panic!("no {m} row: {csv}"))
            .to_string()
    };
    assert!(row("conf.sent").contains(",conf.sent,0,"), "{csv}");
    let loss = row("conf.loss");
    assert!(loss.contains(",conf.loss,NaN,"), "{loss}");
}

/// One replication has no spread: the table prints each mean without a "±" (it printed
/// "± 0.000000", a confident-looking zero), and the CSV's sd and ci95 are NaN, not 0.
#[test]
fn one_replication_prints_no_spread() {
    let d = tmpdir("one-rep");
    let f = d.join("one.toml");
    std::fs::write(&f, GOOD).unwrap();
    let out = run_ok(msll().args(["run", "--reps", "1"]).arg(&f));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("(1 replications"), "{table}");
    let row = table.lines().find(|l| l.starts_with("cellular/")).unwrap();
    assert!(!row.contains('±') && !row.contains("NaN"), "{table}");
    let out = run_ok(
        msll()
            .args(["run", "--reps", "1", "--format", "csv"])
            .arg(&f),
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let row = csv
        .lines()
        .find(|l| l.contains(",conf.sent,"))
        .unwrap_or_else(|| panic!("{csv}"));
    let cols: Vec<&str> = row.split(',').collect();
    // scenario,point,link,topology,level,scheme,metric,mean,sd,n,ci95,...
    assert_eq!((cols[8], cols[9], cols[10]), ("NaN", "1", "NaN"), "{row}");
}

/// `reproduce` checks its output directory before it runs anything: a path that cannot hold the
/// cache (here a file) is an error naming it (review, session 42: the whole catalogue ran first,
/// then "Not a directory (os error 20)" named nothing).
#[test]
fn an_output_path_that_cannot_hold_the_cache_fails_before_running() {
    let d = tmpdir("badout");
    std::fs::write(d.join("t.toml"), GOOD).unwrap();
    let file = d.join("t.toml");
    let out = msll()
        .args(["reproduce", "--quick", "--scenarios"])
        .arg(&d)
        .arg("--out")
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&file.join("cache").display().to_string()),
        "{err}"
    );
}

/// A damaged cache file (an interrupted write, a full disk) is run again, not an error on every
/// later `reproduce` until someone deletes it (review, session 42).
#[test]
fn a_damaged_cached_run_is_run_again() {
    let d = tmpdir("damaged");
    std::fs::write(d.join("t.toml"), GOOD).unwrap();
    let run = || {
        msll()
            .args(["reproduce", "--quick", "--scenarios"])
            .arg(&d)
            .arg("--out")
            .arg(d.join("out"))
            .output()
            .unwrap()
    };
    assert!(run().status.success());
    let csv = std::fs::read(d.join("out").join("data").join("t.runs.csv")).unwrap();
    let cached: Vec<std::path::PathBuf> = walk(&d.join("out").join("cache"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(!cached.is_empty());
    let text = std::fs::read(&cached[0]).unwrap();
    std::fs::write(&cached[0], &text[..text.len() / 2]).unwrap();
    let out = run();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(err.contains("running it again"), "{err}");
    assert_eq!(std::fs::read(&cached[0]).unwrap(), text, "rewritten whole");
    assert_eq!(
        std::fs::read(d.join("out").join("data").join("t.runs.csv")).unwrap(),
        csv
    );
}

/// Every file under `dir`, recursively.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The report's figure tables say how many replications a mean covers when some measured
/// nothing, as `msll run`'s table does (review, session 42: seed 002's Fig. 4.8 printed means of
/// 7 and 5 of 10 replications as plain means).
#[test]
fn the_report_says_how_many_runs_a_mean_covers() {
    let d = tmpdir("reportn");
    std::fs::write(
        d.join("w.toml"),
        "[scenario]\nname = \"w\"\nreplications = 6\nseed = 1\nduration_s = 1000\n\
         [link]\npreset = \"cellular\"\n[topology]\nname = \"WAN2\"\n\
         [sweep]\nlevel = [4]\nscheme = [\"default\"]\n[[app]]\nkind = \"www\"\n\
         [[figure]]\nid = \"w-t\"\nmetric = \"www.mean_transaction_s\"\n",
    )
    .unwrap();
    run_ok(
        msll()
            .args(["reproduce", "--scenarios"])
            .arg(&d)
            .arg("--out")
            .arg(d.join("out")),
    );
    let md = std::fs::read_to_string(d.join("out").join("report").join("README.md")).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| default |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains(" (n=2) |"), "{row}");
}
