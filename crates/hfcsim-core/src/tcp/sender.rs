//! The TCP data sender: a pure state machine. It is handed the time and each arriving packet,
//! appends what it sends to an output list, and says when it next needs attention
//! (`next_deadline`); it owns no clock and no scheduler (smoltcp's `poll_at`, docs/design.md, habit 1).
//!
//! The rules follow 4.4BSD (Net/3) `tcp_input`/`tcp_output`/`tcp_timers` as described in
//! Stevens, TCP/IP Illustrated vol. 2, chs. 25-29, with Reno fast retransmit/fast recovery
//! (RFC 5681) and NewReno partial-ACK handling (RFC 6582). Windows are kept in bytes.
//!
//! That is the Net/3 path, which the 1990s stacks run. Today's stacks take the other path,
//! `sender/today.rs` (SACK, RACK-TLP, PRR, F-RTO, D-SACK, undo, ECN, pacing), whenever a scenario
//! turns one of today's rules on (`SenderConfig::today`); both share the congestion-control hook
//! (`cc.rs`, `controller.rs`: Reno, CUBIC, DCTCP, Prague, BBR) and the persist timer
//! (`sender/persist.rs`).

use super::rto::Rto;
use super::CcState;
use crate::packet::Ecn;
use crate::scenario::{EcnMode, FastRecovery, Tcp, Variant};
use crate::time::SimTime;

mod persist;
mod today;

/// RFC 1323: the largest window with the maximum window-scale shift (Net/3 caps cwnd at
/// `TCP_MAXWIN << snd_scale`). The papers' windows never come near it.
const MAX_CWND: u64 = 65_535 << 14;

/// A sender's configuration: the scenario's TCP rules, each its own key (schema.toml's `tcp`
/// section; `cfg.sack` reads `cfg.tcp.sack`), and what the connection derives from them.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub tcp: Tcp,
    /// Effective MSS (Net/3 `tcp_mss` lowers it to the socket buffer if that is smaller; the
    /// timestamps option takes its 12 bytes).
    pub mss: u64,
    /// Send socket buffer, rounded as `tcp_mss` does (`tcp.buffer_rounding`).
    pub send_buffer: u64,
    /// No new fast retransmit while snd_una <= `recover` (RFC 6582 3.2 step 2; ns-2 `bugFix_`):
    /// `tcp.recover_guard`, or by default Tahoe and NewReno guard and Reno does not.
    pub recover_guard: bool,
    /// (run seed, component id) of the congestion control's random stream: BBR's gain-cycle
    /// phase (`rng::component::bbr_cycle` of the flow; the engine sets it).
    pub cc_stream: (u64, u64),
}

impl std::ops::Deref for SenderConfig {
    type Target = Tcp;
    fn deref(&self) -> &Tcp {
        &self.tcp
    }
}

impl std::ops::DerefMut for SenderConfig {
    fn deref_mut(&mut self) -> &mut Tcp {
        &mut self.tcp
    }
}

impl SenderConfig {
    /// A sender of the scenario's rules.
    pub fn new(tcp: &Tcp, mss: u64, send_buffer: u64) -> SenderConfig {
        let recover_guard = tcp.recover_guard.unwrap_or(tcp.variant != Variant::Reno);
        SenderConfig {
            tcp: tcp.clone(),
            mss,
            send_buffer,
            recover_guard,
            cc_stream: (0, crate::rng::component::bbr_cycle(0)),
        }
    }

    /// A bulk sender with the schema's default rules (the `net3-rfc5681` stack): tests start from it.
    pub fn reno(mss: u64, send_buffer: u64) -> SenderConfig {
        SenderConfig::new(&crate::scenario::Scenario::cohen_default().tcp, mss, send_buffer)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    SynSent,
    SynRcvd,
    Established,
    /// Gave up after `TCP_MAXRXTSHIFT` timeouts.
    Dropped,
}

/// What the sender did; the engine turns these into packets and trace rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Syn,
    SynAck,
    /// A data segment, with its IP ECN field and the TCP header's CWR bit (RFC 3168 Sec. 6.1).
    Segment {
        seq: u64,
        len: u32,
        pkt_no: u32,
        retransmit: bool,
        ecn: Ecn,
        cwr: bool,
    },
    NewAck {
        ack: u64,
    },
    DupAck {
        ack: u64,
        count: u32,
    },
    FastRetransmit {
        seq: u64,
    },
    Timeout {
        seq: u64,
    },
    /// A window probe (`tcp/sender/persist.rs`): a segment of no data at `seq` (snd_una - 1, Linux
    /// `tcp_xmit_probe_skb`), which the receiver answers with an ACK carrying its window.
    WindowProbe {
        seq: u64,
    },
}

/// An action with the congestion state right after it (for traces).
#[derive(Clone, Copy, Debug)]
pub struct Out {
    pub action: Action,
    pub cc: CcState,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    /// Retransmission timeouts of data (Net/3 `tcps_rexmttimeo`).
    pub timeouts: u64,
    /// Retransmission timeouts of the SYN or SYN-ACK, in the handshake (issue 26, defect 6).
    pub syn_timeouts: u64,
    pub fast_retransmits: u64,
    pub retransmitted_segments: u64,
    pub data_segments_sent: u64,
    pub acks_received: u64,
    /// Window reductions for an ECN-Echo (RFC 3168 Sec. 6.1.2; DCTCP's cut, RFC 8257 Sec. 3.3).
    pub ecn_reductions: u64,
    /// Window reductions undone as spurious (`tcp.undo`, F-RTO's among them; Linux's
    /// TCPFULLUNDO, TCPPARTIALUNDO, TCPDSACKUNDO and TCPLOSSUNDO counters together).
    pub undos: u64,
    /// Expiries of the persist timer (Net/3 `tcps_persisttimeo`; Linux's probe timer): each sent a
    /// window probe or a segment the size of a window too small for a whole one.
    pub persist_timeouts: u64,
}

#[derive(Clone, Debug)]
pub struct Sender {
    pub cfg: SenderConfig,
    pub state: State,
    /// Bytes the application writes: an optional HTTP response header, then the data.
    total: u64,
    /// Length of the first segment when the response header is written on its own (NCSA 1.5).
    header_len: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Peer's advertised window.
    pub snd_wnd: u64,
    pub dupacks: u32,
    /// Tahoe and NewReno: highest sequence sent when the last loss was detected (RFC 6582
    /// `recover`); None before any.
    recover: Option<u64>,
    in_recovery: bool,
    /// NewReno: a partial ACK of the current fast recovery has already reset the timer.
    partial_acked: bool,
    /// The sequence the retransmission timer last retransmitted.
    timed_out_seq: Option<u64>,
    /// ns-2 RenoTcpAgent `dupwnd_` (bytes): fast recovery's inflation, kept apart from cwnd and
    /// added to it in the window; always 0 with `FastRecovery::Bsd`.
    pub dupwnd: u64,
    pub rto: Rto,
    rexmt_at: Option<SimTime>,
    /// Karn: one timed segment at a time (`t_rtt`, `t_rtseq`); the SYN counts as seq 0.
    timed: Option<(u64, SimTime)>,
    pub stats: SenderStats,
    /// The state of today's recovery, when `cfg.today()`.
    today: Option<Box<today::Today>>,
    /// ECN negotiated with the peer (RFC 3168 Sec. 6.1.1), `tcp.ecn` on at both ends.
    pub ecn_ok: bool,
    /// The persist timer's state (`tcp/sender/persist.rs`).
    persist: persist::Persist,
    /// Net/3 `max_sndwnd`: the largest window the peer has offered (the sender's silly-window
    /// avoidance reads it).
    max_sndwnd: u64,
    /// `tcp.sndbuf_autotuning`: Linux's send buffer, growing (`SndbufAuto`); None: fixed.
    sndbuf_auto: Option<SndbufAuto>,
    /// Linux SOCK_NOSPACE: an application writing as the buffer allows (apps/, `Cmd::WantWrite`)
    /// found it full and waits for room; set and cleared by the driver. Always false for a
    /// scenario's own flows, whose whole transfer is written at once.
    pub app_blocked: bool,
}

/// What restart after idle measures from (`Sender::write`).
#[derive(Clone, Copy, Debug)]
pub struct Idle {
    /// This sender's last data segment (Linux `lsndtime`).
    pub sent: SimTime,
    /// The last segment its host received on the connection (Net/3 `t_idle`).
    pub heard: SimTime,
}

/// Linux's send buffer without SO_SNDBUF (`tcp.sndbuf_autotuning`; net/ipv4/tcp.c tcp_init_sock,
/// tcp_input.c tcp_sndbuf_expand, tcp_should_expand_sndbuf, tcp_new_space, tcp_check_space):
/// - sk_sndbuf starts at tcp_wmem[1];
/// - `tcp_sndbuf_expand`, at ESTABLISHED (`tcp_init_buffer_space`) and then from `tcp_new_space`:
///   sk_sndbuf = max(sk_sndbuf, min(f x nr_segs x per_mss, tcp_wmem[2])), nr_segs = max(TCP_INIT_CWND,
///   cwnd, reordering + 1), f the control's `sndbuf_expand` (BBR's 3: "BBR may slow-start even during
///   recovery"; 2 otherwise: "Cubic needs 1.7 factor, rounded to 2"), per_mss the worst-case memory of
///   a segment, `roundup_pow_of_two(max(mss_clamp, mss_cache) + MAX_TCP_HEADER +
///   SKB_DATA_ALIGN(sizeof(struct skb_shared_info))) + SKB_DATA_ALIGN(sizeof(struct sk_buff))`;
/// - `tcp_new_space` runs after an ACK that freed queued data (`tcp_check_space`) when the application
///   was held back by the buffer (SOCK_NOSPACE: it has more to write than the buffer takes), and
///   expands only if fewer packets are in flight than cwnd ("If we filled the congestion window, do
///   not expand"). Memory pressure is not modelled (the host's TCP memory is far from its limits).
///
/// The data in flight is at most half of sk_sndbuf, rounded per `tcp.buffer_rounding` and at least a
/// segment: the rule an explicit SO_SNDBUF of B has, whose sk_sndbuf is 2 B (chosen: one measure of the
/// buffer for both; with the per_mss memory a segment is charged here it would be 63 %).
/// The expanded buffer serves the next send (the application's write after the wake-up is not
/// modelled apart from it).
#[derive(Clone, Copy, Debug)]
struct SndbufAuto {
    sk_sndbuf: u64,
    wmem_max: u64,
    per_mss: u64,
    factor: u64,
}

/// The emulator host's kernel (x86-64, 6.18, no tunnels): MAX_TCP_HEADER = L1_CACHE_ALIGN(128 +
/// MAX_HEADER 32) = 192, SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) = 320,
/// SKB_DATA_ALIGN(sizeof(struct sk_buff)) = 256: measured there, its sk_sndbuf after a handshake with a
/// 1,460 B MSS is 46,080 = 2 x 10 x (2,048 + 256) with CUBIC and 69,120 with BBR (3 x), and per_mss
/// steps from 1,920 to 2,304 between MSS 505 and 520 (1,024 - 320 - 192 = 512).
const MAX_TCP_HEADER: u64 = 192;
const SHINFO_BYTES: u64 = 320;
const SKB_BYTES: u64 = 256;
/// Linux TCP_INIT_CWND.
const INIT_CWND: u64 = 10;
/// SOCK_MIN_SNDBUF = 2 x TCP_SKB_MIN_TRUESIZE (include/net/sock.h): SO_SNDBUF's floor (sk_sndbuf).
pub const SOCK_MIN_SNDBUF: u64 = 2 * (2048 + 256);

impl Sender {
    pub fn new(cfg: SenderConfig, total: u64, header_len: Option<u32>, rto: Rto) -> Sender {
        let mut s = Sender::fixed(cfg, total, header_len, rto);
        s.sndbuf_update();
        s
    }

    fn fixed(cfg: SenderConfig, total: u64, header_len: Option<u32>, rto: Rto) -> Sender {
        Sender {
            state: State::Closed,
            total,
            header_len: header_len.map_or(0, |h| (h as u64).min(total)),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: 0,
            ssthresh: cfg.initial_ssthresh_bytes.unwrap_or(MAX_CWND),
            snd_wnd: 0,
            dupacks: 0,
            recover: None,
            in_recovery: false,
            partial_acked: false,
            timed_out_seq: None,
            dupwnd: 0,
            rto,
            rexmt_at: None,
            timed: None,
            stats: SenderStats::default(),
            today: cfg.today().then(|| Box::new(today::Today::new(&cfg))),
            ecn_ok: false,
            persist: persist::Persist::default(),
            max_sndwnd: 0,
            sndbuf_auto: cfg.sndbuf_autotuning.then(|| SndbufAuto {
                sk_sndbuf: cfg.tcp_wmem_default_bytes as u64,
                wmem_max: cfg.tcp_wmem_max_bytes as u64,
                per_mss: ((cfg.mss_bytes as u64).max(cfg.mss) + MAX_TCP_HEADER + SHINFO_BYTES).next_power_of_two()
                    + SKB_BYTES,
                factor: if cfg.congestion_control == crate::scenario::CongestionControlKind::Bbr { 3 } else { 2 },
            }),
            app_blocked: false,
            cfg,
        }
    }

    /// `tcp.sndbuf_autotuning`: the send buffer's limit on data in flight from sk_sndbuf (`SndbufAuto`).
    fn sndbuf_update(&mut self) {
        if let Some(a) = &self.sndbuf_auto {
            let (mss, half) = (self.cfg.mss, a.sk_sndbuf / 2);
            let rounded = if self.cfg.buffer_rounding == super::BufferRounding::Down {
                half / mss * mss
            } else {
                half.div_ceil(mss) * mss
            };
            self.cfg.send_buffer = rounded.max(mss);
        }
    }

    /// Linux `tcp_sndbuf_expand` (`SndbufAuto`).
    fn sndbuf_expand(&mut self) {
        let (mss, cwnd, reordering) = (self.cfg.mss, self.cwnd, self.cfg.dupack_threshold as u64);
        if let Some(a) = &mut self.sndbuf_auto {
            let nr_segs = INIT_CWND.max(cwnd / mss).max(reordering + 1);
            let sndmem = a.factor * nr_segs * a.per_mss;
            if a.sk_sndbuf < sndmem {
                a.sk_sndbuf = sndmem.min(a.wmem_max);
            }
            self.sndbuf_update();
        }
    }

    /// After an ACK that acknowledged data (`advanced`): Linux `tcp_check_space` -> `tcp_new_space`
    /// when the application has more to write than the buffer takes (SOCK_NOSPACE) and fewer packets
    /// are in flight than cwnd (`tcp_should_expand_sndbuf`).
    fn sndbuf_on_ack(&mut self, advanced: bool) {
        if self.sndbuf_auto.is_none() || !advanced || self.state != State::Established {
            return;
        }
        // An application that writes only as the buffer allows never has more queued than it
        // takes: it is held back when it waits for room (SOCK_NOSPACE, `app_blocked`).
        let blocked = self.total - self.snd_una.min(self.total) > self.cfg.send_buffer || self.app_blocked;
        let mss = self.cfg.mss;
        let in_flight = match self.today {
            Some(_) => self.pipe().div_ceil(mss),
            None => (self.snd_max - self.snd_una).div_ceil(mss),
        };
        if blocked && in_flight < self.cwnd / mss {
            self.sndbuf_expand();
        }
    }

    pub fn cc(&self) -> CcState {
        CcState { cwnd: self.cwnd, ssthresh: self.ssthresh, flight: self.snd_max - self.snd_una, snd_una: self.snd_una }
    }

    fn emit(&self, out: &mut Vec<Out>, action: Action) {
        out.push(Out { action, cc: self.cc() });
    }

    pub fn next_deadline(&self) -> Option<SimTime> {
        let rexmt = match (self.rexmt_at, self.persist.at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match self.today.as_ref().and_then(|t| t.next_deadline()) {
            Some(t) => Some(rexmt.map_or(t, |r| r.min(t))),
            None => rexmt,
        }
    }

    /// Bytes the application writes (the header and the data).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The send buffer's limit on data in flight, bytes.
    pub fn send_buffer(&self) -> u64 {
        self.cfg.send_buffer
    }

    /// The most the send buffer lets be in flight, and the key that sets it: `tcp.send_buffer_bytes`,
    /// or with `tcp.sndbuf_autotuning` half of `tcp.tcp_wmem_max_bytes` (`SndbufAuto`).
    pub fn max_send_buffer(&self) -> (u64, &'static str) {
        match &self.sndbuf_auto {
            Some(a) => {
                let mss = self.cfg.mss;
                ((a.wmem_max.max(a.sk_sndbuf) / 2 / mss * mss).max(mss), "tcp.tcp_wmem_max_bytes")
            }
            None => (self.cfg.send_buffer, "tcp.send_buffer_bytes"),
        }
    }

    /// The length of the next new segment (0 when all is sent).
    pub fn next_segment_len(&self) -> u64 {
        if self.snd_max < self.total {
            self.segment_at(self.snd_max).0 as u64
        } else {
            0
        }
    }

    pub fn is_done(&self) -> bool {
        self.state == State::Established && self.snd_una >= self.total
    }

    /// The application writes `bytes` more (a persistent connection's next request or response,
    /// `apps`): they join the send queue behind what was written before and go as the window allows.
    /// `idle`: when the connection last sent data and last heard from its peer.
    ///
    /// Restart after idle (RFC 5681 Sec. 4.1; RFC 2861), before the data is queued:
    /// - today's stacks, Linux `tcp_slow_start_after_idle_check` (include/net/tcp.h, from
    ///   `tcp_skb_entail`, sysctl tcp_slow_start_after_idle = 1, its default): with nothing in flight
    ///   and more than an RTO since the last data sent (`lsndtime`), `tcp_cwnd_restart`
    ///   (net/ipv4/tcp_output.c): ssthresh = `tcp_current_ssthresh` (max(ssthresh, 3/4 cwnd)); cwnd
    ///   halved once for each further RTO of the idle time while above the restart window min(IW,
    ///   cwnd), and never below it. A control with its own `cong_control` (BBR) is left alone.
    /// - Net/3 `tcp_output` (Stevens vol. 2, 26.3): "idle = (snd_max == snd_una); if (idle &&
    ///   t_idle >= t_rxtcur) snd_cwnd = t_maxseg": t_idle counts from the last segment the
    ///   connection received. ns-2's agents keep Net/3's rule here (chosen: the same measure).
    pub fn write(&mut self, now: SimTime, bytes: u64, idle: Idle, out: &mut Vec<Out>) {
        if self.state == State::Established && self.snd_max == self.snd_una && bytes > 0 {
            let from = if self.today.is_some() { idle.sent } else { idle.heard };
            let idle = now - from.min(now);
            let rto = self.rto.current();
            let mss = self.cfg.mss;
            if self.today.is_some() {
                if idle > rto && self.cfg.congestion_control != crate::scenario::CongestionControlKind::Bbr {
                    let restart = (self.cfg.initial_window as u64 * mss).min(self.cwnd);
                    self.ssthresh = self.ssthresh.max(self.cwnd / 2 + self.cwnd / 4);
                    let (mut cwnd, mut delta) = (self.cwnd, idle as i128 - rto as i128);
                    while delta > 0 && cwnd > restart {
                        cwnd /= 2;
                        delta -= rto as i128;
                    }
                    self.cwnd = cwnd.max(restart);
                }
            } else if idle >= rto {
                self.cwnd = mss;
            }
        }
        self.total += bytes;
        self.output(now, out);
    }

    // ---- connection set-up -------------------------------------------------------------

    /// Active open: send a SYN (timed, like any segment, in Net/3).
    pub fn connect(&mut self, now: SimTime, out: &mut Vec<Out>) {
        self.state = State::SynSent;
        self.timed = Some((0, now));
        self.rexmt_at = Some(self.rto.deadline(now));
        self.emit(out, Action::Syn);
    }

    /// Passive open: a SYN arrived; answer with SYN-ACK (again, if it is a retransmitted SYN).
    pub fn on_syn(&mut self, now: SimTime, out: &mut Vec<Out>) {
        match self.state {
            State::Closed => {
                self.state = State::SynRcvd;
                self.timed = Some((0, now));
                self.rexmt_at = Some(self.rto.deadline(now));
                self.emit(out, Action::SynAck);
            }
            State::SynRcvd => self.emit(out, Action::SynAck),
            _ => {}
        }
    }

    /// The TCP flags of the SYN or SYN-ACK this end sends: an ECN-setup SYN carries ECE and CWR,
    /// an ECN-setup SYN-ACK ECE alone (RFC 3168 Sec. 6.1.1).
    pub fn handshake_flags(&self, syn_ack: bool) -> u8 {
        super::ecn_setup_flags(self.cfg.ecn, syn_ack, self.ecn_ok)
    }

    /// The peer's SYN or SYN-ACK arrived with `flags` (call before `on_syn` / `on_syn_ack`): ECN
    /// is on when both ends ask for it (RFC 3168 Sec. 6.1.1: an ECN-setup SYN has ECE and CWR, an
    /// ECN-setup SYN-ACK ECE without CWR).
    pub fn peer_handshake(&mut self, flags: u8, syn_ack: bool) {
        if self.state == State::Closed || self.state == State::SynSent {
            self.ecn_ok = super::ecn_setup_agreed(self.cfg.ecn, flags, syn_ack);
        }
    }

    /// Start established without a handshake (Lakshman & Madhow's model has none): with no SYN to
    /// negotiate on, both ends simply agree on `tcp.ecn`.
    pub fn establish(&mut self, now: SimTime, rwnd: u64, out: &mut Vec<Out>) {
        self.ecn_ok = self.cfg.ecn != EcnMode::Off;
        self.state = State::Established;
        self.snd_wnd = rwnd;
        self.cwnd = self.cfg.initial_window as u64 * self.cfg.mss;
        self.sndbuf_expand(); // tcp_init_transfer -> tcp_init_buffer_space
        self.output(now, out);
    }

    /// The SYN-ACK answering our SYN arrived (active opener).
    pub fn on_syn_ack(&mut self, now: SimTime, rwnd: u64, out: &mut Vec<Out>) {
        if self.state != State::SynSent {
            return;
        }
        self.handshake_done(now, rwnd);
        // Cohen Sec. VI.A: the connection initiator starts with the initial window.
        self.cwnd = self.cfg.initial_window as u64 * self.cfg.mss;
        self.sndbuf_expand(); // tcp_init_transfer -> tcp_init_buffer_space
                              // The ACK of the SYN-ACK rides on the first data segment.
        self.output(now, out);
    }

    /// The final ACK of the three-way handshake arrived (passive opener).
    pub fn on_handshake_ack(&mut self, now: SimTime, rwnd: u64, out: &mut Vec<Out>) {
        if self.state != State::SynRcvd {
            return;
        }
        self.handshake_done(now, rwnd);
        // Net/3 tcp_input: in SYN_RCVD the ACK of our SYN falls through to the ordinary ACK
        // processing, which opens cwnd by one segment as in slow start; so the host that
        // accepted the connection starts one segment above the initial window (Cohen Sec. VI.A:
        // "the last ACK ... causes the window of the host accepting the connection to increase
        // by one packet").
        // Linux sets the initial window when the handshake completes (tcp_init_transfer) and
        // does not open it for the ACK of the SYN.
        let extra = u64::from(self.today.is_none());
        self.cwnd = (self.cfg.initial_window as u64 + extra) * self.cfg.mss;
        self.sndbuf_expand(); // tcp_init_transfer -> tcp_init_buffer_space
        self.output(now, out);
    }

    fn handshake_done(&mut self, now: SimTime, rwnd: u64) {
        if let Some((_, sent)) = self.timed.take() {
            self.rto.sample(sent, now);
        }
        self.state = State::Established;
        self.snd_wnd = rwnd;
        self.rexmt_at = None;
    }

    // ---- data transfer -------------------------------------------------------------------

    /// The segment starting at `seq`: the header's segments, then MSS-sized segments of data. The
    /// header is its own write, and Net/3's `tcp_output` sends at most t_maxseg per segment (Stevens
    /// vol. 2, 26.3): a header longer than an MSS is MSS-sized segments and a short last one, and
    /// data starts in a new segment (NCSA 1.5 writes the header on its own). Segments start where
    /// the last one sent ended: on the MSS grid, unless a window smaller than a segment took a piece
    /// of one (the persist timer's send, Net/3's silly-window rule); the rest of the data goes on
    /// in MSS-sized segments from there, as both stacks cut their send queue at snd_nxt. The packet
    /// number is the grid slot the segment's last byte falls in (on the grid, its index from 1).
    fn segment_at(&self, seq: u64) -> (u32, u32) {
        let mss = self.cfg.mss;
        let (len, pkt_no) = if seq < self.header_len {
            let len = mss.min(self.header_len - seq);
            (len, (seq + len - 1) / mss + 1)
        } else {
            let len = mss.min(self.total - seq);
            let first = self.header_len.div_ceil(mss) + 1;
            (len, (seq + len.max(1) - 1 - self.header_len) / mss + first)
        };
        (len as u32, pkt_no as u32)
    }

    /// Net/3 `tcp_output`, reduced to what a bulk transfer needs: send segments while they fit in
    /// the effective window min(cwnd, advertised window, send buffer) above snd_una. Socket buffers
    /// are rounded to whole segments, so the window is mostly a whole number of them. Less than a
    /// segment goes only as Net/3's sender silly-window avoidance allows (Stevens vol. 2, 26.3): at
    /// least half the largest window the peer has offered (`max_sndwnd`), or forced by the persist
    /// timer. When nothing can go, data is left and neither the
    /// retransmission nor the persist timer runs, the persist timer starts (tcp/sender/persist.rs).
    pub fn output(&mut self, now: SimTime, out: &mut Vec<Out>) {
        if self.state != State::Established {
            return;
        }
        if self.today.is_some() {
            // Linux tcp_init_transfer sets the first pacing rate, from the handshake's RTT (BBR's
            // own in bbr_init, with its min RTT from the handshake's sample).
            self.init_bbr(now);
            self.update_pacing_rate();
            self.send_today(now, None, out);
            return self.check_persist(now);
        }
        self.output_net3(now, false, out);
    }

    /// `output` on the Net/3 path; `force`: the persist timer's call (Net/3 `t_force`).
    fn output_net3(&mut self, now: SimTime, force: bool, out: &mut Vec<Out>) {
        self.max_sndwnd = self.max_sndwnd.max(self.snd_wnd);
        // ns-2 RenoTcpAgent::window: min(int(cwnd_) + dupwnd_, wnd_); dupwnd is 0 in Net/3.
        let window = (self.cwnd + self.dupwnd).min(self.snd_wnd).min(self.cfg.send_buffer);
        let mut force = force;
        while self.snd_nxt < self.total {
            let seq = self.snd_nxt;
            let (mut len, pkt_no) = self.segment_at(seq);
            let retransmit = seq < self.snd_max;
            let room = (self.snd_una + window).saturating_sub(seq);
            if len as u64 > room {
                // Sender SWS avoidance: "If peer's buffer is tiny, then send when window is at
                // least half open. If retransmitting (possibly after persist timer forced us to
                // send into a small window), then must resend." Chosen: a retransmission that cwnd
                // cuts waits for room for the whole segment, as before the persist timer (the 1990s
                // runs keep their results); one the peer's window cuts, a window smaller than the
                // segment that the buffers' rounding never gives, goes in a piece, as Net/3's must.
                let peer_cuts = self.snd_una + self.snd_wnd.min(self.cfg.send_buffer) < seq + len as u64;
                if room == 0 || !(force || (retransmit && peer_cuts) || room >= self.max_sndwnd / 2) {
                    break;
                }
                len = room as u32;
            }
            force = false;
            // RFC 896 (Nagle), Net/3 `idle` test: a short final segment waits for all
            // outstanding data to be acknowledged.
            if self.cfg.nagle && !retransmit && (len as u64) < self.cfg.mss && self.snd_max > self.snd_una {
                break;
            }
            if retransmit {
                self.stats.retransmitted_segments += 1;
            } else {
                self.stats.data_segments_sent += 1;
                // Net/3: time this segment if none is being timed (only new data: Karn).
                if self.timed.is_none() {
                    self.timed = Some((seq, now));
                }
            }
            self.snd_nxt = seq + len as u64;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            if self.rexmt_at.is_none() {
                self.rexmt_at = Some(self.rto.deadline(now));
            }
            // The Net/3 path has no ECN (tcp.ecn takes today's path, `Tcp::today`).
            self.emit(out, Action::Segment { seq, len, pkt_no, retransmit, ecn: Ecn::NotEct, cwr: false });
        }
        self.check_persist(now);
    }

    /// An ACK with ECN-Echo `ece` and SACK blocks arrived (ECN on: today's path, `Tcp::today`).
    pub fn on_ack_ecn(&mut self, now: SimTime, ack: u64, wnd: u64, sack: &[(u64, u64)], ece: bool, out: &mut Vec<Out>) {
        if self.today.is_some() && self.state == State::Established {
            let (prior_in_flight, prior_una) = (self.snd_max > self.snd_una, self.snd_una);
            self.on_ack_today(now, ack, wnd, sack, ece && self.ecn_ok, out);
            self.sndbuf_on_ack(self.snd_una > prior_una);
            return self.persist_on_ack(now, prior_in_flight);
        }
        self.on_ack_sack(now, ack, wnd, sack, out)
    }

    /// An ACK with SACK blocks (RFC 2018) arrived.
    pub fn on_ack_sack(&mut self, now: SimTime, ack: u64, wnd: u64, sack: &[(u64, u64)], out: &mut Vec<Out>) {
        if self.today.is_some() && self.state == State::Established {
            let (prior_in_flight, prior_una) = (self.snd_max > self.snd_una, self.snd_una);
            self.on_ack_today(now, ack, wnd, sack, false, out);
            self.sndbuf_on_ack(self.snd_una > prior_una);
            return self.persist_on_ack(now, prior_in_flight);
        }
        self.on_ack(now, ack, wnd, out)
    }

    /// An ACK arrived (Net/3 `tcp_input`, ACK processing, Stevens vol. 2, 29.2-29.4).
    pub fn on_ack(&mut self, now: SimTime, ack: u64, wnd: u64, out: &mut Vec<Out>) {
        match self.state {
            State::SynRcvd => return self.on_handshake_ack(now, wnd, out),
            State::Established => {}
            _ => return,
        }
        let (prior_in_flight, prior_una) = (self.snd_max > self.snd_una, self.snd_una);
        if self.today.is_some() {
            self.on_ack_today(now, ack, wnd, &[], false, out);
        } else {
            self.on_ack_net3(now, ack, wnd, out);
        }
        self.sndbuf_on_ack(self.snd_una > prior_una);
        self.persist_on_ack(now, prior_in_flight);
    }

    fn on_ack_net3(&mut self, now: SimTime, ack: u64, wnd: u64, out: &mut Vec<Out>) {
        self.stats.acks_received += 1;
        if ack > self.snd_max {
            return;
        }
        if self.cfg.header_prediction && self.predicted_ack(ack, wnd) {
            return self.fast_path_ack(now, ack, out);
        }
        if ack <= self.snd_una {
            // A duplicate ACK counts only if it carries no window change, the ACK is for
            // snd_una and the retransmission timer is running (Net/3).
            if ack == self.snd_una && wnd == self.snd_wnd && self.rexmt_at.is_some() {
                self.on_dupack(now, out);
            } else {
                self.dupacks = 0;
            }
            // tcp_input's window update (Stevens vol. 2, 29.7): an ACK of snd_una with a larger
            // window updates it (snd_wl2 == ti_ack && tiwin > snd_wnd) and sets needoutput, so that
            // tcp_output sends what the window now allows (the read's window update of a receiver
            // whose window opens only when its application reads).
            let opened = ack == self.snd_una && wnd > self.snd_wnd;
            self.snd_wnd = wnd;
            if opened {
                self.output(now, out);
            }
            return;
        }
        self.on_new_ack(now, ack, wnd, out);
    }

    /// 4.4BSD-Lite tcp_input, header prediction (Stevens vol. 2, 28.4): an ACK that carries no
    /// data is "a pure ack for outstanding data" when the window is unchanged and non-zero
    /// (`tiwin && tiwin == tp->snd_wnd`), the sender is not retransmitting (`snd_nxt ==
    /// snd_max`), the ACK is for new data (`SEQ_GT(ti_ack, snd_una) && SEQ_LEQ(ti_ack,
    /// snd_max)`) and `snd_cwnd >= snd_wnd`. The ACKs of an 8 KB-window bulk transfer mostly are,
    /// and so is the ACK that ends fast recovery: the inflated cwnd exceeds the send window.
    fn predicted_ack(&self, ack: u64, wnd: u64) -> bool {
        wnd != 0
            && wnd == self.snd_wnd
            && self.snd_nxt == self.snd_max
            && ack > self.snd_una
            && self.cwnd >= self.snd_wnd
    }

    /// The fast path's work, and what it leaves out: it times the RTT (`tcp_xmit_timer`), drops
    /// the acknowledged data, stops or restarts the retransmission timer and calls `tcp_output`,
    /// then returns. It neither clears `t_dupacks` nor deflates cwnd (that code lies on the slow
    /// path, below the duplicate-ACK test), and it does not open cwnd. So after fast recovery
    /// t_dupacks stays at 3 or more: the next loss's dupACKs never make `++t_dupacks ==
    /// tcprexmtthresh` and it ends in a timeout. Later BSDs (FreeBSD 2.x) added a
    /// `t_dupacks < tcprexmtthresh` test to the fast path; this is the code before it.
    fn fast_path_ack(&mut self, now: SimTime, ack: u64, out: &mut Vec<Out>) {
        self.emit(out, Action::NewAck { ack });
        self.sample_rtt(now, ack);
        self.snd_una = ack;
        // "If all outstanding data are acked, stop retransmit timer, otherwise restart timer."
        self.rexmt_at = if ack == self.snd_max { None } else { Some(self.rto.deadline(now)) };
        // `if (so->so_snd.sb_cc) (void) tcp_output(tp)`: the bulk sender always has data left.
        self.output(now, out);
    }

    /// RTT measurement of the timed segment when `ack` covers it (Karn: retransmissions are never
    /// timed); Net/3 `if (tp->t_rtt && SEQ_GT(ti->ti_ack, tp->t_rtseq)) tcp_xmit_timer(tp, tp->t_rtt)`.
    fn sample_rtt(&mut self, now: SimTime, ack: u64) {
        if let Some((seq, sent)) = self.timed {
            if ack > seq {
                self.rto.sample(sent, now);
                self.timed = None;
            }
        }
    }

    fn on_dupack(&mut self, now: SimTime, out: &mut Vec<Out>) {
        self.dupacks += 1;
        let threshold = self.cfg.dupack_threshold;
        self.emit(out, Action::DupAck { ack: self.snd_una, count: self.dupacks });
        let mss = self.cfg.mss;
        if self.dupacks == threshold {
            if self.cfg.recover_guard {
                // RFC 6582 3.2 step 2 (and ns's Tahoe `bug_fix_`, RFC 2582 Sec. 6): no new
                // fast retransmit while the ACK does not cover `recover`, the highest sequence
                // sent when the last loss was detected. Without it, the duplicates that Tahoe's
                // go-back-N resends draw dupACKs that trigger spurious fast retransmits.
                // Classic Reno (Net/3) has no such guard (`tcp.recover_guard`).
                if let Some(recover) = self.recover {
                    if self.snd_una <= recover {
                        return;
                    }
                }
            }
            self.stats.fast_retransmits += 1;
            if self.cfg.fast_recovery == FastRecovery::Ns2 {
                return self.ns2_fast_retransmit(now, out);
            }
            // Net/3: ssthresh = max(min(snd_wnd, cwnd) / 2, 2 segments), whole segments.
            self.ssthresh = self.halved_window();
            self.rexmt_at = None;
            self.timed = None;
            self.emit(out, Action::FastRetransmit { seq: self.snd_una });
            match self.cfg.variant {
                Variant::Tahoe => {
                    // Tahoe (Jacobson 1988; ns TcpAgent; Lakshman & Madhow Sec. II): treat
                    // the loss like a timeout without back-off: cwnd = 1, go back to snd_una,
                    // slow start.
                    self.cwnd = mss;
                    self.recover = Some(self.snd_max);
                    self.snd_nxt = self.snd_una;
                    self.output(now, out);
                }
                Variant::Reno | Variant::Newreno => {
                    // Net/3 fast retransmit + fast recovery: send the one missing segment with
                    // cwnd = 1 segment, then inflate cwnd by the dupACKs already received.
                    let onxt = self.snd_nxt;
                    self.snd_nxt = self.snd_una;
                    self.cwnd = mss;
                    self.output(now, out);
                    self.cwnd = self.ssthresh + mss * self.dupacks as u64;
                    self.snd_nxt = self.snd_nxt.max(onxt);
                    if self.cfg.variant == Variant::Newreno {
                        self.recover = Some(self.snd_max);
                        self.in_recovery = true;
                        self.partial_acked = false;
                    } else if self.cfg.recover_guard {
                        self.recover = Some(self.snd_max);
                    }
                    // 4.4BSD-Lite ends here: `if (SEQ_GT(onxt, tp->snd_nxt)) tp->snd_nxt = onxt;
                    // goto drop;`. New data waits for the next dupACK's tcp_output.
                    if self.cfg.output_after_fast_retransmit {
                        self.output(now, out);
                    }
                }
            }
        } else if self.dupacks > threshold && self.cfg.fast_recovery == FastRecovery::Ns2 {
            // RenoTcpAgent::recv: `++dupwnd_` only while `last_cwnd_action_ == CWND_ACTION_DUPACK`
            // (exitFastRetrans_), i.e. after a fast retransmit and before the next new ACK: a series
            // of dupACKs whose fast retransmit bugFix_ refused inflates nothing.
            if self.dupwnd > 0 {
                self.dupwnd += mss;
                self.output(now, out);
            }
        } else if self.dupacks > threshold && self.cfg.variant != Variant::Tahoe {
            if self.cfg.variant == Variant::Newreno && !self.in_recovery {
                return;
            }
            // Fast recovery: each further dupACK means a segment has left the network.
            self.cwnd = (self.cwnd + mss).min(MAX_CWND);
            self.output(now, out);
        }
    }

    /// ns-2 RenoTcpAgent::dupack_action, `reno_action`:
    /// - `slowdown(CLOSE_SSTHRESH_HALF)`: ssthresh_ = (int) half the window, at least 2 (as Net/3);
    /// - `slowdown(CLOSE_CWND_HALF)`: cwnd_ = windowd() / 2 = min(cwnd_, wnd_) / 2, fractional
    ///   (bytes here), at least one packet; not ssthresh, so 5 packets leave 2.5;
    /// - `reset_rtx_timer(1, 0)` restarts the timer and stops RTT timing (Karn);
    /// - `output(last_ack_ + 1)` resends the one packet, whatever the window;
    /// - `dupwnd_ = numdupacks_`: the window is cwnd + dupwnd until the next new ACK zeroes dupwnd
    ///   (cwnd itself is never inflated, so nothing deflates it);
    /// - RenoTcpAgent::recv then calls send_much: new data if the inflated window allows.
    fn ns2_fast_retransmit(&mut self, now: SimTime, out: &mut Vec<Out>) {
        let mss = self.cfg.mss;
        self.ssthresh = self.halved_window();
        self.cwnd = (self.snd_wnd.min(self.cwnd) / 2).max(mss);
        self.dupwnd = 0;
        self.rexmt_at = None;
        self.timed = None;
        if self.cfg.recover_guard {
            // reno_action: `recover_ = maxseq_`.
            self.recover = Some(self.snd_max);
        }
        self.emit(out, Action::FastRetransmit { seq: self.snd_una });
        let (onxt, cwnd) = (self.snd_nxt, self.cwnd);
        self.snd_nxt = self.snd_una;
        self.cwnd = mss;
        self.output(now, out);
        self.cwnd = cwnd;
        self.snd_nxt = self.snd_nxt.max(onxt);
        self.dupwnd = self.cfg.dupack_threshold as u64 * mss;
        if self.cfg.output_after_fast_retransmit {
            self.output(now, out);
        }
    }

    /// Whether a new ACK opens cwnd by mss*mss/cwnd rather than by a segment: Net/3 tcp_input
    /// `if (cw > tp->snd_ssthresh)`; ns-2 TcpAgent::opencwnd `if (cwnd_ < ssthresh_)` slow start,
    /// so cwnd == ssthresh is congestion avoidance there.
    fn in_congestion_avoidance(&self) -> bool {
        if self.cfg.slow_start_at_ssthresh {
            self.cwnd > self.ssthresh
        } else {
            self.cwnd >= self.ssthresh
        }
    }

    fn halved_window(&self) -> u64 {
        let mss = self.cfg.mss;
        let segs = (self.snd_wnd.min(self.cwnd) / 2 / mss).max(2);
        segs * mss
    }

    fn on_new_ack(&mut self, now: SimTime, ack: u64, wnd: u64, out: &mut Vec<Out>) {
        let mss = self.cfg.mss;
        let acked = ack - self.snd_una;
        let mut partial = false;
        match self.cfg.variant {
            Variant::Newreno if self.in_recovery => {
                if ack >= self.recover.unwrap_or(0) {
                    // RFC 6582 3.2 step 3, full ACK: deflate to ssthresh and leave recovery.
                    self.cwnd = self.ssthresh;
                    self.in_recovery = false;
                    self.dupacks = 0;
                } else {
                    // Step 4/5, partial ACK: retransmit the next hole, deflate by the amount
                    // acknowledged, add back one segment, stay in recovery.
                    partial = true;
                }
            }
            _ if self.cfg.fast_recovery == FastRecovery::Ns2 => {
                // RenoTcpAgent::recv, any ACK above last_ack_: `dupwnd_ = 0` (newack zeroes
                // dupacks_); cwnd_ was halved, never inflated, so it stays.
                self.dupwnd = 0;
                self.dupacks = 0;
            }
            _ => {
                // Leaving fast recovery deflates the inflated window. 4.4BSD-Lite tcp_input:
                // `if (tp->t_dupacks > tcprexmtthresh && tp->snd_cwnd > tp->snd_ssthresh)
                // tp->snd_cwnd = tp->snd_ssthresh;`: after exactly `tcprexmtthresh` dupACKs cwnd
                // stays at ssthresh + 3 segments. RFC 5681 3.2 step 6 deflates on any ACK of new
                // data after the fast retransmit (`tcp.deflate_at_threshold`).
                let threshold = self.cfg.dupack_threshold;
                let deflate =
                    if self.cfg.deflate_at_threshold { self.dupacks >= threshold } else { self.dupacks > threshold };
                if deflate && self.cwnd > self.ssthresh {
                    self.cwnd = self.ssthresh;
                }
                self.dupacks = 0;
            }
        }
        self.emit(out, Action::NewAck { ack });
        self.sample_rtt(now, ack);
        self.snd_una = ack;
        self.snd_wnd = wnd;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        // Net/3: all data acknowledged stops the timer, otherwise it restarts. RFC 6582 3.2
        // step 3: of one fast recovery's partial ACKs only the first resets the timer.
        if !(partial && self.partial_acked) {
            self.rexmt_at = if ack == self.snd_max { None } else { Some(self.rto.deadline(now)) };
        }
        if partial {
            self.partial_acked = true;
            self.cwnd = self.cwnd.saturating_sub(acked) + if acked >= mss { mss } else { 0 };
            let onxt = self.snd_nxt;
            let cwnd = self.cwnd;
            self.snd_nxt = self.snd_una;
            self.cwnd = mss;
            self.output(now, out);
            self.cwnd = cwnd;
            self.snd_nxt = self.snd_nxt.max(onxt);
        } else {
            // Net/3: open cwnd by one segment per ACK in slow start (cwnd <= ssthresh), by
            // mss*mss/cwnd in congestion avoidance.
            let incr = if self.in_congestion_avoidance() { mss * mss / self.cwnd } else { mss };
            self.cwnd = (self.cwnd + incr).min(MAX_CWND);
        }
        self.output(now, out);
    }

    /// Whether it dropped the connection after its timeouts.
    pub fn gave_up(&self) -> bool {
        self.state == State::Dropped
    }

    /// Whether it has left its initial state (opened, answered a SYN or started established).
    pub fn started(&self) -> bool {
        self.state != State::Closed
    }

    /// The retransmission timer may have expired (Net/3 `tcp_timers`, `TCPT_REXMT`).
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Out>) {
        if self.persist_due(now) {
            self.on_persist_timer(now, out);
        }
        if self.today.is_some() && self.state == State::Established {
            self.on_timer_today(now, out);
            return self.check_persist(now);
        }
        match self.rexmt_at {
            Some(t) if t <= now => {}
            _ => return,
        }
        self.rexmt_at = None;
        if !self.rto.on_timeout() {
            self.state = State::Dropped;
            return;
        }
        self.timed = None;
        match self.state {
            State::SynSent => {
                self.stats.syn_timeouts += 1;
                self.rexmt_at = Some(self.rto.deadline(now));
                self.emit(out, Action::Syn);
            }
            State::SynRcvd => {
                self.stats.syn_timeouts += 1;
                self.rexmt_at = Some(self.rto.deadline(now));
                self.emit(out, Action::SynAck);
            }
            State::Established => {
                self.stats.timeouts += 1;
                // RenoTcpAgent::timeout: `dupwnd_ = 0` before TcpAgent::timeout halves the window.
                self.dupwnd = 0;
                let mss = self.cfg.mss;
                // RFC 5681 3.1, after eq. (4): "when a TCP sender detects segment loss using the
                // retransmission timer and the given segment has already been retransmitted by
                // way of the retransmission timer at least once, the value of ssthresh is held
                // constant". 4.4BSD's tcp_timers halves min(snd_wnd, cwnd) every time: down to
                // 2 segments after a second timeout of the same segment.
                let repeat = self.timed_out_seq == Some(self.snd_una);
                if !(repeat && self.cfg.repeat_timeout_holds_ssthresh) {
                    self.ssthresh = self.halved_window();
                }
                self.timed_out_seq = Some(self.snd_una);
                self.cwnd = mss;
                self.dupacks = 0;
                if self.cfg.recover_guard || self.cfg.variant == Variant::Newreno {
                    // RFC 6582 4: after a timeout, recover = the highest sequence sent.
                    self.recover = Some(self.snd_max);
                }
                self.in_recovery = false;
                self.emit(out, Action::Timeout { seq: self.snd_una });
                self.snd_nxt = self.snd_una;
                self.output(now, out);
            }
            State::Closed | State::Dropped => {}
        }
    }
}

#[cfg(test)]
mod restart_after_idle_tests {
    //! `Sender::write` after an idle connection (RFC 5681 Sec. 4.1): Linux `tcp_cwnd_restart` for
    //! today's stacks, Net/3's `t_idle >= t_rxtcur` for the others, worked by hand.
    use super::*;
    use crate::time::{Nanos, NANOS_PER_SEC};

    const MSS: u64 = 1460;

    fn idle_sender(tcp: &Tcp, cwnd_segments: u64, ssthresh_segments: u64) -> Sender {
        let mut s = Sender::new(SenderConfig::new(tcp, MSS, 1 << 30), 0, None, Rto::rfc6298(NANOS_PER_SEC));
        let mut out = Vec::new();
        s.establish(SimTime::ZERO, 1 << 30, &mut out);
        assert!(out.is_empty(), "nothing written, nothing sent");
        s.cwnd = cwnd_segments * MSS;
        s.ssthresh = ssthresh_segments * MSS;
        s
    }

    fn write_after(s: &mut Sender, idle: Nanos) {
        let now = SimTime(1000 * NANOS_PER_SEC);
        let from = SimTime(now.0 - idle);
        s.write(now, 5 * MSS, Idle { sent: from, heard: from }, &mut Vec::new());
    }

    fn linux() -> Tcp {
        let doc = crate::schema::schema().with_stack(serde_json::json!({}), "linux");
        crate::Scenario::from_value(doc).expect("the linux stack").tcp
    }

    #[test]
    fn linux_halves_cwnd_once_per_rto_of_idle_beyond_the_first_down_to_the_restart_window() {
        let tcp = linux();
        let rto = idle_sender(&tcp, 80, 10).rto.current();
        // 2.5 RTOs idle: delta = 1.5 RTO, then 0.5 RTO: two halvings, 80 -> 40 -> 20 segments;
        // ssthresh = max(10, 3/4 x 80) = 60 segments.
        let mut s = idle_sender(&tcp, 80, 10);
        write_after(&mut s, 5 * rto / 2);
        assert_eq!((s.cwnd / MSS, s.ssthresh / MSS), (20, 60));
        // Long idle: never below the restart window, min(IW 10, cwnd).
        let mut s = idle_sender(&tcp, 80, 10);
        write_after(&mut s, 100 * rto);
        assert_eq!(s.cwnd / MSS, 10);
        // Idle no longer than an RTO: untouched.
        let mut s = idle_sender(&tcp, 80, 10);
        write_after(&mut s, rto);
        assert_eq!((s.cwnd / MSS, s.ssthresh / MSS), (80, 10));
    }

    #[test]
    fn net3_restarts_from_one_segment_after_an_rto_of_silence() {
        let tcp = crate::Scenario::cohen_default().tcp;
        let rto = idle_sender(&tcp, 8, 4).rto.current();
        let mut s = idle_sender(&tcp, 8, 4);
        write_after(&mut s, rto);
        assert_eq!((s.cwnd / MSS, s.ssthresh / MSS), (1, 4));
        let mut s = idle_sender(&tcp, 8, 4);
        write_after(&mut s, rto - 1);
        assert_eq!(s.cwnd / MSS, 8);
    }
}
