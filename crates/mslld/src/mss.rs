//! TCP MSS clamping for SYNs entering or leaving the tunnel (each daemon clamps to its own MTU).
//!
//! The tunnel's MTU (`tun.mtu`, 1400 by default) is below the 1500 bytes of the hosts that route
//! through it, so a TCP connection whose ends announce MSS 1460 sends segments the tunnel must
//! refuse, and path-MTU discovery is often blocked on the way (ICMP filtered). Like tinyfecVPN's
//! default `mssfix` (design/peers.md sec. 1.3) and OpenVPN's `mssfix`, the daemon lowers the MSS
//! option of every TCP SYN it reads from TUN to what fits; both ends run the daemon, so SYN and
//! SYN-ACK are both clamped. The TCP checksum is updated incrementally (RFC 1624).
//!
//! Anything unexpected (not TCP, an IPv4 fragment, IPv6 extension headers, malformed options)
//! leaves the packet untouched: clamping is an optimisation, never a reason to drop.

use msll_proto::wire::ip::{checksum_update as update_checksum, is_fragment};

/// IPv4 + TCP headers without options.
pub const V4_OVERHEAD: u16 = 40;
/// IPv6 + TCP headers without options.
pub const V6_OVERHEAD: u16 = 60;

const TCP: u8 = 6;
const SYN: u8 = 0x02;
const OPT_END: u8 = 0;
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;

/// Where the TCP header of an IP packet starts, if the packet is an unfragmented IPv4 or a plain
/// IPv6 (no extension headers) TCP packet.
fn tcp_offset(p: &[u8]) -> Option<usize> {
    match p.first()? >> 4 {
        4 => {
            let ihl = ((p[0] & 0x0f) as usize) * 4;
            if ihl < 20 || p.len() < ihl || p[9] != TCP {
                return None;
            }
            // More-fragments flag or a non-zero offset: the TCP header may not be here.
            (!is_fragment(p)).then_some(ihl)
        }
        6 => (p.len() >= 40 && p[6] == TCP).then_some(40),
        _ => None,
    }
}

/// The packet with its MSS option lowered to `max_mss`, or `None` when nothing needs to change
/// (not a TCP SYN, no MSS option, the option already fits, or anything malformed).
pub fn clamp(p: &[u8], max_mss: u16) -> Option<Vec<u8>> {
    let t = tcp_offset(p)?;
    let tcp = p.get(t..)?;
    if tcp.len() < 20 || tcp[13] & SYN == 0 {
        return None;
    }
    let data_off = ((tcp[12] >> 4) as usize) * 4;
    if data_off < 20 || tcp.len() < data_off {
        return None;
    }
    // Every MSS option above the limit, found before anything changes (a malformed option
    // anywhere leaves the packet alone). Linux takes the last MSS option of a SYN, so each
    // one is lowered (review, session 46: only the first was, and a second got through).
    let mut over = Vec::new();
    let mut i = 20;
    while i < data_off {
        match tcp[i] {
            OPT_END => break,
            OPT_NOP => i += 1,
            kind => {
                let len = *tcp.get(i + 1)? as usize;
                if len < 2 || i + len > data_off {
                    return None;
                }
                if kind == OPT_MSS {
                    if len != 4 {
                        return None;
                    }
                    if u16::from_be_bytes([tcp[i + 2], tcp[i + 3]]) > max_mss {
                        over.push(i);
                    }
                }
                i += len;
            }
        }
    }
    if over.is_empty() {
        return None;
    }
    let mut out = p.to_vec();
    let ck_at = t + 16;
    let mut ck = u16::from_be_bytes([out[ck_at], out[ck_at + 1]]);
    for i in over {
        let at = t + i + 2;
        // The MSS value is 16-bit aligned in the TCP header only if `i` is even; an odd
        // offset shifts the word boundaries, so update the two words it straddles instead.
        let (start, end) = if (i + 2) % 2 == 0 {
            (at, at + 2)
        } else {
            (at - 1, at + 3)
        };
        let before: Vec<u16> = (start..end)
            .step_by(2)
            .map(|w| u16::from_be_bytes([out[w], out[w + 1]]))
            .collect();
        out[at..at + 2].copy_from_slice(&max_mss.to_be_bytes());
        for (k, w) in (start..end).step_by(2).enumerate() {
            let new = u16::from_be_bytes([out[w], out[w + 1]]);
            ck = update_checksum(ck, before[k], new);
        }
    }
    out[ck_at..ck_at + 2].copy_from_slice(&ck.to_be_bytes());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use msll_proto::wire::ip::checksum;

    /// One's complement sum over the TCP pseudo-header and segment: 0 when the checksum is right.
    fn tcp_checksum_ok(p: &[u8]) -> bool {
        let t = tcp_offset(p).unwrap();
        let seg = &p[t..];
        let mut pseudo = Vec::new();
        if p[0] >> 4 == 4 {
            pseudo.extend_from_slice(&p[12..20]);
            pseudo.extend_from_slice(&[0, TCP]);
            pseudo.extend_from_slice(&(seg.len() as u16).to_be_bytes());
        } else {
            pseudo.extend_from_slice(&p[8..40]);
            pseudo.extend_from_slice(&(seg.len() as u32).to_be_bytes());
            pseudo.extend_from_slice(&[0, 0, 0, TCP]);
        }
        pseudo.extend_from_slice(seg);
        checksum(&pseudo) == 0
    }

    /// A TCP SYN with the given options, a correct TCP checksum and `v6` addressing.
    fn syn(options: &[u8], flags: u8, v6: bool) -> Vec<u8> {
        let mut opts = options.to_vec();
        while !opts.len().is_multiple_of(4) {
            opts.push(OPT_END);
        }
        let mut tcp = vec![0u8; 20];
        tcp[0..2].copy_from_slice(&40000u16.to_be_bytes());
        tcp[2..4].copy_from_slice(&80u16.to_be_bytes());
        tcp[12] = (((20 + opts.len()) / 4) as u8) << 4;
        tcp[13] = flags;
        tcp.extend_from_slice(&opts);
        let mut p = if v6 {
            let mut h = vec![0u8; 40];
            h[0] = 0x60;
            h[4..6].copy_from_slice(&(tcp.len() as u16).to_be_bytes());
            h[6] = TCP;
            h[7] = 64;
            h[8..24].copy_from_slice(&[0xfd, 0x6d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            h[24..40].copy_from_slice(&[0xfd, 0x6d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
            h
        } else {
            let mut h = vec![0u8; 20];
            h[0] = 0x45;
            h[2..4].copy_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
            h[6] = 0x40;
            h[8] = 64;
            h[9] = TCP;
            h[12..16].copy_from_slice(&[198, 19, 0, 1]);
            h[16..20].copy_from_slice(&[198, 19, 0, 2]);
            let ck = checksum(&h);
            h[10..12].copy_from_slice(&ck.to_be_bytes());
            h
        };
        let t = p.len();
        p.extend_from_slice(&tcp);
        // Fill in the TCP checksum so that the pseudo-header sum is zero.
        let mut pseudo = Vec::new();
        if v6 {
            pseudo.extend_from_slice(&p[8..40]);
            pseudo.extend_from_slice(&(tcp.len() as u32).to_be_bytes());
            pseudo.extend_from_slice(&[0, 0, 0, TCP]);
        } else {
            pseudo.extend_from_slice(&p[12..20]);
            pseudo.extend_from_slice(&[0, TCP]);
            pseudo.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
        }
        pseudo.extend_from_slice(&tcp);
        let ck = checksum(&pseudo);
        p[t + 16..t + 18].copy_from_slice(&ck.to_be_bytes());
        assert!(tcp_checksum_ok(&p));
        p
    }

    fn mss_of(p: &[u8], at: usize) -> u16 {
        let t = tcp_offset(p).unwrap();
        u16::from_be_bytes([p[t + at], p[t + at + 1]])
    }

    #[test]
    fn lowers_a_large_mss_and_keeps_the_checksum_valid() {
        for v6 in [false, true] {
            // Linux-style options: MSS, SACK-permitted, timestamps, NOP, window scale.
            let opts = [
                2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7,
            ];
            let p = syn(&opts, SYN, v6);
            let c = clamp(&p, 1360).expect("clamped");
            assert_eq!(mss_of(&c, 22), 1360);
            assert!(tcp_checksum_ok(&c), "v6 = {v6}");
            assert_eq!(c.len(), p.len());
            // SYN-ACK too.
            let c = clamp(&syn(&opts, SYN | 0x10, v6), 1360).unwrap();
            assert!(tcp_checksum_ok(&c));
        }
    }

    #[test]
    fn odd_offset_mss_option() {
        // A NOP first puts the MSS value at an odd offset: the checksum update must straddle.
        let p = syn(&[1, 2, 4, 0x05, 0xb4], SYN, false);
        let c = clamp(&p, 1000).expect("clamped");
        assert_eq!(mss_of(&c, 23), 1000);
        assert!(tcp_checksum_ok(&c));
    }

    /// Linux takes a SYN's last MSS option: every one above the limit is lowered (review,
    /// session 46: only the first was), at even and odd offsets, one already below it kept.
    #[test]
    fn lowers_every_mss_option() {
        for v6 in [false, true] {
            let opts = [2, 4, 0x05, 0xb4, 1, 2, 4, 0xff, 0xff, 2, 4, 0x01, 0x00];
            let p = syn(&opts, SYN, v6);
            let c = clamp(&p, 1360).expect("clamped");
            assert_eq!(mss_of(&c, 22), 1360);
            assert_eq!(mss_of(&c, 27), 1360);
            assert_eq!(mss_of(&c, 31), 256);
            assert!(tcp_checksum_ok(&c), "v6 = {v6}");
            assert!(clamp(&c, 1360).is_none());
        }
    }

    #[test]
    fn leaves_everything_else_alone() {
        let mss1460 = [2, 4, 0x05, 0xb4];
        assert!(
            clamp(&syn(&mss1460, 0x10, false), 1360).is_none(),
            "not a SYN"
        );
        assert!(
            clamp(&syn(&mss1460, SYN, false), 1460).is_none(),
            "already fits"
        );
        assert!(
            clamp(&syn(&[1, 1, 1, 1], SYN, false), 1360).is_none(),
            "no MSS option"
        );
        assert!(
            clamp(&syn(&[0, 2, 4, 5, 0xb4], SYN, false), 1360).is_none(),
            "after END"
        );
        assert!(
            clamp(&syn(&[2, 0, 5, 0xb4], SYN, false), 1360).is_none(),
            "bad length"
        );
        assert!(
            clamp(&syn(&[2, 3, 5], SYN, false), 1360).is_none(),
            "MSS of length 3"
        );
        let mut udp = syn(&mss1460, SYN, false);
        udp[9] = 17;
        assert!(clamp(&udp, 1360).is_none(), "UDP");
        let mut frag = syn(&mss1460, SYN, false);
        frag[6] = 0x20; // more fragments
        assert!(clamp(&frag, 1360).is_none(), "IPv4 fragment");
        assert!(clamp(&[], 1360).is_none());
        assert!(clamp(&[0x45, 0, 0], 1360).is_none());
    }

    proptest::proptest! {
        /// Any bytes: no panic; a clamped packet differs only in the TCP checksum and options
        /// (the MSS values), and clamping it again changes nothing.
        #[test]
        fn never_panics_and_changes_only_mss(
            p in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
            max in 536u16..1500,
        ) {
            if let Some(c) = clamp(&p, max) {
                proptest::prop_assert_eq!(c.len(), p.len());
                let t = tcp_offset(&p).unwrap();
                let opts_end = t + ((p[t + 12] >> 4) as usize) * 4;
                for (i, _) in p.iter().zip(&c).enumerate().filter(|(_, (a, b))| a != b) {
                    proptest::prop_assert!(
                        (t + 16..t + 18).contains(&i) || (t + 20..opts_end).contains(&i),
                        "byte {} changed", i
                    );
                }
                proptest::prop_assert!(clamp(&c, max).is_none());
            }
        }

        /// Real SYNs (IPv4 and IPv6, any option layout around an MSS option, any flags), then
        /// optionally one corrupted byte: a clamp happens exactly when a SYN's MSS exceeds `max`
        /// and the options parse; it sets MSS to `max`, keeps a valid checksum and changes at
        /// most 4 bytes.
        #[test]
        fn clamps_real_syns_exactly_when_needed(
            v6 in proptest::prelude::any::<bool>(),
            nops in 0usize..4,
            mss in 0u16..=u16::MAX,
            max in 536u16..1500,
            syn_flag in proptest::prelude::any::<bool>(),
            ack_flag in proptest::prelude::any::<bool>(),
            tail_nops in 0usize..4,
            corrupt in proptest::option::of((0usize..200, proptest::prelude::any::<u8>())),
        ) {
            // NOPs, MSS, NOPs, padded with END to a 4-byte boundary.
            let mut opts = vec![1u8; nops];
            opts.extend_from_slice(&[2, 4, (mss >> 8) as u8, mss as u8]);
            opts.extend(std::iter::repeat_n(1u8, tail_nops));
            opts.push(0);
            while opts.len() % 4 != 0 {
                opts.push(0);
            }
            let flags = if syn_flag { SYN } else { 0 } | if ack_flag { 0x10 } else { 0 };
            let mut p = syn(&opts, flags, v6);
            let mss_at = tcp_offset(&p).unwrap() + 20 + nops + 2;
            let mut intact = true;
            if let Some((i, b)) = corrupt {
                let i = i % p.len();
                intact = p[i] == b;
                p[i] = b;
            }
            let got = clamp(&p, max);
            if intact {
                proptest::prop_assert_eq!(got.is_some(), syn_flag && mss > max);
            }
            if let Some(c) = got {
                proptest::prop_assert_eq!(c.len(), p.len());
                let changed = p.iter().zip(&c).filter(|(a, b)| a != b).count();
                proptest::prop_assert!(changed <= 4);
                if intact {
                    proptest::prop_assert_eq!(u16::from_be_bytes([c[mss_at], c[mss_at + 1]]), max);
                    proptest::prop_assert!(tcp_checksum_ok(&c));
                }
            }
        }
    }
}
