//! Linux retransmits only segments marked lost (`tcp.retransmit_lost_only`): its
//! `tcp_xmit_retransmit_queue` skips every segment not marked TCPCB_LOST, so it has neither RFC
//! 6675's NextSeg rule (3) (an unlost hole; Linux's forward retransmission, removed in 4.13) nor
//! rule (4), the rescue retransmission. A packet script: the test plays the receiver; packets are
//! numbered from 1 and "ACK n" expects packet n next.
//!
//! Found against the real kernel (docs/linux-vs-kernel.md, `cubic5`): on an ACK after a filled
//! gap the model's sender retransmitted a lost segment and then, by rule (4), the same segment again.

mod common;

use common::{linux_rules, sack_ack, sent, started_iw10};

/// A 10-packet transfer, IW 10 (so no new data follows): packets 1 and 5 are lost. ACKs at 100-102
/// ms SACK 2, 2-3, 2-4; at 103 ms "ACK 5" (the retransmitted 1 arrived) SACKs 6-10. Returns the
/// packets sent on each ACK.
fn run(lost_only: bool) -> Vec<Vec<u64>> {
    let mut cfg = linux_rules();
    cfg.retransmit_lost_only = lost_only;
    let (mut s, mut out) = started_iw10(cfg, 10);
    let mut per_ack = vec![];
    for (t, last) in [(100, 2), (101, 3), (102, 4)] {
        sack_ack(&mut s, &mut out, t, 1, &[(2, last)]);
        per_ack.push(sent(&mut out));
    }
    sack_ack(&mut s, &mut out, 103, 5, &[(6, 10)]);
    per_ack.push(sent(&mut out));
    per_ack
}

#[test]
fn linux_sends_no_rescue_retransmission() {
    // SACK 2-4 puts three SACKed segments above packet 1 (RFC 6675 IsLost): recovery starts and 1
    // is fast-retransmitted (HighRxt and RescueRxt at its end, RFC 6675 5 (4.3)). ACK 5 with SACK
    // 6-10: packet 5 has five SACKed segments above it, so it is lost and retransmitted (rule (1);
    // Linux: marked TCPCB_LOST). Nothing else is outstanding unSACKed and there is no new data.
    assert_eq!(run(true), vec![vec![], vec![], vec![1], vec![5]]);
    // RFC 6675 NextSeg then offers rule (4): HighACK (5) is past RescueRxt (1's end), so the
    // segment holding the highest outstanding unSACKed octet, packet 5, goes again on the same
    // ACK: the copy Linux never sends.
    assert_eq!(run(false), vec![vec![], vec![], vec![1], vec![5, 5]]);
}
