"""``hfcsim emulate``'s sysctls and refusals, read from the scenario alone (no root, no namespaces):
each tcp rule key the kernel can honour becomes its sysctl, and one it cannot turn off is refused in
one line (python/hfcsim/emulate.py ``kernel_settings``, ``check_scenario``)."""

from __future__ import annotations

import pytest

from hfcsim.emulate import EmulationRefused, check_scenario, kernel_settings
from hfcsim.scenario import load

LINUX = ['tcp.stack="linux"']


@pytest.mark.parametrize(("sets", "expected"), [
    # The linux stack as shipped: Linux's defaults (ip-sysctl.rst: tcp_sack 1, tcp_dsack 1, tcp_frto 2,
    # tcp_recovery 1).
    ([], {"net.ipv4.tcp_sack": "1", "net.ipv4.tcp_dsack": "1", "net.ipv4.tcp_frto": "2",
          "net.ipv4.tcp_recovery": "1", "net.ipv4.tcp_timestamps": "1", "net.ipv4.tcp_congestion_control": "cubic"}),
    (["tcp.dsack=false"], {"net.ipv4.tcp_dsack": "0", "net.ipv4.tcp_recovery": "3"}),
    (["tcp.frto=false"], {"net.ipv4.tcp_frto": "0"}),
    # RACK's reordering window kept static: TCP_RACK_STATIC_REO_WND (0x2) beside RACK (0x1).
    (["tcp.rack_reo_wnd_dsack=false"], {"net.ipv4.tcp_recovery": "3", "net.ipv4.tcp_dsack": "1"}),
    # Without SACK there are no D-SACKs, and no RACK.
    (["tcp.sack=false", "tcp.rack=false", "tcp.tlp=false"],
     {"net.ipv4.tcp_sack": "0", "net.ipv4.tcp_dsack": "0", "net.ipv4.tcp_recovery": "2"}),
    (['tcp.congestion_control="reno"', "tcp.timestamps=false"],
     {"net.ipv4.tcp_congestion_control": "reno", "net.ipv4.tcp_timestamps": "0"}),
])
def test_kernel_settings_follow_the_tcp_keys(sets, expected):
    settings = kernel_settings(load(None, LINUX + sets))
    assert {k: settings[k] for k in expected} == expected


@pytest.mark.parametrize(("sets", "message"), [
    (["tcp.undo=false"], r"^tcp\.undo = false: the kernel always undoes spurious recoveries"),
    (["tcp.sack=false", "tcp.rack=false", "tcp.tlp=false", "tcp.reno_reordering=false"],
     r"^tcp\.reno_reordering = false: without SACK the kernel always counts duplicate ACKs"),
    (["tcp.prr_linux=false"], r"^tcp\.prr_linux = false: the kernel's PRR is always Linux's"),
    (["tcp.cubic_linux_friendliness=false"], r"^tcp\.cubic_linux_friendliness = false: the kernel's CUBIC always"),
])
def test_rules_the_kernel_cannot_turn_off_are_refused_in_one_line(sets, message):
    with pytest.raises(EmulationRefused, match=message) as e:
        check_scenario(load(None, LINUX + sets), builtin=True)
    assert "\n" not in str(e.value)


def test_the_linux_stack_as_shipped_is_accepted():
    check_scenario(load(None, LINUX), builtin=True)
    check_scenario(load(None, LINUX + ["tcp.sack=false", "tcp.rack=false", "tcp.tlp=false"]), builtin=True)
