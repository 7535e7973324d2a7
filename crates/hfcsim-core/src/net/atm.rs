//! IP over ATM: AAL5 cells, and how ATM links and switches are modelled (Elloumi et al. Sec. 4,
//! Figs. 2-3: every link of their network carries IP packets in AAL5 over ATM).
//!
//! An IP packet of `n` bytes becomes one AAL5 frame: 8 bytes of LLC/SNAP header (RFC 2684 Sec. 5,
//! as Classical IP over ATM uses it, RFC 2225), the packet, padding and the 8-byte AAL5 CPCS
//! trailer (ITU-T I.363.5), cut into 48-byte cell payloads, each sent in a 53-byte cell.
//!
//! # The model of a switch
//!
//! A link that counts cells (`Link::atm`) is a switch output port. It is modelled store-and-forward
//! per packet with cell-accurate service times: a packet enters the output queue when its last
//! cell has arrived, and its service takes its cells' 53-byte times at the output rate. The
//! paper's NIST simulator is cell-level; the two agree on every output port of the paper's
//! network, because with one TCP connection an output queue holds only that connection's cells,
//! in packet order and contiguous, so cells of different packets never interleave. What the
//! packet model shifts is time:
//! - a packet leaves a switch later than a cut-through cell switch would send it, by the input
//!   link's serialisation of its cells after the first (at most 21 cells of a 1 KB packet; at
//!   155 Mb/s that is 21 x 424 bits = 57 us);
//! - the EPD decision (epd.rs) is taken when the packet is whole, not when its first cell
//!   arrives: up to the same 57 us later, during which the output (6 Mb/s: one cell per 71 us)
//!   drains at most one cell.
//!
//! The buffer's cell count (`Queue`) is exact at any instant: the packets waiting hold all their
//! cells, and the packet in service holds those of its cells not yet sent in full (the cells of
//! a packet leave one by one at the output rate).
//!
//! # Cell losses
//!
//! A buffer bounded in cells (`QueueLimit::Cells`) takes an arriving packet's cells while they fit
//! and loses the rest (drop-tail per cell). All of a packet's cells arrive at one instant in this
//! model, so the cells kept are the packet's first ones, and once one is lost all the following
//! ones are too, which is partial packet discard (PPD, Armitage & Adams, as Romanow & Floyd 1995
//! describe it). The kept cells are sent and use the link; the packet is lost at reassembly
//! (its AAL5 CRC fails), which `Admitted::truncated` tells the caller. The last cell of the frame
//! (its end-of-message marker) is lost with the rest: the frame is lost either way, and keeping
//! it would only add one cell of link time.

/// Bytes of one ATM cell on the wire: a 5-byte header and 48 bytes of payload (ITU-T I.361).
pub const CELL_BYTES: u32 = 53;
/// Bytes of payload in one cell.
pub const CELL_PAYLOAD: u32 = 48;
/// LLC/SNAP encapsulation header ahead of the IP packet (RFC 2684 Sec. 5; RFC 2225).
pub const LLC_SNAP_BYTES: u32 = 8;
/// AAL5 CPCS-PDU trailer: UU, CPI, length and CRC-32 (ITU-T I.363.5).
pub const AAL5_TRAILER_BYTES: u32 = 8;

/// ATM cells carrying one IP packet of `ip_bytes` in AAL5 with LLC/SNAP encapsulation: header,
/// packet and trailer padded to a multiple of 48 bytes of cell payload (module comment). A 40-byte
/// TCP ACK is 56 bytes, two cells (Elloumi et al. Sec. 6.2: "each ACK corresponds to two ATM
/// cells").
#[inline]
pub fn aal5_cells(ip_bytes: u32) -> u32 {
    // In u64 so that no size wraps; the quotient is below 2^32 / 48 + 1.
    (ip_bytes as u64 + (LLC_SNAP_BYTES + AAL5_TRAILER_BYTES) as u64).div_ceil(CELL_PAYLOAD as u64) as u32
}

/// Bytes one IP packet of `ip_bytes` takes on an ATM link: its cells, 53 bytes each.
#[inline]
pub fn wire_bytes(ip_bytes: u32) -> u64 {
    aal5_cells(ip_bytes) as u64 * CELL_BYTES as u64
}

/// Cells an ATM switch lost, by cause (module comment; epd.rs). A packet refused whole because the
/// buffer had no room for even its first cell is an ordinary queue drop, not counted here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SwitchStats {
    /// Packets discarded whole by early packet discard.
    pub epd_packets: u64,
    /// Their cells (all of each packet's cells).
    pub epd_cells: u64,
    /// Packets of which only the first cells fitted in the buffer (partial packet discard).
    pub partial_packets: u64,
    /// The cells of those packets that were discarded (the ones that did not fit).
    pub partial_cells: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::tx_time;

    #[test]
    fn cells_per_packet() {
        // (ip_bytes, cells): ceil((n + 16) / 48)
        let cases = [
            (0, 1),     // 16 bytes of header and trailer alone
            (32, 1),    // 48: exactly one payload
            (33, 2),    // 49
            (40, 2),    // Elloumi Sec. 6.2: an ACK is two cells (56 bytes)
            (80, 2),    // 96: exactly two
            (81, 3),    // 97
            (1024, 22), // 1040 / 48 = 21.67: a 1 KB MTU packet (Elloumi Table 2)
            (1500, 32), // 1516 / 48 = 31.58
        ];
        for (n, cells) in cases {
            assert_eq!(aal5_cells(n), cells, "{n} bytes");
        }
        assert_eq!(aal5_cells(u32::MAX), ((u32::MAX as u64 + 16).div_ceil(48)) as u32, "no wrap");
    }

    #[test]
    fn a_1kb_packet_takes_1_55_ms_at_6_mbps() {
        // 22 cells x 53 = 1166 bytes = 9328 bits; at 6 Mb/s 1 554 666.7 ns, rounded up: Elloumi
        // Sec. 6.2's 1.55 ms, "the minimum spacing between data packets".
        assert_eq!(wire_bytes(1024), 1166);
        assert_eq!(tx_time(wire_bytes(1024) as u32, 6_000_000), 1_554_667);
        assert_eq!(wire_bytes(40), 106);
    }
}
