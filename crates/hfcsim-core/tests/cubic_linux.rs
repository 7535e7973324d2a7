//! CUBIC's Reno-friendly estimate as Linux grows it (`tcp.cubic_linux_friendliness`, tcp/cubic.rs)
//! as a packet script: the test plays the receiver, ACKing every segment in order 10 ms after it
//! was sent; packets are numbered from 1 and "ACK n" expects packet n next. An ECN-Echo makes the
//! cut (RFC 3168 6.1.2: CUBIC's ssthresh as for a loss, cwnd to it) without a hole to repair.
//!
//! Found against the real kernel (docs/linux-vs-kernel.md, `cubic16`): after a loss at 13
//! segments the kernel's cwnd grew a segment about every 40 ms (0.53 per 21 ms round trip) all
//! the way to the receive window, where RFC 9438's estimate, at 1 per round trip from cwnd_prior
//! on, took the model there in about half the time.

mod common;

use common::{linux_rules, started_iw10, MSS, WND};
use hfcsim_core::scenario::{CongestionControlKind, EcnMode};
use hfcsim_core::tcp::sender::Out;
use hfcsim_core::time::SimTime;
use std::collections::BTreeMap;

/// The first ACK number at which cwnd reached each number of segments, through ACK `last`.
fn run(linux: bool, last: u64) -> BTreeMap<u64, u64> {
    let mut cfg = linux_rules();
    cfg.congestion_control = CongestionControlKind::Cubic;
    cfg.cubic_linux_friendliness = linux;
    cfg.ecn = EcnMode::Rfc3168;
    let (mut s, mut out) = started_iw10(cfg, 1000);
    let mut arrivals: Vec<(u64, u64)> = (1..=10).map(|p| (10_000, p)).collect(); // (us, packet)
    let mut first = BTreeMap::new();
    for p in 1..last {
        let (t_us, q) = arrivals.remove(0);
        assert_eq!(q, p, "in order");
        // The first ACK echoes CE (a queue marked packet 1): the cut.
        s.on_ack_ecn(SimTime(t_us * 1000), p * MSS, WND, &[], p == 1, &mut out);
        for sent in segments(&mut out) {
            arrivals.push((t_us + 10_000, sent));
        }
        first.entry(s.cwnd / MSS).or_insert(p + 1);
    }
    first
}

fn segments(out: &mut Vec<Out>) -> Vec<u64> {
    common::sent(out)
}

#[test]
fn linux_gains_a_segment_per_fifteen_eighths_of_a_window() {
    // ACK 2 echoes CE at 10 ms: ssthresh = cwnd = 0.7 x 10 = 7 (tcp_cubic.c bictcp_recalc_ssthresh,
    // W_max 10); no growth while reducing, until an ACK passes packet 10, the last sent before the
    // cut. ACK 12 (packet 11, sent after it) ends the reduction and starts CUBIC's epoch: tcp_cwnd
    // = 7, ack_cnt = 1. Linux's estimate gains a segment when ack_cnt exceeds (cwnd * 15) >> 3
    // segments (tcp_friendliness), the rest carried: 13 at cwnd 7, so 14 ACKs, ACKs 12..=25 (cwnd
    // 8 at ACK 25); then 15 at 8 (ACK 40), 16 at 9 (ACK 56), 18 at 10 (ACK 74), 20 at 11 (ACK 94),
    // 22 at 12 (ACK 116), 24 at 13 (ACK 140), 26 at 14 (ACK 166), 28 at 15 (ACK 194). The cubic
    // curve from W_max 10, K = cbrt(3 / 0.4) = 1.96 s, is at 0.4 (0.2 - 1.96)^3 + 10 = 7.8 after
    // 0.2 s (about 20 round trips, ACK 194): always below, so cwnd is the estimate.
    let linux = run(true, 200);
    let at: Vec<(u64, u64)> = (7..=16).map(|w| (w, linux[&w])).collect();
    assert_eq!(
        at,
        vec![(7, 2), (8, 25), (9, 40), (10, 56), (11, 74), (12, 94), (13, 116), (14, 140), (15, 166), (16, 194)]
    );
    // RFC 9438 4.3: W_est from 7 at alpha = 0.53 per window reaches cwnd_prior = 10 after about 3 /
    // 0.53 = 5.7 windows of 7-10 segments, about as Linux's does (ACK 59 here), then gains a segment
    // per window: 16 segments about 10 + 11 + ... + 15 = 75 ACKs later (ACK 137 here).
    let rfc = run(false, 200);
    assert!(rfc[&16] < 150, "{:?}", rfc);
    assert!(rfc[&10] < linux[&10] + 5 && rfc[&10] > linux[&10] - 10, "{:?}", rfc);
}
