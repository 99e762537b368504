//! The packet classifier: masked IP header fields -> service number, plus per-service byte counts
//! for implicit rate measurement.
//!
//! Seed 004 sec. 6.2.1 (seed004-ch6-9.md sec. 2.3): the classifier examines header fields, maps
//! them through a lookup table to a service, and sends "packets not matched" to the Default service.
//! The mapping is supplied by an external administrative module, so here it is configuration
//! (`ClassifierConfig`, serde/TOML), never code. Two rule sets are provided:
//!
//! - **DiffServ** (sec. 8.2.3, Fig. 8.4): only the DS byte (IPv4 TOS) is looked at, masked, then
//!   looked up in `ds_table`. Without a table entry the masked value maps *directly* to the service of
//!   that number, as in the simulator of sec. 7.1 ("maps its value directly to a service number").
//! - **Heuristic** (sec. 8.1, Fig. 8.1): IP protocol, TCP/UDP ports and TOS bits, first matching rule
//!   wins. The seed gives principles, not tables (AMBIGUOUS A10), so `ClassifierConfig::heuristic`
//!   is only a proposal. Under IPsec ESP the protocol becomes 50 and the ports are hidden; only the
//!   DS byte stays visible (sec. 8.1), so by default an unmatched packet falls back to the DS lookup.
//!
//! Addresses are never used: per host-pair state is what the seed rules out at the link layer.
//!
//! Rate measurement (sec. 8.1, seed004-ch6-9.md sec. 4.2): over an interval,
//! r_i = bytes_i / sum bytes. The interval, smoothing and the handling of idle services are
//! unspecified (AMBIGUOUS A7); here: a configurable window, no smoothing, a floor `min_share` so a
//! rate never reaches zero (SCFQ needs r_i > 0).

use serde::{Deserialize, Serialize};

use crate::packet::Packet;
use crate::time::{Duration, Instant};
use crate::wire::ip::{IpProto, Ipv4Repr};

/// Most services a 4-bit service number can name.
pub const MAX_SERVICES: usize = 16;

/// Which rule set the classifier applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ClassifierKind {
    /// DS field only (seed 004 sec. 8.2.3; the sec. 7.1 simulator).
    #[default]
    Diffserv,
    /// Protocol, ports and TOS rules, falling back to DS (seed 004 sec. 8.1).
    Heuristic,
}

/// One heuristic rule: every given field must match; absent fields match anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// IP protocol number (6 TCP, 17 UDP, 50 ESP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<u8>,
    /// Inclusive port range, matched against the source or the destination port. A packet
    /// whose ports are not readable (not TCP/UDP, or encrypted) never matches a port rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<[u16; 2]>,
    /// TOS bits to test (0 = do not look at TOS).
    #[serde(default)]
    pub tos_mask: u8,
    /// Required value of `tos & tos_mask`.
    #[serde(default)]
    pub tos: u8,
    pub service: u8,
}

/// One DiffServ table entry: `(ds & ds_mask) == ds` -> `service`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsEntry {
    pub ds: u8,
    pub service: u8,
}

fn all_bits() -> u8 {
    0xff
}
fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_all(m: &u8) -> bool {
    *m == 0xff
}
fn is_zero(v: &u8) -> bool {
    *v == 0
}

/// The administrative module's mapping (seed 004 sec. 6.2.1: "header mask, hashing function and
/// lookup table"). The default maps the DS byte directly to the service number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassifierConfig {
    #[serde(default)]
    pub kind: ClassifierKind,
    /// Heuristic rules, first match wins (ignored by the DiffServ classifier).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Rule>,
    /// Bits of the DS byte that are looked at (0xfc = the DSCP only).
    #[serde(default = "all_bits", skip_serializing_if = "is_all")]
    pub ds_mask: u8,
    /// Explicit DS value -> service entries, looked up before the direct mapping.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ds_table: Vec<DsEntry>,
    /// A masked DS value with no table entry selects the service of that number, if it exists
    /// (seed 004 sec. 7.1, the default DS value = service number convention).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub ds_direct: bool,
    /// Heuristic classifier: consult the DS lookup when no rule matches (IPsec, sec. 8.1).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub ds_fallback: bool,
    /// Where unmatched packets go: the Default service (seed 004 sec. 6.2.1, requirement C3).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub default_service: u8,
}

impl Default for ClassifierConfig {
    fn default() -> Self {
        ClassifierConfig {
            kind: ClassifierKind::Diffserv,
            rules: Vec::new(),
            ds_mask: 0xff,
            ds_table: Vec::new(),
            ds_direct: true,
            ds_fallback: true,
            default_service: 0,
        }
    }
}

impl ClassifierConfig {
    /// Every packet to one service (the chapter 4/5 single-service configuration).
    pub fn single(service: u8) -> Self {
        ClassifierConfig {
            ds_direct: false,
            ds_fallback: false,
            default_service: service,
            ..Default::default()
        }
    }

    /// A heuristic rule set after seed 004 sec. 8.1 rules R-H1..R-H4 (a PROPOSAL: the seed names no
    /// ports): all TCP to `tcp_service`; UDP to or from `rt_ports` (real-time playback) to
    /// `rt_service`; everything else to the default, after the DS fallback.
    pub fn heuristic(tcp_service: u8, rt_service: u8, rt_ports: [u16; 2]) -> Self {
        ClassifierConfig {
            kind: ClassifierKind::Heuristic,
            rules: vec![
                Rule {
                    protocol: Some(IpProto::TCP),
                    ports: None,
                    tos_mask: 0,
                    tos: 0,
                    service: tcp_service,
                },
                Rule {
                    protocol: Some(IpProto::UDP),
                    ports: Some(rt_ports),
                    tos_mask: 0,
                    tos: 0,
                    service: rt_service,
                },
            ],
            ..Default::default()
        }
    }
}

/// The header fields a classifier may look at, after masking out everything else (Fig. 8.1:
/// addresses, lengths, checksums and the rest are greyed out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeaderFields {
    pub protocol: u8,
    pub tos: u8,
    /// (source, destination) ports when the transport header is readable TCP or UDP.
    pub ports: Option<(u16, u16)>,
}

impl HeaderFields {
    /// The fields of an IPv4 or IPv6 header; `None` for anything else.
    ///
    /// Ports are read only from a whole IPv4 datagram: not from a fragment other than the first
    /// (its first bytes are payload), and not from the first either, so that a port rule
    /// sends every fragment of a datagram to one service (review, session 46: the first went
    /// to the rule's service, the rest to the DS lookup or the default, and the datagram then
    /// depended on two schemes); and for IPv6 only when the fixed
    /// header is followed directly by TCP or UDP (`protocol` is then the first next-header value,
    /// an extension header's number otherwise). IPv6's traffic class stands in for the TOS byte,
    /// so DS-field rules work for both.
    pub fn parse(packet: &[u8]) -> Option<Self> {
        let (protocol, tos, rest) = match packet.first()? >> 4 {
            6 if packet.len() >= 40 => (
                packet[6],
                (packet[0] << 4) | (packet[1] >> 4),
                &packet[40..],
            ),
            6 => return None,
            _ => {
                let ip = Ipv4Repr::parse(packet).ok()?;
                // More fragments (0x2000) or an offset (0x1fff): a fragment.
                let whole = u16::from_be_bytes([packet[6], packet[7]]) & 0x3fff == 0;
                let rest = match packet.get(ip.header_len..) {
                    Some(r) if whole => r,
                    _ => &[],
                };
                (ip.protocol, ip.tos, rest)
            }
        };
        let ports = match protocol {
            IpProto::TCP | IpProto::UDP if rest.len() >= 4 => Some((
                u16::from_be_bytes([rest[0], rest[1]]),
                u16::from_be_bytes([rest[2], rest[3]]),
            )),
            _ => None,
        };
        Some(HeaderFields {
            protocol,
            tos,
            ports,
        })
    }
}

impl Rule {
    fn matches(&self, h: &HeaderFields) -> bool {
        if self.protocol.is_some_and(|p| p != h.protocol) {
            return false;
        }
        if let Some([lo, hi]) = self.ports {
            let inr = |p: u16| (lo..=hi).contains(&p);
            match h.ports {
                Some((s, d)) if inr(s) || inr(d) => {}
                _ => return false,
            }
        }
        h.tos & self.tos_mask == self.tos & self.tos_mask
    }
}

/// Implicit service-rate measurement (seed 004 sec. 8.1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureConfig {
    /// Measurement interval in milliseconds (AMBIGUOUS A7; proposal: about 1 s).
    pub window_ms: f64,
    /// Floor of every measured share, so idle services keep a positive rate.
    #[serde(default = "min_share")]
    pub min_share: f64,
}

fn min_share() -> f64 {
    0.01
}

/// The floors `MeasureConfig::min_share` may take. Not 0: seed 004 ch. 6-9 spec sec. 2.3 keeps
/// "a minimum rate eps > 0 for idle services", and SCFQ divides by it. A floor near `f64::MIN_POSITIVE`
/// is positive but not usable: its inverse is ~1e308, so one frame of that service gets an infinite
/// stamp, the scheduler's virtual time becomes infinite and, for the rest of the busy period, every
/// stamp ties and SCFQ serves in arrival order, ignoring the rates (session 33 review). 1e-6 is the
/// smallest configured rate `multi::RATE_RANGE` allows.
pub const MIN_SHARE_RANGE: std::ops::Range<f64> = 1e-6..1.0;

#[derive(Debug, Clone)]
struct Meter {
    window: Duration,
    min_share: f64,
    started: Instant,
    bytes: [u64; MAX_SERVICES],
}

/// The classifier of one endpoint: the configured mapping for `n` services, cumulative byte
/// counts per service, and the optional rate meter.
#[derive(Debug, Clone)]
pub struct Classifier {
    cfg: ClassifierConfig,
    n: usize,
    bytes: [u64; MAX_SERVICES],
    packets: [u64; MAX_SERVICES],
    meter: Option<Meter>,
}

impl Classifier {
    /// A classifier for `n` services (1..=16). Out-of-range targets in `cfg` fall back to the
    /// default service at lookup time, and an out-of-range default to service 0.
    pub fn new(cfg: ClassifierConfig, n: usize) -> Self {
        Classifier {
            cfg,
            n: n.clamp(1, MAX_SERVICES),
            bytes: [0; MAX_SERVICES],
            packets: [0; MAX_SERVICES],
            meter: None,
        }
    }

    /// Every packet to `service`.
    pub fn single(service: u8) -> Self {
        Self::new(ClassifierConfig::single(service), service as usize + 1)
    }

    /// Turn on implicit rate measurement.
    pub fn with_measurement(mut self, m: MeasureConfig, now: Instant) -> Self {
        self.meter = Some(Meter {
            window: Duration::from_secs_f64(m.window_ms.max(0.0) / 1e3),
            // Library callers are not validated (`MsllConfig::validate` refuses a floor outside
            // `MIN_SHARE_RANGE`): clamp, so a measured rate is never unusably small (a NaN, which
            // `clamp` would keep, becomes the smallest floor).
            min_share: if m.min_share.is_nan() {
                MIN_SHARE_RANGE.start
            } else {
                m.min_share.clamp(MIN_SHARE_RANGE.start, 1.0)
            },
            started: now,
            bytes: [0; MAX_SERVICES],
        });
        self
    }

    pub fn config(&self) -> &ClassifierConfig {
        &self.cfg
    }

    /// Number of services the classifier maps to.
    pub fn services(&self) -> usize {
        self.n
    }

    /// Grow to `n` services (a service was added).
    pub fn set_services(&mut self, n: usize) {
        self.n = n.clamp(1, MAX_SERVICES);
    }

    fn valid(&self, s: u8) -> Option<u8> {
        ((s as usize) < self.n).then_some(s)
    }

    /// Where unmatched packets go (the configured default if it names a service, else 0).
    pub fn default_service(&self) -> u8 {
        self.valid(self.cfg.default_service).unwrap_or(0)
    }

    fn ds_lookup(&self, tos: u8) -> Option<u8> {
        let ds = tos & self.cfg.ds_mask;
        if let Some(e) = self
            .cfg
            .ds_table
            .iter()
            .find(|e| e.ds & self.cfg.ds_mask == ds)
        {
            return self.valid(e.service);
        }
        if self.cfg.ds_direct {
            return self.valid(ds);
        }
        None
    }

    /// The service for a packet's header fields (pure: no counting).
    pub fn lookup(&self, h: Option<&HeaderFields>) -> u8 {
        let Some(h) = h else {
            return self.default_service();
        };
        let hit = match self.cfg.kind {
            ClassifierKind::Diffserv => self.ds_lookup(h.tos),
            ClassifierKind::Heuristic => self
                .cfg
                .rules
                .iter()
                .find(|r| r.matches(h))
                .and_then(|r| self.valid(r.service))
                .or_else(|| {
                    self.cfg
                        .ds_fallback
                        .then(|| self.ds_lookup(h.tos))
                        .flatten()
                }),
        };
        hit.unwrap_or_else(|| self.default_service())
    }

    /// The service for `packet` (pure: no counting).
    pub fn classify(&self, packet: &Packet) -> u8 {
        // Every lookup yields a valid service number, so with one service it is 0: the
        // single-service endpoints of chapters 4 and 5 need no header parse per packet.
        if self.n == 1 {
            return 0;
        }
        self.lookup(HeaderFields::parse(packet.as_slice()).as_ref())
    }

    /// Count `len` bytes given to `service`. With measurement on, returns the new rate table (one
    /// share per service, summing to 1) at the end of each measurement window.
    #[inline]
    pub fn count(&mut self, now: Instant, service: u8, len: usize) -> Option<Vec<f64>> {
        let s = service as usize % MAX_SERVICES;
        self.bytes[s] += len as u64;
        self.packets[s] += 1;
        self.meter.as_ref()?;
        self.measure(now, s, len)
    }

    /// The measuring part of `count` (seed 004 sec. 8.1), out of line: most classifiers do not
    /// measure, and `count` is inlined into every path that takes a packet from IP.
    #[inline(never)]
    fn measure(&mut self, now: Instant, s: usize, len: usize) -> Option<Vec<f64>> {
        let n = self.n;
        let m = self.meter.as_mut()?;
        m.bytes[s] += len as u64;
        if now.saturating_since(m.started) < m.window {
            return None;
        }
        let total: u64 = m.bytes[..n].iter().sum();
        m.started = now;
        if total == 0 {
            return None;
        }
        // seed 004 sec. 8.1: r_i = bytes_i / sum_j bytes_j, floored so r_i > 0, then renormalised
        // (the floor is at least `MIN_SHARE_RANGE.start`: `with_measurement`).
        let raw: Vec<f64> = m.bytes[..n]
            .iter()
            .map(|&b| (b as f64 / total as f64).max(m.min_share))
            .collect();
        m.bytes = [0; MAX_SERVICES];
        let sum: f64 = raw.iter().sum();
        Some(raw.into_iter().map(|r| r / sum).collect())
    }

    /// Bytes classified to each service since the start.
    pub fn bytes(&self) -> &[u64] {
        &self.bytes[..self.n]
    }

    /// Packets classified to each service since the start.
    pub fn packets(&self) -> &[u64] {
        &self.packets[..self.n]
    }

    /// Byte share of each service since the start (zeros before any packet).
    pub fn shares(&self) -> Vec<f64> {
        let total: u64 = self.bytes().iter().sum();
        self.bytes()
            .iter()
            .map(|&b| {
                if total == 0 {
                    0.0
                } else {
                    b as f64 / total as f64
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ip::{TcpRepr, UdpRepr};

    fn ip(protocol: u8, tos: u8, ports: Option<(u16, u16)>, len: usize) -> Packet {
        let mut b = vec![0u8; len.max(40)];
        Ipv4Repr {
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 3],
            protocol,
            tos,
            total_len: len as u16,
            ident: 1,
            ttl: 64,
            header_len: 20,
        }
        .emit(&mut b);
        match (protocol, ports) {
            (IpProto::TCP, Some((s, d))) => TcpRepr {
                src_port: s,
                dst_port: d,
                header_len: 20,
                ..Default::default()
            }
            .emit(&mut b[20..]),
            (IpProto::UDP, Some((s, d))) => UdpRepr {
                src_port: s,
                dst_port: d,
                len: 20,
            }
            .emit(&mut b[20..]),
            // ESP: an SPI and sequence number, then ciphertext; no readable ports.
            _ => b[20..28].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 9]),
        }
        Packet::from_vec(b)
    }

    #[test]
    fn diffserv_direct_mapping_table_mask_and_default() {
        // seed 004 sec. 7.1: DS value = service number; unknown values -> Default (service 0).
        let c = Classifier::new(ClassifierConfig::default(), 3);
        assert_eq!(c.classify(&ip(IpProto::TCP, 0, Some((20, 20)), 50)), 0);
        assert_eq!(c.classify(&ip(IpProto::TCP, 1, Some((20, 20)), 50)), 1);
        assert_eq!(c.classify(&ip(IpProto::UDP, 2, Some((5000, 5000)), 50)), 2);
        assert_eq!(c.classify(&ip(IpProto::UDP, 7, Some((5000, 5000)), 50)), 0);
        // Neither IPv4 nor IPv6 -> Default. With the default at 1, and byte 1 = 2 (what a
        // parse as IPv4 would read as the DS value): only the fallback gives 1.
        let d1 = Classifier::new(
            ClassifierConfig {
                default_service: 1,
                ..ClassifierConfig::default()
            },
            3,
        );
        let mut v5 = vec![0x50; 40];
        v5[1] = 2;
        assert_eq!(d1.classify(&Packet::from_vec(v5)), 1);
        let mut short6 = vec![0x61; 39];
        short6[1] = 2;
        assert_eq!(d1.classify(&Packet::from_vec(short6)), 1, "short IPv6");
        assert_eq!(c.classify(&Packet::from_vec(vec![0x70; 40])), 0);

        // A table with the DSCP mask: EF (46 << 2 = 0xb8) -> real-time service 2, AF11 -> 1.
        let cfg = ClassifierConfig {
            ds_mask: 0xfc,
            ds_table: vec![
                DsEntry {
                    ds: 0xb8,
                    service: 2,
                },
                DsEntry {
                    ds: 0x28,
                    service: 1,
                },
            ],
            ds_direct: false,
            default_service: 0,
            ..Default::default()
        };
        let c = Classifier::new(cfg, 3);
        assert_eq!(
            c.classify(&ip(IpProto::UDP, 0xb9, None, 50)),
            2,
            "ECN bits masked"
        );
        assert_eq!(c.classify(&ip(IpProto::TCP, 0x28, Some((1, 2)), 50)), 1);
        assert_eq!(c.classify(&ip(IpProto::TCP, 0x01, Some((1, 2)), 50)), 0);
        // A table entry naming a service that does not exist falls back to the default.
        let cfg = ClassifierConfig {
            ds_table: vec![DsEntry { ds: 5, service: 9 }],
            default_service: 1,
            ..Default::default()
        };
        let c = Classifier::new(cfg, 2);
        assert_eq!(c.classify(&ip(IpProto::UDP, 5, None, 50)), 1);
    }

    /// An IPv6 header with traffic class `tc`, next header `nh`, then 4 port bytes.
    fn ip6(tc: u8, nh: u8, ports: (u16, u16)) -> Packet {
        let mut b = vec![0u8; 60];
        b[0] = 0x60 | tc >> 4;
        b[1] = tc << 4;
        b[4..6].copy_from_slice(&20u16.to_be_bytes());
        b[6] = nh;
        b[7] = 64;
        b[40..42].copy_from_slice(&ports.0.to_be_bytes());
        b[42..44].copy_from_slice(&ports.1.to_be_bytes());
        Packet::from_vec(b)
    }

    #[test]
    fn ipv6_traffic_class_and_ports_and_ipv4_fragments() {
        // DS-field rules read IPv6's traffic class (ECN bits masked as for IPv4's TOS).
        let c = Classifier::new(ClassifierConfig::default(), 3);
        assert_eq!(c.classify(&ip6(2, IpProto::UDP, (1, 2))), 2);
        assert_eq!(c.classify(&ip6(1, IpProto::TCP, (1, 2))), 1);
        // Heuristic rules see IPv6 protocol and ports when TCP/UDP follows the fixed header.
        let h = Classifier::new(ClassifierConfig::heuristic(1, 2, [5000, 5099]), 3);
        assert_eq!(h.classify(&ip6(0, IpProto::TCP, (80, 3456))), 1);
        assert_eq!(h.classify(&ip6(0, IpProto::UDP, (9, 5010))), 2);
        // Behind an extension header (hop-by-hop, 0) no ports are read: not real-time.
        assert_eq!(h.classify(&ip6(0, 0, (5010, 5010))), 0);

        // A later IPv4 fragment starts with payload, not ports, and the first one's ports would
        // send it elsewhere than the rest: no fragment matches a port rule, so all of a
        // datagram's fragments go to one service (session 46; before, the first went to the
        // real-time service and the rest to the DS lookup).
        let whole = ip(IpProto::UDP, 0, Some((5010, 5010)), 60)
            .as_slice()
            .to_vec();
        assert_eq!(h.classify(&Packet::from_vec(whole.clone())), 2);
        let mut first = whole.clone();
        first[6] = 0x20; // MF
        assert_eq!(h.classify(&Packet::from_vec(first.clone())), 0);
        let mut later = first.clone();
        later[6] = 0x00;
        later[7] = 0x05; // offset 40 bytes, payload bytes that look like real-time ports
        assert_eq!(h.classify(&Packet::from_vec(later)), 0);
        assert_eq!(HeaderFields::parse(&first).map(|f| f.ports), Some(None));
        assert_eq!(
            HeaderFields::parse(&whole).map(|f| f.ports),
            Some(Some((5010, 5010)))
        );
    }

    #[test]
    fn heuristic_protocol_ports_tos_and_ipsec_fallback() {
        let c = Classifier::new(ClassifierConfig::heuristic(1, 2, [5000, 5099]), 3);
        // R-H1: all TCP -> the TCP service, whatever the DS byte says.
        assert_eq!(c.classify(&ip(IpProto::TCP, 2, Some((80, 3456)), 50)), 1);
        // R-H2: UDP to/from a real-time port (either direction) -> real-time service.
        assert_eq!(c.classify(&ip(IpProto::UDP, 0, Some((5010, 9)), 50)), 2);
        assert_eq!(c.classify(&ip(IpProto::UDP, 0, Some((9, 5099)), 50)), 2);
        // R-H4: other UDP -> DS fallback (0 here) -> Default.
        assert_eq!(c.classify(&ip(IpProto::UDP, 0, Some((53, 53)), 50)), 0);
        // IPsec ESP (protocol 50, ports hidden; sec. 8.1): only the DS byte is left.
        assert_eq!(c.classify(&ip(IpProto::ESP, 2, None, 50)), 2);
        assert_eq!(c.classify(&ip(IpProto::ESP, 1, None, 50)), 1);
        assert_eq!(c.classify(&ip(IpProto::ESP, 0, None, 50)), 0);
        // Without the fallback, ESP goes to the Default service.
        let mut cfg = ClassifierConfig::heuristic(1, 2, [5000, 5099]);
        cfg.ds_fallback = false;
        let c = Classifier::new(cfg, 3);
        assert_eq!(c.classify(&ip(IpProto::ESP, 2, None, 50)), 0);
        // A TOS rule: "minimize delay" (0x10) -> real-time service, before the TCP rule.
        let mut cfg = ClassifierConfig::heuristic(1, 2, [5000, 5099]);
        cfg.rules.insert(
            0,
            Rule {
                protocol: None,
                ports: None,
                tos_mask: 0x10,
                tos: 0x10,
                service: 2,
            },
        );
        let c = Classifier::new(cfg, 3);
        assert_eq!(c.classify(&ip(IpProto::TCP, 0x10, Some((22, 22)), 50)), 2);
        assert_eq!(c.classify(&ip(IpProto::TCP, 0x08, Some((22, 22)), 50)), 1);
    }

    /// The one-service shortcut of `classify` answers what the full lookup would, for every
    /// classifier kind and for packets with or without readable headers.
    #[test]
    fn one_service_classifies_everything_to_service_0() {
        let packets = [
            ip(IpProto::TCP, 0x0b, Some((80, 1024)), 1000),
            ip(IpProto::UDP, 0x01, Some((5004, 5004)), 200),
            ip(50, 0xff, None, 60),
            Packet::from_vec(vec![0x60; 40]),
            Packet::from_vec(vec![0x45]),
        ];
        let configs = [
            ClassifierConfig::default(),
            ClassifierConfig::single(0),
            ClassifierConfig::single(3),
            ClassifierConfig::heuristic(1, 2, [5004, 5005]),
        ];
        for cfg in configs {
            let c = Classifier::new(cfg.clone(), 1);
            for p in &packets {
                let full = c.lookup(HeaderFields::parse(p.as_slice()).as_ref());
                assert_eq!((c.classify(p), full), (0, 0), "{cfg:?} {p:?}");
            }
        }
    }

    #[test]
    fn rules_are_configuration() {
        // The lab reads the same structure from TOML (`[msll] classifier = { ... }`).
        let t = r#"{
            "kind": "heuristic",
            "default_service": 0,
            "rules": [
                { "protocol": 6, "service": 1 },
                { "protocol": 17, "ports": [5000, 5099], "service": 2 },
                { "tos_mask": 16, "tos": 16, "service": 2 }
            ]
        }"#;
        let cfg: ClassifierConfig = serde_json::from_str(t).unwrap();
        assert_eq!(cfg.kind, ClassifierKind::Heuristic);
        assert_eq!(cfg.rules.len(), 3);
        assert_eq!(cfg.rules[1].ports, Some([5000, 5099]));
        let back: ClassifierConfig =
            serde_json::from_str(&serde_json::to_string(&cfg).unwrap()).unwrap();
        assert_eq!(back, cfg);
        assert!(
            serde_json::from_str::<ClassifierConfig>(r#"{"kind":"diffserv","bogus":1}"#).is_err()
        );
    }

    #[test]
    fn byte_counts_and_measured_rates() {
        let mut c = Classifier::new(ClassifierConfig::default(), 2).with_measurement(
            MeasureConfig {
                window_ms: 1000.0,
                min_share: 0.01,
            },
            Instant::ZERO,
        );
        let t = |ms: u64| Instant::ZERO + Duration::from_millis(ms);
        assert_eq!(c.count(t(0), 0, 100), None);
        assert_eq!(c.count(t(10), 1, 300), None);
        let r = c.count(t(1000), 0, 100).expect("window over");
        assert!(
            (r[0] - 0.4).abs() < 1e-12 && (r[1] - 0.6).abs() < 1e-12,
            "{r:?}"
        );
        // An idle service keeps the floor.
        let r = c.count(t(2000), 0, 500).unwrap();
        assert!((r[1] - 0.01 / 1.01).abs() < 1e-12, "{r:?}");
        assert_eq!(c.bytes(), &[700, 300]);
        assert_eq!(c.packets(), &[3, 1]);
        assert!((c.shares()[0] - 0.7).abs() < 1e-12);
    }

    /// A floor below `MIN_SHARE_RANGE` (a library caller; scenario files and the daemon refuse
    /// it) is raised to it, so an idle service's rate stays usable by SCFQ: with the old floor of
    /// `f64::MIN_POSITIVE` its next frame's stamp was infinite.
    #[test]
    fn a_zero_floor_is_raised_to_a_usable_rate() {
        for floor in [0.0, -1.0, f64::NAN, 1e-300] {
            let mut c = Classifier::new(ClassifierConfig::default(), 2).with_measurement(
                MeasureConfig {
                    window_ms: 1000.0,
                    min_share: floor,
                },
                Instant::ZERO,
            );
            let t = |ms: u64| Instant::ZERO + Duration::from_millis(ms);
            c.count(t(0), 0, 1500);
            let r = c.count(t(1000), 0, 1500).expect("window over");
            assert!(
                r[1] >= MIN_SHARE_RANGE.start * 0.99 && r[1] < 1e-5,
                "{floor}: {r:?}"
            );
            // The stamp SCFQ gives a 1500-byte frame at that rate is finite and far from overflow.
            assert!(
                (1500.0 / r[1]).is_finite() && 1500.0 / r[1] < 1e10,
                "{floor}: {r:?}"
            );
        }
    }
}
