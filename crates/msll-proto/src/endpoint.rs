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
//! With one service the scheduler degenerates to a FIFO, exactly the single-service framework that
//! seed 004 used for all chapter 4 and 5 runs (seed004-ch5.md §1.1; sec. 6.2.3: "frames go out in
//! exactly the same sequence and at the same times as without the scheduler").
//!
//! Multi-service (seed 004 ch. 6, seed004-ch6-9.md sec. 2): the classifier picks a service per
//! packet (`classifier.rs`), each service runs unaware of the others, the scheduler stamps the
//! 4-bit service number and shares the link by SCFQ (`scheduler.rs`), the demultiplexer strips the
//! number and hands the frame to the peer service; frames naming no service are counted and
//! dropped. `multi::MsllConfig` builds one from configuration.

use std::cell::Cell;
use std::collections::VecDeque;

use crate::classifier::{Classifier, MAX_SERVICES};
use crate::multi::{ratio, ServiceMetrics, TimerScaling};
use crate::packet::Packet;
use crate::scheduler::{Discipline, QueueStats, Scheduler};
use crate::service::{LinkInfo, Outbox, Raw, Service, ServiceStats};
use crate::time::{DataRate, Instant, TxTimes};
use crate::wire::Frame;

/// Endpoint-level counters (per-service counters live in each service).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EndpointStats {
    /// Frames whose service number names no configured service: counted and dropped.
    pub unknown_service: u64,
    pub frames_transmitted: u64,
    pub bytes_transmitted: u64,
    pub frames_received: u64,
    /// Frames the scheduler refused because a bounded queue was full.
    pub queue_drops: u64,
}

impl EndpointStats {
    /// Add `o`'s counts (totals over several endpoints, or over an endpoint's replacements).
    pub fn add(&mut self, o: &EndpointStats) {
        self.unknown_service += o.unknown_service;
        self.frames_transmitted += o.frames_transmitted;
        self.bytes_transmitted += o.bytes_transmitted;
        self.frames_received += o.frames_received;
        self.queue_drops += o.queue_drops;
    }
}

/// What the endpoint itself counts per service, in both directions (the inputs of Table 8.1).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct ServiceCounters {
    /// Packets and bytes the classifier gave the service (higher-layer data transmitted).
    pub packets_in: u64,
    pub bytes_in: u64,
    /// Frames and bytes of the service put on the link (link-layer data transmitted, all
    /// overhead included).
    pub frames_out: u64,
    pub bytes_out: u64,
    /// Frames of the service received from the link.
    pub frames_received: u64,
    /// Packets and bytes the service released towards IP.
    pub packets_delivered: u64,
    pub bytes_delivered: u64,
    /// The service's scheduler queue.
    pub queue: QueueStats,
}

/// A service as the endpoint holds it: Default (`Raw`) by value, run through static calls that
/// return its one frame or packet directly; any other scheme behind the `Service` trait, with its
/// output collected in the endpoint's `Outbox`. Both give the same frames, deliveries and counters
/// (`default_static_path_matches_dynamic` below).
enum SlotService {
    Raw(Raw),
    Dyn(Box<dyn Service>),
}

impl SlotService {
    fn new(service: Box<dyn Service>) -> Self {
        match service.as_raw() {
            Some(r) => SlotService::Raw(r.clone()),
            None => SlotService::Dyn(service),
        }
    }

    fn get(&self) -> &dyn Service {
        match self {
            SlotService::Raw(r) => r,
            SlotService::Dyn(d) => d.as_ref(),
        }
    }
}

struct Slot {
    service: SlotService,
    /// `service.header_overhead()`, a constant of the scheme, read once (not a dynamic call per
    /// packet).
    header_overhead: usize,
    counters: ServiceCounters,
    /// Left out of timer scaling (a scheme with adaptive timers, such as Snoop).
    unscaled: bool,
    /// `service.frames_share_ip_pacing()`, read once.
    shares_pacing: bool,
    /// The service's `poll_timeout`, or `None` when a call may have changed it. The simulator
    /// asks after every event; a scheme's answer can scan its window, and only the service that
    /// was called can have moved its timers.
    deadline: Cell<Option<Option<Instant>>>,
}

impl Slot {
    /// The service, for a call that may change its timers.
    fn svc(&mut self) -> &mut dyn Service {
        self.deadline.set(None);
        match &mut self.service {
            SlotService::Raw(r) => r,
            SlotService::Dyn(d) => d.as_mut(),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if let Some(d) = self.deadline.get() {
            return d;
        }
        let d = self.service.get().poll_timeout();
        self.deadline.set(Some(d));
        d
    }
}

pub struct Endpoint {
    services: Vec<Slot>,
    classifier: Classifier,
    scheduler: Scheduler,
    delivered: VecDeque<Packet>,
    scratch: Outbox,
    pacing: Option<DataRate>,
    tx_times: TxTimes,
    next_accept: Instant,
    stats: EndpointStats,
    timer_scaling: TimerScaling,
    link: Option<LinkInfo>,
    window: MetricsWindow,
}

/// State of `Endpoint::sample_metrics`: the counters at the previous sample and the smoothed
/// values.
#[derive(Default)]
struct MetricsWindow {
    last: Vec<(ServiceCounters, ServiceStats)>,
    smoothed: Vec<Option<ServiceMetrics>>,
    /// Per service: whether g (and d) and l have had a sample yet.
    seen: Vec<(bool, bool)>,
}

/// Table 8.1 as one endpoint can estimate it: g from what it sent, l from what its services gave
/// up on when receiving, d from the link and the retransmission rate.
fn local_metrics(
    c: &ServiceCounters,
    st: &ServiceStats,
    link: &LinkInfo,
    share: f64,
) -> ServiceMetrics {
    let g = ratio(c.bytes_in, c.bytes_out);
    let l = ratio(st.give_ups, st.give_ups + c.packets_delivered);
    ServiceMetrics::assemble(g, l, c, st, link, share)
}

/// A service's frame to the scheduler, stamped with its service number (the multiplexer). A frame
/// that a bounded queue refuses is counted and given back, for `Service::handle_dropped`.
#[inline]
fn schedule(
    scheduler: &mut Scheduler,
    stats: &mut EndpointStats,
    now: Instant,
    service: u8,
    mut f: Frame,
) -> Result<(), Frame> {
    f.set_service(service);
    let r = scheduler.enqueue(now, service as usize, f);
    if r.is_err() {
        stats.queue_drops += 1;
    }
    r
}

/// A service's packet towards IP, counted for its service.
#[inline]
fn deliver(c: &mut ServiceCounters, delivered: &mut VecDeque<Packet>, p: Packet) {
    count_delivery(c, &p);
    delivered.push_back(p);
}

#[inline]
fn count_delivery(c: &mut ServiceCounters, p: &Packet) {
    c.packets_delivered += 1;
    c.bytes_delivered += p.len() as u64;
}

impl Endpoint {
    /// An endpoint with the given services (service number = index, at most 16) that paces IP at
    /// `pacing` (the nominal link rate), or not at all with `None`. The scheduler is SCFQ with
    /// equal rates and unbounded queues; timers are left at their base values.
    ///
    /// # Panics
    /// With no services or more than 16 (a 4-bit service number).
    pub fn new(
        services: Vec<Box<dyn Service>>,
        classifier: Classifier,
        pacing: Option<DataRate>,
    ) -> Self {
        let n = services.len();
        let scheduler = Scheduler::new(Discipline::Scfq, &vec![1.0; n], None);
        Self::with_parts(services, classifier, scheduler, pacing)
    }

    /// An endpoint from its parts. The scheduler gets a queue per service if it has fewer.
    ///
    /// # Panics
    /// With no services or more than 16 (a 4-bit service number), or a scheduler with more
    /// queues than services (their rates would count in every share: review, session 44).
    pub fn with_parts(
        services: Vec<Box<dyn Service>>,
        mut classifier: Classifier,
        mut scheduler: Scheduler,
        pacing: Option<DataRate>,
    ) -> Self {
        assert!(
            !services.is_empty() && services.len() <= MAX_SERVICES,
            "1..=16 services"
        );
        assert!(
            scheduler.services() <= services.len(),
            "a scheduler of {} queues for {} services",
            scheduler.services(),
            services.len()
        );
        while scheduler.services() < services.len() {
            scheduler.add_service(1.0);
        }
        classifier.set_services(services.len());
        Endpoint {
            services: services
                .into_iter()
                .map(|mut service| {
                    // Every frame is reported, transmitted or dropped (`poll_transmit`,
                    // `drain_scratch`).
                    service.set_drops_reported();
                    Slot {
                        header_overhead: service.header_overhead(),
                        shares_pacing: service.frames_share_ip_pacing(),
                        service: SlotService::new(service),
                        counters: ServiceCounters::default(),
                        unscaled: false,
                        deadline: Cell::new(None),
                    }
                })
                .collect(),
            classifier,
            scheduler,
            delivered: VecDeque::new(),
            scratch: Outbox::default(),
            pacing,
            tx_times: TxTimes::default(),
            next_accept: Instant::ZERO,
            stats: EndpointStats::default(),
            timer_scaling: TimerScaling::None,
            link: None,
            window: MetricsWindow::default(),
        }
    }

    /// A single-service endpoint (the chapter 4/5 configuration).
    pub fn single(service: Box<dyn Service>, pacing: Option<DataRate>) -> Self {
        Self::new(vec![service], Classifier::single(0), pacing)
    }

    /// The physical link, for the Table 8.1 delay estimate and throughput prediction.
    pub fn set_link(&mut self, link: LinkInfo) {
        self.link = Some(link);
    }

    /// Loosen every service's timers for multiplexing (seed 004 sec. 6.2.2) and keep them
    /// loosened as rates change (heuristic 2).
    pub fn set_timer_scaling(&mut self, scaling: TimerScaling) {
        self.timer_scaling = scaling;
        self.apply_timer_factors();
    }

    fn apply_timer_factors(&mut self) {
        let n = self.services.len();
        for i in 0..n {
            if self.services[i].unscaled {
                continue;
            }
            let f = self.timer_scaling.factor(n, self.scheduler.share(i));
            self.services[i].svc().set_timer_factor(f);
        }
    }

    /// Leave a service's timers out of timer scaling (or put them back). For schemes whose
    /// timers adapt to the measured round trip by themselves.
    pub fn set_timer_scaling_exempt(&mut self, service: u8, exempt: bool) {
        if let Some(s) = self.services.get_mut(service as usize) {
            s.unscaled = exempt;
            if exempt {
                s.svc().set_timer_factor(1.0);
            }
        }
        self.apply_timer_factors();
    }

    /// Set r_i (the admin module's call). Under inverse-share timer scaling every service's
    /// factor follows.
    pub fn set_rate(&mut self, service: u8, rate: f64) {
        self.scheduler.set_rate(service as usize, rate);
        if self.timer_scaling == TimerScaling::InverseShare {
            self.apply_timer_factors();
        }
    }

    fn set_rates(&mut self, rates: &[f64]) {
        for (i, &r) in rates.iter().enumerate() {
            self.scheduler.set_rate(i, r);
        }
        if self.timer_scaling == TimerScaling::InverseShare {
            self.apply_timer_factors();
        }
    }

    /// Hand a service's output on: frames to the scheduler (stamped with the service number),
    /// packets to the multiplexer.
    fn drain_scratch(&mut self, now: Instant, service: u8) {
        // Runs once per packet and frame, usually with one frame or one packet: `take_each` skips
        // the `Drain` machinery (a `VecDeque::extend` from an empty drain cost ~180 instructions).
        let (scheduler, stats) = (&mut self.scheduler, &mut self.stats);
        let slot = &mut self.services[service as usize];
        crate::take_each(&mut self.scratch.frames, |f| {
            if let Err(f) = schedule(scheduler, stats, now, service, f) {
                // Lost on the air for the service: its timers start now (the frame is the
                // newest of its queue; `Service::handle_dropped`).
                slot.svc().handle_dropped(now, &f);
            }
        });
        let (c, delivered) = (
            &mut self.services[service as usize].counters,
            &mut self.delivered,
        );
        crate::take_each(&mut self.scratch.packets, |p| deliver(c, delivered, p));
    }

    /// A packet from IP. Call only at or after `next_accept()`.
    pub fn handle_packet(&mut self, now: Instant, packet: Packet) {
        let sid = self.classifier.classify(&packet);
        self.handle_classified(now, sid, packet);
    }

    /// A packet from IP that the caller already classified with this endpoint's classifier
    /// (per-service IP queues pick their queue with it): `handle_packet` without parsing the
    /// headers a second time. A service number out of range goes to the classifier's default
    /// service, as an unmatched packet does (seed 004 ch. 7: "packets not matched -> the Default
    /// service"; review, session 41: it wrapped modulo the service count).
    pub fn handle_classified(&mut self, now: Instant, sid: u8, packet: Packet) {
        let sid = if (sid as usize) < self.services.len() {
            sid
        } else {
            self.classifier.default_service()
        };
        self.accept(now, sid, packet.len());
        let slot = &mut self.services[sid as usize];
        match &mut slot.service {
            // Default has no timers: its cached deadline (`Slot::deadline`, "none") never goes
            // stale, and `handle_transmitted` (a no-op for it) is skipped. A Default that grew a
            // timer would have to take the dynamic path.
            SlotService::Raw(r) => {
                debug_assert!(r.poll_timeout().is_none());
                let f = r.encapsulate(packet);
                // A dropped frame needs no report: Default keeps no timers.
                let _ = schedule(&mut self.scheduler, &mut self.stats, now, sid, f);
            }
            SlotService::Dyn(_) => {
                slot.svc().handle_packet(now, packet, &mut self.scratch);
                self.drain_scratch(now, sid);
            }
        }
    }

    /// IP hands service `sid` (which exists) a packet of `len` bytes: the classifier counts it
    /// (and may set new rates), the service counts it, and pacing blocks IP for its time.
    #[inline(always)]
    fn accept(&mut self, now: Instant, sid: u8, len: usize) {
        if let Some(rates) = self.classifier.count(now, sid, len) {
            self.set_rates(&rates);
        }
        let slot = &mut self.services[sid as usize];
        slot.counters.packets_in += 1;
        slot.counters.bytes_in += len as u64;
        if let Some(rate) = self.pacing {
            // seed 004 sec. 6.2.1: block IP for "(packet size + fixed link-layer overhead) /
            // link speed", the time a single-service link layer would take.
            self.next_accept = now + self.tx_times.get(rate, len + slot.header_overhead);
        }
    }

    /// The frames in `scratch` were sent by a service on its own (`Service::frames_share_ip_pacing`):
    /// IP waits for their link time as for its own packets', so a bounded IP queue, not the
    /// scheduler's FIFO, absorbs them (ns-2: Snoop's retransmissions enter the interface queue).
    #[cold]
    fn charge_pacing(&mut self, now: Instant) {
        if let Some(rate) = self.pacing {
            for f in &self.scratch.frames {
                self.next_accept = self.next_accept.max(now) + self.tx_times.get(rate, f.len());
            }
        }
    }

    /// A frame of `len` bytes of service `sid` goes on the link: the endpoint and the service
    /// count it.
    #[inline(always)]
    fn count_transmitted(&mut self, sid: usize, len: usize) {
        self.stats.frames_transmitted += 1;
        self.stats.bytes_transmitted += len as u64;
        let c = &mut self.services[sid].counters;
        c.frames_out += 1;
        c.bytes_out += len as u64;
    }

    /// Whether this endpoint is one Default service with no frame waiting for the link and no
    /// packet waiting for IP. Such an endpoint does nothing on its own (Default has no timers):
    /// the simulator may then hand it a packet for a free link with [`Endpoint::send_now`], and
    /// route a received frame's packet without polling it for anything else.
    #[inline]
    pub fn is_idle_default(&self) -> bool {
        self.is_default_only() && self.scheduler.is_empty() && self.delivered.is_empty()
    }

    /// Whether this endpoint runs one service, Default (fixed when it is built).
    #[inline]
    pub fn is_default_only(&self) -> bool {
        matches!(
            self.services.as_slice(),
            [Slot {
                service: SlotService::Raw(_),
                ..
            }]
        )
    }

    /// For an idle Default endpoint (`is_idle_default`), `handle_packet` then `poll_transmit`
    /// in one step, for a caller whose link is free and which may hand over a packet now
    /// (`next_accept() <= now`): the packet's frame, counted through the scheduler
    /// (`Scheduler::pass_through`) without queueing it; the same frame, state and counters as
    /// the two calls (`send_now_and_receive_now_equal_the_general_calls` below). Any other
    /// endpoint hands the packet back untouched, for those two calls.
    ///
    /// (It does not make the two calls itself: a second call site of `poll_transmit` and
    /// `handle_frame` made LLVM stop inlining them into the simulator's general path, +3-6 %
    /// instructions on the multi-service and ARQ cases, session 12.)
    #[inline]
    pub fn send_now(&mut self, now: Instant, packet: Packet) -> Result<Frame, Packet> {
        if !self.is_idle_default() {
            return Err(packet);
        }
        // What `handle_classified` does, for one service: the classifier's answer is 0, or out
        // of range and so the default service, which is 0.
        self.accept(now, 0, packet.len());
        let SlotService::Raw(r) = &mut self.services[0].service else {
            unreachable!("is_idle_default checked the service")
        };
        let mut f = r.encapsulate(packet);
        f.set_service(0);
        let flen = f.len();
        let passed = self.scheduler.pass_through(now, 0, flen);
        debug_assert!(
            passed,
            "an idle scheduler takes a frame of an existing service"
        );
        self.count_transmitted(0, flen);
        Ok(f)
    }

    /// For an idle Default endpoint (`is_idle_default`), `handle_frame` then `poll_deliver` in
    /// one step: the frame gives at most one packet, handed back directly instead of through the
    /// delivery queue (`send_now_and_receive_now_equal_the_general_calls` below). Any other
    /// endpoint hands the frame back untouched, for `handle_frame` (see `send_now` for why).
    #[inline]
    pub fn receive_now(&mut self, frame: Frame) -> Result<Option<Packet>, Frame> {
        if !self.is_idle_default() {
            return Err(frame);
        }
        self.stats.frames_received += 1;
        let Some(slot) = self.services.get_mut(frame.service() as usize) else {
            self.stats.unknown_service += 1;
            return Ok(None);
        };
        slot.counters.frames_received += 1;
        let SlotService::Raw(r) = &mut slot.service else {
            unreachable!("is_idle_default checked the service")
        };
        let p = r.decapsulate(frame);
        if let Some(p) = &p {
            count_delivery(&mut slot.counters, p);
        }
        Ok(p)
    }

    /// A frame from the link. A frame too short to carry the service byte never gets here
    /// (`Frame::from_wire*` refuses it; the daemon counts it as `malformed`).
    pub fn handle_frame(&mut self, now: Instant, frame: Frame) {
        self.stats.frames_received += 1;
        // The demultiplexer: the service number picks the peer service (seed 004 sec. 6.2.4).
        let sid = frame.service() as usize;
        match self.services.get_mut(sid) {
            Some(slot) => {
                slot.counters.frames_received += 1;
                match &mut slot.service {
                    SlotService::Raw(r) => {
                        if let Some(p) = r.decapsulate(frame) {
                            deliver(&mut slot.counters, &mut self.delivered, p);
                        }
                    }
                    SlotService::Dyn(_) => {
                        slot.svc().handle_frame(now, frame, &mut self.scratch);
                        if slot.shares_pacing {
                            self.charge_pacing(now);
                        }
                        self.drain_scratch(now, sid as u8);
                    }
                }
            }
            None => self.stats.unknown_service += 1,
        }
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        for sid in 0..self.services.len() {
            if self.services[sid].poll_timeout().is_some_and(|t| t <= now) {
                self.services[sid]
                    .svc()
                    .handle_timeout(now, &mut self.scratch);
                if self.services[sid].shares_pacing {
                    self.charge_pacing(now);
                }
                self.drain_scratch(now, sid as u8);
            }
        }
    }

    /// The next frame to put on the link; call only when the link is free (the scheduler is
    /// non-preemptive: the link's transmit-complete decides when the next frame is chosen).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Frame> {
        let (sid, f) = self.scheduler.dequeue(now)?;
        self.count_transmitted(sid, f.len());
        let slot = &mut self.services[sid];
        // The transmit "interrupt": timers that run from transmission start (see
        // `Service::handle_transmitted`) start now, not while the frame waited in its queue.
        if let SlotService::Dyn(d) = &mut slot.service {
            slot.deadline.set(None);
            d.handle_transmitted(now, &f);
        }
        Some(f)
    }

    /// True if a frame is waiting for the link.
    pub fn has_backlog(&self) -> bool {
        !self.scheduler.is_empty()
    }

    pub fn poll_deliver(&mut self) -> Option<Packet> {
        self.delivered.pop_front()
    }

    /// How many packets `poll_deliver` has.
    pub fn deliveries(&self) -> usize {
        self.delivered.len()
    }

    /// Whether `poll_deliver` has a packet.
    pub fn has_deliveries(&self) -> bool {
        !self.delivered.is_empty()
    }

    /// Every delivered packet at once, in order: swaps the endpoint's queue with `into` (which
    /// must be empty; its capacity is reused), so the packets are not moved one by one.
    pub fn take_delivered(&mut self, into: &mut VecDeque<Packet>) {
        debug_assert!(into.is_empty());
        std::mem::swap(&mut self.delivered, into);
    }

    /// Earliest service timer.
    pub fn poll_timeout(&self) -> Option<Instant> {
        // The simulator asks after every event; most endpoints have one service.
        if let [only] = self.services.as_slice() {
            return only.poll_timeout();
        }
        self.services.iter().filter_map(Slot::poll_timeout).min()
    }

    /// When the classifier accepts the next IP packet.
    pub fn next_accept(&self) -> Instant {
        self.next_accept
    }

    /// The rate IP is paced at, if it is (seed 004 sec. 6.2.1).
    pub fn pacing(&self) -> Option<DataRate> {
        self.pacing
    }

    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    /// Number of services.
    pub fn services(&self) -> usize {
        self.services.len()
    }

    pub fn service_stats(&self) -> Vec<ServiceStats> {
        self.services
            .iter()
            .map(|s| s.service.get().stats())
            .collect()
    }

    /// Whether service `sid` needs its frames in link order ([`Service::requires_fifo`]); false
    /// for an unknown service. A driver over a path that reorders (mslld) drops such a
    /// service's frames that arrive behind a later one.
    pub fn requires_fifo(&self, sid: u8) -> bool {
        self.services
            .get(sid as usize)
            .is_some_and(|s| s.service.get().requires_fifo())
    }

    pub fn service_names(&self) -> Vec<&'static str> {
        self.services
            .iter()
            .map(|s| s.service.get().name())
            .collect()
    }

    /// The endpoint's own per-service counters (classifier, scheduler and multiplexer side).
    pub fn service_counters(&self) -> Vec<ServiceCounters> {
        self.services
            .iter()
            .enumerate()
            .map(|(i, s)| ServiceCounters {
                queue: self.scheduler.stats(i),
                ..s.counters
            })
            .collect()
    }

    /// r_i / sum r_j for every service.
    pub fn shares(&self) -> Vec<f64> {
        (0..self.services.len())
            .map(|i| self.scheduler.share(i))
            .collect()
    }

    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// Table 8.1 metrics as this endpoint alone can estimate them: goodput from what it sent,
    /// residual loss from what its services gave up on when receiving (a service that detects no
    /// loss, such as Default, reports 0; `ServiceMetrics::from_ends` uses both ends instead), delay
    /// from the link and the retransmission rate. Empty without `set_link`.
    pub fn service_metrics(&self) -> Vec<ServiceMetrics> {
        let Some(link) = self.link else {
            return Vec::new();
        };
        self.service_counters()
            .iter()
            .zip(self.services.iter())
            .enumerate()
            .map(|(i, (c, s))| {
                local_metrics(c, &s.service.get().stats(), &link, self.scheduler.share(i))
            })
            .collect()
    }

    /// Table 8.1 metrics over the interval since the previous call, smoothed as
    /// `new = (1 - weight) old + weight sample` (seed 004 sec. 8.3: "a weighted average of the
    /// newest value and the previously reported one"; the weight is AMBIGUOUS A17, TCP's 1/8 is
    /// the proposal). The driver calls it once per measurement interval. g and d are sampled
    /// over intervals in which the service sent, l over intervals in which it delivered or gave
    /// up: otherwise each keeps its previous value, and what the interval counted on that side
    /// (packets handed over but not sent yet) carries over to the next sample (review, session
    /// 47: such an interval was skipped whole and its counts lost, so the next goodput sample
    /// read 0; and a receive-only interval sampled g = 0/0 = 0). A weight that is not a number
    /// counts as 0. Empty without `set_link`.
    pub fn sample_metrics(&mut self, weight: f64) -> Vec<ServiceMetrics> {
        let Some(link) = self.link else {
            return Vec::new();
        };
        let w = if weight.is_nan() {
            0.0
        } else {
            weight.clamp(0.0, 1.0)
        };
        let now: Vec<(ServiceCounters, ServiceStats)> = self
            .service_counters()
            .into_iter()
            .zip(self.services.iter().map(|s| s.service.get().stats()))
            .collect();
        let n = now.len();
        self.window.last.resize(n, Default::default());
        self.window.smoothed.resize(n, None);
        self.window.seen.resize(n, (false, false));
        for (i, (c, st)) in now.iter().enumerate() {
            let (pc, pst) = &self.window.last[i];
            let dc = ServiceCounters {
                packets_in: c.packets_in.saturating_sub(pc.packets_in),
                bytes_in: c.bytes_in.saturating_sub(pc.bytes_in),
                frames_out: c.frames_out.saturating_sub(pc.frames_out),
                bytes_out: c.bytes_out.saturating_sub(pc.bytes_out),
                frames_received: c.frames_received.saturating_sub(pc.frames_received),
                packets_delivered: c.packets_delivered.saturating_sub(pc.packets_delivered),
                bytes_delivered: c.bytes_delivered.saturating_sub(pc.bytes_delivered),
                queue: c.queue,
            };
            let dst = ServiceStats {
                retransmissions: st.retransmissions.saturating_sub(pst.retransmissions),
                data_frames: st.data_frames.saturating_sub(pst.data_frames),
                give_ups: st.give_ups.saturating_sub(pst.give_ups),
                ..Default::default()
            };
            let sent = dc.bytes_out > 0;
            let received = dc.packets_delivered > 0 || dst.give_ups > 0;
            if !sent && !received {
                continue;
            }
            let sample = local_metrics(&dc, &dst, &link, self.scheduler.share(i));
            let (seen_tx, seen_rx) = self.window.seen[i];
            let old = self.window.smoothed[i].unwrap_or(sample);
            // The first sample of a metric is taken as is; later ones are smoothed; a metric
            // the interval did not measure keeps its value.
            let mix = |seen: bool, measured: bool, o: f64, s: f64| match (seen, measured) {
                (_, false) => o,
                (false, true) => s,
                (true, true) => (1.0 - w) * o + w * s,
            };
            let g = mix(seen_tx, sent, old.goodput, sample.goodput);
            let l = mix(seen_rx, received, old.loss, sample.loss);
            self.window.smoothed[i] = Some(ServiceMetrics {
                goodput: g,
                loss: l,
                delay_s: mix(seen_tx, sent, old.delay_s, sample.delay_s),
                effective_goodput: g * (1.0 - l),
                share: sample.share,
                predicted_bps: link.rate.bps() as f64 * sample.share * g * (1.0 - l),
            });
            self.window.seen[i] = (seen_tx || sent, seen_rx || received);
            // Only the side the sample used moves on; the other's counts carry over.
            let (pc, pst) = &mut self.window.last[i];
            if sent {
                pc.packets_in = c.packets_in;
                pc.bytes_in = c.bytes_in;
                pc.frames_out = c.frames_out;
                pc.bytes_out = c.bytes_out;
                pst.retransmissions = st.retransmissions;
                pst.data_frames = st.data_frames;
            }
            if received {
                pc.frames_received = c.frames_received;
                pc.packets_delivered = c.packets_delivered;
                pc.bytes_delivered = c.bytes_delivered;
                pst.give_ups = st.give_ups;
            }
        }
        self.window
            .smoothed
            .iter()
            .map(|m| m.unwrap_or_default())
            .collect()
    }

    /// Packets the services hold and have not handed to the scheduler yet
    /// (`Service::held_packets`): with `scheduler().len()`, what waits for the link.
    pub fn held_packets(&self) -> usize {
        self.services
            .iter()
            .map(|s| s.service.get().held_packets())
            .sum()
    }

    /// Have every service keep its [`crate::service::FrameLog`] (those that keep one).
    pub fn enable_frame_logs(&mut self) {
        for s in &mut self.services {
            s.svc().enable_frame_log();
        }
    }

    /// Service `i`'s frame log, if it keeps one and it was enabled.
    pub fn frame_log(&self, i: usize) -> Option<&crate::service::FrameLog> {
        self.services.get(i)?.service.get().frame_log()
    }

    /// Set one service's timer factor directly (overrides the scaling until the next change).
    pub fn set_timer_factor(&mut self, service: u8, factor: f64) {
        if let Some(s) = self.services.get_mut(service as usize) {
            s.svc().set_timer_factor(factor);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buf::Buf;
    use crate::service::Raw;
    use crate::time::Duration;

    #[test]
    fn paces_ip_at_nominal_rate_and_stamps_service() {
        let rate = DataRate::from_bps(14_400).unwrap();
        let mut ep = Endpoint::single(Box::new(Raw::new()), Some(rate));
        ep.handle_packet(Instant::ZERO, Packet::new(Buf::from(vec![0u8; 50])));
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
    fn handle_classified_equals_handle_packet() {
        use crate::wire::{IpProto, Ipv4Repr};
        let pkt = |tos: u8| {
            let mut b = vec![0u8; 60];
            Ipv4Repr {
                src: [10, 0, 0, 1],
                dst: [10, 0, 0, 2],
                protocol: IpProto::UDP,
                tos,
                total_len: 60,
                ident: 7,
                ttl: 64,
                header_len: 20,
            }
            .emit(&mut b[..20]);
            Packet::new(Buf::from(b))
        };
        let two = || {
            let svcs: Vec<Box<dyn Service>> = vec![Box::new(Raw::new()), Box::new(Raw::new())];
            Endpoint::new(svcs, Classifier::new(Default::default(), 2), None)
        };
        let (mut a, mut b) = (two(), two());
        for tos in [0u8, 1, 1, 0] {
            let p = pkt(tos);
            let sid = a.classifier().classify(&p);
            assert_eq!(sid, tos, "DS value = service number (seed 004 sec. 7.1)");
            a.handle_packet(Instant::ZERO, p.clone());
            b.handle_classified(Instant::ZERO, sid, p);
        }
        assert_eq!(a.service_counters(), b.service_counters());
        while let Some(fa) = a.poll_transmit(Instant::ZERO) {
            let fb = b.poll_transmit(Instant::ZERO).unwrap();
            assert_eq!((fa.service(), fa.to_vec()), (fb.service(), fb.to_vec()));
        }
        assert!(b.poll_transmit(Instant::ZERO).is_none());
        // A service number out of range goes to the default service (0), never panics.
        b.handle_classified(Instant::ZERO, 17, pkt(1));
        assert_eq!(b.poll_transmit(Instant::ZERO).unwrap().service(), 0);
    }

    /// An endpoint over `svcs` as the property tests build it: SCFQ at equal rates, queues
    /// bounded by `limit`, IP paced at `pacing`, one classifier output per service.
    fn test_endpoint(
        svcs: Vec<Box<dyn Service>>,
        limit: Option<usize>,
        pacing: Option<DataRate>,
    ) -> Endpoint {
        use crate::scheduler::{Discipline, Scheduler};
        let n = svcs.len();
        let scheduler = Scheduler::new(Discipline::Scfq, &vec![1.0; n], limit);
        let classifier = if n == 1 {
            Classifier::single(0)
        } else {
            Classifier::new(Default::default(), n)
        };
        Endpoint::with_parts(svcs, classifier, scheduler, pacing)
    }

    /// `bytes` as a frame off the link naming service `sid` (any length, even empty).
    fn frame_off_wire(mut bytes: Vec<u8>, sid: u8) -> Option<Frame> {
        if let Some(x) = bytes.first_mut() {
            *x = (*x & 0x0f) | (sid << 4);
        }
        Frame::from_wire(Buf::from(bytes))
    }

    /// A frame as the tests compare it: service number and bytes.
    fn seen(f: Option<Frame>) -> Option<(u8, Vec<u8>)> {
        f.map(|f| (f.service(), f.to_vec()))
    }

    /// Default behind the trait: `as_raw` is `None`, so the endpoint takes its dynamic path.
    struct DynRaw(Raw);

    impl Service for DynRaw {
        fn handle_packet(&mut self, now: Instant, packet: Packet, out: &mut Outbox) {
            self.0.handle_packet(now, packet, out)
        }
        fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox) {
            self.0.handle_frame(now, frame, out)
        }
        fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
            self.0.handle_timeout(now, out)
        }
        fn poll_timeout(&self) -> Option<Instant> {
            self.0.poll_timeout()
        }
        fn stats(&self) -> ServiceStats {
            self.0.stats()
        }
        fn name(&self) -> &'static str {
            self.0.name()
        }
    }

    proptest::proptest! {
        /// The static Default path (`SlotService::Raw`) gives exactly what the dynamic one does:
        /// the same frames on the link, the same deliveries, the same endpoint, per-service and
        /// scheme counters and timers, for any mix of packets, well-formed, malformed and
        /// unknown-service frames and timeouts; with one service, two Defaults, or Default beside
        /// Selective Repeat (a scheme with timers and its own frames); with bounded queues
        /// (drops) or not.
        #[test]
        fn default_static_path_matches_dynamic(
            ops in proptest::collection::vec((0u8..5, 0usize..70, 0u8..3), 1..120),
            services in 1usize..=3,
            limit in proptest::option::of(1usize..3),
        ) {
            use crate::service::sr::{NakPolicy, RetransmitTimer, Sr, SrConfig};
            let rate = DataRate::from_bps(2_000_000).unwrap();
            let build = |dynamic: bool| {
                let raw = || -> Box<dyn Service> {
                    if dynamic { Box::new(DynRaw(Raw::new())) } else { Box::new(Raw::new()) }
                };
                let sr = || -> Box<dyn Service> {
                    Box::new(Sr::new(SrConfig {
                        nak_policy: NakPolicy::PerFrame,
                        window: 8,
                        rto: Duration::from_micros(15),
                        ack_delay: Duration::from_micros(3),
                        timer: RetransmitTimer::default(),
                    }))
                };
                let svcs = match services {
                    1 => vec![raw()],
                    2 => vec![raw(), raw()],
                    _ => vec![raw(), sr()],
                };
                test_endpoint(svcs, limit, Some(rate))
            };
            let (mut a, mut b) = (build(false), build(true));
            for (i, &(op, len, sid)) in ops.iter().enumerate() {
                let now = Instant::ZERO + Duration::from_nanos(i as u64 * 1000);
                let bytes: Vec<u8> = (0..len).map(|k| (k * 7 + i) as u8).collect();
                match op {
                    0 | 1 => {
                        let p = Packet::new(Buf::from(bytes));
                        a.handle_classified(now, sid, p.clone());
                        b.handle_classified(now, sid, p);
                    }
                    2 => {
                        // A frame off the link: service number `sid` (2 names no service of a
                        // two-service endpoint, 1 none of a single one), any length, even empty.
                        if let Some(f) = frame_off_wire(bytes, sid) {
                            a.handle_frame(now, f.clone());
                            b.handle_frame(now, f);
                        }
                    }
                    3 => proptest::prop_assert_eq!(seen(a.poll_transmit(now)), seen(b.poll_transmit(now))),
                    _ => {
                        a.handle_timeout(now);
                        b.handle_timeout(now);
                    }
                }
                proptest::prop_assert_eq!(a.poll_deliver(), b.poll_deliver());
                proptest::prop_assert_eq!(a.poll_timeout(), b.poll_timeout());
                proptest::prop_assert_eq!(a.next_accept(), b.next_accept());
            }
            while let Some(fa) = a.poll_transmit(Instant::ZERO) {
                proptest::prop_assert_eq!(seen(Some(fa)), seen(b.poll_transmit(Instant::ZERO)));
            }
            proptest::prop_assert!(b.poll_transmit(Instant::ZERO).is_none());
            proptest::prop_assert_eq!(a.stats(), b.stats());
            proptest::prop_assert_eq!(a.service_counters(), b.service_counters());
            proptest::prop_assert_eq!(a.service_stats(), b.service_stats());
        }
    }

    #[test]
    fn a_frame_dropped_by_a_bounded_queue_is_reported_to_its_service() {
        // `Service::handle_dropped`: with a bound of one frame, of three packets handed at once
        // frames 1 and 2 are dropped. Reported at the drop, their timers run from then (400 ms);
        // inferred (`HandOffLog`), they would start only one RTO after the last report, here
        // frame 0's transmission at 100 ms, and be resent at 900 ms.
        use crate::service::sr::{NakPolicy, RetransmitTimer, Sr, SrConfig};
        use crate::wire::ArqFrame;
        let sr = Sr::new(SrConfig {
            nak_policy: NakPolicy::PerFrame,
            window: 8,
            rto: Duration::from_millis(400),
            ack_delay: Duration::from_millis(30),
            timer: RetransmitTimer::PerFrame,
        });
        let mut ep = test_endpoint(vec![Box::new(sr)], Some(1), None);
        for i in 0..3u8 {
            ep.handle_classified(Instant::ZERO, 0, Packet::new(Buf::from(vec![i; 20])));
        }
        assert_eq!(ep.stats().queue_drops, 2);
        let ms = |v| Instant::ZERO + Duration::from_millis(v);
        let f = ep.poll_transmit(ms(100)).unwrap();
        assert_eq!(ArqFrame::data_seq(&f), Some(0));
        assert!(ep.poll_transmit(ms(100)).is_none());
        assert_eq!(ep.poll_timeout(), Some(ms(400)));
        ep.handle_timeout(ms(400));
        let resent: Vec<Option<u8>> = std::iter::from_fn(|| ep.poll_transmit(ms(400)))
            .map(|f| ArqFrame::data_seq(&f))
            .collect();
        // the bound holds one: frame 2's copy is dropped again (and reported again)
        assert_eq!(resent, vec![Some(1)]);
        assert_eq!(ep.stats().queue_drops, 3);
        assert_eq!(ep.poll_timeout(), Some(ms(500)), "frame 0's timer");
    }

    #[test]
    fn unknown_service_counted_and_dropped() {
        let mut ep = Endpoint::single(Box::new(Raw::new()), None);
        let f = Frame::from_wire(Buf::from_static(&[0x30, 1, 2])).unwrap();
        ep.handle_frame(Instant::ZERO, f);
        assert_eq!(ep.stats().unknown_service, 1);
        assert!(ep.poll_deliver().is_none());
    }

    proptest::proptest! {
        /// `send_now` is `handle_packet` then `poll_transmit`, and `receive_now` is
        /// `handle_frame` then `poll_deliver`: the same frame, deliveries, timers, pacing and
        /// counters (endpoint, per-service, scheme and scheduler), whether the
        /// endpoint is idle Default (its direct path) or not (one Default with frames waiting,
        /// two Defaults: the general path), with or without pacing and queue bounds.
        #[test]
        fn send_now_and_receive_now_equal_the_general_calls(
            ops in proptest::collection::vec((0u8..4, 0usize..70, 0u8..3), 1..120),
            services in 1usize..=2,
            limit in proptest::option::of(1usize..3),
            paced in proptest::bool::ANY,
        ) {
            let rate = DataRate::from_bps(2_000_000).unwrap();
            let build = || {
                let svcs: Vec<Box<dyn Service>> =
                    (0..services).map(|_| Box::new(Raw::new()) as Box<dyn Service>).collect();
                test_endpoint(svcs, limit, paced.then_some(rate))
            };
            let (mut a, mut b) = (build(), build());
            for (i, &(op, len, sid)) in ops.iter().enumerate() {
                let now = Instant::ZERO + Duration::from_micros(i as u64 * 100);
                let bytes: Vec<u8> = (0..len).map(|k| (k * 7 + i) as u8).collect();
                match op {
                    0 => {
                        let p = Packet::new(Buf::from(bytes));
                        let fa = match a.send_now(now, p.clone()) {
                            Ok(f) => Some(f),
                            Err(back) => {
                                proptest::prop_assert!(!a.is_idle_default());
                                a.handle_packet(now, back);
                                a.poll_transmit(now)
                            }
                        };
                        b.handle_packet(now, p);
                        proptest::prop_assert_eq!(seen(fa), seen(b.poll_transmit(now)));
                    }
                    1 => {
                        // A packet left waiting: the endpoint is no longer idle.
                        let p = Packet::new(Buf::from(bytes));
                        a.handle_packet(now, p.clone());
                        b.handle_packet(now, p);
                    }
                    2 => proptest::prop_assert_eq!(seen(a.poll_transmit(now)), seen(b.poll_transmit(now))),
                    _ => {
                        // A frame off the link: any service number, any length, even empty.
                        if let Some(f) = frame_off_wire(bytes, sid) {
                            let pa = match a.receive_now(f.clone()) {
                                Ok(p) => p,
                                Err(back) => {
                                    proptest::prop_assert!(!a.is_idle_default());
                                    a.handle_frame(now, back);
                                    a.poll_deliver()
                                }
                            };
                            b.handle_frame(now, f);
                            proptest::prop_assert_eq!(pa, b.poll_deliver());
                        }
                    }
                }
                proptest::prop_assert_eq!(a.is_idle_default(), b.is_idle_default());
                proptest::prop_assert_eq!(a.poll_deliver(), b.poll_deliver());
                proptest::prop_assert_eq!(a.poll_timeout(), b.poll_timeout());
                proptest::prop_assert_eq!(a.next_accept(), b.next_accept());
                proptest::prop_assert_eq!(a.stats(), b.stats());
                proptest::prop_assert_eq!(a.service_counters(), b.service_counters());
                proptest::prop_assert_eq!(a.service_stats(), b.service_stats());
                proptest::prop_assert_eq!(
                    a.scheduler().virtual_time().to_bits(),
                    b.scheduler().virtual_time().to_bits()
                );
                proptest::prop_assert_eq!(a.classifier().bytes(), b.classifier().bytes());
            }
        }
    }
}
