//! CUBIC (RFC 9438), the congestion control of Linux, Windows and macOS today, as a hook of
//! `cc.rs`.
//!
//! - Window growth in congestion avoidance follows W_cubic(t) = C (t - K)^3 + W_max (RFC 9438
//!   eq. 1), with K = cbrt((W_max - cwnd_epoch) / C) (eq. 2), t the time since the epoch began
//!   (the first ACK in congestion avoidance after a reduction), C = 0.4 and windows in segments.
//!   Each ACK moves cwnd towards target = W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd], by
//!   (target - cwnd) / cwnd per segment acknowledged (4.2). RTT is the smoothed RTT as RFC 9438
//!   4.2 says; Linux uses the minimum RTT (`delay_min`) instead, a choice that matters only when
//!   queueing delay is large.
//! - The Reno-friendly region (4.3): W_est starts at cwnd_epoch and grows by alpha_cubic = 3(1 -
//!   beta) / (1 + beta) segments per cwnd acknowledged (1 once W_est reaches the window before the
//!   last reduction); while W_cubic(t) < W_est, cwnd follows W_est.
//! - `tcp.cubic_linux_friendliness` (the linux stack's): W_est as Linux's `tcp_friendliness`
//!   (net/ipv4/tcp_cubic.c `bictcp_update`) grows it instead. Its estimate `tcp_cwnd` gains one
//!   segment per `(cwnd * beta_scale) >> 3` segments acknowledged, beta_scale = 8 (1024 + 717) / 3 /
//!   (1024 - 717) = 15 in integers: 8/15 of a segment per window, from cwnd in whole segments. It
//!   never switches to 1: Linux has no counterpart of RFC 9438's step to alpha = 1 at cwnd_prior.
//!   The estimate is whole segments, as Linux's. Chosen: cwnd follows it at once, as for the RFC,
//!   where Linux's cwnd catches up with it over about a window (`cnt = cwnd / (tcp_cwnd - cwnd)`,
//!   `tcp_cong_avoid_ai`).
//! - Multiplicative decrease (4.6): ssthresh = cwnd x beta_cubic (0.7), at least 2 segments, in
//!   whole segments as Linux's `bictcp_recalc_ssthresh` computes it from the window in packets.
//! - Fast convergence (4.7): a loss below the previous W_max sets W_max = cwnd (1 + beta) / 2,
//!   releasing bandwidth to newer flows; else W_max = cwnd.
//! - A timeout (4.8) sets ssthresh as a loss does, and starts a new epoch. Linux then forgets
//!   W_max (`bictcp_reset` on entering TCP_CA_Loss); so does this model, which makes the growth
//!   after the timeout's slow start convex from the window it reaches.
//! - Slow start (4.10) is standard, by the bytes acknowledged as Linux's `tcp_slow_start`.
//!   Linux's HyStart, its default slow-start exit, is `tcp.hystart` (`tcp/hystart.rs`, in the
//!   sender); without it slow start ends at ssthresh or a loss.
//!
//! Arithmetic is f64 with only + - * / (IEEE 754 rounds these exactly the same on every
//! platform); the cube root is Newton's method over them, so results do not depend on a libm.

use super::cc::{AckInfo, CongestionControl, LossInfo, MAX_CWND};
use crate::time::SimTime;

/// RFC 9438 4.1: C, segments per second cubed.
pub const C: f64 = 0.4;
/// RFC 9438 4.6: beta_cubic.
pub const BETA: f64 = 0.7;

/// The cube root of `x` >= 0 by Newton's method (+ - * / only: deterministic everywhere).
pub fn cbrt(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    // A start above the root (y^3 >= x), so the iteration falls monotonically to it.
    let mut y = if x > 1.0 { x } else { 1.0 };
    for _ in 0..200 {
        let next = (2.0 * y + x / (y * y)) / 3.0;
        if next >= y {
            break;
        }
        y = next;
    }
    y
}

/// RFC 9438 eq. 1: W_cubic(t), segments, for a window W_max and K.
pub fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    let d = t - k;
    C * d * d * d + w_max
}

#[derive(Clone, Debug, Default)]
pub struct Cubic {
    /// W_max, segments: the window before the last reduction (after fast convergence).
    w_max: f64,
    /// The window before the last reduction (RFC 9438 `cwnd_prior`), segments.
    cwnd_prior: f64,
    /// When the current epoch began; None until the first ACK in congestion avoidance.
    epoch: Option<SimTime>,
    /// K of the epoch, seconds.
    k: f64,
    /// W_max of the epoch's curve (cwnd_epoch if it exceeded W_max), segments.
    origin: f64,
    /// W_est, segments.
    w_est: f64,
    /// Growth owed, bytes, below one byte of cwnd.
    frac: f64,
    /// `tcp.cubic_linux_friendliness`: W_est grows as Linux's `tcp_friendliness` (module comment).
    linux_friendliness: bool,
    /// Linux's W_est, `tcp_cwnd`, whole segments (`tcp.cubic_linux_friendliness`).
    tcp_cwnd: u64,
    /// Linux `ack_cnt`: bytes acknowledged in the epoch not yet turned into `tcp_cwnd`.
    ack_cnt: u64,
}

/// Linux `beta_scale` (tcp_cubic.c `cubictcp_register`): 8 (BICTCP_BETA_SCALE + beta) / 3 /
/// (BICTCP_BETA_SCALE - beta) with beta = 717 / 1024, in integers: 15.
const LINUX_BETA_SCALE: u64 = 8 * (1024 + 717) / 3 / (1024 - 717);

impl Cubic {
    pub fn new() -> Cubic {
        Cubic::default()
    }

    /// CUBIC whose Reno-friendly estimate grows as Linux's (`tcp.cubic_linux_friendliness`).
    pub fn linux_friendliness() -> Cubic {
        Cubic { linux_friendliness: true, ..Cubic::default() }
    }

    /// K and the curve's plateau for an epoch starting at `cwnd` segments.
    fn start_epoch(&mut self, now: SimTime, cwnd: f64) {
        self.epoch = Some(now);
        if cwnd < self.w_max {
            self.k = cbrt((self.w_max - cwnd) / C); // RFC 9438 eq. 2
            self.origin = self.w_max;
        } else {
            self.k = 0.0;
            self.origin = cwnd;
        }
        self.w_est = cwnd;
        // Linux bictcp_update at the epoch's start: tcp_cwnd = cwnd, ack_cnt = this ACK's (added
        // by on_ack).
        self.tcp_cwnd = cwnd as u64;
        self.ack_cnt = 0;
    }

    /// RFC 9438 4.6-4.7: W_max with fast convergence, and the new ssthresh in bytes.
    fn reduce(&mut self, cwnd_bytes: u64, mss: u64) -> u64 {
        let segments = cwnd_bytes / mss;
        let cwnd = segments as f64;
        self.w_max = if cwnd < self.w_max { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
        self.cwnd_prior = cwnd;
        self.epoch = None;
        self.frac = 0.0;
        let ssthresh = ((segments as f64 * BETA) as u64).max(2);
        ssthresh * mss
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, a: &AckInfo) -> u64 {
        let mss = a.mss as f64;
        let mut cwnd = a.cwnd;
        let mut acked = a.acked;
        if cwnd < a.ssthresh {
            // RFC 9438 4.10 / Linux tcp_slow_start.
            let grown = (cwnd + acked).min(a.ssthresh);
            acked -= grown - cwnd;
            cwnd = grown;
            if acked == 0 {
                return cwnd.min(MAX_CWND);
            }
        }
        let w = cwnd as f64 / mss;
        if self.epoch.is_none() {
            self.start_epoch(a.now, w);
        }
        let epoch = self.epoch.expect("started above");
        let t = (a.now.0.saturating_sub(epoch.0)) as f64 / 1e9;
        let rtt = a.srtt.or(a.min_rtt).unwrap_or(0) as f64 / 1e9;
        let segments_acked = acked as f64 / mss;
        let w_est = if self.linux_friendliness {
            // Linux tcp_friendliness: `while (ack_cnt > delta) { ack_cnt -= delta; tcp_cwnd++; }`
            // with delta = (cwnd * beta_scale) >> 3 segments, cwnd in whole segments (tcp_snd_cwnd);
            // counted here in bytes. The loop's count is (ack_cnt - 1) / delta.
            self.ack_cnt += acked;
            let delta = ((((cwnd / a.mss) * LINUX_BETA_SCALE) >> 3).max(1)) * a.mss;
            if self.ack_cnt > delta {
                let n = (self.ack_cnt - 1) / delta;
                self.ack_cnt -= n * delta;
                self.tcp_cwnd += n;
            }
            self.tcp_cwnd as f64
        } else {
            // RFC 9438 4.3: W_est grows by alpha per window acknowledged; alpha is 1 once W_est has
            // reached the window before the reduction.
            let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { 3.0 * (1.0 - BETA) / (1.0 + BETA) };
            self.w_est += alpha * segments_acked / w;
            self.w_est
        };
        let next = if w_cubic(t, self.k, self.origin) < w_est {
            // Reno-friendly region: cwnd = W_est.
            (w_est * mss).max(cwnd as f64)
        } else {
            // RFC 9438 4.4-4.5: towards W_cubic(t + RTT), within [cwnd, 1.5 cwnd].
            let target = w_cubic(t + rtt, self.k, self.origin).clamp(w, 1.5 * w);
            self.frac += (target - w) / w * segments_acked * mss;
            let whole = self.frac.floor();
            self.frac -= whole;
            cwnd as f64 + whole
        };
        (next as u64).min(MAX_CWND)
    }

    fn ssthresh_on_loss(&mut self, l: &LossInfo) -> u64 {
        self.reduce(l.cwnd, l.mss)
    }

    fn ssthresh_on_timeout(&mut self, l: &LossInfo) -> u64 {
        let ssthresh = self.reduce(l.cwnd, l.mss);
        // Linux bictcp_reset on TCP_CA_Loss: W_max forgotten (module comment).
        self.w_max = 0.0;
        ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn loss(cwnd_segments: u64) -> LossInfo {
        LossInfo {
            now: SimTime(0),
            cwnd: cwnd_segments * MSS,
            flight: cwnd_segments * MSS,
            snd_wnd: u64::MAX,
            mss: MSS,
        }
    }

    #[test]
    fn cube_root_is_exact_enough() {
        for x in [1e-9, 0.5, 1.0, 8.0, 75.0, 1e6, 1e12] {
            let y = cbrt(x);
            assert!((y * y * y - x).abs() <= 1e-12 * x.max(1.0), "{x}: {y}");
        }
        assert_eq!(cbrt(27.0), 3.0);
    }

    #[test]
    fn w_cubic_at_chosen_times() {
        // RFC 9438 eq. 1-2 worked by hand: W_max = 100 segments, beta 0.7, so cwnd_epoch = 70
        // and K = cbrt((100 - 70) / 0.4) = cbrt(75) = 4.2172 s. W(0) = 0.4 (-K)^3 + 100 = 70,
        // W(K) = 100 (the plateau), W(2K) = 0.4 K^3 + 100 = 130, W(1 s) = 0.4 (1 - K)^3 + 100.
        let k = cbrt(75.0);
        assert!((k - 4.217_163).abs() < 1e-6);
        assert!((w_cubic(0.0, k, 100.0) - 70.0).abs() < 1e-9);
        assert!((w_cubic(k, k, 100.0) - 100.0).abs() < 1e-12);
        assert!((w_cubic(2.0 * k, k, 100.0) - 130.0).abs() < 1e-9);
        assert!((w_cubic(1.0, k, 100.0) - (100.0 - 0.4 * 3.217_163f64.powi(3))).abs() < 1e-4);
    }

    /// Drive CUBIC from a loss at `w` segments: one ACK per segment, a window's ACKs spread
    /// evenly over each `rtt`; returns cwnd (segments) sampled at each time in `at` (seconds).
    fn drive(c: &mut Cubic, w: u64, rtt_ms: u64, at: &[f64]) -> Vec<f64> {
        let ssthresh = c.ssthresh_on_loss(&loss(w));
        let mut cwnd = ssthresh;
        let mut now = 0u64;
        let mut out = Vec::new();
        let rtt = rtt_ms * 1_000_000;
        for &t in at {
            while (now as f64) < t * 1e9 {
                let per_ack = rtt / (cwnd / MSS).max(1);
                let a = AckInfo {
                    now: SimTime(now),
                    acked: MSS,
                    cwnd,
                    ssthresh,
                    mss: MSS,
                    srtt: Some(rtt),
                    min_rtt: Some(rtt),
                };
                cwnd = c.on_ack(&a);
                now += per_ack;
            }
            out.push(cwnd as f64 / MSS as f64);
        }
        out
    }

    #[test]
    fn the_window_follows_w_cubic_after_a_loss() {
        // A loss at 100 segments: ssthresh 70, W_max 100, K = 4.2172 s. With a 100 ms RTT the
        // window aims at W_cubic(t + 0.1) each ACK and lags it by about one RTT's growth.
        let mut c = Cubic::new();
        let k = cbrt(75.0);
        let times = [1.0, 2.0, k, 6.0, 2.0 * k];
        let got = drive(&mut c, 100, 100, &times);
        for (t, w) in times.iter().zip(&got) {
            let want = w_cubic(*t, k, 100.0);
            assert!((w - want).abs() <= 1.5, "t = {t}: cwnd {w} against W_cubic {want}");
        }
        // Concave below W_max (slowing near it), convex above (speeding up).
        assert!(got[1] - got[0] > got[2] - got[1] - 1e-9);
        assert!(got[4] - got[3] > got[3] - got[2]);
    }

    #[test]
    fn the_reno_friendly_region_takes_over_for_small_windows() {
        // A loss at 10 segments with a 10 ms RTT: K = cbrt(3 / 0.4) = 1.96 s, and after 0.5 s the
        // cubic curve is at W_cubic(0.5) = 0.4 (0.5 - 1.96)^3 + 10 = 8.8 segments. W_est grows by
        // alpha = 3 x 0.3 / 1.7 = 0.53 segments per RTT from 7 until it reaches the 10 before the
        // loss (5.7 RTTs), then by 1 (RFC 9438 4.3): 10 + (50 - 5.7) = 54.3 segments after the 50
        // RTTs of 0.5 s. cwnd follows W_est, as Reno would grow.
        let mut c = Cubic::new();
        let got = drive(&mut c, 10, 10, &[0.5]);
        let k = cbrt(3.0 / 0.4);
        assert!((w_cubic(0.5, k, 10.0) - 8.76).abs() < 0.01);
        let w_est = 10.0 + (50.0 - 3.0 / (0.9 / 1.7));
        assert!((got[0] - w_est).abs() < 3.0, "cwnd {} against W_est {w_est}", got[0]);
    }

    /// A loss at 10 segments with a 10 ms RTT (ssthresh 7), then one ACK per segment, a window's
    /// ACKs per RTT, from cwnd 7 until it reaches 18 segments: the cwnd then, the ACKs it took, and
    /// the ACK at which cwnd first reached each number of segments.
    fn grow_after_loss_at_10(mut c: Cubic) -> (u64, u64, std::collections::BTreeMap<u64, u64>) {
        c.ssthresh_on_loss(&loss(10));
        let (mut cwnd, mut acks, mut now) = (7 * MSS, 0u64, 0u64);
        let mut first_at = std::collections::BTreeMap::new();
        while cwnd < 18 * MSS {
            let a = AckInfo {
                now: SimTime(now),
                acked: MSS,
                cwnd,
                ssthresh: 7 * MSS,
                mss: MSS,
                srtt: Some(10_000_000),
                min_rtt: Some(10_000_000),
            };
            cwnd = c.on_ack(&a);
            acks += 1;
            now += 10_000_000 / (cwnd / MSS);
            first_at.entry(cwnd / MSS).or_insert(acks);
        }
        (cwnd, acks, first_at)
    }

    #[test]
    fn linux_friendliness_keeps_eight_fifteenths_of_a_segment_per_window() {
        // A loss at 10 segments with a 10 ms RTT, as above: ssthresh 7, W_max 10. Linux's estimate
        // (tcp_cubic.c tcp_friendliness) starts at tcp_cwnd = 7 and gains a segment per
        // (cwnd * 15) >> 3 segments acknowledged: 13 at 7 segments, 15 at 8, 16 at 9, 18 at 10, 20
        // at 11, 22 at 12, 24 at 13, 26 at 14, 28 at 15, 30 at 16, 31 at 17 (the loop's strict
        // `>` costs one more segment only at the first step: 14). From 7 to 18 segments is
        // 14 + 15 + 16 + 18 + 20 + 22 + 24 + 26 + 28 + 30 + 31 = 244 segments acknowledged. In 0.5 s
        // (50 RTTs) the cubic curve is at W_cubic(0.5) = 8.76 segments, below: cwnd follows the
        // estimate. One ACK per segment, a window's ACKs per RTT: after 244 ACKs, 18 segments.
        let (cwnd, acks, first_at) = grow_after_loss_at_10(Cubic::linux_friendliness());
        assert_eq!(cwnd, 18 * MSS);
        assert_eq!(first_at[&8], 14);
        assert_eq!(first_at[&9], 14 + 15);
        assert_eq!(first_at[&11], 14 + 15 + 16 + 18);
        assert_eq!(acks, 244);
        // RFC 9438 4.3's estimate reaches the 10 segments before the loss after 3 / 0.529 = 5.7
        // windows and then gains a whole segment per window: 18 segments after about 7 x 5.7 + 10 +
        // ... = 160 segments, far fewer.
        let (_, acks, _) = grow_after_loss_at_10(Cubic::new());
        assert!(acks < 200, "{acks}");
    }

    #[test]
    fn multiplicative_decrease_and_fast_convergence() {
        let mut c = Cubic::new();
        // RFC 9438 4.6: ssthresh = 0.7 cwnd, whole segments, at least 2.
        assert_eq!(c.ssthresh_on_loss(&loss(100)), 70 * MSS);
        assert_eq!(c.w_max, 100.0);
        // 4.7: a second loss below W_max: W_max = cwnd (1 + beta) / 2 = 80 x 0.85 = 68.
        assert_eq!(c.ssthresh_on_loss(&loss(80)), 56 * MSS);
        assert!((c.w_max - 68.0).abs() < 1e-12);
        // A loss above W_max takes W_max = cwnd.
        c.ssthresh_on_loss(&loss(90));
        assert_eq!(c.w_max, 90.0);
        assert_eq!(c.ssthresh_on_loss(&loss(2)), 2 * MSS);
        // A timeout cuts as a loss does and forgets W_max (Linux bictcp_reset).
        let mut c = Cubic::new();
        assert_eq!(c.ssthresh_on_timeout(&loss(100)), 70 * MSS);
        assert_eq!(c.w_max, 0.0);
    }

    #[test]
    fn slow_start_counts_bytes_up_to_ssthresh() {
        let mut c = Cubic::new();
        let a = AckInfo {
            now: SimTime(0),
            acked: 2 * MSS,
            cwnd: 10 * MSS,
            ssthresh: 11 * MSS,
            mss: MSS,
            srtt: None,
            min_rtt: None,
        };
        // 10 + 2 segments, but only 11 in slow start; the last segment's worth goes to the curve.
        let cwnd = c.on_ack(&a);
        assert!((11 * MSS..=12 * MSS).contains(&cwnd), "{cwnd}");
        assert!(c.epoch.is_some());
    }
}
