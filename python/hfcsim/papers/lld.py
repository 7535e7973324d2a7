"""Our own study, not from a seed paper (issue 24): what Low Latency DOCSIS buys a game-like flow.

A game-like flow (small packets, 50 a second each way) shares a modem with an L4S download and a CUBIC
download, on a DOCSIS 3.1 plant (the ``docsis31`` preset) whose upstream 1, 10 or 200 modems contend
for (the others offer Poisson background load). Three queue disciplines at the CMTS and the modem:
drop-tail with MULPI's default buffer, DOCSIS-PIE (PIE at the CMTS), and LLD's dual queue. The game's
one-way delays (p50, p99, p99.9) each way and each download's throughput are measured; the report puts
them beside CableLabs' and RFC 9330's published figures for low-latency queueing.

The game-like flow is a ping (``[[pings]]``: an echo every 20 ms, answered at once by the server, so
one echo is one packet up and one down) with ``pings.nqb`` under LLD: DSCP 45, which LLD's classifier
puts in the low-latency queue. Its one-way delays are the ping's ``up_s`` (client to server) and
``down_s`` (server to client).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hfcsim.reproduce import Claim, Figure, OnStack, Outcome, Paper, axes, outcome, under_stack

STACK = "l4s"

AQMS = ("droptail", "docsis_pie", "lld")
AQM_LABELS = {"droptail": "drop-tail (MULPI 100 ms buffer)", "docsis_pie": "DOCSIS-PIE", "lld": "LLD"}
# The CMTS has no DOCSIS-PIE (RFC 8034 is the modem's upstream AQM): there the "DOCSIS-PIE" case runs
# RFC 8033 PIE, as a DOCSIS 3.1 CMTS's downstream AQM is the vendor's (chosen).
CMTS_AQM = {"droptail": "droptail", "docsis_pie": "pie", "lld": "lld"}
MODEMS = (1, 10, 200)

# Chosen, none tuned to a result:
DS_TIER, US_TIER = 100e6, 20e6  # a 100/20 Mb/s service tier on the docsis31 plant (smaller than its
#                                 1.2 Gb/s / 50 Mb/s tier so that a run stays short)
BUFFER_BYTES = 4 << 20  # Linux's largest socket buffers (tcp_rmem / tcp_wmem max, 4-6 MB): no window limit
# The downloads' servers 10 ms further in round-trip time; the game server at the headend.
# flows.*.extra_delay_s delays the data direction only (topology.rs access: Lakshman & Madhow's tau_i,
# their round trip's propagation on one side), so it adds 10 ms to the round trip, not 20 (issue 36,
# defect 11: the study stated twice the round trip it runs; the L4S download's mean RTT under LLD is
# 14 ms with it, 4 ms without).
SERVER_DELAY_S = 0.01
GAME_INTERVAL_S = 0.02  # 50 packets a second each way
GAME_BYTES = 100  # IP bytes per game packet (a few tens of bytes of game state, UDP/IP headers)
BACKGROUND_LOAD = 0.6  # the other modems' Poisson upstream load together, of the upstream channel
BACKGROUND_BYTES = 1000
WARMUP_S = 1.0  # echoes sent and bytes delivered before this are left out (the downloads' slow start)
FULL_S, QUICK_S = 30.0, 6.0  # simulated seconds per run: 30 s give 1450 echoes a way, enough for p99.9
RUNS = 2  # seeds per point

# The published figures ours are put beside (the report's notes quote them).
LL_P99_MS = 1.0  # RFC 9330 Sec. 1 and CableLabs' LLD overview: about 1 ms of L4S queueing at the p99
DOCSIS_IDLE_MS = 10.0  # CableLabs' LLD overview: DOCSIS 3.1 today, around 10 ms of access-network latency

QUANTILES = {"p50": 0.5, "p99": 0.99, "p999": 0.999}


def scenario(aqm: str, modems: int, seconds: float) -> dict[str, Any]:
    """One run: the game-like flow and the two downloads on modem 0, ``modems - 1`` others loading the
    upstream."""
    groups: list[dict[str, Any]] = [{"count": 1}]
    if modems > 1:
        groups.append({"count": modems - 1, "background_load": BACKGROUND_LOAD, "background_bytes": BACKGROUND_BYTES})
    download = {"modem": 0, "bytes": 10**12, "extra_delay_s": SERVER_DELAY_S}
    return {
        "preset": "docsis31",
        "network": {"ds_rate_bps": DS_TIER, "us_rate_bps": US_TIER, "cmts_aqm": CMTS_AQM[aqm], "cm_aqm": aqm},
        "tcp": {"stack": STACK, "send_buffer_bytes": BUFFER_BYTES},
        "receiver": {"receive_buffer_bytes": BUFFER_BYTES},
        "modems": groups,
        # The l4s stack's own download (Prague, paced, ECT(1)) and a CUBIC one (no ECN, unpaced: the
        # stack's pacing is Prague's own; the l4s stack's other rules).
        "flows": [dict(download), {**download, "congestion_control": "cubic", "ecn": "off"}],
        "pings": [{"modem": 0, "interval_s": GAME_INTERVAL_S, "ip_bytes": GAME_BYTES, "stop_s": seconds,
                   "nqb": aqm == "lld"}],
        "sim": {"time_limit_s": seconds, "measure_from_s": WARMUP_S},
    }


def scenarios() -> list[dict[str, Any]]:
    """Every scenario the study runs (seeds aside), one per discipline and modem count."""
    return [scenario(aqm, n, FULL_S) for aqm in AQMS for n in MODEMS]


def run_row(aqm: str, modems: int, seconds: float, seed: int, stack: str | None = None) -> dict[str, Any]:
    """One run's row, under ``stack`` (None: the recipe's own): the game's one-way delay percentiles (ms)
    each way, above the run's minimum too, its losses, and each download's throughput after the warm-up
    (Mb/s)."""
    from hfcsim.simulate import simulate

    r = simulate(under_stack(scenario(aqm, modems, seconds), stack), seed=seed)
    p = r.pings
    p = p[p["sent_s"] >= WARMUP_S]
    # An echo is lost when the network dropped it or its reply (`Result.pings` `lost`); one still on its
    # way when the run ended is neither answered nor lost (issue 35).
    lost, answered = int(p["lost"].sum()), int(p["rtt_s"].notna().sum())
    row: dict[str, Any] = {"aqm": aqm, "modems": modems, "seed": seed, "echoes": len(p), "lost": lost,
                           "loss_pct": 100.0 * lost / max(lost + answered, 1)}
    for way in ("up", "down"):
        d = p[f"{way}_s"].dropna() * 1e3
        row[f"{way}_min_ms"] = float(d.min())
        for name, q in QUANTILES.items():
            row[f"{way}_{name}_ms"] = float(d.quantile(q))
            row[f"{way}_{name}_queue_ms"] = float(d.quantile(q) - d.min())
    for f, name in zip(r.flows, ("l4s", "cubic"), strict=True):
        row[f"{name}_mbps"] = f["measured_bytes"] * 8 / f["measured_s"] / 1e6
    return row


def run_study(quick: bool, seeds: int, *, stack: str | None) -> Any:
    import pandas as pd

    seconds = QUICK_S if quick else FULL_S
    rows = [run_row(aqm, n, seconds, seed, stack) for aqm in AQMS for n in MODEMS for seed in range(1, seeds + 1)]
    return pd.DataFrame(rows)


def summary(rows: Any) -> Any:
    """Per (aqm, modems): the mean over seeds of each run's figures."""
    numeric = [c for c in rows.columns if c not in ("aqm", "modems", "seed")]
    return rows.groupby(["aqm", "modems"], sort=False)[numeric].mean().reset_index()


def _point(rows: Any, aqm: str, modems: int, column: str) -> float:
    s = summary(rows)
    return float(s[(s["aqm"] == aqm) & (s["modems"] == modems)][column].iloc[0])


# ---------------------------------------------------------------------------------------------------
# Figures

DELAY_Y = "One-way delay of the game's packets (ms)"
MODEMS_X = "Modems contending on the upstream"
SHORT = {"droptail": "drop-tail", "docsis_pie": "D-PIE", "lld": "LLD"}
COLORS = {"droptail": "tab:red", "docsis_pie": "tab:orange", "lld": "tab:green"}


def _draw_delay(rows: Any, figure: Any) -> None:
    s = summary(rows)
    panels = axes(figure, FIGURES["delay"], 2)
    marks = (("p50", "o", "p50"), ("p99", "v", "p99"), ("p999", "^", "p99.9"))
    for ax, way, title in zip(panels, ("up", "down"), ("upstream (client to server)", "downstream (server to client)"),
                              strict=True):
        for i, aqm in enumerate(AQMS):
            d = s[s["aqm"] == aqm].set_index("modems").reindex(MODEMS)
            xs = [k + (i - 1) * 0.22 for k in range(len(MODEMS))]
            # The loss beside the delays (issue 35): the echoes lost either way, the worst point's.
            for name, marker, text in marks:
                loss = f" ({d['loss_pct'].max():.1f} % of echoes lost, worst point)" if text == "p50" else ""
                ax.plot(xs, d[f"{way}_{name}_ms"], marker, color=COLORS[aqm], markersize=5,
                        label=f"{AQM_LABELS[aqm]} {text}{loss}")
            for x, lo, hi in zip(xs, d[f"{way}_p50_ms"], d[f"{way}_p999_ms"], strict=True):
                ax.plot([x, x], [lo, hi], color=COLORS[aqm], linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(MODEMS)), [str(n) for n in MODEMS])
        ax.set_xlim(-0.6, len(MODEMS) - 0.4)
        ax.set_title(title, fontsize=8)
        ax.axhline(LL_P99_MS, color="k", linestyle=":", linewidth=0.8,
                   label=f"RFC 9330 / CableLabs: ~{LL_P99_MS:g} ms L4S queueing at p99")
        ax.axhline(DOCSIS_IDLE_MS, color="grey", linestyle="--", linewidth=0.8,
                   label=f"CableLabs: DOCSIS 3.1 today ~{DOCSIS_IDLE_MS:g} ms")
    handles, labels = panels[1].get_legend_handles_labels()
    figure.legend(handles, labels, fontsize=6, loc="outside lower center", ncol=4)


def _draw_throughput(rows: Any, figure: Any) -> None:
    import numpy as np

    (ax,) = axes(figure, FIGURES["throughput"])
    labels = [f"{SHORT[a]}\n{n}" for a in AQMS for n in MODEMS]
    x = np.arange(len(labels))
    l4s = [_point(rows, a, n, "l4s_mbps") for a in AQMS for n in MODEMS]
    cubic = [_point(rows, a, n, "cubic_mbps") for a in AQMS for n in MODEMS]
    ax.bar(x - 0.2, l4s, 0.4, color="tab:blue", label="L4S download (the l4s stack)")
    ax.bar(x + 0.2, cubic, 0.4, color="tab:grey", label="CUBIC download")
    ax.axhline(DS_TIER / 1e6, color="k", linestyle=":", linewidth=0.8, label=f"DS tier {DS_TIER / 1e6:g} Mb/s")
    ax.set_xticks(x, labels, fontsize=6)
    ax.legend(fontsize=6)


FIGURE_LIST = (
    Figure("runs", "Each run: the game's one-way delay percentiles and the downloads' throughputs, per queue "
           "discipline and number of modems", run=OnStack(run_study), max_runs=RUNS,
           table=lambda rows: rows),
    Figure("delay", "The game-like flow's one-way delays (dots p50, triangles p99 (down) and p99.9 (up); mean over seeds of "
           "each run's percentiles) under drop-tail, DOCSIS-PIE and LLD", MODEMS_X, DELAY_Y, uses="runs",
           draw=_draw_delay, panels=2, table=summary, height=5.2),
    Figure("throughput", "Each download's throughput after the first second, sharing the modem with the game "
           "(x: discipline and modems)", "Queue discipline, modems", "Throughput (Mb/s)", uses="runs",
           draw=_draw_throughput, table=summary),
)
FIGURES = {f.id: f for f in FIGURE_LIST}


# ---------------------------------------------------------------------------------------------------
# Claims


def _worst(rows: Any, aqm: str, column: str) -> tuple[float, int]:
    s = summary(rows)
    s = s[s["aqm"] == aqm]
    i = s[column].idxmax()
    return float(s.loc[i, column]), int(s.loc[i, "modems"])


def _c_ll_p99(data: Mapping[str, Any]) -> Outcome:
    worst, n = _worst(data["runs"], "lld", "down_p99_queue_ms")
    return outcome(worst <= LL_P99_MS, f"LLD downstream p99 above the minimum: at most {worst:.2f} ms ({n} modems)")


def _c_droptail(data: Mapping[str, Any]) -> Outcome:
    rows = data["runs"]
    best = min(_point(rows, "droptail", n, "down_p99_ms") for n in MODEMS)
    lld, _ = _worst(rows, "lld", "down_p99_ms")
    return outcome(best >= DOCSIS_IDLE_MS and best >= 10 * lld,
                   f"drop-tail downstream p99 at least {best:.1f} ms; LLD's at most {lld:.2f} ms")


def _c_upstream(data: Mapping[str, Any]) -> Outcome:
    rows = data["runs"]
    lld = min(_point(rows, "lld", n, "up_p50_ms") for n in MODEMS)
    return outcome(lld > LL_P99_MS, f"LLD upstream p50 at least {lld:.2f} ms (the request-grant loop)")


def _c_share(data: Mapping[str, Any]) -> Outcome:
    rows = data["runs"]
    ratios = {n: _point(rows, "lld", n, "l4s_mbps") / max(_point(rows, "lld", n, "cubic_mbps"), 1e-9) for n in MODEMS}
    # "About equally", read as within a factor of 2 either way: neither download takes more than twice
    # the other's (a choice; RFC 9332 gives no tolerance).
    fair = all(0.5 <= r <= 2.0 for r in ratios.values())
    return outcome(fair, "L4S / CUBIC throughput under LLD: "
                   + ", ".join(f"{r:.2f} ({n} modems)" for n, r in ratios.items()))


CLAIMS = (
    Claim("LLD-ll-p99", ("runs",), "L4S queueing about 1 ms at the 99th percentile (RFC 9330 Sec. 1; CableLabs' "
          "LLD overview)", "the game's downstream one-way delay above its run's minimum, p99 <= 1 ms under LLD "
          "at 1, 10 and 200 modems", _c_ll_p99),
    Claim("LLD-classic-bloat", ("runs",), "DOCSIS 3.1 without LLD: ~10 ms idle, far more under load (CableLabs' "
          "LLD overview)", "drop-tail's downstream p99 >= 10 ms and >= 10x LLD's, at every modem count",
          _c_droptail),
    Claim("LLD-media-acquisition", ("runs",), "queueing and media acquisition are LLD's two causes of latency; "
          "the dual queue addresses the first (CableLabs' LLD overview)", "the game's upstream p50 under LLD "
          "stays above 1 ms: the request-grant loop remains (no proactive grant service here)", _c_upstream),
    Claim("LLD-sharing", ("runs",), "LLD does not change how applications share the capacity (CableLabs' LLD "
          "overview); the coupling makes L4S and classic flows share about equally (RFC 9332 Sec. 2.1)",
          "under LLD neither download gets more than twice the other's throughput", _c_share,
          why="the coupling (RFC 9332's k = 2) is chosen to balance a scalable flow against a Reno-friendly "
          "classic one; the classic download here is CUBIC, with Linux's HyStart and friendliness. (Unpaced "
          "DCTCP got 0.11-0.20 of CUBIC's, its bursts crossing the L queue's 0.5-1 ms ramp.)"),
)

NOTES = (
    "**Our own study, not from a seed paper** (issue 24). No paper's numbers are reproduced: the claims hold "
    "our runs against figures CableLabs and the L4S RFCs publish for comparable cases.",
    "The plant: the `docsis31` preset (DOCSIS 3.1, one OFDM downstream and one OFDMA upstream as aggregate "
    f"rates, a 1 ms MAP interval), with a {DS_TIER / 1e6:g}/{US_TIER / 1e6:g} Mb/s tier (chosen, to keep runs "
    "short) and MULPI's default buffers (100 ms at the tier).",
    f"The game-like flow: a ping from modem 0's client, an echo of {GAME_BYTES} IP bytes every "
    f"{GAME_INTERVAL_S * 1e3:g} ms, answered at once by a server at the headend: one packet up and one down "
    "each 20 ms. Under LLD its echoes carry DSCP 45 (NQB, `pings.nqb`), which LLD's classifier puts in the "
    "low-latency queue. Its one-way delays are measured from the client's send to the server's receipt and "
    "back (`Result.pings` `up_s`, `down_s`), for echoes sent after the first second.",
    f"The downloads on the same modem: one under the `{STACK}` stack (its scalable control, ECT(1) data) and "
    "one CUBIC (`flows.congestion_control = \"cubic\"`, `flows.ecn = \"off\"`: unpaced, the l4s stack's other rules), "
    f"each from a server {SERVER_DELAY_S * 1e3:g} ms further in round-trip time (`flows.extra_delay_s`, which "
    "delays the data direction only; the L4S download's mean RTT under LLD is about 14 ms), with 4 MB socket "
    "buffers; throughput counts the "
    "bytes delivered after the first second.",
    f"Contention: with 10 or 200 modems, the others offer Poisson background packets of {BACKGROUND_BYTES} "
    f"bytes, {BACKGROUND_LOAD:g} of the upstream channel together, and request for them in the contention "
    "slots with the game's modem (whose own requests mostly ride piggybacked on its downloads' ACKs).",
    "Disciplines at both the CMTS (downstream) and the modem (upstream): drop-tail; DOCSIS-PIE at the modem "
    "with RFC 8033 PIE at the CMTS (RFC 8034 is the modem's); LLD's dual queue (MULPI Annex N-P, RFC 9332) "
    "with MULPI's defaults (`network.lld_*`).",
    "The published figures beside ours: RFC 9330 (L4S architecture) Sec. 1 gives L4S queueing delay as "
    "sub-millisecond on average and about 1 ms at the 99th percentile; CableLabs' LLD technology overview "
    "(White, Sundaresan, Briscoe 2019; draft-white-tsvwg-lld-00) gives DOCSIS 3.1 around 10 ms of access "
    "latency today, more under load, and LLD's aim as about 1 ms for non-queue-building traffic. These are "
    "quoted from our reading of those documents (no network here to re-check the wording). What differs: "
    "they are queueing delays of the low-latency queue (or round trips on an idle MAC with proactive grants), "
    "ours are one-way delays of whole packets through the simulated plant, so we compare the delay above the "
    "run's minimum (its queueing) for the claims; our upstream has no proactive grant service, so every "
    "upstream packet waits for a request and a grant (a MAP cycle and more).",
    "The game's losses are beside its delays (the legend, and `lost` and `loss_pct` in the runs' data: echoes "
    "the network dropped, or whose reply it dropped; one still on its way when a run ends is not lost). Under "
    "LLD a Not-ECT (NQB) packet in the low-latency queue is never dropped by its AQM, which cannot mark it "
    "either: it is queued unmarked (aqm/dualq.rs, as CableLabs' docsis-ns3 IAQM and Linux's DualPI2 do); "
    "queue protection moves a flow that builds a queue to the classic queue.",
    "Each point is the mean over seeds of each run's percentiles; with --quick a run lasts 6 s (about 250 "
    "echoes a way, so p99.9 is near the maximum), otherwise 30 s.",
)


def paper() -> Paper:
    return Paper("lld", "Low Latency DOCSIS for a game-like flow (our own study, not from a seed paper)",
                 FIGURE_LIST, CLAIMS, NOTES, stack=STACK)
