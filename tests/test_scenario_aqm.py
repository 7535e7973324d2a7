"""PIE and CoDel beyond the DOCSIS service flows: ``network.cm_buffer_aqm`` (the hfc modem's buffer toward
the PC) and ``network.bottleneck_aqm`` (Lakshman & Madhow's bottleneck), with the AQM parameter keys on
those networks. Runs use the real engine (each is a few ms)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hfcsim import simulate
from hfcsim.cli import main
from hfcsim.scenario import NETWORK_KINDS, PARAM_BY_KEY, Scenario, ScenarioError, resolve

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

# (key, a value other than its default, the networks it is valid with), written out by hand.
KEYS = [
    ("network.cm_buffer_aqm", "codel", ("hfc",)),
    ("network.cm_buffer_aqm", "pie", ("hfc",)),
    ("network.bottleneck_aqm", "codel", ("bottleneck",)),
    ("network.bottleneck_aqm", "pie", ("bottleneck",)),
    ("network.pie_target_s", 0.02, ("hfc", "bottleneck", "docsis")),
    ("network.codel_target_s", 0.01, ("hfc", "bottleneck", "docsis")),
    ("network.codel_interval_s", 0.2, ("hfc", "bottleneck", "docsis")),
    ("network.cmts_aqm", "codel", ("docsis",)),
    ("network.cm_aqm", "docsis_pie", ("docsis",)),
    ("network.docsis_pie_target_s", 0.02, ("docsis",)),
]
ACCEPTED = [(kind, key, value) for key, value, kinds in KEYS for kind in kinds]
REFUSED = [(kind, key, value) for key, value, kinds in KEYS for kind in NETWORK_KINDS if kind not in kinds]


def placed(kind: str, key: str, value):
    return {"network": {"kind": kind, key.split(".", 1)[1]: value}}


@pytest.mark.parametrize(("kind", "key", "value"), ACCEPTED)
def test_a_key_is_accepted_on_its_network_and_reaches_the_engine(kind, key, value):
    sc = resolve(placed(kind, key, value))
    assert sc.get(key) == value
    assert sc.to_dict()["network"][key.split(".", 1)[1]] == value


@pytest.mark.parametrize(("kind", "key", "value"), REFUSED)
def test_a_key_on_another_network_is_refused_with_one_line(capsys, kind, key, value):
    with pytest.raises(ScenarioError) as e:
        resolve(placed(kind, key, value))
    assert str(e.value).startswith(f"{key} = ") and "only valid with" in str(e.value), str(e.value)
    assert main(["run", "--set", f"network.kind={kind}", "--set", f"{key}={value}"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"hfcsim: error: {key} = "), err


@pytest.mark.parametrize(("kind", "key", "value"), [
    ("hfc", "network.cm_buffer_aqm", "docsis_pie"),  # RFC 8034: DOCSIS-PIE is the modem's upstream AQM
    ("bottleneck", "network.bottleneck_aqm", "docsis_pie"),
    ("hfc", "network.cm_buffer_aqm", "red"),
    ("bottleneck", "network.bottleneck_aqm", "fq_codel"),
    ("hfc", "network.codel_target_s", 0),
    ("bottleneck", "network.pie_target_s", -0.015),
    ("bottleneck", "network.codel_interval_s", 2e9),
])
def test_a_bad_value_names_its_key(kind, key, value):
    with pytest.raises(ScenarioError) as e:
        resolve(placed(kind, key, value))
    assert str(e.value).startswith(f"{key} = ") and "\n" not in str(e.value), str(e.value)


@pytest.mark.parametrize(("kind", "absent"), [
    ("hfc", ("cm_buffer_aqm", "pie_target_s", "codel_target_s", "codel_interval_s")),
    ("bottleneck", ("bottleneck_aqm", "pie_target_s", "codel_target_s", "codel_interval_s")),
])
def test_at_their_defaults_the_keys_stay_out_of_older_networks_documents(kind, absent):
    # Stored scenarios keep their JSON and sweep hash; the engine's serde defaults are the same values.
    network = Scenario({"network": {"kind": kind}}).to_dict()["network"]
    assert not set(absent) & set(network)
    for name in absent:
        assert Scenario({"network": {"kind": kind}}).get(f"network.{name}") == PARAM_BY_KEY[f"network.{name}"].default


# A standing queue at each buffer: the hfc network's PC LAN at 2 Mb/s under 256 KB windows; the bottleneck
# of Lakshman & Madhow Fig. 1 with B = 100.
SLOW_LAN = ["--set", "network.cm_lan_bps=2e6", "--set", "tcp.send_buffer_bytes=262144",
            "--set", "receiver.receive_buffer_bytes=262144"]
BIG_B = [f"{SCENARIOS}/lakshman-fig1.toml", "--set", "network.buffer_packets=100", "--set", "flows.0.bytes=3000000"]
RUNS = [
    (SLOW_LAN + ["--set", "network.cm_buffer_aqm=codel"], "cm_lan_modem0", True),
    (SLOW_LAN + ["--set", "network.cm_buffer_aqm=pie"], "cm_lan_modem0", True),
    ([f"{SCENARIOS}/hfc-cm-codel.toml"], "cm_lan_modem0", True),
    (BIG_B + ["--set", "network.bottleneck_aqm=pie"], "bottleneck", False),
    (BIG_B + ["--set", "network.bottleneck_aqm=codel"], "bottleneck", False),
]


@pytest.mark.parametrize(("args", "queue", "cm"), RUNS)
def test_a_standing_queue_gets_aqm_drops(capsys, args, queue, cm):
    assert main(["run", "--json", *args]) == 0
    data = json.loads(capsys.readouterr()[0])
    f, (q,) = data["flows"][0], data["engine"]["queues"]
    assert f["finished"] and f["aqm_drops"] > 0 and q["name"] == queue
    assert f["aqm_drops"] == q["drops_aqm"] and f["queue_drops"] == q["drops_aqm"] + q["drops_full"]
    # A drop at the modem's buffer is a CM-buffer drop, whatever dropped it.
    assert f["cm_buffer_drops"] == (f["queue_drops"] if cm else 0)
    # The queue is a place packets waited, with its AQM's drops, in the JSON and in the text.
    (p,) = [p for p in data["engine"]["places"] if p["name"] == queue]
    assert (p["kind"], p["drops_aqm"], p["drops_full"], p["served"]) == ("queue", q["drops_aqm"], q["drops_full"],
                                                                        q["sent"])
    assert main(["run", *args]) == 0
    text = capsys.readouterr()[0]
    assert f"  {queue} (" in text and f"dropped {q['drops_aqm']} by AQM" in text


@pytest.mark.parametrize(("sets", "expected"), [
    ((), "CM unbounded"),
    (("network.cm_buffer_aqm=codel",), "CM unbounded codel"),
    (("network.cm_buffer_packets=10", "network.cm_buffer_aqm=pie"), "CM 10 pkts pie"),
    (("network.kind=bottleneck", "network.buffer_packets=10"), "bottleneck 10 pkts"),
    (("network.kind=bottleneck", "network.bottleneck_aqm=codel"), "bottleneck unbounded codel"),
])
def test_the_run_line_names_the_discipline(capsys, sets, expected):
    argv = ["run", "--set", "flows.0.bytes=30000"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 0
    assert capsys.readouterr()[0].splitlines()[0].endswith(expected)


def test_codel_cuts_the_rtt_of_a_standing_cm_queue():
    base = {"network": {"cm_lan_bps": 2e6}, "tcp": {"send_buffer_bytes": 262144},
            "receiver": {"receive_buffer_bytes": 262144}}
    tail = simulate(base).flows[0]
    codel = simulate({**base, "network": {"cm_lan_bps": 2e6, "cm_buffer_aqm": "codel"}}).flows[0]
    # Drop-tail: ~250 KB stand at 2 Mb/s, about 1 s. CoDel (RFC 8289 Sec. 4.4-4.5): 5 ms target, at
    # most about one 100 ms interval above it; the base RTT is 20 ms.
    assert tail["rtt_mean_s"] > 0.5 and codel["rtt_mean_s"] < 0.020 + 0.006 + 0.100
    assert tail["aqm_drops"] == tail["cm_buffer_drops"] == 0
