//! Minimal IPv4 / TCP / UDP header views: what the classifier (DS field, protocol, ports) and Snoop
//! (TCP sequence and acknowledgement numbers) read, and what the simulator's transports write.
//!
//! Options are skipped when parsing and never emitted. Checksums are not verified: the link layer
//! never rewrites IP packets, and the simulator does not model bit corruption inside delivered packets.

use thiserror::Error;

#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    #[error("packet truncated: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    #[error("not an IPv4 packet (version {0})")]
    NotIpv4(u8),
    #[error("bad IPv4 header length {0}")]
    BadHeaderLen(usize),
}

/// IP protocol numbers used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpProto;
impl IpProto {
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const ESP: u8 = 50;
}

pub const IPV4_HEADER_LEN: usize = 20;
pub const TCP_HEADER_LEN: usize = 20;
pub const UDP_HEADER_LEN: usize = 8;

/// The IPv4 header fields msll uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ipv4Repr {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: u8,
    /// The whole TOS / DS byte (DSCP in the upper six bits).
    pub tos: u8,
    pub total_len: u16,
    pub ident: u16,
    pub ttl: u8,
    /// Header length in bytes (20 when emitted).
    pub header_len: usize,
}

fn need(buf: &[u8], n: usize) -> Result<(), WireError> {
    if buf.len() < n {
        Err(WireError::Truncated {
            need: n,
            have: buf.len(),
        })
    } else {
        Ok(())
    }
}

impl Ipv4Repr {
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        need(buf, IPV4_HEADER_LEN)?;
        let version = buf[0] >> 4;
        if version != 4 {
            return Err(WireError::NotIpv4(version));
        }
        let header_len = ((buf[0] & 0x0f) as usize) * 4;
        if header_len < IPV4_HEADER_LEN {
            return Err(WireError::BadHeaderLen(header_len));
        }
        need(buf, header_len)?;
        Ok(Ipv4Repr {
            tos: buf[1],
            total_len: u16::from_be_bytes([buf[2], buf[3]]),
            ident: u16::from_be_bytes([buf[4], buf[5]]),
            ttl: buf[8],
            protocol: buf[9],
            src: [buf[12], buf[13], buf[14], buf[15]],
            dst: [buf[16], buf[17], buf[18], buf[19]],
            header_len,
        })
    }

    /// Write a 20-byte header into `buf[..20]` (checksum computed).
    pub fn emit(&self, buf: &mut [u8]) {
        let ttl = if self.ttl == 0 { 64 } else { self.ttl };
        buf[0] = 0x45;
        buf[1] = self.tos;
        buf[2..4].copy_from_slice(&self.total_len.to_be_bytes());
        buf[4..6].copy_from_slice(&self.ident.to_be_bytes());
        buf[6] = 0x40; // DF: msll never fragments at IP
        buf[7] = 0;
        buf[8] = ttl;
        buf[9] = self.protocol;
        buf[12..16].copy_from_slice(&self.src);
        buf[16..20].copy_from_slice(&self.dst);
        // The checksum is summed from the field values, not read back from `buf`: reading the
        // header just written in 1-, 2- and 4-byte pieces as 4-byte words missed store
        // forwarding, a stall on every simulated segment (docs/performance.md, session 8).
        let words = [
            0x4500 | self.tos as u32,
            self.total_len as u32,
            self.ident as u32,
            0x4000,
            (ttl as u32) << 8 | self.protocol as u32,
            u16::from_be_bytes([self.src[0], self.src[1]]) as u32,
            u16::from_be_bytes([self.src[2], self.src[3]]) as u32,
            u16::from_be_bytes([self.dst[0], self.dst[1]]) as u32,
            u16::from_be_bytes([self.dst[2], self.dst[3]]) as u32,
        ];
        let mut sum: u32 = words.iter().sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        buf[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    }

    /// The DS codepoint (upper six bits of the TOS byte).
    pub fn dscp(&self) -> u8 {
        self.tos >> 2
    }
}

/// RFC 1071 Internet checksum.
///
/// Sums big-endian 32-bit words into a u64 and folds (RFC 1071 sec. 2(C): the one's complement
/// sum is independent of word size), a third of the work of 16-bit words: every simulated
/// segment's header is checksummed once.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        sum += u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as u64;
    }
    let rest = words.remainder();
    let mut tail = [0u8; 4];
    tail[..rest.len()].copy_from_slice(rest);
    sum += u32::from_be_bytes(tail) as u64;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// RFC 1624 eqn. 3: an Internet checksum after one 16-bit word it covers changes from `old`
/// to `new`, without summing the rest again.
pub fn checksum_update(ck: u16, old: u16, new: u16) -> u16 {
    let mut sum = (!ck as u32) + (!old as u32) + new as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Whether an IPv4 packet (at least a 20-byte header) is a fragment: the more-fragments flag
/// or a non-zero offset. Its payload may then not start with the transport header.
pub fn is_fragment(ipv4: &[u8]) -> bool {
    u16::from_be_bytes([ipv4[6], ipv4[7]]) & 0x3fff != 0
}

/// TCP header fields (no options).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub header_len: usize,
}

impl TcpRepr {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    /// ECN-echo; Snoop's ELN marking reuses a spare bit (see snoop.rs).
    pub const ECE: u8 = 0x40;

    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        need(buf, TCP_HEADER_LEN)?;
        let header_len = ((buf[12] >> 4) as usize) * 4;
        if header_len < TCP_HEADER_LEN {
            return Err(WireError::BadHeaderLen(header_len));
        }
        Ok(TcpRepr {
            src_port: u16::from_be_bytes([buf[0], buf[1]]),
            dst_port: u16::from_be_bytes([buf[2], buf[3]]),
            seq: u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]),
            ack: u32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]),
            flags: buf[13],
            window: u16::from_be_bytes([buf[14], buf[15]]),
            header_len,
        })
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        buf[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        buf[4..8].copy_from_slice(&self.seq.to_be_bytes());
        buf[8..12].copy_from_slice(&self.ack.to_be_bytes());
        buf[12] = 5 << 4;
        buf[13] = self.flags;
        buf[14..16].copy_from_slice(&self.window.to_be_bytes());
        buf[16..20].fill(0);
    }
}

/// UDP header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub len: u16,
}

impl UdpRepr {
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        need(buf, UDP_HEADER_LEN)?;
        Ok(UdpRepr {
            src_port: u16::from_be_bytes([buf[0], buf[1]]),
            dst_port: u16::from_be_bytes([buf[2], buf[3]]),
            len: u16::from_be_bytes([buf[4], buf[5]]),
        })
    }
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        buf[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        buf[4..6].copy_from_slice(&self.len.to_be_bytes());
        buf[6..8].fill(0);
    }
}

/// Ports of a TCP or UDP packet, if it has a readable transport header.
pub fn ports(packet: &[u8]) -> Option<(Ipv4Repr, u16, u16)> {
    let ip = Ipv4Repr::parse(packet).ok()?;
    let rest = packet.get(ip.header_len..)?;
    match ip.protocol {
        IpProto::TCP | IpProto::UDP if rest.len() >= 4 => Some((
            ip,
            u16::from_be_bytes([rest[0], rest[1]]),
            u16::from_be_bytes([rest[2], rest[3]]),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_tcp_round_trip() {
        let ip = Ipv4Repr {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 3],
            protocol: IpProto::TCP,
            tos: 0x28,
            total_len: 1000,
            ident: 7,
            ttl: 64,
            header_len: 20,
        };
        let tcp = TcpRepr {
            src_port: 1,
            dst_port: 2,
            seq: 3,
            ack: 4,
            flags: TcpRepr::ACK,
            window: 5,
            header_len: 20,
        };
        let mut buf = vec![0u8; 40];
        ip.emit(&mut buf);
        tcp.emit(&mut buf[20..]);
        assert_eq!(checksum(&buf[..20]), 0, "emitted header checksums to zero");
        assert_eq!(Ipv4Repr::parse(&buf).unwrap(), ip);
        assert_eq!(TcpRepr::parse(&buf[20..]).unwrap(), tcp);
        assert_eq!(ip.dscp(), 0x0a);
        assert_eq!(ports(&buf).unwrap().1, 1);
    }

    #[test]
    fn malformed_is_an_error_not_a_panic() {
        assert!(Ipv4Repr::parse(&[0x45; 10]).is_err());
        assert_eq!(Ipv4Repr::parse(&[0x65; 20]), Err(WireError::NotIpv4(6)));
        assert_eq!(
            Ipv4Repr::parse(&[0x41; 20]),
            Err(WireError::BadHeaderLen(4))
        );
        assert!(TcpRepr::parse(&[0; 19]).is_err());
        assert!(ports(&[]).is_none());
    }

    /// The 32-bit-word checksum equals the textbook 16-bit one's complement sum on any bytes.
    fn checksum16(data: &[u8]) -> u16 {
        let mut sum: u32 = 0;
        for c in data.chunks(2) {
            sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    proptest::proptest! {
        #[test]
        fn checksum_matches_16_bit_reference(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80),
        ) {
            proptest::prop_assert_eq!(checksum(&data), checksum16(&data));
        }

        /// `emit` sums its checksum from the field values; it must equal the checksum of the
        /// bytes it wrote, so that the header verifies (sums to 0xffff, i.e. checksums to 0).
        #[test]
        fn emitted_header_checksum_verifies(
            tos in proptest::prelude::any::<u8>(),
            total_len in proptest::prelude::any::<u16>(),
            ident in proptest::prelude::any::<u16>(),
            ttl in proptest::prelude::any::<u8>(),
            protocol in proptest::prelude::any::<u8>(),
            src in proptest::prelude::any::<[u8; 4]>(),
            dst in proptest::prelude::any::<[u8; 4]>(),
        ) {
            let mut buf = [0xa5u8; 20];
            Ipv4Repr { src, dst, protocol, tos, total_len, ident, ttl, header_len: 20 }.emit(&mut buf);
            proptest::prop_assert_eq!(checksum16(&buf), 0);
            let mut zeroed = buf;
            zeroed[10..12].copy_from_slice(&[0, 0]);
            proptest::prop_assert_eq!(checksum16(&zeroed).to_be_bytes(), [buf[10], buf[11]]);
        }
    }

    #[test]
    fn checksum_rfc1071_example() {
        // RFC 1071 sec. 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2 (checksum 220d).
        assert_eq!(
            checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
        assert_eq!(checksum(&[0xff; 4]), 0);
    }
}
