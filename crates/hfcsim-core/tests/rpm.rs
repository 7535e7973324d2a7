//! The responsiveness test (`[[rpm]]`, src/apps/rpm.rs, draft-ietf-ippm-responsiveness-09) run by
//! the engine: on a path whose queues stay empty RPM is 60 / RTT. (Under load on a DOCSIS plant,
//! drop-tail against AQM: tests/test_rpm.py, with the linux stack and the docsis30 preset.)

use hfcsim_core::apps::RpmRow;
use hfcsim_core::sim::{run, RunOptions};
use hfcsim_core::Scenario;
use serde_json::{json, Value};

fn rpm_of(doc: Value) -> RpmRow {
    let sc = Scenario::from_value(doc).expect("a valid scenario");
    let out = run(&sc, 1, RunOptions::default());
    assert_eq!(out.app_rows.rpm.len(), 1);
    out.app_rows.rpm[0].clone()
}

/// hfc with a FIFO upstream, 1 Gb/s each way and on the LAN, a 20 ms base RTT; each sender's
/// socket buffer 16 KB, so that each load-generating connection sends at most 16 KB a round trip
/// (6.6 Mb/s; 4 of them 26 Mb/s of the 1 Gb/s): the queues stay empty, a probe's round trip is the
/// path's 20 ms plus serialization (a 1,500-byte packet: 12 us a link).
#[test]
fn rpm_on_a_path_whose_queues_stay_empty_is_60_over_the_rtt() {
    let r = rpm_of(json!({
        "network": {"kind": "hfc", "downstream_bps": 1e9, "upstream_bps": 1e9, "cm_lan_bps": 1e9, "rtt_s": 0.02},
        "upstream": {"mac": "fifo"},
        "tcp": {"send_buffer_bytes": 16384, "initial_window": 10},
        "receiver": {"receive_buffer_bytes": 60000},
        "flows": [],
        "rpm": [{"connections": 2, "idle_s": 1.0, "duration_s": 4.0, "warmup_s": 1.0}],
        "sim": {"time_limit_s": 60.0},
    }));
    eprintln!("{r:?}");
    let rtt = 0.02;
    for (what, t) in [("tcp_f", r.tcp_f_s), ("tls_f", r.tls_f_s), ("http_f", r.http_f_s), ("http_l", r.http_l_s)] {
        let t = t.expect(what);
        assert!(t >= rtt && t < rtt * 1.005, "{what} {t}");
    }
    let idle = r.idle_rpm.unwrap();
    assert!((idle - 60.0 / rtt).abs() / (60.0 / rtt) < 0.005, "{idle}");
    let rpm = r.rpm.unwrap();
    assert!((rpm - 60.0 / rtt).abs() / (60.0 / rtt) < 0.005, "{rpm}");
    // 10 pairs of probes a second over the 3 s counted; 2 connections each way.
    assert_eq!((r.foreign_probes, r.self_probes, r.idle_probes, r.connections), (30, 30, 10, 4));
    // Each connection is held to its socket's 16 KB a round trip, downloads and uploads alike; the
    // writer refills the socket when a third of it is free (`sk_stream_write_space`), so between
    // two thirds and all of it is out.
    for g in [r.goodput_down_bps.unwrap(), r.goodput_up_bps.unwrap()] {
        let window_limited = 2.0 * 16384.0 * 8.0 / rtt;
        assert!(g > 0.66 * window_limited && g < 1.0 * window_limited, "{g}");
    }
}
