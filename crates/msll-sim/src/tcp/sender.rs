//! `Agent/TCP/Reno` of ns-2 as a sans-IO sender (ns2-semantics.md section 1).
//!
//! ```text
//!  send(now, n) -----> curseq_ += n --+
//!                                     v
//!  handle_ack(now, ack) --> recv: newack/opencwnd | dupack_action/inflate --> send_much --+
//!  handle_timeout(now) ---> timeout: slowdown, backoff, go-back-N ---------> send_much --+
//!                                                                                        v
//!                                     poll_transmit(now) <-- queue of packets from output()
//! ```
//!
//! Variable names follow ns-2 (`t_seqno_` is `t_seqno`, ...) so that traces can be compared.
//! Sequence numbers are ns-2 packet numbers (`i64`, -1 = "nothing"); see the module doc of
//! `tcp` for their byte mapping on the wire. Everything ns-2 does inside one event is done inside
//! one call; `output()` appends to a queue that the driver drains with `poll_transmit`.

use std::collections::VecDeque;

use msll_proto::wire::TcpRepr;
use msll_proto::{Duration, Instant, Packet, Timer};

use super::rate::{EpochAction, RateCtl, RateKind};
use super::rtt::RttEstimator;
use super::vegas::Vegas;
use super::{
    build_segment_with, parse_segment, secs, unwrap_seq, wire_seq, FlowAddr, TcpConfig,
    TcpConfigError, TcpVariant,
};

/// ns-2's "infinite" transfer: `send -1` sets `curseq_` to 2^30 packets (1.3).
const INFINITE_CURSEQ: i64 = 1 << 30;

/// `last_cwnd_action_` (1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CwndAction {
    None,
    DupAck,
    Timeout,
    /// 2.35 with `exitFastRetrans_`: a new ACK ended Fast Recovery.
    Exited,
}

/// What `slowdown()` does to cwnd (1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CwndCut {
    Half,
    /// `CLOSE_CWND_RESTART` and `CLOSE_CWND_ONE` both set cwnd to 1 for Reno.
    One,
}

/// Counters of one sender. Times are simulation instants.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SenderStats {
    /// Data packets handed out by `poll_transmit`, retransmissions (and the SYN) included.
    pub segments_sent: u64,
    /// Wire bytes of those packets.
    pub bytes_sent: u64,
    /// Packets sent with `seq <= maxseq_` (ns2-semantics.md 1.11).
    pub retransmissions: u64,
    /// Retransmit timeouts with data outstanding (ns-2 `nrexmit_`).
    pub timeouts: u64,
    /// Timer expiries with nothing outstanding (slow-start restart, 1.10).
    pub idle_timeouts: u64,
    /// Fast Retransmits (Reno `dupack_action` that acted; Vegas: every duplicate-ACK
    /// retransmission, docs/tcp.md 5a).
    pub fast_retransmits: u64,
    /// ACK packets accepted (new, duplicate or old).
    pub acks_received: u64,
    /// ACKs equal to `last_ack_`.
    pub dup_acks: u64,
    /// RTT samples taken (Karn: only for segments sent once).
    pub rtt_samples: u64,
    /// Sum of those samples in seconds, unquantised (the estimator sees them in ticks): the mean
    /// RTT that Eq. (3) of seed 003 wants (`tcp::model`).
    pub rtt_sum_s: f64,
    /// Sum of the retransmission timeout armed after each of those samples (backoff cleared,
    /// ns-2's bounds applied), seconds: the `T0` of Eq. (2) of seed 003 (TFRC, Padhye et al.).
    pub rto_sum_s: f64,
    /// Data packets cumulatively acknowledged (the SYN of 2.35 not counted).
    pub packets_acked: u64,
    /// `packets_acked * segment_size`: application bytes acknowledged.
    pub bytes_acked: u64,
    /// Packets that were not a TCP ACK of this connection (not IPv4/TCP, truncated, wrong ports).
    pub malformed: u64,
    /// First packet handed to the network (ns-2 `firstsent_`).
    pub first_send: Option<Instant>,
    /// Last ACK that acknowledged new data.
    pub last_new_ack: Option<Instant>,
    /// Last ACK of any kind.
    pub last_ack_received: Option<Instant>,
    /// When all data was acknowledged (ns-2 "done"); `None` for an infinite source.
    pub done_at: Option<Instant>,
}

/// What happened at a trace point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    /// First transmission of packet `seq`.
    Send,
    /// Retransmission of packet `seq`.
    Retransmit,
    /// New cumulative ACK `seq` processed (values after `opencwnd`).
    Ack,
    /// Duplicate ACK `seq` processed.
    DupAck,
    /// Fast Retransmit of `seq` decided (values after the window cut).
    FastRetransmit,
    /// Retransmit timeout; `seq` is `highest_ack_` (values after the cut).
    Timeout,
    /// Idle timer expiry (slow-start restart); `seq` is `highest_ack_`.
    IdleTimeout,
}

/// One sample of the optional trace: (time, cwnd, ssthresh, seq).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceEvent {
    pub time: Instant,
    pub kind: TraceKind,
    /// ns-2 packet number (see [`TraceKind`]).
    pub seq: i64,
    pub cwnd: f64,
    pub ssthresh: i64,
}

/// One-way TCP Reno sender with ns-2 semantics.
///
/// Inputs: [`send`](Self::send), [`send_forever`](Self::send_forever),
/// [`handle_ack`](Self::handle_ack), [`handle_timeout`](Self::handle_timeout).
/// Outputs: [`poll_transmit`](Self::poll_transmit) (drain after every input) and
/// [`poll_timeout`](Self::poll_timeout) (the retransmit deadline). Note that, as in ns-2, the
/// retransmit timer keeps running after all data is acknowledged and then fires every RTO as
/// an idle timeout (ns2-semantics.md 1.10); a driver that has nothing more to send may stop
/// waking the sender once [`is_done`](Self::is_done) holds.
#[derive(Debug, Clone)]
pub struct TcpSender {
    cfg: TcpConfig,
    flow: FlowAddr,
    rtt: RttEstimator,
    // --- ns-2 state (1.2) ---
    curseq: i64,
    t_seqno: i64,
    maxseq: i64,
    last_ack: i64,
    highest_ack: i64,
    cwnd: f64,
    ssthresh: i64,
    dupacks: u32,
    dupwnd: i64,
    recover: i64,
    last_cwnd_action: CwndAction,
    rtt_active: bool,
    rtt_seq: i64,
    rtt_ts: Instant,
    /// `windowInit_`, which 2.35's `bugfix_ss_` may lower to 1 for the agent's lifetime (1.3).
    wnd_init: u32,
    closed: bool,
    infinite: bool,
    rtx_timer: Timer,
    /// The last RTO (f64 bits) and its `secs` value: re-armed on every ACK, the RTO changes only
    /// with RTT samples and backoff, and the rounding to nanoseconds showed in time samples.
    rto_memo: (u64, Duration),
    /// An application-limited source (`set_app_limited`): never resend beyond its data.
    app_limited: bool,
    /// `Agent/TCP/Vegas`'s own state (`vegas.rs`); `None` for Reno.
    vegas: Option<Box<Vegas>>,
    /// Westwood+ / TCP-Real measurement state (`rate.rs`); `None` for Reno and Vegas.
    rate: Option<Box<RateCtl>>,
    /// First-transmission times by packet number, a ring tagged with the packet (`e2e_delay`
    /// on; `None` otherwise): every packet sent again is within the window of the highest sent.
    first_sent: Option<Box<[(i64, Instant)]>>,
    // --- driver side ---
    out: VecDeque<Packet>,
    ident: u16,
    stats: SenderStats,
    trace: Option<Vec<TraceEvent>>,
}

impl TcpSender {
    /// A sender for `flow` (data goes `flow.src -> flow.dst`). `boot_time` is ns-2's
    /// `boot_time_`, the phase of the simulated tick clock: ns-2 draws it uniformly in
    /// `[0, tick)` from the default RNG at every reset (1.2); the driver draws it from its own
    /// stream and passes it here (it is reduced modulo the tick).
    pub fn new(
        cfg: TcpConfig,
        flow: FlowAddr,
        boot_time: Duration,
    ) -> Result<Self, TcpConfigError> {
        cfg.validate()?;
        let rtt = RttEstimator::new(&cfg, boot_time.as_secs_f64());
        let mut s = TcpSender {
            rtt,
            flow,
            curseq: 0,
            t_seqno: 0,
            maxseq: -1,
            last_ack: -1,
            highest_ack: -1,
            cwnd: 1.0,
            ssthresh: 0,
            dupacks: 0,
            dupwnd: 0,
            recover: 0,
            last_cwnd_action: CwndAction::None,
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: Instant::ZERO,
            wnd_init: cfg.window_init,
            app_limited: false,
            closed: false,
            infinite: false,
            rtx_timer: Timer::default(),
            // A NaN pattern: the first RTO is never it (and would convert the same anyway).
            rto_memo: (u64::MAX, secs(f64::from_bits(u64::MAX))),
            vegas: match cfg.variant {
                TcpVariant::Vegas { alpha, beta, gamma } => Some(Box::new(Vegas::new(
                    alpha as i64,
                    beta as i64,
                    gamma as i64,
                ))),
                _ => None,
            },
            rate: match cfg.variant {
                TcpVariant::Westwood { gain_inv } => {
                    Some(Box::new(RateCtl::new(RateKind::Westwood {
                        gain: 1.0 / gain_inv as f64,
                    })))
                }
                TcpVariant::Real {
                    gamma_inv,
                    small_drop_pct,
                } => Some(Box::new(RateCtl::new(RateKind::Real {
                    gamma: 1.0 / gamma_inv as f64,
                    small_drop: small_drop_pct as f64 / 100.0,
                }))),
                _ => None,
            },
            first_sent: cfg.e2e_delay.then(|| {
                // Twice the window, a power of two, at most 2^16 entries (a larger window
                // leaves its oldest retransmissions unstamped).
                let n = (cfg.window as usize).saturating_mul(2).clamp(2, 1 << 16);
                vec![(-1, Instant::ZERO); n.next_power_of_two()].into_boxed_slice()
            }),
            out: VecDeque::new(),
            ident: 0,
            stats: SenderStats::default(),
            trace: cfg.trace.then(Vec::new),
            cfg,
        };
        s.reset_vars();
        Ok(s)
    }

    /// The variables `reset()` re-initialises (1.2, 1.3); `dupwnd_`, `rtt_active_` and (in
    /// 2.1b4) `rtt_seq_` are deliberately not among them.
    fn reset_vars(&mut self) {
        self.curseq = 0;
        self.t_seqno = 0;
        self.maxseq = -1;
        self.last_ack = -1;
        self.highest_ack = -1;
        self.cwnd = if self.cfg.syn && self.cfg.delay_growth {
            1.0
        } else {
            self.wnd_init as f64
        };
        self.ssthresh = self.cfg.window as i64;
        self.dupacks = 0;
        self.recover = 0;
        self.last_cwnd_action = CwndAction::None;
        self.closed = false;
        self.infinite = false;
    }

    /// Tcl `$tcp reset` (ns2-semantics.md 1.3), e.g. before every transfer of a non-persistent
    /// HTTP connection. 2.1b4 (`full_reset` false) keeps `rtt_seq_` and the running rtx timer;
    /// 2.35 clears both. Not modelled: 2.35's `lastreset_` filter of ACKs from the previous
    /// incarnation -- give the new incarnation new ports instead, which drops them the same way.
    /// Packets still queued for `poll_transmit` are discarded.
    pub fn reset(&mut self, _now: Instant, boot_time: Duration) {
        self.reset_vars();
        if let Some(v) = self.vegas.as_deref_mut() {
            v.reset();
        }
        if let Some(r) = self.rate.as_deref_mut() {
            r.reset();
        }
        self.rtt.init(&self.cfg);
        self.rtt.set_boot_time(boot_time.as_secs_f64());
        if self.cfg.full_reset {
            self.rtt_seq = -1;
            self.rtx_timer.cancel();
        }
        self.out.clear();
    }

    // ------------------------------------------------------------------ application interface

    /// `advanceby n` (1.3): make `packets` more packets available and send what the window
    /// allows.
    pub fn send(&mut self, now: Instant, packets: u64) {
        let n = packets.min(INFINITE_CURSEQ as u64) as i64;
        self.curseq = (self.curseq + n).min(INFINITE_CURSEQ);
        if n > 0 {
            self.closed = false;
        }
        self.send_much(now);
    }

    /// `send -1` / FTP `start` (1.3): an infinite source.
    pub fn send_forever(&mut self, now: Instant) {
        self.infinite = true;
        self.closed = false;
        self.curseq = self.curseq.max(INFINITE_CURSEQ);
        self.send_much(now);
    }

    /// Mark the sender as fed by an application that writes as it goes (seed 003's video).
    /// ns-2's Reno fast-retransmits `last_ack_ + 1` on the third duplicate ACK even when every
    /// packet written is acknowledged and that packet does not exist yet (duplicates of
    /// delivered data can cause such ACKs); an app-limited sender then sends nothing. Off by
    /// default: a WWW transfer's reused connection keeps ns-2's behaviour.
    pub fn set_app_limited(&mut self, on: bool) {
        self.app_limited = on;
    }

    /// All data made available so far is acknowledged (never true for an infinite source).
    pub fn is_done(&self) -> bool {
        self.closed && !self.infinite
    }

    // ------------------------------------------------------------------ driver interface

    /// An ACK arrived. Anything that is not a TCP ACK of this connection is counted in
    /// `stats().malformed` and ignored.
    pub fn handle_ack(&mut self, now: Instant, pkt: &Packet) {
        let seg = match parse_segment(pkt) {
            Some(s) if s.flow == self.flow.reversed() && s.flags & TcpRepr::ACK != 0 => s,
            _ => {
                self.stats.malformed += 1;
                return;
            }
        };
        // ack = next expected byte; ns-2's ACK number is the highest in-order packet.
        let next = unwrap_seq(seg.ack, self.last_ack + 1, self.cfg.segment_size);
        self.recv_ack(now, next - 1);
    }

    /// The retransmit timer fired (if it is due; early or repeated calls do nothing).
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.rtx_timer.poll_expired(now) {
            self.timeout(now);
        }
    }

    /// Next packet to hand to the network. Call until `None` after every input.
    pub fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        self.out.pop_front()
    }

    /// How many segments `poll_transmit` has.
    pub fn transmits(&self) -> usize {
        self.out.len()
    }

    /// Whether `poll_transmit` has a segment.
    pub fn has_transmits(&self) -> bool {
        !self.out.is_empty()
    }

    /// Every queued segment at once, in order: swaps the queue with `into` (which must be empty;
    /// its capacity is reused).
    pub fn take_transmits(&mut self, into: &mut VecDeque<Packet>) {
        debug_assert!(into.is_empty());
        std::mem::swap(&mut self.out, into);
    }

    /// The retransmit deadline, if the timer is armed.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.rtx_timer.deadline()
    }

    // ------------------------------------------------------------------ observation

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn flow(&self) -> FlowAddr {
        self.flow
    }
    /// Give the agent new addresses/ports, e.g. a new incarnation of a reused agent after
    /// `reset` (docs/tcp.md 6: packets of the previous incarnation are then ignored as foreign,
    /// which is what ns-2.35's `lastreset_` filter achieves).
    pub fn set_flow(&mut self, flow: FlowAddr) {
        self.flow = flow;
    }
    /// `cwnd_` in packets.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }
    /// `ssthresh_` in packets.
    pub fn ssthresh(&self) -> i64 {
        self.ssthresh
    }
    /// `dupwnd_`: Fast Recovery inflation.
    pub fn dupwnd(&self) -> i64 {
        self.dupwnd
    }
    /// `dupacks_`.
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }
    /// `window()`: the usable window in packets.
    pub fn usable_window(&self) -> i64 {
        self.window()
    }
    /// `t_seqno_`: next packet to send.
    pub fn t_seqno(&self) -> i64 {
        self.t_seqno
    }
    /// `highest_ack_`: highest cumulative ACK (-1 before any).
    pub fn highest_ack(&self) -> i64 {
        self.highest_ack
    }
    /// `maxseq_`: highest packet ever sent (-1 before any).
    pub fn maxseq(&self) -> i64 {
        self.maxseq
    }
    /// `recover_`.
    pub fn recover(&self) -> i64 {
        self.recover
    }
    /// `rtt_timeout()`: the RTO the next timer restart would use, seconds.
    pub fn rto(&self) -> f64 {
        self.rtt.rto()
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Westwood+'s or TCP-Real's measurements (`rate.rs`), for the tests of their responses.
    #[cfg(test)]
    pub(crate) fn rate_state(&self) -> Option<&RateCtl> {
        self.rate.as_deref()
    }
    /// Whether Fast Recovery is in progress (`last_cwnd_action_ == DUPACK`).
    pub fn in_fast_recovery(&self) -> bool {
        self.last_cwnd_action == CwndAction::DupAck
    }

    /// Turn the (time, cwnd, ssthresh, seq) trace on or off; turning it on clears it.
    pub fn set_trace(&mut self, on: bool) {
        self.trace = if on { Some(Vec::new()) } else { None };
    }
    pub fn trace(&self) -> &[TraceEvent] {
        self.trace.as_deref().unwrap_or(&[])
    }
    pub fn take_trace(&mut self) -> Vec<TraceEvent> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The stamp for packet `seq` sent now (`e2e_delay`): its first transmission's time in
    /// nanoseconds + 1; 0 (no stamp) for a retransmission whose first time has left the ring.
    #[cold]
    #[inline(never)]
    fn first_send_stamp(&mut self, now: Instant, seq: i64) -> u64 {
        let Some(ring) = self.first_sent.as_deref_mut() else {
            return 0;
        };
        let slot = &mut ring[seq as usize & (ring.len() - 1)];
        if seq > self.maxseq || slot.0 != seq {
            if seq <= self.maxseq {
                return 0;
            }
            *slot = (seq, now);
        }
        slot.1.as_nanos() + 1
    }

    fn record(&mut self, now: Instant, kind: TraceKind, seq: i64) {
        if let Some(t) = self.trace.as_mut() {
            t.push(TraceEvent {
                time: now,
                kind,
                seq,
                cwnd: self.cwnd,
                ssthresh: self.ssthresh,
            });
        }
    }

    // ------------------------------------------------------------------ ns-2 behaviour

    /// `window()` (1.4): truncated cwnd plus Reno's inflation, capped by `window_`.
    fn window(&self) -> i64 {
        // Vegas never inflates `dupwnd_` (its inflation goes into cwnd_), so ns-2's
        // `TcpAgent::window()` is the same expression there.
        (self.cwnd.floor() as i64 + self.dupwnd).min(self.cfg.window as i64)
    }

    /// `windowd()` (1.4, 2.35): the same in doubles, for `precisionReduce_`.
    fn windowd(&self) -> f64 {
        (self.cwnd + self.dupwnd as f64).min(self.cfg.window as f64)
    }

    /// `initial_window()` (`windowInitOption_` 1 only).
    fn initial_window(&self) -> f64 {
        self.wnd_init as f64
    }

    fn set_rtx_timer(&mut self, now: Instant) {
        let rto = self.rtt.rto();
        if rto.to_bits() != self.rto_memo.0 {
            self.rto_memo = (rto.to_bits(), secs(rto));
        }
        self.rtx_timer.set(now + self.rto_memo.1);
    }

    /// `send_much(0, reason, maxburst_)` (1.4): everything the window allows, back to back.
    fn send_much(&mut self, now: Instant) {
        if self.t_seqno == 0 {
            self.note_first_send(now);
        }
        let mut n = 0u32;
        while self.t_seqno <= self.highest_ack + self.window() && self.t_seqno < self.curseq {
            self.output(now, self.t_seqno);
            self.t_seqno += 1;
            n += 1;
            if self.cfg.maxburst != 0 && n == self.cfg.maxburst {
                break;
            }
        }
    }

    /// `output(seq)` (1.4).
    fn output(&mut self, now: Instant, seq: i64) {
        if self.vegas.is_some() {
            return self.vegas_output(now, seq);
        }
        let len = self.cfg.data_len(seq);
        let is_syn = seq == 0 && self.cfg.syn;
        // 2.35: the SYN carries no data and shifts the application's packets to 1..n.
        if is_syn && self.maxseq == -1 {
            self.curseq += 1;
        }
        // Evaluated before this send (1.4): restarts the timer after an idle period.
        let nothing_outstanding = self.highest_ack == self.maxseq;
        let flags = if is_syn {
            TcpRepr::SYN
        } else {
            TcpRepr::PSH | TcpRepr::ACK
        };
        let advertised = (self.cfg.window as u64 * self.cfg.segment_size as u64).min(0xffff) as u16;
        let stamp = if self.first_sent.is_some() {
            self.first_send_stamp(now, seq)
        } else {
            0
        };
        let pkt = build_segment_with(
            self.flow,
            self.cfg.ds_byte,
            self.ident,
            wire_seq(seq, self.cfg.segment_size),
            0,
            flags,
            advertised,
            len,
            |payload| write_stamp(payload, stamp),
        );
        self.ident = self.ident.wrapping_add(1);
        self.out.push_back(pkt);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        self.stats.first_send.get_or_insert(now);
        if seq > self.maxseq {
            self.maxseq = seq;
            // Only a first transmission can be timed, and only if nothing is being timed (Karn,
            // 1.4). A stale `rtt_seq_` after a 2.1b4 reset leaves `rtt_active_` set with
            // nothing timed, as in ns-2 (1.3 a).
            if !self.rtt_active {
                self.rtt_active = true;
                if seq > self.rtt_seq {
                    self.rtt_seq = seq;
                    self.rtt_ts = now;
                }
            }
            self.record(now, TraceKind::Send, seq);
        } else {
            self.stats.retransmissions += 1;
            self.record(now, TraceKind::Retransmit, seq);
        }
        if !self.rtx_timer.is_armed() || nothing_outstanding {
            self.set_rtx_timer(now);
        }
    }

    /// Reno `recv` for an ACK of packet `a` (1.5), both versions, selected by
    /// `mark_exited` and `exit_fast_retrans`.
    fn recv_ack(&mut self, now: Instant, a: i64) {
        if self.vegas.is_some() {
            return self.vegas_recv(now, a);
        }
        self.stats.acks_received += 1;
        self.stats.last_ack_received = Some(now);
        let thresh = self.cfg.dupack_threshold;
        if a > self.last_ack {
            if self.cfg.mark_exited && self.last_cwnd_action == CwndAction::DupAck {
                self.last_cwnd_action = CwndAction::Exited;
            }
            // Any new ACK, even a partial one, deflates and ends Fast Recovery (1.7).
            self.dupwnd = 0;
            let (prev, cwnd0) = (self.last_ack, self.cwnd);
            self.newack(now, a);
            self.opencwnd();
            if self.rate.is_some() {
                self.rate_ack(now, a - prev, cwnd0);
            }
            self.stats.last_new_ack = Some(now);
            let data_acked = if self.cfg.syn { a } else { a + 1 };
            self.stats.packets_acked = data_acked.max(0) as u64;
            self.stats.bytes_acked = self.stats.packets_acked * self.cfg.segment_size as u64;
            if !self.closed && self.highest_ack >= self.curseq - 1 {
                self.closed = true;
                if !self.infinite {
                    self.stats.done_at = Some(now);
                }
            }
            // 2.35 SYN: the ACK of packet 0 moves cwnd from 1 to the initial window (1.11).
            if self.last_ack == 0 && self.cfg.delay_growth {
                self.cwnd = self.initial_window();
            }
            self.record(now, TraceKind::Ack, a);
        } else if a == self.last_ack {
            self.dupacks += 1;
            self.stats.dup_acks += 1;
            if self.cfg.exit_fast_retrans {
                // 2.35: inflate only in Fast Recovery; Limited Transmit before the threshold.
                if self.dupacks == thresh {
                    self.dupack_action(now);
                } else if self.dupacks > thresh && self.last_cwnd_action == CwndAction::DupAck {
                    self.dupwnd += 1;
                } else if self.dupacks < thresh && self.cfg.limited_transmit {
                    self.send_one(now);
                }
            } else {
                // 2.1b4: dupwnd_ = 3 and inflation whether or not Fast Retransmit happened, so
                // the dupACKs of go-back-N after a timeout release new data (1.5).
                if self.dupacks == thresh {
                    self.dupack_action(now);
                    self.dupwnd = thresh as i64;
                } else if self.dupacks > thresh {
                    self.dupwnd += 1;
                } else if self.dupacks < thresh && self.cfg.limited_transmit {
                    self.send_one(now);
                }
            }
            self.record(now, TraceKind::DupAck, a);
        }
        // An ACK below last_ack_ changes nothing (1.11) but, in 2.1b4 (and with
        // aggressive_maxburst_), still runs send_much.
        if (a >= self.last_ack || self.cfg.aggressive_maxburst)
            && (self.dupacks == 0 || self.dupacks >= thresh)
        {
            self.send_much(now);
        }
    }

    /// `newack` (1.6), with the timer restart before (2.1b4) or after (`timerfix_`) the RTT
    /// update.
    fn newack(&mut self, now: Instant, a: i64) {
        if !self.cfg.timerfix {
            self.newtimer(now, a);
        }
        self.dupacks = 0;
        self.last_ack = a;
        self.highest_ack = a;
        self.t_seqno = self.t_seqno.max(a + 1);
        if a >= self.rtt_seq && self.rtt_active {
            // The timed segment is covered: clear the backoff and take a sample (Karn: the timed
            // segment was necessarily sent only once, 1.4).
            self.rtt.clear_backoff();
            self.rtt_active = false;
            let tao = now.as_secs_f64() - self.rtt_ts.as_secs_f64();
            self.rtt.update(now.as_secs_f64(), tao);
            self.stats.rtt_samples += 1;
            self.stats.rtt_sum_s += tao;
            self.stats.rto_sum_s += self.rtt.rto();
            // The SYN's sample counts too: its round trip is ~5 % shorter than a data packet's
            // here, and leaving it out (a review suggestion) made Westwood+'s ssthresh overshoot
            // the pipe on an error-free link: 21 timeouts in 60 s instead of 2, -12 % throughput.
            if let Some(r) = self.rate.as_deref_mut() {
                r.rtt_sample(tao);
            }
        }
        if self.cfg.timerfix {
            self.newtimer(now, a);
        }
    }

    /// `newtimer` (1.6): restart the rtx timer while something is (or will be) outstanding.
    fn newtimer(&mut self, now: Instant, a: i64) {
        let outstanding = self.t_seqno > a
            || (self.cfg.newtimer_outstanding && (a < self.maxseq || self.cwnd < 1.0));
        if outstanding {
            self.set_rtx_timer(now);
        } else {
            self.rtx_timer.cancel();
        }
    }

    /// `opencwnd` (1.6), `windowOption_` 1: +1 per new ACK in slow start, +1/cwnd in congestion
    /// avoidance, no byte counting.
    fn opencwnd(&mut self) {
        if self.cwnd < self.ssthresh as f64 {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
        if self.cfg.max_cwnd != 0 && self.cwnd.floor() > self.cfg.max_cwnd as f64 {
            self.cwnd = self.cfg.max_cwnd as f64;
        }
    }

    /// `slowdown` (1.7). `halve_ssthresh` = `CLOSE_SSTHRESH_HALF`.
    fn slowdown(&mut self, halve_ssthresh: bool, cut: CwndCut) {
        let half = if self.cfg.precision_reduce {
            self.windowd() / 2.0
        } else {
            // Integer halving of the truncated window (2.1b4): cwnd 3.9 -> 1.
            (self.window() / 2) as f64
        };
        if halve_ssthresh {
            self.ssthresh = half.floor() as i64;
        }
        self.cwnd = match cut {
            CwndCut::Half => half,
            CwndCut::One => 1.0,
        };
        // ssthresh is clamped at 2, cwnd is not (1.7).
        if self.ssthresh < 2 {
            self.ssthresh = 2;
        }
    }

    /// Reno `dupack_action` (1.7), on the `numdupacks_`-th duplicate.
    fn dupack_action(&mut self, now: Instant) {
        let recovered = self.highest_ack > self.recover;
        // 2.1b4: after a partial ACK last_cwnd_action_ is still DUPACK, so a second loss in the
        // window gets a second Fast Retransmit (repeated halving); 2.35 marks it EXITED.
        let allow = self.last_cwnd_action == CwndAction::DupAck;
        if recovered || !self.cfg.bugfix || allow || (self.cfg.bugfix_ss && self.highest_ack == 0) {
            self.recover = self.maxseq;
            self.last_cwnd_action = CwndAction::DupAck;
            if self.rate.is_some() {
                self.rate_loss_cut();
            } else {
                self.slowdown(true, CwndCut::Half);
            }
            // reset_rtx_timer(mild, no backoff): restart with the current RTO, stop timing,
            // t_seqno_ unchanged.
            self.set_rtx_timer(now);
            self.rtt_active = false;
            self.stats.fast_retransmits += 1;
            self.record(now, TraceKind::FastRetransmit, self.last_ack + 1);
            if !(self.app_limited && self.last_ack + 1 >= self.curseq) {
                self.output(now, self.last_ack + 1);
            }
            if self.cfg.exit_fast_retrans {
                self.dupwnd = self.cfg.dupack_threshold as i64;
            }
        }
        // else: bugFix_ blocks Fast Retransmit after a timeout/FR until recover_ is passed.
    }

    /// Limited Transmit `send_one` (1.4, 2.35 `singledup_`).
    fn send_one(&mut self, now: Instant) {
        let s = self.t_seqno;
        if s <= self.highest_ack + self.cfg.window as i64
            && s < self.curseq
            && (s as f64) <= self.highest_ack as f64 + self.cwnd + self.dupacks as f64
        {
            self.output(now, s);
            self.t_seqno += 1;
        }
    }

    /// Reno retransmit timeout (1.8) and idle restart (1.10).
    fn timeout(&mut self, now: Instant) {
        if self.vegas.is_some() {
            return self.vegas_timeout(now);
        }
        self.dupwnd = 0;
        self.dupacks = 0;
        if self.cfg.bugfix {
            self.recover = self.maxseq;
        }
        if self.cfg.timeout_cwnd_floor && self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        let idle = self.highest_ack == self.maxseq;
        if idle {
            self.stats.idle_timeouts += 1;
        }
        if !idle || self.cfg.slow_start_restart {
            self.recover = self.maxseq;
            // 2.35 bugfix_ss_: packet 0 (the SYN) lost -> IW 1 for the agent's lifetime (1.3).
            if self.highest_ack == -1 && self.wnd_init > 1 && self.cfg.bugfix_ss {
                self.wnd_init = 1;
            }
            if idle && self.cfg.restart_bugfix {
                // Nothing outstanding: cwnd 1, ssthresh kept.
                self.slowdown(false, CwndCut::One);
            } else {
                self.stats.timeouts += 1;
                // ssthresh = max(2, floor(window()/2)) of the current (unhalved) window.
                self.slowdown(true, CwndCut::One);
                // Westwood+: ssthresh from the bandwidth estimate instead (cwnd stays 1).
                if let Some(ss) = self.rate.as_deref().and_then(RateCtl::westwood_ssthresh) {
                    self.ssthresh = ss;
                }
            }
            // TCP-Real: the cut is the sender's own, not a rate drop to judge (`rebase`).
            if let Some(r) = self.rate.as_deref_mut() {
                r.rebase(true);
            }
        }
        if !(idle && self.cfg.restart_bugfix) {
            self.rtt.backoff();
        }
        self.set_rtx_timer(now);
        // Go-back-N: everything unacknowledged is sent again as the window allows.
        self.t_seqno = self.highest_ack + 1;
        self.rtt_active = false;
        self.last_cwnd_action = CwndAction::Timeout;
        let kind = if idle {
            TraceKind::IdleTimeout
        } else {
            TraceKind::Timeout
        };
        self.record(now, kind, self.highest_ack);
        self.send_much(now);
    }
}

// ------------------------------------------------------- Westwood+ and TCP-Real (`rate.rs`)
// Out of line and cold, as Vegas: Reno's per-ACK path only tests `self.rate.is_some()`.
impl TcpSender {
    /// A new cumulative ACK covering `acked` more packets; `cwnd0` is cwnd before `opencwnd`.
    #[cold]
    #[inline(never)]
    fn rate_ack(&mut self, now: Instant, acked: i64, cwnd0: f64) {
        let r = self.rate.as_deref_mut().expect("a rate-measuring sender");
        let action = r.on_ack(now.as_secs_f64(), acked.max(0) as u64);
        // Seed 003 sec. 3.5: gamma "determines the window adjustments during congestion
        // avoidance"; slow start grows as Reno's (the epochs are still measured, for the loss
        // classification). Before session 40 a slow start could be frozen or cut too.
        if let (RateKind::Real { .. }, true) = (r.kind, cwnd0 >= self.ssthresh as f64) {
            // TCP-Real: no growth through an epoch after a small rate decrease; a large one
            // cuts the window by gamma.
            if r.hold {
                self.cwnd = cwnd0;
            }
            if let EpochAction::Scale(f) = action {
                self.cwnd = (self.cwnd * f).max(1.0);
                // TCP(alpha, beta, gamma) decreases within congestion avoidance: ssthresh
                // follows the cut window. Left where it was, the cut put cwnd below it and slow
                // start gave it back within a few ACKs (review, session 45).
                self.ssthresh = (self.cwnd.floor() as i64).max(2);
                r.rebase(false);
            }
        }
    }

    /// Three duplicate ACKs: Westwood+ sets ssthresh from its bandwidth estimate; TCP-Real
    /// halves only if its receiving rate had dropped (congestion), else keeps the window.
    #[cold]
    #[inline(never)]
    fn rate_loss_cut(&mut self) {
        let r = self.rate.as_deref_mut().expect("a rate-measuring sender");
        match r.kind {
            RateKind::Westwood { .. } => match r.westwood_ssthresh() {
                Some(ss) => {
                    self.ssthresh = ss;
                    if self.cwnd > ss as f64 {
                        self.cwnd = ss as f64;
                    }
                }
                None => self.slowdown(true, CwndCut::Half),
            },
            RateKind::Real { .. } => {
                if r.congested {
                    r.rebase(true);
                    self.slowdown(true, CwndCut::Half);
                } else {
                    r.transient_losses += 1;
                    self.ssthresh = self.window().max(2);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------- Vegas (`vegas.rs`)
// Out of line and cold: Reno's per-packet paths only test `self.vegas.is_some()`.
impl TcpSender {
    /// `firstsent_` ("save time when first packet was sent", `send_much` with `t_seqno_` 0):
    /// Vegas's clock origin. Out of line: Reno's `send_much` is on the per-ACK path.
    #[cold]
    #[inline(never)]
    fn note_first_send(&mut self, now: Instant) {
        if let Some(v) = self.vegas.as_deref_mut() {
            v.firstsent = now.as_secs_f64();
        }
    }

    /// `VegasTcpAgent::output(seq)`: full-size packets (no SYN, no header bytes), the send time
    /// and transmission count in the ring, and the rtx timer armed only if none is pending. Its
    /// segment-building lines repeat `output`'s on purpose: a shared helper would change Reno's
    /// hottest function and its profile (docs/performance.md, session 27).
    #[cold]
    #[inline(never)]
    fn vegas_output(&mut self, now: Instant, seq: i64) {
        // ns-2's Vegas retransmits `last_ack_ + 1` on a duplicate ACK whose fine-grained timeout
        // has passed, even when the application has not supplied that packet yet (an app-limited
        // source: seed 003's video; a duplicated segment is enough to trigger it). Sending data
        // that does not exist would deliver it; msll sends nothing instead. A bulk transfer never
        // gets here (its `curseq` is ahead of every packet it sends).
        if seq >= self.curseq {
            return;
        }
        let len = self.cfg.segment_size;
        let advertised = (self.cfg.window as u64 * self.cfg.segment_size as u64).min(0xffff) as u16;
        let stamp = if self.first_sent.is_some() {
            self.first_send_stamp(now, seq)
        } else {
            0
        };
        let pkt = build_segment_with(
            self.flow,
            self.cfg.ds_byte,
            self.ident,
            wire_seq(seq, self.cfg.segment_size),
            0,
            TcpRepr::PSH | TcpRepr::ACK,
            advertised,
            len,
            |payload| write_stamp(payload, stamp),
        );
        self.ident = self.ident.wrapping_add(1);
        if let Some(v) = self.vegas.as_deref_mut() {
            v.on_output(now.as_secs_f64(), seq, self.cfg.window);
        }
        self.out.push_back(pkt);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        self.stats.first_send.get_or_insert(now);
        if seq > self.maxseq {
            self.maxseq = seq;
            if !self.rtt_active {
                self.rtt_active = true;
                if seq > self.rtt_seq {
                    self.rtt_seq = seq;
                    self.rtt_ts = now;
                }
            }
            self.record(now, TraceKind::Send, seq);
        } else {
            self.stats.retransmissions += 1;
            self.record(now, TraceKind::Retransmit, seq);
        }
        if !self.rtx_timer.is_armed() {
            self.set_rtx_timer(now);
        }
    }

    /// `VegasTcpAgent::recv` for an ACK of packet `a` (ns2-semantics.md 8.1).
    #[cold]
    #[inline(never)]
    fn vegas_recv(&mut self, now: Instant, a: i64) {
        let mut v = self.vegas.take().expect("a Vegas sender");
        let vt = v.time(now.as_secs_f64());
        self.stats.acks_received += 1;
        self.stats.last_ack_received = Some(now);
        v.on_first_ack(vt);
        let thresh = self.cfg.dupack_threshold;
        if a > self.last_ack {
            if self.last_ack == 0 && self.cfg.delay_growth {
                self.cwnd = self.initial_window();
            }
            // Leave the duplicate-ACK inflation; Vegas uses ssthresh only in slow start.
            if self.dupacks > thresh && self.cwnd > v.newcwnd {
                self.cwnd = v.newcwnd;
                self.ssthresh = 2;
            }
            let oldack = self.last_ack;
            self.newack(now, a);
            self.stats.last_new_ack = Some(now);
            // Packet 0 is data (no SYN), so packets 0..=a are acknowledged.
            self.stats.packets_acked = (a + 1).max(0) as u64;
            self.stats.bytes_acked = self.stats.packets_acked * self.cfg.segment_size as u64;
            if !self.closed && self.highest_ack >= self.curseq - 1 {
                self.closed = true;
                if !self.infinite {
                    self.stats.done_at = Some(now);
                }
            }
            if a >= v.begseq {
                let (c, s) = v.per_rtt(vt, self.t_seqno, self.last_ack, self.cwnd, self.ssthresh);
                self.cwnd = c;
                self.ssthresh = s;
            }
            // The increment is decided once per RTT: stop at ssthresh within the RTT.
            if v.incr == 1.0 && self.cwnd >= self.ssthresh as f64 {
                v.incr = 0.0;
            }
            // Grow only while at most 2 packets ahead of what is in flight.
            if v.incr > 0.0 && (self.cwnd - (self.t_seqno - self.last_ack) as f64) <= 2.0 {
                self.cwnd += v.incr;
            }
            if self.cfg.max_cwnd != 0 && (self.cwnd as i64) > self.cfg.max_cwnd as i64 {
                self.cwnd = self.cfg.max_cwnd as f64;
            }
            v.sample(vt, oldack, a);
            // The first two new ACKs after a duplicate: retransmit the next packet at once if
            // its fine-grained timeout has passed (the window was cut already).
            if v.worried > 0 {
                v.worried -= 1;
                match v.expired(vt, a) {
                    Some(e) => {
                        self.dupacks = thresh;
                        self.vegas = Some(v);
                        self.output(now, e);
                        v = self.vegas.take().expect("a Vegas sender");
                    }
                    None => v.worried = 0,
                }
            }
            self.record(now, TraceKind::Ack, a);
        } else if a == self.last_ack {
            self.dupacks += 1;
            self.stats.dup_acks += 1;
            let expired = v.expired(vt, self.last_ack);
            if expired.is_some() || self.dupacks == thresh {
                let (send_time, transmits) = v.slot_of(self.last_ack + 1);
                if !self.cfg.bugfix
                    || self.highest_ack > self.recover
                    || self.last_cwnd_action != CwndAction::Timeout
                {
                    let mut win = self.window();
                    self.last_cwnd_action = CwndAction::DupAck;
                    self.recover = self.maxseq;
                    v.worried = (self.t_seqno - self.last_ack).min(2);
                    // Fine-grained timeout backoff.
                    if transmits > 1 {
                        v.timeout *= 2.0;
                    } else {
                        v.timeout += v.timeout / 8.0;
                    }
                    // Cut the window only if it was not cut since this packet was sent.
                    if v.t_cwnd_changed < send_time {
                        win = if win <= 3 {
                            2
                        } else if transmits > 1 {
                            win >> 1
                        } else {
                            win - (win >> 2)
                        };
                        v.newcwnd = win as f64;
                        self.cwnd = v.newcwnd + self.dupacks as f64;
                        v.t_cwnd_changed = vt;
                    }
                    // reset_rtx_timer(mild, backoff): back off, restart, stop timing.
                    self.rtt.backoff();
                    self.set_rtx_timer(now);
                    self.rtt_active = false;
                    self.stats.fast_retransmits += 1;
                    let seq = expired.unwrap_or(self.last_ack + 1);
                    self.record(now, TraceKind::FastRetransmit, seq);
                    self.vegas = Some(v);
                    self.output(now, seq);
                    v = self.vegas.take().expect("a Vegas sender");
                    if transmits == 1 {
                        self.dupacks = thresh;
                    }
                }
            } else if self.dupacks > thresh {
                self.cwnd += 1.0;
            }
            self.record(now, TraceKind::DupAck, a);
        }
        self.vegas = Some(v);
        if self.dupacks == 0 || self.dupacks >= thresh {
            self.send_much(now);
        }
    }

    /// `VegasTcpAgent::timeout`: go-back-N with backoff, ssthresh halved, cwnd 2 (`v_slowstart_`).
    /// No idle special case: with `slow_start_restart` (ns-2's default) an idle sender does all
    /// of it at every RTO (ns2-semantics.md 8.1).
    #[cold]
    #[inline(never)]
    fn vegas_timeout(&mut self, now: Instant) {
        let idle = self.highest_ack == self.maxseq;
        if idle && !self.cfg.slow_start_restart {
            return;
        }
        self.dupacks = 0;
        self.recover = self.maxseq;
        self.last_cwnd_action = CwndAction::Timeout;
        // reset_rtx_timer(0): back off, restart, go back to the first unacknowledged packet.
        self.rtt.backoff();
        self.set_rtx_timer(now);
        self.t_seqno = self.highest_ack + 1;
        self.rtt_active = false;
        if idle {
            self.stats.idle_timeouts += 1;
        } else {
            self.stats.timeouts += 1;
        }
        self.slowdown(true, CwndCut::One);
        let v = self.vegas.as_deref_mut().expect("a Vegas sender");
        self.cwnd = v.slowstart;
        v.newcwnd = 0.0;
        v.t_cwnd_changed = v.time(now.as_secs_f64());
        let kind = if idle {
            TraceKind::IdleTimeout
        } else {
            TraceKind::Timeout
        };
        self.record(now, kind, self.highest_ack);
        self.send_much(now);
    }
}

/// Writes a first-transmission stamp (`TcpSender::first_send_stamp`) into a segment's payload;
/// nothing for 0 or a payload shorter than the stamp.
#[inline(always)]
fn write_stamp(payload: &mut [u8], stamp: u64) {
    if stamp != 0 {
        if let Some(b) = payload.get_mut(..8) {
            b.copy_from_slice(&stamp.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_reduce_halves_as_a_double() {
        // ns2-semantics.md 1.7 examples: cwnd 7.6 -> 2.35: ssthresh 3, cwnd 3.8; 2.1b4: 3 and 3.
        // cwnd 3.9 -> 2.35: ssthresh 2, cwnd 1.95; 2.1b4: ssthresh 2, cwnd 1 (not clamped).
        for (cwnd, precise, ss, want) in [
            (7.6, true, 3, 3.8),
            (7.6, false, 3, 3.0),
            (3.9, true, 2, 1.95),
            (3.9, false, 2, 1.0),
        ] {
            let cfg = TcpConfig {
                precision_reduce: precise,
                ..TcpConfig::dissertation(1000)
            };
            let mut s = TcpSender::new(cfg, FlowAddr::default(), Duration::ZERO).unwrap();
            s.cwnd = cwnd;
            s.slowdown(true, CwndCut::Half);
            assert_eq!(s.ssthresh(), ss);
            assert!(
                (s.cwnd() - want).abs() < 1e-12,
                "{cwnd} {precise}: {}",
                s.cwnd()
            );
        }
    }
}
