//! Queue: a FIFO buffer with a limit, and the discipline that decides whether an arriving packet
//! may enter it.
//!
//! The buffer does not hold packets, only what its occupancy depends on: for every packet not yet
//! departed, its start of service, its departure and its size. A FIFO link (link.rs) knows these
//! on arrival, so the occupancy at any later time follows from them with no per-packet departure
//! event.
//!
//! Occupancy is counted as the paper being reproduced counts it (`counts_in_service`):
//! - Cohen & Ramanathan Sec. V.B: the cable modem's buffer of C packets has C - 1 free places
//!   while the first is being sent on the LAN, so the packet in service counts;
//! - Lakshman & Madhow Sec. II, eq. (1): W_pipe = mu*T + B counts B *waiting* packets, so the
//!   packet in service does not.
//!
//! # Disciplines: the plug point
//!
//! `Discipline` is asked on every arrival: `admit(now, occupancy, size, limit)`. Drop-tail (admit
//! whatever fits under the limit, by bytes or by packets, or everything when unbounded) is the
//! only one today. A new discipline is a new variant whose state and rules live in their own file
//! under `net/`, each rule citing its source, dispatched by the `match` in `Discipline::admit`
//! (an enum, not `dyn`: this is on the per-packet path). Planned, not implemented:
//! - early packet discard for ATM switches (Elloumi et al. Sec. 3, switches SW1 and SW2, after
//!   Romanow & Floyd 1995): refuse a whole packet when the buffer is above a threshold as its
//!   first cell arrives; fits `admit` as is, with the limit counted in cells;
//! - PIE (RFC 8033) and DOCSIS-PIE (RFC 8034): a random drop at enqueue with a probability
//!   updated every T_UPDATE from the queue delay; fits `admit` (the update can be brought up to
//!   `now` on each arrival) given a random stream of its own;
//! - CoDel (RFC 8289) drops at dequeue from the sojourn time, and a token-bucket shaper (DOCSIS
//!   rate caps) delays service instead of dropping. Both decide at the time of service, so a link
//!   using them must leave the departure-on-arrival fast path and schedule its own service events
//!   (DESIGN.md, "The network of parts"); their admission test stays here.

use crate::time::SimTime;
use std::collections::VecDeque;

/// The buffer's capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Unbounded,
    Bytes(u64),
    Packets(u64),
}

impl QueueLimit {
    /// A buffer bounded in bytes or in packets (bytes win if both are given; the scenario allows
    /// at most one), unbounded with neither: the CM buffer and a station's MAC FIFO.
    pub fn bytes_or_packets(bytes: Option<u64>, packets: Option<u64>) -> QueueLimit {
        match (bytes, packets) {
            (Some(b), _) => QueueLimit::Bytes(b),
            (None, Some(p)) => QueueLimit::Packets(p),
            (None, None) => QueueLimit::Unbounded,
        }
    }

    /// Whether a packet of `size` bytes fits beside `occ`.
    #[inline]
    pub fn fits(self, occ: Occupancy, size: u32) -> bool {
        match self {
            QueueLimit::Unbounded => true,
            QueueLimit::Packets(max) => occ.packets < max,
            QueueLimit::Bytes(max) => occ.bytes + size as u64 <= max,
        }
    }
}

/// What the buffer holds at one instant, as its limit counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    pub packets: u64,
    pub bytes: u64,
}

/// Decides whether an arriving packet enters the buffer (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// Admit while the packet fits under the limit, else drop the arriving packet (tail drop).
    DropTail,
}

impl Discipline {
    /// Whether a packet of `size` bytes arriving at `now` is admitted, given the buffer's
    /// occupancy without it and the buffer's limit.
    #[inline]
    pub fn admit(&mut self, _now: SimTime, occ: Occupancy, size: u32, limit: QueueLimit) -> bool {
        match self {
            Discipline::DropTail => limit.fits(occ, size),
        }
    }
}

/// A FIFO buffer: its limit, its discipline and the packets it holds.
pub struct Queue {
    pub limit: QueueLimit,
    pub discipline: Discipline,
    /// Whether the packet being transmitted still occupies the buffer (module comment).
    pub counts_in_service: bool,
    /// (start of service, departure, bytes) of every packet not yet departed, in FIFO order.
    held: VecDeque<(SimTime, SimTime, u32)>,
    held_bytes: u64,
}

impl Queue {
    /// A drop-tail buffer.
    pub fn new(limit: QueueLimit, counts_in_service: bool) -> Queue {
        Queue { limit, discipline: Discipline::DropTail, counts_in_service, held: VecDeque::new(), held_bytes: 0 }
    }

    /// Forget the packets that have departed by `now`.
    #[inline]
    fn prune(&mut self, now: SimTime) {
        while let Some(&(_, dep, size)) = self.held.front() {
            if dep > now {
                break;
            }
            self.held.pop_front();
            self.held_bytes -= size as u64;
        }
    }

    /// Occupancy at `now` as the limit counts it (after `prune`).
    #[inline]
    fn occupancy_at(&self, now: SimTime) -> Occupancy {
        let (packets, bytes) = (self.held.len() as u64, self.held_bytes);
        match self.held.front() {
            Some(&(start, _, size)) if !self.counts_in_service && start <= now => {
                Occupancy { packets: packets - 1, bytes: bytes - size as u64 }
            }
            _ => Occupancy { packets, bytes },
        }
    }

    /// Occupancy at `now`, as the buffer limit counts it.
    pub fn occupancy(&mut self, now: SimTime) -> Occupancy {
        self.prune(now);
        self.occupancy_at(now)
    }

    /// Packets at the link at `now`, waiting or in service (Lakshman & Madhow's Q(t)).
    pub fn held(&mut self, now: SimTime) -> u64 {
        self.prune(now);
        self.held.len() as u64
    }

    /// Ask the discipline whether a packet of `size` bytes arriving at `now` may enter.
    #[inline]
    pub fn admit(&mut self, now: SimTime, size: u32) -> bool {
        self.prune(now);
        let occ = self.occupancy_at(now);
        self.discipline.admit(now, occ, size, self.limit)
    }

    /// Hold an admitted packet until `departure`; FIFO: departures never decrease.
    #[inline]
    pub fn push(&mut self, start: SimTime, departure: SimTime, size: u32) {
        self.held.push_back((start, departure, size));
        self.held_bytes += size as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_or_packets_picks_the_given_bound() {
        assert_eq!(QueueLimit::bytes_or_packets(Some(10_240), None), QueueLimit::Bytes(10_240));
        assert_eq!(QueueLimit::bytes_or_packets(None, Some(7)), QueueLimit::Packets(7));
        assert_eq!(QueueLimit::bytes_or_packets(None, None), QueueLimit::Unbounded);
    }

    fn occ(packets: u64, bytes: u64) -> Occupancy {
        Occupancy { packets, bytes }
    }

    #[test]
    fn drop_tail_limits() {
        let mut d = Discipline::DropTail;
        let t = SimTime::ZERO;
        let cases = [
            (QueueLimit::Unbounded, occ(1 << 40, 1 << 50), 1500, true),
            (QueueLimit::Packets(7), occ(6, 9000), 1500, true),
            (QueueLimit::Packets(7), occ(7, 0), 40, false),
            (QueueLimit::Bytes(3000), occ(1, 1500), 1500, true),
            (QueueLimit::Bytes(3000), occ(2, 3000), 40, false),
            (QueueLimit::Bytes(3000), occ(0, 0), 3001, false),
        ];
        for (limit, o, size, want) in cases {
            assert_eq!(d.admit(t, o, size, limit), want, "{limit:?} {o:?} {size}");
        }
    }

    #[test]
    fn occupancy_counts_the_packet_in_service_only_when_asked() {
        for (counts, want) in [(true, occ(2, 2000)), (false, occ(1, 1000))] {
            let mut q = Queue::new(QueueLimit::Unbounded, counts);
            q.push(SimTime(0), SimTime(10), 1000);
            q.push(SimTime(10), SimTime(20), 1000);
            assert_eq!(q.occupancy(SimTime(5)), want);
            assert_eq!(q.held(SimTime(5)), 2);
            assert_eq!(q.held(SimTime(10)), 1);
            assert_eq!(q.held(SimTime(20)), 0);
        }
    }
}
