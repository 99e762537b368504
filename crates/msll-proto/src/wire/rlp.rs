//! RLP frames (seed004-ch4 sec. 3.0.1 and sec. 3.6, seed 004 L755).
//!
//! ```text
//! data:      [svc:4 | type=1:4] [seq] payload...   2-byte header ("a single byte containing a sequence number")
//! NAK:       [svc:4 | type=2:4] [seq]              2 bytes, names one missing frame (seed004-ch4 sec. 7 item 5)
//! keepalive: [svc:4 | type=3:4] [seq]              2 bytes, seq = highest sequence number sent (L755)
//! ```

use crate::buf::Buf;

use super::frame::{Frame, FrameError};

const T_DATA: u8 = 0x1;
const T_NAK: u8 = 0x2;
const T_KEEPALIVE: u8 = 0x3;

/// Header bytes of an RLP data frame (service byte included).
pub const RLP_DATA_HEADER: usize = 2;
/// Length of a NAK or keepalive frame.
pub const RLP_CONTROL_LEN: usize = 2;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RlpFrame {
    Data { seq: u8, payload: Buf },
    Nak { seq: u8 },
    Keepalive { highest: u8 },
}

impl RlpFrame {
    pub fn parse(frame: &Frame) -> Result<Self, FrameError> {
        Self::from_frame(frame.clone())
    }

    /// [`RlpFrame::parse`] of a frame the caller gives up: a data frame's body moves into the
    /// payload instead of being cloned (a reference-count round trip per received frame).
    pub fn from_frame(frame: Frame) -> Result<Self, FrameError> {
        let [b0] = frame.header::<1>()?;
        let t = b0 & 0x0f;
        if !matches!(t, T_DATA | T_NAK | T_KEEPALIVE) {
            return Err(FrameError::UnknownType(t));
        }
        let [_, seq] = frame.header::<2>()?;
        match t {
            T_DATA => Ok(RlpFrame::Data {
                seq,
                payload: frame.into_payload_from(RLP_DATA_HEADER)?,
            }),
            _ if frame.len() != RLP_CONTROL_LEN => {
                Err(FrameError::Malformed("RLP control frame is not 2 bytes"))
            }
            T_NAK => Ok(RlpFrame::Nak { seq }),
            _ => Ok(RlpFrame::Keepalive { highest: seq }),
        }
    }

    /// `(is_nak, seq)` of a data or NAK frame that [`RlpFrame::parse`] accepts, read from the
    /// header only (the transmit hook runs on every frame and needs no payload).
    pub fn data_or_nak_seq(frame: &Frame) -> Option<(bool, u8)> {
        let [b0, seq] = frame.header::<2>().ok()?;
        match b0 & 0x0f {
            T_DATA => Some((false, seq)),
            T_NAK if frame.len() == RLP_CONTROL_LEN => Some((true, seq)),
            _ => None,
        }
    }

    ///
    /// Consumes the value: the payload moves into the frame instead of being cloned and the
    /// original dropped (two atomic reference-count updates per data frame saved).
    pub fn emit(self) -> Frame {
        match self {
            RlpFrame::Data { seq, payload } => Frame::new(&[T_DATA, seq], payload),
            RlpFrame::Nak { seq } => Frame::new(&[T_NAK, seq], Buf::new()),
            RlpFrame::Keepalive { highest } => Frame::new(&[T_KEEPALIVE, highest], Buf::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::wire;

    #[test]
    fn round_trip_byte_vectors() {
        static DATA: [u8; 4] = [0x21, 255, 1, 2];
        let d = RlpFrame::parse(&wire(&DATA)).unwrap();
        assert_eq!(
            d,
            RlpFrame::Data {
                seq: 255,
                payload: Buf::from_static(&[1, 2])
            }
        );
        assert_eq!(d.emit().to_vec(), vec![0x01, 255, 1, 2]);
        assert_eq!(
            RlpFrame::parse(&wire(&[0x02, 4])).unwrap(),
            RlpFrame::Nak { seq: 4 }
        );
        assert_eq!(
            RlpFrame::parse(&wire(&[0x93, 4])).unwrap(),
            RlpFrame::Keepalive { highest: 4 }
        );
        assert_eq!(RlpFrame::Keepalive { highest: 4 }.emit().len(), 2);
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(matches!(
            RlpFrame::parse(&wire(&[0x01])),
            Err(FrameError::Truncated { .. })
        ));
        assert!(matches!(
            RlpFrame::parse(&wire(&[0x02, 1, 0])),
            Err(FrameError::Malformed(_))
        ));
        assert_eq!(
            RlpFrame::parse(&wire(&[0x04, 1])),
            Err(FrameError::UnknownType(4))
        );
    }
}
