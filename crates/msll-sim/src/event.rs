//! The event queue: a binary heap of `(time, insertion sequence)` keys over a slab of payloads.
//!
//! Ordering by insertion sequence at equal times (ns-3's `EventKey`) makes simultaneous events run
//! first-in first-out, so a run is a pure function of scenario and seed. Payloads stay in the slab
//! (reused through a free list) so heap sifts move 16-byte keys, not frames.
//!
//! Two ways of keeping keys out of the heap without changing the pop order (session 9; each is
//! checked against plain pushes by a property test below, and the catalogue's results are
//! byte-identical):
//! - FIFO pipes (`push_fifo`): the arrivals of one link only grow in time, so only the head of
//!   each link's pipe is in the heap;
//! - armed wake-ups (`arm`): of an owner's events that act only at its armed time, only one that
//!   can act is in the heap, the others wait aside with their keys.
//!
//! In seed 004 Fig. 7.6 (two wireless links behind WAN links, two services) the heap held 16-52
//! keys on average, mostly frames in flight and stale timer wake-ups; with both, 8-30 fewer, and
//! 3-11 % fewer events are popped. Time (paired runs, median): -13 % on that figure, -4 to -10 %
//! on the other large multi-service figures; single-service cases unchanged within the noise
//! (+1.8 % instructions on case a10).
//!
//! Measured alternatives (callgrind; docs/performance.md): a sorted vector of inline events wins
//! only below ~10 pending events (case a10 -3 %) and loses on busy runs, which hold 13-45 (cases
//! b-sr, d-sr, f +3-5 %); hand-written 4-ary and binary heaps lose to `std`'s; a radix heap over
//! the same keys (push O(1), pop redistributes the lowest bucket) loses 11-15 % (a10 62.1 -> 71.1
//! M, f 160.7 -> 181.8 M instructions): near-future events share a bucket, so a pop moves ~220
//! instructions' worth of keys; a calendar queue (Brown's, as in ns-2: power-of-two days sized
//! from the earliest 25 events, buckets doubled/halved with the queue) loses 8-11 % (a10 68.1 M,
//! b-sr 882.9 -> 982.1 M, c 876.0 -> 971.6 M, f 172.7 M): with 4-70 pending events spread from
//! microseconds (frames) to seconds (timers), its sorted-bucket inserts and day scans cost more
//! than a 5-level sift. Session 7 timed a 4-ary heap with bottom-up deletion once more (by wall
//! time, not instructions): -3 % on the multi-service runs in one hour, nothing in the next; not
//! kept (docs/performance.md, session 7). Session 4's per-link pipes were judged by instruction
//! counts (+1-2 %) and dropped; session 9 timed them (the heap's sifts are dependent loads, which
//! instruction counts do not weigh). Session 20 measured a ladder queue (Tang, Goh and Thng 2005:
//! Top, rungs of time buckets, a sorted Bottom; commit 1622d11, reverted): with its own PGO
//! profile +2-8 % instructions and 17-21 % more time on cases a, b-sr and e, since with 5-50
//! pending keys Bottom empties every few pops and Top is spread over a new rung again.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, VecDeque};

use msll_proto::Instant;

/// Bits of a key holding the slab slot or pipe number (the rest of the low word is the insertion
/// sequence).
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u128 = (1 << SLOT_BITS) - 1;
/// Set in a key's slot bits when the key stands for the head of a FIFO pipe, not a slab slot.
const PIPE_FLAG: u128 = 1 << (SLOT_BITS - 1);

/// Pending events beyond which the queue reports an overflow (`EventQueue::overflowed`) and the
/// simulation stops with an error instead of growing without bound: packets in flight on a link
/// with a huge delay are events, each holding its packet (~1 KB), so 2^21 is ~2 GB. The slot
/// bits allow 2^23; a run reaching either used to abort the process on an assertion (review,
/// session 42). No catalogue run holds more than a few hundred.
pub const MAX_PENDING_EVENTS: usize = 1 << 21;

pub struct EventQueue<E> {
    /// Keys `time << 64 | seq << 24 | slot`: one plain u128 per event, so a sift step is one
    /// two-word comparison and a 16-byte move. Keys are unique (seq is), so the slot bits never
    /// decide an order.
    heap: BinaryHeap<Reverse<u128>>,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    /// FIFO pipes (`push_fifo`): events whose keys only grow, e.g. the arrivals of one link
    /// (serialised transmissions, constant delay). Only a pipe's head is in the heap, under its
    /// own key, so the pop order is exactly that of one heap holding every event; the heap stays
    /// small (seed 004 Fig. 7.6: 52 -> ~28 keys on average) and a pipe push is O(1).
    pipes: Vec<VecDeque<(u128, E)>>,
    len: usize,
    seq: u64,
    /// Key (without slot bits) of the last event popped.
    last: u128,
    /// Pending events allowed ([`MAX_PENDING_EVENTS`]; lower for tests).
    limit: usize,
    /// The pending events passed `limit` (checked when the slab or a pipe grows).
    overflowed: bool,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            slab: Vec::new(),
            free: Vec::new(),
            pipes: Vec::new(),
            len: 0,
            seq: 0,
            last: 0,
            limit: MAX_PENDING_EVENTS,
            overflowed: false,
        }
    }
}

impl<E> EventQueue<E> {
    /// The next key for time `at` (consumes one insertion sequence number).
    #[inline(always)]
    fn next_key(&mut self, at: Instant) -> u128 {
        assert!(
            self.seq < 1 << (64 - SLOT_BITS),
            "event queue limit: 2^40 events per run"
        );
        let k = ((at.as_nanos() as u128) << 64) | ((self.seq as u128) << SLOT_BITS);
        self.seq += 1;
        self.len += 1;
        k
    }

    // Always inline: called out of line, the event (56 bytes) went through a stack copy that the
    // caller writes in 8-byte pieces and `push` reads in 16-byte ones, a store-forwarding stall
    // that sampling put at 40 % of `push` (session 8: msll bench cases -4 to -8 %).
    #[inline(always)]
    pub fn push(&mut self, at: Instant, ev: E) {
        let key = self.next_key(at);
        self.push_slab(key, ev);
    }

    #[inline(always)]
    fn push_slab(&mut self, key: u128, ev: E) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = Some(ev);
                i
            }
            None => {
                // Pending events grow past the limit only where the slab or a pipe grows: the
                // count is of all of them, pipes included (review, session 44: the slab alone let
                // the total reach twice the limit). The event is kept (the caller's bookkeeping
                // stays whole) and the simulation stops at its next event.
                if self.len > self.limit {
                    self.overflowed = true;
                }
                // The limit is far below the slot bits' 2^23, and a simulation stops once it is
                // passed; only an owner that ignores `overflowed` can get here.
                assert!(
                    (self.slab.len() as u128) < PIPE_FLAG,
                    "event queue limit: 2^23 pending events"
                );
                self.slab.push(Some(ev));
                (self.slab.len() - 1) as u32
            }
        };
        self.heap.push(Reverse(key | slot as u128));
    }

    /// More events were pending than the limit allows ([`MAX_PENDING_EVENTS`]): the owner
    /// should stop popping and report it.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// The pending-event limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Lower the pending-event limit (tests; a smaller machine).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit.min(MAX_PENDING_EVENTS);
    }

    /// Push into FIFO pipe `pipe`. The pop order is the same as `push`'s (time, then insertion);
    /// an event earlier than the pipe's last one (which a caller's pipe should never produce)
    /// simply goes to the heap, so the order holds for any input.
    #[inline(always)]
    pub fn push_fifo(&mut self, pipe: usize, at: Instant, ev: E) {
        let key = self.next_key(at);
        if pipe >= self.pipes.len() {
            assert!((pipe as u128) < PIPE_FLAG, "event queue limit: 2^23 pipes");
            self.pipes.resize_with(pipe + 1, VecDeque::new);
        }
        let q = &mut self.pipes[pipe];
        match q.back() {
            None => {
                q.push_back((key, ev));
                self.heap.push(Reverse(key | PIPE_FLAG | pipe as u128));
            }
            Some(&(last, _)) if last < key => {
                if self.len > self.limit {
                    self.overflowed = true;
                }
                q.push_back((key, ev))
            }
            Some(_) => self.push_slab(key, ev),
        }
    }

    pub fn peek_time(&self) -> Option<Instant> {
        self.heap
            .peek()
            .map(|Reverse(k)| Instant::from_nanos((*k >> 64) as u64))
    }

    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let mut top = self.heap.peek_mut()?;
        let k = top.0;
        self.last = k & !SLOT_MASK;
        let t = (k >> 64) as u64;
        let slot = (k & SLOT_MASK) as u32;
        self.len -= 1;
        let ev = if k & PIPE_FLAG != 0 {
            let pipe = (slot as u128 & !PIPE_FLAG) as usize;
            let q = &mut self.pipes[pipe];
            let (_, ev) = q.pop_front().expect("pipe head present");
            match q.front() {
                // The pipe's next event replaces its head in place: one sift instead of a pop
                // and a push.
                Some(&(next, _)) => top.0 = next | PIPE_FLAG | pipe as u128,
                None => {
                    PeekMut::pop(top);
                }
            }
            ev
        } else {
            PeekMut::pop(top);
            let ev = self.slab[slot as usize].take().expect("event slot filled");
            self.free.push(slot);
            ev
        };
        Some((Instant::from_nanos(t), ev))
    }

    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Events scheduled so far (a cheap work counter).
    pub fn scheduled(&self) -> u64 {
        self.seq
    }

    /// Arm a wake-up of `owner` at `at`, standing for `push(at, ev)`, for an owner that acts on
    /// the first of its events popped at its armed *time* (`wake_at == Some(t)`) and skips the
    /// others (`EventQueue::popped_wake`).
    ///
    /// Such an owner leaves stale events behind whenever it arms an earlier time: an endpoint's
    /// pacing wake-up comes before its retransmission timer, which is then re-armed, often later,
    /// after every frame (seed 004 Fig. 7.6: up to ~19 of them pending on average, up to 11 % of
    /// all events popped only to be skipped). Only one of the owner's events can act: the first pending one
    /// at the armed time. So every event is given its key (its place in the order) when armed,
    /// but enters the heap only when it could be that one and no event of the owner already in
    /// the heap comes before it; an event of the owner popped without acting brings the current
    /// one in. Pop order and actions are exactly those of pushing every event.
    #[inline(always)]
    pub fn arm(&mut self, owner: &mut Wakeups, at: Instant, ev: impl Fn() -> E) {
        let key = self.next_key(at);
        // Counted when it enters the heap.
        self.len -= 1;
        self.forget_popped(owner);
        let t = key >> 64;
        let i = owner.aside.partition_point(|&k| k >> 64 < t);
        // An earlier event at the same time, kept aside, comes first.
        let first = owner.aside.get(i).copied().filter(|&k| k >> 64 == t);
        let covered = owner.heap.iter().any(|&k| k < first.unwrap_or(key));
        if let Some(f) = first {
            if !covered {
                owner.aside.remove(i);
                self.enter(owner, f, &ev);
            }
        }
        if (first.is_none() && !covered) || owner.aside.len() >= Wakeups::ASIDE_MAX {
            // (Any event may go to the heap: that bounds the bookkeeping.)
            self.enter(owner, key, &ev);
        } else {
            let j = owner.aside.partition_point(|&k| k < key);
            owner.aside.insert(j, key);
        }
    }

    /// Drop the events aside that the plain queue would have popped by now (never the acting
    /// one: that one is always in the heap).
    #[inline(always)]
    fn forget_popped(&self, owner: &mut Wakeups) {
        if owner.aside.first().is_some_and(|&k| k < self.last) {
            let gone = owner.aside.partition_point(|&k| k < self.last);
            owner.aside.drain(..gone);
        }
    }

    #[inline(always)]
    fn enter(&mut self, owner: &mut Wakeups, key: u128, ev: &impl Fn() -> E) {
        owner.heap.push(key);
        self.len += 1;
        self.push_slab(key, ev());
    }

    /// Call for each popped event of an owner armed with `arm`, before acting on it; `armed` is
    /// the owner's armed time.
    #[inline(always)]
    pub fn popped_wake(&mut self, owner: &mut Wakeups, armed: Option<Instant>, ev: impl Fn() -> E) {
        let key = self.last;
        if let Some(i) = owner.heap.iter().position(|&k| k == key) {
            owner.heap.swap_remove(i);
        }
        match armed {
            // It acts (and re-arms if need be).
            Some(t) if t.as_nanos() as u128 == key >> 64 => {}
            Some(t) => self.cover(owner, t, ev),
            None => {}
        }
    }

    /// Make sure an event of `owner` that pops no later than the first pending one at `at`
    /// is in the heap.
    #[inline(always)]
    fn cover(&mut self, owner: &mut Wakeups, at: Instant, ev: impl Fn() -> E) {
        self.forget_popped(owner);
        let t = at.as_nanos() as u128;
        let i = owner.aside.partition_point(|&k| k >> 64 < t);
        let Some(&first) = owner.aside.get(i).filter(|&&k| k >> 64 == t) else {
            return; // only events already in the heap are at that time
        };
        if owner.heap.iter().any(|&k| k < first) {
            return;
        }
        owner.aside.remove(i);
        self.enter(owner, first, &ev);
    }
}

/// The pending wake-up events of one owner, for [`EventQueue::arm`].
#[derive(Debug, Default, Clone)]
pub struct Wakeups {
    /// Keys of its events in the heap.
    heap: Vec<u128>,
    /// Keys of its events kept out of the heap, in key order.
    aside: Vec<u128>,
}

impl Wakeups {
    /// Beyond this many events aside, `arm` puts events straight into the heap.
    const ASIDE_MAX: usize = 64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_then_fifo_order() {
        let mut q = EventQueue::default();
        let t = |n| Instant::from_nanos(n);
        q.push(t(5), "c");
        q.push(t(1), "a");
        q.push(t(5), "d");
        q.push(t(1), "b");
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(got, ["a", "b", "c", "d"]);
    }

    proptest::proptest! {
        /// Interleaved pushes and pops (one in three a pop, so the queue grows) come out in
        /// (time, insertion) order: the reference is a stable sort of what is pending.
        #[test]
        fn matches_a_stable_sort(ops in proptest::collection::vec((0u64..50, 0u8..3), 1..400)) {
            let mut q = EventQueue::default();
            let mut pending: Vec<(u64, usize)> = Vec::new();
            for (i, &(t, pop)) in ops.iter().enumerate() {
                if pop == 0 && !pending.is_empty() {
                    pending.sort_by_key(|&(t, n)| (t, n));
                    let want = pending.remove(0);
                    let (at, got) = q.pop().unwrap();
                    proptest::prop_assert_eq!((at.as_nanos(), got), want);
                } else {
                    q.push(Instant::from_nanos(t), i);
                    pending.push((t, i));
                }
                proptest::prop_assert_eq!(q.len(), pending.len());
            }
            pending.sort_by_key(|&(t, n)| (t, n));
            for want in pending {
                let (at, got) = q.pop().unwrap();
                proptest::prop_assert_eq!((at.as_nanos(), got), want);
            }
            proptest::prop_assert!(q.is_empty());
        }
    }

    /// What a popped event is, for the equivalence tests.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum T {
        Plain(u32),
        Wake(usize),
    }

    proptest::proptest! {
        /// FIFO pipes change nothing in the pop order: pushes into pipes (mostly in order, some
        /// out of order, which must fall back to the heap) pop exactly as plain pushes do.
        #[test]
        fn pipes_pop_as_plain_pushes(ops in proptest::collection::vec((0u8..4, 0usize..3, 0u64..6), 1..400)) {
            let (mut a, mut b) = (EventQueue::default(), EventQueue::default());
            let mut last = [0u64; 3];
            let mut now = 0u64;
            for (i, &(op, pipe, dt)) in ops.iter().enumerate() {
                match op {
                    0 => {
                        let (x, y) = (a.pop(), b.pop());
                        proptest::prop_assert_eq!(&x, &y);
                        if let Some((t, _)) = x { now = t.as_nanos(); }
                    }
                    1 => {
                        let t = Instant::from_nanos(now + dt);
                        a.push(t, i);
                        b.push(t, i);
                    }
                    _ => {
                        // In order for its pipe, except when dt is 0 (possibly earlier).
                        let t = if dt == 0 { now } else { (last[pipe]).max(now) + dt - 1 };
                        last[pipe] = last[pipe].max(t);
                        a.push(Instant::from_nanos(t), i);
                        b.push_fifo(pipe, Instant::from_nanos(t), i);
                    }
                }
                proptest::prop_assert_eq!(a.len(), b.len());
            }
            while let Some(x) = a.pop() {
                proptest::prop_assert_eq!(Some(x), b.pop());
            }
            proptest::prop_assert!(b.is_empty());
        }

        /// Armed wake-ups act exactly as pushing every wake-up does. The reference pushes each
        /// arm as a plain event and skips the events of an owner that do not match its armed
        /// time (the simulator's rule); the other queue uses `arm` / `popped_wake`. Both are
        /// driven alike: after each acting event, the step's owners re-arm as `Simulation::kick`
        /// does (only an earlier time, or when nothing is armed or the armed time has passed),
        /// often at the current instant or at an already armed time, and plain events are
        /// pushed in between. The acting events must come in the same order at the same times.
        #[test]
        fn armed_wakeups_act_as_plain_pushes(
            steps in proptest::collection::vec(
                proptest::collection::vec((0usize..4, 0u64..4, proptest::bool::ANY), 0..4),
                1..150,
            )
        ) {
            const OWNERS: usize = 3;
            let mut plain: EventQueue<T> = EventQueue::default();
            let mut armed: EventQueue<T> = EventQueue::default();
            let mut wake_p = [None::<Instant>; OWNERS];
            let mut wake_a = [None::<Instant>; OWNERS];
            let mut wakes: Vec<Wakeups> = vec![Wakeups::default(); OWNERS];
            let mut id = 0u32;
            // Start: one plain event, so there is something to pop.
            plain.push(Instant::ZERO, T::Plain(id));
            armed.push(Instant::ZERO, T::Plain(id));
            for step in &steps {
                // The next acting event of each queue (skipped ones are not compared).
                let next_p = loop {
                    let Some((t, ev)) = plain.pop() else { break None };
                    match ev {
                        T::Wake(o) if wake_p[o] != Some(t) => continue,
                        T::Wake(o) => { wake_p[o] = None; break Some((t, ev)); }
                        T::Plain(_) => break Some((t, ev)),
                    }
                };
                let next_a = loop {
                    let Some((t, ev)) = armed.pop() else { break None };
                    match ev {
                        T::Wake(o) => {
                            armed.popped_wake(&mut wakes[o], wake_a[o], || T::Wake(o));
                            if wake_a[o] != Some(t) { continue; }
                            wake_a[o] = None;
                            break Some((t, ev));
                        }
                        T::Plain(_) => break Some((t, ev)),
                    }
                };
                proptest::prop_assert_eq!(next_p, next_a);
                proptest::prop_assert_eq!(wake_p, wake_a);
                let Some((t, _)) = next_p else { break };
                let now = t.as_nanos();
                for &(who, dt, also_plain) in step {
                    let at = Instant::from_nanos(now + dt);
                    if who < OWNERS {
                        let cur = wake_p[who];
                        if cur.is_none_or(|c| at < c || c.as_nanos() < now) {
                            wake_p[who] = Some(at);
                            wake_a[who] = Some(at);
                            plain.push(at, T::Wake(who));
                            armed.arm(&mut wakes[who], at, || T::Wake(who));
                        }
                    }
                    if also_plain || who == OWNERS {
                        id += 1;
                        plain.push(at, T::Plain(id));
                        armed.push(at, T::Plain(id));
                    }
                }
            }
        }
    }
}
