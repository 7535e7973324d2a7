"""``hfcsim reproduce lakshman97``: files, and the L-* claims that are exact in the engine.

L-wpipe, L-table1 and L-reno-fragile must PASS. L-double-ss and L-single-ss are pinned to the values the
engine gives exactly: for beta = 0.8 they are the paper's (181, 91, no second slow start); for Fig. 1
(beta = 0.1) they are eq. (4) applied with B waiting places, 27 / 53 / 26 (the paper's 26 / 50 / 25 count
the packet in service inside B; see the claim's explanation).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from hfcsim import reproduce
from hfcsim.papers import lakshman97

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("lakshman97")
    return reproduce.reproduce(lakshman97.paper(), quick=True, out=out, progress=False), out


def test_claim_ids_are_those_of_claims_md():
    assert [c.id for c in lakshman97.CLAIMS] == ["L-wpipe", "L-table1", "L-double-ss", "L-single-ss",
                                                 "L-random-loss", "L-unfair", "L-reno-fragile"]


@pytest.mark.parametrize("claim_id", ["L-wpipe", "L-table1", "L-single-ss", "L-reno-fragile"])
def test_exact_claims_pass(quick, claim_id):
    report, _ = quick
    result = next(r for r in report.results if r.claim.id == claim_id)
    assert result.status == reproduce.PASS, result.measured


def test_fig1_double_slow_start_numbers_are_exact(quick):
    report, _ = quick
    r = next(r for r in report.results if r.claim.id == "L-double-ss")
    assert r.measured.startswith("overflow at W = 27, detected at W = 53, second slow start threshold 26, "
                                 "cycle peak 111")
    assert r.status == reproduce.FAIL and r.claim.why


@pytest.mark.parametrize("fig", [f for f in lakshman97.FIGURE_LIST if not f.is_experiment],
                         ids=lambda f: f"fig{f.id}")
def test_figures_are_valid_and_labelled(quick, fig):
    _, out = quick
    assert (out / "figures" / f"fig{fig.id}.png").read_bytes().startswith(PNG_MAGIC)
    text = " ".join(ET.parse(out / "figures" / f"fig{fig.id}.svg").getroot().itertext())
    assert fig.xlabel in text and fig.ylabel in text


def test_report_has_every_claim(quick):
    report, out = quick
    md = (out / "report.md").read_text()
    for c in lakshman97.CLAIMS:
        assert f"| {c.id} |" in md
    assert all(r.status != reproduce.NOT_RUN for r in report.results)


def test_unfairness_is_monotone_with_jitter(quick):
    # With sender jitter the shorter connection always gets more: the ratio rises with T2/T1.
    # (The rows come from the quick reproduction's store: no new runs.)
    from hfcsim.sweep import sweep

    _, out = quick
    fig = lakshman97.FIGURES["unfair"]
    rows = sweep({**fig.sweep, "runs": reproduce.QUICK_RUNS, "seed0": 1}, out=out / "runs" / "figunfair",
                 progress=False)
    for _, s in lakshman97.unfairness(rows).groupby(["tcp.variant", "network.buffer_packets"]):
        ratios = list(s.sort_values("rtt_ratio").ratio)
        assert ratios == sorted(ratios), ratios


def test_every_title_states_the_runs_used(quick, titles_state_the_runs):
    # Issue 12, defect G: a --quick reproduction's figures and report say the runs it made.
    titles_state_the_runs(*quick)