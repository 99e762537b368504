//! Closed-form TCP throughput models and the loss composition of seed 003 (Papadimitriou &
//! Tsaoussidis 2006, sec. 3; `seed003.md` sec. 2.2), so that simulated runs can be set beside
//! the analysis the paper builds its argument on.
//!
//! - [`mathis_pps`]: Eq. (3), Mathis et al.'s "macroscopic" model `C0 / (RTT sqrt(p))` packets per
//!   second, `C0 = sqrt(3/2)` (no timeouts, duplicate ACKs the only congestion signal);
//! - [`tfrc_pps`]: Eq. (2), the TFRC response function (Padhye et al.'s model with `b = 1`);
//! - [`end_to_end_loss`] and [`snoop_limit_loss`]: Eqs (4) and (6), losses at two congested nodes
//!   A and B and on the wireless link, without and with local recovery;
//! - [`retry_limited_loss`]: `seed003.md` sec. 2.5 (not in the paper): a local ARQ that gives up
//!   after `m` retransmissions leaves `p_W^(m+1)`, interpolating between Eq. (4) (m = 0) and
//!   Eq. (6) (m -> infinity).
//!
//! A run reports `ftp.mathis_bps`, Eq. (3) fed with the run's own mean RTT and loss-event rate, as
//! the spec recommends (`seed003.md` sec. 2.2, "hidden assumption": the paper's comparison keeps
//! RTT fixed, the simulation does not).

/// `C0 = sqrt(3/2)`, the constant of Eq. (3) for one ACK per segment and periodic losses.
pub const MATHIS_C0: f64 = 1.224_744_871_391_589;

/// Eq. (3): packets per second of a TCP flow with round-trip time `rtt_s` and loss probability
/// `p` (both > 0), `C0 / (RTT sqrt(p))`. Multiply by the segment size for bytes per second.
/// `None` where the model is undefined (`p` outside (0, 1], `rtt_s <= 0` or not finite): with no
/// loss Eq. (3) grows without bound (`seed003.md` sec. 2.2, "degenerate case"; cap it with
/// [`capped_pps`]).
pub fn mathis_pps(p: f64, rtt_s: f64) -> Option<f64> {
    (p > 0.0 && p <= 1.0 && rtt_s > 0.0 && rtt_s.is_finite())
        .then(|| MATHIS_C0 / (rtt_s * p.sqrt()))
}

/// Eq. (2): the TFRC response function, packets per second, for loss-event rate `p`, round-trip
/// time `rtt_s` and retransmission timeout `rto_s` (one packet acknowledged per ACK):
/// `1 / (RTT sqrt(2p/3) + RTO * 3 sqrt(3p/8) * p (1 + 32 p^2))`. `None` where undefined.
pub fn tfrc_pps(p: f64, rtt_s: f64, rto_s: f64) -> Option<f64> {
    tfrc_pps_b(p, rtt_s, rto_s, 1.0)
}

/// Eq. (2) in Padhye et al.'s general form, `b` packets acknowledged per ACK (2 with delayed
/// ACKs): `1 / (RTT sqrt(2bp/3) + RTO * 3 sqrt(3bp/8) * p (1 + 32 p^2))`. The paper's Eq. (2)
/// is `b = 1`.
pub fn tfrc_pps_b(p: f64, rtt_s: f64, rto_s: f64, b: f64) -> Option<f64> {
    let ok = p > 0.0 && p <= 1.0 && rtt_s > 0.0 && rtt_s.is_finite() && rto_s >= 0.0 && b >= 1.0;
    ok.then(|| {
        let denom = rtt_s * (2.0 * b * p / 3.0).sqrt()
            + rto_s * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
        1.0 / denom
    })
}

/// Eq. (3) bounded as `seed003.md` sec. 2.2 recommends, `min(C0 / (RTT sqrt(p)), W / RTT,
/// link_pps)`: the window (`window` packets) and the bottleneck (`link_pps`) cap the flow, and
/// `p = 0` gives the smaller of the two caps instead of infinity.
pub fn capped_pps(p: f64, rtt_s: f64, window: f64, link_pps: f64) -> Option<f64> {
    if !(rtt_s > 0.0 && rtt_s.is_finite() && window > 0.0 && link_pps > 0.0) {
        return None;
    }
    let caps = (window / rtt_s).min(link_pps);
    if p == 0.0 {
        return Some(caps);
    }
    mathis_pps(p, rtt_s).map(|t| t.min(caps))
}

/// Eq. (4): the end-to-end loss rate through node A, node B and the wireless link,
/// `p_A + (1 - p_A) p_B + (1 - p_A)(1 - p_B) p_W` (independent, sequential losses).
pub fn end_to_end_loss(p_a: f64, p_b: f64, p_w: f64) -> f64 {
    p_a + (1.0 - p_a) * p_b + (1.0 - p_a) * (1.0 - p_b) * p_w
}

/// Eq. (6): the end-to-end loss rate when local recovery hides every wireless loss (`p_W -> 0`),
/// `p_A + (1 - p_A) p_B`. It does not depend on `p_W` (claim A1).
pub fn snoop_limit_loss(p_a: f64, p_b: f64) -> f64 {
    end_to_end_loss(p_a, p_b, 0.0)
}

/// `seed003.md` sec. 2.5 (an extension, not in the paper): the wireless loss left by a local ARQ
/// that retransmits a frame at most `m` times over an i.i.d. channel, `p_W^(m+1)`.
pub fn retry_limited_loss(p_w: f64, m: u32) -> f64 {
    p_w.powf(m as f64 + 1.0)
}

/// Expected transmissions per frame for that ARQ, `(1 - p_W^(m+1)) / (1 - p_W)`.
pub fn retry_limited_transmissions(p_w: f64, m: u32) -> f64 {
    if p_w >= 1.0 {
        return m as f64 + 1.0;
    }
    (1.0 - p_w.powf(m as f64 + 1.0)) / (1.0 - p_w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// `seed003.md` sec. 2.4, first table: packets per RTT, `C0 / sqrt(p)`.
    #[test]
    fn packets_per_rtt_match_the_worked_table() {
        let table = [
            (0.001, 38.730),
            (0.005, 17.321),
            (0.01, 12.247),
            (0.02, 8.660),
            (0.03, 7.071),
            (0.04, 6.124),
            (0.05, 5.477),
        ];
        for (p, want) in table {
            let got = mathis_pps(p, 1.0).unwrap();
            assert!(close(got, want, 5e-4), "p = {p}: {got} vs {want}");
        }
    }

    /// `seed003.md` sec. 2.4, second table: T_s in kbit/s for MSS 1000 B and p_s = p_W.
    #[test]
    fn throughput_matches_the_worked_table_in_kbit_per_s() {
        let rows = [
            (0.050, [1959.6, 1385.6, 1131.4, 979.8, 876.4]),
            (0.100, [979.8, 692.8, 565.7, 489.9, 438.2]),
            (0.200, [489.9, 346.4, 282.8, 244.9, 219.1]),
        ];
        for (rtt, row) in rows {
            for (i, want) in row.into_iter().enumerate() {
                let p = 0.01 * (i + 1) as f64;
                let got = mathis_pps(p, rtt).unwrap() * 8000.0 / 1000.0;
                assert!(close(got, want, 0.06), "RTT {rtt}, p {p}: {got} vs {want}");
            }
        }
    }

    /// `seed003.md` sec. 2.4, third table: Eq. (4), Eq. (6) and `T_s'/T_s = sqrt(p_s / p_s')`.
    #[test]
    fn loss_composition_matches_the_worked_table() {
        let rows = [
            (0.01, 0.0, 0.01, 0.0199, 0.01, 1.4107),
            (0.01, 0.01, 0.01, 0.029701, 0.0199, 1.2217),
            (0.005, 0.0, 0.03, 0.03485, 0.005, 2.6401),
            (0.02, 0.01, 0.05, 0.07831, 0.0298, 1.6211),
        ];
        for (pa, pb, pw, ps, ps2, ratio) in rows {
            let got = end_to_end_loss(pa, pb, pw);
            assert!(
                close(got, ps, 5e-6),
                "p_s({pa}, {pb}, {pw}) = {got}, table {ps}"
            );
            // The derived identity of `seed003.md` sec. 2.2: 1 - product of the pass rates.
            let identity = 1.0 - (1.0 - pa) * (1.0 - pb) * (1.0 - pw);
            assert!(close(got, identity, 1e-15));
            let got2 = snoop_limit_loss(pa, pb);
            assert!(close(got2, ps2, 5e-6), "p_s' = {got2}, table {ps2}");
            let r = mathis_pps(got2, 0.1).unwrap() / mathis_pps(got, 0.1).unwrap();
            assert!(close(r, ratio, 5e-4), "T_s'/T_s = {r}, table {ratio}");
        }
        // First row of the table: no congestion, so Snoop's p_s' is 0 and Eq. (3) is undefined.
        assert_eq!(snoop_limit_loss(0.0, 0.0), 0.0);
        assert_eq!(mathis_pps(0.0, 0.1), None);
    }

    /// Claim A1: p_s = p_W without congestion; p_s' never depends on p_W; A2: p_s' < p_s, so
    /// T_s' > T_s at equal RTT, for every p_W > 0.
    #[test]
    fn claims_a1_and_a2_hold_over_a_grid() {
        for pa in [0.0, 0.001, 0.01, 0.05] {
            for pb in [0.0, 0.005, 0.02] {
                for k in 1..=50 {
                    let pw = k as f64 * 0.002;
                    let ps = end_to_end_loss(pa, pb, pw);
                    if pa == 0.0 && pb == 0.0 {
                        assert!(close(ps, pw, 1e-15));
                    }
                    let ps2 = snoop_limit_loss(pa, pb);
                    assert!(ps2 < ps);
                    if ps2 > 0.0 {
                        assert!(mathis_pps(ps2, 0.1).unwrap() > mathis_pps(ps, 0.1).unwrap());
                    }
                }
            }
        }
    }

    /// `seed003.md` sec. 2.4: TFRC at RTT 0.1 s, RTO 0.4 s gives 112.33 / 73.25 / 36.86 pkt/s at
    /// p = 1 / 2 / 5 %, where Mathis gives 122.47 / 86.60 / 54.77.
    #[test]
    fn tfrc_and_mathis_match_the_worked_values() {
        for (p, tfrc, mathis) in [
            (0.01, 112.33, 122.47),
            (0.02, 73.25, 86.60),
            (0.05, 36.86, 54.77),
        ] {
            let t = tfrc_pps(p, 0.1, 0.4).unwrap();
            let m = mathis_pps(p, 0.1).unwrap();
            assert!(close(t, tfrc, 0.006), "TFRC at {p}: {t}");
            assert!(close(m, mathis, 0.006), "Mathis at {p}: {m}");
            // The timeout term only lowers the rate, and RTO = 0 leaves sqrt(3/2) / (RTT sqrt(p)).
            assert!(t < m);
            assert!(close(tfrc_pps(p, 0.1, 0.0).unwrap(), m, 1e-9));
            // Delayed ACKs (b = 2) slow both terms by sqrt(2) without a timeout term.
            let b2 = tfrc_pps_b(p, 0.1, 0.0, 2.0).unwrap();
            assert!(close(b2 * 2f64.sqrt(), m, 1e-9));
            assert!(tfrc_pps_b(p, 0.1, 0.4, 2.0).unwrap() < t);
        }
    }

    /// `seed003.md` sec. 2.4: the 64-packet window binds in Eq. (3) only below
    /// `p = (C0 / 64)^2 ~ 3.66e-4`; 5 Mbit/s carries 625 packets of 1000 B per second.
    #[test]
    fn the_caps_bind_where_the_spec_says() {
        let p_star = (MATHIS_C0 / 64.0).powi(2);
        assert!(close(p_star, 3.66e-4, 5e-7));
        let link = 5e6 / 8000.0;
        assert!(close(link, 625.0, 1e-12));
        let rtt = 0.2;
        assert_eq!(capped_pps(p_star * 0.9, rtt, 64.0, link), Some(64.0 / rtt));
        let above = capped_pps(p_star * 1.1, rtt, 64.0, link).unwrap();
        assert!(above < 64.0 / rtt && close(above, mathis_pps(p_star * 1.1, rtt).unwrap(), 1e-9));
        assert_eq!(capped_pps(0.0, 0.05, 64.0, link), Some(625.0));
        assert_eq!(capped_pps(0.01, 0.0, 64.0, link), None);
    }

    /// `seed003.md` sec. 2.5: m = 0 is no recovery, m -> infinity is Eq. (6).
    #[test]
    fn retry_limited_arq_interpolates_between_eq4_and_eq6() {
        let (pa, pb, pw) = (0.01, 0.0, 0.05);
        assert_eq!(retry_limited_loss(pw, 0), pw);
        assert!(close(retry_limited_loss(pw, 2), 1.25e-4, 1e-18));
        let mut last = f64::INFINITY;
        for m in 0..8 {
            let ps = end_to_end_loss(pa, pb, retry_limited_loss(pw, m));
            assert!(ps < last);
            last = ps;
        }
        assert!(close(last, snoop_limit_loss(pa, pb), 1e-9));
        assert_eq!(retry_limited_transmissions(pw, 0), 1.0);
        assert!(close(retry_limited_transmissions(0.5, 2), 1.75, 1e-15));
        assert!(close(
            retry_limited_transmissions(pw, 60),
            1.0 / (1.0 - pw),
            1e-12
        ));
    }
}
