//! The daemon's TOML configuration and the one place that turns it into an `Endpoint`.
//!
//! ```toml
//! bind = "198.18.0.1:7000"        # local UDP address
//! peer = "198.18.0.2:7000"        # the other daemon
//! key = "<64 hex digits>"         # pre-shared key (or key_file = "/etc/mslld.key")
//! control = "/run/mslld.sock"     # optional: Unix socket for `mslld stats`
//!
//! [tun]
//! name = "msll0"
//! address = "198.19.0.1"
//! prefix = 24
//! mtu = 1400
//! # mss_clamp = "auto"            # lower TCP SYNs' MSS to fit mtu ("off", or a number)
//! # address6 = "fd6d:736c:6c64::1"  # optional IPv6 address, prefix6 = 64
//!
//! [link]                          # the link the schemes think they run on
//! rate_mbps = 20.0                # pace IP and frames at this rate (VirtualLink)
//! delay_ms = 20.0                 # one-way delay the scheme timers are derived from
//!
//! [msll]                          # msll_proto::MsllConfig, passed through verbatim
//! services = [{ kind = "default" }, { kind = "sr", nak_policy = "per-frame" }]
//! names = ["default", "bulk"]     # optional labels for stats and logs (daemon-only key)
//! classifier = { kind = "heuristic", rules = [{ protocol = 6, service = 1 }] }
//! scheduler = "scfq"
//! rates = [1.0, 2.0]
//! queue_limit = 256
//!
//! [impair]                        # testing only: loss and delay on datagrams received
//! error = { model = "bernoulli", p = 0.05 }
//! delay_ms = 20.0
//! seed = 1
//! ```

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};

use msll_proto::service::{SchemeConfig, SnoopSegments};
use msll_proto::{DataRate, Duration, Endpoint, LinkInfo, MsllConfig, Role};
use msll_sim::error_model::ErrorSpec;
use serde::{Deserialize, Serialize};

use crate::wire::Psk;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub bind: SocketAddr,
    pub peer: SocketAddr,
    /// Pre-shared key, 64 hex digits. Prefer `key_file` outside tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_file: Option<PathBuf>,
    /// The control socket's path; a relative one is taken from the configuration file's
    /// directory, as `key_file` and trace paths are (`control_path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<PathBuf>,
    pub tun: TunConfig,
    pub link: LinkConfig,
    pub msll: MsllSection,
    /// Which end this daemon is: only Snoop (base station side) cares.
    #[serde(default = "default_role")]
    pub role: Role,
    #[serde(default)]
    pub limits: Limits,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impair: Option<ImpairConfig>,
    /// Seconds between liveness hellos while the link is up.
    #[serde(default = "default_hello_s")]
    pub hello_interval_s: f64,
    /// Seconds without an authentic datagram from the peer (which sends a hello at least every
    /// `hello_interval_s`) after which the link is taken for down: `link_up` turns false, IP
    /// stops feeding the schemes (the ingress queues drop and count) and hellos go out quickly
    /// until the peer answers. Default: `PEER_TIMEOUT_HELLOS` hello intervals, of ours or of the
    /// peer's (its hellos announce it), whichever is longer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_timeout_s: Option<f64>,
    /// Directory of the configuration file: relative paths in it (an impairment trace) are
    /// resolved from here.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

fn default_hello_s() -> f64 {
    1.0
}
fn default_role() -> Role {
    Role::Host
}

/// The tunnel's default `msll.classifier.ds_mask`: the six DSCP bits, not the ECN bits
/// (`Config::apply_tunnel_defaults`).
pub const TUNNEL_DS_MASK: u8 = 0xfc;

/// The `[msll]` section: msll-proto's own configuration of services, classifier, scheduler, rates
/// and timer scaling, flattened in unchanged so new fields there need no daemon change; plus
/// optional service labels.
#[derive(Debug, Clone, Serialize)]
pub struct MsllSection {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    #[serde(flatten)]
    pub config: MsllConfig,
}

// By hand rather than `flatten` on deserialisation: flatten would silently accept misspelt keys,
// which MsllConfig's own `deny_unknown_fields` rejects when it sees the table directly. The
// section's own map is handed to MsllConfig with `names` taken out on the way, so TOML's errors
// keep pointing at the offending key or value (going through a `toml::Table` first pointed every
// error at the `[msll]` line: input audit, session 23).
impl<'de> Deserialize<'de> for MsllSection {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(section::SectionVisitor)
    }
}

mod section {
    use super::{MsllConfig, MsllSection};
    use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
    use serde::Deserialize;
    use std::fmt;

    pub struct SectionVisitor;

    impl<'de> Visitor<'de> for SectionVisitor {
        type Value = MsllSection;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("the [msll] table")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MsllSection, A::Error> {
            let mut names = None;
            let config = MsllConfig::deserialize(Without {
                map,
                names: &mut names,
            })?;
            Ok(MsllSection {
                names: names.unwrap_or_default(),
                config,
            })
        }
    }

    /// The section's map as a deserializer (and map) that MsllConfig reads, minus `names`.
    struct Without<'a, A> {
        map: A,
        names: &'a mut Option<Vec<String>>,
    }

    impl<'de, A: MapAccess<'de>> de::Deserializer<'de> for Without<'_, A> {
        type Error = A::Error;
        fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, A::Error> {
            v.visit_map(self)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map struct enum identifier ignored_any
        }
    }

    impl<'de, A: MapAccess<'de>> MapAccess<'de> for Without<'_, A> {
        type Error = A::Error;
        fn next_key_seed<K: DeserializeSeed<'de>>(
            &mut self,
            seed: K,
        ) -> Result<Option<K::Value>, A::Error> {
            let mut seed = Some(seed);
            loop {
                // The key is read inside the inner map's `next_key_seed`, so an unknown field
                // is reported at the key's position.
                match self.map.next_key_seed(Key(&mut seed))? {
                    None => return Ok(None),
                    Some(Some(k)) => return Ok(Some(k)),
                    Some(None) => {
                        if self.names.is_some() {
                            return Err(de::Error::duplicate_field("names"));
                        }
                        *self.names = Some(self.map.next_value()?);
                    }
                }
            }
        }
        fn next_value_seed<V: DeserializeSeed<'de>>(
            &mut self,
            seed: V,
        ) -> Result<V::Value, A::Error> {
            self.map.next_value_seed(seed)
        }
    }

    /// Reads one key: `None` for `names`, else the key as MsllConfig's field seed reads it.
    struct Key<'s, K>(&'s mut Option<K>);

    impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for Key<'_, K> {
        type Value = Option<K::Value>;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            let key = String::deserialize(d)?;
            if key == "names" {
                return Ok(None);
            }
            let seed = self.0.take().expect("one field key per call");
            let de: de::value::StringDeserializer<de::value::Error> = key.into_deserializer();
            seed.deserialize(de).map(Some).map_err(|e| {
                let msg = e.to_string();
                // MsllConfig lists its own fields; the section also takes `names`.
                if msg.starts_with("unknown field") {
                    de::Error::custom(format_args!("{msg}, or `names`"))
                } else {
                    de::Error::custom(msg)
                }
            })
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TunConfig {
    #[serde(default = "default_tun_name")]
    pub name: String,
    pub address: Ipv4Addr,
    #[serde(default = "default_prefix")]
    pub prefix: u8,
    #[serde(default = "default_mtu")]
    pub mtu: u16,
    /// Optional IPv6 address of the TUN device, with its prefix length (default 64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address6: Option<Ipv6Addr>,
    #[serde(default = "default_prefix6")]
    pub prefix6: u8,
    /// Lower the MSS option of TCP SYNs read from TUN (`mss.rs`): `"auto"` (default: what fits
    /// `mtu`, i.e. mtu - 40 for IPv4 and mtu - 60 for IPv6), `"off"`, or a number of bytes.
    #[serde(default)]
    pub mss_clamp: MssClamp,
}

/// `tun.mss_clamp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MssClamp {
    #[default]
    Auto,
    Off,
    Fixed(u16),
}

impl MssClamp {
    /// The largest MSS for (IPv4, IPv6) SYNs entering a tunnel of `mtu`, or `None` when off.
    pub fn limits(self, mtu: u16) -> Option<(u16, u16)> {
        match self {
            MssClamp::Auto => Some((
                mtu.saturating_sub(crate::mss::V4_OVERHEAD),
                mtu.saturating_sub(crate::mss::V6_OVERHEAD),
            )),
            MssClamp::Off => None,
            // A fixed clamp checked against IPv4's overhead still has to fit IPv6's, 20 bytes
            // larger: segments of that MSS would not fit the TUN MTU (session 33 review).
            MssClamp::Fixed(n) => Some((n, n.min(mtu.saturating_sub(crate::mss::V6_OVERHEAD)))),
        }
    }
}

impl Serialize for MssClamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MssClamp::Auto => s.serialize_str("auto"),
            MssClamp::Off => s.serialize_str("off"),
            MssClamp::Fixed(n) => s.serialize_u16(*n),
        }
    }
}

impl<'de> Deserialize<'de> for MssClamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            Number(i64),
        }
        match Raw::deserialize(d)? {
            Raw::Word(w) if w == "auto" => Ok(MssClamp::Auto),
            Raw::Word(w) if w == "off" => Ok(MssClamp::Off),
            // RFC 879 / RFC 8200: 536 (IPv4) is the smallest MSS every host accepts.
            Raw::Number(n) if (536..=65_495).contains(&n) => Ok(MssClamp::Fixed(n as u16)),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "tun.mss_clamp = {w:?}: expected \"auto\", \"off\" or a number of bytes 536..=65495"
            ))),
            Raw::Number(n) => Err(serde::de::Error::custom(format!(
                "tun.mss_clamp = {n}: expected \"auto\", \"off\" or a number of bytes 536..=65495"
            ))),
        }
    }
}

fn default_prefix6() -> u8 {
    64
}

fn default_tun_name() -> String {
    "msll0".into()
}
fn default_prefix() -> u8 {
    24
}
fn default_mtu() -> u16 {
    1400
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Nominal rate of the emulated link: IP is accepted and frames leave at this rate.
    pub rate_mbps: f64,
    /// One-way delay used to derive the schemes' default timers (it does not add delay; see
    /// `impair.delay_ms` for that).
    #[serde(default = "default_delay_ms")]
    pub delay_ms: f64,
    /// Largest packet payload, for the schemes' timer derivation; default: the TUN MTU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_payload: Option<usize>,
}

fn default_delay_ms() -> f64 {
    5.0
}

/// Queue limits that keep memory bounded under overload: excess is dropped and counted.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Packets read from TUN waiting for the classifier's pacing.
    #[serde(default = "default_ingress")]
    pub ingress_packets: usize,
    /// Frames waiting in the Endpoint's scheduler, with the packets a service holds before
    /// handing them over (status RLP, HDLC), before the daemon stops feeding it packets.
    #[serde(default = "default_backlog")]
    pub backlog_frames: usize,
    /// Datagrams held by the impairment delay line.
    #[serde(default = "default_delay_line")]
    pub delay_line: usize,
    /// UDP socket send and receive buffer size requested from the kernel, bytes.
    #[serde(default = "default_socket_buffer")]
    pub socket_buffer: usize,
    /// Longest a packet may wait in its service's ingress queue, milliseconds: one value for
    /// every service, or one per service (0 = no limit). Older packets are discarded and
    /// counted (`ingress_expired`) instead of being sent late, as PDCP's discard timer or
    /// 802.11's MSDU lifetime do (`../shared/design/peers.md`: delay budgets). Empty (the
    /// default): no limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub max_wait_ms: Vec<f64>,
}

/// The scheme parameters that both ends of a link must share (`Config::link_digest`).
const WIRE_KEYS: [&str; 6] = ["window", "buffer", "block", "parity", "mode", "adaptive"];

/// Frames per service scheduler queue when `msll.queue_limit` is not given.
pub const DEFAULT_QUEUE_LIMIT: usize = 1024;

fn default_socket_buffer() -> usize {
    4 << 20
}

fn default_ingress() -> usize {
    64
}
fn default_backlog() -> usize {
    32
}
fn default_delay_line() -> usize {
    16_384
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ingress_packets: default_ingress(),
            backlog_frames: default_backlog(),
            delay_line: default_delay_line(),
            socket_buffer: default_socket_buffer(),
            max_wait_ms: Vec::new(),
        }
    }
}

/// Emulated impairment of the datagrams this daemon receives (loss from the simulator's error
/// models, plus a fixed delay), so tests need no kernel queueing disciplines.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImpairConfig {
    pub error: ErrorSpec,
    #[serde(default)]
    pub delay_ms: f64,
    /// Up to this much more delay, uniform per datagram (UDPspeeder's `-j`; session 47).
    #[serde(default)]
    pub jitter_ms: f64,
    /// With jitter, whether a datagram may overtake an earlier one (netem's behaviour); off,
    /// the line stays in arrival order (each datagram waits at least for the one before it).
    #[serde(default)]
    pub reorder: bool,
    #[serde(default)]
    pub seed: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading {0}: {1}")]
    Io(PathBuf, std::io::Error),
    // The TOML error is in the message (not a `source`), so `InFile` can prefix it with the path
    // and anyhow still prints it once.
    #[error("parsing the configuration: {0}")]
    Parse(toml::de::Error),
    #[error("{0}")]
    Invalid(String),
    /// Any of the above, in a named configuration file.
    #[error("{}: {inner}", path.display())]
    InFile {
        path: PathBuf,
        inner: Box<ConfigError>,
    },
}

/// Largest TUN MTU (and frame payload): a full packet plus the longest scheme header and the
/// datagram's own overhead must fit one UDP datagram.
pub const MAX_MTU: usize =
    crate::wire::MAX_DATAGRAM - crate::wire::OVERHEAD - msll_proto::wire::HEAD_MAX;
/// `hello_interval_s` bounds: below 10 ms the daemon would spend itself on hellos.
pub const HELLO_RANGE_S: std::ops::RangeInclusive<f64> = 0.01..=3600.0;
/// The underlay path MTU `mtu_warning` assumes (Ethernet).
const UNDERLAY_MTU: usize = 1500;
/// `peer_timeout_s` by default: this many hello intervals (three hellos lost in a row).
pub const PEER_TIMEOUT_HELLOS: f64 = 4.0;
/// `limits.max_wait_ms` bounds (other than 0, no limit): 1 ms to an hour.
const MAX_WAIT_RANGE_MS: std::ops::RangeInclusive<f64> = 1.0..=3_600_000.0;
/// `peer_timeout_s` upper bound: a day.
const PEER_TIMEOUT_MAX_S: f64 = 86_400.0;
/// Largest `limits.socket_buffer`: setsockopt takes a C int, which the kernel doubles.
pub const MAX_SOCKET_BUFFER: usize = (i32::MAX / 2) as usize;

/// `link.rate_mbps`: 1 kbit/s to 100 Gbit/s (the rate is paced in whole bits per second).
pub const RATE_MBPS: std::ops::RangeInclusive<f64> = 0.001..=100_000.0;
/// `link.delay_ms` and `impair.delay_ms`: up to an hour.
const DELAY_MS: std::ops::RangeInclusive<f64> = 0.0..=3_600_000.0;

impl Config {
    /// The UDP addresses: a peer that no datagram can be sent to makes a daemon that logs send
    /// failures forever.
    fn check_addresses(&self) -> Result<(), ConfigError> {
        let (b, p) = (self.bind, self.peer);
        if b.port() == 0 {
            // The peer sends to the port its own `peer` names; an ephemeral one would never
            // be it (review, session 46).
            return Err(ConfigError::Invalid(format!(
                "bind = \"{b}\": port 0 binds a random port, which the peer cannot know to \
                 send to"
            )));
        }
        let why = if p.port() == 0 {
            Some("port 0 cannot be sent to")
        } else if p.ip().is_unspecified() {
            Some("an unspecified address cannot be sent to")
        } else if p.ip().is_multicast() || p.ip() == std::net::IpAddr::V4(Ipv4Addr::BROADCAST) {
            Some("the tunnel's peer is one host, not a multicast or broadcast address")
        } else if p.is_ipv4() != b.is_ipv4() {
            Some("the address family differs from bind's")
        } else if p == b {
            Some("the same as bind: the daemon would talk to itself")
        } else {
            None
        };
        match why {
            Some(w) => Err(ConfigError::Invalid(format!(
                "peer = \"{p}\" (bind = \"{b}\"): {w}"
            ))),
            None => Ok(()),
        }
    }

    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let s =
            std::fs::read_to_string(path).map_err(|e| ConfigError::Io(path.to_path_buf(), e))?;
        let in_file = |inner| ConfigError::InFile {
            path: path.to_path_buf(),
            inner: Box::new(inner),
        };
        let mut c: Config = toml::from_str(&s).map_err(|e| in_file(ConfigError::Parse(e)))?;
        c.apply_tunnel_defaults(&s);
        c.base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        c.validate().map_err(in_file)?;
        Ok(c)
    }

    pub fn from_toml(s: &str) -> Result<Config, ConfigError> {
        let mut c: Config = toml::from_str(s).map_err(ConfigError::Parse)?;
        c.apply_tunnel_defaults(s);
        c.validate()?;
        Ok(c)
    }

    /// Defaults that differ from the simulator's, for keys the file leaves out.
    ///
    /// `msll.classifier.ds_mask`: the DSCP only (`0xfc`). The simulator writes the service
    /// number into the whole TOS byte and reads it back with `0xff`; real hosts put ECN in its
    /// two low bits (ECT(0) = `0x02`, a router's CE mark `0x03`), and with the whole byte an
    /// ECN-capable flow went to service 2 and, once marked, to service 3 mid-flow (review,
    /// session 46; documented as a hazard since session 41).
    ///
    /// `segments` of a Snoop service: `"real"`. The simulator's one-way TCP agents send the
    /// segments ns-2's Snoop was written for; real stacks piggyback ACKs on data, send window
    /// updates and resets, which that reading gets wrong (`SnoopSegments`; review, session 46).
    fn apply_tunnel_defaults(&mut self, text: &str) {
        let table = text.parse::<toml::Table>().ok();
        let msll = table.as_ref().and_then(|t| t.get("msll"));
        let given = msll
            .and_then(|m| m.get("classifier"))
            .and_then(|c| c.get("ds_mask"))
            .is_some();
        // A DS table written for the whole byte (an entry with ECN bits) keeps it: under the
        // DSCP mask its entry `ds = 1` would take every TOS-0 packet (review, session 46).
        let table_uses_ecn_bits = self
            .msll
            .config
            .classifier
            .ds_table
            .iter()
            .any(|e| e.ds & !TUNNEL_DS_MASK != 0);
        if !given && !table_uses_ecn_bits {
            self.msll.config.classifier.ds_mask = TUNNEL_DS_MASK;
        }
        let services = msll
            .and_then(|m| m.get("services"))
            .and_then(|s| s.as_array());
        for (i, s) in self.msll.config.services.iter_mut().enumerate() {
            if let SchemeConfig::Snoop {
                segments, state, ..
            } = s
            {
                let given = services
                    .and_then(|v| v.get(i))
                    .and_then(|x| x.get("segments"))
                    .is_some();
                // A host-pair Snoop (which `real` refuses) keeps the ns-2 reading it had.
                if !given && *state == msll_proto::service::SnoopState::Connection {
                    *segments = SnoopSegments::Real;
                }
            }
        }
    }

    /// The configuration as TOML that reads back the same: the tunnel's defaults above apply
    /// to keys left out, so the keys whose serialised form leaves them out at the simulator's
    /// defaults are written explicitly (`mslld check`; review, session 46: its output read
    /// back with the other ds_mask and Snoop reading).
    pub fn to_toml_explicit(&self) -> Result<String, toml::ser::Error> {
        let mut v = toml::Value::try_from(self)?;
        if let Some(msll) = v.get_mut("msll").and_then(|m| m.as_table_mut()) {
            if let Some(c) = msll.get_mut("classifier").and_then(|c| c.as_table_mut()) {
                c.insert(
                    "ds_mask".into(),
                    i64::from(self.msll.config.classifier.ds_mask).into(),
                );
            }
            if let Some(list) = msll.get_mut("services").and_then(|s| s.as_array_mut()) {
                for (x, s) in list.iter_mut().zip(&self.msll.config.services) {
                    if let (Some(t), SchemeConfig::Snoop { segments, .. }) = (x.as_table_mut(), s) {
                        let name = if segments.is_ns2() { "ns2" } else { "real" };
                        t.insert("segments".into(), name.into());
                    }
                }
            }
        }
        toml::to_string_pretty(&v)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        self.msll
            .config
            .validate()
            .map_err(|e| ConfigError::Invalid(format!("msll.{e}")))?;
        let n = self.msll.config.services.len();
        if !self.msll.names.is_empty() && self.msll.names.len() != n {
            return bad(format!(
                "msll.names: {} given for {n} services",
                self.msll.names.len()
            ));
        }
        // Names label the stats and log lines: they must tell the services apart.
        for (i, name) in self.msll.names.iter().enumerate() {
            if name.trim().is_empty() || name.chars().any(char::is_control) {
                return bad(format!(
                    "msll.names[{i}] = {name:?}: must be a visible, non-empty label"
                ));
            }
            if self.msll.names[..i].contains(name) {
                return bad(format!("msll.names[{i}] = {name:?}: given twice"));
            }
        }
        if !RATE_MBPS.contains(&self.link.rate_mbps) {
            return bad(format!(
                "link.rate_mbps = {:?}: must be a rate in {}..={} Mbit/s",
                self.link.rate_mbps,
                RATE_MBPS.start(),
                RATE_MBPS.end()
            ));
        }
        if !DELAY_MS.contains(&self.link.delay_ms) {
            return bad(format!(
                "link.delay_ms = {:?}: must be in 0..={} milliseconds",
                self.link.delay_ms,
                DELAY_MS.end()
            ));
        }
        self.check_addresses()?;
        if !(576..=MAX_MTU).contains(&(self.tun.mtu as usize)) {
            return bad(format!(
                "tun.mtu = {}: must be in 576..={MAX_MTU} (a frame must fit one UDP datagram)",
                self.tun.mtu
            ));
        }
        // Linux refuses an IPv6 address on a link whose MTU is below IPv6's minimum, and the
        // daemon would fail only after opening its socket, naming neither key (session 33 review).
        if self.tun.address6.is_some() && self.tun.mtu < 1280 {
            return bad(format!(
                "tun.mtu = {}: tun.address6 needs at least 1280 (IPv6's minimum link MTU)",
                self.tun.mtu
            ));
        }
        if self.tun.prefix > 32 || self.tun.prefix6 > 128 {
            return bad(format!(
                "tun.prefix = {} / tun.prefix6 = {}: must be <= 32 / <= 128",
                self.tun.prefix, self.tun.prefix6
            ));
        }
        if let Some(fp) = self.link.frame_payload {
            if !(1..=MAX_MTU).contains(&fp) {
                return bad(format!(
                    "link.frame_payload = {fp}: must be in 1..={MAX_MTU}"
                ));
            }
        }
        if !HELLO_RANGE_S.contains(&self.hello_interval_s) {
            return bad(format!(
                "hello_interval_s = {}: must be in {}..={} seconds",
                self.hello_interval_s,
                HELLO_RANGE_S.start(),
                HELLO_RANGE_S.end()
            ));
        }
        if let Some(t) = self.peer_timeout_s {
            // One lost hello must not take the link down.
            let lo = 2.0 * self.hello_interval_s;
            if !(t.is_finite() && t >= lo && t <= PEER_TIMEOUT_MAX_S) {
                return bad(format!(
                    "peer_timeout_s = {t}: must be in {lo}..={PEER_TIMEOUT_MAX_S} seconds \
                     (at least two hello intervals)"
                ));
            }
        }
        for (field, v, min) in [
            ("ingress_packets", self.limits.ingress_packets, 1),
            ("backlog_frames", self.limits.backlog_frames, 1),
            ("delay_line", self.limits.delay_line, 1),
            // Below a few kB the kernel raises it anyway (SOCK_MIN_RCVBUF); 0 meant nothing.
            ("socket_buffer", self.limits.socket_buffer, 4096),
        ] {
            if v < min {
                return bad(format!("limits.{field} = {v}: must be at least {min}"));
            }
        }
        // setsockopt takes a C int and the kernel doubles it: a larger request wrapped to a
        // negative or zero size, which the kernel turned into its smallest buffer, silently
        // (session 33 review).
        if self.limits.socket_buffer > MAX_SOCKET_BUFFER {
            return bad(format!(
                "limits.socket_buffer = {}: must be at most {MAX_SOCKET_BUFFER} bytes",
                self.limits.socket_buffer
            ));
        }
        let n = self.msll.config.services.len();
        let waits = &self.limits.max_wait_ms;
        if !(waits.len() <= 1 || waits.len() == n) {
            return bad(format!(
                "limits.max_wait_ms = {waits:?}: give one value, or one per service ({n})"
            ));
        }
        if let Some(w) = waits
            .iter()
            .find(|w| !(**w == 0.0 || MAX_WAIT_RANGE_MS.contains(*w)))
        {
            return bad(format!(
                "limits.max_wait_ms = {w}: must be 0 (no limit) or in {}..={} ms",
                MAX_WAIT_RANGE_MS.start(),
                MAX_WAIT_RANGE_MS.end()
            ));
        }
        if let MssClamp::Fixed(n) = self.tun.mss_clamp {
            let max = self.tun.mtu.saturating_sub(crate::mss::V4_OVERHEAD);
            if n > max {
                return bad(format!(
                    "tun.mss_clamp = {n}: larger than what fits tun.mtu = {} ({max} for IPv4)",
                    self.tun.mtu
                ));
            }
        }
        let name = &self.tun.name;
        // IFNAMSIZ is 16 with the terminating NUL; '/' and whitespace are refused by the kernel.
        if name.is_empty()
            || name.len() > 15
            || name == "."
            || name == ".."
            || name
                .chars()
                .any(|c| c == '/' || c == ':' || c.is_whitespace())
        {
            return bad(format!(
                "tun.name = {name:?}: must be 1..=15 bytes, not \".\" or \"..\", without '/', ':' or whitespace"
            ));
        }
        if self
            .control
            .as_ref()
            .is_some_and(|c| c.as_os_str().is_empty())
        {
            return bad("control = \"\": give a socket path, or omit the key".into());
        }
        // A scheme timer waiting for an answer that expires before one frame has even left
        // resends without end (the simulator's scenario check refuses the same).
        let payload = self.link.frame_payload.unwrap_or(self.tun.mtu as usize);
        for (k, svc) in self.msll.config.services.iter().enumerate() {
            svc.check_answer_timers(payload, self.link.rate_mbps * 1e6)
                .map_err(|e| ConfigError::Invalid(format!("msll.services[{k}].{e}")))?;
        }
        if let Some(im) = &self.impair {
            im.error
                .validate()
                .map_err(|e| ConfigError::Invalid(format!("impair.error.{e}")))?;
            for (field, v) in [("delay_ms", im.delay_ms), ("jitter_ms", im.jitter_ms)] {
                if !DELAY_MS.contains(&v) {
                    return bad(format!(
                        "impair.{field} = {v:?}: must be in 0..={} milliseconds",
                        DELAY_MS.end()
                    ));
                }
            }
            // `check` should refuse what `run` would: the trace must be readable and parse now
            // (session 33 review: a bad line passed `check` and stopped `run` once its socket and
            // TUN device were up). Building the model reads it as `Tunnel::new` will, beside the
            // configuration file.
            if let ErrorSpec::Trace { .. } = &im.error {
                crate::impair::Lossy::new(im, self.rate(), 1, &self.base_dir)
                    .map_err(|e| ConfigError::Invalid(format!("impair.error.{e}")))?;
            }
        }
        self.psk()?;
        Ok(())
    }

    /// A warning if `key_file` is readable by group or others. Given to the caller (review,
    /// session 44): warned from `psk`, it went through a log `mslld check` never installs and
    /// was logged twice by `run` (validation, then the tunnel).
    pub fn key_file_warning(&self) -> Option<String> {
        use std::os::unix::fs::PermissionsExt;
        let p = self.base_dir.join(self.key_file.as_ref()?);
        let m = std::fs::metadata(&p).ok()?;
        (m.permissions().mode() & 0o077 != 0).then(|| {
            format!(
                "key file {} is readable by group or others; chmod 600 it",
                p.display()
            )
        })
    }

    /// A warning if a full frame's datagram exceeds 1500 bytes on the wire (the underlay's
    /// usual path MTU): the kernel then fragments it, and losing either fragment loses the
    /// frame, so the schemes face more loss than the path has (review, session 46).
    pub fn mtu_warning(&self) -> Option<String> {
        let ip_udp = if self.peer.is_ipv4() { 28 } else { 48 };
        let largest =
            usize::from(self.tun.mtu) + msll_proto::wire::HEAD_MAX + crate::wire::OVERHEAD + ip_udp;
        (largest > UNDERLAY_MTU).then(|| {
            format!(
                "tun.mtu = {}: a full frame is a {largest}-byte datagram on the wire, over the \
                 {UNDERLAY_MTU} bytes of a usual path, so it goes out in IP fragments and the \
                 loss of either loses the frame; tun.mtu <= {} avoids it",
                self.tun.mtu,
                self.tun.mtu as usize - (largest - UNDERLAY_MTU)
            )
        })
    }

    /// Every warning about this configuration (`mslld check` prints them, `run` logs them).
    pub fn warnings(&self) -> Vec<String> {
        [self.key_file_warning(), self.mtu_warning()]
            .into_iter()
            .flatten()
            .collect()
    }

    pub fn psk(&self) -> Result<Psk, ConfigError> {
        let (text, field) = match (&self.key, &self.key_file) {
            (Some(k), None) => (k.clone(), "key".to_string()),
            (None, Some(p)) => {
                // Relative to the configuration file, as trace paths are (not to the daemon's
                // working directory, `/` under systemd); `join` keeps an absolute path.
                let p = &self.base_dir.join(p);
                let text = std::fs::read_to_string(p).map_err(|e| ConfigError::Io(p.clone(), e))?;
                (text, format!("key_file {}", p.display()))
            }
            _ => {
                return Err(ConfigError::Invalid(
                    "set exactly one of key, key_file".into(),
                ))
            }
        };
        Psk::from_hex(&text).map_err(|e| ConfigError::Invalid(format!("{field}: {e}")))
    }

    pub fn rate(&self) -> DataRate {
        DataRate::from_bps((self.link.rate_mbps * 1e6).round().max(1.0) as u64)
            .expect("positive rate")
    }

    pub fn link_info(&self) -> LinkInfo {
        LinkInfo {
            rate: self.rate(),
            delay: Duration::from_secs_f64(self.link.delay_ms / 1e3),
            frame_payload: self.link.frame_payload.unwrap_or(self.tun.mtu as usize),
        }
    }

    pub fn service_names(&self) -> Vec<String> {
        self.msll
            .config
            .services
            .iter()
            .enumerate()
            .map(|(i, s)| self.msll.names.get(i).cloned().unwrap_or_else(|| s.label()))
            .collect()
    }

    /// What both ends must agree on, as a 64-bit digest carried by every hello: per service, in
    /// order, the scheme and the parameters that shape its frames and how the peer reads them
    /// ([`WIRE_KEYS`]: window, buffer, block, parity, HDLC mode, adaptive blocks). Frames name
    /// their service by number and each scheme reads its peer's frames by these, so ends that
    /// differ here would exchange frames neither reads right: a peer whose digest differs is
    /// refused and counted (`config_mismatch`), and the link stays down. Timers, retry limits,
    /// delivery order and backlogs are each end's own (an asymmetric link may want other
    /// timers at each end), as are the classifier, rates, queue bounds, link rate and role.
    /// Snoop counts as Default: its frames are Default frames, and a host runs it as Default.
    pub fn link_digest(&self) -> u64 {
        let mut text = String::new();
        for s in &self.msll.config.services {
            let v = serde_json::to_value(s).expect("scheme configurations serialize");
            let kind = v.get("kind").and_then(|k| k.as_str()).unwrap_or("?");
            if kind == "snoop" || kind == "default" {
                text.push_str("default;");
                continue;
            }
            text.push_str(kind);
            for k in WIRE_KEYS {
                if let Some(x) = v.get(k) {
                    text.push_str(&format!(",{k}={x}"));
                }
            }
            text.push(';');
        }
        // FNV-1a, 64 bits: stable across builds and platforms (not a security measure: the
        // hello is authenticated by the key already).
        text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }

    /// Where the control socket goes: `control`, resolved from the configuration file's
    /// directory when relative (review, session 47: it was resolved from the daemon's working
    /// directory, `/` under systemd, unlike `key_file` and traces).
    pub fn control_path(&self) -> Option<PathBuf> {
        self.control.as_ref().map(|c| self.base_dir.join(c))
    }

    /// Service `i`'s `limits.max_wait_ms`, if it has one.
    pub fn max_wait(&self, i: usize) -> Option<Duration> {
        let w = match self.limits.max_wait_ms[..] {
            [] => return None,
            [w] => w,
            ref ws => *ws.get(i)?,
        };
        (w > 0.0).then(|| Duration::from_secs_f64(w / 1e3))
    }

    /// `peer_timeout_s`, or its default before the peer's hello interval is known (the tunnel
    /// then takes the longer of the two: `Tunnel::peer_timeout`).
    pub fn peer_timeout(&self) -> Duration {
        Duration::from_secs_f64(
            self.peer_timeout_s
                .unwrap_or(PEER_TIMEOUT_HELLOS * self.hello_interval_s),
        )
    }

    /// A fresh Endpoint: at start, and whenever the peer restarts (both ends' scheme state must
    /// start from zero together).
    pub fn build_endpoint(&self) -> Endpoint {
        let mut msll = self.msll.config.clone();
        // msll-proto's default is an unbounded scheduler queue (the simulator relies on IP
        // pacing); a daemon facing arbitrary traffic bounds it.
        msll.queue_limit = Some(msll.queue_limit.unwrap_or(DEFAULT_QUEUE_LIMIT));
        msll.build(&self.link_info(), self.role, Some(self.rate()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const SAMPLE: &str = r#"
bind = "127.0.0.1:7000"
peer = "127.0.0.1:7001"
key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
[tun]
address = "198.19.0.1"
[link]
rate_mbps = 20
delay_ms = 10
[msll]
services = [{ kind = "default" }, { kind = "sr", nak_policy = "per-frame" }, { kind = "rlp", delivery = "out-of-sequence", max_naks = 1 }]
names = ["default", "bulk"]
classifier = { kind = "heuristic", rules = [{ protocol = 6, service = 1 }, { protocol = 17, service = 2 }] }
rates = [1, 2, 1]
queue_limit = 256
[impair]
error = { model = "bernoulli", p = 0.05 }
delay_ms = 10
"#;

    #[test]
    fn sample_parses_and_builds() {
        let c = Config::from_toml(SAMPLE);
        assert!(c.is_err(), "names must match the services");
        let c = Config::from_toml(&SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#)).unwrap();
        assert_eq!(c.service_names(), ["default", "bulk", "rt"]);
        assert_eq!(c.rate().bps(), 20_000_000);
        assert_eq!(c.tun.mtu, 1400);
        let ep = c.build_endpoint();
        assert_eq!(ep.service_names(), ["default", "sr-m2", "rlp-oos"]);
        let tcp = crate::bench::ip_packet(100, 0);
        let mut tcp = tcp.clone();
        tcp[9] = 6;
        let p = msll_proto::Packet::from_vec(tcp);
        assert_eq!(ep.classifier().classify(&p), 1, "classifier passes through");
        let no_names = SAMPLE.replace("names = [\"default\", \"bulk\"]\n", "");
        let c = Config::from_toml(&no_names).unwrap();
        assert_eq!(c.service_names(), ["default", "sr-m2", "rlp-oos"]);
    }

    /// A relative `control` path is the configuration file's neighbour; an absolute one stays.
    #[test]
    fn a_relative_control_path_is_taken_from_the_config_directory() {
        let dir = std::env::temp_dir().join(format!("mslld-ctlpath-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#);
        for (given, want) in [
            ("ctl.sock", dir.join("ctl.sock")),
            ("/run/mslld.sock", PathBuf::from("/run/mslld.sock")),
        ] {
            let f = dir.join("a.toml");
            std::fs::write(&f, format!("control = \"{given}\"\n{good}")).unwrap();
            let c = Config::from_file(&f).unwrap();
            assert_eq!(c.control_path(), Some(want));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `limits.max_wait_ms`: none, one for every service, or one per service with 0 for none.
    #[test]
    fn max_wait_is_one_value_or_one_per_service() {
        let good = SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#);
        let with = |waits: &str| {
            Config::from_toml(&good.replace(
                "[impair]",
                &format!("[limits]\nmax_wait_ms = {waits}\n[impair]"),
            ))
            .unwrap()
        };
        let ms = |x: u64| Some(Duration::from_millis(x));
        let c = Config::from_toml(&good).unwrap();
        assert_eq!((0..3).map(|i| c.max_wait(i)).collect::<Vec<_>>(), [None; 3]);
        let c = with("[50]");
        assert_eq!(
            (0..3).map(|i| c.max_wait(i)).collect::<Vec<_>>(),
            [ms(50); 3]
        );
        let c = with("[0, 1000, 20.5]");
        assert_eq!(
            (0..3).map(|i| c.max_wait(i)).collect::<Vec<_>>(),
            [None, ms(1000), Some(Duration::from_micros(20_500))]
        );
        let text = c.to_toml_explicit().unwrap();
        assert!(text.contains("max_wait_ms = ["), "{text}");
        let back = Config::from_toml(&text).unwrap();
        assert_eq!(back.limits.max_wait_ms, [0.0, 1000.0, 20.5]);
    }

    /// The DS classifier of the tunnel reads the DSCP, not the ECN bits, unless the file asks
    /// for a mask: ECT(0) and CE on a DSCP-0 flow stay in service 0.
    #[test]
    fn the_tunnel_classifier_ignores_ecn_bits_by_default() {
        let good = SAMPLE
            .replace(r#""bulk"]"#, r#""bulk", "rt"]"#)
            .replace(
                r#"classifier = { kind = "heuristic", rules = [{ protocol = 6, service = 1 }, { protocol = 17, service = 2 }] }"#,
                "",
            );
        let with_tos = |tos: u8| {
            let mut v = crate::bench::ip_packet(100, 0);
            v[1] = tos;
            msll_proto::Packet::from_vec(v)
        };
        let c = Config::from_toml(&good).unwrap();
        assert_eq!(c.msll.config.classifier.ds_mask, TUNNEL_DS_MASK);
        let ep = c.build_endpoint();
        for tos in [0x00, 0x01, 0x02, 0x03] {
            assert_eq!(ep.classifier().classify(&with_tos(tos)), 0, "TOS {tos:#x}");
        }
        let whole = good.replace(
            "queue_limit = 256",
            "queue_limit = 256\nclassifier = { ds_mask = 255 }",
        );
        let ep = Config::from_toml(&whole).unwrap().build_endpoint();
        assert_eq!(ep.classifier().classify(&with_tos(0x02)), 2, "as asked");
    }

    /// A TUN MTU whose full frames exceed a 1500-byte path warns, naming the largest that fits
    /// (1400, the example's, fits over IPv4 and IPv6).
    #[test]
    fn a_tun_mtu_that_fragments_the_underlay_warns() {
        let good = SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#);
        let with = |mtu: u16, v6: bool| {
            let mut t = good.replace(
                "address = \"198.19.0.1\"",
                &format!("address = \"198.19.0.1\"\nmtu = {mtu}"),
            );
            if v6 {
                t = t
                    .replace("127.0.0.1:7000", "[::1]:7000")
                    .replace("127.0.0.1:7001", "[::1]:7001");
            }
            Config::from_toml(&t).unwrap().mtu_warning()
        };
        assert_eq!(with(1400, false), None);
        assert_eq!(with(1400, true), None);
        let w = with(1500, false).expect("a warning");
        assert!(
            w.contains("tun.mtu = 1500") && w.contains("1576-byte"),
            "{w}"
        );
        let fits: u16 = w
            .rsplit("tun.mtu <= ")
            .next()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(with(fits, false), None);
        assert!(with(fits + 1, false).is_some());
        assert!(
            with(fits, true).is_some(),
            "IPv6 headers are 20 bytes longer"
        );
    }

    /// A Snoop service in the tunnel reads real TCP segments unless the file says otherwise.
    #[test]
    fn tunnel_snoop_reads_real_segments_by_default() {
        let snoop = |extra: &str| {
            let t = SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#).replace(
                r#"{ kind = "sr", nak_policy = "per-frame" }"#,
                &format!(r#"{{ kind = "snoop"{extra} }}"#),
            );
            match &Config::from_toml(&t).unwrap().msll.config.services[1] {
                SchemeConfig::Snoop { segments, .. } => *segments,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(snoop(""), SnoopSegments::Real);
        assert_eq!(snoop(r#", segments = "ns2""#), SnoopSegments::Ns2);
        // Host pairs keep the ns-2 reading (they are refused with `real`).
        assert_eq!(snoop(r#", state = "host-pair""#), SnoopSegments::Ns2);
    }

    /// What `mslld check` prints reads back as the same configuration, the tunnel's own
    /// defaults included (an explicit `ds_mask = 255`, a `segments = "ns2"` Snoop).
    #[test]
    fn the_printed_configuration_reads_back_the_same() {
        let base = SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#);
        for (from, to) in [
            ("queue_limit = 256", "queue_limit = 256"),
            (
                r#"classifier = { kind = "heuristic","#,
                r#"classifier = { ds_mask = 255, kind = "heuristic","#,
            ),
            (
                r#"{ kind = "sr", nak_policy = "per-frame" }"#,
                r#"{ kind = "snoop", segments = "ns2" }"#,
            ),
            (
                r#"{ kind = "sr", nak_policy = "per-frame" }"#,
                r#"{ kind = "snoop" }"#,
            ),
        ] {
            let text = base.replace(from, to);
            let a = Config::from_toml(&text).unwrap();
            let printed = a.to_toml_explicit().unwrap();
            let b = Config::from_toml(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
            assert_eq!(a.msll.config, b.msll.config, "{to}\n{printed}");
        }
    }

    /// A DS table written for the whole TOS byte keeps the whole byte.
    #[test]
    fn a_ds_table_with_ecn_bits_keeps_the_whole_byte() {
        let t = SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#).replace(
            r#"classifier = { kind = "heuristic", rules = [{ protocol = 6, service = 1 }, { protocol = 17, service = 2 }] }"#,
            r#"classifier = { ds_table = [{ ds = 1, service = 1 }], ds_direct = false }"#,
        );
        let c = Config::from_toml(&t).unwrap();
        assert_eq!(c.msll.config.classifier.ds_mask, 0xff);
        let t = t.replace("ds = 1,", "ds = 184,");
        assert_eq!(
            Config::from_toml(&t)
                .unwrap()
                .msll
                .config
                .classifier
                .ds_mask,
            TUNNEL_DS_MASK
        );
    }

    #[test]
    fn mss_clamp_values() {
        let good = SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#);
        let with = |v: &str| {
            Config::from_toml(&good.replace(
                "address = \"198.19.0.1\"",
                &format!("address = \"198.19.0.1\"\nmss_clamp = {v}"),
            ))
        };
        assert_eq!(
            Config::from_toml(&good).unwrap().tun.mss_clamp,
            MssClamp::Auto
        );
        assert_eq!(MssClamp::Auto.limits(1400), Some((1360, 1340)));
        // A fixed clamp is lowered for IPv6 when it would not fit its 60 bytes of headers.
        assert_eq!(MssClamp::Fixed(1360).limits(1400), Some((1360, 1340)));
        assert_eq!(MssClamp::Fixed(1200).limits(1400), Some((1200, 1200)));
        assert_eq!(with("\"off\"").unwrap().tun.mss_clamp, MssClamp::Off);
        assert_eq!(MssClamp::Off.limits(1400), None);
        assert_eq!(with("1200").unwrap().tun.mss_clamp, MssClamp::Fixed(1200));
        for bad in ["\"sometimes\"", "100", "-1", "1.5"] {
            // What the daemon prints: the error and its cause.
            let e = format!("{:#}", anyhow::Error::from(with(bad).unwrap_err()));
            assert!(e.contains("mss_clamp"), "{bad}: {e}");
        }
    }

    #[test]
    fn rejects_bad_values() {
        let cases = [
            ("rate_mbps = 20", "rate_mbps = 0"),
            ("protocol = 6, service = 1", "protocol = 6, service = 7"),
            ("rates = [1, 2, 1]", "rates = [1, 2]"),
            ("queue_limit = 256", "queue_limit = 256\nbogus = 3"),
            ("p = 0.05", "p = 1.5"),
            ("1c1d1e1f\"", "1c1d1e\""),
            ("delay_ms = 10\n[msll]", "delay_ms = 10\nbogus = 1\n[msll]"),
            (
                "address = \"198.19.0.1\"",
                "address = \"198.19.0.1\"\nmtu = 65500",
            ),
            (
                "address = \"198.19.0.1\"",
                "address = \"198.19.0.1\"\nmtu = 500",
            ),
            (
                "delay_ms = 10\n[msll]",
                "delay_ms = 10\nframe_payload = 0\n[msll]",
            ),
            ("bind =", "hello_interval_s = 1e-9\nbind ="),
            ("bind =", "hello_interval_s = 1e9\nbind ="),
            ("127.0.0.1:7000", "127.0.0.1:0"),
            // Under two hello intervals (1 s by default), above a day, not a number.
            ("bind =", "peer_timeout_s = 1.5\nbind ="),
            ("bind =", "peer_timeout_s = 1e6\nbind ="),
            ("bind =", "peer_timeout_s = nan\nbind ="),
            // 64 bytes but not 64 hex digits: a multi-byte character, and a sign.
            (
                "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                &format!("a{}a", "é".repeat(31)),
            ),
            (
                "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                &"+f".repeat(32),
            ),
        ];
        let good = SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#);
        assert!(Config::from_toml(&good).is_ok());
        for (from, to) in cases {
            assert!(good.contains(from), "{from}");
            let s = good.replacen(from, to, 1);
            assert!(Config::from_toml(&s).is_err(), "accepted {to}");
        }
        // The edge values are fine.
        let edge = good
            .replacen(
                "bind =",
                "hello_interval_s = 0.01\npeer_timeout_s = 0.02\nbind =",
                1,
            )
            .replacen(
                "address = \"198.19.0.1\"",
                &format!("address = \"198.19.0.1\"\nmtu = {MAX_MTU}"),
                1,
            );
        assert!(Config::from_toml(&edge).is_ok());
    }

    /// Paths in the configuration are looked up beside it, and `check` reads an impairment trace
    /// as `run` will: a bad line is refused up front, naming the key (session 33 review).
    #[test]
    fn key_and_trace_files_are_read_beside_the_configuration() {
        let dir = std::env::temp_dir().join(format!("mslld-paths-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
        std::fs::write(dir.join("k.key"), key).unwrap();
        std::fs::write(dir.join("good.txt"), "0 1 0 0\n").unwrap();
        std::fs::write(dir.join("bad.txt"), "0 1\nabc\n").unwrap();
        let text = |trace: &str| {
            SAMPLE
                .replace(r#""bulk"]"#, r#""bulk", "rt"]"#)
                .replace(&format!("key = \"{key}\""), "key_file = \"k.key\"")
                .replace(
                    "error = { model = \"bernoulli\", p = 0.05 }",
                    &format!("error = {{ model = \"trace\", path = \"{trace}\" }}"),
                )
        };
        let path = dir.join("mslld.toml");
        std::fs::write(&path, text("good.txt")).unwrap();
        let c = Config::from_file(&path).unwrap();
        assert_eq!(c.psk().unwrap().0, Psk::from_hex(key).unwrap().0);
        std::fs::write(&path, text("missing.txt")).unwrap();
        let missing = format!(
            "{:#}",
            anyhow::Error::from(Config::from_file(&path).unwrap_err())
        );
        assert!(
            missing.contains("impair.error.path") && missing.contains("cannot read"),
            "{missing}"
        );
        std::fs::write(&path, text("bad.txt")).unwrap();
        let e = format!(
            "{:#}",
            anyhow::Error::from(Config::from_file(&path).unwrap_err())
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(e.contains("impair.error.") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn errors_name_the_file_field_and_value() {
        let dir = std::env::temp_dir().join(format!("mslld-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = SAMPLE.replace(r#""bulk"]"#, r#""bulk", "rt"]"#);
        for (from, to, want) in [
            (
                "rate_mbps = 20",
                "rate_mbps = 0",
                "link.rate_mbps = 0.0: must be a rate in 0.001..=100000 Mbit/s",
            ),
            ("rate_mbps = 20", "rate_mbps = \"fast\"", "rate_mbps"),
            (
                "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "00010203",
                "key: key must be 64 hex digits, got 8 bytes",
            ),
            (
                "delay_ms = 10\n[msll]",
                "delay_ms = -1\n[msll]",
                "link.delay_ms = -1.0: must be in 0..=3600000 milliseconds",
            ),
            // Found by the input audit of session 23: each was accepted by `check` and then
            // failed (or misbehaved) only when the daemon ran.
            (
                "peer = \"127.0.0.1:7001\"",
                "peer = \"127.0.0.1:0\"",
                "peer = \"127.0.0.1:0\" (bind = \"127.0.0.1:7000\"): port 0",
            ),
            (
                "peer = \"127.0.0.1:7001\"",
                "peer = \"[fd00::2]:7000\"",
                "address family differs",
            ),
            (
                "peer = \"127.0.0.1:7001\"",
                "peer = \"255.255.255.255:7000\"",
                "broadcast",
            ),
            (
                "peer = \"127.0.0.1:7001\"",
                "peer = \"127.0.0.1:7000\"",
                "the same as bind",
            ),
            ("[tun]", "[tun]\nname = \"a/b\"", "tun.name = \"a/b\""),
            ("[tun]", "[tun]\nname = \"\"", "tun.name = \"\""),
            (
                "[tun]",
                "[tun]\nmss_clamp = 65495",
                "tun.mss_clamp = 65495: larger than what fits tun.mtu",
            ),
            (
                "rate_mbps = 20",
                "rate_mbps = 1e-12",
                "link.rate_mbps = 1e-12",
            ),
            (
                "delay_ms = 10\n[msll]",
                "delay_ms = 1e300\n[msll]",
                "link.delay_ms = 1e300",
            ),
            (
                "[impair]",
                "[limits]\ningress_packets = 0\n[impair]",
                "limits.ingress_packets = 0: must be at least 1",
            ),
            // Found by the review of session 33.
            (
                "[impair]",
                "[limits]\nsocket_buffer = 4294967296\n[impair]",
                "limits.socket_buffer = 4294967296: must be at most 1073741823 bytes",
            ),
            (
                "[impair]",
                "[limits]\nmax_wait_ms = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]\n[impair]",
                "limits.max_wait_ms = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]: give one value, or one per service",
            ),
            (
                "[impair]",
                "[limits]\nmax_wait_ms = [0.5]\n[impair]",
                "limits.max_wait_ms = 0.5: must be 0 (no limit) or in 1..=3600000 ms",
            ),
            (
                "[impair]",
                "[limits]\nmax_wait_ms = [nan]\n[impair]",
                "limits.max_wait_ms = NaN",
            ),
            (
                "address = \"198.19.0.1\"",
                "address = \"198.19.0.1\"\naddress6 = \"fd00::1\"\nmtu = 576",
                "tun.mtu = 576: tun.address6 needs at least 1280",
            ),
            ("bind =", "control = \"\"\nbind =", "control = \"\""),
            (
                "nak_policy = \"per-frame\"",
                "nak_policy = \"per-frame\", rto_ms = 0.001",
                "msll.services[1].rto_ms = 0.001: shorter than one frame",
            ),
            // `[msll]` errors point at the offending line, not the section's header (input
            // audit, session 23).
            (
                "rates = [1, 2, 1]",
                "rates = [1, \"x\", 1]",
                "| rates = [1, \"x\", 1]",
            ),
            (
                "queue_limit = 256",
                "queue_limit = 256\nbogus = 3",
                "| bogus = 3\n",
            ),
            (
                "queue_limit = 256",
                "queue_limit = 256\nbogus = 3",
                "or `names`",
            ),
            (
                "names = [\"default\", \"bulk\", \"rt\"]",
                "names = [\"default\", 2, \"rt\"]",
                "| names = [\"default\", 2, \"rt\"]",
            ),
            (
                "nak_policy = \"per-frame\"",
                "nak_policy = \"per-fram\"",
                "| services = [",
            ),
        ] {
            let path = dir.join("bad.toml");
            std::fs::write(&path, good.replacen(from, to, 1)).unwrap();
            let e = format!(
                "{:#}",
                anyhow::Error::from(Config::from_file(&path).unwrap_err())
            );
            assert!(e.contains(&path.display().to_string()), "{e}");
            assert!(e.contains(want), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
