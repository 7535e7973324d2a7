//! Elloumi et al.'s ATM-HFC network (topology::atm_hfc) end to end: a round trip worked out by hand
//! to the nanosecond, early packet discard at SW1 counted once per packet, the rate schedule, and
//! the measurement window.

use hfcsim_core::scenario::{AtmHfc, Network, Scenario};
use hfcsim_core::sim::{run, RunOptions};

/// Elloumi Fig. 2 with the FIFO upstream (no MAC, no background), 1 KB MTU, 64 KB windows, ACK
/// every segment, Reno with an 8 KB initial ssthresh (Tables 1-2).
fn elloumi(epd: Option<u64>, schedule: Vec<(f64, f64)>) -> Scenario {
    let mut sc = Scenario::cohen_default();
    sc.network = Network::AtmHfc(AtmHfc {
        downstream_bps: 30e6,
        upstream_bps: 3e6,
        source_bps: 155e6,
        bottleneck_bps: 6e6,
        bottleneck_delay_s: 0.00125,
        bottleneck_schedule: schedule,
        headend_bps: 155e6,
        epd_threshold_cells: epd,
        switch_buffer_cells: None,
        driver_buffer_packets: Some(50),
        processing_s: 100e-6,
        downstream_loss: 0.0,
        upstream_loss: 0.0,
    });
    sc.tcp.mss_bytes = 984;
    sc.tcp.send_buffer_bytes = 65536;
    sc.tcp.initial_ssthresh_bytes = Some(8192);
    sc.receiver.receive_buffer_bytes = 65536;
    sc.receiver.delayed_ack = false;
    sc.flows[0].bytes = 1 << 40;
    sc.flows[0].handshake = false;
    sc
}

#[test]
fn one_segment_round_trip_to_the_nanosecond() {
    // A 1024-byte IP packet is 22 cells = 1166 bytes = 9328 bits; an ACK 2 cells = 848 bits.
    // Each serialisation is rounded up to the nanosecond:
    //   source host 100 000 + 155 Mb/s 60 181 + SW1 at 6 Mb/s 1 554 667 + 1.25 ms
    //   + SW2 at 155 Mb/s 60 181 + downstream at 30 Mb/s 310 934      = 3 335 963 ns to the station;
    //   station host 100 000 + upstream FIFO at 3 Mb/s 282 667 + SW2 at 6 Mb/s 141 334 + 1.25 ms
    //   + SW1 at 155 Mb/s 5 471                                       = 1 779 472 ns back.
    // Two segments: the first one's ACK is the only sample (the run ends when the second arrives).
    let mut sc = elloumi(None, vec![]);
    sc.flows[0].bytes = 2 * 984;
    let out = run(&sc, 1, RunOptions::default());
    let f = &out.flows[0];
    assert_eq!(f.rtt_samples, 1);
    assert_eq!(f.rtt_mean_s, Some(5_115_435e-9));
    assert_eq!(f.measured_bytes, 2 * 984);
    let sw = out.engine.switches.expect("an ATM network reports its switches");
    assert_eq!((sw.epd_packets, sw.partial_packets), (0, 0));
}

#[test]
fn without_loss_the_bottleneck_is_full_of_cells() {
    // No EPD, unbounded switches: the 64 KB window exceeds the bandwidth-delay product, so from
    // t = 1 s on SW1 sends cells back to back: 6 Mb/s x 984 / 1166 of TCP payload.
    let mut sc = elloumi(None, vec![]);
    sc.sim.time_limit_s = 15.0;
    sc.sim.measure_from_s = 1.0;
    let f = &run(&sc, 1, RunOptions::default()).flows[0];
    let payload_bps = 8.0 * f.measured_bytes as f64 / f.measured_s;
    assert_eq!(f.measured_s, 14.0);
    let full = 6e6 * 984.0 / 1166.0;
    assert!(payload_bps <= full && payload_bps > 0.999 * full, "{payload_bps} of {full}");
    assert_eq!((f.timeouts, f.epd_drops, f.queue_drops), (0, 0, 0));
}

#[test]
fn early_packet_discard_drops_whole_packets_at_sw1() {
    // Slow start overruns a 100-cell threshold: every discard is of a whole 22-cell data packet,
    // counted once in the flow's epd_drops and in engine.switches.
    let mut sc = elloumi(Some(100), vec![]);
    sc.sim.time_limit_s = 5.0;
    let out = run(&sc, 1, RunOptions { trace: true, ..Default::default() });
    let f = &out.flows[0];
    let sw = out.engine.switches.expect("switches");
    assert!(f.epd_drops > 0);
    assert_eq!(sw.epd_packets, f.epd_drops);
    assert_eq!(sw.epd_cells, 22 * f.epd_drops);
    assert_eq!(sw.partial_packets, 0, "no hard limit: whole packets only (footnote 6)");
    // Each discard finds more than 100 cells at SW1 (link 2: host, source link, SW1).
    let tr = out.trace.expect("trace");
    let drops: Vec<usize> = (0..tr.len()).filter(|&i| tr.event[i] == "epd_drop").collect();
    assert_eq!(drops.len() as u64, f.epd_drops);
    assert!(drops.iter().all(|&i| tr.link[i] == 2 && tr.queue[i] > 100), "cells held above the threshold");
    // and no accepted packet found more than 100 there
    let mut accepted = (0..tr.len()).filter(|&i| tr.event[i] == "enqueue" && tr.link[i] == 2);
    assert!(accepted.clone().count() > 0);
    assert!(accepted.all(|i| tr.queue[i] <= 100 + 22), "at most the threshold plus the packet itself");
}

#[test]
fn the_bottleneck_rate_follows_its_schedule() {
    // Fig. 23's kind of run: 1.5 Mb/s until 10 s, then 3 Mb/s. Measured over [2, 10) and [12, 20)
    // the payload rate is each rate's share of cells, 984 / 1166 (to 0.1 %: the window's edges cut
    // the packets in flight).
    for (from, until, rate) in [(2.0, 10.0, 1.5e6), (12.0, 20.0, 3e6)] {
        let mut sc = elloumi(None, vec![(10.0, 3e6)]);
        if let Network::AtmHfc(a) = &mut sc.network {
            a.bottleneck_bps = 1.5e6;
        }
        sc.sim.measure_from_s = from;
        sc.sim.time_limit_s = until;
        let f = &run(&sc, 1, RunOptions::default()).flows[0];
        let payload_bps = 8.0 * f.measured_bytes as f64 / f.measured_s;
        let full = rate * 984.0 / 1166.0;
        assert!(payload_bps <= 1.001 * full && payload_bps > 0.99 * full, "{from}: {payload_bps} of {full}");
    }
}

#[test]
fn a_hard_switch_buffer_cuts_packets_and_they_are_lost() {
    // Without EPD, a 60-cell SW1 buffer: slow start overruns it and a packet whose cells do not all
    // fit loses the rest (partial packet discard). Each such packet, and each refused whole for lack
    // of room for its first cell, is a queue drop; only the cut ones are the switch's, and every
    // byte still arrives once.
    let mut sc = elloumi(None, vec![]);
    if let Network::AtmHfc(a) = &mut sc.network {
        a.switch_buffer_cells = Some(60);
    }
    sc.flows[0].bytes = 300 * 984;
    let out = run(&sc, 1, RunOptions { trace: true, ..Default::default() });
    let f = &out.flows[0];
    let sw = out.engine.switches.expect("switches");
    assert!(sw.partial_packets > 0 && sw.epd_packets == 0, "{sw:?}");
    assert_eq!(f.epd_drops, sw.partial_packets);
    assert!(f.queue_drops >= f.epd_drops);
    let tr = out.trace.expect("trace");
    let cut = (0..tr.len()).filter(|&i| tr.event[i] == "epd_drop").count() as u64;
    assert_eq!(cut, sw.partial_packets);
    assert!(f.finished && f.delivered_bytes == 300 * 984);
}

#[test]
fn media_loss_strikes_each_channel() {
    // downstream_loss loses data on the 30 Mb/s channel, upstream_loss ACKs after the upstream.
    for (down, up) in [(0.02, 0.0), (0.0, 0.2)] {
        let mut sc = elloumi(None, vec![]);
        if let Network::AtmHfc(a) = &mut sc.network {
            (a.downstream_loss, a.upstream_loss) = (down, up);
        }
        sc.flows[0].bytes = 500 * 984;
        let f = &run(&sc, 1, RunOptions::default()).flows[0];
        assert_eq!((f.data_lost_downstream > 0, f.acks_lost_upstream > 0), (down > 0.0, up > 0.0), "{down} {up}");
        assert!(f.finished);
    }
}

#[test]
fn an_upload_crosses_the_network_the_other_way() {
    // The station sends: its data goes up the 3 Mb/s FIFO upstream (22 cells per packet), so the
    // payload rate is at most 3 Mb/s x 984 / 1166; the ACKs come down.
    let mut sc = elloumi(None, vec![]);
    sc.flows[0].direction = hfcsim_core::scenario::Direction::Up;
    sc.flows[0].bytes = 300 * 984;
    let f = &run(&sc, 1, RunOptions::default()).flows[0];
    assert!(f.finished);
    let rate = f.throughput_bps.expect("finished");
    assert!(rate < 3e6 * 984.0 / 1166.0 && rate > 0.8 * 3e6 * 984.0 / 1166.0, "{rate}");
}

#[test]
fn a_flow_names_its_station_and_that_stations_requests() {
    // With the 802.14 MAC the download's ACKs use station 0 (modem 0 of one group); the flow row
    // repeats that station's request counters.
    let mut sc = elloumi(None, vec![]);
    sc.upstream.mac = hfcsim_core::scenario::MacKind::Ieee80214;
    sc.upstream.contention = hfcsim_core::scenario::ContentionAlloc::Fixed;
    sc.upstream.contention_slots = 20;
    sc.upstream.frame_s = 0.00227;
    sc.upstream.piggyback = true;
    sc.modems = vec![hfcsim_core::scenario::ModemGroup {
        count: 1,
        distance_km_min: 100.0,
        distance_km_max: 100.0,
        queue_packets: None,
        queue_bytes: None,
        background_load: 0.0,
        background_bytes: 48,
        piggyback: None,
        ack_spacing: hfcsim_core::scenario::AckSpacing::Off,
        channel: 0,
        bonded_channels: 1,
        ds_rate_bps: None,
        us_rate_bps: None,
        ds_min_rate_bps: None,
        ds_priority: None,
    }];
    sc.flows[0].bytes = 200 * 984;
    let out = run(&sc, 1, RunOptions::default());
    let f = &out.flows[0];
    assert_eq!(f.station, Some(0));
    assert_eq!(f.station_requests, out.stations[0].requests);
    assert_eq!(f.station_piggybacked_requests, out.stations[0].piggybacked_requests);
    assert!(f.station_piggybacked_requests > 0);
}

#[test]
fn a_run_that_ends_before_the_measurement_starts_measures_nothing() {
    let mut sc = elloumi(None, vec![]);
    sc.flows[0].bytes = 10 * 984;
    sc.sim.measure_from_s = 5.0;
    let f = &run(&sc, 1, RunOptions::default()).flows[0];
    assert!(f.finished && f.end_s.expect("finished") < 5.0);
    assert_eq!((f.measured_bytes, f.measured_s, f.rtt_samples), (0, 0.0, 0));
}
