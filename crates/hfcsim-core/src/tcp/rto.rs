//! Retransmission-timeout estimators.
//!
//! `Bsd` is the 4.4BSD (Net/3) coarse timer of Stevens, TCP/IP Illustrated vol. 2, ch. 25:
//! a slow clock ticks every `tick` (500 ms; `PR_SLOWHZ` = 2) at fixed multiples from the host's
//! boot phase; RTT is measured in ticks on one timed segment at a time; srtt is kept scaled by
//! 8 and rttvar by 4 (`tcp_xmit_timer`); RTO = srtt + 4 rttvar clamped to [2 ticks, 64 s]
//! (`TCPT_RANGESET` with `t_rttmin`, `TCPTV_REXMTMAX`); exponential back-off by
//! `tcp_backoff[]`; the connection is dropped after 12 retransmissions (`TCP_MAXRXTSHIFT`).
//!
//! `Rfc6298` is a fine-grained estimator per RFC 6298 with a minimum RTO.
//!
//! `Ns2` is ns-2.35's `TcpAgent` timer (tcp/tcp.cc) with `ts_option_` off, `rttvar_exp_` 2,
//! `rfc2988_` true and `minrto_` 0: RTT samples are counted in ticks of `tcp_tick_` from a
//! per-agent `boot_time_` phase (`rtt_update`); srtt is kept in 1/8 ticks and rttvar in 1/4;
//! `t_rtxcur_` = srtt + 4 rttvar ticks, 3 s (`rtxcur_init_`) before any sample; the timeout is
//! `t_rtxcur_ * t_backoff_`, at most `maxrto_` (60 s) and at least 2 ticks (`rtt_timeout`), and the
//! timer fires exactly that long after it is armed (`set_rtx_timer`: `resched(rtt_timeout())`),
//! not on a tick. ns-2 never gives up on a connection.

use crate::time::{Nanos, SimTime, NANOS_PER_SEC};

/// Net/3 `TCP_MAXRXTSHIFT`: give up after this many consecutive timeouts.
pub const MAX_RXT_SHIFT: u32 = 12;
/// Net/3 `tcp_backoff[]`.
const BSD_BACKOFF: [i64; 13] = [1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64];
/// Net/3 `TCPTV_SRTTDFLT`: 3 s assumed RTT before any measurement.
const SRTT_DEFAULT_NS: Nanos = 3 * NANOS_PER_SEC;
/// Net/3 `TCPTV_REXMTMAX`: 64 s.
const REXMT_MAX_NS: Nanos = 64 * NANOS_PER_SEC;
/// Net/3 `TCPTV_MIN` (tcp_timer.h: `1*PR_SLOWHZ`, one second of slow ticks): 2 ticks at 500 ms.
/// `t_rttmin` starts at it (tcp_newtcpcb). A kernel whose tick is not 500 ms has a minimum of its
/// own (`tcp.min_rto_ticks`).
pub const RTT_MIN_TICKS: i64 = 2;
/// RFC 6298 (2.1): 1 s before the first measurement; (2.5) an upper bound of at least 60 s.
const RFC_INITIAL_RTO_NS: Nanos = NANOS_PER_SEC;
const RFC_MAX_RTO_NS: Nanos = 64 * NANOS_PER_SEC;
/// ns-default.tcl: `Agent/TCP set rtxcur_init_ 3.0`.
const NS2_INITIAL_RTO_NS: Nanos = 3 * NANOS_PER_SEC;
/// ns-default.tcl: `Agent/TCP set maxrto_ 60`.
const NS2_MAX_RTO_NS: Nanos = 60 * NANOS_PER_SEC;

/// The fixed-point smoothing of Net/3's `tcp_xmit_timer` and ns-2's `rtt_update`: srtt in 1/8
/// and rttvar in 1/4 ticks, gains 1/8 and 1/4, each floored at 1. The first sample sets srtt = rtt
/// and rttvar = rtt / 2 (so the first RTO is 3 rtt); later ones count from `origin` (Net/3: 1).
fn smooth(srtt: &mut i64, rttvar: &mut i64, rtt: i64, origin: i64) {
    if *srtt != 0 {
        // srtt += (rtt - srtt) / 8 in fixed point.
        let mut delta = rtt - origin - (*srtt >> 3);
        *srtt = (*srtt + delta).max(1);
        // rttvar += (|delta| - rttvar) / 4.
        delta = delta.abs() - (*rttvar >> 2);
        *rttvar = (*rttvar + delta).max(1);
    } else {
        *srtt = rtt << 3;
        *rttvar = rtt << 1;
    }
}

#[derive(Clone, Debug)]
pub struct BsdRto {
    pub tick: Nanos,
    pub phase: Nanos,
    /// `t_srtt`: ticks, scaled by 8 (`TCP_RTT_SHIFT` = 3); 0 = no estimate.
    pub srtt: i64,
    /// `t_rttvar`: ticks, scaled by 4 (`TCP_RTTVAR_SHIFT` = 2).
    pub rttvar: i64,
    /// `t_rxtcur`: the current timeout, ticks.
    pub rxtcur: i64,
    /// `t_rxtshift`: consecutive timeouts.
    pub rxtshift: u32,
    /// `t_rttmin`: the least RTO, ticks.
    pub min_ticks: i64,
    max_ticks: i64,
}

impl BsdRto {
    /// As `tcp_newtcpcb`: srtt 0, rttvar from the 3 s default, first RTO 6 s; `t_rttmin` =
    /// TCPTV_MIN, 2 ticks.
    pub fn new(tick: Nanos, phase: Nanos) -> BsdRto {
        BsdRto::with_min(tick, phase, RTT_MIN_TICKS)
    }

    /// As `new`, with `t_rttmin` = `min_ticks`. The range is never empty: a minimum above
    /// TCPTV_REXMTMAX raises the maximum to it.
    pub fn with_min(tick: Nanos, phase: Nanos, min_ticks: i64) -> BsdRto {
        let dflt = (SRTT_DEFAULT_NS / tick) as i64;
        let min_ticks = min_ticks.max(1);
        let max_ticks = ((REXMT_MAX_NS / tick) as i64).max(min_ticks);
        let rxtcur = ((dflt << 2) >> 1).clamp(min_ticks, max_ticks);
        BsdRto { tick, phase, srtt: 0, rttvar: dflt << 2, rxtcur, rxtshift: 0, min_ticks, max_ticks }
    }

    /// Net/3 `TCP_REXMTVAL`: srtt + 4 * rttvar, in ticks.
    pub fn rexmtval(&self) -> i64 {
        (self.srtt >> 3) + self.rttvar
    }

    /// Net/3 `tcp_xmit_timer(tp, rtt)` with `rtt` = `t_rtt`, counted from 1.
    pub fn sample_ticks(&mut self, rtt: i64) {
        // "Adjust rtt to origin 0" for all but the first sample.
        smooth(&mut self.srtt, &mut self.rttvar, rtt, 1);
        self.rxtshift = 0;
        self.rxtcur = self.rexmtval().clamp(self.min_ticks, self.max_ticks);
    }
}

#[derive(Clone, Debug)]
pub struct RfcRto {
    pub min_rto: Nanos,
    /// RFC 6298 (2.5): "a maximum value MAY be placed on RTO provided it is at least 60 seconds":
    /// 64 s as Net/3's TCPTV_REXMTMAX, or the minimum if a scenario sets that higher.
    pub max_rto: Nanos,
    pub srtt: Option<Nanos>,
    pub rttvar: Nanos,
    pub rto: Nanos,
    pub backoffs: u32,
}

/// ns-2.35 `TcpAgent`'s retransmission timer (module comment).
#[derive(Clone, Debug)]
pub struct Ns2Rto {
    /// `tcp_tick_`.
    pub tick: Nanos,
    /// Where the agent's ticks fall: ns-2 counts a tick when `t + boot_time_` crosses a multiple of
    /// `tcp_tick_`, i.e. at `k * tick - boot_time_`; `phase` is that instant modulo the tick.
    pub phase: Nanos,
    /// `t_srtt_`: ticks, scaled by 8 (`T_SRTT_BITS` = 3); 0 = no estimate.
    pub srtt: i64,
    /// `t_rttvar_`: ticks, scaled by 4 (`T_RTTVAR_BITS` = 2).
    pub rttvar: i64,
    /// `t_rtxcur_`, ns.
    pub rtxcur: Nanos,
    /// `t_backoff_`: 1, 2, 4, ...
    pub backoff: u64,
}

impl Ns2Rto {
    /// `TcpAgent::rtt_init`: srtt 0 (`srtt_init_` 0), `t_rtxcur_ = rtxcur_init_`, backoff 1.
    /// (`t_rttvar_` from `rttvar_init_` is overwritten by the first sample before it is read.)
    pub fn new(tick: Nanos, phase: Nanos, initial: Nanos) -> Ns2Rto {
        Ns2Rto { tick, phase, srtt: 0, rttvar: 0, rtxcur: initial, backoff: 1 }
    }

    /// `TcpAgent::rtt_update` with `t_rtt_` = `rtt` ticks (at least 1).
    pub fn sample_ticks(&mut self, rtt: i64) {
        // No "origin 0" adjustment here, unlike Net/3's tcp_xmit_timer.
        smooth(&mut self.srtt, &mut self.rttvar, rtt.max(1), 0);
        // t_rtxcur_ = (((t_rttvar_ << (rttvar_exp_ + (T_SRTT_BITS - T_RTTVAR_BITS))) + t_srtt_)
        //              >> T_SRTT_BITS) * tcp_tick_: the sum is floored once, in 1/8 ticks.
        self.rtxcur = (((self.rttvar << 3) + self.srtt) >> 3) as Nanos * self.tick;
    }

    /// `TcpAgent::rtt_timeout`: t_rtxcur_ * t_backoff_, at most maxrto_, at least 2 ticks.
    pub fn timeout(&self) -> Nanos {
        self.rtxcur.saturating_mul(self.backoff).min(NS2_MAX_RTO_NS).max(2 * self.tick)
    }
}

/// Linux's RTO (net/ipv4/tcp_input.c `tcp_rtt_estimator`, `__tcp_set_rto`; tcp_timer.c), read
/// from the kernel sources. RTO = srtt + rttvar, where `rttvar` is not RFC 6298's 4 x RTTVAR but
/// the largest `mdev` (4 x the mean deviation) seen in the last round trip, never below the
/// minimum RTO: so the minimum (TCP_RTO_MIN, 200 ms) is a floor on the variance term, not on the
/// RTO, which is at least srtt + 200 ms. Differences from RFC 6298 (2.3):
/// - a sample below srtt moves mdev with gain 1/32 instead of 1/4 (Linux's Eifel-like damping);
/// - `rttvar` rises at once to a larger mdev but decays towards the round trip's largest mdev by
///   a quarter of the difference once per round trip (when snd_una passes `rtt_seq`, the snd_nxt
///   of the last decay);
/// - the first sample sets mdev = 2 x RTT, so RTO = 3 x RTT (or RTT + 200 ms).
///
/// Units are nanoseconds where Linux uses microseconds (srtt scaled by 8, mdev by 4 as there).
/// Back-off doubles up to TCP_RTO_MAX = 120 s; the connection is dropped after
/// `LINUX_RETRIES2` = 15 (`tcp_retries2`) back-offs.
#[derive(Clone, Debug)]
pub struct LinuxRto {
    /// TCP_RTO_MIN (`tcp_rto_min_us`).
    pub min_rto: Nanos,
    /// `srtt_us`: 8 x the smoothed RTT; 0 = no sample yet.
    pub srtt8: Nanos,
    /// `mdev_us`: 4 x the smoothed mean deviation.
    pub mdev4: Nanos,
    /// `mdev_max_us`: the largest mdev4 of this round trip, at least `min_rto`.
    pub mdev_max: Nanos,
    /// `rttvar_us`.
    pub rttvar: Nanos,
    /// `rtt_seq`: snd_nxt when rttvar last decayed.
    pub rtt_seq: u64,
    /// `icsk_rto` before back-off.
    pub rto: Nanos,
    /// `icsk_backoff`.
    pub backoffs: u32,
    /// Timeouts since data was last acknowledged: Linux gives up after `tcp_retries2` of them
    /// without progress (`retransmits_timed_out` counts from the last acknowledgment of data).
    pub stalled: u32,
}

/// Linux TCP_RTO_MAX.
const LINUX_MAX_RTO_NS: Nanos = 120 * NANOS_PER_SEC;
/// Linux `sysctl_tcp_retries2` (TCP_RETR2): back-offs before the connection is dropped.
pub const LINUX_RETRIES2: u32 = 15;

impl LinuxRto {
    /// `tcp_rtt_estimator` with a measurement `m` ns, snd_una and snd_nxt at the time.
    pub fn sample(&mut self, m: Nanos, snd_una: u64, snd_nxt: u64) {
        let m = m.max(1);
        if self.srtt8 == 0 {
            // No previous measure: srtt = m, mdev = 2m ("make sure rto = 3*rtt").
            self.srtt8 = m << 3;
            self.mdev4 = m << 1;
            self.rttvar = self.mdev4.max(self.min_rto);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
        } else {
            let srtt = self.srtt8 >> 3;
            // srtt = 7/8 srtt + 1/8 m.
            self.srtt8 = (self.srtt8 + m).saturating_sub(srtt).max(1);
            let quarter = self.mdev4 >> 2;
            if m < srtt {
                // Below srtt: |error| - mdev/4, scaled by 1/8 when positive (gain 1/32).
                let err = srtt - m;
                if err > quarter {
                    self.mdev4 += (err - quarter) >> 3;
                } else {
                    self.mdev4 -= quarter - err;
                }
            } else {
                let err = m - srtt;
                self.mdev4 = self.mdev4 + err - quarter;
            }
            if self.mdev4 > self.mdev_max {
                self.mdev_max = self.mdev4;
                if self.mdev_max > self.rttvar {
                    self.rttvar = self.mdev_max;
                }
            }
            if snd_una > self.rtt_seq {
                // Once per round trip: rttvar decays a quarter of the way to the round's peak.
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = self.min_rto;
            }
        }
        // __tcp_set_rto: (srtt >> 3) + rttvar; tcp_bound_rto: at most TCP_RTO_MAX.
        self.rto = ((self.srtt8 >> 3) + self.rttvar).min(LINUX_MAX_RTO_NS);
        self.backoffs = 0;
    }

    pub fn timeout(&self) -> Nanos {
        // inet_csk_rto_backoff: rto << backoff, at most TCP_RTO_MAX.
        self.rto
            .checked_shl(self.backoffs)
            .filter(|t| t >> self.backoffs == self.rto)
            .unwrap_or(u64::MAX)
            .min(LINUX_MAX_RTO_NS)
    }

    /// The smoothed RTT, if sampled.
    pub fn srtt(&self) -> Option<Nanos> {
        (self.srtt8 != 0).then_some(self.srtt8 >> 3)
    }
}

#[derive(Clone, Debug)]
pub enum Rto {
    Bsd(BsdRto),
    Rfc6298(RfcRto),
    Ns2(Ns2Rto),
    Linux(LinuxRto),
}

impl Rto {
    pub fn bsd(tick: Nanos, phase: Nanos) -> Rto {
        Rto::Bsd(BsdRto::new(tick, phase))
    }

    pub fn bsd_with_min(tick: Nanos, phase: Nanos, min_ticks: i64) -> Rto {
        Rto::Bsd(BsdRto::with_min(tick, phase, min_ticks))
    }

    pub fn rfc6298(min_rto: Nanos) -> Rto {
        Rto::rfc6298_with_initial(min_rto, RFC_INITIAL_RTO_NS)
    }

    /// As `rfc6298`, with the RTO before any measurement (RFC 6298 (2.1)) set to `initial`.
    pub fn rfc6298_with_initial(min_rto: Nanos, initial: Nanos) -> Rto {
        Rto::Rfc6298(RfcRto {
            min_rto,
            srtt: None,
            rttvar: 0,
            max_rto: RFC_MAX_RTO_NS.max(min_rto),
            rto: initial.clamp(min_rto, RFC_MAX_RTO_NS.max(min_rto)),
            backoffs: 0,
        })
    }

    /// ns-2.35's timer; `initial` None = `rtxcur_init_`, 3 s.
    pub fn ns2(tick: Nanos, phase: Nanos, initial: Option<Nanos>) -> Rto {
        Rto::Ns2(Ns2Rto::new(tick, phase, initial.unwrap_or(NS2_INITIAL_RTO_NS)))
    }

    /// Linux's timer: `min_rto` TCP_RTO_MIN, `initial` TCP_TIMEOUT_INIT (1 s).
    pub fn linux(min_rto: Nanos, initial: Nanos) -> Rto {
        Rto::Linux(LinuxRto {
            min_rto,
            srtt8: 0,
            mdev4: 0,
            mdev_max: min_rto,
            rttvar: min_rto,
            rtt_seq: 0,
            rto: initial.min(LINUX_MAX_RTO_NS),
            backoffs: 0,
            stalled: 0,
        })
    }

    /// The smoothed RTT where the timer keeps one in nanoseconds (rfc6298, linux).
    pub fn srtt(&self) -> Option<Nanos> {
        match self {
            Rto::Rfc6298(r) => r.srtt,
            Rto::Linux(l) => l.srtt(),
            Rto::Bsd(_) | Rto::Ns2(_) => None,
        }
    }

    /// When a retransmission timer armed at `now` with the current RTO expires.
    /// BSD: `t_timer[TCPT_REXMT] = t_rxtcur` counts down once per slow tick and fires when it
    /// reaches zero, i.e. on the `rxtcur`-th tick after `now`.
    pub fn deadline(&self, now: SimTime) -> SimTime {
        match self {
            Rto::Bsd(b) => now.next_tick(b.tick, b.phase) + (b.rxtcur as u64 - 1) * b.tick,
            Rto::Rfc6298(r) => now + r.rto,
            // ns-2 set_rtx_timer: rtx_timer_.resched(rtt_timeout()), exactly, not on a tick.
            Rto::Ns2(n) => now + n.timeout(),
            Rto::Linux(l) => now + l.timeout(),
        }
    }

    /// An RTT measurement of a segment timed at `sent` and acknowledged at `now`.
    pub fn sample(&mut self, sent: SimTime, now: SimTime) {
        self.sample_seq(sent, now, 0, 0);
    }

    /// As `sample`, with the sender's snd_una and snd_nxt, which Linux's once-per-round-trip
    /// variance decay reads (`LinuxRto`); the other timers ignore them.
    pub fn sample_seq(&mut self, sent: SimTime, now: SimTime, snd_una: u64, snd_nxt: u64) {
        match self {
            Rto::Linux(l) => l.sample(now - sent, snd_una, snd_nxt),
            Rto::Bsd(b) => {
                // t_rtt is set to 1 when timing starts and incremented by every slow tick.
                let ticks = 1 + now.ticks_since(sent, b.tick, b.phase) as i64;
                b.sample_ticks(ticks);
            }
            Rto::Rfc6298(r) => {
                let rtt = now - sent;
                match r.srtt {
                    // RFC 6298 (2.2)
                    None => {
                        r.srtt = Some(rtt);
                        r.rttvar = rtt / 2;
                    }
                    // RFC 6298 (2.3): beta = 1/4, alpha = 1/8
                    Some(srtt) => {
                        r.rttvar = (3 * r.rttvar + srtt.abs_diff(rtt)) / 4;
                        r.srtt = Some((7 * srtt + rtt) / 8);
                    }
                }
                r.backoffs = 0;
                r.rto = (r.srtt.unwrap() + 4 * r.rttvar).clamp(r.min_rto, r.max_rto);
            }
            Rto::Ns2(n) => {
                // ns-2 rtt_update without timestamps: t_rtt_ = int((tao + fmod(sendtime +
                // boot_time_, tcp_tick_)) / tcp_tick_), the ticks crossed, at least 1. newack then
                // sets t_backoff_ = 1.
                let ticks = now.ticks_since(sent, n.tick, n.phase) as i64;
                n.sample_ticks(ticks);
                n.backoff = 1;
            }
        }
    }

    /// The retransmission timer expired: back off. Returns false when the connection should be
    /// dropped (more than `TCP_MAXRXTSHIFT` consecutive timeouts).
    pub fn on_timeout(&mut self) -> bool {
        match self {
            Rto::Bsd(b) => {
                b.rxtshift += 1;
                if b.rxtshift > MAX_RXT_SHIFT {
                    return false;
                }
                let rexmt = b.rexmtval() * BSD_BACKOFF[b.rxtshift as usize];
                b.rxtcur = rexmt.clamp(b.min_ticks, b.max_ticks);
                // Net/3 tcp_timers: after 4 back-offs the estimate is probably wrong; fold srtt
                // into rttvar and start over with the next measurement.
                if b.rxtshift > MAX_RXT_SHIFT / 4 {
                    b.rttvar += b.srtt >> 3;
                    b.srtt = 0;
                }
                true
            }
            Rto::Rfc6298(r) => {
                r.backoffs += 1;
                if r.backoffs > MAX_RXT_SHIFT {
                    return false;
                }
                // RFC 6298 (5.5)
                r.rto = r.rto.saturating_mul(2).min(r.max_rto);
                true
            }
            Rto::Ns2(n) => {
                // ns-2 rtt_backoff with rfc2988_: double while below 64 or while the timeout is
                // still under maxrto_; past 8, fold srtt into rttvar and take the next sample as the
                // first (t_rtxcur_ itself is left alone until then).
                if n.backoff < 64 || n.timeout() < NS2_MAX_RTO_NS {
                    n.backoff <<= 1;
                }
                if n.backoff > 8 {
                    n.rttvar += n.srtt >> 3;
                    n.srtt = 0;
                }
                true
            }
            Rto::Linux(l) => {
                l.backoffs += 1;
                l.stalled += 1;
                l.stalled <= LINUX_RETRIES2
            }
        }
    }

    /// An ACK acknowledged new data: Linux's count towards giving up starts again, whether or
    /// not the ACK gave an RTT sample (the back-off itself waits for one, RFC 6298 5.7).
    pub fn on_progress(&mut self) {
        if let Rto::Linux(l) = self {
            l.stalled = 0;
        }
    }

    /// When the persist timer, armed at `now` for the `shift`-th time in a row (0 = first), expires:
    /// the sender's probe of a window too small for its next segment (tcp/sender/persist.rs).
    /// - Net/3 `tcp_setpersist` (Stevens vol. 2, 25.5): `((t_srtt >> 2) + t_rttvar) >> 1` ticks
    ///   (srtt + 2 rttvar), times `tcp_backoff[t_rxtshift]`, within [TCPTV_PERSMIN, TCPTV_PERSMAX] =
    ///   [5 s, 60 s] of slow ticks (`TCPT_RANGESET`); the timer counts slow ticks as the RTO's does.
    /// - Linux `tcp_probe0_when` (include/net/tcp.h): `tcp_probe0_base` = max(icsk_rto, TCP_RTO_MIN)
    ///   shifted by the back-off (at most ilog2(TCP_RTO_MAX / TCP_RTO_MIN) + 1 = 10), at most
    ///   TCP_RTO_MAX (120 s).
    /// - The rfc6298 and ns2 timers have no persist timer of their own (ns-2's window never closes):
    ///   chosen, Net/3's rule with their srtt + 2 rttvar (rfc6298; before a sample, its initial
    ///   RTO) and `t_rtxcur_` (ns2), in seconds.
    pub fn persist_deadline(&self, now: SimTime, shift: u32) -> SimTime {
        const PERSIST_MIN_NS: Nanos = 5 * NANOS_PER_SEC;
        const PERSIST_MAX_NS: Nanos = 60 * NANOS_PER_SEC;
        let backoff = BSD_BACKOFF[shift.min(MAX_RXT_SHIFT) as usize] as u64;
        match self {
            Rto::Bsd(b) => {
                let t = (((b.srtt >> 2) + b.rttvar) >> 1).max(0) as u64;
                let min_ticks = PERSIST_MIN_NS.div_ceil(b.tick).max(1);
                let max_ticks = (PERSIST_MAX_NS / b.tick).max(min_ticks);
                let ticks = t.saturating_mul(backoff).clamp(min_ticks, max_ticks);
                now.next_tick(b.tick, b.phase) + (ticks - 1) * b.tick
            }
            Rto::Rfc6298(r) => {
                let base = r.srtt.map_or(RFC_INITIAL_RTO_NS, |s| s + 2 * r.rttvar);
                now + base.saturating_mul(backoff).clamp(PERSIST_MIN_NS, PERSIST_MAX_NS)
            }
            Rto::Ns2(n) => now + n.rtxcur.saturating_mul(backoff).clamp(PERSIST_MIN_NS, PERSIST_MAX_NS),
            Rto::Linux(l) => {
                const RTO_MIN_NS: Nanos = 200_000_000; // TCP_RTO_MIN
                let base = l.rto.max(RTO_MIN_NS);
                let shift = shift.min((LINUX_MAX_RTO_NS / RTO_MIN_NS).ilog2() + 1);
                now + base.checked_shl(shift).filter(|t| t >> shift == base).unwrap_or(u64::MAX).min(LINUX_MAX_RTO_NS)
            }
        }
    }

    /// The current RTO in nanoseconds (for reports and traces).
    pub fn current(&self) -> Nanos {
        match self {
            Rto::Bsd(b) => b.rxtcur as u64 * b.tick,
            Rto::Rfc6298(r) => r.rto,
            Rto::Ns2(n) => n.timeout(),
            Rto::Linux(l) => l.timeout(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn linux_first_sample_gives_three_rtts_or_rtt_plus_the_minimum() {
        // tcp_rtt_estimator, no previous measure: srtt = m, mdev = 2m, rttvar = max(mdev, 200 ms).
        let mut r = Rto::linux(200 * MS, 1000 * MS);
        assert_eq!(r.current(), 1000 * MS); // TCP_TIMEOUT_INIT
        r.sample_seq(SimTime(0), SimTime(20 * MS), 0, 10);
        assert_eq!(r.current(), 220 * MS); // 20 + max(40, 200): the minimum floors the variance
        let mut r = Rto::linux(200 * MS, 1000 * MS);
        r.sample_seq(SimTime(0), SimTime(300 * MS), 0, 10);
        assert_eq!(r.current(), 900 * MS); // 300 + 600 = 3 x RTT
    }

    #[test]
    fn linux_variance_decays_once_per_round_trip_and_falls_slowly() {
        let mut r = Rto::linux(200 * MS, 1000 * MS);
        let Rto::Linux(_) = r else { unreachable!() };
        r.sample_seq(SimTime(0), SimTime(100 * MS), 0, 10); // srtt 100, mdev4 200, rttvar 200
                                                            // A sample of 60 ms: error 40 below srtt; |err| - mdev/4 = 40 - 50 < 0: mdev4 = 200 - 10.
                                                            // srtt = 100 + (60 - 100) / 8 = 95. snd_una 5 has not passed rtt_seq 10: no decay.
        r.sample_seq(SimTime(0), SimTime(60 * MS), 5, 20);
        let Rto::Linux(l) = &r else { unreachable!() };
        assert_eq!((l.srtt8 >> 3, l.mdev4, l.rttvar, l.rtt_seq), (95 * MS, 190 * MS, 200 * MS, 10));
        assert_eq!(r.current(), 295 * MS);
        // A sample of 300 ms: error 205 above srtt 95: mdev4 = 190 + 205 - 47.5 = 347.5 > rttvar:
        // rttvar rises at once. snd_una 11 passed rtt_seq 10: the round ends (mdev_max back to
        // 200 ms, rtt_seq = snd_nxt 30); rttvar is already the peak, so nothing decays.
        r.sample_seq(SimTime(0), SimTime(300 * MS), 11, 30);
        let Rto::Linux(l) = &r else { unreachable!() };
        let srtt = 95 * MS + (300 * MS - 95 * MS) / 8;
        assert_eq!(l.srtt8 >> 3, srtt);
        assert_eq!(l.mdev4, 190 * MS + 205 * MS - 190 * MS / 4);
        assert_eq!((l.rttvar, l.mdev_max, l.rtt_seq), (l.mdev4, 200 * MS, 30));
        // Next round: a sample equal to srtt lowers mdev4 by a quarter, to 260.6 ms, the round's
        // peak (above the 200 ms floor); at the round's end rttvar falls a quarter of the way
        // towards it: 347.5 - (347.5 - 260.6) / 4 = 325.8 ms.
        let (rttvar, mdev4) = (l.rttvar, l.mdev4);
        r.sample_seq(SimTime(0), SimTime(srtt), 31, 40);
        let Rto::Linux(l) = &r else { unreachable!() };
        assert_eq!(l.mdev4, mdev4 - mdev4 / 4);
        assert_eq!(l.rttvar, rttvar - (rttvar - l.mdev4) / 4);
        assert_eq!(l.rttvar, 325_781_250);
    }

    #[test]
    fn linux_backs_off_to_120_s_and_gives_up_after_15() {
        let mut r = Rto::linux(200 * MS, 1000 * MS);
        for i in 1..=15 {
            assert!(r.on_timeout(), "backoff {i}");
            assert_eq!(r.current(), ((1000 * MS) << i).min(120_000 * MS));
        }
        assert!(!r.on_timeout());
    }

    const TICK: Nanos = 500_000_000;

    #[test]
    fn bsd_initial_rto_is_six_seconds_and_syn_backoff_matches_stevens() {
        // Stevens vol. 1 Sec. 18.6: SYN retransmissions after 6, 24 and 48 s.
        let mut r = Rto::bsd(TICK, 0);
        assert_eq!(r.current(), 6 * NANOS_PER_SEC);
        assert!(r.on_timeout());
        assert_eq!(r.current(), 24 * NANOS_PER_SEC);
        assert!(r.on_timeout());
        assert_eq!(r.current(), 48 * NANOS_PER_SEC);
        assert!(r.on_timeout());
        assert_eq!(r.current(), 64 * NANOS_PER_SEC);
    }

    #[test]
    fn bsd_fixed_point_arithmetic_by_hand() {
        // RTT samples (t_rtt, counted from 1): 1, 1, 3, 1.
        let mut b = BsdRto::new(TICK, 0);
        // first: srtt = 1 << 3 = 8, rttvar = 1 << 1 = 2, rexmtval = 1 + 2 = 3
        b.sample_ticks(1);
        assert_eq!((b.srtt, b.rttvar, b.rxtcur), (8, 2, 3));
        // delta = 1 - 1 - 1 = -1; srtt = 7; |delta| - (2 >> 2) = 1 - 0 = 1; rttvar = 3
        // rexmtval = (7 >> 3) + 3 = 3
        b.sample_ticks(1);
        assert_eq!((b.srtt, b.rttvar, b.rxtcur), (7, 3, 3));
        // delta = 3 - 1 - 0 = 2; srtt = 9; 2 - (3 >> 2) = 2 - 0 = 2; rttvar = 5
        // rexmtval = 1 + 5 = 6
        b.sample_ticks(3);
        assert_eq!((b.srtt, b.rttvar, b.rxtcur), (9, 5, 6));
        // delta = 1 - 1 - 1 = -1; srtt = 8; 1 - (5 >> 2) = 0; rttvar = 5; rexmtval = 1 + 5 = 6
        b.sample_ticks(1);
        assert_eq!((b.srtt, b.rttvar, b.rxtcur), (8, 5, 6));
    }

    #[test]
    fn bsd_short_path_settles_at_three_ticks() {
        // RTT far below a tick: every sample is t_rtt = 1. srtt: 8 -> 7, then delta = 0 forever;
        // rttvar: 2 -> 3, then 3 >> 2 = 0 so it stays. RTO = (7 >> 3) + 3 = 3 ticks: the
        // fixed-point floor of Net/3 on a LAN-like path (1.0-1.5 s with 500 ms ticks).
        let mut b = BsdRto::new(TICK, 0);
        for _ in 0..50 {
            b.sample_ticks(1);
        }
        assert_eq!((b.srtt, b.rttvar, b.rxtcur), (7, 3, 3));
    }

    #[test]
    fn bsd_rto_is_clamped_to_two_ticks() {
        let mut b = BsdRto::new(TICK, 0);
        b.srtt = 1;
        b.rttvar = 1;
        // delta = 1 - 1 - 0 = 0; srtt 1; rttvar += 0 - 0 -> 1; rexmtval 1 -> clamped to 2
        b.sample_ticks(1);
        assert_eq!(b.rxtcur, 2);
    }

    #[test]
    fn tcptv_min_of_one_second_at_a_200_ms_tick_is_five_ticks() {
        // tcp.min_rto_ticks = 5 (TCPTV_MIN = 1*PR_SLOWHZ with PR_SLOWHZ = 5): the LAN-like path of
        // bsd_short_path_settles_at_three_ticks now settles at 5 ticks (1 s), not 3 (600 ms).
        let mut b = BsdRto::with_min(200_000_000, 0, 5);
        for _ in 0..50 {
            b.sample_ticks(1);
        }
        assert_eq!((b.srtt, b.rttvar, b.rxtcur), (7, 3, 5));
        let mut two = BsdRto::with_min(200_000_000, 0, 2);
        for _ in 0..50 {
            two.sample_ticks(1);
        }
        assert_eq!(two.rxtcur, 3);
    }

    #[test]
    fn bsd_deadline_fires_on_the_nth_tick() {
        // phase 0.1 s: ticks at 0.1, 0.6, 1.1 ...; armed at 0.3 s with rxtcur 2 -> fires at 1.1 s
        let mut b = BsdRto::new(TICK, 100_000_000);
        b.rxtcur = 2;
        assert_eq!(Rto::Bsd(b).deadline(SimTime(300_000_000)), SimTime(1_100_000_000));
    }

    #[test]
    fn bsd_sample_counts_ticks_crossed() {
        // sent at 0.05 s, acked at 0.65 s: ticks at 0.1 and 0.6 crossed -> t_rtt = 3
        let mut r = Rto::bsd(TICK, 100_000_000);
        r.sample(SimTime(50_000_000), SimTime(650_000_000));
        match r {
            Rto::Bsd(b) => assert_eq!((b.srtt, b.rttvar), (24, 6)),
            _ => unreachable!(),
        }
    }

    #[test]
    fn bsd_gives_up_after_twelve_timeouts() {
        let mut r = Rto::bsd(TICK, 0);
        for _ in 0..MAX_RXT_SHIFT {
            assert!(r.on_timeout());
        }
        assert!(!r.on_timeout());
    }

    #[test]
    fn rfc6298_by_hand() {
        let ms = 1_000_000;
        let mut r = Rto::rfc6298(200 * ms);
        assert_eq!(r.current(), 1000 * ms);
        // first sample 100 ms: srtt 100, rttvar 50, rto = 100 + 200 = 300 ms
        r.sample(SimTime(0), SimTime(100 * ms));
        assert_eq!(r.current(), 300 * ms);
        // second 20 ms: rttvar = (150 + 80) / 4 = 57.5 ms; srtt = (700 + 20) / 8 = 90 ms
        // rto = 90 + 230 = 320 ms
        r.sample(SimTime(0), SimTime(20 * ms));
        assert_eq!(r.current(), 320 * ms);
        assert!(r.on_timeout());
        assert_eq!(r.current(), 640 * ms);
        // many tiny samples: clamped at min_rto
        for _ in 0..100 {
            r.sample(SimTime(0), SimTime(ms));
        }
        assert_eq!(r.current(), 200 * ms);
    }

    #[test]
    fn a_minimum_above_64_s_raises_the_maximum_with_it() {
        // tcp.min_rto_s = 65 panicked (clamp with min > max). RFC 6298 (2.5) only asks that a
        // maximum be at least 60 s: the maximum becomes the minimum, and backoff stays there.
        let mut r = Rto::rfc6298(65 * NANOS_PER_SEC);
        assert_eq!(r.deadline(SimTime(0)), SimTime(65 * NANOS_PER_SEC));
        r.sample(SimTime(0), SimTime(20_000_000));
        assert_eq!(r.deadline(SimTime(0)), SimTime(65 * NANOS_PER_SEC));
        assert!(r.on_timeout());
        assert_eq!(r.deadline(SimTime(0)), SimTime(65 * NANOS_PER_SEC));
        // The largest the schema allows (1e9 s) neither panics nor wraps.
        let mut r = Rto::rfc6298(1_000_000_000 * NANOS_PER_SEC);
        assert!(r.on_timeout());
        assert_eq!(r.deadline(SimTime(0)), SimTime(1_000_000_000 * NANOS_PER_SEC));
        let mut r = Rto::bsd(1_000_000_000 * NANOS_PER_SEC, 0);
        r.sample(SimTime(0), SimTime(20_000_000));
        assert!(r.on_timeout());
        assert!(r.deadline(SimTime(0)) > SimTime(0));
    }
}
