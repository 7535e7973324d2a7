//! Claim C-sfr-example (Cohen & Ramanathan Sec. VI.D, Fig. 16): with a window of eight
//! packets and packets 11 and 14 lost, Reno with three dupACKs recovers 11 by fast retransmit
//! but gets only two dupACKs for 14 and times out; "super fast retransmit" (one dupACK)
//! recovers both without a timeout.
//!
//! A timed packet script (smoltcp's `test_delayed_ack` shape): the test plays the receiver and
//! hands the sender each ACK at an explicit time. Packets are numbered from 1 as in the paper;
//! packet n is bytes [(n-1)*MSS, n*MSS).

mod common;

use common::{ack, sent, MSS};
use hfcsim_core::scenario::Variant;
use hfcsim_core::tcp::sender::{Out, Sender};
use hfcsim_core::{run, RunOptions};

/// Fig. 16's sender: Reno with cwnd 8, 11..18 just sent.
fn sender_with_window_of_eight(dupack_threshold: u32) -> (Sender, Vec<Out>) {
    common::sender_with_window_of_eight(Variant::Reno, dupack_threshold)
}

#[test]
fn reno_three_dupacks_times_out_on_packet_14() {
    let (mut s, mut out) = sender_with_window_of_eight(3);
    // 12 and 13 arrive: dupACKs 1 and 2 for 11.
    ack(&mut s, &mut out, 20, 11);
    ack(&mut s, &mut out, 21, 11);
    assert!(sent(&mut out).is_empty());
    // 15 arrives: third dupACK -> fast retransmit 11; ssthresh = 8/2 = 4, cwnd = 4 + 3 = 7.
    ack(&mut s, &mut out, 22, 11);
    assert_eq!(sent(&mut out), vec![11]);
    assert_eq!((s.ssthresh, s.cwnd), (4 * MSS, 7 * MSS));
    // 16, 17, 18 arrive: cwnd 8 (8 outstanding: nothing), 9 -> send 19, 10 -> send 20.
    ack(&mut s, &mut out, 23, 11);
    assert!(sent(&mut out).is_empty());
    ack(&mut s, &mut out, 24, 11);
    assert_eq!(sent(&mut out), vec![19]);
    ack(&mut s, &mut out, 25, 11);
    assert_eq!(sent(&mut out), vec![20]);
    // Retransmitted 11 arrives: ACK 14 (12, 13 held). Recovery ends, cwnd deflates to
    // ssthresh = 4, then opens by a whole segment because Net/3 is still in slow start while
    // cwnd <= ssthresh: 5. 14..20 = 7 packets outstanding, so nothing is sent.
    ack(&mut s, &mut out, 42, 14);
    assert!(sent(&mut out).is_empty());
    assert_eq!(s.cwnd, 5 * MSS);
    // 19 and 20 arrive: only two dupACKs for 14 -> no fast retransmit.
    ack(&mut s, &mut out, 44, 14);
    ack(&mut s, &mut out, 45, 14);
    assert!(sent(&mut out).is_empty());
    assert_eq!(s.stats.fast_retransmits, 1);
    // Only the retransmission timer recovers 14.
    let deadline = s.next_deadline().expect("the retransmission timer is running");
    s.on_timer(deadline, &mut out);
    assert_eq!(sent(&mut out), vec![14]);
    assert_eq!(s.stats.timeouts, 1);
    assert_eq!(s.cwnd, MSS);
}

#[test]
fn super_fast_retransmit_recovers_11_and_14_without_timeout() {
    let (mut s, mut out) = sender_with_window_of_eight(1);
    // 12 arrives: the first dupACK retransmits 11; cwnd = 4 + 1 = 5.
    ack(&mut s, &mut out, 20, 11);
    assert_eq!(sent(&mut out), vec![11]);
    assert_eq!(s.cwnd, 5 * MSS);
    // 13, 15, 16 arrive: cwnd 6, 7, 8 with 8 outstanding: nothing new.
    for t in 21..24 {
        ack(&mut s, &mut out, t, 11);
    }
    assert!(sent(&mut out).is_empty());
    // 17, 18 arrive: cwnd 9 -> 19, cwnd 10 -> 20.
    ack(&mut s, &mut out, 24, 11);
    ack(&mut s, &mut out, 25, 11);
    assert_eq!(sent(&mut out), vec![19, 20]);
    // Retransmitted 11 arrives: ACK 14; cwnd = 4, + 1 (slow start at cwnd == ssthresh) = 5.
    ack(&mut s, &mut out, 42, 14);
    assert_eq!(s.cwnd, 5 * MSS);
    assert!(sent(&mut out).is_empty());
    // 19 arrives: the first dupACK for 14 retransmits it at once.
    ack(&mut s, &mut out, 44, 14);
    assert_eq!(sent(&mut out), vec![14]);
    // ssthresh = max(5 / 2, 2) = 2 packets (whole segments); cwnd = 2 + 1.
    assert_eq!((s.ssthresh, s.cwnd), (2 * MSS, 3 * MSS));
    // 20 arrives: cwnd 4; retransmitted 14 arrives: everything up to 20 acknowledged.
    ack(&mut s, &mut out, 45, 14);
    ack(&mut s, &mut out, 66, 21);
    assert_eq!(s.snd_una, 20 * MSS);
    assert_eq!(s.stats.fast_retransmits, 2);
    assert_eq!(s.stats.timeouts, 0);
    // Leaving recovery: cwnd = ssthresh = 2, + 1 (slow start) = 3: new data 21, 22, 23.
    assert_eq!(s.cwnd, 3 * MSS);
    assert_eq!(sent(&mut out), vec![21, 22, 23]);
}

/// The same mechanism end to end on the HFC network: a 12-segment window, packets 11 and 14
/// dropped on the downstream channel.
#[test]
fn end_to_end_on_the_hfc_network() {
    let outcome = |threshold: u32| {
        let mut sc = common::hfc(12, 30 * MSS);
        sc.tcp.dupack_threshold = threshold;
        sc.flows[0].drop_packets = vec![11, 14];
        let f = run(&sc, 1, RunOptions::default()).flows.remove(0);
        assert!(f.finished);
        assert_eq!(f.data_lost_downstream, 2);
        (f.timeouts, f.fast_retransmits)
    };
    assert_eq!(outcome(3), (1, 1));
    assert_eq!(outcome(1), (0, 2));
}
