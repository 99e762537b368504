//! Reed-Solomon erasure (RSE) frames: `n` data frames, then `h` parity frames (seed 004 L1037,
//! seed004-ch5 sec. 4.7: "for every n data frames h parity frames are generated, allowing up to h
//! lost, or erased, frames to be recovered"; the thesis discusses and rejects the scheme, msll
//! implements it so that the argument can be measured).
//!
//! ```text
//! data:   [svc:4 | P=0 | 000] [0 | index:7] [block:8] payload...
//! parity: [svc:4 | P=1 | 000] [0 | count:7] [block:8] [parity:8] [pindex:8] shard...
//! ```
//!
//! * Block numbers have 8 bits, not XOR's 3 (`wire::xor`, seed 004 L998): a receiver that missed
//!   a whole number of block cycles cannot tell an old block from a new one with the same number,
//!   and mixes their frames. With 3 bits, 8 lost blocks in a row are enough; over a PCS link at
//!   L4 (bad periods of seconds) RSE 8+2 then rebuilt packets from mixed shards: 6 duplicates and
//!   a packet 289 s late in 120 runs, where XOR, which needs all but one frame, showed none. The
//!   thesis gives RSE no format, so the cost is one byte per data frame (3 instead of XOR's 2).
//! * A parity frame names the number of data frames it covers (`count`: n, or fewer when RSE/Ad
//!   closes a block early), how many parity frames the block has (`parity`: h) and its own
//!   place among them (`pindex`, 0..h): the receiver needs all three to decode.
//! * Shards: each data payload is coded as its 16-bit big-endian length, the payload, and zeros
//!   up to the block's shard size, the longest payload + 2. A parity frame's body is one shard,
//!   so the receiver learns the shard size from it and the length of a rebuilt frame from the
//!   rebuilt shard. With equal lengths (the thesis's case) a parity frame is a data frame + 4
//!   bytes.

use crate::buf::Buf;

use super::frame::{Frame, FrameError};

/// Header bytes of an RSE data frame (service byte included).
pub const RSE_DATA_HEADER: usize = 3;
/// Header bytes of an RSE parity frame.
pub const RSE_PARITY_HEADER: usize = 5;
/// Largest number of data frames in a block (7-bit index and count).
pub const RSE_MAX_BLOCK: u8 = 127;
/// Largest number of parity frames in a block (kept to 7 bits like the block; with the block,
/// at most 254 shards, within GF(2^8)'s 256).
pub const RSE_MAX_PARITY: u8 = 127;

// A parity frame is its header + the longest payload + 2: the daemon sizes datagrams for a
// payload + HEAD_MAX bytes (mslld `MAX_MTU`).
const _: () = assert!(RSE_PARITY_HEADER + 2 <= super::HEAD_MAX);

const PARITY: u8 = 0x8;
const HIGH: u8 = 0x80;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RseFrame {
    Data {
        block: u8,
        index: u8,
        payload: Buf,
    },
    Parity {
        block: u8,
        /// Data frames the block holds (1..=127).
        count: u8,
        /// Parity frames the block holds (1..=127).
        parity: u8,
        /// This frame's place among them (0..parity).
        pindex: u8,
        shard: Buf,
    },
}

/// Shard size of a block whose longest payload is `max_len` bytes.
pub fn shard_size(max_len: usize) -> usize {
    max_len + 2
}

impl RseFrame {
    pub fn parse(frame: &Frame) -> Result<Self, FrameError> {
        Self::from_frame(frame.clone())
    }

    /// [`RseFrame::parse`] of a frame the caller gives up (the body moves, no clone).
    pub fn from_frame(frame: Frame) -> Result<Self, FrameError> {
        let [b0, b1, block] = frame.header::<3>()?;
        if b0 & 0x7 != 0 {
            return Err(FrameError::Malformed("RSE reserved bits set"));
        }
        if b1 & HIGH != 0 {
            return Err(FrameError::Malformed("RSE index or count above 127"));
        }
        if b0 & PARITY == 0 {
            return Ok(RseFrame::Data {
                block,
                index: b1,
                payload: frame.into_payload_from(RSE_DATA_HEADER)?,
            });
        }
        let [_, _, _, parity, pindex] = frame.header::<5>()?;
        if b1 == 0 {
            return Err(FrameError::Malformed("RSE parity covering no frames"));
        }
        if !(1..=RSE_MAX_PARITY).contains(&parity) || pindex >= parity {
            return Err(FrameError::Malformed("RSE parity index out of range"));
        }
        let shard = frame.into_payload_from(RSE_PARITY_HEADER)?;
        if shard.len() < 2 {
            return Err(FrameError::Malformed(
                "RSE shard shorter than its length field",
            ));
        }
        Ok(RseFrame::Parity {
            block,
            count: b1,
            parity,
            pindex,
            shard,
        })
    }

    /// `(block, index)` of a data frame that [`RseFrame::parse`] accepts, from the header only.
    pub fn data_index(frame: &Frame) -> Option<(u8, u8)> {
        let [b0, b1, block] = frame.header::<3>().ok()?;
        (b0 & (PARITY | 0x7) == 0 && b1 & HIGH == 0).then_some((block, b1))
    }

    /// # Panics
    /// On an index, count or parity count above 127, a parity index not
    /// below the parity count, or a shard shorter than 2 bytes (scheme bugs, not peer input).
    pub fn emit(self) -> Frame {
        match self {
            RseFrame::Data {
                block,
                index,
                payload,
            } => {
                assert!(index <= RSE_MAX_BLOCK);
                Frame::new(&[0, index, block], payload)
            }
            RseFrame::Parity {
                block,
                count,
                parity,
                pindex,
                shard,
            } => {
                assert!((1..=RSE_MAX_BLOCK).contains(&count));
                assert!((1..=RSE_MAX_PARITY).contains(&parity) && pindex < parity);
                assert!(shard.len() >= 2);
                Frame::new(&[PARITY, count, block, parity, pindex], shard)
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
        let d = RseFrame::parse(&wire(&[0x30, 3, 200, 9])).unwrap();
        assert_eq!(
            d,
            RseFrame::Data {
                block: 200,
                index: 3,
                payload: Buf::from_static(&[9])
            }
        );
        assert_eq!(d.emit().to_vec(), vec![0x00, 3, 200, 9]);
        let p = RseFrame::parse(&wire(&[0x38, 8, 6, 3, 2, 0, 1, 7])).unwrap();
        assert_eq!(
            p,
            RseFrame::Parity {
                block: 6,
                count: 8,
                parity: 3,
                pindex: 2,
                shard: Buf::from_static(&[0, 1, 7])
            }
        );
        assert_eq!(p.emit().to_vec(), vec![0x08, 8, 6, 3, 2, 0, 1, 7]);
    }

    #[test]
    fn malformed_frames_are_errors() {
        for bad in [
            &[0x31, 0, 0, 1][..],          // reserved bits
            &[0x30, 0x80, 0, 1][..],       // index above 127
            &[0x38, 0, 0, 1, 0, 0, 0][..], // parity covering nothing
            &[0x38, 4, 0, 0, 0, 0, 0][..], // no parity frames
            &[0x38, 4, 0, 2, 2, 0, 0][..], // parity index beyond the count
            &[0x38, 4, 0, 2, 1, 0][..],    // shard without room for a length
            &[0x38, 4, 0, 2, 1][..],       // empty shard
            &[0x38, 4, 0, 2][..],          // truncated header
            &[0x30, 1][..],                // truncated header
        ] {
            let f = Frame::from_wire(Buf::from(bad.to_vec())).unwrap();
            assert!(RseFrame::parse(&f).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn shard_size_holds_the_length() {
        assert_eq!(shard_size(0), 2);
        assert_eq!(shard_size(1000), 1002);
    }
}
