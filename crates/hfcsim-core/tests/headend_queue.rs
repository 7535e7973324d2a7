//! `network.headend_queue_bytes`: the hfc headend's downstream queue, shared by every modem
//! (issue 23: a CMTS's is finite; Cohen & Ramanathan's headend is unbounded, the default).

use hfcsim_core::scenario::{Flow, Network};
use hfcsim_core::{run, RunOptions, Scenario};

/// Ten modems, one download each, with 64 KB windows: 640 KB in flight against the 25 Mb/s
/// downstream's bandwidth-delay product of about 62 KB (25 Mb/s x 20 ms), so a queue of up to
/// ~580 KB can stand at the headend, where the modems' 10 Mb/s LANs (100 Mb/s in all) are no
/// bottleneck.
fn ten_downloads(headend_queue_bytes: Option<u64>) -> Scenario {
    let mut sc = Scenario::cohen_default();
    let Network::Hfc(h) = &mut sc.network else { unreachable!() };
    h.headend_queue_bytes = headend_queue_bytes;
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

#[test]
fn the_key_is_refused_off_the_hfc_network_and_defaults_to_unbounded() {
    let Network::Hfc(h) = Scenario::cohen_default().network else { unreachable!() };
    assert_eq!(h.headend_queue_bytes, None);
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
