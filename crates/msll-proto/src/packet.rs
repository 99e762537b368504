//! The unit handed between IP and the link layer: a real IP packet's bytes.
//!
//! The simulator builds real IPv4 + TCP/UDP headers into its packets, so the classifier and Snoop
//! parse the same bytes in the simulator and in the daemon. The seeds ignore transport/IP header
//! bytes (seed004-ch1-3 1.4): a simulated 1000-byte data packet is 1000 bytes long and its first 40
//! bytes happen to carry the headers, so airtime accounting equals `len()` everywhere.

use crate::buf::Buf;

/// An IP packet (header + payload), cheaply clonable (reference counted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    data: Buf,
}

impl Packet {
    pub fn new(data: Buf) -> Self {
        Packet { data }
    }
    pub fn from_vec(v: Vec<u8>) -> Self {
        Packet { data: Buf::from(v) }
    }
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    pub fn bytes(&self) -> &Buf {
        &self.data
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.data
    }
    pub fn into_bytes(self) -> Buf {
        self.data
    }
}

impl From<Buf> for Packet {
    fn from(b: Buf) -> Self {
        Packet::new(b)
    }
}
