//! Today's loss recovery (tcp/sender/today.rs) as packet scripts: the test plays the receiver and
//! hands the sender each ACK with its SACK blocks; packets are numbered from 1 (packet n is bytes
//! [(n-1)*MSS, n*MSS)). The timelines are worked in the comments from RFC 6675, RFC 6937,
//! RFC 8985 and RFC 3042.

mod common;

use common::{
    acks_2_3_then_sacks_of_4_and_4_5, fast_retransmits, linux_rules, sack_ack as ack, sent, started_iw10 as started,
    MS, MSS,
};
use hfcsim_core::scenario::CongestionControlKind;
use hfcsim_core::tcp::sender::SenderConfig;
use hfcsim_core::time::SimTime;

/// The linux stack's sender rules; RACK, TLP and PRR as asked.
fn linux(rack: bool, tlp: bool, prr: bool) -> SenderConfig {
    let mut cfg = linux_rules();
    cfg.rack = rack;
    cfg.tlp = tlp;
    cfg.prr = prr;
    cfg
}

#[test]
fn rack_marks_the_hole_on_the_third_sack_and_limited_transmit_sends_on_the_first_two() {
    // IW 10 all sent at 0 ms; packet 3 is lost. At 100 ms packets 1 and 2 are ACKed (RTT and
    // min_RTT 100 ms; slow start by the bytes acknowledged: cwnd 12, so 11..14 go out). Then ACKs
    // SACK 4, 4-5, 4-6.
    let (mut s, mut out) = started(linux(true, false, false), 100);
    ack(&mut s, &mut out, 100, 2, &[]);
    ack(&mut s, &mut out, 100, 3, &[]);
    assert_eq!(sent(&mut out), vec![11, 12, 13, 14]);
    // SACK of 4 at 101 ms: RACK.xmit_ts = 0 (packet 4's send; ties go to the higher sequence),
    // RACK.rtt = 101 ms. No reordering seen, not in recovery, 1 segment SACKed (< DupThresh 3):
    // reo_wnd = min_RTT / 4 = 25 ms, so packet 3 (sent at 0) is lost at 0 + 101 + 25 = 126 ms:
    // not yet; the reordering timer is set for then.
    // RFC 3042 / Linux's pipe: packet 4 has left the network, so one new packet goes: 15.
    ack(&mut s, &mut out, 101, 3, &[(4, 4)]);
    assert_eq!(sent(&mut out), vec![15]);
    assert_eq!(s.next_deadline(), Some(SimTime(126 * MS)));
    ack(&mut s, &mut out, 102, 3, &[(4, 5)]);
    assert_eq!(sent(&mut out), vec![16]);
    assert_eq!(fast_retransmits(&out), 0);
    // SACK of 4-6: three segments SACKed: reo_wnd = 0, and packet 3 is lost (0 + RACK.rtt 103 <=
    // 103). Recovery: ssthresh = 12 / 2 = 6 segments (Reno with
    // Linux's halving); RFC 6675 (4.3) resends 3 at once.
    ack(&mut s, &mut out, 103, 3, &[(4, 6)]);
    assert_eq!(fast_retransmits(&out), 1);
    assert_eq!(sent(&mut out), vec![3]);
    assert_eq!(s.ssthresh, 6 * MSS);
}

#[test]
fn without_rack_the_third_duplicate_ack_marks_the_hole() {
    // RFC 6675 with DupThresh 3 and no RACK: the SACK of 4 and of 4-5 leave 3 unmarked (IsLost
    // needs 3 SACKed segments above it); the third marks it, whatever the time.
    let (mut s, mut out) = started(linux(false, false, false), 100);
    ack(&mut s, &mut out, 100, 2, &[]);
    ack(&mut s, &mut out, 100, 3, &[]);
    sent(&mut out);
    ack(&mut s, &mut out, 101, 3, &[(4, 4)]);
    ack(&mut s, &mut out, 102, 3, &[(4, 5)]);
    assert_eq!(sent(&mut out), vec![15, 16]); // Limited Transmit
                                              // Only the RTO, restarted by the last new ACK at 100 ms: srtt 100 + the 200 ms variance floor.
    assert_eq!(s.next_deadline(), Some(SimTime(400 * MS)));
    ack(&mut s, &mut out, 103, 3, &[(4, 6)]);
    assert_eq!(sent(&mut out), vec![3]);
}

#[test]
fn prr_spreads_the_reduction_over_the_acks() {
    // RFC 6937 3, PRR-SSRB. Packet 11 lost out of a flight of 11..30 (cwnd 20, all sent at 100
    // ms after 1..10 were ACKed and cwnd grew to 20). The SACKs of 12 and 12-13 release 31 and 32
    // (Limited Transmit); the SACK of 12-14 marks 11 lost (reo_wnd 0 with 3 SACKed): recovery,
    // ssthresh 10, RecoverFS = snd.nxt - snd.una = 22 segments, pipe = 22 - 3 SACKed - 1 lost + 1
    // resent = 19 > ssthresh. Each later ACK SACKs one more segment (DeliveredData 1): the
    // proportional part, sndcnt = ceil(prr_delivered x ssthresh / RecoverFS) - prr_out, sends
    // about one packet for every two delivered: the window falls towards 10 at the rate of
    // delivery, not in one step.
    let (mut s, mut out) = started(linux(true, false, true), 1000);
    for n in 2..=11 {
        ack(&mut s, &mut out, 100, n, &[]);
    }
    assert_eq!(sent(&mut out), (11..=30).collect::<Vec<_>>());
    assert_eq!(s.cwnd, 20 * MSS);
    ack(&mut s, &mut out, 201, 11, &[(12, 12)]);
    ack(&mut s, &mut out, 202, 11, &[(12, 13)]);
    assert_eq!(sent(&mut out), vec![31, 32]); // Limited Transmit
    ack(&mut s, &mut out, 203, 11, &[(12, 14)]);
    assert_eq!(fast_retransmits(&out), 1);
    // PRR starts at this ACK with DeliveredData = 1: sndcnt = ceil(1 x 10 / 22) - 1 (the fast
    // retransmission of 11 counts in prr_out) = 0; the fast retransmission itself went out.
    assert_eq!(sent(&mut out), vec![11]);
    let mut sends = Vec::new();
    for (i, t) in (204..=215).enumerate() {
        ack(&mut s, &mut out, t, 11, &[(12, 15 + i as u64)]);
        sends.push(sent(&mut out).len());
    }
    // The k-th ACK after it: sndcnt = ceil((1 + k) x 10 / 22) - prr_out, prr_out counting the
    // packets sent: 1 - 1, 2 - 1, 2 - 2, 3 - 2, 3 - 3, 4 - 3, 4 - 4, 5 - 4, 5 - 5, 5 - 5 (110 / 22
    // is exactly 5), 6 - 5, 6 - 6. Ten segments for 22 delivered, as the reduction asks.
    assert_eq!(sends, vec![0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0]);
}

#[test]
fn a_tail_loss_is_probed_after_two_srtts() {
    // 10 packets to send, all in IW 10; packets 9 and 10 are lost. ACKs for 1..8 arrive at 100-107
    // ms (RTT 100 ms: srtt converges near 100 ms). No more ACKs: the RTO would fire at 107 + 300
    // = 407 ms (srtt + the 200 ms variance floor), but the probe fires 2 x srtt after the last ACK.
    let (mut s, mut out) = started(linux(true, true, false), 10);
    for n in 2..=9 {
        ack(&mut s, &mut out, 100 + n - 2, n, &[]);
    }
    assert!(sent(&mut out).is_empty());
    let srtt = s.rto.srtt().unwrap();
    let probe = SimTime(107 * MS + 2 * srtt);
    assert_eq!(s.next_deadline(), Some(probe));
    assert!(probe < SimTime(407 * MS));
    // RFC 8985 7.3: no new data, so the highest segment, 10, is resent.
    s.on_timer(probe, &mut out);
    assert_eq!(sent(&mut out), vec![10]);
    assert_eq!(s.stats.timeouts, 0);
    // Its ACK SACKs 10, 101 ms later (a retransmission acknowledged sooner than min_RTT after
    // it was resent may be the original's ACK, RFC 8985 6.2 step 2, and does not count): RACK
    // marks 9 lost (sent at 0 ms, long before) and recovery resends it; no RTO was needed.
    let t = probe.0 / MS + 101;
    ack(&mut s, &mut out, t, 9, &[(10, 10)]);
    assert_eq!(sent(&mut out), vec![9]);
    ack(&mut s, &mut out, t + 100, 11, &[]);
    assert!(s.is_done());
    assert_eq!(s.stats.timeouts, 0);
}

#[test]
fn rack_waits_out_reordering_once_it_has_seen_some() {
    // IW 10 sent at 0 ms. Packet 3 is delayed behind 4 and 5: they are SACKed at 101 and 102 ms
    // (2 SACKed, under DupThresh: reo_wnd = min_RTT / 4 = 25 ms, no retransmission yet), then 3
    // arrives at 103 ms. It was never retransmitted and lies below the highest delivered
    // (RACK.fack): reordering seen (RFC 8985 6.2 step 3).
    let (mut s, mut out) = started(linux(true, false, false), 1000);
    acks_2_3_then_sacks_of_4_and_4_5(&mut s, &mut out);
    ack(&mut s, &mut out, 103, 6, &[]);
    assert_eq!(fast_retransmits(&out), 0);
    out.clear();
    // The next packet to be acknowledged is delayed behind three others. Without reordering
    // seen, three SACKed segments make reo_wnd 0 and RACK would resend it at once (as three
    // duplicate ACKs would); now reo_wnd stays min_RTT / 4 and the packet's own ACK comes first.
    let first = s.snd_una / MSS + 1;
    ack(&mut s, &mut out, 104, first, &[(first + 1, first + 1)]);
    ack(&mut s, &mut out, 105, first, &[(first + 1, first + 2)]);
    ack(&mut s, &mut out, 106, first, &[(first + 1, first + 3)]);
    assert_eq!(fast_retransmits(&out), 0);
    assert!(sent(&mut out).iter().all(|&p| p > first));
    ack(&mut s, &mut out, 107, first + 4, &[]);
    assert_eq!(s.stats.retransmitted_segments, 0);
}

#[test]
fn without_reordering_seen_three_sacks_resend_at_once() {
    // The same second episode on a fresh connection: reo_wnd 0, the third SACK resends.
    let (mut s, mut out) = started(linux(true, false, false), 1000);
    ack(&mut s, &mut out, 100, 2, &[]);
    ack(&mut s, &mut out, 101, 2, &[(3, 3)]);
    ack(&mut s, &mut out, 102, 2, &[(3, 4)]);
    ack(&mut s, &mut out, 103, 2, &[(3, 5)]);
    assert_eq!(fast_retransmits(&out), 1);
}

#[test]
fn cubic_after_the_recovery() {
    // The controller is a hook: with CUBIC the recovery's ssthresh is 0.7 cwnd (RFC 9438 4.6),
    // 12 x 0.7 = 8 segments, where Reno gives 6 (the first test).
    let mut cfg = linux(true, false, false);
    cfg.congestion_control = CongestionControlKind::Cubic;
    let (mut s, mut out) = started(cfg, 100);
    acks_2_3_then_sacks_of_4_and_4_5(&mut s, &mut out);
    ack(&mut s, &mut out, 103, 3, &[(4, 6)]);
    assert_eq!(fast_retransmits(&out), 1);
    assert_eq!(s.ssthresh, 8 * MSS);
}
