//! Conversation tests (explicit times, one call per frame in or out) and property tests for the
//! error-recovery schemes.

mod analytic;
mod arq;
mod fuzz;
mod props;
mod rlp;
mod rse;
mod snoop;
mod table52;
mod xor;

use crate::buf::Buf;

use crate::service::{Outbox, Service};
use crate::testing::PAIR_SERVICE;
use crate::time::Instant;
use crate::wire::Frame;

fn ms(v: u64) -> Instant {
    Instant::from_nanos(v * 1_000_000)
}

/// A frame as the peer's bytes on the wire, with a non-zero service nibble.
fn on_wire(f: Frame) -> Frame {
    let mut v = f.to_vec();
    v[0] = (v[0] & 0x0f) | (PAIR_SERVICE << 4);
    Frame::from_wire(Buf::from(v)).unwrap()
}

/// The conversation helpers below model an idle link: every frame a service emits starts
/// transmission at once and is reported (`Service::handle_transmitted`). Tests of FIFO waiting
/// call the `_queued` variants and report transmissions themselves with `transmitted`.
fn transmitted(s: &mut dyn Service, now: Instant, out: &Outbox) {
    for f in &out.frames {
        s.handle_transmitted(now, &on_wire(f.clone()));
    }
}

fn feed_queued(s: &mut dyn Service, now: Instant, f: Frame) -> Outbox {
    let mut out = Outbox::default();
    s.handle_frame(now, on_wire(f), &mut out);
    out
}

fn feed(s: &mut dyn Service, now: Instant, f: Frame) -> Outbox {
    let out = feed_queued(s, now, f);
    transmitted(s, now, &out);
    out
}

fn timeout_queued(s: &mut dyn Service, now: Instant) -> Outbox {
    let mut out = Outbox::default();
    s.handle_timeout(now, &mut out);
    out
}

fn timeout(s: &mut dyn Service, now: Instant) -> Outbox {
    let out = timeout_queued(s, now);
    transmitted(s, now, &out);
    out
}

fn send_queued(s: &mut dyn Service, now: Instant, p: crate::Packet) -> Outbox {
    let mut out = Outbox::default();
    s.handle_packet(now, p, &mut out);
    out
}

fn send(s: &mut dyn Service, now: Instant, p: crate::Packet) -> Outbox {
    let out = send_queued(s, now, p);
    transmitted(s, now, &out);
    out
}
