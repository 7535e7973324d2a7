//! The shared upstream as one pure state machine: stations (cable modems) and the headend
//! (CMTS), handed the time like the TCP endpoints (docs/design.md, "The network of parts, and the fabric", habit 1).
//!
//! Timing, all in the headend's time (ranging aligns every burst on its minislots):
//! - Allocation message `m` (an 802.14 frame's CS allocation / grants / feedback, or a DOCSIS MAP)
//!   describes minislots `[first + m*M, first + (m+1)*M)`, starting at `T_m`.
//! - The headend decides it at `B_m = T_m - lead`, from what it has heard by then; it reaches a
//!   station `d` away at `B_m + headend_delay + d` (the issue's "downstream propagation delay plus
//!   the headend's processing delay"), plus the downstream interleaver's latency `i` (plant.rs; 0
//!   off the docsis kind). `lead = headend_delay + i + map_processing + 2 * max_one_way`, so the
//!   farthest station, having received and processed the MAP, can still send in the first minislot
//!   (DOCSIS RFI 1.1 / MULPI, MAP transmission and timing: the MAP must reach every modem, through
//!   the interleaver, the CM's MAP processing time before the minislots it describes; the CMTS's
//!   "MAP advance"). `map_processing` is 0 unless `upstream.map_processing_s` sets it.
//! - A station acts on a message once it has received and processed it, at `B_m + headend_delay
//!   + i + d + map_processing`, with the packets it holds then (chosen; as a DOCSIS modem processes
//!   each MAP on arrival). Its request or data leaves `d` before the minislot and arrives in it.
//! - DOCSIS maintenance regions (`maintenance_minislots`, MULPI ranging): the first message
//!   starting at or after each multiple of `maintenance_interval` begins with that many minislots
//!   no request or data may use; its contention slots and grants follow them.
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
use super::channel::SlotClock;
use super::grants::{Grant, GrantQueue, Pending};
use super::rules::MacRules;
use super::serviceflow::{Admit, FlowAqm, ServiceFlow};
use super::spacing::SpacedGrants;
use super::state::{Allocation, Item, MacEvent, MacMetrics, MacOut, Station, StationMetrics, UpBurst, BACKGROUND};
use super::tree::RqStack;
use super::{MacConfig, StationConfig};
use crate::net::servicequeue::{LldInput, QueueDrop, QueueStats};
use crate::net::wait::WaitStats;
use crate::net::{Framing, Occupancy, QueueLimit};
use crate::rng::{component, Stream};
use crate::time::{Nanos, SimTime};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The shared upstream channel with its MAC.
pub struct Upstream {
    pub(super) cfg: MacConfig,
    pub(super) clock: SlotClock,
    pub(super) lead: Nanos,
    /// The farthest station's one-way propagation delay.
    pub(super) max_one_way: Nanos,
    pub(super) first_minislot: u64,
    /// First minislot of the next message to decide (dynamic MAPs; fixed frames compute it).
    pub(super) next_first_minislot: u64,
    pub(super) stations: Vec<Station>,
    /// Stations that must look at the next message (contending, or with data not yet asked for),
    /// in the order they joined (`joined`).
    pub(super) active: Vec<u32>,
    /// Joins of the active list so far (each station's `joined`).
    pub(super) joins: u64,
    /// DOCSIS: request opportunities offered so far, over the messages acted on.
    pub(super) opportunities: u64,
    /// DOCSIS: deferring stations set aside until their count runs out, as (the opportunity they
    /// send in, counted as `opportunities` counts, `joined`, station); still active, but not visited.
    pub(super) deferring: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// A message's deferring stations whose count runs out in it, and the next active list (room kept).
    pub(super) deferral_over: Vec<(u64, u32)>,
    pub(super) next_active: Vec<u32>,
    pub(super) allocations: VecDeque<Allocation>,
    pub(super) next_index: u64,
    /// When message `next_index` is decided (`decided_at`), kept from the last decision.
    pub(super) next_decide: SimTime,
    pub(super) rq: RqStack,
    pub(super) grants: GrantQueue,
    /// Constant-rate grants of the stations running ACK spacing (spacing.rs).
    pub(super) spaced: Vec<SpacedGrants>,
    /// The next maintenance region is due in the first message starting at or after this (ns).
    pub(super) next_maintenance: Nanos,
    /// Piggybacked requests on their way to the headend: (arrival, request).
    pub(super) incoming: VecDeque<Pending>,
    pub(super) background: BinaryHeap<Reverse<(SimTime, u32)>>,
    pub(super) metrics: MacMetrics,
    pub(super) trace: Option<Vec<MacEvent>>,
    /// With a capture on: every burst the headend receives (`capture_on`).
    pub(super) capture: Option<Vec<UpBurst>>,
    pub(super) scratch: Vec<u32>,
    /// Retired messages and the decision's working lists, kept for their room: a MAP allocates
    /// nothing once the first few have been decided.
    pub(super) spare: Vec<Allocation>,
    pub(super) arrivals: Vec<Pending>,
    pub(super) granted: Vec<Grant>,
    /// A decision's contention requests in slot order, and the counting sort's counts (headend.rs).
    pub(super) tx_sorted: Vec<(u32, u32)>,
    pub(super) tx_counts: Vec<u32>,
    /// The plant's number of each station of this channel (`channel`).
    pub(super) ids: Vec<u32>,
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
        let lead = cfg.headend_delay + cfg.interleave + cfg.map_processing + 2 * max_one_way;
        let first_minislot = clock.first_at_or_after(SimTime(lead));
        let mut background = BinaryHeap::new();
        let sts: Vec<Station> = stations
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let id = ids[i];
                let (station_stream, bg_stream) = if c.sub == 0 {
                    (component::mac_station(id as u64), component::mac_background(id as u64))
                } else {
                    (
                        component::mac_bonded(id as u64, c.sub as u64),
                        component::mac_bonded_background(id as u64, c.sub as u64),
                    )
                };
                let mut bg_rng = Stream::new(seed, bg_stream);
                if c.background_pps > 0.0 {
                    background.push(Reverse((
                        background::next_arrival(SimTime::ZERO, c.background_pps, &mut bg_rng),
                        i as u32,
                    )));
                }
                Station::new(c, id, Stream::new(seed, station_stream), bg_rng)
            })
            .collect();
        let partial = cfg.kind.partial_grants(&cfg);
        let merge = cfg.kind.merge_grants();
        let mut up = Upstream {
            grants: GrantQueue::new(cfg.scheduler, partial, merge),
            cfg,
            clock,
            lead,
            max_one_way,
            first_minislot,
            next_first_minislot: first_minislot,
            stations: sts,
            active: Vec::new(),
            joins: 0,
            opportunities: 0,
            deferring: BinaryHeap::new(),
            deferral_over: Vec::new(),
            next_active: Vec::new(),
            allocations: VecDeque::new(),
            next_index: 0,
            next_decide: SimTime::ZERO,
            rq: RqStack::default(),
            spaced: Vec::new(),
            next_maintenance: 0,
            incoming: VecDeque::new(),
            background,
            metrics: MacMetrics::default(),
            trace: trace.then(Vec::new),
            capture: None,
            scratch: Vec::new(),
            spare: Vec::new(),
            arrivals: Vec::new(),
            granted: Vec::new(),
            tx_sorted: Vec::new(),
            tx_counts: Vec::new(),
            ids,
        };
        up.next_decide = up.decided_at(0);
        up
    }

    /// First minislot of message `m`. With fixed frames any `m`; with dynamic MAPs the next message
    /// to decide or one still held (its start depends on the lengths of those before it).
    pub(super) fn first_minislot_of(&self, m: u64) -> u64 {
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

    /// When station `s` has received message `m` (through the interleaver) and processed it.
    pub fn received_at(&self, m: u64, s: u32) -> SimTime {
        self.heard_at(m) + self.stations[s as usize].cfg.one_way
    }

    /// When a station 0 km away has received message `m` and processed it.
    #[inline]
    pub(super) fn heard_at(&self, m: u64) -> SimTime {
        self.decided_at(m) + self.to_station()
    }

    /// When every station has received message `m` and acted on it.
    pub(super) fn acted_at(&self, m: u64) -> SimTime {
        self.heard_at(m) + self.max_one_way
    }

    /// From a message's decision to a station 0 km away acting on it.
    #[inline]
    pub(super) fn to_station(&self) -> Nanos {
        self.cfg.headend_delay + self.cfg.interleave + self.cfg.map_processing
    }

    /// The maintenance region of the message starting at `start`: its minislots, and the next one
    /// due at the next multiple of the interval after `start` (none: 0).
    pub(super) fn maintenance_at(&mut self, start: SimTime) -> u32 {
        let every = self.cfg.maintenance_interval;
        if self.cfg.maintenance_minislots == 0 || every == 0 || start.0 < self.next_maintenance {
            return 0;
        }
        self.next_maintenance = (start.0 / every + 1).saturating_mul(every);
        self.cfg.maintenance_minislots
    }

    /// Station `s` becomes its modem's upstream service flow's queue (serviceflow.rs); an LLD flow
    /// brings its low-latency station, added to this channel with the modem's place and a stream of
    /// its own.
    pub fn attach_flow(&mut self, s: u32, mut sf: ServiceFlow, limit: QueueLimit, seed: u64) {
        self.stations[s as usize].cfg.queue = limit;
        if let FlowAqm::Lld { l, .. } = &mut sf.aqm {
            let parent = &self.stations[s as usize];
            let id = self.ids[s as usize];
            // The low-latency flow's own buffer is the dual queue's L buffer (aqm/dualq.rs).
            let cfg = StationConfig { background_pps: 0.0, queue: QueueLimit::Unbounded, ..parent.cfg.clone() };
            let mut ll = Station::new(
                cfg,
                id,
                Stream::new(seed, component::mac_low_latency(id as u64)),
                Stream::new(seed, component::mac_low_latency(id as u64)),
            );
            ll.sf = Some(Box::new(ServiceFlow::new(
                format!("{}_ll", sf.name),
                None,
                Framing::NONE,
                FlowAqm::DropTail,
                Stream::new(seed, component::mac_low_latency(id as u64)),
            )));
            *l = self.stations.len() as u32;
            self.stations.push(ll);
            self.ids.push(id);
        }
        self.stations[s as usize].sf = Some(Box::new(sf));
    }

    /// A packet of `ip_bytes` joins station `s`'s MAC FIFO; false if the FIFO is full.
    pub fn enqueue(&mut self, now: SimTime, s: u32, tag: u64, ip_bytes: u32) -> bool {
        // The background packets that came first join first (`take_background_until`).
        self.take_background_until(now);
        self.push_item(now, s, tag, ip_bytes, LldInput::default()).is_ok()
    }

    /// A packet of `ip_bytes` (as the LLD classifier reads it, `input`) arrives at station `s`:
    /// Ok(true) if its service flow's AQM marked it CE, or why it was dropped.
    pub fn enqueue_packet(
        &mut self,
        now: SimTime,
        s: u32,
        tag: u64,
        ip_bytes: u32,
        input: LldInput,
    ) -> Result<bool, QueueDrop> {
        self.take_background_until(now);
        self.push_item(now, s, tag, ip_bytes, input)
    }

    /// Background packets are taken in lazily: they change nothing a station does until the
    /// station next acts or a packet joins a queue, so the MAC takes them then (all of them due by
    /// `now`, in time order, on a tie before the packet), not at a wake-up of their own. Every
    /// queue, request and counter is as if each had been taken at its own time; only the engine's
    /// event count is smaller. Call before reading a station's queue from outside (bonding's choice
    /// of channel, the metrics at the run's end).
    #[inline]
    pub fn take_background_until(&mut self, now: SimTime) {
        if self.background.peek().is_some_and(|Reverse((t, _))| *t <= now) {
            self.take_background(now);
        }
    }

    /// `take_background_until`'s work, when an arrival is due.
    #[inline(never)]
    fn take_background(&mut self, now: SimTime) {
        loop {
            let (t, s) = {
                let Some(mut top) = self.background.peek_mut() else { break };
                let Reverse((t, s)) = *top;
                if t > now {
                    break;
                }
                // The station's next arrival replaces this one in place (one sift, not a pop and a
                // push; the order is by (time, station), so the heap's shape cannot matter).
                let st = &mut self.stations[s as usize];
                top.0 .0 = background::next_arrival(t, st.cfg.background_pps, &mut st.bg_rng);
                (t, s)
            };
            // Background packets are Not-ECT and carry no DSCP (LldInput::default()).
            let _ =
                self.push_item(t, s, BACKGROUND, self.stations[s as usize].cfg.background_bytes, LldInput::default());
        }
    }

    fn push_item(&mut self, now: SimTime, s: u32, tag: u64, ip_bytes: u32, input: LldInput) -> Result<bool, QueueDrop> {
        let kind = self.cfg.kind;
        let st = &mut self.stations[s as usize];
        let held = Occupancy { packets: st.queue.len() as u64, bytes: st.queued_bytes };
        let (mut into, mut ready, mut mark) = (s, now, false);
        if let Some(sf) = st.sf.as_mut() {
            // The modem's service flow decides (serviceflow.rs); its buffer is the station's limit.
            let l = sf.low_latency();
            let l_held = l.map_or(0, |l| self.stations[l as usize].queued_bytes);
            let st = &mut self.stations[s as usize];
            let limit = st.cfg.queue;
            let sf = st.sf.as_mut().expect("checked");
            match sf.admit(now, ip_bytes, input, held.bytes, l_held, || limit.fits(held, ip_bytes)) {
                Admit::Queue { ready: r, mark: m } => (ready, mark) = (r, m),
                Admit::LowLatency { mark: m } => (into, mark) = (l.expect("an LLD flow"), m),
                Admit::Drop(why) => {
                    st.waits.arrival(held.bytes);
                    match why {
                        QueueDrop::Full => st.stats.queue_drops += 1,
                        QueueDrop::Aqm => st.stats.aqm_drops += 1,
                    }
                    return Err(why);
                }
            }
        } else if !st.cfg.queue.fits(held, ip_bytes) {
            st.waits.arrival(held.bytes);
            st.stats.queue_drops += 1;
            return Err(QueueDrop::Full);
        }
        let st = &mut self.stations[into as usize];
        st.waits.arrival(st.queued_bytes);
        if tag != BACKGROUND {
            if let Some(m) = st.meter.as_mut() {
                m.on_ack(now, !st.queue.is_empty());
            }
        }
        let left = kind.units(&self.cfg, ip_bytes, tag == BACKGROUND);
        let ect = input.ecn.capable() || mark;
        st.queue.push_back(Item { tag, enqueued: now, ready, ect, ip_bytes, left, requested: now, granted: now });
        st.queued_bytes += ip_bytes as u64;
        self.activate(into);
        Ok(mark)
    }

    /// Station `s` looks at the next message, after those already active (a no-op if it is).
    #[inline]
    pub(super) fn activate(&mut self, s: u32) {
        let st = &mut self.stations[s as usize];
        if !st.active {
            st.active = true;
            st.joined = self.joins;
            self.joins += 1;
            self.active.push(s);
        }
    }

    /// IP bytes station `s` holds (for a bonded modem's choice of channel, bonding.rs).
    #[inline]
    pub fn queued_bytes(&self, s: u32) -> u64 {
        self.stations[s as usize].queued_bytes
    }

    /// The next instant the MAC needs to be called: its next decision or action (background
    /// arrivals wait for those, `take_background_until`).
    pub fn next_deadline(&self) -> Option<SimTime> {
        let decide = self.next_decide;
        let act = self.allocations.iter().find(|m| !m.acted).map(|m| m.acted_at);
        Some(act.map_or(decide, |a| a.min(decide)))
    }

    /// Do everything due at `now`.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<MacOut>) {
        // Whatever is due, earliest first; on a tie background arrivals, then decisions, then
        // stations acting (a decision never depends on an action at the same instant).
        loop {
            debug_assert_eq!(self.next_decide, self.decided_at(self.next_index));
            let decide = Some(self.next_decide).filter(|t| *t <= now);
            let act = self.allocations.iter().position(|m| !m.acted).and_then(|pos| {
                let t = self.allocations[pos].acted_at;
                debug_assert_eq!(t, self.acted_at(self.allocations[pos].index));
                (t <= now).then_some((t, pos))
            });
            // Background arrivals up to the next decision or action (a tie included): they change
            // no message's timing, so those times hold across them.
            let until = [Some(now), decide, act.map(|a| a.0)].into_iter().flatten().min().expect("now");
            self.take_background_until(until);
            match (decide, act) {
                (Some(d), Some((a, _))) if d <= a => self.decide(),
                (Some(_), None) => self.decide(),
                (_, Some((_, pos))) => self.act(pos, out),
                (None, None) => break,
            }
        }
        while self.allocations.front().is_some_and(|m| m.acted && m.resolved) {
            let retired = self.allocations.pop_front().expect("front");
            self.spare.push(retired);
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

    /// The modems' upstream service flows on this channel (docsis kind), in station order.
    pub fn flows(&self) -> impl Iterator<Item = &ServiceFlow> {
        self.stations.iter().filter_map(|st| st.sf.as_deref())
    }

    /// Every station's waits start afresh (`sim.measure_from_s`).
    pub fn restart_waits(&mut self) {
        for st in &mut self.stations {
            st.waits = Default::default();
        }
    }

    /// Each station's queue as a place packets wait: (its name, the plant's station number, its
    /// service flow's counters if it has one, its waits), in station order. A station without a
    /// service flow is named `modem{id}_mac_queue` (`_sub{k}` for a bonded modem's k-th channel).
    pub fn waiting_places(&self) -> impl Iterator<Item = (String, u32, Option<&QueueStats>, &WaitStats)> {
        self.stations.iter().zip(&self.ids).map(|(st, &id)| match st.sf.as_deref() {
            Some(sf) => (sf.name.clone(), id, Some(&sf.stats), &st.waits),
            None if st.cfg.sub > 0 => (format!("modem{id}_mac_queue_sub{}", st.cfg.sub), id, None, &st.waits),
            None => (format!("modem{id}_mac_queue"), id, None, &st.waits),
        })
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

    /// Which MAC runs this channel.
    pub fn kind(&self) -> super::MacKind {
        self.cfg.kind
    }

    /// Record every burst from now on (`take_bursts`), for a capture.
    pub fn capture_on(&mut self) {
        self.capture.get_or_insert_with(Vec::new);
    }

    /// The bursts recorded since the last call, stations named by the plant's numbers.
    pub fn take_bursts(&mut self) -> Vec<UpBurst> {
        let Some(c) = self.capture.as_mut() else { return Vec::new() };
        let mut rows = std::mem::take(c);
        for r in &mut rows {
            if let Some(&id) = self.ids.get(r.station as usize) {
                r.station = id;
            }
        }
        rows
    }

    pub(super) fn log(&mut self, time: SimTime, station: u32, event: &'static str, minislot: u64, units: u32) {
        if let Some(t) = self.trace.as_mut() {
            t.push(MacEvent { time, station, event, minislot, units });
        }
    }
}
