//! The committed PGO profile (tools/pgo/) names functions by their crates' hashes, and Cargo
//! derives a crate's hash from its features and LTO mode and from its dependencies' hashes. The
//! profile is trained on `cargo build --release --bin msll`; for it to apply to a whole-workspace
//! build too (`cargo build --release`, CI's `cargo test --workspace --release`), the simulator's
//! crates must be compiled alike in both. Until session 18 they were not, and those builds lost
//! ~10 % of instructions silently (tools/pgo/README.md). Two things change a dependency between
//! the two builds, and this test checks that neither reaches msll-sim or msll-proto:
//! - another workspace member enabling more features of a shared dependency (feature
//!   unification);
//! - a `cdylib`/`staticlib` crate of another member (mslld's `tun-rs`) depending on it: Cargo
//!   then compiles it with object code instead of bitcode only, under another hash.
//!
//! It asks Cargo itself (`cargo metadata`, `cargo tree`), offline, so it needs no network.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .current_dir(workspace())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn host() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    run(Command::new(rustc).arg("-vV"))
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host")
}

/// `cargo tree` over `sel` (normal dependencies on the host, proc-macros left out: they are
/// compiled for the host, apart), as package ("name vX.Y.Z") -> its features.
fn tree(sel: &[&str], host: &str) -> BTreeMap<String, String> {
    let mut args = vec![
        "tree",
        "--offline",
        "-e",
        "normal,no-proc-macro",
        "--prefix",
        "none",
        "--target",
        host,
        "-f",
        "{p}|{f}",
    ];
    args.extend_from_slice(sel);
    run(Command::new(cargo()).args(&args))
        .lines()
        .filter_map(|l| {
            let (p, f) = l.split_once('|')?;
            let key: Vec<&str> = p.split(' ').take(2).collect();
            Some((key.join(" "), f.trim_end_matches(" (*)").trim().to_string()))
        })
        .collect()
}

#[test]
fn the_simulator_crates_build_alike_in_workspace_and_msll_only_builds() {
    let host = host();
    // The simulator's crates and everything they depend on, in the `--bin msll` build.
    let sim = tree(&["-p", "msll-sim", "-p", "msll-proto"], &host);
    assert!(
        sim.contains_key("msll-proto v0.1.0") && sim.len() >= 5,
        "closure found: {sim:?}"
    );

    // 1. No cdylib/staticlib crate of the workspace build depends on any of them.
    let all = tree(&["--workspace"], &host);
    let full: serde_json::Value = serde_json::from_str(&run(Command::new(cargo()).args([
        "metadata",
        "--format-version",
        "1",
        "--offline",
        "--filter-platform",
        &host,
    ])))
    .expect("cargo metadata prints JSON");
    let mut shared_libs = Vec::new();
    for p in full["packages"].as_array().expect("packages") {
        let label = format!(
            "{} v{}",
            p["name"].as_str().unwrap(),
            p["version"].as_str().unwrap()
        );
        let shared = p["targets"].as_array().unwrap().iter().any(|t| {
            t["crate_types"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| matches!(k.as_str(), Some("cdylib" | "staticlib" | "dylib")))
        });
        if shared && all.contains_key(&label) {
            shared_libs.push(label);
        }
    }
    for lib in &shared_libs {
        let spec = lib.replacen(" v", "@", 1);
        let below = tree(&["-p", &spec], &host);
        let both: Vec<&String> = sim.keys().filter(|k| below.contains_key(*k)).collect();
        assert!(
            both.is_empty(),
            "{lib} is also a cdylib/staticlib, so a workspace build compiles {both:?} with object \
             code under another hash than `--bin msll` does, and the PGO profile stops applying \
             to msll-sim/msll-proto: drop that dependency from the simulator crates \
             (tools/pgo/README.md)"
        );
    }
    assert!(
        shared_libs.iter().any(|l| l.starts_with("tun-rs ")),
        "the check should see mslld's tun-rs: {shared_libs:?}"
    );

    // 2. Each of them has the same features whether mslld is part of the build or not.
    let alone = tree(&["-p", "msll-lab"], &host);
    for label in sim.keys() {
        assert_eq!(
            alone.get(label),
            all.get(label),
            "{label}: features differ between `--bin msll` and workspace builds, so its crate \
             hash does too and the PGO profile stops applying (tools/pgo/README.md)"
        );
    }
}
