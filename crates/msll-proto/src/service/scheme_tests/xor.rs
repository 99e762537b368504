//! XOR and XOR/Ad conversations.

use super::*;
use crate::service::{Xor, XorConfig};
use crate::testing::{number_of, numbered};
use crate::time::Duration;
use crate::wire::XorFrame;

fn xor(block: u8, idle: Option<u64>) -> Xor {
    Xor::new(XorConfig {
        block,
        idle_timeout: idle.map(Duration::from_millis),
    })
}

fn parsed(out: &Outbox) -> Vec<XorFrame> {
    out.frames
        .iter()
        .map(|f| XorFrame::parse(f).unwrap())
        .collect()
}

#[test]
fn parity_recovers_one_loss_out_of_sequence() {
    let mut tx = xor(4, None);
    let mut frames = Vec::new();
    for i in 0..4 {
        frames.extend(send(&mut tx, ms(i), numbered(i as u32, 50)).frames);
    }
    assert_eq!(frames.len(), 5, "4 data + 1 parity");
    assert_eq!(frames[0].len(), 52, "2-byte header (seed004-ch5 sec. 4.2)");
    assert_eq!(
        frames[4].len(),
        52,
        "parity = payload + 2 bytes when lengths are equal"
    );
    assert!(matches!(
        XorFrame::parse(&frames[4]).unwrap(),
        XorFrame::Parity {
            block: 0,
            count: 4,
            len_xor: None,
            ..
        }
    ));
    let mut rx = xor(4, None);
    let mut got = Vec::new();
    for (k, f) in frames.into_iter().enumerate() {
        if k == 1 {
            continue; // lost
        }
        got.extend(feed(&mut rx, ms(10 + k as u64), f).packets);
    }
    // data released immediately; the rebuilt frame when the parity arrives (L994)
    assert_eq!(
        got.iter().map(number_of).collect::<Vec<_>>(),
        vec![0, 2, 3, 1]
    );
    assert_eq!(got[3], numbered(1, 50));
    assert_eq!(rx.stats().fec_recoveries, 1);
    // next block uses block number 1
    let o = send(&mut tx, ms(20), numbered(4, 50));
    assert!(matches!(
        parsed(&o)[..],
        [XorFrame::Data {
            block: 1,
            index: 0,
            ..
        }]
    ));
}

#[test]
fn two_losses_are_not_recovered_and_lost_parity_abandons_block() {
    let mut tx = xor(3, None);
    let mut frames = Vec::new();
    for i in 0..6 {
        frames.extend(send(&mut tx, ms(i), numbered(i as u32, 50)).frames);
    }
    assert_eq!(frames.len(), 8);
    let mut rx = xor(3, None);
    let mut got = Vec::new();
    // block 0: lose data 0 and 2; block 1: lose data 4 and its parity (frame 7)
    for (k, f) in frames.into_iter().enumerate() {
        if [0, 2, 5, 7].contains(&k) {
            continue;
        }
        got.extend(feed(&mut rx, ms(10), f).packets);
    }
    assert_eq!(got.iter().map(number_of).collect::<Vec<_>>(), vec![1, 3, 5]);
    assert_eq!(rx.stats().fec_recoveries, 0);
}

#[test]
fn xor_ad_sends_early_parity_after_idle_timeout() {
    // XOR/Ad, Cellular timeout 100 ms (L1041); talkspurt of 3 packets at 41.7 ms intervals.
    let mut tx = xor(8, Some(100));
    let t = |i: u64| Instant::from_nanos(i * 41_700_000);
    for i in 0..3 {
        assert_eq!(send(&mut tx, t(i), numbered(i as u32, 50)).frames.len(), 1);
        // L996: the timer is restarted after each data frame
        assert_eq!(tx.poll_timeout(), Some(t(i) + Duration::from_millis(100)));
    }
    assert!(timeout(&mut tx, t(2) + Duration::from_millis(99)).is_empty());
    let o = timeout(&mut tx, t(2) + Duration::from_millis(100));
    assert!(matches!(
        parsed(&o)[..],
        [XorFrame::Parity {
            block: 0,
            count: 3,
            ..
        }]
    ));
    assert_eq!(tx.poll_timeout(), None, "block closed, nothing pending");
    let o = send(&mut tx, ms(2000), numbered(3, 50));
    assert!(matches!(
        parsed(&o)[..],
        [XorFrame::Data {
            block: 1,
            index: 0,
            ..
        }]
    ));
    // a full block closes normally and cancels the timer
    let mut tx = xor(2, Some(100));
    send(&mut tx, ms(0), numbered(0, 50));
    assert_eq!(send(&mut tx, ms(10), numbered(1, 50)).frames.len(), 2);
    assert_eq!(tx.poll_timeout(), None);
}

#[test]
fn unequal_lengths_carry_length_xor() {
    let mut tx = xor(3, None);
    let pk = [numbered(0, 40), numbered(1, 7), numbered(2, 50)];
    let mut frames = Vec::new();
    for (i, p) in pk.iter().enumerate() {
        frames.extend(send(&mut tx, ms(i as u64), p.clone()).frames);
    }
    match XorFrame::parse(&frames[3]).unwrap() {
        XorFrame::Parity {
            len_xor, payload, ..
        } => {
            assert_eq!(len_xor, Some(40 ^ 7 ^ 50));
            assert_eq!(payload.len(), 50, "padded to the longest payload");
        }
        f => panic!("{f:?}"),
    }
    for (lost, want) in pk.iter().enumerate() {
        let mut rx = xor(3, None);
        let mut got = Vec::new();
        for (k, f) in frames.iter().enumerate() {
            if k != lost {
                got.extend(feed(&mut rx, ms(10), f.clone()).packets);
            }
        }
        assert_eq!(got.last().unwrap(), want, "rebuilt frame {lost} exactly");
    }
}

#[test]
fn reused_block_number_after_eight_lost_blocks_is_a_new_block() {
    // A FIFO link delivers indices in increasing order, so an index not above the highest seen
    // in the current block starts a new block with the same 3-bit number.
    let mut rx = xor(2, None);
    feed(
        &mut rx,
        ms(0),
        XorFrame::Data {
            block: 3,
            index: 1,
            payload: numbered(1, 10).into_bytes(),
        }
        .emit(),
    );
    feed(
        &mut rx,
        ms(1),
        XorFrame::Data {
            block: 3,
            index: 0,
            payload: numbered(16, 10).into_bytes(),
        }
        .emit(),
    );
    // parity of the new block over (16, 17): one loss, recovered as 17, not mixed with 1
    let mut par = numbered(16, 10).as_slice().to_vec();
    for (a, b) in par.iter_mut().zip(numbered(17, 10).as_slice()) {
        *a ^= b;
    }
    let o = feed(
        &mut rx,
        ms(2),
        XorFrame::Parity {
            block: 3,
            count: 2,
            len_xor: None,
            payload: par.into(),
        }
        .emit(),
    );
    assert_eq!(o.packets, vec![numbered(17, 10)]);
}

/// XOR/Ad's timer runs from the start of a data frame's transmission, and stops when another
/// data frame arrives from IP (L998): a frame waiting in the scheduler's queue past the timeout
/// does not close its block under it (session 42's review: it sent a parity of count 1 here).
#[test]
fn xor_ad_timer_waits_for_a_queued_frame_and_restarts_at_its_transmission() {
    let mut tx = xor(8, Some(100));
    let out = send_queued(&mut tx, ms(0), numbered(0, 30));
    assert_eq!(
        tx.poll_timeout(),
        None,
        "not before the frame is on the link"
    );
    transmitted(&mut tx, ms(50), &out);
    assert_eq!(
        tx.poll_timeout(),
        Some(ms(150)),
        "from the start of its transmission"
    );
    let out = send_queued(&mut tx, ms(90), numbered(1, 30));
    assert_eq!(tx.poll_timeout(), None, "another data frame arrived");
    assert!(timeout_queued(&mut tx, ms(150)).frames.is_empty());
    transmitted(&mut tx, ms(200), &out);
    assert_eq!(tx.poll_timeout(), Some(ms(300)));
    let closed = parsed(&timeout_queued(&mut tx, ms(300)));
    assert!(
        matches!(closed[..], [XorFrame::Parity { count: 2, .. }]),
        "{closed:?}"
    );
}
