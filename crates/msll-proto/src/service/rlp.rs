//! RLP, limited-recovery NAK-only ARQ after the IS-95 RLP (Karn), and RLP/OOS (seed004-ch4 sec. 3.6,
//! seed004-ch5 sec. 4.5-sec. 4.6, seed 004 L755-L761, L1029-L1031; seeds 000/001 "Karn's RLP").
//!
//! ```text
//!  IP --packet--> [circular buffer, B frames] --Data(seq)--> peer    no timers, no window, never blocks
//!                    ^ Nak(s): retransmit s          idle: Keepalive(highest seq sent) every T_ka
//!  peer --Data/Keepalive--> [receive window of B slots] --in sequence | on arrival (OOS)--> IP
//!                    hole -> Nak(x) for each missing x, ascending; NAK timer per frame;
//!                    after max_naks NAKs and one more timer expiry: give up, release, expose the hole
//! ```
//!
//! Buffer overrun (seed 004 sec. 4.2.2, L761): "the maximum time before giving up on a frame must be
//! smaller than the time needed to transmit the full buffer array. If we fail to do so, the sender
//! will replace frames that are still outstanding with new ones, their sequence numbers will be
//! confused, and the sender and receiver will lose synchronization". This implementation keeps the
//! receive window equal to the sender's buffer B <= 128 (half the 8-bit space), so both ends can
//! detect the condition instead of desynchronising:
//! * receiver: a new frame more than B - 1 ahead of the oldest unresolved frame proves the sender
//!   has overwritten that frame; every unresolved frame it can no longer retransmit is given up at
//!   once (released in sequence), and the event is counted;
//! * sender: a NAK for a sequence number that is not among the last B frames sent is counted and
//!   ignored (retransmitting whatever now occupies the slot would deliver the wrong packet).
//!
//! Both add to `ServiceStats::protocol_errors` and `ServiceStats::buffer_overruns`;
//! [`Rlp::buffer_overruns`] gives the split.
//!
//! Timers start at transmission (`Service::handle_transmitted`), not at hand-off to the scheduler:
//! the keepalive period counts from the transmission of the last new data frame and a keepalive
//! names the highest sequence number actually transmitted (a keepalive naming frames still waiting
//! in the FIFO would make the receiver NAK frames that are not lost); a NAK timer counts from the
//! transmission of its NAK (L759: "when a negative acknowledgment is sent, a timer is set").
//! A NAK for a frame whose retransmission still waits in the scheduler sends nothing more.
//!
//! Old/new classification: the link is FIFO and the sender holds at most 128 frames, so a frame
//! ahead of the highest sequence number seen by 1..=128 is new, anything else is a retransmission
//! or a duplicate (`Rlp::is_new`; mslld enforces the order, `Service::requires_fifo`).

use std::collections::VecDeque;

use crate::buf::Buf;
use serde::{Deserialize, Serialize};

use super::{HandOffLog, Outbox, ScaledTimers, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{Duration, Instant, Timer};
use crate::wire::rlp::{RlpFrame, RLP_DATA_HEADER};
use crate::wire::Frame;

/// Indices into the service's `ScaledTimers`.
const NAK_TIMEOUT: usize = 0;
const KEEPALIVE: usize = 1;

/// Largest circular buffer / receive window: half the 8-bit sequence space.
pub const MAX_BUFFER: u8 = 128;
/// Default buffer. seed004-ch4 sec. 3.10 suggests "<= 256"; 128 keeps old and new sequence numbers
/// apart and still cycles slower than the give-up time: 128 frames take 3.7 s (Cellular), 4.0 s
/// (PCS), 0.51 s (WLAN) against 3 x NAK timeout = 2.07 s, 1.55 s, 0.16 s (the default timers,
/// with their 8-frame queueing allowance). A timer factor (`set_timer_factor`, the MSLL's
/// heuristics) scales the give-up time but not the cycle: from x2 on Cellular, x3 on PCS and x4
/// on WLAN a sender that keeps the link busy with 128 new frames past a hole overruns the
/// buffer before the last NAK (L761's guarantee no longer holds; the frame is given up early and
/// counted in `buffer_overruns`). A TCP window of 20 cannot; a tunnel with many flows can (review,
/// session 47).
pub const DEFAULT_BUFFER: u8 = 128;

/// When the receiver releases frames to the layer above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// Plain RLP: hold out-of-order frames, release in sequence; a give-up exposes the hole.
    #[default]
    InSequence,
    /// RLP/OOS (L1029): "releases received frames to higher layers in order of arrival".
    OutOfSequence,
}

/// Resolved RLP parameters (durations before the timer factor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RlpConfig {
    /// NAKs per frame; the frame is given up when the timer after the last NAK expires
    /// (seed004-ch4 sec. 7 item 5: "after 3 NAKs and 3 timer expiries"). 0 gives up on detection.
    pub max_naks: u8,
    pub delivery: Delivery,
    /// Receiver NAK timer, "at least the round trip time for the link" (L759).
    pub nak_timeout: Duration,
    /// Idle period before a keepalive, and between keepalives while idle (AMB-5).
    pub keepalive: Duration,
    /// Sender circular buffer and receiver window, 1..=128.
    pub buffer: u8,
    /// Keepalives per idle period, 0 = unlimited ("periodically sends a keepalive", L755).
    pub max_idle_keepalives: u32,
}

/// Full data frames of sender queueing the default NAK timer allows for (AMB-4, see
/// [`RlpConfig::recommended_with`]).
pub const DEFAULT_NAK_QUEUE_FRAMES: u32 = 8;

impl RlpConfig {
    /// Recommended defaults: [`RlpConfig::recommended_with`] and [`DEFAULT_NAK_QUEUE_FRAMES`].
    pub fn recommended(link: &super::LinkInfo, max_naks: u8, delivery: Delivery) -> Self {
        Self::recommended_with(link, max_naks, delivery, DEFAULT_NAK_QUEUE_FRAMES)
    }

    /// NAK timeout = 2 x link RTT of a 2-byte-header data frame plus a NAK, plus `queue_frames`
    /// full data-frame times (AMB-4; Cellular 691 ms, PCS 516 ms, WLAN 52 ms with 8 frames),
    /// keepalive = 1 link RTT (AMB-5 and seed004-ch4 sec. 7 item 6: "recommend about 1 link
    /// RTT"), buffer 128, unlimited keepalives.
    ///
    /// Why the queue allowance: unlike an SR timer, which starts when its data frame leaves, the
    /// NAK timer runs while the retransmission waits in the *sender's* queue behind the frames
    /// of a TCP window (AMB-6: retransmissions join the tail). With the bare 2 x RTT (20 ms on
    /// WLAN, 2.5 frames) the timer fired before the retransmission arrived, RLP gave up 284
    /// frames per 100 MB run at WLAN level 4 (0 with SR/M2) and fell 7 % behind SR/M2, against
    /// the seed's "relaxed timeout values" (L777) and its RLP ~ SR/M2 results (C30, C49, C58).
    /// 8 frames removes the spurious give-ups on WLAN (1 per run) and brings RLP level with SR/M2
    /// on WLAN and PCS FTP (docs/schemes.md, sweep over 0-8 frames).
    pub fn recommended_with(
        link: &super::LinkInfo,
        max_naks: u8,
        delivery: Delivery,
        queue_frames: u32,
    ) -> Self {
        let rtt = link.frame_rtt(RLP_DATA_HEADER);
        let frame = link.rate.tx_time(link.frame_payload + RLP_DATA_HEADER);
        RlpConfig {
            max_naks,
            delivery,
            nak_timeout: rtt.saturating_mul(2) + frame.saturating_mul(queue_frames as u64),
            keepalive: rtt,
            buffer: DEFAULT_BUFFER,
            max_idle_keepalives: 0,
        }
    }
}

#[derive(Debug, Default, Clone)]
enum Slot {
    /// Not seen yet (beyond the highest sequence number known).
    #[default]
    Unknown,
    Missing {
        naks: u8,
        timer: Timer,
    },
    /// Received; the payload is held only for in-sequence delivery.
    Received(Option<Buf>),
    GaveUp,
}

/// One end of an RLP link (full duplex: both sender and receiver).
pub struct Rlp {
    cfg: RlpConfig,
    /// `cfg.nak_timeout` and `cfg.keepalive` under the timer factor.
    timers: ScaledTimers<2>,
    // sender
    tx_next: u8,
    /// The last `buffer` frames: payload, and whether a copy waits in the scheduler.
    tx_buf: VecDeque<(Buf, bool)>,
    /// Next sequence number to start its first transmission (new frames leave in order).
    tx_sent_next: u8,
    /// At least one data frame has started transmission.
    tx_any_sent: bool,
    ka_timer: Timer,
    idle_keepalives: u32,
    /// Data and NAK copies waiting in the scheduler, as (is NAK, seq), to notice copies a
    /// bounded queue dropped.
    handed: HandOffLog<(bool, u8)>,
    // receiver
    rx_expected: u8,
    rx: VecDeque<Slot>,
    /// Slots from `rx_expected` up to and including the highest sequence number known.
    rx_span: usize,
    /// RLP/OOS: sequence numbers behind the window that were given up and may still be delivered
    /// late (AMB-7: deliver). Cleared when the number is reused.
    late_ok: [bool; 256],
    rx_overruns: u64,
    tx_stale_naks: u64,
    stats: ServiceStats,
}

impl Rlp {
    /// # Panics
    /// If the buffer is not in 1..=128.
    pub fn new(cfg: RlpConfig) -> Self {
        assert!(
            (1..=MAX_BUFFER).contains(&cfg.buffer),
            "RLP buffer {}",
            cfg.buffer
        );
        Rlp {
            cfg,
            timers: ScaledTimers::new([cfg.nak_timeout, cfg.keepalive]),
            tx_next: 0,
            tx_buf: VecDeque::new(),
            tx_sent_next: 0,
            tx_any_sent: false,
            ka_timer: Timer::default(),
            idle_keepalives: 0,
            handed: HandOffLog::default(),
            rx_expected: 0,
            rx: vec![Slot::Unknown; cfg.buffer as usize].into(),
            rx_span: 0,
            late_ok: [false; 256],
            rx_overruns: 0,
            tx_stale_naks: 0,
            stats: ServiceStats::default(),
        }
    }

    pub fn config(&self) -> &RlpConfig {
        &self.cfg
    }

    /// Buffer-overrun events (seed 004 sec. 4.2.2): (receiver forced give-ups, sender stale NAKs).
    pub fn buffer_overruns(&self) -> (u64, u64) {
        (self.rx_overruns, self.tx_stale_naks)
    }

    fn send(&mut self, kind: SentKind, f: RlpFrame, out: &mut Outbox) {
        let f = f.emit();
        kind.count(&mut self.stats, &f);
        out.send(f);
    }

    // ---- sender ----

    fn on_nak(&mut self, now: Instant, seq: u8, out: &mut Outbox) {
        let back = self.tx_next.wrapping_sub(seq) as usize;
        if back == 0 || back > self.tx_buf.len() {
            // Not among the frames still buffered: overwritten (buffer overrun, L761) or never sent.
            self.tx_stale_naks += 1;
            self.stats.protocol_errors += 1;
            self.stats.buffer_overruns += 1;
            return;
        }
        let i = self.tx_buf.len() - back;
        if self.tx_buf[i].1 {
            return; // a copy still waits in the scheduler: it answers this NAK
        }
        self.tx_buf[i].1 = true;
        self.handed.push(now, (false, seq));
        let payload = self.tx_buf[i].0.clone();
        // L759: "buffered frames are retransmitted when they are negatively acknowledged";
        // retransmissions join the FIFO tail like new frames (AMB-6).
        self.send(
            SentKind::Retransmission,
            RlpFrame::Data { seq, payload },
            out,
        );
    }

    // ---- receiver ----

    fn nak_timeout(&self) -> Duration {
        self.timers.get(NAK_TIMEOUT)
    }

    /// Send the next NAK for the missing frame at offset `off`, or give it up if the limit is
    /// reached. Returns true if it was given up.
    fn nak_or_give_up(&mut self, now: Instant, off: usize, out: &mut Outbox) -> bool {
        let max = self.cfg.max_naks;
        let Slot::Missing { naks, timer } = &mut self.rx[off] else {
            return false;
        };
        if *naks < max {
            // L759: "When a negative acknowledgment is sent, a timer is set at the receiver":
            // armed in `handle_transmitted` when this NAK leaves.
            *naks += 1;
            timer.cancel();
            let seq = self.rx_expected.wrapping_add(off as u8);
            self.handed.push(now, (true, seq));
            self.send(SentKind::Nak, RlpFrame::Nak { seq }, out);
            false
        } else {
            // L759: "after a specified maximum number of timeouts ... the scheme gives up".
            self.rx[off] = Slot::GaveUp;
            self.stats.give_ups += 1;
            true
        }
    }

    /// Make `seq` (ahead of the highest known) the highest known sequence number. Every unknown
    /// slot before it, and `seq` itself if `top_missing` (a keepalive), becomes missing and is
    /// NAKed in ascending order (L757: "in the same manner as SR/M1"). Handles the buffer-overrun
    /// case first. Returns the offset of `seq` in the window.
    fn extend_to(&mut self, now: Instant, seq: u8, top_missing: bool, out: &mut Outbox) -> usize {
        let w = self.cfg.buffer as usize;
        let d = seq.wrapping_sub(self.rx_expected) as usize;
        if d >= w {
            self.overrun(d - w + 1, out);
        }
        let d = seq.wrapping_sub(self.rx_expected) as usize;
        debug_assert!(d < w && d >= self.rx_span);
        for off in self.rx_span..=d {
            let s = self.rx_expected.wrapping_add(off as u8);
            self.late_ok[s as usize] = false; // the number is reused by a newer frame
        }
        let first = self.rx_span;
        let last = if top_missing { d + 1 } else { d };
        for off in first..last {
            self.rx[off] = Slot::Missing {
                naks: 0,
                timer: Timer::default(),
            };
        }
        self.rx_span = d + 1;
        let mut gave_up = false;
        for off in first..last {
            gave_up |= self.nak_or_give_up(now, off, out);
        }
        if gave_up {
            // only with max_naks = 0: the base may be resolved now
            self.advance(out);
        }
        seq.wrapping_sub(self.rx_expected) as usize
    }

    /// The sender has sent a frame `shift` slots beyond our window, so it no longer buffers the
    /// first `shift` frames of the window: they can never arrive. Give them up now (releasing what
    /// follows them in sequence) and report the overrun (L761).
    fn overrun(&mut self, shift: usize, out: &mut Outbox) {
        let w = self.cfg.buffer as usize;
        self.rx_overruns += 1;
        self.stats.protocol_errors += 1;
        self.stats.buffer_overruns += 1;
        for off in 0..shift.min(w) {
            // Missing frames, and unknown ones (lost without ever being detected).
            if matches!(self.rx[off], Slot::Missing { .. } | Slot::Unknown) {
                self.rx[off] = Slot::GaveUp;
                self.stats.give_ups += 1;
            }
        }
        self.rx_span = self.rx_span.max(shift.min(w));
        self.advance(out);
        // A gap longer than the whole window: skip the rest, which holds no state.
        for _ in w..shift {
            self.mark_behind_gave_up(self.rx_expected);
            self.rx_expected = self.rx_expected.wrapping_add(1);
            self.stats.give_ups += 1;
        }
    }

    fn mark_behind_gave_up(&mut self, seq: u8) {
        if self.cfg.delivery == Delivery::OutOfSequence {
            self.late_ok[seq as usize] = true;
        }
    }

    /// Slide the window over resolved slots, releasing held frames in sequence.
    fn advance(&mut self, out: &mut Outbox) {
        while self.rx_span > 0 && matches!(self.rx[0], Slot::Received(_) | Slot::GaveUp) {
            match self.rx.pop_front() {
                Some(Slot::Received(Some(p))) => self.deliver(p, out),
                Some(Slot::GaveUp) => self.mark_behind_gave_up(self.rx_expected),
                _ => {}
            }
            self.rx.push_back(Slot::Unknown);
            self.rx_expected = self.rx_expected.wrapping_add(1);
            self.rx_span -= 1;
        }
    }

    fn deliver(&mut self, p: Buf, out: &mut Outbox) {
        self.stats.packets_delivered += 1;
        out.deliver(Packet::new(p));
    }

    /// Is `seq` ahead of the highest sequence number known, by 1..=128?
    ///
    /// The sender retransmits only its last `buffer` (<= 128) frames and the link is FIFO, so a
    /// retransmission or duplicate is at most 127 behind the highest number seen: a frame exactly
    /// 128 away is new (it follows a run of 127 losses). Taking it as old discarded it and every
    /// good frame after it up to 256 ahead as duplicates (review of session 34).
    fn is_new(&self, seq: u8) -> bool {
        let highest = self
            .rx_expected
            .wrapping_add(self.rx_span as u8)
            .wrapping_sub(1);
        let g = seq.wrapping_sub(highest);
        (1..=128).contains(&g)
    }

    fn on_data(&mut self, now: Instant, seq: u8, payload: Buf, out: &mut Outbox) {
        let oos = self.cfg.delivery == Delivery::OutOfSequence;
        let d = if self.is_new(seq) {
            self.extend_to(now, seq, false, out)
        } else {
            let d = seq.wrapping_sub(self.rx_expected) as usize;
            if d >= self.rx_span {
                // Behind the window: a duplicate, or a late retransmission after a give-up.
                if oos && self.late_ok[seq as usize] {
                    // AMB-7: RLP/OOS has no reason to discard a late frame it never delivered.
                    // It was counted as given up when the window passed it: delivered after
                    // all, it is not (review, session 43: the loss estimate of Table 8.1 counted
                    // it lost and delivered).
                    self.late_ok[seq as usize] = false;
                    self.stats.give_ups -= 1;
                    self.deliver(payload, out);
                } else {
                    self.stats.duplicates_received += 1;
                }
                return;
            }
            match self.rx[d] {
                Slot::Received(_) => {
                    self.stats.duplicates_received += 1;
                    return;
                }
                // Given up in the window (its NAK timer ran out before the copy came): taken
                // after all, so no longer given up.
                Slot::GaveUp => self.stats.give_ups -= 1,
                _ => {}
            }
            d
        };
        if oos {
            // L1029: released "in order of arrival"; only the state is kept.
            self.rx[d] = Slot::Received(None);
            self.deliver(payload, out);
        } else {
            self.rx[d] = Slot::Received(Some(payload));
        }
        self.advance(out);
    }

    fn on_keepalive(&mut self, now: Instant, highest: u8, out: &mut Outbox) {
        if self.is_new(highest) {
            // L755: the keepalive "indicating the highest sequence number sent" exposes lost tail
            // frames: every unknown frame up to and including `highest` is missing.
            self.extend_to(now, highest, true, out);
        }
    }
}

impl Service for Rlp {
    fn handle_packet(&mut self, now: Instant, packet: Packet, out: &mut Outbox) {
        self.stats.packets_in += 1;
        let seq = self.tx_next;
        self.tx_next = self.tx_next.wrapping_add(1);
        let payload = packet.into_bytes();
        // L757: "new frames are copied in a circular buffer and get the next number in sequence";
        // the oldest frame is overwritten, the sender never blocks.
        if self.tx_buf.len() == self.cfg.buffer as usize {
            self.tx_buf.pop_front();
        }
        self.tx_buf.push_back((payload.clone(), true));
        self.handed.push(now, (false, seq));
        let plen = payload.len();
        self.send(SentKind::Data(plen), RlpFrame::Data { seq, payload }, out);
    }

    fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox) {
        self.stats.frames_received += 1;
        match RlpFrame::from_frame(frame) {
            Ok(RlpFrame::Data { seq, payload }) => self.on_data(now, seq, payload, out),
            Ok(RlpFrame::Nak { seq }) => self.on_nak(now, seq, out),
            Ok(RlpFrame::Keepalive { highest }) => self.on_keepalive(now, highest, out),
            Err(_) => self.stats.malformed_frames += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        for d in self.handed.take_stale(now, self.nak_timeout()) {
            self.on_sent(now, d); // dropped by the scheduler: see HandOffLog
        }
        if self.ka_timer.poll_expired(now) && self.tx_any_sent {
            // AMB-5: the highest sequence number transmitted so far.
            let highest = self.tx_sent_next.wrapping_sub(1);
            self.send(SentKind::Keepalive, RlpFrame::Keepalive { highest }, out);
            self.idle_keepalives += 1;
            let max = self.cfg.max_idle_keepalives;
            if max == 0 || self.idle_keepalives < max {
                self.ka_timer.set(now + self.timers.get(KEEPALIVE));
            }
        }
        let mut gave_up = false;
        for off in 0..self.rx_span {
            let due = match &mut self.rx[off] {
                Slot::Missing { timer, .. } => timer.poll_expired(now),
                _ => false,
            };
            if due {
                gave_up |= self.nak_or_give_up(now, off, out);
            }
        }
        if gave_up {
            // L759: give up and release "all subsequent frames that have been received in
            // sequence to higher layers, making the 'hole' in the sequence space visible".
            self.advance(out);
        }
    }

    fn handle_transmitted(&mut self, now: Instant, frame: &Frame) {
        let Some(key) = RlpFrame::data_or_nak_seq(frame) else {
            return;
        };
        // Copies handed off before this one and never reported were dropped by the scheduler:
        // sent and lost, as far as the timers go.
        for d in self.handed.report(now, key) {
            self.on_sent(now, d);
        }
        self.on_sent(now, key);
    }

    fn set_drops_reported(&mut self) {
        self.handed.set_drops_reported();
    }

    fn handle_dropped(&mut self, now: Instant, frame: &Frame) {
        let Some(key) = RlpFrame::data_or_nak_seq(frame) else {
            return;
        };
        // Lost on the air as far as the timers go; the older copies still wait in the queue.
        self.handed.discard(now, key);
        self.on_sent(now, key);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        // Asked after every event of the service; the receiver window is usually complete
        // (`rx_span` 0), so it is not even iterated then.
        let mut t = self.ka_timer.deadline();
        let mut keep = |d: Option<Instant>| {
            if let Some(d) = d {
                if t.is_none_or(|x| d < x) {
                    t = Some(d);
                }
            }
        };
        if self.rx_span > 0 {
            for s in self.rx.range(..self.rx_span) {
                if let Slot::Missing { timer, .. } = s {
                    keep(timer.deadline());
                }
            }
        }
        keep(self.handed.deadline(|| self.nak_timeout()));
        t
    }

    fn set_timer_factor(&mut self, factor: f64) {
        self.timers.set_factor(factor);
    }

    fn stats(&self) -> ServiceStats {
        self.stats
    }

    fn name(&self) -> &'static str {
        match self.cfg.delivery {
            Delivery::InSequence => "rlp",
            Delivery::OutOfSequence => "rlp-oos",
        }
    }

    fn header_overhead(&self) -> usize {
        RLP_DATA_HEADER
    }
}

impl Rlp {
    /// A copy (data or NAK) started transmission, or was dropped by the scheduler (lost).
    fn on_sent(&mut self, now: Instant, key: (bool, u8)) {
        match key {
            (false, seq) => {
                let back = self.tx_next.wrapping_sub(seq) as usize;
                if (1..=self.tx_buf.len()).contains(&back) {
                    let i = self.tx_buf.len() - back;
                    self.tx_buf[i].1 = false;
                }
                // A first transmission (a frame at or after `tx_sent_next`): the idle period
                // restarts (L755). Reports come in hand-off order, except a frame the scheduler
                // dropped (`handle_dropped`), reported at once while older ones still wait: it
                // counts as sent and lost, so the keepalive names it and the peer NAKs it.
                let unsent = self.tx_next.wrapping_sub(self.tx_sent_next) as usize;
                if back >= 1 && back <= unsent {
                    self.tx_sent_next = seq.wrapping_add(1);
                    self.tx_any_sent = true;
                    self.idle_keepalives = 0;
                    self.ka_timer.set(now + self.timers.get(KEEPALIVE));
                }
            }
            (true, seq) => {
                let off = seq.wrapping_sub(self.rx_expected) as usize;
                let t = now + self.nak_timeout();
                if let Some(Slot::Missing { timer, .. }) =
                    self.rx.get_mut(off).filter(|_| off < self.rx_span)
                {
                    timer.set(t);
                }
            }
        }
    }
}
