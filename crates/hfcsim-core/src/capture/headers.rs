//! The headers of a captured frame built from the model's fields: Ethernet II, IPv4 (RFC 791, the
//! DSCP and ECN field), ICMP's size, TCP (RFC 9293) with its options in Linux's order (MSS, SACK,
//! timestamps, window scale: RFC 2018, RFC 7323) and the checksums over them.

use super::checksum::checksum;
use crate::packet::Ecn;
use crate::tcp::receiver::SackBlocks;

pub(super) const ETH_HEADER: usize = 14;
pub(super) const IP_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
pub(super) const ICMP_HEADER: usize = 8;
/// RFC 768: the UDP header, bytes.
pub(super) const UDP_HEADER: usize = 8;
/// Capture length without payload: Ethernet, IP and the largest TCP header (RFC 9293 3.1: data
/// offset <= 15 words).
pub(super) const HEADERS_SNAP: u32 = (ETH_HEADER + IP_HEADER + 60) as u32;

/// RFC 9293 3.1: the TCP checksum's pseudo-header (source, destination, zero, protocol 6, TCP
/// length), summed but not folded.
fn pseudo_sum(src: [u8; 4], dst: [u8; 4], proto: u8, len: u32) -> u32 {
    let mut sum = 0u32;
    for a in [src, dst] {
        sum += u32::from(u16::from_be_bytes([a[0], a[1]])) + u32::from(u16::from_be_bytes([a[2], a[3]]));
    }
    sum + u32::from(proto) + (len >> 16) + (len & 0xffff)
}

/// An IPv4 header (RFC 791 3.1): version 4, IHL 5, the TOS byte the DSCP (RFC 2474 Sec. 3: its high
/// six bits) and the ECN field (RFC 3168 Sec. 5: its low two), DF, TTL 64, checksum over the header.
#[allow(clippy::too_many_arguments)]
pub(super) fn ipv4_header(
    out: &mut Vec<u8>,
    total_len: u16,
    id: u16,
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
    dscp: u8,
    ecn: Ecn,
) {
    let start = out.len();
    out.extend_from_slice(&[0x45, (dscp << 2) | ecn as u8]);
    out.extend_from_slice(&total_len.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&0x4000u16.to_be_bytes()); // flags: DF; fragment offset 0
    out.extend_from_slice(&[64, proto, 0, 0]);
    out.extend_from_slice(&src);
    out.extend_from_slice(&dst);
    let c = checksum(&out[start..], 0);
    out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
}

/// An AQM on the way may have marked the packet CE (RFC 3168 Sec. 5): the Ethernet frame's IP
/// header gets the packet's ECN field, and its checksum made anew.
pub(super) fn set_ecn(frame: &mut [u8], ecn: Ecn) {
    let ip = ETH_HEADER;
    if frame.len() >= ip + IP_HEADER && frame[ip + 1] & 0b11 != ecn as u8 {
        frame[ip + 1] = (frame[ip + 1] & !0b11) | ecn as u8;
        frame[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
        let sum = checksum(&frame[ip..ip + IP_HEADER], 0);
        frame[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
    }
}

/// DSCP 45, Non-Queue-Building (RFC 9956 Sec. 4.1).
pub(super) const DSCP_NQB: u8 = 45;

// TCP option kinds (RFC 9293 3.2, RFC 7323 2.2 and 3.2, RFC 2018 2 and 3).
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WS: u8 = 3;
const OPT_SACK_PERMITTED: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMPS: u8 = 8;

/// The options of a SYN or SYN-ACK, in Linux's order (tcp_options_write): MSS; SACK-permitted
/// and timestamps; NOP and window scale. 20 bytes with everything on.
pub fn syn_options(mss: u16, sack: bool, ts: Option<(u32, u32)>, wscale: Option<u8>) -> Vec<u8> {
    let mut o = vec![OPT_MSS, 4];
    o.extend_from_slice(&mss.to_be_bytes());
    match (sack, ts) {
        (true, Some(ts)) => {
            o.extend_from_slice(&[OPT_SACK_PERMITTED, 2]);
            push_ts(&mut o, ts);
        }
        (false, Some(ts)) => {
            o.extend_from_slice(&[OPT_NOP, OPT_NOP]);
            push_ts(&mut o, ts);
        }
        (true, None) => o.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK_PERMITTED, 2]),
        (false, None) => {}
    }
    if let Some(shift) = wscale {
        o.extend_from_slice(&[OPT_NOP, OPT_WS, 3, shift]);
    }
    o
}

/// RFC 7323 3.2: kind 8, length 10, TSval, TSecr.
fn push_ts(o: &mut Vec<u8>, (tsval, tsecr): (u32, u32)) {
    o.extend_from_slice(&[OPT_TIMESTAMPS, 10]);
    o.extend_from_slice(&tsval.to_be_bytes());
    o.extend_from_slice(&tsecr.to_be_bytes());
}

/// The options of a segment after the SYNs: NOP NOP timestamps (12 bytes, RFC 7323 Appendix A's
/// layout), then NOP NOP SACK with its blocks as absolute sequence numbers (RFC 2018 3), `isn`
/// the data sender's ISN.
pub fn segment_options(ts: Option<(u32, u32)>, sack: &SackBlocks, isn: u32) -> Vec<u8> {
    let mut o = Vec::with_capacity(40);
    if let Some(ts) = ts {
        o.extend_from_slice(&[OPT_NOP, OPT_NOP]);
        push_ts(&mut o, ts);
    }
    if !sack.is_empty() {
        o.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * sack.n]);
        for &(left, right) in sack.as_slice() {
            o.extend_from_slice(&data_seq(isn, left).to_be_bytes());
            o.extend_from_slice(&data_seq(isn, right).to_be_bytes());
        }
    }
    o
}

/// The wire sequence number of data byte `off` (RFC 9293 3.4: the SYN takes ISN, data starts at
/// ISN + 1), modulo 2^32.
pub(super) fn data_seq(isn: u32, off: u64) -> u32 {
    isn.wrapping_add(1).wrapping_add(off as u32)
}

/// One TCP segment's header fields.
pub(super) struct Segment<'a> {
    pub(super) src_port: u16,
    pub(super) dst_port: u16,
    pub(super) seq: u32,
    /// The ACK flag and acknowledgment number (none on the first SYN).
    pub(super) ack: Option<u32>,
    pub(super) syn: bool,
    pub(super) window: u16,
    pub(super) options: &'a [u8],
    /// The TCP header's length the model's packet size leaves (header + options), if it holds
    /// the options: the options are padded to it with NOPs.
    pub(super) header_len: usize,
    pub(super) payload_len: u32,
    /// ECE and CWR (RFC 3168 Sec. 6.1: both on an ECN-setup SYN, ECE on its SYN-ACK), and PSH where
    /// the sender marks it (tcp/push.rs).
    pub(super) ecn_flags: u8,
}

/// A TCP header (RFC 9293 3.1) with its checksum over the pseudo-header, the header and a payload
/// of zeros (which add nothing to the sum).
pub(super) fn tcp_header(out: &mut Vec<u8>, s: &Segment, src: [u8; 4], dst: [u8; 4]) {
    let start = out.len();
    out.extend_from_slice(&s.src_port.to_be_bytes());
    out.extend_from_slice(&s.dst_port.to_be_bytes());
    out.extend_from_slice(&s.seq.to_be_bytes());
    out.extend_from_slice(&s.ack.unwrap_or(0).to_be_bytes());
    let words = (s.header_len / 4) as u8;
    let flags = if s.syn { 0x02 } else { 0 } | if s.ack.is_some() { 0x10 } else { 0 } | s.ecn_flags;
    out.extend_from_slice(&[words << 4, flags]);
    out.extend_from_slice(&s.window.to_be_bytes());
    // Checksum (filled in below) and urgent pointer.
    out.extend_from_slice(&[0, 0, 0, 0]);
    // Padding before the options keeps each option's alignment as the stack lays them out.
    out.extend(std::iter::repeat_n(OPT_NOP, s.header_len - TCP_HEADER - s.options.len()));
    out.extend_from_slice(s.options);
    let len = (s.header_len as u32) + s.payload_len;
    let c = checksum(&out[start..], pseudo_sum(src, dst, 6, len));
    out[start + 16..start + 18].copy_from_slice(&c.to_be_bytes());
}

/// The TCP header length for a packet of `size` IP bytes with `payload` data bytes: the model's,
/// when it holds `options` in whole 32-bit words (RFC 9293 3.1: data offset), else the least
/// that holds them (then the frame is longer or shorter than the model's packet).
pub(super) fn header_len(size: u32, payload: u32, options: usize) -> usize {
    let least = TCP_HEADER + options.div_ceil(4) * 4;
    let model = (size as i64) - (IP_HEADER as i64) - i64::from(payload);
    match usize::try_from(model) {
        Ok(m) if m >= least && m <= 60 && m % 4 == 0 => m,
        _ => least,
    }
}

/// RFC 7323 2.3: the smallest shift that lets a window field hold `buffer`, at most 14.
pub fn window_shift(buffer: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (buffer >> s) > 65_535 {
        s += 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_checksum_example() {
        // RFC 1071 3: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2 (with end-around carries), so
        // the checksum is its complement.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(checksum(&data, 0), !0xddf2);
        // An odd length pads with a zero byte.
        assert_eq!(checksum(&[0x01], 0), !0x0100);
        // A message with its checksum inserted sums to 0xffff: its checksum is zero.
        let mut h = Vec::new();
        ipv4_header(&mut h, 40, 1, 6, [198, 18, 0, 1], [198, 19, 0, 1], 0, Ecn::NotEct);
        assert_eq!(checksum(&h, 0), 0);
    }

    #[test]
    fn ipv4_header_worked_by_hand() {
        // 4500 0028 0001 4000 4006 xxxx c612 0001 c613 0001: 4500 + 0028 + 0001 + 4000 + 4006 +
        // c612 + 0001 + c613 + 0001 = 0x25156 -> 0x5156 + 2 = 0x5158, checksum !0x5158 = 0xaea7.
        let mut h = Vec::new();
        ipv4_header(&mut h, 40, 1, 6, [198, 18, 0, 1], [198, 19, 0, 1], 0, Ecn::NotEct);
        assert_eq!(&h[10..12], &[0xae, 0xa7]);
        assert_eq!(h.len(), IP_HEADER);
        // CE (RFC 3168 Sec. 5: 0b11 in the TOS byte's low bits): 4503 adds 3, checksum 0xaea4.
        let mut h = Vec::new();
        ipv4_header(&mut h, 40, 1, 6, [198, 18, 0, 1], [198, 19, 0, 1], 0, Ecn::Ce);
        assert_eq!(&h[..2], &[0x45, 0x03]);
        assert_eq!(&h[10..12], &[0xae, 0xa4]);
    }

    #[test]
    fn syn_options_bytes() {
        // Linux's SYN with SACK, timestamps and window scale: MSS 1460, SACK-permitted,
        // TS(7, 0), NOP, WS 3: 20 bytes.
        let o = syn_options(1460, true, Some((7, 0)), Some(3));
        assert_eq!(o, vec![2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 3]);
        // The 1990s stacks: MSS only (and window scale, RFC 1323, when on).
        assert_eq!(syn_options(536, false, None, None), vec![2, 4, 0x02, 0x18]);
        assert_eq!(syn_options(536, false, None, Some(0)), vec![2, 4, 0x02, 0x18, 1, 3, 3, 0]);
    }

    #[test]
    fn sack_blocks_are_absolute_and_fill_the_model_size() {
        let mut s = SackBlocks::default();
        s.blocks[0] = (2920, 4380);
        s.blocks[1] = (5840, 7300);
        s.n = 2;
        let o = segment_options(Some((1, 2)), &s, 999);
        // NOP NOP TS (12) + NOP NOP SACK kind, length 2 + 16, 16 block bytes: 12 + 4 + 16.
        assert_eq!(o.len(), 32);
        assert_eq!(&o[12..16], &[1, 1, 5, 18]);
        assert_eq!(&o[16..20], &(1000u32 + 2920).to_be_bytes());
        // sim.rs receiver_actions sizes this ACK 40 + 12 + 4 + 8 n: the header holds it exactly.
        assert_eq!(header_len(40 + 12 + 4 + 16, 0, o.len()), 20 + 32);
        // A data segment with timestamps: 52 bytes of headers in the model, 32 of TCP here.
        assert_eq!(header_len(1500, 1448, 12), 32);
        // Too small for its options (a SYN the model counts as a bare 40 bytes): the least.
        assert_eq!(header_len(40, 0, 20), 40);
    }

    #[test]
    fn tcp_checksum_verifies_with_pseudo_header() {
        let o = segment_options(Some((5, 6)), &SackBlocks::default(), 0);
        let seg = Segment {
            src_port: 5001,
            dst_port: 40000,
            seq: 1,
            ack: Some(1),
            syn: false,
            window: 100,
            options: &o,
            header_len: 32,
            payload_len: 1448,
            ecn_flags: 0,
        };
        let (a, b) = ([198, 18, 0, 1], [198, 19, 0, 1]);
        let mut h = Vec::new();
        tcp_header(&mut h, &seg, a, b);
        assert_eq!(h.len(), 32);
        // Data offset: 8 words.
        assert_eq!(h[12], 8 << 4);
        // The receiver's check: the sum over pseudo-header, header and zero payload is 0xffff.
        assert_eq!(checksum(&h, pseudo_sum(a, b, 6, 32 + 1448)), 0);
        // An odd pseudo length is as good: the payload's zeros change nothing.
        h.extend(std::iter::repeat_n(0, 1448));
        assert_eq!(checksum(&h, pseudo_sum(a, b, 6, 32 + 1448)), 0);
    }

    #[test]
    fn window_shift_is_the_smallest_that_fits() {
        assert_eq!(window_shift(8_760), 0);
        assert_eq!(window_shift(65_535), 0);
        assert_eq!(window_shift(65_536), 1);
        assert_eq!(window_shift(6_291_456), 7); // 6 MB: 6291456 >> 7 = 49152
        assert_eq!(window_shift(u64::MAX), 14);
    }
}
