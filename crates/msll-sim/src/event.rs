//! The event queue: a binary heap of `(time, insertion sequence)` keys over a slab of payloads.
//!
//! Ordering by insertion sequence at equal times (ns-3's `EventKey`) makes simultaneous events run
//! first-in first-out, so a run is a pure function of scenario and seed. Payloads stay in the slab
//! (reused through a free list) so heap sifts move 16-byte keys, not frames.
//!
//! Measured alternatives (callgrind; docs/performance.md): a sorted vector of inline events wins
//! only below ~10 pending events (case a10 -3 %) and loses on busy runs, which hold 13-45 (cases
//! b-sr, d-sr, f +3-5 %); per-link FIFO pipes of arrivals with only their heads in the heap lose
//! 1-2 % everywhere; hand-written 4-ary and binary heaps lose to `std`'s; a radix heap over the
//! same keys (push O(1), pop redistributes the lowest bucket) loses 11-15 % (a10 62.1 -> 71.1 M,
//! f 160.7 -> 181.8 M instructions): near-future events share a bucket, so a pop moves ~220
//! instructions' worth of keys; a calendar queue (Brown's, as in ns-2: power-of-two days sized
//! from the earliest 25 events, buckets doubled/halved with the queue) loses 8-11 % (a10 68.1 M,
//! b-sr 882.9 -> 982.1 M, c 876.0 -> 971.6 M, f 172.7 M): with 4-70 pending events spread from
//! microseconds (frames) to seconds (timers), its sorted-bucket inserts and day scans cost more
//! than a 5-level sift. Session 7 timed a 4-ary heap with bottom-up deletion once more (by wall
//! time, not instructions): -3 % on the multi-service runs in one hour, nothing in the next; not
//! kept (docs/performance.md, session 7).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use msll_proto::Instant;

/// Bits of a key holding the slab slot (the rest of the low word is the insertion sequence).
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u128 = (1 << SLOT_BITS) - 1;

pub struct EventQueue<E> {
    /// Keys `time << 64 | seq << 24 | slot`: one plain u128 per event, so a sift step is one
    /// two-word comparison and a 16-byte move. Keys are unique (seq is), so the slot bits never
    /// decide an order.
    heap: BinaryHeap<Reverse<u128>>,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            slab: Vec::new(),
            free: Vec::new(),
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    // Always inline: called out of line, the event (56 bytes) went through a stack copy that the
    // caller writes in 8-byte pieces and `push` reads in 16-byte ones, a store-forwarding stall
    // that sampling put at 40 % of `push` (session 8: msll bench cases -4 to -8 %).
    #[inline(always)]
    pub fn push(&mut self, at: Instant, ev: E) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = Some(ev);
                i
            }
            None => {
                self.slab.push(Some(ev));
                (self.slab.len() - 1) as u32
            }
        };
        assert!(
            (slot as u128) <= SLOT_MASK && self.seq < 1 << (64 - SLOT_BITS),
            "event queue limits: 2^24 pending events, 2^40 events per run"
        );
        self.heap.push(Reverse(
            ((at.as_nanos() as u128) << 64) | ((self.seq as u128) << SLOT_BITS) | slot as u128,
        ));
        self.seq += 1;
    }

    pub fn peek_time(&self) -> Option<Instant> {
        self.heap
            .peek()
            .map(|Reverse(k)| Instant::from_nanos((*k >> 64) as u64))
    }

    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let Reverse(k) = self.heap.pop()?;
        let t = (k >> 64) as u64;
        let slot = (k & SLOT_MASK) as u32;
        let ev = self.slab[slot as usize].take().expect("event slot filled");
        self.free.push(slot);
        Some((Instant::from_nanos(t), ev))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Events scheduled so far (a cheap work counter).
    pub fn scheduled(&self) -> u64 {
        self.seq
    }
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
}
