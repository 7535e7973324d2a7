//! The resolved scenario the engine runs.
//!
//! Python (`hfcsim.scenario`) owns defaults and validation with friendly messages; this is the
//! typed document it hands over, deserialised with `deny_unknown_fields` as a second line of
//! defence (shadow's config habit, STYLE.md item 9). Units are in the field names.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub network: Network,
    /// The shared upstream channel's MAC (HFC only). Absent in older documents and in bottleneck
    /// scenarios: the FIFO upstream of Cohen & Ramanathan.
    #[serde(default)]
    pub upstream: Upstream,
    /// Groups of cable modems (HFC only), numbered in group order. Empty: one modem per number
    /// that the flows use, as before.
    #[serde(default)]
    pub modems: Vec<ModemGroup>,
    pub tcp: Tcp,
    pub receiver: Receiver,
    pub flows: Vec<Flow>,
    /// ICMP echo probes (Nguyen & Armitage Sec. III.A: ping once a second from the client).
    #[serde(default)]
    pub pings: Vec<Ping>,
    pub sim: Sim,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Network {
    /// Cohen & Ramanathan Sec. IV.A: server -> downstream channel -> cable modem -> PC and
    /// PC -> upstream channel -> server.
    Hfc {
        downstream_bps: f64,
        upstream_bps: f64,
        rtt_s: f64,
        downstream_loss: f64,
        upstream_loss: f64,
        cm_buffer_bytes: Option<u64>,
        cm_buffer_packets: Option<u64>,
        cm_lan_bps: f64,
        /// The discipline of the modem's buffer toward the PC (droptail, pie or codel). Added after
        /// scenarios were stored: absent = droptail (Python's `engine_optional`).
        #[serde(default)]
        cm_buffer_aqm: AqmKind,
        /// AQM parameters, as `Docsis`'s (absent: each RFC's default).
        #[serde(default = "default_pie_target_s")]
        pie_target_s: f64,
        #[serde(default = "default_codel_target_s")]
        codel_target_s: f64,
        #[serde(default = "default_codel_interval_s")]
        codel_interval_s: f64,
    },
    /// Lakshman & Madhow Sec. II: one FIFO bottleneck of `rate_pps` data packets per second
    /// with `buffer_packets` of buffer (excluding the packet in service), propagation delay
    /// `tau_s`, optional random loss after service; ACKs return immediately. `bottleneck_aqm` and
    /// the AQM parameters as `Hfc`'s (absent: drop-tail, the RFCs' defaults).
    Bottleneck {
        rate_pps: f64,
        buffer_packets: Option<u64>,
        tau_s: f64,
        loss: f64,
        #[serde(default)]
        bottleneck_aqm: AqmKind,
        #[serde(default = "default_pie_target_s")]
        pie_target_s: f64,
        #[serde(default = "default_codel_target_s")]
        codel_target_s: f64,
        #[serde(default = "default_codel_interval_s")]
        codel_interval_s: f64,
    },
    /// Elloumi et al. Fig. 2: TCP source -> SW1 -> (bottleneck) -> SW2 -> headend -> the shared
    /// downstream channel -> station, and back through the upstream MAC, SW2 and SW1; every link
    /// counts ATM cells (AAL5), the switches' output queues apply early packet discard.
    #[serde(rename = "atm_hfc")]
    AtmHfc {
        downstream_bps: f64,
        upstream_bps: f64,
        /// TCP source -> SW1 (Sec. 4: 155 Mb/s).
        source_bps: f64,
        /// SW1 <-> SW2 (Sec. 4: 6 Mb/s, 1.25 ms).
        bottleneck_bps: f64,
        bottleneck_delay_s: f64,
        /// (time_s, bps): from time_s on the SW1 -> SW2 rate is bps (Fig. 23).
        bottleneck_schedule: Vec<(f64, f64)>,
        /// SW2 <-> headend (not in the paper).
        headend_bps: f64,
        /// Early packet discard threshold of every switch output queue, cells; None = no EPD.
        epd_threshold_cells: Option<u64>,
        /// Hard limit of every switch output queue, cells; None = unbounded (footnote 6).
        switch_buffer_cells: Option<u64>,
        /// The TCP source's interface queue, IP packets (Sec. 4: 50).
        driver_buffer_packets: Option<u64>,
        /// Per-packet processing at each TCP host (Table 2: 100 us), a FIFO server.
        processing_s: f64,
        downstream_loss: f64,
        upstream_loss: f64,
    },
    /// Nguyen & Armitage Fig. 2: server -Ethernet- CMTS (per-modem downstream service flow: rate
    /// cap, buffer, AQM) -shared downstream channel- CM -Ethernet- client, and back through the
    /// modem's upstream service flow and the upstream MAC (or a FIFO channel).
    Docsis(Docsis),
}

/// Nguyen & Armitage Fig. 2: what each wire and service flow does. The DOCSIS constants (frame
/// headers, Reed-Solomon and MPEG-2 framing) are scenario keys whose defaults Python takes from
/// `hfcsim.docsis`, the one place the models read them too; a document from Python carries every
/// one of them. `Docsis::nguyen_default` repeats those defaults for Rust callers (tests, benches).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Docsis {
    /// The downstream channel's raw rate (symbol rate x bits per symbol).
    pub downstream_bps: f64,
    /// J.83 Annex B Reed-Solomon (n, k) and MPEG-2 transport framing: the channel carries DOCSIS
    /// frames at downstream_bps * k / n * (packet - header) / packet (`payload_bps`).
    pub rs_n: u32,
    pub rs_k: u32,
    pub mpeg_packet_bytes: f64,
    pub mpeg_header_bytes: f64,
    pub downstream_delay_s: f64,
    /// The upstream channel (the MAC's rate, or the FIFO channel's).
    pub upstream_bps: f64,
    pub upstream_delay_s: f64,
    /// The server's and each client's Ethernet.
    pub ethernet_bps: f64,
    pub ds_rate_bps: f64,
    pub ds_burst_bytes: u64,
    pub ds_peak_bps: Option<f64>,
    pub us_rate_bps: f64,
    pub us_burst_bytes: u64,
    pub us_peak_bps: Option<f64>,
    /// Per-modem downstream buffer at the CMTS, bytes, or seconds at ds_rate_bps; both None =
    /// unbounded (at most one is set).
    pub cmts_queue_bytes: Option<u64>,
    pub cmts_queue_s: Option<f64>,
    pub cmts_aqm: AqmKind,
    /// Each modem's upstream buffer, bytes, or seconds at us_rate_bps; both None = unbounded.
    pub cm_queue_bytes: Option<u64>,
    pub cm_queue_s: Option<f64>,
    pub cm_aqm: AqmKind,
    /// A dummynet-like pipe on the server's outgoing TCP packets; None = none.
    pub server_limit_bps: Option<f64>,
    pub server_queue_bytes: u64,
    pub downstream_loss: f64,
    pub upstream_loss: f64,
    /// An Ethernet frame: header + FCS bytes, minimum frame, preamble and gap (IEEE 802.3).
    pub ethernet_header_bytes: u32,
    pub ethernet_min_frame_bytes: u32,
    pub ethernet_gap_bytes: u32,
    /// The DOCSIS MAC header in front of each downstream frame.
    pub docsis_header_bytes: u32,
    /// AQM parameters (defaults from each RFC; Python declares them).
    pub pie_target_s: f64,
    pub docsis_pie_target_s: f64,
    pub codel_target_s: f64,
    pub codel_interval_s: f64,
}

/// A queue's discipline: a DOCSIS service flow's, the hfc modem's buffer, the bottleneck's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AqmKind {
    #[default]
    Droptail,
    /// RFC 8033.
    Pie,
    /// RFC 8034, for the cable modem's upstream.
    DocsisPie,
    /// RFC 8289.
    Codel,
}

/// PIE's target queue delay, s (RFC 8033 Sec. 5.1: 15 ms).
pub const PIE_TARGET_S: f64 = 0.015;
/// DOCSIS-PIE's target queue delay, s (RFC 8034 Sec. 4.2: 10 ms).
pub const DOCSIS_PIE_TARGET_S: f64 = 0.010;
/// CoDel's target sojourn time, s (RFC 8289 Sec. 4.4: 5 ms).
pub const CODEL_TARGET_S: f64 = 0.005;
/// CoDel's interval, s (RFC 8289 Sec. 4.5: 100 ms).
pub const CODEL_INTERVAL_S: f64 = 0.1;

fn default_pie_target_s() -> f64 {
    PIE_TARGET_S
}

fn default_codel_target_s() -> f64 {
    CODEL_TARGET_S
}

fn default_codel_interval_s() -> f64 {
    CODEL_INTERVAL_S
}

/// The shortest time between echoes of one ping (the schema's bound).
pub const MIN_PING_INTERVAL_S: f64 = 0.01;

/// Echo requests from the client behind `modem` to the server, `interval_s` apart from `start_s`
/// until `stop_s` or, without it, until `after_s` past the end of the last TCP flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ping {
    pub modem: u32,
    pub start_s: f64,
    pub interval_s: f64,
    /// The IP packet of each echo (ping's 56 data bytes + ICMP 8 + IP 20 = 84), bytes.
    pub ip_bytes: u32,
    pub stop_s: Option<f64>,
    pub after_s: f64,
}

/// Who decides when a modem may send on the shared upstream channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MacKind {
    /// One FIFO link that every modem's packets join at once (Cohen & Ramanathan Sec. IV.A).
    Fifo,
    /// IEEE 802.14 request/grant MAC as simulated by Elloumi et al. (Sec. 2, Table 1).
    #[serde(rename = "ieee802.14")]
    Ieee80214,
    /// DOCSIS request/grant MAC with MAPs (Nguyen & Armitage Sec. II).
    Docsis,
}

/// How many contention (request) slots a frame has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentionAlloc {
    /// Always `contention_slots` (Elloumi Sec. 5.2: 20 per cluster).
    Fixed,
    /// Whatever the grants leave over, at least `contention_slots`.
    Leftover,
}

/// The headend's grant scheduler (Elloumi Sec. 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrantScheduler {
    /// First come first served: each station's whole request before the next.
    Fcfs,
    /// Round robin: one data unit per station in turn.
    Rr,
}

/// Most upstream channels one network may have (chosen: a DOCSIS 3.1 service group bonds up to 8;
/// a whole CMTS has tens).
pub const MAX_CHANNELS: u32 = 64;

/// The upstream MAC's parameters. Python (`hfcsim.scenario`, keys `upstream.*`) declares each once
/// with its unit, default, range and source; the defaults here are the same.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upstream {
    pub mac: MacKind,
    /// Elloumi Table 1: 16-byte contention slots.
    pub minislot_bytes: u32,
    /// One allocation period: the 802.14 frame (Elloumi Table 1: 2.27 ms) or the DOCSIS MAP
    /// interval (Nguyen & Armitage Sec. II: 2 ms), rounded by the engine to whole minislots.
    pub frame_s: f64,
    pub contention: ContentionAlloc,
    /// Contention slots per frame (fixed) or their minimum (leftover); Elloumi Sec. 5.2: 20.
    pub contention_slots: u32,
    /// 802.14: minislots per data slot, one ATM cell MPDU (Elloumi Table 1: 64-byte data slots).
    pub data_slot_minislots: u32,
    pub scheduler: GrantScheduler,
    /// Largest request: data slots (802.14, Elloumi Table 1: 32) or minislots (DOCSIS, 8 bits).
    pub max_request: u32,
    /// Requests piggybacked in granted data (Elloumi Sec. 6.1; DOCSIS piggyback request).
    pub piggyback: bool,
    /// DOCSIS: queued packets concatenated into one burst of at most `max_burst_bytes`.
    pub concatenation: bool,
    /// DOCSIS: a grant smaller than the head packet carries a fragment of it.
    pub fragmentation: bool,
    /// DOCSIS dynamic MAPs: each MAP as long as its grants and the minimum contention slots, at
    /// least this and at most `frame_s` (access/upstream.rs). None: every MAP is `frame_s` long.
    #[serde(default)]
    pub min_frame_s: Option<f64>,
    /// DOCSIS maximum upstream burst (Nguyen & Armitage Sec. II: 1600 B).
    pub max_burst_bytes: u32,
    /// Headend processing time (Elloumi Table 1: 1 ms): a frame or MAP leaves the headend this
    /// long after it is decided (access/upstream.rs).
    pub headend_delay_s: f64,
    /// DOCSIS Data Backoff Start and End: backoff windows of 2^n contention slots.
    pub backoff_start: u32,
    pub backoff_end: u32,
    /// DOCSIS: a request is discarded after 16 attempts.
    pub max_retries: u32,
    /// Guard band and preamble per burst (Elloumi Table 1: 5 bytes).
    pub burst_overhead_bytes: u32,
    /// DOCSIS burst profile FEC: T bytes corrected per codeword (2T parity bytes), 0 = none; and
    /// k information bytes per codeword (DOCSIS RFI 1.1 upstream burst attributes).
    #[serde(default)]
    pub fec_t_bytes: u32,
    #[serde(default = "default_fec_codeword_bytes")]
    pub fec_codeword_bytes: u32,
    /// DOCSIS: bytes added to each IP packet (Ethernet 18 + DOCSIS MAC header 6).
    pub frame_overhead_bytes: u32,
    /// Propagation delay per km of cable (Elloumi Table 1: 5 us/km).
    pub delay_s_per_km: f64,
    /// Upstream channels, each its own MAC with these settings (DOCSIS 3.0 MULPI: a CMTS serves
    /// several); modem groups are assigned to them by `modems.*.channel`.
    #[serde(default = "one")]
    pub channels: u32,
}

fn one() -> u32 {
    1
}

/// k when FEC is on and the scenario does not say: 223 information bytes, the classic RS(255, 223)
/// codeword (chosen; DOCSIS leaves k to the burst profile).
fn default_fec_codeword_bytes() -> u32 {
    223
}

impl Default for Upstream {
    fn default() -> Upstream {
        Upstream {
            mac: MacKind::Fifo,
            minislot_bytes: 16,
            frame_s: 0.002,
            contention: ContentionAlloc::Leftover,
            contention_slots: 8,
            data_slot_minislots: 4,
            scheduler: GrantScheduler::Fcfs,
            max_request: 255,
            piggyback: false,
            concatenation: false,
            fragmentation: false,
            min_frame_s: None,
            max_burst_bytes: 1600,
            headend_delay_s: 0.001,
            backoff_start: 3,
            backoff_end: 10,
            max_retries: 16,
            burst_overhead_bytes: 5,
            fec_t_bytes: 0,
            fec_codeword_bytes: default_fec_codeword_bytes(),
            frame_overhead_bytes: 24,
            delay_s_per_km: 5e-6,
            channels: 1,
        }
    }
}

/// `count` cable modems (stations) alike, spread evenly over [`distance_km_min`,
/// `distance_km_max`] from the headend. Elloumi Sec. 4: one TCP station and N background stations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModemGroup {
    pub count: u32,
    pub distance_km_min: f64,
    pub distance_km_max: f64,
    /// Each station's upstream MAC queue; both `None` = unbounded (Elloumi Sec. 4 assumes it
    /// large enough for every ACK). At most one is set.
    pub queue_packets: Option<u64>,
    pub queue_bytes: Option<u64>,
    /// Upstream load L that the group's Poisson background sources offer together, as a fraction
    /// of the upstream rate (Elloumi Sec. 4: lambda = L UR 48 / (53 N) per station).
    pub background_load: f64,
    /// Background packet size (Elloumi Sec. 4: 48 bytes, one ATM cell).
    pub background_bytes: u32,
    /// Piggybacked requests for this group's stations; None = `upstream.piggyback` (Elloumi
    /// Sec. 6.1 piggybacks only the TCP station's ACKs).
    #[serde(default)]
    pub piggyback: Option<bool>,
    /// Elloumi Fig. 18's ACK-spacing algorithm at these stations' MAC, with its filter.
    #[serde(default)]
    pub ack_spacing: AckSpacing,
    /// The upstream channel these modems transmit on (`upstream.channels`).
    #[serde(default)]
    pub channel: u32,
}

/// The filter of Elloumi et al.'s ACK-spacing algorithm (Sec. 6.2, Fig. 18), or none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AckSpacing {
    #[default]
    Off,
    Min,
    Mean,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Tahoe,
    Reno,
    Newreno,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerKind {
    Bsd,
    Rfc6298,
    /// ns-2.35 `TcpAgent`'s timer: tick-counted RTT samples, an exact deadline (tcp/rto.rs).
    Ns2,
    /// Linux's RFC 6298: `tcp_rtt_estimator` / `__tcp_set_rto`, the minimum RTO a floor on the
    /// variance term (tcp/rto.rs `LinuxRto`).
    Linux,
}

/// `tcp.congestion_control`: the window-growth hook (tcp/cc.rs, tcp/cubic.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControlKind {
    #[default]
    Reno,
    Cubic,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tcp {
    pub variant: Variant,
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub initial_window: u32,
    pub dupack_threshold: u32,
    pub timer: TimerKind,
    pub tick_s: f64,
    pub min_rto_s: f64,
    /// The RTO before any RTT sample; None = the timer's own (rfc6298 1 s, ns2 3 s). The bsd timer
    /// derives its 6 s from TCPTV_SRTTDFLT and takes none.
    #[serde(default)]
    pub initial_rto_s: Option<f64>,
    pub send_buffer_bytes: u64,
    pub nagle: bool,
    /// Slow-start threshold at the start; None = Net/3's "infinite" (Elloumi Table 2: 8 KB).
    #[serde(default)]
    pub initial_ssthresh_bytes: Option<u64>,
    /// The stack profile Python resolved the rules below from (python/hfcsim/stacks.py): a label
    /// for results; the engine reads the rules, each its own key. None = `net3-rfc5681`.
    #[serde(default)]
    pub stack: Option<String>,
    // The rules a TCP stack profile switches. Their serde defaults are the `net3-rfc5681` stack,
    // hfcsim's behaviour before the profiles existed.
    /// 4.4BSD-Lite's header-prediction fast path for pure ACKs (tcp/sender.rs `on_ack`).
    #[serde(default)]
    pub header_prediction: bool,
    /// Leaving fast recovery deflates cwnd when t_dupacks >= the threshold (RFC 5681); false:
    /// only when t_dupacks > the threshold, as 4.4BSD-Lite tests it.
    #[serde(default = "yes")]
    pub deflate_at_threshold: bool,
    /// A second tcp_output right after the fast retransmit; 4.4BSD-Lite goes to `drop` instead.
    #[serde(default = "yes")]
    pub output_after_fast_retransmit: bool,
    /// No second fast retransmit until snd_una passes `recover` (ns-2's bugFix_, RFC 6582 3.2
    /// step 2); None = Tahoe and NewReno guard, Reno does not.
    #[serde(default)]
    pub recover_guard: Option<bool>,
    /// The BSD timer's minimum RTO in ticks (`t_rttmin`, TCPTV_MIN).
    #[serde(default = "two")]
    pub min_rto_ticks: u32,
    /// How a socket buffer becomes a window of whole segments (tcp/mod.rs `round_buffer`).
    #[serde(default)]
    pub buffer_rounding: BufferRounding,
    /// A repeated timeout of one segment keeps ssthresh (RFC 5681 3.1); false: BSD halves again.
    #[serde(default)]
    pub repeat_timeout_holds_ssthresh: bool,
    /// How fast retransmit cuts cwnd and inflates the window (tcp/sender.rs `on_dupack`).
    #[serde(default)]
    pub fast_recovery: FastRecovery,
    /// Slow start opens cwnd while cwnd <= ssthresh (Net/3 tcp_input); false: while cwnd <
    /// ssthresh (ns-2 `TcpAgent::opencwnd`).
    #[serde(default = "yes")]
    pub slow_start_at_ssthresh: bool,
    // Today's TCP (the `linux` stack). Their serde defaults are off: the 1990s stacks.
    /// The window-growth hook: Reno or CUBIC (RFC 9438).
    #[serde(default)]
    pub congestion_control: CongestionControlKind,
    /// RFC 3465 byte counting as Linux does it (slow start by the bytes acknowledged, congestion
    /// avoidance one MSS per window acknowledged); false: Net/3's per-ACK growth.
    #[serde(default)]
    pub byte_counting: bool,
    /// SACK (RFC 2018) at the receiver, and RFC 6675 loss recovery at the sender.
    #[serde(default)]
    pub sack: bool,
    /// RACK-TLP's time-based loss detection (RFC 8985 Sec. 6); needs `sack`.
    #[serde(default)]
    pub rack: bool,
    /// The tail loss probe (RFC 8985 Sec. 7); needs `sack`.
    #[serde(default)]
    pub tlp: bool,
    /// Proportional Rate Reduction during recovery (RFC 6937).
    #[serde(default)]
    pub prr: bool,
    /// New data on the first duplicate ACKs (RFC 3042), as Linux's pipe allows it.
    #[serde(default)]
    pub limited_transmit: bool,
    /// The timestamps option (RFC 7323): 12 bytes on every segment, taken from the payload.
    #[serde(default)]
    pub timestamps: bool,
    /// Window scaling (RFC 7323); false: advertised windows end at 65,535 bytes.
    #[serde(default = "yes")]
    pub window_scaling: bool,
}

impl Tcp {
    /// Whether one of today's rules is on: the sender then runs tcp/sender/today.rs
    /// (`SenderConfig::today` asks the same of the sender's copy).
    pub fn today(&self) -> bool {
        self.sack
            || self.rack
            || self.tlp
            || self.prr
            || self.limited_transmit
            || self.byte_counting
            || self.congestion_control != CongestionControlKind::Reno
    }
}

/// `tcp.fast_recovery`: Net/3 sets cwnd = ssthresh + dupACKs and inflates cwnd itself; ns-2's
/// `RenoTcpAgent` halves cwnd exactly and keeps the inflation apart (`dupwnd_`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FastRecovery {
    #[default]
    Bsd,
    Ns2,
}

pub use crate::tcp::BufferRounding;

fn yes() -> bool {
    true
}

fn two() -> u32 {
    2
}

/// Which BSD's delayed-ACK code the receiver runs (tcp/receiver.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AckRule {
    #[default]
    Net3,
    Freebsd,
    /// ns-2.35 `DelAckSink`.
    Ns2,
    /// Linux: quick-ACK mode at the start, then every second segment or an adaptive delay of
    /// at least `delack_tick_s` (TCP_ATO_MIN).
    Linux,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receiver {
    pub delayed_ack: bool,
    #[serde(default)]
    pub ack_rule: AckRule,
    pub delack_tick_s: f64,
    pub receive_buffer_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Server to PC.
    Down,
    /// PC to server.
    Up,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Opener {
    /// FTP-style: the server opens the data connection (Cohen Sec. VI.A).
    Server,
    /// HTTP-style: the PC opens the connection.
    Client,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub bytes: u64,
    pub direction: Direction,
    pub opener: Opener,
    pub start_s: f64,
    pub http_header_bytes: Option<u32>,
    pub modem: u32,
    pub handshake: bool,
    /// Extra one-way propagation delay on the flow's forward path, before the shared links
    /// (Lakshman & Madhow Sec. II: connection i has its own tau_i).
    pub extra_delay_s: f64,
    /// Random sender processing time per packet, uniform in [0, send_jitter_s) (ns `overhead_`).
    pub send_jitter_s: f64,
    /// Reordering on the flow's forward path: extra delay per packet uniform in [0, this), not
    /// FIFO (net/link.rs `Link::reorder`).
    #[serde(default)]
    pub reorder_jitter_s: f64,
    pub drop_packets: Vec<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sim {
    pub time_limit_s: f64,
    /// Statistics that need a warm-up (`measured_bytes`, `rtt_*`) count from this time on
    /// (Elloumi Table 1: the first 1 s is not measured).
    #[serde(default)]
    pub measure_from_s: f64,
}

/// A link or token-bucket rate, bit/s: the engine's rates are whole bits per second (`round`), and a
/// rate that rounded to 0 would be taken for an infinitely fast link (`time::tx_time`), so a rate
/// must be at least 1 b/s.
/// A queue of the hfc or bottleneck network with `network.<key>` as its discipline, and the AQM
/// parameters (pie_target_s, codel_target_s, codel_interval_s): as `Docsis::check` has them.
fn check_aqm(key: &str, kind: AqmKind, params: [f64; 3]) -> Result<(), String> {
    for (name, v) in ["pie_target_s", "codel_target_s", "codel_interval_s"].into_iter().zip(params) {
        if !(v.is_finite() && v > 0.0) {
            return Err(format!("network.{name} = {v}: must be > 0"));
        }
    }
    if kind == AqmKind::DocsisPie {
        // RFC 8034 (Abstract): DOCSIS-PIE is the AQM of a cable modem's upstream; this queue is not.
        return Err(format!("network.{key} = \"docsis_pie\": DOCSIS-PIE is the modem's upstream AQM (RFC 8034)"));
    }
    Ok(())
}

fn check_rate(name: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 1.0 {
        Ok(())
    } else {
        Err(format!("{name} = {v}: must be >= 1 (bit/s)"))
    }
}

impl Scenario {
    /// Nguyen & Armitage's testbed as Python's `preset = "nguyen04"` has it (Sec. III): the DOCSIS
    /// network, a DOCSIS 1.1 modem that piggybacks and concatenates, FreeBSD 4.x hosts (NewReno,
    /// a 1 s minimum RTO, delayed ACK by FreeBSD's rule with its 100 ms callout, 32 KB send and
    /// 64 KB receive buffers); one 3 MB download, as the Cohen default.
    pub fn nguyen_default() -> Scenario {
        let mut sc = Scenario::cohen_default();
        sc.network = Network::Docsis(Docsis::nguyen_default());
        sc.upstream.mac = MacKind::Docsis;
        sc.upstream.piggyback = true;
        sc.upstream.concatenation = true;
        sc.tcp.variant = Variant::Newreno;
        sc.tcp.timer = TimerKind::Rfc6298;
        sc.tcp.min_rto_s = 1.0;
        sc.tcp.send_buffer_bytes = 32_768;
        sc.receiver.ack_rule = AckRule::Freebsd;
        sc.receiver.delack_tick_s = 0.1;
        sc.receiver.receive_buffer_bytes = 65_536;
        sc
    }

    /// The Cohen & Ramanathan defaults (Sec. IV.A): 25/3 Mb/s, 20 ms RTT, 1460-byte MSS,
    /// 40-byte headers, Reno, BSD 500 ms timer, delayed ACK, 8 KB buffers, one 3 MB download.
    pub fn cohen_default() -> Scenario {
        Scenario {
            network: Network::Hfc {
                downstream_bps: 25e6,
                upstream_bps: 3e6,
                rtt_s: 0.020,
                downstream_loss: 0.0,
                upstream_loss: 0.0,
                cm_buffer_bytes: None,
                cm_buffer_packets: None,
                cm_lan_bps: 10e6,
                cm_buffer_aqm: AqmKind::Droptail,
                pie_target_s: PIE_TARGET_S,
                codel_target_s: CODEL_TARGET_S,
                codel_interval_s: CODEL_INTERVAL_S,
            },
            upstream: Upstream::default(),
            modems: vec![],
            tcp: Tcp {
                variant: Variant::Reno,
                mss_bytes: 1460,
                header_bytes: 40,
                initial_window: 1,
                dupack_threshold: 3,
                timer: TimerKind::Bsd,
                tick_s: 0.5,
                min_rto_s: 1.0,
                initial_rto_s: None,
                send_buffer_bytes: 8192,
                nagle: false,
                initial_ssthresh_bytes: None,
                stack: None,
                header_prediction: false,
                deflate_at_threshold: true,
                output_after_fast_retransmit: true,
                recover_guard: None,
                min_rto_ticks: 2,
                buffer_rounding: BufferRounding::Up,
                repeat_timeout_holds_ssthresh: false,
                fast_recovery: FastRecovery::Bsd,
                slow_start_at_ssthresh: true,
                congestion_control: CongestionControlKind::Reno,
                byte_counting: false,
                sack: false,
                rack: false,
                tlp: false,
                prr: false,
                limited_transmit: false,
                timestamps: false,
                window_scaling: true,
            },
            receiver: Receiver {
                delayed_ack: true,
                ack_rule: AckRule::Net3,
                delack_tick_s: 0.2,
                receive_buffer_bytes: 8192,
            },
            flows: vec![Flow::download(3_000_000)],
            pings: vec![],
            sim: Sim { time_limit_s: 3600.0, measure_from_s: 0.0 },
        }
    }

    /// Light structural checks the type system cannot express. Python validates everything
    /// with better messages first; this guards direct Rust users and the property tests.
    pub fn check(&self) -> Result<(), String> {
        // A positive duration, s: at least the clock's 1 ns, or it rounds to 0 (a tick of 0 ns).
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v >= 1e-9 {
                Ok(())
            } else {
                Err(format!("{name} = {v}: must be >= 1e-9 (1 ns)"))
            }
        };
        let prob = |name: &str, v: f64| {
            if (0.0..1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} = {v}: must be in [0, 1)"))
            }
        };
        match &self.network {
            Network::Hfc {
                downstream_bps,
                upstream_bps,
                rtt_s,
                downstream_loss,
                upstream_loss,
                cm_lan_bps,
                cm_buffer_bytes,
                cm_buffer_packets,
                cm_buffer_aqm,
                pie_target_s,
                codel_target_s,
                codel_interval_s,
            } => {
                check_rate("network.downstream_bps", *downstream_bps)?;
                check_rate("network.upstream_bps", *upstream_bps)?;
                check_rate("network.cm_lan_bps", *cm_lan_bps)?;
                if !(rtt_s.is_finite() && *rtt_s >= 0.0) {
                    return Err(format!("network.rtt_s = {rtt_s}: must be >= 0"));
                }
                prob("network.downstream_loss", *downstream_loss)?;
                prob("network.upstream_loss", *upstream_loss)?;
                if cm_buffer_bytes.is_some() && cm_buffer_packets.is_some() {
                    return Err("network.cm_buffer_bytes and network.cm_buffer_packets: set at most one".into());
                }
                check_aqm("cm_buffer_aqm", *cm_buffer_aqm, [*pie_target_s, *codel_target_s, *codel_interval_s])?;
            }
            Network::Docsis(_) => {} // Docsis::check, below
            Network::Bottleneck {
                rate_pps,
                tau_s,
                loss,
                bottleneck_aqm,
                pie_target_s,
                codel_target_s,
                codel_interval_s,
                ..
            } => {
                // The link's rate is rate_pps data packets of mss + header bytes (topology.rs): at least 1 b/s.
                let packet_bits = (u64::from(self.tcp.mss_bytes) + u64::from(self.tcp.header_bytes)) as f64 * 8.0;
                if !(rate_pps.is_finite() && *rate_pps * packet_bits >= 1.0) {
                    return Err(format!(
                        "network.rate_pps = {rate_pps}: must be at least 1 bit/s ({packet_bits}-bit packets)"
                    ));
                }
                if !(tau_s.is_finite() && *tau_s >= 0.0) {
                    return Err(format!("network.tau_s = {tau_s}: must be >= 0"));
                }
                prob("network.loss", *loss)?;
                check_aqm("bottleneck_aqm", *bottleneck_aqm, [*pie_target_s, *codel_target_s, *codel_interval_s])?;
                if !self.modems.is_empty() || self.upstream.mac != MacKind::Fifo {
                    return Err("modems and upstream.mac: only with network.kind = hfc or atm_hfc".into());
                }
            }
            Network::AtmHfc {
                downstream_bps,
                upstream_bps,
                source_bps,
                bottleneck_bps,
                bottleneck_delay_s,
                bottleneck_schedule,
                headend_bps,
                epd_threshold_cells,
                switch_buffer_cells,
                driver_buffer_packets,
                processing_s,
                downstream_loss,
                upstream_loss,
            } => {
                check_rate("network.downstream_bps", *downstream_bps)?;
                check_rate("network.upstream_bps", *upstream_bps)?;
                check_rate("network.source_bps", *source_bps)?;
                check_rate("network.bottleneck_bps", *bottleneck_bps)?;
                check_rate("network.headend_bps", *headend_bps)?;
                for (name, v) in
                    [("network.bottleneck_delay_s", *bottleneck_delay_s), ("network.processing_s", *processing_s)]
                {
                    if !(v.is_finite() && v >= 0.0) {
                        return Err(format!("{name} = {v}: must be >= 0"));
                    }
                }
                let mut last = 0.0;
                for (i, &(t, r)) in bottleneck_schedule.iter().enumerate() {
                    if !(t.is_finite() && t > last) {
                        return Err(format!(
                            "network.bottleneck_schedule.{i} = [{t}, {r}]: times must increase from > 0"
                        ));
                    }
                    check_rate(&format!("network.bottleneck_schedule.{i} rate"), r)?;
                    last = t;
                }
                prob("network.downstream_loss", *downstream_loss)?;
                prob("network.upstream_loss", *upstream_loss)?;
                if *driver_buffer_packets == Some(0) || *switch_buffer_cells == Some(0) {
                    return Err("network.driver_buffer_packets / switch_buffer_cells = 0: must be >= 1".into());
                }
                if let (Some(t), Some(b)) = (epd_threshold_cells, switch_buffer_cells) {
                    if t >= b {
                        return Err(format!(
                            "network.epd_threshold_cells = {t}: must be < network.switch_buffer_cells ({b})"
                        ));
                    }
                }
            }
        }
        if let Network::Docsis(d) = &self.network {
            d.check()?;
        }
        for (i, p) in self.pings.iter().enumerate() {
            if !(p.start_s.is_finite() && p.start_s >= 0.0) {
                return Err(format!("pings.{i}.start_s = {}: must be >= 0", p.start_s));
            }
            // Each echo is kept as a row: 10 ms apart keeps an hour's run to 360 000 of them.
            if !(p.interval_s.is_finite() && p.interval_s >= MIN_PING_INTERVAL_S) {
                return Err(format!("pings.{i}.interval_s = {}: must be >= {MIN_PING_INTERVAL_S}", p.interval_s));
            }
            if !(p.after_s.is_finite() && p.after_s >= 0.0) {
                return Err(format!("pings.{i}.after_s = {}: must be >= 0", p.after_s));
            }
            if p.stop_s.is_some_and(|s| !(s.is_finite() && s >= p.start_s)) {
                return Err(format!("pings.{i}.stop_s: must be >= pings.{i}.start_s"));
            }
            if p.ip_bytes == 0 {
                return Err(format!("pings.{i}.ip_bytes = 0: must be >= 1"));
            }
            match self.network {
                Network::Docsis(_) => {}
                Network::Hfc { .. } if self.flows.iter().any(|f| f.modem == p.modem) => {}
                Network::Hfc { .. } => {
                    return Err(format!(
                        "pings.{i}.modem = {}: with network.kind = hfc a ping needs a flow on its modem",
                        p.modem
                    ));
                }
                _ => return Err(format!("pings.{i}: only with network.kind = hfc or docsis")),
            }
        }
        if !(self.sim.measure_from_s.is_finite()
            && self.sim.measure_from_s >= 0.0
            && self.sim.measure_from_s < self.sim.time_limit_s)
        {
            return Err(format!("sim.measure_from_s = {}: must be in [0, sim.time_limit_s)", self.sim.measure_from_s));
        }
        if self.tcp.initial_ssthresh_bytes == Some(0) {
            return Err("tcp.initial_ssthresh_bytes = 0: must be >= 1".into());
        }
        self.check_upstream()?;
        if self.tcp.mss_bytes == 0 {
            return Err("tcp.mss_bytes = 0: must be >= 1".into());
        }
        // RFC 791: an IP datagram is at most 65,535 bytes, header included.
        if u64::from(self.tcp.mss_bytes) + u64::from(self.tcp.header_bytes) > 65535 {
            return Err(format!(
                "tcp.header_bytes = {}: with tcp.mss_bytes = {}, more than an IP datagram's 65535 bytes",
                self.tcp.header_bytes, self.tcp.mss_bytes
            ));
        }
        if self.tcp.initial_window == 0 {
            return Err("tcp.initial_window = 0: must be >= 1".into());
        }
        if self.tcp.dupack_threshold == 0 {
            return Err("tcp.dupack_threshold = 0: must be >= 1".into());
        }
        pos("tcp.tick_s", self.tcp.tick_s)?;
        pos("tcp.min_rto_s", self.tcp.min_rto_s)?;
        if let Some(rto) = self.tcp.initial_rto_s {
            pos("tcp.initial_rto_s", rto)?;
            if self.tcp.timer == TimerKind::Bsd {
                return Err(format!(
                    "tcp.initial_rto_s = {rto}: not with tcp.timer = bsd (its 6 s is 2 x TCPTV_SRTTDFLT)"
                ));
            }
        }
        if self.tcp.timestamps && self.tcp.mss_bytes <= crate::tcp::TIMESTAMP_OPTION_BYTES {
            return Err(format!(
                "tcp.mss_bytes = {}: with tcp.timestamps it must exceed the option's 12 bytes",
                self.tcp.mss_bytes
            ));
        }
        if (self.tcp.rack || self.tcp.tlp) && !self.tcp.sack {
            return Err("tcp.rack and tcp.tlp: only with tcp.sack (RFC 8985 needs SACK)".into());
        }
        if self.tcp.today() && self.tcp.variant == Variant::Tahoe {
            return Err("tcp.variant = tahoe: not with today's rules (sack, rack, tlp, prr, limited_transmit, \
                        byte_counting, cubic), whose recovery is RFC 6675's"
                .into());
        }
        if self.tcp.sack && (self.tcp.header_prediction || self.tcp.fast_recovery == FastRecovery::Ns2) {
            return Err(
                "tcp.sack: not with tcp.header_prediction or tcp.fast_recovery = ns2 (Net/3 and ns-2 rules)".into()
            );
        }
        if self.tcp.fast_recovery == FastRecovery::Ns2 && self.tcp.variant != Variant::Reno {
            return Err("tcp.fast_recovery = ns2: only with tcp.variant = reno (ns-2's RenoTcpAgent)".into());
        }
        pos("receiver.delack_tick_s", self.receiver.delack_tick_s)?;
        if self.tcp.send_buffer_bytes == 0 {
            return Err("tcp.send_buffer_bytes = 0: must be >= 1".into());
        }
        if self.receiver.receive_buffer_bytes == 0 {
            return Err("receiver.receive_buffer_bytes = 0: must be >= 1".into());
        }
        pos("sim.time_limit_s", self.sim.time_limit_s)?;
        if self.flows.is_empty() {
            return Err("flows = []: at least one flow is needed".into());
        }
        for (i, f) in self.flows.iter().enumerate() {
            if f.bytes == 0 {
                return Err(format!("flows.{i}.bytes = 0: must be >= 1"));
            }
            if !(f.start_s.is_finite() && f.start_s >= 0.0) {
                return Err(format!("flows.{i}.start_s = {}: must be >= 0", f.start_s));
            }
            if !(f.extra_delay_s.is_finite() && f.extra_delay_s >= 0.0) {
                return Err(format!("flows.{i}.extra_delay_s = {}: must be >= 0", f.extra_delay_s));
            }
            if !(f.reorder_jitter_s.is_finite() && f.reorder_jitter_s >= 0.0) {
                return Err(format!("flows.{i}.reorder_jitter_s = {}: must be >= 0", f.reorder_jitter_s));
            }
            if !(f.send_jitter_s.is_finite() && f.send_jitter_s >= 0.0) {
                return Err(format!("flows.{i}.send_jitter_s = {}: must be >= 0", f.send_jitter_s));
            }
            if f.http_header_bytes == Some(0) {
                return Err(format!("flows.{i}.http_header_bytes = 0: must be >= 1"));
            }
        }
        // With modem groups, the modems are exactly theirs.
        if !self.modems.is_empty() {
            let total: u64 = self.modems.iter().map(|g| u64::from(g.count)).sum();
            for (i, f) in self.flows.iter().enumerate() {
                if u64::from(f.modem) >= total {
                    return Err(format!("flows.{i}.modem = {}: must be < {total}, the modems in the groups", f.modem));
                }
            }
        }
        Ok(())
    }

    /// Structural checks of `upstream` and `modems`.
    fn check_upstream(&self) -> Result<(), String> {
        let u = &self.upstream;
        // Byte counts of one burst or frame: 16-bit, as DOCSIS's length fields, so the sums a burst
        // is made of (access/channel.rs) cannot overflow.
        for (name, v) in [
            ("upstream.minislot_bytes", u.minislot_bytes),
            ("upstream.max_burst_bytes", u.max_burst_bytes),
            ("upstream.burst_overhead_bytes", u.burst_overhead_bytes),
            ("upstream.frame_overhead_bytes", u.frame_overhead_bytes),
        ] {
            if v > 65535 {
                return Err(format!("{name} = {v}: must be <= 65535"));
            }
        }
        for (i, g) in self.modems.iter().enumerate() {
            if g.background_bytes > 65535 {
                return Err(format!("modems.{i}.background_bytes = {}: must be <= 65535", g.background_bytes));
            }
        }
        for (name, v) in [
            ("upstream.minislot_bytes", u.minislot_bytes),
            ("upstream.contention_slots", u.contention_slots),
            ("upstream.data_slot_minislots", u.data_slot_minislots),
            ("upstream.max_burst_bytes", u.max_burst_bytes),
            ("upstream.max_retries", u.max_retries),
        ] {
            if v == 0 {
                return Err(format!("{name} = 0: must be >= 1"));
            }
        }
        if !(1..=255).contains(&u.max_request) {
            return Err(format!("upstream.max_request = {}: must be in [1, 255]", u.max_request));
        }
        if !(u.frame_s.is_finite() && u.frame_s > 0.0 && u.frame_s <= 1.0) {
            return Err(format!("upstream.frame_s = {}: must be in (0, 1]", u.frame_s));
        }
        if u.fec_t_bytes > 16 {
            return Err(format!("upstream.fec_t_bytes = {}: must be in [0, 16]", u.fec_t_bytes));
        }
        if !(16..=253).contains(&u.fec_codeword_bytes) {
            return Err(format!("upstream.fec_codeword_bytes = {}: must be in [16, 253]", u.fec_codeword_bytes));
        }
        if let Some(m) = u.min_frame_s {
            if u.mac != MacKind::Docsis {
                return Err(format!("upstream.min_frame_s = {m}: dynamic MAPs need upstream.mac = docsis"));
            }
            if !(m.is_finite() && m > 0.0 && m <= u.frame_s) {
                return Err(format!("upstream.min_frame_s = {m}: must be in (0, upstream.frame_s = {}]", u.frame_s));
            }
        }
        if !(u.headend_delay_s.is_finite() && (0.0..=1.0).contains(&u.headend_delay_s)) {
            return Err(format!("upstream.headend_delay_s = {}: must be in [0, 1]", u.headend_delay_s));
        }
        if !(u.delay_s_per_km.is_finite() && u.delay_s_per_km >= 0.0) {
            return Err(format!("upstream.delay_s_per_km = {}: must be >= 0", u.delay_s_per_km));
        }
        // A frame must hold its contention slots and one data unit, and an 802.14
        // collision-resolution group takes 3 contention slots (Elloumi Sec. 2), or nothing moves.
        if u.mac != MacKind::Fifo {
            let upstream_bps = match &self.network {
                Network::Hfc { upstream_bps, .. } | Network::AtmHfc { upstream_bps, .. } => Some(*upstream_bps),
                Network::Docsis(d) => Some(d.upstream_bps),
                Network::Bottleneck { .. } => None,
            };
            if let Some(upstream_bps) = upstream_bps {
                let rate = upstream_bps.round() as u64;
                let slots = crate::access::channel::minislots_per_frame(u.frame_s, u.minislot_bytes, rate.max(1));
                let unit = if u.mac == MacKind::Ieee80214 { u.data_slot_minislots } else { 1 };
                if u.mac == MacKind::Ieee80214 && u.contention_slots < 3 {
                    return Err(format!(
                        "upstream.contention_slots = {}: must be >= 3 with ieee802.14",
                        u.contention_slots
                    ));
                }
                if u.contention_slots as u64 + unit as u64 > slots as u64 {
                    return Err(format!(
                        "upstream.contention_slots = {}: leaves no room for data in a {slots}-minislot frame",
                        u.contention_slots
                    ));
                }
            }
        }
        // DOCSIS: the backoff window grows from 2^start to 2^end.
        if u.backoff_end > 15 || u.backoff_start > u.backoff_end {
            return Err(format!(
                "upstream.backoff_start = {}, upstream.backoff_end = {}: need start <= end <= 15",
                u.backoff_start, u.backoff_end
            ));
        }
        if !(1..=MAX_CHANNELS).contains(&u.channels) {
            return Err(format!("upstream.channels = {}: must be in [1, {MAX_CHANNELS}]", u.channels));
        }
        if u.channels > 1 && u.mac == MacKind::Fifo {
            return Err(format!("upstream.channels = {}: several channels need a MAC (upstream.mac)", u.channels));
        }
        if u.channels > 1 && self.modems.is_empty() {
            return Err(format!(
                "upstream.channels = {}: assign modem groups to them ([[modems]] channel)",
                u.channels
            ));
        }
        if let Some((i, g)) = self.modems.iter().enumerate().find(|(_, g)| g.channel >= u.channels) {
            return Err(format!("modems.{i}.channel = {}: must be < upstream.channels = {}", g.channel, u.channels));
        }
        for c in 0..u.channels {
            if u.channels > 1 && !self.modems.iter().any(|g| g.channel == c) {
                return Err(format!("upstream.channels = {}: no modem group is on channel {c}", u.channels));
            }
        }
        for (i, g) in self.modems.iter().enumerate() {
            if g.count == 0 {
                return Err(format!("modems.{i}.count = 0: must be >= 1"));
            }
            if !(g.distance_km_min.is_finite() && g.distance_km_min >= 0.0 && g.distance_km_max.is_finite()) {
                return Err(format!("modems.{i}.distance_km_min = {}: must be >= 0", g.distance_km_min));
            }
            if g.distance_km_min > g.distance_km_max {
                return Err(format!(
                    "modems.{i}.distance_km_min = {}: must be <= modems.{i}.distance_km_max ({})",
                    g.distance_km_min, g.distance_km_max
                ));
            }
            if g.queue_packets.is_some() && g.queue_bytes.is_some() {
                return Err(format!("modems.{i}.queue_packets and modems.{i}.queue_bytes: set at most one"));
            }
            if g.queue_packets == Some(0) || g.queue_bytes == Some(0) {
                return Err(format!("modems.{i}.queue_packets / queue_bytes = 0: must be >= 1"));
            }
            if !(0.0..1.0).contains(&g.background_load) {
                return Err(format!("modems.{i}.background_load = {}: must be in [0, 1)", g.background_load));
            }
            if g.background_bytes == 0 {
                return Err(format!("modems.{i}.background_bytes = 0: must be >= 1"));
            }
            // Elloumi Sec. 6.2 defines the algorithm for the 802.14 MAC; its grants are placed in a
            // frame whose data slots sit at known places, after a fixed contention region.
            if g.ack_spacing != AckSpacing::Off
                && (u.mac != MacKind::Ieee80214 || u.contention != ContentionAlloc::Fixed)
            {
                return Err(format!(
                    "modems.{i}.ack_spacing: needs upstream.mac = ieee802.14 and upstream.contention = fixed"
                ));
            }
        }
        Ok(())
    }
}

impl Docsis {
    /// Nguyen & Armitage's testbed (Sec. III.A): DS cap 2 Mb/s, US cap 1 Mb/s, 100 Mb/s Ethernet,
    /// a 64-QAM downstream (ITU-T J.83B, 30.34 Mb/s raw, 28.23 Mb/s after RS and MPEG-2), a 10.24
    /// Mb/s upstream; the values Python's schema gives by default.
    pub fn nguyen_default() -> Docsis {
        Docsis {
            downstream_bps: 5.056941e6 * 6.0,
            rs_n: 128,
            rs_k: 122,
            mpeg_packet_bytes: 188.0,
            mpeg_header_bytes: 4.5,
            downstream_delay_s: 0.0,
            upstream_bps: 10.24e6,
            upstream_delay_s: 0.0,
            ethernet_bps: 100e6,
            ds_rate_bps: 2e6,
            ds_burst_bytes: 1522,
            ds_peak_bps: None,
            us_rate_bps: 1e6,
            us_burst_bytes: 1522,
            us_peak_bps: None,
            cmts_queue_bytes: None,
            cmts_queue_s: None,
            cmts_aqm: AqmKind::Droptail,
            cm_queue_bytes: None,
            cm_queue_s: None,
            cm_aqm: AqmKind::Droptail,
            server_limit_bps: None,
            server_queue_bytes: 63_488,
            downstream_loss: 0.0,
            upstream_loss: 0.0,
            ethernet_header_bytes: 18,
            ethernet_min_frame_bytes: 64,
            ethernet_gap_bytes: 20,
            docsis_header_bytes: 6,
            pie_target_s: PIE_TARGET_S,
            docsis_pie_target_s: DOCSIS_PIE_TARGET_S,
            codel_target_s: CODEL_TARGET_S,
            codel_interval_s: CODEL_INTERVAL_S,
        }
    }

    /// Bits per second the downstream channel has for DOCSIS frames: the raw rate less
    /// Reed-Solomon's parity and MPEG-2's headers (Nguyen & Armitage Sec. III.C; the formula of
    /// `hfcsim.docsis.downstream_payload_bps`).
    pub fn payload_bps(&self) -> f64 {
        self.downstream_bps * self.rs_k as f64 / self.rs_n as f64 * (self.mpeg_packet_bytes - self.mpeg_header_bytes)
            / self.mpeg_packet_bytes
    }

    /// A buffer given in bytes or in seconds at `rate_bps` (at least one byte), or none.
    pub fn buffer_bytes(bytes: Option<u64>, secs: Option<f64>, rate_bps: f64) -> Option<u64> {
        bytes.or_else(|| secs.map(|s| ((s * rate_bps / 8.0).round() as u64).max(1)))
    }

    /// What the type system cannot say (Python checks ranges first, with better messages).
    fn check(&self) -> Result<(), String> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("network.{name} = {v}: must be > 0"))
            }
        };
        pos("mpeg_packet_bytes", self.mpeg_packet_bytes)?;
        if !(self.rs_k >= 1 && self.rs_k <= self.rs_n) {
            return Err(format!("network.rs_k = {}: must be in [1, network.rs_n = {}]", self.rs_k, self.rs_n));
        }
        if !(self.mpeg_header_bytes.is_finite()
            && self.mpeg_header_bytes >= 0.0
            && self.mpeg_header_bytes < self.mpeg_packet_bytes)
        {
            return Err(format!(
                "network.mpeg_header_bytes = {}: must be in [0, mpeg_packet_bytes)",
                self.mpeg_header_bytes
            ));
        }
        for (name, bytes, secs) in [
            ("cmts_queue", self.cmts_queue_bytes, self.cmts_queue_s),
            ("cm_queue", self.cm_queue_bytes, self.cm_queue_s),
        ] {
            if bytes.is_some() && secs.is_some() {
                return Err(format!("network.{name}_bytes and network.{name}_s: set at most one"));
            }
            if bytes == Some(0) {
                return Err(format!("network.{name}_bytes = 0: must be >= 1"));
            }
            if let Some(v) = secs {
                pos(&format!("{name}_s"), v)?;
            }
        }
        check_rate("network.upstream_bps", self.upstream_bps)?;
        check_rate("network.ethernet_bps", self.ethernet_bps)?;
        check_rate("network.ds_rate_bps", self.ds_rate_bps)?;
        check_rate("network.us_rate_bps", self.us_rate_bps)?;
        for (name, v) in [
            ("ds_peak_bps", self.ds_peak_bps),
            ("us_peak_bps", self.us_peak_bps),
            ("server_limit_bps", self.server_limit_bps),
        ] {
            if let Some(v) = v {
                check_rate(&format!("network.{name}"), v)?;
            }
        }
        // Frame sizes: 16-bit as Ethernet's and DOCSIS's length fields, so a packet's bytes on the
        // wire (Framing::wire, u32) cannot overflow.
        for (name, v) in [
            ("ethernet_header_bytes", self.ethernet_header_bytes),
            ("ethernet_min_frame_bytes", self.ethernet_min_frame_bytes),
            ("ethernet_gap_bytes", self.ethernet_gap_bytes),
            ("docsis_header_bytes", self.docsis_header_bytes),
        ] {
            if v > 65535 {
                return Err(format!("network.{name} = {v}: must be in [0, 65535]"));
            }
        }
        check_rate("network.downstream_bps", self.downstream_bps)?;
        if self.payload_bps() < 1.0 {
            return Err(format!(
                "network.downstream_bps = {}: its payload rate after Reed-Solomon and MPEG framing, {} b/s, must be >= 1",
                self.downstream_bps,
                self.payload_bps()
            ));
        }
        for (name, v) in [("downstream_delay_s", self.downstream_delay_s), ("upstream_delay_s", self.upstream_delay_s)]
        {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("network.{name} = {v}: must be >= 0"));
            }
        }
        for (name, v) in [
            ("pie_target_s", self.pie_target_s),
            ("docsis_pie_target_s", self.docsis_pie_target_s),
            ("codel_target_s", self.codel_target_s),
            ("codel_interval_s", self.codel_interval_s),
        ] {
            pos(name, v)?;
        }
        for (name, v) in [("downstream_loss", self.downstream_loss), ("upstream_loss", self.upstream_loss)] {
            if !(0.0..1.0).contains(&v) {
                return Err(format!("network.{name} = {v}: must be in [0, 1)"));
            }
        }
        if self.ds_burst_bytes == 0 || self.us_burst_bytes == 0 || self.server_queue_bytes == 0 {
            return Err("network.ds_burst_bytes / us_burst_bytes / server_queue_bytes = 0: must be >= 1".into());
        }
        if self.cmts_aqm == AqmKind::DocsisPie {
            return Err("network.cmts_aqm = \"docsis_pie\": DOCSIS-PIE is the modem's upstream AQM (RFC 8034)".into());
        }
        Ok(())
    }
}

impl Flow {
    /// An FTP-style download of `bytes` from the server through modem 0.
    pub fn download(bytes: u64) -> Flow {
        Flow {
            bytes,
            direction: Direction::Down,
            opener: Opener::Server,
            start_s: 0.0,
            http_header_bytes: None,
            modem: 0,
            handshake: true,
            extra_delay_s: 0.0,
            send_jitter_s: 0.0,
            reorder_jitter_s: 0.0,
            drop_packets: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(sc: &Scenario) -> serde_json::Value {
        serde_json::to_value(sc).unwrap()
    }

    #[test]
    fn a_document_without_upstream_and_modems_parses_as_fifo_without_groups() {
        let mut doc = json(&Scenario::cohen_default());
        let obj = doc.as_object_mut().unwrap();
        obj.remove("upstream");
        obj.remove("modems");
        let sc: Scenario = serde_json::from_value(doc).unwrap();
        assert_eq!(sc.upstream, Upstream::default());
        assert!(sc.modems.is_empty());
        sc.check().unwrap();
    }

    #[test]
    fn the_hfc_and_bottleneck_aqm_keys_default_to_droptail_and_are_checked() {
        // A document stored before the keys (Python leaves them out at their defaults) parses.
        let mut doc = json(&Scenario::cohen_default());
        for key in ["cm_buffer_aqm", "pie_target_s", "codel_target_s", "codel_interval_s"] {
            doc["network"].as_object_mut().unwrap().remove(key);
        }
        let sc: Scenario = serde_json::from_value(doc.clone()).unwrap();
        let Network::Hfc { cm_buffer_aqm, pie_target_s, codel_target_s, codel_interval_s, .. } = sc.network else {
            panic!("an hfc network")
        };
        assert_eq!(
            (cm_buffer_aqm, pie_target_s, codel_target_s, codel_interval_s),
            (AqmKind::Droptail, 0.015, 0.005, 0.1)
        );
        doc["network"]["cm_buffer_aqm"] = "codel".into();
        let sc: Scenario = serde_json::from_value(doc.clone()).unwrap();
        sc.check().unwrap();
        // Refused for direct JSON callers, one line naming the key, as for cmts_aqm: DOCSIS-PIE is
        // the modem's upstream AQM (RFC 8034), and a target must be a positive duration.
        doc["network"]["cm_buffer_aqm"] = "docsis_pie".into();
        let sc: Scenario = serde_json::from_value(doc.clone()).unwrap();
        assert!(sc.check().unwrap_err().starts_with("network.cm_buffer_aqm = \"docsis_pie\""));
        doc["network"]["cm_buffer_aqm"] = "codel".into();
        doc["network"]["codel_target_s"] = 0.0.into();
        let sc: Scenario = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(sc.check().unwrap_err(), "network.codel_target_s = 0: must be > 0");
        // A key of another network is refused by the schema itself.
        doc["network"]["codel_target_s"] = 0.005.into();
        doc["network"]["bottleneck_aqm"] = "pie".into();
        assert!(serde_json::from_value::<Scenario>(doc).is_err());
        let mut sc = Scenario::cohen_default();
        sc.network = Network::Bottleneck {
            rate_pps: 100.0,
            buffer_packets: None,
            tau_s: 1.0,
            loss: 0.0,
            bottleneck_aqm: AqmKind::DocsisPie,
            pie_target_s: PIE_TARGET_S,
            codel_target_s: CODEL_TARGET_S,
            codel_interval_s: CODEL_INTERVAL_S,
        };
        assert!(sc.check().unwrap_err().starts_with("network.bottleneck_aqm = \"docsis_pie\""));
        let mut doc = json(&sc);
        doc["network"]["cm_buffer_aqm"] = "pie".into();
        assert!(serde_json::from_value::<Scenario>(doc).is_err());
    }

    #[test]
    fn mac_names_and_groups_parse() {
        let mut doc = json(&Scenario::cohen_default());
        doc["upstream"]["mac"] = "ieee802.14".into();
        doc["upstream"]["contention"] = "fixed".into();
        doc["upstream"]["scheduler"] = "rr".into();
        doc["modems"] = serde_json::json!([{"count": 2, "distance_km_min": 25.0, "distance_km_max": 200.0,
            "queue_packets": null, "queue_bytes": 4096, "background_load": 0.3, "background_bytes": 48}]);
        let sc: Scenario = serde_json::from_value(doc).unwrap();
        assert_eq!(
            (sc.upstream.mac, sc.upstream.contention, sc.upstream.scheduler),
            (MacKind::Ieee80214, ContentionAlloc::Fixed, GrantScheduler::Rr)
        );
        assert_eq!(sc.modems[0].queue_bytes, Some(4096));
        sc.check().unwrap();
    }

    #[test]
    fn unknown_upstream_and_modem_keys_are_rejected() {
        for (section, key) in [("upstream", "minislots"), ("modems", "downloads")] {
            let mut doc = json(&Scenario::cohen_default());
            doc["modems"] = serde_json::json!([{"count": 1, "distance_km_min": 0.0, "distance_km_max": 0.0,
                "queue_packets": null, "queue_bytes": null, "background_load": 0.0, "background_bytes": 48}]);
            let target = if section == "modems" { &mut doc["modems"][0] } else { &mut doc["upstream"] };
            target[key] = 1.into();
            let err = serde_json::from_value::<Scenario>(doc).unwrap_err().to_string();
            assert!(err.contains(key), "{section}: {err}");
        }
    }

    fn group(count: u32) -> ModemGroup {
        ModemGroup {
            count,
            distance_km_min: 0.0,
            distance_km_max: 0.0,
            queue_packets: None,
            queue_bytes: None,
            background_load: 0.0,
            background_bytes: 48,
            piggyback: None,
            ack_spacing: AckSpacing::Off,
            channel: 0,
        }
    }

    #[test]
    fn rates_below_one_bit_per_second_and_durations_below_one_ns_are_refused() {
        // A rate rounds to whole b/s and 0 would be an infinitely fast link (time::tx_time).
        let mut sc = Scenario::cohen_default();
        if let Network::Hfc { downstream_bps, .. } = &mut sc.network {
            *downstream_bps = 0.4;
        }
        assert_eq!(sc.check().unwrap_err(), "network.downstream_bps = 0.4: must be >= 1 (bit/s)");
        let mut sc = Scenario::cohen_default();
        sc.network = Network::Bottleneck {
            rate_pps: 1e-5,
            buffer_packets: None,
            tau_s: 0.0,
            loss: 0.0,
            bottleneck_aqm: AqmKind::Droptail,
            pie_target_s: PIE_TARGET_S,
            codel_target_s: CODEL_TARGET_S,
            codel_interval_s: CODEL_INTERVAL_S,
        };
        assert!(sc.check().unwrap_err().starts_with("network.rate_pps = 0.00001: must be at least 1 bit/s"));
        let mut sc = Scenario::cohen_default();
        sc.tcp.tick_s = 1e-10;
        assert_eq!(sc.check().unwrap_err(), "tcp.tick_s = 0.0000000001: must be >= 1e-9 (1 ns)");
        let mut sc = Scenario::nguyen_default();
        if let Network::Docsis(d) = &mut sc.network {
            d.ds_rate_bps = 0.001;
        }
        assert_eq!(sc.check().unwrap_err(), "network.ds_rate_bps = 0.001: must be >= 1 (bit/s)");
    }

    #[test]
    fn check_rejects_bad_upstream_and_groups() {
        type Edit = fn(&mut Scenario);
        let cases: [(Edit, &str); 9] = [
            (|s| s.upstream.minislot_bytes = 0, "upstream.minislot_bytes"),
            (|s| s.upstream.max_request = 256, "upstream.max_request"),
            (|s| s.upstream.frame_s = 0.0, "upstream.frame_s"),
            (|s| s.upstream.backoff_start = 11, "upstream.backoff_start"),
            (|s| s.modems = vec![group(0)], "modems.0.count"),
            (|s| s.modems = vec![ModemGroup { distance_km_min: 5.0, ..group(1) }], "modems.0.distance_km_min"),
            (|s| s.modems = vec![ModemGroup { queue_packets: Some(1), queue_bytes: Some(1), ..group(1) }], "modems.0"),
            (|s| s.modems = vec![ModemGroup { background_load: 1.0, ..group(1) }], "modems.0.background_load"),
            (
                |s| {
                    s.modems = vec![group(1), group(2)];
                    s.flows[0].modem = 3;
                },
                "flows.0.modem = 3: must be < 3",
            ),
        ];
        for (edit, expected) in cases {
            let mut sc = Scenario::cohen_default();
            edit(&mut sc);
            let err = sc.check().unwrap_err();
            assert!(err.contains(expected), "{err} should name {expected}");
        }
    }

    #[test]
    fn flows_may_use_every_modem_of_the_groups() {
        let mut sc = Scenario::cohen_default();
        sc.modems = vec![group(1), group(2)];
        sc.flows[0].modem = 2;
        sc.check().unwrap();
    }
}
