//! Active queue management: pure state machines that a queue consults, with no packets, links or
//! events of their own. The caller tells them the time, the queue's delay or the head's sojourn
//! time, and the bytes queued; they answer drop or keep.
//!
//! - `pie.rs`: PIE, RFC 8033 (Pan, Natarajan, Baker, White, 2017), a random drop at enqueue with
//!   a probability updated every T_UPDATE from the queue delay; and DOCSIS-PIE, RFC 8034 (White &
//!   Pan, 2017; DOCSIS 3.1 MULPI Annex M), the cable modem's variant: its own constants, the
//!   delay estimated from the configured rate, drops scaled by packet size, de-randomized, and a
//!   burst protection that starts at the first drop. One `Pie`, two `PieConfig`s.
//! - `codel.rs`: CoDel, RFC 8289 (Nichols, Jacobson, McGregor, Iyengar, 2018), a drop at dequeue
//!   once the head's sojourn time has stayed above TARGET for INTERVAL, then at INTERVAL/sqrt(count).
//! - `dualq.rs`: Low Latency DOCSIS's dual-queue coupled AQM (RFC 9332 as DOCSIS 3.1 MULPI Annex
//!   N-P specify it): classifier, immediate AQM ramp, DOCSIS-PIE's p' coupled as k * p' and p'^2,
//!   the weighted scheduler and queue protection. It takes each packet's ECN codepoint as input.
//!
//! ECN: PIE marks an ECN-capable packet it would drop while drop_prob <= 10% (RFC 8033 Sec. 5.1);
//! DOCSIS-PIE drops (RFC 8034 has no marking rule: chosen, pie.rs); CoDel marks instead of
//! dropping (RFC 8289 Sec. 5; codel.rs). Left out: anything that measures the departure rate
//! (PIE's RFC 8033 Sec. 5.2 estimator): the caller supplies the delay.

pub mod codel;
pub mod pie;

pub use codel::{Codel, CodelConfig};

/// An AQM's decision on a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Keep,
    /// Keep it, marked CE (RFC 3168 Sec. 5): only an ECN-capable packet.
    Mark,
    Drop,
}
pub use pie::{Pie, PieConfig, PieVariant};
pub mod dualq;
pub use dualq::{DualQ, DualQConfig};
