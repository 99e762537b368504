//! The `msll` binary: determinism of its files, and one-line errors (exit code 2) for bad input.

use std::path::{Path, PathBuf};
use std::process::Command;

fn msll() -> Command {
    Command::new(env!("CARGO_BIN_EXE_msll"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("msll-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn identical_csv_for_reruns_and_thread_counts() {
    let sc = repo().join("scenarios/seed004/fig5_10.toml");
    let (a, b, c) = (tmpdir("a"), tmpdir("b"), tmpdir("c"));
    run_to(&a, &sc, 1);
    run_to(&b, &sc, 1);
    run_to(&c, &sc, 2);
    for f in [
        "seed004_fig5_10.csv",
        "seed004_fig5_10.runs.csv",
        "seed004_fig5_10.json",
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
    let csv = String::from_utf8(std::fs::read(a.join("seed004_fig5_10.csv")).unwrap()).unwrap();
    assert!(csv.starts_with(
        "scenario,point,link,topology,level,scheme,metric,mean,sd,n,seed,msll_version\n"
    ));
    assert!(csv.contains("pcs/WAN2/L4/default,pcs,WAN2,4,default,conf.loss,"));
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

#[test]
fn good_scenario_runs() {
    let (code, err) = bad("good", GOOD);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn unknown_key() {
    assert_one_line_error(
        "unknown",
        &GOOD.replace("[link]", "[link]\nspeed = 3"),
        &["speed = 3", "unknown field"],
    );
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
    assert_one_line_error("trace", &t, &["nowhere.txt"]);
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
    let sc = repo().join("scenarios/seed004/fig5_04.toml");
    let st = msll()
        .args(["run", "--reps", "1"])
        .arg(&sc)
        .arg("--trace")
        .arg(&t)
        .output()
        .unwrap();
    assert!(st.status.success());
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
