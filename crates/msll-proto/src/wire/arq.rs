//! GBN and SR frames (seed004-ch4 sec. 3.0.1, seed 004 L737-L747).
//!
//! ```text
//! data:     [svc:4 | type=1:4] [seq] [ack] payload...   3-byte header (L737: id/type + seq + piggy-backed ack)
//! pure ACK: [svc:4 | type=2:4] [ack]                     2 bytes ("containing only the two header fields")
//! NAK:      [svc:4 | type=3:4] [seq]                     2 bytes (L741: "they only contain two header bytes")
//! ```
//!
//! `ack` is cumulative "next expected sequence number" (seed004-ch4 sec. 7 item 3, recommended). Sequence
//! numbers are one byte, modulo 256. The service nibble is never read here: the endpoint owns it.

use crate::buf::Buf;

use super::frame::{Frame, FrameError};

const T_DATA: u8 = 0x1;
const T_ACK: u8 = 0x2;
const T_NAK: u8 = 0x3;

/// Header bytes of a GBN/SR data frame (service byte included).
pub const ARQ_DATA_HEADER: usize = 3;
/// Length of a pure ACK or a NAK frame.
pub const ARQ_CONTROL_LEN: usize = 2;

/// One parsed GBN/SR frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArqFrame {
    Data { seq: u8, ack: u8, payload: Buf },
    Ack { ack: u8 },
    Nak { seq: u8 },
}

impl ArqFrame {
    /// Parse a received frame. Control frames must be exactly two bytes long.
    pub fn parse(frame: &Frame) -> Result<Self, FrameError> {
        Self::from_frame(frame.clone())
    }

    /// [`ArqFrame::parse`] of a frame the caller gives up: a data frame's body moves into the
    /// payload instead of being cloned (a reference-count round trip per received frame).
    pub fn from_frame(frame: Frame) -> Result<Self, FrameError> {
        let [b0] = frame.header::<1>()?;
        match b0 & 0x0f {
            T_DATA => {
                let [_, seq, ack] = frame.header::<3>()?;
                Ok(ArqFrame::Data {
                    seq,
                    ack,
                    payload: frame.into_payload_from(ARQ_DATA_HEADER)?,
                })
            }
            t @ (T_ACK | T_NAK) => {
                let [_, v] = frame.header::<2>()?;
                if frame.len() != ARQ_CONTROL_LEN {
                    return Err(FrameError::Malformed("GBN/SR control frame is not 2 bytes"));
                }
                Ok(if t == T_ACK {
                    ArqFrame::Ack { ack: v }
                } else {
                    ArqFrame::Nak { seq: v }
                })
            }
            t => Err(FrameError::UnknownType(t)),
        }
    }

    /// The sequence number of a data frame, if `frame` is one that [`ArqFrame::parse`] accepts:
    /// a header-only read for the transmit hook, which runs on every frame and needs no payload.
    pub fn data_seq(frame: &Frame) -> Option<u8> {
        let [b0, seq, _] = frame.header::<3>().ok()?;
        (b0 & 0x0f == T_DATA).then_some(seq)
    }

    /// Build the frame (service nibble zero; the endpoint stamps it).
    ///
    /// Consumes the value: the payload moves into the frame instead of being cloned and the
    /// original dropped (two atomic reference-count updates per data frame saved).
    pub fn emit(self) -> Frame {
        match self {
            ArqFrame::Data { seq, ack, payload } => Frame::new(&[T_DATA, seq, ack], payload),
            ArqFrame::Ack { ack } => Frame::new(&[T_ACK, ack], Buf::new()),
            ArqFrame::Nak { seq } => Frame::new(&[T_NAK, seq], Buf::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::wire;

    static DATA_BYTES: [u8; 5] = [0x51, 7, 3, 0xaa, 0xbb];
    static ACK_BYTES: [u8; 2] = [0x52, 9];
    static NAK_BYTES: [u8; 2] = [0x03, 200];

    #[test]
    fn round_trip_byte_vectors() {
        let d = ArqFrame::parse(&wire(&DATA_BYTES)).unwrap();
        assert_eq!(
            d,
            ArqFrame::Data {
                seq: 7,
                ack: 3,
                payload: Buf::from_static(&[0xaa, 0xbb])
            }
        );
        // emit leaves the service nibble at zero
        assert_eq!(d.emit().to_vec(), vec![0x01, 7, 3, 0xaa, 0xbb]);
        assert_eq!(
            ArqFrame::parse(&wire(&ACK_BYTES)).unwrap(),
            ArqFrame::Ack { ack: 9 }
        );
        assert_eq!(
            ArqFrame::parse(&wire(&NAK_BYTES)).unwrap(),
            ArqFrame::Nak { seq: 200 }
        );
        assert_eq!(
            ArqFrame::Nak { seq: 200 }.emit().to_vec(),
            NAK_BYTES.to_vec()
        );
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(matches!(
            ArqFrame::parse(&wire(&[0x01, 7])),
            Err(FrameError::Truncated { .. })
        ));
        assert!(matches!(
            ArqFrame::parse(&wire(&[0x02])),
            Err(FrameError::Truncated { .. })
        ));
        assert!(matches!(
            ArqFrame::parse(&wire(&[0x02, 1, 2])),
            Err(FrameError::Malformed(_))
        ));
        assert_eq!(
            ArqFrame::parse(&wire(&[0x0f, 1])),
            Err(FrameError::UnknownType(0xf))
        );
    }
}
