"""Lakshman & Madhow 1997 (paper 004) Secs. II-III: one TCP connection through one bottleneck.

Model (Sec. II): a link of mu packets/s with a FIFO buffer of B packets, propagation delay tau
(everything but service and queueing at the bottleneck), ACKs sent at once, losses detected
perfectly. T = tau + 1/mu, the bandwidth-delay product is mu*T = mu*tau + 1 and beta = B/(mu*T).

Buffer conventions. Eq. (1), W_pipe = mu*T + B, counts B as *waiting* places, the packet in
service being part of mu*T. Eqs. (3)-(4) count the packet in service *in* the buffer (overflow when
Q = m + 2 reaches B + 1). hfcsim's engine counts B as waiting places (eq. (1)), so its slow-start
overflow comes one packet later, at 2^{n_b} + B + 1: pass ``buffer_counts_in_service=False``.
Fig. 1's "overflow at 26, detected by 50, threshold 25" follows eq. (4) with B = 10.

The paper's copy ends inside Sec. III.A. Everything about Tahoe/Reno cycle throughput and random
loss below is **derived here** from the setup of Secs. II-III (it is not transcribed from the
paper); each function says which approximations it makes.

Congestion avoidance, used throughout (derived): each ACK adds 1/W, so going from W1 to W2 takes
N = (W2^2 - W1^2)/2 ACKs (= packets delivered) whatever the rate. While W <= mu*T the queue is
empty, the RTT is T and W grows by one per RTT: T*(W2 - W1) seconds. Beyond mu*T the link is
saturated, ACKs come at mu, dW/dt = mu/W: (W2^2 - W1^2)/(2 mu) seconds (slower than one per RTT,
the paper's "linearly and then more slowly").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hfcsim.models._checks import _loss_array, _non_negative, _out, _positive, _require

__all__ = [
    "round_trip_s",
    "pipe_window_packets",
    "normalised_buffer",
    "SlowStartRow",
    "slow_start_window",
    "slow_start_queue",
    "slow_start_rows",
    "slow_start_overflow",
    "slow_start_detection_window",
    "double_slow_start",
    "double_slow_start_approx",
    "Cycle",
    "congestion_avoidance",
    "tahoe_cycle",
    "reno_cycle",
    "reno_utilisation_random_loss",
    "random_loss_window",
    "throughput_random_loss_pps",
]


def round_trip_s(mu_pps: float, tau_s: float) -> float:
    """T = tau + 1/mu: propagation delay plus one service time (Sec. III)."""
    mu = _positive("mu_pps", mu_pps)
    tau = _non_negative("tau_s", tau_s)
    return tau + 1.0 / mu


def pipe_window_packets(mu_pps: float, tau_s: float, buffer_packets: float) -> float:
    """W_pipe = mu*T + B = mu*tau + B + 1, eq. (1): the largest window the link and buffer hold.

    Lakshman & Madhow eq. (1), B counted as waiting places. Fig. 1 (tau = 1 s, mu = 100, B = 10):
    111; Fig. 2 (B = 80): 181. Loss-free Tahoe/Reno first overflow at W_pipe + 1.
    """
    b = _non_negative("buffer_packets", buffer_packets)
    return _positive("mu_pps", mu_pps) * round_trip_s(mu_pps, tau_s) + b


def normalised_buffer(mu_pps: float, tau_s: float, buffer_packets: float) -> float:
    """beta = B / (mu*T) = B / (mu*tau + 1) (Sec. III). The paper's Sec. III assumes beta <= 1."""
    b = _non_negative("buffer_packets", buffer_packets)
    return b / (_positive("mu_pps", mu_pps) * round_trip_s(mu_pps, tau_s))


@dataclass(frozen=True)
class SlowStartRow:
    """One row of Table I: at time rtts*T + services/mu the ACK of ``acked`` arrives."""

    rtts: int
    services: int
    acked: int | None
    window: int
    released: tuple[int, ...]
    queue: int

    def time_s(self, mu_pps: float, tau_s: float) -> float:
        return self.rtts * round_trip_s(mu_pps, tau_s) + self.services / _positive("mu_pps", mu_pps)


def slow_start_window(n: int, m: int) -> int:
    """Eq. (2): W = 2^n + m + 1 at the m-th ACK (0 <= m <= 2^n - 1) of mini-cycle n.

    Lakshman & Madhow eq. (2) writes the time as nT + m/mu; Table I puts the same window one T
    later (window 2 at time T, 3 at 2T), i.e. at (n+1)T + m/mu. We follow Table I. Holds while
    (2^n - 1)/mu < T (the queue empties within each mini-cycle, beta < 1) and no packet is lost.
    """
    _require("n", n, isinstance(n, int) and n >= 0, "must be an integer >= 0")
    _require("m", m, isinstance(m, int) and 0 <= m <= 2**n - 1,
             f"must be an integer in [0, {2**n - 1}]")
    return 2**n + m + 1


def slow_start_queue(m: int) -> int:
    """Eq. (3): Q = m + 2 just after the m-th ACK of a mini-cycle releases its two packets.

    Counts the packet in service. Same range as :func:`slow_start_window`.
    """
    _require("m", m, isinstance(m, int) and m >= 0, "must be an integer >= 0")
    return m + 2


def slow_start_rows(mini_cycles: int) -> list[SlowStartRow]:
    """Table I: slow start from W = 1, unlimited buffer, ``mini_cycles`` mini-cycles after t = 0.

    Row 0 is the first packet at t = 0 (window 1, queue 1). In mini-cycle n (time (n+1)T + m/mu,
    m = 0 .. 2^n - 1) the ACK of packet 2^n + m arrives, the window becomes 2^n + m + 1 (eq. (2))
    and packets 2W - 2 and 2W - 1 are released, leaving Q = m + 2 (eq. (3)) at the link. The
    paper's printed table shows both the queue before the second release and after (e.g.
    "2 - 1 + 2 = 3" then "1 + 2 - 1 + 2 = 5" at 3T + 3/mu); eq. (3)'s m + 2 is the latter.
    """
    _require("mini_cycles", mini_cycles, isinstance(mini_cycles, int) and mini_cycles >= 0,
             "must be an integer >= 0")
    rows = [SlowStartRow(0, 0, None, 1, (1,), 1)]
    for n in range(mini_cycles):
        for m in range(2**n):
            w = slow_start_window(n, m)
            rows.append(SlowStartRow(n + 1, m, 2**n + m, w, (2 * w - 2, 2 * w - 1),
                                     slow_start_queue(m)))
    return rows


def slow_start_overflow(buffer_packets: int,
                        buffer_counts_in_service: bool = True) -> tuple[int, int]:
    """(n_b, W_b): the mini-cycle and window of the first slow-start overflow, eq. (4).

    W_b = 2^{n_b} + B (Lakshman & Madhow eq. (4)). Derivation: overflow when Q = m + 2 = B + 1,
    i.e. m = B - 1, which needs m <= 2^n - 1, so n_b = ceil(log2 B); then eq. (2) gives
    W_b = 2^{n_b} + (B - 1) + 1. The paper writes n_b = ceil(log2(B - 1)); the two agree except
    when B - 1 is a power of two (B = 2, 3, 5, 9, 17, ...), where the paper's n_b is one too small
    (its mini-cycle peaks at Q = B, no overflow). B = 10: n_b = 4, W_b = 26 (Fig. 1).

    ``buffer_counts_in_service=False`` (hfcsim's engine, eq. (1)'s convention): B waiting places
    hold B + 1 packets with the one in service, so W_b = 2^{ceil(log2(B+1))} + B + 1 (27 for
    B = 10). Needs slow start to still be running at W_b (see :func:`double_slow_start`) and
    2^{n_b} <= mu*T.
    """
    _require("buffer_packets", buffer_packets,
             isinstance(buffer_packets, (int, np.integer)) and buffer_packets >= 0,
             "must be an integer >= 0")
    places = int(buffer_packets) + (0 if buffer_counts_in_service else 1)
    _require("buffer_packets", buffer_packets, places >= 1,
             "must be >= 1 when it counts the packet in service")
    n_b = max(0, math.ceil(math.log2(places)))
    while 2**n_b < places:  # guard log2 rounding
        n_b += 1
    return n_b, 2**n_b + places


def slow_start_detection_window(overflow_window: float) -> float:
    """Window when a slow-start overflow at W_b is detected: 2 W_b - 2 (Sec. III.A, Fig. 1).

    The ACKs of the W_b - 1 packets ahead of the first drop keep growing the window for about one
    RTT. Tahoe then sets the threshold to half of it, W_b - 1 (Fig. 1: 26 -> 50 -> 25).
    """
    w = _positive("overflow_window", overflow_window)
    return 2.0 * w - 2.0


def double_slow_start(mu_pps: float, tau_s: float, buffer_packets: int,
                      buffer_counts_in_service: bool = True) -> bool:
    """Eq. (5): a Tahoe cycle has two slow starts iff W_b <= W_t = W_pipe / 2.

    Lakshman & Madhow eqs. (4)-(5). Fig. 1 (B = 10, W_t = 55.5, W_b = 26): True; Fig. 2 (B = 80,
    W_t = 90.5, W_b = 208): False. Approximately beta <= 1/3 (:func:`double_slow_start_approx`).
    """
    _, w_b = slow_start_overflow(buffer_packets, buffer_counts_in_service)
    return w_b <= pipe_window_packets(mu_pps, tau_s, buffer_packets) / 2.0


def double_slow_start_approx(beta: float) -> bool:
    """beta <= 1/3: eq. (5) with W_b ~ 2B and W_t = (1 + beta) mu T / 2 (Sec. III.A)."""
    b = _non_negative("beta", beta)
    return b <= 1.0 / 3.0


@dataclass(frozen=True)
class Cycle:
    """One periodic cycle: ``packets`` delivered (N_c) in ``duration_s`` (T_c)."""

    packets: float
    duration_s: float
    mu_pps: float
    double_slow_start: bool = False

    @property
    def throughput_pps(self) -> float:
        """lambda = N_c / T_c (Sec. III)."""
        return self.packets / self.duration_s

    @property
    def utilisation(self) -> float:
        """lambda / mu."""
        return self.throughput_pps / self.mu_pps


def congestion_avoidance(w_from: float, w_to: float, mu_pps: float,
                         tau_s: float) -> tuple[float, float]:
    """(packets, seconds) for congestion avoidance from ``w_from`` to ``w_to`` (derived).

    packets = (W2^2 - W1^2)/2; seconds = T (min(W2, muT) - min(W1, muT))
    + (max(W2, muT)^2 - max(W1, muT)^2) / (2 mu). See the module docstring.
    """
    w1 = _positive("w_from", w_from)
    w2 = _positive("w_to", w_to)
    _require("w_to", w_to, w2 >= w1, f"must be >= w_from = {w1:g}")
    mu = _positive("mu_pps", mu_pps)
    t = round_trip_s(mu_pps, tau_s)
    knee = mu * t
    seconds = (t * (min(w2, knee) - min(w1, knee))
               + (max(w2, knee) ** 2 - max(w1, knee) ** 2) / (2 * mu))
    return (w2 * w2 - w1 * w1) / 2.0, seconds


def _slow_start(w_to: float, rtt: float) -> tuple[float, float]:
    # Derived: one ACK per window increment (W - 1 packets), window doubles each T (queue empties
    # each mini-cycle while W < mu T, Table I), so log2(W) round trips.
    w = max(w_to, 1.0)
    return w - 1.0, rtt * math.log2(w)


def tahoe_cycle(mu_pps: float, tau_s: float, buffer_packets: int,
                buffer_counts_in_service: bool = True) -> Cycle:
    """TCP-tahoe periodic cycle without random loss: N_c, T_c and lambda = N_c / T_c (derived).

    Derived here (the paper's Sec. III.B is missing from our copy). W_pipe = mu T + B, W_t =
    W_pipe / 2. Slow start from 1 to W reaches it in T log2 W seconds delivering W - 1 packets
    (fluid form of eq. (2)); congestion avoidance as :func:`congestion_avoidance`.

    - One slow start (W_b > W_t, beta > ~1/3): slow start 1 -> W_t, congestion avoidance
      W_t -> W_pipe.
    - Two slow starts (eq. (5)): slow start 1 -> W_d = min(2 W_b - 2, W_t) where the overflow at
      W_b is detected, then slow start 1 -> W_d / 2, then congestion avoidance W_d / 2 -> W_pipe.

    Loss detection at the end of the cycle is taken as instantaneous (the paper's perfect-detection
    assumption); a real timer adds about one RTT at full link rate, W_pipe packets in W_pipe/mu,
    which raises utilisation slightly. Range: beta <= 1 (Sec. III), mu T >> 1.
    """
    mu = _positive("mu_pps", mu_pps)
    t = round_trip_s(mu_pps, tau_s)
    w_pipe = pipe_window_packets(mu_pps, tau_s, buffer_packets)
    w_t = w_pipe / 2.0
    double = double_slow_start(mu_pps, tau_s, buffer_packets, buffer_counts_in_service)
    packets = seconds = 0.0
    if double:
        _, w_b = slow_start_overflow(buffer_packets, buffer_counts_in_service)
        w_d = min(slow_start_detection_window(w_b), w_t)
        for n, s in (_slow_start(w_d, t), _slow_start(w_d / 2.0, t)):
            packets, seconds = packets + n, seconds + s
        w_t = max(w_d / 2.0, 1.0)
    else:
        packets, seconds = _slow_start(w_t, t)
    n, s = congestion_avoidance(w_t, w_pipe, mu, tau_s)
    return Cycle(packets + n, seconds + s, mu, double)


def reno_cycle(mu_pps: float, tau_s: float, buffer_packets: float) -> Cycle:
    """TCP-reno periodic cycle without random loss (derived): W_pipe / 2 -> W_pipe, no slow start.

    Derived here from Sec. III's description: N_c = 3 W_pipe^2 / 8 and, for beta <= 1,
    T_c = T (mu T)(1 + beta + beta^2) / 2, so

        lambda / mu = (3/4) (1 + beta)^2 / (1 + beta + beta^2)

    (3/4 at beta = 0, 1 at beta = 1; full utilisation for beta >= 1). Fast retransmit and recovery
    are taken as instantaneous and perfect (one loss per cycle, no timeout).
    """
    mu = _positive("mu_pps", mu_pps)
    w_pipe = pipe_window_packets(mu_pps, tau_s, buffer_packets)
    n, s = congestion_avoidance(w_pipe / 2.0, w_pipe, mu, tau_s)
    return Cycle(n, s, mu)


def random_loss_window(loss, variant: str = "reno"):
    """Peak window W_r set by random loss alone under the mean-value approximation (derived).

    The packets between losses, N_c, are set to their mean 1/p (a deterministic cycle; the
    paper's full analysis of the random cycle is not in our copy).
    Reno: 3 W^2 / 8 = 1/p, W_r = sqrt(8 / (3p)).
    Tahoe: (W/2 - 1) + 3 W^2 / 8 = 1/p (slow start to W/2 then congestion avoidance),
    W_r = (-1/2 + sqrt(1/4 + (3/2)(1 + 1/p))) / (3/4).
    """
    p = _loss_array("loss", loss)
    if variant == "reno":
        w = np.sqrt(8.0 / (3.0 * p))
    elif variant == "tahoe":
        w = (-0.5 + np.sqrt(0.25 + 1.5 * (1.0 + 1.0 / p))) / 0.75
    else:
        raise ValueError(f"variant = {variant!r}: must be 'reno' or 'tahoe'")
    return _out(w, loss)


def reno_utilisation_random_loss(p_mut2, beta: float):
    """Reno utilisation lambda/mu as a function of p (mu T)^2 and beta alone (derived).

    With w = W/(mu T): random loss caps the window at w_r = sqrt(8 / (3 p (mu T)^2)), the buffer
    at 1 + beta; the cycle runs from w_max/2 to w_max = min(w_r, 1 + beta) and

        lambda/mu = (3/8) w_max^2 / [ (min(w_max, 1) - min(w_max/2, 1))
                                      + (max(w_max, 1)^2 - max(w_max/2, 1)^2) / 2 ]

    which depends on p and mu T only through p (mu T)^2: the collapse of Lakshman & Madhow's
    abstract. For w_r <= 1 it is sqrt(3 / (2 p (mu T)^2)), the Mathis law (0.39 at p(muT)^2 = 10,
    under 50 % as CLAIMS L-random-loss states). Range: mu T >> 1, p << 1, beta <= 1.
    """
    x = np.asarray(p_mut2, dtype=float)
    if (~np.isfinite(x) | (x <= 0)).any():
        bad = x[~np.isfinite(x) | (x <= 0)].flat[0] if x.ndim else x
        raise ValueError(f"p_mut2 = {float(bad):g}: must be > 0")
    b = _non_negative("beta", beta)
    w = np.minimum(np.sqrt(8.0 / (3.0 * x)), 1.0 + b)
    h = w / 2.0
    rtts = (np.minimum(w, 1.0) - np.minimum(h, 1.0)) + (np.maximum(w, 1.0) ** 2
                                                         - np.maximum(h, 1.0) ** 2) / 2.0
    return _out(0.375 * w * w / rtts, p_mut2)


def throughput_random_loss_pps(loss, mu_pps: float, tau_s: float, buffer_packets: int,
                               variant: str = "reno", buffer_counts_in_service: bool = True):
    """Throughput with random loss p, packets/s (derived, mean-value approximation).

    The window peaks at W_max = min(W_r, W_pipe) (:func:`random_loss_window`). If W_r >= W_pipe,
    buffer overflow ends the cycle first and the loss-free cycle applies (:func:`reno_cycle`,
    :func:`tahoe_cycle`). Otherwise one cycle is N_c = 1/p packets: Reno runs congestion avoidance
    W_max/2 -> W_max; Tahoe slow start 1 -> W_max/2 then congestion avoidance. Timeouts, multiple
    losses per window and the randomness of N_c are ignored, so it is optimistic at large p
    (compare PFTK in :mod:`hfcsim.models.throughput`). Falls as ~1/sqrt(p) once p (mu T)^2 >~ 1.
    Vectorised over ``loss`` in (0, 1).
    """
    p = _loss_array("loss", loss)
    mu = _positive("mu_pps", mu_pps)
    t = round_trip_s(mu_pps, tau_s)
    w_pipe = pipe_window_packets(mu_pps, tau_s, buffer_packets)
    if variant == "reno":
        full = reno_cycle(mu, tau_s, buffer_packets)
    elif variant == "tahoe":
        full = tahoe_cycle(mu, tau_s, buffer_packets, buffer_counts_in_service)
    else:
        raise ValueError(f"variant = {variant!r}: must be 'reno' or 'tahoe'")
    w_r = np.atleast_1d(np.asarray(random_loss_window(p, variant), dtype=float))
    out = np.empty_like(w_r)
    for i, w in enumerate(w_r):
        if w >= w_pipe:
            out[i] = full.throughput_pps
            continue
        if variant == "reno":
            n, s = congestion_avoidance(w / 2.0, w, mu, tau_s)
        else:
            n1, s1 = _slow_start(w / 2.0, t)
            n2, s2 = congestion_avoidance(max(w / 2.0, 1.0), w, mu, tau_s)
            n, s = n1 + n2, s1 + s2
        out[i] = n / s
    return _out(out.reshape(p.shape), loss)
