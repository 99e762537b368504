//! Wire formats. Parsing never panics: a short or malformed buffer is a typed error that the caller
//! counts and drops (smoltcp's rule).

pub mod arq;
pub mod frame;
pub mod hdlc;
pub mod ip;
pub mod rlp;
pub mod rse;
pub mod status_rlp;
pub mod xor;

pub use arq::ArqFrame;
pub use frame::{Frame, FrameError, HEAD_MAX};
pub use hdlc::HdlcFrame;
pub use ip::{IpProto, Ipv4Repr, TcpRepr, UdpRepr, WireError};
pub use rlp::RlpFrame;
pub use rse::RseFrame;
pub use status_rlp::StatusFrame;
pub use xor::XorFrame;

/// Test support: a frame from static wire bytes (the byte-vector tests of every format).
#[cfg(test)]
pub(crate) fn wire(b: &'static [u8]) -> Frame {
    Frame::from_wire(crate::buf::Buf::from_static(b)).unwrap()
}

#[cfg(test)]
mod peek_tests {
    use super::*;
    use crate::buf::Buf;

    proptest::proptest! {
        /// The header-only peeks used by the transmit hooks agree with the full parsers on any
        /// bytes, whether the header is inline (`Frame::new`) or in one wire buffer.
        #[test]
        fn peeks_agree_with_parsers(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..10),
            head in 1usize..=HEAD_MAX,
        ) {
            let h = head.min(bytes.len());
            for f in [
                Frame::from_wire(Buf::from(bytes.clone())).unwrap(),
                Frame::new(&bytes[..h], Buf::from(bytes[h..].to_vec())),
            ] {
                let arq = match ArqFrame::parse(&f) {
                    Ok(ArqFrame::Data { seq, .. }) => Some(seq),
                    _ => None,
                };
                proptest::prop_assert_eq!(ArqFrame::data_seq(&f), arq);
                let rlp = match RlpFrame::parse(&f) {
                    Ok(RlpFrame::Data { seq, .. }) => Some((false, seq)),
                    Ok(RlpFrame::Nak { seq }) => Some((true, seq)),
                    _ => None,
                };
                proptest::prop_assert_eq!(RlpFrame::data_or_nak_seq(&f), rlp);
                let xor = match XorFrame::parse(&f) {
                    Ok(XorFrame::Data { block, index, .. }) => Some((block, index)),
                    _ => None,
                };
                proptest::prop_assert_eq!(XorFrame::data_index(&f), xor);
            }
        }
    }
}
