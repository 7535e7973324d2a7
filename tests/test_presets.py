"""Scenario presets: ``preset = "modified-tcp"`` is Cohen & Ramanathan's modified TCP (Sec. VI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hfcsim.errors import ScenarioError
from hfcsim.scenario import PRESETS, Scenario, load


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # the preset alone: Sec. VI.A initial window 2, VI.C 200 ms tick, VI.D one dupACK
        ({"preset": "modified-tcp"}, {"initial_window": 2, "tick_s": 0.2, "dupack_threshold": 1}),
        # explicit keys win over the preset
        ({"preset": "modified-tcp", "tcp": {"tick_s": 0.5}},
         {"initial_window": 2, "tick_s": 0.5, "dupack_threshold": 1}),
        # no preset: the Cohen defaults
        ({}, {"initial_window": 1, "tick_s": 0.5, "dupack_threshold": 3}),
    ],
)
def test_preset_values(raw, expected):
    tcp = Scenario(raw).to_dict()["tcp"]
    assert {k: tcp[k] for k in expected} == expected
    assert "preset" not in Scenario(raw).to_dict()  # the engine sees resolved values only


def test_preset_through_set_and_file():
    assert load(None, ["preset=modified-tcp"]).get("tcp.dupack_threshold") == 1
    sc = load(Path(__file__).resolve().parent.parent / "scenarios" / "cohen-modified.toml")
    assert (sc.get("tcp.initial_window"), sc.get("network.downstream_loss")) == (2, 0.03)


@pytest.mark.parametrize("name", ["modified", "", 3])
def test_unknown_preset_is_one_line_naming_it(name):
    with pytest.raises(ScenarioError) as e:
        Scenario({"preset": name})
    assert str(e.value).startswith("preset = ") and "\n" not in str(e.value)


def test_cohen98_uses_the_preset():
    from hfcsim.papers import cohen98

    assert cohen98.MODIFIED_TCP == {f"tcp.{k}": v for k, v in PRESETS["modified-tcp"]["tcp"].items()}
