//! A real DOCSIS plant's delays and overheads beyond the MAC (issue 23): the downstream
//! interleaver's latency (ITU-T J.83 Annex B) and the downstream bytes of the MAC management
//! messages (DOCSIS RFI 1.1 Sec. 8.3). The topology (topology.rs `docsis`) and the MAC's MAP lead
//! (upstream.rs) read them; each is off unless its key is set.

/// The (I, J) pairs J.83 Annex B's interleaver control word allows (Table B.3): I = 128 with
/// J = 1-8, and I x J = 128 for I = 64, 32, 16, 8.
pub fn interleave_allowed(i: u32, j: u32) -> bool {
    matches!((i, j), (128, 1..=8) | (64, 2) | (32, 4) | (16, 8) | (8, 16))
}

/// J.83 Annex B's QAM symbol rate, bits per QAM symbol, trellis-coded bits per trellis group of 5
/// QAM symbols, and its FEC frame: Reed-Solomon codewords per frame and the sync trailer's bits.
/// 64-QAM: 5.056941 Msym/s, 28 bits per 5 symbols (4 RS symbols), 60 codewords + 42 bits;
/// 256-QAM: 5.360537 Msym/s, 38 bits per 5 symbols, 88 codewords + 40 bits (J.83 B, B.4-B.5).
fn j83b_mode(qam: u32) -> Option<(f64, f64, f64, f64)> {
    match qam {
        64 => Some((5.056941e6, 28.0, 60.0, 42.0)),
        256 => Some((5.360537e6, 38.0, 88.0, 40.0)),
        _ => None,
    }
}

/// Reed-Solomon symbols (7 bits, GF(128)) per codeword (J.83 Annex B: RS(128, 122)).
const RS_N: f64 = 128.0;

/// The interleaver's latency, s: J.83 Annex B's convolutional interleaver has I branches, branch
/// k delaying by k*J symbols in the interleaver and (I-1-k)*J in the deinterleaver; symbols go to
/// the branches in turn, so every symbol spends (I-1)*J*I symbol times in the two together. A
/// symbol time is one 7-bit Reed-Solomon symbol at the rate the trellis coder takes in (its bits per
/// 5 QAM symbols) less the FEC frame's sync trailer. `None` for a modulation J.83 B lacks.
pub fn interleaver_latency_s(i: u32, j: u32, qam: u32) -> Option<f64> {
    let (sym_rate, bits_per_5, codewords, sync_bits) = j83b_mode(qam)?;
    let frame_data_bits = codewords * RS_N * 7.0;
    let rs_bits_per_s = sym_rate * bits_per_5 / 5.0 * frame_data_bits / (frame_data_bits + sync_bits);
    let symbols = (i as f64 - 1.0) * i as f64 * j as f64;
    Some(symbols * 7.0 / rs_bits_per_s)
}

/// A MAC management message's framing on the downstream (RFI 1.1 Sec. 8.3.1): the DOCSIS MAC
/// header (`mac_header` bytes), the management header (DA 6, SA 6, length 2, DSAP, SSAP, control,
/// version, type, reserved: 20) and the CRC (4).
fn mgmt_frame(mac_header: u32, payload: u32) -> f64 {
    (mac_header + 20 + payload + 4) as f64
}

/// A MAP's fixed part (RFI 1.1 Sec. 8.3.4: upstream channel ID, UCD count, number of elements,
/// reserved, alloc start time 4, ACK time 4, ranging and data backoff start/end 4) and two 4-byte
/// information elements: the request region and the null IE that ends the map (chosen: an idle
/// MAP, the floor; each grant adds 4 bytes).
const MAP_PAYLOAD: u32 = 16 + 2 * 4;
/// SYNC (RFI 1.1 Sec. 8.3.2): the CMTS timestamp, 4 bytes.
const SYNC_PAYLOAD: u32 = 4;
/// UCD (RFI 1.1 Sec. 8.3.3): channel ID, configuration change count, minislot size, downstream
/// channel ID (4), symbol rate, frequency and a 16-byte preamble TLVs (3 + 6 + 18), and five burst
/// descriptors (request, initial and station maintenance, short and long data) of about 40 bytes
/// each (chosen typical: their TLVs' lengths vary by CMTS).
const UCD_PAYLOAD: u32 = 4 + 27 + 5 * 40;
/// RFI 1.1 Annex B: SYNC at most every 200 ms, UCD at most every 2 s (the longest intervals: the
/// spec's floor on the overhead).
const SYNC_INTERVAL_S: f64 = 0.2;
const UCD_INTERVAL_S: f64 = 2.0;

/// The downstream's MAC management traffic, bit/s: a MAP per upstream channel every `map_s`, a
/// UCD per upstream channel every 2 s and one SYNC every 200 ms.
pub fn mgmt_overhead_bps(mac_header: u32, channels: u32, map_s: f64) -> f64 {
    let per_channel =
        mgmt_frame(mac_header, MAP_PAYLOAD) * 8.0 / map_s + mgmt_frame(mac_header, UCD_PAYLOAD) * 8.0 / UCD_INTERVAL_S;
    channels as f64 * per_channel + mgmt_frame(mac_header, SYNC_PAYLOAD) * 8.0 / SYNC_INTERVAL_S
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mgmt_overhead_of_one_channel_with_2_ms_maps() {
        // MAP 6 + 20 + 24 + 4 = 54 bytes every 2 ms: 216 000 b/s; UCD 6 + 20 + 231 + 4 = 261
        // bytes every 2 s: 1044 b/s; SYNC 6 + 20 + 4 + 4 = 34 bytes every 200 ms: 1360 b/s.
        let got = mgmt_overhead_bps(6, 1, 0.002);
        assert!((got - 218_404.0).abs() < 1e-6, "{got}");
    }
}
