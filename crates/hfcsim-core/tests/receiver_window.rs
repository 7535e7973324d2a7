//! The receiver never advertises more than its buffer (issue 25, "Fix the window rounding").
//!
//! What "its buffer" is depends on the stack. Net/3 (`tcp.buffer_rounding = "up"`) rounds the
//! socket buffer itself up to whole segments: `tcp_mss` calls `sbreserve` with the rounded size
//! (Stevens vol. 2, 27.5), so a Net/3 receiver rightly offers up to that rounded buffer, more than the
//! size the application asked for. The property for every stack is therefore "never more than the
//! buffer as `tcp::round_buffer` gives it for the rounding in force". Linux (`"down"`:
//! net/ipv4/tcp_output.c `tcp_select_initial_window` rounds the offered space down to a multiple of
//! the MSS) and ns-2 (`window_` in whole packets) never offer more than the configured buffer itself.
//!
//! Under `receiver.linux_window` (the linux stack) the buffer is SO_RCVBUF and Linux's own bound holds
//! instead: no window beyond `tcp_win_from_space(sk_rcvbuf)` (sk_rcvbuf = 2 x SO_RCVBUF, at least
//! SOCK_MIN_RCVBUF) at the larger of the default ratio (128/256) and the one a segment of at most the
//! MSS measures (its payload x 256 / truesize), at least the clamp's floor (SOCK_MIN_RCVBUF / 2),
//! aligned to the window scale's unit: the window clamp's most, which `__tcp_select_window` never
//! passes and `tcp_select_window` only keeps (never shrinking what it offered).

use hfcsim_core::scenario::BufferRounding;
use hfcsim_core::tcp::linux_window::LinuxWindow;
use hfcsim_core::tcp::receiver::{AckRule, Action, Receiver, ReceiverConfig, ReceiverRules};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::{round_buffer, MAX_SCALED_WINDOW};
use hfcsim_core::time::SimTime;
use proptest::prelude::*;

const MS: u64 = 1_000_000;

/// Whether the segment at `seq` carries PSH (any pattern serves: every third).
fn n_push(seq: u64) -> bool {
    seq.is_multiple_of(3)
}

/// What reaches the receiver next (the sender's segments, as the network delivers them).
#[derive(Clone, Copy, Debug)]
enum Arrival {
    /// The next new segment, of this many bytes (at most the MSS).
    New(u64),
    /// The next new segment is lost: later ones arrive out of order above the hole.
    Lost(u64),
    /// A retransmission from the receiver's in-order point (fills a hole, or duplicates data).
    Retransmit(u64),
    /// A copy of data the receiver already has.
    Duplicate(u64),
}

fn arb_arrival() -> impl Strategy<Value = Arrival> {
    prop_oneof![
        6 => (1u64..=u64::MAX).prop_map(Arrival::New),
        1 => (1u64..=u64::MAX).prop_map(Arrival::Lost),
        1 => (1u64..=u64::MAX).prop_map(Arrival::Retransmit),
        1 => (1u64..=u64::MAX).prop_map(Arrival::Duplicate),
    ]
}

fn arb_rule() -> impl Strategy<Value = AckRule> {
    prop::sample::select(vec![AckRule::Net3, AckRule::Freebsd, AckRule::Ns2, AckRule::Linux])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn no_ack_advertises_more_than_the_buffer(
        mss0 in 1u64..=9000,
        buffer in 1u64..=300_000,
        down in any::<bool>(),
        rule in arb_rule(),
        delayed_ack in any::<bool>(),
        sack_blocks in prop::sample::select(vec![0u8, 3, 4]),
        scaling in any::<bool>(),
        handshake in any::<bool>(),
        ack_on_read in any::<bool>(),
        ack_on_push in any::<bool>(),
        linux_window in any::<bool>(),
        truesize in 1u64..=20_000,
        timestamps in any::<bool>(),
        delack_ms in 1u64..=200,
        phase_ms in 0u64..200,
        arrivals in prop::collection::vec((0u64..=100 * MS, arb_arrival()), 1..200),
    ) {
        let rounding = if down { BufferRounding::Down } else { BufferRounding::Up };
        // As the engine builds its receiver (sim.rs): the MSS no larger than the buffer, the
        // buffer rounded to whole segments.
        let mss = mss0.min(buffer);
        let (_, rounded) = round_buffer(mss, buffer, rounding);
        // The linux window goes with Linux's ACK code only (schema: requires ack_rule = "linux"), and
        // takes the buffer as given (sim.rs).
        let linux_window = linux_window && rule == AckRule::Linux;
        let rules = ReceiverRules {
            delayed_ack,
            ack_rule: rule,
            ack_on_read,
            ack_on_push,
            linux_window,
            skb_truesize_bytes: truesize as u32,
            ..hfcsim_core::Scenario::cohen_default().receiver
        };
        let cfg = ReceiverConfig {
            rules,
            mss,
            receive_buffer: if linux_window { buffer } else { rounded },
            delack_tick: delack_ms * MS,
            delack_phase: phase_ms * MS % (delack_ms * MS),
            sack_blocks,
            max_window: if scaling { MAX_SCALED_WINDOW } else { 65_535 },
        };
        let max_window = cfg.max_window;
        let advmss = mss + if timestamps { 12 } else { 0 };
        let mut r = Receiver::new(cfg, u64::MAX / 2, Rto::linux(200 * MS, 1000 * MS)).with_advmss(advmss);
        let linux_bound = r.linux_window().map(|w| LinuxWindow::bound(buffer, mss, truesize, w.wscale));
        let mut out = Vec::new();
        if handshake {
            r.on_syn(&mut out);
        } else {
            r.establish();
        }
        let syn_window = r.window();
        let mut now = SimTime::ZERO;
        let mut sent = 0u64; // the sender's next new byte
        for (gap, arrival) in arrivals {
            now = now + gap;
            while let Some(t) = r.next_deadline().filter(|&t| t <= now) {
                r.on_timer(t, &mut out);
            }
            let (seq, len) = match arrival {
                Arrival::New(n) | Arrival::Lost(n) => {
                    let len = 1 + n % mss;
                    sent += len;
                    if matches!(arrival, Arrival::Lost(_)) {
                        continue;
                    }
                    (sent - len, len)
                }
                Arrival::Retransmit(n) if r.rcv_nxt < sent => (r.rcv_nxt, 1 + n % mss.min(sent - r.rcv_nxt)),
                Arrival::Duplicate(n) if r.rcv_nxt > 0 => {
                    let seq = n % r.rcv_nxt;
                    (seq, 1 + n % mss.min(r.rcv_nxt - seq))
                }
                _ => continue,
            };
            r.on_data_pushed(now, seq, len as u32, n_push(seq), &mut out);
        }
        if let Some(bound) = linux_bound {
            prop_assert!(syn_window <= bound, "the SYN's {} > Linux's bound {}", syn_window, bound);
        }
        for action in &out {
            if let Action::Ack { wnd, .. } = *action {
                prop_assert!(wnd <= max_window, "advertised {} > the header's {}", wnd, max_window);
                if let Some(bound) = linux_bound {
                    prop_assert!(wnd <= bound, "advertised {} > Linux's bound {} (SO_RCVBUF {})", wnd, bound, buffer);
                    continue;
                }
                prop_assert!(wnd <= rounded, "advertised {} > buffer {} as rounded ({:?})", wnd, rounded, rounding);
                if rounding == BufferRounding::Down {
                    prop_assert!(wnd <= buffer, "advertised {} > the configured buffer {}", wnd, buffer);
                }
            }
        }
    }
}

/// The example: timestamps take 12 of 1460 bytes, and 7,300 B is 5.04 segments of 1448 B.
/// Net/3 offers 6 of them (its buffer is 8,688 B); Linux 5 (7,240 B, within the 7,300 B asked for).
#[test]
fn a_7300_byte_buffer_with_timestamps() {
    assert_eq!(round_buffer(1448, 7300, BufferRounding::Up), (1448, 8688));
    assert_eq!(round_buffer(1448, 7300, BufferRounding::Down), (1448, 7240));
}
