//! Arbitrary bytes into msll-proto's `testing::fuzz::hdlc_frame`: must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    msll_proto::testing::fuzz::hdlc_frame(data);
});
