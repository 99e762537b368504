//! Time, durations and data rates as integer nanoseconds.
//!
//! The simulator's clock and every protocol deadline are `u64` nanoseconds. At 14.4 kbit/s one bit
//! lasts 69 444.4 ns, so `DataRate::tx_time` rounds once, in one place (to the nearest nanosecond).
//! Nothing in this crate reads a clock: `now` is always an argument.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in (simulated or driver-mapped) time: nanoseconds since the run's epoch.
/// `x.round() as u64` (half away from zero, saturating, NaN -> 0) without the `round` library
/// call that baseline x86-64 makes for `f64::round`: timers are scaled this way on every frame.
/// Exact: for x < 2^53 the fraction `x - trunc(x)` is computed without error, and above it every
/// f64 is an integer.
#[inline]
pub(crate) fn round_u64(x: f64) -> u64 {
    let t = x as u64; // truncates toward zero, saturates, NaN -> 0
    if x - t as f64 >= 0.5 {
        t.saturating_add(1)
    } else {
        t
    }
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

/// A span of time in nanoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);
    pub const MAX: Instant = Instant(u64::MAX);
    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }
    pub fn from_secs_f64(s: f64) -> Self {
        Instant(round_u64(s * 1e9))
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Correctly rounded: a division, not a product with 1e-9 (which is not exact in binary and
    /// gave 60 s as 60.00000000000001: review, session 43).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);
    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * 1_000_000_000)
    }
    pub fn from_secs_f64(s: f64) -> Self {
        Duration(round_u64(s * 1e9))
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Correctly rounded: a division, not a product with 1e-9 (which is not exact in binary and
    /// gave 60 s as 60.00000000000001: review, session 43).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub const fn saturating_mul(self, k: u64) -> Self {
        Duration(self.0.saturating_mul(k))
    }
    /// Scale by a real factor (timer scaling, seed 004 ch. 6), rounded to the nanosecond.
    pub fn mul_f64(self, k: f64) -> Self {
        Duration(round_u64(self.0 as f64 * k))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an earlier minus a later instant is zero.
    fn sub(self, rhs: Instant) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    /// Saturating at zero.
    fn sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(d.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0.saturating_sub(d.0))
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}ms", self.as_millis_f64())
    }
}

/// A link or pacing rate in bits per second (decimal units, seed 004 ch. 3: 1 Kbps = 1000 bit/s).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DataRate {
    bits_per_sec: u64,
}

impl DataRate {
    /// `None` for a zero rate, which can transmit nothing.
    pub const fn from_bps(bits_per_sec: u64) -> Option<Self> {
        if bits_per_sec == 0 {
            None
        } else {
            Some(DataRate { bits_per_sec })
        }
    }
    pub const fn bps(self) -> u64 {
        self.bits_per_sec
    }
    /// Serialisation time of `bytes` at this rate, rounded to the nearest nanosecond.
    pub fn tx_time(self, bytes: usize) -> Duration {
        let r = self.bits_per_sec as u128;
        // Any frame (< 2^31 bytes at any rate below ~2 Tbit/s) fits u64 arithmetic, which is a
        // single division instruction; u128 division is a library call on the per-hop path.
        if let Some(num) = (bytes as u64)
            .checked_mul(8_000_000_000)
            .and_then(|n| n.checked_add(self.bits_per_sec / 2))
        {
            return Duration(num / self.bits_per_sec);
        }
        // Saturate: an absurd size (a misconfigured frame payload) must not wrap into a short time.
        let bits = bytes as u128 * 8;
        Duration(((bits * 1_000_000_000 + r / 2) / r).min(u64::MAX as u128) as u64)
    }
}

/// `DataRate::tx_time` remembered for the last two (rate, size) pairs: a link sends mostly two
/// sizes (data and acknowledgements), and the division behind `tx_time` sits on the per-frame path
/// (its latency was ~3 % of a Default FTP run's time samples, session 9). Same results as
/// `tx_time`, always.
#[derive(Debug, Clone, Default)]
pub struct TxTimes {
    /// (bits per second, bytes, nanoseconds), most recent first. Empty entries have rate 0, which
    /// never matches (`DataRate::from_bps` refuses it).
    memo: [(u64, usize, u64); 2],
}

impl TxTimes {
    #[inline]
    pub fn get(&mut self, rate: DataRate, bytes: usize) -> Duration {
        let bps = rate.bits_per_sec;
        let [a, b] = self.memo;
        if a.0 == bps && a.1 == bytes {
            return Duration(a.2);
        }
        if b.0 == bps && b.1 == bytes {
            self.memo = [b, a];
            return Duration(b.2);
        }
        let d = rate.tx_time(bytes);
        self.memo = [(bps, bytes, d.0), a];
        d
    }
}

/// One protocol timer: a deadline or nothing. Not `Copy`, so an armed timer is not silently
/// duplicated (s2n-quic's rule).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Timer {
    expires_at: Option<Instant>,
}

impl Timer {
    pub fn set(&mut self, at: Instant) {
        self.expires_at = Some(at);
    }
    pub fn cancel(&mut self) {
        self.expires_at = None;
    }
    pub fn deadline(&self) -> Option<Instant> {
        self.expires_at
    }
    pub fn is_armed(&self) -> bool {
        self.expires_at.is_some()
    }
    /// True (and disarms) if the timer is due at `now`.
    pub fn poll_expired(&mut self, now: Instant) -> bool {
        match self.expires_at {
            Some(t) if t <= now => {
                self.expires_at = None;
                true
            }
            _ => false,
        }
    }
}

/// The earliest of several optional deadlines.
///
/// A fold over the array by value, not `flatten().min()`: the flattening iterator kept the array
/// on the stack, written in 8-byte pieces and read back in 16-byte ones, a store-forwarding stall
/// that sampling put at half of GBN's `poll_timeout` (session 10).
#[inline]
pub fn earliest<const N: usize>(deadlines: [Option<Instant>; N]) -> Option<Instant> {
    let mut m: Option<Instant> = None;
    for d in deadlines {
        m = match (m, d) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds and milliseconds as the nearest double: whole and decimal values read back as
    /// written (a product with 1e-9 gave 60.00000000000001 and 0.30000000000000004).
    #[test]
    fn float_seconds_are_the_nearest_double() {
        assert_eq!(Duration::from_secs(60).as_secs_f64(), 60.0);
        assert_eq!(Instant::from_nanos(2_030_000_000_000).as_secs_f64(), 2030.0);
        assert_eq!(Duration::from_millis(300).as_secs_f64(), 0.3);
        assert_eq!(Duration::from_micros(1_100).as_millis_f64(), 1.1);
        for s in [
            "0.001",
            "0.1",
            "1.7",
            "14.9",
            "123.456789",
            "86400.000000001",
        ] {
            let v: f64 = s.parse().unwrap();
            assert_eq!(Instant::from_secs_f64(v).as_secs_f64(), v, "{s}");
        }
    }

    #[test]
    fn tx_time_matches_seed_arithmetic() {
        // seed004-ch1-3 1.1: a 51-byte frame at 14.4 kbit/s takes 28.33 ms.
        let r = DataRate::from_bps(14_400).unwrap();
        assert_eq!(r.tx_time(51).as_nanos(), 28_333_333);
        assert_eq!(r.tx_time(50).as_nanos(), 27_777_778);
        // WLAN: 1000 B at 2 Mbit/s = 4 ms exactly.
        let w = DataRate::from_bps(2_000_000).unwrap();
        assert_eq!(w.tx_time(1000), Duration::from_millis(4));
        assert!(DataRate::from_bps(0).is_none());
    }

    #[test]
    fn tx_time_fast_path_equals_exact_rounding() {
        // The u64 fast path and the u128 fallback must round identically, including at rates
        // where the product overflows u64 and the fallback takes over.
        for bps in [
            1,
            7,
            14_400,
            86_400,
            2_000_000,
            11_000_000,
            u64::MAX / 3,
            u64::MAX,
        ] {
            let r = DataRate::from_bps(bps).unwrap();
            for bytes in [0usize, 1, 51, 1001, 65_535, 1 << 31, usize::MAX >> 8] {
                let exact = ((bytes as u128 * 8 * 1_000_000_000 + bps as u128 / 2) / bps as u128)
                    .min(u64::MAX as u128) as u64;
                assert_eq!(r.tx_time(bytes).as_nanos(), exact, "{bytes} B at {bps}");
            }
        }
    }

    proptest::proptest! {
        /// The memo answers exactly as `tx_time` for any sequence of rates and sizes (few
        /// distinct values, so it hits and misses).
        #[test]
        fn tx_times_memo_equals_tx_time(
            seq in proptest::collection::vec((0usize..3, 0usize..4), 1..200)
        ) {
            let rates = [14_400u64, 2_000_000, 11_000_000].map(|b| DataRate::from_bps(b).unwrap());
            let sizes = [40usize, 1000, 1001, 0];
            let mut m = TxTimes::default();
            for (r, b) in seq {
                proptest::prop_assert_eq!(m.get(rates[r], sizes[b]), rates[r].tx_time(sizes[b]));
            }
        }
    }

    #[test]
    fn round_u64_matches_f64_round() {
        let specials = [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -0.5,
            -1.7,
            0.49999999999999994,
            4503599627370495.5,
            9007199254740993.0,
            1e19,
            1.8446744073709552e19,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        for x in specials {
            assert_eq!(round_u64(x), x.round() as u64, "{x:e}");
        }
    }

    proptest::proptest! {
        #[test]
        fn round_u64_matches_f64_round_anywhere(bits in proptest::prelude::any::<u64>()) {
            let x = f64::from_bits(bits);
            proptest::prop_assert_eq!(round_u64(x), x.round() as u64);
        }

        #[test]
        fn round_u64_matches_on_timer_products(ns in 0u64..(1 << 45), k in 0.0f64..64.0) {
            let x = ns as f64 * k;
            proptest::prop_assert_eq!(round_u64(x), x.round() as u64);
        }
    }

    #[test]
    fn timer_fires_once() {
        let mut t = Timer::default();
        t.set(Instant::from_nanos(10));
        assert!(!t.poll_expired(Instant::from_nanos(9)));
        assert!(t.poll_expired(Instant::from_nanos(10)));
        assert!(!t.poll_expired(Instant::from_nanos(11)));
    }

    #[test]
    fn earliest_is_the_minimum_of_the_present_deadlines() {
        let t = Instant::from_nanos;
        assert_eq!(earliest([None, Some(t(3)), Some(t(1))]), Some(t(1)));
        assert_eq!(earliest([Some(t(2)), None, Some(t(5))]), Some(t(2)));
        assert_eq!(earliest([Some(t(7)), None, None]), Some(t(7)));
        assert_eq!(earliest::<3>([None, None, None]), None);
        assert_eq!(earliest::<0>([]), None);
    }
}
