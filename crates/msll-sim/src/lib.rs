//! msll-sim: a deterministic discrete-event simulator for link-layer error recovery.
//!
//! Topologies of seed 004 §3.3 (static routing, no congestion):
//!
//! ```text
//!  LAN1/WAN1:  FH ==== LAN|WAN ==== BS ~~~~ wireless ~~~~ MH
//!  LAN2/WAN2:  MH-A ~~~~ wireless ~~~~ BS-A ==== LAN|WAN ==== BS-B ~~~~ wireless ~~~~ MH-B
//! ```
//!
//! Sources sit on the first node, sinks on the last. Each wireless interface runs an
//! `msll_proto::Endpoint` (the same code the daemon drives); wired interfaces are plain DropTail
//! transmitters. Same configuration + seed => bit-identical results.

pub mod app;
pub mod config;
pub mod error_model;
pub mod event;
pub mod frag;
pub mod metrics;
pub mod presets;
pub mod rng;
pub mod sim;
pub mod tcp;

pub use config::{AppSpec, IpQueues, IpService, SimConfig, TrafficStreams};
pub use metrics::{RunResult, Summary};
pub use sim::{RunError, Simulation, TcpTrace};
