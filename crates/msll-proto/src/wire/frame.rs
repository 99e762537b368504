//! Link frames: a small scheme header followed by a body (packet bytes, a fragment, or parity).
//!
//! Every frame starts with one byte: the high nibble is the service number (added by the scheduler,
//! stripped by the demultiplexer), the low nibble is private to the scheme (seed 004 ch. 4 §4.2 and
//! ch. 6: "at least 1 byte of overhead in each frame, containing a link layer scheme identifier
//! which takes up 4 bits"). Schemes add further header bytes after it.
//!
//! A `Frame` keeps the header inline and the body as a shared [`Buf`], so building a frame around a
//! packet copies no payload. A frame read off a real wire arrives as one buffer; accessors treat
//! `head ++ body` as one logical byte string, so schemes parse both the same way.

use crate::buf::Buf;
use thiserror::Error;

/// Longest scheme header kept inline (service byte included); the schemes use at most 5 (an RSE
/// parity frame, whose shard is also 2 bytes longer than the longest payload: 7 in all, which
/// the daemon's `MAX_MTU` leaves room for).
pub const HEAD_MAX: usize = 7;

/// A link frame: up to [`HEAD_MAX`] header bytes inline, then a shared body.
#[derive(Clone, PartialEq, Eq)]
pub struct Frame {
    /// Header bytes 0..7 in little-endian order, the header length in the top byte. One word
    /// rather than `[u8; N]` plus a length byte: frames are moved by value through the
    /// scheduler and the simulator's events, and the odd-sized array (with its padding) was
    /// copied with overlapping 4- and 8-byte loads that missed store forwarding, a stall that
    /// sampling put at a fifth of the scheduler's dequeue (docs/performance.md, session 8).
    head: u64,
    body: Buf,
}

/// Why a frame could not be parsed.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    #[error("frame truncated: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    #[error("unknown frame type {0:#04x}")]
    UnknownType(u8),
    #[error("malformed frame: {0}")]
    Malformed(&'static str),
}

impl Frame {
    /// A frame with header `head` (first byte = service/scheme byte) and `body`.
    ///
    /// # Panics
    /// If `head` is empty or longer than [`HEAD_MAX`]: a scheme bug, not peer input.
    pub fn new(head: &[u8], body: Buf) -> Self {
        assert!(
            !head.is_empty() && head.len() <= HEAD_MAX,
            "scheme header length {}",
            head.len()
        );
        let mut h = [0u8; 8];
        h[..head.len()].copy_from_slice(head);
        h[7] = head.len() as u8;
        Frame {
            head: u64::from_le_bytes(h),
            body,
        }
    }

    /// A frame as read off a wire: one contiguous buffer. Returns `None` if empty.
    pub fn from_wire(bytes: Buf) -> Option<Self> {
        Self::from_wire_slice(&bytes)
    }

    /// [`Frame::from_wire`] from borrowed bytes: the body is copied once, straight from them (a
    /// `Buf` is a whole allocation, so cutting off the first byte of one would copy as well).
    pub fn from_wire_slice(bytes: &[u8]) -> Option<Self> {
        let (&first, body) = bytes.split_first()?;
        Some(Frame {
            head: first as u64 | 1 << 56,
            body: Buf::copy_from_slice(body),
        })
    }

    /// Header length in bytes.
    fn head_len(&self) -> usize {
        (self.head >> 56) as usize
    }

    /// The header bytes as an array (the first `head_len()` are meaningful).
    fn head_bytes(&self) -> [u8; 8] {
        self.head.to_le_bytes()
    }

    /// Total length on the wire (header + body), the number every link charges airtime for.
    pub fn len(&self) -> usize {
        self.head_len() + self.body.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Byte `i` of the logical frame.
    pub fn get(&self, i: usize) -> Option<u8> {
        let h = self.head_len();
        if i < h {
            Some(self.head_bytes()[i])
        } else {
            self.body.get(i - h).copied()
        }
    }

    /// `N` header bytes starting at 0, or `Truncated`.
    pub fn header<const N: usize>(&self) -> Result<[u8; N], FrameError> {
        if self.len() < N {
            return Err(FrameError::Truncated {
                need: N,
                have: self.len(),
            });
        }
        let mut out = [0u8; N];
        // Schemes read their header on every frame; it is normally all inline.
        if N <= self.head_len() {
            out.copy_from_slice(&self.head_bytes()[..N]);
            return Ok(out);
        }
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.get(i).unwrap_or(0);
        }
        Ok(out)
    }

    /// Everything from byte `off` on, without copying when `off` is the header boundary (the
    /// only case in the simulator; frames read off a wire are cut with a copy).
    #[cold]
    pub fn payload_from(&self, off: usize) -> Result<Buf, FrameError> {
        let h = self.head_len();
        if off > self.len() {
            return Err(FrameError::Truncated {
                need: off,
                have: self.len(),
            });
        }
        if off >= h {
            Ok(self.body.slice(off - h..))
        } else {
            let head = &self.head_bytes()[off..h];
            Ok(Buf::zeroed_with(self.len() - off, |b| {
                b[..head.len()].copy_from_slice(head);
                b[head.len()..].copy_from_slice(&self.body);
            }))
        }
    }

    /// Like [`Frame::payload_from`], but consumes the frame: at the header boundary the body
    /// moves out as it is (once per delivered packet on the simulator's hot path: inline, with
    /// every other case out of line).
    #[inline]
    pub fn into_payload_from(self, off: usize) -> Result<Buf, FrameError> {
        if off == self.head_len() {
            Ok(self.body)
        } else {
            self.payload_from(off)
        }
    }

    /// The first byte: service number (high nibble) and scheme bits (low nibble).
    pub fn first_byte(&self) -> u8 {
        self.head as u8
    }
    pub fn service(&self) -> u8 {
        self.first_byte() >> 4
    }
    pub fn scheme_bits(&self) -> u8 {
        self.first_byte() & 0x0f
    }
    /// Stamp the service number into the high nibble (the scheduler's job, seed 004 ch. 6).
    pub fn set_service(&mut self, service: u8) {
        let first = (self.first_byte() & 0x0f) | (service << 4);
        self.head = (self.head & !0xff) | first as u64;
    }

    /// Serialise for a real wire.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.head_bytes()[..self.head_len()]);
        out.extend_from_slice(&self.body);
    }
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len());
        self.write_to(&mut v);
        v
    }
    pub fn body(&self) -> &Buf {
        &self.body
    }
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Frame[{:02x?} + {} B]",
            &self.head_bytes()[..self.head_len()],
            self.body.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_bytes_span_head_and_body() {
        let f = Frame::new(&[0x13, 0x07], Buf::from_static(b"abc"));
        assert_eq!(f.len(), 5);
        assert_eq!(f.get(1), Some(7));
        assert_eq!(f.get(2), Some(b'a'));
        assert_eq!(f.header::<3>().unwrap(), [0x13, 7, b'a']);
        assert_eq!(&f.payload_from(2).unwrap()[..], b"abc");
        assert_eq!(&f.payload_from(1).unwrap()[..], b"\x07abc");
        assert_eq!(&f.clone().into_payload_from(2).unwrap()[..], b"abc");
        assert_eq!(&f.clone().into_payload_from(3).unwrap()[..], b"bc");
        assert_eq!(&f.clone().into_payload_from(1).unwrap()[..], b"\x07abc");
        assert!(f.clone().into_payload_from(9).is_err());
        let w = Frame::from_wire(Buf::from(f.to_vec())).unwrap();
        assert_eq!(w.header::<2>().unwrap(), [0x13, 7]);
        assert_eq!(&w.payload_from(2).unwrap()[..], b"abc");
        assert_eq!(w.service(), 1);
        assert!(matches!(w.header::<6>(), Err(FrameError::Truncated { .. })));
        assert!(Frame::from_wire(Buf::new()).is_none());
    }

    #[test]
    fn service_nibble() {
        let mut f = Frame::new(&[0x05], Buf::new());
        f.set_service(0xa);
        assert_eq!(f.first_byte(), 0xa5);
        assert_eq!(f.scheme_bits(), 5);
    }
}
#[cfg(test)]
mod layout {
    /// The header word and the body fill a frame with no padding bytes (see `Frame::head`):
    /// a layout change that brings padding back should be a deliberate one.
    #[test]
    fn frame_is_header_word_plus_body() {
        use super::*;
        assert_eq!(std::mem::size_of::<Frame>(), 8 + std::mem::size_of::<Buf>());
        assert_eq!(std::mem::size_of::<Frame>(), 24);
        // The empty body's `None` takes the pointer's niche, so an optional frame needs a tag.
        assert_eq!(std::mem::size_of::<Option<(usize, Frame)>>(), 40);
    }
}
