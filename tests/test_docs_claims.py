"""The papers' claims tables in the docs (docs/papers/claims/PAPER.md): tools/claims_tables.py reads what
``hfcsim reproduce`` writes (its report.md, written here by the real ``write_report`` from a made-up
paper, no reproduction run), and each committed table is that script's output, with one row for
each claim its paper states and a reason for each FAIL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hfcsim.papers import PAPERS, papers
from hfcsim.reproduce import FAIL, NOT_RUN, PASS, Claim, ClaimResult, Outcome, Paper, Report, write_report

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import claims_tables  # noqa: E402


def claim(cid: str, why: str = "") -> Claim:
    return Claim(cid, (), f"what {cid} says", f"the check of {cid}", lambda data: Outcome(PASS, ""), why=why)


# (status, measured, why): the report's cells as write_report writes them, a "|" in a cell included.
RESULTS = [
    (PASS, "2.21 Mb/s vs 0.08 Mb/s (26.3x)", ""),
    (FAIL, "thr(1 %)/thr(0 %) = 0.68 | a pipe in the cell", "a loss is cheaper here than in the paper's ns model."),
    (FAIL, "median drop 0 % at 3 %", ""),  # no reason given: the report says "not yet explained."
    (NOT_RUN, "", ""),
    (PASS, "`code` and **bold**", ""),
]


@pytest.fixture
def report_md(tmp_path):
    claims = tuple(claim(f"X-{i}", why) for i, (_, _, why) in enumerate(RESULTS))
    paper = Paper("made-up", "A made-up paper, 2026", (), claims, notes=("a note",))
    report = Report(paper, tmp_path, runs=100, figures=[], wall_s=12.0)
    report.results = [ClaimResult(c, status, measured) for c, (status, measured, _) in zip(claims, RESULTS, strict=True)]
    write_report(report)
    return (tmp_path / "report.md").read_text()


def test_the_script_reads_what_reproduce_writes(report_md):
    claims = claims_tables.parse_report(report_md)
    assert claims.title.startswith("A made-up paper, 2026: reproduced by hfcsim ")
    assert "Claims: 2 PASS, 2 FAIL, 1 NOT-RUN." in claims.runs
    assert claims.stack.startswith("TCP stack: ")
    assert [r["claim"] for r in claims.rows] == [f"X-{i}" for i in range(len(RESULTS))]
    for row, (status, measured, _) in zip(claims.rows, RESULTS, strict=True):
        assert row["result"] == f"**{status}**"
        assert row["measured"] == (measured.replace("|", "/") or "-")
        assert row["the paper"].startswith("what X-") and row["check"].startswith("the check of X-")
    assert claims.why == {"X-1": RESULTS[1][2], "X-2": "not yet explained."}


def test_the_table_renders_and_reads_back(report_md):
    claims = claims_tables.parse_report(report_md)
    claims.provenance = claims_tables.provenance("0.1.0", "abc1234", __import__("datetime").date(2026, 1, 2))
    text = claims_tables.render(claims)
    again = claims_tables.parse_table(text)
    assert (again.rows, again.why, again.runs, again.stack, again.provenance) == \
        (claims.rows, claims.why, claims.runs, claims.stack, claims.provenance)
    assert claims_tables.render(again) == text


@pytest.mark.parametrize("bad", ["", "no title\n", "# title\n\nruns\n"])
def test_the_script_refuses_what_is_not_a_report(bad):
    with pytest.raises(ValueError):
        claims_tables.parse_report(bad)


@pytest.mark.parametrize("key", PAPERS)
def test_each_committed_table_is_the_scripts_output_for_its_papers_claims(key):
    text = (claims_tables.CLAIMS_DIR / f"{key}.md").read_text()
    table = claims_tables.parse_table(text)
    assert claims_tables.render(table) == text  # written by the script, not edited by hand
    paper = papers()[key]()
    assert [r["claim"] for r in table.rows] == [c.id for c in paper.claims]  # every claim, in order
    statuses = [r["result"] for r in table.rows]
    assert set(statuses) <= {f"**{s}**" for s in (PASS, FAIL, NOT_RUN)}
    fails = [r["claim"] for r in table.rows if r["result"] == f"**{FAIL}**"]
    assert list(table.why) == fails  # every FAIL with its reason
    assert table.provenance.startswith("From `hfcsim reproduce` of hfcsim ") and " commit `" in table.provenance
    # The paper's page includes it.
    assert f'--8<-- "papers/claims/{key}.md"' in (ROOT / "docs" / "papers" / f"{key}.md").read_text()
