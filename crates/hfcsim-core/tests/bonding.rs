//! DOCSIS 3.0 upstream bonding (access/bonding.rs) and the CMTS's load balancing among upstream
//! channels (topology::assign_channels): a resequencing timeline worked out by hand, a bonded
//! upload end to end, and a hand-checked assignment.

use hfcsim_core::access::bonding::{chunk_of, chunk_tag, pick, Bond, Released};
use hfcsim_core::access::channel::Fec;
use hfcsim_core::access::{
    AckSpacing, ContentionAlloc, GrantScheduler, MacConfig, MacKind, MacOut, StationConfig, Upstream,
};
use hfcsim_core::net::QueueLimit;
use hfcsim_core::scenario::{Direction, LoadBalancing, ModemGroup, Network};
use hfcsim_core::time::SimTime;
use hfcsim_core::topology::{assign_channels, mac_spec};
use hfcsim_core::{run, RunOptions, Scenario};

/// mac_timeline.rs's DOCSIS channel: 8 Mb/s, so a 16-byte minislot is exactly 16 us; 125-minislot
/// (2 ms) MAPs with 8 request opportunities, backoff window 2^0 (no deferral); headend delay `hd`.
fn docsis(headend_delay: u64) -> MacConfig {
    MacConfig {
        kind: MacKind::Docsis,
        rate_bps: 8_000_000,
        minislot_bytes: 16,
        frame_minislots: 125,
        min_frame_minislots: 125,
        contention: ContentionAlloc::Fixed(8),
        data_slot_minislots: 4,
        scheduler: GrantScheduler::Fcfs,
        max_request: 255,
        piggyback: false,
        concatenation: false,
        fragmentation: false,
        max_burst_bytes: 1600,
        headend_delay,
        backoff_start: 0,
        backoff_end: 3,
        max_retries: 16,
        burst_overhead_bytes: 12,
        fec: Fec::NONE,
        frame_overhead_bytes: 24,
        interleave: 0,
        map_processing: 0,
        maintenance_interval: 0,
        maintenance_minislots: 0,
    }
}

/// A bonded modem's sub-station `sub`, 10 km out (50 us one way), with its 8-byte segment header.
fn sub_station(sub: u32) -> StationConfig {
    StationConfig {
        one_way: 50_000,
        distance_km: 10.0,
        group: 0,
        queue: QueueLimit::Unbounded,
        background_pps: 0.0,
        background_bytes: 48,
        piggyback: None,
        ack_spacing: AckSpacing::Off,
        segment_header_bytes: 8,
        sub,
    }
}

/// The fabric's glue (fabric.rs `arrive_bond`, `bond_segment`) around two channels and one bond:
/// packets `(time, tag, bytes)` join the bond and a placeholder joins the sub-station with the
/// fewest bytes waiting; each placeholder the MACs hand back is a segment. Returns the packets
/// released and the channel each packet was asked for on.
fn drive(
    chs: &mut [Upstream; 2],
    bond: &mut Bond,
    arrivals: &[(u64, u64, u32)],
    until: u64,
) -> (Vec<Released>, Vec<u32>) {
    let mut next = 0;
    let (mut released, mut asked, mut out) = (vec![], vec![], vec![]);
    loop {
        let d: Vec<u64> = chs.iter().map(|c| c.next_deadline().expect("a next MAP").0).collect();
        let arrival = arrivals.get(next).map_or(u64::MAX, |a| a.0);
        let t = arrival.min(d[0]).min(d[1]);
        if t > until {
            return (released, asked);
        }
        if arrival == t {
            let (at, tag, bytes) = arrivals[next];
            next += 1;
            assert!(bond.enqueue(SimTime(at), tag, bytes));
            let (c, local) = pick(&bond.subs, |c, i| chs[c as usize].queued_bytes(i));
            assert!(chs[c as usize].enqueue(SimTime(at), local, chunk_tag(0, bytes), bytes));
            asked.push(c);
            continue;
        }
        let c = if d[0] == t { 0 } else { 1 };
        chs[c].on_timer(SimTime(t), &mut out);
        for o in out.drain(..) {
            match o {
                MacOut::Delivered { tag, at, .. } => {
                    let (b, bytes) = chunk_of(tag).expect("a placeholder");
                    assert_eq!(b, 0);
                    bond.segment(at, bytes, &mut released);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}

#[test]
fn a_later_segment_arriving_first_waits_for_the_earlier_one() {
    // Channel 0: headend delay 500 us; channel 1: 300 us; the modem is 10 km out on both (50 us).
    //
    // Channel 0 (mac_timeline.rs's docsis_one_station_on_an_idle_channel): lead = 500 + 2 x 50 =
    // 600 us, MAP m starts at minislot 38 + 125m, T_m = 608 + 2000m us, decided 600 us earlier,
    // acted on at decided + 500 + 50 = 558 + 2000m us.
    // Channel 1: lead = 300 + 100 = 400 us, first minislot ceil(400 / 16) = 25, T_m = 400 + 2000m us,
    // decided at 2000m us, acted on at 2000m + 300 + 50 = 350 + 2000m us.
    //
    // P1 (40 bytes) and P2 (1500 bytes) reach the modem at t = 0. P1 is asked for on channel 0 (both
    // sub-stations empty: the first); P2 on channel 1 (channel 0 holds 40 bytes).
    // - P1's placeholder on channel 0: 40 + 24 (frame) + 8 (segment header) + 12 (preamble, guard) =
    //   84 bytes = 6 minislots (5.25). Requested in MAP 0's opportunity 0 (minislot 38, 608 us);
    //   MAP 1, decided at 2008 us, grants minislots 163 + 8 = 171 to 177; the modem fills it when
    //   it acts on MAP 1, at 2558 us; it arrives at 177 x 16 = 2832 us.
    // - P2's placeholder on channel 1: 1500 + 24 + 8 + 12 = 1544 bytes = 97 minislots (96.5).
    //   Requested at minislot 25 (400 us); MAP 0's request slots end at minislot 33 (528 us); MAP 1
    //   (minislot 150, decided at 2000 us) grants 158 to 255 (97 of its 117 data minislots); filled at
    //   2350 us; it arrives at 255 x 16 = 4080 us.
    // The modem fills channel 1's grant first (2350 < 2558): segment 0 = the flow's bytes [0, 1500)
    // (all of P1, the first 1460 of P2), arriving at 4080 us; segment 1 = [1500, 1540) (P2's last 40),
    // arriving at 2832 us, before segment 0: it waits 4080 - 2832 = 1248 us. The CMTS releases P1 and
    // P2 together at 4080 us, in order.
    //
    // P3 (40 bytes) reaches the modem at 3000 us: both sub-stations are empty again (each took its
    // placeholder when it sent), so channel 0. Channel 0's MAP 2 is acted on at 4558 us: request at
    // minislot 38 + 250 = 288 (4608 us); MAP 3 (decided at 6008 us) grants 413 + 8 = 421 to 427; it
    // arrives at 427 x 16 = 6832 us as segment 2 = [1540, 1580), after every earlier one: no wait,
    // and P3 leaves at 6832 us.
    let mut chs = [
        Upstream::channel(docsis(500_000), vec![sub_station(0)], vec![0], 1, false),
        Upstream::channel(docsis(300_000), vec![sub_station(1)], vec![0], 1, false),
    ];
    assert_eq!((chs[1].frame_start(0), chs[1].decided_at(0)), (SimTime(400_000), SimTime(0)));
    let mut bond = Bond::new(0, vec![(0, 0), (1, 0)], QueueLimit::Unbounded);
    let arrivals = [(0, 1, 40), (0, 2, 1500), (3_000_000, 3, 40)];
    let (released, asked) = drive(&mut chs, &mut bond, &arrivals, 10_000_000);
    assert_eq!(asked, vec![0, 1, 0]);
    let at = |tag, t: u64| Released { tag, at: SimTime(t), enqueued: SimTime(if tag == 3 { 3_000_000 } else { 0 }) };
    assert_eq!(released, vec![at(1, 4_080_000), at(2, 4_080_000), at(3, 6_832_000)]);
    let m = &bond.metrics;
    assert_eq!((m.resequenced_segments, m.resequence_waited), (3, 1));
    assert_eq!((m.resequence_wait_total_s, m.resequence_wait_max_s), (1.248e-3, 1.248e-3));
}

fn group(count: u32, channel: u32, bonded_channels: u32) -> ModemGroup {
    ModemGroup {
        count,
        distance_km_min: 2.0,
        distance_km_max: 15.0,
        queue_packets: None,
        queue_bytes: None,
        background_load: 0.0,
        background_bytes: 100,
        piggyback: None,
        ack_spacing: AckSpacing::Off,
        channel,
        bonded_channels,
        ds_rate_bps: None,
        us_rate_bps: None,
        ds_min_rate_bps: None,
        ds_priority: None,
    }
}

/// A 1 MB upload from modem 0 (group 0, bonding `bonded` channels) over a DOCSIS upstream of two
/// 2.56 Mb/s channels; group 1 (modem 1) idle on channel 1.
fn upload(bonded: u32) -> Scenario {
    let mut sc = Scenario::cohen_default();
    if let Network::Hfc(h) = &mut sc.network {
        h.upstream_bps = 2.56e6;
    }
    sc.upstream.mac = MacKind::Docsis;
    sc.upstream.channels = 2;
    sc.modems = vec![group(1, 0, bonded), group(1, 1, 1)];
    sc.flows.truncate(1);
    sc.flows[0].modem = 0;
    sc.flows[0].bytes = 1_000_000;
    sc.flows[0].direction = Direction::Up;
    sc.sim.time_limit_s = 60.0;
    sc.check().expect("a valid scenario");
    sc
}

#[test]
fn a_bonded_upload_over_two_channels_arrives_whole_and_in_order() {
    let one = run(&upload(1), 3, RunOptions::default());
    let two = run(&upload(2), 3, RunOptions::default());
    for o in [&one, &two] {
        let f = &o.flows[0];
        assert!(f.finished, "the upload completes");
        assert_eq!(f.delivered_bytes, 1_000_000);
        // No loss anywhere and the CMTS resequences: the server sees every segment in order, so
        // TCP never retransmits.
        assert_eq!((f.retransmitted_segments, f.fast_retransmits, f.timeouts), (0, 0, 0));
    }
    // Both channels carry the bonded modem's data, so it finishes sooner than on one.
    let (c0, c1) = (&two.engine.channels[0], &two.engine.channels[1]);
    assert!(c0.data_slots > 0 && c1.data_slots > 0);
    assert!(two.flows[0].duration_s < one.flows[0].duration_s);
    let r = two.stations[0].resequencing.as_ref().expect("a bonded modem's resequencing");
    // Every packet asked for on one channel or the other is a segment.
    let data = two.stations[0].packets;
    assert_eq!(r.resequenced_segments, data);
    // The two channels' MAPs coincide (the same settings), and a grant of one packet's bytes
    // ends at the same minislot on either: no segment overtakes another here (the hand-worked
    // timeline above has one that does).
    assert_eq!((r.resequence_waited, r.resequence_wait_max_s), (0, 0.0));
    assert!(one.stations[0].resequencing.is_none(), "an unbonded modem has none");
    assert_eq!(two.stations.len(), 2, "one row per modem, its sub-stations summed");
}

#[test]
fn load_balancing_by_count_spreads_five_modems_three_and_two() {
    // Five modems over two channels, in station order, each to the channel with fewest so far, ties
    // to the lowest: 0 -> ch 0 (0/0), 1 -> ch 1 (1/0), 2 -> ch 0 (1/1), 3 -> ch 1 (2/1), 4 -> ch 0
    // (2/2): channel 0 has modems 0, 2, 4, channel 1 modems 1, 3.
    let mut sc = upload(1);
    sc.modems = vec![group(5, 0, 1)];
    sc.upstream.load_balancing = LoadBalancing::Count;
    sc.check().expect("a valid scenario");
    let spec = mac_spec(&sc, 2_560_000, 1500);
    assert_eq!(assign_channels(&spec), vec![0, 1, 0, 1, 0]);
    // Three channels, a group of two bonding two channels, then three single modems: bonded 0 takes
    // channels 0-1 (busiest 0, lowest start), bonded 1 channels 1-2? No: start 0 has busiest 1,
    // start 1 busiest 1: ties to 0, so channels 0-1 again; counts 2/2/0. Modems 2, 3, 4: ch 2 (0),
    // ch 2 (1 < 2), then 2/2/2 ties to ch 0.
    sc.upstream.channels = 3;
    sc.modems = vec![group(2, 0, 2), group(3, 0, 1)];
    sc.check().expect("a valid scenario");
    let spec = mac_spec(&sc, 2_560_000, 1500);
    assert_eq!(assign_channels(&spec), vec![0, 0, 2, 2, 0]);
    // Static (the default) keeps each group's channel, which balancing refuses.
    sc.modems[1].channel = 2;
    assert!(sc.check().is_err());
    sc.upstream.load_balancing = LoadBalancing::Static;
    sc.check().expect("a valid scenario");
    assert_eq!(assign_channels(&mac_spec(&sc, 2_560_000, 1500)), vec![0, 0, 2, 2, 2]);
    // One channel: nothing to balance, refused.
    let mut one = upload(1);
    one.upstream.channels = 1;
    one.modems = vec![group(2, 0, 1)];
    one.upstream.load_balancing = LoadBalancing::Count;
    assert!(one.check().unwrap_err().to_string().contains("upstream.load_balancing"));
}

#[test]
fn downstream_bonding_is_the_channels_payload_rate_times_their_number() {
    // Nguyen's DOCSIS plant: one channel's payload is 30.341646e6 x 122/128 x 184/188 =
    // 28 227 162.1 b/s (tests/docsis.rs); four bonded channels carry 4 x that = 112 908 648 b/s.
    use hfcsim_core::net::Role;
    // Without the MAC messages' share, which the testbed's preset takes off the downstream.
    let mut sc = Scenario::nguyen_default();
    if let Network::Docsis(d) = &mut sc.network {
        d.ds_mgmt_overhead = false;
    }
    // The downstream channel is the shared link that pulls from the service flows (net/shared.rs).
    let rate = |sc: &Scenario| {
        let t = hfcsim_core::topology::build(sc, 1, 1500);
        t.shared.iter().find(|l| l.role == Role::DownstreamChannel).expect("a downstream channel").rate_bps()
    };
    assert_eq!(rate(&sc), 28_227_162);
    if let Network::Docsis(d) = &mut sc.network {
        d.ds_channels = 4;
    }
    sc.check().expect("a valid scenario");
    assert_eq!(rate(&sc), 112_908_648);
}

#[test]
fn bonded_downstream_channels_carry_the_mac_messages_once() {
    // The MAC messages' share (network.ds_mgmt_overhead: 218,404 b/s with one upstream channel and
    // 2 ms MAPs, tests/plant_delays.rs) comes off the bonded aggregate once, not per channel
    // (topology.rs: chosen, MAPs on the primary channel): 4 x 28,227,162.11 - 218,404 = 112,690,244.
    use hfcsim_core::net::Role;
    let mut sc = Scenario::nguyen_default();
    if let Network::Docsis(d) = &mut sc.network {
        assert!(d.ds_mgmt_overhead, "the testbed's preset takes the MAC messages off");
        d.ds_channels = 4;
    }
    sc.check().expect("a valid scenario");
    let t = hfcsim_core::topology::build(&sc, 1, 1500);
    let link = t.shared.iter().find(|l| l.role == Role::DownstreamChannel).expect("a downstream channel");
    assert_eq!(link.rate_bps(), 112_690_244);
}
