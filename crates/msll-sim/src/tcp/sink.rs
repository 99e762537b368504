//! ns-2 `Agent/TCPSink` and `Agent/TCPSink/DelAck` (ns2-semantics.md section 2).
//!
//! ```text
//!   handle_data(now, data) --> record in receive buffer --> cumulative ACK now   (TCPSink)
//!                                                      \--> or hold it and arm   (DelAck)
//!   handle_timeout(now) -----> delayed-ACK timer due --> cumulative ACK
//! ```
//!
//! ACKs are returned directly (there is at most one per input), so the sink has no transmit
//! queue: `handle_data` and `handle_timeout` return `Option<Packet>`. The ACK carries
//! `ack = (highest in-order packet + 1) * segment_size`, is `ack_size` (40) bytes long, goes back
//! to the data packet's source and copies its DS byte.

use std::collections::VecDeque;

use msll_proto::wire::TcpRepr;
use msll_proto::{Instant, Packet, Timer};

use super::{
    build_segment, parse_segment, secs, unwrap_seq, wire_seq, FlowAddr, TcpConfig, TcpConfigError,
    HEADER_BYTES,
};

/// How far ahead of the next in-order packet the 2.35 sink records a packet (packets).
const MAX_HELD_AHEAD: i64 = 1 << 20;

/// Receiver counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SinkStats {
    /// Data packets accepted (any order, duplicates included).
    pub packets_received: u64,
    /// Data packets delivered in order to the application (the 2.35 SYN not counted).
    pub delivered_packets: u64,
    /// `delivered_packets * segment_size`: application bytes delivered.
    pub delivered_bytes: u64,
    /// Packets received that were already held or delivered ("more data received than
    /// expected", the dissertation's conflicting-retransmission counter, seed004-ch4 2.1).
    pub duplicates: u64,
    /// Packets received above a gap.
    pub out_of_order: u64,
    /// ACKs emitted.
    pub acks_sent: u64,
    /// Packets that were not TCP data of this connection.
    pub malformed: u64,
    /// When the last in-order delivery happened.
    pub last_delivery: Option<Instant>,
    /// End-to-end delays (`TcpConfig::e2e_delay`): first arrival of a packet minus its first
    /// transmission, summed over the packets that carried a stamp, and their number.
    pub e2e_delay_sum_s: f64,
    pub e2e_delay_samples: u64,
    /// Longest time between two in-order deliveries of one transfer, seconds
    /// (`TcpConfig::trace`; 0 without it): a flat stretch of seed 002 Fig. 4.6's
    /// received-sequence trace (claim C7). The simulator's `ftp.max_stall_s` adds the stretches
    /// before the first delivery and, for a transfer left unfinished, after the last.
    pub max_stall_s: f64,
}

/// One-way TCP receiver with ns-2 semantics.
#[derive(Debug, Clone)]
pub struct TcpSink {
    cfg: TcpConfig,
    /// The connection as the sender sees it (data `flow.src -> flow.dst`).
    flow: FlowAddr,
    /// Next expected packet = ns-2's cumulative ACK + 1.
    next: i64,
    /// Highest packet seen (`maxseen_`).
    maxseen: i64,
    /// Packets held above a gap: `held[i]` says whether packet `next + 1 + i` is held (packet
    /// `next` never is: it is the one missing). A ring of flags rather than a set: every
    /// in-order packet asks it, and the packets held are never more than the sender's window
    /// ahead.
    held: VecDeque<bool>,
    delack_timer: Timer,
    /// DS byte of the last data packet, copied into ACKs.
    tos: u8,
    ident: u16,
    stats: SinkStats,
    /// `cfg.e2e_delay || cfg.trace`: one test on the per-packet path for both measurements.
    observe: bool,
    /// In-order deliveries (`TcpConfig::trace`): (time, highest in-order packet after it).
    deliveries: Vec<(Instant, i64)>,
    /// The last in-order delivery of the current transfer (`TcpConfig::trace`): a stall is
    /// measured from it. `reset` clears it, so a reused sink (WWW) measures no stall across
    /// two transfers.
    stall_from: Option<Instant>,
}

impl TcpSink {
    /// A sink for the data of `flow` (the sender's [`FlowAddr`]).
    pub fn new(mut cfg: TcpConfig, flow: FlowAddr) -> Result<Self, TcpConfigError> {
        cfg.validate()?;
        // The sink reads `syn` only to leave a SYN out of the data delivered; a Vegas sender's
        // packet 0 is data (`TcpConfig::sends_syn`). Settled here, off the per-packet path.
        cfg.syn = cfg.sends_syn();
        Ok(TcpSink {
            tos: cfg.ds_byte,
            observe: cfg.e2e_delay || cfg.trace,
            cfg,
            flow,
            next: 0,
            maxseen: -1,
            held: VecDeque::new(),
            delack_timer: Timer::default(),
            ident: 0,
            stats: SinkStats::default(),
            deliveries: Vec::new(),
            stall_from: None,
        })
    }

    /// Tcl `$sink reset`: clear the receive buffer (and a pending delayed ACK).
    pub fn reset(&mut self, _now: Instant) {
        self.next = 0;
        self.maxseen = -1;
        self.held.clear();
        self.delack_timer.cancel();
        self.stall_from = None;
    }

    /// A data packet arrived; returns the ACK to send now, if any.
    pub fn handle_data(&mut self, now: Instant, pkt: &Packet) -> Option<Packet> {
        let seg = match parse_segment(pkt) {
            Some(s)
                if s.flow == self.flow
                    && (pkt.len() > HEADER_BYTES || s.flags & TcpRepr::SYN != 0) =>
            {
                s
            }
            _ => {
                self.stats.malformed += 1;
                return None;
            }
        };
        self.tos = seg.tos;
        let seq = unwrap_seq(seg.seq, self.next, self.cfg.segment_size);
        if seq < 0 {
            self.stats.malformed += 1;
            return None;
        }
        self.stats.packets_received += 1;
        if self.observe {
            self.observed_update(now, seq, pkt);
        } else {
            self.update(now, seq);
        }

        let sc = &self.cfg.sink;
        if sc.delayed_ack {
            // DelAck (2): hold the ACK of a new in-order highest packet if no timer is pending,
            // except (2.35) when it fills a gap or is packet 0.
            if !self.delack_timer.is_armed() && seq == self.next - 1 {
                let fills_gap = sc.rfc2581_immediate_ack && seq < self.maxseen;
                let is_syn = sc.syn_immediate_ack && seq == 0;
                if !fills_gap && !is_syn {
                    self.delack_timer.set(now + secs(sc.delack_interval));
                    return None;
                }
            }
            self.delack_timer.cancel();
        }
        Some(self.ack())
    }

    /// The delayed-ACK timer fired (if due; early calls do nothing): ACK what is held.
    pub fn handle_timeout(&mut self, now: Instant) -> Option<Packet> {
        if self.delack_timer.poll_expired(now) {
            Some(self.ack())
        } else {
            None
        }
    }

    /// The delayed-ACK deadline (never armed for the plain TCPSink).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.delack_timer.deadline()
    }

    pub fn stats(&self) -> &SinkStats {
        &self.stats
    }
    /// ns-2's ACK number: highest in-order packet (-1 before any).
    pub fn cumulative_ack(&self) -> i64 {
        self.next - 1
    }
    pub fn flow(&self) -> FlowAddr {
        self.flow
    }
    /// New addresses/ports for a reused sink (see `TcpSender::set_flow`).
    pub fn set_flow(&mut self, flow: FlowAddr) {
        self.flow = flow;
    }

    /// Record packet `seq` in the receive buffer (ns-2 `Acker::update`) and deliver what became
    /// in order.
    fn update(&mut self, now: Instant, seq: i64) {
        if seq < self.next || self.is_held(seq) {
            self.stats.duplicates += 1;
            return;
        }
        if seq > self.next {
            // 2.1b4's 1024-slot ring does not record a packet this far ahead (still ACKed).
            if let Some(slots) = self.cfg.sink.buffer_slots {
                if seq - self.next >= slots as i64 - 1 {
                    return;
                }
            }
            // 2.35 grows its buffer to any sequence number; one stray segment 2^31 bytes ahead
            // made a buffer of ~2 M flags here (review, session 45). Past both 2^20 packets and
            // the window, no sender of this connection can have sent it: ACKed and not
            // recorded, as 2.1b4 does past its ring.
            if seq - self.next > MAX_HELD_AHEAD.max(self.cfg.window as i64) {
                return;
            }
            self.stats.out_of_order += 1;
            let i = (seq - self.next - 1) as usize;
            if i >= self.held.len() {
                self.held.resize(i + 1, false);
            }
            self.held[i] = true;
            self.maxseen = self.maxseen.max(seq);
            return;
        }
        self.maxseen = self.maxseen.max(seq);
        let mut delivered = 0u64;
        let mut n = seq;
        loop {
            if !(n == 0 && self.cfg.syn) {
                delivered += 1;
            }
            self.next = n + 1;
            n += 1;
            // The front flag is packet `n`, the new `next`: taken off either way, so that
            // `held[i]` is packet `next + 1 + i` again.
            if self.held.pop_front() != Some(true) {
                break;
            }
        }
        self.stats.delivered_packets += delivered;
        self.stats.delivered_bytes += delivered * self.cfg.segment_size as u64;
        self.stats.last_delivery = Some(now);
    }

    /// `update` with the measurements of `TcpConfig::e2e_delay` and `TcpConfig::trace` around
    /// it, off the common path.
    #[cold]
    #[inline(never)]
    fn observed_update(&mut self, now: Instant, seq: i64, pkt: &Packet) {
        if self.cfg.e2e_delay {
            self.e2e_sample(now, seq, pkt);
        }
        let before = self.next;
        self.update(now, seq);
        if self.cfg.trace && self.next > before {
            if let Some(last) = self.stall_from {
                self.stats.max_stall_s = self.stats.max_stall_s.max((now - last).as_secs_f64());
            }
            self.stall_from = Some(now);
            self.deliveries.push((now, self.next - 1));
        }
    }

    /// In-order deliveries so far, (time, highest in-order packet), when `TcpConfig::trace` is
    /// on (seed 002 Fig. 4.6's received-sequence trace); empty otherwise.
    pub fn deliveries(&self) -> &[(Instant, i64)] {
        &self.deliveries
    }

    /// Seed 002 Fig. 4.8's end-to-end delay of packet `seq`, if this is its first arrival (one
    /// `update` will record: not delivered, not held, not beyond 2.1b4's ring) and it carries
    /// its first transmission's time (`super::STAMP_BYTES`).
    #[cold]
    #[inline(never)]
    fn e2e_sample(&mut self, now: Instant, seq: i64, pkt: &Packet) {
        let beyond_ring = self
            .cfg
            .sink
            .buffer_slots
            .is_some_and(|slots| seq > self.next && seq - self.next >= slots as i64 - 1);
        if seq < self.next || self.is_held(seq) || beyond_ring {
            return;
        }
        let Some(b) = pkt.as_slice().get(super::STAMP_BYTES) else {
            return;
        };
        let stamp = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        if stamp == 0 || stamp - 1 > now.as_nanos() {
            return;
        }
        self.stats.e2e_delay_sum_s += (now.as_nanos() - (stamp - 1)) as f64 * 1e-9;
        self.stats.e2e_delay_samples += 1;
    }

    /// Whether packet `seq` (above `next`) is held.
    fn is_held(&self, seq: i64) -> bool {
        seq > self.next && self.held.get((seq - self.next - 1) as usize) == Some(&true)
    }

    /// A cumulative ACK for everything received in order so far.
    fn ack(&mut self) -> Packet {
        self.stats.acks_sent += 1;
        let pkt = build_segment(
            self.flow.reversed(),
            self.tos,
            self.ident,
            0,
            wire_seq(self.next, self.cfg.segment_size),
            TcpRepr::ACK,
            0xffff,
            self.cfg.ack_size,
        );
        self.ident = self.ident.wrapping_add(1);
        pkt
    }
}
