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
//! keeps one timer for the oldest outstanding frame: armed when a frame is sent and none is armed,
//! re-armed when an ACK advances the window or after a go-back (seed004-ch4 sec. 3.2 [inferred]: "one
//! timer for the oldest outstanding frame is sufficient").

use std::collections::VecDeque;

use bytes::Bytes;

use super::{scaled, Outbox, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{Duration, Instant, Timer};
use crate::wire::arq::{ArqFrame, ARQ_DATA_HEADER};
use crate::wire::Frame;

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
        let s = super::SrConfig::recommended(link, super::NakPolicy::Once);
        GbnConfig {
            window: MAX_WINDOW,
            rto: s.rto,
            ack_delay: s.ack_delay,
        }
    }
}

pub struct Gbn {
    cfg: GbnConfig,
    factor: f64,
    tx_base: u8,
    tx_buf: VecDeque<Bytes>,
    rto_timer: Timer,
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
            factor: 1.0,
            tx_base: 0,
            tx_buf: VecDeque::new(),
            rto_timer: Timer::default(),
            rx_expected: 0,
            ack_timer: Timer::default(),
            stats: ServiceStats::default(),
        }
    }

    pub fn config(&self) -> &GbnConfig {
        &self.cfg
    }

    fn send_data(&mut self, off: usize, first: bool, out: &mut Outbox) {
        let payload = self.tx_buf[off].clone();
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

    fn on_ack(&mut self, now: Instant, ack: u8) {
        let k = ack.wrapping_sub(self.tx_base) as usize;
        if k == 0 || k > self.tx_buf.len() {
            return; // no progress, or stale
        }
        self.tx_buf.drain(..k);
        self.tx_base = ack;
        if self.tx_buf.is_empty() {
            self.rto_timer.cancel();
        } else {
            self.rto_timer.set(now + scaled(self.cfg.rto, self.factor));
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
        self.tx_buf.push_back(packet.into_bytes());
        self.send_data(self.tx_buf.len() - 1, true, out);
        if !self.rto_timer.is_armed() {
            self.rto_timer.set(now + scaled(self.cfg.rto, self.factor));
        }
    }

    fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox) {
        self.stats.frames_received += 1;
        match ArqFrame::parse(&frame) {
            Ok(ArqFrame::Data { seq, ack, payload }) => {
                self.on_ack(now, ack);
                if !self.ack_timer.is_armed() {
                    self.ack_timer
                        .set(now + scaled(self.cfg.ack_delay, self.factor));
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
        if self.rto_timer.poll_expired(now) && !self.tx_buf.is_empty() {
            // L735: "restart from the earliest buffered frame": resend everything outstanding.
            for off in 0..self.tx_buf.len() {
                self.send_data(off, false, out);
            }
            self.rto_timer.set(now + scaled(self.cfg.rto, self.factor));
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

    fn poll_timeout(&self) -> Option<Instant> {
        crate::time::earliest([self.rto_timer.deadline(), self.ack_timer.deadline()])
    }

    fn set_timer_factor(&mut self, factor: f64) {
        self.factor = factor;
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
