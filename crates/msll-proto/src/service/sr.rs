//! Selective Repeat, full recovery: basic SR, SR/M1 and SR/M2 (seed004-ch4 sec. 3.3-sec. 3.5, seed 004
//! L739-L747). One value of [`NakPolicy`] selects the variant; frames and timers are shared.
//!
//! ```text
//!  IP --packet--> [ window full? drop ] --Data(seq, ack)--> peer      (one timer: oldest frame)
//!                    ^ Ack(a) frees < a    ^ Nak(s): retransmit s now
//!  peer --Data--> [ receive window of W buffers ] --in sequence--> IP
//!                    |-> Nak(...) per NakPolicy;  delayed-ACK timer -> pure Ack(expected)
//! ```
//!
//! Sender: frames are numbered modulo 256 and buffered in a window of at most 127 (seed 004 L1009:
//! "127 retransmission buffers ... the maximum allowed by our implementation"). A packet arriving
//! while the window is full is dropped and counted (L761, L1004: Fig 5.2 relies on this). There is
//! no retry limit.
//!
//! Timers ([`RetransmitTimer`]; seed004-ch4 sec. 3.3 and sec. 7 item 4: "retransmit only the timed-out
//! frame") start when the frame starts transmission on the link (`Service::handle_transmitted`),
//! not when it is handed to the scheduler: "the sender sets a retransmission timer after each
//! transmission" (L735), and time spent in the FIFO behind other frames is not link round trip.
//! At most one copy of a frame waits in the scheduler: a timeout or NAK for a frame whose copy is
//! still queued sends nothing (that copy will serve it), so the FIFO never holds more than the
//! window and a backlog cannot feed itself.
//! * `Oldest` (default): GBN's single timer for the oldest unacknowledged frame (SR "extends GBN",
//!   L741; seed004-ch4 sec. 3.3 "Sender: as GBN, except ... retransmit only that frame"), re-armed
//!   when the cumulative ACK advances or that frame is resent; expiry resends only that frame.
//!   Holes above the base are left to NAKs (SR/M1, SR/M2): "timeouts are still required for the
//!   cases where negative acknowledgments themselves are lost" (L741). Frames the receiver already
//!   holds are never resent ("the receiver buffer allows the sender to avoid retransmitting frames
//!   that have already been received", L739).
//! * `PerFrame` (option, the spec's sec. 3.3 [inferred] reading): every transmission arms that
//!   frame's timer. ACKs are cumulative only, so the sender cannot tell frames the receiver holds
//!   out of sequence from lost ones: while a hole pins the window every held frame times out and
//!   is resent each RTO. Measured with FTP over TCP (docs/schemes.md) this resends about 1.5
//!   (Cellular) to 3 (WLAN) frames per data frame, keeps SR/M2 10-35% below the seed004-ch4 sec. 8
//!   ceilings and below RLP everywhere, against C17/C20/C30; the oldest-frame timer reaches the
//!   ceilings (WLAN 1.98 / 1.87 Mbit/s at levels 1 / 4). Under a continuous CBR source on a loaded
//!   Cellular link per-frame SR/M2 still overflows its window (Figs 5.2/5.3 mechanism).
//!
//! Receiver: buffers out-of-sequence frames in a window of the same size and releases them in
//! sequence; acknowledgments are cumulative "next expected" (seed004-ch4 sec. 7 item 3), piggy-backed on
//! every data frame, else sent as a 2-byte pure ACK when the delayed-ACK timer expires (L737).

use std::collections::VecDeque;

use crate::buf::Buf;
use serde::{Deserialize, Serialize};

use super::{HandOffLog, Outbox, ScaledTimers, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{Duration, Instant, Timer};
use crate::wire::arq::{ArqFrame, ARQ_DATA_HEADER};
use crate::wire::Frame;

/// Indices into the service's `ScaledTimers`.
const RTO: usize = 0;
const ACK_DELAY: usize = 1;

/// Largest SR/GBN window: half the 8-bit sequence space minus one, so that an old duplicate can
/// never be mistaken for a new frame (seed004-ch4 sec. 3.0.1: "consistent with an SR window < 256/2").
pub const MAX_WINDOW: u8 = 127;

/// How the receiver sends negative acknowledgments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NakPolicy {
    /// Basic SR (L741): one NAK, for the earliest missing frame, on an out-of-sequence arrival;
    /// no further NAK "until the receiver's window advances".
    #[default]
    Once,
    /// SR/M1 (L743): "every time a hole appears ... negative acknowledgments are sent for all
    /// missing frames, in strictly ascending sequence".
    PerWindow,
    /// SR/M2 (L745): SR/M1 plus re-NAKs of earlier missing frames when a retransmission that is not
    /// the earliest missing frame arrives, limited by per-frame NAK counters.
    PerFrame,
}

/// Which frames carry a retransmission timer (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetransmitTimer {
    /// One timer per outstanding frame, armed at each (re)transmission.
    PerFrame,
    /// One timer, for the oldest unacknowledged frame (the default).
    #[default]
    Oldest,
}

/// Resolved SR parameters (durations before the timer factor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SrConfig {
    pub nak_policy: NakPolicy,
    /// Sender and receiver window, 1..=127.
    pub window: u8,
    /// Per-frame retransmission timeout ("at least the round trip delay of the link", L735).
    pub rto: Duration,
    /// Delayed-ACK timer (L737).
    pub ack_delay: Duration,
    pub timer: RetransmitTimer,
}

/// Full data frames of queueing the default retransmission timeout allows for, the same allowance
/// as RLP's NAK timer ([`super::rlp::DEFAULT_NAK_QUEUE_FRAMES`]).
pub const DEFAULT_RTO_QUEUE_FRAMES: u32 = super::rlp::DEFAULT_NAK_QUEUE_FRAMES;

impl SrConfig {
    /// Recommended defaults: [`SrConfig::recommended_with`] and [`DEFAULT_RTO_QUEUE_FRAMES`].
    pub fn recommended(link: &super::LinkInfo, nak_policy: NakPolicy) -> Self {
        Self::recommended_with(link, nak_policy, DEFAULT_RTO_QUEUE_FRAMES)
    }

    /// Recommended values (seed004-ch4 sec. 3.10, AMB-11 of seed004-ch5): window 127, RTO = 2 x
    /// link RTT of a full data frame plus a 2-byte control frame, plus `queue_frames` full
    /// data-frame times (Cellular 697 ms, PCS 517 ms, WLAN 52 ms with 8), delayed ACK = one full
    /// data-frame time ("one data-frame time to ~50 ms").
    ///
    /// Why the allowance: the seed used "the same values for all similar schemes" (L777), and
    /// RLP's NAK timer needs it (see `RlpConfig::recommended_with`). With the bare 2 x RTT (20 ms on
    /// WLAN) SR/M2 recovered a lost last frame of a short transfer about as fast as RLP's
    /// keepalive, so the seeds' WWW result "Karn's RLP beats Selective Repeat at higher loss
    /// rates ... Selective Repeat ... resorting to timeouts" (seed 000 Fig. 7, C47, C49) did not
    /// appear; with the common value it does (docs/schemes.md).
    pub fn recommended_with(
        link: &super::LinkInfo,
        nak_policy: NakPolicy,
        queue_frames: u32,
    ) -> Self {
        let frame = link.rate.tx_time(link.frame_payload + ARQ_DATA_HEADER);
        SrConfig {
            nak_policy,
            window: MAX_WINDOW,
            rto: link.frame_rtt(ARQ_DATA_HEADER).saturating_mul(2)
                + frame.saturating_mul(queue_frames as u64),
            ack_delay: link.rate.tx_time(link.frame_payload + ARQ_DATA_HEADER),
            timer: RetransmitTimer::Oldest,
        }
    }
}

#[derive(Default, Clone)]
struct RxSlot {
    data: Option<Buf>,
    /// NAKs sent for this (missing) frame: SR/M2's per-frame counter (L747).
    naks: u32,
}

struct TxSlot {
    payload: Buf,
    /// `RetransmitTimer::PerFrame`: this frame's timer, armed when a copy starts transmission.
    timer: Timer,
    /// A copy was handed to the scheduler and has not started transmission yet.
    queued: bool,
    /// A copy has started transmission at least once.
    sent: bool,
}

/// One end of a Selective Repeat link (both sender and receiver: full duplex, L737).
pub struct Sr {
    cfg: SrConfig,
    /// `cfg.rto` and `cfg.ack_delay` under the timer factor.
    timers: ScaledTimers<2>,
    // sender
    tx_base: u8,
    tx_buf: VecDeque<TxSlot>,
    /// `RetransmitTimer::Oldest`: the timer of the oldest unacknowledged frame.
    rto_timer: Timer,
    /// Data copies waiting in the scheduler (to notice copies a bounded queue dropped).
    handed: HandOffLog<u8>,
    // receiver
    rx_expected: u8,
    rx_buf: VecDeque<RxSlot>,
    /// Slots from `rx_expected` up to and including the highest sequence number received.
    rx_span: usize,
    /// Basic SR: a NAK was sent and the window has not advanced since (L741).
    nak_outstanding: bool,
    ack_timer: Timer,
    stats: ServiceStats,
}

impl Sr {
    /// # Panics
    /// If the window is not in 1..=127 (a configuration bug; `SchemeConfig::build` clamps).
    pub fn new(cfg: SrConfig) -> Self {
        assert!(
            (1..=MAX_WINDOW).contains(&cfg.window),
            "SR window {}",
            cfg.window
        );
        Sr {
            cfg,
            timers: ScaledTimers::new([cfg.rto, cfg.ack_delay]),
            tx_base: 0,
            tx_buf: VecDeque::new(),
            rto_timer: Timer::default(),
            handed: HandOffLog::default(),
            rx_expected: 0,
            rx_buf: vec![RxSlot::default(); cfg.window as usize].into(),
            rx_span: 0,
            nak_outstanding: false,
            ack_timer: Timer::default(),
            stats: ServiceStats::default(),
        }
    }

    pub fn config(&self) -> &SrConfig {
        &self.cfg
    }

    /// Hand frame `off` of the window to the scheduler, unless a copy is already waiting there.
    /// Its timer starts in `handle_transmitted`.
    fn send_data(&mut self, now: Instant, off: usize, first: bool, out: &mut Outbox) {
        let seq = self.tx_base.wrapping_add(off as u8);
        if self.tx_buf[off].queued {
            return;
        }
        self.tx_buf[off].queued = true;
        self.handed.push(now, seq);
        let payload = self.tx_buf[off].payload.clone();
        let plen = payload.len();
        let f = ArqFrame::Data {
            seq,
            ack: self.rx_expected,
            payload,
        }
        .emit();
        // The data frame carries the current cumulative ACK, so no pure ACK is owed (L737).
        self.ack_timer.cancel();
        let kind = if first {
            SentKind::Data(plen)
        } else {
            SentKind::Retransmission
        };
        kind.count(&mut self.stats, &f);
        out.send(f);
    }

    /// A copy of data frame `seq` started transmission (or was dropped by the scheduler, which
    /// is the same as lost on the air): its retransmission timer starts now.
    fn on_sent(&mut self, now: Instant, seq: u8) {
        let off = seq.wrapping_sub(self.tx_base) as usize;
        if off >= self.tx_buf.len() {
            return; // acknowledged while it waited in the scheduler
        }
        let at = now + self.timers.get(RTO);
        let slot = &mut self.tx_buf[off];
        slot.queued = false;
        slot.sent = true;
        match self.cfg.timer {
            // L735: "a retransmission timer after each transmission".
            RetransmitTimer::PerFrame => slot.timer.set(at),
            // the oldest frame (re)transmitted, or no timer running
            RetransmitTimer::Oldest if off == 0 || !self.rto_timer.is_armed() => {
                self.rto_timer.set(at)
            }
            RetransmitTimer::Oldest => {}
        }
    }

    fn send_nak(&mut self, off: usize, out: &mut Outbox) {
        let f = ArqFrame::Nak {
            seq: self.rx_expected.wrapping_add(off as u8),
        }
        .emit();
        SentKind::Nak.count(&mut self.stats, &f);
        out.send(f);
    }

    /// Cumulative ACK: the peer expects `ack` next, so every frame before it is received.
    fn on_ack(&mut self, now: Instant, ack: u8) {
        let k = ack.wrapping_sub(self.tx_base) as usize;
        if k == 0 || k > self.tx_buf.len() {
            return; // no progress, or a stale ACK (it cannot name an unsent frame)
        }
        self.tx_buf.drain(..k);
        self.tx_base = ack;
        if self.tx_buf.is_empty() {
            self.rto_timer.cancel();
        } else if self.cfg.timer == RetransmitTimer::Oldest {
            // The new oldest frame's timer: from now if it has left and no copy waits, else from
            // its next transmission.
            if self.tx_buf[0].sent && !self.tx_buf[0].queued {
                self.rto_timer.set(now + self.timers.get(RTO));
            } else {
                self.rto_timer.cancel();
            }
        }
    }

    fn on_nak(&mut self, now: Instant, seq: u8, out: &mut Outbox) {
        if self.cfg.nak_policy == NakPolicy::Once {
            // L741: "only the earliest frame may be negatively acknowledged, this implies that all
            // previous frames have been received".
            self.on_ack(now, seq);
        }
        let off = seq.wrapping_sub(self.tx_base) as usize;
        if off < self.tx_buf.len() {
            // L741: "the sender can retransmit negatively acknowledged frames immediately".
            self.send_data(now, off, false, out);
        }
    }

    fn on_data(&mut self, now: Instant, seq: u8, payload: Buf, out: &mut Outbox) {
        if !self.ack_timer.is_armed() {
            // L737: "a delayed acknowledgment timer which is set when a new frame arrives"; also
            // armed on duplicates, which mean our last ACK may have been lost.
            self.ack_timer.set(now + self.timers.get(ACK_DELAY));
        }
        let w = self.cfg.window as usize;
        let d = seq.wrapping_sub(self.rx_expected) as usize;
        if d >= w || self.rx_buf[d].data.is_some() {
            // Outside the window: an old duplicate (the sender never runs more than W ahead).
            self.stats.duplicates_received += 1;
            return;
        }
        let was_missing = d < self.rx_span;
        self.rx_buf[d].data = Some(payload);
        if !was_missing {
            // A new highest frame: the hole (rx_span..d) just appeared.
            if matches!(
                self.cfg.nak_policy,
                NakPolicy::PerWindow | NakPolicy::PerFrame
            ) {
                // SR/M1 (L743): NAK all missing frames in strictly ascending sequence.
                for x in self.rx_span..d {
                    if self.rx_buf[x].naks == 0 {
                        self.rx_buf[x].naks = 1;
                        self.send_nak(x, out);
                    }
                }
            }
            self.rx_span = d + 1;
        } else if d > 0 && self.cfg.nak_policy == NakPolicy::PerFrame {
            // SR/M2 (L745-L747): a retransmission arrived that is not the earliest missing frame, so
            // earlier missing frames were not retransmitted or were lost again. "We only send new
            // negative acknowledgments for frames that have been negatively acknowledged fewer or
            // the same number of times as the newly received frame, and increase their counters."
            let c = self.rx_buf[d].naks;
            for x in 0..d {
                if self.rx_buf[x].data.is_none() && self.rx_buf[x].naks <= c {
                    self.rx_buf[x].naks += 1;
                    self.send_nak(x, out);
                }
            }
        }
        if d > 0 && self.cfg.nak_policy == NakPolicy::Once && !self.nak_outstanding {
            // L741: NAK the earliest missing frame; not again until the window advances.
            self.nak_outstanding = true;
            self.send_nak(0, out);
        }
        if d == 0 {
            self.release(out);
        }
    }

    /// Release the in-sequence run at the window base and slide the window.
    fn release(&mut self, out: &mut Outbox) {
        while let Some(p) = self.rx_buf[0].data.take() {
            self.rx_buf.pop_front();
            self.rx_buf.push_back(RxSlot::default());
            self.rx_expected = self.rx_expected.wrapping_add(1);
            self.rx_span = self.rx_span.saturating_sub(1);
            self.nak_outstanding = false;
            self.stats.packets_delivered += 1;
            out.deliver(Packet::new(p));
        }
    }
}

impl Service for Sr {
    fn handle_packet(&mut self, now: Instant, packet: Packet, out: &mut Outbox) {
        self.stats.packets_in += 1;
        if self.tx_buf.len() >= self.cfg.window as usize {
            // L761/L1004: "its buffer array may fill up leading to frame drops".
            self.stats.packets_dropped += 1;
            return;
        }
        self.tx_buf.push_back(TxSlot {
            payload: packet.into_bytes(),
            timer: Timer::default(),
            queued: false,
            sent: false,
        });
        let off = self.tx_buf.len() - 1;
        self.send_data(now, off, true, out);
    }

    fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox) {
        self.stats.frames_received += 1;
        match ArqFrame::from_frame(frame) {
            Ok(ArqFrame::Data { seq, ack, payload }) => {
                self.on_ack(now, ack);
                self.on_data(now, seq, payload, out);
            }
            Ok(ArqFrame::Ack { ack }) => self.on_ack(now, ack),
            Ok(ArqFrame::Nak { seq }) => self.on_nak(now, seq, out),
            Err(_) => self.stats.malformed_frames += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        let rto = self.timers.get(RTO);
        for d in self.handed.take_stale(now, rto) {
            self.on_sent(now, d); // dropped by the scheduler: see HandOffLog
        }
        if self.rto_timer.poll_expired(now) && !self.tx_buf.is_empty() {
            self.send_data(now, 0, false, out);
        }
        for off in 0..self.tx_buf.len() {
            if self.tx_buf[off].timer.poll_expired(now) {
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
            return; // control frames carry no timer
        };
        // Copies handed off before this one and never reported were dropped by the scheduler:
        // sent and lost, as far as the timers go.
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
        // Per-frame timers exist only in `RetransmitTimer::PerFrame`; with the default `Oldest`
        // they are never armed, so skip scanning up to 127 slots after every event.
        let per_frame = (self.cfg.timer == RetransmitTimer::PerFrame)
            .then(|| self.tx_buf.iter().filter_map(|s| s.timer.deadline()).min())
            .flatten();
        per_frame
            .into_iter()
            .chain(self.rto_timer.deadline())
            .chain(self.ack_timer.deadline())
            .chain(self.handed.deadline(|| self.timers.get(RTO)))
            .min()
    }

    fn set_timer_factor(&mut self, factor: f64) {
        self.timers.set_factor(factor);
    }

    fn stats(&self) -> ServiceStats {
        self.stats
    }

    fn name(&self) -> &'static str {
        match self.cfg.nak_policy {
            NakPolicy::Once => "sr",
            NakPolicy::PerWindow => "sr-m1",
            NakPolicy::PerFrame => "sr-m2",
        }
    }

    fn header_overhead(&self) -> usize {
        ARQ_DATA_HEADER
    }
}
