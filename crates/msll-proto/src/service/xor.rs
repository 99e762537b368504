//! XOR parity FEC and XOR/Ad (seed004-ch5 sec. 4.2-sec. 4.3, seed 004 L988-L998, L1041; seeds 000/001
//! "XOR FEC").
//!
//! ```text
//!  IP --packet--> Data(block b, index k) --> peer        P ^= payload, k += 1
//!                 k == n (or XOR/Ad idle timer) --> Parity(b, count k, P); b += 1 (mod 8)
//!  peer --Data--> B ^= payload; deliver now  (L994: "immediately after XORing it in")
//!  peer --Parity--> exactly one of k data frames missing? B ^ parity is that frame: deliver it
//! ```
//!
//! One loss per block (counting the parity frame) is recovered; more cannot be. Data frames are
//! released immediately, so a reconstructed frame usually arrives out of sequence. A single parity
//! buffer at each end (L994).
//!
//! Unequal lengths: see `wire::xor` (zero padding, and the XOR of the lengths carried in the parity
//! frame only when the block's lengths differ).
//!
//! Block boundaries at the receiver (AMB-3 (a) + parity flag): a frame starts a new block when its
//! block number differs from the current one, when the current block's parity was already seen, or
//! when its index is not above every index seen in the block (a FIFO link delivers indices in
//! increasing order, so this can only be a later block with the same 3-bit number). A run of losses
//! spanning exactly a multiple of 8 blocks with a later index can still alias, as in the thesis's
//! 3-bit design; the lengths check below rejects some such reconstructions.

use crate::buf::Buf;

use super::{scaled, Outbox, SentKind, Service, ServiceStats};
use crate::packet::Packet;
use crate::time::{Duration, Instant, Timer};
use crate::wire::xor::{XorFrame, XOR_DATA_HEADER, XOR_MAX_BLOCK};
use crate::wire::Frame;

/// Resolved XOR parameters (durations before the timer factor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XorConfig {
    /// Data frames per block, 1..=127 (8 Cellular/PCS, 12 WLAN in the thesis, L1041).
    pub block: u8,
    /// `Some` selects XOR/Ad: close the block early with a parity frame when no data frame follows
    /// within this time (L996).
    pub idle_timeout: Option<Duration>,
}

impl XorConfig {
    /// Recommended defaults. XOR/Ad's timeout is "slightly more than twice the source packet
    /// interval" (L1041): 100 ms (Cellular), 130 ms (PCS), 20 ms (WLAN). A link does not know the
    /// source's interval, so the thesis links are recognised by rate and payload; on any other
    /// link the default is 4 full data-frame times (twice the interval of a source at half the
    /// link rate, the Table 5.1 peak load on PCS and WLAN).
    pub fn recommended(link: &super::LinkInfo, block: u8, adaptive: bool) -> Self {
        let idle = match (link.rate.bps(), link.frame_payload) {
            (14_400, 50) => Duration::from_millis(100),
            (64_000, 250) => Duration::from_millis(130),
            (2_000_000, 1000) => Duration::from_millis(20),
            _ => link
                .rate
                .tx_time(link.frame_payload + XOR_DATA_HEADER)
                .saturating_mul(4),
        };
        XorConfig {
            block,
            idle_timeout: adaptive.then_some(idle),
        }
    }
}

/// XOR/Ad's idle timer (L996): restarted when a data frame of the open block starts
/// transmission, it closes the block early when it expires. Shared by XOR/Ad and RSE/Ad.
pub(crate) struct IdleClose {
    timeout: Option<Duration>,
    factor: f64,
    timer: Timer,
}

impl IdleClose {
    pub(crate) fn new(timeout: Option<Duration>) -> Self {
        IdleClose {
            timeout,
            factor: 1.0,
            timer: Timer::default(),
        }
    }

    /// The adaptive variant (a timeout is configured).
    pub(crate) fn enabled(&self) -> bool {
        self.timeout.is_some()
    }

    /// A data frame of the open block started transmission now.
    pub(crate) fn restart(&mut self, now: Instant) {
        if let Some(t) = self.timeout {
            self.timer.set(now + scaled(t, self.factor));
        }
    }

    pub(crate) fn expired(&mut self, now: Instant) -> bool {
        self.timer.poll_expired(now)
    }

    pub(crate) fn cancel(&mut self) {
        self.timer.cancel();
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.timer.deadline()
    }

    pub(crate) fn set_factor(&mut self, factor: f64) {
        self.factor = factor;
    }
}

/// Running XOR of zero-padded payloads and of their lengths.
#[derive(Default)]
struct Parity {
    buf: Vec<u8>,
    len_xor: u16,
    first_len: Option<usize>,
    equal: bool,
}

impl Parity {
    fn add(&mut self, p: &[u8]) {
        if self.buf.len() < p.len() {
            self.buf.resize(p.len(), 0);
        }
        for (b, x) in self.buf.iter_mut().zip(p) {
            *b ^= x;
        }
        // Lengths above 65535 wrap; a recovery that needs one is rejected by the length check.
        self.len_xor ^= p.len() as u16;
        match self.first_len {
            None => {
                self.first_len = Some(p.len());
                self.equal = true;
            }
            Some(l) => self.equal &= l == p.len(),
        }
    }
}

pub struct Xor {
    cfg: XorConfig,
    // sender
    tx_block: u8,
    tx_count: u8,
    tx_parity: Parity,
    idle: IdleClose,
    // receiver
    rx_block: Option<u8>,
    rx_done: bool,
    rx_mask: u128,
    rx_max_index: Option<u8>,
    rx_parity: Parity,
    stats: ServiceStats,
}

impl Xor {
    /// # Panics
    /// If the block is not in 1..=127.
    pub fn new(cfg: XorConfig) -> Self {
        assert!(
            (1..=XOR_MAX_BLOCK).contains(&cfg.block),
            "XOR block {}",
            cfg.block
        );
        Xor {
            cfg,
            tx_block: 0,
            tx_count: 0,
            tx_parity: Parity::default(),
            idle: IdleClose::new(cfg.idle_timeout),
            rx_block: None,
            rx_done: false,
            rx_mask: 0,
            rx_max_index: None,
            rx_parity: Parity::default(),
            stats: ServiceStats::default(),
        }
    }

    pub fn config(&self) -> &XorConfig {
        &self.cfg
    }

    /// Close the current block: send the parity over the `tx_count` data frames sent in it.
    fn send_parity(&mut self, out: &mut Outbox) {
        let p = std::mem::take(&mut self.tx_parity);
        let f = XorFrame::Parity {
            block: self.tx_block,
            count: self.tx_count,
            len_xor: (!p.equal).then_some(p.len_xor),
            payload: Buf::from(p.buf),
        }
        .emit();
        SentKind::Parity.count(&mut self.stats, &f);
        out.send(f);
        // L998: "the parity frame has its flag set and the block number is incremented".
        self.tx_block = (self.tx_block + 1) % 8;
        self.tx_count = 0;
        self.idle.cancel();
    }

    fn rx_reset(&mut self, block: u8) {
        self.rx_block = Some(block);
        self.rx_done = false;
        self.rx_mask = 0;
        self.rx_max_index = None;
        self.rx_parity = Parity::default();
    }

    fn on_data(&mut self, block: u8, index: u8, payload: Buf, out: &mut Outbox) {
        let new_block = self.rx_block != Some(block)
            || self.rx_done
            || self.rx_max_index.is_some_and(|m| index <= m);
        if new_block {
            // The previous block ends without its parity (lost): abandon it (L998 (ii)).
            self.rx_reset(block);
        }
        self.rx_parity.add(&payload);
        self.rx_mask |= 1u128 << index;
        self.rx_max_index = Some(index);
        self.stats.packets_delivered += 1;
        out.deliver(Packet::new(payload));
    }

    fn on_parity(
        &mut self,
        block: u8,
        count: u8,
        len_xor: Option<u16>,
        payload: Buf,
        out: &mut Outbox,
    ) {
        if self.rx_block != Some(block)
            || self.rx_done
            || self.rx_max_index.is_some_and(|m| m >= count)
        {
            // No data frame of this block arrived (or only frames of an aliased earlier block).
            self.rx_reset(block);
        }
        self.rx_done = true;
        let received = self.rx_mask.count_ones();
        if received + 1 != count as u32 {
            return; // nothing missing, or two or more losses: unrecoverable (L990)
        }
        let missing_len = match len_xor {
            None => payload.len(),
            Some(x) => (x ^ self.rx_parity.len_xor) as usize,
        };
        self.rx_parity.add(&payload);
        let buf = std::mem::take(&mut self.rx_parity.buf);
        if missing_len > payload.len() || buf[missing_len.min(buf.len())..].iter().any(|&b| b != 0)
        {
            // The parity is as long as the longest frame it covers, and zero padding XORs out
            // to zero: anything else is an inconsistent block (aliasing or a corrupt peer).
            self.stats.protocol_errors += 1;
            return;
        }
        let have = missing_len.min(buf.len());
        let rebuilt = Buf::zeroed_with(missing_len, |b| b[..have].copy_from_slice(&buf[..have]));
        self.stats.fec_recoveries += 1;
        self.stats.packets_delivered += 1;
        out.deliver(Packet::new(rebuilt));
    }
}

impl Service for Xor {
    fn handle_packet(&mut self, _now: Instant, packet: Packet, out: &mut Outbox) {
        self.stats.packets_in += 1;
        let payload = packet.into_bytes();
        self.tx_parity.add(&payload);
        let plen = payload.len();
        let f = XorFrame::Data {
            block: self.tx_block,
            index: self.tx_count,
            payload,
        }
        .emit();
        SentKind::Data(plen).count(&mut self.stats, &f);
        out.send(f);
        self.tx_count += 1;
        if self.tx_count == self.cfg.block {
            self.send_parity(out);
        } else {
            // L998: the block closes if the timer expires "before another data frame arrives
            // from higher layers": one has, so the timer stops until this frame starts its
            // transmission (`handle_transmitted`). Left running, time in the scheduler's queue
            // closed the block under a waiting frame (session 42's review).
            self.idle.cancel();
        }
    }

    fn handle_frame(&mut self, _now: Instant, frame: Frame, out: &mut Outbox) {
        self.stats.frames_received += 1;
        match XorFrame::from_frame(frame) {
            Ok(XorFrame::Data {
                block,
                index,
                payload,
            }) => self.on_data(block, index, payload, out),
            Ok(XorFrame::Parity {
                block,
                count,
                len_xor,
                payload,
            }) => self.on_parity(block, count, len_xor, payload, out),
            Err(_) => self.stats.malformed_frames += 1,
        }
    }

    fn handle_timeout(&mut self, now: Instant, out: &mut Outbox) {
        if self.idle.expired(now) && self.tx_count > 0 {
            // XOR/Ad: the source went silent; close the block "prematurely" (L996).
            self.send_parity(out);
        }
    }

    fn handle_transmitted(&mut self, now: Instant, frame: &Frame) {
        // L996: "after each data frame is transmitted, a timer is (re)started" (seed004-ch5 sec.
        // 4.3): from the start of the transmission of a data frame of the open block, so time in
        // the scheduler FIFO does not close a block early.
        if !self.idle.enabled() {
            return;
        }
        if let Some((block, index)) = XorFrame::data_index(frame) {
            if block == self.tx_block && index < self.tx_count {
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

    fn name(&self) -> &'static str {
        if self.cfg.idle_timeout.is_some() {
            "xor-ad"
        } else {
            "xor"
        }
    }

    fn header_overhead(&self) -> usize {
        XOR_DATA_HEADER
    }
}
