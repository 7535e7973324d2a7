"""The tutorials and how-to guides run as written (issue 40): every shell and Python block of
docs/tutorials/*.md and docs/how-to/*.md carries a mark just above its fence, and the blocks marked
tested are run in order, in a fresh folder beside the repository's scenarios/ and tools/, and must
succeed.

The marks (HTML comments, invisible on the site):

- ``<!-- test -->``: run the block as it is;
- ``<!-- test: CMD += ARGS -->``: run it with ARGS added to the end of every CMD command in it (before a
  pipe, a redirection or a comment), e.g. ``hfcsim run += --set sim.time_limit_s=3``: a busy hour cut
  short, where a later ``--set`` wins over the block's own;
- ``<!-- not tested: REASON -->``: shown, never run (emulation needs root, Wireshark a display).

A shell block runs under ``bash -e -o pipefail``; a Python block under this interpreter. The blocks of a
page share their folder, so one may read what an earlier one wrote.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted([*(DOCS / "tutorials").glob("*.md"), *(DOCS / "how-to").glob("*.md")])
RUNNABLE = ("sh", "bash", "python")
MARK = re.compile(r"<!--\s*(test|not tested)\s*(?::\s*(.*?))?\s*-->")
# Where a command's own arguments end on its line.
ARGS_END = re.compile(r"\s(?:\||>|2>|&&|;|#)")
TIMEOUT_S = 1800  # per block, generous: a loaded 2-core machine; no test here times anything


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    mark: str | None  # "test", "not tested" or None (no mark)
    detail: str  # the mark's text after the colon


def blocks(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)", lines[i])
        if not fence:
            i += 1
            continue
        start, lang = i, fence.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        above = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        m = MARK.fullmatch(above.strip())
        out.append(Block(page.relative_to(ROOT).as_posix(), start + 1, lang, "\n".join(lines[start + 1:j]),
                         m.group(1) if m else None, (m.group(2) or "") if m else ""))
        i = j + 1
    return out


def with_args(code: str, detail: str) -> str:
    """``code`` with ``detail``'s ``CMD += ARGS`` applied (ARGS before a pipe, redirection or comment)."""
    if not detail:
        return code
    command, _, args = (part.strip() for part in detail.partition("+="))
    assert command and args, f"a test mark's detail is 'CMD += ARGS', not {detail!r}"
    out = []
    for line in code.splitlines():
        if line.lstrip().startswith(command + " "):
            end = ARGS_END.search(line)
            cut = len(line[:end.start()].rstrip()) if end else len(line.rstrip())
            line = f"{line[:cut]} {args}{line[cut:]}"
        out.append(line)
    return "\n".join(out)


ALL = [b for page in PAGES for b in blocks(page)]


@pytest.mark.parametrize("block", [b for b in ALL if b.lang in RUNNABLE], ids=lambda b: f"{b.page}:{b.line}")
def test_every_command_block_is_marked(block):
    assert block.mark is not None, (
        f"{block.page}:{block.line}: a {block.lang} block needs <!-- test --> or <!-- not tested: REASON --> "
        "on the line above its fence")
    if block.mark == "not tested":
        assert block.detail, f"{block.page}:{block.line}: <!-- not tested: REASON --> needs its reason"


def test_the_pages_have_tested_commands():
    """Each tutorial runs, and the guides the brief names test their recipes (captures, sweeps)."""
    tested = {b.page for b in ALL if b.mark == "test"}
    for page in ("docs/tutorials/operator.md", "docs/tutorials/researcher.md", "docs/how-to/captures.md",
                 "docs/how-to/cluster-sweeps.md"):
        assert page in tested, f"{page} has no tested command"


def test_with_args_goes_before_pipes_and_redirections():
    assert with_args("hfcsim run a.toml --set x=1 > out.json", "hfcsim run += --set y=2") == \
        "hfcsim run a.toml --set x=1 --set y=2 > out.json"
    assert with_args("hfcsim run a.toml | tail -3\nls", "hfcsim run += -q") == "hfcsim run a.toml -q | tail -3\nls"
    assert with_args("hfcsim run a.toml   # a comment", "hfcsim run += -q") == "hfcsim run a.toml -q   # a comment"
    assert with_args("tshark -r x", "hfcsim run += -q") == "tshark -r x"


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.mark == "test" for b in blocks(p))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_page_runs_top_to_bottom(page, tmp_path):
    for name in ("scenarios", "tools"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    env.pop("HFCSIM_DASK", None)
    for block in blocks(page):
        if block.mark != "test":
            continue
        code = with_args(block.code, block.detail)
        argv = ([sys.executable, "-c", code] if block.lang == "python"
                else ["bash", "-e", "-o", "pipefail", "-c", code])
        p = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        assert p.returncode == 0, (f"{block.page}:{block.line} failed (exit {p.returncode}):\n{code}\n"
                                   f"--- stdout (end)\n{p.stdout[-3000:]}\n--- stderr (end)\n{p.stderr[-3000:]}")
