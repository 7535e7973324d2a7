"""DOCSIS wire constants: one place for the simulator (``network.kind = "docsis"``) and the models.

Each constant cites its source. ``hfcsim.models.nguyen``'s overhead calculator and the scenario
resolver (``hfcsim.scenario``, which hands the engine rates and frame sizes in bytes, never these
names) both read them from here, so the figures the calculator predicts and the wire the simulator
models cannot drift apart.
"""

from __future__ import annotations

__all__ = [
    "ETHERNET_HEADER_BYTES",
    "ETHERNET_MIN_FRAME_BYTES",
    "ETHERNET_GAP_BYTES",
    "DOCSIS_HEADER_BYTES",
    "TCPIP_HEADER_BYTES",
    "ICMP_IP_HEADER_BYTES",
    "RS_N",
    "RS_K",
    "MPEG_PACKET_BYTES",
    "MPEG_HEADER_BYTES",
    "QAM64_SYMBOL_RATE",
    "QAM256_SYMBOL_RATE",
    "QAM64_RAW_BPS",
    "QAM256_RAW_BPS",
    "DEFAULT_MAX_TRAFFIC_BURST_BYTES",
    "FEC_FRACTION",
    "MPEG_FRACTION",
    "downstream_payload_bps",
    "ethernet_frame_bytes",
    "docsis_frame_bytes",
    "ethernet_wire_bytes",
]

#: IEEE 802.3 Clause 3: destination 6 + source 6 + type 2 + FCS 4 bytes around the IP packet;
#: Nguyen & Armitage Sec. III.C: "Ethernet header is 18 bytes".
ETHERNET_HEADER_BYTES = 18
#: IEEE 802.3 Clause 3.2.8/4.4.2: the minimum frame, header and FCS included (a 40-byte TCP/IP
#: ACK is padded to it).
ETHERNET_MIN_FRAME_BYTES = 64
#: IEEE 802.3 Clause 4.4.2: preamble and start delimiter 8 bytes, inter-frame gap 96 bit times;
#: what a frame costs on an Ethernet wire beyond the frame itself.
ETHERNET_GAP_BYTES = 20
#: DOCSIS RFI 1.1 Sec. 6.2.1: the MAC header without extended headers, FC 1 + MAC_PARM 1 + LEN 2
#: + HCS 2 bytes; Nguyen & Armitage Sec. III.C: "6 bytes of DOCSIS overhead".
DOCSIS_HEADER_BYTES = 6
#: Nguyen & Armitage Sec. III.C: "TCP/IP header is 40 bytes".
TCPIP_HEADER_BYTES = 40
#: RFC 791: the IP header (no options) in front of an ICMP echo (RFC 792).
ICMP_IP_HEADER_BYTES = 20
#: ITU-T J.83 Annex B: Reed-Solomon (128,122) over GF(128), 6 parity symbols per 128; Nguyen &
#: Armitage Sec. III.C: "6/128 = 4.7 %".
RS_N = 128
RS_K = 122
#: ISO/IEC 13818-1: 188-byte MPEG-2 transport packets; Nguyen & Armitage Sec. III.C: "four bytes of
#: overhead, sometimes five, giving an average of 4.5 bytes" (the fifth is DOCSIS's pointer field,
#: DOCSIS RFI 1.1 Sec. 5.2).
MPEG_PACKET_BYTES = 188
MPEG_HEADER_BYTES = 4.5
#: ITU-T J.83 Annex B: 64-QAM at 5.056941 Msym/s (6 bits a symbol) and 256-QAM at 5.360537 Msym/s
#: (8 bits) in a 6 MHz channel (DOCSIS RFI 1.1 Table 6-14).
QAM64_SYMBOL_RATE = 5.056941e6
QAM256_SYMBOL_RATE = 5.360537e6
QAM64_RAW_BPS = QAM64_SYMBOL_RATE * 6
QAM256_RAW_BPS = QAM256_SYMBOL_RATE * 8
#: DOCSIS RFI 1.1 Annex C.2.2.5.3 (Maximum Traffic Burst): 1522 bytes when the parameter is left
#: out, the largest Ethernet frame with an 802.1Q tag.
DEFAULT_MAX_TRAFFIC_BURST_BYTES = 1522

#: The two downstream physical-layer shares as Nguyen & Armitage Sec. III.C count them.
FEC_FRACTION = (RS_N - RS_K) / RS_N
MPEG_FRACTION = MPEG_HEADER_BYTES / MPEG_PACKET_BYTES


def downstream_payload_bps(raw_bps: float, *, rs_n: int = RS_N, rs_k: int = RS_K,
                           mpeg_packet_bytes: float = MPEG_PACKET_BYTES,
                           mpeg_header_bytes: float = MPEG_HEADER_BYTES) -> float:
    """Bits per second left for DOCSIS frames on a downstream channel of ``raw_bps``.

    The raw rate (symbol rate x bits per symbol) less Reed-Solomon's 6/128 and MPEG-2's 4.5/188,
    each a share of what is below it: ``raw * 122/128 * (188 - 4.5)/188``. Like Nguyen & Armitage
    Sec. III.C this leaves out J.83 Annex B's trellis code and FEC-frame sync, so for 64-QAM it is
    28.2 Mb/s where J.83B's MPEG rate would give 26.3. The keywords are the scenario's
    ``network.rs_*`` and ``network.mpeg_*``; the engine computes the same (``Docsis::payload_bps``).
    """
    return raw_bps * rs_k / rs_n * (mpeg_packet_bytes - mpeg_header_bytes) / mpeg_packet_bytes


def ethernet_frame_bytes(ip_bytes: float) -> float:
    """The Ethernet frame of an IP packet, header and FCS included, padded to the minimum frame.

    These are the bytes a DOCSIS rate cap counts: MULPI Annex C.2.2.7.2 (DOCSIS RFI 1.1 C.2.2.5.2)
    counts "all MAC frame data PDU ... from the byte following the MAC header HCS to the end of
    the CRC".
    """
    return max(ip_bytes + ETHERNET_HEADER_BYTES, ETHERNET_MIN_FRAME_BYTES)


def docsis_frame_bytes(ip_bytes: float) -> float:
    """An IP packet as a DOCSIS MAC frame: its Ethernet frame behind the 6-byte MAC header."""
    return ethernet_frame_bytes(ip_bytes) + DOCSIS_HEADER_BYTES


def ethernet_wire_bytes(ip_bytes: float) -> float:
    """What an IP packet takes on an Ethernet wire: its frame plus preamble and inter-frame gap."""
    return ethernet_frame_bytes(ip_bytes) + ETHERNET_GAP_BYTES
