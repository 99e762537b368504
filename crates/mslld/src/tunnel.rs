//! `Tunnel`: everything the daemon does between its two sockets, as a sans-IO state machine.
//!
//! ```text
//!   TUN read --on_ip_packet--> [ingress queue per service, bounded, SCFQ order]
//!                                      --(next_accept, backlog limit)--> Endpoint
//!                                                                                        |
//!   UDP send <--poll_datagram-- [seal] <-- VirtualLink free? -- poll_transmit ------------+
//!
//!   UDP recv --on_datagram--> [Lossy] --> [open: auth] --> [PeerState: replay/session] --> Endpoint
//!   TUN write <--poll_ip------------------------------------------- poll_deliver ----------+
//! ```
//!
//! The I/O loop (`daemon.rs`) only moves bytes and sleeps until `poll_timeout`; the protocol is in
//! `msll_proto::Endpoint`, and the session, replay and pacing logic here, so tests drive two
//! `Tunnel`s through an in-memory wire with explicit times.
//!
//! Sessions: each start draws a random session id; datagrams carry it and echo the peer's. Frames
//! reach the Endpoint only when the echo names our current session, and the link counts as up
//! only once the peer has echoed it. When the peer restarts (a new session with newer counters),
//! our Endpoint is rebuilt, so both ends' sequence state starts from zero together and neither
//! wedges on the other's stale windows.

use std::collections::VecDeque;

use msll_proto::{
    Buf, DataRate, Duration, Endpoint, Frame, Instant, Packet, ServiceMetrics, ServiceStats,
};
use serde::Serialize;
use tracing::{debug, info, warn};

use crate::config::{Config, Limits, HELLO_RANGE_S, PEER_TIMEOUT_HELLOS};
use crate::impair::Lossy;
use crate::wire::{
    hello_payload, parse_hello, Admit, Cipher, DecodeError, Header, Kind, PeerState,
};

/// Timer lateness the pacing tolerates: an OS timer fires up to ~1 ms late (tokio's wheel has
/// millisecond resolution), while a 1400-byte frame takes 0.56 ms at 20 Mbit/s. Without credit
/// for that lateness the daemon would send below the nominal rate; with it, it catches up in a
/// burst of at most this long.
pub const PACING_SLACK: Duration = Duration::from_millis(2);
/// Hello period before the peer has echoed our session.
const HELLO_UNSYNCED: Duration = Duration::from_millis(100);
/// Least spacing of hellos sent in reaction to unsynchronised data.
const HELLO_MIN_GAP: Duration = Duration::from_millis(20);

/// The link's "transmitter free" signal (architecture sec. 2.5): a UDP socket is almost always
/// writable, so without it the scheduler would never hold a backlog to schedule.
#[derive(Debug, Clone)]
pub struct VirtualLink {
    rate: DataRate,
    busy_until: Instant,
}

impl VirtualLink {
    pub fn new(rate: DataRate) -> Self {
        VirtualLink {
            rate,
            busy_until: Instant::ZERO,
        }
    }
    pub fn is_free(&self, now: Instant) -> bool {
        self.busy_until <= now
    }
    pub fn free_at(&self) -> Instant {
        self.busy_until
    }
    /// Start sending `bytes`: the link is busy for their serialisation time, counted from when
    /// it became free (at most `PACING_SLACK` in the past) so late wake-ups keep the rate.
    pub fn start(&mut self, now: Instant, bytes: usize) {
        let from = self.busy_until.max(now - PACING_SLACK);
        self.busy_until = from + self.rate.tx_time(bytes);
    }
}

/// The packets read from TUN that wait for the classifier's pacing (`next_accept`), one bounded
/// queue per service so that one service's backlog (a TCP flow filling its queue) never causes
/// drops in another (a real-time UDP flow). Served in SCFQ order by the services' link shares,
/// the same discipline the Endpoint's scheduler applies to frames: a packet's tag is
/// `max(V, F_prev) + len / share`, the smallest tag goes first, and V is the tag in service.
struct Ingress {
    queues: Vec<VecDeque<(Instant, Packet, f64)>>,
    last_finish: Vec<f64>,
    vtime: f64,
    len: usize,
    limit: usize,
    /// Per service: the longest a packet may wait (`limits.max_wait_ms`).
    max_wait: Vec<Option<Duration>>,
    /// Per service: packets discarded for waiting longer than that.
    expired: Vec<u64>,
}

impl Ingress {
    fn new(n: usize, limit: usize, max_wait: Vec<Option<Duration>>) -> Self {
        Ingress {
            queues: (0..n).map(|_| VecDeque::new()).collect(),
            last_finish: vec![0.0; n],
            vtime: 0.0,
            len: 0,
            limit,
            max_wait,
            expired: vec![0; n],
        }
    }

    /// Discard the packets of service `sid` that have waited longer than its limit (the
    /// oldest are at the head). A queue left empty gives their finish tags back: the service's
    /// next packet is tagged from the current virtual time, as after an idle spell. Kept spent,
    /// a backlog that expired whole (a link outage) left the service owing its share for all of
    /// it, and its fresh packets waited behind other services and expired in turn (review,
    /// session 47). Expiry that leaves packets queued keeps their tags, as they were given.
    fn expire(&mut self, sid: usize, now: Instant) {
        let Some(limit) = self.max_wait[sid] else {
            return;
        };
        let q = &mut self.queues[sid];
        let mut any = false;
        while q.front().is_some_and(|h| now - h.0 > limit) {
            q.pop_front();
            self.len -= 1;
            self.expired[sid] += 1;
            any = true;
        }
        if any && q.is_empty() {
            self.last_finish[sid] = self.last_finish[sid].min(self.vtime);
        }
    }

    fn expire_all(&mut self, now: Instant) {
        for sid in 0..self.queues.len() {
            self.expire(sid, now);
        }
    }

    fn push(&mut self, sid: usize, now: Instant, p: Packet, share: f64) -> bool {
        // Stale packets make room first: with the link down, a full queue of them would
        // otherwise refuse every fresh one.
        self.expire(sid, now);
        if self.queues[sid].len() >= self.limit {
            return false;
        }
        let share = if share.is_finite() && share > 0.0 {
            share
        } else {
            1.0
        };
        let tag = self.vtime.max(self.last_finish[sid]) + p.len() as f64 / share;
        self.last_finish[sid] = tag;
        self.queues[sid].push_back((now, p, tag));
        self.len += 1;
        true
    }

    fn pop(&mut self) -> Option<(u8, Instant, Packet)> {
        let sid = (0..self.queues.len())
            .filter_map(|i| self.queues[i].front().map(|h| (i, h.2)))
            // Ties go to the lower service number.
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))?
            .0;
        let (t, p, tag) = self.queues[sid].pop_front()?;
        self.vtime = tag;
        self.len -= 1;
        Some((sid as u8, t, p))
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn any_full(&self) -> bool {
        self.queues.iter().any(|q| q.len() >= self.limit)
    }
}

/// Daemon-level counters (the schemes' own are in `ServiceStats`).
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct Counters {
    pub ip_in: u64,
    pub ip_out: u64,
    /// IP packets dropped because their service's ingress queue was full (overload, link down).
    pub ingress_dropped: u64,
    /// IP packets discarded after waiting longer than `limits.max_wait_ms` in the ingress queue.
    pub ingress_expired: u64,
    pub datagrams_in: u64,
    pub datagrams_out: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub hellos_out: u64,
    pub frames_to_endpoint: u64,
    /// Failed authentication: forged, corrupted or wrong key. Dropped, no state touched.
    pub auth_failed: u64,
    /// Too short, too long, bad version/type, or a badly shaped authentic datagram.
    pub malformed: u64,
    /// Of `malformed`: datagrams of another wire version (a peer running another mslld
    /// release; unauthenticated, as this daemon cannot read them). Warned once per version.
    pub foreign_version: u64,
    pub replayed: u64,
    pub stale_session: u64,
    pub reflected: u64,
    /// Authentic datagrams of a session that is not the peer's current one and did not echo
    /// ours: a (re)started peer's first hellos, or an earlier run of ours sent back; adopted only
    /// once one echoes our session (`wire::Admit::Unconfirmed`).
    pub unconfirmed: u64,
    /// Authentic data whose echo did not name our session (sent before the peer knew it).
    pub unsynced: u64,
    pub peer_restarts: u64,
    /// Times the link was taken for down: nothing authentic heard from the peer for
    /// `peer_timeout_s`.
    pub peer_timeouts: u64,
    /// UDP receives that failed (an ICMP error reported on the socket, ...).
    pub recv_errors: u64,
    pub impair_lost: u64,
    pub impair_overflow: u64,
    pub send_errors: u64,
    /// IP packets the tunnel delivered that the TUN device (or in-process channel) refused.
    pub ip_write_errors: u64,
    /// TCP SYNs whose MSS option was lowered to fit our `tun.mtu` (`tun.mss_clamp`): read from
    /// TUN, or delivered to it (since session 44: the peer clamps to its own MTU).
    pub mss_clamped: u64,
    /// Frames of a scheme that needs link order (`Service::requires_fifo`: all but Default, Snoop
    /// and RSE, which remembers what the last 127 blocks it let go of delivered) that arrived
    /// behind a later datagram of the same service: dropped, so the scheme
    /// sees a loss, which it recovers from as designed, instead of taking a late copy for a new
    /// frame (a packet delivered twice, or a stale ACK freeing unacknowledged frames).
    pub reordered_dropped: u64,
    /// Hellos from a peer whose services differ from ours (`Config::link_digest`): refused, so
    /// the link stays down until one end's configuration is fixed and it restarts.
    pub config_mismatch: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct DelayStat {
    n: u64,
    sum: Duration,
    max: Duration,
}

impl DelayStat {
    fn add(&mut self, d: Duration) {
        self.n += 1;
        self.sum += d;
        self.max = self.max.max(d);
    }
}

/// Per-service view for the stats command.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceSnapshot {
    pub name: String,
    pub scheme: &'static str,
    /// Packets waiting in the daemon's ingress queue for this service.
    pub ingress_queued: usize,
    /// IP packets for this service dropped at the full ingress queue.
    pub ingress_dropped: u64,
    /// IP packets for this service discarded after waiting longer than `limits.max_wait_ms`.
    pub ingress_expired: u64,
    /// Time from the TUN read to the hand-over to the Endpoint (classifier pacing + backlog).
    pub ingress_delay_ms_avg: f64,
    pub ingress_delay_ms_max: f64,
    /// Frames of this service in the scheduler queue now, and the queue's history (since the
    /// last Endpoint reset): tail drops, longest length, mean wait for the link.
    pub queue_len: usize,
    pub queue_dropped: u64,
    pub queue_max_len: usize,
    pub queue_wait_ms_avg: f64,
    /// Current link share (SCFQ rate / sum of rates).
    pub share: f64,
    /// Scheme counters (packets, frames, retransmissions, NAKs, FEC recoveries, give-ups, ...),
    /// summed over Endpoint resets.
    pub counters: ServiceStats,
    /// The Endpoint's seed 004 Table 8.1 characterisation (goodput, residual loss, delay
    /// estimate, share, predicted throughput) since the last Endpoint reset.
    pub metrics: Option<ServiceMetrics>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    pub session: String,
    pub peer_session: Option<String>,
    pub link_up: bool,
    pub now_s: f64,
    pub counters: Counters,
    pub endpoint_frames_transmitted: u64,
    pub endpoint_frames_received: u64,
    pub endpoint_unknown_service: u64,
    /// Frames the scheduler refused because a service queue was full (msll.queue_limit).
    pub endpoint_queue_drops: u64,
    /// Frames waiting in the Endpoint's scheduler for the virtual link, plus the packets status
    /// RLP and HDLC hold in their own backlogs (`Service::held_packets`): what
    /// `limits.backlog_frames` bounds.
    pub backlog_frames: u64,
    pub ingress_queued: usize,
    pub delay_line: usize,
    pub services: Vec<ServiceSnapshot>,
}

pub struct Tunnel {
    cfg: Config,
    names: Vec<String>,
    limits: Limits,
    ep: Endpoint,
    /// Last time handed to the Endpoint: kept monotonic although packets and transmissions may
    /// be handed over at their (slightly past) pacing instant; every call into the Endpoint
    /// takes its time from `ep_time` or sets it here.
    ep_now: Instant,
    link: VirtualLink,
    cipher: Cipher,
    session: u64,
    counter: u64,
    peer: PeerState,
    synced: bool,
    ingress: Ingress,
    lossy: Option<Lossy>,
    /// Datagrams received but not yet processed (handled in `pump` after the ingress feed, so
    /// that feeding can still use pacing credit before the frame's `now` advances the clock).
    rx_pending: Vec<Vec<u8>>,
    out: VecDeque<Vec<u8>>,
    to_ip: VecDeque<Packet>,
    next_hello: Instant,
    last_hello: Option<Instant>,
    hello_interval: Duration,
    /// When the peer last sent an authentic datagram that echoed our session.
    last_heard: Option<Instant>,
    /// `peer_timeout_s` if the configuration sets it; else the default, which follows the
    /// slower of our hello interval and the peer's (`peer_timeout`).
    peer_timeout_set: Option<Duration>,
    /// The hello interval the peer's last hello announced (wire version 3).
    peer_hello_interval: Option<Duration>,
    /// The link went down by `peer_timeout` and is not up again.
    timed_out: bool,
    counters: Counters,
    retired: Vec<ServiceStats>,
    /// The Endpoint's own counters and each service's scheduler drops, summed over the
    /// Endpoints a peer restart replaced: the stats and Prometheus report them as cumulative
    /// counters, which fell to 0 at every restart (review, session 47).
    retired_ep: msll_proto::endpoint::EndpointStats,
    retired_queue_dropped: Vec<u64>,
    delays: Vec<DelayStat>,
    dropped_per_service: Vec<u64>,
    /// Rates set at run time (control socket), reapplied when the Endpoint is rebuilt.
    rate_overrides: Vec<Option<f64>>,
    /// Per service that needs link order: the highest peer datagram counter that carried one of
    /// its frames (reset with the Endpoint).
    fifo_top: Vec<Option<u64>>,
    now: Instant,
    /// `Config::link_digest` of our configuration, sent in every hello.
    digest: u64,
    /// The last mismatched digest a peer sent, warned about once.
    mismatch_warned: Option<u64>,
    /// Wire versions (bit per version nibble) other than ours already warned about.
    versions_warned: u16,
}

impl Tunnel {
    /// `session` (nonzero, random per start) and `counter_base` (wall-clock nanoseconds at start)
    /// come from the caller so tests are deterministic.
    pub fn new(cfg: &Config, session: u64, counter_base: u64) -> anyhow::Result<Tunnel> {
        anyhow::ensure!(session != 0, "session id 0 is reserved");
        let psk = cfg.psk()?;
        let n = cfg.msll.config.services.len();
        let lossy = match &cfg.impair {
            // As many of our own largest datagrams as `limits.delay_line` counts, in bytes
            // too: the line holds datagrams from anyone, before authentication.
            Some(im) => Some(
                Lossy::new(im, cfg.rate(), cfg.limits.delay_line, &cfg.base_dir)?.with_byte_cap(
                    cfg.limits.delay_line.saturating_mul(
                        usize::from(cfg.tun.mtu)
                            + msll_proto::wire::HEAD_MAX
                            + crate::wire::OVERHEAD,
                    ),
                ),
            ),
            None => None,
        };
        Ok(Tunnel {
            names: cfg.service_names(),
            limits: cfg.limits.clone(),
            ep: cfg.build_endpoint(),
            ep_now: Instant::ZERO,
            link: VirtualLink::new(cfg.rate()),
            cipher: Cipher::new(&psk),
            session,
            counter: counter_base,
            peer: PeerState::default(),
            synced: false,
            ingress: Ingress::new(
                n,
                cfg.limits.ingress_packets,
                (0..n).map(|i| cfg.max_wait(i)).collect(),
            ),
            lossy,
            rx_pending: Vec::new(),
            out: VecDeque::new(),
            to_ip: VecDeque::new(),
            next_hello: Instant::ZERO,
            last_hello: None,
            hello_interval: Duration::from_secs_f64(cfg.hello_interval_s),
            last_heard: None,
            peer_timeout_set: cfg.peer_timeout_s.map(|_| cfg.peer_timeout()),
            peer_hello_interval: None,
            timed_out: false,
            counters: Counters::default(),
            retired: vec![ServiceStats::default(); n],
            retired_ep: Default::default(),
            retired_queue_dropped: vec![0; n],
            delays: vec![DelayStat::default(); n],
            dropped_per_service: vec![0; n],
            fifo_top: vec![None; n],
            rate_overrides: vec![None; n],
            now: Instant::ZERO,
            digest: cfg.link_digest(),
            mismatch_warned: None,
            versions_warned: 0,
            cfg: cfg.clone(),
        })
    }

    pub fn session(&self) -> u64 {
        self.session
    }
    /// True once the peer has echoed our session: frames flow.
    pub fn link_up(&self) -> bool {
        self.synced
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    fn service_of(&self, p: &Packet) -> u8 {
        let s = self.ep.classifier().classify(p);
        // Mirrors the Endpoint: unmatched traffic goes to the default service 0.
        if (s as usize) < self.names.len() {
            s
        } else {
            0
        }
    }

    /// The packet with its TCP MSS lowered to fit the tunnel, if it is a SYN that needs it.
    fn clamp_mss(&self, p: &[u8]) -> Option<Vec<u8>> {
        let (v4, v6) = self.cfg.tun.mss_clamp.limits(self.cfg.tun.mtu)?;
        let max = if p.first()? >> 4 == 6 { v6 } else { v4 };
        crate::mss::clamp(p, max)
    }

    /// An IP packet read from TUN.
    pub fn on_ip_packet(&mut self, now: Instant, bytes: Buf) {
        self.now = self.now.max(now);
        if bytes.is_empty() {
            return;
        }
        self.counters.ip_in += 1;
        let bytes = match self.clamp_mss(&bytes) {
            Some(v) => {
                self.counters.mss_clamped += 1;
                Buf::from(v)
            }
            None => bytes,
        };
        let p = Packet::new(bytes);
        let sid = self.service_of(&p);
        let share = self.ep.scheduler().share(sid as usize);
        if !self.ingress.push(sid as usize, now, p, share) {
            self.counters.ingress_dropped += 1;
            self.dropped_per_service[sid as usize] += 1;
        }
        self.pump(now);
    }

    /// True when the daemon should stop reading its IP side (used by in-process IP sources that
    /// can wait; a TUN device is always read and excess is dropped and counted instead).
    pub fn ingress_full(&self) -> bool {
        self.ingress.any_full()
    }

    /// A datagram received on the UDP socket (any bytes, from anyone).
    pub fn on_datagram(&mut self, now: Instant, datagram: Vec<u8>) {
        self.now = self.now.max(now);
        self.counters.datagrams_in += 1;
        self.counters.bytes_in += datagram.len() as u64;
        match &mut self.lossy {
            Some(l) => l.arrive(now, datagram),
            None => self.rx_pending.push(datagram),
        }
        self.pump(now);
    }

    pub fn on_timeout(&mut self, now: Instant) {
        self.now = self.now.max(now);
        self.pump(now);
    }

    fn receive(&mut self, now: Instant, datagram: &[u8]) {
        let (hdr, payload) = match self.cipher.open(datagram) {
            Ok(x) => x,
            Err(DecodeError::Auth) => {
                self.counters.auth_failed += 1;
                debug!(len = datagram.len(), "datagram failed authentication");
                return;
            }
            Err(e) => {
                self.counters.malformed += 1;
                debug!(len = datagram.len(), error = %e, "malformed datagram");
                // A datagram of another wire version (a peer upgraded alone) was only a debug
                // line: the link never came up with no word why (review, session 46). Warned
                // once per version: these bytes are not authenticated.
                if let DecodeError::BadType(b0) = e {
                    let v = b0 >> 4;
                    let foreign =
                        v != crate::wire::VERSION && datagram.len() >= crate::wire::OVERHEAD;
                    self.counters.foreign_version += u64::from(foreign);
                    if foreign && self.versions_warned & (1 << v) == 0 {
                        self.versions_warned |= 1 << v;
                        warn!(
                            theirs = v,
                            ours = crate::wire::VERSION,
                            "datagram of another wire version (unauthenticated): is the peer \
                             running another mslld release?"
                        );
                    }
                }
                return;
            }
        };
        match self.peer.admit(self.session, &hdr) {
            Admit::Current => {}
            Admit::NewSession { restarted } => {
                if restarted {
                    self.counters.peer_restarts += 1;
                    warn!(peer_session = %format!("{:016x}", hdr.session), "peer restarted: resetting link-layer state");
                    self.reset_endpoint();
                } else {
                    info!(peer_session = %format!("{:016x}", hdr.session), "peer session learned");
                }
                // Tell the peer our session at once, so it can start sending frames we accept.
                self.next_hello = now;
            }
            Admit::Replay => {
                self.counters.replayed += 1;
                return;
            }
            Admit::StaleSession => {
                self.counters.stale_session += 1;
                return;
            }
            Admit::Reflected => {
                self.counters.reflected += 1;
                return;
            }
            Admit::Unconfirmed => {
                // Answer with a hello that echoes it (rate-limited: replayed datagrams must not
                // make us send one each).
                self.counters.unconfirmed += 1;
                self.hello_soon(now);
                return;
            }
        }
        if hdr.kind == Kind::Hello {
            let (theirs, interval_ms) = parse_hello(&payload).expect("checked by open");
            if theirs != self.digest {
                // After `admit`, so a replay is refused as such (no false warning), and a
                // restart of the peer with other services still resets our link: we stop
                // feeding frames to a scheme the peer no longer runs. Neither end syncs: that
                // needs an admitted datagram that passes this check, and the peer checks ours
                // the same way (and gets no data from us, unsynced).
                self.counters.config_mismatch += 1;
                if self.mismatch_warned != Some(theirs) {
                    self.mismatch_warned = Some(theirs);
                    warn!(
                        ours = %format!("{:016x}", self.digest),
                        theirs = %format!("{theirs:016x}"),
                        "peer's msll.services differ from ours: refusing it until they match"
                    );
                }
                return;
            }
            // Authentic and admitted: the peer's own hello period, which our default timeout
            // must cover (a peer helloing ten times less often than us flapped the link
            // before; session 46's note). Bounded as a configuration's would be.
            self.peer_hello_interval = Some(Duration::from_secs_f64(
                (f64::from(interval_ms) / 1e3).clamp(*HELLO_RANGE_S.start(), *HELLO_RANGE_S.end()),
            ));
        }
        let echoed = hdr.echo == self.session;
        if echoed {
            self.last_heard = Some(now);
        }
        if echoed && !self.synced {
            self.synced = true;
            self.timed_out = false;
            info!("link up: peer echoes our session");
        }
        if hdr.kind == Kind::Hello && !echoed {
            // The peer has not seen our session echoed yet (or our last hello echoed a
            // candidate): answer soon rather than at the next hello interval.
            self.hello_soon(now);
        }
        if hdr.kind == Kind::Data {
            if !echoed {
                self.counters.unsynced += 1;
                // Data from a peer that does not know our session yet: answer with a hello soon.
                self.hello_soon(now);
                return;
            }
            match Frame::from_wire_slice(&payload) {
                Some(frame) => {
                    let sid = frame.service();
                    if self.ep.requires_fifo(sid) {
                        // The UDP path may reorder; this scheme is only right over a FIFO link.
                        // (A service the endpoint has is below `fifo_top.len()`; `get_mut` keeps
                        // that an assumption, not an index panic.)
                        if let Some(top) = self.fifo_top.get_mut(sid as usize) {
                            if top.is_some_and(|t| hdr.counter < t) {
                                self.counters.reordered_dropped += 1;
                                return;
                            }
                            *top = Some(hdr.counter);
                        }
                    }
                    self.counters.frames_to_endpoint += 1;
                    let t = self.ep_time(now);
                    self.ep.handle_frame(t, frame);
                }
                // Authentic, but without even the service byte: counted, not silently dropped
                // (session 33 review).
                None => self.counters.malformed += 1,
            }
        }
    }

    /// Send a hello as soon as `HELLO_MIN_GAP` after the last one allows.
    fn hello_soon(&mut self, now: Instant) {
        let soon = self
            .last_hello
            .map_or(now, |t| (t + HELLO_MIN_GAP).max(now));
        self.next_hello = self.next_hello.min(soon);
    }

    fn ep_time(&mut self, now: Instant) -> Instant {
        self.ep_now = self.ep_now.max(now);
        self.ep_now
    }

    fn reset_endpoint(&mut self) {
        for (acc, s) in self.retired.iter_mut().zip(self.ep.service_stats()) {
            acc.add(&s);
        }
        self.retired_ep.add(&self.ep.stats());
        for (i, d) in self.retired_queue_dropped.iter_mut().enumerate() {
            *d += self.ep.scheduler().stats(i).dropped;
        }
        self.ep = self.cfg.build_endpoint();
        self.fifo_top.fill(None);
        for (i, r) in self.rate_overrides.iter().enumerate() {
            if let Some(r) = r {
                self.ep.set_rate(i as u8, *r);
            }
        }
        self.synced = false;
        self.timed_out = false;
    }

    /// Set service `service`'s scheduler rate r_i (relative; shares are r_i / sum r_j). Kept
    /// across Endpoint resets. With `msll.measure` on, the next measurement window overrides it.
    pub fn set_rate(&mut self, service: u8, rate: f64) -> Result<(), String> {
        if service as usize >= self.names.len() {
            return Err(format!("no service {service}"));
        }
        if !msll_proto::multi::RATE_RANGE.contains(&rate) {
            return Err(format!(
                "rate {rate:e} is not a relative rate in {:e}..={:e}",
                msll_proto::multi::RATE_RANGE.start(),
                msll_proto::multi::RATE_RANGE.end()
            ));
        }
        self.ep.set_rate(service, rate);
        self.rate_overrides[service as usize] = Some(rate);
        Ok(())
    }

    /// Frames handed to the Endpoint's scheduler and not yet transmitted, and packets that a
    /// service holds before it hands them over (status RLP and HDLC keep one frame in the
    /// scheduler and the rest in their own backlog: `Service::held_packets`).
    pub fn backlog(&self) -> u64 {
        (self.ep.scheduler().len() + self.ep.held_packets()) as u64
    }

    fn feed_ingress(&mut self, now: Instant) -> bool {
        let mut progressed = false;
        self.ingress.expire_all(now);
        while self.synced && !self.ingress.is_empty() {
            if self.backlog() >= self.limits.backlog_frames as u64 {
                break;
            }
            // Hand the packet over at its pacing instant, if that has passed (see PACING_SLACK).
            let t = self
                .ep
                .next_accept()
                .max(self.ep_now)
                .max(now - PACING_SLACK);
            if t > now {
                break;
            }
            // Nothing expires between here and the `expire_all` above: `now` is the same.
            let (sid, arrived, p) = self.ingress.pop().expect("nonempty");
            self.delays[sid as usize].add(now - arrived);
            self.ep_now = t;
            self.ep.handle_packet(t, p);
            progressed = true;
        }
        progressed
    }

    fn transmit(&mut self, now: Instant) -> bool {
        let mut progressed = false;
        while self.synced && self.link.is_free(now) {
            // The frame starts when the virtual link became free (at most PACING_SLACK ago, as
            // `VirtualLink::start` counts it), on the Endpoint's clock, which never goes back:
            // given `now` here, a packet handed over next at its slightly earlier pacing instant
            // (`feed_ingress`) put the Endpoint's time back by up to PACING_SLACK (review,
            // session 44).
            let t = self.ep_time(self.link.free_at().max(now - PACING_SLACK));
            let Some(f) = self.ep.poll_transmit(t) else {
                break;
            };
            self.link.start(now, f.len());
            self.seal(Kind::Data, |o| f.write_to(o));
            progressed = true;
        }
        progressed
    }

    fn seal(&mut self, kind: Kind, payload: impl FnOnce(&mut Vec<u8>)) {
        let echo = match kind {
            // Taken down by `peer_timeout_s`: our hellos echo no session, which the peer
            // answers at once (a hello that does not echo it), whatever its hello interval;
            // echoing its session it would wait for its next one (review, session 46).
            Kind::Hello if self.timed_out => 0,
            Kind::Hello => self.peer.hello_echo(),
            Kind::Data => self.peer.session.unwrap_or(0),
        };
        let hdr = Header {
            kind,
            session: self.session,
            echo,
            counter: self.counter,
        };
        self.counter = self.counter.wrapping_add(1);
        let mut d = Vec::with_capacity(1500);
        self.cipher.seal(&hdr, payload, &mut d);
        self.counters.datagrams_out += 1;
        self.counters.bytes_out += d.len() as u64;
        self.out.push_back(d);
    }

    /// The peer's deadline: past it with nothing heard, the link is down.
    fn peer_deadline(&self) -> Option<Instant> {
        self.synced
            .then_some(self.last_heard)
            .flatten()
            .map(|t| t + self.peer_timeout())
    }

    /// The silence after which the link is down: `peer_timeout_s` if set, else
    /// [`PEER_TIMEOUT_HELLOS`] of the slower of the two ends' hello intervals.
    pub fn peer_timeout(&self) -> Duration {
        self.peer_timeout_set.unwrap_or_else(|| {
            let slower = self
                .peer_hello_interval
                .map_or(self.hello_interval, |p| p.max(self.hello_interval));
            slower.mul_f64(PEER_TIMEOUT_HELLOS)
        })
    }

    fn pump(&mut self, now: Instant) {
        self.feed_ingress(now);
        let mut due = std::mem::take(&mut self.rx_pending);
        if let Some(l) = &mut self.lossy {
            while let Some(d) = l.pop_due(now) {
                due.push(d);
            }
        }
        for d in due.drain(..) {
            self.receive(now, &d);
        }
        // Reuse the allocation.
        self.rx_pending = due;
        // After what has arrived: a hello due at the deadline keeps the link up (review,
        // session 46).
        if self.peer_deadline().is_some_and(|d| now >= d) {
            // A dead peer or a broken path (review, session 46: `link_up` stayed true for
            // ever, and IP kept feeding schemes that could not deliver). The scheme state is
            // kept: a peer that comes back without restarting continues where it was; one
            // that restarted resets it (`Admit::NewSession`).
            self.synced = false;
            self.timed_out = true;
            self.counters.peer_timeouts += 1;
            warn!(
                silent_s = (now - self.last_heard.unwrap_or(now)).as_secs_f64(),
                "link down: nothing heard from the peer for peer_timeout_s"
            );
            self.next_hello = self.next_hello.min(now);
        }
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            let t = self.ep_time(now);
            self.ep.handle_timeout(t);
        }
        // Sending frees backlog room, which may admit more packets, which makes more frames.
        while self.transmit(now) | self.feed_ingress(now) {}
        while let Some(p) = self.ep.poll_deliver() {
            self.counters.ip_out += 1;
            // SYNs towards our TUN are clamped to our MTU as well: the peer clamped them to its
            // own, which may be larger, and our hosts would then send segments our TUN cannot
            // take (review, session 44; as OpenVPN's mssfix, both directions).
            let p = match self.clamp_mss(p.as_slice()) {
                Some(v) => {
                    self.counters.mss_clamped += 1;
                    Packet::new(Buf::from(v))
                }
                None => p,
            };
            self.to_ip.push_back(p);
        }
        if now >= self.next_hello {
            let interval_ms = u32::try_from(self.hello_interval.as_nanos().div_ceil(1_000_000))
                .unwrap_or(u32::MAX);
            let payload = hello_payload(self.digest, interval_ms);
            self.seal(Kind::Hello, |o| o.extend_from_slice(&payload));
            self.counters.hellos_out += 1;
            self.last_hello = Some(now);
            self.next_hello = now
                + if self.synced && !self.peer.candidate_pending() {
                    self.hello_interval
                } else {
                    // Also while a candidate waits: a restarted peer learns our session sooner.
                    HELLO_UNSYNCED
                };
        }
        if let Some(l) = &self.lossy {
            self.counters.impair_lost = l.lost;
            self.counters.impair_overflow = l.overflow;
        }
        self.counters.ingress_expired = self.ingress.expired.iter().sum();
    }

    /// The next datagram to send to the peer.
    pub fn poll_datagram(&mut self) -> Option<Vec<u8>> {
        self.out.pop_front()
    }

    /// The next packet to write to TUN.
    pub fn poll_ip(&mut self) -> Option<Packet> {
        self.to_ip.pop_front()
    }

    /// When `on_timeout` must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t = Some(self.next_hello);
        let mut min = |x: Option<Instant>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        };
        min(self.ep.poll_timeout());
        min(self.peer_deadline());
        if let Some(l) = &self.lossy {
            min(l.next_due());
        }
        if self.synced {
            if self.ep.has_backlog() {
                min(Some(self.link.free_at()));
            }
            if !self.ingress.is_empty() && self.backlog() < self.limits.backlog_frames as u64 {
                min(Some(self.ep.next_accept().max(self.ep_now)));
            }
        }
        t
    }

    /// Count a failed UDP receive; returns the total so far (logged on the 1st, 2nd, 4th ...).
    pub fn count_recv_error(&mut self) -> u64 {
        self.counters.recv_errors += 1;
        self.counters.recv_errors
    }

    /// Count a failed UDP send; returns the total so far.
    pub fn count_send_error(&mut self) -> u64 {
        self.counters.send_errors += 1;
        self.counters.send_errors
    }

    /// Count a failed write of a delivered IP packet; returns the total so far.
    pub fn count_ip_write_error(&mut self) -> u64 {
        self.counters.ip_write_errors += 1;
        self.counters.ip_write_errors
    }

    pub fn snapshot(&self) -> Snapshot {
        let eps = self.ep.stats();
        let sched = self.ep.scheduler();
        let shares = self.ep.shares();
        let metrics = self.ep.service_metrics();
        let services = self
            .ep
            .service_stats()
            .iter()
            .zip(self.ep.service_names())
            .enumerate()
            .map(|(i, (s, scheme))| {
                let mut c = self.retired[i];
                c.add(s);
                let d = self.delays[i];
                let q = sched.stats(i);
                ServiceSnapshot {
                    queue_len: sched.queue_len(i),
                    queue_dropped: self.retired_queue_dropped[i] + q.dropped,
                    queue_max_len: q.max_len,
                    queue_wait_ms_avg: q.mean_wait().as_millis_f64(),
                    share: shares.get(i).copied().unwrap_or(0.0),
                    name: self.names[i].clone(),
                    scheme,
                    ingress_queued: self.ingress.queues[i].len(),
                    ingress_dropped: self.dropped_per_service[i],
                    ingress_expired: self.ingress.expired[i],
                    ingress_delay_ms_avg: if d.n == 0 {
                        0.0
                    } else {
                        d.sum.as_millis_f64() / d.n as f64
                    },
                    ingress_delay_ms_max: d.max.as_millis_f64(),
                    counters: c,
                    metrics: metrics.get(i).copied(),
                }
            })
            .collect();
        Snapshot {
            session: format!("{:016x}", self.session),
            peer_session: self.peer.session.map(|s| format!("{s:016x}")),
            link_up: self.synced,
            now_s: self.now.as_secs_f64(),
            counters: self.counters,
            endpoint_frames_transmitted: self.retired_ep.frames_transmitted
                + eps.frames_transmitted,
            endpoint_frames_received: self.retired_ep.frames_received + eps.frames_received,
            endpoint_unknown_service: self.retired_ep.unknown_service + eps.unknown_service,
            endpoint_queue_drops: self.retired_ep.queue_drops + eps.queue_drops,
            backlog_frames: self.backlog(),
            ingress_queued: self.ingress.len,
            delay_line: self.lossy.as_ref().map_or(0, |l| l.held()),
            services,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backlog that expires whole gives its SCFQ finish tags back: the service's next packet
    /// competes from the current virtual time, not behind its expired backlog (review,
    /// session 47: 64 expired packets of a 1/3 share left it owing 38,400 bytes of virtual time,
    /// so its fresh packet waited behind all 64 of the other service's).
    #[test]
    fn an_expired_backlog_leaves_no_virtual_time_debt() {
        let mut q = Ingress::new(2, 64, vec![Some(Duration::from_millis(50)), None]);
        let pkt = || Packet::new(Buf::from(vec![0u8; 200]));
        let t0 = Instant::ZERO;
        for _ in 0..64 {
            assert!(q.push(0, t0, pkt(), 1.0 / 3.0));
            assert!(q.push(1, t0, pkt(), 2.0 / 3.0));
        }
        let later = t0 + Duration::from_millis(100);
        q.expire_all(later);
        assert_eq!((q.expired[0], q.queues[0].len(), q.len), (64, 0, 64));
        assert!(q.push(0, later, pkt(), 1.0 / 3.0));
        let order: Vec<u8> = (0..4).map(|_| q.pop().expect("queued").0).collect();
        assert!(
            order.contains(&0),
            "service 0 within the first pops: {order:?}"
        );
    }
}
