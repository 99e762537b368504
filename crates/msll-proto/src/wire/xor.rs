//! XOR and XOR/Ad frames (seed004-ch5 sec. 4.2-sec. 4.3; AMB-3 resolved as recommended).
//!
//! ```text
//! data:   [svc:4 | P=0 | block:3] [0 | index:7] payload...
//! parity: [svc:4 | P=1 | block:3] [L | count:7] (len_xor:16 if L) xor-of-payloads...
//! ```
//!
//! * The 4 spare bits of the id byte carry a 3-bit block number and a 1-bit parity flag (seed 004
//!   L998, XOR/Ad); fixed XOR uses the same format (AMB-3 option (a)): "frames within a block are
//!   numbered sequentially ... as in the XOR scheme".
//! * Byte 1 of a data frame is its index in the block (0..n-1). Byte 1 of a parity frame is the
//!   number of data frames it covers (n, or fewer when XOR/Ad closes a block early), so the
//!   receiver knows the block size (seed004-ch5 sec. 4.3 INFERRED).
//! * Unequal payload lengths (not in the thesis, where every packet is the maximum size; here TCP
//!   ACKs and short packets exist): payloads are XORed zero-padded to the longest, and when the
//!   lengths in a block differ the parity carries the XOR of the 16-bit lengths, flagged by bit 7
//!   (L) of byte 1. With equal lengths (the thesis case) the parity frame is exactly payload + 2
//!   bytes, as in seed004-ch5 sec. 4.0.

use crate::buf::Buf;

use super::frame::{Frame, FrameError};

/// Header bytes of an XOR data frame (service byte included).
pub const XOR_DATA_HEADER: usize = 2;
/// Largest block (index and count are 7 bits).
pub const XOR_MAX_BLOCK: u8 = 127;

const PARITY: u8 = 0x8;
const LENS: u8 = 0x80;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XorFrame {
    Data {
        block: u8,
        index: u8,
        payload: Buf,
    },
    Parity {
        block: u8,
        count: u8,
        /// XOR of the covered payload lengths, present when they were not all equal.
        len_xor: Option<u16>,
        payload: Buf,
    },
}

impl XorFrame {
    pub fn parse(frame: &Frame) -> Result<Self, FrameError> {
        Self::from_frame(frame.clone())
    }

    /// [`XorFrame::parse`] of a frame the caller gives up: a data frame's body moves into the
    /// payload instead of being cloned (a reference-count round trip per received frame).
    pub fn from_frame(frame: Frame) -> Result<Self, FrameError> {
        let [b0, b1] = frame.header::<2>()?;
        let block = b0 & 0x7;
        if b0 & PARITY == 0 {
            if b1 & LENS != 0 {
                return Err(FrameError::Malformed("XOR data index above 127"));
            }
            return Ok(XorFrame::Data {
                block,
                index: b1,
                payload: frame.into_payload_from(XOR_DATA_HEADER)?,
            });
        }
        let count = b1 & 0x7f;
        if count == 0 {
            return Err(FrameError::Malformed("XOR parity covering no frames"));
        }
        if b1 & LENS != 0 {
            let [_, _, hi, lo] = frame.header::<4>()?;
            Ok(XorFrame::Parity {
                block,
                count,
                len_xor: Some(u16::from_be_bytes([hi, lo])),
                payload: frame.into_payload_from(4)?,
            })
        } else {
            Ok(XorFrame::Parity {
                block,
                count,
                len_xor: None,
                payload: frame.into_payload_from(2)?,
            })
        }
    }

    /// `(block, index)` of a data frame that [`XorFrame::parse`] accepts, from the header only.
    pub fn data_index(frame: &Frame) -> Option<(u8, u8)> {
        let [b0, b1] = frame.header::<2>().ok()?;
        (b0 & PARITY == 0 && b1 & LENS == 0).then_some((b0 & 0x7, b1))
    }

    /// # Panics
    /// On a block number above 7 or an index/count above 127 (scheme bugs, not peer input).
    ///
    /// Consumes the value: the payload moves into the frame instead of being cloned and the
    /// original dropped (two atomic reference-count updates per data frame saved).
    pub fn emit(self) -> Frame {
        match self {
            XorFrame::Data {
                block,
                index,
                payload,
            } => {
                assert!(block < 8 && index <= XOR_MAX_BLOCK);
                Frame::new(&[block, index], payload)
            }
            XorFrame::Parity {
                block,
                count,
                len_xor,
                payload,
            } => {
                assert!(block < 8 && (1..=XOR_MAX_BLOCK).contains(&count));
                match len_xor {
                    None => Frame::new(&[PARITY | block, count], payload),
                    Some(l) => {
                        let [hi, lo] = l.to_be_bytes();
                        Frame::new(&[PARITY | block, LENS | count, hi, lo], payload)
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::wire;

    #[test]
    fn round_trip_byte_vectors() {
        let d = XorFrame::parse(&wire(&[0x35, 3, 9])).unwrap();
        assert_eq!(
            d,
            XorFrame::Data {
                block: 5,
                index: 3,
                payload: Buf::from_static(&[9])
            }
        );
        assert_eq!(d.emit().to_vec(), vec![0x05, 3, 9]);
        let p = XorFrame::parse(&wire(&[0x3e, 0x88, 0x01, 0x02, 7])).unwrap();
        assert_eq!(
            p,
            XorFrame::Parity {
                block: 6,
                count: 8,
                len_xor: Some(0x0102),
                payload: Buf::from_static(&[7])
            }
        );
        assert_eq!(p.emit().to_vec(), vec![0x0e, 0x88, 1, 2, 7]);
        let q = XorFrame::parse(&wire(&[0x0f, 12, 1, 2])).unwrap();
        assert!(matches!(
            q,
            XorFrame::Parity {
                block: 7,
                count: 12,
                len_xor: None,
                ..
            }
        ));
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(matches!(
            XorFrame::parse(&wire(&[0x01])),
            Err(FrameError::Truncated { .. })
        ));
        assert!(matches!(
            XorFrame::parse(&wire(&[0x01, 0x80])),
            Err(FrameError::Malformed(_))
        ));
        assert!(matches!(
            XorFrame::parse(&wire(&[0x08, 0])),
            Err(FrameError::Malformed(_))
        ));
        assert!(matches!(
            XorFrame::parse(&wire(&[0x08, 0x81, 1])),
            Err(FrameError::Truncated { .. })
        ));
    }
}
