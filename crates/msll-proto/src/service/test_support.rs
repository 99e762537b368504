//! Helpers shared by the schemes' property tests (test builds only).

use proptest::prelude::ProptestConfig;

use crate::service::LinkInfo;
use crate::testing::{number_of, Dir};
use crate::time::{DataRate, Duration, Instant};
use crate::wire::Frame;
use crate::Packet;

/// Independent loss of `per_mille` / 1000 of the frames in each direction, decided by a
/// splitmix64 hash of (seed, direction, frame index): the same pattern whatever the order of the
/// questions.
pub(crate) fn iid(seed: u64, per_mille: u64) -> impl FnMut(Dir, u64, &Frame) -> bool {
    move |d, i, _| {
        let mut z = seed ^ (i << 1 | d as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % 1000 < per_mille
    }
}

/// The numbers of delivered `testing::numbered` packets, in delivery order.
pub(crate) fn numbers(v: &[(Instant, Packet)]) -> Vec<u32> {
    v.iter().map(|(_, p)| number_of(p)).collect()
}

/// `n` cases, or fewer when PROPTEST_CASES asks for fewer.
pub(crate) fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
            .map_or(n, |c| c.min(n)),
        ..ProptestConfig::default()
    }
}

/// Seed 002's wireless link: 19.2 kbit/s, no propagation delay, 132-byte frames.
pub(crate) fn cdpd() -> LinkInfo {
    LinkInfo {
        rate: DataRate::from_bps(19_200).unwrap(),
        delay: Duration::ZERO,
        frame_payload: 132,
    }
}
