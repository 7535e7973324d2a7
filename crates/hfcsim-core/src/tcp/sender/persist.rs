//! The persist timer: how a sender with data to send, nothing in flight and a window too small for
//! its next segment learns that the window has opened. Window updates are not reliable (an ACK
//! that opens the window can be lost, RFC 9293 3.8.6.1), so the sender polls (RFC 1122 4.2.2.17);
//! and a window smaller than a segment is used only when this timer overrides the sender's
//! silly-window avoidance (RFC 1122 4.2.3.4: "the override timeout").
//!
//! Net/3 (Stevens vol. 2, 25.5 and 26.3; tcp_output.c, tcp_timer.c), for the bsd, rfc6298 and ns2
//! timers:
//! - `tcp_output` sends nothing, has data in the buffer (sent or not), and neither the retransmission
//!   nor the persist timer runs: `t_rxtshift = 0` and `tcp_setpersist` (`Rto::persist_deadline`, 5
//!   to 60 s), which then counts `t_rxtshift` up. (A timeout whose retransmission the window cannot
//!   take, the window smaller than a segment, leaves such a sender: the persist timer sends it.)
//! - on expiry (`TCPT_PERSIST`): `tcp_setpersist` again, and `tcp_output` with `t_force`: a zero
//!   window takes one byte (here a window probe of none, Linux's form: chosen, so that segments
//!   keep the boundaries the receiver acknowledges; the receiver's answer is the same, an ACK at
//!   once with its window, tcp_input's TF_ACKNOW for a segment at a closed window's edge); a
//!   window of some bytes ends the persist state (`t_rxtshift = 0`) and sends what it can, a
//!   piece of a segment if it is smaller than one;
//! - any data sent starts the retransmission timer and stops the persist timer. 4.4BSD never gives
//!   up while persisting.
//!
//! Linux (net/ipv4/tcp_output.c `tcp_send_probe0`, `tcp_write_wakeup`; tcp_timer.c
//! `tcp_probe_timer`; tcp_input.c `tcp_ack_probe`; include/net/tcp.h `tcp_check_probe_timer`,
//! `tcp_probe0_when`), for the linux timer:
//! - after a send attempt, nothing in flight (`packets_out` 0) and data left: the probe timer at
//!   `tcp_probe0_base` (max(RTO, 200 ms)) unless another timer is pending;
//! - an ACK arriving with nothing in flight (`tcp_ack_probe`): if the head segment now fits the
//!   window the timer stops and the back-off clears (the send follows), else the timer restarts
//!   from now at `tcp_probe0_when` (the base shifted by the back-off, at most 120 s); every
//!   accepted ACK clears `icsk_probes_out`;
//! - on expiry (`tcp_probe_timer`): with something in flight or nothing to send, nothing; after
//!   `tcp_retries2` (15) probes without an ACK the connection is dropped (`tcp_write_err`);
//!   otherwise `tcp_write_wakeup`: a window of some bytes takes a segment of min(window, MSS),
//!   sent at once outside cwnd and pacing (`tcp_fragment` of the head), which ends the probing
//!   (the RTO takes over); a zero window takes a probe of no data at snd_una - 1
//!   (`tcp_xmit_probe_skb`), then one probe more out, the back-off up by one, the timer re-armed.
//!   Linux keeps the back-off in `icsk_backoff`, shared with the RTO, which an RTT sample clears;
//!   here it is the timer's own, cleared as Linux clears it when probing ends.

use super::{Action, Out, Sender, State};
use crate::tcp::rto::{Rto, LINUX_RETRIES2, MAX_RXT_SHIFT};
use crate::time::SimTime;

/// The persist timer's state.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Persist {
    /// When it expires; None while off.
    pub at: Option<SimTime>,
    /// Net/3: `t_rxtshift` while persisting (`tcp_setpersist`'s back-off index); Linux:
    /// `icsk_backoff` of the probes.
    pub shift: u32,
    /// Linux `icsk_probes_out`: probes sent with no ACK since.
    pub probes_out: u32,
}

impl Sender {
    fn linux_probes(&self) -> bool {
        matches!(self.rto, Rto::Linux(_))
    }

    /// Data left to send and no other timer that will send it (the retransmission timer, or today's
    /// pacing timer); Linux also needs nothing in flight (`packets_out` 0), Net/3 only data in the
    /// buffer (`so_snd.sb_cc`) and no retransmission timer.
    fn idle_with_data(&self) -> bool {
        self.state == State::Established
            && (self.snd_max == self.snd_una || !self.linux_probes())
            && self.snd_una < self.total
            && self.rexmt_at.is_none()
            && self.today.as_ref().and_then(|t| t.next_deadline()).is_none()
    }

    /// After a send attempt: the retransmission timer stops the persist timer (Net/3: it replaces it,
    /// `t_rxtshift = 0`; Linux: `tcp_rearm_rto` replaces the probe timer when data is in flight); idle
    /// with data and no timer starts it (Net/3 `tcp_output`; Linux `tcp_check_probe_timer`).
    pub(super) fn check_persist(&mut self, now: SimTime) {
        if self.rexmt_at.is_some() || (self.linux_probes() && self.snd_max > self.snd_una) {
            self.persist = Persist::default();
            return;
        }
        if self.persist.at.is_none() && self.idle_with_data() {
            self.persist.shift = 0;
            if let Rto::Bsd(b) = &mut self.rto {
                b.rxtshift = 0; // "tp->t_rxtshift = 0; tcp_setpersist(tp);" (t_rxtshift is shared)
            }
            self.set_persist(now);
        }
    }

    /// Net/3 `tcp_setpersist` (its `t_rxtshift++` up to TCP_MAXRXTSHIFT); Linux arms at the current
    /// back-off.
    fn set_persist(&mut self, now: SimTime) {
        self.persist.at = Some(self.rto.persist_deadline(now, self.persist.shift));
        if !self.linux_probes() && self.persist.shift < MAX_RXT_SHIFT {
            self.persist.shift += 1;
        }
    }

    /// An ACK has been processed; `prior_in_flight`: data was in flight before it.
    pub(super) fn persist_on_ack(&mut self, now: SimTime, prior_in_flight: bool) {
        if self.linux_probes() {
            self.persist.probes_out = 0; // tcp_ack: "icsk->icsk_probes_out = 0"
            if !prior_in_flight && self.persist.at.is_some() && self.idle_with_data() {
                // tcp_ack_probe: the head does not fit (it would have gone): restart from now.
                self.persist.at = Some(self.rto.persist_deadline(now, self.persist.shift));
            }
        }
        self.check_persist(now);
    }

    /// Whether the persist timer is due.
    pub(super) fn persist_due(&self, now: SimTime) -> bool {
        self.persist.at.is_some_and(|t| t <= now)
    }

    /// The persist timer expired (module comment).
    pub(super) fn on_persist_timer(&mut self, now: SimTime, out: &mut Vec<Out>) {
        self.persist.at = None;
        if !self.idle_with_data() {
            self.persist.probes_out = 0;
            return;
        }
        let linux = self.linux_probes();
        if linux && self.persist.probes_out >= LINUX_RETRIES2 {
            self.state = State::Dropped; // tcp_write_err
            return;
        }
        self.stats.persist_timeouts += 1;
        if !linux {
            self.set_persist(now); // TCPT_PERSIST: tcp_setpersist, then tcp_output with t_force
        }
        let usable = self.snd_wnd.min(self.cfg.send_buffer);
        if usable == 0 {
            let seq = self.snd_una.saturating_sub(1);
            self.emit(out, Action::WindowProbe { seq });
        } else if self.today.is_some() {
            let seq = self.snd_max;
            let len = (self.segment_at(seq).0 as u64).min(usable);
            self.send_new_today(now, seq, len, out);
        } else {
            self.output_net3(now, true, out);
        }
        if self.rexmt_at.is_some() {
            // Data went: the retransmission timer runs, probing ends.
            self.persist = Persist::default();
            return;
        }
        if linux {
            self.persist.probes_out += 1;
            if self.persist.shift < LINUX_RETRIES2 {
                self.persist.shift += 1;
            }
            self.set_persist(now);
        }
    }
}
