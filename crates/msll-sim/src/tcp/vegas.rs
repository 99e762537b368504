//! TCP Vegas as ns-2's `Agent/TCP/Vegas` (`tcp/tcp-vegas.cc` 1.37, the file ns-2.35 ships;
//! ns2-semantics.md 8.1), needed by seed 003 (Papadimitriou & Tsaoussidis 2006, sec. 3.5:
//! Vegas with and without Snoop, alpha 1, beta 3).
//!
//! Vegas keeps the rest of ns-2's TCP machinery (`newack`, the coarse RTO and its backoff,
//! `send_much`, go-back-N after a timeout), so it lives inside [`super::TcpSender`] as this extra
//! state; the sender hands it the three places where Vegas is an agent of its own: `recv`,
//! `timeout` and `output`. What Vegas adds, and what this module models:
//! - fine-grained send times and transmission counts per packet, in a ring of `window_` slots
//!   indexed by `seq % window_`, in "Vegas time" (seconds since `firstsent_`, the instant
//!   `send_much` last found `t_seqno_` at 0);
//! - once per RTT (the first new ACK at or beyond `begseq`): expected minus actual rate in
//!   packets, `delta`, against `alpha`/`beta` in congestion avoidance and `gamma` in slow start
//!   (which grows only every other RTT);
//! - a fine-grained timeout (`v_timeout_`) checked on duplicate ACKs and on the first two new ACKs
//!   after one ("worried"), so a loss can be retransmitted on the first duplicate ACK;
//! - no `opencwnd()`: the window grows only by the per-RTT decision, at most to 2 packets ahead of
//!   what is in flight.
//!
//! ns-2's quirks are kept on purpose (they change dynamics): packet 0's send time is exactly 0
//! and is never sampled; the loop that clears the slots of acknowledged packets stops at the
//! ring's wrap; a slot that was cleared (or never used) reads as "sent at -1 s", so the
//! fine-grained check may call a packet expired that was never sent, which ns-2 then sends
//! without advancing `t_seqno_`.

/// ns-2 Vegas's own state (everything `VegasTcpAgent` adds to `TcpAgent`).
#[derive(Debug, Clone)]
pub(crate) struct Vegas {
    pub alpha: i64,
    pub beta: i64,
    pub gamma: i64,
    /// `firstsent_`: clock of the last `send_much` that found `t_seqno_` at 0.
    pub firstsent: f64,
    /// `firstrecv_`: Vegas time of the first ACK (-1 before).
    pub firstrecv: f64,
    /// `t_cwnd_changed_`: Vegas time of the last window cut on duplicate ACKs or timeout.
    pub t_cwnd_changed: f64,
    /// `v_slowstart_`: cwnd after a timeout (2).
    pub slowstart: f64,
    /// Jacobson estimator of the fine-grained RTT (`v_sa_` = 8 srtt, `v_sd_` = 4 rttvar).
    pub sa: f64,
    pub sd: f64,
    /// `v_timeout_`, seconds.
    pub timeout: f64,
    /// `v_rtt_`: last fine-grained sample.
    pub rtt: f64,
    /// `v_worried_`: new ACKs left on which to check the next packet's fine-grained timeout.
    pub worried: i64,
    /// `v_begseq_`, `v_begtime_`: the packet (and Vegas time) that ends the current RTT.
    pub begseq: i64,
    pub begtime: f64,
    /// `v_cntRTT_`, `v_sumRTT_`: fine-grained samples of the current RTT.
    pub cnt_rtt: i64,
    pub sum_rtt: f64,
    /// `v_baseRTT_`: minimum RTT seen.
    pub base_rtt: f64,
    /// `v_incr_`: cwnd increment per ACK decided for this RTT.
    pub incr: f64,
    /// `v_inc_flag_`: slow start grows every other RTT.
    pub inc_flag: bool,
    /// `v_newcwnd_`: the window before the duplicate-ACK inflation (never reset by ns-2).
    pub newcwnd: f64,
    /// `v_actual_`: last actual rate, packets per second (kept for observation).
    pub actual: f64,
    /// `v_sendtime_` / `v_transmits_`, `v_maxwnd_` (= `window_`) slots, allocated when packet 0
    /// is output.
    pub sendtime: Vec<f64>,
    pub transmits: Vec<i32>,
}

impl Vegas {
    pub fn new(alpha: i64, beta: i64, gamma: i64) -> Self {
        let mut v = Vegas {
            alpha,
            beta,
            gamma,
            firstsent: 0.0,
            firstrecv: -1.0,
            t_cwnd_changed: 0.0,
            slowstart: 2.0,
            sa: 0.0,
            sd: 0.0,
            timeout: 1000.0,
            rtt: 0.0,
            worried: 0,
            begseq: 0,
            begtime: 0.0,
            cnt_rtt: 0,
            sum_rtt: 0.0,
            base_rtt: 1e9,
            incr: 0.0,
            inc_flag: true,
            newcwnd: 0.0,
            actual: 0.0,
            sendtime: Vec::new(),
            transmits: Vec::new(),
        };
        v.reset();
        v
    }

    /// `VegasTcpAgent::reset()` (the ring, `v_rtt_`, `v_newcwnd_` and `firstsent_` are not part
    /// of it).
    pub fn reset(&mut self) {
        self.t_cwnd_changed = 0.0;
        self.firstrecv = -1.0;
        self.slowstart = 2.0;
        self.sa = 0.0;
        self.sd = 0.0;
        self.timeout = 1000.0;
        self.worried = 0;
        self.begseq = 0;
        self.begtime = 0.0;
        self.cnt_rtt = 0;
        self.sum_rtt = 0.0;
        self.base_rtt = 1e9;
        self.incr = 0.0;
        self.inc_flag = true;
    }

    /// `vegastime()`: seconds since `firstsent_`.
    pub fn time(&self, now: f64) -> f64 {
        now - self.firstsent
    }

    fn slot(&self, seq: i64) -> usize {
        // ns-2 indexes with `seq % v_maxwnd_` on non-negative sequence numbers.
        (seq.rem_euclid(self.sendtime.len() as i64)) as usize
    }

    /// The bookkeeping of `VegasTcpAgent::output(seq)`; `window` is `wnd_`.
    pub fn on_output(&mut self, now: f64, seq: i64, window: u32) {
        if seq == 0 {
            let w = window.max(1) as usize;
            self.sendtime = vec![-1.0; w];
            self.transmits = vec![0; w];
        }
        if self.sendtime.is_empty() {
            // Only a sender that never output packet 0 gets here (ns-2 would index a NULL
            // array); give it the ring it would have had.
            let w = window.max(1) as usize;
            self.sendtime = vec![-1.0; w];
            self.transmits = vec![0; w];
        }
        let k = self.slot(seq);
        self.sendtime[k] = self.time(now);
        self.transmits[k] += 1;
    }

    /// First ACK ever: initialise the fine-grained estimator from the time since `firstsent_`.
    pub fn on_first_ack(&mut self, vt: f64) {
        if self.firstrecv < 0.0 {
            self.firstrecv = vt;
            self.base_rtt = vt;
            self.rtt = vt;
            self.sa = self.rtt * 8.0;
            self.sd = self.rtt;
            self.timeout = ((self.sa / 4.0) + self.sd) / 2.0;
        }
    }

    /// `vegas_expire`: the packet after `ack` if its fine-grained timeout has passed.
    pub fn expired(&self, vt: f64, ack: i64) -> Option<i64> {
        if self.sendtime.is_empty() {
            return None;
        }
        let elapse = vt - self.sendtime[self.slot(ack + 1)];
        (elapse >= self.timeout).then_some(ack + 1)
    }

    /// The per-RTT decision (`seq >= v_begseq_`), given the sender's state after `newack`.
    /// Returns the new cwnd and ssthresh.
    pub fn per_rtt(
        &mut self,
        vt: f64,
        t_seqno: i64,
        last_ack: i64,
        mut cwnd: f64,
        mut ssthresh: i64,
    ) -> (f64, i64) {
        let rtt = if self.cnt_rtt > 0 {
            self.sum_rtt / self.cnt_rtt as f64
        } else {
            vt - self.begtime
        };
        self.sum_rtt = 0.0;
        self.cnt_rtt = 0;
        let rtt_len = t_seqno - self.begseq;
        if rtt > 0.0 {
            // A base RTT of 0 (the first ACK at the instant of the first send: zero-delay
            // links) would make `expect` infinite and `delta` meaningless for the whole run (ns-2
            // keeps it; review, session 45): the first positive RTT replaces it.
            if rtt < self.base_rtt || self.base_rtt <= 0.0 || rtt_len <= 1 {
                self.base_rtt = rtt;
            }
            self.actual = rtt_len as f64 / rtt;
            let expect = (t_seqno - last_ack) as f64 / self.base_rtt;
            // C++ `int(x + 0.5)`: truncation toward zero.
            let delta = ((expect - self.actual) * self.base_rtt + 0.5).trunc() as i64;
            if cwnd < ssthresh as f64 {
                // Slow start: adjust every other RTT.
                self.inc_flag = !self.inc_flag;
                if !self.inc_flag {
                    self.incr = 0.0;
                } else if delta > self.gamma {
                    ssthresh = 2;
                    cwnd -= cwnd / 8.0;
                    if cwnd < 2.0 {
                        cwnd = 2.0;
                    }
                    self.incr = 0.0;
                } else {
                    self.incr = 1.0;
                }
            } else if delta > self.beta {
                cwnd -= 1.0;
                if cwnd < 2.0 {
                    cwnd = 2.0;
                }
                self.incr = 0.0;
            } else if delta < self.alpha {
                self.incr = 1.0 / cwnd;
            } else {
                self.incr = 0.0;
            }
        }
        self.begseq = t_seqno;
        self.begtime = vt;
        (cwnd, ssthresh)
    }

    /// After the per-ACK growth: read packet `ack`'s slot, clear the slots from `oldack + 1` to
    /// `ack` (stopping at the ring's wrap, as ns-2's loop does) and take a fine-grained sample if
    /// `ack` was sent exactly once and not at Vegas time 0.
    pub fn sample(&mut self, vt: f64, oldack: i64, ack: i64) {
        if self.sendtime.is_empty() {
            return;
        }
        let w = self.sendtime.len() as i64;
        let send_time = self.sendtime[self.slot(ack)];
        let transmits = self.transmits[self.slot(ack)];
        let mut range = ack - oldack;
        let end = ack.rem_euclid(w);
        let mut k = (oldack + 1).rem_euclid(w);
        while k <= end && range > 0 {
            self.sendtime[k as usize] = -1.0;
            self.transmits[k as usize] = 0;
            k = (k + 1) % w;
            range -= 1;
        }
        if send_time != 0.0 && transmits == 1 {
            let rtt = vt - send_time;
            self.sum_rtt += rtt;
            self.cnt_rtt += 1;
            if rtt > 0.0 {
                self.rtt = rtt;
                if self.rtt < self.base_rtt {
                    self.base_rtt = self.rtt;
                }
                let mut n = self.rtt - self.sa / 8.0;
                self.sa += n;
                n = n.abs();
                n -= self.sd / 4.0;
                self.sd += n;
                self.timeout = ((self.sa / 4.0) + self.sd) / 2.0;
                self.timeout += self.timeout / 16.0;
            }
        }
    }

    /// Send time and transmissions of packet `seq`'s slot.
    pub fn slot_of(&self, seq: i64) -> (f64, i32) {
        if self.sendtime.is_empty() {
            return (-1.0, 0);
        }
        let k = self.slot(seq);
        (self.sendtime[k], self.transmits[k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clearing_loop_stops_at_the_wrap_as_ns2s_does() {
        let mut v = Vegas::new(1, 3, 1);
        for s in 0..20 {
            v.on_output(s as f64 * 0.01, s, 20);
        }
        for s in 20..22 {
            v.on_output(0.5, s, 20);
        }
        // ACK of 21 after 17: slots 18, 19 would be cleared, then 0, 1 -- but the loop's
        // `k <= 21 % 20` fails at k = 18 already, so nothing is cleared.
        v.sample(1.0, 17, 21);
        assert_eq!(v.slot_of(18), (18.0 * 0.01, 1));
        assert_eq!(v.slot_of(1), (0.5, 2)); // packet 21 shares packet 1's slot
                                            // Without a wrap the slots are cleared.
        v.sample(1.0, 2, 5);
        assert_eq!(v.slot_of(3), (-1.0, 0));
        assert_eq!(v.slot_of(5), (-1.0, 0));
        assert_eq!(v.slot_of(6), (6.0 * 0.01, 1));
    }

    #[test]
    fn packet_0_and_retransmissions_give_no_sample() {
        let mut v = Vegas::new(1, 3, 1);
        v.on_output(0.0, 0, 20); // Vegas time 0
        v.on_output(0.1, 1, 20);
        v.on_output(0.2, 1, 20); // sent twice
        v.on_output(0.3, 2, 20);
        v.sample(0.5, -1, 0);
        v.sample(0.5, 0, 1);
        assert_eq!(v.cnt_rtt, 0);
        v.sample(0.5, 1, 2);
        assert_eq!(v.cnt_rtt, 1);
        assert!((v.rtt - 0.2).abs() < 1e-12);
    }

    /// A first ACK at the instant of the first send (zero-delay links) gave a base RTT of 0 for
    /// the whole run: `expect` infinite, `delta` a saturated cast. The first positive RTT now
    /// replaces it, and the decision is Vegas's: here delta 0, +1/cwnd per ACK.
    #[test]
    fn a_zero_base_rtt_is_replaced_by_the_first_real_one() {
        let mut v = Vegas::new(1, 3, 1);
        v.on_first_ack(0.0);
        assert_eq!(v.base_rtt, 0.0);
        v.sum_rtt = 0.1;
        v.cnt_rtt = 1;
        v.begseq = 0;
        let (c, s) = v.per_rtt(1.0, 10, 0, 10.0, 2);
        assert_eq!((c, s), (10.0, 2));
        assert_eq!(v.base_rtt, 0.1);
        assert!((v.incr - 0.1).abs() < 1e-12, "{}", v.incr);
    }

    #[test]
    fn per_rtt_decisions_follow_delta() {
        // baseRTT 0.1 s; 10 packets in the window; the RTT sample decides delta.
        let mut v = Vegas::new(1, 3, 1);
        v.base_rtt = 0.1;
        // Congestion avoidance (cwnd 10 >= ssthresh 2). actual = rtt_len / rtt.
        for (rtt, want_cwnd, want_incr) in [
            (0.1, 10.0, 0.1),   // delta 0 < alpha: +1/cwnd per ACK
            (0.125, 10.0, 0.0), // delta int(2 + 0.5) = 2: hold
            (0.2, 9.0, 0.0),    // delta 5 > beta: -1
        ] {
            v.sum_rtt = rtt;
            v.cnt_rtt = 1;
            v.begseq = 0;
            let (c, s) = v.per_rtt(1.0, 10, 0, 10.0, 2);
            assert_eq!((c, s), (want_cwnd, 2), "rtt {rtt}");
            assert!((v.incr - want_incr).abs() < 1e-12, "rtt {rtt}: {}", v.incr);
            assert_eq!(v.begseq, 10);
        }
        // Slow start: every other RTT; delta > gamma cuts cwnd by 1/8 and ends slow start.
        let mut v = Vegas::new(1, 3, 1);
        v.base_rtt = 0.1;
        v.sum_rtt = 0.2;
        v.cnt_rtt = 1;
        let (c, s) = v.per_rtt(1.0, 8, 0, 8.0, 20);
        assert_eq!((c, s, v.incr), (8.0, 20, 0.0)); // the off RTT
        v.sum_rtt = 0.2;
        v.cnt_rtt = 1;
        let (c, s) = v.per_rtt(1.0, 8, 0, 8.0, 20);
        assert_eq!((c, s, v.incr), (7.0, 2, 0.0));
    }
}
