//! The sums that check a captured frame: RFC 1071's Internet checksum (IPv4, ICMP and TCP headers),
//! the CRC-16 of X.25 (the DOCSIS MAC header's HCS) and IEEE 802.3's CRC-32 (the Ethernet FCS).

/// RFC 1071: the 16-bit ones' complement of the ones' complement sum, continued from `sum`
/// (a partial sum, e.g. of a pseudo-header). An odd last byte is padded with zero.
pub fn checksum(data: &[u8], mut sum: u32) -> u16 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// CRC-16 of ITU-T X.25 (2.2.7.4, HDLC's frame check sequence): generator x^16 + x^12 + x^5 + 1,
/// register preset to ones, bits taken least significant first, the remainder complemented. The
/// DOCSIS MAC header's HCS is this CRC-CCITT over the header before it (DOCSIS RFI 1.1 8.2.1.4,
/// MULPI 3.0 6.2.1.4), sent low byte first as X.25 sends its FCS.
pub fn crc16_x25(data: &[u8]) -> u16 {
    // 0x8408: the generator 0x1021 with its bits reversed (least significant first).
    !(crc_reflected(data, 0x8408, 0xffff) as u16)
}

/// IEEE 802.3 3.2.9's frame check sequence: CRC-32 with generator 0x04C11DB7, register preset
/// to ones, bits least significant first, the remainder complemented; sent low byte first.
pub fn crc32_ieee(data: &[u8]) -> u32 {
    // 0xEDB88320: the generator with its bits reversed.
    !crc_reflected(data, 0xedb8_8320, 0xffff_ffff)
}

/// A CRC taken least significant bit first (both of the above): `reversed` is the generator with
/// its bits reversed, `preset` the register's start; the remainder, not yet complemented.
fn crc_reflected(data: &[u8], reversed: u32, preset: u32) -> u32 {
    let mut crc = preset;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ reversed } else { crc >> 1 };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_string() {
        // The catalogue's check value of CRC-32 (IEEE 802.3) over "123456789".
        assert_eq!(crc32_ieee(b"123456789"), 0xcbf4_3926);
        // A frame followed by its FCS, low byte first, leaves the 802.3 residue 0xDEBB20E3 (here
        // complemented by the final XOR: 0x2144DF1C).
        let mut f = b"an ethernet frame".to_vec();
        f.extend_from_slice(&crc32_ieee(&f).to_le_bytes());
        assert_eq!(crc32_ieee(&f), 0x2144_df1c);
    }
}
