"""hfcsim compare: model columns and regimes, the simulated curve, files written, --json."""

from __future__ import annotations

import json
import math

import pytest

from hfcsim.compare import compare, model_inputs, predict
from hfcsim.scenario import load

LOSSES = (0.0, 0.005, 0.01, 0.02, 0.05)
RUNS = 10


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return compare(None, losses=LOSSES, runs=RUNS, out=tmp_path_factory.mktemp("compare"))


@pytest.mark.parametrize(("key", "expected"), [
    ("mss_bytes", 1460),
    # 20 ms + 1500 B at 25 Mb/s + 1500 B at 10 Mb/s + 40 B at 3 Mb/s
    ("rtt_s", 0.02 + 12000 / 25e6 + 12000 / 10e6 + 320 / 3e6),
    ("max_window_packets", 6),      # 8192 B rounded up to 6 x 1460
    ("rto_s", 1.25),                # 2.5 ticks of 500 ms
    ("packets_per_ack", 2),         # delayed ACK
    ("mu_pps", 10e6 / 12000),       # CM LAN is the bottleneck
    ("buffer_packets", None),       # unbounded CM buffer
])
def test_model_inputs_from_default_scenario(key, expected):
    got = model_inputs(load(None))[key]
    assert got == (pytest.approx(expected) if isinstance(expected, float) else expected)


@pytest.mark.parametrize(("sets", "key", "expected"), [
    (["receiver.delayed_ack=false"], "packets_per_ack", 1),
    (["tcp.send_buffer_bytes=24576", "receiver.receive_buffer_bytes=24576"], "max_window_packets", 17),
    (["network.cm_buffer_bytes=10240"], "buffer_packets", 6),
    (["tcp.tick_s=0.2"], "rto_s", 0.5),
    (["network.cm_lan_bps=100e6"], "mu_pps", 25e6 / 12000),
])
def test_model_inputs_follow_the_scenario(sets, key, expected):
    assert model_inputs(load(None, sets))[key] == pytest.approx(expected)


def test_mathis_decreasing_in_loss(table):
    values = table["mathis_bps"].to_numpy()[1:]  # loss > 0
    assert all(a > b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("model", ["pftk", "lm"])
def test_other_models_non_increasing_in_loss(table, model):
    values = table[f"{model}_bps"].to_numpy()
    assert all(a >= b for a, b in zip(values, values[1:]))


def test_loss_zero_divergent_model_is_marked_not_a_number(table):
    row = table[table["loss"] == 0].iloc[0]
    assert math.isnan(row["mathis_bps"])
    assert "p=0" in row["mathis_regime"]
    # PFTK has a finite limit at p = 0: W_max / RTT
    inputs = table.attrs["inputs"]
    assert row["pftk_bps"] == pytest.approx(8 * 1460 * 6 / inputs["rtt_s"])
    assert math.isfinite(row["lm_bps"])


@pytest.mark.parametrize(("sets", "loss", "model", "reason"), [
    ([], 0.01, "mathis", "W-limited"),          # sqrt(8/(3*2*0.01)) = 11.5 > 6
    ([], 0.01, "lm", "W-limited"),              # L-M has no receiver window
    ([], 0.01, "pftk", "ok"),
    ([], 0.2, "pftk", "p>10%"),
    (["tcp.dupack_threshold=1"], 0.01, "pftk", "dupACK!=3"),
    (["tcp.variant=tahoe"], 0.01, "mathis", "tahoe"),
    (["network.upstream_loss=0.05"], 0.01, "pftk", "ack loss"),
    (["flows.0.bytes=30000"], 0.01, "pftk", "short transfer"),
    (["tcp.send_buffer_bytes=200000", "receiver.receive_buffer_bytes=200000"], 0.01, "mathis", "ok"),
    (["tcp.send_buffer_bytes=200000", "receiver.receive_buffer_bytes=200000"], 0.03, "mathis", "p>2%"),
])
def test_regimes(sets, loss, model, reason):
    regime = predict(model_inputs(load(None, sets)), loss)[f"{model}_regime"]
    assert reason in regime if reason != "ok" else regime == "ok"


def test_simulated_throughput_decreases_with_loss(table):
    means = table["sim_mean_bps"].to_numpy()
    assert all(a > b for a, b in zip(means, means[1:]))
    assert (table["n"] == RUNS).all()
    assert (table["sim_ci95_low_bps"] <= table["sim_mean_bps"]).all()


@pytest.mark.parametrize("model", ["mathis", "pftk", "lm"])
def test_ratio_is_model_over_sim(table, model):
    r = table.iloc[2]
    assert r[f"{model}_ratio"] == pytest.approx(r[f"{model}_bps"] / r["sim_mean_bps"])


def test_files_written_and_valid(table):
    files = table.attrs["files"]
    with open(files["png"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(files["svg"], encoding="utf-8") as f:
        text = f.read()
    assert "<svg" in text and text.rstrip().endswith("</svg>")
    with open(files["csv"], encoding="utf-8") as f:
        assert f.readline().startswith("loss,n,sim_mean_bps")


def test_no_files_without_out():
    t = compare(None, losses=[0.01], runs=2)
    assert t.attrs["files"] == {}


def test_json_parses(hfcsim_cli, tmp_path):
    status, out, err = hfcsim_cli(["compare", "--loss", "0,0.02", "--runs", "3",
                                                      "--out", str(tmp_path), "--json"])
    assert status == 0 and err == ""
    assert out.count("\n") == 1
    data = json.loads(out)  # NaN would not parse as strict JSON
    assert data["loss_key"] == "network.downstream_loss"
    assert [r["loss"] for r in data["rows"]] == [0, 0.02]
    assert data["rows"][0]["mathis_bps"] is None
    assert set(data["files"]) == {"png", "svg", "csv"}


def test_human_table(hfcsim_cli, tmp_path):
    status, out, _ = hfcsim_cli(["compare", "--loss", "0,0.01", "--runs", "3", "--out", str(tmp_path)])
    assert status == 0
    assert "model inputs:" in out and "RTT 21.787 ms" in out
    assert "inf" not in out and "nan" not in out.lower()
    assert (tmp_path / "compare.png").exists()


def test_bottleneck_network_sweeps_its_loss_key():
    t = compare({"network": {"kind": "bottleneck", "rate_pps": 100, "tau_s": 0.1, "buffer_packets": 20},
                 "tcp": {"send_buffer_bytes": 1_000_000}, "receiver": {"receive_buffer_bytes": 1_000_000},
                 "flows": [{"bytes": 1_000_000}]}, losses=[0.001, 0.01], runs=2)
    assert t.attrs["inputs"]["loss_key"] == "network.loss"
    assert t.attrs["inputs"]["rtt_s"] == pytest.approx(0.11)
    assert t["sim_mean_bps"].iloc[0] > t["sim_mean_bps"].iloc[1]


@pytest.mark.parametrize("argv", [
    ["--loss", "0,1"],
    ["--loss", "x"],
    ["--runs", "0"],
    ["--set", "network.downstream_bps=-1"],
    ["--set", "flows.1.bytes=1000"],           # two flows
    ["--set", "flows.0.direction=up"],
    ["--set", "network.kind=atm_hfc"],          # Elloumi's ATM-HFC path: no model inputs for it
])
def test_bad_input_exit_2_one_line(hfcsim_cli, tmp_path, argv):
    status, out, err = hfcsim_cli(["compare", "--out", str(tmp_path), *argv])
    assert status == 2 and out == ""
    assert err.startswith("hfcsim: error: ") and err.count("\n") == 1
