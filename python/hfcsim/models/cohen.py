"""Cohen & Ramanathan 1998 (paper 001) Sec. V.B, "Determining the TCP Buffer Size".

The largest TCP socket buffer a local server may use so that a window sent back to back over the
downstream channel does not overrun the cable modem's (CM's) buffer and force a timeout.

Derivation (the paper's, generalised from 25 and 10 Mb/s to any rates r_ds > r_lan):
a window of B packets of P bits arrives at the CM back to back at r_ds. The CM starts forwarding
onto its LAN (rate r_lan) once the first packet is fully in, leaving C - 1 free places. During the
arrival of the other B - 1 packets, which lasts (B - 1) P / r_ds, the CM forwards
(B - 1) P r_lan / r_ds bits, so the net accumulation is

    (B - 1) * (1 - r_lan / r_ds)  packets.

No packet is dropped if  C >= (B - 1)(1 - r_lan/r_ds) + 1  (the strict form). Slow start only times
out when a window loses several packets, so the paper relaxes this to at most one drop:
C >= (B - 1)(1 - r_lan/r_ds). For n connections whose windows arrive together the paper writes
C >= (B n - 1)(1 - r_lan/r_ds) (relaxed form; the strict form adds 1 the same way). With
r_ds = 25 and r_lan = 10 Mb/s, 1 - r_lan/r_ds = 15/25, the paper's printed factor.

Units. The paper counts B and C in "TCP packets" of the maximum size P (MSS + TCP/IP header) and
ignores link-layer headers. Here a CM buffer in bytes becomes C = cm_buffer_bytes / (mss + header)
packets with no rounding (the CM is treated as a byte buffer), and a socket buffer of B packets is
B * mss bytes, because a socket buffer holds data, not headers. The paper's example rounds the
10 KB buffer to "seven packets" (10240/1460 = 7.0; 10240/1500 = 6.8) and quotes the answer as
B * P = 12.67 * 1.5 KB = 19 KB; in data bytes the same window is 12.67 * 1460 = 18.5 KB. All
readings lie in the 18-19 KB of claim C-bufrule (hfcsim.papers.cohen98).

A BSD sender rounds its socket buffer up to a whole number of MSS (Net/3 ``tcp_mss``; hfcsim's
engine does the same), so a setting of 18 KB acts as 13 segments. Use
:func:`max_socket_buffer_whole_mss` for the largest setting that still satisfies the rule after that
rounding.

Range: one bottleneck (the CM's LAN port), back-to-back arrival at r_ds (a server on the headend
LAN, no other queue in between), no competing traffic at the CM. If r_lan >= r_ds nothing
accumulates and any socket buffer is safe: the functions return ``math.inf``.
"""

from __future__ import annotations

import math

from hfcsim.models._checks import _positive, _positive_int, _require

__all__ = [
    "accumulation_factor",
    "max_socket_buffer",
    "max_socket_buffer_packets",
    "max_socket_buffer_whole_mss",
    "min_cm_buffer",
    "min_cm_buffer_packets",
]


def accumulation_factor(downstream_bps: float, cm_lan_bps: float) -> float:
    """Packets accumulated at the CM per packet arriving after the first: max(0, 1 - r_lan/r_ds).

    Cohen & Ramanathan Sec. V.B ((25 - 10)/25 = 0.6 for the paper's network).
    """
    r_ds = _positive("downstream_bps", downstream_bps)
    r_lan = _positive("cm_lan_bps", cm_lan_bps)
    return max(0.0, 1.0 - r_lan / r_ds)


def max_socket_buffer_packets(
    cm_buffer_packets: float,
    downstream_bps: float,
    cm_lan_bps: float,
    connections: int = 1,
    allow_one_drop: bool = True,
) -> float:
    """Largest socket buffer B in packets for a CM buffer of C packets (real-valued, not rounded).

    Cohen & Ramanathan Sec. V.B, solved for B with f = 1 - r_lan/r_ds and n connections:

        relaxed (at most one drop):  B = (C / f + 1) / n
        strict (no drop):            B = ((C - 1) / f + 1) / n

    Returns ``math.inf`` when f = 0 (r_lan >= r_ds) and 0 when no window satisfies the rule.
    """
    c = _positive("cm_buffer_packets", cm_buffer_packets)
    n = _positive_int("connections", connections)
    f = accumulation_factor(downstream_bps, cm_lan_bps)
    if f == 0.0:
        return math.inf
    room = c if allow_one_drop else c - 1.0
    return max(0.0, (room / f + 1.0) / n)


def min_cm_buffer_packets(
    socket_buffer_packets: float,
    downstream_bps: float,
    cm_lan_bps: float,
    connections: int = 1,
    allow_one_drop: bool = True,
) -> float:
    """Smallest CM buffer C in packets for a socket buffer of B packets (the inverse rule).

    Cohen & Ramanathan Sec. V.B: C = (B n - 1)(1 - r_lan/r_ds) [+ 1 for the strict no-drop form].
    A one-packet window needs no room in the relaxed form (C = 0) and one packet in the strict form.
    """
    b = _positive("socket_buffer_packets", socket_buffer_packets)
    n = _positive_int("connections", connections)
    f = accumulation_factor(downstream_bps, cm_lan_bps)
    c = max(0.0, b * n - 1.0) * f
    return c if allow_one_drop else c + 1.0


def _packet_bytes(mss_bytes: float, header_bytes: float) -> tuple[float, float]:
    mss = _positive("mss_bytes", mss_bytes)
    _require("header_bytes", header_bytes, header_bytes >= 0, "must be >= 0")
    return mss, mss + float(header_bytes)


def max_socket_buffer(
    cm_buffer_bytes: float,
    downstream_bps: float,
    cm_lan_bps: float,
    connections: int = 1,
    mss_bytes: int = 1460,
    header_bytes: int = 40,
    allow_one_drop: bool = True,
) -> float:
    """Largest socket buffer in bytes (of data) for a CM buffer of ``cm_buffer_bytes``.

    Cohen & Ramanathan Sec. V.B generalised (see the module docstring for the derivation):
    C = cm_buffer_bytes / P with P = mss_bytes + header_bytes (the paper's maximum TCP packet),
    B = (C / (1 - r_lan/r_ds) + 1) / n packets (relaxed; strict uses C - 1), result B * mss_bytes.
    No rounding: see :func:`max_socket_buffer_whole_mss` for a BSD-rounded setting.

    Paper example: 10 KB CM buffer, 25 / 10 Mb/s, one connection -> 18 072 bytes (with the paper's
    rounding to C = 7 packets: 18 493 data bytes, or 19 000 bytes counting 1500-byte packets, the
    paper's "19 kb"). Holds for one CM bottleneck and back-to-back arrivals at ``downstream_bps``.
    """
    c_bytes = _positive("cm_buffer_bytes", cm_buffer_bytes)
    mss, packet = _packet_bytes(mss_bytes, header_bytes)
    b = max_socket_buffer_packets(c_bytes / packet, downstream_bps, cm_lan_bps, connections,
                                  allow_one_drop)
    return b * mss


def max_socket_buffer_whole_mss(
    cm_buffer_bytes: float,
    downstream_bps: float,
    cm_lan_bps: float,
    connections: int = 1,
    mss_bytes: int = 1460,
    header_bytes: int = 40,
    allow_one_drop: bool = True,
) -> float:
    """Largest whole-MSS socket buffer in bytes satisfying the rule: floor(B) * mss_bytes.

    A BSD sender (Net/3 ``tcp_mss``, and hfcsim's engine) rounds the socket buffer *up* to a whole
    number of segments, so any setting in (k-1, k] * MSS acts as k segments; the largest setting
    that is safe after the rounding is floor(B) segments. Example: 10 KB CM, 25/10 Mb/s ->
    floor(12.38) = 12 segments = 17 520 bytes. Returns ``math.inf`` when r_lan >= r_ds.
    """
    mss, _ = _packet_bytes(mss_bytes, header_bytes)
    b_bytes = max_socket_buffer(cm_buffer_bytes, downstream_bps, cm_lan_bps, connections,
                                mss_bytes, header_bytes, allow_one_drop)
    if math.isinf(b_bytes):
        return math.inf
    # 1e-9 guards against B landing a hair below an integer by floating-point error.
    return float(math.floor(b_bytes / mss + 1e-9) * mss)


def min_cm_buffer(
    socket_buffer_bytes: float,
    downstream_bps: float,
    cm_lan_bps: float,
    connections: int = 1,
    mss_bytes: int = 1460,
    header_bytes: int = 40,
    allow_one_drop: bool = True,
) -> float:
    """Smallest CM buffer in bytes for a socket buffer of ``socket_buffer_bytes`` (of data).

    Inverse of :func:`max_socket_buffer`: B = socket_buffer_bytes / mss_bytes packets,
    C = (B n - 1)(1 - r_lan/r_ds) [+ 1 strict] packets, result C * (mss_bytes + header_bytes).
    Cohen & Ramanathan Sec. V.B; same range as :func:`max_socket_buffer`.
    """
    s = _positive("socket_buffer_bytes", socket_buffer_bytes)
    mss, packet = _packet_bytes(mss_bytes, header_bytes)
    c = min_cm_buffer_packets(s / mss, downstream_bps, cm_lan_bps, connections, allow_one_drop)
    return c * packet
