//! PIE and CoDel on the queues that were drop-tail links: the hfc network's cable-modem buffer
//! toward the PC (`network.cm_buffer_aqm`) and Lakshman & Madhow's bottleneck
//! (`network.bottleneck_aqm`), end to end.

use hfcsim_core::scenario::{AqmKind, Bottleneck, Direction, Flow, Network, Variant};
use hfcsim_core::{run, RunOptions, Scenario};
use proptest::prelude::*;

/// The bottleneck network's keys at their defaults (PIE's 15 ms target, CoDel's 5 ms target and
/// 100 ms interval: RFC 8033 Sec. 5.1, RFC 8289 Sec. 4.4-4.5).
fn bottleneck_network() -> Bottleneck {
    let Network::Bottleneck(b) = Scenario::defaults("bottleneck").network else { unreachable!() };
    b
}

/// Cohen's network with the PC's LAN at 2 Mb/s, far below the 25 Mb/s downstream, and 256 KB
/// socket buffers: the window is far above the path's bandwidth-delay product (2 Mb/s x ~26 ms,
/// 6.5 KB), so a standing queue of ~250 KB forms in the unbounded CM buffer under drop-tail,
/// about 1 s at 2 Mb/s.
fn slow_lan(aqm: AqmKind) -> Scenario {
    let mut sc = Scenario::cohen_default();
    if let Network::Hfc(h) = &mut sc.network {
        h.cm_lan_bps = 2e6;
        h.cm_buffer_aqm = aqm;
    }
    sc.tcp.send_buffer_bytes = 262_144;
    sc.receiver.receive_buffer_bytes = 262_144;
    sc.flows[0].bytes = 3_000_000;
    sc
}

/// The most packets the CM-LAN link (link 2 of the hfc network) held at any enqueue, from the trace.
fn max_held_at_cm_link(sc: &Scenario) -> i64 {
    let out = run(sc, 1, RunOptions { trace: true, ..Default::default() });
    let tr = out.trace.expect("a trace was asked for");
    (0..tr.event.len()).filter(|&i| tr.event[i] == "enqueue" && tr.link[i] == 2).map(|i| tr.queue[i]).max().unwrap()
}

#[test]
fn codel_keeps_the_cm_buffer_near_its_target_where_droptail_stands_a_second_deep() {
    let tail = run(&slow_lan(AqmKind::Droptail), 1, RunOptions::default());
    let codel = run(&slow_lan(AqmKind::Codel), 1, RunOptions::default());
    let (t, c) = (&tail.flows[0], &codel.flows[0]);
    assert!(t.finished && c.finished);
    assert!(tail.engine.queues.is_empty(), "drop-tail keeps the plain link");
    let q = &codel.engine.queues[0];
    assert_eq!(q.name, "cm_lan_modem0");
    // RFC 8289 Sec. 5.5 (drops at dequeue, the queue is unbounded): every drop is CoDel's, and
    // each counts against the flow as a CM-buffer drop (sim.rs queue_drop).
    assert!(q.drops_aqm > 0 && q.drops_full == 0, "{q:?}");
    assert_eq!((c.aqm_drops, c.cm_buffer_drops, c.queue_drops), (q.drops_aqm, q.drops_aqm, q.drops_aqm));
    assert_eq!((t.aqm_drops, t.cm_buffer_drops), (0, 0));
    // Drop-tail: ~250 KB stand in the buffer, about 1 s of the 2 Mb/s LAN (doc comment of
    // slow_lan), so the mean RTT is most of a second. CoDel (RFC 8289 Sec. 4.4-4.5: 5 ms target,
    // 100 ms interval) lets the sojourn above target last at most about an interval before it
    // drops: the mean RTT stays within the 20 ms base RTT + 6 ms of a packet on the LAN + 100 ms.
    assert!(t.rtt_mean_s.unwrap() > 0.5, "drop-tail mean RTT {:?}", t.rtt_mean_s);
    assert!(c.rtt_mean_s.unwrap() < 0.020 + 0.006 + 0.100, "CoDel mean RTT {:?}", c.rtt_mean_s);
    // The largest queue: CoDel's largest (bytes waiting, 1500-byte packets, plus the one on the
    // LAN) is a fraction of drop-tail's.
    let codel_packets = q.max_bytes.div_ceil(1500) as i64 + 1;
    let tail_packets = max_held_at_cm_link(&slow_lan(AqmKind::Droptail));
    assert!(3 * codel_packets < tail_packets, "CoDel {codel_packets} packets, drop-tail {tail_packets}");
    // The LAN stays busy: CoDel gives up little of the 2 Mb/s.
    let (ct, tt) = (c.throughput_bps.unwrap(), t.throughput_bps.unwrap());
    assert!(ct > 0.9 * tt, "{ct} vs {tt}");
}

#[test]
fn pie_on_the_cm_buffer_drops_at_enqueue_and_counts_as_cm_buffer_drops() {
    let out = run(&slow_lan(AqmKind::Pie), 1, RunOptions::default());
    let (f, q) = (&out.flows[0], &out.engine.queues[0]);
    assert!(f.finished && q.drops_aqm > 0, "{q:?}");
    assert_eq!((f.aqm_drops, f.cm_buffer_drops), (q.drops_aqm, q.drops_aqm));
    assert!(f.rtt_mean_s.unwrap() < 0.5, "PIE mean RTT {:?}", f.rtt_mean_s);
}

#[test]
fn a_full_cm_buffer_with_an_aqm_still_counts_cm_buffer_drops() {
    // A 4-packet buffer (Cohen Sec. V.B counts the one on the LAN) overflows long before CoDel's
    // interval passes: its drops are "full" ones, and they are the flow's CM-buffer drops.
    let mut sc = slow_lan(AqmKind::Codel);
    if let Network::Hfc(h) = &mut sc.network {
        h.cm_buffer_packets = Some(4);
    }
    let out = run(&sc, 1, RunOptions::default());
    let (f, q) = (&out.flows[0], &out.engine.queues[0]);
    assert!(q.drops_full > 0, "{q:?}");
    assert_eq!(f.cm_buffer_drops, q.drops_full + q.drops_aqm);
    assert!(q.max_bytes <= 3 * 1500, "at most 3 waiting besides the one on the LAN: {q:?}");
}

#[test]
fn codel_at_lakshmans_bottleneck_holds_the_queue_below_droptails() {
    // Lakshman & Madhow Fig. 1's network with B = 100: mu = 100 packets/s of 1040 bytes, tau = 1 s.
    let sc = |aqm: AqmKind| {
        let mut sc = Scenario::cohen_default();
        sc.network = Network::Bottleneck(Bottleneck {
            rate_pps: 100.0,
            buffer_packets: Some(100),
            tau_s: 1.0,
            loss: 0.0,
            bottleneck_aqm: aqm,
            ..bottleneck_network()
        });
        sc.tcp.mss_bytes = 1000;
        sc.tcp.send_buffer_bytes = 1_000_000;
        sc.receiver.receive_buffer_bytes = 1_000_000;
        sc.receiver.delayed_ack = false;
        sc.flows[0].bytes = 3_000_000;
        sc
    };
    for aqm in [AqmKind::Codel, AqmKind::Pie] {
        let out = run(&sc(aqm), 1, RunOptions::default());
        let (f, q) = (&out.flows[0], &out.engine.queues[0]);
        assert_eq!(q.name, "bottleneck");
        assert!(f.finished && q.drops_aqm > 0 && f.aqm_drops == q.drops_aqm, "{aqm:?}: {q:?}");
        assert_eq!(f.cm_buffer_drops, 0, "not a cable modem's buffer");
        // Drop-tail fills all 100 places (100 KB) before a loss; the AQMs drop long before.
        assert!(q.max_bytes < 50 * 1040, "{aqm:?}: {q:?}");
    }
}

#[test]
fn bottleneck_loss_is_kept_with_an_aqm() {
    let mut sc = Scenario::cohen_default();
    sc.network = Network::Bottleneck(Bottleneck {
        rate_pps: 100.0,
        buffer_packets: Some(10),
        tau_s: 0.1,
        loss: 0.05,
        bottleneck_aqm: AqmKind::Codel,
        ..bottleneck_network()
    });
    sc.flows[0].bytes = 300_000;
    let out = run(&sc, 1, RunOptions::default());
    // 5 % of ~200 data packets: media loss after service, as on the drop-tail link.
    assert!(out.flows[0].data_lost_downstream > 0, "{:?}", out.flows[0]);
    assert!(out.flows[0].finished);
}

/// Random hfc scenarios with an AQM at the CM buffer, or a bottleneck with one: every flow
/// delivers its bytes (or TCP gave up under loss), every drop at a CM buffer is counted once as
/// a CM-buffer drop, and a seed gives the same run twice (PIE's draws come from its own stream).
fn arb_aqm_scenario() -> impl Strategy<Value = Scenario> {
    (
        (any::<bool>(), any::<bool>(), prop::option::of(2u64..40), 0.0..0.05f64),
        (2e5..2e7f64, prop::sample::select(vec![8192u64, 65_536, 262_144]), 0..3usize),
        prop::collection::vec((1000u64..300_000, any::<bool>(), 0u32..2, 0.0..0.5f64), 1..4),
    )
        .prop_map(|((bottleneck, pie, buffer, loss), (rate, window, variant), flows)| {
            let mut sc = Scenario::cohen_default();
            let aqm = if pie { AqmKind::Pie } else { AqmKind::Codel };
            if bottleneck {
                sc.network = Network::Bottleneck(Bottleneck {
                    rate_pps: rate / 12_000.0,
                    buffer_packets: buffer,
                    tau_s: 0.05,
                    loss,
                    bottleneck_aqm: aqm,
                    ..bottleneck_network()
                });
            } else if let Network::Hfc(h) = &mut sc.network {
                (h.cm_lan_bps, h.cm_buffer_packets, h.cm_buffer_aqm, h.downstream_loss) = (rate, buffer, aqm, loss);
            }
            sc.tcp.variant = [Variant::Tahoe, Variant::Reno, Variant::Newreno][variant];
            sc.tcp.send_buffer_bytes = window;
            sc.receiver.receive_buffer_bytes = window;
            sc.sim.time_limit_s = 100_000.0;
            sc.flows = flows
                .into_iter()
                .map(|(bytes, up, modem, start_s)| Flow {
                    direction: if up && !bottleneck { Direction::Up } else { Direction::Down },
                    modem,
                    start_s,
                    ..Flow::download(bytes)
                })
                .collect();
            sc
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn with_an_aqm_every_byte_arrives_and_every_cm_drop_is_counted(sc in arb_aqm_scenario(), seed in 0u64..1000) {
        sc.check().unwrap();
        let out = run(&sc, seed, RunOptions::default());
        for f in &out.flows {
            prop_assert_eq!(f.delivered_bytes == f.bytes, f.finished);
            prop_assert!(f.finished || f.timeouts >= 1, "{:?}", f);
        }
        let dropped: u64 = out.engine.queues.iter().map(|q| q.drops_full + q.drops_aqm).sum();
        prop_assert_eq!(out.flows.iter().map(|f| f.queue_drops).sum::<u64>(), dropped);
        let aqm: u64 = out.engine.queues.iter().map(|q| q.drops_aqm).sum();
        prop_assert_eq!(out.flows.iter().map(|f| f.aqm_drops).sum::<u64>(), aqm);
        let cm = if matches!(sc.network, Network::Hfc(_)) { dropped } else { 0 };
        prop_assert_eq!(out.flows.iter().map(|f| f.cm_buffer_drops).sum::<u64>(), cm);
        let again = run(&sc, seed, RunOptions::default());
        prop_assert_eq!(&again.flows, &out.flows);
    }
}
