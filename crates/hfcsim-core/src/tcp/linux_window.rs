//! Linux's receive window (`receiver.linux_window`), as Linux 6.18 (the emulator host's kernel) runs
//! it, read from the mainline sources and the 2024-25 patches that shaped it (the 50 % default ratio,
//! the clamp reset when `tcp_measure_rcv_mss` measures a new ratio, "tcp: clamp window like before the
//! cleanup"): net/ipv4/tcp_output.c `tcp_select_initial_window`, `__tcp_select_window`,
//! `tcp_select_window`;
//! net/ipv4/tcp_input.c `tcp_init_buffer_space`, `tcp_measure_rcv_mss`, `tcp_grow_window`,
//! `tcp_initialize_rcv_mss`; net/ipv4/tcp.c `tcp_set_window_clamp`; include/net/tcp.h
//! `tcp_win_from_space`, `tcp_space`, `tcp_full_space`; net/core/sock.c `__sock_set_rcvbuf`).
//!
//! Linux bounds the receiver's memory, not its payload:
//! - SO_RCVBUF of B gives `sk_rcvbuf` = 2B, at least SOCK_MIN_RCVBUF (`__sock_set_rcvbuf`), and locks it
//!   (SOCK_RCVBUF_LOCK: no autotuning, `tcp_rcv_space_adjust` and `tcp_clamp_window` leave it);
//! - memory becomes window by `tcp_win_from_space(space) = space * scaling_ratio >> 8`. The ratio
//!   starts at TCP_DEFAULT_SCALING_RATIO (128, half) and is measured at the first full-sized in-order
//!   segment as its payload over its truesize (`tcp_measure_rcv_mss`, when the length differs from
//!   `rcv_mss`); a new ratio resets `window_clamp` to `tcp_win_from_space(sk_rcvbuf)`
//!   (`tcp_set_window_clamp`: growing the clamp lifts `rcv_ssthresh` to `min(rcv_wnd, clamp)`);
//! - the first offer (SYN or SYN-ACK, `tcp_select_initial_window`) is the full space at ratio 128,
//!   rounded down to the MSS (less the timestamps option), at most 65,535; `window_clamp` is that space
//!   (the user locked the buffer), `rcv_ssthresh` the offer; the window scale is `ilog2(space) - 15`,
//!   0 to 14 (the space is the clamp: tcp_rmem[2] and rmem_max are at least the buffer, as `hfcsim
//!   emulate` sets tcp_rmem);
//! - at ESTABLISHED `tcp_init_buffer_space` reserves one segment: with tcp_app_win = 31 (the default)
//!   the clamp becomes `max(2 advmss, full space - advmss)` and `rcv_ssthresh` at most that;
//! - each in-order segment of at least 128 bytes grows `rcv_ssthresh` (`tcp_grow_window`, called by
//!   `tcp_event_data_recv` after the segment is queued): by `max(2 advmss, 2 len)`, at most `room =
//!   min(window_clamp, tcp_space) - rcv_ssthresh`, when `tcp_win_from_space(truesize) <= len` (else
//!   the halving test of `__tcp_grow_window`). With SACK, an out-of-order segment grows it too
//!   (`tcp_data_queue_ofo`), before its memory is charged: so after a loss the free space it sees is
//!   the whole buffer less the other held segments, and the offer can grow past what in-order data,
//!   itself queued when measured, ever allows. Without SACK it does not ("to force DUPACK");
//! - each ACK offers `__tcp_select_window`: the free space `tcp_space` (the buffer less the memory of
//!   everything queued, unread or out of order), at most `rcv_ssthresh`; without window scaling the
//!   last offer is kept while it is within one MSS below the free space, else the free space rounded
//!   down to the MSS; with scaling the free space aligned up to the scale's unit. Below half the
//!   full space it leaves quick-ACK mode, and below an MSS or 1/16 of the buffer it offers 0.
//!   `tcp_select_window` never moves the right edge back (`tcp_shrink_window` = 0), and the header
//!   carries at most 65,535 << scale.
//!
//! Not modelled, with the reason: memory pressure (`tcp_under_memory_pressure`: the host's TCP memory
//! is far from its limits); `tcp_clamp_window` and pruning (reached when the memory queued passes
//! `sk_rcvbuf`, which data inside the offered window cannot do: each segment of at most `mss` bytes
//! costs truesize, and the window is at most `sk_rcvbuf * ratio / 256` with ratio at most `mss * 256 /
//! truesize`); coalescing of queued segments (the TUN device's packets sit in kmalloc'd heads that
//! `skb_try_coalesce` cannot steal, and each is its own skb: the memory is truesize per segment);
//! `tcp_measure_rcv_mss`'s estimate from short segments (every segment here is full-sized but the
//! transfer's last, or a piece the persist timer sent into a small window); SO_RESERVE_MEM.

//!
//! Receive-buffer autotuning (`receiver.rcvbuf_autotuning`: the application set no SO_RCVBUF, so no
//! SOCK_RCVBUF_LOCK; Linux 6.18, net/ipv4/tcp_input.c after the 2025 series "tcp: receive side
//! improvements" and "tcp: fix too slow tcp_rcvbuf_grow() action", in 6.18-rc4):
//! - the socket starts with sk_rcvbuf = tcp_rmem[1] (`tcp_init_sock`), not doubled, and no clamp:
//!   `tcp_select_initial_window` offers the full space rounded down to the MSS, at most 65,535, and
//!   scales for the most the buffer may grow to, `ilog2(max(tcp_rmem[2], rmem_max)) - 15`; the clamp is
//!   65,535 << scale until `tcp_init_buffer_space` makes it the full space less a segment;
//! - the RTT the receiver sees (`tcp_rcv_rtt_measure`, from `tcp_event_data_recv`): the time for
//!   rcv_nxt to pass the right edge offered when the measure began (rcv_nxt + rcv_wnd), a sample that
//!   only ever lowers the estimate (`tcp_rcv_rtt_update` with win_dep: "always seek for minimal rtt");
//!   the first one sets it. The timestamp-based samples (`tcp_rcv_rtt_measure_ts`: the echo of this
//!   end's own timestamp in the data) are not modelled: the model's data segments carry no TSecr
//!   (chosen; the window's samples alone are Linux's rule without timestamps);
//! - dynamic right-sizing (`tcp_rcv_space_adjust`, at each read): once an estimated RTT has passed
//!   since the last measure, `copied` = the bytes read since, less those still queued; if more than
//!   `rcvq_space.space`, `tcp_rcvbuf_grow(copied)`: rcvwin = 2 copied ("DRS is always one RTT late"),
//!   plus 2 rcvwin (copied - space) / space ("slow start: allow the sender to double its rate"),
//!   plus the span held out of order; sk_rcvbuf = min(tcp_space_from_win(rcvwin), tcp_rmem[2]) if
//!   larger, and the clamp follows (`tcp_win_from_space` of it). `tcp_data_queue_ofo` calls it too,
//!   with the space unchanged: the out-of-order span alone. `rcvq_space.space` starts at
//!   min(rcv_ssthresh, rcv_wnd, TCP_INIT_CWND x advmss) (`tcp_init_buffer_space`), and a new
//!   scaling_ratio lowers it to the clamp (`tcp_measure_rcv_mss`).
//!
//! `__tcp_grow_window` reads tcp_rmem[2]: the cap here, the buffer itself when locked (as `hfcsim
//! emulate` sets tcp_rmem for a locked socket).

use crate::time::{Nanos, SimTime};

/// TCP_RMEM_TO_WIN_SCALE: scaling_ratio is a fraction of 256.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// TCP_DEFAULT_SCALING_RATIO: "Assume a 50% default for skb->len/skb->truesize ratio."
pub const DEFAULT_SCALING_RATIO: u64 = 1 << (RMEM_TO_WIN_SCALE - 1);
/// SOCK_MIN_RCVBUF = TCP_SKB_MIN_TRUESIZE = 2048 + SKB_DATA_ALIGN(sizeof(struct sk_buff)) (x86-64).
pub const SOCK_MIN_RCVBUF: u64 = 2048 + 256;
/// `__sock_set_rcvbuf`: the value is capped at INT_MAX / 2 before it is doubled.
const MAX_SOCKBUF: u64 = (i32::MAX as u64) / 2;
/// TCP_MSS_DEFAULT and TCP_MIN_MSS: `tcp_initialize_rcv_mss`'s bounds.
const MSS_DEFAULT: u64 = 536;
const MIN_MSS: u64 = 88;
/// TCP_MAX_WSCALE.
const MAX_WSCALE: u32 = 14;
/// sysctl tcp_app_win's default.
const APP_WIN: u32 = 31;
/// TCP_INIT_CWND: `tcp_init_buffer_space`'s first rcvq_space.space is at most this many segments.
const INIT_CWND: u64 = 10;
/// net.core.rmem_max's default (net/core/sock.c SK_RMEM_MAX: 212,992 on 64-bit), which
/// `tcp_select_initial_window` reads beside tcp_rmem[2] for the window scale.
pub const RMEM_MAX_DEFAULT: u64 = 212_992;

/// The receive buffer a socket has: locked by SO_RCVBUF (the value asked for), or autotuned from
/// tcp_rmem's default up to its maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcvBuf {
    Locked(u64),
    Auto { initial: u64, max: u64 },
}

impl RcvBuf {
    /// The receiver's rules' buffer: autotuned (`receiver.rcvbuf_autotuning`), else SO_RCVBUF of
    /// `so_rcvbuf` bytes.
    pub fn of(rules: &crate::scenario::Receiver, so_rcvbuf: u64) -> RcvBuf {
        if rules.rcvbuf_autotuning {
            RcvBuf::Auto { initial: rules.tcp_rmem_default_bytes as u64, max: rules.tcp_rmem_max_bytes as u64 }
        } else {
            RcvBuf::Locked(so_rcvbuf)
        }
    }
}

/// The state `tcp_sock` keeps for the window (field names as the kernel's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinuxWindow {
    /// sk_rcvbuf.
    pub rcvbuf: u64,
    /// The memory of one queued segment (`receiver.skb_truesize_bytes`).
    pub truesize: u64,
    /// The MSS this end announced (the MTU's, with the timestamps option inside).
    pub advmss: u64,
    /// scaling_ratio, of 256.
    pub ratio: u64,
    pub window_clamp: u64,
    pub rcv_ssthresh: u64,
    /// The last window chosen (tp->rcv_wnd).
    pub rcv_wnd: u64,
    /// icsk_ack.rcv_mss: the estimate of the peer's segment size.
    pub rcv_mss: u64,
    /// rx_opt.rcv_wscale.
    pub wscale: u32,
    /// SOCK_RCVBUF_LOCK: the application set SO_RCVBUF (no autotuning).
    pub locked: bool,
    /// tcp_rmem[2]: the most autotuning grows sk_rcvbuf to (the buffer itself when locked).
    pub rmem_max: u64,
    /// rcvq_space.space, .seq, .time: DRS's measure (module comment).
    pub rcvq_space: u64,
    rcvq_seq: u64,
    rcvq_time: Option<SimTime>,
    /// rcv_rtt_est.rtt_us (8 x the RTT the receiver estimates; 0: none yet), .seq and .time.
    pub rcv_rtt8: Nanos,
    rtt_seq: u64,
    rtt_time: Option<SimTime>,
}

impl LinuxWindow {
    /// A socket whose application asked for `so_rcvbuf` bytes (SO_RCVBUF), sending segments of `mss`
    /// payload bytes (its `mss_cache`: the MSS less the timestamps option) and announcing `advmss`;
    /// `scaling`: window scaling negotiated. The handshake's state: `tcp_select_initial_window` and
    /// `tcp_initialize_rcv_mss`.
    pub fn new(so_rcvbuf: u64, mss: u64, advmss: u64, truesize: u64, scaling: bool) -> LinuxWindow {
        LinuxWindow::with_buffer(RcvBuf::Locked(so_rcvbuf), mss, advmss, truesize, scaling)
    }

    /// As `new`, for a socket whose buffer is locked by SO_RCVBUF or autotuned (`RcvBuf`).
    pub fn with_buffer(buf: RcvBuf, mss: u64, advmss: u64, truesize: u64, scaling: bool) -> LinuxWindow {
        let mss = mss.max(1);
        let (rcvbuf, locked, rmem_max) = match buf {
            RcvBuf::Locked(so_rcvbuf) => {
                let rcvbuf = (2 * so_rcvbuf.min(MAX_SOCKBUF)).max(SOCK_MIN_RCVBUF);
                (rcvbuf, true, rcvbuf)
            }
            // tcp_init_sock: sk_rcvbuf = tcp_rmem[1].
            RcvBuf::Auto { initial, max } => (initial.max(1), false, max.max(1)),
        };
        let full = (rcvbuf * DEFAULT_SCALING_RATIO) >> RMEM_TO_WIN_SCALE;
        // tcp_openreq_init_rwin / tcp_connect_init: SOCK_RCVBUF_LOCK makes the clamp the full space;
        // without it there is none yet (65,535 << 14, then 65,535 << the scale).
        let mut window_clamp = if locked { full } else { 65_535 << MAX_WSCALE };
        let mut space = full;
        if space > mss {
            space = space / mss * mss; // "Quantize space offering to a multiple of mss if possible."
        }
        let rcv_wnd = space.min(65_535);
        // "Set window scaling on max possible window": max(space, tcp_rmem[2], rmem_max), at most the
        // clamp (locked: the full space; `hfcsim emulate` sets tcp_rmem[2] to the buffer).
        let scale_space = if locked { full } else { rmem_max.max(RMEM_MAX_DEFAULT).max(space) };
        let wscale = if scaling { (scale_space.max(1).ilog2().saturating_sub(15)).min(MAX_WSCALE) } else { 0 };
        window_clamp = window_clamp.min(65_535 << wscale);
        // tcp_initialize_rcv_mss: min(advmss, mss_cache, rcv_wnd / 2, TCP_MSS_DEFAULT), at least TCP_MIN_MSS.
        let rcv_mss = advmss.min(mss).min(rcv_wnd / 2).clamp(MIN_MSS, MSS_DEFAULT);
        LinuxWindow {
            rcvbuf,
            truesize: truesize.max(1),
            advmss: advmss.max(1),
            ratio: DEFAULT_SCALING_RATIO,
            window_clamp,
            rcv_ssthresh: rcv_wnd,
            rcv_wnd,
            rcv_mss,
            wscale,
            locked,
            rmem_max,
            rcvq_space: 0,
            rcvq_seq: 0,
            rcvq_time: None,
            rcv_rtt8: 0,
            rtt_seq: 0,
            rtt_time: None,
        }
    }

    /// The largest window this socket's memory allows: the full space of the most memory it can have
    /// (SO_RCVBUF's, or tcp_rmem[2] when autotuned) at its scaling_ratio (the header's field apart).
    pub fn most(&self) -> u64 {
        let mem = if self.locked { self.rcvbuf } else { self.rmem_max.max(self.rcvbuf) };
        (mem * self.ratio) >> RMEM_TO_WIN_SCALE
    }

    /// tcp_win_from_space (s64: negative space gives a negative window).
    fn win_from_space(&self, space: i64) -> i64 {
        (space * self.ratio as i64) >> RMEM_TO_WIN_SCALE
    }

    /// tcp_full_space.
    fn full_space(&self) -> i64 {
        self.win_from_space(self.rcvbuf as i64)
    }

    /// tcp_space with `queued` segments' memory charged (sk_rmem_alloc).
    fn space(&self, queued: u64) -> i64 {
        self.win_from_space(self.rcvbuf as i64 - (queued * self.truesize) as i64)
    }

    /// tcp_init_buffer_space (with SOCK_RCVBUF_LOCK and SOCK_SNDBUF_LOCK: no buffer expansion).
    pub fn init_buffer_space(&mut self) {
        let maxwin = self.full_space().max(0) as u64;
        let adv = self.advmss;
        if self.window_clamp >= maxwin {
            self.window_clamp = maxwin;
            if maxwin > 4 * adv {
                self.window_clamp = (maxwin - (maxwin >> APP_WIN)).max(4 * adv);
            }
        }
        // "Force reservation of one segment."
        if self.window_clamp > 2 * adv && self.window_clamp + adv > maxwin {
            self.window_clamp = (2 * adv).max(maxwin.saturating_sub(adv));
        }
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        // DRS's first measure: from here (nothing read yet), of min3(rcv_ssthresh, rcv_wnd,
        // TCP_INIT_CWND x advmss). Its clock starts at the first data (`data_arrives`).
        self.rcvq_space = self.rcv_ssthresh.min(self.rcv_wnd).min(INIT_CWND * adv);
        self.rcvq_seq = 0;
        self.rcvq_time = None;
    }

    /// A data segment arrived at `now`: the first starts DRS's clock. Linux starts it at ESTABLISHED
    /// (`tcp_init_buffer_space`), which is the first data's arrival for a passive receiver and a round
    /// trip before it for one that opened the connection (chosen: the receiver is handed no clock at
    /// the handshake; the measure's bytes count from 0 either way).
    pub fn data_arrives(&mut self, now: SimTime) {
        if self.rcvq_time.is_none() {
            self.rcvq_time = Some(now);
        }
    }

    /// tcp_rcv_rtt_measure (from tcp_event_data_recv) after in-order data took rcv_nxt to `rcv_nxt`.
    pub fn rcv_rtt_measure(&mut self, now: SimTime, rcv_nxt: u64) {
        if let Some(start) = self.rtt_time {
            if rcv_nxt < self.rtt_seq {
                return;
            }
            // tcp_rcv_rtt_update(tp, delta, 1): a window's sample only ever lowers the estimate.
            let m = (now - start).max(1) << 3;
            if self.rcv_rtt8 == 0 || m < self.rcv_rtt8 {
                self.rcv_rtt8 = m;
            }
        }
        self.rtt_seq = rcv_nxt + self.rcv_wnd;
        self.rtt_time = Some(now);
    }

    /// tcp_rcv_space_adjust at a read that took `copied_seq` to `copied_seq` with nothing left queued
    /// in order; `ooo_span`: the bytes from rcv_nxt to the end of the data held out of order (0: none).
    pub fn rcv_space_adjust(&mut self, now: SimTime, copied_seq: u64, ooo_span: u64) {
        let rtt = self.rcv_rtt8 >> 3;
        let since = self.rcvq_time.map_or(0, |t| now - t.min(now));
        if self.rcv_rtt8 == 0 || since < rtt {
            return;
        }
        let copied = copied_seq.saturating_sub(self.rcvq_seq);
        if copied > self.rcvq_space {
            self.rcvbuf_grow(copied, ooo_span);
        }
        self.rcvq_seq = copied_seq;
        self.rcvq_time = Some(now);
    }

    /// tcp_rcvbuf_grow(sk, newval) (module comment); tcp_data_queue_ofo passes rcvq_space.space.
    pub fn rcvbuf_grow(&mut self, newval: u64, ooo_span: u64) {
        let oldval = std::mem::replace(&mut self.rcvq_space, newval);
        if self.locked {
            return;
        }
        let mut rcvwin = newval << 1; // "DRS is always one RTT late."
        if oldval > 0 {
            // "slow start: allow the sender to double its rate."
            rcvwin += ((rcvwin as u128 * newval.saturating_sub(oldval) as u128 / oldval as u128) as u64) << 1;
        }
        rcvwin += ooo_span;
        // tcp_space_from_win: win << 8 / scaling_ratio.
        let rcvbuf = ((rcvwin << RMEM_TO_WIN_SCALE) / self.ratio).min(self.rmem_max);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = self.full_space().max(0) as u64; // "Make the window clamp follow along."
        }
    }

    /// tcp_measure_rcv_mss for an in-order segment of `len` bytes (the branch of a segment at least
    /// `rcv_mss` long; the estimate from shorter ones is not modelled).
    pub fn measure_rcv_mss(&mut self, len: u64) {
        if len < self.rcv_mss {
            return;
        }
        if len != self.rcv_mss {
            // do_div(len << 8, truesize), kept in a u8 ("val ? val : 1"): a truesize at or below the
            // payload, which no skb has, would pass 255; held there.
            let ratio = ((len << RMEM_TO_WIN_SCALE) / self.truesize).clamp(1, 255);
            if ratio != self.ratio {
                self.ratio = ratio;
                self.set_window_clamp(self.full_space().max(0) as u64);
                self.rcvq_space = self.rcvq_space.min(self.window_clamp);
            }
        }
        self.rcv_mss = len.min(self.advmss);
    }

    /// tcp_set_window_clamp (net/ipv4/tcp.c, as fixed in 2025: "tcp: clamp window like before the
    /// cleanup"): at least SOCK_MIN_RCVBUF / 2; a lower clamp lowers rcv_ssthresh to it, a higher
    /// one lifts it to min(rcv_wnd, clamp) if that is more.
    fn set_window_clamp(&mut self, val: u64) {
        let new = val.max(SOCK_MIN_RCVBUF / 2);
        if new == self.window_clamp {
            return;
        }
        let old = std::mem::replace(&mut self.window_clamp, new);
        if new < old {
            self.rcv_ssthresh = self.rcv_ssthresh.min(new); // __tcp_adjust_rcv_ssthresh, no reserved memory
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(new));
        }
    }

    /// tcp_grow_window for a segment of `len` bytes with `queued` segments' memory charged. True
    /// when rcv_ssthresh grew (the caller sets `icsk_ack.quick |= 1`).
    pub fn grow(&mut self, len: u64, queued: u64) -> bool {
        let room = (self.window_clamp as i64).min(self.space(queued)) - self.rcv_ssthresh as i64;
        if room <= 0 {
            return false;
        }
        // Check #2: a segment of this overhead will fit the buffer in future. (truesize_adjust only
        // concerns skbs with no linear part.)
        let incr = if self.win_from_space(self.truesize as i64) <= len as i64 {
            2 * self.advmss
        } else {
            self.grow_slowly(len)
        };
        if incr == 0 {
            return false;
        }
        self.rcv_ssthresh += (room as u64).min(incr.max(2 * len));
        true
    }

    /// __tcp_grow_window, with tcp_rmem[2] (the buffer itself when locked, as `hfcsim emulate` sets it).
    fn grow_slowly(&self, len: u64) -> u64 {
        let mut truesize = self.win_from_space(self.truesize as i64) >> 1;
        let mut window = self.win_from_space(self.rmem_max as i64) >> 1;
        while self.rcv_ssthresh as i64 <= window {
            if truesize <= len as i64 {
                return 2 * self.rcv_mss;
            }
            truesize >>= 1;
            window >>= 1;
        }
        0
    }

    /// __tcp_select_window with `queued` segments' memory charged: (the window, whether it left
    /// quick-ACK mode, `icsk_ack.quick = 0`).
    pub fn free_window(&self, queued: u64) -> (u64, bool) {
        let mut mss = self.rcv_mss as i64;
        let mut free = self.space(queued);
        let allowed = self.full_space();
        let full = (self.window_clamp as i64).min(allowed);
        if mss > full {
            mss = full;
            if mss <= 0 {
                return (0, false);
            }
        }
        let unit = 1i64 << self.wscale;
        let mut leave_quick = false;
        if free < full >> 1 {
            leave_quick = true;
            free = free.div_euclid(unit) * unit; // round_down to the scale's unit
            if free < allowed >> 4 || free < mss {
                return (0, true);
            }
        }
        free = free.min(self.rcv_ssthresh as i64);
        let window = if self.wscale > 0 {
            (free + unit - 1).div_euclid(unit) * unit // ALIGN: not scaled away
        } else {
            let kept = self.rcv_wnd as i64;
            if kept <= free - mss || kept > free {
                free.div_euclid(mss) * mss
            } else if mss == full && free > kept + (full >> 1) {
                free
            } else {
                kept
            }
        };
        (window.max(0) as u64, leave_quick)
    }

    /// tcp_select_window: the window chosen with `queued` segments charged, never less than
    /// `cur_win`, what is left of the last offer; it becomes `rcv_wnd`. Returns (the window from
    /// rcv_nxt, the header's value in bytes: at most 65,535 << scale, a multiple of the unit,
    /// whether quick-ACK mode was left).
    pub fn select(&mut self, queued: u64, cur_win: u64) -> (u64, u64, bool) {
        let (mut new, leave_quick) = self.free_window(queued);
        if new < cur_win {
            new = cur_win.div_ceil(1 << self.wscale) << self.wscale; // "Never shrink the offered window"
        }
        self.rcv_wnd = new;
        let field = (new.min(65_535 << self.wscale) >> self.wscale) << self.wscale;
        (new, field, leave_quick)
    }

    /// tcp_incr_quickack's count: rcv_wnd / (2 rcv_mss), 2 if that is 0, at most `max`.
    pub fn quickacks(&self, max: u64) -> u64 {
        match self.rcv_wnd / (2 * self.rcv_mss.max(1)) {
            0 => 2,
            n => n.min(max),
        }
    }

    /// The most any ACK offers: the full space at the larger of the default ratio and the one
    /// measured from segments of at most `mss` bytes, at least the clamp's floor, aligned to the
    /// scale's unit, within the header. The property tests' bound (`tests/receiver_window.rs`).
    pub fn bound(so_rcvbuf: u64, mss: u64, truesize: u64, wscale: u32) -> u64 {
        let rcvbuf = (2 * so_rcvbuf.min(MAX_SOCKBUF)).max(SOCK_MIN_RCVBUF);
        let ratio = ((mss << RMEM_TO_WIN_SCALE) / truesize.max(1)).clamp(1, 255).max(DEFAULT_SCALING_RATIO);
        let most = ((rcvbuf * ratio) >> RMEM_TO_WIN_SCALE).max(SOCK_MIN_RCVBUF / 2);
        (most.div_ceil(1 << wscale) << wscale).min(65_535 << wscale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_thousand_three_hundred_bytes_asked() {
        // cubic5: SO_RCVBUF 7,300 B, 1,448 B segments (1,460 less the timestamps), truesize 2,304.
        let mut w = LinuxWindow::new(7300, 1448, 1460, 2304, true);
        // sk_rcvbuf 14,600; full space at 128/256: 7,300 -> rounded to 5 x 1,448 = 7,240; scale
        // ilog2(7,300) - 15 < 0: 0.
        assert_eq!((w.rcvbuf, w.rcv_wnd, w.window_clamp, w.wscale, w.rcv_mss), (14_600, 7240, 7300, 0, 536));
        // One segment reserved: clamp max(2,920, 7,300 - 1,460) = 5,840, rcv_ssthresh with it.
        w.init_buffer_space();
        assert_eq!((w.window_clamp, w.rcv_ssthresh), (5840, 5840));
        // The first full segment: ratio 1,448 x 256 / 2,304 = 160; clamp 14,600 x 160 / 256 = 9,125;
        // rcv_ssthresh lifted to min(rcv_wnd 7,240, 9,125).
        w.measure_rcv_mss(1448);
        assert_eq!((w.ratio, w.window_clamp, w.rcv_ssthresh, w.rcv_mss), (160, 9125, 7240, 1448));
        // In order, itself queued: room min(9,125, (14,600 - 2,304) x 160 / 256 = 7,685) - 7,240 = 445.
        assert!(w.grow(1448, 1));
        assert_eq!(w.rcv_ssthresh, 7685);
        assert!(!w.grow(1448, 1)); // no room left in order
                                   // Out of order with SACK, before it is charged: room 9,125 - 7,685 = 1,440.
        assert!(w.grow(1448, 0));
        assert_eq!(w.rcv_ssthresh, 9125);
        // Nothing queued: free 9,125; the last offer 7,240 is more than an MSS below it: 6 x 1,448.
        w.rcv_wnd = 7240;
        assert_eq!(w.select(0, 0), (8688, 8688, false));
        // One queued: free 7,685, within an MSS above 8,688? No, below it: rounded down, 7,240, but
        // 8,688 - 1,448 = 7,240 is left of the offer, so 7,240 stands.
        assert_eq!(w.select(1, 7240), (7240, 7240, false));
        assert_eq!(LinuxWindow::bound(7300, 1448, 2304, 0), 9125);
    }

    #[test]
    fn an_unlocked_socket_starts_from_tcp_rmem_and_grows_by_drs() {
        const MS: Nanos = 1_000_000;
        // No SO_RCVBUF: sk_rcvbuf = tcp_rmem[1] = 131,072, not doubled; the full space at 128/256 is
        // 65,536, offered as 45 x 1,448 = 65,160; the scale is for tcp_rmem[2] = 32 MB: 25 - 15 = 10;
        // no clamp yet but the field's, 65,535 << 10.
        let auto = RcvBuf::Auto { initial: 131_072, max: 33_554_432 };
        let mut w = LinuxWindow::with_buffer(auto, 1448, 1460, 2304, true);
        assert_eq!((w.rcvbuf, w.rcv_wnd, w.wscale, w.window_clamp), (131_072, 65_160, 10, 65_535 << 10));
        // tcp_init_buffer_space: the clamp is the full space less a segment, max(2 x 1,460, 65,536 -
        // 1,460) = 64,076, rcv_ssthresh with it; DRS's first space min3(64,076, 65,160, 10 x 1,460).
        w.init_buffer_space();
        assert_eq!((w.window_clamp, w.rcv_ssthresh, w.rcvq_space), (64_076, 64_076, 14_600));
        // The first full segment: ratio 160, the clamp 131,072 x 160 / 256 = 81,920 lifts
        // rcv_ssthresh to min(rcv_wnd, clamp) = 65,160.
        w.data_arrives(SimTime::ZERO);
        w.measure_rcv_mss(1448);
        assert_eq!((w.ratio, w.window_clamp, w.rcv_ssthresh), (160, 81_920, 65_160));
        // tcp_rcv_rtt_measure: the first in-order data starts the measure (rcv_nxt + rcv_wnd =
        // 1,448 + 65,160); when rcv_nxt passes it, 50 ms later, that is the receiver's RTT.
        w.rcv_rtt_measure(SimTime::ZERO, 1448);
        w.rcv_rtt_measure(SimTime(50 * MS), 66_608);
        assert_eq!(w.rcv_rtt8, 8 * 50 * MS);
        // A later, longer window sample does not raise it (win_dep).
        w.rcv_rtt_measure(SimTime(200 * MS), 66_608 + 65_160);
        assert_eq!(w.rcv_rtt8, 8 * 50 * MS);
        // The read at 50 ms: an RTT since the measure began, 66,608 bytes read > 14,600:
        // tcp_rcvbuf_grow: rcvwin = 2 x 66,608 = 133,216, plus 2 x 133,216 x (66,608 - 14,600) /
        // 14,600 = 2 x 474,540: 1,082,296; sk_rcvbuf = 1,082,296 x 256 / 160 = 1,731,673, the clamp
        // 1,731,673 x 160 / 256 = 1,082,295.
        w.rcv_space_adjust(SimTime(50 * MS), 66_608, 0);
        assert_eq!((w.rcvbuf, w.window_clamp, w.rcvq_space), (1_731_673, 1_082_295, 66_608));
        // Within the next RTT nothing more is measured.
        w.rcv_space_adjust(SimTime(60 * MS), 300_000, 0);
        assert_eq!((w.rcvbuf, w.rcvq_space), (1_731_673, 66_608));
        // Never past tcp_rmem[2].
        w.rcv_space_adjust(SimTime(200 * MS), 40_000_000, 0);
        assert_eq!(w.rcvbuf, 33_554_432);
    }

    #[test]
    fn a_locked_socket_never_grows() {
        // SO_RCVBUF sets SOCK_RCVBUF_LOCK: tcp_rcvbuf_grow returns at once (rcvq_space is kept).
        let mut w = LinuxWindow::new(7300, 1448, 1460, 2304, true);
        w.init_buffer_space();
        w.data_arrives(SimTime::ZERO);
        w.rcv_rtt_measure(SimTime::ZERO, 1448);
        w.rcv_rtt_measure(SimTime(50_000_000), 1448 + 7240);
        w.rcv_space_adjust(SimTime(50_000_000), 100_000, 0);
        assert_eq!((w.rcvbuf, w.window_clamp, w.rcvq_space), (14_600, 5840, 100_000));
    }
}
