//! RACK-TLP (RFC 8985): loss detection by time, and the tail loss probe, as pure state.
//!
//! RACK (Sec. 6) remembers the most recently *sent* segment known delivered (`xmit_ts`,
//! `end_seq`) and the RTT it measured. A segment still unacknowledged that was sent before it is
//! lost once `xmit_ts + rtt + reo_wnd` has passed: loss is a matter of time, not of counting
//! duplicate ACKs, so reordering shorter than the reordering window costs nothing, and a lost
//! retransmission is detected like any other segment. TLP (Sec. 7) sends a probe 2 x SRTT after
//! the last transmission when no ACK came, so a loss at the tail of a flight is repaired by
//! RACK's machinery instead of by the retransmission timer.
//!
//! D-SACK (RFC 2883, `tcp.dsack`): with `tcp.rack_reo_wnd_dsack` the reordering window widens by
//! min_RTT / 4 for each round trip that brings a D-SACK (Sec. 6.2 step 4, `update_reo_wnd`), and a
//! D-SACK of a retransmitted probe shows it unneeded (Sec. 7.4.2, `Tlp::on_ack`). Without them the
//! window stays min_RTT / 4, and a TLP retransmission is judged as Linux's `tcp_process_tlp_ack`
//! does without D-SACK: an ACK above the probe's end is a repaired loss, a pure duplicate ACK at it
//! none. Without timestamps, Sec. 6.2 step 2's
//! retransmission-ambiguity test is the RTT one: a retransmitted segment delivered less than
//! min_RTT after it was resent is taken as the original's delivery and ignored.

use super::segs::Seg;
use crate::time::{Nanos, SimTime};

/// RFC 8985 6.1: whether a segment sent at `t1` ending at `seq1` was sent after one sent at `t2`
/// ending at `seq2` (ties go to the higher sequence).
pub fn sent_after(t1: SimTime, seq1: u64, t2: SimTime, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// Linux TCP_RACK_RECOVERY_THRESH (tcp_recovery.c; RFC 8985 6.2 step 4: 16): recoveries without a
/// D-SACK that a widened reordering window persists for.
pub const RECOVERY_THRESH: u32 = 16;

/// RACK's state (RFC 8985 6.1).
#[derive(Clone, Debug)]
pub struct Rack {
    /// The latest transmission time of the most recently sent segment delivered.
    pub xmit_ts: SimTime,
    pub end_seq: u64,
    /// The RTT of that segment's delivery.
    pub rtt: Nanos,
    /// The highest sequence delivered (`RACK.fack`).
    pub fack: u64,
    pub reordering_seen: bool,
    /// Whether RACK has seen any delivery.
    pub armed: bool,
    /// The reordering window in steps of min_RTT / 4 (`RACK.reo_wnd_mult`; Linux `reo_wnd_steps`).
    pub reo_wnd_mult: u32,
    /// Recoveries the widened window persists for (`RACK.reo_wnd_persist`).
    pub reo_wnd_persist: u32,
    /// snd.nxt when the window last widened: a D-SACK counts again once snd.una reaches it
    /// (`RACK.dsack_round`).
    pub dsack_round: Option<u64>,
}

impl Default for Rack {
    fn default() -> Rack {
        Rack {
            xmit_ts: SimTime::ZERO,
            end_seq: 0,
            rtt: 0,
            fack: 0,
            reordering_seen: false,
            armed: false,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            dsack_round: None,
        }
    }
}

impl Rack {
    pub fn new() -> Rack {
        Rack::default()
    }

    /// RFC 8985 6.2 step 4 (`RACK_update_reo_wnd`'s D-SACK part) on an ACK, after snd.una moved
    /// to `snd_una`; `dsack`: it carries a D-SACK that counts (Linux `tcp_dsack_seen`: reordering
    /// seen, not a probe's). One widening per round trip: a D-SACK counts when no round is open,
    /// the round closing once snd.una reaches the snd.nxt of its opening (the RFC's dsack_round;
    /// Linux compares delivery counts instead). Linux resets the window once the persistence is
    /// used up and an ACK brings no D-SACK (tcp_rack_update_reo_wnd); the steps stop at 255 (u8).
    pub fn update_reo_wnd(&mut self, dsack: bool, snd_una: u64, snd_nxt: u64) {
        if self.dsack_round.is_some_and(|r| snd_una >= r) {
            self.dsack_round = None;
        }
        if dsack && self.dsack_round.is_none() {
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_mult = (self.reo_wnd_mult + 1).min(255);
            self.reo_wnd_persist = RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// A fast or RTO recovery ended without being undone (RFC 8985 6.2 step 4: "exiting Fast or
    /// RTO recovery"; Linux tcp_try_undo_recovery's `reo_wnd_persist--`).
    pub fn on_recovery_end(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
    }

    /// RFC 8985 6.2 step 2 (`RACK_update`) for a segment newly delivered (acknowledged or SACKed)
    /// at `now`, and step 3 (`RACK_detect_reordering`).
    pub fn on_delivered(&mut self, seg: &Seg, now: SimTime, min_rtt: Nanos) {
        // Step 3: a never-retransmitted segment delivered below the highest delivered one was
        // reordered.
        if seg.end > self.fack {
            self.fack = seg.end;
        } else if seg.end < self.fack && !seg.retransmitted {
            self.reordering_seen = true;
        }
        let rtt = now - seg.sent_at;
        // Step 2: a retransmission delivered within min_RTT of being resent may be the original's
        // delivery: ambiguous, ignored.
        if seg.retransmitted && rtt < min_rtt {
            return;
        }
        // Step 2: RACK.rtt follows every unambiguous delivery (the caller hands them in order of
        // transmission, so the last is the most recently sent); only xmit_ts and end_seq wait for
        // a segment sent after RACK's. A segment delivered late by reordering thus lengthens
        // RACK.rtt, and the loss deadlines with it.
        self.rtt = rtt;
        if !self.armed || sent_after(seg.sent_at, seg.end, self.xmit_ts, self.end_seq) {
            self.xmit_ts = seg.sent_at;
            self.end_seq = seg.end;
            self.armed = true;
        }
    }

    /// RFC 8985 6.2 step 4 (`RACK_update_reo_wnd`): 0 until reordering has been seen if the
    /// sender is in recovery or DupThresh segments are SACKed (so RACK then acts at once, as
    /// duplicate-ACK counting would); else `reo_wnd_mult` x min_RTT / 4, at most SRTT (Linux
    /// `tcp_rack_reo_wnd`).
    pub fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segments: u32,
        dupthresh: u32,
        srtt: Nanos,
        min_rtt: Nanos,
    ) -> Nanos {
        if !self.reordering_seen && (in_recovery || sacked_segments >= dupthresh) {
            return 0;
        }
        (min_rtt / 4 * self.reo_wnd_mult as Nanos).min(srtt)
    }

    /// RFC 8985 6.2 step 5 (`RACK_detect_loss`) for one unacknowledged segment: marks it lost if
    /// it was sent before RACK's segment and `xmit_ts + rtt + reo_wnd` has passed; else returns
    /// the time left before it would be. A segment already deemed lost and not yet resent is
    /// skipped (Linux `tcp_rack_detect_loss`), as is a SACKed one.
    pub fn check(&self, seg: &mut Seg, now: SimTime, reo_wnd: Nanos) -> Option<Nanos> {
        if !self.armed || seg.sacked || (seg.lost && !seg.retrans_in_flight) {
            return None;
        }
        if !sent_after(self.xmit_ts, self.end_seq, seg.sent_at, seg.end) {
            return None;
        }
        let deadline = seg.sent_at + self.rtt + reo_wnd;
        if deadline <= now {
            seg.lost = true;
            seg.retrans_in_flight = false;
            None
        } else {
            Some(deadline - now)
        }
    }
}

/// The largest of the remaining times `Rack::check` returned: RFC 8985 6.3 arms the reordering
/// timer for it (`RACK_detect_loss_and_arm_timer`: `timeout = max(remaining, timeout)`).
pub fn reorder_timeout(left: impl IntoIterator<Item = Option<Nanos>>) -> Option<Nanos> {
    left.into_iter().flatten().max()
}

/// The tail loss probe's state (RFC 8985 7).
#[derive(Clone, Debug)]
pub struct Tlp {
    /// The peer's worst-case delayed-ACK time (WCDelAckT), added with one segment in flight.
    pub max_ack_delay: Nanos,
    /// snd.nxt when the outstanding probe was sent (`TLP.end_seq`); None: no probe outstanding.
    pub end_seq: Option<u64>,
    /// The outstanding probe was a retransmission (`TLP.is_retrans`).
    pub is_retrans: bool,
}

/// What the ACK of an outstanding probe says (RFC 8985 7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlpOutcome {
    /// No probe outstanding, or the ACK does not reach it.
    Pending,
    /// The probe (new data) was delivered: the episode ends.
    Delivered,
    /// A retransmitted probe was acknowledged: it repaired a loss, so the sender reduces cwnd as
    /// on a loss (7.4.2, Linux `tcp_process_tlp_ack` entering CWR).
    RepairedLoss,
}

impl Tlp {
    pub fn new(max_ack_delay: Nanos) -> Tlp {
        Tlp { max_ack_delay, end_seq: None, is_retrans: false }
    }

    /// A probe is outstanding (7.1: at most one per episode).
    pub fn outstanding(&self) -> bool {
        self.end_seq.is_some()
    }

    /// RFC 8985 7.2: PTO = 2 x SRTT (1 s without an RTT sample), plus the peer's delayed-ACK time
    /// when one segment is in flight, never later than the RTO would fire (`rto_left`).
    pub fn pto(&self, srtt: Option<Nanos>, flight_segments: u32, rto_left: Nanos) -> Nanos {
        let pto = match srtt {
            Some(srtt) => {
                let mut pto = 2 * srtt;
                if flight_segments == 1 {
                    pto += self.max_ack_delay;
                }
                pto
            }
            None => 1_000_000_000,
        };
        pto.min(rto_left)
    }

    /// A probe went out at snd.nxt = `end_seq` (7.3).
    pub fn on_probe_sent(&mut self, end_seq: u64, is_retrans: bool) {
        self.end_seq = Some(end_seq);
        self.is_retrans = is_retrans;
    }

    /// The episode ends without a verdict (recovery or an RTO began).
    pub fn reset(&mut self) {
        self.end_seq = None;
    }

    /// RFC 8985 7.4 (Linux `tcp_process_tlp_ack`) for an ACK of `ack`; `pure_dup`: a duplicate
    /// ACK carrying no SACK information and no window update; `dsack`: it D-SACKs the probe's
    /// segment (Linux FLAG_DSACK_TLP). A probe of new data ends the episode once acknowledged. A
    /// retransmitted probe: a D-SACK of it means the original and the probe both arrived: no loss
    /// (7.4.2); else an ACK above TLP.end_seq shows data sent after the probe arrived, so the probe
    /// repaired a loss; a pure duplicate ACK at TLP.end_seq means no loss, as the D-SACK; any other
    /// ACK at or below it leaves the episode pending.
    pub fn on_ack(&mut self, ack: u64, pure_dup: bool, dsack: bool) -> TlpOutcome {
        let Some(end) = self.end_seq else { return TlpOutcome::Pending };
        if ack < end {
            return TlpOutcome::Pending;
        }
        if !self.is_retrans || dsack {
            self.end_seq = None;
            return TlpOutcome::Delivered;
        }
        if ack > end {
            self.end_seq = None;
            TlpOutcome::RepairedLoss
        } else if pure_dup {
            self.end_seq = None;
            TlpOutcome::Delivered
        } else {
            TlpOutcome::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn seg(i: u64, sent_ms: u64) -> Seg {
        Seg::new(i * 1000, (i + 1) * 1000, SimTime(sent_ms * MS))
    }

    #[test]
    fn reo_wnd_is_zero_in_recovery_until_reordering_is_seen() {
        let mut r = Rack::new();
        // No reordering seen: 0 in recovery, or with DupThresh segments SACKed; else min_RTT / 4.
        assert_eq!(r.reo_wnd(true, 0, 3, 100 * MS, 40 * MS), 0);
        assert_eq!(r.reo_wnd(false, 3, 3, 100 * MS, 40 * MS), 0);
        assert_eq!(r.reo_wnd(false, 2, 3, 100 * MS, 40 * MS), 10 * MS);
        // Segment 2 delivered, then segment 1 (never retransmitted) below it: reordering.
        r.on_delivered(&seg(2, 0), SimTime(50 * MS), 40 * MS);
        assert!(!r.reordering_seen);
        r.on_delivered(&seg(1, 0), SimTime(51 * MS), 40 * MS);
        assert!(r.reordering_seen);
        assert_eq!(r.reo_wnd(true, 5, 3, 100 * MS, 40 * MS), 10 * MS);
        // Capped at SRTT.
        assert_eq!(r.reo_wnd(true, 5, 3, 5 * MS, 40 * MS), 5 * MS);
    }

    #[test]
    fn dsack_rounds_widen_the_window_which_16_recoveries_bring_back() {
        // RFC 8985 6.2 step 4 (Linux tcp_rack_update_reo_wnd): reordering seen, min_RTT 40 ms,
        // SRTT 100 ms. A D-SACK at snd.una 0, snd.nxt 10000: 2 steps (20 ms); another in the same
        // round (snd.una 5000 < 10000) adds nothing; once snd.una reaches 10000 the next one adds
        // a step (30 ms), and the window stops at SRTT (100 ms) however many rounds follow.
        let mut r = Rack::new();
        r.reordering_seen = true;
        let wnd = |r: &Rack| r.reo_wnd(true, 0, 3, 100 * MS, 40 * MS);
        assert_eq!(wnd(&r), 10 * MS);
        r.update_reo_wnd(true, 0, 10_000);
        assert_eq!(wnd(&r), 20 * MS);
        r.update_reo_wnd(true, 5_000, 12_000);
        assert_eq!(wnd(&r), 20 * MS);
        r.update_reo_wnd(true, 10_000, 20_000);
        assert_eq!(wnd(&r), 30 * MS);
        for i in 0..20u64 {
            r.update_reo_wnd(true, 20_000 * (i + 1), 20_000 * (i + 2));
        }
        assert_eq!(wnd(&r), 100 * MS);
        // 15 recoveries without a D-SACK keep it; the 16th's next ACK brings it back to one step.
        for _ in 0..15 {
            r.on_recovery_end();
            r.update_reo_wnd(false, 500_000, 500_000);
        }
        assert_eq!(wnd(&r), 100 * MS);
        r.on_recovery_end();
        r.update_reo_wnd(false, 500_000, 500_000);
        assert_eq!(wnd(&r), 10 * MS);
    }

    #[test]
    fn a_dsack_of_a_retransmitted_probe_is_no_loss() {
        // RFC 8985 7.4.2 (Linux FLAG_DSACK_TLP): the probe resent the segment ending at 10000; an
        // ACK above it D-SACKing the probe means the original and the probe both arrived.
        let mut tlp = Tlp::new(200 * MS);
        tlp.on_probe_sent(10_000, true);
        assert_eq!(tlp.on_ack(11_000, false, true), TlpOutcome::Delivered);
        tlp.on_probe_sent(10_000, true);
        assert_eq!(tlp.on_ack(11_000, false, false), TlpOutcome::RepairedLoss);
    }

    #[test]
    fn a_segment_is_lost_rtt_plus_reo_wnd_after_it_was_sent() {
        // Segments 0-3 sent at 0, 1, 2, 3 ms; segment 3 is SACKed at 53 ms: RACK.rtt = 50 ms,
        // RACK.xmit_ts = 3 ms. With reo_wnd 10 ms, segment 0 is lost at 0 + 50 + 10 = 60 ms,
        // segment 2 at 62 ms; at 53 ms they have 7 and 9 ms left; the timer waits for the latest.
        let mut r = Rack::new();
        let mut segs: Vec<Seg> = (0..4).map(|i| seg(i, i)).collect();
        segs[3].sacked = true;
        r.on_delivered(&segs[3], SimTime(53 * MS), 40 * MS);
        assert_eq!((r.rtt, r.xmit_ts, r.end_seq), (50 * MS, SimTime(3 * MS), 4000));
        let left: Vec<_> = segs.iter_mut().map(|s| r.check(s, SimTime(53 * MS), 10 * MS)).collect();
        assert_eq!(left, vec![Some(7 * MS), Some(8 * MS), Some(9 * MS), None]);
        assert_eq!(reorder_timeout(left), Some(9 * MS));
        assert!(segs.iter().all(|s| !s.lost));
        // At 60 ms segment 0 is lost; 1 and 2 are not yet.
        let left: Vec<_> = segs.iter_mut().map(|s| r.check(s, SimTime(60 * MS), 10 * MS)).collect();
        assert_eq!(left, vec![None, Some(MS), Some(2 * MS), None]);
        assert!(segs[0].lost && !segs[1].lost);
        // A segment sent after RACK.xmit_ts is never marked, however late.
        let mut later = seg(4, 4);
        assert_eq!(r.check(&mut later, SimTime(10_000 * MS), 0), None);
        assert!(!later.lost);
    }

    #[test]
    fn a_lost_retransmission_is_detected_like_any_segment() {
        // Segment 0 was resent at 100 ms (lost mark kept, retransmission in flight); segment 5,
        // sent at 110 ms, is SACKed at 160 ms: RACK.rtt = 50 ms, so the resend is lost at 100 +
        // 50 = 150 ms (reo_wnd 0) -- already passed at 160 ms.
        let mut r = Rack::new();
        let mut s0 = seg(0, 100);
        s0.lost = true;
        s0.retransmitted = true;
        s0.retrans_in_flight = true;
        r.on_delivered(&seg(5, 110), SimTime(160 * MS), 40 * MS);
        assert_eq!(r.check(&mut s0, SimTime(160 * MS), 0), None);
        assert!(s0.lost && !s0.retrans_in_flight);
        // Marked lost and not resent: skipped until it is resent.
        assert_eq!(r.check(&mut s0, SimTime(500 * MS), 0), None);
    }

    #[test]
    fn a_late_delivery_lengthens_rack_rtt_but_not_xmit_ts() {
        // RFC 8985 6.2 step 2: segment 5 (sent at 5 ms) delivered at 60 ms sets the state; then
        // segment 2 (sent at 2 ms), reordered, at 70 ms: RACK.rtt = 68 ms, RACK.xmit_ts stays 5 ms.
        let mut r = Rack::new();
        r.on_delivered(&seg(5, 5), SimTime(60 * MS), 40 * MS);
        r.on_delivered(&seg(2, 2), SimTime(70 * MS), 40 * MS);
        assert_eq!((r.rtt, r.xmit_ts, r.end_seq), (68 * MS, SimTime(5 * MS), 6000));
    }

    #[test]
    fn an_ambiguous_retransmission_does_not_update_rack() {
        // Segment 1 resent at 100 ms and acknowledged at 110 ms: 10 ms < min_RTT 40 ms, so the
        // ACK may be for the original; RACK keeps its older state.
        let mut r = Rack::new();
        r.on_delivered(&seg(0, 0), SimTime(50 * MS), 40 * MS);
        let mut s1 = seg(1, 100);
        s1.retransmitted = true;
        r.on_delivered(&s1, SimTime(110 * MS), 40 * MS);
        assert_eq!((r.xmit_ts, r.rtt), (SimTime(0), 50 * MS));
        // At 150 ms (50 ms after the resend) it counts.
        r.on_delivered(&s1, SimTime(150 * MS), 40 * MS);
        assert_eq!((r.xmit_ts, r.rtt), (SimTime(100 * MS), 50 * MS));
    }

    #[test]
    fn the_probe_fires_two_srtts_after_the_last_send() {
        let tlp = Tlp::new(200 * MS);
        // RFC 8985 7.2: 2 x SRTT with several segments in flight; + WCDelAckT with one; 1 s
        // before any RTT sample; never after the RTO.
        assert_eq!(tlp.pto(Some(100 * MS), 10, 1_000 * MS), 200 * MS);
        assert_eq!(tlp.pto(Some(100 * MS), 1, 1_000 * MS), 400 * MS);
        assert_eq!(tlp.pto(None, 10, 3_000 * MS), 1_000 * MS);
        assert_eq!(tlp.pto(Some(100 * MS), 10, 150 * MS), 150 * MS);
    }

    #[test]
    fn a_retransmitted_probe_repaired_a_loss_only_when_later_data_is_acked() {
        // RFC 8985 Sec. 3's tail loss: the last segment (ending at 10000) is lost; the probe
        // resends it (no new data).
        // RFC 8985 7.4.2: the ACK reaching the probe's end (10000) may be the late original's, so
        // the episode waits; an ACK above it (data sent after the probe) shows a repaired loss.
        let mut tlp = Tlp::new(200 * MS);
        tlp.on_probe_sent(10_000, true);
        assert!(tlp.outstanding());
        assert_eq!(tlp.on_ack(9_000, false, false), TlpOutcome::Pending);
        assert_eq!(tlp.on_ack(10_000, false, false), TlpOutcome::Pending);
        assert_eq!(tlp.on_ack(11_000, false, false), TlpOutcome::RepairedLoss);
        assert!(!tlp.outstanding());
        // The original arrived after all: its ACK reaches the end, then the probe draws a pure
        // duplicate ACK at it: no loss, no cut.
        tlp.on_probe_sent(10_000, true);
        assert_eq!(tlp.on_ack(10_000, false, false), TlpOutcome::Pending);
        assert_eq!(tlp.on_ack(10_000, true, false), TlpOutcome::Delivered);
        // A probe of new data that is delivered ends the episode without a verdict.
        tlp.on_probe_sent(11_000, false);
        assert_eq!(tlp.on_ack(11_000, false, false), TlpOutcome::Delivered);
    }
}
