//! Real-time video over TCP: seed 003's MPEG-4 flows (Papadimitriou & Tsaoussidis 2006, sec. 4;
//! seed003.md sec. 3.6 and 4).
//!
//! ```text
//!   server (first node)                                       client (last node)
//!   flow k: source -> TcpSender --- data (port base+k) --->  TcpSink -> in-order delivery
//!                     TcpSender <-- ACKs ------------------  TcpSink     (RTPI bookkeeping)
//! ```
//!
//! One [`VideoApp`] owns `flows` independent flows, each a frame source writing into an
//! unbounded TCP send buffer (ns-2's `advanceby`, as the paper's generator fed ns-2's TCP) and
//! the matching sink. The app spans both nodes, as the WWW app does: inputs say at which side a
//! packet arrived, outputs from which side a packet leaves.
//!
//! **The frame source** (seed003.md sec. 3.6): three TES+ processes (Melamed), one per frame
//! type I, P and B, interleaved in GOP order. Process t keeps a background sequence
//! `U_n = frac(U_{n-1} + V_n)` with innovations `V_n` uniform on `[-w_t, w_t)`, stitches it,
//! `S(y) = y / xi` below `xi` and `(1 - y) / (1 - xi)` above, and maps the result through the
//! inverse of the frame-size distribution. Stitching keeps the marginal uniform, so the sizes
//! have exactly that distribution while consecutive frames of a type stay correlated.
//!
//! Choices where the paper is silent (seed003.md sec. 8, items 8, 9, 12-14; `docs/seed003.md`):
//! * The trace and its frame-size CDFs are not in the seed: the marginal is [`SIZE_QUANTILES`],
//!   a synthetic right-skewed quantile table (coefficient of variation ~0.3) with mean 1,
//!   scaled per type by `size_ratio` (I : P : B = 5 : 2 : 1 by default) so that the mean rate
//!   is `rate_bps`. 25 frames/s, GOP `IBBPBBPBBPBB`, innovation half-width 0.1, `xi` 0.5.
//! * Each frame is written to TCP on its own, as ns-2's `TcpAgent::sendmsg` takes an
//!   application's write: `ceil(bytes / segment_size)` packets, so every frame gives at least
//!   one packet (`Packetise::Frame`, the default since session 45; seed003.md sec. 3.6: "a frame
//!   split into 1000-B packets"). The packets on the wire carry more than the source's mean
//!   rate (the last one of a frame is padded to full size, as ns-2 sends it). `packetise =
//!   "stream"` (before session 45) writes a byte stream instead: a frame adds its bytes to a
//!   carry and TCP gets the whole segments it completes (the mean rate stays exact, but at
//!   256 kbit/s two small B frames after one another give no packet, an 80-120 ms gap of the
//!   source's own that the 75 ms RTPI test counts as delay). A packet's generation time is that
//!   of the frame that gave (completed) it.
//! * Flows start at `start + U(0, start_spread)`, each from its own stream.
//! * Metrics count the measurement window `[warmup, stop)`: packets generated in it are the
//!   "sent" packets of RTPI; goodput counts in-order deliveries in it (sec. 4.1), and both
//!   count a delivery at `stop` itself (a run that ends there processes that instant).
//! * A delivered packet is *delayed* if it reached the application more than `threshold`
//!   (75 ms) after the previous delivery of its flow (sec. 4.4 reading (a)); the first delivery
//!   is timely. Delayed and loss rates are per packet sent, so RTPI = 1 - delayed - lost.
//! * "Lost" is (i): generated in the window but not delivered by its end (the run's end in the
//!   catalogue, which sets `drain_s = 0`; a drain after the window changes no metric: the TCP
//!   and local retransmission counts also stop at the window's end, `Simulation::run`). TCP's
//!   end-to-end retransmissions per packet sent are reported beside it (a proxy for the drop-based
//!   (ii): go-back-N and spurious resends count too).

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

use msll_proto::{Duration, Instant, Packet};
use rand::Rng;

use crate::app::www::Side;
use crate::rng::SimRng;
use crate::tcp::{FlowAddr, TcpConfig, TcpConfigError, TcpSender, TcpSink};

/// Frame-size quantiles at u = 0, 0.1, ..., 1 (linear in between), before normalisation to
/// mean 1: a synthetic marginal standing for the trace the paper's TES models were fitted to.
pub const SIZE_QUANTILES: [f64; 11] = [
    0.45, 0.62, 0.72, 0.81, 0.89, 0.97, 1.05, 1.15, 1.28, 1.48, 2.0,
];

/// Frame types of a GOP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameType {
    I = 0,
    P = 1,
    B = 2,
}

/// Parse a GOP pattern such as "IBBPBBPBBPBB".
pub fn parse_gop(s: &str) -> Result<Vec<FrameType>, String> {
    if s.is_empty() || s.len() > 1000 {
        return Err("must be 1..=1000 frames of I, P and B".into());
    }
    s.chars()
        .map(|c| match c {
            'I' | 'i' => Ok(FrameType::I),
            'P' | 'p' => Ok(FrameType::P),
            'B' | 'b' => Ok(FrameType::B),
            other => Err(format!("'{other}' is not a frame type (I, P or B)")),
        })
        .collect()
}

/// Lowest frame rate accepted: one frame every 10 s. Below it a "frame" of rate / 8 / fps
/// bytes is a bulk transfer, not video (input audit, session 34: fps = 1e-300).
pub const MIN_FPS: f64 = 0.1;

/// How frames become TCP packets (seed003.md sec. 3.6, AMBIGUOUS: "a frame split into 1000-B
/// packets is assumed").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Packetise {
    /// Each frame on its own: `ceil(bytes / segment_size)` packets (ns-2's `sendmsg`).
    #[default]
    Frame,
    /// A byte stream: only whole segments, the remainder carried to the next frame.
    Stream,
}

/// The video source's parameters (one set for all flows of an app).
#[derive(Debug, Clone, PartialEq)]
pub struct VideoParams {
    pub tcp: TcpConfig,
    pub packetise: Packetise,
    pub flows: u32,
    /// Mean rate of each flow's source, bit/s.
    pub rate_bps: f64,
    pub fps: f64,
    pub gop: Vec<FrameType>,
    /// Mean frame sizes of I, P and B relative to each other.
    pub size_ratio: [f64; 3],
    /// TES innovation half-width of the I, P and B processes (0 < w <= 0.5).
    pub tes_width: [f64; 3],
    /// TES stitching parameter (0..=1).
    pub tes_xi: f64,
    pub start: Instant,
    pub start_spread: Duration,
    /// Start of the measurement window.
    pub warmup: Instant,
    /// Sources stop generating here; the window ends here.
    pub stop: Instant,
    /// Inter-arrival threshold of RTPI (75 ms).
    pub threshold: Duration,
}

impl VideoParams {
    /// Check the values a scenario can get wrong; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |v: f64| v.is_finite() && v > 0.0;
        if self.flows == 0 || self.flows > 1000 {
            return Err(format!("flows = {}: must be 1..=1000", self.flows));
        }
        if !pos(self.rate_bps) {
            return Err(format!("rate_bps = {}: must be positive", self.rate_bps));
        }
        if !(pos(self.fps) && (MIN_FPS..=1000.0).contains(&self.fps)) {
            return Err(format!(
                "fps = {:?}: must be in [{MIN_FPS}, 1000]",
                self.fps
            ));
        }
        if self.gop.is_empty() {
            return Err("gop: must have at least one frame".into());
        }
        if let Some(r) = self.size_ratio.iter().find(|r| !pos(**r)) {
            return Err(format!("size_ratio: {r} must be positive"));
        }
        // Ratios far apart overflow the GOP's weight or underflow a mean to 0 (review, session
        // 45: [1e308; 3] sent nothing, [5e-324; 3] a saturated packet count).
        let (lo, hi) = self
            .size_ratio
            .iter()
            .fold((f64::MAX, 0.0f64), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
        if !(1e-100..=1e100).contains(&lo) || !(1e-100..=1e100).contains(&hi) || hi / lo > 1e6 {
            return Err(format!(
                "size_ratio = {:?}: must lie within 1e-100..1e100 and within a factor 1e6 of \
                 each other",
                self.size_ratio
            ));
        }
        if self.rate_bps > 1e11 {
            return Err(format!("rate_bps = {}: at most 1e11", self.rate_bps));
        }
        if let Some(w) = self
            .tes_width
            .iter()
            .find(|w| !(w.is_finite() && **w > 0.0 && **w <= 0.5))
        {
            return Err(format!("tes_width: {w} must be in (0, 0.5]"));
        }
        if !(self.tes_xi.is_finite() && (0.0..=1.0).contains(&self.tes_xi)) {
            return Err(format!("tes_xi = {}: must be in [0, 1]", self.tes_xi));
        }
        if self.warmup > self.stop {
            return Err(format!(
                "warmup_s = {}: must not be after the run's end ({} s)",
                self.warmup.as_secs_f64(),
                self.stop.as_secs_f64()
            ));
        }
        Ok(())
    }

    /// Mean bytes of a frame of each type: the GOP's mean is `rate / 8 / fps`.
    pub fn mean_frame_bytes(&self) -> [f64; 3] {
        let per_frame = self.rate_bps / 8.0 / self.fps;
        let weight: f64 = self.gop.iter().map(|t| self.size_ratio[*t as usize]).sum();
        let unit = per_frame * self.gop.len() as f64 / weight;
        self.size_ratio.map(|r| r * unit)
    }
}

/// Mean of the piecewise-linear quantile function through `SIZE_QUANTILES`.
fn quantile_mean() -> f64 {
    SIZE_QUANTILES
        .windows(2)
        .map(|w| (w[0] + w[1]) / 2.0)
        .sum::<f64>()
        / (SIZE_QUANTILES.len() - 1) as f64
}

/// The normalised (mean 1) frame-size quantile at `u` in [0, 1].
pub fn size_quantile(u: f64) -> f64 {
    let n = (SIZE_QUANTILES.len() - 1) as f64;
    let x = (u.clamp(0.0, 1.0) * n).min(n - 1e-12);
    let i = x.floor() as usize;
    let f = x - i as f64;
    (SIZE_QUANTILES[i] + f * (SIZE_QUANTILES[i + 1] - SIZE_QUANTILES[i])) / quantile_mean()
}

/// One TES+ process: the background sequence and its stitched, uniform foreground.
#[derive(Debug, Clone)]
pub struct Tes {
    u: f64,
    width: f64,
    xi: f64,
}

impl Tes {
    pub fn new(rng: &mut SimRng, width: f64, xi: f64) -> Tes {
        Tes {
            u: rng.random::<f64>(),
            width,
            xi,
        }
    }

    /// The next stitched value, uniform on [0, 1) in the long run.
    pub fn next(&mut self, rng: &mut SimRng) -> f64 {
        let v = (rng.random::<f64>() * 2.0 - 1.0) * self.width;
        let x = self.u + v;
        self.u = x - x.floor();
        let y = self.u;
        if y < self.xi {
            y / self.xi
        } else {
            (1.0 - y) / (1.0 - self.xi)
        }
    }
}

/// Counters of one flow (`VideoApp::flows`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowStats {
    /// Application packets generated in the window.
    pub sent: u64,
    /// Of those, delivered within `threshold` of the previous delivery.
    pub timely: u64,
    /// Of those, delivered later than that.
    pub delayed: u64,
    /// Application bytes delivered in order within the window.
    pub window_bytes: u64,
    /// Frames generated (whole run).
    pub frames: u64,
    /// Application bytes generated (whole run).
    pub generated_bytes: f64,
    /// TCP retransmissions, timeouts and segments sent of this flow's sender when the window
    /// opened (the first frame due at or after `warmup`), so the metrics count the window's
    /// alone.
    pub rtx_at_warmup: Option<(u64, u64, u64)>,
    /// Deliveries of packets the source never wrote (a TCP sending beyond its data; never
    /// expected, counted rather than trusted).
    pub unmatched: u64,
}

struct Flow {
    src: TcpSender,
    sink: TcpSink,
    rng: SimRng,
    tes: [Tes; 3],
    next_frame: Option<Instant>,
    frame: u64,
    carry: f64,
    /// Generation times of the packets not yet delivered, in order, as (time, packets): the
    /// packets of one frame share a time, so an overloaded flow's backlog costs one entry per
    /// frame, not per packet.
    gen: VecDeque<(Instant, u64)>,
    last_delivery: Option<Instant>,
    delivered: u64,
    stats: FlowStats,
}

/// `flows` video flows from the server side to the client side.
pub struct VideoApp {
    p: VideoParams,
    mean: [f64; 3],
    /// Frame interval in nanoseconds (frame k of a flow leaves at its start + k * interval).
    frame_ns: f64,
    starts: Vec<Instant>,
    flows: Vec<Flow>,
    port_base: u16,
    /// A flow generated a frame of the measurement window (at or after `warmup`).
    window_open: bool,
}

impl VideoApp {
    /// Flow k uses port `port_base + k` at both ends; `stream(k)` gives flow k's random stream
    /// (start time, TCP clock phase, TES draws).
    pub fn new(
        p: VideoParams,
        server: [u8; 4],
        client: [u8; 4],
        port_base: u16,
        mut stream: impl FnMut(u32) -> SimRng,
    ) -> Result<VideoApp, TcpConfigError> {
        let mean = p.mean_frame_bytes();
        let mut flows = Vec::with_capacity(p.flows as usize);
        let mut starts = Vec::with_capacity(p.flows as usize);
        for k in 0..p.flows {
            let mut rng = stream(k);
            let port = port_base + k as u16;
            let flow = FlowAddr {
                src: server,
                dst: client,
                src_port: port,
                dst_port: port,
            };
            let start = p.start
                + Duration::from_secs_f64(rng.random::<f64>() * p.start_spread.as_secs_f64());
            let boot = Duration::from_secs_f64(rng.random::<f64>() * p.tcp.tick);
            let mut src = TcpSender::new(p.tcp.clone(), flow, boot)?;
            src.set_app_limited(true);
            let sink = TcpSink::new(p.tcp.clone(), flow)?;
            let tes = [0, 1, 2].map(|t| Tes::new(&mut rng, p.tes_width[t], p.tes_xi));
            starts.push(start);
            flows.push(Flow {
                src,
                sink,
                rng,
                tes,
                next_frame: (start < p.stop).then_some(start),
                frame: 0,
                carry: 0.0,
                gen: VecDeque::new(),
                last_delivery: None,
                delivered: 0,
                stats: FlowStats::default(),
            });
        }
        Ok(VideoApp {
            frame_ns: 1e9 / p.fps,
            mean,
            p,
            starts,
            flows,
            port_base,
            window_open: false,
        })
    }

    /// Whether a flow has generated a frame of the measurement window yet.
    pub fn window_open(&self) -> bool {
        self.window_open
    }

    pub fn params(&self) -> &VideoParams {
        &self.p
    }

    /// A packet for port `port` arrived at `side`: an ACK at the server, data at the client.
    pub fn handle_packet(
        &mut self,
        now: Instant,
        side: Side,
        port: u16,
        pkt: &Packet,
        out: &mut Vec<(Side, Packet)>,
    ) {
        let Some(f) = self
            .flows
            .get_mut(port.wrapping_sub(self.port_base) as usize)
        else {
            return;
        };
        match side {
            Side::Server => {
                f.src.handle_ack(now, pkt);
                drain(&mut f.src, now, out);
            }
            Side::Client => {
                let ack = f.sink.handle_data(now, pkt);
                let d = f.sink.stats().delivered_packets;
                if d > f.delivered {
                    let n = d - f.delivered;
                    f.delivered = d;
                    deliver(&self.p, f, now, n);
                }
                if let Some(a) = ack {
                    out.push((Side::Client, a));
                }
            }
        }
    }

    pub fn handle_timeout(&mut self, now: Instant, out: &mut Vec<(Side, Packet)>) {
        for k in 0..self.flows.len() {
            while self.flows[k].next_frame.is_some_and(|t| t <= now) {
                self.frame(k, now);
            }
            let f = &mut self.flows[k];
            f.src.handle_timeout(now);
            drain(&mut f.src, now, out);
            if let Some(a) = f.sink.handle_timeout(now) {
                out.push((Side::Client, a));
            }
        }
    }

    /// Generate flow k's next frame (due at or before `now`) and hand TCP its packets (`Packetise`).
    fn frame(&mut self, k: usize, now: Instant) {
        let p = &self.p;
        let f = &mut self.flows[k];
        let due = f.next_frame.expect("a frame is due");
        if due >= p.warmup && f.stats.rtx_at_warmup.is_none() {
            let s = f.src.stats();
            f.stats.rtx_at_warmup = Some((s.retransmissions, s.timeouts, s.segments_sent));
            self.window_open = true;
        }
        let t = p.gop[(f.frame % p.gop.len() as u64) as usize] as usize;
        let y = f.tes[t].next(&mut f.rng);
        let bytes = self.mean[t] * size_quantile(y);
        f.frame += 1;
        f.stats.frames += 1;
        f.stats.generated_bytes += bytes;
        let seg = p.tcp.segment_size as f64;
        let n = match p.packetise {
            Packetise::Frame => (bytes / seg).ceil().max(1.0),
            Packetise::Stream => {
                f.carry += bytes;
                let n = (f.carry / seg).floor();
                f.carry -= n * seg;
                n
            }
        };
        let n = n as u64;
        if n > 0 {
            if due >= p.warmup && due < p.stop {
                f.stats.sent += n;
            }
            f.gen.push_back((due, n));
            f.src.send(now, n);
        }
        let next =
            self.starts[k] + Duration::from_nanos((f.frame as f64 * self.frame_ns).round() as u64);
        f.next_frame = (next < p.stop).then_some(next);
    }

    /// The earliest instant at which `handle_timeout` has work.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t: Option<Instant> = None;
        let mut min = |x: Option<Instant>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |c| c.min(x)));
            }
        };
        for f in &self.flows {
            min(f.next_frame);
            min(f.src.poll_timeout());
            min(f.sink.poll_timeout());
        }
        t
    }

    /// Per-flow counters, senders and sinks, in flow order.
    pub fn flows(&self) -> impl Iterator<Item = (&FlowStats, &TcpSender, &TcpSink)> {
        self.flows.iter().map(|f| (&f.stats, &f.src, &f.sink))
    }
}

/// `n` packets of flow `f` reached the application in order at `now`.
fn deliver(p: &VideoParams, f: &mut Flow, now: Instant, n: u64) {
    let seg = p.tcp.segment_size as u64;
    for _ in 0..n {
        // The sink delivers only what the sender sent, and the sender only what was generated
        // (`TcpSender::set_app_limited`); a delivery beyond it is counted, not trusted.
        let Some(front) = f.gen.front_mut() else {
            f.stats.unmatched += 1;
            continue;
        };
        let g = front.0;
        front.1 -= 1;
        if front.1 == 0 {
            f.gen.pop_front();
        }
        let late = f.last_delivery.is_some_and(|r| now - r > p.threshold);
        f.last_delivery = Some(now);
        // Generated in the window and delivered by its end: a delivery in a drain after it
        // (`SimConfig::drain_s`) is too late for seed 003's window and counts as lost, as it
        // does when the run ends with the window. The window's last instant is included
        // because a run that ends there processes it.
        if g >= p.warmup && g < p.stop && now <= p.stop {
            if late {
                f.stats.delayed += 1;
            } else {
                f.stats.timely += 1;
            }
        }
        // The same closed end as above (review, session 45: a delivery at exactly `stop` was
        // timely but left out of goodput).
        if now >= p.warmup && now <= p.stop {
            f.stats.window_bytes += seg;
        }
    }
}

fn drain(s: &mut TcpSender, now: Instant, out: &mut Vec<(Side, Packet)>) {
    while let Some(p) = s.poll_transmit(now) {
        out.push((Side::Server, p));
    }
}

/// Jain's fairness index of `xs` (1 = equal shares, 1/n = one takes all); NaN if all are 0.
pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let q: f64 = xs.iter().map(|x| x * x).sum();
    if q > 0.0 {
        s * s / (xs.len() as f64 * q)
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng(s: u64) -> SimRng {
        SimRng::seed_from_u64(s)
    }

    #[test]
    fn quantiles_have_mean_one_and_are_monotone() {
        let n = 100_000;
        let m: f64 = (0..n)
            .map(|i| size_quantile((i as f64 + 0.5) / n as f64))
            .sum::<f64>()
            / n as f64;
        assert!((m - 1.0).abs() < 1e-6, "mean {m}");
        let mut last = 0.0;
        for i in 0..=100 {
            let q = size_quantile(i as f64 / 100.0);
            assert!(q >= last, "not monotone at {i}");
            last = q;
        }
    }

    #[test]
    fn tes_marginal_is_uniform_and_correlated() {
        let mut r = rng(7);
        let mut t = Tes::new(&mut r, 0.1, 0.5);
        let xs: Vec<f64> = (0..200_000).map(|_| t.next(&mut r)).collect();
        // Uniform marginal: every decile holds ~10 %.
        let mut bins = [0usize; 10];
        for x in &xs {
            assert!((0.0..=1.0).contains(x));
            bins[((x * 10.0) as usize).min(9)] += 1;
        }
        for b in bins {
            let share = b as f64 / xs.len() as f64;
            assert!((share - 0.1).abs() < 0.01, "decile share {share}");
        }
        // Lag-1 autocorrelation: strongly positive for a narrow innovation, ~0 for the widest.
        let ac = |xs: &[f64]| {
            let m = xs.iter().sum::<f64>() / xs.len() as f64;
            let v: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
            xs.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / v
        };
        assert!(ac(&xs) > 0.8, "lag-1 autocorrelation {}", ac(&xs));
        let mut t = Tes::new(&mut r, 0.5, 0.5);
        let ys: Vec<f64> = (0..200_000).map(|_| t.next(&mut r)).collect();
        assert!(ac(&ys).abs() < 0.02, "white TES lag-1 {}", ac(&ys));
    }

    fn params(flows: u32, rate: f64) -> VideoParams {
        VideoParams {
            tcp: TcpConfig::ns2_2_35(1000),
            packetise: Packetise::Frame,
            flows,
            rate_bps: rate,
            fps: 25.0,
            gop: parse_gop("IBBPBBPBBPBB").unwrap(),
            size_ratio: [5.0, 2.0, 1.0],
            tes_width: [0.1; 3],
            tes_xi: 0.5,
            start: Instant::ZERO,
            start_spread: Duration::from_secs_f64(1.0),
            warmup: Instant::from_secs_f64(2.0),
            stop: Instant::from_secs_f64(60.0),
            threshold: Duration::from_secs_f64(0.075),
        }
    }

    #[test]
    fn gop_parse_and_mean_sizes() {
        assert!(parse_gop("IBXP").unwrap_err().contains("'X'"));
        assert!(parse_gop("").is_err());
        let p = params(1, 1_000_000.0);
        let m = p.mean_frame_bytes();
        assert!((m[0] / m[2] - 5.0).abs() < 1e-12 && (m[1] / m[2] - 2.0).abs() < 1e-12);
        // One GOP (1 I, 3 P, 8 B) carries rate / 8 * 12 / 25 bytes.
        let gop = m[0] + 3.0 * m[1] + 8.0 * m[2];
        assert!((gop - 1e6 / 8.0 * 12.0 / 25.0).abs() < 1e-6);
    }

    /// Drive one flow's source alone (ACK nothing): frames come every 40 ms and the bytes handed
    /// to TCP match the mean rate.
    #[test]
    fn source_keeps_its_mean_rate_and_frame_clock() {
        for mode in [Packetise::Frame, Packetise::Stream] {
            source_mean_rate_and_frame_clock(mode);
        }
    }

    fn source_mean_rate_and_frame_clock(mode: Packetise) {
        // Long enough for the correlated sizes to average out (~4000 I frames).
        let mut p = params(1, 512_000.0);
        p.packetise = mode;
        p.stop = Instant::from_secs_f64(2000.0);
        let mut app =
            VideoApp::new(p.clone(), [10, 0, 0, 1], [10, 0, 0, 3], 7000, |_| rng(3)).unwrap();
        let mut out = Vec::new();
        let mut now = Instant::ZERO;
        while let Some(t) = app.poll_timeout() {
            if t >= p.stop {
                break;
            }
            now = t;
            app.handle_timeout(now, &mut out);
        }
        let f = &app.flows[0];
        let secs = 2000.0 - (app.starts[0] - Instant::ZERO).as_secs_f64();
        assert!(
            (f.stats.frames as f64 - secs * 25.0).abs() <= 1.0,
            "frames {}",
            f.stats.frames
        );
        let rate = f.stats.generated_bytes * 8.0 / secs;
        assert!((rate / 512_000.0 - 1.0).abs() < 0.03, "rate {rate}");
        let segs = f.gen.iter().map(|g| g.1).sum::<u64>() as f64;
        match mode {
            // Whole segments went to TCP, the remainder stays in the carry.
            Packetise::Stream => {
                assert!((segs * 1000.0 - f.stats.generated_bytes).abs() < 1000.0)
            }
            // Every frame gave its own packets, the last one padded: at least one per frame
            // (ns-2's sendmsg), less than one more per frame than the bytes fill.
            Packetise::Frame => {
                assert_eq!(
                    f.gen.len() as u64,
                    f.stats.frames,
                    "a packet entry per frame"
                );
                assert!(f.gen.iter().all(|g| g.1 >= 1));
                let fill = f.stats.generated_bytes / 1000.0;
                assert!(
                    segs >= fill && segs < fill + f.stats.frames as f64,
                    "{segs} {fill}"
                );
                // At 512 kbit/s a frame is 2,560 B on average: padding adds about half a
                // packet per frame.
                assert!(segs > fill * 1.1, "{segs} {fill}");
            }
        }
        assert!(now < p.stop);
    }

    #[test]
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!(jain(&[0.0, 0.0]).is_nan());
    }

    /// RTPI bookkeeping: a gap above the threshold marks only the first packet after it; packets
    /// generated before the window count nowhere; RTPI = 1 - delayed - lost.
    #[test]
    fn delivery_marks_the_first_packet_after_a_stall() {
        let p = params(1, 512_000.0);
        let mut app =
            VideoApp::new(p.clone(), [10, 0, 0, 1], [10, 0, 0, 3], 7000, |_| rng(3)).unwrap();
        let f = &mut app.flows[0];
        let t = |s: f64| Instant::from_secs_f64(s);
        f.gen.extend([
            (t(1.0), 1),
            (t(2.0), 2),
            (t(2.1), 1),
            (t(2.2), 1),
            (t(2.3), 1),
        ]);
        f.stats.sent = 5;
        deliver(&p, f, t(2.05), 1); // before the window: counts nowhere
        deliver(&p, f, t(2.10), 2); // 50 ms later: timely, burst timely
        deliver(&p, f, t(2.50), 1); // 400 ms stall: delayed
        deliver(&p, f, t(2.52), 1); // timely; one packet never delivered (lost)
        assert_eq!((f.stats.timely, f.stats.delayed), (3, 1));
        assert_eq!(f.stats.window_bytes, 5 * 1000);
        let lost = f.stats.sent - f.stats.timely - f.stats.delayed;
        assert_eq!(lost, 1);
        assert_eq!(f.stats.unmatched, 0);
        // The lost packet after all, at the window's last instant: in RTPI's count and in
        // goodput alike.
        deliver(&p, f, p.stop, 1);
        assert_eq!(f.stats.timely + f.stats.delayed, 5);
        assert_eq!(f.stats.window_bytes, 6 * 1000);
        deliver(&p, f, p.stop + Duration::from_nanos(1), 1); // after it: neither
        assert_eq!(f.stats.timely + f.stats.delayed, 5);
        assert_eq!(f.stats.window_bytes, 6 * 1000);
        deliver(&p, f, t(2.6), 1); // one more than was generated: counted, not a panic
        assert_eq!(
            (f.stats.unmatched, f.stats.timely + f.stats.delayed),
            (2, 5)
        );
    }
}
