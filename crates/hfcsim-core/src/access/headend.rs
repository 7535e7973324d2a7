//! The headend (CMTS) side of a shared upstream channel: it decides each allocation message (an
//! 802.14 frame or a DOCSIS MAP) from what it has heard by then, resolves the contention slots,
//! queues the requests and lays out contention and grants (upstream.rs has the timing; the MAC's
//! own rules come from `rules.rs`).

use super::grants::{Grant, Pending};
use super::rules::MacRules;
use super::spacing::SpacedGrants;
use super::state::Allocation;
use super::upstream::Upstream;
use super::ContentionAlloc;
use crate::time::SimTime;

impl Upstream {
    /// Decide message `next_index`: resolve the contention slots heard by now, queue the new
    /// requests, split the frame between contention and grants.
    pub(super) fn decide(&mut self) {
        let index = self.next_index;
        let now = self.decided_at(index);
        let first_minislot = self.first_minislot_of(index);
        self.next_index += 1;
        // A maintenance region first (DOCSIS; Scenario::check leaves room after it for the
        // contention slots and one data minislot); the rest of the frame as before.
        let maint = self.maintenance_at(self.clock.start(first_minislot)).min(self.cfg.frame_minislots - 1);
        let frame_minislots = self.cfg.frame_minislots - maint;
        let min_frame_minislots = self.cfg.min_frame_minislots.saturating_sub(maint);
        // A retired message's lists, emptied, hold this one (no allocation per MAP).
        let mut msg = self.spare.pop().unwrap_or_default();
        msg.groups.clear();
        msg.grants.clear();
        msg.tx.clear();
        let mut outcomes = std::mem::take(&mut msg.outcomes);
        outcomes.clear();
        let mut arrivals = std::mem::take(&mut self.arrivals);
        arrivals.clear();
        // 1. Contention regions whose last slot has arrived.
        for mi in 0..self.allocations.len() {
            let msg = &self.allocations[mi];
            if msg.resolved || !msg.acted {
                continue;
            }
            let end = self.clock.start(msg.first_minislot + (msg.maint + msg.contention) as u64);
            if end > now {
                continue;
            }
            let mut sent = std::mem::take(&mut self.allocations[mi].tx);
            // By offset, then station: the order a sort by (offset, station) gives.
            let mut tx = std::mem::take(&mut self.tx_sorted);
            sort_by_slot(&sent, &mut self.tx_counts, &mut tx);
            let (first_minislot, contention) = (self.allocations[mi].first_minislot, self.allocations[mi].contention);
            // `tx` offsets count from the message's first minislot, the maintenance region included.
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
                    let rq = self.cfg.kind.on_collision(&mut self.rq);
                    for &(_, s) in &tx[i..j] {
                        outcomes.push((s, Some(rq)));
                        self.stations[s as usize].stats.collisions += 1;
                        self.log(slot_end, s, "collision", first_minislot + offset as u64, 0);
                    }
                }
                i = j;
            }
            self.metrics.idle_slots += (contention - used) as u64;
            // The lists go back empty, their room kept for the message's next use (`spare`).
            tx.clear();
            self.tx_sorted = tx;
            sent.clear();
            self.allocations[mi].tx = sent;
            self.allocations[mi].resolved = true;
        }
        // 2. Piggybacked requests that have arrived; then everything in order of arrival.
        while self.incoming.front().is_some_and(|p| p.arrived <= now) {
            arrivals.push(self.incoming.pop_front().expect("non-empty"));
        }
        arrivals.sort_by_key(|p| p.arrived); // stable: slot order within one instant
        for p in arrivals.drain(..) {
            if p.spacing > 0 {
                match self.spaced.iter_mut().find(|q| q.station == p.station) {
                    Some(q) => q.add(p.left, p.spacing),
                    None => self.spaced.push(SpacedGrants::new(p.station, p.left, p.spacing)),
                }
            } else {
                self.grants.push(p);
            }
        }
        self.arrivals = arrivals;
        // 3. Split the frame: contention first, then grants.
        let unit = self.cfg.kind.unit_minislots(&self.cfg);
        let mut granted = std::mem::take(&mut self.granted);
        granted.clear();
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
                (min + used).clamp(min_frame_minislots.min(frame_minislots), frame_minislots) - used
            }
        };
        let length = maint
            + match self.cfg.contention {
                ContentionAlloc::Leftover(_) => contention + granted.iter().map(|g| g.units * unit).sum::<u32>(),
                ContentionAlloc::Fixed(_) => {
                    let used: u32 =
                        granted.iter().map(|g| g.units * unit).sum::<u32>() + spaced_slots.len() as u32 * unit;
                    (contention + used).clamp(min_frame_minislots.min(frame_minislots), frame_minislots)
                }
            };
        self.next_first_minislot = first_minislot + length as u64;
        let mut groups = std::mem::take(&mut msg.groups);
        self.cfg.kind.contention_groups(&mut self.rq, contention, &mut groups);
        let sent = now + self.cfg.headend_delay;
        let laid = if spaced_slots.is_empty() {
            let mut offset = maint + contention;
            let mut laid = std::mem::take(&mut msg.grants);
            for &g in &granted {
                laid.push((offset, g));
                offset += g.units * unit;
            }
            laid
        } else {
            Self::interleave(contention, unit, (frame_minislots - contention) / unit, &spaced_slots, &granted)
        };
        self.granted = granted;
        for &(offset, g) in &laid {
            self.stations[g.station as usize].stats.grants += 1;
            self.log(sent, g.station, "grant", first_minislot + offset as u64, g.units);
            self.metrics.data_slots += g.units as u64;
        }
        self.metrics.grants += laid.len() as u64;
        self.metrics.contention_slots += contention as u64;
        self.metrics.frames += 1;
        // `acted_at(index)`: decided at `now`, acted on by the farthest station after this.
        let acted_at = now + self.to_station() + self.max_one_way;
        self.allocations.push_back(Allocation {
            index,
            acted_at,
            first_minislot,
            maint,
            contention,
            groups,
            grants: laid,
            outcomes,
            tx: msg.tx,
            acted: false,
            resolved: contention == 0,
        });
        self.next_decide = self.decided_at(self.next_index);
    }

    /// ACK spacing: stations running it claim data slots of the frame starting at `first_minislot`
    /// (`cap` data slots after `contention` minislots) at their pace, before the scheduler shares
    /// out the rest (spacing.rs). Returns (data slot index, station), in slot order.
    pub(super) fn place_spaced(&mut self, first_minislot: u64, contention: u32, cap: u32) -> Vec<(usize, u32)> {
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
    pub(super) fn interleave(
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
}

/// Contention requests `(offset, station)` into `sorted`, ordered by offset, then station: a
/// counting sort by offset (a message has few contention slots, and most hold one request), then
/// the stations of each offset in order. The same order as a sort by (offset, station), without
/// a comparison sort of the whole list per MAP.
fn sort_by_slot(tx: &[(u32, u32)], counts: &mut Vec<u32>, sorted: &mut Vec<(u32, u32)>) {
    sorted.clear();
    let Some(low) = tx.iter().map(|t| t.0).min() else { return };
    let high = tx.iter().map(|t| t.0).max().expect("not empty");
    counts.clear();
    counts.resize((high - low) as usize + 2, 0);
    for t in tx {
        counts[(t.0 - low) as usize + 1] += 1;
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    // counts[k]: where offset low + k starts.
    sorted.resize(tx.len(), (0, 0));
    for &t in tx {
        let at = &mut counts[(t.0 - low) as usize];
        sorted[*at as usize] = t;
        *at += 1;
    }
    // Stations in order within each offset (insertion sort: the runs are short).
    for i in 1..sorted.len() {
        let mut j = i;
        while j > 0 && sorted[j - 1] > sorted[j] {
            sorted.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sort_by_slot;
    use proptest::prelude::*;

    proptest! {
        /// The counting sort gives what a sort by (offset, station) gives, for lists of distinct
        /// (offset, station) pairs as a message's contention makes them.
        #[test]
        fn sort_by_slot_is_the_sort(pairs in proptest::collection::btree_set((0u32..40, 0u32..500), 0..120), seed in any::<u64>()) {
            let mut tx: Vec<(u32, u32)> = pairs.into_iter().collect();
            // Shuffle deterministically from `seed` (the order stations act in).
            let mut x = seed | 1;
            for i in (1..tx.len()).rev() {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                tx.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let (mut counts, mut sorted) = (Vec::new(), Vec::new());
            sort_by_slot(&tx, &mut counts, &mut sorted);
            tx.sort_unstable();
            prop_assert_eq!(sorted, tx);
        }
    }
}
