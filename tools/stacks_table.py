"""Throughput under random loss for the 1998 stacks and today's Linux, on two networks (docs/model/todays-tcp.md).

    python tools/stacks_table.py [--seeds N] [--losses 0,0.001,0.01,0.03]

Rows: net3-Reno (``tcp.stack = "net3"``, literal 4.4BSD-Lite), ns2-Reno (``"ns2"``), linux-Reno
with SACK off (``"linux"`` with ``tcp.congestion_control = "reno"``, so no HyStart, and SACK, RACK and TLP off: NewReno
recovery with PRR and Limited Transmit, Linux's timers and delayed ACK), and linux-CUBIC+SACK (the
``"linux"`` stack as it is). Networks: Cohen & Ramanathan's 25/3 Mb/s HFC with 20 ms RTT and 8 KB
socket buffers (the papers' default), and a 300/20 Mb/s plant with 30 ms RTT and 4 MB buffers
(Linux's ``tcp_wmem`` maximum; window scaling on). Loss is independent per packet on the downstream
channel. Each cell is the mean throughput over seeds 1..N in Mb/s, with the loss in throughput
against the same row at 0 % loss.
"""
from __future__ import annotations

import argparse
from statistics import fmean

import hfcsim

STACKS: dict[str, dict] = {
    "net3-Reno": {"stack": "net3"},
    "ns2-Reno": {"stack": "ns2"},
    "linux-Reno, SACK off": {"stack": "linux", "congestion_control": "reno", "sack": False, "rack": False,
                             "tlp": False},
    "linux-CUBIC+SACK": {"stack": "linux"},
}

NETWORKS: dict[str, dict] = {
    "Cohen 25/3 Mb/s, 20 ms, 8 KB buffers": {
        "network": {}, "bytes": 3_000_000, "buffers": 8192,
    },
    "300/20 Mb/s, 30 ms, 4 MB buffers": {
        "network": {"downstream_bps": 300e6, "upstream_bps": 20e6, "rtt_s": 0.03, "cm_lan_bps": 1e9},
        "bytes": 100_000_000, "buffers": 4 * 1024 * 1024,
    },
}


def scenario(net: dict, tcp: dict, loss: float) -> dict:
    return {
        "network": {**net["network"], "downstream_loss": loss},
        "tcp": {**tcp, "send_buffer_bytes": net["buffers"]},
        "receiver": {"receive_buffer_bytes": net["buffers"]},
        "flows": [{"bytes": net["bytes"]}],
    }


def mean_mbps(net: dict, tcp: dict, loss: float, seeds: int) -> float:
    runs = [hfcsim.simulate(scenario(net, tcp, loss), seed=s).flows[0]["throughput_bps"] for s in range(1, seeds + 1)]
    return fmean(runs) / 1e6


def table(seeds: int, losses: list[float]) -> str:
    lines = []
    for net_name, net in NETWORKS.items():
        lines.append(f"\n**{net_name}** (Mb/s; in brackets, the loss of throughput against 0 %; {seeds} seeds)\n")
        lines.append("| stack | " + " | ".join(f"{100 * p:g} % loss" for p in losses) + " |")
        lines.append("| --- |" + " --- |" * len(losses))
        for name, tcp in STACKS.items():
            values = [mean_mbps(net, tcp, p, seeds) for p in losses]
            cells = [f"{v:.2f}" if p == 0 else f"{v:.2f} ({100 * (1 - v / values[0]):.0f} %)"
                     for p, v in zip(losses, values)]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--losses", default="0,0.001,0.01,0.03")
    args = parser.parse_args()
    print(table(args.seeds, [float(x) for x in args.losses.split(",")]))


if __name__ == "__main__":
    main()
