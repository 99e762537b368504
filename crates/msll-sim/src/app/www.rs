//! WWW browsing over TCP Reno: Mah's empirical HTTP model driven like ns-2's HTTP module
//! (`tcl/http/http.tcl`, class `Http`), as used by seed 004 ch. 4 (1.2) and seeds 000/001.
//!
//! ```text
//!   client (wireless host, last node)                      server (first node)
//!   pair i: req_src  --- request data ------------------->  req_sink
//!           rep_sink <-- reply data ----------------------  rep_src
//! ```
//!
//! One [`WwwApp`] owns `max_connections` (4) pairs of one-way TCP connections, created once and
//! reused for the whole run as ns-2 does (ns2-semantics.md 7.3); before every transfer the
//! sender and its sink are `reset` (non-persistent HTTP, `phttp_ 0`), so every request and reply
//! starts from the initial window and the initial RTO with no RTT knowledge. The app spans both
//! nodes: inputs say at which side a packet arrived, outputs say from which side a packet leaves.
//!
//! Event sequence (ns2-semantics.md 7.4), one page (transaction) at a time:
//! 1. `start`: draw the request length, send it on pair 0.
//! 2. `done_request(i)` -- the *client's* sender i got the ACK of its last request packet: the
//!    server immediately sends the reply on pair i (page, or one embedded object; both sizes
//!    from the reply distribution). The reply therefore starts one ACK latency after the request
//!    arrived, a quirk of the module that the seeds' numbers contain.
//! 3. `done_reply(i)` -- the *server's* sender i has every reply packet ACKed. After the page,
//!    draw the number of objects n and request up to `max_connections` of them in parallel on
//!    pairs 0, 1, 2, 3; after an object, request the next one (if any) on the same pair.
//! 4. When n objects and the page have been received, the transaction is complete; the next
//!    one starts after the think time (0 in the seeds, L721), in a new event at the same instant.
//!
//! Choices where the specification leaves a gap:
//! * Requests are `ceil(len / segment_size)` full-size packets, not ns-2's single packet of the
//!   request's length (seed004-ch4 1.2 AMBIGUOUS, recommended (b): the seeds force every packet
//!   to the link's frame size, and a 337-byte packet would not fit a 50-byte Cellular frame).
//!   Replies are `ceil(len / segment_size)` packets as in ns-2. A drawn length <= 0 becomes
//!   1000 bytes, as in ns-2 (the CDFs contain zero-length requests and replies).
//! * Connections ([`Connections`], default `Ns2`): as ns-2 did, the pairs' agents are reused and
//!   `reset` before every transfer, on fixed ports. With the dissertation's ns-2.1b4 TCP this
//!   keeps `rtt_seq_` and the rtx timer across transfers (ns2-semantics.md 1.3 (a)), so a reply
//!   longer than an earlier one on the same pair takes its first RTT sample from the *earlier*
//!   transfer's send time: a huge RTO, and a long stall if a packet of that transfer is lost.
//!   Packets of a previous transfer still in flight are processed by the new one (1.3 (b); 2.1b4
//!   has no filter). With a TCP whose `reset` is 2.35's (`full_reset`), every transfer gets new
//!   ports instead, which drops stale packets as 2.35's `lastreset_` filter does. This artefact
//!   matters: on WLAN/LAN1 (10 replications) it makes Default 1.4-3.3x slower than with a fresh
//!   connection per transfer, and the RLP-over-Default gains become 338-5680 % (levels 1-4)
//!   against the dissertation's 465-4860 % (C50), versus 203-1769 % with fresh connections.
//!   `Connections::New` (a brand-new connection per transfer, what a real client gets) and
//!   `Ns2NewPorts` are available for comparison. Reusing agents costs no allocation; `New`
//!   replaces a sender and sink per transfer, which is cheap too.
//! * Metrics count reply bytes as drawn (page + objects, after the <= 0 -> 1000 rule) of
//!   transactions completed by `stop` (seed004-ch4 4 AMBIGUOUS 13, recommended); the packet
//!   variant (`reply_packets * segment_size`) is kept too. Throughput time runs from the first
//!   transaction's start to the end of the last completed transaction (L725).
//! * Object latency: from issuing an object's (or the page's) request to `done_reply`, the
//!   ns-2 event that lets the client proceed.

use msll_proto::{Duration, Instant, Packet};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::app::http_dist::{HttpVariable, MahCdf};
use crate::rng::SimRng;
use crate::tcp::{parse_segment, FlowAddr, TcpConfig, TcpConfigError, TcpSender, TcpSink};

/// Where a packet enters or leaves the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The browser (the wireless host).
    Client,
    /// The web server.
    Server,
}

/// User think time between transactions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThinkTime {
    /// A constant, seconds (the seeds: 0, L721).
    Constant(f64),
    /// Mah's `HttpThinkTime.cdf` (ns-2's `rvClientTime_` when the example script enables it).
    Mah,
}

impl Default for ThinkTime {
    fn default() -> Self {
        ThinkTime::Constant(0.0)
    }
}

/// How a transfer gets its TCP connection (the module docs discuss the choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Connections {
    /// ns-2's HTTP module: each pair's agents are reused with `reset` and keep their ports, so
    /// packets of a previous transfer still in flight reach the new one (ns-2.1b4 has no filter;
    /// ns2-semantics.md 1.3 (b)). With a 2.35-style `reset` (`TcpConfig::full_reset`) the
    /// ports change per transfer, emulating 2.35's `lastreset_` filter.
    #[default]
    Ns2,
    /// The agents are reused with `reset`, as in ns-2, but every transfer gets new ports, so
    /// stale packets are dropped (the effect of ns-2.35's `lastreset_` filter). What `reset`
    /// keeps (2.1b4: `rtt_seq_` and the rtx timer) still carries over.
    Ns2NewPorts,
    /// A brand-new connection per transfer: initial TCP state (no RTT bookkeeping or timer
    /// carried over) and new ports, as a real non-persistent HTTP client gets.
    New,
}

/// Parameters of one browsing session.
#[derive(Debug, Clone, PartialEq)]
pub struct WwwParams {
    pub tcp: TcpConfig,
    /// ns-2 `maxConn_`: connection pairs used in parallel for embedded objects (4, L542).
    pub max_connections: usize,
    pub think_time: ThinkTime,
    pub connections: Connections,
    /// First transaction start.
    pub start: Instant,
    /// No transaction starts at or after `stop`, and only those completed by `stop` count.
    pub stop: Instant,
}

/// Addresses of the two ends and the port range the app may use (`span >= 2 * pairs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WwwAddressing {
    pub client: [u8; 4],
    pub server: [u8; 4],
    pub port_base: u16,
    pub port_span: u16,
}

impl WwwAddressing {
    pub fn owns_port(&self, port: u16) -> bool {
        port >= self.port_base && (port - self.port_base) < self.port_span
    }
}

/// Counters of a session. Times are seconds of simulated time.
#[derive(Debug, Clone, Default)]
pub struct WwwStats {
    /// Transactions (pages with all their objects) completed by `stop`.
    pub transactions: u64,
    /// Reply bytes (pages + objects) of those transactions.
    pub reply_bytes: u64,
    /// Reply packets of those transactions.
    pub reply_packets: u64,
    /// Embedded objects of those transactions (pages not included).
    pub objects: u64,
    /// Sum of their durations, seconds.
    pub transaction_time_s: f64,
    /// Start of the first transaction and end of the last completed one.
    pub first_start: Option<Instant>,
    pub last_done: Option<Instant>,
    /// Requests and replies issued (all, including an unfinished last transaction).
    pub requests: u64,
    pub replies: u64,
    pub request_bytes: u64,
    /// Latency of every completed page/object fetch: request issued -> reply fully ACKed.
    pub object_latency_s: Vec<f64>,
    /// Packets for this app's ports that belong to no current connection (previous
    /// transfers, unless `Connections::Ns2`).
    pub stale_packets: u64,
    /// TCP retransmission timeouts and retransmissions of all transfers.
    pub tcp_timeouts: u64,
    pub tcp_retransmissions: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    Request,
    Reply,
}

/// One connection pair, i.e. ns-2's (client agent, server sink) + (server agent, client sink).
#[derive(Debug)]
struct Pair {
    req_src: TcpSender,
    req_sink: TcpSink,
    rep_src: TcpSender,
    rep_sink: TcpSink,
    req_port: u16,
    rep_port: u16,
    /// A request / a reply is in progress on this pair (its sender is not done).
    req_active: bool,
    rep_active: bool,
    /// When the current request was issued (object latency).
    req_issued: Instant,
    /// Bytes and packets of the reply in progress.
    rep_bytes: u64,
    rep_packets: u64,
}

/// The page in progress (ns-2 `tStart`, `numGet`, `numPut`, `numImg`).
#[derive(Debug, Clone, Copy)]
struct Txn {
    start: Instant,
    num_get: u64,
    num_put: u64,
    num_img: u64,
    reply_bytes: u64,
    reply_packets: u64,
}

/// A WWW browsing session between one client and one server.
#[derive(Debug)]
pub struct WwwApp {
    p: WwwParams,
    addr: WwwAddressing,
    pairs: Vec<Pair>,
    req_len: HttpVariable,
    /// Page and object sizes: ns-2 uses one RV object for both (`rvImgLen_` = `rvRepLen_`).
    rep_len: HttpVariable,
    num_img: HttpVariable,
    think: Option<HttpVariable>,
    /// ns-2 draws `boot_time_` at every reset (1.3); here from the app's own stream.
    boot_rng: SimRng,
    next_port: u16,
    txn: Option<Txn>,
    next_start: Option<Instant>,
    stats: WwwStats,
}

/// Ports needed by `pairs` connection pairs with fixed ports.
pub fn ports_needed(pairs: usize) -> usize {
    2 * pairs
}

impl WwwApp {
    /// `stream(name)` gives the random stream for each variable ("req", "rep", "numimg",
    /// "think", "boot"), so the caller decides whether they repeat across replications.
    pub fn new(
        p: WwwParams,
        addr: WwwAddressing,
        mut stream: impl FnMut(&str) -> SimRng,
    ) -> Result<Self, TcpConfigError> {
        if p.max_connections == 0 {
            return Err(TcpConfigError::BadValue("max_connections"));
        }
        // More ports than the pairs hold at once: a rotating allocation (`alloc_port`) takes a
        // new port while the pair still holds its old one, so one free port keeps it finite
        // (review, session 36: a span of exactly `ports_needed` looped for ever).
        if (addr.port_span as usize) <= ports_needed(p.max_connections)
            || addr.port_base as usize + addr.port_span as usize > u16::MAX as usize + 1
        {
            return Err(TcpConfigError::BadValue("port range"));
        }
        let mut boot_rng = stream("boot");
        let mut pairs = Vec::with_capacity(p.max_connections);
        for i in 0..p.max_connections {
            let req_port = addr.port_base + 2 * i as u16;
            let rep_port = req_port + 1;
            let req = FlowAddr {
                src: addr.client,
                dst: addr.server,
                src_port: req_port,
                dst_port: req_port,
            };
            let rep = FlowAddr {
                src: addr.server,
                dst: addr.client,
                src_port: rep_port,
                dst_port: rep_port,
            };
            let b1 = boot(&mut boot_rng, &p.tcp);
            let b2 = boot(&mut boot_rng, &p.tcp);
            pairs.push(Pair {
                req_src: TcpSender::new(p.tcp.clone(), req, b1)?,
                req_sink: TcpSink::new(p.tcp.clone(), req)?,
                rep_src: TcpSender::new(p.tcp.clone(), rep, b2)?,
                rep_sink: TcpSink::new(p.tcp.clone(), rep)?,
                req_port,
                rep_port,
                req_active: false,
                rep_active: false,
                req_issued: Instant::ZERO,
                rep_bytes: 0,
                rep_packets: 0,
            });
        }
        let think = match p.think_time {
            ThinkTime::Mah => Some(HttpVariable::new(MahCdf::ThinkTime, stream("think"))),
            ThinkTime::Constant(_) => None,
        };
        Ok(WwwApp {
            next_port: ports_needed(p.max_connections) as u16,
            next_start: Some(p.start),
            req_len: HttpVariable::new(MahCdf::RequestLength, stream("req")),
            rep_len: HttpVariable::new(MahCdf::ReplyLength, stream("rep")),
            num_img: HttpVariable::new(MahCdf::Connections, stream("numimg")),
            think,
            boot_rng,
            pairs,
            addr,
            txn: None,
            stats: WwwStats::default(),
            p,
        })
    }

    pub fn addressing(&self) -> WwwAddressing {
        self.addr
    }

    pub fn stats(&self) -> &WwwStats {
        &self.stats
    }

    pub fn params(&self) -> &WwwParams {
        &self.p
    }

    /// TCP retransmission timeouts and retransmissions of all transfers so far.
    pub fn tcp_totals(&self) -> (u64, u64) {
        self.pairs.iter().fold(
            (self.stats.tcp_timeouts, self.stats.tcp_retransmissions),
            |(t, r), p| {
                let (a, b) = (p.req_src.stats(), p.rep_src.stats());
                (
                    t + a.timeouts + b.timeouts,
                    r + a.retransmissions + b.retransmissions,
                )
            },
        )
    }

    /// A packet for one of the app's ports arrived at `side`.
    pub fn handle_packet(
        &mut self,
        now: Instant,
        side: Side,
        pkt: &Packet,
        out: &mut Vec<(Side, Packet)>,
    ) {
        let Some(seg) = parse_segment(pkt) else {
            self.stats.stale_packets += 1;
            return;
        };
        let port = seg.flow.dst_port;
        // Ports are unique per pair and direction; the side tells data from ACKs.
        let found = self
            .pairs
            .iter()
            .position(|p| p.req_port == port || p.rep_port == port);
        let Some(i) = found else {
            self.stats.stale_packets += 1;
            return;
        };
        let pair = &mut self.pairs[i];
        match (side, port == pair.req_port) {
            // ACK of a request, at the client.
            (Side::Client, true) => {
                let was_done = pair.req_src.is_done();
                pair.req_src.handle_ack(now, pkt);
                drain(&mut pair.req_src, now, Side::Client, out);
                if !was_done && pair.req_src.is_done() {
                    pair.req_active = false;
                    self.done_request(now, i, out);
                }
            }
            // Reply data, at the client.
            (Side::Client, false) => {
                if let Some(ack) = pair.rep_sink.handle_data(now, pkt) {
                    out.push((Side::Client, ack));
                }
            }
            // Request data, at the server.
            (Side::Server, true) => {
                if let Some(ack) = pair.req_sink.handle_data(now, pkt) {
                    out.push((Side::Server, ack));
                }
            }
            // ACK of a reply, at the server.
            (Side::Server, false) => {
                let was_done = pair.rep_src.is_done();
                pair.rep_src.handle_ack(now, pkt);
                drain(&mut pair.rep_src, now, Side::Server, out);
                if !was_done && pair.rep_src.is_done() {
                    pair.rep_active = false;
                    self.done_reply(now, i, out);
                }
            }
        }
    }

    /// Timers: retransmissions, delayed ACKs, the next transaction's start.
    pub fn handle_timeout(&mut self, now: Instant, out: &mut Vec<(Side, Packet)>) {
        for pair in &mut self.pairs {
            if pair.req_active {
                pair.req_src.handle_timeout(now);
                drain(&mut pair.req_src, now, Side::Client, out);
            }
            if pair.rep_active {
                pair.rep_src.handle_timeout(now);
                drain(&mut pair.rep_src, now, Side::Server, out);
            }
            if let Some(a) = pair.req_sink.handle_timeout(now) {
                out.push((Side::Server, a));
            }
            if let Some(a) = pair.rep_sink.handle_timeout(now) {
                out.push((Side::Client, a));
            }
        }
        if self.next_start.is_some_and(|t| t <= now) {
            self.next_start = None;
            self.start(now, out);
        }
    }

    /// The earliest instant at which [`handle_timeout`](Self::handle_timeout) has work. The
    /// idle retransmit timers of finished senders are not polled: their expiries only set
    /// cwnd to 1 (ns2-semantics.md 1.10), which the `reset` before the next transfer undoes.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t = self.next_start;
        let mut min = |x: Option<Instant>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |c| c.min(x)));
            }
        };
        for p in &self.pairs {
            if p.req_active {
                min(p.req_src.poll_timeout());
            }
            if p.rep_active {
                min(p.rep_src.poll_timeout());
            }
            min(p.req_sink.poll_timeout());
            min(p.rep_sink.poll_timeout());
        }
        t
    }

    // ------------------------------------------------------------------ the HTTP module

    fn start(&mut self, now: Instant, out: &mut Vec<(Side, Packet)>) {
        if now >= self.p.stop {
            return;
        }
        self.txn = Some(Txn {
            start: now,
            num_get: 0,
            num_put: 0,
            num_img: 0,
            reply_bytes: 0,
            reply_packets: 0,
        });
        self.stats.first_start.get_or_insert(now);
        let len = self.req_len.draw_round();
        self.transmit(now, 0, Dir::Request, len, out);
    }

    fn done_request(&mut self, now: Instant, i: usize, out: &mut Vec<(Side, Packet)>) {
        if self.txn.is_none() {
            return; // a stale ACK completed a request of a finished page (Connections::Ns2)
        }
        // Page or object: the same distribution (rvImgLen_ is rvRepLen_), one draw per reply.
        let len = self.rep_len.draw_round();
        self.transmit(now, i, Dir::Reply, len, out);
    }

    fn done_reply(&mut self, now: Instant, i: usize, out: &mut Vec<(Side, Packet)>) {
        let Some(mut txn) = self.txn else {
            return;
        };
        let pair = &self.pairs[i];
        txn.reply_bytes += pair.rep_bytes;
        txn.reply_packets += pair.rep_packets;
        let latency = (now - pair.req_issued).as_secs_f64();
        let first_reply = txn.num_put == 0;
        if first_reply {
            txn.num_img = self.num_img.draw_round().max(0) as u64;
        }
        txn.num_put += 1;
        if now <= self.p.stop {
            self.stats.object_latency_s.push(latency);
        }
        if txn.num_put > txn.num_img {
            self.txn = Some(txn);
            self.done_page(now);
            return;
        }
        // After the page: this pair and pairs 1..max_connections-1; after an object: this pair.
        let ids: Vec<usize> = if first_reply {
            std::iter::once(i)
                .chain(1..self.p.max_connections)
                .collect()
        } else {
            vec![i]
        };
        for id in ids {
            txn.num_get += 1;
            if txn.num_get > txn.num_img {
                break;
            }
            let len = self.req_len.draw_round();
            self.transmit(now, id, Dir::Request, len, out);
        }
        self.txn = Some(txn);
    }

    fn done_page(&mut self, now: Instant) {
        let txn = self.txn.take().expect("page in progress");
        if now <= self.p.stop {
            let s = &mut self.stats;
            s.transactions += 1;
            s.reply_bytes += txn.reply_bytes;
            s.reply_packets += txn.reply_packets;
            s.objects += txn.num_img;
            s.transaction_time_s += (now - txn.start).as_secs_f64();
            s.last_done = Some(now);
        }
        let think = match (self.p.think_time, self.think.as_mut()) {
            (ThinkTime::Mah, Some(v)) => v.draw(),
            (ThinkTime::Constant(s), _) => s,
            (ThinkTime::Mah, None) => 0.0,
        };
        // ns-2 schedules `start` at now + think even for 0, i.e. in a later event.
        self.next_start = Some(now + Duration::from_secs_f64(think.max(0.0)));
    }

    /// ns-2 `transmit`: reset the pair's agent and sink (non-persistent), then send
    /// `ceil(len / segment_size)` packets; a length <= 0 becomes 1000 bytes.
    fn transmit(
        &mut self,
        now: Instant,
        i: usize,
        dir: Dir,
        len: i64,
        out: &mut Vec<(Side, Packet)>,
    ) {
        let bytes = if len <= 0 { 1000 } else { len as u64 };
        let seg = self.p.tcp.segment_size as u64;
        let npkt = bytes.div_ceil(seg);
        let boot = boot(&mut self.boot_rng, &self.p.tcp);
        let port = match self.p.connections {
            Connections::Ns2 if !self.p.tcp.full_reset => None,
            _ => Some(self.alloc_port()),
        };
        let pair = &mut self.pairs[i];
        let (src, sink, side) = match dir {
            Dir::Request => {
                self.stats.requests += 1;
                self.stats.request_bytes += bytes;
                pair.req_issued = now;
                pair.req_active = true;
                if let Some(p) = port {
                    pair.req_port = p;
                }
                (&mut pair.req_src, &mut pair.req_sink, Side::Client)
            }
            Dir::Reply => {
                self.stats.replies += 1;
                pair.rep_bytes = bytes;
                pair.rep_packets = npkt;
                pair.rep_active = true;
                if let Some(p) = port {
                    pair.rep_port = p;
                }
                (&mut pair.rep_src, &mut pair.rep_sink, Side::Server)
            }
        };
        let mut flow = src.flow();
        if let Some(p) = port {
            flow.src_port = p;
            flow.dst_port = p;
        }
        if self.p.connections == Connections::New {
            // Fresh agents; keep the old ones' counters.
            let st = src.stats();
            self.stats.tcp_timeouts += st.timeouts;
            self.stats.tcp_retransmissions += st.retransmissions;
            let cfg = src.config().clone();
            *src = TcpSender::new(cfg.clone(), flow, boot).expect("validated at creation");
            *sink = TcpSink::new(cfg, flow).expect("validated at creation");
        } else {
            src.set_flow(flow);
            sink.set_flow(flow);
            src.reset(now, boot);
            sink.reset(now);
        }
        src.send(now, npkt);
        drain(src, now, side, out);
    }

    /// Next port of the rotating range, skipping the ports in use by the current pairs.
    fn alloc_port(&mut self) -> u16 {
        loop {
            let p = self.addr.port_base + self.next_port;
            self.next_port = (self.next_port + 1) % self.addr.port_span;
            if !self
                .pairs
                .iter()
                .any(|q| q.req_port == p || q.rep_port == p)
            {
                return p;
            }
        }
    }
}

fn boot(rng: &mut SimRng, tcp: &TcpConfig) -> Duration {
    Duration::from_secs_f64(rng.random::<f64>() * tcp.tick)
}

fn drain(s: &mut TcpSender, now: Instant, side: Side, out: &mut Vec<(Side, Packet)>) {
    while let Some(p) = s.poll_transmit(now) {
        out.push((side, p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use crate::rng::Streams;

    /// A two-node pipe: each direction has `rate` and `delay`, FIFO transmission, optional loss
    /// of every k-th data packet in one direction.
    struct Pipe {
        app: WwwApp,
        rate_bps: f64,
        delay: Duration,
        busy_until: [Instant; 2],
        events: BinaryHeap<Reverse<(Instant, u64, usize)>>,
        in_flight: Vec<Option<(Side, Packet)>>,
        /// Source and destination TCP ports of every packet sent.
        ports: std::collections::BTreeSet<u16>,
        seq: u64,
    }

    impl Pipe {
        fn new(p: WwwParams, rate_bps: f64, delay_s: f64) -> Pipe {
            Pipe::with_ports(p, rate_bps, delay_s, 16384, 4096)
        }

        fn with_ports(p: WwwParams, rate_bps: f64, delay_s: f64, base: u16, span: u16) -> Pipe {
            let addr = WwwAddressing {
                client: [10, 0, 0, 2],
                server: [10, 0, 0, 1],
                port_base: base,
                port_span: span,
            };
            let streams = Streams::new(1, 0);
            let app = WwwApp::new(p, addr, |n| streams.fixed(&format!("www/{n}"))).unwrap();
            Pipe {
                app,
                rate_bps,
                delay: Duration::from_secs_f64(delay_s),
                busy_until: [Instant::ZERO; 2],
                events: BinaryHeap::new(),
                in_flight: Vec::new(),
                ports: Default::default(),
                seq: 0,
            }
        }

        fn send(&mut self, now: Instant, from: Side, pkt: Packet) {
            let d = if from == Side::Client { 0 } else { 1 };
            let start = self.busy_until[d].max(now);
            let tx = Duration::from_secs_f64(pkt.len() as f64 * 8.0 / self.rate_bps);
            self.busy_until[d] = start + tx;
            let to = if from == Side::Client {
                Side::Server
            } else {
                Side::Client
            };
            let b = pkt.as_slice();
            let ihl = ((b[0] & 0x0f) as usize) * 4;
            for at in [ihl, ihl + 2] {
                self.ports.insert(u16::from_be_bytes([b[at], b[at + 1]]));
            }
            self.in_flight.push(Some((to, pkt)));
            self.seq += 1;
            self.events.push(Reverse((
                start + tx + self.delay,
                self.seq,
                self.in_flight.len() - 1,
            )));
        }

        fn run(&mut self, until: Instant) {
            let mut out = Vec::new();
            let mut now = Instant::ZERO;
            loop {
                let wake = self.app.poll_timeout();
                let next_pkt = self.events.peek().map(|Reverse((t, _, _))| *t);
                let t = match (wake, next_pkt) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => break,
                };
                if t > until {
                    break;
                }
                now = now.max(t);
                if next_pkt == Some(t) {
                    let Reverse((_, _, k)) = self.events.pop().unwrap();
                    let (side, pkt) = self.in_flight[k].take().unwrap();
                    self.app.handle_packet(now, side, &pkt, &mut out);
                } else {
                    self.app.handle_timeout(now, &mut out);
                }
                for (side, p) in out.drain(..) {
                    self.send(now, side, p);
                }
            }
        }
    }

    fn params(seg: usize, stop_s: f64) -> WwwParams {
        WwwParams {
            tcp: TcpConfig::dissertation(seg),
            max_connections: 4,
            think_time: ThinkTime::Constant(0.0),
            connections: Connections::New,
            start: Instant::ZERO,
            stop: Instant::from_secs_f64(stop_s),
        }
    }

    #[test]
    fn transactions_follow_the_module_sequence() {
        let mut pipe = Pipe::new(params(1000, 200.0), 2e6, 0.003);
        pipe.run(Instant::from_secs_f64(200.0));
        let s = pipe.app.stats();
        assert!(s.transactions > 100, "{s:?}");
        // Every completed page has its page + objects as fetches; requests = replies (+ at most
        // the in-progress ones).
        assert!(s.object_latency_s.len() as u64 >= s.transactions + s.objects);
        assert!(s.requests >= s.replies && s.requests - s.replies <= 4);
        assert_eq!(s.stale_packets, 0);
        // Mean objects per page close to the table's 2.84 (few hundred pages).
        let per_page = s.objects as f64 / s.transactions as f64;
        assert!((1.8..4.5).contains(&per_page), "{per_page}");
        // Mean reply ~ 7231 bytes per fetch (heavy tail: wide band).
        let per_reply = s.reply_bytes as f64 / (s.transactions + s.objects) as f64;
        assert!((2500.0..20000.0).contains(&per_reply), "{per_reply}");
        let thr = s.reply_bytes as f64 * 8.0
            / (s.last_done.unwrap() - s.first_start.unwrap()).as_secs_f64();
        assert!(thr < 2e6 && thr > 1e5, "{thr}");
    }

    #[test]
    fn a_single_pair_serialises_objects() {
        let mut p = params(1000, 100.0);
        p.max_connections = 1;
        let mut one = Pipe::new(p, 2e6, 0.003);
        one.run(Instant::from_secs_f64(100.0));
        let mut four = Pipe::new(params(1000, 100.0), 2e6, 0.003);
        four.run(Instant::from_secs_f64(100.0));
        // Same stream of sizes, so four parallel connections finish more pages.
        assert!(four.app.stats().transactions > one.app.stats().transactions);
    }

    #[test]
    fn think_time_spaces_transactions() {
        let mut p = params(1000, 100.0);
        p.think_time = ThinkTime::Constant(5.0);
        let mut pipe = Pipe::new(p, 2e6, 0.003);
        pipe.run(Instant::from_secs_f64(100.0));
        let n = pipe.app.stats().transactions;
        assert!((5..=20).contains(&n), "{n}");
        let mut p = params(1000, 1000.0);
        p.think_time = ThinkTime::Mah;
        let mut pipe = Pipe::new(p, 2e6, 0.003);
        pipe.run(Instant::from_secs_f64(1000.0));
        assert!(pipe.app.stats().transactions >= 1);
    }

    #[test]
    fn fixed_ports_work_without_loss() {
        let mut p = params(250, 100.0);
        p.connections = Connections::Ns2;
        let mut pipe = Pipe::new(p, 64e3, 0.05);
        pipe.run(Instant::from_secs_f64(100.0));
        let s = pipe.app.stats();
        assert!(s.transactions > 3, "{s:?}");
        assert_eq!(s.stale_packets, 0);
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let addr = WwwAddressing {
            client: [1, 1, 1, 1],
            server: [2, 2, 2, 2],
            port_base: 100,
            port_span: 4,
        };
        let s = Streams::new(1, 0);
        assert!(WwwApp::new(params(1000, 1.0), addr, |n| s.fixed(n)).is_err());
        let mut p = params(1000, 1.0);
        p.max_connections = 0;
        assert!(WwwApp::new(p, addr, |n| s.fixed(n)).is_err());
        let mut p = params(1000, 1.0);
        p.max_connections = 2;
        // 4 ports for 2 pairs leave none to rotate into.
        assert!(WwwApp::new(p.clone(), addr, |n| s.fixed(n)).is_err());
        let addr = WwwAddressing {
            port_span: 5,
            ..addr
        };
        assert!(WwwApp::new(p, addr, |n| s.fixed(n)).is_ok());
    }

    /// With the smallest port range it accepts, at the top of the port space, new connections
    /// rotate through the range's one spare port and never leave the range (review, session 36:
    /// the first rotating port was one past the range, and a full range looped for ever).
    #[test]
    fn rotating_ports_stay_inside_the_smallest_range() {
        let mut p = params(1000, 30.0);
        p.max_connections = 2;
        let (base, span) = (u16::MAX - 4, 5);
        let mut pipe = Pipe::with_ports(p, 2e6, 0.003, base, span);
        pipe.run(Instant::from_secs_f64(30.0));
        let s = pipe.app.stats();
        assert!(s.transactions > 10, "{s:?}");
        assert_eq!(s.stale_packets, 0);
        // Every packet sent, both ways, used ports of the range, and more than the 4 fixed ones.
        let ports = &pipe.ports;
        assert_eq!(ports.len(), span as usize, "{ports:?}");
        assert!(ports.iter().all(|&q| q >= base), "{ports:?}");
    }

    /// Pages and fetches that complete after `stop` do not count, whatever runs after it (a
    /// WWW app beside conferencing or video gets a drain; review, session 41: no test ran past
    /// `stop`). A run to 100 s of an app that stops at 50 s counts what the run to 50 s counts.
    #[test]
    fn nothing_completed_after_stop_counts() {
        let mut at_stop = Pipe::new(params(1000, 50.0), 2e6, 0.003);
        at_stop.run(Instant::from_secs_f64(50.0));
        let mut past = Pipe::new(params(1000, 50.0), 2e6, 0.003);
        past.run(Instant::from_secs_f64(100.0));
        let (a, b) = (at_stop.app.stats(), past.app.stats());
        assert!(a.transactions > 20, "{a:?}");
        // The page in progress at 50 s went on after it...
        assert!(b.replies > a.replies, "{a:?} {b:?}");
        // ... and counts nowhere.
        assert_eq!(a.transactions, b.transactions);
        assert_eq!(a.objects, b.objects);
        assert_eq!(a.reply_bytes, b.reply_bytes);
        assert_eq!(a.object_latency_s, b.object_latency_s);
        assert_eq!(a.last_done, b.last_done);
        assert!(b.last_done.unwrap() <= Instant::from_secs_f64(50.0));
    }

    /// Mah's think time, in seconds, from its own table: every gap between a page's end and
    /// the next page's start lies in the table's range (1.005 to 86,394.941 s), and the median
    /// of 200 gaps lies between the table's 40 % and 60 % points (10.9 and 25.1 s; median
    /// 16.2 s). Milliseconds, or the server-stay table (1 to 54, median 2), would not.
    #[test]
    fn mah_think_times_come_from_the_think_time_table() {
        let mut p = params(1000, 1.0e7);
        p.think_time = ThinkTime::Mah;
        let mut pipe = Pipe::new(p, 2e6, 0.003);
        let mut gaps = Vec::new();
        let mut done = 0;
        let mut t = 0.0;
        // Steps of 1 s, shorter than any think time: a page's end and the next start are never
        // in one step.
        while gaps.len() < 200 {
            t += 1.0;
            assert!(t < 1.0e7, "{} gaps", gaps.len());
            pipe.run(Instant::from_secs_f64(t));
            let s = pipe.app.stats();
            if s.transactions > done {
                assert_eq!(s.transactions, done + 1);
                done = s.transactions;
                let gap = pipe.app.next_start.unwrap() - s.last_done.unwrap();
                gaps.push(gap.as_secs_f64());
            }
        }
        assert!(
            gaps.iter().all(|g| (1.004..86_395.0).contains(g)),
            "{gaps:?}"
        );
        gaps.sort_by(f64::total_cmp);
        let median = gaps[100];
        assert!((10.9..25.2).contains(&median), "{median}");
    }
}
