"""The docs site (issue 40): built in strict mode, it holds a generated entry for every scenario key,
preset, TCP stack, CLI command and public function, read here from hfcsim itself; a key added to the
schema appears with no other change; README stays short and keeps the newcomer's two commands; and
nothing in the repository points outside it."""

from __future__ import annotations

import argparse
import html
import importlib
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from hfcsim import stacks
from hfcsim.cli import build_parser
from hfcsim.scenario import PARAMS
from hfcsim.schema import PRESET_NOTES, SCHEMA

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "hooks"))
import reference  # noqa: E402  (docs/hooks/reference.py, the generator)


class _Ids(HTMLParser):
    """Each element's id with the text inside it (to the element's end), and every link."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}
        self.links: list[str] = []
        self._open: list[tuple[str, str, list[str]]] = []  # (tag, id, text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if a.get("id") and tag in ("h1", "h2", "h3", "h4"):
            self._open.append((tag, a["id"], []))

    def handle_data(self, data):
        for _, _, text in self._open:
            text.append(data)

    def handle_endtag(self, tag):
        if self._open and self._open[-1][0] == tag:
            _, ident, text = self._open.pop()
            self.ids[ident] = "".join(text)


def page(site: Path, path: str) -> _Ids:
    p = _Ids()
    p.feed((site / path).read_text())
    return p


def key_anchor(key: str) -> str:
    """The documented URL of a key's entry: reference/scenario/SECTION/#KEY, with flows.*.x as flows.x."""
    return key.replace(".*.", ".")


@pytest.fixture(scope="module")
def site(docs_site):
    return docs_site


@pytest.mark.parametrize("key", [p.key for p in PARAMS])
def test_every_scenario_key_has_its_entry(site, key):
    section = key.split(".")[0]
    ids = page(site, f"reference/scenario/{section}/index.html").ids
    assert key_anchor(key) in ids, f"{key}: no entry on reference/scenario/{section}/"
    assert key in ids[key_anchor(key)]
    # What is allowed is on the page, as `hfcsim params` says it.
    text = (site / f"reference/scenario/{section}/index.html").read_text()
    entry = text[text.index(f'id="{key_anchor(key)}"'):]
    entry = entry[:entry.find("<h2 ", 1)] if "<h2 " in entry[1:] else entry
    param = next(p for p in PARAMS if p.key == key)
    assert param.allowed() in html.unescape(re.sub(r"<[^>]+>", "", entry))


@pytest.mark.parametrize("name", list(SCHEMA["presets"]))
def test_every_preset_has_its_page_with_every_value_and_source(site, name):
    p = page(site, f"reference/presets/{name}/index.html")
    assert name in p.ids[f"preset-{name}"]
    text = html.unescape(re.sub(r"<[^>]+>", "", (site / f"reference/presets/{name}/index.html").read_text()))
    for section, table in SCHEMA["presets"][name].items():
        for key in table:
            assert f"{section}.{key}" in text, f"preset {name}: {section}.{key} missing"
    for source in PRESET_NOTES[name].get("sources", {}).values():
        assert " ".join(source.split()) in " ".join(text.split()), f"preset {name}: a source is missing: {source}"


@pytest.mark.parametrize("name", list(stacks.STACKS))
def test_every_stack_has_its_page_with_every_rule(site, name):
    p = page(site, f"reference/stacks/{name}/index.html")
    assert name in p.ids[f"stack-{name}"]
    text = html.unescape(re.sub(r"<[^>]+>", "", (site / f"reference/stacks/{name}/index.html").read_text()))
    for section, table in stacks.STACKS[name].items():
        for key in table:
            assert key in text, f"stack {name}: {section}.{key} missing"


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ("hfcsim",)):
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*words, name))


COMMANDS = list(_commands(build_parser()))


@pytest.mark.parametrize(("words", "parser"), COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_every_cli_command_and_option_has_its_entry(site, words, parser):
    anchor = "-".join(words)
    p = page(site, "reference/cli/index.html")
    assert anchor in p.ids and " ".join(words) in p.ids[anchor]
    text = (site / "reference/cli/index.html").read_text()
    section = text[text.index(f'id="{anchor}"'):]
    for action in parser._actions:
        for option in action.option_strings:
            if option not in ("-h", "--help"):
                assert f"<code>{html.escape(option)}</code>" in section, f"{' '.join(words)}: {option} missing"


def test_the_cli_reference_lists_every_subcommand(site):
    assert {w for w, _ in COMMANDS if len(w) == 2} >= {("hfcsim", c) for c in
                                                         ("run", "params", "sweep", "model", "reproduce", "compare",
                                                          "advise", "emulate")}


@pytest.mark.parametrize("module", reference.API_MODULES)
def test_every_api_module_has_its_page_with_its_public_functions(site, module):
    mod = importlib.import_module(module)
    names = [*getattr(mod, "__all__", ()),
             *(n for n, o in vars(mod).items() if not n.startswith("_") and callable(o) and not isinstance(o, type(re))
               and getattr(o, "__module__", None) == module)]
    ids = page(site, f"reference/api/{module}/index.html").ids
    for name in names:
        obj = getattr(mod, name)
        if callable(obj) and not isinstance(obj, str):
            assert f"{module}.{name}" in ids, f"{module}.{name} has no entry"


# A key added to schema.toml (here, made up) appears in the reference with no other change: the
# generator reads the schema, it lists no key itself.
NEW_KEYS = [
    ("tcp", "made_up_rule", {"type": "bool", "default": False, "help": "a rule added later (RFC 0000)",
                             "requires": {"tcp.sack": [True]}}),
    ("network", "made_up_rate_bps", {"type": "float", "default": 1e6, "ge": 1.0, "networks": ["docsis"],
                                     "help": "a rate added later, bit/s"}),
]


@pytest.mark.parametrize(("section", "name", "decl"), NEW_KEYS, ids=[f"{s}.{n}" for s, n, _ in NEW_KEYS])
def test_a_key_added_to_the_schema_appears_with_no_other_change(monkeypatch, section, name, decl):
    import hfcsim.scenario as scenario

    monkeypatch.setitem(SCHEMA[section], name, decl)
    param = scenario._param(section, name, decl)
    monkeypatch.setattr(scenario, "PARAMS", (*scenario.PARAMS, param))
    reference._param_keys.cache_clear()
    try:
        text = reference.pages()[f"reference/scenario/{section}.md"]
        anchors = reference.expected_entries()[f"reference/scenario/{section}/index.html"]
    finally:
        reference._param_keys.cache_clear()
    assert f"## `{section}.{name}` {{#{section}.{name}}}" in text
    assert decl["help"] in text.replace("\\", "")
    assert f"{section}.{name}" in anchors
    if "requires" in decl:
        assert "needs [`tcp.sack`](tcp.md#tcp.sack) = `true`" in text


def test_the_build_refuses_a_reference_without_an_entry(tmp_path, monkeypatch):
    """mkdocs build fails (the hook's post-build check) when a generated entry is missing."""
    from mkdocs.exceptions import PluginError

    site = tmp_path / "site"
    for path in reference.expected_entries():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text("<html></html>")
    with pytest.raises(PluginError, match="lacks"):
        reference.on_post_build({"site_dir": str(site)})


# ---------------------------------------------------------------------------------------------------
# README

README = (ROOT / "README.md").read_text()
# The newcomer's path, as it was before the docs site (issue 40: it must not change).
COMMANDS_BEFORE = [
    "python3 -m venv .venv && . .venv/bin/activate && pip install '.[test]' && hfcsim reproduce cohen98",
    "cargo test --workspace && python -m pytest",
]


def test_readme_is_short_and_keeps_the_two_commands_at_the_top():
    lines = README.splitlines()
    assert len(lines) <= 200
    blocks = re.findall(r"```sh\n(.*?)\n```", README, re.S)
    assert blocks[:2] == COMMANDS_BEFORE
    assert README.index(COMMANDS_BEFORE[1]) < README.index("![")  # both before anything else of substance


def test_readme_has_one_picture_and_its_links_resolve():
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert len(pictures) == 1 and (ROOT / pictures[0]).is_file()
    for target in re.findall(r"(?<!!)\[[^\]]*\]\(([^)#]+)(?:#[^)]*)?\)", README):
        assert (ROOT / target).exists(), f"README links to {target}, which is not in the repository"
    assert "docs/tutorials/operator.md" in README and "mkdocs build --strict" in README


# ---------------------------------------------------------------------------------------------------
# Nothing points outside the repository

SKIP_DIRS = {".git", "target", "site", "hfcsim-results", "node_modules", "__pycache__", ".pytest_cache",
             ".hypothesis"}
TEXT_SUFFIXES = {".py", ".rs", ".toml", ".md", ".yml", ".yaml", ".tcl", ".txt", ".cfg", ".sh", ""}


def _files():
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".venv")]
        for name in files:
            if name in SKIP_DIRS:  # a worktree's .git is a file naming where its repository lives
                continue
            path = Path(folder) / name
            if path.suffix in TEXT_SUFFIXES and path.stat().st_size < 2_000_000:
                yield path


FILES = [f for f in _files() if f.name != Path(__file__).name]


@pytest.mark.parametrize("pattern", ["../shared", "/work/", "DESIGN.md", "STYLE.md", "papers/CLAIMS.md"])
def test_nothing_refers_to_a_path_outside_the_repository(pattern):
    found = [f"{f.relative_to(ROOT)}" for f in FILES if pattern in f.read_text(errors="replace")]
    assert found == []
