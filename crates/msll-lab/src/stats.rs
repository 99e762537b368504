//! Confidence intervals of a point's mean over its replications.
//!
//! The seeds plot the mean with error bars of +/- 1 standard deviation across replications (seed
//! 004 ch. 4 L777, ch. 5; seeds 000/001), and msll's figures and "nearly identical" claims keep
//! that convention. How precisely 30 replications pin the *mean* down is another question, the one
//! a reader comparing two curves asks: seed002.md sec. 1.1 recommends reporting mean +/- a 95 %
//! confidence interval, and peers.md sec. 5.2 lists confidence intervals across replications among
//! what a sweep engine owes its users. So every summary also carries the half-width of the
//! two-sided Student-t interval, `t(1 - alpha/2, n - 1) * sd / sqrt(n)`: the replications are
//! independent (each has its own error and traffic streams, `rng.rs`), their metrics are not
//! normal but their mean nearly is at n = 30.

use msll_sim::Summary;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The confidence level of the intervals msll writes (`ci95` in CSV/JSON, `--interval ci95`).
pub const CONFIDENCE: f64 = 0.95;

/// The two-sided Student-t quantile `t(1 - (1 - level) / 2, dof)`; NaN for `dof` < 1.
pub fn t_quantile(level: f64, dof: usize) -> f64 {
    if dof == 0 || !(0.0..1.0).contains(&level) {
        return f64::NAN;
    }
    match StudentsT::new(0.0, 1.0, dof as f64) {
        Ok(t) => t.inverse_cdf(1.0 - (1.0 - level) / 2.0),
        Err(_) => f64::NAN,
    }
}

/// Half-width of the 95 % confidence interval of `s.mean`: NaN when fewer than two
/// replications measured the metric (one value says nothing about its spread).
pub fn ci95(s: &Summary) -> f64 {
    if s.n < 2 || !s.sd.is_finite() {
        return f64::NAN;
    }
    t_quantile(CONFIDENCE, s.n - 1) * s.sd / (s.n as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_printed_tables() {
        // Two-sided 95 % critical values from any statistics table.
        for (dof, t) in [
            (1, 12.7062),
            (2, 4.3027),
            (4, 2.7764),
            (9, 2.2622),
            (29, 2.0452),
            (120, 1.9799),
        ] {
            let q = t_quantile(0.95, dof);
            assert!((q - t).abs() < 1e-4, "dof {dof}: {q} vs {t}");
        }
        assert!((t_quantile(0.99, 29) - 2.7564).abs() < 1e-4);
        // Large samples: the normal quantile.
        let big = t_quantile(0.95, 1_000_000);
        assert!((big - 1.95996).abs() < 5e-4, "{big}"); // statrs: ~1e-4 at 10^6 dof
        assert!(t_quantile(0.95, 0).is_nan());
        assert!(t_quantile(1.0, 5).is_nan());
    }

    #[test]
    fn half_width_of_thirty_replications() {
        let xs: Vec<f64> = (0..30).map(|i| i as f64).collect();
        let s = Summary::of(&xs);
        // sd of 0..29 = sqrt(77.5) = 8.8034; t(0.975, 29) = 2.04523.
        let expect = 2.045_230 * 77.5f64.sqrt() / 30f64.sqrt();
        assert!((ci95(&s) - expect).abs() < 1e-5, "{} vs {expect}", ci95(&s));
        assert!(ci95(&Summary::of(&[3.0])).is_nan());
        assert!(ci95(&Summary::of(&[])).is_nan());
        assert_eq!(ci95(&Summary::of(&[2.0, 2.0, 2.0])), 0.0);
    }

    /// What the interval promises, checked by simulation: about 95 % of intervals built from
    /// 10 normal draws cover the true mean (the sd alone, +/- 1 sd / sqrt(n), would cover ~66 %).
    #[test]
    fn intervals_cover_the_mean_ninety_five_times_in_a_hundred() {
        use rand::SeedableRng;
        use rand_distr::{Distribution, Normal};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let d = Normal::new(5.0, 2.0).unwrap();
        let trials = 20_000;
        let covered = (0..trials)
            .filter(|_| {
                let xs: Vec<f64> = (0..10).map(|_| d.sample(&mut rng)).collect();
                let s = Summary::of(&xs);
                (s.mean - 5.0).abs() <= ci95(&s)
            })
            .count();
        let rate = covered as f64 / trials as f64;
        // Binomial sd at 0.95 over 20,000 trials: 0.0015; allow ~4 sd.
        assert!((rate - 0.95).abs() < 0.006, "coverage {rate}");
    }
}
