//! msll-proto: sans-IO protocol code of the multi-service link layer.
//!
//! Everything here is a state machine driven from outside: it takes `now` as an argument, returns
//! frames, delivered packets and its next deadline, and never reads a clock, sleeps, spawns, touches
//! a socket or draws OS randomness. The simulator (`msll-sim`) and the tunnel daemon drive the same
//! code.
//!
//! ```text
//!            IP (host or daemon TUN)                      IP
//!                 | handle_packet(now, pkt)                ^ poll_deliver()
//!                 v                                        |
//!          +------------+                          +--------------+
//!          | Classifier |  -> service number       | Multiplexer  |
//!          +------------+                          +--------------+
//!             |  |  |        (each: dyn Service)      ^  ^  ^
//!          [Default][SR/M2][RLP/OOS][Snoop]...   same objects, both directions
//!             |  |  |   Outbox::send(frame)            |  |  |  handle_frame(now, frame)
//!          +----------------------+               +--------------+
//!          | scheduler (SCFQ/FIFO)|               | Demultiplexer|
//!          +----------------------+               +--------------+
//!                 | poll_transmit(now)  (link free)        ^
//!                 v                                        |
//!            link: simulator channel, or daemon UDP socket-+
//! ```
#![forbid(unsafe_code)]

pub mod classifier;
pub mod endpoint;
pub mod multi;
pub mod packet;
pub mod scheduler;
pub mod service;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time;
pub mod wire;

pub use classifier::{Classifier, ClassifierConfig};
pub use endpoint::{Endpoint, ServiceCounters};
pub use multi::{MsllConfig, ServiceMetrics, TimerScaling};
pub use packet::Packet;
pub use scheduler::{Discipline, Scheduler};
pub use service::{LinkInfo, Outbox, Role, SchemeConfig, Service, ServiceStats};
pub use time::{DataRate, Duration, Instant, Timer};
pub use wire::Frame;
