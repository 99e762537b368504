//! `Lossy`: emulated link impairment on the datagrams a daemon receives, using the simulator's
//! own error models (smoltcp's `FaultInjector` idea), so the whole daemon can be tested on
//! loopback or in network namespaces without kernel queueing disciplines.
//!
//! ```text
//!   UDP recv --> [error model: lost?] --no--> [delay line: + delay_ms] --> decode/auth --> Endpoint
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
use msll_sim::rng::Streams;

use crate::config::ImpairConfig;

pub struct Lossy {
    model: ErrorModel,
    rate: DataRate,
    delay: Duration,
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
        Self::from_spec(
            &cfg.error,
            cfg.seed,
            Duration::from_secs_f64(cfg.delay_ms / 1e3),
            rate,
            cap,
            base_dir,
        )
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
            cap: cap.max(1),
            byte_cap: usize::MAX,
            bytes: 0,
            line: VecDeque::new(),
            lost: 0,
            overflow: 0,
        })
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
        // Constant delay keeps the line in arrival order, so a FIFO suffices.
        self.bytes += datagram.len();
        self.line.push_back((now + self.delay, datagram));
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
