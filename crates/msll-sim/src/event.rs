//! The event queue: `(time, insertion sequence)` keys, kept sorted (or in a binary heap when
//! many are pending), over a slab of payloads.
//!
//! Ordering by insertion sequence at equal times (ns-3's `EventKey`) makes simultaneous events run
//! first-in first-out, so a run is a pure function of scenario and seed. Payloads stay in the slab
//! (reused through a free list) so the key structure moves 16-byte keys, not frames.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use msll_proto::Instant;

pub struct EventQueue<E> {
    entries: Entries<E>,
    seq: u64,
}

/// One pending event. Keys `time << 64 | seq` are unique (seq is), so entries order by key alone.
struct Entry<E> {
    key: u128,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// Pending events. A run usually holds 4-10: a vector sorted latest-first pops the earliest with
/// `Vec::pop` and inserts after a short scan (new events are usually the latest), cheaper than a
/// heap's sifts plus a payload slab at that size (callgrind, case a10). Past `SORTED_MAX` entries it
/// turns into a binary heap for good, so large scenarios keep O(log n). Both give the same order.
enum Entries<E> {
    Sorted(Vec<Entry<E>>),
    Heap(BinaryHeap<Reverse<Entry<E>>>),
}

/// Largest pending-event count kept as a sorted vector.
const SORTED_MAX: usize = 32;

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            entries: Entries::Sorted(Vec::with_capacity(SORTED_MAX)),
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn push(&mut self, at: Instant, ev: E) {
        let key = ((at.as_nanos() as u128) << 64) | self.seq as u128;
        self.seq += 1;
        let e = Entry { key, ev };
        match &mut self.entries {
            Entries::Sorted(v) => {
                if v.len() < SORTED_MAX {
                    let pos = v.iter().take_while(|x| x.key > key).count();
                    v.insert(pos, e);
                } else {
                    let mut h: BinaryHeap<Reverse<Entry<E>>> = v.drain(..).map(Reverse).collect();
                    h.push(Reverse(e));
                    self.entries = Entries::Heap(h);
                }
            }
            Entries::Heap(h) => h.push(Reverse(e)),
        }
    }

    pub fn peek_time(&self) -> Option<Instant> {
        let k = match &self.entries {
            Entries::Sorted(v) => v.last()?.key,
            Entries::Heap(h) => h.peek()?.0.key,
        };
        Some(Instant::from_nanos((k >> 64) as u64))
    }

    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let e = match &mut self.entries {
            Entries::Sorted(v) => v.pop()?,
            Entries::Heap(h) => h.pop()?.0,
        };
        Some((Instant::from_nanos((e.key >> 64) as u64), e.ev))
    }

    pub fn len(&self) -> usize {
        match &self.entries {
            Entries::Sorted(v) => v.len(),
            Entries::Heap(h) => h.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        /// Interleaved pushes and pops (one in three a pop, so the queue grows), across the sorted-vector/heap switch, come out in
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
