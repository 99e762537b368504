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
//! timeout (L996, here `idle_timeout`). Block boundaries at the receiver follow XOR's rule
//! (`service::xor`): a data frame starts a new block when its block number differs, when a parity
//! frame of the block was seen, or when its index is not above every index seen; a parity frame
//! starts one when its block differs, when it covers fewer frames than seen, or when it does not
//! follow the block's previous parity frame in order.
//!
//! Coding: a systematic Cauchy Reed-Solomon code over GF(2^8) (`rse::code`, where the reasons it
//! is not a crate are given), over shards of the block's longest payload + 2 bytes (`wire::rse`).

mod code;

use crate::buf::Buf;

use super::{scaled, Outbox, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{Duration, Instant, Timer};
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
}

impl RseConfig {
    /// Recommended defaults: XOR/Ad's idle timeouts (`XorConfig::recommended`), since the data
    /// frames are the same.
    pub fn recommended(link: &super::LinkInfo, block: u8, parity: u8, adaptive: bool) -> Self {
        RseConfig {
            block,
            parity,
            idle_timeout: super::XorConfig::recommended(link, block, adaptive).idle_timeout,
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

/// What the receiver has of its current block.
#[derive(Default)]
struct RxBlock {
    block: Option<u8>,
    /// Data payloads by index.
    data: Vec<Option<Buf>>,
    received: usize,
    max_index: Option<u8>,
    /// `(count, parity)` from the block's parity frames, once one arrived.
    shape: Option<(u8, u8)>,
    /// Parity shards with their indexes, in arrival order (kept until the block is done).
    parity: Vec<(u8, Buf)>,
    /// Index of the block's last parity frame (kept after it is done: later parity frames of
    /// the same block must follow it).
    last_pindex: Option<u8>,
    /// Recovered, or found to need nothing: later frames of the block are ignored.
    done: bool,
}

impl RxBlock {
    fn reset(&mut self, block: u8) {
        self.block = Some(block);
        self.data.clear();
        self.received = 0;
        self.max_index = None;
        self.shape = None;
        self.parity.clear();
        self.last_pindex = None;
        self.done = false;
    }
}

pub struct Rse {
    cfg: RseConfig,
    factor: f64,
    // sender
    tx_block: u8,
    tx_data: Vec<Buf>,
    idle_timer: Timer,
    // receiver
    rx: RxBlock,
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
            factor: 1.0,
            tx_block: 0,
            tx_data: Vec::with_capacity(cfg.block as usize),
            idle_timer: Timer::default(),
            rx: RxBlock::default(),
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
        let h = self.cfg.parity;
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
        self.idle_timer.cancel();
    }

    fn on_data(&mut self, block: u8, index: u8, payload: Buf, out: &mut Outbox) {
        let rx = &mut self.rx;
        let new_block = rx.block != Some(block)
            || rx.shape.is_some()
            || rx.max_index.is_some_and(|m| index <= m);
        if new_block {
            // The previous block ends where it is (its parity frames lost, or not enough of them).
            rx.reset(block);
        }
        let i = index as usize;
        if rx.data.len() <= i {
            rx.data.resize(i + 1, None);
        }
        rx.data[i] = Some(payload.clone());
        rx.received += 1;
        rx.max_index = Some(index);
        self.stats.packets_delivered += 1;
        out.deliver(Packet::new(payload));
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
        let rx = &mut self.rx;
        let follows = rx
            .shape
            .zip(rx.last_pindex)
            .is_none_or(|(shape, last)| shape == (count, parity) && pindex > last);
        if rx.block != Some(block) || rx.max_index.is_some_and(|m| m >= count) || !follows {
            // No data frame of this block arrived (or only an aliased earlier block's).
            rx.reset(block);
        }
        rx.shape = Some((count, parity));
        rx.last_pindex = Some(pindex);
        if rx.done {
            return;
        }
        let count = count as usize;
        if rx.received >= count {
            rx.done = true; // nothing missing
            return;
        }
        rx.parity.push((pindex, shard));
        if rx.received + rx.parity.len() < count {
            return; // not yet: more losses than parity frames so far
        }
        rx.done = true;
        self.recover(count, parity as usize, out);
        self.rx.parity.clear();
    }

    /// Rebuild the block's missing data frames from `count` received frames.
    fn recover(&mut self, count: usize, parity: usize, out: &mut Outbox) {
        let rx = &mut self.rx;
        let size = rx.parity[0].1.len();
        if rx.parity.iter().any(|(_, s)| s.len() != size)
            || rx.data.iter().flatten().any(|p| p.len() + 2 > size)
        {
            // Shards of one block have one size, at least every payload + 2: anything else is an
            // inconsistent block (aliasing or a corrupt peer).
            self.stats.protocol_errors += 1;
            return;
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
        let received: Vec<bool> = shards.iter().map(Option::is_some).collect();
        let parity_rows: Vec<(usize, &[u8])> = rx
            .parity
            .iter()
            .map(|(i, s)| (*i as usize, s.as_slice()))
            .collect();
        debug_assert!(parity_rows.iter().all(|(i, _)| *i < parity));
        if !code::reconstruct(&mut shards, &parity_rows, size) {
            self.stats.protocol_errors += 1;
            return;
        }
        for (s, _) in shards.iter().zip(&received).filter(|(_, r)| !**r) {
            let s = s.as_deref().expect("reconstructed");
            let len = u16::from_be_bytes([s[0], s[1]]) as usize;
            if len + 2 > size || s[2 + len..].iter().any(|&b| b != 0) {
                // Zero padding decodes to zero in a consistent block.
                self.stats.protocol_errors += 1;
                continue;
            }
            self.stats.fec_recoveries += 1;
            self.stats.packets_delivered += 1;
            out.deliver(Packet::new(Buf::copy_from_slice(&s[2..2 + len])));
        }
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
        }
        // RSE/Ad's idle timer starts in `handle_transmitted`.
    }

    fn handle_frame(&mut self, _now: Instant, frame: Frame, out: &mut Outbox) {
        self.stats.frames_received += 1;
        match RseFrame::from_frame(frame) {
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
        if self.idle_timer.poll_expired(now) && !self.tx_data.is_empty() {
            // RSE/Ad: the source went silent; close the block early (XOR/Ad, L996).
            self.send_parity(out);
        }
    }

    fn handle_transmitted(&mut self, now: Instant, frame: &Frame) {
        // As XOR/Ad (L996): the idle timer restarts when a data frame of the open block starts
        // transmission, so time in the scheduler FIFO does not close a block early.
        let Some(t) = self.cfg.idle_timeout else {
            return;
        };
        if let Some((block, index)) = RseFrame::data_index(frame) {
            if block == self.tx_block && (index as usize) < self.tx_data.len() {
                self.idle_timer.set(now + scaled(t, self.factor));
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.idle_timer.deadline()
    }

    fn set_timer_factor(&mut self, factor: f64) {
        self.factor = factor;
    }

    fn stats(&self) -> ServiceStats {
        self.stats
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
