//! ECN (RFC 3168, RFC 8257's feedback) as packet scripts: the test carries each packet between a
//! sender and a receiver by hand, marking the ones a queue would mark CE. Packets are numbered
//! from 1 (packet n is bytes [(n-1)*MSS, n*MSS)); ACK n expects packet n next.

mod common;

use common::{MS, MSS, WND};
use hfcsim_core::packet::Ecn;
use hfcsim_core::scenario::EcnMode;
use hfcsim_core::tcp::receiver::{Action as RxAction, Receiver, ReceiverConfig};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Action, Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;

/// A data segment as the sender sent it: (packet number, ECN field, CWR).
type Seg = (u64, Ecn, bool);

fn segments(out: &mut Vec<Out>) -> Vec<Seg> {
    let v = out
        .iter()
        .filter_map(|o| match o.action {
            Action::Segment { seq, ecn, cwr, .. } => Some((seq / MSS + 1, ecn, cwr)),
            _ => None,
        })
        .collect();
    out.clear();
    v
}

/// A receiver that ACKs every segment (no delayed ACK), with `tcp.ecn = mode`, established
/// without a handshake (both ends agree on ECN).
fn receiver(mode: EcnMode, delayed_ack: bool) -> Receiver {
    let mut r = closed_receiver(mode, delayed_ack);
    r.establish();
    r
}

fn closed_receiver(mode: EcnMode, delayed_ack: bool) -> Receiver {
    let cfg = ReceiverConfig {
        rules: hfcsim_core::scenario::Receiver { delayed_ack, ..hfcsim_core::Scenario::cohen_default().receiver },
        mss: MSS,
        receive_buffer: WND,
        delack_tick: 200 * MS,
        delack_phase: 0,
        sack_blocks: 0,
        max_window: WND,
    };
    Receiver::new(cfg, 1000 * MSS, Rto::linux(200 * MS, 1000 * MS)).with_ecn(mode)
}

/// Packet `n` (with its ECN field and CWR) reaches the receiver at `t_ms`: its ACKs as
/// (ACK number, ECE).
fn deliver(r: &mut Receiver, t_ms: u64, (n, ecn, cwr): Seg) -> Vec<(u64, bool)> {
    let mut out = Vec::new();
    let now = SimTime(t_ms * MS);
    r.on_data_ecn(now, ecn == Ecn::Ce, cwr, &mut out);
    r.on_data(now, (n - 1) * MSS, MSS as u32, &mut out);
    out.iter()
        .map(|a| match *a {
            RxAction::Ack { ack, ece, .. } => (ack / MSS + 1, ece),
            _ => panic!("{a:?}"),
        })
        .collect()
}

fn ack(s: &mut Sender, out: &mut Vec<Out>, t_ms: u64, (next, ece): (u64, bool)) {
    s.on_ack_ecn(SimTime(t_ms * MS), (next - 1) * MSS, WND, &[], ece, out);
}

#[test]
fn rfc3168_one_ce_one_cut_ece_until_cwr() {
    // The sender: Reno as Linux grows it (byte counting), IW 10, no SACK; tcp.ecn = rfc3168 takes
    // today's path (tcp/sender/today.rs).
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.initial_window = 10;
    cfg.byte_counting = true;
    cfg.ecn = EcnMode::Rfc3168;
    let mut s = Sender::new(cfg, 1000 * MSS, None, Rto::linux(200 * MS, 1000 * MS));
    let mut r = receiver(EcnMode::Rfc3168, false);
    let mut out = Vec::new();
    s.establish(SimTime(0), WND, &mut out);
    // Without a handshake both ends agree; data goes out ECT(0) (RFC 3168 Sec. 6.1.2), no CWR.
    let first = segments(&mut out);
    assert_eq!(first, (1..=10).map(|n| (n, Ecn::Ect0, false)).collect::<Vec<_>>());

    // At 50 ms packets 1..10 arrive, packet 3 marked CE on the way. ACK 2 and 3 carry no ECE;
    // from packet 3's ACK on, every ACK echoes it (Sec. 6.1.3: until a CWR arrives).
    let mut acks = Vec::new();
    for (n, ecn, cwr) in first {
        let ecn = if n == 3 { Ecn::Ce } else { ecn };
        acks.extend(deliver(&mut r, 50, (n, ecn, cwr)));
    }
    let want: Vec<(u64, bool)> = (2..=11).map(|a| (a, a >= 4)).collect();
    assert_eq!(acks, want);
    assert_eq!(r.ce_received, 1);

    // At 100 ms the ACKs reach the sender. ACK 2 and 3: slow start by the bytes acknowledged,
    // cwnd 10 -> 11 -> 12 segments, each sending two: 11, 12, then 13, 14.
    ack(&mut s, &mut out, 100, acks[0]);
    ack(&mut s, &mut out, 100, acks[1]);
    assert_eq!(segments(&mut out).iter().map(|s| s.0).collect::<Vec<_>>(), vec![11, 12, 13, 14]);
    assert_eq!((s.cwnd, s.ssthresh), (12 * MSS, 65_535 << 14));
    // ACK 4 with ECE: the cut as for a loss (Linux Reno: ssthresh = cwnd / 2 = 6 segments), cwnd
    // to ssthresh at once, no retransmission; the reduction lasts while snd_una <= 14 MSS (what
    // was sent). 11 segments in flight, more than cwnd: nothing goes out.
    ack(&mut s, &mut out, 100, acks[2]);
    assert_eq!((s.cwnd, s.ssthresh, s.stats.ecn_reductions), (6 * MSS, 6 * MSS, 1));
    assert!(segments(&mut out).is_empty());
    assert_eq!(s.stats.retransmitted_segments, 0);
    // ACKs 5..11, all with ECE, in the same round trip: no second cut and no growth. Once the
    // flight falls to 5 segments (ACK 10: 9 acknowledged of 14 sent) one new segment fits: 15,
    // carrying CWR (Sec. 6.1.2: the first new data after the cut); then 16 without it.
    let mut sent = Vec::new();
    for &a in &acks[3..] {
        ack(&mut s, &mut out, 100, a);
        sent.extend(segments(&mut out));
    }
    assert_eq!(sent, vec![(15, Ecn::Ect0, true), (16, Ecn::Ect0, false)]);
    assert_eq!((s.cwnd, s.ssthresh, s.stats.ecn_reductions), (6 * MSS, 6 * MSS, 1));

    // At 150 ms packets 11..16 arrive. 11..14 were sent before the cut: their ACKs (12..15) still
    // echo CE; 15 brings CWR, and ECE stops (ACKs 16 and 17).
    let mut acks = Vec::new();
    for seg in [(11, Ecn::Ect0, false), (12, Ecn::Ect0, false), (13, Ecn::Ect0, false), (14, Ecn::Ect0, false)] {
        acks.extend(deliver(&mut r, 150, seg));
    }
    acks.extend(deliver(&mut r, 150, sent[0]));
    acks.extend(deliver(&mut r, 150, sent[1]));
    assert_eq!(acks, vec![(12, true), (13, true), (14, true), (15, true), (16, false), (17, false)]);
    // At 200 ms: ACKs 12..15 (snd_una up to 14 MSS, not past the reduction's end) change nothing
    // but clock out 17..20, one each; ACK 16 ends the reduction (snd_una 15 MSS > 14 MSS); ACK 17
    // grows cwnd by byte counting, 1 MSS per cwnd acknowledged: 2 of 6 so far, no growth yet.
    let mut sent = Vec::new();
    for &a in &acks {
        ack(&mut s, &mut out, 200, a);
        sent.extend(segments(&mut out));
    }
    assert_eq!(sent.iter().map(|s| s.0).collect::<Vec<_>>(), vec![17, 18, 19, 20, 21, 22]);
    assert!(sent.iter().all(|&(_, ecn, cwr)| ecn == Ecn::Ect0 && !cwr));
    assert_eq!((s.cwnd, s.ssthresh, s.stats.ecn_reductions), (6 * MSS, 6 * MSS, 1));

    // A new CE in the next round trip is a new cut: packet 17 arrives CE, ACK 18 echoes it, and
    // the sender, out of its reduction, halves again: 6 -> 3 segments.
    assert_eq!(deliver(&mut r, 250, (17, Ecn::Ce, false)), vec![(18, true)]);
    ack(&mut s, &mut out, 300, (18, true));
    assert_eq!((s.cwnd, s.ssthresh, s.stats.ecn_reductions), (3 * MSS, 3 * MSS, 2));
    assert!(segments(&mut out).is_empty()); // 5 in flight (18..22) > 3

    // RFC 3168 Sec. 6.1.5: a retransmission is not ECN-capable. The RTO (srtt 100 ms + the 200 ms
    // floor, restarted at 300 ms) resends packet 18 Not-ECT.
    let rto_at = s.next_deadline().expect("the RTO is armed");
    s.on_timer(rto_at, &mut out);
    assert_eq!(segments(&mut out), vec![(18, Ecn::NotEct, false)]);
}

#[test]
fn dctcp_feedback_mirrors_ce_with_an_immediate_ack_at_each_change() {
    // RFC 8257 Sec. 3.2 with delayed ACK (Net/3's: every second segment, else the 200 ms tick):
    // ECE is the CE state of the packets an ACK covers. Packets 1..6 arrive at 10 ms, 3 and 4 CE.
    let mut r = receiver(EcnMode::L4s, true);
    let ce = |n: u64| if n == 3 || n == 4 { Ecn::Ce } else { Ecn::Ect1 };
    let acks: Vec<Vec<(u64, bool)>> = (1..=6).map(|n| deliver(&mut r, 10, (n, ce(n), false))).collect();
    assert_eq!(
        acks,
        vec![
            vec![],           // 1: held (delayed ACK)
            vec![(3, false)], // 2: the second segment: ACK 3, state not CE
            vec![],           // 3: CE; nothing held, so no extra ACK; held
            vec![(5, true)],  // 4: CE, second segment: ACK 5 with ECE
            // 5: not CE, a change with nothing held: held
            vec![],
            vec![(7, false)], // 6: ACK 7 without ECE
        ]
    );
    // A change while an ACK is held: 7 (not CE) is held, 8 arrives CE: the held ACK 8 goes out
    // at once with the old state (ECE off), then 8 is held with the state CE; 9 (CE) completes
    // two segments: ACK 10 with ECE.
    assert_eq!(deliver(&mut r, 20, (7, Ecn::Ect1, false)), vec![]);
    assert_eq!(deliver(&mut r, 20, (8, Ecn::Ce, false)), vec![(8, false)]);
    assert_eq!(deliver(&mut r, 20, (9, Ecn::Ce, false)), vec![(10, true)]);
    assert_eq!(r.ce_received, 4);
}

#[test]
fn the_handshake_negotiates_ecn() {
    use hfcsim_core::packet::tcp_flags::{CWR, ECE};
    let sender = |mode: EcnMode| {
        let mut cfg = SenderConfig::reno(MSS, WND);
        cfg.ecn = mode;
        Sender::new(cfg, 100 * MSS, None, Rto::linux(200 * MS, 1000 * MS))
    };
    let (mut rout, mut sout) = (Vec::new(), Vec::new());
    // RFC 3168 Sec. 6.1.1: the client (here the data receiver) opens with an ECN-setup SYN
    // (ECE and CWR); the server answers with an ECN-setup SYN-ACK (ECE alone): both ends on.
    let mut r = closed_receiver(EcnMode::Rfc3168, false);
    r.connect(SimTime(0), &mut rout);
    let syn = r.handshake_flags(false);
    assert_eq!(syn, ECE | CWR);
    let mut s = sender(EcnMode::Rfc3168);
    s.peer_handshake(syn, false);
    s.on_syn(SimTime(MS), &mut sout);
    assert!(s.ecn_ok);
    assert_eq!(s.handshake_flags(true), ECE);
    r.peer_handshake(ECE, true);
    assert!(r.ecn_ok);
    // A server without ECN answers a plain SYN-ACK: neither end uses ECN.
    let mut r = closed_receiver(EcnMode::Rfc3168, false);
    r.connect(SimTime(0), &mut rout);
    let mut s = sender(EcnMode::Off);
    s.peer_handshake(r.handshake_flags(false), false);
    s.on_syn(SimTime(MS), &mut sout);
    assert!(!s.ecn_ok);
    assert_eq!(s.handshake_flags(true), 0);
    r.peer_handshake(0, true);
    assert!(!r.ecn_ok);
    // A SYN-ACK with both bits is not an ECN-setup SYN-ACK (Sec. 6.1.1): ECN stays off.
    let mut r = closed_receiver(EcnMode::Rfc3168, false);
    r.connect(SimTime(0), &mut rout);
    r.peer_handshake(ECE | CWR, true);
    assert!(!r.ecn_ok);
}
