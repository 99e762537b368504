//! The build's rustc wrapper (tools/pgo/rustc-wrapper, named by .cargo/config.toml) adds the
//! committed PGO profile to optimised compilations only, and otherwise runs rustc unchanged. These
//! tests run the real script with a stand-in "rustc" that prints its arguments (and an LLVM version
//! for `-vV`), so they check the rules without compiling anything.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pgo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tools/pgo")
        .canonicalize()
        .expect("tools/pgo exists")
}

fn committed_llvm() -> String {
    std::fs::read_to_string(pgo_dir().join("llvm-version"))
        .expect("tools/pgo/llvm-version is committed beside the profile")
        .trim()
        .to_string()
}

/// A fake rustc reporting LLVM `llvm` for `-vV` and echoing its arguments otherwise.
fn fake_rustc(dir: &Path, llvm: &str) -> PathBuf {
    let p = dir.join(format!("rustc-llvm{llvm}"));
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -vV ]; then echo 'rustc 1.0.0'; echo 'LLVM version: {llvm}.1.0'; exit 0; fi\necho \"$@\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The arguments rustc received through the wrapper.
fn through_wrapper(rustc: &Path, args: &[&str], pgo_env: Option<&str>) -> String {
    through_wrapper_with(rustc, args, pgo_env, None)
}

fn through_wrapper_with(
    rustc: &Path,
    args: &[&str],
    pgo_env: Option<&str>,
    generate: Option<&str>,
) -> String {
    let mut c = Command::new(pgo_dir().join("rustc-wrapper"));
    c.arg(rustc)
        .args(args)
        .env_remove("MSLL_PGO")
        .env_remove("MSLL_PGO_GENERATE");
    if let Some(v) = pgo_env {
        c.env("MSLL_PGO", v);
    }
    if let Some(d) = generate {
        c.env("MSLL_PGO_GENERATE", d);
    }
    let out = c.output().expect("the wrapper runs under /bin/sh");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn the_committed_profile_and_its_llvm_version_are_present() {
    let meta = std::fs::metadata(pgo_dir().join("msll.profdata")).expect("profile committed");
    assert!(meta.len() > 100_000, "profile of {} bytes", meta.len());
    let v = committed_llvm();
    assert!(
        !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()),
        "llvm-version holds an LLVM major version, not {v:?}"
    );
}

#[test]
fn optimised_compilations_get_the_profile_and_nothing_else_does() {
    let tmp = std::env::temp_dir().join(format!("msll-pgo-wrapper-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let same = fake_rustc(&tmp, &committed_llvm());
    let prof = pgo_dir().join("msll.profdata");
    let with = format!(
        "--crate-name x -C opt-level=3 -Cprofile-use={} -Cllvm-args=-no-pgo-warn-mismatch",
        prof.display()
    );
    let opt = ["--crate-name", "x", "-C", "opt-level=3"];
    assert_eq!(through_wrapper(&same, &opt, None), with);

    // Unchanged: debug builds, MSLL_PGO=0, instrumenting builds, an existing profile, sanitizers.
    let debug = ["--crate-name", "x", "-C", "opt-level=0"];
    assert_eq!(through_wrapper(&same, &debug, None), debug.join(" "));
    for extra in [
        "-Cprofile-generate=/tmp/raw",
        "-Cprofile-use=/other",
        "-Cpasses=sancov-module",
        "-Zsanitizer=address",
    ] {
        let args = [&opt[..], &[extra]].concat();
        assert_eq!(through_wrapper(&same, &args, None), args.join(" "));
    }
    assert_eq!(through_wrapper(&same, &opt, Some("0")), opt.join(" "));
    assert_eq!(through_wrapper(&same, &opt, Some("1")), with);

    // A rustc with another LLVM cannot read the profile: it builds without it.
    let other = fake_rustc(&tmp, "1");
    assert_eq!(through_wrapper(&other, &opt, None), opt.join(" "));
    // Training (refresh.sh): optimised compilations are instrumented instead, with the target
    // flags cargo passes (no RUSTFLAGS override), and get no profile.
    assert_eq!(
        through_wrapper_with(&same, &opt, None, Some("/tmp/raw")),
        format!("{} -Cprofile-generate=/tmp/raw", opt.join(" "))
    );
    assert_eq!(
        through_wrapper_with(&same, &debug, None, Some("/tmp/raw")),
        debug.join(" ")
    );
    // Cargo's own queries pass through.
    assert_eq!(
        through_wrapper(&same, &["-vV"], None),
        format!("rustc 1.0.0\nLLVM version: {}.1.0", committed_llvm())
    );
    std::fs::remove_dir_all(&tmp).ok();
}
