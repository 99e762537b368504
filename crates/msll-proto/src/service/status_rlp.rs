//! Periodic-status selective repeat: the "RLP" of Wong's thesis (seed 002 sec. 3.2.3.3, after
//! Paul, Ayanoglu, LaPorta, Chen, Sabnani & Gitlin, INFOCOM'95), with its best-effort variant
//! (sec. 5.1.2). Not Karn's RLP of seeds 000/001/004 (`service::rlp`).
//!
//! ```text
//!  IP --packet--> [backlog] --number, at most W outstanding--> Data(seq) --> peer
//!                  ^ Status(nr, bitmap): release acked; resend every unacked frame last sent
//!                    more than MTBT ago (no retransmission timer at all)
//!  peer --Data--> [receive window, W] --in sequence | at once (non-sequencing)--> IP
//!                  every P: Status(next expected, bitmap of frames held), idle or not;
//!                  best-effort: a hole older than mrd is abandoned (seed002.md sec. 3.7b)
//! ```
//!
//! Seed 002 parameters (seed002.md sec. 3.4, 3.8): window 15, status period P = 0.2 s, minimum time
//! between transmissions MTBT = 0.3 s, modulo-128 sequence numbers; mrd 2-5 s in ch. 5.
//!
//! * The status timer runs from time zero at both ends, "whether or not any data has arrived"
//!   (sec. 3.4): a lost status is simply followed by the next one, and a first data frame lost
//!   on the air is still recovered. A link built by this scheme therefore always has a deadline.
//! * One frame at a time (sec. 1.5, "the DLC hands the MAC one frame at a time and waits for
//!   Confirm"): the scheme keeps its frames and hands the scheduler the next one only when the
//!   previous one starts transmission (`handle_transmitted`), choosing by the priority
//!   status > retransmission > new frame (seed002.md A29). So a retransmission never waits behind
//!   a window of new frames, and MTBT counts from actual transmissions.
//! * The sender resends frame i on a status only if `now - last transmission of i > MTBT`
//!   (sec. 3.4); that includes frames beyond the bitmap, so a lost last frame is recovered too.
//! * Non-sequencing delivery (sec. 3.5) hands each new frame to IP at once and still drops
//!   duplicates (seed002.md sec. 3.0 REC).
//! * Best-effort (`mrd`, sec. 3.7b): the receiver lists each hole when first detected; before
//!   every status, holes missing longer than mrd are abandoned, reported as received so that the
//!   sender releases them (A16), and the in-sequence run behind them is released (A17). Tail losses
//!   are never detected and stay fully recovered, as the thesis notes.
//! * Packets wait in an unbounded-in-spirit backlog while the window is full (A25: the thesis's
//!   queues never overflow); `backlog` caps it, and a packet beyond the cap is dropped and counted.
//! * A frame a bounded scheduler queue refuses (`handle_dropped`) counts as sent and lost at
//!   once, for MTBT and for the frame log alike: a loss in the queue is logged as a loss on the
//!   air would be, so every frame the receiver resolves (received, or abandoned under `mrd`
//!   before any copy reached the air) has a first transmission to pair with
//!   (`FrameLog::delays`). A frame handed over and never reported (a driver without transmit
//!   reports) counts as sent five status periods later.

use std::collections::VecDeque;

use crate::buf::Buf;
use serde::{Deserialize, Serialize};

use super::{FrameLog, LateReports, Outbox, ScaledTimers, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{earliest, Duration, Instant};
use crate::wire::status_rlp::{StatusFrame, STATUS_DATA_HEADER, STATUS_MAX_BITMAP};
use crate::wire::Frame;

const PERIOD: usize = 0;
const MTBT: usize = 1;
const MRD: usize = 2;

/// Sequence numbers are 7 bits (seed002.md sec. 3.0).
const SEQ_MOD: u8 = 128;
/// Largest window: half the modulo-128 space minus one (the thesis's bound, seed002.md sec. 3.0).
pub const MAX_WINDOW: u8 = 63;
/// Seed 002's window, status period, MTBT (sec. 3.8, the best values of Figs 4.19-4.20).
pub const DEFAULT_WINDOW: u8 = 15;
pub const DEFAULT_STATUS_PERIOD: Duration = Duration::from_millis(200);
pub const DEFAULT_MTBT: Duration = Duration::from_millis(300);
/// Packets the sender holds beyond its window before dropping (seed002.md A25: unlimited; a TCP
/// window of 4096 bytes is 40 fragments).
pub const DEFAULT_BACKLOG: u32 = 1000;

/// When the receiver hands frames to IP (seed002.md sec. 3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sequencing {
    /// Re-sequencing buffer, delivery in order.
    #[default]
    InSequence,
    /// Every new frame at once, in any order (the thesis's recommendation).
    NonSequencing,
}

/// Resolved parameters (durations before the timer factor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatusRlpConfig {
    /// Outstanding frames, 1..=63.
    pub window: u8,
    pub status_period: Duration,
    /// Minimum time between transmissions of one frame.
    pub mtbt: Duration,
    pub sequencing: Sequencing,
    /// Maximum recovery delay: `None` recovers every frame (reliable).
    pub mrd: Option<Duration>,
    /// Packets held while the window is full.
    pub backlog: u32,
}

impl Default for StatusRlpConfig {
    fn default() -> Self {
        StatusRlpConfig {
            window: DEFAULT_WINDOW,
            status_period: DEFAULT_STATUS_PERIOD,
            mtbt: DEFAULT_MTBT,
            sequencing: Sequencing::InSequence,
            mrd: None,
            backlog: DEFAULT_BACKLOG,
        }
    }
}

#[derive(Debug)]
struct TxSlot {
    payload: Buf,
    acked: bool,
    /// Start of the last transmission (`None`: handed off, not yet reported).
    last_tx: Option<Instant>,
    /// Queued for retransmission or handed to the scheduler: not to be queued again.
    pending: bool,
    /// Transmitted at least once (the frame log records the first transmission).
    sent_once: bool,
}

#[derive(Debug, Clone, Default)]
enum RxSlot {
    /// Beyond the highest sequence number seen.
    #[default]
    Unknown,
    Missing,
    /// Received; the payload is held only for in-sequence delivery.
    Received(Option<Buf>),
    /// Given up after mrd (best-effort): counts as received for acknowledgment.
    Abandoned,
}

/// What waits in the scheduler (one frame at most).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Handed {
    Status,
    Data(u8),
}

/// One end of a link (full duplex: sender and receiver).
pub struct StatusRlp {
    cfg: StatusRlpConfig,
    timers: ScaledTimers<3>,
    // sender
    backlog: VecDeque<Buf>,
    /// Oldest unacknowledged sequence number; `tx[i]` is frame `va + i`.
    va: u8,
    tx: VecDeque<TxSlot>,
    retx: VecDeque<u8>,
    /// The frame in the scheduler and when it was handed.
    handed: Option<(Handed, Instant)>,
    /// Frames taken as sent unreported, whose reports may still come.
    late: LateReports<Handed>,
    /// The driver reports every transmission and drop (`Service::set_drops_reported`): a handed
    /// frame not reported yet is still waiting, never taken as sent.
    drops_reported: bool,
    /// Hand the next frame at this instant (set by a transmit report, which has no outbox).
    pump_at: Option<Instant>,
    status_due: bool,
    next_status: Instant,
    // receiver
    vr: u8,
    rx: VecDeque<RxSlot>,
    /// Slots `0..rx_span` are known (up to the highest sequence number seen).
    rx_span: usize,
    /// Holes in detection order (= sequence order), with the time each was detected.
    holes: VecDeque<(Instant, u8)>,
    stats: ServiceStats,
    /// Seed 002 Figs 4.9/5.3's link-layer delay (`Service::enable_frame_log`; `None`: off).
    log: Option<Box<FrameLog>>,
}

impl StatusRlp {
    /// # Panics
    /// If the window is not in 1..=63 (a configuration bug; `SchemeConfig::validate` refuses it).
    pub fn new(cfg: StatusRlpConfig) -> Self {
        assert!(
            (1..=MAX_WINDOW).contains(&cfg.window),
            "status-RLP window {}",
            cfg.window
        );
        let period = cfg.status_period.max(super::MIN_TIMER);
        StatusRlp {
            cfg,
            timers: ScaledTimers::new([period, cfg.mtbt, cfg.mrd.unwrap_or(Duration::ZERO)]),
            backlog: VecDeque::new(),
            va: 0,
            tx: VecDeque::new(),
            retx: VecDeque::new(),
            handed: None,
            late: LateReports::default(),
            drops_reported: false,
            pump_at: None,
            status_due: false,
            next_status: Instant::ZERO + period,
            vr: 0,
            rx: vec![RxSlot::Unknown; cfg.window as usize].into(),
            rx_span: 0,
            holes: VecDeque::new(),
            stats: ServiceStats::default(),
            log: None,
        }
    }

    pub fn config(&self) -> &StatusRlpConfig {
        &self.cfg
    }

    /// How long a handed frame may go unreported before it counts as sent: 5 status periods
    /// (1 s). Drivers report a frame when its medium access starts, so the wait is the previous
    /// frame's access delay plus air time; with seed 002's MAC delay (mean 0.1 s) that exceeds
    /// one period for about a fifth of the frames, and a fallback of one period handed a second
    /// frame early and started MTBT too soon.
    fn unreported(&self) -> Duration {
        self.timers.get(PERIOD).saturating_mul(5)
    }

    fn send(&mut self, now: Instant, kind: SentKind, h: Handed, f: StatusFrame, out: &mut Outbox) {
        let f = f.emit();
        kind.count(&mut self.stats, &f);
        self.handed = Some((h, now));
        self.late.handed();
        out.send(f);
    }

    /// Hand the scheduler the next frame if none of ours waits there: status, then the oldest
    /// retransmission, then a new frame (seed002.md A29).
    fn pump(&mut self, now: Instant, out: &mut Outbox) {
        self.pump_at = None;
        if self.handed.is_some() {
            return;
        }
        if self.status_due {
            self.status_due = false;
            let f = self.status_frame();
            self.send(now, SentKind::Ack, Handed::Status, f, out);
            return;
        }
        while let Some(seq) = self.retx.pop_front() {
            let i = seq.wrapping_sub(self.va) % SEQ_MOD;
            let Some(slot) = self.tx.get_mut(i as usize) else {
                continue;
            };
            if slot.acked {
                slot.pending = false;
                continue;
            }
            slot.last_tx = None;
            let payload = slot.payload.clone();
            let f = StatusFrame::Data { seq, payload };
            self.send(now, SentKind::Retransmission, Handed::Data(seq), f, out);
            return;
        }
        if self.tx.len() < self.cfg.window as usize {
            if let Some(payload) = self.backlog.pop_front() {
                let seq = self.va.wrapping_add(self.tx.len() as u8) % SEQ_MOD;
                self.tx.push_back(TxSlot {
                    payload: payload.clone(),
                    acked: false,
                    last_tx: None,
                    pending: true,
                    sent_once: false,
                });
                let kind = SentKind::Data(payload.len());
                self.send(
                    now,
                    kind,
                    Handed::Data(seq),
                    StatusFrame::Data { seq, payload },
                    out,
                );
            }
        }
    }

    /// The frame `h` started transmission at `now` (or is taken as sent).
    fn on_sent(&mut self, now: Instant, h: Handed) {
        self.handed = None;
        if let Handed::Data(seq) = h {
            let i = seq.wrapping_sub(self.va) % SEQ_MOD;
            if let Some(slot) = self.tx.get_mut(i as usize) {
                slot.last_tx = Some(now);
                slot.pending = false;
                if !slot.sent_once {
                    slot.sent_once = true;
                    if let Some(log) = self.log.as_deref_mut() {
                        log.first_tx.push((seq as u32, now));
                    }
                }
            }
        }
    }

    // ---- sender ----

    fn on_status(&mut self, now: Instant, nr: u8, bitmap: &[u8]) {
        let d = nr.wrapping_sub(self.va) % SEQ_MOD;
        if d as usize > self.tx.len() {
            // Acknowledges frames never sent: a peer bug or a stale frame; ignore it.
            self.stats.protocol_errors += 1;
            return;
        }
        for _ in 0..d {
            self.tx.pop_front();
        }
        self.va = nr;
        for (byte_i, &b) in bitmap.iter().enumerate() {
            for bit in 0..8 {
                let i = 1 + byte_i * 8 + bit;
                if b >> bit & 1 == 1 {
                    if let Some(slot) = self.tx.get_mut(i) {
                        slot.acked = true;
                    }
                }
            }
        }
        while self.tx.front().is_some_and(|s| s.acked) {
            self.tx.pop_front();
            self.va = (self.va + 1) % SEQ_MOD;
        }
        // Sec. 3.4: resend each unacknowledged frame whose last transmission is older than MTBT.
        let mtbt = self.timers.get(MTBT);
        for (i, slot) in self.tx.iter_mut().enumerate() {
            if slot.acked || slot.pending {
                continue;
            }
            if slot.last_tx.is_some_and(|t| now.saturating_since(t) > mtbt) {
                slot.pending = true;
                self.retx.push_back(self.va.wrapping_add(i as u8) % SEQ_MOD);
            }
        }
    }

    // ---- receiver ----

    fn status_frame(&self) -> StatusFrame {
        let bits = self.cfg.window as usize - 1;
        let mut map = vec![0u8; bits.div_ceil(8).min(STATUS_MAX_BITMAP)];
        for off in 1..self.rx_span {
            if matches!(self.rx[off], RxSlot::Received(_) | RxSlot::Abandoned) {
                map[(off - 1) / 8] |= 1 << ((off - 1) % 8);
            }
        }
        StatusFrame::Status {
            nr: self.vr,
            bitmap: Buf::from(map),
        }
    }

    fn on_data(&mut self, now: Instant, seq: u8, payload: Buf, out: &mut Outbox) {
        let d = (seq.wrapping_sub(self.vr) % SEQ_MOD) as usize;
        if d >= self.cfg.window as usize {
            // Behind the window: an old copy (the sender never runs W ahead of our V(R)).
            self.stats.duplicates_received += 1;
            return;
        }
        if d < self.rx_span {
            match self.rx[d] {
                RxSlot::Missing => {
                    if let Some(k) = self.holes.iter().position(|&(_, s)| s == seq) {
                        self.holes.remove(k);
                    }
                }
                // A late copy of an abandoned frame: it was never delivered, but the hole is
                // already exposed to TCP; drop it as the thesis's receiver would.
                _ => {
                    self.stats.duplicates_received += 1;
                    return;
                }
            }
        } else {
            for off in self.rx_span..d {
                self.rx[off] = RxSlot::Missing;
                self.holes
                    .push_back((now, self.vr.wrapping_add(off as u8) % SEQ_MOD));
            }
            self.rx_span = d + 1;
        }
        if let Some(log) = self.log.as_deref_mut() {
            log.resolved.push((seq as u32, now, true));
        }
        match self.cfg.sequencing {
            Sequencing::InSequence => self.rx[d] = RxSlot::Received(Some(payload)),
            Sequencing::NonSequencing => {
                self.rx[d] = RxSlot::Received(None);
                self.deliver(payload, out);
            }
        }
        self.advance(out);
    }

    fn deliver(&mut self, p: Buf, out: &mut Outbox) {
        self.stats.packets_delivered += 1;
        out.deliver(Packet::new(p));
    }

    /// Slide the window over received and abandoned frames, releasing held ones in sequence.
    fn advance(&mut self, out: &mut Outbox) {
        while self.rx_span > 0 && matches!(self.rx[0], RxSlot::Received(_) | RxSlot::Abandoned) {
            if let Some(RxSlot::Received(Some(p))) = self.rx.pop_front() {
                self.deliver(p, out);
            }
            self.rx.push_back(RxSlot::Unknown);
            self.vr = (self.vr + 1) % SEQ_MOD;
            self.rx_span -= 1;
        }
    }

    /// Best-effort (sec. 3.7b): abandon every hole detected more than mrd ago, oldest first.
    fn abandon_old_holes(&mut self, now: Instant, out: &mut Outbox) {
        if self.cfg.mrd.is_none() {
            return;
        }
        let mrd = self.timers.get(MRD);
        let mut any = false;
        while let Some(&(t, seq)) = self.holes.front() {
            if now.saturating_since(t) <= mrd {
                break;
            }
            self.holes.pop_front();
            let d = (seq.wrapping_sub(self.vr) % SEQ_MOD) as usize;
            if d < self.rx_span && matches!(self.rx[d], RxSlot::Missing) {
                self.rx[d] = RxSlot::Abandoned;
                self.stats.give_ups += 1;
                if let Some(log) = self.log.as_deref_mut() {
                    log.resolved.push((seq as u32, now, false));
                }
                any = true;
            }
        }
        if any {
            self.advance(out);
        }
    }
}

impl Service for StatusRlp {
    fn handle_packet(&mut self, now: Instant, packet: Packet, out: &mut Outbox) {
        self.stats.packets_in += 1;
        // The cap counts packets the window has no room for: those that wait only for the
        // frame already handed to the scheduler (one at a time) do not count (review, session
        // 37: a backlog of 1 dropped the third of three packets with the window nearly empty).
        let room = (self.cfg.window as usize).saturating_sub(self.tx.len());
        if self.backlog.len() >= self.cfg.backlog as usize + room {
            self.stats.packets_dropped += 1;
            return;
        }
        self.backlog.push_back(packet.into_bytes());
        self.pump(now, out);
    }

    fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox) {
        self.stats.frames_received += 1;
        match StatusFrame::from_frame(frame) {
            Ok(StatusFrame::Data { seq, payload }) => self.on_data(now, seq, payload, out),
            Ok(StatusFrame::Status { nr, bitmap }) => self.on_status(now, nr, bitmap.as_slice()),
            Err(_) => self.stats.malformed_frames += 1,
        }
        self.pump(now, out);
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        if self.pump_at.is_some_and(|t| t <= now) {
            self.pump_at = None;
        }
        let period = self.timers.get(PERIOD);
        if let Some((h, at)) = self.handed.filter(|_| !self.drops_reported) {
            if now.saturating_since(at) >= self.unreported() {
                // Never reported: taken as sent (and lost). Its report may still come, behind a
                // long medium access, and must not be taken for that of a later copy.
                self.on_sent(now, h);
                self.late.taken_as_sent(h);
            }
        }
        if self.next_status <= now {
            // The first period boundary after `now`, in one step: an endpoint rebuilt by the
            // tunnel starts this clock at zero while the daemon's reads its uptime, and a loop of
            // one period per step ran uptime / P times (review, session 37).
            let p = period.as_nanos().max(1);
            let behind = now.saturating_since(self.next_status).as_nanos();
            self.next_status += Duration::from_nanos((behind / p + 1) * p);
            self.abandon_old_holes(now, out);
            // One status per period: while the last one still waits in the scheduler (its
            // content fixed when it was built), this period's is skipped.
            if self.handed.map(|(h, _)| h) != Some(Handed::Status) {
                self.status_due = true;
            }
        }
        self.pump(now, out);
    }

    fn handle_transmitted(&mut self, now: Instant, frame: &Frame) {
        let h = handed_of(frame);
        // Usually a status shares a late frame's identity: a data frame is resent only after
        // MTBT, mostly behind a frame handed over since. Queue order makes either case right.
        if self.late.is_late(h) {
            return;
        }
        if self.handed.is_some_and(|(w, _)| w == h) {
            self.on_sent(now, h);
            // The next frame goes to the scheduler now, from `handle_timeout`.
            self.pump_at = Some(now);
        }
    }

    /// A bounded queue refuses a frame when it is handed over, so the report is always that of
    /// the handed frame (never a late one): taken as sent and lost at once.
    fn handle_dropped(&mut self, now: Instant, frame: &Frame) {
        let h = handed_of(frame);
        if self.handed.is_some_and(|(w, _)| w == h) {
            self.on_sent(now, h);
            self.pump_at = Some(now);
        }
    }

    fn held_packets(&self) -> usize {
        self.backlog.len()
    }

    fn set_drops_reported(&mut self) {
        self.drops_reported = true;
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let wants = self.status_due || !self.retx.is_empty() || !self.backlog.is_empty();
        earliest([
            Some(self.next_status),
            self.pump_at.filter(|_| wants),
            self.handed
                .filter(|_| !self.drops_reported)
                .map(|(_, at)| at + self.unreported()),
        ])
    }

    fn set_timer_factor(&mut self, factor: f64) {
        self.timers.set_factor(factor);
    }

    fn stats(&self) -> ServiceStats {
        self.stats
    }

    fn name(&self) -> &'static str {
        "status-rlp"
    }

    fn header_overhead(&self) -> usize {
        STATUS_DATA_HEADER
    }

    fn enable_frame_log(&mut self) {
        self.log.get_or_insert_with(Default::default);
    }

    fn frame_log(&self) -> Option<&FrameLog> {
        self.log.as_deref()
    }
}

fn handed_of(frame: &Frame) -> Handed {
    match StatusFrame::data_seq(frame) {
        Some(seq) => Handed::Data(seq),
        None => Handed::Status,
    }
}

#[cfg(test)]
mod tests;
