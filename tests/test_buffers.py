"""Issue 35: today's defaults for today's stacks. Under ``linux`` and ``l4s`` a socket the scenario gives
no buffer gets Linux's (``tcp.sndbuf_autotuning``, ``receiver.rcvbuf_autotuning``: tcp_wmem / tcp_rmem,
grown by the kernel's rules), one it gives a buffer gets exactly that buffer, locked as setsockopt
locks it; the 1990s stacks keep the papers' 8 KB. A run whose window cannot fill its path says so in
one line, and a congestion control of today on a 1990s stack is refused or noted, with the reason."""
from __future__ import annotations

import pytest

import hfcsim
from hfcsim.cli import main
from hfcsim.emulate import kernel_settings, socket_buffers
from hfcsim.scenario import load


def _resolved(sets: list[str]) -> tuple[bool, bool]:
    sc = load(None, sets)
    return sc.get("tcp.sndbuf_autotuning"), sc.get("receiver.rcvbuf_autotuning")


@pytest.mark.parametrize(("sets", "expected"), [
    # Today's stacks without buffer keys: both autotuned.
    (['tcp.stack="linux"'], (True, True)),
    (['tcp.stack="l4s"'], (True, True)),
    # A buffer set is SO_SNDBUF / SO_RCVBUF: locked, the other side still Linux's; the default's own value
    # too (an application that asks for 8192 gets 8192).
    (['tcp.stack="linux"', "tcp.send_buffer_bytes=8192"], (False, True)),
    (['tcp.stack="linux"', "receiver.receive_buffer_bytes=65536"], (True, False)),
    (['tcp.stack="l4s"', "tcp.send_buffer_bytes=1000000", "receiver.receive_buffer_bytes=1000000"], (False, False)),
    # A preset's buffers are the scenario's (FreeBSD 4's 32 KB / 64 KB in nguyen04).
    (["preset=nguyen04", 'tcp.stack="linux"'], (False, False)),
    # Linux's window off: no receive autotuning (it grows the memory that window comes from).
    (['tcp.stack="linux"', "receiver.linux_window=false"], (True, False)),
    # The 1990s stacks keep the papers' buffers.
    ([], (False, False)),
    (['tcp.stack="net3"'], (False, False)),
    (['tcp.stack="ns2"'], (False, False)),
])
def test_todays_stacks_tune_the_buffers_the_scenario_leaves_unset(sets, expected):
    assert _resolved(sets) == expected


def test_the_1990s_defaults_are_the_papers_8_kb():
    sc = load(None, [])
    assert (sc.get("tcp.send_buffer_bytes"), sc.get("receiver.receive_buffer_bytes")) == (8192, 8192)


@pytest.mark.parametrize("stack", ["linux", "l4s"])
def test_docsis31_without_buffer_keys_fills_most_of_its_tier(stack):
    # The issue: 13.5 Mb/s on the 1.2 Gb/s tier with the 8 KB buffers. The tier counts Ethernet frames:
    # 1,448 B of payload in 1,518 leave 1,144.7 Mb/s. 100 MB, slow start included.
    r = hfcsim.simulate(load(None, ["preset=docsis31", f'tcp.stack="{stack}"', "flows.0.bytes=100000000"]), seed=1)
    f = r.flows[0]
    assert f["finished"] and f["throughput_bps"] > 0.9 * 1.2e9 * 1448 / 1518, f["throughput_bps"]
    assert "window_limit_bytes" not in f


def test_an_explicit_buffer_is_exactly_that_buffer():
    # docsis31 with SO_RCVBUF 65536 under linux: the window is Linux's of that memory, at most
    # 131,072 x 160 / 256 = 81,920 B; the note names the key.
    sc = load(None, ["preset=docsis31", 'tcp.stack="linux"', "receiver.receive_buffer_bytes=65536",
                     "flows.0.bytes=3000000"])
    f = hfcsim.simulate(sc, seed=1).flows[0]
    assert (f["window_limit_bytes"], f["window_limited_by"]) == (81920, "receiver.receive_buffer_bytes"), f


@pytest.mark.parametrize(("sets", "fragment"), [
    ([], "at most 8760 B (tcp.send_buffer_bytes and receiver.receive_buffer_bytes), below the bandwidth-delay "
         "product"),
    (["preset=docsis31", 'tcp.stack="linux"', "tcp.window_scaling=false"],
     "(the window field without scaling (tcp.window_scaling = false))"),
    # (A maximum below the default would not bound it: Linux starts the socket at the default.)
    (['tcp.stack="linux"', "receiver.tcp_rmem_default_bytes=10000", "receiver.tcp_rmem_max_bytes=20000"],
     "(receiver.tcp_rmem_max_bytes)"),
    (['tcp.stack="linux"', "tcp.tcp_wmem_max_bytes=20000"], "(tcp.tcp_wmem_max_bytes)"),
])
def test_a_window_that_cannot_fill_its_path_says_so_in_one_line(capsys, sets, fragment):
    argv = ["run", "--set", "flows.0.bytes=300000"] + [a for s in sets for a in ("--set", s)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if "cannot fill its path" in line]
    assert len(notes) == 1 and fragment in notes[0], out


def test_a_window_that_fills_its_path_says_nothing(capsys):
    assert main(["run", "--set", 'tcp.stack="linux"', "--set", "flows.0.bytes=3000000"]) == 0
    assert "cannot fill its path" not in capsys.readouterr().out


@pytest.mark.parametrize(("sets", "key"), [
    # Today's sender, where CUBIC runs, has no header prediction (net3) or ns-2 fast recovery (ns2): the
    # stack's own rule would be dropped. Refused, naming the key.
    (['tcp.stack="net3"', 'tcp.congestion_control="cubic"'], "tcp.congestion_control"),
    (['tcp.stack="ns2"', 'tcp.congestion_control="cubic"'], "tcp.congestion_control"),
    (['tcp.stack="net3"', 'flows.0.congestion_control="cubic"'], "flows.0.congestion_control"),
    # BBR's own refusal (its pacing) stands.
    (['tcp.stack="net3"', 'tcp.congestion_control="bbr"'], "tcp.congestion_control"),
])
def test_a_control_of_today_on_a_1990s_stack_with_its_own_rules_is_refused(capsys, sets, key):
    assert main(["run"] + [a for s in sets for a in ("--set", s)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"hfcsim: error: {key} = "), err


@pytest.mark.parametrize("cc", ["cubic", "bbr"])
def test_a_control_of_today_on_net3_rfc5681_runs_with_a_note(capsys, cc):
    # CUBIC's window under 4.4BSD's timers and delayed ACK: a combination a researcher may want (with
    # NewReno's recovery, today's sender's: tests/test_rule_paths.py).
    assert main(["run", "--set", f'tcp.congestion_control="{cc}"', "--set", 'tcp.variant="newreno"', "--set",
                 "flows.0.bytes=100000"]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if 'on tcp.stack = "net3-rfc5681"' in line]
    assert len(notes) == 1 and "no host ran" in notes[0], notes


def test_emulate_leaves_an_autotuned_socket_unset_and_sets_the_namespaces_tcp_mem():
    sc = load(None, ['tcp.stack="linux"'])
    assert socket_buffers(sc) == (0, 0)
    settings = kernel_settings(sc)
    assert (settings["net.ipv4.tcp_rmem"], settings["net.ipv4.tcp_wmem"]) == ("4096 131072 33554432",
                                                                              "4096 16384 4194304")
    assert settings["net.ipv4.tcp_moderate_rcvbuf"] == "1"
    sc = load(None, ['tcp.stack="linux"', "receiver.tcp_rmem_max_bytes=6291456", "tcp.send_buffer_bytes=65536"])
    assert socket_buffers(sc) == (65536, 0)
    settings = kernel_settings(sc)
    assert (settings["net.ipv4.tcp_rmem"], settings["net.ipv4.tcp_wmem"]) == ("4096 131072 6291456",
                                                                              "4096 131072 131072")


@pytest.mark.parametrize(("sets", "key"), [
    # tcp_rmem / tcp_wmem's values mean nothing to a locked buffer: refused, never ignored.
    (['tcp.stack="linux"', "receiver.receive_buffer_bytes=65536", "receiver.tcp_rmem_max_bytes=1000000"],
     "receiver.tcp_rmem_max_bytes"),
    (["tcp.tcp_wmem_default_bytes=1000"], "tcp.tcp_wmem_default_bytes"),
    (["receiver.rcvbuf_autotuning=true"], "receiver.rcvbuf_autotuning"),
    # Both asked: SO_RCVBUF locks the buffer, autotuning would ignore it. Refused, never ignored.
    (['tcp.stack="net3-rfc5681"', "tcp.sndbuf_autotuning=true", "tcp.send_buffer_bytes=65536"],
     "tcp.send_buffer_bytes"),
    (['tcp.stack="linux"', "receiver.rcvbuf_autotuning=true", "receiver.receive_buffer_bytes=65536"],
     "receiver.receive_buffer_bytes"),
])
def test_the_buffer_keys_are_refused_where_they_cannot_apply(capsys, sets, key):
    assert main(["run"] + [a for s in sets for a in ("--set", s)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{key} = " in err, err
