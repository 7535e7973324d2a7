"""TCP stacks as named profiles: ``tcp.stack = "NAME"`` sets a bundle of TCP rules at once.

The profiles are data, the ``[stacks.NAME]`` tables of the schema (crates/hfcsim-core/schema.toml,
where each stack's sources are cited): values per section (``flows`` applies to every flow), a
``when.VARIANT`` table over them when ``tcp.variant`` is VARIANT, ``{ seconds = S }`` for a
tick-count key (net3's TCPTV_MIN), ``{ true_if = { KEY = VALUE } }`` for a rule that is on only
under another tcp key's value, or one of a list of them (linux's HyStart, CUBIC's own), and
``{ unless_set = "KEY" }`` (with or without ``true_if``) for a rule that is on only where the scenario
and its preset do not set KEY of the same section themselves (Linux's buffer autotuning, which an
explicit buffer, setsockopt's, locks). A rule of one congestion control follows the flows that run it:
``congestion_control = V`` holds when a flow runs V (its own ``flows.*.congestion_control``, else the
stack's; issue 36). A scenario's own keys win over its preset's, and a preset's over the stack's; the
schema's defaults fill the rest. crates/hfcsim-core/src/schema.rs ``stack_value`` is the same rule in
Rust.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from hfcsim.schema import SCHEMA

DEFAULT_STACK: str = SCHEMA["tcp"]["stack"]["default"]
#: Each stack's values per section ({"tcp": {...}, "receiver": {...}, "flows": {...}}).
STACKS: dict[str, dict[str, dict[str, Any]]] = {
    name: {section: dict(values) for section, values in table.items() if section not in ("description", "when")}
    for name, table in SCHEMA["stacks"].items()}
#: One line per stack, for ``hfcsim params`` and reports.
DESCRIPTIONS: dict[str, str] = {name: table["description"] for name, table in SCHEMA["stacks"].items()}
#: Each stack's values by tcp.variant, over those above ({"tahoe": {"tcp": {...}}}).
WHEN: dict[str, dict[str, dict[str, dict[str, Any]]]] = {
    name: table.get("when", {}) for name, table in SCHEMA["stacks"].items()}
#: The key of a ``tcp`` context that holds each flow's own congestion control (None: the stack's), in
#: order; absent, one flow of the stack's.
FLOW_CONTROLS = "flows.congestion_control"


def _holds(key: str, want: Any, tcp: Mapping[str, Any]) -> bool:
    """Whether ``{ true_if = { key = want } }`` holds under ``tcp`` (``want`` a value or a list of them)."""
    wanted = want if isinstance(want, list) else [want]
    if key == "congestion_control":
        own = tcp.get(FLOW_CONTROLS) or (None,)
        return any((cc if cc is not None else tcp.get(key)) in wanted for cc in own)
    return tcp.get(key) in wanted


def rule(stack: str, section: str, name: str, tcp: Mapping[str, Any], explicit: Collection[str] = ()) -> Any:
    """The value ``stack`` gives ``section.name`` (None: none, the schema's default stands), under the tcp
    keys resolved before it, ``tcp``: its ``when`` table for ``tcp["variant"]`` wins, ``{seconds = S}``
    is S in ticks of ``tcp["tick_s"]``, rounded up, within the key's range, and ``{true_if = {KEY = V}}``
    is true when each KEY resolved before it is V (or one of V, a list), else None (a rule of one control
    alone: the linux stack's HyStart, CUBIC's, on when a flow runs CUBIC, ``tcp[FLOW_CONTROLS]``; a
    receiver rule of Linux's delayed ACK alone); ``{unless_set = "KEY"}`` is true unless KEY is among
    ``explicit``, the names the scenario (after its preset) sets in this section. Outside the tcp section,
    ``tcp`` also holds that section's values resolved before the key."""
    value = WHEN[stack].get(tcp.get("variant"), {}).get(section, {}).get(name, STACKS[stack].get(section, {}).get(name))
    if isinstance(value, Mapping) and ("true_if" in value or "unless_set" in value):
        holds = all(_holds(k, v, tcp) for k, v in value.get("true_if", {}).items())  # { true_if = { KEY = V } }
        return True if holds and value.get("unless_set") not in explicit else None
    if isinstance(value, Mapping):  # { seconds = S }
        key = SCHEMA[section][name]
        value = min(max(math.ceil(value["seconds"] / tcp["tick_s"] - 1e-9), key["ge"]), key["le"])
    return value


def rules(stack: str, section: str, tcp: Mapping[str, Any], explicit: Collection[str] = ()) -> dict[str, Any]:
    """Every value ``stack`` gives ``section`` under the resolved ``tcp`` keys and the names the scenario
    sets in the section, ``explicit`` (see ``rule``)."""
    names = {**STACKS[stack].get(section, {}), **WHEN[stack].get(tcp.get("variant"), {}).get(section, {})}
    values: dict[str, Any] = {}
    for name in names:  # a receiver rule's true_if reads the receiver values laid before it
        value = rule(stack, section, name, tcp if section == "tcp" else {**tcp, **values}, explicit)
        if value is not None:
            values[name] = value
    return values
