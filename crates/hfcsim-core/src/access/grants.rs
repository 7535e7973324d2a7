//! The headend's grant schedulers (Elloumi et al. Sec. 2): requests that reached the headend wait
//! in one queue in order of arrival; each frame (802.14) or MAP (DOCSIS) the scheduler hands out
//! the data capacity left after contention.
//! - FCFS: "the HE grants each station the totality of the requested slots before giving any
//!   grants to other stations".
//! - Round robin: "the grants are distributed to stations in a round robin fashion. A station
//!   sends a cell and waits for all the other stations that have successfully transmitted
//!   requests": one data unit per station per turn. In 802.14 the unit is a data slot (one cell)
//!   and a station's requests are merged into one entry; in DOCSIS a grant must carry whole
//!   packets, so the unit is one request (chosen: DOCSIS leaves the scheduler to the CMTS vendor).
//!
//! A request larger than a whole frame's data capacity is granted in pieces even when
//! fragmentation is off, or it could never be sent (chosen; DOCSIS would need fragmentation).

use crate::access::GrantScheduler;
use crate::time::{Nanos, SimTime};
use std::collections::VecDeque;

/// A request waiting at the headend, in grant units (802.14 data slots, DOCSIS minislots).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    pub station: u32,
    /// The station's number for this request (DOCSIS grants name it; 802.14 ignores it).
    pub id: u64,
    pub left: u32,
    /// When it reached the headend.
    pub arrived: SimTime,
    /// Elloumi et al.'s ACK spacing: grant its units this far apart (spacing.rs); 0 = no spacing.
    pub spacing: Nanos,
}

/// One grant of a frame: `units` for `station`'s request `id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    pub station: u32,
    pub id: u64,
    pub units: u32,
}

#[derive(Debug)]
pub struct GrantQueue {
    scheduler: GrantScheduler,
    /// Grants may cover part of a request (802.14 always; DOCSIS with fragmentation).
    partial: bool,
    /// Round robin serves stations, not requests: a station's new request joins its entry.
    merge_by_station: bool,
    queue: VecDeque<Pending>,
}

impl GrantQueue {
    pub fn new(scheduler: GrantScheduler, partial: bool, merge_by_station: bool) -> GrantQueue {
        GrantQueue { scheduler, partial, merge_by_station, queue: VecDeque::new() }
    }

    pub fn push(&mut self, r: Pending) {
        if self.merge_by_station && self.scheduler == GrantScheduler::Rr {
            if let Some(p) = self.queue.iter_mut().find(|p| p.station == r.station) {
                p.left += r.left;
                return;
            }
        }
        self.queue.push_back(r);
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Stations with a request still waiting (DOCSIS pending grants).
    pub fn waiting(&self) -> impl Iterator<Item = &Pending> {
        self.queue.iter()
    }

    /// Hand out up to `capacity` units; `frame_capacity` is the most one frame could ever give.
    /// Grants are appended to `out` in the order they are laid out in the frame.
    pub fn schedule(&mut self, mut capacity: u32, frame_capacity: u32, out: &mut Vec<Grant>) {
        let start = out.len();
        match self.scheduler {
            GrantScheduler::Fcfs => {
                while let Some(head) = self.queue.front_mut() {
                    if capacity == 0 {
                        break;
                    }
                    let may_split = self.partial || head.left > frame_capacity;
                    if head.left > capacity && !may_split {
                        break;
                    }
                    let g = head.left.min(capacity);
                    capacity -= g;
                    head.left -= g;
                    push_grant(out, start, head.station, head.id, g);
                    if head.left == 0 {
                        self.queue.pop_front();
                    }
                }
            }
            GrantScheduler::Rr => {
                // One unit (802.14) or one request (DOCSIS) per turn, until a whole pass gives nothing.
                let unit_turns = self.merge_by_station;
                let mut idle_turns = 0;
                while capacity > 0 && idle_turns < self.queue.len() {
                    let mut r = self.queue.pop_front().expect("non-empty");
                    let want = if unit_turns { 1 } else { r.left };
                    let may_split = self.partial || r.left > frame_capacity;
                    let g = if want <= capacity {
                        want
                    } else if may_split {
                        capacity
                    } else {
                        0
                    };
                    if g > 0 {
                        capacity -= g;
                        r.left -= g;
                        push_grant(out, start, r.station, r.id, g);
                        idle_turns = 0;
                    } else {
                        idle_turns += 1;
                    }
                    if r.left > 0 {
                        self.queue.push_back(r);
                    }
                }
            }
        }
    }
}

/// Consecutive units for the same request in one frame form one grant.
fn push_grant(out: &mut Vec<Grant>, start: usize, station: u32, id: u64, units: u32) {
    if out.len() > start {
        let last = out.last_mut().expect("non-empty");
        if last.station == station && last.id == id {
            last.units += units;
            return;
        }
    }
    out.push(Grant { station, id, units });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(station: u32, left: u32) -> Pending {
        Pending { station, id: station as u64, left, arrived: SimTime::ZERO, spacing: 0 }
    }

    fn order(q: &mut GrantQueue, capacity: u32) -> Vec<(u32, u32)> {
        let mut out = vec![];
        q.schedule(capacity, 100, &mut out);
        out.iter().map(|g| (g.station, g.units)).collect()
    }

    #[test]
    fn fcfs_against_round_robin_for_three_requests() {
        // Stations 0, 1, 2 ask for 3, 2 and 2 data slots, in that order; 8 slots per frame.
        let mut fcfs = GrantQueue::new(GrantScheduler::Fcfs, true, true);
        let mut rr = GrantQueue::new(GrantScheduler::Rr, true, true);
        for (s, n) in [(0, 3), (1, 2), (2, 2)] {
            fcfs.push(req(s, n));
            rr.push(req(s, n));
        }
        // FCFS: each whole request before the next.
        assert_eq!(order(&mut fcfs, 8), vec![(0, 3), (1, 2), (2, 2)]);
        // RR: one slot each in turn: 0 1 2 0 1 2 0.
        let mut out = vec![];
        rr.schedule(8, 100, &mut out);
        let slots: Vec<u32> = out.iter().flat_map(|g| std::iter::repeat_n(g.station, g.units as usize)).collect();
        assert_eq!(slots, vec![0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn fcfs_splits_across_frames_only_when_allowed() {
        let mut q = GrantQueue::new(GrantScheduler::Fcfs, true, true);
        q.push(req(0, 5));
        q.push(req(1, 1));
        assert_eq!(order(&mut q, 3), vec![(0, 3)]);
        assert_eq!(order(&mut q, 3), vec![(0, 2), (1, 1)]);
        // DOCSIS without fragmentation: a request that does not fit waits whole (head of line).
        let mut d = GrantQueue::new(GrantScheduler::Fcfs, false, false);
        d.push(req(0, 5));
        d.push(req(1, 1));
        assert_eq!(order(&mut d, 3), vec![]);
        assert_eq!(order(&mut d, 6), vec![(0, 5), (1, 1)]);
    }

    #[test]
    fn round_robin_merges_a_stations_requests_in_802_14() {
        let mut q = GrantQueue::new(GrantScheduler::Rr, true, true);
        q.push(req(0, 1));
        q.push(req(1, 1));
        q.push(req(0, 2));
        assert_eq!(q.waiting().count(), 2);
        assert_eq!(order(&mut q, 10), vec![(0, 1), (1, 1), (0, 2)]);
    }
}
