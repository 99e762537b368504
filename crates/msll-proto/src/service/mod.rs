//! The `Service` trait: one link-layer error-recovery scheme, one end of a "virtual private path".
//!
//! Seed 004 ch. 6 (seed004-ch6-9.md §2.4): a service is "not aware of the classifier, the scheduler
//! or the other services". It has one entry and one exit in each direction; frames handed to the
//! scheduler cannot be taken back; all its timers scale by one factor.
//!
//! Calling contract (quinn's taxonomy):
//! - inputs are `handle_packet` (from IP, via the classifier), `handle_frame` (from the peer, via
//!   the demultiplexer, service number already irrelevant) and `handle_timeout`;
//! - outputs leave through the `Outbox` passed to every input: frames to the scheduler, packets to
//!   the multiplexer (towards IP);
//! - after any input the driver re-reads `poll_timeout`. `handle_timeout` is harmless when called
//!   early or twice, so drivers never need to cancel wake-ups.
//!
//! A service never reads a clock, touches a socket, allocates timers in a runtime or draws OS
//! randomness.

pub mod raw;

use crate::packet::Packet;
use crate::time::{DataRate, Duration, Instant};
use crate::wire::Frame;
use serde::{Deserialize, Serialize};

pub use raw::Raw;

/// One link-layer scheme instance.
pub trait Service: Send {
    /// A packet from the layer above, routed here by the classifier.
    fn handle_packet(&mut self, now: Instant, packet: Packet, out: &mut Outbox);
    /// A frame from the peer service. Malformed frames are counted and dropped, never a panic.
    fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox);
    /// Fire every timer due at or before `now`. Early or repeated calls are harmless.
    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox);
    /// The earliest instant at which `handle_timeout` must be called.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Multiply every base timeout (n services, or 1/r_i; seed 004 ch. 6). Default: ignore.
    fn set_timer_factor(&mut self, _factor: f64) {}
    /// Counters for results and the daemon's stats command.
    fn stats(&self) -> ServiceStats;
    /// Short scheme name for traces and tables ("default", "sr-m2", ...).
    fn name(&self) -> &'static str;
    /// Fixed per-data-frame header bytes, used by the classifier to pace IP at the nominal rate
    /// "(packet size + fixed link-layer overhead) / link speed" (seed 004 ch. 6, L1207).
    fn header_overhead(&self) -> usize {
        1
    }
}

/// What a service hands on: frames to the scheduler and packets to the multiplexer.
/// A plain value so tests can assert on it directly.
#[derive(Debug, Default)]
pub struct Outbox {
    pub frames: Vec<Frame>,
    pub packets: Vec<Packet>,
}

impl Outbox {
    pub fn send(&mut self, frame: Frame) {
        self.frames.push(frame);
    }
    pub fn deliver(&mut self, packet: Packet) {
        self.packets.push(packet);
    }
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty() && self.packets.is_empty()
    }
    pub fn clear(&mut self) {
        self.frames.clear();
        self.packets.clear();
    }
}

/// Counters every scheme reports (a scheme leaves the ones it has no use for at zero).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceStats {
    /// Packets accepted from IP.
    pub packets_in: u64,
    /// Packets dropped on entry (window or buffer full).
    pub packets_dropped: u64,
    /// Packets released towards IP.
    pub packets_delivered: u64,
    /// Every frame handed to the scheduler.
    pub frames_sent: u64,
    /// First transmissions of data frames.
    pub data_frames: u64,
    /// Data frame retransmissions.
    pub retransmissions: u64,
    pub acks_sent: u64,
    pub naks_sent: u64,
    pub keepalives_sent: u64,
    pub parity_frames: u64,
    pub fec_recoveries: u64,
    /// Frames (or packets) abandoned after the retry limit.
    pub give_ups: u64,
    /// Scheme header and control bytes: everything sent beyond first-transmission payload.
    pub overhead_bytes: u64,
    /// Total bytes handed to the scheduler.
    pub bytes_sent: u64,
    pub frames_received: u64,
    pub duplicates_received: u64,
    /// Frames that failed to parse (truncated, unknown type): counted and dropped.
    pub malformed_frames: u64,
    /// Scheme-specific anomalies, e.g. RLP buffer overrun (seed 004 §4.2.2).
    pub protocol_errors: u64,
}

impl ServiceStats {
    pub fn add(&mut self, o: &ServiceStats) {
        macro_rules! sum { ($($f:ident),*) => { $( self.$f += o.$f; )* } }
        sum!(
            packets_in,
            packets_dropped,
            packets_delivered,
            frames_sent,
            data_frames,
            retransmissions,
            acks_sent,
            naks_sent,
            keepalives_sent,
            parity_frames,
            fec_recoveries,
            give_ups,
            overhead_bytes,
            bytes_sent,
            frames_received,
            duplicates_received,
            malformed_frames,
            protocol_errors
        );
    }
    /// Named counters, in a fixed order, for CSV/JSON output.
    pub fn fields(&self) -> [(&'static str, u64); 18] {
        [
            ("packets_in", self.packets_in),
            ("packets_dropped", self.packets_dropped),
            ("packets_delivered", self.packets_delivered),
            ("frames_sent", self.frames_sent),
            ("data_frames", self.data_frames),
            ("retransmissions", self.retransmissions),
            ("acks_sent", self.acks_sent),
            ("naks_sent", self.naks_sent),
            ("keepalives_sent", self.keepalives_sent),
            ("parity_frames", self.parity_frames),
            ("fec_recoveries", self.fec_recoveries),
            ("give_ups", self.give_ups),
            ("overhead_bytes", self.overhead_bytes),
            ("bytes_sent", self.bytes_sent),
            ("frames_received", self.frames_received),
            ("duplicates_received", self.duplicates_received),
            ("malformed_frames", self.malformed_frames),
            ("protocol_errors", self.protocol_errors),
        ]
    }
}

/// Which end of a wireless link a service runs at. Only Snoop cares: it runs at the base station
/// and its peer at the wireless host is a plain Default service (seed 004 §4.2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    BaseStation,
    Host,
}

/// What a scheme may derive its default timers and windows from (seed004-ch4 §3.10: "based on
/// link characteristics such as propagation delay and transmission speed").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkInfo {
    pub rate: DataRate,
    pub delay: Duration,
    /// Largest frame payload (excluding scheme headers).
    pub frame_payload: usize,
}

impl LinkInfo {
    /// Round trip of one full data frame out and a minimal control frame back.
    pub fn frame_rtt(&self, header: usize) -> Duration {
        self.rate.tx_time(self.frame_payload + header)
            + self.rate.tx_time(2)
            + self.delay
            + self.delay
    }
}

/// Build a scheme instance. Further schemes add variants to [`SchemeConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SchemeConfig {
    /// No recovery: access to the raw link (seed 004 §4.2.1).
    #[default]
    Default,
}

impl SchemeConfig {
    /// Short label used in tables and file names.
    pub fn label(&self) -> String {
        match self {
            SchemeConfig::Default => "default".into(),
        }
    }

    /// Instantiate for one end of a link.
    pub fn build(&self, _link: &LinkInfo, _role: Role) -> Box<dyn Service> {
        match self {
            SchemeConfig::Default => Box::new(Raw::new()),
        }
    }

    /// Parse a scheme by its short name with recommended defaults ("default", ...).
    pub fn from_name(name: &str) -> Option<SchemeConfig> {
        match name {
            "default" | "raw" => Some(SchemeConfig::Default),
            _ => None,
        }
    }

    /// Names accepted by [`SchemeConfig::from_name`].
    pub const NAMES: &'static [&'static str] = &["default"];
}
