//! Default ("Raw link") service: no recovery. One header byte (service/scheme identifier), frames
//! sent once, everything received is delivered (seed 004 §4.2.1; seeds 000/001 "Raw Link").

use super::{Outbox, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::Instant;
use crate::wire::Frame;

/// Scheme bits of a Default frame's first byte.
const RAW_BITS: u8 = 0x0;

#[derive(Debug, Default, Clone)]
pub struct Raw {
    stats: ServiceStats,
}

impl Raw {
    pub fn new() -> Self {
        Self::default()
    }

    /// `handle_packet` for a caller that knows the type: the one frame, returned instead of sent
    /// through an `Outbox` (the endpoint's static path for Default, `endpoint::SlotService`).
    #[inline]
    pub fn encapsulate(&mut self, packet: Packet) -> Frame {
        self.stats.packets_in += 1;
        self.stats.frames_sent += 1;
        self.stats.data_frames += 1;
        self.stats.overhead_bytes += 1;
        self.stats.bytes_sent += packet.len() as u64 + 1;
        Frame::new(&[RAW_BITS], packet.into_bytes())
    }

    /// `handle_frame` for a caller that knows the type: the packet to deliver, if any.
    #[inline]
    pub fn decapsulate(&mut self, frame: Frame) -> Option<Packet> {
        self.stats.frames_received += 1;
        match frame.into_payload_from(1) {
            Ok(body) => {
                self.stats.packets_delivered += 1;
                Some(Packet::new(body))
            }
            Err(_) => {
                self.stats.malformed_frames += 1;
                None
            }
        }
    }
}

impl Service for Raw {
    fn handle_packet(&mut self, _now: Instant, packet: Packet, out: &mut Outbox) {
        out.send(self.encapsulate(packet));
    }

    fn handle_frame(&mut self, _now: Instant, frame: Frame, out: &mut Outbox) {
        if let Some(p) = self.decapsulate(frame) {
            out.deliver(p);
        }
    }

    fn handle_timeout(&mut self, _now: Instant, _out: &mut Outbox) {}

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn stats(&self) -> ServiceStats {
        self.stats
    }

    fn requires_fifo(&self) -> bool {
        false // no state: frames are delivered in arrival order, as IP expects
    }

    fn name(&self) -> &'static str {
        "default"
    }

    fn as_raw(&self) -> Option<&Raw> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::Buf;

    #[test]
    fn one_byte_header_and_transparent_delivery() {
        let mut tx = Raw::new();
        let mut rx = Raw::new();
        let mut out = Outbox::default();
        tx.handle_packet(
            Instant::ZERO,
            Packet::new(Buf::from_static(&[9; 50])),
            &mut out,
        );
        assert_eq!(out.frames.len(), 1);
        assert_eq!(
            out.frames[0].len(),
            51,
            "seed 004: 50-byte packet becomes a 51-byte frame"
        );
        let f = out.frames.pop().unwrap();
        let mut out2 = Outbox::default();
        rx.handle_frame(
            Instant::ZERO,
            Frame::from_wire(Buf::from(f.to_vec())).unwrap(),
            &mut out2,
        );
        assert_eq!(out2.packets, vec![Packet::new(Buf::from_static(&[9; 50]))]);
        assert_eq!(tx.poll_timeout(), None);
    }
}
