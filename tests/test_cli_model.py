"""``hfcsim model cohen-buffer``: Cohen & Ramanathan Sec. V.B from the command line."""

from __future__ import annotations

import json

import pytest

from hfcsim.cli import main


@pytest.mark.parametrize(
    ("argv", "whole_bytes", "segments"),
    [
        # The paper's example: 10 KB CM buffer, 25/10 Mb/s, one connection -> 18-19 KB, i.e. 12
        # whole 1460-byte segments once BSD rounds the buffer up (C-bufrule).
        (["--cm-buffer-bytes", "10240"], 17520.0, 12.0),
        # Three connections share the buffer: the per-connection buffer shrinks to 4 segments.
        (["--cm-buffer-bytes", "10240", "--connections", "3"], 5840.0, 4.0),
        # The strict no-drop form: C = 10240/1500 = 6.83 packets, B = (C - 1)/0.6 + 1 = 10.7 -> 10.
        (["--cm-buffer-bytes", "10240", "--strict"], 14600.0, 10.0),
    ],
)
def test_cohen_buffer_json(capsys, argv, whole_bytes, segments):
    assert main(["model", "cohen-buffer", "--json", *argv]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["whole_mss_bytes"] == whole_bytes
    assert out["whole_mss_segments"] == segments


def test_cohen_buffer_human_output_names_the_rule(capsys):
    assert main(["model", "cohen-buffer", "--cm-buffer-bytes", "10240"]) == 0
    out = capsys.readouterr().out
    assert "18,072 B" in out and "12 x 1460 B" in out and "Sec. V.B" in out


def test_fast_lan_means_any_buffer_is_safe(capsys):
    assert main(["model", "cohen-buffer", "--cm-buffer-bytes", "10240", "--cm-lan-bps", "100e6"]) == 0
    assert "any socket buffer is safe" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--cm-buffer-bytes", "-1"], "cm_buffer_bytes = -1"),
        (["--cm-buffer-bytes", "10240", "--connections", "0"], "connections = 0"),
        (["--cm-buffer-bytes", "10240", "--downstream-bps", "0"], "downstream_bps = 0"),
    ],
)
def test_cohen_buffer_bad_input_is_one_line_exit_2(capsys, argv, fragment):
    assert main(["model", "cohen-buffer", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err
