//! Busy hour on a DOCSIS plant (issue 35): the shared channels take from the service flows, so each
//! flow's AQM governs all the waiting and no FIFO sits behind the flows.
//! - Downstream: a channel oversubscribed by rate-capped flows (net/shared.rs). Under PIE each flow's
//!   queue holds near PIE's target and the channel stays busy; under drop-tail the queues fill.
//! - Upstream: a modem uploading among contending modems (access/serviceflow.rs). Its service flow is
//!   the queue its station requests from, so DOCSIS-PIE holds the whole wait near its target; drop-tail
//!   fills MULPI's 100 ms buffer.
//! - Every echo's one-way delays are the sum of their parts (fabric.rs `Leg`), whatever the network.

use hfcsim_core::metrics::PlaceMetrics;
use hfcsim_core::schema::schema;
use hfcsim_core::sim::{run, Output, RunOptions};
use hfcsim_core::Scenario;
use proptest::prelude::*;
use serde_json::{json, Value};

fn place<'a>(out: &'a Output, name: &str) -> &'a PlaceMetrics {
    out.engine.places.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no place {name}"))
}

/// Nguyen & Armitage's plant (28.23 Mb/s of downstream payload) with four modems downloading, each
/// capped at 20 Mb/s (80 Mb/s of demand on 28 Mb/s), Linux-sized windows (1 MB), a 20 ms server,
/// and the CMTS's queues under `aqm` with MULPI's 100 ms buffers at the cap (250 KB).
fn oversubscribed_downstream(aqm: &str) -> Scenario {
    let flows: Vec<Value> = (0..4)
        .map(|m| json!({"modem": m, "bytes": 1_000_000_000_000u64, "start_s": 0.1 * m as f64, "extra_delay_s": 0.01}))
        .collect();
    let doc = json!({
        "network": {"ds_rate_bps": 20e6, "cmts_aqm": aqm, "default_buffer": "mulpi"},
        "tcp": {"send_buffer_bytes": 1 << 20},
        "receiver": {"receive_buffer_bytes": 1 << 20},
        "flows": flows,
        "sim": {"time_limit_s": 20.0, "measure_from_s": 5.0},
    });
    let sc = Scenario::from_value(schema().with_preset(doc, "nguyen04")).expect("a valid scenario");
    sc.check().expect("a valid scenario");
    sc
}

#[test]
fn an_oversubscribed_downstream_under_pie_holds_each_flow_near_target_and_the_channel_busy() {
    let payload = 28_227_162.0 - 218_404.0; // the channel's payload less the MAC messages (tests/bonding.rs)
    let pie = run(&oversubscribed_downstream("pie"), 1, RunOptions::default());
    let tail = run(&oversubscribed_downstream("droptail"), 1, RunOptions::default());
    for out in [&pie, &tail] {
        // The channel is busy: the downloads together carry nearly all of its payload rate (their
        // frames' DOCSIS and Ethernet headers take the rest).
        let carried: f64 = out.flows.iter().map(|f| 8.0 * f.measured_bytes as f64 / f.measured_s).sum();
        assert!(carried > 0.93 * payload && carried < payload, "{carried} of {payload}");
    }
    for m in 0..4 {
        let name = format!("cmts_ds_modem{m}");
        // PIE (RFC 8033, target 15 ms) holds each flow's mean wait near its target, where it measures
        // it (the CMTS reads the head's waiting time; the flows drain at a quarter of the channel,
        // not at their 20 Mb/s caps)...
        let p = place(&pie, &name);
        let median = p.wait_p50_s.unwrap();
        assert!((0.008..0.025).contains(&median), "{name} under PIE: {p:?}");
        assert!(p.drops_aqm > 0, "{p:?}");
        // ... and under drop-tail the queues fill towards the 250 KB buffer (about 285 ms at 7 Mb/s):
        // NewReno's windows grow by a packet a round trip until the buffer overflows.
        let t = place(&tail, &name);
        assert!(t.wait_p90_s.unwrap() > 0.1 && t.wait_p90_s.unwrap() > 4.0 * p.wait_p90_s.unwrap(), "{t:?}");
        assert!(t.held_max_bytes > 100_000 && t.drops_aqm == 0, "{t:?}");
    }
}

/// A DOCSIS 3.0 upstream (30.72 Mb/s, 2 ms MAPs) with 30 modems offering 30 % of it as background,
/// and modem 0 uploading at its 10 Mb/s tier with a 1 MB window; the modem's flow under `aqm`
/// with MULPI's 100 ms buffer (125 KB).
fn contended_upload(aqm: &str) -> Scenario {
    let doc = json!({
        "preset": "docsis30",
        "network": {"us_rate_bps": 10e6, "cm_aqm": aqm},
        "tcp": {"send_buffer_bytes": 1 << 20},
        "receiver": {"receive_buffer_bytes": 1 << 20},
        "modems": [{"count": 1}, {"count": 29, "background_load": 0.3, "background_bytes": 500}],
        "flows": [{"modem": 0, "bytes": 1_000_000_000_000u64, "direction": "up"}],
        "sim": {"time_limit_s": 15.0, "measure_from_s": 5.0},
    });
    let mut doc = doc;
    let preset = doc.as_object_mut().unwrap().remove("preset").unwrap();
    let sc = Scenario::from_value(schema().with_preset(doc, preset.as_str().unwrap())).expect("a valid scenario");
    sc.check().expect("a valid scenario");
    sc
}

#[test]
fn a_contended_upload_under_docsis_pie_holds_its_flows_wait_near_target() {
    let pie = run(&contended_upload("docsis_pie"), 1, RunOptions::default());
    let tail = run(&contended_upload("droptail"), 1, RunOptions::default());
    // The modem gets its tier either way (the channel has room beside the background): ...
    for out in [&pie, &tail] {
        let f = &out.flows[0];
        let rate = 8.0 * f.measured_bytes as f64 / f.measured_s;
        assert!(rate > 8.5e6 && rate < 10e6, "{rate}");
    }
    // ... under DOCSIS-PIE (RFC 8034, target 10 ms) its queue, where every packet waits for its
    // grant, holds near the target; under drop-tail it fills the 100 ms buffer.
    let p = place(&pie, "cm_us_modem0");
    assert!((0.004..0.02).contains(&p.wait_mean_s.unwrap()), "{p:?}");
    assert!(p.drops_aqm > 0, "{p:?}");
    let t = place(&tail, "cm_us_modem0");
    assert!(t.wait_p90_s.unwrap() > 0.08, "{t:?}");
    assert!(t.drops_full > 0, "{t:?}");
}

#[test]
fn an_echo_in_flight_at_the_end_is_not_lost_and_a_dropped_one_is() {
    // Nguyen's testbed: a ping every 10 ms while a download fills the CMTS's 4500-B queue (three
    // packets), until the time limit cuts the run. Echoes the full queue refuses are lost; the ones
    // still on their way at the end are unanswered but not lost.
    let doc = json!({
        "network": {"cmts_queue_bytes": 4500},
        "flows": [{"bytes": 1_000_000_000u64}],
        "pings": [{"interval_s": 0.01, "ip_bytes": 84}],
        "sim": {"time_limit_s": 5.0},
    });
    let sc = Scenario::from_value(schema().with_preset(doc, "nguyen04")).unwrap();
    sc.check().unwrap();
    let out = run(&sc, 1, RunOptions::default());
    let lost = out.pings.iter().filter(|p| p.lost).count();
    let flying = out.pings.iter().filter(|p| p.rtt_s.is_none() && !p.lost).count();
    assert!(lost > 0, "the full queue drops some echoes");
    assert!((1..=3).contains(&flying), "the last echoes are in flight at 5 s: {flying}");
    assert!(out.pings.iter().rev().take(flying).all(|p| p.rtt_s.is_none() && !p.lost));
    assert!(out.pings.iter().all(|p| !(p.lost && p.rtt_s.is_some())));
}

/// Every echo that got through: its parts sum to its one-way delay, each way, to the nanosecond
/// (the parts are whole nanoseconds, printed as seconds).
fn parts_add_up(out: &Output) -> Result<(), TestCaseError> {
    for p in &out.pings {
        for (total, parts) in [
            (p.up_s, [p.up_queue_s, p.up_access_s, p.up_serialisation_s, p.up_propagation_s]),
            (p.down_s, [p.down_queue_s, p.down_access_s, p.down_serialisation_s, p.down_propagation_s]),
        ] {
            let Some(total) = total else {
                prop_assert!(parts.iter().all(Option::is_none));
                continue;
            };
            let sum: f64 = parts.iter().map(|x| x.expect("parts of a delay that is known")).sum();
            prop_assert!(parts.iter().all(|x| x.unwrap() >= 0.0));
            prop_assert!((sum - total).abs() < 1e-9, "echo {} of ping {}: {} vs {}", p.seq, p.ping, sum, total);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Over random networks (every kind with pings: hfc with each upstream, docsis with and without
    /// a MAC and with each AQM, bonded or not), loads and losses, an echo's parts sum to its delays.
    #[test]
    fn an_echos_parts_sum_to_its_one_way_delays(
        kind in prop::sample::select(vec!["hfc-fifo", "hfc-docsis", "hfc-80214", "docsis-fifo", "docsis-mac", "docsis-bonded"]),
        aqm in prop::sample::select(vec!["droptail", "pie", "codel", "lld"]),
        modems in 1u32..4,
        loss in prop::sample::select(vec![0.0, 0.01]),
        extra in prop::sample::select(vec![0.0, 0.005]),
        seed in 1u64..1000,
    ) {
        let flows: Vec<Value> = (0..modems).map(|m| json!({"modem": m, "bytes": 300_000, "extra_delay_s": extra})).collect();
        let pings = json!([{"modem": 0, "interval_s": 0.05, "ip_bytes": 100, "nqb": aqm == "lld"}]);
        let sim = json!({"time_limit_s": 4.0});
        let doc = match kind {
            "hfc-fifo" | "hfc-docsis" | "hfc-80214" => {
                let mac = &kind[4..];
                let mac = if mac == "80214" { "ieee802.14" } else { mac };
                json!({"network": {"kind": "hfc", "downstream_loss": loss, "headend_queue_bytes": 60000},
                       "upstream": {"mac": mac}, "flows": flows, "pings": pings, "sim": sim})
            }
            _ => {
                let mut d = json!({"network": {"downstream_loss": loss, "cmts_aqm": if aqm == "codel" { "pie" } else { aqm },
                                              "cm_aqm": aqm, "ds_rate_bps": 5e6},
                                  "flows": flows, "pings": pings, "sim": sim});
                if kind == "docsis-fifo" {
                    d["upstream"] = json!({"mac": "fifo"});
                    d["network"]["ds_mgmt_overhead"] = json!(false);
                }
                if kind == "docsis-bonded" {
                    d["upstream"] = json!({"channels": 2});
                    d["modems"] = json!([{"count": modems, "bonded_channels": 2}]);
                }
                schema().with_preset(d, "nguyen04")
            }
        };
        let sc = match Scenario::from_value(doc) {
            Ok(sc) if sc.check().is_ok() => sc,
            _ => return Ok(()), // a combination the schema refuses (e.g. LLD on hfc)
        };
        let out = run(&sc, seed, RunOptions::default());
        prop_assert!(out.pings.iter().any(|p| p.up_s.is_some()));
        parts_add_up(&out)?;
    }
}
