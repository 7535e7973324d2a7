"""Argument types shared by the command-line parsers (``cli`` and the library modules that declare
their own subcommands, ``compare`` and ``advise``)."""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def positive(flag: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} {text}: must be an integer") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} {text}: must be >= 1")
        return value

    return parse


def number(flag: str, ok: Callable[[float], bool], allowed: str) -> Callable[[str], float]:
    """A finite number for which ``ok`` holds; else one line saying ``must be {allowed}``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} {text}: must be a number") from None
        if not (math.isfinite(value) and ok(value)):
            raise argparse.ArgumentTypeError(f"{flag} {text}: must be {allowed}")
        return value

    return parse


def folder(flag: str) -> Callable[[str], str]:
    """A folder name, not empty: an empty --out was taken as the current folder (issue 26, defect 8).
    A folder whose parents are missing is created with them, as ``mkdir -p`` does (chosen: a results
    path is often a new tree; a parent that cannot be made is one line naming --out)."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: an empty folder name (for the current folder, "
                                             f"say {flag} .)")
        return text

    return parse


def output_file(flag: str) -> Callable[[str], str]:
    """The name of a file to write: refused when empty or when it names a folder (``cap.pcapng/``,
    ``x/.``), as ``hfcsim.store.name_problem`` says (issue 36, defect 7: ``--pcap ""`` wrote nothing
    and exited 0, ``--pcap cap.pcapng/`` wrote the file ``cap.pcapng``). A folder that exists, a missing
    or read-only one are found when the file is made, before the run, and named with the flag."""
    from hfcsim.store import name_problem

    def parse(text: str) -> str:
        problem = name_problem(text)
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: {problem}")
        return text

    return parse
