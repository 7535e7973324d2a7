//! The TCP data receiver: cumulative ACKs, out-of-order buffering and delayed ACK.
//!
//! Delayed ACK follows RFC 1122 4.2.3.2 as 4.4BSD implements it (Stevens vol. 2, 26.3, 27.6,
//! 28.4): in-order data sets a delayed-ACK flag that the host's 200 ms fast timer
//! (`tcp_fasttimo`, a global tick at fixed multiples from the host's phase) turns into an ACK,
//! so the delay is anywhere in 0-200 ms; an ACK goes out at once when the application has
//! consumed at least two maximum segments (or half the receive buffer) since the last ACK
//! (the window-update test of `tcp_output`), when a segment arrives out of order or duplicated,
//! and when a segment fills a gap. The application reads data as soon as it is in order, so the
//! advertised window is the whole (MSS-rounded) receive buffer.
//!
//! `AckRule::Freebsd` is FreeBSD 4.x's delayed ACK, which Nguyen & Armitage's receivers ran
//! (paper 003 Sec. III.B saw "one ACK packet per alternation of one and two data packets"):
//! - tcp_input's `DELAY_ACK(tp)` is true only while the delayed-ACK callout is *not* pending: the
//!   first in-order segment arms it (`callout_reset(tt_delack, tcp_delacktime)`, a delay from
//!   now, `delack_tick` here, 100 ms in FreeBSD 4), the next one is ACKed at once (TF_ACKNOW).
//!   That ACK goes out inside tcp_input, before the application has read the segment, so it
//!   advertises the buffer less that segment;
//! - the application (nttcp) then reads what is in order, and the read's `tcp_output` (PRU_RCVD)
//!   sends a window update when the window it could advertise has grown by at least two segments
//!   (or half the buffer) past the last one it advertised.
//!
//! Together: the ACK at the second segment leaves the right edge one segment short, so the third
//! segment's read opens it by two and is ACKed alone: ACKs after 2, 1, 2, 1 ... segments, d = 1.5.
//! Net/3 (`AckRule::Net3`) has no such callout test: its ACKs come from the window-update test
//! alone, after every second segment.
//!
//! `AckRule::Ns2` is ns-2.35's `DelAckSink::recv` (tcp/tcp-sink.cc), which counts packets, not
//! bytes: an in-order packet that leaves no gap above it, arriving while the delay timer is idle,
//! arms the timer for exactly `interval_` (`delay_timer_.resched(interval_)`, here `delack_tick`)
//! and is not ACKed; any other packet (the next in-order one, an out-of-order one, one that fills
//! a gap with data still missing above it (`RFC2581_immediate_ack_`), a duplicate of an older one)
//! cancels the timer and is ACKed at once; a second copy of the highest in-order packet is delayed
//! like the first. When the timer fires, the held ACK goes out. `SYN_immediate_ack_` (2010)
//! is off: with no SYN exchange, packet 0 is data.

//!
//! `AckRule::Linux` is Linux's (net/ipv4/tcp_input.c `tcp_event_data_recv`, `__tcp_ack_snd_check`,
//! `tcp_incr_quickack`; tcp_output.c `tcp_send_delayed_ack`), read from the kernel sources:
//! - quick-ACK mode: the first data segment sets `quick` = receive window / (2 MSS), at least 2,
//!   at most TCP_MAX_QUICKACKS = 16, and every ACK sent in the mode uses up the segments it
//!   acknowledges (`tcp_dec_quickack_mode`): the sender's slow start is not held up at the start.
//!   A gap in arrivals longer than the receiver's RTO, or a duplicate segment, re-enters it;
//! - otherwise an ACK once more than one full segment is unacknowledged (`rcv_nxt - rcv_wup >
//!   rcv_mss`), at once for out-of-order data and when a gap fills, or after `ato`;
//! - `ato` adapts to the arrival gap m: it starts at TCP_ATO_MIN (`delack_tick`, 40 ms); m <=
//!   ATO_MIN/2 gives ato/2 + ATO_MIN/2, m < ato gives ato/2 + m. The delayed ACK goes out `ato`
//!   after the arrival that scheduled it, or at an earlier pending deadline. Linux bounds it by
//!   the connection's srtt and TCP_DELACK_MAX (200 ms); this receiver measures no RTT (it sends
//!   no data), so only the 200 ms bound applies (a choice where the source needs an RTT we lack);
//! - with `ack_on_read` (`receiver.ack_on_read`), the application's read sends a window update at
//!   once (net/ipv4/tcp.c `__tcp_cleanup_rbuf`, called from `tcp_recvmsg` with the bytes copied):
//!   when no ACK is due otherwise, `rcv_window_now = tcp_receive_window(tp)` (what is left of the
//!   window last offered, rcv_adv - rcv_nxt), and `2 * rcv_window_now <= window_clamp` and
//!   `new_window = __tcp_select_window(sk)` is non-zero and `>= 2 * rcv_window_now` ("Lots" means
//!   "at least twice" here). The bulk receiver reads each in-order segment as it arrives, so the
//!   new window is the whole buffer, and window_clamp is the buffer too: the ACK leaves at once when
//!   what is left of the offer is at most half the buffer. Data is held only while at most one MSS
//!   of it is unacknowledged (every second segment), and each ACK offers the whole buffer, so what
//!   is left is at least the buffer less one MSS: the update fires for a buffer of at most two
//!   segments. In a larger one the read leaves more than half the offer (5 segments: 4 left,
//!   2 x 4 > 5) and the ACK waits as before;
//! - with `ack_on_push` (`receiver.ack_on_push`), a segment that sets ICSK_ACK_PUSHED is ACKed by the
//!   read that drains the queue (`__tcp_cleanup_rbuf`: an ACK scheduled, data copied, `pending &
//!   ICSK_ACK_PUSHED` and not ping-pong, and `sk_rmem_alloc` 0, so nothing held out of order either).
//!   `tcp_measure_rcv_mss` sets the flag for a segment shorter than the receive MSS and, since Linux
//!   6.6 ("tcp: fix delayed ACKs for MSS boundary condition", 2023), for a full-sized one with PSH,
//!   "likely the end of an application write". A Linux sender sets PSH every half of the largest
//!   window the peer offered (`forced_push` in `tcp_sendmsg_locked`; sim.rs `PushMarks`), so in a
//!   small window many an odd segment, otherwise held for ato, is ACKed at once. The flag lasts until
//!   an ACK is sent; the bulk reader reads every in-order segment as it comes, so it acts on the
//!   segment that set it or not at all.
//!
//! With `linux_window` (`receiver.linux_window`, the linux stack) the window each ACK offers is Linux's
//! (tcp/linux_window.rs): `receive_buffer` is then SO_RCVBUF, and the window follows the memory of what
//! is queued. Which data is queued when an ACK goes depends on who sends it. An ACK sent as the segment
//! arrives (softirq: quick-ACK mode, a filled gap, out-of-order data, more than one MSS unacknowledged
//! when the window it would offer is at least the last one, `__tcp_ack_snd_check`) counts the segment,
//! and the data it joined, as unread: the application is woken after. One sent by the read
//! (`tcp_cleanup_rbuf`: the pushed segment's, the window update, the >1 MSS ACK that the window test
//! deferred) or by the delayed-ACK timer finds everything in order read; data held out of order is
//! charged in every case. After a softirq ACK the read runs `tcp_cleanup_rbuf`'s window-update test
//! too (`ack_on_read`), so a gap filled with much data held is ACKed with what little window is left
//! and at once again with the window the read frees.
//!
//! SACK (RFC 2018): with `sack_blocks` > 0 every ACK carries up to that many blocks of the data
//! held out of order. Sec. 4: the first block holds the segment that triggered the ACK, the rest
//! are the most recently reported others; up to 4 are remembered (Linux TCP_NUM_SACKS). Linux
//! sends 3 when the timestamps option takes 12 of the 40 option bytes, 4 without.
//!
//! D-SACK (RFC 2883; `tcp.dsack`, Linux sysctl tcp_dsack = 1): a data segment that duplicates what
//! the receiver holds, wholly below rcv_nxt or wholly inside data held out of order, is reported in
//! the first block of the next ACK (Sec. 4: "the first SACK block ... MUST specify the contiguous
//! block of data that triggered the acknowledgement"), the SACK blocks after it, the one holding it
//! first (Sec. 4's second block). Linux keeps one such block (`duplicate_sack[0]`, `tcp_dsack_set`;
//! a second duplicate before the ACK replaces it) and writes it in the next segment sent only
//! (`tcp_options_write` clears `rx_opt.dsack`); it takes one of the blocks the option has room for.
//! Segments keep their boundaries here, so a duplicate never straddles rcv_nxt or a block edge
//! (`tcp_dsack_extend`'s partial cases do not arise).

use super::linux_window::{LinuxWindow, RcvBuf};
use super::rto::Rto;
use crate::scenario::EcnMode;
use crate::time::{Nanos, SimTime};

/// Which BSD's delayed-ACK code the receiver runs (module comment): the schema's `receiver.ack_rule`.
pub use crate::scenario::{AckRule, Receiver as ReceiverRules};

/// Linux TCP_MAX_QUICKACKS.
const MAX_QUICKACKS: u64 = 16;
/// Linux TCP_DELACK_MAX: 200 ms.
const DELACK_MAX: Nanos = 200_000_000;
/// Linux TCP_NUM_SACKS: SACK blocks remembered.
pub const MAX_SACK_BLOCKS: usize = 4;

/// The SACK blocks an ACK carries, most recent first (RFC 2018 Sec. 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub blocks: [(u64, u64); MAX_SACK_BLOCKS],
    pub n: u8,
}

impl SackBlocks {
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n as usize]
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    /// The scenario's receiver rules, each its own key (schema.toml's `receiver` section:
    /// `delayed_ack`, `ack_rule`, `ack_on_read`; `cfg.ack_rule` reads `cfg.rules.ack_rule`).
    pub rules: ReceiverRules,
    pub mss: u64,
    /// Receive socket buffer, rounded to whole segments (`tcp.buffer_rounding`; Net/3 `tcp_mss`); with
    /// `linux_window`, the SO_RCVBUF asked for, as given.
    pub receive_buffer: u64,
    /// Period and phase of the host's fast timer (Net/3); FreeBSD: the callout's delay.
    pub delack_tick: Nanos,
    pub delack_phase: Nanos,
    /// SACK blocks per ACK (RFC 2018); 0 = no SACK option.
    pub sack_blocks: u8,
    /// The largest window the header can advertise: 65,535 bytes, or 65,535 << 14 with window
    /// scaling (RFC 7323 2.3).
    pub max_window: u64,
}

impl std::ops::Deref for ReceiverConfig {
    type Target = ReceiverRules;
    fn deref(&self) -> &ReceiverRules {
        &self.rules
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    /// We sent the SYN (client opener) and wait for the SYN-ACK.
    SynSent,
    /// We answered a SYN; the first data segment completes the handshake.
    SynRcvd,
    Established,
    Dropped,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Syn,
    SynAck,
    /// A cumulative ACK (also the handshake's final ACK, which carries the request).
    /// The SACK blocks it carries are `Receiver::sack_blocks` when it is sent (the engine reads them
    /// as it turns the action into a packet, so that actions stay small).
    Ack {
        ack: u64,
        wnd: u64,
        /// ECN-Echo (RFC 3168 Sec. 6.1.3; DCTCP's feedback, RFC 8257 Sec. 3.2).
        ece: bool,
        /// Its first SACK block is the D-SACK `Receiver::sack_blocks(true)` puts there (RFC 2883).
        dsack: bool,
    },
}

#[derive(Clone, Debug)]
pub struct Receiver {
    pub cfg: ReceiverConfig,
    pub state: State,
    total: u64,
    pub rcv_nxt: u64,
    /// Out-of-order data, disjoint sorted half-open ranges above rcv_nxt.
    ooo: Vec<(u64, u64)>,
    /// In-order bytes consumed since the last ACK we sent.
    unacked: u64,
    /// The right edge of the window last advertised (rcv_adv).
    rcv_adv: u64,
    delack_at: Option<SimTime>,
    /// SYN retransmission when we opened the connection.
    rto: Rto,
    syn_rexmt_at: Option<SimTime>,
    /// Retransmission timeouts of its SYN (the client's active open; issue 26, defect 6).
    pub syn_timeouts: u64,
    pub first_data_at: Option<SimTime>,
    pub first_ack_at: Option<SimTime>,
    pub completed_at: Option<SimTime>,
    /// SACK blocks, most recently changed first (RFC 2018 Sec. 4).
    sacks: Vec<(u64, u64)>,
    /// Linux: ACKs left in quick-ACK mode (`icsk_ack.quick`), in segments.
    quick: u64,
    /// Linux: the delayed-ACK timeout (`icsk_ack.ato`); 0 before the first data.
    ato: Nanos,
    /// Linux: the last data arrival (`icsk_ack.lrcvtime`).
    last_arrival: SimTime,
    /// `tcp.ecn` at this end (`with_ecn`); off by default.
    pub ecn_mode: EcnMode,
    /// ECN negotiated (RFC 3168 Sec. 6.1.1).
    pub ecn_ok: bool,
    /// The ECE its ACKs carry: RFC 3168, set by a CE arrival until a CWR arrives; DCTCP, the CE
    /// state of the last data packet (RFC 8257 Sec. 3.2, DCTCP.CE).
    ece: bool,
    /// Data packets that arrived marked CE.
    pub ce_received: u64,
    /// `tcp.dsack` at this end (`with_dsack`); off by default.
    dsack_on: bool,
    /// A duplicate the next ACK reports (Linux `rx_opt.dsack`).
    dsack_pending: bool,
    /// The last duplicate reported (Linux `duplicate_sack[0]`): the D-SACK block of an ACK with
    /// `dsack` set.
    dsack_block: (u64, u64),
    /// D-SACK blocks sent.
    pub dsacks_sent: u64,
    /// `receiver.linux_window`: Linux's window state (`with_advmss` sets the MSS it announced).
    lw: Option<LinuxWindow>,
    /// Linux window: segments queued in order and not yet read (the application reads after the
    /// softirq's ACK decision).
    unread: u64,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig, total: u64, rto: Rto) -> Receiver {
        let lw = cfg.linux_window.then(|| linux_socket(&cfg, cfg.mss, cfg.mss));
        Receiver {
            cfg,
            state: State::Closed,
            total,
            rcv_nxt: 0,
            ooo: Vec::new(),
            unacked: 0,
            rcv_adv: 0,
            delack_at: None,
            rto,
            syn_rexmt_at: None,
            syn_timeouts: 0,
            first_data_at: None,
            first_ack_at: None,
            completed_at: None,
            sacks: Vec::new(),
            quick: 0,
            ato: 0,
            last_arrival: SimTime::ZERO,
            ecn_mode: EcnMode::Off,
            ecn_ok: false,
            ece: false,
            ce_received: 0,
            dsack_on: false,
            dsack_pending: false,
            dsack_block: (0, 0),
            dsacks_sent: 0,
            lw,
            unread: 0,
        }
    }

    /// The MSS this end announces (Linux advmss: the MTU's, with the timestamps option inside); the
    /// linux window's reservation and growth steps count it. Without it, the data segments' MSS.
    pub fn with_advmss(self, advmss: u64) -> Receiver {
        let mss = self.cfg.mss;
        self.with_own_mss(mss, advmss)
    }

    /// As `with_advmss`, with the receiver's own MSS (its `mss_cache`, the MTU's less the options),
    /// which its first window is quantised to (`tcp_select_initial_window`): Linux's does not depend
    /// on the buffer, whatever the segments that come (`cfg.mss`, which the peer's silly-window rules
    /// may make smaller).
    pub fn with_own_mss(mut self, own_mss: u64, advmss: u64) -> Receiver {
        if self.lw.is_some() {
            self.lw = Some(linux_socket(&self.cfg, own_mss, advmss));
        }
        self
    }

    /// Linux window's state, if the rule is on.
    pub fn linux_window(&self) -> Option<&LinuxWindow> {
        self.lw.as_ref()
    }

    /// What is left of the window last offered: its right edge less rcv_nxt.
    pub fn offered(&self) -> u64 {
        self.rcv_adv.saturating_sub(self.rcv_nxt)
    }

    /// Bytes of the transfer.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The window advertised with nothing unread: the buffer, within what the header can carry. With
    /// the linux window, the last window chosen (the SYN's: `tcp_select_initial_window`).
    pub fn window(&self) -> u64 {
        match &self.lw {
            Some(w) => w.rcv_wnd.min(65_535 << w.wscale).min(self.cfg.max_window),
            None => self.cfg.receive_buffer.min(self.cfg.max_window),
        }
    }

    pub fn next_deadline(&self) -> Option<SimTime> {
        match (self.delack_at, self.syn_rexmt_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether it dropped the connection after its timeouts.
    pub fn gave_up(&self) -> bool {
        self.state == State::Dropped
    }

    /// Whether it has left its initial state (opened, answered a SYN or started established).
    pub fn started(&self) -> bool {
        self.state != State::Closed
    }

    /// Active open by the receiving side (HTTP-style: the PC connects).
    pub fn connect(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.state = State::SynSent;
        self.syn_rexmt_at = Some(self.rto.deadline(now));
        out.push(Action::Syn);
    }

    /// This end's `tcp.dsack` (it acts with SACK blocks only, `cfg.sack_blocks` > 0).
    pub fn with_dsack(mut self, on: bool) -> Receiver {
        self.dsack_on = on;
        self
    }

    /// This end's `tcp.ecn`.
    pub fn with_ecn(mut self, mode: EcnMode) -> Receiver {
        self.ecn_mode = mode;
        self
    }

    /// The TCP flags of the SYN or SYN-ACK this end sends (as `Sender::handshake_flags`: RFC 3168
    /// Sec. 6.1.1).
    pub fn handshake_flags(&self, syn_ack: bool) -> u8 {
        super::ecn_setup_flags(self.ecn_mode, syn_ack, self.ecn_ok)
    }

    /// The peer's SYN or SYN-ACK arrived with `flags` (before `on_syn` / `on_syn_ack`).
    pub fn peer_handshake(&mut self, flags: u8, syn_ack: bool) {
        if matches!(self.state, State::Closed | State::SynSent) {
            self.ecn_ok = super::ecn_setup_agreed(self.ecn_mode, flags, syn_ack);
        }
    }

    /// A data packet's ECN: its IP field was CE (`ce`), its TCP header had CWR (`cwr`). Call before
    /// `on_data`, which sends the ACKs that carry the result.
    /// - RFC 3168 Sec. 6.1.3: CE sets ECE on every ACK until a packet with CWR arrives (a packet with
    ///   both sets it again). The ACKs' timing is unchanged (chosen: the RFC asks no immediate ACK;
    ///   Linux enters quick-ACK mode at the first CE).
    /// - DCTCP (RFC 8257 Sec. 3.2): ECE mirrors the CE state of the packets it acknowledges; when a
    ///   packet's CE state differs from the last one's and an ACK is held back (delayed ACK), that
    ///   ACK goes out at once with the old state, for the packets before this one.
    pub fn on_data_ecn(&mut self, now: SimTime, ce: bool, cwr: bool, out: &mut Vec<Action>) {
        if !self.ecn_ok || !matches!(self.state, State::SynRcvd | State::Established) {
            return;
        }
        if ce {
            self.ce_received += 1;
        }
        match self.ecn_mode {
            EcnMode::Off => {}
            EcnMode::Rfc3168 => {
                if cwr {
                    self.ece = false;
                }
                if ce {
                    self.ece = true;
                }
            }
            EcnMode::L4s => {
                if ce != self.ece {
                    if self.delack_at.is_some() {
                        self.ack_now(now, out);
                    }
                    self.ece = ce;
                }
            }
        }
    }

    /// The peer's application will write `bytes` more (`apps`: a persistent connection's next request
    /// or response): the transfer is complete again only once they have arrived too.
    pub fn expect(&mut self, bytes: u64) {
        self.total += bytes;
        if self.rcv_nxt < self.total {
            self.completed_at = None;
        }
    }

    /// Start established without a handshake: with no SYN to negotiate on, both ends simply agree
    /// on `tcp.ecn`.
    pub fn establish(&mut self) {
        self.ecn_ok = self.ecn_mode != EcnMode::Off;
        self.state = State::Established;
        self.rcv_adv = self.window();
        if let Some(w) = &mut self.lw {
            w.init_buffer_space();
        }
    }

    pub fn on_syn(&mut self, out: &mut Vec<Action>) {
        if matches!(self.state, State::Closed | State::SynRcvd) {
            self.state = State::SynRcvd;
            self.rcv_adv = self.window();
            out.push(Action::SynAck);
        }
    }

    pub fn on_syn_ack(&mut self, out: &mut Vec<Action>) {
        if matches!(self.state, State::SynSent | State::Established) {
            self.state = State::Established;
            self.syn_rexmt_at = None;
            // The final ACK of the handshake; the HTTP request rides on it.
            self.rcv_adv = self.window();
            if let Some(w) = &mut self.lw {
                // tcp_finish_connect -> tcp_init_transfer -> tcp_init_buffer_space; tcp_send_ack
                // chooses the window (the SYN's offer stands: it never shrinks).
                w.init_buffer_space();
                let wnd = self.linux_select_window();
                out.push(Action::Ack { ack: 0, wnd, ece: false, dsack: false });
                return;
            }
            out.push(Action::Ack { ack: 0, wnd: self.window(), ece: false, dsack: false });
        }
    }

    fn ack_now(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.ack_with_unread(now, 0, out);
    }

    /// An ACK now, advertising the buffer less `unread` bytes the application has not read yet.
    fn ack_with_unread(&mut self, now: SimTime, unread: u64, out: &mut Vec<Action>) {
        self.unacked = 0;
        self.delack_at = None;
        if self.first_data_at.is_some() && self.first_ack_at.is_none() {
            self.first_ack_at = Some(now);
        }
        let wnd = if self.lw.is_some() {
            self.linux_select_window()
        } else {
            let wnd = self.window().saturating_sub(unread);
            self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + wnd);
            wnd
        };
        // Linux tcp_options_write: the D-SACK goes in this segment only.
        let dsack = std::mem::take(&mut self.dsack_pending);
        self.dsacks_sent += u64::from(dsack);
        out.push(Action::Ack { ack: self.rcv_nxt, wnd, ece: self.ecn_ok && self.ece, dsack });
    }

    /// Linux's `tcp_select_window` for an ACK sent now, with `self.unread` segments unread and the
    /// out-of-order ones charged: the right edge moves to rcv_nxt + the window chosen.
    fn linux_select_window(&mut self) -> u64 {
        let queued = self.unread + self.ooo_segments();
        let cur_win = self.rcv_adv.saturating_sub(self.rcv_nxt); // tcp_receive_window
        let Some(w) = &mut self.lw else { return 0 };
        let (new, field, leave_quick) = w.select(queued, cur_win);
        if leave_quick {
            self.quick = 0;
        }
        self.rcv_adv = self.rcv_nxt + new;
        field.min(self.cfg.max_window)
    }

    /// `__tcp_select_window` now (it may leave quick-ACK mode, as the kernel's does).
    fn linux_free_window(&mut self) -> u64 {
        let queued = self.unread + self.ooo_segments();
        let Some(w) = &self.lw else { return 0 };
        let (window, leave_quick) = w.free_window(queued);
        if leave_quick {
            self.quick = 0;
        }
        window
    }

    /// Segments held out of order: each is its own skb (tcp/linux_window.rs), and every one but the
    /// transfer's last is full-sized.
    fn ooo_segments(&self) -> u64 {
        self.ooo.iter().map(|&(s, e)| (e - s).div_ceil(self.cfg.mss.max(1))).sum()
    }

    /// The SACK blocks an ACK sent now carries: up to `sack_blocks` of them, most recent first,
    /// after the D-SACK block if the ACK reports one (`Action::Ack`'s `dsack`; RFC 2883 Sec. 4).
    pub fn sack_blocks(&self, dsack: bool) -> SackBlocks {
        let mut sack = SackBlocks::default();
        let first = dsack.then_some(self.dsack_block);
        for (slot, block) in sack
            .blocks
            .iter_mut()
            .zip(first.into_iter().chain(self.sacks.iter().copied()))
            .take(self.cfg.sack_blocks as usize)
        {
            *slot = block;
            sack.n += 1;
        }
        sack
    }

    /// RFC 2883 Sec. 4 (Linux `tcp_dsack_set`, module comment): a segment `[seq, end)` the
    /// receiver already holds is the D-SACK of the next ACK. Call before it is queued.
    fn note_duplicate(&mut self, seq: u64, end: u64) {
        let held = end <= self.rcv_nxt || self.ooo.iter().any(|&(s, e)| s <= seq && end <= e);
        if held {
            self.dsack_pending = true;
            self.dsack_block = (seq, end);
        }
    }

    /// A window probe arrived (a segment of no data, tcp/sender/persist.rs): an ACK at once with the
    /// window offered now. Linux: the probe's sequence (snd_una - 1) is out of window, and
    /// `tcp_validate_incoming` answers with `tcp_send_dupack`, which for a segment of no data is a
    /// plain `tcp_send_ack` (no quick-ACK mode, no D-SACK). Net/3: a segment at a closed window's
    /// edge sets TF_ACKNOW (tcp_input, Stevens vol. 2, 28.8). Nothing else changes.
    pub fn on_window_probe(&mut self, out: &mut Vec<Action>) {
        if self.state == State::SynRcvd {
            // The probe acknowledges the SYN-ACK: the handshake completes (a window closed from the
            // start keeps the data, on which the model's final ACK rides, from doing it).
            self.state = State::Established;
            if let Some(w) = &mut self.lw {
                w.init_buffer_space();
            }
        }
        if self.state == State::Established {
            self.unacked = 0;
            self.delack_at = None;
            let wnd = if self.lw.is_some() {
                self.linux_select_window()
            } else {
                let wnd = self.window();
                self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + wnd);
                wnd
            };
            out.push(Action::Ack { ack: self.rcv_nxt, wnd, ece: self.ecn_ok && self.ece, dsack: false });
        }
    }

    /// A data segment `[seq, seq + len)` arrived, without PSH.
    pub fn on_data(&mut self, now: SimTime, seq: u64, len: u32, out: &mut Vec<Action>) {
        self.on_data_pushed(now, seq, len, false, out)
    }

    /// A data segment `[seq, seq + len)` arrived; `push`: its header had PSH.
    pub fn on_data_pushed(&mut self, now: SimTime, seq: u64, len: u32, push: bool, out: &mut Vec<Action>) {
        match self.state {
            State::SynRcvd => {
                // The handshake completes (tcp_rcv_state_process -> tcp_init_transfer).
                self.state = State::Established;
                if let Some(w) = &mut self.lw {
                    w.init_buffer_space();
                }
            }
            State::Established => {}
            _ => return,
        }
        if self.first_data_at.is_none() {
            self.first_data_at = Some(now);
        }
        let end = seq + len as u64;
        if self.dsack_on && self.cfg.sack_blocks > 0 {
            self.note_duplicate(seq, end);
        }
        if self.cfg.ack_rule == AckRule::Ns2 && self.cfg.delayed_ack {
            return self.ns2_data(now, seq, end, out);
        }
        // The linux window needs Linux's receive path (its measurements and growth) with delayed ACK
        // off too: there every segment is ACKed as in quick-ACK mode (TCP_QUICKACK).
        if self.cfg.ack_rule == AckRule::Linux && (self.cfg.delayed_ack || self.lw.is_some()) {
            // tcp_measure_rcv_mss sets ICSK_ACK_PUSHED for a full-sized segment with PSH (Linux >= 6.6)
            // and for one shorter than the MSS (module comment).
            let pushed = self.cfg.ack_on_push && (push || (len as u64) < self.cfg.mss);
            return self.linux_data(now, seq, end, pushed, out);
        }
        if end <= self.rcv_nxt {
            // Net/3 tcp_input: a completely duplicate segment is dropped and ACKed at once.
            return self.ack_now(now, out);
        }
        if seq > self.rcv_nxt {
            // Out of order: keep it and send an immediate (duplicate) ACK (RFC 1122 4.2.2.21,
            // RFC 5681 4.2).
            self.insert_ooo(seq, end);
            return self.ack_now(now, out);
        }
        let filled_gap = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        self.advance(now, end);
        let mss = self.cfg.mss;
        if self.cfg.ack_rule == AckRule::Freebsd && self.cfg.delayed_ack && !filled_gap {
            return self.freebsd_in_order(now, self.rcv_nxt - before, out);
        }
        if filled_gap || !self.cfg.delayed_ack {
            self.ack_now(now, out);
        } else if self.unacked >= 2 * mss || 2 * self.unacked >= self.cfg.receive_buffer {
            // RFC 1122 4.2.3.2: at least every second full-sized segment (Net/3 window update).
            self.ack_now(now, out);
        } else if self.delack_at.is_none() {
            // TF_DELACK: the next fast-timer tick sends the ACK.
            self.delack_at = Some(now.next_tick(self.cfg.delack_tick, self.cfg.delack_phase));
        }
    }

    /// ns-2.35 `DelAckSink::recv` (module comment).
    fn ns2_data(&mut self, now: SimTime, seq: u64, end: u64, out: &mut Vec<Action>) {
        // `th->seqno() == acker_->Seqno()` after `Acker::update`: the packet is (now) the highest
        // in-order one, and (RFC2581_immediate_ack_: `seqno < Maxseen()` ACKs at once) nothing
        // was seen above it. That includes a retransmitted copy of the highest in-order packet,
        // whose ACK is delayed like any other: only older duplicates are ACKed at once.
        let highest = if end <= self.rcv_nxt { end == self.rcv_nxt } else { seq == self.rcv_nxt };
        let delay = self.delack_at.is_none() && highest && self.ooo.is_empty();
        if end <= self.rcv_nxt {
            // A duplicate: Acker::update changes nothing.
        } else if seq > self.rcv_nxt {
            self.insert_ooo(seq, end);
        } else {
            self.advance(now, end);
        }
        if delay {
            // `save_ = pkt; delay_timer_.resched(interval_)`: exactly interval_ from now.
            self.delack_at = Some(now + self.cfg.delack_tick);
        } else {
            // `delay_timer_.cancel(); ack(pkt)`: the cumulative ACK (ack_now clears the timer).
            self.ack_now(now, out);
        }
    }

    /// Linux (module comment).
    fn linux_data(&mut self, now: SimTime, seq: u64, end: u64, pushed: bool, out: &mut Vec<Action>) {
        if let Some(w) = &mut self.lw {
            w.data_arrives(now);
            if seq <= self.rcv_nxt && end > self.rcv_nxt {
                // tcp_event_data_recv (in-order data) measures the segment first.
                w.measure_rcv_mss(end - seq);
            }
        }
        // tcp_event_data_recv: the delayed-ACK engine's clock.
        let ato_min = self.cfg.delack_tick;
        if self.ato == 0 {
            self.incr_quickack();
            self.ato = ato_min;
        } else {
            let m = now - self.last_arrival;
            if m <= ato_min / 2 {
                self.ato = self.ato / 2 + ato_min / 2;
            } else if m < self.ato {
                self.ato = (self.ato / 2 + m).min(DELACK_MAX);
            } else if m > self.rto.current() {
                // "Too long gap. Apparently sender failed to restart window."
                self.incr_quickack();
            }
        }
        self.last_arrival = now;
        if end <= self.rcv_nxt {
            // tcp_data_queue: "A retransmit ... Force an immediate ack" (tcp_enter_quickack_mode).
            self.incr_quickack();
            return self.linux_ack(now, out);
        }
        if seq > self.rcv_nxt {
            let held = self.ooo.iter().any(|&(s, e)| s <= seq && end <= e);
            if self.lw.is_some() && self.cfg.sack_blocks > 0 && !held {
                // tcp_data_queue_ofo: with SACK, tcp_grow_window before the segment's memory is
                // charged (a copy of held data is dropped first and grows nothing).
                let queued = self.ooo_segments();
                self.linux_grow(end - seq, queued);
            }
            // Out of order: __tcp_ack_snd_check ACKs at once while the out-of-order queue holds data.
            self.insert_ooo(seq, end);
            // tcp_data_queue_ofo ends with tcp_rcvbuf_grow(sk, rcvq_space.space): room for the span
            // held out of order (autotuning only).
            let span = self.ooo_span();
            if let Some(w) = &mut self.lw {
                w.rcvbuf_grow(w.rcvq_space, span);
            }
            return self.linux_ack(now, out);
        }
        let filled_gap = !self.ooo.is_empty();
        let held = if self.lw.is_some() { self.ooo_segments() } else { 0 };
        self.advance(now, end);
        if let Some(w) = &mut self.lw {
            // tcp_event_data_recv: tcp_rcv_rtt_measure, rcv_nxt moved.
            w.rcv_rtt_measure(now, self.rcv_nxt);
        }
        let mut rcv_mss = self.cfg.mss;
        if let Some(w) = &self.lw {
            rcv_mss = w.rcv_mss;
            // Queued: this segment, and what it joined moves to the receive queue; tcp_grow_window
            // sees all of it and the rest still held (tcp_event_data_recv, skb->len >= 128).
            if end - seq >= 128 {
                self.linux_grow(end - seq, 1 + held);
            }
            self.unread = (1 + held).saturating_sub(self.ooo_segments());
        }
        // __tcp_ack_snd_check: more than one full segment unacknowledged (with the linux window, and
        // the window it would offer now at least rcv_wnd: "tcp_recvmsg() will send ACK otherwise");
        // quick-ACK mode; a filled gap (ICSK_ACK_NOW, RFC 5681 4.2). The window test runs first, as
        // the kernel's, and may leave quick-ACK mode.
        let window_ok = self.unacked > rcv_mss
            && match self.lw.map(|w| w.rcv_wnd) {
                Some(rcv_wnd) => self.linux_free_window() >= rcv_wnd,
                None => true,
            };
        if window_ok || self.quick > 0 || filled_gap || !self.cfg.delayed_ack {
            self.linux_ack(now, out);
            if self.lw.is_some() {
                // The application reads; tcp_cleanup_rbuf's window update (module comment).
                self.unread = 0;
                self.linux_read(now);
                if self.cfg.ack_on_read && self.read_doubles_the_window() {
                    self.linux_ack(now, out);
                }
            }
            return;
        }
        // The application reads what arrived (the ACKs below are the read's or the timer's).
        self.unread = 0;
        self.linux_read(now);
        if self.unacked > rcv_mss {
            // Linux window only (else the ACK went above): the window test deferred it, and the read's
            // tcp_cleanup_rbuf sends it (rcv_nxt - rcv_wup > rcv_mss).
            self.linux_ack(now, out);
        } else if self.cfg.ack_on_read && self.read_doubles_the_window() {
            // The application reads the segment; tcp_cleanup_rbuf's window update goes now.
            self.linux_ack(now, out);
        } else if pushed && self.ooo.is_empty() {
            // tcp_cleanup_rbuf: an ACK is scheduled, the read copied data, ICSK_ACK_PUSHED is set
            // (not ping-pong: this end sends no data) and the read left nothing queued (sk_rmem_alloc,
            // which counts the out-of-order queue too, is 0): the ACK goes now.
            self.linux_ack(now, out);
        } else {
            // tcp_send_delayed_ack: ato from now, or the pending deadline if that is sooner.
            let at = now + self.ato.min(DELACK_MAX);
            self.delack_at = Some(self.delack_at.map_or(at, |t| t.min(at)));
        }
    }

    /// The application's read took everything in order: tcp_recvmsg's `tcp_rcv_space_adjust`, before
    /// `tcp_cleanup_rbuf`'s window update (receive-buffer autotuning, tcp/linux_window.rs).
    fn linux_read(&mut self, now: SimTime) {
        let span = self.ooo_span();
        if let Some(w) = &mut self.lw {
            w.rcv_space_adjust(now, self.rcv_nxt, span);
        }
    }

    /// The bytes from rcv_nxt to the end of the data held out of order (0: none held).
    fn ooo_span(&self) -> u64 {
        self.ooo.last().map_or(0, |&(_, e)| e - self.rcv_nxt)
    }

    /// Linux `__tcp_cleanup_rbuf` after a read that leaves nothing unread (module comment): the
    /// window it could now offer is at least twice what is left of the one offered.
    fn read_doubles_the_window(&mut self) -> bool {
        // tcp_receive_window: rcv_wup + rcv_wnd - rcv_nxt, at least 0.
        let offered_now = self.rcv_adv.saturating_sub(self.rcv_nxt);
        if let Some(clamp) = self.lw.map(|w| w.window_clamp) {
            // The linux window: its clamp, and __tcp_select_window with nothing unread.
            return 2 * offered_now <= clamp && {
                let new_window = self.linux_free_window();
                new_window > 0 && new_window >= 2 * offered_now
            };
        }
        // window_clamp: the buffer; __tcp_select_window with everything read: the whole buffer.
        let (clamp, new_window) = (self.window(), self.window());
        2 * offered_now <= clamp && new_window > 0 && new_window >= 2 * offered_now
    }

    /// An ACK now, in quick-ACK mode using up the segments it acknowledges (`tcp_dec_quickack_mode`).
    fn linux_ack(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let segments = self.unacked.div_ceil(self.cfg.mss).max(1);
        self.quick = self.quick.saturating_sub(segments);
        self.ack_now(now, out);
    }

    /// tcp_incr_quickack: window / (2 MSS) quick ACKs, at least 2, at most TCP_MAX_QUICKACKS.
    fn incr_quickack(&mut self) {
        let quick = match &self.lw {
            // Linux's own count: rcv_wnd / (2 rcv_mss), 2 only when that is 0.
            Some(w) => w.quickacks(MAX_QUICKACKS),
            None => (self.window() / (2 * self.cfg.mss)).clamp(2, MAX_QUICKACKS),
        };
        self.quick = self.quick.max(quick);
    }

    /// tcp_grow_window with `queued` segments' memory charged; growing sets `icsk_ack.quick |= 1`.
    fn linux_grow(&mut self, len: u64, queued: u64) {
        if let Some(w) = &mut self.lw {
            if w.grow(len, queued) {
                self.quick |= 1;
            }
        }
    }

    /// FreeBSD 4.x, in-order data of `arrived` bytes (module comment).
    fn freebsd_in_order(&mut self, now: SimTime, arrived: u64, out: &mut Vec<Action>) {
        if self.delack_at.is_some() {
            // tcp_input: DELAY_ACK(tp) is false while the callout is pending -> TF_ACKNOW; the
            // segment is in the socket buffer, not yet read.
            self.ack_with_unread(now, arrived, out);
        } else {
            // callout_reset(tp->tt_delack, tcp_delacktime, ...): a delay from now.
            self.delack_at = Some(now + self.cfg.delack_tick);
        }
        // The application reads it (sorwakeup), and the read's tcp_output tests the window
        // update: adv = what the window's right edge could move by.
        let buffer = self.cfg.receive_buffer;
        let adv = (self.rcv_nxt + buffer).saturating_sub(self.rcv_adv);
        if adv >= 2 * self.cfg.mss || 2 * adv >= buffer {
            self.ack_now(now, out);
        }
    }

    /// In-order data up to `end` arrived: rcv_nxt moves past it and any out-of-order data it
    /// joins up with.
    fn advance(&mut self, now: SimTime, end: u64) {
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            self.ooo.remove(0);
        }
        self.unacked += self.rcv_nxt - before;
        if !self.sacks.is_empty() {
            let rcv_nxt = self.rcv_nxt;
            self.sacks.retain(|&(_, e)| e > rcv_nxt);
        }
        if self.rcv_nxt >= self.total && self.completed_at.is_none() {
            self.completed_at = Some(now);
        }
    }

    fn insert_ooo(&mut self, seq: u64, end: u64) {
        let i = self.ooo.partition_point(|&(s, _)| s < seq);
        self.ooo.insert(i, (seq, end));
        // Merge overlapping or touching neighbours.
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.ooo.len());
        for &(s, e) in &self.ooo {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        self.ooo = merged;
        if self.cfg.sack_blocks > 0 {
            // RFC 2018 Sec. 4: the block holding the new segment goes first; the blocks it
            // absorbed go; the others keep their order; at most TCP_NUM_SACKS are remembered.
            let i = self.ooo.partition_point(|&(_, e)| e < end);
            let (s, e) = self.ooo[i];
            self.sacks.retain(|&(bs, be)| be < s || bs > e);
            self.sacks.insert(0, (s, e));
            self.sacks.truncate(MAX_SACK_BLOCKS);
        }
    }

    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if matches!(self.delack_at, Some(t) if t <= now) {
            self.ack_now(now, out);
        }
        if matches!(self.syn_rexmt_at, Some(t) if t <= now) {
            if self.rto.on_timeout() {
                self.syn_timeouts += 1;
                self.syn_rexmt_at = Some(self.rto.deadline(now));
                out.push(Action::Syn);
            } else {
                self.syn_rexmt_at = None;
                self.state = State::Dropped;
            }
        }
    }
}

/// The linux window's socket (`receiver.linux_window`): SO_RCVBUF locked, or autotuned
/// (`receiver.rcvbuf_autotuning`, tcp_rmem's default and maximum).
fn linux_socket(cfg: &ReceiverConfig, own_mss: u64, advmss: u64) -> LinuxWindow {
    let buf = RcvBuf::of(&cfg.rules, cfg.receive_buffer);
    LinuxWindow::with_buffer(buf, own_mss, advmss, cfg.skb_truesize_bytes as u64, cfg.max_window > 65_535)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn receiver(delayed_ack: bool) -> Receiver {
        let cfg = ReceiverConfig {
            rules: ReceiverRules {
                delayed_ack,
                ack_rule: AckRule::Net3,
                ack_on_read: false,
                ..crate::scenario::Scenario::cohen_default().receiver
            },
            mss: 1460,
            receive_buffer: 8760,
            delack_tick: 200 * MS,
            delack_phase: 50 * MS,
            sack_blocks: 0,
            max_window: u64::MAX,
        };
        let mut r = Receiver::new(cfg, 1_000_000, Rto::bsd(500 * MS, 0));
        r.establish();
        r
    }

    fn acks(out: &[Action]) -> Vec<u64> {
        out.iter()
            .filter_map(|a| match a {
                Action::Ack { ack, .. } => Some(*ack),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn delayed_ack_every_second_full_segment() {
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(10 * MS), 0, 1460, &mut out);
        assert!(acks(&out).is_empty());
        // the fast timer would fire at its next tick (phase 50 ms, period 200 ms)
        assert_eq!(r.next_deadline(), Some(SimTime(50 * MS)));
        r.on_data(SimTime(11 * MS), 1460, 1460, &mut out);
        assert_eq!(acks(&out), vec![2920]);
        assert_eq!(r.next_deadline(), None);
    }

    #[test]
    fn lone_segment_waits_for_the_fast_tick() {
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(60 * MS), 0, 1460, &mut out);
        let t = r.next_deadline().unwrap();
        assert_eq!(t, SimTime(250 * MS));
        r.on_timer(SimTime(249 * MS), &mut out);
        assert!(acks(&out).is_empty());
        r.on_timer(t, &mut out);
        assert_eq!(acks(&out), vec![1460]);
        assert_eq!(r.first_ack_at.unwrap() - r.first_data_at.unwrap(), 190 * MS);
    }

    #[test]
    fn small_header_plus_one_segment_is_not_two_full_segments() {
        // Cohen Sec. VI.A: HTTP header sent alone + one full segment -> the PC delays its ACK.
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(0), 0, 200, &mut out);
        r.on_data(SimTime(MS), 200, 1460, &mut out);
        assert!(acks(&out).is_empty());
        assert!(r.next_deadline().is_some());
    }

    #[test]
    fn out_of_order_and_gap_fill_are_acked_at_once() {
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(0), 1460, 1460, &mut out); // packet 2, packet 1 missing
        assert_eq!(acks(&out), vec![0]);
        r.on_data(SimTime(MS), 4380, 1460, &mut out); // packet 4
        assert_eq!(acks(&out), vec![0, 0]);
        r.on_data(SimTime(2 * MS), 0, 1460, &mut out); // packet 1 fills the first gap
        assert_eq!(acks(&out), vec![0, 0, 2920]);
        r.on_data(SimTime(3 * MS), 2920, 1460, &mut out); // packet 3 fills the second gap
        assert_eq!(acks(&out), vec![0, 0, 2920, 5840]);
    }

    #[test]
    fn duplicate_segment_is_acked_at_once() {
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(0), 0, 1460, &mut out);
        r.on_data(SimTime(1), 1460, 1460, &mut out);
        r.on_data(SimTime(2), 0, 1460, &mut out);
        assert_eq!(acks(&out), vec![2920, 2920]);
    }

    #[test]
    fn no_delayed_ack_acks_every_segment() {
        let mut r = receiver(false);
        let mut out = vec![];
        for i in 0..3 {
            r.on_data(SimTime(i), i * 1460, 1460, &mut out);
        }
        assert_eq!(acks(&out), vec![1460, 2920, 4380]);
    }

    fn freebsd() -> Receiver {
        let cfg = ReceiverConfig {
            rules: ReceiverRules {
                delayed_ack: true,
                ack_rule: AckRule::Freebsd,
                ack_on_read: false,
                ..crate::scenario::Scenario::cohen_default().receiver
            },
            mss: 1460,
            receive_buffer: 49_640, // 48 KB rounded up to 34 segments
            delack_tick: 100 * MS,
            delack_phase: 0,
            sack_blocks: 0,
            max_window: u64::MAX,
        };
        let mut r = Receiver::new(cfg, 1_000_000, Rto::bsd(500 * MS, 0));
        r.establish();
        r
    }

    #[test]
    fn freebsd_acks_after_two_then_one_segment() {
        // Nguyen & Armitage Sec. III.B: one ACK per alternation of one and two data packets.
        // Segments 1 ms apart. Segment 1 arms the callout; segment 2 finds it pending and is ACKed
        // at once, advertising 49 640 - 1460 (unread); its read opens the right edge by only one
        // segment. Segment 3 arms the callout, and its read opens the edge by two: a window update.
        let mut r = freebsd();
        let mut out = vec![];
        for i in 0..9u64 {
            r.on_data(SimTime(i * MS), i * 1460, 1460, &mut out);
        }
        let got: Vec<(u64, u64)> = out
            .iter()
            .map(|a| match a {
                Action::Ack { ack, wnd, .. } => (*ack / 1460, *wnd),
                _ => panic!("only ACKs"),
            })
            .collect();
        assert_eq!(got, vec![(2, 48_180), (3, 49_640), (5, 48_180), (6, 49_640), (8, 48_180), (9, 49_640)]);
        // Segment 10 arms the callout again: 100 ms after it, not on a global tick.
        r.on_data(SimTime(9 * MS), 9 * 1460, 1460, &mut out);
        assert_eq!(r.next_deadline(), Some(SimTime(109 * MS)));
    }

    #[test]
    fn freebsd_lone_segment_waits_for_its_callout() {
        let mut r = freebsd();
        let mut out = vec![];
        r.on_data(SimTime(7 * MS), 0, 1460, &mut out);
        assert!(out.is_empty());
        r.on_timer(SimTime(107 * MS), &mut out);
        assert_eq!(acks(&out), vec![1460]);
    }

    fn linux(sack_blocks: u8, buffer: u64) -> Receiver {
        let cfg = ReceiverConfig {
            rules: ReceiverRules {
                delayed_ack: true,
                ack_rule: AckRule::Linux,
                ack_on_read: false,
                ..crate::scenario::Scenario::cohen_default().receiver
            },
            mss: 1000,
            receive_buffer: buffer,
            delack_tick: 40 * MS,
            delack_phase: 0,
            sack_blocks,
            max_window: 65_535,
        };
        let mut r = Receiver::new(cfg, 1_000_000, Rto::linux(200 * MS, 1000 * MS));
        r.establish();
        r
    }

    /// Segment [seq, seq + 1000) arrives; the SACK blocks of the ACK it draws, if it draws one.
    fn data(r: &mut Receiver, seq: u64, out: &mut Vec<Action>) -> Option<Vec<(u64, u64)>> {
        let before = out.len();
        r.on_data(SimTime(MS), seq, 1000, out);
        (out.len() > before).then(|| r.sack_blocks(false).as_slice().to_vec())
    }

    #[test]
    fn sack_blocks_put_the_newest_first_and_merge() {
        // RFC 2018 Sec. 4 and its example in Sec. 5 (case 2 shape): segments of 1000 B; 0 arrives,
        // 1 is lost, then 2, 4 and 6 arrive out of order, then 3 joins 2 and 4.
        let mut r = linux(3, 20_000);
        let mut out = Vec::new();
        r.on_data(SimTime(0), 0, 1000, &mut out);
        let got: Vec<_> = [2000, 4000, 6000, 3000].iter().map(|&seq| data(&mut r, seq, &mut out)).collect();
        assert_eq!(
            got,
            vec![
                Some(vec![(2000, 3000)]),
                Some(vec![(4000, 5000), (2000, 3000)]),
                Some(vec![(6000, 7000), (4000, 5000), (2000, 3000)]),
                // 3 joins 2..5: the merged block goes first, the blocks it absorbed go.
                Some(vec![(2000, 5000), (6000, 7000)]),
            ]
        );
        // A fourth block: only 3 fit beside the timestamps; the oldest is not reported.
        data(&mut r, 8000, &mut out);
        let got = data(&mut r, 10_000, &mut out);
        assert_eq!(got, Some(vec![(10_000, 11_000), (8000, 9000), (2000, 5000)]));
        // Segment 1 fills the hole: the cumulative ACK passes 2..5, whose block goes.
        out.clear();
        let got = data(&mut r, 1000, &mut out);
        assert_eq!(acks(&out), vec![5000]);
        assert_eq!(got, Some(vec![(10_000, 11_000), (8000, 9000), (6000, 7000)]));
    }

    #[test]
    fn no_sack_option_without_sack() {
        let mut r = linux(0, 20_000);
        let mut out = Vec::new();
        assert_eq!(data(&mut r, 2000, &mut out), Some(vec![]));
    }

    #[test]
    fn linux_quick_acks_then_every_second_segment_then_ato() {
        // tcp_incr_quickack: window 8000 / (2 x 1000) = 4 quick ACKs. Segments every 1 ms.
        let mut r = linux(0, 8000);
        let mut out = Vec::new();
        for i in 0..8u64 {
            r.on_data(SimTime(i * MS), i * 1000, 1000, &mut out);
        }
        // Segments 1-4 ACKed one by one (quick-ACK mode), then after every second segment.
        assert_eq!(acks(&out), vec![1000, 2000, 3000, 4000, 6000, 8000]);
        // A lone segment: arrivals 1 ms apart made ato = ato/2 + 20 ms each time, from 40 ms:
        // 40 -> 40 -> ... stays 40 (40/2 + 20). The ACK waits ato from the arrival.
        out.clear();
        r.on_data(SimTime(8 * MS), 8000, 1000, &mut out);
        assert!(out.is_empty());
        assert_eq!(r.next_deadline(), Some(SimTime(48 * MS)));
        r.on_timer(SimTime(48 * MS), &mut out);
        assert_eq!(acks(&out), vec![9000]);
        // A gap longer than the receiver's RTO (1 s before any sample) re-enters quick-ACK mode.
        out.clear();
        r.on_data(SimTime(2000 * MS), 9000, 1000, &mut out);
        assert_eq!(acks(&out), vec![10_000]);
    }

    #[test]
    fn linux_ato_grows_with_the_arrival_gap() {
        // m < ato: ato = ato/2 + m. With the quick ACKs used up, a 30 ms gap: 40/2 + 30 = 50 ms;
        // then an 80 ms gap (m >= ato, below the RTO) leaves ato at 50 ms.
        let mut r = linux(0, 2000); // 2000 / 2000 = 1 -> at least 2 quick ACKs
        let mut out = Vec::new();
        r.on_data(SimTime(0), 0, 1000, &mut out);
        r.on_data(SimTime(MS), 1000, 1000, &mut out);
        assert_eq!(acks(&out), vec![1000, 2000]);
        r.on_data(SimTime(31 * MS), 2000, 1000, &mut out);
        assert_eq!(r.next_deadline(), Some(SimTime(31 * MS + 50 * MS)));
        r.on_timer(SimTime(81 * MS), &mut out);
        r.on_data(SimTime(111 * MS), 3000, 1000, &mut out);
        assert_eq!(r.next_deadline(), Some(SimTime(111 * MS + 50 * MS)));
    }

    const SEG: u64 = 1448; // 1460 less the timestamps option

    /// The linux rule with timestamps' MSS, a buffer of `segments` x 1448 B, 40 ms TCP_ATO_MIN.
    fn linux_reader(segments: u64, ack_on_read: bool) -> Receiver {
        let cfg = ReceiverConfig {
            rules: ReceiverRules {
                delayed_ack: true,
                ack_rule: AckRule::Linux,
                ack_on_read,
                ..crate::scenario::Scenario::cohen_default().receiver
            },
            mss: SEG,
            receive_buffer: segments * SEG,
            delack_tick: 40 * MS,
            delack_phase: 0,
            sack_blocks: 0,
            max_window: 65_535,
        };
        let mut r = Receiver::new(cfg, 1_000_000, Rto::linux(200 * MS, 1000 * MS));
        r.establish();
        r
    }

    /// Segments (number n is bytes [(n-1) x 1448, n x 1448)) arriving at the given milliseconds; the
    /// ACKs sent, as (ms, segments acknowledged, window), the delayed-ACK timer fired when due.
    fn script(r: &mut Receiver, arrivals: &[(u64, u64)], until_ms: u64) -> Vec<(u64, u64, u64)> {
        let mut acks = Vec::new();
        let mut record = |t: SimTime, out: &[Action]| {
            for a in out {
                if let Action::Ack { ack, wnd, .. } = *a {
                    acks.push((t.0 / MS, ack / SEG, wnd));
                }
            }
        };
        let timers = |r: &mut Receiver, upto: SimTime, record: &mut dyn FnMut(SimTime, &[Action])| {
            while let Some(t) = r.next_deadline().filter(|&t| t <= upto) {
                let mut out = vec![];
                r.on_timer(t, &mut out);
                record(t, &out);
            }
        };
        for &(ms, n) in arrivals {
            let t = SimTime(ms * MS);
            timers(r, t, &mut record);
            let mut out = vec![];
            r.on_data(t, (n - 1) * SEG, SEG as u32, &mut out);
            record(t, &out);
        }
        timers(r, SimTime(until_ms * MS), &mut record);
        acks
    }

    // A lone segment after the quick ACKs: segments 1 and 2 use up quick-ACK mode
    // (tcp_incr_quickack: window / (2 MSS), at least 2), and segment 3 comes alone 30 ms later.
    // ato: 40 ms at segment 1; segment 2 (1 ms gap <= ATO_MIN/2): 40/2 + 20 = 40 ms; segment 3
    // (29 ms gap, below ato): 40/2 + 29 = 49 ms, so the held ACK is due at 30 + 49 = 79 ms.
    const LONE_THIRD: [(u64, u64); 3] = [(0, 1), (1, 2), (30, 3)];

    #[test]
    fn linux_read_sends_the_window_update_at_once_in_a_two_segment_buffer() {
        // tcp_cleanup_rbuf: the ACK for segment 2 offered up to segment 4; segment 3 leaves one
        // segment of it (rcv_window_now = 1448), at most half the clamp (2 x 1448 <= 2896), and the
        // read frees the whole buffer: new_window 2896 >= 2 x 1448. The update leaves at 30 ms.
        let mut r = linux_reader(2, true);
        let got = script(&mut r, &LONE_THIRD, 200);
        assert_eq!(got, vec![(0, 1, 2 * SEG), (1, 2, 2 * SEG), (30, 3, 2 * SEG)]);
    }

    #[test]
    fn without_ack_on_read_the_lone_segment_waits_for_the_timer() {
        // The key off (the 1990s stacks, and the linux rule before it): segment 3 waits for ato.
        let mut r = linux_reader(2, false);
        let got = script(&mut r, &LONE_THIRD, 200);
        assert_eq!(got, vec![(0, 1, 2 * SEG), (1, 2, 2 * SEG), (79, 3, 2 * SEG)]);
    }

    #[test]
    fn linux_read_does_not_double_a_five_segment_window() {
        // 5 x 1448 B: segments 1, 2 quick-ACKed (7240 / 2896 = 2 quick ACKs); segment 3 leaves 4
        // of the 5 segments offered, 2 x 4 > 5: no window update, the ACK waits for ato (79 ms)
        // with the key on as off. So does every odd segment of a steady 5-segment window: the ACK
        // of the segment before it offered 5, and one segment leaves 4.
        for ack_on_read in [false, true] {
            let mut r = linux_reader(5, ack_on_read);
            let got = script(&mut r, &LONE_THIRD, 200);
            assert_eq!(got, vec![(0, 1, 5 * SEG), (1, 2, 5 * SEG), (79, 3, 5 * SEG)], "ack_on_read {ack_on_read}");
        }
    }

    #[test]
    fn linux_window_limited_pairs_with_a_two_segment_buffer() {
        // The window-limited sender of a 2-segment buffer: each ACK releases a pair, one round trip
        // (20 ms) later, 1 ms apart. Without the key the first of each pair is held until the second
        // (every second segment); with it each is ACKed as it is read, 1 ms sooner.
        let arrivals = [(0, 1), (1, 2), (21, 3), (22, 4), (42, 5), (43, 6)];
        let off = script(&mut linux_reader(2, false), &arrivals, 300);
        assert_eq!(off, vec![(0, 1, 2 * SEG), (1, 2, 2 * SEG), (22, 4, 2 * SEG), (43, 6, 2 * SEG)]);
        let on = script(&mut linux_reader(2, true), &arrivals, 300);
        let each: Vec<_> = arrivals.iter().map(|&(ms, n)| (ms, n, 2 * SEG)).collect();
        assert_eq!(on, each);
    }

    #[test]
    fn linux_read_acks_a_pushed_full_segment_at_once() {
        // 5 x 1448 B, LONE_THIRD: segment 3 is held for ato (79 ms) unless it carries PSH and
        // receiver.ack_on_push is on (tcp_measure_rcv_mss sets ICSK_ACK_PUSHED for a full-sized
        // segment with PSH; tcp_cleanup_rbuf's read drains the queue and sends the ACK at 30 ms).
        for (ack_on_push, psh, due) in [(true, true, 30), (true, false, 79), (false, true, 79)] {
            let mut r = linux_reader(5, false);
            r.cfg.rules.ack_on_push = ack_on_push;
            let mut acks = Vec::new();
            for (ms, n) in LONE_THIRD {
                let mut out = vec![];
                r.on_data_pushed(SimTime(ms * MS), (n - 1) * SEG, SEG as u32, psh && n == 3, &mut out);
                acks.extend(out.iter().map(|_| ms));
            }
            if let Some(t) = r.next_deadline() {
                let mut out = vec![];
                r.on_timer(t, &mut out);
                acks.extend(out.iter().map(|_| t.0 / MS));
            }
            assert_eq!(acks, vec![0, 1, due], "ack_on_push {ack_on_push}, PSH {psh}");
        }
    }

    #[test]
    fn linux_read_acks_a_short_segment_at_once() {
        // A segment shorter than the MSS sets ICSK_ACK_PUSHED with or without PSH (the transfer's
        // last): segment 3 of 1000 B is ACKed at 30 ms, not held for ato.
        let mut r = linux_reader(5, false);
        r.cfg.rules.ack_on_push = true;
        let mut times = Vec::new();
        for (ms, seq, len) in [(0, 0, SEG), (1, SEG, SEG), (30, 2 * SEG, 1000)] {
            let mut out = vec![];
            r.on_data_pushed(SimTime(ms * MS), seq, len as u32, false, &mut out);
            times.extend(out.iter().map(|_| ms));
        }
        assert_eq!(times, vec![0, 1, 30]);
    }

    #[test]
    fn the_window_is_clamped_to_what_the_header_carries() {
        let r = linux(0, 1 << 20);
        assert_eq!(r.window(), 65_535); // no window scaling
    }
}
