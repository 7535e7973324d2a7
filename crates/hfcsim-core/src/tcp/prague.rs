//! TCP Prague (draft-briscoe-iccrg-prague-congestion-control-04, De Schepper, Tilmans, Briscoe,
//! Goel, 2024; the L4S team's Linux `net/ipv4/tcp_prague.c`, whose defaults the draft describes, read
//! in the copy of its MODULE_VERSION 0.6 that google/bbr carries; later versions may differ):
//! DCTCP (RFC 8257, `dctcp.rs`) adapted to the Internet. What it keeps of DCTCP and what it adds:
//!
//! - **alpha** (`prague_update_alpha`): DCTCP's EWMA of the fraction of
//!   acknowledged bytes whose ACKs echoed CE, g = 1/16 (`PRAGUE_SHIFT_G` = 4), starting at 1
//!   (`PRAGUE_MAX_ALPHA`). Two changes: alpha is not updated until a first CE has been seen ("proof
//!   that there's an AQM on the path", `saw_ce`; the rounds still turn), and with RTT independence
//!   on (below) a round closes only when at least the target RTT has also passed since the last
//!   update (`prague_target_rtt_elapsed`). A round ends when snd_una reaches snd_nxt as it was when
//!   the round began (`prague_e2e_rtt_elapsed`). Linux keeps alpha in 1/2^20 fixed point; an f64
//!   here (the hand-made tests' fractions are exact in binary).
//! - **the cut** (`prague_enter_cwr`): on entering CWR, cwnd x alpha / 2, rounded to the
//!   nearest byte (Linux rounds to the nearest 1/2^20 segment, "unbias the rounding"), at least 2
//!   segments (`MIN_CWND`). Linux takes it off over the following ACKs (`cwnd_cnt`, a segment per
//!   ACK); the sender here cuts at once, as for DCTCP (tcp/sender/today.rs). The cut uses alpha as
//!   it was before the ACK that brings the ECE (Linux enters CWR in `tcp_fastretrans_alert` before
//!   `cong_control` updates alpha). Once per round trip, as every ECN cut here; with RTT
//!   independence on, also at most once per target RTT (`cwr_stamp`).
//! - **additive increase** (`prague_update_cwnd`): on every ACK, also while reducing
//!   (Prague's `cong_control` is called in CWR, "it is expected to spend most of its time in
//!   TCP_CA_CWR"), but only for bytes not marked CE ("unsaturated marking": over a round trip the
//!   increase is proportional to 1 - p): slow start by those bytes up to ssthresh (`tcp_slow_start`),
//!   then ai_ack_increase x bytes / cwnd towards the next segment. Not while cwnd-limited is false.
//!   The carry is kept exactly in 1/2^20 byte units (Linux rounds each ACK's increase to the
//!   nearest 1/2^20 segment).
//! - **RTT independence** (`RTT_CONTROL_RATE`, the reference's default
//!   `prague_rtt_scaling`, with `prague_rtt_target` = 25 ms and `prague_rtt_transition` = 500
//!   rounds; chosen: the reference's defaults, not a key). After 500 rounds out of slow start, a
//!   flow whose srtt is below the 25 ms target grows by (srtt / 25 ms)^2 segments per round trip
//!   instead of 1, so its rate grows as fast as that of a flow with a 25 ms RTT, and updates alpha
//!   and cuts at most once per 25 ms. Linux measures srtt in 128 us
//!   units there (`RTT_UNIT`); ns here; an srtt above 100 ms (`MAX_SCALED_RTT`) is unscaled. The
//!   ai factor is recomputed on each ACK from the srtt then (Linux: at each round and each cwnd
//!   change).
//! - **loss** (`prague_enter_loss`): halves as Reno (cwnd / 2, at least 2 segments).
//!   The classic-ECN detection and fallback (`prague_ecn_fallback`) is off in the reference by
//!   default and not modelled: a classic ECN bottleneck's marks are treated as L4S ones.
//! - **pacing** (`prague_update_pacing_rate`): mtu x max(cwnd, the pipe) / srtt at
//!   100 %, 200 % while cwnd < ssthresh / 2, where mtu is a whole packet (mss + headers); the sender
//!   paces with it when `tcp.pacing` is on (the `l4s` stack). Prague's cap on the GSO burst
//!   (`prague_burst_shift`) has no counterpart: hfcsim paces each segment.
//! - **ECT(1)** and the scalable feedback come from `tcp.ecn = "l4s"` (RFC 9331; DCTCP's feedback
//!   stands in for AccECN, which Prague asks for and hfcsim does not model).
//! - After an RTO the sender's slow start runs (Linux's Prague, `in_loss`, grows nothing until
//!   CA_Open; not modelled).

use super::cc::{AckInfo, CongestionControl, Feedback, LossInfo, Reno};
use super::dctcp::MarkedBytes;
use super::pacing::PacingInput;
use crate::time::{Nanos, SimTime};

/// `prague_rtt_target`: the RTT a flow behaves as if it had, once RTT-independent.
pub const RTT_TARGET: Nanos = 25_000_000;
/// `prague_rtt_transition` (`DEFAULT_RTT_TRANSITION`): rounds out of slow start before it is.
pub const RTT_TRANSITION: u32 = 500;
/// `MAX_SCALED_RTT`: no scaling above 100 ms.
pub const MAX_SCALED_RTT: Nanos = 100_000_000;
/// `CWND_UNIT`: the additive increase's fixed point, 1/2^20.
const UNIT_BITS: u32 = 20;
const ONE: u64 = 1 << UNIT_BITS;

#[derive(Clone, Debug)]
pub struct Prague {
    reno: Reno,
    alpha: f64,
    /// alpha before this ACK's update: the cut reads it (module comment).
    cut_alpha: f64,
    saw_ce: bool,
    /// This round's acknowledged and marked bytes; alpha's EWMA is DCTCP's, g = 1/2^4
    /// (`PRAGUE_SHIFT_G`, dctcp::G).
    bytes: MarkedBytes,
    /// snd_nxt when the round began (`next_seq`).
    next_seq: u64,
    /// The last alpha update (`alpha_stamp`).
    alpha_stamp: SimTime,
    /// The last cut (`cwr_stamp`).
    cwr_stamp: SimTime,
    /// Rounds since slow start ended (`round`).
    round: u32,
    /// The last ACK's ECE: its bytes do not count towards growth.
    last_ece: bool,
    in_slow_start: bool,
    /// Towards the next segment of additive increase, bytes x 2^20 (`cwnd_cnt`).
    acc: u64,
    /// Whether RTT independence is used at all (`rtt_indep` != RTT_CONTROL_NONE).
    rtt_scaling: bool,
}

impl Default for Prague {
    fn default() -> Self {
        Self::new()
    }
}

impl Prague {
    pub fn new() -> Prague {
        Prague {
            reno: Reno::linux(),
            alpha: 1.0,
            cut_alpha: 1.0,
            saw_ce: false,
            bytes: MarkedBytes::default(),
            next_seq: 0,
            alpha_stamp: SimTime(0),
            cwr_stamp: SimTime(0),
            round: 0,
            last_ece: false,
            in_slow_start: true,
            acc: 0,
            rtt_scaling: true,
        }
    }

    /// Prague with `RTT_CONTROL_NONE`: DCTCP's per-round-trip behaviour at any RTT.
    pub fn without_rtt_scaling() -> Prague {
        Prague { rtt_scaling: false, ..Prague::new() }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Rounds counted since slow start ended.
    pub fn round(&self) -> u32 {
        self.round
    }

    /// `prague_is_rtt_indep`.
    fn rtt_indep(&self) -> bool {
        self.rtt_scaling && !self.in_slow_start && self.round >= RTT_TRANSITION
    }

    /// `prague_ai_ack_increase` with `prague_rate_scaled_ai_ack_increase`: the growth per cwnd of
    /// unmarked bytes acknowledged, in 1/2^20 segments.
    pub fn ai_increase(&self, srtt: Option<Nanos>) -> u64 {
        let Some(rtt) = srtt.filter(|&r| r > 0 && r <= MAX_SCALED_RTT) else { return ONE };
        if !self.rtt_scaling || self.round < RTT_TRANSITION || rtt >= RTT_TARGET {
            return ONE;
        }
        // (rtt / target)^2 in 1/2^20, rounded to nearest.
        let num = (rtt as u128 * rtt as u128) << UNIT_BITS;
        let den = RTT_TARGET as u128 * RTT_TARGET as u128;
        ((num + den / 2) / den) as u64
    }
}

impl CongestionControl for Prague {
    fn on_ack(&mut self, a: &AckInfo) -> u64 {
        let mss = a.mss;
        let mut cwnd = a.cwnd;
        // Unsaturated marking: the bytes of an ACK that echoes CE grow nothing.
        let mut acked = if self.last_ece { 0 } else { a.acked };
        if cwnd < a.ssthresh {
            // tcp_slow_start: cwnd = min(cwnd + acked, ssthresh); the rest goes on.
            let grown = (cwnd + acked).min(a.ssthresh);
            acked -= grown - cwnd;
            cwnd = grown;
        }
        if acked > 0 {
            self.acc += acked * self.ai_increase(a.srtt);
            // One segment when a cwnd's worth (x 2^20) has accumulated (Linux: at most one per ACK).
            let whole = cwnd << UNIT_BITS;
            if self.acc >= whole {
                self.acc -= whole;
                cwnd += mss;
            }
        }
        cwnd.min(super::cc::MAX_CWND)
    }

    fn ssthresh_on_loss(&mut self, l: &LossInfo) -> u64 {
        self.acc = 0;
        self.reno.ssthresh_on_loss(l)
    }

    fn ssthresh_on_timeout(&mut self, l: &LossInfo) -> u64 {
        self.acc = 0;
        self.reno.ssthresh_on_timeout(l)
    }

    fn ssthresh_on_ecn(&mut self, l: &LossInfo) -> u64 {
        if self.rtt_indep() && l.now.0 < self.cwr_stamp.0.saturating_add(RTT_TARGET) {
            return l.cwnd; // at most one cut per target RTT
        }
        self.cwr_stamp = l.now;
        let cut = (l.cwnd as f64 * self.cut_alpha / 2.0).round() as u64;
        l.cwnd.saturating_sub(cut).max(2 * l.mss)
    }

    fn on_ecn_feedback(&mut self, fb: &Feedback) {
        self.cut_alpha = self.alpha;
        self.last_ece = fb.ece;
        self.in_slow_start = fb.cwnd < fb.ssthresh;
        self.bytes.count(fb.acked, fb.ece);
        self.saw_ce |= fb.ece;
        // prague_should_update_ewma: the round is over, and with RTT independence the target
        // RTT has passed since the last update.
        if fb.snd_una < self.next_seq {
            return;
        }
        if self.rtt_indep() && fb.now.0 < self.alpha_stamp.0.saturating_add(RTT_TARGET) {
            return;
        }
        // prague_new_round restarts the counters; alpha moves only once a CE has been seen.
        let alpha = self.bytes.next_alpha(self.alpha);
        if self.saw_ce {
            self.alpha = alpha.min(1.0);
            self.alpha_stamp = fb.now;
        }
        self.next_seq = fb.snd_nxt;
        if !self.in_slow_start {
            self.round = self.round.saturating_add(1);
        }
    }

    fn pacing_rate(&self, p: &PacingInput) -> Option<u64> {
        let srtt = p.srtt.filter(|&s| s > 0)?;
        let ratio: u128 = if p.cwnd < p.ssthresh / 2 { 2 } else { 1 };
        // mtu x window-in-segments / srtt, bytes/s.
        let rate =
            p.cwnd.max(p.flight) as u128 * p.mtu as u128 * ratio * 1_000_000_000 / (p.mss as u128 * srtt as u128);
        Some(rate.min(u64::MAX as u128) as u64)
    }

    fn grows_while_reducing(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn fb(now_ms: u64, acked: u64, ece: bool, una: u64, nxt: u64, cwnd: u64, ssthresh: u64) -> Feedback {
        Feedback {
            now: SimTime(now_ms * 1_000_000),
            acked,
            ece,
            snd_una: una,
            snd_nxt: nxt,
            cwnd,
            ssthresh,
            srtt: Some(5_000_000),
        }
    }

    fn ecn(now_ms: u64, cwnd: u64) -> LossInfo {
        LossInfo { now: SimTime(now_ms * 1_000_000), cwnd, flight: cwnd, snd_wnd: u64::MAX, mss: MSS }
    }

    fn ack(cwnd: u64, ssthresh: u64, acked: u64, srtt_ms: u64) -> AckInfo {
        AckInfo { now: SimTime(0), acked, cwnd, ssthresh, mss: MSS, srtt: Some(srtt_ms * 1_000_000), min_rtt: None }
    }

    /// ACKs of one segment each with 8 more out: a round closed by the ACK to u sets next_seq =
    /// u + 8000, so the next round is exactly the 8 ACKs to u + 1000 ... u + 8000 (Prague closes a
    /// round when snd_una reaches next_seq; DCTCP when it passes WindowEnd). Congestion avoidance (cwnd 20000 >= ssthresh
    /// 10000), so every round counts.
    struct Acks {
        una: u64,
        ms: u64,
    }

    impl Acks {
        fn ack(&mut self, p: &mut Prague, ece: bool) {
            self.una += MSS;
            self.ms += 1;
            p.on_ecn_feedback(&fb(self.ms, MSS, ece, self.una, self.una + 8 * MSS, 20_000, 10_000));
        }
        fn round(&mut self, p: &mut Prague, marked: usize) {
            for i in 0..8 {
                self.ack(p, i < marked);
            }
        }
    }

    #[test]
    fn alpha_waits_for_a_first_mark_then_follows_dctcps_ewma_and_the_cut() {
        let mut p = Prague::new();
        let mut a = Acks { una: 0, ms: 0 };
        // The first ACK closes the first, short round; no CE seen yet: alpha stays 1, the round
        // turns (next_seq = 9000, round 1).
        a.ack(&mut p, false);
        assert_eq!((p.alpha(), p.round()), (1.0, 1));
        // A whole unmarked round: still no CE, so no update (DCTCP would give 15/16): alpha 1.
        a.round(&mut p, 0);
        assert_eq!((p.alpha(), p.round()), (1.0, 2));
        // 2 of 8 marked: F = 1/4, alpha = 15/16 + 1/64 = 61/64.
        a.round(&mut p, 2);
        assert_eq!(p.alpha(), 61.0 / 64.0);
        // 0 of 8: alpha = 61/64 x 15/16 = 915/1024.
        a.round(&mut p, 0);
        assert_eq!(p.alpha(), 915.0 / 1024.0);
        // 8 of 8: alpha = 915/1024 x 15/16 + 1/16 = (13725 + 1024) / 16384 = 14749/16384.
        a.round(&mut p, 8);
        assert_eq!(p.alpha(), 14_749.0 / 16_384.0);
        assert_eq!(p.round(), 5);
        // The cut reads alpha before this ACK's update: the next ACK (not closing a round) leaves
        // cut_alpha = alpha. cwnd 20000: 20000 x 14749 / 32768 = 9002.07 -> 9002; ssthresh 10998.
        a.ack(&mut p, true);
        assert_eq!(p.ssthresh_on_ecn(&ecn(100, 20_000)), 10_998);
        // A loss halves as Reno; never below 2 segments.
        assert_eq!(p.ssthresh_on_loss(&ecn(100, 20_000)), 10_000);
        assert_eq!(Prague::new().ssthresh_on_ecn(&ecn(0, 3000)), 2000);
    }

    #[test]
    fn the_ack_that_closes_a_round_cuts_with_the_alpha_before_it() {
        let mut p = Prague::new();
        let mut a = Acks { una: 0, ms: 0 };
        a.ack(&mut p, true); // first ACK, marked: F = 1, alpha = 15/16 + 1/16 = 1
        assert_eq!(p.alpha(), 1.0);
        a.round(&mut p, 0); // alpha 15/16 after its 8th ACK
        for _ in 0..7 {
            a.ack(&mut p, false);
        }
        // The 8th ACK of the next round is marked and closes it: F = 1/8, alpha = 225/256 + 1/128
        // = 227/256; but the cut on this ACK reads 15/16: 16000 x 15/32 = 7500 -> ssthresh 8500.
        a.ack(&mut p, true);
        assert_eq!(p.alpha(), 227.0 / 256.0);
        assert_eq!(p.ssthresh_on_ecn(&ecn(50, 16_000)), 8500);
    }

    #[test]
    fn growth_skips_marked_bytes_and_scales_with_rtt_after_the_transition() {
        let mut p = Prague::new();
        // Slow start: an unmarked 2-segment ACK grows cwnd by 2 segments ...
        assert_eq!(p.on_ack(&ack(10_000, 100_000, 2000, 5)), 12_000);
        // ... a marked one by nothing.
        p.on_ecn_feedback(&fb(1, 2000, true, 2000, 20_000, 12_000, 100_000));
        assert_eq!(p.on_ack(&ack(12_000, 100_000, 2000, 5)), 12_000);
        // Congestion avoidance, before the transition: Reno's one segment per cwnd acknowledged.
        let mut p = Prague::new();
        let mut cwnd = 10_000;
        for _ in 0..9 {
            cwnd = p.on_ack(&ack(cwnd, 5000, 1000, 5));
        }
        assert_eq!(cwnd, 10_000);
        cwnd = p.on_ack(&ack(cwnd, 5000, 1000, 5));
        assert_eq!(cwnd, 11_000);
        // After 500 rounds out of slow start, at srtt 5 ms < 25 ms: (5/25)^2 = 1/25 of that,
        // 2^20 / 25 = 41943.04 -> 41943 per byte: 250 ACKs of 1000 bytes (25 windows) give
        // 250 x 1000 x 41943 = 10485750000, just short of 10000 x 2^20 = 10485760000; the 251st
        // passes it: one segment.
        let mut p = Prague { round: RTT_TRANSITION, in_slow_start: false, ..Prague::new() };
        assert_eq!(p.ai_increase(Some(5_000_000)), 41_943);
        assert_eq!(p.ai_increase(Some(25_000_000)), ONE); // at the target: unscaled
        assert_eq!(p.ai_increase(Some(101_000_000)), ONE); // above MAX_SCALED_RTT
        let mut cwnd = 10_000;
        for _ in 0..250 {
            cwnd = p.on_ack(&ack(cwnd, 5000, 1000, 5));
        }
        assert_eq!(cwnd, 10_000);
        cwnd = p.on_ack(&ack(cwnd, 5000, 1000, 5));
        assert_eq!(cwnd, 11_000);
        // Without RTT scaling (RTT_CONTROL_NONE) the transition changes nothing.
        let q = Prague { round: RTT_TRANSITION, in_slow_start: false, ..Prague::without_rtt_scaling() };
        assert_eq!(q.ai_increase(Some(5_000_000)), ONE);
    }

    #[test]
    fn rtt_independent_updates_and_cuts_wait_for_the_target_rtt() {
        let mut p = Prague { round: RTT_TRANSITION, in_slow_start: false, saw_ce: true, ..Prague::new() };
        // Rounds of 8 ACKs 1 ms apart: the round ends at 8 ms but 25 ms have not passed since the
        // last update (at 0): the counters go on to the first ACK at or past 25 ms (the 25th ACK),
        // all 25 unmarked: F = 0, alpha = 15/16.
        let mut a = Acks { una: 0, ms: 0 };
        for _ in 0..24 {
            a.ack(&mut p, false);
        }
        assert_eq!(p.alpha(), 1.0);
        a.ack(&mut p, false);
        assert_eq!(p.alpha(), 15.0 / 16.0);
        a.ack(&mut p, false); // 26 ms: the cut now reads 15/16 (it read 1 on the updating ACK)
                              // A cut at 30 ms; a second at 40 ms is refused (cwnd kept), one at 55 ms is taken:
                              // 20000 x 15/32 = 9375 -> 10625.
        assert_eq!(p.ssthresh_on_ecn(&ecn(30, 20_000)), 10_625);
        assert_eq!(p.ssthresh_on_ecn(&ecn(40, 20_000)), 20_000);
        assert_eq!(p.ssthresh_on_ecn(&ecn(55, 20_000)), 10_625);
    }

    #[test]
    fn pacing_rate_is_mtu_per_segment_at_100_percent_or_200_early_in_slow_start() {
        let p = Prague::new();
        let input = |cwnd, ssthresh| PacingInput {
            cwnd,
            ssthresh,
            outstanding: 0,
            flight: 0,
            mss: 1000,
            mtu: 1040,
            srtt: Some(10_000_000),
        };
        // 10 segments of 1040 B per 10 ms: 1.04 MB/s; 200 % while 10000 < 100000 / 2.
        assert_eq!(p.pacing_rate(&input(10_000, 100_000)), Some(2_080_000));
        assert_eq!(p.pacing_rate(&input(10_000, 10_000)), Some(1_040_000));
    }
}
