//! Connection start-up rules, as packet scripts on the sender: who opens the connection sets the
//! first window (Cohen & Ramanathan Sec. VI.A, Net/3), the HTTP header goes alone (NCSA 1.5),
//! Nagle holds a short tail, and a lost SYN waits BSD's 6 s, then 24 s.

mod common;

use common::{sent, MS, MSS, WND};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Action, Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;

fn sender(initial_window: u32, total: u64, header: Option<u32>, nagle: bool) -> Sender {
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.initial_window = initial_window;
    cfg.nagle = nagle;
    Sender::new(cfg, total, header, Rto::bsd(500 * MS, 0))
}

fn lengths(out: &[Out]) -> Vec<u32> {
    out.iter()
        .filter_map(|o| match o.action {
            Action::Segment { len, .. } => Some(len),
            _ => None,
        })
        .collect()
}

#[test]
fn the_active_opener_starts_with_the_initial_window() {
    // FTP-style: the server opens the data connection, SYN-ACK arrives: cwnd = IW = 1 segment.
    let mut s = sender(1, 100 * MSS, None, false);
    let mut out = vec![];
    s.connect(SimTime(0), &mut out);
    s.on_syn_ack(SimTime(22 * MS), WND, &mut out);
    assert_eq!(s.cwnd, MSS);
    assert_eq!(sent(&mut out), vec![1]);
}

#[test]
fn the_accepting_host_starts_one_segment_above() {
    // HTTP-style: the PC opens; the server's SYN-ACK is acknowledged by the handshake's last ACK,
    // which Net/3 processes like any ACK in slow start: cwnd = IW + 1 segment (Cohen Sec. VI.A).
    for (iw, expected) in [(1u32, 2u64), (2, 3)] {
        let mut s = sender(iw, 100 * MSS, None, false);
        let mut out = vec![];
        s.on_syn(SimTime(0), &mut out);
        assert!(matches!(out[0].action, Action::SynAck));
        out.clear();
        s.on_ack(SimTime(22 * MS), 0, WND, &mut out);
        assert_eq!(s.cwnd, expected * MSS);
        assert_eq!(sent(&mut out), (1..=expected).collect::<Vec<_>>());
    }
}

#[test]
fn the_http_header_is_a_segment_of_its_own() {
    // NCSA 1.5 writes the 200-byte response header before the data: with a window of 2 the PC
    // receives 200 + 1460 bytes, less than two full segments, and delays its ACK (C-delack-http).
    let mut s = sender(1, 10_000, Some(200), false);
    let mut out = vec![];
    s.on_syn(SimTime(0), &mut out);
    out.clear();
    s.on_ack(SimTime(22 * MS), 0, WND, &mut out);
    assert_eq!(lengths(&out), vec![200, 1460]);
}

#[test]
fn a_header_longer_than_an_mss_goes_in_mss_segments() {
    // A 3000-byte header with MSS 1460: tcp_output sends at most t_maxseg, so 1460 + 1460 + 80,
    // then the data in segments of its own. It used to be one 3000-byte segment that never fit a
    // window of 2 (the run stopped with the flow unfinished). Window 5: the header and 2 of data.
    let mut s = sender(4, 20_000, Some(3000), false);
    let mut out = vec![];
    s.on_syn(SimTime(0), &mut out);
    out.clear();
    s.on_ack(SimTime(22 * MS), 0, WND, &mut out);
    assert_eq!(lengths(&out), vec![1460, 1460, 80, 1460, 1460]);
    let numbers: Vec<u32> = out
        .iter()
        .filter_map(|o| match o.action {
            Action::Segment { pkt_no, seq, .. } => Some((pkt_no, seq)),
            _ => None,
        })
        .map(|(pkt_no, seq)| {
            assert_eq!(seq, [0, 1460, 2920, 3000, 4460][pkt_no as usize - 1], "packet {pkt_no}");
            pkt_no
        })
        .collect();
    assert_eq!(numbers, vec![1, 2, 3, 4, 5]);
}

#[test]
fn nagle_holds_a_short_tail_until_everything_is_acknowledged() {
    // RFC 896: two full segments and a 100-byte tail, window 3. With Nagle the tail waits.
    let total = 2 * MSS + 100;
    let mut s = sender(3, total, None, true);
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(lengths(&out), vec![1460, 1460]);
    out.clear();
    s.on_ack(SimTime(22 * MS), MSS, WND, &mut out);
    assert!(lengths(&out).is_empty(), "one segment still unacknowledged");
    s.on_ack(SimTime(23 * MS), 2 * MSS, WND, &mut out);
    assert_eq!(lengths(&out), vec![100]);
    // Without Nagle the tail goes at once.
    let mut s = sender(3, total, None, false);
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(lengths(&out), vec![1460, 1460, 100]);
}

#[test]
fn a_lost_syn_waits_six_then_twenty_four_seconds() {
    // Net/3: first RTO 6 s before any RTT sample; back-off x4 at the second (Stevens vol. 1 18.6).
    // With the slow clock's phase at 0 the timer is armed at t = 0 and fires on the 12th tick.
    let mut s = sender(1, 100 * MSS, None, false);
    let mut out = vec![];
    s.connect(SimTime(0), &mut out);
    let first = s.next_deadline().unwrap();
    assert_eq!(first, SimTime(6_000 * MS));
    out.clear();
    s.on_timer(first, &mut out);
    assert!(matches!(out[0].action, Action::Syn));
    assert_eq!(s.next_deadline(), Some(SimTime(30_000 * MS)));
    assert_eq!(s.stats.timeouts, 0, "handshake retransmissions are not data timeouts");
}

#[test]
fn an_initial_ssthresh_ends_slow_start_there() {
    // Elloumi Table 2: slow start up to 8 KB. With ssthresh = 4 segments, each ACK of one segment
    // opens cwnd by a segment while cwnd <= ssthresh (Net/3), then by mss * mss / cwnd.
    let mut cfg = sender(1, 0, None, false).cfg;
    cfg.initial_ssthresh_bytes = Some(4 * MSS);
    let mut s = Sender::new(cfg, 100 * MSS, None, Rto::bsd(500 * MS, 0));
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(s.cc().ssthresh, 4 * MSS);
    let mut windows = vec![];
    for i in 1..=6u64 {
        s.on_ack(SimTime(i * MS), i * MSS, WND, &mut out);
        windows.push(s.cwnd);
    }
    assert_eq!(&windows[..4], &[2 * MSS, 3 * MSS, 4 * MSS, 5 * MSS]);
    assert_eq!(windows[4], 5 * MSS + MSS * MSS / (5 * MSS));
    // Without one, ssthresh starts "infinite" (Net/3's TCP_MAXWIN << 14).
    assert_eq!(sender(1, 100 * MSS, None, false).cc().ssthresh, 65_535 << 14);
}
