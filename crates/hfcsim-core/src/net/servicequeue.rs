//! A service queue: a buffer whose decisions happen when a packet is served, not when it arrives.
//!
//! A FIFO link (link.rs) fixes each departure on arrival. A DOCSIS service flow cannot: its rate
//! cap (a token bucket, shaper.rs) holds the head until the bucket has its bytes, and CoDel
//! (aqm/codel.rs) decides at dequeue from the head's sojourn time. So this part keeps the packets
//! it holds (by tag, the world keeps the packets themselves) and schedules its own service event,
//! like the upstream MAC (DESIGN.md, "The network of parts"). It is a pure state machine handed
//! the time.
//!
//! Rules and their sources:
//! - buffer: a limit in bytes or packets on the packets waiting; an arrival that does not fit is
//!   dropped (tail drop). With a transmitter (`rate_bps` > 0) the packet being sent has left the
//!   buffer, as a qdisc's packet has once the driver takes it;
//! - the rate cap: the head leaves when the bucket holds its counted bytes (shaper.rs; DOCSIS
//!   MULPI Annex C.2.2.7.2) and the transmitter is free, then takes `wire` bytes at `rate_bps`
//!   (0: no serialisation, the cap alone) and `delay` of propagation;
//! - PIE and DOCSIS-PIE (RFC 8033, RFC 8034; aqm/pie.rs) decide at enqueue. The queue delay they
//!   are given is the bytes queued over the drain rate, the cap's rate (RFC 8034 Sec. 4.2 uses the
//!   configured rate; for RFC 8033 this is its Sec. 4.2 estimate by Little's law with a known
//!   rate: chosen, the link has no departure-rate measurement to offer) or else the link's rate.
//!   Their periodic update is brought up to date at every arrival and departure, since the queue
//!   cannot change in between;
//! - CoDel (RFC 8289; aqm/codel.rs) decides at dequeue from each head's sojourn time. A head that
//!   CoDel's drop loop dequeues after a drop is sent at once (RFC 8289 Sec. 5.5), even when the
//!   bucket holds less than it needs; it then runs a debt (chosen: the RFC's loop knows no
//!   shaper; the long-run rate stays the cap's).

use super::aqm::{Codel, Pie};
use super::link::Framing;
use super::queue::QueueLimit;
use super::shaper::TokenBucket;
use crate::rng::Stream;
use crate::time::{tx_time, Nanos, SimTime, NANOS_PER_SEC};
use std::collections::VecDeque;

/// What decides, beyond the buffer limit, whether a packet is dropped.
pub enum Aqm {
    /// Only the limit: tail drop.
    DropTail,
    /// PIE or DOCSIS-PIE (by its configuration), at enqueue.
    Pie(Box<Pie>),
    /// CoDel, at dequeue.
    Codel(Box<Codel>),
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueDrop {
    /// It did not fit under the limit.
    Full,
    /// The AQM dropped it.
    Aqm,
}

/// What a service queue did at its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueOut {
    /// The packet `tag` leaves; it reaches the next element at `at` (service and propagation).
    Sent { tag: u64, at: SimTime },
    /// CoDel dropped the packet `tag` at dequeue.
    Dropped { tag: u64 },
}

/// Counters of one service queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub sent: u64,
    pub drops_full: u64,
    pub drops_aqm: u64,
    /// Most bytes waiting at once.
    pub max_bytes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Held {
    tag: u64,
    size: u32,
    since: SimTime,
}

/// A buffer with a rate cap and an AQM, ahead of a transmitter (module comment).
pub struct ServiceQueue {
    pub name: String,
    limit: QueueLimit,
    bucket: Option<TokenBucket>,
    /// The bytes of a packet the bucket counts (MULPI C.2.2.7.2: its Ethernet frame).
    counted: Framing,
    rate_bps: u64,
    /// The bytes of a packet on the wire after the queue.
    wire: Framing,
    delay: Nanos,
    aqm: Aqm,
    rng: Stream,
    q: VecDeque<Held>,
    bytes: u64,
    /// When the transmitter is free.
    free_at: SimTime,
    pub stats: QueueStats,
    dropped: Vec<u64>,
}

impl ServiceQueue {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        limit: QueueLimit,
        bucket: Option<TokenBucket>,
        counted: Framing,
        rate_bps: u64,
        wire: Framing,
        delay: Nanos,
        aqm: Aqm,
        rng: Stream,
    ) -> ServiceQueue {
        assert!(!matches!(limit, QueueLimit::Cells(_)), "a service queue counts bytes or packets");
        ServiceQueue {
            name,
            limit,
            bucket,
            counted,
            rate_bps,
            wire,
            delay,
            aqm,
            rng,
            q: VecDeque::new(),
            bytes: 0,
            free_at: SimTime::ZERO,
            stats: QueueStats::default(),
            dropped: Vec::new(),
        }
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Packets waiting.
    pub fn packets(&self) -> usize {
        self.q.len()
    }

    /// The queue delay an AQM is told: bytes queued over the drain rate (module comment).
    fn qdelay(&self) -> Nanos {
        let rate = self.bucket.as_ref().map_or(self.rate_bps, TokenBucket::rate_bps);
        if rate == 0 {
            return 0;
        }
        (self.bytes as u128 * 8 * NANOS_PER_SEC as u128 / rate as u128) as Nanos
    }

    /// Bring PIE's periodic update up to `now` before the queue changes.
    fn advance_aqm(&mut self, now: SimTime) {
        let qdelay = self.qdelay();
        if let Aqm::Pie(p) = &mut self.aqm {
            p.advance(now, qdelay);
        }
    }

    /// A packet `tag` of `size` (IP) bytes arrives at `now`: queued, or dropped and why.
    pub fn enqueue(&mut self, now: SimTime, tag: u64, size: u32) -> Result<(), QueueDrop> {
        self.advance_aqm(now);
        if let Aqm::Pie(p) = &mut self.aqm {
            if p.drop_on_enqueue(now, self.bytes, size, &mut self.rng) {
                self.stats.drops_aqm += 1;
                return Err(QueueDrop::Aqm);
            }
        }
        let fits = match self.limit {
            QueueLimit::Unbounded => true,
            QueueLimit::Packets(max) => (self.q.len() as u64) < max,
            QueueLimit::Bytes(max) => self.bytes + size as u64 <= max,
            QueueLimit::Cells(_) => unreachable!("checked in new"),
        };
        if !fits {
            self.stats.drops_full += 1;
            return Err(QueueDrop::Full);
        }
        self.q.push_back(Held { tag, size, since: now });
        self.bytes += size as u64;
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        Ok(())
    }

    /// When the head may leave: the transmitter free and the bucket holding its bytes.
    pub fn next_deadline(&self) -> Option<SimTime> {
        let head = self.q.front()?;
        let t = head.since.max(self.free_at);
        Some(match &self.bucket {
            Some(b) => b.conforms_at(t, self.counted.wire(head.size) as u64),
            None => t,
        })
    }

    /// Serve what is due at `now`.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<QueueOut>) {
        while self.next_deadline().is_some_and(|t| t <= now) {
            self.advance_aqm(now);
            let head = match &mut self.aqm {
                Aqm::Codel(c) => {
                    let (q, bytes) = (&mut self.q, &mut self.bytes);
                    let pop = || {
                        let h = q.pop_front()?;
                        *bytes -= h.size as u64;
                        Some((h, now - h.since, *bytes))
                    };
                    let mut dropped = Vec::new();
                    let sent = c.dequeue(now, pop, &mut dropped);
                    for h in dropped {
                        self.stats.drops_aqm += 1;
                        self.dropped.push(h.tag);
                    }
                    sent
                }
                _ => {
                    let h = self.q.pop_front();
                    if let Some(h) = h {
                        self.bytes -= h.size as u64;
                    }
                    h
                }
            };
            for tag in self.dropped.drain(..) {
                out.push(QueueOut::Dropped { tag });
            }
            let Some(h) = head else { break };
            if let Some(b) = self.bucket.as_mut() {
                b.take(now, self.counted.wire(h.size) as u64);
            }
            let departure = now + tx_time(self.wire.wire(h.size), self.rate_bps);
            self.free_at = departure;
            self.stats.sent += 1;
            out.push(QueueOut::Sent { tag: h.tag, at: departure + self.delay });
        }
    }
}
