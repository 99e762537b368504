//! Wire formats. Parsing never panics: a short or malformed buffer is a typed error that the caller
//! counts and drops (smoltcp's rule).

pub mod arq;
pub mod frame;
pub mod ip;
pub mod rlp;
pub mod xor;

pub use arq::ArqFrame;
pub use frame::{Frame, FrameError, HEAD_MAX};
pub use ip::{IpProto, Ipv4Repr, TcpRepr, UdpRepr, WireError};
pub use rlp::RlpFrame;
pub use xor::XorFrame;
