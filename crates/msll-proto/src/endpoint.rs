//! `Endpoint`: one end of a wireless link running the multi-service link layer. The simulator and
//! the daemon drive this same type.
//!
//! ```text
//!        IP --handle_packet--> [classifier] --> service i --Outbox.frames--> [scheduler] --poll_transmit--> link
//!        IP <--poll_deliver--- [multiplexer] <-- service i <--- [demultiplexer] <--handle_frame--- link
//! ```
//!
//! Run-loop contract: after every input (`handle_packet`, `handle_frame`, `handle_timeout`), call
//! `poll_transmit` while the link is free, drain `poll_deliver`, then re-read `poll_timeout` and
//! `next_accept`. `handle_packet` must not be called before `next_accept()`: that is the classifier's
//! IP pacing (seed 004 ch. 7, L1314: the classifier "blocks the IP module for the nominal duration of
//! the packet's transmission"). `poll_transmit` is called only when the link is free: the link's
//! transmit-complete "interrupt" decides when a frame leaves, so the scheduler always has the backlog.
//!
//! With one service and the FIFO scheduler this is exactly the single-service framework that seed
//! 004 used for all chapter 4 and 5 runs (seed004-ch5.md §1.1).

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::service::{Outbox, Service, ServiceStats};
use crate::time::{DataRate, Instant};
use crate::wire::Frame;

/// Endpoint-level counters (per-service counters live in each service).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EndpointStats {
    /// Frames whose service number names no configured service: counted and dropped.
    pub unknown_service: u64,
    /// Frames too short to carry the service byte.
    pub malformed: u64,
    pub frames_transmitted: u64,
    pub bytes_transmitted: u64,
    pub frames_received: u64,
}

struct Slot {
    service: Box<dyn Service>,
}

/// Classifier: maps an IP packet to a service number. The full heuristic and DiffServ rule sets
/// arrive with the MSLL issue; here every packet goes to one service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classifier {
    /// Every packet to this service.
    Single(u8),
}

impl Classifier {
    pub fn classify(&self, _packet: &Packet) -> u8 {
        match *self {
            Classifier::Single(s) => s,
        }
    }
}

pub struct Endpoint {
    services: Vec<Slot>,
    classifier: Classifier,
    fifo: VecDeque<Frame>,
    delivered: VecDeque<Packet>,
    scratch: Outbox,
    pacing: Option<DataRate>,
    next_accept: Instant,
    stats: EndpointStats,
}

impl Endpoint {
    /// An endpoint with the given services (service number = index, at most 16) that paces IP at
    /// `pacing` (the nominal link rate), or not at all with `None`.
    ///
    /// # Panics
    /// With no services or more than 16 (a 4-bit service number).
    pub fn new(
        services: Vec<Box<dyn Service>>,
        classifier: Classifier,
        pacing: Option<DataRate>,
    ) -> Self {
        assert!(
            !services.is_empty() && services.len() <= 16,
            "1..=16 services"
        );
        Endpoint {
            services: services
                .into_iter()
                .map(|service| Slot { service })
                .collect(),
            classifier,
            fifo: VecDeque::new(),
            delivered: VecDeque::new(),
            scratch: Outbox::default(),
            pacing,
            next_accept: Instant::ZERO,
            stats: EndpointStats::default(),
        }
    }

    /// A single-service endpoint (the chapter 4/5 configuration).
    pub fn single(service: Box<dyn Service>, pacing: Option<DataRate>) -> Self {
        Self::new(vec![service], Classifier::Single(0), pacing)
    }

    fn drain_scratch(&mut self, service: u8) {
        for mut f in self.scratch.frames.drain(..) {
            f.set_service(service);
            self.fifo.push_back(f);
        }
        self.delivered.extend(self.scratch.packets.drain(..));
    }

    /// A packet from IP. Call only at or after `next_accept()`.
    pub fn handle_packet(&mut self, now: Instant, packet: Packet) {
        let mut sid = self.classifier.classify(&packet);
        if sid as usize >= self.services.len() {
            sid = 0; // unmatched traffic goes to the default service
        }
        let len = packet.len();
        let slot = &mut self.services[sid as usize];
        if let Some(rate) = self.pacing {
            self.next_accept = now + rate.tx_time(len + slot.service.header_overhead());
        }
        slot.service.handle_packet(now, packet, &mut self.scratch);
        self.drain_scratch(sid);
    }

    /// A frame from the link (any bytes: malformed frames are counted and dropped).
    pub fn handle_frame(&mut self, now: Instant, frame: Frame) {
        self.stats.frames_received += 1;
        let sid = frame.service() as usize;
        match self.services.get_mut(sid) {
            Some(slot) => {
                slot.service.handle_frame(now, frame, &mut self.scratch);
                self.drain_scratch(sid as u8);
            }
            None => self.stats.unknown_service += 1,
        }
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        for sid in 0..self.services.len() {
            if self.services[sid]
                .service
                .poll_timeout()
                .is_some_and(|t| t <= now)
            {
                self.services[sid]
                    .service
                    .handle_timeout(now, &mut self.scratch);
                self.drain_scratch(sid as u8);
            }
        }
    }

    /// The next frame to put on the link; call only when the link is free.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Frame> {
        let f = self.fifo.pop_front()?;
        // Timers that run from transmission start now (Service::handle_transmitted).
        if let Some(slot) = self.services.get_mut(f.service() as usize) {
            slot.service.handle_transmitted(now, &f);
        }
        self.stats.frames_transmitted += 1;
        self.stats.bytes_transmitted += f.len() as u64;
        Some(f)
    }

    /// True if a frame is waiting for the link.
    pub fn has_backlog(&self) -> bool {
        !self.fifo.is_empty()
    }

    pub fn poll_deliver(&mut self) -> Option<Packet> {
        self.delivered.pop_front()
    }

    /// Earliest service timer.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.services
            .iter()
            .filter_map(|s| s.service.poll_timeout())
            .min()
    }

    /// When the classifier accepts the next IP packet.
    pub fn next_accept(&self) -> Instant {
        self.next_accept
    }

    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    pub fn service_stats(&self) -> Vec<ServiceStats> {
        self.services.iter().map(|s| s.service.stats()).collect()
    }

    pub fn service_names(&self) -> Vec<&'static str> {
        self.services.iter().map(|s| s.service.name()).collect()
    }

    pub fn set_timer_factor(&mut self, service: u8, factor: f64) {
        if let Some(s) = self.services.get_mut(service as usize) {
            s.service.set_timer_factor(factor);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Raw;
    use crate::time::Duration;
    use bytes::Bytes;

    #[test]
    fn paces_ip_at_nominal_rate_and_stamps_service() {
        let rate = DataRate::from_bps(14_400).unwrap();
        let mut ep = Endpoint::single(Box::new(Raw::new()), Some(rate));
        ep.handle_packet(Instant::ZERO, Packet::new(Bytes::from(vec![0u8; 50])));
        // (50 + 1 header byte) * 8 / 14400 s
        assert_eq!(
            ep.next_accept(),
            Instant::ZERO + Duration::from_nanos(28_333_333)
        );
        let f = ep.poll_transmit(Instant::ZERO).unwrap();
        assert_eq!(f.len(), 51);
        assert_eq!(f.service(), 0);
        assert!(ep.poll_transmit(Instant::ZERO).is_none());
    }

    #[test]
    fn unknown_service_counted_and_dropped() {
        let mut ep = Endpoint::single(Box::new(Raw::new()), None);
        let f = Frame::from_wire(Bytes::from_static(&[0x30, 1, 2])).unwrap();
        ep.handle_frame(Instant::ZERO, f);
        assert_eq!(ep.stats().unknown_service, 1);
        assert!(ep.poll_deliver().is_none());
    }
}
