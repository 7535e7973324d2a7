"""``hfcsim reproduce``: every figure and report file of a quick reproduction, the claims robust at a
few runs, NOT-RUN for claims whose figures were not selected, and the CLI's errors."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from hfcsim import reproduce
from hfcsim.cli import main
from hfcsim.papers import cohen98

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("cohen98")
    report = reproduce.reproduce(cohen98.paper(), quick=True, out=out, progress=False)
    return report, out


DRAWN = [f for f in cohen98.FIGURE_LIST if not f.is_experiment]


def test_the_paper_lists_every_data_figure():
    # Issue 3: Figs. 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 17, 18 (11 is added for C-delack-http).
    ids = {f.id for f in DRAWN}
    assert {"3", "4", "5", "6", "7", "8", "9", "10", "12", "13", "14", "15", "17", "18"} <= ids


@pytest.mark.parametrize("fig", DRAWN, ids=lambda f: f"fig{f.id}")
def test_figure_files_are_valid_and_labelled(quick, fig):
    _, out = quick
    png = (out / "figures" / f"fig{fig.id}.png").read_bytes()
    assert png.startswith(PNG_MAGIC) and len(png) > 5000
    svg = out / "figures" / f"fig{fig.id}.svg"
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    text = " ".join(t for t in root.itertext())
    for label in (fig.xlabel, fig.ylabel):
        if label:
            assert label in text, f"axis label {label!r} missing from {svg.name}"
    assert (out / "data" / f"fig{fig.id}.csv").stat().st_size > 100


def test_report_lists_every_claim_with_a_result(quick):
    report, out = quick
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    ids = [c.id for c in cohen98.CLAIMS]
    assert len(ids) == len(set(ids)) == 23
    for cid in ids:
        row = next(line for line in md.splitlines() if line.startswith(f"| {cid} |"))
        assert re.search(r"\*\*(PASS|FAIL|NOT-RUN)\*\*", row), row
        assert cid in html
    for fig in DRAWN:
        assert f"figures/fig{fig.id}.png" in md and f"figures/fig{fig.id}.png" in html
    # every FAIL carries its explanation
    for r in report.results:
        if r.status == reproduce.FAIL:
            assert r.claim.why, f"{r.claim.id} fails without an explanation"
            assert f"**{r.claim.id}**: {r.claim.why[:40]}" in md


# The C-* ids of the paper's claims (python/hfcsim/papers/cohen98.py), in its order.
CLAIM_IDS = [
    "C-ackloss", "C-1pct", "C-bigbuf", "C-timeouts", "C-size-300k",
    "C-size-30k", "C-size-order", "C-pct-30k-1", "C-pct-300k-1", "C-pct-30k-35",
    "C-pct-spread", "C-cmbuf", "C-bufrule", "C-multi", "C-delack-ftp",
    "C-delack-http", "C-delack-ackloss", "C-mss", "C-timer200", "C-sfr-example",
    "C-combined", "C-sizes-mod", "C-ackloss20",
]


def test_claim_ids_match_claims_md():
    assert [c.id for c in cohen98.CLAIMS] == CLAIM_IDS


# Claims whose outcome is robust with 4 seeds (margins of 1.5x or more in full runs).
ROBUST_PASS = ["C-ackloss", "C-delack-ackloss", "C-mss", "C-combined", "C-sfr-example"]


@pytest.mark.parametrize("claim_id", ROBUST_PASS)
def test_robust_claims_pass_at_a_few_runs(quick, claim_id):
    report, _ = quick
    result = next(r for r in report.results if r.claim.id == claim_id)
    assert result.status == reproduce.PASS, result.measured


def test_unselected_figures_leave_their_claims_not_run(tmp_path):
    report = reproduce.reproduce(cohen98.paper(), figures=["13"], runs=2, out=tmp_path, progress=False)
    status = {r.claim.id: r.status for r in report.results}
    assert status["C-delack-ackloss"] in (reproduce.PASS, reproduce.FAIL)
    assert status["C-1pct"] == status["C-cmbuf"] == reproduce.NOT_RUN
    assert status["C-sfr-example"] != reproduce.NOT_RUN  # needs no figure
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == ["fig13.png", "fig13.svg"]


def test_a_figure_drawn_from_another_runs_that_one(tmp_path):
    report = reproduce.reproduce(cohen98.paper(), figures=["7"], runs=2, out=tmp_path, progress=False)
    assert report.figures == ["6", "7"]


def test_rerun_is_served_from_the_store(tmp_path, monkeypatch):
    reproduce.reproduce(cohen98.paper(), figures=["13"], runs=2, out=tmp_path, progress=False)
    import hfcsim.sweep as sweep_module

    def no_runs(*args, **kwargs):
        raise AssertionError("a stored run was run again")

    monkeypatch.setattr(sweep_module, "run_batch", no_runs)
    again = reproduce.reproduce(cohen98.paper(), figures=["13"], runs=2, out=tmp_path, progress=False, jobs=1)
    assert {r.claim.id: r.status for r in again.results}["C-delack-ackloss"] != reproduce.NOT_RUN


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["reproduce", "nosuchpaper"], "unknown paper"),
        (["reproduce", "cohen98", "--figure", "99"], "--figure 99"),
        (["reproduce", "cohen98", "--runs", "0"], "--runs 0"),
    ],
)
def test_bad_reproduce_arguments_exit_2_with_one_line(capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err


def test_report_html_is_well_formed(quick):
    # The HTML report is generated by hand: lists and tables must open and close in order.
    _, out = quick
    html = (out / "report.html").read_text()
    for tag in ("ul", "table", "tr", "li", "b", "code"):
        assert html.count(f"<{tag}>") + html.count(f"<{tag} ") == html.count(f"</{tag}>"), tag
    assert html.index("<ul>") < html.index("<li>")


_SWEEP = {"name": "s", "base": {},
          "grid": {"network.epd_threshold_cells": [40, 80, 120], "upstream.scheduler": ["fcfs", "rr"]}}


@pytest.mark.parametrize(("max_runs", "quick", "runs", "want_runs", "want_grid"), [
    (None, False, 100, 100, _SWEEP["grid"]),
    (10, False, 100, 10, _SWEEP["grid"]),       # max_runs caps the seeds
    (10, False, 4, 4, _SWEEP["grid"]),          # but never raises them
    (None, True, 4, 4, {"network.epd_threshold_cells": [80], "upstream.scheduler": ["fcfs", "rr"]}),
])
def test_figure_sweep_caps_runs_and_takes_the_quick_grid(max_runs, quick, runs, want_runs, want_grid):
    fig = reproduce.Figure("x", "caption", sweep=_SWEEP, max_runs=max_runs,
                           quick_grid={"network.epd_threshold_cells": [80]})
    spec = reproduce.figure_sweep(fig, runs, quick)
    assert (spec["runs"], spec["seed0"], spec["grid"]) == (want_runs, 1, want_grid)
    assert reproduce.figure_runs(fig, runs) == want_runs
    assert _SWEEP["grid"]["network.epd_threshold_cells"] == [40, 80, 120], "the recipe itself is left alone"


@pytest.mark.parametrize(("asked", "per_figure", "expected"), [
    (100, {"7": 100, "8": 100}, "100 runs (seeds 1..100) per point"),
    (100, {}, "100 runs (seeds 1..100) per point"),
    (4, {"7": 1}, "1 run (seed 1) per point"),
    (100, {"4": 1, "5": 1, "aqm": 10}, "per point: 1 run (seed 1) for figures 4, 5; 10 runs (seeds 1..10) for figure aqm"),
])
def test_the_report_states_the_runs_actually_used(asked, per_figure, expected):
    from hfcsim.reproduce import runs_used

    assert runs_used(asked, per_figure) == expected


def test_every_title_states_the_runs_used(quick, titles_state_the_runs):
    # Issue 12, defect G: a --quick reproduction's figures and report say the runs it made.
    titles_state_the_runs(*quick)