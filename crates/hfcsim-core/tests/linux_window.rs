//! Linux's receive window (`receiver.linux_window`, tcp/linux_window.rs), as a packet script: issue
//! 25's cubic5 point, where Linux 6.18 first offered 7,240 B (5 x 1,448) for a 7,300 B SO_RCVBUF and,
//! under loss, 8,688 B (6 x 1,448).
//!
//! The receiver of the linux stack: Linux's delayed ACK with the read's window update and PSH rule,
//! SACK (3 blocks beside the timestamps), segments of 1,448 B (1,460 less 12 of timestamps), advmss
//! 1,460, each segment's memory 2,304 B (TCP_SKB_MIN_TRUESIZE), a passive open. The memory arithmetic:
//! - sk_rcvbuf = 2 x 7,300 = 14,600; at the default ratio 128/256 its window is 7,300;
//! - the SYN-ACK offers 7,300 rounded down to 1,448: 7,240; the clamp is 7,300;
//! - at ESTABLISHED one segment is reserved: clamp max(2 x 1,460, 7,300 - 1,460) = 5,840, rcv_ssthresh
//!   5,840;
//! - the first full segment measures the ratio: 1,448 x 256 / 2,304 = 160 (160.9); the clamp becomes
//!   14,600 x 160 / 256 = 9,125 and rcv_ssthresh min(rcv_wnd 7,240, 9,125) = 7,240;
//! - tcp_space with n segments queued: (14,600 - 2,304 n) x 160 / 256: 9,125, 7,685, 6,245 for n = 0, 1, 2.

use hfcsim_core::tcp::receiver::{AckRule, Action, Receiver, ReceiverConfig, ReceiverRules};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::MAX_SCALED_WINDOW;
use hfcsim_core::time::SimTime;

const MS: u64 = 1_000_000;
const SEG: u64 = 1448;

fn receiver(linux_window: bool, sack_blocks: u8) -> Receiver {
    let cfg = ReceiverConfig {
        rules: ReceiverRules {
            delayed_ack: true,
            ack_rule: AckRule::Linux,
            ack_on_read: true,
            ack_on_push: true,
            linux_window,
            skb_truesize_bytes: 2304,
            ..hfcsim_core::Scenario::cohen_default().receiver
        },
        mss: SEG,
        receive_buffer: 7300,
        delack_tick: 40 * MS,
        delack_phase: 0,
        sack_blocks,
        max_window: MAX_SCALED_WINDOW,
    };
    Receiver::new(cfg, 1_000_000, Rto::linux(200 * MS, 1000 * MS)).with_advmss(1460)
}

/// Segment n (bytes [(n-1) x 1,448, n x 1,448)) arrives at `ms`: the ACKs it draws, as (segments
/// acknowledged, window).
fn seg(r: &mut Receiver, ms: u64, n: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    r.on_data(SimTime(ms * MS), (n - 1) * SEG, SEG as u32, &mut out);
    out.iter()
        .map(|a| match *a {
            Action::Ack { ack, wnd, .. } => (ack / SEG, wnd),
            _ => panic!("only ACKs"),
        })
        .collect()
}

#[test]
fn the_first_offers_and_the_growth_under_loss() {
    let mut r = receiver(true, 3);
    let mut out = Vec::new();
    r.on_syn(&mut out);
    assert_eq!(out, vec![Action::SynAck]);
    assert_eq!(r.window(), 7240, "the SYN-ACK's window: 7,300 rounded down to 5 x 1,448");

    // Segment 1: quick-ACK mode (tcp_incr_quickack: 7,240 / 2,896 = 2), and tcp_grow_window with the
    // segment queued: room min(9,125, 7,685) - 7,240 = 445, so rcv_ssthresh 7,685 and quick |= 1 (3).
    // The ACK goes before the read: free 7,685, at most rcv_ssthresh 7,685; the last offer 7,240 is
    // within one MSS below it (7,240 > 7,685 - 1,448), so it stands.
    assert_eq!(seg(&mut r, 0, 1), vec![(1, 7240)]);
    let w = *r.linux_window().unwrap();
    assert_eq!((w.ratio, w.window_clamp, w.rcv_ssthresh), (160, 9125, 7685));
    // Segments 2 and 3: the last two quick ACKs; no room to grow (7,685 - 7,685 = 0).
    assert_eq!(seg(&mut r, 1, 2), vec![(2, 7240)]);
    assert_eq!(seg(&mut r, 2, 3), vec![(3, 7240)]);
    // Segment 4 waits (one MSS unacknowledged; the read leaves 5 x 1,448 offered, 2 x 5,792 > 9,125).
    assert_eq!(seg(&mut r, 3, 4), vec![]);
    // Segment 5: two unacknowledged, and the window now (free 7,685: 7,240 stands) is rcv_wnd: at once.
    assert_eq!(seg(&mut r, 4, 5), vec![(5, 7240)]);
    // Lossless, that is all it offers: 7,240, as the kernel did at 0 % loss.

    // Segment 6 is lost. Segment 7 arrives out of order: with SACK, tcp_data_queue_ofo grows
    // rcv_ssthresh before charging it: room min(9,125, 9,125) - 7,685 = 1,440, so 9,125. Its ACK
    // counts it: free 7,685, and 7,240 stands.
    assert_eq!(seg(&mut r, 20, 7), vec![(5, 7240)]);
    assert_eq!(r.linux_window().unwrap().rcv_ssthresh, 9125);
    // The retransmission of 6 fills the gap: 6 and 7 queued, unread: free 6,245, below the offer 7,240
    // by more than nothing, rounded down: 4 x 1,448 = 5,792 (what was left, 7,240 - 2 x 1,448 =
    // 4,344, is less). The read then finds 5,792 offered, and 2 x 5,792 > 9,125: no update.
    assert_eq!(seg(&mut r, 25, 6), vec![(7, 5792)]);
    // Segment 8, read at once: 4,344 left of the offer, 2 x 4,344 = 8,688 <= 9,125, and the window with
    // nothing queued is free 9,125 at most rcv_ssthresh 9,125, the offer 5,792 more than an MSS below:
    // rounded down, 6 x 1,448 = 8,688 >= 8,688: the read's window update: the growth step.
    assert_eq!(seg(&mut r, 26, 8), vec![(8, 8688)]);
}

#[test]
fn without_sack_the_window_does_not_grow() {
    // tcp_data_queue_ofo grows the window only with SACK ("to force DUPACK"): rcv_ssthresh stays
    // 7,685, and after the same loss the read's update offers 7,685 rounded down: 7,240.
    let mut r = receiver(true, 0);
    r.on_syn(&mut Vec::new());
    for (ms, n) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)] {
        seg(&mut r, ms, n);
    }
    assert_eq!(seg(&mut r, 20, 7), vec![(5, 7240)]);
    assert_eq!(r.linux_window().unwrap().rcv_ssthresh, 7685);
    assert_eq!(seg(&mut r, 25, 6), vec![(7, 5792)]);
    // Segment 8: the window the read could offer, 7,240, is not twice the 4,344 left: it waits. At
    // segment 9 two are unacknowledged, and the window with 9 queued (free 7,685 at most 7,685, the
    // offer 5,792 more than an MSS below: 7,240) is at least the last: 5 segments again.
    assert_eq!(seg(&mut r, 26, 8), vec![]);
    assert_eq!(seg(&mut r, 27, 9), vec![(9, 7240)]);
}

#[test]
fn without_the_rule_every_ack_offers_the_buffer() {
    // receiver.linux_window off: the window is the buffer as given (the engine rounds it first,
    // tcp.buffer_rounding), whatever is queued: the script's windows above do not appear.
    let mut r = receiver(false, 3);
    r.on_syn(&mut Vec::new());
    let mut windows: Vec<u64> = Vec::new();
    for (ms, n) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (20, 7), (25, 6), (26, 8)] {
        windows.extend(seg(&mut r, ms, n).iter().map(|&(_, w)| w));
    }
    assert!(windows.iter().all(|&w| w == 7300), "{windows:?}");
}
