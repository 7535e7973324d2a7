//! The engine benchmark of docs/performance.md (a benchmark, not a test):
//! `cargo run --release -p hfcsim-core --example bench_report`
//!
//! (a) 200 seeds of the Cohen default 3 MB download at 1 % downstream loss;
//! (b) one 300 MB download with 64 KB socket buffers and no loss;
//! (c) 20 seeds of Nguyen & Armitage's testbed (`preset = "nguyen04"`): nttcp's 8 MB through the 2 Mb/s
//!     cap and a 64 KB CMTS queue under CoDel, the DOCSIS MAC upstream, a ping a second;
//! (d) (a) with the `linux` stack's rules: CUBIC, SACK with RACK-TLP and PRR, timestamps, IW 10,
//!     Linux's timer and delayed ACK (the SACK scoreboard's cost on the lossy common case);
//! (e) one DOCSIS modem whose MAC queue grows for 240 s (50 % background, no concatenation).
//! Prints simulated data packets and events per wall-clock second, best of 10 repetitions.

use hfcsim_core::scenario::{AckSpacing, AqmKind, MacKind, ModemGroup, Network, Ping};
use hfcsim_core::{run, RunOptions, Scenario};
use std::time::Instant;

/// `BENCH_ONLY=a` runs one case, `BENCH_REPS=1` one repetition (for callgrind's instruction counts).
fn measure(name: &str, scenarios: &[(Scenario, u64)]) {
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if !only.is_empty() && !name.starts_with(&format!("({only})")) {
        return;
    }
    let reps = std::env::var("BENCH_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(10);
    let mut best = f64::INFINITY;
    let (mut packets, mut events) = (0u64, 0u64);
    for _ in 0..reps {
        let t0 = Instant::now();
        packets = 0;
        events = 0;
        for (sc, seed) in scenarios {
            let out = run(sc, *seed, RunOptions::default());
            packets += out.flows.iter().map(|f| f.data_segments_sent + f.retransmitted_segments).sum::<u64>();
            events += out.engine.events;
        }
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!(
        "{name}: {packets} data packets, {events} events in {:.3} s wall: {:.2} M packets/s, {:.2} M events/s",
        best,
        packets as f64 / best / 1e6,
        events as f64 / best / 1e6
    );
}

fn main() {
    let mut lossy = Scenario::cohen_default();
    if let Network::Hfc(h) = &mut lossy.network {
        h.downstream_loss = 0.01;
    }
    let a: Vec<_> = (0..200).map(|s| (lossy.clone(), s)).collect();
    measure("(a) 200 seeds x 3 MB at 1 % loss", &a);

    let mut big = Scenario::cohen_default();
    big.tcp.send_buffer_bytes = 65_536;
    big.receiver.receive_buffer_bytes = 65_536;
    big.flows[0].bytes = 300_000_000;
    measure("(b) one 300 MB transfer, 64 KB buffers, no loss", &[(big, 1)]);

    let mut testbed = Scenario::nguyen_default();
    if let Network::Docsis(d) = &mut testbed.network {
        d.cmts_queue_bytes = Some(65_536);
        d.cmts_aqm = AqmKind::Codel;
    }
    testbed.flows[0].bytes = 2048 * 4096;
    testbed.pings =
        vec![Ping { modem: 0, start_s: 0.0, interval_s: 1.0, ip_bytes: 84, stop_s: None, after_s: 3.0, nqb: false }];
    testbed.check().expect("a valid scenario");
    let c: Vec<_> = (0..20).map(|s| (testbed.clone(), s)).collect();
    measure("(c) 20 seeds x Nguyen testbed, 8 MB at a 2 Mb/s cap, CoDel, DOCSIS MAC", &c);

    // The linux stack's rules as schema.toml's profile sets them.
    let doc = serde_json::json!({"network": {"downstream_loss": 0.01}});
    let doc = hfcsim_core::schema::schema().with_stack(doc, "linux");
    let today = Scenario::from_value(doc).expect("a valid scenario");
    let d: Vec<_> = (0..200).map(|s| (today.clone(), s)).collect();
    measure("(d) (a) with the linux stack: CUBIC + SACK/RACK-TLP/PRR", &d);

    // A DOCSIS modem whose queue grows without bound: 50 % background load, one packet per
    // request (no concatenation), 240 s. A request's cost must not grow with the queue (issue
    // "Reliability, round two", defect 2: it was quadratic, 20 s of wall time at 120 s).
    let mut backlog = Scenario::cohen_default();
    backlog.upstream.mac = MacKind::Docsis;
    backlog.modems = vec![ModemGroup {
        count: 1,
        distance_km_min: 0.0,
        distance_km_max: 0.0,
        queue_packets: None,
        queue_bytes: None,
        background_load: 0.5,
        background_bytes: 48,
        piggyback: None,
        ack_spacing: AckSpacing::Off,
        channel: 0,
        bonded_channels: 1,
        ds_rate_bps: None,
        us_rate_bps: None,
        ds_min_rate_bps: None,
        ds_priority: None,
    }];
    backlog.sim.time_limit_s = 240.0;
    backlog.check().expect("a valid scenario");
    measure("(e) one DOCSIS modem with a growing queue, 240 s", &[(backlog, 1)]);
}
