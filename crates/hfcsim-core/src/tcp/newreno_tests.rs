//! NewReno (RFC 6582) with the RFC 6298 timer as packet scripts: each step at an explicit time,
//! the RFC's rule beside it (docs/design.md, habits 5 and 6). Issue 10, item 3: hfcsim against ns-3.44's
//! TcpNewReno + TcpClassicRecovery (docs/ns3-newreno.md).

use super::rto::Rto;
use super::sender::{Action, Out, Sender, SenderConfig};
use crate::scenario::Variant;
use crate::time::SimTime;

const MSS: u64 = 1460;
const MS: u64 = 1_000_000;
/// Cohen's matched window: 8192-byte buffers rounded up to 6 segments.
const WND: u64 = 6 * MSS;

/// The one place a test builds a SenderConfig: Cohen's defaults with NewReno.
fn newreno_config() -> SenderConfig {
    let mut c = SenderConfig::reno(MSS, WND);
    c.variant = Variant::Newreno;
    c.recover_guard = true;
    c
}

fn at(ms: u64) -> SimTime {
    SimTime(ms * MS)
}

/// Packet numbers (from 1) of the segments in `out`; clears `out`.
fn sent(out: &mut Vec<Out>) -> Vec<u64> {
    let v = out
        .iter()
        .filter_map(|o| match o.action {
            Action::Segment { seq, .. } => Some(seq / MSS + 1),
            _ => None,
        })
        .collect();
    out.clear();
    v
}

/// The receiver's cumulative "ACK n" (it expects packet n next) arrives at `ms`.
fn ack(s: &mut Sender, out: &mut Vec<Out>, ms: u64, packet: u64) {
    s.on_ack(at(ms), (packet - 1) * MSS, WND, out);
}

/// A sender with RFC 6298 timers (min RTO 1 s, no RTT sample yet: RTO = 1 s, RFC 6298 (2.1))
/// that has just sent packets 1..6 at t = 0 with a 6-segment window.
fn sender_with_six_out() -> (Sender, Vec<Out>) {
    let mut s = Sender::new(newreno_config(), 100 * MSS, None, Rto::rfc6298(1000 * MS));
    let mut out = vec![];
    s.establish(at(0), WND, &mut out); // IW 1: packet 1
    s.cwnd = WND;
    s.output(at(0), &mut out);
    assert_eq!(sent(&mut out), (1..=6).collect::<Vec<_>>());
    (s, out)
}

#[test]
fn only_the_first_partial_ack_resets_the_retransmit_timer() {
    // Packets 1, 3 and 5 of the window 1..6 are lost; 2, 4 and 6 arrive and draw "ACK 1" x 3.
    let (mut s, mut out) = sender_with_six_out();
    for t in [100, 101, 102] {
        ack(&mut s, &mut out, t, 1);
    }
    // RFC 6582 3.2 step 2: the third duplicate ACK covers more than recover (none yet), so
    // recover = 6 and fast retransmit: packet 1 again, ssthresh = 3, cwnd = 3 + 3 = 6 segments.
    // The timer restarts with the retransmission, for RTO = 1 s (no sample was taken: the timed
    // segment, 1, was retransmitted; Karn).
    assert_eq!(sent(&mut out), vec![1]);
    assert_eq!(s.next_deadline(), Some(at(1102)));
    // RFC 6582 3.2 step 3, partial ACK ("ACK 3" does not cover recover): retransmit packet 3,
    // deflate cwnd by the 2 segments acknowledged and add one back (5), send new data if cwnd
    // allows (7); and "for the first partial ACK that arrives during fast recovery, also reset
    // the retransmit timer": 600 + 1000 ms.
    ack(&mut s, &mut out, 600, 3);
    assert_eq!(sent(&mut out), vec![3, 7]);
    assert_eq!(s.next_deadline(), Some(at(1600)));
    // The second partial ACK ("ACK 5") retransmits packet 5 (cwnd 5 - 2 + 1 = 4, room for 8)
    // but leaves the timer alone: the RFC's "Impatient" variant. Resetting on every partial
    // ACK ("Slow-but-Steady") would move it to 2200 ms. ns-3.44 does the same
    // (TcpSocketBase::ProcessAck calls NewAck(ack, m_isFirstPartialAck)).
    ack(&mut s, &mut out, 1200, 5);
    assert_eq!(sent(&mut out), vec![5, 8]);
    assert_eq!(s.next_deadline(), Some(at(1600)));
    // At 1600 ms the timer expires: RFC 6298 (5.4) retransmit the earliest unacknowledged
    // segment (5), (5.5) back the RTO off to 2 s, (5.6) restart the timer.
    s.on_timer(at(1599), &mut out);
    assert!(out.is_empty());
    s.on_timer(at(1600), &mut out);
    assert!(out.iter().any(|o| o.action == Action::Timeout { seq: 4 * MSS }));
    assert_eq!(sent(&mut out), vec![5]);
    assert_eq!(s.stats.timeouts, 1);
    assert_eq!(s.next_deadline(), Some(at(3600)));
}

#[test]
fn each_fast_recovery_has_its_own_first_partial_ack() {
    // First recovery: packets 1 and 3 of 1..6 lost; 2, 4, 5 draw "ACK 1" x 3 -> fast
    // retransmit of 1, recover = 6.
    let (mut s, mut out) = sender_with_six_out();
    for t in [100, 101, 102] {
        ack(&mut s, &mut out, t, 1);
    }
    assert_eq!(sent(&mut out), vec![1]);
    // Its first partial ACK resets the timer (200 + 1000 ms) and retransmits 3 (cwnd 5: and 7).
    ack(&mut s, &mut out, 200, 3);
    assert_eq!(sent(&mut out), vec![3, 7]);
    assert_eq!(s.next_deadline(), Some(at(1200)));
    // Full ACK ("ACK 8" covers recover): RFC 6582 3.2 step 3, cwnd = ssthresh = 3 segments,
    // exit fast recovery; Net/3 slow start while cwnd <= ssthresh opens it to 4: 8..11.
    ack(&mut s, &mut out, 300, 8);
    assert_eq!(sent(&mut out), vec![8, 9, 10, 11]);
    s.cwnd = WND; // as if congestion avoidance had opened the window again: 12, 13
    s.output(at(300), &mut out);
    assert_eq!(sent(&mut out), vec![12, 13]);
    // Second recovery: 8 and 10 lost; 9, 11, 12 draw "ACK 8" x 3, which covers more than
    // recover = 6 (RFC 6582 3.2 step 2): fast retransmit of 8, recover = 13.
    for t in [400, 401, 402] {
        ack(&mut s, &mut out, t, 8);
    }
    assert_eq!(sent(&mut out), vec![8]);
    assert_eq!(s.next_deadline(), Some(at(1402)));
    // This recovery's first partial ACK resets the timer again (600 + 1000 ms): the "first
    // partial ACK" is counted per fast recovery, not per connection.
    ack(&mut s, &mut out, 600, 10);
    assert_eq!(sent(&mut out), vec![10, 14]);
    assert_eq!(s.next_deadline(), Some(at(1600)));
}

#[test]
fn a_repeated_timeout_of_one_segment_holds_ssthresh_per_rfc_5681() {
    // 1..6 sent, nothing comes back. First timeout (RTO 1 s): ssthresh = max(min(6, 6) / 2, 2)
    // = 3 segments, cwnd 1, packet 1 again. Second timeout of packet 1 (RTO 2 s): RFC 5681 3.1
    // holds ssthresh at 3; BSD's tcp_timers halves min(snd_wnd, cwnd = 1) / 2 -> the 2-segment
    // floor.
    for (holds, second) in [(true, 3 * MSS), (false, 2 * MSS)] {
        let mut cfg = newreno_config();
        cfg.repeat_timeout_holds_ssthresh = holds;
        let mut s = Sender::new(cfg, 100 * MSS, None, Rto::rfc6298(1000 * MS));
        let mut out = vec![];
        s.establish(at(0), WND, &mut out);
        s.cwnd = WND;
        s.output(at(0), &mut out);
        assert_eq!(sent(&mut out), (1..=6).collect::<Vec<_>>());
        s.on_timer(at(1000), &mut out);
        assert_eq!((sent(&mut out), s.ssthresh, s.cwnd), (vec![1], 3 * MSS, MSS));
        assert_eq!(s.next_deadline(), Some(at(3000)));
        s.on_timer(at(3000), &mut out);
        assert_eq!((sent(&mut out), s.ssthresh), (vec![1], second));
    }
}
