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


# Socket buffers that hold no flow back at 10 Mb/s (the scenarios' default of 8 KB would: the built-in
# workload asks for them with SO_SNDBUF/SO_RCVBUF since issue 22's socket buffers).
BIG = {"tcp": {"stack": "linux", "send_buffer_bytes": 262_144}, "receiver": {"receive_buffer_bytes": 262_144}}


def test_a_bulk_transfer_runs_at_the_downstream_rate():
    # 64 KB each way: Linux keeps 128 KB and offers about 80 KB (emulate.socket_buffers), above the
    # path's 25 KB BDP, so the window never holds the flow back, and below the BDP plus the headend's
    # MULPI queue (100 ms at 10 Mb/s, 125 KB), so the queue never overflows and nothing is resent.
    # (256 KB offered about 320 KB: slow start overflowed the queue in some runs.)
    fits = {"tcp": {"stack": "linux", "send_buffer_bytes": 65_536}, "receiver": {"receive_buffer_bytes": 65_536}}
    result = emulate({**fits, "network": {"downstream_bps": 10e6, "cm_lan_bps": 100e6},
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
    # measured 26.2-28.2. The issue asks within 1 ms. Which MAP an echo's request lands in depends on
    # its phase against the MAP clock, which five real echoes sample differently from the model's
    # ten, so the real median is held to the model's range (not its median), with room for the
    # host's steal (a late echo is allowed; a late median is not).
    assert rtts[0] >= 19.5, rtts
    assert model[0] - 1.0 <= rtts[2] <= model[-1] + 2.5, (rtts, model)
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


def test_a_commands_sockets_get_the_scenarios_buffers():
    # tcp(7) tcp_rmem/tcp_wmem hold the kernel's own numbers (twice what an application asks for with
    # SO_RCVBUF/SO_SNDBUF): 65536 asked -> 131072, the default and the autotuning's ceiling. The send
    # buffer the scenario leaves unset under the linux stack is Linux's own, autotuned (issue 35):
    # tcp_wmem's defaults, 4096 16384 4194304.
    done = hfcsim("emulate", *LINUX, "--set", "receiver.receive_buffer_bytes=65536",
                  "--", "cat", "/proc/sys/net/ipv4/tcp_rmem", "/proc/sys/net/ipv4/tcp_wmem")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^4096\s+131072\s+131072$", done.stdout, re.M), done.stdout
    assert re.search(r"^4096\s+16384\s+4194304$", done.stdout, re.M), done.stdout
    done = hfcsim("emulate", *LINUX, "--set", "tcp.send_buffer_bytes=8192",
                  "--", "cat", "/proc/sys/net/ipv4/tcp_wmem")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^4096\s+16384\s+16384$", done.stdout, re.M), done.stdout  # 8192 asked -> 16384


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


@pytest.mark.parametrize("key,value", [
    ("receiver.ack_rule", "net3"), ("receiver.delayed_ack", "false"), ("receiver.delack_tick_s", "0.2"),
    ("receiver.ack_on_push", "false"), ("receiver.ack_on_read", "false"), ("receiver.linux_window", "false"),
])
def test_receiver_rules_the_kernel_cannot_change_are_refused_in_one_line(key, value):
    done = hfcsim("emulate", *LINUX, "--set", f"{key}={value}", "--", "true")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and f": {key} = " in done.stderr and "so emulate requires" in done.stderr, \
        done.stderr


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


def _tshark(path, *fields: str, filt: str | None = None) -> list[list[str]]:
    import shutil

    if shutil.which("tshark") is None:
        pytest.skip("tshark is not installed (.ci/run installs it)")
    argv = ["tshark", "-r", str(path), "-T", "fields", *[a for f in fields for a in ("-e", f)]]
    if filt:
        argv += ["-Y", filt]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()]


def test_a_capture_of_the_builtin_workload_opens_in_tshark(tmp_path):
    path = tmp_path / "emu.pcapng"
    before = time.time()
    result = emulate({**BIG, "network": {"downstream_bps": 10e6, "cm_lan_bps": 100e6},
                      "flows": [{"bytes": 300_000}]}, pcap=path)
    after = time.time()
    assert result.flows[0]["finished"]
    cap = result.engine["emulator"]["pcap"]
    e = result.engine["emulator"]
    # Every packet read from a TUN (sent) and every one written (delivered) is a record.
    assert cap["packets"] == cap["blocks"] == sum(e["packets_read"].values()) + sum(e["packets_written"].values())
    assert cap["missed"] == 0 and cap["docsis_bursts"] is None
    rows = _tshark(path, "frame.time_epoch", "frame.interface_id", "ip.src", "ip.dst", "tcp.len", "tcp.dstport")
    assert len(rows) == cap["packets"]
    # Wall-clock times, within the run.
    times = [float(r[0]) for r in rows]
    assert before - 1 <= times[0] <= times[-1] <= after + 1 and times == sorted(times)
    # The download's data: sent by the server on interface 0, each delivered to the PC on interface 1
    # (nothing dropped: 256 KB of window fits the unbounded modelled queue), its bytes counted.
    data = [r for r in rows if r[4] not in ("", "0")]
    sent = [r for r in data if r[1] == "0" and r[2] == SERVER_ADDRESS and r[3] == "198.19.0.1"]
    got = [r for r in data if r[1] == "1" and r[2] == SERVER_ADDRESS]
    assert len(sent) == len(got) == len(data) / 2 and e["packets_dropped"] == 0
    assert sum(int(r[4]) for r in got) == 300_000 + 1448 * (result.flows[0]["retransmitted_segments"] or 0)
    assert {r[5] for r in sent} == {"5001"}  # the receiver listens on the built-in workload's first port


def test_a_commands_capture_shows_the_docsis_upstream(tmp_path):
    path = tmp_path / "cmd.pcapng"
    done = hfcsim("emulate", *TEN, "--set", "upstream.mac=docsis", "--set", "upstream.frame_s=0.002",
                  "--pcap", str(path), "--", *ping_command())
    assert done.returncode == 0, done.stderr
    assert re.search(r"pcap: \d+ packets -> .*interfaces 0 server, 1 modem-lan, 2 docsis-upstream", done.stdout), \
        done.stdout
    rows = _tshark(path, "frame.interface_id", "icmp.type", "docsis.fcparm", filt="icmp or docsis")
    # Five echo requests sent on the PCs' LAN and delivered to the server, five replies back: each
    # twice on the Ethernet interfaces; every request also inside a DOCSIS frame on the upstream.
    lan = [(r[0], r[1]) for r in rows if r[0] in ("0", "1")]
    assert sorted(lan) == sorted([("1", "8")] * 5 + [("0", "8")] * 5 + [("0", "0")] * 5 + [("1", "0")] * 5), rows
    upstream = [r for r in rows if r[0] == "2"]
    assert sum(r[1].split(",").count("8") for r in upstream) == 5, rows


def test_the_socket_buffers_bound_the_advertised_window():
    # 8 KB asked for (the scenarios' default): Linux keeps 16 KB (socket(7)) and offers about
    # scaling_ratio / 256 of it in whole segments (measured here: a clamp of 10240 = 16384 x 160/256,
    # an offer of 6 x 1448 = 8688). Asserted: between the value asked for less one segment and the
    # 16 KB kept. One such window per 20.4 ms RTT is at most 6.4 Mb/s, below the 10 Mb/s downstream.
    result = emulate({"tcp": {"stack": "linux", "send_buffer_bytes": 262_144},
                      "receiver": {"receive_buffer_bytes": 8192},
                      "network": {"downstream_bps": 10e6, "cm_lan_bps": 100e6},
                      "flows": [{"bytes": 600_000}]})
    (flow,) = result.flows
    assert flow["finished"], flow
    assert flow["receive_buffer_kept_bytes"] == 16384 and flow["send_buffer_kept_bytes"] == 524_288, flow
    window = flow["advertised_window_bytes"]
    assert 8192 - 1448 <= window <= 16384, flow  # Linux offers whole MSS multiples: down by at most one
    # Window-limited: at most one window per minimum RTT (20 ms of propagation), and no less than half.
    ceiling = window * 8 / flow["min_rtt_s"]
    assert 0.5 * ceiling <= flow["receiver_rate_bps"] <= 1.05 * ceiling and ceiling < 8e6, (flow, ceiling)
    assert flow["rwnd_limited_s"] > 0.5 * flow["duration_s"], flow


def test_each_flow_runs_its_own_congestion_control():
    # flows.*.congestion_control: the built-in workload sets it per socket (TCP_CONGESTION); the
    # sender reports what the kernel used.
    result = emulate({"tcp": {"stack": "linux"}, "network": {"downstream_bps": 10e6},
                      "flows": [{"bytes": 100_000, "congestion_control": "reno"}, {"bytes": 100_000}]})
    assert [f["congestion_control"] for f in result.flows] == ["reno", "cubic"], result.flows


def test_a_flows_ecn_is_refused_in_one_line():
    done = hfcsim("emulate", *LINUX, "--set", 'flows=[{ecn="rfc3168"}]', "--", "true")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and 'flows.0.ecn = "rfc3168"' in done.stderr, done.stderr


def test_compare_sets_simulation_and_emulation_side_by_side():
    done = hfcsim("emulate", *TEN, "--set", "tcp.send_buffer_bytes=262144",
                  "--set", "receiver.receive_buffer_bytes=262144", "--set", "flows.0.bytes=1000000",
                  "--set", "pings=[{modem = 0, interval_s = 0.1, stop_s = 0.5}]",
                  "--set", "flows.0.start_s=0.6", "--compare", "--json")
    assert done.returncode == 0, done.stderr
    import json

    doc = json.loads(done.stdout)
    rows = {r["measure"]: r for r in doc["compare"]}
    assert any("tcp.stack = \"linux\"" in n for n in doc["notes"]), doc["notes"]
    assert any("receiver.receive_buffer_bytes = " in n for n in doc["notes"]), doc["notes"]
    tput = rows["flow 0 throughput Mb/s"]
    # Both near the 10 Mb/s downstream less headers; the kernel's CUBIC and the model's agree loosely.
    assert 6.0 <= tput["simulated"] <= 10.0 and 0.75 <= tput["ratio"] <= 1.25, tput
    assert rows["flow 0 RTOs"]["simulated"] == 0
    p50 = rows["ping 0 RTT p50 ms"]
    # Idle echoes: the model's 20.3 ms against the real one's. The Python pinger wakes late on a busy
    # CPU (a loaded run read a median 26.9 ms with the relay's own lateness at p99 1.3 ms): a loose bound.
    assert 19.5 <= p50["simulated"] <= 21.5 and -1.0 <= p50["emulated"] - p50["simulated"] <= 10.0, p50
    # The simulation takes the scenario's own buffer, as SO_RCVBUF, under Linux's window rule.
    assert doc["simulated"]["scenario"]["receiver"]["receive_buffer_bytes"] == 262144
    assert doc["simulated"]["scenario"]["receiver"]["linux_window"] is True


def test_compare_and_pcap_refusals_are_one_line(tmp_path):
    done = hfcsim("emulate", *LINUX, "--compare", "--", "true")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--compare" in done.stderr, done.stderr
    done = hfcsim("emulate", *LINUX, "--pcap", str(tmp_path / "no" / "such" / "dir.pcapng"), "--", "true")
    assert done.returncode != 0 and done.stderr.count("\n") == 1 and "--pcap" in done.stderr, done.stderr
