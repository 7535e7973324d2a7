//! Congestion control as a hook the recovery variants share (docs/design.md, habit 4; smoltcp's
//! `congestion.rs`, ns-3's `TcpCongestionOps::GetSsThresh`): each hook returns the new value
//! (a cwnd or an ssthresh, bytes) instead of poking the sender's state.
//!
//! The sender owns cwnd, ssthresh and loss recovery (Net/3's fast recovery, NewReno, RFC 6675 with
//! PRR); a controller only says how the window grows on an ACK and how far it falls on a loss.

use super::pacing::PacingInput;
use crate::time::{Nanos, SimTime};

/// What a controller sees of an ACK that acknowledged new data outside loss recovery.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    pub now: SimTime,
    /// Bytes newly acknowledged (cumulatively, plus newly SACKed if the sender counts those).
    pub acked: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
    /// Smoothed RTT, if sampled.
    pub srtt: Option<Nanos>,
    /// The smallest RTT sampled on the connection, if any.
    pub min_rtt: Option<Nanos>,
}

/// What a controller sees when the sender detects a loss (fast retransmit, a RACK loss, or RTO).
#[derive(Clone, Copy, Debug)]
pub struct LossInfo {
    pub now: SimTime,
    pub cwnd: u64,
    /// Bytes in flight when the loss was detected (RFC 5681 eq. (4) FlightSize).
    pub flight: u64,
    /// The peer's advertised window.
    pub snd_wnd: u64,
    pub mss: u64,
}

/// The hook. Implemented by `Reno` and `Cubic`; the sender holds a `Controller`.
pub trait CongestionControl {
    /// cwnd after an ACK of new data outside recovery (slow start or congestion avoidance).
    fn on_ack(&mut self, ack: &AckInfo) -> u64;
    /// ssthresh after a loss detected by ACKs (entering fast recovery).
    fn ssthresh_on_loss(&mut self, loss: &LossInfo) -> u64;
    /// ssthresh after a retransmission timeout (cwnd becomes one segment, the loss window).
    fn ssthresh_on_timeout(&mut self, loss: &LossInfo) -> u64;
    /// ssthresh after an ECN-Echo (RFC 3168 Sec. 6.1.2: the same reduction as for a loss, by
    /// default; DCTCP's is its own, RFC 8257 Sec. 3.3).
    fn ssthresh_on_ecn(&mut self, ecn: &LossInfo) -> u64 {
        self.ssthresh_on_loss(ecn)
    }
    /// Every ACK's ECN feedback with ECN on. Only the scalable controls count it (DCTCP, RFC 8257
    /// Sec. 3.3; TCP Prague).
    fn on_ecn_feedback(&mut self, _f: &Feedback) {}
    /// The pacing rate, bytes per second (None: unlimited), when `tcp.pacing` is on: Linux's
    /// `tcp_update_pacing_rate` unless the control sets its own (`pacing.rs`).
    fn pacing_rate(&self, p: &PacingInput) -> Option<u64> {
        super::pacing::linux_rate(p)
    }
    /// Whether the window grows on ACKs while an ECN reduction is under way (Linux `TCP_CA_CWR`).
    /// Linux's controls other than Prague do not (`tcp_cong_control` runs PRR in CWR); Prague's
    /// `cong_control` grows on every ACK.
    fn grows_while_reducing(&self) -> bool {
        false
    }
}

/// One ACK's ECN feedback as the sender sees it after the ACK (ECN on).
#[derive(Clone, Copy, Debug)]
pub struct Feedback {
    pub now: SimTime,
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// The ACK carried ECE (with DCTCP's feedback: the bytes it acknowledges arrived CE).
    pub ece: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub srtt: Option<Nanos>,
}

/// RFC 7323 2.3: the largest window with the largest window scale (Net/3 caps cwnd at
/// `TCP_MAXWIN << snd_scale`).
pub const MAX_CWND: u64 = 65_535 << 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavour {
    /// Net/3 `tcp_input`: slow start while cwnd <= ssthresh (or < with ns-2's opencwnd).
    Net3 { slow_start_at_ssthresh: bool },
    /// Linux `tcp_reno_cong_avoid`: byte counting (RFC 3465 without its limit L).
    Linux,
}

/// Reno's window growth and halving, as Net/3 or as Linux does it.
#[derive(Clone, Debug)]
pub struct Reno {
    flavour: Flavour,
    /// Linux `snd_cwnd_cnt`, in bytes: acknowledged bytes towards the next MSS of growth.
    acc: u64,
}

impl Reno {
    /// Net/3: one segment per ACK in slow start, mss * mss / cwnd per ACK in congestion avoidance
    /// (Stevens vol. 2, 29.6), whatever the ACK covers.
    pub fn net3(slow_start_at_ssthresh: bool) -> Reno {
        Reno { flavour: Flavour::Net3 { slow_start_at_ssthresh }, acc: 0 }
    }

    /// Linux: `tcp_slow_start` grows cwnd by the bytes acknowledged, up to ssthresh, and what is
    /// left over goes to `tcp_cong_avoid_ai`, one MSS per cwnd acknowledged.
    pub fn linux() -> Reno {
        Reno { flavour: Flavour::Linux, acc: 0 }
    }
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, a: &AckInfo) -> u64 {
        let (cwnd, mss) = (a.cwnd, a.mss);
        match self.flavour {
            Flavour::Net3 { slow_start_at_ssthresh } => {
                let ca = if slow_start_at_ssthresh { cwnd > a.ssthresh } else { cwnd >= a.ssthresh };
                let incr = if ca { mss * mss / cwnd } else { mss };
                (cwnd + incr).min(MAX_CWND)
            }
            Flavour::Linux => {
                let mut cwnd = cwnd;
                let mut acked = a.acked;
                if cwnd < a.ssthresh {
                    // tcp_slow_start: cwnd = min(cwnd + acked, ssthresh); the rest goes on.
                    let grown = (cwnd + acked).min(a.ssthresh);
                    acked -= grown - cwnd;
                    cwnd = grown;
                }
                if acked > 0 {
                    // tcp_cong_avoid_ai with w = cwnd: one MSS per cwnd acknowledged.
                    self.acc += acked;
                    if self.acc >= cwnd {
                        let grow = self.acc / cwnd;
                        self.acc -= grow * cwnd;
                        cwnd += grow * mss;
                    }
                }
                cwnd.min(MAX_CWND)
            }
        }
    }

    fn ssthresh_on_loss(&mut self, l: &LossInfo) -> u64 {
        self.acc = 0;
        match self.flavour {
            // Net/3: max(min(snd_wnd, cwnd) / 2, 2 segments), in whole segments.
            Flavour::Net3 { .. } => (l.snd_wnd.min(l.cwnd) / 2 / l.mss).max(2) * l.mss,
            // tcp_reno_ssthresh: max(cwnd >> 1, 2) packets.
            Flavour::Linux => (l.cwnd / l.mss / 2).max(2) * l.mss,
        }
    }

    fn ssthresh_on_timeout(&mut self, l: &LossInfo) -> u64 {
        self.ssthresh_on_loss(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(cwnd: u64, ssthresh: u64, acked: u64) -> AckInfo {
        AckInfo { now: SimTime(0), acked, cwnd, ssthresh, mss: 1000, srtt: None, min_rtt: None }
    }

    fn loss(cwnd: u64, snd_wnd: u64) -> LossInfo {
        LossInfo { now: SimTime(0), cwnd, flight: cwnd, snd_wnd, mss: 1000 }
    }

    #[test]
    fn net3_grows_a_segment_per_ack_then_mss_squared_over_cwnd() {
        let mut r = Reno::net3(true);
        assert_eq!(r.on_ack(&ack(4000, 8000, 2000)), 5000); // slow start: one MSS per ACK
        assert_eq!(r.on_ack(&ack(8000, 8000, 1000)), 9000); // cwnd <= ssthresh: still slow start
        assert_eq!(r.on_ack(&ack(9000, 8000, 1000)), 9111); // 1000 * 1000 / 9000 = 111
        let mut ns2 = Reno::net3(false);
        assert_eq!(ns2.on_ack(&ack(8000, 8000, 1000)), 8125); // ns-2: cwnd == ssthresh is CA
        assert_eq!(r.on_ack(&ack(MAX_CWND, 8000, 1000)), MAX_CWND);
        // Net/3 halves min(snd_wnd, cwnd), whole segments, at least 2.
        assert_eq!(r.ssthresh_on_loss(&loss(20_000, 9000)), 4000);
        assert_eq!(r.ssthresh_on_loss(&loss(3000, 9000)), 2000);
    }

    #[test]
    fn linux_counts_bytes() {
        let mut r = Reno::linux();
        // Slow start by the bytes acknowledged: a 2-MSS ACK opens cwnd by 2 MSS, but not past
        // ssthresh; the rest counts towards congestion avoidance.
        assert_eq!(r.on_ack(&ack(4000, 10_000, 2000)), 6000);
        assert_eq!(r.on_ack(&ack(9000, 10_000, 2000)), 10_000);
        assert_eq!(r.acc, 1000);
        // Congestion avoidance: one MSS per cwnd (10 segments) acknowledged, not per ACK.
        let mut cwnd = 10_000;
        let mut r = Reno::linux();
        for _ in 0..4 {
            cwnd = r.on_ack(&ack(cwnd, 5000, 2000));
        }
        assert_eq!(cwnd, 10_000); // 8000 bytes acknowledged
        cwnd = r.on_ack(&ack(cwnd, 5000, 2000));
        assert_eq!(cwnd, 11_000); // the tenth segment
                                  // tcp_reno_ssthresh halves cwnd (not the peer's window).
        assert_eq!(r.ssthresh_on_loss(&loss(21_000, 9000)), 10_000);
        assert_eq!(r.ssthresh_on_loss(&loss(3000, 9000)), 2000);
    }
}
