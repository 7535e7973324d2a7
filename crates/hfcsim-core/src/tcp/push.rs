//! Which data segments a Linux sender marks with PSH (net/ipv4/tcp.c `tcp_sendmsg_locked`,
//! `forced_push`, `tcp_mark_push`, `tcp_push`; net/core/stream.c `sk_stream_write_space`), for the
//! receiver's `receiver.ack_on_push`.
//!
//! The bulk application writes the transfer into the send buffer as fast as the buffer takes it.
//! `tcp_sendmsg_locked` copies it into segments of the MSS (the size goal, with no TSO) and marks:
//! - **forced pushes:** each time a segment is full it tests `forced_push(tp)`, `write_seq` past
//!   `pushed_seq + (max_window >> 1)`, max_window being the largest window the peer has offered.
//!   If so, `tcp_mark_push` sets PSH on that segment and `pushed_seq = write_seq`: a segment every
//!   half window (in a 5 x 1460 B window, every third);
//! - **the writer's sleep:** a new segment needs free send-buffer memory (`sk_stream_memory_free`);
//!   when there is none the writer pushes what it wrote (`tcp_push` at `wait_for_space`), marking its
//!   last segment, and sleeps. `sk_stream_write_space` wakes it when the free space is at least half
//!   the space queued (`sk_stream_wspace >= sk_stream_min_wspace`): when the ACKs have taken the
//!   queue down to two thirds of the buffer. It then writes until the buffer is full again;
//! - **the end of the write:** the transfer's last segment (`tcp_push` when `sendmsg` returns).
//!
//! Chosen where the model has no equivalent:
//! - the buffer counts payload bytes (`tcp.send_buffer_bytes`, as the simulated sender's limit on
//!   bytes outstanding does); Linux counts each segment's memory (`truesize`, about 1.5 times a
//!   1460 B payload) against twice the SO_SNDBUF asked for. The wake-ups come every third of the
//!   buffer either way;
//! - the writer wakes at the ACK that frees the space, with no scheduling delay, and writes the
//!   transfer as one `sendmsg` (a real application's calls each end with a push of their own);
//! - a retransmission resends the segment with its flag (Linux keeps the skb): the ends of the marked
//!   segments are kept until acknowledged.

use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct PushMarks {
    /// Bytes the application writes, the segment size, the send buffer.
    total: u64,
    mss: u64,
    buffer: u64,
    /// `tp->write_seq`: the bytes written so far.
    write_seq: u64,
    /// `tp->pushed_seq`: the sequence number written when PSH was last marked.
    pushed_seq: u64,
    /// `tp->max_window`: the largest window the peer offered.
    max_window: u64,
    /// Ends of the marked segments not yet acknowledged, ascending.
    marked: VecDeque<u64>,
    /// Ends of the application's writes not yet copied into segments (`extend`), ascending; the
    /// last is `total`.
    writes: VecDeque<u64>,
}

impl PushMarks {
    pub fn new(total: u64, mss: u64, buffer: u64) -> PushMarks {
        let writes = if total > 0 { VecDeque::from([total]) } else { VecDeque::new() };
        PushMarks { total, mss, buffer, write_seq: 0, pushed_seq: 0, max_window: 0, marked: VecDeque::new(), writes }
    }

    /// The application writes `bytes` more (a persistent connection's next request or response,
    /// `apps`): a `sendmsg` of its own, whose last segment `tcp_push` marks. Chosen: a write starts a
    /// segment of its own (Linux appends to an unsent tail segment with room; the sender here cuts
    /// its segments where the data written ends, so the two agree when the sender has caught up).
    pub fn extend(&mut self, bytes: u64) {
        if bytes > 0 {
            self.total += bytes;
            self.writes.push_back(self.total);
        }
    }

    /// The send buffer now (Linux's grows without SO_SNDBUF, `tcp.sndbuf_autotuning`).
    pub fn set_buffer(&mut self, buffer: u64) {
        self.buffer = buffer;
    }

    fn push(&mut self, end: u64) {
        self.pushed_seq = end;
        self.marked.push_back(end);
    }

    /// The peer acknowledged up to `snd_una` and offers `snd_wnd`: the writer writes if the buffer
    /// lets it (module comment). The first call writes the first buffer's worth.
    pub fn on_ack(&mut self, snd_una: u64, snd_wnd: u64) {
        self.max_window = self.max_window.max(snd_wnd);
        while self.marked.front().is_some_and(|&end| end <= snd_una) {
            self.marked.pop_front();
        }
        let queued = self.write_seq - snd_una.min(self.write_seq);
        // sk_stream_write_space: free (buffer - queued) >= queued / 2; at the start nothing is queued.
        if self.write_seq >= self.total || 2 * (self.buffer.saturating_sub(queued)) < queued {
            return;
        }
        // A new segment while the memory is not all taken (sk_stream_memory_free).
        while self.write_seq < self.total && self.write_seq - snd_una.min(self.write_seq) < self.buffer {
            let write_end = self.writes.front().copied().unwrap_or(self.total);
            let end = (self.write_seq + self.mss).min(write_end);
            self.write_seq = end;
            if end == write_end {
                self.writes.pop_front();
                self.push(end); // tcp_push at the end of the write
            } else if end > self.pushed_seq + self.max_window / 2 {
                self.push(end); // forced_push, tested once the segment is full
            }
        }
        if self.write_seq < self.total && self.marked.back() != Some(&self.write_seq) {
            self.push(self.write_seq); // wait_for_space: tcp_push before sleeping
        }
    }

    /// Whether the application has written up to `end` (else `on_ack` must run first: the first
    /// segments of the transfer, before any ACK).
    #[inline]
    pub fn written(&self, end: u64) -> bool {
        end <= self.write_seq
    }

    /// Whether the segment `[seq, seq + len)` carries PSH.
    pub fn marked(&self, seq: u64, len: u32) -> bool {
        self.marked.binary_search(&(seq + len as u64)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1460;

    fn marked_segments(p: &PushMarks, upto: u64) -> Vec<u64> {
        (0..upto).filter(|&i| p.marked(i * MSS, MSS as u32)).map(|i| i + 1).collect()
    }

    #[test]
    fn the_writer_marks_every_half_window_and_where_it_sleeps() {
        // A 7300 B window (half 3650 B) and a buffer of 12 segments (17,520 B). The first write fills
        // the buffer: segment ends 4380 (> 0 + 3650), 8760 (> 4380 + 3650), 13140, 17520 pass it:
        // segments 3, 6, 9, 12, and 12 is also where the writer sleeps.
        let mut p = PushMarks::new(100 * MSS, MSS, 12 * MSS);
        p.on_ack(0, 7300);
        assert_eq!(marked_segments(&p, 20), vec![3, 6, 9, 12]);
        // 3 segments acknowledged: 9 queued, free 3 < 4.5: the writer sleeps on.
        p.on_ack(3 * MSS, 7300);
        assert_eq!(marked_segments(&p, 20), vec![6, 9, 12]);
        // 4 acknowledged: 8 queued, free 4 >= 4: it wakes and writes segments 13-16, marking 15
        // (21,900 > 17,520 + 3650) and 16, where it sleeps again.
        p.on_ack(4 * MSS, 7300);
        assert_eq!(marked_segments(&p, 20), vec![6, 9, 12, 15, 16]);
        // A retransmission of segment 9 carries its PSH again (the same skb).
        assert!(p.marked(8 * MSS, MSS as u32) && !p.marked(7 * MSS, MSS as u32));
    }

    #[test]
    fn the_last_segment_ends_the_write() {
        // 5 segments and 500 B with a large buffer: segment 3 (4380 > 3650) and the short last one.
        let total = 5 * MSS + 500;
        let mut p = PushMarks::new(total, MSS, 64 * MSS);
        p.on_ack(0, 7300);
        assert_eq!(marked_segments(&p, 5), vec![3]);
        assert!(p.marked(5 * MSS, 500));
    }

    #[test]
    fn the_half_window_follows_the_largest_window_offered() {
        // 2920 B offered (half 1460): every second segment; then 14,600 B (half 7300): every fifth.
        let mut p = PushMarks::new(100 * MSS, MSS, 4 * MSS);
        p.on_ack(0, 2920);
        assert_eq!(marked_segments(&p, 4), vec![2, 4]);
        p.on_ack(4 * MSS, 14_600); // all 4 acknowledged: writes 5-8; 9,520 > 5840 + 7300? no
        assert_eq!(marked_segments(&p, 8), vec![8]); // only where it sleeps
    }
}
