//! `tcp.pacing` (tcp/pacing.rs: Linux's internal pacing) as a packet script: the test hands the
//! sender its SYN-ACK and ACKs at chosen times and reads each segment's departure. Packets are
//! numbered from 1 (packet n is bytes [(n-1)*MSS, n*MSS), MSS = 1460); ACK n expects packet n next.

mod common;

use common::{MS, MSS, WND};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;

/// Reno grown by byte counting (today's path), IW 10, Linux's timer; pacing on or off.
fn sender(pacing: bool) -> Sender {
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.initial_window = 10;
    cfg.byte_counting = true;
    cfg.pacing = pacing;
    Sender::new(cfg, 1000 * MSS, None, Rto::linux(200 * MS, 1000 * MS))
}

fn ack(s: &mut Sender, out: &mut Vec<Out>, t: u64, next: u64) {
    s.on_ack_sack(SimTime(t), (next - 1) * MSS, WND, &[], out);
}

/// The SYN at 0, its SYN-ACK at 10 ms: srtt = 10 ms (the first sample), cwnd = 10 segments,
/// ssthresh unbounded.
fn opened(pacing: bool) -> (Sender, Vec<Out>) {
    let mut s = sender(pacing);
    let mut out = Vec::new();
    s.connect(SimTime(0), &mut out);
    out.clear();
    s.on_syn_ack(SimTime(10 * MS), WND, &mut out);
    (s, out)
}

#[test]
fn segments_leave_at_the_departure_times_of_linux_pacing() {
    let (mut s, mut out) = opened(true);
    // 10 ms: the initial window goes at once. Segments 1-9 do not advance the departure time
    // (data_segs_out < 10); the 10th does, by its 1460 bytes at the rate of cwnd 14600 B / 10 ms at
    // 200 % (cwnd < ssthresh / 2) = 2,920,000 B/s: 500 us. No pacing timer: cwnd is full.
    assert_eq!(common::sent(&mut out), (1..=10).collect::<Vec<_>>());
    assert!(s.next_deadline().unwrap() > SimTime(100 * MS), "only the RTO is due");

    // 20 ms: ACKs of packets 1 and 2 (RTT 10 ms: srtt stays 10 ms). The first opens cwnd to 11
    // segments with 9 in flight: room for 2. Rate 16060 x 2 / 10 ms = 3,212,000 B/s; packet 11 goes
    // at once (the departure time, 10.5 ms, is past), advancing it by 1460 / 3212000 s = 454545 ns
    // less the idle credit (20 - 10.5 ms, capped at half: 227272): 227273 ns, to 20.227273 ms, so
    // packet 12 waits. The second ACK opens cwnd to 12 segments (rate 17520 x 2 / 10 ms =
    // 3,504,000 B/s; room for 12, 13 and 14), and they wait too.
    ack(&mut s, &mut out, 20 * MS, 2);
    assert_eq!(common::sent(&mut out), vec![11]);
    assert_eq!(s.next_deadline(), Some(SimTime(20_227_273)));
    ack(&mut s, &mut out, 20 * MS, 3);
    assert_eq!(common::sent(&mut out), Vec::<u64>::new());
    assert_eq!(s.next_deadline(), Some(SimTime(20_227_273)));

    // The pacing timer: packet 12 at 20.227273 ms; each next departure 1460 / 3504000 s =
    // 416666 ns later: packet 13 at 20.643939 ms, 14 at 21.060605 ms; then cwnd is full.
    s.on_timer(SimTime(20_227_273), &mut out);
    assert_eq!(common::sent(&mut out), vec![12]);
    assert_eq!(s.next_deadline(), Some(SimTime(20_643_939)));
    s.on_timer(SimTime(20_643_939), &mut out);
    assert_eq!(common::sent(&mut out), vec![13]);
    assert_eq!(s.next_deadline(), Some(SimTime(21_060_605)));
    s.on_timer(SimTime(21_060_605), &mut out);
    assert_eq!(common::sent(&mut out), vec![14]);
    assert!(s.next_deadline().unwrap() > SimTime(100 * MS), "cwnd-limited: only the RTO is due");
}

#[test]
fn without_pacing_the_same_acks_release_a_burst() {
    let (mut s, mut out) = opened(false);
    assert_eq!(common::sent(&mut out), (1..=10).collect::<Vec<_>>());
    ack(&mut s, &mut out, 20 * MS, 2);
    ack(&mut s, &mut out, 20 * MS, 3);
    assert_eq!(common::sent(&mut out), vec![11, 12, 13, 14]);
    assert!(s.next_deadline().unwrap() > SimTime(100 * MS));
}
