//! `Lossy`: emulated link impairment on the datagrams a daemon receives, using the simulator's
//! own error models (smoltcp's `FaultInjector` idea), so the whole daemon can be tested on
//! loopback or in network namespaces without kernel queueing disciplines.
//!
//! ```text
//!   UDP recv --> [error model: lost?] --no--> [delay line: + delay_ms + U(0, jitter_ms)] --> decode/auth --> Endpoint
//!                        |yes
//!                        v  counted, dropped
//! ```
//!
//! Applied on the receive side, so `p = 0.05` configured on both daemons gives 5 % loss each way.
//! The loss decision is made on arrival, with the datagram's airtime at the virtual link rate as
//! `[start, end)`, which is what time- and byte-based models (two-state, byte-interval) need.

use std::collections::VecDeque;
use std::path::Path;

use msll_proto::{DataRate, Duration, Instant};
use msll_sim::error_model::{ErrorModel, ErrorSpec, SpecError};
use msll_sim::rng::{SimRng, Streams};
use rand::Rng;

use crate::config::ImpairConfig;

pub struct Lossy {
    model: ErrorModel,
    rate: DataRate,
    delay: Duration,
    /// Extra delay, uniform in `[0, jitter]` per datagram, from its own stream.
    jitter: Duration,
    reorder: bool,
    jitter_rng: SimRng,
    cap: usize,
    /// Bytes the line may hold (`with_byte_cap`): unbounded by default.
    byte_cap: usize,
    bytes: usize,
    line: VecDeque<(Instant, Vec<u8>)>,
    pub lost: u64,
    pub overflow: u64,
}

impl Lossy {
    /// `base_dir`: where a trace file named relatively is looked up.
    pub fn new(
        cfg: &ImpairConfig,
        rate: DataRate,
        cap: usize,
        base_dir: &Path,
    ) -> Result<Lossy, SpecError> {
        Ok(Self::from_spec(
            &cfg.error,
            cfg.seed,
            Duration::from_secs_f64(cfg.delay_ms / 1e3),
            rate,
            cap,
            base_dir,
        )?
        .with_jitter(Duration::from_secs_f64(cfg.jitter_ms / 1e3), cfg.reorder))
    }

    pub fn from_spec(
        spec: &ErrorSpec,
        seed: u64,
        delay: Duration,
        rate: DataRate,
        cap: usize,
        base_dir: &Path,
    ) -> Result<Lossy, SpecError> {
        // One stream pair per daemon, named like the simulator's per-link-direction streams.
        let streams = Streams::new(seed, 0);
        let model = spec.build(
            streams.per_replication("mslld-rx-state"),
            streams.per_replication("mslld-rx-draw"),
            base_dir,
        )?;
        Ok(Lossy {
            model,
            rate,
            delay,
            jitter: Duration::ZERO,
            reorder: false,
            jitter_rng: streams.per_replication("mslld-rx-jitter"),
            cap: cap.max(1),
            byte_cap: usize::MAX,
            bytes: 0,
            line: VecDeque::new(),
            lost: 0,
            overflow: 0,
        })
    }

    /// Add up to `jitter` of delay, uniform per datagram; with `reorder`, a datagram may
    /// overtake earlier ones, else it waits at least for the one before it.
    pub fn with_jitter(mut self, jitter: Duration, reorder: bool) -> Self {
        self.jitter = jitter;
        self.reorder = reorder;
        self
    }

    /// Also bound the bytes held. The line holds datagrams before authentication, and anyone
    /// can send 64 KiB ones: `cap` of them were 1 GiB (review, session 46).
    pub fn with_byte_cap(mut self, bytes: usize) -> Self {
        self.byte_cap = bytes.max(1);
        self
    }

    /// A datagram arrived at `now`: drop it, or hold it until `now + delay`.
    pub fn arrive(&mut self, now: Instant, datagram: Vec<u8>) {
        let airtime = self.rate.tx_time(datagram.len());
        let start = Instant::from_nanos(now.as_nanos().saturating_sub(airtime.as_nanos()));
        if self.model.frame_lost(start, now, datagram.len()) {
            self.lost += 1;
            return;
        }
        if self.line.len() >= self.cap || datagram.len() > self.byte_cap - self.bytes {
            self.overflow += 1;
            return;
        }
        self.bytes += datagram.len();
        let mut due = now + self.delay;
        if self.jitter > Duration::ZERO {
            due += self.jitter.mul_f64(self.jitter_rng.random::<f64>());
        }
        if !self.reorder {
            // In arrival order: the line stays sorted, a FIFO.
            if let Some(&(last, _)) = self.line.back() {
                due = due.max(last);
            }
            self.line.push_back((due, datagram));
        } else {
            // Sorted by due time, ties in arrival order.
            let at = self.line.partition_point(|(t, _)| *t <= due);
            self.line.insert(at, (due, datagram));
        }
    }

    /// The next datagram whose delay has elapsed.
    pub fn pop_due(&mut self, now: Instant) -> Option<Vec<u8>> {
        if self.line.front()?.0 <= now {
            let d = self.line.pop_front().map(|(_, d)| d)?;
            self.bytes -= d.len();
            Some(d)
        } else {
            None
        }
    }

    pub fn next_due(&self) -> Option<Instant> {
        self.line.front().map(|(t, _)| *t)
    }

    pub fn held(&self) -> usize {
        self.line.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jitter (session 47): delays spread uniformly over `[delay, delay + jitter]`; without
    /// `reorder` the line keeps arrival order (a datagram waits for the one before it), with it
    /// datagrams overtake each other; the draws repeat for a seed.
    #[test]
    fn jitter_spreads_delays_and_reorders_only_when_asked() {
        let rate = DataRate::from_bps(100_000_000).unwrap();
        let run = |reorder: bool, seed: u64| {
            let mut l = Lossy::from_spec(
                &ErrorSpec::None {},
                seed,
                Duration::from_millis(10),
                rate,
                100_000,
                Path::new("."),
            )
            .unwrap()
            .with_jitter(Duration::from_millis(20), reorder);
            let n = 2000u32;
            for i in 0..n {
                // one datagram every 100 us, numbered
                l.arrive(
                    Instant::from_nanos(u64::from(i) * 100_000),
                    i.to_be_bytes().to_vec(),
                );
            }
            let mut out = Vec::new();
            let mut t = 0u64;
            while l.held() > 0 {
                t += 50_000;
                while let Some(d) = l.pop_due(Instant::from_nanos(t)) {
                    let i = u32::from_be_bytes(d[..4].try_into().unwrap());
                    out.push((i, t - u64::from(i) * 100_000));
                }
            }
            out
        };
        let fifo = run(false, 1);
        assert!(
            fifo.windows(2).all(|w| w[0].0 < w[1].0),
            "arrival order kept"
        );
        let delays: Vec<f64> = fifo.iter().map(|&(_, d)| d as f64 / 1e6).collect();
        assert!(
            delays.iter().all(|&d| (10.0..30.2).contains(&d)),
            "{delays:?}"
        );
        let re = run(true, 1);
        assert_eq!(re.len(), 2000);
        let overtaken = re.windows(2).filter(|w| w[0].0 > w[1].0).count();
        assert!(overtaken > 500, "{overtaken} inversions");
        let d: Vec<f64> = re.iter().map(|&(_, d)| d as f64 / 1e6).collect();
        assert!(d.iter().all(|&x| (10.0..30.1).contains(&x)), "{d:?}");
        // Uniform on [10, 30] ms: mean 20, and each 5 ms quarter gets about a quarter.
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        assert!((mean - 20.0).abs() < 0.6, "mean {mean}");
        for q in 0..4 {
            let lo = 10.0 + 5.0 * q as f64;
            let k = d.iter().filter(|&&x| x >= lo && x < lo + 5.0).count();
            assert!((400..=600).contains(&k), "quarter {q}: {k}");
        }
        assert_eq!(run(true, 1), re, "one seed, one sequence");
        assert_ne!(run(true, 2), re);
    }

    /// Datagrams are refused once the line holds its byte budget, whatever their number, and
    /// room comes back as they leave.
    #[test]
    fn the_line_is_bounded_in_bytes_too() {
        let rate = DataRate::from_bps(10_000_000).unwrap();
        let mut l = Lossy::from_spec(
            &ErrorSpec::None {},
            0,
            Duration::from_millis(10),
            rate,
            1000,
            Path::new("."),
        )
        .unwrap()
        .with_byte_cap(200_000);
        for i in 0..10 {
            l.arrive(Instant::from_nanos(i), vec![0; 65_000]);
        }
        assert_eq!((l.held(), l.overflow), (3, 7));
        l.arrive(Instant::from_nanos(20), vec![0; 5_000]);
        assert_eq!((l.held(), l.overflow), (4, 7), "small ones still fit");
        assert!(l.pop_due(Instant::from_nanos(10_000_001)).is_some());
        l.arrive(Instant::from_nanos(30), vec![0; 65_000]);
        assert_eq!((l.held(), l.overflow), (4, 7), "room again");
    }

    #[test]
    fn bernoulli_loss_rate_and_delay() {
        let rate = DataRate::from_bps(10_000_000).unwrap();
        let mut l = Lossy::from_spec(
            &ErrorSpec::Bernoulli { p: 0.05 },
            3,
            Duration::from_millis(10),
            rate,
            100_000,
            Path::new("."),
        )
        .unwrap();
        let n = 20_000;
        for i in 0..n {
            l.arrive(Instant::from_nanos(i * 1000), vec![0; 100]);
        }
        let frac = l.lost as f64 / n as f64;
        assert!((0.04..0.06).contains(&frac), "{frac}");
        assert!(l.pop_due(Instant::from_nanos(9_999_999)).is_none());
        assert_eq!(l.next_due(), Some(Instant::from_nanos(10_000_000)));
        let mut got = 0;
        while l
            .pop_due(Instant::from_nanos(10_000_000 + n * 1000))
            .is_some()
        {
            got += 1;
        }
        assert_eq!(got + l.lost, n);
    }

    #[test]
    fn gilbert_elliott_and_trace_models_work_here_too() {
        let rate = DataRate::from_bps(1_000_000).unwrap();
        let ge = ErrorSpec::GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.2,
            loss_good: 0.0,
            loss_bad: 0.8,
            initial: Default::default(),
        };
        let mut l =
            Lossy::from_spec(&ge, 1, Duration::ZERO, rate, 100_000, Path::new(".")).unwrap();
        for i in 0..20_000 {
            l.arrive(Instant::from_nanos(i * 10_000), vec![0; 100]);
        }
        // Stationary bad-state share 0.01 / 0.21 = 4.8 %, times 0.8: about 3.8 % lost.
        let frac = l.lost as f64 / 20_000.0;
        assert!((0.02..0.06).contains(&frac), "{frac}");
        // A trace named relative to the configuration file's directory.
        let dir = std::env::temp_dir().join(format!("mslld-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.txt"), "0 1 0 0\n").unwrap();
        let tr: ErrorSpec = toml::from_str("model = \"trace\"\npath = \"t.txt\"").unwrap();
        let mut l = Lossy::from_spec(&tr, 0, Duration::ZERO, rate, 100, &dir).unwrap();
        for i in 0..8 {
            l.arrive(Instant::from_nanos(i * 10_000_000), vec![0; 10]);
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(l.lost, 2);
    }

    #[test]
    fn delay_line_is_bounded() {
        let rate = DataRate::from_bps(1_000_000).unwrap();
        let mut l = Lossy::from_spec(
            &ErrorSpec::None {},
            0,
            Duration::from_millis(1),
            rate,
            4,
            Path::new("."),
        )
        .unwrap();
        for _ in 0..10 {
            l.arrive(Instant::ZERO, vec![1]);
        }
        assert_eq!((l.held(), l.overflow), (4, 6));
    }
}
