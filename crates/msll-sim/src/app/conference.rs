//! Real-time conferencing over UDP (seed 004 ch. 5 §5.1, seed004-ch5.md §2).
//!
//! The speaker alternates talkspurts and silences with exponential durations (means 1 s and
//! 1.35 s, the PRMA speech model of Nanda, Goodman and Timor). While talking it sends fixed-size
//! packets at the isochronous interval size*8/peak_rate. AMB-9 (seed004-ch5 §10): packets at
//! t0, t0+D, ... while talk time remains, at least one packet per talkspurt; the first packet of
//! the next talkspurt follows the last one after the interval plus the silence (as ns-2's EXPOO).
//! So a talkspurt of length T carries ceil(T/D) packets, where EXPOO sends round(T/D) (at least
//! one): about half a packet more per talkspurt, +0.3 % (WLAN) to +1.8 % (PCS) of the mean rate.
//!
//! Packet layout (real bytes): IPv4 (20) + UDP (8) + sequence number (4) + send timestamp in ns
//! (8) + a 32-bit check of the two (4), padded to the configured size; the instrumentation the
//! seed added to its UDP agents (seed004-ch5 §2.6), plus the check. The sink computes loss from
//! sequence numbers and delay from timestamps.

use msll_proto::wire::ip::{IpProto, Ipv4Repr, UdpRepr, IPV4_HEADER_LEN, UDP_HEADER_LEN};
use msll_proto::{Duration, Instant, Packet};
use rand::Rng;
use rand_distr::Exp1;

use crate::rng::SimRng;

/// Bytes of headers + instrumentation; the smallest conferencing packet.
pub const CONF_MIN_PACKET: usize = IPV4_HEADER_LEN + UDP_HEADER_LEN + INSTRUMENTATION;

/// Sequence number, send time and their check.
const INSTRUMENTATION: usize = 16;

/// A nonlinear 32-bit check of a packet's sequence number and send time (SplitMix64's
/// finaliser). The sink refuses a packet whose check does not match: an XOR parity rebuild
/// from an aliased block (`service::xor`'s 3-bit block numbers) is the XOR of several packets
/// of the stream, and XOR preserves the IPv4 header checksum of packets with consecutive
/// identifiers most of the time (85-97 %: review, session 36), but not a nonlinear check.
fn instrumentation_check(seq: u32, sent_ns: u64) -> u32 {
    let mut z = ((seq as u64) << 32 ^ sent_ns.rotate_left(17)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Addressing {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub src_port: u16,
    pub dst_port: u16,
    pub tos: u8,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    Talking { until: Instant, first: bool },
    Silent { until: Instant },
}

/// The talkspurt source.
#[derive(Debug, Clone)]
pub struct OnOffSource {
    addr: Addressing,
    size: usize,
    interval: Duration,
    talk_mean_s: f64,
    silence_mean_s: f64,
    stop_at: Instant,
    phase: Phase,
    next_send: Instant,
    seq: u32,
    rng: SimRng,
    pub sent: u64,
    /// Each talkspurt's first send instant and first sequence number (`sent_before`). Within
    /// a talkspurt packets leave exactly `interval` apart, so this is every send time at one
    /// entry per talkspurt (review, session 45: one entry per packet grew to 400 MB over a
    /// 1e6 s capped run).
    spurts: Vec<(Instant, u64)>,
}

impl OnOffSource {
    /// # Panics
    /// If `size` < [`CONF_MIN_PACKET`] or the rate is zero (validated by the configuration layer).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        addr: Addressing,
        size: usize,
        peak_bps: u64,
        talk_mean_s: f64,
        silence_mean_s: f64,
        start: Instant,
        stop_at: Instant,
        mut rng: SimRng,
    ) -> Self {
        assert!(size >= CONF_MIN_PACKET && peak_bps > 0);
        let interval =
            Duration::from_nanos(((size as u128 * 8 * 1_000_000_000) / peak_bps as u128) as u64);
        let talk = Duration::from_secs_f64(rng.sample::<f64, _>(Exp1) * talk_mean_s);
        OnOffSource {
            addr,
            size,
            interval,
            talk_mean_s,
            silence_mean_s,
            stop_at,
            phase: Phase::Talking {
                until: start + talk,
                first: true,
            },
            next_send: start,
            seq: 0,
            rng,
            sent: 0,
            spurts: Vec::new(),
        }
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    fn build(&mut self, now: Instant) -> Packet {
        let (addr, seq) = (self.addr, self.seq);
        let size = self.size;
        let b = msll_proto::Buf::zeroed_with(size, |b| {
            Ipv4Repr {
                src: addr.src,
                dst: addr.dst,
                protocol: IpProto::UDP,
                tos: addr.tos,
                total_len: size as u16,
                ident: seq as u16,
                ttl: 64,
                header_len: IPV4_HEADER_LEN,
            }
            .emit(&mut b[..IPV4_HEADER_LEN]);
            let h = IPV4_HEADER_LEN + UDP_HEADER_LEN;
            UdpRepr {
                src_port: addr.src_port,
                dst_port: addr.dst_port,
                len: (size - IPV4_HEADER_LEN) as u16,
            }
            .emit(&mut b[IPV4_HEADER_LEN..h]);
            // Instrumentation: sequence number and send time (big-endian, as `put_u32/u64` wrote).
            b[h..h + 4].copy_from_slice(&seq.to_be_bytes());
            b[h + 4..h + 12].copy_from_slice(&now.as_nanos().to_be_bytes());
            b[h + 12..h + 16]
                .copy_from_slice(&instrumentation_check(seq, now.as_nanos()).to_be_bytes());
        });
        self.seq += 1;
        self.sent += 1;
        Packet::new(b)
    }

    pub fn handle_timeout(&mut self, now: Instant, out: &mut Vec<Packet>) {
        loop {
            if self.next_send > now || self.next_send >= self.stop_at {
                return;
            }
            match self.phase {
                Phase::Talking { until, first } => {
                    if first || self.next_send < until {
                        let t = self.next_send;
                        if first {
                            self.spurts.push((t, self.sent));
                        }
                        out.push(self.build(t));
                        self.next_send = t + self.interval;
                        self.phase = Phase::Talking {
                            until,
                            first: false,
                        };
                    } else {
                        let silence = Duration::from_secs_f64(
                            self.rng.sample::<f64, _>(Exp1) * self.silence_mean_s,
                        );
                        // ns-2's exponential on/off source adds the off time to the regular
                        // interval, so packets are never closer than the interval and a Default
                        // link shows the constant minimum delay (seed004-ch5 §3 M2).
                        let end = self.next_send + silence;
                        self.phase = Phase::Silent { until: end };
                        self.next_send = end;
                    }
                }
                Phase::Silent { until } => {
                    let talk =
                        Duration::from_secs_f64(self.rng.sample::<f64, _>(Exp1) * self.talk_mean_s);
                    self.phase = Phase::Talking {
                        until: until + talk,
                        first: true,
                    };
                    self.next_send = until;
                }
            }
        }
    }

    /// Packets sent before `t` (sequence numbers `0..n`: packets go out in sequence order).
    pub fn sent_before(&self, t: Instant) -> u64 {
        // The last talkspurt that began before `t`; its packets before `t` are those at
        // `start + k * interval < t`, k = 0, 1, ..., up to where the next one begins.
        let i = self.spurts.partition_point(|&(start, _)| start < t);
        let Some(&(start, first)) = i.checked_sub(1).map(|i| &self.spurts[i]) else {
            return 0;
        };
        let end = self.spurts.get(i).map_or(self.sent, |&(_, next)| next);
        let span = (t - start).as_nanos();
        let step = self.interval.as_nanos();
        let k = if step == 0 {
            u64::MAX
        } else {
            span.div_ceil(step)
        };
        first + k.min(end - first)
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        (self.next_send < self.stop_at).then_some(self.next_send)
    }
}

/// How far a packet's sequence number may lie beyond `UdpSink::seen` (whose length is up to
/// twice the highest number seen): a run of 2^24 losses at least.
const MAX_SEQ_JUMP: usize = 1 << 24;

/// Delay statistics of the packets taken so far (Welford: numerically stable over 10^5 samples).
#[derive(Debug, Clone, Copy)]
pub struct DelayStats {
    pub count: u64,
    mean_ms: f64,
    m2: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

impl Default for DelayStats {
    fn default() -> Self {
        DelayStats {
            count: 0,
            mean_ms: 0.0,
            m2: 0.0,
            min_ms: f64::INFINITY,
            max_ms: f64::NEG_INFINITY,
        }
    }
}

impl DelayStats {
    fn add(&mut self, d: f64) {
        self.count += 1;
        let delta = d - self.mean_ms;
        self.mean_ms += delta / self.count as f64;
        self.m2 += delta * (d - self.mean_ms);
        self.min_ms = self.min_ms.min(d);
        self.max_ms = self.max_ms.max(d);
    }

    /// NaN when no packet was taken: no delay was measured (not 0, a perfect link).
    pub fn mean_ms(&self) -> f64 {
        if self.count > 0 {
            self.mean_ms
        } else {
            f64::NAN
        }
    }

    /// Sample standard deviation (AMB-12); NaN below two packets, as `Summary::of` gives for
    /// one measurement (no spread was measured).
    pub fn sd_ms(&self) -> f64 {
        if self.count > 1 {
            (self.m2 / (self.count - 1) as f64).sqrt()
        } else {
            f64::NAN
        }
    }
}

/// Instrumented UDP receiver: loss by sequence number, per-packet delay statistics.
///
/// A run without a drain leaves the packets sent in its last `conf_end_guard_s` out of its
/// loss (AMB-10, `Simulation::run`); with `hold_back` set, the sink holds the delays of the
/// packets sent in the last `hold_back` before the newest reception, so that the same packets
/// can be left out of the delay statistics (`delays_below`). Packets leave the hold in
/// reception order, so the statistics fold the same delays in the same order as without it.
#[derive(Debug, Clone, Default)]
pub struct UdpSink {
    seen: Vec<bool>,
    pub received: u64,
    pub duplicates: u64,
    pub malformed: u64,
    delays: DelayStats,
    hold_back: Option<Duration>,
    /// (send time, sequence number, delay in ms) of the held packets, in reception order.
    held: std::collections::VecDeque<(Instant, u32, f64)>,
}

impl UdpSink {
    pub fn new() -> Self {
        UdpSink::default()
    }

    /// Hold the delays of packets sent less than `d` before the newest reception (see the type).
    pub fn hold_back(&mut self, d: Duration) {
        self.hold_back = Some(d);
    }

    pub fn handle_packet(&mut self, now: Instant, pkt: &Packet) {
        let b = pkt.as_slice();
        let off = IPV4_HEADER_LEN + UDP_HEADER_LEN;
        if b.len() < off + INSTRUMENTATION {
            self.malformed += 1;
            return;
        }
        let seq = u32::from_be_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]]);
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&b[off + 4..off + 12]);
        let sent_ns = u64::from_be_bytes(ts);
        let check = u32::from_be_bytes([b[off + 12], b[off + 13], b[off + 14], b[off + 15]]);
        // A packet the source cannot have sent: a header that fails the IPv4 checksum (what an
        // IP receiver checks first), a check word that does not match (an FEC rebuild from an
        // aliased block: `instrumentation_check`), or a sequence number so far ahead that it
        // would size `seen` to it (up to 4 GiB). Counted, not taken as a packet with a garbage
        // sequence number and delay (review, session 36).
        let seq = seq as usize;
        if msll_proto::wire::ip::checksum(&b[..IPV4_HEADER_LEN]) != 0
            || check != instrumentation_check(seq as u32, sent_ns)
            || seq > self.seen.len() + MAX_SEQ_JUMP
        {
            self.malformed += 1;
            return;
        }
        let sent = Instant::from_nanos(sent_ns);
        if seq >= self.seen.len() {
            self.seen.resize((seq + 1).max(self.seen.len() * 2), false);
        }
        if self.seen[seq] {
            self.duplicates += 1;
            return;
        }
        self.seen[seq] = true;
        self.received += 1;
        let d = (now - sent).as_millis_f64();
        match self.hold_back {
            None => self.delays.add(d),
            Some(h) => {
                // A packet sent before now - h was sent before the run's cutoff (end - h, with
                // end >= now): it counts whatever the end.
                while let Some(&(s, _, d)) = self.held.front() {
                    if s + h >= now {
                        break;
                    }
                    self.delays.add(d);
                    self.held.pop_front();
                }
                self.held.push_back((sent, seq as u32, d));
            }
        }
    }

    /// Delay statistics of every packet taken (held ones included, in reception order).
    pub fn delays(&self) -> DelayStats {
        self.delays_below(u64::MAX)
    }

    /// Delay statistics of the packets taken among sequence numbers `0..n`: the held packets
    /// from `n` on are left out (the cutoff of `Simulation::run`, as `received_below`).
    pub fn delays_below(&self, n: u64) -> DelayStats {
        let mut st = self.delays;
        for &(_, seq, d) in &self.held {
            if u64::from(seq) < n {
                st.add(d);
            }
        }
        st
    }

    /// Packets received, counting once each, among sequence numbers `0..n`.
    pub fn received_below(&self, n: u64) -> u64 {
        let n = (n as usize).min(self.seen.len());
        self.seen[..n].iter().filter(|&&x| x).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Streams;

    fn addr() -> Addressing {
        Addressing {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 3],
            src_port: 5000,
            dst_port: 5000,
            tos: 0,
        }
    }

    /// Cellular's source (50 B at 9.6 kbit/s, talk 1 s, silence 1.35 s) from 0 to `stop_s`.
    fn cellular_source(stop_s: f64) -> OnOffSource {
        OnOffSource::new(
            addr(),
            50,
            9600,
            1.0,
            1.35,
            Instant::ZERO,
            Instant::from_secs_f64(stop_s),
            Streams::new(1, 0).fixed("c"),
        )
    }

    #[test]
    fn activity_factor_and_interval() {
        // Cellular: 50 B at 9.6 kbit/s = 41.67 ms; activity 1/(1+1.35) = 42.55 %.
        let mut s = cellular_source(400_000.0);
        assert_eq!(s.interval().as_nanos(), 41_666_666);
        let mut out = Vec::new();
        let mut sent_at = Vec::new();
        while let Some(t) = s.poll_timeout() {
            s.handle_timeout(t, &mut out);
            sent_at.resize(out.len(), t);
        }
        // Each cycle: a talkspurt T (mean 1 s) of ceil(T/D) packets (AMB-9), the last one's
        // interval past T by D/2 on average, then the silence (1.35 s): ~1/D + 1/2 packets per
        // cycle of 2.35 + D/2 s.
        let d = 0.041_666_666;
        let expected = 400_000.0 / (2.35 + d / 2.0) * (1.0 / d + 0.5);
        let got = out.len() as f64;
        assert!(
            (got / expected - 1.0).abs() < 0.01,
            "packets {got} vs ~{expected}"
        );
        // Packets per talkspurt (a gap longer than the interval starts one): T/D is exponential
        // with mean 1/D = 24, so ceil(T/D) averages 1/(1 - e^(-D)) = 24.50 and ns-2's round(T/D)
        // 24.00. The total alone cannot tell them apart: fewer packets also shorten the cycles
        // (review, session 40: the old check, a cycle of 2.35 + D at 3 %, let either through).
        // ~170,000 talkspurts: the mean's sd is ~0.06 packets.
        let spurts = 1 + sent_at
            .windows(2)
            .filter(|w| w[1].saturating_since(w[0]) > s.interval())
            .count();
        let excess = got / spurts as f64 - 1.0 / d;
        assert!(
            (0.3..0.7).contains(&excess),
            "{excess} packets over T/D per talkspurt"
        );
        // strictly increasing send times, never closer than the interval
        assert!(sent_at
            .windows(2)
            .all(|w| w[1].saturating_since(w[0]) >= s.interval()));
        let mut sink = UdpSink::new();
        for p in &out {
            assert_eq!(p.len(), 50);
            sink.handle_packet(Instant::from_secs_f64(30_000.0), p);
        }
        assert_eq!(sink.received, out.len() as u64);
        sink.handle_packet(Instant::ZERO, &out[0]);
        assert_eq!(sink.duplicates, 1);
    }

    /// What an XOR rebuild from an aliased block delivers (the XOR of an odd number of
    /// consecutive packets of the stream) is refused, not counted as a received packet with a
    /// garbage sequence number and delay. The IPv4 header checksum alone let 85-97 % of them
    /// through (review, session 36: consecutive identifiers); the check word lets none. So is a
    /// packet whose sequence number is 2^24 beyond those seen.
    #[test]
    fn the_sink_refuses_what_the_source_cannot_have_sent() {
        let wlan = OnOffSource::new(
            Addressing { tos: 1, ..addr() },
            1000,
            425_000,
            1.0,
            1.35,
            Instant::ZERO,
            Instant::from_secs_f64(100.0),
            Streams::new(1, 0).fixed("c"),
        );
        for mut s in [cellular_source(100.0), wlan] {
            let mut out = Vec::new();
            while let Some(t) = s.poll_timeout() {
                s.handle_timeout(t, &mut out);
            }
            let mut sink = UdpSink::new();
            let now = Instant::from_secs_f64(200.0);
            let mut refused = 0;
            for n in [3, 5, 7] {
                for w in out.windows(n).step_by(n).take(200) {
                    let mut x = w[0].as_slice().to_vec();
                    for p in &w[1..] {
                        x.iter_mut().zip(p.as_slice()).for_each(|(a, b)| *a ^= b);
                    }
                    sink.handle_packet(now, &Packet::new(msll_proto::Buf::copy_from_slice(&x)));
                    refused += 1;
                }
            }
            assert_eq!(sink.malformed, refused);
            assert_eq!(sink.received, 0);
            // A far sequence number, with its check word, in an otherwise valid packet.
            let mut far = out[0].as_slice().to_vec();
            let off = IPV4_HEADER_LEN + UDP_HEADER_LEN;
            let ts = u64::from_be_bytes(far[off + 4..off + 12].try_into().unwrap());
            far[off..off + 4].copy_from_slice(&u32::MAX.to_be_bytes());
            far[off + 12..off + 16]
                .copy_from_slice(&instrumentation_check(u32::MAX, ts).to_be_bytes());
            sink.handle_packet(now, &Packet::new(msll_proto::Buf::copy_from_slice(&far)));
            assert_eq!(sink.malformed, refused + 1);
            // Every third packet twice, the rest once: counted once each.
            for (i, p) in out.iter().enumerate() {
                sink.handle_packet(now, p);
                if i % 3 == 0 {
                    sink.handle_packet(now, p);
                }
            }
            assert_eq!(sink.received, out.len() as u64);
            assert_eq!(s.sent_before(Instant::ZERO), 0);
            assert_eq!(s.sent_before(Instant::from_secs_f64(1e9)), out.len() as u64);
            assert_eq!(sink.received_below(10), 10);
            assert_eq!(sink.received_below(u64::MAX), out.len() as u64);
        }
    }

    /// `sent_before` from one entry per talkspurt counts exactly the packets a list of every
    /// send time would: at each send instant, a nanosecond either side, midway between sends,
    /// in silences, before the first and after the last.
    #[test]
    fn sent_before_counts_exactly_what_every_send_time_would() {
        let sent_at = |p: &Packet| {
            let off = IPV4_HEADER_LEN + UDP_HEADER_LEN;
            Instant::from_nanos(u64::from_be_bytes(
                p.as_slice()[off + 4..off + 12].try_into().unwrap(),
            ))
        };
        let mut s = cellular_source(500.0);
        let mut out = Vec::new();
        while let Some(t) = s.poll_timeout() {
            s.handle_timeout(t, &mut out);
        }
        let times: Vec<Instant> = out.iter().map(sent_at).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]));
        let spurts = s.spurts.len();
        assert!(
            spurts > 100 && spurts * 10 < times.len(),
            "{spurts} talkspurts"
        );
        let brute = |t: Instant| times.iter().filter(|&&x| x < t).count() as u64;
        let ns = Duration::from_nanos(1);
        let mut probes = vec![Instant::ZERO, Instant::from_secs_f64(1e9)];
        for w in times.windows(2) {
            let mid = w[0] + Duration::from_nanos((w[1] - w[0]).as_nanos() / 2);
            probes.extend([w[0], w[0] + ns, w[0] - ns, mid]);
        }
        probes.push(*times.last().unwrap() + ns);
        for t in probes {
            assert_eq!(s.sent_before(t), brute(t), "at {t:?}");
        }
    }

    /// A sink that holds the last packets back gives, for any cutoff, exactly the delay
    /// statistics of a plain sink fed only the packets below it, in the same order (bit for
    /// bit), and for no cutoff those of a plain sink fed everything; one packet has no SD.
    #[test]
    fn held_packets_leave_the_delays_exactly_where_the_cutoff_says() {
        let mut s = cellular_source(200.0);
        let mut out = Vec::new();
        while let Some(t) = s.poll_timeout() {
            s.handle_timeout(t, &mut out);
        }
        let sent_at = |p: &Packet| {
            let off = IPV4_HEADER_LEN + UDP_HEADER_LEN;
            Instant::from_nanos(u64::from_be_bytes(
                p.as_slice()[off + 4..off + 12].try_into().unwrap(),
            ))
        };
        // Delays of 30 to 2,030 ms, some packets lost, pairs swapped: reception order is not
        // send order, and the hold's head can be a packet sent after one behind it.
        let mut rx: Vec<(Instant, &Packet)> = out
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 7 != 3)
            .map(|(i, p)| {
                let d = 0.03 + (i * 37 % 101) as f64 * 0.02;
                (sent_at(p) + Duration::from_secs_f64(d), p)
            })
            .collect();
        rx.sort_by_key(|&(t, _)| t);
        let end = rx.last().unwrap().0;
        let guard = Duration::from_secs_f64(20.0);
        let mut held = UdpSink::new();
        held.hold_back(guard);
        for &(t, p) in &rx {
            held.handle_packet(t, p);
        }
        let n = s.sent_before(end - guard);
        assert!(n > 100 && n + 20 < out.len() as u64, "{n} of {}", out.len());
        for (cut, want_n) in [(Some(n), n), (None, out.len() as u64)] {
            let mut plain = UdpSink::new();
            for &(t, p) in &rx {
                let seq = u32::from_be_bytes(p.as_slice()[28..32].try_into().unwrap());
                if u64::from(seq) < want_n {
                    plain.handle_packet(t, p);
                }
            }
            let (a, b) = match cut {
                Some(n) => (held.delays_below(n), plain.delays()),
                None => (held.delays(), plain.delays()),
            };
            assert!(a.count > 100 && a.count == b.count);
            for (x, y) in [
                (a.mean_ms(), b.mean_ms()),
                (a.sd_ms(), b.sd_ms()),
                (a.min_ms, b.min_ms),
                (a.max_ms, b.max_ms),
            ] {
                assert_eq!(x.to_bits(), y.to_bits());
            }
        }
        assert!(held.delays_below(n).count + 100 < held.delays().count);
        // Most packets left the hold on the way (it is bounded by the guard, not the run).
        assert!(held.held.len() < out.len() / 4, "{} held", held.held.len());
        let mut one = UdpSink::new();
        one.handle_packet(end, &out[0]);
        assert_eq!(one.delays().count, 1);
        assert!(one.delays().sd_ms().is_nan() && !one.delays().mean_ms().is_nan());
        assert!(UdpSink::new().delays().mean_ms().is_nan());
    }
}
