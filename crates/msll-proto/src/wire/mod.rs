//! Wire formats. Parsing never panics: a short or malformed buffer is a typed error that the caller
//! counts and drops (smoltcp's rule).

pub mod frame;
pub mod ip;

pub use frame::{Frame, FrameError, HEAD_MAX};
pub use ip::{IpProto, Ipv4Repr, TcpRepr, UdpRepr, WireError};
