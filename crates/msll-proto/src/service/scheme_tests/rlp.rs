//! RLP and RLP/OOS conversations.

use super::*;
use crate::service::{Delivery, Rlp, RlpConfig};
use crate::testing::{number_of, numbered, Dir, Pair};
use crate::time::{DataRate, Duration};
use crate::wire::RlpFrame;

fn cfg(max_naks: u8, delivery: Delivery) -> RlpConfig {
    RlpConfig {
        max_naks,
        delivery,
        nak_timeout: Duration::from_millis(400),
        keepalive: Duration::from_millis(250),
        buffer: 128,
        max_idle_keepalives: 0,
    }
}

fn data(seq: u8) -> Frame {
    RlpFrame::Data {
        seq,
        payload: numbered(seq as u32, 8).into_bytes(),
    }
    .emit()
}

fn naks(out: &Outbox) -> Vec<u8> {
    out.frames
        .iter()
        .filter_map(|f| match RlpFrame::parse(f).unwrap() {
            RlpFrame::Nak { seq } => Some(seq),
            _ => None,
        })
        .collect()
}

fn nums(out: &Outbox) -> Vec<u32> {
    out.packets.iter().map(number_of).collect()
}

#[test]
fn keepalive_elicits_nak_for_lost_last_frame() {
    // Cellular link; two packets, the second (last) frame is lost. Only the keepalive, sent
    // after one idle keepalive period, reveals it (L755).
    let rate = DataRate::from_bps(14_400).unwrap();
    let c = cfg(3, Delivery::InSequence);
    let mut p = Pair::new(
        Box::new(Rlp::new(c)),
        Box::new(Rlp::new(c)),
        rate,
        Duration::from_millis(100),
    )
    .drop_frames(&[1], &[]);
    p.send_at(true, ms(0), numbered(0, 50));
    p.send_at(true, ms(10), numbered(1, 50));
    // Frame 1 waits for frame 0 (52 B = 28.9 ms): the keepalive period runs from the start of
    // its transmission, not from its hand-off at 10 ms.
    let f1 = Instant::ZERO + rate.tx_time(52);
    p.run_until(f1 + Duration::from_millis(249));
    assert_eq!(p.frames(Dir::AtoB).nth(1).unwrap().start, f1);
    assert_eq!(p.delivered[1].len(), 1);
    assert_eq!(
        p.frames(Dir::BtoA).count(),
        0,
        "no ACKs in RLP, no hole seen yet"
    );
    // keepalive 250 ms after frame 1 left carries the highest sequence number sent (1)
    p.run_until(f1 + Duration::from_millis(251));
    let ka = p.frames(Dir::AtoB).nth(2).unwrap().clone();
    assert_eq!(ka.start, f1 + Duration::from_millis(250));
    assert_eq!(
        RlpFrame::parse(&ka.frame).unwrap(),
        RlpFrame::Keepalive { highest: 1 }
    );
    assert_eq!(ka.frame.len(), 2);
    // B gets it 1.11 + 100 ms later and NAKs frame 1 at once
    p.run_until(ka.arrival);
    let nak = p.frames(Dir::BtoA).next().unwrap();
    assert_eq!(
        RlpFrame::parse(&nak.frame).unwrap(),
        RlpFrame::Nak { seq: 1 }
    );
    assert_eq!(nak.start, ka.arrival);
    p.run_until(ms(700));
    let got: Vec<u32> = p.delivered[1].iter().map(|(_, q)| number_of(q)).collect();
    assert_eq!(got, vec![0, 1]);
    assert_eq!(p.a.stats().retransmissions, 1);
    assert_eq!(
        p.b.poll_timeout(),
        None,
        "B sends nothing: its NAK timer is cancelled"
    );
}

#[test]
fn gives_up_after_exactly_max_naks_and_releases_in_sequence() {
    let mut rx = Rlp::new(cfg(3, Delivery::InSequence));
    assert_eq!(nums(&feed(&mut rx, ms(0), data(0))), vec![0]);
    // 1 lost; 2 arrives -> NAK(1), held
    let o = feed(&mut rx, ms(30), data(2));
    assert_eq!((naks(&o), nums(&o)), (vec![1], vec![]));
    assert_eq!(rx.poll_timeout(), Some(ms(430)));
    // retransmissions lost: NAK again at each expiry, 3 in all (L777, seed004-ch4 sec. 7 item 5)
    assert_eq!(naks(&timeout(&mut rx, ms(430))), vec![1]);
    assert!(
        timeout(&mut rx, ms(500)).is_empty(),
        "early call is harmless"
    );
    assert_eq!(naks(&timeout(&mut rx, ms(830))), vec![1]);
    // the timer after the 3rd NAK expires: give up, release 2, expose the hole
    let o = timeout(&mut rx, ms(1230));
    assert!(naks(&o).is_empty());
    assert_eq!(nums(&o), vec![2]);
    assert_eq!(rx.stats().give_ups, 1);
    assert_eq!(rx.stats().naks_sent, 3);
    // a late retransmission of 1 is now behind the window: dropped (in-sequence RLP)
    assert!(feed(&mut rx, ms(1300), data(1)).packets.is_empty());
    assert_eq!(rx.stats().duplicates_received, 1);
}

#[test]
fn one_nak_variant_and_oos_release_on_arrival() {
    let mut rx = Rlp::new(cfg(1, Delivery::OutOfSequence));
    feed(&mut rx, ms(0), data(0));
    // 1, 2 lost; 3 released immediately even though 1 and 2 are missing (L1029)
    let o = feed(&mut rx, ms(30), data(3));
    assert_eq!((naks(&o), nums(&o)), (vec![1, 2], vec![3]));
    // 2's retransmission: released on arrival
    assert_eq!(nums(&feed(&mut rx, ms(300), data(2))), vec![2]);
    // one NAK only: 1 is given up when its timer expires, nothing to release
    let o = timeout(&mut rx, ms(430));
    assert!(o.is_empty());
    assert_eq!(rx.stats().give_ups, 1);
    // AMB-7: a retransmission arriving after the give-up is still delivered, once
    assert_eq!(nums(&feed(&mut rx, ms(450), data(1))), vec![1]);
    assert!(feed(&mut rx, ms(460), data(1)).packets.is_empty());
    assert_eq!(rx.stats().packets_delivered, 4);
    assert_eq!(rx.stats().give_ups, 0, "delivered after all: not given up");
}

#[test]
fn sender_retransmits_only_on_nak_and_keeps_alive_while_idle() {
    let mut tx = Rlp::new(cfg(3, Delivery::InSequence));
    assert_eq!(tx.poll_timeout(), None, "no keepalive before any data");
    let o = send(&mut tx, ms(0), numbered(0, 50));
    assert_eq!(
        o.frames[0].len(),
        52,
        "2-byte data header (seed004-ch4 sec. 3.0.1)"
    );
    send(&mut tx, ms(30), numbered(1, 50));
    assert_eq!(tx.poll_timeout(), Some(ms(280)));
    let o = feed(&mut tx, ms(100), RlpFrame::Nak { seq: 0 }.emit());
    assert_eq!(
        RlpFrame::parse(&o.frames[0]).unwrap(),
        RlpFrame::Data {
            seq: 0,
            payload: numbered(0, 50).into_bytes()
        }
    );
    let o = timeout(&mut tx, ms(280));
    assert_eq!(
        RlpFrame::parse(&o.frames[0]).unwrap(),
        RlpFrame::Keepalive { highest: 1 }
    );
    // periodically while idle
    assert_eq!(tx.poll_timeout(), Some(ms(530)));
    assert_eq!(tx.stats().keepalives_sent, 1);
}

#[test]
fn limited_idle_keepalives() {
    let mut tx = Rlp::new(RlpConfig {
        max_idle_keepalives: 2,
        ..cfg(3, Delivery::InSequence)
    });
    send(&mut tx, ms(0), numbered(0, 50));
    assert_eq!(timeout(&mut tx, ms(250)).frames.len(), 1);
    assert_eq!(timeout(&mut tx, ms(500)).frames.len(), 1);
    assert_eq!(tx.poll_timeout(), None);
}

#[test]
fn receiver_detects_buffer_overrun_instead_of_desynchronising() {
    // seed 004 L761: the give-up time must be shorter than the time to cycle the buffer. With
    // a 4-frame buffer and a long NAK timer the sender overwrites frame 1 while it is NAKed.
    let mut rx = Rlp::new(RlpConfig {
        buffer: 4,
        ..cfg(3, Delivery::InSequence)
    });
    feed(&mut rx, ms(0), data(0));
    assert_eq!(naks(&feed(&mut rx, ms(10), data(2))), vec![1]);
    feed(&mut rx, ms(20), data(3));
    feed(&mut rx, ms(30), data(4));
    assert_eq!(rx.stats().protocol_errors, 0);
    // frame 5 proves the sender no longer holds frame 1 (it keeps 2..=5)
    let o = feed(&mut rx, ms(40), data(5));
    assert_eq!(nums(&o), vec![2, 3, 4, 5]);
    assert_eq!(rx.stats().protocol_errors, 1);
    assert_eq!(rx.buffer_overruns(), (1, 0));
    assert_eq!(rx.stats().buffer_overruns, 1);
    assert_eq!(rx.stats().give_ups, 1);
    assert_eq!(rx.poll_timeout(), None);
}

#[test]
fn frame_after_127_consecutive_losses_is_new() {
    // The sender holds its last 128 frames, so no retransmission is ever 128 behind the highest
    // number seen: frame 128 after frame 0 (1..=127 lost) is new, and so are the frames after it.
    // It used to be taken as a duplicate, with every good frame up to 256 ahead.
    for delivery in [Delivery::InSequence, Delivery::OutOfSequence] {
        let mut rx = Rlp::new(cfg(3, delivery));
        assert_eq!(nums(&feed(&mut rx, ms(0), data(0))), vec![0]);
        let o = feed(&mut rx, ms(10), data(128));
        assert_eq!(naks(&o), (1..=127).collect::<Vec<u8>>(), "{delivery:?}");
        let mut got = nums(&o);
        for s in 1..=127u8 {
            got.extend(nums(&feed(&mut rx, ms(20 + s as u64), data(s))));
        }
        // (129 before the retransmissions would rightly be an overrun: the sender holds 2..=129)
        got.extend(nums(&feed(&mut rx, ms(150), data(129))));
        let mut want: Vec<u32> = (1..=129).collect();
        if delivery == Delivery::OutOfSequence {
            want[..128].rotate_right(1); // 128 on arrival, then the retransmissions
        }
        assert_eq!(got, want, "{delivery:?}");
        assert_eq!(rx.stats().duplicates_received, 0, "{delivery:?}");
        assert_eq!(rx.stats().give_ups, 0, "{delivery:?}");
        // and a real duplicate, 127 behind the highest (129), is still one
        assert!(feed(&mut rx, ms(200), data(2)).packets.is_empty());
        assert_eq!(rx.stats().duplicates_received, 1, "{delivery:?}");
        // A keepalive naming the frame 128 ahead exposes all 128 as lost (it used to be ignored).
        let mut rx = Rlp::new(cfg(3, delivery));
        feed(&mut rx, ms(0), data(0));
        let o = feed(&mut rx, ms(10), RlpFrame::Keepalive { highest: 128 }.emit());
        assert_eq!(naks(&o), (1..=128).collect::<Vec<u8>>(), "{delivery:?}");
    }
}

#[test]
fn sender_counts_nak_for_overwritten_frame() {
    let mut tx = Rlp::new(RlpConfig {
        buffer: 2,
        ..cfg(3, Delivery::InSequence)
    });
    for i in 0..3 {
        send(&mut tx, ms(i), numbered(i as u32, 8));
    }
    // frame 0 was overwritten by frame 2: a NAK for it must not resend frame 2's payload
    assert!(feed(&mut tx, ms(5), RlpFrame::Nak { seq: 0 }.emit()).is_empty());
    // never-sent frame
    assert!(feed(&mut tx, ms(6), RlpFrame::Nak { seq: 3 }.emit()).is_empty());
    assert_eq!(tx.buffer_overruns(), (0, 2));
    assert_eq!(tx.stats().buffer_overruns, 2);
    assert_eq!(tx.stats().protocol_errors, 2);
    assert_eq!(
        feed(&mut tx, ms(7), RlpFrame::Nak { seq: 1 }.emit())
            .frames
            .len(),
        1
    );
}

#[test]
fn sequence_numbers_wrap() {
    let c = cfg(1, Delivery::InSequence);
    let l = crate::testing::thesis_link("wlan");
    let mut p = Pair::new(
        Box::new(Rlp::new(c)),
        Box::new(Rlp::new(c)),
        l.rate,
        l.delay,
    )
    .with_loss(|d, i, _| d == Dir::AtoB && i % 97 == 5);
    for i in 0..600 {
        p.send_at(true, ms(5 * i as u64), numbered(i, 100));
    }
    p.run_until(ms(5000));
    let got: Vec<u32> = p.delivered[1].iter().map(|(_, q)| number_of(q)).collect();
    assert_eq!(got, (0..600).collect::<Vec<_>>());
    assert_eq!(p.b.stats().protocol_errors, 0);
}

#[test]
fn nak_dropped_by_the_scheduler_is_inferred_from_a_later_report() {
    // The receiver's NAK(1) is dropped by a full scheduler queue (never reported); a later data
    // frame of the same service is reported, which proves the drop: the NAK timer runs from then
    // and the second NAK follows on expiry, instead of the hole waiting forever.
    let mut rx = Rlp::new(cfg(3, Delivery::InSequence));
    feed(&mut rx, ms(0), data(0));
    let nak = feed_queued(&mut rx, ms(10), data(2));
    assert_eq!(naks(&nak), vec![1]);
    // no NAK timer yet; only the fallback for a copy never reported (10 + 400 ms)
    assert_eq!(rx.poll_timeout(), Some(ms(410)));
    let d = send_queued(&mut rx, ms(20), numbered(9, 8));
    transmitted(&mut rx, ms(30), &d);
    // keepalive for its own data at 30 + 250 ms, then the NAK timer at 30 + 400 ms
    assert_eq!(rx.poll_timeout(), Some(ms(280)));
    assert!(naks(&timeout(&mut rx, ms(280))).is_empty());
    assert_eq!(rx.poll_timeout(), Some(ms(430)));
    assert_eq!(naks(&timeout(&mut rx, ms(430))), vec![1]);
}

#[test]
fn a_dropped_new_frame_is_named_by_the_keepalive() {
    // `Service::handle_dropped`: frame 2, the newest, is dropped by a bounded queue while 0 and
    // 1 still wait. It counts as sent (and lost) at once: the keepalive period runs from the
    // drop, and the keepalive names it, so the peer NAKs it. The later reports of 0 and 1 do
    // not move the highest number sent back.
    let mut tx = Rlp::new(cfg(3, Delivery::InSequence));
    let q: Vec<Outbox> = (0..3)
        .map(|i| send_queued(&mut tx, ms(0), numbered(i, 8)))
        .collect();
    tx.handle_dropped(ms(0), &on_wire(q[2].frames[0].clone()));
    transmitted(&mut tx, ms(10), &q[0]);
    transmitted(&mut tx, ms(20), &q[1]);
    assert_eq!(tx.poll_timeout(), Some(ms(250)));
    let ka = timeout(&mut tx, ms(250));
    assert_eq!(
        ka.frames
            .iter()
            .map(|f| RlpFrame::parse(f).unwrap())
            .collect::<Vec<_>>(),
        vec![RlpFrame::Keepalive { highest: 2 }]
    );
    // the peer's NAK brings the retransmission
    let o = feed(&mut tx, ms(300), RlpFrame::Nak { seq: 2 }.emit());
    assert_eq!(
        o.frames
            .iter()
            .map(|f| RlpFrame::parse(f).unwrap())
            .filter(|f| matches!(f, RlpFrame::Data { seq: 2, .. }))
            .count(),
        1
    );
}

/// AMB-4: the NAK timer must outlast the wait of the retransmission in the sender's queue.
/// Twelve WLAN frames queued back to back, frame 0 lost: the NAK reaches the sender while ten
/// frames are still queued, so the retransmission arrives ~11 frame times after the NAK. With
/// the bare 2 x RTT timer (20 ms = 5 frames) a one-NAK RLP gives the frame up before it arrives;
/// with the default allowance of 8 frames (52 ms) it is delivered.
#[test]
fn nak_timer_allows_for_sender_queueing() {
    let link = crate::testing::thesis_link("wlan");
    let run = |queue_frames: u32| {
        let c = RlpConfig::recommended_with(&link, 1, Delivery::InSequence, queue_frames);
        let mut p = Pair::new(
            Box::new(Rlp::new(c)),
            Box::new(Rlp::new(c)),
            link.rate,
            link.delay,
        )
        .drop_frames(&[0], &[]);
        for k in 0..12 {
            p.send_at(true, Instant::ZERO, numbered(k, link.frame_payload));
        }
        p.run_until(Instant::from_secs_f64(2.0));
        let got: Vec<u32> = p.delivered[1].iter().map(|(_, q)| number_of(q)).collect();
        (got, p.b.stats().give_ups)
    };
    let (bare, bare_give_ups) = run(0);
    assert_eq!(
        bare_give_ups, 1,
        "2 x RTT expires while the retransmission is queued"
    );
    assert!(!bare.contains(&0), "{bare:?}");
    let (relaxed, relaxed_give_ups) = run(crate::service::rlp::DEFAULT_NAK_QUEUE_FRAMES);
    assert_eq!(relaxed_give_ups, 0);
    assert_eq!(
        relaxed,
        (0..12).collect::<Vec<u32>>(),
        "every packet, in sequence"
    );
}

#[test]
fn rlp_takes_a_late_retransmission_for_a_new_frame_so_it_needs_link_order() {
    // The premise of `Service::requires_fifo` for RLP (review of session 35): once frame 128 has
    // arrived, the sender no longer holds frame 0, so over a FIFO link no copy of 0 can follow.
    // Over a reordering path a retransmission of 0 overtaken by 128 does, and is taken for frame
    // 256 (NAKs for 129..=255, and RLP/OOS delivers the old packet again). This asserts the fault
    // on purpose: if RLP is made to tolerate reordering, it fails and `requires_fifo` may change.
    for delivery in [Delivery::InSequence, Delivery::OutOfSequence] {
        let mut rx = Rlp::new(cfg(3, delivery));
        assert!(rx.requires_fifo());
        let mut got = Vec::new();
        for s in 0..=128u8 {
            got.extend(nums(&feed(&mut rx, ms(s as u64), data(s))));
        }
        assert_eq!(got, (0..=128).collect::<Vec<u32>>());
        let late = RlpFrame::Data {
            seq: 0,
            payload: numbered(0, 8).into_bytes(),
        }
        .emit();
        let o = feed(&mut rx, ms(200), late);
        assert_eq!(naks(&o).len(), 127, "{delivery:?}");
        if delivery == Delivery::OutOfSequence {
            assert_eq!(nums(&o), vec![0], "packet 0 delivered a second time");
        }
    }
}
