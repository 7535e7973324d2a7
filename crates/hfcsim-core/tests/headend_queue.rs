//! `network.headend_queue_bytes`: the hfc headend's downstream queue, shared by every modem
//! (issue 23: a CMTS's is finite; Cohen & Ramanathan's headend is unbounded), and
//! `network.default_buffer`, which sizes it and the docsis service flows' buffers when no key does.

use hfcsim_core::scenario::{DefaultBuffer, Flow, Network};
use hfcsim_core::{run, RunOptions, Scenario};

/// Ten modems, one download each, with 64 KB windows: 640 KB in flight against the 25 Mb/s
/// downstream's bandwidth-delay product of about 62 KB (25 Mb/s x 20 ms), so a queue of up to
/// ~580 KB can stand at the headend, where the modems' 10 Mb/s LANs (100 Mb/s in all) are no
/// bottleneck.
fn ten_downloads(headend_queue_bytes: Option<u64>) -> Scenario {
    let mut sc = Scenario::cohen_default();
    let Network::Hfc(h) = &mut sc.network else { unreachable!() };
    h.headend_queue_bytes = headend_queue_bytes;
    if headend_queue_bytes.is_some() {
        // Cohen's recipe says "unbounded"; with the headend's queue set and the FIFO upstream it would
        // size nothing, and rules.rs refuses it there (issue 36): back to the default, the same run.
        h.default_buffer = DefaultBuffer::Mulpi;
    }
    sc.tcp.send_buffer_bytes = 65_536;
    sc.receiver.receive_buffer_bytes = 65_536;
    sc.flows = (0..10).map(|m| Flow { modem: m, ..Flow::download(3_000_000) }).collect();
    sc.check().unwrap();
    sc
}

#[test]
fn a_finite_headend_queue_bounds_the_queueing_delay_and_drops_when_full() {
    let unbounded = run(&ten_downloads(None), 1, RunOptions::default());
    // 30,000 bytes wait at most 30,000 x 8 / 25 Mb/s = 9.6 ms.
    let bounded = run(&ten_downloads(Some(30_000)), 1, RunOptions::default());
    let max_rtt = |out: &hfcsim_core::Output| out.flows.iter().filter_map(|f| f.rtt_max_s).fold(0.0, f64::max);
    let drops = |out: &hfcsim_core::Output| out.flows.iter().map(|f| f.queue_drops).sum::<u64>();
    assert!(unbounded.flows.iter().chain(&bounded.flows).all(|f| f.finished));
    // Unbounded (Cohen's headend): no drop, and the queue stands far above the base RTT.
    assert_eq!(drops(&unbounded), 0);
    assert!(max_rtt(&unbounded) > 0.100, "unbounded max RTT {}", max_rtt(&unbounded));
    // Bounded: the excess is dropped at the headend, and no RTT sample exceeds the 20 ms base
    // RTT + 9.6 ms of queue + the segments' serialisation on the downstream, upstream and LAN
    // (~1.8 ms) and the ACKs' wait on the upstream and the delayed-ACK timer's 200 ms tick.
    assert!(drops(&bounded) > 0, "drops {}", drops(&bounded));
    let bound = 0.020 + 0.0096 + 0.002 + 0.200;
    assert!(max_rtt(&bounded) < bound, "bounded max RTT {}", max_rtt(&bounded));
    // The mean RTT, where the delayed-ACK waits weigh little: every flow's stays near the base RTT
    // with the queue bounded, and far above it without.
    let mean_rtts = |out: &hfcsim_core::Output| out.flows.iter().map(|f| f.rtt_mean_s.unwrap()).collect::<Vec<_>>();
    assert!(mean_rtts(&bounded).iter().all(|&r| r < 0.020 + 0.0096 + 0.005), "{:?}", mean_rtts(&bounded));
    assert!(mean_rtts(&unbounded).iter().all(|&r| r > 0.100), "{:?}", mean_rtts(&unbounded));
}

/// The largest queue any link or service queue held in a run, bytes.
fn max_queue_bytes(out: &hfcsim_core::Output) -> Vec<(String, u64)> {
    out.engine.queues.iter().map(|q| (q.name.clone(), q.max_bytes)).collect()
}

#[test]
fn the_default_buffer_is_a_hundred_milliseconds_at_the_channel_rate() {
    // DOCSIS 3.1 MULPI C.1.2.17: 100 ms. At the 25 Mb/s downstream, 25e6 x 0.1 / 8 = 312,500 bytes:
    // the ten 64 KB windows (up to ~580 KB standing) overflow it, so the headend drops, and no
    // packet waits longer than 100 ms there.
    let mut sc = ten_downloads(None);
    let Network::Hfc(h) = &mut sc.network else { unreachable!() };
    assert_eq!(h.default_buffer, DefaultBuffer::Unbounded, "Cohen's recipe");
    h.default_buffer = DefaultBuffer::Mulpi;
    assert_eq!(Scenario::defaults("hfc"), Scenario { network: sc.network.clone(), ..Scenario::defaults("hfc") });
    let out = run(&sc, 1, RunOptions::default());
    assert!(out.flows.iter().all(|f| f.finished));
    assert!(out.flows.iter().map(|f| f.queue_drops).sum::<u64>() > 0);
    let rtt_max = out.flows.iter().filter_map(|f| f.rtt_max_s).fold(0.0, f64::max);
    // 20 ms base + 100 ms of queue + serialisation (~2 ms) + the delayed-ACK tick (200 ms).
    assert!(rtt_max < 0.020 + 0.100 + 0.002 + 0.200, "{rtt_max}");
    assert_eq!(DefaultBuffer::Mulpi.bytes(25e6, 1500), Some(312_500));
    // At most one full packet below the floor: 100 ms at 64 kb/s is 800 bytes, raised to 1500.
    assert_eq!(DefaultBuffer::Mulpi.bytes(64e3, 1500), Some(1500));
    assert_eq!(DefaultBuffer::Unbounded.bytes(25e6, 1500), None);
}

#[test]
fn a_docsis_service_flow_without_a_buffer_key_holds_a_hundred_milliseconds_at_its_rate() {
    // The docsis kind's defaults: DS cap 2 Mb/s, US cap 1 Mb/s -> 25,000 and 12,500 bytes; with a
    // Peak Traffic Rate below the cap the lower rate counts (C.1.2.17: min(MSR, Peak)).
    let Network::Docsis(d) = Scenario::defaults("docsis").network else { unreachable!() };
    assert_eq!(d.default_buffer, DefaultBuffer::Mulpi);
    assert_eq!(d.buffer_bytes(d.cmts_queue_bytes, d.cmts_queue_s, d.ds_rate_bps, d.ds_peak_bps, 1500), Some(25_000));
    assert_eq!(d.buffer_bytes(d.cm_queue_bytes, d.cm_queue_s, d.us_rate_bps, d.us_peak_bps, 1500), Some(12_500));
    assert_eq!(d.buffer_bytes(None, None, 2e6, Some(1e6), 1500), Some(12_500));
    // Nguyen & Armitage's testbed lost nothing with windows up to 62 KB: its preset is unbounded.
    let Network::Docsis(n) = Scenario::nguyen_default().network else { unreachable!() };
    assert_eq!(n.buffer_bytes(n.cmts_queue_bytes, n.cmts_queue_s, n.ds_rate_bps, n.ds_peak_bps, 1500), None);
    // A run with a 64 KB window: the CMTS's 2 Mb/s queue never holds more than its 25,000 bytes.
    let mut sc = Scenario::defaults("docsis");
    sc.receiver.receive_buffer_bytes = 65_536;
    sc.tcp.send_buffer_bytes = 65_536;
    sc.flows[0].bytes = 1_000_000;
    let out = run(&sc, 1, RunOptions::default());
    let cmts = max_queue_bytes(&out).into_iter().find(|(n, _)| n == "cmts_ds_modem0").unwrap();
    assert!(cmts.1 <= 25_000 && cmts.1 > 20_000, "{cmts:?}");
    assert!(out.flows[0].finished);
}

#[test]
fn the_key_is_refused_off_the_hfc_network_and_cohens_recipe_is_unbounded() {
    let Network::Hfc(h) = Scenario::cohen_default().network else { unreachable!() };
    assert_eq!(h.headend_queue_bytes, None);
    assert_eq!(h.default_buffer, DefaultBuffer::Unbounded);
    let doc = serde_json::json!({"network": {"kind": "docsis", "headend_queue_bytes": 30000}});
    assert_eq!(
        Scenario::from_value(doc).unwrap_err(),
        "network.headend_queue_bytes = 30000: only valid with network.kind = \"hfc\" (network.kind is \"docsis\")"
    );
    let doc = serde_json::json!({"network": {"headend_queue_bytes": 0}});
    assert_eq!(
        Scenario::from_value(doc).unwrap_err(),
        "network.headend_queue_bytes = 0: must be an integer >= 1 (or absent)"
    );
}
