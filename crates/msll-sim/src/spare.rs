//! Spent packet buffers, reused for the next packet of the same length (one small pool per thread).
//!
//! Every TCP segment is a fresh zero-filled allocation of its whole length
//! (real IPv4/TCP/UDP bytes, `msll_proto::Buf`), and the agent that receives it drops it. In an FTP
//! run that is one allocation, one 1,040-byte zero fill and one free per data packet and per ACK:
//! ~5 % of case (a)'s time (session 13, docs/performance.md). Here a packet an agent has consumed
//! goes back to a pool, and the next packet of that length is written into it.
//!
//! A reused buffer reads exactly as a fresh one, so results cannot depend on the pool (nor on
//! which thread ran what before):
//! - the builder (`tcp::build_segment`) writes only the headers, the first [`HEAD`] bytes, which are zeroed again before a buffer is reused; every byte past them
//!   is zero in every packet built;
//! - a packet reaches the pool only where nothing on its way rewrites it: the simulator recycles
//!   only when every link is wired or one Default service (`Simulation::recycle`), where a packet
//!   is delivered as built or as a byte-exact reassembly of its fragments. Its tail is therefore
//!   still zero; debug builds check it.
//! - a buffer enters the pool only if no other handle shares it (`Buf::get_mut`).
//!
//! Zero-filling the whole buffer again, or checking its tail in release builds, would cost about
//! what the pool saves (session 13, docs/performance.md).

use std::cell::{Cell, RefCell};

use msll_proto::{Buf, Packet};

/// Bytes zeroed when a buffer is reused: the IPv4 + TCP headers are 40 (`tcp::HEADER_BYTES`).
/// Any received packet may come back (a conferencing packet: IPv4 + UDP + a 12-byte sequence
/// number and timestamp, 40 bytes), so the margin. Conferencing packets are not built here: its
/// runs are mostly under a link-layer scheme, which holds the packets, and missing the pool on
/// every packet cost case (e) 0.8 % (session 13).
pub(crate) const HEAD: usize = 64;
/// Packet lengths pooled at once (an FTP run has two: data and ACKs).
const LENGTHS: usize = 4;
/// Buffers kept per length: a window's worth of packets.
const DEPTH: usize = 64;

struct Pool {
    /// `(length, buffers)`; a slot with no buffers is free for another length.
    slots: [(usize, Vec<Buf>); LENGTHS],
}

thread_local! {
    /// Buffers in `POOL`: a run that never recycles (any ARQ scheme) finds it 0 and skips the
    /// pool with one load (searching it on every segment cost such runs ~0.8 %, session 13).
    static HELD: Cell<usize> = const { Cell::new(0) };
    static POOL: RefCell<Pool> = const {
        RefCell::new(Pool {
            slots: [const { (0, Vec::new()) }; LENGTHS],
        })
    };
}

/// `Buf::zeroed_with(len, fill)`, in a spent buffer of that length if the pool has one.
#[inline]
pub(crate) fn zeroed_with(len: usize, fill: impl FnOnce(&mut [u8])) -> Buf {
    let mut b = match take(len) {
        Some(mut b) => {
            let w = b.get_mut().expect("pooled buffers are unshared");
            w[..len.min(HEAD)].fill(0);
            b
        }
        None => Buf::zeroed_with(len, |_| {}),
    };
    // One call site for `fill`, so it is inlined once (two made the builders' closures out of
    // line: +1.6 % instructions on case e).
    if let Some(w) = b.get_mut() {
        fill(w);
        debug_assert!(tail_is_zero(w), "a packet builder wrote past spare::HEAD");
    }
    b
}

fn tail_is_zero(b: &[u8]) -> bool {
    b.get(HEAD..).is_none_or(|t| t.iter().all(|&x| x == 0))
}

#[inline]
fn take(len: usize) -> Option<Buf> {
    if HELD.get() == 0 {
        return None;
    }
    let b = POOL.with_borrow_mut(|p| {
        p.slots
            .iter_mut()
            .find(|(l, _)| *l == len)
            .and_then(|(_, v)| v.pop())
    });
    if b.is_some() {
        HELD.set(HELD.get() - 1);
    }
    b
}

/// Hand back a packet its receiver is done with: its buffer is pooled (`true`) if nothing else
/// shares it and the pool has room; otherwise it is simply dropped.
#[inline]
pub(crate) fn recycle(pkt: Packet) -> bool {
    let mut b = pkt.into_bytes();
    let len = b.len();
    let Some(w) = b.get_mut() else { return false };
    debug_assert!(
        tail_is_zero(w),
        "a recycled packet was rewritten past spare::HEAD"
    );
    POOL.with_borrow_mut(|p| {
        let slot = match p.slots.iter().position(|(l, _)| *l == len) {
            Some(i) => i,
            None => match p.slots.iter().position(|(_, v)| v.is_empty()) {
                Some(i) => i,
                None => return false,
            },
        };
        let (l, v) = &mut p.slots[slot];
        if v.len() >= DEPTH {
            return false;
        }
        *l = len;
        v.push(b);
        HELD.set(HELD.get() + 1);
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pooled(len: usize) -> usize {
        POOL.with_borrow(|p| {
            p.slots
                .iter()
                .filter(|(l, _)| *l == len)
                .map(|(_, v)| v.len())
                .sum()
        })
    }

    #[test]
    fn a_reused_buffer_reads_as_a_fresh_one() {
        let dirty = |b: &mut [u8]| b[..HEAD].fill(0xab);
        let first = zeroed_with(1040, dirty);
        let ptr = first.as_ptr();
        assert!(recycle(Packet::new(first)));
        assert_eq!(pooled(1040), 1);
        let again = zeroed_with(1040, |b| b[3] = 7);
        assert_eq!(again.as_ptr(), ptr, "the spent allocation is reused");
        assert_eq!(pooled(1040), 0);
        let fresh = Buf::zeroed_with(1040, |b| b[3] = 7);
        assert_eq!(&again[..], &fresh[..]);
    }

    #[test]
    fn shared_buffers_stay_out() {
        let b = zeroed_with(500, |_| {});
        let held = b.clone();
        assert!(!recycle(Packet::new(b)));
        assert_eq!(pooled(500), 0, "a clone still holds it");
        drop(held);
        assert!(recycle(Packet::new(zeroed_with(40, |b| b[0] = 0x45))));
        assert_eq!(pooled(40), 1);
        assert_eq!(&zeroed_with(40, |_| {})[..], &[0u8; 40][..]);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "rewritten past spare::HEAD")]
    fn debug_builds_refuse_a_packet_dirty_past_the_head() {
        let mut b = zeroed_with(200, |_| {});
        b.get_mut().expect("unshared")[HEAD] = 1;
        recycle(Packet::new(b));
    }

    #[test]
    fn the_pool_is_bounded() {
        for len in 100..100 + LENGTHS + 2 {
            let bufs: Vec<Buf> = (0..DEPTH + 5).map(|_| zeroed_with(len, |_| {})).collect();
            for b in bufs {
                let _ = recycle(Packet::new(b));
            }
        }
        let total: usize = POOL.with_borrow(|p| p.slots.iter().map(|(_, v)| v.len()).sum());
        assert_eq!(total, LENGTHS * DEPTH);
        assert_eq!(pooled(100 + LENGTHS), 0, "no slot left for a fifth length");
    }
}
