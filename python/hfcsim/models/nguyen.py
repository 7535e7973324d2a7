"""Nguyen & Armitage 2004 (paper 003) Secs. III-IV: DS/US ratio, overheads, MAP-limited rates, and
a bulk download through a DS rate cap (its loaded RTT, throughput and the window that fills the cap).

Three back-of-envelope rules for a DOCSIS cable link, from Sec. III.B-C:

1. The DS/US rate-cap ratio rule (1): downstream TCP can reach its DS cap only if the US cap carries
   enough ACKs, DS/US <= DataPacketSize * d / ACKPacketSize, with d data packets per ACK.
2. The protocol-overhead arithmetic of Sec. III.C: Ethernet + TCP/IP + DOCSIS header bytes per
   packet, plus Reed-Solomon FEC (6/128) and MPEG-2 framing (4.5/188) on the downstream,
   giving 11.2 % at 1500 bytes and 18.2 % at 512 bytes.
3. The MAP-interval limits: a CM that needs a request MAP and a grant MAP per upstream packet sends
   at most 1/(interval * MAPs per packet) packets per second; downstream TCP is limited to d times
   the upstream ACK rate.

And a model of the download the paper measures in Sec. III.A (Figs. 3-8), which the paper itself
only describes: a window-limited bulk transfer through a DS token bucket at the CMTS
(:func:`bulk_download`, :func:`loaded_rtt_s`, :func:`download_throughput_bps`), and the receive
windows of Sec. IV (:func:`knee_window_bytes`, :func:`window_for_loaded_rtt_bytes`). Its accounting
is ours: bytes are counted as the rate caps count them (Ethernet frames, :mod:`hfcsim.docsis`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from hfcsim.docsis import (
    DOCSIS_HEADER_BYTES,
    ETHERNET_HEADER_BYTES,
    ETHERNET_MIN_FRAME_BYTES,
    FEC_FRACTION,
    MPEG_FRACTION,
    TCPIP_HEADER_BYTES,
    ethernet_frame_bytes,
)
from hfcsim.models import lakshman
from hfcsim.models._checks import _non_negative, _out, _positive, _require

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
    "AQMS",
    "AQM_TARGET_S",
    "AQM_MIN_QUEUE_PACKETS",
    "ds_us_ratio_limit_for_caps",
    "ds_cap_payload_bps",
    "Download",
    "bulk_download",
    "loaded_rtt_s",
    "download_throughput_bps",
    "knee_window_bytes",
    "window_for_loaded_rtt_bytes",
]

# The wire constants live in hfcsim.docsis (one place for the models and the simulator); the names
# below are re-exported for existing callers. Sec. III.C: "TCP/IP header is 40 bytes and Ethernet
# header is 18 bytes. There are 6 bytes of DOCSIS overhead"; RS (128,122) 6/128; MPEG-2 4.5/188.


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


# ---------------------------------------------------------------------------------------------
# A bulk download through the DS rate cap (Sec. III.A, Figs. 3-8; Sec. IV)

#: Queue disciplines at the CMTS's per-modem DS queue: drop-tail and three AQMs.
AQMS = ("droptail", "pie", "docsis_pie", "codel")
#: Each AQM's queue-delay target: RFC 8033 Sec. 5.1 (PIE, QDELAY_REF 15 ms), RFC 8034 Sec. 4.1
#: (DOCSIS-PIE, 10 ms; specified for the modem's upstream), RFC 8289 Sec. 4.3 (CoDel, 5 ms).
AQM_TARGET_S = {"pie": 0.015, "docsis_pie": 0.010, "codel": 0.005}
#: The queue below which each AQM never drops, in full-size packets: PIE's work-conserving safeguard, no
#: drop while the queue holds at most 2 mean-size packets (RFC 8033 Sec. 4.1 and the drop_early pseudocode of
#: Sec. 5.1; RFC 8034 keeps it); CoDel, no drop while at most one maximum-size packet is queued (RFC 8289
#: Sec. 5.5, ``queue_.bytes() <= maxpacket``).
AQM_MIN_QUEUE_PACKETS = {"pie": 2, "docsis_pie": 2, "codel": 1}


def _mss(mtu_bytes: float) -> float:
    mtu = _positive("mtu_bytes", mtu_bytes)
    _require("mtu_bytes", mtu_bytes, mtu > TCPIP_HEADER_BYTES, f"must be > {TCPIP_HEADER_BYTES}")
    return mtu - TCPIP_HEADER_BYTES


def ds_us_ratio_limit_for_caps(mtu_bytes: float, packets_per_ack: float = 1.5) -> float:
    """Eq. (1) with both packets counted as the DOCSIS rate caps count them: Ethernet frames.

    Nguyen & Armitage Sec. III.B, eq. (1), with DataPacketSize = MTU + 18 and ACKPacketSize = 64
    (a 40-byte ACK padded to the minimum frame), since the caps count "from the byte following the
    MAC header HCS to the end of the CRC" (:func:`hfcsim.docsis.ethernet_frame_bytes`). This is
    the bound at which :func:`bulk_download`'s ACK clock starts to bind: 35.6 at MTU 1500, 13.9 at
    576, with d = 1.5. :func:`ds_us_ratio_limit_for_mtu` counts the 6-byte DOCSIS header too (32.7
    at 1500), the bytes on the cable rather than what the caps meter; the paper does not say which.
    """
    mss = _mss(mtu_bytes)
    return ds_us_ratio_limit(ethernet_frame_bytes(mss + TCPIP_HEADER_BYTES),
                             ethernet_frame_bytes(TCPIP_HEADER_BYTES), packets_per_ack)


def ds_cap_payload_bps(ds_cap_bps: float, mtu_bytes: float = 1500) -> float:
    """The TCP payload rate a DS cap lets through: cap * MSS / Ethernet frame. Sec. III.C.

    The cap meters Ethernet frames (:func:`hfcsim.docsis.ethernet_frame_bytes`), so of each
    MTU + 18 bytes it passes MTU - 40 are payload: 2 Mb/s at MTU 1500 -> 1.924 Mb/s. The paper's
    "expected throughput" (:func:`expected_throughput_bps`, 1.777 Mb/s) also counts FEC and MPEG-2
    against the cap; they are below the cap, on the channel, so a token bucket does not meter them.
    """
    cap = _positive("ds_cap_bps", ds_cap_bps)
    mss = _mss(mtu_bytes)
    return cap * mss / ethernet_frame_bytes(mss + TCPIP_HEADER_BYTES)


@dataclass(frozen=True)
class Download:
    """What :func:`bulk_download` predicts for one window-limited bulk download.

    ``segments`` in flight (each ``segment_bytes`` of payload); ``bottleneck`` is "ds_cap",
    "ack_clock" (the US cap's ACK rate, eq. (1)) or "map" (the MAP cycle, Sec. III.C);
    ``limits_bps`` the payload rate each of those allows; ``queue_bytes`` / ``queue_s`` the
    standing queue at the bottleneck (data frames at the CMTS, or ACK frames at the modem) and the
    delay it adds; ``loaded_rtt_s`` the ping RTT under load; ``throughput_bps`` TCP payload bits
    per second; ``loss_cycles`` whether the window overruns the CMTS buffer or the AQM's target,
    so that the sender saws between half and all of it.
    """

    segments: int
    segment_bytes: float
    bottleneck: str
    limits_bps: dict[str, float] = field(repr=False)
    queue_bytes: float
    queue_s: float
    loaded_rtt_s: float
    throughput_bps: float
    loss_cycles: bool


def bulk_download(
    window_bytes: float,
    ds_cap_bps: float,
    idle_rtt_s: float,
    mtu_bytes: float = 1500,
    *,
    us_cap_bps: float | None = None,
    buffer_bytes: float | None = None,
    aqm: str = "droptail",
    packets_per_ack: float = 1.5,
    map_interval_s: float = 0.002,
    maps_per_packet: float | None = 2.0,
) -> Download:
    """A window-limited bulk download through a DS token bucket at the CMTS (Sec. III.A, IV).

    The paper measures this (Figs. 3-8) and explains it in words: the window that the receiver
    allows and the cap cannot carry waits in the CMTS's queue, and every packet to the modem, a
    ping's echo reply too, waits behind it. The model, ours:

    - The sender keeps ``N = floor(window / MSS)`` full segments in flight (the sender's silly
      window avoidance, RFC 9293 Sec. 3.8.6.2.1, holds back the remainder), one segment of
      ``window`` bytes when the window is below one MSS.
    - The bottleneck serves segments at ``r = min(ds_cap / (8 F), d us_cap / (8 A), d pps_MAP)``
      per second, F = ethernet_frame_bytes(MTU) and A = 64-byte ACK frames as the caps count them,
      pps_MAP = :func:`upstream_packet_rate_pps` (set ``maps_per_packet=None`` when piggybacked
      requests or concatenation lift it).
    - Standing queue ``Q = max(0, N - r * idle_rtt)`` segments: for the DS cap, in bytes,
      ``max(0, N F - ds_cap * idle_rtt / 8)``, the window in frames less what the cap carries in
      an idle RTT. It adds ``Q / r`` seconds: ``loaded_rtt = idle_rtt + Q / r``. When the US is the
      bottleneck the queue is of ACKs at the modem and the ping's echo request waits behind it.
    - A finite CMTS buffer (``buffer_bytes``) or an AQM bounds the DS queue at B = buffer / F
      segments or r * target (:data:`AQM_TARGET_S`), but not below the queue at which the AQM stops
      dropping (:data:`AQM_MIN_QUEUE_PACKETS`: 2 packets for PIE, 1 for CoDel). A window beyond r * idle_rtt + B is lost in
      Reno cycles between half and all of it (:func:`hfcsim.models.lakshman.reno_cycle`, with
      tau = idle RTT); the queue then reported is its peak (the buffer, what Figs. 7-8 plot) for
      drop-tail, and about the target for an AQM, an approximation: PIE steers the mean queue
      delay to its target (RFC 8033 Sec. 4.2), CoDel the minimum sojourn over 100 ms (RFC 8289
      Sec. 3), neither exactly a ceiling.
    - Throughput ``min(r MSS 8, N MSS 8 / loaded_rtt)``, times the Reno cycle's utilisation under
      loss cycles: the DS cap in payload terms (:func:`ds_cap_payload_bps`), the ACK clock of eq.
      (1) (:func:`ack_limited_downstream_bps`), the MAP limit (:func:`downstream_packet_rate_pps`)
      or the window.

    Left out: the token bucket's burst (it lets ``ds_burst_bytes`` through at channel rate once,
    not in the long run), the idle-RTT window's delayed-ACK holds and MAP waits, the ping's own
    frame. ``idle_rtt_s`` is the ping RTT of an idle link (13 ms in the paper). ``us_cap_bps``
    None: no US cap. ``buffer_bytes`` None: unbounded.
    """
    window = _positive("window_bytes", window_bytes)
    ds_cap = _positive("ds_cap_bps", ds_cap_bps)
    idle = _non_negative("idle_rtt_s", idle_rtt_s)
    mss = _mss(mtu_bytes)
    d = _positive("packets_per_ack", packets_per_ack)
    us_cap = None if us_cap_bps is None else _positive("us_cap_bps", us_cap_bps)
    buffer = None if buffer_bytes is None else _non_negative("buffer_bytes", buffer_bytes)
    if aqm not in AQMS:
        raise ValueError(f"aqm = {aqm!r}: must be one of {', '.join(AQMS)}")

    segments = max(1, math.floor(window / mss + 1e-9))
    seg = mss if window >= mss else window
    frame = ethernet_frame_bytes(seg + TCPIP_HEADER_BYTES)
    ack = ethernet_frame_bytes(TCPIP_HEADER_BYTES)
    rates = {"ds_cap": ds_cap / (8.0 * frame)}  # segments per second
    if us_cap is not None:
        rates["ack_clock"] = ack_limited_downstream_bps(us_cap, 1.0, ack, d) / 8.0
    if maps_per_packet is not None:
        rates["map"] = float(downstream_packet_rate_pps(d, map_interval_s, maps_per_packet))
    bottleneck = min(rates, key=rates.__getitem__)
    r = rates[bottleneck]
    bytes_per_segment = frame if bottleneck == "ds_cap" else ack / d

    queue = max(0.0, segments - r * idle)
    bound = math.inf
    if bottleneck == "ds_cap":
        if buffer is not None:
            bound = buffer / frame
        if aqm != "droptail":
            bound = min(bound, max(r * AQM_TARGET_S[aqm], AQM_MIN_QUEUE_PACKETS[aqm]))
    loss_cycles = queue > bound
    utilisation = 1.0
    if loss_cycles:
        queue = bound
        utilisation = lakshman.reno_cycle(r, idle, bound).utilisation if idle > 0 else 1.0
    queue_s = queue / r
    rtt = idle + queue_s
    throughput = min(r * seg * 8.0, segments * seg * 8.0 / rtt if rtt > 0 else math.inf) * utilisation
    return Download(segments, seg, bottleneck, {k: v * seg * 8.0 for k, v in rates.items()},
                    queue * bytes_per_segment, queue_s, rtt, throughput, loss_cycles)


def loaded_rtt_s(window_bytes: float, ds_cap_bps: float, idle_rtt_s: float, mtu_bytes: float = 1500,
                 **kwargs) -> float:
    """The ping RTT during a bulk download: idle RTT + the standing queue's delay (Sec. III.A).

    :func:`bulk_download`'s ``loaded_rtt_s``, same arguments. Through a 2 Mb/s DS cap alone, with a
    32 KB window, MTU 1500 and 13 ms idle: 22 x 1518 B frames less 3250 B in the pipe leave 30146 B
    queued, 120.6 ms at 2 Mb/s, so 133.6 ms (the paper measured ~120 ms, Fig. 4).
    """
    return bulk_download(window_bytes, ds_cap_bps, idle_rtt_s, mtu_bytes, **kwargs).loaded_rtt_s


def download_throughput_bps(window_bytes: float, ds_cap_bps: float, idle_rtt_s: float,
                            mtu_bytes: float = 1500, **kwargs) -> float:
    """TCP payload rate of the bulk download: min(DS cap in payload terms, window / loaded RTT,
    the ACK clock of eq. (1), the MAP limit). :func:`bulk_download`'s ``throughput_bps``."""
    return bulk_download(window_bytes, ds_cap_bps, idle_rtt_s, mtu_bytes, **kwargs).throughput_bps


def knee_window_bytes(ds_cap_bps: float, idle_rtt_s: float, mtu_bytes: float = 1500) -> float:
    """The smallest whole-MSS window that fills the DS cap; beyond it only the queue grows.

    ceil(ds_cap * idle_rtt / (8 F)) segments of MSS (F the Ethernet frame, as the cap counts it),
    at least one: the bandwidth-delay product at the *idle* RTT. Every segment more adds F bytes
    to the CMTS queue and F * 8 / ds_cap to every RTT, and no throughput (Sec. III.A, Fig. 8).
    2 Mb/s, 13 ms, MTU 1500: 3250 B / 1518 B = 2.14 -> 3 segments, 4380 B. The rounding up is ours.
    """
    cap = _positive("ds_cap_bps", ds_cap_bps)
    idle = _non_negative("idle_rtt_s", idle_rtt_s)
    mss = _mss(mtu_bytes)
    frame = ethernet_frame_bytes(mss + TCPIP_HEADER_BYTES)
    return max(1, math.ceil(cap * idle / (8.0 * frame) - 1e-9)) * mss


def window_for_loaded_rtt_bytes(ds_cap_bps: float, loaded_rtt_s: float, mtu_bytes: float = 1500) -> float:
    """The receive window sized from the loaded RTT: the DS cap's bandwidth-delay product. Sec. IV.

    Nguyen & Armitage Sec. IV: "network users should calculate optimal receive window sizes using
    RTT of a loaded (rather than idle) DOCSIS link"; Sec. III.A: "in theory the RTT multiplied by
    the bottleneck bandwidth". Ours: whole segments, floor(ds_cap * loaded_rtt / (8 F)) of MSS
    (F the Ethernet frame as the cap counts it), at least one. Rounding down keeps the standing
    queue the window builds within ``loaded_rtt - idle_rtt``, so the loaded RTT to give is the RTT
    one accepts under load: idle + a queueing target. 2 Mb/s, 13 + 20 ms, MTU 1500: 8250 B / 1518
    B = 5.43 -> 5 segments, 7300 B (queue 4340 B, 17.4 ms).
    """
    cap = _positive("ds_cap_bps", ds_cap_bps)
    rtt = _positive("loaded_rtt_s", loaded_rtt_s)
    mss = _mss(mtu_bytes)
    frame = ethernet_frame_bytes(mss + TCPIP_HEADER_BYTES)
    return max(1, math.floor(cap * rtt / (8.0 * frame) + 1e-9)) * mss
