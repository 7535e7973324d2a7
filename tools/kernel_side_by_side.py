"""The linux stack against the real kernel (issue 25): `hfcsim emulate --compare` over a grid, as a table.

    sudo python tools/kernel_side_by_side.py [--seeds N] [--out DIR]      # emulate + simulate (root)
    sudo python tools/kernel_side_by_side.py --points cubic5:0.01 --seeds 30   # more seeds at one point
    python tools/kernel_side_by_side.py --resimulate [--out DIR]          # simulate again, same emulations

Each point is one `emulate --compare` run per seed: the scenario carried by the host's own Linux TCP
through the emulated network, then simulated with the same scenario and seed (the linux stack, with
the receive buffer as the kernel's SO_RCVBUF, `receiver.linux_window`; see docs/how-to/emulation.md). The emulations are kept as JSON in DIR
(default hfcsim-results/kernel-side-by-side), so that `--resimulate` holds a changed model against the
same real-kernel runs without root or wall-clock time. The loss pattern is the same on both sides
(the model's seeded stream drops the n-th packet of a link either way), so the retransmissions agree
closely and the differences are the stacks'.

Points (issue 25's list):
- Cohen's network (25/3 Mb/s, 20 ms, the 1998 paper's) with a 1 Gb/s LAN, a 3 MB download, at 0, 1, 3
  and 5 % downstream loss: Linux Reno with SACK, RACK, TLP and timestamps off (PRR on, as the kernel
  always runs it), receive buffers of 5 and 16 x 1460 B (`reno5`, `reno16`); the linux stack's
  defaults, CUBIC with SACK, RACK-TLP and timestamps (`cubic5`, `cubic16`). Send buffers 64 KB.
- a 300/20 Mb/s plant with a 30 ms RTT at 0.1 and 1 % loss, the linux defaults, 8 MB buffers, a 30 MB
  download (`plant`), 5 seeds.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

# Without SACK neither RACK nor the loss probe (both need it); PRR stays on, as the kernel always runs it
# (tcp_cwnd_reduction; emulate refuses tcp.prr = false).
RENO = {"tcp.congestion_control": "reno", "tcp.sack": "false", "tcp.rack": "false", "tcp.tlp": "false",
        "tcp.timestamps": "false"}
COHEN = {"network.downstream_loss": None, "network.default_buffer": '"unbounded"', "network.cm_lan_bps": "1e9",
         "tcp.send_buffer_bytes": "65536"}
PLANT = {"network.downstream_bps": "300e6", "network.upstream_bps": "20e6", "network.rtt_s": "0.03",
         "network.cm_lan_bps": "1e9", "tcp.send_buffer_bytes": "8000000",
         "receiver.receive_buffer_bytes": "8000000", "flows.0.bytes": "30000000"}
POINTS: dict[str, tuple[dict[str, str | None], tuple[float, ...]]] = {
    "reno5": ({**COHEN, **RENO, "receiver.receive_buffer_bytes": "7300"}, (0, 0.01, 0.03, 0.05)),
    "reno16": ({**COHEN, **RENO, "receiver.receive_buffer_bytes": "23360"}, (0, 0.01, 0.03, 0.05)),
    "cubic5": ({**COHEN, "receiver.receive_buffer_bytes": "7300"}, (0, 0.01, 0.03, 0.05)),
    "cubic16": ({**COHEN, "receiver.receive_buffer_bytes": "23360"}, (0, 0.01, 0.03, 0.05)),
    "plant": (PLANT, (0.001, 0.01)),
}


def point_sets(name: str, loss: float) -> dict[str, str]:
    """The --set keys of point `name` at `loss`."""
    return {**POINTS[name][0], "tcp.stack": "linux", "network.downstream_loss": f"{loss:g}"}


def resimulated(name: str, loss: float, seed: int, emulated: dict) -> dict:
    """Flow 0 of the simulation side, run again from the point's keys as they are now (so a changed point,
    as RENO's PRR, or a changed model holds against the same emulation), with the window taken from the
    stored emulation as `emulate --compare` takes it (hfcsim.emulate.simulation_side)."""
    from types import SimpleNamespace

    from hfcsim.emulate import simulation_side
    from hfcsim.scenario import load
    from hfcsim.simulate import simulate

    sc = load(None, [f"{k}={v}" for k, v in point_sets(name, loss).items()])
    sc, _ = simulation_side(sc, SimpleNamespace(flows=emulated["flows"]))
    return simulate(sc, seed=seed).flows[0]


def emulate(out: Path, seeds: int, only: set[tuple[str, float]] | None = None) -> None:
    for name, (keys, losses) in POINTS.items():
        for loss in losses:
            if only is not None and (name, loss) not in only:
                continue
            # the plant's 30 MB at 300 Mb/s: 5 seeds at most (its losses are many per run)
            n = seeds if only else 3 if loss == 0 else min(seeds, 5) if name == "plant" else seeds
            for seed in range(1, n + 1):
                path = out / f"{name}-{loss:g}-{seed}.json"
                if path.exists():
                    continue
                sets = point_sets(name, loss)
                argv = [sys.executable, "-m", "hfcsim", "emulate", "--seed", str(seed), "--compare", "--json"]
                for k, v in sets.items():
                    argv += ["--set", f"{k}={v}"]
                done = subprocess.run(argv, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"{path.name}: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode}")
                path.write_text(done.stdout)
                print(path.name, file=sys.stderr)


def table(out: Path, resimulate: bool) -> str:
    points: dict[tuple[str, float], list[tuple[float, ...]]] = {}
    for path in sorted(out.glob("*.json")):
        name, loss, seed = path.stem.rsplit("-", 2)
        d = json.loads(path.read_text())
        e = d["emulated"]["flows"][0]
        s = resimulated(name, float(loss), int(seed), d["emulated"]) if resimulate else d["simulated"]["flows"][0]
        points.setdefault((name, float(loss)), []).append((
            e["throughput_bps"] / 1e6, s["throughput_bps"] / 1e6, e["retransmitted_segments"],
            s["retransmitted_segments"], e["timeouts"], s["timeouts"]))
    order = list(POINTS)
    rows = ["| point | loss | seeds | real Linux Mb/s | hfcsim Mb/s | hfcsim / real | retransmits real / hfcsim "
            "| RTOs real / hfcsim |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (name, loss), runs in sorted(points.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
        m = [statistics.fmean(r[i] for r in runs) for i in range(6)]
        rows.append(f"| {name} | {loss * 100:g} % | {len(runs)} | {m[0]:.3f} | {m[1]:.3f} | {m[1] / m[0]:.2f} | "
                    f"{m[2]:.1f} / {m[3]:.1f} | {m[4]:.1f} / {m[5]:.1f} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="seeds per lossy point (lossless: 3)")
    ap.add_argument("--out", type=Path, default=Path("hfcsim-results/kernel-side-by-side"))
    ap.add_argument("--resimulate", action="store_true", help="only simulate again the stored emulations")
    ap.add_argument("--points", help="only these points, NAME:LOSS,... (e.g. cubic5:0.01), to --seeds each")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    only = None
    if a.points:
        only = {(name, float(loss)) for name, loss in (p.split(":") for p in a.points.split(","))}
        if unknown := sorted(p for p in only if p[0] not in POINTS or p[1] not in POINTS[p[0]][1]):
            sys.exit(f"--points: no such point {unknown[0][0]}:{unknown[0][1]:g}")
    if not a.resimulate:
        emulate(a.out, a.seeds, only)
    print(table(a.out, a.resimulate), end="")


if __name__ == "__main__":
    main()
