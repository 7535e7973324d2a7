//! Elloumi et al.'s ACK-spacing algorithm (Sec. 6.2, Fig. 18): the station measures how far apart
//! TCP ACKs arrive at its MAC queue and asks the headend to grant its queued cells at that pace,
//! so the ACKs reach the TCP source spaced as the data packets that caused them.
//!
//! The station (Fig. 18, "When a new ACK is received"): if the MAC queue is not empty, the
//! inter-arrival time since the last ACK is a sample; the first sample since the last request sets
//! tau, later ones are folded in by the filter (min, max or mean). The last arrival time is kept in
//! every case. ("Each time a request for new data transmission is sent"): the request asks for its
//! cells "with a transmission rate tau/2" (an ACK is two cells, so ACKs leave tau apart) and tau is
//! reset. A request made while tau is 0 (no sample: the ACKs found the queue empty) asks for
//! ordinary grants.
//!
//! The headend (Sec. 6.2, "Feasibility": it "must be able to schedule grants for ACK transmissions
//! at a constant rate", a CBR service): a spaced request's cells are granted one data slot each at
//! a constant rate, one per spacing, by a virtual clock: the first cell takes the first free data
//! slot, and cell k is due one spacing after cell k - 1 was due and takes the first free data slot
//! that starts at or after that. Data slots exist only between a frame's contention slots, so a
//! cell is often a little late; the clock keeps the ideal times, so the rate over a frame is the one
//! asked for. Choices where the paper is silent, each marked where it is made:
//! - mean: the arithmetic mean of the samples since the last request;
//! - a virtual clock rather than "at least one spacing after the last grant": with a 2.27 ms
//!   frame whose data slots fill 1.36 ms, the latter gives about two cells per frame at a 0.78 ms
//!   spacing instead of 2.9, so the ACKs would leave slower than the data arrives;
//! - a new spaced request from a station that still has spaced cells waiting joins them and sets
//!   the spacing for what is left, keeping the clock; one that finds none waiting starts a new
//!   series (its first cell takes the first free slot);
//! - spaced grants are placed before the grant scheduler (FCFS or round robin) shares out the
//!   data slots left over, as a CBR service would be.

use crate::time::{Nanos, SimTime};

/// The filter that folds a new inter-arrival sample into tau (Fig. 18: "Min, Max or Mean"): the
/// schema's `modems.*.ack_spacing` (`Off`: no meter at all).
pub use crate::scenario::AckSpacing as Filter;

/// The station's side of Fig. 18: tau, measured over the ACKs that arrive at its MAC queue.
#[derive(Clone, Copy, Debug)]
pub struct Meter {
    filter: Filter,
    /// 0 = no sample since the last request (Fig. 18's tau == 0).
    tau: Nanos,
    sum: u128,
    samples: u64,
    last_arrival: Option<SimTime>,
}

impl Meter {
    pub fn new(filter: Filter) -> Meter {
        Meter { filter, tau: 0, sum: 0, samples: 0, last_arrival: None }
    }

    /// An ACK arrives at the MAC queue at `now`; `queue_not_empty`: the queue held something as it
    /// arrived (Fig. 18, "if MAC_queue_is_not_empty()").
    pub fn on_ack(&mut self, now: SimTime, queue_not_empty: bool) {
        if let (true, Some(last)) = (queue_not_empty, self.last_arrival) {
            let sample = now - last;
            self.sum += sample as u128;
            self.samples += 1;
            self.tau = if self.tau == 0 {
                sample
            } else {
                match self.filter {
                    Filter::Min => self.tau.min(sample),
                    Filter::Max => self.tau.max(sample),
                    Filter::Mean => (self.sum / self.samples as u128) as Nanos, // chosen: see module comment
                    Filter::Off => unreachable!("a station without ACK spacing has no meter"),
                }
            };
        }
        self.last_arrival = Some(now);
    }

    /// A request is sent: the grant spacing it asks for, tau / 2 per cell (0 = no spacing), and
    /// tau is reset (Fig. 18).
    pub fn on_request(&mut self) -> Nanos {
        let spacing = self.tau / 2;
        self.tau = 0;
        self.sum = 0;
        self.samples = 0;
        spacing
    }
}

/// The headend's constant-rate grants for one station.
#[derive(Clone, Copy, Debug)]
pub struct SpacedGrants {
    pub station: u32,
    /// Cells (data slots) still to grant.
    pub left: u32,
    /// Time between the cells' due times (the request's tau / 2).
    pub spacing: Nanos,
    /// When the next cell is due (headend time); None: a new series, due at once.
    pub due: Option<SimTime>,
}

impl SpacedGrants {
    /// A new series of `units` cells at `spacing`.
    pub fn new(station: u32, units: u32, spacing: Nanos) -> SpacedGrants {
        SpacedGrants { station, left: units, spacing, due: None }
    }

    /// Take a new spaced request: its cells join those left at its spacing, or start a new series
    /// when none are left (module comment).
    pub fn add(&mut self, units: u32, spacing: Nanos) {
        if self.left == 0 {
            self.due = None;
        }
        self.left += units;
        self.spacing = spacing;
    }

    /// Claim data slots among `free` (indexed like `starts`, the slots' start times in frame
    /// order) at the pace; returns the slot indices claimed, marking them taken.
    pub fn place(&mut self, starts: &[SimTime], free: &mut [bool], claimed: &mut Vec<usize>) {
        for (k, &start) in starts.iter().enumerate() {
            if self.left == 0 {
                break;
            }
            if !free[k] || self.due.is_some_and(|d| start < d) {
                continue;
            }
            free[k] = false;
            self.left -= 1;
            // The virtual clock: the next cell is due one spacing after this one was due.
            self.due = Some(self.due.unwrap_or(start) + self.spacing);
            claimed.push(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// ACKs at these times (ms), each finding the queue not empty except the first.
    fn feed(filter: Filter, arrivals_us: &[u64]) -> Meter {
        let mut m = Meter::new(filter);
        for (i, &us) in arrivals_us.iter().enumerate() {
            m.on_ack(SimTime(us * 1000), i > 0);
        }
        m
    }

    #[test]
    fn filters_on_a_hand_made_sequence() {
        // Inter-arrivals 1.55, 0.34, 3.10 ms: min 0.34, max 3.10, mean (1.55 + 0.34 + 3.10) / 3 = 1.663.
        let arrivals = [0, 1550, 1890, 4990];
        assert_eq!(feed(Filter::Min, &arrivals).on_request(), 340_000 / 2);
        assert_eq!(feed(Filter::Max, &arrivals).on_request(), 3_100_000 / 2);
        assert_eq!(feed(Filter::Mean, &arrivals).on_request(), 1_663_333 / 2);
    }

    #[test]
    fn samples_need_a_busy_queue_and_a_request_resets_tau() {
        let mut m = Meter::new(Filter::Min);
        m.on_ack(SimTime(0), false);
        m.on_ack(SimTime(2 * MS), false); // queue empty: no sample, but the arrival time is kept
        assert_eq!(m.on_request(), 0, "no sample: ordinary grants");
        m.on_ack(SimTime(3 * MS), true); // 1 ms after the last arrival
        assert_eq!(m.on_request(), MS / 2);
        assert_eq!(m.on_request(), 0, "reset by the request");
        m.on_ack(SimTime(5 * MS), true);
        m.on_ack(SimTime(8 * MS), true);
        assert_eq!(m.on_request(), MS, "min of 2 and 3 ms, halved");
    }

    #[test]
    fn spaced_grants_follow_a_virtual_clock_across_frames() {
        // Data slots every 0.17 ms from t = 1 ms; spacing 0.6 ms; 4 cells.
        let starts: Vec<SimTime> = (0..8).map(|k| SimTime(MS + k * 170_000)).collect();
        let mut free = vec![true; 8];
        free[0] = false; // taken by someone else
        let mut p = SpacedGrants::new(0, 4, 600_000);
        let mut claimed = vec![];
        p.place(&starts, &mut free, &mut claimed);
        // slot 1 (1.17 ms); next due 1.77 ms: slot 5 (1.85 ms); next due 2.37 ms: not in this frame
        assert_eq!(claimed, vec![1, 5]);
        assert_eq!((p.left, p.due), (2, Some(SimTime(2_370_000))));
        // The next frame's slots start at 2.5 ms: the cell due at 2.37 ms is late and takes slot 0;
        // the next is due at 2.97 ms, not 0.6 ms after 2.5: slot 3 (3.01 ms).
        let next: Vec<SimTime> = (0..8).map(|k| SimTime(2_500_000 + k * 170_000)).collect();
        let mut free = vec![true; 8];
        claimed.clear();
        p.place(&next, &mut free, &mut claimed);
        assert_eq!(claimed, vec![0, 3]);
        assert_eq!((p.left, p.due), (0, Some(SimTime(3_570_000))));
        // A request that finds nothing left starts a new series: its first cell goes at once.
        p.add(2, 200_000);
        let later: Vec<SimTime> = (0..4).map(|k| SimTime(3_000_000 + k * 100_000)).collect();
        let mut free = vec![true; 4];
        claimed.clear();
        p.place(&later, &mut free, &mut claimed);
        assert_eq!(claimed, vec![0, 2]);
        assert_eq!(p.due, Some(SimTime(3_400_000)));
        // one that finds cells left joins them, keeping the clock, at its own spacing
        p.left = 1;
        p.add(1, 100_000);
        assert_eq!((p.left, p.spacing, p.due), (2, 100_000, Some(SimTime(3_400_000))));
        // one that finds none starts a new series
        p.left = 0;
        p.add(1, 100_000);
        assert_eq!(p.due, None);
    }
}
