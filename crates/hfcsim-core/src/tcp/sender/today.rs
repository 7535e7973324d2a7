//! The sender's loss recovery as today's stacks run it (the `linux` profile), beside the Net/3
//! path of `sender.rs`. It is taken whenever a scenario turns on one of today's rules
//! (`SenderConfig::today`); with none of them the Net/3 path runs, unchanged.
//!
//! The rules and their sources:
//! - **What is in flight** is RFC 6675's `pipe` over a per-segment scoreboard (`sack.rs`), as
//!   Linux's `tcp_packets_in_flight` counts it: unSACKed segments not deemed lost, plus the
//!   retransmissions in flight. New data goes out while pipe + one segment fits in cwnd and the
//!   peer's window and the send buffer allow it. Without SACK, Linux counts each duplicate ACK as
//!   one segment that has left (`tcp_add_reno_sack`: `sacked_out` without blocks) and takes it
//!   off the pipe; the cumulative ACK that ends a run of them takes all but one back
//!   (`tcp_remove_reno_sacks`).
//! - **Limited Transmit** (RFC 3042) follows from that pipe: each duplicate ACK (or SACK) frees a
//!   segment's room, so new data goes out before recovery starts. RFC 3042 allows two such
//!   segments before the third duplicate ACK starts recovery; Linux's pipe allows as many as
//!   there are duplicate ACKs, which matters only when RACK delays recovery past the third.
//!   `limited_transmit = false` counts duplicate ACKs for nothing until recovery, and with SACK (or
//!   `reno_reordering`) lets new data out before recovery only while cwnd covers all the data
//!   outstanding, SACKed or not (RFC 6675 5 (C): Limited Transmit is a MAY; RFC 5681's FlightSize).
//! - **Nagle** (`tcp.nagle`): RFC 896's rule as on the Net/3 path: a short segment waits while data is
//!   outstanding (the tail loss probe ignores it, as Linux's tcp_send_loss_probe sends with
//!   TCP_NAGLE_OFF).
//! - **Without SACK, as Linux** (`tcp.reno_reordering`, net/ipv4/tcp_input.c): the duplicate
//!   ACKs are Linux's `sacked_out`, at most the segments out less the holes (those deemed lost, at
//!   least one: `tcp_limit_reno_sacked`); more duplicate ACKs than that are read as reordering, and
//!   the reordering degree becomes the segments out (plus those the ACK acknowledged), at most
//!   tcp_max_reordering = 300 (`tcp_check_reno_reordering`). Before recovery the head is lost once
//!   `sacked_out` reaches the degree (`tcp_newreno_mark_lost`), so a degree raised to the window
//!   leaves only the RTO; an RTO taken with `sacked_out` at least tcp_reordering (3,
//!   `tcp.dupack_threshold`) brings the degree back (`tcp_enter_loss`). After an RTO a duplicate
//!   ACK counts only once data beyond the recovery point has gone out (`tcp_process_loss`).
//!   Recovery and the RTO's loss state are held while snd_una is exactly the recovery point
//!   (`tcp_is_non_sack_preventing_reopen`): a hole there waits for the RTO. Without the key the
//!   threshold is `tcp.dupack_threshold` consecutive duplicate ACKs and recovery ends on reaching
//!   the point (RFC 6675 5 (A)).
//! - **Loss detection**: with RACK (RFC 8985 Sec. 6, `rack.rs`), a segment is lost when one sent
//!   a reordering window after it has been delivered; recovery starts when one is marked. With
//!   SACK and no RACK, RFC 6675 `IsLost` marks (DupThresh SACKed segments above, or DupThresh
//!   duplicate ACKs mark the first). Without SACK, DupThresh duplicate ACKs mark the first
//!   unacknowledged segment, and each partial ACK in recovery the next (RFC 6582 NewReno; Linux
//!   `tcp_mark_head_lost` for non-SACK connections).
//! - **Recovery** (RFC 6675 Sec. 5): at entry ssthresh comes from the congestion-control hook,
//!   RecoveryPoint = HighData; each ACK sends what NextSeg offers (lost segments first, then new
//!   data, then rule (3) and the rescue retransmission). How much: with PRR (RFC 6937, `prr.rs`)
//!   the `sndcnt` of each ACK (with `tcp.prr_linux` Linux's `tcp_cwnd_reduction`: RecoverFS the
//!   cwnd at entry, the slow-start bound's extra segment only on an ACK that advances snd_una
//!   without a new loss, and on the ACK that starts recovery the fast retransmission one of
//!   sndcnt's segments); without, RFC 6675's "cwnd = ssthresh, send while pipe < cwnd".
//!   Recovery ends when the cumulative ACK passes RecoveryPoint, with cwnd = ssthresh (Linux
//!   `tcp_end_cwnd_reduction`). cwnd does not grow in recovery.
//! - **Growth** outside recovery is the hook's (`cc.rs`: Reno per ACK or by byte counting,
//!   CUBIC), and only while the sender is cwnd-limited (Linux `tcp_is_cwnd_limited`: in slow
//!   start while cwnd < 2 x the data in flight, else when the last send was stopped by cwnd).
//!   Net/3 grows cwnd on every ACK, even when the peer's window is what limits it.
//!   With `tcp.hystart` (CUBIC only) Linux's hybrid slow start may end slow start early, setting
//!   ssthresh to cwnd (`tcp/hystart.rs`); each ACK's RTT sample reaches it before the growth.
//! - **RTO** (RFC 6298 5.4-5.6 and Linux `tcp_enter_loss`): back off, ssthresh from the hook
//!   (held on a repeated timeout of the same segment, RFC 5681 3.1, if
//!   `repeat_timeout_holds_ssthresh`), cwnd = one segment, every unSACKed segment deemed lost and
//!   resent in order in slow start; SACK information is kept (RFC 6675 5.1).
//! - **F-RTO** (`tcp.frto`, RFC 5682 3.1 as Linux runs it, tcp_frto = 2: `tcp_enter_loss`,
//!   `tcp_process_loss`): on for a timeout outside recovery or a recurring one of the same
//!   snd_una. The first ACK of new data after the retransmission moves the recovery point to
//!   HighData and sends new data instead of the segments deemed lost (if the window has room;
//!   else F-RTO ends). The next ACK decides: one that delivers a segment never retransmitted
//!   below the recovery point (cumulatively, without SACK only if no retransmitted segment is
//!   among those it acknowledges; or by SACK) shows the timeout spurious: the undo
//!   (`tcp_try_undo_loss`) clears every lost mark and restores cwnd and ssthresh to the larger of
//!   now and before the cut (`prior_cwnd`, `tcp_current_ssthresh`), and the state is Open; a
//!   duplicate ACK or SACK ends F-RTO and the recovery resends. The undo is Linux's
//!   `tcp_undo_cwnd_reduction`, shared with `tcp.undo`.
//! - **D-SACK** (`tcp.dsack`, RFC 2883 Sec. 4.1 as Linux reads it, `tcp_check_dsack`): the first
//!   SACK block is a D-SACK when it starts below the ACK, or lies inside the second block. Such an
//!   ACK is no duplicate ACK (Linux FLAG_DSACKING_ACK: it carries no new SACK information). It is
//!   ignored when more segments have been D-SACKed than were ever retransmitted
//!   (`tcp_dsack_seen`). A D-SACK of one segment ending where an outstanding tail loss probe ended
//!   shows that the original and the probe both arrived: no loss, no cut (FLAG_DSACK_TLP,
//!   `tcp_process_tlp_ack`; RFC 8985 7.4.2).
//! - **Undo** (`tcp.undo`, net/ipv4/tcp_input.c): each fast recovery, and each RTO outside
//!   recovery, starts an episode (`tcp_init_undo`): the undo marker is snd_una, and cwnd and
//!   ssthresh before the cut are kept (`prior_cwnd`; `prior_ssthresh` = `tcp_current_ssthresh`,
//!   none when the recovery began inside an ECN reduction). Every retransmission counts one
//!   (`undo_retrans`), every retransmitted segment above the marker that a D-SACK reports takes one
//!   back (`tcp_sacktag_one`; below snd_una, the D-SACK's segments, `tcp_check_dsack`'s "dumb
//!   counting"). With none left (`tcp_may_undo`) every retransmission was spurious, and the undo
//!   restores cwnd to the larger of now and before (`undo_cwnd`: Reno's `tcp_reno_undo_cwnd`, which
//!   CUBIC also uses in Linux 6.x) and ssthresh to the larger of now and before
//!   (`tcp_undo_cwnd_reduction`), and ends the episode: in recovery, on any ACK
//!   (`tcp_try_undo_dsack`, recovery goes on; `tcp_try_undo_recovery` when it ends, without the
//!   cut to ssthresh); after an RTO, on an ACK of new data, which also clears the lost marks and,
//!   with SACK, ends the loss state (`tcp_try_undo_loss`); outside both, on a D-SACK's ACK
//!   (`tcp_try_undo_dsack`; not while reducing for ECN, whose cut ends the episode,
//!   `tcp_enter_cwr`). Not modelled: the other half of `tcp_may_undo`, `tcp_packet_delayed` (an
//!   ACK echoing a timestamp older than the first retransmission, RFC 3522's Eifel check: the
//!   model's data packets carry no TSval; its other case, nothing retransmitted, cannot arise
//!   here, recovery and the RTO retransmit at once), and so `tcp_try_undo_partial`, which needs
//!   it. An undo inside recovery leaves PRR running towards the restored ssthresh (Linux's
//!   `tcp_cwnd_reduction` reads it each ACK); cwnd is left as it is at the end, where Linux keeps
//!   PRR's last pipe + sndcnt.
//! - **RACK's reordering window with D-SACK** (`tcp.rack_reo_wnd_dsack`, `rack.rs`): a D-SACK
//!   (not of a probe) once reordering has been seen widens it by min_RTT / 4 once per round trip;
//!   recoveries that end without an undo count down its persistence.
//! - **Tail loss probe** (RFC 8985 Sec. 7): while not in recovery, with data in flight, a probe
//!   timer of 2 x SRTT (plus the peer's delayed-ACK allowance with one segment in flight), never
//!   later than the RTO, sends one new segment if the window allows, else the highest one again.
//! - **RTT**: with the `linux` timer every ACK of new data is a sample (the oldest newly
//!   acknowledged segment, if none of them was retransmitted, Linux `tcp_clean_rtx_queue`; with
//!   timestamps, RFC 7323's echo of the segment that advanced the left edge when none is
//!   Karn-safe), and any progress restarts the count towards giving up; the other timers keep
//!   Net/3's one timed segment (Karn).
//! - **ECN** (`tcp.ecn`, RFC 3168 Sec. 6.1; it takes this path: RFC 3168 came after 4.4BSD): new
//!   data goes out ECT(0) (ECT(1) in the `l4s` mode, RFC 9331 Sec. 4), retransmissions Not-ECT
//!   (RFC 3168 Sec. 6.1.5), pure ACKs Not-ECT (Sec. 6.1.4). An ACK with ECE outside loss recovery
//!   and outside a reduction cuts ssthresh by the hook's rule (`ssthresh_on_ecn`: as for a loss,
//!   DCTCP's by alpha) and cwnd to it at once (Sec. 6.1.2 "halves the congestion window"; Linux
//!   reaches it over the round trip by PRR, chosen here: the RFC's immediate cut), with no
//!   retransmission. The reduction lasts until snd_una passes what was sent when it began (Linux
//!   `TCP_CA_CWR`, `high_seq`; strictly past it, so that the ACKs the receiver sent before it got
//!   the CWR segment, which still echo the old CE, are ignored): no second cut and no growth in
//!   that round trip, and a loss found in it does not cut ssthresh again (Linux
//!   `tcp_enter_recovery` skips it while reducing). The next new data segment carries CWR (Sec.
//!   6.1.2). DCTCP's alpha sees every ACK's acknowledged bytes and ECE (RFC 8257 Sec. 3.3) before
//!   the cut. TCP Prague (`prague.rs`) grows cwnd during the reduction too.
//! - **Pacing** (`tcp.pacing`, `tcp/pacing.rs`: Linux's internal pacing): the rate is set after
//!   each ACK's window change and at the start; every segment sent advances the departure time;
//!   `send_today` holds the next segment until then and arms the pacing timer, which sends again
//!   (with the PRR allowance left, in recovery). Off, none of this runs.

use super::{Action, Out, Sender, State};
use crate::packet::Ecn;
use crate::scenario::{CongestionControlKind, EcnMode, Tcp};
use crate::tcp::bbr::{ca_state, Bbr, BbrAck};
use crate::tcp::cc::{AckInfo, CongestionControl, Feedback, LossInfo, Reno};
use crate::tcp::controller::Controller;
use crate::tcp::cubic::Cubic;
use crate::tcp::dctcp::Dctcp;
use crate::tcp::hystart::HyStart;
use crate::tcp::pacing::{Pacer, PacingInput};
use crate::tcp::prague::Prague;
use crate::tcp::prr::Prr;
use crate::tcp::rack::{Rack, Tlp, TlpOutcome};
use crate::tcp::rate::RateSampler;
use crate::tcp::rto::Rto;
use crate::tcp::sack::{NextSeg, Scoreboard};
use crate::tcp::segs::Seg;
use crate::time::{Nanos, SimTime};

impl Tcp {
    /// Whether one of today's rules is on: the sender then runs this file's recovery.
    pub fn today(&self) -> bool {
        self.sack
            || self.rack
            || self.tlp
            || self.prr
            || self.limited_transmit
            || self.reno_reordering
            || self.frto
            || self.undo
            || self.byte_counting
            || self.congestion_control != CongestionControlKind::Reno
            || self.ecn != EcnMode::Off
            || self.pacing
    }
}

/// RFC 8985 7.2: the peer's worst-case delayed-ACK time added to a probe when one segment is in
/// flight (WCDelAckT, 200 ms; Linux adds TCP_RTO_MIN, also 200 ms).
const MAX_ACK_DELAY: Nanos = 200_000_000;

/// Linux sysctl tcp_max_reordering (Documentation/networking/ip-sysctl.rst: 300), the most the
/// reordering degree grows to.
const MAX_REORDERING: u64 = 300;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Open,
    /// Fast recovery (RFC 6675 Sec. 5) until the cumulative ACK passes the recovery point.
    Recovery,
    /// After an RTO (Linux `TCP_CA_Loss`): resending what is deemed lost, in slow start.
    Loss,
}

/// The state today's recovery adds to the sender.
#[derive(Clone, Debug)]
pub struct Today {
    sb: Scoreboard,
    cc: Controller,
    rack: Rack,
    tlp: Tlp,
    prr: Option<Prr>,
    phase: Phase,
    /// Without SACK: the duplicate ACKs' segments that have left (Linux `sacked_out`), bytes.
    dup_sacked: u64,
    /// `tcp.reno_reordering`: Linux's `sacked_out` without SACK, in segments (`dup_sacked` is it
    /// in bytes), and the reordering degree `tp->reordering`, the duplicate ACKs that start
    /// recovery (module comment).
    sacked_out: u64,
    reordering: u64,
    /// `tcp.frto`: F-RTO is on for the RTO under way (Linux `tp->frto`).
    frto: bool,
    /// `tcp.frto`: send new data only, no retransmission, on this ACK (step 2.b, REXMIT_NEW).
    new_only: bool,
    /// `tcp.frto`, `tcp.undo`: cwnd and ssthresh before the episode's cut, for the undo (Linux
    /// `prior_cwnd`, `prior_ssthresh`; None: `prior_ssthresh` 0, nothing to restore).
    prior: Option<(u64, u64)>,
    /// `tcp.undo` (module comment): snd_una when the episode began (Linux `undo_marker`); None:
    /// no episode to undo.
    undo_marker: Option<u64>,
    /// `tcp.undo`: the episode's retransmissions not D-SACKed (Linux `undo_retrans`; -1 before the
    /// first, as Linux avoids 0, which means "can undo now").
    undo_retrans: i64,
    /// `tcp.dsack`: segments D-SACKed so far (Linux `dsack_dups`).
    dsack_dups: u64,
    /// `tcp.hystart`: CUBIC's hybrid slow start (`tcp/hystart.rs`).
    hystart: Option<HyStart>,
    min_rtt: Option<Nanos>,
    tlp_at: Option<SimTime>,
    reorder_at: Option<SimTime>,
    /// The last send stopped because of cwnd (Linux `is_cwnd_limited`).
    cwnd_limited: bool,
    /// The most data in flight since the last ACK (Linux `max_packets_out`), bytes.
    max_flight: u64,
    /// Segments ending at or below this have no lost segment left to resend (`first_lost_unsent`).
    rxt_hint: u64,
    /// ECN: reducing for an ECE until snd_una reaches this (Linux `TCP_CA_CWR`'s `high_seq`).
    cwr_end: Option<u64>,
    /// ECN: the next new data segment carries CWR (RFC 3168 Sec. 6.1.2).
    send_cwr: bool,
    /// `tcp.pacing`: the departure-time state (`pacing.rs`); None when off.
    pacer: Option<Pacer>,
    /// The pacing timer (Linux `pacing_timer`): the pacer held a segment until then.
    pace_at: Option<SimTime>,
    /// PRR's allowance left when the pacer held a segment in recovery; the pacing timer spends it.
    paced_budget: Option<u64>,
    /// BBR's delivery-rate samples (`tcp/rate.rs`); None for the other controls.
    rate: Option<RateSampler>,
}

impl Today {
    pub fn new(cfg: &super::SenderConfig) -> Today {
        let cc = match cfg.congestion_control {
            CongestionControlKind::Reno if cfg.byte_counting => Controller::Reno(Reno::linux()),
            CongestionControlKind::Reno => Controller::Reno(Reno::net3(cfg.slow_start_at_ssthresh)),
            CongestionControlKind::Cubic if cfg.cubic_linux_friendliness => {
                Controller::Cubic(Cubic::linux_friendliness())
            }
            CongestionControlKind::Cubic => Controller::Cubic(Cubic::new()),
            CongestionControlKind::Dctcp => Controller::Dctcp(Dctcp::new()),
            CongestionControlKind::Prague => Controller::Prague(Prague::new()),
            CongestionControlKind::Bbr => Controller::Bbr(Box::new(Bbr::new(cfg.cc_stream.0, cfg.cc_stream.1))),
        };
        let bbr = cc.is_bbr();
        Today {
            sb: Scoreboard::new(0),
            cc,
            rack: Rack::new(),
            tlp: Tlp::new(MAX_ACK_DELAY),
            prr: None,
            phase: Phase::Open,
            dup_sacked: 0,
            sacked_out: 0,
            reordering: cfg.dupack_threshold as u64,
            frto: false,
            new_only: false,
            prior: None,
            undo_marker: None,
            undo_retrans: -1,
            dsack_dups: 0,
            hystart: cfg.hystart.then(HyStart::new),
            min_rtt: None,
            tlp_at: None,
            reorder_at: None,
            cwnd_limited: false,
            max_flight: 0,
            rxt_hint: 0,
            cwr_end: None,
            send_cwr: false,
            // BBR paces whatever tcp.pacing says (tcp_bbr.c bbr_init: SK_PACING_NEEDED).
            pacer: (cfg.pacing || bbr).then(Pacer::default),
            pace_at: None,
            paced_budget: None,
            rate: bbr.then(RateSampler::new),
        }
    }

    pub fn next_deadline(&self) -> Option<SimTime> {
        let t = match (self.tlp_at, self.reorder_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (t, self.pace_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl Today {
    /// Linux tcp_add_reno_sack: a dupACK is one more segment delivered.
    fn add_reno_sack(&mut self, mss: u64) {
        self.sacked_out += 1;
        self.check_reno_reordering(0, mss);
    }

    /// Linux tcp_check_reno_reordering and tcp_limit_reno_sacked: sacked_out is at most the
    /// segments out less the holes (the segments deemed lost, at least one); more dupACKs than
    /// that are taken for reordering, and the degree becomes the segments out plus `addend` (the
    /// segments the ACK acknowledged), at most sysctl tcp_max_reordering. Linux sets it, up or
    /// down, without a floor. Segments are counted from the scoreboard; the lost ones from their
    /// bytes (all are MSS-sized but the last).
    fn check_reno_reordering(&mut self, addend: u64, mss: u64) {
        let packets_out = self.sb.len() as u64;
        let holes = self.sb.lost_bytes().div_ceil(mss).max(1).min(packets_out);
        if self.sacked_out + holes > packets_out {
            self.sacked_out = packets_out - holes;
            self.reordering = (packets_out + addend).min(MAX_REORDERING);
        }
    }
}

impl Sender {
    fn today(&mut self) -> &mut Today {
        self.today.as_mut().expect("the today path needs its state")
    }

    /// Bytes in flight as the sender counts them: the scoreboard's pipe, less the segments that
    /// duplicate ACKs say have left when there is no SACK.
    pub(super) fn pipe(&self) -> u64 {
        let t = self.today.as_ref().expect("today");
        t.sb.pipe().saturating_sub(t.dup_sacked)
    }

    fn srtt(&self) -> Option<Nanos> {
        self.rto.srtt()
    }

    /// Linux `tcp_is_cwnd_limited`.
    fn cwnd_limited(&self) -> bool {
        let t = self.today.as_ref().expect("today");
        if self.cwnd < self.ssthresh {
            return self.cwnd < 2 * t.max_flight;
        }
        t.cwnd_limited
    }

    /// An ACK (with its SACK blocks, and ECE when ECN is on) in ESTABLISHED (module comment).
    pub(super) fn on_ack_today(
        &mut self,
        now: SimTime,
        ack: u64,
        wnd: u64,
        blocks: &[(u64, u64)],
        ece: bool,
        out: &mut Vec<Out>,
    ) {
        if ack > self.snd_max || ack < self.snd_una {
            return; // acknowledges what was never sent, or an old ACK: dropped (RFC 9293 3.10.7.4)
        }
        self.stats.acks_received += 1;
        let mss = self.cfg.mss;
        let prior_una = self.snd_una;
        let prior_dup = self.today().dup_sacked;
        let window_update = wnd != self.snd_wnd;
        let linux_timer = matches!(self.rto, Rto::Linux(_));
        let rack_on = self.cfg.rack;
        let timestamps = self.cfg.timestamps;
        // tcp.dsack (module comment): before the scoreboard forgets what the D-SACK reports.
        let dsack = if self.cfg.dsack { self.read_dsack(ack, prior_una, blocks) } else { None };
        // BBR (tcp/bbr.rs): the ACK's deliveries for its rate sample (tcp_rate.c), with the
        // segments in flight before it.
        let bbr_on = self.today().rate.is_some();
        if bbr_on {
            let prior_in_flight = self.pipe().div_ceil(mss);
            if let Some(r) = self.today().rate.as_mut() {
                r.on_ack(ack, blocks, prior_in_flight);
            }
        }

        // Before the scoreboard forgets the acknowledged segments: the RTT sample (the oldest
        // newly acknowledged segment never retransmitted, Linux `tcp_clean_rtx_queue`), and RACK's
        // deliveries among them (those not SACKed before).
        // F-RTO (Linux FLAG_ORIG_SACK_ACKED): this ACK delivers a segment sent once only, below
        // the recovery point, newly acknowledged or newly SACKed.
        let mut orig_acked = false;
        let mut retransmitted_acked = false;
        if self.today.as_ref().is_some_and(|t| t.frto) {
            let t = self.today.as_ref().expect("today");
            let rp = t.sb.recovery_point().unwrap_or(0);
            let inside = |s: &Seg| blocks.iter().any(|&(l, r)| l >= ack && l <= s.start && s.end <= r);
            orig_acked =
                t.sb.segs()
                    .take_while(|s| s.end <= rp)
                    .any(|s| !s.retransmitted && !s.sacked && (s.end <= ack || inside(s)));
        }
        if ack > prior_una {
            let t = self.today.as_mut().expect("today");
            let min_rtt = t.min_rtt.unwrap_or(0);
            let (mut oldest, mut retransmitted) = (None, false);
            for s in t.sb.segs().take_while(|s| s.end <= ack) {
                retransmitted |= s.retransmitted;
                if oldest.is_none() && !s.retransmitted {
                    oldest = Some(s.sent_at);
                }
                if rack_on && !s.sacked && !s.retransmitted {
                    t.rack.on_delivered(s, now, min_rtt);
                }
            }
            // RFC 8985 6.2 step 2 takes the deliveries in order of transmission: the originals
            // (in sequence order, as they were sent), then the retransmissions, sent since.
            if rack_on && retransmitted {
                for s in t.sb.segs().take_while(|s| s.end <= ack).filter(|s| s.retransmitted && !s.sacked) {
                    t.rack.on_delivered(s, now, min_rtt);
                }
            }
            // RFC 7323 4.3 (RTTM): with timestamps the ACK echoes the TSval of the segment that
            // advanced the receiver's left edge, the first newly acknowledged one, even if it was
            // a retransmission (Linux `tcp_ack_update_rtt` falls back to it when no segment is
            // Karn-safe).
            // Linux tcp_clean_rtx_queue without SACK: "If any of the cumulatively ACKed segments
            // was retransmitted, non-SACK case cannot confirm that progress was due to original
            // transmission".
            if retransmitted && !self.cfg.sack {
                orig_acked = false;
            }
            retransmitted_acked = retransmitted;
            let echoed = if timestamps { t.sb.segs().next().map(|s| s.sent_at) } else { None };
            if linux_timer {
                // Linux tcp_clean_rtx_queue: an ACK that also covers retransmitted data gives no
                // sample from the segments' send times (FLAG_RETRANS_DATA_ACKED: it was that
                // retransmission that moved the receiver's edge, maybe long after the rest
                // arrived).
                let karn = if retransmitted { None } else { oldest };
                if let Some(sent) = karn.or(echoed) {
                    let snd_nxt = self.snd_max;
                    self.rto.sample_seq(sent, now, ack, snd_nxt);
                }
                self.rto.on_progress();
            } else {
                self.sample_rtt(now, ack);
            }
        }

        let t = self.today.as_mut().expect("today");
        let before = t.sb.len();
        let up = t.sb.on_ack(ack, blocks);
        let acked_segments = (before - t.sb.len()) as u64;
        if let Some(d) = up.latest_delivered {
            let rtt = now - d.sent_at;
            if !d.retransmitted {
                t.min_rtt = Some(t.min_rtt.map_or(rtt, |m| m.min(rtt)));
            }
            // HyStart's sample (Linux ca_rtt_us: the most recently sent segment newly delivered,
            // none when a retransmission is among those cumulatively acknowledged), before this
            // ACK's growth (pkts_acked runs before cong_avoid).
            if !d.retransmitted && !retransmitted_acked {
                if let Some(h) = t.hystart.as_mut() {
                    let srtt = self.rto.srtt();
                    let (una, nxt, mss) = (ack.max(prior_una), self.snd_max, self.cfg.mss);
                    if let Some(ss) = h.on_sample(now, rtt, una, nxt, self.cwnd, self.ssthresh, mss, srtt) {
                        self.ssthresh = ss;
                    }
                }
            }
            if rack_on && up.newly_sacked > 0 {
                let seg = Seg {
                    start: d.end - 1,
                    end: d.end,
                    sent_at: d.sent_at,
                    retransmitted: d.retransmitted,
                    sacked: true,
                    lost: false,
                    retrans_in_flight: false,
                };
                t.rack.on_delivered(&seg, now, t.min_rtt.unwrap_or(0));
            }
        }
        let is_dup =
            ack == prior_una && ack < self.snd_max && (up.new_sack_info || (blocks.is_empty() && !window_update));
        self.snd_wnd = wnd;
        if ack > prior_una {
            self.emit(out, Action::NewAck { ack });
            self.snd_una = ack;
            self.dupacks = 0;
        } else if is_dup {
            self.dupacks += 1;
            self.emit(out, Action::DupAck { ack, count: self.dupacks });
        }
        let sack = self.cfg.sack;
        let limited_transmit = self.cfg.limited_transmit;
        let linux_reno = self.cfg.reno_reordering && !sack;
        if linux_reno {
            self.reno_sacks_linux(acked_segments, is_dup, ack > prior_una);
        }
        let t = self.today.as_mut().expect("today");
        // Without SACK: duplicate ACKs as segments that have left (tcp_add_reno_sack), and a
        // cumulative ACK takes back all but one of them (tcp_remove_reno_sacks).
        if !sack && !linux_reno {
            if up.acked > 0 {
                let acked_segments = up.acked.div_ceil(mss);
                t.dup_sacked = t.dup_sacked.saturating_sub(acked_segments.saturating_sub(1) * mss);
            } else if is_dup && (limited_transmit || t.phase != Phase::Open) {
                let room = t.sb.pipe().saturating_sub(mss);
                t.dup_sacked = (t.dup_sacked + mss).min(room);
            }
            if t.sb.is_empty() {
                t.dup_sacked = 0;
            }
        }
        // RFC 6937 3: DeliveredData = the change in snd.una plus the change in SACKed bytes;
        // without SACK the duplicate ACKs' segments stand in for the SACKed ones.
        let delivered = if sack { up.delivered() } else { (up.acked + t.dup_sacked).saturating_sub(prior_dup) };

        // The tail loss probe's verdict (RFC 8985 7.4).
        let pure_dup = ack == prior_una && blocks.is_empty() && !window_update;
        let dsack_tlp = dsack == Some(true);
        if t.tlp.on_ack(ack, pure_dup, dsack_tlp) == TlpOutcome::RepairedLoss {
            let info = LossInfo { now, cwnd: self.cwnd, flight: self.snd_max - self.snd_una, snd_wnd: wnd, mss };
            let t = self.today.as_mut().expect("today");
            self.ssthresh = t.cc.ssthresh_on_loss(&info);
            if !bbr_on {
                self.cwnd = self.cwnd.min(self.ssthresh); // Linux: CWR, cwnd down to ssthresh
            }
        }

        // ECN (module comment): DCTCP's alpha counts this ACK; a reduction ends once an ACK covers
        // data past what was sent when it began, the first of which carried CWR: until the
        // receiver has it, its ACKs still echo the old CE (RFC 3168 Sec. 6.1.3).
        if self.ecn_ok {
            let fb = Feedback {
                now,
                acked: ack - prior_una,
                ece,
                snd_una: self.snd_una,
                snd_nxt: self.snd_max,
                cwnd: self.cwnd,
                ssthresh: self.ssthresh,
                srtt: self.rto.srtt(),
            };
            let una = self.snd_una;
            let t = self.today();
            t.cc.on_ecn_feedback(&fb);
            if t.cwr_end.is_some_and(|end| una > end) {
                t.cwr_end = None;
            }
        }

        // RACK's reordering window (rack.rs; Linux tcp_rack_update_reo_wnd on every ACK): a D-SACK
        // counts once reordering has been seen and when it is not a probe's (tcp_dsack_seen).
        if self.cfg.rack_reo_wnd_dsack {
            let (una, nxt) = (self.snd_una, self.snd_max);
            let rack = &mut self.today().rack;
            let seen = dsack == Some(false) && rack.reordering_seen;
            rack.update_reo_wnd(seen, una, nxt);
        }

        // tcp.undo (module comment): Linux tcp_fastretrans_alert's undos, before F-RTO's
        // (tcp_process_loss tries tcp_try_undo_loss first).
        let undone_now = self.cfg.undo && self.try_undo(dsack.is_some(), ack > prior_una);

        // F-RTO (module comment), Linux tcp_process_loss (which returns after tcp_try_undo_loss).
        if self.today().frto && self.today().phase == Phase::Loss && !undone_now {
            self.frto_on_ack(orig_acked, is_dup || up.new_sack_info, ack > prior_una);
        }

        // Loss detection (module comment).
        let lost_before = self.today().sb.lost_bytes();
        self.detect_losses(now, is_dup);

        // Recovery: end, or go on (NewReno's partial ACK), or start.
        // tcp.reno_reordering: without SACK Linux holds the state while snd_una is exactly the
        // recovery point, until an ACK passes it (tcp_is_non_sack_preventing_reopen: "For Reno it
        // is MUST to prevent false fast retransmits", RFC 6582 3.2 step 1's guard); in Recovery the
        // dupACK count is cleared (tcp_reset_reno_sack) and no partial ACK marks a hole.
        let phase = self.today().phase;
        let una = self.snd_una;
        let hold = linux_reno && phase != Phase::Open && self.today().sb.recovery_point() == Some(una);
        if hold {
            if phase == Phase::Recovery {
                let t = self.today();
                t.sacked_out = 0;
                t.dup_sacked = 0;
            }
        } else if phase != Phase::Open && self.today().sb.recovery_point_acked() {
            // tcp.undo: an undone episode keeps its cwnd (tcp_end_cwnd_reduction: "unless it's
            // undone", the undo marker cleared).
            let undone = self.cfg.undo && self.today().undo_marker.is_none();
            if phase == Phase::Recovery && !undone && !bbr_on {
                // Linux tcp_end_cwnd_reduction: cwnd = ssthresh when recovery ends (not for a
                // cong_control: BBR restores its own).
                self.cwnd = self.ssthresh;
            }
            if self.cfg.rack_reo_wnd_dsack && !undone_now {
                // Linux tcp_try_undo_recovery: a recovery ended without its undo.
                self.today().rack.on_recovery_end();
            }
            let t = self.today();
            t.phase = Phase::Open;
            t.prr = None;
            t.frto = false; // F-RTO is read in the loss state only: no scan for it after
            t.sb.exit_recovery();
        } else if phase == Phase::Recovery && !sack && ack > prior_una {
            // RFC 6582 3.2 step 5 (Linux tcp_mark_head_lost without SACK): a partial ACK shows
            // the next hole.
            let una = self.snd_una;
            let t = self.today();
            if t.sb.mark_lost(una) {
                t.rxt_hint = una;
            }
        }
        let entered = self.today().phase == Phase::Open && self.today().sb.lost_bytes() > 0;
        if entered {
            self.enter_recovery(now, out);
        }
        // BBR's rs->losses: segments newly marked lost on this ACK (tp->lost's change in tcp_ack).
        let losses = self.today().sb.lost_bytes().saturating_sub(lost_before).div_ceil(mss);
        // RFC 3168 Sec. 6.1.2: ECE cuts the window, at most once per round trip.
        if ece && self.today().phase == Phase::Open && self.today().cwr_end.is_none() {
            self.ecn_reduce(now);
        }

        // Growth outside recovery and outside an ECN reduction (module comment; TCP Prague grows
        // in the reduction too).
        let reducing = self.today().cwr_end.is_some() && !self.today().cc.grows_while_reducing();
        if bbr_on {
            // BBR's cong_control runs on every ACK, in every state (Linux tcp_cong_control).
            self.bbr_on_ack(now, losses);
        } else if ack > prior_una && self.today().phase != Phase::Recovery && !reducing && self.cwnd_limited() {
            let info = AckInfo {
                now,
                acked: ack - prior_una,
                cwnd: self.cwnd,
                ssthresh: self.ssthresh,
                mss,
                srtt: self.srtt(),
                min_rtt: self.today().min_rtt,
            };
            self.cwnd = self.today().cc.on_ack(&info);
        }
        let flight = self.snd_max - self.snd_una;
        self.today().max_flight = flight;

        // All data acknowledged stops the RTO, new data restarts it (RFC 6298 5.2, 5.3).
        if ack > prior_una {
            self.rexmt_at = if ack == self.snd_max { None } else { Some(self.rto.deadline(now)) };
        }
        // PRR's allowance for this ACK (RFC 6937 3), then send.
        let sndcnt = if self.today().phase == Phase::Recovery {
            let pipe = self.pipe();
            let linux = self.cfg.prr_linux;
            // tcp.prr_linux (prr.rs): Linux tcp_cwnd_reduction's extra segment needs
            // FLAG_SND_UNA_ADVANCED and no newly lost segment (rs->losses).
            let advanced_no_loss = ack > prior_una && losses == 0;
            self.today().prr.as_mut().map(|p| match (linux, entered) {
                (false, _) => p.on_ack(delivered, pipe, mss),
                (true, false) => p.on_ack_linux(delivered, pipe, mss, advanced_no_loss),
                (true, true) => p.on_entry_ack_linux(delivered, pipe, mss, advanced_no_loss),
            })
        } else {
            None
        };
        self.update_pacing_rate();
        self.send_today(now, sndcnt, out);
        if std::mem::take(&mut self.today().new_only) {
            // F-RTO step 2.b (Linux tcp_xmit_recovery, REXMIT_NEW): if no new data could go out,
            // F-RTO ends and the conventional recovery resends.
            if self.today().sb.recovery_point().is_some_and(|rp| self.snd_max <= rp) {
                self.today().frto = false;
                self.send_today(now, None, out);
            }
        }
        self.schedule_probe(now);
    }

    /// `tcp.pacing`: the rate after this ACK's window change (Linux `tcp_update_pacing_rate` at
    /// the end of `tcp_cong_control`, and in `tcp_init_transfer`), from the controller (`pacing.rs`).
    pub(super) fn update_pacing_rate(&mut self) {
        if self.today.as_ref().is_none_or(|t| t.pacer.is_none()) {
            return;
        }
        let timestamps = if self.cfg.timestamps { super::super::TIMESTAMP_OPTION_BYTES as u64 } else { 0 };
        let input = PacingInput {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            outstanding: self.snd_max - self.snd_una,
            flight: self.pipe(),
            mss: self.cfg.mss,
            mtu: self.cfg.mss + self.cfg.header_bytes as u64 + timestamps,
            srtt: self.rto.srtt(),
        };
        let t = self.today();
        let rate = t.cc.pacing_rate(&input);
        if let Some(p) = t.pacer.as_mut() {
            p.rate = rate;
        }
    }

    /// F-RTO (RFC 5682 3.1, the SACK-enhanced variant as Linux runs it with tcp_frto = 2 for
    /// every connection: tcp_process_loss). `orig_acked`: the ACK delivered a segment never
    /// retransmitted, below the recovery point; `dup`: a duplicate ACK or new SACK information.
    fn frto_on_ack(&mut self, orig_acked: bool, dup: bool, una_advanced: bool) {
        let (una, nxt) = (self.snd_una, self.snd_max);
        let linux_reno = self.cfg.reno_reordering && !self.cfg.sack;
        let t = self.today();
        let Some(rp) = t.sb.recovery_point() else { return };
        if orig_acked {
            // Step 3.b: "A timeout is spurious if not all data are lost, i.e.,
            // never-retransmitted data are (s)acked": undo (tcp_try_undo_loss with frto_undo,
            // tcp_undo_cwnd_reduction): nothing is deemed lost any more, cwnd and ssthresh as
            // before the cut (Reno's and CUBIC's undo_cwnd: the larger of now and then), and the
            // state Open, except that without SACK it is held while snd_una is the recovery point
            // (tcp_is_non_sack_preventing_reopen).
            t.frto = false;
            if !(linux_reno && una == rp) {
                t.phase = Phase::Open;
                t.sb.exit_recovery();
            }
            self.undo_cwnd_reduction(true);
            return;
        }
        if nxt > rp {
            // Step 3.a: after new data, a duplicate ACK or SACK shows the loss was real.
            if dup {
                t.frto = false;
            }
        } else if una_advanced && una < rp {
            // Step 2.b: the first ACK after the retransmission: the recovery point moves to
            // HighData and this ACK sends new data, if there is any and the window allows
            // (send_today, then on_ack_today's check), instead of retransmitting.
            t.sb.raise_recovery_point();
            t.new_only = true;
        }
    }

    /// Linux tcp_undo_cwnd_reduction (module comment), F-RTO's and `tcp.undo`'s: with
    /// `unmark_loss` nothing is deemed lost any more; cwnd and ssthresh return to the larger of now
    /// and before the cut (Reno's and CUBIC's undo_cwnd, max(cwnd, prior_cwnd); ssthresh if
    /// prior_ssthresh is larger), PRR aims at the restored ssthresh, and the episode ends.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        self.stats.undos += 1;
        let t = self.today.as_mut().expect("today");
        if unmark_loss {
            t.sb.update_segs(|s| s.lost = false);
        }
        if let Some((cwnd, ssthresh)) = t.prior.take() {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = self.ssthresh.max(ssthresh);
            if let Some(p) = t.prr.as_mut() {
                p.set_ssthresh(self.ssthresh);
            }
        }
        t.undo_marker = None;
    }

    /// Linux tcp_init_undo: an episode begins at snd_una; the retransmissions still in flight may
    /// draw D-SACKs later, so they count (-1 for none: 0 would mean "can undo now").
    fn init_undo(&mut self) {
        let mss = self.cfg.mss;
        let t = self.today.as_mut().expect("today");
        t.undo_marker = Some(t.sb.snd_una());
        let in_flight = t.sb.retrans_bytes().div_ceil(mss) as i64;
        t.undo_retrans = if in_flight > 0 { in_flight } else { -1 };
    }

    /// `tcp.dsack` (module comment; Linux tcp_check_dsack, tcp_dsack_seen, tcp_sacktag_one): the
    /// ACK's D-SACK, if its first block is one and is not dubious: Some(whether it is a tail loss
    /// probe's). Its retransmitted segments above the undo marker leave `undo_retrans`. Call before
    /// the scoreboard takes the ACK.
    fn read_dsack(&mut self, ack: u64, prior_una: u64, blocks: &[(u64, u64)]) -> Option<bool> {
        let &(start, end) = blocks.first()?;
        // RFC 2883 4.1: below the cumulative ACK, or inside the second block.
        let inside_second = blocks.get(1).is_some_and(|&(l, r)| l <= start && end <= r);
        if start >= end || !(start < ack || inside_second) {
            return None;
        }
        let (mss, retransmitted) = (self.cfg.mss, self.stats.retransmitted_segments);
        let len = end - start;
        let dup_segs = len.div_ceil(mss);
        let t = self.today.as_mut().expect("today");
        // FLAG_DSACK_TLP: one segment, ending where the outstanding probe ended.
        let tlp = len <= mss && t.tlp.end_seq == Some(end);
        // "Skip the DSACK if dup segs weren't retransmitted by sender".
        t.dsack_dups += dup_segs;
        if t.dsack_dups > retransmitted {
            return None;
        }
        if let Some(marker) = t.undo_marker.filter(|_| t.undo_retrans > 0) {
            let n = if end <= prior_una {
                // Already acknowledged ("D-SACK for already forgotten data... Do dumb counting").
                if end > marker {
                    dup_segs
                } else {
                    0
                }
            } else {
                t.sb.segs().filter(|s| s.start >= start && s.end <= end && s.retransmitted && s.end > marker).count()
                    as u64
            };
            t.undo_retrans = (t.undo_retrans - n as i64).max(0);
        }
        Some(tlp)
    }

    /// `tcp.undo` (module comment), Linux tcp_fastretrans_alert's undos when `tcp_may_undo` (the
    /// episode's retransmissions all D-SACKed): in recovery on any ACK (`tcp_try_undo_dsack`,
    /// `tcp_try_undo_recovery` at its end); after an RTO on an ACK of new data, clearing the lost
    /// marks (`tcp_try_undo_loss`; with SACK the loss state ends, without it it is kept until
    /// snd_una passes the recovery point); outside both on a D-SACK's ACK unless reducing for ECN
    /// (`tcp_try_undo_dsack` in Open and Disorder). Returns whether it undid.
    fn try_undo(&mut self, dsacking: bool, una_advanced: bool) -> bool {
        let sack = self.cfg.sack;
        let t = self.today.as_mut().expect("today");
        if t.undo_marker.is_none() || t.undo_retrans != 0 {
            return false;
        }
        match t.phase {
            Phase::Open if !dsacking || t.cwr_end.is_some() => return false,
            Phase::Open | Phase::Recovery => {
                self.undo_cwnd_reduction(false);
            }
            Phase::Loss if !una_advanced => return false,
            Phase::Loss => {
                // Without SACK the state is kept (tcp_try_undo_loss: "frto_undo ||
                // tcp_is_sack").
                if sack {
                    t.phase = Phase::Open;
                    t.frto = false;
                    t.sb.exit_recovery();
                }
                self.undo_cwnd_reduction(true);
            }
        }
        true
    }

    /// Linux tcp_current_ssthresh: ssthresh while reducing (ECN), else at least 3/4 of cwnd.
    fn current_ssthresh(&self) -> u64 {
        let t = self.today.as_ref().expect("today");
        if t.cwr_end.is_some() {
            return self.ssthresh;
        }
        let segments = self.cwnd / self.cfg.mss;
        self.ssthresh.max(((segments >> 1) + (segments >> 2)) * self.cfg.mss)
    }

    /// `tcp.reno_reordering` (module comment): Linux's `sacked_out` without SACK after this ACK.
    fn reno_sacks_linux(&mut self, acked_segments: u64, is_dup: bool, una_advanced: bool) {
        let mss = self.cfg.mss;
        let (una, nxt) = (self.snd_una, self.snd_max);
        let t = self.today.as_mut().expect("today");
        // tcp_clean_rtx_queue -> tcp_remove_reno_sacks: "One ACK acked hole. The rest eat
        // duplicate ACKs": each segment acknowledged beyond the first takes one dupACK back.
        if acked_segments > 0 {
            t.sacked_out -= t.sacked_out.min(acked_segments - 1);
            t.check_reno_reordering(acked_segments, mss);
        }
        let rp = t.sb.recovery_point();
        match t.phase {
            // tcp_fastretrans_alert's default case (Open, Disorder, CWR): an ACK of new data
            // clears the count, a dupACK adds one.
            Phase::Open => {
                if una_advanced {
                    t.sacked_out = 0;
                }
                if is_dup {
                    t.add_reno_sack(mss);
                }
            }
            // TCP_CA_Recovery: a dupACK adds one; at the recovery point the count is cleared
            // (the hold, on_ack_today).
            Phase::Recovery => {
                if is_dup && rp.is_some_and(|rp| una < rp) {
                    t.add_reno_sack(mss);
                }
            }
            // tcp_process_loss: until snd_una reaches the recovery point, a dupACK counts only
            // once data beyond it has been sent ("A Reno DUPACK means new data in F-RTO step 2.b
            // above are delivered"); otherwise an ACK of new data clears the count.
            Phase::Loss => {
                if let Some(rp) = rp.filter(|&rp| una < rp) {
                    if nxt > rp && is_dup {
                        t.add_reno_sack(mss);
                    } else if una_advanced {
                        t.sacked_out = 0;
                    }
                }
            }
        }
        t.dup_sacked = t.sacked_out * mss;
    }

    /// RACK, RFC 6675 IsLost, or duplicate-ACK counting marks segments lost (module comment).
    fn detect_losses(&mut self, now: SimTime, is_dup: bool) {
        let mss = self.cfg.mss;
        let dupthresh = self.cfg.dupack_threshold;
        let dupacks = self.dupacks;
        if self.cfg.rack {
            let t = self.today.as_mut().expect("today");
            // RACK runs once something is SACKed or recovery is on: after a cumulative ACK alone,
            // every segment left was sent after the one delivered.
            if t.sb.sacked_bytes() > 0 || t.phase != Phase::Open {
                self.rack_detect(now);
            }
            return;
        }
        let sack = self.cfg.sack;
        let linux_reno = self.cfg.reno_reordering && !sack;
        let t = self.today.as_mut().expect("today");
        let mut marked = sack && t.sb.update_lost(dupthresh, mss);
        if linux_reno {
            // tcp_newreno_mark_lost (tcp_recovery.c): before recovery, the head is lost once
            // sacked_out reaches the reordering degree.
            if t.phase == Phase::Open && t.sacked_out >= t.reordering {
                let una = t.sb.snd_una();
                marked |= t.sb.mark_lost(una);
            }
        } else if is_dup && dupacks >= dupthresh && t.phase == Phase::Open {
            // RFC 6675 5 (the DupThresh-th duplicate ACK) / RFC 5681 3.2: the first segment.
            let una = t.sb.snd_una();
            marked |= t.sb.mark_lost(una);
        }
        if marked {
            t.rxt_hint = t.sb.snd_una();
        }
    }

    /// RFC 8985 6.2 step 5 and 6.3: mark what RACK deems lost and arm the reordering timer.
    fn rack_detect(&mut self, now: SimTime) {
        let dupthresh = self.cfg.dupack_threshold;
        let mss = self.cfg.mss;
        let srtt = self.srtt().unwrap_or(0);
        let t = self.today.as_mut().expect("today");
        let in_recovery = t.phase != Phase::Open;
        let sacked_segments = (t.sb.sacked_bytes() / mss) as u32;
        let min_rtt = t.min_rtt.unwrap_or(srtt);
        let reo_wnd = t.rack.reo_wnd(in_recovery, sacked_segments, dupthresh, srtt, min_rtt);
        let rack = &t.rack;
        let (mut wait, mut marked) = (None::<Nanos>, false);
        t.sb.update_segs(|s| {
            let was = s.lost && !s.retrans_in_flight;
            if let Some(left) = rack.check(s, now, reo_wnd) {
                wait = Some(wait.map_or(left, |w| w.max(left)));
            }
            marked |= !was && s.lost && !s.retrans_in_flight;
        });
        if marked {
            t.rxt_hint = t.sb.snd_una();
        }
        t.reorder_at = wait.map(|left| now + left);
    }

    /// RFC 3168 Sec. 6.1.2 (module comment): an ECE's cut, no retransmission.
    fn ecn_reduce(&mut self, now: SimTime) {
        let mss = self.cfg.mss;
        let flight = self.snd_max - self.snd_una;
        let info = LossInfo { now, cwnd: self.cwnd, flight, snd_wnd: self.snd_wnd, mss };
        self.ssthresh = self.today().cc.ssthresh_on_ecn(&info);
        // BBR (a cong_control) keeps cwnd: no PRR reduction runs for it in CWR.
        if !self.today().cc.is_bbr() {
            self.cwnd = self.cwnd.min(self.ssthresh);
        }
        self.stats.ecn_reductions += 1;
        let (end, undo) = (self.snd_max, self.cfg.undo);
        let t = self.today();
        t.cwr_end = Some(end);
        t.send_cwr = true;
        if undo {
            // Linux tcp_enter_cwr: an ECN cut is no episode to undo (undo_marker, prior_ssthresh 0).
            t.undo_marker = None;
            t.prior = None;
        }
    }

    /// RFC 6675 5 (4): enter fast recovery with the hook's ssthresh (kept if an ECN reduction is
    /// under way: one cut per round trip, module comment).
    fn enter_recovery(&mut self, now: SimTime, out: &mut Vec<Out>) {
        let mss = self.cfg.mss;
        let flight = self.snd_max - self.snd_una;
        if self.cfg.frto || self.cfg.undo {
            // Linux tcp_enter_recovery: what an undo returns to (prior_ssthresh, and prior_cwnd
            // in tcp_init_cwnd_reduction); none inside an ECN reduction (prior_ssthresh = 0).
            let prior = (self.cwnd, self.current_ssthresh());
            let t = self.today();
            t.prior = t.cwr_end.is_none().then_some(prior);
        }
        if self.cfg.undo {
            self.init_undo();
        }
        let info = LossInfo { now, cwnd: self.cwnd, flight, snd_wnd: self.snd_wnd, mss };
        if self.today().cwr_end.take().is_none() {
            self.ssthresh = self.today().cc.ssthresh_on_loss(&info);
        }
        self.stats.fast_retransmits += 1;
        // BBR (a cong_control) sets cwnd itself in recovery: no PRR, no cwnd = ssthresh.
        let bbr = self.today().cc.is_bbr();
        let prr = self.cfg.prr && !bbr;
        let ssthresh = self.ssthresh;
        let (prr_linux, cwnd) = (self.cfg.prr_linux, self.cwnd);
        let t = self.today();
        t.sb.enter_recovery();
        t.phase = Phase::Recovery;
        t.tlp_at = None;
        t.tlp.reset();
        // tcp.prr_linux: RecoverFS is the cwnd at entry (prr.rs).
        t.prr = prr.then(|| if prr_linux { Prr::linux(ssthresh, cwnd) } else { Prr::new(ssthresh, flight) });
        if !prr && !bbr {
            // RFC 6675 5 (4.2): cwnd = ssthresh.
            self.cwnd = ssthresh;
        }
        let una = self.snd_una;
        self.emit(out, Action::FastRetransmit { seq: una });
        // RFC 6675 5 (4.3): retransmit the first segment at once.
        if let Some(seg) = self.today().sb.on_fast_retransmit(now) {
            self.emit_segment(now, seg.start, seg.len(), true, out);
            if let Some(p) = self.today().prr.as_mut() {
                p.on_sent(seg.len());
            }
        }
    }

    /// Send what the window allows: segments deemed lost first, in order (Linux
    /// `tcp_xmit_retransmit_queue`), then new data, then in SACK recovery NextSeg's rule (3) and
    /// rescue retransmission (RFC 6675 4). `budget` is PRR's sndcnt for this ACK: sending goes on
    /// while it is positive, whole segments (Linux counts packets), instead of while pipe + a
    /// segment fits in cwnd.
    pub(super) fn send_today(&mut self, now: SimTime, budget: Option<u64>, out: &mut Vec<Out>) {
        let mss = self.cfg.mss;
        let mut budget = budget;
        let rwnd_edge = self.snd_una + self.snd_wnd.min(self.cfg.send_buffer);
        // tcp.limited_transmit = false with SACK or Linux's duplicate-ACK count (module comment): before
        // recovery, cwnd covers all the data outstanding, SACKed or duplicate-ACKed or not (RFC 6675 5
        // (C) leaves Limited Transmit, RFC 3042, a MAY; RFC 5681's FlightSize). Without either, the
        // duplicate ACKs are not counted in Open (on_ack_today).
        let no_lt = !self.cfg.limited_transmit && (self.cfg.sack || self.cfg.reno_reordering);
        let t = self.today();
        let prior_limited = std::mem::take(&mut t.cwnd_limited);
        t.paced_budget = None;
        loop {
            let flight = match no_lt && self.today().phase == Phase::Open {
                true => self.snd_max - self.snd_una,
                false => self.pipe(),
            };
            let allowed = match budget {
                Some(b) => b > 0,
                None => flight + mss <= self.cwnd,
            };
            if !allowed {
                self.today().cwnd_limited = budget.is_none();
                break;
            }
            let new_seq = self.snd_max;
            let new_len = if new_seq < self.total { self.segment_at(new_seq).0 as u64 } else { 0 };
            // tcp.nagle (RFC 896), as on the Net/3 path (sender.rs `output`): a short segment waits
            // while data is outstanding. Chosen: RFC 896's rule here too, not Linux's Minshall variant
            // (tcp_nagle_check), which holds one only while another short one is unacknowledged.
            let nagle = self.cfg.nagle && new_len < mss && self.snd_max > self.snd_una;
            let new_ok = new_len > 0 && new_seq + new_len <= rwnd_edge && !nagle;
            let lost = if self.today().new_only { None } else { self.first_lost_unsent() };
            let next = match lost {
                Some(start) => NextSeg::Retransmit(start),
                None if new_ok => NextSeg::NewData,
                // tcp.retransmit_lost_only: Linux's tcp_xmit_retransmit_queue retransmits only
                // segments marked lost (first_lost_unsent above), never NextSeg's rules (3) and (4).
                None if self.cfg.sack && !self.cfg.retransmit_lost_only && self.today().phase == Phase::Recovery => {
                    self.today().sb.next_seg(false)
                }
                None => NextSeg::Nothing,
            };
            if next == NextSeg::Nothing {
                break;
            }
            // tcp.pacing (pacing.rs, Linux tcp_pacing_check): the next segment waits for its
            // departure time and the pacing timer. A held send says nothing of cwnd: the
            // cwnd-limited flag keeps its value (Linux keeps is_cwnd_limited for a window).
            let t = self.today();
            if let Some(at) = t.pacer.as_ref().and_then(|p| p.wait_until(now)) {
                t.pace_at = Some(at);
                t.paced_budget = budget;
                t.cwnd_limited = prior_limited;
                break;
            }
            let sent = match next {
                NextSeg::Nothing => break,
                NextSeg::NewData => {
                    self.today().sb.on_send(Seg::new(new_seq, new_seq + new_len, now));
                    self.stats.data_segments_sent += 1;
                    if self.timed.is_none() && !matches!(self.rto, Rto::Linux(_)) {
                        self.timed = Some((new_seq, now)); // Karn: one timed segment (Net/3)
                    }
                    self.snd_max = new_seq + new_len;
                    self.snd_nxt = self.snd_max;
                    self.emit_segment(now, new_seq, new_len, false, out);
                    new_len
                }
                NextSeg::Retransmit(start) => {
                    let Some(seg) = self.today().sb.on_retransmit(start, now) else { break };
                    self.today().rxt_hint = seg.end;
                    self.emit_segment(now, seg.start, seg.len(), true, out);
                    seg.len()
                }
                NextSeg::Rescue(start) => {
                    let Some(seg) = self.today().sb.on_rescue_retransmit(start, now) else { break };
                    self.emit_segment(now, seg.start, seg.len(), true, out);
                    seg.len()
                }
            };
            if let Some(b) = budget.as_mut() {
                *b = b.saturating_sub(sent);
            }
            if let Some(p) = self.today().prr.as_mut() {
                p.on_sent(sent);
            }
        }
        let flight = self.snd_max - self.snd_una;
        let t = self.today();
        t.max_flight = t.max_flight.max(flight);
        if t.rate.is_some() {
            self.check_app_limited();
        }
    }

    /// BBR: Linux `tcp_rate_check_app_limited` (`rate.rs`): no new data left to send, not
    /// cwnd-limited, no lost segment waiting for its retransmission.
    fn check_app_limited(&mut self) {
        let mss = self.cfg.mss;
        let pipe = self.pipe();
        if self.snd_max < self.total || pipe.div_ceil(mss) >= self.cwnd / mss {
            return;
        }
        if self.first_lost_unsent().is_some() {
            return;
        }
        if let Some(r) = self.today().rate.as_mut() {
            r.mark_app_limited(pipe.div_ceil(mss));
        }
    }

    /// BBR's `cong_control` after an ACK (`tcp/bbr.rs`): its rate sample, then its cwnd (in
    /// segments here, bytes in the sender) and pacing rate.
    fn bbr_on_ack(&mut self, now: SimTime, losses: u64) {
        let mss = self.cfg.mss;
        let in_flight = self.pipe().div_ceil(mss);
        let (cwnd, srtt) = (self.cwnd / mss, self.srtt());
        let t = self.today.as_mut().expect("today");
        let ca = match t.phase {
            Phase::Open => ca_state::OPEN,
            Phase::Recovery => ca_state::RECOVERY,
            Phase::Loss => ca_state::LOSS,
        };
        let edt = t.pacer.as_ref().map_or(now, |p| p.edt);
        let (Some(rate), Some(b)) = (t.rate.as_mut(), t.cc.bbr()) else { return };
        let rs = rate.generate(now, losses, t.min_rtt);
        let a = BbrAck {
            now,
            cwnd,
            in_flight,
            delivered: rate.delivered,
            delivered_time: rate.delivered_time,
            ca_state: ca,
            edt,
            srtt,
            mss,
        };
        let o = b.main(&a, &rs);
        if o.app_limited {
            rate.mark_app_limited(in_flight);
        }
        self.ssthresh = b.ssthresh();
        self.cwnd = o.cwnd * mss;
    }

    /// BBR's state, for tests and traces (None with another control).
    pub fn bbr(&self) -> Option<&Bbr> {
        match self.today.as_ref().map(|t| &t.cc) {
            Some(Controller::Bbr(b)) => Some(b.as_ref()),
            _ => None,
        }
    }

    /// The pacing rate in use, bytes/s (None: unpaced, or no rate yet).
    pub fn pacing_rate(&self) -> Option<u64> {
        self.today.as_ref().and_then(|t| t.pacer.as_ref()).and_then(|p| p.rate)
    }

    /// BBR's `bbr_init` when the connection is set up (`tcp_init_transfer`): its min RTT from the
    /// handshake's sample, the only one then (srtt).
    pub(super) fn init_bbr(&mut self, now: SimTime) {
        let (cwnd, mss, srtt) = (self.cwnd / self.cfg.mss, self.cfg.mss, self.srtt());
        if let Some(b) = self.today().cc.bbr() {
            b.init(now, cwnd, mss, srtt, srtt);
        }
    }

    /// The first segment deemed lost whose retransmission is not in flight (Linux's
    /// `retransmit_skb_hint` keeps the scan short: segments below it have been resent since the
    /// last loss marking).
    fn first_lost_unsent(&mut self) -> Option<u64> {
        let t = self.today.as_mut().expect("today");
        if t.sb.lost_bytes() == 0 {
            return None;
        }
        let hint = t.rxt_hint;
        let found = t.sb.segs().skip_while(|s| s.end <= hint).find(|s| s.lost && !s.sacked && !s.retrans_in_flight);
        let start = found.map(|s| s.start);
        if start.is_none() {
            t.rxt_hint = t.sb.high_data();
        }
        start
    }

    fn emit_segment(&mut self, now: SimTime, seq: u64, len: u64, retransmit: bool, out: &mut Vec<Out>) {
        let (_, pkt_no) = self.segment_at(seq);
        if retransmit {
            self.stats.retransmitted_segments += 1;
            if self.cfg.undo {
                // Linux __tcp_retransmit_skb: undo_retrans counts every retransmission.
                let t = self.today();
                t.undo_retrans = t.undo_retrans.max(0) + 1;
            }
        }
        if self.rexmt_at.is_none() {
            self.rexmt_at = Some(self.rto.deadline(now));
        }
        if let Some(p) = self.today().pacer.as_mut() {
            p.on_send(now, len);
        }
        // BBR's rate sampling (tcp_rate_skb_sent): new data at snd_una had nothing out before it.
        let nothing_out = !retransmit && seq == self.snd_una;
        if let Some(r) = self.today().rate.as_mut() {
            r.on_sent(now, seq, seq + len, retransmit, nothing_out);
        }
        // ECN (module comment): new data ECT, with CWR on the first after a cut; retransmissions
        // Not-ECT (RFC 3168 Sec. 6.1.5).
        let (ecn, cwr) = if self.ecn_ok && !retransmit {
            let ect = if self.cfg.ecn == EcnMode::L4s { Ecn::Ect1 } else { Ecn::Ect0 };
            (ect, std::mem::take(&mut self.today().send_cwr))
        } else {
            (Ecn::NotEct, false)
        };
        self.emit(out, Action::Segment { seq, len: len as u32, pkt_no, retransmit, ecn, cwr });
    }

    /// RFC 8985 7.2: arm the probe timeout if a probe may be sent (not in recovery, data in
    /// flight, SACK on).
    fn schedule_probe(&mut self, now: SimTime) {
        if !self.cfg.tlp {
            return;
        }
        let flight_segments = (self.snd_max - self.snd_una).div_ceil(self.cfg.mss) as u32;
        let srtt = self.srtt();
        let rto_left = self.rexmt_at.map_or(u64::MAX, |t| t - now.min(t));
        let t = self.today.as_mut().expect("today");
        if t.phase != Phase::Open || flight_segments == 0 || t.tlp.outstanding() {
            t.tlp_at = None;
            return;
        }
        let pto = t.tlp.pto(srtt, flight_segments, rto_left);
        t.tlp_at = Some(now + pto);
    }

    /// A timer of the today path may have expired: the reordering timer, the probe, or the RTO.
    pub(super) fn on_timer_today(&mut self, now: SimTime, out: &mut Vec<Out>) {
        if self.today().pace_at.is_some_and(|t| t <= now) {
            let t = self.today();
            t.pace_at = None;
            let budget = if t.phase == Phase::Recovery { t.paced_budget.take() } else { None };
            self.send_today(now, budget, out);
        }
        if self.today().reorder_at.is_some_and(|t| t <= now) {
            self.today().reorder_at = None;
            self.rack_detect(now);
            if self.today().phase == Phase::Open && self.today().sb.lost_bytes() > 0 {
                self.enter_recovery(now, out);
            }
            self.send_today(now, None, out);
        }
        if self.today().tlp_at.is_some_and(|t| t <= now) {
            self.today().tlp_at = None;
            self.send_probe(now, out);
        }
        if self.rexmt_at.is_some_and(|t| t <= now) {
            self.rexmt_at = None;
            self.rto_today(now, out);
        }
    }

    /// New data `[seq, seq + len)` at once, outside cwnd and pacing: the persist timer's segment into
    /// a window smaller than a whole one (Linux `tcp_write_wakeup`; tcp/sender/persist.rs).
    pub(super) fn send_new_today(&mut self, now: SimTime, seq: u64, len: u64, out: &mut Vec<Out>) {
        self.today().sb.on_send(Seg::new(seq, seq + len, now));
        self.stats.data_segments_sent += 1;
        if self.timed.is_none() && !matches!(self.rto, Rto::Linux(_)) {
            self.timed = Some((seq, now)); // Karn: one timed segment (Net/3)
        }
        self.snd_max = seq + len;
        self.snd_nxt = self.snd_max;
        self.emit_segment(now, seq, len, false, out);
    }

    /// RFC 8985 7.3: one new segment if the window allows, else the highest one again.
    fn send_probe(&mut self, now: SimTime, out: &mut Vec<Out>) {
        let seq = self.snd_max;
        let rwnd_edge = self.snd_una + self.snd_wnd.min(self.cfg.send_buffer);
        let new_len = if seq < self.total { self.segment_at(seq).0 as u64 } else { 0 };
        if new_len > 0 && seq + new_len <= rwnd_edge {
            self.today().sb.on_send(Seg::new(seq, seq + new_len, now));
            self.stats.data_segments_sent += 1;
            self.snd_max = seq + new_len;
            self.snd_nxt = self.snd_max;
            self.emit_segment(now, seq, new_len, false, out);
            self.today().tlp.on_probe_sent(seq + new_len, false);
        } else {
            let last = self.today().sb.segs().rev().find(|s| !s.sacked).map(|s| s.start);
            let Some(start) = last else { return };
            let Some(seg) = self.today().sb.on_retransmit(start, now) else { return };
            self.emit_segment(now, seg.start, seg.len(), true, out);
            let end = self.snd_max;
            self.today().tlp.on_probe_sent(end, true);
        }
        // RFC 8985 7.3: re-arm the RTO after the probe.
        self.rexmt_at = Some(self.rto.deadline(now));
    }

    /// The retransmission timer expired (module comment).
    fn rto_today(&mut self, now: SimTime, out: &mut Vec<Out>) {
        if !self.rto.on_timeout() {
            self.state = State::Dropped;
            return;
        }
        self.timed = None;
        self.stats.timeouts += 1;
        let mss = self.cfg.mss;
        let repeat = self.timed_out_seq == Some(self.snd_una);
        if self.cfg.frto {
            // Linux tcp_enter_loss: F-RTO for a timeout outside recovery, or a recurring one of
            // the same snd_una (RFC 5682 3.1 step 1, 3.2); a new episode keeps what to undo to
            // (tcp_init_undo: prior_cwnd, prior_ssthresh = tcp_current_ssthresh).
            self.today().frto = self.today().phase == Phase::Open || repeat;
        }
        // Linux tcp_enter_loss: a new episode (what an undo returns to, tcp_init_undo) for a
        // timeout outside recovery; F-RTO's and tcp.undo's.
        let new_episode = self.today().phase == Phase::Open;
        if new_episode && (self.cfg.frto || self.cfg.undo) {
            let prior = (self.cwnd, self.current_ssthresh());
            self.today().prior = Some(prior);
        }
        if !(repeat && self.cfg.repeat_timeout_holds_ssthresh) {
            let flight = self.snd_max - self.snd_una;
            let info = LossInfo { now, cwnd: self.cwnd, flight, snd_wnd: self.snd_wnd, mss };
            self.ssthresh = self.today().cc.ssthresh_on_timeout(&info);
        }
        self.timed_out_seq = Some(self.snd_una);
        self.cwnd = mss;
        self.dupacks = 0;
        let dupthresh = self.cfg.dupack_threshold as u64;
        let t = self.today();
        // tcp.reno_reordering: Linux tcp_enter_loss, "Timeout in disordered state after receiving
        // substantial DUPACKs suggests that the degree of reordering is over-estimated": in Open or
        // Disorder (not in recovery, nor reducing for ECN: TCP_CA_CWR) with sacked_out at least
        // sysctl tcp_reordering, the degree falls back to it. sacked_out is cleared below
        // (tcp_timeout_mark_lost's tcp_reset_reno_sack).
        if t.phase == Phase::Open && t.cwr_end.is_none() && t.sacked_out >= dupthresh {
            t.reordering = t.reordering.min(dupthresh);
        }
        t.sacked_out = 0;
        t.sb.on_timeout();
        let lost_before = t.sb.lost_bytes();
        // Linux tcp_timeout_mark_lost: every unSACKed segment is deemed lost.
        t.sb.update_segs(|s| {
            if !s.sacked {
                s.lost = true;
                s.retrans_in_flight = false;
            }
        });
        // BBR: bbr_set_state(TCP_CA_Loss), after the marking (tcp_enter_loss).
        let newly_lost = t.sb.lost_bytes().saturating_sub(lost_before).div_ceil(mss);
        if let (Some(r), Some(b)) = (t.rate.as_ref(), t.cc.bbr()) {
            b.on_enter_loss(r.delivered, r.delivered_time, newly_lost);
        }
        if new_episode && self.cfg.undo {
            self.init_undo();
        }
        let t = self.today();
        t.dup_sacked = 0;
        t.rxt_hint = t.sb.snd_una();
        t.tlp.reset();
        t.cwr_end = None;
        t.phase = Phase::Loss;
        if let Some(h) = t.hystart.as_mut() {
            h.on_timeout(now, t.sb.high_data());
        }
        t.prr = None;
        t.tlp_at = None;
        t.reorder_at = None;
        let una = self.snd_una;
        self.emit(out, Action::Timeout { seq: una });
        self.send_today(now, None, out);
        if self.rexmt_at.is_none() && self.snd_max > self.snd_una {
            self.rexmt_at = Some(self.rto.deadline(now));
        }
    }
}
