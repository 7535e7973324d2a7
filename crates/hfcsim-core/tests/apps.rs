//! Applications over the engine's TCP (issue 37, src/apps/): page loads worked out by hand on a
//! lossless path of known rates and delays, and invariants over random application scenarios.
//!
//! The path: the hfc network with a FIFO upstream, 8 Mb/s each way (1 us a byte), the modem's LAN
//! at 80 Mb/s (0.1 us a byte), a 20 ms base RTT (10 ms of propagation each way). Every link stores
//! and forwards, so a packet of S bytes takes S us + 10 ms upstream and S us + 10 ms + S/10 us
//! downstream, behind whatever the same link is still sending. Headers 40 bytes, no options; ACKs
//! at once (`receiver.delayed_ack = false`), so each data segment a receiver takes is answered by a
//! 40-byte ACK that leaves before anything the application then writes.

use hfcsim_core::apps::App;
use hfcsim_core::sim::{run, Output, RunOptions};
use hfcsim_core::Scenario;
use proptest::prelude::*;
use serde_json::{json, Value};

fn path(web: Value) -> Scenario {
    let doc = json!({
        "network": {"kind": "hfc", "downstream_bps": 8e6, "upstream_bps": 8e6, "cm_lan_bps": 80e6, "rtt_s": 0.02},
        "upstream": {"mac": "fifo"},
        "receiver": {"delayed_ack": false},
        "flows": [],
        "web": [web],
        "sim": {"time_limit_s": 10.0},
    });
    Scenario::from_value(doc).expect("a valid scenario")
}

fn pages(out: &Output) -> Vec<hfcsim_core::apps::web::PageRecord> {
    match &out.apps[0] {
        App::Web(s) => s.records.clone(),
        other => panic!("not a web session: {other:?}"),
    }
}

fn ms(t: Option<hfcsim_core::time::SimTime>) -> f64 {
    t.expect("reached").0 as f64 / 1e6
}

/// One page of a 1,000-byte document and two 1,000-byte objects found in it, one host, no TLS,
/// 500-byte requests, 300-byte response headers.
fn three_objects(http: u32) -> Value {
    json!({"document_bytes": 1000, "objects": [1000, 1000], "http": http, "tls_round_trips": 0})
}

#[test]
fn http11_page_of_three_objects_loads_in_the_worked_time() {
    let out = run(&path(three_objects(1)), 1, RunOptions::default());
    let p = &pages(&out)[0];
    // 0: SYN (40) up, at the server 10.040 ms; SYN-ACK (40) down, at the client 10.040 + 10.044 =
    // 20.084. The client's ACK (40) and the request (540) go up back to back: the request is out at
    // 20.664 and at the server at 30.664. The server's ACK of it (40) and the response (1,340)
    // leave back to back: on the channel until 32.044, at the LAN 42.044, at the client 42.178: the
    // first byte and the whole document.
    assert!((ms(p.first_byte) - 42.178).abs() < 1e-6, "{p:?}");
    // 42.178: the client's ACK (40), the first object's request on connection 0 (540) and a SYN for
    // connection 1 (40) go up: out at 42.218, 42.758, 42.798. The request reaches the server at
    // 52.758: its ACK and the response hold the downstream until 54.138, at the client at 64.272.
    // Connection 1's SYN-ACK waits for the channel and reaches the client at 64.276, but connection
    // 0 is idle from 64.272 and takes the second object at once (a browser gives a waiting object
    // to the first idle connection): after the ACK of object 1 (64.272-64.312) its request goes
    // 64.312-64.852, reaches the server at 74.852; its ACK and response leave 74.852-76.232, reach
    // the LAN at 86.232: 86.366.
    assert!((ms(p.loaded) - 86.366).abs() < 1e-6, "{p:?}");
    assert_eq!((p.objects, p.connections, p.bytes, p.failed), (3, 2, 3 * 1300, false));
}

#[test]
fn http2_page_of_three_objects_loads_in_the_worked_time() {
    let out = run(&path(three_objects(2)), 1, RunOptions::default());
    let p = &pages(&out)[0];
    // One connection. The first request carries the connection preface and SETTINGS (551 + 40):
    // out at 20.084 + 0.040 + 0.591 = 20.715, at the server 30.715. The response carries the
    // server's SETTINGS and ACK (36), a HEADERS frame (9 + 300) and a DATA frame (9 + 1,000): a
    // 1,394-byte packet behind the 40-byte ACK, on the channel until 32.149, at the client
    // 42.149 + 0.1394 = 42.2884.
    assert!((ms(p.first_byte) - 42.2884).abs() < 1e-6, "{p:?}");
    // Both objects are asked for at once: the ACK (40) and two 540-byte requests, out at 42.3284,
    // 42.8684, 43.4084. Each response is a HEADERS and a DATA frame in a 1,358-byte packet (9 + 300
    // + 9 + 1,000 + 40). The first request's ACK and response leave
    // 52.8684-54.2664, the second's (its request in at 53.4084) 54.2664-55.6644; at the LAN at
    // 65.6644 behind the first response (64.2664-64.4022) and the second ACK (-64.4062): 65.8002.
    assert!((ms(p.loaded) - 65.8002).abs() < 1e-6, "{p:?}");
    assert_eq!((p.objects, p.connections, p.failed), (3, 1, false));
}

#[test]
fn tls13_adds_its_flights_before_the_request() {
    let plain = pages(&run(&path(three_objects(2)), 1, RunOptions::default()))[0].clone();
    let mut w = three_objects(2);
    w["tls_round_trips"] = json!(1);
    let tls = pages(&run(&path(w), 1, RunOptions::default()))[0].clone();
    // The ClientHello (517) and the server's flight (4,000 bytes: segments of 1,460, 1,460 and
    // 1,080) before the request, and the client's Finished (74) with it. Net/3's initial window at
    // the accepting host (two segments, Cohen Sec. VI.A) holds the flight's third segment until the
    // first ACK comes back: two round trips (40 ms) and the flight's serialisation (about 4.3 ms at
    // 8 Mb/s) later, not one.
    let extra = ms(tls.first_byte) - ms(plain.first_byte);
    assert!(extra > 40.0 + 3.0 && extra < 40.0 + 5.0, "{extra}");
}

#[test]
fn pages_follow_one_another_after_the_think_time() {
    let mut w = three_objects(1);
    w["pages"] = json!(3);
    w["think_s"] = json!(1.0);
    let out = run(&path(w), 1, RunOptions::default());
    let p = pages(&out);
    assert_eq!(p.len(), 3);
    for k in 1..3 {
        let gap = p[k].start.0 - p[k - 1].loaded.unwrap().0;
        assert_eq!(gap, 1_000_000_000, "{p:?}");
        // Each page opens new connections: the same worked load time.
        assert!((ms(p[k].loaded) - ms(Some(p[k].start)) - 86.366).abs() < 1e-6, "{p:?}");
    }
    // The run ends when the last page has loaded.
    assert!(out.engine.simulated_s < 2.5, "{}", out.engine.simulated_s);
}

fn arb_app() -> impl Strategy<Value = Value> {
    let web = (1u32..=2, 0u32..=2, 1u32..=4, prop::collection::vec(100u32..200_000, 0..6), 1u32..=3).prop_map(
        |(http, tls, hosts, objects, pages)| {
            let sub: Vec<u32> = objects.iter().take(2).map(|b| b / 2 + 1).collect();
            json!({"web": [{"http": http, "tls_round_trips": tls, "hosts": hosts, "objects": objects,
                            "subobjects": if objects.is_empty() { vec![] } else { sub }, "pages": pages, "think_s": 0.5}]})
        },
    );
    let video = (prop::bool::ANY, 1.0f64..30.0, 0u32..=1).prop_map(|(bba, duration, tls)| {
        json!({"video": [{"abr": if bba { "bba" } else { "throughput" }, "duration_s": duration, "tls_round_trips": tls,
                          "bitrates_bps": [300000, 1000000, 3000000]}]})
    });
    let rpm = (1u32..=3, 0u32..=2, 0.05f64..0.5, 2.0f64..6.0).prop_map(|(connections, tls, interval, duration)| {
        json!({"rpm": [{"connections": connections, "tls_round_trips": tls, "probe_interval_s": interval,
                        "idle_s": 0.5, "duration_s": duration, "warmup_s": duration / 2.0}]})
    });
    prop_oneof![web, video, rpm]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Over random applications on a plant with loss and a busy upstream: no metric negative or NaN,
    /// no object counted twice, no more bytes than were written.
    #[test]
    fn application_metrics_stay_physical(app in arb_app(), loss in 0.0f64..0.05, stack in 0usize..3, seed in 0u64..1000) {
        let stack = ["net3-rfc5681", "linux", "ns2"][stack];
        let mut doc = json!({
            "network": {"kind": "hfc", "downstream_bps": 20e6, "upstream_bps": 2e6, "downstream_loss": loss, "upstream_loss": loss / 2.0},
            "tcp": {"stack": stack},
            "flows": [{"bytes": 200000, "modem": 1}],
            "sim": {"time_limit_s": 60.0},
        });
        for (k, v) in app.as_object().unwrap() {
            doc[k] = v.clone();
        }
        let sc = Scenario::from_value(doc).expect("a valid scenario");
        let out = run(&sc, seed, RunOptions::default());
        match &out.apps[0] {
            App::Web(s) => {
                for p in &s.records {
                    let page = s.spec().page.clone();
                    let most: u64 = page.document + page.objects.iter().chain(&page.subobjects).sum::<u64>()
                        + (1 + page.objects.len() + page.subobjects.len()) as u64 * s.spec().response_header_bytes;
                    prop_assert!(p.bytes <= most, "{p:?}");
                    if let Some(l) = p.loaded {
                        prop_assert!(l >= p.start && p.first_byte.is_some_and(|f| f >= p.start && f <= l), "{p:?}");
                        prop_assert_eq!(p.bytes, most);
                    }
                }
            }
            App::Video(v) => {
                for r in &v.records {
                    prop_assert!(r.buffer_s >= 0.0 && r.buffer_s.is_finite(), "{r:?}");
                    if let (Some(f), Some(d)) = (r.first_byte, r.done) {
                        prop_assert!(r.requested <= f && f <= d, "{r:?}");
                    }
                }
                prop_assert!(v.records.len() as u32 <= v.segments());
                if let Some(s) = v.result.startup {
                    prop_assert!(s > 0);
                }
                if v.result.finished.is_some() {
                    prop_assert_eq!(v.records.len() as u32, v.segments());
                }
            }
            App::Rpm(t) => {
                let r = &out.app_rows.rpm[0];
                for x in [r.rpm, r.idle_rtt_s, r.idle_rpm, r.tcp_f_s, r.tls_f_s, r.http_f_s, r.http_l_s].into_iter().flatten() {
                    prop_assert!(x.is_finite() && x > 0.0, "{r:?}");
                }
                // No more goodput than the path carries (20 Mb/s down, 2 Mb/s up).
                prop_assert!(r.goodput_down_bps.is_none_or(|g| (0.0..=20e6).contains(&g)), "{r:?}");
                prop_assert!(r.goodput_up_bps.is_none_or(|g| (0.0..=2e6).contains(&g)), "{r:?}");
                prop_assert_eq!(r.connections, 2 * t.spec().connections);
                prop_assert_eq!(r.tls_f_s.is_some(), r.tcp_f_s.is_some() && t.spec().tls.round_trips > 0, "{:?}", r);
                // No probe ends before it starts or counts twice.
                let counted = t.probes.iter().filter(|p| !p.idle).count() as u32;
                prop_assert!(r.foreign_probes + r.self_probes <= counted, "{r:?}");
            }
        }
    }
}
