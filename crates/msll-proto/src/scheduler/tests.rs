//! SCFQ properties (seed 004 sec. 6.2.3): shares follow r_i under backlog, idle shares are
//! redistributed in proportion to r_i, work conservation, FIFO order within a service, arrival-order
//! ties, bounded queues.

use super::*;
use crate::buf::Buf;
use proptest::prelude::*;

fn frame(len: usize) -> Frame {
    Frame::new(&[0], Buf::from(vec![0u8; len - 1]))
}

const T0: Instant = Instant::ZERO;

/// Keep every service in `active` backlogged (one frame of its size queued behind the head)
/// until `total` bytes have left, and return the bytes each service sent.
fn backlogged(rates: &[f64], sizes: &[usize], active: &[bool], total: u64) -> Vec<u64> {
    let mut s = Scheduler::new(Discipline::Scfq, rates, None);
    for i in 0..rates.len() {
        if active[i] {
            assert!(s.enqueue(T0, i, frame(sizes[i])).is_ok());
            assert!(s.enqueue(T0, i, frame(sizes[i])).is_ok());
        }
    }
    let mut sent = vec![0u64; rates.len()];
    let mut done = 0u64;
    while done < total {
        let (i, f) = s.dequeue(T0).expect("work conserving: backlog present");
        sent[i] += f.len() as u64;
        done += f.len() as u64;
        assert!(s.enqueue(T0, i, frame(sizes[i])).is_ok());
    }
    sent
}

fn check_shares(rates: &[f64], sizes: &[usize], active: &[bool]) -> Result<(), TestCaseError> {
    let ar: f64 = (0..rates.len())
        .filter(|&i| active[i])
        .map(|i| rates[i])
        .sum();
    let min_share = (0..rates.len())
        .filter(|&i| active[i])
        .map(|i| rates[i] / ar)
        .fold(1.0, f64::min);
    let lmax = *sizes.iter().max().unwrap() as f64;
    // SCFQ's fairness bound is a few maximum frames per pair of services (Golestani): run long
    // enough that the smallest share has seen >= 500 * n maximum frames, so the bound is < 1%.
    let total = (500.0 * rates.len() as f64 * lmax / min_share) as u64;
    let sent = backlogged(rates, sizes, active, total);
    let done: u64 = sent.iter().sum();
    for i in 0..rates.len() {
        let got = sent[i] as f64 / done as f64;
        if !active[i] {
            prop_assert_eq!(sent[i], 0);
            continue;
        }
        let want = rates[i] / ar;
        prop_assert!(
            (got - want).abs() <= 0.01 * want,
            "service {} got {:.5}, want {:.5} (rates {:?}, sizes {:?}, active {:?})",
            i,
            got,
            want,
            rates,
            sizes,
            active
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Backlogged services share the link in proportion to r_i, within 1 %, whatever their frame
    /// sizes (L(k) counts: overhead-heavy services get fewer frames, not more bytes).
    #[test]
    fn backlogged_shares_follow_rates(
        cfg in prop::collection::vec((1u32..=8, 20usize..=1000), 2..=6)
    ) {
        let rates: Vec<f64> = cfg.iter().map(|c| c.0 as f64).collect();
        let sizes: Vec<usize> = cfg.iter().map(|c| c.1).collect();
        check_shares(&rates, &sizes, &vec![true; rates.len()])?;
    }

    /// Idle services' bandwidth goes to the active ones in proportion to their rates
    /// (seed 004 sec. 6.2.3: "r_i / sum_{j in A(t)} r_j").
    #[test]
    fn idle_share_is_redistributed_proportionally(
        cfg in prop::collection::vec((1u32..=8, 20usize..=1000, any::<bool>()), 3..=6)
    ) {
        let rates: Vec<f64> = cfg.iter().map(|c| c.0 as f64).collect();
        let sizes: Vec<usize> = cfg.iter().map(|c| c.1).collect();
        let mut active: Vec<bool> = cfg.iter().map(|c| c.2).collect();
        if active.iter().filter(|&&a| a).count() < 2 {
            active[0] = true;
            active[1] = true;
        }
        check_shares(&rates, &sizes, &active)?;
    }

    /// Any interleaving of arrivals and departures: never idle with a backlog, FIFO within each
    /// service, V non-decreasing within a busy period, and every frame leaves exactly once.
    #[test]
    fn work_conserving_fifo_per_service(
        ops in prop::collection::vec((any::<bool>(), 0usize..4, 2usize..300), 1..400),
        rates in prop::collection::vec(1u32..10, 4),
        fifo in any::<bool>(),
    ) {
        let rates: Vec<f64> = rates.iter().map(|&r| r as f64).collect();
        let d = if fifo { Discipline::Fifo } else { Discipline::Scfq };
        let mut s = Scheduler::new(d, &rates, None);
        let mut next = [0u32; 4];
        let mut expect = [0u32; 4];
        let mut arrivals = 0u32;
        let mut last_arrival: Option<u32> = None;
        let mut last_v = 0.0;
        let tag = |svc: usize, k: u32, arrival: u32, len: usize| {
            let mut b = vec![0u8; len];
            b[..4].copy_from_slice(&k.to_be_bytes());
            b[4] = svc as u8;
            b[5..9].copy_from_slice(&arrival.to_be_bytes());
            Frame::new(&[0], Buf::from(b))
        };
        for (add, svc, len) in ops {
            if add {
                prop_assert!(s.enqueue(T0, svc, tag(svc, next[svc], arrivals, len.max(9))).is_ok());
                next[svc] += 1;
                arrivals += 1;
            } else {
                let had = s.len();
                match s.dequeue(T0) {
                    None => prop_assert_eq!(had, 0),
                    Some((i, f)) => {
                        let b = f.payload_from(1).unwrap();
                        let k = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                        prop_assert_eq!(b[4] as usize, i);
                        prop_assert_eq!(k, expect[i], "FIFO within service {}", i);
                        expect[i] += 1;
                        if fifo {
                            // Global arrival order across services.
                            let a = u32::from_be_bytes([b[5], b[6], b[7], b[8]]);
                            prop_assert!(last_arrival.is_none_or(|l| a > l));
                            last_arrival = Some(a);
                        } else if !s.is_empty() {
                            prop_assert!(s.virtual_time() >= last_v);
                            last_v = s.virtual_time();
                        } else {
                            last_v = 0.0;
                        }
                    }
                }
            }
        }
        let mut left = 0;
        while s.dequeue(T0).is_some() {
            left += 1;
        }
        prop_assert_eq!(expect.iter().sum::<u32>() + left, arrivals);
    }
}

#[test]
fn table_7_1_cellular_pattern_and_single_service_fifo() {
    // Cellular: TCP 1/3, UDP 2/3 (Table 7.1, A2). Equal 51-byte frames, both backlogged: UDP sends
    // two frames for every TCP frame.
    let mut s = Scheduler::new(Discipline::Scfq, &[1.0 / 3.0, 2.0 / 3.0], None);
    for _ in 0..30 {
        assert!(s.enqueue(T0, 0, frame(51)).is_ok());
        assert!(s.enqueue(T0, 1, frame(51)).is_ok());
    }
    let order: Vec<usize> = (0..30).map(|_| s.dequeue(T0).unwrap().0).collect();
    assert_eq!(order.iter().filter(|&&i| i == 1).count(), 20);
    for w in order.chunks(3) {
        assert_eq!(w.iter().filter(|&&i| i == 0).count(), 1, "{order:?}");
    }
    // One service: exactly the arrival order, whatever the rate (sec. 6.2.3).
    let mut s = Scheduler::new(Discipline::Scfq, &[0.123], None);
    for k in 1..=20 {
        assert!(s.enqueue(T0, 0, frame(k * 7)).is_ok());
    }
    for k in 1..=20 {
        assert_eq!(s.dequeue(T0).unwrap().1.len(), k * 7);
    }
    assert!(s.dequeue(T0).is_none());
    assert_eq!(s.virtual_time(), 0.0, "idle resets V");
}

#[test]
fn ties_go_to_the_earlier_arrival() {
    // Equal rates, equal sizes, both queues empty: the two stamps are equal.
    let mut s = Scheduler::new(Discipline::Scfq, &[1.0, 1.0, 1.0], None);
    assert!(s.enqueue(T0, 2, frame(10)).is_ok());
    assert!(s.enqueue(T0, 0, frame(10)).is_ok());
    assert!(s.enqueue(T0, 1, frame(10)).is_ok());
    let order: Vec<usize> = (0..3).map(|_| s.dequeue(T0).unwrap().0).collect();
    assert_eq!(order, [2, 0, 1]);
}

#[test]
fn a_newly_active_service_starts_at_the_virtual_time() {
    // Service 0 has been sending alone for a while; service 1 arrives and must not be able to
    // claim the link for the "credit" it would have accumulated while idle (the max(., V(t))).
    let mut s = Scheduler::new(Discipline::Scfq, &[1.0, 1.0], None);
    for _ in 0..100 {
        assert!(s.enqueue(T0, 0, frame(100)).is_ok());
    }
    for _ in 0..50 {
        s.dequeue(T0);
    }
    for _ in 0..10 {
        assert!(s.enqueue(T0, 1, frame(100)).is_ok());
    }
    // V = 5000 after 50 frames of 100: service 1's stamps are 5100, 5200, ..., those of
    // service 0's next frames too; ties go to the earlier arrival (service 0). Without the
    // max(., V) service 1's would be 100 ... 1000 and all ten would go first.
    let order: Vec<usize> = (0..20).map(|_| s.dequeue(T0).unwrap().0).collect();
    assert_eq!(order, [0, 1].repeat(10), "alternates");
}

#[test]
fn bounded_queues_drop_and_count() {
    let mut s = Scheduler::new(Discipline::Scfq, &[1.0, 1.0], Some(3));
    for _ in 0..5 {
        let _ = s.enqueue(T0, 0, frame(10));
    }
    assert!(
        s.enqueue(T0, 1, frame(10)).is_ok(),
        "per-service bound in SCFQ mode"
    );
    assert_eq!(
        (s.queue_len(0), s.stats(0).dropped, s.stats(1).dropped),
        (3, 2, 0)
    );
    // FIFO: one shared bound.
    let mut s = Scheduler::new(Discipline::Fifo, &[1.0, 1.0], Some(3));
    for i in 0..5 {
        let _ = s.enqueue(T0, i % 2, frame(10));
    }
    assert_eq!(s.len(), 3);
    assert_eq!(s.stats(0).dropped + s.stats(1).dropped, 2);
    assert_eq!(
        s.enqueue(T0, 7, frame(10)).map_err(|f| f.len()),
        Err(10),
        "no such service: the frame comes back"
    );
}

#[test]
fn fifo_mode_serves_in_arrival_order_across_services() {
    let mut s = Scheduler::new(Discipline::Fifo, &[1.0, 100.0], None);
    let arrivals = [0, 0, 1, 0, 1, 1, 0];
    for &i in &arrivals {
        assert!(s.enqueue(T0, i, frame(40)).is_ok());
    }
    let order: Vec<usize> = arrivals.iter().map(|_| s.dequeue(T0).unwrap().0).collect();
    assert_eq!(order, arrivals);
}

#[test]
fn rates_and_waits() {
    let mut s = Scheduler::new(Discipline::Scfq, &[1.0, -3.0, f64::NAN], None);
    assert_eq!(s.rate(1), 1.0, "non-positive rates are made positive");
    s.set_rate(2, 2.0);
    assert!((s.share(2) - 0.5).abs() < 1e-12);
    assert!(s.enqueue(T0, 0, frame(10)).is_ok());
    s.dequeue(T0 + Duration::from_millis(7));
    assert_eq!(s.stats(0).mean_wait(), Duration::from_millis(7));
    assert_eq!(s.add_service(1.0), 3);
    assert_eq!(s.services(), 4);
    // A bad rate's substitute does not depend on where it stands among the rates.
    for rates in [[0.0, 0.5, 2.0], [0.5, 0.0, 2.0], [2.0, 0.5, 0.0]] {
        let s = Scheduler::new(Discipline::Scfq, &rates, None);
        let bad = rates.iter().position(|&r| r == 0.0).unwrap();
        assert_eq!(s.rate(bad), 0.5, "{rates:?}");
    }
}

#[test]
fn heap_cost_is_logarithmic() {
    // <= 2 lg(n) comparisons per dequeue plus lg(n) per activation (sec. 6.2.3); checked on the
    // counter, not on wall time.
    for n in [2usize, 4, 8, 16, 32, 64] {
        let rates: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        let mut s = Scheduler::new(Discipline::Scfq, &rates, None);
        for i in 0..n {
            assert!(s.enqueue(T0, i, frame(50 + i)).is_ok());
        }
        let before = s.comparisons();
        let frames = 10_000u64;
        for _ in 0..frames {
            let (i, _) = s.dequeue(T0).unwrap();
            assert!(s.enqueue(T0, i, frame(50 + i)).is_ok());
        }
        let per = (s.comparisons() - before) as f64 / frames as f64;
        let lg = (n as f64).log2().ceil();
        assert!(per <= 3.0 * lg + 1.0, "n={n}: {per} comparisons per frame");
    }
}

proptest! {
    /// The stamp's multiply by `exact_inverse(r)` equals the division by `r` it replaces, for
    /// every power of two the rates take (and none is offered for other rates).
    #[test]
    fn exact_inverse_multiplies_as_it_divides(len in 0u32..=1 << 20, k in -60i32..=60, m in 1.0f64..2.0) {
        let r = 2f64.powi(k);
        let inv = exact_inverse(r).expect("a power of two");
        let x = len as f64;
        prop_assert_eq!((x * inv).to_bits(), (x / r).to_bits());
        // A rate with mantissa bits gets no inverse (1/3 is not exact).
        let other = r * m;
        if other.to_bits() & ((1u64 << 52) - 1) != 0 {
            prop_assert!(exact_inverse(other).is_none());
        }
    }
}

#[test]
fn exact_inverse_refuses_non_powers() {
    assert_eq!(exact_inverse(1.0), Some(1.0));
    assert_eq!(exact_inverse(4.0), Some(0.25));
    assert_eq!(exact_inverse(0.5), Some(2.0));
    for r in [
        3.0,
        1.5,
        0.1,
        0.0,
        -2.0,
        f64::INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE / 4.0,
    ] {
        assert_eq!(exact_inverse(r), None, "{r}");
    }
}

/// A direct transcription of sec. 6.2.3 for the model test below: every waiting frame in one
/// list, the next one found by scanning for the least (stamp, arrival). No heap, no express slot.
struct Reference {
    fifo: bool,
    limit: Option<usize>,
    rates: Vec<f64>,
    last: Vec<(f64, u64)>,
    stats: Vec<QueueStats>,
    vtime: f64,
    epoch: u64,
    seq: u64,
    /// (service, stamp, seq, arrival, frame length)
    waiting: Vec<(usize, f64, u64, Instant, usize)>,
}

impl Reference {
    fn new(fifo: bool, rates: &[f64], limit: Option<usize>) -> Self {
        Reference {
            fifo,
            limit: limit.map(|l| l.max(1)),
            rates: rates.to_vec(),
            last: vec![(0.0, 0); rates.len()],
            stats: vec![QueueStats::default(); rates.len()],
            vtime: 0.0,
            epoch: 0,
            seq: 0,
            waiting: Vec::new(),
        }
    }

    fn queued(&self, i: usize) -> usize {
        self.waiting.iter().filter(|w| w.0 == i).count()
    }

    fn enqueue(&mut self, now: Instant, i: usize, len: usize) -> bool {
        if i >= self.rates.len() {
            return false;
        }
        let full = match self.limit {
            Some(l) if self.fifo => self.waiting.len() >= l,
            Some(l) => self.queued(i) >= l,
            None => false,
        };
        if full {
            self.stats[i].dropped += 1;
            return false;
        }
        let stamp = if self.fifo {
            0.0
        } else {
            let (last, epoch) = self.last[i];
            let last = if epoch == self.epoch { last } else { 0.0 };
            len as f64 / self.rates[i] + last.max(self.vtime)
        };
        self.last[i] = (stamp, self.epoch);
        self.waiting.push((i, stamp, self.seq, now, len));
        self.seq += 1;
        self.stats[i].enqueued += 1;
        self.stats[i].max_len = self.stats[i].max_len.max(self.queued(i));
        true
    }

    fn dequeue(&mut self, now: Instant) -> Option<(usize, usize)> {
        let k = (0..self.waiting.len()).min_by(|&a, &b| {
            let (wa, wb) = (&self.waiting[a], &self.waiting[b]);
            wa.1.total_cmp(&wb.1).then(wa.2.cmp(&wb.2))
        })?;
        let (i, stamp, _, at, len) = self.waiting.remove(k);
        let st = &mut self.stats[i];
        st.dequeued += 1;
        st.bytes_dequeued += len as u64;
        st.wait_total += now.saturating_since(at);
        self.vtime = stamp;
        if self.waiting.is_empty() {
            self.vtime = 0.0;
            self.epoch += 1;
        }
        Some((i, len))
    }
}

proptest! {
    /// The scheduler makes exactly the decisions of the sec. 6.2.3 transcription above, with the
    /// same stamps (virtual time) and counters, under any mix of arrivals (to valid and invalid
    /// services), departures, rate changes and queue bounds, in both disciplines. This covers
    /// the heap and the express slot (`Scheduler::express`), which the reference has neither of,
    /// and `Scheduler::pass_through`.
    #[test]
    fn matches_the_reference_transcription(
        fifo in any::<bool>(),
        rates in prop::collection::vec(prop_oneof![Just(1.0f64), Just(2.0), Just(0.5), 0.1f64..8.0], 1..=4),
        limit in prop::option::of(1usize..4),
        ops in prop::collection::vec((0u8..9, 0usize..5, 2usize..1500), 1..300),
    ) {
        let d = if fifo { Discipline::Fifo } else { Discipline::Scfq };
        let mut s = Scheduler::new(d, &rates, limit);
        let mut r = Reference::new(fifo, &rates, limit);
        for (t, &(op, i, len)) in ops.iter().enumerate() {
            let now = Instant::ZERO + Duration::from_micros(t as u64 * 10);
            match op {
                // As many departures as arrivals: the backlog wanders around zero, so the idle
                // scheduler (the express slot) and deeper queues both come up.
                0..=2 => prop_assert_eq!(s.enqueue(now, i, frame(len)).is_ok(), r.enqueue(now, i, len)),
                3..=5 => prop_assert_eq!(s.dequeue(now).map(|(i, f)| (i, f.len())), r.dequeue(now)),
                // A frame passed straight through an idle scheduler is an arrival and its
                // departure; a busy scheduler or a missing service refuses it, changing nothing.
                8 => {
                    if s.pass_through(now, i, len) {
                        prop_assert!(r.waiting.is_empty());
                        prop_assert!(r.enqueue(now, i, len));
                        prop_assert_eq!(r.dequeue(now), Some((i, len)));
                    } else {
                        prop_assert!(!r.waiting.is_empty() || i >= rates.len());
                    }
                }
                _ => {
                    // op 6: a valid new rate; op 7: a rate the scheduler must replace (zero, negative, NaN, infinite) by
                    // the smallest rate it has, at most 1.
                    let rate = if op == 6 {
                        0.25 * (len % 16 + 1) as f64
                    } else {
                        [0.0, -1.0, f64::NAN, f64::INFINITY][len % 4]
                    };
                    if i < rates.len() {
                        let sane = if rate.is_finite() && rate > 0.0 {
                            rate
                        } else {
                            r.rates.iter().copied().fold(f64::INFINITY, f64::min).min(1.0)
                        };
                        s.set_rate(i, rate);
                        r.rates[i] = sane;
                    }
                }
            }
            prop_assert_eq!(s.virtual_time().to_bits(), r.vtime.to_bits());
            prop_assert_eq!(s.len(), r.waiting.len());
            for q in 0..rates.len() {
                prop_assert_eq!(s.queue_len(q), r.queued(q));
                prop_assert_eq!(s.rate(q).to_bits(), r.rates[q].to_bits());
                prop_assert_eq!(s.stats(q), r.stats[q]);
            }
        }
        let end = Instant::ZERO + Duration::from_secs(1);
        while let Some(x) = r.dequeue(end) {
            prop_assert_eq!(s.dequeue(end).map(|(i, f)| (i, f.len())), Some(x));
        }
        prop_assert!(s.dequeue(end).is_none());
    }
}
