//! The shared upstream as one pure state machine: stations (cable modems) and the headend
//! (CMTS), handed the time like the TCP endpoints (DESIGN.md "network of parts"; STYLE item 1).
//!
//! Timing, all in the headend's time (ranging aligns every burst on its minislots):
//! - Allocation message `m` (an 802.14 frame's CS allocation / grants / feedback, or a DOCSIS MAP)
//!   describes minislots `[first + m*M, first + (m+1)*M)`, starting at `T_m`.
//! - The headend decides it at `B_m = T_m - lead`, from what it has heard by then; it reaches a
//!   station `d` away at `B_m + headend_delay + d` (the issue's "downstream propagation delay plus
//!   the headend's processing delay"). `lead = headend_delay + 2 * max_one_way`, so the farthest station
//!   can still send in the first minislot (DOCSIS RFI: the MAP must reach every modem in time; the
//!   CMTS's "MAP advance").
//! - A station acts on a message when it receives it, with the packets it holds then (chosen; as
//!   a DOCSIS modem processes each MAP on arrival). Its request or data leaves `d` before the
//!   minislot and arrives in it.
//! - The headend learns the outcome of a frame's contention slots when the last of them has
//!   arrived; the first message decided after that carries the outcome (802.14 feedback: success
//!   or an RQ number; DOCSIS: a grant or pending grant acknowledges a request, and a modem whose
//!   request is older than the MAP's acknowledgement time but finds neither infers a collision).
//!   For DOCSIS the two coincide: every request the headend accepts is granted or pending in the
//!   MAP that acknowledges it, so the outcome is recorded directly.
//! - Length: every message is `frame_minislots` long, or, with dynamic DOCSIS MAPs
//!   (`min_frame_minislots` below it), as long as its grants plus the minimum contention slots,
//!   within [`min_frame_minislots`, `frame_minislots`] (chosen: MULPI leaves the MAP's length to
//!   the CMTS, which may describe as much or as little of the upstream in one MAP as it likes;
//!   CMTSs that vary it shorten the MAP when little is granted, so requests get more frequent
//!   opportunities and a quicker reply). A message's start is then known once the one before it
//!   has been decided.
//! - Layout of every message: contention slots first, then the data grants in scheduler order
//!   (Elloumi et al. Fig. 1, and Sec. 5.2's 1.19 ms ACK spacing: 2 data slots + 20 CS between
//!   ACKs in successive frames).
//!
//! A station may have one request in contention at a time, and contends only when none of its
//! requests is waiting at the headend; more data queued meanwhile is asked for in a piggybacked
//! request with its next granted data when piggybacking is on (Elloumi et al. Sec. 6.1), or in
//! contention once its grants are done (DOCSIS RFI: at most one outstanding contention request).
//!
//! Units: 802.14 requests and grants count data slots, each carrying one ATM cell of AAL5
//! (Elloumi et al. Sec. 2, Table 1); DOCSIS requests and grants count minislots, a request covering
//! one packet, or several concatenated up to the maximum burst.

use super::background;
use super::backoff::Backoff;
use super::channel::{aal5_cells, burst_minislots, raw_cells, SlotClock};
use super::grants::{Grant, GrantQueue, Pending};
use super::spacing::{Meter, SpacedGrants};
use super::tree::{CsGroup, RqStack};
use super::{ContentionAlloc, MacConfig, MacKind, StationConfig};
use crate::net::Occupancy;
use crate::rng::{component, Stream};
use crate::time::{Nanos, SimTime};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// What the MAC hands back to the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacOut {
    /// Packet `tag` has reached the headend whole at `at` (the end of its last minislot).
    Delivered { tag: u64, at: SimTime, enqueued: SimTime, requested: SimTime, granted: SimTime },
    /// Packet `tag` was discarded: its request failed `max_retries` times.
    Dropped { tag: u64 },
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
    /// Queue overflows at the station's MAC FIFO.
    pub queue_drops: u64,
    /// Enqueue at the station to arrival at the headend, every delivered packet.
    pub access_delay_mean_s: Option<f64>,
    pub access_delay_max_s: Option<f64>,
    /// From the request's first transmission to the grant's arrival at the station.
    pub request_grant_mean_s: Option<f64>,
}

/// A MAC event for the trace (STYLE item 14): `request` (at the slot, headend time),
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

#[derive(Clone, Copy, Debug)]
struct Item {
    tag: u64,
    enqueued: SimTime,
    ip_bytes: u32,
    /// 802.14: cells still to send; DOCSIS: frame bytes.
    left: u32,
    requested: SimTime,
    granted: SimTime,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contend {
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
struct DocsisReq {
    id: u64,
    packets: u32,
    frame_bytes: u32,
    minislots: u32,
    granted: u32,
}

/// The request a station is trying to get through contention.
#[derive(Clone, Copy, Debug)]
struct Contending {
    id: u64,
    units: u32,
    tries: u32,
    /// ACK spacing asked for (spacing.rs); 0 = none.
    spacing: Nanos,
}

struct Station {
    cfg: StationConfig,
    queue: VecDeque<Item>,
    queued_bytes: u64,
    /// Items at the front of `queue` the station has seen (enqueued by the time it read a message).
    seen: usize,
    /// Units of seen items not yet sent, and how many of them requests cover (a prefix).
    visible: u64,
    covered: u64,
    /// 802.14: data slots requested and not yet granted.
    outstanding: u64,
    /// DOCSIS: requests not yet fully granted, oldest first.
    docsis_reqs: VecDeque<DocsisReq>,
    contend: Contend,
    contending: Option<Contending>,
    backoff: Backoff,
    /// Elloumi et al.'s ACK-spacing measurement, when the station runs it.
    meter: Option<Meter>,
    next_id: u64,
    rng: Stream,
    bg_rng: Stream,
    active: bool,
    stats: StationMetrics,
    delay_sum: u128,
    delay_n: u64,
    rg_sum: u128,
    rg_n: u64,
}

/// One allocation message (an 802.14 frame's CS allocation, grants and feedback, or a DOCSIS MAP),
/// from the moment it is decided until its contention slots are resolved.
struct Allocation {
    index: u64,
    /// Global number of its first minislot.
    first_minislot: u64,
    contention: u32,
    groups: Vec<CsGroup>,
    grants: Vec<(u32, Grant)>, // (offset in the frame, grant)
    /// Outcomes of earlier requests this message carries: (station, None = success, Some(rq) = collided).
    outcomes: Vec<(u32, Option<u32>)>,
    /// Contention transmissions: (offset, station).
    tx: Vec<(u32, u32)>,
    acted: bool,
    resolved: bool,
}

/// The shared upstream channel with its MAC.
pub struct Upstream {
    cfg: MacConfig,
    clock: SlotClock,
    lead: Nanos,
    /// The farthest station's one-way propagation delay.
    max_one_way: Nanos,
    first_minislot: u64,
    /// First minislot of the next message to decide (dynamic MAPs; fixed frames compute it).
    next_first_minislot: u64,
    stations: Vec<Station>,
    /// Stations that must look at the next message (contending, or with data not yet asked for).
    active: Vec<u32>,
    allocations: VecDeque<Allocation>,
    next_index: u64,
    rq: RqStack,
    grants: GrantQueue,
    /// Constant-rate grants of the stations running ACK spacing (spacing.rs).
    spaced: Vec<SpacedGrants>,
    /// Piggybacked requests on their way to the headend: (arrival, request).
    incoming: VecDeque<Pending>,
    background: BinaryHeap<Reverse<(SimTime, u32)>>,
    metrics: MacMetrics,
    trace: Option<Vec<MacEvent>>,
    scratch: Vec<u32>,
    /// The plant's number of each station of this channel (`channel`).
    ids: Vec<u32>,
}

impl Upstream {
    pub fn new(cfg: MacConfig, stations: Vec<StationConfig>, seed: u64, trace: bool) -> Upstream {
        let ids = (0..stations.len() as u32).collect();
        Upstream::channel(cfg, stations, ids, seed, trace)
    }

    /// One of several upstream channels: its stations are the plant's stations `ids` (in its
    /// order), which name their random streams, their metrics rows and their trace rows, so a
    /// station draws the same numbers whichever channel it is on.
    pub fn channel(cfg: MacConfig, stations: Vec<StationConfig>, ids: Vec<u32>, seed: u64, trace: bool) -> Upstream {
        assert_eq!(ids.len(), stations.len(), "one id per station");
        let clock = SlotClock::new(cfg.minislot_bytes, cfg.rate_bps);
        let max_one_way = stations.iter().map(|s| s.one_way).max().unwrap_or(0);
        let lead = cfg.headend_delay + 2 * max_one_way;
        let first_minislot = clock.first_at_or_after(SimTime(lead));
        let mut background = BinaryHeap::new();
        let sts: Vec<Station> = stations
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let id = ids[i];
                let mut bg_rng = Stream::new(seed, component::mac_background(id as u64));
                if c.background_pps > 0.0 {
                    background.push(Reverse((
                        background::next_arrival(SimTime::ZERO, c.background_pps, &mut bg_rng),
                        i as u32,
                    )));
                }
                Station {
                    stats: StationMetrics {
                        station: id,
                        group: c.group,
                        distance_km: c.distance_km,
                        ..Default::default()
                    },
                    queue: VecDeque::new(),
                    queued_bytes: 0,
                    seen: 0,
                    visible: 0,
                    covered: 0,
                    outstanding: 0,
                    docsis_reqs: VecDeque::new(),
                    contend: Contend::Idle,
                    contending: None,
                    backoff: Backoff { window: 0, defer: 0, tries: 0 },
                    meter: c.ack_spacing.map(Meter::new),
                    next_id: 0,
                    rng: Stream::new(seed, component::mac_station(id as u64)),
                    bg_rng,
                    active: false,
                    delay_sum: 0,
                    delay_n: 0,
                    rg_sum: 0,
                    rg_n: 0,
                    cfg: c,
                }
            })
            .collect();
        let partial = cfg.kind == MacKind::Ieee80214 || cfg.fragmentation;
        let merge = cfg.kind == MacKind::Ieee80214;
        Upstream {
            grants: GrantQueue::new(cfg.scheduler, partial, merge),
            cfg,
            clock,
            lead,
            max_one_way,
            first_minislot,
            next_first_minislot: first_minislot,
            stations: sts,
            active: Vec::new(),
            allocations: VecDeque::new(),
            next_index: 0,
            rq: RqStack::default(),
            spaced: Vec::new(),
            incoming: VecDeque::new(),
            background,
            metrics: MacMetrics::default(),
            trace: trace.then(Vec::new),
            scratch: Vec::new(),
            ids,
        }
    }

    /// First minislot of message `m`. With fixed frames any `m`; with dynamic MAPs the next message
    /// to decide or one still held (its start depends on the lengths of those before it).
    fn first_minislot_of(&self, m: u64) -> u64 {
        if self.cfg.min_frame_minislots >= self.cfg.frame_minislots {
            return self.first_minislot + m * self.cfg.frame_minislots as u64;
        }
        if m == self.next_index {
            return self.next_first_minislot;
        }
        self.allocations.iter().find(|a| a.index == m).expect("a decided message still held").first_minislot
    }

    /// Start of message `m` at the headend (`first_minislot_of`).
    pub fn frame_start(&self, m: u64) -> SimTime {
        self.clock.start(self.first_minislot_of(m))
    }

    /// When message `m` is decided.
    pub fn decided_at(&self, m: u64) -> SimTime {
        SimTime(self.frame_start(m).0 - self.lead)
    }

    /// When station `s` receives message `m`.
    pub fn received_at(&self, m: u64, s: u32) -> SimTime {
        self.decided_at(m) + self.cfg.headend_delay + self.stations[s as usize].cfg.one_way
    }

    /// When every station has received message `m` and acted on it.
    fn acted_at(&self, m: u64) -> SimTime {
        self.decided_at(m) + self.cfg.headend_delay + self.max_one_way
    }

    /// A packet of `ip_bytes` joins station `s`'s MAC FIFO; false if the FIFO is full.
    pub fn enqueue(&mut self, now: SimTime, s: u32, tag: u64, ip_bytes: u32) -> bool {
        let kind = self.cfg.kind;
        let overhead = self.cfg.frame_overhead_bytes;
        let st = &mut self.stations[s as usize];
        let held = Occupancy { packets: st.queue.len() as u64, bytes: st.queued_bytes };
        if !st.cfg.queue.fits(held, ip_bytes) {
            st.stats.queue_drops += 1;
            return false;
        }
        if tag != BACKGROUND {
            if let Some(m) = st.meter.as_mut() {
                m.on_ack(now, !st.queue.is_empty());
            }
        }
        let left = match kind {
            MacKind::Ieee80214 if tag == BACKGROUND => raw_cells(ip_bytes),
            MacKind::Ieee80214 => aal5_cells(ip_bytes),
            MacKind::Docsis => ip_bytes + overhead,
        };
        st.queue.push_back(Item { tag, enqueued: now, ip_bytes, left, requested: now, granted: now });
        st.queued_bytes += ip_bytes as u64;
        if !st.active {
            st.active = true;
            self.active.push(s);
        }
        true
    }

    /// The next instant the MAC needs to be called.
    pub fn next_deadline(&self) -> Option<SimTime> {
        let decide = self.decided_at(self.next_index);
        let act = self.allocations.iter().find(|m| !m.acted).map(|m| self.acted_at(m.index));
        let bg = self.background.peek().map(|Reverse((t, _))| *t);
        [Some(decide), act, bg].into_iter().flatten().min()
    }

    /// Do everything due at `now`.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<MacOut>) {
        // Whatever is due, earliest first; on a tie background arrivals, then decisions, then
        // stations acting (a decision never depends on an action at the same instant).
        loop {
            let bg = self.background.peek().map(|Reverse((t, _))| *t).filter(|t| *t <= now);
            let decide = Some(self.decided_at(self.next_index)).filter(|t| *t <= now);
            let act = self.allocations.iter().position(|m| !m.acted).and_then(|pos| {
                let t = self.acted_at(self.allocations[pos].index);
                (t <= now).then_some((t, pos))
            });
            let first = [bg, decide, act.map(|a| a.0)].into_iter().flatten().min();
            let Some(t) = first else { break };
            if bg == Some(t) {
                let Reverse((t, s)) = self.background.pop().expect("peeked");
                self.enqueue(t, s, BACKGROUND, self.stations[s as usize].cfg.background_bytes);
                let st = &mut self.stations[s as usize];
                let next = background::next_arrival(t, st.cfg.background_pps, &mut st.bg_rng);
                self.background.push(Reverse((next, s)));
            } else if decide == Some(t) {
                self.decide();
            } else if let Some((_, pos)) = act {
                self.act(pos, out);
            }
        }
        while self.allocations.front().is_some_and(|m| m.acted && m.resolved) {
            self.allocations.pop_front();
        }
    }

    pub fn metrics(&self) -> &MacMetrics {
        &self.metrics
    }

    pub fn station_metrics(&self) -> Vec<StationMetrics> {
        self.stations
            .iter()
            .map(|st| {
                let mut m = st.stats.clone();
                if st.delay_n > 0 {
                    m.access_delay_mean_s = Some(st.delay_sum as f64 / st.delay_n as f64 / 1e9);
                }
                if st.rg_n > 0 {
                    m.request_grant_mean_s = Some(st.rg_sum as f64 / st.rg_n as f64 / 1e9);
                }
                m
            })
            .collect()
    }

    /// Packets still held by the stations (for conservation checks).
    pub fn queued_packets(&self) -> u64 {
        self.stations.iter().map(|s| s.queue.iter().filter(|i| i.tag != BACKGROUND).count() as u64).sum()
    }

    /// Record MAC events from now on (`take_trace`).
    pub fn trace_on(&mut self) {
        self.trace.get_or_insert_with(Vec::new);
    }

    pub fn take_trace(&mut self) -> Vec<MacEvent> {
        let mut rows = self.trace.take().unwrap_or_default();
        for r in &mut rows {
            if let Some(&id) = self.ids.get(r.station as usize) {
                r.station = id;
            }
        }
        rows
    }

    fn log(&mut self, time: SimTime, station: u32, event: &'static str, minislot: u64, units: u32) {
        if let Some(t) = self.trace.as_mut() {
            t.push(MacEvent { time, station, event, minislot, units });
        }
    }

    // ---- the headend ----

    /// Decide message `next_index`: resolve the contention slots heard by now, queue the new
    /// requests, split the frame between contention and grants.
    fn decide(&mut self) {
        let index = self.next_index;
        let now = self.decided_at(index);
        let first_minislot = self.first_minislot_of(index);
        self.next_index += 1;
        let frame_minislots = self.cfg.frame_minislots;
        let mut outcomes = Vec::new();
        let mut arrivals: Vec<Pending> = Vec::new();
        // 1. Contention regions whose last slot has arrived.
        for mi in 0..self.allocations.len() {
            let msg = &self.allocations[mi];
            if msg.resolved || !msg.acted {
                continue;
            }
            let end = self.clock.start(msg.first_minislot + msg.contention as u64);
            if end > now {
                continue;
            }
            let mut tx = std::mem::take(&mut self.allocations[mi].tx);
            tx.sort_unstable(); // by offset, then station
            let (first_minislot, contention) = (self.allocations[mi].first_minislot, self.allocations[mi].contention);
            let mut i = 0;
            let mut used = 0;
            while i < tx.len() {
                let offset = tx[i].0;
                let j = i + tx[i..].iter().take_while(|t| t.0 == offset).count();
                used += 1;
                let slot_end = self.clock.start(first_minislot + offset as u64 + 1);
                if j - i == 1 {
                    let s = tx[i].1;
                    let req = self.stations[s as usize].contending.expect("a station that sent has a request");
                    arrivals.push(Pending {
                        station: s,
                        id: req.id,
                        left: req.units,
                        arrived: slot_end,
                        spacing: req.spacing,
                    });
                    outcomes.push((s, None));
                } else {
                    self.metrics.collisions += 1;
                    let rq = match self.cfg.kind {
                        MacKind::Ieee80214 => self.rq.collided(),
                        MacKind::Docsis => 0,
                    };
                    for &(_, s) in &tx[i..j] {
                        outcomes.push((s, Some(rq)));
                        self.stations[s as usize].stats.collisions += 1;
                        self.log(slot_end, s, "collision", first_minislot + offset as u64, 0);
                    }
                }
                i = j;
            }
            self.metrics.idle_slots += (contention - used) as u64;
            self.allocations[mi].resolved = true;
        }
        // 2. Piggybacked requests that have arrived; then everything in order of arrival.
        while self.incoming.front().is_some_and(|p| p.arrived <= now) {
            arrivals.push(self.incoming.pop_front().expect("non-empty"));
        }
        arrivals.sort_by_key(|p| p.arrived); // stable: slot order within one instant
        for p in arrivals {
            if p.spacing > 0 {
                match self.spaced.iter_mut().find(|q| q.station == p.station) {
                    Some(q) => q.add(p.left, p.spacing),
                    None => self.spaced.push(SpacedGrants::new(p.station, p.left, p.spacing)),
                }
            } else {
                self.grants.push(p);
            }
        }
        // 3. Split the frame: contention first, then grants.
        let unit = match self.cfg.kind {
            MacKind::Ieee80214 => self.cfg.data_slot_minislots,
            MacKind::Docsis => 1,
        };
        let mut granted = Vec::new();
        let mut spaced_slots: Vec<(usize, u32)> = Vec::new();
        let contention = match self.cfg.contention {
            ContentionAlloc::Fixed(c) if self.spaced.iter().any(|p| p.left > 0) => {
                let c = c.min(frame_minislots);
                let cap = (frame_minislots - c) / unit;
                spaced_slots = self.place_spaced(first_minislot, c, cap);
                self.grants.schedule(cap - spaced_slots.len() as u32, cap, &mut granted);
                c
            }
            ContentionAlloc::Fixed(c) => {
                let c = c.min(frame_minislots);
                let cap = (frame_minislots - c) / unit;
                self.grants.schedule(cap, cap, &mut granted);
                c
            }
            ContentionAlloc::Leftover(min) => {
                let min = min.min(frame_minislots);
                let cap = (frame_minislots - min) / unit;
                self.grants.schedule(cap, cap, &mut granted);
                let used: u32 = granted.iter().map(|g| g.units * unit).sum();
                // The message's length (module comment): the whole frame unless MAPs are dynamic.
                (min + used).clamp(self.cfg.min_frame_minislots.min(frame_minislots), frame_minislots) - used
            }
        };
        let length = match self.cfg.contention {
            ContentionAlloc::Leftover(_) => contention + granted.iter().map(|g| g.units * unit).sum::<u32>(),
            ContentionAlloc::Fixed(_) => {
                let used: u32 = granted.iter().map(|g| g.units * unit).sum::<u32>() + spaced_slots.len() as u32 * unit;
                (contention + used).clamp(self.cfg.min_frame_minislots.min(frame_minislots), frame_minislots)
            }
        };
        self.next_first_minislot = first_minislot + length as u64;
        let mut groups = Vec::new();
        match self.cfg.kind {
            MacKind::Ieee80214 => self.rq.allocate(0, contention, &mut groups),
            MacKind::Docsis if contention > 0 => groups.push(CsGroup { rq: 0, first: 0, count: contention }),
            MacKind::Docsis => {}
        }
        let sent = now + self.cfg.headend_delay;
        let laid = if spaced_slots.is_empty() {
            let mut offset = contention;
            let mut laid = Vec::with_capacity(granted.len());
            for g in granted {
                laid.push((offset, g));
                offset += g.units * unit;
            }
            laid
        } else {
            Self::interleave(contention, unit, (frame_minislots - contention) / unit, &spaced_slots, &granted)
        };
        for &(offset, g) in &laid {
            self.stations[g.station as usize].stats.grants += 1;
            self.log(sent, g.station, "grant", first_minislot + offset as u64, g.units);
            self.metrics.data_slots += g.units as u64;
        }
        self.metrics.grants += laid.len() as u64;
        self.metrics.contention_slots += contention as u64;
        self.metrics.frames += 1;
        self.allocations.push_back(Allocation {
            index,
            first_minislot,
            contention,
            groups,
            grants: laid,
            outcomes,
            tx: Vec::new(),
            acted: false,
            resolved: contention == 0,
        });
    }

    /// ACK spacing: stations running it claim data slots of the frame starting at `first_minislot`
    /// (`cap` data slots after `contention` minislots) at their pace, before the scheduler shares
    /// out the rest (spacing.rs). Returns (data slot index, station), in slot order.
    fn place_spaced(&mut self, first_minislot: u64, contention: u32, cap: u32) -> Vec<(usize, u32)> {
        let unit = self.cfg.data_slot_minislots as u64;
        let starts: Vec<SimTime> =
            (0..cap as u64).map(|k| self.clock.start(first_minislot + contention as u64 + k * unit)).collect();
        let mut free = vec![true; cap as usize];
        let mut out = Vec::new();
        let mut claimed = Vec::new();
        for p in self.spaced.iter_mut().filter(|p| p.left > 0) {
            claimed.clear();
            p.place(&starts, &mut free, &mut claimed);
            out.extend(claimed.iter().map(|&k| (k, p.station)));
        }
        out.sort_unstable();
        out
    }

    /// Lay out a frame's grants when spaced slots sit among them: the spaced ones where they were
    /// placed, the scheduler's in order in the data slots left free; consecutive slots of one
    /// station's grant merge. Returns (minislot offset, grant).
    fn interleave(
        contention: u32,
        unit: u32,
        cap: u32,
        spaced: &[(usize, u32)],
        granted: &[Grant],
    ) -> Vec<(u32, Grant)> {
        let mut slots: Vec<Option<Grant>> = vec![None; cap as usize];
        for &(k, station) in spaced {
            // 802.14 grants name the station only (a spaced request's id is not needed).
            slots[k] = Some(Grant { station, id: u64::MAX, units: 1 });
        }
        let free: Vec<usize> = (0..slots.len()).filter(|&k| slots[k].is_none()).collect();
        let mut next = free.into_iter();
        for g in granted {
            for _ in 0..g.units {
                let k = next.next().expect("the scheduler was given only the free slots");
                slots[k] = Some(Grant { units: 1, ..*g });
            }
        }
        let mut laid: Vec<(u32, Grant)> = Vec::new();
        for (k, slot) in slots.into_iter().enumerate() {
            let Some(g) = slot else { continue };
            let offset = contention + k as u32 * unit;
            match laid.last_mut() {
                Some((o, last)) if last.station == g.station && last.id == g.id && *o + last.units * unit == offset => {
                    last.units += 1
                }
                _ => laid.push((offset, g)),
            }
        }
        laid
    }

    // ---- the stations ----

    /// Every station acts on message `pos` of the in-flight list, as of its own reception time.
    fn act(&mut self, pos: usize, out: &mut Vec<MacOut>) {
        let index = self.allocations[pos].index;
        let outcomes = std::mem::take(&mut self.allocations[pos].outcomes);
        for &(s, outcome) in &outcomes {
            self.on_outcome(index, s, outcome, out);
        }
        let grants = std::mem::take(&mut self.allocations[pos].grants);
        let mut piggybacked = std::mem::take(&mut self.scratch);
        piggybacked.clear();
        for &(offset, g) in &grants {
            self.transmit(pos, index, offset, g, &mut piggybacked, out);
        }
        self.scratch = piggybacked;
        // Contention: stations with something to ask for.
        let mut active = std::mem::take(&mut self.active);
        active.retain(|&s| self.contend(pos, index, s));
        // `contend` may not add to `self.active`; stations activated meanwhile (none) are kept.
        active.append(&mut self.active);
        self.active = active;
        let msg = &mut self.allocations[pos];
        msg.acted = true;
        msg.grants = grants;
        msg.outcomes = outcomes;
    }

    /// See the packets enqueued by time `r`.
    fn see(st: &mut Station, r: SimTime) {
        while st.seen < st.queue.len() && st.queue[st.seen].enqueued <= r {
            st.visible += st.queue[st.seen].left as u64;
            st.seen += 1;
        }
    }

    fn on_outcome(&mut self, index: u64, s: u32, outcome: Option<u32>, out: &mut Vec<MacOut>) {
        let r = self.received_at(index, s);
        let kind = self.cfg.kind;
        let (end, max) = (self.cfg.backoff_end, self.cfg.max_retries);
        let st = &mut self.stations[s as usize];
        debug_assert_eq!(st.contend, Contend::Sent);
        let req = st.contending.expect("an outcome is for a request");
        match outcome {
            None => {
                st.contend = Contend::Idle;
                st.contending = None;
                if kind == MacKind::Ieee80214 {
                    self.log(r, s, "feedback", 0, 0); // units 0: success
                }
                return;
            }
            Some(rq) => {
                if kind == MacKind::Ieee80214 {
                    self.log(r, s, "feedback", 0, rq); // units: the RQ number to retry with
                }
                let st = &mut self.stations[s as usize];
                let retry = match kind {
                    MacKind::Ieee80214 => req.tries < max,
                    MacKind::Docsis => st.backoff.collided(end, max, &mut st.rng),
                };
                if retry {
                    st.contend = match kind {
                        MacKind::Ieee80214 => Contend::Waiting(rq),
                        MacKind::Docsis => Contend::Deferring,
                    };
                    if !st.active {
                        st.active = true;
                        self.active.push(s);
                    }
                    return;
                }
            }
        }
        // Given up: discard the packets the request covered (DOCSIS RFI: the packet is discarded).
        self.metrics.dropped_requests += 1;
        let st = &mut self.stations[s as usize];
        st.contend = Contend::Idle;
        st.contending = None;
        let mut dropped_units = 0u64;
        let covered_packets = match kind {
            MacKind::Docsis => st.docsis_reqs.pop_front().map_or(0, |q| q.packets),
            MacKind::Ieee80214 => u32::MAX,
        };
        let mut n = 0;
        while dropped_units < req.units as u64 && n < covered_packets {
            let Some(item) = st.queue.pop_front() else { break };
            st.seen -= 1;
            dropped_units += item.left as u64;
            st.visible -= item.left as u64;
            st.queued_bytes -= item.ip_bytes as u64;
            n += 1;
            if item.tag != BACKGROUND {
                st.stats.dropped_packets += 1;
                out.push(MacOut::Dropped { tag: item.tag });
            }
        }
        match kind {
            MacKind::Ieee80214 => {
                st.covered -= req.units as u64;
                st.outstanding -= req.units as u64;
            }
            MacKind::Docsis => st.covered = 0,
        }
        st.covered = st.covered.min(st.visible);
        if !st.active {
            st.active = true;
            self.active.push(s);
        }
        self.log(r, s, "mac_drop", 0, req.units);
    }

    /// Station `g.station` sends in its grant at `offset` of message `index`.
    fn transmit(
        &mut self,
        pos: usize,
        index: u64,
        offset: u32,
        g: Grant,
        piggybacked: &mut Vec<u32>,
        out: &mut Vec<MacOut>,
    ) {
        let s = g.station;
        let r = self.received_at(index, s);
        let first_minislot = self.allocations[pos].first_minislot;
        let start_minislot = first_minislot + offset as u64;
        let ds_minislots = self.cfg.data_slot_minislots as u64;
        let kind = self.cfg.kind;
        let clock = self.clock;
        let st = &mut self.stations[s as usize];
        Self::see(st, r);
        let mut burst_end = SimTime::ZERO;
        match kind {
            MacKind::Ieee80214 => {
                // One cell per data slot, from the head of the FIFO; a packet is whole when its
                // last cell arrives (AAL5 reassembly at the headend).
                st.outstanding -= g.units as u64;
                for i in 0..g.units as u64 {
                    let end = clock.start(start_minislot + (i + 1) * ds_minislots);
                    burst_end = end;
                    let Some(item) = st.queue.front_mut() else { break };
                    item.left -= 1;
                    item.granted = r;
                    st.visible -= 1;
                    st.covered -= 1;
                    if item.left == 0 {
                        let item = st.queue.pop_front().expect("front");
                        st.seen -= 1;
                        Self::delivered(st, item, end, out);
                    }
                }
            }
            MacKind::Docsis => {
                // The grant is for request `g.id`; packets leave in FIFO order, so a request is
                // delivered once it and every older one are wholly granted.
                burst_end = clock.start(start_minislot + g.units as u64);
                if let Some(q) = st.docsis_reqs.iter_mut().find(|q| q.id == g.id) {
                    q.granted += g.units;
                }
                while st.docsis_reqs.front().is_some_and(|q| q.granted >= q.minislots) {
                    let req = st.docsis_reqs.pop_front().expect("front");
                    for _ in 0..req.packets {
                        let mut item = st.queue.pop_front().expect("a granted packet is queued");
                        st.seen -= 1;
                        item.granted = r;
                        st.visible -= item.left as u64;
                        Self::delivered(st, item, burst_end, out);
                    }
                    st.covered -= req.frame_bytes as u64;
                }
            }
        }
        self.log(burst_end, s, "burst", start_minislot, g.units);
        // Piggyback a request for what has queued up since (once per message per station).
        let st = &mut self.stations[s as usize];
        let piggyback = st.cfg.piggyback.unwrap_or(self.cfg.piggyback);
        if piggyback && st.visible > st.covered && !piggybacked.contains(&s) {
            piggybacked.push(s);
            let tx = SimTime(clock.start(start_minislot).0.saturating_sub(st.cfg.one_way));
            if let Some(p) = self.new_request(s, tx) {
                let arrived = burst_end;
                self.incoming.push_back(Pending { arrived, ..p });
                self.metrics.piggybacked_requests += 1;
                self.metrics.requests += 1;
                let st = &mut self.stations[s as usize];
                st.stats.piggybacked_requests += 1;
                st.stats.requests += 1;
                self.log(arrived, s, "request", start_minislot, p.left);
            }
        }
        let st = &mut self.stations[s as usize];
        let waiting = match kind {
            MacKind::Ieee80214 => st.outstanding > 0,
            MacKind::Docsis => !st.docsis_reqs.is_empty(),
        };
        if !waiting && !st.active && (st.seen < st.queue.len() || st.visible > st.covered) {
            st.active = true;
            self.active.push(s);
        }
    }

    fn delivered(st: &mut Station, item: Item, at: SimTime, out: &mut Vec<MacOut>) {
        st.queued_bytes -= item.ip_bytes as u64;
        let delay = at - item.enqueued;
        st.delay_sum += delay as u128;
        st.delay_n += 1;
        let max = delay as f64 / 1e9;
        if st.stats.access_delay_max_s.is_none_or(|m| m < max) {
            st.stats.access_delay_max_s = Some(max);
        }
        if item.granted >= item.requested {
            st.rg_sum += (item.granted - item.requested) as u128;
            st.rg_n += 1;
        }
        if item.tag == BACKGROUND {
            st.stats.background_packets += 1;
        } else {
            st.stats.packets += 1;
            st.stats.bytes += item.ip_bytes as u64;
            out.push(MacOut::Delivered {
                tag: item.tag,
                at,
                enqueued: item.enqueued,
                requested: item.requested,
                granted: item.granted,
            });
        }
    }

    /// Make a request for seen data no request covers yet, sent at `tx`; the headend's view of it.
    fn new_request(&mut self, s: u32, tx: SimTime) -> Option<Pending> {
        let cfg = &self.cfg;
        let st = &mut self.stations[s as usize];
        let id = st.next_id;
        let left = match cfg.kind {
            MacKind::Ieee80214 => {
                let units = (st.visible - st.covered).min(cfg.max_request as u64) as u32;
                if units == 0 {
                    return None;
                }
                st.outstanding += units as u64;
                // The packets whose first cell this request covers are requested now.
                let (from, to) = (st.covered, st.covered + units as u64);
                let mut before = 0u64;
                for item in st.queue.iter_mut().take(st.seen) {
                    if before >= from && before < to {
                        item.requested = tx;
                    }
                    before += item.left as u64;
                }
                st.covered += units as u64;
                units
            }
            MacKind::Docsis => {
                // The packets after those already requested: one, or several concatenated up to
                // the maximum burst and the maximum request.
                let mut skip = st.covered;
                let mut first = 0;
                while skip > 0 {
                    skip -= st.queue[first].left as u64;
                    first += 1;
                }
                let mut bytes = 0u32;
                let mut packets = 0u32;
                for item in st.queue.iter().take(st.seen).skip(first) {
                    let more = bytes + item.left;
                    let ms = burst_minislots(more, cfg.burst_overhead_bytes, cfg.minislot_bytes, cfg.fec);
                    if packets > 0 && (!cfg.concatenation || more > cfg.max_burst_bytes || ms > cfg.max_request) {
                        break;
                    }
                    bytes = more;
                    packets += 1;
                }
                if packets == 0 {
                    return None;
                }
                for item in st.queue.iter_mut().skip(first).take(packets as usize) {
                    item.requested = tx;
                }
                let minislots = burst_minislots(bytes, cfg.burst_overhead_bytes, cfg.minislot_bytes, cfg.fec);
                st.docsis_reqs.push_back(DocsisReq { id, packets, frame_bytes: bytes, minislots, granted: 0 });
                st.covered += bytes as u64;
                minislots
            }
        };
        st.next_id += 1;
        // Elloumi Fig. 18: "each time a request ... is sent", ask for tau / 2 spacing and reset tau.
        let spacing = st.meter.as_mut().map_or(0, Meter::on_request);
        Some(Pending { station: s, id, left, arrived: tx, spacing })
    }

    /// Station `s` looks at message `index` for a contention opportunity; true if it must look at
    /// the next one too.
    fn contend(&mut self, pos: usize, index: u64, s: u32) -> bool {
        let r = self.received_at(index, s);
        let kind = self.cfg.kind;
        let start = self.cfg.backoff_start;
        {
            let st = &mut self.stations[s as usize];
            Self::see(st, r);
            if st.contend == Contend::Sent {
                // Its outcome will wake it (a packet queued meanwhile woke it early).
                st.active = false;
                return false;
            }
            let waiting = match kind {
                MacKind::Ieee80214 => st.outstanding > 0,
                MacKind::Docsis => !st.docsis_reqs.is_empty(),
            };
            if st.contend == Contend::Idle && (waiting || st.visible == st.covered) {
                // Nothing to ask for now: look again when grants end or a packet arrives.
                let again = !waiting && st.seen < st.queue.len();
                st.active = again;
                return again;
            }
        }
        if self.stations[s as usize].contend == Contend::Idle {
            // A new request enters contention.
            // Its packets are marked requested at `r` until the first transmission sets the time.
            let p = self.new_request(s, r).expect("data to ask for");
            let st = &mut self.stations[s as usize];
            st.contending = Some(Contending { id: p.id, units: p.left, tries: 0, spacing: p.spacing });
            st.contend = match kind {
                MacKind::Ieee80214 => Contend::Waiting(0),
                MacKind::Docsis => {
                    st.backoff = Backoff::start(start, &mut st.rng);
                    Contend::Deferring
                }
            };
        }
        let msg = &self.allocations[pos];
        let st = &mut self.stations[s as usize];
        let slot = match st.contend {
            Contend::Waiting(rq) => {
                msg.groups.iter().find(|g| g.rq == rq).map(|g| g.first + st.rng.below(g.count as u64) as u32)
            }
            Contend::Deferring => {
                let n: u32 = msg.groups.iter().map(|g| g.count).sum();
                st.backoff.opportunity(n)
            }
            Contend::Idle | Contend::Sent => unreachable!("only contending stations get here"),
        };
        let Some(offset) = slot else { return true };
        let first_minislot = msg.first_minislot;
        let req = st.contending.as_mut().expect("contending");
        req.tries += 1;
        if req.tries == 1 {
            let tx = SimTime(self.clock.start(first_minislot + offset as u64).0.saturating_sub(st.cfg.one_way));
            // the packets' request time is the first transmission
            for item in st.queue.iter_mut().take(st.seen) {
                if item.requested == r {
                    item.requested = tx;
                }
            }
        }
        let units = req.units;
        st.contend = Contend::Sent;
        st.stats.requests += 1;
        st.active = false;
        self.metrics.requests += 1;
        self.allocations[pos].tx.push((offset, s));
        let at = self.clock.start(first_minislot + offset as u64);
        self.log(at, s, "request", first_minislot + offset as u64, units);
        false
    }
}
