"""Pictures of the upstream MAC drawn from a run's trace (docs/design.md, habit 14: a MAC's events are a table a
person can read, and a picture of it).

``mac_timeline(result, path)`` draws, for one station and the TCP flow it carries, the request/grant
cycle over a short window (requests in contention slots, collisions, grants as the headend sends them,
bursts as they arrive at the headend, and the ACKs as the TCP sender receives them), and below it the
distribution of ACK inter-arrival times at the sender, the quantity behind Elloumi et al.'s ACK
compression (Sec. 5.2, Figs. 6-8).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["LANES", "ack_interarrivals_s", "mac_timeline"]

# Lanes of the timeline, top to bottom: (trace event, label, uses the station (MAC) or the flow (TCP)).
LANES = (
    ("request", "request sent (contention slot)", "station"),
    ("collision", "collision heard at headend", "station"),
    ("grant", "grant sent by headend", "station"),
    ("burst", "burst arrives at headend", "station"),
    ("ack", "ACK arrives at TCP sender", "flow"),
    ("send", "data segment sent", "flow"),
)


def ack_interarrivals_s(trace: Any, flow: int = 0, after_s: float = 0.0) -> Any:
    """Gaps between consecutive ACK arrivals (new or duplicate) at flow ``flow``'s sender, seconds."""
    acks = trace[(trace["flow"] == flow) & trace["event"].isin(("ack", "dupack")) & (trace["time_s"] >= after_s)]
    return acks["time_ns"].diff().dropna().to_numpy() / 1e9


def mac_timeline(result: Any, path: str | Path, *, station: int = 0, flow: int = 0,
                 start_s: float = 2.0, span_s: float = 0.03, marks_ms: tuple[float, ...] = ()) -> Path:
    """Draw the request/grant timeline of ``station`` and its flow ``flow`` from ``result.trace`` over
    ``[start_s, start_s + span_s)``, with the ACK inter-arrival histogram from ``start_s`` to the end
    of the run; ``marks_ms`` are reference gaps drawn on the histogram. Writes ``path`` (PNG or SVG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    trace = result.trace
    if trace is None:
        raise ValueError("the result has no trace: simulate(..., trace=True)")
    window = trace[(trace["time_s"] >= start_s) & (trace["time_s"] < start_s + span_s)]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), gridspec_kw={"height_ratios": [3, 2]})
    for row, (event, label, who) in enumerate(LANES):
        rows = window[(window["event"] == event)
                      & ((window["station"] == station) if who == "station" else (window["flow"] == flow))]
        y = len(LANES) - 1 - row
        top.scatter((rows["time_s"] - start_s) * 1e3, [y] * len(rows), marker="|", s=120, label=label)
    top.set_yticks(range(len(LANES)), [lane[1] for lane in reversed(LANES)], fontsize=8)
    top.set_xlabel(f"time after {start_s:g} s (ms)")
    top.set_title(f"station {station}: request/grant cycle and the ACKs it releases")
    top.grid(axis="x", alpha=0.3)
    gaps_ms = ack_interarrivals_s(trace, flow, start_s) * 1e3
    bottom.hist(gaps_ms[gaps_ms < 10], bins=200, color="tab:blue")
    for i, m in enumerate(marks_ms):
        bottom.axvline(m, color="tab:red", linestyle="--", linewidth=0.8)
        bottom.annotate(f"{m:g} ms", (m, 1), xytext=(3, 5 + 14 * i), textcoords="offset points", color="tab:red",
                        fontsize=8)
    bottom.set_xlabel("ACK inter-arrival time at the TCP sender (ms)")
    bottom.set_ylabel("ACKs")
    bottom.set_yscale("log")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
