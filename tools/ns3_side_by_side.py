"""hfcsim against ns-3 on Cohen's network: NewReno, RFC 6298 timers, 3 % downstream loss, one
3 MB download per seed (issue 10, item 3; docs/ns3-newreno.md).

    python tools/ns3_side_by_side.py                                  # hfcsim + recorded ns-3
    python tools/ns3_side_by_side.py --ns3-python NS3_VENV/bin/python   # run ns-3 too
    python tools/ns3_side_by_side.py --ns3-python NS3_VENV/bin/python --what-if

Prints a Markdown table: stack, mean throughput (Mb/s) and mean timeouts per 3 MB transfer over
the same seeds. Without ``--ns3-python`` the ns-3 row is the figure measured with
tools/ns3/cohen_newreno.py and recorded below (NS3_RECORDED), so the script needs no ns-3.
``--what-if`` adds ns-3 rows with the script's knobs that bend ns-3 toward RFC 5681 and Net/3
(not ns-3's own behaviour): they attribute the gap rule by rule.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

import hfcsim

# Matched to tools/ns3/cohen_newreno.py: Cohen's defaults (25/3 Mb/s, 20 ms, 6 x 1460-byte
# windows, IW 1, delayed ACK, dupACK threshold 3) with NewReno and the RFC 6298 timer (min 1 s).
SCENARIO = {"tcp": {"variant": "newreno", "timer": "rfc6298", "min_rto_s": 1.0},
            "network": {"downstream_loss": 0.03}}

# tools/ns3/cohen_newreno.py --seeds 20 --loss 0.03 (seeds 1..20), ns-3.44 from PyPI
# (ns3 3.44.post0), measured 2026-11-22: (label, mean Mb/s, mean timeouts).
NS3_RECORDED = [
    ("ns-3.44 TcpNewReno + TcpClassicRecovery (recorded 2026-11-22)", 0.647, 20.20),
]

SCRIPT = Path(__file__).resolve().parent / "ns3" / "cohen_newreno.py"
MEAN_LINE = re.compile(r"mean over (\d+) seeds: ([0-9.]+) Mb/s, ([0-9.]+) timeouts")


def hfcsim_row(seeds: range, label: str = "hfcsim newreno, rfc6298 timer",
               tcp: dict | None = None) -> tuple[str, float, float]:
    scenario = {**SCENARIO, "tcp": {**SCENARIO["tcp"], **(tcp or {})}}
    flows = [hfcsim.simulate(scenario, seed=s).flows[0] for s in seeds]
    return (label,
            statistics.mean(f["throughput_bps"] for f in flows) / 1e6,
            statistics.mean(f["timeouts"] for f in flows))


# The script's what-if knobs, one at a time and together.
WHAT_IF = [
    ["--rfc5681-ssthresh"],
    ["--rfc5681-loss-exit"],
    ["--slow-start-at-ssthresh"],
    ["--rfc5681-ssthresh", "--rfc5681-loss-exit", "--slow-start-at-ssthresh"],
]


def ns3_row(python: str, seeds: range, knobs: list[str] = ()) -> tuple[str, float, float]:
    cmd = [python, str(SCRIPT), "--seeds", str(len(seeds)), "--first-seed", str(seeds.start),
           "--loss", "0.03", *knobs]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = MEAN_LINE.search(out)
    if m is None:
        raise SystemExit(f"no mean line in the ns-3 script's output:\n{out}")
    label = "ns-3 TcpNewReno + TcpClassicRecovery (run now)"
    if knobs:
        label = "what-if: ns-3 with " + " ".join(f"`{k}`" for k in knobs)
    return (label, float(m[2]), float(m[3]))


def table(rows: list[tuple[str, float, float]], n: int) -> str:
    lines = [f"| stack ({n} seeds, 3 MB each) | mean throughput, Mb/s | mean timeouts |",
             "| --- | ---: | ---: |"]
    lines += [f"| {label} | {mbps:.3f} | {rtos:.2f} |" for label, mbps, rtos in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20, help="seeds 1..N (default 20)")
    ap.add_argument("--ns3-python", help="a python with ns-3 installed (e.g. NS3_VENV/bin/python)")
    ap.add_argument("--what-if", action="store_true", help="with --ns3-python: also the what-if rows")
    args = ap.parse_args(argv)
    if args.what_if and not args.ns3_python:
        ap.error("--what-if needs --ns3-python")
    seeds = range(1, args.seeds + 1)
    rows = [hfcsim_row(seeds),
            hfcsim_row(seeds, "hfcsim, and a repeated timeout holds ssthresh (RFC 5681 3.1)",
                       {"repeat_timeout_holds_ssthresh": True})]
    rows += [ns3_row(args.ns3_python, seeds)] if args.ns3_python else NS3_RECORDED
    if args.what_if:
        rows += [ns3_row(args.ns3_python, seeds, knobs) for knobs in WHAT_IF]
    print(table(rows, args.seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
