//! Per-flow metrics, engine counters and the optional per-packet trace.

use crate::tcp::receiver::Receiver;
use crate::tcp::sender::Sender;
use crate::tcp::CcState;
use crate::time::SimTime;
use serde::Serialize;

/// Why a flow ended (issue 26, defect 6): it delivered every byte; it was still running when the
/// run reached `sim.time_limit_s`; TCP gave up on it after its timeouts (Net/3 `TCP_MAXRXTSHIFT`,
/// Linux `tcp_retries2`; in the handshake too); or the run ended before its `start_s`; or it
/// stalled (issue 36): nothing was left to happen to it (no timer, no packet in flight), or for a
/// long time it did nothing but probe a closed window (sim.rs `STALL_AFTER`). A stall is a defect
/// of the model, never a property of TCP: `FlowMetrics::stall` says where it stuck.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    Finished,
    #[default]
    TimeLimit,
    GaveUp,
    NotStarted,
    Stalled,
}

impl EndReason {
    /// The reason from what the flow's two ends say (the receiver tells when it finished).
    pub fn of(finished: bool, sender: &Sender, receiver: &Receiver) -> EndReason {
        if finished {
            EndReason::Finished
        } else if sender.gave_up() || receiver.gave_up() {
            EndReason::GaveUp
        } else if !sender.started() && !receiver.started() {
            EndReason::NotStarted
        } else {
            EndReason::TimeLimit
        }
    }
}

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
    /// Retransmission timeouts of data (`syn_timeouts` counts the handshake's).
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
    /// With the flow's ECN on (`flows.*.ecn`, else `tcp.ecn`; absent otherwise): the data packets
    /// that reached the receiver marked CE,
    /// and the sender's window reductions for ECN-Echo (RFC 3168 Sec. 6.1.2, at most one per round
    /// trip; DCTCP's cuts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce_received: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_reductions: Option<u64>,
    /// With `tcp.undo` on (absent otherwise): the sender's window reductions undone as spurious
    /// (Linux's undos, F-RTO's among them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undos: Option<u64>,
    /// The run's ping RTTs (all pings), by when the echo was sent: before the flow started, while
    /// it ran ([start, end), to the end of the run if unfinished), after it ended. Null without
    /// samples. `ping_lost` counts echoes sent while it ran that got no reply.
    pub ping_before_mean_s: Option<f64>,
    pub ping_during_mean_s: Option<f64>,
    pub ping_during_max_s: Option<f64>,
    pub ping_after_mean_s: Option<f64>,
    pub ping_during_samples: u64,
    pub ping_lost: u64,
    /// Why the flow ended (`EndReason`).
    pub end_reason: EndReason,
    /// With `end_reason` stalled (absent otherwise): when and where the flow stuck, its window,
    /// buffers and state, in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<String>,
    /// Expiries of the sender's persist timer (its window probes; tcp/sender/persist.rs); absent
    /// while 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub persist_timeouts: u64,
    /// When the largest window the flow can have is below its path's bandwidth-delay product (absent
    /// otherwise; issue 35): that window, bytes, and the key whose limit it is (the send buffer, the
    /// receive buffer, or the window field without `tcp.window_scaling`); the product, bytes, of the
    /// path's slowest rate, bit/s, and its base round trip, s (the least RTT the flow measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_limit_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_limited_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bdp_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_rate_bps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rtt_s: Option<f64>,
    /// Retransmission timeouts in the handshake, of either end's SYN or SYN-ACK.
    pub syn_timeouts: u64,
}

/// One echo of a ping: when it was sent and its round-trip time (None: no reply).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PingRecord {
    pub ping: u32,
    pub seq: u32,
    pub sent_s: f64,
    pub rtt_s: Option<f64>,
    /// One-way delays: upstream, from the client's send to the server's receipt; downstream, from
    /// the server's reply to the client's receipt (None: not received).
    pub up_s: Option<f64>,
    pub down_s: Option<f64>,
    /// Whether the echo is lost: sent while the ping ran, not answered by the end of the run, and
    /// not still on its way then (an echo in flight at the end is neither answered nor lost).
    pub lost: bool,
    /// Where each one-way delay went (fabric.rs `Leg`), s: waiting in buffers (at a modem, held by
    /// its service flow's rate cap), the shared upstream's access (contention, the request/grant
    /// cycle and the grants for the packets ahead, the wait for its minislots), serialisation,
    /// propagation (the plant's constant delays included). They sum to `up_s` and `down_s`; None
    /// when that is None.
    pub up_queue_s: Option<f64>,
    pub up_access_s: Option<f64>,
    pub up_serialisation_s: Option<f64>,
    pub up_propagation_s: Option<f64>,
    pub down_queue_s: Option<f64>,
    pub down_access_s: Option<f64>,
    pub down_serialisation_s: Option<f64>,
    pub down_propagation_s: Option<f64>,
    /// The place where the echo waited longest on its way (up, down), by its name in
    /// `EngineMetrics::places`; None when it waited nowhere.
    pub up_waited_most_at: Option<String>,
    pub down_waited_most_at: Option<String>,
}

/// One place packets wait (a link's buffer, a service flow's queue, a modem's request queue, a
/// bonded modem's FIFO): what arrived, what it dropped and why, how long packets waited there and
/// what each arrival found (net/wait.rs; percentiles within 1.6 %).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PlaceMetrics {
    pub name: String,
    /// "link", "service_flow" (a DOCSIS service flow's queue), "queue" (a buffer an AQM governs: the
    /// hfc modem's toward the PC, the bottleneck's), "modem_queue" (a modem's MAC queue with no
    /// service flow: hfc, atm_hfc) or "bond" (a bonded modem's FIFO).
    pub kind: &'static str,
    /// "down", "up", or "-" where a link is not on one side of the plant.
    pub direction: &'static str,
    pub arrivals: u64,
    pub served: u64,
    pub drops_full: u64,
    pub drops_aqm: u64,
    /// An ATM switch's discards (EPD, partial packet discard); the MAC's give-ups (max_retries).
    pub drops_other: u64,
    /// Lost to media errors after the buffer (a link's).
    pub lost: u64,
    pub marks: u64,
    pub wait_mean_s: Option<f64>,
    pub wait_p50_s: Option<f64>,
    pub wait_p90_s: Option<f64>,
    pub wait_p99_s: Option<f64>,
    pub wait_max_s: Option<f64>,
    /// Bytes an arrival found there (waiting or in service), percentiles and the most.
    pub held_p50_bytes: Option<u64>,
    pub held_p99_bytes: Option<u64>,
    pub held_max_bytes: u64,
}

impl PlaceMetrics {
    /// A place's row from its waits (the caller fills the drops and marks).
    pub fn of(
        name: String,
        kind: &'static str,
        direction: &'static str,
        w: &crate::net::wait::WaitStats,
    ) -> PlaceMetrics {
        // A percentile is its bucket's midpoint (net/wait.rs): never above the largest value seen.
        let s = |ns: Option<u64>| ns.map(|v| v.min(w.wait_max) as f64 / 1e9);
        let b = |bytes: Option<u64>| bytes.map(|v| v.min(w.found_max));
        let [p50, p90, p99] = w.waits.quantiles_of(w.served, [0.5, 0.9, 0.99]);
        let [h50, h99] = w.found.quantiles_of(w.arrivals, [0.5, 0.99]);
        PlaceMetrics {
            name,
            kind,
            direction,
            arrivals: w.arrivals,
            served: w.served,
            wait_mean_s: (w.served > 0).then(|| w.wait_sum as f64 / w.served as f64 / 1e9),
            wait_p50_s: s(p50),
            wait_p90_s: s(p90),
            wait_p99_s: s(p99),
            wait_max_s: (w.served > 0).then(|| w.wait_max as f64 / 1e9),
            held_p50_bytes: b(h50),
            held_p99_bytes: b(h99),
            held_max_bytes: w.found_max,
            ..PlaceMetrics::default()
        }
    }
}

/// A service queue's counters (net/servicequeue.rs), for the engine's output.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueueMetrics {
    pub name: String,
    pub sent: u64,
    pub drops_full: u64,
    pub drops_aqm: u64,
    pub max_bytes: u64,
    /// ECN-capable packets the AQM marked CE instead of dropping (RFC 8033 Sec. 5.1, RFC 8289
    /// Sec. 5); left out while 0, so runs without ECN read as before.
    #[serde(skip_serializing_if = "is_zero")]
    pub marks_aqm: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    /// The least sample from the start of the run, whatever `sim.measure_from_s` says: the path's
    /// base round trip as the flow saw it.
    pub min_all: Option<u64>,
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
            self.min_all = Some(self.min_all.map_or(now - at, |m| m.min(now - at)));
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
    /// Each upstream channel's MAC counters, when there are several (`mac` sums them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<crate::access::MacMetrics>,
    /// The ATM switches' discards, summed over their output queues; null without switches.
    pub switches: Option<crate::net::SwitchStats>,
    /// The service queues' counters (DOCSIS service flows); left out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueMetrics>,
    /// Every place where packets waited (one row per place that any packet reached), in the
    /// network's order: links, service queues, modems' queues, bonded modems' FIFOs.
    pub places: Vec<PlaceMetrics>,
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

/// One column of rows' results (issue 26, defect 3: a million flows' results travel to Python as
/// columns, not as a JSON object per flow). Each row's value is what its JSON would say: a key
/// `absent` (a `skip_serializing_if` field), `null`, or a value, held in `data` as `kind` says:
/// `u` u64, `i` i64, `f` f64 (8 bytes each, little-endian), `b` bool (one byte), `s` a string
/// (u32 index into `strings`, little-endian); an absent or null row holds zeros.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Column {
    pub name: String,
    pub kind: char,
    pub data: Vec<u8>,
    /// Per row: `ABSENT`, `NULL` or `VALUE`.
    pub state: Vec<u8>,
    pub strings: Vec<String>,
}

impl Column {
    pub const ABSENT: u8 = 0;
    pub const NULL: u8 = 1;
    pub const VALUE: u8 = 2;

    fn width(kind: char) -> usize {
        match kind {
            'b' => 1,
            's' => 4,
            _ => 8,
        }
    }

    /// A value's kind and bytes, or None for null (an array or object has no column form).
    fn cell(&mut self, v: &serde_json::Value) -> Option<(char, [u8; 8])> {
        use serde_json::Value;
        match v {
            Value::Null => None,
            Value::Bool(b) => Some(('b', [*b as u8, 0, 0, 0, 0, 0, 0, 0])),
            Value::Number(n) => Some(if let Some(u) = n.as_u64() {
                ('u', u.to_le_bytes())
            } else if let Some(i) = n.as_i64() {
                ('i', i.to_le_bytes())
            } else {
                ('f', n.as_f64().unwrap_or(f64::NAN).to_le_bytes())
            }),
            Value::String(s) => {
                let at = self.strings.iter().position(|x| x == s).unwrap_or_else(|| {
                    self.strings.push(s.clone());
                    self.strings.len() - 1
                });
                let mut b = [0; 8];
                b[..4].copy_from_slice(&(at as u32).to_le_bytes());
                Some(('s', b))
            }
            Value::Array(_) | Value::Object(_) => unreachable!("per-row results are scalars"),
        }
    }

    /// Append one row's value (None: the key was absent).
    fn push(&mut self, v: Option<&serde_json::Value>) {
        let cell = v.and_then(|v| self.cell(v));
        if let Some((kind, _)) = cell {
            if self.kind == '?' {
                // The first value: the rows before it (absent or null) hold zeros of its width.
                self.kind = kind;
                self.data = vec![0; self.state.len() * Column::width(kind)];
            }
            // Each field of a result row has one Rust type, so one JSON kind.
            assert_eq!(kind, self.kind, "result column {} changes kind", self.name);
        }
        if self.kind != '?' {
            let bytes = cell.map_or([0; 8], |(_, b)| b);
            self.data.extend_from_slice(&bytes[..Column::width(self.kind)]);
        }
        self.state.push(match (v, cell) {
            (None, _) => Column::ABSENT,
            (Some(_), None) => Column::NULL,
            (Some(_), Some(_)) => Column::VALUE,
        });
    }
}

/// `rows` as columns: each row as its JSON object (the keys and values the JSON output has), the
/// columns in the order the keys first appear.
pub fn columns<T: Serialize>(rows: &[T]) -> Vec<Column> {
    let mut cols: Vec<Column> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let serde_json::Value::Object(map) = serde_json::to_value(row).expect("a result row serialises") else {
            unreachable!("a result row is a struct")
        };
        for name in map.keys() {
            if !cols.iter().any(|c| &c.name == name) {
                let mut c = Column { name: name.clone(), kind: '?', ..Default::default() };
                for _ in 0..r {
                    c.push(None);
                }
                cols.push(c);
            }
        }
        for c in cols.iter_mut() {
            c.push(map.get(&c.name));
        }
    }
    cols
}

/// The trace's CSV columns, in the order of `hfcsim.simulate.TRACE_COLUMNS`.
pub const TRACE_CSV_COLUMNS: [&str; 13] = [
    "time_s", "flow", "event", "seq", "ack", "cwnd", "ssthresh", "flight", "queue", "time_ns", "station", "minislot",
    "link",
];

/// Append `x` as Python's `repr(float)` writes it: the shortest digits that read back as `x`
/// (Rust's `{:e}` finds the same ones), in positional notation when the decimal exponent is in
/// [-4, 16), else as `d.ddde+XX` with at least two exponent digits (CPython's
/// `PyOS_double_to_string` with format code 'r'); integral values keep a ".0".
pub fn py_float_repr(x: f64, out: &mut String) {
    use std::fmt::Write as _;
    if !x.is_finite() {
        out.push_str(if x.is_nan() {
            "nan"
        } else if x > 0.0 {
            "inf"
        } else {
            "-inf"
        });
        return;
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e}'s exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if x.is_sign_negative() {
        out.push('-');
    }
    if x == 0.0 {
        out.push_str("0.0");
        return;
    }
    let n = digits.len() as i32;
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else if point >= n {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (point - n) as usize));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
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
    pub fn push_mac(&mut self, e: &crate::access::MacEvent) {
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
    /// order of recording. Columns are reordered one at a time, so a trace of n rows needs
    /// about n x 16 bytes beside itself, not a second copy.
    pub fn sorted(mut self) -> Trace {
        let mut idx: Vec<usize> = (0..self.len()).collect();
        idx.sort_by_key(|&i| self.time_ns[i]);
        fn permute<T: Copy>(col: &mut Vec<T>, idx: &[usize]) {
            let sorted: Vec<T> = idx.iter().map(|&i| col[i]).collect();
            *col = sorted;
        }
        permute(&mut self.time_s, &idx);
        permute(&mut self.time_ns, &idx);
        permute(&mut self.flow, &idx);
        permute(&mut self.event, &idx);
        permute(&mut self.seq, &idx);
        permute(&mut self.ack, &idx);
        permute(&mut self.cwnd, &idx);
        permute(&mut self.ssthresh, &idx);
        permute(&mut self.flight, &idx);
        permute(&mut self.queue, &idx);
        permute(&mut self.station, &idx);
        permute(&mut self.minislot, &idx);
        permute(&mut self.link, &idx);
        self
    }

    /// Write the trace as CSV, byte for byte what Python's `csv.writer` makes of the columns in
    /// `TRACE_CSV_COLUMNS` order (`hfcsim.simulate.TRACE_COLUMNS`, `Result.write_trace_csv`):
    /// a header row, "\n" line ends, floats as Python's `repr`. Returns the rows written (without
    /// the header). `interrupted` is polled every 2^16 rows; when it says stop, the writing ends
    /// with `io::ErrorKind::Interrupted`.
    pub fn write_csv<W: std::io::Write>(
        &self,
        mut w: W,
        mut interrupted: impl FnMut() -> bool,
    ) -> std::io::Result<u64> {
        use std::fmt::Write as _;
        let mut line = String::with_capacity(256);
        line.push_str(&TRACE_CSV_COLUMNS.join(","));
        line.push('\n');
        w.write_all(line.as_bytes())?;
        for i in 0..self.len() {
            if i % (1 << 16) == 0 && i > 0 && interrupted() {
                return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"));
            }
            line.clear();
            py_float_repr(self.time_s[i], &mut line);
            let event = self.event[i];
            // csv.writer quotes only fields holding ',', '"', '\r' or '\n': event names hold none.
            debug_assert!(!event.contains([',', '"', '\r', '\n']));
            let _ = writeln!(
                line,
                ",{},{},{},{},{},{},{},{},{},{},{},{}",
                self.flow[i],
                event,
                self.seq[i],
                self.ack[i],
                self.cwnd[i],
                self.ssthresh[i],
                self.flight[i],
                self.queue[i],
                self.time_ns[i],
                self.station[i],
                self.minislot[i],
                self.link[i]
            );
            w.write_all(line.as_bytes())?;
        }
        w.flush()?;
        Ok(self.len() as u64)
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
    #[test]
    fn columns_hold_each_rows_json_value_null_or_absence() {
        #[derive(Serialize)]
        struct Row {
            n: u64,
            x: Option<f64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            e: Option<u64>,
            done: bool,
            why: EndReason,
        }
        let rows = [
            Row { n: 3, x: None, e: None, done: false, why: EndReason::GaveUp },
            Row { n: 5, x: Some(0.5), e: Some(7), done: true, why: EndReason::Finished },
        ];
        let cols = columns(&rows);
        let find = |name: &str| cols.iter().find(|c| c.name == name).unwrap();
        // Keys in the JSON object's order (serde_json's map: sorted); "e" first appears in row 1.
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["done", "n", "why", "x", "e"]);
        let n = find("n");
        assert_eq!((n.kind, n.state.as_slice()), ('u', [Column::VALUE, Column::VALUE].as_slice()));
        assert_eq!(n.data, [3u64.to_le_bytes(), 5u64.to_le_bytes()].concat());
        // Null in row 0: zeros there, 0.5 in row 1.
        let x = find("x");
        assert_eq!((x.kind, x.state.as_slice()), ('f', [Column::NULL, Column::VALUE].as_slice()));
        assert_eq!(x.data, [0f64.to_le_bytes(), 0.5f64.to_le_bytes()].concat());
        // Absent from row 0 (skip_serializing_if), 7 in row 1.
        let e = find("e");
        assert_eq!((e.kind, e.state.as_slice()), ('u', [Column::ABSENT, Column::VALUE].as_slice()));
        assert_eq!(e.data, [0u64.to_le_bytes(), 7u64.to_le_bytes()].concat());
        let done = find("done");
        assert_eq!((done.kind, done.data.as_slice()), ('b', [0u8, 1].as_slice()));
        // Strings as indices into the column's own list, in order of first use.
        let why = find("why");
        assert_eq!(why.kind, 's');
        assert_eq!(why.strings, ["gave_up", "finished"]);
        assert_eq!(why.data, [0u32.to_le_bytes(), 1u32.to_le_bytes()].concat());
    }

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
    fn floats_are_written_as_pythons_repr() {
        // Expected strings are CPython's repr() of the same values.
        let cases: [(f64, &str); 16] = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-4, "0.0001"),
            (1.5e-5, "1.5e-05"),
            (5e-9, "5e-09"),
            (123.456, "123.456"),
            (0.000123, "0.000123"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.2345e22, "1.2345e+22"),
            (1e-100, "1e-100"),
            (0.30000000000000004, "0.30000000000000004"),
            (-2.5, "-2.5"),
            (1.000000001, "1.000000001"),
        ];
        for (x, want) in cases {
            let mut s = String::new();
            py_float_repr(x, &mut s);
            assert_eq!(s, want, "{x:e}");
        }
    }

    #[test]
    fn sorted_keeps_ties_in_recording_order_and_csv_has_a_header() {
        let cc = CcState::default();
        let mut t = Trace::default();
        t.push(SimTime(2 * MS), 0, "send", 0, -1, &cc, -1);
        t.push(SimTime(MS), 1, "lost", 10, -1, &cc, -1);
        t.push(SimTime(2 * MS), 2, "ack", -1, 5, &cc, -1);
        let t = t.sorted();
        assert_eq!(t.flow, vec![1, 0, 2]);
        let mut csv = Vec::new();
        assert_eq!(t.write_csv(&mut csv, || false).unwrap(), 3);
        let text = String::from_utf8(csv).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap(), TRACE_CSV_COLUMNS.join(","));
        assert_eq!(lines.next().unwrap(), "0.001,1,lost,10,-1,0,0,0,-1,1000000,-1,-1,-1");
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
