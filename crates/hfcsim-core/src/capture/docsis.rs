//! DOCSIS MAC frames as the CMTS receives them on the upstream (DOCSIS RFI 1.1 8.2, MULPI 3.0
//! 6.2): the MAC header and its HCS, the Request frame, the Packet PDU carrying an Ethernet frame,
//! the Request extended-header element of a piggybacked request, and the Concatenation of several
//! frames in one burst. The capture's `docsis-upstream` interface (link type 143) holds them.

use super::checksum::crc16_x25;

// DOCSIS MAC frame control (RFI 1.1 8.2.1.1-8.2.1.2, MULPI 3.0 6.2.1.1: FC = FC_TYPE (2 bits),
// FC_PARM (5 bits), EHDR_ON (1 bit)).
/// FC_TYPE 00, Packet PDU; FC_PARM 00000.
const FC_PACKET_PDU: u8 = 0x00;
/// FC_TYPE 11 (MAC-specific), FC_PARM 00010: Request frame (RFI 1.1 8.2.5.3).
const FC_REQUEST: u8 = (0b11 << 6) | (0b00010 << 1);
/// FC_TYPE 11, FC_PARM 11100: Concatenation header (RFI 1.1 8.2.5.5).
const FC_CONCATENATION: u8 = (0b11 << 6) | (0b11100 << 1);
/// Extended header element type 1: Request (RFI 1.1 Table 8-13: minislots, then SID).
const EH_REQUEST: u8 = 1;

/// Modem `station`'s SID: its number + 1 (SIDs are 14 bits, 0 is none; chosen, as a CMTS numbers
/// modems in the order they range).
fn sid(station: u32) -> u16 {
    ((station + 1) & 0x3fff) as u16
}

/// A DOCSIS MAC header (RFI 1.1 8.2.1, Figure 8-4): FC (with EHDR_ON when `ehdr` is not empty),
/// MAC_PARM, LEN (or the SID of a Request frame), the extended header, HCS over all of them.
fn docsis_header(out: &mut Vec<u8>, fc: u8, mac_parm: u8, len_or_sid: u16, ehdr: &[u8]) {
    let start = out.len();
    out.push(fc | u8::from(!ehdr.is_empty()));
    out.push(mac_parm);
    out.extend_from_slice(&len_or_sid.to_be_bytes());
    out.extend_from_slice(ehdr);
    let hcs = crc16_x25(&out[start..]);
    out.extend_from_slice(&hcs.to_le_bytes());
}

/// A Request frame (RFI 1.1 8.2.5.3): MAC_PARM = minislots requested, the SID in LEN's place, no
/// payload.
fn request_frame(out: &mut Vec<u8>, minislots: u32, sid: u16) {
    docsis_header(out, FC_REQUEST, minislots.min(255) as u8, sid, &[]);
}

/// A Packet PDU (RFI 1.1 8.2.2): the Ethernet frame `eth` (with its FCS) after a header whose
/// MAC_PARM is the extended header's length and whose LEN counts the extended header and `eth`.
fn packet_pdu(out: &mut Vec<u8>, eth: &[u8], ehdr: &[u8]) {
    let len = (ehdr.len() + eth.len()).min(65_535) as u16;
    docsis_header(out, FC_PACKET_PDU, ehdr.len() as u8, len, ehdr);
    out.extend_from_slice(eth);
}

/// The Request extended-header element (RFI 1.1 Table 8-13): EH_TYPE 1, EH_LEN 3, minislots
/// requested (one byte), SID (two).
fn request_eh(minislots: u32, sid: u16) -> [u8; 4] {
    let [hi, lo] = sid.to_be_bytes();
    [(EH_REQUEST << 4) | 3, minislots.min(255) as u8, hi, lo]
}

/// The DOCSIS frame of one upstream burst from modem `station` carrying the Ethernet frames `eths`
/// (each with its FCS): a Request frame when there are none, else a Packet PDU, or a Concatenation
/// of them (RFI 1.1 8.2.5.5: MAC_PARM = the frames' count, LEN = their bytes); a piggybacked
/// request rides the first frame as a Request EH element.
pub fn docsis_burst(station: u32, request: Option<u32>, eths: &[Vec<u8>]) -> Vec<u8> {
    let sid = sid(station);
    let mut out = Vec::new();
    if eths.is_empty() {
        request_frame(&mut out, request.unwrap_or(0), sid);
        return out;
    }
    let eh = request.map(|m| request_eh(m, sid));
    let mut frames = Vec::new();
    for (i, eth) in eths.iter().enumerate() {
        let ehdr: &[u8] = match (i, &eh) {
            (0, Some(e)) => e,
            _ => &[],
        };
        packet_pdu(&mut frames, eth, ehdr);
    }
    if eths.len() == 1 {
        return frames;
    }
    let count = eths.len().min(255) as u8;
    docsis_header(&mut out, FC_CONCATENATION, count, frames.len().min(65_535) as u16, &[]);
    out.extend_from_slice(&frames);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CRC-16 CCITT worked another way: each byte's bits reversed, shifted in most significant bit
    /// first against 0x1021, the register reversed and complemented at the end.
    fn crc16_msb_first(data: &[u8]) -> u16 {
        let mut crc = 0xffffu16;
        for &b in data {
            crc ^= u16::from(b.reverse_bits()) << 8;
            for _ in 0..8 {
                crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            }
        }
        !crc.reverse_bits()
    }

    #[test]
    fn hcs_of_a_request_frame_worked_by_hand() {
        // CRC-16/X-25's catalogue check value over "123456789".
        assert_eq!(crc16_x25(b"123456789"), 0x906e);
        assert_eq!(crc16_msb_first(b"123456789"), 0x906e);
        // A Request frame (RFI 1.1 8.2.5.3) from SID 1 for 8 minislots: FC 0xC4 (FC_TYPE 11,
        // FC_PARM 00010, EHDR_ON 0), MAC_PARM 8, SID 0x0001, then the HCS low byte first. Wireshark
        // 4.0's DOCSIS dissector shows this header's HCS as 0xa062 [correct].
        let mut h = Vec::new();
        request_frame(&mut h, 8, sid(0));
        assert_eq!(h, vec![0xc4, 0x08, 0x00, 0x01, 0xa0, 0x62]);
        assert_eq!(crc16_msb_first(&h[..4]).to_le_bytes(), [0xa0, 0x62]);
        // X.25's check: the header with its HCS leaves the residue 0xF0B8 (0x0F47 complemented).
        assert_eq!(crc16_x25(&h), 0x0f47);
    }

    #[test]
    fn packet_pdu_with_a_request_eh_and_a_concatenation() {
        let eth = [0u8; 64];
        let eh = request_eh(5, sid(2));
        assert_eq!(eh, [0x13, 5, 0x00, 0x03]);
        let mut f = Vec::new();
        packet_pdu(&mut f, &eth, &eh);
        // FC 0x01 (Packet PDU, EHDR_ON), MAC_PARM = EHDR length 4, LEN = 4 + 64, EHDR, HCS.
        assert_eq!(&f[..8], &[0x01, 4, 0, 68, 0x13, 5, 0, 3]);
        assert_eq!(crc16_x25(&f[..10]), 0x0f47);
        assert_eq!(f.len(), 10 + 64);
        let mut c = Vec::new();
        docsis_header(&mut c, FC_CONCATENATION, 2, 148, &[]);
        assert_eq!(&c[..4], &[0xf8, 2, 0, 148]);
    }
}
