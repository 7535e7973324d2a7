"""``hfcsim plot`` and ``hfcsim.plot_sweep``: a sweep's metric drawn against a grid key (issue 37, "Results").

The figures are checked through matplotlib's objects (the lines' data, the axes' labels and scales), never
their pixels. One tiny real sweep (the 30 kB flows of test_sweep.py's ``small_sweep``, 2 seeds) is run
once for the module; the statistics are checked on hand-made rows whose answers are worked out here.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import hfcsim
from hfcsim import plot as plot_module
from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.plot import axis_unit, plot_sweep

LOSS, VARIANT = "network.downstream_loss", "tcp.variant"
# test_sweep.py's small_sweep with 2 seeds: 2 x 2 grid points of one 30 kB download each.
TINY = {"name": "tiny", "runs": 2, "base": {"flows": [{"bytes": 30000}]},
        "grid": {LOSS: [0.0, 0.05], VARIANT: ["tahoe", "reno"]}}
TINY_TOML = """name = "tiny"
runs = 2
[base]
flows = [{bytes = 30000}]
[grid]
"network.downstream_loss" = [0.0, 0.05]
"tcp.variant" = ["tahoe", "reno"]
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(the results folder, the rows) of the tiny sweep."""
    root = tmp_path_factory.mktemp("tiny") / "hfcsim-results" / "tiny"
    frame = hfcsim.sweep(TINY, jobs=1, out=root, progress=False)
    return root, frame


@pytest.fixture
def drawn(monkeypatch):
    """The Figures the CLI draws, kept for inspection."""
    figures = []
    real = plot_module._draw

    def keep(*args, **kwargs):
        fig, info = real(*args, **kwargs)
        figures.append(fig)
        return fig, info

    monkeypatch.setattr(plot_module, "_draw", keep)
    return figures


def _lines(ax):
    return [line for line in ax.get_lines() if not line.get_label().startswith("_")]


# ---------------------------------------------------------------------------------------------------
# A real sweep, drawn


def test_cli_draws_the_tiny_sweep(tiny, tmp_path, drawn, capsys):
    root, frame = tiny
    png = tmp_path / "tiny.png"
    status = main(["plot", str(root), "--x", LOSS, "--y", "throughput_bps", "--by", VARIANT, "--out", str(png)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert err == ""
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out == (f"throughput_bps against {LOSS} by {VARIANT}: 2 lines, 4 points, median of 2 seeds per point, "
                   f"band: 10-90 % of the runs -> {png}\n")
    (fig,) = drawn
    ax = fig.axes[0]
    assert ax.get_xlabel() == LOSS
    assert ax.get_ylabel() == "throughput_bps (Mb/s)"  # 30 kB at a few Mb/s: drawn in Mb/s
    assert ax.get_title(loc="left") == f"tiny: throughput_bps against {LOSS}"
    assert [t.get_text() for t in ax.texts] == ["median of 2 seeds per point"]
    assert ax.get_xscale() == "linear" and ax.get_yscale() == "linear"  # 0 on x; y within a decade
    lines = _lines(ax)
    assert [line.get_label() for line in lines] == ["tahoe", "reno"]  # one per --by value, in grid order
    assert ax.get_legend().get_title().get_text() == VARIANT
    assert ax.get_legend().get_texts()[-1].get_text() == "band: 10-90 % of the runs"
    for line, variant in zip(lines, ["tahoe", "reno"], strict=True):
        assert list(line.get_xdata()) == [0.0, 0.05]
        expected = [np.median(frame[(frame[VARIANT] == variant) & (frame[LOSS] == loss)]["throughput_bps"]) / 1e6
                    for loss in (0.0, 0.05)]
        assert list(line.get_ydata()) == pytest.approx(expected, rel=1e-12)
    assert len(ax.collections) == 2  # a band per line


@pytest.mark.parametrize("source", ["folder", "version folder", "parquet", "toml"])
def test_every_way_to_name_the_sweep(tiny, tmp_path, source):
    root, frame = tiny
    version = root / f"v{hfcsim.__version__}"
    if source == "toml":
        (tmp_path / "tiny.toml").write_text(TINY_TOML)
        rows, name = plot_module.read_sweep(tmp_path / "tiny.toml", results=root)
    else:
        path = {"folder": root, "version folder": version, "parquet": version / "results.parquet"}[source]
        rows, name = plot_module.read_sweep(path)
    assert name == "tiny"
    pd.testing.assert_frame_equal(rows.reset_index(drop=True), frame.reset_index(drop=True), check_dtype=False)


def test_api_returns_the_figure_and_draws_categories(tiny):
    _, frame = tiny
    fig = hfcsim.plot_sweep(frame, x=VARIANT, y="rtt_mean_s", by=LOSS, stat="mean", band="minmax")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["tahoe", "reno"]
    assert ax.get_ylabel() in ("rtt_mean_s (ms)", "rtt_mean_s (s)")
    lines = _lines(ax)
    assert [line.get_label() for line in lines] == ["0", "0.05"]
    factor = 1e3 if ax.get_ylabel().endswith("(ms)") else 1.0
    for line, loss in zip(lines, (0.0, 0.05), strict=True):
        expected = [frame[(frame[VARIANT] == v) & (frame[LOSS] == loss)]["rtt_mean_s"].mean() * factor
                    for v in ("tahoe", "reno")]
        assert list(line.get_ydata()) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------------
# The statistics, on hand-made rows

def _rows(values, flows=1, metric="throughput_bps"):
    """Rows of a 2 x 2 sweep (network.rtt_s x tcp.variant), one value per seed: ``values`` at every point."""
    out = []
    for rtt in (0.01, 0.02):
        for variant in ("reno", "tahoe"):
            for seed, v in enumerate(values, start=1):
                for flow in range(flows):
                    out.append({"network.rtt_s": rtt, VARIANT: variant, "seed": seed, "flow": flow, metric: v,
                                "scenario_hash": f"{rtt}{variant}"})
    return pd.DataFrame(out)


# Five seeds of 1 .. 5 Mb/s at every point. numpy's linear percentiles: p10 = 1 + 0.4 = 1.4, p90 = 4.6,
# p25 = 2, p75 = 4; the mean 3 with s = sqrt(2.5) and t_{0.975, 4} = 2.776445105: half-width
# 2.776445105 * 1.58113883 / sqrt(5) = 1.963243...
HALF = 2.776445105 * math.sqrt(2.5) / math.sqrt(5)
STATS = [
    ("median", "p10-p90", 3.0, (1.4, 4.6)),
    ("mean", "ci95", 3.0, (3 - HALF, 3 + HALF)),
    ("p90", "p25-p75", 4.6, (2.0, 4.0)),
    ("min", "minmax", 1.0, (1.0, 5.0)),
    ("max", "none", 5.0, None),
]


@pytest.mark.parametrize(("stat", "band", "central", "interval"), STATS)
def test_statistic_and_band(stat, band, central, interval):
    fig = plot_sweep(_rows([1e6, 2e6, 3e6, 4e6, 5e6]), x="network.rtt_s", y="throughput_bps", by=VARIANT,
                     stat=stat, band=band)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "network.rtt_s (ms)"  # 0.01 s and 0.02 s drawn as 10 and 20 ms
    for line in _lines(ax):
        assert list(line.get_xdata()) == [10.0, 20.0]
        assert list(line.get_ydata()) == pytest.approx([central, central])
    if interval is None:
        assert len(ax.collections) == 0
        return
    for band_poly in ax.collections:
        ys = band_poly.get_paths()[0].vertices[:, 1]
        assert min(ys) == pytest.approx(interval[0]) and max(ys) == pytest.approx(interval[1])


def test_a_run_metric_counts_once_per_run():
    # place_drops is the run's (every flow's row repeats it): p25 of the runs [10, 20] is 12.5; counted per
    # row ([10, 10, 20, 20]) it would be 10.
    fig = plot_sweep(_rows([10, 20], flows=2, metric="place_drops"), x="network.rtt_s", y="place_drops",
                     by=VARIANT, stat="p25", band="none")
    for line in _lines(fig.axes[0]):
        assert list(line.get_ydata()) == [12.5, 12.5]
    # a flow's metric counts every flow's row (as hfcsim sweep's table does): p25 of [10, 10, 20, 20] is 10
    fig = plot_sweep(_rows([10, 20], flows=2, metric="timeouts"), x="network.rtt_s", y="timeouts", by=VARIANT,
                     stat="p25", band="none")
    for line in _lines(fig.axes[0]):
        assert list(line.get_ydata()) == [10.0, 10.0]
    assert fig.axes[0].texts[0].get_text() == "25th percentile of 2 seeds per point, every flow of each"


@pytest.mark.parametrize(("name", "values", "expected"), [
    ("rtt_mean_s", [0.25, 0.01], (1e-3, "ms")),
    ("rtt_mean_s", [2.0, 0.5], (1.0, "s")),
    ("access_delay_mean_s", [5e-4], (1e-6, "µs")),
    ("throughput_bps", [2.5e7, 1e5], (1e6, "Mb/s")),
    ("throughput_bps", [1.2e9], (1e9, "Gb/s")),
    ("throughput_bps", [5e4], (1e3, "kb/s")),
    ("tcp.send_buffer_bytes", [8192, 24576], (1024.0, "KiB")),
    ("flows.0.bytes", [30000, 300000], (1e3, "kB")),
    ("flows.0.bytes", [3e6], (1e6, "MB")),
    ("network.cm_buffer_bytes", [512], (1.0, "B")),
    ("timeouts", [3, 4], (1.0, "")),
    ("network.downstream_loss", [0.01], (1.0, "")),
])
def test_units_from_the_suffix(name, values, expected):
    assert axis_unit(name, values) == expected


@pytest.mark.parametrize(("rtts", "xscale", "expected"), [
    ([0.001, 0.01, 0.1], "auto", "log"),      # two decades: log
    ([0.01, 0.02, 0.5], "auto", "linear"),    # a ratio of 50: linear
    ([0.01, 0.02, 0.5], "log", "log"),        # asked
    ([0.001, 0.01, 0.1], "linear", "linear"),  # asked
])
def test_log_axis_when_the_grid_spans_decades(rtts, xscale, expected):
    rows = pd.DataFrame([{"network.rtt_s": r, "seed": 1, "flow": 0, "throughput_bps": 1e6} for r in rtts])
    fig = plot_sweep(rows, x="network.rtt_s", y="throughput_bps", xscale=xscale)
    assert fig.axes[0].get_xscale() == expected


# ---------------------------------------------------------------------------------------------------
# Bad input: one line naming what is wrong and what there is, exit 2, no image

CLI_BAD = [
    (["--y", "thruput"], "--y thruput: not a metric of the sweep (did you mean throughput_bps?); the sweep's are "
                         "bytes, delivered_bytes,"),
    (["--y", "end_reason"], "--y end_reason: not a numeric metric (its values are text, e.g. finished); the "
                            "sweep's numeric metrics are bytes,"),
    (["--y", "finished"], "--y finished: not a numeric metric (its values are true/false)"),
    (["--y", VARIANT], f"--y {VARIANT}: a grid key, not a metric"),
    (["--x", "network.loss"], "--x network.loss: not a grid key of the sweep (did you mean network.downstream_loss?); "
                              f"the sweep's are {LOSS}, {VARIANT}"),
    (["--x", "throughput_bps"], "--x throughput_bps: a metric, not a grid key; the sweep's are"),
    (["--by", "tcp.varient"], "--by tcp.varient: not a grid key of the sweep (did you mean tcp.variant?)"),
    (["--by", LOSS], f"--by {LOSS}: the same key as --x"),
    (["--by", None], f"grid key {VARIANT} also varies across the points drawn: name it with --by, or fix it "
                     f"(--where {VARIANT}=tahoe)"),
    (["--where", f"{VARIANT}=vegas"], f"--where {VARIANT}=vegas: no run has it ({VARIANT}: tahoe, reno)"),
    (["--where", "tcp.mss_bytes=536"], "--where tcp.mss_bytes: not a grid key of the sweep"),
    (["--where", "nonsense"], "--where nonsense: must be KEY=VALUE"),
    (["--stat", "p101"], "--stat p101: must be mean, median, min, max or a percentile p0 .. p100"),
    (["--stat", "p100.5"], "--stat p100.5: must be mean, median, min, max or a percentile p0 .. p100"),
    (["--band", "sd"], "--band: invalid choice: 'sd'"),
    (["--xscale", "log"], f"--xscale log: {LOSS} has 0, which a log axis cannot show"),
    (["--flow", "3"], "--flow 3: no such flow (the runs have flows 0)"),
    (["--runs", "2"], "--runs 2: only with a SWEEP.toml"),
    (["--out", "x.jpg"], "--out x.jpg: must end in .png, .svg, .pdf"),
    (["--out", "nofolder/x.png"], "--out nofolder/x.png: cannot write"),
    (["--y", "ping_during_p50_s"], "--y ping_during_p50_s: no run has a value of it at the points drawn"),
]


@pytest.mark.parametrize(("change", "fragment"), CLI_BAD)
def test_cli_bad_input(tiny, tmp_path, monkeypatch, capsys, change, fragment):
    root, _ = tiny
    monkeypatch.chdir(tmp_path)
    args = {"--x": LOSS, "--y": "throughput_bps", "--by": VARIANT}
    extra = []
    for flag, value in zip(change[::2], change[1::2], strict=True):
        if flag in args:
            args[flag] = value
        else:
            extra += [flag, value]
    argv = ["plot", str(root), *(w for f, v in args.items() if v is not None for w in (f, v)), *extra]
    status = main(argv)
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.startswith("hfcsim: error: ") and err.count("\n") == 1, err
    assert fragment in err, err
    assert list(tmp_path.iterdir()) == []  # no image, no temporary file


@pytest.mark.parametrize(("make", "fragment"), [
    (lambda d: d / "missing", "missing: no such file or folder (a sweep's results folder, its results.parquet, "
                              "or its SWEEP.toml)"),
    (lambda d: d / "missing.toml", "missing.toml: no such sweep file"),
    (lambda d: d, "no results.parquet in this folder or in"),
    (lambda d: (d / "x.parquet").write_text("not parquet") and d / "x.parquet", "x.parquet: not a Parquet table"),
    (lambda d: (d / "tiny.toml").write_text(TINY_TOML) and d / "tiny.toml",
     "tiny.toml: no runs of sweep tiny stored in hfcsim-results/tiny/v"),
])
def test_cli_missing_sweep(tmp_path, monkeypatch, capsys, make, fragment):
    monkeypatch.chdir(tmp_path)
    path = make(tmp_path)
    status = main(["plot", str(path), "--x", LOSS, "--y", "throughput_bps"])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.startswith("hfcsim: error: ") and err.count("\n") == 1, err
    assert fragment in err, err


def test_cli_toml_with_a_point_not_run(tiny, tmp_path, capsys):
    root, _ = tiny
    (tmp_path / "tiny.toml").write_text(TINY_TOML.replace("[0.0, 0.05]", "[0.0, 0.05, 0.1]"))
    status = main(["plot", str(tmp_path / "tiny.toml"), "--results", str(root), "--x", LOSS, "--y", "timeouts",
                   "--by", VARIANT])
    err = capsys.readouterr().err
    assert status == 2
    assert "2 of the sweep's 6 grid points have no runs stored in" in err and "to complete it" in err


def test_cli_bad_input_subprocess(tiny, tmp_path, subprocess_env):
    root, _ = tiny
    proc = subprocess.run([sys.executable, "-m", "hfcsim", "plot", str(root), "--x", LOSS, "--y", "thruput"],
                          capture_output=True, text=True, env=subprocess_env, cwd=tmp_path, timeout=60, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "did you mean throughput_bps?" in proc.stderr


def test_api_names_its_arguments(tiny):
    _, frame = tiny
    with pytest.raises(ScenarioError, match=r"^y = 'thruput': not a metric of the sweep \(did you mean "):
        plot_sweep(frame, x=LOSS, y="thruput", by=VARIANT)
    with pytest.raises(ScenarioError, match=rf"^grid key {VARIANT} also varies .* name it with by, or fix it "
                                            rf"\(where=\{{'{VARIANT}': 'tahoe'\}}\)$"):
        plot_sweep(frame, x=LOSS, y="throughput_bps")
    # where= fixes the other key: one line
    fig = plot_sweep(frame, x=LOSS, y="throughput_bps", where={VARIANT: "reno"})
    assert len(fig.axes[0].get_lines()) == 1


def test_cli_where_a_number_and_one_flow(tiny, tmp_path, drawn, capsys):
    # --where matches a number as written (0.05 the float 0.05); x of words is drawn as categories
    root, frame = tiny
    status = main(["plot", str(root), "--x", VARIANT, "--y", "timeouts", "--where", f"{LOSS}=0.05", "--flow", "0",
                   "--stat", "max", "--band", "none", "--out", str(tmp_path / "t.pdf")])
    out = capsys.readouterr().out
    assert status == 0 and (tmp_path / "t.pdf").read_bytes()[:5] == b"%PDF-"
    assert out.endswith(f"1 line, 2 points, maximum of 2 seeds per point, band: none -> {tmp_path / 't.pdf'}\n")
    ax = drawn[0].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["tahoe", "reno"]
    (line,) = ax.get_lines()
    at = frame[frame[LOSS] == 0.05]
    assert list(line.get_ydata()) == [at[at[VARIANT] == v]["timeouts"].max() for v in ("tahoe", "reno")]


def test_a_zip_axis_s_other_key_goes_with_the_line():
    # sweep-buffers.toml's shape: loss on a grid axis, send and receive buffers zipped. Drawn by the send
    # buffer, the receive buffer varies with the lines, never within a point: no --where needed.
    rows = pd.DataFrame([{LOSS: loss, "tcp.send_buffer_bytes": b, "receiver.receive_buffer_bytes": b, "seed": 1,
                          "flow": 0, "throughput_bps": 1e6 * (1 + i)}
                         for loss in (0.0, 0.01) for i, b in enumerate((8192, 16384))])
    fig = plot_sweep(rows, x=LOSS, y="throughput_bps", by="tcp.send_buffer_bytes")
    lines = _lines(fig.axes[0])
    assert [line.get_label() for line in lines] == ["8", "16"]
    assert [list(line.get_ydata()) for line in lines] == [[1.0, 1.0], [2.0, 2.0]]
    with pytest.raises(ScenarioError, match=r"^grid keys tcp.send_buffer_bytes, receiver.receive_buffer_bytes also "
                                            r"vary across the points drawn: fix them"):
        plot_sweep(rows, x=LOSS, y="throughput_bps")
