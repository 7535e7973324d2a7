//! CUBIC's hybrid slow start as Linux 6.x runs it (net/ipv4/tcp_cubic.c, `hystart = 1`,
//! `hystart_detect = 3`): the `tcp.hystart` key. This is Linux's own HyStart (Ha & Rhee 2011),
//! not RFC 9406's HyStart++: Linux sets ssthresh to cwnd and leaves slow start for congestion
//! avoidance at once, where RFC 9406 first enters Conservative Slow Start (CSS) and may resume.
//!
//! Per ACK with an RTT sample (the most recently sent segment it newly delivers, never
//! retransmitted: Linux's `ca_rtt_us`, `bictcp_acked`), while in slow start and not yet found:
//! - a round starts when snd_una passes the `end_seq` of the last one (`bictcp_hystart_reset`:
//!   round_start = last_ack = now, end_seq = snd_nxt, the round's minimum RTT and sample count
//!   cleared); nothing is decided below cwnd 16 segments (`hystart_low_window`);
//! - **ACK train** (`HYSTART_ACK_TRAIN`): ACKs no more than 2 ms apart (`hystart_ack_delta_us`)
//!   extend the train; once it spans more than (delay_min + ack_delay) / 2 the window is found
//!   (halved: `sk_pacing_status` is NONE, no fq pacing here). ack_delay is Linux's
//!   `hystart_ack_delay`: min(1 ms, 4 x gso_max_size / pacing rate), with GSO's default 65,536 B
//!   and the pacing rate Linux computes even without fq (`tcp_update_pacing_rate`: 200 % of
//!   cwnd / srtt in slow start);
//! - **delay** (`HYSTART_DELAY`): the round's minimum RTT over its first 8 samples
//!   (`HYSTART_MIN_SAMPLES`); from the ninth on, found once it exceeds delay_min + clamp(delay_min
//!   / 8, 4 ms, 16 ms) (`HYSTART_DELAY_THRESH`).
//!
//! Found, ssthresh = cwnd. `delay_min` is the smallest sample; Linux also drops samples in the
//! first second of a congestion-avoidance epoch after a recovery, which cannot matter here: HyStart
//! runs in slow start only, and after a fast recovery `found` stays set. An RTO (`bictcp_state`
//! on TCP_CA_Loss: `bictcp_reset`) clears `found` and delay_min and starts a round.

use crate::time::{Nanos, SimTime};

/// `hystart_low_window`: HyStart decides nothing below this cwnd, segments.
const LOW_WINDOW: u64 = 16;
/// `hystart_ack_delta_us`: ACKs this close extend an ACK train.
const ACK_DELTA: Nanos = 2_000_000;
/// `HYSTART_MIN_SAMPLES`.
const MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`: the delay threshold's bounds.
const DELAY_MIN: Nanos = 4_000_000;
const DELAY_MAX: Nanos = 16_000_000;
/// Linux's default `sk_gso_max_size` (GSO_LEGACY_MAX_SIZE), bytes.
const GSO_MAX_SIZE: u64 = 65_536;

#[derive(Clone, Debug)]
pub struct HyStart {
    found: bool,
    delay_min: Option<Nanos>,
    round_start: SimTime,
    last_ack: SimTime,
    end_seq: u64,
    curr_rtt: Nanos,
    sample_cnt: u32,
}

impl Default for HyStart {
    fn default() -> HyStart {
        HyStart::new()
    }
}

impl HyStart {
    /// At the connection's start (`bictcp_init`): a round that the first ACK of data ends.
    pub fn new() -> HyStart {
        HyStart {
            found: false,
            delay_min: None,
            round_start: SimTime(0),
            last_ack: SimTime(0),
            end_seq: 0,
            curr_rtt: Nanos::MAX,
            sample_cnt: 0,
        }
    }

    /// `bictcp_hystart_reset`: a new round, ending when snd_una passes `snd_nxt`.
    fn start_round(&mut self, now: SimTime, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = Nanos::MAX;
        self.sample_cnt = 0;
    }

    /// An RTO (`bictcp_state` on TCP_CA_Loss): everything forgotten, a new round.
    pub fn on_timeout(&mut self, now: SimTime, snd_nxt: u64) {
        self.found = false;
        self.delay_min = None;
        self.start_round(now, snd_nxt);
    }

    /// `bictcp_acked` with an RTT sample `delay` at `now`, snd_una after the ACK, snd_nxt, cwnd
    /// and ssthresh before its growth (bytes), the MSS and srtt. Returns the new ssthresh (cwnd)
    /// when slow start's end is found.
    #[allow(clippy::too_many_arguments)]
    pub fn on_sample(
        &mut self,
        now: SimTime,
        delay: Nanos,
        snd_una: u64,
        snd_nxt: u64,
        cwnd: u64,
        ssthresh: u64,
        mss: u64,
        srtt: Option<Nanos>,
    ) -> Option<u64> {
        let delay = delay.max(1);
        let delay_min = self.delay_min.map_or(delay, |d| d.min(delay));
        self.delay_min = Some(delay_min);
        if self.found || cwnd >= ssthresh {
            return None;
        }
        // hystart_update
        if snd_una > self.end_seq {
            self.start_round(now, snd_nxt);
        }
        if cwnd / mss < LOW_WINDOW {
            return None;
        }
        if now.0.saturating_sub(self.last_ack.0) <= ACK_DELTA {
            self.last_ack = now;
            let threshold = (delay_min + ack_delay(cwnd, srtt)) / 2;
            if now.0.saturating_sub(self.round_start.0) > threshold {
                self.found = true;
                return Some(cwnd);
            }
        }
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self.curr_rtt > delay_min + (delay_min / 8).clamp(DELAY_MIN, DELAY_MAX) {
            self.found = true;
            return Some(cwnd);
        }
        None
    }
}

/// Linux `hystart_ack_delay`: min(1 ms, 4 x gso_max_size / sk_pacing_rate), the pacing rate
/// 2 x cwnd / srtt in slow start (`tcp_update_pacing_rate`, tcp_pacing_ss_ratio = 200); none
/// before an RTT sample (a rate of 0: 0).
fn ack_delay(cwnd: u64, srtt: Option<Nanos>) -> Nanos {
    let Some(srtt) = srtt.filter(|&s| s > 0) else { return 0 };
    let rate = 2.0 * cwnd as f64 / (srtt as f64 / 1e9); // bytes per second
    if rate <= 0.0 {
        return 0;
    }
    let d = (4 * GSO_MAX_SIZE) as f64 / rate * 1e9;
    (d as Nanos).min(1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;

    #[test]
    fn the_delay_rule_finds_the_ninth_sample_of_a_slow_round() {
        // A round at cwnd 20 segments whose ACKs come 5 ms apart (no ACK train): delay_min is 40
        // ms from an earlier sample, so the threshold is 40 + clamp(40 / 8 = 5, 4, 16) = 45 ms.
        // The round's first 8 samples (46 ms each) are counted; the ninth finds the round's
        // minimum 46 > 45: ssthresh = cwnd.
        let mut h = HyStart::new();
        let big = u64::MAX;
        assert_eq!(h.on_sample(SimTime(0), 40 * MS, 1, 1, 10 * MSS, big, MSS, None), None);
        // snd_una 100 passes end_seq 1: a round starts at 100 ms with end_seq 200.
        for i in 0..9u64 {
            let now = SimTime((100 + 5 * i) * MS);
            let got = h.on_sample(now, 46 * MS, 100 + i, 200, 20 * MSS, big, MSS, Some(40 * MS));
            assert_eq!(got, if i == 8 { Some(20 * MSS) } else { None }, "sample {i}");
        }
        // Found: nothing more, even on a later round.
        assert_eq!(h.on_sample(SimTime(200 * MS), 90 * MS, 300, 400, 20 * MSS, big, MSS, Some(40 * MS)), None);
    }

    #[test]
    fn an_ack_train_longer_than_half_the_delay_ends_slow_start() {
        // delay_min 40 ms; cwnd 32 segments of 1000 B, srtt 40 ms: pacing rate 2 x 32,000 B /
        // 0.04 s = 1.6 MB/s, so ack_delay = min(1 ms, 262,144 / 1.6e6 s = 164 ms) = 1 ms and the
        // threshold (40 + 1) / 2 = 20.5 ms. A round starts at 100 ms; ACKs 1 ms apart with
        // samples of exactly 40 ms (no delay signal) extend the train: the ACK at 121 ms (21 ms >
        // 20.5) finds it.
        let mut h = HyStart::new();
        let big = u64::MAX;
        let mut found = None;
        for i in 0..30u64 {
            let now = SimTime((100 + i) * MS);
            if let Some(ss) = h.on_sample(now, 40 * MS, 10 + i, 1000, 32 * MSS, big, MSS, Some(40 * MS)) {
                found = Some((i, ss));
                break;
            }
        }
        assert_eq!(found, Some((21, 32 * MSS)));
    }

    #[test]
    fn below_sixteen_segments_nothing_is_decided() {
        let mut h = HyStart::new();
        for i in 0..40u64 {
            let now = SimTime((100 + i) * MS);
            assert_eq!(h.on_sample(now, 100 * MS, 10 + i, 1000, 15 * MSS, u64::MAX, MSS, Some(40 * MS)), None);
        }
    }
}
