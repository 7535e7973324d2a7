//! TCP: sender (Tahoe, Reno, NewReno), receiver (delayed ACK), retransmission timers.

pub mod receiver;
pub mod rto;
pub mod sender;

#[cfg(test)]
mod newreno_tests;

/// The congestion state recorded with every trace row (bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcState {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub flight: u64,
    pub snd_una: u64,
}

/// Net/3 `tcp_mss`: a socket buffer smaller than the MSS lowers the MSS to it; a larger one is
/// rounded up to a whole number of segments (Stevens vol. 2, 27.5). Returns (mss, buffer).
pub fn round_buffer(mss: u64, buffer: u64) -> (u64, u64) {
    if buffer < mss {
        (buffer, buffer)
    } else {
        (mss, buffer.div_ceil(mss) * mss)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn socket_buffers_round_up_to_whole_segments() {
        assert_eq!(super::round_buffer(1460, 8192), (1460, 8760));
        assert_eq!(super::round_buffer(1460, 16384), (1460, 17520));
        assert_eq!(super::round_buffer(536, 8192), (536, 8576));
        assert_eq!(super::round_buffer(1460, 1000), (1000, 1000));
    }
}
