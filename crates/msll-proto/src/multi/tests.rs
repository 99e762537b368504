//! Multi-service endpoint tests: classification to services, service-number stamping and
//! demultiplexing, impartiality of the scheduler against a service's overhead (seed 004 sec. 6.1
//! "fairness"), bounded queues, timer scaling, measured rates and Table 8.1 metrics.

use crate::buf::Buf;

use super::*;
use crate::classifier::ClassifierKind;
use crate::packet::Packet;
use crate::service::{Outbox, Raw, Service};
use crate::time::Duration;
use crate::wire::ip::{IpProto, Ipv4Repr, UdpRepr};
use crate::wire::Frame;

const T0: Instant = Instant::ZERO;

fn udp(tos: u8, len: usize, k: u32) -> Packet {
    let mut b = vec![0u8; len];
    Ipv4Repr {
        src: [10, 0, 0, 1],
        dst: [10, 0, 0, 3],
        protocol: IpProto::UDP,
        tos,
        total_len: len as u16,
        ident: k as u16,
        ttl: 64,
        header_len: 20,
    }
    .emit(&mut b);
    UdpRepr {
        src_port: 5000,
        dst_port: 5000,
        len: (len - 20) as u16,
    }
    .emit(&mut b[20..]);
    b[28..32].copy_from_slice(&k.to_be_bytes());
    Packet::from_vec(b)
}

fn cellular() -> LinkInfo {
    crate::testing::thesis_link("cellular")
}

/// A service that spends 50 % extra on "retransmissions": every other packet is sent twice.
#[derive(Default)]
struct Wasteful {
    n: u64,
    stats: ServiceStats,
}

impl Service for Wasteful {
    fn handle_packet(&mut self, _now: Instant, packet: Packet, out: &mut Outbox) {
        let f = Frame::new(&[0], packet.into_bytes());
        if self.n % 2 == 1 {
            out.send(f.clone());
            self.stats.retransmissions += 1;
        }
        self.stats.data_frames += 1;
        self.n += 1;
        out.send(f);
    }
    fn handle_frame(&mut self, _now: Instant, frame: Frame, out: &mut Outbox) {
        out.deliver(Packet::new(frame.payload_from(1).unwrap()));
    }
    fn handle_timeout(&mut self, _now: Instant, _out: &mut Outbox) {}
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    fn stats(&self) -> ServiceStats {
        self.stats
    }
    fn name(&self) -> &'static str {
        "wasteful"
    }
}

/// Bytes each service gets on the link while both are backlogged.
fn link_split(discipline: Discipline) -> [u64; 2] {
    let services: Vec<Box<dyn Service>> = vec![Box::new(Wasteful::default()), Box::new(Raw::new())];
    let sched = Scheduler::new(discipline, &[1.0, 1.0], None);
    let mut ep = Endpoint::with_parts(
        services,
        Classifier::new(ClassifierConfig::default(), 2),
        sched,
        None,
    );
    // Both applications offer the same load: 4000 packets each, interleaved.
    for k in 0..4000 {
        ep.handle_packet(T0, udp(0, 100, k));
        ep.handle_packet(T0, udp(1, 100, k));
    }
    let mut bytes = [0u64; 2];
    // Stop well before either queue empties (service 1 holds 4000 frames).
    for _ in 0..4000 {
        let f = ep.poll_transmit(T0).unwrap();
        bytes[f.service() as usize] += f.len() as u64;
    }
    bytes
}

#[test]
fn impartiality_overhead_does_not_take_another_services_share() {
    // seed 004 sec. 6.1 (fairness): a scheme "must not overload the physical link at the expense
    // of other, more economical schemes". Equal rates: the economical service keeps >= 1/2.
    let [w, r] = link_split(Discipline::Scfq);
    let share = r as f64 / (w + r) as f64;
    assert!(share >= 0.5 * 0.99, "SCFQ: Raw share {share:.4}");
    // Without link scheduling the 50 % overhead takes bandwidth from the other service: with
    // arrivals W W R | W R | ..., Raw gets 1/2.5 = 0.4 of the link.
    let [w, r] = link_split(Discipline::Fifo);
    let share = r as f64 / (w + r) as f64;
    assert!((share - 0.4).abs() < 0.01, "FIFO: Raw share {share:.4}");
}

#[test]
fn classifier_stamps_scheduler_demux_strips() {
    let cfg = MsllConfig::from_names(&["default", "rlp-oos", "sr-m2"], &[]).unwrap();
    let mut a = cfg.build(&cellular(), Role::BaseStation, None);
    let mut b = cfg.build(&cellular(), Role::Host, None);
    for (k, tos) in [0u8, 1, 2, 9].into_iter().enumerate() {
        a.handle_packet(T0, udp(tos, 50, k as u32));
    }
    let mut seen = Vec::new();
    while let Some(f) = a.poll_transmit(T0) {
        seen.push(f.service());
        b.handle_frame(T0, Frame::from_wire(Buf::from(f.to_vec())).unwrap());
    }
    // DS 9 names no service: unmatched -> Default (service 0).
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(sorted, [0, 0, 1, 2]);
    let got: Vec<u8> = std::iter::from_fn(|| b.poll_deliver())
        .map(|p| p.as_slice()[1])
        .collect();
    assert_eq!(
        got.len(),
        4,
        "every packet delivered, each by its own service"
    );
    let c = b.service_counters();
    assert_eq!(
        (
            c[0].packets_delivered,
            c[1].packets_delivered,
            c[2].packets_delivered
        ),
        (2, 1, 1)
    );
    // A frame naming service 5 of 3 is counted and dropped by the demultiplexer.
    b.handle_frame(
        T0,
        Frame::from_wire(Buf::from_static(&[0x50, 1, 2])).unwrap(),
    );
    assert_eq!(b.stats().unknown_service, 1);
    assert_eq!(cfg.label(), "default+rlp-oos+sr-m2");
}

#[test]
fn timer_scaling_heuristics() {
    // seed 004 sec. 6.2.2 worked example: 2 services, service 1 gets 1/3 of the link:
    // heuristic 1 gives x2, heuristic 2 gives x3.
    assert_eq!(TimerScaling::Services.factor(2, 1.0 / 3.0), 2.0);
    assert!((TimerScaling::InverseShare.factor(2, 1.0 / 3.0) - 3.0).abs() < 1e-12);
    assert_eq!(TimerScaling::None.factor(2, 0.5), 1.0);
    assert_eq!(TimerScaling::Fixed(1.5).factor(7, 0.1), 1.5);
    // In an endpoint: the SR/M2 retransmission timer is doubled with 2 services (ch. 7 setting).
    let link = cellular();
    let rto = |scaling| {
        let mut cfg = MsllConfig::from_names(&["sr-m2", "rlp-oos"], &[1.0, 2.0]).unwrap();
        cfg.timer_scaling = scaling;
        let mut ep = cfg.build(&link, Role::Host, None);
        ep.handle_packet(T0, udp(0, 50, 0));
        ep.poll_transmit(T0).unwrap();
        ep.poll_timeout().unwrap().as_nanos()
    };
    let base = rto(TimerScaling::None);
    assert_eq!(rto(TimerScaling::Services), 2 * base);
    let inv = rto(TimerScaling::InverseShare) as f64 / base as f64;
    assert!((inv - 3.0).abs() < 1e-6, "TCP share 1/3 -> x3, got {inv}");
}

#[test]
fn bounded_queue_drops_are_counted() {
    let mut cfg = MsllConfig::from_names(&["default", "default"], &[]).unwrap();
    cfg.queue_limit = Some(5);
    let mut ep = cfg.build(&cellular(), Role::Host, None);
    for k in 0..8 {
        ep.handle_packet(T0, udp(0, 50, k));
    }
    ep.handle_packet(T0, udp(1, 50, 99));
    assert_eq!(ep.stats().queue_drops, 3);
    let c = ep.service_counters();
    assert_eq!((c[0].queue.dropped, c[1].queue.dropped), (3, 0));
    assert_eq!(c[0].packets_in, 8, "the classifier counted them all");
}

#[test]
fn measured_rates_follow_classifier_byte_shares() {
    let mut cfg = MsllConfig::from_names(&["default", "default"], &[]).unwrap();
    cfg.measure = Some(MeasureConfig {
        window_ms: 100.0,
        min_share: 0.01,
    });
    cfg.timer_scaling = TimerScaling::InverseShare;
    let mut ep = cfg.build(&cellular(), Role::Host, None);
    let mut t = T0;
    for k in 0..100 {
        ep.handle_packet(t, udp(0, 150, k));
        ep.handle_packet(t, udp(1, 50, k));
        t += Duration::from_millis(10);
    }
    let s = ep.shares();
    assert!((s[0] - 0.75).abs() < 0.01, "{s:?}");
}

#[test]
fn table_8_1_metrics() {
    // SR/M2 over a lossy pair: full recovery -> l = 0, g < 1 from headers and retransmissions.
    let link = cellular();
    let cfg = MsllConfig::from_names(&["sr-m2"], &[]).unwrap();
    let mut a = cfg.build(&link, Role::BaseStation, Some(link.rate));
    let mut b = cfg.build(&link, Role::Host, Some(link.rate));
    let mut now = T0;
    let mut k = 0u32;
    let mut wire: Vec<(Instant, Frame, bool)> = Vec::new();
    let mut drop_every = 0u32;
    let end = Instant::from_secs_f64(200.0);
    let (mut a_free, mut b_free) = (T0, T0);
    while now < end {
        if k < 1000 && a.next_accept() <= now && now >= T0 + Duration::from_millis(40 * k as u64) {
            a.handle_packet(now, udp(0, 50, k));
            k += 1;
        }
        a.handle_timeout(now);
        b.handle_timeout(now);
        for (ep, free, to_b) in [(&mut a, &mut a_free, true), (&mut b, &mut b_free, false)] {
            if *free <= now {
                if let Some(f) = ep.poll_transmit(now) {
                    let tx = link.rate.tx_time(f.len());
                    *free = now + tx;
                    drop_every += 1;
                    // 10 % of frames lost in each direction.
                    if !drop_every.is_multiple_of(10) {
                        wire.push((now + tx + link.delay, f, to_b));
                    }
                }
            }
        }
        let (due, rest): (Vec<_>, Vec<_>) = wire.drain(..).partition(|w| w.0 <= now);
        wire = rest;
        for (_, f, to_b) in due {
            if to_b {
                b.handle_frame(now, f);
            } else {
                a.handle_frame(now, f);
            }
        }
        while b.poll_deliver().is_some() {}
        now += Duration::from_millis(1);
    }
    let tx = a.service_counters()[0];
    let rx = b.service_counters()[0];
    assert_eq!(rx.packets_delivered, 1000, "SR/M2: full recovery");
    let m = ServiceMetrics::from_ends(&tx, &rx, &a.service_stats()[0], &link, 1.0);
    assert_eq!(m.loss, 0.0);
    assert!(m.goodput < 50.0 / 53.0 && m.goodput > 0.7, "{m:?}");
    assert!((m.effective_goodput - m.goodput).abs() < 1e-12);
    assert!((m.predicted_bps - 14_400.0 * m.goodput).abs() < 1e-6);
    // d: at least the one-way delay, plus retransmissions.
    assert!(
        m.delay_s > 0.1 + link.rate.tx_time(53).as_secs_f64(),
        "{m:?}"
    );
    let local = a.service_metrics();
    assert_eq!(local.len(), 1);
    assert!((local[0].goodput - m.goodput).abs() < 1e-12);
}

#[test]
fn config_serde_and_validation() {
    // The lab reads the same structure from TOML (`[msll]`); scheme names are resolved there.
    let cfg: MsllConfig = serde_json::from_str(
        r#"{
            "services": [{ "kind": "default" }, { "kind": "rlp", "max_naks": 1, "delivery": "out-of-sequence" }],
            "classifier": { "kind": "heuristic", "rules": [{ "protocol": 17, "ports": [5000, 5099], "service": 1 }] },
            "scheduler": "fifo",
            "rates": [1.0, 2.0],
            "timer_scaling": { "fixed": 2.0 },
            "queue_limit": 50
        }"#,
    )
    .unwrap();
    assert_eq!(cfg.classifier.kind, ClassifierKind::Heuristic);
    assert_eq!(cfg.scheduler, Discipline::Fifo);
    assert_eq!(cfg.timer_scaling, TimerScaling::Fixed(2.0));
    assert_eq!(cfg.label(), "default+rlp-oos/fifo");
    cfg.validate().unwrap();
    let mut bad = cfg.clone();
    bad.rates = vec![1.0];
    assert!(bad.validate().unwrap_err().starts_with("rates"));
    let mut bad = cfg.clone();
    bad.classifier.rules[0].service = 4;
    let e = bad.validate().unwrap_err();
    assert!(e.contains("service 4") && e.contains("2 entries"), "{e}");
    let mut bad = cfg.clone();
    bad.timer_scaling = TimerScaling::Fixed(0.1);
    assert!(bad
        .validate()
        .unwrap_err()
        .contains("timer_scaling.fixed = 0.1"));
    // An idle service's measured share needs a usable positive floor (session 33 review: 0 let
    // SCFQ stamps overflow to infinity); the range's edges are accepted and refused as stated.
    for (floor, ok) in [
        (0.0, false),
        (1e-7, false),
        (f64::NAN, false),
        (1.0, false),
        (1e-6, true),
        (0.01, true),
    ] {
        let mut m = cfg.clone();
        m.measure = Some(MeasureConfig {
            window_ms: 1000.0,
            min_share: floor,
        });
        match m.validate() {
            Ok(()) => assert!(ok, "{floor} accepted"),
            Err(e) => {
                assert!(!ok, "{floor} refused: {e}");
                assert!(
                    e.starts_with(&format!(
                        "measure.min_share = {floor}: must be in [1e-6, 1)"
                    )),
                    "{e}"
                );
            }
        }
    }
    let mut bad = cfg;
    bad.services = vec![SchemeConfig::Default; 17];
    bad.rates.clear();
    assert!(bad.validate().is_err());
}

/// Records the timer factor it is given.
struct FactorProbe(std::sync::Arc<std::sync::Mutex<f64>>);

impl Service for FactorProbe {
    fn handle_packet(&mut self, _now: Instant, _p: Packet, _out: &mut Outbox) {}
    fn handle_frame(&mut self, _now: Instant, _f: Frame, _out: &mut Outbox) {}
    fn handle_timeout(&mut self, _now: Instant, _out: &mut Outbox) {}
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    fn set_timer_factor(&mut self, f: f64) {
        *self.0.lock().unwrap() = f;
    }
    fn stats(&self) -> ServiceStats {
        ServiceStats::default()
    }
    fn name(&self) -> &'static str {
        "probe"
    }
}

#[test]
fn adaptive_timer_services_are_exempt_from_scaling() {
    // seed004-ch6-9.md sec. 2.4: Snoop keeps its own RTT-based timers, no x2.
    use std::sync::{Arc, Mutex};
    let (a, b) = (Arc::new(Mutex::new(0.0)), Arc::new(Mutex::new(0.0)));
    let services: Vec<Box<dyn Service>> = vec![
        Box::new(FactorProbe(a.clone())),
        Box::new(FactorProbe(b.clone())),
    ];
    let mut ep = Endpoint::new(
        services,
        Classifier::new(ClassifierConfig::default(), 2),
        None,
    );
    ep.set_timer_scaling_exempt(0, true);
    ep.set_timer_scaling(TimerScaling::Services);
    assert_eq!((*a.lock().unwrap(), *b.lock().unwrap()), (1.0, 2.0));
    ep.set_timer_scaling_exempt(0, false);
    assert_eq!(*a.lock().unwrap(), 2.0);
    // MsllConfig exempts Snoop by itself; it still builds and classifies.
    let cfg = MsllConfig::from_names(&["snoop", "rlp-oos"], &[1.0, 1.0]).unwrap();
    let ep = cfg.build(&cellular(), Role::BaseStation, None);
    assert_eq!(ep.service_names(), ["snoop", "rlp-oos"]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// Arbitrary bytes from IP and from the link never panic a multi-service endpoint, and the
    /// per-service counters add up to the endpoint's.
    #[test]
    fn arbitrary_input_never_panics(
        ops in proptest::collection::vec(
            (0u8..4, proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80)),
            1..200,
        ),
        fifo in proptest::prelude::any::<bool>(),
    ) {
        let mut cfg = MsllConfig::from_names(&["default", "rlp-oos", "sr-m2"], &[1.0, 2.0, 1.0]).unwrap();
        cfg.queue_limit = Some(4);
        if fifo {
            cfg.scheduler = Discipline::Fifo;
        }
        let mut ep = cfg.build(&cellular(), Role::Host, None);
        let mut now = T0;
        for (op, bytes) in ops {
            now += Duration::from_millis(7);
            match op {
                0 => ep.handle_packet(now, Packet::from_vec(bytes)),
                1 => {
                    if let Some(f) = Frame::from_wire(Buf::from(bytes)) {
                        ep.handle_frame(now, f);
                    }
                }
                2 => ep.handle_timeout(now),
                _ => {
                    let _ = ep.poll_transmit(now);
                }
            }
            while ep.poll_deliver().is_some() {}
        }
        let c = ep.service_counters();
        let s = ep.stats();
        proptest::prop_assert_eq!(c.iter().map(|x| x.frames_out).sum::<u64>(), s.frames_transmitted);
        proptest::prop_assert_eq!(c.iter().map(|x| x.queue.dropped).sum::<u64>(), s.queue_drops);
        proptest::prop_assert_eq!(
            c.iter().map(|x| x.frames_received).sum::<u64>() + s.unknown_service,
            s.frames_received
        );
    }
}

#[test]
fn sampled_metrics_follow_the_interval_and_smooth() {
    // A Default service: g = 50/51 per frame. The first sample is taken as is; later ones are
    // smoothed with weight 1/8; an idle interval leaves the value alone.
    let link = cellular();
    let cfg = MsllConfig::from_names(&["default", "default"], &[]).unwrap();
    let mut ep = cfg.build(&link, Role::Host, None);
    assert_eq!(ep.sample_metrics(0.125)[0], ServiceMetrics::default());
    for k in 0..10 {
        ep.handle_packet(T0, udp(0, 50, k));
    }
    while ep.poll_transmit(T0).is_some() {}
    let m = ep.sample_metrics(0.125);
    assert!((m[0].goodput - 50.0 / 51.0).abs() < 1e-12, "{m:?}");
    assert_eq!(m[1], ServiceMetrics::default(), "service 1 idle");
    let again = ep.sample_metrics(0.125);
    assert_eq!(again[0], m[0], "idle interval: unchanged");
    // 100-byte packets: sample g = 100/101; smoothed = 7/8 old + 1/8 new.
    for k in 0..10 {
        ep.handle_packet(T0, udp(0, 100, k));
    }
    while ep.poll_transmit(T0).is_some() {}
    let m2 = ep.sample_metrics(0.125);
    let want = 0.875 * 50.0 / 51.0 + 0.125 * 100.0 / 101.0;
    assert!((m2[0].goodput - want).abs() < 1e-12, "{m2:?}");
    assert!((m2[0].predicted_bps - 14_400.0 * 0.5 * want).abs() < 1e-6);
}

/// Packets handed over in an interval with nothing sent count when they are sent (review,
/// session 47: the interval was skipped whole and its input bytes lost, so the next sample read
/// g = 0); an interval that only received leaves g alone (it sampled 0/0 = 0); a weight that
/// is not a number changes nothing.
#[test]
fn sampled_metrics_carry_unsent_input_and_ignore_one_sided_intervals() {
    let link = cellular();
    let cfg = MsllConfig::from_names(&["default", "default"], &[]).unwrap();
    let mut ep = cfg.build(&link, Role::Host, None);
    for k in 0..10 {
        ep.handle_packet(T0, udp(0, 50, k));
    }
    // Handed over to the scheduler, nothing sent yet.
    assert_eq!(ep.sample_metrics(0.125)[0], ServiceMetrics::default());
    while ep.poll_transmit(T0).is_some() {}
    let m = ep.sample_metrics(0.125);
    assert!((m[0].goodput - 50.0 / 51.0).abs() < 1e-12, "{m:?}");
    // Receive only: a Default frame of service 0 delivered, nothing sent.
    let wire = [&[0u8][..], udp(0, 50, 99).as_slice()].concat();
    ep.handle_frame(T0, Frame::from_wire(Buf::from(wire)).unwrap());
    assert_eq!(ep.service_counters()[0].packets_delivered, 1);
    let r = ep.sample_metrics(0.125);
    assert_eq!(r[0].goodput, m[0].goodput, "{r:?}");
    assert_eq!(r[0].loss, 0.0);
    let n = ep.sample_metrics(f64::NAN);
    assert!(n[0].goodput.is_finite() && n[0].goodput == r[0].goodput);
}

/// A frame that waits in the scheduler longer than its service's retransmission timeout, behind
/// a backlogged service of a 200 times larger share, is still waiting: the endpoint reports every
/// drop, so SR does not take it for dropped after a quiet period and queue a second copy (review,
/// session 44: it did, at about 2 RTOs, and sent sequence 0 twice before any acknowledgement).
#[test]
fn a_frame_waiting_behind_a_large_share_is_not_taken_for_dropped() {
    let cfg = MsllConfig::from_names(&["sr-m2", "default"], &[1.0, 200.0]).unwrap();
    let link = cellular();
    let mut ep = cfg.build(&link, Role::Host, None);
    for k in 0..210 {
        ep.handle_packet(T0, udp(1, 100, k));
    }
    ep.handle_packet(T0, udp(0, 100, 999));
    let mut now = T0;
    let mut sr_sent = Vec::new();
    // Drive the link alone (no peer, so no acknowledgement), timers as they fall due, until
    // half an RTO after the SR frame's first transmission (then SR may rightly resend it).
    let rto = Duration::from_millis(300);
    while sr_sent.first().is_none_or(|&t| now < t + rto) {
        if ep.poll_timeout().is_some_and(|t| t <= now) {
            ep.handle_timeout(now);
        }
        match ep.poll_transmit(now) {
            Some(f) => {
                if f.service() == 0 {
                    sr_sent.push(now);
                }
                now += link.rate.tx_time(f.len());
            }
            None => match ep.poll_timeout() {
                Some(t) => now = now.max(t),
                None => break,
            },
        }
    }
    // It waited far longer than SR's timeout ...
    assert!(sr_sent[0] > T0 + Duration::from_secs(5), "{sr_sent:?}");
    // ... and went on the link once, with no retransmission counted.
    assert_eq!(sr_sent.len(), 1, "{sr_sent:?}");
    assert_eq!(ep.service_stats()[0].retransmissions, 0);
}

/// A scheduler with more queues than the endpoint has services is refused: the extra rates would
/// count in every service's share, and shares would sum to less than 1.
#[test]
#[should_panic(expected = "a scheduler of 3 queues for 2 services")]
fn a_scheduler_with_more_queues_than_services_is_refused() {
    let services: Vec<Box<dyn Service>> = vec![Box::new(Raw::new()), Box::new(Raw::new())];
    let sched = Scheduler::new(Discipline::Scfq, &[1.0, 1.0, 1.0], None);
    let _ = Endpoint::with_parts(
        services,
        Classifier::new(ClassifierConfig::default(), 2),
        sched,
        None,
    );
}
