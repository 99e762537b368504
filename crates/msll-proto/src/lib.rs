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

pub mod buf;
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

pub use buf::Buf;
pub use classifier::{Classifier, ClassifierConfig};
pub use endpoint::{Endpoint, ServiceCounters};
pub use multi::{MsllConfig, ServiceMetrics, TimerScaling};
pub use packet::Packet;
pub use scheduler::{Discipline, Scheduler};
pub use service::{LinkInfo, Outbox, Role, SchemeConfig, Service, ServiceStats};
pub use time::{DataRate, Duration, Instant, Timer, TxTimes};
pub use wire::Frame;

/// Hand each element of `v` to `f`, in order, leaving `v` empty with its capacity. The hot paths
/// (endpoint outputs, the simulator's delivered packets) almost always hold exactly one element,
/// which is popped: setting up and dropping a `Drain` costs ~40 instructions per call (callgrind).
#[inline]
pub fn take_each<T>(v: &mut Vec<T>, mut f: impl FnMut(T)) {
    match v.len() {
        0 => {}
        1 => f(v.pop().expect("one element")),
        _ => v.drain(..).for_each(f),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn take_each_keeps_order_and_capacity() {
        for n in 0..4 {
            let mut v: Vec<u32> = Vec::with_capacity(8);
            v.extend(0..n);
            let mut got = Vec::new();
            super::take_each(&mut v, |x| got.push(x));
            assert_eq!(got, (0..n).collect::<Vec<_>>());
            assert!(v.is_empty());
            assert!(v.capacity() >= 8, "the buffer is reused, not reallocated");
        }
    }
}
