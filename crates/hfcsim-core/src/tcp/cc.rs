//! Congestion control as a hook the recovery variants share (STYLE.md item 4; smoltcp's
//! `congestion.rs`, ns-3's `TcpCongestionOps::GetSsThresh`): each hook returns the new value
//! (a cwnd or an ssthresh, bytes) instead of poking the sender's state.
//!
//! The sender owns cwnd, ssthresh and loss recovery (Net/3's fast recovery, NewReno, RFC 6675 with
//! PRR); a controller only says how the window grows on an ACK and how far it falls on a loss.

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
}
