//! DOCSIS 3.0 upstream bonding (Multiple Transmit Channel mode): one modem's upstream service flow
//! spread over several upstream channels, each its own MAC (`Upstream`), and the CMTS's
//! resequencing of what arrives.
//!
//! What DOCSIS 3.0 MULPI says (Sec. 5.2.2.2.2.1, "Traffic Segmentation Overview"): the CMTS decides how
//! to spread a service flow's bandwidth over the channels of its bonding group; "each contiguous group
//! of mini-slots assigned to the same service flow on the same channel becomes a segment", each with
//! its own preamble and guard time, and each carrying a segment header with a sequence number. The
//! modem fills a grant with the next bytes of the flow's queue (continuous concatenation and
//! fragmentation: packet boundaries need not meet segment boundaries), and the CMTS puts the segments
//! back in sequence order before it rebuilds the packets, so a segment that arrives before an earlier
//! one waits for it (the resequencing wait).
//!
//! The model, on top of the per-channel MACs (smallest change: each channel's MAC is unchanged):
//! - the bonded modem is a station on each of its channels (a *sub-station*); the fabric holds its
//!   one FIFO (`Bond`), the service flow's bytes in order;
//! - a packet arriving at the modem is asked for on one channel: the sub-station with the fewest
//!   bytes waiting, ties to the lowest channel (chosen: MULPI lets a modem in MTC mode request on any
//!   channel of the flow's bonding group and leaves the choice to it). It joins that sub-station as
//!   a placeholder of its size (`chunk_tag`), which the channel's MAC requests and is granted like any
//!   packet; the CMTS grants on the channel the request came on (chosen: MULPI leaves the spreading of
//!   grants to the CMTS's scheduler);
//! - when a sub-station sends in a grant (the MAC hands back the placeholders it completes, with
//!   the burst's end), the modem fills it with the next bytes of the FIFO, whatever packets they
//!   belong to: one segment, numbered in the order the modem fills grants (`Bond::segment`). The
//!   modem fills a MAP's grants when it acts on that MAP (upstream.rs), so a MAP acted on earlier
//!   takes earlier bytes, even when its grant ends after another channel's;
//! - the CMTS releases a packet once every byte of it and every earlier segment has arrived: at the
//!   latest arrival among the segments up to the one holding its last byte. Packets leave the CMTS
//!   in order.
//!
//! Left out, each chosen: a segment header of `SEGMENT_HEADER_BYTES` per request (a request is granted
//! in one piece unless fragmentation or its size splits it; a piece beyond the first carries no header
//! of its own here); requests in minislots per channel, as the channel's MAC makes them (MTC mode asks
//! in bytes, in a Queue Depth-based Request frame, FC_PARM 4 in Wireshark's packet-docsis.c, and
//! the CMTS converts); no lost segment (the MAC loses none: a request given up after
//! `max_retries` is asked for again, on the same channel, since its bytes stay in the flow's queue); the
//! modem's background load is sent on its first channel outside the bonded flow.

use crate::net::wait::WaitStats;
use crate::net::{Occupancy, QueueLimit};
use crate::time::{Nanos, SimTime};
use serde::Serialize;
use std::collections::VecDeque;

/// The segment header each segment carries (MULPI 3.0's upstream segment header: the MAC header's
/// frame control, the pointer field, the 13-bit sequence number with the SID cluster, a piggyback
/// request, and the header check sequence). 8 bytes: chosen (the figure's byte count could not be
/// read from a source here).
pub const SEGMENT_HEADER_BYTES: u32 = 8;

/// Tag bit of a bonded placeholder on a sub-station: the MAC's other tags are the fabric's parked
/// packets (below 2^32) and `BACKGROUND` (never handed back).
pub const BOND_TAG: u64 = 1 << 62;

/// The tag of a placeholder for `ip_bytes` of bond `bond`'s flow.
#[inline]
pub fn chunk_tag(bond: u32, ip_bytes: u32) -> u64 {
    BOND_TAG | (u64::from(bond) << 32) | u64::from(ip_bytes)
}

/// A placeholder's (bond, IP bytes), if `tag` is one.
#[inline]
pub fn chunk_of(tag: u64) -> Option<(u32, u32)> {
    (tag != super::BACKGROUND && tag & BOND_TAG != 0).then_some((((tag >> 32) as u32) & 0x3fff_ffff, tag as u32))
}

/// The CMTS's resequencing of one bonded service flow (the station's row in `Result.stations`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ResequenceMetrics {
    /// Segments the CMTS received.
    pub resequenced_segments: u64,
    /// Segments that arrived before an earlier one and waited for it.
    pub resequence_waited: u64,
    /// Their waits, summed, and the longest, s.
    pub resequence_wait_total_s: f64,
    pub resequence_wait_max_s: f64,
}

/// A packet the CMTS releases: the fabric's tag, when, and when it joined the modem's FIFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Released {
    pub tag: u64,
    pub at: SimTime,
    pub enqueued: SimTime,
}

#[derive(Clone, Copy, Debug)]
struct Held {
    tag: u64,
    enqueued: SimTime,
    /// Offset of its end in the flow's byte stream.
    end: u64,
}

/// One bonded modem: its sub-stations, its FIFO (the flow's bytes in order), and the CMTS's
/// resequencing state.
pub struct Bond {
    /// The plant's station number.
    pub station: u32,
    /// (channel, index on that channel) of each sub-station, in channel order.
    pub subs: Vec<(u32, u32)>,
    limit: QueueLimit,
    /// Packets not yet released at the CMTS, in order.
    fifo: VecDeque<Held>,
    /// Bytes of the stream ever enqueued, and ever put into segments.
    enqueued: u64,
    sent: u64,
    /// Packets of `fifo` (from the front) wholly put into segments.
    sent_packets: usize,
    /// The latest arrival among the segments so far: every byte sent so far is at the CMTS by then.
    latest: SimTime,
    waits: u128,
    pub metrics: ResequenceMetrics,
    /// Packets the full FIFO refused (the station row's `queue_drops`).
    pub queue_drops: u64,
    /// The modem's FIFO as a place packets wait: from joining it to their release at the CMTS.
    pub place: WaitStats,
}

impl Bond {
    pub fn new(station: u32, subs: Vec<(u32, u32)>, limit: QueueLimit) -> Bond {
        Bond {
            station,
            subs,
            limit,
            fifo: VecDeque::new(),
            enqueued: 0,
            sent: 0,
            sent_packets: 0,
            place: WaitStats::default(),
            latest: SimTime::ZERO,
            waits: 0,
            metrics: ResequenceMetrics::default(),
            queue_drops: 0,
        }
    }

    /// A packet joins the modem's FIFO; false if the FIFO (what the modem has not yet sent) is full.
    pub fn enqueue(&mut self, now: SimTime, tag: u64, ip_bytes: u32) -> bool {
        let held =
            Occupancy { packets: (self.fifo.len() - self.sent_packets) as u64, bytes: self.enqueued - self.sent };
        self.place.arrival(held.bytes);
        if !self.limit.fits(held, ip_bytes) {
            self.queue_drops += 1;
            return false;
        }
        self.enqueued += u64::from(ip_bytes);
        self.fifo.push_back(Held { tag, enqueued: now, end: self.enqueued });
        true
    }

    /// The modem fills a grant with the next `ip_bytes` of its FIFO: a segment that reaches the
    /// CMTS at `at`. The packets it completes in sequence are appended to `out`.
    pub fn segment(&mut self, at: SimTime, ip_bytes: u32, out: &mut Vec<Released>) {
        self.sent += u64::from(ip_bytes);
        debug_assert!(self.sent <= self.enqueued, "a grant is never for more than was asked");
        while self.fifo.get(self.sent_packets).is_some_and(|h| h.end <= self.sent) {
            self.sent_packets += 1;
        }
        let m = &mut self.metrics;
        m.resequenced_segments += 1;
        if at < self.latest {
            // An earlier segment is still on its way: this one waits for it.
            let wait: Nanos = self.latest - at;
            m.resequence_waited += 1;
            self.waits += u128::from(wait);
            m.resequence_wait_total_s = self.waits as f64 / 1e9;
            m.resequence_wait_max_s = m.resequence_wait_max_s.max(wait as f64 / 1e9);
        } else {
            self.latest = at;
        }
        while self.fifo.front().is_some_and(|h| h.end <= self.sent) {
            let h = self.fifo.pop_front().expect("front");
            self.sent_packets -= 1;
            self.place.served(self.latest - h.enqueued);
            out.push(Released { tag: h.tag, at: self.latest, enqueued: h.enqueued });
        }
    }

    /// Packets held (not yet released at the CMTS).
    pub fn held_packets(&self) -> u64 {
        self.fifo.len() as u64
    }
}

/// The sub-station of `subs` a new packet is asked for on: the one with the fewest bytes waiting
/// (`waiting(channel, index)`), ties to the first.
#[inline]
pub fn pick(subs: &[(u32, u32)], waiting: impl Fn(u32, u32) -> u64) -> (u32, u32) {
    let mut best = subs[0];
    let mut least = waiting(best.0, best.1);
    for &(c, i) in &subs[1..] {
        let w = waiting(c, i);
        if w < least {
            best = (c, i);
            least = w;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_never_take_background() {
        assert_eq!(chunk_of(chunk_tag(7, 1500)), Some((7, 1500)));
        assert_eq!(chunk_of(super::super::BACKGROUND), None);
        assert_eq!(chunk_of(12345), None);
    }

    #[test]
    fn a_packet_waits_for_every_byte_and_every_earlier_segment() {
        // Packets of 100 and 50 bytes. Segment 0 (60 bytes) arrives at 10, segment 1 (40) at 5: it
        // waits 5 for segment 0, and packet 0 (bytes 0-99) is released at 10. Segment 2 (50) at 7:
        // not before segment 1's release frontier 10, so it waits 3 and packet 1 leaves at 10 too.
        let mut b = Bond::new(0, vec![(0, 0), (1, 0)], QueueLimit::Unbounded);
        assert!(b.enqueue(SimTime(0), 1, 100));
        assert!(b.enqueue(SimTime(0), 2, 50));
        let mut out = vec![];
        b.segment(SimTime(10), 60, &mut out);
        assert!(out.is_empty());
        b.segment(SimTime(5), 40, &mut out);
        assert_eq!(out, vec![Released { tag: 1, at: SimTime(10), enqueued: SimTime(0) }]);
        b.segment(SimTime(7), 50, &mut out);
        assert_eq!(out[1], Released { tag: 2, at: SimTime(10), enqueued: SimTime(0) });
        assert_eq!((b.metrics.resequenced_segments, b.metrics.resequence_waited), (3, 2));
        assert_eq!(b.metrics.resequence_wait_total_s, 8e-9);
        assert_eq!(b.metrics.resequence_wait_max_s, 5e-9);
    }
}
