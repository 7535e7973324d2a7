//! The SACK scoreboard of RFC 6675 (Blanton et al., "A Conservative Loss Recovery Algorithm Based
//! on Selective Acknowledgment (SACK) for TCP", 2012): the segments between snd.una and HighData
//! with their `Seg` flags, the SACK blocks of each ACK marked on them (RFC 2018), the RFC's
//! `IsLost`, `SetPipe` and `NextSeg` routines, and the recovery-phase variables HighRxt, RescueRxt
//! and RecoveryPoint. A pure data structure: it is handed the time and never sends anything; the
//! sender asks it what to send and tells it what it sent.
//!
//! Conventions. The RFC names octets (HighRxt is "the highest sequence number retransmitted");
//! this module keeps exclusive ends instead, as segments do: `high_rxt` is one past the last octet
//! retransmitted (the RFC's HighRxt + 1), `rescue_rxt` likewise, `recovery_point` is HighData at
//! entry, i.e. one past the RFC's RecoveryPoint. The scoreboard is kept per segment, not per octet:
//! a segment is SACKed only when one block covers all of it (a block covering part of a segment
//! marks nothing), and a retransmission resends a whole segment with its original boundaries.
//!
//! Flags versus the RFC's routines. `SetPipe` is the sum of `Seg::in_flight`: the RFC's rule (a)
//! reads the `lost` flag, which `update_lost` sets wherever `IsLost` holds (and RACK may set
//! elsewhere), and rule (b) reads `retrans_in_flight`, which a retransmission sets. Lost marks are
//! sticky as in Linux (`TCPCB_LOST`); since `IsLost` only ever becomes true as SACKs arrive, this
//! equals the RFC's recomputation. A SACK clears `retrans_in_flight` and leaves `lost` alone (a
//! SACKed segment counts for nothing either way).
//!
//! Cost. `pipe`, `sacked_bytes`, `lost_bytes` are O(1): byte tallies are updated on every flag
//! change. With no SACK blocks, `on_ack` pops acknowledged segments (O(1) each) and `update_lost`
//! returns at once. A SACK block costs O(log n) plus the segments it newly covers: a segment
//! wholly inside a block of the previous ACK is known SACKed and skipped (Linux's
//! `recv_sack_cache` does the same), so the blocks a receiver repeats cost nothing.
//! `update_lost` walks down from the highest SACKed segment only until the DupThresh test is met
//! and marks each segment once (a watermark remembers where marking stopped). `next_seg` scans
//! from HighRxt to the first hole and is O(n) in the worst case (a long SACKed run above HighRxt);
//! it runs only during recovery.
//!
//! Left out: D-SACK (RFC 2883) blocks are recognised only to be ignored (a block at or below the
//! cumulative ACK), there is no undo of spurious retransmissions, and no reneging detection:
//! SACKed segments stay SACKed until cumulatively acknowledged (RFC 6675 5.1 leaves clearing the
//! scoreboard on an RTO to the implementation; this one keeps it).

use std::collections::VecDeque;

use super::segs::Seg;
use crate::time::SimTime;

/// What `on_ack` changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckUpdate {
    /// Bytes newly cumulatively acknowledged: the change in snd.una.
    pub acked: u64,
    /// The part of `acked` that had already been SACKed (delivered on an earlier ACK).
    pub acked_sacked: u64,
    /// Bytes newly SACKed by this ACK's blocks (whole segments).
    pub newly_sacked: u64,
    /// The ACK SACKed at least one segment not SACKed before (RFC 6675 2, the duplicate-ACK
    /// definition's "new SACK information").
    pub new_sack_info: bool,
    /// The end of the highest SACKed segment still on the scoreboard, after this ACK.
    pub high_sacked: Option<u64>,
    /// Of the segments this ACK newly delivered (cumulatively acknowledged without having been
    /// SACKed, or newly SACKed), the most recently sent; ties go to the higher end (RFC 8985
    /// 6.2, `RACK_sent_after`). A segment only partly acknowledged does not count.
    pub latest_delivered: Option<Delivered>,
}

impl AckUpdate {
    /// RFC 6937 3 DeliveredData: the change in snd.una plus the (signed) change in SACKed bytes,
    /// i.e. the bytes this ACK newly reports delivered to the receiver.
    pub fn delivered(&self) -> u64 {
        self.acked - self.acked_sacked + self.newly_sacked
    }
}

/// A newly delivered segment, as RACK needs it (RFC 8985 6.2 `RACK_update`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub sent_at: SimTime,
    pub end: u64,
    pub retransmitted: bool,
}

/// What RFC 6675 4 `NextSeg` says to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSeg {
    /// Retransmit the segment starting here (rule (1), or rule (3)).
    Retransmit(u64),
    /// Send new data from HighData (rule (2)).
    NewData,
    /// The rescue retransmission of the segment starting here (rule (4)); send it, then call
    /// `on_rescue_retransmit`.
    Rescue(u64),
    /// Nothing may be sent.
    Nothing,
}

/// Bytes per flag, over the segments on the scoreboard: `pipe` without a walk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    /// All bytes on the scoreboard (HighData - snd.una).
    total: u64,
    sacked: u64,
    /// UnSACKed and deemed lost.
    lost: u64,
    /// UnSACKed with a retransmission in flight.
    retrans: u64,
}

impl Tally {
    fn add(&mut self, s: &Seg) {
        let len = s.len();
        self.total += len;
        if s.sacked {
            self.sacked += len;
        } else {
            self.lost += len * u64::from(s.lost);
            self.retrans += len * u64::from(s.retrans_in_flight);
        }
    }

    fn sub(&mut self, s: &Seg) {
        let len = s.len();
        self.total -= len;
        if s.sacked {
            self.sacked -= len;
        } else {
            self.lost -= len * u64::from(s.lost);
            self.retrans -= len * u64::from(s.retrans_in_flight);
        }
    }

    fn replace(&mut self, before: &Seg, after: &Seg) {
        self.sub(before);
        self.add(after);
    }

    /// RFC 6675 SetPipe rules (a) and (b), summed over the segments (`Seg::in_flight`).
    fn pipe(&self) -> u64 {
        self.total - self.sacked - self.lost + self.retrans
    }
}

/// The RFC 6675 recovery-phase variables (exclusive ends; see the module comment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Phase {
    in_recovery: bool,
    /// HighData when recovery (or the last RTO) began; kept after recovery ends.
    recovery_point: Option<u64>,
    /// One past the highest octet retransmitted in this recovery (RFC HighRxt + 1).
    high_rxt: u64,
    /// One past the RFC's RescueRxt; None while undefined.
    rescue_rxt: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct Scoreboard {
    /// The segments between snd.una and HighData, contiguous and in sequence order.
    segs: VecDeque<Seg>,
    tally: Tally,
    snd_una: u64,
    high_data: u64,
    /// The end of the highest segment ever SACKed; meaningful while `tally.sacked > 0` (the
    /// cumulative ACK removes segments from the bottom, so the highest SACKed one goes last).
    high_sacked: u64,
    /// `update_lost` watermark: every unSACKed segment ending at or below it is marked lost.
    lost_below: u64,
    /// The valid blocks of the previous ACK: every segment wholly inside one is SACKed.
    prev_blocks: Vec<(u64, u64)>,
    /// Scratch for the blocks of the ACK being processed (swapped with `prev_blocks`).
    new_blocks: Vec<(u64, u64)>,
    phase: Phase,
}

impl Scoreboard {
    /// An empty scoreboard whose first segment will start at `snd_una`.
    pub fn new(snd_una: u64) -> Scoreboard {
        Scoreboard {
            segs: VecDeque::new(),
            tally: Tally::default(),
            snd_una,
            high_data: snd_una,
            high_sacked: snd_una,
            lost_below: snd_una,
            prev_blocks: Vec::new(),
            new_blocks: Vec::new(),
            phase: Phase { high_rxt: snd_una, ..Phase::default() },
        }
    }

    // ---- reading ---------------------------------------------------------------------------

    pub fn segs(&self) -> std::collections::vec_deque::Iter<'_, Seg> {
        self.segs.iter()
    }

    pub fn len(&self) -> usize {
        self.segs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// HighACK + 1: the first unacknowledged byte.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// One past the highest byte sent (RFC 6675 HighData + 1, snd.max).
    pub fn high_data(&self) -> u64 {
        self.high_data
    }

    /// The end of the highest SACKed segment, if any is SACKed (the RFC's "highest octet covered
    /// by any received SACK", plus one, at segment granularity).
    pub fn high_sacked(&self) -> Option<u64> {
        (self.tally.sacked > 0).then_some(self.high_sacked)
    }

    /// RFC 6675 2 `pipe` as SetPipe computes it: the sum of `Seg::in_flight`. O(1).
    pub fn pipe(&self) -> u64 {
        self.tally.pipe()
    }

    pub fn sacked_bytes(&self) -> u64 {
        self.tally.sacked
    }

    /// Bytes unSACKed and deemed lost.
    pub fn lost_bytes(&self) -> u64 {
        self.tally.lost
    }

    /// Bytes unSACKed whose retransmission is in flight.
    pub fn retrans_bytes(&self) -> u64 {
        self.tally.retrans
    }

    pub fn in_recovery(&self) -> bool {
        self.phase.in_recovery
    }

    /// HighData at the start of the current (or last) recovery or RTO, if any.
    pub fn recovery_point(&self) -> Option<u64> {
        self.phase.recovery_point
    }

    /// RFC 6675 5 (A): the cumulative ACK covers RecoveryPoint, so recovery must end.
    pub fn recovery_point_acked(&self) -> bool {
        self.phase.recovery_point.is_some_and(|rp| self.snd_una >= rp)
    }

    /// One past the highest octet retransmitted in this recovery (RFC HighRxt + 1).
    pub fn high_rxt(&self) -> u64 {
        self.phase.high_rxt
    }

    /// One past the RFC's RescueRxt, None while undefined.
    pub fn rescue_rxt(&self) -> Option<u64> {
        self.phase.rescue_rxt
    }

    fn index_of(&self, start: u64) -> Option<usize> {
        self.segs.binary_search_by_key(&start, |s| s.start).ok()
    }

    // ---- sending ---------------------------------------------------------------------------

    /// A new segment went out; it starts at HighData.
    pub fn on_send(&mut self, seg: Seg) {
        debug_assert_eq!(seg.start, self.high_data, "new data must follow HighData");
        debug_assert!(seg.end > seg.start);
        self.tally.add(&seg);
        self.high_data = seg.end;
        self.segs.push_back(seg);
    }

    /// The segment starting at `start` was retransmitted at `now`: it keeps `lost`, and its
    /// retransmission is in flight. In recovery HighRxt moves to its end (RFC 6675 5 (C.2); as a
    /// maximum, so a retransmission chosen by other means never lowers it). Returns the segment,
    /// or None if no segment starts there.
    pub fn on_retransmit(&mut self, start: u64, now: SimTime) -> Option<Seg> {
        let seg = self.retransmitted(start, now)?;
        if self.phase.in_recovery {
            // RFC 6675 5 (C.2): HighRxt = the highest sequence number retransmitted.
            self.phase.high_rxt = self.phase.high_rxt.max(seg.end);
        }
        Some(seg)
    }

    /// RFC 6675 5 (4.3): the fast retransmission of the segment at HighACK + 1. Sets both HighRxt
    /// and RescueRxt to its end, "to prevent repeated retransmission of the same data or a
    /// premature rescue retransmission". Call after `enter_recovery`.
    pub fn on_fast_retransmit(&mut self, now: SimTime) -> Option<Seg> {
        let seg = self.retransmitted(self.segs.front()?.start, now)?;
        self.phase.high_rxt = self.phase.high_rxt.max(seg.end);
        self.phase.rescue_rxt = Some(seg.end);
        Some(seg)
    }

    /// The rescue retransmission `next_seg` offered (RFC 6675 4 NextSeg rule (4)) was sent:
    /// RescueRxt = RecoveryPoint; HighRxt is not updated.
    pub fn on_rescue_retransmit(&mut self, start: u64, now: SimTime) -> Option<Seg> {
        let seg = self.retransmitted(start, now)?;
        // RFC 6675 4 (NextSeg) rule (4): "RescueRxt set to RecoveryPoint. HighRxt MUST NOT be
        // updated."
        self.phase.rescue_rxt = self.phase.recovery_point;
        Some(seg)
    }

    fn retransmitted(&mut self, start: u64, now: SimTime) -> Option<Seg> {
        let i = self.index_of(start)?;
        let before = self.segs[i];
        debug_assert!(!before.sacked, "retransmitting a SACKed segment");
        let seg = &mut self.segs[i];
        seg.sent_at = now;
        seg.retransmitted = true;
        seg.retrans_in_flight = !seg.sacked;
        let after = *seg;
        self.tally.replace(&before, &after);
        Some(after)
    }

    // ---- recovery phase ---------------------------------------------------------------------

    /// RFC 6675 5 (4.1): RecoveryPoint = HighData. Nothing is retransmitted yet in this phase
    /// (HighRxt = HighACK) and RescueRxt is undefined until the fast retransmission.
    pub fn enter_recovery(&mut self) {
        self.phase =
            Phase { in_recovery: true, recovery_point: Some(self.high_data), high_rxt: self.snd_una, rescue_rxt: None };
    }

    /// RFC 6675 5 (A): recovery ends. RecoveryPoint is kept; the scoreboard is not cleared.
    pub fn exit_recovery(&mut self) {
        self.phase.in_recovery = false;
    }

    /// RFC 6675 5.1: an RTO ends recovery and sets RecoveryPoint = HighData; a new recovery must
    /// not start until `recovery_point_acked()`. Which segments to deem lost is the caller's
    /// choice (e.g. all unSACKed ones through `update_segs`, as Linux's `tcp_enter_loss` does).
    pub fn on_timeout(&mut self) {
        self.phase.in_recovery = false;
        self.phase.recovery_point = Some(self.high_data);
    }

    /// F-RTO (RFC 5682 3.1 step 2.b; Linux tcp_process_loss sets `high_seq = snd_nxt`): the
    /// recovery point moves up to HighData before new data is sent.
    pub fn raise_recovery_point(&mut self) {
        self.phase.recovery_point = Some(self.high_data);
    }

    // ---- ACKs --------------------------------------------------------------------------------

    /// An ACK with cumulative acknowledgment `cum_ack` and SACK blocks `blocks` ([left, right)
    /// pairs, RFC 2018 3) arrived (RFC 6675 4 `Update`). Segments below `cum_ack` leave the
    /// scoreboard; a segment wholly inside a valid block becomes SACKed (and its retransmission,
    /// if any, is no longer in flight). Invalid blocks are ignored: empty or reversed ones, those
    /// ending at or below the cumulative ACK (RFC 2883 4: a D-SACK, or stale), and those reaching
    /// beyond HighData (no receiver can SACK what was never sent; Linux
    /// `tcp_is_sackblock_valid`). A block straddling the cumulative ACK counts above it.
    pub fn on_ack(&mut self, cum_ack: u64, blocks: &[(u64, u64)]) -> AckUpdate {
        let mut up = AckUpdate::default();
        debug_assert!(cum_ack <= self.high_data, "ACK of unsent data");
        let cum_ack = cum_ack.min(self.high_data);
        if cum_ack > self.snd_una {
            up.acked = cum_ack - self.snd_una;
            while let Some(front) = self.segs.front() {
                if front.end <= cum_ack {
                    let s = self.segs.pop_front().expect("front exists");
                    self.tally.sub(&s);
                    if s.sacked {
                        up.acked_sacked += s.len();
                    } else {
                        newer(&mut up.latest_delivered, &s);
                    }
                } else {
                    if front.start < cum_ack {
                        // Part of a segment: keep the rest (Linux `tcp_trim_head`).
                        let before = *front;
                        if before.sacked {
                            up.acked_sacked += cum_ack - before.start;
                        }
                        self.segs[0].start = cum_ack;
                        let after = self.segs[0];
                        self.tally.replace(&before, &after);
                        // The shorter segment may now lie inside an old block without being
                        // SACKed: forget the old blocks.
                        self.prev_blocks.clear();
                    }
                    break;
                }
            }
            self.snd_una = cum_ack;
        }

        let prev = std::mem::take(&mut self.prev_blocks);
        let mut applied = std::mem::take(&mut self.new_blocks);
        applied.clear();
        for &(left, right) in blocks {
            // RFC 2018 3: a block is [left, right); RFC 2883 4: at or below the cumulative ACK
            // it reports a duplicate (D-SACK) and SACKs nothing.
            if left >= right || right <= self.snd_una || right > self.high_data {
                continue;
            }
            let left = left.max(self.snd_una);
            self.sack_block(left, right, &prev, &mut up);
            applied.push((left, right));
        }
        self.prev_blocks = applied;
        self.new_blocks = prev;

        up.new_sack_info = up.newly_sacked > 0;
        up.high_sacked = self.high_sacked();
        up
    }

    /// Mark SACKed every segment wholly inside [left, right), skipping the runs a block of the
    /// previous ACK already covered.
    fn sack_block(&mut self, left: u64, right: u64, prev: &[(u64, u64)], up: &mut AckUpdate) {
        let mut i = self.segs.partition_point(|s| s.end <= left);
        while i < self.segs.len() {
            let s = self.segs[i];
            if s.start >= right {
                break;
            }
            if let Some(&(_, prev_right)) = prev.iter().find(|&&(l, r)| l <= s.start && s.end <= r) {
                // Wholly inside a block already processed: this run is SACKed; jump past it.
                debug_assert!(s.sacked);
                i = self.segs.partition_point(|x| x.end <= prev_right);
                continue;
            }
            if !s.sacked && left <= s.start && s.end <= right {
                let seg = &mut self.segs[i];
                seg.sacked = true;
                seg.retrans_in_flight = false;
                let after = *seg;
                self.tally.replace(&s, &after);
                self.high_sacked = self.high_sacked.max(s.end);
                up.newly_sacked += s.len();
                newer(&mut up.latest_delivered, &s);
            }
            i += 1;
        }
    }

    // ---- loss marking --------------------------------------------------------------------------

    /// RFC 6675 4 `IsLost(seq)`: true when DupThresh SACKed segments lie above `seq`, or more than
    /// (DupThresh - 1) * SMSS SACKed bytes do. The RFC's "DupThresh discontiguous SACKed
    /// sequences" is read as DupThresh SACKed segments, as Linux and ns-3 count them; "above"
    /// means segments starting after `seq`.
    pub fn is_lost(&self, seq: u64, dupthresh: u32, mss: u64) -> bool {
        if self.tally.sacked == 0 {
            return false;
        }
        let top = self.segs.partition_point(|s| s.end <= self.high_sacked);
        let mut count = SackedAbove::new(dupthresh, mss);
        for s in self.segs.range(..top).rev() {
            if s.start <= seq {
                break;
            }
            if s.sacked && count.add(s) {
                return true;
            }
        }
        false
    }

    /// Mark lost every unSACKed segment for which `IsLost` holds (RFC 6675 4, the marking SetPipe
    /// rule (a) implies; Linux `tcp_mark_head_lost` without RACK). A retransmission in flight
    /// stays in flight: it is the original transmission that is deemed lost. Returns whether any
    /// segment was newly marked. Call after `on_ack`.
    pub fn update_lost(&mut self, dupthresh: u32, mss: u64) -> bool {
        if self.tally.sacked == 0 {
            return false;
        }
        // IsLost is monotone: it holds for every segment below the one where, walking down from
        // the highest SACKed segment, the SACKed segments passed first meet DupThresh.
        let top = self.segs.partition_point(|s| s.end <= self.high_sacked);
        let mut count = SackedAbove::new(dupthresh, mss);
        let mut boundary = None;
        for i in (0..top).rev() {
            let s = &self.segs[i];
            if s.end <= self.lost_below {
                break; // everything below is marked already
            }
            if s.sacked && count.add(s) {
                boundary = Some(i);
                break;
            }
        }
        let Some(b) = boundary else { return false };
        let mut newly = false;
        for i in (0..b).rev() {
            let before = self.segs[i];
            if before.end <= self.lost_below {
                break;
            }
            if !before.sacked && !before.lost {
                self.segs[i].lost = true;
                let after = self.segs[i];
                self.tally.replace(&before, &after);
                newly = true;
            }
        }
        self.lost_below = self.lost_below.max(self.segs[b].start);
        newly
    }

    /// Deem the segment starting at `start` lost with its latest transmission (RACK, RFC 8985
    /// 6.2 `RACK_detect_loss`; RTO): `lost` is set and `retrans_in_flight` cleared. Returns whether anything
    /// changed (false for a SACKed segment, or one already lost with no retransmission in flight).
    pub fn mark_lost(&mut self, start: u64) -> bool {
        let Some(i) = self.index_of(start) else { return false };
        let before = self.segs[i];
        if before.sacked || (before.lost && !before.retrans_in_flight) {
            return false;
        }
        let seg = &mut self.segs[i];
        seg.lost = true;
        seg.retrans_in_flight = false;
        let after = *seg;
        self.tally.replace(&before, &after);
        true
    }

    /// Change segments' flags in place (RACK's loss detection, an RTO marking everything lost,
    /// an undo) with the tallies kept right. `f` may change `sent_at`, `retransmitted`, `lost` and
    /// `retrans_in_flight`, not a segment's bounds or `sacked` (SACKs arrive through `on_ack`).
    pub fn update_segs(&mut self, mut f: impl FnMut(&mut Seg)) {
        for i in 0..self.segs.len() {
            let before = self.segs[i];
            f(&mut self.segs[i]);
            let after = self.segs[i];
            debug_assert!(
                (before.start, before.end, before.sacked) == (after.start, after.end, after.sacked),
                "update_segs may not move a segment or change `sacked`"
            );
            if before != after {
                self.tally.replace(&before, &after);
                if before.lost && !after.lost {
                    self.lost_below = self.snd_una; // an undo: update_lost must look again
                }
            }
        }
    }

    // ---- NextSeg -------------------------------------------------------------------------------

    /// RFC 6675 4 `NextSeg`. `new_data_available`: there is unsent data and the receiver's window
    /// allows a segment of it (rule (2)). Outside recovery HighRxt is taken as HighACK (RFC 6675
    /// 5 (3.1), Limited Transmit) and there is no rescue. Rule (1.c) reads the `lost` flag: call
    /// `update_lost` first.
    pub fn next_seg(&self, new_data_available: bool) -> NextSeg {
        let high_rxt = if self.phase.in_recovery { self.phase.high_rxt.max(self.snd_una) } else { self.snd_una };
        let mut rule3 = None;
        if let Some(high_sacked) = self.high_sacked() {
            // RFC 6675 4 (NextSeg) rule (1.a): S2 is greater than HighRxt.
            let from = self.segs.partition_point(|s| s.start < high_rxt);
            for s in self.segs.range(from..) {
                // Rule (1.b): S2 is less than the highest octet covered by any received SACK.
                if s.start >= high_sacked {
                    break;
                }
                if s.sacked {
                    continue;
                }
                // Rule (1.c): IsLost(S2); rule (1): the smallest such S2.
                if s.lost {
                    return NextSeg::Retransmit(s.start);
                }
                rule3.get_or_insert(s.start);
            }
        }
        // Rule (2): no S2, but unsent data the receiver's window allows.
        if new_data_available {
            return NextSeg::NewData;
        }
        // Rule (3): an unSACKed S3 meeting (1.a) and (1.b), without (1.c).
        if let Some(s3) = rule3 {
            return NextSeg::Retransmit(s3);
        }
        // Rule (4): one rescue retransmission per recovery, of the segment holding the highest
        // outstanding unSACKed octet, if HighACK > RescueRxt or RescueRxt is undefined.
        if self.phase.in_recovery && self.phase.rescue_rxt.is_none_or(|r| self.snd_una > r) {
            if let Some(s) = self.segs.iter().rev().find(|s| !s.sacked) {
                return NextSeg::Rescue(s.start);
            }
        }
        NextSeg::Nothing
    }
}

/// The SACKed segments counted so far walking down the scoreboard, against IsLost's thresholds.
struct SackedAbove {
    segs: u64,
    bytes: u64,
    dupthresh: u64,
    byte_limit: u64,
}

impl SackedAbove {
    fn new(dupthresh: u32, mss: u64) -> SackedAbove {
        assert!(dupthresh >= 1);
        let dupthresh = u64::from(dupthresh);
        SackedAbove { segs: 0, bytes: 0, dupthresh, byte_limit: (dupthresh - 1) * mss }
    }

    /// Count one more SACKed segment; true once IsLost holds below it.
    fn add(&mut self, s: &Seg) -> bool {
        self.segs += 1;
        self.bytes += s.len();
        // RFC 6675 4 (IsLost): DupThresh SACKed segments, or more than (DupThresh - 1) * SMSS
        // SACKed bytes, above.
        self.segs >= self.dupthresh || self.bytes > self.byte_limit
    }
}

/// Keep in `best` the most recently sent delivered segment, ties going to the higher end
/// (RFC 8985 6.2 `RACK_sent_after`).
fn newer(best: &mut Option<Delivered>, s: &Seg) {
    if best.is_none_or(|b| (s.sent_at, s.end) > (b.sent_at, b.end)) {
        *best = Some(Delivered { sent_at: s.sent_at, end: s.end, retransmitted: s.retransmitted });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MSS: u64 = 1000;

    /// `n` segments of 1000 B from 0; segment k sent at time k.
    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(0);
        for k in 0..n {
            sb.on_send(Seg::new(k * MSS, (k + 1) * MSS, SimTime(k)));
        }
        sb
    }

    /// The numbers (start / 1000) of the unSACKed segments deemed lost.
    fn lost(sb: &Scoreboard) -> Vec<u64> {
        sb.segs().filter(|s| s.lost && !s.sacked).map(|s| s.start / MSS).collect()
    }

    fn summed_pipe(sb: &Scoreboard) -> u64 {
        sb.segs().map(Seg::in_flight).sum()
    }

    #[test]
    fn rfc6675_worked_example() {
        // Ten segments of 1000 B; one ACK (cum ACK 0) SACKs segments 3-5 and 7; DupThresh 3.
        let mut sb = board(10);
        let up = sb.on_ack(0, &[(3000, 6000), (7000, 8000)]);
        assert_eq!((up.acked, up.newly_sacked, up.delivered()), (0, 4000, 4000));
        assert!(up.new_sack_info);
        assert_eq!(up.high_sacked, Some(8000));
        let seg7 = Delivered { sent_at: SimTime(7), end: 8000, retransmitted: false };
        assert_eq!(up.latest_delivered, Some(seg7));

        // IsLost: four SACKed segments lie above 0-2; only one (7) above 6; none above 8 and 9.
        for (k, want) in [(0, true), (1, true), (2, true), (6, false), (8, false), (9, false)] {
            assert_eq!(sb.is_lost(k * MSS, 3, MSS), want, "segment {k}");
        }
        assert!(sb.update_lost(3, MSS));
        assert_eq!(lost(&sb), [0, 1, 2]);
        assert!(!sb.update_lost(3, MSS), "nothing new to mark");
        // SetPipe: 6, 8 and 9 are in the network.
        assert_eq!(sb.pipe(), 3000);

        // (4.1)-(4.3): enter recovery, fast-retransmit segment 0.
        sb.enter_recovery();
        assert_eq!(sb.recovery_point(), Some(10_000));
        let s = sb.on_fast_retransmit(SimTime(20)).unwrap();
        assert_eq!((s.start, s.end, s.lost, s.retrans_in_flight), (0, 1000, true, true));
        assert_eq!((sb.high_rxt(), sb.rescue_rxt()), (1000, Some(1000)));
        assert_eq!(sb.pipe(), 4000); // the retransmission is in the network

        // Rule (1) comes before new data: segments 1 and 2.
        assert_eq!(sb.next_seg(true), NextSeg::Retransmit(1000));
        sb.on_retransmit(1000, SimTime(21));
        assert_eq!((sb.high_rxt(), sb.pipe()), (2000, 5000));
        assert_eq!(sb.next_seg(false), NextSeg::Retransmit(2000));
        sb.on_retransmit(2000, SimTime(22));
        assert_eq!((sb.high_rxt(), sb.pipe()), (3000, 6000));

        // No lost segment above HighRxt: rule (2) if there is new data, else rule (3) takes
        // segment 6 (unSACKed, below the highest SACK, not deemed lost).
        assert_eq!(sb.next_seg(true), NextSeg::NewData);
        assert_eq!(sb.next_seg(false), NextSeg::Retransmit(6000));
        sb.on_retransmit(6000, SimTime(23));
        // Segment 6 now counts twice: the original and its retransmission.
        assert_eq!((sb.high_rxt(), sb.pipe()), (7000, 7000));
        assert_eq!(sb.pipe(), summed_pipe(&sb));

        // Rule (4): HighACK is not above RescueRxt (HighRxt after (4.3)): no rescue.
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);
        // Segment 0's retransmission is acknowledged: HighACK = RescueRxt, still no rescue.
        let up = sb.on_ack(1000, &[(3000, 6000), (7000, 8000)]);
        assert_eq!((up.acked, up.newly_sacked, up.delivered()), (1000, 0, 1000));
        assert!(!up.new_sack_info);
        let seg0 = Delivered { sent_at: SimTime(20), end: 1000, retransmitted: true };
        assert_eq!(up.latest_delivered, Some(seg0));
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);
        // Segment 1's: HighACK passes RescueRxt; the rescue takes the segment holding the highest
        // unSACKed octet (9), unless there is new data to send.
        sb.on_ack(2000, &[(3000, 6000), (7000, 8000)]);
        assert_eq!(sb.pipe(), 5000); // 2, 6 twice, 8, 9
        assert_eq!(sb.next_seg(true), NextSeg::NewData);
        assert_eq!(sb.next_seg(false), NextSeg::Rescue(9000));
        sb.on_rescue_retransmit(9000, SimTime(30));
        assert_eq!((sb.high_rxt(), sb.rescue_rxt()), (7000, Some(10_000)), "HighRxt not updated");
        assert_eq!(sb.pipe(), 6000); // 9 not deemed lost: counted twice
                                     // Once per recovery: RescueRxt = RecoveryPoint, which HighACK passes only as recovery ends.
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);
        let up = sb.on_ack(6000, &[(7000, 8000)]);
        assert_eq!((up.acked, up.acked_sacked, up.delivered()), (4000, 3000, 1000));
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);
        sb.on_ack(9000, &[]);
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);
        assert!(!sb.recovery_point_acked());
        sb.on_ack(10_000, &[]);
        assert!(sb.recovery_point_acked() && sb.is_empty());
        assert_eq!(sb.pipe(), 0);
        sb.exit_recovery();
        assert!(!sb.in_recovery());
    }

    #[test]
    fn rescue_without_sacks_when_rescue_rxt_is_undefined() {
        // A tail loss with no SACK at all: rules (1)-(3) have nothing below a highest SACK, and
        // with RescueRxt undefined rule (4) offers the last segment at once.
        let mut sb = board(4);
        sb.enter_recovery();
        assert_eq!(sb.next_seg(false), NextSeg::Rescue(3000));
        sb.on_rescue_retransmit(3000, SimTime(9));
        assert_eq!(sb.rescue_rxt(), Some(4000));
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);
        // Outside recovery there is no rescue.
        let sb = board(4);
        assert_eq!(sb.next_seg(false), NextSeg::Nothing);
        assert_eq!(sb.next_seg(true), NextSeg::NewData);
    }

    #[test]
    fn next_seg_outside_recovery_takes_high_rxt_as_high_ack() {
        // RFC 6675 5 (3.1): before recovery (Limited Transmit) HighRxt is HighACK, whatever an
        // earlier recovery left.
        let mut sb = board(6);
        sb.on_ack(0, &[(3000, 6000)]);
        assert!(sb.update_lost(3, MSS));
        assert_eq!(sb.next_seg(true), NextSeg::Retransmit(0));
    }

    #[test]
    fn is_lost_counts_sacked_segments_or_bytes() {
        // Ten 100-B segments, SMSS 1000: three SACKed segments (300 B) make IsLost true below
        // them by count; two do not.
        let mut sb = Scoreboard::new(0);
        for k in 0..10 {
            sb.on_send(Seg::new(k * 100, (k + 1) * 100, SimTime(k)));
        }
        sb.on_ack(0, &[(100, 300)]);
        assert!(!sb.is_lost(0, 3, MSS));
        sb.on_ack(0, &[(100, 400)]);
        assert!(sb.is_lost(0, 3, MSS));
        assert!(!sb.is_lost(100, 3, MSS), "only segments above count");

        // 1500-B segments with an SMSS of 1000: two SACKed (3000 B > 2 * SMSS) suffice by bytes.
        let mut sb = Scoreboard::new(0);
        for k in 0..4 {
            sb.on_send(Seg::new(k * 1500, (k + 1) * 1500, SimTime(k)));
        }
        sb.on_ack(0, &[(1500, 4500)]);
        assert!(sb.is_lost(0, 3, MSS));
        // Exactly (DupThresh - 1) * SMSS is not "more than".
        let mut sb = board(4);
        sb.on_ack(0, &[(1000, 3000)]);
        assert!(!sb.is_lost(0, 3, MSS));
        assert!(!sb.update_lost(3, MSS));
        assert_eq!(sb.pipe(), 2000);
    }

    #[test]
    fn sack_blocks_are_checked_for_validity() {
        let mut sb = board(10);
        let up = sb.on_ack(2000, &[(0, 1000)]);
        assert_eq!((up.acked, up.newly_sacked, up.new_sack_info), (2000, 0, false), "D-SACK below the ACK");
        let up = sb.on_ack(2000, &[(1000, 2000)]);
        assert_eq!(up.newly_sacked, 0, "a block ending at the cumulative ACK");
        let up = sb.on_ack(2000, &[(5000, 11_000), (6000, 5000), (5000, 5000)]);
        assert_eq!(up.newly_sacked, 0, "beyond HighData, reversed, empty");
        assert_eq!(up.high_sacked, None);
        let up = sb.on_ack(2000, &[(1000, 4000)]);
        assert_eq!(up.newly_sacked, 2000, "a block straddling the ACK counts above it");
        let up = sb.on_ack(2000, &[(5000, 8000), (6000, 9000)]);
        assert_eq!(up.newly_sacked, 4000, "overlapping blocks count each segment once");
        assert_eq!(up.high_sacked, Some(9000));
        let up = sb.on_ack(2000, &[(6000, 9000), (1000, 4000), (5000, 8000)]);
        assert_eq!((up.newly_sacked, up.new_sack_info), (0, false), "repeated blocks are no news");
        let sacked: Vec<u64> = sb.segs().filter(|s| s.sacked).map(|s| s.start / MSS).collect();
        assert_eq!(sacked, [2, 3, 5, 6, 7, 8]);
        assert_eq!(sb.pipe(), 2000); // 4 and 9
    }

    #[test]
    fn a_segment_is_sacked_only_when_one_block_covers_it() {
        let mut sb = board(5);
        let up = sb.on_ack(0, &[(1500, 3500)]);
        assert_eq!(up.newly_sacked, 1000);
        assert_eq!(sb.segs().filter(|s| s.sacked).map(|s| s.start).collect::<Vec<_>>(), [2000]);
        // Two adjacent blocks each covering part of segment 1 (a receiver merges them; RFC 2018
        // 4) do not SACK it; one block covering it does.
        let up = sb.on_ack(0, &[(1000, 1500), (1500, 3500)]);
        assert_eq!(up.newly_sacked, 0);
        let up = sb.on_ack(0, &[(1000, 3500)]);
        assert_eq!(up.newly_sacked, 1000);
        // A cumulative ACK inside a segment trims it; the rest stays outstanding and the segment
        // is not reported delivered.
        let up = sb.on_ack(500, &[(1000, 3500)]);
        assert_eq!((up.acked, up.delivered(), up.latest_delivered), (500, 500, None));
        assert_eq!(sb.segs().next().map(|s| (s.start, s.end)), Some((500, 1000)));
        assert_eq!(sb.pipe(), 2500);
    }

    #[test]
    fn latest_delivered_is_the_last_sent_ties_to_the_higher_end() {
        let mut sb = board(5);
        sb.on_retransmit(0, SimTime(10));
        let up = sb.on_ack(0, &[(3000, 4000)]);
        assert_eq!(up.latest_delivered.map(|d| d.end), Some(4000));
        // Segments 0-2 cumulatively acknowledged; 3 was SACKed before and is not news.
        let up = sb.on_ack(4000, &[]);
        assert_eq!((up.acked, up.acked_sacked, up.delivered()), (4000, 1000, 3000));
        let seg0 = Delivered { sent_at: SimTime(10), end: 1000, retransmitted: true };
        assert_eq!(up.latest_delivered, Some(seg0));
        // All sent at once: the highest end wins.
        let mut sb = Scoreboard::new(0);
        for k in 0..3 {
            sb.on_send(Seg::new(k * MSS, (k + 1) * MSS, SimTime(7)));
        }
        let up = sb.on_ack(1000, &[(2000, 3000)]);
        assert_eq!(up.latest_delivered.map(|d| d.end), Some(3000));
    }

    #[test]
    fn rack_marks_and_undo_keep_the_tallies() {
        let mut sb = board(10);
        sb.on_ack(0, &[(7000, 10_000)]);
        assert!(sb.update_lost(3, MSS));
        assert_eq!(lost(&sb), [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(sb.pipe(), 0);
        sb.on_retransmit(0, SimTime(20));
        assert_eq!(sb.pipe(), 1000);
        // RACK deems the retransmission lost too.
        assert!(sb.mark_lost(0));
        assert!(!sb.mark_lost(0));
        assert!(!sb.mark_lost(7000), "SACKed");
        assert!(!sb.mark_lost(1500), "no segment starts there");
        assert_eq!(sb.pipe(), 0);
        // An undo clears a mark; update_lost restores it.
        sb.update_segs(|s| {
            if s.start == 3000 {
                s.lost = false;
            }
        });
        assert_eq!((sb.pipe(), sb.lost_bytes()), (1000, 6000));
        assert!(sb.update_lost(3, MSS));
        assert_eq!((sb.pipe(), sb.lost_bytes()), (0, 7000));
        assert_eq!(sb.pipe(), summed_pipe(&sb));
    }

    // ---- property: the incremental scoreboard against a naive one --------------------------

    /// The same scoreboard kept the obvious way: every query a full scan.
    #[derive(Clone, Debug, Default)]
    struct Model {
        segs: Vec<Seg>,
        una: u64,
        high: u64,
        in_recovery: bool,
        recovery_point: Option<u64>,
        high_rxt: u64,
        rescue_rxt: Option<u64>,
    }

    impl Model {
        fn high_sacked(&self) -> Option<u64> {
            self.segs.iter().filter(|s| s.sacked).map(|s| s.end).max()
        }

        fn on_ack(&mut self, cum: u64, blocks: &[(u64, u64)]) -> AckUpdate {
            let mut up = AckUpdate::default();
            let cum = cum.min(self.high);
            if cum > self.una {
                up.acked = cum - self.una;
                for s in self.segs.iter().filter(|s| s.start < cum) {
                    if s.sacked {
                        up.acked_sacked += s.end.min(cum) - s.start;
                    } else if s.end <= cum {
                        newer(&mut up.latest_delivered, s);
                    }
                }
                self.segs.retain(|s| s.end > cum);
                if let Some(first) = self.segs.first_mut() {
                    first.start = first.start.max(cum);
                }
                self.una = cum;
            }
            for &(l, r) in blocks {
                if l >= r || r <= self.una || r > self.high {
                    continue;
                }
                for s in self.segs.iter_mut().filter(|s| !s.sacked && l <= s.start && s.end <= r) {
                    newer(&mut up.latest_delivered, s);
                    up.newly_sacked += s.len();
                    s.sacked = true;
                    s.retrans_in_flight = false;
                }
            }
            up.new_sack_info = up.newly_sacked > 0;
            up.high_sacked = self.high_sacked();
            up
        }

        fn is_lost(&self, seq: u64, dupthresh: u32, mss: u64) -> bool {
            let above = self.segs.iter().filter(|s| s.sacked && s.start > seq);
            let (n, bytes) = above.fold((0u64, 0u64), |(n, b), s| (n + 1, b + s.len()));
            n >= u64::from(dupthresh) || bytes > u64::from(dupthresh - 1) * mss
        }

        fn update_lost(&mut self, dupthresh: u32, mss: u64) -> bool {
            let marks: Vec<bool> = self.segs.iter().map(|s| self.is_lost(s.start, dupthresh, mss)).collect();
            let mut newly = false;
            for (s, m) in self.segs.iter_mut().zip(marks) {
                if m && !s.sacked && !s.lost {
                    s.lost = true;
                    newly = true;
                }
            }
            newly
        }

        fn next_seg(&self, new_data: bool) -> NextSeg {
            let hr = if self.in_recovery { self.high_rxt.max(self.una) } else { self.una };
            let hs = self.high_sacked().unwrap_or(0);
            let cands: Vec<&Seg> = self.segs.iter().filter(|s| !s.sacked && s.start >= hr && s.start < hs).collect();
            if let Some(s) = cands.iter().find(|s| s.lost) {
                return NextSeg::Retransmit(s.start);
            }
            if new_data {
                return NextSeg::NewData;
            }
            if let Some(s) = cands.first() {
                return NextSeg::Retransmit(s.start);
            }
            let rescue_ok = self.rescue_rxt.is_none_or(|r| self.una > r);
            match self.segs.iter().rev().find(|s| !s.sacked) {
                Some(s) if self.in_recovery && rescue_ok => NextSeg::Rescue(s.start),
                _ => NextSeg::Nothing,
            }
        }

        fn retransmit(&mut self, start: u64, now: SimTime) -> Option<u64> {
            let s = self.segs.iter_mut().find(|s| s.start == start)?;
            s.sent_at = now;
            s.retransmitted = true;
            s.retrans_in_flight = true;
            Some(s.end)
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Send(u64),
        /// Cumulative ACK: 0 none, 1 at a segment's end, 2 anywhere; then SACK blocks as (offset
        /// from snd.una - 2000, length).
        Ack(u8, prop::sample::Index, Vec<(u64, u64)>),
        /// The previous ACK's blocks again, the first grown to the right, as a receiver repeats
        /// them (RFC 2018 4).
        AckAgain(u64),
        Retransmit(prop::sample::Index),
        MarkLost(prop::sample::Index),
        Unlose(prop::sample::Index),
        UpdateLost(u32, u64),
        EnterRecovery,
        ExitRecovery,
        FastRetransmit,
        FollowNextSeg(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        let idx = any::<prop::sample::Index>;
        prop_oneof![
            3 => (1u64..=1500).prop_map(Op::Send),
            4 => (0u8..3, idx(), prop::collection::vec((0u64..24_000, 0u64..7000), 0..4))
                .prop_map(|(m, i, b)| Op::Ack(m, i, b)),
            3 => (0u64..3000).prop_map(Op::AckAgain),
            1 => idx().prop_map(Op::Retransmit),
            1 => idx().prop_map(Op::MarkLost),
            1 => idx().prop_map(Op::Unlose),
            2 => (1u32..5, prop::sample::select(vec![100u64, 1000, 1460])).prop_map(|(d, m)| Op::UpdateLost(d, m)),
            1 => Just(Op::EnterRecovery),
            1 => Just(Op::ExitRecovery),
            1 => Just(Op::FastRetransmit),
            3 => any::<bool>().prop_map(Op::FollowNextSeg),
        ]
    }

    fn check(sb: &Scoreboard, m: &Model) -> Result<(), TestCaseError> {
        let segs: Vec<Seg> = sb.segs().copied().collect();
        prop_assert_eq!(&segs, &m.segs);
        prop_assert_eq!(sb.pipe(), segs.iter().map(Seg::in_flight).sum::<u64>());
        let sum = |f: &dyn Fn(&Seg) -> bool| segs.iter().filter(|s| f(s)).map(Seg::len).sum::<u64>();
        prop_assert_eq!(sb.sacked_bytes(), sum(&|s| s.sacked));
        prop_assert_eq!(sb.lost_bytes(), sum(&|s| s.lost && !s.sacked));
        prop_assert_eq!(sb.retrans_bytes(), sum(&|s| s.retrans_in_flight && !s.sacked));
        prop_assert_eq!(sb.high_sacked(), m.high_sacked());
        prop_assert_eq!((sb.snd_una(), sb.high_data()), (m.una, m.high));
        prop_assert_eq!((sb.high_rxt(), sb.rescue_rxt()), (m.high_rxt, m.rescue_rxt));
        prop_assert_eq!(sb.high_data() - sb.snd_una(), segs.iter().map(Seg::len).sum::<u64>());
        Ok(())
    }

    proptest! {
        #[test]
        fn incremental_scoreboard_matches_a_full_scan(ops in prop::collection::vec(op(), 1..150)) {
            let mut sb = Scoreboard::new(0);
            let mut m = Model::default();
            let mut last_blocks: Vec<(u64, u64)> = Vec::new();
            for (n, op) in ops.into_iter().enumerate() {
                let now = SimTime(n as u64);
                let pick = |i: &prop::sample::Index| (!m.segs.is_empty()).then(|| m.segs[i.index(m.segs.len())]);
                match op {
                    Op::Send(len) => {
                        let s = Seg::new(m.high, m.high + len, now);
                        sb.on_send(s);
                        m.segs.push(s);
                        m.high += len;
                    }
                    Op::Ack(mode, i, blocks) => {
                        let cum = match (mode, pick(&i)) {
                            (1, Some(s)) => s.end,
                            (2, _) => m.una + i.index((m.high - m.una + 1) as usize) as u64,
                            _ => m.una,
                        };
                        let blocks: Vec<(u64, u64)> = blocks
                            .iter()
                            .map(|&(off, len)| {
                                let l = (m.una + off).saturating_sub(2000);
                                (l, l + len)
                            })
                            .collect();
                        let got = sb.on_ack(cum, &blocks);
                        prop_assert_eq!(got, m.on_ack(cum, &blocks));
                        last_blocks = blocks;
                    }
                    Op::AckAgain(grow) => {
                        if let Some(first) = last_blocks.first_mut() {
                            first.1 = (first.1 + grow).min(m.high);
                        }
                        let got = sb.on_ack(m.una, &last_blocks);
                        prop_assert_eq!(got, m.on_ack(m.una, &last_blocks));
                    }
                    Op::Retransmit(i) => {
                        if let Some(s) = pick(&i).filter(|s| !s.sacked) {
                            sb.on_retransmit(s.start, now);
                            let end = m.retransmit(s.start, now).unwrap();
                            if m.in_recovery {
                                m.high_rxt = m.high_rxt.max(end);
                            }
                        }
                    }
                    Op::MarkLost(i) => {
                        if let Some(s) = pick(&i) {
                            let changed = sb.mark_lost(s.start);
                            let ms = m.segs.iter_mut().find(|x| x.start == s.start).unwrap();
                            prop_assert_eq!(changed, !ms.sacked && (!ms.lost || ms.retrans_in_flight));
                            if !ms.sacked {
                                ms.lost = true;
                                ms.retrans_in_flight = false;
                            }
                        }
                    }
                    Op::Unlose(i) => {
                        if let Some(s) = pick(&i) {
                            sb.update_segs(|x| if x.start == s.start { x.lost = false });
                            m.segs.iter_mut().find(|x| x.start == s.start).unwrap().lost = false;
                        }
                    }
                    Op::UpdateLost(d, mss) => {
                        for s in &m.segs {
                            prop_assert_eq!(sb.is_lost(s.start, d, mss), m.is_lost(s.start, d, mss));
                        }
                        prop_assert_eq!(sb.update_lost(d, mss), m.update_lost(d, mss));
                    }
                    Op::EnterRecovery => {
                        sb.enter_recovery();
                        m.in_recovery = true;
                        m.recovery_point = Some(m.high);
                        m.high_rxt = m.una;
                        m.rescue_rxt = None;
                    }
                    Op::ExitRecovery => {
                        sb.exit_recovery();
                        m.in_recovery = false;
                    }
                    Op::FastRetransmit => {
                        if let Some(s) = m.segs.first().copied().filter(|s| !s.sacked) {
                            sb.on_fast_retransmit(now);
                            let end = m.retransmit(s.start, now).unwrap();
                            m.high_rxt = m.high_rxt.max(end);
                            m.rescue_rxt = Some(end);
                        }
                    }
                    Op::FollowNextSeg(new_data) => {
                        let next = sb.next_seg(new_data);
                        prop_assert_eq!(next, m.next_seg(new_data));
                        match next {
                            NextSeg::Retransmit(s) => {
                                sb.on_retransmit(s, now);
                                let end = m.retransmit(s, now).unwrap();
                                if m.in_recovery {
                                    m.high_rxt = m.high_rxt.max(end);
                                }
                            }
                            NextSeg::Rescue(s) => {
                                sb.on_rescue_retransmit(s, now);
                                m.retransmit(s, now);
                                m.rescue_rxt = m.recovery_point;
                            }
                            NextSeg::NewData => {
                                let s = Seg::new(m.high, m.high + MSS, now);
                                sb.on_send(s);
                                m.segs.push(s);
                                m.high += MSS;
                            }
                            NextSeg::Nothing => {}
                        }
                    }
                }
                check(&sb, &m)?;
            }
        }
    }
}
