//! The upstream MAC against timelines worked out by hand (docs/design.md, habit 7): each expected time is
//! computed in the comments from the slot sizes, distances and delays, and asserted to the
//! nanosecond.

use hfcsim_core::access::channel::Fec;
use hfcsim_core::access::{
    AckSpacing, ContentionAlloc, GrantScheduler, MacConfig, MacKind, MacOut, StationConfig, Upstream,
};
use hfcsim_core::access::{MacEvent, BACKGROUND};
use hfcsim_core::net::QueueLimit;
use hfcsim_core::rng::{component, Stream};
use hfcsim_core::time::SimTime;

/// Elloumi et al. Table 1 on a 52-minislot frame: 16-byte minislots at 3 Mb/s (42 666.67 ns
/// each), 20 contention slots then 8 data slots of 4 minislots (64 bytes), headend delay 1 ms.
fn ieee(scheduler: GrantScheduler) -> MacConfig {
    MacConfig {
        kind: MacKind::Ieee80214,
        rate_bps: 3_000_000,
        minislot_bytes: 16,
        frame_minislots: 52,
        min_frame_minislots: 52,
        contention: ContentionAlloc::Fixed(20),
        data_slot_minislots: 4,
        scheduler,
        max_request: 32,
        piggyback: false,
        concatenation: false,
        fragmentation: false,
        max_burst_bytes: 1600,
        headend_delay: 1_000_000,
        backoff_start: 3,
        backoff_end: 10,
        max_retries: 16,
        burst_overhead_bytes: 5,
        fec: Fec::NONE,
        frame_overhead_bytes: 24,
        interleave: 0,
        map_processing: 0,
        maintenance_interval: 0,
        maintenance_minislots: 0,
    }
}

/// DOCSIS at 8 Mb/s, so a 16-byte minislot is exactly 16 us; 125-minislot (2 ms) MAPs with 8
/// request opportunities, headend delay 0.5 ms, backoff window 2^0 (no deferral).
fn docsis() -> MacConfig {
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
        headend_delay: 500_000,
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

fn station(km: f64) -> StationConfig {
    StationConfig {
        one_way: (km * 5_000.0) as u64, // 5 us/km (Elloumi Table 1)
        distance_km: km,
        group: 0,
        queue: QueueLimit::Unbounded,
        background_pps: 0.0,
        background_bytes: 48,
        piggyback: None,
        ack_spacing: AckSpacing::Off,
        segment_header_bytes: 0,
        sub: 0,
    }
}

/// Run the MAC alone until `until`, with packets `(time, station, tag, bytes)` enqueued on time.
fn drive(mac: &mut Upstream, mut arrivals: Vec<(u64, u32, u64, u32)>, until: u64) -> Vec<MacOut> {
    arrivals.sort_by_key(|a| a.0);
    let mut arrivals = arrivals.into_iter().peekable();
    let mut out = Vec::new();
    loop {
        let next_mac = mac.next_deadline().expect("the headend always has a next frame").0;
        let next_arrival = arrivals.peek().map_or(u64::MAX, |a| a.0);
        let t = next_mac.min(next_arrival);
        if t > until {
            return out;
        }
        if next_arrival <= next_mac {
            let (at, s, tag, bytes) = arrivals.next().expect("peeked");
            assert!(mac.enqueue(SimTime(at), s, tag, bytes));
        } else {
            mac.on_timer(SimTime(t), &mut out);
        }
    }
}

/// The first seed whose stations' contention draws satisfy `ok` (`ok` gets the seed and replays the
/// draws from each station's own stream, so the test knows the slots chosen).
fn seed_where(ok: impl Fn(u64) -> bool) -> u64 {
    (1..).find(|&seed| ok(seed)).expect("some seed")
}

/// Station `i`'s contention stream for `seed`, as the MAC draws from it.
fn draws(seed: u64, i: u64) -> Stream {
    Stream::new(seed, component::mac_station(i))
}

fn delivered(out: &[MacOut]) -> Vec<(u64, u64)> {
    out.iter()
        .filter_map(|o| match o {
            MacOut::Delivered { tag, at, .. } => Some((*tag, at.0)),
            MacOut::Dropped { .. } | MacOut::AqmDropped { .. } | MacOut::Captured => None,
        })
        .collect()
}

fn events<'a>(tr: &'a [MacEvent], name: &'a str) -> impl Iterator<Item = &'a MacEvent> + 'a {
    tr.iter().filter(move |e| e.event == name)
}

#[test]
fn ieee_one_station_on_an_idle_channel() {
    // One station 100 km out: one way 500 us. lead = 1 ms + 2 x 500 us = 2 ms, so the first frame
    // starts at the first minislot at or after 2 ms: n = ceil(2e6 / 42 666.67) = 47,
    // T_0 = floor(47 x 128e9 / 3e6) = 2 005 333 ns, decided at B_0 = 5 333 ns, received at
    // B_0 + 1 ms + 0.5 ms = 1 505 333 ns.
    let mut mac = Upstream::new(ieee(GrantScheduler::Fcfs), vec![station(100.0)], 1, true);
    assert_eq!(mac.frame_start(0), SimTime(2_005_333));
    assert_eq!(mac.decided_at(0), SimTime(5_333));
    assert_eq!(mac.received_at(0, 0), SimTime(1_505_333));
    // A 40-byte ACK (2 cells) queued at t = 0 is seen in frame 0: the station sends its request
    // in newcomer slot k of the 20, drawn from its own stream.
    let k = draws(1, 0).below(20);
    let out = drive(&mut mac, vec![(0, 0, 7, 40)], 20_000_000);
    let tr = mac.take_trace();
    let req: Vec<_> = events(&tr, "request").collect();
    assert_eq!(req.len(), 1);
    assert_eq!(req[0].minislot, 47 + k);
    assert_eq!(req[0].units, 2, "two data slots for two cells");
    // Frame 0's 20 contention slots end at minislot 67: floor(67 x 42 666.67) = 2 858 666 ns.
    // Frame 1 is decided at start(99) - 2 ms = 4 224 000 - 2 000 000 = 2 224 000: too early.
    // Frame 2 is decided at start(151) - 2 ms = 6 442 666 - 2 000 000 = 4 442 666 >= 2 858 666:
    // it carries the feedback and the grant, sent at 4 442 666 + 1 ms = 5 442 666 ns, for the
    // first 2 data slots after its 20 contention slots: minislots 47 + 104 + 20 = 171 to 179.
    let grants: Vec<_> = events(&tr, "grant").collect();
    assert_eq!(grants.len(), 1);
    assert_eq!((grants[0].time, grants[0].minislot, grants[0].units), (SimTime(5_442_666), 171, 2));
    // The station hears it at 4 442 666 + 1.5 ms = 5 942 666 ns.
    let fb: Vec<_> = events(&tr, "feedback").collect();
    assert_eq!((fb[0].time, fb[0].units), (SimTime(5_942_666), 0));
    // The ACK's last cell arrives at the end of minislot 178: floor(179 x 42 666.67) = 7 637 333.
    assert_eq!(delivered(&out), vec![(7, 7_637_333)]);
    let m = mac.metrics();
    assert_eq!((m.requests, m.collisions, m.grants, m.data_slots), (1, 0, 1, 2));
}

#[test]
fn ack_spacings_of_elloumi_fig_9() {
    // Five ACKs (2 cells each) queued together: one request for 10 data slots. FCFS grants the
    // 8 data slots of frame 2 (ACKs 1-4) and 2 of frame 3 (ACK 5).
    let mut mac = Upstream::new(ieee(GrantScheduler::Fcfs), vec![station(100.0)], 1, false);
    let acks = (1..=5).map(|i| (0, 0, i, 40)).collect();
    let out = drive(&mut mac, acks, 20_000_000);
    let at: Vec<u64> = delivered(&out).iter().map(|d| d.1).collect();
    assert_eq!(at.len(), 5);
    let gaps: Vec<u64> = at.windows(2).map(|w| w[1] - w[0]).collect();
    // Back to back in one frame (Fig. 9a): 2 data slots = 2 x 64 x 8 / 3e6 = 0.3413 ms.
    for g in &gaps[..3] {
        assert!((341_333..=341_334).contains(g), "{gaps:?}");
    }
    // ACK 4 ends frame 2, ACK 5 follows the 20 contention slots of frame 3 (Fig. 9b-c):
    // 20 CS + 2 DS = 7 data slots = 7 x 64 x 8 / 3e6 = 1.1947 ms.
    assert!((1_194_666..=1_194_667).contains(&gaps[3]), "{gaps:?}");
}

#[test]
fn fcfs_and_round_robin_grant_order_for_three_requests() {
    // Three stations 100 km out (the timing of the one-station timeline) ask for 2, 1 and 1 ACKs (4, 2, 2 data slots), each
    // from a different newcomer slot. All succeed in frame 0; frame 2 grants them in the order
    // their requests arrived (slot order). FCFS: a station's whole request, then the next.
    // RR: one data slot (one cell) per station in turn.
    for (scheduler, expect_cells) in [
        (GrantScheduler::Fcfs, vec!["a", "a", "a", "a", "b", "b", "c", "c"]),
        (GrantScheduler::Rr, vec!["a", "b", "c", "a", "b", "c", "a", "a"]),
    ] {
        // a seed whose three newcomer draws differ
        let seed = seed_where(|seed| {
            let d: Vec<u64> = (0..3).map(|i| draws(seed, i).below(20)).collect();
            d[0] < d[1] && d[1] < d[2]
        });
        let mut mac = Upstream::new(ieee(scheduler), vec![station(100.0); 3], seed, true);
        let out = drive(&mut mac, vec![(0, 0, 1, 40), (0, 0, 2, 40), (0, 1, 3, 40), (0, 2, 4, 40)], 20_000_000);
        let tr = mac.take_trace();
        let mut cells = vec![];
        for g in events(&tr, "grant") {
            for _ in 0..g.units {
                cells.push(["a", "b", "c"][g.station as usize]);
            }
        }
        assert_eq!(cells, expect_cells, "{scheduler:?}");
        assert_eq!(delivered(&out).len(), 4);
        // every grant of the first round is in one frame: data slots 0..8 of frame 2
        let frame2 = 47 + 2 * 52 + 20;
        assert!(events(&tr, "grant").all(|g| g.minislot >= frame2 && g.minislot < frame2 + 32), "{scheduler:?}");
    }
}

#[test]
fn ieee_two_stations_collide_and_the_tree_resolves_them() {
    // Two stations 100 km out both choose newcomer slot k of frame 0 (a seed where their first
    // draws agree). The collision is learned in frame 2 (as in the one-station timeline): RQ 1,
    // whose group takes contention slots 0-2 of frame 2. Each picks one of the 3 with its
    // second draw; if the picks differ both succeed and are granted in frame 4 (2 frames later,
    // as frame 0 -> 2), in slot order; if they agree, RQ 2 takes slots 0-2 of frame 4, and so on.
    let seed = seed_where(|seed| {
        let (mut a, mut b) = (draws(seed, 0), draws(seed, 1));
        a.below(20) == b.below(20) && a.below(3) != b.below(3)
    });
    let (mut a, mut b) = (draws(seed, 0), draws(seed, 1));
    let k = a.below(20);
    b.below(20);
    let (ka, kb) = (a.below(3), b.below(3));
    let mut mac = Upstream::new(ieee(GrantScheduler::Fcfs), vec![station(100.0); 2], seed, true);
    let out = drive(&mut mac, vec![(0, 0, 1, 40), (0, 1, 2, 40)], 30_000_000);
    let tr = mac.take_trace();
    let req: Vec<(u32, u64)> = events(&tr, "request").map(|e| (e.station, e.minislot)).collect();
    let f2 = 47 + 2 * 52;
    assert_eq!(req, vec![(0, 47 + k), (1, 47 + k), (0, f2 + ka), (1, f2 + kb)]);
    let fb: Vec<(u32, u32)> = events(&tr, "feedback").map(|e| (e.station, e.units)).collect();
    assert_eq!(fb, vec![(0, 1), (1, 1), (0, 0), (1, 0)], "RQ 1 for both, then success for both");
    assert_eq!(events(&tr, "collision").count(), 2);
    // Granted in frame 4 in slot order, 2 data slots each, after 20 contention slots.
    let f4 = 47 + 4 * 52 + 20;
    let first = if ka < kb { 0 } else { 1 };
    let grants: Vec<(u32, u64)> = events(&tr, "grant").map(|e| (e.station, e.minislot)).collect();
    assert_eq!(grants, vec![(first, f4), (1 - first, f4 + 8)]);
    assert_eq!(delivered(&out).len(), 2);
    let m = mac.metrics();
    assert_eq!((m.requests, m.collisions), (4, 1));
}

#[test]
fn docsis_one_station_on_an_idle_channel() {
    // 16 us minislots. Station 10 km out: 50 us. lead = 500 + 2 x 50 = 600 us: first MAP at
    // minislot ceil(600 / 16) = 38, T_0 = 608 us, decided at 8 us, received at 558 us.
    // A 40-byte ACK is a 64-byte frame, plus 12 bytes of preamble and guard: 5 minislots.
    // Backoff window 2^0: no deferral, request in opportunity 0 = minislot 38 (608 us).
    // MAP 0's 8 request slots end at minislot 46 = 736 us; MAP 1 (T_1 = 163 x 16 = 2608 us) is
    // decided at 2008 us >= 736 us: it carries the grant, sent at 2508 us, for minislots
    // 163 + 8 = 171 to 176. The frame arrives at 176 x 16 us = 2816 us.
    let mut mac = Upstream::new(docsis(), vec![station(10.0)], 1, true);
    assert_eq!((mac.frame_start(0), mac.decided_at(0)), (SimTime(608_000), SimTime(8_000)));
    let out = drive(&mut mac, vec![(0, 0, 9, 40)], 10_000_000);
    let tr = mac.take_trace();
    let req: Vec<_> = events(&tr, "request").map(|e| (e.time.0, e.minislot, e.units)).collect();
    assert_eq!(req, vec![(608_000, 38, 5)]);
    let grants: Vec<_> = events(&tr, "grant").map(|e| (e.time.0, e.minislot, e.units)).collect();
    assert_eq!(grants, vec![(2_508_000, 171, 5)]);
    assert_eq!(delivered(&out), vec![(9, 2_816_000)]);
}

#[test]
fn docsis_dynamic_maps_shrink_when_idle_and_grow_to_their_grants() {
    // The idle channel of `docsis_one_station_on_an_idle_channel`, with request slots filling what
    // grants leave (at least 8) and MAPs as long as their grants plus 8 request slots, within
    // [25, 125] minislots (400 us to 2 ms). Idle MAPs are 25 request slots: MAP m starts at
    // minislot 38 + 25m, (608 + 400m) us, and is decided 600 us earlier.
    let mut cfg = docsis();
    cfg.contention = ContentionAlloc::Leftover(8);
    cfg.min_frame_minislots = 25;
    // A 40-byte ACK (5 minislots) requested in opportunity 0 of MAP 0 (minislot 38, 608 us). The
    // headend hears MAP 0's request slots once the last has arrived, at minislot 63 = 1008 us;
    // MAP 3, decided at 1208 us, is the first decided after it: 8 request slots and the grant,
    // clamp(8 + 5, 25, 125) = 25 minislots, the grant at 113 + 20 = 133, sent at 1708 us. The
    // frame arrives at 138 x 16 us = 2208 us (2816 us with fixed 2 ms MAPs).
    let mut mac = Upstream::new(cfg.clone(), vec![station(10.0)], 1, true);
    let out = drive(&mut mac, vec![(0, 0, 9, 40)], 2_500_000);
    let tr = mac.take_trace();
    let req: Vec<_> = events(&tr, "request").map(|e| (e.time.0, e.minislot, e.units)).collect();
    assert_eq!(req, vec![(608_000, 38, 5)]);
    let grants: Vec<_> = events(&tr, "grant").map(|e| (e.time.0, e.minislot, e.units)).collect();
    assert_eq!(grants, vec![(1_708_000, 133, 5)]);
    assert_eq!(delivered(&out), vec![(9, 2_208_000)]);
    // A 1500-byte packet: 1524 + 12 bytes = 96 minislots. MAP 3 grows to 8 + 96 = 104 minislots,
    // the grant at 113 + 8 = 121; MAP 4 starts after it, at minislot 217 = 3472 us, when the frame
    // has arrived.
    let mut mac = Upstream::new(cfg, vec![station(10.0)], 1, true);
    let mut out = drive(&mut mac, vec![(0, 0, 10, 1500)], 2_800_000);
    assert_eq!(mac.frame_start(4), SimTime(3_472_000));
    out.extend(drive(&mut mac, vec![], 4_000_000));
    let tr = mac.take_trace();
    let grants: Vec<_> = events(&tr, "grant").map(|e| (e.time.0, e.minislot, e.units)).collect();
    assert_eq!(grants, vec![(1_708_000, 121, 96)]);
    assert_eq!(delivered(&out), vec![(10, 3_472_000)]);
}

#[test]
fn docsis_fec_parity_lengthens_the_burst() {
    // `docsis_one_station_on_an_idle_channel` with a burst profile of T = 8, k = 100: the 64-byte
    // ACK frame is one shortened codeword with 16 parity bytes, 64 + 16 + 12 = 92 bytes, 6
    // minislots instead of 5. Granted at 171-176, it arrives at 177 x 16 us = 2832 us.
    let mut cfg = docsis();
    cfg.fec = Fec { parity_bytes: 16, codeword_bytes: 100 };
    let mut mac = Upstream::new(cfg, vec![station(10.0)], 1, true);
    let out = drive(&mut mac, vec![(0, 0, 9, 40)], 10_000_000);
    let tr = mac.take_trace();
    let req: Vec<_> = events(&tr, "request").map(|e| (e.time.0, e.minislot, e.units)).collect();
    assert_eq!(req, vec![(608_000, 38, 6)]);
    assert_eq!(delivered(&out), vec![(9, 2_832_000)]);
}

#[test]
fn docsis_collision_doubles_the_window_and_retries() {
    // Two stations with a window of 2^0 both send in opportunity 0 of MAP 0: a sure collision.
    // MAP 1 (decided 2008 us) acknowledges past it with no grant: each infers a collision,
    // widens the window to 2^1 and defers below(2) opportunities, counted from MAP 1's.
    // If the draws differ both get through in MAP 1 and are granted in MAP 2, in slot order.
    let seed = seed_where(|seed| {
        let (mut a, mut b) = (draws(seed, 0), draws(seed, 1));
        a.below(1);
        b.below(1);
        a.below(2) != b.below(2)
    });
    let mut a = draws(seed, 0);
    a.below(1);
    let da = a.below(2);
    let mut mac = Upstream::new(docsis(), vec![station(10.0); 2], seed, true);
    let out = drive(&mut mac, vec![(0, 0, 1, 40), (0, 1, 2, 40)], 20_000_000);
    let tr = mac.take_trace();
    let req: Vec<(u32, u64)> = events(&tr, "request").map(|e| (e.station, e.minislot)).collect();
    let m1 = 38 + 125;
    assert_eq!(req, vec![(0, 38), (1, 38), (0, m1 + da), (1, m1 + 1 - da)]);
    let first = if da == 0 { 0 } else { 1 };
    let m2 = 38 + 250 + 8;
    let grants: Vec<(u32, u64)> = events(&tr, "grant").map(|e| (e.station, e.minislot)).collect();
    assert_eq!(grants, vec![(first, m2), (1 - first, m2 + 5)]);
    assert_eq!(delivered(&out).len(), 2);
    assert_eq!(mac.metrics().collisions, 1);
}

#[test]
fn docsis_gives_up_after_max_retries_and_drops_the_packet() {
    // Two stations with a window fixed at 2^0 (start = end = 0) collide on every try; after
    // max_retries = 3 transmissions each request is discarded with its packet.
    let mut cfg = docsis();
    cfg.backoff_end = 0;
    cfg.max_retries = 3;
    let mut mac = Upstream::new(cfg, vec![station(10.0); 2], 5, false);
    let out = drive(&mut mac, vec![(0, 0, 1, 40), (0, 1, 2, 40)], 50_000_000);
    assert_eq!(out, vec![MacOut::Dropped { tag: 1 }, MacOut::Dropped { tag: 2 }]);
    let m = mac.metrics();
    assert_eq!((m.requests, m.collisions, m.dropped_requests), (6, 3, 2));
    assert_eq!(mac.station_metrics()[0].dropped_packets, 1);
}

#[test]
fn docsis_without_piggyback_or_concatenation_needs_a_request_per_packet() {
    // Nguyen & Armitage Sec. III.C: one request/grant cycle per upstream packet. Ten ACKs queued
    // at once, one station: each needs its own contention request, so at most one per MAP
    // cycle; with concatenation one request carries them all; with piggybacking the requests
    // after the first ride in the grants.
    let run = |concatenation: bool, piggyback: bool| {
        let mut cfg = docsis();
        cfg.concatenation = concatenation;
        cfg.piggyback = piggyback;
        let mut mac = Upstream::new(cfg, vec![station(10.0)], 1, false);
        let out = drive(&mut mac, (0..10).map(|i| (0, 0, i, 40)).collect(), 100_000_000);
        assert_eq!(delivered(&out).len(), 10);
        let m = mac.metrics().clone();
        (m.requests, m.piggybacked_requests, delivered(&out).last().expect("ten").1)
    };
    let (req, pig, last_plain) = run(false, false);
    assert_eq!((req, pig), (10, 0));
    let (req, _, last_concat) = run(true, false);
    assert_eq!(req, 1, "ten 64-byte frames fit one 1600-byte burst");
    let (req, pig, last_pig) = run(false, true);
    assert_eq!((req, pig), (10, 9));
    assert!(last_concat < last_pig && last_pig <= last_plain, "{last_concat} {last_pig} {last_plain}");
}

#[test]
fn random_access_matches_its_success_probability() {
    // n stations each pick one of k newcomer slots at random: a station's first request gets
    // through with probability (1 - 1/k)^(n-1), and a slot stays idle with (1 - 1/k)^n.
    let (n, k) = (5u32, 8u32);
    let mut cfg = ieee(GrantScheduler::Fcfs);
    cfg.contention = ContentionAlloc::Fixed(k);
    let runs = 3000;
    let (mut collided, mut idle) = (0u64, 0u64);
    for seed in 0..runs {
        let mut mac = Upstream::new(cfg.clone(), vec![station(100.0); n as usize], seed, false);
        // up to the decision of frame 2, which resolves frame 0's slots only
        let until = mac.decided_at(2).0;
        drive(&mut mac, (0..n).map(|s| (0, s, s as u64, 40)).collect(), until);
        collided += mac.station_metrics().iter().map(|s| s.collisions).sum::<u64>();
        idle += mac.metrics().idle_slots;
    }
    let p_success = 1.0 - collided as f64 / (runs * n as u64) as f64;
    let p_idle = idle as f64 / (runs * k as u64) as f64;
    let q = 1.0 - 1.0 / k as f64;
    assert!((p_success - q.powi(n as i32 - 1)).abs() < 0.02, "{p_success} vs {}", q.powi(n as i32 - 1));
    assert!((p_idle - q.powi(n as i32)).abs() < 0.02, "{p_idle} vs {}", q.powi(n as i32));
}

#[test]
fn every_packet_is_delivered_once_or_dropped_with_a_reason() {
    // Conservation under load: 40 stations, background and bursts of packets, both MACs, a small
    // FIFO at some stations, fixed and dynamic DOCSIS MAPs. Every packet offered is delivered exactly once, dropped by its
    // request (mac_drop), refused by a full FIFO, or still queued at the end.
    for kind in [MacKind::Ieee80214, MacKind::Docsis] {
        for seed in 0..6u64 {
            let mut cfg = if kind == MacKind::Docsis { docsis() } else { ieee(GrantScheduler::Rr) };
            cfg.piggyback = seed % 2 == 0;
            cfg.concatenation = seed % 3 == 0;
            cfg.max_retries = 4;
            (cfg.backoff_start, cfg.backoff_end) = (2, 6);
            let dynamic = kind == MacKind::Docsis && seed >= 3;
            if dynamic {
                // Dynamic MAPs: 400 us to 2 ms, as long as their grants.
                (cfg.contention, cfg.min_frame_minislots) = (ContentionAlloc::Leftover(8), 25);
            }
            let stations: Vec<_> = (0..40)
                .map(|i| StationConfig {
                    queue: if i % 5 == 0 { QueueLimit::Bytes(300) } else { QueueLimit::Unbounded },
                    background_pps: 30.0,
                    ..station(25.0 + i as f64 * 4.0)
                })
                .collect();
            let mut mac = Upstream::new(cfg, stations, seed, false);
            let mut rng = Stream::new(seed, 99);
            let mut out = Vec::new();
            let mut offered = 0u64;
            let mut refused = 0u64;
            let mut t = 0u64;
            for tag in 0..3000u64 {
                t += rng.below(8_000_000);
                while let Some(d) = mac.next_deadline().filter(|d| d.0 <= t) {
                    mac.on_timer(d, &mut out);
                }
                let s = rng.below(40) as u32;
                offered += 1;
                if !mac.enqueue(SimTime(t), s, tag, 40 + rng.below(500) as u32) {
                    refused += 1;
                }
            }
            let mut seen = std::collections::HashSet::new();
            let (mut del, mut drop) = (0u64, 0u64);
            for o in &out {
                let tag = match o {
                    MacOut::Delivered { tag, at, enqueued, .. } => {
                        assert!(at > enqueued);
                        del += 1;
                        *tag
                    }
                    MacOut::Dropped { tag } | MacOut::AqmDropped { tag } => {
                        drop += 1;
                        *tag
                    }
                    MacOut::Captured => continue, // no capture on here
                };
                assert!(tag != BACKGROUND && seen.insert(tag), "tag {tag} reported twice");
            }
            let queued = mac.queued_packets();
            assert_eq!(offered, del + drop + refused + queued, "{kind:?} seed {seed}");
            assert!(
                del > 2000 && (drop > 0 || dynamic),
                "{kind:?} seed {seed}: most packets get through ({del}), a few lose their request ({drop}; with \
                 dynamic MAPs' many request slots, maybe none)"
            );
            // queue_drops also counts refused background packets
            assert!(mac.station_metrics().iter().map(|s| s.queue_drops).sum::<u64>() >= refused);
            assert!(refused > 0, "the 300-byte FIFOs overflow");
        }
    }
}

#[test]
fn background_arrivals_taken_late_change_nothing() {
    // Background packets wait in their stream until the station next acts or a packet joins a
    // queue (Upstream::take_background_until). Waking the MAC at extra instants as well (here every 137 us,
    // about once per 4 background arrivals across the channel, so most are taken eagerly, at a
    // wake-up of their own instant or just after) must give the same outputs, trace and counters.
    for kind in [MacKind::Ieee80214, MacKind::Docsis] {
        let run = |extra_every: Option<u64>| {
            let mut cfg = if kind == MacKind::Docsis { docsis() } else { ieee(GrantScheduler::Fcfs) };
            cfg.piggyback = true;
            cfg.concatenation = true;
            let stations: Vec<_> = (0..200)
                .map(|i| StationConfig {
                    queue: if i % 7 == 0 { QueueLimit::Bytes(60) } else { QueueLimit::Unbounded },
                    background_pps: 10.0,
                    ..station(2.0 + i as f64 * 0.1)
                })
                .collect();
            let mut mac = Upstream::new(cfg, stations, 7, true);
            let arrivals: Vec<(u64, u32, u64, u32)> =
                (0..600).map(|i| (i * 499_979, (i * 37 % 200) as u32, i, 40)).collect();
            let until = 400_000_000;
            let mut out = Vec::new();
            let mut arrivals = arrivals.into_iter().peekable();
            let every = extra_every.unwrap_or(u64::MAX);
            let mut wake = every;
            loop {
                let next = [mac.next_deadline().expect("next frame").0, arrivals.peek().map_or(u64::MAX, |a| a.0)];
                let t = next[0].min(next[1]).min(wake);
                if t > until {
                    break;
                }
                if arrivals.peek().is_some_and(|a| a.0 == t) {
                    let (at, s, tag, bytes) = arrivals.next().expect("peeked");
                    mac.enqueue(SimTime(at), s, tag, bytes);
                } else {
                    mac.on_timer(SimTime(t), &mut out);
                    if t == wake {
                        wake += every;
                    }
                }
            }
            mac.take_background_until(SimTime(until));
            (out, mac.take_trace(), mac.metrics().clone(), mac.station_metrics())
        };
        let (lazy, eager) = (run(None), run(Some(137_000)));
        assert!(lazy.3.iter().map(|s| s.queue_drops).sum::<u64>() > 0, "{kind:?}: background fills some FIFOs");
        assert!(lazy.0.len() > 400, "{kind:?}: most of the 600 packets delivered ({})", lazy.0.len());
        assert_eq!(lazy, eager, "{kind:?}");
    }
}

#[test]
fn a_thousand_stations_are_deterministic() {
    let run = || {
        let mut cfg = docsis();
        cfg.rate_bps = 100_000_000;
        (cfg.frame_minislots, cfg.min_frame_minislots) = (1563, 1563);
        cfg.contention = ContentionAlloc::Leftover(32);
        (cfg.backoff_start, cfg.backoff_end) = (3, 10);
        cfg.piggyback = true;
        cfg.concatenation = true;
        let stations: Vec<_> = (0..1000)
            .map(|i| StationConfig { background_pps: 20.0, ..station(2.0 + 13.0 * i as f64 / 999.0) })
            .collect();
        let mut mac = Upstream::new(cfg, stations, 42, true);
        let out = drive(&mut mac, (0..2000).map(|i| (i * 997, (i % 1000) as u32, i, 40)).collect(), 200_000_000);
        (out, mac.take_trace(), mac.metrics().clone(), mac.station_metrics())
    };
    let (a, b) = (run(), run());
    assert_eq!(a.0.len(), 2000);
    assert!(a.2.collisions > 0 && a.2.piggybacked_requests > 0, "{:?}", a.2);
    assert_eq!(a, b);
}

#[test]
fn ack_spacing_paces_the_grants_of_a_request() {
    // Elloumi Fig. 18 with the min filter, one station 100 km out (the timing of the one-station
    // timeline). ACKs reach its MAC queue at 0, 0.6 and 1.2 ms: the first finds the queue empty
    // (no sample), the next two give samples of 0.6 ms, so tau = 0.6 ms. The station reads frame 0
    // at 1 505 333 ns, sees the three ACKs (6 cells) and sends one request asking for them at
    // tau / 2 = 0.3 ms per cell.
    let spaced = StationConfig { ack_spacing: AckSpacing::Min, ..station(100.0) };
    let mut mac = Upstream::new(ieee(GrantScheduler::Rr), vec![spaced], 1, true);
    let acks = vec![(0, 0, 1, 40), (600_000, 0, 2, 40), (1_200_000, 0, 3, 40)];
    let out = drive(&mut mac, acks, 20_000_000);
    let tr = mac.take_trace();
    // Frame 2 carries the grants; its data slots start at minislots 171 + 4k, i.e. at
    // floor((171 + 4k) x 42 666.67) ns: 7 296 000, 7 466 666, 7 637 333, 7 808 000, 7 978 666,
    // 8 149 333, 8 320 000, 8 490 666. The first cell takes k = 0, and the cells are due every
    // 0.3 ms from then (a virtual clock): 7 596 000 -> k = 2, 7 896 000 -> k = 4, 8 196 000 ->
    // k = 6 (k = 5 starts too early); the fifth is due at 8 496 000, after k = 7 starts. Frame 3's
    // data slots start at minislot 223 + 4k (9 514 666 + 170 666.67 k): the fifth, late, takes k = 0,
    // and the sixth, due at 8 796 000, k = 1 right after it (one grant of two data slots).
    let grants: Vec<(u64, u32)> = events(&tr, "grant").map(|g| (g.minislot, g.units)).collect();
    assert_eq!(grants, vec![(171, 1), (179, 1), (187, 1), (195, 1), (223, 2)]);
    // Each ACK is whole when its second cell ends: minislots 183, 199 and 231 start at
    // 7 808 000, 8 490 666 and 9 856 000 ns. Without spacing the three would be 0.34 ms apart.
    let at: Vec<u64> = delivered(&out).iter().map(|d| d.1).collect();
    assert_eq!(at, vec![7_808_000, 8_490_666, 9_856_000]);
}

#[test]
fn a_station_may_piggyback_when_the_channel_does_not() {
    // Elloumi Sec. 6.1: only the TCP station piggybacks. Two stations receive an ACK every 1.55 ms
    // for 60 ms; the channel's piggyback is off, station 0's own setting turns it on.
    let mut cfg = ieee(GrantScheduler::Rr);
    cfg.piggyback = false;
    let stations = vec![StationConfig { piggyback: Some(true), ..station(50.0) }, station(50.0)];
    let mut mac = Upstream::new(cfg, stations, 1, false);
    let acks = (0..40u64).flat_map(|i| [(i * 1_550_000, 0, 2 * i, 40), (i * 1_550_000, 1, 2 * i + 1, 40)]).collect();
    let out = drive(&mut mac, acks, 200_000_000);
    assert_eq!(delivered(&out).len(), 80);
    let st = mac.station_metrics();
    assert!(st[0].piggybacked_requests > 0, "{:?}", st[0]);
    assert_eq!(st[1].piggybacked_requests, 0);
    let contention = |m: &hfcsim_core::access::StationMetrics| m.requests - m.piggybacked_requests;
    assert!(contention(&st[0]) < contention(&st[1]), "piggybacking saves contention: {st:?}");
}

#[test]
fn spaced_grants_leave_the_other_data_slots_to_the_scheduler() {
    // The spaced station of `ack_spacing_paces_the_grants_of_a_request` (station 0) beside station 1,
    // also 100 km out, with one ACK (2 cells) at t = 0, each in its own newcomer slot of frame 0.
    // Frame 2: the spaced cells claim data slots k = 0, 2, 4, 6 first; round robin then gives
    // station 1's 2 cells the first free ones, k = 1 and 3 (minislots 175 and 183), as two grants.
    let seed = seed_where(|seed| draws(seed, 0).below(20) != draws(seed, 1).below(20));
    let spaced = StationConfig { ack_spacing: AckSpacing::Min, ..station(100.0) };
    let mut mac = Upstream::new(ieee(GrantScheduler::Rr), vec![spaced, station(100.0)], seed, true);
    let acks = vec![(0, 0, 1, 40), (600_000, 0, 2, 40), (1_200_000, 0, 3, 40), (0, 1, 9, 40)];
    let out = drive(&mut mac, acks, 20_000_000);
    let tr = mac.take_trace();
    let grants: Vec<(u32, u64, u32)> = events(&tr, "grant").map(|g| (g.station, g.minislot, g.units)).collect();
    assert_eq!(grants, vec![(0, 171, 1), (1, 175, 1), (0, 179, 1), (1, 183, 1), (0, 187, 1), (0, 195, 1), (0, 223, 2)]);
    // Station 1's ACK is whole when minislot 186 ends (minislot 187 starts at 7 978 666 ns); the
    // spaced ACKs keep their times.
    let mut at = delivered(&out);
    at.sort_unstable();
    assert_eq!(at, vec![(1, 7_808_000), (2, 8_490_666), (3, 9_856_000), (9, 7_978_666)]);
}
