//! Low Latency DOCSIS's aggregate service flow (net/aqm/dualq.rs inside net/servicequeue.rs),
//! through the public API, in docsis-ns3's manner: a low-latency packet's delay with and without
//! a full classic queue, the scheduler's shares under saturation, and LLD in a DOCSIS run (where a
//! Not-ECT flow takes the classic queue: tests/test_pcap.py runs an l4s flow through the L queue).
//! The ramp, the coupling, the PI updates and queue protection are pinned by the unit tests in
//! dualq.rs.

use hfcsim_core::net::aqm::dualq::{uflow, DualQConfig};
use hfcsim_core::net::aqm::DualQ;
use hfcsim_core::net::servicequeue::{Aqm, Lld, LldInput, QueueOut, ServiceQueue};
use hfcsim_core::net::shaper::TokenBucket;
use hfcsim_core::net::{Framing, QueueLimit, Role};
use hfcsim_core::packet::{Ecn, Way};
use hfcsim_core::rng::Stream;
use hfcsim_core::scenario::{AqmKind, DefaultBuffer, Direction, Docsis, MacKind, Network, Ping, Scenario};
use hfcsim_core::sim::{run, RunOptions};
use hfcsim_core::time::SimTime;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// An aggregate service flow capped at `rate` (burst 1500 B, full at t = 0), counting IP bytes,
/// with no transmitter of its own, as topology::docsis builds one.
fn asf(rate: u64, cfg: DualQConfig) -> ServiceQueue {
    ServiceQueue::new(
        "asf".into(),
        Role::Access,
        QueueLimit::Unbounded,
        Some(TokenBucket::new(rate, 1500, None)),
        Framing::NONE,
        0,
        Framing::NONE,
        0,
        Aqm::Lld(Box::new(Lld::new(DualQ::new(cfg, SimTime::ZERO)))),
        Stream::new(1, 1),
    )
}

fn l4s(flow: u32) -> LldInput {
    LldInput { ecn: Ecn::Ect1, nqb: false, uflow: uflow(flow, Way::Forward) }
}

fn classic(flow: u32) -> LldInput {
    LldInput { ecn: Ecn::NotEct, nqb: false, uflow: uflow(flow, Way::Forward) }
}

/// Serve everything due up to `until`: (time, tag) of each packet sent.
fn drive(q: &mut ServiceQueue, until: u64) -> Vec<(u64, u64)> {
    let mut log = Vec::new();
    while let Some(t) = q.next_deadline().filter(|t| t.0 <= until) {
        let mut out = Vec::new();
        q.on_timer(t, &mut out);
        for o in out {
            if let QueueOut::Sent { tag, .. } = o {
                log.push((t.0, tag));
            }
        }
    }
    log
}

#[test]
fn a_low_latency_packet_does_not_wait_behind_a_full_classic_queue() {
    // 8 Mb/s = 1 B/us. Ten 1500-B classic packets at t = 0: the bucket (1500 B full) sends C1 at
    // 0, then one every 1.5 ms (C2 1.5, C3 3.0, C4 4.5 ms). An ECT(1) packet of 100 B arrives at
    // 4.55 ms: the bucket has refilled 50 B since C4. The scheduler (both busy; C's turn with no
    // deficit left: its 26 * 1500 / 256 = 152 B quantum short of 1500, L's 230 * 1500 / 256 = 1348 B
    // enough) serves L next, as soon as the bucket holds its 100 B: 4.6 ms, 50 us of waiting.
    // Its queue delay at enqueue, 100 us, is below MINTH (FLOOR = 2 * 2000 * 8 / 8e6 = 4 ms):
    // no mark. A single FIFO would have sent it after C10, at 4.5 + 6 * 1.5 + 0.1 = 13.6 ms.
    let mut q = asf(8_000_000, DualQConfig::docsis(8_000_000));
    for tag in 0..10 {
        assert_eq!(q.enqueue_lld(SimTime(0), tag, 1500, classic(1)), Ok(false));
    }
    let before = drive(&mut q, 4_550 * US);
    assert_eq!(before, vec![(0, 0), (1_500 * US, 1), (3_000 * US, 2), (4_500 * US, 3)]);
    assert_eq!(q.enqueue_lld(SimTime(4_550 * US), 100, 100, l4s(2)), Ok(false));
    let after = drive(&mut q, 6_100 * US);
    // C5 then needs 1500 B of tokens from 4.6 ms: 6.1 ms.
    assert_eq!(after, vec![(4_600 * US, 100), (6_100 * US, 4)]);
    let s = q.dualq().unwrap().stats;
    assert_eq!((s.l_packets, s.c_packets, s.l_served, s.l_sojourn_max), (1, 10, 1, 50 * US));

    // Without the classic queue: the bucket is full at 4.55 ms, the packet leaves at once.
    let mut alone = asf(8_000_000, DualQConfig::docsis(8_000_000));
    assert_eq!(alone.enqueue_lld(SimTime(4_550 * US), 100, 100, l4s(2)), Ok(false));
    assert_eq!(drive(&mut alone, 10 * MS), vec![(4_550 * US, 100)]);
}

#[test]
fn under_saturation_l_gets_its_weight_of_the_slots() {
    // 300 ECT(1) and 300 Not-ECT 1500-B packets at t = 0, 800 Mb/s (1500 B per 15 us; the L
    // buffer, 10 ms at 800 Mb/s = 1 MB, holds the 450 KB); queue protection off (the standing L
    // queue would sanction the flow, which is its job, not this test's). Weight 230/256, quantum
    // 1500 B: after r DRR rounds L has sent floor(230 r / 256) packets and C floor(26 r / 256);
    // the 256th packet ends round 256: 230 L, 26 C (dualq.rs unit test).
    let mut cfg = DualQConfig::docsis(800_000_000);
    cfg.qprot = None;
    let mut q = asf(800_000_000, cfg);
    for i in 0..300 {
        assert!(q.enqueue_lld(SimTime(0), i, 1500, l4s(1)).is_ok());
        assert!(q.enqueue_lld(SimTime(0), 1000 + i, 1500, classic(2)).is_ok());
    }
    let sent = drive(&mut q, 255 * 15 * US);
    assert_eq!(sent.len(), 256);
    let l = sent.iter().filter(|&&(_, tag)| tag < 1000).count();
    assert_eq!((l, 256 - l), (230, 26));
}

/// Nguyen & Armitage's testbed (FIFO upstream) with an upload through a 64 KB modem buffer.
fn upload(aqm: AqmKind) -> Scenario {
    let mut sc = Scenario::nguyen_default();
    sc.upstream = Scenario::cohen_default().upstream;
    assert_eq!(sc.upstream.mac, MacKind::Fifo);
    sc.flows[0].direction = Direction::Up;
    sc.flows[0].bytes = 1 << 20;
    sc.flows[0].start_s = 2.5;
    sc.pings =
        vec![Ping { modem: 0, start_s: 0.0, interval_s: 1.0, ip_bytes: 84, stop_s: None, after_s: 3.0, nqb: false }];
    let Network::Docsis(d) = &mut sc.network else { unreachable!() };
    let d: &mut Docsis = d;
    d.ds_mgmt_overhead = false; // the preset's MAC messages need the DOCSIS MAC
    d.cm_queue_bytes = Some(65536);
    d.cm_aqm = aqm;
    sc
}

#[test]
fn lld_with_only_classic_traffic_is_docsis_pie() {
    // NewReno without ECN sends Not-ECT packets (servicequeue.rs lld_input), so the aggregate is its
    // classic queue alone: DOCSIS-PIE's controller on the same delay (C bytes over r_C = MAX_RATE, no L
    // arrivals), its data path on the same stream, one FIFO. The run is DOCSIS-PIE's exactly.
    let pie = upload(AqmKind::DocsisPie);
    let lld = upload(AqmKind::Lld);
    pie.check().unwrap();
    lld.check().unwrap();
    let (a, b) = (run(&pie, 1, RunOptions::default()), run(&lld, 1, RunOptions::default()));
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert!(b.flows[0].aqm_drops > 0 && b.flows[0].finished);
}

#[test]
fn lld_runs_at_the_cmts() {
    let mut sc = upload(AqmKind::Droptail);
    sc.flows[0].direction = Direction::Down;
    let Network::Docsis(d) = &mut sc.network else { unreachable!() };
    d.cmts_queue_bytes = Some(65536);
    // Both buffers set: the testbed's default_buffer = "unbounded" would size nothing, and rules.rs
    // refuses it there (issue 36); back to its default, the same run.
    d.default_buffer = DefaultBuffer::Mulpi;
    d.cmts_aqm = AqmKind::Lld;
    sc.check().unwrap();
    let out = run(&sc, 1, RunOptions::default());
    assert!(out.flows[0].finished);
    assert!(out.engine.queues.iter().any(|q| q.drops_aqm > 0), "{:?}", out.engine.queues);
}

#[test]
fn queue_protection_sends_the_flow_that_builds_the_queue_and_no_other_to_classic() {
    // 8 Gb/s: 1 B/ns, MINTH 475.712 us, MAXTH = CRITICALqL = 1 ms. Flow A sends 1100 ECT(1)
    // packets of 1000 B at t = 0, nothing is served in between (the bucket holds 1500 B): its k-th
    // packet sees an L delay of k us. From k = 476 on the ramp adds ramp(k us) * 1000 * 2048 ns to
    // A's score, about 262 * 2.048 ms = 0.54 s by k = 1000; until k = 1000 the delay is not above
    // CRITICALqL, so no sanction. Packet 1001 sees 1.001 ms > 1 ms with 1.001 ms * 0.54 s far
    // above 1 ms * 4 ms: sanctioned, as every later one (sanctioned packets leave L unchanged).
    // Flow B's one packet then sees the same 1.001 ms with a fresh score of 1 * 1000 * 2048 ns =
    // 2.048 ms: 1.001 * 2.048 = 2.05 < 4 (ms^2), so it stays in L.
    let mut q = asf(8_000_000_000, DualQConfig::docsis(8_000_000_000));
    for tag in 0..1100 {
        assert!(q.enqueue_lld(SimTime(0), tag, 1000, l4s(1)).is_ok());
    }
    let s = q.dualq().unwrap().stats;
    assert_eq!((s.sanctions, s.c_packets), (100, 100));
    assert!(q.enqueue_lld(SimTime(0), 5000, 1000, l4s(2)).is_ok());
    let s = q.dualq().unwrap().stats;
    assert_eq!((s.sanctions, s.l_packets, s.c_packets), (100, 1101, 100));
    let d = q.dualq().unwrap();
    assert_eq!(d.score(SimTime(0), uflow(2, Way::Forward)), 2_048_000);
    assert!(d.score(SimTime(0), uflow(1, Way::Forward)) > 500 * MS);
}
