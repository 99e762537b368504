//! The `mslld` command line: how it ends on errors and on a closed standard output.

use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mslld");

/// A reader that stops early (`mslld keygen | head -c 8`) ends the command quietly with success,
/// not with a panic: the read end is closed before the command writes.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let mut child = Command::new(BIN)
        .arg("keygen")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// An error is one line naming the program and the cause, with a failing exit status.
#[test]
fn errors_are_one_line_with_their_cause() {
    let out = Command::new(BIN)
        .args(["check", "--config", "/nonexistent/mslld.toml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("mslld: error: "), "{err}");
    assert!(err.contains("/nonexistent/mslld.toml"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// `mslld bench` refuses, before printing anything, what would measure nothing: an unknown scheme,
/// no time, no rate, packets smaller than their headers or larger than the loopback tunnel's MTU.
#[test]
fn bench_refuses_what_would_measure_nothing() {
    for (args, needle) in [
        (
            &["--scheme", "default,nope"][..],
            "--scheme nope: unknown scheme (schemes: default,",
        ),
        (&["--seconds", "0"][..], "--seconds 0: must be a positive"),
        (
            &["--seconds", "NaN"][..],
            "--seconds NaN: must be a positive",
        ),
        (
            &["--seconds", "1e20"][..],
            "--seconds 100000000000000000000: must be a positive number of seconds, at most 86400",
        ),
        (&["--size", "27"][..], "--size 27: must be in 28..=1400"),
        (&["--size", "1401"][..], "--size 1401: must be in 28..=1400"),
        (
            &["--rate-mbps", "0"][..],
            "--rate-mbps 0: must be a positive",
        ),
        (
            &["--rate-mbps", "1e9"][..],
            "--rate-mbps 1000000000: must be a positive rate in 0.001..=100000 Mbit/s",
        ),
    ] {
        let out = Command::new(BIN).arg("bench").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing measured");
    }
}
