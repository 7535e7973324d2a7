//! Whole-engine properties: every byte delivered exactly once and in order, termination,
//! no panic, determinism, and lossless throughput against a hand calculation.

mod common;

use hfcsim_core::scenario::{
    AckRule, CongestionControlKind, Direction, Flow, MacKind, Network, Opener, TimerKind, Variant,
};
use hfcsim_core::{run, RunOptions, Scenario};
use proptest::prelude::*;

fn arb_scenario() -> impl Strategy<Value = Scenario> {
    (
        (0.0..0.2f64, 0.0..0.3f64, prop::option::of(3000u64..40_000), 0..3usize, 0..2usize),
        (prop::sample::select(vec![536u32, 1000, 1460]), 1u32..4, 1u32..4, 2000u64..70_000, 2000u64..70_000),
        (
            any::<bool>(),
            any::<bool>(),
            prop::collection::vec(
                (1000u64..200_000, any::<bool>(), any::<bool>(), 0u32..2, 0.0..0.5f64, any::<bool>()),
                1..4,
            ),
        ),
        prop::collection::vec(1u32..40, 0..4),
    )
        .prop_map(
            |((dl, ul, cmbuf, variant, timer), (mss, iw, dupthresh, sndbuf, rcvbuf), (delack, nagle, flows), drops)| {
                let mut sc = Scenario::cohen_default();
                if let Network::Hfc(h) = &mut sc.network {
                    (h.downstream_loss, h.upstream_loss, h.cm_buffer_bytes) = (dl, ul, cmbuf);
                }
                sc.tcp.variant = [Variant::Tahoe, Variant::Reno, Variant::Newreno][variant];
                sc.tcp.timer = [TimerKind::Bsd, TimerKind::Rfc6298][timer];
                sc.tcp.tick_s = 0.2;
                sc.tcp.min_rto_s = 0.2;
                sc.tcp.mss_bytes = mss;
                sc.tcp.initial_window = iw;
                sc.tcp.dupack_threshold = dupthresh;
                sc.tcp.send_buffer_bytes = sndbuf;
                sc.tcp.nagle = nagle;
                sc.receiver.receive_buffer_bytes = rcvbuf;
                sc.receiver.delayed_ack = delack;
                sc.sim.time_limit_s = 100_000.0;
                sc.flows = flows
                    .into_iter()
                    .map(|(bytes, up, client, modem, start, handshake)| Flow {
                        bytes,
                        direction: if up { Direction::Up } else { Direction::Down },
                        opener: if client { Opener::Client } else { Opener::Server },
                        start_s: start,
                        http_header_bytes: if client { Some(200) } else { None },
                        modem,
                        handshake,
                        extra_delay_s: 0.0,
                        send_jitter_s: 0.0,
                        reorder_jitter_s: 0.0,
                        drop_packets: drops.clone(),
                        congestion_control: None,
                        ecn: None,
                    })
                    .collect();
                sc
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Whatever the scenario and loss pattern, each flow either delivers all its bytes (the
    /// receiver's in-order point reaches the end exactly: cumulative delivery cannot skip or
    /// repeat) or was given up by TCP after 12 back-offs; the run terminates and never panics.
    #[test]
    fn every_byte_arrives_once_in_order(sc in arb_scenario(), seed in 0u64..1000) {
        sc.check().unwrap();
        let out = run(&sc, seed, RunOptions::default());
        prop_assert!(out.engine.simulated_s <= sc.sim.time_limit_s);
        for (f, spec) in out.flows.iter().zip(&sc.flows) {
            prop_assert_eq!(f.bytes, spec.bytes);
            // Delivered bytes reach the transfer's size exactly when (and only when) it finished.
            prop_assert_eq!(f.delivered_bytes == f.bytes, f.finished);
            if f.finished {
                let d = f.duration_s.unwrap();
                prop_assert!(d > 0.0);
                // The sender sent each new segment once; every other copy is a retransmission.
                prop_assert!(f.data_segments_sent >= 1);
                prop_assert!(f.throughput_bps.unwrap() <= 25e6);
            } else {
                // Only TCP giving up (12 back-offs), which needs heavy loss, leaves a flow open.
                prop_assert!(f.timeouts >= 1 || f.data_lost_downstream + f.acks_lost_upstream > 0 || f.data_segments_sent == 0);
            }
        }
    }

    /// Lossless runs always finish, never retransmit, and never time out.
    #[test]
    fn lossless_runs_are_clean(bytes in 1u64..300_000, window in 1u64..30, seed in 0u64..100) {
        let mut sc = common::hfc(window, bytes);
        sc.receiver.delayed_ack = true;
        let f = run(&sc, seed, RunOptions::default()).flows.remove(0);
        prop_assert!(f.finished);
        prop_assert_eq!(f.retransmitted_segments, 0);
        prop_assert_eq!(f.timeouts, 0);
        prop_assert_eq!(f.data_segments_sent, bytes.div_ceil(1460));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// Taps change nothing but the trace and the engine's event count. A link crossed without an
    /// event of its own (fabric.rs, "Crossings": the modem's LAN, the headend's link behind a MAC
    /// when it only delays) reports its enqueue rows and drops at the arrival's time, on an event
    /// of their own: the same (time, insertion) order with taps on as without. Fails if a
    /// crossing admitted a packet at the wrong time or out of order, or if a report moved an event.
    #[test]
    fn taps_change_nothing_but_the_trace(sc in arb_scenario(), mac in 0..3usize, lossless_up in any::<bool>(), seed in 0u64..1000) {
        let mut sc = sc;
        sc.upstream.mac = [MacKind::Fifo, MacKind::Docsis, MacKind::Ieee80214][mac];
        if let (true, Network::Hfc(h)) = (lossless_up, &mut sc.network) {
            h.upstream_loss = 0.0;
        }
        sc.sim.time_limit_s = 60.0;
        sc.check().unwrap();
        let quiet = run(&sc, seed, RunOptions::default());
        let tapped = run(&sc, seed, RunOptions { trace: true, ..Default::default() });
        prop_assert!(tapped.trace.as_ref().is_some_and(|t| !t.time_ns.is_empty()));
        prop_assert_eq!(format!("{:?}", quiet.flows), format!("{:?}", tapped.flows));
        prop_assert_eq!(format!("{:?}", quiet.stations), format!("{:?}", tapped.stations));
        prop_assert_eq!(quiet.engine.simulated_s, tapped.engine.simulated_s);
        prop_assert!(quiet.engine.events <= tapped.engine.events);
    }
}

/// Today's stack (the `linux` profile's rules) with each rule switched at random.
fn arb_today() -> impl Strategy<Value = Scenario> {
    (
        (0.0..0.15f64, 0.0..0.2f64, 0.0..0.02f64, prop::sample::select(vec![8192u64, 65_536, 1 << 20])),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        (1000u64..400_000, 1u32..12, any::<bool>(), prop::collection::vec(1u32..60, 0..4)),
    )
        .prop_map(
            |((dl, ul, reorder, buffer), (sack, rack, tlp, prr, lt, cubic, ts), (bytes, iw, linux_ack, drops))| {
                let mut sc = Scenario::cohen_default();
                if let Network::Hfc(h) = &mut sc.network {
                    h.downstream_loss = dl;
                    h.upstream_loss = ul;
                }
                sc.tcp.variant = Variant::Newreno;
                sc.tcp.timer = TimerKind::Linux;
                sc.tcp.min_rto_s = 0.2;
                sc.tcp.initial_window = iw;
                sc.tcp.sack = sack || rack || tlp;
                sc.tcp.rack = rack;
                sc.tcp.tlp = tlp;
                sc.tcp.prr = prr;
                sc.tcp.limited_transmit = lt;
                // Reno's growth by bytes; CUBIC's is its own (issue 36: byte counting needs a Reno flow).
                sc.tcp.byte_counting = !cubic;
                sc.tcp.timestamps = ts;
                sc.tcp.repeat_timeout_holds_ssthresh = true;
                sc.tcp.congestion_control =
                    if cubic { CongestionControlKind::Cubic } else { CongestionControlKind::Reno };
                sc.tcp.send_buffer_bytes = buffer;
                sc.receiver.receive_buffer_bytes = buffer;
                if linux_ack {
                    sc.receiver.ack_rule = AckRule::Linux;
                    sc.receiver.delack_tick_s = 0.04;
                }
                sc.sim.time_limit_s = 100_000.0;
                let mut flow = Flow::download(bytes);
                flow.reorder_jitter_s = reorder;
                flow.drop_packets = drops;
                sc.flows = vec![flow];
                sc
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// With SACK, RACK-TLP, PRR, CUBIC in any combination, random loss both ways and a path
    /// that reorders, every byte still arrives once and in order, or TCP gives up; the
    /// scoreboard's own checks (debug assertions) hold throughout.
    #[test]
    fn todays_recovery_delivers_every_byte_once_in_order(sc in arb_today(), seed in 0u64..1000) {
        sc.check().unwrap();
        let out = run(&sc, seed, RunOptions::default());
        let f = &out.flows[0];
        prop_assert_eq!(f.delivered_bytes == f.bytes, f.finished);
        prop_assert!(f.finished || f.timeouts >= 1, "{:?}", f);
        if f.finished {
            prop_assert!(f.throughput_bps.unwrap() <= 25e6);
        }
    }
}

fn lossy(seed: u64) -> String {
    let mut sc = Scenario::cohen_default();
    if let Network::Hfc(h) = &mut sc.network {
        h.downstream_loss = 0.02;
        h.upstream_loss = 0.05;
    }
    let mut out = run(&sc, seed, RunOptions { trace: true, ..Default::default() });
    out.engine.wall_s = 0.0;
    format!("{:?}{:?}{:?}", out.flows, out.engine, out.trace)
}

#[test]
fn same_seed_same_run_other_seed_other_losses() {
    assert_eq!(lossy(7), lossy(7));
    assert_ne!(lossy(7), lossy(8));
}

#[test]
fn loss_streams_are_keyed_by_component() {
    // A stream depends only on (seed, component): adding links never shifts another's draws.
    use hfcsim_core::rng::{component, Stream};
    let mut a = Stream::new(3, component::link_loss(0));
    let mut b = Stream::new(3, component::link_loss(0));
    let mut c = Stream::new(3, component::link_loss(2));
    let (x, y, z) = (a.uniform(), b.uniform(), c.uniform());
    assert_eq!(x, y);
    assert_ne!(x, z);
}

/// No loss, no delayed ACK, window W = 6 segments (8 KB rounded up to 8760 B): after slow
/// start each ACK releases one segment, so throughput = W * MSS * 8 / RTT where one segment's
/// round trip is: downstream serialisation 1500 B @ 25 Mb/s = 0.48 ms, 10 ms propagation, CM
/// LAN 1500 B @ 10 Mb/s = 1.2 ms, ACK 40 B @ 3 Mb/s = 0.10667 ms, 10 ms back: 21.78667 ms.
/// 6 * 1460 * 8 / 0.02178667 = 3.2167 Mb/s.
#[test]
fn lossless_throughput_matches_hand_calculation() {
    let sc = common::hfc(6, 30_000_000);
    let mut sc = sc;
    sc.tcp.send_buffer_bytes = 8192;
    sc.receiver.receive_buffer_bytes = 8192;
    let f = run(&sc, 1, RunOptions::default()).flows.remove(0);
    let expected = 6.0 * 1460.0 * 8.0 / 0.021_786_67;
    let got = f.throughput_bps.unwrap();
    assert!((got / expected - 1.0).abs() < 0.03, "got {got}, expected {expected}");
}

/// With delayed ACK, ACKs come one per pair of segments. A pair leaves the server back to back;
/// the second reaches the CM (10.96 ms) before the first has left it (11.68 ms), so the pair is
/// received 0.48 + 10 + 1.2 + 1.2 = 12.88 ms after it was sent, when the ACK goes out at once
/// (two full segments); it returns in 0.10667 + 10 ms. Three pairs are in flight, each cycling
/// every 22.98667 ms: 6 * 1460 * 8 / 0.02298667 = 3.0487 Mb/s.
#[test]
fn lossless_throughput_with_delayed_ack_matches_hand_calculation() {
    let mut sc = common::hfc(6, 30_000_000);
    sc.tcp.send_buffer_bytes = 8192;
    sc.receiver.receive_buffer_bytes = 8192;
    sc.receiver.delayed_ack = true;
    let f = run(&sc, 1, RunOptions::default()).flows.remove(0);
    let expected = 6.0 * 1460.0 * 8.0 / 0.022_986_67;
    let got = f.throughput_bps.unwrap();
    assert!((got / expected - 1.0).abs() < 0.03, "got {got}, expected {expected}");
}

#[test]
fn an_interrupt_check_stops_a_long_run() {
    let mut sc = common::hfc(44, 300_000_000);
    sc.receiver.delayed_ack = true;
    let mut calls = 0;
    let out = hfcsim_core::run_interruptible(&sc, 1, RunOptions::default(), || {
        calls += 1;
        true
    });
    assert!(out.is_none());
    assert_eq!(calls, 1);
    assert!(hfcsim_core::run_interruptible(&common::hfc(6, 30_000), 1, RunOptions::default(), || false).is_some());
}
