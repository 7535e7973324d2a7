"""Sweeps (hfcsim.sweep), the results store (hfcsim.store) and ``hfcsim sweep``.

Every run here uses the real engine with small transfers (30 kB) and few seeds, so the file stays fast.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import hfcsim
from hfcsim import sweep as sweep_module
from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.store import Store
from hfcsim.sweep import define, summarize, t975

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
SMALL = {"flows": [{"bytes": 30000}]}


def small_sweep(**extra):
    spec = {"name": "small", "runs": 3, "base": SMALL,
            "grid": {"network.downstream_loss": [0.0, 0.05], "tcp.variant": ["tahoe", "reno"]}}
    spec.update(extra)
    return spec


# ---------------------------------------------------------------------------------------------------
# Grid expansion: the exact points, in order (last axis fastest), as resolved column values.

EXPANSIONS = [
    # (grid, zip, expected points as {key: value})
    ({"network.downstream_loss": [0, 0.01], "tcp.variant": ["tahoe", "reno"]}, None,
     [{"network.downstream_loss": 0.0, "tcp.variant": "tahoe"},
      {"network.downstream_loss": 0.0, "tcp.variant": "reno"},
      {"network.downstream_loss": 0.01, "tcp.variant": "tahoe"},
      {"network.downstream_loss": 0.01, "tcp.variant": "reno"}]),
    ({}, {"keys": ["tcp.send_buffer_bytes", "receiver.receive_buffer_bytes"],
          "values": [[8192, 8192], [16384, 32768]]},
     [{"tcp.send_buffer_bytes": 8192, "receiver.receive_buffer_bytes": 8192},
      {"tcp.send_buffer_bytes": 16384, "receiver.receive_buffer_bytes": 32768}]),
    ({"flows.0.bytes": [1000, 2000]}, {"keys": ["tcp.tick_s", "tcp.initial_window"], "values": [[0.5, 1], [0.2, 2]]},
     [{"flows.0.bytes": 1000, "tcp.tick_s": 0.5, "tcp.initial_window": 1},
      {"flows.0.bytes": 1000, "tcp.tick_s": 0.2, "tcp.initial_window": 2},
      {"flows.0.bytes": 2000, "tcp.tick_s": 0.5, "tcp.initial_window": 1},
      {"flows.0.bytes": 2000, "tcp.tick_s": 0.2, "tcp.initial_window": 2}]),
    ({"network.cm_buffer_packets": [None, 4]}, None,  # None = the optional key absent (unbounded)
     [{"network.cm_buffer_packets": None}, {"network.cm_buffer_packets": 4}]),
    ({}, None, [{}]),  # no axes: one point, the base
]


@pytest.mark.parametrize(("grid", "zipped", "expected"), EXPANSIONS)
def test_grid_expansion(grid, zipped, expected):
    spec = {"runs": 2, "seed0": 5, "grid": grid}
    if zipped is not None:
        spec["zip"] = zipped
    swept = define(spec)
    assert [p.values for p in swept.points] == expected
    assert [p.index for p in swept.points] == list(range(len(expected)))
    assert list(swept.seeds) == [5, 6]
    for point in swept.points:  # each point's scenario carries its values
        for key, value in point.values.items():
            assert point.scenario.get(key) == value


def test_zip_groups_and_base_file(tmp_path):
    (tmp_path / "base.toml").write_text("[tcp]\nvariant = 'tahoe'\n")
    (tmp_path / "s.toml").write_text(
        'runs = 1\nbase = "base.toml"\n[grid]\n"network.rtt_s" = [0.02, 0.1]\n'
        '[[zip]]\nkeys = ["tcp.mss_bytes"]\nvalues = [[536], [1460]]\n'
        '[[zip]]\nkeys = ["tcp.dupack_threshold"]\nvalues = [[1], [3]]\n')
    swept = define(tmp_path / "s.toml")
    assert swept.name == "s"
    assert len(swept.points) == 8
    assert swept.points[1].values == {"network.rtt_s": 0.02, "tcp.mss_bytes": 536, "tcp.dupack_threshold": 3}
    assert all(p.scenario.get("tcp.variant") == "tahoe" for p in swept.points)


# ---------------------------------------------------------------------------------------------------
# Validation: one-line ScenarioError naming the key and the value, before any run.

BAD_SPECS = [
    # (spec, fragment of the message)
    ({"runs": 2, "grid": {"network.downstream_los": [0.01]}},
     "grid: unknown key network.downstream_los = 0.01 (did you mean network.downstream_loss?)"),
    ({"runs": 2, "grid": {"network.mss_bytes": [536]}}, "unknown key network.mss_bytes = 536 (did you mean tcp.mss_bytes?)"),
    ({"runs": 2, "grid": {"network.downstream_loss": [0.0, 1.5]}},
     "grid: network.downstream_loss = 1.5: must be in [0, 1)"),
    ({"runs": 2, "grid": {"tcp.variant": ["reno", "vegas"]}}, 'grid: tcp.variant = "vegas": must be one of'),
    ({"runs": 2, "grid": {"tcp.variant": []}}, "grid tcp.variant = []: must be a non-empty list"),
    ({"runs": 2, "grid": {"tcp.variant": "reno"}}, 'grid tcp.variant = "reno": must be a non-empty list'),
    ({"runs": 2, "zip": {"keys": ["tcp.mss_bytes", "tcp.variant"], "values": [[536]]}},
     "zip values [536]: must be a list of 2 values"),
    ({"runs": 2, "zip": {"keys": ["tcp.mss_bytz"], "values": [[536]]}}, "zip: unknown key tcp.mss_bytz = 536"),
    ({"runs": 2, "zip": {"keys": ["tcp.mss_bytes"], "values": [[0]]}}, "zip: tcp.mss_bytes = 0: must be in [1, 65495]"),
    ({"runs": 2, "grid": {"tcp.mss_bytes": [536]}, "zip": {"keys": ["tcp.mss_bytes"], "values": [[1460]]}},
     "tcp.mss_bytes: swept twice"),
    ({"runs": 2, "grid": {"network.cm_buffer_bytes": [10240], "network.cm_buffer_packets": [7]}},
     "grid point 0 (network.cm_buffer_bytes = 10240, network.cm_buffer_packets = 7): "
     "network.cm_buffer_packets = 7: only one of"),
    ({"runs": 2, "grid": {"tcp.mss_bytes": [536, 536]}}, "is the same scenario as grid point 0"),
    ({"runs": 0}, "runs = 0: must be an integer >= 1"),
    ({"runs": "5"}, 'runs = "5": must be an integer >= 1'),
    ({"runs": True}, "runs = true: must be an integer >= 1"),
    ({}, "runs: missing"),
    ({"runs": 2, "seed0": -1}, "seed0 = -1: must be an integer >= 0"),
    ({"runs": 2, "runz": 3}, "unknown sweep key runz = 3 (did you mean runs?)"),
    ({"runs": 2, "network": {"downstream_loss": 0.1}}, "unknown sweep key network (scenario keys go in [base]"),
    ({"runs": 2, "base": {"tcp": {"variant": "vegas"}}}, 'base: tcp.variant = "vegas"'),
    ({"runs": 2, "name": "a/b"}, 'name = "a/b": must be a non-empty string usable as a folder name'),
]


@pytest.mark.parametrize(("spec", "fragment"), BAD_SPECS)
def test_bad_spec(spec, fragment):
    with pytest.raises(ScenarioError) as info:
        define(spec)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


@pytest.mark.parametrize("runs", [0, -3, 2.5, "x"])
def test_bad_runs_argument(runs):
    # a value of the wrong type is named with its type (issue 36): "runs = 2.5: ... (got float)"
    with pytest.raises(ScenarioError, match=r"^runs = .*: must be an integer >= 1, <= 1000000( \(got \w+\))?$"):
        define({"runs": 2}, runs=runs)


def test_bad_value_fails_before_any_run(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(sweep_module, "run_batch", lambda doc, seeds: calls.append(seeds) or [])
    spec = {"runs": 2, "grid": {"network.downstream_loss": [0.0, 0.01, 2.0]}}
    with pytest.raises(ScenarioError, match="network.downstream_loss = 2.0"):
        hfcsim.sweep(spec, jobs=1, out=tmp_path)
    assert calls == []
    assert not any(tmp_path.iterdir())


CLI_BAD = [
    # (sweep file text, extra argv, fragment of the one stderr line)
    ('runs = 2\n[grid]\n"network.downstream_los" = [0.01]\n', [], "did you mean network.downstream_loss?"),
    ('runs = 2\n[grid]\n"network.downstream_loss" = [0.01, 1.5]\n', [],
     "network.downstream_loss = 1.5: must be in [0, 1)"),
    ("runs = 2\n", ["--runs", "0"], "--runs 0: must be >= 1"),
    ("runs = 2\n", ["--jobs", "two"], "--jobs two: must be an integer"),
    ("runs = -2\n", [], "runs = -2: must be an integer >= 1"),
    ("runs = [\n", [], "invalid TOML"),
    (None, [], "no such scenario file"),
]


@pytest.mark.parametrize(("text", "argv", "fragment"), CLI_BAD)
def test_cli_bad_input(capsys, tmp_path, text, argv, fragment):
    path = tmp_path / "s.toml"
    if text is not None:
        path.write_text(text)
    status = main(["sweep", str(path), "--out", str(tmp_path / "out"), *argv])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    assert err.startswith("hfcsim: error: ") and err.count("\n") == 1
    assert fragment in err
    assert not (tmp_path / "out").exists()


def test_cli_bad_input_subprocess(tmp_path, subprocess_env):
    path = tmp_path / "s.toml"
    path.write_text('runs = 2\n[grid]\n"tcp.variant" = ["vegas"]\n')
    proc = subprocess.run([sys.executable, "-m", "hfcsim", "sweep", str(path)], capture_output=True,
                          text=True, env=subprocess_env, cwd=tmp_path, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert 'tcp.variant = "vegas"' in proc.stderr


# ---------------------------------------------------------------------------------------------------
# Rows: columns, order, identical whatever the executor.


def test_rows_and_columns(tmp_path):
    frame = hfcsim.sweep(small_sweep(), jobs=1, out=tmp_path, progress=False)
    assert list(frame.columns[:4]) == ["network.downstream_loss", "tcp.variant", "seed", "flow"]
    assert list(frame.columns[-2:]) == ["scenario_hash", "hfcsim_version"]
    assert len(frame) == 4 * 3  # 4 points x 3 seeds x 1 flow
    assert list(frame["seed"]) == [1, 2, 3] * 4
    assert list(frame["tcp.variant"]) == ["tahoe"] * 3 + ["reno"] * 3 + ["tahoe"] * 3 + ["reno"] * 3
    assert set(frame["hfcsim_version"]) == {hfcsim.__version__}
    spec = define(small_sweep())
    assert list(frame["scenario_hash"][::3]) == [p.hash for p in spec.points]
    # the rows are the engine's: one direct run matches
    direct = hfcsim.simulate(spec.points[3].scenario, seed=2).flows[0]
    row = frame.iloc[3 * 3 + 1]
    assert {k: row[k] for k in direct} == pytest.approx(direct, nan_ok=True)
    assert (tmp_path / f"v{hfcsim.__version__}" / "results.parquet").is_file()
    summary = pd.read_csv(tmp_path / f"v{hfcsim.__version__}" / "summary.csv")
    assert "throughput_bps" in set(summary["metric"])


def test_jobs_1_and_2_identical(tmp_path):
    one = hfcsim.sweep(small_sweep(runs=4), jobs=1, out=tmp_path / "one", progress=False)
    two = hfcsim.sweep(small_sweep(runs=4), jobs=2, out=tmp_path / "two", progress=False, batch_size=1)
    assert_frame_equal(one, two)


# ---------------------------------------------------------------------------------------------------
# Resume


def test_rerun_of_complete_sweep_runs_nothing(tmp_path, monkeypatch):
    first = hfcsim.sweep(small_sweep(), jobs=1, out=tmp_path, progress=False)
    calls = []
    monkeypatch.setattr(sweep_module, "run_batch", lambda doc, seeds: calls.append(seeds) or [])
    again = hfcsim.sweep(small_sweep(), jobs=1, out=tmp_path, progress=False)
    assert calls == []
    assert_frame_equal(first, again)
    # more runs: only the new seeds run
    monkeypatch.undo()
    seen = []
    real = sweep_module.run_batch
    monkeypatch.setattr(sweep_module, "run_batch", lambda doc, seeds: seen.extend(seeds) or real(doc, seeds))
    more = hfcsim.sweep(small_sweep(), runs=5, jobs=1, out=tmp_path, progress=False)
    assert sorted(seen) == [4, 4, 4, 4, 5, 5, 5, 5]
    assert_frame_equal(more[more["seed"] <= 3].reset_index(drop=True), first)


def test_partial_parts_and_stray_temp_files_resume(tmp_path):
    """A store holding some parts and a torn temporary file completes to the same table."""
    full = hfcsim.sweep(small_sweep(runs=4), jobs=1, out=tmp_path / "full", progress=False)
    spec = define(small_sweep(runs=4))
    store = Store(tmp_path / "part")
    point = spec.points[1]
    rows = sweep_module.run_batch(point.document, (2, 3))
    store.write_part(point.hash, (2, 3), sweep_module._complete_rows(spec, point, rows, store.version), spec.keys)
    rows = sweep_module.run_batch(point.document, (3, 4))  # overlaps the part above at seed 3
    store.write_part(point.hash, (3, 4), sweep_module._complete_rows(spec, point, rows, store.version), spec.keys)
    (store.parts / f".{point.hash}-s1-1.parquet.999.deadbeef.tmp").write_bytes(b"PAR1 torn")
    resumed = hfcsim.sweep(small_sweep(runs=4), jobs=1, out=tmp_path / "part", progress=False)
    assert_frame_equal(full, resumed)


def test_kill_9_and_resume(tmp_path, subprocess_env):
    # ~1000 runs of a 3 MB transfer: a few seconds with --jobs 1, written as ~16 parts
    (tmp_path / "s.toml").write_text(
        'name = "kill"\nruns = 250\n[base.network]\ndownstream_loss = 0.01\n'
        '[grid]\n"tcp.variant" = ["tahoe", "reno"]\n"tcp.send_buffer_bytes" = [8192, 16384]\n')
    command = [sys.executable, "-m", "hfcsim", "sweep", str(tmp_path / "s.toml"), "--jobs", "1", "--json"]
    parts = tmp_path / "killed" / f"v{hfcsim.__version__}" / "parts"
    proc = subprocess.Popen([*command, "--out", str(tmp_path / "killed")], env=subprocess_env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (parts.is_dir() and any(p.suffix == ".parquet" for p in parts.iterdir())):
        assert proc.poll() is None, "the sweep finished before any part was seen"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    stored_before = sum(len(s) for s in Store(tmp_path / "killed").stored().values())
    assert 0 < stored_before < 1000, "the kill should land part-way"

    for out in ("killed", "clean"):
        done = subprocess.run([*command, "--out", str(tmp_path / out)], env=subprocess_env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["rows"] == 1000
    resumed = pd.read_parquet(tmp_path / "killed" / f"v{hfcsim.__version__}" / "results.parquet")
    clean = pd.read_parquet(tmp_path / "clean" / f"v{hfcsim.__version__}" / "results.parquet")
    assert not resumed.duplicated(["scenario_hash", "seed", "flow"]).any()
    assert_frame_equal(resumed, clean)
    # every stored run is in exactly one part
    parts_rows = pd.concat([pd.read_parquet(p) for p in parts.glob("*.parquet")])
    assert len(parts_rows) == 1000


def _children(pid: int) -> list[int]:
    """The live (not zombie) processes whose parent is ``pid``, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if int(ppid) == pid and state != "Z":
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_die_with_a_killed_sweep(tmp_path, subprocess_env):
    # Issue 12, defect D: kill -9 of a --jobs 2 sweep left its two workers and the resource tracker
    # running for minutes. They must go with it: workers at once (PR_SET_PDEATHSIG, or the parent watch),
    # the resource tracker when their end of its pipe closes.
    command = [sys.executable, "-m", "hfcsim", "sweep", str(SCENARIOS / "sweeps" / "sweep-loss.toml"),
               "--runs", "3000", "--jobs", "2", "--json", "--out", str(tmp_path / "out")]
    proc = subprocess.Popen(command, env=subprocess_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while len(children) < 3:  # two workers and the resource tracker
            assert proc.poll() is None, "the sweep ended before its workers were seen"
            assert time.monotonic() < deadline, f"workers not seen: {children}"
            time.sleep(0.05)
            children = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 5
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [c for c in children if _alive(c)] == [], "processes outlived the killed sweep"
    finally:
        for c in children:
            if _alive(c):
                os.kill(c, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("call", ["_watch_parent", "_die_with_parent"])
def test_a_worker_whose_parent_is_gone_ends_itself(subprocess_env, call):
    # The portable half of defect D's fix (and the race where the parent dies before the worker starts):
    # a worker that finds another parent than the one it was started by ends at once, status 1.
    code = f"import os; from hfcsim.sweep import {call}; {call}(os.getppid() + 1); import time; time.sleep(30)"
    done = subprocess.run([sys.executable, "-c", code], env=subprocess_env, timeout=20, check=False)
    assert done.returncode == 1


# ---------------------------------------------------------------------------------------------------
# Dask


def test_dask_matches_local_processes(tmp_path):
    distributed = pytest.importorskip("distributed")
    local = hfcsim.sweep(small_sweep(), jobs=2, out=tmp_path / "local", progress=False)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        on_client = hfcsim.sweep(small_sweep(), dask=client, out=tmp_path / "client", progress=False)
        by_address = hfcsim.sweep(small_sweep(), dask=cluster.scheduler_address, out=tmp_path / "address",
                                  progress=False)
    assert_frame_equal(local, on_client)
    assert_frame_equal(local, by_address)


# ---------------------------------------------------------------------------------------------------
# Summaries


def test_t_quantile():
    # t_{0.975, df}: the table (df <= 30) and the expansion beyond, against published values
    for df, expected in [(1, 12.7062), (2, 4.3027), (10, 2.2281), (30, 2.0423), (31, 2.0395),
                         (40, 2.0211), (60, 2.0003), (120, 1.9799)]:
        assert t975(df) == pytest.approx(expected, abs=1e-4)
    assert math.isnan(t975(0))


def test_summarize_by_hand():
    frame = pd.DataFrame({
        "network.downstream_loss": [0.0] * 4 + [0.01] * 3,
        "seed": [1, 2, 3, 4, 1, 2, 3],
        "flow": [0] * 7,
        "throughput_bps": [1.0, 2.0, 3.0, 4.0, 10.0, None, 20.0],
        "scenario_hash": ["a"] * 4 + ["b"] * 3,
        "hfcsim_version": ["x"] * 7,
    })
    summary = summarize(frame)
    assert list(summary.columns) == ["network.downstream_loss", "metric", "count", "mean", "median", "p25",
                                     "p75", "ci95_low", "ci95_high", "scenario_hash"]
    a, b = summary.iloc[0], summary.iloc[1]
    # point a: 1, 2, 3, 4 -> mean 2.5, median 2.5, p25 = 1 + 0.75 * 1 = 1.75, p75 = 3.25 (linear)
    # s = sqrt(((1.5^2 + 0.5^2) * 2) / 3) = sqrt(5/3); half width = t(0.975, 3) * s / 2 = 3.182446305 * 0.645497
    half = 3.182446305 * math.sqrt(5 / 3) / 2
    assert (a["count"], a["mean"], a["median"], a["p25"], a["p75"]) == (4, 2.5, 2.5, 1.75, 3.25)
    assert (a["ci95_low"], a["ci95_high"]) == pytest.approx((2.5 - half, 2.5 + half), rel=1e-12)
    assert a["ci95_low"] == pytest.approx(0.445739743, abs=1e-8)
    # point b: the missing value is not counted: 10, 20 -> mean 15, p25 12.5, p75 17.5,
    # s = sqrt(50), half = 12.706204736 * sqrt(50) / sqrt(2) = 63.53102368
    assert (b["count"], b["mean"], b["median"], b["p25"], b["p75"]) == (2, 15.0, 15.0, 12.5, 17.5)
    assert (b["ci95_low"], b["ci95_high"]) == pytest.approx((15 - 63.53102368, 15 + 63.53102368), rel=1e-9)


def test_summarize_single_value_and_all_metrics():
    frame = pd.DataFrame({"seed": [1], "flow": [0], "throughput_bps": [5.0], "timeouts": [2],
                          "finished": [True], "scenario_hash": ["a"], "hfcsim_version": ["x"]})
    summary = summarize(frame, metric=None)
    assert list(summary["metric"]) == ["throughput_bps", "timeouts"]  # numeric, not bool, not seed/flow
    assert list(summary["count"]) == [1, 1]
    assert summary["ci95_low"].isna().all()  # no CI from one value
    assert list(summary["mean"]) == [5.0, 2.0]


def summarize_reference(df, metric="throughput_bps", per_flow=False):
    """Issue 12, defect F: the summary as it was built before it was vectorised, point by point: the
    straightforward definition that ``summarize`` must equal bit for bit."""
    import numpy as np

    swept = [c for c in df.columns if "." in c]
    if metric is None:
        metrics = [c for c in df.columns if c not in (*swept, *sweep_module.NOT_METRICS)
                   and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]
    else:
        metrics = [metric] if isinstance(metric, str) else list(metric)
    keys = [c for c in ("scenario_hash",) if c in df.columns] + (["flow"] if per_flow else [])
    records = []
    groups = df.groupby(keys, sort=False, dropna=False) if keys else [((), df)]
    for _, group in groups:
        first = group.iloc[0]
        for m in metrics:
            values = pd.to_numeric(group[m], errors="coerce").dropna().to_numpy(dtype=float)
            n = len(values)
            record = {c: first[c] for c in swept}
            if per_flow:
                record["flow"] = first["flow"]
            record["metric"] = m
            if n:
                mean = float(values.mean())
                p25, median, p75 = (float(q) for q in np.percentile(values, [25, 50, 75]))
            else:
                mean = median = p25 = p75 = math.nan
            half = t975(n - 1) * float(values.std(ddof=1)) / math.sqrt(n) if n >= 2 else math.nan
            record.update(count=n, mean=mean, median=median, p25=p25, p75=p75,
                          ci95_low=mean - half, ci95_high=mean + half)
            if "scenario_hash" in df.columns:
                record["scenario_hash"] = first["scenario_hash"]
            records.append(record)
    columns = [*swept, *(["flow"] if per_flow else []), "metric", *sweep_module.SUMMARY_STATS,
               *(["scenario_hash"] if "scenario_hash" in df.columns else [])]
    return pd.DataFrame.from_records(records, columns=columns)


def _summary_frame():
    """Points with 1 to 40 runs (n = 1, no CI; n > 31, t beyond the table), missing values (an unfinished
    flow), a point with none at all, two flows, values spread over many magnitudes; rows interleaved."""
    import numpy as np

    rng = np.random.default_rng(12)
    parts = []
    for point, runs in enumerate([1, 2, 3, 7, 8, 9, 16, 31, 33, 40, 5, 1]):
        for flow in (0, 1):
            n = runs
            tput = rng.standard_normal(n) * 10 ** rng.uniform(-2, 7, n) + 3e6
            if point == 3:
                tput[::2] = np.nan
            if point == 10:
                tput[:] = np.nan
            parts.append(pd.DataFrame({
                "network.downstream_loss": point / 100, "tcp.variant": ["reno", "tahoe"][point % 2],
                "network.cm_buffer_bytes": [None, 10240][point % 2],
                "seed": np.arange(1, n + 1), "flow": flow, "throughput_bps": tput,
                "timeouts": rng.integers(0, 5, n), "duration_s": rng.uniform(0, 1e3, n),
                "finished": ~np.isnan(tput), "first_ack_delay_s": np.where(rng.uniform(size=n) < 0.3, None, 0.2),
                "scenario_hash": f"{point:016x}", "hfcsim_version": "x"}))
    frame = pd.concat(parts, ignore_index=True)
    return frame.sample(frac=1, random_state=3).reset_index(drop=True)  # groups interleaved


@pytest.mark.parametrize("per_flow", [False, True])
@pytest.mark.parametrize("metric", [None, "throughput_bps", ["timeouts", "first_ack_delay_s"]])
@pytest.mark.parametrize("frame", [
    pytest.param(_summary_frame, id="points"),
    pytest.param(lambda: _summary_frame().drop(columns="scenario_hash"), id="no-hash"),
    pytest.param(lambda: _summary_frame().iloc[:0], id="empty"),
    pytest.param(lambda: _summary_frame().iloc[:1], id="one-row"),
])
def test_summarize_equals_the_point_by_point_definition(frame, metric, per_flow):
    df = frame()
    assert_frame_equal(summarize(df, metric=metric, per_flow=per_flow),
                       summarize_reference(df, metric=metric, per_flow=per_flow), check_exact=True)


def test_summarize_equals_the_definition_on_a_real_sweep(tmp_path):
    frame = hfcsim.sweep(small_sweep(runs=3), jobs=1, out=tmp_path, progress=False)
    assert_frame_equal(summarize(frame, metric=None), summarize_reference(frame, metric=None), check_exact=True)
    assert_frame_equal(summarize(frame, per_flow=True), summarize_reference(frame, per_flow=True), check_exact=True)


# ---------------------------------------------------------------------------------------------------
# Engine versions are kept apart


def test_other_version_not_mixed(tmp_path, capsys):
    other = Store(tmp_path, version="0.0.1-fake")
    spec = define(small_sweep(runs=2))
    point = spec.points[0]
    fake_rows = [{**point.values, "seed": s, "flow": 0, "throughput_bps": -1.0, "scenario_hash": point.hash,
                  "hfcsim_version": "0.0.1-fake"} for s in (1, 2)]
    other.write_part(point.hash, (1, 2), fake_rows, spec.keys)
    frame = hfcsim.sweep(small_sweep(runs=2), jobs=1, out=tmp_path, progress=False)
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "hfcsim: note:" in err and "v0.0.1-fake" in err and "not mixed in" in err
    assert len(frame) == 4 * 2
    assert (frame["throughput_bps"] > 0).all()
    assert set(frame["hfcsim_version"]) == {hfcsim.__version__}
    assert (tmp_path / "v0.0.1-fake" / "parts").is_dir()  # left alone


# ---------------------------------------------------------------------------------------------------
# The command


def test_cli_json_and_human(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('runs = 2\n[[base.flows]]\nbytes = 30000\n[grid]\n"network.downstream_loss" = [0.0, 0.05]\n')
    status = main(["sweep", str(path), "--out", str(tmp_path / "out"), "--json", "--jobs", "1"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    doc = json.loads(out)
    assert doc["rows"] == 4 and doc["out"] == str(tmp_path / "out" / f"v{hfcsim.__version__}")
    # a record per point and metric (issue 36, defect 14: the measured throughput beside the finished one's)
    throughput = [r for r in doc["summary"] if r["metric"] == "throughput_bps"]
    assert [r["network.downstream_loss"] for r in throughput] == [0.0, 0.05]
    assert [r["count"] for r in throughput] == [2, 2]
    # and the places' (issue 35: the worst place's p99 wait, the drops at every place)
    assert {r["metric"] for r in doc["summary"]} == {"throughput_bps", "measured_throughput_bps",
                                                     "worst_place_wait_p99_s", "place_drops"}
    status = main(["sweep", str(path), "--out", str(tmp_path / "out"), "--runs", "3"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["network.downstream_loss", "n", "mean"]
    assert [line.split()[:2] for line in lines[1:3]] == [["0.0", "3"], ["0.05", "3"]]
    assert lines[-1].startswith("6 rows -> ")


def test_example_sweeps_are_valid():
    for path in sorted((SCENARIOS / "sweeps").glob("sweep-*.toml")):
        spec = define(path)
        assert spec.points and spec.runs >= 1, path
    assert len(list((SCENARIOS / "sweeps").glob("sweep-*.toml"))) == 2


def test_import_hfcsim_does_not_import_pandas(subprocess_env):
    code = "import sys, hfcsim; f = hfcsim.sweep; assert callable(f); print('pandas' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env,
                          timeout=60, check=True)
    assert proc.stdout.strip() == "False"


# ---------------------------------------------------------------------------------------------------
# Issue 12, defect E: a huge runs is one line naming the value and the limit, not a MemoryError.

HUGE = 10**18


@pytest.mark.parametrize(("spec", "runs", "fragment"), [
    ({"runs": HUGE}, None, f"runs = {HUGE}: must be an integer >= 1, <= 1000000"),
    ({"runs": 1}, HUGE, f"runs = {HUGE}: must be an integer >= 1, <= 1000000"),
    ({"runs": 1_000_001}, None, "runs = 1000001: must be an integer >= 1, <= 1000000"),
    ({"runs": 1_000_000, "grid": {"network.downstream_loss": [i / 100 for i in range(11)]}}, None,
     "11 grid points x 1000000 runs = 11000000 runs, more than 10000000 in one sweep"),
])
def test_huge_runs_are_refused_with_the_limit(spec, runs, fragment):
    with pytest.raises(ScenarioError) as e:
        define(spec, runs)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_huge_runs_for_a_defined_spec_are_refused():
    spec = define({"runs": 1})
    with pytest.raises(ScenarioError, match=f"runs = {HUGE}: must be an integer >= 1, <= 1000000"):
        define(spec, HUGE)


@pytest.mark.parametrize(("argv", "fragment"), [
    (["sweep", "{sweep}", "--runs", str(HUGE)], f"runs = {HUGE}: must be an integer >= 1, <= 1000000"),
    (["sweep", "{huge_sweep}"], f"runs = {HUGE}: must be an integer >= 1, <= 1000000"),
    (["reproduce", "cohen98", "--runs", str(HUGE)], f"--runs {HUGE}: must be >= 1, <= 1000000"),
])
def test_huge_runs_on_the_command_line_exit_2(capsys, tmp_path, argv, fragment):
    from hfcsim.cli import main

    (tmp_path / "huge.toml").write_text(f"runs = {HUGE}\n")
    paths = {"sweep": str(SCENARIOS / "sweeps" / "sweep-loss.toml"), "huge_sweep": str(tmp_path / "huge.toml")}
    argv = [a.format(**paths) for a in argv] + ["--out", str(tmp_path / "out")]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and fragment in err
    assert not (tmp_path / "out").exists()
