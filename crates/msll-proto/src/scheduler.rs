//! The frame scheduler: per-service FIFO queues served by Self-Clocked Fair Queueing (SCFQ), or by
//! one arrival-order FIFO for comparison (seed 004 Figs 8.2/8.3, "without scheduling").
//!
//! Seed 004 sec. 6.2.3 (seed004-ch6-9.md sec. 2.5, Fig. 6.3):
//! - the k-th frame of service i arriving at time t gets the stamp
//!   `V_i(k) = L(k) / r_i + max(V_i(k-1), V(t))`, where `V_i(k-1)` is the stamp of the last frame in
//!   queue i and `V(t)` the system virtual time;
//! - the virtual time is "the virtual time stamp of the frame currently being transmitted", set when
//!   a frame is dequeued;
//! - the heads of the non-empty queues are kept in a binary heap ordered by stamp, so a frame costs at
//!   most two heap repairs, 2 lg(n) comparisons; time stamping is O(1);
//! - work conserving (never idle with a backlog) and non-preemptive (the link takes one frame at a
//!   time, through `dequeue`, only when it is free).
//!
//! Choices where the seed is silent (AMBIGUOUS A8, with the proposals of seed004-ch6-9.md sec. 2.5):
//! - ties between equal stamps go to the earlier arrival (a global sequence number);
//! - when the scheduler becomes idle, V and every last stamp restart at 0 (Golestani's reset; it
//!   changes no decision, since every last stamp is <= V once all queues are empty);
//! - a new rate applies to frames arriving afterwards; queued stamps are not recomputed;
//! - a bounded queue drops the arriving frame (tail drop) and counts it. In FIFO mode the bound is
//!   on the one shared queue, in SCFQ mode on each service's queue.
//! - L(k) is the whole frame in bytes, service byte included (every frame carries it).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::time::{Duration, Instant};
use crate::wire::Frame;

/// How the link is shared among services.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Discipline {
    /// Self-Clocked Fair Queueing (seed 004 sec. 6.2.3).
    #[default]
    Scfq,
    /// One FIFO in arrival order across all services: no link-level scheduling (Fig. 8.2/8.3).
    Fifo,
}

/// Per-service scheduler counters.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct QueueStats {
    pub enqueued: u64,
    pub dequeued: u64,
    pub bytes_dequeued: u64,
    /// Frames refused because the queue was full (tail drop).
    pub dropped: u64,
    pub max_len: usize,
    /// Sum of the time frames spent queued (enqueue to start of transmission).
    pub wait_total: Duration,
}

impl QueueStats {
    /// Mean time a frame waited for the link.
    pub fn mean_wait(&self) -> Duration {
        Duration::from_nanos(
            self.wait_total
                .as_nanos()
                .checked_div(self.dequeued)
                .unwrap_or(0),
        )
    }
}

impl QueueStats {
    /// Count `e` leaving its queue for the link at `now`.
    #[inline]
    fn departed(&mut self, now: Instant, e: &Entry) {
        self.departed_len(now, e.at, e.frame.len());
    }

    /// Count a frame of `len` bytes, queued at `at`, leaving at `now`.
    #[inline(always)]
    fn departed_len(&mut self, now: Instant, at: Instant, len: usize) {
        self.dequeued += 1;
        self.bytes_dequeued += len as u64;
        self.wait_total += now.saturating_since(at);
    }
}

#[derive(Debug)]
struct Entry {
    frame: Frame,
    stamp: f64,
    seq: u64,
    at: Instant,
}

/// A heap element: an active queue with its head frame's key (kept here, so a comparison does not
/// reach into the queue).
#[derive(Debug, Clone, Copy)]
struct Head {
    stamp: f64,
    seq: u64,
    queue: usize,
}

#[derive(Debug)]
struct Queue {
    q: VecDeque<Entry>,
    rate: f64,
    /// `1 / rate` when that makes `len * inv_rate` exactly `len / rate`: a power-of-two rate,
    /// such as the 1 of every single-service endpoint. Both are the correctly rounded value of
    /// the same real number, so the stamps do not change; the multiply avoids a division on
    /// every frame (a divide's latency was ~40 % of `enqueue`'s samples over the catalogue).
    inv_rate: Option<f64>,
    /// Stamp of the last frame queued here: V_i(k-1), valid in scheduler epoch `epoch` only
    /// (an idle scheduler restarts every V_i(k-1) at 0 by starting a new epoch).
    last: f64,
    epoch: u64,
    stats: QueueStats,
}

impl Queue {
    /// The stamp of a frame of `len` bytes arriving now, at virtual time `vtime` in scheduler
    /// epoch `epoch`.
    #[inline]
    fn stamp(&self, len: usize, fifo: bool, vtime: f64, epoch: u64) -> f64 {
        // seed 004 sec. 6.2.3: V_i(k) = L(k)/r_i + max(V_i(k-1), V(t)). If the queue is not empty
        // V_i(k-1) >= V(t) already; the max covers both cases. FIFO orders by arrival only.
        if fifo {
            return 0.0;
        }
        let last = if self.epoch == epoch { self.last } else { 0.0 };
        // `as i64`: a signed conversion is one instruction, an unsigned one a sequence (the
        // same value below 2^53).
        let len = len as i64 as f64;
        let l = match self.inv_rate {
            Some(inv) => len * inv,
            None => len / self.rate,
        };
        l + last.max(vtime)
    }
}

/// The SCFQ (or FIFO) frame scheduler of one endpoint.
#[derive(Debug)]
pub struct Scheduler {
    discipline: Discipline,
    queues: Vec<Queue>,
    /// Fig. 6.3's heap: the active (non-empty) queues, heap-ordered by the key of each
    /// queue's head frame. Its length is the seed's `l`.
    heap: Vec<Head>,
    vtime: f64,
    /// Busy periods so far: a queue's `last` from an earlier one reads as 0.
    epoch: u64,
    seq: u64,
    limit: Option<usize>,
    backlog: usize,
    comparisons: u64,
    /// The only frame waiting, when exactly one is (`backlog == 1`), held outside its queue and
    /// the heap: on a link that keeps up, nearly every frame is dequeued before the next one
    /// arrives, and the queue and heap round trip was most of the scheduler's cost. A second
    /// arrival first moves it where `enqueue` would have put it (`spill`), so every decision,
    /// stamp and counter is the same as without it.
    express: Option<(usize, Entry)>,
}

impl Scheduler {
    /// A scheduler with one queue per rate. Rates are relative (only ratios matter, sec. 6.2.3);
    /// non-positive or non-finite rates are replaced by the smallest positive rate given, at most 1,
    /// whatever the order of `rates`.
    /// `limit` bounds each service's queue (SCFQ) or the shared queue (FIFO), in frames.
    pub fn new(discipline: Discipline, rates: &[f64], limit: Option<usize>) -> Self {
        let mut s = Scheduler {
            discipline,
            queues: Vec::new(),
            heap: Vec::with_capacity(rates.len()),
            vtime: 0.0,
            epoch: 0,
            seq: 0,
            limit: limit.map(|l| l.max(1)),
            backlog: 0,
            comparisons: 0,
            express: None,
        };
        // The substitute for a bad rate is the smallest good one of all `rates`, whatever their
        // order (taken queue by queue, a bad first rate got 1 and a bad last one the minimum).
        let floor = smallest_valid(rates.iter().copied());
        for &r in rates {
            s.add_queue(if valid_rate(r) { r } else { floor });
        }
        s
    }

    fn sane(&self, r: f64) -> f64 {
        if valid_rate(r) {
            r
        } else {
            smallest_valid(self.queues.iter().map(|q| q.rate))
        }
    }

    /// Add a service queue (seed 004 sec. 6.2.3: "create or destroy one queue and one heap
    /// element"); returns its number.
    pub fn add_service(&mut self, rate: f64) -> usize {
        let rate = self.sane(rate);
        self.add_queue(rate)
    }

    fn add_queue(&mut self, rate: f64) -> usize {
        self.queues.push(Queue {
            q: VecDeque::new(),
            rate,
            inv_rate: exact_inverse(rate),
            last: 0.0,
            epoch: self.epoch,
            stats: QueueStats::default(),
        });
        self.queues.len() - 1
    }

    /// Set r_i (admin module or classifier measurement, any time). Already stamped frames keep
    /// their stamps.
    pub fn set_rate(&mut self, service: usize, rate: f64) {
        let rate = self.sane(rate);
        if let Some(q) = self.queues.get_mut(service) {
            q.rate = rate;
            q.inv_rate = exact_inverse(rate);
        }
    }

    pub fn rate(&self, service: usize) -> f64 {
        self.queues.get(service).map_or(0.0, |q| q.rate)
    }

    /// r_i / sum_j r_j: the service's guaranteed fraction of the link.
    pub fn share(&self, service: usize) -> f64 {
        let total: f64 = self.queues.iter().map(|q| q.rate).sum();
        if total > 0.0 {
            self.rate(service) / total
        } else {
            0.0
        }
    }

    pub fn discipline(&self) -> Discipline {
        self.discipline
    }

    pub fn services(&self) -> usize {
        self.queues.len()
    }

    /// Frames waiting, all services.
    pub fn len(&self) -> usize {
        self.backlog
    }

    pub fn is_empty(&self) -> bool {
        self.backlog == 0
    }

    pub fn queue_len(&self, service: usize) -> usize {
        let express = matches!(self.express, Some((i, _)) if i == service);
        self.queues
            .get(service)
            .map_or(0, |q| q.q.len() + express as usize)
    }

    /// Put the express frame where `enqueue` would have: at the tail of its (empty) queue, whose
    /// head it becomes in the (empty) heap.
    fn spill(&mut self) {
        if let Some((i, e)) = self.express.take() {
            self.heap.push(Head {
                stamp: e.stamp,
                seq: e.seq,
                queue: i,
            });
            self.queues[i].q.push_back(e);
        }
    }

    pub fn stats(&self, service: usize) -> QueueStats {
        self.queues
            .get(service)
            .map_or_else(QueueStats::default, |q| q.stats)
    }

    /// The system virtual time V.
    pub fn virtual_time(&self) -> f64 {
        self.vtime
    }

    /// Heap key comparisons so far (the O(log n) cost of sec. 6.2.3, for benches).
    pub fn comparisons(&self) -> u64 {
        self.comparisons
    }

    /// Queue a frame of `service`. Gives the frame back if it was dropped (queue full or no such
    /// service), so that its sender can be told (`Service::handle_dropped`).
    #[inline]
    pub fn enqueue(&mut self, now: Instant, service: usize, frame: Frame) -> Result<(), Frame> {
        // The usual case, inline: an idle scheduler (never full: bounds are >= 1), whose frame
        // waits in the express slot. `enqueue_any` does the same for it.
        if self.backlog == 0 && service < self.queues.len() {
            let (stamp, seq) = self.admit_idle(service, frame.len());
            self.backlog = 1;
            let entry = Entry {
                frame,
                stamp,
                seq,
                at: now,
            };
            self.express = Some((service, entry));
            return Ok(());
        }
        self.enqueue_any(now, service, frame)
    }

    /// `enqueue` when frames are already waiting (or for no such service).
    #[inline(never)]
    fn enqueue_any(&mut self, now: Instant, service: usize, frame: Frame) -> Result<(), Frame> {
        if service >= self.queues.len() {
            return Err(frame);
        }
        debug_assert!(
            self.backlog > 0,
            "an idle scheduler's enqueue is `enqueue`'s"
        );
        self.spill();
        let fifo = self.discipline == Discipline::Fifo;
        let (backlog, limit) = (self.backlog, self.limit);
        let (vtime, epoch) = (self.vtime, self.epoch);
        let q = &mut self.queues[service];
        let full = match limit {
            Some(l) if fifo => backlog >= l,
            Some(l) => q.q.len() >= l,
            None => false,
        };
        if full {
            q.stats.dropped += 1;
            return Err(frame);
        }
        let stamp = q.stamp(frame.len(), fifo, vtime, epoch);
        q.last = stamp;
        q.epoch = epoch;
        let was_empty = q.q.is_empty();
        let seq = self.seq;
        self.seq += 1;
        q.stats.enqueued += 1;
        q.q.push_back(Entry {
            frame,
            stamp,
            seq,
            at: now,
        });
        q.stats.max_len = q.stats.max_len.max(q.q.len());
        self.backlog += 1;
        if was_empty {
            // "insert the queue at the bottom of the active heap and sift up"
            self.heap.push(Head {
                stamp,
                seq,
                queue: service,
            });
            let at = self.heap.len() - 1;
            if at > 0 {
                self.sift_up(at);
            }
        }
        Ok(())
    }

    /// The next frame for the link, with its service number; call only when the link is free
    /// (non-preemptive). Sets V to the frame's stamp.
    #[inline]
    pub fn dequeue(&mut self, now: Instant) -> Option<(usize, Frame)> {
        // The simulator asks after every event, mostly of an empty scheduler: answer that inline
        // (seed 004 Fig. 7.6's runs call this 57 M times, about half of them empty).
        if self.is_empty() {
            return None;
        }
        self.dequeue_head(now)
    }

    /// A frame of `len` bytes of `service` (which exists) arrives at the idle scheduler: its
    /// stamp and sequence number, counted in its queue's statistics.
    #[inline(always)]
    fn admit_idle(&mut self, service: usize, len: usize) -> (f64, u64) {
        let fifo = self.discipline == Discipline::Fifo;
        let (vtime, epoch) = (self.vtime, self.epoch);
        let q = &mut self.queues[service];
        let stamp = q.stamp(len, fifo, vtime, epoch);
        q.last = stamp;
        q.epoch = epoch;
        q.stats.enqueued += 1;
        q.stats.max_len = q.stats.max_len.max(1);
        let seq = self.seq;
        self.seq += 1;
        (stamp, seq)
    }

    /// The last frame left: the scheduler is idle, and a busy period ends (seed 004 sec. 6.2.3:
    /// the virtual time restarts, and so do the queues' last stamps, through the epoch).
    #[inline(always)]
    fn become_idle(&mut self) {
        self.backlog = 0;
        self.vtime = 0.0;
        self.epoch += 1;
    }

    /// `enqueue` of a `len`-byte frame of `service` at `now` followed at once by the `dequeue`
    /// that returns it, without the frame: the same state and statistics as the two calls (op 8
    /// of `matches_the_reference_transcription` in the tests). Only on an idle scheduler and an
    /// existing service; otherwise it changes nothing and returns false, and the caller makes
    /// the two calls.
    #[inline]
    pub fn pass_through(&mut self, now: Instant, service: usize, len: usize) -> bool {
        if self.backlog != 0 || service >= self.queues.len() {
            return false;
        }
        self.admit_idle(service, len);
        self.queues[service].stats.departed_len(now, now, len);
        self.become_idle();
        true
    }

    // Inline: returned through memory, the 48-byte result was written by the callee in 8-byte
    // pieces and read back by the caller in 16-byte ones, another store-forwarding stall per
    // frame (session 8: seed 004 Fig. 7.6 L2 -4 % mean wall time).
    #[inline]
    fn dequeue_head(&mut self, now: Instant) -> Option<(usize, Frame)> {
        if let Some((i, e)) = self.express.take() {
            // What the general path below does with the one frame of the one active queue.
            self.queues[i].stats.departed(now, &e);
            self.become_idle();
            return Some((i, e.frame));
        }
        let i = self.heap.first()?.queue;
        let q = &mut self.queues[i];
        let e = q.q.pop_front().expect("active queues are non-empty");
        q.stats.departed(now, &e);
        self.backlog -= 1;
        self.vtime = e.stamp;
        if let Some(h) = q.q.front() {
            self.heap[0].stamp = h.stamp;
            self.heap[0].seq = h.seq;
        } else {
            // "move the last active heap element to the top, l := l - 1, then sift down"
            let last = self.heap.pop().expect("non-empty");
            if !self.heap.is_empty() {
                self.heap[0] = last;
            }
        }
        // Otherwise the queue's new head represents it at the top: sift down either way (one
        // active queue, the single-service case, has nothing to sift against).
        if self.heap.len() > 1 {
            self.sift_down(0);
        }
        if self.backlog == 0 {
            // Idle: restart the virtual clock (see the module comment). A new epoch zeroes every
            // last stamp without visiting the queues (this runs after most frames).
            self.become_idle();
        }
        Some((i, e.frame))
    }

    fn less(&mut self, a: usize, b: usize) -> bool {
        self.comparisons += 1;
        let (ka, kb) = (&self.heap[a], &self.heap[b]);
        ka.stamp
            .total_cmp(&kb.stamp)
            .then(ka.seq.cmp(&kb.seq))
            .is_lt()
    }

    fn sift_up(&mut self, mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / 2;
            if self.less(at, parent) {
                self.heap.swap(at, parent);
                at = parent;
            } else {
                break;
            }
        }
    }

    fn sift_down(&mut self, mut at: usize) {
        let l = self.heap.len();
        loop {
            let (a, b) = (2 * at + 1, 2 * at + 2);
            let mut min = at;
            if a < l && self.less(a, min) {
                min = a;
            }
            if b < l && self.less(b, min) {
                min = b;
            }
            if min == at {
                break;
            }
            self.heap.swap(at, min);
            at = min;
        }
    }
}

/// A rate SCFQ can divide by: positive and finite.
fn valid_rate(r: f64) -> bool {
    r.is_finite() && r > 0.0
}

/// The smallest valid rate of `rates`, at most 1 (1 if there is none).
fn smallest_valid(rates: impl Iterator<Item = f64>) -> f64 {
    rates
        .filter(|&r| valid_rate(r))
        .fold(f64::INFINITY, f64::min)
        .min(1.0)
}

/// `1 / r` if `r` is a power of two (zero mantissa bits, normal): then `x * (1 / r)` and `x / r`
/// round the same real number `x * 2^-k`, so they are equal for every `x`.
fn exact_inverse(r: f64) -> Option<f64> {
    (r.is_normal() && r > 0.0 && r.to_bits() & ((1u64 << 52) - 1) == 0).then(|| 1.0 / r)
}

#[cfg(test)]
mod tests;
