//! BBR v1 as mainline Linux runs it (net/ipv4/tcp_bbr.c; the prose of
//! draft-cardwell-iccrg-bbr-congestion-control-00), `tcp.congestion_control = "bbr"`. It is a
//! `cong_control`: on every ACK it sets cwnd and the pacing rate itself from a model of the path
//! (the bottleneck bandwidth and the round-trip propagation time), fed by the delivery-rate
//! samples of `rate.rs`. Units as Linux: bandwidth in segments per microsecond << 24 (`BW_UNIT`),
//! gains in 1/256 (`BBR_UNIT`), cwnd in segments, times in hfcsim's ns.
//!
//! - **The model** (`bbr_update_bw`, `bbr_update_min_rtt`): the max bandwidth is Kathleen
//!   Nichols' windowed running max (lib/win_minmax.c) over 10 round trips (`bbr_bw_rtts` =
//!   CYCLE_LEN + 2), rounds counted when a sample's prior delivered count reaches the count at the
//!   round's start; an application-limited sample enters it only if it is no lower than the max.
//!   The min RTT is the lowest ACK RTT over 10 s (`bbr_min_rtt_win_sec`), started from the
//!   connection's min RTT; a sample equal to it renews its stamp, and once 10 s old any sample
//!   replaces it.
//! - **STARTUP**: pacing and cwnd gain 2/ln 2 (`bbr_high_gain` = 256 x 2885 / 1000 + 1 = 739);
//!   the pipe is full when 3 rounds (`bbr_full_bw_cnt`) with a sample that is not app-limited
//!   grow the max bandwidth by less than 25 % (`bbr_full_bw_thresh`).
//!   **DRAIN**: pacing gain 1/2.885 (`bbr_drain_gain` = 88), cwnd gain 2.885, ssthresh set to
//!   one BDP (`bbr_check_drain`), until the data in flight at the next departure is at most one
//!   BDP. **PROBE_BW**: the 8-phase pacing-gain cycle 5/4, 3/4, 1 x 6 (`bbr_pacing_gain`), cwnd gain
//!   2; a phase lasts a min RTT, the 5/4 one longer until a loss or the in-flight reaches 5/4 BDP,
//!   the 3/4 one shorter once in-flight is down to one BDP (`bbr_is_next_cycle_phase`); it starts
//!   at a random phase other than 3/4 (`bbr_reset_probe_bw_mode`: CYCLE_LEN - 1 -
//!   prandom_u32_max(7), then one step), drawn from the flow's own seeded stream
//!   (`rng::component::bbr_cycle`). **PROBE_RTT**: when the min RTT is 10 s old, cwnd 4
//!   (`bbr_cwnd_min_target`) until 200 ms (`bbr_probe_rtt_mode_ms`) and a round have passed with at
//!   most 4 in flight; then the min RTT's stamp is renewed, cwnd restored to the saved one and the
//!   mode is PROBE_BW (or STARTUP if the pipe was never full).
//! - **Pacing rate** (`bbr_set_pacing_rate`, `bbr_rate_bytes_per_sec`): gain x max bw x mss, less
//!   Linux's 1 % margin (`bbr_pacing_margin_percent`); before the pipe is full it only rises. At
//!   the start, cwnd / srtt at the high gain (`bbr_init_pacing_rate_from_rtt`; 1 ms without an
//!   RTT). The sender paces with it whatever `tcp.pacing` says (`bbr_init` asks for
//!   SK_PACING_NEEDED: Linux's internal pacing, `pacing.rs`).
//! - **cwnd** (`bbr_set_cwnd`): target = gain x BDP rounded up, + the ACK-aggregation allowance
//!   (`bbr_ack_aggregation_cwnd`, once the pipe is full: the most data ACKed beyond bw x the epoch
//!   over the last 5-10 rounds, at most 100 ms at bw), + 3 x the send quantum
//!   (`bbr_quantization_budget`, `bbr_tso_segs_goal`: 1 ms of data at the pacing rate in segments,
//!   at least 1 below 1.2 Mb/s and 2 above, at most 127), rounded up to even, + 2 in the 5/4
//!   phase; with the pipe full cwnd
//!   moves to min(cwnd + acked, target), before it grows by the acked segments while below the
//!   target (or while fewer than 10 have been delivered); at least 4. Without a min RTT the BDP is
//!   the initial window, 10 (`TCP_INIT_CWND`).
//! - **Loss** (`bbr_set_cwnd_to_recover_or_restore`): each ACK takes its newly lost segments
//!   off cwnd (at least 1); the first ACK in fast recovery sets cwnd to the in-flight plus the
//!   acked (packet conservation, one round, the round restarted); leaving recovery or the RTO's
//!   loss state restores the cwnd saved on entering it (`bbr_save_cwnd` in `bbr_ssthresh`). An RTO
//!   (`bbr_set_state`, TCP_CA_Loss) forgets the full-bandwidth estimate's baseline. ssthresh is
//!   never cut: the hooks return it as it is.
//! - **Long-term bandwidth** (`bbr_lt_bw_sampling`, policer detection): from the first loss,
//!   intervals of 4 to 16 rounds that end at a loss; an interval that lost at least 20 % gives a
//!   rate, and two within 1/8 (or 4 kbit/s) of each other mean a token-bucket policer: their mean
//!   is used as bw, at pacing gain 1, for 48 rounds of PROBE_BW, then the gain cycle restarts.
//!
//! Chosen where the model has no equivalent: the send quantum is Linux's formula, which reads
//! the pacing rate only (GSO is always on in Linux), though hfcsim's pacer sends each segment on
//! its own (`pacing.rs`), so the budget's 3 quanta stand for bursts the model does not make;
//! GSO_MAX_SIZE's cap takes MAX_TCP_HEADER as 320 bytes; times are exact ns, not jiffies (the
//! long-term interval's stamp is in ms, as Linux's); the sample's `is_ack_delayed` is never set.
//! Not modelled: the restart after idle (`CA_EVENT_TX_START`: a bulk sender is not idle) and the
//! undo's reset of full bandwidth and of the long-term sampler (`bbr_undo_cwnd`: F-RTO's undo
//! here restores cwnd as for the other controls, and the exit from the loss state restores it
//! anyway).

use super::cc::{AckInfo, CongestionControl, LossInfo};
use super::pacing::PacingInput;
use super::rate::RateSample;
use crate::rng::Stream;
use crate::time::{Nanos, SimTime};

pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u64 = 1 << BBR_SCALE;
/// `bbr_high_gain`: 2/ln(2), 739/256 = 2.887.
pub const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain`: its inverse, 88/256.
pub const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`.
pub const CWND_GAIN: u64 = BBR_UNIT * 2;
/// `bbr_pacing_gain`: PROBE_BW's cycle.
pub const PACING_GAIN: [u64; 8] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
const CYCLE_LEN: usize = 8;
/// `bbr_cycle_rand`.
const CYCLE_RAND: u64 = 7;
/// `bbr_bw_rtts`.
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// `bbr_min_rtt_win_sec`.
pub const MIN_RTT_WIN: Nanos = 10_000_000_000;
/// `bbr_probe_rtt_mode_ms`.
pub const PROBE_RTT_TIME: Nanos = 200_000_000;
/// `bbr_cwnd_min_target`.
pub const CWND_MIN_TARGET: u64 = 4;
/// `bbr_full_bw_thresh`: 5/4.
const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt`.
const FULL_BW_CNT: u32 = 3;
/// `bbr_pacing_margin_percent`.
const PACING_MARGIN_PERCENT: u64 = 1;
/// `TCP_INIT_CWND`.
const INIT_CWND: u64 = 10;
/// `bbr_min_tso_rate`, bits/s: below it the send quantum is 1 segment, else 2 at least.
const MIN_TSO_RATE: u64 = 1_200_000;
/// `sk_pacing_shift`'s default (10): a quantum of about 1 ms of data at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// GSO_MAX_SIZE - 1 - MAX_TCP_HEADER (MAX_TCP_HEADER taken as 320 bytes, x86-64's; chosen).
const MAX_QUANTUM_BYTES: u64 = 65_536 - 1 - 320;
/// The long-term (policer) estimator (`bbr_lt_*`): an interval is at least 4 rounds
/// (`bbr_lt_intvl_min_rtts`), lossy above 50/256 = 20 % lost (`bbr_lt_loss_thresh`); two intervals'
/// rates are consistent within 1/8 (`bbr_lt_bw_ratio`) or 4 kbit/s (`bbr_lt_bw_diff`, bytes/s);
/// lt_bw is used for 48 rounds (`bbr_lt_bw_max_rtts`).
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation (`bbr_extra_acked_*`): gain 1, a window of 5 to 10 rounds, the epoch reset
/// past 2^20 segments, the allowance at most 100 ms at the estimated bandwidth.
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;

/// Linux's congestion states as BBR compares them (`TCP_CA_*`).
pub mod ca_state {
    pub const OPEN: u8 = 0;
    pub const RECOVERY: u8 = 3;
    pub const LOSS: u8 = 4;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// lib/win_minmax.c: the best three samples of a window, for a running max.
#[derive(Clone, Copy, Debug, Default)]
struct MinMax {
    s: [(u64, u64); 3], // (time, value)
}

impl MinMax {
    fn get(&self) -> u64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u64, v: u64) {
        self.s = [(t, v); 3];
    }

    fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = (t, v);
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            self.reset(t, v);
            return v;
        }
        if v >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        // minmax_subwin_update: age the best sample out of the window, and keep the second and
        // third from the first quarter and half of it.
        let dt = t - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// What BBR reads of an ACK besides its rate sample (segments, ns).
#[derive(Clone, Copy, Debug)]
pub struct BbrAck {
    pub now: SimTime,
    /// cwnd before this ACK's update, segments.
    pub cwnd: u64,
    /// Segments in flight after the ACK (`tcp_packets_in_flight`).
    pub in_flight: u64,
    /// `tp->delivered` and `tp->delivered_mstamp` after the ACK.
    pub delivered: u64,
    pub delivered_time: SimTime,
    /// The congestion state after the ACK (`ca_state`).
    pub ca_state: u8,
    /// The next departure time (`tcp_wstamp_ns`).
    pub edt: SimTime,
    pub srtt: Option<Nanos>,
    pub mss: u64,
}

/// What BBR decided on an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BbrOut {
    /// cwnd, segments.
    pub cwnd: u64,
    /// PROBE_RTT: mark the sampler application-limited (`tp->app_limited = delivered + in
    /// flight`).
    pub app_limited: bool,
}

#[derive(Clone, Debug)]
pub struct Bbr {
    pub mode: Mode,
    bw: MinMax,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    cycle_stamp: SimTime,
    pub cycle_idx: usize,
    /// `min_rtt_us`; None is Linux's ~0U (no sample).
    min_rtt: Option<Nanos>,
    min_rtt_stamp: SimTime,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// `prior_cwnd`, segments.
    prior_cwnd: u64,
    prev_ca_state: u8,
    packet_conservation: bool,
    round_start: bool,
    full_bw_reached: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    has_seen_rtt: bool,
    pacing_gain: u64,
    cwnd_gain: u64,
    /// `sk_pacing_rate`, bytes/s; None before `init`.
    rate: Option<u64>,
    /// `tp->snd_ssthresh` as BBR leaves it, bytes.
    ssthresh: u64,
    rng: Stream,
    inited: bool,
    /// The MSS (`mss_cache`), bytes.
    mss: u64,
    /// `tp->lost`: segments marked lost so far (this control's own count, from each ACK's
    /// losses and each RTO's marking).
    lost: u64,
    lt: LongTerm,
    /// `ack_epoch_mstamp`, `ack_epoch_acked`, `extra_acked[2]`, `extra_acked_win_rtts`,
    /// `extra_acked_win_idx`.
    ack_epoch: SimTime,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
}

/// The long-term bandwidth estimator's state (`lt_*`).
#[derive(Clone, Copy, Debug, Default)]
struct LongTerm {
    is_sampling: bool,
    rtt_cnt: u32,
    use_bw: bool,
    bw: u64,
    last_delivered: u64,
    /// `lt_last_stamp`, in ms (Linux keeps it in ms).
    last_stamp_ms: u64,
    last_lost: u64,
}

impl Bbr {
    /// A BBR drawing its gain-cycle phases from (run seed, component).
    pub fn new(seed: u64, component: u64) -> Bbr {
        Bbr {
            mode: Mode::Startup,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_stamp: SimTime(0),
            cycle_idx: 0,
            min_rtt: None,
            min_rtt_stamp: SimTime(0),
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            prev_ca_state: ca_state::OPEN,
            packet_conservation: false,
            round_start: false,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            has_seen_rtt: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            rate: None,
            ssthresh: super::cc::MAX_CWND,
            rng: Stream::new(seed, component),
            inited: false,
            mss: 1,
            lost: 0,
            lt: LongTerm::default(),
            ack_epoch: SimTime(0),
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
        }
    }

    /// The max-bandwidth filter's value, segments per us << 24.
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    pub fn min_rtt(&self) -> Option<Nanos> {
        self.min_rtt
    }

    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// `tp->snd_ssthresh` as BBR leaves it (one BDP from DRAIN on), bytes.
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// `sk_pacing_rate`, bytes/s.
    pub fn rate(&self) -> Option<u64> {
        self.rate
    }

    /// `bbr_init` when the connection is set up (`tcp_init_transfer`): the min RTT from the
    /// handshake's sample, the first pacing rate from cwnd / srtt.
    pub fn init(&mut self, now: SimTime, cwnd: u64, mss: u64, srtt: Option<Nanos>, min_rtt: Option<Nanos>) {
        if self.inited {
            return;
        }
        self.inited = true;
        self.mss = mss;
        self.min_rtt = min_rtt.map(us_floor);
        self.min_rtt_stamp = now;
        self.ack_epoch = now;
        self.init_pacing_rate_from_rtt(cwnd, mss, srtt);
    }

    /// `bbr_init_pacing_rate_from_rtt`.
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u64, mss: u64, srtt: Option<Nanos>) {
        let rtt_us = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                (s / 1000).max(1)
            }
            None => 1000,
        };
        let bw = cwnd * BW_UNIT / rtt_us;
        self.rate = Some(rate_bytes_per_sec(bw, HIGH_GAIN, mss));
    }

    /// `bbr_bdp`: gain x bw x min RTT, segments, rounded up.
    fn bdp(&self, bw: u64, gain: u64) -> u64 {
        let Some(min_rtt) = self.min_rtt else { return INIT_CWND };
        let w = bw as u128 * (min_rtt / 1000) as u128;
        (((w * gain as u128) >> BBR_SCALE) + BW_UNIT as u128 - 1).div_euclid(BW_UNIT as u128) as u64
    }

    /// `bbr_bw`: the long-term rate while it is used, else the max filter's.
    pub fn bw(&self) -> u64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.max_bw()
        }
    }

    /// Whether the long-term (policed) rate is in use (`lt_use_bw`).
    pub fn lt_use_bw(&self) -> bool {
        self.lt.use_bw
    }

    /// `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate, in segments, at least 1 below
    /// 1.2 Mb/s and 2 above, at most 127 (module comment).
    fn tso_segs_goal(&self) -> u64 {
        let rate = self.rate.unwrap_or(0);
        let min_segs = if rate < MIN_TSO_RATE / 8 { 1 } else { 2 };
        let bytes = (rate >> PACING_SHIFT).min(MAX_QUANTUM_BYTES);
        (bytes / self.mss.max(1)).max(min_segs).min(0x7F)
    }

    /// `bbr_quantization_budget`.
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_set_cwnd`'s target: gain x BDP + ACK aggregation's allowance, quantized.
    fn target_cwnd(&self) -> u64 {
        self.quantization_budget(self.bdp(self.bw(), self.cwnd_gain) + self.ack_aggregation_cwnd())
    }

    /// `bbr_inflight`.
    pub fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: what will be in flight at the next departure.
    fn in_net_at_edt(&self, a: &BbrAck, in_flight: u64) -> u64 {
        let interval_us = a.edt.0.saturating_sub(a.now.0) / 1000;
        let delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut at_edt = in_flight;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal();
        }
        at_edt.saturating_sub(delivered)
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_ca_state < ca_state::RECOVERY && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_set_state(TCP_CA_Loss)`: an RTO, which marked `newly_lost` segments lost; the
    /// long-term sampler sees it as a round's end with a loss.
    pub fn on_enter_loss(&mut self, delivered: u64, delivered_time: SimTime, newly_lost: u64) {
        self.lost += newly_lost;
        self.prev_ca_state = ca_state::LOSS;
        self.full_bw = 0;
        self.round_start = true;
        let rs = RateSample { losses: 1, ..RateSample::default() };
        self.lt_bw_sampling(&rs, delivered, delivered_time);
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_interval(&mut self, delivered: u64, delivered_time: SimTime) {
        self.lt.last_stamp_ms = delivered_time.0 / 1_000_000;
        self.lt.last_delivered = delivered;
        self.lt.last_lost = self.lost;
        self.lt.rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt(&mut self, delivered: u64, delivered_time: SimTime) {
        self.lt.bw = 0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.reset_lt_interval(delivered, delivered_time);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals: policed, at their mean rate.
    fn lt_interval_done(&mut self, bw: u64, delivered: u64, delivered_time: SimTime) {
        if self.lt.bw > 0 {
            let diff = bw.abs_diff(self.lt.bw);
            if diff * BBR_UNIT <= LT_BW_RATIO * self.lt.bw || rate_bytes_per_sec(diff, BBR_UNIT, self.mss) <= LT_BW_DIFF
            {
                self.lt.bw = (bw + self.lt.bw) >> 1;
                self.lt.use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt.rtt_cnt = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_interval(delivered, delivered_time);
    }

    /// `bbr_lt_bw_sampling` (tcp_bbr.c: token-bucket policers; "An Internet-Wide Analysis of
    /// Traffic Policing", SIGCOMM 2016): from the first loss, intervals of 4 to 16 rounds ending at
    /// a loss; one losing at least 20 % gives a long-term rate, and two consistent ones are used
    /// instead of the max filter (pacing gain 1) for 48 rounds.
    fn lt_bw_sampling(&mut self, rs: &RateSample, delivered: u64, delivered_time: SimTime) {
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rtt_cnt += 1;
                if self.lt.rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt(delivered, delivered_time);
                    self.reset_probe_bw_mode(delivered_time);
                }
            }
            return;
        }
        if !self.lt.is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_interval(delivered, delivered_time);
            self.lt.is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt(delivered, delivered_time);
            return;
        }
        if self.round_start {
            self.lt.rtt_cnt += 1;
        }
        if self.lt.rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt.rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt(delivered, delivered_time);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = self.lost - self.lt.last_lost;
        let interval_delivered = delivered - self.lt.last_delivered;
        if interval_delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * interval_delivered {
            return;
        }
        let t_ms = (delivered_time.0 / 1_000_000).saturating_sub(self.lt.last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        let bw = interval_delivered * BW_UNIT / (t_ms * 1000);
        self.lt_interval_done(bw, delivered, delivered_time);
    }

    /// `bbr_update_ack_aggregation`: the most data ACKed beyond bw x the epoch's length, over 5-10
    /// rounds, for `bbr_ack_aggregation_cwnd`.
    fn update_ack_aggregation(&mut self, a: &BbrAck, rs: &RateSample) {
        let valid = rs.delivered.is_some() && rs.interval.is_some_and(|i| i / 1000 > 0);
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || !valid {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = a.delivered_time.0.saturating_sub(self.ack_epoch.0) / 1000;
        let mut expected = ((self.bw() as u128 * epoch_us as u128) / BW_UNIT as u128) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.ack_epoch_acked = 0;
            self.ack_epoch = a.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(a.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.bw() * EXTRA_ACKED_MAX_US / BW_UNIT;
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked[0].max(self.extra_acked[1])) >> BBR_SCALE;
        aggr.min(max_aggr)
    }

    fn reset_mode(&mut self, delivered_time: SimTime) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(delivered_time);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_reset_probe_bw_mode`: a random phase, not the 3/4 one.
    fn reset_probe_bw_mode(&mut self, delivered_time: SimTime) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase(delivered_time);
    }

    fn advance_cycle_phase(&mut self, delivered_time: SimTime) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = delivered_time;
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, a: &BbrAck, rs: &RateSample) -> bool {
        let elapsed = (a.delivered_time.0.saturating_sub(self.cycle_stamp.0)) / 1000;
        let full_length = self.min_rtt.is_some_and(|m| elapsed > m / 1000);
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = self.in_net_at_edt(a, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: (cwnd, whether packet conservation holds).
    fn recover_or_restore(&mut self, a: &BbrAck, rs: &RateSample, cwnd: u64) -> (u64, bool) {
        let (prev, state) = (self.prev_ca_state, a.ca_state);
        let mut cwnd = cwnd;
        // An ACK for P segments releases at most 2P: first the newly lost come off.
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == ca_state::RECOVERY && prev != ca_state::RECOVERY {
            // The first round of recovery: packet conservation, the round restarted now.
            self.packet_conservation = true;
            self.next_rtt_delivered = a.delivered;
            cwnd = a.in_flight + rs.acked_sacked;
        } else if prev >= ca_state::RECOVERY && state < ca_state::RECOVERY {
            // Leaving recovery or the RTO's loss state: the cwnd saved on entering it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(a.in_flight + rs.acked_sacked), true);
        }
        (cwnd, false)
    }

    /// `bbr_main`: the model, then the pacing rate and cwnd. `cwnd` in segments.
    pub fn main(&mut self, a: &BbrAck, rs: &RateSample) -> BbrOut {
        let mut cwnd = a.cwnd;
        self.mss = a.mss;
        self.lost += rs.losses;
        // bbr_update_bw
        self.round_start = false;
        let interval_us = rs.interval.map_or(0, |i| i / 1000);
        if let (Some(delivered), true) = (rs.delivered, interval_us > 0) {
            if rs.prior_delivered >= self.next_rtt_delivered {
                self.next_rtt_delivered = a.delivered;
                self.rtt_cnt += 1;
                self.round_start = true;
                self.packet_conservation = false;
            }
            self.lt_bw_sampling(rs, a.delivered, a.delivered_time);
            let bw = delivered * BW_UNIT / interval_us;
            if !rs.is_app_limited || bw >= self.max_bw() {
                self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
            }
        }
        self.update_ack_aggregation(a, rs);
        // bbr_update_cycle_phase
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(a, rs) {
            self.advance_cycle_phase(a.delivered_time);
        }
        // bbr_check_full_bw_reached
        if !self.full_bw_reached && self.round_start && !rs.is_app_limited {
            let thresh = ((self.full_bw as u128 * FULL_BW_THRESH as u128) >> BBR_SCALE) as u64;
            if self.max_bw() >= thresh {
                self.full_bw = self.max_bw();
                self.full_bw_cnt = 0;
            } else {
                self.full_bw_cnt += 1;
                self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
            }
        }
        // bbr_check_drain
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ssthresh = self.inflight(self.max_bw(), BBR_UNIT) * a.mss;
        }
        if self.mode == Mode::Drain && self.in_net_at_edt(a, a.in_flight) <= self.inflight(self.max_bw(), BBR_UNIT) {
            self.reset_probe_bw_mode(a.delivered_time);
        }
        // bbr_update_min_rtt
        let mut app_limited = false;
        let expired = a.now.0 > self.min_rtt_stamp.0.saturating_add(MIN_RTT_WIN);
        if let Some(rtt) = rs.rtt.map(us_floor) {
            if self.min_rtt.is_none_or(|m| rtt <= m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = a.now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            app_limited = true;
            match self.probe_rtt_done {
                None if a.in_flight <= CWND_MIN_TARGET => {
                    self.probe_rtt_done = Some(a.now + PROBE_RTT_TIME);
                    self.probe_rtt_round_done = false;
                    self.next_rtt_delivered = a.delivered;
                }
                None => {}
                Some(done) => {
                    self.probe_rtt_round_done |= self.round_start;
                    if self.probe_rtt_round_done && a.now > done {
                        // bbr_check_probe_rtt_done
                        self.min_rtt_stamp = a.now;
                        cwnd = cwnd.max(self.prior_cwnd);
                        self.reset_mode(a.delivered_time);
                    }
                }
            }
        }
        // bbr_update_gains
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt.use_bw => (BBR_UNIT, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        // bbr_set_pacing_rate
        let bw = self.bw();
        let rate = rate_bytes_per_sec(bw, self.pacing_gain, a.mss);
        if !self.has_seen_rtt && a.srtt.is_some() {
            self.init_pacing_rate_from_rtt(a.cwnd, a.mss, a.srtt);
        }
        if self.full_bw_reached || self.rate.is_none_or(|r| rate > r) {
            self.rate = Some(rate);
        }
        // bbr_set_cwnd (nothing without a delivery)
        let acked = rs.acked_sacked;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(a, rs, cwnd);
            cwnd = c;
            if !conserving {
                let target = self.target_cwnd();
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || a.delivered < INIT_CWND {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        cwnd = cwnd.min(super::cc::MAX_CWND / a.mss);
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        BbrOut { cwnd, app_limited }
    }
}

/// ns to whole us (Linux keeps RTTs in us).
fn us_floor(ns: Nanos) -> Nanos {
    ns / 1000 * 1000
}

/// `bbr_rate_bytes_per_sec`: bw (segments/us << 24) x mss x gain, less the 1 % margin, bytes/s.
pub fn rate_bytes_per_sec(bw: u64, gain: u64, mss: u64) -> u64 {
    let mut rate = bw as u128 * mss as u128;
    rate = (rate * gain as u128) >> BBR_SCALE;
    rate *= (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
    (rate >> BW_SCALE).min(u64::MAX as u128) as u64
}

impl CongestionControl for Bbr {
    /// Not called: BBR sets cwnd in `on_ack` (the sender's cong_control path).
    fn on_ack(&mut self, a: &AckInfo) -> u64 {
        a.cwnd
    }

    /// `bbr_ssthresh`: save cwnd, leave ssthresh.
    fn ssthresh_on_loss(&mut self, l: &LossInfo) -> u64 {
        self.save_cwnd(l.cwnd / l.mss);
        self.ssthresh
    }

    fn ssthresh_on_timeout(&mut self, l: &LossInfo) -> u64 {
        self.ssthresh_on_loss(l)
    }

    fn ssthresh_on_ecn(&mut self, l: &LossInfo) -> u64 {
        self.ssthresh_on_loss(l)
    }

    fn pacing_rate(&self, _p: &PacingInput) -> Option<u64> {
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const MSS: u64 = 1000;

    /// A BBR set up at 0 with a 10 ms RTT and cwnd 10.
    fn bbr() -> Bbr {
        let mut b = Bbr::new(1, crate::rng::component::bbr_cycle(0));
        b.init(SimTime(0), 10, MSS, Some(10 * MS), Some(10 * MS));
        b
    }

    /// Round k (from 1) ends with one ACK at k x 10 ms: `delivered` segments by then, the sample
    /// `sample` segments over 10 ms since the round's start (prior delivered: the count a round
    /// earlier), `losses` newly lost; 100 segments in flight.
    fn round(b: &mut Bbr, k: u64, delivered: u64, prior: u64, sample: u64, losses: u64, app_limited: bool) {
        let now = SimTime(k * 10 * MS);
        let rs = RateSample {
            prior_delivered: prior,
            prior_time: Some(SimTime((k - 1) * 10 * MS)),
            delivered: Some(sample),
            interval: Some(10 * MS),
            rtt: Some(10 * MS),
            acked_sacked: 1,
            losses,
            prior_in_flight: 100,
            is_app_limited: app_limited,
            ..RateSample::default()
        };
        let a = BbrAck {
            now,
            cwnd: 100,
            in_flight: 100,
            delivered,
            delivered_time: now,
            ca_state: ca_state::OPEN,
            edt: now,
            srtt: Some(10 * MS),
            mss: MSS,
        };
        b.main(&a, &rs);
    }

    #[test]
    fn the_windowed_max_keeps_the_best_of_ten_rounds() {
        let mut m = MinMax::default();
        m.reset(0, 0);
        assert_eq!(m.running_max(10, 1, 50), 50);
        // Round 2's 30 is lower and within the first quarter of the window: not kept (the three
        // samples stay round 1's).
        assert_eq!(m.running_max(10, 2, 30), 50);
        // Round 11: 10 rounds after the best, still in the window; past a quarter of it, the
        // 20 becomes the second and third best.
        assert_eq!(m.running_max(10, 11, 20), 50);
        // Round 12: the 50 of round 1 is older than the window: the second best (20) takes over.
        assert_eq!(m.running_max(10, 12, 10), 20);
        assert_eq!(m.running_max(10, 13, 10), 20);
        assert_eq!(m.running_max(10, 14, 60), 60); // a new max resets the window
    }

    #[test]
    fn three_rounds_without_a_quarter_more_bandwidth_fill_the_pipe() {
        // 10 segments per 10 ms in every round: round 1 sets full_bw; rounds 2, 3 and 4 grow it by
        // less than 25 %: full_bw_cnt 1, 2, 3: the pipe is full at round 4, and DRAIN begins (100
        // in flight is above one BDP: 1 segment/ms x 10 ms + 3 quanta of 2, 16).
        let mut b = bbr();
        for k in 1..=3 {
            round(&mut b, k, 10 * k, 10 * (k - 1), 10, 0, false);
            assert_eq!(b.mode, Mode::Startup, "round {k}");
        }
        round(&mut b, 4, 40, 30, 10, 0, false);
        assert!(b.full_bw_reached());
        assert_eq!(b.mode, Mode::Drain);
        assert_eq!(b.pacing_gain(), DRAIN_GAIN);
        // ssthresh = one BDP + quanta: 10 + 6 = 16 segments.
        assert_eq!(b.ssthresh(), 16 * MSS);

        // A rate that grows 25 % a round never fills it.
        let mut b = bbr();
        let mut sample = 8;
        for k in 1..=8 {
            sample = sample * 5 / 4 + 1;
            round(&mut b, k, 10 * k, 10 * (k - 1), sample, 0, false);
        }
        assert_eq!(b.mode, Mode::Startup);
        // Application-limited rounds do not count.
        let mut b = bbr();
        round(&mut b, 1, 10, 0, 10, 0, false);
        for k in 2..=6 {
            round(&mut b, k, 10 * k, 10 * (k - 1), 10, 0, true);
        }
        assert_eq!(b.mode, Mode::Startup);
    }

    #[test]
    fn two_lossy_intervals_at_one_rate_are_taken_for_a_policer() {
        // Samples say 20 segments per 10 ms (the max filter: 2 segments/ms), but 10 segments are
        // delivered a round and 3 lost (30 %, above 20 %). From the first loss (round 1: the
        // interval starts at 10 segments, 10 ms, 3 lost), 4 rounds make an interval: at round 4,
        // 30 delivered and 9 lost over 30 ms: lt_bw = 30 x 2^24 / 30000 = 16777 (1 segment/ms).
        // Rounds 5-8 give the same rate (40 over 40 ms): consistent: policed, bw = their mean.
        let mut b = bbr();
        for k in 1..=7 {
            round(&mut b, k, 10 * k, 10 * (k - 1), 20, 3, false);
            assert!(!b.lt_use_bw(), "round {k}");
        }
        assert_eq!(b.max_bw(), 20 * BW_UNIT / 10_000);
        round(&mut b, 8, 80, 70, 20, 3, false);
        assert!(b.lt_use_bw());
        assert_eq!(b.bw(), BW_UNIT / 1000);
        // With 10 % lost (1 a round) it is no policer.
        let mut b = bbr();
        for k in 1..=12 {
            round(&mut b, k, 10 * k, 10 * (k - 1), 20, 1, false);
        }
        assert!(!b.lt_use_bw());
        assert_eq!(b.bw(), 20 * BW_UNIT / 10_000);
    }

    #[test]
    fn recovery_conserves_packets_for_a_round_and_its_end_restores_cwnd() {
        // The pipe full at 1 segment/ms (4 flat rounds), then cwnd 40 segments when a loss is found:
        // bbr_ssthresh saves 40 (prior_cwnd) and leaves ssthresh.
        let mut b = bbr();
        for k in 1..=4 {
            round(&mut b, k, 10 * k, 10 * (k - 1), 10, 0, false);
        }
        let ss = b.ssthresh();
        let loss = LossInfo { now: SimTime(45 * MS), cwnd: 40 * MSS, flight: 40 * MSS, snd_wnd: u64::MAX, mss: MSS };
        assert_eq!(b.ssthresh_on_loss(&loss), ss);
        let ack =
            |b: &mut Bbr, t_ms: u64, delivered: u64, prior: u64, cwnd: u64, in_flight: u64, losses: u64, state: u8| {
                let now = SimTime(t_ms * MS);
                let rs = RateSample {
                    prior_delivered: prior,
                    prior_time: Some(SimTime((t_ms - 10) * MS)),
                    delivered: Some(10),
                    interval: Some(10 * MS),
                    rtt: Some(10 * MS),
                    acked_sacked: 1,
                    losses,
                    prior_in_flight: in_flight + 1,
                    ..RateSample::default()
                };
                let a = BbrAck {
                    now,
                    cwnd,
                    in_flight,
                    delivered,
                    delivered_time: now,
                    ca_state: state,
                    edt: now,
                    srtt: Some(10 * MS),
                    mss: MSS,
                };
                b.main(&a, &rs).cwnd
            };
        // The first ACK in recovery (1 acked, 1 newly lost, 30 in flight): packet conservation,
        // cwnd = in flight + acked = 31, whatever cwnd was.
        assert_eq!(ack(&mut b, 46, 41, 36, 40, 30, 1, ca_state::RECOVERY), 31);
        // Within that round (prior delivered 37 < the round's start, 41): at least in flight +
        // acked, no growth: 29 in flight: cwnd stays 31.
        assert_eq!(ack(&mut b, 47, 42, 37, 31, 29, 0, ca_state::RECOVERY), 31);
        // A packet sent after the round began comes back (prior delivered 41): the round is over,
        // conservation ends, cwnd grows by the acked segment towards the target: 32.
        assert_eq!(ack(&mut b, 57, 43, 41, 31, 29, 0, ca_state::RECOVERY), 32);
        // Recovery ends: cwnd back to the 40 saved on entering it, then as on any ACK with the pipe
        // full, min(cwnd + 1, the target): here DRAIN's target (2.885 x 10 segments + ACK
        // aggregation's allowance + 3 quanta of 2, even) is below 41.
        let target = b.target_cwnd();
        assert!(target < 40);
        assert_eq!(ack(&mut b, 58, 44, 42, 32, 29, 0, ca_state::OPEN), target);
        // Without the restore it would be min(32 + 1, target) = 33.
        assert!(target > 33);
    }
}
