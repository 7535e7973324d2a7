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


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_value_carries_its_source_and_the_preset_runs(name):
    # Issue 23: each key's value in a preset carries its source or says that it is a typical choice;
    # a source names a key the preset sets (none is left over from an edit).
    from hfcsim.schema import PRESET_NOTES

    keys = {f"{section}.{key}" for section, table in PRESETS[name].items() for key in table}
    sources = PRESET_NOTES[name].get("sources", {})
    assert keys == set(sources), (keys ^ set(sources))
    assert all(sources.values()) and PRESET_NOTES[name]["description"]
    assert Scenario({"preset": name}).to_dict()  # valid as it stands


def test_a_preset_on_a_base_is_the_base_with_its_own_values_over_it():
    # nguyen04 = docsis10-testbed's plant + the FreeBSD hosts (schema.toml `base`).
    from hfcsim.schema import PRESET_NOTES

    assert PRESET_NOTES["nguyen04"]["base"] == "docsis10-testbed"
    for section, table in PRESETS["docsis10-testbed"].items():
        assert {k: PRESETS["nguyen04"][section][k] for k in table} == table
    assert PRESETS["nguyen04"]["tcp"]["variant"] == "newreno"


def test_params_lists_each_preset_with_its_sources(capsys):
    from hfcsim.cli import main

    assert main(["params"]) == 0
    out = capsys.readouterr().out
    assert "\nnguyen04 (on docsis10-testbed): " in out
    assert 'network.default_buffer = "unbounded"' in out and "no packet loss" in out
