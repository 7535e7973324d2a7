//! The station (cable modem) side of a shared upstream channel: its FIFO, what it sees of it, the
//! requests it makes (in contention, or piggybacked), contention and its outcome, and sending in
//! its grants, concatenating as the MAC allows (upstream.rs has the timing; the MAC's own rules
//! come from `rules.rs`).

use super::grants::{Grant, Pending};
use super::rules::{GrantAt, MacRules};
use super::spacing::Meter;
use super::state::{Contend, Contending, MacOut, UpBurst, BACKGROUND};
use super::upstream::Upstream;
use crate::time::SimTime;
use std::cmp::Reverse;

impl Upstream {
    /// Every station acts on message `pos` of the in-flight list, as of its own reception time.
    pub(super) fn act(&mut self, pos: usize, out: &mut Vec<MacOut>) {
        let index = self.allocations[pos].index;
        // When a station 0 km away has the message; station `s` has it `one_way` later.
        let heard = self.heard_at(index);
        let outcomes = std::mem::take(&mut self.allocations[pos].outcomes);
        for &(s, outcome) in &outcomes {
            self.on_outcome(heard, s, outcome, out);
        }
        let grants = std::mem::take(&mut self.allocations[pos].grants);
        let mut piggybacked = std::mem::take(&mut self.scratch);
        piggybacked.clear();
        for &(offset, g) in &grants {
            self.transmit(pos, heard, offset, g, &mut piggybacked, out);
        }
        self.scratch = piggybacked;
        // Contention: stations with something to ask for, in the order they joined the active list.
        // DOCSIS deferring stations are set aside (`deferring`) until the message whose request
        // opportunities their count runs out in: the pass over them then takes each in its place
        // in that order, as if it had been visited every message (counting down changes nothing
        // else; `see` catches up when it is next called).
        let n: u32 = self.allocations[pos].groups.iter().map(|g| g.count).sum();
        let (before, after) = (self.opportunities, self.opportunities + n as u64);
        self.opportunities = after;
        let mut over = std::mem::take(&mut self.deferral_over);
        over.clear();
        while let Some(&Reverse((at, joined, s))) = self.deferring.peek() {
            if at >= after {
                break;
            }
            self.deferring.pop();
            self.stations[s as usize].backoff.defer = at - before;
            over.push((joined, s));
        }
        over.sort_unstable();
        let active = std::mem::take(&mut self.active);
        let mut next = std::mem::take(&mut self.next_active);
        next.clear();
        let (mut i, mut j) = (0, 0);
        while i < active.len() || j < over.len() {
            let from_over =
                j < over.len() && (i == active.len() || over[j].0 < self.stations[active[i] as usize].joined);
            let s = if from_over {
                j += 1;
                over[j - 1].1
            } else {
                i += 1;
                active[i - 1]
            };
            if self.contend(pos, heard, s, n, after) {
                next.push(s);
            }
        }
        // `contend` may not add to `self.active`; stations activated meanwhile (none) are kept.
        next.append(&mut self.active);
        self.active = next;
        self.next_active = active;
        self.deferral_over = over;
        if self.capture.as_ref().is_some_and(|c| !c.is_empty()) {
            out.push(MacOut::Captured); // the requests sent in contention
        }
        let msg = &mut self.allocations[pos];
        msg.acted = true;
        msg.grants = grants;
        msg.outcomes = outcomes;
    }

    pub(super) fn on_outcome(&mut self, heard: SimTime, s: u32, outcome: Option<u32>, out: &mut Vec<MacOut>) {
        let r = heard + self.stations[s as usize].cfg.one_way;
        let kind = self.cfg.kind;
        let st = &mut self.stations[s as usize];
        debug_assert_eq!(st.contend, Contend::Sent);
        let req = st.contending.expect("an outcome is for a request");
        match outcome {
            None => {
                st.contend = Contend::Idle;
                st.contending = None;
                if kind.feedback() {
                    self.log(r, s, "feedback", 0, 0); // units 0: success
                }
                return;
            }
            Some(rq) => {
                if kind.feedback() {
                    self.log(r, s, "feedback", 0, rq); // units: the RQ number to retry with
                }
                let st = &mut self.stations[s as usize];
                if let Some(again) = kind.retry(st, &req, rq, &self.cfg) {
                    st.contend = again;
                    self.activate(s);
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
        let covered_packets = kind.given_up_packets(st);
        let mut n = 0;
        while dropped_units < req.units as u64 && n < covered_packets {
            let Some(item) = st.queue.pop_front() else { break };
            st.popped += 1;
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
        kind.forget(st, req.units);
        st.covered = st.covered.min(st.visible);
        self.activate(s);
        self.log(r, s, "mac_drop", 0, req.units);
    }

    /// Station `g.station` sends in its grant at `offset` of the message at `pos`.
    pub(super) fn transmit(
        &mut self,
        pos: usize,
        heard: SimTime,
        offset: u32,
        g: Grant,
        piggybacked: &mut Vec<u32>,
        out: &mut Vec<MacOut>,
    ) {
        let s = g.station;
        let r = heard + self.stations[s as usize].cfg.one_way;
        let first_minislot = self.allocations[pos].first_minislot;
        let start_minislot = first_minislot + offset as u64;
        let kind = self.cfg.kind;
        let clock = self.clock;
        let st = &mut self.stations[s as usize];
        st.see(r);
        let before = out.len();
        let burst_end = kind.send(st, &self.cfg, GrantAt { clock, start_minislot, received: r, grant: g }, out);
        self.log(burst_end, s, "burst", start_minislot, g.units);
        let mut carried = None;
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
                carried = Some(p.left);
            }
        }
        if self.capture.is_some() {
            self.capture_burst(burst_end, s, carried, before, out);
        }
        let st = &self.stations[s as usize];
        if !kind.waiting(st) && !st.active && (st.seen < st.queue.len() || st.visible > st.covered) {
            self.activate(s);
        }
    }

    /// Make a request for seen data no request covers yet, sent at `tx`; the headend's view of it.
    pub(super) fn new_request(&mut self, s: u32, tx: SimTime) -> Option<Pending> {
        let cfg = &self.cfg;
        let st = &mut self.stations[s as usize];
        let id = st.next_id;
        let left = cfg.kind.request(st, cfg, id, tx)?;
        st.next_id += 1;
        // Elloumi Fig. 18: "each time a request ... is sent", ask for tau / 2 spacing and reset tau.
        let spacing = st.meter.as_mut().map_or(0, Meter::on_request);
        Some(Pending { station: s, id, left, arrived: tx, spacing })
    }

    /// Station `s` looks at the message at `pos` (heard at `heard`, `act`) for a contention opportunity; true if it must look at
    /// the next one too.
    /// `n` is the message's request opportunities and `after` the count offered through it
    /// (`Upstream::opportunities`): a deferring station whose count outlasts the message is set aside (`deferring`).
    pub(super) fn contend(&mut self, pos: usize, heard: SimTime, s: u32, n: u32, after: u64) -> bool {
        let r = heard + self.stations[s as usize].cfg.one_way;
        let kind = self.cfg.kind;
        {
            let st = &mut self.stations[s as usize];
            st.see(r);
            if st.contend == Contend::Sent {
                // Its outcome will wake it (a packet queued meanwhile woke it early).
                st.active = false;
                return false;
            }
            let waiting = kind.waiting(st);
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
            let marked = st.marked;
            st.contending = Some(Contending { id: p.id, units: p.left, tries: 0, spacing: p.spacing, marked });
            st.contend = kind.enter_contention(st, &self.cfg);
        }
        let msg = &self.allocations[pos];
        let st = &mut self.stations[s as usize];
        let slot = match st.contend {
            Contend::Waiting(rq) => {
                msg.groups.iter().find(|g| g.rq == rq).map(|g| g.first + st.rng.below(g.count as u64) as u32)
            }
            Contend::Deferring => match st.backoff.opportunity(n) {
                Some(slot) => Some(slot),
                None => {
                    // Still active, but not visited until its count runs out (`act`).
                    self.deferring.push(Reverse((after + st.backoff.defer, st.joined, s)));
                    return false;
                }
            },
            Contend::Idle | Contend::Sent => unreachable!("only contending stations get here"),
        };
        let Some(offset) = slot else { return true };
        // Contention slots follow the maintenance region (offsets count from the message's start).
        let offset = offset + msg.maint;
        let first_minislot = msg.first_minislot;
        let req = st.contending.as_mut().expect("contending");
        req.tries += 1;
        if req.tries == 1 {
            let tx = SimTime(self.clock.start(first_minislot + offset as u64).0.saturating_sub(st.cfg.one_way));
            // The packets' request time is the first transmission: those the request marked at
            // its making (`marked`), still queued and seen.
            let front = st.popped;
            let from = (req.marked.0.saturating_sub(front) as usize).min(st.seen);
            let to = (req.marked.1.saturating_sub(front) as usize).min(st.seen);
            for item in st.queue.range_mut(from..to.max(from)) {
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
        if let Some(c) = self.capture.as_mut() {
            // The headend has the request when its contention slot (one minislot) ends.
            let at = self.clock.start(first_minislot + offset as u64 + 1);
            c.push(UpBurst { at, station: s, request: Some(units), packets: Vec::new() });
        }
        false
    }

    /// With a capture on: station `s`'s data burst ending at `at`, with the packets it delivered
    /// (`out[before..]`, this burst's part of the MAC's output) and the request it piggybacked;
    /// a `MacOut::Captured` goes before them.
    #[cold]
    #[inline(never)]
    fn capture_burst(&mut self, at: SimTime, s: u32, request: Option<u32>, before: usize, out: &mut Vec<MacOut>) {
        let packets: Vec<u64> = out[before..]
            .iter()
            .filter_map(|o| match *o {
                MacOut::Delivered { tag, .. } => Some(tag),
                MacOut::Dropped { .. } | MacOut::AqmDropped { .. } | MacOut::Captured => None,
            })
            .collect();
        // A burst of background packets alone, or a fragment completing none, carries nothing a
        // capture shows, unless it carries a request.
        if packets.is_empty() && request.is_none() {
            return;
        }
        if let Some(c) = self.capture.as_mut() {
            c.push(UpBurst { at, station: s, request, packets });
        }
        out.insert(before, MacOut::Captured);
    }
}
