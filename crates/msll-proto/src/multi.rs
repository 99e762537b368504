//! Configuration of a multi-service endpoint (what seed 004's "external administrative module" sets,
//! sec. 6.2 / seed004-ch6-9.md sec. 2.1), and the per-service characterisation metrics of Table 8.1.
//!
//! ```toml
//! services = [{ kind = "sr", nak_policy = "per-frame" }, { kind = "rlp", max_naks = 1, delivery = "out-of-sequence" }]
//! classifier = { kind = "diffserv" }   # DS value = service number (sec. 7.1)
//! scheduler = "scfq"                   # or "fifo"
//! rates = [1.0, 2.0]                   # relative; Table 7.1 Cellular TCP 1/3, UDP 2/3
//! timer_scaling = "services"           # x n (heuristic 1), "inverse-share" (x 1/r_i), "none", { fixed = 2.0 }
//! ```

use serde::{Deserialize, Serialize};

use crate::classifier::{Classifier, ClassifierConfig, MeasureConfig, MAX_SERVICES};
use crate::endpoint::{Endpoint, ServiceCounters};
use crate::scheduler::{Discipline, Scheduler};
use crate::service::{LinkInfo, Role, SchemeConfig, ServiceStats};
use crate::time::{DataRate, Duration, Instant};

/// Relative SCFQ rates accepted (`MsllConfig::rates`, the tunnel's `rate` command): shares are
/// r_i / sum r_j, so only ratios matter; twelve decades cover any split of one link, and the
/// bounds keep the sum finite (an input audit found `[1e308, 1e308, 1e308]` overflowing it).
pub const RATE_RANGE: std::ops::RangeInclusive<f64> = 1e-6..=1e6;

/// Smallest `TimerScaling::Fixed` factor accepted by [`MsllConfig::validate`].
pub const MIN_TIMER_FACTOR: f64 = 0.5;

/// How services' base timeouts are loosened under multiplexing (seed 004 sec. 6.2.2,
/// seed004-ch6-9.md sec. 2.4: sharing raises round-trip times).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TimerScaling {
    /// Base (single-service) timeouts.
    None,
    /// Heuristic 1: x n, the number of services (the seed's preferred choice; x2 in ch. 7).
    #[default]
    Services,
    /// Heuristic 2: x 1/r_i, the inverse of the service's share; follows every rate change.
    InverseShare,
    /// An explicit factor for every service.
    Fixed(f64),
}

impl TimerScaling {
    /// The factor for a service with link share `share` among `n` services.
    pub fn factor(self, n: usize, share: f64) -> f64 {
        match self {
            TimerScaling::None => 1.0,
            TimerScaling::Services => n.max(1) as f64,
            TimerScaling::InverseShare if share > 0.0 && share.is_finite() => 1.0 / share,
            TimerScaling::InverseShare => 1.0,
            TimerScaling::Fixed(f) if f > 0.0 && f.is_finite() => f,
            TimerScaling::Fixed(_) => 1.0,
        }
    }
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// A multi-service link layer: services (index = service number), classifier, scheduler, rates,
/// timer scaling and queue bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MsllConfig {
    /// 1..=16 scheme instances; service number = position (4-bit field, seed004-ch6-9.md A3).
    pub services: Vec<SchemeConfig>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub classifier: ClassifierConfig,
    #[serde(default, skip_serializing_if = "is_default")]
    pub scheduler: Discipline,
    /// Relative SCFQ rates, one per service; empty = equal rates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<f64>,
    /// Measure the rates from the classifier's byte shares instead (seed 004 sec. 8.1); `rates`
    /// then only seeds the table until the first window ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<MeasureConfig>,
    /// Frames waiting per service queue (the shared queue with FIFO), the frame on the link not
    /// counted; excess frames are dropped and counted. ns-2's DropTail `limit_` counts one more
    /// (at most limit - 1 wait), so 49 here is ns-2's default of 50. None = unbounded (IP pacing
    /// keeps the queues short, sec. 6.2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_limit: Option<usize>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub timer_scaling: TimerScaling,
}

impl MsllConfig {
    /// Services named by short scheme name, DiffServ direct mapping, SCFQ, `rates`.
    pub fn from_names(names: &[&str], rates: &[f64]) -> Option<Self> {
        Some(MsllConfig {
            services: names
                .iter()
                .map(|n| SchemeConfig::from_name(n))
                .collect::<Option<_>>()?,
            classifier: ClassifierConfig::default(),
            scheduler: Discipline::Scfq,
            rates: rates.to_vec(),
            measure: None,
            queue_limit: None,
            timer_scaling: TimerScaling::Services,
        })
    }

    /// "sr-m2+rlp-oos" (and "/fifo" without fair queueing).
    pub fn label(&self) -> String {
        let mut l = self
            .services
            .iter()
            .map(SchemeConfig::label)
            .collect::<Vec<_>>()
            .join("+");
        if self.scheduler == Discipline::Fifo {
            l.push_str("/fifo");
        }
        l
    }

    /// A one-line description of the first problem, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.services.len();
        if n == 0 || n > MAX_SERVICES {
            return Err(format!("services: {n} given, need 1..={MAX_SERVICES}"));
        }
        if !self.rates.is_empty() && self.rates.len() != n {
            return Err(format!(
                "rates: {} given for {n} services",
                self.rates.len()
            ));
        }
        if let Some(r) = self.rates.iter().find(|r| !RATE_RANGE.contains(*r)) {
            return Err(format!(
                "rates: {r} is not a relative rate in {:e}..={:e}",
                RATE_RANGE.start(),
                RATE_RANGE.end()
            ));
        }
        for (i, s) in self.services.iter().enumerate() {
            s.validate().map_err(|e| format!("services[{i}].{e}"))?;
        }
        if let Some(m) = &self.measure {
            if !(m.window_ms.is_finite() && m.window_ms > 0.0) {
                return Err(format!("measure.window_ms = {}: must be > 0", m.window_ms));
            }
            if !crate::classifier::MIN_SHARE_RANGE.contains(&m.min_share) {
                return Err(format!(
                    "measure.min_share = {}: must be in [{:e}, 1) (an idle service keeps this \
                     share of the link; SCFQ cannot work with a zero rate)",
                    m.min_share,
                    crate::classifier::MIN_SHARE_RANGE.start
                ));
            }
        }
        if self.queue_limit == Some(0) {
            return Err("queue_limit = 0: must be at least 1 frame".into());
        }
        if let TimerScaling::Fixed(f) = self.timer_scaling {
            // Timers scale by f (sec. 6.3): sharing loosens them (f >= 1), and a factor below
            // MIN_TIMER_FACTOR shrinks a derived timer (about a link round trip) below one
            // frame time, so it expires before any answer can come back: a run that retransmits
            // or polls without end (an input audit found 1e-6 hanging).
            if !(f.is_finite() && (MIN_TIMER_FACTOR..=1e6).contains(&f)) {
                return Err(format!(
                    "timer_scaling.fixed = {f}: must be in {MIN_TIMER_FACTOR}..=1e6"
                ));
            }
        }
        let bad = |s: u8| s as usize >= n;
        let c = &self.classifier;
        if bad(c.default_service) {
            return Err(format!(
                "classifier.default_service = {}: no such service",
                c.default_service
            ));
        }
        if let Some(r) = c.rules.iter().find(|r| bad(r.service)) {
            // The rules may be the built-in ones of a named classifier ("heuristic"), not
            // written by the user: say what they ask for.
            return Err(format!(
                "classifier: a rule sends packets to service {}, but services has {n} entr{}",
                r.service,
                if n == 1 { "y" } else { "ies" }
            ));
        }
        if let Some((i, [lo, hi])) = c
            .rules
            .iter()
            .enumerate()
            .find_map(|(i, r)| r.ports.filter(|[lo, hi]| lo > hi).map(|p| (i, p)))
        {
            return Err(format!(
                "classifier.rules[{i}].ports = [{lo}, {hi}]: the range is empty (low > high)"
            ));
        }
        if let Some(e) = c.ds_table.iter().find(|e| bad(e.service)) {
            return Err(format!(
                "classifier.ds_table: service {} does not exist",
                e.service
            ));
        }
        Ok(())
    }

    /// The relative rates, equal when none are given.
    pub fn rate_table(&self) -> Vec<f64> {
        if self.rates.len() == self.services.len() {
            self.rates.clone()
        } else {
            vec![1.0; self.services.len()]
        }
    }

    /// Build one end of the link. `role` matters to Snoop (base station only); `pacing` is the
    /// nominal link rate at which the classifier paces IP, or None.
    ///
    /// # Panics
    /// If the configuration does not `validate`.
    pub fn build(&self, link: &LinkInfo, role: Role, pacing: Option<DataRate>) -> Endpoint {
        if let Err(e) = self.validate() {
            panic!("invalid MSLL configuration: {e}");
        }
        let services = self.services.iter().map(|s| s.build(link, role)).collect();
        let n = self.services.len();
        let mut classifier = Classifier::new(self.classifier.clone(), n);
        if let Some(m) = self.measure {
            classifier = classifier.with_measurement(m, Instant::ZERO);
        }
        let scheduler = Scheduler::new(self.scheduler, &self.rate_table(), self.queue_limit);
        let mut ep = Endpoint::with_parts(services, classifier, scheduler, pacing);
        ep.set_link(*link);
        for (i, s) in self.services.iter().enumerate() {
            // seed004-ch6-9.md sec. 2.4 / A18: "Snoop uses its own adaptive timers (no factor)";
            // only the fixed base timeouts of the other schemes are multiplied.
            if matches!(s, SchemeConfig::Snoop { .. }) {
                ep.set_timer_scaling_exempt(i as u8, true);
            }
        }
        ep.set_timer_scaling(self.timer_scaling);
        ep
    }
}

/// Seed 004 Table 8.1 service characterisation of one direction of one service.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ServiceMetrics {
    /// g_i = higher-layer data transmitted / link-layer data transmitted (sender side).
    pub goodput: f64,
    /// l_i = higher-layer data lost / higher-layer data transmitted (residual, receiver side).
    pub loss: f64,
    /// d_i: average packet delivery delay estimate in seconds (sec. 8.3: one-way delay plus one
    /// round trip per retransmission, no congestion inside the MSLL).
    pub delay_s: f64,
    /// e_i = g_i (1 - l_i) = higher-layer data received / link-layer data transmitted.
    pub effective_goodput: f64,
    /// r_i / sum r_j: the scheduler's share for the service.
    pub share: f64,
    /// B r_i e_i: the throughput the service can sustain under load (sec. 8.3), bit/s.
    pub predicted_bps: f64,
}

impl ServiceMetrics {
    /// Table 8.1 from both ends of a service: `tx` counts at the sending endpoint, `rx` at the
    /// receiving one; `stats` is the sending service's own counters (retransmissions);
    /// `link` the physical link; `share` the sender's r_i / sum r_j.
    pub fn from_ends(
        tx: &ServiceCounters,
        rx: &ServiceCounters,
        stats: &ServiceStats,
        link: &LinkInfo,
        share: f64,
    ) -> Self {
        let goodput = ratio(tx.bytes_in, tx.bytes_out);
        let loss = if tx.bytes_in == 0 {
            0.0
        } else {
            (1.0 - rx.bytes_delivered as f64 / tx.bytes_in as f64).clamp(0.0, 1.0)
        };
        Self::assemble(goodput, loss, tx, stats, link, share)
    }

    pub(crate) fn assemble(
        goodput: f64,
        loss: f64,
        tx: &ServiceCounters,
        stats: &ServiceStats,
        link: &LinkInfo,
        share: f64,
    ) -> Self {
        let e = goodput * (1.0 - loss);
        let mean_frame = tx
            .bytes_out
            .checked_div(tx.frames_out)
            .map_or(link.frame_payload + 1, |m| m as usize);
        let one_way = link.delay + link.rate.tx_time(mean_frame);
        let retx_per_frame = ratio(stats.retransmissions, stats.data_frames);
        let rtt = link.frame_rtt(1);
        let delay = one_way.as_secs_f64() + retx_per_frame * rtt.as_secs_f64();
        ServiceMetrics {
            goodput,
            loss,
            delay_s: delay,
            effective_goodput: e,
            share,
            predicted_bps: link.rate.bps() as f64 * share * e,
        }
    }
}

pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// A duration in seconds as a value for tables.
pub fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

#[cfg(test)]
mod tests;
