//! TCP Prague (tcp/prague.rs) in the sender, as packet scripts: what it does beside DCTCP. Packets
//! are numbered from 1 (packet n is bytes [(n-1)*MSS, n*MSS), MSS = 1460); ACK n expects packet n.

mod common;

use common::{MS, MSS, WND};
use hfcsim_core::scenario::{CongestionControlKind, EcnMode};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;

fn sender(cc: CongestionControlKind, pacing: bool) -> Sender {
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.initial_window = 10;
    cfg.byte_counting = true;
    cfg.ecn = EcnMode::L4s;
    cfg.congestion_control = cc;
    cfg.pacing = pacing;
    Sender::new(cfg, 1000 * MSS, None, Rto::linux(200 * MS, 1000 * MS))
}

fn ack(s: &mut Sender, out: &mut Vec<Out>, t: u64, next: u64, ece: bool) {
    s.on_ack_ecn(SimTime(t), (next - 1) * MSS, WND, &[], ece, out);
}

/// Established without a handshake (both ends agree on ECN), packets 1-10 sent at 0; at 10 ms the
/// ACK of packet 1 echoes CE, then packets 2-6 are ACKed unmarked: the window after each.
fn cwnd_after_a_mark(cc: CongestionControlKind) -> Vec<u64> {
    let mut s = sender(cc, false);
    let mut out = Vec::new();
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(common::sent(&mut out), (1..=10).collect::<Vec<_>>());
    let mut cwnds = Vec::new();
    ack(&mut s, &mut out, 10 * MS, 2, true);
    cwnds.push(s.cwnd);
    for next in 3..=7 {
        ack(&mut s, &mut out, 10 * MS, next, false);
        cwnds.push(s.cwnd);
    }
    cwnds
}

#[test]
fn prague_grows_on_unmarked_acks_while_reducing_and_dctcp_does_not() {
    // Both start at alpha = 1: the CE echo cuts 14600 by half, to 7300 (ssthresh 7300; the marked
    // ACK's bytes grow nothing). Prague then counts each unmarked ACK's 1460 bytes towards the next
    // segment (a cwnd's worth, 7300 = 5 ACKs): the fifth opens cwnd to 8760, inside the reduction
    // (it lasts until packet 10 is ACKed). DCTCP grows nothing until the reduction ends.
    assert_eq!(cwnd_after_a_mark(CongestionControlKind::Prague), vec![7300, 7300, 7300, 7300, 7300, 8760]);
    assert_eq!(cwnd_after_a_mark(CongestionControlKind::Dctcp), vec![7300; 6]);
}

#[test]
fn prague_paces_at_its_own_rate_of_whole_packets() {
    // SYN at 0, SYN-ACK at 10 ms: srtt 10 ms, cwnd 10 segments, ssthresh unbounded (200 %). At 20 ms
    // the ACK of packet 1 opens cwnd to 11 segments: Prague's rate is 11 packets of 1460 + 40 bytes
    // per 10 ms at 200 % = 3,300,000 B/s (Linux's would be 16060 B per 10 ms at 200 % = 3,212,000).
    // Packet 11 leaves at once, advancing the departure time by 1460 / 3300000 s = 442424 ns less
    // half of it for the idle time (221212): to 20.221212 ms, when packet 12 may go.
    let mut s = sender(CongestionControlKind::Prague, true);
    let mut out = Vec::new();
    s.connect(SimTime(0), &mut out);
    out.clear();
    s.on_syn_ack(SimTime(10 * MS), WND, &mut out);
    assert_eq!(common::sent(&mut out), (1..=10).collect::<Vec<_>>());
    ack(&mut s, &mut out, 20 * MS, 2, false);
    assert_eq!(common::sent(&mut out), vec![11]);
    assert_eq!(s.next_deadline(), Some(SimTime(20_221_212)));
    s.on_timer(SimTime(20_221_212), &mut out);
    assert_eq!(common::sent(&mut out), vec![12]);
}
