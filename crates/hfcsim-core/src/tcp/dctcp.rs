//! DCTCP (RFC 8257, Bensley, Thaler, Balasubramanian, Eggert, Judd, 2017): Reno's window growth,
//! and on ECN-Echo a cut by the fraction of marked bytes rather than by half.
//!
//! - **alpha** (Sec. 3.3): an EWMA of the fraction F of acknowledged bytes whose ACKs carried ECE,
//!   updated once per window of data: every ACK adds its newly acknowledged bytes to BytesAcked,
//!   and to BytesMarked if it carries ECE; when snd_una passes WindowEnd, alpha = (1 - g) alpha +
//!   g F with g = 1/16 (the RFC's suggested gain), the counters restart and WindowEnd = snd_nxt.
//!   WindowEnd starts at 0, the stream's first byte (Linux `dctcp_init` takes snd_nxt when the
//!   connection starts): the first ACK of data closes a first, short window.
//! - **alpha's initial value**: 1 (chosen): RFC 8257 Sec. 3.3 leaves it to the implementation, and
//!   Linux starts at its maximum (`dctcp_alpha_on_init` = DCTCP_MAX_ALPHA), the conservative choice
//!   that halves the window at the first mark as RFC 3168 would.
//! - **the cut** (Sec. 3.3): cwnd * (1 - alpha / 2), at least 2 segments (Linux `dctcp_ssthresh`),
//!   here in bytes, the reduction rounded down; the sender applies it at most once per round trip
//!   (tcp/sender/today.rs, as RFC 3168 Sec. 6.1.2).
//! - **loss** (Sec. 3.4): "the same way as conventional TCP": Reno's halving.
//! - **growth**: Reno's as Linux runs it (byte counting; Linux's DCTCP calls `tcp_reno_cong_avoid`).
//!
//! alpha is an f64: g = 1/16 and the fractions of a hand-made test are exact in binary.

use super::cc::{AckInfo, CongestionControl, Feedback, LossInfo, Reno};

/// RFC 8257 Sec. 3.3: the estimation gain g.
pub const G: f64 = 1.0 / 16.0;

/// BytesAcked and BytesMarked over one window of data, and alpha's update from their fraction F
/// (RFC 8257 Sec. 3.3): DCTCP's, and TCP Prague's, which keeps the same EWMA (prague.rs).
#[derive(Clone, Debug, Default)]
pub(crate) struct MarkedBytes {
    acked: u64,
    marked: u64,
}

impl MarkedBytes {
    /// An ACK's newly acknowledged bytes, marked if it echoed CE.
    pub(crate) fn count(&mut self, acked: u64, ece: bool) {
        self.acked += acked;
        if ece {
            self.marked += acked;
        }
    }

    /// The window is over: alpha = (1 - g) alpha + g F (F = 0 when nothing was acknowledged), and
    /// the counters restart.
    pub(crate) fn next_alpha(&mut self, alpha: f64) -> f64 {
        let f = if self.acked > 0 { self.marked as f64 / self.acked as f64 } else { 0.0 };
        *self = MarkedBytes::default();
        (1.0 - G) * alpha + G * f
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    reno: Reno,
    alpha: f64,
    bytes: MarkedBytes,
    window_end: u64,
}

impl Default for Dctcp {
    fn default() -> Self {
        Self::new()
    }
}

impl Dctcp {
    pub fn new() -> Dctcp {
        Dctcp { reno: Reno::linux(), alpha: 1.0, bytes: MarkedBytes::default(), window_end: 0 }
    }

    /// The current estimate of the fraction of marked bytes.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, a: &AckInfo) -> u64 {
        self.reno.on_ack(a)
    }

    fn ssthresh_on_loss(&mut self, l: &LossInfo) -> u64 {
        self.reno.ssthresh_on_loss(l)
    }

    fn ssthresh_on_timeout(&mut self, l: &LossInfo) -> u64 {
        self.reno.ssthresh_on_timeout(l)
    }

    fn ssthresh_on_ecn(&mut self, l: &LossInfo) -> u64 {
        let cut = (l.cwnd as f64 * self.alpha / 2.0) as u64;
        l.cwnd.saturating_sub(cut).max(2 * l.mss)
    }

    fn on_ecn_feedback(&mut self, fb: &Feedback) {
        self.bytes.count(fb.acked, fb.ece);
        if fb.snd_una <= self.window_end {
            return;
        }
        self.alpha = self.bytes.next_alpha(self.alpha);
        self.window_end = fb.snd_nxt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    const MSS: u64 = 1000;

    /// The feedback of an ACK of `acked` bytes (DCTCP reads the bytes, ECE and the edges only).
    pub(crate) fn fb(acked: u64, ece: bool, snd_una: u64, snd_nxt: u64) -> Feedback {
        Feedback { now: SimTime(0), acked, ece, snd_una, snd_nxt, cwnd: 0, ssthresh: 0, srtt: None }
    }

    fn ecn(cwnd: u64) -> LossInfo {
        LossInfo { now: SimTime(0), cwnd, flight: cwnd, snd_wnd: u64::MAX, mss: MSS }
    }

    /// ACKs of one segment each, the sender keeping 7 segments out past each (snd_nxt = snd_una +
    /// 7 MSS): a window closed by the ACK to u sets WindowEnd = u + 7000, so the next window is
    /// exactly the 8 ACKs to u + 1000 ... u + 8000, the 8th the first past WindowEnd.
    struct Acks {
        una: u64,
    }

    impl Acks {
        fn ack(&mut self, d: &mut Dctcp, ece: bool) {
            self.una += MSS;
            d.on_ecn_feedback(&fb(MSS, ece, self.una, self.una + 7 * MSS));
        }

        /// One window of 8 ACKs, the first `marked` of them with ECE.
        fn window(&mut self, d: &mut Dctcp, marked: usize) {
            for i in 0..8 {
                self.ack(d, i < marked);
            }
        }
    }

    #[test]
    fn alpha_over_windows_of_0_4_and_8_of_8_marked_and_the_cut() {
        let mut d = Dctcp::new();
        let mut a = Acks { una: 0 };
        assert_eq!(d.alpha(), 1.0); // Linux's initial value (module comment)
                                    // The first ACK (to 1000, unmarked) passes WindowEnd = 0 alone: F = 0,
                                    // alpha = 15/16 * 1 + 1/16 * 0 = 15/16; WindowEnd = 8000.
        a.ack(&mut d, false);
        assert_eq!(d.alpha(), 15.0 / 16.0);
        // Seven ACKs (to 2000 ... 8000) do not pass WindowEnd: alpha holds.
        for _ in 0..7 {
            a.ack(&mut d, true);
        }
        assert_eq!(d.alpha(), 15.0 / 16.0);
        // ... and the 8th (to 9000) closes the window: 7000 of 8000 bytes marked, F = 7/8:
        // alpha = 15/16 * 15/16 + 1/16 * 7/8 = 225/256 + 14/256 = 239/256.
        a.ack(&mut d, false);
        assert_eq!(d.alpha(), 239.0 / 256.0);
        // 0 of 8 marked: alpha = 239/256 * 15/16 = 3585/4096.
        a.window(&mut d, 0);
        assert_eq!(d.alpha(), 3585.0 / 4096.0);
        // 4 of 8 marked (F = 1/2): alpha = 3585/4096 * 15/16 + 1/32 = (53775 + 2048) / 65536
        // = 55823/65536.
        a.window(&mut d, 4);
        assert_eq!(d.alpha(), 55823.0 / 65536.0);
        // 8 of 8 marked (F = 1): alpha = 55823/65536 * 15/16 + 1/16 = (837345 + 65536) / 1048576
        // = 902881/1048576 = 0.86105442...
        a.window(&mut d, 8);
        assert_eq!(d.alpha(), 902_881.0 / 1_048_576.0);
        // The cut (Sec. 3.3): cwnd * (1 - alpha / 2); at cwnd = 20000 the reduction is
        // floor(20000 * 902881 / 2097152) = floor(8610.54...) = 8610: ssthresh 11390.
        assert_eq!(d.ssthresh_on_ecn(&ecn(20_000)), 11_390);
        // A loss halves as Reno (Sec. 3.4): 20 segments -> 10.
        assert_eq!(d.ssthresh_on_loss(&ecn(20_000)), 10_000);
        // Never below 2 segments: with alpha = 1 a 3000-byte window would fall to 1500.
        assert_eq!(Dctcp::new().ssthresh_on_ecn(&ecn(3000)), 2000);
        assert_eq!(Dctcp::new().ssthresh_on_ecn(&ecn(10_000)), 5000);
    }

    #[test]
    fn duplicate_acks_count_no_bytes() {
        // An ACK that acknowledges nothing new adds 0 to both counters, whatever its ECE.
        let mut d = Dctcp::new();
        d.on_ecn_feedback(&fb(MSS, false, MSS, 8 * MSS)); // first window: alpha 15/16, WindowEnd 8000
        d.on_ecn_feedback(&fb(0, true, MSS, 8 * MSS));
        for k in 2..=9 {
            d.on_ecn_feedback(&fb(MSS, false, k * MSS, (k + 7) * MSS));
        }
        assert_eq!(d.alpha(), 225.0 / 256.0);
    }
}
