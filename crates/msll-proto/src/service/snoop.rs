//! Snoop: the TCP-aware scheme of Berkeley's Daedalus project, as ported by seed 004 from the ns-2
//! module (seed004-ch4 sec. 3.7, L763-L769; ns2-semantics.md sec. 3; seeds 000/001 "Snoop").
//!
//! ```text
//!                 base station (this service)                          wireless host (Default)
//!  IP --TCP data--> cache a copy (per connection, ring of 100) ---------> Raw frame --> IP
//!                   local retransmission: 2nd dup ACK, or own timer
//!  IP <--ACK------ [new ACK: free cache, RTT sample; dup ACK: maybe   <--- Raw frame <-- TCP ACK
//!                   retransmit locally and suppress]
//!  IP --TCP ACK---> [ELN bit when the data it asks for never crossed the wireless uplink; option]
//! ```
//!
//! Snoop runs only at the base station (seed004-ch4 sec. 3.0.3, AMB-7); [`super::SchemeConfig`]
//! builds a Default service for `Role::Host`, and Snoop's frames are Default frames (one header
//! byte, scheme bits 0), so "Snoop adds no header or control frames of its own" (sec. 3.0.1).
//! It parses the real IPv4 + TCP headers in each packet. Anything it cannot parse as TCP is
//! forwarded untouched, as Default would.
//!
//! Sequence numbers: the simulator's TCP numbers bytes and advances `seq` by the segment size per
//! packet while the payload is shorter (headers are inside the packet), so this module never
//! derives sequence numbers from lengths; it only compares them (modulo 2^32). An ACK carries the
//! next expected byte: ns-2's "ACK n" (packets <= n received) is our "ACK A" with A = (n+1) x
//! segment, so ns-2's `seqno <= lastAck_` reads `seq < last_ack`, `seqno == lastAck_ + 1` reads
//! `seq == last_ack`, and ns-2's initial `lastAck_ = -1` is `last_ack` = the first data byte seen
//! (0 in the simulator; any initial sequence number with real TCP).
//!
//! Algorithm (ns2-semantics.md sec. 3.2-3.4, the ns-2 module the thesis ported "intact", L769):
//! * data towards the wireless host: cached unless already acknowledged; a copy of a cached
//!   sequence number is a sender retransmission (`sender_rxmit`); at most `buffer` (100) packets,
//!   then packets pass uncached; data is never delayed or dropped;
//! * new ACK from the wireless host: free the acknowledged copies, take an RTT sample from the last
//!   freed copy's (re)send time, restart the timer for the new oldest copy, forward the ACK;
//! * duplicate ACK for a packet we hold: the first one passes (`RTX_THRESH` = 1, via a counter that
//!   alternates between "pass" and "act", shared by all connections of this Snoop as the ns-2
//!   function-static is); the next one triggers a local retransmission of the oldest copy and is
//!   suppressed, as are the dup ACKs still expected from packets already in flight behind it;
//!   dup ACKs for packets the TCP sender is already retransmitting pass;
//! * own timer `max(srtt + 4 rttvar, tick)` for the oldest copy: on expiry, retransmit it if it is
//!   the packet the wireless host asks for; at most 10 local retransmissions per packet
//!   (`local_timer = false`, a sensitivity option that is not ns-2, keeps the timer but makes its
//!   expiry retransmit nothing: only dup ACKs trigger local recovery);
//! * ELN (option, off: the thesis's Reno senders ignored it, seed004-ch4 sec. 3.7 [Inference]):
//!   a duplicate ACK, or an ACK leaving a gap, going down to a wireless TCP sender gets the ELN mark
//!   (the TCP ECE bit, 0x40) when the byte it asks for never arrived over the wireless uplink.
//!
//! Choices (ns2-semantics.md sec. 3.6): state per TCP connection (ns-2.1b4, the dissertation's
//! version) by default, per host pair (ns-2 >= 2.1b6) as an option. Local retransmissions are
//! always allowed (ns-2.35's `snoop_qlong()`; 2.1b4's "interface queue <= 3/4 full" test and the
//! "cache only when the queue is not nearly full" test are not modelled: this service cannot see
//! the IP queue above the classifier). Send times are taken when a packet reaches Snoop, as in
//! ns-2, where Snoop sits above the interface queue: queueing at the base station is part of the
//! RTT sample, and the adaptive timeout absorbs it (unlike the fixed GBN/SR timers, which start at
//! transmission). Local retransmissions join the scheduler's FIFO tail ("no priority").

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::buf::Buf;
use serde::{Deserialize, Serialize};

use super::{Outbox, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{Duration, Instant, Timer};
use crate::wire::ip::{IpProto, Ipv4Repr, TcpRepr};
use crate::wire::Frame;

/// Scheme bits of a Snoop frame: those of a Default frame, so the wireless host's Default service
/// reads them (seed004-ch4 sec. 3.0.1: Snoop adds nothing beyond the 1-byte identifier).
const SNOOP_BITS: u8 = 0x0;
/// `SNOOP_MAXWIND`: cached packets per connection (ns-2 `maxbufs_` 0 -> 100).
pub const DEFAULT_BUFFER: u16 = 100;
/// `SNOOP_MAX_RXMIT`: local retransmissions of one cached packet.
pub const DEFAULT_MAX_RXMIT: u32 = 10;
/// `RTX_THRESH`: duplicate ACKs let through before the first local retransmission.
const RTX_THRESH: i64 = 1;
/// `snoopTick_`: minimum local timeout, 0.1 s.
pub const DEFAULT_TICK: Duration = Duration::from_millis(100);
/// Initial `srtt_` / `rttvar_` (initial timeout 1.1 s) and the EWMA gain `g_`.
const INITIAL_SRTT: f64 = 0.1;
const INITIAL_RTTVAR: f64 = 0.25;
const GAIN: f64 = 0.125;
/// Connections kept before idle ones (empty cache, no timer) are forgotten.
const MAX_IDLE_CONNS: usize = 1024;
/// A connection untouched this long is forgotten too, cache and all, once `MAX_IDLE_CONNS` is
/// reached: a TCP sender silent for 10 minutes has given up (ns-2 never forgets, but its runs see a
/// few connections; a tunnel sees every connection its hosts ever open).
const STALE_AFTER: Duration = Duration::from_secs(600);
/// Hard bound on tracked connections: past it the least recently active one is forgotten, so
/// memory stays below ~`MAX_CONNS` x `buffer` packets whatever the traffic.
const MAX_CONNS: usize = 4 * MAX_IDLE_CONNS;
/// Wireless-uplink data sequence numbers remembered per connection for ELN.
const WL_SEEN_MAX: usize = 256;
/// ELN mark: the TCP ECE bit (see `wire::ip::TcpRepr::ECE`).
const ELN_BIT: u8 = TcpRepr::ECE;

/// What one Snoop state covers (ns2-semantics.md sec. 3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SnoopState {
    /// One state per TCP connection (addresses and ports): ns-2.1b4, the dissertation (L765).
    #[default]
    Connection,
    /// One state per (wired host, wireless host) address pair, shared by all their connections:
    /// ns-2 since 2.1b6 (32-bit addressing), e.g. ns-2.35.
    HostPair,
}

/// How Snoop reads segments (`SnoopConfig::segments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SnoopSegments {
    /// As ns-2 does, whose TCP agents are one-way (ns2-semantics.md sec. 3): a segment with
    /// payload is data and its ACK field means nothing, a pure ACK is an ACK, and a duplicate ACK
    /// is one that repeats the last ACK number. The simulator's agents send exactly such
    /// segments (data carries ACK 0).
    #[default]
    Ns2,
    /// As real TCP stacks send them (the tunnel; review, session 46): the ACK field of a data
    /// segment from the wireless host also acknowledges (a piggybacked ACK, or a SYN-ACK,
    /// frees the cache), but only a pure ACK that repeats both the ACK number and the
    /// advertised window counts as a duplicate (RFC 5681: a window update is not one), and a
    /// RST from either end forgets the connection (its cached packets were resent up to
    /// `max_rxmit` times to a closed connection).
    Real,
}

impl SnoopSegments {
    pub fn is_ns2(&self) -> bool {
        *self == SnoopSegments::Ns2
    }
}

/// Resolved Snoop parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SnoopConfig {
    pub state: SnoopState,
    /// Cached packets per state, at least 1.
    pub buffer: u16,
    /// Minimum local retransmission timeout (`snoopTick_`).
    pub tick: Duration,
    /// Local retransmissions per cached packet.
    pub max_rxmit: u32,
    /// Mark ACKs towards a wireless TCP sender with ELN.
    pub eln: bool,
    /// Retransmit the oldest cached packet when the per-connection timer expires (ns-2's
    /// `SnoopRxmitHandler`, on by default). Off is a sensitivity option, not ns-2: the timer still
    /// runs (and is re-armed and cancelled as usual), but its expiry retransmits nothing, so only
    /// duplicate ACKs trigger local recovery (docs/www.md "Snoop on WWW").
    pub local_timer: bool,
    pub segments: SnoopSegments,
}

impl Default for SnoopConfig {
    /// The ns-2 defaults (`tcl/lan/ns-ll.tcl`, ns2-semantics.md sec. 3.1). Snoop "estimates such
    /// values itself" (L777), so nothing is derived from the link.
    fn default() -> Self {
        SnoopConfig {
            state: SnoopState::Connection,
            buffer: DEFAULT_BUFFER,
            tick: DEFAULT_TICK,
            max_rxmit: DEFAULT_MAX_RXMIT,
            eln: false,
            local_timer: true,
            segments: SnoopSegments::Ns2,
        }
    }
}

/// Key of a state: (wired-side address, port, wireless-side address, port); ports are 0 for
/// `SnoopState::HostPair`.
type Key = ([u8; 4], u16, [u8; 4], u16);

/// Modulo-2^32 "a < b".
fn lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// Set the ELN bit in the TCP flags byte at `flags_at` and keep the TCP checksum valid (RFC
/// 1624; before, a real host dropped the marked ACK: review, session 41). The flags byte is the
/// low half of the TCP header's 16-bit word at offset 12; the checksum is at offset 16.
fn mark_eln(v: &mut [u8], flags_at: usize) {
    let word = flags_at - 1;
    let ck_at = flags_at + 3;
    if v.len() < ck_at + 2 || v[flags_at] & ELN_BIT != 0 {
        return;
    }
    let old = u16::from_be_bytes([v[word], v[flags_at]]);
    v[flags_at] |= ELN_BIT;
    let new = u16::from_be_bytes([v[word], v[flags_at]]);
    let ck = u16::from_be_bytes([v[ck_at], v[ck_at + 1]]);
    let ck = crate::wire::ip::checksum_update(ck, old, new);
    v[ck_at..ck_at + 2].copy_from_slice(&ck.to_be_bytes());
}

/// The TCP fields Snoop reads from a packet.
#[derive(Debug, Clone, Copy)]
struct TcpInfo {
    src: ([u8; 4], u16),
    dst: ([u8; 4], u16),
    seq: u32,
    ack: u32,
    /// Carries data (payload, SYN or FIN) rather than being a pure ACK.
    data: bool,
    /// The TCP flags byte.
    flags: u8,
    /// Offset of the TCP flags byte in the packet.
    flags_at: usize,
    /// The advertised window (`SnoopSegments::Real` tells window updates from duplicates).
    window: u16,
}

fn parse_tcp(p: &[u8]) -> Option<TcpInfo> {
    let ip = Ipv4Repr::parse(p).ok()?;
    // A fragment's payload is not a TCP header (a later fragment's bytes read as one made a
    // junk connection whose one packet the timer resent 10 times: review, session 41).
    if ip.protocol != IpProto::TCP || crate::wire::ip::is_fragment(p) {
        return None;
    }
    let total = ip.total_len as usize;
    let end = if total >= ip.header_len {
        total.min(p.len())
    } else {
        p.len()
    };
    let tcp = TcpRepr::parse(p.get(ip.header_len..end)?).ok()?;
    let hdr = ip.header_len + tcp.header_len;
    if hdr > end {
        return None;
    }
    Some(TcpInfo {
        src: (ip.src, tcp.src_port),
        dst: (ip.dst, tcp.dst_port),
        seq: tcp.seq,
        ack: tcp.ack,
        data: end > hdr || tcp.flags & (TcpRepr::SYN | TcpRepr::FIN) != 0,
        flags: tcp.flags,
        flags_at: ip.header_len + 13,
        window: tcp.window,
    })
}

struct Cached {
    seq: u32,
    packet: Buf,
    num_rxmit: u32,
    sender_rxmit: bool,
    snd_time: Instant,
}

/// What the ACK handler decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Propagate,
    Suppress,
}

/// Whether an insertion touched the oldest cached packet (ns-2's `SNOOP_TAIL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inserted {
    Other,
    Tail,
}

/// State of one connection (or host pair).
struct Conn {
    alive: bool,
    /// Cached packets in ascending sequence order; the front is ns-2's tail (oldest unACKed).
    cache: VecDeque<Cached>,
    full: bool,
    last_seen: Option<u32>,
    /// Next byte expected by the wireless host, from the highest ACK seen; before any ACK, the
    /// first data byte seen (ns-2's `lastAck_ = -1` when packets start at 0; real TCP starts
    /// at a random ISN).
    last_ack: u32,
    /// ns-2's `expNextAck_` as an offset from the oldest cached packet: 0 or 1.
    exp_next_off: usize,
    exp_dupacks: i64,
    srtt: f64,
    rttvar: f64,
    timer: Timer,
    // wireless host as TCP sender (ELN bookkeeping)
    wl_seen: BTreeSet<u32>,
    wl_last_ack: Option<u32>,
    /// Last time a packet of this connection passed (for forgetting abandoned ones).
    last_active: Instant,
    /// `SnoopSegments::Real`: the window the last ACK from the wireless host advertised.
    last_window: Option<u16>,
}

impl Conn {
    fn new(now: Instant) -> Self {
        Conn {
            alive: false,
            cache: VecDeque::new(),
            full: false,
            last_seen: None,
            last_ack: 0,
            exp_next_off: 0,
            exp_dupacks: 0,
            srtt: INITIAL_SRTT,
            rttvar: INITIAL_RTTVAR,
            timer: Timer::default(),
            wl_seen: BTreeSet::new(),
            wl_last_ack: None,
            last_active: now,
            last_window: None,
        }
    }

    fn idle(&self) -> bool {
        self.cache.is_empty() && !self.timer.is_armed() && self.wl_seen.is_empty()
    }
}

/// The base-station end of a Snoop link.
pub struct Snoop {
    cfg: SnoopConfig,
    factor: f64,
    conns: BTreeMap<Key, Conn>,
    /// ns-2's function-static `thresh` in `snoop_ack`: shared by every connection (here: of this
    /// Snoop instance), alternating between letting a dup ACK through and acting on it.
    thresh: u8,
    /// The earliest armed connection timer, i.e. what `poll_timeout` answers. The endpoint asks
    /// after every packet and frame; a scan of every remembered connection there was 3 % of a
    /// multi-service WWW run (issue 8, session 14), so each handler updates this from the one
    /// connection it touched, and scans only when that connection held the minimum and moved it
    /// later, or when connections were forgotten.
    earliest: Option<Instant>,
    stats: ServiceStats,
}

impl Snoop {
    pub fn new(cfg: SnoopConfig) -> Self {
        Snoop {
            cfg: SnoopConfig {
                buffer: cfg.buffer.max(1),
                ..cfg
            },
            factor: 1.0,
            conns: BTreeMap::new(),
            thresh: 0,
            earliest: None,
            stats: ServiceStats::default(),
        }
    }

    pub fn config(&self) -> &SnoopConfig {
        &self.cfg
    }

    /// Connections (or host pairs) currently tracked.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    fn key(&self, wired: ([u8; 4], u16), wireless: ([u8; 4], u16)) -> Key {
        match self.cfg.state {
            SnoopState::Connection => (wired.0, wired.1, wireless.0, wireless.1),
            SnoopState::HostPair => (wired.0, 0, wireless.0, 0),
        }
    }

    /// The earliest deadline over all connections, by a scan (tests compare `poll_timeout` to it).
    pub(crate) fn scan_timeout(&self) -> Option<Instant> {
        self.conns.values().filter_map(|c| c.timer.deadline()).min()
    }

    /// Keep `earliest` right after the timer of one connection went from `old` to `new` (every
    /// other connection's timer unchanged).
    fn retimed(&mut self, old: Option<Instant>, new: Option<Instant>) {
        if old == new {
            return;
        }
        if old.is_some() && old == self.earliest && new.is_none_or(|n| Some(n) > old) {
            // It held the minimum (perhaps with others) and moved it later: look again.
            self.earliest = self.scan_timeout();
        } else if let Some(n) = new {
            if self.earliest.is_none_or(|e| n < e) {
                self.earliest = Some(n);
            }
        }
    }

    fn conn(&mut self, now: Instant, key: Key) -> &mut Conn {
        if self.conns.len() >= MAX_IDLE_CONNS && !self.conns.contains_key(&key) {
            // Forget finished connections (ns-2 keeps them forever; their state is empty) and
            // abandoned ones.
            self.conns
                .retain(|_, c| !c.idle() && now.saturating_since(c.last_active) < STALE_AFTER);
            if self.conns.len() >= MAX_CONNS {
                let oldest = self
                    .conns
                    .iter()
                    .min_by_key(|(_, c)| c.last_active)
                    .map(|(k, _)| *k);
                if let Some(k) = oldest {
                    self.conns.remove(&k);
                }
            }
            // A forgotten connection may have held the earliest timer.
            self.earliest = self.scan_timeout();
        }
        let c = self.conns.entry(key).or_insert_with(|| Conn::new(now));
        c.last_active = now;
        c
    }

    /// `max(srtt + 4 rttvar, tick)`, times the timer factor.
    fn timeout(cfg: &SnoopConfig, factor: f64, c: &Conn) -> Duration {
        let t = Duration::from_secs_f64((c.srtt + 4.0 * c.rttvar).max(0.0)).max(cfg.tick);
        super::scaled(t, factor)
    }

    fn forward(&mut self, packet: Buf, out: &mut Outbox) {
        let f = Frame::new(&[SNOOP_BITS], packet);
        let plen = f.len() - 1;
        SentKind::Data(plen).count(&mut self.stats, &f);
        out.send(f);
    }

    /// `snoop_data`: a TCP data packet going down to the wireless host.
    fn on_data_down(&mut self, now: Instant, key: Key, seq: u32, syn: bool, packet: &Buf) {
        let (cfg, factor) = (self.cfg, self.factor);
        let c = self.conn(now, key);
        let old = c.timer.deadline();
        Self::data_down(&cfg, factor, c, now, seq, syn, packet);
        let new = c.timer.deadline();
        self.retimed(old, new);
    }

    fn data_down(
        cfg: &SnoopConfig,
        factor: f64,
        c: &mut Conn,
        now: Instant,
        seq: u32,
        syn: bool,
        packet: &Buf,
    ) {
        // ns-2's TCP starts every transfer at 0 (2.35's SYN too); a real TCP starts at a random
        // ISN with a SYN, so a SYN also starts a new transfer on the same addresses and ports
        // (before, half of such new transfers read as "already acknowledged" and got no local
        // recovery: review, session 41).
        let fresh = seq == 0 || syn;
        if c.alive && fresh {
            // ns-2 reuses an agent after `reset`: a new transfer starts; estimates are kept.
            c.cache.clear();
            c.full = false;
            c.last_seen = None;
            c.exp_dupacks = 0;
            c.exp_next_off = 0;
            c.timer.cancel();
        }
        if !c.alive || fresh {
            c.last_ack = seq;
        }
        c.alive = true;
        if c.full {
            c.last_seen = Some(
                c.last_seen
                    .map_or(seq, |s| if lt(s, seq) { seq } else { s }),
            );
            return;
        }
        let r = Self::insert(cfg, c, now, seq, packet);
        if r == Inserted::Tail {
            c.timer.cancel();
        }
        if !c.timer.is_armed() && !c.cache.is_empty() {
            c.timer.set(now + Self::timeout(cfg, factor, c));
        }
    }

    /// ns-2 `snoop_insert`: keep the cache in sequence order.
    fn insert(cfg: &SnoopConfig, c: &mut Conn, now: Instant, seq: u32, packet: &Buf) -> Inserted {
        if lt(seq, c.last_ack) {
            return Inserted::Other; // already acknowledged: not cached
        }
        let entry = Cached {
            seq,
            packet: packet.clone(),
            num_rxmit: 0,
            sender_rxmit: false,
            snd_time: now,
        };
        let at = if c.cache.is_empty() || c.last_seen.is_none_or(|s| lt(s, seq)) {
            c.cache.len()
        } else if lt(seq, c.cache[0].seq) {
            0
        } else {
            match c.cache.iter().position(|x| !lt(x.seq, seq)) {
                Some(i) if c.cache[i].seq == seq => {
                    // The TCP sender retransmitted a packet we hold.
                    let x = &mut c.cache[i];
                    x.num_rxmit = 0;
                    x.sender_rxmit = true;
                    x.snd_time = now;
                    return Inserted::Tail;
                }
                Some(i) => i,
                None => c.cache.len(),
            }
        };
        c.cache.insert(at, entry);
        if c.cache.len() >= cfg.buffer as usize {
            c.full = true;
        }
        if c.last_seen.is_some_and(|s| lt(seq, s)) {
            // Out of order or a sender retransmission of an uncached packet.
            if at == 0 {
                c.cache[0].sender_rxmit = true;
                c.cache[0].num_rxmit = 0;
            }
            c.exp_next_off = 0;
            Inserted::Tail
        } else {
            c.last_seen = Some(seq);
            Inserted::Other
        }
    }

    /// ns-2 `snoop_rxmit` of the oldest cached packet.
    fn local_rxmit(
        cfg: &SnoopConfig,
        factor: f64,
        c: &mut Conn,
        now: Instant,
        stats: &mut ServiceStats,
        out: &mut Outbox,
    ) -> Verdict {
        let Some(t) = c.cache.front_mut() else {
            return Verdict::Propagate;
        };
        if t.num_rxmit >= cfg.max_rxmit {
            return Verdict::Propagate;
        }
        t.snd_time = now;
        t.num_rxmit += 1;
        let f = Frame::new(&[SNOOP_BITS], t.packet.clone());
        SentKind::Retransmission.count(stats, &f);
        out.send(f);
        c.timer.set(now + Self::timeout(cfg, factor, c));
        Verdict::Suppress
    }

    /// Forget a connection (`SnoopSegments::Real`: it was reset).
    fn forget(&mut self, key: Key) {
        if let Some(c) = self.conns.remove(&key) {
            self.retimed(c.timer.deadline(), None);
        }
    }

    /// `snoop_ack`: an ACK from the wireless host. Returns whether to deliver it to IP.
    /// `real`: with `SnoopSegments::Real`, whether the segment is a pure ACK, and its window.
    fn on_ack_up(
        &mut self,
        now: Instant,
        key: Key,
        ack: u32,
        real: Option<(bool, u16)>,
        out: &mut Outbox,
    ) -> Verdict {
        let Some(c) = self.conns.get_mut(&key).filter(|c| c.alive) else {
            return Verdict::Propagate; // no data seen for this connection
        };
        let old = c.timer.deadline();
        let v = Self::ack_up(
            &self.cfg,
            self.factor,
            &mut self.thresh,
            &mut self.stats,
            c,
            now,
            ack,
            real,
            out,
        );
        let new = c.timer.deadline();
        self.retimed(old, new);
        v
    }

    #[allow(clippy::too_many_arguments)]
    fn ack_up(
        cfg: &SnoopConfig,
        factor: f64,
        thresh: &mut u8,
        stats: &mut ServiceStats,
        c: &mut Conn,
        now: Instant,
        ack: u32,
        real: Option<(bool, u16)>,
        out: &mut Outbox,
    ) -> Verdict {
        c.last_active = now;
        if lt(ack, c.last_ack) {
            return Verdict::Propagate; // an old ACK, out of order
        }
        if let Some((pure, window)) = real {
            // RFC 5681's duplicate: no data, the same ACK number and the same window.
            let same_window = c.last_window.replace(window) == Some(window);
            if ack == c.last_ack && !(pure && same_window) {
                return Verdict::Propagate;
            }
        }
        if ack == c.last_ack {
            // Duplicate ACK.
            let Some((t_seq, t_sender_rxmit, t_num_rxmit)) = c
                .cache
                .front()
                .map(|t| (t.seq, t.sender_rxmit, t.num_rxmit))
            else {
                return Verdict::Propagate;
            };
            if lt(ack, t_seq) {
                return Verdict::Propagate; // we do not hold the packet it asks for
            }
            if c.exp_dupacks == 0 {
                if *thresh == 0 {
                    *thresh = 1;
                    return Verdict::Propagate; // RTX_THRESH = 1: the first one passes
                }
                *thresh = 0;
                if t_sender_rxmit {
                    return Verdict::Propagate; // the TCP sender is already recovering
                }
                let first = t_num_rxmit == 0;
                // ns-2 counts `bufhead_ - expNextAck_` round its ring of `SNOOP_MAXWIND` (here
                // `buffer`) slots: a full ring with `expNextAck_` at the tail counts 0, not the
                // ring's size, so every later dup ACK passes (review, session 41).
                let ahead = (c.cache.len() as i64 - c.exp_next_off as i64)
                    .rem_euclid(i64::from(cfg.buffer));
                c.exp_dupacks = ahead - (RTX_THRESH + 1);
                c.exp_next_off = 1;
                if first {
                    return Self::local_rxmit(cfg, factor, c, now, stats, out);
                }
                Verdict::Propagate
            } else if c.exp_dupacks > 0 {
                // Caused by packets sent before the local retransmission arrived: hide them.
                c.exp_dupacks -= 1;
                Verdict::Suppress
            } else if c.exp_dupacks == -1 {
                if t_num_rxmit < 2 {
                    return Self::local_rxmit(cfg, factor, c, now, stats, out);
                }
                Verdict::Propagate
            } else {
                Verdict::Propagate
            }
        } else {
            // New ACK: free what it acknowledges, sample the RTT, restart the timer.
            let mut sent = None;
            while c.cache.front().is_some_and(|t| lt(t.seq, ack)) {
                sent = c.cache.pop_front().map(|t| t.snd_time);
            }
            if c.cache.len() < cfg.buffer as usize {
                c.full = false;
            }
            if c.cache.is_empty() {
                c.timer.cancel();
            } else {
                c.timer.set(now + Self::timeout(cfg, factor, c));
            }
            // ns-2's `snoop_rtt` takes only positive samples: an ACK that frees a packet at the
            // instant it was (re)sent leaves the estimate alone (review, session 41).
            if let Some(rtt) = sent
                .map(|s| now.saturating_since(s).as_secs_f64())
                .filter(|&r| r > 0.0)
            {
                // ns2-semantics.md sec. 3.4, as coded in ns-2: the new sample weighs 1 - g.
                c.srtt = GAIN * c.srtt + (1.0 - GAIN) * rtt;
                let delta = (rtt - c.srtt).abs();
                c.rttvar = if c.rttvar != 0.0 {
                    GAIN * delta + (1.0 - GAIN) * c.rttvar
                } else {
                    delta
                };
            }
            c.exp_dupacks = 0;
            c.exp_next_off = 0;
            c.last_ack = ack;
            Verdict::Propagate
        }
    }

    /// Data from a wireless TCP sender going up: remember which sequence numbers crossed the link.
    fn on_data_up(&mut self, now: Instant, key: Key, seq: u32) {
        if !self.cfg.eln {
            // Only ELN reads these sequence numbers, and only ELN's ACK path prunes them:
            // without it they would keep every connection "active" forever.
            return;
        }
        let c = self.conn(now, key);
        if c.wl_last_ack.is_some_and(|a| lt(seq, a)) {
            return;
        }
        c.wl_seen.insert(seq);
        while c.wl_seen.len() > WL_SEEN_MAX {
            // The oldest in sequence order, modulo 2^32: after a wrap the numerically smallest
            // are among the newest (review, session 46: they were evicted, and an ACK asking
            // for one that had crossed got a false ELN mark). ELN only; 257 entries.
            let oldest = c
                .wl_seen
                .iter()
                .copied()
                .min_by_key(|&s| s.wrapping_sub(seq) as i32)
                .expect("over the bound: not empty");
            c.wl_seen.remove(&oldest);
        }
    }

    /// `snoop_wired_ack`: an ACK going down to a wireless TCP sender. True if it gets the ELN mark.
    fn on_ack_down(&mut self, key: Key, ack: u32) -> bool {
        let Some(c) = self.conns.get_mut(&key) else {
            return false;
        };
        if c.wl_last_ack.is_some_and(|a| lt(ack, a)) {
            return false; // old ACK
        }
        let dup = c.wl_last_ack == Some(ack);
        c.wl_last_ack = Some(ack);
        // Forget data below the ACK (modulo-aware: the set is small).
        c.wl_seen.retain(|&s| !lt(s, ack));
        let never_seen = !c.wl_seen.contains(&ack);
        let gap = c.wl_seen.iter().any(|&s| lt(ack, s));
        never_seen && (dup || gap)
    }
}

impl Service for Snoop {
    fn handle_packet(&mut self, now: Instant, packet: Packet, out: &mut Outbox) {
        self.stats.packets_in += 1;
        let bytes = packet.into_bytes();
        match parse_tcp(&bytes) {
            Some(t) if t.flags & TcpRepr::RST != 0 && !self.cfg.segments.is_ns2() => {
                // The wired end reset the connection: nothing cached is wanted any more.
                let key = self.key(t.src, t.dst);
                self.forget(key);
                self.forward(bytes, out);
            }
            Some(t) if t.data => {
                // Towards the wireless host: src is the wired end.
                let key = self.key(t.src, t.dst);
                self.on_data_down(now, key, t.seq, t.flags & TcpRepr::SYN != 0, &bytes);
                self.forward(bytes, out);
            }
            Some(t) if self.cfg.eln => {
                // A pure ACK towards a wireless TCP sender.
                let key = self.key(t.src, t.dst);
                if self.on_ack_down(key, t.ack) {
                    let mut v = bytes.to_vec();
                    mark_eln(&mut v, t.flags_at);
                    self.forward(Buf::from(v), out);
                } else {
                    self.forward(bytes, out);
                }
            }
            _ => self.forward(bytes, out),
        }
    }

    fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox) {
        self.stats.frames_received += 1;
        let body = match frame.into_payload_from(1) {
            Ok(b) => b,
            Err(_) => {
                self.stats.malformed_frames += 1;
                return;
            }
        };
        let verdict = match parse_tcp(&body) {
            // Up from the wireless host: dst is the wired end. Only a segment with the ACK
            // flag and no RST is an ACK (ns-2 classifies by packet type): a RST's ack field
            // may be anything, and took as a new ACK it emptied the cache (review, session 41).
            Some(t) if t.flags & TcpRepr::RST != 0 && !self.cfg.segments.is_ns2() => {
                // The wireless host reset the connection.
                let key = self.key(t.dst, t.src);
                self.forget(key);
                Verdict::Propagate
            }
            Some(t) if !t.data && t.flags & (TcpRepr::ACK | TcpRepr::RST) == TcpRepr::ACK => {
                let key = self.key(t.dst, t.src);
                let real = (!self.cfg.segments.is_ns2()).then_some((true, t.window));
                self.on_ack_up(now, key, t.ack, real, out)
            }
            Some(t) if t.data => {
                let key = self.key(t.dst, t.src);
                if !self.cfg.segments.is_ns2() && t.flags & TcpRepr::ACK != 0 {
                    // A piggybacked ACK (or a SYN-ACK) acknowledges too; as it carries data,
                    // it is never a duplicate and always delivered.
                    let _ = self.on_ack_up(now, key, t.ack, Some((false, t.window)), out);
                }
                self.on_data_up(now, key, t.seq);
                Verdict::Propagate
            }
            Some(_) | None => Verdict::Propagate,
        };
        match verdict {
            Verdict::Propagate => {
                self.stats.packets_delivered += 1;
                out.deliver(Packet::new(body));
            }
            Verdict::Suppress => self.stats.acks_suppressed += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        let (cfg, factor) = (self.cfg, self.factor);
        for c in self.conns.values_mut() {
            if !c.timer.poll_expired(now) {
                continue;
            }
            if !cfg.local_timer {
                // Sensitivity option: the expiry is bookkeeping only (the timer is now disarmed,
                // and the next new data or ACK re-arms it as usual).
                continue;
            }
            // Retransmit the oldest copy only if it is what the wireless host asks for.
            if c.cache.front().is_some_and(|t| t.seq == c.last_ack)
                && Self::local_rxmit(&cfg, factor, c, now, &mut self.stats, out)
                    == Verdict::Suppress
            {
                c.exp_next_off = 1;
            }
        }
        self.earliest = self.scan_timeout();
    }

    fn poll_timeout(&self) -> Option<Instant> {
        debug_assert_eq!(self.earliest, self.scan_timeout());
        self.earliest
    }

    fn set_timer_factor(&mut self, factor: f64) {
        self.factor = factor;
    }

    fn stats(&self) -> ServiceStats {
        self.stats
    }

    fn requires_fifo(&self) -> bool {
        // Default frames both ways; a reordered TCP segment or ACK is TCP's to sort out (at worst
        // a local retransmission or a suppressed duplicate ACK), never a link-layer duplicate.
        false
    }

    fn name(&self) -> &'static str {
        "snoop"
    }

    /// ns-2's Snoop sits above the interface queue: its local retransmissions join IP's packets
    /// in the one DropTail queue (ns2-semantics.md sec. 3), so they hold IP back here too.
    fn frames_share_ip_pacing(&self) -> bool {
        true
    }
}
