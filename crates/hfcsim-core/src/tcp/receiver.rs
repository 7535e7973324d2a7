//! The TCP data receiver: cumulative ACKs, out-of-order buffering and delayed ACK.
//!
//! Delayed ACK follows RFC 1122 4.2.3.2 as 4.4BSD implements it (Stevens vol. 2, 26.3, 27.6,
//! 28.4): in-order data sets a delayed-ACK flag that the host's 200 ms fast timer
//! (`tcp_fasttimo`, a global tick at fixed multiples from the host's phase) turns into an ACK,
//! so the delay is anywhere in 0-200 ms; an ACK goes out at once when the application has
//! consumed at least two maximum segments (or half the receive buffer) since the last ACK
//! (the window-update test of `tcp_output`), when a segment arrives out of order or duplicated,
//! and when a segment fills a gap. The application reads data as soon as it is in order, so the
//! advertised window is the whole (MSS-rounded) receive buffer.
//!
//! `AckRule::FreeBsd` is FreeBSD 4.x's delayed ACK, which Nguyen & Armitage's receivers ran
//! (paper 003 Sec. III.B saw "one ACK packet per alternation of one and two data packets"):
//! - tcp_input's `DELAY_ACK(tp)` is true only while the delayed-ACK callout is *not* pending: the
//!   first in-order segment arms it (`callout_reset(tt_delack, tcp_delacktime)`, a delay from
//!   now, `delack_tick` here, 100 ms in FreeBSD 4), the next one is ACKed at once (TF_ACKNOW).
//!   That ACK goes out inside tcp_input, before the application has read the segment, so it
//!   advertises the buffer less that segment;
//! - the application (nttcp) then reads what is in order, and the read's `tcp_output` (PRU_RCVD)
//!   sends a window update when the window it could advertise has grown by at least two segments
//!   (or half the buffer) past the last one it advertised.
//!
//! Together: the ACK at the second segment leaves the right edge one segment short, so the third
//! segment's read opens it by two and is ACKed alone: ACKs after 2, 1, 2, 1 ... segments, d = 1.5.
//! Net/3 (`AckRule::Net3`) has no such callout test: its ACKs come from the window-update test
//! alone, after every second segment.
//!
//! `AckRule::Ns2` is ns-2.35's `DelAckSink::recv` (tcp/tcp-sink.cc), which counts packets, not
//! bytes: an in-order packet that leaves no gap above it, arriving while the delay timer is idle,
//! arms the timer for exactly `interval_` (`delay_timer_.resched(interval_)`, here `delack_tick`)
//! and is not ACKed; any other packet (the next in-order one, an out-of-order one, one that fills
//! a gap with data still missing above it (`RFC2581_immediate_ack_`), a duplicate of an older one)
//! cancels the timer and is ACKed at once; a second copy of the highest in-order packet is delayed
//! like the first. When the timer fires, the held ACK goes out. `SYN_immediate_ack_` (2010)
//! is off: with no SYN exchange, packet 0 is data.

use super::rto::Rto;
use crate::time::{Nanos, SimTime};

/// Which BSD's delayed-ACK code the receiver runs (module comment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AckRule {
    /// 4.4BSD-Lite (Net/3): TF_DELACK and the 200 ms fast timer, the window-update test.
    #[default]
    Net3,
    /// FreeBSD 4.x: the DELAY_ACK callout test, then the application's read and the window-update
    /// test.
    FreeBsd,
    /// ns-2.35 DelAckSink: every second packet, or `interval_` after a lone one (module comment).
    Ns2,
}

#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    pub delayed_ack: bool,
    pub rule: AckRule,
    pub mss: u64,
    /// Receive socket buffer, rounded up to a multiple of the MSS (Net/3 `tcp_mss`).
    pub receive_buffer: u64,
    /// Period and phase of the host's fast timer (Net/3); FreeBSD: the callout's delay.
    pub delack_tick: Nanos,
    pub delack_phase: Nanos,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    /// We sent the SYN (client opener) and wait for the SYN-ACK.
    SynSent,
    /// We answered a SYN; the first data segment completes the handshake.
    SynRcvd,
    Established,
    Dropped,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Syn,
    SynAck,
    /// A cumulative ACK (also the handshake's final ACK, which carries the request).
    Ack {
        ack: u64,
        wnd: u64,
    },
}

#[derive(Clone, Debug)]
pub struct Receiver {
    pub cfg: ReceiverConfig,
    pub state: State,
    total: u64,
    pub rcv_nxt: u64,
    /// Out-of-order data, disjoint sorted half-open ranges above rcv_nxt.
    ooo: Vec<(u64, u64)>,
    /// In-order bytes consumed since the last ACK we sent.
    unacked: u64,
    /// The right edge of the window last advertised (rcv_adv).
    rcv_adv: u64,
    delack_at: Option<SimTime>,
    /// SYN retransmission when we opened the connection.
    rto: Rto,
    syn_rexmt_at: Option<SimTime>,
    pub first_data_at: Option<SimTime>,
    pub first_ack_at: Option<SimTime>,
    pub completed_at: Option<SimTime>,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig, total: u64, rto: Rto) -> Receiver {
        Receiver {
            cfg,
            state: State::Closed,
            total,
            rcv_nxt: 0,
            ooo: Vec::new(),
            unacked: 0,
            rcv_adv: 0,
            delack_at: None,
            rto,
            syn_rexmt_at: None,
            first_data_at: None,
            first_ack_at: None,
            completed_at: None,
        }
    }

    /// Bytes of the transfer.
    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn window(&self) -> u64 {
        self.cfg.receive_buffer
    }

    pub fn next_deadline(&self) -> Option<SimTime> {
        match (self.delack_at, self.syn_rexmt_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Active open by the receiving side (HTTP-style: the PC connects).
    pub fn connect(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.state = State::SynSent;
        self.syn_rexmt_at = Some(self.rto.deadline(now));
        out.push(Action::Syn);
    }

    /// Start established without a handshake.
    pub fn establish(&mut self) {
        self.state = State::Established;
        self.rcv_adv = self.window();
    }

    pub fn on_syn(&mut self, out: &mut Vec<Action>) {
        if matches!(self.state, State::Closed | State::SynRcvd) {
            self.state = State::SynRcvd;
            self.rcv_adv = self.window();
            out.push(Action::SynAck);
        }
    }

    pub fn on_syn_ack(&mut self, out: &mut Vec<Action>) {
        if matches!(self.state, State::SynSent | State::Established) {
            self.state = State::Established;
            self.syn_rexmt_at = None;
            // The final ACK of the handshake; the HTTP request rides on it.
            self.rcv_adv = self.window();
            out.push(Action::Ack { ack: 0, wnd: self.window() });
        }
    }

    fn ack_now(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.ack_with_unread(now, 0, out);
    }

    /// An ACK now, advertising the buffer less `unread` bytes the application has not read yet.
    fn ack_with_unread(&mut self, now: SimTime, unread: u64, out: &mut Vec<Action>) {
        self.unacked = 0;
        self.delack_at = None;
        if self.first_data_at.is_some() && self.first_ack_at.is_none() {
            self.first_ack_at = Some(now);
        }
        let wnd = self.window().saturating_sub(unread);
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + wnd);
        out.push(Action::Ack { ack: self.rcv_nxt, wnd });
    }

    /// A data segment `[seq, seq + len)` arrived.
    pub fn on_data(&mut self, now: SimTime, seq: u64, len: u32, out: &mut Vec<Action>) {
        match self.state {
            State::SynRcvd | State::Established => self.state = State::Established,
            _ => return,
        }
        if self.first_data_at.is_none() {
            self.first_data_at = Some(now);
        }
        let end = seq + len as u64;
        if self.cfg.rule == AckRule::Ns2 && self.cfg.delayed_ack {
            return self.ns2_data(now, seq, end, out);
        }
        if end <= self.rcv_nxt {
            // Net/3 tcp_input: a completely duplicate segment is dropped and ACKed at once.
            return self.ack_now(now, out);
        }
        if seq > self.rcv_nxt {
            // Out of order: keep it and send an immediate (duplicate) ACK (RFC 1122 4.2.2.21,
            // RFC 5681 4.2).
            self.insert_ooo(seq, end);
            return self.ack_now(now, out);
        }
        let filled_gap = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        self.advance(now, end);
        let mss = self.cfg.mss;
        if self.cfg.rule == AckRule::FreeBsd && self.cfg.delayed_ack && !filled_gap {
            return self.freebsd_in_order(now, self.rcv_nxt - before, out);
        }
        if filled_gap || !self.cfg.delayed_ack {
            self.ack_now(now, out);
        } else if self.unacked >= 2 * mss || 2 * self.unacked >= self.cfg.receive_buffer {
            // RFC 1122 4.2.3.2: at least every second full-sized segment (Net/3 window update).
            self.ack_now(now, out);
        } else if self.delack_at.is_none() {
            // TF_DELACK: the next fast-timer tick sends the ACK.
            self.delack_at = Some(now.next_tick(self.cfg.delack_tick, self.cfg.delack_phase));
        }
    }

    /// ns-2.35 `DelAckSink::recv` (module comment).
    fn ns2_data(&mut self, now: SimTime, seq: u64, end: u64, out: &mut Vec<Action>) {
        // `th->seqno() == acker_->Seqno()` after `Acker::update`: the packet is (now) the highest
        // in-order one, and (RFC2581_immediate_ack_: `seqno < Maxseen()` ACKs at once) nothing
        // was seen above it. That includes a retransmitted copy of the highest in-order packet,
        // whose ACK is delayed like any other: only older duplicates are ACKed at once.
        let highest = if end <= self.rcv_nxt { end == self.rcv_nxt } else { seq == self.rcv_nxt };
        let delay = self.delack_at.is_none() && highest && self.ooo.is_empty();
        if end <= self.rcv_nxt {
            // A duplicate: Acker::update changes nothing.
        } else if seq > self.rcv_nxt {
            self.insert_ooo(seq, end);
        } else {
            self.advance(now, end);
        }
        if delay {
            // `save_ = pkt; delay_timer_.resched(interval_)`: exactly interval_ from now.
            self.delack_at = Some(now + self.cfg.delack_tick);
        } else {
            // `delay_timer_.cancel(); ack(pkt)`: the cumulative ACK (ack_now clears the timer).
            self.ack_now(now, out);
        }
    }

    /// FreeBSD 4.x, in-order data of `arrived` bytes (module comment).
    fn freebsd_in_order(&mut self, now: SimTime, arrived: u64, out: &mut Vec<Action>) {
        if self.delack_at.is_some() {
            // tcp_input: DELAY_ACK(tp) is false while the callout is pending -> TF_ACKNOW; the
            // segment is in the socket buffer, not yet read.
            self.ack_with_unread(now, arrived, out);
        } else {
            // callout_reset(tp->tt_delack, tcp_delacktime, ...): a delay from now.
            self.delack_at = Some(now + self.cfg.delack_tick);
        }
        // The application reads it (sorwakeup), and the read's tcp_output tests the window
        // update: adv = what the window's right edge could move by.
        let buffer = self.cfg.receive_buffer;
        let adv = (self.rcv_nxt + buffer).saturating_sub(self.rcv_adv);
        if adv >= 2 * self.cfg.mss || 2 * adv >= buffer {
            self.ack_now(now, out);
        }
    }

    /// In-order data up to `end` arrived: rcv_nxt moves past it and any out-of-order data it
    /// joins up with.
    fn advance(&mut self, now: SimTime, end: u64) {
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            self.ooo.remove(0);
        }
        self.unacked += self.rcv_nxt - before;
        if self.rcv_nxt >= self.total && self.completed_at.is_none() {
            self.completed_at = Some(now);
        }
    }

    fn insert_ooo(&mut self, seq: u64, end: u64) {
        let i = self.ooo.partition_point(|&(s, _)| s < seq);
        self.ooo.insert(i, (seq, end));
        // Merge overlapping or touching neighbours.
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.ooo.len());
        for &(s, e) in &self.ooo {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        self.ooo = merged;
    }

    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if matches!(self.delack_at, Some(t) if t <= now) {
            self.ack_now(now, out);
        }
        if matches!(self.syn_rexmt_at, Some(t) if t <= now) {
            if self.rto.on_timeout() {
                self.syn_rexmt_at = Some(self.rto.deadline(now));
                out.push(Action::Syn);
            } else {
                self.syn_rexmt_at = None;
                self.state = State::Dropped;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn receiver(delayed_ack: bool) -> Receiver {
        let cfg = ReceiverConfig {
            delayed_ack,
            rule: AckRule::Net3,
            mss: 1460,
            receive_buffer: 8760,
            delack_tick: 200 * MS,
            delack_phase: 50 * MS,
        };
        let mut r = Receiver::new(cfg, 1_000_000, Rto::bsd(500 * MS, 0));
        r.establish();
        r
    }

    fn acks(out: &[Action]) -> Vec<u64> {
        out.iter()
            .filter_map(|a| match a {
                Action::Ack { ack, .. } => Some(*ack),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn delayed_ack_every_second_full_segment() {
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(10 * MS), 0, 1460, &mut out);
        assert!(acks(&out).is_empty());
        // the fast timer would fire at its next tick (phase 50 ms, period 200 ms)
        assert_eq!(r.next_deadline(), Some(SimTime(50 * MS)));
        r.on_data(SimTime(11 * MS), 1460, 1460, &mut out);
        assert_eq!(acks(&out), vec![2920]);
        assert_eq!(r.next_deadline(), None);
    }

    #[test]
    fn lone_segment_waits_for_the_fast_tick() {
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(60 * MS), 0, 1460, &mut out);
        let t = r.next_deadline().unwrap();
        assert_eq!(t, SimTime(250 * MS));
        r.on_timer(SimTime(249 * MS), &mut out);
        assert!(acks(&out).is_empty());
        r.on_timer(t, &mut out);
        assert_eq!(acks(&out), vec![1460]);
        assert_eq!(r.first_ack_at.unwrap() - r.first_data_at.unwrap(), 190 * MS);
    }

    #[test]
    fn small_header_plus_one_segment_is_not_two_full_segments() {
        // Cohen Sec. VI.A: HTTP header sent alone + one full segment -> the PC delays its ACK.
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(0), 0, 200, &mut out);
        r.on_data(SimTime(MS), 200, 1460, &mut out);
        assert!(acks(&out).is_empty());
        assert!(r.next_deadline().is_some());
    }

    #[test]
    fn out_of_order_and_gap_fill_are_acked_at_once() {
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(0), 1460, 1460, &mut out); // packet 2, packet 1 missing
        assert_eq!(acks(&out), vec![0]);
        r.on_data(SimTime(MS), 4380, 1460, &mut out); // packet 4
        assert_eq!(acks(&out), vec![0, 0]);
        r.on_data(SimTime(2 * MS), 0, 1460, &mut out); // packet 1 fills the first gap
        assert_eq!(acks(&out), vec![0, 0, 2920]);
        r.on_data(SimTime(3 * MS), 2920, 1460, &mut out); // packet 3 fills the second gap
        assert_eq!(acks(&out), vec![0, 0, 2920, 5840]);
    }

    #[test]
    fn duplicate_segment_is_acked_at_once() {
        let mut r = receiver(true);
        let mut out = vec![];
        r.on_data(SimTime(0), 0, 1460, &mut out);
        r.on_data(SimTime(1), 1460, 1460, &mut out);
        r.on_data(SimTime(2), 0, 1460, &mut out);
        assert_eq!(acks(&out), vec![2920, 2920]);
    }

    #[test]
    fn no_delayed_ack_acks_every_segment() {
        let mut r = receiver(false);
        let mut out = vec![];
        for i in 0..3 {
            r.on_data(SimTime(i), i * 1460, 1460, &mut out);
        }
        assert_eq!(acks(&out), vec![1460, 2920, 4380]);
    }

    fn freebsd() -> Receiver {
        let cfg = ReceiverConfig {
            delayed_ack: true,
            rule: AckRule::FreeBsd,
            mss: 1460,
            receive_buffer: 49_640, // 48 KB rounded up to 34 segments
            delack_tick: 100 * MS,
            delack_phase: 0,
        };
        let mut r = Receiver::new(cfg, 1_000_000, Rto::bsd(500 * MS, 0));
        r.establish();
        r
    }

    #[test]
    fn freebsd_acks_after_two_then_one_segment() {
        // Nguyen & Armitage Sec. III.B: one ACK per alternation of one and two data packets.
        // Segments 1 ms apart. Segment 1 arms the callout; segment 2 finds it pending and is ACKed
        // at once, advertising 49 640 - 1460 (unread); its read opens the right edge by only one
        // segment. Segment 3 arms the callout, and its read opens the edge by two: a window update.
        let mut r = freebsd();
        let mut out = vec![];
        for i in 0..9u64 {
            r.on_data(SimTime(i * MS), i * 1460, 1460, &mut out);
        }
        let got: Vec<(u64, u64)> = out
            .iter()
            .map(|a| match a {
                Action::Ack { ack, wnd } => (*ack / 1460, *wnd),
                _ => panic!("only ACKs"),
            })
            .collect();
        assert_eq!(got, vec![(2, 48_180), (3, 49_640), (5, 48_180), (6, 49_640), (8, 48_180), (9, 49_640)]);
        // Segment 10 arms the callout again: 100 ms after it, not on a global tick.
        r.on_data(SimTime(9 * MS), 9 * 1460, 1460, &mut out);
        assert_eq!(r.next_deadline(), Some(SimTime(109 * MS)));
    }

    #[test]
    fn freebsd_lone_segment_waits_for_its_callout() {
        let mut r = freebsd();
        let mut out = vec![];
        r.on_data(SimTime(7 * MS), 0, 1460, &mut out);
        assert!(out.is_empty());
        r.on_timer(SimTime(107 * MS), &mut out);
        assert_eq!(acks(&out), vec![1460]);
    }
}
