//! GBN and SR conversations.

use super::*;
use crate::service::{Gbn, GbnConfig, NakPolicy, RetransmitTimer, Sr, SrConfig};
use crate::testing::{numbered, Dir, Pair};
use crate::time::{DataRate, Duration};
use crate::wire::ArqFrame;

fn sr(policy: NakPolicy) -> Sr {
    sr_timer(policy, RetransmitTimer::PerFrame)
}

fn sr_timer(policy: NakPolicy, timer: RetransmitTimer) -> Sr {
    Sr::new(SrConfig {
        nak_policy: policy,
        window: 127,
        rto: Duration::from_millis(400),
        ack_delay: Duration::from_millis(30),
        timer,
    })
}

fn data(seq: u8, ack: u8) -> Frame {
    ArqFrame::Data {
        seq,
        ack,
        payload: numbered(seq as u32, 8).into_bytes(),
    }
    .emit()
}

fn parsed(out: &Outbox) -> Vec<ArqFrame> {
    out.frames
        .iter()
        .map(|f| ArqFrame::parse(f).unwrap())
        .collect()
}

/// The sequence numbers of `out`'s frames, all data frames.
fn data_seqs(out: &Outbox) -> Vec<u8> {
    parsed(out)
        .into_iter()
        .map(|f| match f {
            ArqFrame::Data { seq, .. } => seq,
            f => panic!("{f:?}"),
        })
        .collect()
}

/// GBN with a 400 ms retransmission timer and a 30 ms delayed ACK.
fn gbn_400ms() -> Gbn {
    Gbn::new(GbnConfig {
        window: 127,
        rto: Duration::from_millis(400),
        ack_delay: Duration::from_millis(30),
    })
}

fn naks(out: &Outbox) -> Vec<u8> {
    parsed(out)
        .into_iter()
        .filter_map(|f| match f {
            ArqFrame::Nak { seq } => Some(seq),
            _ => None,
        })
        .collect()
}

#[test]
fn sr_basic_naks_earliest_missing_once_per_window_advance() {
    let mut rx = sr(NakPolicy::Once);
    assert!(feed(&mut rx, ms(0), data(0, 0)).packets.len() == 1);
    // 1 and 2 lost; 3 arrives out of sequence -> NAK(1), the earliest missing frame (L741)
    assert_eq!(naks(&feed(&mut rx, ms(10), data(3, 0))), vec![1]);
    // further out-of-sequence frames: no NAK until the window advances
    assert_eq!(naks(&feed(&mut rx, ms(20), data(4, 0))), Vec::<u8>::new());
    // 1 arrives: window advances to 2; the next out-of-sequence frame NAKs 2
    let o = feed(&mut rx, ms(30), data(1, 0));
    assert_eq!(o.packets.len(), 1);
    assert_eq!(naks(&feed(&mut rx, ms(40), data(5, 0))), vec![2]);
    let o = feed(&mut rx, ms(50), data(2, 0));
    // 2,3,4,5 released in sequence
    let got: Vec<u32> = o.packets.iter().map(crate::testing::number_of).collect();
    assert_eq!(got, vec![2, 3, 4, 5]);
}

#[test]
fn sr_m1_naks_every_hole_ascending_and_never_again() {
    let mut rx = sr(NakPolicy::PerWindow);
    feed(&mut rx, ms(0), data(0, 0));
    assert_eq!(naks(&feed(&mut rx, ms(10), data(3, 0))), vec![1, 2]);
    assert_eq!(naks(&feed(&mut rx, ms(20), data(6, 0))), vec![4, 5]);
    // a retransmission that is not the earliest missing frame: SR/M1 does not re-NAK
    assert_eq!(naks(&feed(&mut rx, ms(30), data(2, 0))), Vec::<u8>::new());
}

#[test]
fn sr_m2_renaks_earlier_frames_by_counter_rule() {
    // seed004-ch4 sec. 3.5: re-NAK x < r only if nakcount[x] <= nakcount[r], then increment.
    let mut rx = sr(NakPolicy::PerFrame);
    feed(&mut rx, ms(0), data(0, 0));
    // 1, 2, 3 lost; 4 arrives: NAK 1, 2, 3 (counts 1, 1, 1)
    assert_eq!(naks(&feed(&mut rx, ms(10), data(4, 0))), vec![1, 2, 3]);
    // retransmission of 3 arrives first: 1 and 2 were not retransmitted or were lost again
    // -> NAK 1, 2 (counts 2, 2)
    assert_eq!(naks(&feed(&mut rx, ms(300), data(3, 0))), vec![1, 2]);
    // retransmission of 2 arrives (its count is 2): 1 has count 2 <= 2 -> NAK 1 (count 3)
    assert_eq!(naks(&feed(&mut rx, ms(600), data(2, 0))), vec![1]);
    // new hole: 5 lost, 6 arrives -> NAK 5 (count 1)
    assert_eq!(naks(&feed(&mut rx, ms(610), data(6, 0))), vec![5]);
    // retransmission of 5 arrives (count 1): 1 has count 3 > 1 -> no NAK
    assert_eq!(naks(&feed(&mut rx, ms(900), data(5, 0))), Vec::<u8>::new());
    // 1 finally arrives: everything through 6 is released in order
    let o = feed(&mut rx, ms(950), data(1, 0));
    let got: Vec<u32> = o.packets.iter().map(crate::testing::number_of).collect();
    assert_eq!(got, vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(rx.stats().naks_sent, 7);
}

#[test]
fn sr_sender_retransmits_on_nak_and_oldest_frame_timeout() {
    let mut tx = sr_timer(NakPolicy::PerFrame, RetransmitTimer::Oldest);
    for i in 0..3 {
        let o = send(&mut tx, ms(i), numbered(i as u32, 8));
        assert_eq!(
            parsed(&o),
            vec![ArqFrame::Data {
                seq: i as u8,
                ack: 0,
                payload: numbered(i as u32, 8).into_bytes()
            }]
        );
    }
    // one timer, for the oldest unacknowledged frame
    assert_eq!(tx.poll_timeout(), Some(ms(400)));
    // NAK(1) from SR/M2 implies nothing about 0: only 1 is resent, immediately (L741)
    let o = feed(&mut tx, ms(100), ArqFrame::Nak { seq: 1 }.emit());
    assert!(matches!(parsed(&o)[..], [ArqFrame::Data { seq: 1, .. }]));
    assert_eq!(tx.poll_timeout(), Some(ms(400)));
    // ACK 1 (frame 0 received): the timer restarts for frame 1, now the oldest
    feed(&mut tx, ms(150), ArqFrame::Ack { ack: 1 }.emit());
    assert_eq!(tx.poll_timeout(), Some(ms(550)));
    // expiry resends only the timed-out frame, not the whole window (unlike GBN)
    let o = timeout(&mut tx, ms(550));
    assert!(matches!(parsed(&o)[..], [ArqFrame::Data { seq: 1, .. }]));
    assert_eq!(tx.poll_timeout(), Some(ms(950)));
    feed(&mut tx, ms(600), ArqFrame::Ack { ack: 3 }.emit());
    assert_eq!(tx.poll_timeout(), None);
    assert_eq!(tx.stats().retransmissions, 2);
}

#[test]
fn sr_sender_retransmits_on_nak_and_per_frame_timeout() {
    let mut tx = sr(NakPolicy::PerFrame);
    for i in 0..3 {
        send(&mut tx, ms(i), numbered(i as u32, 8));
    }
    assert_eq!(tx.poll_timeout(), Some(ms(400)));
    // NAK(1): only 1 is resent, immediately, and its own timer restarts
    let o = feed(&mut tx, ms(100), ArqFrame::Nak { seq: 1 }.emit());
    assert!(matches!(parsed(&o)[..], [ArqFrame::Data { seq: 1, .. }]));
    // ACK 1 (frame 0 received); frame 2's timer (armed at 2 ms) expires first: only 2 is resent
    feed(&mut tx, ms(150), ArqFrame::Ack { ack: 1 }.emit());
    assert_eq!(tx.poll_timeout(), Some(ms(402)));
    let o = timeout(&mut tx, ms(402));
    assert!(matches!(parsed(&o)[..], [ArqFrame::Data { seq: 2, .. }]));
    // frame 1 was re-armed by the NAK-triggered retransmission at 100 ms
    assert_eq!(tx.poll_timeout(), Some(ms(500)));
    feed(&mut tx, ms(450), ArqFrame::Ack { ack: 3 }.emit());
    assert_eq!(tx.poll_timeout(), None);
    assert_eq!(tx.stats().retransmissions, 2);
}

#[test]
fn sr_window_full_drops_on_entry() {
    let mut tx = Sr::new(SrConfig {
        window: 2,
        ..SrConfig::recommended(&crate::testing::thesis_link("cellular"), NakPolicy::Once)
    });
    assert_eq!(send(&mut tx, ms(0), numbered(0, 8)).frames.len(), 1);
    assert_eq!(send(&mut tx, ms(1), numbered(1, 8)).frames.len(), 1);
    assert!(send(&mut tx, ms(2), numbered(2, 8)).is_empty());
    assert_eq!(tx.stats().packets_dropped, 1);
    feed(&mut tx, ms(3), ArqFrame::Ack { ack: 1 }.emit());
    assert_eq!(send(&mut tx, ms(4), numbered(3, 8)).frames.len(), 1);
}

#[test]
fn delayed_ack_is_pure_unless_piggybacked() {
    let mut rx = sr(NakPolicy::Once);
    feed(&mut rx, ms(0), data(0, 0));
    assert_eq!(rx.poll_timeout(), Some(ms(30)));
    let o = timeout(&mut rx, ms(30));
    assert_eq!(parsed(&o), vec![ArqFrame::Ack { ack: 1 }]);
    assert_eq!(
        o.frames[0].len(),
        2,
        "pure ACK is 2 bytes (seed004-ch4 sec. 7 item 2)"
    );
    // next frame: reverse data before the timer carries the ACK instead
    feed(&mut rx, ms(40), data(1, 0));
    let o = send(&mut rx, ms(50), numbered(9, 8));
    assert!(matches!(
        parsed(&o)[..],
        [ArqFrame::Data { seq: 0, ack: 2, .. }]
    ));
    assert_eq!(o.frames[0].len(), 3 + 8);
    assert_eq!(
        rx.poll_timeout(),
        Some(ms(450)),
        "only the data frame's RTO"
    );
}

#[test]
fn gbn_timeout_restarts_from_earliest_unacked_frame() {
    // Cellular-like link; 3 frames back to back, the first one lost.
    let rate = DataRate::from_bps(14_400).unwrap();
    let cfg = GbnConfig {
        window: 127,
        rto: Duration::from_millis(500),
        ack_delay: Duration::from_millis(30),
    };
    let mut p = Pair::new(
        Box::new(Gbn::new(cfg)),
        Box::new(Gbn::new(cfg)),
        rate,
        Duration::from_millis(100),
    )
    .drop_frames(&[0], &[]);
    for i in 0..3 {
        p.send_at(true, Instant::ZERO, numbered(i, 50));
    }
    p.run_until(ms(499));
    // The receiver discarded 1 and 2 (out of sequence) and ACKed "expect 0"
    assert!(p.delivered[1].is_empty());
    assert_eq!(p.b.stats().duplicates_received, 2);
    // the three copies are queued at 500 ms and serialised back to back (29.4 ms each)
    p.run_until(ms(590));
    let resent: Vec<u8> = p
        .frames(Dir::AtoB)
        .skip(3)
        .map(|e| match ArqFrame::parse(&e.frame).unwrap() {
            ArqFrame::Data { seq, .. } => seq,
            f => panic!("{f:?}"),
        })
        .collect();
    // L735: "each timeout causes the scheme to restart from the earliest buffered frame"
    assert_eq!(resent, vec![0, 1, 2]);
    assert!(p.frames(Dir::AtoB).skip(3).all(|e| e.start >= ms(500)));
    p.run_until(ms(2000));
    let got: Vec<u32> = p.delivered[1]
        .iter()
        .map(|(_, q)| crate::testing::number_of(q))
        .collect();
    assert_eq!(got, vec![0, 1, 2]);
    assert_eq!(p.a.poll_timeout(), None);
    assert_eq!(p.a.stats().retransmissions, 3);
}

#[test]
fn gbn_ack_restarts_timer_for_remaining_frames() {
    let cfg = GbnConfig {
        window: 127,
        rto: Duration::from_millis(400),
        ack_delay: Duration::from_millis(30),
    };
    let mut tx = Gbn::new(cfg);
    send(&mut tx, ms(0), numbered(0, 8));
    send(&mut tx, ms(10), numbered(1, 8));
    // one timer for the oldest frame: a later frame does not postpone it
    assert_eq!(tx.poll_timeout(), Some(ms(400)));
    feed(&mut tx, ms(250), ArqFrame::Ack { ack: 1 }.emit());
    assert_eq!(tx.poll_timeout(), Some(ms(650)));
    feed(&mut tx, ms(260), ArqFrame::Ack { ack: 2 }.emit());
    assert_eq!(tx.poll_timeout(), None);
}

#[test]
fn timers_start_at_transmission_and_one_copy_waits() {
    // seed004-ch4 sec. 3.2 (L735): the retransmission timer is set "after each transmission". A
    // frame waiting in the scheduler FIFO has no timer running, and a NAK or timeout for a frame
    // whose copy still waits sends nothing more (the FTP-over-Cellular collapse, docs/schemes.md).
    for timer in [RetransmitTimer::PerFrame, RetransmitTimer::Oldest] {
        let mut tx = sr_timer(NakPolicy::PerFrame, timer);
        let q: Vec<Outbox> = (0..3)
            .map(|i| send_queued(&mut tx, ms(0), numbered(i, 8)))
            .collect();
        // frame 0 leaves at 300 ms, behind a backlog: its 400 ms timer runs from there
        transmitted(&mut tx, ms(300), &q[0]);
        assert_eq!(tx.poll_timeout(), Some(ms(700)), "{timer:?}");
        // NAK(1) while frame 1's first copy still waits: no second copy
        assert!(feed_queued(&mut tx, ms(320), ArqFrame::Nak { seq: 1 }.emit()).is_empty());
        transmitted(&mut tx, ms(630), &q[1]);
        transmitted(&mut tx, ms(660), &q[2]);
        // frame 0 times out at 700 ms: one copy queued
        let o = timeout_queued(&mut tx, ms(700));
        assert!(matches!(parsed(&o)[..], [ArqFrame::Data { seq: 0, .. }]));
        if timer == RetransmitTimer::PerFrame {
            // frames 1 and 2 time out too (cumulative ACKs only)
            assert_eq!(timeout_queued(&mut tx, ms(1060)).frames.len(), 2);
        }
        // while the copy of 0 waits, nothing adds another
        assert!(timeout_queued(&mut tx, ms(1090)).is_empty(), "{timer:?}");
        // it leaves at 1090 ms: its timer restarts from there
        transmitted(&mut tx, ms(1090), &o);
        assert_eq!(tx.poll_timeout(), Some(ms(1490)), "{timer:?}");
    }
    // GBN: the same rule; a go-back re-queues only frames without a waiting copy.
    let mut g = gbn_400ms();
    let q: Vec<Outbox> = (0..3)
        .map(|i| send_queued(&mut g, ms(0), numbered(i, 8)))
        .collect();
    transmitted(&mut g, ms(300), &q[0]);
    assert_eq!(g.poll_timeout(), Some(ms(700)));
    transmitted(&mut g, ms(650), &q[1]);
    let o = timeout_queued(&mut g, ms(700));
    // frame 2 still waits in the FIFO: only 0 and 1 are queued again
    let seqs = data_seqs(&o);
    assert_eq!(seqs, vec![0, 1]);
}

#[test]
fn copies_dropped_by_a_bounded_scheduler_queue_are_inferred_and_resent() {
    // A bounded scheduler queue may drop a copy without telling the service. The scheduler keeps
    // a service's frames in order, so a later frame's transmission report proves the drop; the
    // dropped copy then counts as sent and lost, and its timer runs (HandOffLog).
    for timer in [RetransmitTimer::PerFrame, RetransmitTimer::Oldest] {
        let mut tx = sr_timer(NakPolicy::PerFrame, timer);
        let q: Vec<Outbox> = (0..3)
            .map(|i| send_queued(&mut tx, ms(0), numbered(i, 8)))
            .collect();
        transmitted(&mut tx, ms(10), &q[0]);
        // q[1] dropped: never reported
        transmitted(&mut tx, ms(20), &q[2]);
        feed(&mut tx, ms(100), ArqFrame::Ack { ack: 1 }.emit());
        let due = tx.poll_timeout().expect("frame 1 has a timer");
        let o = timeout_queued(&mut tx, due);
        let seqs = data_seqs(&o);
        assert_eq!(seqs[0], 1, "{timer:?}: the dropped frame is resent");
    }
    let mut g = gbn_400ms();
    let q: Vec<Outbox> = (0..2)
        .map(|i| send_queued(&mut g, ms(0), numbered(i, 8)))
        .collect();
    // q[0] dropped, q[1] sent at 10 ms: the go-back at 410 ms resends both
    transmitted(&mut g, ms(10), &q[1]);
    assert_eq!(g.poll_timeout(), Some(ms(410)));
    assert_eq!(timeout_queued(&mut g, ms(410)).frames.len(), 2);
    // Nothing reported for a whole RTO while copies are tracked: all were dropped (the tail of
    // a burst, with nothing of ours after it). They count as lost then and are resent.
    let mut g = gbn_400ms();
    let q: Vec<Outbox> = (0..3)
        .map(|i| send_queued(&mut g, ms(0), numbered(i, 8)))
        .collect();
    transmitted(&mut g, ms(10), &q[0]);
    // 1 and 2 dropped; no report after 10 ms: at 410 ms they count as sent and lost, and the
    // timer of frame 0 (armed at 10 ms) goes back over all three
    assert_eq!(g.poll_timeout(), Some(ms(410)));
    assert_eq!(timeout_queued(&mut g, ms(410)).frames.len(), 3);
}

/// Frames 0, 1, 2 handed to the scheduler at 0 ms and the newest one (2) refused by a bounded
/// queue at `drop_at`: the three hand-offs.
fn three_handed_newest_dropped(s: &mut dyn Service, drop_at: Instant) -> Vec<Outbox> {
    let q: Vec<Outbox> = (0..3)
        .map(|i| send_queued(s, ms(0), numbered(i, 8)))
        .collect();
    s.handle_dropped(drop_at, &on_wire(q[2].frames[0].clone()));
    q
}

#[test]
fn a_reported_drop_leaves_the_older_copies_waiting() {
    // `Service::handle_dropped`: a bounded queue drops the newest frame while older ones of the
    // service still wait in it. Only the dropped frame counts as sent and lost; had the drop been
    // reported as a transmission, the older copies would have been taken for dropped as well
    // and queued a second time.
    let mut tx = sr_timer(NakPolicy::PerFrame, RetransmitTimer::PerFrame);
    let q = three_handed_newest_dropped(&mut tx, ms(0));
    assert_eq!(
        tx.poll_timeout(),
        Some(ms(400)),
        "frame 2's timer, from the drop"
    );
    assert_eq!(data_seqs(&timeout_queued(&mut tx, ms(400))), vec![2]);
    // 0 and 1 leave later; their timers run from their transmissions
    transmitted(&mut tx, ms(450), &q[0]);
    transmitted(&mut tx, ms(460), &q[1]);
    assert!(timeout_queued(&mut tx, ms(849)).is_empty());
    assert_eq!(data_seqs(&timeout_queued(&mut tx, ms(850))), vec![0]);
    // GBN: the drop arms the go-back timer, and the older copies count as waiting, so at 400 ms
    // nothing is queued twice: the copies still unreported then are taken as dropped by the
    // quiet-period rule (`HandOffLog::take_stale`), which restarts the timer from them.
    // Reported as a transmission, the drop would have declared 0 and 1 dropped at once, and the
    // go-back at 400 ms would have queued second copies of all three.
    let mut g = gbn_400ms();
    let q = three_handed_newest_dropped(&mut g, ms(0));
    assert_eq!(g.poll_timeout(), Some(ms(400)));
    let mut g2 = gbn_400ms();
    three_handed_newest_dropped(&mut g2, ms(0));
    assert!(timeout_queued(&mut g2, ms(400)).is_empty());
    assert_eq!(data_seqs(&timeout_queued(&mut g2, ms(800))), vec![0, 1, 2]);
    // and once the older copies leave, the dropped frame (now the oldest) is resent at its
    // timeout
    transmitted(&mut g, ms(10), &q[0]);
    transmitted(&mut g, ms(20), &q[1]);
    feed(&mut g, ms(100), ArqFrame::Ack { ack: 2 }.emit());
    assert_eq!(g.poll_timeout(), Some(ms(500)));
    assert_eq!(data_seqs(&timeout_queued(&mut g, ms(500))), vec![2]);
}

#[test]
fn a_reported_drop_restarts_the_quiet_period_of_the_waiting_copies() {
    // A drop at 300 ms proves that the copies handed off at 0 still wait in the queue then, so
    // the rule that takes silent copies for dropped (`HandOffLog`: nothing reported for one RTO)
    // counts from the drop, not from the hand-off. Without the restart, 0 and 1 were taken for
    // dropped at 400 ms and their timers, run from then, queued second copies at 800 ms.
    let mut tx = sr_timer(NakPolicy::PerFrame, RetransmitTimer::PerFrame);
    three_handed_newest_dropped(&mut tx, ms(300));
    assert_eq!(
        tx.poll_timeout(),
        Some(ms(700)),
        "frame 2's timer and the quiet period, both from the drop"
    );
    assert!(timeout_queued(&mut tx, ms(400)).is_empty());
    // no report at all: at 700 ms frame 2 is resent, and 0 and 1 are taken for dropped then
    assert_eq!(data_seqs(&timeout_queued(&mut tx, ms(700))), vec![2]);
    assert!(timeout_queued(&mut tx, ms(800)).is_empty());
    assert_eq!(data_seqs(&timeout_queued(&mut tx, ms(1100))), vec![0, 1]);
}

#[test]
fn sr_takes_a_late_copy_for_a_new_frame_so_it_needs_link_order() {
    // The premise of `Service::requires_fifo` for SR (review of session 35): with a window of
    // 127 in 256 numbers, a copy of frame 0 overtaken by three newer frames lands inside the
    // window as frame 256, and is later delivered in its place. A FIFO link (or mslld, which drops
    // late frames of such a scheme) never lets it arrive. This asserts the fault on purpose: if
    // SR is made to tolerate reordering, this test fails and `requires_fifo` may turn false.
    let mut rx = sr(NakPolicy::PerFrame);
    assert!(rx.requires_fifo());
    let mut got = Vec::new();
    for s in 0..=129u8 {
        got.extend(
            feed(&mut rx, ms(s as u64), data(s, 0))
                .packets
                .iter()
                .map(crate::testing::number_of),
        );
    }
    assert_eq!(got, (0..=129).collect::<Vec<u32>>());
    let stale = ArqFrame::Data {
        seq: 0,
        ack: 0,
        payload: numbered(1000, 8).into_bytes(),
    }
    .emit();
    assert!(feed(&mut rx, ms(200), stale).packets.is_empty());
    let mut later = Vec::new();
    for s in 130..=255u8 {
        later.extend(
            feed(&mut rx, ms(200 + s as u64), data(s, 0))
                .packets
                .iter()
                .map(crate::testing::number_of),
        );
    }
    assert_eq!(
        later.last(),
        Some(&1000),
        "the stale copy stands in for frame 256"
    );
}
