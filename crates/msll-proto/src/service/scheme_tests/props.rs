//! Property tests over random loss patterns (seed004-ch4 sec. 3.2-sec. 3.6, seed004-ch5 sec. 4.2-sec. 4.6).
//!
//! Loss patterns are "eventually lossless": each direction drops frames according to a random
//! vector for its first frames and never afterwards, so full-recovery schemes must finish.
//! Case counts: 10 000 per property by default; set PROPTEST_CASES to override.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use crate::service::test_support::{iid, numbers};
use crate::service::{LinkInfo, Role, SchemeConfig};
use crate::testing::{number_of, numbered, Dir, Pair};
use crate::time::{DataRate, Duration, Instant};
use crate::wire::{RlpFrame, RseFrame, XorFrame};

/// A small fast link: 1 Mbit/s, 5 ms, 100-byte payloads (timers derive from it).
fn link() -> LinkInfo {
    LinkInfo {
        rate: DataRate::from_bps(1_000_000).unwrap(),
        delay: Duration::from_millis(5),
        frame_payload: 100,
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000),
        max_shrink_iters: 2_000,
        ..ProptestConfig::default()
    }
}

fn pair(cfg: &SchemeConfig, loss_ab: Vec<bool>, loss_ba: Vec<bool>) -> Pair {
    let l = link();
    Pair::new(
        cfg.build(&l, Role::Host),
        cfg.build(&l, Role::Host),
        l.rate,
        l.delay,
    )
    .with_loss(move |d, i, _| {
        let v = if d == Dir::AtoB { &loss_ab } else { &loss_ba };
        v.get(i as usize).copied().unwrap_or(false)
    })
}

/// Script packets with the given gaps (in units of 0.1 ms) and lengths.
fn script(p: &mut Pair, from_a: bool, base: u32, gaps: &[(u16, u8)]) -> Instant {
    let mut t = Instant::ZERO;
    for (i, (gap, len)) in gaps.iter().enumerate() {
        t += Duration::from_micros(*gap as u64 * 100);
        p.send_at(from_a, t, numbered(base + i as u32, 4 + *len as usize % 97));
    }
    t
}

fn arq_scheme() -> impl Strategy<Value = SchemeConfig> {
    (
        prop_oneof![Just("gbn"), Just("sr"), Just("sr-m1"), Just("sr-m2")],
        prop_oneof![3 => Just(127u8), 1 => 1u8..=8],
        any::<bool>(),
    )
        .prop_map(
            |(name, w, oldest)| match SchemeConfig::from_name(name).unwrap() {
                SchemeConfig::Gbn {
                    rto_ms,
                    rto_queue_frames,
                    ack_delay_ms,
                    ..
                } => SchemeConfig::Gbn {
                    window: w,
                    rto_ms,
                    rto_queue_frames,
                    ack_delay_ms,
                },
                SchemeConfig::Sr {
                    nak_policy,
                    rto_ms,
                    rto_queue_frames,
                    ack_delay_ms,
                    ..
                } => SchemeConfig::Sr {
                    nak_policy,
                    window: w,
                    rto_ms,
                    rto_queue_frames,
                    ack_delay_ms,
                    timer: if oldest {
                        crate::service::RetransmitTimer::Oldest
                    } else {
                        crate::service::RetransmitTimer::PerFrame
                    },
                },
                _ => unreachable!(),
            },
        )
}

/// The send window of a GBN/SR configuration.
fn window_of(cfg: &SchemeConfig) -> usize {
    match cfg {
        SchemeConfig::Gbn { window, .. } | SchemeConfig::Sr { window, .. } => *window as usize,
        _ => unreachable!("ARQ schemes only"),
    }
}

/// After the last delivery and a quiet period both ends are idle: every frame acknowledged, so
/// no retransmission timer is left (a sender that ignored ACKs would keep one armed forever).
fn settled(p: &Pair) -> bool {
    p.a.poll_timeout().is_none() && p.b.poll_timeout().is_none()
}

fn same_content(v: &[(Instant, crate::Packet)]) -> bool {
    v.iter().all(|(_, p)| *p == numbered(number_of(p), p.len()))
}

proptest! {
    #![proptest_config(config())]

    /// GBN, SR, SR/M1, SR/M2: every accepted packet is delivered exactly once and in order, in
    /// both directions (piggy-backed ACKs), under any eventually-lossless pattern.
    #[test]
    fn arq_delivers_everything_once_in_order(
        cfg in arq_scheme(),
        gaps_a in prop::collection::vec((0u16..40, any::<u8>()), 0..80),
        gaps_b in prop::collection::vec((0u16..40, any::<u8>()), 0..16),
        loss_ab in prop::collection::vec(prop::bool::weighted(0.3), 0..128),
        loss_ba in prop::collection::vec(prop::bool::weighted(0.3), 0..96),
    ) {
        let mut p = pair(&cfg, loss_ab, loss_ba);
        script(&mut p, true, 0, &gaps_a);
        script(&mut p, false, 1000, &gaps_b);
        let (na, nb) = (gaps_a.len(), gaps_b.len());
        let limit = Instant::from_secs_f64(120.0);
        let done = p.run_while_not(limit, |p| {
            !p.app_pending()
                && p.delivered[1].len() + p.dropped_on_entry[0].len() == na
                && p.delivered[0].len() + p.dropped_on_entry[1].len() == nb
        });
        prop_assert!(done, "{}: not finished by {limit}", cfg.label());
        // keep running: no late duplicate may appear
        let later = p.now + Duration::from_secs(2);
        p.run_until(later);
        prop_assert!(settled(&p), "{}: timers still armed", cfg.label());
        // A window larger than the whole script never refuses a packet.
        if window_of(&cfg) > na.max(nb) {
            prop_assert!(p.dropped_on_entry.iter().all(Vec::is_empty), "{}", cfg.label());
        }
        for (side, base, n) in [(1usize, 0u32, na), (0, 1000, nb)] {
            let dropped: BTreeSet<u32> =
                p.dropped_on_entry[1 - side].iter().map(number_of).collect();
            let want: Vec<u32> =
                (base..base + n as u32).filter(|i| !dropped.contains(i)).collect();
            prop_assert_eq!(numbers(&p.delivered[side]), want, "{}", cfg.label());
            prop_assert!(same_content(&p.delivered[side]));
        }
        prop_assert_eq!(p.a.stats().malformed_frames + p.b.stats().malformed_frames, 0);
    }

    /// RLP and RLP/OOS: never a duplicate; in order (RLP) or on arrival (RLP/OOS); at most N NAKs
    /// per frame, and a frame that is never delivered was NAKed exactly N times.
    #[test]
    fn rlp_limited_recovery(
        max_naks in 1u8..=3,
        oos in any::<bool>(),
        gaps in prop::collection::vec((0u16..60, any::<u8>()), 1..100),
        loss_ab in prop::collection::vec(prop::bool::weighted(0.3), 0..64),
        loss_ba in prop::collection::vec(prop::bool::weighted(0.3), 0..48),
    ) {
        let cfg = SchemeConfig::Rlp {
            max_naks,
            delivery: if oos { crate::service::Delivery::OutOfSequence } else { crate::service::Delivery::InSequence },
            nak_timeout_ms: None,
            nak_queue_frames: None,
            keepalive_ms: None,
            buffer: 128,
            max_idle_keepalives: 0,
        };
        let rlp = crate::service::RlpConfig::recommended(&link(), max_naks, crate::service::Delivery::InSequence);
        let mut p = pair(&cfg, loss_ab, loss_ba);
        let last = script(&mut p, true, 0, &gaps);
        let n = gaps.len() as u64;
        let done = p.run_while_not(last + Duration::from_secs(30), |p| {
            !p.app_pending() && {
                let s = p.b.stats();
                s.packets_delivered + s.give_ups >= n
            }
        });
        prop_assert!(done);
        // let any recovery still under way finish
        let settle = p.now + rlp.nak_timeout.saturating_mul(max_naks as u64 + 2);
        p.run_until(settle);

        let got = numbers(&p.delivered[1]);
        let set: BTreeSet<u32> = got.iter().copied().collect();
        prop_assert_eq!(set.len(), got.len(), "duplicate delivered");
        prop_assert!(same_content(&p.delivered[1]));
        if oos {
            // released at the instant a data frame carrying it arrived
            for (t, pkt) in &p.delivered[1] {
                let ok = p.frames(Dir::AtoB).any(|e| {
                    !e.lost && e.arrival == *t
                        && matches!(RlpFrame::parse(&e.frame), Ok(RlpFrame::Data { ref payload, .. }) if payload == pkt.bytes())
                });
                prop_assert!(ok, "packet {} not released on arrival", number_of(pkt));
            }
        } else {
            prop_assert!(got.windows(2).all(|w| w[0] < w[1]), "out of order: {:?}", got);
        }
        let mut naks: BTreeMap<u8, u32> = BTreeMap::new();
        for e in p.frames(Dir::BtoA) {
            if let Ok(RlpFrame::Nak { seq }) = RlpFrame::parse(&e.frame) {
                *naks.entry(seq).or_default() += 1;
            }
        }
        for i in 0..n as u32 {
            let k = naks.get(&(i as u8)).copied().unwrap_or(0);
            prop_assert!(k <= max_naks as u32, "frame {} NAKed {} times", i, k);
            if !set.contains(&i) {
                prop_assert_eq!(k, max_naks as u32, "frame {} given up after {} NAKs", i, k);
            }
        }
        // Every frame is delivered or given up, never both: a copy taken after its give-up
        // (RLP/OOS, AMB-7) is not given up (review, session 43).
        prop_assert_eq!(p.b.stats().give_ups, n - got.len() as u64);
        prop_assert_eq!(p.a.stats().protocol_errors + p.b.stats().protocol_errors, 0);
    }

    /// XOR and XOR/Ad: a block (data frames + parity, as sent) with at most one loss is fully
    /// delivered; with two or more, none of its lost data frames is; recovered bytes are exact.
    #[test]
    fn xor_recovers_single_losses_only(
        block in 1u8..=12,
        adaptive in any::<bool>(),
        gaps in prop::collection::vec((prop_oneof![3 => 0u16..20, 1 => 0u16..2000], any::<u8>()), 1..60),
        equal_len in any::<bool>(),
        loss in prop::collection::vec(prop::bool::weighted(0.15), 0..80),
    ) {
        let cfg = SchemeConfig::Xor { block, adaptive, idle_timeout_ms: Some(20.0) };
        let gaps: Vec<(u16, u8)> = if equal_len { gaps.iter().map(|g| (g.0, 50)).collect() } else { gaps };
        let mut p = pair(&cfg, loss, vec![]);
        let last = script(&mut p, true, 0, &gaps);
        p.run_until(last + Duration::from_secs(1));
        prop_assert!(same_content(&p.delivered[1]));
        let got: BTreeSet<u32> = numbers(&p.delivered[1]).into_iter().collect();
        prop_assert_eq!(got.len(), p.delivered[1].len(), "duplicate delivered");
        // group the A->B frames into blocks as sent: a parity frame closes a block
        let mut blk: Vec<(u32, bool)> = Vec::new(); // (packet number or parity, lost)
        let mut next = 0u32;
        let mut recoveries = 0;
        let mut closed = 0usize;
        for e in p.frames(Dir::AtoB) {
            match XorFrame::parse(&e.frame).unwrap() {
                XorFrame::Data { .. } => { blk.push((next, e.lost)); next += 1; }
                XorFrame::Parity { .. } => {
                    let losses = blk.iter().filter(|b| b.1).count() + e.lost as usize;
                    for &(i, lost) in &blk {
                        prop_assert_eq!(got.contains(&i), !lost || losses <= 1, "packet {} block losses {}", i, losses);
                    }
                    if losses == 1 && !e.lost { recoveries += 1; }
                    blk.clear();
                    closed += 1;
                }
            }
        }
        // an unfinished fixed block (no parity yet): only its received frames are delivered
        for &(i, lost) in &blk {
            prop_assert_eq!(got.contains(&i), !lost);
        }
        if adaptive { prop_assert!(blk.is_empty(), "XOR/Ad closes every block after the idle timeout"); }
        prop_assert_eq!(p.b.stats().fec_recoveries, recoveries);
        prop_assert_eq!(p.a.stats().parity_frames, closed as u64);
    }
}

proptest! {
    #![proptest_config(config())]

    /// RSE and RSE/Ad: a block (n data frames + h parity frames, as sent) with at most h losses
    /// is fully delivered; with more, none of its lost data frames is; every packet is delivered
    /// at most once and rebuilt bytes are exact.
    #[test]
    fn rse_recovers_up_to_h_losses_per_block(
        block in 1u8..=12,
        parity in 1u8..=4,
        adaptive in any::<bool>(),
        gaps in prop::collection::vec((prop_oneof![3 => 0u16..20, 1 => 0u16..2000], any::<u8>()), 1..60),
        equal_len in any::<bool>(),
        loss in prop::collection::vec(prop::bool::weighted(0.2), 0..120),
    ) {
        let cfg = SchemeConfig::Rse {
            block,
            parity,
            adaptive,
            idle_timeout_ms: Some(20.0),
            partial_parity: Default::default(),
        };
        let gaps: Vec<(u16, u8)> = if equal_len { gaps.iter().map(|g| (g.0, 50)).collect() } else { gaps };
        let mut p = pair(&cfg, loss, vec![]);
        let last = script(&mut p, true, 0, &gaps);
        p.run_until(last + Duration::from_secs(1));
        prop_assert!(same_content(&p.delivered[1]));
        let got: BTreeSet<u32> = numbers(&p.delivered[1]).into_iter().collect();
        prop_assert_eq!(got.len(), p.delivered[1].len(), "duplicate delivered");
        // group the A->B frames into blocks as sent: the last parity frame closes a block
        let mut blk: Vec<(u32, bool)> = Vec::new(); // (packet number, lost)
        let mut parity_lost = 0usize;
        let mut next = 0u32;
        let mut recoveries = 0u64;
        let mut closed = 0u64;
        for e in p.frames(Dir::AtoB) {
            match RseFrame::parse(&e.frame).unwrap() {
                RseFrame::Data { .. } => { blk.push((next, e.lost)); next += 1; }
                RseFrame::Parity { count, parity: h, pindex, .. } => {
                    prop_assert_eq!(count as usize, blk.len());
                    parity_lost += e.lost as usize;
                    if pindex + 1 < h { continue; }
                    let lost_data = blk.iter().filter(|b| b.1).count();
                    let losses = lost_data + parity_lost;
                    for &(i, lost) in &blk {
                        prop_assert_eq!(got.contains(&i), !lost || losses <= h as usize,
                            "packet {} block losses {} of {} + {}", i, losses, count, h);
                    }
                    if losses <= h as usize { recoveries += lost_data as u64; }
                    blk.clear();
                    parity_lost = 0;
                    closed += 1;
                }
            }
        }
        // an unfinished fixed block (no parity yet): only its received frames are delivered
        for &(i, lost) in &blk {
            prop_assert_eq!(got.contains(&i), !lost);
        }
        if adaptive { prop_assert!(blk.is_empty(), "RSE/Ad closes every block after the idle timeout"); }
        prop_assert_eq!(p.b.stats().fec_recoveries, recoveries);
        prop_assert_eq!(p.b.stats().protocol_errors, 0);
        prop_assert_eq!(p.a.stats().parity_frames, closed * parity as u64);
    }
}

fn long_config() -> ProptestConfig {
    ProptestConfig {
        cases: config().cases / 10,
        ..config()
    }
}

proptest! {
    #![proptest_config(long_config())]

    /// Long runs that wrap the 8-bit sequence space several times, iid loss on every frame in
    /// both directions (up to 30%): GBN/SR still deliver everything once, in order.
    #[test]
    fn arq_long_runs_wrap_sequence_numbers(
        cfg in arq_scheme(),
        n in 256usize..700,
        per_mille in 0u64..300,
        seed in any::<u64>(),
        paced in any::<bool>(),
    ) {
        let l = link();
        let mut p = Pair::new(cfg.build(&l, Role::Host), cfg.build(&l, Role::Host), l.rate, l.delay)
            .with_loss(iid(seed, per_mille));
        if paced { p = p.with_pacing(); }
        let gaps: Vec<(u16, u8)> = (0..n).map(|i| ((i % 7) as u16 * 3, (i * 13) as u8)).collect();
        script(&mut p, true, 0, &gaps);
        let done = p.run_while_not(Instant::from_secs_f64(3600.0), |p| {
            !p.app_pending() && p.delivered[1].len() + p.dropped_on_entry[0].len() == n
        });
        prop_assert!(done, "{} unfinished", cfg.label());
        let later = p.now + Duration::from_secs(2);
        p.run_until(later);
        prop_assert!(settled(&p), "{}: timers still armed", cfg.label());
        let dropped: BTreeSet<u32> = p.dropped_on_entry[0].iter().map(number_of).collect();
        let want: Vec<u32> = (0..n as u32).filter(|i| !dropped.contains(i)).collect();
        prop_assert_eq!(numbers(&p.delivered[1]), want);
        prop_assert!(same_content(&p.delivered[1]));
    }

    /// RLP with small buffers and long lossy runs (sequence wrap, buffer overruns): never a
    /// duplicate, never a wrong packet, in order for RLP.
    #[test]
    fn rlp_small_buffers_never_desynchronise(
        max_naks in 1u8..=3,
        oos in any::<bool>(),
        buffer in 2u8..=16,
        n in 100usize..500,
        per_mille in 0u64..400,
        seed in any::<u64>(),
    ) {
        let cfg = SchemeConfig::Rlp {
            max_naks,
            delivery: if oos { crate::service::Delivery::OutOfSequence } else { crate::service::Delivery::InSequence },
            nak_timeout_ms: None,
            nak_queue_frames: None,
            keepalive_ms: None,
            buffer,
            max_idle_keepalives: 0,
        };
        let l = link();
        let mut p = Pair::new(cfg.build(&l, Role::Host), cfg.build(&l, Role::Host), l.rate, l.delay)
            .with_loss(iid(seed, per_mille));
        let gaps: Vec<(u16, u8)> = (0..n).map(|i| ((i % 5) as u16 * 4, 60)).collect();
        let last = script(&mut p, true, 0, &gaps);
        p.run_until(last + Duration::from_secs(1));
        let got = numbers(&p.delivered[1]);
        let set: BTreeSet<u32> = got.iter().copied().collect();
        prop_assert_eq!(set.len(), got.len(), "duplicate delivered");
        prop_assert!(same_content(&p.delivered[1]));
        if !oos {
            prop_assert!(got.windows(2).all(|w| w[0] < w[1]), "out of order");
        }
        // without loss nothing is given up or overrun
        if per_mille == 0 {
            prop_assert_eq!(got.len(), n);
            prop_assert_eq!(p.b.stats().protocol_errors, 0);
        }
    }
}
