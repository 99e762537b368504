//! Scenario files: TOML data describing an experiment (a figure of the seeds) as a sweep of
//! points, each expanded into fully resolved `SimConfig`s.
//!
//! ```toml
//! [scenario]
//! name = "fig5_4"
//! title = "Seed 004 Fig. 5.4: loss over one Cellular link (LAN1)"
//! metrics = ["conf.loss"]
//! replications = 30
//! seed = 1
//!
//! [link]
//! preset = "cellular"          # cellular | pcs | wlan | hscsd | wlan11b
//!
//! [topology]
//! name = "LAN1"                # LAN1 | WAN1 | LAN2 | WAN2
//!
//! [[app]]
//! kind = "conference"          # defaults from the link preset (Table 5.1)
//!
//! [sweep]
//! level = [1, 2, 3, 4]         # error levels (0 = error-free)
//! scheme = ["default"]
//! ```
//!
//! Unknown keys, impossible values and unknown presets are errors that name the file, the key and
//! the value.

use std::path::{Path, PathBuf};

use msll_proto::classifier::MeasureConfig;
use msll_proto::{ClassifierConfig, Discipline, MsllConfig, SchemeConfig, TimerScaling};
use msll_sim::app::www::{Connections, ThinkTime};
use msll_sim::error_model::ErrorSpec;
use msll_sim::presets::{self, LinkSpec, Topology};
use msll_sim::tcp::TcpConfig;
use msll_sim::{AppSpec, IpQueues, SimConfig, TrafficStreams};
use serde::{Deserialize, Serialize};

/// A scenario problem: always names the file, and the key and value where there is one.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {msg}")]
pub struct ScenarioError {
    pub file: String,
    pub msg: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub scenario: Meta,
    pub link: LinkSection,
    #[serde(default)]
    pub topology: TopologySection,
    #[serde(default)]
    pub app: Vec<AppSection>,
    #[serde(default)]
    pub sweep: Sweep,
    #[serde(default)]
    pub sim: SimSection,
    /// A multi-service link layer on the wireless interfaces (seed 004 ch. 6-8).
    #[serde(default)]
    pub msll: Option<MsllSection>,
    /// The figures of the seeds these runs reproduce (x axis: error level, one curve per scheme).
    #[serde(default)]
    pub figure: Vec<FigureSpec>,
}

/// `[msll]`: services, classifier, scheduler, rates, timer scaling (seed 004 ch. 6-8).
///
/// ```toml
/// [msll]
/// services = ["sr-m2", "rlp-oos"]  # service number = position = DS value (sec. 7.1)
/// classifier = "diffserv"          # "diffserv" | "heuristic" | a full table (msll_proto::ClassifierConfig)
/// scheduler = "scfq"               # "scfq" | "fifo"
/// rates = [1, 2]                   # relative SCFQ rates (Table 7.1); default equal
/// timer_scaling = "services"       # "services" (x n) | "inverse-share" | "none" | { fixed = 2.0 }
/// queue_limit = 50                 # frames per service queue (shared with fifo); default unbounded
/// ```
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MsllSection {
    /// The default for the `sweep.services` axis.
    #[serde(default)]
    pub services: Vec<SchemeRef>,
    pub classifier: Option<ClassifierRef>,
    /// The default for the `sweep.scheduler` axis.
    pub scheduler: Option<Discipline>,
    #[serde(default)]
    pub rates: Vec<f64>,
    pub timer_scaling: Option<TimerScaling>,
    pub queue_limit: Option<i64>,
    pub measure: Option<MeasureConfig>,
}

/// A classifier given by name or as a full table.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ClassifierRef {
    Name(String),
    Config(ClassifierConfig),
}

// By hand rather than `untagged`: serde's untagged error ("did not match any variant") would hide
// which field of the table is wrong.
impl<'de> Deserialize<'de> for ClassifierRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ClassifierRef;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a classifier name (\"heuristic\") or a table ({ kind = \"diffserv\", ... })",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ClassifierRef, E> {
                Ok(ClassifierRef::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<ClassifierRef, A::Error> {
                ClassifierConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ClassifierRef::Config)
            }
        }
        d.deserialize_any(V)
    }
}

/// First UDP port of the simulator's conferencing apps (app i uses 5000 + i), matched by the
/// "heuristic" classifier's real-time rule (the seed names no ports, seed004-ch6-9.md A10).
const CONF_PORTS: [u16; 2] = [5000, 5099];

fn resolve_scheme(field: &str, s: &SchemeRef) -> Result<SchemeConfig, String> {
    match s {
        SchemeRef::Name(n) => SchemeConfig::from_name(n).ok_or_else(|| {
            format!(
                "{field} = \"{n}\": unknown scheme (known: {})",
                SchemeConfig::NAMES.join(", ")
            )
        }),
        SchemeRef::Config(c) => c
            .validate()
            .map(|()| c.clone())
            .map_err(|e| format!("{field}.{e}")),
    }
}

/// The multi-service variants of a scenario: one per (services, scheduler) on the sweep axes.
fn msll_variants(raw: &ScenarioFile) -> Result<Vec<MsllConfig>, String> {
    let sec = match &raw.msll {
        Some(s) => s,
        None if raw.sweep.services.is_empty() && raw.sweep.scheduler.is_empty() => {
            return Ok(Vec::new())
        }
        None => return Err("sweep.services / sweep.scheduler need an [msll] table".into()),
    };
    if !raw.sweep.scheme.is_empty() {
        return Err(
            "sweep.scheme and [msll] exclude each other: sweep msll services with sweep.services"
                .into(),
        );
    }
    let lists: Vec<&Vec<SchemeRef>> = if raw.sweep.services.is_empty() {
        vec![&sec.services]
    } else {
        raw.sweep.services.iter().collect()
    };
    let scheds: Vec<Discipline> = if raw.sweep.scheduler.is_empty() {
        vec![sec.scheduler.unwrap_or_default()]
    } else {
        raw.sweep.scheduler.clone()
    };
    let classifier = match &sec.classifier {
        None => ClassifierConfig::default(),
        Some(ClassifierRef::Name(n)) if n == "diffserv" => ClassifierConfig::default(),
        // seed 004 sec. 8.1 R-H1/R-H2 for the ch. 7 layout: TCP -> service 0, conferencing UDP
        // ports -> service 1, anything else by DS value, else service 0.
        Some(ClassifierRef::Name(n)) if n == "heuristic" => {
            ClassifierConfig::heuristic(0, 1, CONF_PORTS)
        }
        Some(ClassifierRef::Name(n)) => {
            return Err(format!(
                "msll.classifier = \"{n}\": give \"diffserv\", \"heuristic\" or a table"
            ))
        }
        Some(ClassifierRef::Config(c)) => c.clone(),
    };
    if let Some(q) = sec.queue_limit {
        if q < 1 {
            return Err(format!("msll.queue_limit = {q}: must be at least 1 frame"));
        }
    }
    let mut out = Vec::new();
    for (j, list) in lists.into_iter().enumerate() {
        // The path the file has (review, session 42: a sweep's entries were named
        // "msll.services", a key the file may not have).
        let table = if raw.sweep.services.is_empty() {
            "msll.services".to_string()
        } else {
            format!("sweep.services[{j}]")
        };
        let services = list
            .iter()
            .enumerate()
            .map(|(k, s)| resolve_scheme(&format!("{table}[{k}]"), s))
            .collect::<Result<Vec<_>, _>>()?;
        for &scheduler in &scheds {
            let m = MsllConfig {
                services: services.clone(),
                classifier: classifier.clone(),
                scheduler,
                rates: sec.rates.clone(),
                measure: sec.measure,
                queue_limit: sec.queue_limit.map(|q| q as usize),
                timer_scaling: sec.timer_scaling.unwrap_or_default(),
            };
            // MsllConfig names fields relative to its table: prefix them as the file has them.
            m.validate().map_err(|e| match e.strip_prefix("services") {
                Some(rest) if !raw.sweep.services.is_empty() => {
                    format!("{table}{rest} (services {})", m.label())
                }
                _ => format!("msll.{e} (services {})", m.label()),
            })?;
            out.push(m);
        }
    }
    Ok(out)
}

/// What a trace figure draws against time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// The sender's congestion window in bytes, as it uses it: min(cwnd, receiver window) x
    /// segment size (ns-2's `cwnd_` grows past the window; seed 002 Figs 4.2, 4.5).
    Cwnd,
    /// The receiver's highest in-order packet number (seed 002 Figs 4.1, 4.6).
    Received,
}

/// One published figure drawn from a scenario's results.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// Stable identifier, e.g. "seed004-fig5.4" (used by `reproduce --only`).
    pub id: String,
    #[serde(default)]
    pub title: String,
    /// The metric on the y axis (a key of the run results, e.g. "conf.loss"); not given for a
    /// trace figure.
    #[serde(default)]
    pub metric: String,
    /// A trace figure instead of a sweep (seed 002 Figs 4.1-4.6, experiment E1): what the
    /// first FTP app of each of `points` did over time in its first replication, run again with
    /// `TcpConfig::trace` on (the run is the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceKind>,
    /// Trace figures: the points drawn, one curve each (a label or its `/`-separated end, as
    /// claims name points).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<String>,
    /// Trace figures: the time window drawn, seconds (default: the whole run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<[f64; 2]>,
    #[serde(default)]
    pub y_label: String,
    /// Multiply values by this for display (e.g. 100 for percent, 0.001 for kbit/s).
    #[serde(default = "unit_scale")]
    pub scale: f64,
    #[serde(default)]
    pub log_y: bool,
    /// What the error bars (and the report table's "±") show: `sd`, one standard deviation
    /// across replications, as in the seeds' figures (default), or `ci95`, the half-width of the
    /// mean's 95 % confidence interval (`stats.rs`).
    #[serde(default, skip_serializing_if = "crate::output::Interval::is_sd")]
    pub error_bars: crate::output::Interval,
}

fn unit_scale() -> f64 {
    1.0
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub name: String,
    #[serde(default)]
    pub title: String,
    /// Where the experiment comes from ("seed 004 Fig. 5.4").
    #[serde(default)]
    pub source: String,
    /// Primary metrics shown in tables and plots.
    #[serde(default)]
    pub metrics: Vec<String>,
    #[serde(default = "thirty")]
    pub replications: u32,
    #[serde(default = "one")]
    pub seed: u64,
    /// Source stop time; default: the link preset's run length (2000 s, WLAN 500 s).
    pub duration_s: Option<f64>,
    #[serde(default = "drain")]
    pub drain_s: f64,
}

fn thirty() -> u32 {
    30
}
fn one() -> u64 {
    1
}
fn drain() -> f64 {
    30.0
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct LinkSection {
    /// Wireless link preset (the default for the `link` sweep axis).
    pub preset: Option<String>,
    pub rate_bps: Option<i64>,
    pub delay_s: Option<f64>,
    pub frame_payload: Option<i64>,
    /// Replaces the preset's error levels with one explicit model.
    pub error: Option<ErrorSpec>,
    /// Replaces the preset's error levels 1..=4 with levels 1..=n of these models (n <= 8), e.g.
    /// seed 003's packet error rates 1-5 %. Level 0 stays error-free.
    pub levels: Option<Vec<ErrorSpec>>,
    /// Mean exponential medium-access delay before every wireless frame, seconds (seed 002's
    /// MAC, A1; default none).
    pub mac_delay_s: Option<f64>,
    /// Who waits for it: "host" (the wireless hosts, default, A2) or "both".
    pub mac_sides: Option<presets::MacSides>,
}

/// Most error levels `link.levels` may define.
pub const MAX_LEVELS: usize = 8;

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TopologySection {
    pub name: Option<String>,
    /// Wired link preset override ("lan" | "wan"); default: the topology's.
    pub wired: Option<String>,
    /// An error model on the wired link(s), both directions (default none): congestion-like loss
    /// in front of the wireless hop, seed 003's node A (Eq. 4). No link layer recovers it.
    pub wired_error: Option<ErrorSpec>,
    /// One-way delay of the wired link(s), seconds (default: the wired preset's), e.g. seed 002's
    /// Internet cloud (0.02 s constant).
    pub wired_delay_s: Option<f64>,
    /// A random delay per packet on the wired link(s) on top of `wired_delay_s`:
    /// `{ mean_s, k = 2, reorder = false }`, Erlang of shape k (seed 002's Internet: mean 0.01 s).
    pub wired_extra_delay: Option<presets::ExtraDelay>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AppSection {
    pub kind: String,
    pub peak_rate_bps: Option<i64>,
    pub packet_size: Option<i64>,
    pub talk_mean_s: Option<f64>,
    pub silence_mean_s: Option<f64>,
    pub start_s: Option<f64>,
    pub tos: Option<u8>,
    /// FTP: bytes to transfer (default: the link preset's, seed 004 Table 4.1).
    pub bytes: Option<i64>,
    /// TCP preset: "dissertation" (ns-2.1b4 Reno, 500 ms tick; default), "ns2-2.1b4", "ns2-2.35".
    pub tcp: Option<String>,
    /// Congestion control: "reno" (default), "vegas" (ns-2 `Agent/TCP/Vegas`), "westwood"
    /// (Westwood+) or "real" (TCP-Real), the last three from seed 003.
    pub variant: Option<String>,
    /// Vegas thresholds in packets (ns-2 `v_alpha_` 1, `v_beta_` 3, `v_gamma_` 1).
    pub vegas_alpha: Option<i64>,
    pub vegas_beta: Option<i64>,
    pub vegas_gamma: Option<i64>,
    /// TCP `window_` in packets (default 20, ns-2).
    pub window: Option<i64>,
    /// TCP segment size in bytes (default: the link's frame payload, as in the seeds).
    pub segment_size: Option<i64>,
    /// TCP clock tick in seconds (overrides the preset's).
    pub tick: Option<f64>,
    /// Delayed-ACK sink (default false: one ACK per segment, seed 004).
    pub delayed_ack: Option<bool>,
    /// FTP: measure each segment's end-to-end delay, first transmission to first arrival
    /// (`ftp.e2e_delay_s`, seed 002 Fig. 4.8; default false).
    pub e2e_delay: Option<bool>,
    /// TCP: how RTT samples become an RTO: "ns2-ticks" (ns-2's tick clock, truncated; the
    /// default of every preset but wong1998) or "exact-nearest" (seed 002's thesis: exact
    /// samples, the RTO rounded to the nearest `tick`, A20; wong1998's default).
    pub rto_model: Option<String>,
    /// FTP: keep the cwnd and received-sequence traces and measure the longest stall between
    /// in-order deliveries (`ftp.max_stall_s`, seed 002 claim C7; default false).
    pub trace: Option<bool>,
    /// WWW: think time between transactions, seconds or "mah" (HttpThinkTime.cdf); default 0.
    pub think_time: Option<ThinkTimeRef>,
    /// WWW: parallel connections for embedded objects (ns-2 `maxConn_`, default 4).
    pub max_connections: Option<i64>,
    /// WWW: "ns2" (ns-2's reused, reset agents; default), "ns2-new-ports" (the same on new
    /// ports per transfer), "new" (a brand-new TCP connection per transfer).
    pub connections: Option<Connections>,
    /// Video (seed 003): number of flows (default 1; `sweep.flows` sets it per point).
    pub flows: Option<i64>,
    /// Video: mean source rate of each flow, bit/s.
    pub rate_bps: Option<f64>,
    /// Video: frames per second (default 25).
    pub fps: Option<f64>,
    /// Video: GOP pattern (default "IBBPBBPBBPBB").
    pub gop: Option<String>,
    /// Video: relative mean sizes of I, P and B frames (default [5, 2, 1]).
    pub size_ratio: Option<[f64; 3]>,
    /// Video: TES innovation half-widths of the I, P, B processes (default 0.1 each).
    pub tes_width: Option<[f64; 3]>,
    /// Video: TES stitching parameter (default 0.5).
    pub tes_xi: Option<f64>,
    /// Video: how frames become TCP packets, "frame" (each frame on its own, ns-2's sendmsg:
    /// the default) or "stream" (a byte stream).
    pub packetise: Option<String>,
    /// Video: flow k starts at start_s + U(0, start_spread_s) (default 1 s).
    pub start_spread_s: Option<f64>,
    /// Video: start of the measurement window (default 2 s).
    pub warmup_s: Option<f64>,
    /// Video: RTPI's inter-arrival threshold (default 0.075 s).
    pub threshold_s: Option<f64>,
}

/// A WWW think time: seconds, or "mah" for Mah's empirical distribution.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ThinkTimeRef {
    Seconds(f64),
    Name(String),
}

impl<'de> Deserialize<'de> for ThinkTimeRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ThinkTimeRef;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("seconds (a number) or \"mah\" (HttpThinkTime.cdf)")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<ThinkTimeRef, E> {
                Ok(ThinkTimeRef::Seconds(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ThinkTimeRef, E> {
                Ok(ThinkTimeRef::Seconds(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ThinkTimeRef, E> {
                Ok(ThinkTimeRef::Seconds(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ThinkTimeRef, E> {
                Ok(ThinkTimeRef::Name(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A scheme given by short name ("sr-m2") or as a full table (`{ kind = "snoop", local_timer =
/// false }`). Deserialized by hand rather than as an untagged enum, so that a bad table reports
/// serde's own error, naming the offending field, instead of "did not match any variant".
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum SchemeRef {
    Name(String),
    Config(SchemeConfig),
}

impl<'de> Deserialize<'de> for SchemeRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SchemeRef;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a scheme name (\"sr-m2\") or a table ({ kind = \"snoop\", ... })")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SchemeRef, E> {
                Ok(SchemeRef::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<SchemeRef, A::Error> {
                let t =
                    toml::Table::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                scheme_from_table(&t)
                    .map(SchemeRef::Config)
                    .map_err(serde::de::Error::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A scheme table as a [`SchemeConfig`]. On failure, the message names the first field that
/// fails on its own (next to `kind`), unless serde's message already does.
fn scheme_from_table(t: &toml::Table) -> Result<SchemeConfig, String> {
    let parse = |t: toml::Table| {
        SchemeConfig::deserialize(toml::Value::Table(t)).map_err(|e| e.message().to_string())
    };
    let e = match parse(t.clone()) {
        Ok(c) => return Ok(c),
        Err(e) => e,
    };
    // A missing or unknown `kind` is serde's message already.
    let Some(kind) = t.get("kind") else {
        return Err(e);
    };
    let mut alone = toml::Table::new();
    alone.insert("kind".into(), kind.clone());
    if parse(alone.clone()).is_err() {
        return Err(e);
    }
    for (k, v) in t.iter().filter(|(k, _)| k.as_str() != "kind") {
        let mut one = alone.clone();
        one.insert(k.clone(), v.clone());
        if let Err(e1) = parse(one) {
            return Err(if e1.contains(&format!("`{k}`")) {
                e1
            } else {
                format!("scheme field `{k}` = {v}: {e1}")
            });
        }
    }
    Err(e)
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    #[serde(default, deserialize_with = "non_empty")]
    pub level: Vec<i64>,
    #[serde(default, deserialize_with = "non_empty")]
    pub scheme: Vec<SchemeRef>,
    #[serde(default, deserialize_with = "non_empty")]
    pub topology: Vec<String>,
    #[serde(default, deserialize_with = "non_empty")]
    pub link: Vec<String>,
    /// Multi-service axis: one list of services per point (needs `[msll]`).
    #[serde(default, deserialize_with = "non_empty")]
    pub services: Vec<Vec<SchemeRef>>,
    /// Multi-service axis: "scfq" and/or "fifo" (Figs 8.2/8.3).
    #[serde(default, deserialize_with = "non_empty")]
    pub scheduler: Vec<Discipline>,
    /// Number of flows of every video app (seed 003 Figs 3-5: N = 1-40). Adds "/N<n>" to the
    /// point labels; with one error level, figures draw it on the x axis.
    #[serde(default, deserialize_with = "non_empty")]
    pub flows: Vec<i64>,
    /// TCP variant of every TCP application ("reno", "vegas"): seed 003 compares them. Adds
    /// "/<variant>" to the point labels and to the figures' curve names.
    #[serde(default, deserialize_with = "non_empty")]
    pub variant: Vec<String>,
}

/// A sweep axis given as `[]`: an omitted axis takes its default (level 1, the Default scheme,
/// the `[link]` preset...), and an empty one silently did the same, which is never what was
/// meant. The parse error carries the file, line and key.
fn non_empty<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let v = Vec::<T>::deserialize(d)?;
    if v.is_empty() {
        return Err(serde::de::Error::custom(
            "an empty sweep axis: give at least one value, or omit the key for its default",
        ));
    }
    Ok(v)
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimSection {
    #[serde(default = "fifty")]
    pub queue_limit: i64,
    #[serde(default = "yes")]
    pub pacing: bool,
    #[serde(default)]
    pub traffic_streams: TrafficStreams,
    /// With `[msll]`: "shared" (one DropTail IP queue, default) or "per-service" IP queues.
    #[serde(default)]
    pub ip_queues: IpQueues,
    /// Each node's IP as a FIFO server (seed 002 sec. 1.6): `{ wired_host_pps = 5000,
    /// base_station_pps = 1000, wireless_host_pps = 1000 }`; absent: IP takes no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_service: Option<msll_sim::IpService>,
    /// How long a host keeps an incomplete datagram's fragments, seconds (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reassembly_timeout_s: Option<f64>,
    /// Conferencing loss in runs without a drain leaves out the last this many seconds of
    /// sends (default 5, seed004-ch5.md AMB-10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conf_end_guard_s: Option<f64>,
}

impl Default for SimSection {
    fn default() -> Self {
        SimSection {
            queue_limit: 50,
            pacing: true,
            traffic_streams: TrafficStreams::Fixed,
            ip_queues: IpQueues::Shared,
            ip_service: None,
            reassembly_timeout_s: None,
            conf_end_guard_s: None,
        }
    }
}

fn fifty() -> i64 {
    50
}
fn yes() -> bool {
    true
}

/// One point of the sweep: its axis values and the configuration of replication 0.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub label: String,
    pub link: String,
    pub topology: String,
    pub level: u8,
    pub scheme: String,
    /// The `sweep.variant` value of this point, if the sweep has that axis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The `sweep.flows` value of this point, if the sweep has that axis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<u32>,
    pub config: SimConfig,
}

/// A parsed, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub file: String,
    pub dir: PathBuf,
    pub raw: ScenarioFile,
    pub text: String,
    pub points: Vec<Point>,
}

/// Turn a toml error into one line: file:line: `the offending line`: message.
pub(crate) fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> ScenarioError {
    let msg = e.message().replace('\n', " ");
    let loc = e.span().map(|s| {
        let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
        let src = text.lines().nth(line - 1).unwrap_or("").trim().to_string();
        (line, src)
    });
    match loc {
        Some((line, src)) => ScenarioError {
            file: format!("{file}:{line}"),
            msg: format!("`{src}`: {msg}"),
        },
        None => ScenarioError {
            file: file.into(),
            msg,
        },
    }
}

/// A `Simulation::new` error as a scenario error: `SimConfig`'s `wireless` is the scenario's
/// `[link]` table, so its fields are named as the user wrote them (`link.error.path`).
pub fn sim_error(file: &str, mut e: msll_sim::error_model::SpecError) -> ScenarioError {
    if let Some(rest) = e.field.strip_prefix("wireless.") {
        e.field = format!("link.{rest}");
    } else if let Some(rest) = e.field.strip_prefix("wired.error") {
        e.field = format!("topology.wired_error{rest}");
    } else if let Some(rest) = e.field.strip_prefix("apps[") {
        // The simulator's `apps[i]` is the file's `[[app]]` entry i.
        e.field = format!("app[{rest}");
    }
    ScenarioError {
        file: file.into(),
        msg: e.to_string(),
    }
}

impl Scenario {
    /// A run of `point` (seed, replication) the simulator stopped: the file, point and run named.
    pub fn run_error(
        &self,
        point: &Point,
        seed: u64,
        rep: u32,
        e: msll_sim::RunError,
    ) -> ScenarioError {
        ScenarioError {
            file: self.file.clone(),
            msg: format!("point {}, seed {seed}, replication {rep}: {e}", point.label),
        }
    }

    /// [`sim_error`] for a run of `point`: a wireless error model taken from `link.levels` is
    /// named by its entry (`link.levels[k]`), not as `link.error`.
    pub fn point_error(
        &self,
        point: &Point,
        mut e: msll_sim::error_model::SpecError,
    ) -> ScenarioError {
        if self.raw.link.levels.is_some() && point.level > 0 {
            if let Some(rest) = e.field.strip_prefix("wireless.error") {
                e.field = format!("link.levels[{}]{rest}", point.level - 1);
            }
        }
        sim_error(&self.file, e)
    }

    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: file.clone(),
            msg: format!("cannot read: {e}"),
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::parse(&file, &text, &dir)
    }

    pub fn parse(file: &str, text: &str, dir: &Path) -> Result<Self, ScenarioError> {
        let raw: ScenarioFile = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
        let err = |msg: String| ScenarioError {
            file: file.into(),
            msg,
        };
        let m = &raw.scenario;
        if m.name.trim().is_empty() {
            return Err(err("scenario.name = \"\": must not be empty".into()));
        }
        // Names and figure ids become file names: keep them to one path component.
        let safe = |v: &str| {
            !v.starts_with('.')
                && v.len() <= MAX_NAME_LEN
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        if !safe(&m.name) {
            return Err(err(format!(
                "scenario.name = \"{}\": use at most {MAX_NAME_LEN} letters, digits, '.', '_' and '-' (it names files)",
                m.name
            )));
        }
        if !(1..=MAX_REPLICATIONS).contains(&m.replications) {
            return Err(err(format!(
                "scenario.replications = {}: must be 1..={MAX_REPLICATIONS}",
                m.replications
            )));
        }
        if let Some(d) = m.duration_s {
            // Up to a simulated year: the seeds run 500-2000 s.
            if !(d.is_finite() && d > 0.0 && d <= 3.2e7) {
                return Err(err(format!(
                    "scenario.duration_s = {d}: must be a positive number of seconds, at most 3.2e7 (a year)"
                )));
            }
        }
        if !(m.drain_s.is_finite() && (0.0..=3.2e7).contains(&m.drain_s)) {
            return Err(err(format!(
                "scenario.drain_s = {:?}: must be 0..=3.2e7 seconds (a year)",
                m.drain_s
            )));
        }
        if raw.sim.queue_limit < msll_sim::config::MIN_QUEUE_LIMIT as i64 {
            return Err(err(format!(
                "sim.queue_limit = {}: must be at least 2 packets (ns-2's DropTail: limit - 1 \
                 wait behind the one on the link, so 1 drops every packet)",
                raw.sim.queue_limit
            )));
        }
        if let Some(t) = raw.sim.reassembly_timeout_s {
            if !msll_sim::frag::REASSEMBLY_TIMEOUT_RANGE_S.contains(&t) {
                return Err(err(format!(
                    "sim.reassembly_timeout_s = {t}: must be 0.001..=1e6 seconds"
                )));
            }
        }
        if let Some(g) = raw.sim.conf_end_guard_s {
            if !msll_sim::config::CONF_END_GUARD_RANGE_S.contains(&g) {
                return Err(err(format!(
                    "sim.conf_end_guard_s = {g}: must be 0..=1e6 seconds"
                )));
            }
        }
        if let Some((f, v)) = raw.sim.ip_service.and_then(|s| s.invalid()) {
            return Err(err(format!(
                "sim.ip_service.{f} = {v}: must be 0 (no service time) or 0.001..=1e9 packets/s"
            )));
        }
        let links: Vec<String> = if raw.sweep.link.is_empty() {
            vec![raw
                .link
                .preset
                .clone()
                .ok_or_else(|| err("link.preset is missing (or give sweep.link)".into()))?]
        } else {
            raw.sweep.link.clone()
        };
        let link_field = if raw.sweep.link.is_empty() {
            "link.preset"
        } else {
            "sweep.link"
        };
        for l in &links {
            if presets::wireless(l).is_none() {
                return Err(err(format!(
                    "{link_field} = \"{l}\": unknown link preset (known: {})",
                    presets::WIRELESS_NAMES.join(", ")
                )));
            }
        }
        let topos: Vec<String> = if raw.sweep.topology.is_empty() {
            vec![raw.topology.name.clone().unwrap_or_else(|| "LAN1".into())]
        } else {
            raw.sweep.topology.clone()
        };
        let topo_field = if raw.sweep.topology.is_empty() {
            "topology.name"
        } else {
            "sweep.topology"
        };
        for t in &topos {
            if Topology::from_name(t).is_none() {
                return Err(err(format!(
                    "{topo_field} = \"{t}\": unknown topology (known: {})",
                    presets::TOPOLOGY_NAMES.join(", ")
                )));
            }
        }
        if let Some(w) = &raw.topology.wired {
            if !presets::WIRED_NAMES.contains(&w.as_str()) {
                return Err(err(format!(
                    "topology.wired = \"{w}\": unknown wired link (known: lan, wan)"
                )));
            }
        }
        let levels: Vec<i64> = if raw.sweep.level.is_empty() {
            vec![1]
        } else {
            raw.sweep.level.clone()
        };
        if let Some(ls) = &raw.link.levels {
            if raw.link.error.is_some() {
                return Err(err(
                    "link.levels and link.error both given: give the levels' models, or one model"
                        .into(),
                ));
            }
            if ls.is_empty() || ls.len() > MAX_LEVELS {
                return Err(err(format!(
                    "link.levels has {} entries: give 1 to {MAX_LEVELS} error models (levels 1..)",
                    ls.len()
                )));
            }
            for (i, e) in ls.iter().enumerate() {
                e.validate()
                    .map_err(|e| err(format!("link.levels[{i}].{e}")))?;
            }
        }
        let top = raw.link.levels.as_ref().map_or(4, |l| l.len() as i64);
        for &l in &levels {
            if !(0..=top).contains(&l) {
                let what = if raw.link.levels.is_some() {
                    "link.levels defines levels"
                } else {
                    "error levels are"
                };
                return Err(err(format!(
                    "sweep.level = {l}: {what} 0 (error-free) to {top}"
                )));
            }
        }
        // A lossy model that no swept level uses would be silently ignored (level 0 is error-free).
        if !levels.iter().any(|&l| l > 0) {
            let given = if raw.link.error.is_some() {
                Some("link.error")
            } else if raw.link.levels.is_some() {
                Some("link.levels")
            } else {
                None
            };
            if let Some(given) = given {
                return Err(err(format!(
                    "sweep.level = {levels:?}: {given} is given but no swept level above 0 uses it \
                     (level 0 is error-free); sweep a level above 0 or drop {given}"
                )));
            }
        }
        // An explicit `[link] error` replaces the preset's model at every level but 0: two lossy
        // levels would be the same runs under two labels (and two curves of one figure).
        if raw.link.error.is_some() && levels.iter().filter(|&&l| l > 0).count() > 1 {
            return Err(err(format!(
                "sweep.level = {levels:?}: link.error replaces every lossy level's model, so these \
                 levels would be identical runs; sweep at most one level above 0"
            )));
        }
        let schemes: Vec<SchemeConfig> = if raw.sweep.scheme.is_empty() {
            vec![SchemeConfig::Default]
        } else {
            raw.sweep
                .scheme
                .iter()
                .enumerate()
                .map(|(i, s)| resolve_scheme(&format!("sweep.scheme[{i}]"), s).map_err(err))
                .collect::<Result<_, _>>()?
        };
        let msll = msll_variants(&raw).map_err(err)?;
        let variants: Vec<(SchemeConfig, Option<MsllConfig>)> = if msll.is_empty() {
            schemes.into_iter().map(|s| (s, None)).collect()
        } else {
            msll.into_iter()
                .map(|m| (SchemeConfig::Default, Some(m)))
                .collect()
        };
        if let Some(r) = raw.link.rate_bps {
            if !(1..=100_000_000_000).contains(&r) {
                return Err(err(format!(
                    "link.rate_bps = {r}: must be a positive bit rate of at most 1e11 (100 Gbit/s)"
                )));
            }
        }
        if let Some(d) = raw.link.delay_s {
            if !(d.is_finite() && (0.0..=3600.0).contains(&d)) {
                return Err(err(format!("link.delay_s = {d}: must be 0..=3600 seconds")));
            }
        }
        if let Some(f) = raw.link.frame_payload {
            // A frame must hold an IPv4 header and one 8-byte fragment unit (RFC 791), or a
            // larger packet could not be fragmented to fit and would cross the link whole.
            if !(MIN_FRAME_PAYLOAD..=65_535).contains(&f) {
                return Err(err(format!(
                    "link.frame_payload = {f}: must be {MIN_FRAME_PAYLOAD}..=65535 bytes (an IPv4 header and 8 data bytes at least)"
                )));
            }
        }
        if let Some(e) = &raw.link.error {
            e.validate().map_err(|e| err(format!("link.error.{e}")))?;
        }
        if let Some(e) = &raw.topology.wired_error {
            e.validate()
                .map_err(|e| err(format!("topology.wired_error.{e}")))?;
        }
        if let Some(d) = raw.link.mac_delay_s {
            if !(d.is_finite() && (0.0..=3600.0).contains(&d)) {
                return Err(err(format!(
                    "link.mac_delay_s = {d}: must be 0..=3600 seconds"
                )));
            }
        }
        // A zero MAC delay draws no delay, so the sides would be silently ignored (input audit,
        // session 34).
        if let (None | Some(0.0), Some(s)) = (raw.link.mac_delay_s, raw.link.mac_sides) {
            let s = match s {
                presets::MacSides::Host => "host",
                presets::MacSides::Both => "both",
            };
            return Err(err(format!(
                "link.mac_sides = \"{s}\": applies only with a positive link.mac_delay_s"
            )));
        }
        if let Some(d) = raw.topology.wired_delay_s {
            if !(d.is_finite() && (0.0..=3600.0).contains(&d)) {
                return Err(err(format!(
                    "topology.wired_delay_s = {d}: must be 0..=3600 seconds"
                )));
            }
        }
        if let Some(j) = &raw.topology.wired_extra_delay {
            j.check()
                .map_err(|(f, v, r)| err(format!("topology.wired_extra_delay.{f} = {v}: {r}")))?;
        }
        for (i, f) in raw.figure.iter().enumerate() {
            if f.id.trim().is_empty() {
                return Err(err(format!("figure[{i}].id = \"\": must not be empty")));
            }
            if !safe(&f.id) {
                return Err(err(format!(
                    "figure[{i}].id = \"{}\": use at most {MAX_NAME_LEN} letters, digits, '.', '_' and '-' (it names files)",
                    f.id
                )));
            }
            if raw.figure[..i].iter().any(|g| g.id == f.id) {
                return Err(err(format!("figure[{i}].id = \"{}\": given twice", f.id)));
            }
            if !(f.scale.is_finite() && f.scale != 0.0) {
                return Err(err(format!(
                    "figure[{i}].scale = {}: must be a non-zero number",
                    f.scale
                )));
            }
            if f.log_y && f.scale < 0.0 {
                // Every value would be drawn negative, and a log axis has none (input audit).
                return Err(err(format!(
                    "figure[{i}].scale = {}: a `log_y` figure needs a positive scale",
                    f.scale
                )));
            }
            match f.trace {
                None if f.metric.trim().is_empty() => {
                    return Err(err(format!(
                        "figure[{i}].metric = \"\": a figure needs a metric (or `trace`)"
                    )));
                }
                None if !f.points.is_empty() || f.window_s.is_some() => {
                    return Err(err(format!(
                        "figure[{i}]: `points` and `window_s` belong to trace figures (`trace = \"cwnd\"` or \"received\")"
                    )));
                }
                Some(_) if !f.metric.is_empty() => {
                    return Err(err(format!(
                        "figure[{i}].metric = \"{}\": a trace figure draws its trace, not a metric",
                        f.metric
                    )));
                }
                Some(_) if f.log_y || !f.error_bars.is_sd() => {
                    return Err(err(format!(
                        "figure[{i}]: `log_y` and `error_bars` do not apply to a trace figure (one run, linear axes)"
                    )));
                }
                Some(_) if f.points.is_empty() => {
                    return Err(err(format!(
                        "figure[{i}].points = []: a trace figure needs at least one point"
                    )));
                }
                _ => {}
            }
            if let Some([a, b]) = f.window_s {
                if !(a.is_finite() && b.is_finite() && 0.0 <= a && a < b) {
                    return Err(err(format!(
                        "figure[{i}].window_s = [{a}, {b}]: must be [start, end] with 0 <= start < end"
                    )));
                }
            }
        }
        if raw.app.is_empty() {
            return Err(err(
                "no [[app]] given: a scenario needs at least one application".into(),
            ));
        }
        if raw.app.len() > msll_sim::sim::MAX_APPS {
            return Err(err(format!(
                "app: {} [[app]] tables given, at most {} (each owns ports by its index)",
                raw.app.len(),
                msll_sim::sim::MAX_APPS
            )));
        }

        // seed 003: the TCP variant and the number of video flows.
        for v in &raw.sweep.variant {
            if !["reno", "vegas", "westwood", "real"].contains(&v.as_str()) {
                return Err(err(format!(
                    "sweep.variant = \"{v}\": unknown TCP variant (known: reno, vegas, westwood, real)"
                )));
            }
        }
        if !raw.sweep.variant.is_empty()
            && !raw
                .app
                .iter()
                .any(|a| ["ftp", "www", "video"].contains(&a.kind.as_str()))
        {
            return Err(err(
                "sweep.variant: no TCP application (ftp, www, video) to apply it to".into(),
            ));
        }
        if !raw.sweep.variant.is_empty() {
            if let Some(i) = raw.app.iter().position(|a| a.variant.is_some()) {
                return Err(err(format!(
                    "app[{i}].variant = \"{}\": sweep.variant sets it at every point; leave it out",
                    raw.app[i].variant.as_deref().unwrap_or("")
                )));
            }
        }
        if !raw.sweep.flows.is_empty() {
            // As sweep.variant: the sweep sets it at every point, so an app's own value would
            // be dropped without a word (review, session 42).
            if let Some(i) = raw.app.iter().position(|a| a.flows.is_some()) {
                return Err(err(format!(
                    "app[{i}].flows = {}: sweep.flows sets it at every point; leave it out",
                    raw.app[i].flows.unwrap_or(0)
                )));
            }
        }
        if let Some(n) = raw.sweep.flows.iter().find(|&&n| !(1..=1000).contains(&n)) {
            return Err(err(format!("sweep.flows = {n}: must be 1..=1000")));
        }
        if !raw.sweep.flows.is_empty() && !raw.app.iter().any(|a| a.kind == "video") {
            return Err(err(
                "sweep.flows: no video application ([[app]] kind = \"video\") to apply it to"
                    .into(),
            ));
        }
        let variant_axis: Vec<Option<String>> = if raw.sweep.variant.is_empty() {
            vec![None]
        } else {
            raw.sweep.variant.iter().cloned().map(Some).collect()
        };
        let flows_axis: Vec<Option<i64>> = if raw.sweep.flows.is_empty() {
            vec![None]
        } else {
            raw.sweep.flows.iter().copied().map(Some).collect()
        };
        let axes: Vec<(Option<String>, Option<i64>)> = variant_axis
            .iter()
            .flat_map(|v| flows_axis.iter().map(move |n| (v.clone(), *n)))
            .collect();
        let mut points = Vec::new();
        for l in &links {
            let preset = presets::wireless(l).expect("checked");
            for t in &topos {
                let topo = Topology::from_name(t).expect("checked");
                for &lv in &levels {
                    for (s, msll) in &variants {
                        let mut wireless = match &raw.link.levels {
                            Some(ls) if lv > 0 => {
                                let mut w = preset.link(0).expect("level 0 exists");
                                w.error = ls[lv as usize - 1].clone();
                                w
                            }
                            _ => preset.link(lv as u8).expect("checked"),
                        };
                        if let Some(r) = raw.link.rate_bps {
                            wireless.rate_bps = r as u64;
                        }
                        if let Some(d) = raw.link.delay_s {
                            wireless.delay_s = d;
                        }
                        if let Some(f) = raw.link.frame_payload {
                            wireless.frame_payload = f as usize;
                        }
                        if let Some(e) = &raw.link.error {
                            if lv > 0 {
                                wireless.error = e.clone();
                            }
                        }
                        if let Some(mean_s) = raw.link.mac_delay_s.filter(|&d| d > 0.0) {
                            wireless.mac_access = Some(presets::MacAccess {
                                mean_s,
                                sides: raw.link.mac_sides.unwrap_or_default(),
                            });
                        }
                        let wired_name = raw.topology.wired.as_deref().unwrap_or(topo.wired_name());
                        let mut wired: LinkSpec =
                            presets::wired(wired_name, wireless.frame_payload).expect("checked");
                        if let Some(e) = &raw.topology.wired_error {
                            wired.error = e.clone();
                        }
                        if let Some(d) = raw.topology.wired_delay_s {
                            wired.delay_s = d;
                        }
                        wired.extra_delay = raw.topology.wired_extra_delay;
                        for (tv, nf) in &axes {
                            let apps = raw
                                .app
                                .iter()
                                .enumerate()
                                .map(|(i, a)| {
                                    let mut a = a.clone();
                                    if let Some(v) = tv {
                                        if ["ftp", "www", "video"].contains(&a.kind.as_str()) {
                                            a.variant = Some(v.clone());
                                            // Vegas's thresholds tune the Vegas points only.
                                            if v != "vegas" {
                                                a.vegas_alpha = None;
                                                a.vegas_beta = None;
                                                a.vegas_gamma = None;
                                            }
                                        }
                                    }
                                    if let (Some(n), "video") = (nf, a.kind.as_str()) {
                                        a.flows = Some(*n);
                                    }
                                    app_spec(i, &a, &preset, &wireless)
                                })
                                .collect::<Result<Vec<_>, String>>()
                                .map_err(err)?;
                            let ends = apps.iter().any(AppSpec::ends_run);
                            let config = SimConfig {
                                topology: topo,
                                wired: wired.clone(),
                                wireless: wireless.clone(),
                                scheme: s.clone(),
                                queue_limit: raw.sim.queue_limit as usize,
                                pacing: raw.sim.pacing,
                                apps,
                                duration_s: m.duration_s.unwrap_or(if ends {
                                    // a file transfer ends the run; this is only a safety cap
                                    1.0e6
                                } else {
                                    preset.run_s
                                }),
                                drain_s: m.drain_s,
                                seed: m.seed,
                                replication: 0,
                                traffic_streams: raw.sim.traffic_streams,
                                msll: msll.clone(),
                                ip_queues: raw.sim.ip_queues,
                                ip_service: raw.sim.ip_service,
                                reassembly_timeout_s: raw
                                    .sim
                                    .reassembly_timeout_s
                                    .unwrap_or(msll_sim::frag::REASSEMBLY_TIMEOUT.as_secs_f64()),
                                conf_end_guard_s: raw
                                    .sim
                                    .conf_end_guard_s
                                    .unwrap_or(msll_sim::config::CONF_END_GUARD_S),
                            };
                            check_point(&raw, &config).map_err(err)?;
                            let scheme = msll.as_ref().map_or_else(|| s.label(), MsllConfig::label);
                            let mut label = format!("{l}/{}/L{lv}/{scheme}", topo.name());
                            if let Some(v) = tv {
                                label = format!("{label}/{v}");
                            }
                            if let Some(n) = nf {
                                label = format!("{label}/N{n}");
                            }
                            points.push(Point {
                                label,
                                link: l.clone(),
                                topology: topo.name().into(),
                                level: lv as u8,
                                scheme,
                                variant: tv.clone(),
                                flows: nf.map(|n| n as u32),
                                config,
                            });
                        }
                    }
                }
            }
        }
        // Results, figures and claims address points by label: two equal ones (a sweep value
        // given twice) would be one curve drawn twice and a claim reading either.
        let mut seen = std::collections::BTreeSet::new();
        if let Some(p) = points.iter().find(|p| !seen.insert(p.label.as_str())) {
            return Err(err(format!(
                "sweep: the point {} appears twice (a sweep value given twice?)",
                p.label
            )));
        }
        for (i, f) in raw.figure.iter().enumerate() {
            if f.trace.is_none() {
                continue;
            }
            for sel in &f.points {
                let n = points
                    .iter()
                    .filter(|p| crate::claims::selects(&p.label, sel))
                    .count();
                if n != 1 {
                    return Err(err(format!(
                        "figure[{i}].points: \"{sel}\" names {n} points, not one (points: {})",
                        points
                            .iter()
                            .map(|p| p.label.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                let p = points
                    .iter()
                    .find(|p| crate::claims::selects(&p.label, sel))
                    .expect("one point");
                if !p
                    .config
                    .apps
                    .iter()
                    .any(|a| matches!(a, msll_sim::AppSpec::Ftp { .. }))
                {
                    return Err(err(format!(
                        "figure[{i}].points: \"{sel}\" has no FTP application to trace"
                    )));
                }
            }
        }
        Ok(Scenario {
            file: file.into(),
            dir: dir.to_path_buf(),
            raw,
            text: text.into(),
            points,
        })
    }

    pub fn name(&self) -> &str {
        &self.raw.scenario.name
    }

    /// The metric keys a run of point `i` reports, read from its simulation built but not run:
    /// which keys a run sets depends on its configuration alone (its applications, its
    /// services), never on what happens in the run, so claims can be checked before anything
    /// runs. Fails as a run would (e.g. an unreadable error trace).
    pub fn metric_names(&self, i: usize) -> Result<Vec<String>, ScenarioError> {
        let sim = msll_sim::Simulation::new(&self.points[i].config, &self.dir)
            .map_err(|e| self.point_error(&self.points[i], e))?;
        Ok(sim.result().metrics.into_keys().collect())
    }

    /// Keep only the points whose label (`link/topology/level/scheme`, as `msll run` prints it)
    /// contains one of `patterns`; an error lists the labels if a pattern matches none.
    pub fn retain_points(&mut self, patterns: &[String]) -> Result<(), ScenarioError> {
        if patterns.is_empty() {
            return Ok(());
        }
        for pat in patterns {
            if pat.is_empty() {
                return Err(ScenarioError {
                    file: self.file.clone(),
                    msg: "--point \"\": an empty pattern would match every point".into(),
                });
            }
            if !self.points.iter().any(|p| p.label.contains(pat.as_str())) {
                let labels: Vec<&str> = self.points.iter().map(|p| p.label.as_str()).collect();
                return Err(ScenarioError {
                    file: self.file.clone(),
                    msg: format!(
                        "--point {pat:?} matches no point (points: {})",
                        labels.join(", ")
                    ),
                });
            }
        }
        self.points
            .retain(|p| patterns.iter().any(|pat| p.label.contains(pat.as_str())));
        Ok(())
    }
}

fn app_spec(
    i: usize,
    a: &AppSection,
    preset: &presets::WirelessPreset,
    link: &LinkSpec,
) -> Result<AppSpec, String> {
    let pos = |field: &str, v: Option<i64>, default: i64| -> Result<i64, String> {
        let v = v.unwrap_or(default);
        if v <= 0 {
            Err(format!("app[{i}].{field} = {v}: must be positive"))
        } else {
            Ok(v)
        }
    };
    let nonneg = |field: &str, v: Option<f64>, default: f64| -> Result<f64, String> {
        let v = v.unwrap_or(default);
        if !(v.is_finite() && v >= 0.0) {
            Err(format!("app[{i}].{field} = {v}: must be >= 0"))
        } else {
            Ok(v)
        }
    };
    // A field of another application kind is a mistake, not something to ignore silently.
    let given: [(&str, bool); 32] = [
        ("e2e_delay", a.e2e_delay.is_some()),
        ("rto_model", a.rto_model.is_some()),
        ("trace", a.trace.is_some()),
        ("variant", a.variant.is_some()),
        ("vegas_alpha", a.vegas_alpha.is_some()),
        ("vegas_beta", a.vegas_beta.is_some()),
        ("vegas_gamma", a.vegas_gamma.is_some()),
        ("peak_rate_bps", a.peak_rate_bps.is_some()),
        ("packet_size", a.packet_size.is_some()),
        ("talk_mean_s", a.talk_mean_s.is_some()),
        ("silence_mean_s", a.silence_mean_s.is_some()),
        ("bytes", a.bytes.is_some()),
        ("tcp", a.tcp.is_some()),
        ("window", a.window.is_some()),
        ("segment_size", a.segment_size.is_some()),
        ("tick", a.tick.is_some()),
        ("delayed_ack", a.delayed_ack.is_some()),
        ("think_time", a.think_time.is_some()),
        ("max_connections", a.max_connections.is_some()),
        ("connections", a.connections.is_some()),
        ("flows", a.flows.is_some()),
        ("rate_bps", a.rate_bps.is_some()),
        ("fps", a.fps.is_some()),
        ("gop", a.gop.is_some()),
        ("size_ratio", a.size_ratio.is_some()),
        ("tes_width", a.tes_width.is_some()),
        ("tes_xi", a.tes_xi.is_some()),
        ("start_spread_s", a.start_spread_s.is_some()),
        ("warmup_s", a.warmup_s.is_some()),
        ("threshold_s", a.threshold_s.is_some()),
        ("packetise", a.packetise.is_some()),
        ("start_s", false),
    ];
    const TCP: [&str; 10] = [
        "tcp",
        "rto_model",
        "window",
        "segment_size",
        "tick",
        "delayed_ack",
        "variant",
        "vegas_alpha",
        "vegas_beta",
        "vegas_gamma",
    ];
    const VIDEO: [&str; 11] = [
        "packetise",
        "flows",
        "rate_bps",
        "fps",
        "gop",
        "size_ratio",
        "tes_width",
        "tes_xi",
        "start_spread_s",
        "warmup_s",
        "threshold_s",
    ];
    let applies = |f: &str| match a.kind.as_str() {
        "conference" => [
            "peak_rate_bps",
            "packet_size",
            "talk_mean_s",
            "silence_mean_s",
        ]
        .contains(&f),
        "ftp" => ["bytes", "e2e_delay", "trace"].contains(&f) || TCP.contains(&f),
        "www" => ["think_time", "max_connections", "connections"].contains(&f) || TCP.contains(&f),
        "video" => VIDEO.contains(&f) || TCP.contains(&f),
        _ => true,
    };
    if let Some((f, _)) = given.iter().find(|(f, set)| *set && !applies(f)) {
        return Err(format!(
            "app[{i}].{f}: does not apply to kind = \"{}\"",
            a.kind
        ));
    }
    match a.kind.as_str() {
        "conference" => {
            let packet_size = pos("packet_size", a.packet_size, link.frame_payload as i64)?;
            if packet_size > u16::MAX as i64 {
                return Err(format!(
                    "app[{i}].packet_size = {packet_size}: an IP packet has at most 65535 bytes"
                ));
            }
            let peak = pos(
                "peak_rate_bps",
                a.peak_rate_bps,
                preset.conf_rate_bps as i64,
            )?;
            // One packet per interval: the interval must be at least a nanosecond.
            if (packet_size as f64 * 8.0 / peak as f64) < 1e-9 {
                return Err(format!(
                    "app[{i}].peak_rate_bps = {peak}: {packet_size}-byte packets would be less than 1 ns apart"
                ));
            }
            if packet_size < msll_sim::app::conference::CONF_MIN_PACKET as i64 {
                return Err(format!(
                    "app[{i}].packet_size = {packet_size}: conferencing packets need at least {} bytes",
                    msll_sim::app::conference::CONF_MIN_PACKET
                ));
            }
            let talk = nonneg("talk_mean_s", a.talk_mean_s, 1.0)?;
            let silence = nonneg("silence_mean_s", a.silence_mean_s, 1.35)?;
            if talk == 0.0 {
                return Err(format!("app[{i}].talk_mean_s = 0: must be positive"));
            }
            Ok(AppSpec::Conference {
                peak_rate_bps: peak as u64,
                packet_size: packet_size as usize,
                talk_mean_s: talk,
                silence_mean_s: silence,
                start_s: nonneg("start_s", a.start_s, 0.0)?,
                tos: a.tos.unwrap_or(0),
            })
        }
        "ftp" => {
            let mut tcp = tcp_spec(i, a, link)?;
            tcp.e2e_delay = a.e2e_delay.unwrap_or(false);
            tcp.trace = a.trace.unwrap_or(false);
            Ok(AppSpec::Ftp {
                bytes: pos("bytes", a.bytes, preset.ftp_bytes as i64)? as u64,
                tcp,
                start_s: nonneg("start_s", a.start_s, 0.0)?,
            })
        }
        "www" => www_spec(i, a, link),
        "video" => {
            let tcp = tcp_spec(i, a, link)?;
            let flows = pos("flows", a.flows, 1)?;
            let Some(rate) = a.rate_bps else {
                return Err(format!(
                    "app[{i}].rate_bps: missing (each video flow's mean source rate, bit/s)"
                ));
            };
            if !(rate.is_finite() && rate > 0.0 && rate <= 1e11) {
                return Err(format!(
                    "app[{i}].rate_bps = {rate}: must be a positive bit rate of at most 1e11"
                ));
            }
            let fps = a.fps.unwrap_or(25.0);
            let min_fps = msll_sim::app::video::MIN_FPS;
            if !(fps.is_finite() && (min_fps..=1000.0).contains(&fps)) {
                return Err(format!(
                    "app[{i}].fps = {fps:?}: must be in [{min_fps}, 1000]"
                ));
            }
            let gop = a.gop.clone().unwrap_or_else(|| "IBBPBBPBBPBB".into());
            msll_sim::app::video::parse_gop(&gop)
                .map_err(|e| format!("app[{i}].gop = \"{gop}\": {e}"))?;
            let size_ratio = a.size_ratio.unwrap_or([5.0, 2.0, 1.0]);
            if let Some(r) = size_ratio.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
                return Err(format!(
                    "app[{i}].size_ratio = {size_ratio:?}: {r} must be positive"
                ));
            }
            let tes_width = a.tes_width.unwrap_or([0.1; 3]);
            if let Some(w) = tes_width
                .iter()
                .find(|w| !(w.is_finite() && **w > 0.0 && **w <= 0.5))
            {
                return Err(format!(
                    "app[{i}].tes_width = {tes_width:?}: {w} must be in (0, 0.5]"
                ));
            }
            let tes_xi = a.tes_xi.unwrap_or(0.5);
            if !(tes_xi.is_finite() && (0.0..=1.0).contains(&tes_xi)) {
                return Err(format!("app[{i}].tes_xi = {tes_xi}: must be in [0, 1]"));
            }
            Ok(AppSpec::Video {
                tcp,
                flows: flows.min(u32::MAX as i64) as u32,
                rate_bps: rate,
                fps,
                gop,
                size_ratio,
                tes_width,
                tes_xi,
                start_s: nonneg("start_s", a.start_s, 0.0)?,
                start_spread_s: nonneg("start_spread_s", a.start_spread_s, 1.0)?,
                warmup_s: nonneg("warmup_s", a.warmup_s, 2.0)?,
                threshold_s: nonneg("threshold_s", a.threshold_s, 0.075)?,
                packetise: match a.packetise.as_deref() {
                    None | Some("frame") => msll_sim::app::video::Packetise::Frame,
                    Some("stream") => msll_sim::app::video::Packetise::Stream,
                    Some(o) => {
                        return Err(format!(
                            "app[{i}].packetise = \"{o}\": unknown (known: frame, stream)"
                        ))
                    }
                },
            })
        }
        other => Err(format!(
            "app[{i}].kind = \"{other}\": unknown application (known: conference, ftp, www, video)"
        )),
    }
}

/// The TCP options shared by `ftp` and `www`: preset, segment size (default: the frame payload,
/// as in the seeds), window, tick, delayed ACKs, DS byte.
fn tcp_spec(i: usize, a: &AppSection, link: &LinkSpec) -> Result<TcpConfig, String> {
    let seg = a.segment_size.unwrap_or(link.frame_payload as i64);
    if seg <= 0 {
        return Err(format!("app[{i}].segment_size = {seg}: must be positive"));
    }
    let seg = seg as usize;
    let mut tcp = match a.tcp.as_deref().unwrap_or("dissertation") {
        "dissertation" => TcpConfig::dissertation(seg),
        "ns2-2.1b4" => TcpConfig::ns2_2_1b4(seg),
        "ns2-2.35" => TcpConfig::ns2_2_35(seg),
        // Seed 002: its own segment size (512 + 40 header bytes) unless the scenario sets one.
        "wong1998" => TcpConfig {
            segment_size: a.segment_size.map_or(512, |_| seg),
            ..TcpConfig::wong1998()
        },
        other => {
            return Err(format!(
                "app[{i}].tcp = \"{other}\": unknown TCP preset (known: dissertation, ns2-2.1b4, ns2-2.35, wong1998)"
            ))
        }
    };
    if let Some(w) = a.window {
        tcp.window = u32::try_from(w)
            .ok()
            .filter(|&w| w > 0)
            .ok_or_else(|| format!("app[{i}].window = {w}: must be 1..={}", u32::MAX))?;
    }
    if let Some(t) = a.tick {
        // ns-2's tcpTick_ is the timer granularity: 1 us is far below any setting in use.
        if !(t.is_finite() && (1e-6..=1e3).contains(&t)) {
            return Err(format!("app[{i}].tick = {t}: must be 1e-6..=1000 seconds"));
        }
        tcp.tick = t;
    }
    if let Some(d) = a.delayed_ack {
        tcp.sink.delayed_ack = d;
    }
    match a.rto_model.as_deref() {
        None => {}
        Some("ns2-ticks") => tcp.rto_model = msll_sim::tcp::RtoModel::Ns2Ticks,
        Some("exact-nearest") => tcp.rto_model = msll_sim::tcp::RtoModel::ExactNearest,
        Some(other) => {
            return Err(format!(
                "app[{i}].rto_model = \"{other}\": unknown (known: ns2-ticks, exact-nearest)"
            ))
        }
    }
    let vegas_given = [
        ("vegas_alpha", a.vegas_alpha),
        ("vegas_beta", a.vegas_beta),
        ("vegas_gamma", a.vegas_gamma),
    ];
    match a.variant.as_deref().unwrap_or("reno") {
        "reno" => {
            if let Some((f, Some(v))) = vegas_given.iter().find(|(_, v)| v.is_some()) {
                return Err(format!(
                    "app[{i}].{f} = {v}: applies to variant = \"vegas\" only"
                ));
            }
        }
        "vegas" => {
            let get = |f: &str, v: Option<i64>, d: i32| -> Result<i32, String> {
                match v {
                    None => Ok(d),
                    Some(x) if (0..=1_000_000).contains(&x) => Ok(x as i32),
                    Some(x) => Err(format!("app[{i}].{f} = {x}: must be 0..=1000000 packets")),
                }
            };
            let alpha = get("vegas_alpha", a.vegas_alpha, 1)?;
            let beta = get("vegas_beta", a.vegas_beta, 3)?;
            let gamma = get("vegas_gamma", a.vegas_gamma, 1)?;
            if beta < alpha {
                // Name the field the user wrote (both given: beta, the one compared).
                let msg = if a.vegas_beta.is_some() {
                    let d = if a.vegas_alpha.is_some() {
                        ""
                    } else {
                        ", default"
                    };
                    format!("vegas_beta = {beta}: must be at least vegas_alpha ({alpha}{d})")
                } else {
                    format!("vegas_alpha = {alpha}: must be at most vegas_beta ({beta}, default)")
                };
                return Err(format!("app[{i}].{msg}"));
            }
            if tcp.window > msll_sim::tcp::VEGAS_MAX_WINDOW {
                return Err(format!(
                    "app[{i}].window = {}: Vegas keeps one send-time slot per packet of the window; at most {}",
                    tcp.window,
                    msll_sim::tcp::VEGAS_MAX_WINDOW
                ));
            }
            tcp.variant = msll_sim::tcp::TcpVariant::Vegas { alpha, beta, gamma };
        }
        v @ ("westwood" | "real") => {
            if let Some((f, Some(x))) = vegas_given.iter().find(|(_, x)| x.is_some()) {
                return Err(format!(
                    "app[{i}].{f} = {x}: applies to variant = \"vegas\" only"
                ));
            }
            tcp.variant = if v == "westwood" {
                msll_sim::tcp::TcpVariant::WESTWOOD
            } else {
                msll_sim::tcp::TcpVariant::REAL
            };
        }
        other => {
            return Err(format!(
                "app[{i}].variant = \"{other}\": unknown TCP variant (known: reno, vegas, westwood, real)"
            ))
        }
    }
    tcp.ds_byte = a.tos.unwrap_or(0);
    // The segment size defaults to the frame payload (seed 004): name the field the user wrote.
    let field = if a.segment_size.is_some() {
        format!("app[{i}].segment_size = {seg}")
    } else {
        format!("link.frame_payload = {seg} (app[{i}]'s default segment_size)")
    };
    tcp.validate().map_err(|e| format!("{field}: {e}"))?;
    Ok(tcp)
}

/// `kind = "www"`: WWW browsing (seed 004 §4.1.2), TCP options as for FTP.
fn www_spec(i: usize, a: &AppSection, link: &LinkSpec) -> Result<AppSpec, String> {
    let tcp = tcp_spec(i, a, link)?;
    let think_time = match &a.think_time {
        None => ThinkTime::Constant(0.0),
        Some(ThinkTimeRef::Seconds(t)) if t.is_finite() && *t >= 0.0 => ThinkTime::Constant(*t),
        Some(ThinkTimeRef::Seconds(t)) => {
            return Err(format!("app[{i}].think_time = {t}: must be >= 0 seconds"))
        }
        Some(ThinkTimeRef::Name(n)) if n == "mah" => ThinkTime::Mah,
        Some(ThinkTimeRef::Name(n)) => {
            return Err(format!(
                "app[{i}].think_time = \"{n}\": give seconds or \"mah\" (HttpThinkTime.cdf)"
            ))
        }
    };
    let max_connections = a.max_connections.unwrap_or(4);
    if !(1..=64).contains(&max_connections) {
        return Err(format!(
            "app[{i}].max_connections = {max_connections}: must be 1..=64"
        ));
    }
    let start_s = a.start_s.unwrap_or(0.0);
    if !(start_s.is_finite() && start_s >= 0.0) {
        return Err(format!("app[{i}].start_s = {start_s}: must be >= 0"));
    }
    Ok(AppSpec::Www {
        tcp,
        max_connections: max_connections as u32,
        think_time,
        connections: a.connections.unwrap_or_default(),
        start_s,
    })
}

/// Most replications per point (`scenario.replications`, `--reps`). Every replication's result
/// is kept for the summaries (a few kB each), and a point whose replications are all the same
/// run still gets one copy per replication: an input audit found 2^32 - 1 aborting on a 100 GB
/// allocation. 100 000 is far beyond the seeds' 30 and a few hundred MB of results.
pub const MAX_REPLICATIONS: u32 = 100_000;

/// Longest scenario name or figure id: each names output files, and file systems refuse names
/// above 255 bytes (with room left for suffixes such as `.runs.csv`).
pub const MAX_NAME_LEN: usize = 200;

/// Smallest `link.frame_payload`: an IPv4 header (20 bytes) and one 8-byte fragment unit.
pub const MIN_FRAME_PAYLOAD: i64 = 28;

/// How far above the fastest link of the topology a conferencing source's peak rate may be.
/// The source sends at its peak rate whatever the link carries, so the work per simulated
/// second grows with it: 1e7 bit/s on a 9.6 kbit/s link took seconds per run, 8e9 never ended.
pub const MAX_CONF_OVERLOAD: u64 = 100;

/// Checks that need the whole point (its link, schemes and run length): values each field
/// accepts on its own but that this point cannot run with, or that would make it run without
/// end. The messages name the field and the value, and say why.
fn check_point(raw: &ScenarioFile, c: &SimConfig) -> Result<(), String> {
    let link = &c.wireless;
    let mut schemes: Vec<(String, &SchemeConfig)> = Vec::new();
    match &c.msll {
        None => {
            let i = raw
                .sweep
                .scheme
                .iter()
                .position(|r| resolve_scheme("", r).is_ok_and(|x| x == c.scheme));
            let table = i.map_or("sweep.scheme".to_string(), |i| format!("sweep.scheme[{i}]"));
            schemes.push((table, &c.scheme))
        }
        Some(m) => {
            // The list of the sweep this point runs, found by its schemes.
            let j = raw.sweep.services.iter().position(|l| {
                l.len() == m.services.len()
                    && l.iter()
                        .zip(&m.services)
                        .all(|(r, s)| resolve_scheme("", r).is_ok_and(|x| x == *s))
            });
            let table = match j {
                Some(j) => format!("sweep.services[{j}]"),
                None => "msll.services".to_string(),
            };
            for (k, s) in m.services.iter().enumerate() {
                schemes.push((format!("{table}[{k}]"), s));
            }
        }
    }
    for (table, s) in &schemes {
        s.check_answer_timers(link.frame_payload, link.rate_bps as f64)
            .map_err(|e| format!("{table}.{e}"))?;
    }
    let fastest = link.rate_bps.max(c.wired.rate_bps);
    for (i, a) in c.apps.iter().enumerate() {
        // Only against the implicit cap: a run given an explicit `scenario.duration_s` may mean
        // to cut the transfer short (`msll run` then warns that it did not complete).
        if let (AppSpec::Ftp { bytes, .. }, None) = (a, raw.scenario.duration_s) {
            // Even alone at the wireless link's full rate, with no headers and no loss.
            let floor_s = *bytes as f64 * 8.0 / link.rate_bps as f64;
            if floor_s > c.duration_s {
                return Err(format!(
                    "app[{i}].bytes = {bytes}: cannot be sent within the run ({:?} s) even at \
                     the link's full rate ({} bit/s, {floor_s:.3e} s)",
                    c.duration_s, link.rate_bps
                ));
            }
        }
        let start_s = match a {
            AppSpec::Ftp { start_s, .. } | AppSpec::Www { start_s, .. } => *start_s,
            AppSpec::Video {
                start_s,
                warmup_s,
                flows,
                ..
            } => {
                if *flows > 1000 {
                    return Err(format!("app[{i}].flows = {flows}: must be 1..=1000"));
                }
                if *warmup_s >= c.duration_s {
                    return Err(format!(
                        "app[{i}].warmup_s = {warmup_s:?}: not before the end of the run ({:?} s)",
                        c.duration_s
                    ));
                }
                *start_s
            }
            AppSpec::Conference {
                start_s,
                peak_rate_bps,
                ..
            } => {
                if *peak_rate_bps > fastest.saturating_mul(MAX_CONF_OVERLOAD) {
                    return Err(format!(
                        "app[{i}].peak_rate_bps = {peak_rate_bps}: more than {MAX_CONF_OVERLOAD} \
                         times the fastest link of the topology ({fastest} bit/s)"
                    ));
                }
                *start_s
            }
        };
        if start_s >= c.duration_s {
            return Err(format!(
                "app[{i}].start_s = {start_s:?}: not before the end of the run ({:?} s{})",
                c.duration_s,
                if raw.scenario.duration_s.is_some() {
                    ", scenario.duration_s"
                } else {
                    ""
                }
            ));
        }
    }
    if c.msll.is_none() && c.ip_queues == IpQueues::PerService {
        return Err(
            "sim.ip_queues = \"per-service\": needs an [msll] section (services to queue for)"
                .into(),
        );
    }
    Ok(())
}
