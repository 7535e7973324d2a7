//! The sender's record of each segment it has sent and not yet seen cumulatively acknowledged:
//! what the SACK scoreboard (RFC 6675, `sack.rs`), RACK-TLP (RFC 8985, `rack.rs`) and PRR
//! (RFC 6937, `prr.rs`) read and mark. Linux keeps the same facts per skb in its retransmit
//! queue (`TCPCB_SACKED_ACKED`, `TCPCB_LOST`, `TCPCB_SACKED_RETRANS`, `skb_mstamp`).
//!
//! Sequence numbers are data-stream byte offsets in u64 (as everywhere in the engine): they never
//! wrap inside a run, so plain comparison is exact.

use crate::time::SimTime;

/// One segment `[start, end)` in flight or awaiting retransmission. The flags are Linux's
/// `TCPCB_*` bits; what is in flight follows from them (Linux `tcp_packets_in_flight`,
/// RFC 6675 `SetPipe`): an unSACKed segment counts once unless it is deemed lost, and once more
/// while a retransmission of it is in flight (`Seg::in_flight`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub start: u64,
    pub end: u64,
    /// When it was last (re)transmitted (RFC 8985 `Segment.xmit_ts`).
    pub sent_at: SimTime,
    /// Retransmitted at least once (RFC 8985 `Segment.retransmitted`; Karn's rule).
    pub retransmitted: bool,
    /// Covered by a SACK block (RFC 6675 "SACKed"; `TCPCB_SACKED_ACKED`).
    pub sacked: bool,
    /// Deemed lost (RFC 6675 `IsLost`, RFC 8985 `RACK_detect_loss`; `TCPCB_LOST`). It stays set
    /// when the segment is retransmitted.
    pub lost: bool,
    /// Its latest retransmission is in flight (`TCPCB_SACKED_RETRANS`): set when retransmitted,
    /// cleared when the segment is SACKed or acknowledged, or the retransmission is itself deemed
    /// lost (then `lost` is set again).
    pub retrans_in_flight: bool,
}

impl Seg {
    pub fn new(start: u64, end: u64, sent_at: SimTime) -> Seg {
        Seg { start, end, sent_at, retransmitted: false, sacked: false, lost: false, retrans_in_flight: false }
    }

    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Bytes this segment puts in the pipe: its length once unless SACKed or lost, once more for a
    /// retransmission in flight (RFC 6675 SetPipe rules (a) and (b); Linux `packets_out -
    /// (sacked_out + lost_out) + retrans_out`).
    pub fn in_flight(&self) -> u64 {
        if self.sacked {
            return 0;
        }
        self.len() * (u64::from(!self.lost) + u64::from(self.retrans_in_flight))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_counts_follow_the_flags() {
        let mut s = Seg::new(0, 1000, SimTime(0));
        assert_eq!(s.in_flight(), 1000); // sent, not yet deemed lost
        s.lost = true;
        assert_eq!(s.in_flight(), 0); // lost: left the network
        s.retrans_in_flight = true;
        s.retransmitted = true;
        assert_eq!(s.in_flight(), 1000); // its retransmission is in flight
        s.lost = false;
        assert_eq!(s.in_flight(), 2000); // retransmitted before deemed lost (rescue, RTO): both count
        s.sacked = true;
        assert_eq!(s.in_flight(), 0);
    }
}
