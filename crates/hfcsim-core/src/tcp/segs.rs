//! The sender's record of each segment it has sent and not yet seen cumulatively acknowledged:
//! what the SACK scoreboard (RFC 6675, `sack.rs`), RACK-TLP (RFC 8985, `rack.rs`) and PRR
//! (RFC 6937, `prr.rs`) read and mark. Linux keeps the same facts per skb in its retransmit
//! queue (`TCPCB_SACKED_ACKED`, `TCPCB_LOST`, `TCPCB_SACKED_RETRANS`, `skb_mstamp`).
//!
//! Sequence numbers are data-stream byte offsets in u64 (as everywhere in the engine): they never
//! wrap inside a run, so plain comparison is exact.

use crate::time::SimTime;

/// One segment `[start, end)` in flight or awaiting retransmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub start: u64,
    pub end: u64,
    /// When it was last (re)transmitted (RFC 8985 `Segment.xmit_ts`).
    pub sent_at: SimTime,
    /// Retransmitted at least once (RFC 8985 `Segment.retransmitted`; Karn).
    pub retransmitted: bool,
    /// Covered by a SACK block (RFC 6675 "SACKed").
    pub sacked: bool,
    /// Deemed lost (RFC 6675 `IsLost`, RFC 8985 `RACK_detect_loss`), and not retransmitted since.
    pub lost: bool,
}

impl Seg {
    pub fn new(start: u64, end: u64, sent_at: SimTime) -> Seg {
        Seg { start, end, sent_at, retransmitted: false, sacked: false, lost: false }
    }

    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}
