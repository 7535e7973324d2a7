"""Lakshman & Madhow 1997, "The Performance of TCP/IP for Networks with High Bandwidth-Delay Products
and Random Loss" (IEEE/ACM ToN 5(3)): figures as recipes, L-* claims as checks.

The model is the paper's Sec. II: one FIFO bottleneck of mu packets/s with B packets of buffer,
propagation delay tau, ACKs returned at once (``network.kind = "bottleneck"``), 1000-byte packets and
windows limited only by the network. hfcsim counts B as waiting places, excluding the packet in
service, as eq. (1) does (W_pipe = mu*tau + B + 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hfcsim.models import lakshman as model
from hfcsim.reproduce import Claim, Figure, Outcome, Paper, axes, outcome

# The TCP stack every recipe runs (tcp.stack in each scenario). The paper used its own simulator with
# ns-like Tahoe and Reno; the recipes were written, and the exact claims (Table I, W_pipe) pinned, against
# hfcsim's 4.4BSD model with RFC 5681's fast-recovery exit. `--stack NAME` runs them under another; the
# per-stack table is docs/claims-per-stack.md.
STACK = "net3-rfc5681"

MSS = 1000
MU, TAU = 100, 1.0  # Figs. 1 and 2: mu = 100 packets/s, tau = 1 s
BIG = 10**9

# Random loss: the throughput against p (mu T)^2 for several mu T (tau = 1 s, so mu T = mu + 1) at a
# fixed normalised buffer beta = 0.5; runs last a fixed simulated time.
MU_T = (25, 50, 100)
P_MUT2 = (1, 3, 10, 30, 100)
RANDOM_LOSS_S = 1000.0
BETA = 0.5

# RTT unfairness: two connections through a 1000 packet/s bottleneck, tau_1 = 20 ms and tau_2 = k tau_1,
# each sender with up to one service time (1 ms) of random processing time (Floyd & Jacobson's remedy
# for the phase effects of deterministic drop-tail queues, ns's overhead_).
UNFAIR_MU = 1000
UNFAIR_TAU1 = 0.02
UNFAIR_K = (1, 2, 4, 8)
UNFAIR_S = 200.0

NOTES = (
    "Sec. II's model: a single FIFO bottleneck (mu packets/s, B packets, propagation delay tau), random "
    "loss after service, ACKs returned at once, 1000-byte packets, no delayed ACK, no window limit "
    "other than the network's, no connection set-up.",
    "B counts waiting places, not the packet in service, as eq. (1) does: W_pipe = mu*tau + B + 1. Eq. (4) "
    "and Fig. 1's numbers count the packet in service inside B, one place fewer; see L-double-ss.",
    "TCP-tahoe goes back to the lost packet with a window of one on three dupACKs (as on a timeout, "
    "without back-off), TCP-reno is 4.4BSD's fast retransmit and recovery; both use the BSD 500 ms "
    "retransmission timer.",
    "Random-loss runs last 1000 simulated seconds each and report goodput (bytes delivered / time), "
    "normalised by mu. RTT-unfairness runs last 200 s; their senders add up to 1 ms (one service time) "
    "of random processing time per packet: without it, a deterministic drop-tail queue locks the two "
    "connections into phase patterns and the throughput ratio is not even monotone in the delay ratio.",
    "Figs. 1 and 2, Table I and the Tahoe/Reno comparison are single deterministic runs (seed 1).",
)


def bottleneck(buffer_packets: int, variant: str = "tahoe", bytes_: int = BIG, mu: float = MU,
               tau_s: float = TAU, loss: float = 0.0, window_packets: int | None = None,
               **flow: Any) -> dict[str, Any]:
    buf = (window_packets * MSS) if window_packets else BIG
    return {
        "network": {"kind": "bottleneck", "rate_pps": mu, "tau_s": tau_s, "buffer_packets": buffer_packets,
                    "loss": loss},
        "tcp": {"stack": STACK, "variant": variant, "mss_bytes": MSS, "send_buffer_bytes": buf},
        "receiver": {"delayed_ack": False, "receive_buffer_bytes": buf},
        "flows": [{"bytes": bytes_, "handshake": False, **flow}],
    }


# ---------------------------------------------------------------------------------------------------
# Drawing

def _window_and_queue(fid: str):
    def draw(traces: Mapping[str, Any], figure: Any) -> None:
        (ax,) = axes(figure, FIGURES[fid])
        ((label, t),) = traces.items()
        sender = t[t.event.isin(["send", "retransmit", "ack", "timeout", "fast_retransmit"])]
        ax.plot(sender.time_s, sender.cwnd / MSS, "-", linewidth=0.8, label="congestion window")
        q = t[t.event.isin(["enqueue", "drop"])]
        ax.plot(q.time_s, q.queue, ":", linewidth=0.8, label="buffer occupancy (incl. in service)")
        ax.set_title(label, fontsize=9)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="upper left")

    return draw


def _sequence(fid: str):
    def draw(traces: Mapping[str, Any], figure: Any) -> None:
        panels = axes(figure, FIGURES[fid], len(traces))
        for ax, (label, t) in zip(panels, traces.items(), strict=True):
            sent = t[t.event.isin(["send", "retransmit"])]
            ax.plot(sent.time_s, sent.seq // MSS + 1, ".", markersize=2, label="packet sent")
            for event, marker, color in (("lost", "s", "black"), ("timeout", "x", "red")):
                e = t[t.event == event]
                if len(e):
                    ax.plot(e.time_s, e.seq // MSS + 1, marker, color=color, markersize=6, label=event)
            ax.set_title(label, fontsize=9)
            ax.legend(fontsize=7, loc="upper left")

    return draw


def normalised_goodput(rows: Any) -> Any:
    """Per run: delivered bytes over the run's time, as a fraction of the bottleneck's mu."""
    mu = rows["network.rate_pps"]
    out = rows.assign(
        mu_t=mu + 1,  # mu T with tau = 1 s
        p_mut2=rows["network.loss"] * (mu + 1) ** 2,
        utilisation=rows["delivered_bytes"] / (mu * MSS * RANDOM_LOSS_S),
    )
    out["p_mut2"] = out["p_mut2"].round(6)
    return out


def _draw_random_loss(rows: Any, figure: Any) -> None:
    import numpy as np

    (ax,) = axes(figure, FIGURES["random-loss"])
    g = normalised_goodput(rows).groupby(["tcp.variant", "mu_t", "p_mut2"])["utilisation"].mean()
    for (variant, mu_t), s in g.groupby(level=[0, 1]):
        style = "-o" if variant == "reno" else "--^"
        x = s.index.get_level_values("p_mut2")
        ax.plot(x, s.values, style, markersize=3, label=f"TCP-{variant}, mu T = {mu_t:g}")
    xs = np.logspace(-0.3, 2.2, 60)
    ax.plot(xs, model.reno_utilisation_random_loss(xs, BETA), "k:", label="model (Reno, mean-value cycle)")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=6)


def unfairness(rows: Any) -> Any:
    """Per grid point: mean throughput ratio of connection 1 (tau_1) over connection 2 (k tau_1)."""
    d = rows.pivot_table(index=["tcp.variant", "network.buffer_packets", "flows.1.extra_delay_s", "seed"],
                         columns="flow", values="delivered_bytes").reset_index()
    d["ratio"] = d[0] / d[1]
    g = d.groupby(["tcp.variant", "network.buffer_packets", "flows.1.extra_delay_s"])["ratio"].mean().reset_index()
    g["rtt_ratio"] = (g["flows.1.extra_delay_s"] + 1 / UNFAIR_MU) / (UNFAIR_TAU1 + 1 / UNFAIR_MU)
    return g


def fitted_exponent(g: Any) -> float:
    """a in throughput ratio = (T_2 / T_1)^a, least squares on log-log, over k > 1."""
    import numpy as np

    g = g[g.rtt_ratio > 1.0001]
    return float(np.polyfit(np.log(g.rtt_ratio), np.log(g.ratio), 1)[0])


def _draw_unfair(rows: Any, figure: Any) -> None:
    (ax,) = axes(figure, FIGURES["unfair"])
    g = unfairness(rows)
    for (variant, b), s in g.groupby(["tcp.variant", "network.buffer_packets"]):
        a = fitted_exponent(s)
        ax.plot(s.rtt_ratio, s.ratio, "o-" if variant == "tahoe" else "^--", markersize=3,
                label=f"TCP-{variant}, B = {b}: a = {a:.2f}")
    for a in (1, 2):
        xs = [1, max(UNFAIR_K)]
        ax.plot(xs, [x**a for x in xs], color="grey", linewidth=0.6, linestyle=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend(fontsize=7)


# ---------------------------------------------------------------------------------------------------
# Figures

def _random_loss_points() -> list[list[float]]:
    points = []
    for mu_t in MU_T:
        for x in P_MUT2:
            points.append([mu_t - 1, round(BETA * mu_t), x / mu_t**2])
    return points


FIGURE_LIST = (
    Figure("1", "TCP-tahoe, one connection: two slow starts (tau = 1 s, mu = 100, beta = 0.1)", "Time (s)",
           "Packets", traces={"B = 10": bottleneck(10, bytes_=20_000_000)}, draw=_window_and_queue("1")),
    Figure("2", "TCP-tahoe, one connection: a single slow start (beta = 0.8)", "Time (s)", "Packets",
           traces={"B = 80": bottleneck(80, bytes_=40_000_000)}, draw=_window_and_queue("2")),
    Figure("table1", "Table I: slow start through an unlimited buffer (tau = 1 s, mu = 100)",
           traces={"Table I": bottleneck(1000, bytes_=200_000)}),
    Figure("random-loss", "Random loss: normalised throughput against p (mu T)^2 (beta = 0.5)",
           "p (mu T)^2", "Throughput / mu",
           sweep={"name": "lakshman97-random-loss",
                  "base": {**bottleneck(0), "sim": {"time_limit_s": RANDOM_LOSS_S}},
                  "zip": {"keys": ["network.rate_pps", "network.buffer_packets", "network.loss"],
                          "values": _random_loss_points()},
                  "grid": {"tcp.variant": ["reno", "tahoe"]}},
           draw=_draw_random_loss, max_runs=10),
    Figure("tahoe-reno", "Two losses in one window of 8 packets (packets 41 and 44; tau = 0.2 s, mu = 100)",
           "Time (s)", "Packet number",
           traces={f"TCP-{v}": bottleneck(1000, v, 100_000, tau_s=0.2, window_packets=8, drop_packets=[41, 44])
                   for v in ("tahoe", "reno", "newreno")},
           draw=_sequence("tahoe-reno"), panels=3),
    Figure("unfair", "Two connections through one FIFO: throughput ratio against RTT ratio", "T2 / T1",
           "Throughput 1 / throughput 2",
           sweep={"name": "lakshman97-unfair",
                  "base": {**bottleneck(20, mu=UNFAIR_MU, tau_s=0.0),
                           "flows": [{"bytes": BIG, "handshake": False, "extra_delay_s": UNFAIR_TAU1,
                                      "send_jitter_s": 1 / UNFAIR_MU} for _ in range(2)],
                           "sim": {"time_limit_s": UNFAIR_S}},
                  "grid": {"flows.1.extra_delay_s": [UNFAIR_TAU1 * k for k in UNFAIR_K],
                           "network.buffer_packets": [20, 50], "tcp.variant": ["tahoe", "reno"]}},
           draw=_draw_unfair, max_runs=10),
)
FIGURES = {f.id: f for f in FIGURE_LIST}


# ---------------------------------------------------------------------------------------------------
# Claims

def _rows(t: Any, *events: str) -> Any:
    return t[t.event.isin(events)]


def _overflow_bursts(t: Any) -> list[tuple[float, int]]:
    """(time, window in packets) of the first drop of each overflow episode (drops > 2 s apart)."""
    drops = _rows(t, "drop")
    out, last = [], -math.inf
    for time, cwnd in zip(drops.time_s, drops.cwnd, strict=True):
        if time > last + 2.0:
            out.append((float(time), int(cwnd // MSS)))
        last = time
    return out


def _c_wpipe(d: Mapping[str, Any]) -> Outcome:
    (t2,) = d["2"].values()
    (t1,) = d["1"].values()
    w2 = model.pipe_window_packets(MU, TAU, 80)
    w1 = model.pipe_window_packets(MU, TAU, 10)
    first2 = _overflow_bursts(t2)[0][1]
    avoid1 = [w for _, w in _overflow_bursts(t1)][1::2]  # bursts alternate: slow start, avoidance
    ok = first2 == w2 + 1 and avoid1 and all(w == w1 + 1 for w in avoid1)
    return outcome(ok, f"beta 0.8: first overflow at W = {first2} (W_pipe + 1 = {w2 + 1:.0f}); beta 0.1: "
                       f"avoidance overflows at {avoid1} (W_pipe + 1 = {w1 + 1:.0f})")


def _c_table1(d: Mapping[str, Any]) -> Outcome:
    (t,) = d["table1"].values()
    enq = _rows(t, "enqueue")
    bad = []
    rows = model.slow_start_rows(5)
    for row in rows:
        at = round(row.time_s(MU, TAU) * 1e9)
        here = enq[enq.time_ns == at]
        released = tuple(int(x) for x in here.seq // MSS + 1)
        windows = set(int(x) for x in here.cwnd // MSS)
        queue = int(here.queue.iloc[-1]) if len(here) else -1
        if released != row.released or windows != {row.window} or queue != row.queue:
            bad.append(f"t={row.time_s(MU, TAU):.2f}: {released}/{windows}/{queue}")
    return outcome(not bad, f"{len(rows) - len(bad)} of {len(rows)} rows of Table I / eqs. (2)-(3) exact"
                            + (f"; differ: {'; '.join(bad[:3])}" if bad else ""))


def _cycle_after_peak(t: Any, peak_drop_time: float) -> dict[str, float]:
    """The slow start that follows an avoidance peak: its overflow window, the window at which that
    loss is detected, and the threshold of the next slow start."""
    fr = _rows(t, "fast_retransmit", "timeout")
    after = fr[fr.time_s > peak_drop_time]
    first_detection = after.iloc[0]
    drops = _rows(t, "drop")
    ss_drops = drops[drops.time_s > first_detection.time_s]
    overflow = int(ss_drops.cwnd.iloc[0] // MSS) if len(ss_drops) else None
    second = after[after.time_s > (ss_drops.time_s.iloc[0] if len(ss_drops) else math.inf)]
    detected = int(second.cwnd.iloc[0] // MSS) if len(second) else None
    threshold = int(second.ssthresh.iloc[0] // MSS) if len(second) else None
    return {"first_threshold": int(first_detection.ssthresh // MSS), "overflow": overflow,
            "detected": detected, "threshold": threshold}


def _c_double_ss(d: Mapping[str, Any]) -> Outcome:
    (t,) = d["1"].values()
    bursts = _overflow_bursts(t)
    peak_time, peak = bursts[1]  # the first avoidance-phase overflow
    c = _cycle_after_peak(t, peak_time)
    n_b, w_b = model.slow_start_overflow(10, buffer_counts_in_service=False)
    ok = (c["overflow"], c["detected"], c["threshold"], peak - 1) == (26, 50, 25, 111)
    return outcome(ok, f"overflow at W = {c['overflow']}, detected at W = {c['detected']}, second slow start "
                       f"threshold {c['threshold']}, cycle peak {peak - 1} (eq. 4 with B waiting places "
                       f"gives W_b = {w_b})")


def _c_single_ss(d: Mapping[str, Any]) -> Outcome:
    (t,) = d["2"].values()
    bursts = _overflow_bursts(t)
    if len(bursts) < 3:
        return outcome(False, f"only {len(bursts)} overflow episodes in the run")
    # A steady cycle: the last avoidance peak but one, the slow start after it, the next peak. (The
    # first episodes belong to the initial slow start, whose threshold is unbounded.)
    peak_time, peak = bursts[-2]
    fr = _rows(t, "fast_retransmit", "timeout")
    detection = fr[fr.time_s > peak_time].iloc[0]
    threshold = int(detection.ssthresh // MSS)
    next_drop = bursts[-1]
    ss_end = float(t[(t.time_s > detection.time_s) & (t.cwnd >= detection.ssthresh)].time_s.iloc[0])
    no_second = next_drop[0] > ss_end and next_drop[1] == peak
    return outcome(peak - 1 == 181 and threshold == 91 and no_second,
                   f"loss when W exceeds {peak - 1}; slow start ends at {threshold}; next overflow at "
                   f"W = {next_drop[1]}, in avoidance: {no_second}")


def _c_random_loss(d: Mapping[str, Any]) -> Outcome:
    g = normalised_goodput(d["random-loss"])
    reno = g[g["tcp.variant"] == "reno"].groupby(["p_mut2", "mu_t"])["utilisation"].mean().unstack("mu_t")
    spread = (reno.max(axis=1) / reno.min(axis=1))
    beyond = reno[reno.index >= 10].max(axis=1)
    ok = float(spread.max()) <= 1.5 and float(beyond.max()) < 0.5
    spreads = ", ".join(f"{x:g}: {v:.2f}" for x, v in spread.items())
    return outcome(ok, f"TCP-reno, mu T = {', '.join(f'{c:g}' for c in reno.columns)}: max/min across mu T at "
                       f"p (mu T)^2 = {spreads}; utilisation at p (mu T)^2 >= 10: at most {beyond.max():.2f}")


def _c_unfair(d: Mapping[str, Any]) -> Outcome:
    g = unfairness(d["unfair"])
    fits = {(v, b): fitted_exponent(s) for (v, b), s in g.groupby(["tcp.variant", "network.buffer_packets"])}
    tahoe = [a for (v, _), a in fits.items() if v == "tahoe"]
    text = "; ".join(f"{v} B={b}: a = {a:.2f}" for (v, b), a in sorted(fits.items()))
    return outcome(all(1 <= a <= 2 for a in tahoe), text)


def _c_reno_fragile(d: Mapping[str, Any]) -> Outcome:
    timeouts = {label: int((t.event == "timeout").sum()) for label, t in d["tahoe-reno"].items()}
    ok = timeouts["TCP-reno"] >= 1 and timeouts["TCP-tahoe"] == 0
    return outcome(ok, ", ".join(f"{k}: {v} timeout(s)" for k, v in timeouts.items()))


CLAIMS = (
    Claim("L-wpipe", ("1", "2"), "W_pipe = mu T + B = mu tau + B + 1 (eq. 1)",
          "loss-free Tahoe overflows first at W_pipe + 1, exactly", _c_wpipe),
    Claim("L-table1", ("table1",), "slow start: W(nT + m/mu) = 2^n + m + 1, Q = m + 2 (Table I, eqs. 2-3)",
          "every row exact", _c_table1),
    Claim("L-double-ss", ("1",), "beta <= 1/3: overflow in slow start at W_b = 2^{n_b} + B",
          "Fig. 1: overflow at W = 26, detected by W = 50, threshold 25, cycle peak 111", _c_double_ss,
          why="The paper counts its buffer two ways. Eq. (1), W_pipe = mu tau + B + 1, has B waiting places "
              "plus the packet in service, and so does hfcsim: the cycle peak, 111, matches. Eq. (4) and "
              "Fig. 1's numbers put the packet in service inside B (overflow when Q = B + 1 counting it), "
              "which leaves one place fewer. With eq. (1)'s B the same analysis gives W_b = 2^4 + 10 + 1 = 27, "
              "detection at about 2 W_b - 1 = 53 and threshold 26: exactly what the simulation shows."),
    Claim("L-single-ss", ("2",), "beta = 0.8: loss at W_pipe = 181, slow start ends at 91, no second slow start",
          "exact", _c_single_ss),
    Claim("L-random-loss", ("random-loss",), "random loss hurts once p (mu T)^2 is large (>~ 1-10)",
          "normalised throughput collapses onto one curve for several mu T (max/min <= 1.5); < 50 % "
          "utilisation beyond 10", _c_random_loss,
          why="The collapse holds up to p (mu T)^2 = 10, where the curves for mu T = 25, 50 and 100 agree "
              "within about 10 %, but not beyond it. At p (mu T)^2 = 100 and mu T = 25, p is 16 %, the "
              "window averages a few packets, and the transfer is bound by timeouts (over 100 in 1000 s, "
              "data/figrandom-loss.csv). Fast retransmit no longer repairs losses there, which the "
              "analysis assumes it does."),
    Claim("L-unfair", ("unfair",), "connections through one FIFO: throughput ~ 1/tau^a, unfair to long RTTs",
          "fitted exponent a in [1, 2] (TCP-tahoe)", _c_unfair,
          why="The fitted exponent depends on the buffer: with a small buffer (B = 20, about one "
              "bandwidth-delay product of the short connection) the long connection also loses its "
              "window to timeouts, and a rises above 2."),
    Claim("L-reno-fragile", ("tahoe-reno",), "Reno is less robust than Tahoe when losses are closely spaced",
          "two losses in one window: Reno times out, Tahoe does not", _c_reno_fragile),
)


# Claim id -> stack -> why the claim's result under that stack differs from (or agrees with)
# net3-rfc5681's, only where it was checked (report-stacks.md says "not examined" for the others).
STACK_NOTES: dict[str, dict[str, str]] = {
    "L-reno-fragile": {"net3": (
        "Reno and Tahoe as under net3-rfc5681. NewReno, which the check does not judge, times out once "
        "under net3 (0 under net3-rfc5681): header prediction leaves t_dupacks set after the fast "
        "retransmit, and with tcp.header_prediction = false NewReno recovers both losses without a timeout.")},
}


def paper() -> Paper:
    return Paper("lakshman97", "Lakshman & Madhow 1997, TCP/IP with high bandwidth-delay products and random "
                 "loss", FIGURE_LIST, CLAIMS, NOTES, stack=STACK, stack_notes=STACK_NOTES)
