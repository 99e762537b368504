//! Fit a Gilbert-Elliott channel to a recorded per-frame loss trace (`msll fit`).
//!
//! Users who measured a radio link have a trace of frame outcomes; msll can replay it (`error =
//! { model = "trace" }`) but a replayed trace is one sample path, the same in every replication.
//! A fitted two-state model gives independent paths with the same loss rate and burstiness
//! (peers.md sec. 5.2 lists a GE fitter beside the error models). Two fits, both printed as the
//! `error = { model = "gilbert-elliott", ... }` line a scenario (or mslld's `[impair]`) takes:
//! - **Gilbert** (closed form): the good state never loses and the bad state always does, so the
//!   state sequence is the trace and the transition probabilities are its transition counts;
//! - **Gilbert-Elliott** (Baum-Welch, i.e. expectation-maximisation for a two-state hidden Markov
//!   model with Bernoulli outcomes): also a loss probability in each state, so isolated losses
//!   inside long good stretches no longer count as one-frame bad periods.
//!
//! The model's step order is msll's (`ErrorModel::GilbertElliott`): a frame meets the current
//! state, then the chain steps.

use std::fmt;

/// A two-state per-frame channel, in `ErrorSpec::GilbertElliott`'s terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ge {
    pub p_good_to_bad: f64,
    pub p_bad_to_good: f64,
    pub loss_good: f64,
    pub loss_bad: f64,
}

impl Ge {
    /// Long-run frame loss of the chain: the error model's own analytic loss (a chain that
    /// never changes state, which no fit returns, stays in the good state).
    pub fn loss(&self) -> f64 {
        if self.p_good_to_bad + self.p_bad_to_good == 0.0 {
            return self.loss_good;
        }
        let spec = msll_sim::error_model::ErrorSpec::GilbertElliott {
            p_good_to_bad: self.p_good_to_bad,
            p_bad_to_good: self.p_bad_to_good,
            loss_good: self.loss_good,
            loss_bad: self.loss_bad,
            initial: Default::default(),
        };
        // Per-frame chain: the loss depends on neither frame size nor rate.
        spec.expected_frame_loss(1, 1.0).unwrap_or(f64::NAN)
    }
}

impl fmt::Display for Ge {
    /// The scenario-file form, every value in its shortest exact form (a fixed number of decimals
    /// turned the rare transitions of long traces into 0 or doubled them).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error = {{ model = \"gilbert-elliott\", p_good_to_bad = {}, p_bad_to_good = {}, \
             loss_good = {}, loss_bad = {} }}",
            self.p_good_to_bad, self.p_bad_to_good, self.loss_good, self.loss_bad
        )
    }
}

/// What a trace looks like: length, losses, loss bursts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceStats {
    pub frames: usize,
    pub lost: usize,
    /// Runs of consecutive lost frames.
    pub bursts: usize,
}

impl TraceStats {
    pub fn of(trace: &[bool]) -> Self {
        let lost = trace.iter().filter(|&&l| l).count();
        let bursts = trace
            .iter()
            .enumerate()
            .filter(|&(i, &l)| l && (i == 0 || !trace[i - 1]))
            .count();
        TraceStats {
            frames: trace.len(),
            lost,
            bursts,
        }
    }
    pub fn loss(&self) -> f64 {
        self.lost as f64 / self.frames.max(1) as f64
    }
    pub fn mean_burst(&self) -> f64 {
        self.lost as f64 / self.bursts.max(1) as f64
    }
}

/// Read a frames trace: `0`/`1` per frame, whitespace ignored (the `trace` error model's
/// `frames` format, read by the same function).
pub fn parse_frames(text: &str) -> Result<Vec<bool>, String> {
    let v = msll_sim::error_model::parse_frame_trace(text)?;
    if v.len() < 2 {
        return Err(format!(
            "{} frame outcomes: a fit needs at least 2 (and many more to mean anything)",
            v.len()
        ));
    }
    Ok(v)
}

/// The Gilbert fit, or `None` when the trace never changes state (all lost or none lost: then
/// the channel is `bernoulli` with p = 0 or 1, which the caller says).
///
/// A transition the trace never makes (it starts in its only loss burst, or ends in it) is
/// estimated as half an observation, (0 + 1/2) / (n + 1), not 0: a zero would make that state
/// absorbing, and a trace with one final burst of 10 % of its frames would fit a channel that
/// loses everything in the long run.
pub fn gilbert(trace: &[bool]) -> Option<Ge> {
    let mut n = [[0u64; 2]; 2];
    for w in trace.windows(2) {
        n[w[0] as usize][w[1] as usize] += 1;
    }
    let (from_good, from_bad) = (n[0][0] + n[0][1], n[1][0] + n[1][1]);
    if n[0][1] + n[1][0] == 0 {
        return None;
    }
    let rate = |k: u64, of: u64| {
        if k == 0 {
            0.5 / (of + 1) as f64
        } else {
            k as f64 / of as f64
        }
    };
    Some(Ge {
        p_good_to_bad: rate(n[0][1], from_good),
        p_bad_to_good: rate(n[1][0], from_bad),
        loss_good: 0.0,
        loss_bad: 1.0,
    })
}

/// The Baum-Welch result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fitted {
    pub ge: Ge,
    /// Log-likelihood of the trace under `ge` (natural log).
    pub log_likelihood: f64,
    pub iterations: usize,
}

/// Most EM iterations.
pub const MAX_ITERATIONS: usize = 1000;

/// Fit all four parameters by expectation-maximisation, starting from the Gilbert fit with the
/// state losses pulled in from 0 and 1 (EM cannot leave a probability of exactly 0 or 1). Stops
/// when an iteration changes the log-likelihood by less than `1e-10` of its size. The bad state
/// is the one that loses more. `None` as for [`gilbert`].
///
/// The first frame's state is taken from the chain's stationary distribution rather than
/// estimated on its own, so this is a generalised EM (the initial distribution is not part of
/// the M-step): on traces of thousands of frames the difference is one frame's worth.
pub fn gilbert_elliott(trace: &[bool]) -> Option<Fitted> {
    let g = gilbert(trace)?;
    let mut m = Ge {
        p_good_to_bad: g.p_good_to_bad.clamp(1e-4, 0.5),
        p_bad_to_good: g.p_bad_to_good.clamp(1e-4, 0.9),
        loss_good: 0.01,
        loss_bad: 0.9,
    };
    let mut prev = f64::NEG_INFINITY;
    let mut it = 0;
    while it < MAX_ITERATIONS {
        it += 1;
        let (next, ll) = em_step(trace, &m);
        m = next;
        if (ll - prev).abs() <= 1e-10 * ll.abs() {
            break;
        }
        prev = ll;
    }
    // `em_step` scores the model it is given: one more pass scores the one returned.
    let (_, ll) = em_step(trace, &m);
    if m.loss_good > m.loss_bad {
        m = Ge {
            p_good_to_bad: m.p_bad_to_good,
            p_bad_to_good: m.p_good_to_bad,
            loss_good: m.loss_bad,
            loss_bad: m.loss_good,
        };
    }
    Some(Fitted {
        ge: m,
        log_likelihood: ll,
        iterations: it,
    })
}

/// One forward-backward pass (scaled) and the re-estimate; returns the new model and the
/// log-likelihood of the trace under the old one. The initial state is the stationary one.
fn em_step(trace: &[bool], m: &Ge) -> (Ge, f64) {
    let a = [
        [1.0 - m.p_good_to_bad, m.p_good_to_bad],
        [m.p_bad_to_good, 1.0 - m.p_bad_to_good],
    ];
    let emit = |s: usize, lost: bool| {
        let p = if s == 0 { m.loss_good } else { m.loss_bad };
        if lost {
            p
        } else {
            1.0 - p
        }
    };
    let t_len = trace.len();
    let s = m.p_good_to_bad + m.p_bad_to_good;
    let pi = if s > 0.0 {
        [m.p_bad_to_good / s, m.p_good_to_bad / s]
    } else {
        [1.0, 0.0]
    };
    // Forward, normalised at every step (the scale factors give the likelihood).
    let mut alpha = vec![[0.0f64; 2]; t_len];
    let mut ll = 0.0;
    for t in 0..t_len {
        let mut x = [0.0; 2];
        for (j, xj) in x.iter_mut().enumerate() {
            let prior = if t == 0 {
                pi[j]
            } else {
                alpha[t - 1][0] * a[0][j] + alpha[t - 1][1] * a[1][j]
            };
            *xj = prior * emit(j, trace[t]);
        }
        let c = (x[0] + x[1]).max(f64::MIN_POSITIVE);
        ll += c.ln();
        alpha[t] = [x[0] / c, x[1] / c];
    }
    // Backward with the posteriors accumulated on the way.
    let mut beta = [1.0f64; 2];
    let mut trans = [[0.0f64; 2]; 2];
    let mut occ = [0.0f64; 2];
    let mut occ_lost = [0.0f64; 2];
    for t in (0..t_len).rev() {
        let g = [alpha[t][0] * beta[0], alpha[t][1] * beta[1]];
        let gs = (g[0] + g[1]).max(f64::MIN_POSITIVE);
        for s in 0..2 {
            let gamma = g[s] / gs;
            occ[s] += gamma;
            if trace[t] {
                occ_lost[s] += gamma;
            }
        }
        if t > 0 {
            // xi(t-1, i, j) is proportional to alpha[t-1][i] a[i][j] emit(j, o_t) beta[j].
            let mut xi = [[0.0f64; 2]; 2];
            let mut z = 0.0;
            for i in 0..2 {
                for j in 0..2 {
                    xi[i][j] = alpha[t - 1][i] * a[i][j] * emit(j, trace[t]) * beta[j];
                    z += xi[i][j];
                }
            }
            let z = z.max(f64::MIN_POSITIVE);
            for i in 0..2 {
                for j in 0..2 {
                    trans[i][j] += xi[i][j] / z;
                }
            }
            let nb = [
                a[0][0] * emit(0, trace[t]) * beta[0] + a[0][1] * emit(1, trace[t]) * beta[1],
                a[1][0] * emit(0, trace[t]) * beta[0] + a[1][1] * emit(1, trace[t]) * beta[1],
            ];
            let nz = (nb[0] + nb[1]).max(f64::MIN_POSITIVE);
            beta = [nb[0] / nz, nb[1] / nz];
        }
    }
    let ratio = |x: f64, y: f64, old: f64| if y > 0.0 { x / y } else { old };
    let next = Ge {
        p_good_to_bad: ratio(trans[0][1], trans[0][0] + trans[0][1], m.p_good_to_bad),
        p_bad_to_good: ratio(trans[1][0], trans[1][0] + trans[1][1], m.p_bad_to_good),
        loss_good: ratio(occ_lost[0], occ[0], m.loss_good),
        loss_bad: ratio(occ_lost[1], occ[1], m.loss_bad),
    };
    (next, ll)
}

#[cfg(test)]
mod tests {
    use super::*;
    use msll_proto::Instant;
    use msll_sim::error_model::ErrorSpec;
    use msll_sim::rng::Streams;

    fn sample(spec: &ErrorSpec, n: usize, seed: u64) -> Vec<bool> {
        let st = Streams::new(seed, 0);
        let mut m = spec
            .build(st.fixed("s"), st.fixed("d"), std::path::Path::new("."))
            .unwrap();
        (0..n)
            .map(|_| m.frame_lost(Instant::ZERO, Instant::ZERO, 100))
            .collect()
    }

    fn near(got: f64, want: f64, rel: f64, what: &str) {
        assert!(
            (got - want).abs() <= rel * want,
            "{what}: fitted {got}, true {want}"
        );
    }

    #[test]
    fn gilbert_recovers_a_gilbert_channel() {
        let spec = ErrorSpec::GilbertElliott {
            p_good_to_bad: 0.02,
            p_bad_to_good: 0.3,
            loss_good: 0.0,
            loss_bad: 1.0,
            initial: Default::default(),
        };
        let trace = sample(&spec, 200_000, 1);
        let g = gilbert(&trace).unwrap();
        near(g.p_good_to_bad, 0.02, 0.05, "p");
        near(g.p_bad_to_good, 0.3, 0.05, "r");
        // The closed form reproduces the trace's loss rate (up to the first/last frame).
        near(g.loss(), TraceStats::of(&trace).loss(), 1e-3, "loss");
    }

    #[test]
    fn baum_welch_recovers_a_gilbert_elliott_channel() {
        let truth = Ge {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.1,
            loss_good: 0.005,
            loss_bad: 0.6,
        };
        let spec = ErrorSpec::GilbertElliott {
            p_good_to_bad: truth.p_good_to_bad,
            p_bad_to_good: truth.p_bad_to_good,
            loss_good: truth.loss_good,
            loss_bad: truth.loss_bad,
            initial: Default::default(),
        };
        let trace = sample(&spec, 300_000, 2);
        let f = gilbert_elliott(&trace).unwrap();
        assert!(f.iterations < MAX_ITERATIONS, "{f:?}");
        near(
            f.ge.p_good_to_bad,
            truth.p_good_to_bad,
            0.15,
            "p_good_to_bad",
        );
        near(
            f.ge.p_bad_to_good,
            truth.p_bad_to_good,
            0.15,
            "p_bad_to_good",
        );
        near(f.ge.loss_good, truth.loss_good, 0.25, "loss_good");
        near(f.ge.loss_bad, truth.loss_bad, 0.1, "loss_bad");
        near(
            f.ge.loss(),
            TraceStats::of(&trace).loss(),
            0.02,
            "long-run loss",
        );
        // EM ends more likely than it started, and `log_likelihood` scores the model returned.
        let g = gilbert(&trace).unwrap();
        let start = Ge {
            p_good_to_bad: g.p_good_to_bad.clamp(1e-4, 0.5),
            p_bad_to_good: g.p_bad_to_good.clamp(1e-4, 0.9),
            loss_good: 0.01,
            loss_bad: 0.9,
        };
        let (_, ll_start) = em_step(&trace, &start);
        assert!(f.log_likelihood > ll_start + 1.0, "{f:?} vs {ll_start}");
        let (_, ll_end) = em_step(&trace, &f.ge);
        assert_eq!(f.log_likelihood, ll_end);
    }

    #[test]
    fn a_transition_never_seen_is_not_taken_as_impossible() {
        // One final burst: 1 frame in 10 lost, the bad state never left.
        let trace = parse_frames("000000000 1").unwrap();
        let g = gilbert(&trace).unwrap();
        assert_eq!(g.p_bad_to_good, 0.5);
        assert!((g.p_good_to_bad - 1.0 / 9.0).abs() < 1e-12, "{g:?}");
        assert!(g.loss() < 0.25, "{g:?}");
        // Small probabilities print exactly, not rounded to six decimals.
        let tiny = Ge {
            p_good_to_bad: 4.2e-7,
            ..g
        };
        assert!(
            tiny.to_string().contains("p_good_to_bad = 0.00000042,"),
            "{tiny}"
        );
    }

    #[test]
    fn traces_that_never_change_state_have_no_fit() {
        assert_eq!(gilbert(&[false; 10]), None);
        assert_eq!(gilbert_elliott(&[true; 10]), None);
        assert!(parse_frames("0 1\n1 x").unwrap_err().contains("line 2"));
        assert!(parse_frames("1").is_err());
        let s = TraceStats::of(&parse_frames("0110 0111 0").unwrap());
        assert_eq!((s.frames, s.lost, s.bursts), (9, 5, 2));
        assert_eq!(s.mean_burst(), 2.5);
    }
}
