//! Frames of the periodic-status selective-repeat protocol (Wong 1998's "RLP", after Paul et al.
//! 1995; seed002.md sec. 3.4). Sequence numbers are 7 bits (modulo 128, seed002.md sec. 3.0).
//!
//! ```text
//! data:   [svc:4 | type=1:4] [0:1 | seq:7] payload...    2-byte header; data frames carry no ACK
//! status: [svc:4 | type=2:4] [0:1 | nr:7] [bitmap...]     nr = next frame expected in sequence;
//!                                                          bit i (LSB first) = frame nr+1+i received
//! ```
//!
//! The thesis gives no frame layout (seed002.md A10, A15): these are the fewest bytes that carry
//! what sec. 3.4 needs. A status frame with a 15-frame window is 4 bytes (the spec's estimate of
//! 72 bits assumes a 48-bit HDLC envelope that msll's frames do not have; docs/seed002.md).

use crate::buf::Buf;

use super::frame::{Frame, FrameError};

const T_DATA: u8 = 0x1;
const T_STATUS: u8 = 0x2;

/// Header bytes of a data frame (service byte included).
pub const STATUS_DATA_HEADER: usize = 2;
/// Longest bitmap a status frame may carry: 64 frames beyond `nr`, more than the largest window.
pub const STATUS_MAX_BITMAP: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusFrame {
    Data {
        seq: u8,
        payload: Buf,
    },
    /// `bitmap` holds 8 * len bits; bit i is frame `nr + 1 + i`.
    Status {
        nr: u8,
        bitmap: Buf,
    },
}

impl StatusFrame {
    /// Parse a received frame; its body moves into the payload.
    pub fn from_frame(frame: Frame) -> Result<Self, FrameError> {
        let [b0] = frame.header::<1>()?;
        let t = b0 & 0x0f;
        if !matches!(t, T_DATA | T_STATUS) {
            return Err(FrameError::UnknownType(t));
        }
        let [_, seq] = frame.header::<2>()?;
        if seq & 0x80 != 0 {
            return Err(FrameError::Malformed("sequence number above 127"));
        }
        match t {
            T_DATA => Ok(StatusFrame::Data {
                seq,
                payload: frame.into_payload_from(STATUS_DATA_HEADER)?,
            }),
            _ if frame.len() > 2 + STATUS_MAX_BITMAP => {
                Err(FrameError::Malformed("status bitmap longer than 8 bytes"))
            }
            _ => Ok(StatusFrame::Status {
                nr: seq,
                bitmap: frame.into_payload_from(2)?,
            }),
        }
    }

    /// `seq` of a data frame, `None` for a status frame or garbage (the transmit hook reads the
    /// header only).
    pub fn data_seq(frame: &Frame) -> Option<u8> {
        let [b0, seq] = frame.header::<2>().ok()?;
        (b0 & 0x0f == T_DATA && seq & 0x80 == 0).then_some(seq)
    }

    pub fn emit(self) -> Frame {
        match self {
            StatusFrame::Data { seq, payload } => Frame::new(&[T_DATA, seq & 0x7f], payload),
            StatusFrame::Status { nr, bitmap } => Frame::new(&[T_STATUS, nr & 0x7f], bitmap),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::wire;

    #[test]
    fn round_trip_byte_vectors() {
        static DATA: [u8; 4] = [0x31, 127, 9, 8];
        let d = StatusFrame::from_frame(wire(&DATA)).unwrap();
        assert_eq!(
            d,
            StatusFrame::Data {
                seq: 127,
                payload: Buf::from_static(&[9, 8])
            }
        );
        assert_eq!(StatusFrame::data_seq(&wire(&DATA)), Some(127));
        assert_eq!(d.emit().to_vec(), vec![0x01, 127, 9, 8]);
        static ST: [u8; 4] = [0x02, 5, 0b1010_0000, 0x01];
        let s = StatusFrame::from_frame(wire(&ST)).unwrap();
        assert_eq!(
            s,
            StatusFrame::Status {
                nr: 5,
                bitmap: Buf::from_static(&[0b1010_0000, 0x01])
            }
        );
        assert_eq!(StatusFrame::data_seq(&wire(&ST)), None);
        assert_eq!(s.emit().to_vec(), ST.to_vec());
        // an empty bitmap (window 1) is a 2-byte status
        assert_eq!(
            StatusFrame::from_frame(wire(&[0x02, 0])).unwrap(),
            StatusFrame::Status {
                nr: 0,
                bitmap: Buf::new()
            }
        );
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(matches!(
            StatusFrame::from_frame(wire(&[0x01])),
            Err(FrameError::Truncated { .. })
        ));
        assert_eq!(
            StatusFrame::from_frame(wire(&[0x03, 1])),
            Err(FrameError::UnknownType(3))
        );
        assert!(matches!(
            StatusFrame::from_frame(wire(&[0x01, 0x80, 1])),
            Err(FrameError::Malformed(_))
        ));
        assert!(matches!(
            StatusFrame::from_frame(wire(&[0x02, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
            Err(FrameError::Malformed(_))
        ));
        assert_eq!(StatusFrame::data_seq(&wire(&[0x01, 0x80])), None);
    }
}
