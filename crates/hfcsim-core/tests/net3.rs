//! Literal 4.4BSD-Lite (`tcp.stack = "net3"`): the rules of `tcp_input.c` that hfcsim's older
//! model (`net3-rfc5681`) left out, as packet scripts. The test plays the receiver and hands the
//! sender each ACK; packets are numbered from 1 (packet n is bytes [(n-1)*MSS, n*MSS)).
//!
//! The source lines quoted are 4.4BSD-Lite2 `sys/netinet/tcp_input.c` (Stevens vol. 2, chs. 28-29).

mod common;

use common::{sent, MS, MSS, WND};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;
use hfcsim_core::{run, RunOptions};

/// The net3 stack's sender rules.
fn net3(mss: u64, send_buffer: u64) -> SenderConfig {
    let mut cfg = SenderConfig::reno(mss, send_buffer);
    cfg.header_prediction = true;
    cfg.deflate_at_threshold = false;
    cfg.output_after_fast_retransmit = false;
    cfg
}

/// A sender in congestion avoidance: packets 1..10 acknowledged, cwnd = ssthresh = `cwnd`
/// segments, the peer advertising `wnd` segments; it has just sent 11 onwards.
fn sender(cfg: SenderConfig, cwnd: u64, wnd: u64) -> (Sender, Vec<Out>) {
    let mut s = Sender::new(cfg, 1000 * MSS, None, Rto::bsd(500 * MS, 0));
    let mut out = vec![];
    s.establish(SimTime(0), wnd * MSS, &mut out);
    out.clear();
    s.snd_una = 10 * MSS;
    s.snd_nxt = 10 * MSS;
    s.snd_max = 10 * MSS;
    s.cwnd = cwnd * MSS;
    s.ssthresh = cwnd * MSS;
    s.output(SimTime(0), &mut out);
    (s, out)
}

/// "ACK n" (the receiver expects packet n) advertising `wnd` segments arrives at `t_ms`.
fn ack(s: &mut Sender, out: &mut Vec<Out>, t_ms: u64, packet: u64, wnd: u64) {
    s.on_ack(SimTime(t_ms * MS), (packet - 1) * MSS, wnd * MSS, out);
}

/// Header prediction. Cohen's 8 KB buffers: the peer advertises 6 segments, cwnd is 8, so
/// 11..16 are in flight and 11 is lost.
fn recovery_then_second_loss(cfg: SenderConfig) -> Sender {
    let (mut s, mut out) = sender(cfg, 8, 6);
    assert_eq!(sent(&mut out), (11..=16).collect::<Vec<_>>());
    // 12, 13, 14 arrive: `++tp->t_dupacks == tcprexmtthresh` on the third. ssthresh =
    // min(snd_wnd, cwnd) / 2 = 3 segments; `snd_cwnd = t_maxseg`, tcp_output sends 11;
    // `snd_cwnd = snd_ssthresh + t_maxseg * t_dupacks` = 6.
    for t in 20..23 {
        ack(&mut s, &mut out, t, 11, 6);
    }
    assert_eq!(sent(&mut out), vec![11]);
    assert_eq!((s.ssthresh, s.cwnd, s.dupacks), (3 * MSS, 6 * MSS, 3));
    // 15, 16 arrive: `t_dupacks > tcprexmtthresh`, `snd_cwnd += t_maxseg`: 7, 8. The window is
    // min(cwnd, snd_wnd) = 6 segments, all in flight: nothing new.
    ack(&mut s, &mut out, 23, 11, 6);
    ack(&mut s, &mut out, 24, 11, 6);
    assert!(sent(&mut out).is_empty());
    assert_eq!((s.cwnd, s.dupacks), (8 * MSS, 5));
    s
}

#[test]
fn net3_header_prediction_keeps_t_dupacks_and_the_next_loss_times_out() {
    let mut s = recovery_then_second_loss(net3(MSS, WND));
    let mut out = vec![];
    // The retransmitted 11 arrives: ACK 17. The header-prediction test holds: no data, window
    // unchanged and non-zero (`tiwin && tiwin == tp->snd_wnd`), `snd_nxt == snd_max` (snd_nxt was
    // put back to onxt), the ACK is for new data and `snd_cwnd >= snd_wnd` (8 >= 6). The fast
    // path drops the acked data, restarts the timer and calls tcp_output: 17..22. It neither
    // clears t_dupacks nor deflates cwnd, and does not open it.
    ack(&mut s, &mut out, 60, 17, 6);
    assert_eq!(sent(&mut out), (17..=22).collect::<Vec<_>>());
    assert_eq!((s.cwnd, s.dupacks), (8 * MSS, 5));
    // 17 is lost; 18..22 arrive. `++tp->t_dupacks` goes 6, 7, ... and never equals
    // tcprexmtthresh: each takes the `t_dupacks > tcprexmtthresh` branch (cwnd += 1 segment,
    // tcp_output: nothing fits the 6-segment window). No fast retransmit.
    for t in 80..85 {
        ack(&mut s, &mut out, t, 17, 6);
    }
    assert!(sent(&mut out).is_empty());
    assert_eq!((s.stats.fast_retransmits, s.dupacks), (1, 10));
    // Only the retransmission timer recovers 17.
    let deadline = s.next_deadline().expect("the retransmission timer is running");
    s.on_timer(deadline, &mut out);
    assert_eq!(sent(&mut out), vec![17]);
    assert_eq!(s.stats.timeouts, 1);
}

#[test]
fn without_header_prediction_the_same_losses_are_two_fast_retransmits() {
    let mut cfg = net3(MSS, WND);
    cfg.header_prediction = false;
    let mut s = recovery_then_second_loss(cfg);
    let mut out = vec![];
    // ACK 17 takes the slow path: `t_dupacks > tcprexmtthresh` (5 > 3) deflates cwnd to
    // ssthresh = 3 and `tp->t_dupacks = 0`; then slow start (cwnd <= ssthresh) opens it to 4.
    ack(&mut s, &mut out, 60, 17, 6);
    assert_eq!(sent(&mut out), (17..=20).collect::<Vec<_>>());
    assert_eq!((s.cwnd, s.dupacks), (4 * MSS, 0));
    // 17 is lost; 18, 19, 20 arrive: the third dupACK retransmits it.
    for t in 80..83 {
        ack(&mut s, &mut out, t, 17, 6);
    }
    assert_eq!(sent(&mut out), vec![17]);
    assert_eq!((s.stats.fast_retransmits, s.stats.timeouts), (2, 0));
}

/// Four segments in flight, 11 lost: exactly three dupACKs can come back. The peer's window (64
/// segments) exceeds cwnd, so header prediction never applies here.
fn three_dupacks(cfg: SenderConfig) -> (Sender, Vec<Out>) {
    let (mut s, mut out) = sender(cfg, 4, 64);
    assert_eq!(sent(&mut out), vec![11, 12, 13, 14]);
    for t in 20..23 {
        ack(&mut s, &mut out, t, 11, 64);
    }
    // ssthresh = max(4 / 2, 2) = 2 segments, cwnd = 2 + 3 = 5.
    assert_eq!((s.ssthresh, s.cwnd), (2 * MSS, 5 * MSS));
    (s, out)
}

#[test]
fn net3_sends_nothing_more_after_the_fast_retransmit_and_does_not_deflate_after_three_dupacks() {
    let (mut s, mut out) = three_dupacks(net3(MSS, WND));
    // `(void) tcp_output(tp)` with cwnd = 1 segment sends 11; then cwnd = 5 and `goto drop`:
    // no second tcp_output, so 15 is not sent although 5 segments exceed the 4 in flight.
    assert_eq!(sent(&mut out), vec![11]);
    // The retransmitted 11 arrives: ACK 15. `if (tp->t_dupacks > tcprexmtthresh && ...)`: 3 is
    // not > 3, cwnd stays 5 segments; congestion avoidance adds MSS*MSS/cwnd = 292 bytes.
    ack(&mut s, &mut out, 40, 15, 64);
    assert_eq!(s.cwnd, 5 * MSS + MSS * MSS / (5 * MSS));
    assert_eq!(sent(&mut out), vec![15, 16, 17, 18, 19]);
}

#[test]
fn rfc5681_sends_at_once_and_deflates_after_three_dupacks() {
    let (mut s, mut out) = three_dupacks(SenderConfig::reno(MSS, WND));
    // The second output with cwnd = 5 sends 15 at once.
    assert_eq!(sent(&mut out), vec![11, 15]);
    // ACK 15 deflates cwnd to ssthresh = 2 (RFC 5681 3.2 step 6), and slow start opens it to
    // 3: 15 is in flight, so 16 and 17 go.
    ack(&mut s, &mut out, 40, 15, 64);
    assert_eq!(s.cwnd, 3 * MSS);
    assert_eq!(sent(&mut out), vec![16, 17]);
}

/// The example: packets 20 and 60 of a 300 KB download dropped on Cohen's network.
#[test]
fn net3_drop_20_and_60_takes_one_timeout_and_a_one_second_stall() {
    let run_with = |net3: bool| {
        let mut sc = hfcsim_core::Scenario::cohen_default();
        sc.flows[0].bytes = 300_000;
        sc.flows[0].drop_packets = vec![20, 60];
        if net3 {
            sc.tcp.header_prediction = true;
            sc.tcp.deflate_at_threshold = false;
            sc.tcp.output_after_fast_retransmit = false;
        }
        run(&sc, 1, RunOptions::default()).flows[0].clone()
    };
    let (literal, later) = (run_with(true), run_with(false));
    assert_eq!((literal.timeouts, literal.fast_retransmits), (1, 1));
    assert_eq!((later.timeouts, later.fast_retransmits), (0, 2));
    // The timeout costs the 1 s minimum RTO and more: about 1.2 s longer.
    let stall = literal.duration_s.expect("finished") - later.duration_s.expect("finished");
    assert!((1.0..1.5).contains(&stall), "stall {stall} s");
}
