//! TCP pacing as Linux runs it inside TCP when no fq qdisc paces for it (`tcp.pacing`): each
//! segment leaves no earlier than a departure time (EDT) that the previous one advanced by its
//! length at the pacing rate.
//!
//! - **The rate** (net/ipv4/tcp_input.c `tcp_update_pacing_rate`, after every ACK and when the
//!   connection is set up): cwnd * mss / srtt, at `tcp_pacing_ss_ratio` = 200 % while cwnd <
//!   ssthresh / 2 (slow start with room left) and `tcp_pacing_ca_ratio` = 120 % otherwise, of the
//!   larger of cwnd and the packets out (sent, not cumulatively acknowledged). Without an RTT sample Linux leaves the rate
//!   undivided, effectively unlimited: no pacing until the first sample. Here in bytes and
//!   nanoseconds, rate (bytes/s) = max(cwnd, flight) x ratio / 100 / srtt, integer division
//!   (Linux divides by srtt in 1/8 us; hfcsim's srtt is in ns). A congestion control may give its
//!   own rate (TCP Prague, `prague.rs`).
//! - **The departure time** (net/ipv4/tcp_output.c `__tcp_transmit_skb` and
//!   `tcp_update_skb_after_send`): a segment is stamped max(EDT, now); then EDT advances by its
//!   length x 10^9 / rate ns, less a credit of up to half of that for the time the sender sat
//!   idle past the old EDT ("OS jitter": the stamp's jump from the previous EDT to now). The first
//!   9 data segments sent do not advance it ("Original sch_fq does not pace first 10 MSS":
//!   `data_segs_out`, counted before the test, must be at least 10). The length is the payload:
//!   the skb there is "completely headerless".
//! - **The check** (`tcp_pacing_check`, in `tcp_write_xmit` and `tcp_xmit_retransmit_queue`): no
//!   segment goes out while EDT is later than now; the pacing timer (`pacing_timer`, an hrtimer at
//!   EDT) sends again then.
//!
//! Chosen where Linux differs by its machinery: each segment is paced on its own. Linux paces
//! TSO/GSO aggregates (`tcp_tso_autosize`: about 1 ms of data at the rate, at least 2 segments),
//! so a real sender's departures come in small bursts; hfcsim's sender has no aggregates. The
//! fast retransmit that starts recovery, the tail loss probe and the RTO's first retransmission
//! are not held (they advance EDT, as in Linux, but go at once; Linux sends the probe and the
//! RTO's retransmission without the check, and the recovery's first retransmission through it).

use crate::time::{Nanos, SimTime};

/// Linux `sysctl_tcp_pacing_ss_ratio` (net/ipv4/tcp_ipv4.c default), percent.
pub const SS_RATIO: u64 = 200;
/// Linux `sysctl_tcp_pacing_ca_ratio`, percent.
pub const CA_RATIO: u64 = 120;
/// Linux `tcp_update_skb_after_send`: `data_segs_out >= 10` before a segment advances EDT.
pub const UNPACED_SEGMENTS: u64 = 10;

/// What a pacing-rate rule reads: the window, the data in flight and the RTT, bytes and ns.
#[derive(Clone, Copy, Debug)]
pub struct PacingInput {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Bytes sent and not cumulatively acknowledged (Linux `packets_out`).
    pub outstanding: u64,
    /// Bytes in flight by the pipe (Linux `tcp_packets_in_flight`).
    pub flight: u64,
    pub mss: u64,
    /// A full segment's bytes on the wire (mss plus the TCP/IP headers; Prague paces by it).
    pub mtu: u64,
    pub srtt: Option<Nanos>,
}

/// Linux `tcp_update_pacing_rate` (module comment), bytes per second; None = unlimited.
pub fn linux_rate(p: &PacingInput) -> Option<u64> {
    let ratio = if p.cwnd < p.ssthresh / 2 { SS_RATIO } else { CA_RATIO };
    let srtt = p.srtt.filter(|&s| s > 0)?;
    // bytes/s = window x ratio / 100 / (srtt / 1e9) = window x ratio x 1e7 / srtt
    let rate = p.cwnd.max(p.outstanding) as u128 * ratio as u128 * 10_000_000 / srtt as u128;
    Some(rate.min(u64::MAX as u128) as u64)
}

/// The departure-time state: O(1), no allocation.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Bytes per second; None until the first rate with an RTT (unlimited).
    pub rate: Option<u64>,
    /// Linux `tcp_wstamp_ns`: the earliest departure of the next segment.
    pub edt: SimTime,
    /// Linux `data_segs_out`: data segments sent, retransmissions included.
    segs_out: u64,
}

impl Pacer {
    /// Linux `tcp_pacing_check`: Some(EDT) when the next segment must wait until then.
    pub fn wait_until(&self, now: SimTime) -> Option<SimTime> {
        (self.edt > now).then_some(self.edt)
    }

    /// A data segment of `len` payload bytes leaves at `now` (`__tcp_transmit_skb`, then
    /// `tcp_update_skb_after_send`).
    pub fn on_send(&mut self, now: SimTime, len: u64) {
        let prior = self.edt;
        self.edt = self.edt.max(now);
        self.segs_out += 1;
        let Some(rate) = self.rate.filter(|&r| r > 0) else { return };
        if self.segs_out < UNPACED_SEGMENTS {
            return;
        }
        let mut len_ns = (len as u128 * 1_000_000_000 / rate as u128).min(u64::MAX as u128) as u64;
        let credit = self.edt.0 - prior.0;
        len_ns -= (len_ns / 2).min(credit);
        self.edt = SimTime(self.edt.0.saturating_add(len_ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(cwnd: u64, ssthresh: u64, outstanding: u64, srtt_ms: u64) -> PacingInput {
        PacingInput { cwnd, ssthresh, outstanding, flight: 0, mss: 1000, mtu: 1040, srtt: Some(srtt_ms * 1_000_000) }
    }

    #[test]
    fn linux_rate_is_200_percent_in_early_slow_start_and_120_after() {
        // 10 segments of 1000 B in 10 ms: 1 MB/s; cwnd 10000 < ssthresh / 2 = 50000: 200 %.
        assert_eq!(linux_rate(&input(10_000, 100_000, 0, 10)), Some(2_000_000));
        // cwnd 60000 >= 100000 / 2: 120 % of 6 MB/s.
        assert_eq!(linux_rate(&input(60_000, 100_000, 0, 10)), Some(7_200_000));
        // More out than cwnd (after a cut): the packets out count.
        assert_eq!(linux_rate(&input(10_000, 10_000, 20_000, 10)), Some(2_400_000));
        // No RTT sample: unlimited.
        assert_eq!(linux_rate(&PacingInput { srtt: None, ..input(10_000, 10_000, 0, 10) }), None);
    }

    #[test]
    fn departures_after_the_first_nine_are_spaced_by_length_over_rate_less_idle_credit() {
        // 1 MB/s: a 1000-byte segment takes 1 ms.
        let mut p = Pacer { rate: Some(1_000_000), ..Pacer::default() };
        let t0 = SimTime(5_000_000);
        // Segments 1-9 at t0 do not advance EDT (data_segs_out < 10); the 10th does: EDT = t0 +
        // 1 ms (credit: EDT jumped from 0 to t0 on the first send, not on the 10th: 0).
        for _ in 0..9 {
            assert_eq!(p.wait_until(t0), None);
            p.on_send(t0, 1000);
        }
        assert_eq!(p.edt, t0);
        p.on_send(t0, 1000);
        assert_eq!(p.edt, SimTime(6_000_000));
        assert_eq!(p.wait_until(t0), Some(SimTime(6_000_000)));
        // Sent on time at 6 ms: 7 ms. Then idle until 7.3 ms: credit 0.3 ms off the next 1 ms.
        p.on_send(SimTime(6_000_000), 1000);
        assert_eq!(p.edt, SimTime(7_000_000));
        p.on_send(SimTime(7_300_000), 1000);
        assert_eq!(p.edt, SimTime(8_000_000)); // 7.3 + (1 - 0.3)
                                               // Idle long (until 20 ms): the credit is capped at half: 20 + 0.5 ms.
        p.on_send(SimTime(20_000_000), 1000);
        assert_eq!(p.edt, SimTime(20_500_000));
    }
}
