//! D-SACK (`tcp.dsack`), Linux's undo of spurious recoveries (`tcp.undo`) and RACK's reordering
//! window growing with D-SACK (`tcp.rack_reo_wnd_dsack`) as packet scripts. The receiver scripts
//! hand the receiver data segments of 1000 B; the sender scripts play the receiver and hand the
//! sender each ACK with its SACK blocks, packets numbered from 1 (packet n is bytes
//! [(n-1)*MSS, n*MSS)), "ACK n" expecting packet n next. The sender is the linux stack's with
//! SACK and RACK (IW 10, byte counting, Limited Transmit, Reno's halving, no PRR, no TLP, Linux's
//! timer). Each timeline is worked in its comments from RFC 2883, RFC 8985 and net/ipv4/tcp_input.c
//! and tcp_recovery.c (Linux 6.x).

mod common;

use common::{
    acks_2_3_then_sacks_of_4_and_4_5, fast_retransmits, linux_rules, sack_ack as ack, sent, started_iw10 as started,
    MS, MSS,
};
use hfcsim_core::tcp::receiver::{AckRule, Action as RxAction, Receiver, ReceiverConfig};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;
use hfcsim_core::Scenario;

// ---- the receiver ------------------------------------------------------------------------------

/// The linux ACK rule with SACK beside timestamps (3 blocks), 1000-B segments, `tcp.dsack` as asked.
fn receiver(dsack: bool) -> Receiver {
    let cfg = ReceiverConfig {
        rules: hfcsim_core::scenario::Receiver { ack_rule: AckRule::Linux, ..Scenario::cohen_default().receiver },
        mss: 1000,
        receive_buffer: 64_000,
        delack_tick: 40 * MS,
        delack_phase: 0,
        sack_blocks: 3,
        max_window: 65_535,
    };
    let mut r = Receiver::new(cfg, 1_000_000, Rto::linux(200 * MS, 1000 * MS)).with_dsack(dsack);
    r.establish();
    r
}

/// Segment n (bytes [(n-1) x 1000, n x 1000)) arrives; the ACKs it draws, each as (ACK, SACK
/// blocks in segment numbers, first to last inclusive).
fn segment(r: &mut Receiver, n: u64) -> Vec<(u64, Vec<(u64, u64)>)> {
    let mut out = vec![];
    r.on_data(SimTime(MS), (n - 1) * 1000, 1000, &mut out);
    out.iter()
        .map(|a| match *a {
            RxAction::Ack { ack, dsack, .. } => {
                let blocks = r.sack_blocks(dsack).as_slice().iter().map(|&(l, e)| (l / 1000 + 1, e / 1000)).collect();
                (ack / 1000 + 1, blocks)
            }
            _ => panic!("only ACKs"),
        })
        .collect()
}

#[test]
fn a_duplicate_is_reported_once_in_the_first_block() {
    // RFC 2883 Sec. 4 (Linux tcp_dsack_set). Segments 1 and 2 arrive (quick ACKs), then 4 and 6
    // out of order (SACK blocks 4 and 6, 4), then a second copy of 1: it lies below rcv_nxt (3),
    // and its ACK reports it first, D-SACK 1-1, before the SACK blocks (RFC 2883 Sec. 4.1.1's
    // example), then a copy of 4, held out of order: D-SACK 4-4 first, the block holding it (4)
    // second (Sec. 4.1.2: "the second SACK block ... the contiguous block of data containing the
    // first"), 6 third. The next ACK (segment 3 arrives: 1-4 in order, ACK 5) has no D-SACK: it
    // is sent once.
    for dsack in [false, true] {
        let mut r = receiver(dsack);
        assert_eq!(segment(&mut r, 1), vec![(2, vec![])]);
        assert_eq!(segment(&mut r, 2), vec![(3, vec![])]);
        assert_eq!(segment(&mut r, 4), vec![(3, vec![(4, 4)])]);
        assert_eq!(segment(&mut r, 6), vec![(3, vec![(6, 6), (4, 4)])]);
        let dup_below = segment(&mut r, 1);
        let dup_above = segment(&mut r, 4);
        let after = segment(&mut r, 3);
        if dsack {
            assert_eq!(dup_below, vec![(3, vec![(1, 1), (6, 6), (4, 4)])]);
            assert_eq!(dup_above, vec![(3, vec![(4, 4), (4, 4), (6, 6)])]);
            assert_eq!(r.dsacks_sent, 2);
        } else {
            // Without the key the copy of 1 draws a duplicate ACK without blocks beyond the SACK
            // ones: to the sender a duplicate ACK (RFC 6675's definition: no new SACK information
            // but the same blocks), the copy of 4 one with the block holding it first.
            assert_eq!(dup_below, vec![(3, vec![(6, 6), (4, 4)])]);
            assert_eq!(dup_above, vec![(3, vec![(4, 4), (6, 6)])]);
        }
        assert_eq!(after, vec![(5, vec![(6, 6)])]);
    }
}

// ---- the sender --------------------------------------------------------------------------------

/// The linux stack's sender with SACK and RACK, without TLP and PRR; D-SACK and undo as asked.
fn linux(dsack: bool, undo: bool) -> SenderConfig {
    let mut cfg = linux_rules();
    cfg.rack = true;
    cfg.dsack = dsack;
    cfg.undo = undo;
    cfg
}

/// Slow start's ssthresh, restored by an undo of a recovery begun in slow start
/// (tcp_current_ssthresh: the larger of ssthresh and 3/4 cwnd).
const INFINITE: u64 = 65_535 << 14;

/// Packet 3 delayed behind 4, 5 and 6: RACK resends it at the third SACK (no reordering seen yet,
/// three segments SACKed: reo_wnd 0), and the original arrives next, so the resend is spurious.
/// Returns with recovery ended (every packet to 16 acknowledged by 202 ms).
fn spurious_fast_retransmit(s: &mut Sender, out: &mut Vec<Out>) {
    // ACKs 2 and 3 at 100 ms: cwnd 10 + 2 (byte counting) = 12; 11..14 go out.
    ack(s, out, 100, 2, &[]);
    ack(s, out, 100, 3, &[]);
    assert_eq!(sent(out), vec![11, 12, 13, 14]);
    // The SACKs of 4 and 4-5 send 15 and 16 (Limited Transmit); that of 4-6 marks 3 lost
    // (RACK: reo_wnd 0) and enters recovery: ssthresh = cwnd 12 / 2 = 6 = cwnd, 3 resent. The
    // undo marker is snd_una (packet 3), undo_retrans 1 (the fast retransmission), and what an
    // undo returns to: cwnd 12, ssthresh max(slow start's, 3/4 x 12) = slow start's.
    ack(s, out, 101, 3, &[(4, 4)]);
    ack(s, out, 102, 3, &[(4, 5)]);
    ack(s, out, 103, 3, &[(4, 6)]);
    assert_eq!(fast_retransmits(out), 1);
    assert_eq!(sent(out), vec![15, 16, 3]);
    assert_eq!((s.cwnd, s.ssthresh), (6 * MSS, 6 * MSS));
    // The original 3 arrives: ACK 7 at 104 ms; then 7..10 (sent at 0 ms) at 105 ms. Pipe: 16 - 10
    // = 6 segments out, cwnd 6: nothing goes out.
    for next in 7..=11 {
        ack(s, out, 104 + u64::from(next > 7), next, &[]);
    }
    assert_eq!(sent(out), Vec::<u64>::new());
    // 11..14 (sent at 100 ms) at 200 ms, 15 and 16 at 201 and 202 ms: each frees a segment's room,
    // 17..22 go out; ACK 17 passes the recovery point (HighData 16 at entry): recovery ends with
    // cwnd = ssthresh = 6 (tcp_end_cwnd_reduction), and congestion avoidance's one ACKed segment
    // of 6 adds nothing yet.
    for next in 12..=15 {
        ack(s, out, 200, next, &[]);
    }
    ack(s, out, 201, 16, &[]);
    ack(s, out, 202, 17, &[]);
    assert_eq!(sent(out), (17..=22).collect::<Vec<_>>());
    assert_eq!((s.cwnd, s.ssthresh), (6 * MSS, 6 * MSS));
}

#[test]
fn a_dsack_of_the_only_retransmission_undoes_the_recovery() {
    // The resent 3 reaches the receiver at 203 ms, which has it: its ACK (17) D-SACKs 3 (RFC 2883:
    // a block below the ACK). Linux tcp_check_dsack: 3 is below snd_una and above the undo marker,
    // so undo_retrans 1 - 1 = 0: every retransmission of the episode was spurious. In Open,
    // tcp_try_undo_dsack undoes: cwnd = max(6, 12) = 12, ssthresh = max(6, slow start's).
    // Without tcp.undo the window stays halved; without tcp.dsack the receiver would have sent a
    // plain duplicate ACK, no D-SACK (the first test), and nothing is undone either.
    for (dsack, undo) in [(false, false), (true, false), (false, true), (true, true)] {
        let (mut s, mut out) = started(linux(dsack, undo), 100);
        spurious_fast_retransmit(&mut s, &mut out);
        let blocks: &[(u64, u64)] = if dsack { &[(3, 3)] } else { &[] };
        ack(&mut s, &mut out, 203, 17, blocks);
        if dsack && undo {
            assert_eq!((s.cwnd, s.ssthresh), (12 * MSS, INFINITE));
            assert_eq!(s.stats.undos, 1);
        } else {
            assert_eq!((s.cwnd, s.ssthresh), (6 * MSS, 6 * MSS), "dsack {dsack} undo {undo}");
            assert_eq!(s.stats.undos, 0);
        }
        // A D-SACK's ACK is no duplicate ACK (FLAG_DSACKING_ACK); a plain one is.
        assert_eq!(s.dupacks, u32::from(!dsack));
    }
}

#[test]
fn a_dsack_of_other_data_or_a_dubious_one_undoes_nothing() {
    // Linux tcp_check_dsack counts a D-SACK below snd_una against undo_retrans only above the undo
    // marker (the episode's first snd_una, packet 3); tcp_dsack_seen skips a D-SACK once more
    // segments have been D-SACKed than were ever retransmitted.
    let (mut s, mut out) = started(linux(true, true), 100);
    spurious_fast_retransmit(&mut s, &mut out);
    // A D-SACK of 1 (a duplicate from before the episode): dsack_dups 1 <= 1 retransmission, so
    // it is read, but 1 ends at or below the marker: undo_retrans stays 1, nothing is undone.
    ack(&mut s, &mut out, 203, 17, &[(1, 1)]);
    assert_eq!((s.cwnd, s.ssthresh, s.stats.undos), (6 * MSS, 6 * MSS, 0));
    // Then that of 3: dsack_dups 2 > the 1 retransmission ever sent: dubious, skipped.
    ack(&mut s, &mut out, 204, 17, &[(3, 3)]);
    assert_eq!((s.cwnd, s.ssthresh, s.stats.undos), (6 * MSS, 6 * MSS, 0));
}

#[test]
fn a_spurious_timeout_is_undone_by_the_dsack_of_its_retransmission() {
    // Linux tcp_process_loss -> tcp_try_undo_loss, F-RTO off. IW 10 at 0 ms, every ACK lost: the
    // RTO at 1 s resends 1 (cwnd 1, ssthresh 10 / 2 = 5); a new episode: marker 0, undo_retrans
    // 1. The receiver had 1..10: the copy of 1 draws ACK 11 with D-SACK 1 at 1100 ms. It is in the
    // scoreboard still (above the marker, retransmitted): undo_retrans 0, and the ACK advances
    // snd_una: the undo clears the lost marks, restores cwnd max(1, 10) = 10 and ssthresh to slow
    // start's, and (SACK) ends the loss state. Slow start then grows by the 10 segments
    // acknowledged: cwnd 20, and 11..30 go out. Without the undo (or without the D-SACK) the ACK
    // ends the loss state the ordinary way (RFC 6675 5.1): slow start takes cwnd from 1 to
    // ssthresh 5 with 4 of the 10 segments acknowledged, congestion avoidance one more with the
    // other 6 (one per 5 acknowledged, tcp_cong_avoid_ai): cwnd 6, and 11..16 go out.
    for (dsack, undo) in [(false, false), (true, false), (true, true)] {
        let (mut s, mut out) = started(linux(dsack, undo), 100);
        s.on_timer(SimTime(1000 * MS), &mut out);
        assert_eq!(sent(&mut out), vec![1]);
        assert_eq!((s.cwnd, s.ssthresh), (MSS, 5 * MSS));
        let blocks: &[(u64, u64)] = if dsack { &[(1, 1)] } else { &[] };
        ack(&mut s, &mut out, 1100, 11, blocks);
        if dsack && undo {
            assert_eq!((s.cwnd, s.ssthresh, s.stats.undos), (20 * MSS, INFINITE, 1));
            assert_eq!(sent(&mut out), (11..=30).collect::<Vec<_>>());
        } else {
            assert_eq!((s.cwnd, s.ssthresh, s.stats.undos), (6 * MSS, 5 * MSS, 0));
            assert_eq!(sent(&mut out), (11..=16).collect::<Vec<_>>());
        }
    }
}

#[test]
fn a_dsack_widens_racks_reordering_window_once_reordering_is_seen() {
    // RFC 8985 6.2 step 4, Linux tcp_rack_update_reo_wnd. IW 10 at 0 ms; ACKs 2, 3 at 100 ms
    // (min_RTT 100 ms, so RACK's step is 25 ms), 11..14 out. Packet 3 arrives after 4 and 5
    // (SACKed at 101 and 102 ms, sending 15, 16): ACK 6 at 103 ms: reordering seen; slow start
    // by the 3 segments acknowledged, cwnd 15, and 17..20 go out.
    for growth in [false, true] {
        let mut cfg = linux(true, false);
        cfg.rack_reo_wnd_dsack = growth;
        let (mut s, mut out) = started(cfg, 100);
        acks_2_3_then_sacks_of_4_and_4_5(&mut s, &mut out);
        ack(&mut s, &mut out, 103, 6, &[]);
        assert_eq!(sent(&mut out), (11..=20).collect::<Vec<_>>());
        // Packet 6 is late too: 7, 7-8, 7-9 SACKed at 104-106 ms (Limited Transmit: 21..23).
        // Reordering seen, so reo_wnd = 25 ms even with 3 SACKed: 6 (sent at 0) is lost at 0 +
        // RACK.rtt 106 + 25 = 131 ms, when the reordering timer fires and recovery resends it.
        for (t, last) in [(104, 7), (105, 8), (106, 9)] {
            ack(&mut s, &mut out, t, 6, &[(7, last)]);
        }
        assert_eq!(s.next_deadline(), Some(SimTime(131 * MS)));
        s.on_timer(SimTime(131 * MS), &mut out);
        assert_eq!(fast_retransmits(&out), 1);
        assert_eq!(sent(&mut out), vec![21, 22, 23, 6]);
        // The original 6 arrives: ACK 10 at 132 ms. The resent 6 draws a D-SACK at 232 ms, one
        // that counts (reordering seen, not a probe's): with the rule, reo_wnd_mult 1 -> 2, the
        // round open until snd_una reaches snd.nxt (the end of 23).
        ack(&mut s, &mut out, 132, 10, &[]);
        ack(&mut s, &mut out, 232, 10, &[(6, 6)]);
        // The SACK of 12 (sent at 100 ms) at 233 ms: RACK.rtt 133 ms; 10 (sent at 0) is lost at
        // once, 11 (sent at 100 ms) at 100 + 133 + reo_wnd: 25 ms from now, or 50 ms with the
        // window widened (2 x 25, under SRTT).
        ack(&mut s, &mut out, 233, 10, &[(12, 12)]);
        let reo_wnd = if growth { 50 } else { 25 };
        assert_eq!(s.next_deadline(), Some(SimTime((233 + reo_wnd) * MS)), "growth {growth}");
    }
}

#[test]
fn a_dsack_inside_recovery_undoes_and_prr_aims_at_the_restored_ssthresh() {
    // Linux tcp_fastretrans_alert, TCP_CA_Recovery: tcp_try_undo_dsack on any ACK once
    // undo_retrans is 0; recovery goes on, PRR reading the restored ssthresh (tcp_cwnd_reduction).
    // PRR on: cwnd is not cut at entry (RFC 6937), ssthresh 6; RecoverFS = 16 - 2 = 14 segments.
    for undo in [false, true] {
        let mut cfg = linux(true, undo);
        cfg.prr = true;
        let (mut s, mut out) = started(cfg, 100);
        acks_2_3_then_sacks_of_4_and_4_5(&mut s, &mut out);
        // The SACK of 6 enters recovery: prr_delivered 1 (6), prr_out 1 (the resend of 3); pipe
        // 14 out - 3 SACKed - 1 lost + 1 resent = 11 > 6: sndcnt = ceil(1 x 6 / 14) - 1 = 0.
        ack(&mut s, &mut out, 103, 3, &[(4, 6)]);
        assert_eq!(sent(&mut out), vec![11, 12, 13, 14, 15, 16, 3]);
        // The original 3: ACK 7 at 104 ms (DeliveredData 1, prr_delivered 2; pipe 10 > 6: sndcnt
        // ceil(2 x 6 / 14) - 1 = 0).
        ack(&mut s, &mut out, 104, 7, &[]);
        assert_eq!(sent(&mut out), Vec::<u64>::new());
        // Its resend D-SACKed at 105 ms, inside recovery (the recovery point is 16): undo_retrans
        // 0, the undo restores cwnd 12 and slow start's ssthresh, and recovery goes on. PRR's
        // target is now above the pipe (10): PRR-SSRB, sndcnt = min(ssthresh - pipe,
        // max(prr_delivered - prr_out, DeliveredData) + MSS) = max(2 - 1, 0) + 1 = 2: 17, 18.
        // Not undone: pipe 10 > 6, sndcnt ceil(2 x 6 / 14) - 1 = 0.
        ack(&mut s, &mut out, 105, 7, &[(3, 3)]);
        if undo {
            assert_eq!((s.cwnd, s.ssthresh, s.stats.undos), (12 * MSS, INFINITE, 1));
            assert_eq!(sent(&mut out), vec![17, 18]);
        } else {
            assert_eq!((s.cwnd, s.ssthresh, s.stats.undos), (12 * MSS, 6 * MSS, 0));
            assert_eq!(sent(&mut out), Vec::<u64>::new());
        }
        // ACK 8 at 106 ms delivers 7 (prr_delivered 3). Undone: pipe 8..18 = 11, sndcnt = max(3 -
        // 3, 1) + 1 = 2: 19, 20. Not: pipe 9 > 6, sndcnt = ceil(3 x 6 / 14) - 1 = 1: 17.
        ack(&mut s, &mut out, 106, 8, &[]);
        let expected = if undo { vec![19, 20] } else { vec![17] };
        assert_eq!(sent(&mut out), expected);
    }
}
