"""Count the fuzz suite's outcomes instead of stopping at the first failure: N random cases per way
in (simulate(), --set, a scenario file), each classed as ran, refused (one line), over budget, or a
defect (traceback, engine panic, engine rejecting accepted input, a silently wrong result).

    python tools/fuzz_count.py [N] [--seed S]

For the closing notes' before/after counts; the pass/fail check is tests/test_fuzz.py.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import traceback
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import test_fuzz as fz  # noqa: E402


def classify(run) -> str:
    try:
        run()
        return "ok"
    except AssertionError as e:
        text = str(e)
        kind = "engine rejected" if "engine rejected" in text else "wrong result" if "unfinished" in text or "{" in text \
            else "bad message"
        return f"{kind}: {text.splitlines()[0][:150]}"
    except BaseException as e:  # noqa: BLE001 - the point is to catch anything
        if "panic" in str(e):
            return f"panic: {str(e).splitlines()[0][:150]}"
        frame = traceback.extract_tb(e.__traceback__)[-1]
        return f"traceback: {type(e).__name__} at {Path(frame.filename).name}:{frame.lineno}: {str(e)[:100]}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int, nargs="?", default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    outcomes: dict[str, collections.Counter] = {}
    tmp = Path(tempfile.mkdtemp())

    def ways(raw, assignments):
        argv = ["run", "--json"] + [a for k, v in assignments for a in ("--set", f"{k}={fz._toml(v)}")]
        path = tmp / "scenario.json"
        yield "simulate", lambda: fz._run_api(raw)
        yield "--set", lambda: fz._run_cli(argv)
        yield "file", lambda: (path.write_text(json.dumps(raw)), fz._run_cli(["run", str(path), "--json"]))

    @seed(args.seed)
    @settings(max_examples=args.n, database=None, deadline=None, derandomize=False, phases=["generate"],
              suppress_health_check=list(HealthCheck))
    @given(fz.scenarios())
    def run(case):
        raw, assignments = case
        for way, call in ways(raw, assignments):
            outcomes.setdefault(way, collections.Counter())[classify(call)] += 1

    run()
    for way, counter in outcomes.items():
        bad = {k: v for k, v in counter.items() if k != "ok"}
        print(f"{way}: {sum(counter.values())} cases, {sum(bad.values())} defects")
        for k, v in sorted(bad.items(), key=lambda kv: -kv[1]):
            print(f"  {v:5d}  {k}")


if __name__ == "__main__":
    main()
