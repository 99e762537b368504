//! One-way TCP with ns-2 semantics (Agent/TCP/Reno + Agent/TCPSink), as sans-IO state machines.
//!
//! ```text
//!   application                                         application
//!   send(now, n) / send_forever(now)                    stats().delivered_*
//!        |                                                   ^
//!        v                                                   |
//!   +-----------+  poll_transmit(now) -> data Packet   +-----------+
//!   | TcpSender | ------------------------------------> |  TcpSink  |
//!   |  (Reno)   | <------------------------------------ |           |
//!   +-----------+  handle_ack(now, &ack)    handle_data(now, &data) -> Option<ACK>
//!     poll_timeout() / handle_timeout(now)    poll_timeout() / handle_timeout(now) -> Option<ACK>
//! ```
//!
//! Both sides count in ns-2 *packets* internally (ns2-semantics.md 0.2) and put byte sequence
//! numbers on the wire so that a TCP-aware link layer (Snoop) sees a real-looking TCP stream:
//!
//! * data packet `n` carries TCP `seq = n * segment_size` (mod 2^32);
//! * an ACK carries `ack = (highest in-order packet + 1) * segment_size`, i.e. the next expected
//!   byte; ns-2's initial ACK "-1" is therefore `ack = 0`.
//!
//! Packet sizes follow the seeds' convention (seed004-ch4 0.1, msll_proto::packet): a data packet
//! of `segment_size` bytes is a `Packet` whose *total* length is `segment_size`; its first 40 bytes
//! are the IPv4 + TCP headers and the rest is zero payload. ACKs are exactly `ack_size` (40) bytes.
//! With `use_headers` (ns-2.35) data packets are `segment_size + 40` bytes, as in ns-2.35.
//!
//! Driver contract (same for sender and sink):
//! 1. Inputs: `send`/`send_forever` (sender only), `handle_ack` / `handle_data`, `handle_timeout`.
//! 2. After *every* input, call `poll_transmit(now)` until it returns `None` (the sink returns its
//!    ACKs directly from `handle_data` / `handle_timeout` instead).
//! 3. After every input, re-read `poll_timeout()` and call `handle_timeout(now)` when that instant is
//!    reached. Calling `handle_timeout` early or twice is harmless (nothing happens).
//! 4. Malformed input (not IPv4/TCP, truncated, wrong ports) is counted in the stats and ignored.
//!
//! Everything that ns-2 does inside one event happens inside one call here, so packets come out of
//! `poll_transmit` in exactly ns-2's order (e.g. the Fast Retransmit before the new data it unlocks).
//!
//! See `docs/tcp.md` for the list of ns-2 behaviours reproduced and the choices made where the
//! specification leaves a parameter open.

use msll_proto::wire::{IpProto, Ipv4Repr, TcpRepr};
use msll_proto::{Duration, Packet};
use serde::{Deserialize, Serialize};
use thiserror::Error;

pub mod model;
mod rate;
pub mod rtt;
pub mod sender;
pub mod sink;
mod vegas;

#[cfg(test)]
mod crosscheck;
#[cfg(test)]
mod tests;

pub use rtt::RttEstimator;
pub use sender::{SenderStats, TcpSender, TraceEvent, TraceKind};
pub use sink::{SinkStats, TcpSink};

/// Largest `window_` a Vegas sender takes: it allocates one send-time slot per packet of it
/// (ns-2 `v_maxwnd_`), 12 bytes each.
pub const VEGAS_MAX_WINDOW: u32 = 1 << 20;

/// IPv4 + TCP header bytes carried at the front of every packet (no options).
pub const HEADER_BYTES: usize = 40;

/// ns-2 `Agent set ttl_ 32` (ns2-semantics.md 1.1, last line).
const NS2_TTL: u8 = 32;

/// Congestion-control variant. A value, not a copy of the agent: new variants (NewReno, SACK,
/// Vegas, Westwood+) become new arms in the few places where they differ (`window()`,
/// `dupack_action()`, partial-ACK handling, `opencwnd()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TcpVariant {
    /// `Agent/TCP/Reno` (ns2-semantics.md 1.5-1.8).
    #[default]
    Reno,
    /// `Agent/TCP/Vegas` (ns2-semantics.md 8.1; `vegas.rs`): `v_alpha_`, `v_beta_`,
    /// `v_gamma_` in packets (ns-2: 1, 3, 1). Packet 0 is a full data packet and no header
    /// bytes are added whatever `syn` and `use_headers` say (Vegas has its own `output`);
    /// `delay_growth` still starts it at cwnd 1.
    Vegas { alpha: i32, beta: i32, gamma: i32 },
    /// TCP Westwood+ on ns-2 Reno (seed 003 sec. 3.5; `rate.rs`): one bandwidth sample per RTT,
    /// filtered with gain `1 / gain_inv` (10); ssthresh `B RTT_min` after a loss.
    Westwood { gain_inv: u32 },
    /// TCP-Real on ns-2 Reno (seed 003 sec. 3.5; `rate.rs`): the receiving rate per RTT epoch
    /// decides; a drop above `small_drop_pct` (10 %) cuts cwnd by `1 / gamma_inv` (1/8), a
    /// smaller one holds it; a loss without such a drop leaves the window as it is.
    Real { gamma_inv: u32, small_drop_pct: u32 },
}

impl TcpVariant {
    /// ns-2's `Agent/TCP/Vegas` defaults.
    pub const VEGAS: TcpVariant = TcpVariant::Vegas {
        alpha: 1,
        beta: 3,
        gamma: 1,
    };
    /// Westwood+ with the spec's filter gain 1/10 (seed003.md sec. 3.5).
    pub const WESTWOOD: TcpVariant = TcpVariant::Westwood { gain_inv: 10 };
    /// TCP-Real with gamma 1/8 (seed 003 sec. 3.5) and a 10 % "small decrease" (AMBIGUOUS 17).
    pub const REAL: TcpVariant = TcpVariant::Real {
        gamma_inv: 8,
        small_drop_pct: 10,
    };
}

/// Receiver (TCPSink) options; ns2-semantics.md section 2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SinkConfig {
    /// `Agent/TCPSink/DelAck` instead of `Agent/TCPSink`. The dissertation used one ACK per
    /// packet (seed004-ch4 2.1, L785), so the default is false.
    pub delayed_ack: bool,
    /// DelAck `interval_`, seconds (100 ms in both versions).
    pub delack_interval: f64,
    /// 2.35 `RFC2581_immediate_ack_`: ACK at once when a packet fills a gap (DelAck only).
    pub rfc2581_immediate_ack: bool,
    /// 2.35 `SYN_immediate_ack_`: ACK packet 0 at once (DelAck only).
    pub syn_immediate_ack: bool,
    /// Size of the receive ring in packets: 2.1b4 has 1024 slots and does not record a packet
    /// with `seq - next >= 1023` (it is still ACKed); 2.35 grows on demand (`None`).
    pub buffer_slots: Option<u32>,
}

impl Default for SinkConfig {
    fn default() -> Self {
        SinkConfig {
            delayed_ack: false,
            delack_interval: 0.1,
            rfc2581_immediate_ack: false,
            syn_immediate_ack: false,
            buffer_slots: Some(1024),
        }
    }
}

/// How the retransmission timeout follows the RTT samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoModel {
    /// ns-2's (ns2-semantics.md 1.9): a sample counts the edges of a free-running clock of
    /// period `tick` between send and ACK, SRTT and deviation are scaled integers of ticks, and
    /// the RTO is truncated to whole ticks.
    #[default]
    Ns2Ticks,
    /// Seed 002's thesis (sec. 2.1.3, Eqns 2.1-2.3; seed002.md A20): a sample is the exact time
    /// from send to ACK, SRTT and deviation are seconds with ns-2's gains (1/8, 1/4), the
    /// deviation updated with the old SRTT, and RTO = SRTT + 2^`rttvar_exp` x deviation
    /// "rounded off to the nearest multiple" of `tick`, clamped to `min_rto` and then doubled
    /// per back-off up to `max_rto` (RFC 2988's order, whatever `rfc2988` says). The preset
    /// `wong1998` uses it (the spec's recommendation).
    ExactNearest,
}

impl RtoModel {
    pub fn is_ns2_ticks(&self) -> bool {
        *self == RtoModel::Ns2Ticks
    }
}

/// Every ns-2 knob of `Agent/TCP/Reno` that changes dynamics, by its ns-2 name (ns2-semantics.md
/// 1.1), plus the few code-level differences between 2.1b4 and 2.35 (section 9) as booleans.
/// Times are seconds (`f64`), as in ns-2, because the RTO arithmetic is done in ns-2's doubles.
///
/// `Default` is [`TcpConfig::ns2_2_1b4`] with 1000-byte packets, i.e. ns-2.1b4's own defaults
/// (tick 0.1 s). The dissertation's TCP is [`TcpConfig::dissertation`] (tick 0.5 s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    pub variant: TcpVariant,
    /// `packetSize_`: bytes of one data packet (headers included unless `use_headers`).
    pub segment_size: usize,
    /// TCPSink `packetSize_`: bytes of an ACK (40).
    pub ack_size: usize,
    /// IPv4 TOS / DS byte written into data packets (the sink copies it into its ACKs), so the
    /// multi-service classifier can map the flow by DS field (seed 001, sec. V).
    pub ds_byte: u8,
    /// `window_`: receiver-window cap, packets (20).
    pub window: u32,
    /// `windowInit_`: initial window, packets (2.1b4: 1, 2.35: 2).
    pub window_init: u32,
    /// `maxcwnd_`: cap on cwnd in packets, 0 = none.
    pub max_cwnd: u32,
    /// `maxburst_`: packets per `send_much`, 0 = unlimited.
    pub maxburst: u32,
    /// `numdupacks_`: duplicate-ACK threshold (3).
    pub dupack_threshold: u32,
    /// `syn_`: model a 40-byte SYN as packet 0, data becomes packets 1..n (2.35).
    pub syn: bool,
    /// `delay_growth_`: with `syn`, start at cwnd 1 and jump to `window_init` on the ACK of packet 0.
    pub delay_growth: bool,
    /// `useHeaders_`: add 40 bytes to every data packet but packet 0 (2.35).
    pub use_headers: bool,
    /// `tcpTick_`: RTT clock granularity, seconds (2.1b4: 0.1, 2.35: 0.01, dissertation: 0.5).
    pub tick: f64,
    /// `minrto_`, seconds; 0 = no floor (2.1b4 has none; 2.35: 0.2).
    pub min_rto: f64,
    /// `maxrto_`, seconds (2.1b4: 100000, 2.35: 60).
    pub max_rto: f64,
    /// `rfc2988_`: apply `min_rto` before the backoff multiplier (2.35).
    pub rfc2988: bool,
    /// `srtt_init_`, seconds (0). Only matters if non-zero (ns2-semantics.md 1.9).
    pub srtt_init: f64,
    /// `rttvar_init_`, seconds (12). Overwritten by the first sample while `srtt_init` is 0.
    pub rttvar_init: f64,
    /// `rtxcur_init_`: RTO before the first RTT sample, seconds (2.1b4: 6, 2.35: 3).
    pub rto_init: f64,
    /// `rttvar_exp_`: RTO = srtt + 2^rttvar_exp * rttvar (2).
    pub rttvar_exp: u32,
    /// `timerfix_`: restart the rtx timer after (true, 2.35) or before (false, 2.1b4) the RTT
    /// update in `newack` (ns2-semantics.md 1.6).
    pub timerfix: bool,
    /// 2.35 `newtimer` clause "or a.seqno < maxseq_ or cwnd_ < 1" (2000-01-15): keep the timer
    /// running when data beyond the ACK is outstanding even if `t_seqno_` was pulled back.
    /// 2.1b4: false (cancel when `t_seqno_ <= ack`).
    pub newtimer_outstanding: bool,
    /// `bugFix_`: block Fast Retransmit until `highest_ack_ > recover_` (true).
    pub bugfix: bool,
    /// `bugfix_ss_` (2.35): FR allowed when only packet 0 is ACKed; IW forced to 1 if packet 0
    /// times out.
    pub bugfix_ss: bool,
    /// `exitFastRetrans_` (2.35 true, 2.1b4 behaves false): duplicate ACKs inflate the window
    /// (and the threshold-th sets `dupwnd_`) only in Fast Recovery. When false, the dupACKs of
    /// go-back-N after a timeout inflate too and release new data (ns2-semantics.md 1.5).
    pub exit_fast_retrans: bool,
    /// 2.29+ (no Tcl knob): a new ACK during Fast Recovery sets `last_cwnd_action_ = EXITED`, so
    /// a second triple duplicate in the same window gets no Fast Retransmit until `recover_` is
    /// passed (1.7). 2.1b4 (false) keeps DUPACK and halves again. Independent of
    /// `exit_fast_retrans`: ns-2.35 with `exitFastRetrans_ false` still marks EXITED.
    pub mark_exited: bool,
    /// `singledup_`: Limited Transmit on the 1st/2nd duplicate ACK (2.35: true).
    pub limited_transmit: bool,
    /// `precisionReduce_`: halve the window as a double (2.35: true; 2.1b4: integer halving).
    pub precision_reduce: bool,
    /// `aggressive_maxburst_`: also call `send_much` on an old ACK. 2.1b4 has no such test and
    /// calls `send_much` for every ACK, i.e. behaves as true (ns2-semantics.md 1.5).
    pub aggressive_maxburst: bool,
    /// 2.35 `rtt_backoff`: keep doubling past 64 while the RTO is below `max_rto`.
    pub backoff_past_64: bool,
    /// `slow_start_restart_` (true).
    pub slow_start_restart: bool,
    /// `restart_bugfix_` (true): an idle timeout only sets cwnd 1, no ssthresh cut, no backoff.
    pub restart_bugfix: bool,
    /// 2.35 timeout: `if cwnd_ < 1: cwnd_ = 1` before anything else.
    pub timeout_cwnd_floor: bool,
    /// `reset()` semantics of 2.35 (ns2-semantics.md 1.3): also forget `rtt_seq_` and cancel the
    /// rtx timer. 2.1b4 (false) keeps both, so a reused agent can take a stale first RTT sample.
    pub full_reset: bool,
    /// Measure the end-to-end delay of each segment (seed 002 Fig. 4.8, seed002.md sec. 1.9):
    /// from the sender's first transmission of it to its first arrival at the sink. The sender
    /// writes that first-transmission time into the segment's first payload bytes (data packets
    /// of at least 48 bytes; the seeds' payload bytes carry nothing else) and the sink reads it.
    /// Off by default: a measurement, not ns-2 behaviour.
    pub e2e_delay: bool,
    /// Keep the traces of seed 002's Figs 4.1-4.6 (experiment E1): the sender's
    /// (time, cwnd, ssthresh) at every ACK, retransmission and timeout (`TcpSender::trace`), and
    /// the sink's in-order deliveries (`TcpSink::deliveries`) with the longest stall between two
    /// of them (`SinkStats::max_stall_s`, seed002.md claim C7). Off by default: a measurement,
    /// not ns-2 behaviour; the run is the same either way. Left out of the serialised form when
    /// off, so configurations without it keep their cache keys and golden fingerprints.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
    /// How RTT samples become an RTO: ns-2's ticks (the default) or the exact samples and
    /// nearest-tick rounding of seed 002's thesis (A20). Left out of the serialised form at its
    /// default, like `trace`.
    #[serde(skip_serializing_if = "RtoModel::is_ns2_ticks")]
    pub rto_model: RtoModel,
    /// Receiver options.
    pub sink: SinkConfig,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig::ns2_2_1b4(1000)
    }
}

impl TcpConfig {
    /// ns-2.1b4 defaults (ns2-semantics.md 1.1 and section 10, "ns-2.1b4 preset").
    pub fn ns2_2_1b4(segment_size: usize) -> Self {
        TcpConfig {
            variant: TcpVariant::Reno,
            segment_size,
            ack_size: HEADER_BYTES,
            ds_byte: 0,
            window: 20,
            window_init: 1,
            max_cwnd: 0,
            maxburst: 0,
            dupack_threshold: 3,
            syn: false,
            delay_growth: false,
            use_headers: false,
            tick: 0.1,
            min_rto: 0.0,
            max_rto: 100_000.0,
            rfc2988: false,
            srtt_init: 0.0,
            rttvar_init: 12.0,
            rto_init: 6.0,
            rttvar_exp: 2,
            timerfix: false,
            newtimer_outstanding: false,
            bugfix: true,
            bugfix_ss: false,
            exit_fast_retrans: false,
            mark_exited: false,
            limited_transmit: false,
            precision_reduce: false,
            aggressive_maxburst: true,
            backoff_past_64: false,
            slow_start_restart: true,
            restart_bugfix: true,
            timeout_cwnd_floor: false,
            full_reset: false,
            e2e_delay: false,
            trace: false,
            rto_model: RtoModel::Ns2Ticks,
            sink: SinkConfig::default(),
        }
    }

    /// ns-2.35 defaults (ns2-semantics.md 1.1 and section 10, "ns-2.35 preset").
    pub fn ns2_2_35(segment_size: usize) -> Self {
        TcpConfig {
            window_init: 2,
            syn: true,
            delay_growth: true,
            use_headers: true,
            tick: 0.01,
            min_rto: 0.2,
            max_rto: 60.0,
            rfc2988: true,
            rto_init: 3.0,
            timerfix: true,
            newtimer_outstanding: true,
            bugfix_ss: true,
            exit_fast_retrans: true,
            mark_exited: true,
            limited_transmit: true,
            precision_reduce: true,
            aggressive_maxburst: true,
            backoff_past_64: true,
            timeout_cwnd_floor: true,
            full_reset: true,
            sink: SinkConfig {
                delayed_ack: false,
                delack_interval: 0.1,
                rfc2581_immediate_ack: true,
                syn_immediate_ack: true,
                buffer_slots: None,
            },
            ..TcpConfig::ns2_2_1b4(segment_size)
        }
    }

    /// The dissertation's TCP (seed004-ch4 2.1): ns-2.1b4 Reno with `tcpTick_ 0.5` ("500 ms
    /// granularity timers", L783), one ACK per packet, window 20 (2.2, ns-2 default).
    pub fn dissertation(segment_size: usize) -> Self {
        TcpConfig {
            tick: 0.5,
            ..TcpConfig::ns2_2_1b4(segment_size)
        }
    }

    /// Wong's TCP Reno (seed002.md sec. 2.1, Table 3.6) in ns-2's terms: 512-byte segments plus
    /// 40 header bytes, a 4096-byte (8-segment) window, initial window 1, RTO from SRTT 1 s and
    /// deviation 1 s (5 s before the first sample, n = 4), clamped to [2, 240] s on a 0.5 s
    /// clock, a delayed-ACK sink (every 2nd segment or 0.2 s, at once on a hole fill: A19), and
    /// the window halved as a real number (Fig. 4.2's cwnd of 1828 bytes is 3.57 segments).
    ///
    /// The RTO is the thesis's (`RtoModel::ExactNearest`, A20: exact samples, rounded to the
    /// nearest 0.5 s) since session 31; `rto_model = Ns2Ticks` gives ns-2's tick arithmetic,
    /// which truncates to whole ticks. Choices recorded in docs/seed002.md.
    pub fn wong1998() -> Self {
        TcpConfig {
            use_headers: true,
            window: 8,
            window_init: 1,
            tick: 0.5,
            min_rto: 2.0,
            max_rto: 240.0,
            srtt_init: 1.0,
            rttvar_init: 1.0,
            rto_init: 5.0,
            rto_model: RtoModel::ExactNearest,
            precision_reduce: true,
            sink: SinkConfig {
                delayed_ack: true,
                delack_interval: 0.2,
                rfc2581_immediate_ack: true,
                syn_immediate_ack: false,
                buffer_slots: None,
            },
            ..TcpConfig::ns2_2_1b4(512)
        }
    }

    /// Whether packet 0 is a SYN that carries no application data: `syn` with Reno's `output`
    /// (Vegas has its own `output`, which ignores `syn_`, ns2-semantics.md 8.1).
    pub fn sends_syn(&self) -> bool {
        self.syn && !matches!(self.variant, TcpVariant::Vegas { .. })
    }

    /// Wire length of data packet `seq` (ns2-semantics.md 1.4 `output`).
    pub(crate) fn data_len(&self, seq: i64) -> usize {
        if seq == 0 && self.syn {
            HEADER_BYTES
        } else if self.use_headers {
            self.segment_size + HEADER_BYTES
        } else {
            self.segment_size
        }
    }

    /// Check the configuration; the constructors of sender and sink call this.
    pub fn validate(&self) -> Result<(), TcpConfigError> {
        let data = self.data_len(1);
        if data <= HEADER_BYTES {
            return Err(TcpConfigError::SegmentTooSmall(self.segment_size));
        }
        if data > u16::MAX as usize || self.ack_size > u16::MAX as usize {
            return Err(TcpConfigError::SegmentTooLarge(data.max(self.ack_size)));
        }
        if self.ack_size < HEADER_BYTES {
            return Err(TcpConfigError::AckTooSmall(self.ack_size));
        }
        if let TcpVariant::Vegas { alpha, beta, gamma } = self.variant {
            // Vegas's packets are `segment_size` bytes whole (no header bytes added), so they
            // must hold the headers themselves; and it keeps one send-time slot per packet of
            // `window_`, allocated at once.
            if self.segment_size <= HEADER_BYTES {
                return Err(TcpConfigError::SegmentTooSmall(self.segment_size));
            }
            if self.window > VEGAS_MAX_WINDOW {
                return Err(TcpConfigError::BadValue(
                    "window (Vegas: at most 1048576 packets)",
                ));
            }
            // ns-2 takes any integers; alpha > beta or negative thresholds make the per-RTT rule
            // meaningless (it would both grow and shrink, or always shrink).
            if alpha < 0 || gamma < 0 {
                return Err(TcpConfigError::BadValue("vegas alpha/gamma (must be >= 0)"));
            }
            if beta < alpha {
                return Err(TcpConfigError::BadValue("vegas beta (must be >= alpha)"));
            }
        }
        match self.variant {
            TcpVariant::Westwood { gain_inv: 0 } => {
                return Err(TcpConfigError::BadValue("westwood gain_inv (must be >= 1)"));
            }
            TcpVariant::Real {
                gamma_inv,
                small_drop_pct,
            } if gamma_inv == 0 || small_drop_pct > 100 => {
                return Err(TcpConfigError::BadValue(
                    "real gamma_inv (>= 1) / small_drop_pct (<= 100)",
                ));
            }
            _ => {}
        }
        let positive = |name: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(TcpConfigError::BadValue(name))
            }
        };
        let non_negative = |name: &'static str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(TcpConfigError::BadValue(name))
            }
        };
        positive("tick", self.tick)?;
        positive("max_rto", self.max_rto)?;
        positive("rto_init", self.rto_init)?;
        positive("sink.delack_interval", self.sink.delack_interval)?;
        non_negative("min_rto", self.min_rto)?;
        non_negative("srtt_init", self.srtt_init)?;
        non_negative("rttvar_init", self.rttvar_init)?;
        if self.window == 0 {
            return Err(TcpConfigError::BadValue("window"));
        }
        // Sequence numbers are 32-bit and unwrapped within +-2^31 bytes (`unwrap_seq`): a
        // window of that many bytes made an in-window segment look old and a jump of the
        // cumulative ACK look stale (review, session 47).
        if u64::from(self.window) * self.segment_size as u64 >= 1 << 31 {
            return Err(TcpConfigError::BadValue(
                "window (window x segment_size must be below 2^31 bytes)",
            ));
        }
        if self.window_init == 0 {
            return Err(TcpConfigError::BadValue("window_init"));
        }
        if self.dupack_threshold == 0 {
            return Err(TcpConfigError::BadValue("dupack_threshold"));
        }
        if self.rttvar_exp > 16 {
            return Err(TcpConfigError::BadValue("rttvar_exp"));
        }
        if self.sink.buffer_slots == Some(0) {
            return Err(TcpConfigError::BadValue("sink.buffer_slots"));
        }
        Ok(())
    }
}

/// Configuration errors.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TcpConfigError {
    #[error(
        "segment_size {0} cannot carry the 40-byte IPv4+TCP header plus at least one payload byte"
    )]
    SegmentTooSmall(usize),
    #[error("packet of {0} bytes exceeds the IPv4 total-length field")]
    SegmentTooLarge(usize),
    #[error("ack_size {0} is smaller than the 40-byte IPv4+TCP header")]
    AckTooSmall(usize),
    #[error("invalid value for {0}")]
    BadValue(&'static str),
}

/// Addresses and ports of a one-way connection, as seen by the sender (data goes src -> dst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct FlowAddr {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub src_port: u16,
    pub dst_port: u16,
}

impl FlowAddr {
    /// The same flow seen from the other end.
    pub fn reversed(self) -> FlowAddr {
        FlowAddr {
            src: self.dst,
            dst: self.src,
            src_port: self.dst_port,
            dst_port: self.src_port,
        }
    }
}

/// A parsed TCP segment: the fields the agents use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segment {
    pub flow: FlowAddr,
    pub tos: u8,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
}

/// Parse an IPv4/TCP packet; `None` if it is not one (the caller counts it).
pub(crate) fn parse_segment(pkt: &Packet) -> Option<Segment> {
    let buf = pkt.as_slice();
    let ip = Ipv4Repr::parse(buf).ok()?;
    if ip.protocol != IpProto::TCP {
        return None;
    }
    // The IP total length must fit in the buffer we were given (a truncated packet is malformed).
    if (ip.total_len as usize) < ip.header_len || ip.total_len as usize > buf.len() {
        return None;
    }
    let tcp = TcpRepr::parse(buf.get(ip.header_len..ip.total_len as usize)?).ok()?;
    Some(Segment {
        flow: FlowAddr {
            src: ip.src,
            dst: ip.dst,
            src_port: tcp.src_port,
            dst_port: tcp.dst_port,
        },
        tos: ip.tos,
        seq: tcp.seq,
        ack: tcp.ack,
        flags: tcp.flags,
    })
}

/// Build a packet of `len >= 40` bytes: headers followed by zero payload. (One argument per
/// header field keeps the call sites readable next to the header layout.)
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_segment(
    flow: FlowAddr,
    tos: u8,
    ident: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    window: u16,
    len: usize,
) -> Packet {
    build_segment_with(flow, tos, ident, seq, ack, flags, window, len, |_| {})
}

/// First payload bytes of a data segment that carry its first-transmission time (nanoseconds
/// + 1, little endian; 0 = no stamp) when [`TcpConfig::e2e_delay`] is on.
pub(crate) const STAMP_BYTES: std::ops::Range<usize> = HEADER_BYTES..HEADER_BYTES + 8;

/// [`build_segment`] with `payload` called on the bytes after the headers.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn build_segment_with(
    flow: FlowAddr,
    tos: u8,
    ident: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    window: u16,
    len: usize,
    payload: impl FnOnce(&mut [u8]),
) -> Packet {
    debug_assert!((HEADER_BYTES..=u16::MAX as usize).contains(&len));
    // Headers written straight into the packet's one allocation (`Buf::zeroed_with`).
    Packet::new(msll_proto::Buf::zeroed_with(len, |buf| {
        Ipv4Repr {
            src: flow.src,
            dst: flow.dst,
            protocol: IpProto::TCP,
            tos,
            total_len: len as u16,
            ident,
            ttl: NS2_TTL,
            header_len: 20,
        }
        .emit(&mut buf[..20]);
        TcpRepr {
            src_port: flow.src_port,
            dst_port: flow.dst_port,
            seq,
            ack,
            flags,
            window,
            header_len: 20,
        }
        .emit(&mut buf[20..40]);
        payload(&mut buf[HEADER_BYTES..]);
    }))
}

/// Byte sequence number of ns-2 packet `n` (wraps modulo 2^32 like a real TCP).
pub(crate) fn wire_seq(n: i64, segment_size: usize) -> u32 {
    (n as i128 * segment_size as i128).rem_euclid(1i128 << 32) as u32
}

/// Inverse of [`wire_seq`], unwrapped around the packet number `reference` (the nearest
/// candidate within +-2^31 bytes); rounds down when `seq` is not a multiple of the segment size.
pub(crate) fn unwrap_seq(seq: u32, reference: i64, segment_size: usize) -> i64 {
    let base = wire_seq(reference, segment_size);
    let delta = seq.wrapping_sub(base) as i32 as i64;
    reference + delta.div_euclid(segment_size as i64)
}

/// Seconds (ns-2's doubles) to a `Duration`, saturating for absurd values.
pub(crate) fn secs(s: f64) -> Duration {
    if s.is_finite() && s > 0.0 {
        Duration::from_secs_f64(s.min(1e9))
    } else {
        Duration::ZERO
    }
}
