//! Early packet discard (Romanow & Floyd, "Dynamics of TCP Traffic over ATM Networks", IEEE JSAC
//! 13(4), 1995), at the switches SW1 and SW2 of Elloumi et al. (Sec. 4, Fig. 2).
//!
//! The rule: when the first cell of a new packet arrives at a switch output queue holding more
//! cells than a threshold, the switch discards that cell and every later cell of the packet, so
//! the whole packet is lost before any of its cells uses the link; otherwise all of the packet's
//! cells are queued. Below the threshold the buffer keeps room for packets already accepted,
//! which is why EPD loses whole packets instead of the corrupted fragments a cell drop-tail
//! buffer sends on (atm.rs, "Cell losses").
//!
//! Counting, and the choices the sources leave open:
//! - "more cells than the threshold": a packet arriving when exactly `threshold_cells` are held
//!   is accepted;
//! - the cells held are those not yet sent in full: all cells of the packets waiting and the
//!   unsent cells of the packet in service, the cell being transmitted included when the queue
//!   counts the unit in service (`Queue::counts_in_service`, true for the switches: a cell
//!   occupies its buffer slot until its last bit has left, as a packet does in the CM buffer of
//!   Cohen & Ramanathan Sec. V.B); the arriving packet's own cells are not counted;
//! - the decision is taken when the packet arrives whole (atm.rs, "The model of a switch");
//! - with a hard limit (`QueueLimit::Cells`) a packet EPD accepts still takes only the cells
//!   that fit (partial packet discard); without one, Elloumi's footnote 6 ("the switch buffer is
//!   large enough to ensure that if the first cell of a packet is accepted ... all remaining
//!   cells from the same packet are queued"), a packet is accepted whole or discarded whole.

/// Early packet discard with a threshold in cells (module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Epd {
    pub threshold_cells: u64,
}

impl Epd {
    /// Whether a packet whose first cell arrives while `held_cells` are at the queue is
    /// accepted: Romanow & Floyd's EPD refuses it when the queue holds more than the threshold.
    #[inline]
    pub fn accepts(self, held_cells: u64) -> bool {
        held_cells <= self.threshold_cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_only_above_the_threshold() {
        let e = Epd { threshold_cells: 40 };
        for (held, want) in [(0, true), (22, true), (40, true), (41, false), (44, false)] {
            assert_eq!(e.accepts(held), want, "{held} cells held");
        }
        assert!(Epd { threshold_cells: 0 }.accepts(0), "an empty queue always takes a packet");
    }
}
