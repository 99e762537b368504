//! Seed 002's HDLC-family link layers: LAPB (go-back-N with REJ) and CDPD MDLP (selective reject
//! with SREJ), both "started by sender and receiver" (seed002.md sec. 3.2, 3.3), with the
//! original link reset after N2 successive timeouts (sec. 3.6) or Wong's best-effort
//! re-synchronisation (sec. 3.7a).
//!
//! ```text
//!  IP --packet--> [backlog] --I(N(S), N(R)), at most W outstanding--> peer
//!     T1/T200 (restarted at every I-frame transmission) expires: resend every outstanding frame;
//!     N2 successive expiries: SABME -> UA (reset: all queued frames lost, numbers back to 0)
//!                                   -> UA+ACK(N) (best effort: frames below N given up, go on)
//!  LAPB receiver: in sequence -> IP; out of sequence -> discard, one REJ per reject state
//!  MDLP receiver: out of sequence -> hold (or hand to IP at once, non-sequencing), one SREJ
//!                 per newly missing frame; T2/T205 delays the RR unless an I frame carries N(R)
//! ```
//!
//! * Both receivers and senders run at each end (full duplex); every I frame carries N(R).
//! * REJ makes the LAPB sender go back N from N(R); SREJ makes the MDLP sender resend that frame
//!   only. A lost REJ/SREJ or retransmission is left to T1/T200 (an SREJ is never resent, A12).
//! * T1/T200 expiry resends *every* outstanding frame in both protocols (LAPB: go back N from
//!   V(A); MDLP: "reverts to retransmit all the I frames", sec. 3.3, the duplicates of Fig. 4.18).
//! * The retry counter counts successive expiries and restarts when N(R) advances; when it
//!   reaches N2 the link re-synchronises. `n2 = None` never does (the ch. 4 "reliable" runs, A11).
//! * Original reset (sec. 3.6): the initiator discards its outstanding frames and its backlog and
//!   restarts its send numbers; the responder discards its outstanding and held frames, restarts
//!   all its numbers and answers UA; the initiator restarts its receive numbers on the UA (frames
//!   the responder sent before the SABME arrive before it, in order) and sends nothing but
//!   SABME/UA until then. Best effort (sec. 3.7a): nothing is discarded; the responder hands
//!   IP what it holds, moves V(R) past the highest frame received and answers UA+ACK(V(R)); the
//!   initiator releases every frame below it and resends the rest. A SABME or its answer lost is
//!   resent on T1. LAPB's receiver holds nothing, so its best-effort V(R) never moves.
//! * One frame at a time to the scheduler, like status-RLP (seed002.md sec. 1.5, A29): control
//!   frames, then SABME, then retransmissions, then new frames.

use std::collections::VecDeque;

use crate::buf::Buf;
use serde::{Deserialize, Serialize};

use super::status_rlp::Sequencing;
use super::{LateReports, Outbox, ScaledTimers, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{earliest, Duration, Instant, Timer};
use crate::wire::hdlc::{HdlcFrame, HDLC_I_HEADER};
use crate::wire::Frame;

const T1: usize = 0;
const T2: usize = 1;
const SEQ_MOD: u8 = 128;

/// Largest window: half the modulo-128 space minus one (selective reject needs it; LAPB keeps
/// the same bound).
pub const MAX_WINDOW: u8 = 63;
/// Seed 002's values (sec. 3.8): window 15 (CDPD MDLP), T1/T200 1 s, T2/T205 0.3 s.
pub const DEFAULT_WINDOW: u8 = 15;
pub const DEFAULT_T1: Duration = Duration::from_millis(1000);
pub const DEFAULT_T2: Duration = Duration::from_millis(300);
/// Packets held beyond the window (A25), as status-RLP.
pub const DEFAULT_BACKLOG: u32 = super::status_rlp::DEFAULT_BACKLOG;

/// Which protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HdlcMode {
    /// Go-back-N with REJ (X.25 LAPB, modulo 128).
    Lapb,
    /// Selective reject with SREJ (CDPD MDLP).
    #[default]
    Mdlp,
}

/// What N2 successive timeouts do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetryLimit {
    /// SABME/UA: every queued frame is lost and the numbers restart (sec. 3.6).
    #[default]
    Reset,
    /// SABME/UA+ACK: only the frames the receiver lacks are given up (sec. 3.7a).
    BestEffort,
}

/// Resolved parameters (durations before the timer factor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HdlcConfig {
    pub mode: HdlcMode,
    /// Outstanding frames, 1..=63.
    pub window: u8,
    /// T1 (LAPB) / T200 (MDLP): retransmission timer.
    pub t1: Duration,
    /// T2 (LAPB) / T205 (MDLP): longest delay of an acknowledgment.
    pub t2: Duration,
    /// Successive timeouts before re-synchronising; `None`: never.
    pub n2: Option<u32>,
    pub on_limit: RetryLimit,
    /// MDLP only; LAPB always delivers in sequence.
    pub sequencing: Sequencing,
    pub backlog: u32,
}

impl HdlcConfig {
    /// Seed 002's best values for `mode`, reliable (no N2).
    pub fn seed002(mode: HdlcMode) -> Self {
        HdlcConfig {
            mode,
            window: DEFAULT_WINDOW,
            t1: DEFAULT_T1,
            t2: DEFAULT_T2,
            n2: None,
            on_limit: RetryLimit::Reset,
            sequencing: Sequencing::InSequence,
            backlog: DEFAULT_BACKLOG,
        }
    }
}

#[derive(Debug)]
struct TxSlot {
    payload: Buf,
}

#[derive(Debug, Clone, Default)]
enum RxSlot {
    #[default]
    Unknown,
    Missing,
    Received(Option<Buf>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Handed {
    Control,
    Sabme,
    Data(u8),
}

/// One end of a LAPB or MDLP link.
pub struct Hdlc {
    cfg: HdlcConfig,
    timers: ScaledTimers<2>,
    // sender
    backlog: VecDeque<Buf>,
    va: u8,
    /// `tx[i]` is frame `va + i`; every one has been handed to the scheduler at least once.
    tx: VecDeque<TxSlot>,
    retx: VecDeque<u8>,
    t1: Timer,
    retries: u32,
    /// SABME sent, waiting for UA / UA+ACK: no new I frames.
    resetting: bool,
    sabme_due: bool,
    ctrl: VecDeque<HdlcFrame>,
    handed: Option<(Handed, Instant)>,
    /// Frames taken as sent unreported, whose reports may still come.
    late: LateReports<Handed>,
    /// The driver reports every transmission and drop (`Service::set_drops_reported`): a handed
    /// frame not reported yet is still waiting, never taken as sent.
    drops_reported: bool,
    pump_at: Option<Instant>,
    // receiver
    vr: u8,
    ack_pending: bool,
    t2: Timer,
    /// LAPB: a REJ was sent and the expected frame has not arrived yet.
    rejected: bool,
    /// MDLP: slots `0..rx_span` from V(R) up to the highest frame received.
    rx: VecDeque<RxSlot>,
    rx_span: usize,
    /// Link re-synchronisations this end started, and frames given up by them.
    resets: u64,
    stats: ServiceStats,
}

impl Hdlc {
    /// # Panics
    /// If the window is not in 1..=63 (`SchemeConfig::validate` refuses it first).
    pub fn new(cfg: HdlcConfig) -> Self {
        assert!(
            (1..=MAX_WINDOW).contains(&cfg.window),
            "HDLC window {}",
            cfg.window
        );
        Hdlc {
            cfg,
            timers: ScaledTimers::new([cfg.t1, cfg.t2]),
            backlog: VecDeque::new(),
            va: 0,
            tx: VecDeque::new(),
            retx: VecDeque::new(),
            t1: Timer::default(),
            retries: 0,
            resetting: false,
            sabme_due: false,
            ctrl: VecDeque::new(),
            handed: None,
            late: LateReports::default(),
            drops_reported: false,
            pump_at: None,
            vr: 0,
            ack_pending: false,
            t2: Timer::default(),
            rejected: false,
            rx: vec![RxSlot::Unknown; cfg.window as usize].into(),
            rx_span: 0,
            resets: 0,
            stats: ServiceStats::default(),
        }
    }

    pub fn config(&self) -> &HdlcConfig {
        &self.cfg
    }

    /// Re-synchronisations this end started (N2 reached).
    pub fn resets(&self) -> u64 {
        self.resets
    }

    fn vs(&self) -> u8 {
        self.va.wrapping_add(self.tx.len() as u8) % SEQ_MOD
    }

    fn send(&mut self, now: Instant, kind: SentKind, h: Handed, f: HdlcFrame, out: &mut Outbox) {
        let f = f.emit();
        kind.count(&mut self.stats, &f);
        self.handed = Some((h, now));
        self.late.handed();
        out.send(f);
    }

    /// An I frame carries N(R): no separate RR is needed any more.
    fn i_frame(&mut self, ns: u8, payload: Buf) -> HdlcFrame {
        self.ack_pending = false;
        self.t2.cancel();
        self.ctrl.retain(|c| !matches!(c, HdlcFrame::Rr { .. }));
        HdlcFrame::I {
            ns,
            nr: self.vr,
            payload,
        }
    }

    /// Hand the scheduler the next frame if none of ours waits there.
    fn pump(&mut self, now: Instant, out: &mut Outbox) {
        self.pump_at = None;
        if self.handed.is_some() {
            return;
        }
        if self.resetting && self.cfg.on_limit == RetryLimit::Reset {
            // The initiator's receiver still runs on the old numbers until the UA (frames the
            // peer sent before the SABME arrive first, FIFO); its acknowledgments would only
            // confuse the peer's new numbering.
            self.ctrl
                .retain(|c| matches!(c, HdlcFrame::Ua | HdlcFrame::UaAck { .. }));
        }
        while let Some(c) = self.ctrl.pop_front() {
            // A control frame queued behind a handed one says what held then; it leaves with
            // what holds now (real HDLC fills N(R) in at transmission; review, session 46: a
            // REJ for a frame that arrived meanwhile made the sender go back over frames the
            // receiver had).
            let c = match c {
                HdlcFrame::Rr { .. } => HdlcFrame::Rr { nr: self.vr },
                // Only a REJ of the reject state in force (the missing frame may have come,
                // and another gone missing since: its own REJ is queued behind).
                HdlcFrame::Rej { nr } if !self.rejected || nr != self.vr => continue,
                HdlcFrame::Srej { seq } if !self.still_missing(seq) => continue,
                c => c,
            };
            let kind = match c {
                HdlcFrame::Rej { .. } | HdlcFrame::Srej { .. } => SentKind::Nak,
                _ => SentKind::Ack,
            };
            self.send(now, kind, Handed::Control, c, out);
            return;
        }
        if self.sabme_due {
            self.sabme_due = false;
            self.send(
                now,
                SentKind::Keepalive,
                Handed::Sabme,
                HdlcFrame::Sabme,
                out,
            );
            return;
        }
        if self.resetting {
            return;
        }
        while let Some(seq) = self.retx.pop_front() {
            let i = seq.wrapping_sub(self.va) % SEQ_MOD;
            let Some(slot) = self.tx.get(i as usize) else {
                continue; // acknowledged meanwhile
            };
            let payload = slot.payload.clone();
            let f = self.i_frame(seq, payload);
            self.send(now, SentKind::Retransmission, Handed::Data(seq), f, out);
            return;
        }
        if self.tx.len() < self.cfg.window as usize {
            if let Some(payload) = self.backlog.pop_front() {
                let seq = self.vs();
                self.tx.push_back(TxSlot {
                    payload: payload.clone(),
                });
                let kind = SentKind::Data(payload.len());
                let f = self.i_frame(seq, payload);
                self.send(now, kind, Handed::Data(seq), f, out);
            }
        }
    }

    /// Whether MDLP frame `seq` is still missing at the receiver (an SREJ for it is due).
    fn still_missing(&self, seq: u8) -> bool {
        let d = (seq.wrapping_sub(self.vr) % SEQ_MOD) as usize;
        d < self.rx_span && matches!(self.rx[d], RxSlot::Missing)
    }

    fn queue_retx(&mut self, seq: u8) {
        if !self.retx.contains(&seq) {
            self.retx.push_back(seq);
        }
    }

    /// Resend every outstanding frame from `from` (go back N; also every T1/T200 expiry).
    fn go_back(&mut self, from: u8) {
        self.retx.clear();
        let d = from.wrapping_sub(self.va) % SEQ_MOD;
        for i in d as usize..self.tx.len() {
            self.retx.push_back(self.va.wrapping_add(i as u8) % SEQ_MOD);
        }
    }

    // ---- sender ----

    /// N(R) from the peer: release every frame below it. False if it acknowledges frames never
    /// sent (counted, ignored).
    fn on_nr(&mut self, now: Instant, nr: u8) -> bool {
        let d = nr.wrapping_sub(self.va) % SEQ_MOD;
        if d as usize > self.tx.len() {
            self.stats.protocol_errors += 1;
            return false;
        }
        if d > 0 {
            for _ in 0..d {
                self.tx.pop_front();
            }
            self.va = nr;
            self.retries = 0;
            if self.resetting {
                // T1 now waits for the answer to our SABME: an acknowledgment of our I frames
                // does not stop it, or a lost SABME would never be resent.
            } else if self.tx.is_empty() {
                self.t1.cancel();
            } else {
                // A14: restart on an acknowledgment that covers only some frames.
                self.t1.set(now + self.timers.get(T1));
            }
        }
        true
    }

    fn on_t1(&mut self, now: Instant) {
        if self.resetting {
            // SABME or its answer lost: ask again (sec. 3.6). Armed again when the SABME
            // leaves; until then, as a guard.
            self.sabme_due = true;
            self.t1.set(now + self.timers.get(T1));
            return;
        }
        if self.tx.is_empty() {
            return;
        }
        self.retries += 1;
        if self.cfg.n2.is_some_and(|n2| self.retries >= n2) {
            self.start_resync();
            return;
        }
        self.go_back(self.va);
        // Armed again when the first retransmission starts; until then, as a guard.
        self.t1.set(now + self.timers.get(T1));
    }

    /// N2 reached: SABME, after discarding (original reset) or not (best effort).
    fn start_resync(&mut self) {
        self.resets += 1;
        self.resetting = true;
        self.sabme_due = true;
        self.retx.clear();
        if self.cfg.on_limit == RetryLimit::Reset {
            self.stats.give_ups += self.tx.len() as u64;
            self.stats.packets_dropped += self.backlog.len() as u64;
            self.tx.clear();
            self.backlog.clear();
            self.va = 0;
        }
    }

    fn reset_receiver(&mut self) {
        self.vr = 0;
        self.rejected = false;
        self.ack_pending = false;
        self.t2.cancel();
        for s in self.rx.iter_mut() {
            *s = RxSlot::Unknown;
        }
        self.rx_span = 0;
        self.ctrl
            .retain(|c| matches!(c, HdlcFrame::Ua | HdlcFrame::UaAck { .. }));
    }

    fn on_sabme(&mut self, out: &mut Outbox) {
        match self.cfg.on_limit {
            RetryLimit::Reset => {
                // Sec. 3.6: the responder discards what it holds and restarts its numbers too.
                // A re-synchronisation of its own (both ends reached N2) is settled by this one:
                // no SABME of ours may follow the UA, and the retry count starts again.
                self.stats.give_ups += self.tx.len() as u64;
                self.tx.clear();
                self.retx.clear();
                self.va = 0;
                self.reset_receiver();
                self.resetting = false;
                self.sabme_due = false;
                self.retries = 0;
                self.t1.cancel();
                self.ctrl.push_back(HdlcFrame::Ua);
            }
            RetryLimit::BestEffort => {
                // Sec. 3.7a: hand IP what is held, move V(R) past the highest frame received.
                let mut skip = 0;
                while self.rx_span > 0 {
                    match self.rx.pop_front() {
                        Some(RxSlot::Received(Some(p))) => self.deliver(p, out),
                        Some(RxSlot::Missing) => skip += 1,
                        _ => {}
                    }
                    self.rx.push_back(RxSlot::Unknown);
                    self.vr = (self.vr + 1) % SEQ_MOD;
                    self.rx_span -= 1;
                }
                self.stats.give_ups += skip;
                self.rejected = false;
                self.ctrl.push_back(HdlcFrame::UaAck { nr: self.vr });
            }
        }
    }

    fn on_ua(&mut self, now: Instant, nr: Option<u8>) {
        if !self.resetting {
            // Original reset: a UA answers only a SABME the peer acted on, restarting its
            // numbers. One that comes when we are no longer resetting answers a second SABME
            // of ours (T1 sent it again while the first UA was on its way), and the peer's
            // frames after it are numbered from 0 again: restart with it (review, session 46:
            // they were taken for duplicates, acknowledged, and lost uncounted). A SABME goes
            // out before any I frame of ours after the reset, so the peer restarted its
            // receiver before those arrive and our own numbering stands. Best effort: a late
            // answer moves nothing.
            if nr.is_none() {
                self.reset_receiver();
            }
            return;
        }
        match nr {
            // Best effort: frames below N(R) the receiver never got are given up (TCP recovers
            // them); the rest are resent.
            Some(nr) => {
                if !self.on_nr(now, nr) {
                    return;
                }
                self.go_back(self.va);
            }
            // Original reset: the peer restarted its numbers when it answered.
            None => self.reset_receiver(),
        }
        self.resetting = false;
        // A SABME T1 asked for that has not left yet (a frame was still in the scheduler) is
        // answered already (review, session 46: it went out after the UA and reset the peer
        // again, or, best effort, moved its V(R) past frames it had not got).
        self.sabme_due = false;
        self.retries = 0;
        self.t1.cancel();
    }

    // ---- receiver ----

    fn deliver(&mut self, p: Buf, out: &mut Outbox) {
        self.stats.packets_delivered += 1;
        out.deliver(Packet::new(p));
    }

    /// T2/T205: an acknowledgment is owed; start the timer unless it runs (A13).
    fn owe_ack(&mut self, now: Instant) {
        self.ack_pending = true;
        if !self.t2.is_armed() {
            self.t2.set(now + self.timers.get(T2));
        }
    }

    fn on_i(&mut self, now: Instant, ns: u8, payload: Buf, out: &mut Outbox) {
        let d = (ns.wrapping_sub(self.vr) % SEQ_MOD) as usize;
        match self.cfg.mode {
            HdlcMode::Lapb => {
                if d == 0 {
                    self.deliver(payload, out);
                    self.vr = (self.vr + 1) % SEQ_MOD;
                    self.rejected = false;
                } else if d < SEQ_MOD as usize / 2 {
                    // Out of sequence: discarded; one REJ per reject state (sec. 3.2).
                    if !self.rejected {
                        self.rejected = true;
                        self.ctrl.push_back(HdlcFrame::Rej { nr: self.vr });
                    }
                    return;
                } else {
                    self.stats.duplicates_received += 1;
                }
            }
            HdlcMode::Mdlp => {
                // Behind the window, or a frame already held: a duplicate.
                let old = d >= self.cfg.window as usize
                    || (d < self.rx_span && !matches!(self.rx[d], RxSlot::Missing));
                if old {
                    self.stats.duplicates_received += 1;
                } else {
                    // One SREJ for each newly detected missing frame (sec. 3.3).
                    for off in self.rx_span..d {
                        self.rx[off] = RxSlot::Missing;
                        let seq = self.vr.wrapping_add(off as u8) % SEQ_MOD;
                        self.ctrl.push_back(HdlcFrame::Srej { seq });
                    }
                    self.rx_span = self.rx_span.max(d + 1);
                    match self.cfg.sequencing {
                        Sequencing::InSequence => self.rx[d] = RxSlot::Received(Some(payload)),
                        Sequencing::NonSequencing => {
                            self.rx[d] = RxSlot::Received(None);
                            self.deliver(payload, out);
                        }
                    }
                    while self.rx_span > 0 && matches!(self.rx[0], RxSlot::Received(_)) {
                        if let Some(RxSlot::Received(Some(p))) = self.rx.pop_front() {
                            self.deliver(p, out);
                        }
                        self.rx.push_back(RxSlot::Unknown);
                        self.vr = (self.vr + 1) % SEQ_MOD;
                        self.rx_span -= 1;
                    }
                }
            }
        }
        self.owe_ack(now);
    }
}

impl Service for Hdlc {
    fn handle_packet(&mut self, now: Instant, packet: Packet, out: &mut Outbox) {
        self.stats.packets_in += 1;
        // As status RLP's (session 37): the cap counts packets the window has no room for.
        // HDLC hands the scheduler one frame at a time, so packets wait here with the window
        // nearly empty; counted, a backlog of 1 dropped the third of three packets with two
        // window slots free (review, session 42).
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
        match HdlcFrame::from_frame(frame) {
            // Original reset, waiting for the UA: the peer may have answered and restarted its
            // numbers (its UA lost), so its I frames are of a numbering this end has not started;
            // they are discarded, as LAPB's link set-up state does. Taken by the old V(R), they
            // were delivered and then counted by the peer among the frames its next reset gave
            // up (review, session 42).
            Ok(HdlcFrame::I { .. }) if self.resetting && self.cfg.on_limit == RetryLimit::Reset => {
            }
            Ok(HdlcFrame::I { ns, nr, payload }) => {
                self.on_nr(now, nr);
                self.on_i(now, ns, payload, out);
            }
            Ok(HdlcFrame::Rr { nr }) => {
                self.on_nr(now, nr);
            }
            Ok(HdlcFrame::Rej { nr }) => {
                if self.on_nr(now, nr) && !self.resetting {
                    self.go_back(nr);
                }
            }
            Ok(HdlcFrame::Srej { seq }) => {
                let i = seq.wrapping_sub(self.va) % SEQ_MOD;
                if (i as usize) < self.tx.len() && !self.resetting {
                    self.queue_retx(seq);
                }
            }
            Ok(HdlcFrame::Sabme) => self.on_sabme(out),
            Ok(HdlcFrame::Ua) => self.on_ua(now, None),
            Ok(HdlcFrame::UaAck { nr }) => self.on_ua(now, Some(nr)),
            Err(_) => self.stats.malformed_frames += 1,
        }
        self.pump(now, out);
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        if let Some((h, at)) = self.handed.filter(|_| !self.drops_reported) {
            if now.saturating_since(at) >= self.timers.get(T1) {
                // Never reported: taken as sent (and lost); its report may still come.
                self.on_sent(now, h);
                self.late.taken_as_sent(h);
            }
        }
        if self.t1.poll_expired(now) {
            self.on_t1(now);
        }
        if self.t2.poll_expired(now) && self.ack_pending {
            self.ack_pending = false;
            self.ctrl.push_back(HdlcFrame::Rr { nr: self.vr });
        }
        self.pump(now, out);
    }

    fn handle_transmitted(&mut self, now: Instant, frame: &Frame) {
        let h = Self::handed_of(frame);
        if self.late.is_late(h) {
            return; // the report of a frame taken as sent, not of the next RR, REJ or SABME
        }
        if self.handed.is_some_and(|(w, _)| w == h) {
            self.on_sent(now, h);
            self.pump_at = Some(now);
        }
    }

    /// A bounded queue refuses a frame when it is handed over: the report is that of the handed
    /// frame, never a late one.
    fn handle_dropped(&mut self, now: Instant, frame: &Frame) {
        let h = Self::handed_of(frame);
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
        let wants = !self.ctrl.is_empty()
            || self.sabme_due
            || (!self.resetting && (!self.retx.is_empty() || !self.backlog.is_empty()));
        earliest([
            self.t1.deadline(),
            self.t2.deadline(),
            self.pump_at.filter(|_| wants),
            self.handed
                .filter(|_| !self.drops_reported)
                .map(|(_, at)| at + self.timers.get(T1)),
        ])
    }

    fn set_timer_factor(&mut self, factor: f64) {
        self.timers.set_factor(factor);
    }

    fn stats(&self) -> ServiceStats {
        self.stats
    }

    fn name(&self) -> &'static str {
        match (self.cfg.mode, self.cfg.sequencing) {
            (HdlcMode::Lapb, _) => "lapb",
            (HdlcMode::Mdlp, Sequencing::InSequence) => "mdlp",
            (HdlcMode::Mdlp, Sequencing::NonSequencing) => "mdlp-ns",
        }
    }

    fn header_overhead(&self) -> usize {
        HDLC_I_HEADER
    }
}

impl Hdlc {
    fn handed_of(frame: &Frame) -> Handed {
        if let Some(seq) = HdlcFrame::i_seq(frame) {
            Handed::Data(seq)
        } else if HdlcFrame::is_sabme(frame) {
            Handed::Sabme
        } else {
            Handed::Control
        }
    }

    /// A frame of ours started transmission (or is taken as sent): T1/T200 restarts at every
    /// I-frame transmission (sec. 3.2) and runs for the answer to a SABME.
    fn on_sent(&mut self, now: Instant, h: Handed) {
        self.handed = None;
        if matches!(h, Handed::Data(_) | Handed::Sabme) {
            self.t1.set(now + self.timers.get(T1));
        }
    }
}

#[cfg(test)]
mod tests;
