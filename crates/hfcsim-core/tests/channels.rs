//! Several upstream channels (DOCSIS 3.0 MULPI: a CMTS serves several; a modem transmits on the one
//! it is assigned to): each channel is its own MAC, so what happens on one leaves the others alone,
//! and a station keeps its random streams whichever channel it is on.

use hfcsim_core::scenario::{AckSpacing, MacKind, ModemGroup, Network};
use hfcsim_core::{run, RunOptions, Scenario};

fn group(count: u32, channel: u32, background_load: f64) -> ModemGroup {
    ModemGroup {
        count,
        distance_km_min: 2.0,
        distance_km_max: 15.0,
        queue_packets: None,
        queue_bytes: None,
        background_load,
        background_bytes: 100,
        piggyback: None,
        ack_spacing: AckSpacing::Off,
        channel,
        bonded_channels: 1,
        ds_rate_bps: None,
        us_rate_bps: None,
        ds_min_rate_bps: None,
        ds_priority: None,
    }
}

/// Four downloads from modems 0-3 (group 0) over a DOCSIS upstream; group 1 (modems 4-7) on
/// `channel` with `load` of background traffic.
fn plant(channels: u32, channel: u32, load: f64) -> Scenario {
    let sc = unchecked(channels, channel, load);
    sc.check().expect("a valid scenario");
    sc
}

fn unchecked(channels: u32, channel: u32, load: f64) -> Scenario {
    let mut sc = Scenario::cohen_default();
    if let Network::Hfc(h) = &mut sc.network {
        h.upstream_bps = 5e6;
    }
    sc.upstream.mac = MacKind::Docsis;
    sc.upstream.channels = channels;
    sc.modems = vec![group(4, 0, 0.0), group(4, channel, load)];
    let flow = sc.flows[0].clone();
    sc.flows = (0..4).map(|m| hfcsim_core::scenario::Flow { modem: m, bytes: 300_000, ..flow.clone() }).collect();
    sc
}

fn flow_rows(sc: &Scenario) -> Vec<String> {
    run(sc, 7, RunOptions::default()).flows.iter().map(|f| format!("{f:?}")).collect()
}

#[test]
fn idle_stations_moved_to_a_second_channel_change_nothing_on_the_first() {
    // Group 1 sends nothing: on channel 0 it never contends, so moving it to channel 1 leaves the
    // downloads exactly as they were (the same stations, the same streams, the same MAPs).
    let one = run(&plant(1, 0, 0.0), 7, RunOptions::default());
    let two = run(&plant(2, 1, 0.0), 7, RunOptions::default());
    let rows = |o: &hfcsim_core::Output| o.flows.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>();
    assert_eq!(rows(&one), rows(&two));
    assert!(one.engine.channels.is_empty(), "one channel: no per-channel list");
    assert_eq!(two.engine.channels.len(), 2);
    let (c0, c1) = (&two.engine.channels[0], &two.engine.channels[1]);
    assert_eq!(c1.requests, 0, "nobody on channel 1 has anything to send");
    assert_eq!(c0.requests, one.engine.mac.as_ref().unwrap().requests);
    // Both channels send their MAPs all along; `engine.mac` sums the two.
    assert_eq!(c0.frames, c1.frames);
    assert_eq!(two.engine.mac.as_ref().unwrap().frames, c0.frames + c1.frames);
    // Stations are reported in plant order with their own numbers.
    let ids: Vec<u32> = two.stations.iter().map(|s| s.station).collect();
    assert_eq!(ids, (0..8).collect::<Vec<_>>());
}

#[test]
fn load_on_one_channel_leaves_the_other_alone() {
    // 60 % background on group 1: on the same channel it slows the downloads; on its own channel it
    // changes nothing for them (their upstream ACKs contend only with each other).
    let quiet = flow_rows(&plant(2, 1, 0.0));
    let loaded_apart = run(&plant(2, 1, 0.6), 7, RunOptions::default());
    assert_eq!(quiet, loaded_apart.flows.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>());
    assert!(loaded_apart.engine.channels[1].requests > 1000, "{:?}", loaded_apart.engine.channels[1]);
    let loaded_together = run(&plant(1, 0, 0.6), 7, RunOptions::default());
    let mean_access = |o: &hfcsim_core::Output| {
        o.flows.iter().map(|f| f.access_delay_mean_s.unwrap()).sum::<f64>() / o.flows.len() as f64
    };
    assert!(
        mean_access(&loaded_together) > mean_access(&loaded_apart),
        "{} vs {}",
        mean_access(&loaded_together),
        mean_access(&loaded_apart)
    );
}

#[test]
fn the_engine_refuses_a_channel_with_no_group_or_out_of_range() {
    let mut sc = unchecked(2, 0, 0.0);
    assert!(sc.check().unwrap_err().contains("no modem group ([[modems]] channel = ...) is on channel 1"));
    sc.modems[1].channel = 2;
    assert!(sc.check().unwrap_err().contains("modems.1.channel = 2"));
    let mut sc = Scenario::cohen_default();
    assert_eq!(sc.upstream.mac, MacKind::Fifo);
    sc.upstream.channels = 2;
    assert!(sc.check().unwrap_err().starts_with("upstream.channels = 2: several channels need a MAC"));
}
