//! ns-2.35's Agent/TCP/Reno and TCPSink/DelAck (`tcp.stack = "ns2"`), rule by rule, as packet
//! scripts worked by hand. Packets are numbered from 1 (packet n is bytes [(n-1)*MSS, n*MSS)); ns-2
//! numbers them from 0. The functions cited are ns-2.35's tcp/tcp.cc, tcp/tcp-reno.cc and
//! tcp/tcp-sink.cc.

mod common;

use common::{sent, MS, MSS};
use hfcsim_core::scenario::FastRecovery;
use hfcsim_core::tcp::receiver::{AckRule, Action as RxAction, Receiver, ReceiverConfig, ReceiverRules};
use hfcsim_core::tcp::rto::{Ns2Rto, Rto};
use hfcsim_core::tcp::sender::{Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;

const TICK: u64 = 500 * MS;

/// The ns2 stack's sender rules, a window of `window` packets (ns-2 `window_`).
fn ns2(window: u64) -> SenderConfig {
    let mut cfg = SenderConfig::reno(MSS, window * MSS);
    cfg.recover_guard = true;
    cfg.fast_recovery = FastRecovery::Ns2;
    cfg.slow_start_at_ssthresh = false;
    cfg
}

/// A sender with packets 1..10 acknowledged, cwnd `cwnd_pkts` (bytes: fractional packets allowed)
/// and ssthresh `ssthresh` packets; it has just sent what the window allows from 11 on.
fn sender(cfg: SenderConfig, cwnd: u64, ssthresh: u64) -> (Sender, Vec<Out>) {
    let window = cfg.send_buffer;
    let mut s = Sender::new(cfg, 1000 * MSS, None, Rto::ns2(TICK, 0, None));
    let mut out = vec![];
    s.establish(SimTime(0), window, &mut out);
    out.clear();
    s.snd_una = 10 * MSS;
    s.snd_nxt = 10 * MSS;
    s.snd_max = 10 * MSS;
    s.cwnd = cwnd;
    s.ssthresh = ssthresh * MSS;
    s.output(SimTime(0), &mut out);
    (s, out)
}

/// "ACK n" (the sink expects packet n) arrives at `t_ms`; the window never changes in ns-2.
fn ack(s: &mut Sender, out: &mut Vec<Out>, t_ms: u64, packet: u64) {
    let wnd = s.cfg.send_buffer;
    s.on_ack(SimTime(t_ms * MS), (packet - 1) * MSS, wnd, out);
}

#[test]
fn fast_retransmit_halves_cwnd_exactly_and_keeps_the_inflation_apart() {
    // window_ 5, cwnd_ 5 (ssthresh 5: congestion avoidance), 11..15 in flight, 11 lost.
    let (mut s, mut out) = sender(ns2(5), 5 * MSS, 5);
    assert_eq!(sent(&mut out), (11..=15).collect::<Vec<_>>());
    // 12, 13, 14 arrive: the third dupACK runs dupack_action -> reno_action.
    // slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF): halfwin = windowd() / 2 = min(5, 5) / 2 = 2.5;
    // ssthresh_ = (int) 2.5 = 2; cwnd_ = 2.5 (Net/3 would set cwnd = ssthresh + 3 = 5 segments).
    // output(last_ack_ + 1) resends 11; dupwnd_ = 3; send_much: window int(2.5) + 3 = 5 packets
    // above snd_una, 11..15, all sent: nothing new.
    for t in 20..23 {
        ack(&mut s, &mut out, t, 11);
    }
    assert_eq!(sent(&mut out), vec![11]);
    assert_eq!((s.ssthresh, s.cwnd, s.dupwnd), (2 * MSS, 5 * MSS / 2, 3 * MSS));
    // 15 arrives: ++dupwnd_ = 4; RenoTcpAgent::window: min(int(2.5) + 4, wnd_ 5) = 5: nothing new.
    ack(&mut s, &mut out, 23, 11);
    assert_eq!(sent(&mut out), Vec::<u64>::new());
    assert_eq!(s.dupwnd, 4 * MSS);
    // The retransmitted 11 arrives: ACK 16. RenoTcpAgent::recv: dupwnd_ = 0; opencwnd with
    // cwnd_ 2.5 >= ssthresh_ 2: cwnd_ += 1 / 2.5 -> 2.9 packets (bytes: 3650 + 1460^2 / 3650 = 4234).
    // Window int(2.9) = 2 above 15: 16 and 17 go.
    ack(&mut s, &mut out, 60, 16);
    assert_eq!((s.cwnd, s.dupwnd, s.dupacks), (3650 + 1460 * 1460 / 3650, 0, 0));
    assert_eq!(sent(&mut out), vec![16, 17]);
}

#[test]
fn bugfix_refuses_a_second_fast_retransmit_and_inflates_nothing() {
    // As above up to the fast retransmit of 11 (recover_ = maxseq_ = 15), then a partial ACK: 11
    // arrives but 13 was lost too. ACK 13 < recover: RenoTcpAgent::recv zeroes dupwnd_ and sets
    // last_cwnd_action_ = CWND_ACTION_EXITED; opencwnd: 2.5 + 0.4.
    let (mut s, mut out) = sender(ns2(5), 5 * MSS, 5);
    sent(&mut out);
    for t in 20..23 {
        ack(&mut s, &mut out, t, 11);
    }
    assert_eq!(sent(&mut out), vec![11]);
    ack(&mut s, &mut out, 60, 13);
    assert_eq!(s.dupwnd, 0);
    // Window int(2.9) = 2 above 12: 13, 14 are out already: nothing.
    assert_eq!(sent(&mut out), Vec::<u64>::new());
    // Three dupACKs of 13: dupack_action: highest_ack_ (12) > recover_ (15)? no; bug_fix_: return.
    // A fourth and fifth: dupacks_ > numdupacks_ but last_cwnd_action_ is EXITED, not DUPACK
    // (exitFastRetrans_): no ++dupwnd_. Nothing is sent; the timer will have to fire.
    for t in 61..66 {
        ack(&mut s, &mut out, t, 13);
    }
    assert_eq!(sent(&mut out), Vec::<u64>::new());
    assert_eq!((s.dupwnd, s.stats.fast_retransmits), (0, 1));
}

#[test]
fn timeout_halves_the_uninflated_window() {
    // window_ 16, cwnd_ 12: fast retransmit (ssthresh 6, cwnd_ 6, dupwnd_ 3), two more dupACKs
    // (dupwnd_ 5), then the timer. RenoTcpAgent::timeout: dupwnd_ = 0 first, so TcpAgent::timeout's
    // slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART) halves windowd() = min(6, 16) = 6: ssthresh 3,
    // cwnd 1, and go-back-N from 11.
    let (mut s, mut out) = sender(ns2(16), 12 * MSS, 12);
    assert_eq!(sent(&mut out), (11..=22).collect::<Vec<_>>());
    for t in 20..25 {
        ack(&mut s, &mut out, t, 11);
    }
    assert_eq!((s.ssthresh, s.cwnd, s.dupwnd), (6 * MSS, 6 * MSS, 5 * MSS));
    out.clear();
    let at = s.next_deadline().unwrap();
    s.on_timer(at, &mut out);
    assert_eq!(sent(&mut out), vec![11]);
    assert_eq!((s.ssthresh, s.cwnd, s.dupwnd), (3 * MSS, MSS, 0));
}

#[test]
fn opencwnd_slow_starts_only_below_ssthresh() {
    // cwnd_ 4 = ssthresh_ 4: TcpAgent::opencwnd `if (cwnd_ < ssthresh_)` is false, so the ACK adds
    // 1/4 packet; Net/3 (`cw > snd_ssthresh` false) would add a whole segment.
    let (mut s, mut out) = sender(ns2(16), 4 * MSS, 4);
    sent(&mut out);
    ack(&mut s, &mut out, 20, 12);
    assert_eq!(s.cwnd, 4 * MSS + MSS / 4);
    let (mut bsd, mut out) = sender(SenderConfig::reno(MSS, 16 * MSS), 4 * MSS, 4);
    sent(&mut out);
    ack(&mut bsd, &mut out, 20, 12);
    assert_eq!(bsd.cwnd, 5 * MSS);
}

#[test]
fn timer_arithmetic_by_hand() {
    // rtt_init: t_rtxcur_ = rtxcur_init_ = 3 s; rtt_timeout = 3 s * t_backoff_ 1.
    let mut r = Ns2Rto::new(TICK, 0, 3000 * MS);
    assert_eq!(r.timeout(), 3000 * MS);
    // rtt_update, samples (ticks) 1, 1, 3, 1.
    // First: t_srtt_ = 1 << 3 = 8, t_rttvar_ = 1 << 1 = 2; t_rtxcur_ = ((2 << 3) + 8) >> 3 = 3 ticks.
    r.sample_ticks(1);
    assert_eq!((r.srtt, r.rttvar, r.rtxcur), (8, 2, 3 * TICK));
    // delta = 1 - (8 >> 3) = 0 (no origin-0 adjustment, unlike Net/3); srtt 8; rttvar += 0 - (2 >> 2)
    // = 0: 2; rtxcur 3 ticks.
    r.sample_ticks(1);
    assert_eq!((r.srtt, r.rttvar, r.rtxcur), (8, 2, 3 * TICK));
    // delta = 3 - 1 = 2; srtt 10; rttvar += 2 - 0 = 4; ((4 << 3) + 10) >> 3 = 42 >> 3 = 5 ticks.
    r.sample_ticks(3);
    assert_eq!((r.srtt, r.rttvar, r.rtxcur), (10, 4, 5 * TICK));
    // delta = 1 - 1 = 0; srtt 10; rttvar += 0 - 1 = 3; (24 + 10) >> 3 = 4 ticks.
    r.sample_ticks(1);
    assert_eq!((r.srtt, r.rttvar, r.rtxcur), (10, 3, 4 * TICK));
}

#[test]
fn timer_fires_exactly_rto_after_arming_and_never_below_two_ticks() {
    // set_rtx_timer: resched(rtt_timeout()): armed at 0.3 s with 3 s, it fires at 3.3 s, not on a tick.
    let r = Rto::ns2(TICK, 100 * MS, None);
    assert_eq!(r.deadline(SimTime(300 * MS)), SimTime(3300 * MS));
    // A 200 ms tick and 1-tick samples: t_rtxcur_ = 3 ticks = 600 ms; with t_srtt_ = 8, t_rttvar_ = 1
    // it would be (8 + 8) >> 3 = 2 ticks; rtt_timeout never goes below 2 ticks.
    let mut n = Ns2Rto::new(200 * MS, 0, 3000 * MS);
    n.sample_ticks(1);
    assert_eq!(n.timeout(), 600 * MS);
    n.rttvar = 1;
    n.rtxcur = 200 * MS;
    assert_eq!(n.timeout(), 400 * MS);
}

#[test]
fn rtt_sample_counts_ticks_crossed_from_the_boot_phase() {
    // rtt_update: t_rtt_ = int((tao + fmod(sendtime + boot_time_, tcp_tick_)) / tcp_tick_), at least
    // 1. Ticks at 0.1, 0.6, 1.1 s: sent 0.05 s, ACKed 0.65 s crosses two -> 2 (Net/3 would count 3).
    let mut r = Rto::ns2(TICK, 100 * MS, None);
    r.sample(SimTime(50 * MS), SimTime(650 * MS));
    let Rto::Ns2(n) = &r else { unreachable!() };
    assert_eq!((n.srtt, n.rttvar), (16, 4));
    // A 20 ms RTT crossing no tick still counts 1.
    let mut r = Rto::ns2(TICK, 100 * MS, None);
    r.sample(SimTime(200 * MS), SimTime(220 * MS));
    let Rto::Ns2(n) = &r else { unreachable!() };
    assert_eq!((n.srtt, n.rttvar), (8, 2));
}

#[test]
fn backoff_doubles_to_maxrto_and_ns2_never_gives_up() {
    // rtt_backoff with rfc2988_: t_backoff_ doubles while below 64 or while rtt_timeout() < maxrto_;
    // the timeout is capped at 60 s. 3, 6, 12, 24, 48, 60, 60, ...
    let mut r = Rto::ns2(TICK, 0, None);
    let mut seen = vec![r.current() / 1000 / MS];
    for _ in 0..20 {
        assert!(r.on_timeout());
        seen.push(r.current() / 1000 / MS);
    }
    assert_eq!(&seen[..7], &[3, 6, 12, 24, 48, 60, 60]);
    // Past t_backoff_ 8 srtt is folded into rttvar: the next sample starts afresh.
    let Rto::Ns2(n) = &r else { unreachable!() };
    assert_eq!(n.srtt, 0);
}

fn sink(interval_ms: u64) -> Receiver {
    let cfg = ReceiverConfig {
        rules: ReceiverRules {
            delayed_ack: true,
            ack_rule: AckRule::Ns2,
            ack_on_read: false,
            ..hfcsim_core::Scenario::cohen_default().receiver
        },
        mss: MSS,
        receive_buffer: 5 * MSS,
        delack_tick: interval_ms * MS,
        delack_phase: 0,
        sack_blocks: 0,
        max_window: u64::MAX,
    };
    let mut r = Receiver::new(cfg, 1000 * MSS, Rto::ns2(TICK, 0, None));
    r.establish();
    r
}

/// Packet `n` arrives at `t_ms`; the ACKs sent (the packet the sink expects next).
fn data(r: &mut Receiver, t_ms: u64, n: u64) -> Vec<u64> {
    let mut out = vec![];
    r.on_data(SimTime(t_ms * MS), (n - 1) * MSS, MSS as u32, &mut out);
    out.iter()
        .map(|a| match a {
            RxAction::Ack { ack, .. } => ack / MSS + 1,
            _ => panic!("only ACKs"),
        })
        .collect()
}

#[test]
fn delack_sink_acks_every_second_packet_or_interval_after_a_lone_one() {
    let mut r = sink(100);
    // DelAckSink::recv: 1 is in order, no timer: save it, resched(interval_) -> fires at 105 ms.
    assert_eq!(data(&mut r, 5, 1), Vec::<u64>::new());
    assert_eq!(r.next_deadline(), Some(SimTime(105 * MS)));
    // 2: the timer is pending: cancel it and ACK.
    assert_eq!(data(&mut r, 7, 2), vec![3]);
    assert_eq!(r.next_deadline(), None);
    // 3 alone: the timer fires exactly interval_ later (not on a global tick), and ACKs it.
    assert_eq!(data(&mut r, 40, 3), Vec::<u64>::new());
    let mut out = vec![];
    r.on_timer(SimTime(139 * MS), &mut out);
    assert!(out.is_empty());
    r.on_timer(SimTime(140 * MS), &mut out);
    assert_eq!(out, vec![RxAction::Ack { ack: 3 * MSS, wnd: 5 * MSS, ece: false, dsack: false }]);
}

#[test]
fn delack_sink_acks_out_of_order_and_gap_filling_packets_at_once() {
    let mut r = sink(100);
    assert_eq!(data(&mut r, 0, 1), Vec::<u64>::new());
    // 3 (2 missing): seqno != Seqno(): cancel the timer, ACK at once (a dupACK of 2).
    assert_eq!(data(&mut r, 1, 3), vec![2]);
    assert_eq!(data(&mut r, 2, 5), vec![2]);
    assert_eq!(r.next_deadline(), None);
    // 2 fills the first gap; 4 is still missing above it: Seqno() is 3, not 2 -> ACK at once.
    assert_eq!(data(&mut r, 3, 2), vec![4]);
    // 4 fills the last gap: Seqno() = 5 != 4 -> at once.
    assert_eq!(data(&mut r, 4, 4), vec![6]);
    // A duplicate of 1: at once.
    assert_eq!(data(&mut r, 5, 1), vec![6]);
}

#[test]
fn delack_sink_delays_a_copy_of_the_highest_in_order_packet() {
    // The ACK of 1 was lost and the sender's timer resends 1: seqno == Seqno() and no timer, so
    // DelAckSink::recv saves it and waits interval_ again; a copy of an older packet is ACKed at once.
    let mut r = sink(100);
    assert_eq!(data(&mut r, 0, 1), Vec::<u64>::new());
    let mut out = vec![];
    r.on_timer(SimTime(100 * MS), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(data(&mut r, 3000, 1), Vec::<u64>::new());
    assert_eq!(r.next_deadline(), Some(SimTime(3100 * MS)));
    assert_eq!(data(&mut r, 3001, 2), vec![3]);
    assert_eq!(data(&mut r, 3002, 1), vec![3]);
}
