//! msll-lab: experiments as data. Scenario files (TOML) -> sweeps x replications -> CSV/JSON,
//! tables, and (with `reproduce`) plots and a report.

pub mod bench;
pub mod claims;
pub mod fit;
pub mod machine;
pub mod output;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod runner;
pub mod scenario;
pub mod speed;
pub mod stats;
pub mod traces;

pub use runner::{run_scenario, PointResult, RunOptions};
pub use scenario::{Scenario, ScenarioError};
