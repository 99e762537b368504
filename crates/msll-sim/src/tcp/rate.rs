//! Seed 003's two rate-measuring Reno variants (seed003.md sec. 3.5), as sender-side state on
//! top of ns-2 Reno (`sender.rs` calls in here only when a variant is configured):
//!
//! * **TCP Westwood+** (Grieco & Mascolo): one bandwidth sample per RTT, `b_k = acked_k / T_k`,
//!   low-pass filtered `B <- (1 - g) B + g b_k` (g = 1/10, the spec's form); after three
//!   duplicate ACKs `ssthresh = max(2, B RTT_min / MSS)` and `cwnd = min(cwnd, ssthresh)`; after
//!   a timeout the same ssthresh and `cwnd = 1`. No error classification: a wireless loss
//!   triggers the same response.
//! * **TCP-Real** (Zhang & Tsaoussidis): the receiving rate is measured per epoch of one RTT and
//!   compared with the previous epoch's. No decrease: additive increase as Reno; a decrease of
//!   at most `small_drop` (10 %): the window is held for the next epoch; a larger one: `cwnd <-
//!   (1 - gamma) cwnd` with gamma = 1/8. On three duplicate ACKs the loss is taken as congestion
//!   (Reno's halving, beta = 1/2) only if the last epoch's rate had dropped by more than
//!   `small_drop`; otherwise it is a transient (wireless) error: the packet is resent with the
//!   window unchanged. Timeouts are Reno's.
//!
//! Choices where the paper is silent (docs/seed003.md): both measure from the sender's
//! cumulative ACKs. TCP-Real's receiver stamps its receiving rate into ACKs; with one ACK per
//! data packet and an uncongested reverse path, the ACKs arrive at the rate the data arrived,
//! one reverse delay later, so the sender reads the same rate without a new header field. An
//! epoch (and a Westwood+ sample) closes at the first new ACK at least max(last RTT sample,
//! 50 ms) after it opened; `RTT_min` is the smallest RTT sample.

/// Which variant, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RateKind {
    Westwood { gain: f64 },
    Real { gamma: f64, small_drop: f64 },
}

/// Shortest epoch, seconds (Linux's Westwood+ uses the same floor).
const MIN_EPOCH_S: f64 = 0.05;

#[derive(Debug, Clone)]
pub(crate) struct RateCtl {
    pub kind: RateKind,
    epoch_start: Option<f64>,
    epoch_packets: u64,
    /// Smallest and latest RTT samples, seconds.
    pub rtt_min: f64,
    pub rtt_last: f64,
    /// Westwood+'s filtered bandwidth estimate, packets/s (0 before the first sample).
    pub bwe: f64,
    /// TCP-Real: the last two epochs' receiving rates, packets/s.
    rate_prev: f64,
    rate_cur: f64,
    /// TCP-Real: hold the window through this epoch (a small rate decrease).
    pub hold: bool,
    /// TCP-Real: the last closed epoch saw a significant rate decrease (congestion).
    pub congested: bool,
    /// TCP-Real: losses judged transient (no window cut), and epochs whose rate drop asked for
    /// a gentle gamma decrease (applied in congestion avoidance only, `TcpSender::rate_ack`).
    pub transient_losses: u64,
    pub gamma_cuts: u64,
}

/// What closing an epoch asks the sender to do to its window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum EpochAction {
    None,
    /// TCP-Real's gentle decrease: multiply cwnd by this.
    Scale(f64),
}

impl RateCtl {
    pub fn new(kind: RateKind) -> Self {
        RateCtl {
            kind,
            epoch_start: None,
            epoch_packets: 0,
            rtt_min: f64::INFINITY,
            rtt_last: 0.0,
            bwe: 0.0,
            rate_prev: 0.0,
            rate_cur: 0.0,
            hold: false,
            congested: false,
            transient_losses: 0,
            gamma_cuts: 0,
        }
    }

    pub fn reset(&mut self) {
        *self = RateCtl::new(self.kind);
    }

    /// A new RTT sample, seconds.
    pub fn rtt_sample(&mut self, tao: f64) {
        if tao > 0.0 {
            self.rtt_last = tao;
            self.rtt_min = self.rtt_min.min(tao);
        }
    }

    /// `packets` newly acknowledged at `now` (seconds). Closes the epoch when it is one RTT old.
    pub fn on_ack(&mut self, now: f64, packets: u64) -> EpochAction {
        let Some(start) = self.epoch_start else {
            self.epoch_start = Some(now);
            return EpochAction::None;
        };
        self.epoch_packets += packets;
        let len = now - start;
        if len < self.rtt_last.max(MIN_EPOCH_S) {
            return EpochAction::None;
        }
        let sample = self.epoch_packets as f64 / len;
        self.epoch_start = Some(now);
        self.epoch_packets = 0;
        match self.kind {
            RateKind::Westwood { gain } => {
                self.bwe = if self.bwe == 0.0 {
                    sample
                } else {
                    (1.0 - gain) * self.bwe + gain * sample
                };
                EpochAction::None
            }
            RateKind::Real { gamma, small_drop } => {
                self.rate_prev = self.rate_cur;
                self.rate_cur = sample;
                if self.rate_prev <= 0.0 {
                    return EpochAction::None;
                }
                let drop = 1.0 - self.rate_cur / self.rate_prev;
                self.congested = drop > small_drop;
                self.hold = drop > 0.0 && !self.congested;
                if self.congested {
                    self.gamma_cuts += 1;
                    EpochAction::Scale(1.0 - gamma)
                } else {
                    EpochAction::None
                }
            }
        }
    }

    /// TCP-Real: the sender has just cut its own window (a gamma cut, a congestion halving, a
    /// timeout). A rate per epoch of about cwnd / RTT falls with that cut, so the next epochs
    /// would read the sender's own decrease as congestion: another gamma cut, and the next loss
    /// halved instead of taken as transient (review, session 45: cuts cascaded about every
    /// other epoch). The paper's receiver measures the spacing of a wave's packets, which a
    /// smaller window does not change. So the epoch in progress is dropped and the first whole
    /// epoch after the cut is the new baseline.
    ///
    /// `answered`: the cut was Reno's halving or a timeout, the full response to congestion, so
    /// a loss is not congestion again until a new comparison shows a drop (kept, it halved the
    /// next random loss too: 2 % random loss, one bulk flow, 1.22 Mbit/s against 1.52). A gamma
    /// cut is only the gentle response to a falling rate: a loss before the next comparison is
    /// still congestion and halves (TCP(alpha, beta, gamma): beta answers congestion losses).
    /// Westwood+'s filtered estimate needs no such care.
    pub fn rebase(&mut self, answered: bool) {
        if let RateKind::Real { .. } = self.kind {
            self.epoch_start = None;
            self.epoch_packets = 0;
            self.rate_cur = 0.0;
            self.hold = false;
            if answered {
                self.congested = false;
            }
        }
    }

    /// Westwood+'s ssthresh after a loss, packets: `max(2, B RTT_min)`; `None` before the first
    /// bandwidth sample (the sender then halves as Reno does).
    pub fn westwood_ssthresh(&self) -> Option<i64> {
        (self.bwe > 0.0 && self.rtt_min.is_finite())
            .then(|| ((self.bwe * self.rtt_min).floor() as i64).max(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ACKs of one packet each, evenly over one 100 ms epoch starting at `t0`, at `pps`;
    /// returns what the last one asked.
    fn epoch(r: &mut RateCtl, t0: f64, pps: f64) -> EpochAction {
        let n = (pps * 0.1).round() as u64;
        let mut out = EpochAction::None;
        for k in 1..=n {
            out = r.on_ack(t0 + 0.1 * k as f64 / n as f64, 1);
        }
        out
    }

    #[test]
    fn westwood_samples_once_per_rtt_and_filters() {
        let mut w = RateCtl::new(RateKind::Westwood { gain: 0.1 });
        // An RTT a little under the epoch, so float rounding cannot close it one ACK late.
        w.rtt_sample(0.0975);
        assert_eq!(w.on_ack(0.0, 1), EpochAction::None); // opens the epoch
        epoch(&mut w, 0.0, 100.0);
        assert!((w.bwe - 100.0).abs() < 1e-6, "{}", w.bwe);
        // Then 200 packets/s: the estimate moves a tenth of the way.
        epoch(&mut w, 0.1, 200.0);
        assert!((w.bwe - 110.0).abs() < 1e-6, "{}", w.bwe);
        // B RTT_min = 110 * 0.0975 = 10.7 packets.
        assert_eq!(w.westwood_ssthresh(), Some(10));
        w.rtt_sample(0.01);
        assert_eq!(w.westwood_ssthresh(), Some(2), "at least 2");
    }

    /// A TCP-Real state (gamma 1/8, small drop 10 %, RTT 97.5 ms) after one 100 packets/s epoch.
    fn real_after_one_epoch() -> RateCtl {
        let mut r = RateCtl::new(RateKind::Real {
            gamma: 0.125,
            small_drop: 0.1,
        });
        r.rtt_sample(0.0975);
        r.on_ack(0.0, 0);
        epoch(&mut r, 0.0, 100.0);
        r
    }

    #[test]
    fn real_holds_on_small_drops_and_cuts_gently_on_large_ones() {
        let mut r = real_after_one_epoch();
        assert_eq!(epoch(&mut r, 0.1, 100.0), EpochAction::None);
        assert!(!r.hold && !r.congested);
        assert_eq!(epoch(&mut r, 0.2, 95.0), EpochAction::None);
        assert!(r.hold && !r.congested, "a 5 % drop holds the window");
        assert_eq!(epoch(&mut r, 0.3, 50.0), EpochAction::Scale(0.875));
        assert!(r.congested && !r.hold);
        assert_eq!(r.gamma_cuts, 1);
        assert_eq!(epoch(&mut r, 0.4, 60.0), EpochAction::None);
        assert!(!r.congested && !r.hold, "a rise grows again");
    }

    /// After the sender's own cut the rate is measured afresh: the epoch in progress is dropped,
    /// the first whole one is the new baseline (no verdict), and only a drop from it counts.
    #[test]
    fn real_measures_afresh_after_the_senders_own_cut() {
        let mut r = real_after_one_epoch();
        assert_eq!(epoch(&mut r, 0.1, 50.0), EpochAction::Scale(0.875));
        assert!(r.congested);
        r.rebase(false);
        assert!(r.congested, "a gamma cut leaves the path congested");
        // Half an epoch at the old rate is forgotten; the next ACK opens a new epoch.
        r.on_ack(0.23, 5);
        assert_eq!(epoch(&mut r, 0.23, 40.0), EpochAction::None, "the baseline");
        assert!(r.congested && !r.hold, "no verdict yet");
        assert_eq!(epoch(&mut r, 0.33, 60.0), EpochAction::None);
        assert!(!r.congested && !r.hold, "a rise after the cut");
        assert_eq!(epoch(&mut r, 0.43, 30.0), EpochAction::Scale(0.875));
        assert_eq!(r.gamma_cuts, 2);
        // A halving or a timeout answers it.
        r.rebase(true);
        assert!(!r.congested && !r.hold);
        // Westwood+ keeps its estimate.
        let mut w = RateCtl::new(RateKind::Westwood { gain: 0.1 });
        w.rtt_sample(0.0975);
        w.on_ack(0.0, 0);
        epoch(&mut w, 0.0, 100.0);
        let b = w.bwe;
        w.rebase(true);
        assert_eq!((w.bwe, w.epoch_start.is_some()), (b, true));
    }
}
