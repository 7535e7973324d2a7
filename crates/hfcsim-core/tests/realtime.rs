//! Real-time flows (issue 37: `[[games]]`, `[[calls]]`) on Nguyen & Armitage's DOCSIS testbed with
//! the FIFO upstream (tests/docsis.rs `testbed`), idle: every packet's one-way delay is its path's
//! serialisation, worked out by hand below as tests/docsis.rs works the echo's, so each session's
//! percentiles are exact and its jitter 0.

use hfcsim_core::realtime::emodel;
use hfcsim_core::scenario::{AqmKind, Call, Codec, Game, MacKind, Network, Scenario};
use hfcsim_core::sim::{run, Output, RunOptions};

/// The testbed without its plant delays, FIFO upstream; its one flow starts at 2.5 s, after the
/// sessions below have ended.
fn testbed() -> Scenario {
    let mut sc = Scenario::nguyen_default();
    if let Network::Docsis(d) = &mut sc.network {
        (d.interleave_i, d.interleave_j, d.ds_mgmt_overhead) = (None, None, false);
    }
    sc.upstream = Scenario::cohen_default().upstream;
    assert_eq!(sc.upstream.mac, MacKind::Fifo);
    sc.flows[0].bytes = 100_000;
    sc.flows[0].start_s = 2.5;
    sc
}

/// 10 packets a second each way from 0 to 1 s: 11 each way, 84 IP bytes both ways (the echo's size,
/// whose delays tests/docsis.rs works out).
fn game() -> Game {
    Game {
        modem: 0,
        start_s: 0.0,
        stop_s: Some(1.0),
        after_s: 0.0,
        rate_hz: 10.0,
        up_ip_bytes: 84,
        down_ip_bytes: 84,
        deadline_s: 0.05,
        nqb: false,
    }
}

fn go(sc: &Scenario) -> Output {
    sc.check().unwrap();
    run(sc, 1, RunOptions::default())
}

/// tests/docsis.rs: an 84-byte packet is 122 bytes on each 100 Mb/s Ethernet hop (9 760 ns), a
/// 108-byte DOCSIS frame on the cable: 84 375 ns up at 10.24 Mb/s, 30 609 ns down. Up = 9 760 +
/// 84 375 + 9 760; down = 9 760 + 30 609 + 9 760.
const UP_84: f64 = 103_895e-9;
const DOWN_84: f64 = 50_129e-9;

fn assert_exact(r: &hfcsim_core::realtime::WayRecord, delay: f64, sent: u64) {
    assert_eq!((r.sent, r.received, r.lost), (sent, sent, 0), "{r:?}");
    for (name, v) in [
        ("min", r.delay_min_s),
        ("p50", r.delay_p50_s),
        ("p90", r.delay_p90_s),
        ("p99", r.delay_p99_s),
        ("max", r.delay_max_s),
        ("mean", r.delay_mean_s),
    ] {
        assert_eq!(v, Some(delay), "{name}: {r:?}");
    }
    assert_eq!((r.jitter_s, r.jitter_max_s), (0.0, 0.0), "{r:?}");
}

#[test]
fn an_idle_games_delays_are_its_paths_to_the_nanosecond() {
    let mut sc = testbed();
    sc.games = vec![game()];
    let out = go(&sc);
    assert_eq!(out.games.len(), 2);
    let (up, down) = (&out.games[0], &out.games[1]);
    assert_eq!((up.direction, down.direction), ("up", "down"));
    assert_exact(up, UP_84, 11);
    assert_exact(down, DOWN_84, 11);
    assert_eq!((up.late, down.late), (0, 0));
    assert!(up.r_factor.is_none() && up.mos.is_none());
    assert!(out.calls.is_empty());
}

#[test]
fn a_deadline_below_the_paths_delay_makes_every_packet_late() {
    // 100 us: above the downstream's 50 129 ns, below the upstream's 103 895 ns.
    let mut sc = testbed();
    sc.games = vec![Game { deadline_s: 100e-6, ..game() }];
    let out = go(&sc);
    assert_eq!((out.games[0].late, out.games[1].late), (11, 0));
}

#[test]
fn different_sizes_each_way_take_their_own_serialisation() {
    // 200 IP bytes down: a 218-byte Ethernet frame, 238 on the wire: 19 040 ns a hop; a 224-byte
    // DOCSIS frame, 1 792 bits at 28 227 162 b/s = 63 484.95 -> 63 485 ns. Down = 2 * 19 040 + 63 485.
    let mut sc = testbed();
    sc.games = vec![Game { down_ip_bytes: 200, ..game() }];
    let out = go(&sc);
    assert_exact(&out.games[0], UP_84, 11);
    assert_exact(&out.games[1], 101_565e-9, 11);
}

#[test]
fn nqb_datagrams_through_idle_lld_queues_take_the_same_nanoseconds() {
    let mut sc = testbed();
    if let Network::Docsis(d) = &mut sc.network {
        (d.cmts_aqm, d.cm_aqm) = (AqmKind::Lld, AqmKind::Lld);
    }
    sc.games = vec![Game { nqb: true, ..game() }];
    let out = go(&sc);
    assert_exact(&out.games[0], UP_84, 11);
    assert_exact(&out.games[1], DOWN_84, 11);
}

#[test]
fn an_idle_g711_call_scores_the_e_models_value_for_its_delay() {
    // G.711, 20 ms: 160 + RTP 12 + UDP 8 + IP 20 = 200 bytes each way. Up: 2 * 19 040 + a 224-byte
    // frame's 1 792 bits at 10.24 Mb/s, 175 000 ns = 213 080 ns; down 101 565 ns (above). 0 to 0.5 s:
    // 26 frames each way.
    let mut sc = testbed();
    sc.calls = vec![Call {
        modem: 0,
        start_s: 0.0,
        stop_s: Some(0.5),
        after_s: 0.0,
        frame_s: 0.02,
        codec: Codec::G711,
        jitter_buffer_s: 0.04,
        nqb: false,
    }];
    let out = go(&sc);
    assert_eq!(out.calls.len(), 2);
    assert_exact(&out.calls[0], 213_080e-9, 26);
    assert_exact(&out.calls[1], 101_565e-9, 26);
    // Mouth to ear: the one-way delay + the 40 ms buffer + the 20 ms frame; no loss: Ppl = 0.
    let ta = 213_080e-9 + 0.04 + 0.02;
    let up = &out.calls[0];
    let got = up.mouth_to_ear_s.unwrap();
    assert!((got - ta).abs() < 1e-15, "{got} vs {ta}");
    let r = emodel::r_factor(1e3 * got, 0.0, 25.1, 0.0);
    assert_eq!(up.r_factor, Some(r));
    assert_eq!(up.mos, Some(emodel::mos(r)));
    // Below 100 ms no Idd; echo impairments alone: R between 91 and the default's 93.2.
    assert!(r > 91.0 && r < 93.2, "{r}");
    assert_eq!(up.late, 0);
}
