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
//! A link that counts ATM cells (link.rs, `Link::atm`) also asks its queue for the cells held
//! (atm.rs, "The model of a switch"): every packet entry keeps the cells it put in the buffer, and
//! the link says how many of the packet in service's cells have left.
//!
//! # Disciplines: the plug point
//!
//! `Discipline` is asked on every arrival: `admit(now, occupancy, size, limit)` for a buffer of
//! packets or bytes, `admit_cells` for a buffer of cells. A discipline is a variant whose state
//! and rules live in their own file under `net/`, each rule citing its source, dispatched by the
//! `match` in `Discipline::admit` or `admit_cells` (an enum, not `dyn`: this is on the per-packet
//! path):
//! - drop-tail: admit whatever fits under the limit, by bytes or by packets, or everything when
//!   unbounded; with a limit in cells, the cells that fit (partial packet discard, atm.rs);
//! - early packet discard for ATM switches (epd.rs; Elloumi et al. Sec. 4, switches SW1 and SW2,
//!   after Romanow & Floyd 1995): refuse a whole packet when the buffer is above a threshold in
//!   cells as its first cell arrives.
//!
//! Planned, not implemented:
//! - PIE (RFC 8033) and DOCSIS-PIE (RFC 8034): a random drop at enqueue with a probability
//!   updated every T_UPDATE from the queue delay; fits `admit` (the update can be brought up to
//!   `now` on each arrival) given a random stream of its own;
//! - CoDel (RFC 8289) drops at dequeue from the sojourn time, and a token-bucket shaper (DOCSIS
//!   rate caps) delays service instead of dropping. Both decide at the time of service, so a link
//!   using them must leave the departure-on-arrival fast path and schedule its own service events
//!   (docs/design.md, "The network of parts, and the fabric"); their admission test stays here.

use super::epd::Epd;
use crate::time::SimTime;
use std::collections::VecDeque;

/// The buffer's capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Unbounded,
    Bytes(u64),
    Packets(u64),
    /// ATM cells (atm.rs); only a link that counts cells can have it (`Link::atm`).
    Cells(u64),
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
    ///
    /// # Panics
    /// On a limit in cells: `occ` has no cells; a cell buffer asks `cells_that_fit`.
    #[inline]
    pub fn fits(self, occ: Occupancy, size: u32) -> bool {
        match self {
            QueueLimit::Unbounded => true,
            QueueLimit::Packets(max) => occ.packets < max,
            QueueLimit::Bytes(max) => occ.bytes + size as u64 <= max,
            QueueLimit::Cells(_) => panic!("a buffer bounded in cells needs a link that counts cells (Link::atm)"),
        }
    }

    /// How many of an arriving packet's `cells` a cell-counting buffer takes beside `occ` and
    /// `held_cells`: under a limit in cells, those that fit, first cells first (drop-tail per
    /// cell; atm.rs, "Cell losses"); under the other limits, all of them or none, as `fits`.
    #[inline]
    pub fn cells_that_fit(self, occ: Occupancy, held_cells: u64, size: u32, cells: u32) -> u32 {
        match self {
            QueueLimit::Cells(max) => max.saturating_sub(held_cells).min(cells as u64) as u32,
            _ if self.fits(occ, size) => cells,
            _ => 0,
        }
    }
}

/// What the buffer holds at one instant, as its limit counts it. (A cell buffer's cells are
/// asked separately, `Queue::admit_cells`, `Link::cells_held`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    pub packets: u64,
    pub bytes: u64,
}

/// Why a packet was refused whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not even its first unit fitted under the limit (tail drop).
    Full,
    /// Early packet discard: the buffer held more cells than the threshold (epd.rs).
    Epd,
}

/// Decides whether an arriving packet enters the buffer (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    /// Admit while the packet fits under the limit, else drop the arriving packet (tail drop);
    /// in cells, the cells that fit.
    DropTail,
    /// Early packet discard (epd.rs), on a buffer of cells.
    Epd(Epd),
}

impl Discipline {
    /// Whether a packet of `size` bytes arriving at `now` is admitted, given the buffer's
    /// occupancy without it and the buffer's limit.
    ///
    /// # Panics
    /// Under EPD, which counts cells: its link must count them (`Link::with_epd`).
    #[inline]
    pub fn admit(&mut self, _now: SimTime, occ: Occupancy, size: u32, limit: QueueLimit) -> bool {
        match self {
            Discipline::DropTail => limit.fits(occ, size),
            Discipline::Epd(_) => panic!("early packet discard needs a link that counts cells (Link::with_epd)"),
        }
    }

    /// How many of the `cells` of a packet of `size` bytes arriving at `now` a cell buffer
    /// queues, given its occupancy and the cells it holds without the packet (`held_cells`, as
    /// `Queue::admit_cells` counts them), or why it refuses them all.
    #[inline]
    pub fn admit_cells(
        &mut self,
        _now: SimTime,
        occ: Occupancy,
        held_cells: u64,
        size: u32,
        cells: u32,
        limit: QueueLimit,
    ) -> Result<u32, Refusal> {
        if let Discipline::Epd(epd) = self {
            // Romanow & Floyd 1995: EPD looks at the buffer as the packet's first cell arrives.
            if !epd.accepts(held_cells) {
                return Err(Refusal::Epd);
            }
        }
        match limit.cells_that_fit(occ, held_cells, size, cells) {
            0 => Err(Refusal::Full),
            n => Ok(n),
        }
    }
}

/// A FIFO buffer: its limit, its discipline and the packets it holds.
pub struct Queue {
    pub limit: QueueLimit,
    pub discipline: Discipline,
    /// Whether the packet being transmitted still occupies the buffer (module comment); in a
    /// buffer of cells, whether the cell being transmitted does (epd.rs).
    pub counts_in_service: bool,
    /// (start of service, departure, bytes, cells) of every packet not yet departed, in FIFO
    /// order. Cells are 0 unless the link counts them.
    held: VecDeque<(SimTime, SimTime, u32, u32)>,
    held_bytes: u64,
    held_cells: u64,
}

impl Queue {
    /// A drop-tail buffer.
    pub fn new(limit: QueueLimit, counts_in_service: bool) -> Queue {
        Queue {
            limit,
            discipline: Discipline::DropTail,
            counts_in_service,
            held: VecDeque::new(),
            held_bytes: 0,
            held_cells: 0,
        }
    }

    /// Forget the packets that have departed by `now`.
    #[inline]
    fn prune(&mut self, now: SimTime) {
        while let Some(&(_, dep, size, cells)) = self.held.front() {
            if dep > now {
                break;
            }
            self.held.pop_front();
            self.held_bytes -= size as u64;
            self.held_cells -= cells as u64;
        }
    }

    /// Occupancy at `now` as the limit counts it (after `prune`).
    #[inline]
    fn occupancy_at(&self, now: SimTime) -> Occupancy {
        let (packets, bytes) = (self.held.len() as u64, self.held_bytes);
        match self.held.front() {
            Some(&(start, _, size, _)) if !self.counts_in_service && start <= now => {
                Occupancy { packets: packets - 1, bytes: bytes - size as u64 }
            }
            _ => Occupancy { packets, bytes },
        }
    }

    /// Cells in the buffer at `now` (after `prune`): all cells of the packets waiting, and the
    /// cells of the packet in service not yet sent in full, of which `sent(start, cells)` says how
    /// many have left since its service started. The cell being transmitted counts if `on_wire`.
    #[inline]
    fn cells_at(&self, now: SimTime, on_wire: bool, sent: impl FnOnce(SimTime, u32) -> u32) -> u64 {
        match self.held.front() {
            Some(&(start, _, _, cells)) if start <= now => {
                let sent = sent(start, cells).min(cells);
                let wire = u32::from(!on_wire && sent < cells);
                self.held_cells - (sent + wire) as u64
            }
            _ => self.held_cells,
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

    /// Cells at the link at `now`, waiting or being sent (the cell on the wire counts);
    /// `sent` as in `admit_cells`.
    pub fn cells(&mut self, now: SimTime, sent: impl FnOnce(SimTime, u32) -> u32) -> u64 {
        self.prune(now);
        self.cells_at(now, true, sent)
    }

    /// Bytes of the packets not yet departed (waiting or in service), as of the last `prune`.
    #[inline]
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }

    /// Ask the discipline whether a packet of `size` bytes arriving at `now` may enter.
    #[inline]
    pub fn admit(&mut self, now: SimTime, size: u32) -> bool {
        self.prune(now);
        // A buffer that excludes the packet in service (Lakshman & Madhow Sec. II: B packets of
        // buffer besides the one being served): a packet that finds the link idle goes into
        // service at once and needs no room, so a limit of 0 packets (or fewer bytes than the
        // packet) passes it and refuses only packets that would wait.
        if !self.counts_in_service && self.held.is_empty() {
            return true;
        }
        let occ = self.occupancy_at(now);
        self.discipline.admit(now, occ, size, self.limit)
    }

    /// Ask the discipline how many of the `cells` of a packet of `size` bytes arriving at `now`
    /// enter a buffer of cells. `sent(start, cells)`: how many cells of the packet in service,
    /// which started at `start` with `cells` cells, have been sent in full by `now` (the link
    /// knows its rates).
    #[inline]
    pub fn admit_cells(
        &mut self,
        now: SimTime,
        size: u32,
        cells: u32,
        sent: impl FnOnce(SimTime, u32) -> u32,
    ) -> Result<u32, Refusal> {
        self.prune(now);
        let occ = self.occupancy_at(now);
        let held_cells = self.cells_at(now, self.counts_in_service, sent);
        self.discipline.admit_cells(now, occ, held_cells, size, cells, self.limit)
    }

    /// Hold an admitted packet, which put `cells` in the buffer (0 unless the link counts them),
    /// until `departure`; FIFO: departures never decrease.
    #[inline]
    pub fn push(&mut self, start: SimTime, departure: SimTime, size: u32, cells: u32) {
        self.held.push_back((start, departure, size, cells));
        self.held_bytes += size as u64;
        self.held_cells += cells as u64;
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
            q.push(SimTime(0), SimTime(10), 1000, 0);
            q.push(SimTime(10), SimTime(20), 1000, 0);
            assert_eq!(q.occupancy(SimTime(5)), want);
            assert_eq!(q.held(SimTime(5)), 2);
            assert_eq!(q.held(SimTime(10)), 1);
            assert_eq!(q.held(SimTime(20)), 0);
        }
    }

    #[test]
    fn cells_that_fit_by_limit() {
        // (limit, occupancy, cells held, size, cells, queued)
        let cases = [
            (QueueLimit::Cells(50), occ(2, 2048), 44, 1024, 22, 6), // partial: 6 of 22
            (QueueLimit::Cells(50), occ(1, 1024), 22, 1024, 22, 22),
            (QueueLimit::Cells(50), occ(3, 3072), 50, 40, 2, 0),
            (QueueLimit::Cells(50), occ(3, 3072), 60, 40, 2, 0), // over the limit: no wrap
            (QueueLimit::Unbounded, occ(9, 9216), 198, 1024, 22, 22),
            (QueueLimit::Packets(2), occ(1, 1024), 22, 1024, 22, 22), // packets go whole
            (QueueLimit::Packets(2), occ(2, 2048), 44, 1024, 22, 0),
        ];
        for (limit, o, held, size, cells, want) in cases {
            assert_eq!(limit.cells_that_fit(o, held, size, cells), want, "{limit:?} {held}");
        }
    }

    #[test]
    fn epd_then_the_cell_limit() {
        let t = SimTime::ZERO;
        let o = occ(0, 0);
        let mut epd = Discipline::Epd(Epd { threshold_cells: 40 });
        let mut tail = Discipline::DropTail;
        // (discipline, cells held, limit, verdict for a 22-cell packet)
        let unbounded = QueueLimit::Unbounded;
        assert_eq!(epd.admit_cells(t, o, 40, 1024, 22, unbounded), Ok(22));
        assert_eq!(epd.admit_cells(t, o, 41, 1024, 22, unbounded), Err(Refusal::Epd));
        assert_eq!(epd.admit_cells(t, o, 40, 1024, 22, QueueLimit::Cells(50)), Ok(10));
        assert_eq!(epd.admit_cells(t, o, 41, 1024, 22, QueueLimit::Cells(30)), Err(Refusal::Epd), "EPD first");
        assert_eq!(tail.admit_cells(t, o, 41, 1024, 22, QueueLimit::Cells(50)), Ok(9));
        assert_eq!(tail.admit_cells(t, o, 50, 1024, 22, QueueLimit::Cells(50)), Err(Refusal::Full));
        assert_eq!(tail.admit_cells(t, o, 1 << 40, 1024, 22, unbounded), Ok(22));
    }

    #[test]
    fn cells_held_count_the_unsent_cells_of_the_packet_in_service() {
        // Two 22-cell packets in a 60-cell buffer; 3 cells of the first have been sent. Counting
        // the cell on the wire (the 4th): 19 + 22 = 41 held, 19 of a new packet's cells fit;
        // without it, 40 held and 20 fit.
        for (counts, fit) in [(true, 19), (false, 20)] {
            let mut q = Queue::new(QueueLimit::Cells(60), counts);
            q.push(SimTime(0), SimTime(100), 1024, 22);
            q.push(SimTime(100), SimTime(200), 1024, 22);
            let mut asked = None;
            let sent = |start, cells| {
                asked = Some((start, cells));
                3
            };
            assert_eq!(q.admit_cells(SimTime(5), 1024, 22, sent), Ok(fit), "counts_in_service {counts}");
            assert_eq!(asked, Some((SimTime(0), 22)), "asked about the packet in service");
            // The trace's count includes the cell on the wire either way.
            assert_eq!(q.cells(SimTime(5), |_, _| 3), 41);
            // All 22 sent (a constant service time still running): only the second's count.
            assert_eq!(q.cells(SimTime(5), |_, _| 22), 22);
            assert_eq!(q.cells(SimTime(100), |_, _| 0), 22, "the first has departed");
            assert_eq!(q.cells(SimTime(200), |_, _| 0), 0);
        }
    }

    #[test]
    #[should_panic(expected = "counts cells")]
    fn a_cell_limit_is_not_checked_on_packets() {
        QueueLimit::Cells(5).fits(occ(0, 0), 40);
    }
}
