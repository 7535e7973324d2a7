"""``hfcsim advise``: server-side TCP settings for a cable access network, with the paper behind each,
and the throughput they are predicted to give before and after from quick seeded simulations.

    hfcsim advise [--downstream-bps 25e6] [--upstream-bps 3e6] [--rtt-s 0.02] [--cm-buffer-bytes 10240]
                  [--cm-lan-bps 10e6] [--downstream-loss 0] [--upstream-loss 0]
                  [--transfer-bytes 300000,3000000] [--connections 1] [--mtu-bytes 1500] [--seeds 30] [--json]

Python: ``hfcsim.advise.advise(**inputs) -> dict``. The defaults are Cohen & Ramanathan's network
(25/3 Mb/s, 20 ms, a 10 KB cable-modem buffer drained at 10 Mb/s, paper 001 Sec. V).

The recommendations (each with its reason and reference):

- MSS: the MTU's (MTU - 40), or 536 when upstream (ACK) loss is >= 10 %: more, smaller segments
  mean more ACKs per window (Cohen & Ramanathan Sec. VI.B, Fig. 14).
- Socket buffer: the largest whole-MSS buffer satisfying Cohen & Ramanathan's rule
  C >= (B n - 1)(1 - r_lan/r_ds) for n connections per modem (Sec. V.B;
  :func:`hfcsim.models.cohen.max_socket_buffer_whole_mss`), and no more than the per-connection
  share of the pipe, ceil(mu*T / n) segments (mu the bottleneck rate in packets/s, T the RTT with
  serialisation, as in :mod:`hfcsim.compare`): a larger window only queues in the modem. At least one
  segment. When the modem's LAN is at least as fast as the downstream channel the rule sets no bound
  and the pipe share is used.
- Initial window 2 (Sec. VI.A), BSD timer tick 200 ms (Sec. VI.C), dupACK threshold 1 (Sec. VI.D).
- DS/US rate-cap ratio: Nguyen & Armitage's eq. (1) with d = 1.5 packets per ACK (their value),
  packets counted on the cable (:func:`hfcsim.models.nguyen.ds_us_ratio_limit_for_mtu`), against the
  given rates.

Predictions: "before" is Cohen's default server (8 KB socket buffers, IW 1, 500 ms tick, dupACK 3,
MSS 1460 or the MTU's if smaller); "after" the recommended settings. The simulated network is the
one described (an FTP-style download opened by the server, handshake modelled, delayed ACK at the
PC, Reno, ``connections`` simultaneous transfers through one modem). The socket buffer is set at
both ends (the window is the smaller of the two): a PC advertising less caps the window at its own
buffer. Throughput is per connection, mean and median over ``seeds`` runs (seeds 1..seeds).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import textwrap
import time
from typing import Any

from hfcsim.errors import ScenarioError

__all__ = ["DEFAULTS", "add_parser", "advise", "format_advice"]

DEFAULTS: dict[str, Any] = {
    "downstream_bps": 25e6,
    "upstream_bps": 3e6,
    "rtt_s": 0.02,
    "cm_buffer_bytes": 10240,
    "cm_lan_bps": 10e6,
    "downstream_loss": 0.0,
    "upstream_loss": 0.0,
    "transfer_bytes": (300_000, 3_000_000),
    "connections": 1,
    "mtu_bytes": 1500,
    "seeds": 60,
}
HEADER_BYTES = 40  # TCP/IP header, no options
HIGH_ACK_LOSS = 0.10  # Cohen Sec. VI.B: switch to a small MSS at this upstream loss
SMALL_MSS = 536  # the classic default MSS (RFC 879), Cohen's Fig. 14 "smaller MSS"
PACKETS_PER_ACK = 1.5  # Nguyen & Armitage Sec. III.B's d
BEFORE = {"send_buffer_bytes": 8192, "initial_window": 1, "tick_s": 0.5, "dupack_threshold": 3, "mss_bytes": 1460}
COHEN = "Cohen & Ramanathan 1998"
NGUYEN = "Nguyen & Armitage 2004"


# ---------------------------------------------------------------------------------------------------
# Validation


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ScenarioError(f"{name} = {value!r}: must be a number")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ScenarioError(f"{name} = {value!r}: must be a number") from None
    if not math.isfinite(v):
        raise ScenarioError(f"{name} = {value!r}: must be finite")
    return v


def _positive(name: str, value: Any) -> float:
    v = _number(name, value)
    if v <= 0:
        raise ScenarioError(f"{name} = {value:g}: must be > 0")
    return v


def _non_negative(name: str, value: Any) -> float:
    v = _number(name, value)
    if v < 0:
        raise ScenarioError(f"{name} = {value:g}: must be >= 0")
    return v


def _probability(name: str, value: Any) -> float:
    v = _number(name, value)
    if not 0 <= v < 1:
        raise ScenarioError(f"{name} = {value:g}: must be in [0, 1)")
    return v


def _integer(name: str, value: Any, low: int, high: int | None = None) -> int:
    v = _number(name, value)
    if v != int(v) or v < low or (high is not None and v > high):
        upper = f" and <= {high}" if high is not None else ""
        raise ScenarioError(f"{name} = {value!r}: must be an integer >= {low}{upper}")
    return int(v)


def _check(inputs: dict[str, Any]) -> dict[str, Any]:
    unknown = set(inputs) - set(DEFAULTS)
    if unknown:
        raise ScenarioError(f"advise: unknown input {sorted(unknown)[0]}; inputs are {', '.join(DEFAULTS)}")
    x = {**DEFAULTS, **inputs}
    sizes = x["transfer_bytes"]
    if isinstance(sizes, (int, float)) and not isinstance(sizes, bool):
        sizes = [sizes]
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise ScenarioError(f"transfer_bytes = {sizes!r}: must be a non-empty list of byte counts")
    return {
        "downstream_bps": _positive("downstream_bps", x["downstream_bps"]),
        "upstream_bps": _positive("upstream_bps", x["upstream_bps"]),
        "rtt_s": _non_negative("rtt_s", x["rtt_s"]),
        "cm_buffer_bytes": _integer("cm_buffer_bytes", x["cm_buffer_bytes"], 1),
        "cm_lan_bps": _positive("cm_lan_bps", x["cm_lan_bps"]),
        "downstream_loss": _probability("downstream_loss", x["downstream_loss"]),
        "upstream_loss": _probability("upstream_loss", x["upstream_loss"]),
        "transfer_bytes": [_integer("transfer_bytes", s, 1) for s in sizes],
        "connections": _integer("connections", x["connections"], 1, 64),
        "mtu_bytes": _integer("mtu_bytes", x["mtu_bytes"], HEADER_BYTES + 1, 65535),
        "seeds": _integer("seeds", x["seeds"], 1, 10_000),
    }


# ---------------------------------------------------------------------------------------------------
# Recommendations


def _recommend(x: dict[str, Any]) -> list[dict[str, Any]]:
    from hfcsim.compare import path_rtt_s
    from hfcsim.models import cohen, nguyen

    recs = []
    mtu_mss = x["mtu_bytes"] - HEADER_BYTES
    if x["upstream_loss"] >= HIGH_ACK_LOSS and mtu_mss > SMALL_MSS:
        mss = SMALL_MSS
        reason = (f"upstream (ACK) loss of {100 * x['upstream_loss']:g}% is high: smaller segments mean more "
                  "ACKs per window, so losing ACKs costs fewer timeouts, at some header overhead")
    else:
        mss = mtu_mss
        reason = ("full-size segments for the MTU: least header overhead and fastest window growth; a smaller "
                  f"MSS pays off only under heavy ACK loss (here {100 * x['upstream_loss']:g}% < "
                  f"{100 * HIGH_ACK_LOSS:g}%)")
    recs.append({"setting": "tcp.mss_bytes", "value": mss, "text": f"{mss} B", "reason": reason,
                 "reference": f"{COHEN}, Sec. VI.B (Fig. 14)"})

    n = x["connections"]
    rule = cohen.max_socket_buffer_whole_mss(x["cm_buffer_bytes"], x["downstream_bps"], x["cm_lan_bps"], n,
                                            mss, HEADER_BYTES)
    packet = mss + HEADER_BYTES
    mu = min(x["downstream_bps"], x["cm_lan_bps"]) / (8.0 * packet)
    rtt = path_rtt_s(x["rtt_s"], x["downstream_bps"], x["upstream_bps"], x["cm_lan_bps"], mss, HEADER_BYTES)
    pipe_segments = max(1, math.ceil(mu * rtt / n - 1e-9))
    per = f"{n} connections share" if n > 1 else "one connection uses"
    if math.isinf(rule):
        segments = pipe_segments
        reason = (f"the modem's LAN is at least as fast as the downstream channel, so nothing accumulates in "
                  f"its buffer; {per} the pipe of {mu * rtt:.1f} packets (bottleneck rate x RTT)")
    else:
        rule_segments = int(rule // mss)
        segments = max(1, min(rule_segments, pipe_segments))
        if rule_segments <= pipe_segments:
            reason = (f"the largest whole-MSS window that a back-to-back burst of {n} connection(s) cannot "
                      f"overrun the {x['cm_buffer_bytes']} B modem buffer with "
                      f"(C >= (B n - 1)(1 - r_lan/r_ds): {rule_segments} segments)")
            if rule_segments < 1:
                reason += "; the modem buffer is too small even for that, so one segment"
        else:
            reason = (f"the rule allows {rule_segments} segments but {mu * rtt:.1f} packets fill the pipe "
                      f"(bottleneck rate x RTT; {per} it), and a larger window only queues in the modem")
    buffer_bytes = segments * mss
    recs.append({"setting": "tcp.send_buffer_bytes", "value": buffer_bytes,
                 "text": f"{buffer_bytes} B ({segments} x {mss} B)", "reason": reason,
                 "reference": f"{COHEN}, Sec. V.B"})

    recs.append({"setting": "tcp.initial_window", "value": 2, "text": "2 segments",
                 "reason": "a server opening an FTP-style data connection starts with one segment, which a "
                           "delayed-ACK PC holds for up to 200 ms; two full segments force an immediate ACK",
                 "reference": f"{COHEN}, Sec. VI.A (Figs. 11-12)"})
    recs.append({"setting": "tcp.tick_s", "value": 0.2, "text": "200 ms (BSD timer tick)",
                 "reason": "a 200 ms retransmission-timer tick instead of 500 ms shortens every timeout, "
                           "about doubling throughput at 3 % downstream loss",
                 "reference": f"{COHEN}, Sec. VI.C (Fig. 15)"})
    recs.append({"setting": "tcp.dupack_threshold", "value": 1, "text": "1 (\"super\" fast retransmit)",
                 "reason": "the HFC path delivers in order, so the first duplicate ACK already means a loss; "
                           "retransmitting then avoids timeouts in small windows",
                 "reference": f"{COHEN}, Sec. VI.D (Figs. 16-17)"})

    limit = nguyen.ds_us_ratio_limit_for_mtu(x["mtu_bytes"], PACKETS_PER_ACK)
    ratio = x["downstream_bps"] / x["upstream_bps"]
    if ratio <= limit:
        reason = (f"DS/US = {ratio:.1f} is within the bound {limit:.1f} (MTU {x['mtu_bytes']} B, "
                  f"{PACKETS_PER_ACK:g} packets per ACK): the upstream can carry the ACKs the downstream rate needs")
        verdict = "ok"
    else:
        reason = (f"DS/US = {ratio:.1f} exceeds the bound {limit:.1f} (MTU {x['mtu_bytes']} B, "
                  f"{PACKETS_PER_ACK:g} packets per ACK): the ACK stream cannot clock the downstream cap; raise "
                  f"the upstream cap to >= {x['downstream_bps'] / limit / 1e6:.3g} Mb/s or lower the downstream cap")
        verdict = "too high"
    recs.append({"setting": "ds_us_ratio", "value": limit, "text": f"<= {limit:.1f} (given {ratio:.1f}: {verdict})",
                 "reason": reason, "reference": f"{NGUYEN}, Sec. III.B, eq. (1)",
                 "given": ratio, "ok": ratio <= limit})
    return recs


# ---------------------------------------------------------------------------------------------------
# Predictions


def _scenario(x: dict[str, Any], size: int, mss: int, buffer_bytes: int, initial_window: int, tick_s: float,
              dupack_threshold: int) -> dict[str, Any]:
    return {
        "network": {"downstream_bps": x["downstream_bps"], "upstream_bps": x["upstream_bps"], "rtt_s": x["rtt_s"],
                    "downstream_loss": x["downstream_loss"], "upstream_loss": x["upstream_loss"],
                    "cm_buffer_bytes": x["cm_buffer_bytes"], "cm_lan_bps": x["cm_lan_bps"]},
        "tcp": {"variant": "reno", "mss_bytes": mss, "header_bytes": HEADER_BYTES, "initial_window": initial_window,
                "dupack_threshold": dupack_threshold, "timer": "bsd", "tick_s": tick_s,
                "send_buffer_bytes": buffer_bytes},
        "receiver": {"delayed_ack": True, "receive_buffer_bytes": buffer_bytes},
        "flows": [{"bytes": size, "direction": "down", "opener": "server", "handshake": True, "modem": 0}
                  for _ in range(x["connections"])],
    }


def _run(scenario: dict[str, Any], seeds: int) -> dict[str, Any]:
    from hfcsim.simulate import simulate

    values, timeouts, total = [], [], 0
    for seed in range(1, seeds + 1):
        for flow in simulate(scenario, seed=seed).flows:
            total += 1
            timeouts.append(flow["timeouts"])
            if flow["finished"] and flow["throughput_bps"] is not None:
                values.append(flow["throughput_bps"])
    return {"mean_bps": statistics.fmean(values) if values else None,
            "median_bps": statistics.median(values) if values else None,
            "flows": total, "finished": len(values),
            "timeouts_mean": statistics.fmean(timeouts) if timeouts else None}


def advise(**inputs: Any) -> dict[str, Any]:
    """Recommendations and before/after predictions for the access network described by ``inputs``.

    Inputs (defaults: Cohen & Ramanathan's network): downstream_bps, upstream_bps, rtt_s,
    cm_buffer_bytes, cm_lan_bps, downstream_loss, upstream_loss, transfer_bytes (a list),
    connections (per modem), mtu_bytes, seeds (simulation runs per prediction). Raises ScenarioError
    (one line) for impossible inputs.

    Returns ``{"inputs", "recommendations": [{setting, value, text, reason, reference}, ...],
    "settings": {setting: value}, "before": {...}, "after": {...}, "predictions": [{transfer_bytes,
    before: {mean_bps, median_bps, flows, finished, timeouts_mean}, after: {...}, ratio}], "seeds",
    "wall_s"}``.
    """
    started = time.perf_counter()
    x = _check(dict(inputs))
    recs = _recommend(x)
    settings = {r["setting"]: r["value"] for r in recs}
    before = {**BEFORE, "mss_bytes": min(BEFORE["mss_bytes"], x["mtu_bytes"] - HEADER_BYTES)}
    after = {"send_buffer_bytes": settings["tcp.send_buffer_bytes"], "initial_window": settings["tcp.initial_window"],
             "tick_s": settings["tcp.tick_s"], "dupack_threshold": settings["tcp.dupack_threshold"],
             "mss_bytes": settings["tcp.mss_bytes"]}
    predictions = []
    for size in x["transfer_bytes"]:
        runs = {}
        for name, s in (("before", before), ("after", after)):
            runs[name] = _run(_scenario(x, size, s["mss_bytes"], s["send_buffer_bytes"], s["initial_window"],
                                        s["tick_s"], s["dupack_threshold"]), x["seeds"])
        b, a = runs["before"]["mean_bps"], runs["after"]["mean_bps"]
        predictions.append({"transfer_bytes": size, **runs, "ratio": a / b if a and b else None})
    return {"inputs": x, "recommendations": recs, "settings": settings, "before": before, "after": after,
            "predictions": predictions, "seeds": x["seeds"], "wall_s": time.perf_counter() - started}


# ---------------------------------------------------------------------------------------------------
# Output


def _mbps(v: float | None) -> str:
    return "-" if v is None else f"{v / 1e6:.3f}"


def _bytes(n: int) -> str:
    if n >= 1_000_000 and n % 100_000 == 0:
        return f"{n / 1e6:g} MB"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000} KB"
    return f"{n} B"


def format_advice(result: dict[str, Any]) -> str:
    x = result["inputs"]
    lines = [f"network: {x['downstream_bps'] / 1e6:g}/{x['upstream_bps'] / 1e6:g} Mb/s down/up, modem LAN "
             f"{x['cm_lan_bps'] / 1e6:g} Mb/s, RTT {1e3 * x['rtt_s']:g} ms, modem buffer {x['cm_buffer_bytes']} B, "
             f"loss {100 * x['downstream_loss']:g}%/{100 * x['upstream_loss']:g}% down/up, "
             f"{x['connections']} connection(s) per modem, MTU {x['mtu_bytes']} B",
             "", "recommended settings"]
    recs = result["recommendations"]
    names = {"tcp.mss_bytes": "MSS", "tcp.send_buffer_bytes": "socket buffer", "tcp.initial_window": "initial window",
             "tcp.tick_s": "timer granularity", "tcp.dupack_threshold": "dupACK threshold",
             "ds_us_ratio": "DS/US rate-cap ratio"}
    w1 = max(len(names[r["setting"]]) for r in recs)
    w2 = max(len(r["text"]) for r in recs)
    for r in recs:
        lines.append(f"  {names[r['setting']].ljust(w1)}  {r['text'].ljust(w2)}  [{r['reference']}]")
        for part in textwrap.wrap(r["reason"], 100):
            lines.append(f"  {''.ljust(w1)}  {part}")
    b, a = result["before"], result["after"]
    lines += ["", f"predicted throughput per connection, Mb/s (mean, median in brackets; {result['seeds']} seeded "
                  "runs each, FTP-style server-opened download with handshake, delayed-ACK PC)",
              f"  before: {b['send_buffer_bytes']} B buffers, IW {b['initial_window']}, {1e3 * b['tick_s']:g} ms tick, "
              f"dupACK {b['dupack_threshold']}, MSS {b['mss_bytes']} B",
              f"  after:  {a['send_buffer_bytes']} B buffers, IW {a['initial_window']}, {1e3 * a['tick_s']:g} ms tick, "
              f"dupACK {a['dupack_threshold']}, MSS {a['mss_bytes']} B"]
    cells = [["transfer", "before", "after", "after/before", "timeouts before", "after"]]
    for p in result["predictions"]:
        pb, pa = p["before"], p["after"]
        cells.append([_bytes(p["transfer_bytes"]), f"{_mbps(pb['mean_bps'])} [{_mbps(pb['median_bps'])}]",
                      f"{_mbps(pa['mean_bps'])} [{_mbps(pa['median_bps'])}]",
                      "-" if p["ratio"] is None else f"{p['ratio']:.2f}",
                      "-" if pb["timeouts_mean"] is None else f"{pb['timeouts_mean']:.2f}",
                      "-" if pa["timeouts_mean"] is None else f"{pa['timeouts_mean']:.2f}"])
        unfinished = [f"{n} {q['flows'] - q['finished']} of {q['flows']}" for n, q in (("before", pb), ("after", pa))
                      if q["finished"] < q["flows"]]
        if unfinished:
            cells[-1][0] += " *"
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
    lines += ["  " + "  ".join(c[i].rjust(widths[i]) for i in range(len(c))) for c in cells]
    if any(q["finished"] < q["flows"] for p in result["predictions"] for q in (p["before"], p["after"])):
        lines.append("  * some transfers did not finish within the simulated-time limit and are left out")
    lines.append(f"({result['wall_s']:.2f} s)")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------
# The command


def _float(flag: str) -> Any:
    def parse(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} {text}: must be a number") from None
    return parse


def _int(flag: str) -> Any:
    def parse(text: str) -> int:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} {text}: must be an integer") from None
        if not math.isfinite(value) or value != int(value):
            raise argparse.ArgumentTypeError(f"{flag} {text}: must be an integer")
        return int(value)
    return parse


def _sizes(text: str) -> list[int]:
    parse = _int("--transfer-bytes")
    values = [parse(part.strip()) for part in text.split(",") if part.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"--transfer-bytes {text}: give at least one size in bytes")
    return values


def add_parser(subparsers: Any) -> None:
    """Declare ``hfcsim advise`` on ``subparsers``."""
    d = DEFAULTS
    p = subparsers.add_parser(
        "advise", help="recommend server TCP settings for a cable network, with predicted before/after throughput",
        description="Recommend server-side TCP settings (socket buffer, initial window, MSS, timer granularity, "
                    "dupACK threshold) and check the DS/US rate-cap ratio for a cable access network, each with "
                    "its reason and paper; then predict throughput before (Cohen's defaults) and after from quick "
                    "seeded simulations. Defaults: Cohen & Ramanathan's network.",
        epilog="examples:\n"
               "  hfcsim advise\n"
               "  hfcsim advise --downstream-loss 0.01 --connections 3\n"
               "  hfcsim advise --downstream-bps 38e6 --upstream-bps 1e6 --upstream-loss 0.1 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--downstream-bps", type=_float("--downstream-bps"), default=d["downstream_bps"], metavar="BPS",
                   help="downstream channel rate (default 25e6)")
    p.add_argument("--upstream-bps", type=_float("--upstream-bps"), default=d["upstream_bps"], metavar="BPS",
                   help="upstream channel rate (default 3e6)")
    p.add_argument("--rtt-s", type=_float("--rtt-s"), default=d["rtt_s"], metavar="S",
                   help="base round-trip time server <-> PC (default 0.02)")
    p.add_argument("--cm-buffer-bytes", type=_int("--cm-buffer-bytes"), default=d["cm_buffer_bytes"], metavar="B",
                   help="cable-modem buffer (default 10240)")
    p.add_argument("--cm-lan-bps", type=_float("--cm-lan-bps"), default=d["cm_lan_bps"], metavar="BPS",
                   help="modem -> PC LAN rate (default 10e6)")
    p.add_argument("--downstream-loss", type=_float("--downstream-loss"), default=d["downstream_loss"], metavar="P",
                   help="expected downstream packet loss (default 0)")
    p.add_argument("--upstream-loss", type=_float("--upstream-loss"), default=d["upstream_loss"], metavar="P",
                   help="expected upstream (ACK) loss (default 0)")
    p.add_argument("--transfer-bytes", type=_sizes, default=list(d["transfer_bytes"]), metavar="N,N,...",
                   help="typical transfer sizes (default 300000,3000000)")
    p.add_argument("--connections", type=_int("--connections"), default=d["connections"], metavar="N",
                   help="simultaneous connections per modem (default 1)")
    p.add_argument("--mtu-bytes", type=_int("--mtu-bytes"), default=d["mtu_bytes"], metavar="B",
                   help="IP MTU (default 1500)")
    p.add_argument("--seeds", type=_int("--seeds"), default=d["seeds"], metavar="N",
                   help="simulation runs per prediction (default 60)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.set_defaults(func=_cmd_advise)


def _cmd_advise(args: argparse.Namespace) -> int:
    inputs = {k: getattr(args, k) for k in DEFAULTS}
    result = advise(**inputs)
    if args.json:
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        sys.stdout.write(format_advice(result))
    return 0
