"""Shared fixtures."""

from __future__ import annotations

import json
import os
import signal
import sys
import types
from pathlib import Path

import pytest
from hypothesis import settings

import hfcsim

# Property tests draw the same examples on every run and machine (no flaky CI); no example database.
settings.register_profile("hfcsim", derandomize=True, database=None)
# The fuzz suite before a release (tests/test_fuzz.py): `pytest tests/test_fuzz.py --hypothesis-profile=long`.
settings.register_profile("long", max_examples=10_000, database=None)
settings.load_profile("hfcsim")

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

# The Ctrl-C tests (test_output.py) send SIGINT to the hfcsim processes they start. A suite started in
# the background of a non-interactive shell (`nohup ... &`) inherits SIGINT ignored, and an ignored
# signal stays ignored across exec, so those processes would never see it and exit 0. Handled here
# (not ignored), SIGINT is back to its default in every child, however the suite was started.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def fake_engine(monkeypatch):
    """Replace ``hfcsim._core`` by a stand-in whose ``run`` raises ``raises`` or returns ``returns``,
    keeping every document it is handed (parsed) in its ``documents`` list.

    Only for testing how the Python side maps the engine's answers and what it hands the engine;
    every test of results uses the real engine.
    """

    def install(raises: BaseException | None = None, returns: object = None) -> types.ModuleType:
        documents: list[dict] = []

        def run(scenario_json: str, seed: int, trace: bool = False, columns: bool = False) -> str:
            # The JSON answer with "flows" as a list, whether or not the caller asked for columns:
            # simulate reads either (hfcsim.simulate._parse_output).
            documents.append(json.loads(scenario_json))
            if raises is not None:
                raise raises
            return returns if isinstance(returns, str) else json.dumps(returns)

        fake = types.ModuleType("hfcsim._core")
        fake.run = run
        fake.documents = documents
        fake.version = lambda: "fake"
        monkeypatch.setitem(sys.modules, "hfcsim._core", fake)
        monkeypatch.setattr(hfcsim, "_core", fake, raising=False)
        return fake

    return install


@pytest.fixture
def subprocess_env():
    """Environment for ``python -m hfcsim`` that finds this very hfcsim package, installed or not."""
    env = dict(os.environ)
    package_parent = str(Path(hfcsim.__file__).absolute().parent.parent)  # where hfcsim was imported from
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    return env


@pytest.fixture
def hfcsim_cli(capsys):
    """Run ``hfcsim <argv>`` in-process through ``cli.main``; return (exit status, stdout, stderr)."""
    from hfcsim.cli import main

    def run(argv):
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return run


@pytest.fixture
def one_line_error():
    """``check(raw, fragments)``: resolving the raw scenario ``raw`` raises a one-line ScenarioError that
    contains every fragment; returns the message."""
    from hfcsim.errors import ScenarioError
    from hfcsim.scenario import resolve

    def check(raw, fragments):
        with pytest.raises(ScenarioError) as info:
            resolve(raw)
        message = str(info.value)
        assert "\n" not in message
        for fragment in fragments:
            assert fragment in message
        return message

    return check


def _assert_every_claim_run_and_explained(report, md: str, claim_ids) -> None:
    from hfcsim import reproduce

    assert [r.claim.id for r in report.results] == list(claim_ids)
    for r in report.results:
        assert f"| {r.claim.id} |" in md
        assert r.status in (reproduce.PASS, reproduce.FAIL) and r.measured
        if r.status == reproduce.FAIL:
            assert r.claim.why, f"{r.claim.id} fails without an explanation"


@pytest.fixture
def every_claim_run_and_explained():
    """A check of a reproduction's report: every claim, in order, in the Markdown, run (PASS or FAIL
    with a measurement), and every FAIL explained."""
    return _assert_every_claim_run_and_explained


def _assert_titles_state_the_runs(report, out) -> None:
    # Issue 12, defect G: a --quick reproduction's figures and report say the runs it made (4 seeds per
    # point, or fewer where a figure caps them; one seed per traced run), never the full recipe's count.
    import re
    import xml.etree.ElementTree as ET

    from hfcsim import reproduce

    md = (out / "report.md").read_text()
    for fid in report.figures:
        fig = report.paper.figure(fid)
        source = report.paper.figure(fig.uses) if fig.uses else fig
        caption = report.captions[fid]
        runs = reproduce.figure_runs(source, report.runs) if source.sweep is not None else 1
        assert re.findall(r"(\d+) runs?\b", caption) == [str(runs)] or (source.sweep is None and "seed" in caption), \
            caption
        assert f"Fig. {fid}. {caption}" in md or f"Experiment {fid}: {caption}" in md
        if not fig.is_experiment:
            svg = " ".join(" ".join(ET.parse(out / "figures" / f"fig{fid}.svg").getroot().itertext()).split())
            assert " ".join(caption.split()[:3]) in svg and (f"{runs} run" in svg or "seed" in svg), svg


@pytest.fixture
def titles_state_the_runs():
    """A check of a reproduction: every figure's caption, its report heading and its SVG title state
    the runs the data holds."""
    return _assert_titles_state_the_runs


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory):
    """The docs site built from this checkout, as CI builds it: ``mkdocs build --strict`` (a warning, a
    broken link or anchor, or a missing generated entry fails it) into a folder of the session's own.
    Needs the docs extra (mkdocs, mkdocs-material), which the test extra includes."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    site = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=root,
                       env=env, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, f"mkdocs build --strict failed:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}"
    return site
