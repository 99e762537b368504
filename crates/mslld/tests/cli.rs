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

/// A run that delivers nothing (here a 1400-byte packet takes 11 s at 1 kbit/s) is a failed
/// measurement, not a speed of 0 (review, session 47: it printed 0.000 Gbit/s and exited 0).
#[test]
fn bench_fails_when_nothing_is_delivered() {
    let out = Command::new(BIN)
        .args(["bench", "--scheme", "default", "--rate-mbps", "0.001"])
        .args(["--size", "1400", "--seconds", "0.5"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no packet delivered"), "{err}");
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

/// `mslld check` warns (on standard error, once) about a key file others can read, and is quiet
/// about one only its owner can (review, session 44: the warning went to a log `check` never
/// set up).
#[test]
fn check_warns_about_a_key_file_others_can_read() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("mslld-cli-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("psk");
    std::fs::write(
        &key,
        "8f1e0a3b5c7d9e2f4a6b8c0d1e3f5a7b9c1d3e5f7a9b1c3d5e7f9a1b3c5d7e9f\n",
    )
    .unwrap();
    let cfg = dir.join("mslld.toml");
    std::fs::write(
        &cfg,
        "bind = \"127.0.0.1:1\"\npeer = \"127.0.0.1:2\"\nkey_file = \"psk\"\n[tun]\naddress = \"198.19.0.1\"\n[link]\nrate_mbps = 10\ndelay_ms = 5\n[msll]\nservices = [{ kind = \"default\" }]\n",
    )
    .unwrap();
    let check = || {
        let out = Command::new(BIN)
            .args(["check", "--config"])
            .arg(&cfg)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        err
    };
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = check();
    assert_eq!(
        err.matches("readable by group or others").count(),
        1,
        "{err}"
    );
    assert!(err.contains(&key.display().to_string()), "{err}");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(check(), "");
    std::fs::remove_dir_all(&dir).unwrap();
}
