//! Link: a FIFO buffer (queue.rs) drained at a fixed rate, then a propagation delay, with an
//! independent per-packet media loss and an optional random per-packet service time.
//!
//! Rules and their sources:
//! - serialisation: a packet of `size` bytes takes `size * 8 / rate` (rounded up to the
//!   nanosecond) once the packets ahead of it have left; then `delay` of propagation;
//! - media loss: each packet is lost with probability `loss`, independently, after service
//!   (Cohen & Ramanathan Sec. IV.C, media errors on the downstream and upstream channels, the
//!   papers' "Poisson" loss; Lakshman & Madhow Sec. II, random loss at the bottleneck), drawn
//!   from the link's own stream (DESIGN.md principle 2);
//! - jitter: an extra service time uniform in [0, jitter) per packet, FIFO order kept: a host's
//!   processing time, ns's TcpAgent `overhead_`, which Floyd & Jacobson (1992) use to break the
//!   phase effects of deterministic drop-tail queues.
//!
//! The fast path: service is first-come first-served at a fixed rate, so a packet's departure
//! time is known when it arrives. The link computes it then and the queue keeps the departure
//! times of the packets it holds, instead of scheduling a "transmission done" event per packet.
//! This is most of the engine's speed. A discipline that decides at the time of service (CoDel,
//! a shaper) would need a link that schedules its own service events instead (queue.rs).

use super::queue::{Queue, QueueLimit};
use crate::rng::Stream;
use crate::time::{tx_time, Nanos, SimTime};

/// What a link is, for the per-flow loss and drop counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    DownstreamChannel,
    UpstreamChannel,
    /// The cable modem's buffer, drained onto the PC's LAN.
    CmLan,
    Bottleneck,
    /// A flow's own access path (extra propagation delay, no queueing).
    Access,
}

/// A FIFO link with departure times computed on arrival (module comment).
pub struct Link {
    pub role: Role,
    pub rate_bps: u64,
    pub delay: Nanos,
    /// The buffer ahead of the transmitter: its limit, discipline and occupancy.
    pub queue: Queue,
    pub loss: f64,
    pub loss_rng: Stream,
    /// Random extra service time per packet, uniform in [0, jitter) ns, drawn from `loss_rng`'s
    /// stream (module comment).
    pub jitter: Nanos,
    last_departure: SimTime,
}

/// A packet admitted to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// When its last bit leaves the link (before propagation).
    pub departure: SimTime,
    /// Lost to media errors on this link (decided after service, per packet).
    pub lost: bool,
}

impl Link {
    /// A link with a drop-tail buffer of `limit`; `counts_in_service` as in `Queue`.
    pub fn new(
        role: Role,
        rate_bps: u64,
        delay: Nanos,
        limit: QueueLimit,
        counts_in_service: bool,
        loss: f64,
        loss_rng: Stream,
    ) -> Link {
        Link {
            role,
            rate_bps,
            delay,
            queue: Queue::new(limit, counts_in_service),
            loss,
            loss_rng,
            jitter: 0,
            last_departure: SimTime::ZERO,
        }
    }

    /// Packets held in the buffer at `now`, as the buffer limit counts them.
    pub fn occupancy(&mut self, now: SimTime) -> u64 {
        self.queue.occupancy(now).packets
    }

    /// Packets at the link at `now`, waiting or in service (Lakshman & Madhow's Q(t)).
    pub fn held(&mut self, now: SimTime) -> u64 {
        self.queue.held(now)
    }

    /// A packet of `size` bytes arrives at `now`: refused by the queue's discipline, or queued
    /// behind the others with its departure time fixed now.
    #[inline]
    pub fn admit(&mut self, now: SimTime, size: u32) -> Option<Admitted> {
        if !self.queue.admit(now, size) {
            return None;
        }
        let start = now.max(self.last_departure);
        let mut departure = start + tx_time(size, self.rate_bps);
        if self.jitter > 0 {
            departure = departure + self.loss_rng.below(self.jitter);
        }
        self.last_departure = departure;
        self.queue.push(start, departure, size);
        // Independent per-packet media loss (the papers' "Poisson" loss), after service.
        let lost = self.loss_rng.bernoulli(self.loss);
        Some(Admitted { departure, lost })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(limit: QueueLimit, counts_in_service: bool) -> Link {
        Link::new(Role::CmLan, 10_000_000, 0, limit, counts_in_service, 0.0, Stream::new(1, 1))
    }

    #[test]
    fn cm_buffer_counts_the_packet_on_the_lan() {
        // Cohen Sec. V.B: a 7-packet CM buffer holds 7 packets including the one being sent.
        let mut l = link(QueueLimit::Packets(7), true);
        for _ in 0..7 {
            assert!(l.admit(SimTime(0), 1500).is_some());
        }
        assert!(l.admit(SimTime(0), 1500).is_none());
    }

    #[test]
    fn bottleneck_buffer_excludes_the_packet_in_service() {
        // Lakshman & Madhow: B waiting packets plus one in service.
        let mut l = link(QueueLimit::Packets(2), false);
        for _ in 0..3 {
            assert!(l.admit(SimTime(0), 1000).is_some());
        }
        assert!(l.admit(SimTime(0), 1000).is_none());
        assert_eq!(l.occupancy(SimTime(0)), 2);
    }

    #[test]
    fn jitter_delays_within_bounds_and_keeps_fifo_order() {
        let mut l = Link::new(Role::Access, 0, 0, QueueLimit::Unbounded, true, 0.0, Stream::new(4, 9));
        l.jitter = 1_000_000;
        let mut last = SimTime::ZERO;
        let mut spread = 0;
        for i in 0..1000u64 {
            let now = SimTime(i * 100_000); // arrivals every 0.1 ms, jitter up to 1 ms
            let d = l.admit(now, 1040).unwrap().departure;
            assert!(d >= now && d >= last && d < now.max(last) + 1_000_000, "{d:?}");
            spread = spread.max(d - now);
            last = d;
        }
        assert!(spread > 500_000, "jitter draws span the interval");
    }

    #[test]
    fn fifo_departures_and_byte_limit() {
        let mut l = link(QueueLimit::Bytes(3000), true);
        assert_eq!(l.admit(SimTime(0), 1500).unwrap().departure, SimTime(1_200_000));
        assert_eq!(l.admit(SimTime(0), 1500).unwrap().departure, SimTime(2_400_000));
        assert!(l.admit(SimTime(0), 40).is_none());
        // the first packet has left at 1.2 ms: room again
        assert_eq!(l.admit(SimTime(1_200_000), 1500).unwrap().departure, SimTime(3_600_000));
        assert_eq!(l.occupancy(SimTime(2_400_000)), 1);
        assert_eq!(l.occupancy(SimTime(3_600_000)), 0);
        // an idle link starts at once
        assert_eq!(l.admit(SimTime(5_000_000), 40).unwrap().departure, SimTime(5_032_000));
    }
}
