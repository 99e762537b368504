//! `Buf`: the immutable, cheaply clonable byte buffer that packets and frame bodies are made of.
//!
//! One reference-counted allocation (`Rc<[u8]>`), so cloning a packet for a retransmission buffer
//! copies no bytes. It replaces `bytes::Bytes` in the protocol code (session 10) for two reasons,
//! both measured by sampling the whole catalogue:
//! - `Bytes` counts references atomically, and the first clone of a `Vec`-backed `Bytes` allocates
//!   a shared header: its clone/drop functions were ~5 % of the catalogue's time, for buffers that
//!   never leave the thread that runs the link (the simulator runs one simulation per thread, the
//!   daemon one endpoint on a current-thread runtime);
//! - it is 16 bytes, not 32 (and an empty buffer needs no allocation), so packets, frames and
//!   events move in fewer pieces.
//!
//! A `Buf` is always a whole allocation: taking a proper part of it ([`Buf::slice`]) copies. The
//! simulator never does (a frame's header is kept inline, so its body is the packet itself); only
//! frames read off a real wire are cut (docs/mslld.md counts the daemon's copies). The daemon's
//! sockets keep `bytes::Bytes` and copy at that boundary.

use std::fmt;
use std::ops::{Bound, Deref, RangeBounds};
use std::rc::Rc;

/// Immutable bytes in one shared allocation (`None`: empty, no allocation; every constructor keeps
/// `Some` non-empty, which `is_empty` relies on).
#[derive(Clone, Default)]
pub struct Buf(Option<Rc<[u8]>>);

impl Buf {
    /// The empty buffer.
    #[inline]
    pub const fn new() -> Self {
        Buf(None)
    }

    /// A buffer of `len` zero bytes, with `fill` writing into it first: one allocation, no copy
    /// (the packet builders write their headers this way).
    #[inline]
    pub fn zeroed_with(len: usize, fill: impl FnOnce(&mut [u8])) -> Self {
        if len == 0 {
            return Buf::new();
        }
        let mut rc: Rc<[u8]> = std::iter::repeat_n(0u8, len).collect();
        fill(Rc::get_mut(&mut rc).expect("a new allocation is unique"));
        Buf(Some(rc))
    }

    /// A copy of `b`.
    #[inline]
    pub fn copy_from_slice(b: &[u8]) -> Self {
        if b.is_empty() {
            return Buf::new();
        }
        Buf(Some(Rc::from(b)))
    }

    /// A copy of static bytes (`bytes::Bytes::from_static` borrowed them; a copy keeps one
    /// representation).
    pub fn from_static(b: &'static [u8]) -> Self {
        Buf::copy_from_slice(b)
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match &self.0 {
            Some(d) => d,
            None => &[],
        }
    }

    /// The bytes in `range`: the same allocation if that is all of it, else a copy.
    ///
    /// # Panics
    /// If the range is out of bounds or decreasing, like slicing.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Self {
        // Checked: a release build would wrap `usize::MAX + 1` to 0 instead of panicking.
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.checked_add(1).expect("range start out of range"),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1).expect("range end out of range"),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len(),
        };
        if start == 0 && end == self.len() {
            return self.clone();
        }
        Buf::copy_from_slice(&self.as_slice()[start..end])
    }
}

impl Deref for Buf {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Buf {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<Vec<u8>> for Buf {
    /// One copy into the shared allocation (hot paths build with [`Buf::zeroed_with`]).
    fn from(v: Vec<u8>) -> Self {
        Buf::copy_from_slice(&v)
    }
}

impl PartialEq for Buf {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Buf {}

impl fmt::Debug for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"")?;
        for &b in self.as_slice() {
            write!(f, "{}", std::ascii::escape_default(b))?;
        }
        write!(f, "\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_buffers_allocate_nothing_and_compare_equal() {
        assert!(Buf::new().0.is_none());
        assert!(Buf::copy_from_slice(&[]).0.is_none());
        assert!(Buf::zeroed_with(0, |_| {}).0.is_none());
        assert!(Buf::copy_from_slice(b"abc").slice(3..).0.is_none());
        assert_eq!(Buf::new(), Buf::copy_from_slice(b"abc").slice(1..1));
        assert_eq!(format!("{:?}", Buf::from_static(b"a\n")), "b\"a\\n\"");
        assert_eq!(std::mem::size_of::<Buf>(), 16);
    }

    #[test]
    fn zeroed_with_fills_one_allocation() {
        let b = Buf::zeroed_with(6, |s| s[..2].copy_from_slice(b"hi"));
        assert_eq!(&b[..], b"hi\0\0\0\0");
        let c = b.clone();
        assert!(Rc::ptr_eq(b.0.as_ref().unwrap(), c.0.as_ref().unwrap()));
        assert_eq!(Rc::strong_count(b.0.as_ref().unwrap()), 2);
        // The whole buffer as a slice is the same allocation.
        let d = b.slice(..);
        assert_eq!(Rc::strong_count(b.0.as_ref().unwrap()), 3);
        drop((c, d));
        assert_eq!(Rc::strong_count(b.0.as_ref().unwrap()), 1);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn slicing_past_the_end_panics() {
        let _ = Buf::copy_from_slice(b"abc").slice(1..4);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn an_inclusive_end_at_usize_max_panics_instead_of_wrapping() {
        let _ = Buf::copy_from_slice(b"abc").slice(..=usize::MAX);
    }

    proptest! {
        /// Slices of a buffer read exactly as the same slices of the bytes.
        #[test]
        fn views_match_slices(
            v in prop::collection::vec(any::<u8>(), 0..64),
            a in 0usize..64, b in 0usize..64,
        ) {
            let buf = Buf::from(v.clone());
            prop_assert_eq!(&buf[..], &v[..]);
            let (lo, hi) = (a.min(b).min(v.len()), a.max(b).min(v.len()));
            let s = buf.slice(lo..hi);
            prop_assert_eq!(&s[..], &v[lo..hi]);
            prop_assert_eq!(&buf.slice(lo..)[..], &v[lo..]);
            if hi > lo {
                prop_assert_eq!(&buf.slice(lo..=hi - 1)[..], &v[lo..hi]);
            }
            prop_assert_eq!(s.slice(..).len(), hi - lo);
        }
    }
}
