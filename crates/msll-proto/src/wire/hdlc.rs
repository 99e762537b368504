//! Frames of seed 002's HDLC-family link layers, LAPB (go-back-N) and CDPD MDLP (selective reject)
//! (seed002.md sec. 3.2, 3.3, 3.6, 3.7a). Sequence numbers are 7 bits (modulo 128).
//!
//! ```text
//! I:       [svc:4 | 1:4] [N(S)] [N(R)] payload...   3-byte header, N(R) piggy-backed
//! RR:      [svc:4 | 2:4] [N(R)]                     receive ready: everything below N(R) received
//! REJ:     [svc:4 | 3:4] [N(R)]                     LAPB: resend everything from N(R)
//! SREJ:    [svc:4 | 4:4] [N]                        MDLP: resend frame N only
//! SABME:   [svc:4 | 5:4] [0]                        link reset (original) or re-synchronisation (best effort)
//! UA:      [svc:4 | 6:4] [0]                        answer to SABME (original reset)
//! UA+ACK:  [svc:4 | 7:4] [N(R)]                     best-effort answer: next frame expected
//! ```
//!
//! The thesis gives no layout (seed002.md A10): these are the fewest bytes that carry the fields.

use crate::buf::Buf;

use super::frame::{Frame, FrameError};

const T_I: u8 = 1;
const T_RR: u8 = 2;
const T_REJ: u8 = 3;
const T_SREJ: u8 = 4;
const T_SABME: u8 = 5;
const T_UA: u8 = 6;
const T_UA_ACK: u8 = 7;

/// Header bytes of an I frame (service byte included).
pub const HDLC_I_HEADER: usize = 3;
/// Length of every supervisory and unnumbered frame.
pub const HDLC_CONTROL_LEN: usize = 2;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HdlcFrame {
    I { ns: u8, nr: u8, payload: Buf },
    Rr { nr: u8 },
    Rej { nr: u8 },
    Srej { seq: u8 },
    Sabme,
    Ua,
    UaAck { nr: u8 },
}

fn seq7(b: u8) -> Result<u8, FrameError> {
    if b & 0x80 == 0 {
        Ok(b)
    } else {
        Err(FrameError::Malformed("sequence number above 127"))
    }
}

impl HdlcFrame {
    /// Parse a received frame; an I frame's body moves into the payload.
    pub fn from_frame(frame: Frame) -> Result<Self, FrameError> {
        let [b0] = frame.header::<1>()?;
        let t = b0 & 0x0f;
        if !(T_I..=T_UA_ACK).contains(&t) {
            return Err(FrameError::UnknownType(t));
        }
        if t == T_I {
            let [_, ns, nr] = frame.header::<3>()?;
            return Ok(HdlcFrame::I {
                ns: seq7(ns)?,
                nr: seq7(nr)?,
                payload: frame.into_payload_from(HDLC_I_HEADER)?,
            });
        }
        let [_, v] = frame.header::<2>()?;
        if frame.len() != HDLC_CONTROL_LEN {
            return Err(FrameError::Malformed("HDLC control frame is not 2 bytes"));
        }
        Ok(match t {
            T_RR => HdlcFrame::Rr { nr: seq7(v)? },
            T_REJ => HdlcFrame::Rej { nr: seq7(v)? },
            T_SREJ => HdlcFrame::Srej { seq: seq7(v)? },
            T_SABME => HdlcFrame::Sabme,
            T_UA => HdlcFrame::Ua,
            _ => HdlcFrame::UaAck { nr: seq7(v)? },
        })
    }

    /// N(S) of an I frame, read from the header only (the transmit hook).
    pub fn i_seq(frame: &Frame) -> Option<u8> {
        let [b0, ns] = frame.header::<2>().ok()?;
        (b0 & 0x0f == T_I && ns & 0x80 == 0 && frame.len() >= HDLC_I_HEADER).then_some(ns)
    }

    /// Whether this is a SABME frame (the transmit hook arms the reset timer on it).
    pub fn is_sabme(frame: &Frame) -> bool {
        frame.header::<1>().is_ok_and(|[b0]| b0 & 0x0f == T_SABME)
    }

    pub fn emit(self) -> Frame {
        let c = |t: u8, v: u8| Frame::new(&[t, v & 0x7f], Buf::new());
        match self {
            HdlcFrame::I { ns, nr, payload } => Frame::new(&[T_I, ns & 0x7f, nr & 0x7f], payload),
            HdlcFrame::Rr { nr } => c(T_RR, nr),
            HdlcFrame::Rej { nr } => c(T_REJ, nr),
            HdlcFrame::Srej { seq } => c(T_SREJ, seq),
            HdlcFrame::Sabme => c(T_SABME, 0),
            HdlcFrame::Ua => c(T_UA, 0),
            HdlcFrame::UaAck { nr } => c(T_UA_ACK, nr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::wire;

    #[test]
    fn round_trip_byte_vectors() {
        static I: [u8; 5] = [0x41, 5, 127, 0xaa, 0xbb];
        let f = HdlcFrame::from_frame(wire(&I)).unwrap();
        assert_eq!(
            f,
            HdlcFrame::I {
                ns: 5,
                nr: 127,
                payload: Buf::from_static(&[0xaa, 0xbb])
            }
        );
        assert_eq!(HdlcFrame::i_seq(&wire(&I)), Some(5));
        assert_eq!(f.emit().to_vec(), vec![0x01, 5, 127, 0xaa, 0xbb]);
        for (bytes, want) in [
            (&[0x02u8, 9][..], HdlcFrame::Rr { nr: 9 }),
            (&[0x03, 9], HdlcFrame::Rej { nr: 9 }),
            (&[0x04, 9], HdlcFrame::Srej { seq: 9 }),
            (&[0x05, 0], HdlcFrame::Sabme),
            (&[0x06, 0], HdlcFrame::Ua),
            (&[0x07, 100], HdlcFrame::UaAck { nr: 100 }),
        ] {
            let got = HdlcFrame::from_frame(Frame::from_wire_slice(bytes).unwrap()).unwrap();
            assert_eq!(got, want);
            assert_eq!(got.emit().to_vec(), bytes.to_vec());
            assert_eq!(
                HdlcFrame::i_seq(&Frame::from_wire_slice(bytes).unwrap()),
                None
            );
        }
        assert!(HdlcFrame::is_sabme(&wire(&[0x35, 0])));
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(matches!(
            HdlcFrame::from_frame(wire(&[0x01, 1])),
            Err(FrameError::Truncated { .. })
        ));
        assert_eq!(
            HdlcFrame::from_frame(wire(&[0x08, 1])),
            Err(FrameError::UnknownType(8))
        );
        assert!(matches!(
            HdlcFrame::from_frame(wire(&[0x02, 1, 0])),
            Err(FrameError::Malformed(_))
        ));
        assert!(matches!(
            HdlcFrame::from_frame(wire(&[0x01, 0x80, 0])),
            Err(FrameError::Malformed(_))
        ));
        assert_eq!(HdlcFrame::i_seq(&wire(&[0x01, 3])), None);
    }
}
