//! Topology: a scenario's network built from the parts of `net`, one function per recipe.
//!
//! - `hfc`: Cohen & Ramanathan Sec. IV.A, a shared downstream channel, a shared upstream channel
//!   and, per cable modem, its buffer drained onto the PC's LAN (a drop-tail link, or with
//!   `cm_buffer_aqm` a service queue with PIE or CoDel);
//! - `bottleneck`: Lakshman & Madhow Sec. II, one FIFO bottleneck (a drop-tail link, or with
//!   `bottleneck_aqm` a service queue), ACKs returned at once;
//! - `atm_hfc`: Elloumi et al. Fig. 2, an ATM network (cells, EPD switches) feeding an HFC network
//!   whose upstream is the request/grant MAC;
//! - `access`: a flow's own access link ahead of the shared ones (extra delay, sender jitter).
//!
//! `build` turns the scenario's units (seconds, float rates) into the engine's (nanoseconds,
//! bits per second) and calls the recipe. Every link draws from its own stream, named here
//! explicitly: the component ids below are part of the results (docs/design.md, principle 2), so a
//! change of layout must keep each link's id.

use crate::access::bonding::{self, Bond};
use crate::access::channel::{minislots_per_frame, raw_cells};
use crate::access::serviceflow::{FlowAqm, ServiceFlow};
use crate::access::{self, background, MacConfig, StationConfig, Upstream};
use crate::net::aqm::dualq::QProtConfig;
use crate::net::aqm::{Codel, CodelConfig, DualQ, DualQConfig, Pie, PieConfig};
use crate::net::servicequeue::{Aqm, Lld, ServiceQueue};
use crate::net::shaper::TokenBucket;
use crate::net::shared::{Member, SharedLink};
use crate::net::{Element, Framing, Link, QueueLimit, Role, Route};
use crate::rng::{component, Stream};
use crate::scenario::{self, AqmKind, Direction, Docsis, Flow, ModemGroup, Network, Scenario};
use crate::time::{secs_to_nanos, Nanos, SimTime};
use std::collections::BTreeMap;

/// The routes of one flow: `fwd` carries data (and the opener's SYN), `rev` carries ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRoutes {
    pub fwd: u32,
    pub rev: u32,
}

/// Links, the routes across them, and each flow's pair of routes (in scenario order).
#[derive(Default)]
pub struct Topology {
    pub links: Vec<Link>,
    pub routes: Vec<Route>,
    pub flows: Vec<FlowRoutes>,
    /// The shared upstream channels, each its own request/grant MAC; none with a FIFO upstream.
    pub channels: Vec<Upstream>,
    /// Each station's (channel, index on that channel).
    pub station_at: Vec<(u32, u32)>,
    /// Service queues (`Element::Queue`): DOCSIS service flows, and the buffers given an AQM (the
    /// hfc modem's toward the PC, the bottleneck's).
    pub queues: Vec<ServiceQueue>,
    /// Each datagram endpoint's routes (`datagram_modems`: pings, games, calls): `fwd` client -> server,
    /// `rev` back (scenario order).
    pub pings: Vec<FlowRoutes>,
    /// The bonded modems (DOCSIS 3.0 upstream bonding), each over its channels' sub-stations.
    pub bonds: Vec<Bond>,
    /// Links that pull from service queues (net/shared.rs): the DOCSIS downstream channel, and a
    /// FIFO upstream channel on the docsis kind.
    pub shared: Vec<SharedLink>,
}

impl Topology {
    /// The fabric's parts, and each flow's and each ping's routes: what a driver builds its fabric
    /// and its endpoints from (sim.rs, and the emulator's).
    pub fn into_parts(self) -> (crate::fabric::Parts, Vec<FlowRoutes>, Vec<FlowRoutes>) {
        let Topology { links, routes, flows, channels, station_at, queues, pings, bonds, shared } = self;
        (crate::fabric::Parts { links, routes, queues, channels, station_at, bonds, shared }, flows, pings)
    }

    /// The MAC's stations split over `upstream.channels`, each channel its own MAC (DOCSIS 3.0
    /// MULPI: a CMTS serves several upstream channels). Which channel a modem transmits on is its
    /// group's `modems.*.channel`, or the CMTS's load balancing's choice (`assign_channels`); a
    /// bonded modem is a station on each of its channels, tied together by a `Bond` (access/bonding.rs).
    fn set_channels(&mut self, mac: Option<MacSpec>, seed: u64) {
        let Some(m) = mac else { return };
        let first = assign_channels(&m);
        let mut per: Vec<(Vec<StationConfig>, Vec<u32>)> = vec![(Vec::new(), Vec::new()); m.channels as usize];
        for (id, (st, (&c, &k))) in m.stations.into_iter().zip(first.iter().zip(&m.bonded)).enumerate() {
            let (sts, ids) = &mut per[c as usize];
            self.station_at.push((c, sts.len() as u32));
            if k <= 1 {
                sts.push(st);
                ids.push(id as u32);
                continue;
            }
            // Bonded: a sub-station on each channel c..c+k, the modem's queue limit on its one FIFO
            // (the bond's), its background load on the first channel only.
            let limit = st.queue;
            let mut subs = Vec::with_capacity(k as usize);
            for j in 0..k {
                let ch = c + j;
                let (sts, ids) = &mut per[ch as usize];
                subs.push((ch, sts.len() as u32));
                let background_pps = if j == 0 { st.background_pps } else { 0.0 };
                sts.push(StationConfig {
                    queue: QueueLimit::Unbounded,
                    background_pps,
                    segment_header_bytes: bonding::SEGMENT_HEADER_BYTES,
                    sub: j,
                    ..st.clone()
                });
                ids.push(id as u32);
            }
            self.bonds.push(Bond::new(id as u32, subs, limit));
        }
        self.channels =
            per.into_iter().map(|(sts, ids)| Upstream::channel(m.cfg.clone(), sts, ids, seed, false)).collect();
    }

    fn add_link(&mut self, link: Link) -> u32 {
        self.links.push(link);
        u32::try_from(self.links.len() - 1).expect("fewer than 2^32 links")
    }

    /// Name link `id` for the report of where packets waited (net/wait.rs).
    fn name(&mut self, id: u32, name: impl Into<String>) {
        self.links[id as usize].name = name.into();
    }

    fn add_queue(&mut self, q: ServiceQueue) -> u32 {
        self.queues.push(q);
        u32::try_from(self.queues.len() - 1).expect("fewer than 2^32 queues")
    }

    fn add_route(&mut self, route: Route) -> u32 {
        self.routes.push(route);
        u32::try_from(self.routes.len() - 1).expect("fewer than 2^32 routes")
    }
}

/// Cohen & Ramanathan's HFC network in engine units.
#[derive(Clone, Copy, Debug)]
pub struct Hfc {
    pub downstream_bps: u64,
    pub upstream_bps: u64,
    /// Propagation delay of each channel: half the base RTT (Sec. IV.A: 20 ms round trip).
    pub channel_delay: Nanos,
    pub downstream_loss: f64,
    pub upstream_loss: f64,
    pub cm_lan_bps: u64,
    pub cm_limit: QueueLimit,
    /// The headend's downstream queue, shared by every modem (`network.headend_queue_bytes`).
    pub headend_limit: QueueLimit,
    /// The CM buffer's discipline; drop-tail keeps the plain link.
    pub cm_aqm: AqmKind,
    pub aqm: AqmParams,
    /// The largest packet, IP bytes (CoDel's maxpacket).
    pub largest: u32,
}

/// The AQM parameters of a network (the scenario's `pie_target_s`, ...), s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AqmParams {
    pub pie_target_s: f64,
    pub docsis_pie_target_s: f64,
    pub codel_target_s: f64,
    pub codel_interval_s: f64,
    /// Low Latency DOCSIS's (`network.lld_*`; MULPI's defaults elsewhere).
    pub lld: LldParams,
}

/// The dual queue's keys (schema.toml `network.lld_*`), s where a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LldParams {
    pub max_th_s: f64,
    pub lg_range: u32,
    pub coupling: f64,
    pub weight: u32,
    pub qprotect: bool,
    pub qp_latency_s: Option<f64>,
    pub qp_score_s: f64,
}

impl AqmParams {
    /// Each RFC's defaults (schema.toml's), read once: a run must not resolve a scenario.
    pub fn rfc() -> AqmParams {
        static RFC: std::sync::OnceLock<AqmParams> = std::sync::OnceLock::new();
        *RFC.get_or_init(|| AqmParams::of(&Docsis::nguyen_default()))
    }

    /// A docsis network's.
    fn of(d: &Docsis) -> AqmParams {
        AqmParams {
            pie_target_s: d.pie_target_s,
            docsis_pie_target_s: d.docsis_pie_target_s,
            codel_target_s: d.codel_target_s,
            codel_interval_s: d.codel_interval_s,
            lld: LldParams {
                max_th_s: d.lld_max_th_s,
                lg_range: d.lld_lg_range,
                coupling: d.lld_coupling,
                weight: d.lld_weight,
                qprotect: d.lld_qprotect,
                qp_latency_s: d.lld_qp_latency_s,
                qp_score_s: d.lld_qp_score_s,
            },
        }
    }
}

/// Lakshman & Madhow's bottleneck in engine units.
#[derive(Clone, Copy, Debug)]
pub struct Bottleneck {
    pub rate_bps: u64,
    /// tau: every delay but service and queueing at the bottleneck.
    pub delay: Nanos,
    pub limit: QueueLimit,
    pub loss: f64,
    /// The buffer's discipline; drop-tail keeps the plain link.
    pub aqm: AqmKind,
    pub aqm_params: AqmParams,
    /// A data packet, IP bytes (CoDel's maxpacket).
    pub largest: u32,
}

/// The network of a scenario: its recipe, then each flow's access link. `data_packet` is a full
/// data packet's size on the wire (MSS + headers), the unit of the bottleneck's rate.
pub fn build(sc: &Scenario, seed: u64, data_packet: u32) -> Topology {
    let mut t = match sc.network {
        Network::Hfc(scenario::Hfc {
            downstream_bps,
            upstream_bps,
            rtt_s,
            downstream_loss,
            upstream_loss,
            cm_buffer_bytes,
            cm_buffer_packets,
            cm_lan_bps,
            cm_buffer_aqm,
            pie_target_s,
            codel_target_s,
            codel_interval_s,
            headend_queue_bytes,
            default_buffer,
        }) => {
            let cm_limit = QueueLimit::bytes_or_packets(cm_buffer_bytes, cm_buffer_packets);
            let p = Hfc {
                downstream_bps: downstream_bps.round() as u64,
                upstream_bps: upstream_bps.round() as u64,
                // The base RTT is split evenly as propagation delay on the two channels.
                channel_delay: secs_to_nanos(rtt_s) / 2,
                downstream_loss,
                upstream_loss,
                cm_lan_bps: cm_lan_bps.round() as u64,
                cm_limit,
                headend_limit: QueueLimit::bytes_or_packets(
                    headend_queue_bytes.or_else(|| default_buffer.bytes(downstream_bps, data_packet)),
                    None,
                ),
                cm_aqm: cm_buffer_aqm,
                aqm: AqmParams { pie_target_s, codel_target_s, codel_interval_s, ..AqmParams::rfc() },
                largest: data_packet,
            };
            let mac = (sc.upstream.mac != scenario::MacKind::Fifo).then(|| mac_spec(sc, p.upstream_bps, data_packet));
            hfc(&p, &sc.flows, seed, mac)
        }
        Network::AtmHfc(scenario::AtmHfc {
            downstream_bps,
            upstream_bps,
            source_bps,
            bottleneck_bps,
            bottleneck_delay_s,
            ref bottleneck_schedule,
            headend_bps,
            epd_threshold_cells,
            switch_buffer_cells,
            driver_buffer_packets,
            processing_s,
            downstream_loss,
            upstream_loss,
        }) => {
            let p = AtmHfc {
                downstream_bps: downstream_bps.round() as u64,
                upstream_bps: upstream_bps.round() as u64,
                source_bps: source_bps.round() as u64,
                bottleneck_bps: bottleneck_bps.round() as u64,
                bottleneck_delay: secs_to_nanos(bottleneck_delay_s),
                bottleneck_schedule: bottleneck_schedule
                    .iter()
                    .map(|&(t, r)| (SimTime(secs_to_nanos(t)), r.round() as u64))
                    .collect(),
                headend_bps: headend_bps.round() as u64,
                epd_threshold_cells,
                switch_limit: switch_buffer_cells.map_or(QueueLimit::Unbounded, QueueLimit::Cells),
                driver_limit: driver_buffer_packets.map_or(QueueLimit::Unbounded, QueueLimit::Packets),
                processing: secs_to_nanos(processing_s),
                downstream_loss,
                upstream_loss,
            };
            let mac = (sc.upstream.mac != scenario::MacKind::Fifo).then(|| mac_spec(sc, p.upstream_bps, data_packet));
            atm_hfc(&p, &sc.flows, seed, mac)
        }
        Network::Docsis(ref d) => {
            let mac = (sc.upstream.mac != scenario::MacKind::Fifo)
                .then(|| mac_spec(sc, d.upstream_bps.round() as u64, data_packet));
            docsis(d, &sc.modems, &sc.flows, &datagram_modems(sc), seed, data_packet, mac)
        }
        Network::Bottleneck(scenario::Bottleneck {
            rate_pps,
            buffer_packets,
            tau_s,
            loss,
            bottleneck_aqm,
            pie_target_s,
            codel_target_s,
            codel_interval_s,
        }) => {
            let p = Bottleneck {
                // mu data packets per second: the link rate that serves one data packet in 1/mu.
                rate_bps: (rate_pps * data_packet as f64 * 8.0).round() as u64,
                delay: secs_to_nanos(tau_s),
                limit: buffer_packets.map_or(QueueLimit::Unbounded, QueueLimit::Packets),
                loss,
                aqm: bottleneck_aqm,
                aqm_params: AqmParams { pie_target_s, codel_target_s, codel_interval_s, ..AqmParams::rfc() },
                largest: data_packet,
            };
            bottleneck(&p, sc.flows.len(), seed)
        }
    };
    for (i, f) in sc.flows.iter().enumerate() {
        access(&mut t, i, f, seed);
    }
    let datagrams = datagram_modems(sc);
    if t.pings.len() < datagrams.len() {
        // Networks without their own ping routes (hfc): the echo (or a game's or call's datagram) takes
        // the upstream of its modem's first flow and comes back on that flow's downstream route.
        for &m in &datagrams[t.pings.len()..] {
            let r = sc.flows.iter().position(|f| f.modem == m).map(|i| (t.flows[i], sc.flows[i].direction));
            t.pings.push(match r {
                Some((r, Direction::Down)) => FlowRoutes { fwd: r.rev, rev: r.fwd },
                Some((r, Direction::Up)) => r,
                None => panic!("datagram endpoint {}: modem {m} carries no flow", t.pings.len()),
            });
        }
    }
    t
}

/// The modems of the endpoints that send datagrams from a modem's client to the server and back: the
/// pings, then the games, then the calls (sim.rs numbers them in this order after the flows).
pub fn datagram_modems(sc: &Scenario) -> Vec<u32> {
    let pings = sc.pings.iter().map(|p| p.modem);
    pings.chain(sc.games.iter().map(|g| g.modem)).chain(sc.calls.iter().map(|c| c.modem)).collect()
}

/// Stream of the downstream channel, and of Lakshman & Madhow's bottleneck.
const DOWNSTREAM_LINK: u64 = 0;
/// Stream of the upstream channel.
const UPSTREAM_LINK: u64 = 1;

/// Stream of the CM-LAN link of modem `m`: `link_loss(2 + m)`, its index when every modem up to
/// the largest had a link after the two channels. Kept so results do not depend on which modems
/// carry flows.
fn cm_lan_stream(m: u32) -> u64 {
    component::link_loss(2 + m as u64)
}

/// The request/grant upstream of an HFC network: the MAC's settings, its stations, and which
/// station each modem is.
pub struct MacSpec {
    pub cfg: MacConfig,
    pub stations: Vec<StationConfig>,
    /// Modem number -> station; with modem groups the station is the modem number itself.
    pub station_of: BTreeMap<u32, u32>,
    /// Each station's upstream channel (its group's), and how many channels there are.
    pub channel: Vec<u32>,
    pub channels: u32,
    /// Each station's bonded channels (1 = not bonded).
    pub bonded: Vec<u32>,
    pub balancing: scenario::LoadBalancing,
}

/// The first channel of each station: its group's (`static`), or, with load balancing by count
/// (DOCSIS 3.0 MULPI's autonomous load balancing at registration; a CMTS's "modem" method, ARRIS C4 CMTS 8.3 User Guide Ch. 31), stations in order, each to the channels with the
/// fewest modems so far, ties to the lowest; a station bonding k channels takes the k consecutive
/// channels whose busiest has the fewest, and counts on each (chosen: MULPI leaves the policy to the
/// CMTS).
pub fn assign_channels(m: &MacSpec) -> Vec<u32> {
    match m.balancing {
        scenario::LoadBalancing::Static => m.channel.clone(),
        scenario::LoadBalancing::Count => {
            let mut count = vec![0u64; m.channels as usize];
            m.bonded
                .iter()
                .map(|&k| {
                    let k = k.max(1) as usize;
                    let busiest = |c: usize| count[c..c + k].iter().copied().max().unwrap_or(0);
                    let c = (0..=count.len() - k).min_by_key(|&c| (busiest(c), c)).unwrap_or(0);
                    for n in &mut count[c..c + k] {
                        *n += 1;
                    }
                    c as u32
                })
                .collect()
        }
    }
}

impl MacSpec {
    /// The longest MAP interval, s (the MAP rate's floor with dynamic MAPs).
    pub fn map_s(&self) -> f64 {
        self.cfg.frame_minislots as f64 * self.cfg.minislot_bytes as f64 * 8.0 / self.cfg.rate_bps as f64
    }

    /// The station modem `modem` is and its one-way propagation delay to the headend; without a
    /// MAC, no station and no delay.
    fn station_of(mac: Option<&MacSpec>, modem: u32) -> (Option<u32>, Nanos) {
        match mac {
            Some(m) => {
                let s = m.station_of[&modem];
                (Some(s), m.stations[s as usize].one_way)
            }
            None => (None, 0),
        }
    }
}

/// The scenario's `upstream` and `modems` in engine units (`data_packet`: a full data packet, the
/// least a default-sized modem queue holds). Modem groups spread their stations
/// evenly over their distance range (chosen: the paper gives only the nearest and farthest,
/// Elloumi Table 1). Without groups each modem a flow uses is a station at the headend (0 km).
pub fn mac_spec(sc: &Scenario, upstream_bps: u64, data_packet: u32) -> MacSpec {
    let u = &sc.upstream;
    assert!(u.mac != scenario::MacKind::Fifo, "the FIFO upstream has no MAC");
    let cfg = MacConfig {
        kind: u.mac,
        rate_bps: upstream_bps,
        minislot_bytes: u.minislot_bytes,
        frame_minislots: minislots_per_frame(u.frame_s, u.minislot_bytes, upstream_bps),
        min_frame_minislots: minislots_per_frame(u.min_frame_s.unwrap_or(u.frame_s), u.minislot_bytes, upstream_bps),
        contention: match u.contention {
            scenario::ContentionAlloc::Fixed => access::ContentionAlloc::Fixed(u.contention_slots),
            scenario::ContentionAlloc::Leftover => access::ContentionAlloc::Leftover(u.contention_slots),
        },
        data_slot_minislots: u.data_slot_minislots,
        scheduler: u.scheduler,
        max_request: u.max_request,
        piggyback: u.piggyback,
        concatenation: u.concatenation,
        fragmentation: u.fragmentation,
        max_burst_bytes: u.max_burst_bytes,
        headend_delay: secs_to_nanos(u.headend_delay_s),
        backoff_start: u.backoff_start,
        backoff_end: u.backoff_end,
        max_retries: u.max_retries,
        burst_overhead_bytes: u.burst_overhead_bytes,
        fec: access::channel::Fec { parity_bytes: 2 * u.fec_t_bytes, codeword_bytes: u.fec_codeword_bytes },
        frame_overhead_bytes: u.frame_overhead_bytes,
        // Issue 23's plant delays: the interleaver delays the MAPs as it does every downstream
        // packet (docsis kind only); the modem's MAP processing and the maintenance regions are
        // the DOCSIS MAC's.
        interleave: match &sc.network {
            Network::Docsis(d) => secs_to_nanos(d.interleave_s()),
            _ => 0,
        },
        map_processing: secs_to_nanos(u.map_processing_s),
        maintenance_interval: u.maintenance_interval_s.map_or(0, secs_to_nanos),
        maintenance_minislots: u.maintenance_minislots,
    };
    let mut stations = Vec::new();
    let mut station_of = BTreeMap::new();
    if sc.modems.is_empty() {
        for m in sc.flows.iter().map(|f| f.modem).chain(datagram_modems(sc)) {
            let next = station_of.len() as u32;
            station_of.entry(m).or_insert(next);
        }
        let plain = StationConfig {
            one_way: 0,
            distance_km: 0.0,
            group: 0,
            queue: QueueLimit::Unbounded,
            background_pps: 0.0,
            background_bytes: 48,
            piggyback: None,
            ack_spacing: scenario::AckSpacing::Off,
            segment_header_bytes: 0,
            sub: 0,
        };
        stations.resize(station_of.len(), plain);
    } else {
        for (gi, g) in sc.modems.iter().enumerate() {
            // Elloumi Sec. 4: lambda = L*UR*48/(53*N) per station, L counted in cells on the
            // channel; a DOCSIS packet takes its frame (IP + Ethernet + MAC header) instead.
            let wire = match u.mac {
                scenario::MacKind::Ieee80214 => raw_cells(g.background_bytes) * 53,
                _ => g.background_bytes + u.frame_overhead_bytes,
            };
            let pps = background::per_station_pps(g.background_load, upstream_bps, wire, g.count);
            // A modem's upstream queue on the hfc kind is its CM's: network.default_buffer sizes it
            // when no key does (schema.toml); on docsis its service flow's buffer bounds it.
            let default_bytes = match &sc.network {
                Network::Hfc(h) if g.queue_packets.is_none() => {
                    h.default_buffer.bytes(upstream_bps as f64, data_packet)
                }
                _ => None,
            };
            let queue = QueueLimit::bytes_or_packets(g.queue_bytes.or(default_bytes), g.queue_packets);
            for i in 0..g.count {
                let km = if g.count > 1 {
                    g.distance_km_min + (g.distance_km_max - g.distance_km_min) * i as f64 / (g.count - 1) as f64
                } else {
                    g.distance_km_min
                };
                stations.push(StationConfig {
                    one_way: secs_to_nanos(km * u.delay_s_per_km),
                    distance_km: km,
                    group: gi as u32,
                    queue,
                    background_pps: pps,
                    background_bytes: g.background_bytes,
                    piggyback: g.piggyback,
                    ack_spacing: g.ack_spacing,
                    segment_header_bytes: 0,
                    sub: 0,
                });
            }
        }
        for m in sc.flows.iter().map(|f| f.modem).chain(datagram_modems(sc)) {
            station_of.insert(m, m);
        }
    }
    // A station's channel is its group's; without groups every station is on channel 0.
    let channel = stations.iter().map(|s| sc.modems.get(s.group as usize).map_or(0, |g| g.channel)).collect();
    let bonded = stations.iter().map(|s| sc.modems.get(s.group as usize).map_or(1, |g| g.bonded_channels)).collect();
    MacSpec { cfg, stations, station_of, channel, channels: u.channels, bonded, balancing: u.load_balancing }
}

/// Cohen & Ramanathan Sec. IV.A: server -> downstream channel -> cable modem -> PC, and
/// PC -> upstream channel -> server. The upstream is a FIFO link shared by every modem, or,
/// with `mac`, a request/grant channel entered at each modem's station and followed by the
/// headend's link to the server (the other half of the base RTT, the channel's media loss); each
/// modem's distance then adds its propagation delay downstream too. Links exist only for the
/// modems that carry flows, so memory grows with those, not with the largest modem number.
pub fn hfc(p: &Hfc, flows: &[Flow], seed: u64, mac: Option<MacSpec>) -> Topology {
    let mut t = Topology::default();
    let stream = |c: u64| Stream::new(seed, c);
    let down = t.add_link(Link::new(
        Role::DownstreamChannel,
        p.downstream_bps,
        p.channel_delay,
        p.headend_limit,
        true,
        p.downstream_loss,
        stream(component::link_loss(DOWNSTREAM_LINK)),
    ));
    let up = t.add_link(Link::new(
        Role::UpstreamChannel,
        if mac.is_some() { 0 } else { p.upstream_bps }, // with a MAC: the headend's onward link
        p.channel_delay,
        QueueLimit::Unbounded,
        true,
        p.upstream_loss,
        stream(component::link_loss(UPSTREAM_LINK)),
    ));
    t.name(down, "headend_downstream");
    t.name(up, if mac.is_some() { "headend_to_server" } else { "upstream_channel" });
    let shared_upstream = t.add_route(vec![Element::Link(up)]);
    // Modem number -> the routes to and from the PC behind it, built on the modem's first flow.
    let mut to_pc: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    for f in flows {
        let (route, upstream) = match to_pc.get(&f.modem) {
            Some(&r) => r,
            None => {
                let (station, distance) = MacSpec::station_of(mac.as_ref(), f.modem);
                let lan = match p.cm_aqm {
                    // Cohen Sec. V.B: the CM buffer counts the packet being sent on the LAN.
                    AqmKind::Droptail => Element::Link(
                        t.add_link(
                            Link::new(
                                Role::CmLan,
                                p.cm_lan_bps,
                                distance,
                                p.cm_limit,
                                true,
                                0.0,
                                stream(cm_lan_stream(f.modem)),
                            )
                            .named(format!("cm_lan_modem{}", f.modem)),
                        ),
                    ),
                    // The same buffer as a service queue, so that the AQM can act at enqueue (PIE,
                    // RFC 8033 Sec. 4.1) or at dequeue (CoDel, RFC 8289 Sec. 5.3): its limit
                    // (counting the packet on the LAN), the LAN's rate, the modem's distance. The
                    // link had no media loss, framing or jitter to carry.
                    kind => Element::Queue(
                        t.add_queue(
                            ServiceQueue::new(
                                format!("cm_lan_modem{}", f.modem),
                                Role::CmLan,
                                p.cm_limit,
                                None,
                                Framing::NONE,
                                p.cm_lan_bps,
                                Framing::NONE,
                                distance,
                                aqm(kind, &p.aqm, p.largest, None, 0),
                                service_queue_stream(seed, f.modem as u64),
                            )
                            .counting_in_service(),
                        ),
                    ),
                };
                let r = t.add_route(vec![Element::Link(down), lan]);
                let u = match station {
                    Some(s) => t.add_route(vec![Element::Upstream(s), Element::Link(up)]),
                    None => shared_upstream,
                };
                to_pc.insert(f.modem, (r, u));
                (r, u)
            }
        };
        t.flows.push(match f.direction {
            Direction::Down => FlowRoutes { fwd: route, rev: upstream },
            Direction::Up => FlowRoutes { fwd: upstream, rev: route },
        });
    }
    t.set_channels(mac, seed);
    t
}

/// Stream of service queue `i` (AQM draws): in a DOCSIS network 2m and 2m + 1 for modem m's; the
/// hfc network's CM buffer of modem m, m; the bottleneck's, 0.
fn service_queue_stream(seed: u64, i: u64) -> Stream {
    Stream::new(seed, component::service_queue(i))
}

/// The AQM of a service queue, with the scenario's parameters (aqm/: each RFC's defaults).
/// `largest` is the largest packet (IP bytes, as the queue counts them): CoDel's maxpacket;
/// `buffer` the queue's limit, which DOCSIS-PIE's "a third of the buffer" rule reads; `max_rate`
/// the service flow's rate cap, bit/s (LLD's MAX_RATE, the Aggregate Maximum Sustained Rate).
fn aqm(kind: AqmKind, a: &AqmParams, largest: u32, buffer: Option<u64>, max_rate: u64) -> Aqm {
    match kind {
        AqmKind::Droptail => Aqm::DropTail,
        AqmKind::Pie => {
            let mut cfg = PieConfig::rfc8033();
            cfg.target = secs_to_nanos(a.pie_target_s);
            Aqm::Pie(Box::new(Pie::new(cfg, SimTime::ZERO)))
        }
        AqmKind::DocsisPie => {
            let mut cfg = PieConfig::docsis();
            cfg.target = secs_to_nanos(a.docsis_pie_target_s);
            cfg.buffer_bytes = buffer;
            Aqm::Pie(Box::new(Pie::new(cfg, SimTime::ZERO)))
        }
        // LLD (aqm/dualq.rs): MULPI's parameters from the network.lld_* keys; the classic queue is
        // DOCSIS-PIE with its target key (MULPI's Classic AQM Latency Target, 10 ms) and the service
        // flow's buffer. NQB packets (DSCP 45) go to the L queue, as LLD's default classifiers put
        // them (chosen: always; only `pings.*.nqb` sends any).
        AqmKind::Lld => {
            let mut cfg = DualQConfig::docsis(max_rate);
            let l = &a.lld;
            cfg.max_th = secs_to_nanos(l.max_th_s);
            cfg.lg_range = l.lg_range;
            cfg.coupling = l.coupling;
            cfg.weight = l.weight;
            cfg.nqb_to_l = true;
            cfg.qprot = l.qprotect.then(|| QProtConfig {
                critical_ql: l.qp_latency_s.map(secs_to_nanos),
                critical_score: secs_to_nanos(l.qp_score_s),
                ..QProtConfig::default()
            });
            cfg.classic.target = secs_to_nanos(a.docsis_pie_target_s);
            cfg.classic.buffer_bytes = buffer;
            Aqm::Lld(Box::new(Lld::new(DualQ::new(cfg, SimTime::ZERO))))
        }
        AqmKind::Codel => {
            let mut cfg = CodelConfig::rfc8289();
            cfg.target = secs_to_nanos(a.codel_target_s);
            cfg.interval = secs_to_nanos(a.codel_interval_s);
            cfg.max_packet_bytes = largest as u64;
            Aqm::Codel(Box::new(Codel::new(cfg)))
        }
    }
}

/// One DOCSIS service flow, as `docsis` builds it.
struct SfSpec {
    name: String,
    /// The CMTS's downstream flow feeds the downstream channel, the modem's upstream flow the
    /// upstream (link.rs `Role`; neither is the CM buffer toward the PC).
    role: Role,
    /// Its buffer in bytes (None: unbounded).
    buffer: Option<u64>,
    cap: TokenBucket,
    aqm: AqmKind,
    /// Its AQM's stream (`service_queue_stream`).
    stream: u64,
}

impl SfSpec {
    fn limit(&self) -> QueueLimit {
        self.buffer.map_or(QueueLimit::Unbounded, QueueLimit::Bytes)
    }
}

/// Nguyen & Armitage Sec. III.A, Fig. 2: a server and a client on 100 Mb/s Ethernet either side
/// of the CMTS and the cable modem.
///
/// ```text
/// server -[pipe: TCP only]-[Ethernet]-> CMTS: modem m's DS service flow (cap, buffer, AQM),
///   taken by the downstream channel's scheduler when it can send -[DOCSIS frames, shared]->
///   CM m -[Ethernet]-> client m
/// client m -[Ethernet]-> CM m: its US service flow (cap, buffer, AQM) -> upstream MAC station
///   (or the FIFO upstream channel, which pulls from the flows as the downstream does)
///   -> CMTS -[Ethernet]-> server
/// ```
/// Choices where the paper is silent, each a parameter: the CMTS's downstream scheduler takes the
/// next packet from the modems' service flows when the channel can send (net/shared.rs: each
/// flow's cap, then deficit round robin), so a packet waits only in its flow's queue, under its
/// AQM; the modem's rate cap releases packets to its MAC queue, which requests what it holds (so
/// the cap "limits what the modem may request and send", and the MAC's own queue stays short); the
/// CMTS-server Ethernet carries the upstream channel's media loss, as the headend link does in
/// `hfc` with a MAC. Ethernet links serialise whole frames with preamble and gap; the downstream
/// channel whole DOCSIS frames; rate caps count Ethernet frames (shaper.rs).
///
/// Delay estimates: the CMTS measures, the modem predicts. The CMTS's downstream queues tell their
/// AQMs the head's waiting time (servicequeue.rs `measured`), since a flow that shares the channel
/// drains at whatever the scheduler gives it, not at its cap; the modem's queues tell them their
/// bytes over the configured rate, as RFC 8034 (DOCSIS-PIE) and MULPI Annex O prescribe for it.
pub fn docsis(
    d: &Docsis,
    modems: &[ModemGroup],
    flows: &[Flow],
    pings: &[u32],
    seed: u64,
    data_packet: u32,
    mac: Option<MacSpec>,
) -> Topology {
    let mut t = Topology::default();
    let ethernet =
        Framing { header: d.ethernet_header_bytes, min_frame: d.ethernet_min_frame_bytes, extra: d.ethernet_gap_bytes };
    let counted = Framing { extra: 0, ..ethernet };
    let docsis_frame = Framing { extra: d.docsis_header_bytes, ..counted };
    let rate = |bps: f64| bps.round() as u64;
    let mut extra_stream = 0u64;
    let mut plain_stream = || {
        extra_stream += 1;
        Stream::new(seed, component::docsis_link(extra_stream))
    };
    // Issue 23: the interleaver's latency and the CMTS's forwarding time delay every downstream
    // packet (a constant on the channel's delay, no queue of their own); the MAC management
    // messages, with `ds_mgmt_overhead`, take their average rate off the payload rate (plant.rs).
    let mgmt_bps = match (&mac, d.ds_mgmt_overhead) {
        (Some(m), true) => crate::access::plant::mgmt_overhead_bps(d.docsis_header_bytes, m.channels, m.map_s()),
        _ => 0.0,
    };
    // The downstream channel: a shared link that pulls from the modems' service flows (added with
    // its members once they are built). Downstream bonding as an aggregate rate (schema.toml
    // `network.ds_channels`), less the MAC management messages (sent once: chosen, on the primary
    // channel).
    let down_rate = rate(d.payload_bps() * f64::from(d.ds_channels) - mgmt_bps);
    let down_delay =
        secs_to_nanos(d.downstream_delay_s) + secs_to_nanos(d.interleave_s()) + secs_to_nanos(d.cmts_forward_s);
    let mut down_members: Vec<Member> = Vec::new();
    let mut up_members: Vec<Member> = Vec::new();
    // CMTS -> server; with a FIFO upstream, the channel ahead of it carries the media loss.
    let to_server = t.add_link(
        Link::new(
            Role::UpstreamChannel,
            rate(d.ethernet_bps),
            (if mac.is_some() { secs_to_nanos(d.upstream_delay_s) } else { 0 }) + secs_to_nanos(d.cmts_forward_s),
            QueueLimit::Unbounded,
            true,
            if mac.is_some() { d.upstream_loss } else { 0.0 },
            Stream::new(seed, component::link_loss(UPSTREAM_LINK)),
        )
        .framed(ethernet),
    );
    // A FIFO upstream (no MAC): a shared link that pulls from the modems' upstream service flows
    // as the downstream channel does from the CMTS's (its members added below).
    t.name(to_server, "cmts_to_server");
    let fifo_up = mac.is_none().then(&mut plain_stream);
    // A service flow's queue: its buffer and AQM, its rate cap counting Ethernet frames, and no
    // transmitter of its own: a shared channel takes from it.
    let service_flow = |f: SfSpec| {
        let max_rate = f.cap.rate_bps();
        let cmts = f.role == Role::DownstreamChannel;
        let q = ServiceQueue::new(
            f.name,
            f.role,
            f.buffer.map_or(QueueLimit::Unbounded, QueueLimit::Bytes),
            Some(f.cap),
            counted,
            0,
            Framing::NONE,
            0,
            aqm(f.aqm, &AqmParams::of(d), data_packet, f.buffer, max_rate),
            service_queue_stream(seed, f.stream),
        );
        // The CMTS measures its queues' delays; the modem predicts its own (doc comment).
        if cmts {
            q.measured()
        } else {
            q
        }
    };
    // A modem's upstream service flow as its station's queue (access/serviceflow.rs), `limit` its
    // buffer: its AQM estimates the queue's delay at the configured rate (the modem predicts).
    let station_flow = |f: SfSpec, limit: QueueLimit| {
        let max_rate = f.cap.rate_bps();
        let buffer = match limit {
            QueueLimit::Bytes(b) => Some(b),
            _ => None,
        };
        let flow_aqm = match aqm(f.aqm, &AqmParams::of(d), data_packet, buffer, max_rate) {
            Aqm::DropTail => FlowAqm::DropTail,
            Aqm::Pie(p) => FlowAqm::Pie(p),
            Aqm::Codel(c) => FlowAqm::Codel(c),
            Aqm::Lld(l) => FlowAqm::Lld { dq: Box::new(l.dq), l: u32::MAX },
        };
        (ServiceFlow::new(f.name, Some(f.cap), counted, flow_aqm, service_queue_stream(seed, f.stream)), limit)
    };
    let mut station_flows: Vec<(u32, (ServiceFlow, QueueLimit))> = Vec::new();
    // Modem m's upstream service flow: its group's tier, else the network's.
    let us_spec = |m: u32| {
        let us_rate = group_of(modems, m).and_then(|g| g.us_rate_bps).unwrap_or(d.us_rate_bps);
        SfSpec {
            name: format!("cm_us_modem{m}"),
            role: Role::UpstreamChannel,
            buffer: d.buffer_bytes(d.cm_queue_bytes, d.cm_queue_s, us_rate, d.us_peak_bps, data_packet),
            cap: TokenBucket::new(rate(us_rate), d.us_burst_bytes, d.us_peak_bps.map(rate)),
            aqm: d.cm_aqm,
            stream: 2 * m as u64 + 1,
        }
    };
    // A station's flow's buffer: its group's modems.queue_bytes / queue_packets, else the flow's own.
    let station_limit = |s: u32| {
        let group = mac.as_ref().map_or(QueueLimit::Unbounded, |m| m.stations[s as usize].queue);
        if group == QueueLimit::Unbounded {
            None
        } else {
            Some(group)
        }
    };
    let server_nic = t.add_link(
        Link::new(Role::Access, rate(d.ethernet_bps), 0, QueueLimit::Unbounded, true, 0.0, plain_stream())
            .framed(ethernet)
            .named("server_nic"),
    );
    // dummynet (Sec. III.A): a pipe of a bandwidth and a 62 KB queue on the server's TCP packets;
    // it counts IP bytes (the packet's length as the IP layer hands it over).
    let pipe = d.server_limit_bps.map(|bps| {
        let s = plain_stream();
        t.add_link(
            Link::new(Role::Access, rate(bps), 0, QueueLimit::Bytes(d.server_queue_bytes), true, 0.0, s)
                .named("server_pipe"),
        )
    });
    // Per modem, built on first use: (TCP downstream, plain downstream, upstream) routes.
    let mut per_modem: BTreeMap<u32, (u32, u32, u32)> = BTreeMap::new();
    let mut modem_routes = |t: &mut Topology, m: u32| -> (u32, u32, u32) {
        if let Some(&r) = per_modem.get(&m) {
            return r;
        }
        let (station, distance) = MacSpec::station_of(mac.as_ref(), m);
        // Its group's service tier, else the network's.
        let g = group_of(modems, m);
        let ds_rate = g.and_then(|g| g.ds_rate_bps).unwrap_or(d.ds_rate_bps);
        let ds_priority = g.and_then(|g| g.ds_priority).unwrap_or(d.ds_priority);
        let ds_min = g.and_then(|g| g.ds_min_rate_bps).or(d.ds_min_rate_bps);
        let ds = t.add_queue(
            service_flow(SfSpec {
                name: format!("cmts_ds_modem{m}"),
                role: Role::DownstreamChannel,
                buffer: d.buffer_bytes(d.cmts_queue_bytes, d.cmts_queue_s, ds_rate, d.ds_peak_bps, data_packet),
                cap: TokenBucket::new(rate(ds_rate), d.ds_burst_bytes, d.ds_peak_bps.map(rate)),
                aqm: d.cmts_aqm,
                stream: 2 * m as u64,
            })
            .pulled(),
        );
        // MULPI C.2.2.7.5: the reserved rate's bucket, one largest frame deep (net/shared.rs).
        let reserve = ds_min.map(|r| TokenBucket::new(rate(r), docsis_frame.wire(data_packet) as u64, None));
        down_members.push(Member::new(ds, ds_priority as u8, reserve));
        let us_flow = us_spec(m);
        // With a MAC the modem's service flow is its station's queue (access/serviceflow.rs), unless
        // the modem is bonded: its flow then shapes ahead of the bond's queue, as a queue of its own.
        let bonded = station.is_some_and(|s| mac.as_ref().is_some_and(|m| m.bonded[s as usize] > 1));
        let us = match (station, fifo_up.is_some()) {
            (Some(s), _) if !bonded => {
                let limit = station_limit(s).unwrap_or_else(|| us_flow.limit());
                station_flows.push((s, station_flow(us_flow, limit)));
                None
            }
            (Some(_), _) => Some(t.add_queue(service_flow(us_flow))),
            (None, _) => {
                let q = t.add_queue(service_flow(us_flow).pulled());
                up_members.push(Member::new(q, 0, None));
                Some(q)
            }
        };
        let lan = t.add_link(
            Link::new(
                Role::CmLan,
                rate(d.ethernet_bps),
                distance + secs_to_nanos(d.cm_forward_s),
                QueueLimit::Unbounded,
                true,
                0.0,
                Stream::new(seed, cm_lan_stream(m)),
            )
            .framed(ethernet)
            .named(format!("cm_lan_modem{m}")),
        );
        // The modem forwards each upstream packet to its service flow `cm_forward_s` after it arrives.
        let client_up = t.add_link(
            Link::new(
                Role::Access,
                rate(d.ethernet_bps),
                secs_to_nanos(d.cm_forward_s),
                QueueLimit::Unbounded,
                true,
                0.0,
                plain_stream(),
            )
            .framed(ethernet)
            .named(format!("client_modem{m}")),
        );
        let plain_down = vec![Element::Link(server_nic), Element::Queue(ds), Element::Link(lan)];
        let mut tcp_down = plain_down.clone();
        if let Some(p) = pipe {
            tcp_down.insert(0, Element::Link(p));
        }
        let mut up = vec![Element::Link(client_up)];
        up.extend(us.map(Element::Queue));
        match (station, fifo_up.is_some()) {
            (Some(s), _) => up.push(Element::Upstream(s)),
            // The FIFO upstream pulls from the flow's queue: the next element is the CMTS's.
            (None, true) => {}
            (None, false) => unreachable!("a FIFO upstream without a MAC"),
        }
        up.push(Element::Link(to_server));
        let r = (t.add_route(tcp_down), t.add_route(plain_down), t.add_route(up));
        per_modem.insert(m, r);
        r
    };
    for f in flows {
        let (tcp_down, _, up) = modem_routes(&mut t, f.modem);
        t.flows.push(match f.direction {
            Direction::Down => FlowRoutes { fwd: tcp_down, rev: up },
            // The server's ACKs are its outgoing TCP packets: through the pipe.
            Direction::Up => FlowRoutes { fwd: up, rev: tcp_down },
        });
    }
    for &m in pings {
        let (_, plain_down, up) = modem_routes(&mut t, m);
        t.pings.push(FlowRoutes { fwd: up, rev: plain_down });
    }
    // The DRR quantum: the largest frame on the channel (net/shared.rs).
    let quantum = docsis_frame.wire(data_packet);
    t.shared.push(SharedLink::new(
        "downstream_channel".into(),
        Role::DownstreamChannel,
        down_rate,
        docsis_frame,
        down_delay,
        d.downstream_loss,
        Stream::new(seed, component::link_loss(DOWNSTREAM_LINK)),
        quantum,
        down_members,
    ));
    if let Some(stream) = fifo_up {
        t.shared.push(SharedLink::new(
            "upstream_channel".into(),
            Role::UpstreamChannel,
            rate(d.upstream_bps),
            docsis_frame,
            secs_to_nanos(d.upstream_delay_s),
            d.upstream_loss,
            stream,
            quantum,
            up_members,
        ));
    }
    // Every other modem of the plant has its upstream service flow too (its background traffic goes
    // through it): station s is modem s with modem groups; without them every station carries a flow.
    if let Some(m) = mac.as_ref().filter(|_| !modems.is_empty()) {
        let have: std::collections::BTreeSet<u32> = station_flows.iter().map(|f| f.0).collect();
        for s in 0..m.stations.len() as u32 {
            if !have.contains(&s) && m.bonded[s as usize] <= 1 {
                let spec = us_spec(s);
                let limit = station_limit(s).unwrap_or_else(|| spec.limit());
                station_flows.push((s, station_flow(spec, limit)));
            }
        }
    }
    t.set_channels(mac, seed);
    for (station, (flow, limit)) in station_flows {
        let (c, local) = t.station_at[station as usize];
        t.channels[c as usize].attach_flow(local, flow, limit, seed);
    }
    t
}

/// The group modem `m` belongs to (modems are numbered in group order), if any.
fn group_of(modems: &[ModemGroup], m: u32) -> Option<&ModemGroup> {
    let mut first = 0u64;
    for g in modems {
        if (m as u64) < first + g.count as u64 {
            return Some(g);
        }
        first += g.count as u64;
    }
    None
}

/// Elloumi et al.'s ATM-HFC network (Fig. 2) in engine units.
#[derive(Clone, Debug)]
pub struct AtmHfc {
    pub downstream_bps: u64,
    pub upstream_bps: u64,
    pub source_bps: u64,
    pub bottleneck_bps: u64,
    pub bottleneck_delay: Nanos,
    /// (from, rate): the SW1 <-> SW2 rate from `from` on (Fig. 23).
    pub bottleneck_schedule: Vec<(SimTime, u64)>,
    pub headend_bps: u64,
    pub epd_threshold_cells: Option<u64>,
    pub switch_limit: QueueLimit,
    /// The TCP source's interface queue (Sec. 4: 50 IP packets).
    pub driver_limit: QueueLimit,
    /// Each host's packet processing time (Table 2: 100 us).
    pub processing: Nanos,
    pub downstream_loss: f64,
    pub upstream_loss: f64,
}

/// Elloumi et al. Sec. 4, Fig. 2: a TCP source in an ATM network sends to a station on an HFC
/// network.
///
/// ```text
/// source -[proc]-[driver, 155 Mb/s]-> SW1 -[EPD, 6 Mb/s, 1.25 ms]-> SW2 -[EPD, headend link]->
///   headend -[30 Mb/s downstream, shared]-> station (its distance x 5 us/km)
/// station -[proc]-> upstream MAC (or a FIFO channel) -> headend -[EPD, headend link]-> SW2
///   -[EPD, 6 Mb/s, 1.25 ms]-> SW1 -[EPD, 155 Mb/s]-> source
/// ```
/// Every link counts ATM cells (AAL5, net/atm.rs); each switch output queue applies early packet
/// discard (net/epd.rs). Choices where the paper is silent: the headend link's rate is a
/// parameter (155 Mb/s by default) with no delay; the rate schedule applies to both directions of
/// the SW1-SW2 link; each host (the source, and the PC behind each modem) processes its outgoing
/// packets in FIFO order, `processing` each (Table 2's "packet processing time", and Sec. 5.2:
/// "the time to process a TCP packet and send its corresponding ACK is constant"). The upstream
/// channel's media loss strikes on the headend's link onward, as in `hfc` with a MAC.
pub fn atm_hfc(p: &AtmHfc, flows: &[Flow], seed: u64, mac: Option<MacSpec>) -> Topology {
    let mut b = AtmBuilder { t: Topology::default(), p, seed, streams: 0 };
    // The source side, shared by every flow.
    let server_proc = b.host();
    let source = b.atm(Role::Access, p.source_bps, 0, p.driver_limit);
    let sw1_out = b.switch(Role::Bottleneck, p.bottleneck_bps, p.bottleneck_delay);
    let sw2_out = b.switch(Role::Access, p.headend_bps, 0);
    let down = b.t.add_link(
        Link::new(
            Role::DownstreamChannel,
            p.downstream_bps,
            0,
            QueueLimit::Unbounded,
            true,
            p.downstream_loss,
            Stream::new(seed, component::link_loss(DOWNSTREAM_LINK)),
        )
        .atm(),
    );
    // The way back: the headend's link to SW2 (with the upstream's media loss; without a MAC,
    // the FIFO upstream channel itself), SW2 -> SW1, SW1 -> source.
    let mut up = Link::new(
        Role::UpstreamChannel,
        if mac.is_some() { p.headend_bps } else { p.upstream_bps },
        0,
        QueueLimit::Unbounded,
        true,
        p.upstream_loss,
        Stream::new(seed, component::link_loss(UPSTREAM_LINK)),
    )
    .atm();
    if mac.is_some() {
        up = switch_queue(p, up);
    }
    let up_channel = b.t.add_link(up);
    let sw2_back = b.switch(Role::Access, p.bottleneck_bps, p.bottleneck_delay);
    let sw1_back = b.switch(Role::Access, p.source_bps, 0);
    if !p.bottleneck_schedule.is_empty() {
        for id in [sw1_out, sw2_back] {
            b.t.links[id as usize].set_schedule(p.bottleneck_schedule.clone());
        }
    }
    for (id, name) in [
        (server_proc, "source_host"),
        (source, "source_driver"),
        (sw1_out, "sw1_to_sw2"),
        (sw2_out, "sw2_to_headend"),
        (down, "headend_downstream"),
        (up_channel, if mac.is_some() { "headend_to_sw2" } else { "upstream_channel" }),
        (sw2_back, "sw2_to_sw1"),
        (sw1_back, "sw1_to_source"),
    ] {
        b.t.name(id, name);
    }
    let from_source = [server_proc, source, sw1_out, sw2_out, down].map(Element::Link).to_vec();
    // Per modem: its host, its distance downstream, its way up.
    let mut routes: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    for f in flows {
        let (to_station, to_source) = match routes.get(&f.modem) {
            Some(&r) => r,
            None => {
                let (station, distance) = MacSpec::station_of(mac.as_ref(), f.modem);
                let drop = b.plain(Role::Access, 0, distance);
                b.t.name(drop, format!("to_modem{}", f.modem));
                let mut down_route = from_source.clone();
                down_route.push(Element::Link(drop));
                let proc = b.host();
                b.t.name(proc, format!("host_modem{}", f.modem));
                let mut up_route = vec![Element::Link(proc)];
                if let Some(s) = station {
                    up_route.push(Element::Upstream(s));
                }
                up_route.extend([Element::Link(up_channel), Element::Link(sw2_back), Element::Link(sw1_back)]);
                let r = (b.t.add_route(down_route), b.t.add_route(up_route));
                routes.insert(f.modem, r);
                r
            }
        };
        // An upload runs the other way round: the station's host sends, the source's host answers.
        b.t.flows.push(match f.direction {
            Direction::Down => FlowRoutes { fwd: to_station, rev: to_source },
            Direction::Up => FlowRoutes { fwd: to_source, rev: to_station },
        });
    }
    let mut t = b.t;
    t.set_channels(mac, seed);
    t
}

/// Builds the links of `atm_hfc`, each with a stream of its own.
struct AtmBuilder<'a> {
    t: Topology,
    p: &'a AtmHfc,
    seed: u64,
    streams: u64,
}

impl AtmBuilder<'_> {
    fn stream(&mut self) -> Stream {
        self.streams += 1;
        Stream::new(self.seed, component::atm_link(self.streams))
    }

    /// A lossless link that does not count cells (a host, a station's distance).
    fn plain(&mut self, role: Role, rate: u64, delay: Nanos) -> u32 {
        let s = self.stream();
        self.t.add_link(Link::new(role, rate, delay, QueueLimit::Unbounded, true, 0.0, s))
    }

    /// A host's processing of its outgoing packets: a FIFO server of constant service time.
    fn host(&mut self) -> u32 {
        let id = self.plain(Role::Access, 0, 0);
        self.t.links[id as usize].per_packet = self.p.processing;
        id
    }

    /// A lossless ATM link.
    fn atm(&mut self, role: Role, rate: u64, delay: Nanos, limit: QueueLimit) -> u32 {
        let s = self.stream();
        self.t.add_link(Link::new(role, rate, delay, limit, true, 0.0, s).atm())
    }

    /// A switch output port: an ATM link with the switch's queue.
    fn switch(&mut self, role: Role, rate: u64, delay: Nanos) -> u32 {
        let s = self.stream();
        let link = Link::new(role, rate, delay, QueueLimit::Unbounded, true, 0.0, s).atm();
        self.t.add_link(switch_queue(self.p, link))
    }
}

/// A switch output queue: the switch buffer in cells, and early packet discard.
fn switch_queue(p: &AtmHfc, mut link: Link) -> Link {
    link.queue.limit = p.switch_limit;
    match p.epd_threshold_cells {
        Some(threshold) => link.with_epd(threshold),
        None => link,
    }
}

/// Lakshman & Madhow Sec. II: every connection's data crosses one FIFO bottleneck whose buffer
/// counts B waiting packets, not the one in service (eq. 1, W_pipe = mu*T + B); ACKs return
/// immediately (an empty route). With an AQM the buffer is a service queue counting the same B
/// places; its random loss after service, if any, is then an infinitely fast link carrying tau
/// and the loss on the link's own stream (the queue cannot lose a packet it has sent).
pub fn bottleneck(p: &Bottleneck, flows: usize, seed: u64) -> Topology {
    let mut t = Topology::default();
    let loss_stream = Stream::new(seed, component::link_loss(DOWNSTREAM_LINK));
    let route = match p.aqm {
        AqmKind::Droptail => {
            let link = t.add_link(
                Link::new(Role::Bottleneck, p.rate_bps, p.delay, p.limit, false, p.loss, loss_stream)
                    .named("bottleneck"),
            );
            vec![Element::Link(link)]
        }
        kind => {
            let lossy = p.loss > 0.0;
            let q = t.add_queue(ServiceQueue::new(
                "bottleneck".into(),
                Role::Bottleneck,
                p.limit,
                None,
                Framing::NONE,
                p.rate_bps,
                Framing::NONE,
                if lossy { 0 } else { p.delay },
                aqm(kind, &p.aqm_params, p.largest, None, 0),
                service_queue_stream(seed, 0),
            ));
            let mut route = vec![Element::Queue(q)];
            if lossy {
                let l = Link::new(Role::Bottleneck, 0, p.delay, QueueLimit::Unbounded, true, p.loss, loss_stream);
                route.push(Element::Link(t.add_link(l)));
            }
            route
        }
    };
    let data = t.add_route(route);
    let acks = t.add_route(Vec::new());
    t.flows = vec![FlowRoutes { fwd: data, rev: acks }; flows];
    t
}

/// Flow `i`'s own access path, when it has one (Lakshman & Madhow Sec. II: connection i has its
/// own tau_i): an infinitely fast link with the flow's extra propagation delay and the sender's
/// random processing time, ahead of the shared links of its forward route. Its stream is keyed
/// by the flow, so adding flows never shifts another's draws.
pub fn access(t: &mut Topology, i: usize, f: &Flow, seed: u64) {
    if f.extra_delay_s <= 0.0 && f.send_jitter_s <= 0.0 && f.reorder_jitter_s <= 0.0 {
        return;
    }
    let mut link = Link::new(
        Role::Access,
        0,
        secs_to_nanos(f.extra_delay_s),
        QueueLimit::Unbounded,
        true,
        0.0,
        Stream::new(seed, component::flow_jitter(i as u64)),
    );
    link.jitter = secs_to_nanos(f.send_jitter_s);
    let reorder = secs_to_nanos(f.reorder_jitter_s);
    if reorder > 0 {
        link.reorder = Some((reorder, Stream::new(seed, component::flow_reorder(i as u64))));
    }
    let id = t.add_link(link.named(format!("access_flow{i}")));
    let mut route = vec![Element::Link(id)];
    route.extend_from_slice(&t.routes[t.flows[i].fwd as usize]);
    t.flows[i].fwd = t.add_route(route);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::servicequeue::{QueueDrop, QueueOut};

    fn flow(modem: u32, direction: Direction) -> Flow {
        Flow { modem, direction, ..Flow::download(1000) }
    }

    fn hfc_params() -> Hfc {
        Hfc {
            downstream_bps: 25_000_000,
            upstream_bps: 3_000_000,
            channel_delay: 10_000_000,
            downstream_loss: 0.0,
            upstream_loss: 0.0,
            cm_lan_bps: 10_000_000,
            cm_limit: QueueLimit::Unbounded,
            headend_limit: QueueLimit::Unbounded,
            cm_aqm: AqmKind::Droptail,
            aqm: AqmParams::rfc(),
            largest: 1500,
        }
    }

    #[test]
    fn hfc_builds_one_cm_lan_per_modem_in_use() {
        // Modem numbers beyond 2^16 (u16 ids used to wrap there) and far apart cost two links.
        let flows = [flow(70_000, Direction::Down), flow(4_464, Direction::Down), flow(70_000, Direction::Up)];
        let t = hfc(&hfc_params(), &flows, 1, None);
        assert_eq!(t.links.len(), 4, "two channels and two CM-LAN links");
        assert_eq!(t.routes.len(), 3, "upstream and one downstream route per modem");
        let [a, b, c] = [t.flows[0], t.flows[1], t.flows[2]];
        assert_ne!(a.fwd, b.fwd, "different modems, different CM buffers");
        assert_eq!((c.fwd, c.rev), (a.rev, a.fwd), "an upload reverses the download's routes");
        assert_eq!(t.routes[a.rev as usize], vec![Element::Link(1)]);
        assert!(t.links[2..].iter().all(|l| l.role == Role::CmLan));
    }

    #[test]
    fn cm_lan_streams_keep_their_historic_ids() {
        // Modem m's CM-LAN link draws from link_loss(2 + m) wherever it sits in `links`.
        let mut l = hfc(&hfc_params(), &[flow(7, Direction::Down)], 42, None).links.pop().unwrap();
        let mut want = Stream::new(42, component::link_loss(9));
        assert_eq!(l.loss_rng.below(1 << 40), want.below(1 << 40));
    }

    #[test]
    fn an_aqm_puts_a_service_queue_where_the_cm_buffer_was() {
        let flows = [flow(7, Direction::Down), flow(7, Direction::Up)];
        // Drop-tail: the CM buffer is the CM-LAN link, as before.
        let plain = hfc(&hfc_params(), &flows, 1, None);
        assert_eq!(plain.routes[plain.flows[0].fwd as usize], vec![Element::Link(0), Element::Link(2)]);
        assert!(plain.queues.is_empty());
        // CoDel: a service queue of the same limit in its place; no CM-LAN link is built.
        let p = Hfc { cm_aqm: AqmKind::Codel, cm_limit: QueueLimit::Packets(2), ..hfc_params() };
        let t = hfc(&p, &flows, 1, None);
        assert_eq!(t.links.len(), 2, "the two channels only");
        assert_eq!(t.routes[t.flows[0].fwd as usize], vec![Element::Link(0), Element::Queue(0)]);
        assert_eq!(t.flows[1].rev, t.flows[0].fwd, "the upload's ACKs cross the same buffer");
        let q = &t.queues[0];
        assert_eq!((q.name.as_str(), q.role), ("cm_lan_modem7", Role::CmLan));
        // Cohen Sec. V.B: the limit counts the packet on the LAN. 1500 B at 10 Mb/s take 1.2 ms:
        // while the first is sent, one more fits and a third does not.
        let mut q = t.queues.into_iter().next().unwrap();
        assert!(q.enqueue(SimTime(0), 1, 1500).is_ok());
        let mut out = Vec::new();
        q.on_timer(SimTime(0), &mut out);
        assert_eq!(out, vec![QueueOut::Sent { tag: 1, at: SimTime(1_200_000), waited: 0, tx: 1_200_000 }]);
        assert!(q.enqueue(SimTime(1), 2, 1500).is_ok());
        assert_eq!(q.enqueue(SimTime(2), 3, 1500), Err(QueueDrop::Full));
    }

    #[test]
    fn an_aqm_at_the_bottleneck_keeps_tau_and_the_loss_on_its_stream() {
        let p = Bottleneck {
            rate_bps: 8_000_000,
            delay: 1_000_000_000,
            limit: QueueLimit::Packets(10),
            loss: 0.0,
            aqm: AqmKind::Pie,
            aqm_params: AqmParams::rfc(),
            largest: 1000,
        };
        let t = bottleneck(&p, 2, 1);
        assert_eq!(t.routes[t.flows[1].fwd as usize], vec![Element::Queue(0)]);
        assert!(t.links.is_empty());
        assert_eq!((t.queues[0].name.as_str(), t.queues[0].role), ("bottleneck", Role::Bottleneck));
        // Random loss after service: an infinitely fast link with tau and the loss, on the stream
        // the drop-tail bottleneck draws from.
        let t = bottleneck(&Bottleneck { loss: 0.25, ..p }, 1, 42);
        assert_eq!(t.routes[t.flows[0].fwd as usize], vec![Element::Queue(0), Element::Link(0)]);
        let mut l = t.links.into_iter().next().unwrap();
        assert_eq!((l.rate_bps, l.delay, l.loss, l.role), (0, 1_000_000_000, 0.25, Role::Bottleneck));
        let mut want = Stream::new(42, component::link_loss(DOWNSTREAM_LINK));
        assert_eq!(l.loss_rng.below(1 << 40), want.below(1 << 40));
        // Sec. II: B = 0 waiting places still serves a packet that finds the link idle.
        let mut q = bottleneck(&Bottleneck { limit: QueueLimit::Packets(0), ..p }, 1, 1).queues.pop().unwrap();
        assert!(q.enqueue(SimTime(0), 1, 1000).is_ok());
        assert_eq!(q.enqueue(SimTime(0), 2, 1000), Err(QueueDrop::Full));
    }

    #[test]
    fn access_link_goes_ahead_of_the_shared_route() {
        let p = Bottleneck {
            rate_bps: 8_000_000,
            delay: 0,
            limit: QueueLimit::Packets(10),
            loss: 0.0,
            aqm: AqmKind::Droptail,
            aqm_params: AqmParams::rfc(),
            largest: 1000,
        };
        let mut t = bottleneck(&p, 2, 1);
        let f = Flow { extra_delay_s: 0.1, ..Flow::download(1000) };
        access(&mut t, 1, &f, 1);
        assert_eq!(t.flows[0], FlowRoutes { fwd: 0, rev: 1 });
        assert_eq!(t.routes[t.flows[1].fwd as usize], vec![Element::Link(1), Element::Link(0)]);
        assert_eq!(t.links[1].delay, 100_000_000);
        assert!(t.routes[t.flows[1].rev as usize].is_empty());
    }
}
