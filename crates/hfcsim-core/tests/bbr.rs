//! BBR v1 (tcp/bbr.rs, tcp/rate.rs) against a hand-made path: the sender's segments queue at a
//! bottleneck that serves one 1460-byte segment per `SERVICE` ns, in order, and reach the receiver
//! `PROP` later; each segment's ACK (cumulative, one per segment) is back `PROP` after that. So
//! the min RTT is SERVICE + 2 PROP and the bottleneck's rate 1 segment per SERVICE. The test reads
//! the sender's BBR state and pacing rate after every ACK.

mod common;

use common::{MS, MSS};
use hfcsim_core::scenario::CongestionControlKind;
use hfcsim_core::tcp::bbr::{Mode, BBR_UNIT, BW_UNIT, HIGH_GAIN};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Action, Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;
use std::collections::VecDeque;

/// A window no run here reaches.
const WND: u64 = 100_000 * MSS;

fn sender(cc: CongestionControlKind, seed: u64, total: u64) -> Sender {
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.initial_window = 10;
    cfg.byte_counting = true;
    cfg.sack = true;
    cfg.congestion_control = cc;
    cfg.cc_stream = (seed, hfcsim_core::rng::component::bbr_cycle(0));
    Sender::new(cfg, total, None, Rto::linux(200 * MS, 1000 * MS))
}

/// What the test sees after an ACK.
#[derive(Clone, Copy, Debug)]
struct Row {
    t: u64,
    /// Packets acknowledged.
    acked: u64,
    cwnd: u64,
    rate: Option<u64>,
    mode: Option<Mode>,
    gain: u64,
    /// Segments at the bottleneck (queued or in service) when the ACK arrived.
    queue: u64,
}

struct Path {
    service: u64,
    prop: u64,
    free_at: u64,
    /// Departure times from the bottleneck of the segments in it.
    inside: VecDeque<u64>,
    /// (arrival time, ACK) in order.
    acks: VecDeque<(u64, u64)>,
    sent: u64,
    /// The handshake's RTT (its small segments queue nowhere).
    syn_rtt: u64,
}

impl Path {
    fn new(service: u64, prop: u64) -> Path {
        Path {
            service,
            prop,
            free_at: 0,
            inside: VecDeque::new(),
            acks: VecDeque::new(),
            sent: 0,
            syn_rtt: service + 2 * prop,
        }
    }

    fn send(&mut self, t: u64, end: u64) {
        self.sent += 1;
        let depart = self.free_at.max(t) + self.service;
        self.free_at = depart;
        self.inside.push_back(depart);
        self.acks.push_back((depart + 2 * self.prop, end));
    }

    fn queue(&mut self, t: u64) -> u64 {
        while self.inside.front().is_some_and(|&d| d <= t) {
            self.inside.pop_front();
        }
        self.inside.len() as u64
    }
}

fn forward(out: &mut Vec<Out>, path: &mut Path, t: u64) {
    for o in out.drain(..) {
        if let Action::Segment { seq, len, retransmit, .. } = o.action {
            assert!(!retransmit, "a lossless path: nothing is retransmitted");
            path.send(t, seq + len as u64);
        }
    }
}

/// The SYN at 0, its SYN-ACK at `syn_rtt` (by default the min RTT, SERVICE + 2 PROP: srtt and
/// BBR's first min RTT), then ACKs and timers until `until` ns.
fn run(s: &mut Sender, path: &mut Path, until: u64) -> Vec<Row> {
    let mut out = Vec::new();
    s.connect(SimTime(0), &mut out);
    out.clear();
    let t0 = path.syn_rtt;
    s.on_syn_ack(SimTime(t0), WND, &mut out);
    forward(&mut out, path, t0);
    let mut rows = Vec::new();
    loop {
        let ack_at = path.acks.front().map(|a| a.0);
        let timer_at = s.next_deadline().map(|d| d.0);
        let t = match (ack_at, timer_at) {
            (Some(a), Some(d)) => a.min(d),
            (a, d) => match a.or(d) {
                Some(t) => t,
                None => break,
            },
        };
        if t > until || s.is_done() {
            break;
        }
        if ack_at == Some(t) {
            let (_, ack) = path.acks.pop_front().unwrap();
            s.on_ack_sack(SimTime(t), ack, WND, &[], &mut out);
            let queue = path.queue(t);
            let b = s.bbr();
            rows.push(Row {
                t,
                acked: ack / MSS,
                cwnd: s.cwnd / MSS,
                rate: s.pacing_rate(),
                mode: b.map(|b| b.mode),
                gain: b.map_or(0, |b| b.pacing_gain()),
                queue,
            });
        } else {
            s.on_timer(SimTime(t), &mut out);
        }
        forward(&mut out, path, t);
    }
    rows
}

/// bbr_rate_bytes_per_sec, written out again: bw x mss x gain / 256 x 990,000 / 2^24.
fn rate(bw: u64, gain: u64) -> u64 {
    ((((bw as u128 * MSS as u128 * gain as u128) >> 8) * 990_000) >> 24) as u64
}

/// 1 ms per segment (1.46 MB/s), 10 ms each way: min RTT 21 ms, BDP 21 segments.
fn bbr_run(seed: u64, until_ms: u64) -> Vec<Row> {
    let mut s = sender(CongestionControlKind::Bbr, seed, 100_000 * MSS);
    let mut path = Path::new(MS, 10 * MS);
    run(&mut s, &mut path, until_ms * MS)
}

/// The bottleneck's bandwidth in BBR's unit: 1 segment per 1000 us, x 2^24 = 16777.
const LINK_BW: u64 = BW_UNIT / 1000;

#[test]
fn startup_paces_at_high_gain_from_the_handshake_and_grows_cwnd_by_each_ack() {
    let rows = bbr_run(1, 150);
    // bbr_init_pacing_rate_from_rtt at 21 ms: bw = 10 segments x 2^24 / 21000 us = 7989; the rate
    // 7989 x 1460 x 739 / 256 x 990000 / 2^24 = 1,986,849 B/s (2.885 x 10 segments per 21 ms, less 1 %).
    assert_eq!(rate(10 * BW_UNIT / 21_000, HIGH_GAIN), 1_986_849);
    // The first ACK at 42 ms (segment 1: sent at 21 ms, served by 22, back 20 ms later): its sample
    // is 1 segment over max(send phase 0, ack phase 42 - 21 ms) = 21000 us: bw 798, whose rate
    // (198,461 B/s) is below the initial one: kept (before the pipe is full the rate only rises).
    // cwnd: the target 2.885 x 798 x 21000 / 2^24 = 2.9 -> 3, + 3 quanta of 2 segments (1 ms at
    // 1,986,849 B/s is 1940 B: 1 segment, at least 2 above 1.2 Mb/s) = 9, even: 10 = cwnd; but fewer
    // than 10 segments are delivered (TCP_INIT_CWND): cwnd + 1 = 11.
    assert_eq!((rows[0].t, rows[0].acked, rows[0].cwnd, rows[0].rate), (42 * MS, 1, 11, Some(1_986_849)));
    assert_eq!(rows[0].mode, Some(Mode::Startup));
    // Each ACK of the first window (one per ms) adds a segment: 12, ..., 20.
    let cwnds: Vec<u64> = rows[..10].iter().map(|r| r.cwnd).collect();
    assert_eq!(cwnds, (11..=20).collect::<Vec<_>>());
    // The 10th ACK (51 ms): 10 segments over 51 - 21 = 30 ms: bw 10 x 2^24 / 30000 = 5592, rate
    // 5592 x 1460 x 739 >> 8 x 990000 >> 24 = 1,390,720 B/s: still below the initial rate, kept.
    assert_eq!(rate(10 * BW_UNIT / 30_000, HIGH_GAIN), 1_390_720);
    assert_eq!(rows[9].rate, Some(1_986_849));
    // Without the margin and gain the rate would be the filter's: every rate here is 2.885 x
    // the max bandwidth less 1 %, or the initial one.
    let later = rows.iter().find(|r| r.rate != Some(1_986_849)).expect("the rate rises");
    assert!(later.rate.unwrap() > 1_986_849);
}

#[test]
fn three_flat_rounds_end_startup_and_drain_ends_at_one_bdp() {
    let rows = bbr_run(1, 600);
    let modes: Vec<Mode> = rows.iter().filter_map(|r| r.mode).fold(Vec::new(), |mut v, m| {
        if v.last() != Some(&m) {
            v.push(m);
        }
        v
    });
    assert_eq!(modes, vec![Mode::Startup, Mode::Drain, Mode::ProbeBw]);
    let drain = rows.iter().position(|r| r.mode == Some(Mode::Drain)).unwrap();
    // The link delivers 1 segment/ms: STARTUP's samples reach that rate within a few rounds, and
    // 3 rounds later with no 25 % growth the pipe is full. DRAIN paces at 88/256 of it:
    // 16777 x 1460 x 88 >> 8 x 990000 >> 24 = 496,849 B/s.
    assert_eq!(rate(LINK_BW, 88), 496_849);
    assert_eq!(rows[drain].rate, Some(496_849));
    assert_eq!(rows[drain].gain, 88);
    // STARTUP's 2.885 x BDP queue (about 41 segments at a 62-segment cwnd) is drained: PROBE_BW
    // begins once what is in flight at the next departure is one BDP plus the quanta (21 + 3 x 2
    // -> 28 segments), with the queue down to the quanta's few segments.
    assert!(rows[drain - 1].queue >= 30, "STARTUP built a queue: {:?}", rows[drain - 1]);
    let probe = rows.iter().position(|r| r.mode == Some(Mode::ProbeBw)).unwrap();
    assert!(rows[probe].queue <= 10, "{:?}", rows[probe]);
    // DRAIN lasted about the time to drain 40 segments at 1 - 1/2.885 of the link: ~ 60 ms.
    let drain_ms = (rows[probe].t - rows[drain].t) / MS;
    assert!((40..=80).contains(&drain_ms), "drain took {drain_ms} ms");
}

#[test]
fn probe_bw_cycles_its_gains_at_the_rates_they_give() {
    let rows = bbr_run(1, 3000);
    // Each phase's rate: gain x the link's 1 segment/ms x 1460 B, less 1 %:
    // 5/4: 16777 x 1460 x 320 >> 8 x 990000 >> 24 = 1,806,726; 3/4: 1,084,036; 1: 1,445,381.
    assert_eq!((rate(LINK_BW, 320), rate(LINK_BW, 192), rate(LINK_BW, 256)), (1_806_726, 1_084_036, 1_445_381));
    let probe: Vec<&Row> = rows.iter().filter(|r| r.mode == Some(Mode::ProbeBw)).collect();
    for r in &probe {
        let want = match r.gain {
            320 => 1_806_726,
            192 => 1_084_036,
            256 => 1_445_381,
            g => panic!("gain {g}"),
        };
        assert_eq!(r.rate, Some(want), "{r:?}");
    }
    // The phases in order: 5/4 is always followed by 3/4, then six of 1 (each a min RTT, 21 ms).
    let mut phases = vec![];
    for r in &probe {
        if phases.last().map(|p: &(u64, u64)| p.0) != Some(r.gain) {
            phases.push((r.gain, r.t));
        } else {
            phases.last_mut().unwrap().1 = r.t;
        }
    }
    let gains: Vec<u64> = phases.iter().map(|p| p.0).collect();
    let at = gains.iter().position(|&g| g == 320).unwrap();
    assert_eq!(&gains[at..at + 4], &[320, 192, 256, 320]);
    // A full cycle: 8 phases of about a min RTT each: 8 x 21 = 168 ms, give or take an ACK.
    let starts: Vec<u64> = phases.iter().filter(|p| p.0 == 320).map(|p| p.1).collect();
    assert!(starts.windows(2).all(|w| (150 * MS..=190 * MS).contains(&(w[1] - w[0]))), "{starts:?}");
}

#[test]
fn probe_bw_starts_at_a_seeded_random_phase_never_the_drain_one() {
    // bbr_reset_probe_bw_mode: cycle_idx = 8 - 1 - rand(7), then one step: any phase but 1 (3/4).
    let mut first = std::collections::BTreeSet::new();
    for seed in 1..=24 {
        let rows = bbr_run(seed, 400);
        let r = rows.iter().find(|r| r.mode == Some(Mode::ProbeBw)).unwrap();
        assert_ne!(r.gain, 192, "seed {seed}");
        first.insert(r.gain);
        // The same seed, the same run.
        let again = bbr_run(seed, 400);
        assert_eq!(
            again.iter().map(|r| (r.t, r.cwnd, r.rate)).collect::<Vec<_>>(),
            rows.iter().map(|r| (r.t, r.cwnd, r.rate)).collect::<Vec<_>>()
        );
    }
    assert!(first.contains(&320) && first.contains(&256), "{first:?}");
}

#[test]
fn probe_rtt_after_ten_seconds_holds_cwnd_four_for_200_ms() {
    // The handshake's RTT is 20 ms (its segments take no 1 ms at the bottleneck), every data
    // segment's at least 21 ms: the min RTT set at 20 ms is never renewed (a sample at most equal
    // to it would renew it) and expires 10 s later, at the first ACK after 10.020 s.
    let mut s = sender(CongestionControlKind::Bbr, 1, 100_000 * MSS);
    let mut path = Path::new(MS, 10 * MS);
    path.syn_rtt = 20 * MS;
    let rows = run(&mut s, &mut path, 11_000 * MS);
    let start = rows.iter().position(|r| r.mode == Some(Mode::ProbeRtt)).expect("PROBE_RTT");
    assert!(rows[start].t > 10_020 * MS && rows[start].t <= 10_021 * MS, "{:?}", rows[start]);
    let end = start + rows[start..].iter().position(|r| r.mode != Some(Mode::ProbeRtt)).expect("it ends");
    for r in &rows[start..end] {
        assert!(r.cwnd <= 4, "{r:?}");
        assert_eq!(r.gain, BBR_UNIT);
    }
    // It ends 200 ms after in-flight first fell to 4 (and a round has passed), so it lasts a little
    // more than 200 ms; then cwnd is restored to the one saved on entry.
    let lasted = rows[end].t - rows[start].t;
    assert!(lasted > 200 * MS && lasted < 260 * MS, "{lasted}");
    assert!(rows[end].cwnd >= 40, "{:?}", rows[end]);
    assert_eq!(rows[end].mode, Some(Mode::ProbeBw));
}

#[test]
fn a_deep_lossless_buffer_is_filled_by_cubic_and_not_by_bbr() {
    // 3 s: the link carries 3000 segments. BBR gets at least 95 % of that after its first
    // second, with a standing queue of at most a BDP (cwnd gain 2: 2 BDP + 4 in flight at most);
    // CUBIC (unpaced, the window limited only by 100,000 segments) fills the buffer.
    let mean_queue = |rows: &[Row]| rows.iter().map(|r| r.queue).sum::<u64>() as f64 / rows.len() as f64;
    let rows = bbr_run(1, 3000);
    let late: Vec<Row> = rows.iter().filter(|r| r.t > 1000 * MS).copied().collect();
    let carried = late.last().unwrap().acked - late[0].acked;
    let span_ms = (late.last().unwrap().t - late[0].t) / MS;
    assert!(carried as f64 >= 0.95 * span_ms as f64, "{carried} segments in {span_ms} ms");
    let bbr_queue = mean_queue(&late);
    assert!(bbr_queue <= 21.0, "BBR's mean queue {bbr_queue}");
    let mut s = sender(CongestionControlKind::Cubic, 1, 100_000 * MSS);
    let mut path = Path::new(MS, 10 * MS);
    let cubic = run(&mut s, &mut path, 3000 * MS);
    let cubic_late: Vec<Row> = cubic.iter().filter(|r| r.t > 1000 * MS).copied().collect();
    let cubic_queue = mean_queue(&cubic_late);
    assert!(cubic_queue > 10.0 * bbr_queue.max(1.0), "CUBIC {cubic_queue} against BBR {bbr_queue}");
}
