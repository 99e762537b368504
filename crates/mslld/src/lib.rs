//! mslld: the multi-service link layer as a tunnel daemon.
//!
//! ```text
//!   host A                                                    host B
//!   IP stack                                                  IP stack
//!     | TUN msll0                                               ^ TUN msll0
//!     v                                                         |
//!   Tunnel: ingress queue -> Endpoint (classifier, services,    Tunnel: auth/replay -> Endpoint
//!           scheduler) -> VirtualLink pacing -> seal                    -> poll_deliver -> TUN
//!     |                                                         ^
//!     +------------- UDP datagrams (XChaCha20-Poly1305) --------+
//! ```
//!
//! The protocol logic is `msll_proto::Endpoint`, the same object the simulator drives. This crate
//! adds the I/O loop (`daemon`), a sans-IO `Tunnel` holding the session/replay/pacing logic, the
//! datagram format (`wire`), emulated impairment (`impair`) and the stats socket (`control`).
//! Threat model and operation: docs/mslld.md.

pub mod bench;
pub mod config;
pub mod control;
pub mod daemon;
pub mod impair;
pub mod mss;
pub mod prom;
pub mod tunnel;
pub mod wire;

/// `N` bytes from the operating system's random source (keys, session ids).
///
/// Straight from `getrandom`, not through `rand`'s thread RNG: `rand`'s `thread_rng` feature here
/// would, by Cargo's feature unification, give a whole-workspace build another `rand` (and
/// `getrandom`, `libc`) than `cargo build --bin msll`, so other crate hashes for the simulator,
/// and the committed PGO profile (tools/pgo/) would silently not apply to it (issue 8, session 18).
pub fn os_random<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(std::io::Error::from)?;
    Ok(b)
}

pub use config::Config;
pub use tunnel::{Snapshot, Tunnel};
