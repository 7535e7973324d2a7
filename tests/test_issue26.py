"""Issue 26 (reliability, round two): the linux timer's floor for the initial RTO (defect 5), why a
flow ended (defect 6), errors that blame the key the user set (defect 7), and the smaller ones
(defect 8). Defect 1 (Ctrl-C) is in test_output.py."""

from __future__ import annotations

import sys

import pytest

from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.scenario import load


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line(status: int, err: str, start: str) -> None:
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("hfcsim: error: " + start), err


# --- Defect 5: Linux's first RTO is TCP_TIMEOUT_INIT (1 s), never below TCP_RTO_MIN ----------------

@pytest.mark.parametrize(("tcp", "refused"), [
    ({"stack": "linux", "initial_rto_s": 1e-9}, "tcp.initial_rto_s = 1e-09: below tcp.min_rto_s = 0.2"),
    ({"stack": "linux", "initial_rto_s": 0.199}, "tcp.initial_rto_s = 0.199: below tcp.min_rto_s = 0.2"),
    ({"timer": "linux", "min_rto_s": 0.05, "initial_rto_s": 0.01},
     "tcp.initial_rto_s = 0.01: below tcp.min_rto_s = 0.05"),
    ({"stack": "linux", "initial_rto_s": 0.2}, None),
    ({"stack": "linux", "min_rto_s": 0.001, "initial_rto_s": 0.001}, None),
    ({"timer": "rfc6298", "initial_rto_s": 1e-9}, None),  # RFC 6298 (2.4) clamps it to its minimum
])
def test_the_linux_timer_refuses_an_initial_rto_below_its_floor(tcp, refused):
    if refused is None:
        load({"tcp": tcp})
    else:
        with pytest.raises(ScenarioError) as e:
            load({"tcp": tcp})
        assert str(e.value).startswith(refused), e.value
        assert "linux timer's floor" in str(e.value)


def test_the_reproduction_of_defect_5_is_one_line(capsys):
    status, out, err = run_cli(capsys, "run", "--set", "tcp.stack=linux", "--set", "tcp.initial_rto_s=1e-9",
                               "--set", "flows.0.bytes=30000")
    assert out == ""
    assert_one_line(status, err, "tcp.initial_rto_s = 1e-09: below tcp.min_rto_s = 0.2")
