//! The state the roles of a shared upstream share: what the MAC hands back to the network, its
//! counters, a station's FIFO and requests, and an allocation message in flight. `upstream.rs`
//! (the channel), `station.rs`, `headend.rs` and each MAC's rules (`rules.rs`) work on these.

use super::backoff::Backoff;
use super::grants::Grant;
use super::serviceflow::{Delivery, ServiceFlow};
use super::spacing::Meter;
use super::tree::CsGroup;
use super::StationConfig;
use crate::net::wait::WaitStats;
use crate::rng::Stream;
use crate::time::{Nanos, SimTime};
use serde::Serialize;
use std::collections::VecDeque;

/// What the MAC hands back to the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacOut {
    /// Packet `tag` has reached the headend whole at `at` (the end of its last minislot), its last
    /// burst having started at `start`; it arrived at `enqueued` and its service flow's rate cap let
    /// the station request it from `ready` (= `enqueued` without a cap); `ce`: the flow's AQM marked
    /// it CE as it left.
    Delivered {
        tag: u64,
        at: SimTime,
        start: SimTime,
        enqueued: SimTime,
        ready: SimTime,
        requested: SimTime,
        granted: SimTime,
        ce: bool,
    },
    /// Packet `tag` was discarded: its request failed `max_retries` times.
    Dropped { tag: u64 },
    /// Packet `tag` was dropped by its service flow's AQM as it left in a burst (CoDel).
    AqmDropped { tag: u64 },
    /// With a capture on (`capture_on`): bursts were recorded (`take_bursts`). It comes before the
    /// packets they deliver, so that their tags are still the packets'.
    Captured,
}

/// Tag of a background packet: the MAC counts it and discards it at the headend.
pub const BACKGROUND: u64 = u64::MAX;

/// Channel-wide counters (the `engine.mac` object).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct MacMetrics {
    /// Requests sent: contention transmissions (retries included) and piggybacked ones.
    pub requests: u64,
    /// Contention slots in which two or more requests collided.
    pub collisions: u64,
    pub contention_slots: u64,
    /// Data units granted: 802.14 data slots, DOCSIS minislots.
    pub data_slots: u64,
    /// Contention slots nobody used.
    pub idle_slots: u64,
    pub piggybacked_requests: u64,
    pub grants: u64,
    /// Requests given up after `max_retries` (their packets are dropped).
    pub dropped_requests: u64,
    /// Frames (802.14) or MAPs (DOCSIS) sent.
    pub frames: u64,
}

impl MacMetrics {
    /// Add another channel's counters.
    pub fn add(&mut self, o: &MacMetrics) {
        let MacMetrics {
            requests,
            collisions,
            contention_slots,
            data_slots,
            idle_slots,
            piggybacked_requests,
            grants,
            dropped_requests,
            frames,
        } = o;
        self.requests += requests;
        self.collisions += collisions;
        self.contention_slots += contention_slots;
        self.data_slots += data_slots;
        self.idle_slots += idle_slots;
        self.piggybacked_requests += piggybacked_requests;
        self.grants += grants;
        self.dropped_requests += dropped_requests;
        self.frames += frames;
    }
}

/// One row per station (`Result.stations`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StationMetrics {
    pub station: u32,
    pub group: u32,
    pub distance_km: f64,
    /// Packets (not background) and their IP bytes delivered to the headend.
    pub packets: u64,
    pub bytes: u64,
    pub background_packets: u64,
    pub requests: u64,
    /// Contention transmissions of this station that collided.
    pub collisions: u64,
    pub piggybacked_requests: u64,
    pub grants: u64,
    pub dropped_packets: u64,
    /// Queue overflows at the station's MAC FIFO (its service flow's buffer on the docsis kind).
    pub queue_drops: u64,
    /// Packets its service flow's AQM dropped (docsis kind); left out while 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub aqm_drops: u64,
    /// Enqueue at the station to arrival at the headend, every delivered packet.
    pub access_delay_mean_s: Option<f64>,
    pub access_delay_max_s: Option<f64>,
    /// From the request's first transmission to the grant's arrival at the station.
    pub request_grant_mean_s: Option<f64>,
    /// A bonded modem's: the CMTS's resequencing of its segments (bonding.rs); absent otherwise.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub resequencing: Option<super::bonding::ResequenceMetrics>,
}

impl StationMetrics {
    /// Add a bonded modem's other sub-station's row (bonding.rs): counters summed; the mean delays
    /// weighted by packets (background ones included), the maxima the larger.
    pub fn merge(&mut self, o: &StationMetrics) {
        let (n, m) = ((self.packets + self.background_packets) as f64, (o.packets + o.background_packets) as f64);
        let mean = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some((a * n + b * m) / (n + m)),
            (a, b) => a.or(b),
        };
        self.access_delay_mean_s = mean(self.access_delay_mean_s, o.access_delay_mean_s);
        self.request_grant_mean_s = mean(self.request_grant_mean_s, o.request_grant_mean_s);
        self.access_delay_max_s = match (self.access_delay_max_s, o.access_delay_max_s) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.background_packets += o.background_packets;
        self.requests += o.requests;
        self.collisions += o.collisions;
        self.piggybacked_requests += o.piggybacked_requests;
        self.grants += o.grants;
        self.dropped_packets += o.dropped_packets;
        self.queue_drops += o.queue_drops;
        self.aqm_drops += o.aqm_drops;
    }
}

/// A MAC event for the trace (docs/design.md, habit 14): `request` (at the slot, headend time),
/// `collision` (when the headend learns it), `feedback` (when the station learns its outcome),
/// `grant` (when the message carrying it leaves the headend), `burst` (when its last bit
/// arrives), `mac_drop`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacEvent {
    pub time: SimTime,
    pub station: u32,
    pub event: &'static str,
    pub minislot: u64,
    pub units: u32,
}

/// One upstream transmission as the headend receives it, for a capture (capture/'s
/// `docsis-upstream` interface; collected only after `Upstream::capture_on`): a request in a
/// contention slot (`packets` empty), or a data burst in a grant with the packets it completes (`P` =
/// the MAC's tags here; the fabric turns them into the packets), with the request piggybacked on it,
/// if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpBurst<P = u64> {
    /// When its last bit reaches the headend (headend time).
    pub at: SimTime,
    /// The plant's number of the station.
    pub station: u32,
    /// The minislots requested: in contention, or piggybacked on the data.
    pub request: Option<u32>,
    /// The packets the burst delivers, in order (background packets left out).
    pub packets: Vec<P>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Item {
    pub(super) tag: u64,
    pub(super) enqueued: SimTime,
    /// When the station may request it: its arrival, or later when its service flow's rate cap
    /// holds it back (serviceflow.rs). Nondecreasing along the FIFO.
    pub(super) ready: SimTime,
    /// ECN-capable: an AQM marks it rather than drop it.
    pub(super) ect: bool,
    pub(super) ip_bytes: u32,
    /// 802.14: cells still to send; DOCSIS: frame bytes.
    pub(super) left: u32,
    pub(super) requested: SimTime,
    pub(super) granted: SimTime,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Contend {
    Idle,
    /// 802.14: waiting for the contention group of this RQ number (0 = newcomers).
    Waiting(u32),
    /// DOCSIS: deferring request opportunities.
    Deferring,
    /// Sent in a contention slot; waiting for the outcome a later message carries.
    Sent,
}

/// A DOCSIS request the station has made and not yet fully been granted.
#[derive(Clone, Copy, Debug)]
pub(super) struct DocsisReq {
    pub(super) id: u64,
    pub(super) packets: u32,
    pub(super) frame_bytes: u32,
    pub(super) minislots: u32,
    pub(super) granted: u32,
}

/// The request a station is trying to get through contention.
#[derive(Clone, Copy, Debug)]
pub(super) struct Contending {
    pub(super) id: u64,
    pub(super) units: u32,
    pub(super) tries: u32,
    /// ACK spacing asked for (spacing.rs); 0 = none.
    pub(super) spacing: Nanos,
    /// The items it marked requested at its making (`Station::marked`).
    pub(super) marked: (u64, u64),
}

pub(super) struct Station {
    pub(super) cfg: StationConfig,
    /// The modem's upstream service flow, whose queue this station's is (docsis kind;
    /// serviceflow.rs); None on the hfc and atm_hfc kinds.
    pub(super) sf: Option<Box<ServiceFlow>>,
    /// How long its packets waited (arrival to the start of the burst that completes them) and
    /// what arrivals found in its queue.
    pub(super) waits: WaitStats,
    pub(super) queue: VecDeque<Item>,
    pub(super) queued_bytes: u64,
    /// Items at the front of `queue` the station has seen (enqueued by the time it read a message).
    pub(super) seen: usize,
    /// Units of seen items not yet sent, and how many of them requests cover (a prefix).
    pub(super) visible: u64,
    pub(super) covered: u64,
    /// DOCSIS: the items `covered` counts (a prefix of `queue`), so a request needs no walk from
    /// the front to find the first uncovered packet.
    pub(super) covered_items: usize,
    /// Items ever taken from the front of `queue`: `queue[i]` is the station's item number
    /// `popped + i` (its items numbered in FIFO order from 0).
    pub(super) popped: u64,
    /// The items (by number, [from, to)) the newest request marked as requested at its making; its first
    /// transmission in contention moves their request time to that transmission.
    pub(super) marked: (u64, u64),
    /// 802.14: data slots requested and not yet granted.
    pub(super) outstanding: u64,
    /// DOCSIS: requests not yet fully granted, oldest first.
    pub(super) docsis_reqs: VecDeque<DocsisReq>,
    pub(super) contend: Contend,
    pub(super) contending: Option<Contending>,
    pub(super) backoff: Backoff,
    /// Elloumi et al.'s ACK-spacing measurement, when the station runs it.
    pub(super) meter: Option<Meter>,
    pub(super) next_id: u64,
    pub(super) rng: Stream,
    pub(super) bg_rng: Stream,
    pub(super) active: bool,
    /// When it last joined the active list (Upstream::activate): its place in the list's order.
    pub(super) joined: u64,
    pub(super) stats: StationMetrics,
    pub(super) delay_sum: u128,
    pub(super) delay_n: u64,
    pub(super) rg_sum: u128,
    pub(super) rg_n: u64,
}

impl Station {
    /// A station of `cfg`, the plant's station `id`, drawing its contention choices from `rng` and
    /// its background arrivals from `bg_rng`.
    pub(super) fn new(cfg: StationConfig, id: u32, rng: Stream, bg_rng: Stream) -> Station {
        Station {
            stats: StationMetrics { station: id, group: cfg.group, distance_km: cfg.distance_km, ..Default::default() },
            sf: None,
            waits: WaitStats::default(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            seen: 0,
            visible: 0,
            covered: 0,
            covered_items: 0,
            popped: 0,
            marked: (0, 0),
            outstanding: 0,
            docsis_reqs: VecDeque::new(),
            contend: Contend::Idle,
            contending: None,
            backoff: Backoff { window: 0, defer: 0, tries: 0 },
            meter: (cfg.ack_spacing != super::AckSpacing::Off).then(|| Meter::new(cfg.ack_spacing)),
            next_id: 0,
            rng,
            bg_rng,
            active: false,
            joined: 0,
            delay_sum: 0,
            delay_n: 0,
            rg_sum: 0,
            rg_n: 0,
            cfg,
        }
    }

    /// See the packets ready by time `r` (enqueued, and let through by the flow's rate cap).
    #[inline]
    pub(super) fn see(&mut self, r: SimTime) {
        while self.seen < self.queue.len() && self.queue[self.seen].ready <= r {
            self.visible += self.queue[self.seen].left as u64;
            self.seen += 1;
        }
    }

    /// `item` has reached the headend whole at `at`, its last burst having started at `start`
    /// (`item.granted`: when the station received that grant and took it from its queue).
    #[inline]
    pub(super) fn delivered(&mut self, item: Item, start: SimTime, at: SimTime, out: &mut Vec<MacOut>) {
        self.queued_bytes -= item.ip_bytes as u64;
        let fate = match self.sf.as_mut() {
            None => Delivery::Deliver,
            Some(sf) => sf.depart(item.granted, item.enqueued, item.ip_bytes, item.ect, self.queued_bytes),
        };
        self.waits.served(start.0.saturating_sub(item.enqueued.0));
        if fate == Delivery::Drop {
            self.stats.aqm_drops += 1;
            if item.tag != BACKGROUND {
                out.push(MacOut::AqmDropped { tag: item.tag });
            }
            return;
        }
        // The access delay is the MAC's: from when the station may request the packet (its flow's
        // rate cap let it through) to its arrival at the headend.
        let delay = at - item.ready;
        self.delay_sum += delay as u128;
        self.delay_n += 1;
        let max = delay as f64 / 1e9;
        if self.stats.access_delay_max_s.is_none_or(|m| m < max) {
            self.stats.access_delay_max_s = Some(max);
        }
        if item.granted >= item.requested {
            self.rg_sum += (item.granted - item.requested) as u128;
            self.rg_n += 1;
        }
        if item.tag == BACKGROUND {
            self.stats.background_packets += 1;
        } else {
            self.stats.packets += 1;
            self.stats.bytes += item.ip_bytes as u64;
            out.push(MacOut::Delivered {
                tag: item.tag,
                at,
                start,
                enqueued: item.enqueued,
                ready: item.ready,
                requested: item.requested,
                granted: item.granted,
                ce: fate == Delivery::Mark,
            });
        }
    }
}

/// One allocation message (an 802.14 frame's CS allocation, grants and feedback, or a DOCSIS MAP),
/// from the moment it is decided until its contention slots are resolved.
#[derive(Default)]
pub(super) struct Allocation {
    pub(super) index: u64,
    /// When every station has received it and acted on it (`Upstream::acted_at`), kept from its
    /// decision.
    pub(super) acted_at: SimTime,
    /// Global number of its first minislot.
    pub(super) first_minislot: u64,
    /// A DOCSIS maintenance region's minislots at the start of the message (0: none).
    pub(super) maint: u32,
    /// Contention slots, after the maintenance region.
    pub(super) contention: u32,
    pub(super) groups: Vec<CsGroup>,
    pub(super) grants: Vec<(u32, Grant)>, // (offset in the frame, grant)
    /// Outcomes of earlier requests this message carries: (station, None = success, Some(rq) = collided).
    pub(super) outcomes: Vec<(u32, Option<u32>)>,
    /// Contention transmissions: (offset, station).
    pub(super) tx: Vec<(u32, u32)>,
    pub(super) acted: bool,
    pub(super) resolved: bool,
}
