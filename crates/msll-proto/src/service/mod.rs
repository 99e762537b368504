//! The `Service` trait: one link-layer error-recovery scheme, one end of a "virtual private path".
//!
//! Seed 004 ch. 6 (seed004-ch6-9.md sec. 2.4): a service is "not aware of the classifier, the scheduler
//! or the other services". It has one entry and one exit in each direction; frames handed to the
//! scheduler cannot be taken back; all its timers scale by one factor.
//!
//! Calling contract (quinn's taxonomy):
//! - inputs are `handle_packet` (from IP, via the classifier), `handle_frame` (from the peer, via
//!   the demultiplexer, service number already irrelevant) and `handle_timeout`;
//! - outputs leave through the `Outbox` passed to every input: frames to the scheduler, packets to
//!   the multiplexer (towards IP);
//! - when a frame actually starts transmission the driver reports it with `handle_transmitted`
//!   (retransmission, NAK, keepalive and XOR/Ad timers start there, not at hand-off);
//! - after any input the driver re-reads `poll_timeout`. `handle_timeout` is harmless when called
//!   early or twice, so drivers never need to cancel wake-ups.
//!
//! A service never reads a clock, touches a socket, allocates timers in a runtime or draws OS
//! randomness.

pub mod gbn;
pub mod hdlc;
pub mod raw;
pub mod rlp;
pub mod rse;
pub mod snoop;
pub mod sr;
pub mod status_rlp;
pub mod xor;

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::time::{DataRate, Duration, Instant};
use crate::wire::Frame;
use serde::{Deserialize, Serialize};

pub use gbn::{Gbn, GbnConfig};
pub use hdlc::{Hdlc, HdlcConfig, HdlcMode, RetryLimit};
pub use raw::Raw;
pub use rlp::{Delivery, Rlp, RlpConfig};
pub use rse::{Rse, RseConfig};
pub use snoop::{Snoop, SnoopConfig, SnoopSegments, SnoopState};
pub use sr::{NakPolicy, RetransmitTimer, Sr, SrConfig};
pub use status_rlp::{Sequencing, StatusRlp, StatusRlpConfig};
pub use xor::{Xor, XorConfig};

/// One link-layer scheme instance. Not `Send`: a service holds its frames in [`crate::Buf`]s,
/// whose reference counts are not atomic; every driver runs a link on one thread.
pub trait Service {
    /// A packet from the layer above, routed here by the classifier.
    fn handle_packet(&mut self, now: Instant, packet: Packet, out: &mut Outbox);
    /// A frame from the peer service. Malformed frames are counted and dropped, never a panic.
    fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox);
    /// Fire every timer due at or before `now`. Early or repeated calls are harmless.
    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox);
    /// The earliest instant at which `handle_timeout` must be called.
    fn poll_timeout(&self) -> Option<Instant>;
    /// `frame`, which this service handed to the scheduler earlier, starts transmission on the
    /// link now (the "transmit" interrupt). Drivers must call it exactly once for every frame they
    /// put on the link, in link order, before re-reading `poll_timeout` (`Endpoint::poll_transmit`
    /// does; so does `testing::Pair`). The service number nibble may be set. A frame that a
    /// bounded scheduler queue drops is reported with [`Service::handle_dropped`] instead.
    ///
    /// Why: a timer that the seeds start "after each transmission" (seed004-ch4 sec. 3.2, L735;
    /// XOR/Ad L996; RLP NAK and keepalive timers, L755-L759) must not run while the frame waits
    /// in the scheduler FIFO. With TCP over Cellular the FIFO holds about 20 frames (over 500 ms)
    /// ahead of a new frame, more than the 461 ms RTO, and timers started at hand-off caused
    /// spurious retransmissions that fed the FIFO further (throughput collapse). Services with
    /// such timers therefore arm them here; the default ignores the report.
    fn handle_transmitted(&mut self, _now: Instant, _frame: &Frame) {}
    /// `frame`, which this service handed to the scheduler just now, was dropped by a bounded
    /// scheduler queue (the newest of this service's frames, none of the older ones). It is then
    /// simply lost on the air: its timers start now, as at a transmission, and it is resent as
    /// any lost frame. Drivers with bounded queues should call it when the drop happens
    /// (`Endpoint` does), before re-reading `poll_timeout`; without it the schemes infer the
    /// drop later (below), and status RLP and HDLC may take the next transmit report of the
    /// same identity for the dropped frame's (`LateReports`).
    ///
    /// Why: GBN, SR and RLP keep at most one copy of a frame in the scheduler and wait for its
    /// transmission report before they resend it; status RLP and HDLC keep one frame there and
    /// send the next one after its report. Without this report they infer the drop: GBN, SR and
    /// RLP when a later frame of theirs is reported (per-service FIFO order) or when nothing of
    /// theirs was reported for one retransmission (NAK) timeout (`HandOffLog`); status RLP and
    /// HDLC after their fallback period, silent meanwhile.
    ///
    /// Default: as `handle_transmitted`. The schemes that infer drops from the order of reports
    /// override it: the dropped frame is newer than the ones still waiting, so reporting it as
    /// transmitted would declare those dropped as well.
    fn handle_dropped(&mut self, now: Instant, frame: &Frame) {
        self.handle_transmitted(now, frame);
    }
    /// The driver reports every frame it puts on the link and every frame its queues drop
    /// (`Endpoint` does): a frame not reported yet is still waiting, however long. GBN, SR and
    /// RLP then stop inferring drops from a quiet period (`HandOffLog`): behind a backlogged
    /// service of a much larger share (or a FIFO without pacing) a frame can wait longer than
    /// its retransmission timeout, and was taken for dropped and queued a second time (review,
    /// session 44). Default: nothing to change.
    fn set_drops_reported(&mut self) {}
    /// Packets accepted from IP and not yet handed to the scheduler as frames. Status RLP and
    /// HDLC keep at most one frame in the scheduler and hold the rest in their own backlog; a
    /// driver that stops reading IP while too much waits for the link (mslld's
    /// `limits.backlog_frames`) counts these with the scheduler's frames, or such a scheme would
    /// never push back and drop at its own backlog cap instead. Default: none (the other schemes
    /// hand every frame over at once).
    fn held_packets(&self) -> usize {
        0
    }
    /// Whether the frames this service sends on its own (from `handle_frame` and
    /// `handle_timeout`: local retransmissions) should hold IP back for their link time, as IP
    /// packets do under pacing. True for a scheme whose reference model sits above the
    /// interface queue: ns-2's Snoop sends its local retransmissions into the same bounded
    /// DropTail queue as IP packets. Otherwise they wait in the link layer's own FIFO, which
    /// pacing does not see, and a heavily loaded link grows it without bound (seed 003's video
    /// flows: Snoop's timer then fired on packets that were only queued). Default: false, the
    /// ARQ schemes of seed 004, whose link layer sits below IP's queue.
    fn frames_share_ip_pacing(&self) -> bool {
        false
    }
    /// Whether the scheme is only correct over a link that keeps its frames in order. The
    /// simulator's links are FIFO, like the thesis's (scenario files can reorder only the wired
    /// hop, `topology.wired_extra_delay`; a library caller who sets `reorder` on a wireless link
    /// gets no such guard); a driver whose path can reorder (mslld over
    /// UDP) must then drop a frame of this service that arrives behind a later one, turning the
    /// reordering into a loss the scheme recovers from as designed.
    ///
    /// Default: true. Every windowed ARQ scheme here tells a late copy from a new frame only by
    /// its distance from the window, which assumes FIFO (review of session 35): SR accepts a
    /// copy overtaken by 3 later frames as the frame 256 numbers on (a duplicate, and the real
    /// one dropped); RLP a retransmission overtaken by 1 frame late in its buffer's life; MDLP
    /// and status RLP at window 63 by 3; HDLC's SABME/UA reset relies on order; a stale ACK,
    /// N(R) or status from more than half the number space back frees unacknowledged frames
    /// (for the sparse status frames, two datagrams late can be enough). XOR infers its block
    /// boundaries from arrival order. Only the schemes that tolerate reordering by design say
    /// false: Raw (no state), Snoop (Default frames; TCP sorts out its ACKs) and RSE (8-bit
    /// block numbers, the current and previous block kept).
    fn requires_fifo(&self) -> bool {
        true
    }
    /// Multiply every base timeout (n services, or 1/r_i; seed 004 ch. 6). Default: ignore.
    fn set_timer_factor(&mut self, _factor: f64) {}
    /// Counters for results and the daemon's stats command.
    fn stats(&self) -> ServiceStats;
    /// Short scheme name for traces and tables ("default", "sr-m2", ...).
    fn name(&self) -> &'static str;
    /// Fixed per-data-frame header bytes, used by the classifier to pace IP at the nominal rate
    /// "(packet size + fixed link-layer overhead) / link speed" (seed 004 ch. 6, L1207). A
    /// constant of the scheme: the endpoint reads it once, when it is built.
    fn header_overhead(&self) -> usize {
        1
    }

    /// `Some` for the Default scheme (`Raw`) only. The endpoint then runs a copy of it through
    /// static calls, without the `Outbox` round trip, dynamic calls or timer bookkeeping that a
    /// recovery scheme needs: a Default endpoint carried every packet of the chapter 4/5 baseline
    /// runs, and this path was ~1/3 of their time (issue 8, session 11).
    fn as_raw(&self) -> Option<&raw::Raw> {
        None
    }

    /// Start keeping this end's [`FrameLog`], from which a driver that sees both ends of a link
    /// computes the link-layer transmission delay (seed 002 Figs 4.9 and 5.3: first transmission
    /// of a data frame to its first successful receipt). The log grows with every data frame, so
    /// only the simulator turns it on. Default: a scheme that keeps none.
    fn enable_frame_log(&mut self) {}
    /// The log, if this scheme keeps one and it was enabled.
    fn frame_log(&self) -> Option<&FrameLog> {
        None
    }
}

/// Data-frame events of one end of a link, in time order: what it first transmitted (as a
/// sender) and what it resolved (as a receiver: received for the first time, or abandoned by a
/// best-effort scheme). Sequence numbers are the scheme's, modulo its number space.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameLog {
    /// (sequence number, start of the first transmission).
    pub first_tx: Vec<(u32, Instant)>,
    /// (sequence number, time, received: false = abandoned).
    pub resolved: Vec<(u32, Instant, bool)>,
}

/// Link-layer transmission delays of one direction ([`FrameLog::delays`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameDelays {
    /// Sum over frames received of (first receipt - first transmission), in seconds.
    pub sum_s: f64,
    /// Frames received.
    pub received: u64,
    /// Frames abandoned (left out of the delay, seed002.md sec. 1.9 REC).
    pub abandoned: u64,
    /// Pairs whose receipt came before the first transmission: a scheme that breaks the pairing
    /// rule of [`FrameLog::delays`] (counted, not summed; the tests require 0).
    pub misordered: u64,
}

impl FrameDelays {
    /// Mean delay of the frames received (NaN if none).
    pub fn mean_s(&self) -> f64 {
        if self.received > 0 {
            self.sum_s / self.received as f64
        } else {
            f64::NAN
        }
    }
}

impl FrameLog {
    /// Pair this sender's first transmissions with `receiver`'s resolutions. A scheme reuses a
    /// sequence number only after the receiver resolved the frame that last carried it, and
    /// sends new frames in sequence order (so a frame resolved was first sent), hence the k-th
    /// resolution of number s belongs to the k-th first transmission of s. Frames still
    /// unresolved at the end are left out.
    pub fn delays(&self, receiver: &FrameLog) -> FrameDelays {
        let mut sent: std::collections::HashMap<u32, VecDeque<Instant>> = Default::default();
        for &(seq, t) in &self.first_tx {
            sent.entry(seq).or_default().push_back(t);
        }
        let mut d = FrameDelays::default();
        for &(seq, t, received) in &receiver.resolved {
            let Some(t0) = sent.get_mut(&seq).and_then(|q| q.pop_front()) else {
                continue;
            };
            if t < t0 {
                d.misordered += 1;
            } else if received {
                d.sum_s += t.saturating_since(t0).as_secs_f64();
                d.received += 1;
            } else {
                d.abandoned += 1;
            }
        }
        d
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
    /// Frames (or packets) abandoned after the retry limit, and not delivered later (RLP takes
    /// a copy that comes after it gave up, and RLP/OOS delivers it late: AMB-7).
    pub give_ups: u64,
    /// Scheme header and control bytes: everything sent beyond first-transmission payload.
    pub overhead_bytes: u64,
    /// Total bytes handed to the scheduler.
    pub bytes_sent: u64,
    pub frames_received: u64,
    pub duplicates_received: u64,
    /// Frames that failed to parse (truncated, unknown type): counted and dropped.
    pub malformed_frames: u64,
    /// Scheme-specific anomalies, e.g. RLP buffer overrun (seed 004 sec. 4.2.2).
    pub protocol_errors: u64,
    /// RLP buffer overruns (seed 004 sec. 4.2.2, L761), also counted in `protocol_errors`: the
    /// receiver saw proof that the sender overwrote an unresolved frame, or the sender got a NAK
    /// for a frame no longer buffered.
    #[serde(default)]
    pub buffer_overruns: u64,
    /// Snoop: duplicate TCP ACKs from the wireless host suppressed (not delivered to IP) because a
    /// local retransmission answers them (seed004-ch4 sec. 3.7).
    #[serde(default)]
    pub acks_suppressed: u64,
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
            protocol_errors,
            buffer_overruns,
            acks_suppressed
        );
    }
    /// Named counters, in a fixed order, for CSV/JSON output.
    pub fn fields(&self) -> [(&'static str, u64); 20] {
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
            ("buffer_overruns", self.buffer_overruns),
            ("acks_suppressed", self.acks_suppressed),
        ]
    }
}

/// Which end of a wireless link a service runs at. Only Snoop cares: it runs at the base station
/// and its peer at the wireless host is a plain Default service (seed 004 sec. 4.2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    BaseStation,
    Host,
}

/// What a scheme may derive its default timers and windows from (seed004-ch4 sec. 3.10: "based on
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

/// Copies handed to the scheduler and not yet reported by `Service::handle_transmitted`, in hand-off
/// order, to notice copies that a bounded scheduler queue dropped without telling the service.
/// * The scheduler keeps each service's frames in FIFO order (FIFO and SCFQ alike), so when a
///   frame is reported, every tracked copy handed off before it and not reported was dropped.
/// * A work-conserving scheduler serves a backlogged service regularly, so when nothing of ours has
///   been reported for a whole `quiet` period (the scheme's retransmission or NAK timeout) while
///   copies are tracked, none of them is waiting any more: all were dropped.
///
/// A dropped copy counts as sent and lost on the air, so its timers run and it is resent. The same
/// rule gives drivers that never report a fallback: timers then start one `quiet` period after
/// hand-off instead of at transmission.
#[derive(Debug)]
pub(crate) struct HandOffLog<K> {
    q: VecDeque<K>,
    /// Last report (of a transmission or a drop), or the hand-off that made the log non-empty,
    /// whichever is later.
    since: Instant,
    /// The driver reports every drop (`Service::set_drops_reported`): no quiet-period inference.
    reported: bool,
}

impl<K> Default for HandOffLog<K> {
    fn default() -> Self {
        HandOffLog {
            q: VecDeque::new(),
            since: Instant::ZERO,
            reported: false,
        }
    }
}

/// Bound on tracked copies (a scheme keeps at most one copy per window slot waiting).
const HAND_OFF_CAP: usize = 512;

impl<K: PartialEq + Copy> HandOffLog<K> {
    /// The driver reports every drop: tracked copies never count as dropped for going quiet.
    pub(crate) fn set_drops_reported(&mut self) {
        self.reported = true;
    }

    pub(crate) fn push(&mut self, now: Instant, k: K) {
        if self.q.is_empty() {
            self.since = now;
        }
        if self.q.len() == HAND_OFF_CAP {
            self.q.pop_front();
        }
        self.q.push_back(k);
    }

    /// `k`, the newest tracked copy of its kind, was dropped by the scheduler (and reported so):
    /// stop tracking it. The copies handed off before it are still waiting (a queue that reports
    /// its drops did not drop them), so the quiet period after which they would be taken for
    /// dropped restarts at `now`. Returns whether `k` was tracked.
    pub(crate) fn discard(&mut self, now: Instant, k: K) -> bool {
        self.since = now;
        match self.q.iter().rposition(|x| *x == k) {
            Some(i) => {
                self.q.remove(i);
                true
            }
            None => false,
        }
    }

    /// `k` was reported: returns the copies handed off before it and never reported (dropped),
    /// oldest first. An untracked `k` changes nothing but the time of the last report.
    pub(crate) fn report(&mut self, now: Instant, k: K) -> Vec<K> {
        self.since = now;
        match self.q.iter().position(|x| *x == k) {
            // The usual case, once per transmitted frame: the oldest copy is the one reported.
            Some(0) => {
                self.q.pop_front();
                Vec::new()
            }
            Some(i) => {
                let dropped: Vec<K> = self.q.drain(..i).collect();
                self.q.pop_front();
                dropped
            }
            None => Vec::new(),
        }
    }

    /// When the tracked copies count as dropped if nothing is reported before.
    ///
    /// `quiet` is computed only when copies are tracked: it is usually a scaled (floating-point)
    /// timer value, and `poll_timeout` runs after every event.
    pub(crate) fn deadline(&self, quiet: impl FnOnce() -> Duration) -> Option<Instant> {
        (!self.q.is_empty() && !self.reported).then(|| self.since + quiet())
    }

    /// Every tracked copy, if nothing was reported for `quiet`.
    pub(crate) fn take_stale(&mut self, now: Instant, quiet: Duration) -> Vec<K> {
        if self.deadline(|| quiet).is_some_and(|d| d <= now) {
            self.q.drain(..).collect()
        } else {
            Vec::new()
        }
    }
}

/// For the schemes that keep one frame at a time in the scheduler (status RLP, HDLC): frames
/// taken as sent after going unreported too long, whose reports may still come (a long medium
/// access, or other frames ahead in the queue), in hand-off order. The scheduler keeps a
/// service's frames in order, so such a late report comes before that of any frame handed over
/// since, and a frame handed over since can share the late one's identity (the next status or
/// supervisory frame): the report must not be taken for the newer frame's. Any report of a
/// newer frame ends the wait for all of them.
///
/// A driver that drops frames without reporting them (`Service::handle_dropped`) breaks the
/// premise: the dropped frame is taken as sent, its report never comes, and the report of the
/// next frame of its identity is taken for it. So a frame handed over while such a report was
/// consumed, and then taken as sent itself, is not waited for: its report was probably the one
/// consumed. Without that rule a silently dropped status made every following status wait its
/// whole fallback period (review, session 39).
#[derive(Debug)]
pub(crate) struct LateReports<H> {
    q: VecDeque<H>,
    /// A late report was consumed since the last hand-off.
    consumed: bool,
}

impl<H> Default for LateReports<H> {
    fn default() -> Self {
        LateReports {
            q: VecDeque::new(),
            consumed: false,
        }
    }
}

/// Late reports still recognised as such (one is added per fallback period at most).
const MAX_LATE_REPORTS: usize = 8;

impl<H: PartialEq + Copy> LateReports<H> {
    /// A frame was handed to the scheduler.
    pub(crate) fn handed(&mut self) {
        self.consumed = false;
    }

    /// `h`, the frame in the scheduler, was taken as sent without a report.
    pub(crate) fn taken_as_sent(&mut self, h: H) {
        if self.consumed {
            return; // its report was probably the late one consumed meanwhile
        }
        if self.q.len() == MAX_LATE_REPORTS {
            self.q.pop_front();
        }
        self.q.push_back(h);
    }

    /// A transmit report of `h`: true if it is a late one (consumed with every late frame
    /// handed over before it), false if it is a newer frame's (and no late report will come).
    pub(crate) fn is_late(&mut self, h: H) -> bool {
        match self.q.iter().position(|&l| l == h) {
            Some(i) => {
                self.q.drain(..=i);
                self.consumed = true;
                true
            }
            None => {
                self.q.clear();
                false
            }
        }
    }
}

/// A service's configured base timeouts under its current timer factor (seed 004 ch. 6), scaled
/// when the factor is set rather than at every use: `poll_timeout` runs after every event, and the
/// float multiply and rounding it repeated there was ~3 % of the MSLL run of `msll bench` case f
/// (issue 8, session 15). The values are those `scaled` gives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScaledTimers<const N: usize> {
    base: [Duration; N],
    cur: [Duration; N],
}

impl<const N: usize> ScaledTimers<N> {
    /// Factor 1: the base values.
    pub(crate) fn new(base: [Duration; N]) -> Self {
        ScaledTimers { base, cur: base }
    }

    pub(crate) fn set_factor(&mut self, factor: f64) {
        self.cur = self.base.map(|d| scaled(d, factor));
    }

    /// Timer `i` (the order given to `new`), scaled.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Duration {
        self.cur[i]
    }
}

/// A base timeout scaled by the service's timer factor (seed 004 ch. 6: all timers of a service
/// scale by one factor).
pub(crate) fn scaled(d: Duration, factor: f64) -> Duration {
    if factor == 1.0 {
        d
    } else {
        // A tiny factor must not turn a protocol timer into a zero-time loop.
        d.mul_f64(factor).max(MIN_TIMER)
    }
}

/// Shortest protocol timer a scheme runs with: a configured value below it is refused
/// ([`SchemeConfig::validate`]) and a derived or scaled one is raised to it, so that no link,
/// however fast, makes a timer fire again at the same instant forever.
pub const MIN_TIMER: Duration = Duration::from_micros(1);
/// Longest configured timer, in milliseconds (about 11.6 days): beyond any experiment.
const MAX_TIMER_MS: f64 = 1e9;
/// [`MAX_TIMER_MS`] as a duration: derived timers are capped at it too, so a huge
/// `rto_queue_frames` or `nak_queue_frames` (up to 2^32 - 1 frame times) cannot escape the cap
/// that a configured `rto_ms` has (input audit, session 34).
const MAX_TIMER: Duration = Duration::from_millis(MAX_TIMER_MS as u64);

/// What kind of frame a scheme hands to the scheduler, for the shared counters.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SentKind {
    /// First transmission carrying a payload of this many bytes.
    Data(usize),
    Retransmission,
    Ack,
    Nak,
    Keepalive,
    Parity,
}

impl SentKind {
    /// Count one frame: everything beyond a first transmission's payload is overhead.
    pub(crate) fn count(self, s: &mut ServiceStats, f: &Frame) {
        let len = f.len() as u64;
        s.frames_sent += 1;
        s.bytes_sent += len;
        match self {
            SentKind::Data(p) => {
                s.data_frames += 1;
                s.overhead_bytes += len - p as u64;
                return;
            }
            SentKind::Retransmission => s.retransmissions += 1,
            SentKind::Ack => s.acks_sent += 1,
            SentKind::Nak => s.naks_sent += 1,
            SentKind::Keepalive => s.keepalives_sent += 1,
            SentKind::Parity => s.parity_frames += 1,
        }
        s.overhead_bytes += len;
    }
}

/// A configured duration in milliseconds, or the derived default; in [`MIN_TIMER`]..=[`MAX_TIMER`]
/// either way (configured values are validated first; this only guards direct `build` calls).
fn ms_or(v: Option<f64>, derived: Duration) -> Duration {
    match v {
        Some(ms) if ms.is_finite() && ms > 0.0 => {
            Duration::from_secs_f64(ms.min(MAX_TIMER_MS) / 1e3).max(MIN_TIMER)
        }
        Some(_) => MIN_TIMER,
        None => derived.clamp(MIN_TIMER, MAX_TIMER),
    }
}

/// `field = v` is a usable timer value in milliseconds.
fn check_ms(field: &str, v: Option<f64>) -> Result<(), String> {
    let min = MIN_TIMER.as_millis_f64();
    match v {
        Some(ms) if !(ms.is_finite() && (min..=MAX_TIMER_MS).contains(&ms)) => Err(format!(
            "{field} = {ms}: must be a timer of {min}..={MAX_TIMER_MS} ms"
        )),
        _ => Ok(()),
    }
}

/// An FEC scheme's `idle_timeout_ms`: a usable timer, and only on the adaptive variant
/// (`adaptive_name`). The plain scheme waits for a full block (seed 004 ch. 5): a timeout would be
/// ignored and only change the label.
fn check_idle_timeout(adaptive_name: &str, adaptive: bool, v: Option<f64>) -> Result<(), String> {
    if let (false, Some(ms)) = (adaptive, v) {
        return Err(format!(
            "idle_timeout_ms = {ms}: only {adaptive_name} (adaptive = true) closes blocks on a timer"
        ));
    }
    check_ms("idle_timeout_ms", v)
}

/// `field = v` lies in `range` (the values the scheme can run with).
fn check_range<T: PartialOrd + std::fmt::Display>(
    field: &str,
    v: T,
    range: std::ops::RangeInclusive<T>,
) -> Result<(), String> {
    if range.contains(&v) {
        Ok(())
    } else {
        Err(format!(
            "{field} = {v}: must be in {}..={}",
            range.start(),
            range.end()
        ))
    }
}

fn default_window() -> u8 {
    sr::MAX_WINDOW
}
fn default_max_naks() -> u8 {
    3
}
fn default_rlp_buffer() -> u8 {
    rlp::DEFAULT_BUFFER
}
fn default_status_window() -> u8 {
    status_rlp::DEFAULT_WINDOW
}
fn default_status_backlog() -> u32 {
    status_rlp::DEFAULT_BACKLOG
}
fn default_hdlc_window() -> u8 {
    hdlc::DEFAULT_WINDOW
}
fn default_xor_block() -> u8 {
    8
}
fn default_rse_parity() -> u8 {
    2
}
/// How many parity frames a block closed before it is full gets (`SchemeConfig::Rse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartialParity {
    /// All of the configured parity frames.
    #[default]
    Full,
    /// In proportion to the data frames: `ceil(parity x count / block)`, at least 1.
    Proportional,
}

impl PartialParity {
    fn is_full(&self) -> bool {
        *self == PartialParity::Full
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_true(b: &bool) -> bool {
    *b
}
fn default_true() -> bool {
    true
}
fn default_snoop_buffer() -> u16 {
    snoop::DEFAULT_BUFFER
}
fn default_snoop_rxmit() -> u32 {
    snoop::DEFAULT_MAX_RXMIT
}

/// Build a scheme instance. Every timer, window and limit is a named field; an absent optional
/// field (`None`) means "derive the recommended default from the link" (seed004-ch4 sec. 3.10,
/// seed004-ch5 sec. 10). Durations are in milliseconds at this configuration edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SchemeConfig {
    /// No recovery: access to the raw link (seed 004 sec. 4.2.1).
    #[default]
    Default,
    /// Go-Back-N (seed004-ch4 sec. 3.2).
    Gbn {
        /// Outstanding frames, 1..=127 (L1009: "127 ... the maximum allowed").
        #[serde(default = "default_window")]
        window: u8,
        /// Retransmission timeout; default 2 x link RTT + `rto_queue_frames` frame times
        /// (seed004-ch4 sec. 3.10).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rto_ms: Option<f64>,
        /// Queueing (full data frames) the default RTO allows for; default 8
        /// (`sr::DEFAULT_RTO_QUEUE_FRAMES`). Ignored when `rto_ms` is set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rto_queue_frames: Option<u32>,
        /// Delayed-ACK timer; default one full data-frame time (seed004-ch4 sec. 3.10).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ack_delay_ms: Option<f64>,
    },
    /// Selective Repeat: basic SR, SR/M1 or SR/M2 (seed004-ch4 sec. 3.3-sec. 3.5).
    Sr {
        #[serde(default)]
        nak_policy: NakPolicy,
        #[serde(default = "default_window")]
        window: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rto_ms: Option<f64>,
        /// As for GBN.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rto_queue_frames: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ack_delay_ms: Option<f64>,
        /// One timer for the oldest unacknowledged frame (default) or per-frame timers; see
        /// `sr.rs`.
        #[serde(default, skip_serializing_if = "is_oldest")]
        timer: RetransmitTimer,
    },
    /// RLP and RLP/OOS (seed004-ch4 sec. 3.6, seed004-ch5 sec. 4.5-sec. 4.6).
    Rlp {
        /// NAKs (= retransmissions) per frame before giving up: 3 for TCP (L777), 1 for UDP (L1041).
        #[serde(default = "default_max_naks")]
        max_naks: u8,
        #[serde(default)]
        delivery: Delivery,
        /// Receiver NAK timer; default 2 x link RTT + `nak_queue_frames` frame times (AMB-4).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nak_timeout_ms: Option<f64>,
        /// Sender queueing (full data frames) the default NAK timer allows for; default 8
        /// (`rlp::DEFAULT_NAK_QUEUE_FRAMES`). Ignored when `nak_timeout_ms` is set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nak_queue_frames: Option<u32>,
        /// Keepalive period while idle; default 1 link RTT (AMB-5, seed004-ch4 sec. 7 item 6).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keepalive_ms: Option<f64>,
        /// Sender circular buffer = receiver window, 1..=128 (L761 constraint, see rlp.rs).
        #[serde(default = "default_rlp_buffer")]
        buffer: u8,
        /// Keepalives per idle period; 0 = keep sending while idle (IS-95 style, the default).
        #[serde(default, skip_serializing_if = "is_zero")]
        max_idle_keepalives: u32,
    },
    /// Periodic-status selective repeat, the "RLP" of Wong's thesis (seed002.md sec. 3.4):
    /// receiver-initiated, no retransmission timer; best-effort with `mrd_ms` (sec. 3.7b).
    StatusRlp {
        /// Outstanding frames, 1..=63 (seed 002: 15).
        #[serde(default = "default_status_window")]
        window: u8,
        /// Status period; default 200 ms (seed 002's best, Fig. 4.19).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status_period_ms: Option<f64>,
        /// Minimum time between transmissions of a frame; default 300 ms (Fig. 4.20).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mtbt_ms: Option<f64>,
        /// In-sequence delivery (re-sequencing buffer) or non-sequencing (sec. 3.5).
        #[serde(default)]
        sequencing: Sequencing,
        /// Maximum recovery delay (best-effort); absent = reliable.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mrd_ms: Option<f64>,
        /// Packets held while the window is full (seed002.md A25: unlimited; default 1000).
        #[serde(default = "default_status_backlog")]
        backlog: u32,
    },
    /// Seed 002's HDLC-family protocols (seed002.md sec. 3.2, 3.3): LAPB (go-back-N with REJ)
    /// and CDPD MDLP (selective reject with SREJ), with an optional retry limit N2.
    Hdlc {
        mode: HdlcMode,
        /// Outstanding frames, 1..=63 (seed 002: 15).
        #[serde(default = "default_hdlc_window")]
        window: u8,
        /// T1 (LAPB) / T200 (MDLP) retransmission timer; default 1000 ms (Figs 4.21-4.22).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        t1_ms: Option<f64>,
        /// T2 / T205 acknowledgment delay; default 300 ms (sec. 4.4.2).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        t2_ms: Option<f64>,
        /// Successive timeouts before SABME; absent = never (ch. 4, A11).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n2: Option<u32>,
        /// What N2 does: "reset" (sec. 3.6) or "best-effort" (sec. 3.7a).
        #[serde(default)]
        on_limit: RetryLimit,
        /// MDLP receiver: in sequence (default) or non-sequencing; LAPB is always in sequence.
        #[serde(default)]
        sequencing: Sequencing,
        /// Packets held while the window is full (default 1000).
        #[serde(default = "default_status_backlog")]
        backlog: u32,
    },
    /// XOR parity FEC and XOR/Ad (seed004-ch5 sec. 4.2-sec. 4.3).
    Xor {
        /// Data frames per parity frame (8 Cellular/PCS, 12 WLAN; L1041, AMB-1).
        #[serde(default = "default_xor_block")]
        block: u8,
        /// XOR/Ad: close a block early after an inactivity timeout (L996).
        #[serde(default, skip_serializing_if = "is_false")]
        adaptive: bool,
        /// XOR/Ad inactivity timeout; default 100/130/20 ms on the thesis links (L1041).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        idle_timeout_ms: Option<f64>,
    },
    /// Reed-Solomon erasure FEC and RSE/Ad: n data frames, then h parity frames that recover any
    /// h losses among the n + h (seed 004 L1037, seed004-ch5 sec. 4.7; not simulated in the
    /// thesis, which rejects it on delay grounds: `service::rse`).
    Rse {
        /// Data frames per block, n (default 8, XOR's block on Cellular and PCS).
        #[serde(default = "default_xor_block")]
        block: u8,
        /// Parity frames per block, h (default 2: recovers what XOR cannot, two losses).
        #[serde(default = "default_rse_parity")]
        parity: u8,
        /// RSE/Ad: close a block early after an inactivity timeout (XOR/Ad's rule, L996).
        #[serde(default, skip_serializing_if = "is_false")]
        adaptive: bool,
        /// RSE/Ad inactivity timeout; default XOR/Ad's (100/130/20 ms on the thesis links).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        idle_timeout_ms: Option<f64>,
        /// Parity frames of a block closed early (RSE/Ad, a short block): all `parity`
        /// ("full", the default) or `ceil(parity x count / block)`, at least 1
        /// ("proportional", UDPspeeder's redundancy table; a low-rate flow then pays the
        /// code's ratio, not `parity` frames per packet). The receiver reads the count from
        /// each parity frame, so only the sender's setting matters.
        #[serde(default, skip_serializing_if = "PartialParity::is_full")]
        partial_parity: PartialParity,
    },
    /// Snoop, TCP-aware, at the base station only; the wireless host's end is Default
    /// (seed004-ch4 sec. 3.7; ns2-semantics.md sec. 3). Constants are ns-2's.
    Snoop {
        /// State per TCP connection (default, ns-2.1b4 and the dissertation) or per host pair
        /// (ns-2 >= 2.1b6).
        #[serde(default)]
        state: SnoopState,
        /// Mark ACKs towards a wireless TCP sender with ELN (off: plain Reno ignores it).
        #[serde(default, skip_serializing_if = "is_false")]
        eln: bool,
        /// Minimum local timeout (`snoopTick_`); default 100 ms.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tick_ms: Option<f64>,
        /// Cached packets per state (`SNOOP_MAXWIND`), default 100.
        #[serde(default = "default_snoop_buffer")]
        buffer: u16,
        /// Local retransmissions per packet (`SNOOP_MAX_RXMIT`), default 10.
        #[serde(default = "default_snoop_rxmit")]
        max_rxmit: u32,
        /// Retransmit locally when Snoop's own per-connection timer expires (ns-2, default true).
        /// `false` is a sensitivity option (label suffix `-no-timer`): only duplicate ACKs trigger
        /// local recovery. Omitted from the serialized form when true, so the cache keys and
        /// labels of default Snoop runs are unchanged.
        #[serde(default = "default_true", skip_serializing_if = "is_true")]
        local_timer: bool,
        /// How segments are read: as ns-2's one-way agents send them (default) or as real TCP
        /// stacks do (`SnoopSegments`; for the tunnel). Omitted when the default.
        #[serde(default, skip_serializing_if = "SnoopSegments::is_ns2")]
        segments: SnoopSegments,
    },
}

/// A number in a scheme's short name (`xor12`, `rse20-10`): decimal digits without a sign or a
/// leading zero, so that one configuration has one name.
fn name_number(s: &str) -> Option<u8> {
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) || s.starts_with('0') {
        return None;
    }
    s.parse().ok()
}

fn is_oldest(t: &RetransmitTimer) -> bool {
    *t == RetransmitTimer::Oldest
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl SchemeConfig {
    /// Refuse values the scheme cannot run with, naming the field and the value (`build` would
    /// otherwise clamp them silently, or run a zero-length timer forever).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            SchemeConfig::Default => Ok(()),
            SchemeConfig::Gbn {
                window,
                rto_ms,
                ack_delay_ms,
                ..
            } => {
                check_range("window", *window, 1..=gbn::MAX_WINDOW)?;
                check_ms("rto_ms", *rto_ms)?;
                check_ms("ack_delay_ms", *ack_delay_ms)
            }
            SchemeConfig::Sr {
                window,
                rto_ms,
                ack_delay_ms,
                ..
            } => {
                check_range("window", *window, 1..=sr::MAX_WINDOW)?;
                check_ms("rto_ms", *rto_ms)?;
                check_ms("ack_delay_ms", *ack_delay_ms)
            }
            SchemeConfig::Rlp {
                nak_timeout_ms,
                keepalive_ms,
                buffer,
                ..
            } => {
                check_range("buffer", *buffer, 1..=rlp::MAX_BUFFER)?;
                check_ms("nak_timeout_ms", *nak_timeout_ms)?;
                check_ms("keepalive_ms", *keepalive_ms)
            }
            SchemeConfig::Hdlc {
                mode,
                window,
                t1_ms,
                t2_ms,
                n2,
                sequencing,
                backlog,
                ..
            } => {
                check_range("window", *window, 1..=hdlc::MAX_WINDOW)?;
                check_range("backlog", *backlog, 1..=u32::MAX)?;
                if let Some(n) = n2 {
                    check_range("n2", *n, 1..=u32::MAX)?;
                }
                if *mode == HdlcMode::Lapb && *sequencing == Sequencing::NonSequencing {
                    return Err(
                        "sequencing = \"non-sequencing\": LAPB discards out-of-sequence frames, it is always in sequence"
                            .to_string(),
                    );
                }
                check_ms("t1_ms", *t1_ms)?;
                check_ms("t2_ms", *t2_ms)
            }
            SchemeConfig::StatusRlp {
                window,
                status_period_ms,
                mtbt_ms,
                mrd_ms,
                backlog,
                ..
            } => {
                check_range("window", *window, 1..=status_rlp::MAX_WINDOW)?;
                check_range("backlog", *backlog, 1..=u32::MAX)?;
                check_ms("status_period_ms", *status_period_ms)?;
                check_ms("mtbt_ms", *mtbt_ms)?;
                check_ms("mrd_ms", *mrd_ms)
            }
            SchemeConfig::Xor {
                block,
                adaptive,
                idle_timeout_ms,
            } => {
                check_range("block", *block, 1..=crate::wire::xor::XOR_MAX_BLOCK)?;
                check_idle_timeout("XOR/Ad", *adaptive, *idle_timeout_ms)
            }
            SchemeConfig::Rse {
                block,
                parity,
                adaptive,
                idle_timeout_ms,
                partial_parity,
            } => {
                check_range("block", *block, 1..=crate::wire::rse::RSE_MAX_BLOCK)?;
                check_range("parity", *parity, 1..=crate::wire::rse::RSE_MAX_PARITY)?;
                // Only RSE/Ad closes a block before it is full: without it the option would
                // do nothing, silently, yet name the scheme "-prop" (review, session 47).
                if *partial_parity == PartialParity::Proportional && !*adaptive {
                    return Err(
                        "partial_parity = \"proportional\": needs adaptive = true (only \
                                RSE/Ad closes a block before it is full)"
                            .into(),
                    );
                }
                check_idle_timeout("RSE/Ad", *adaptive, *idle_timeout_ms)
            }
            SchemeConfig::Snoop {
                tick_ms,
                buffer,
                state,
                segments,
                ..
            } => {
                check_range("buffer", *buffer, 1..=u16::MAX)?;
                if *segments == SnoopSegments::Real && *state == SnoopState::HostPair {
                    // Real connections start at unrelated random sequence numbers: one shared
                    // `last_ack` lets an ACK of one free half of another's cache (review,
                    // session 46).
                    return Err(
                        "state = \"host-pair\": with segments = \"real\" the state must \
                                be \"connection\" (real connections' sequence numbers are \
                                unrelated)"
                            .into(),
                    );
                }
                check_ms("tick_ms", *tick_ms)
            }
        }
    }

    /// Refuse a configured timer that waits for an answer from the other end of the link (a
    /// retransmission timeout, a NAK timeout, a keepalive) and is shorter than one frame's
    /// transmission, `frame_payload` bytes at `rate_bps`: it expires before any answer can
    /// arrive, so the scheme resends or polls without end. `validate` cannot tell, not knowing
    /// the link; the simulator's scenario check and the tunnel's configuration check call this.
    /// The payload alone gives a lower bound on a full frame's time (headers add a few bytes).
    pub fn check_answer_timers(&self, frame_payload: usize, rate_bps: f64) -> Result<(), String> {
        let timers: &[(&str, Option<f64>)] = match self {
            SchemeConfig::Gbn { rto_ms, .. } | SchemeConfig::Sr { rto_ms, .. } => {
                &[("rto_ms", *rto_ms)]
            }
            SchemeConfig::Hdlc { t1_ms, .. } => &[("t1_ms", *t1_ms)],
            SchemeConfig::Rlp {
                nak_timeout_ms,
                keepalive_ms,
                ..
            } => &[
                ("nak_timeout_ms", *nak_timeout_ms),
                ("keepalive_ms", *keepalive_ms),
            ],
            SchemeConfig::Default
            | SchemeConfig::StatusRlp { .. }
            | SchemeConfig::Xor { .. }
            | SchemeConfig::Rse { .. }
            | SchemeConfig::Snoop { .. } => &[],
        };
        let frame_ms = frame_payload as f64 * 8.0 / rate_bps * 1e3;
        for &(field, ms) in timers {
            if let Some(ms) = ms.filter(|&ms| ms < frame_ms) {
                return Err(format!(
                    "{field} = {ms}: shorter than one frame's transmission ({frame_ms:.3} ms for \
                     {frame_payload}-byte frames at {rate_bps} bit/s): it would expire before any \
                     answer could arrive, resending without end"
                ));
            }
        }
        // Status RLP sends a status every period whether or not data flows (seed 002 sec. 3.3):
        // a period shorter than the largest status frame's transmission queues statuses faster
        // than the link carries them, and the queue grows without end.
        if let SchemeConfig::StatusRlp {
            status_period_ms: Some(ms),
            ..
        } = self
        {
            let status_bytes = crate::wire::status_rlp::STATUS_DATA_HEADER
                + crate::wire::status_rlp::STATUS_MAX_BITMAP;
            let status_ms = status_bytes as f64 * 8.0 / rate_bps * 1e3;
            if *ms < status_ms {
                return Err(format!(
                    "status_period_ms = {ms}: shorter than one status frame's transmission \
                     ({status_ms:.3} ms for {status_bytes}-byte statuses at {rate_bps} bit/s): \
                     statuses would queue faster than the link sends them"
                ));
            }
        }
        Ok(())
    }

    /// Short label used in tables and file names: the short name, plus suffixes for fields that
    /// differ from that name's recommended defaults.
    pub fn label(&self) -> String {
        let mut l = match self {
            SchemeConfig::Default => "default".to_string(),
            SchemeConfig::Gbn { .. } => "gbn".to_string(),
            SchemeConfig::Sr { nak_policy, .. } => match nak_policy {
                NakPolicy::Once => "sr",
                NakPolicy::PerWindow => "sr-m1",
                NakPolicy::PerFrame => "sr-m2",
            }
            .to_string(),
            SchemeConfig::Rlp {
                max_naks, delivery, ..
            } => match (delivery, max_naks) {
                (Delivery::InSequence, 3) => "rlp".to_string(),
                (Delivery::InSequence, n) => format!("rlp{n}"),
                (Delivery::OutOfSequence, 1) => "rlp-oos".to_string(),
                (Delivery::OutOfSequence, n) => format!("rlp-oos{n}"),
            },
            SchemeConfig::Xor {
                block, adaptive, ..
            } => match (adaptive, block) {
                (false, 8) => "xor".to_string(),
                (false, n) => format!("xor{n}"),
                (true, 8) => "xor-ad".to_string(),
                (true, n) => format!("xor-ad{n}"),
            },
            SchemeConfig::Rse {
                block,
                parity,
                adaptive,
                partial_parity,
                ..
            } => {
                let base = if *adaptive { "rse-ad" } else { "rse" };
                let mut l = if (*block, *parity) == (default_xor_block(), default_rse_parity()) {
                    base.to_string()
                } else {
                    format!("{base}{block}-{parity}")
                };
                if *partial_parity == PartialParity::Proportional {
                    l.push_str("-prop");
                }
                l
            }
            SchemeConfig::Snoop { .. } => "snoop".to_string(),
            SchemeConfig::Hdlc {
                mode, sequencing, ..
            } => match (mode, sequencing) {
                (HdlcMode::Lapb, _) => "lapb".to_string(),
                (HdlcMode::Mdlp, Sequencing::InSequence) => "mdlp".to_string(),
                (HdlcMode::Mdlp, Sequencing::NonSequencing) => "mdlp-ns".to_string(),
            },
            SchemeConfig::StatusRlp { sequencing, .. } => match sequencing {
                Sequencing::InSequence => "status-rlp".to_string(),
                Sequencing::NonSequencing => "status-rlp-ns".to_string(),
            },
        };
        let mut opt = |name: &str, v: &Option<f64>| {
            if let Some(v) = v {
                l.push_str(&format!("-{name}{v}"));
            }
        };
        match self {
            SchemeConfig::Default => {}
            SchemeConfig::Gbn {
                rto_ms,
                rto_queue_frames,
                ack_delay_ms,
                ..
            }
            | SchemeConfig::Sr {
                rto_ms,
                rto_queue_frames,
                ack_delay_ms,
                ..
            } => {
                opt("rto", rto_ms);
                // Shown only when it decides the timer (no explicit rto_ms).
                let rq = rto_queue_frames
                    .filter(|_| rto_ms.is_none())
                    .map(|q| q as f64);
                opt("rq", &rq);
                opt("ackd", ack_delay_ms);
            }
            SchemeConfig::Rlp {
                nak_timeout_ms,
                nak_queue_frames,
                keepalive_ms,
                ..
            } => {
                opt("nakt", nak_timeout_ms);
                // Shown only when it decides the timer (no explicit nak_timeout_ms).
                let nq = nak_queue_frames
                    .filter(|_| nak_timeout_ms.is_none())
                    .map(|q| q as f64);
                opt("nq", &nq);
                opt("ka", keepalive_ms);
            }
            SchemeConfig::Xor {
                idle_timeout_ms, ..
            }
            | SchemeConfig::Rse {
                idle_timeout_ms, ..
            } => opt("idle", idle_timeout_ms),
            SchemeConfig::Snoop { tick_ms, .. } => opt("tick", tick_ms),
            SchemeConfig::Hdlc { t1_ms, t2_ms, .. } => {
                opt("t1_", t1_ms);
                opt("t2_", t2_ms);
            }
            SchemeConfig::StatusRlp {
                status_period_ms,
                mtbt_ms,
                mrd_ms,
                ..
            } => {
                opt("p", status_period_ms);
                opt("mtbt", mtbt_ms);
                opt("mrd", mrd_ms);
            }
        }
        match self {
            SchemeConfig::Gbn { window, .. } if *window != default_window() => {
                l.push_str(&format!("-w{window}"));
            }
            SchemeConfig::Sr { window, timer, .. } => {
                if *window != default_window() {
                    l.push_str(&format!("-w{window}"));
                }
                if *timer == RetransmitTimer::PerFrame {
                    l.push_str("-per-frame");
                }
            }
            SchemeConfig::Rlp {
                buffer,
                max_idle_keepalives,
                ..
            } => {
                if *buffer != default_rlp_buffer() {
                    l.push_str(&format!("-b{buffer}"));
                }
                if *max_idle_keepalives != 0 {
                    l.push_str(&format!("-kan{max_idle_keepalives}"));
                }
            }
            SchemeConfig::Hdlc {
                window,
                n2,
                on_limit,
                backlog,
                ..
            } => {
                if let Some(n) = n2 {
                    l.push_str(&format!("-n2_{n}"));
                    if *on_limit == RetryLimit::BestEffort {
                        l.push_str("-be");
                    }
                }
                if *window != default_hdlc_window() {
                    l.push_str(&format!("-w{window}"));
                }
                if *backlog != default_status_backlog() {
                    l.push_str(&format!("-bl{backlog}"));
                }
            }
            SchemeConfig::StatusRlp {
                window, backlog, ..
            } => {
                if *window != default_status_window() {
                    l.push_str(&format!("-w{window}"));
                }
                if *backlog != default_status_backlog() {
                    l.push_str(&format!("-bl{backlog}"));
                }
            }
            SchemeConfig::Snoop {
                state,
                eln,
                buffer,
                max_rxmit,
                local_timer,
                segments,
                ..
            } => {
                if *state == SnoopState::HostPair {
                    l.push_str("-host-pair");
                }
                if *segments == SnoopSegments::Real {
                    l.push_str("-real");
                }
                if *eln {
                    l.push_str("-eln");
                }
                if *buffer != default_snoop_buffer() {
                    l.push_str(&format!("-b{buffer}"));
                }
                if *max_rxmit != default_snoop_rxmit() {
                    l.push_str(&format!("-rx{max_rxmit}"));
                }
                if !*local_timer {
                    l.push_str("-no-timer");
                }
            }
            _ => {}
        }
        l
    }

    /// Instantiate for one end of a link. Out-of-range windows and blocks are clamped to the
    /// implementation's limits (1..=127 for windows and blocks, 1..=128 for the RLP buffer).
    pub fn build(&self, link: &LinkInfo, role: Role) -> Box<dyn Service> {
        match self {
            SchemeConfig::Default => Box::new(Raw::new()),
            // seed004-ch4 sec. 3.0.3: Snoop only at the base station, Default at the wireless host.
            SchemeConfig::Snoop { .. } if role == Role::Host => Box::new(Raw::new()),
            SchemeConfig::Snoop {
                state,
                eln,
                tick_ms,
                buffer,
                max_rxmit,
                local_timer,
                segments,
            } => Box::new(Snoop::new(SnoopConfig {
                state: *state,
                eln: *eln,
                tick: ms_or(*tick_ms, snoop::DEFAULT_TICK),
                buffer: (*buffer).max(1),
                max_rxmit: *max_rxmit,
                local_timer: *local_timer,
                segments: *segments,
            })),
            SchemeConfig::Gbn {
                window,
                rto_ms,
                rto_queue_frames,
                ack_delay_ms,
            } => {
                let d = GbnConfig::recommended_with(
                    link,
                    rto_queue_frames.unwrap_or(sr::DEFAULT_RTO_QUEUE_FRAMES),
                );
                Box::new(Gbn::new(GbnConfig {
                    window: (*window).clamp(1, gbn::MAX_WINDOW),
                    rto: ms_or(*rto_ms, d.rto),
                    ack_delay: ms_or(*ack_delay_ms, d.ack_delay),
                }))
            }
            SchemeConfig::Sr {
                nak_policy,
                window,
                rto_ms,
                rto_queue_frames,
                ack_delay_ms,
                timer,
            } => {
                let d = SrConfig::recommended_with(
                    link,
                    *nak_policy,
                    rto_queue_frames.unwrap_or(sr::DEFAULT_RTO_QUEUE_FRAMES),
                );
                Box::new(Sr::new(SrConfig {
                    nak_policy: *nak_policy,
                    window: (*window).clamp(1, sr::MAX_WINDOW),
                    rto: ms_or(*rto_ms, d.rto),
                    ack_delay: ms_or(*ack_delay_ms, d.ack_delay),
                    timer: *timer,
                }))
            }
            SchemeConfig::Rlp {
                max_naks,
                delivery,
                nak_timeout_ms,
                nak_queue_frames,
                keepalive_ms,
                buffer,
                max_idle_keepalives,
            } => {
                let d = RlpConfig::recommended_with(
                    link,
                    *max_naks,
                    *delivery,
                    nak_queue_frames.unwrap_or(rlp::DEFAULT_NAK_QUEUE_FRAMES),
                );
                Box::new(Rlp::new(RlpConfig {
                    max_naks: *max_naks,
                    delivery: *delivery,
                    nak_timeout: ms_or(*nak_timeout_ms, d.nak_timeout),
                    keepalive: ms_or(*keepalive_ms, d.keepalive),
                    buffer: (*buffer).clamp(1, rlp::MAX_BUFFER),
                    max_idle_keepalives: *max_idle_keepalives,
                }))
            }
            SchemeConfig::Hdlc {
                mode,
                window,
                t1_ms,
                t2_ms,
                n2,
                on_limit,
                sequencing,
                backlog,
            } => Box::new(Hdlc::new(HdlcConfig {
                mode: *mode,
                window: (*window).clamp(1, hdlc::MAX_WINDOW),
                t1: ms_or(*t1_ms, hdlc::DEFAULT_T1),
                t2: ms_or(*t2_ms, hdlc::DEFAULT_T2),
                n2: n2.map(|n| n.max(1)),
                on_limit: *on_limit,
                sequencing: if *mode == HdlcMode::Lapb {
                    Sequencing::InSequence
                } else {
                    *sequencing
                },
                backlog: (*backlog).max(1),
            })),
            SchemeConfig::StatusRlp {
                window,
                status_period_ms,
                mtbt_ms,
                sequencing,
                mrd_ms,
                backlog,
            } => Box::new(StatusRlp::new(StatusRlpConfig {
                window: (*window).clamp(1, status_rlp::MAX_WINDOW),
                status_period: ms_or(*status_period_ms, status_rlp::DEFAULT_STATUS_PERIOD),
                mtbt: ms_or(*mtbt_ms, status_rlp::DEFAULT_MTBT),
                sequencing: *sequencing,
                mrd: mrd_ms.map(|ms| ms_or(Some(ms), Duration::ZERO)),
                backlog: (*backlog).max(1),
            })),
            SchemeConfig::Xor {
                block,
                adaptive,
                idle_timeout_ms,
            } => {
                let block = (*block).clamp(1, crate::wire::xor::XOR_MAX_BLOCK);
                let d = XorConfig::recommended(link, block, *adaptive);
                Box::new(Xor::new(XorConfig {
                    block,
                    idle_timeout: if *adaptive {
                        Some(ms_or(*idle_timeout_ms, d.idle_timeout.unwrap_or_default()))
                    } else {
                        None
                    },
                }))
            }
            SchemeConfig::Rse {
                block,
                parity,
                adaptive,
                idle_timeout_ms,
                partial_parity,
            } => {
                let block = (*block).clamp(1, crate::wire::rse::RSE_MAX_BLOCK);
                let parity = (*parity).clamp(1, crate::wire::rse::RSE_MAX_PARITY);
                let d = RseConfig::recommended(link, block, parity, *adaptive);
                Box::new(Rse::new(RseConfig {
                    block,
                    parity,
                    idle_timeout: if *adaptive {
                        Some(ms_or(*idle_timeout_ms, d.idle_timeout.unwrap_or_default()))
                    } else {
                        None
                    },
                    proportional: *partial_parity == PartialParity::Proportional,
                }))
            }
        }
    }

    /// Parse a scheme by its short name with recommended defaults: see [`SchemeConfig::NAMES`];
    /// also `xor<n>` and `xor-ad<n>` for other block sizes, and `rse<n>-<h>` and `rse-ad<n>-<h>`
    /// for Reed-Solomon blocks of n data and h parity frames (`rse` is `rse8-2`).
    pub fn from_name(name: &str) -> Option<SchemeConfig> {
        let sr = |nak_policy| SchemeConfig::Sr {
            nak_policy,
            window: default_window(),
            rto_ms: None,
            rto_queue_frames: None,
            ack_delay_ms: None,
            timer: RetransmitTimer::Oldest,
        };
        let rlp = |max_naks, delivery| SchemeConfig::Rlp {
            max_naks,
            delivery,
            nak_timeout_ms: None,
            nak_queue_frames: None,
            keepalive_ms: None,
            buffer: default_rlp_buffer(),
            max_idle_keepalives: 0,
        };
        let xor = |block: u8, adaptive| SchemeConfig::Xor {
            block,
            adaptive,
            idle_timeout_ms: None,
        };
        let rse = |block: u8, parity: u8, adaptive| SchemeConfig::Rse {
            block,
            parity,
            adaptive,
            idle_timeout_ms: None,
            partial_parity: PartialParity::Full,
        };
        match name {
            "default" | "raw" => Some(SchemeConfig::Default),
            "gbn" => Some(SchemeConfig::Gbn {
                window: default_window(),
                rto_ms: None,
                rto_queue_frames: None,
                ack_delay_ms: None,
            }),
            "sr" => Some(sr(NakPolicy::Once)),
            "sr-m1" => Some(sr(NakPolicy::PerWindow)),
            "sr-m2" => Some(sr(NakPolicy::PerFrame)),
            "rlp" => Some(rlp(3, Delivery::InSequence)),
            "rlp1" => Some(rlp(1, Delivery::InSequence)),
            "rlp-oos" => Some(rlp(1, Delivery::OutOfSequence)),
            "lapb" | "mdlp" | "mdlp-ns" => Some(SchemeConfig::Hdlc {
                mode: if name == "lapb" {
                    HdlcMode::Lapb
                } else {
                    HdlcMode::Mdlp
                },
                window: default_hdlc_window(),
                t1_ms: None,
                t2_ms: None,
                n2: None,
                on_limit: RetryLimit::Reset,
                sequencing: if name == "mdlp-ns" {
                    Sequencing::NonSequencing
                } else {
                    Sequencing::InSequence
                },
                backlog: default_status_backlog(),
            }),
            "status-rlp" | "status-rlp-ns" => Some(SchemeConfig::StatusRlp {
                window: default_status_window(),
                status_period_ms: None,
                mtbt_ms: None,
                sequencing: if name == "status-rlp" {
                    Sequencing::InSequence
                } else {
                    Sequencing::NonSequencing
                },
                mrd_ms: None,
                backlog: default_status_backlog(),
            }),
            "xor" => Some(xor(8, false)),
            "xor-ad" => Some(xor(8, true)),
            "rse" => Some(rse(default_xor_block(), default_rse_parity(), false)),
            "rse-ad" => Some(rse(default_xor_block(), default_rse_parity(), true)),
            "snoop" => Some(SchemeConfig::Snoop {
                state: SnoopState::Connection,
                eln: false,
                tick_ms: None,
                buffer: default_snoop_buffer(),
                max_rxmit: default_snoop_rxmit(),
                local_timer: true,
                segments: SnoopSegments::Ns2,
            }),
            _ if name.starts_with("rse") => {
                let (rest, adaptive) = match name.strip_prefix("rse-ad") {
                    Some(r) => (r, true),
                    None => (name.strip_prefix("rse")?, false),
                };
                let (n, h) = rest.split_once('-')?;
                let (n, h) = (name_number(n)?, name_number(h)?);
                ((1..=crate::wire::rse::RSE_MAX_BLOCK).contains(&n)
                    && (1..=crate::wire::rse::RSE_MAX_PARITY).contains(&h))
                .then(|| rse(n, h, adaptive))
            }
            _ => {
                let (rest, adaptive) = match name.strip_prefix("xor-ad") {
                    Some(r) => (r, true),
                    None => (name.strip_prefix("xor")?, false),
                };
                let n = name_number(rest)?;
                (1..=crate::wire::xor::XOR_MAX_BLOCK)
                    .contains(&n)
                    .then(|| xor(n, adaptive))
            }
        }
    }

    /// Names accepted by [`SchemeConfig::from_name`].
    pub const NAMES: &'static [&'static str] = &[
        "default",
        "gbn",
        "sr",
        "sr-m1",
        "sr-m2",
        "rlp",
        "rlp1",
        "rlp-oos",
        "xor",
        "xor12",
        "xor-ad",
        "rse",
        "rse-ad",
        "snoop",
        "status-rlp",
        "status-rlp-ns",
    ];
}

#[cfg(test)]
mod scheme_tests;
#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use super::*;

    fn cellular() -> LinkInfo {
        LinkInfo {
            rate: DataRate::from_bps(14_400).unwrap(),
            delay: Duration::from_millis(100),
            frame_payload: 50,
        }
    }

    #[test]
    fn every_name_builds_and_labels_round_trip() {
        for name in SchemeConfig::NAMES {
            let c = SchemeConfig::from_name(name).unwrap();
            assert_eq!(&c.label(), name);
            let s = c.build(&cellular(), Role::Host);
            if name.starts_with("status-rlp") {
                // Its status clock runs from time zero (seed002.md sec. 3.4).
                assert_eq!(
                    s.poll_timeout(),
                    Some(Instant::ZERO + status_rlp::DEFAULT_STATUS_PERIOD)
                );
            } else {
                assert!(s.poll_timeout().is_none(), "{name} idle at start");
            }
        }
        assert_eq!(SchemeConfig::from_name("xor10").unwrap().label(), "xor10");
        assert!(SchemeConfig::from_name("xor0").is_none());
        for name in ["rse20-10", "rse-ad4-1", "rse127-127", "rse8-3"] {
            let c = SchemeConfig::from_name(name).unwrap();
            assert_eq!(c.label(), name);
            assert_eq!(SchemeConfig::from_name(&c.label()), Some(c.clone()));
            c.build(&cellular(), Role::Host);
        }
        assert_eq!(SchemeConfig::from_name("rse8-2").unwrap().label(), "rse");
        // one name per configuration: no signs, no leading zeros, no zero counts
        for bad in [
            "rse+8-2", "rse08-2", "rse8-0", "rse0-2", "rse128-1", "rse8", "xor+8", "xor08",
        ] {
            assert!(SchemeConfig::from_name(bad).is_none(), "{bad}");
        }
        let timed: SchemeConfig =
            serde_json::from_str(r#"{"kind":"rse","idle_timeout_ms":20}"#).unwrap();
        assert!(timed.validate().unwrap_err().contains("adaptive"));
        assert!(SchemeConfig::from_name("bogus").is_none());
    }

    #[test]
    fn arq_rto_queue_frames_option() {
        for kind in ["gbn", "sr"] {
            let d: SchemeConfig = serde_json::from_str(&format!(r#"{{"kind":"{kind}"}}"#)).unwrap();
            assert!(!serde_json::to_string(&d).unwrap().contains("rto_queue"));
            let z: SchemeConfig =
                serde_json::from_str(&format!(r#"{{"kind":"{kind}","rto_queue_frames":0}}"#))
                    .unwrap();
            assert!(z.label().ends_with("-rq0"), "{}", z.label());
        }
        let l = crate::testing::thesis_link("wlan");
        let bare = SrConfig::recommended_with(&l, NakPolicy::PerFrame, 0);
        assert_eq!(bare.rto, l.frame_rtt(3).saturating_mul(2));
        assert_eq!(GbnConfig::recommended_with(&l, 0).rto, bare.rto);
        // The default: the same allowance as RLP's NAK timer ("the same values", L777).
        assert_eq!(
            SrConfig::recommended(&l, NakPolicy::PerFrame).rto,
            bare.rto + l.rate.tx_time(l.frame_payload + 3).saturating_mul(8)
        );
    }

    #[test]
    fn only_reorder_tolerant_schemes_waive_link_order() {
        // mslld drops a frame of a `requires_fifo` scheme that arrives behind a later one; the
        // windowed ARQ schemes and XOR tell late copies from new frames by order (see the trait).
        let l = crate::testing::thesis_link("wlan");
        for (name, fifo) in [
            ("raw", false),
            ("snoop", false),
            ("rse", false),
            ("rse-ad", false),
            ("gbn", true),
            ("sr", true),
            ("sr-m1", true),
            ("sr-m2", true),
            ("rlp", true),
            ("rlp-oos", true),
            ("lapb", true),
            ("mdlp", true),
            ("status-rlp", true),
            ("xor", true),
            ("xor-ad", true),
        ] {
            let c = SchemeConfig::from_name(name).unwrap_or_else(|| panic!("{name}"));
            for role in [Role::Host, Role::BaseStation] {
                assert_eq!(c.build(&l, role).requires_fifo(), fifo, "{name}");
            }
        }
    }

    #[test]
    fn derived_timers_are_capped_like_configured_ones() {
        // rto_queue_frames = 2^32 - 1 on WLAN: about 1.7e7 s, above the 1e9 ms cap
        let l = crate::testing::thesis_link("wlan");
        let huge = SrConfig::recommended_with(&l, NakPolicy::PerFrame, u32::MAX).rto;
        assert!(huge > MAX_TIMER);
        assert_eq!(ms_or(None, huge), MAX_TIMER);
        assert_eq!(ms_or(Some(2e9), huge), MAX_TIMER);
        assert_eq!(ms_or(None, Duration::ZERO), MIN_TIMER);
        let small = Duration::from_millis(20);
        assert_eq!(ms_or(None, small), small);
    }

    #[test]
    fn rlp_nak_queue_frames_option() {
        // Absent: the default allowance, not serialised (cache keys of default runs unchanged).
        let d: SchemeConfig = serde_json::from_str(r#"{"kind":"rlp"}"#).unwrap();
        assert!(!serde_json::to_string(&d).unwrap().contains("nak_queue"));
        assert_eq!(d.label(), "rlp");
        let z: SchemeConfig =
            serde_json::from_str(r#"{"kind":"rlp","nak_queue_frames":0}"#).unwrap();
        assert_eq!(z.label(), "rlp-nq0");
        // An explicit timeout decides the timer, so the allowance is not shown.
        let t: SchemeConfig =
            serde_json::from_str(r#"{"kind":"rlp","nak_queue_frames":0,"nak_timeout_ms":30}"#)
                .unwrap();
        assert_eq!(t.label(), "rlp-nakt30");
        let l = crate::testing::thesis_link("wlan");
        let bare = RlpConfig::recommended_with(&l, 3, Delivery::InSequence, 0);
        assert_eq!(bare.nak_timeout, l.frame_rtt(2).saturating_mul(2));
        assert!(
            serde_json::from_str::<SchemeConfig>(r#"{"kind":"rlp","nak_queue_frames":-1}"#)
                .is_err()
        );
    }

    #[test]
    fn serde_kebab_tag_defaults_and_unknown_fields() {
        let c: SchemeConfig =
            serde_json::from_str(r#"{"kind":"sr","nak_policy":"per-frame"}"#).unwrap();
        assert_eq!(c, SchemeConfig::from_name("sr-m2").unwrap());
        let c: SchemeConfig =
            serde_json::from_str(r#"{"kind":"rlp","max_naks":1,"delivery":"out-of-sequence"}"#)
                .unwrap();
        assert_eq!(c.label(), "rlp-oos");
        let c: SchemeConfig =
            serde_json::from_str(r#"{"kind":"xor","adaptive":true,"idle_timeout_ms":50}"#).unwrap();
        assert_eq!(c.label(), "xor-ad-idle50");
        assert!(serde_json::from_str::<SchemeConfig>(r#"{"kind":"gbn","windw":3}"#).is_err());
        let back: SchemeConfig = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn recommended_defaults_on_the_thesis_links() {
        // seed004-ch4 sec. 3.10 / seed004-ch5 sec. 10: timers about 2 x link RTT (the GBN/SR RTO and
        // the RLP NAK timer plus 8 frame times of queueing, AMB-4), delayed ACK one frame
        // time, keepalive one link RTT, XOR/Ad 100/130/20 ms. Values in microseconds.
        let us = |d: Duration| d.as_nanos() / 1_000;
        for (name, rto, ackd, nakt, ka, idle) in [
            ("cellular", 696_666, 29_444, 691_111, 230_000, 100_000),
            ("pcs", 516_750, 31_625, 515_500, 131_750, 130_000),
            ("wlan", 52_136, 4_012, 52_096, 10_016, 20_000),
        ] {
            let l = crate::testing::thesis_link(name);
            let s = SrConfig::recommended(&l, NakPolicy::PerFrame);
            assert_eq!(
                (s.window, us(s.rto), us(s.ack_delay)),
                (127, rto, ackd),
                "{name}"
            );
            let g = GbnConfig::recommended(&l);
            assert_eq!((g.window, g.rto, g.ack_delay), (127, s.rto, s.ack_delay));
            let r = RlpConfig::recommended(&l, 3, Delivery::InSequence);
            assert_eq!(
                (us(r.nak_timeout), us(r.keepalive), r.buffer),
                (nakt, ka, 128),
                "{name}"
            );
            let x = XorConfig::recommended(&l, 8, true);
            assert_eq!(x.idle_timeout.map(us), Some(idle), "{name}");
        }
    }

    #[test]
    fn timer_factor_scales_every_base_timeout() {
        use crate::testing::numbered;
        let l = crate::testing::thesis_link("wlan");
        for name in ["gbn", "sr-m2", "rlp", "xor-ad"] {
            let mut one = SchemeConfig::from_name(name).unwrap().build(&l, Role::Host);
            let mut two = SchemeConfig::from_name(name).unwrap().build(&l, Role::Host);
            two.set_timer_factor(2.0);
            let mut out = Outbox::default();
            one.handle_packet(Instant::ZERO, numbered(0, 100), &mut out);
            two.handle_packet(Instant::ZERO, numbered(0, 100), &mut out);
            // timers start when the frame starts transmission
            one.handle_transmitted(Instant::ZERO, &out.frames[0]);
            two.handle_transmitted(Instant::ZERO, &out.frames[1]);
            let (a, b) = (one.poll_timeout().unwrap(), two.poll_timeout().unwrap());
            assert_eq!(b.as_nanos(), 2 * a.as_nanos(), "{name}");
        }
    }

    /// The kept values are what `scaled` computes for the factor set last, the base values at
    /// first and again at factor 1, with the shortest-timer floor.
    #[test]
    fn scaled_timers_follow_the_last_factor() {
        let base = [
            Duration::from_millis(200),
            Duration::from_micros(1500),
            Duration::from_nanos(3),
        ];
        let mut t = ScaledTimers::new(base);
        for (i, d) in base.iter().enumerate() {
            assert_eq!(t.get(i), *d);
        }
        for f in [2.0, 0.37, 1e-9, 3.3333, 1.0, 0.5] {
            t.set_factor(f);
            for (i, d) in base.iter().enumerate() {
                assert_eq!(t.get(i), scaled(*d, f), "timer {i} factor {f}");
            }
        }
        t.set_factor(1.0);
        assert_eq!(
            t.get(2),
            Duration::from_nanos(3),
            "factor 1 keeps the configured value"
        );
        t.set_factor(1e-9);
        assert_eq!(t.get(0), MIN_TIMER);
    }

    #[test]
    fn header_overheads_match_seed_004() {
        // seed004-ch4 sec. 3.0.1: Default 1, GBN/SR 3, RLP 2; seed004-ch5 sec. 4.0: XOR 2.
        for (name, h) in [
            ("default", 1),
            ("gbn", 3),
            ("sr-m2", 3),
            ("rlp", 2),
            ("xor", 2),
            ("snoop", 1),
        ] {
            let s = SchemeConfig::from_name(name)
                .unwrap()
                .build(&cellular(), Role::Host);
            assert_eq!(s.header_overhead(), h, "{name}");
        }
    }
}
