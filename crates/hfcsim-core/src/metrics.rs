//! Per-flow metrics, engine counters and the optional per-packet trace.

use crate::tcp::CcState;
use crate::time::SimTime;
use serde::Serialize;

/// One row per flow. Throughput is 8 x bytes / duration, from the flow's start (its first SYN,
/// or its first segment without a handshake) to the last byte delivered in order to the
/// receiving application. For an upstream flow, `data_lost_downstream` counts data lost on its
/// forward (upstream) channel and `acks_lost_upstream` ACKs lost on the downstream channel.
/// `Default` is all zero and null, a base for struct-update syntax.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowMetrics {
    pub flow: u32,
    pub bytes: u64,
    /// Bytes delivered in order to the receiving application by the end of the run (all of them
    /// when finished; the goodput numerator of a time-limited run otherwise).
    pub delivered_bytes: u64,
    pub start_s: f64,
    pub end_s: Option<f64>,
    pub duration_s: Option<f64>,
    pub throughput_bps: Option<f64>,
    pub finished: bool,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub retransmitted_segments: u64,
    pub data_segments_sent: u64,
    pub acks_received: u64,
    pub data_lost_downstream: u64,
    pub acks_lost_upstream: u64,
    pub cm_buffer_drops: u64,
    /// Drop-tail losses at any queue (the CM buffer or a bottleneck).
    pub queue_drops: u64,
    /// How long the receiver held its first ACK of data (the delayed-ACK wait, Cohen Fig. 11).
    pub first_ack_delay_s: Option<f64>,
    /// Through a request/grant upstream (null without one): the flow's packets' access delay,
    /// from joining the station's MAC FIFO to arriving whole at the headend, mean and max;
    pub access_delay_mean_s: Option<f64>,
    pub access_delay_max_s: Option<f64>,
    /// and from their request's first transmission to the grant reaching the station.
    pub request_grant_mean_s: Option<f64>,
    /// Packets discarded by the MAC after their request failed `upstream.max_retries` times.
    pub mac_drops: u64,
    /// Bytes delivered in order to the receiver from `sim.measure_from_s` to the end of the run
    /// (each byte once: Elloumi et al.'s "effective throughput" counts neither discarded packets
    /// nor duplicate retransmissions), and the length of that interval.
    pub measured_bytes: u64,
    pub measured_s: f64,
    /// The sender's RTT samples from `sim.measure_from_s` on (`RttMeter`).
    pub rtt_samples: u64,
    pub rtt_mean_s: Option<f64>,
    pub rtt_max_s: Option<f64>,
    pub rtt_std_s: Option<f64>,
    /// The upstream station the flow's upstream packets use (null with the FIFO upstream), and
    /// that station's requests, all and piggybacked (Elloumi Figs. 15-16).
    pub station: Option<u32>,
    pub station_requests: u64,
    pub station_piggybacked_requests: u64,
    /// The flow's packets discarded at an ATM switch: whole (early packet discard) or in part.
    pub epd_drops: u64,
    /// The flow's packets an AQM dropped (PIE at enqueue, CoDel at dequeue).
    pub aqm_drops: u64,
    /// The run's ping RTTs (all pings), by when the echo was sent: before the flow started, while
    /// it ran ([start, end), to the end of the run if unfinished), after it ended. Null without
    /// samples. `ping_lost` counts echoes sent while it ran that got no reply.
    pub ping_before_mean_s: Option<f64>,
    pub ping_during_mean_s: Option<f64>,
    pub ping_during_max_s: Option<f64>,
    pub ping_after_mean_s: Option<f64>,
    pub ping_during_samples: u64,
    pub ping_lost: u64,
}

/// One echo of a ping: when it was sent and its round-trip time (None: no reply).
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct PingRecord {
    pub ping: u32,
    pub seq: u32,
    pub sent_s: f64,
    pub rtt_s: Option<f64>,
}

/// A service queue's counters (net/servicequeue.rs), for the engine's output.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueueMetrics {
    pub name: String,
    pub sent: u64,
    pub drops_full: u64,
    pub drops_aqm: u64,
    pub max_bytes: u64,
}

/// The sender's RTT samples, as a measurement beside TCP (not its own timer's samples): for every
/// ACK that advances snd_una, the time since the first transmission of the highest segment it
/// acknowledges whole, skipped when any segment it acknowledges was retransmitted (Karn's rule:
/// the ACK could be for either copy, and an ACK that fills a hole was held back by the loss, not by
/// the path). Elloumi et al. Table 3 multiplies such RTTs by the bottleneck rate.
#[derive(Clone, Debug, Default)]
pub struct RttMeter {
    /// (end sequence, first transmission, retransmitted) of segments not yet acknowledged.
    sent: std::collections::VecDeque<(u64, SimTime, bool)>,
    pub samples: u64,
    sum: f64,
    sum_sq: f64,
    max: u64,
}

impl RttMeter {
    /// A segment `[seq, end)` leaves the sender at `now`.
    pub fn on_send(&mut self, now: SimTime, seq: u64, end: u64, retransmit: bool) {
        if !retransmit && self.sent.back().is_none_or(|&(e, _, _)| end > e) {
            self.sent.push_back((end, now, false));
            return;
        }
        // A retransmission: every segment it overlaps is ambiguous from now on. Segments are
        // contiguous, so each one starts where the one before it ends.
        let first = self.sent.partition_point(|&(e, _, _)| e <= seq);
        let mut start = if first == 0 { 0 } else { self.sent[first - 1].0 };
        for s in self.sent.iter_mut().skip(first) {
            if start >= end {
                break;
            }
            s.2 = true;
            start = s.0;
        }
    }

    /// An ACK for everything below `ack` arrives at `now`; samples count from `from` on.
    pub fn on_ack(&mut self, now: SimTime, ack: u64, from: SimTime) {
        let mut last = None;
        let mut ambiguous = false;
        while let Some(&(end, at, rexmt)) = self.sent.front() {
            if end > ack {
                break;
            }
            last = Some(at);
            ambiguous |= rexmt;
            self.sent.pop_front();
        }
        if let (Some(at), false) = (last, ambiguous) {
            if now >= from {
                let rtt = now - at;
                let x = rtt as f64 / 1e9;
                self.samples += 1;
                self.sum += x;
                self.sum_sq += x * x;
                self.max = self.max.max(rtt);
            }
        }
    }

    /// (mean, max, population standard deviation) in seconds.
    pub fn summary(&self) -> (Option<f64>, Option<f64>, Option<f64>) {
        if self.samples == 0 {
            return (None, None, None);
        }
        let n = self.samples as f64;
        let mean = self.sum / n;
        let var = (self.sum_sq / n - mean * mean).max(0.0);
        (Some(mean), Some(self.max as f64 / 1e9), Some(var.sqrt()))
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EngineMetrics {
    pub events: u64,
    pub simulated_s: f64,
    pub wall_s: f64,
    /// The upstream MAC's totals; null with the FIFO upstream.
    pub mac: Option<crate::access::MacMetrics>,
    /// The ATM switches' discards, summed over their output queues; null without switches.
    pub switches: Option<crate::net::SwitchStats>,
    /// The service queues' counters (DOCSIS service flows); left out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueMetrics>,
}

/// The per-packet trace as columns. `seq` and `ack` are data-stream byte offsets (-1 when not
/// applicable); `cwnd`, `ssthresh` and `flight` are bytes at the sender after the event;
/// `queue` is the occupancy of the link (packets) for link events, else -1. MAC rows (`request`,
/// `collision`, `feedback`, `grant`, `burst`, `mac_drop`; access/upstream.rs) have `flow` -1 and
/// name their `station` and first `minislot` (global number); `seq` holds the data units
/// (802.14 data slots, DOCSIS minislots) or, for 802.14 feedback, the RQ number (0 = success).
/// Other rows have `station` and `minislot` -1. `link` names the link (topology order) of
/// `enqueue`, `drop` and `epd_drop` rows, -1 on others; at an ATM link `queue` counts cells.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Trace {
    pub time_s: Vec<f64>,
    pub time_ns: Vec<u64>,
    pub flow: Vec<i64>,
    pub event: Vec<&'static str>,
    pub seq: Vec<i64>,
    pub ack: Vec<i64>,
    pub cwnd: Vec<u64>,
    pub ssthresh: Vec<u64>,
    pub flight: Vec<u64>,
    pub queue: Vec<i64>,
    pub station: Vec<i64>,
    pub minislot: Vec<i64>,
    pub link: Vec<i64>,
}

impl Trace {
    #[allow(clippy::too_many_arguments)]
    pub fn push(&mut self, t: SimTime, flow: u32, event: &'static str, seq: i64, ack: i64, cc: &CcState, queue: i64) {
        self.time_s.push(t.as_secs_f64());
        self.time_ns.push(t.0);
        self.flow.push(flow as i64);
        self.event.push(event);
        self.seq.push(seq);
        self.ack.push(ack);
        self.cwnd.push(cc.cwnd);
        self.ssthresh.push(cc.ssthresh);
        self.flight.push(cc.flight);
        self.queue.push(queue);
        self.station.push(-1);
        self.minislot.push(-1);
        self.link.push(-1);
    }

    /// Name the link of the row just pushed.
    pub fn set_link(&mut self, link: u32) {
        if let Some(l) = self.link.last_mut() {
            *l = link as i64;
        }
    }

    /// A row of the upstream MAC.
    pub fn push_mac(&mut self, e: &crate::access::upstream::MacEvent) {
        self.time_s.push(e.time.as_secs_f64());
        self.time_ns.push(e.time.0);
        self.flow.push(-1);
        self.event.push(e.event);
        self.seq.push(e.units as i64);
        self.ack.push(-1);
        self.cwnd.push(0);
        self.ssthresh.push(0);
        self.flight.push(0);
        self.queue.push(-1);
        self.station.push(e.station as i64);
        self.minislot.push(e.minislot as i64);
        self.link.push(-1);
    }

    /// Rows in time order (a media loss is recorded when the packet arrives at the link, at
    /// its departure time, so rows can be out of order until the run ends); ties keep the
    /// order of recording.
    pub fn sorted(self) -> Trace {
        let mut idx: Vec<usize> = (0..self.len()).collect();
        idx.sort_by_key(|&i| self.time_ns[i]);
        let pick = |i: &usize| *i;
        Trace {
            time_s: idx.iter().map(|i| self.time_s[pick(i)]).collect(),
            time_ns: idx.iter().map(|i| self.time_ns[pick(i)]).collect(),
            flow: idx.iter().map(|i| self.flow[pick(i)]).collect(),
            event: idx.iter().map(|i| self.event[pick(i)]).collect(),
            seq: idx.iter().map(|i| self.seq[pick(i)]).collect(),
            ack: idx.iter().map(|i| self.ack[pick(i)]).collect(),
            cwnd: idx.iter().map(|i| self.cwnd[pick(i)]).collect(),
            ssthresh: idx.iter().map(|i| self.ssthresh[pick(i)]).collect(),
            flight: idx.iter().map(|i| self.flight[pick(i)]).collect(),
            queue: idx.iter().map(|i| self.queue[pick(i)]).collect(),
            station: idx.iter().map(|i| self.station[pick(i)]).collect(),
            minislot: idx.iter().map(|i| self.minislot[pick(i)]).collect(),
            link: idx.iter().map(|i| self.link[pick(i)]).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Rows of one event kind, as (time ns, seq).
    pub fn rows(&self, event: &str) -> Vec<(u64, i64)> {
        (0..self.len()).filter(|&i| self.event[i] == event).map(|i| (self.time_ns[i], self.seq[i])).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn rtt_samples_follow_karn() {
        let mut m = RttMeter::default();
        // Segments of 1000 bytes sent at 0, 1, 2, 3 ms.
        for i in 0..4u64 {
            m.on_send(SimTime(i * MS), i * 1000, (i + 1) * 1000, false);
        }
        // A cumulative ACK for the first two at 10 ms: one sample, from the second's send (1 ms).
        m.on_ack(SimTime(10 * MS), 2000, SimTime::ZERO);
        assert_eq!(m.samples, 1);
        // The third is retransmitted at 12 ms; an ACK for it gives no sample (Karn), nor would one
        // that also covered the fourth.
        m.on_send(SimTime(12 * MS), 2000, 3000, true);
        m.on_ack(SimTime(20 * MS), 3000, SimTime::ZERO);
        assert_eq!(m.samples, 1);
        // The fourth was not retransmitted: 25 - 3 = 22 ms.
        m.on_ack(SimTime(25 * MS), 4000, SimTime::ZERO);
        assert_eq!(m.samples, 2);
        let (mean, max, std) = m.summary();
        assert_eq!(max, Some(0.022));
        assert!((mean.unwrap() - 0.0155).abs() < 1e-12, "(9 + 22) / 2 ms");
        assert!((std.unwrap() - 0.0065).abs() < 1e-12, "population std of 9 and 22 ms");
        // Samples before `from` are not counted.
        m.on_send(SimTime(30 * MS), 4000, 5000, false);
        m.on_ack(SimTime(40 * MS), 5000, SimTime(41 * MS));
        assert_eq!(m.samples, 2);
    }

    #[test]
    fn a_retransmission_marks_every_segment_it_overlaps() {
        let mut m = RttMeter::default();
        for i in 0..3u64 {
            m.on_send(SimTime(i * MS), i * 1000, (i + 1) * 1000, false);
        }
        // Go-back-N resends from 1000 as one 2000-byte segment: segments 2 and 3 are ambiguous.
        m.on_send(SimTime(5 * MS), 1000, 3000, true);
        m.on_ack(SimTime(9 * MS), 1000, SimTime::ZERO);
        m.on_ack(SimTime(10 * MS), 2000, SimTime::ZERO);
        m.on_ack(SimTime(11 * MS), 3000, SimTime::ZERO);
        assert_eq!(m.samples, 1, "only the first segment gives a sample");
    }
}
