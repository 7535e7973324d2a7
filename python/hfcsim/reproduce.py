"""Paper reproductions: figures as recipes, claims as checks, one report (docs/design.md, principle 6).

A paper (``hfcsim.papers.<key>``) is a list of :class:`Figure` recipes and :class:`Claim` checks. A
figure recipe is a sweep (base scenario x grid; the runner supplies the seeds), or a few traced runs,
and a function that draws it; a claim is a function of the figures' rows that returns PASS or FAIL with
the measured figure beside the paper's. Nothing about a paper lives in the engine.

``reproduce(paper, ...)`` runs the selected figures through :func:`hfcsim.sweep` (so a killed
reproduction resumes, and results are stored as Parquet under ``OUT/runs/``), writes each figure as PNG
and SVG under ``OUT/figures/`` and its data as CSV under ``OUT/data/``, evaluates every claim (NOT-RUN
when a figure it needs was not selected) and writes ``OUT/report.md`` and ``OUT/report.html``.

TCP stacks (``hfcsim.stacks``): every paper names the stack its recipes run (``Paper.stack``, from the
module's ``STACK``), and every scenario of its recipes sets ``tcp.stack`` explicitly. ``reproduce(...,
stack=NAME)`` runs the same recipes with ``tcp.stack = NAME`` instead (a scenario's other explicit keys,
and its preset's, still win over the stack's rules) and writes everything under ``OUT/stacks/NAME/``, so
that no two stacks share stored sweeps. :func:`reproduce_stacks` runs several stacks that way and writes
``OUT/report-stacks.md`` (and ``.html``): one row per claim, one column per stack. A recipe function that
runs scenarios of its own (a claim that runs one, a table of ping series) is an :class:`OnStack`: the
runner passes it the stack as an argument (:meth:`Paper.on_stack`).

The registry of papers is :mod:`hfcsim.papers`; the papers import this module, and this module imports
no paper.
"""

from __future__ import annotations

import copy
import dataclasses
import html
import math
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hfcsim import stacks
from hfcsim.errors import ScenarioError
from hfcsim.store import atomic_path, output_folder, prepare_dir

if TYPE_CHECKING:
    import pandas as pd

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "NOT-RUN"
QUICK_RUNS = 4


@dataclass(frozen=True)
class Figure:
    """One figure of a paper, or a data-only experiment when ``draw`` is None.

    sweep: a sweep dict (``name``, ``base``, ``grid``, ``zip``; the runner sets ``runs`` and ``seed0``),
    or None for a trace figure. traces: for a trace figure, label -> scenario dict, each run once with
    ``trace_seed`` and its per-packet trace kept. uses: the id of another figure whose rows this one
    draws (no runs of its own). xlabel/ylabel: the paper's axis labels (the tests look for them).
    max_runs: at most this many seeds per point, whatever --runs says. quick_grid: with --quick, these
    grid axes (dotted key -> values) replace the sweep's, for a smaller grid. table: the rows -> the
    DataFrame written as the figure's CSV (default: the sweep's summary, or every trace row). run: for a
    recipe that runs its own scenarios (neither a sweep nor traces), ``run(quick, seeds)`` returns its rows,
    a DataFrame with a ``seed`` column; ``seeds`` is :func:`figure_runs`'s count. height: of the drawing, inches.
    A ``run``, ``table`` or ``draw`` that runs scenarios of its own is an :class:`OnStack`.
    """

    id: str
    caption: str
    xlabel: str = ""
    ylabel: str = ""
    sweep: Mapping[str, Any] | None = None
    traces: Mapping[str, Mapping[str, Any]] | None = None
    trace_seed: int = 1
    uses: str | None = None
    draw: Callable[[Any, Any], None] | None = None
    panels: int = 1
    max_runs: int | None = None
    quick_grid: Mapping[str, Sequence[Any]] | None = None
    table: Callable[[Any], Any] | None = None
    run: Callable[[bool, int], Any] | None = None
    height: float = 3.8  # inches

    @property
    def is_experiment(self) -> bool:
        return self.draw is None

    def with_stack(self, stack: str) -> Figure:
        """The same recipe with ``tcp.stack = stack`` in its sweep's base and in every traced scenario."""
        sweep = None if self.sweep is None else {**self.sweep, "base": with_stack(self.sweep.get("base", {}), stack)}
        traces = None if self.traces is None else {k: with_stack(sc, stack) for k, sc in self.traces.items()}
        return dataclasses.replace(self, sweep=sweep, traces=traces)


@dataclass(frozen=True)
class Outcome:
    status: str  # PASS or FAIL
    measured: str


@dataclass(frozen=True)
class Claim:
    """One claim a paper states (its module's ``CLAIMS``): what the paper says, the check, and how to evaluate it.

    evaluate(data) gets figure id -> rows (a DataFrame, or label -> trace DataFrame for trace figures)
    for every figure in ``figures`` and returns an Outcome (an :class:`OnStack` when it runs a scenario
    itself). why: shown beside a FAIL: what we believe differs from the paper's model.
    """

    id: str
    figures: tuple[str, ...]
    paper: str
    check: str
    evaluate: Callable[[Mapping[str, Any]], Outcome]
    why: str = ""


@dataclass(frozen=True)
class Paper:
    """A paper's recipes. stack: the TCP stack they run (every recipe scenario sets it as ``tcp.stack``).
    stack_notes: claim id -> stack -> why the claim's result under that stack differs from (or agrees
    with) the recipes' stack, written only where it was checked (``report-stacks.md`` says "not
    examined" for a differing result without one)."""

    key: str
    title: str
    figures: tuple[Figure, ...]
    claims: tuple[Claim, ...]
    notes: tuple[str, ...] = ()
    stack: str = stacks.DEFAULT_STACK
    stack_notes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: ``emulation(side, quick, plan, log)``: the figures that can be emulated, as a Paper whose recipes run
    #: their points simulated (side "simulated") or with the kernel's TCP ("emulated"; hfcsim.emulate);
    #: ``plan`` None for the paper's own points. None: ``--emulate`` is refused.
    emulation: Callable[..., Paper] | None = None

    def with_stack(self, stack: str) -> Paper:
        """The same paper with every recipe run under ``tcp.stack = stack``."""
        return dataclasses.replace(self, figures=tuple(f.with_stack(stack) for f in self.figures), stack=stack)

    def on_stack(self) -> Paper:
        """The same paper with its stack given to every recipe function that runs scenarios of its own
        (:class:`OnStack`): what the runner runs."""
        figures = tuple(dataclasses.replace(f, run=_bind(f.run, self.stack), table=_bind(f.table, self.stack),
                                            draw=_bind(f.draw, self.stack)) for f in self.figures)
        claims = tuple(dataclasses.replace(c, evaluate=_bind(c.evaluate, self.stack)) for c in self.claims)
        return dataclasses.replace(self, figures=figures, claims=claims)

    def figure(self, fid: str) -> Figure:
        for f in self.figures:
            if f.id == fid:
                return f
        known = ", ".join(f.id for f in self.figures)
        raise ScenarioError(f"--figure {fid}: {self.key} has no such figure (known: {known})")


@dataclass
class ClaimResult:
    claim: Claim
    status: str
    measured: str = ""


@dataclass
class Report:
    paper: Paper
    out: Path
    runs: int
    figures: list[str]
    results: list[ClaimResult] = field(default_factory=list)
    wall_s: float = 0.0
    quick: bool = False
    stack: str = stacks.DEFAULT_STACK
    recipe_stack: str = stacks.DEFAULT_STACK
    #: figure id -> (timeouts, fast retransmits) per transfer, over all of the figure's runs.
    recovery: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: figure id -> its caption, stating the runs it actually used (caption_with_runs).
    captions: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.results) for s in (PASS, FAIL, NOT_RUN)}


# ---------------------------------------------------------------------------------------------------
# Stacks

def check_stack(stack: str, option: str = "--stack") -> str:
    if stack not in stacks.STACKS:
        raise ScenarioError(f"{option} {stack}: unknown TCP stack (known: {', '.join(stacks.STACKS)})")
    return stack


def with_stack(scenario: Mapping[str, Any], stack: str) -> dict[str, Any]:
    """A copy of ``scenario`` with ``tcp.stack = stack``; its other keys (and its preset) are kept, and
    win over the stack's rules as any explicit key does."""
    sc = copy.deepcopy(dict(scenario))
    sc["tcp"] = {**sc.get("tcp", {}), "stack": stack}
    return sc


def under_stack(scenario: Mapping[str, Any], stack: str | None) -> Mapping[str, Any]:
    """``scenario`` under ``stack`` (:func:`with_stack`), unchanged for None: what a recipe that runs its own
    scenarios (an :class:`OnStack` function) does with the stack it is given."""
    return scenario if stack is None else with_stack(scenario, stack)


@dataclass(frozen=True)
class OnStack:
    """A recipe function that runs scenarios of its own rather than through the runner's sweeps and traces
    (a claim that runs one, a figure's ``run``, a table or drawing that runs ping series), marked so that
    the runner gives it the reproduction's TCP stack: it is called with its arguments and the keyword
    ``stack``, and runs each scenario under that stack (:func:`under_stack`). :meth:`Paper.on_stack` binds
    the stack (the paper's own, or ``--stack``'s); unbound, ``stack`` is None and the scenarios run as
    written (each names its paper's stack)."""

    fn: Callable[..., Any]
    stack: str | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, stack=self.stack, **kwargs)


def _bind(f: Any, stack: str) -> Any:
    return dataclasses.replace(f, stack=stack) if isinstance(f, OnStack) else f


def stack_out(out: str | Path, stack: str) -> Path:
    """Where a reproduction under ``stack`` (asked for by name) writes: ``OUT/stacks/STACK``."""
    return Path(out) / "stacks" / stack


def default_out(paper: Paper) -> Path:
    return Path("hfcsim-results") / "reproduce" / paper.key


# ---------------------------------------------------------------------------------------------------
# Running


def _selected(paper: Paper, figure_ids: Sequence[str] | None) -> list[Figure]:
    if not figure_ids:
        return list(paper.figures)
    wanted = {paper.figure(str(f)).id for f in figure_ids}
    # A figure drawn from another's rows needs that one run too.
    wanted |= {paper.figure(fid).uses for fid in list(wanted) if paper.figure(fid).uses}
    return [f for f in paper.figures if f.id in wanted]


def figure_runs(fig: Figure, runs: int) -> int:
    """Seeds per point that ``fig`` runs when ``runs`` are asked for (its ``max_runs`` caps them)."""
    return min(runs, fig.max_runs or runs)


def figure_sweep(fig: Figure, runs: int, quick: bool = False) -> dict[str, Any]:
    """The sweep dict the runner gives :func:`hfcsim.sweep` for ``fig`` (its quick grid with --quick)."""
    spec = {**fig.sweep, "runs": figure_runs(fig, runs), "seed0": 1}
    if quick and fig.quick_grid:
        spec["grid"] = {**spec.get("grid", {}), **fig.quick_grid}
    return spec


def _run_figure(fig: Figure, runs: int, out: Path, jobs: int | None, progress: bool | None,
                quick: bool = False) -> Any:
    from hfcsim.simulate import simulate
    from hfcsim.sweep import sweep

    if fig.traces is not None:
        return {label: simulate(sc, seed=fig.trace_seed, trace=True).trace for label, sc in fig.traces.items()}
    if fig.run is not None:
        return fig.run(quick, figure_runs(fig, runs))
    return sweep(figure_sweep(fig, runs, quick), jobs=jobs, out=out / "runs" / f"fig{fig.id}", progress=progress)


def reproduce(paper: Paper, figures: Sequence[str] | None = None, runs: int | None = None,
              quick: bool = False, out: str | Path | None = None, jobs: int | None = None,
              progress: bool | None = None, log: Callable[[str], None] | None = None,
              stack: str | None = None) -> Report:
    """Run a paper's figures, draw them, check its claims and write the report; return the Report.

    stack: run the recipes with ``tcp.stack = stack`` instead of the paper's own, writing under
    ``OUT/stacks/STACK`` (None: the paper's stack, writing under OUT)."""
    from hfcsim.sweep import MAX_RUNS

    from hfcsim.scenario import _got, native

    runs = native(runs)
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or not 1 <= runs <= MAX_RUNS):
        raise ScenarioError(f"--runs {runs}: must be >= 1, <= {MAX_RUNS} (seeds per point){_got(int, runs)}")
    runs = runs or (QUICK_RUNS if quick else 100)
    out = output_folder("out", out) if out is not None else default_out(paper)
    recipe_stack = paper.stack
    if stack is not None:
        paper = paper.with_stack(check_stack(stack))
        out = stack_out(out, stack)
    return _reproduce(paper, figures, runs, quick, out, jobs, progress, log, recipe_stack)


def _reproduce(paper: Paper, figures: Sequence[str] | None, runs: int, quick: bool, out: Path, jobs: int | None,
               progress: bool | None, log: Callable[[str], None] | None, recipe_stack: str) -> Report:
    say = log or (lambda text: None)
    start = time.perf_counter()
    paper = paper.on_stack()  # the recipes that run their own scenarios run them under paper.stack
    selected = _selected(paper, figures)
    prepare_dir(out)  # a folder that cannot be written fails now, not after the runs
    data: dict[str, Any] = {}
    for fig in selected:
        if fig.uses is None:
            t0 = time.perf_counter()
            data[fig.id] = _run_figure(fig, runs, out, jobs, progress, quick)
            say(f"figure {fig.id}: {time.perf_counter() - t0:.1f} s")
    captions = {}
    for fig in selected:
        if fig.uses is not None:
            data[fig.id] = data[fig.uses]
        captions[fig.id] = caption_with_runs(fig, data[fig.id])
        _write_data(fig, data[fig.id], out)
        if not fig.is_experiment:
            _draw(fig, data[fig.id], out, captions[fig.id])
    report = Report(paper, out, runs, [f.id for f in selected], quick=quick, stack=paper.stack,
                    recipe_stack=recipe_stack,
                    recovery={f.id: r for f in selected if f.uses is None for r in [_recovery(data[f.id])] if r},
                    captions=captions)
    for claim in paper.claims:
        if all(f in data for f in claim.figures):
            outcome = claim.evaluate(data)
            report.results.append(ClaimResult(claim, outcome.status, outcome.measured))
        else:
            report.results.append(ClaimResult(claim, NOT_RUN))
    report.wall_s = time.perf_counter() - start
    write_report(report)
    return report


def _recovery(rows: Any) -> tuple[float, float] | None:
    """(timeouts, fast retransmits) per transfer: per flow row of a sweep, per traced run."""
    if isinstance(rows, Mapping):  # traces
        counts = [((t.event == "timeout").sum(), (t.event == "fast_retransmit").sum())
                  for t in rows.values() if "event" in t.columns]
        if not counts:
            return None
        return (float(sum(c[0] for c in counts)) / len(counts), float(sum(c[1] for c in counts)) / len(counts))
    if not {"timeouts", "fast_retransmits"} <= set(rows.columns) or not len(rows):
        return None
    return float(rows["timeouts"].mean()), float(rows["fast_retransmits"].mean())


# ---------------------------------------------------------------------------------------------------
# Several stacks


@dataclass
class StacksReport:
    paper: Paper
    out: Path
    reports: dict[str, Report]
    wall_s: float = 0.0


def parse_stacks(text: str) -> list[str]:
    """``all`` (every stack of ``hfcsim.stacks.STACKS``) or a comma list of stack names, checked."""
    names = list(stacks.STACKS) if text.strip() == "all" else [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ScenarioError(f"--stacks {text!r}: name at least one stack, or all")
    if "all" in names:  # issue 26, defect 7: "all,linux" was refused as "--stacks all: unknown TCP stack"
        raise ScenarioError(f"--stacks {text}: all stands alone (every stack); or list stacks by name "
                            f"(known: {', '.join(stacks.STACKS)})")
    for name in names:
        check_stack(name, "--stacks")
    return list(dict.fromkeys(names))


def reproduce_stacks(paper: Paper, stack_names: Sequence[str], figures: Sequence[str] | None = None,
                     runs: int | None = None, quick: bool = False, out: str | Path | None = None,
                     jobs: int | None = None, progress: bool | None = None,
                     log: Callable[[str], None] | None = None) -> StacksReport:
    """Reproduce ``paper`` once per stack (each under ``OUT/stacks/STACK``) and write
    ``OUT/report-stacks.md`` and ``.html``: one row per claim, one column per stack."""
    names = [check_stack(s, "--stacks") for s in stack_names]
    out = output_folder("out", out) if out is not None else default_out(paper)
    prepare_dir(out)
    say = log or (lambda text: None)
    start = time.perf_counter()
    reports: dict[str, Report] = {}
    for name in names:
        say(f"stack {name}")
        reports[name] = reproduce(paper, figures, runs, quick, out, jobs, progress, log, stack=name)
    result = StacksReport(paper, out, reports, time.perf_counter() - start)
    write_stacks_report(result)
    return result


def _rule_rows(names: Sequence[str]) -> list[str]:
    """A table of the rules each stack sets where the stacks differ, as schema.toml gives them: a value
    in seconds shown in ticks, a value by tcp.variant after the stack's own."""
    def cell(stack: str, section: str, name: str) -> str:
        value = stacks.STACKS[stack].get(section, {}).get(name)
        if value is None:
            return "-"
        text = (f"`{value}`" if not isinstance(value, dict) else "computed: " + ", ".join(
            f"`{stacks.rule(stack, section, name, {'tick_s': t})}` at tcp.tick_s = {t:g}" for t in (0.5, 0.2)))
        return text + "".join(f" ({variant}: `{when[section][name]}`)" for variant, when in stacks.WHEN[stack].items()
                              if name in when.get(section, {}))

    keys = list(dict.fromkeys((section, key) for n in names for section, rules in stacks.STACKS[n].items()
                              for key in rules))
    lines = ["| rule | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for section, name in keys:
        cells = [cell(n, section, name) for n in names]
        if len(set(cells)) > 1:  # the same rule everywhere is not a difference
            lines.append(f"| {section}.{name} | " + " | ".join(cells) + " |")
    return lines


def claims_by_column(claims: Sequence[Claim], reports: Mapping[str, Report], head: Sequence[str], reference: str,
                     notes: Mapping[str, Mapping[str, str]], same: str, quote: bool = False) -> list[str]:
    """The claims table of several reproductions of one paper's claims (``reports``: column name ->
    Report, in order; ``head``: their column titles): per claim, each column's result and measured
    figure, and why it differs from the ``reference`` column where ``notes`` (claim id -> column ->
    text) says ("not examined" otherwise; ``same`` where no column differs). ``quote``: names in
    backquotes."""
    names = list(reports)
    q = (lambda n: f"`{n}`") if quote else (lambda n: n)
    md = ["| claim | the paper | " + " | ".join(head) + " | why it differs |",
          "| --- | --- |" + " --- |" * len(names) + " --- |"]
    for i, claim in enumerate(claims):
        status = {n: reports[n].results[i] for n in names}
        cells = [claim.id, claim.paper]
        cells += [f"**{r.status}** {r.measured}".strip() for r in status.values()]
        said = notes.get(claim.id, {})
        differ = [n for n in names if status[n].status != status[reference].status]
        why = [] if differ else [same]
        why += [f"{q(n)}: {said.get(n, 'not examined')}" for n in differ]
        why += [f"{q(n)}: {said[n]}" for n in names if n not in differ and n in said]
        cells.append(" ".join(why))
        md.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return md


def recovery_by_column(reports: Mapping[str, Report], head: Sequence[str]) -> list[str]:
    """Timeouts / fast retransmits per transfer, per figure (rows) and reproduction (columns)."""
    names = list(reports)
    first = reports[names[0]]
    md = ["| figure | " + " | ".join(head) + " |", "| --- |" + " --- |" * len(names)]

    def num(x: float) -> str:
        return "-" if math.isnan(x) else f"{x:.2f}"

    for fid in first.figures:
        if fid not in first.recovery:
            continue
        cells = []
        for n in names:
            rec = reports[n].recovery.get(fid)
            cells.append("-" if rec is None else f"{num(rec[0])} / {num(rec[1])}")
        md.append(f"| {fid} | " + " | ".join(cells) + " |")
    return md


def write_stacks_report(sr: StacksReport) -> None:
    from hfcsim import __version__

    paper, names = sr.paper, list(sr.reports)
    first = sr.reports[names[0]]
    head = [f"{n} (the recipes' stack)" if n == paper.stack else n for n in names]
    md = [
        f"# {paper.title}: claims per TCP stack (hfcsim {__version__})",
        "",
        f"Stacks {', '.join(f'`{n}`' for n in names)}; the paper's recipes name `{paper.stack}`. "
        + runs_used(first.runs, {fid: figure_runs(paper.figure(fid), first.runs) for fid in first.figures
                                 if paper.figure(fid).sweep is not None})
        + ("; --quick grids" if first.quick else "") + f"; figures {', '.join(first.figures)}; "
        f"{sr.wall_s:.0f} s of wall time ("
        + ", ".join(f"{n} {r.wall_s:.0f} s" for n, r in sr.reports.items()) + "). Each stack's own report: "
        + ", ".join(f"`stacks/{n}/report.md`" for n in names) + ".",
        "",
        "Each cell: the claim's result under that stack and the measured figure. A key a recipe sets itself "
        "(or its preset does) wins over the stack's rule for it (the paper's notes say which).",
        "",
        "## Claims",
        "",
        # Differences are told against the recipes' stack (or the first one run, without it).
        *claims_by_column(paper.claims, sr.reports, head, paper.stack if paper.stack in names else names[0],
                          paper.stack_notes, "Same result on every stack.", quote=True),
    ]
    md += ["", "## Loss recovery per figure", "",
           "Timeouts / fast retransmits per transfer (per flow of a sweep, per traced run), over all of the "
           "figure's runs.", "", *recovery_by_column(sr.reports, names)]
    md += ["", "## What each stack changes", "",
           *[f"- `{n}`: {stacks.DESCRIPTIONS.get(n, '')}" for n in names], "", *_rule_rows(names), ""]
    _write_text(sr.out / "report-stacks.md", "\n".join(md) + "\n")
    _write_text(sr.out / "report-stacks.html", _html(f"{paper.title}: claims per TCP stack", md))


# ---------------------------------------------------------------------------------------------------
# Emulated (issue 22): the paper's figures with the kernel's own TCP, beside the same points simulated

EMULATION_SIDES = ("simulated", "emulated")


@dataclass
class EmulatedReport:
    paper: Paper
    out: Path
    #: "simulated" and "emulated": each side's Report (its files under OUT/SIDE).
    reports: dict[str, Report]
    quick: bool = False
    wall_s: float = 0.0


def emulated_out(paper: Paper) -> Path:
    return Path("hfcsim-results") / "reproduce" / f"{paper.key}-emulate"


def check_emulation(paper: Paper, emulated: Sequence[str] = ()) -> None:
    """--emulate needs a paper with emulated figures, root and /dev/net/tun (one line, exit 2). ``emulated``:
    the papers that have emulated figures, named in the refusal (the registry's, :func:`hfcsim.papers.emulated`;
    this module imports no paper)."""
    if paper.emulation is None:
        only = f" (only {', '.join(emulated)})" if emulated else ""
        raise ScenarioError(f"--emulate: {paper.key} has no emulated figures{only}")
    from hfcsim import emulate

    emulate.check_host()


def reproduce_emulated(paper: Paper, figures: Sequence[str] | None = None, quick: bool = False,
                       out: str | Path | None = None, log: Callable[[str], None] | None = None,
                       plan: Any = None) -> EmulatedReport:
    """The paper's emulated figures (``paper.emulation``), each point simulated (OUT/simulated) and emulated
    (OUT/emulated), each side with its own figures, data and report; and ``OUT/report.md`` (and .html):
    one row per claim, a column per side. ``plan``: the paper's emulation plan (None: its own)."""
    check_emulation(paper)
    assert paper.emulation is not None
    out = output_folder("out", out) if out is not None else emulated_out(paper)
    prepare_dir(out)
    say = log or (lambda text: None)
    start = time.perf_counter()
    reports = {}
    for side in EMULATION_SIDES:
        variant = paper.emulation(side, quick, plan, say)
        say(f"{side}: figures {', '.join(f.id for f in _selected(variant, figures))}")
        reports[side] = _reproduce(variant, figures, 1, quick, out / side, None, None, log, paper.stack)
    er = EmulatedReport(paper, out, reports, quick, time.perf_counter() - start)
    write_emulated_report(er)
    return er


def write_emulated_report(er: EmulatedReport) -> None:
    from hfcsim import __version__

    paper = er.paper
    sim, emu = er.reports["simulated"], er.reports["emulated"]
    head = [f"simulated (`{sim.stack}`, the recipes' stack)", "emulated (the host's Linux TCP)"]
    checks = _self_checks_md(emu)
    md = [
        f"# {paper.title}: simulated and emulated (hfcsim {__version__})",
        "",
        f"Figures {', '.join(emu.figures)}{' (--quick)' if er.quick else ''}, one run per point; "
        f"{er.wall_s:.0f} s of wall time (simulated {sim.wall_s:.0f} s, emulated {emu.wall_s:.0f} s). Each "
        "side's own report, figures and data: `simulated/report.md`, `emulated/report.md`.",
        "",
        "Each cell: the claim's result on that side's runs and the measured figure; NOT-RUN where the claim "
        "needs a figure that is not emulated.",
        "",
        "## Claims",
        "",
        *claims_by_column(paper.claims, er.reports, head, "simulated",
                          {c: {"emulated": t} for c, t in EMULATED_NOTES.get(paper.key, {}).items()},
                          "Same result simulated and emulated."),
        "",
        "## Loss recovery per figure",
        "",
        "Timeouts / fast retransmits per transfer (the kernel's TCP_INFO counts no fast retransmits: -).",
        "",
        *recovery_by_column(er.reports, ["simulated", "emulated"]),
        "",
        "## The emulator's self-checks",
        "",
        *checks,
        "",
        "## How it is set up",
        "",
        *[f"- {n}" for n in emu.paper.notes],
        "",
        "## Figures (emulated, then simulated)",
        "",
    ]
    for fid in emu.figures:
        caption = emu.captions.get(fid, fid)
        md += [f"### Fig. {fid}. {caption}", "", f"![Fig. {fid} emulated](emulated/figures/fig{fid}.png)", "",
               f"![Fig. {fid} simulated](simulated/figures/fig{fid}.png)", "",
               f"Data: `emulated/data/fig{fid}.csv`, `simulated/data/fig{fid}.csv`.", ""]
    _write_text(er.out / "report.md", "\n".join(md) + "\n")
    _write_text(er.out / "report.html", _html(f"{paper.title}: simulated and emulated", md))


#: paper -> claim -> why the emulated result differs from the simulated one, where it was examined (the
#: full run of 2026-11-26, on a machine shared with other work).
EMULATED_NOTES: dict[str, dict[str, str]] = {
    "nguyen04": {
        "N-rtt-jump": "the emulated loaded RTTs were within 3 ms of the simulated ones at every MTU (128 / 132 / "
                      "143 / 142 ms against 128 / 134 / 142 / 144); the check's rise as the MTU falls missed by "
                      "0.7 ms between MTU 576 and 512, one run per point, while the emulated idle pings of those "
                      "runs spread over 8.7-16.7 ms (the host's timing: other work ran on the machine). "
                      "--quick passed.",
        "N-offered-load": "one echo of the 0.5 Mb/s cap's run below the cap (0.4 Mb/s at the server) took "
                          "147 ms against a mean of 10.3 ms over the transfer's 170 echoes, in the run with "
                          "the worst release lateness (p99 1.0 ms): the host, not the network (simulated "
                          "maximum 10.4 ms). At every other point the rate is within 0.3 % of the simulation's, "
                          "the loaded maximum 2-3 % below it and the maximum below the cap 1-4 ms above it. "
                          "--quick passed.",
    },
}


def _self_checks_md(report: Report) -> list[str]:
    """The emulated runs' self-checks (from each figure's CSV columns self_checks_ok, lateness_p99_us)."""
    import pandas as pd

    frames = []
    for fid in report.figures:
        path = report.out / "data" / f"fig{fid}.csv"
        if path.exists():
            d = pd.read_csv(path)
            if "self_checks_ok" in d.columns and fid not in ("3", "7"):  # 3 and 7 draw 4's and 6's runs
                frames.append(d)
    if not frames:
        return ["No emulated runs."]
    d = pd.concat(frames, ignore_index=True)
    ok = int(d["self_checks_ok"].astype(bool).sum())
    late = d["lateness_p99_us"].astype(float)
    return [f"{ok} of {len(d)} runs passed every self-check (packets balance, no TUN drops, the server's "
            f"segs_out against the packets read); release lateness p99 per run {late.min():.0f}-{late.max():.0f} us."]


# ---------------------------------------------------------------------------------------------------
# Data and figures

SUMMARY_METRICS = ("throughput_bps", "timeouts", "fast_retransmits", "duration_s", "first_ack_delay_s")


def _write_data(fig: Figure, rows: Any, out: Path) -> None:
    (out / "data").mkdir(parents=True, exist_ok=True)
    path = out / "data" / f"fig{fig.id}.csv"
    if fig.table is not None:
        _write_text(path, fig.table(rows).to_csv(index=False))
        return
    if isinstance(rows, Mapping):  # traces
        import pandas as pd

        frames = [t.assign(run=label) for label, t in rows.items()]
        _write_text(path, pd.concat(frames, ignore_index=True).to_csv(index=False))
        return
    from hfcsim.sweep import summarize

    metrics = [m for m in SUMMARY_METRICS if m in rows.columns]
    summary = summarize(rows, metric=metrics).drop(columns=["scenario_hash"], errors="ignore")
    _write_text(path, summary.to_csv(index=False))


def _write_text(path: Path, text: str) -> None:
    """``path`` written whole or not at all (``hfcsim.store.atomic_path``), as UTF-8."""
    with atomic_path(path) as temp:
        temp.write_text(text, encoding="utf-8")


def runs_in(rows: Any, fig: Figure) -> str | None:
    """The runs a figure's rows hold, in words: "4 runs" per grid point of a sweep (seeds per point,
    counted in the rows, so a capped or --quick figure says what it ran), "1 run (seed 1)" of each
    traced scenario; None for rows of another kind."""
    if isinstance(rows, Mapping):  # traces: each scenario run once with trace_seed
        return f"1 run (seed {fig.trace_seed})"
    columns = getattr(rows, "columns", ())
    if "seed" not in columns or not len(rows):
        return None
    per_point = rows.groupby("scenario_hash")["seed"].nunique() if "scenario_hash" in columns else None
    low, high = (int(per_point.min()), int(per_point.max())) if per_point is not None else (rows["seed"].nunique(),) * 2
    count = f"{low}" if low == high else f"{low}-{high}"
    return f"{count} run{'' if count == '1' else 's'}"


def caption_with_runs(fig: Figure, rows: Any) -> str:
    """The figure's caption stating the runs its rows hold: where it says ``{runs}`` ("over {runs}"),
    else after it ("(4 runs per point)", "(1 run (seed 1))" unless the caption names its seed)."""
    runs = runs_in(rows, fig)
    caption = fig.caption
    if "{runs}" in caption:
        return caption.replace("{runs}", runs or "the runs")
    if runs is None or (isinstance(rows, Mapping) and "seed" in caption):
        return caption
    return f"{caption} ({runs}{'' if isinstance(rows, Mapping) else ' per point'})"


def figure_title(fig: Figure, caption: str) -> str:
    return f"Fig. {fig.id}. {caption}" if fig.id[0].isdigit() else f"{caption} ({fig.id})"


def _draw(fig: Figure, rows: Any, out: Path, caption: str | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    (out / "figures").mkdir(parents=True, exist_ok=True)
    with plt.rc_context({"svg.fonttype": "none", "font.size": 9, "axes.grid": True, "grid.alpha": 0.3}):
        figure = plt.figure(figsize=(5.2 * fig.panels, fig.height), layout="constrained")
        fig.draw(rows, figure)
        title = figure_title(fig, caption or caption_with_runs(fig, rows))
        figure.suptitle(textwrap.fill(title, 75 * fig.panels), fontsize=9)
        try:
            for ext in ("png", "svg"):
                with atomic_path(out / "figures" / f"fig{fig.id}.{ext}") as temp:
                    figure.savefig(temp, format=ext, dpi=120)
        finally:
            plt.close(figure)


# ---------------------------------------------------------------------------------------------------
# Helpers for recipes and claims


def select(rows: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """Rows whose swept columns equal the given values; keys use "__" for "." (network__upstream_loss)."""
    mask = None
    for key, value in where.items():
        column = key.replace("__", ".")
        if column not in rows.columns:
            raise KeyError(f"no swept column {column!r}")
        m = rows[column] == value
        mask = m if mask is None else mask & m
    return rows if mask is None else rows[mask]


def mean(rows: pd.DataFrame, metric: str = "throughput_bps", **where: Any) -> float:
    values = select(rows, **where)[metric].dropna()
    return float(values.mean()) if len(values) else math.nan


def quantile(rows: pd.DataFrame, q: float, metric: str = "throughput_bps", **where: Any) -> float:
    values = select(rows, **where)[metric].dropna()
    return float(values.quantile(q)) if len(values) else math.nan


def axes(figure: Any, fig: Figure, n: int = 1) -> list[Any]:
    """``n`` side-by-side axes on ``figure``, each labelled with the figure's (the paper's) axis labels."""
    row = figure.subplots(1, n, squeeze=False)[0]
    for ax in row:
        ax.set_xlabel(fig.xlabel)
        ax.set_ylabel(fig.ylabel)
    return list(row)


def mbps(bps: float) -> str:
    return f"{bps / 1e6:.2f} Mb/s"


def outcome(ok: bool, measured: str) -> Outcome:
    return Outcome(PASS if ok else FAIL, measured)


def curves(ax: Any, rows: pd.DataFrame, x: str, by: str | None, label: Callable[[Any], str],
           metric: str = "throughput_bps", scale: float = 1e-6, xscale: float = 1.0, band: bool = False,
           **where: Any) -> None:
    """Mean of ``metric`` against swept column ``x``, one line per value of swept column ``by``,
    with the 25th-75th percentile band when ``band``."""
    rows = select(rows, **where)
    groups = [(None, rows)] if by is None else list(rows.groupby(by, sort=True))
    for value, g in groups:
        stats = g.groupby(x, sort=True)[metric].agg(["mean", lambda s: s.quantile(0.25), lambda s: s.quantile(0.75)])
        xs = stats.index.to_numpy(dtype=float) * xscale
        ax.plot(xs, stats.iloc[:, 0] * scale, marker="o", markersize=3, label=label(value))
        if band:
            ax.fill_between(xs, stats.iloc[:, 1] * scale, stats.iloc[:, 2] * scale, alpha=0.15)


# ---------------------------------------------------------------------------------------------------
# The report


def _fmt_claims_md(report: Report) -> list[str]:
    lines = ["| claim | the paper | check | measured | result |", "| --- | --- | --- | --- | --- |"]
    for r in report.results:
        c = r.claim
        cells = [c.id, c.paper, c.check, r.measured or "-", f"**{r.status}**"]
        lines.append("| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |")
    return lines


def runs_used(asked: int, per_figure: Mapping[str, int]) -> str:
    """The runs per point the figures actually made (``per_figure``: figure id -> seeds), in words:
    "100 runs (seeds 1..100) per point", or grouped when figures cap the runs asked for differently."""

    def runs(n: int) -> str:
        return "1 run (seed 1)" if n == 1 else f"{n} runs (seeds 1..{n})"

    counts = sorted(set(per_figure.values()) or {asked})
    if len(counts) == 1:
        return f"{runs(counts[0])} per point"
    groups = [f"{runs(n)} for figure{'s' if len(ids) > 1 else ''} {', '.join(ids)}"
              for n in counts for ids in [[fid for fid, m in per_figure.items() if m == n]]]
    return "per point: " + "; ".join(groups)


def write_report(report: Report) -> None:
    from hfcsim import __version__

    paper = report.paper
    counts = report.counts()
    out = report.out
    sweeps = [paper.figure(fid) for fid in report.figures
              if paper.figure(fid).sweep is not None or paper.figure(fid).run is not None]
    smaller = [f.id for f in sweeps if report.quick and f.quick_grid]
    md = [
        f"# {paper.title}: reproduced by hfcsim {__version__}",
        "",
        runs_used(report.runs, {f.id: figure_runs(f, report.runs) for f in sweeps})
        + (f"; --quick grids for figures {', '.join(smaller)}" if smaller else "")
        + f"; figures {', '.join(report.figures)}; "
        f"{report.wall_s:.0f} s of wall time. Claims: {counts[PASS]} PASS, {counts[FAIL]} FAIL, "
        f"{counts[NOT_RUN]} NOT-RUN.",
        "",
        f"TCP stack: `{report.stack}` ({stacks.DESCRIPTIONS.get(report.stack, '')})"
        + ("; the paper's recipes name this stack." if report.stack == report.recipe_stack else
           f"; run instead of `{report.recipe_stack}`, the stack the paper's recipes name (keys a "
           "recipe sets itself still win over the stack's)."),
        "",
        "## How the paper's model is set up here",
        "",
        *[f"- {n}" for n in paper.notes],
        "",
        "## Claims",
        "",
        *_fmt_claims_md(report),
        "",
    ]
    fails = [r for r in report.results if r.status == FAIL]
    if fails:
        md += ["## Why the FAILs differ from the paper", ""]
        md += [f"- **{r.claim.id}**: {r.claim.why or 'not yet explained.'}" for r in fails]
        md.append("")
    md += ["## Figures", ""]
    for fid in report.figures:
        fig = paper.figure(fid)
        caption = report.captions.get(fid, fig.caption)
        if fig.is_experiment:
            md.append(f"- Experiment {fig.id}: {caption} (data: `data/fig{fig.id}.csv`)")
            continue
        md += [f"### Fig. {fig.id}. {caption}", "", f"![Fig. {fig.id}](figures/fig{fig.id}.png)", "",
               f"Data: `data/fig{fig.id}.csv`; vector: `figures/fig{fig.id}.svg`.", ""]
    _write_text(out / "report.md", "\n".join(md) + "\n")
    _write_text(out / "report.html", _html(paper.title, md))


def _html(title: str, md: list[str]) -> str:
    """The same report as a standalone HTML page (tables and images, no dependencies)."""
    body: list[str] = []
    in_table = in_list = False
    for line in md:
        if in_list and not line.startswith("- "):
            body.append("</ul>")
            in_list = False
        if line.startswith("| ") and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            if not in_table:
                body.append("<table>")
                tag, in_table = "th", True
            else:
                tag = "td"
            row = "".join(f"<{tag}{_status_class(c) if tag == 'td' else ''}>{_inline(c)}</{tag}>" for c in cells)
            body.append(f"<tr>{row}</tr>")
            continue
        if line.startswith("| ---"):
            continue
        if in_table:
            body.append("</table>")
            in_table = False
        if line.startswith("### "):
            body.append(f"<h3>{html.escape(line[4:])}</h3>")
        elif line.startswith("## "):
            body.append(f"<h2>{html.escape(line[3:])}</h2>")
        elif line.startswith("# "):
            body.append(f"<h1>{html.escape(line[2:])}</h1>")
        elif line.startswith("!["):
            src = line[line.index("(") + 1:-1]
            body.append(f'<p><img src="{html.escape(src)}" alt="{html.escape(src)}" width="640"></p>')
        elif line.startswith("- "):
            if not in_list:
                body.append("<ul>")
                in_list = True
            body.append(f"<li>{_inline(line[2:])}</li>")
        elif line:
            body.append(f"<p>{_inline(line)}</p>")
    if in_table:
        body.append("</table>")
    if in_list:
        body.append("</ul>")
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;font-size:14px}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px;vertical-align:top}"
             "td.pass{background:#dfd}td.fail{background:#fdd}td.not-run{background:#eee}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def _status_class(cell: str) -> str:
    """A result cell ("**PASS**", "**FAIL** 1.2 Mb/s", ...) gets its status's colour."""
    for status in (PASS, FAIL, NOT_RUN):
        if cell.startswith(f"**{status}**"):
            return f' class="{status.lower()}"'
    return ""


def _inline(text: str) -> str:
    text = html.escape(text)
    out, bold, code = [], False, False
    i = 0
    while i < len(text):
        if text.startswith("**", i):
            out.append("</b>" if bold else "<b>")
            bold = not bold
            i += 2
        elif text[i] == "`":
            out.append("</code>" if code else "<code>")
            code = not code
            i += 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)

