//! Helpers shared by the simulator's integration tests.

use msll_sim::{RunResult, SimConfig, Simulation};

/// Replications 0..reps of `cfg`, in order.
pub fn runs(cfg: &SimConfig, reps: u32) -> Vec<RunResult> {
    (0..reps)
        .map(|r| {
            let mut c = cfg.clone();
            c.replication = r;
            Simulation::new(&c, std::path::Path::new("."))
                .unwrap()
                .run()
                .unwrap()
        })
        .collect()
}
