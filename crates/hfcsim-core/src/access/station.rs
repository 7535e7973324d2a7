//! The station (cable modem) side of a shared upstream channel: its FIFO, what it sees of it, the
//! requests it makes (in contention, or piggybacked), contention and its outcome, and sending in
//! its grants, concatenating as the MAC allows (upstream.rs has the timing; the MAC's own rules
//! come from `rules.rs`).

use super::backoff::Backoff;
use super::channel::burst_minislots;
use super::grants::{Grant, Pending};
use super::spacing::Meter;
use super::upstream::{MacOut, StationMetrics, Upstream, BACKGROUND};
use super::{MacKind, StationConfig};
use crate::rng::Stream;
use crate::time::{Nanos, SimTime};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
pub(super) struct Item {
    pub(super) tag: u64,
    pub(super) enqueued: SimTime,
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
}

pub(super) struct Station {
    pub(super) cfg: StationConfig,
    pub(super) queue: VecDeque<Item>,
    pub(super) queued_bytes: u64,
    /// Items at the front of `queue` the station has seen (enqueued by the time it read a message).
    pub(super) seen: usize,
    /// Units of seen items not yet sent, and how many of them requests cover (a prefix).
    pub(super) visible: u64,
    pub(super) covered: u64,
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
    pub(super) stats: StationMetrics,
    pub(super) delay_sum: u128,
    pub(super) delay_n: u64,
    pub(super) rg_sum: u128,
    pub(super) rg_n: u64,
}

impl Upstream {
    /// Every station acts on message `pos` of the in-flight list, as of its own reception time.
    pub(super) fn act(&mut self, pos: usize, out: &mut Vec<MacOut>) {
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
    pub(super) fn see(st: &mut Station, r: SimTime) {
        while st.seen < st.queue.len() && st.queue[st.seen].enqueued <= r {
            st.visible += st.queue[st.seen].left as u64;
            st.seen += 1;
        }
    }

    pub(super) fn on_outcome(&mut self, index: u64, s: u32, outcome: Option<u32>, out: &mut Vec<MacOut>) {
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
    pub(super) fn transmit(
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

    pub(super) fn delivered(st: &mut Station, item: Item, at: SimTime, out: &mut Vec<MacOut>) {
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
    pub(super) fn new_request(&mut self, s: u32, tx: SimTime) -> Option<Pending> {
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
    pub(super) fn contend(&mut self, pos: usize, index: u64, s: u32) -> bool {
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
