//! Linux's recovery without SACK (`tcp.reno_reordering`) and F-RTO (`tcp.frto`) as packet
//! scripts: the test plays the receiver and hands the sender each ACK; packets are numbered from 1
//! (packet n is bytes [(n-1)*MSS, n*MSS)), and "ACK n" expects packet n next. The sender is the
//! linux stack's without SACK (NewReno, IW 10, byte counting, Limited Transmit, no PRR, Linux's
//! timer: 200 ms minimum, 1 s initial RTO), behind a receive window of 5 packets, the issue's
//! 5 x 1460 B. No ACK here gives an RTT sample before the timeouts (each covers a retransmission,
//! Karn), so the RTO stays at its initial 1 s. Each timeline is worked in its comments from
//! net/ipv4/tcp_input.c and tcp_recovery.c (Linux 6.x) and RFC 5682.

mod common;

use common::{sent, MS, MSS};
use hfcsim_core::scenario::Variant;
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Action, Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;

const WND: u64 = 5 * MSS;

fn linux_reno(reno_reordering: bool, frto: bool) -> SenderConfig {
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.variant = Variant::Newreno;
    cfg.recover_guard = true;
    cfg.initial_window = 10;
    cfg.limited_transmit = true;
    cfg.byte_counting = true;
    cfg.repeat_timeout_holds_ssthresh = true;
    cfg.reno_reordering = reno_reordering;
    cfg.frto = frto;
    cfg
}

/// A sender of 100 packets that has sent 1..=5 at 0 ms (IW 10, the window 5).
fn started(cfg: SenderConfig) -> (Sender, Vec<Out>) {
    let mut s = Sender::new(cfg, 100 * MSS, None, Rto::linux(200 * MS, 1000 * MS));
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(sent(&mut out), vec![1, 2, 3, 4, 5]);
    (s, out)
}

/// "ACK `next`" at `t_ms`, the window unchanged.
fn ack(s: &mut Sender, out: &mut Vec<Out>, t_ms: u64, next: u64) {
    s.on_ack(SimTime(t_ms * MS), (next - 1) * MSS, WND, out);
}

fn count(out: &[Out], f: fn(&Action) -> bool) -> usize {
    out.iter().filter(|o| f(&o.action)).count()
}

fn fast_retransmits(out: &[Out]) -> usize {
    count(out, |a| matches!(a, Action::FastRetransmit { .. }))
}

fn timeouts(out: &[Out]) -> usize {
    count(out, |a| matches!(a, Action::Timeout { .. }))
}

/// Packet 1 lost of 1..=5: the dupACKs of 2, 3 and 4 at 100-102 ms start recovery (sacked_out
/// 3 >= the degree 3: tcp_newreno_mark_lost), packet 1 is resent; ssthresh = cwnd 10 / 2 = 5 and
/// cwnd = 5 (no PRR). The recovery point is the end of packet 5. The dupACK of 5 at 103 ms.
fn recovering_packet_1(s: &mut Sender, out: &mut Vec<Out>) {
    ack(s, out, 100, 1);
    ack(s, out, 101, 1);
    assert_eq!(fast_retransmits(out), 0);
    ack(s, out, 102, 1);
    assert_eq!(fast_retransmits(out), 1);
    assert_eq!(sent(out), vec![1]);
    assert_eq!((s.cwnd, s.ssthresh), (5 * MSS, 5 * MSS));
    ack(s, out, 103, 1);
    assert_eq!(sent(out), Vec::<u64>::new());
}

#[test]
fn a_hole_at_the_recovery_point_waits_for_the_rto() {
    for rule in [false, true] {
        let (mut s, mut out) = started(linux_reno(rule, false));
        recovering_packet_1(&mut s, &mut out);
        // ACK 6 at 200 ms (the resent 1 arrived): snd_una is exactly the recovery point. The
        // window now reaches 10: packets 6..=10 go out (cwnd 5, nothing else in flight).
        ack(&mut s, &mut out, 200, 6);
        assert_eq!(sent(&mut out), vec![6, 7, 8, 9, 10]);
        // Packet 6 is lost: the dupACKs of 7..=10 at 300-303 ms.
        for t in 300..304 {
            ack(&mut s, &mut out, t, 6);
        }
        if rule {
            // Linux holds Recovery while snd_una == high_seq without SACK
            // (tcp_is_non_sack_preventing_reopen) and counts no dupACK there: nothing is resent
            // until the RTO, restarted by ACK 6 at 200 ms: 200 + 1000 = 1200 ms.
            assert_eq!(fast_retransmits(&out), 0);
            assert_eq!(sent(&mut out), Vec::<u64>::new());
            assert_eq!(s.next_deadline(), Some(SimTime(1200 * MS)));
            s.on_timer(SimTime(1200 * MS), &mut out);
            assert_eq!(timeouts(&out), 1);
            assert_eq!(sent(&mut out), vec![6]);
        } else {
            // RFC 6675 5 (A): recovery ended at ACK 6; the third dupACK (302 ms) starts another.
            assert_eq!(fast_retransmits(&out), 1);
            assert_eq!(timeouts(&out), 0);
            assert_eq!(sent(&mut out), vec![6]);
        }
    }
}

#[test]
fn more_dupacks_than_segments_out_raise_the_reordering_degree() {
    for rule in [false, true] {
        let (mut s, mut out) = started(linux_reno(rule, false));
        recovering_packet_1(&mut s, &mut out);
        // A fifth dupACK at 104 ms (packet 5 duplicated on the way, say): 5 segments out, 1 hole
        // (packet 1, deemed lost), so sacked_out is at most 5 - 1 = 4 and this one is one too
        // many: tcp_check_reno_reordering takes it for reordering, and the degree becomes
        // packets_out = 5 (tcp_limit_reno_sacked keeps sacked_out at 4).
        ack(&mut s, &mut out, 104, 1);
        assert_eq!(sent(&mut out), Vec::<u64>::new());
        // ACK 6 at 200 ms (held at the recovery point) sends 6..=10; ACK 7 at 300 ms passes the
        // point: recovery ends with cwnd = ssthresh = 5, and 11 goes out.
        ack(&mut s, &mut out, 200, 6);
        assert_eq!(sent(&mut out), vec![6, 7, 8, 9, 10]);
        ack(&mut s, &mut out, 300, 7);
        assert_eq!(sent(&mut out), vec![11]);
        // ACK 8 at 301 ms; packet 8 is lost: 8..=12 may be out (12 goes at once), and the dupACKs
        // of 9..=12 at 302-305 ms are all there can be: 4 < the degree 5.
        ack(&mut s, &mut out, 301, 8);
        assert_eq!(sent(&mut out), vec![12]);
        for t in 302..306 {
            ack(&mut s, &mut out, t, 8);
        }
        if !rule {
            // Three consecutive dupACKs (tcp.dupack_threshold): fast retransmit at 304 ms.
            assert_eq!(fast_retransmits(&out), 1);
            assert_eq!(sent(&mut out), vec![8]);
            continue;
        }
        assert_eq!(fast_retransmits(&out), 0);
        assert_eq!(sent(&mut out), Vec::<u64>::new());
        // So the RTO, at 601.125 ms: 300.125 ms after ACK 8 at 301 ms, Linux's timer after the
        // samples of ACKs 7 and 8 (100 and 101 ms: srtt 100.125 ms, and the 200 ms floor of
        // the variance term). It is taken in Disorder with sacked_out 4 >= tcp_reordering 3:
        // tcp_enter_loss brings the degree back to 3. Packet 8 is resent (cwnd 1, ssthresh =
        // 5 / 2 = 2).
        assert_eq!(s.next_deadline(), Some(SimTime(601_125_000)));
        s.on_timer(SimTime(601_125_000), &mut out);
        assert_eq!(timeouts(&out), 1);
        assert_eq!(sent(&mut out), vec![8]);
        // ACK 13 at 700 ms: 8..=12 arrived, snd_una reaches the recovery point (the end of 12).
        // Of the 5 packets acknowledged one takes slow start to ssthresh 2 and the
        // other 4 go to congestion avoidance (tcp_slow_start's leftover; tcp_cong_avoid_ai: 4 / 2
        // = +2): cwnd 4, and 13..=16 go out.
        ack(&mut s, &mut out, 700, 13);
        assert_eq!(s.cwnd, 4 * MSS);
        assert_eq!(sent(&mut out), vec![13, 14, 15, 16]);
        // snd_una is exactly the recovery point: the loss state is held (nothing counted, nothing
        // marked) until ACK 14 at 701 ms passes it. cwnd 4 (+1/4), the window 14..=18: 17 goes.
        ack(&mut s, &mut out, 701, 14);
        assert_eq!(sent(&mut out), vec![17]);
        // Packet 14 is lost: the dupACKs of 15, 16 and 17 at 702-704 ms (the first sends 18, the
        // last the window allows). With the degree back at 3, the third starts recovery; at 5 it
        // would have waited for the RTO again.
        for t in 702..705 {
            ack(&mut s, &mut out, t, 14);
        }
        assert_eq!(fast_retransmits(&out), 1);
        assert_eq!(sent(&mut out), vec![18, 14]);
    }
}

#[test]
fn frto_undoes_a_spurious_timeout() {
    // The same with SACK on (no block is sent: nothing is out of order): F-RTO's SACK-enhanced
    // variant reads the cumulative ACK alike.
    for (rule, sack) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut cfg = linux_reno(true, rule);
        cfg.sack = sack;
        let (mut s, mut out) = started(cfg);
        // No ACK for 1 s: the RTO resends 1, cwnd 1, ssthresh = 10 / 2 = 5.
        s.on_timer(SimTime(1000 * MS), &mut out);
        assert_eq!(sent(&mut out), vec![1]);
        assert_eq!((s.cwnd, s.ssthresh), (MSS, 5 * MSS));
        // ACK 2 at 1100 ms: the ACK of the original 1, late (the sender cannot tell). Slow start:
        // cwnd 2. 2..=5 are deemed lost.
        ack(&mut s, &mut out, 1100, 2);
        if !rule {
            // The conventional recovery resends 2 and 3, which the receiver has.
            assert_eq!(sent(&mut out), vec![2, 3]);
            continue;
        }
        // F-RTO step 2.b: the recovery point moves to the end of 5 and new data goes instead:
        // the window (2..=6) leaves room for 6 only.
        assert_eq!(sent(&mut out), vec![6]);
        // ACK 3 at 1101 ms acknowledges 2, never retransmitted, below the recovery point
        // (FLAG_ORIG_SACK_ACKED): the timeout was spurious. The undo: nothing deemed lost, cwnd
        // back to 10 and ssthresh to its value before (slow start's, 65535 << 14); the window
        // (3..=7) lets 7 go.
        ack(&mut s, &mut out, 1101, 3);
        assert_eq!((s.cwnd, s.ssthresh), (10 * MSS, 65_535 << 14));
        assert_eq!(sent(&mut out), vec![7]);
        assert_eq!(timeouts(&out), 0);
    }
}

#[test]
fn frto_after_a_real_loss_resends_on_the_duplicate_ack() {
    for rule in [false, true] {
        let (mut s, mut out) = started(linux_reno(true, rule));
        // Packets 1..=3 lost; the dupACKs of 4 and 5 at 100 and 101 ms are too few. The RTO at
        // 1000 ms resends 1 (cwnd 1, ssthresh 5).
        ack(&mut s, &mut out, 100, 1);
        ack(&mut s, &mut out, 101, 1);
        s.on_timer(SimTime(1000 * MS), &mut out);
        assert_eq!(sent(&mut out), vec![1]);
        // ACK 2 at 1100 ms: cwnd 2.
        ack(&mut s, &mut out, 1100, 2);
        if !rule {
            assert_eq!(sent(&mut out), vec![2, 3]);
            continue;
        }
        // F-RTO: new data first, 6 (the window ends there).
        assert_eq!(sent(&mut out), vec![6]);
        // The dupACK of 6 at 1200 ms (step 3.a): the loss was real. F-RTO ends; the dupACK
        // counts (new data beyond the recovery point was sent: tcp_process_loss), so what is in
        // flight is 5 out - 4 lost - 1 = 0 and cwnd 2 resends 2 and 3.
        ack(&mut s, &mut out, 1200, 2);
        assert_eq!(sent(&mut out), vec![2, 3]);
        assert_eq!((s.cwnd, s.ssthresh), (2 * MSS, 5 * MSS));
    }
}
