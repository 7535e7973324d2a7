"""Loss-based TCP throughput formulas: Mathis et al. 1997 and Padhye et al. 1998 (PFTK).

All functions are vectorised over ``loss`` (a scalar gives a float, an array an array) and return
bits per second of payload, ``8 * mss_bytes * packets/s``.

Sources: M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of the TCP congestion
avoidance algorithm", CCR 27(3), 1997; J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP
throughput: a simple model and its empirical validation", SIGCOMM 1998 (eqs. (31)-(33) in the
SIGCOMM numbering; the ToN 2000 version numbers them differently); RFC 3448 Sec. 3.1.
"""

from __future__ import annotations

import numpy as np

from hfcsim.models._checks import _loss_array, _out, _positive

__all__ = [
    "mathis_constant",
    "mathis_throughput_bps",
    "pftk_throughput_bps",
    "pftk_approx_throughput_bps",
    "rfc3448_throughput_bps",
]


def mathis_constant(packets_per_ack: float = 1.0) -> float:
    """C = sqrt(3 / (2 b)) of Mathis et al. (periodic loss, b packets per ACK): 1.22 for b = 1."""
    b = _positive("packets_per_ack", packets_per_ack)
    return float(np.sqrt(3.0 / (2.0 * b)))


def mathis_throughput_bps(mss_bytes: float, rtt_s: float, loss, packets_per_ack: float = 1.0):
    """Mathis et al. 1997: BW = (MSS / RTT) * C / sqrt(p), C = sqrt(3 / (2 b)).

    Congestion avoidance only (a sawtooth from W/2 to W, one loss per cycle), no timeouts, no
    receiver-window cap: valid for small p (roughly p < 1-2 %) and long transfers; it grows without
    bound as p -> 0. ``loss`` in (0, 1).
    """
    mss = _positive("mss_bytes", mss_bytes)
    rtt = _positive("rtt_s", rtt_s)
    p = _loss_array("loss", loss)
    c = mathis_constant(packets_per_ack)
    return _out(8.0 * mss / rtt * c / np.sqrt(p), loss)


def _pftk_q(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """PFTK Q^(p, w): probability that a loss in a window of w is detected by timeout (eq. (29))."""
    q = 1.0 - p
    num = (1.0 - q**3) * (1.0 + q**3 * (1.0 - q ** np.maximum(w - 3.0, 0.0)))
    den = 1.0 - q**w
    return np.minimum(1.0, num / den)


def _pftk_g(p: np.ndarray) -> np.ndarray:
    """PFTK G(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6 (timeout back-off series)."""
    return 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def _pftk_inputs(mss_bytes, rtt_s, loss, rto_s, max_window_packets, packets_per_ack):
    """The PFTK models' inputs, checked: (mss, rtt, T0, W_max, b, p as an array)."""
    return (_positive("mss_bytes", mss_bytes), _positive("rtt_s", rtt_s), _positive("rto_s", rto_s),
            _positive("max_window_packets", max_window_packets), _positive("packets_per_ack", packets_per_ack),
            _loss_array("loss", loss))


def pftk_throughput_bps(mss_bytes: float, rtt_s: float, loss, rto_s: float,
                        max_window_packets: float, packets_per_ack: float = 2.0):
    """Padhye et al. 1998 full model (eq. (31)), with timeouts and a receiver window W_max.

    With b packets per ACK, q = 1 - p, E[W] = (2+b)/(3b) + sqrt(8q/(3bp) + ((2+b)/(3b))^2),
    Q = Q^(p, w) (timeout share), G(p) = 1 + p + 2p^2 + ... + 32p^6, T0 = ``rto_s``:

        E[W] <  W_max:  B = (q/p + E[W] + Q(E[W])/q) / (RTT (b E[W]/2 + 1) + Q(E[W]) G T0 / q)
        E[W] >= W_max:  B = (q/p + W_max + Q(W_max)/q)
                            / (RTT (b W_max/8 + q/(p W_max) + 2) + Q(W_max) G T0 / q)

    (b E[W]/2 + 1 is E[X] + 1, the rounds per congestion-avoidance period.) In packets/s; times
    8 * MSS here. As p -> 0 it tends to W_max / RTT. Valid for bulk Reno transfers with independent
    per-round losses; ``loss`` in (0, 1).
    """
    mss, rtt, t0, wmax, b, p = _pftk_inputs(mss_bytes, rtt_s, loss, rto_s, max_window_packets, packets_per_ack)
    q = 1.0 - p
    k = (2.0 + b) / (3.0 * b)
    ew = k + np.sqrt(8.0 * q / (3.0 * b * p) + k * k)
    g = _pftk_g(p)
    q_ew = _pftk_q(p, ew)
    unlimited = (q / p + ew + q_ew / q) / (rtt * (b * ew / 2.0 + 1.0) + q_ew * g * t0 / q)
    q_wm = _pftk_q(p, np.full_like(p, wmax))
    limited = (q / p + wmax + q_wm / q) / (
        rtt * (b * wmax / 8.0 + q / (p * wmax) + 2.0) + q_wm * g * t0 / q)
    pps = np.where(ew < wmax, unlimited, limited)
    return _out(8.0 * mss * pps, loss)


def pftk_approx_throughput_bps(mss_bytes: float, rtt_s: float, loss, rto_s: float,
                               max_window_packets: float, packets_per_ack: float = 2.0):
    """Padhye et al. 1998 approximate model (eq. (33)):

        B = min( W_max / RTT,  1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)) )

    packets/s, times 8 * MSS here. Within ~10-20 % of the full model for p below ~10 %.
    """
    mss, rtt, t0, wmax, b, p = _pftk_inputs(mss_bytes, rtt_s, loss, rto_s, max_window_packets, packets_per_ack)
    denom = rtt * np.sqrt(2.0 * b * p / 3.0) + t0 * np.minimum(
        1.0, 3.0 * np.sqrt(3.0 * b * p / 8.0)) * p * (1.0 + 32.0 * p**2)
    return _out(8.0 * mss * np.minimum(wmax / rtt, 1.0 / denom), loss)


def rfc3448_throughput_bps(segment_bytes: float, rtt_s: float, loss, rto_s: float | None = None,
                           packets_per_ack: float = 1.0):
    """RFC 3448 Sec. 3.1 (TFRC) simplified PFTK:

        X = s / (R sqrt(2bp/3) + t_RTO (3 sqrt(3bp/8)) p (1 + 32 p^2))

    bytes/s, times 8 here. RFC 3448 recommends t_RTO = 4 R (the default when ``rto_s`` is None)
    and b = 1. No window cap and no min(1, ...): grows without bound as p -> 0.
    """
    s = _positive("segment_bytes", segment_bytes)
    rtt = _positive("rtt_s", rtt_s)
    t_rto = 4.0 * rtt if rto_s is None else _positive("rto_s", rto_s)
    b = _positive("packets_per_ack", packets_per_ack)
    p = _loss_array("loss", loss)
    denom = rtt * np.sqrt(2.0 * b * p / 3.0) + t_rto * 3.0 * np.sqrt(3.0 * b * p / 8.0) * p * (
        1.0 + 32.0 * p**2)
    return _out(8.0 * s / denom, loss)
