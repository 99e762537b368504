//! The datagram format on the UDP side: every link frame travels authenticated and encrypted.
//!
//! ```text
//!  0        1                9                17               25            len-16     len
//!  +--------+----------------+----------------+----------------+----------------+--------+
//!  | ver|typ| sender session | echo (peer's   | counter        | ciphertext     | Poly-  |
//!  |  4 | 4 |  u64 BE        |  session) u64  |  u64 BE        | (frame bytes)  | 1305   |
//!  +--------+----------------+----------------+----------------+----------------+--------+
//!  \____________ associated data (authenticated, not encrypted) ___/
//! ```
//!
//! Cipher: XChaCha20-Poly1305 (RustCrypto `chacha20poly1305`) under the pre-shared key. Nonce =
//! `session ++ 0u64 ++ counter` (24 bytes). Why the extended nonce and not the 12-byte one with a
//! 32-bit salt: both directions share one key, so the nonce spaces of the two peers (and of every
//! restart of each) must never meet. With a 64-bit random session id per daemon start and a
//! 64-bit counter, two nonces coincide only if two starts draw the same 64-bit id *and* their
//! counter ranges overlap; HChaCha20 also derives a fresh subkey per session from the first 16
//! nonce bytes.
//!
//! The counter starts at the wall-clock time in nanoseconds at daemon start and counts up by one
//! per datagram. So the counters of a restarted daemon exceed every counter of its previous run
//! (nobody sends a datagram per nanosecond), which lets the receiver tell a genuine restart from a
//! replay of an old session without any persistent state (see [`PeerState`]).
//!
//! Everything here is a pure function of its inputs, so it is tested (and fuzzed) without sockets.

use bytes::Bytes;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use thiserror::Error;

/// 2 since session 38: a hello carries the sender's configuration digest ([`DIGEST_LEN`] bytes).
/// 3 since session 47: and the sender's hello interval ([`HELLO_LEN`]), so that the receiver's
/// default peer timeout covers a peer that says hello less often than itself.
pub const VERSION: u8 = 3;
/// Bytes of a hello's digest: the sender's `Config::link_digest`, big-endian.
pub const DIGEST_LEN: usize = 8;
/// Bytes of a hello's payload: the digest, then the sender's `hello_interval_s` in whole
/// milliseconds (u32, big-endian).
pub const HELLO_LEN: usize = DIGEST_LEN + 4;

/// A hello's payload: our digest and hello interval (milliseconds, saturating).
pub fn hello_payload(digest: u64, interval_ms: u32) -> [u8; HELLO_LEN] {
    let mut p = [0; HELLO_LEN];
    p[..DIGEST_LEN].copy_from_slice(&digest.to_be_bytes());
    p[DIGEST_LEN..].copy_from_slice(&interval_ms.to_be_bytes());
    p
}

/// The digest and hello interval (milliseconds) of a hello's payload, which `Cipher::open` has
/// checked to be [`HELLO_LEN`] bytes.
pub fn parse_hello(payload: &[u8]) -> Option<(u64, u32)> {
    let p: &[u8; HELLO_LEN] = payload.try_into().ok()?;
    let digest = u64::from_be_bytes(p[..DIGEST_LEN].try_into().ok()?);
    let ms = u32::from_be_bytes(p[DIGEST_LEN..].try_into().ok()?);
    Some((digest, ms))
}
/// Clear header: version/type byte, sender session, echo, counter.
pub const HEADER_LEN: usize = 1 + 8 + 8 + 8;
pub const TAG_LEN: usize = 16;
/// Bytes a datagram adds to the frame it carries.
pub const OVERHEAD: usize = HEADER_LEN + TAG_LEN;
/// Largest datagram the daemon accepts or sends (IPv4 UDP payload limit).
pub const MAX_DATAGRAM: usize = 65_507;

/// What a datagram carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One link frame for the peer's `Endpoint`.
    Data = 1,
    /// Announces the sender's session and echoes the receiver's (liveness and the restart
    /// handshake); its payload is the sender's configuration digest, so that two ends whose
    /// services differ refuse each other instead of exchanging frames neither reads right.
    Hello = 2,
}

impl Kind {
    fn from_nibble(n: u8) -> Option<Kind> {
        match n {
            1 => Some(Kind::Data),
            2 => Some(Kind::Hello),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    /// The sender's session id (random per daemon start, never 0).
    pub session: u64,
    /// The receiver's session id as the sender last saw it (0: none yet). Frames are fed to the
    /// `Endpoint` only when this matches, so both ends' scheme state starts from the same reset.
    pub echo: u64,
    /// Per-sender datagram counter (nonce part, replay protection).
    pub counter: u64,
}

/// Why a datagram was dropped before reaching the `Endpoint`. Each is counted; none changes state.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    #[error("datagram too short ({0} bytes)")]
    Truncated(usize),
    #[error("datagram too long ({0} bytes)")]
    TooLong(usize),
    #[error("unknown version or type byte {0:#04x}")]
    BadType(u8),
    #[error("authentication failed")]
    Auth,
    #[error("hello without its {HELLO_LEN}-byte payload (configuration digest, hello interval)")]
    BadHello,
    #[error("data datagram without a frame")]
    EmptyData,
    /// Session 0 is reserved (`Tunnel::new` refuses it, `new_session` never draws it): a peer
    /// that sends it is broken, and taking it as a new session would reset the link's state.
    #[error("sender session id 0 (reserved)")]
    ZeroSession,
}

/// The pre-shared key.
#[derive(Clone)]
pub struct Psk(pub [u8; 32]);

impl Psk {
    /// 64 hex digits.
    pub fn from_hex(s: &str) -> Result<Psk, String> {
        // Work on bytes: a multi-byte character must be an error, not a slice off a char boundary.
        let s = s.trim().as_bytes();
        if s.len() != 64 {
            return Err(format!("key must be 64 hex digits, got {} bytes", s.len()));
        }
        if let Some(i) = s.iter().position(|b| !b.is_ascii_hexdigit()) {
            return Err(format!(
                "key must be 64 hex digits: byte {} is not one",
                i + 1
            ));
        }
        let digit = |b: u8| (b as char).to_digit(16).expect("checked hex digit") as u8;
        let mut k = [0u8; 32];
        for (i, b) in k.iter_mut().enumerate() {
            *b = digit(s[2 * i]) << 4 | digit(s[2 * i + 1]);
        }
        // The all-zero key is the one a template or a zeroed file gives: no secret at all.
        if k == [0u8; 32] {
            return Err("key is all zeros: generate one with `mslld keygen`".into());
        }
        Ok(Psk(k))
    }
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl std::fmt::Debug for Psk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Psk(..)")
    }
}

fn nonce(session: u64, counter: u64) -> XNonce {
    let mut n = [0u8; 24];
    n[..8].copy_from_slice(&session.to_be_bytes());
    n[16..].copy_from_slice(&counter.to_be_bytes());
    XNonce::from(n)
}

/// The cipher, keyed once.
#[derive(Clone)]
pub struct Cipher {
    aead: XChaCha20Poly1305,
}

impl Cipher {
    pub fn new(psk: &Psk) -> Self {
        Cipher {
            aead: XChaCha20Poly1305::new(Key::from_slice(&psk.0)),
        }
    }

    /// Append one sealed datagram to `out`: `hdr` in the clear, `payload` encrypted.
    pub fn seal(&self, hdr: &Header, payload: impl FnOnce(&mut Vec<u8>), out: &mut Vec<u8>) {
        let start = out.len();
        out.push((VERSION << 4) | hdr.kind as u8);
        out.extend_from_slice(&hdr.session.to_be_bytes());
        out.extend_from_slice(&hdr.echo.to_be_bytes());
        out.extend_from_slice(&hdr.counter.to_be_bytes());
        let body = out.len();
        payload(out);
        let (aad, msg) = out[start..].split_at_mut(body - start);
        let tag = self
            .aead
            .encrypt_in_place_detached(&nonce(hdr.session, hdr.counter), aad, msg)
            // Only fails for messages beyond 256 GiB; a datagram is at most 64 KiB.
            .expect("datagram within AEAD length limit");
        out.extend_from_slice(&tag);
    }

    /// Parse and authenticate one datagram. A pure function: on any error nothing is returned and
    /// no state anywhere has changed; replay and session checks come after, in [`PeerState`].
    pub fn open(&self, datagram: &[u8]) -> Result<(Header, Bytes), DecodeError> {
        if datagram.len() < OVERHEAD {
            return Err(DecodeError::Truncated(datagram.len()));
        }
        if datagram.len() > MAX_DATAGRAM {
            return Err(DecodeError::TooLong(datagram.len()));
        }
        let b0 = datagram[0];
        let kind = match (b0 >> 4, Kind::from_nibble(b0 & 0x0f)) {
            (VERSION, Some(k)) => k,
            _ => return Err(DecodeError::BadType(b0)),
        };
        let word = |i: usize| u64::from_be_bytes(datagram[i..i + 8].try_into().expect("8 bytes"));
        let hdr = Header {
            kind,
            session: word(1),
            echo: word(9),
            counter: word(17),
        };
        let tag_at = datagram.len() - TAG_LEN;
        let mut msg = datagram[HEADER_LEN..tag_at].to_vec();
        self.aead
            .decrypt_in_place_detached(
                &nonce(hdr.session, hdr.counter),
                &datagram[..HEADER_LEN],
                &mut msg,
                datagram[tag_at..].into(),
            )
            .map_err(|_| DecodeError::Auth)?;
        // Checked after authentication so that a forger learns nothing from the error kind.
        match kind {
            Kind::Hello if msg.len() != HELLO_LEN => return Err(DecodeError::BadHello),
            Kind::Data if msg.is_empty() => return Err(DecodeError::EmptyData),
            _ => {}
        }
        if hdr.session == 0 {
            return Err(DecodeError::ZeroSession);
        }
        Ok((hdr, Bytes::from(msg)))
    }
}

/// Sliding replay window over the last [`ReplayWindow::SIZE`] counters of one peer session.
#[derive(Debug, Clone)]
pub struct ReplayWindow {
    /// Highest counter accepted so far (valid when `any`).
    top: u64,
    any: bool,
    /// Bit `c % SIZE` set: counter `c` (within `SIZE` of `top`) was accepted.
    bits: [u64; Self::WORDS],
}

impl Default for ReplayWindow {
    fn default() -> Self {
        ReplayWindow {
            top: 0,
            any: false,
            bits: [0; Self::WORDS],
        }
    }
}

impl ReplayWindow {
    const WORDS: usize = 16;
    /// Reordering tolerated on the UDP path, in datagrams.
    pub const SIZE: u64 = 64 * Self::WORDS as u64;

    fn bit(c: u64) -> (usize, u64) {
        let i = c % Self::SIZE;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    /// Would `c` be accepted (not seen, not too old)?
    pub fn check(&self, c: u64) -> bool {
        if !self.any || c > self.top {
            return true;
        }
        if self.top - c >= Self::SIZE {
            return false;
        }
        let (w, m) = Self::bit(c);
        self.bits[w] & m == 0
    }

    /// Record `c` as seen; call only after `check(c)` returned true for an authentic datagram.
    pub fn insert(&mut self, c: u64) {
        if !self.any {
            self.any = true;
            self.top = c;
            self.bits = [0; Self::WORDS];
        } else if c > self.top {
            let shift = c - self.top;
            if shift >= Self::SIZE {
                self.bits = [0; Self::WORDS];
            } else {
                // Clear the slots of the counters that slide out of the window.
                for k in self.top + 1..=c {
                    let (w, m) = Self::bit(k);
                    self.bits[w] &= !m;
                }
            }
            self.top = c;
        }
        let (w, m) = Self::bit(c);
        self.bits[w] |= m;
    }
}

/// What the receiver makes of an authentic datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// From the current peer session.
    Current,
    /// First datagram of a new peer session: the first one ever (`restarted == false`) or a
    /// restart of the peer (`restarted == true`, the local scheme state must be reset).
    NewSession { restarted: bool },
    /// Counter already seen or older than the window.
    Replay,
    /// From a session older than the current one (replayed or delayed from before a restart).
    StaleSession,
    /// Carries our own session id: one of our datagrams sent back to us.
    Reflected,
    /// From a session that is not the peer's current one and does not echo ours, so nothing
    /// shows it was sent after we started: both ends hold the same key, so it may be a datagram
    /// of an earlier run of *ours* sent back (review, session 44: one such datagram, adopted as
    /// "the peer restarting", kept the link down until the real peer restarted). It becomes the
    /// candidate our hellos echo ([`PeerState::hello_echo`]); the session is adopted only from a
    /// datagram that echoes our current session, which a restarted peer sends once it has our
    /// hello and which no earlier run of ours can have sent.
    Unconfirmed,
}

/// The receiver's view of the peer: its session, its highest counter, the replay window.
#[derive(Debug, Clone, Default)]
pub struct PeerState {
    pub session: Option<u64>,
    /// Highest counter seen from any session of the peer: a new session is adopted only above it.
    max_counter: u64,
    window: ReplayWindow,
    /// The newest session seen that is not adopted yet (`Admit::Unconfirmed`), with the
    /// counters seen of it: echoed in our hellos so that a (re)started peer learns our session.
    /// On adoption its window carries on, so its unconfirmed datagrams are replays after.
    candidate: Option<(u64, ReplayWindow)>,
    /// Hellos that echoed the candidate: it is dropped after [`CANDIDATE_TRIES`] (a live peer
    /// answers one; its next datagram makes it the candidate again).
    candidate_tries: u32,
    /// With a candidate, hellos echo it and the current session (or 0) in turn (`hello_echo`).
    echo_candidate: bool,
}

/// Hellos that echo a candidate before it is dropped unconfirmed.
pub const CANDIDATE_TRIES: u32 = 16;

impl PeerState {
    /// Decide on an authentic datagram and update the state (only on acceptance).
    pub fn admit(&mut self, own_session: u64, hdr: &Header) -> Admit {
        if hdr.session == own_session {
            return Admit::Reflected;
        }
        if Some(hdr.session) == self.session {
            if !self.window.check(hdr.counter) {
                return Admit::Replay;
            }
            self.window.insert(hdr.counter);
            self.max_counter = self.max_counter.max(hdr.counter);
            return Admit::Current;
        }
        // A different session: genuine only if its counters are newer than everything seen,
        // because a restarted peer seeds its counter from a later wall-clock time.
        if self.session.is_some() && hdr.counter <= self.max_counter {
            return Admit::StaleSession;
        }
        let known = match &mut self.candidate {
            Some((s, w)) if *s == hdr.session => {
                if !w.check(hdr.counter) {
                    return Admit::Replay;
                }
                Some(w)
            }
            _ => None,
        };
        if hdr.echo != own_session {
            match known {
                Some(w) => w.insert(hdr.counter),
                // A newer candidate replaces an older one (by counter): a replayed datagram of
                // an earlier run of the same machine cannot displace a run that started since.
                // One that does not is stale, and changes nothing (no hello answers it: review,
                // session 44, replays made one hello each).
                None => {
                    if self
                        .candidate
                        .as_ref()
                        .is_some_and(|(_, w)| hdr.counter <= w.top)
                    {
                        return Admit::StaleSession;
                    }
                    let mut w = ReplayWindow::default();
                    w.insert(hdr.counter);
                    self.candidate = Some((hdr.session, w));
                    self.candidate_tries = 0;
                    // The next hello echoes it.
                    self.echo_candidate = false;
                }
            }
            return Admit::Unconfirmed;
        }
        let restarted = self.session.is_some();
        self.session = Some(hdr.session);
        self.window = match self.candidate.take() {
            Some((s, w)) if s == hdr.session => w,
            // A newer candidate of another session (a later restart of the peer) is kept: the
            // run adopted here may be a dead one whose datagram came late.
            Some((s, w)) if w.top > hdr.counter => {
                self.candidate = Some((s, w));
                ReplayWindow::default()
            }
            _ => ReplayWindow::default(),
        };
        self.window.insert(hdr.counter);
        // The candidate's window may hold higher (reordered) counters.
        self.max_counter = self.window.top.max(hdr.counter);
        Admit::NewSession { restarted }
    }

    /// A candidate waits for confirmation: hellos should go at the unsynced rate.
    pub fn candidate_pending(&self) -> bool {
        self.candidate.is_some()
    }

    /// The session the next hello echoes. A candidate waiting for confirmation must be echoed so
    /// that it can echo ours (a restarted peer); the current session must be, so that a peer
    /// that has not seen our echo yet syncs. With both, hellos take turns: a candidate that never
    /// confirms (an earlier run of ours sent back) then costs the current peer every other hello,
    /// not all of them (review, session 44). Data datagrams echo the current session only.
    ///
    /// Without a current session the turns are the candidate and 0: a peer that adopted us but
    /// missed our echo would otherwise read a hello echoing it as "synced" and wait a whole
    /// hello interval to answer (review, session 44). A candidate is dropped after
    /// [`CANDIDATE_TRIES`] hellos echoing it.
    pub fn hello_echo(&mut self) -> u64 {
        let Some((c, _)) = self.candidate.as_ref() else {
            return self.session.unwrap_or(0);
        };
        let c = *c;
        self.echo_candidate = !self.echo_candidate;
        if !self.echo_candidate {
            return self.session.unwrap_or(0);
        }
        self.candidate_tries += 1;
        if self.candidate_tries >= CANDIDATE_TRIES {
            self.candidate = None;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The window agrees with an exact model: a counter is accepted iff it was never
        /// accepted before and is within SIZE of the highest accepted one.
        #[test]
        fn replay_window_matches_model(
            steps in prop::collection::vec((0u64..3000, any::<bool>()), 1..400),
        ) {
            let mut w = ReplayWindow::default();
            let mut seen = std::collections::BTreeSet::new();
            let mut top: Option<u64> = None;
            for (c, jump) in steps {
                let c = if jump { c * 7 } else { c };
                let in_window = match top {
                    None => true,
                    Some(t) => c > t || t - c < ReplayWindow::SIZE,
                };
                let fresh = !seen.contains(&c) && in_window;
                prop_assert_eq!(w.check(c), fresh, "counter {}", c);
                if fresh {
                    w.insert(c);
                    seen.insert(c);
                    top = Some(top.map_or(c, |t| t.max(c)));
                }
            }
        }
    }

    proptest! {
        /// Any text is a key or an error, never a panic; 64 hex digits are always a key, and
        /// the key prints back as the digits it was read from.
        #[test]
        fn key_text_never_panics(s in "[0-9a-fé+ ]{28,66}", hex in "[0-9a-fA-F]{64}") {
            let _ = Psk::from_hex(&s);
            let k = Psk::from_hex(&hex).unwrap();
            prop_assert_eq!(k.to_hex(), hex.to_ascii_lowercase());
        }
    }

    #[test]
    fn key_must_be_plain_hex_digits() {
        assert!(Psk::from_hex(&format!("a{}a", "é".repeat(31))).is_err());
        assert!(Psk::from_hex(&"+f".repeat(32)).is_err());
        assert!(Psk::from_hex(&" 0f".repeat(21)).is_err());
        assert_eq!(Psk::from_hex(&"0f".repeat(32)).unwrap().0, [0x0f; 32]);
    }

    fn cipher() -> Cipher {
        Cipher::new(&Psk([7; 32]))
    }

    fn hdr(kind: Kind, session: u64, counter: u64) -> Header {
        Header {
            kind,
            session,
            echo: 99,
            counter,
        }
    }

    #[test]
    fn seal_open_round_trip() {
        let c = cipher();
        let mut d = Vec::new();
        let h = hdr(Kind::Data, 5, 1_000);
        c.seal(&h, |o| o.extend_from_slice(b"frame bytes"), &mut d);
        assert_eq!(d.len(), 11 + OVERHEAD);
        // The payload is not in the clear.
        assert!(!d.windows(5).any(|w| w == b"frame"));
        let (h2, p) = c.open(&d).unwrap();
        assert_eq!(h2, h);
        assert_eq!(&p[..], b"frame bytes");
    }

    #[test]
    fn any_bit_flip_fails_authentication() {
        let c = cipher();
        let mut d = Vec::new();
        c.seal(
            &hdr(Kind::Data, 5, 1),
            |o| o.extend_from_slice(b"xyz"),
            &mut d,
        );
        for i in 0..d.len() {
            let mut e = d.clone();
            e[i] ^= 0x10;
            assert!(c.open(&e).is_err(), "flip at byte {i} accepted");
        }
        let other = Cipher::new(&Psk([8; 32]));
        assert_eq!(other.open(&d), Err(DecodeError::Auth));
        assert_eq!(c.open(&d[..OVERHEAD - 1]), Err(DecodeError::Truncated(40)));
    }

    #[test]
    fn hello_and_data_shape_checked() {
        let c = cipher();
        let mut d = Vec::new();
        // DIGEST_LEN: a version 2 hello's payload.
        for len in [
            0,
            1,
            DIGEST_LEN - 1,
            DIGEST_LEN,
            DIGEST_LEN + 1,
            HELLO_LEN + 1,
        ] {
            d.clear();
            c.seal(
                &hdr(Kind::Hello, 5, 1),
                |o| o.extend(std::iter::repeat_n(7, len)),
                &mut d,
            );
            assert_eq!(c.open(&d), Err(DecodeError::BadHello), "{len} bytes");
        }
        d.clear();
        c.seal(&hdr(Kind::Data, 5, 1), |_| {}, &mut d);
        assert_eq!(c.open(&d), Err(DecodeError::EmptyData));
        // An authentic datagram from the reserved session 0 (input audit, session 23: it was
        // taken as a peer restart and reset the link's state).
        for kind in [Kind::Hello, Kind::Data] {
            d.clear();
            c.seal(
                &hdr(kind, 0, 7),
                |o| {
                    o.extend(std::iter::repeat_n(
                        1,
                        if kind == Kind::Data { 1 } else { HELLO_LEN },
                    ))
                },
                &mut d,
            );
            assert_eq!(c.open(&d), Err(DecodeError::ZeroSession));
        }
        // Echo 0 is normal (the peer's session is not known yet).
        d.clear();
        c.seal(
            &Header {
                echo: 0,
                ..hdr(Kind::Hello, 5, 8)
            },
            |o| o.extend_from_slice(&hello_payload(42, 1000)),
            &mut d,
        );
        let (_, payload) = c.open(&d).expect("a well-formed hello");
        assert_eq!(parse_hello(&payload), Some((42, 1000)));
    }

    #[test]
    fn replay_window() {
        let mut w = ReplayWindow::default();
        assert!(w.check(100));
        w.insert(100);
        assert!(!w.check(100));
        assert!(w.check(99));
        w.insert(99);
        assert!(!w.check(99));
        w.insert(100 + ReplayWindow::SIZE - 1);
        assert!(!w.check(100));
        assert!(w.check(101));
        w.insert(100 + ReplayWindow::SIZE);
        // 100 is now too old to tell apart from a replay.
        assert!(!w.check(100));
        assert!(w.check(102));
        w.insert(u64::MAX);
        assert!(!w.check(u64::MAX));
        assert!(!w.check(100));
    }

    #[test]
    fn sessions_restart_and_replay() {
        let own = 1;
        let mut p = PeerState::default();
        let h = |s, c| Header {
            echo: own,
            ..hdr(Kind::Data, s, c)
        };
        assert_eq!(
            p.admit(own, &h(10, 500)),
            Admit::NewSession { restarted: false }
        );
        assert_eq!(p.admit(own, &h(10, 501)), Admit::Current);
        assert_eq!(p.admit(own, &h(10, 501)), Admit::Replay);
        assert_eq!(p.admit(own, &h(own, 900)), Admit::Reflected);
        // The peer restarts later: higher counters, new id.
        assert_eq!(
            p.admit(own, &h(11, 2_000)),
            Admit::NewSession { restarted: true }
        );
        // Old-session datagrams (delayed or replayed) cannot switch back.
        assert_eq!(p.admit(own, &h(10, 502)), Admit::StaleSession);
        assert_eq!(p.admit(own, &h(11, 2_001)), Admit::Current);
    }

    /// Candidates (review of session 44's handshake): echoed in turn with 0 when there is no
    /// session, dropped after CANDIDATE_TRIES unanswered echoes, kept when a late datagram of a
    /// dead run is adopted; an adopted candidate's window bounds the stale test.
    #[test]
    fn candidates_take_turns_expire_and_survive_a_late_dead_run() {
        let own = 7;
        let with_echo = |s, echo, c| Header {
            echo,
            ..hdr(Kind::Hello, s, c)
        };
        // No session yet: hellos echo the candidate and 0 in turn, so that a peer that adopted
        // us (and reads an echo of itself as "synced") still answers the 0.
        let mut p = PeerState::default();
        assert_eq!(p.admit(own, &with_echo(10, 0, 500)), Admit::Unconfirmed);
        assert!(p.candidate_pending());
        let echoes: Vec<u64> = (0..4).map(|_| p.hello_echo()).collect();
        assert_eq!(echoes, [10, 0, 10, 0]);
        // A candidate that never confirms is dropped after CANDIDATE_TRIES echoes; the peer's
        // next datagram makes it the candidate again.
        let mut echoed = 2;
        while p.candidate_pending() {
            if p.hello_echo() == 10 {
                echoed += 1;
            }
        }
        assert_eq!(echoed, CANDIDATE_TRIES);
        assert_eq!(p.hello_echo(), 0);
        assert_eq!(p.admit(own, &with_echo(10, 0, 501)), Admit::Unconfirmed);
        assert!(p.candidate_pending());
        // A late datagram of a dead run (20, which echoed us) is adopted, but the newer
        // candidate (a later run, 30) is kept, and then adopted in turn.
        let mut p = PeerState::default();
        assert_eq!(p.admit(own, &with_echo(30, 0, 3_000)), Admit::Unconfirmed);
        assert_eq!(
            p.admit(own, &with_echo(20, own, 2_000)),
            Admit::NewSession { restarted: false }
        );
        assert!(p.candidate_pending());
        assert_eq!(
            p.admit(own, &with_echo(30, own, 3_001)),
            Admit::NewSession { restarted: true }
        );
        assert_eq!(
            p.admit(own, &with_echo(20, own, 2_001)),
            Admit::StaleSession
        );
        // Adopting a candidate carries its window: its highest counter, even one that arrived
        // before a lower one, bounds the stale test.
        let mut p = PeerState::default();
        assert_eq!(p.admit(own, &with_echo(40, 0, 900)), Admit::Unconfirmed);
        assert_eq!(
            p.admit(own, &with_echo(40, own, 850)),
            Admit::NewSession { restarted: false }
        );
        assert_eq!(p.admit(own, &with_echo(41, own, 880)), Admit::StaleSession);
    }

    /// A new session is adopted only from a datagram that echoes ours. One that does not (the
    /// first hello of a (re)started peer, or a datagram of an earlier run of ours, which the
    /// shared key also authenticates) is a candidate our hellos echo, and changes nothing else.
    #[test]
    fn a_new_session_is_adopted_only_when_it_echoes_ours() {
        let own = 7;
        let mut p = PeerState::default();
        let with_echo = |s, echo, c| Header {
            echo,
            ..hdr(Kind::Hello, s, c)
        };
        // Both ends fresh: the peer's first hello echoes 0.
        assert_eq!(p.admit(own, &with_echo(10, 0, 500)), Admit::Unconfirmed);
        assert_eq!(p.admit(own, &with_echo(10, 0, 500)), Admit::Replay);
        assert_eq!(p.session, None);
        assert_eq!(p.hello_echo(), 10);
        assert_eq!(
            p.admit(own, &with_echo(10, own, 501)),
            Admit::NewSession { restarted: false }
        );
        assert_eq!(p.hello_echo(), 10);
        // The unconfirmed hello, replayed after the adoption: still a replay.
        assert_eq!(p.admit(own, &with_echo(10, 0, 500)), Admit::Replay);
        // An earlier run of ours (session 5, counters above the peer's), sent back: a candidate
        // only; the peer's datagrams stay current, and hellos echo the two in turn.
        assert_eq!(p.admit(own, &with_echo(5, 10, 900)), Admit::Unconfirmed);
        assert_eq!(p.admit(own, &with_echo(5, 0, 901)), Admit::Unconfirmed);
        assert_eq!(p.session, Some(10));
        let echoes: Vec<u64> = (0..4).map(|_| p.hello_echo()).collect();
        assert_eq!(echoes, [5, 10, 5, 10]);
        assert_eq!(p.admit(own, &with_echo(10, own, 502)), Admit::Current);
        // The peer restarts (session 11, later clock): its hellos displace the older candidate,
        // and a replay of the old run's cannot displace it back.
        assert_eq!(p.admit(own, &with_echo(11, 0, 2_000)), Admit::Unconfirmed);
        assert_eq!(p.admit(own, &with_echo(5, 0, 902)), Admit::StaleSession);
        let echoes: Vec<u64> = (0..2).map(|_| p.hello_echo()).collect();
        assert!(echoes.contains(&11) && echoes.contains(&10), "{echoes:?}");
        assert_eq!(
            p.admit(own, &with_echo(11, own, 2_001)),
            Admit::NewSession { restarted: true }
        );
        assert_eq!(p.admit(own, &with_echo(5, own, 903)), Admit::StaleSession);
    }
}
