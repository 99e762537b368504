//! Random bytes into every scheme's `handle_frame` (and timeouts in between): counted as
//! malformed or handled, never a panic.

use proptest::prelude::*;

use super::*;
use crate::service::{Role, SchemeConfig};
use crate::testing::{numbered, thesis_link};
use crate::wire::{ArqFrame, HdlcFrame, RlpFrame, RseFrame, StatusFrame, XorFrame};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
        / 4
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn random_frames_never_panic(
        warmup in 0u32..6,
        frames in prop::collection::vec(
            (prop::collection::vec(any::<u8>(), 0..24), 0u64..500, any::<bool>()),
            1..24,
        ),
    ) {
        let link = thesis_link("cellular");
        for name in SchemeConfig::NAMES {
            // Base-station end, so Snoop runs (it builds Default at the host).
            let mut s = SchemeConfig::from_name(name).unwrap().build(&link, Role::BaseStation);
            let mut now = Instant::ZERO;
            for i in 0..warmup {
                send(&mut *s, now, numbered(i, 50));
            }
            let mut malformed = 0;
            for (bytes, dt, tick) in &frames {
                now += crate::time::Duration::from_millis(*dt);
                let Some(f) = Frame::from_wire(Buf::from(bytes.clone())) else { continue };
                let parses = match *name {
                    "gbn" | "sr" | "sr-m1" | "sr-m2" => ArqFrame::parse(&f).is_ok(),
                    "rlp" | "rlp1" | "rlp-oos" => RlpFrame::parse(&f).is_ok(),
                    "rse" | "rse-ad" => RseFrame::parse(&f).is_ok(),
                    "status-rlp" | "status-rlp-ns" => StatusFrame::from_frame(f.clone()).is_ok(),
                    "lapb" | "mdlp" | "mdlp-ns" => HdlcFrame::from_frame(f.clone()).is_ok(),
                    // no frame format of their own: everything is delivered
                    "default" | "snoop" => true,
                    _ => XorFrame::parse(&f).is_ok(),
                };
                malformed += u64::from(!parses);
                let mut out = Outbox::default();
                s.handle_frame(now, f, &mut out);
                if *tick {
                    if let Some(t) = s.poll_timeout() {
                        now = now.max(t);
                        timeout(&mut *s, now);
                    }
                }
            }
            prop_assert_eq!(s.stats().malformed_frames, malformed, "{}", name);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// The cargo-fuzz target bodies (`/fuzz/fuzz_targets`) on random bytes.
    #[test]
    fn fuzz_entry_points_never_panic(data in prop::collection::vec(any::<u8>(), 0..200)) {
        crate::testing::fuzz::arq_frame(&data);
        crate::testing::fuzz::rlp_frame(&data);
        crate::testing::fuzz::xor_frame(&data);
        crate::testing::fuzz::rse_frame(&data);
        crate::testing::fuzz::status_rlp_frame(&data);
        crate::testing::fuzz::hdlc_frame(&data);
        crate::testing::fuzz::service_rx(&data);
    }
}
