//! Packets and links: a link has a rate, a propagation delay, a FIFO drop-tail queue and an
//! independent per-packet (Bernoulli) media loss with its own random stream.

use crate::rng::Stream;
use crate::time::{tx_time, Nanos, SimTime};
use std::collections::VecDeque;

/// What a packet carries. Sequence numbers are data-stream byte offsets (the SYN is not
/// counted): 64 bits never wrap inside a run, so plain integer comparison is exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Syn,
    SynAck,
    /// Data segment `[seq, seq + len)`; `pkt_no` is its 1-based packet number.
    Data {
        seq: u64,
        len: u32,
        pkt_no: u32,
    },
    /// Cumulative acknowledgment of everything below `ack`, advertising `wnd` bytes.
    Ack {
        ack: u64,
        wnd: u64,
    },
}

/// Which way along the flow's path: forward = data sender to data receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    Forward,
    Reverse,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub way: Way,
    /// Index of the next link on the route.
    pub hop: u8,
    /// Bytes on the wire (payload + TCP/IP header).
    pub size: u32,
    pub kind: Kind,
    /// Chosen drop (scenario `drop_packets`): lost at the end of the first hop.
    pub chosen_drop: bool,
}

impl Packet {
    pub fn is_data(&self) -> bool {
        matches!(self.kind, Kind::Data { .. })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Unbounded,
    Bytes(u64),
    Packets(u64),
}

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

/// A FIFO link. Because service is first-come first-served at a fixed rate, each packet's
/// departure time is known when it arrives; the link keeps the departure times of the packets
/// it holds instead of scheduling a "transmission done" event per packet.
pub struct Link {
    pub role: Role,
    pub rate_bps: u64,
    pub delay: Nanos,
    pub limit: QueueLimit,
    /// Whether the packet being transmitted still occupies the buffer. True for the cable
    /// modem (Cohen Sec. V.B: while the first packet is sent on the LAN the CM has C - 1 free),
    /// false for Lakshman & Madhow's bottleneck (W_pipe = mu*T + B counts B waiting packets).
    pub counts_in_service: bool,
    pub loss: f64,
    pub loss_rng: Stream,
    /// Random extra service time per packet, uniform in [0, jitter) ns, drawn from `loss_rng`'s
    /// stream; FIFO order is kept. A host's processing time: ns's TcpAgent `overhead_`, which
    /// Floyd & Jacobson (1992) use to break the phase effects of deterministic drop-tail queues.
    pub jitter: Nanos,
    /// (start of service, departure, bytes) of every packet not yet departed, in FIFO order.
    held: VecDeque<(SimTime, SimTime, u32)>,
    held_bytes: u64,
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
            limit,
            counts_in_service,
            loss,
            loss_rng,
            jitter: 0,
            held: VecDeque::new(),
            held_bytes: 0,
            last_departure: SimTime::ZERO,
        }
    }

    fn prune(&mut self, now: SimTime) {
        while let Some(&(_, dep, size)) = self.held.front() {
            if dep > now {
                break;
            }
            self.held.pop_front();
            self.held_bytes -= size as u64;
        }
    }

    /// Packets and bytes in the buffer at `now` (after `prune`).
    fn occupancy_at(&self, now: SimTime) -> (u64, u64) {
        let (n, b) = (self.held.len() as u64, self.held_bytes);
        match self.held.front() {
            Some(&(start, _, size)) if !self.counts_in_service && start <= now => (n - 1, b - size as u64),
            _ => (n, b),
        }
    }

    /// Packets held in the buffer at `now`, as the buffer limit counts them.
    pub fn occupancy(&mut self, now: SimTime) -> u64 {
        self.prune(now);
        self.occupancy_at(now).0
    }

    /// Packets at the link at `now`, waiting or in service (Lakshman & Madhow's Q(t)).
    pub fn held(&mut self, now: SimTime) -> u64 {
        self.prune(now);
        self.held.len() as u64
    }

    /// A packet of `size` bytes arrives at `now`: drop-tail, or queue it behind the others.
    pub fn admit(&mut self, now: SimTime, size: u32) -> Option<Admitted> {
        self.prune(now);
        let (n, b) = self.occupancy_at(now);
        let full = match self.limit {
            QueueLimit::Unbounded => false,
            QueueLimit::Packets(max) => n + 1 > max,
            QueueLimit::Bytes(max) => b + size as u64 > max,
        };
        if full {
            return None;
        }
        let start = now.max(self.last_departure);
        let mut departure = start + tx_time(size, self.rate_bps);
        if self.jitter > 0 {
            departure = departure + self.loss_rng.below(self.jitter);
        }
        self.last_departure = departure;
        self.held.push_back((start, departure, size));
        self.held_bytes += size as u64;
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
