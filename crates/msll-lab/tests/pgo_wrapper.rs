//! The build's rustc wrapper (tools/pgo/rustc-wrapper, named by .cargo/config.toml) adds the
//! committed PGO profile to optimised compilations only, links the optimised `msll` executable
//! statically on linux-gnu hosts, and otherwise runs rustc unchanged. These
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
    fake_rustc_on(dir, llvm, "x86_64-unknown-linux-gnu")
}

/// The same, on host `host`.
fn fake_rustc_on(dir: &Path, llvm: &str, host: &str) -> PathBuf {
    let p = dir.join(format!("rustc-llvm{llvm}-{host}"));
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -vV ]; then echo 'rustc 1.0.0'; echo 'host: {host}'; echo 'LLVM version: {llvm}.1.0'; exit 0; fi\necho \"$@\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// A fake C compiler answering `-print-file-name=libc.a` with an existing file (`found`) or, as
/// a compiler does when the archive is missing, with the bare name.
fn fake_cc(dir: &Path, found: bool) -> PathBuf {
    let p = dir.join(if found {
        "cc-with-libc-a"
    } else {
        "cc-without-libc-a"
    });
    let answer = if found {
        p.display().to_string()
    } else {
        "libc.a".to_string()
    };
    std::fs::write(&p, format!("#!/bin/sh\necho '{answer}'\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The wrapper's environment in a test: `MSLL_PGO`, `MSLL_PGO_GENERATE`, `MSLL_STATIC` (unset
/// when `None`), and whether the C compiler finds glibc's static archive.
#[derive(Default, Clone, Copy)]
struct Env<'a> {
    pgo: Option<&'a str>,
    generate: Option<&'a str>,
    static_link: Option<&'a str>,
    no_libc_a: bool,
}

/// The arguments rustc received through the wrapper.
fn through_wrapper(rustc: &Path, args: &[&str], pgo_env: Option<&str>) -> String {
    run_wrapper(
        rustc,
        args,
        Env {
            pgo: pgo_env,
            ..Env::default()
        },
    )
}

fn run_wrapper(rustc: &Path, args: &[&str], env: Env) -> String {
    let mut c = Command::new(pgo_dir().join("rustc-wrapper"));
    c.arg(rustc)
        .args(args)
        .env_remove("MSLL_PGO")
        .env_remove("MSLL_PGO_GENERATE")
        .env_remove("MSLL_STATIC")
        .env("CC", fake_cc(rustc.parent().unwrap(), !env.no_libc_a));
    for (var, v) in [
        ("MSLL_PGO", env.pgo),
        ("MSLL_PGO_GENERATE", env.generate),
        ("MSLL_STATIC", env.static_link),
    ] {
        if let Some(v) = v {
            c.env(var, v);
        }
    }
    let out = c.output().expect("the wrapper runs under /bin/sh");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A fresh directory `name-PID` holding a fake rustc with the committed profile's LLVM, and the
/// flags the wrapper adds for that profile.
fn fixture(name: &str) -> (PathBuf, PathBuf, String) {
    let tmp = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let rustc = fake_rustc(&tmp, &committed_llvm());
    let pgo = format!(
        "-Cprofile-use={} -Cllvm-args=-no-pgo-warn-mismatch",
        pgo_dir().join("msll.profdata").display()
    );
    (tmp, rustc, pgo)
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
    let (tmp, same, pgo) = fixture("msll-pgo-wrapper");
    let with = format!("--crate-name x -C opt-level=3 {pgo}");
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
        run_wrapper(
            &same,
            &opt,
            Env {
                generate: Some("/tmp/raw"),
                ..Env::default()
            }
        ),
        format!("{} -Cprofile-generate=/tmp/raw", opt.join(" "))
    );
    assert_eq!(
        run_wrapper(
            &same,
            &debug,
            Env {
                generate: Some("/tmp/raw"),
                ..Env::default()
            }
        ),
        debug.join(" ")
    );
    // Cargo's own queries pass through.
    assert_eq!(
        through_wrapper(&same, &["-vV"], None),
        format!(
            "rustc 1.0.0\nhost: x86_64-unknown-linux-gnu\nLLVM version: {}.1.0",
            committed_llvm()
        )
    );
    std::fs::remove_dir_all(&tmp).ok();
}

#[test]
fn only_the_optimised_msll_executable_on_linux_gnu_is_linked_statically() {
    let (tmp, same, pgo) = fixture("msll-static-wrapper");
    let bin = [
        "--crate-name",
        "msll",
        "crates/msll-lab/src/main.rs",
        "--crate-type",
        "bin",
        "-C",
        "opt-level=3",
    ];
    assert_eq!(
        through_wrapper(&same, &bin, None),
        format!("{} {pgo} -Ctarget-feature=+crt-static", bin.join(" "))
    );
    // Without the profile it is still static; MSLL_STATIC=0 turns only the static link off.
    assert_eq!(
        through_wrapper(&same, &bin, Some("0")),
        format!("{} -Ctarget-feature=+crt-static", bin.join(" "))
    );
    assert_eq!(
        run_wrapper(
            &same,
            &bin,
            Env {
                static_link: Some("0"),
                ..Env::default()
            }
        ),
        format!("{} {pgo}", bin.join(" "))
    );
    // Not static: a debug build, the bin's unit-test harness, another crate or crate type, an
    // explicit --target, a host that is not linux-gnu.
    let debug = [&bin[..5], &["-C", "opt-level=0"]].concat();
    assert_eq!(through_wrapper(&same, &debug, None), debug.join(" "));
    let harness = [
        "--crate-name",
        "msll",
        "crates/msll-lab/src/main.rs",
        "--test",
        "-C",
        "opt-level=3",
    ];
    assert_eq!(
        through_wrapper(&same, &harness, None),
        format!("{} {pgo}", harness.join(" "))
    );
    for other in [
        ["--crate-name", "mslld", "x", "--crate-type", "bin"],
        ["--crate-name", "msll_lab", "x", "--crate-type", "lib"],
        ["--crate-name", "msll", "x", "--crate-type", "lib"],
    ] {
        let args = [&other[..], &["-C", "opt-level=3"]].concat();
        assert_eq!(
            through_wrapper(&same, &args, None),
            format!("{} {pgo}", args.join(" "))
        );
    }
    let cross = [&bin[..], &["--target", "x86_64-unknown-linux-gnu"]].concat();
    assert_eq!(
        through_wrapper(&same, &cross, None),
        format!("{} {pgo}", cross.join(" "))
    );
    let mac = fake_rustc_on(&tmp, &committed_llvm(), "aarch64-apple-darwin");
    assert_eq!(
        through_wrapper(&mac, &bin, None),
        format!("{} {pgo}", bin.join(" "))
    );
    // No static glibc archive (Fedora without glibc-static): a dynamic link, not a failed one.
    assert_eq!(
        run_wrapper(
            &same,
            &bin,
            Env {
                no_libc_a: true,
                ..Env::default()
            }
        ),
        format!("{} {pgo}", bin.join(" "))
    );
    std::fs::remove_dir_all(&tmp).ok();
}
