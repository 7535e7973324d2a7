"""Nguyen & Armitage 2004 (paper 003) Sec. III.B-C: DS/US ratio, overheads, MAP-limited rates.

Three back-of-envelope rules for a DOCSIS cable link:

1. The DS/US rate-cap ratio rule (1): downstream TCP can reach its DS cap only if the US cap carries
   enough ACKs, DS/US <= DataPacketSize * d / ACKPacketSize, with d data packets per ACK.
2. The protocol-overhead arithmetic of Sec. III.C: Ethernet + TCP/IP + DOCSIS header bytes per
   packet, plus Reed-Solomon FEC (6/128) and MPEG-2 framing (4.5/188) on the downstream,
   giving 11.2 % at 1500 bytes and 18.2 % at 512 bytes.
3. The MAP-interval limits: a CM that needs a request MAP and a grant MAP per upstream packet sends
   at most 1/(interval * MAPs per packet) packets per second; downstream TCP is limited to d times
   the upstream ACK rate.
"""

from __future__ import annotations

import numpy as np

from hfcsim.models import _non_negative, _out, _positive, _require

__all__ = [
    "ETHERNET_HEADER_BYTES",
    "DOCSIS_HEADER_BYTES",
    "TCPIP_HEADER_BYTES",
    "ETHERNET_MIN_FRAME_BYTES",
    "FEC_FRACTION",
    "MPEG_FRACTION",
    "ds_us_ratio_limit",
    "ds_us_ratio_limit_for_mtu",
    "ack_limited_downstream_bps",
    "header_overhead_fraction",
    "overhead_fraction",
    "expected_throughput_bps",
    "map_overhead_bps",
    "upstream_packet_rate_pps",
    "upstream_rate_limit_bps",
    "downstream_packet_rate_pps",
]

#: Sec. III.C: "TCP/IP header is 40 bytes and Ethernet header is 18 bytes. There are 6 bytes of
#: DOCSIS overhead."
TCPIP_HEADER_BYTES = 40
ETHERNET_HEADER_BYTES = 18
DOCSIS_HEADER_BYTES = 6
#: IEEE 802.3 minimum frame (header + CRC included): a 40-byte TCP/IP ACK is padded to it.
ETHERNET_MIN_FRAME_BYTES = 64
#: Sec. III.C: ITU-T J.83 Annex B Reed-Solomon (128,122): 6 of every 128 symbols.
FEC_FRACTION = 6 / 128
#: Sec. III.C: MPEG-2 transport, 188-byte packets with 4-5 (mean 4.5) bytes of header.
MPEG_FRACTION = 4.5 / 188


def ds_us_ratio_limit(data_packet_bytes: float, ack_packet_bytes: float,
                      packets_per_ack: float = 1.5) -> float:
    """Largest DS/US rate-cap ratio at which the US still carries enough ACKs: eq. (1).

    Nguyen & Armitage Sec. III.B, eq. (1):  DS/US <= DataPacketSize * d / ACKPacketSize.
    Both sizes must be counted the way the rate caps count them (see
    :func:`ds_us_ratio_limit_for_mtu`). Holds for a bulk download with one ACK per d data packets
    and no other upstream traffic; the MAP-interval limit (:func:`upstream_packet_rate_pps`) may
    bind first.
    """
    data = _positive("data_packet_bytes", data_packet_bytes)
    ack = _positive("ack_packet_bytes", ack_packet_bytes)
    d = _positive("packets_per_ack", packets_per_ack)
    return data * d / ack


def ds_us_ratio_limit_for_mtu(
    mtu_bytes: float,
    packets_per_ack: float = 1.5,
    ethernet_header_bytes: float = ETHERNET_HEADER_BYTES,
    docsis_header_bytes: float = DOCSIS_HEADER_BYTES,
    ack_ip_bytes: float = TCPIP_HEADER_BYTES,
    min_frame_bytes: float = ETHERNET_MIN_FRAME_BYTES,
) -> float:
    """Eq. (1) for an IP MTU, counting each packet as the paper's Sec. III.C does on the cable.

    data = MTU + Ethernet (18) + DOCSIS (6) bytes; ACK = max(40 + 18, 64) + 6 = 70 bytes (a 40-byte
    TCP/IP ACK padded to the 64-byte minimum Ethernet frame, plus the DOCSIS header). This packet
    accounting is ours: the paper does not say which sizes it put in (1).

    With d = 1.5 it gives 32.7 (MTU 1500), 27.3 (1250), 12.9 (576), 11.5 (512). The paper reads
    "~31 for MTU 1500 and 1250" and "~12 for 576 and 512" off the knees of its Fig. 9, where the
    DS cap is 2 Mb/s and the US cap is stepped (2 Mb/s / 64 kb/s = 31.25): one value for two MTUs
    cannot come from (1) itself, so expect agreement to ~15 %, not exactly. With bare 40-byte IP
    ACKs (1) would give 56 for MTU 1500, far from what the paper measured.
    """
    mtu = _positive("mtu_bytes", mtu_bytes)
    eth = _non_negative("ethernet_header_bytes", ethernet_header_bytes)
    docsis = _non_negative("docsis_header_bytes", docsis_header_bytes)
    ack_ip = _positive("ack_ip_bytes", ack_ip_bytes)
    min_frame = _non_negative("min_frame_bytes", min_frame_bytes)
    return ds_us_ratio_limit(mtu + eth + docsis, max(ack_ip + eth, min_frame) + docsis,
                             packets_per_ack)


def ack_limited_downstream_bps(upstream_bps: float, data_packet_bytes: float,
                               ack_packet_bytes: float, packets_per_ack: float = 1.5) -> float:
    """Downstream rate the US cap's ACK stream can clock: US * data * d / ACK (eq. (1) rearranged).

    Nguyen & Armitage Sec. III.B. The achievable downstream rate is the smaller of this and the DS
    cap. Same range as :func:`ds_us_ratio_limit`.
    """
    us = _positive("upstream_bps", upstream_bps)
    return us * ds_us_ratio_limit(data_packet_bytes, ack_packet_bytes, packets_per_ack)


def header_overhead_fraction(
    payload_bytes: float,
    tcpip_header_bytes: float = TCPIP_HEADER_BYTES,
    ethernet_header_bytes: float = ETHERNET_HEADER_BYTES,
    docsis_header_bytes: float = DOCSIS_HEADER_BYTES,
) -> float:
    """Per-packet header share h / (payload + h), h = 40 + 18 + 6 = 64 bytes: Sec. III.C.

    Nguyen & Armitage Sec. III.C: "Packet size = Payload + headers"; 4.1 % for a 1500-byte packet
    (64/1564) and 11.1 % for 512 (64/576). The paper applies it with the quoted packet size as the
    payload; for an IP MTU of 1500 the TCP payload is 1460 and the share is 64/1524 = 4.2 %.
    """
    payload = _positive("payload_bytes", payload_bytes)
    h = (_non_negative("tcpip_header_bytes", tcpip_header_bytes)
         + _non_negative("ethernet_header_bytes", ethernet_header_bytes)
         + _non_negative("docsis_header_bytes", docsis_header_bytes))
    return h / (payload + h)


def overhead_fraction(
    payload_bytes: float,
    fec_fraction: float = FEC_FRACTION,
    mpeg_fraction: float = MPEG_FRACTION,
    combine: str = "additive",
    **header_bytes: float,
) -> float:
    """Total downstream overhead share: headers + FEC + MPEG-2. Sec. III.C.

    ``combine="additive"`` is the paper's arithmetic, 64/(payload+64) + 6/128 + 4.5/188:
    11.17 % at 1500 bytes and 18.19 % at 512 (the paper: 11.2 % and 18.2 %).
    ``combine="compound"`` is 1 - (1-h)(1-fec)(1-mpeg), the share of channel bits that are not
    payload when each layer wraps the one above: 10.8 % and 17.3 %, since the additive form
    counts each layer's overhead on the payload rather than on the layer below. Header sizes may be
    overridden by keyword (``tcpip_header_bytes``, ``ethernet_header_bytes``,
    ``docsis_header_bytes``).
    """
    h = header_overhead_fraction(payload_bytes, **header_bytes)
    fec = _non_negative("fec_fraction", fec_fraction)
    mpeg = _non_negative("mpeg_fraction", mpeg_fraction)
    _require("fec_fraction", fec_fraction, fec < 1, "must be < 1")
    _require("mpeg_fraction", mpeg_fraction, mpeg < 1, "must be < 1")
    if combine == "additive":
        total = h + fec + mpeg
    elif combine == "compound":
        total = 1.0 - (1.0 - h) * (1.0 - fec) * (1.0 - mpeg)
    else:
        raise ValueError(f"combine = {combine!r}: must be 'additive' or 'compound'")
    return total


def expected_throughput_bps(rate_cap_bps: float, payload_bytes: float,
                            combine: str = "additive", **overheads: float) -> float:
    """Expected TCP payload rate under a rate cap: cap * (1 - overhead_fraction). Sec. III.C.

    Nguyen & Armitage's "expected throughput": the configured cap less header, FEC and MPEG-2
    overhead (e.g. 2 Mb/s at 1500 bytes -> 1.78 Mb/s). It ignores MAP traffic
    (:func:`map_overhead_bps`, shared by the whole channel, not per CM), ACK clocking
    (:func:`ack_limited_downstream_bps`) and TCP window limits.
    """
    cap = _positive("rate_cap_bps", rate_cap_bps)
    return cap * (1.0 - overhead_fraction(payload_bytes, combine=combine, **overheads))


def map_overhead_bps(map_interval_s: float = 0.002, map_bytes: float = 64) -> float:
    """Downstream capacity taken by MAP messages: 8 * map_bytes / map_interval_s. Sec. III.C.

    Nguyen & Armitage: one 64-byte MAP every 2 ms -> 500 MAPs/s -> 256 kb/s of the DS channel.
    """
    interval = _positive("map_interval_s", map_interval_s)
    size = _positive("map_bytes", map_bytes)
    return 8.0 * size / interval


def upstream_packet_rate_pps(map_interval_s=0.002, maps_per_packet: float = 2.0):
    """Upstream packets per second a CM can send: 1 / (map_interval_s * maps_per_packet).

    Nguyen & Armitage Sec. III.C: a 2 ms MAP interval and two MAPs per packet (one to carry the
    request, one the grant) -> 250 packets/s, whatever the US rate cap. Vectorised over
    ``map_interval_s``. Holds without piggybacked requests or concatenation, which let one grant
    carry several packets.
    """
    interval = np.asarray(map_interval_s, dtype=float)
    if (~np.isfinite(interval) | (interval <= 0)).any():
        bad = (interval[~np.isfinite(interval) | (interval <= 0)].flat[0] if interval.ndim
               else interval)
        raise ValueError(f"map_interval_s = {float(bad):g}: must be > 0")
    k = _positive("maps_per_packet", maps_per_packet)
    return _out(1.0 / (interval * k), map_interval_s)


def upstream_rate_limit_bps(frame_bytes: float = 1518, map_interval_s: float = 0.002,
                            maps_per_packet: float = 2.0) -> float:
    """Upstream bit-rate limit from the MAP cycle: 8 * frame_bytes * packets/s. Sec. III.C.

    Nguyen & Armitage: 250 packets/s of 1518-byte Ethernet frames -> 3.04 Mb/s ("roughly 3 Mbps").
    """
    frame = _positive("frame_bytes", frame_bytes)
    return 8.0 * frame * upstream_packet_rate_pps(map_interval_s, maps_per_packet)


def downstream_packet_rate_pps(packets_per_ack=1.5, map_interval_s: float = 0.002,
                               maps_per_packet: float = 2.0):
    """Downstream TCP data packets per second clocked by the MAP-limited ACK rate: d * US pps.

    Nguyen & Armitage Sec. III.C: 250 ACKs/s and one to two data packets per ACK -> 250-500
    packets/s downstream "regardless of the actual bits/second limit". Vectorised over
    ``packets_per_ack``. Same range as :func:`upstream_packet_rate_pps`, and only when the ACKs are
    the CM's only upstream traffic.
    """
    d = np.asarray(packets_per_ack, dtype=float)
    if (~np.isfinite(d) | (d <= 0)).any():
        bad = d[~np.isfinite(d) | (d <= 0)].flat[0] if d.ndim else d
        raise ValueError(f"packets_per_ack = {float(bad):g}: must be > 0")
    return _out(d * upstream_packet_rate_pps(map_interval_s, maps_per_packet), packets_per_ack)
