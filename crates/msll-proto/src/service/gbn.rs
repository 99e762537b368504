//! Go-Back-N, full recovery (seed004-ch4 sec. 3.2, seed 004 L735-L737).
//!
//! ```text
//!  IP --packet--> [ window full? drop ] --Data(seq, ack)--> peer     one timer, oldest frame
//!                   ^ Ack(a) frees < a      timeout: resend ALL outstanding from the base
//!  peer --Data--> [ seq == expected ? deliver : discard ] --> IP
//!                   delayed-ACK timer -> pure Ack(expected) unless a data frame carried it
//! ```
//!
//! "Each timeout causes the scheme to restart from the earliest buffered frame" (L735). The thesis
//! says a timer is set "after each transmission"; restarting one timer on every new frame would let
//! a steady flow postpone the timeout of a lost base frame indefinitely, so this implementation
//! keeps one timer for the oldest outstanding frame: armed when a data frame starts transmission and
//! none is armed, re-armed when the oldest frame is retransmitted (a go-back) or when an ACK advances
//! the window (seed004-ch4 sec. 3.2 [inferred]: "one timer for the oldest outstanding frame is
//! sufficient").
//!
//! The timer runs from the moment a frame starts transmission (`Service::handle_transmitted`), not
//! from its hand-off to the scheduler: FIFO waiting is not link round trip (see the trait doc). At
//! most one copy of a frame waits in the scheduler; a go-back re-queues only the outstanding frames
//! that have no copy waiting (a copy still waiting goes out anyway, possibly ahead of the re-queued
//! earlier frames; the receiver then discards it and the next timeout resends it in order).

use std::collections::VecDeque;

use crate::buf::Buf;

use super::{HandOffLog, Outbox, ScaledTimers, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{Duration, Instant, Timer};
use crate::wire::arq::{ArqFrame, ARQ_DATA_HEADER};
use crate::wire::Frame;

/// Indices into the service's `ScaledTimers`.
const RTO: usize = 0;
const ACK_DELAY: usize = 1;

/// Largest GBN window. GBN alone could use 255; 127 keeps "the same values for all similar
/// schemes" (L777) and the same old/new classification as SR.
pub const MAX_WINDOW: u8 = 127;

/// Resolved GBN parameters (durations before the timer factor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GbnConfig {
    pub window: u8,
    /// Retransmission timeout ("equal to at least the round trip delay of the link", L735).
    pub rto: Duration,
    /// Delayed-ACK timer (L737).
    pub ack_delay: Duration,
}

impl GbnConfig {
    /// Recommended defaults: the same values as SR ("trying to use the same values for all
    /// similar schemes", L777); see [`super::SrConfig::recommended`].
    pub fn recommended(link: &super::LinkInfo) -> Self {
        Self::recommended_with(link, super::sr::DEFAULT_RTO_QUEUE_FRAMES)
    }

    /// [`super::SrConfig::recommended_with`]'s timers.
    pub fn recommended_with(link: &super::LinkInfo, queue_frames: u32) -> Self {
        let s = super::SrConfig::recommended_with(link, super::NakPolicy::Once, queue_frames);
        GbnConfig {
            window: MAX_WINDOW,
            rto: s.rto,
            ack_delay: s.ack_delay,
        }
    }
}

struct TxSlot {
    payload: Buf,
    /// A copy was handed to the scheduler and has not started transmission yet.
    queued: bool,
    /// A copy has started transmission at least once.
    sent: bool,
}

pub struct Gbn {
    cfg: GbnConfig,
    /// `cfg.rto` and `cfg.ack_delay` under the timer factor.
    timers: ScaledTimers<2>,
    tx_base: u8,
    tx_buf: VecDeque<TxSlot>,
    rto_timer: Timer,
    /// Data copies waiting in the scheduler (to notice copies a bounded queue dropped).
    handed: HandOffLog<u8>,
    rx_expected: u8,
    ack_timer: Timer,
    stats: ServiceStats,
}

impl Gbn {
    /// # Panics
    /// If the window is not in 1..=127.
    pub fn new(cfg: GbnConfig) -> Self {
        assert!(
            (1..=MAX_WINDOW).contains(&cfg.window),
            "GBN window {}",
            cfg.window
        );
        Gbn {
            cfg,
            timers: ScaledTimers::new([cfg.rto, cfg.ack_delay]),
            tx_base: 0,
            tx_buf: VecDeque::new(),
            rto_timer: Timer::default(),
            handed: HandOffLog::default(),
            rx_expected: 0,
            ack_timer: Timer::default(),
            stats: ServiceStats::default(),
        }
    }

    pub fn config(&self) -> &GbnConfig {
        &self.cfg
    }

    /// Hand frame `off` of the window to the scheduler, unless a copy is already waiting there.
    fn send_data(&mut self, now: Instant, off: usize, first: bool, out: &mut Outbox) {
        if self.tx_buf[off].queued {
            return;
        }
        self.tx_buf[off].queued = true;
        self.handed.push(now, self.tx_base.wrapping_add(off as u8));
        let payload = self.tx_buf[off].payload.clone();
        let plen = payload.len();
        let f = ArqFrame::Data {
            seq: self.tx_base.wrapping_add(off as u8),
            ack: self.rx_expected,
            payload,
        }
        .emit();
        self.ack_timer.cancel();
        let kind = if first {
            SentKind::Data(plen)
        } else {
            SentKind::Retransmission
        };
        kind.count(&mut self.stats, &f);
        out.send(f);
    }

    /// A copy of data frame `seq` started transmission (or was dropped by the scheduler: lost).
    fn on_sent(&mut self, now: Instant, seq: u8) {
        let off = seq.wrapping_sub(self.tx_base) as usize;
        if off >= self.tx_buf.len() {
            return; // acknowledged while it waited in the scheduler
        }
        self.tx_buf[off].queued = false;
        self.tx_buf[off].sent = true;
        if off == 0 || !self.rto_timer.is_armed() {
            self.rto_timer.set(now + self.timers.get(RTO));
        }
    }

    fn on_ack(&mut self, now: Instant, ack: u8) {
        let k = ack.wrapping_sub(self.tx_base) as usize;
        if k == 0 || k > self.tx_buf.len() {
            return; // no progress, or stale
        }
        self.tx_buf.drain(..k);
        self.tx_base = ack;
        if !self.tx_buf.is_empty() && self.tx_buf[0].sent && !self.tx_buf[0].queued {
            self.rto_timer.set(now + self.timers.get(RTO));
        } else {
            // empty, or the new oldest frame has not left yet: armed at its transmission
            self.rto_timer.cancel();
        }
    }
}

impl Service for Gbn {
    fn handle_packet(&mut self, now: Instant, packet: Packet, out: &mut Outbox) {
        self.stats.packets_in += 1;
        if self.tx_buf.len() >= self.cfg.window as usize {
            self.stats.packets_dropped += 1; // L761: full buffer array drops frames
            return;
        }
        self.tx_buf.push_back(TxSlot {
            payload: packet.into_bytes(),
            queued: false,
            sent: false,
        });
        self.send_data(now, self.tx_buf.len() - 1, true, out);
    }

    fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox) {
        self.stats.frames_received += 1;
        match ArqFrame::from_frame(frame) {
            Ok(ArqFrame::Data { seq, ack, payload }) => {
                self.on_ack(now, ack);
                if !self.ack_timer.is_armed() {
                    self.ack_timer.set(now + self.timers.get(ACK_DELAY));
                }
                if seq == self.rx_expected {
                    // "the receiver accepts frames strictly in sequence" (L735)
                    self.rx_expected = self.rx_expected.wrapping_add(1);
                    self.stats.packets_delivered += 1;
                    out.deliver(Packet::new(payload));
                } else {
                    // Out of sequence (after a loss) or an old duplicate: discarded. The ACK timer
                    // is armed anyway so the sender learns where we stand (sec. 3.2 [inferred]).
                    self.stats.duplicates_received += 1;
                }
            }
            Ok(ArqFrame::Ack { ack }) => self.on_ack(now, ack),
            // GBN never sends NAKs; a NAK here is a peer speaking another scheme.
            Ok(ArqFrame::Nak { .. }) => self.stats.protocol_errors += 1,
            Err(_) => self.stats.malformed_frames += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        for d in self.handed.take_stale(now, self.timers.get(RTO)) {
            self.on_sent(now, d); // dropped by the scheduler: see HandOffLog
        }
        if self.rto_timer.poll_expired(now) && !self.tx_buf.is_empty() {
            // L735: "restart from the earliest buffered frame": resend everything outstanding.
            // The timer restarts when the oldest frame's copy starts transmission.
            for off in 0..self.tx_buf.len() {
                self.send_data(now, off, false, out);
            }
        }
        if self.ack_timer.poll_expired(now) {
            let f = ArqFrame::Ack {
                ack: self.rx_expected,
            }
            .emit();
            SentKind::Ack.count(&mut self.stats, &f);
            out.send(f);
        }
    }

    fn handle_transmitted(&mut self, now: Instant, frame: &Frame) {
        let Some(seq) = ArqFrame::data_seq(frame) else {
            return;
        };
        // Copies handed off before this one and never reported were dropped by the scheduler.
        for d in self.handed.report(now, seq) {
            self.on_sent(now, d);
        }
        self.on_sent(now, seq);
    }

    fn set_drops_reported(&mut self) {
        self.handed.set_drops_reported();
    }

    fn handle_dropped(&mut self, now: Instant, frame: &Frame) {
        let Some(seq) = ArqFrame::data_seq(frame) else {
            return;
        };
        // Lost on the air as far as the timers go; the older copies still wait in the queue.
        self.handed.discard(now, seq);
        self.on_sent(now, seq);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        crate::time::earliest([
            self.rto_timer.deadline(),
            self.ack_timer.deadline(),
            self.handed.deadline(|| self.timers.get(RTO)),
        ])
    }

    fn set_timer_factor(&mut self, factor: f64) {
        self.timers.set_factor(factor);
    }

    fn stats(&self) -> ServiceStats {
        self.stats
    }

    fn name(&self) -> &'static str {
        "gbn"
    }

    fn header_overhead(&self) -> usize {
        ARQ_DATA_HEADER
    }
}
