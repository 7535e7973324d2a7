//! Per-flow metrics, engine counters and the optional per-packet trace.

use crate::tcp::CcState;
use crate::time::SimTime;
use serde::Serialize;

/// One row per flow. Throughput is 8 x bytes / duration, from the flow's start (its first SYN,
/// or its first segment without a handshake) to the last byte delivered in order to the
/// receiving application. For an upstream flow, `data_lost_downstream` counts data lost on its
/// forward (upstream) channel and `acks_lost_upstream` ACKs lost on the downstream channel.
#[derive(Clone, Debug, Serialize, PartialEq)]
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
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EngineMetrics {
    pub events: u64,
    pub simulated_s: f64,
    pub wall_s: f64,
    /// The upstream MAC's totals; null with the FIFO upstream.
    pub mac: Option<crate::access::MacMetrics>,
}

/// The per-packet trace as columns. `seq` and `ack` are data-stream byte offsets (-1 when not
/// applicable); `cwnd`, `ssthresh` and `flight` are bytes at the sender after the event;
/// `queue` is the occupancy of the link (packets) for link events, else -1. MAC rows (`request`,
/// `collision`, `feedback`, `grant`, `burst`, `mac_drop`; access/upstream.rs) have `flow` -1 and
/// name their `station` and first `minislot` (global number); `seq` holds the data units
/// (802.14 data slots, DOCSIS minislots) or, for 802.14 feedback, the RQ number (0 = success).
/// Other rows have `station` and `minislot` -1.
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
