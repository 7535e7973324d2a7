"""Benchmark of ``hfcsim emulate`` on this machine (root): throughput against the modelled rate,
release lateness and the relay's CPU, at a few downstream rates, with and without SCHED_FIFO and
pinning. The numbers in docs/how-to/emulation.md ("Measured on this machine kind") come from it.

    python tools/emulate_bench.py [--runs N] [--rates 25e6,100e6] [--bytes-per-mbps 300000]
"""

from __future__ import annotations

import argparse

from hfcsim.emulate import emulate


def one(rate: float, nbytes: int, fifo: bool, cpu: int | None) -> dict:
    # 4 MB socket buffers each way: no window limit up to 100 Mb/s and more (the docs' figures
    # were taken with the kernel's autotuning, before the workload set the scenario's buffers).
    big = 4 << 20
    r = emulate({"tcp": {"stack": "linux", "send_buffer_bytes": big}, "receiver": {"receive_buffer_bytes": big},
                 "network": {"downstream_bps": rate, "cm_lan_bps": 10 * rate},
                 "flows": [{"bytes": nbytes}]}, fifo=fifo, cpu=cpu)
    f, e = r.flows[0], r.engine["emulator"]
    return {"rate": rate, "fifo": e["sched_fifo"], "cpu": e["cpu"], "thr": f["throughput_bps"] / rate,
            "rx": (f.get("receiver_rate_bps") or 0) / rate, "rexmit": f.get("retransmitted_segments"),
            **{k: e["lateness_us"][k] for k in ("p50", "p99", "p99.9", "max", "over_1ms", "n")},
            "relay_cpu": e["relay_cpu_s"] / e["wall_s"], "ok": all(c["ok"] for c in r.engine["self_checks"])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--rates", default="25e6,100e6")
    ap.add_argument("--bytes-per-mbps", type=int, default=300_000, help="transfer size per Mb/s of rate")
    a = ap.parse_args()
    print(f"{'Mb/s':>5} {'fifo':>4} {'cpu':>4} {'thr %':>6} {'rx %':>6} {'rexm':>5} {'p50 us':>7} {'p99 us':>7} "
          f"{'p99.9':>7} {'max us':>8} {'>1ms':>5} {'pkts':>6} {'relay CPU %':>11} checks")
    for rate in (float(x) for x in a.rates.split(",")):
        for fifo, cpu in ((True, 1), (False, None)):
            for _ in range(a.runs):
                r = one(rate, int(a.bytes_per_mbps * rate / 1e6), fifo, cpu)
                print(f"{rate / 1e6:5.0f} {'yes' if r['fifo'] else 'no':>4} {str(r['cpu']):>4} {100 * r['thr']:6.1f} "
                      f"{100 * r['rx']:6.1f} {r['rexmit']:5} {r['p50']:7.0f} {r['p99']:7.0f} {r['p99.9']:7.0f} "
                      f"{r['max']:8.0f} {r['over_1ms']:5} {r['n']:6} {100 * r['relay_cpu']:11.0f} "
                      f"{'ok' if r['ok'] else 'FAIL'}", flush=True)


if __name__ == "__main__":
    main()
