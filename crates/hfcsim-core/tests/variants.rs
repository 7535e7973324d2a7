//! Tahoe and NewReno as timed packet scripts, on the window of Cohen & Ramanathan's Fig. 16
//! (cwnd 8 in congestion avoidance, packets 11..18 outstanding, 11 and 14 lost). The test plays
//! the receiver; "ACK n" means the receiver expects packet n next.

mod common;

use common::{ack, sender_with_window_of_eight, sent, MSS};
use hfcsim_core::scenario::Variant;
use hfcsim_core::tcp::sender::{Out, Sender};

fn sender(variant: Variant) -> (Sender, Vec<Out>) {
    sender_with_window_of_eight(variant, 3)
}

#[test]
fn newreno_repairs_both_losses_in_one_recovery() {
    let (mut s, mut out) = sender(Variant::Newreno);
    // 12, 13, 15 arrive: three dupACKs -> fast retransmit 11, recover = 18, cwnd = 4 + 3.
    for t in 20..23 {
        ack(&mut s, &mut out, t, 11);
    }
    assert_eq!(sent(&mut out), vec![11]);
    assert_eq!((s.ssthresh, s.cwnd), (4 * MSS, 7 * MSS));
    // 16, 17, 18: cwnd 8, 9 (-> 19), 10 (-> 20).
    for t in 23..26 {
        ack(&mut s, &mut out, t, 11);
    }
    assert_eq!(sent(&mut out), vec![19, 20]);
    // RFC 6582 3.2 step 5, partial ACK 14 (below recover = 18): retransmit 14 at once, deflate by
    // the 3 packets acknowledged and add one back: 10 - 3 + 1 = 8; stay in recovery. 14..20 are 7
    // packets in flight, so cwnd 8 also lets the new 21 go.
    ack(&mut s, &mut out, 42, 14);
    assert_eq!(sent(&mut out), vec![14, 21]);
    assert_eq!(s.cwnd, 8 * MSS);
    // 19, 20 arrive: dupACKs 14 inflate (recovery continues): 9 -> 22, 10 -> 23.
    ack(&mut s, &mut out, 44, 14);
    ack(&mut s, &mut out, 45, 14);
    assert_eq!(sent(&mut out), vec![22, 23]);
    // Retransmitted 14 arrives: ACK 21 covers recover (18): a full ACK, cwnd = ssthresh = 4, then
    // slow start at cwnd == ssthresh adds one: 5. 21, 22, 23 are in flight: 24 and 25 go.
    ack(&mut s, &mut out, 64, 21);
    assert_eq!(s.cwnd, 5 * MSS);
    assert_eq!(sent(&mut out), vec![24, 25]);
    assert_eq!((s.stats.fast_retransmits, s.stats.timeouts), (1, 0));
}

#[test]
fn tahoe_goes_back_to_the_loss_with_a_window_of_one() {
    let (mut s, mut out) = sender(Variant::Tahoe);
    for t in 20..22 {
        ack(&mut s, &mut out, t, 11);
    }
    // Third dupACK: ssthresh 4, cwnd 1, snd_nxt back to 11: only 11 is sent.
    ack(&mut s, &mut out, 22, 11);
    assert_eq!(sent(&mut out), vec![11]);
    assert_eq!((s.ssthresh, s.cwnd, s.snd_nxt), (4 * MSS, MSS, 11 * MSS));
    // Later dupACKs do nothing for Tahoe.
    for t in 23..26 {
        ack(&mut s, &mut out, t, 11);
    }
    assert!(sent(&mut out).is_empty());
    // ACK 14 (12, 13 held): slow start cwnd 2, resend from 14: 14, 15.
    ack(&mut s, &mut out, 42, 14);
    assert_eq!(sent(&mut out), vec![14, 15]);
    // The receiver already holds 15..18: the retransmitted 14 draws ACK 19 and cwnd 3 sends 19, 20,
    // 21. The resent 15 is a duplicate there and draws one dupACK 19: below the threshold, nothing.
    ack(&mut s, &mut out, 62, 19);
    assert_eq!(sent(&mut out), vec![19, 20, 21]);
    ack(&mut s, &mut out, 63, 19);
    assert!(sent(&mut out).is_empty());
    assert_eq!((s.stats.fast_retransmits, s.stats.timeouts), (1, 0));
}

#[test]
fn tahoe_guard_blocks_fast_retransmits_for_duplicates_of_go_back_n() {
    // After go-back-N, duplicate segments at the receiver draw dupACKs for data the sender has in
    // fact already resent. With snd_una still at or below `recover`, three of them must not start
    // another fast retransmit (ns TcpAgent bug_fix_, RFC 6582 Sec. 4.1).
    let (mut s, mut out) = sender(Variant::Tahoe);
    for t in 20..23 {
        ack(&mut s, &mut out, t, 11);
    }
    sent(&mut out);
    // ACK 12 only (the receiver lost 12 too, say): cwnd 2, sends 12, 13.
    ack(&mut s, &mut out, 42, 12);
    assert_eq!(sent(&mut out), vec![12, 13]);
    // Three dupACKs for 12 while snd_una (12) <= recover (18): no new fast retransmit.
    for t in 43..46 {
        ack(&mut s, &mut out, t, 12);
    }
    assert!(sent(&mut out).is_empty());
    assert_eq!(s.stats.fast_retransmits, 1);
}
