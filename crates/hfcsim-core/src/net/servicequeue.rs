//! A service queue: a buffer whose decisions happen when a packet is served, not when it arrives.
//!
//! A FIFO link (link.rs) fixes each departure on arrival. A DOCSIS service flow cannot: its rate
//! cap (a token bucket, shaper.rs) holds the head until the bucket has its bytes, and CoDel
//! (aqm/codel.rs) decides at dequeue from the head's sojourn time. So this part keeps the packets
//! it holds (by tag, the world keeps the packets themselves) and schedules its own service event,
//! like the upstream MAC (docs/design.md, "The network of parts, and the fabric"). It is a pure state machine handed
//! the time.
//!
//! Rules and their sources:
//! - buffer: a limit in bytes or packets on the packets waiting; an arrival that does not fit is
//!   dropped (tail drop). With a transmitter (`rate_bps` > 0) the packet being sent has left the
//!   buffer, as a qdisc's packet has once the driver takes it; a queue that replaces a link's
//!   buffer counts as that buffer does (queue.rs): the cable modem's (`counting_in_service`) counts
//!   the packet on the LAN too (Cohen & Ramanathan Sec. V.B), and Lakshman & Madhow's bottleneck
//!   (Sec. II, eq. 1: B places besides the one in service) lets a packet that finds the transmitter
//!   idle and nobody waiting go straight into service, whatever the limit;
//! - the rate cap: the head leaves when the bucket holds its counted bytes (shaper.rs; DOCSIS
//!   MULPI Annex C.2.2.7.2) and the transmitter is free, then takes `wire` bytes at `rate_bps`
//!   (0: no serialisation, the cap alone) and `delay` of propagation;
//! - PIE and DOCSIS-PIE (RFC 8033, RFC 8034; aqm/pie.rs) decide at enqueue. The queue delay they
//!   are given is the bytes queued over the drain rate, the cap's rate (RFC 8034 Sec. 4.2 uses the
//!   configured rate; for RFC 8033 this is its Sec. 4.2 estimate by Little's law with a known
//!   rate: chosen, the link has no departure-rate measurement to offer) or else the link's rate.
//!   Their periodic update is brought up to date at every arrival and departure, since the queue
//!   cannot change in between;
//! - delay estimates, `measured`: a queue that shares a channel (the CMTS's downstream service
//!   flows, pulled by shared.rs) drains at whatever the scheduler gives it, not at its cap, so it
//!   measures its departure rate (RFC 8033 Sec. 5.2, as Linux's sch_pie with `dq_rate_estimator`;
//!   pie.rs `DepartureRate`), and its AQMs divide its bytes by the lower of that and its configured
//!   rate (a flow never drains faster than its cap; the measurement says when it drains slower):
//!   PIE's delay, and the dual queue's Annex O estimates with that rate for MAX_RATE (chosen: Annex
//!   O, written for the modem, divides by the configured rate, which an oversubscribed CMTS does not
//!   give its flows). Until the first measurement ends, the configured rate (chosen: Linux's sch_pie
//!   assumes no delay then, which lets a slow start overshoot before the AQM acts at all);
//! - CoDel (RFC 8289; aqm/codel.rs) decides at dequeue from each head's sojourn time. A head that
//!   CoDel's drop loop dequeues after a drop is sent at once (RFC 8289 Sec. 5.5), even when the
//!   bucket holds less than it needs; it then runs a debt (chosen: the RFC's loop knows no
//!   shaper; the long-run rate stays the cap's).
//! - ECN: where PIE (RFC 8033 Sec. 5.1) or CoDel (RFC 8289 Sec. 5) would drop an ECN-capable
//!   packet they mark it CE instead (aqm/), counted as `marks_aqm`; drop-tail drops.

//! - Low Latency DOCSIS (aqm/dualq.rs; MULPI Annex N-P, RFC 9332): the queue becomes an aggregate
//!   service flow holding a classic (C) queue, the buffer above, and a low-latency (L) queue with
//!   its own buffer. The classifier (`lld_input`) reads each packet; the dual queue's tests decide
//!   at enqueue (the L queue's immediate AQM and queue protection, the C queue's coupled
//!   DOCSIS-PIE), and its weighted scheduler chooses the next head; the aggregate's rate cap
//!   (the Aggregate Maximum Sustained Rate) and the transmitter serve both.

use super::aqm::dualq::{classify, CVerdict, LVerdict, Lane};
use super::aqm::pie::DepartureRate;
use super::aqm::{Codel, DualQ, Pie, Verdict};
use super::link::{Framing, Role};
use super::queue::QueueLimit;
use super::shaper::TokenBucket;
use super::wait::WaitStats;
use crate::packet::{Ecn, Kind, Packet};
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
    /// Low Latency DOCSIS's dual queue: the queue's own buffer is the classic queue's, `Lld`
    /// holds the low-latency one.
    Lld(Box<Lld>),
}

/// The low-latency half of an LLD aggregate service flow, and the dual queue deciding for both.
pub struct Lld {
    pub dq: DualQ,
    q: VecDeque<Held>,
    bytes: u64,
}

impl Lld {
    pub fn new(dq: DualQ) -> Lld {
        Lld { dq, q: VecDeque::new(), bytes: 0 }
    }
}

/// What the LLD classifier reads of a packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LldInput {
    pub ecn: Ecn,
    /// DSCP 45 (NQB).
    pub nqb: bool,
    /// The microflow (aqm/dualq.rs `uflow`: flow id and direction stand for the 5-tuple).
    pub uflow: u64,
}

/// The one place the LLD classifier reads a packet: its ECN field (ECT(1) and CE to the L queue)
/// and its DSCP, 45 (NQB) only on the echoes of a ping with `pings.*.nqb` (packet.rs `Kind::Echo`) and
/// the datagrams of a game or call with `games.*.nqb` / `calls.*.nqb` (`Kind::Datagram`).
pub fn lld_input(pkt: &Packet) -> LldInput {
    let nqb = matches!(pkt.kind, Kind::Echo { nqb: true, .. } | Kind::Datagram { nqb: true, .. });
    LldInput { ecn: pkt.ecn, nqb, uflow: super::aqm::dualq::uflow(pkt.flow, pkt.way) }
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
    /// The packet `tag` leaves, having waited `waited` ns; it reaches the next element at `at`,
    /// `tx` ns of it its service.
    Sent { tag: u64, at: SimTime, waited: Nanos, tx: Nanos },
    /// CoDel dropped the packet `tag` at dequeue.
    Dropped { tag: u64 },
    /// CoDel marked the packet `tag` CE (RFC 8289 Sec. 5) as it left; its `Sent` follows.
    Marked { tag: u64 },
}

/// Counters of one service queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub sent: u64,
    pub drops_full: u64,
    pub drops_aqm: u64,
    /// ECN-capable packets the AQM marked CE where it would have dropped them.
    pub marks_aqm: u64,
    /// Most bytes waiting at once.
    pub max_bytes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Held {
    tag: u64,
    size: u32,
    since: SimTime,
    /// ECN-capable: an AQM marks it instead of dropping it.
    ect: bool,
}

/// A buffer with a rate cap and an AQM, ahead of a transmitter (module comment).
pub struct ServiceQueue {
    pub name: String,
    /// What the queue is, for the per-flow drop counters (link.rs): a cable modem's buffer toward
    /// the PC (`Role::CmLan`) also counts its drops as the flow's `cm_buffer_drops`.
    pub role: Role,
    limit: QueueLimit,
    /// Whether the limit counts the packet on the transmitter (module comment).
    counts_in_service: bool,
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
    /// IP bytes of the packet on the transmitter until `free_at`.
    on_wire: u32,
    /// Served by a shared link (shared.rs) rather than by its own events (`pulled`).
    pulled: bool,
    /// Its AQMs divide its bytes by its measured departure rate, not the configured one (`measured`).
    measured: Option<DepartureRate>,
    pub stats: QueueStats,
    /// How long its packets waited (arrival to service), and what arrivals found.
    pub waits: WaitStats,
    dropped: Vec<u64>,
}

impl ServiceQueue {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        role: Role,
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
            role,
            limit,
            counts_in_service: false,
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
            on_wire: 0,
            pulled: false,
            measured: None,
            stats: QueueStats::default(),
            waits: WaitStats::default(),
            dropped: Vec::new(),
        }
    }

    /// Served by a shared link (shared.rs): the link, when it can send, asks `head_ready` and takes
    /// the head with `serve`; the queue has no events of its own and no transmitter.
    pub fn pulled(mut self) -> ServiceQueue {
        self.pulled = true;
        self
    }

    pub fn is_pulled(&self) -> bool {
        self.pulled
    }

    /// Its AQMs estimate the queue's delay from its measured departure rate (module comment, "delay
    /// estimates"), instead of the configured rate.
    pub fn measured(mut self) -> ServiceQueue {
        self.measured = Some(DepartureRate::default());
        self
    }

    /// The limit counts the packet being sent as well as those waiting (Cohen & Ramanathan Sec.
    /// V.B: a cable modem buffer of C packets has C - 1 free places while one is on the LAN).
    pub fn counting_in_service(mut self) -> ServiceQueue {
        self.counts_in_service = true;
        self
    }

    /// Bytes waiting (both queues of an LLD aggregate).
    pub fn bytes(&self) -> u64 {
        match &self.aqm {
            Aqm::Lld(l) => self.bytes + l.bytes,
            _ => self.bytes,
        }
    }

    /// Packets waiting (both queues of an LLD aggregate).
    pub fn packets(&self) -> usize {
        match &self.aqm {
            Aqm::Lld(l) => self.q.len() + l.q.len(),
            _ => self.q.len(),
        }
    }

    /// The dual queue of an LLD aggregate.
    pub fn dualq(&self) -> Option<&DualQ> {
        match &self.aqm {
            Aqm::Lld(l) => Some(&l.dq),
            _ => None,
        }
    }

    /// The rate the queue drains at, as its AQMs estimate it: the cap's (or the transmitter's), or,
    /// measured (module comment, "delay estimates"), the measured departure rate where it is lower.
    fn drain_rate(&self) -> u64 {
        let configured = self.bucket.as_ref().map_or(self.rate_bps, TokenBucket::rate_bps);
        match self.measured.and_then(|m| m.rate_bps()) {
            Some(measured) if configured == 0 || measured < configured => measured,
            _ => configured,
        }
    }

    /// The queue delay an AQM is told: bytes queued over the drain rate (`drain_rate`).
    fn delay_estimate(&self) -> Nanos {
        let rate = self.drain_rate();
        if rate == 0 {
            return 0;
        }
        (self.bytes as u128 * 8 * NANOS_PER_SEC as u128 / rate as u128) as Nanos
    }

    /// Bring PIE's periodic update up to `now` before the queue changes.
    fn advance_aqm(&mut self, now: SimTime) {
        let qdelay = self.delay_estimate();
        match &mut self.aqm {
            Aqm::Pie(p) => p.advance(now, qdelay),
            Aqm::Lld(l) => l.dq.advance(now, self.bytes),
            _ => {}
        }
    }

    /// A Not-ECT packet `tag` of `size` (IP) bytes arrives at `now`: queued, or dropped and why.
    pub fn enqueue(&mut self, now: SimTime, tag: u64, size: u32) -> Result<(), QueueDrop> {
        self.enqueue_ecn(now, tag, size, false).map(|_| ())
    }

    /// A packet arrives: an LLD aggregate classifies it (`lld_input`); any other queue reads whether
    /// it is ECN-capable. Ok(true): queued and CE-marked (the caller sets the packet's field).
    pub fn enqueue_packet(&mut self, now: SimTime, tag: u64, pkt: &Packet) -> Result<bool, QueueDrop> {
        if matches!(self.aqm, Aqm::Lld(_)) {
            return self.enqueue_lld(now, tag, pkt.size, lld_input(pkt));
        }
        self.enqueue_ecn(now, tag, pkt.size, pkt.ecn.capable())
    }

    /// An LLD aggregate's enqueue (module comment): classify, the L queue's tests, then (for C or
    /// a sanctioned packet) the C queue's AQM and buffer. Ok(true): CE-marked.
    pub fn enqueue_lld(&mut self, now: SimTime, tag: u64, size: u32, input: LldInput) -> Result<bool, QueueDrop> {
        if !matches!(self.aqm, Aqm::Lld(_)) {
            return self.enqueue_ecn(now, tag, size, input.ecn.capable());
        }
        self.waits.arrival(self.bytes());
        self.advance_aqm(now);
        let c_bytes = self.bytes;
        let ect = input.ecn.capable();
        let Aqm::Lld(l) = &mut self.aqm else { unreachable!("checked above") };
        let mut mark = false;
        if classify(input.ecn, input.nqb, l.dq.config().nqb_to_l) == Lane::L {
            match l.dq.enqueue_l(now, input.uflow, input.ecn, size, l.bytes) {
                LVerdict::Queue { mark } => {
                    l.q.push_back(Held { tag, size, since: now, ect });
                    l.bytes += size as u64;
                    let total = self.bytes + l.bytes;
                    self.stats.max_bytes = self.stats.max_bytes.max(total);
                    if mark {
                        self.stats.marks_aqm += 1;
                    }
                    return Ok(mark);
                }
                LVerdict::Full => {
                    self.stats.drops_full += 1;
                    return Err(QueueDrop::Full);
                }
                // Annex P: a sanctioned packet joins the classic queue.
                LVerdict::Sanction { mark: m } => mark = m && input.ecn != Ecn::NotEct,
            }
        }
        match l.dq.enqueue_c(now, input.ecn, size, c_bytes, &mut self.rng) {
            CVerdict::Drop => {
                self.stats.drops_aqm += 1;
                return Err(QueueDrop::Aqm);
            }
            CVerdict::Mark => mark = true,
            CVerdict::Queue => {}
        }
        let l_bytes = l.bytes;
        if !self.fits(now, size) {
            self.stats.drops_full += 1;
            return Err(QueueDrop::Full);
        }
        self.q.push_back(Held { tag, size, since: now, ect });
        self.bytes += size as u64;
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes + l_bytes);
        if mark {
            self.stats.marks_aqm += 1;
        }
        Ok(mark)
    }

    /// Whether a packet of `size` arriving at `now` fits under the limit (module comment).
    fn fits(&self, now: SimTime, size: u32) -> bool {
        // The packet on the transmitter, until its last bit has left.
        let sending = self.rate_bps > 0 && now < self.free_at;
        let (packets, bytes) = if self.counts_in_service && sending {
            (self.q.len() as u64 + 1, self.bytes + self.on_wire as u64)
        } else {
            (self.q.len() as u64, self.bytes)
        };
        // Lakshman & Madhow Sec. II (eq. 1 counts B waiting places): a packet that finds the
        // transmitter idle and nobody waiting is served at once and takes no place (queue.rs).
        let straight_to_service =
            !self.counts_in_service && self.rate_bps > 0 && self.bucket.is_none() && !sending && self.q.is_empty();
        straight_to_service
            || match self.limit {
                QueueLimit::Unbounded => true,
                QueueLimit::Packets(max) => packets < max,
                QueueLimit::Bytes(max) => bytes + size as u64 <= max,
                QueueLimit::Cells(_) => unreachable!("checked in new"),
            }
    }

    /// A packet arrives, ECN-capable if `ect`: queued (true if PIE marked it CE), or dropped.
    pub fn enqueue_ecn(&mut self, now: SimTime, tag: u64, size: u32, ect: bool) -> Result<bool, QueueDrop> {
        if matches!(self.aqm, Aqm::Lld(_)) {
            let ecn = if ect { Ecn::Ect0 } else { Ecn::NotEct };
            return self.enqueue_lld(now, tag, size, LldInput { ecn, ..LldInput::default() });
        }
        self.waits.arrival(self.bytes);
        self.advance_aqm(now);
        let mut marked = false;
        if let Aqm::Pie(p) = &mut self.aqm {
            match p.on_enqueue(now, self.bytes, size, ect, &mut self.rng) {
                Verdict::Keep => {}
                Verdict::Mark => marked = true,
                Verdict::Drop => {
                    self.stats.drops_aqm += 1;
                    return Err(QueueDrop::Aqm);
                }
            }
        }
        if !self.fits(now, size) {
            self.stats.drops_full += 1;
            return Err(QueueDrop::Full);
        }
        self.q.push_back(Held { tag, size, since: now, ect });
        self.bytes += size as u64;
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        if marked {
            self.stats.marks_aqm += 1;
        }
        Ok(marked)
    }

    /// The packet this queue would serve next: an LLD aggregate's scheduler's pick, else the head.
    fn head(&self) -> Option<&Held> {
        match &self.aqm {
            Aqm::Lld(l) => match l.dq.pick(l.q.front().map(|h| h.size), self.q.front().map(|h| h.size))? {
                (Lane::L, _) => l.q.front(),
                (Lane::C, _) => self.q.front(),
            },
            _ => self.q.front(),
        }
    }

    /// The IP bytes of the packet this queue would serve next.
    pub fn head_size(&self) -> Option<u32> {
        self.head().map(|h| h.size)
    }

    /// When the packet this queue would serve next may leave, from `t` on: it has arrived and the
    /// bucket holds its bytes.
    pub fn head_ready(&self, t: SimTime) -> Option<SimTime> {
        let head = self.head()?;
        let t = head.since.max(t);
        Some(match &self.bucket {
            Some(b) => b.conforms_at(t, self.counted.wire(head.size) as u64),
            None => t,
        })
    }

    /// When the head may leave: the transmitter free and the bucket holding its bytes.
    pub fn next_deadline(&self) -> Option<SimTime> {
        debug_assert!(!self.pulled, "a pulled queue is served by its link");
        self.head_ready(self.free_at)
    }

    /// Take the packet to serve at `now` (no earlier than `head_ready`): CoDel's drops at dequeue
    /// and marks, an LLD aggregate's pick, the bucket's payment, the waits. Returns its tag and
    /// IP bytes, or None if CoDel dropped every packet it looked at. CoDel's drops and marks go to
    /// `out` (Dropped, Marked).
    pub fn serve(&mut self, now: SimTime, out: &mut Vec<QueueOut>) -> Option<(u64, u32, Nanos)> {
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
                let (sent, marked) = c.dequeue_ecn(now, pop, |h: &Held| h.ect, &mut dropped);
                for h in dropped {
                    self.stats.drops_aqm += 1;
                    self.dropped.push(h.tag);
                }
                if let (Some(h), true) = (&sent, marked) {
                    self.stats.marks_aqm += 1;
                    out.push(QueueOut::Marked { tag: h.tag });
                }
                sent
            }
            Aqm::Lld(l) => {
                let (lane, state) = l.dq.pick(l.q.front().map(|h| h.size), self.q.front().map(|h| h.size))?;
                let h = match lane {
                    Lane::L => l.q.pop_front().inspect(|h| l.bytes -= h.size as u64),
                    Lane::C => self.q.pop_front().inspect(|h| self.bytes -= h.size as u64),
                };
                if let Some(h) = h {
                    l.dq.commit(lane, state, now - h.since);
                }
                h
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
        let h = head?;
        if let Some(b) = self.bucket.as_mut() {
            b.take(now, self.counted.wire(h.size) as u64);
        }
        let backlog = self.bytes();
        if let Some(rate) = self.measured.as_mut() {
            rate.on_departure(now, h.size, backlog);
            let drain = self.drain_rate();
            if let Aqm::Lld(l) = &mut self.aqm {
                l.dq.set_measured_rate(Some(drain));
            }
        }
        self.stats.sent += 1;
        let waited = now - h.since;
        self.waits.served(waited);
        Some((h.tag, h.size, waited))
    }

    /// Serve what is due at `now`.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<QueueOut>) {
        while self.next_deadline().is_some_and(|t| t <= now) {
            let Some((tag, size, waited)) = self.serve(now, out) else { break };
            let tx = tx_time(self.wire.wire(size), self.rate_bps);
            let departure = now + tx;
            self.free_at = departure;
            self.on_wire = size;
            out.push(QueueOut::Sent { tag, at: departure + self.delay, waited, tx });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::aqm::CodelConfig;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;
    /// An Ethernet frame of an IP packet, as the DOCSIS cap counts it (hfcsim.docsis).
    const ETHERNET: Framing = Framing { header: 18, min_frame: 64, extra: 0 };

    fn queue(limit: QueueLimit, bucket: Option<TokenBucket>, rate_bps: u64, delay: Nanos, aqm: Aqm) -> ServiceQueue {
        ServiceQueue::new(
            "q".into(),
            Role::Access,
            limit,
            bucket,
            ETHERNET,
            rate_bps,
            Framing::NONE,
            delay,
            aqm,
            Stream::new(1, 1),
        )
    }

    /// Serve at each deadline up to `until`: (time served, what came out).
    fn drive(q: &mut ServiceQueue, until: u64) -> Vec<(u64, QueueOut)> {
        let mut log = Vec::new();
        while let Some(t) = q.next_deadline().filter(|t| t.0 <= until) {
            let mut out = Vec::new();
            q.on_timer(t, &mut out);
            log.extend(out.into_iter().map(|o| (t.0, o)));
        }
        log
    }

    #[test]
    fn the_cap_holds_the_head_and_the_transmitter_serialises() {
        // Cap 1 Mb/s, burst 1522 B (full at t = 0), a 10 Mb/s transmitter, 1 ms on, room for 4000 B.
        let mut q = queue(
            QueueLimit::Bytes(4000),
            Some(TokenBucket::new(1_000_000, 1522, None)),
            10_000_000,
            MS,
            Aqm::DropTail,
        );
        assert_eq!(q.enqueue(SimTime(0), 1, 1500), Ok(()));
        assert_eq!(q.enqueue(SimTime(0), 2, 1500), Ok(()));
        assert_eq!(q.enqueue(SimTime(0), 3, 1500), Err(QueueDrop::Full)); // 4500 > 4000
                                                                          // t = 0: packet 1's 1518-byte frame takes the bucket's 1522 (4 left) and 1.2 ms of wire.
        let first = drive(&mut q, 0);
        assert_eq!(
            first,
            vec![(0, QueueOut::Sent { tag: 1, at: SimTime(1_200 * US + MS), waited: 0, tx: 1_200 * US })]
        );
        // Packet 2 waits for the transmitter (1.2 ms) and then for its tokens: 4 B + 150 B by then,
        // 1364 B = 10 912 bits short at 1 Mb/s, 10.912 ms more.
        assert_eq!(q.next_deadline(), Some(SimTime(12_112 * US)));
        assert_eq!(q.enqueue(SimTime(5 * MS), 4, 100), Ok(())); // 1600 B waiting: fits
        let rest = drive(&mut q, 20 * MS);
        assert_eq!(
            rest,
            vec![
                (
                    12_112 * US,
                    QueueOut::Sent {
                        tag: 2,
                        at: SimTime((12_112 + 1_200) * US + MS),
                        waited: 12_112 * US,
                        tx: 1_200 * US
                    }
                ),
                // Its 118-byte frame finds 150 B of tokens when the transmitter frees at 13.312 ms;
                // 100 B take 80 us of wire.
                (
                    13_312 * US,
                    QueueOut::Sent { tag: 4, at: SimTime((13_312 + 80) * US + MS), waited: 8_312 * US, tx: 80 * US }
                ),
            ]
        );
        assert_eq!(q.stats, QueueStats { sent: 3, drops_full: 1, drops_aqm: 0, marks_aqm: 0, max_bytes: 3000 });
        assert_eq!((q.bytes(), q.packets()), (0, 0));
    }

    #[test]
    fn the_packet_in_service_has_left_the_buffer() {
        let mut q = queue(QueueLimit::Packets(2), None, 1_000_000, 0, Aqm::DropTail);
        assert!(q.enqueue(SimTime(0), 1, 1000).is_ok() && q.enqueue(SimTime(0), 2, 1000).is_ok());
        assert_eq!(q.enqueue(SimTime(0), 3, 1000), Err(QueueDrop::Full));
        assert_eq!(drive(&mut q, 0), vec![(0, QueueOut::Sent { tag: 1, at: SimTime(8 * MS), waited: 0, tx: 8 * MS })]);
        assert_eq!(q.enqueue(SimTime(MS), 5, 1000), Ok(())); // packet 1 is on the wire: room again
        assert_eq!(q.enqueue(SimTime(MS), 6, 1000), Err(QueueDrop::Full));
    }

    #[test]
    fn a_buffer_counts_as_the_link_buffer_it_replaces() {
        // 1000-byte packets at 1 Mb/s: 8 ms each on the transmitter.
        // Cohen & Ramanathan Sec. V.B: a CM buffer of 2 packets has one free place while a packet
        // is on the LAN.
        let mut cm = queue(QueueLimit::Packets(2), None, 1_000_000, 0, Aqm::DropTail).counting_in_service();
        assert_eq!(cm.enqueue(SimTime(0), 1, 1000), Ok(()));
        assert_eq!(drive(&mut cm, 0), vec![(0, QueueOut::Sent { tag: 1, at: SimTime(8 * MS), waited: 0, tx: 8 * MS })]);
        assert_eq!(cm.enqueue(SimTime(MS), 2, 1000), Ok(()));
        assert_eq!(cm.enqueue(SimTime(MS), 3, 1000), Err(QueueDrop::Full)); // 1 on the LAN + 1 waiting
        assert_eq!(cm.enqueue(SimTime(8 * MS), 4, 1000), Ok(())); // packet 1 has left
                                                                  // Lakshman & Madhow Sec. II, B = 0 waiting places: a packet that finds the transmitter idle
                                                                  // is served; one that finds it busy, or another waiting, is dropped.
        let mut b = queue(QueueLimit::Packets(0), None, 1_000_000, 0, Aqm::DropTail);
        assert_eq!(b.enqueue(SimTime(0), 1, 1000), Ok(()));
        assert_eq!(b.enqueue(SimTime(0), 2, 1000), Err(QueueDrop::Full));
        drive(&mut b, 0);
        assert_eq!(b.enqueue(SimTime(MS), 3, 1000), Err(QueueDrop::Full));
        assert_eq!(b.enqueue(SimTime(8 * MS), 4, 1000), Ok(()));
        assert_eq!(b.stats.drops_full, 2);
    }

    #[test]
    fn codel_drops_at_dequeue_on_its_control_law() {
        // 40 packets of 1500 B at t = 0 through a 1 Mb/s transmitter: packet k is served at 12k ms,
        // having waited 12k ms. RFC 8289 (TARGET 5 ms, INTERVAL 100 ms):
        // - 12 ms: packet 1 waits 12 ms > TARGET with more than MAXPACKET behind it, so
        //   first_above_time = 112 ms (Sec. 5.3, dodequeue);
        // - 120 ms: packet 10 is past first_above_time: enter the dropping state, drop it and send
        //   packet 11 at once, count = 1, drop_next = 120 + 100/sqrt(1) = 220 ms (Sec. 5.5);
        // - 132 ... 216 ms: packets 12-19, before drop_next;
        // - 228 ms: past drop_next: drop packet 20, count = 2, send 21, drop_next = 220 +
        //   100/sqrt(2) = 290.710678 ms (the control law from the previous drop_next, Sec. 5.6);
        // - 240 ... 288 ms: packets 22-26; 300 ms: drop 27, send 28, drop_next = 290.710678 +
        //   100/sqrt(3) = 348.445705 ms.
        let mut q =
            queue(QueueLimit::Unbounded, None, 1_000_000, 0, Aqm::Codel(Box::new(Codel::new(CodelConfig::rfc8289()))));
        for tag in 0..40 {
            q.enqueue(SimTime(0), tag, 1500).unwrap();
        }
        let log = drive(&mut q, 300 * MS);
        let dropped: Vec<(u64, u64)> = log
            .iter()
            .filter_map(|&(t, o)| match o {
                QueueOut::Dropped { tag } => Some((t, tag)),
                QueueOut::Sent { .. } | QueueOut::Marked { .. } => None,
            })
            .collect();
        assert_eq!(dropped, vec![(120 * MS, 10), (228 * MS, 20), (300 * MS, 27)]);
        let sent: Vec<(u64, u64)> = log
            .iter()
            .filter_map(|&(t, o)| match o {
                QueueOut::Sent { tag, .. } => Some((t, tag)),
                QueueOut::Dropped { .. } | QueueOut::Marked { .. } => None,
            })
            .collect();
        let mut expected: Vec<(u64, u64)> = (0..10).map(|k| (12 * k * MS, k)).collect();
        expected.extend((11..20).map(|k| ((120 + 12 * (k - 11)) * MS, k)));
        expected.extend((21..27).map(|k| ((228 + 12 * (k - 21)) * MS, k)));
        expected.push((300 * MS, 28));
        assert_eq!(sent, expected);
        // The next drop is due at 348.445705 ms: packet 32 is served at 348 ms, packet 33 dropped at 360.
        let next = drive(&mut q, 360 * MS);
        assert_eq!(
            next.iter().filter(|(_, o)| matches!(o, QueueOut::Dropped { .. })).collect::<Vec<_>>(),
            vec![&(360 * MS, QueueOut::Dropped { tag: 33 })]
        );
        assert_eq!(q.stats.drops_aqm, 4);
    }

    #[test]
    fn codel_marks_ect_packets_where_it_drops_others() {
        // The timeline above with every packet ECN-capable (RFC 8289 Sec. 5: mark instead of drop):
        // - 120 ms: packet 10 is past first_above_time: it is marked and sent (not dropped, so
        //   packet 11 waits its turn), count = 1, drop_next = 220 ms;
        // - 132 ... 216 ms: packets 11-18; 228 ms: packet 19 is the first past drop_next: marked,
        //   count = 2, drop_next = 220 + 100/sqrt(2) = 290.710678 ms;
        // - 240 ... 288 ms: packets 20-24; 300 ms: packet 25 marked, count = 3.
        // Every packet leaves at 12 k ms, none is dropped.
        let mut q =
            queue(QueueLimit::Unbounded, None, 1_000_000, 0, Aqm::Codel(Box::new(Codel::new(CodelConfig::rfc8289()))));
        for tag in 0..40 {
            assert_eq!(q.enqueue_ecn(SimTime(0), tag, 1500, true), Ok(false));
        }
        let log = drive(&mut q, 300 * MS);
        let marked: Vec<(u64, u64)> = log
            .iter()
            .filter_map(|&(t, o)| if let QueueOut::Marked { tag } = o { Some((t, tag)) } else { None })
            .collect();
        assert_eq!(marked, vec![(120 * MS, 10), (228 * MS, 19), (300 * MS, 25)]);
        let sent: Vec<(u64, u64)> = log
            .iter()
            .filter_map(|&(t, o)| if let QueueOut::Sent { tag, .. } = o { Some((t, tag)) } else { None })
            .collect();
        assert_eq!(sent, (0..26).map(|k| (12 * k * MS, k)).collect::<Vec<_>>());
        assert_eq!((q.stats.drops_aqm, q.stats.marks_aqm), (0, 3));
        // A Not-ECT packet in the same place is dropped: queue 0..40 again with 19 Not-ECT.
        let mut q =
            queue(QueueLimit::Unbounded, None, 1_000_000, 0, Aqm::Codel(Box::new(Codel::new(CodelConfig::rfc8289()))));
        for tag in 0..40 {
            q.enqueue_ecn(SimTime(0), tag, 1500, tag != 19).unwrap();
        }
        let log = drive(&mut q, 240 * MS);
        // 228 ms: packet 19 is dropped, count = 2, and packet 20, dequeued at once, is sent then.
        assert!(log.contains(&(228 * MS, QueueOut::Dropped { tag: 19 })));
        assert!(
            log.contains(&(228 * MS, QueueOut::Sent { tag: 20, at: SimTime(240 * MS), waited: 228 * MS, tx: 12 * MS }))
        );
        assert_eq!((q.stats.drops_aqm, q.stats.marks_aqm), (1, 1));
    }
}
