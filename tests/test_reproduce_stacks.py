"""``hfcsim reproduce PAPER --stack NAME | --stacks all``: every recipe names its TCP stack, another stack
runs the same recipes in a folder of its own, and report-stacks.md has one row per claim and one column
per stack of ``hfcsim.stacks.STACKS`` (never a hard-coded list)."""

from __future__ import annotations

import importlib

import pytest

from hfcsim import reproduce, stacks
from hfcsim.cli import main
from hfcsim.papers import papers
from hfcsim.scenario import resolve

PAPERS = sorted(papers())
OTHER = next(s for s in stacks.STACKS if s != stacks.DEFAULT_STACK)


def _scenarios(paper: reproduce.Paper, with_runs: bool = False):
    """(figure id, scenario) for every sweep base and traced scenario of the paper's recipes; with_runs:
    also those of a recipe that runs its own (its module's ``scenarios()``; they take the run's stack
    as an argument, ``reproduce.OnStack``)."""
    for fig in paper.figures:
        if fig.sweep is not None:
            yield fig.id, fig.sweep.get("base", {})
        for sc in (fig.traces or {}).values():
            yield fig.id, sc
        if with_runs and fig.run is not None:
            for sc in importlib.import_module(f"hfcsim.papers.{paper.key.replace('-', '_')}").scenarios():
                yield fig.id, sc


@pytest.mark.parametrize("key", PAPERS)
def test_every_recipe_names_the_papers_stack(key):
    module = importlib.import_module(f"hfcsim.papers.{key.replace('-', '_')}")
    paper = papers()[key]()
    assert module.STACK in stacks.STACKS and paper.stack == module.STACK
    found = list(_scenarios(paper, with_runs=True))
    assert found
    for fid, sc in found:
        assert sc.get("tcp", {}).get("stack") == module.STACK, f"{key} figure {fid}"


@pytest.mark.parametrize("key", PAPERS)
def test_another_stack_replaces_only_tcp_stack(key):
    paper = papers()[key]()
    other = paper.with_stack(OTHER)
    assert other.stack == OTHER
    for (fid, before), (_, after) in zip(_scenarios(paper), _scenarios(other), strict=True):
        assert after["tcp"]["stack"] == OTHER
        assert {**after, "tcp": {**after["tcp"], "stack": paper.stack}} == before, fid
    # The paper's own recipes are left as they were.
    assert all(sc["tcp"]["stack"] == paper.stack for _, sc in _scenarios(paper))


@pytest.mark.parametrize(("scenario", "key", "expected"), [
    # A preset's keys win over the stack's rules: modified TCP keeps its 200 ms tick and dupACK 1.
    ({"preset": "modified-tcp"}, "tick_s", 0.2),
    ({"preset": "modified-tcp"}, "dupack_threshold", 1),
    # A key the scenario sets itself wins too.
    ({"tcp": {"header_prediction": False}}, "header_prediction", False),
])
def test_explicit_and_preset_keys_win_over_the_run_stack(scenario, key, expected):
    for stack in stacks.STACKS:
        tcp = resolve(reproduce.with_stack(scenario, stack))["tcp"]
        assert tcp["stack"] == stack and tcp[key] == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("all", list(stacks.STACKS)),
    (stacks.DEFAULT_STACK, [stacks.DEFAULT_STACK]),
    (f"{OTHER}, {stacks.DEFAULT_STACK},{OTHER}", [OTHER, stacks.DEFAULT_STACK]),
])
def test_parse_stacks(text, expected):
    assert reproduce.parse_stacks(text) == expected


@pytest.mark.parametrize(("argv", "fragment"), [
    (["reproduce", "cohen98", "--stack", "nosuchstack"], "--stack nosuchstack"),
    (["reproduce", "lakshman97", "--stacks", f"{OTHER},nosuchstack"], "--stacks nosuchstack"),
    (["reproduce", "cohen98", "--stacks", ","], "--stacks"),
    (["reproduce", "cohen98", "--stack", OTHER, "--stacks", "all"], "not allowed with"),
])
def test_bad_stack_arguments_exit_2_with_one_line(capsys, tmp_path, argv, fragment):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())  # nothing ran


def test_stack_runs_in_a_folder_of_its_own(capsys, tmp_path):
    argv = ["reproduce", "lakshman97", "--figure", "tahoe-reno", "--stack", OTHER, "--out", str(tmp_path)]
    assert main(argv) == 0
    assert f"TCP stack: {OTHER}" in capsys.readouterr().out
    md = (tmp_path / "stacks" / OTHER / "report.md").read_text()
    assert f"TCP stack: `{OTHER}`" in md and "instead of" in md
    assert not (tmp_path / "report.md").exists()


# Small selections: cohen98's bufrule (2 points of one 3 MB transfer, and C-sfr-example, which needs no
# figure) and lakshman97's three traced Tahoe/Reno/NewReno transfers.
@pytest.mark.parametrize(("key", "figure"), [("cohen98", "bufrule"), ("lakshman97", "tahoe-reno")])
def test_stacks_table_has_a_row_per_claim_and_a_column_per_stack(capsys, tmp_path, key, figure):
    argv = ["reproduce", key, "--quick", "--runs", "1", "--figure", figure, "--stacks", "all", "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    paper = papers()[key]()
    md = (tmp_path / "report-stacks.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| claim |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert [c.split(" ")[0] for c in columns[2:-1]] == list(stacks.STACKS)
    assert columns[-1] == "why it differs"
    rows = [line for line in md.splitlines() if line.startswith(("| C-", "| L-"))]
    assert [r.split("|")[1].strip() for r in rows] == [c.id for c in paper.claims]
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert len(cells) == len(columns)
        assert cells[-1]  # the same result everywhere, an explanation, or "not examined"
    for stack in stacks.STACKS:
        assert f"TCP stack: `{stack}`" in (tmp_path / "stacks" / stack / "report.md").read_text()
        assert stack in out
    html = (tmp_path / "report-stacks.html").read_text()
    assert html.count("<table>") == html.count("</table>") >= 1


@pytest.mark.parametrize("key", PAPERS)
def test_stack_notes_name_real_claims_and_stacks(key):
    paper = papers()[key]()
    ids = {c.id for c in paper.claims}
    for claim_id, notes in paper.stack_notes.items():
        assert claim_id in ids
        assert set(notes) <= set(stacks.STACKS) - {paper.stack} and all(notes.values())


def test_a_recipe_that_runs_its_own_scenario_is_given_the_stack(monkeypatch):
    """The stack reaches a recipe function that runs scenarios of its own as an argument (an OnStack, bound
    by Paper.on_stack as the runner does), not through a hidden channel: cohen98's C-sfr-example runs its
    two scenarios under the paper's stack, or under another one's."""
    import types

    simulate_module = importlib.import_module("hfcsim.simulate")  # hfcsim.simulate is the function
    seen = []

    def fake_simulate(sc, seed=1, trace=False):
        seen.append(sc["tcp"]["stack"])
        return types.SimpleNamespace(flows=[{"timeouts": 1, "fast_retransmits": 0}])

    monkeypatch.setattr(simulate_module, "simulate", fake_simulate)
    paper = papers()["cohen98"]()

    def sfr(p):
        return next(c for c in p.claims if c.id == "C-sfr-example")

    sfr(paper).evaluate({})  # unbound (outside a reproduction): the scenarios as written
    assert seen == [paper.stack] * 2
    for stack in (paper.stack, OTHER):
        seen.clear()
        sfr((paper if stack == paper.stack else paper.with_stack(stack)).on_stack()).evaluate({})
        assert seen == [stack] * 2


@pytest.mark.parametrize("key", PAPERS)
def test_on_stack_binds_every_recipe_that_runs_its_own_scenarios(key):
    paper = papers()[key]()

    def own(p):
        funcs = [f for fig in p.figures for f in (fig.run, fig.table, fig.draw)] + [c.evaluate for c in p.claims]
        return [f for f in funcs if isinstance(f, reproduce.OnStack)]

    assert all(f.stack is None for f in own(paper))
    bound = paper.with_stack(OTHER).on_stack()
    assert len(own(bound)) == len(own(paper)) and all(f.stack == OTHER for f in own(bound))
    # The papers whose recipes run scenarios themselves (the rest only sweep and trace).
    assert bool(own(paper)) == (key in ("cohen98", "lld", "nguyen04", "busy-hour"))
