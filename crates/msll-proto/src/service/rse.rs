//! Reed-Solomon erasure FEC and RSE/Ad (seed 004 L1037, seed004-ch5 sec. 4.7).
//!
//! ```text
//!  IP --packet--> Data(block b, index k) --> peer         keep payload k, k += 1
//!                 k == n (or RSE/Ad idle timer) --> Parity(b, count k, h, 0..h); b += 1 (mod 256)
//!  peer --Data--> keep it; deliver now (as XOR, L994)
//!  peer --Parity--> any k of the k + h frames received and a data frame missing? decode, deliver
//! ```
//!
//! The thesis's extension of XOR ("allow multiple frames to be recovered in each block"): up to h
//! losses among the n + h frames of a block are recovered, more cannot be. It rejects the scheme
//! for real-time traffic because covering a burst of b frames at XOR's overhead needs blocks b
//! times longer, and with them b times XOR's recovery delay (seed004-ch5 sec. 4.7 [L1079, L1119]);
//! msll has it so that this argument, and the tunnel users' favourite recovery (peers.md:
//! UDPspeeder, kcptun), can be measured beside the thesis's schemes.
//!
//! Like XOR: data frames are released immediately, rebuilt frames when the parity that completes
//! the set arrives (so usually out of sequence); RSE/Ad closes a block early after an idle
//! timeout (L996, here `idle_timeout`). Unlike XOR's 3-bit numbers, the 8-bit block numbers tell
//! blocks apart on their own, so the receiver does not infer boundaries from index order (which
//! delivered duplicates when two frames swapped): it keeps the newest block and the one before
//! it, drops copies of what it delivered, and treats any other number as a new block unless it is
//! a few blocks old (`Rse::rx_block`).
//!
//! Coding: a systematic Cauchy Reed-Solomon code over GF(2^8) (`rse::code`, where the reasons it
//! is not a crate are given), over shards of the block's longest payload + 2 bytes (`wire::rse`).

mod code;

use crate::buf::Buf;

use super::xor::IdleClose;
use super::{Outbox, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{Duration, Instant};
use crate::wire::rse::{shard_size, RseFrame, RSE_MAX_BLOCK, RSE_MAX_PARITY};
use crate::wire::Frame;

/// Resolved RSE parameters (durations before the timer factor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RseConfig {
    /// Data frames per block, n, 1..=127.
    pub block: u8,
    /// Parity frames per block, h, 1..=127.
    pub parity: u8,
    /// `Some` selects RSE/Ad: close the block early with its parity frames when no data frame
    /// follows within this time (XOR/Ad's rule, L996).
    pub idle_timeout: Option<Duration>,
    /// A block closed early gets `ceil(parity x count / block)` parity frames (at least 1)
    /// instead of `parity` (`PartialParity::Proportional`).
    pub proportional: bool,
}

impl RseConfig {
    /// Recommended defaults: XOR/Ad's idle timeouts (`XorConfig::recommended`), since the data
    /// frames are the same.
    pub fn recommended(link: &super::LinkInfo, block: u8, parity: u8, adaptive: bool) -> Self {
        RseConfig {
            block,
            parity,
            idle_timeout: super::XorConfig::recommended(link, block, adaptive).idle_timeout,
            proportional: false,
        }
    }
}

/// The shard of one data payload, written into `s`: its length, the bytes, zeros up to `size`.
fn shard_of(s: &mut Vec<u8>, p: &[u8], size: usize) {
    s.clear();
    s.extend_from_slice(&(p.len() as u16).to_be_bytes());
    s.extend_from_slice(p);
    s.resize(size, 0);
}

/// Blocks behind the newest whose late frames are dropped rather than taken for a new block
/// (the one just before the newest is still kept whole: `Rse::rx_prev`). Kept small: a frame
/// that overtook many others (arriving blocks early) would otherwise make every block between
/// look stale.
const STALE_BLOCKS: u8 = 8;

/// Blocks let go of (older than the one before the newest) whose delivered frames the receiver
/// remembers, so that a frame arriving later than [`STALE_BLOCKS`] blocks is not taken for a new
/// block and delivered twice (session 42's review: one 9 blocks late was). The blocks let go of
/// are 2 or more behind the newest, and a number unwraps to at most 128 behind
/// (`Rse::unwrap`), so 127 entries reach exactly that far: about half the 8-bit cycle, the most a
/// number can tell late from early (64 let a frame 66 blocks late, one of a 1 + 1 code swapped
/// 113 frames back, be delivered a second time: CI of session 43). Entries are matched by
/// unwrapped number (`RxBlock::unwrapped`), so a number that comes round again while its old
/// entry is still listed (blocks wholly lost, steadily, with no gap to see) is a new block, not a
/// copy.
const RECENT_BLOCKS: usize = 127;

/// What the receiver remembers of a block it let go of (`Rse::rx_recent`).
struct Recent {
    unwrapped: i64,
    /// Indexes delivered (received or rebuilt).
    delivered: u128,
    /// The lowest received index and a fingerprint of its payload: a frame at that index with
    /// another payload is not a late copy but a new block whose number unwrapped onto this entry.
    /// Such an entry comes from a frame later than the unwrap can reach (over 128 blocks), taken
    /// for a block ahead; without the check the real block of that number, arriving ~127 blocks
    /// later, matched it and was dropped whole (review, session 44).
    first: Option<(u8, u64)>,
}

/// FNV-1a over a payload: enough to tell two packets apart, computed once per block let go of.
fn fingerprint(p: &[u8]) -> u64 {
    p.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The smallest mean gap between arrivals [`OUTAGE_GAPS`] is taken of (10 us).
const MIN_MEAN_GAP_NS: u64 = 10_000;

/// A gap since the last frame longer than this many mean gaps means an outage (or a silent
/// source): a frame then numbered like a block the receiver holds or remembers cannot be a late
/// one, since frames were not flowing, and is the 8-bit block number wrapping (`Rse::rx_block`).
/// Wrapping into the stale window needs a loss of at least 248 whole blocks, i.e. 496 frames.
const OUTAGE_GAPS: u64 = 32;

/// What the receiver has of one block.
#[derive(Default)]
struct RxBlock {
    block: u8,
    /// The block number unwrapped against the newest block's when this one started: each new
    /// number is taken as the nearest (up to 127 ahead or 128 behind) to the newest.
    unwrapped: i64,
    /// Data payloads by index.
    data: Vec<Option<Buf>>,
    /// Indexes rebuilt from parity (delivered; a late original is a duplicate).
    rebuilt: u128,
    /// `(count, parity)` from the block's parity frames, once one arrived.
    shape: Option<(u8, u8)>,
    /// Parity shards by index, kept until the block is done.
    parity: Vec<Option<Buf>>,
    /// Everything delivered (rebuilt, or nothing missing): parity frames are no longer needed.
    done: bool,
}

impl RxBlock {
    fn new(block: u8, unwrapped: i64) -> Self {
        RxBlock {
            block,
            unwrapped,
            ..RxBlock::default()
        }
    }

    /// Index `i` was delivered already (received or rebuilt).
    fn has(&self, i: u8) -> bool {
        self.rebuilt >> i & 1 != 0 || self.data.get(i as usize).is_some_and(Option::is_some)
    }

    fn received(&self) -> usize {
        self.data.iter().flatten().count()
    }

    /// The indexes delivered (received or rebuilt), as a mask.
    fn delivered(&self) -> u128 {
        self.data
            .iter()
            .enumerate()
            .filter(|(_, d)| d.is_some())
            .fold(self.rebuilt, |m, (i, _)| m | 1 << i)
    }
}

pub struct Rse {
    cfg: RseConfig,
    // sender
    tx_block: u8,
    tx_data: Vec<Buf>,
    idle: IdleClose,
    // receiver: the newest block and the one before it, so that frames reordered across a
    // block boundary (UDP under the daemon) neither reset a block nor are delivered twice
    rx: Option<RxBlock>,
    rx_prev: Option<RxBlock>,
    /// When the last frame arrived, and the mean gap between arrivals (EWMA, 1/8), in ns: an
    /// outage tells the 8-bit block numbers' wrap from late frames (`OUTAGE_GAPS`).
    rx_last: Option<Instant>,
    rx_gap_ns: Option<u64>,
    /// `(unwrapped block, delivered indexes)` of the last [`RECENT_BLOCKS`] blocks let go of,
    /// oldest first.
    rx_recent: std::collections::VecDeque<Recent>,
    /// The receiver threw its memory of earlier blocks away (`after_outage`, a wrap onto a held
    /// block): a block behind the newest may then be one it already delivered, so it is no
    /// longer taken for a skipped block while nothing precedes the newest (review, session 47).
    rx_forgot: bool,
    stats: ServiceStats,
    // Shard buffers reused from block to block.
    tx_shards: Vec<Vec<u8>>,
}

impl Rse {
    /// # Panics
    /// If the block or the parity count is not in 1..=127.
    pub fn new(cfg: RseConfig) -> Self {
        assert!(
            (1..=RSE_MAX_BLOCK).contains(&cfg.block),
            "RSE block {}",
            cfg.block
        );
        assert!(
            (1..=RSE_MAX_PARITY).contains(&cfg.parity),
            "RSE parity {}",
            cfg.parity
        );
        Rse {
            cfg,
            tx_block: 0,
            tx_data: Vec::with_capacity(cfg.block as usize),
            idle: IdleClose::new(cfg.idle_timeout),
            rx: None,
            rx_prev: None,
            rx_last: None,
            rx_gap_ns: None,
            rx_recent: std::collections::VecDeque::new(),
            rx_forgot: false,
            stats: ServiceStats::default(),
            tx_shards: Vec::new(),
        }
    }

    pub fn config(&self) -> &RseConfig {
        &self.cfg
    }

    /// Close the current block: send its `parity` frames over the data frames sent in it.
    fn send_parity(&mut self, out: &mut Outbox) {
        let count = self.tx_data.len();
        let size = shard_size(self.tx_data.iter().map(|p| p.len()).max().unwrap_or(0));
        let h = self.parity_for(count);
        let total = count + h as usize;
        if self.tx_shards.len() < total {
            self.tx_shards.resize_with(total, Vec::new);
        }
        for (s, p) in self.tx_shards.iter_mut().zip(&self.tx_data) {
            shard_of(s, p, size);
        }
        let (data, parity) = self.tx_shards[..total].split_at_mut(count);
        for s in parity.iter_mut() {
            s.clear();
            s.resize(size, 0);
        }
        // Counts of 1..=127 each (`Rse::new`, the block): within the code's limits.
        code::encode(data, parity);
        for (pindex, shard) in parity.iter().enumerate() {
            let f = RseFrame::Parity {
                block: self.tx_block,
                count: count as u8,
                parity: h,
                pindex: pindex as u8,
                shard: Buf::copy_from_slice(shard),
            }
            .emit();
            SentKind::Parity.count(&mut self.stats, &f);
            out.send(f);
        }
        self.tx_data.clear();
        self.tx_block = self.tx_block.wrapping_add(1);
        self.idle.cancel();
    }

    /// Parity frames for a block of `count` data frames: the configured number, or for a block
    /// closed early with proportional parity `ceil(parity x count / block)`, at least 1.
    fn parity_for(&self, count: usize) -> u8 {
        let (n, h) = (usize::from(self.cfg.block), usize::from(self.cfg.parity));
        if !self.cfg.proportional || count >= n {
            return self.cfg.parity;
        }
        // count < n <= 127 and h <= 127: no overflow, and the result is at most h.
        (h * count).div_ceil(n).max(1) as u8
    }

    /// Note a frame's arrival at `now`; true when it ends an outage: a gap over
    /// [`OUTAGE_GAPS`] mean gaps since the frame before it.
    fn note_arrival(&mut self, now: Instant) -> bool {
        let Some(last) = self.rx_last.replace(now) else {
            return false;
        };
        let gap = now.saturating_since(last).as_nanos();
        let Some(mean) = self.rx_gap_ns else {
            self.rx_gap_ns = Some(gap);
            return false;
        };
        self.rx_gap_ns = Some(((mean as i128 * 7 + gap as i128) / 8) as u64);
        // A floor under the mean: frames stamped with one instant (a batch read at once) would
        // make every later gap an outage (review, session 42).
        gap > mean.max(MIN_MEAN_GAP_NS).saturating_mul(OUTAGE_GAPS)
    }

    /// After an outage the frame that ends it is a new block unless it carries the newest
    /// block's number (the source may have paused inside a block: the block goes on). A
    /// number that wrapped onto the newest block itself shows in its payloads instead
    /// (`on_data`).
    fn after_outage(&mut self, block: u8) {
        if self.rx.as_ref().is_some_and(|r| r.block != block) {
            // Everything held or remembered is from before the outage: forget it whole (kept,
            // a block would come back into `rx_recent` and alias the next cycle's number).
            self.rx = None;
            self.rx_prev = None;
            self.rx_recent.clear();
            self.rx_forgot = true;
            self.start_block(block);
        }
    }

    /// `block` unwrapped against the newest block: the nearest number with those low 8 bits
    /// (127 ahead to 128 behind).
    fn unwrap(&self, block: u8) -> i64 {
        match &self.rx {
            Some(r) => r.unwrapped + i64::from(block.wrapping_sub(r.block) as i8),
            None => i64::from(block),
        }
    }

    /// A new newest block; the one before the newest is let go of (remembered in `rx_recent`).
    fn start_block(&mut self, block: u8) {
        let unwrapped = self.unwrap(block);
        self.let_go_of_prev();
        self.rx_prev = self.rx.take();
        self.rx = Some(RxBlock::new(block, unwrapped));
    }

    /// The block before the newest is let go of (remembered in `rx_recent`).
    fn let_go_of_prev(&mut self) {
        let Some(old) = self.rx_prev.take() else {
            return;
        };
        if self.rx_recent.len() == RECENT_BLOCKS {
            self.rx_recent.pop_front();
        }
        let first = old
            .data
            .iter()
            .enumerate()
            .find_map(|(i, d)| d.as_ref().map(|p| (i as u8, fingerprint(p))));
        self.rx_recent.push_back(Recent {
            unwrapped: old.unwrapped,
            delivered: old.delivered(),
            first,
        });
    }

    /// The delivered mask of `block` if it is one of the last [`RECENT_BLOCKS`] let go of and
    /// not held. In order, a number comes round again only 256 blocks later, long after it left
    /// the list; a frame that came blocks early (its block started, then let go of, before the
    /// blocks between) is found here when the rest of its block follows.
    fn recent(&mut self, block: u8) -> Option<&mut Recent> {
        let held = |r: &Option<RxBlock>| r.as_ref().is_some_and(|r| r.block == block);
        if held(&self.rx) || held(&self.rx_prev) {
            return None;
        }
        let unwrapped = self.unwrap(block);
        self.rx_recent
            .iter_mut()
            .rev()
            .find(|r| r.unwrapped == unwrapped)
    }

    /// The receiver's state for `block`: the newest block, the one before it, or a new newest
    /// block (the previous newest becomes the one before). `None` for a block up to
    /// [`STALE_BLOCKS`] behind the newest: its frames come too late and are dropped (counted as
    /// duplicates). Anything else starts a new block, so a receiver that missed many blocks
    /// resumes with the next frame; an outage long enough for the numbers to wrap into the
    /// stale window is caught by `after_outage`.
    fn rx_block(&mut self, block: u8) -> Option<&mut RxBlock> {
        if self.rx.as_ref().is_some_and(|r| r.block == block) {
            return self.rx.as_mut();
        }
        if self.rx_prev.as_ref().is_some_and(|r| r.block == block) {
            return self.rx_prev.as_mut();
        }
        if let Some(cur) = &self.rx {
            let behind = cur.block.wrapping_sub(block);
            if (1..=STALE_BLOCKS).contains(&behind) {
                // Not held and not let go of (`recent` is asked first): a block newer than the
                // one before the newest was never started, because a frame of the newest
                // overtook all of its frames (a 1 + 1 code needs only two frames overtaken).
                // It becomes the one before the newest; before, all its frames were dropped as
                // stale (review, session 47; `requires_fifo` promises shallow reordering is
                // used). With nothing before the newest, only the block right behind it, and
                // only at the start: after an outage it may be a block delivered before.
                let unwrapped = cur.unwrapped - i64::from(behind);
                let skipped = match &self.rx_prev {
                    Some(p) => p.unwrapped < unwrapped,
                    None => behind == 1 && self.rx_recent.is_empty() && !self.rx_forgot,
                };
                if !skipped {
                    return None;
                }
                self.let_go_of_prev();
                self.rx_prev = Some(RxBlock::new(block, unwrapped));
                return self.rx_prev.as_mut();
            }
        }
        self.start_block(block);
        self.rx.as_mut()
    }

    fn on_data(&mut self, block: u8, index: u8, payload: Buf, out: &mut Outbox) {
        // Both ends run one configuration (as `on_parity` checks of count and parity): an index
        // beyond the block size is a peer error. Taken in, it grew the block's data past any
        // count the genuine parity frames give, which then all failed as inconsistent, and the
        // block could not be rebuilt (review, session 47).
        if index >= self.cfg.block {
            self.stats.protocol_errors += 1;
            return;
        }
        if let Some(r) = self.recent(block) {
            // A late frame of a block let go of: new only if that index was never delivered.
            if r.delivered >> index & 1 == 0 {
                r.delivered |= 1 << index;
                self.stats.packets_delivered += 1;
                out.deliver(Packet::new(payload));
                return;
            }
            if r.first
                .is_none_or(|(i, h)| i != index || h == fingerprint(&payload))
            {
                self.stats.duplicates_received += 1;
                return;
            }
            // Another payload at the index remembered: a new block of this number (`Recent`).
            // Forget the entry; the frame starts its block below.
            let u = r.unwrapped;
            self.rx_recent.retain(|r| r.unwrapped != u);
        }
        let Some(rx) = self.rx_block(block) else {
            self.stats.duplicates_received += 1; // 2..=STALE_BLOCKS blocks old
            return;
        };
        if rx.has(index) {
            let held = rx.data.get(index as usize).and_then(Option::as_ref);
            if held.is_none_or(|p| *p == payload) {
                // A copy, or the late original of a rebuilt frame.
                self.stats.duplicates_received += 1;
                return;
            }
            // Another payload at a held index: the 8-bit number went round a whole cycle
            // (256 blocks lost, or a multiple) onto a block still held. Everything held or
            // remembered is that old: start afresh.
            self.rx_prev = None;
            self.rx_recent.clear();
            self.rx_forgot = true;
            self.rx = Some(RxBlock::new(block, i64::from(block)));
            return self.on_data(block, index, payload, out);
        }
        if rx.shape.is_some_and(|(count, _)| index >= count) {
            // Beyond the block's size as its parity frames give it: not this block's frame.
            self.stats.protocol_errors += 1;
            return;
        }
        let i = index as usize;
        if rx.data.len() <= i {
            rx.data.resize(i + 1, None);
        }
        rx.data[i] = Some(payload.clone());
        self.stats.packets_delivered += 1;
        out.deliver(Packet::new(payload));
        // A late data frame can complete the set the parity frames wait for.
        self.try_recover(block, out);
    }

    fn on_parity(
        &mut self,
        block: u8,
        count: u8,
        parity: u8,
        pindex: u8,
        shard: Buf,
        out: &mut Outbox,
    ) {
        // Both ends run one configuration: a larger block or more parity frames is a peer
        // error (and would let it choose the decoder's work).
        if count > self.cfg.block || parity > self.cfg.parity {
            self.stats.protocol_errors += 1;
            return;
        }
        if self.recent(block).is_some() {
            // A block let go of: too late to rebuild anything.
            self.stats.duplicates_received += 1;
            return;
        }
        let Some(rx) = self.rx_block(block) else {
            self.stats.duplicates_received += 1; // 2..=STALE_BLOCKS blocks old
            return;
        };
        let consistent = rx.shape.is_none_or(|shape| shape == (count, parity))
            && rx.data.len() <= count as usize;
        if !consistent {
            self.stats.protocol_errors += 1;
            return;
        }
        rx.shape = Some((count, parity));
        if rx.done {
            return;
        }
        let p = pindex as usize;
        if rx.parity.len() <= p {
            rx.parity.resize(p + 1, None);
        }
        if rx.parity[p].is_some() {
            self.stats.duplicates_received += 1;
            return;
        }
        rx.parity[p] = Some(shard);
        self.try_recover(block, out);
    }

    /// Rebuild what block `block` misses once any `count` of its frames are in.
    fn try_recover(&mut self, block: u8, out: &mut Outbox) {
        let Some(rx) = self.rx_block(block) else {
            return;
        };
        let Some((count, _)) = rx.shape.filter(|_| !rx.done) else {
            return;
        };
        let count = count as usize;
        let received = rx.received();
        let parity = rx.parity.iter().flatten().count();
        if received < count && received + parity < count {
            return; // not yet: more losses than parity frames so far
        }
        rx.done = true;
        if received == count {
            rx.parity.clear(); // nothing missing
            return;
        }
        let (rebuilt, errors) = Self::recover(rx, count, out);
        rx.rebuilt = rebuilt;
        rx.parity.clear();
        self.stats.fec_recoveries += rebuilt.count_ones() as u64;
        self.stats.packets_delivered += rebuilt.count_ones() as u64;
        self.stats.protocol_errors += errors;
    }

    /// Rebuild and deliver the block's missing data frames; returns the rebuilt indexes and the
    /// number of inconsistencies found.
    fn recover(rx: &RxBlock, count: usize, out: &mut Outbox) -> (u128, u64) {
        let parity: Vec<(usize, &[u8])> = rx
            .parity
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s.as_slice())))
            .collect();
        let size = parity[0].1.len();
        if parity.iter().any(|(_, s)| s.len() != size)
            || rx.data.iter().flatten().any(|p| p.len() + 2 > size)
        {
            // Shards of one block have one size, at least every payload + 2: anything else is an
            // inconsistent block (aliasing or a corrupt peer).
            return (0, 1);
        }
        let mut shards: Vec<Option<Vec<u8>>> = (0..count)
            .map(|i| {
                rx.data.get(i).and_then(Option::as_ref).map(|p| {
                    let mut s = Vec::with_capacity(size);
                    shard_of(&mut s, p, size);
                    s
                })
            })
            .collect();
        let missing: Vec<usize> = (0..count).filter(|&i| shards[i].is_none()).collect();
        if !code::reconstruct(&mut shards, &parity, size) {
            return (0, 1);
        }
        let (mut rebuilt, mut errors) = (0u128, 0u64);
        for i in missing {
            let s = shards[i].as_deref().expect("reconstructed");
            let len = u16::from_be_bytes([s[0], s[1]]) as usize;
            if len + 2 > size || s[2 + len..].iter().any(|&b| b != 0) {
                // Zero padding decodes to zero in a consistent block.
                errors += 1;
                continue;
            }
            rebuilt |= 1 << i;
            out.deliver(Packet::new(Buf::copy_from_slice(&s[2..2 + len])));
        }
        (rebuilt, errors)
    }
}

impl Service for Rse {
    fn handle_packet(&mut self, _now: Instant, packet: Packet, out: &mut Outbox) {
        self.stats.packets_in += 1;
        let payload = packet.into_bytes();
        let plen = payload.len();
        let f = RseFrame::Data {
            block: self.tx_block,
            index: self.tx_data.len() as u8,
            payload: payload.clone(),
        }
        .emit();
        self.tx_data.push(payload);
        SentKind::Data(plen).count(&mut self.stats, &f);
        out.send(f);
        if self.tx_data.len() == self.cfg.block as usize {
            self.send_parity(out);
        } else {
            // As XOR/Ad (L998): a data frame arrived, so the timer waits for its transmission.
            self.idle.cancel();
        }
    }

    fn handle_frame(&mut self, now: Instant, frame: Frame, out: &mut Outbox) {
        self.stats.frames_received += 1;
        let outage = self.note_arrival(now);
        let frame = RseFrame::from_frame(frame);
        if outage {
            if let Ok(RseFrame::Data { block, .. } | RseFrame::Parity { block, .. }) = &frame {
                self.after_outage(*block);
            }
        }
        match frame {
            Ok(RseFrame::Data {
                block,
                index,
                payload,
            }) => self.on_data(block, index, payload, out),
            Ok(RseFrame::Parity {
                block,
                count,
                parity,
                pindex,
                shard,
            }) => self.on_parity(block, count, parity, pindex, shard, out),
            Err(_) => self.stats.malformed_frames += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        if self.idle.expired(now) && !self.tx_data.is_empty() {
            // RSE/Ad: the source went silent; close the block early (XOR/Ad, L996).
            self.send_parity(out);
        }
    }

    fn handle_transmitted(&mut self, now: Instant, frame: &Frame) {
        // As XOR/Ad (L996): the idle timer restarts when a data frame of the open block starts
        // transmission, so time in the scheduler FIFO does not close a block early.
        if !self.idle.enabled() {
            return;
        }
        if let Some((block, index)) = RseFrame::data_index(frame) {
            if block == self.tx_block && (index as usize) < self.tx_data.len() {
                self.idle.restart(now);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.idle.deadline()
    }

    fn set_timer_factor(&mut self, factor: f64) {
        self.idle.set_factor(factor);
    }

    fn stats(&self) -> ServiceStats {
        self.stats
    }

    fn requires_fifo(&self) -> bool {
        // 8-bit block numbers; the current and previous block are kept and copies of delivered
        // frames dropped (`Rse::rx_block`), so shallow reordering is used, not lost. What the
        // last 127 blocks let go of (up to 128 behind) delivered is remembered: a frame up to that late is used once
        // at most; one later still would start a new block (not guarded: mslld's replay window
        // refuses datagrams over 1024 places late).
        false
    }

    fn name(&self) -> &'static str {
        if self.cfg.idle_timeout.is_some() {
            "rse-ad"
        } else {
            "rse"
        }
    }

    fn header_overhead(&self) -> usize {
        crate::wire::rse::RSE_DATA_HEADER
    }
}
