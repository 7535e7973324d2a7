//! PRR as Linux runs it (`tcp.prr_linux`, tcp/prr.rs) as a packet script: the test plays the
//! receiver; packets are numbered from 1 and "ACK n" expects packet n next.
//!
//! Found against the real kernel (docs/linux-vs-kernel.md, `cubic16` at 5 %): on the ACK whose
//! SACK showed a loss, the kernel sent the fast retransmission and nothing else, and when that
//! retransmission was lost too, only the RTO found it. RFC 6937's sender retransmits first and
//! then sends PRR's sndcnt, one segment more, whose SACK lets RACK see the lost retransmission.

mod common;

use common::{linux_rules, sack_ack, sent, started_iw10};
use hfcsim_core::scenario::CongestionControlKind;

/// Packets 1..=4 of IW 10 are lost; ACKs at 100-103 ms SACK 5, 5-6, 5-7 and 5-8. Returns the
/// packets sent on each ACK.
fn run(linux: bool) -> Vec<Vec<u64>> {
    let mut cfg = linux_rules();
    cfg.congestion_control = CongestionControlKind::Cubic;
    cfg.prr = true;
    cfg.prr_linux = linux;
    let (mut s, mut out) = started_iw10(cfg, 100);
    let mut per_ack = vec![];
    for (t, last) in [(100, 5), (101, 6), (102, 7), (103, 8)] {
        sack_ack(&mut s, &mut out, t, 1, &[(5, last)]);
        per_ack.push(sent(&mut out));
    }
    per_ack
}

#[test]
fn the_fast_retransmission_is_one_of_the_entering_acks_sndcnt() {
    // SACK 5 and SACK 5-6 each free a segment of the pipe (Limited Transmit): 11, then 12. SACK 5-7
    // puts three segments above 1-4 (RFC 6675 IsLost): all four are lost, and recovery starts
    // with CUBIC's ssthresh = 0.7 x 10 = 7. Outstanding 1-12, SACKed 5-7, lost 1-4: in flight 12 -
    // 3 - 4 = 5, at most ssthresh, so the slow-start bound applies.
    //
    // Linux (tcp_cwnd_reduction before tcp_xmit_recovery): prr_delivered = 1 (packet 7), prr_out
    // = 0; sndcnt = min(7 - 5, max(1 - 0, 1)) = 1, no extra segment (the ACK marked new losses and
    // did not advance snd_una), and at least 1 ("force a fast retransmit"): the retransmission of
    // 1 alone. SACK 5-8: in flight 12 - 4 - 4 + 1 = 5, prr_delivered 2, prr_out 1: sndcnt =
    // min(7 - 5, max(2 - 1, 1)) = 1: packet 2.
    assert_eq!(run(true), vec![vec![11], vec![12], vec![1], vec![2]]);
    // RFC 6937 (PRR-SSRB) after the fast retransmission: in flight 6, prr_out 1: sndcnt = min(7 -
    // 6, max(1 - 1, 1) + 1) = 1, packet 2 as well. SACK 5-8: in flight 12 - 4 - 4 + 2 = 6 (two
    // retransmissions out), prr_delivered 2, prr_out 2: min(7 - 6, max(0, 1) + 1) = 1: packet 3.
    // A segment ahead of Linux from the ACK that started recovery on.
    assert_eq!(run(false), vec![vec![11], vec![12], vec![1, 2], vec![3]]);
}
