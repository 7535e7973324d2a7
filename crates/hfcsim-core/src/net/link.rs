//! Link: a FIFO buffer (queue.rs) drained at a rate, then a propagation delay, with an
//! independent per-packet media loss and optional extra per-packet service times.
//!
//! Rules and their sources:
//! - serialisation: a packet of `size` bytes takes `size * 8 / rate` (rounded up to the
//!   nanosecond) once the packets ahead of it have left; then `delay` of propagation. A rate of
//!   0 serialises in no time;
//! - ATM (`Link::atm`): the packet is sent as its AAL5 cells, `aal5_cells(size) * 53` bytes,
//!   and the buffer counts cells (atm.rs: the switch is modelled store-and-forward per packet
//!   with cell-accurate service times; epd.rs: early packet discard);
//! - a rate that changes over time (`Link::set_schedule`; Elloumi et al. Fig. 23: 1.5, 2, then
//!   2.5 Mb/s): the rate is piecewise constant and known in advance, so a departure is still
//!   fixed on arrival. A packet whose service spans a change is served at the old rate up to
//!   the change and at the new one after it, in exact integers: a rate of r b/s over dt ns
//!   serves r * dt bit-nanoseconds, and a packet of b bits needs b * 1e9 of them;
//! - framing (`Link::framed`): a packet takes its frame's bytes on the wire (an Ethernet or DOCSIS
//!   frame, padded to the minimum frame), while the buffer counts IP bytes;
//! - constant service time (`per_packet`): added to every packet's service after its
//!   serialisation, FIFO order kept: a host's packet processing time (Elloumi et al. Table 2,
//!   "packet processing time 100 us") as a server of constant service time;
//! - media loss: each packet is lost with probability `loss`, independently, after service
//!   (Cohen & Ramanathan Sec. IV.C, media errors on the downstream and upstream channels, the
//!   papers' "Poisson" loss; Lakshman & Madhow Sec. II, random loss at the bottleneck), drawn
//!   from the link's own stream (docs/design.md, principle 2);
//! - jitter: an extra service time uniform in [0, jitter) per packet, FIFO order kept: a host's
//!   processing time, ns's TcpAgent `overhead_`, which Floyd & Jacobson (1992) use to break the
//!   phase effects of deterministic drop-tail queues;
//! - reordering (`Link::reorder`): an extra propagation delay uniform in [0, reorder) drawn per
//!   packet after it leaves, so a later packet may arrive first (FIFO order not kept): a path
//!   that reorders, as DOCSIS 3.x channel bonding does when a flow's packets take channels of
//!   different delay. It has its own stream, so turning it on shifts no other draw.
//!
//! The fast path: service is first-come first-served at a known rate, so a packet's departure
//! time is known when it arrives. The link computes it then and the queue keeps the departure
//! times of the packets it holds, instead of scheduling a "transmission done" event per packet.
//! This is most of the engine's speed. Cells and rate schedules take a path of their own
//! (`admit_special`), so that a plain link pays one flag test for them. A discipline that
//! decides at the time of service (CoDel, a shaper) would need a link that schedules its own
//! service events instead (queue.rs).

use super::atm::{aal5_cells, SwitchStats, CELL_BYTES};
use super::epd::Epd;
use super::queue::{Discipline, Queue, QueueLimit, Refusal};
use super::wait::WaitStats;
use crate::rng::Stream;
use crate::time::{tx_time, Nanos, SimTime, NANOS_PER_SEC};

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

/// How many bytes an IP packet takes on a wire: behind `header` bytes, padded to `min_frame`,
/// plus `extra` (an Ethernet frame: 18, 64, and 20 of preamble and gap; a DOCSIS frame: 18, 64
/// and its 6-byte MAC header). The sizes come from the scenario (Python's `hfcsim.docsis`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Framing {
    pub header: u32,
    pub min_frame: u32,
    pub extra: u32,
}

impl Framing {
    /// The packet as it is.
    pub const NONE: Framing = Framing { header: 0, min_frame: 0, extra: 0 };

    #[inline]
    pub fn wire(self, size: u32) -> u32 {
        // Saturating: frame sizes are 16-bit in the scenario (Docsis::check), this guards direct callers.
        size.saturating_add(self.header).max(self.min_frame).saturating_add(self.extra)
    }
}

/// A FIFO link with departure times computed on arrival (module comment).
pub struct Link {
    pub role: Role,
    /// What the network calls it, for the report of where packets waited (`named`; empty: the
    /// fabric names it by its role and number).
    pub name: String,
    /// How long packets waited in its buffer before their service started, and the bytes each
    /// arrival found there (in service included).
    pub waits: WaitStats,
    /// What it dropped, by reason (the fabric counts them).
    pub drops: LinkDrops,
    /// The rate (b/s), until the schedule's first change if there is one.
    pub rate_bps: u64,
    pub delay: Nanos,
    /// The buffer ahead of the transmitter: its limit, discipline and occupancy.
    pub queue: Queue,
    pub loss: f64,
    pub loss_rng: Stream,
    /// Random extra service time per packet, uniform in [0, jitter) ns, drawn from `loss_rng`'s
    /// stream (module comment).
    pub jitter: Nanos,
    /// Constant extra service time per packet, after serialisation (module comment).
    pub per_packet: Nanos,
    /// Reordering: extra propagation delay per packet, uniform in [0, .0) ns, from its own stream.
    pub reorder: Option<(Nanos, Stream)>,
    /// Cells this link lost as an ATM switch (atm.rs, epd.rs); zero unless it counts cells.
    pub switch: SwitchStats,
    /// Whether packets are sent and buffered as ATM cells (`atm`).
    cells: bool,
    /// The bytes each packet takes on the wire (`framed`).
    framing: Framing,
    /// (from, rate b/s): the rate from each time on; times strictly increasing (`set_schedule`).
    schedule: Vec<(SimTime, u64)>,
    /// `cells || framed || !schedule.is_empty()`: the one test the fast path makes for them.
    special: bool,
    last_departure: SimTime,
}

/// A link's drops by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkDrops {
    /// Its buffer was full.
    pub full: u64,
    /// An ATM switch's discards (early or partial packet discard).
    pub discarded: u64,
    /// Lost to media errors after service.
    pub lost: u64,
}

impl LinkDrops {
    /// Count a refusal (a full buffer or a discard).
    pub fn count(&mut self, why: crate::fabric::Why) {
        match why {
            crate::fabric::Why::Discarded => self.discarded += 1,
            _ => self.full += 1,
        }
    }
}

/// A packet admitted to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// When its service starts (it waits in the buffer until then).
    pub start: SimTime,
    /// When its last bit leaves the link (before propagation).
    pub departure: SimTime,
    /// Lost to media errors on this link (decided after service, per packet).
    pub lost: bool,
    /// Only its first cells were queued (partial packet discard, atm.rs): they are sent, and
    /// the packet is lost when they have left (it cannot be reassembled).
    pub truncated: bool,
}

/// Bit-nanoseconds (bits x 1e9) in one ATM cell.
const CELL_BIT_NS: u128 = CELL_BYTES as u128 * 8 * NANOS_PER_SEC as u128;

impl Link {
    /// A link with a drop-tail buffer of `limit`; `counts_in_service` as in `Queue`. A limit in
    /// cells makes it count cells (`atm`).
    pub fn new(
        role: Role,
        rate_bps: u64,
        delay: Nanos,
        limit: QueueLimit,
        counts_in_service: bool,
        loss: f64,
        loss_rng: Stream,
    ) -> Link {
        let cells = matches!(limit, QueueLimit::Cells(_));
        Link {
            role,
            name: String::new(),
            waits: WaitStats::default(),
            drops: LinkDrops::default(),
            rate_bps,
            delay,
            queue: Queue::new(limit, counts_in_service),
            loss,
            loss_rng,
            jitter: 0,
            per_packet: 0,
            reorder: None,
            switch: SwitchStats::default(),
            cells,
            framing: Framing::NONE,
            schedule: Vec::new(),
            special: cells,
            last_departure: SimTime::ZERO,
        }
    }

    /// The link's name in the report of where packets waited.
    pub fn named(mut self, name: impl Into<String>) -> Link {
        self.name = name.into();
        self
    }

    /// The link carries IP over ATM: each packet is sent as its AAL5 cells and the buffer counts
    /// cells (atm.rs).
    pub fn atm(mut self) -> Link {
        self.cells = true;
        self.special = true;
        self
    }

    /// Each packet is serialised as its frame on the wire (`Framing`); the buffer still counts IP
    /// bytes.
    pub fn framed(mut self, framing: Framing) -> Link {
        self.framing = framing;
        self.special = self.special || framing != Framing::NONE;
        self
    }

    /// An ATM switch output with early packet discard above `threshold_cells` (epd.rs).
    pub fn with_epd(mut self, threshold_cells: u64) -> Link {
        self.queue.discipline = Discipline::Epd(Epd { threshold_cells });
        self.atm()
    }

    /// Whether the link counts ATM cells.
    pub fn counts_cells(&self) -> bool {
        self.cells
    }

    /// Whether the link only delays a packet: no rate (it serialises in no time), no buffer limit,
    /// no media loss, no extra service time, no reordering, no cells, framing or rate schedule. A
    /// packet arriving at `t` leaves at `t` and arrives at `t + delay`, whatever else crosses it
    /// (the fabric's crossings, fabric.rs).
    pub fn only_delays(&self) -> bool {
        self.rate_bps == 0
            && !self.special
            && self.queue.limit == QueueLimit::Unbounded
            && self.loss == 0.0
            && self.jitter == 0
            && self.per_packet == 0
            && self.reorder.is_none()
    }

    /// From each `(time, rate)` on, the link's rate is `rate` b/s; before the first, `rate_bps`.
    /// Set before the run (departures already fixed keep their times). An empty list removes
    /// the schedule.
    ///
    /// # Panics
    /// If the times do not strictly increase, a rate is 0, or `rate_bps` is 0 while it is in
    /// force (before a first change later than time 0).
    pub fn set_schedule(&mut self, changes: Vec<(SimTime, u64)>) {
        assert!(changes.windows(2).all(|w| w[0].0 < w[1].0), "rate changes must be in strictly increasing time");
        assert!(changes.iter().all(|&(_, r)| r > 0), "a scheduled rate must be positive");
        if let Some(&(first, _)) = changes.first() {
            assert!(self.rate_bps > 0 || first == SimTime::ZERO, "a scheduled link needs a positive rate before it");
        }
        self.schedule = changes;
        self.special = self.cells || self.framing != Framing::NONE || !self.schedule.is_empty();
    }

    /// The rate in force at `t`.
    pub fn rate_at(&self, t: SimTime) -> u64 {
        match self.schedule.partition_point(|&(from, _)| from <= t) {
            0 => self.rate_bps,
            i => self.schedule[i - 1].1,
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

    /// Cells at the link at `now`, waiting or being sent (the cell on the wire counts); 0 unless
    /// the link counts cells.
    pub fn cells_held(&mut self, now: SimTime) -> u64 {
        let (rate, schedule) = (self.rate_bps, &self.schedule[..]);
        self.queue.cells(now, |start, cells| cells_sent(rate, schedule, start, now, cells))
    }

    /// A packet of `size` bytes arrives at `now`: refused by the queue's discipline, or queued
    /// behind the others with its departure time fixed now.
    #[inline]
    pub fn admit(&mut self, now: SimTime, size: u32) -> Option<Admitted> {
        self.try_admit(now, size).ok()
    }

    /// As `admit`, saying why a packet was refused (early packet discard or a full buffer).
    #[inline]
    pub fn try_admit(&mut self, now: SimTime, size: u32) -> Result<Admitted, Refusal> {
        if self.special {
            return self.admit_special(now, size);
        }
        if !self.queue.admit(now, size) {
            return Err(Refusal::Full);
        }
        let start = now.max(self.last_departure);
        let departure = start + tx_time(size, self.rate_bps) + self.per_packet;
        Ok(self.enter(now, start, departure, size, 0, false))
    }

    /// `try_admit` for a link that counts cells or has a rate schedule (module comment).
    #[inline(never)]
    fn admit_special(&mut self, now: SimTime, size: u32) -> Result<Admitted, Refusal> {
        let (cells, truncated, bits) = if self.cells {
            let whole = aal5_cells(size);
            let (rate, schedule) = (self.rate_bps, &self.schedule[..]);
            let sent = |start, c| cells_sent(rate, schedule, start, now, c);
            match self.queue.admit_cells(now, size, whole, sent) {
                Err(why) => {
                    if why == Refusal::Epd {
                        self.switch.epd_packets += 1;
                        self.switch.epd_cells += whole as u64;
                    }
                    return Err(why);
                }
                Ok(queued) => {
                    if queued < whole {
                        self.switch.partial_packets += 1;
                        self.switch.partial_cells += (whole - queued) as u64;
                    }
                    (queued, queued < whole, queued as u64 * CELL_BYTES as u64 * 8)
                }
            }
        } else {
            if !self.queue.admit(now, size) {
                return Err(Refusal::Full);
            }
            (0, false, self.framing.wire(size) as u64 * 8)
        };
        let start = now.max(self.last_departure);
        let departure = served_by(self.rate_bps, &self.schedule, start, bits) + self.per_packet;
        Ok(self.enter(now, start, departure, size, cells, truncated))
    }

    /// Queue an admitted packet whose service runs from `start` to `departure` (before jitter),
    /// and draw its media loss.
    #[inline]
    fn enter(
        &mut self,
        now: SimTime,
        start: SimTime,
        mut departure: SimTime,
        size: u32,
        cells: u32,
        truncated: bool,
    ) -> Admitted {
        self.waits.arrival(self.queue.held_bytes());
        self.waits.served(start - now);
        if self.jitter > 0 {
            departure = departure + self.loss_rng.below(self.jitter);
        }
        self.last_departure = departure;
        self.queue.push(start, departure, size, cells);
        // Independent per-packet media loss (the papers' "Poisson" loss), after service.
        let lost = self.loss_rng.bernoulli(self.loss);
        Admitted { start, departure, lost, truncated }
    }
}

impl Link {
    /// The propagation delay of the packet leaving now: `delay`, plus its reordering draw.
    #[inline]
    pub fn propagation(&mut self) -> Nanos {
        match &mut self.reorder {
            None => self.delay,
            Some((jitter, rng)) => self.delay + rng.below(*jitter),
        }
    }
}

/// When a service of `bits` starting at `start` ends, at `rate` b/s until the first of `changes`
/// and at each change's rate from its time on (module comment). With no changes and a rate of 0,
/// at once.
fn served_by(rate: u64, changes: &[(SimTime, u64)], start: SimTime, bits: u64) -> SimTime {
    let i = changes.partition_point(|&(from, _)| from <= start);
    let (mut t, mut r) = (start, if i == 0 { rate } else { changes[i - 1].1 });
    if r == 0 {
        return start; // only without a schedule (`set_schedule`): an infinitely fast link
    }
    let mut left = bits as u128 * NANOS_PER_SEC as u128; // bit-ns still to serve
    for &(from, next) in &changes[i..] {
        let room = r as u128 * (from - t) as u128; // bit-ns served before the change
        if left <= room {
            break;
        }
        left -= room;
        (t, r) = (from, next);
    }
    t + u64::try_from(left.div_ceil(r as u128)).unwrap_or(u64::MAX)
}

/// Bit-nanoseconds served in [from, to) at `rate` and the `changes` (as `served_by`).
fn bit_ns_between(rate: u64, changes: &[(SimTime, u64)], from: SimTime, to: SimTime) -> u128 {
    let i = changes.partition_point(|&(at, _)| at <= from);
    let (mut t, mut r) = (from, if i == 0 { rate } else { changes[i - 1].1 });
    let mut total = 0u128;
    for &(at, next) in &changes[i..] {
        if at >= to {
            break;
        }
        total += r as u128 * (at - t) as u128;
        (t, r) = (at, next);
    }
    total + r as u128 * to.0.saturating_sub(t.0) as u128
}

/// How many of the `cells` of the packet whose service started at `start` have been sent in full
/// by `now`: its cells leave one by one at the link's rate (atm.rs). At a rate of 0, all.
fn cells_sent(rate: u64, changes: &[(SimTime, u64)], start: SimTime, now: SimTime, cells: u32) -> u32 {
    if rate == 0 && changes.is_empty() {
        return cells;
    }
    let sent = bit_ns_between(rate, changes, start, now) / CELL_BIT_NS;
    sent.min(cells as u128) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(limit: QueueLimit, counts_in_service: bool) -> Link {
        Link::new(Role::CmLan, 10_000_000, 0, limit, counts_in_service, 0.0, Stream::new(1, 1))
    }

    #[test]
    fn a_buffer_of_zero_passes_the_packet_that_finds_the_link_idle() {
        // network.buffer_packets = 0 (the buffer excludes the packet in service): no waiting
        // room, so the packet that finds the link idle is sent and one arriving while it is
        // being sent (1.2 ms at 10 Mb/s) is dropped; once it has left, the next is sent again.
        let mut l = link(QueueLimit::Packets(0), false);
        assert_eq!(l.admit(SimTime(0), 1500).unwrap().departure, SimTime(1_200_000));
        assert!(l.admit(SimTime(1_199_999), 1500).is_none());
        assert_eq!(l.admit(SimTime(1_200_000), 1500).unwrap().departure, SimTime(2_400_000));
        // The same for a byte limit below one packet.
        let mut l = link(QueueLimit::Bytes(100), false);
        assert!(l.admit(SimTime(0), 1500).is_some());
        assert!(l.admit(SimTime(0), 40).is_some(), "40 bytes wait within the 100");
        assert!(l.admit(SimTime(0), 1500).is_none());
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

    // --- ATM cells, EPD and partial packet discard (atm.rs, epd.rs) ---

    /// A 22-cell packet (1024 bytes, Elloumi Table 2's MTU) takes 22 x 424 = 9328 bits, at 6 Mb/s
    /// 1 554 666.7 ns, rounded up.
    const P: u32 = 1024;
    const SERVICE_6M: u64 = 1_554_667;

    fn switch(limit: QueueLimit) -> Link {
        Link::new(Role::Bottleneck, 6_000_000, 0, limit, true, 0.0, Stream::new(1, 1)).atm()
    }

    fn ok(r: Result<Admitted, Refusal>) -> Admitted {
        r.expect("admitted")
    }

    #[test]
    fn epd_refuses_whole_packets_above_the_threshold() {
        // Threshold 40 cells, no hard limit (Elloumi footnote 6), 22-cell packets.
        let mut l = switch(QueueLimit::Unbounded).with_epd(40);
        assert!(l.counts_cells());
        let t0 = SimTime(0);
        // 1: 0 cells held, accepted, served at once.
        let a = ok(l.try_admit(t0, P));
        assert_eq!((a.departure, a.truncated), (SimTime(SERVICE_6M), false));
        assert_eq!(l.cells_held(t0), 22);
        // 2: 22 held <= 40, accepted behind it.
        assert_eq!(ok(l.try_admit(t0, P)).departure, SimTime(2 * SERVICE_6M));
        assert_eq!(l.cells_held(t0), 44);
        // 3: 44 > 40: discarded whole, nothing of it queued.
        assert_eq!(l.try_admit(t0, P), Err(Refusal::Epd));
        assert_eq!(l.cells_held(t0), 44);
        // Packet 1's cells leave one per 424 bits / 6 Mb/s = 70 666.7 ns; its 4th has left at
        // 282 666.7 ns. At 282 666 ns only 3 have (282 666 x 6e6 < 4 x 424e9): 41 held, refused;
        // at 282 667 ns 4 have: 40 held, not more than 40, accepted behind packet 2.
        assert_eq!(l.cells_held(SimTime(282_666)), 41);
        assert_eq!(l.try_admit(SimTime(282_666), P), Err(Refusal::Epd));
        assert_eq!(l.cells_held(SimTime(282_667)), 40);
        assert_eq!(ok(l.try_admit(SimTime(282_667), P)).departure, SimTime(3 * SERVICE_6M));
        assert_eq!(l.cells_held(SimTime(282_667)), 62);
        // At 1 554 667 ns packet 1 has departed and packet 2 starts: 44 held, refused. One cell
        // time later (70 667 ns; 70 667 x 6e6 >= 424e9) 43 held: still refused.
        assert_eq!(l.try_admit(SimTime(SERVICE_6M), P), Err(Refusal::Epd));
        assert_eq!(l.cells_held(SimTime(SERVICE_6M + 70_667)), 43);
        // Once all have left (3 x 1 554 667 ns) the link is idle: accepted, served at once.
        let t = SimTime(3 * SERVICE_6M);
        assert_eq!(l.cells_held(t), 0);
        assert_eq!(ok(l.try_admit(t, P)).departure, SimTime(4 * SERVICE_6M));
        // Three packets discarded whole, 22 cells each; no partial packets without a hard limit.
        let want = SwitchStats { epd_packets: 3, epd_cells: 66, partial_packets: 0, partial_cells: 0 };
        assert_eq!(l.switch, want);
        assert_eq!(l.held(t), 1);
    }

    #[test]
    fn a_cell_limit_keeps_the_cells_that_fit() {
        // Drop-tail in cells (no EPD), 50 cells: packets 1 and 2 take 44, packet 3 only 6 of its
        // 22 (partial packet discard: 16 lost), packet 4 none.
        let mut l = switch(QueueLimit::Cells(50));
        let t0 = SimTime(0);
        ok(l.try_admit(t0, P));
        ok(l.try_admit(t0, P));
        let a = ok(l.try_admit(t0, P));
        assert!(a.truncated);
        // The link is busy for exactly those 6 cells: 6 x 424 bits at 6 Mb/s = 424 000 ns.
        assert_eq!(a.departure, SimTime(2 * SERVICE_6M + 424_000));
        assert_eq!(l.cells_held(t0), 50);
        assert_eq!(l.try_admit(t0, 40), Err(Refusal::Full), "no room for an ACK's first cell");
        assert_eq!(l.admit(t0, P), None);
        let want = SwitchStats { epd_packets: 0, epd_cells: 0, partial_packets: 1, partial_cells: 16 };
        assert_eq!(l.switch, want, "refusals of a full buffer are not switch counters");
        // When the 6 cells have left the link is idle.
        let t = SimTime(2 * SERVICE_6M + 424_000);
        assert_eq!(l.cells_held(t), 0);
        assert_eq!(ok(l.try_admit(t, P)).departure, t + SERVICE_6M);
    }

    #[test]
    fn epd_with_a_hard_limit_can_still_cut_a_packet() {
        // Threshold 44, buffer 50 cells: packet 3 sees 44 held (not more than 44) and is
        // accepted, but only 6 of its cells fit; packet 4 sees 50 > 44: EPD.
        let mut l = switch(QueueLimit::Cells(50)).with_epd(44);
        let t0 = SimTime(0);
        assert!(!ok(l.try_admit(t0, P)).truncated);
        assert!(!ok(l.try_admit(t0, P)).truncated);
        assert!(ok(l.try_admit(t0, P)).truncated);
        assert_eq!(l.try_admit(t0, P), Err(Refusal::Epd));
        let want = SwitchStats { epd_packets: 1, epd_cells: 22, partial_packets: 1, partial_cells: 16 };
        assert_eq!(l.switch, want);
    }

    #[test]
    fn cell_links_are_made_by_a_cell_limit_or_by_atm() {
        assert!(switch(QueueLimit::Unbounded).counts_cells());
        let by_limit = Link::new(Role::Bottleneck, 6_000_000, 0, QueueLimit::Cells(9), true, 0.0, Stream::new(1, 1));
        assert!(by_limit.counts_cells());
        assert!(!link(QueueLimit::Unbounded, true).counts_cells());
        // An ATM link with a limit in packets (a host's driver buffer, Elloumi Sec. 4) takes
        // packets whole and serves them as cells: a 40-byte ACK is 2 cells = 106 bytes, 84 800 ns
        // at 10 Mb/s.
        let mut l = link(QueueLimit::Packets(1), true).atm();
        assert_eq!(ok(l.try_admit(SimTime(0), 40)).departure, SimTime(84_800));
        assert_eq!(l.try_admit(SimTime(0), 40), Err(Refusal::Full));
        assert_eq!(l.cells_held(SimTime(0)), 2);
        assert_eq!(l.cells_held(SimTime(42_400)), 1, "one of the two cells has left");
    }

    // --- rate schedules ---

    #[test]
    fn a_rate_change_splits_a_service_exactly() {
        // 1 Mb/s, then 2 Mb/s from 10 ms; 1000-byte packets (8000 bits).
        let mut l = link(QueueLimit::Unbounded, true);
        l.rate_bps = 1_000_000;
        l.set_schedule(vec![(SimTime(10_000_000), 2_000_000)]);
        // Entirely before: 8 ms at 1 Mb/s.
        assert_eq!(ok(l.try_admit(SimTime(0), 1000)).departure, SimTime(8_000_000));
        // Across: starts at 8 ms, 2000 bits by 10 ms, the other 6000 at 2 Mb/s in 3 ms.
        assert_eq!(ok(l.try_admit(SimTime(0), 1000)).departure, SimTime(13_000_000));
        // Entirely after: 4 ms at 2 Mb/s.
        assert_eq!(ok(l.try_admit(SimTime(20_000_000), 1000)).departure, SimTime(24_000_000));
        assert_eq!((l.rate_at(SimTime(9_999_999)), l.rate_at(SimTime(10_000_000))), (1_000_000, 2_000_000));

        // A service ending exactly at the change is all at the old rate; one starting at it, at
        // the new.
        let mut l = link(QueueLimit::Unbounded, true);
        l.rate_bps = 1_000_000;
        l.set_schedule(vec![(SimTime(8_000_000), 2_000_000)]);
        assert_eq!(ok(l.try_admit(SimTime(0), 1000)).departure, SimTime(8_000_000));
        assert_eq!(ok(l.try_admit(SimTime(0), 1000)).departure, SimTime(12_000_000));

        // The rest rounds up to the nanosecond once: 1000 bits by 1 ms, 7000 at 3 Mb/s in
        // 2 333 333.3 ns.
        let mut l = link(QueueLimit::Unbounded, true);
        l.rate_bps = 1_000_000;
        l.set_schedule(vec![(SimTime(1_000_000), 3_000_000)]);
        assert_eq!(ok(l.try_admit(SimTime(0), 1000)).departure, SimTime(3_333_334));
    }

    #[test]
    fn several_rate_changes_within_one_service() {
        // 1, 2, 4, 8 Mb/s from 0, 1, 2, 3 ms: 1000 + 2000 + 4000 bits by 3 ms, the last 1000 of
        // 8000 at 8 Mb/s in 125 us.
        let mut l = link(QueueLimit::Unbounded, true);
        l.rate_bps = 1_000_000;
        l.set_schedule(vec![
            (SimTime(1_000_000), 2_000_000),
            (SimTime(2_000_000), 4_000_000),
            (SimTime(3_000_000), 8_000_000),
        ]);
        assert_eq!(ok(l.try_admit(SimTime(0), 1000)).departure, SimTime(3_125_000));
        // A schedule that starts at time 0 replaces rate_bps from the start.
        let mut l = link(QueueLimit::Unbounded, true);
        l.rate_bps = 0;
        l.set_schedule(vec![(SimTime(0), 1_000_000), (SimTime(4_000_000), 4_000_000)]);
        // 4000 bits by 4 ms, 4000 at 4 Mb/s in 1 ms.
        assert_eq!(ok(l.try_admit(SimTime(0), 1000)).departure, SimTime(5_000_000));
    }

    #[test]
    fn elloumi_fig_23_schedule_in_cells() {
        // 1.5 Mb/s, 2 Mb/s from 10 s, 2.5 Mb/s from 20 s; 1 KB packets as 9328 bits of cells.
        let mut l = switch(QueueLimit::Unbounded);
        l.rate_bps = 1_500_000;
        l.set_schedule(vec![(SimTime(10_000_000_000), 2_000_000), (SimTime(20_000_000_000), 2_500_000)]);
        // At 9.999 s: 1500 bits by 10 s, 7828 at 2 Mb/s in 3.914 ms.
        assert_eq!(ok(l.try_admit(SimTime(9_999_000_000), P)).departure, SimTime(10_003_914_000));
        // The 1500 bits sent by 10 s are 3 whole cells (1272 bits); the 4th (1696 bits) has left
        // 196 bits at 2 Mb/s = 98 us later.
        assert_eq!(l.cells_held(SimTime(10_000_000_000)), 19);
        assert_eq!(l.cells_held(SimTime(10_000_097_999)), 19);
        assert_eq!(l.cells_held(SimTime(10_000_098_000)), 18);
        // At 19.999 s, under 2 Mb/s: 2000 bits by 20 s, 7328 at 2.5 Mb/s in 2.9312 ms.
        assert_eq!(ok(l.try_admit(SimTime(19_999_000_000), P)).departure, SimTime(20_002_931_200));
        // After 20 s: 9328 bits at 2.5 Mb/s = 3.7312 ms.
        assert_eq!(ok(l.try_admit(SimTime(30_000_000_000), P)).departure, SimTime(30_003_731_200));
    }

    #[test]
    #[should_panic(expected = "strictly increasing")]
    fn a_schedule_must_increase() {
        link(QueueLimit::Unbounded, true).set_schedule(vec![(SimTime(5), 1), (SimTime(5), 2)]);
    }

    // --- constant per-packet service ---

    #[test]
    fn per_packet_service_is_a_fifo_server() {
        // Elloumi Table 2: 100 us of processing per packet, no serialisation (rate 0): packets
        // arriving together leave 100 us apart; one arriving later, 100 us after it arrives.
        let mut l = Link::new(Role::Access, 0, 0, QueueLimit::Unbounded, true, 0.0, Stream::new(1, 1));
        l.per_packet = 100_000;
        for k in 1..=3 {
            assert_eq!(ok(l.try_admit(SimTime(0), 1024)).departure, SimTime(k * 100_000));
        }
        assert_eq!(ok(l.try_admit(SimTime(1_000_000), 40)).departure, SimTime(1_100_000));
        // After serialisation at a rate: 1500 bytes at 10 Mb/s = 1.2 ms, + 0.1 ms.
        let mut l = link(QueueLimit::Unbounded, true);
        l.per_packet = 100_000;
        assert_eq!(ok(l.try_admit(SimTime(0), 1500)).departure, SimTime(1_300_000));
        assert_eq!(ok(l.try_admit(SimTime(0), 1500)).departure, SimTime(2_600_000));
        // And after a packet's cells: 22 cells at 6 Mb/s + 0.1 ms.
        let mut l = switch(QueueLimit::Unbounded);
        l.per_packet = 100_000;
        assert_eq!(ok(l.try_admit(SimTime(0), P)).departure, SimTime(SERVICE_6M + 100_000));
    }

    #[test]
    fn reordering_delays_each_packet_on_its_own() {
        // 1 ms of propagation plus up to 2 ms per packet: departures stay FIFO (1.2 ms apart at
        // 10 Mb/s), arrivals do not have to; the draws come from the link's own stream.
        let mut l = link(QueueLimit::Unbounded, true);
        l.delay = 1_000_000;
        assert_eq!(l.propagation(), 1_000_000);
        l.reorder = Some((2_000_000, Stream::new(7, 9)));
        let mut draws = Stream::new(7, 9);
        let mut arrivals = Vec::new();
        for k in 1..=20u64 {
            let d = ok(l.try_admit(SimTime(0), 1500)).departure;
            assert_eq!(d, SimTime(k * 1_200_000));
            let p = l.propagation();
            assert_eq!(p, 1_000_000 + draws.below(2_000_000));
            arrivals.push(d + p);
        }
        assert!(arrivals.windows(2).any(|w| w[1] < w[0]), "no packet overtook another: {arrivals:?}");
    }

    // --- property: departures follow the rates in force ---

    /// Bit-nanoseconds served in [a, b) by a link at `base` b/s with `changes`, summed over the
    /// schedule's segments (independent of `bit_ns_between`).
    fn reference_bit_ns(base: u64, changes: &[(SimTime, u64)], a: u64, b: u64) -> u128 {
        let mut edges = vec![(0u64, base)];
        edges.extend(changes.iter().map(|&(t, r)| (t.0, r)));
        let mut total = 0u128;
        for (k, &(from, r)) in edges.iter().enumerate() {
            let to = edges.get(k + 1).map_or(u64::MAX, |e| e.0);
            let (lo, hi) = (from.max(a), to.min(b));
            if lo < hi {
                total += r as u128 * (hi - lo) as u128;
            }
        }
        total
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

        #[test]
        fn departures_follow_the_rates_in_force(
            base in 1u64..20_000_000,
            raw_changes in proptest::collection::vec((1u64..40_000_000, 1u64..20_000_000), 0..5),
            arrivals in proptest::collection::vec((0u64..1_500_000, 0u32..3000), 1..80),
            cells in any::<bool>(),
            per_packet in prop_oneof![Just(0u64), 0u64..200_000],
            epd in proptest::option::of(0u64..150),
            max_cells in proptest::option::of(1u64..200),
        ) {
            let mut changes: Vec<(SimTime, u64)> = raw_changes.iter().map(|&(t, r)| (SimTime(t), r)).collect();
            changes.sort();
            changes.dedup_by_key(|c| c.0);
            let limit = match (cells, max_cells) {
                (true, Some(m)) => QueueLimit::Cells(m),
                _ => QueueLimit::Unbounded,
            };
            let mut l = Link::new(Role::Bottleneck, base, 0, limit, true, 0.0, Stream::new(7, 7));
            if cells {
                l = l.atm();
                if let Some(th) = epd {
                    l = l.with_epd(th);
                }
            }
            l.per_packet = per_packet;
            l.set_schedule(changes.clone());
            let (mut now, mut last) = (0u64, SimTime::ZERO);
            for &(gap, size) in &arrivals {
                now += gap;
                let t = SimTime(now);
                let held = l.cells_held(t);
                let whole = aal5_cells(size);
                let r = l.try_admit(t, size);
                // Admission: EPD above its threshold, then what fits under the cell limit.
                let epd_refuses = cells && epd.is_some_and(|th| held > th);
                let fit = match limit {
                    QueueLimit::Cells(m) => m.saturating_sub(held).min(whole as u64) as u32,
                    _ => whole,
                };
                let a = match r {
                    Err(why) => {
                        prop_assert_eq!(why, if epd_refuses { Refusal::Epd } else { Refusal::Full });
                        prop_assert!(epd_refuses || fit == 0);
                        continue;
                    }
                    Ok(a) => a,
                };
                prop_assert!(!epd_refuses && fit > 0);
                prop_assert_eq!(a.truncated, cells && fit < whole);
                if let QueueLimit::Cells(m) = limit {
                    prop_assert!(l.cells_held(t) <= m);
                } else {
                    prop_assert!(!a.truncated, "no hard limit: whole or nothing (footnote 6)");
                }
                // Service: the fewest whole ns from its start in which the rates in force serve
                // its bits, then the constant time; FIFO, so departures never decrease.
                let start = t.max(last);
                let bits = if cells { fit as u128 * 424 } else { size as u128 * 8 };
                let need = bits * NANOS_PER_SEC as u128;
                let end = a.departure.0 - per_packet;
                prop_assert!(end >= start.0);
                prop_assert!(reference_bit_ns(base, &changes, start.0, end) >= need);
                if end > start.0 {
                    prop_assert!(reference_bit_ns(base, &changes, start.0, end - 1) < need);
                }
                prop_assert!(a.departure >= last);
                last = a.departure;
            }
            let s = l.switch;
            prop_assert_eq!(s.epd_cells == 0, s.epd_packets == 0);
            prop_assert!(s.partial_cells >= s.partial_packets);
        }
    }
}
