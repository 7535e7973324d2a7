//! CUBIC's hybrid slow start as Linux runs it (`tcp.hystart`, tcp/hystart.rs) as a packet script:
//! the test plays the receiver; packets are numbered from 1 and "ACK n" expects packet n next.

mod common;

use common::{sent, MS, MSS, WND};
use hfcsim_core::scenario::CongestionControlKind;
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Sender, SenderConfig};
use hfcsim_core::time::SimTime;

fn cubic(hystart: bool) -> SenderConfig {
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.initial_window = 10;
    cfg.sack = true;
    cfg.limited_transmit = true;
    cfg.byte_counting = true;
    cfg.congestion_control = CongestionControlKind::Cubic;
    cfg.hystart = hystart;
    cfg
}

/// The script: packets 1..=10 sent at 0 ms come back with an RTT of 100 ms, their ACKs 0.1 ms
/// apart (ACK k+1 at 100 + 0.1 (k - 1) ms); each releases two packets (slow start), and every
/// packet from 11 on is ACKed 120 ms after it was sent (a queue has built). Returns (ACK number,
/// cwnd, ssthresh) in segments after each ACK through ACK 31.
fn run(hystart: bool) -> Vec<(u64, u64, u64)> {
    let mut s = Sender::new(cubic(hystart), 1000 * MSS, None, Rto::linux(200 * MS, 1000 * MS));
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(sent(&mut out), (1..=10).collect::<Vec<_>>());
    let mut arrivals: Vec<(u64, u64)> = (1..=10).map(|p| (100_000 + (p - 1) * 100, p)).collect(); // (us, packet)
    let mut seen = vec![];
    for p in 1..=30 {
        arrivals.sort();
        let (t_us, q) = arrivals.remove(0);
        assert_eq!(q, p);
        s.on_ack_sack(SimTime(t_us * 1000), p * MSS, WND, &[], &mut out);
        for sent in sent(&mut out) {
            arrivals.push((t_us + 120_000, sent));
        }
        seen.push((p + 1, s.cwnd / MSS, s.ssthresh / MSS));
    }
    seen
}

#[test]
fn a_round_whose_rtt_grows_by_an_eighth_ends_slow_start() {
    // Round 1 (HyStart's rounds: bictcp_hystart_reset when snd_una passes end_seq) starts at ACK
    // 2 (100 ms) with end_seq = snd_nxt = the end of packet 10. Its samples, 100.0-100.9 ms, set
    // delay_min = 100 ms: the delay threshold is 100 + clamp(100 / 8 = 12.5, 4, 16) = 112.5 ms.
    // Nothing is decided below cwnd 16 (ACKs 2-7); ACKs 8-11 are 4 of the round's 8 samples, all
    // 100 ms; the ACK train spans 0.9 ms, far below (100 + 1) / 2 ms. ACK 12 (packet 11, at 220
    // ms) passes end_seq: round 2, end_seq the end of packet 30. Its samples are 120 ms; the
    // ninth, ACK 20, finds the round's minimum 120 > 112.5: ssthresh = cwnd = 20 + 8 = 28 (cwnd
    // before the ACK's growth: 10, +10 in round 1, +8 for ACKs 12-19). CUBIC's congestion
    // avoidance then adds less than a segment by ACK 31.
    let with = run(true);
    assert_eq!(with[17], (19, 28, 735_428)); // ACK 19: still slow start (65535 << 14 / 1460 = 735,428)
    assert_eq!(with[18], (20, 28, 28));
    assert_eq!(with.last(), Some(&(31, 28, 28)));
    // Without HyStart slow start goes on: cwnd 40 at ACK 31, ssthresh untouched.
    let without = run(false);
    assert_eq!(without[18], (20, 29, 735_428));
    assert_eq!(without.last(), Some(&(31, 40, 735_428)));
}
