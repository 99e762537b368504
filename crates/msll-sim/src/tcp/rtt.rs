//! ns-2's tick-based RTT estimator and RTO (ns2-semantics.md 1.9), bit for bit.
//!
//! ```text
//!   ACK of the timed segment --tao--> t_rtt_ (ticks, >= 1) --> S = 8*srtt, V = 4*rttvar (ints)
//!                                                          --> t_rtxcur_ = (V + S>>3) * tick
//!   rtt_timeout() = clamp(t_rtxcur_ [floored at min_rto] * t_backoff_, .. max_rto), >= 2 ticks
//!   timeout --> rtt_backoff(): t_backoff_ *= 2 (to 64); past 8 the estimator is "clobbered"
//! ```
//!
//! The scaled integers are kept exactly as ns-2 keeps them because the truncation is what makes a
//! 500 ms tick settle at an RTO of 1.5 s or 2 s (1.9, "cannot go lower").

use super::TcpConfig;

/// `T_SRTT_BITS`: srtt is kept as 8 * srtt (ns2-semantics.md 1.1).
const SRTT_BITS: u32 = 3;
/// `T_RTTVAR_BITS`: rttvar is kept as 4 * rttvar.
const RTTVAR_BITS: u32 = 2;

/// The estimator state of one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct RttEstimator {
    tick: f64,
    /// `tick` is a power of two (ns-2's default 0.5 s is): [`rem_tick`] then needs no `fmod`.
    tick_pow2: bool,
    min_rto: f64,
    max_rto: f64,
    rfc2988: bool,
    backoff_past_64: bool,
    rttvar_exp: u32,
    /// Phase of the simulated tick clock, seconds in [0, tick) (`boot_time_`).
    boot_time: f64,
    /// Last sample, ticks (`t_rtt_`).
    t_rtt: i64,
    /// 8 * srtt in ticks (`t_srtt_`).
    t_srtt: i64,
    /// 4 * rttvar in ticks (`t_rttvar_`).
    t_rttvar: i64,
    /// Current RTO before backoff, seconds (`t_rtxcur_`).
    t_rtxcur: f64,
    /// Backoff multiplier (`t_backoff_`).
    t_backoff: u64,
    samples: u64,
    /// `RtoModel::ExactNearest`: samples, SRTT and deviation in seconds, the RTO rounded to the
    /// nearest tick into `t_rtxcur`. The tick estimator's fields are then unused (`backoff`
    /// still folds them as ns-2 does, and folds these the same way).
    exact: Option<ExactRtt>,
}

/// The thesis's estimator state (seed 002 A20), seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ExactRtt {
    srtt: f64,
    dev: f64,
}

impl RttEstimator {
    /// `rtt_init()`: `boot_time` is the tick-clock phase; it is reduced modulo the tick.
    pub fn new(cfg: &TcpConfig, boot_time: f64) -> Self {
        let mut e = RttEstimator {
            tick: cfg.tick,
            tick_pow2: is_pow2(cfg.tick),
            min_rto: cfg.min_rto,
            max_rto: cfg.max_rto,
            rfc2988: cfg.rfc2988,
            backoff_past_64: cfg.backoff_past_64,
            rttvar_exp: cfg.rttvar_exp,
            boot_time: 0.0,
            t_rtt: 0,
            t_srtt: 0,
            t_rttvar: 0,
            t_rtxcur: cfg.rto_init,
            t_backoff: 1,
            samples: 0,
            exact: (cfg.rto_model == super::RtoModel::ExactNearest).then_some(ExactRtt {
                srtt: cfg.srtt_init,
                dev: cfg.rttvar_init,
            }),
        };
        e.set_boot_time(boot_time);
        e.init(cfg);
        e
    }

    /// `rtt_init()`: `srtt_init_`/`rttvar_init_` (seconds) converted to scaled ticks, RTO back
    /// to `rtxcur_init_`, backoff 1.
    pub(crate) fn init(&mut self, cfg: &TcpConfig) {
        self.t_rtt = 0;
        self.t_srtt = ((cfg.srtt_init / self.tick) as i64) << SRTT_BITS;
        self.t_rttvar = ((cfg.rttvar_init / self.tick) as i64) << RTTVAR_BITS;
        self.t_rtxcur = cfg.rto_init;
        self.t_backoff = 1;
        if let Some(x) = self.exact.as_mut() {
            *x = ExactRtt {
                srtt: cfg.srtt_init,
                dev: cfg.rttvar_init,
            };
        }
    }

    pub(crate) fn set_boot_time(&mut self, boot_time: f64) {
        let b = if boot_time.is_finite() {
            rem_tick(boot_time, self.tick, self.tick_pow2)
        } else {
            0.0
        };
        self.boot_time = b;
    }

    /// Quantise a measured RTT `tao` (seconds) of a segment whose ACK arrived at `now` (seconds)
    /// to ticks: the number of tick-clock edges in (send time, now], at least 1 (1.9).
    pub fn ticks(&self, now: f64, tao: f64) -> i64 {
        let tickoff = rem_tick((now - tao) + self.boot_time, self.tick, self.tick_pow2);
        let t = ((tao + tickoff) / self.tick).floor() as i64;
        t.max(1)
    }

    /// `rtt_update(tao)`: feed one sample measured at `now` (both seconds).
    pub fn update(&mut self, now: f64, tao: f64) {
        self.samples += 1;
        if let Some(x) = self.exact.as_mut() {
            // Seed 002 Eqns 2.1-2.3: the deviation moves with the old SRTT, then SRTT. A zero
            // SRTT (the thesis starts at 1 s; `backoff` clears it past 8 backoffs, as ns-2 does)
            // takes the sample as SRTT and half of it as deviation, as ns-2's first sample.
            if x.srtt > 0.0 {
                x.dev += ((tao - x.srtt).abs() - x.dev) / (1 << RTTVAR_BITS) as f64;
                x.srtt += (tao - x.srtt) / (1 << SRTT_BITS) as f64;
            } else {
                x.srtt = tao;
                x.dev = tao / 2.0;
            }
            let rto = x.srtt + (1u64 << self.rttvar_exp) as f64 * x.dev;
            self.t_rtxcur = (rto / self.tick).round() * self.tick;
            return;
        }
        self.t_rtt = self.ticks(now, tao);
        self.update_ticks(self.t_rtt);
    }

    /// The integer part of `rtt_update`, for a sample already in ticks.
    pub fn update_ticks(&mut self, t_rtt: i64) {
        self.t_rtt = t_rtt;
        if self.t_srtt != 0 {
            // Jacobson's filter in ns-2's scaled integers; ns-2 keeps `delta` in a 16-bit
            // short, which never matters at realistic RTTs (1.9).
            let mut delta = t_rtt - (self.t_srtt >> SRTT_BITS);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            delta = delta.abs() - (self.t_rttvar >> RTTVAR_BITS);
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            // First sample (or after a backoff clobber): srtt = rtt, rttvar = rtt / 2.
            self.t_srtt = t_rtt << SRTT_BITS;
            self.t_rttvar = t_rtt << (RTTVAR_BITS - 1);
        }
        // RTO = srtt + 2^rttvar_exp * rttvar, truncated to whole ticks. With rttvar_exp 2 this is
        // V + (S >> 3) ticks (1.9); the general form shifts V into srtt's scale first.
        let shift = self.rttvar_exp + SRTT_BITS - RTTVAR_BITS;
        let scaled = (self.t_rttvar << shift) + self.t_srtt;
        self.t_rtxcur = (scaled >> SRTT_BITS) as f64 * self.tick;
    }

    /// `rtt_timeout()`: the RTO to arm now, seconds (1.9).
    pub fn rto(&self) -> f64 {
        let backoff = self.t_backoff as f64;
        // The thesis's RTO (seed 002, `RtoModel::ExactNearest`) is clamped to its floor, then
        // doubled per back-off, as RFC 2988's: a sub-floor estimate (exact samples of 50 ms
        // round to 0) would otherwise stay at the floor through every back-off.
        let mut rto = if self.rfc2988 || self.exact.is_some() {
            let base = if self.t_rtxcur < self.min_rto {
                self.min_rto
            } else {
                self.t_rtxcur
            };
            base * backoff
        } else {
            let r = self.t_rtxcur * backoff;
            if r < self.min_rto {
                self.min_rto
            } else {
                r
            }
        };
        if rto > self.max_rto {
            rto = self.max_rto;
        }
        if rto < 2.0 * self.tick {
            rto = 2.0 * self.tick;
        }
        rto
    }

    /// `rtt_backoff()`, on a non-idle timeout (1.9).
    pub fn backoff(&mut self) {
        // 2.35 keeps doubling while the RTO is below the ceiling; the 2^40 guard only prevents
        // integer overflow with an absurd `max_rto`.
        if self.t_backoff < 64
            || (self.backoff_past_64 && self.rto() < self.max_rto && self.t_backoff < 1 << 40)
        {
            self.t_backoff *= 2;
        }
        // Past 8 backoffs the estimate is distrusted: srtt is folded into rttvar and zeroed, so the
        // next sample re-initialises both (the RTO itself is unchanged until then).
        if self.t_backoff > 8 {
            self.t_rttvar += self.t_srtt >> SRTT_BITS;
            self.t_srtt = 0;
            if let Some(x) = self.exact.as_mut() {
                x.dev += x.srtt;
                x.srtt = 0.0;
            }
        }
    }

    /// Clear the backoff (ACK of a timed segment, ns2-semantics.md 1.6).
    pub fn clear_backoff(&mut self) {
        self.t_backoff = 1;
    }

    pub fn backoff_factor(&self) -> u64 {
        self.t_backoff
    }
    /// `t_rtxcur_`, seconds.
    pub fn rtxcur(&self) -> f64 {
        self.t_rtxcur
    }
    /// (`t_srtt_`, `t_rttvar_`) in ns-2's scaled ticks.
    pub fn scaled(&self) -> (i64, i64) {
        (self.t_srtt, self.t_rttvar)
    }
    /// Last sample in ticks.
    pub fn last_sample_ticks(&self) -> i64 {
        self.t_rtt
    }
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

/// A positive, normal power of two (exponent bits only, no fraction bits).
fn is_pow2(x: f64) -> bool {
    x.is_normal() && x > 0.0 && x.to_bits() & ((1 << 52) - 1) == 0
}

/// `x.rem_euclid(tick)`, without libm's `fmod` (~1 % of case a's time, one call per RTT sample)
/// when `tick` is a power of two and `x` a positive normal number (or +0.0; -0.0 keeps its sign
/// through `fmod`, so it takes that path) of at most 2^52 ticks. The
/// result is then the same double: `x / tick` and `n * tick` only change the exponent (exact),
/// `n = floor(x / tick)` is exact, and `x - n * tick` is exact (for n = 0 it is x; for n >= 1,
/// n * tick <= x < 2 n * tick, Sterbenz's lemma), as `fmod` is. `tick_pow2` must be
/// `is_pow2(tick)`.
fn rem_tick(x: f64, tick: f64, tick_pow2: bool) -> f64 {
    if tick_pow2
        && x.is_sign_positive()
        && x < tick * 4_503_599_627_370_496.0
        && (x == 0.0 || x.is_normal())
    {
        let q = x / tick;
        // Quotients below the smallest normal would lose bits; none occurs for normal x and a
        // tick of at most 2^52 s, but the guard keeps the identity unconditional.
        if q == 0.0 || q.is_normal() {
            return x - q.floor() * tick;
        }
    }
    x.rem_euclid(tick)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The fast remainder is the same double as `rem_euclid` for any finite input, on
        /// power-of-two ticks (where it applies) and others (where it must fall back).
        #[test]
        fn rem_tick_equals_rem_euclid(
            x in prop_oneof![
                -1e4f64..1e4,
                0.0f64..4.0,
                any::<f64>().prop_filter("finite", |v| v.is_finite()),
            ],
            k in -12i32..12,
            other in prop_oneof![Just(0.01f64), Just(0.1), Just(0.3), Just(1.5), 1e-3f64..10.0],
        ) {
            let tick = 2f64.powi(k);
            prop_assert!(is_pow2(tick));
            prop_assert_eq!(rem_tick(x, tick, true).to_bits(), x.rem_euclid(tick).to_bits());
            prop_assert_eq!(
                rem_tick(x, other, is_pow2(other)).to_bits(),
                x.rem_euclid(other).to_bits()
            );
        }
    }

    #[test]
    fn pow2_ticks_are_recognised() {
        assert!(is_pow2(0.5) && is_pow2(1.0) && is_pow2(0.125) && is_pow2(1024.0));
        assert!(!is_pow2(0.01) && !is_pow2(0.3) && !is_pow2(0.0) && !is_pow2(-0.5));
        assert!(!is_pow2(f64::INFINITY) && !is_pow2(f64::MIN_POSITIVE / 2.0));
        // Edge values of the fast path, against the library remainder.
        for x in [
            0.0,
            -0.0,
            0.5,
            0.49999999999999994,
            1e-300,
            1.0 - f64::EPSILON,
            2.0f64.powi(51),
        ] {
            assert_eq!(
                rem_tick(x, 0.5, true).to_bits(),
                x.rem_euclid(0.5).to_bits(),
                "{x}"
            );
        }
    }

    /// Seed 002's estimator (A20): exact samples, the RTO rounded to the nearest 0.5 s, then
    /// clamped to [2, 240] s and doubled per back-off (RFC 2988's order); worked by hand from
    /// the thesis's Eqns 2.1-2.3 (SRTT 1 s and deviation 1 s at the start).
    #[test]
    fn exact_nearest_rounds_to_the_nearest_tick() {
        let cfg = TcpConfig {
            rto_model: super::super::RtoModel::ExactNearest,
            ..TcpConfig::wong1998()
        };
        let mut e = RttEstimator::new(&cfg, 0.123);
        assert_eq!(e.rto(), 5.0);
        // dev = 1 + (1.3 - 1) / 4 = 1.075, srtt = 1 + 1.3 / 8 = 1.1625: 5.4625 -> 5.5.
        e.update(10.0, 2.3);
        assert_eq!(e.rto(), 5.5);
        // dev = 1.075 + (0.7625 - 1.075) / 4 = 0.996875, srtt = 1.0671875: 5.0546875 -> 5.0.
        e.update(11.0, 0.4);
        assert!((e.rtxcur() - 5.0).abs() < 1e-12, "{}", e.rtxcur());
        // The sample's tick phase does not matter: the same samples at other times, another
        // clock phase.
        let mut f = RttEstimator::new(&cfg, 0.0);
        f.update(10.37, 2.3);
        f.update(11.91, 0.4);
        assert_eq!(f.rtxcur(), e.rtxcur());
        // ns-2's ticks (the default model) on those samples: at clock phase 0 the first counts
        // 4 or 5 edges and the second 1, truncated, 4.5 s; the models are a real choice.
        let ns2 = TcpConfig {
            rto_model: super::super::RtoModel::Ns2Ticks,
            ..cfg.clone()
        };
        let mut n = RttEstimator::new(&ns2, 0.0);
        n.update(10.37, 2.3);
        n.update(11.91, 0.4);
        assert_eq!(n.rtxcur(), 4.5);
        assert_ne!(n.rtxcur(), f.rtxcur());
        // Steady 0.3 s samples: the RTO falls to 0.3 + 4 x ~0 -> 0.5, clamped at min_rto 2 s.
        for k in 0..200 {
            e.update(20.0 + k as f64, 0.3);
        }
        assert_eq!(e.rtxcur(), 0.5);
        assert_eq!(e.rto(), 2.0);
        // Clamped, then doubled (the thesis: "RTO <- 2 x RTO"), even with 2.1b4's order of
        // the two in ns-2's model (`rfc2988` off in wong1998).
        assert!(!cfg.rfc2988);
        e.backoff();
        assert_eq!(e.rto(), 4.0);
        e.backoff();
        e.backoff();
        assert_eq!(e.rto(), 16.0);
        // Half-way values round away from zero (0.75 s is 1.5 ticks: 2 ticks, 1.0 s).
        let mut g = RttEstimator::new(
            &TcpConfig {
                srtt_init: 0.0,
                rttvar_init: 0.0,
                min_rto: 0.0,
                ..cfg.clone()
            },
            0.0,
        );
        g.update(1.0, 0.25);
        // First sample: srtt 0.25, dev 0.125: 0.25 + 0.5 = 0.75 -> 1.0 (0.75 / 0.5 = 1.5).
        assert_eq!(g.rtxcur(), 1.0);
    }

    fn est(tick: f64) -> RttEstimator {
        let cfg = TcpConfig {
            tick,
            ..TcpConfig::ns2_2_1b4(1000)
        };
        RttEstimator::new(&cfg, 0.0)
    }

    /// ns2-semantics.md 1.9, worked example, tick 0.5 s.
    #[test]
    fn worked_example_half_second_tick() {
        let mut e = est(0.5);
        let want = [
            (1, 8, 2, 1.5),
            (1, 8, 2, 1.5),
            (1, 8, 2, 1.5),
            (2, 9, 3, 2.0),
            (1, 9, 3, 2.0),
            (1, 9, 3, 2.0),
        ];
        for (m, s, v, rto) in want {
            e.update_ticks(m);
            assert_eq!(e.scaled(), (s, v), "after sample {m}");
            assert!((e.rto() - rto).abs() < 1e-12, "rto {} != {rto}", e.rto());
        }
    }

    /// ns2-semantics.md 1.9, worked example, tick 10 ms (no floor in 2.1b4 arithmetic).
    #[test]
    fn worked_example_10ms_tick() {
        let mut e = est(0.01);
        let want = [
            (20, 160, 40, 0.60),
            (20, 160, 30, 0.50),
            (21, 161, 24, 0.44),
            (20, 161, 18, 0.38),
            (30, 171, 24, 0.45),
            (20, 170, 19, 0.40),
            (20, 169, 16, 0.37),
        ];
        for (m, s, v, rto) in want {
            e.update_ticks(m);
            assert_eq!(e.scaled(), (s, v), "after sample {m}");
            assert!(
                (e.rtxcur() - rto).abs() < 1e-9,
                "rto {} != {rto}",
                e.rtxcur()
            );
        }
    }

    #[test]
    fn tick_quantisation_counts_clock_edges() {
        // tick 0.5, phase 0: a segment sent at 0.9 and ACKed at 1.1 crosses the edge at 1.0.
        let e = est(0.5);
        assert_eq!(e.ticks(1.1, 0.2), 1);
        // Sent at 0.1, ACKed at 0.4: no edge, floored at 1 tick.
        assert_eq!(e.ticks(0.4, 0.3), 1);
        // Sent at 0.4, ACKed at 1.6: edges at 0.5, 1.0, 1.5.
        assert_eq!(e.ticks(1.6, 1.2), 3);
        // Phase 0.3: edges at 0.2, 0.7, 1.2 ...; sent 0.1, ACKed 0.8 crosses two.
        let mut e = est(0.5);
        e.set_boot_time(0.3);
        assert_eq!(e.ticks(0.8, 0.7), 2);
    }

    #[test]
    fn rto_floor_and_initial_value() {
        let e = est(0.5);
        assert_eq!(e.rto(), 6.0, "2.1b4 rtxcur_init_ before any sample");
        let mut e = est(0.5);
        e.update_ticks(1);
        e.update_ticks(1);
        // V settles at 2 ticks, S at 8: 1.5 s; a 2-tick floor (1 s) never binds here.
        assert_eq!(e.rto(), 1.5);
        let cfg = TcpConfig::ns2_2_35(1000);
        let mut e = RttEstimator::new(&cfg, 0.0);
        assert_eq!(e.rto(), 3.0);
        e.update_ticks(2); // 20 ms RTT: S=16, V=4 -> 6 ticks = 60 ms, floored to 200 ms
        assert!((e.rto() - 0.2).abs() < 1e-12);
        e.backoff();
        assert!(
            (e.rto() - 0.4).abs() < 1e-12,
            "rfc2988: floor before backoff"
        );
    }

    #[test]
    fn backoff_doubles_to_64_then_clobbers() {
        let mut e = est(0.5);
        e.update_ticks(1); // S=8 V=2 RTO 1.5
        let mut rtos = vec![];
        for _ in 0..8 {
            e.backoff();
            rtos.push(e.rto());
        }
        assert_eq!(rtos, [3.0, 6.0, 12.0, 24.0, 48.0, 96.0, 96.0, 96.0]);
        // The 4th backoff (x16) clobbered S into V: V = 2 + 1 = 3, S = 0; later ones add 0.
        assert_eq!(e.scaled(), (0, 3));
        // The next sample re-initialises both.
        e.clear_backoff();
        e.update_ticks(1);
        assert_eq!(e.scaled(), (8, 2));
    }

    #[test]
    fn backoff_past_64_in_2_35() {
        let cfg = TcpConfig::ns2_2_35(1000);
        let mut e = RttEstimator::new(&cfg, 0.0);
        for _ in 0..10 {
            e.backoff();
        }
        // 3 s * 2^k reaches the 60 s ceiling: the multiplier stops once rto() >= max_rto.
        // x32 already gives 96 s > 60 s, but below 64 the doubling is unconditional.
        assert_eq!(e.rto(), 60.0);
        assert_eq!(e.backoff_factor(), 64);
    }
}
