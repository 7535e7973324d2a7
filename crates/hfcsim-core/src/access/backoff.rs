//! DOCSIS contention: truncated binary exponential backoff.
//!
//! DOCSIS RFI (SP-RFIv1.1, Sec. 8.3.1.1 "Contention Resolution Overview"; the same rule in later
//! versions): a modem with a request to send draws a number in [0, 2^w) with the backoff window
//! w starting at the MAP's Data Backoff Start, and defers that many request opportunities before
//! sending. If a later MAP whose acknowledgement time has passed the request carries neither a
//! grant nor a pending grant for it, the request is lost: w doubles (w + 1), up to Data Backoff
//! End, and the modem defers again. After 16 tries the packet is discarded.

use crate::rng::Stream;

/// One modem's backoff state for the request it is trying to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Current window exponent w.
    pub window: u32,
    /// Request opportunities still to skip.
    pub defer: u64,
    /// Transmissions so far.
    pub tries: u32,
}

impl Backoff {
    /// A new request: window = Data Backoff Start.
    pub fn start(start: u32, rng: &mut Stream) -> Backoff {
        Backoff { window: start, defer: rng.below(1 << start), tries: 0 }
    }

    /// This MAP offers `opportunities` request slots: the offset of the one to send in, if any.
    pub fn opportunity(&mut self, opportunities: u32) -> Option<u32> {
        if self.defer < opportunities as u64 {
            let slot = self.defer as u32;
            self.tries += 1;
            Some(slot)
        } else {
            self.defer -= opportunities as u64;
            None
        }
    }

    /// The request was lost: widen the window (up to `end`) and defer again; false once
    /// `max_tries` transmissions have failed (the request is given up).
    pub fn collided(&mut self, end: u32, max_tries: u32, rng: &mut Stream) -> bool {
        if self.tries >= max_tries {
            return false;
        }
        self.window = (self.window + 1).min(end.max(self.window));
        self.defer = rng.below(1 << self.window);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_doubles_up_to_end_and_gives_up_after_max_tries() {
        let mut rng = Stream::new(1, 1);
        let mut b = Backoff::start(2, &mut rng);
        assert!(b.defer < 4);
        let mut windows = vec![];
        loop {
            // spend the deferral in one large MAP, then transmit
            assert!(b.opportunity(u32::MAX).is_some());
            if !b.collided(4, 5, &mut rng) {
                break;
            }
            assert!(b.defer < 1 << b.window);
            windows.push(b.window);
        }
        assert_eq!(windows, vec![3, 4, 4, 4]);
        assert_eq!(b.tries, 5);
    }

    #[test]
    fn deferral_counts_opportunities_across_maps() {
        let mut b = Backoff { window: 3, defer: 5, tries: 0 };
        assert_eq!(b.opportunity(2), None); // skips 2
        assert_eq!(b.opportunity(2), None); // skips 2 more
        assert_eq!(b.opportunity(2), Some(1)); // the sixth opportunity: offset 1 here
        assert_eq!(b.tries, 1);
    }
}
