"""``hfcsim compare``: simulated throughput against loss, with the Mathis, PFTK and Lakshman-Madhow
predictions overlaid and each model's regime of validity marked.

    hfcsim compare [SCENARIO.toml] [--set k=v ...] [--loss 0,0.005,0.01,0.02,0.03,0.05] [--runs N]
                   [--out DIR] [--json]

Python: ``hfcsim.compare.compare(scenario=None, losses=..., runs=20, out=None) -> pandas.DataFrame``.

The simulation is a sweep of the scenario over its data-loss key (``network.downstream_loss`` for
the HFC network, ``network.loss`` for the one-bottleneck network), ``runs`` seeds per point. Each
model's inputs come from the same scenario (:func:`model_inputs`); the mapping is an assumption of
ours, spelt out here and printed with every table:

- MSS: the engine's, min(tcp.mss_bytes, send buffer, receive buffer).
- RTT: HFC: the base ``network.rtt_s`` plus the serialisation of one data packet (MSS + header) on
  the downstream channel and on the modem's LAN, and of one ACK (header bytes) on the upstream
  channel -- the RTT of one packet through an empty network; queueing is left out. Bottleneck
  network: T = tau + 1/mu (ACKs return at once, paper 004 Sec. II).
- Window limit W_max: min(send, receive buffer) rounded *up* to whole MSS, as BSD (Net/3
  ``tcp_mss``) and the engine do, in segments. PFTK's W_max.
- RTO (PFTK's T0): ``bsd`` timer: 2.5 ticks. On a path far shorter than a tick Net/3 settles at an
  RTO of 3 ticks (srtt 7/8 tick, rttvar 3/4, fixed point; ``tcp_xmit_timer``), and a timer armed at
  a random moment within a tick fires on the 3rd tick boundary, 2 to 3 ticks later: 2.5 ticks on
  average (1.25 s with 500 ms ticks). ``rfc6298`` timer: ``tcp.min_rto_s`` (the RTT is far below
  it). Back-off is PFTK's own G(p).
- b (packets per ACK): 2 with delayed ACK, else 1.
- Lakshman-Madhow: mu = the bottleneck rate in data packets/s (the slower of the downstream channel
  and the modem's LAN, at MSS + header bytes a packet); T = the RTT above (so tau = T - 1/mu); B =
  the cable-modem buffer in whole packets (bytes // packet size), or 10^6 packets ("large") when it
  is unbounded; Reno's formula for ``reno`` and ``newreno``, Tahoe's for ``tahoe``.

Regimes (a model is marked *outside* at a loss if any condition fails; the reasons are listed in the
table's ``*_regime`` column, the plot draws the curve dashed there):

- all: one flow (checked), no ACK loss (``ack loss``: no model has it); a long transfer
  (``short transfer``: otherwise slow start and the handshake matter, and the models are
  steady-state): at least 5 expected losses per transfer, or at p = 0 at least 50 windows.
- Mathis (congestion avoidance only, no timeouts, no window cap): p > 0 (``p=0 diverges``); p <= 2 %
  (``p>2%``); its peak window sqrt(8/(3bp)) <= W_max (``W-limited``); the sawtooth's low point,
  half that, >= dupACK threshold + 1 so a loss is repaired by fast retransmit (``timeouts``); Reno
  or NewReno (``tahoe``).
- PFTK full (timeouts and W_max included; p = 0 gives its limit W_max/RTT): Reno or NewReno
  (``tahoe``); dupACK threshold 3, which its timeout probability Q assumes (``dupACK!=3``);
  p <= 10 % (``p>10%``), the range of the traces it was validated on.
- Lakshman-Madhow random loss (mean-value cycle, no timeouts, no receiver window): mu*T >= 10, the
  high bandwidth-delay regime of the paper (``muT<10``); the window the model reaches, min(W_r,
  W_pipe), <= W_max (``W-limited``); W_r/2 >= dupACK threshold + 1 (``timeouts``). The table also
  gives p*(mu*T)^2, the paper's single parameter (degradation once it is >~ 1-10).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hfcsim.errors import ScenarioError
from hfcsim.scenario import Scenario, load

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_LOSSES", "MODELS", "add_parser", "compare", "model_inputs", "predict", "plot"]

DEFAULT_LOSSES = (0.0, 0.005, 0.01, 0.02, 0.03, 0.05)
DEFAULT_OUT = os.path.join("hfcsim-results", "compare")
MODELS = ("mathis", "pftk", "lm")
MODEL_NAMES = {"mathis": "Mathis", "pftk": "PFTK (full)", "lm": "Lakshman-Madhow"}
UNBOUNDED_BUFFER_PACKETS = 10**6  # "large": the CM buffer when the scenario leaves it unbounded
BSD_RTO_TICKS = 2.5  # mean delay of a 3-tick Net/3 RTO armed at a random phase (module docstring)
MATHIS_MAX_LOSS = 0.02
PFTK_MAX_LOSS = 0.10
LM_MIN_MUT = 10.0
MIN_WINDOWS_PER_TRANSFER = 50
MIN_LOSSES_PER_TRANSFER = 5


# ---------------------------------------------------------------------------------------------------
# Scenario -> model inputs


def loss_key(scenario: Scenario) -> str:
    """The scenario key of the data-packet loss probability."""
    return "network.loss" if scenario["network"]["kind"] == "bottleneck" else "network.downstream_loss"


def path_rtt_s(rtt_s: float, downstream_bps: float, upstream_bps: float, cm_lan_bps: float,
               mss_bytes: int, header_bytes: int = 40) -> float:
    """Base RTT + one data packet serialised on the downstream channel and the CM LAN + one ACK upstream.

    The RTT of one packet through the empty HFC network as the engine builds it (the base RTT is
    propagation, split over the two channels; the modem's LAN adds serialisation only).
    """
    packet_bits = 8.0 * (mss_bytes + header_bytes)
    return rtt_s + packet_bits / downstream_bps + packet_bits / cm_lan_bps + 8.0 * header_bytes / upstream_bps


def model_inputs(scenario: Scenario) -> dict[str, Any]:
    """The models' inputs from a resolved scenario (see the module docstring for every assumption)."""
    tcp, rx, net = scenario["tcp"], scenario["receiver"], scenario["network"]
    send, recv = tcp["send_buffer_bytes"], rx["receive_buffer_bytes"]
    mss = min(tcp["mss_bytes"], send, recv)  # the engine's MSS
    header = tcp["header_bytes"]
    packet = mss + header
    # BSD (Net/3 tcp_mss) rounds each socket buffer up to whole MSS; the window is the smaller one.
    window_bytes = min(math.ceil(send / mss), math.ceil(recv / mss)) * mss
    if net["kind"] == "bottleneck":
        mu = float(net["rate_pps"])
        rtt = net["tau_s"] + 1.0 / mu
        buffer_packets = net["buffer_packets"]
        upstream_loss = 0.0
    else:
        rtt = path_rtt_s(net["rtt_s"], net["downstream_bps"], net["upstream_bps"], net["cm_lan_bps"],
                         mss, header)
        mu = min(net["downstream_bps"], net["cm_lan_bps"]) / (8.0 * packet)
        if net["cm_buffer_bytes"] is not None:
            buffer_packets = net["cm_buffer_bytes"] // packet
        else:
            buffer_packets = net["cm_buffer_packets"]
        upstream_loss = net["upstream_loss"]
    if tcp["timer"] == "bsd":
        rto = BSD_RTO_TICKS * tcp["tick_s"]
        rto_note = f"{BSD_RTO_TICKS:g} BSD ticks of {tcp['tick_s']:g} s (a 3-tick RTO fires 2-3 ticks after arming)"
    else:
        rto = max(tcp["min_rto_s"], rtt)
        rto_note = "RFC 6298 minimum RTO (the RTT is far below it)"
    flows = scenario["flows"]
    return {
        "network": net["kind"],
        "loss_key": loss_key(scenario),
        "variant": tcp["variant"],
        "mss_bytes": mss,
        "header_bytes": header,
        "rtt_s": rtt,
        "window_bytes": window_bytes,
        "max_window_packets": window_bytes / mss,
        "rto_s": rto,
        "rto_note": rto_note,
        "packets_per_ack": 2.0 if rx["delayed_ack"] else 1.0,
        "dupack_threshold": tcp["dupack_threshold"],
        "mu_pps": mu,
        "tau_s": rtt - 1.0 / mu,
        "buffer_packets": buffer_packets,
        "mut": mu * rtt,
        "upstream_loss": upstream_loss,
        "transfer_packets": math.ceil(flows[0]["bytes"] / mss) if flows else 0,
    }


# ---------------------------------------------------------------------------------------------------
# Predictions and regimes


def _lm_buffer(inputs: Mapping[str, Any]) -> int:
    b = inputs["buffer_packets"]
    return UNBOUNDED_BUFFER_PACKETS if b is None else int(b)


def _lm_variant(inputs: Mapping[str, Any]) -> str:
    return "tahoe" if inputs["variant"] == "tahoe" else "reno"


def predict(inputs: Mapping[str, Any], loss: float) -> dict[str, Any]:
    """Each model's throughput (bit/s; NaN where it diverges) and regime ("ok" or reasons) at ``loss``."""
    from hfcsim.models import lakshman, throughput

    p = float(loss)
    mss, rtt, wmax, b = inputs["mss_bytes"], inputs["rtt_s"], inputs["max_window_packets"], inputs["packets_per_ack"]
    mu, tau, buf, variant = inputs["mu_pps"], inputs["tau_s"], _lm_buffer(inputs), _lm_variant(inputs)
    dup = inputs["dupack_threshold"]
    common = []
    if inputs["upstream_loss"] > 0:
        common.append("ack loss")
    w_pipe = lakshman.pipe_window_packets(mu, tau, buf)
    n_packets = inputs["transfer_packets"]
    if (n_packets * p < MIN_LOSSES_PER_TRANSFER) if p > 0 else (n_packets < MIN_WINDOWS_PER_TRANSFER * min(wmax, w_pipe)):
        common.append("short transfer")
    reno_like = inputs["variant"] in ("reno", "newreno")

    # Mathis et al. 1997: BW = MSS/RTT * sqrt(3/(2b)) / sqrt(p).
    reasons = list(common)
    if p == 0:
        mathis = math.nan
        reasons.append("p=0 diverges")
    else:
        mathis = throughput.mathis_throughput_bps(mss, rtt, p, packets_per_ack=b)
        w_m = math.sqrt(8.0 / (3.0 * b * p))  # peak of the periodic sawtooth
        if p > MATHIS_MAX_LOSS:
            reasons.append("p>2%")
        if w_m > wmax:
            reasons.append("W-limited")
        if w_m / 2.0 < dup + 1:
            reasons.append("timeouts")
    if not reno_like:
        reasons.append("tahoe")
    out = {"mathis": (mathis, reasons)}

    # Padhye et al. 1998 full model; p -> 0 tends to W_max / RTT.
    reasons = list(common)
    if p == 0:
        pftk = 8.0 * mss * wmax / rtt
    else:
        pftk = throughput.pftk_throughput_bps(mss, rtt, p, inputs["rto_s"], wmax, packets_per_ack=b)
    if not reno_like:
        reasons.append("tahoe")
    if dup != 3:
        reasons.append("dupACK!=3")
    if p > PFTK_MAX_LOSS:
        reasons.append("p>10%")
    out["pftk"] = (pftk, reasons)

    # Lakshman & Madhow random loss (derived mean-value cycle); p = 0: the loss-free cycle.
    reasons = list(common)
    if p == 0:
        cycle = (lakshman.tahoe_cycle(mu, tau, buf, buffer_counts_in_service=False) if variant == "tahoe"
                 else lakshman.reno_cycle(mu, tau, buf))
        lm_pps, w_r = cycle.throughput_pps, math.inf
    else:
        lm_pps = lakshman.throughput_random_loss_pps(p, mu, tau, buf, variant, buffer_counts_in_service=False)
        w_r = lakshman.random_loss_window(p, variant)
    if inputs["mut"] < LM_MIN_MUT:
        reasons.append("muT<10")
    if min(w_r, w_pipe) > wmax:
        reasons.append("W-limited")
    if w_r / 2.0 < dup + 1:
        reasons.append("timeouts")
    out["lm"] = (8.0 * mss * lm_pps, reasons)

    result: dict[str, Any] = {"p_mut2": p * inputs["mut"] ** 2}
    for model, (value, why) in out.items():
        result[f"{model}_bps"] = float(value)
        result[f"{model}_regime"] = "; ".join(why) if why else "ok"
    return result


# ---------------------------------------------------------------------------------------------------
# The comparison


def _losses(values: Iterable[Any]) -> list[float]:
    out = []
    for v in values:
        try:
            p = float(v)
        except (TypeError, ValueError):
            raise ScenarioError(f"loss = {v!r}: must be a number in [0, 1)") from None
        if not (math.isfinite(p) and 0.0 <= p < 1.0):
            raise ScenarioError(f"loss = {v!r}: must be in [0, 1)")
        out.append(p)
    if not out:
        raise ScenarioError("loss: give at least one loss probability")
    return sorted(set(out))


def _check_scenario(scenario: Scenario) -> None:
    kind = scenario["network"]["kind"]
    if kind in ("atm_hfc", "docsis"):
        # The models' inputs (path RTT, bottleneck rate, buffer) are derived for the two paths below;
        # an ATM path's cells and EPD, or a DOCSIS path's caps and AQM, have no such derivation here
        # (DOCSIS's is hfcsim.models.nguyen, which `hfcsim advise --ds-cap-bps` uses).
        hint = "; for DOCSIS, hfcsim advise --ds-cap-bps predicts from hfcsim.models.nguyen" if kind == "docsis" else ""
        raise ScenarioError(f'network.kind = "{kind}": compare models an hfc or bottleneck network only{hint}')
    flows = scenario["flows"]
    if len(flows) != 1:
        raise ScenarioError(f"flows: the scenario has {len(flows)} flows; compare's models describe one "
                            "connection, so give a one-flow scenario")
    if flows[0]["direction"] != "down":
        raise ScenarioError("flows.0.direction = \"up\": compare sweeps the downstream loss, so the flow "
                            "must be a download (direction = \"down\")")


def compare(scenario: Any = None, losses: Sequence[float] = DEFAULT_LOSSES, runs: int = 20,
            out: str | os.PathLike[str] | None = None, sets: Sequence[str] = (),
            jobs: int | None = 1) -> pd.DataFrame:
    """Simulated throughput against data loss, with each model's prediction and regime.

    scenario: a dict, a TOML path, a Scenario or None (the defaults); ``sets``: ``dotted.key=value``
    overrides. losses: data-loss probabilities in [0, 1) (swept on ``network.downstream_loss``, or
    ``network.loss`` for the bottleneck network). runs: seeds 1..runs per loss. out: a folder for
    ``compare.png``, ``compare.svg``, ``compare.csv`` and the sweep's Parquet store; None writes
    nothing (the sweep store goes to a temporary folder). jobs: sweep worker processes (1 = here).

    One row per loss: ``loss``, ``n`` (finished runs), ``sim_mean_bps``, ``sim_median_bps``,
    ``sim_ci95_low_bps``, ``sim_ci95_high_bps``, ``p_mut2``, and per model (mathis, pftk, lm)
    ``<model>_bps`` (NaN where the model diverges), ``<model>_ratio`` (model / simulated mean) and
    ``<model>_regime`` ("ok" or the reasons it is outside its regime). ``frame.attrs["inputs"]``
    holds the model inputs, ``frame.attrs["files"]`` the files written.
    """
    import pandas as pd

    from hfcsim.sweep import summarize
    from hfcsim.sweep import sweep as run_sweep

    resolved = load(scenario, sets)
    _check_scenario(resolved)
    ps = _losses(losses)
    from hfcsim.scenario import _got, native

    runs = native(runs)  # np.int64(20) is 20 (issue 36, defect 8)
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ScenarioError(f"runs = {runs!r}: must be an integer >= 1{_got(int, runs)}")
    inputs = model_inputs(resolved)
    key = inputs["loss_key"]
    spec = {"name": "compare", "base": resolved.to_dict(), "grid": {key: ps}, "runs": runs}

    if out is not None:
        from hfcsim.store import output_folder

        out = output_folder("out", out)  # "" is no folder: Path("") / "runs" wrote ./runs
    if out is None:
        with tempfile.TemporaryDirectory(prefix="hfcsim-compare-") as tmp:
            frame = run_sweep(spec, jobs=jobs, out=tmp, progress=False)
    else:
        frame = run_sweep(spec, jobs=jobs, out=Path(out) / "runs", progress=False)

    rows = []
    for p in ps:
        at = frame[frame[key] == p]
        s = summarize(at, "throughput_bps").iloc[0]
        row = {"loss": p, "n": int(s["count"]), "sim_mean_bps": float(s["mean"]),
               "sim_median_bps": float(s["median"]), "sim_ci95_low_bps": float(s["ci95_low"]),
               "sim_ci95_high_bps": float(s["ci95_high"])}
        pred = predict(inputs, p)
        row["p_mut2"] = pred["p_mut2"]
        for m in MODELS:
            value = pred[f"{m}_bps"]
            row[f"{m}_bps"] = value
            row[f"{m}_ratio"] = value / row["sim_mean_bps"] if row["sim_mean_bps"] > 0 else math.nan
            row[f"{m}_regime"] = pred[f"{m}_regime"]
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["inputs"] = inputs
    table.attrs["scenario"] = resolved.to_dict()
    table.attrs["files"] = {}
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        csv_path = folder / "compare.csv"
        table.to_csv(csv_path, index=False)
        files = {"csv": str(csv_path)}
        files.update(plot(table, inputs, folder / "compare"))
        table.attrs["files"] = files
    return table


# ---------------------------------------------------------------------------------------------------
# The plot


def plot(table: pd.DataFrame, inputs: Mapping[str, Any], stem: str | os.PathLike[str]) -> dict[str, str]:
    """Write ``<stem>.png`` and ``<stem>.svg``: simulation (mean +- 95 % CI, median) and the models.

    Model curves are solid where the model is inside its regime and dashed where outside.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    losses = table["loss"].to_numpy(dtype=float)
    grid = np.unique(np.concatenate([np.linspace(0.0, losses.max(), 121), losses]))
    fig, ax = plt.subplots(figsize=(8, 5))
    mean = table["sim_mean_bps"].to_numpy(dtype=float) / 1e6
    low = table["sim_ci95_low_bps"].to_numpy(dtype=float) / 1e6
    high = table["sim_ci95_high_bps"].to_numpy(dtype=float) / 1e6
    err = np.vstack([np.nan_to_num(mean - low), np.nan_to_num(high - mean)])
    ax.errorbar(100 * losses, mean, yerr=err, fmt="o", color="black", capsize=3,
                label=f"simulation: mean, 95 % CI ({int(table['n'].min())}+ runs)", zorder=5)
    ax.plot(100 * losses, table["sim_median_bps"] / 1e6, "s", mfc="none", color="black",
            label="simulation: median", zorder=5)
    colours = {"mathis": "tab:blue", "pftk": "tab:red", "lm": "tab:green"}
    top = float(np.nanmax(high)) if np.isfinite(high).any() else float(np.nanmax(mean))
    for m in MODELS:
        preds = [predict(inputs, p) for p in grid]
        y = np.array([d[f"{m}_bps"] for d in preds]) / 1e6
        ok = np.array([d[f"{m}_regime"] == "ok" for d in preds])
        ax.plot(100 * grid, y, "--", color=colours[m], alpha=0.6, lw=1.2)
        ax.plot(100 * grid, np.where(ok, y, np.nan), "-", color=colours[m], lw=2,
                label=MODEL_NAMES[m])
        finite = table[f"{m}_bps"].to_numpy(dtype=float) / 1e6
        if m != "mathis" and np.isfinite(finite).any():
            top = max(top, float(np.nanmax(finite)))
    ax.plot([], [], "--", color="grey", label="dashed: outside the model's regime")
    ax.set_ylim(0, 1.15 * top)
    ax.set_xlim(0, 100 * losses.max() * 1.02 if losses.max() > 0 else 1)
    ax.set_xlabel(f"data packet loss, % ({inputs['loss_key']})")
    ax.set_ylabel("throughput, Mb/s")
    ax.set_title("hfcsim compare: simulation vs loss-based TCP models")
    note = (f"MSS {inputs['mss_bytes']} B, RTT {1e3 * inputs['rtt_s']:.2f} ms, W_max {inputs['max_window_packets']:g} pkts, "
            f"T0 {inputs['rto_s']:g} s, b {inputs['packets_per_ack']:g}, mu {inputs['mu_pps']:.0f} pkt/s, "
            f"B {'large' if inputs['buffer_packets'] is None else str(inputs['buffer_packets']) + ' pkts'}")
    ax.text(0.01, 0.01, note, transform=ax.transAxes, fontsize=7, va="bottom")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    files = {}
    for ext in ("png", "svg"):
        path = f"{os.fspath(stem)}.{ext}"
        fig.savefig(path, dpi=120 if ext == "png" else None)
        files[ext] = path
    plt.close(fig)
    return files


# ---------------------------------------------------------------------------------------------------
# Output


def _mbps(v: float) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v / 1e6:.3f}"


def _ratio(v: float) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v:.2f}"


def format_inputs(inputs: Mapping[str, Any]) -> str:
    buf = "unbounded (L-M uses 1e6)" if inputs["buffer_packets"] is None else f"{inputs['buffer_packets']} pkts"
    rtt_how = ("base RTT + data packet on downstream and CM LAN + ACK upstream" if inputs["network"] == "hfc"
               else "tau + 1/mu")
    return (f"model inputs: MSS {inputs['mss_bytes']} B; RTT {1e3 * inputs['rtt_s']:.3f} ms ({rtt_how}); "
            f"W_max {inputs['max_window_packets']:g} pkts (min socket buffer rounded up to whole MSS); "
            f"T0 {inputs['rto_s']:g} s ({inputs['rto_note']}); b {inputs['packets_per_ack']:g}; "
            f"L-M mu {inputs['mu_pps']:.1f} pkt/s, B {buf}, mu*T {inputs['mut']:.1f}\n")


def format_table(table: pd.DataFrame) -> str:
    header = ["loss", "n", "sim mean", "median", "95% CI", "p(muT)^2"]
    for m in MODELS:
        short = {"mathis": "Mathis", "pftk": "PFTK", "lm": "L-M"}[m]
        header += [short, "/sim", "regime"]
    cells = [header]
    for _, r in table.iterrows():
        ci = ("-" if not math.isfinite(r["sim_ci95_low_bps"])
              else f"{_mbps(r['sim_ci95_low_bps'])}..{_mbps(r['sim_ci95_high_bps'])}")
        row = [f"{100 * r['loss']:g}%", str(r["n"]), _mbps(r["sim_mean_bps"]), _mbps(r["sim_median_bps"]), ci,
               f"{r['p_mut2']:.3g}"]
        for m in MODELS:
            row += [_mbps(r[f"{m}_bps"]), _ratio(r[f"{m}_ratio"]), r[f"{m}_regime"]]
        cells.append(row)
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    lines = []
    for c in cells:
        parts = [c[i].ljust(widths[i]) if header[i] == "regime" else c[i].rjust(widths[i]) for i in range(len(c))]
        lines.append("  ".join(parts).rstrip())
    return "throughput in Mb/s; regime: ok, or why the model is outside its range\n" + "\n".join(lines) + "\n"


def to_json_dict(table: pd.DataFrame) -> dict[str, Any]:
    """One JSON-ready object: inputs, scenario, rows (NaN -> null), files."""
    rows = json.loads(table.to_json(orient="records"))
    return {"loss_key": table.attrs["inputs"]["loss_key"], "inputs": table.attrs["inputs"],
            "scenario": table.attrs["scenario"], "rows": rows, "files": table.attrs["files"]}


# ---------------------------------------------------------------------------------------------------
# The command


def _loss_list(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--loss {text}: must be comma-separated numbers, e.g. 0,0.01,0.03") from None
    bad = [v for v in values if not (math.isfinite(v) and 0 <= v < 1)]
    if bad or not values:
        raise argparse.ArgumentTypeError(f"--loss {text}: each loss must be in [0, 1)")
    return values


def _positive_int(flag: str) -> Any:
    from hfcsim.argtypes import positive as _positive

    return _positive(flag)


def add_parser(subparsers: Any) -> None:
    """Declare ``hfcsim compare`` on ``subparsers``."""
    from hfcsim.argtypes import folder

    p = subparsers.add_parser(
        "compare", help="simulated throughput vs loss, with Mathis, PFTK and Lakshman-Madhow overlaid",
        description="Sweep a scenario's downstream loss (default 20 runs a point) and overlay the Mathis, "
                    "PFTK (full) and Lakshman-Madhow random-loss predictions, with inputs taken from the "
                    "scenario and each model's regime of validity marked. Writes compare.png, compare.svg "
                    "and compare.csv to --out.",
        epilog="examples:\n"
               "  hfcsim compare\n"
               "  hfcsim compare --set tcp.send_buffer_bytes=24576 --set receiver.receive_buffer_bytes=24576\n"
               "  hfcsim compare scenarios/x.toml --loss 0,0.01,0.02 --runs 50 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", nargs="?", metavar="SCENARIO.toml", help="scenario file; without one, the defaults")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key (repeatable)")
    p.add_argument("--loss", type=_loss_list, default=list(DEFAULT_LOSSES), metavar="P,P,...",
                   help="data-loss probabilities (default 0,0.005,0.01,0.02,0.03,0.05)")
    p.add_argument("--runs", type=_positive_int("--runs"), default=20, metavar="N", help="seeds per loss (default 20)")
    p.add_argument("--out", type=folder("--out"), default=DEFAULT_OUT, metavar="DIR",
                   help=f"output folder, created with its missing parents (default {DEFAULT_OUT})")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.set_defaults(func=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    from hfcsim.describe import describe

    scenario = load(args.scenario, args.sets)
    from hfcsim.store import os_reason, prepare_dir

    try:  # as sweep and reproduce check theirs: a file there, or a read-only folder, fails now
        prepare_dir(args.out)
    except OSError as e:
        raise ScenarioError(f"--out {args.out}: cannot write ({os_reason(e)})") from None
    table = compare(scenario, losses=args.loss, runs=args.runs, out=args.out)
    if args.json:
        sys.stdout.write(json.dumps(to_json_dict(table)) + "\n")
        return 0
    sys.stdout.write(f"{describe(scenario)}\n{format_inputs(table.attrs['inputs'])}")
    sys.stdout.write(format_table(table))
    files = table.attrs["files"]
    sys.stdout.write(f"plot -> {files['png']}, {files['svg']}; table -> {files['csv']}\n")
    return 0
