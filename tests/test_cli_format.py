"""The human output of ``hfcsim run``: no "-0" for a value given as -0.0 (issue 12, defect H)."""

from __future__ import annotations

import re

import pytest

from hfcsim.cli import format_measured
from hfcsim.describe import _g, describe
from hfcsim.errors import ScenarioError
from hfcsim.scenario import PARAM_BY_KEY, SCHEMA, load

NEGATIVE_ZERO = re.compile(r"(?<![\de.])-0(?![\d.])|-0\.0+(?!\d*[1-9])")

# Every float key that takes 0, on each network kind it is valid with: -0.0 is 0 and must print as 0.
ZERO_KEYS = sorted((key, kind) for key, p in PARAM_BY_KEY.items()
                   if p.type is float and "*" not in key and not (p.gt is not None and p.gt >= 0)
                   and not (p.ge is not None and p.ge > 0)
                   for kind in (p.network or ("hfc",)))


@pytest.mark.parametrize(("key", "kind"), ZERO_KEYS)
def test_negative_zero_is_described_as_zero(key, kind):
    sets = [f"network.kind={kind}", f"{key}=-0.0"] if kind != "hfc" else [f"{key}=-0.0"]
    section, name = key.split(".")
    macs = SCHEMA[section][name].get("requires", {}).get("upstream.mac")
    if macs and PARAM_BY_KEY["upstream.mac"].default_for(kind) not in macs:  # a MAC's key needs a MAC (issue 26)
        sets.append(f"upstream.mac={macs[0]}")
    if key.startswith("network.lld_"):  # the LLD keys need a dual queue (rules.rs lld_rules)
        sets.append("network.cm_aqm=lld")
    try:
        scenario = load(None, sets)
    except ScenarioError:
        pytest.skip(f"{key} = -0.0 is refused on {kind}")
    assert not NEGATIVE_ZERO.search(describe(scenario)), describe(scenario)


@pytest.mark.parametrize(("value", "text"), [(-0.0, "0"), (0.0, "0"), (1e-05, "1e-05"), (-2.5, "-2.5"), (20.0, "20")])
def test_g_writes_negative_zero_as_zero(value, text):
    assert _g(value) == text


def test_rtt_of_negative_zero_reads_0_ms():
    assert "RTT 0 ms" in describe(load(None, ["network.rtt_s=-0.0"]))


def test_a_measurement_from_negative_zero_reads_from_0_s():
    class Result:
        flows = [{"flow": 0, "finished": False, "measured_s": 2.0, "measured_bytes": 1000, "rtt_samples": 0}]

    scenario = load(None, ["sim.measure_from_s=-0.0"])
    assert format_measured(Result(), scenario) == "flow 0 from 0 s to 2 s: 1000 bytes in order, 0.004 Mb/s\n"
