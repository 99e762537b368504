//! Test support: a `Pair` of two services joined by a scripted lossy wire (quinn's `Pair`, smoltcp's
//! scripted fault injection), driven in virtual time.
//!
//! ```text
//!   app A --send_at--> [service A] --frames--> FIFO -> serialise at `rate` -> +delay -> [service B] --> delivered[B]
//!   delivered[A] <---- [service A] <-- +delay <- serialise <- FIFO <--frames-- [service B] <--send_at-- app B
//! ```
//!
//! Each direction is a simplex link: frames wait in a FIFO (the single-service FIFO scheduler of
//! seed004-ch5 sec. 1.1), are serialised one at a time at the link rate, then arrive after the one-way
//! delay, unless the loss rule drops them (a dropped frame still uses its airtime, as in ns-2's
//! error model). Each frame starting transmission is reported to its service
//! (`Service::handle_transmitted`), as `Endpoint::poll_transmit` does. `step` advances virtual time to the next event. Frames are re-read from their
//! bytes with a non-zero service nibble, so schemes are tested on wire input and must ignore that
//! nibble.

use std::collections::VecDeque;

use crate::buf::Buf;

use crate::packet::Packet;
use crate::service::{Outbox, Service};
use crate::time::{DataRate, Duration, Instant};
use crate::wire::Frame;

/// Direction of a frame on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    AtoB,
    BtoA,
}

/// The service number stamped on every frame in a `Pair` (schemes must not read it).
pub const PAIR_SERVICE: u8 = 0xA;

/// Loss rule: `(direction, frame index in that direction, frame) -> dropped?`.
pub type LossFn = Box<dyn FnMut(Dir, u64, &Frame) -> bool>;

/// One frame that started transmission.
#[derive(Debug, Clone)]
pub struct WireEvent {
    pub dir: Dir,
    /// Index among frames sent in `dir` (0-based).
    pub index: u64,
    pub start: Instant,
    /// When it reached (or would have reached) the far end.
    pub arrival: Instant,
    pub frame: Frame,
    pub lost: bool,
}

#[derive(Default)]
struct Wire {
    queue: VecDeque<Frame>,
    /// End of serialisation of the frame on the air, if any.
    busy: Option<Instant>,
    in_flight: VecDeque<(Instant, Frame, bool)>,
    sent: u64,
}

pub struct Pair {
    pub a: Box<dyn Service>,
    pub b: Box<dyn Service>,
    pub now: Instant,
    pub rate: DataRate,
    pub delay: Duration,
    wires: [Wire; 2],
    /// Scripted application packets per side (A = 0, B = 1), in time order.
    app: [VecDeque<(Instant, Packet)>; 2],
    /// With IP pacing, when each side's classifier accepts its next packet.
    next_accept: [Instant; 2],
    pacing: bool,
    loss: LossFn,
    /// Packets delivered at A (index 0) and B (index 1), with the time.
    pub delivered: [Vec<(Instant, Packet)>; 2],
    /// Packets each side's service dropped on entry.
    pub dropped_on_entry: [Vec<Packet>; 2],
    /// Every frame put on the wire.
    pub log: Vec<WireEvent>,
}

impl Pair {
    /// Two services joined by a full-duplex link of `rate` and one-way `delay`, lossless.
    pub fn new(a: Box<dyn Service>, b: Box<dyn Service>, rate: DataRate, delay: Duration) -> Self {
        Pair {
            a,
            b,
            now: Instant::ZERO,
            rate,
            delay,
            wires: Default::default(),
            app: Default::default(),
            next_accept: [Instant::ZERO; 2],
            pacing: false,
            loss: Box::new(|_, _, _| false),
            delivered: Default::default(),
            dropped_on_entry: Default::default(),
            log: Vec::new(),
        }
    }

    /// Loss decided by a closure.
    pub fn with_loss(mut self, f: impl FnMut(Dir, u64, &Frame) -> bool + 'static) -> Self {
        self.loss = Box::new(f);
        self
    }

    /// Drop exactly these frame indices in each direction.
    pub fn drop_frames(self, a_to_b: &[u64], b_to_a: &[u64]) -> Self {
        let (ab, ba) = (a_to_b.to_vec(), b_to_a.to_vec());
        self.with_loss(move |d, i, _| match d {
            Dir::AtoB => ab.contains(&i),
            Dir::BtoA => ba.contains(&i),
        })
    }

    /// Pace each side's packets at the nominal rate, (len + header_overhead) / rate, like the
    /// endpoint classifier (seed 004 L1207).
    pub fn with_pacing(mut self) -> Self {
        self.pacing = true;
        self
    }

    /// Script an application packet into side A (`from_a`) or B at time `at`.
    pub fn send_at(&mut self, from_a: bool, at: Instant, packet: Packet) {
        let q = &mut self.app[if from_a { 0 } else { 1 }];
        let pos = q.partition_point(|(t, _)| *t <= at);
        q.insert(pos, (at, packet));
    }

    fn svc(&mut self, side: usize) -> &mut dyn Service {
        if side == 0 {
            &mut *self.a
        } else {
            &mut *self.b
        }
    }

    /// Move a service's output onto its wire / into the delivered list.
    fn absorb(&mut self, side: usize, out: Outbox) {
        for f in out.frames {
            self.wires[side].queue.push_back(f);
        }
        for p in out.packets {
            self.delivered[side].push((self.now, p));
        }
        self.start_tx(side);
    }

    fn start_tx(&mut self, side: usize) {
        let dir = if side == 0 { Dir::AtoB } else { Dir::BtoA };
        let w = &mut self.wires[side];
        if w.busy.is_some() {
            return;
        }
        let Some(mut f) = w.queue.pop_front() else {
            return;
        };
        f.set_service(PAIR_SERVICE);
        // The transmit "interrupt": timers that run from transmission start now.
        let now = self.now;
        if side == 0 {
            self.a.handle_transmitted(now, &f);
        } else {
            self.b.handle_transmitted(now, &f);
        }
        let w = &mut self.wires[side];
        let index = w.sent;
        w.sent += 1;
        let end = self.now + self.rate.tx_time(f.len());
        let arrival = end + self.delay;
        let lost = (self.loss)(dir, index, &f);
        w.busy = Some(end);
        w.in_flight.push_back((arrival, f.clone(), lost));
        self.log.push(WireEvent {
            dir,
            index,
            start: self.now,
            arrival,
            frame: f,
            lost,
        });
    }

    fn app_time(&self, side: usize) -> Option<Instant> {
        let (t, _) = self.app[side].front()?;
        Some(if self.pacing {
            (*t).max(self.next_accept[side])
        } else {
            *t
        })
    }

    /// The next event time, if any.
    pub fn next_event(&self) -> Option<Instant> {
        let mut ts = Vec::with_capacity(10);
        for side in 0..2 {
            ts.push(self.wires[side].busy);
            ts.push(self.wires[side].in_flight.front().map(|x| x.0));
            ts.push(self.app_time(side));
        }
        ts.push(self.a.poll_timeout());
        ts.push(self.b.poll_timeout());
        // A deadline in the past is due now.
        ts.into_iter().flatten().min().map(|t| t.max(self.now))
    }

    /// Advance to the next event and process everything due then. False if nothing is pending.
    pub fn step(&mut self) -> bool {
        let Some(t) = self.next_event() else {
            return false;
        };
        self.now = t;
        for side in 0..2 {
            // arrivals at the far end
            while self.wires[side].in_flight.front().is_some_and(|x| x.0 <= t) {
                let (_, f, lost) = self.wires[side].in_flight.pop_front().unwrap();
                if lost {
                    continue;
                }
                let wire = Frame::from_wire(Buf::from(f.to_vec())).expect("non-empty frame");
                let mut out = Outbox::default();
                self.svc(1 - side).handle_frame(t, wire, &mut out);
                self.absorb(1 - side, out);
            }
        }
        for side in 0..2 {
            // end of serialisation frees the link
            if self.wires[side].busy.is_some_and(|e| e <= t) {
                self.wires[side].busy = None;
                self.start_tx(side);
            }
        }
        for side in 0..2 {
            if self.svc(side).poll_timeout().is_some_and(|d| d <= t) {
                let mut out = Outbox::default();
                self.svc(side).handle_timeout(t, &mut out);
                self.absorb(side, out);
            }
        }
        for side in 0..2 {
            while self.app_time(side).is_some_and(|at| at <= t) {
                let (_, p) = self.app[side].pop_front().unwrap();
                let before = self.svc(side).stats().packets_dropped;
                let len = p.len();
                let mut out = Outbox::default();
                self.svc(side).handle_packet(t, p.clone(), &mut out);
                if self.svc(side).stats().packets_dropped > before {
                    self.dropped_on_entry[side].push(p);
                }
                let h = self.svc(side).header_overhead();
                self.next_accept[side] = t + self.rate.tx_time(len + h);
                self.absorb(side, out);
            }
        }
        true
    }

    /// Run every event up to and including `until`; `now` ends at `until`.
    pub fn run_until(&mut self, until: Instant) {
        while self.next_event().is_some_and(|t| t <= until) {
            self.step();
        }
        self.now = self.now.max(until);
    }

    /// Run until `done` holds (checked after each step) or time passes `limit`. Returns `done`.
    pub fn run_while_not(&mut self, limit: Instant, mut done: impl FnMut(&Pair) -> bool) -> bool {
        while !done(self) {
            match self.next_event() {
                Some(t) if t <= limit => {
                    self.step();
                }
                _ => return done(self),
            }
        }
        true
    }

    /// True while scripted application packets are still to be handed to a service.
    pub fn app_pending(&self) -> bool {
        self.app.iter().any(|q| !q.is_empty())
    }

    /// Frames on the wire in one direction, in order.
    pub fn frames(&self, dir: Dir) -> impl Iterator<Item = &WireEvent> {
        self.log.iter().filter(move |e| e.dir == dir)
    }

    /// True when no frame is queued, on the air or in flight.
    pub fn wire_idle(&self) -> bool {
        self.wires
            .iter()
            .all(|w| w.queue.is_empty() && w.busy.is_none() && w.in_flight.is_empty())
    }
}

/// A packet whose bytes encode `i` (4-byte big endian) padded to `len` (at least 4).
pub fn numbered(i: u32, len: usize) -> Packet {
    let mut v = vec![0u8; len.max(4)];
    v[..4].copy_from_slice(&i.to_be_bytes());
    for (k, b) in v.iter_mut().enumerate().skip(4) {
        *b = (i as usize).wrapping_mul(31).wrapping_add(k) as u8;
    }
    Packet::from_vec(v)
}

/// The number encoded by [`numbered`].
pub fn number_of(p: &Packet) -> u32 {
    let s = p.as_slice();
    u32::from_be_bytes([s[0], s[1], s[2], s[3]])
}

/// The thesis links (seed004-ch1-3 Table 3.1): (rate, one-way delay, frame payload).
pub fn thesis_link(name: &str) -> crate::service::LinkInfo {
    let (bps, ms, payload) = match name {
        "cellular" => (14_400, 100, 50),
        "pcs" => (64_000, 50, 250),
        "wlan" => (2_000_000, 3, 1000),
        _ => panic!("unknown link {name}"),
    };
    crate::service::LinkInfo {
        rate: DataRate::from_bps(bps).unwrap(),
        delay: Duration::from_millis(ms),
        frame_payload: payload,
    }
}

/// Fuzz entry points: the bodies of the cargo-fuzz targets under `/fuzz`, kept here so the crate's
/// own tests run them on random input too. Each must never panic on any input.
pub mod fuzz {
    use crate::buf::Buf;

    use crate::service::{Outbox, Role, SchemeConfig};
    use crate::time::{Duration, Instant};
    use crate::wire::{ArqFrame, Frame, HdlcFrame, RlpFrame, RseFrame, StatusFrame, XorFrame};

    fn frame(data: &[u8]) -> Option<Frame> {
        Frame::from_wire(Buf::copy_from_slice(data))
    }

    /// GBN/SR decoder: parse, and anything parsed re-emits to the same frame.
    pub fn arq_frame(data: &[u8]) {
        if let Some(Ok(x)) = frame(data).map(|f| ArqFrame::parse(&f)) {
            assert_eq!(ArqFrame::parse(&x.clone().emit()), Ok(x));
        }
    }

    /// RLP decoder.
    pub fn rlp_frame(data: &[u8]) {
        if let Some(Ok(x)) = frame(data).map(|f| RlpFrame::parse(&f)) {
            assert_eq!(RlpFrame::parse(&x.clone().emit()), Ok(x));
        }
    }

    /// XOR decoder.
    pub fn xor_frame(data: &[u8]) {
        if let Some(Ok(x)) = frame(data).map(|f| XorFrame::parse(&f)) {
            assert_eq!(XorFrame::parse(&x.clone().emit()), Ok(x));
        }
    }

    /// Reed-Solomon erasure decoder.
    pub fn rse_frame(data: &[u8]) {
        if let Some(Ok(x)) = frame(data).map(|f| RseFrame::parse(&f)) {
            assert_eq!(RseFrame::parse(&x.clone().emit()), Ok(x));
        }
    }

    /// Status-RLP decoder (seed 002's periodic-status protocol).
    pub fn status_rlp_frame(data: &[u8]) {
        if let Some(Ok(x)) = frame(data).map(StatusFrame::from_frame) {
            assert_eq!(StatusFrame::from_frame(x.clone().emit()), Ok(x));
        }
    }

    /// LAPB/MDLP decoder (seed 002's HDLC-family frames).
    pub fn hdlc_frame(data: &[u8]) {
        if let Some(Ok(x)) = frame(data).map(HdlcFrame::from_frame) {
            assert_eq!(HdlcFrame::from_frame(x.clone().emit()), Ok(x));
        }
    }

    /// A scheme (chosen by the first byte) fed a stream of frames: each record is a length byte,
    /// a time-step byte (ms; odd also fires due timers) and that many frame bytes.
    pub fn service_rx(data: &[u8]) {
        let Some((&sel, mut rest)) = data.split_first() else {
            return;
        };
        let names = SchemeConfig::NAMES;
        let cfg = SchemeConfig::from_name(names[sel as usize % names.len()]).expect("name");
        let link = super::thesis_link("cellular");
        // Base-station end: the only role where it matters (Snoop).
        let mut s = cfg.build(&link, Role::BaseStation);
        let mut now = Instant::ZERO;
        let mut out = Outbox::default();
        for i in 0..(sel >> 4) {
            s.handle_packet(now, super::numbered(i as u32, 50), &mut out);
        }
        while let [len, step, tail @ ..] = rest {
            let n = (*len as usize).min(tail.len());
            now += Duration::from_millis(*step as u64);
            if let Some(f) = frame(&tail[..n]) {
                s.handle_frame(now, f, &mut out);
            }
            if step & 1 == 1 {
                if let Some(t) = s.poll_timeout() {
                    now = now.max(t);
                    s.handle_timeout(now, &mut out);
                }
            }
            out.clear();
            rest = &tail[n..];
        }
    }
}
