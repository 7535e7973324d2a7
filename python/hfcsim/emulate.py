"""``hfcsim emulate``: real kernel TCP through a scenario's network, on the wall clock.

The compiled driver (crates/hfcsim-emu, through ``_core.Emulation``) makes two network namespaces,
a server side and a client side, each with a TUN device, and runs the scenario's fabric between
them: a packet one side sends is held, serialised, queued, lost or dropped as the model says and
written to the other side when the model delivers it. Addresses come from RFC 2544's benchmarking
range 198.18.0.0/15: the server is 198.18.0.1, the client behind modem m is 198.19.0.(m + 1).
Nothing is routed to any interface of the machine; the namespaces are removed at the end, on
Ctrl-C and SIGTERM, and a killed run's are removed at the next start.

Two modes:
- built-in workload: every flow is a bulk transfer of ``flows.N.bytes`` by the real kernel (a
  sender in one namespace, a receiver in the other, ``emuwork.py``), read out with TCP_INFO;
  its sockets ask for ``tcp.send_buffer_bytes`` (SO_SNDBUF) and ``receiver.receive_buffer_bytes``
  (SO_RCVBUF) as an application's ``-w`` would (see ``socket_buffers``);
- ``-- COMMAND``: COMMAND runs in the client namespace (``--side server``: the server's) until it
  exits, like a Mahimahi shell.

Either way ``pcap=FILE`` writes what crossed as pcapng, as ``hfcsim run --pcap`` does (interfaces
0 ``server`` and 1 ``modem-lan``, the same hosts' MAC addresses; 2 ``docsis-upstream`` with a DOCSIS
upstream), but with the packets' own bytes (headers, and ``snap_payload`` payload bytes) and the
wall clock's times. ``compare()`` runs the built-in workload and simulate() on the same scenario and
sets them side by side.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from hfcsim.errors import EngineError, ScenarioError
from hfcsim.scenario import Scenario, load
from hfcsim.simulate import Result

__all__ = ["MAX_BYTES", "SERVER_ADDRESS", "CommandRun", "client_address", "compare", "emulate", "run_command"]

SERVER_ADDRESS = "198.18.0.1"
#: The built-in workload moves at most this much per flow: emulation runs in real time.
MAX_BYTES = 100_000_000
#: The built-in workload gives up after this long unless ``seconds`` says otherwise.
DEFAULT_SECONDS = 300.0
WORK = Path(__file__).with_name("emuwork.py")


class EmulationRefused(ScenarioError):
    """The machine or the scenario cannot be emulated (one line, exit status 2)."""


def client_address(modem: int) -> str:
    return str(ipaddress.IPv4Address("198.19.0.0") + modem + 1)


def check_host() -> None:
    """Root, /dev/net/tun and iproute2's ``ip`` are needed; say which is missing."""
    if os.geteuid() != 0:
        raise EmulationRefused("hfcsim emulate needs root (it makes network namespaces and TUN devices)")
    if not os.path.exists("/dev/net/tun") or not os.access("/dev/net/tun", os.R_OK | os.W_OK):
        raise EmulationRefused("hfcsim emulate needs /dev/net/tun (the tun module), which this machine lacks")
    if shutil.which("ip") is None:
        raise EmulationRefused("hfcsim emulate needs iproute2's ip command (apt-get install iproute2)")


#: The rule keys the emulated kernel follows: a sysctl of both namespaces (kernel_settings), a route
#: metric of the emulator's (crates/hfcsim-emu lib.rs: rto_min, initcwnd), the workload's socket
#: buffers, the devices' MTU, or a check of their own (check_scenario: ecn, pacing; hystart is the
#: host's tcp_cubic module parameter). Every other tcp and receiver key is a rule of Linux's that the
#: kernel runs whatever the scenario says, so it must be the linux stack's (kernel_rules_differing).
KERNEL_FOLLOWS = frozenset({
    "tcp.stack", "tcp.congestion_control", "tcp.sack", "tcp.timestamps", "tcp.window_scaling", "tcp.dsack",
    "tcp.frto", "tcp.rack", "tcp.rack_reo_wnd_dsack", "tcp.tlp", "tcp.send_buffer_bytes", "tcp.mss_bytes",
    "tcp.header_bytes", "tcp.min_rto_s", "tcp.initial_window", "tcp.ecn", "tcp.pacing", "tcp.hystart",
    "receiver.receive_buffer_bytes",
    # Linux's own buffers when the sockets set none: the namespaces' tcp_wmem / tcp_rmem (kernel_settings),
    # the workload's setsockopt left out (socket_buffers).
    "tcp.sndbuf_autotuning", "tcp.tcp_wmem_default_bytes", "tcp.tcp_wmem_max_bytes",
    "receiver.rcvbuf_autotuning", "receiver.tcp_rmem_default_bytes", "receiver.tcp_rmem_max_bytes"})

#: Why the kernel cannot follow a key, as the clause of its refusal; the others get _WHY_DEFAULT.
_WHY_DEFAULT = "the kernel runs Linux's own rule here and no setting changes it per run"
_WHY_FIXED = {
    "tcp.variant": "the kernel recovers as Linux does (NewReno's way without SACK) and has no Tahoe or Reno",
    "tcp.prr": "Linux always reduces its window in recovery by PRR (tcp_cwnd_reduction), with SACK or without, "
               "and no sysctl turns it off",
    "tcp.prr_linux": "the kernel's PRR is always Linux's tcp_cwnd_reduction, and no sysctl changes it",
    "tcp.cubic_linux_friendliness": "the kernel's CUBIC always grows its Reno-friendly estimate as tcp_cubic.c does "
                                    "(tcp_friendliness, a module parameter, not per namespace)",
    "tcp.retransmit_lost_only": "the kernel retransmits only segments marked lost (tcp_xmit_retransmit_queue), "
                                "with no forward or rescue retransmission",
    "tcp.limited_transmit": "Linux's pipe always lets new data out on the first duplicate ACKs, and no sysctl "
                            "turns it off",
    "tcp.undo": "the kernel always undoes spurious recoveries (net/ipv4/tcp_input.c), and no sysctl turns it off",
    "tcp.reno_reordering": "without SACK the kernel always counts duplicate ACKs as Linux does (tcp_add_reno_sack, "
                           "tcp_check_reno_reordering), and no sysctl turns it off",
    "tcp.hystart": "CUBIC's HyStart is the host's tcp_cubic module parameter, global to the machine, not per namespace",
    "tcp.initial_rto_s": "the kernel's first RTO is Linux's TCP_TIMEOUT_INIT, 1 s",
    "tcp.nagle": "the sockets keep Linux's Nagle, Minshall's variant, which holds a short segment only while "
                 "another short one is unacknowledged: with full-sized segments that is no Nagle, not Net/3's rule",
    "receiver.delayed_ack": "the kernel's receiver always delays ACKs (TCP_ATO_MIN 40 ms, quick ACKs)",
    "receiver.ack_rule": "the kernel's receiver ACKs as Linux does",
    "receiver.delack_tick_s": "the kernel's delayed-ACK timeout is Linux's TCP_ATO_MIN, 40 ms",
    "receiver.ack_on_read": "the kernel's read always sends the window update (tcp_cleanup_rbuf)",
    "receiver.linux_window": "the kernel's receiver always offers its window from its memory as Linux does "
                             "(tcp_select_window, tcp_grow_window)",
    "receiver.skb_truesize_bytes": "the kernel's memory per segment is what the TUN device allocates, "
                                   "TCP_SKB_MIN_TRUESIZE (2,304 B)",
    "receiver.ack_on_push": "from Linux 6.6 the kernel always ACKs a pushed segment when the read drains the queue",
}


def _host_hystart() -> bool:
    """The host's CUBIC HyStart switch (/sys/module/tcp_cubic/parameters/hystart; Linux's default 1)."""
    try:
        return Path("/sys/module/tcp_cubic/parameters/hystart").read_text().strip() != "0"
    except OSError:
        return True


def kernel_rules_differing(sc: Scenario) -> list[tuple[str, Any, Any]]:
    """(key, the scenario's value, the kernel's) for each tcp or receiver rule the scenario sets otherwise
    than the kernel runs it: outside KERNEL_FOLLOWS the kernel's value is the linux stack's (stacks.rules
    under the scenario's own tcp keys, the schema's default where the stack sets none); tcp.hystart's is
    the host's module parameter."""
    from hfcsim import stacks
    from hfcsim.schema import SCHEMA

    tcp, receiver = dict(sc["tcp"]), dict(sc["receiver"])
    # The linux stack as it would be for this scenario's variant (Tahoe's own table is the stack's
    # answer to a key the kernel cannot have: judge against the stack's NewReno).
    own = tuple(f.get("congestion_control") for f in sc["flows"])  # a rule of one control follows its flows
    kernel = {"tcp": stacks.rules("linux", "tcp", {**tcp, "variant": "newreno", stacks.FLOW_CONTROLS: own}),
              "receiver": stacks.rules("linux", "receiver", {**tcp, "variant": "newreno"})}
    # A true_if rule follows the scenario's own keys (prr_linux with prr, reno_reordering without
    # SACK); tlp and rack, which the schema requires off without SACK, are sysctls (KERNEL_FOLLOWS).
    differing = []
    for section, values in (("tcp", tcp), ("receiver", receiver)):
        for name, spec in SCHEMA[section].items():
            key = f"{section}.{name}"
            if not isinstance(spec, dict) or "type" not in spec or key in KERNEL_FOLLOWS:
                continue
            expected = kernel[section].get(name, spec.get("default"))
            value = values.get(name)
            if key == "tcp.initial_rto_s" and value == 1.0:
                value = None  # Linux's 1 s, said explicitly
            if value != expected:
                differing.append((key, values.get(name), expected))
    if tcp.get("congestion_control") == "cubic" and bool(tcp.get("hystart")) != _host_hystart():
        differing.append(("tcp.hystart", tcp.get("hystart"), _host_hystart()))
    return differing


def check_scenario(sc: Scenario, builtin: bool) -> None:
    stack = sc.get("tcp.stack")
    if stack != "linux":
        raise EmulationRefused(f"tcp.stack = \"{stack}\": emulate carries the kernel's own TCP, so it requires "
                               "tcp.stack = \"linux\" (--set tcp.stack=linux)")
    ecn_keys = [("tcp.ecn", sc.get("tcp.ecn"))] + [(f"flows.{i}.ecn", f.get("ecn")) for i, f in enumerate(sc["flows"])]
    for key, ecn in ecn_keys:
        if ecn not in (None, "off"):
            # Refused, not ignored: the kernel would negotiate ECN, but the fabric's queues read a real
            # packet's size only (packet.rs Kind::Raw), so an AQM would drop its ECT packets where the
            # simulation marks them.
            raise EmulationRefused(f"{key} = \"{ecn}\": the emulated queues do not read or mark real packets' "
                                   f"ECN bits yet, so emulate requires {key} = \"off\"")
    if sc.get("tcp.pacing"):
        # Refused, not ignored: CUBIC and Reno pace in Linux only under the fq qdisc or when the
        # congestion control asks for it (tcp_needs_internal_pacing), and the namespaces set neither.
        raise EmulationRefused("tcp.pacing = true: the emulated kernels do not pace (no fq qdisc on their devices), "
                               "so emulate requires tcp.pacing = false")
    for key, value, kernels in kernel_rules_differing(sc):
        raise EmulationRefused(f"{key} = {json.dumps(value)}: {_WHY_FIXED.get(key, _WHY_DEFAULT)}, so emulate "
                               f"requires {key} = {json.dumps(kernels)}")
    mtu = device_mtu(sc)
    if not MIN_MTU <= mtu <= MAX_MTU:
        raise EmulationRefused(f"tcp.mss_bytes = {sc.get('tcp.mss_bytes')}: the emulated devices' MTU is tcp.mss_bytes + "
                               f"tcp.header_bytes = {mtu}, which must be {MIN_MTU}-{MAX_MTU} bytes")
    if builtin:
        for i, g in enumerate(sc["pings"]):
            if g["ip_bytes"] > mtu:
                raise EmulationRefused(f"pings.{i}.ip_bytes = {g['ip_bytes']}: the emulated devices' MTU is {mtu} bytes "
                                       "(tcp.mss_bytes + tcp.header_bytes)")
        for i, f in enumerate(sc["flows"]):
            if f["bytes"] > MAX_BYTES:
                raise EmulationRefused(f"flows.{i}.bytes = {f['bytes']}: the built-in workload moves at most "
                                       f"{MAX_BYTES} bytes per flow (emulation runs in real time)")


#: The devices' MTU bounds (crates/hfcsim-emu lib.rs mtu_of): IPv4's least (RFC 791) and the relay's largest.
MIN_MTU, MAX_MTU = 68, 1500


def device_mtu(sc: Scenario) -> int:
    """Both TUN devices' MTU: a whole data packet of the scenario, so that the kernel's MSS (MTU - 40)
    is ``tcp.mss_bytes`` with the default 40-byte header."""
    return int(sc.get("tcp.mss_bytes")) + int(sc.get("tcp.header_bytes"))


#: setsockopt takes a C int; Linux caps SO_RCVBUF/SO_SNDBUF at INT_MAX / 2 before doubling (sock_setsockopt).
_MAX_SOCKBUF = (2**31 - 1) // 2


def socket_buffers(sc: Scenario) -> tuple[int, int]:
    """(SO_SNDBUF, SO_RCVBUF) the built-in workload asks for: ``tcp.send_buffer_bytes`` and
    ``receiver.receive_buffer_bytes``; 0 for a socket that sets none, whose buffer Linux tunes
    (``tcp.sndbuf_autotuning``, ``receiver.rcvbuf_autotuning``: setsockopt would lock it, SOCK_*BUF_LOCK).

    What the scenario's number means here: the value an application passes to setsockopt, as
    nttcp's or iperf's ``-w`` does. Linux keeps twice it (socket(7): room for its bookkeeping) and
    offers a receive window of scaling_ratio / 256 of the free part (tcp_win_from_space; scaling_ratio
    is measured from the packets' payload over their memory and was 160 here, so the window came to
    at most 1.25 x the value). The linux stack's simulated receiver reads the number the same way
    (``receiver.linux_window``, which emulate requires); the window the kernel last advertised is
    reported per flow (``advertised_window_bytes``). Set as root with SO_*BUFFORCE so that
    net.core.rmem_max and wmem_max (global, not per namespace) do not cap it."""
    return (0 if sc.get("tcp.sndbuf_autotuning") else min(sc.get("tcp.send_buffer_bytes"), _MAX_SOCKBUF),
            0 if sc.get("receiver.rcvbuf_autotuning") else min(sc.get("receiver.receive_buffer_bytes"), _MAX_SOCKBUF))


def kernel_settings(sc: Scenario) -> dict[str, str]:
    """The net.* sysctls of both namespaces from the scenario's tcp keys, where Linux can honour them."""
    tcp = sc["tcp"]
    snd, rcv = socket_buffers(sc)
    # tcp(7) tcp_rmem / tcp_wmem: min, default, max, as the kernel keeps them. A socket that sets no
    # buffer starts at the default and Linux tunes it up to the max (tcp.sndbuf_autotuning,
    # receiver.rcvbuf_autotuning: the scenario's tcp_wmem / tcp_rmem keys; the min, 4096 as Linux's, is
    # read only under memory pressure). Otherwise, for a COMMAND's sockets that set no buffer: the same
    # buffers the built-in workload's setsockopt gives (twice the application's value), with autotuning
    # held to them.
    rmem = (f"4096 {sc.get('receiver.tcp_rmem_default_bytes')} {sc.get('receiver.tcp_rmem_max_bytes')}"
            if sc.get("receiver.rcvbuf_autotuning") else f"{min(4096, 2 * rcv)} {2 * rcv} {2 * rcv}")
    wmem = (f"4096 {tcp['tcp_wmem_default_bytes']} {tcp['tcp_wmem_max_bytes']}"
            if tcp["sndbuf_autotuning"] else f"{min(4096, 2 * snd)} {2 * snd} {2 * snd}")
    return {
        "net.ipv4.tcp_rmem": rmem,
        "net.ipv4.tcp_wmem": wmem,
        # DRS (tcp_rcv_space_adjust) runs only with tcp_moderate_rcvbuf, Linux's default 1; a socket
        # with SO_RCVBUF is locked whatever it says.
        "net.ipv4.tcp_moderate_rcvbuf": "1",
        # reno, cubic or bbr (BBR asks the kernel for internal pacing itself, tcp_needs_internal_pacing,
        # as the simulation's BBR paces whatever tcp.pacing says)
        "net.ipv4.tcp_congestion_control": tcp["congestion_control"],
        "net.ipv4.tcp_sack": str(int(tcp["sack"])),
        "net.ipv4.tcp_timestamps": str(int(tcp["timestamps"])),
        "net.ipv4.tcp_window_scaling": str(int(tcp["window_scaling"])),
        # RFC 2883: the receiver's D-SACKs (tcp_dsack_set reads it; the sender reads D-SACKs always).
        "net.ipv4.tcp_dsack": str(int(tcp["dsack"])),
        # RFC 5682: 2 is F-RTO's SACK-enhanced variant, Linux's default; 0 off.
        "net.ipv4.tcp_frto": "2" if tcp["frto"] else "0",
        # Documentation/networking/ip-sysctl.rst tcp_recovery: 0x1 RACK's loss detection, 0x2 its
        # static reordering window (tcp_rack_update_reo_wnd widens it with D-SACK only without).
        "net.ipv4.tcp_recovery": str(int(tcp["rack"]) | (0 if tcp["rack_reo_wnd_dsack"] else 2)),
        # ip-sysctl.rst tcp_early_retrans: 0 disables the tail loss probe, 3 (the default) enables it
        # (tcp_schedule_loss_probe; it needs SACK either way).
        "net.ipv4.tcp_early_retrans": "3" if tcp["tlp"] else "0",
        # tcp.ecn = "off" (check_scenario refuses the rest): neither end asks for ECN (Linux's
        # default, 2, would still accept it when asked).
        "net.ipv4.tcp_ecn": "0",
        # No metrics carried from one connection to the next (ssthresh, RTT): each run starts afresh.
        "net.ipv4.tcp_no_metrics_save": "1",
    }


def _wrap(ns: str, argv: Sequence[str]) -> list[str]:
    """``argv`` inside namespace ``ns``, killed if this process dies (setpriv's PR_SET_PDEATHSIG)."""
    pre = ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []
    return ["ip", "netns", "exec", ns, *pre, *argv]


@contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt, as SIGINT does, so that the cleanup runs."""
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextmanager
def session(sc: Scenario, seed: int = 1, fifo: bool = True, cpu: int | None = -1,
            spin_us: float = 80.0, pcap: str | os.PathLike[str] | None = None,
            snap_payload: int = 0) -> Iterator[Any]:
    """An ``_core.Emulation`` with the relay running; yields it, then stops it and removes its
    namespaces. Its report is left in ``emu.report`` (a dict)."""
    try:
        from hfcsim import _core
    except ImportError as e:
        raise EngineError(f"the compiled engine hfcsim._core is not available ({e})") from e
    if cpu == -1:  # the default: the relay on CPU 1 when there are two or more
        cpu = 1 if (os.cpu_count() or 1) >= 2 else None
    if pcap is not None:  # a bad place fails now, as run --pcap does, not as the emulator's error (issue 36)
        from hfcsim.store import check_path
        from hfcsim.store import check_output_file

        check_output_file(check_path("pcap", pcap))
    with _signals_interrupt():
        try:
            emu = _core.Emulation(sc.to_json(), seed, fifo=fifo, cpu=cpu, spin_us=spin_us,
                                  pcap=None if pcap is None else os.fspath(pcap), snap_payload=snap_payload)
        except OSError as e:
            raise EngineError(f"cannot set up the emulation: {' '.join(str(e).split())}") from e
        holder = _Holder(emu)
        try:
            for key, value in kernel_settings(sc).items():
                try:
                    for side in ("server", "client"):
                        emu.sysctl(side, key, value)
                except OSError as e:
                    # A namespace may not make an algorithm its default unless the host allows it
                    # (net.ipv4.tcp_allowed_congestion_control, init namespace only: left alone); the
                    # built-in workload then sets it per socket (TCP_CONGESTION, as root).
                    kept = _read_sysctl(holder.server_ns, key)
                    per_socket = ("; the built-in workload sets it per socket (TCP_CONGESTION)"
                                  if key == "net.ipv4.tcp_congestion_control" else "")
                    holder.warnings.append(f"{key} = {value} refused in the namespaces ({e.strerror or e}): "
                                           f"it stays {kept}{per_socket}")
            emu.start()
            yield holder
        finally:
            try:
                holder.report = json.loads(emu.stop())
            except OSError as e:
                holder.report = {}
                if pcap is not None and "--pcap" in str(e):
                    raise EngineError(f"cannot write the capture: {' '.join(str(e).split())}") from e
            finally:
                emu.close()


def _read_sysctl(ns: str, key: str) -> str:
    path = "/proc/sys/" + key.replace(".", "/")
    done = subprocess.run(["ip", "netns", "exec", ns, "cat", path], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "?"


class _Holder:
    """The running emulation and, once stopped, its report."""

    def __init__(self, emu: Any) -> None:
        self.emu = emu
        self.report: dict[str, Any] = {}
        self.warnings: list[str] = []

    @property
    def server_ns(self) -> str:
        return str(self.emu.server_ns)

    @property
    def client_ns(self) -> str:
        return str(self.emu.client_ns)


def addresses_text(h: _Holder, modems: int) -> str:
    last = client_address(modems - 1)
    clients = client_address(0) if modems == 1 else f"{client_address(0)} .. {last}"
    return (f"server {SERVER_ADDRESS} (namespace {h.server_ns}); clients {clients}, one per modem "
            f"(namespace {h.client_ns}); reach the server at {SERVER_ADDRESS}\n")


# ---------------------------------------------------------------------------------------------------
# The built-in workload


def _builtin(h: _Holder, sc: Scenario, seconds: float,
             window_clamp: int | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The flows as bulk transfers and the pings as ICMP echoes; (flow rows, ping rows). Flow i's
    receiver listens on port ``flow_port0 + i`` and ping i's echoes carry identifier ``ping_ident0 + i``:
    the relay classifies each packet to its flow or ping by them (relay.rs Classifier)."""
    flows, pings = sc["flows"], sc["pings"]
    sndbuf, rcvbuf = socket_buffers(sc)
    port0 = int(h.emu.flow_port0)
    clamp = [] if window_clamp is None else [str(window_clamp)]
    receivers: list[subprocess.Popen[str]] = []
    senders: list[subprocess.Popen[str]] = []
    pingers: list[subprocess.Popen[str]] = []

    try:
        for i, f in enumerate(flows):
            client = client_address(f["modem"])
            down = f["direction"] == "down"
            rcv_ns, rcv_addr = (h.client_ns, client) if down else (h.server_ns, SERVER_ADDRESS)
            p = subprocess.Popen(_wrap(rcv_ns, [sys.executable, str(WORK), "receive", rcv_addr, str(port0 + i),
                                                str(rcvbuf), *clamp]),
                                 stdout=subprocess.PIPE, text=True)
            receivers.append(p)
            _started(p, f"flow {i}'s receiver")
        _start_pings(h, pings, pingers)
        for i, f in enumerate(flows):
            client = client_address(f["modem"])
            down = f["direction"] == "down"
            snd_ns, snd_addr, rcv_addr = ((h.server_ns, SERVER_ADDRESS, client) if down
                                          else (h.client_ns, client, SERVER_ADDRESS))
            argv = [sys.executable, str(WORK), "send", rcv_addr, str(port0 + i), str(f["bytes"]), snd_addr,
                    f.get("congestion_control") or sc.get("tcp.congestion_control"), str(sndbuf)]
            p = subprocess.Popen(_wrap(snd_ns, argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            senders.append(p)
            _started(p, f"flow {i}'s sender")
        # Everything is up: time 0 of the scenario is now (flows.*.start_s, pings.*.start_s count from it).
        t0 = time.monotonic() + 0.02
        _go_pings(pings, pingers, t0)
        for f, p in zip(flows, senders, strict=True):
            _tell(p, f"{t0 + f['start_s']!r}\n")
        deadline = time.monotonic() + seconds
        rows = []
        for i, (f, s, r) in enumerate(zip(flows, senders, receivers, strict=True)):
            sent = _result(s, deadline)
            got = _result(r, deadline if sent is not None else time.monotonic())
            rows.append(_flow_row(i, f, t0, sent, got))
        return rows, _ping_rows(pings, pingers, t0, time.monotonic(), deadline)
    finally:
        _end(receivers + senders + pingers)


def _started(p: subprocess.Popen[str], what: str) -> None:
    assert p.stdout is not None
    if p.stdout.readline().strip() != "ready":
        raise EngineError(f"{what} did not start")


def _end(procs: Sequence[subprocess.Popen[str]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()
        if p.stdout is not None:
            p.stdout.close()


def _start_pings(h: _Holder, pings: Sequence[dict[str, Any]], into: list[subprocess.Popen[str]]) -> None:
    """Start a pinger per ping (emuwork.py ping, in the client namespace), each ready to go; ping i's
    echoes carry identifier ``ping_ident0 + i``, by which the relay gives them the ping's path."""
    ident0 = int(h.emu.ping_ident0)
    for i, g in enumerate(pings):
        argv = [sys.executable, str(WORK), "ping", SERVER_ADDRESS, client_address(g["modem"]),
                repr(g["interval_s"]), str(g["ip_bytes"]), str((ident0 + i) & 0xFFFF)]
        p = subprocess.Popen(_wrap(h.client_ns, argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        into.append(p)
        _started(p, f"ping {i}")


def _go_pings(pings: Sequence[dict[str, Any]], pingers: Sequence[subprocess.Popen[str]], t0: float) -> None:
    for g, p in zip(pings, pingers, strict=True):
        stop = 1e12 if g["stop_s"] is None else t0 + g["stop_s"]
        _tell(p, f"{t0 + g['start_s']!r} {stop!r}\n")


def _ping_rows(pings: Sequence[dict[str, Any]], pingers: Sequence[subprocess.Popen[str]], t0: float,
               done: float, deadline: float) -> list[dict[str, Any]]:
    """Each ping's echoes (ping, seq, sent_s from t0, rtt_s), a ping without stop_s stopped after_s past
    ``done`` (the flows' end, or the command's)."""
    rows = []
    for i, (g, p) in enumerate(zip(pings, pingers, strict=True)):
        if g["stop_s"] is None:
            time.sleep(max(0.0, min(done + g["after_s"], deadline) - time.monotonic()))
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        out = _result(p, max(deadline, t0 + (g["stop_s"] or 0.0)) + 2.0)
        if out is not None:
            rtt = out["rtt"]
            rows += [{"ping": i, "seq": seq, "sent_s": at - t0, "rtt_s": rtt.get(str(seq))}
                     for seq, at in enumerate(out["sent"])]
    return rows


def _tell(p: subprocess.Popen[str], line: str) -> None:
    assert p.stdin is not None
    p.stdin.write(line)
    p.stdin.close()
    p.stdin = None  # communicate() would flush it


def _result(p: subprocess.Popen[str], deadline: float) -> dict[str, Any] | None:
    try:
        out, _ = p.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return None
    lines = [ln for ln in (out or "").splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]) if p.returncode == 0 and lines else None


def _flow_row(i: int, f: dict[str, Any], t0: float, sent: dict[str, Any] | None,
              got: dict[str, Any] | None) -> dict[str, Any]:
    """One flow in simulate()'s field names where they exist; TCP_INFO's counters of the sender."""
    delivered = got["bytes"] if got else 0
    finished = sent is not None and delivered == f["bytes"]
    row: dict[str, Any] = {"flow": i, "bytes": f["bytes"], "delivered_bytes": delivered, "start_s": None,
                           "end_s": None, "duration_s": None, "throughput_bps": None, "finished": finished}
    if sent is not None:
        info = sent["tcp_info"]
        duration = sent["end_s"] - sent["start_s"]
        row.update(start_s=sent["start_s"] - t0, end_s=sent["end_s"] - t0, duration_s=duration,
                   throughput_bps=delivered * 8 / duration if duration > 0 else None,
                   timeouts=info.get("total_rto"), retransmitted_segments=info.get("total_retrans"),
                   data_segments_sent=info.get("data_segs_out"), segs_out=info.get("segs_out"),
                   rtt_mean_s=info["rtt_us"] / 1e6, min_rtt_s=info["min_rtt_us"] / 1e6,
                   congestion_control=sent.get("congestion_control"),
                   # the receiver's window as the sender last saw it (the receiver had read everything)
                   advertised_window_bytes=info.get("snd_wnd"), send_buffer_kept_bytes=sent.get("sndbuf_kept"),
                   rwnd_limited_s=_us(info.get("rwnd_limited_us")),
                   sndbuf_limited_s=_us(info.get("sndbuf_limited_us")))
    if got and got.get("last_s") is not None and finished:
        row["completed_s"] = got["last_s"] - t0  # the receiver's last byte (the engine's completion)
    if got and got.get("first_s") is not None and got["last_s"] > got["first_s"]:
        # the receiver's rate from its first byte to its last: without the handshake and slow start's RTTs
        row["receiver_rate_bps"] = (delivered * 8) / (got["last_s"] - got["first_s"])
    if got:
        row["receiver_segs_out"] = got["tcp_info"].get("segs_out")
        row["receive_buffer_kept_bytes"] = got.get("rcvbuf_kept")
        row["window_clamp_bytes"] = got.get("window_clamp")
        row["window_clamp_resets"] = got.get("clamp_resets")
    return row


def ping_phases(pings: Sequence[dict[str, Any]], start_s: float, end_s: float | None) -> dict[str, Any]:
    """The run's echoes split by a flow's phases, as the engine's per-flow fields (sim.rs ping_phases):
    sent before ``start_s`` (its scheduled start), before ``end_s`` (its receiver's last byte; None:
    it never completed) or after; the mean RTT of each, the largest during, the echoes and the lost
    ones during."""
    end = math.inf if end_s is None else end_s
    parts: dict[str, list[float]] = {"before": [], "during": [], "after": []}
    lost = 0
    for r in pings:
        phase = "before" if r["sent_s"] < start_s else "during" if r["sent_s"] < end else "after"
        if r["rtt_s"] is None:
            lost += phase == "during"
        else:
            parts[phase].append(r["rtt_s"])

    def mean(v: list[float]) -> float | None:
        return sum(v) / len(v) if v else None

    during = parts["during"]
    return {"ping_before_mean_s": mean(parts["before"]), "ping_during_mean_s": mean(during),
            "ping_during_max_s": max(during) if during else None, "ping_after_mean_s": mean(parts["after"]),
            "ping_during_samples": len(during), "ping_lost": lost}


def _us(v: int | None) -> float | None:
    return None if v is None else v / 1e6


# ---------------------------------------------------------------------------------------------------
# Self-checks


def self_checks(report: dict[str, Any], flows: list[dict[str, Any]] | None = None,
                downs: Sequence[bool] = ()) -> list[tuple[str, bool, str]]:
    """(name, ok, what) per check of the emulator itself; ``downs``: whether each flow is a download."""
    checks = []
    read, written = report.get("packets_read", {}), report.get("packets_written", {})
    n_in = sum(read.values())
    n_out = sum(written.values())
    checks.append(("packets balance", bool(report.get("balanced")),
                   f"in {n_in} = out {n_out} + dropped {report.get('packets_dropped')} + not carried "
                   f"{report.get('unclassified')} + still inside {report.get('held_at_end')}"))
    txd = report.get("tun_tx_dropped", {})
    checks.append(("TUN tx_dropped = 0", all(v == 0 for v in txd.values()) and len(txd) == 2,
                   ", ".join(f"{k} {v}" for k, v in txd.items())))
    if flows:
        # Every segment the server's sockets sent was read from its TUN; the receivers' FINs (sent
        # after their TCP_INFO was read) and the last ACKs give a few more per flow.
        segs = sum((r.get("segs_out") if down else r.get("receiver_segs_out")) or 0
                   for r, down in zip(flows, downs, strict=True))
        got = report.get("tcp_packets_read", read).get("server", 0)
        checks.append(("server segs_out ~ packets read", 0 <= got - segs <= 4 * len(flows) + 2,
                       f"segs_out {segs}, TCP packets read from the server TUN {got}"))
    return checks


def format_report(report: dict[str, Any], checks: list[tuple[str, bool, str]]) -> str:
    late = report.get("lateness_us", {})

    def us(v: Any) -> str:
        return "-" if v is None else f"{v:.0f}"

    lines = [
        f"emulator: release lateness p50 {us(late.get('p50'))} us, p99 {us(late.get('p99'))} us, "
        f"p99.9 {us(late.get('p99.9'))} us, max {us(late.get('max'))} us ({late.get('over_1ms', 0)} of "
        f"{late.get('n', 0)} over 1 ms); drops {report.get('drops') or {}}",
        f"emulator: relay CPU {report.get('relay_cpu_s', 0):.2f} s over {report.get('wall_s', 0):.2f} s"
        f" ({100 * report.get('relay_cpu_s', 0) / max(report.get('wall_s', 1), 1e-9):.0f} %), SCHED_FIFO "
        f"{'yes' if report.get('sched_fifo') else 'no'}, CPU {report.get('cpu')}",
    ]
    cap = report.get("pcap")
    if cap:
        ifaces = "0 server, 1 modem-lan" + (", 2 docsis-upstream" if cap.get("docsis_bursts") is not None else "")
        missed = f", {cap['missed']} not kept (the capture was full)" if cap.get("missed") else ""
        lines.append(f"pcap: {cap['blocks']} packets -> {cap['path']} (interfaces {ifaces}; wall-clock times{missed})")
    for name, ok, what in checks:
        lines.append(f"self-check {'ok  ' if ok else 'FAIL'} {name}: {what}")
    return "\n".join(lines) + "\n"


def format_flows(flows: list[dict[str, Any]]) -> str:
    head = f"{'flow':>4} {'bytes':>10} {'duration s':>10} {'Mb/s':>8} {'rx Mb/s':>8} {'rexmits':>7} {'RTOs':>4} {'adv wnd':>8} finished"
    out = [head]
    for r in flows:
        def f(v: Any, fmt: str) -> str:
            return "-" if v is None else format(v, fmt)
        out.append(f"{r['flow']:>4} {r['bytes']:>10} {f(r['duration_s'], '10.3f')} "
                   f"{f(r['throughput_bps'] and r['throughput_bps'] / 1e6, '8.3f')} "
                   f"{f(r.get('receiver_rate_bps') and r['receiver_rate_bps'] / 1e6, '8.3f')} "
                   f"{f(r.get('retransmitted_segments'), '7d')} {f(r.get('timeouts'), '4d')} "
                   f"{f(r.get('advertised_window_bytes'), '8d')} "
                   f"{'yes' if r['finished'] else 'NO'}")
    return "\n".join(out) + "\n"


def format_pings(rows: list[dict[str, Any]]) -> str:
    out = []
    for i in sorted({r["ping"] for r in rows}):
        rtts = sorted(r["rtt_s"] * 1e3 for r in rows if r["ping"] == i and r["rtt_s"] is not None)
        sent = sum(1 for r in rows if r["ping"] == i)
        if rtts:
            out.append(f"ping {i}: {sent} echoes, {sent - len(rtts)} lost, RTT min {rtts[0]:.2f} ms, median "
                       f"{rtts[len(rtts) // 2]:.2f} ms, max {rtts[-1]:.2f} ms\n")
        else:
            out.append(f"ping {i}: {sent} echoes, all lost\n")
    return "".join(out)


def emulate(scenario: Any = None, seed: int = 1, seconds: float | None = None, fifo: bool = True,
            cpu: int | None = -1, spin_us: float = 80.0, out: TextIO | None = None,
            pcap: str | os.PathLike[str] | None = None, snap_payload: int = 0,
            window_clamp: int | None = None) -> Result:
    """Emulate ``scenario``'s flows as real kernel TCP (the built-in workload); a Result like
    simulate()'s, the emulator's report and self-checks in ``result.engine``. ``pcap``: write what
    crossed to that file (pcapng). ``window_clamp``: the receivers advertise at most this many bytes
    (TCP_WINDOW_CLAMP, over the SO_RCVBUF of ``socket_buffers``), for a window that does not depend
    on the kernel's accounting (reproduce nguyen04 --emulate)."""
    check_host()
    sc = load(scenario)
    check_scenario(sc, builtin=True)
    with session(sc, seed, fifo, cpu, spin_us, pcap, snap_payload) as h:
        if out is not None:
            out.write(addresses_text(h, int(h.emu.modems)))
            out.write("".join(f"warning: {w}\n" for w in h.warnings))
            out.flush()
        flows, pings = _builtin(h, sc, DEFAULT_SECONDS if seconds is None else seconds, window_clamp)
    for row, f in zip(flows, sc["flows"], strict=True):
        row.update(ping_phases(pings, f["start_s"], row.get("completed_s")))
    checks = self_checks(h.report, flows, [f["direction"] == "down" for f in sc["flows"]])
    engine = {"kind": "emulation", "emulator": h.report, "warnings": h.warnings,
              "self_checks": [{"name": n, "ok": ok, "what": w} for n, ok, w in checks]}
    return Result(seed, sc.to_dict(), flows, engine, pings=pings)


@dataclass
class CommandRun:
    """What ``run_command`` did: COMMAND's exit status, the emulator's report, the scenario's pings
    (run beside COMMAND as real echoes), the namespaces and addresses."""

    command: list[str]
    side: str
    status: int
    report: dict[str, Any]
    pings: list[dict[str, Any]]
    server_ns: str
    client_ns: str
    modems: int
    warnings: list[str]

    def checks(self) -> list[tuple[str, bool, str]]:
        return self_checks(self.report)

    def to_dict(self) -> dict[str, Any]:
        """The run as one JSON-ready object (``hfcsim emulate --json -- COMMAND``)."""
        return {
            "command": self.command, "side": self.side, "exit_status": self.status,
            "server": {"address": SERVER_ADDRESS, "namespace": self.server_ns},
            "clients": [{"modem": m, "address": client_address(m)} for m in range(self.modems)],
            "client_namespace": self.client_ns,
            "warnings": self.warnings,
            "pings": self.pings,
            "self_checks": [{"name": n, "ok": ok, "what": w} for n, ok, w in self.checks()],
            "emulator": self.report,
        }


def run_command(scenario: Any, command: Sequence[str], side: str = "client", seconds: float | None = None,
                seed: int = 1, out: TextIO | None = sys.stdout, spin_us: float = 80.0,
                pcap: str | os.PathLike[str] | None = None, snap_payload: int = 0,
                command_stdout: Any = None) -> CommandRun:
    """Run ``command`` in the ``side`` namespace with the scenario's network between the two, until it
    exits (or ``seconds`` pass), the scenario's pings (if any) beside it as real ICMP echoes, from the
    moment it starts until after_s past its end (or their stop_s). ``pcap``: write what crossed to that
    file (pcapng). ``out``: where the addresses are told (None: nowhere); ``command_stdout``: COMMAND's
    standard output (None: this process's)."""
    check_host()
    sc = scenario if isinstance(scenario, Scenario) else load(scenario)
    check_scenario(sc, builtin=False)
    pings = sc["pings"]
    with session(sc, seed, spin_us=spin_us, pcap=pcap, snap_payload=snap_payload) as h:
        if out is not None:
            out.write(addresses_text(h, int(h.emu.modems)))
            out.write("".join(f"warning: {w}\n" for w in h.warnings))
            out.write(f"running {' '.join(command)} in the {side} namespace (HFCSIM_SERVER_NS and HFCSIM_CLIENT_NS "
                      "name the namespaces, for `ip netns exec`)\n")
            out.flush()
        ns = h.client_ns if side == "client" else h.server_ns
        pingers: list[subprocess.Popen[str]] = []
        ping_rows: list[dict[str, Any]] = []
        try:
            _start_pings(h, pings, pingers)
            t0 = time.monotonic()
            _go_pings(pings, pingers, t0)
            try:
                env = {**os.environ, "HFCSIM_SERVER_NS": h.server_ns, "HFCSIM_CLIENT_NS": h.client_ns,
                       "HFCSIM_SERVER": SERVER_ADDRESS}
                p = subprocess.Popen(_wrap(ns, list(command)), env=env, stdout=command_stdout)
            except OSError as e:
                raise EmulationRefused(f"{command[0]}: cannot run ({e.strerror})") from None
            try:
                status = p.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                p.terminate()
                try:
                    p.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                status = 124  # timeout(1)'s status
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            if pingers:
                done = time.monotonic()
                ping_rows = _ping_rows(pings, pingers, t0, done, done + max(g["after_s"] for g in pings) + 1.0)
        finally:
            _end(pingers)
    return CommandRun(list(command), side, status, h.report, ping_rows, h.server_ns, h.client_ns,
                      int(h.emu.modems), h.warnings)


# ---------------------------------------------------------------------------------------------------
# --compare: the same scenario simulated and emulated


def _quantile(values: list[float], p: float) -> float | None:
    """Nearest rank (relay.rs quantile)."""
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v), max(1, -(-int(p * 1000) * len(v) // 1000))) - 1]


def _ping_rtts(rows: list[dict[str, Any]], ping: int) -> list[float]:
    return [r["rtt_s"] for r in rows if r["ping"] == ping and r["rtt_s"] is not None]


def simulation_side(sc: Scenario, emulated: Result) -> tuple[Scenario, list[str]]:
    """The scenario the simulation side runs, and what was changed, one line each.

    The scenario as given: its tcp.stack is linux, and its receiver.linux_window (both required by
    emulate) reads receiver.receive_buffer_bytes as the kernel does, as the SO_RCVBUF the emulated
    application asked for, and offers the window Linux's rules make of it. The window the kernel last
    advertised is named in the notes, for comparison. The send buffer stays the scenario's: the
    kernel's limit on bytes in flight from SO_SNDBUF depends on its memory accounting, which nothing
    reports."""
    notes = [f"simulation: the same scenario and seed, tcp.stack = \"{sc.get('tcp.stack')}\""]
    windows = [f.get("advertised_window_bytes") for f in emulated.flows if f.get("advertised_window_bytes")]
    seen = f"; the kernel last advertised {max(windows)}" if windows else ""
    if sc.get("receiver.rcvbuf_autotuning"):
        notes.append(f"simulation: no SO_RCVBUF, the buffer tuned by Linux's rules from tcp_rmem "
                     f"{sc.get('receiver.tcp_rmem_default_bytes')} up to {sc.get('receiver.tcp_rmem_max_bytes')} "
                     f"(receiver.rcvbuf_autotuning, receiver.linux_window, receiver.skb_truesize_bytes = "
                     f"{sc.get('receiver.skb_truesize_bytes')}){seen}")
    else:
        notes.append(f"simulation: receiver.receive_buffer_bytes = {sc.get('receiver.receive_buffer_bytes')}, the "
                     "SO_RCVBUF the emulated receiver asked for, windowed by Linux's rules (receiver.linux_window, "
                     f"receiver.skb_truesize_bytes = {sc.get('receiver.skb_truesize_bytes')}){seen}")
    return sc, notes


def compare_rows(simulated: Result, emulated: Result) -> list[dict[str, Any]]:
    """One row per measure: flow throughput (Mb/s), retransmitted segments, RTOs; ping RTT
    percentiles (ms); the simulated value, the emulated one, and emulated / simulated."""
    rows = []

    def add(what: str, sim: float | None, emu: float | None) -> None:
        ratio = emu / sim if sim not in (None, 0) and emu is not None else None
        rows.append({"measure": what, "simulated": sim, "emulated": emu, "ratio": ratio})

    for fs, fe in zip(simulated.flows, emulated.flows, strict=True):
        i = fs["flow"]
        mbps = [None if f.get("throughput_bps") is None else f["throughput_bps"] / 1e6 for f in (fs, fe)]
        add(f"flow {i} throughput Mb/s", *mbps)
        add(f"flow {i} retransmitted segments", fs.get("retransmitted_segments"), fe.get("retransmitted_segments"))
        add(f"flow {i} RTOs", fs.get("timeouts"), fe.get("timeouts"))
    pings = sorted({r["ping"] for r in simulated.ping_rows} | {r["ping"] for r in emulated.ping_rows})
    for i in pings:
        sim, emu = _ping_rtts(simulated.ping_rows, i), _ping_rtts(emulated.ping_rows, i)
        for name, p in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
            qs, qe = _quantile(sim, p), _quantile(emu, p)
            add(f"ping {i} RTT {name} ms", None if qs is None else qs * 1e3, None if qe is None else qe * 1e3)
    return rows


def format_compare(rows: list[dict[str, Any]], notes: Sequence[str]) -> str:
    def f(v: Any) -> str:
        if v is None:
            return "-"
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    width = max([len(r["measure"]) for r in rows] + [7])
    out = [*notes, f"{'measure':<{width}} {'simulated':>10} {'emulated':>10} {'emu/sim':>8}"]
    for r in rows:
        out.append(f"{r['measure']:<{width}} {f(r['simulated']):>10} {f(r['emulated']):>10} {f(r['ratio']):>8}")
    return "\n".join(out) + "\n"


def compare(scenario: Any = None, seed: int = 1, seconds: float | None = None, spin_us: float = 80.0,
            out: TextIO | None = None, pcap: str | os.PathLike[str] | None = None,
            snap_payload: int = 0) -> dict[str, Any]:
    """Emulate ``scenario`` (the built-in workload), then simulate it (``simulation_side``):
    {"emulated": Result, "simulated": Result, "notes": [...], "rows": compare_rows(...)}."""
    from hfcsim.simulate import simulate

    sc = load(scenario)
    emulated = emulate(sc, seed=seed, seconds=seconds, spin_us=spin_us, out=out, pcap=pcap,
                       snap_payload=snap_payload)
    sim_sc, notes = simulation_side(sc, emulated)
    simulated = simulate(sim_sc, seed=seed)
    return {"emulated": emulated, "simulated": simulated, "notes": notes,
            "rows": compare_rows(simulated, emulated)}
