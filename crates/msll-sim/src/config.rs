//! One fully resolved simulation run: what `msll-lab` builds from a scenario point, and what is
//! recorded next to every result. Every field has a name and a unit; nothing is implicit.

use msll_proto::SchemeConfig;
use serde::{Deserialize, Serialize};

use crate::presets::{LinkSpec, Topology};
use crate::tcp::TcpConfig;

/// Whether traffic streams repeat in every replication (seed 004 ch. 3: "always seeded with the
/// same number for all repetitions") or differ per replication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TrafficStreams {
    #[default]
    Fixed,
    PerReplication,
}

/// An application instance. Sources sit on the first node (wired host, or wireless host A) and
/// sinks on the last (wireless host, or wireless host B), as in seed 004 §3.3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum AppSpec {
    /// Talkspurt conferencing over UDP (seed 004 ch. 5).
    Conference {
        peak_rate_bps: u64,
        packet_size: usize,
        #[serde(default = "talk")]
        talk_mean_s: f64,
        #[serde(default = "silence")]
        silence_mean_s: f64,
        #[serde(default)]
        start_s: f64,
        /// TOS/DS byte written into every packet.
        #[serde(default)]
        tos: u8,
    },
    /// Bulk transfer of `bytes` over one-way TCP (seed 004 §4.1.1, Table 4.1). The run ends when
    /// every file transfer has been acknowledged (or at `duration_s`, a safety cap).
    Ftp {
        bytes: u64,
        tcp: TcpConfig,
        #[serde(default)]
        start_s: f64,
    },
    /// WWW browsing (seed 004 §4.1.2; seeds 000/001): Mah's empirical HTTP model over
    /// non-persistent TCP connections, ns-2 HTTP module semantics (`app::www`). The client is
    /// on the last node, the server on the first. Transactions run until `duration_s`.
    Www {
        tcp: TcpConfig,
        /// ns-2 `maxConn_`: parallel connections for embedded objects (4, seed 004 L542).
        #[serde(default = "four")]
        max_connections: u32,
        /// Think time between transactions (default 0 s, seed 004 L721).
        #[serde(default)]
        think_time: crate::app::www::ThinkTime,
        /// How each transfer gets its TCP connection (`app::www::Connections`).
        #[serde(default)]
        connections: crate::app::www::Connections,
        #[serde(default)]
        start_s: f64,
    },
    /// Real-time video over TCP (seed 003 sec. 4, `app::video`): `flows` MPEG-4-like flows,
    /// each a TES frame source writing into an unbounded TCP send buffer, from the first node
    /// to the last. Sources run until `duration_s`; metrics count `[warmup_s, duration_s)`.
    Video {
        tcp: TcpConfig,
        flows: u32,
        /// Mean source rate of each flow, bit/s.
        rate_bps: f64,
        #[serde(default = "fps25")]
        fps: f64,
        #[serde(default = "gop12")]
        gop: String,
        /// Relative mean sizes of I, P and B frames.
        #[serde(default = "ipb")]
        size_ratio: [f64; 3],
        /// TES innovation half-widths of the I, P and B processes.
        #[serde(default = "tes_w")]
        tes_width: [f64; 3],
        #[serde(default = "half")]
        tes_xi: f64,
        #[serde(default)]
        start_s: f64,
        /// Flow k starts at `start_s + U(0, start_spread_s)` (seed003.md sec. 8 item 9).
        #[serde(default = "one_s")]
        start_spread_s: f64,
        /// Start of the measurement window (seed 003: results after 2 s).
        #[serde(default = "two_s")]
        warmup_s: f64,
        /// RTPI's inter-arrival threshold (seed 003: 75 ms).
        #[serde(default = "ms75")]
        threshold_s: f64,
        /// How frames become packets (`crate::app::video::Packetise`).
        #[serde(default)]
        packetise: crate::app::video::Packetise,
    },
}

fn fps25() -> f64 {
    25.0
}
fn gop12() -> String {
    "IBBPBBPBBPBB".into()
}
fn ipb() -> [f64; 3] {
    [5.0, 2.0, 1.0]
}
fn tes_w() -> [f64; 3] {
    [0.1; 3]
}
fn half() -> f64 {
    0.5
}
fn one_s() -> f64 {
    1.0
}
fn two_s() -> f64 {
    2.0
}
fn ms75() -> f64 {
    0.075
}

fn four() -> u32 {
    4
}

impl AppSpec {
    /// Apps whose completion ends the run (seed 004 ch. 4 and 7: "the run ends when the file
    /// transfer completes").
    pub fn ends_run(&self) -> bool {
        matches!(self, AppSpec::Ftp { .. })
    }
}

fn talk() -> f64 {
    1.0
}
fn silence() -> f64 {
    1.35
}

/// Where IP packets wait for a multi-service interface's classifier (which paces IP at the
/// nominal link rate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum IpQueues {
    /// One DropTail queue for all traffic (seed 004 sec. 6.2.1, requirement C5: IP queues at the
    /// IP layer, in front of the classifier).
    #[default]
    Shared,
    /// One DropTail queue per MSLL service (`queue_limit` each), served by SCFQ at the services'
    /// rates: an IP-level class scheduler mirroring the link allocation, as the seed expects of
    /// IP-level scheduling (sec. 8.2.1, 8.2.3). Not a seed configuration; an experiment knob.
    PerService,
}

fn is_shared(q: &IpQueues) -> bool {
    *q == IpQueues::Shared
}

/// Each node's IP as a FIFO server with a deterministic service time (seed 002 sec. 1.6: the
/// fixed host serves 5000 packets/s, the base station and the mobile host 1000). Every packet
/// handed to a node's IP, from its applications or off a link, waits its turn and then takes
/// `1 / rate` before it is routed, delivered, fragmented or reassembled; a fragment counts as a
/// packet, and the fragments IP makes of a datagram are not served again (seed002.md sec. 1.6,
/// AMBIGUOUS: deterministic, per packet, no router server beyond the Internet delay). The queue
/// is unbounded: the thesis gives no limit. A rate of 0 leaves that node's IP instantaneous.
/// In two-link topologies both base stations take `base_station_pps` and both wireless hosts
/// `wireless_host_pps`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IpService {
    /// The wired (fixed) host's rate, packets per second (0: instantaneous).
    #[serde(default)]
    pub wired_host_pps: f64,
    /// Each base station's rate, packets per second (0: instantaneous).
    #[serde(default)]
    pub base_station_pps: f64,
    /// Each wireless (mobile) host's rate, packets per second (0: instantaneous).
    #[serde(default)]
    pub wireless_host_pps: f64,
}

impl IpService {
    /// The thesis's rates (seed 002 sec. 1.6).
    pub const WONG1998: IpService = IpService {
        wired_host_pps: 5000.0,
        base_station_pps: 1000.0,
        wireless_host_pps: 1000.0,
    };

    /// What `invalid` accepts besides 0: service times from 1 ns to 1000 s, so that a rate
    /// never rounds to an instantaneous (0 ns) or endless server.
    pub const RANGE: std::ops::RangeInclusive<f64> = 1e-3..=1e9;

    /// The first field that is neither 0 nor in `RANGE`: (field, value).
    pub fn invalid(&self) -> Option<(&'static str, f64)> {
        [
            ("wired_host_pps", self.wired_host_pps),
            ("base_station_pps", self.base_station_pps),
            ("wireless_host_pps", self.wireless_host_pps),
        ]
        .into_iter()
        .find(|&(_, v)| !(v == 0.0 || Self::RANGE.contains(&v)))
    }
}

/// A single run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    pub topology: Topology,
    pub wired: LinkSpec,
    pub wireless: LinkSpec,
    pub scheme: SchemeConfig,
    /// DropTail limit of every interface queue, in packets (ns-2's `limit_`, default 50): at
    /// most `queue_limit - 1` wait behind the packet on the link, as in ns-2; at least 2.
    pub queue_limit: usize,
    /// Classifier paces IP at the nominal wireless rate (seed 004 ch. 6/7).
    pub pacing: bool,
    pub apps: Vec<AppSpec>,
    /// Sources stop generating at this time (seconds); with a file transfer, a safety cap.
    pub duration_s: f64,
    /// Extra simulated time after `duration_s` for packets in flight to arrive (AMB-10: drain).
    pub drain_s: f64,
    pub seed: u64,
    pub replication: u32,
    pub traffic_streams: TrafficStreams,
    /// A multi-service link layer on every wireless interface (seed 004 ch. 6/7: services,
    /// classifier, SCFQ rates, timer scaling); `None` runs the single `scheme` service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msll: Option<msll_proto::MsllConfig>,
    /// IP queueing in front of multi-service interfaces (ignored without `msll`).
    #[serde(default, skip_serializing_if = "is_shared")]
    pub ip_queues: IpQueues,
    /// Per-node IP service times (seed 002 sec. 1.6); `None`: IP takes no time, as in seeds
    /// 000, 001, 003 and 004.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_service: Option<IpService>,
    /// How long a host keeps the fragments of an incomplete IP datagram, seconds (seed002.md
    /// sec. 1.6, AMBIGUOUS: 15 s after RFC 791 or 30 s after BSD; default 30); 0.001..=1e6.
    #[serde(
        default = "reassembly_default",
        skip_serializing_if = "is_reassembly_default"
    )]
    pub reassembly_timeout_s: f64,
    /// Conferencing loss in a run that ends without a drain (when its file transfer completes,
    /// or at `duration_s` with one still running) or with a drain shorter than this: packets
    /// sent in the run's last this many seconds are left out of `conf.sent` and
    /// `conf.received`, since they may still be on their way (seed004-ch5.md AMB-10: "exclude
    /// the last ~5 s of sends, or drain"; default 5). A run that drains at least this long
    /// counts every packet. 0..=1e6.
    #[serde(
        default = "conf_end_guard_default",
        skip_serializing_if = "is_conf_end_guard_default"
    )]
    pub conf_end_guard_s: f64,
}

/// AMB-10's recommended guard, seconds.
pub const CONF_END_GUARD_S: f64 = 5.0;

/// The smallest `queue_limit`: ns-2's DropTail holds `limit - 1` waiting packets behind the one
/// on the link, so 1 drops every packet. Checked by the simulator and the scenario parser alike.
pub const MIN_QUEUE_LIMIT: usize = 2;

/// The guards a configuration may set, seconds (`SimConfig::conf_end_guard_s`): the simulator
/// and the scenario parser check against this one range.
pub const CONF_END_GUARD_RANGE_S: std::ops::RangeInclusive<f64> = 0.0..=1e6;

/// `SimConfig::duration_s` and `drain_s`, seconds, each: their sum stays far inside the u64
/// nanoseconds of an `Instant` (1.8e10 s). The scenario parser allows less (3.2e7 s each).
pub const RUN_TIME_RANGE_S: std::ops::RangeInclusive<f64> = 0.0..=1e9;

fn conf_end_guard_default() -> f64 {
    CONF_END_GUARD_S
}

fn is_conf_end_guard_default(v: &f64) -> bool {
    *v == CONF_END_GUARD_S
}

fn reassembly_default() -> f64 {
    crate::frag::REASSEMBLY_TIMEOUT.as_secs_f64()
}

// Left out of a serialised configuration at its default, so the cache keys of every run
// written before the parameter existed stay as they were.
fn is_reassembly_default(v: &f64) -> bool {
    *v == reassembly_default()
}

impl SimConfig {
    /// Without pacing the wireless endpoint takes every packet at once, so its scheduler holds
    /// the interface's DropTail bound (`queue_limit` - 1 waiting, as ns-2's) unless
    /// `msll.queue_limit` sets one (review, session 47): `Simulation::new` builds it so and
    /// `ip.queue_drops` counts its drops.
    pub fn endpoint_holds_droptail(&self) -> bool {
        !self.pacing && self.msll.as_ref().is_none_or(|m| m.queue_limit.is_none())
    }

    /// The files a run reads besides its configuration (error-model traces), resolved against
    /// `base_dir` as `Simulation::new` resolves them. A result cache keys on their contents: two
    /// runs with equal configurations, seeds and inputs give identical results.
    pub fn input_files(&self, base_dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        [&self.wired.error, &self.wireless.error]
            .into_iter()
            .filter_map(|e| match e {
                // `join` keeps an absolute path as it is.
                crate::error_model::ErrorSpec::Trace { path, .. } => Some(base_dir.join(path)),
                _ => None,
            })
            .collect()
    }

    /// Whether every replication of this run gives the same result, so one run stands for all.
    ///
    /// The replication index reaches a run only through `Streams::per_replication`. The error
    /// processes of both link types draw from such streams, and so do the traffic sources with
    /// `traffic_streams = "per-replication"`; the schemes draw nothing (they are deterministic
    /// state machines). So a run on error-free links (level 0) with fixed traffic streams never
    /// reads a per-replication number. A trace error model draws nothing either, but it is left
    /// out: the rule stays obviously true. `msll run` and `msll reproduce` run such a point once.
    pub fn replication_invariant(&self) -> bool {
        use crate::error_model::ErrorSpec;
        matches!(self.wired.error, ErrorSpec::None {})
            && matches!(self.wireless.error, ErrorSpec::None {})
            // A MAC access delay draws from a per-replication stream too.
            && self.wireless.mac_access.is_none()
            && self.wired.mac_access.is_none()
            // So does a random link delay.
            && self.wireless.extra_delay.is_none()
            && self.wired.extra_delay.is_none()
            && self.traffic_streams == TrafficStreams::Fixed
    }

    /// A run over a wireless link preset at error level `level` (0 = error-free) in `topology`,
    /// with the seeds' defaults (Default scheme, DropTail 50, pacing, fixed traffic streams, seed 1)
    /// and no applications yet. `None` for an unknown preset or level.
    pub fn for_link(link: &str, topology: Topology, level: u8) -> Option<SimConfig> {
        let p = crate::presets::wireless(link)?;
        Some(SimConfig {
            topology,
            wired: crate::presets::wired(topology.wired_name(), p.frame_payload)?,
            wireless: p.link(level)?,
            scheme: SchemeConfig::Default,
            queue_limit: 50,
            pacing: true,
            apps: Vec::new(),
            duration_s: p.run_s,
            drain_s: 30.0,
            seed: 1,
            replication: 0,
            traffic_streams: TrafficStreams::Fixed,
            msll: None,
            ip_queues: IpQueues::default(),
            ip_service: None,
            reassembly_timeout_s: reassembly_default(),
            conf_end_guard_s: CONF_END_GUARD_S,
        })
    }
}
