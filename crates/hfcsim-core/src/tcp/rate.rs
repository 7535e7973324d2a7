//! Delivery-rate sampling as Linux runs it for every connection (net/ipv4/tcp_rate.c, after
//! draft-cheng-iccrg-delivery-rate-estimation), here only for the controls that read it (BBR,
//! `bbr.rs`): the sender keeps it when `tcp.congestion_control = "bbr"`, and nothing else pays.
//!
//! - **On each transmission** (`tcp_rate_skb_sent`), new data or a retransmission: with nothing
//!   in flight the sampling clocks restart (`first_tx_mstamp` = `delivered_mstamp` = now); the
//!   segment records the connection's `delivered` count, `delivered_mstamp`, `first_tx_mstamp` and
//!   whether the sender is application-limited.
//! - **On each ACK** (`tcp_rate_skb_delivered`), every segment newly delivered (cumulatively
//!   acknowledged, or SACKed, once: a SACKed segment's record is cleared) counts one to
//!   `delivered`; the most recently sent of them (by send time, then sequence:
//!   `tcp_skb_sent_after`) gives the sample's prior `delivered`, prior time, app-limited mark and
//!   the send phase's length (its send time less its `first_tx_mstamp`); its send time becomes
//!   `first_tx_mstamp`.
//! - **The sample** (`tcp_rate_gen`): delivered = now's count less the prior; interval = max(send
//!   phase, ack phase = now - prior `delivered_mstamp`); a sample shorter than the connection's
//!   min RTT is discarded (interval -1). The app-limited mark clears once `delivered` passes it.
//! - **Application-limited** (`tcp_rate_check_app_limited`): when the sender has no new data
//!   left, is not cwnd-limited and has no lost segment waiting, the mark is `delivered` plus the
//!   segments in flight (at least 1).
//!
//! Chosen where the model differs: counts are in segments (Linux's `pcount`, one per MSS-sized
//! segment: hfcsim has no TSO aggregates); the stamps are hfcsim's ns, and the interval is taken
//! in whole microseconds (Linux's `tcp_stamp_us_delta`) when a rate is formed (`bbr.rs`). Linux
//! starts a socket with `app_limited = ~0U`, which marks the first window's segments
//! application-limited and is cleared by the first ACK (`after(delivered, ~0U)` holds for any
//! small count): `INITIAL_APP_LIMITED` here. Without SACK, Linux also counts each duplicate ACK as
//! a delivery (`tcp_add_reno_sack`); not here (BBR runs under the linux stack, with SACK). The
//! sample's RTT is the ACK's (`ca_rtt_us`): the most recently sent segment never retransmitted
//! among those newly SACKed, else among those cumulatively acknowledged when none of them was
//! retransmitted; Linux's fallback to the timestamp echo is not taken.

use crate::time::{Nanos, SimTime};
use std::collections::VecDeque;

/// Linux `tcp_init_sock`: `tp->app_limited = ~0U` (module comment).
const INITIAL_APP_LIMITED: u64 = u64::MAX;

/// What a segment remembers of the connection when it was (re)sent (`tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug)]
struct TxRecord {
    start: u64,
    end: u64,
    sent_at: SimTime,
    first_tx: SimTime,
    /// `tx.delivered_mstamp`; None once SACKed (delivered: not counted again).
    delivered_stamp: Option<SimTime>,
    delivered: u64,
    app_limited: bool,
    retransmitted: bool,
}

/// One ACK's rate sample (`struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// `prior_delivered`: the count when the most recently sent delivered segment was sent.
    pub prior_delivered: u64,
    /// `prior_mstamp`; None: no timing (an invalid sample).
    pub prior_time: Option<SimTime>,
    /// Segments delivered over the interval (`delivered`); None: invalid.
    pub delivered: Option<u64>,
    /// `interval_us`, in ns; None: invalid (no timing, or shorter than the min RTT).
    pub interval: Option<Nanos>,
    /// The ACK's RTT sample (`rtt_us`), if any.
    pub rtt: Option<Nanos>,
    /// Segments newly acknowledged or SACKed by this ACK (`acked_sacked`).
    pub acked_sacked: u64,
    /// Segments newly marked lost while this ACK was processed (`losses`).
    pub losses: u64,
    /// Segments in flight before this ACK (`prior_in_flight`).
    pub prior_in_flight: u64,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    pub(crate) last_end_seq: u64,
}

/// The sampler's state: a record per segment out (in sequence order, as the scoreboard) and the
/// connection's counters.
#[derive(Clone, Debug)]
pub struct RateSampler {
    recs: VecDeque<TxRecord>,
    /// `tp->delivered`: segments delivered so far.
    pub delivered: u64,
    /// `tp->delivered_mstamp`: when `delivered` last grew.
    pub delivered_time: SimTime,
    /// `tp->first_tx_mstamp`.
    first_tx: SimTime,
    /// `tp->app_limited`: 0, or application-limited until `delivered` passes it.
    pub app_limited: u64,
    /// The sample under way (from `on_ack` to `generate`).
    rs: RateSample,
    delivered_before: u64,
    /// Send times of the ACK's most recent newly SACKed / cumulatively acknowledged segments
    /// never retransmitted, and whether a retransmitted one was cumulatively acknowledged.
    last_sackt: Option<SimTime>,
    last_ackt: Option<SimTime>,
    retrans_acked: bool,
}

impl Default for RateSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl RateSampler {
    pub fn new() -> RateSampler {
        RateSampler {
            recs: VecDeque::new(),
            delivered: 0,
            delivered_time: SimTime(0),
            first_tx: SimTime(0),
            app_limited: INITIAL_APP_LIMITED,
            rs: RateSample::default(),
            delivered_before: 0,
            last_sackt: None,
            last_ackt: None,
            retrans_acked: false,
        }
    }

    /// `tcp_rate_skb_sent`: segment [seq, end) leaves at `now`; `nothing_out`: no segment was
    /// outstanding before it (`!tp->packets_out`).
    pub fn on_sent(&mut self, now: SimTime, seq: u64, end: u64, retransmit: bool, nothing_out: bool) {
        if nothing_out {
            self.first_tx = now;
            self.delivered_time = now;
        }
        let rec = TxRecord {
            start: seq,
            end,
            sent_at: now,
            first_tx: self.first_tx,
            delivered_stamp: Some(self.delivered_time),
            delivered: self.delivered,
            app_limited: self.app_limited != 0,
            retransmitted: retransmit,
        };
        if !retransmit {
            self.recs.push_back(rec);
            return;
        }
        let i = self.recs.partition_point(|r| r.start < seq);
        if let Some(r) = self.recs.get_mut(i).filter(|r| r.start == seq) {
            *r = rec;
        }
    }

    /// `tcp_rate_skb_delivered` for one record.
    fn delivered_one(rs: &mut RateSample, first_tx: &mut SimTime, r: &TxRecord) {
        let Some(stamp) = r.delivered_stamp else { return };
        let after = r.sent_at > *first_tx || (r.sent_at == *first_tx && r.end > rs.last_end_seq);
        if rs.prior_delivered == 0 || after {
            rs.prior_delivered = r.delivered;
            rs.prior_time = Some(stamp);
            rs.is_app_limited = r.app_limited;
            rs.is_retrans = r.retransmitted;
            rs.last_end_seq = r.end;
            *first_tx = r.sent_at;
            rs.interval = Some(r.sent_at - r.first_tx);
        }
    }

    /// The ACK's deliveries (before the scoreboard forgets them): `ack` cumulatively, `blocks` by
    /// SACK. `prior_in_flight`: segments in flight before the ACK.
    pub fn on_ack(&mut self, ack: u64, blocks: &[(u64, u64)], prior_in_flight: u64) {
        self.rs = RateSample { prior_in_flight, ..RateSample::default() };
        self.delivered_before = self.delivered;
        (self.last_sackt, self.last_ackt, self.retrans_acked) = (None, None, false);
        while let Some(r) = self.recs.front().copied().filter(|r| r.end <= ack) {
            self.recs.pop_front();
            if r.retransmitted {
                self.retrans_acked = true;
            } else {
                self.last_ackt = Some(self.last_ackt.map_or(r.sent_at, |t| t.max(r.sent_at)));
            }
            if r.delivered_stamp.is_some() {
                self.delivered += 1;
                Self::delivered_one(&mut self.rs, &mut self.first_tx, &r);
            }
        }
        for &(l, r) in blocks {
            let from = self.recs.partition_point(|x| x.start < l);
            for i in from..self.recs.len() {
                let rec = self.recs[i];
                if rec.end > r {
                    break;
                }
                if rec.delivered_stamp.is_none() {
                    continue;
                }
                self.delivered += 1;
                if !rec.retransmitted {
                    self.last_sackt = Some(self.last_sackt.map_or(rec.sent_at, |t| t.max(rec.sent_at)));
                }
                Self::delivered_one(&mut self.rs, &mut self.first_tx, &rec);
                self.recs[i].delivered_stamp = None;
            }
        }
    }

    /// `tcp_rate_gen`: the sample of the ACK `on_ack` read, with `losses` segments newly marked
    /// lost and the connection's min RTT.
    pub fn generate(&mut self, now: SimTime, losses: u64, min_rtt: Option<Nanos>) -> RateSample {
        let newly = self.delivered - self.delivered_before;
        if self.app_limited != 0 && (self.app_limited == INITIAL_APP_LIMITED || self.delivered > self.app_limited) {
            self.app_limited = 0;
        }
        if newly > 0 {
            self.delivered_time = now;
        }
        let mut rs = self.rs;
        rs.acked_sacked = newly;
        rs.losses = losses;
        // tcp_clean_rtx_queue and tcp_sacktag: ca_rtt_us (module comment).
        let cum = if self.retrans_acked { None } else { self.last_ackt };
        rs.rtt = self.last_sackt.or(cum).map(|t| now - t);
        let Some(prior) = rs.prior_time else {
            rs.delivered = None;
            rs.interval = None;
            return rs;
        };
        rs.delivered = Some(self.delivered - rs.prior_delivered);
        let snd = rs.interval.unwrap_or(0);
        let ack = now - prior;
        let interval = snd.max(ack);
        rs.interval = (interval >= min_rtt.unwrap_or(0)).then_some(interval);
        rs
    }

    /// `tcp_rate_check_app_limited`'s mark, when its conditions hold (the caller checks them).
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_window_sent_at_once_is_sampled_over_the_ack_phase() {
        let mut r = RateSampler::new();
        // Ten segments at 0 (nothing out before the first: the clocks restart at 0), app-limited by
        // the initial mark.
        for i in 0..10 {
            r.on_sent(SimTime(0), i * 1000, (i + 1) * 1000, false, i == 0);
        }
        // ACK of 2 at 10 ms: delivered 2 since prior_delivered 0 at prior time 0; send phase 0,
        // ack phase 10 ms: interval 10 ms. The mark was the initial one: cleared; the sample keeps
        // the segments' mark.
        r.on_ack(2000, &[], 10);
        let s = r.generate(SimTime(10 * MS), 0, Some(10 * MS));
        assert_eq!((s.delivered, s.interval, s.acked_sacked, s.rtt), (Some(2), Some(10 * MS), 2, Some(10 * MS)));
        assert!(s.is_app_limited);
        assert_eq!(r.app_limited, 0);
        // A segment sent now records delivered 2 at 10 ms. SACK of [3000, 5000) at 11 ms: 2 more;
        // interval = ack phase 11 ms (prior time 0).
        r.on_sent(SimTime(10 * MS), 10_000, 11_000, false, false);
        r.on_ack(2000, &[(3000, 5000)], 8);
        let s = r.generate(SimTime(11 * MS), 1, Some(10 * MS));
        assert_eq!((s.delivered, s.interval, s.losses), (Some(4), Some(11 * MS), 1));
        // The cumulative ACK of 5000 at 12 ms covers 2000-3000 (new) and the SACKed two (not
        // again): delivered 5 in all, 1 new.
        r.on_ack(5000, &[], 6);
        let s = r.generate(SimTime(12 * MS), 0, Some(10 * MS));
        assert_eq!((s.acked_sacked, r.delivered), (1, 5));
        // ACK of 11000 at 15 ms: segments 6-11, 11 delivered in all. The most recently sent is 11
        // (at 10 ms, recording delivered 2, delivered time 10 ms and first_tx 0, the send time of
        // the segments the 10 ms ACK delivered): 11 - 2 = 9 segments over max(send phase 10 - 0
        // ms, ack phase 15 - 10 ms) = 10 ms.
        r.on_ack(11_000, &[], 6);
        let s = r.generate(SimTime(15 * MS), 0, Some(10 * MS));
        assert_eq!((s.delivered, s.interval), (Some(11 - 2), Some(10 * MS)));
        // Shorter than the min RTT: discarded.
        r.on_sent(SimTime(20 * MS), 11_000, 12_000, false, true);
        r.on_ack(12_000, &[], 1);
        let s = r.generate(SimTime(25 * MS), 0, Some(10 * MS));
        assert_eq!((s.delivered, s.interval), (Some(1), None));
    }
}
