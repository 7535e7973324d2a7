"""The reference pages of the docs site, generated at every build from the one declaration (an MkDocs
hook: mkdocs.yml ``hooks``). Nothing here is copied by hand: a key added to
crates/hfcsim-core/schema.toml, a preset, a stack, a CLI option or a public function appears with no other
change.

- ``reference/scenario/SECTION.md``: every key of the section (``hfcsim.scenario.PARAMS``): its type, default
  per network kind, range or choices, the networks it applies to, its rules against other keys
  (schema.toml's ``requires``, ``lt_key``/``le_key``/``ge_key``, ``excludes``, ``note``, and the
  functions of crates/hfcsim-core/src/rules.rs that name it), the values stacks and presets give it, the
  notes above its declaration in schema.toml, and its help. Each key's anchor is the key with ``.*.``
  written ``.`` (``flows.*.bytes`` is ``#flows.bytes``).
- ``reference/presets/NAME.md`` and ``reference/stacks/NAME.md``: each preset's and stack's values with
  their sources (``hfcsim.schema.PRESET_NOTES``, the comments above ``[stacks.NAME]``).
- ``reference/cli.md``: every subcommand and option of ``hfcsim.cli.build_parser()``.
- ``reference/api/MODULE.md``: the public functions and classes of the Python front, from their docstrings
  (``inspect``).

``pages()`` returns them (path -> Markdown); ``nav()`` the site's Reference section; the two MkDocs events
at the bottom hand them to the build (``File.generated``, MkDocs 1.6).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RULES_RS = ROOT / "crates" / "hfcsim-core" / "src" / "rules.rs"

#: What each section of a scenario holds: one line each, for the section's page (a section missing here
#: gets a plain title).
SECTION_INTROS = {
    "network": "The network model (`network.kind`) and its links, queues, rate caps, AQMs and plant delays.",
    "upstream": "The shared upstream channel: a FIFO link, or a request/grant MAC (IEEE 802.14, DOCSIS) with "
                "its minislots, MAPs, contention and grants.",
    "modems": "Groups of cable modems (`[[modems]]`, one table per group): count, distance, queue, background "
              "load, generated downloads, channel, bonding. Keys are `modems.N.KEY`, N the group's index.",
    "tcp": "The TCP sender's rules: stack, variant, timers, windows, buffers, today's rules (SACK, RACK, PRR, "
           "CUBIC, ECN, pacing, ...).",
    "receiver": "The TCP receiver's rules: delayed ACK, buffers, Linux's receive window.",
    "flows": "The TCP connections (`[[flows]]`, one table per flow): size, direction, start, modem, and a "
             "flow's own congestion control. Keys are `flows.N.KEY`, N the flow's index.",
    "pings": "ICMP echo series from a modem's client (`[[pings]]`, one table per ping).",
    "games": "Game sessions from a modem's client (`[[games]]`, one table per session): UDP-like datagrams both "
             "ways at a fixed rate, with a one-way deadline ([real-time flows](../../model/docsis.md#real-time-flows)).",
    "calls": "Voice calls from a modem's client (`[[calls]]`, one table per call): a frame each way every "
             "`frame_s`, a fixed jitter buffer, ITU-T G.107's R and MOS "
             "([real-time flows](../../model/docsis.md#real-time-flows)).",
    "sim": "The run itself: its time limit and when measurement starts.",
}

#: The modules of the Python reference, in order (each a page).
API_MODULES = (
    "hfcsim", "hfcsim.simulate", "hfcsim.scenario", "hfcsim.sweep", "hfcsim.plot", "hfcsim.stacks",
    "hfcsim.schema", "hfcsim.reproduce", "hfcsim.advise", "hfcsim.compare", "hfcsim.emulate", "hfcsim.docsis",
    "hfcsim.models.cohen", "hfcsim.models.lakshman", "hfcsim.models.nguyen", "hfcsim.models.throughput",
    "hfcsim.macplot", "hfcsim.errors",
)


# ---------------------------------------------------------------------------------------------------
# Names and text


def key_anchor(key: str) -> str:
    """The anchor of a key on its section's page: ``tcp.sack`` -> ``tcp.sack``, ``flows.*.bytes`` ->
    ``flows.bytes``."""
    return key.replace(".*.", ".")


def key_section(key: str) -> str:
    return key.split(".", 1)[0]


def key_link(key: str, here: str) -> str:
    """A Markdown link to ``key``'s entry from the page ``here`` (a path under docs/)."""
    target = f"reference/scenario/{key_section(key)}.md"
    return f"[`{key}`]({_relative(target, here)}#{key_anchor(key)})"


def _relative(target: str, here: str) -> str:
    """``target`` (a path under docs/) relative to the folder of the page ``here``."""
    return posixpath.relpath(target, posixpath.dirname(here) or ".")


def esc(text: str) -> str:
    """Prose for Markdown: code spans kept, HTML and Markdown's own characters escaped elsewhere (a
    docstring's ``<section>`` or ``*`` is text, not markup). RST's ``x`` and :role:`x` become code spans."""
    text = re.sub(r":[a-z]+:`([^`]+)`", r"``\1``", text)
    out = []
    for i, part in enumerate(re.split(r"(``[^`]+``|`[^`]+`)", text)):
        if i % 2:
            out.append("`" + part.strip("`") + "`")
        else:
            part = part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            out.append(re.sub(r"([\\*_\[\]|#])", r"\\\1", part))
    return "".join(out)


def cell(text: str) -> str:
    """Text for a table cell: one line, ``|`` escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def value_text(value: Any) -> str:
    """A value as a scenario writes it (TOML-like JSON), as a code span."""
    if isinstance(value, tuple):
        value = list(value)
    return "`" + json.dumps(value) + "`"


# ---------------------------------------------------------------------------------------------------
# schema.toml's comments and rules.rs's rules


@functools.cache
def schema_comments() -> dict[str, list[str]]:
    """The comment lines of schema.toml that belong to each table (``network.kind``, ``stacks.linux``,
    ``presets.docsis31``): the block right above its header and the comments inside it, up to the next
    header. Rule lines (``# ====``) are left out."""
    from hfcsim import _core

    comments: dict[str, list[str]] = {}
    pending: list[str] = []
    current: str | None = None
    for line in _core.schema().splitlines():
        stripped = line.strip()
        header = re.fullmatch(r"\[([^\]]+)\]", stripped)
        if header:
            current = header.group(1)
            comments[current] = pending
            pending = []
        elif stripped.startswith("#"):
            text = stripped.lstrip("#").strip()
            if text and not set(text) <= {"="}:
                pending.append(text)
        elif not stripped:
            pending = []  # a block apart from the next header belongs to no table
        else:
            if pending and current is not None:
                comments[current] = comments[current] + pending  # a comment inside the table
            pending = []
    return comments


@functools.cache
def code_rules() -> dict[str, list[tuple[str, str]]]:
    """Each key that crates/hfcsim-core/src/rules.rs names, with (function, what it says): the function's
    doc comment, or in the long ``check`` the comment block above the line that names it."""
    from hfcsim.scenario import PARAM_BY_KEY

    known = {p.key for p in PARAM_BY_KEY.values()}
    found: dict[str, list[tuple[str, str]]] = {}
    fn, fn_doc, doc, comment, in_comment = "", "", [], [], False
    for line in RULES_RS.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("///") or stripped.startswith("//!"):
            doc.append(stripped[3:].strip())
            continue
        m = re.match(r"(?:pub )?(?:fn|const) (\w+)", stripped)
        if m:
            fn, fn_doc, doc, comment, in_comment = m.group(1), " ".join(doc), [], [], False
            continue
        doc = []
        if stripped.startswith("//"):
            comment = (comment if in_comment else []) + [stripped[2:].strip()]  # the latest block, whole
            in_comment = True
            continue
        in_comment = False
        for literal in re.findall(r'"([^"]*)"', line):
            for word in re.findall(r"[a-z_]+\.[a-z_*0-9]+(?:\.[a-z_]+)?", literal):
                key = re.sub(r"^(flows|modems|pings|games|calls)\.\d+\.", r"\1.*.", word)
                if key in known:
                    entry = (fn, fn_doc or " ".join(comment))
                    if entry not in found.setdefault(key, []):
                        found[key].append(entry)
    return found


# ---------------------------------------------------------------------------------------------------
# Scenario keys


def _stack_rule_text(rule: Any, here: str, section: str) -> str:
    """A stack's value for a key as words: a value, ``{true_if = ...}``, ``{unless_set = ...}``, ``{seconds = S}``."""
    if not isinstance(rule, Mapping):
        return value_text(rule)
    parts = []
    if "seconds" in rule:
        parts.append(f"{rule['seconds']:g} s in ticks of {key_link('tcp.tick_s', here)}")
    if "true_if" in rule:
        conds = []
        for k, v in rule["true_if"].items():
            other = f"tcp.{k}" if f"tcp.{k}" in _param_keys() else f"{section}.{k}"
            wanted = " or ".join(value_text(x) for x in (v if isinstance(v, list) else [v]))
            conds.append(f"{key_link(other, here)} = {wanted}")
        parts.append("`true` when " + " and ".join(conds))
    if "unless_set" in rule:
        other = f"{section}.{rule['unless_set']}"
        parts.append(("" if "true_if" in rule else "`true` ") + f"unless the scenario sets {key_link(other, here)}")
    return ", ".join(parts)


@functools.cache
def _param_keys() -> frozenset[str]:
    from hfcsim.scenario import PARAMS

    return frozenset(p.key for p in PARAMS)


def _stack_values(section: str, name: str) -> list[tuple[str, str | None, Any]]:
    """(stack, variant or None, rule) for every stack that sets ``section.name``."""
    from hfcsim import stacks

    out = []
    for stack in stacks.STACKS:
        if name in stacks.STACKS[stack].get(section, {}):
            out.append((stack, None, stacks.STACKS[stack][section][name]))
        for variant, table in stacks.WHEN[stack].items():
            if name in table.get(section, {}):
                out.append((stack, variant, table[section][name]))
    return out


def _preset_values(key: str) -> list[tuple[str, Any]]:
    from hfcsim.schema import SCHEMA

    section, name = key.split(".")[0], key.rsplit(".", 1)[1]
    return [(preset, values[section][name]) for preset, values in SCHEMA["presets"].items()
            if name in values.get(section, {})]


def _reverse_rules() -> dict[str, list[str]]:
    """key -> the other keys whose schema.toml rules name it."""
    from hfcsim.scenario import PARAMS
    from hfcsim.schema import SCHEMA

    out: dict[str, list[str]] = {}
    for p in PARAMS:
        decl = SCHEMA[key_section(p.key)][p.name]
        named = list(decl.get("requires", {})) + [decl[f] for f in ("lt_key", "le_key", "ge_key", "excludes") if f in decl]
        for other in named:
            out.setdefault(other, []).append(p.key)
    return out


def _key_entry(p: Any, here: str, reverse: Mapping[str, list[str]]) -> list[str]:
    from hfcsim.scenario import NETWORK_KINDS, _default_text
    from hfcsim.schema import SCHEMA

    decl = SCHEMA[key_section(p.key)][p.name]
    rows: list[tuple[str, str]] = []
    kind = decl["type"] if decl["type"] != "list" else "list of integers"
    if decl["type"] == "schedule":
        kind = "schedule: a list of `[time_s, bps]`"
    rows.append(("type", f"{kind}" + (f" (engine enum `{decl['enum']}`)" if "enum" in decl else "")))
    default = f"`{_default_text(p.default)}`"
    if p.network_defaults:
        default += "; " + "; ".join(f"on `{k}`: `{_default_text(v)}`" for k, v in p.network_defaults.items())
    rows.append(("default", default))
    rows.append(("allowed", esc(p.allowed())))
    networks = p.network or NETWORK_KINDS
    rows.append(("network kinds", ", ".join(f"`{k}`" for k in networks)
                 + ("" if p.network else " (every kind)")))
    rules = []
    for other, allowed in decl.get("requires", {}).items():
        rules.append(f"off its default, needs {key_link(other, here)} = "
                     + " or ".join(value_text(v) for v in allowed))
    for field, op in (("lt_key", "<"), ("le_key", "<="), ("ge_key", ">=")):
        if field in decl:
            rules.append(f"{esc(op)} {key_link(decl[field], here)}")
    if "excludes" in decl:
        rules.append(f"not with {key_link(decl['excludes'], here)}")
    if "note" in decl:
        rules.append(esc(decl["note"]))
    if rules:
        rows.append(("rules (schema.toml)", "; ".join(rules)))
    if reverse.get(p.key):
        rows.append(("named by the rules of", ", ".join(key_link(k, here) for k in reverse[p.key])))
    code = code_rules().get(p.key, [])
    if code:
        rows.append(("rules in code", "<br>".join(
            f"`rules.rs` `{fn}`" + (f": {esc(why)}" if why else "") for fn, why in code)))
    section = key_section(p.key)
    stack_rows = _stack_values(section, p.name)
    if stack_rows:
        rows.append(("set by stacks", "<br>".join(
            f"[`{stack}`]({_relative(f'reference/stacks/{stack}.md', here)})"
            + (f" under `tcp.variant = \"{variant}\"`" if variant else "")
            + ": " + _stack_rule_text(rule, here, section) for stack, variant, rule in stack_rows)))
    preset_rows = _preset_values(p.key)
    if preset_rows:
        rows.append(("set by presets", ", ".join(
            f"[`{preset}`]({_relative(f'reference/presets/{preset}.md', here)}): {value_text(v)}"
            for preset, v in preset_rows)))
    if decl.get("engine") is False:
        rows.append(("engine", "read by Python only (expanded into flows); never in the engine's document"))
    if "document" in decl:
        rows.append(("stored documents", f"`document = \"{decl['document']}\"`: left out of the engine's document "
                     "at its default, so that sweeps stored before the key keep their hash"))
    notes = schema_comments().get(f"{section}.{p.name}", [])
    lines = [f"## `{p.key}` {{#{key_anchor(p.key)}}}", "", esc(p.help), "", "| attribute | value |", "| --- | --- |"]
    lines += [f"| {name} | {cell(text)} |" for name, text in rows]
    if notes:
        lines += ["", "Notes in schema.toml:", "", *[f"> {esc(line)}" for line in notes]]
    return lines + [""]


def scenario_pages() -> dict[str, str]:
    from hfcsim.scenario import PARAMS, SECTIONS
    from hfcsim.schema import PRESET_NOTES, SCHEMA

    reverse = _reverse_rules()
    pages = {}
    index = ["# Scenario keys", "",
             "Every key a scenario takes, generated from `crates/hfcsim-core/schema.toml` (the one declaration; "
             "`hfcsim params` prints the same). A scenario file is TOML: a table per section (`[network]`, "
             "`[tcp]`, ...), and a list of tables for `[[modems]]`, `[[flows]]`, `[[pings]]`, `[[games]]` and "
             "`[[calls]]`. On the "
             "command line, `--set SECTION.KEY=VALUE` (list items by index: `flows.0.bytes`).", "",
             "A key that does not apply to the scenario's `network.kind` or MAC is refused in one line naming "
             "it, never ignored. A scenario's own keys win over its preset's, and a preset's over its TCP "
             "stack's (`tcp.stack`).", "",
             "| section | keys | what it holds |", "| --- | --- | --- |"]
    for section in SECTIONS:
        keys = [p for p in PARAMS if key_section(p.key) == section]
        index.append(f"| [`{section}`]({section}.md) | {len(keys)} | {cell(SECTION_INTROS.get(section, ''))} |")
    index += ["", "## `preset` {#preset}", "",
              "A top-level key: `preset = \"NAME\"` lays a named set of values under the scenario's own. "
              "The presets:", ""]
    for name in SCHEMA["presets"]:
        index.append(f"- [`{name}`](../presets/{name}.md): {esc(PRESET_NOTES.get(name, {}).get('description', ''))}")
    pages["reference/scenario/index.md"] = "\n".join(index) + "\n"
    for section in SECTIONS:
        here = f"reference/scenario/{section}.md"
        keys = [p for p in PARAMS if key_section(p.key) == section]
        title = f"`[[{section}]]`" if section in ("modems", "flows", "pings", "games", "calls") else f"`[{section}]`"
        lines = [f"# Scenario keys: {title}", "", esc(SECTION_INTROS.get(section, "")), "",
                 f"{len(keys)} keys, in the order of `hfcsim params`. Generated from `crates/hfcsim-core/schema.toml`.",
                 ""]
        for p in keys:
            lines += _key_entry(p, here, reverse)
        pages[here] = "\n".join(lines)
    return pages


# ---------------------------------------------------------------------------------------------------
# Presets and stacks


def preset_pages() -> dict[str, str]:
    from hfcsim.schema import PRESET_NOTES, SCHEMA

    pages = {}
    index = ["# Presets", "", "`preset = \"NAME\"` at the top of a scenario (or `--set preset=NAME`) lays these values "
             "under the scenario's own: a key the scenario sets wins. Generated from schema.toml's "
             "`[presets.NAME]` tables.", "", "| preset | what it is |", "| --- | --- |"]
    for name, sections in SCHEMA["presets"].items():
        note = PRESET_NOTES.get(name, {})
        index.append(f"| [`{name}`]({name}.md) | {cell(esc(note.get('description', '')))} |")
        here = f"reference/presets/{name}.md"
        lines = [f"# Preset `{name}` {{#preset-{name}}}", "", esc(note.get("description", "")), ""]
        if "base" in note:
            lines += [f"Built on [`{note['base']}`]({note['base']}.md): its values, with these laid over them.", ""]
        lines += [f"```toml\npreset = \"{name}\"\n```", "", "| key | value | source |", "| --- | --- | --- |"]
        for section, table in sections.items():
            for key, value in table.items():
                full = f"{section}.{key}"
                source = note.get("sources", {}).get(full, "")
                lines.append(f"| {key_link(full, here)} | {value_text(value)} | {cell(esc(source))} |")
        comments = schema_comments().get(f"presets.{name}", [])
        if comments:
            lines += ["", "Notes in schema.toml:", "", *[f"> {esc(c)}" for c in comments]]
        pages[here] = "\n".join(lines) + "\n"
    pages["reference/presets/index.md"] = "\n".join(index) + "\n"
    return pages


def stack_pages() -> dict[str, str]:
    from hfcsim import stacks

    pages = {}
    index = ["# TCP stacks", "", "`tcp.stack = \"NAME\"` sets a bundle of TCP rules at once; each rule is also a key "
             "of its own, and a key the scenario (or its preset) sets wins over the stack's. Generated from "
             "schema.toml's `[stacks.NAME]` tables.", "", "| stack | what it is |", "| --- | --- |"]
    for name in stacks.STACKS:
        default = " (default)" if name == stacks.DEFAULT_STACK else ""
        index.append(f"| [`{name}`]({name}.md){default} | {cell(esc(stacks.DESCRIPTIONS[name]))} |")
        here = f"reference/stacks/{name}.md"
        lines = [f"# Stack `{name}` {{#stack-{name}}}", "", esc(stacks.DESCRIPTIONS[name]) + default, "",
                 f"```toml\n[tcp]\nstack = \"{name}\"\n```", ""]
        comments = schema_comments().get(f"stacks.{name}", [])
        if comments:
            lines += ["Its sources, from schema.toml:", "", *[f"> {esc(c)}" for c in comments], ""]
        lines += ["| key | value |", "| --- | --- |"]
        for section, table in stacks.STACKS[name].items():
            for key, rule in table.items():
                lines.append(f"| {key_link(f'{section}.*.{key}' if section == 'flows' else f'{section}.{key}', here)} "
                             f"| {cell(_stack_rule_text(rule, here, section))} |")
        for variant, sections in stacks.WHEN[name].items():
            lines += ["", f"Under `tcp.variant = \"{variant}\"`, over the values above:", "",
                      "| key | value |", "| --- | --- |"]
            for section, table in sections.items():
                for key, rule in table.items():
                    lines.append(f"| {key_link(f'{section}.{key}', here)} | {cell(_stack_rule_text(rule, here, section))} |")
        pages[here] = "\n".join(lines) + "\n"
    pages["reference/stacks/index.md"] = "\n".join(index) + "\n"
    return pages


# ---------------------------------------------------------------------------------------------------
# The command line


def _subparsers(parser: argparse.ArgumentParser) -> Mapping[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def cli_anchor(words: Iterable[str]) -> str:
    """The anchor of a command on the CLI page: ``hfcsim run`` -> ``hfcsim-run``."""
    return "-".join(words)


def _cli_section(parser: argparse.ArgumentParser, words: list[str], level: int) -> list[str]:
    lines = [f"{'#' * level} `{' '.join(words)}` {{#{cli_anchor(words)}}}", ""]
    if parser.description:
        lines += [esc(parser.description), ""]
    usage = parser.format_usage().strip()
    lines += ["```text", usage, "```", ""]
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        names = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.metavar or action.dest}`"
        takes = ""
        if action.option_strings and action.nargs != 0:
            takes = f"`{action.metavar or action.dest.upper()}`"
        if action.choices and not isinstance(action.choices, Mapping):
            takes = "one of " + ", ".join(f"`{c}`" for c in action.choices)
        default = action.default
        shown = "" if default in (None, False, argparse.SUPPRESS) or not action.option_strings else value_text(default) \
            if isinstance(default, (int, float, str, list)) else ""
        rows.append(f"| {names} | {takes} | {shown} | {cell(esc((action.help or '') % vars(action) if action.help and '%(' in action.help else action.help or ''))} |")
    if rows:
        lines += ["| argument | takes | default | meaning |", "| --- | --- | --- | --- |", *rows, ""]
    if parser.epilog:
        lines += ["```text", parser.epilog.strip("\n"), "```", ""]
    for name, sub in _subparsers(parser).items():
        lines += _cli_section(sub, [*words, name], level + 1)
    return lines


def cli_page() -> dict[str, str]:
    from hfcsim.cli import build_parser

    parser = build_parser()
    lines = ["# Command line: `hfcsim`", "",
             "Every subcommand and option, generated from the argument parser (`hfcsim.cli.build_parser()`); "
             "`hfcsim COMMAND --help` prints the same. Bad input is one line naming what is wrong, exit status 2.",
             "", "| command | what it does |", "| --- | --- |"]
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in action._choices_actions}
    for name in action.choices:
        lines.append(f"| [`hfcsim {name}`](#{cli_anchor(['hfcsim', name])}) | {cell(esc(helps.get(name) or ''))} |")
    lines += [""]
    lines += _cli_section(parser, ["hfcsim"], 2)
    return {"reference/cli.md": "\n".join(lines)}


# ---------------------------------------------------------------------------------------------------
# The Python API


def doc_markdown(doc: str | None) -> list[str]:
    """A docstring as Markdown: prose paragraphs escaped, indented blocks and doctests as code."""
    if not doc:
        return []
    out: list[str] = []
    for para in re.split(r"\n\s*\n", inspect.cleandoc(doc)):
        lines = para.splitlines()
        if all(line.startswith("    ") or line.startswith(">>>") for line in lines):
            out += ["```python", *[line[4:] if line.startswith("    ") else line for line in lines], "```", ""]
        else:
            out += [esc(" ".join(line.strip() for line in lines)), ""]
    return out


def _public(module: Any) -> list[tuple[str, Any]]:
    """The module's public functions and classes: those in its ``__all__``, then the others it defines
    without a leading underscore (``__all__`` lists what ``import *`` takes, not all that is public)."""
    names = list(getattr(module, "__all__", ()))
    names += [n for n, obj in vars(module).items() if n not in names and not n.startswith("_")
              and (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", None) == module.__name__]
    members = []
    for name in names:
        obj = getattr(module, name, None)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            members.append((name, obj))
    return members


def _signature(obj: Any) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def api_anchor(module: str, name: str) -> str:
    return f"{module}.{name}"


def api_pages() -> dict[str, str]:
    pages = {}
    index = ["# Python API", "", "The public functions and classes of `hfcsim`'s Python front, generated from their "
             "docstrings. `import hfcsim; hfcsim.simulate(...)` is the way in; a scenario is a dict, a TOML path or "
             "a `Scenario`.", "", "| module | what it is |", "| --- | --- |"]
    for modname in API_MODULES:
        module = importlib.import_module(modname)
        first = (inspect.getdoc(module) or "").split("\n\n")[0]
        index.append(f"| [`{modname}`]({modname}.md) | {cell(esc(' '.join(first.split())))} |")
        lines = [f"# `{modname}`", "", *doc_markdown(module.__doc__)]
        for name, obj in _public(module):
            kind = "class" if inspect.isclass(obj) else "function"
            lines += [f"## `{name}` {{#{api_anchor(modname, name)}}}", "",
                      f"```python\n{kind} {name}{_signature(obj)}\n```", "", *doc_markdown(obj.__doc__)]
            if inspect.isclass(obj):
                for mname, member in vars(obj).items():
                    if mname.startswith("_") or not (inspect.isfunction(member) or isinstance(member, property)
                                                     or isinstance(member, (classmethod, staticmethod))):
                        continue
                    func = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                    sig = "" if isinstance(member, property) else _signature(func)
                    label = "property " if isinstance(member, property) else ""
                    lines += [f"### `{name}.{mname}` {{#{api_anchor(modname, f'{name}.{mname}')}}}", "",
                              f"```python\n{label}{mname}{sig}\n```", "", *doc_markdown(func.__doc__)]
        pages[f"reference/api/{modname}.md"] = "\n".join(lines) + "\n"
    pages["reference/api/index.md"] = "\n".join(index) + "\n"
    return pages


# ---------------------------------------------------------------------------------------------------
# The whole reference


def pages() -> dict[str, str]:
    """Every generated page: path under docs/ -> Markdown."""
    out = {"reference/index.md": _index()}
    for part in (scenario_pages, preset_pages, stack_pages, cli_page, api_pages):
        out.update(part())
    return out


def _index() -> str:
    return "\n".join([
        "# Reference", "",
        "Generated at every build from the code's own declarations, never copied by hand:", "",
        "- [Scenario keys](scenario/index.md): every key of `crates/hfcsim-core/schema.toml`, with its type, "
        "default per network kind, range or choices, rules against other keys, and sources.",
        "- [Presets](presets/index.md): each named preset's values with their sources.",
        "- [TCP stacks](stacks/index.md): each stack profile's rules.",
        "- [Command line](cli.md): every `hfcsim` subcommand and option, from the argument parser.",
        "- [Python API](api/index.md): the public functions and classes, from their docstrings.", ""])


def nav() -> list[Any]:
    """The Reference section of the site's navigation."""
    from hfcsim import stacks
    from hfcsim.scenario import SECTIONS
    from hfcsim.schema import SCHEMA

    return [
        {"Overview": "reference/index.md"},
        {"Scenario keys": ["reference/scenario/index.md", *[{f"[{s}]": f"reference/scenario/{s}.md"} for s in SECTIONS]]},
        {"Presets": ["reference/presets/index.md", *[{p: f"reference/presets/{p}.md"} for p in SCHEMA["presets"]]]},
        {"TCP stacks": ["reference/stacks/index.md", *[{s: f"reference/stacks/{s}.md"} for s in stacks.STACKS]]},
        {"Command line": "reference/cli.md"},
        {"Python API": ["reference/api/index.md", *[{m: f"reference/api/{m}.md"} for m in API_MODULES]]},
    ]


# ---------------------------------------------------------------------------------------------------
# MkDocs events

_PLACEHOLDER = "reference/index.md"


def on_config(config: Any) -> Any:
    """Put the generated pages in the nav: the entry ``Reference: reference/index.md`` becomes the section."""
    for i, entry in enumerate(config["nav"] or []):
        if isinstance(entry, Mapping) and list(entry.values()) == [_PLACEHOLDER]:
            config["nav"][i] = {next(iter(entry)): nav()}
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, text in pages().items():
        files.append(File.generated(config, path, content=text))
    return files


def expected_entries() -> dict[str, list[str]]:
    """Each generated page (its path in the built site) and the anchors it must hold: every scenario
    key, preset, stack, command and public function, read from hfcsim itself, not from the pages."""
    from hfcsim import stacks
    from hfcsim.cli import build_parser
    from hfcsim.scenario import PARAMS
    from hfcsim.schema import SCHEMA

    out: dict[str, list[str]] = {}
    for p in PARAMS:
        out.setdefault(f"reference/scenario/{key_section(p.key)}/index.html", []).append(key_anchor(p.key))
    for name in SCHEMA["presets"]:
        out[f"reference/presets/{name}/index.html"] = [f"preset-{name}"]
    for name in stacks.STACKS:
        out[f"reference/stacks/{name}/index.html"] = [f"stack-{name}"]

    def commands(parser: argparse.ArgumentParser, words: list[str]) -> list[str]:
        return [cli_anchor(words)] + [a for name, sub in _subparsers(parser).items() for a in commands(sub, [*words, name])]

    out["reference/cli/index.html"] = commands(build_parser(), ["hfcsim"])
    for modname in API_MODULES:
        module = importlib.import_module(modname)
        out[f"reference/api/{modname}/index.html"] = [api_anchor(modname, name) for name, _ in _public(module)]
    return out


def on_post_build(config: Any) -> None:
    """The build fails if a key, preset, stack, command or function lacks its generated entry."""
    from mkdocs.exceptions import PluginError

    site = Path(config["site_dir"])
    missing = []
    for page, anchors in expected_entries().items():
        path = site / page
        html = path.read_text() if path.exists() else ""
        missing += [f"{page}#{a}" for a in anchors if f'id="{a}"' not in html]
    if missing:
        raise PluginError(f"the reference lacks {len(missing)} generated entries: {', '.join(missing[:20])}")
