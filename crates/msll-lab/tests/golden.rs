//! The model's fingerprint, and the rule the `reproduce` cache depends on.
//!
//! The cache keys a run by its resolved configuration, its input files, seed, replication and
//! `MODEL_REVISION`. A change of behaviour that leaves the configuration alone (a TCP fix, a
//! timer rule) must therefore bump `MODEL_REVISION`, or a rerun would mix old cached results
//! with new ones. This test runs every point of the catalogue once as `--quick` runs it and
//! compares with `tests/golden/quick-fingerprints.txt`:
//! - a point whose configuration hash is unchanged but whose results changed, with the same
//!   `MODEL_REVISION`, fails: bump `MODEL_REVISION` (src/reproduce.rs), then regenerate;
//! - new, removed or reconfigured points, or a new revision: regenerate.
//!
//! Regenerate with `MSLL_UPDATE_GOLDEN=1 cargo test --release -p msll-lab --test golden`. It
//! refuses to write while results changed under an unchanged configuration and revision.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use msll_lab::reproduce::{catalogue, fingerprints, Fingerprint, MODEL_REVISION};

const GOLDEN: &str = "tests/golden/quick-fingerprints.txt";

struct Golden {
    revision: u32,
    points: BTreeMap<(String, String), (u64, u64)>,
}

fn parse(text: &str) -> Golden {
    let mut lines = text.lines();
    let revision = lines
        .next()
        .and_then(|l| l.strip_prefix("model_revision "))
        .and_then(|v| v.trim().parse().ok())
        .expect("first line: model_revision N");
    let points = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            assert_eq!(f.len(), 4, "golden line {l:?}");
            let hex = |s: &str| u64::from_str_radix(s, 16).expect("hex");
            ((f[0].to_string(), f[1].to_string()), (hex(f[2]), hex(f[3])))
        })
        .collect();
    Golden { revision, points }
}

fn render(fps: &[Fingerprint]) -> String {
    let mut s = format!("model_revision {MODEL_REVISION}\n");
    for f in fps {
        writeln!(
            s,
            "{}|{}|{:016x}|{:016x}",
            f.scenario, f.point, f.config, f.results
        )
        .unwrap();
    }
    s
}

/// Compare fresh fingerprints with the golden file: (results changed under an unchanged
/// configuration and revision, other differences).
fn compare(g: &Golden, fps: &[Fingerprint]) -> (Vec<String>, Vec<String>) {
    let (mut unbumped, mut stale) = (Vec::new(), Vec::new());
    if g.revision != MODEL_REVISION {
        stale.push(format!(
            "MODEL_REVISION is {MODEL_REVISION}, the golden file has {}",
            g.revision
        ));
    }
    let mut seen = 0;
    for f in fps {
        match g.points.get(&(f.scenario.clone(), f.point.clone())) {
            Some(&(config, results)) => {
                seen += 1;
                if config != f.config {
                    stale.push(format!("{} {}: configuration changed", f.scenario, f.point));
                } else if results != f.results {
                    if g.revision == MODEL_REVISION {
                        unbumped.push(format!("{} {}", f.scenario, f.point));
                    } else {
                        stale.push(format!("{} {}: results changed", f.scenario, f.point));
                    }
                }
            }
            None => stale.push(format!("{} {}: new point", f.scenario, f.point)),
        }
    }
    if seen != g.points.len() {
        stale.push(format!("{} points removed", g.points.len() - seen));
    }
    (unbumped, stale)
}

const REGENERATE: &str = "MSLL_UPDATE_GOLDEN=1 cargo test --release -p msll-lab --test golden";

#[test]
fn model_fingerprint_matches_golden_and_model_revision() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cat = catalogue(&here.join("../../scenarios")).unwrap();
    let fps = fingerprints(&cat).unwrap();
    assert!(fps.len() > 1000, "{} points", fps.len());
    let path = here.join(GOLDEN);
    let golden = std::fs::read_to_string(&path).ok().map(|t| parse(&t));
    let (unbumped, stale) = match &golden {
        Some(g) => compare(g, &fps),
        None => (vec![], vec!["no golden file".to_string()]),
    };
    assert!(
        unbumped.is_empty(),
        "{} point(s) give different results under an unchanged configuration and MODEL_REVISION \
         {MODEL_REVISION}, so `msll reproduce` would reuse stale cached runs. If the change is \
         intended, bump MODEL_REVISION in crates/msll-lab/src/reproduce.rs and regenerate \
         ({REGENERATE}). First ones:\n{}",
        unbumped.len(),
        unbumped[..unbumped.len().min(10)].join("\n")
    );
    if std::env::var_os("MSLL_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, render(&fps)).unwrap();
        return;
    }
    assert!(
        stale.is_empty(),
        "the golden fingerprints are out of date ({} difference(s); regenerate with \
         {REGENERATE}):\n{}",
        stale.len(),
        stale[..stale.len().min(10)].join("\n")
    );
}

/// The comparison: what needs a MODEL_REVISION bump, what only needs regenerating.
#[test]
fn compare_separates_unbumped_changes_from_stale_entries() {
    let fp = |point: &str, config: u64, results: u64| Fingerprint {
        scenario: "s".into(),
        point: point.into(),
        config,
        results,
    };
    let golden = |revision: u32| Golden {
        revision,
        points: [
            (("s".to_string(), "a".to_string()), (1, 10)),
            (("s".to_string(), "b".to_string()), (2, 20)),
        ]
        .into_iter()
        .collect(),
    };
    let same = [fp("a", 1, 10), fp("b", 2, 20)];
    assert_eq!(compare(&golden(MODEL_REVISION), &same), (vec![], vec![]));
    // Results changed, configuration and revision did not: needs a bump.
    let (u, s) = compare(&golden(MODEL_REVISION), &[fp("a", 1, 11), fp("b", 2, 20)]);
    assert_eq!((u.len(), s.len()), (1, 0));
    // After the bump the same change is only a stale entry.
    let (u, s) = compare(
        &golden(MODEL_REVISION + 1),
        &[fp("a", 1, 11), fp("b", 2, 20)],
    );
    assert_eq!((u.len(), s.len()), (0, 2));
    // A reconfigured, a removed and a new point are stale entries.
    let (u, s) = compare(&golden(MODEL_REVISION), &[fp("a", 9, 99), fp("c", 3, 30)]);
    assert_eq!(u.len(), 0);
    assert_eq!(s.len(), 3, "{s:?}");
}

/// Fingerprints are deterministic and see behaviour: two levels of one sweep differ in both
/// configuration and results, and a rerun gives the same values.
#[test]
fn fingerprints_are_deterministic_and_distinguish_runs() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cat = catalogue(&here.join("../../scenarios")).unwrap();
    cat.retain(|sc| sc.name() == "seed004_fig5_02-03");
    assert_eq!(cat.len(), 1);
    cat[0].points.truncate(2);
    let a = fingerprints(&cat).unwrap();
    assert_eq!(a, fingerprints(&cat).unwrap());
    assert_ne!(a[0].config, a[1].config);
    assert_ne!(a[0].results, a[1].results);
}
