//! The persist timer (tcp/sender/persist.rs) as packet scripts (issue 36): a sender with data, nothing
//! in flight and a window too small for its next segment probes until the window opens, and sends a
//! piece of a segment into a window smaller than one (RFC 1122 4.2.2.17, 4.2.3.4). Before it, such a
//! sender waited for an ACK that never came: its flow stood still until the time limit.
//!
//! Packets are numbered from 1 on the MSS grid (packet n is bytes [(n-1) x MSS, n x MSS)).

mod common;

use common::{linux_rules, sent, MS, MSS, WND};
use hfcsim_core::scenario::BufferRounding;
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Action, Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;

const SEC: u64 = 1000 * MS;

fn probes(out: &mut Vec<Out>) -> usize {
    let n = out.iter().filter(|o| matches!(o.action, Action::WindowProbe { .. })).count();
    out.clear();
    n
}

/// The segments sent, as (seq, len).
fn segments(out: &mut Vec<Out>) -> Vec<(u64, u32)> {
    let v = out
        .iter()
        .filter_map(|o| match o.action {
            Action::Segment { seq, len, .. } => Some((seq, len)),
            _ => None,
        })
        .collect();
    out.clear();
    v
}

#[test]
fn net3_probes_a_closed_window_at_tcp_setpersist_intervals() {
    // 4.4BSD (Stevens vol. 2, 25.5): no RTT measured yet, t_srtt = 0 and t_rttvar = 24 (3 s of
    // 500 ms ticks, scaled by 4): tcp_setpersist's t = ((0 >> 2) + 24) >> 1 = 12 ticks, times
    // tcp_backoff[t_rxtshift] (1, 2, 4, 8, 16, ...), within [10, 120] ticks (5 s, 60 s). The timer
    // counts slow ticks (phase 0: at 0.5 s, 1 s, ...): armed at 0, the 12th tick is at 6 s.
    let mut s = Sender::new(SenderConfig::reno(MSS, WND), 100 * MSS, None, Rto::bsd(500 * MS, 0));
    let mut out = vec![];
    s.establish(SimTime(0), 0, &mut out);
    assert!(segments(&mut out).is_empty());
    let mut expiries = vec![];
    let mut at = s.next_deadline().expect("the persist timer runs");
    for _ in 0..6 {
        expiries.push(at.0 / MS);
        s.on_timer(at, &mut out);
        assert_eq!(probes(&mut out), 1, "a window probe at each expiry");
        at = s.next_deadline().unwrap();
    }
    // Re-armed at each expiry: 24, 48, 96, then 120 ticks (TCPTV_PERSMAX).
    assert_eq!(expiries, vec![6_000, 18_000, 42_000, 90_000, 150_000, 210_000]);
    // The window opens (the probe's ACK): tcp_input's window update sends at once (Stevens vol. 2,
    // 29.7: an ACK of snd_una with a larger window sets needoutput), and the retransmission timer
    // replaces the persist timer.
    s.on_ack(SimTime(210_100 * MS), 0, 2 * MSS, &mut out);
    assert_eq!(sent(&mut out), vec![1]);
    assert_eq!(s.next_deadline(), Some(SimTime(210_500 * MS + 11 * 500 * MS)), "the RTO, 12 ticks");
}

/// A Net/3 sender (IW 2, 500 ms ticks) whose two segments are ACKed with a window of 1,000 B: silly-window
/// avoidance sends nothing, and the persist timer's expiry (returned) sends the 1,000 B piece.
fn net3_piece_into_a_1000_b_window() -> (Sender, SimTime, Vec<Out>) {
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.initial_window = 2;
    let mut s = Sender::new(cfg, 100 * MSS, None, Rto::bsd(500 * MS, 0));
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(sent(&mut out), vec![1, 2]);
    s.on_ack(SimTime(400 * MS), 2 * MSS, 1000, &mut out);
    assert!(segments(&mut out).is_empty());
    let at = s.next_deadline().expect("persisting");
    s.on_timer(at, &mut out);
    assert_eq!(segments(&mut out), vec![(2 * MSS, 1000)]);
    (s, at, out)
}

#[test]
fn net3_sends_into_a_window_smaller_than_a_segment_only_when_the_persist_timer_forces_it() {
    // A 64-segment window, then everything ACKed with a window of 1,000 B: less than a segment and
    // less than half the largest window offered (max_sndwnd), so the sender's silly-window avoidance
    // (Stevens vol. 2, 26.3) sends nothing, and the persist timer runs. At its expiry tcp_output with
    // t_force sends what the window allows, 1,000 B, and the retransmission timer takes over.
    let (mut s, at, mut out) = net3_piece_into_a_1000_b_window();
    // The next segments start where that one ended, MSS-sized again.
    s.on_ack(at + 100 * MS, 2 * MSS + 1000, 3 * MSS, &mut out);
    let next = segments(&mut out);
    assert_eq!(next[0], (2 * MSS + 1000, MSS as u32));
}

#[test]
fn net3_resends_a_lost_piece_into_the_small_window_at_its_timeout() {
    // The persist timer's piece of 1,000 B into a 1,000 B window is lost. At the RTO, go-back-N takes
    // snd_nxt back to snd_una, where the next segment is a whole MSS again, more than the window: Net/3
    // resends what the window takes ("If retransmitting ... then must resend", Stevens vol. 2, 26.3)
    // and keeps the retransmission timer running. (Before, nothing went and no timer ran: the flow
    // stood still, found with the linux stack's Tahoe on a 600 B SO_RCVBUF with loss.)
    let (mut s, _, mut out) = net3_piece_into_a_1000_b_window();
    let rto = s.next_deadline().expect("the retransmission timer");
    s.on_timer(rto, &mut out);
    assert_eq!(segments(&mut out), vec![(2 * MSS, 1000)], "the piece again");
    assert!(s.next_deadline().is_some_and(|t| t > rto), "the retransmission timer runs on");
}

#[test]
fn linux_probes_with_the_probe_timer_and_sends_a_window_sized_segment() {
    // Linux (tcp_check_probe_timer, tcp_probe_timer, tcp_send_probe0, tcp_ack_probe, tcp_write_wakeup),
    // no RTT sample yet: icsk_rto = TCP_TIMEOUT_INIT, 1 s; tcp_probe0_base = max(1 s, 200 ms).
    let mut s = Sender::new(linux_rules(), 100 * MSS, None, Rto::linux(200 * MS, SEC));
    let mut out = vec![];
    s.establish(SimTime(0), 0, &mut out);
    assert!(segments(&mut out).is_empty());
    assert_eq!(s.next_deadline(), Some(SimTime(SEC)), "tcp_check_probe_timer: the base, no back-off");
    s.on_timer(SimTime(SEC), &mut out);
    assert_eq!(probes(&mut out), 1);
    // The probe's ACK, still a zero window: tcp_ack_probe restarts the timer from now at the base
    // shifted by the back-off (1): 1.02 + 2 s.
    s.on_ack(SimTime(1020 * MS), 0, 0, &mut out);
    assert_eq!(s.next_deadline(), Some(SimTime(3020 * MS)));
    s.on_timer(SimTime(3020 * MS), &mut out);
    assert_eq!(probes(&mut out), 1);
    // A window of 1,000 B, less than a segment: nothing goes (tcp_snd_wnd_test), the timer restarts
    // at the back-off 2: 3.04 + 4 s.
    s.on_ack(SimTime(3040 * MS), 0, 1000, &mut out);
    assert!(segments(&mut out).is_empty());
    assert_eq!(s.next_deadline(), Some(SimTime(7040 * MS)));
    // tcp_write_wakeup: a segment of min(window, MSS) = 1,000 B, PSH, outside cwnd; the RTO follows.
    s.on_timer(SimTime(7040 * MS), &mut out);
    assert_eq!(segments(&mut out), vec![(0, 1000)]);
    assert_eq!(s.next_deadline(), Some(SimTime(8040 * MS)), "the RTO (1 s) replaces the probe timer");
    // Its ACK opens two segments' window: they start at 1,000.
    s.on_ack(SimTime(7060 * MS), 1000, 2 * MSS, &mut out);
    assert_eq!(segments(&mut out), vec![(1000, MSS as u32), (1000 + MSS, MSS as u32)]);
}

#[test]
fn linux_gives_up_after_fifteen_probes_without_an_ack() {
    // tcp_probe_timer: icsk_probes_out reaches tcp_retries2 (15) with no ACK in between: tcp_write_err.
    let mut s = Sender::new(linux_rules(), 100 * MSS, None, Rto::linux(200 * MS, SEC));
    let mut out = vec![];
    s.establish(SimTime(0), 0, &mut out);
    let mut n = 0;
    while let Some(at) = s.next_deadline() {
        s.on_timer(at, &mut out);
        n += probes(&mut out);
    }
    assert_eq!(n, 15);
    assert!(s.gave_up());
}

#[test]
fn linux_grows_a_send_buffer_it_was_not_given_with_cwnd() {
    // tcp.sndbuf_autotuning (tcp/sender.rs SndbufAuto): sk_sndbuf starts at tcp_wmem[1] = 16,384, half
    // of it in flight (5 x 1,460); at ESTABLISHED tcp_sndbuf_expand makes it 2 x max(10, cwnd 10) x
    // per_mss, per_mss = roundup_pow_of_two(1,460 + 192 + 320) + 256 = 2,304: 46,080, in flight
    // 23,040, 15 segments.
    let mut cfg = linux_rules();
    cfg.sndbuf_autotuning = true;
    cfg.buffer_rounding = BufferRounding::Down; // the linux stack's
    let mut s = Sender::new(cfg, 1000 * MSS, None, Rto::linux(200 * MS, SEC));
    assert_eq!(s.send_buffer(), 5 * MSS);
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(s.send_buffer(), 15 * MSS);
    assert_eq!(sent(&mut out), (1..=10).collect::<Vec<_>>());
    // The ten ACKed at 100 ms: slow start by the bytes, cwnd 20; the buffer lets 15 fly (11..25).
    // After the send the application is still held back and 15 < cwnd 20 packets are in flight:
    // tcp_new_space expands it to 2 x 20 x 2,304 = 92,160, 46,080 in flight, 31 segments.
    s.on_ack_sack(SimTime(100 * MS), 10 * MSS, WND, &[], &mut out);
    assert_eq!(sent(&mut out), (11..=25).collect::<Vec<_>>());
    assert_eq!(s.send_buffer(), 31 * MSS);
    // The next ACK's sends use it: cwnd 21, pipe 14, seven more (26..32).
    s.on_ack_sack(SimTime(110 * MS), 11 * MSS, WND, &[], &mut out);
    assert_eq!(sent(&mut out), (26..=32).collect::<Vec<_>>());
}

#[test]
fn an_explicit_send_buffer_is_locked() {
    // SO_SNDBUF sets SOCK_SNDBUF_LOCK: no tcp_sndbuf_expand, ever.
    let mut s = Sender::new(linux_rules(), 1000 * MSS, None, Rto::linux(200 * MS, SEC));
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(s.send_buffer(), WND);
    s.on_ack_sack(SimTime(100 * MS), 10 * MSS, WND, &[], &mut out);
    assert_eq!(s.send_buffer(), WND);
}
