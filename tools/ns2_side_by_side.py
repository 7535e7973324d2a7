"""hfcsim's ``ns2`` stack side by side with ns-2.35 over Cohen's network (docs/ns2-side-by-side.md).

    python tools/ns2_side_by_side.py [--seeds N] [--hfcsim-only] [--print-recorded]

For each point of the grid (window 5 or 16 packets; downstream loss 0, 1, 3, 5 % with no ACK loss, or
ACK loss 10, 20 % with no data loss; the default timer, 0.5 s tick and 3 dupACKs, or a 0.2 s tick with
1 dupACK) it runs hfcsim (``tcp.stack = "ns2"``, seeds 1..N) and, if ``ns`` is on PATH, ns-2.35
(tools/ns2/cohen.tcl, seeds 1..N), and prints a Markdown table of mean throughput and mean timeouts
with the differences in %; a point whose difference is more than 10 % is marked. Without ``ns``
(or with --hfcsim-only) the ns-2 columns are the means recorded below (RECORDED).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from statistics import fmean

import hfcsim

TCL = Path(__file__).resolve().parent / "ns2" / "cohen.tcl"
#: window in packets -> the socket buffers an ns-2 window_ of that many 1460 B packets stands for
#: (floor(buffer / MSS), tcp.buffer_rounding = "down"): Cohen's 8 KB and 24 KB.
WINDOWS = {5: 8192, 16: 24576}
#: (downstream loss, ACK loss)
LOSSES = [(0.0, 0.0), (0.01, 0.0), (0.03, 0.0), (0.05, 0.0), (0.0, 0.10), (0.0, 0.20)]
#: (tick s, dupACK threshold)
TIMERS = [(0.5, 3), (0.2, 1)]
BAR = 0.10

Point = tuple[int, float, float, float, int]  # window, down loss, ACK loss, tick, dupACKs


def grid() -> list[Point]:
    return [(w, down, ack, tick, dup) for (tick, dup) in TIMERS for w in WINDOWS for (down, ack) in LOSSES]


def hfcsim_means(point: Point, seeds: int) -> tuple[float, float]:
    w, down, ack, tick, dup = point
    scenario = {
        "network": {"downstream_loss": down, "upstream_loss": ack},
        "tcp": {"stack": "ns2", "tick_s": tick, "dupack_threshold": dup, "send_buffer_bytes": WINDOWS[w]},
        "receiver": {"receive_buffer_bytes": WINDOWS[w]},
    }
    flows = [hfcsim.simulate(scenario, seed=s).flows[0] for s in range(1, seeds + 1)]
    return fmean(f["throughput_bps"] for f in flows), fmean(f["timeouts"] for f in flows)


def ns2_means(point: Point, seeds: int) -> tuple[float, float]:
    w, down, ack, tick, dup = point
    thr, tos = [], []
    for s in range(1, seeds + 1):
        line = subprocess.run(["ns", str(TCL), str(w), str(down), str(ack), str(tick), str(dup), str(s)],
                              capture_output=True, text=True, check=True).stdout.split()
        fields = dict(zip(line[::2], line[1::2]))
        thr.append(float(fields["throughput_bps"]))
        tos.append(float(fields["timeouts"]))
    return fmean(thr), fmean(tos)


#: ns-2.35 (Debian 12's ns2 package, 2.35+dfsg-3.1), tools/ns2/cohen.tcl, seeds 1..100, measured
#: 2026-11-23 with this script (--print-recorded): point -> (mean throughput b/s, mean timeouts).
RECORDED_SEEDS = 100
#: ns-2.35 (Debian package ns2 2.35), tools/ns2/cohen.tcl, seeds 1-100, measured 2026-11-22:
#: (mean throughput b/s, mean timeouts) per point.
RECORDED: dict[Point, tuple[float, float]] = {
    (5, 0.0, 0.0, 0.5, 3): (2115380.8, 0.0000),
    (5, 0.01, 0.0, 0.5, 3): (1389512.1, 3.2200),
    (5, 0.03, 0.0, 0.5, 3): (442421.7, 25.0700),
    (5, 0.05, 0.0, 0.5, 3): (204233.6, 59.3600),
    (5, 0.0, 0.1, 0.5, 3): (1525772.2, 1.8300),
    (5, 0.0, 0.2, 0.5, 3): (406295.6, 21.1500),
    (16, 0.0, 0.0, 0.5, 3): (7552469.5, 0.0000),
    (16, 0.01, 0.0, 0.5, 3): (2518001.2, 2.5500),
    (16, 0.03, 0.0, 0.5, 3): (528322.8, 22.0300),
    (16, 0.05, 0.0, 0.5, 3): (218993.9, 55.7900),
    (16, 0.0, 0.1, 0.5, 3): (6170122.6, 0.4600),
    (16, 0.0, 0.2, 0.5, 3): (4826793.9, 1.8800),
    (5, 0.0, 0.0, 0.2, 1): (2115380.8, 0.0000),
    (5, 0.01, 0.0, 0.2, 1): (1788752.5, 1.1700),
    (5, 0.03, 0.0, 0.2, 1): (1137578.8, 9.1300),
    (5, 0.05, 0.0, 0.2, 1): (721480.2, 22.2000),
    (5, 0.0, 0.1, 0.2, 1): (1661782.6, 1.8300),
    (5, 0.0, 0.2, 0.2, 1): (674826.6, 21.1500),
    (16, 0.0, 0.0, 0.2, 1): (7552469.5, 0.0000),
    (16, 0.01, 0.0, 0.2, 1): (3183454.7, 2.0300),
    (16, 0.03, 0.0, 0.2, 1): (1274818.6, 10.9200),
    (16, 0.05, 0.0, 0.2, 1): (742803.4, 23.6400),
    (16, 0.0, 0.1, 0.2, 1): (6358903.9, 0.4600),
    (16, 0.0, 0.2, 0.2, 1): (5218070.7, 1.8800),
}


def pct(ours: float, theirs: float) -> float | None:
    """(ours - theirs) / theirs in %; None when both are 0 (no difference to speak of)."""
    if theirs == 0:
        return None if ours == 0 else float("inf")
    return 100.0 * (ours - theirs) / theirs


def fmt_pct(x: float | None) -> str:
    return "0" if x is None else "inf" if x == float("inf") else f"{x:+.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--hfcsim-only", action="store_true", help="use the recorded ns-2 means even if ns is installed")
    ap.add_argument("--print-recorded", action="store_true", help="print the ns-2 means as a RECORDED dict")
    args = ap.parse_args(argv)
    live = shutil.which("ns") is not None and not args.hfcsim_only
    if not live and not RECORDED:
        print("ns is not on PATH and no ns-2 means are recorded", file=sys.stderr)
        return 1
    source = f"ns-2.35, {args.seeds} seeds (run now)" if live else f"ns-2.35, {RECORDED_SEEDS} seeds (recorded)"
    print(f"ns-2: {source}; hfcsim: tcp.stack = \"ns2\", {args.seeds} seeds. Throughput in Mb/s, "
          f"timeouts per 3 MB transfer; Δ = (hfcsim - ns-2) / ns-2; ✗ = outside {BAR:.0%}.\n")
    print("| window | tick, dupACK | down loss | ACK loss | ns-2 Mb/s | ns-2 TOs | hfcsim Mb/s | hfcsim TOs "
          "| Δ thr % | Δ TOs % | |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    recorded = {}
    outside = 0
    for point in grid():
        w, down, ack, tick, dup = point
        theirs = ns2_means(point, args.seeds) if live else RECORDED[point]
        recorded[point] = theirs
        ours = hfcsim_means(point, args.seeds)
        d_thr, d_to = pct(ours[0], theirs[0]), pct(ours[1], theirs[1])
        # A timeout mean below 0.5 per transfer on both sides is too small for a % to mean anything.
        to_small = max(ours[1], theirs[1]) < 0.5
        bad = abs(d_thr or 0) > 100 * BAR or (not to_small and abs(d_to or 0) > 100 * BAR)
        outside += bad
        print(f"| {w} | {tick:g} s, {dup} | {down:.0%} | {ack:.0%} | {theirs[0] / 1e6:.3f} | {theirs[1]:.2f} "
              f"| {ours[0] / 1e6:.3f} | {ours[1]:.2f} | {fmt_pct(d_thr)} | {fmt_pct(d_to)} | {'✗' if bad else ''} |")
    print(f"\n{outside} of {len(grid())} points outside {BAR:.0%} (timeout differences are not marked where both "
          "means are below 0.5).")
    if args.print_recorded:
        print("\nRECORDED = {")
        for point, (thr, tos) in recorded.items():
            print(f"    {point!r}: ({thr:.1f}, {tos:.4f}),")
        print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
