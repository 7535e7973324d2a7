"""The Nguyen & Armitage testbed's surface (issue 9): ``network.kind = "docsis"`` and its keys, ``[[pings]]``,
``receiver.ack_rule``, the ``nguyen04`` preset; what ``hfcsim run`` prints for them; and ``compare``'s
refusal. Runs use the real engine (each is a few ms)."""

from __future__ import annotations

import json
import re

import pytest

from hfcsim import docsis, simulate
from hfcsim.cli import main
from hfcsim.scenario import PARAM_BY_KEY, PARAMS, Scenario, ScenarioError, resolve
from hfcsim.simulate import PING_COLUMNS, QUEUE_METRICS

DOCSIS = {"network": {"kind": "docsis"}}


def net(**network):
    return {"network": {"kind": "docsis", **network}}


# ---------------------------------------------------------------------------------------------------
# Defaults, written out by hand from the sources the schema cites (not read back from the schema).

DOCSIS_DEFAULTS = [
    ("network.downstream_bps", 5.056941e6 * 6),  # ITU-T J.83 Annex B 64-QAM, raw
    ("network.upstream_bps", 10.24e6),  # 16-QAM at 2.56 Msym/s
    ("network.ethernet_bps", 100e6),  # Nguyen & Armitage Sec. III.A
    ("network.ds_rate_bps", 2e6),  # Sec. III.A
    ("network.us_rate_bps", 1e6),  # Sec. III.A
    ("network.ds_burst_bytes", 1522),  # MULPI C.2.2.7.3: the default Maximum Traffic Burst
    ("network.us_burst_bytes", 1522),
    ("network.ds_peak_bps", None),
    ("network.cmts_queue_bytes", None),
    ("network.cmts_aqm", "droptail"),
    ("network.cm_aqm", "droptail"),
    ("network.server_limit_bps", None),
    ("network.server_queue_bytes", 62 * 1024),  # Sec. III.A: dummynet's 62 KB queue
    ("network.pie_target_s", 0.015),  # RFC 8033 Sec. 5.1
    ("network.docsis_pie_target_s", 0.010),  # RFC 8034 Sec. 4.2
    ("network.codel_target_s", 0.005),  # RFC 8289 Sec. 4.4
    ("network.codel_interval_s", 0.100),  # RFC 8289 Sec. 4.5
    ("network.ethernet_header_bytes", 18),  # IEEE 802.3: 14 header + 4 FCS
    ("network.docsis_header_bytes", 6),
    ("network.rs_n", 128),  # J.83 Annex B
    ("network.rs_k", 122),
    ("network.mpeg_packet_bytes", 188.0),
    ("network.mpeg_header_bytes", 4.5),
    ("upstream.mac", "docsis"),
    ("receiver.ack_rule", "net3"),
]


@pytest.mark.parametrize(("key", "expected"), DOCSIS_DEFAULTS)
def test_docsis_default(key, expected):
    value = Scenario(DOCSIS).get(key)
    assert value == expected
    assert type(value) is type(expected)


PRESET = [  # Nguyen & Armitage Sec. III: FreeBSD 4.x hosts, a DOCSIS 1.1 modem
    ("network.kind", "docsis"),
    ("upstream.mac", "docsis"),
    ("upstream.piggyback", True),
    ("upstream.concatenation", True),
    ("tcp.variant", "newreno"),
    ("tcp.timer", "rfc6298"),
    ("tcp.min_rto_s", 1.0),
    ("tcp.send_buffer_bytes", 32768),  # FreeBSD 4.x tcp_sendspace
    ("receiver.receive_buffer_bytes", 65536),  # FreeBSD 4.x tcp_recvspace
    ("receiver.ack_rule", "freebsd"),
    ("receiver.delack_tick_s", 0.1),
]


@pytest.mark.parametrize(("key", "expected"), PRESET)
def test_the_nguyen04_preset(key, expected):
    assert Scenario({"preset": "nguyen04"}).get(key) == expected


def test_an_explicit_key_wins_over_the_preset():
    assert Scenario({"preset": "nguyen04", "network": {"ds_rate_bps": 5e6}}).get("network.ds_rate_bps") == 5e6


# ---------------------------------------------------------------------------------------------------
# Bad input: one ScenarioError naming the key.

ERRORS = [
    (net(ds_rate_bps=0), "network.ds_rate_bps"),
    (net(ds_burst_bytes=0), "network.ds_burst_bytes"),
    (net(cmts_aqm="docsis_pie"), "network.cmts_aqm"),  # DOCSIS-PIE is the modem's (RFC 8034)
    (net(cm_aqm="red"), "network.cm_aqm"),
    (net(cmts_queue_bytes=65536, cmts_queue_s=0.1), "network.cmts_queue_s"),
    (net(cm_queue_bytes=0), "network.cm_queue_bytes"),
    (net(rs_n=100, rs_k=122), "network.rs_k"),
    (net(mpeg_header_bytes=188.0), "network.mpeg_header_bytes"),
    (net(server_limit_bps=-1.0), "network.server_limit_bps"),
    (net(codel_interval_s=0), "network.codel_interval_s"),
    ({"network": {"kind": "hfc", "cmts_aqm": "pie"}}, "network.cmts_aqm"),  # a docsis-only key
    ({"network": {"kind": "docsis", "rtt_s": 0.02}}, "network.rtt_s"),  # an hfc-only key
    ({"receiver": {"ack_rule": "windows"}}, "receiver.ack_rule"),
    ({"network": {"kind": "bottleneck"}, "pings": [{}]}, "pings"),
    ({"network": {"kind": "atm_hfc"}, "pings": [{}]}, "pings"),
    ({**DOCSIS, "pings": [{"start_s": 5, "stop_s": 4}]}, "pings.0.stop_s"),
    ({**DOCSIS, "pings": [{"interval_s": 0}]}, "pings.0.interval_s"),
    ({**DOCSIS, "pings": [{"interval_s": 0.0099}]}, "pings.0.interval_s"),  # every echo is a row: >= 10 ms
    ({**DOCSIS, "pings": [{"ip_bytes": 27}]}, "pings.0.ip_bytes"),  # below an IP + ICMP header
    ({**DOCSIS, "pings": [{"icmp_bytes": 64}]}, "pings.0.icmp_bytes"),
    ({"pings": [{"modem": 3}]}, "pings.0.modem"),
    ({**DOCSIS, "upstream": {"min_frame_s": 0.003}}, "upstream.min_frame_s"),  # above frame_s (2 ms)
    ({**DOCSIS, "upstream": {"min_frame_s": 0.0}}, "upstream.min_frame_s"),
    ({**DOCSIS, "upstream": {"mac": "fifo", "min_frame_s": 0.001}}, "upstream.min_frame_s"),
    ({"upstream": {"mac": "ieee802.14", "min_frame_s": 0.001}}, "upstream.min_frame_s"),
    ({**DOCSIS, "upstream": {"fec_t_bytes": 17}}, "upstream.fec_t_bytes"),  # DOCSIS 2.0: T <= 16
    ({**DOCSIS, "upstream": {"fec_codeword_bytes": 15}}, "upstream.fec_codeword_bytes"),  # k in [16, 253]  # hfc: no flow on modem 3 to borrow routes from
]


@pytest.mark.parametrize(("raw", "key"), ERRORS)
def test_bad_docsis_input_names_its_key(raw, key):
    with pytest.raises(ScenarioError) as e:
        resolve(raw)
    assert str(e.value).startswith((key, f"unknown key {key} ")), str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("argv", [
    ["run", "--set", "network.kind=docsis", "--set", "network.cmts_aqm=fq"],
    ["run", "--set", "network.kind=docsis", "--set", "pings.0.interval_s=-1"],
    ["compare", "--set", "preset=nguyen04"],
])
def test_the_cli_exits_2_with_one_line(capsys, argv):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("hfcsim: error: "), err


def test_compare_says_where_docsis_predictions_are(capsys):
    assert main(["compare", "--set", "preset=nguyen04"]) == 2
    assert "hfcsim advise --ds-cap-bps" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------
# The schema's DOCSIS defaults (schema.toml) are docsis.py's constants, which the models read.

@pytest.mark.parametrize(("key", "constant"), [
    ("network.rs_n", docsis.RS_N),
    ("network.rs_k", docsis.RS_K),
    ("network.mpeg_packet_bytes", docsis.MPEG_PACKET_BYTES),
    ("network.mpeg_header_bytes", docsis.MPEG_HEADER_BYTES),
    ("network.ethernet_header_bytes", docsis.ETHERNET_HEADER_BYTES),
    ("network.ethernet_min_frame_bytes", docsis.ETHERNET_MIN_FRAME_BYTES),
    ("network.ethernet_gap_bytes", docsis.ETHERNET_GAP_BYTES),
    ("network.docsis_header_bytes", docsis.DOCSIS_HEADER_BYTES),
    ("network.ds_burst_bytes", docsis.DEFAULT_MAX_TRAFFIC_BURST_BYTES),
    ("network.us_burst_bytes", docsis.DEFAULT_MAX_TRAFFIC_BURST_BYTES),
    ("network.downstream_bps", docsis.QAM64_RAW_BPS),
])
def test_the_schemas_docsis_defaults_are_docsis_py_constants(key, constant):
    default = PARAM_BY_KEY[key].default_for("docsis")
    assert default == constant and type(default) is type(constant), key


# ---------------------------------------------------------------------------------------------------
# The payload rate: one formula for Python and the engine.

@pytest.mark.parametrize(("kwargs", "expected"), [
    ({}, 30_341_646 * 122 / 128 * 183.5 / 188),
    ({"rs_n": 128, "rs_k": 128}, 30_341_646 * 183.5 / 188),  # no Reed-Solomon parity
    ({"mpeg_header_bytes": 0.0}, 30_341_646 * 122 / 128),
])
def test_downstream_payload_rate(kwargs, expected):
    assert docsis.downstream_payload_bps(30_341_646, **kwargs) == pytest.approx(expected, rel=1e-12)


def test_the_engine_and_python_agree_on_the_payload_rate():
    # Caps and Ethernet far above the channel, the FIFO upstream, a window of 1 MB: the DS channel's
    # payload rate binds, and each full segment is a DOCSIS frame of 1460 + 40 + 18 + 6 bytes.
    r = simulate({**net(ds_rate_bps=1e9, us_rate_bps=1e8, ethernet_bps=1e9), "upstream": {"mac": "fifo"},
                  "flows": [{"bytes": 4_000_000}], "tcp": {"send_buffer_bytes": 1 << 20},
                  "receiver": {"receive_buffer_bytes": 1 << 20, "delayed_ack": False}})
    payload = docsis.downstream_payload_bps(docsis.QAM64_RAW_BPS)
    goodput = r.flows[0]["throughput_bps"]
    assert goodput <= payload * 1460 / 1524
    assert goodput == pytest.approx(payload * 1460 / 1524, rel=1e-3)  # less the first RTTs of slow start


# ---------------------------------------------------------------------------------------------------
# Runs: pings, queues, and what `hfcsim run` prints.

PINGED = {"preset": "nguyen04", "flows": [{"bytes": 1_000_000, "start_s": 2.0}],
          "pings": [{"interval_s": 0.5, "after_s": 2.0}]}


def test_pings_give_a_row_per_echo_and_phases_per_flow():
    r = simulate(PINGED)
    pings = r.pings
    assert tuple(pings.columns) == PING_COLUMNS
    assert list(pings["seq"]) == list(range(len(pings)))
    assert pings["sent_s"].diff().dropna().round(9).eq(0.5).all()
    f = r.flows[0]
    end = 2.0 + f["duration_s"]
    # Pings run until after_s past the flow's end: the last one at most 2 s after it.
    assert end < pings["sent_s"].iloc[-1] + 0.5 and pings["sent_s"].iloc[-1] <= end + 2.0
    during = pings[(pings["sent_s"] >= 2.0) & (pings["sent_s"] < end)]
    assert f["ping_during_samples"] == len(during)
    assert f["ping_during_max_s"] == pytest.approx(during["rtt_s"].max(), abs=1e-9)
    assert f["ping_before_mean_s"] < 0.02 < f["ping_during_mean_s"]  # the queue at the cap
    assert r.to_dict()["pings"] == r.ping_rows
    assert [q["name"] for q in r.queues] == ["cmts_ds_modem0", "cm_us_modem0"]
    assert all(tuple(q) == QUEUE_METRICS for q in r.queues)


def test_no_pings_no_ping_output():
    r = simulate(DOCSIS)
    assert r.ping_rows == [] and len(r.pings) == 0 and "pings" not in r.to_dict()
    assert r.flows[0]["ping_during_mean_s"] is None


def test_queues_are_absent_on_other_networks():
    assert simulate({}).queues == []


def cli_run(capsys, *sets: str) -> tuple[str, dict]:
    argv = ["run", "--set", "preset=nguyen04", "--set", "flows.0.bytes=1000000", "--set", "flows.0.start_s=2",
            "--set", "pings.0.interval_s=0.5", "--set", "pings.0.after_s=2"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 0
    text, _ = capsys.readouterr()
    assert main([*argv[:1], "--json", *argv[1:]]) == 0
    return text, json.loads(capsys.readouterr()[0])


@pytest.mark.parametrize(("sets", "expected"), [
    ((), "docsis 30.34 Mb/s down (28.23 payload)/10.24 up, caps 2/1 Mb/s down/up"),
    ((), "CMTS unbounded droptail, CM unbounded droptail"),
    (("network.cmts_queue_s=0.25", "network.cmts_aqm=codel"), "CMTS 250 ms codel"),
    (("network.cm_queue_bytes=9000", "network.cm_aqm=docsis_pie"), "CM 9000 B docsis_pie"),
    (("network.server_limit_bps=1e6",), "server pipe 1 Mb/s"),
])
def test_run_describes_the_docsis_network(capsys, sets, expected):
    text, _ = cli_run(capsys, *sets)
    assert expected in text.splitlines()[0]


def test_run_prints_the_pings_and_where_packets_waited_from_the_results(capsys):
    text, data = cli_run(capsys, "network.cmts_aqm=codel", "network.cmts_queue_bytes=65536")
    f = data["flows"][0]
    m = re.search(r"flow 0 pings: before ([\d.]+) ms, during ([\d.]+) ms mean \(([\d.]+) ms max, (\d+) samples\), "
                  r"after ([\d.]+) ms; (\d+) unanswered while it ran", text)
    assert m, text
    assert float(m[1]) == pytest.approx(1e3 * f["ping_before_mean_s"], abs=0.05)
    assert float(m[2]) == pytest.approx(1e3 * f["ping_during_mean_s"], abs=0.05)
    assert float(m[3]) == pytest.approx(1e3 * f["ping_during_max_s"], abs=0.05)
    assert int(m[4]) == f["ping_during_samples"]
    assert float(m[5]) == pytest.approx(1e3 * f["ping_after_mean_s"], abs=0.05)
    assert int(m[6]) == f["ping_lost"]
    pings = data["pings"]
    lost = sum(p["lost"] for p in pings)
    assert f"ping 0: {len(pings)} echoes, {lost} lost" in text
    # Each way: its percentiles and where the mean went, which add up to the mean one-way delay.
    for way in ("up", "down"):
        got = [p for p in pings if p[f"{way}_s"] is not None]
        line = next(line for line in text.splitlines() if line.strip().startswith(way))
        parts = [float(v) for v in re.findall(r"(?:queue|access|serialisation|propagation) ([\d.]+) ms", line)]
        mean = 1e3 * sum(p[f"{way}_s"] for p in got) / len(got)
        assert sum(parts) == pytest.approx(mean, abs=0.3), line
    # Where packets waited: the place with the longest p99 wait first, with its AQM drops.
    places = sorted(data["engine"]["places"], key=lambda p: -(p["wait_p99_s"] or 0))
    top = places[0]
    assert top["name"] == "cmts_ds_modem0" and top["drops_aqm"] > 0
    assert (f"  cmts_ds_modem0 (down service flow): {1e3 * top['wait_p50_s']:.1f} / {1e3 * top['wait_p99_s']:.1f} / "
            f"{1e3 * top['wait_max_s']:.1f} ms; {top['held_p99_bytes']} B; dropped {top['drops_aqm']} by AQM") in text


def test_many_places_show_the_longest_waits(capsys):
    assert main(["run", "--set", "network.kind=docsis", "--set", "upstream.mac=fifo", "--set", "flows.1.modem=1",
                 "--set", "flows.2.modem=2"]) == 0
    text = capsys.readouterr()[0]
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("waits: "))
    shown = [line for line in lines[head + 1:] if line.startswith("  ")]
    assert 1 <= len(shown) <= 5 and "every place: --json" in lines[head]


def test_dynamic_maps_shorten_the_idle_ping():
    # Idle MAPs of 0.5 ms instead of 2 ms: the echo's request finds an opportunity and its grant
    # sooner (access/upstream.rs; the engine's timeline test works one through to the ns).
    base = {**DOCSIS, "flows": [{"bytes": 100_000, "start_s": 5.0}], "pings": [{"stop_s": 4.0}]}
    fixed = simulate(base).flows[0]["ping_before_mean_s"]
    dynamic = simulate({**base, "upstream": {"min_frame_s": 0.0005}}).flows[0]["ping_before_mean_s"]
    assert dynamic < fixed - 0.001, (dynamic, fixed)
    assert "min_frame_s" not in Scenario({}).to_dict()["upstream"]  # an hfc document stays as it was


def test_upstream_fec_costs_minislots():
    # T = 16 with k = 16: each 16 bytes of frame carry 32 of parity, so every burst triples (less
    # its preamble): the MAC's grants count the extra minislots.
    base = {**DOCSIS, "flows": [{"bytes": 200_000}]}
    plain = simulate(base).mac["data_slots"]
    fec = simulate({**base, "upstream": {"fec_t_bytes": 16, "fec_codeword_bytes": 16}}).mac["data_slots"]
    assert 2.5 * plain < fec < 3.1 * plain, (plain, fec)
    assert "fec_t_bytes" not in Scenario({}).to_dict()["upstream"]


# ---------------------------------------------------------------------------------------------------
# Every key this issue added, from the schema itself: listed by `hfcsim params`, and a value past
# each of its bounds (or outside its choices) gets one line naming it.

NEW_KEYS = [p for p in PARAMS
            if (p.key.startswith("network.") and p.applies_to("docsis") and not p.applies_to("hfc"))
            or p.key.startswith("pings.")
            or p.key in ("upstream.min_frame_s", "upstream.fec_t_bytes", "upstream.fec_codeword_bytes",
                         "receiver.ack_rule")]


def _placed(p, value):
    """A docsis scenario giving key ``p`` the value, and the key as the error names it."""
    section, name = p.key.split(".")[0], p.name
    if section == "pings":
        return {**DOCSIS, "pings": [{name: value}]}, f"pings.0.{name}"
    if section == "network":
        return net(**{name: value}), p.key
    return {**DOCSIS, section: {name: value}}, p.key


def _past_bounds(p):
    if p.choices:
        yield "bogus"
    step = 1 if p.type is int else 0.5
    if p.ge is not None:
        yield p.ge - step
    if p.gt is not None:
        yield p.gt
    if p.le is not None:
        yield p.le + step
    if p.lt is not None:
        yield p.lt


BAD_VALUES = [(p, v) for p in NEW_KEYS for v in _past_bounds(p)]


def test_the_new_keys_are_found():
    assert len(NEW_KEYS) > 30 and {"network.cmts_aqm", "pings.*.interval_s", "upstream.fec_t_bytes"} <= {
        p.key for p in NEW_KEYS}


@pytest.mark.parametrize(("p", "value"), BAD_VALUES, ids=[f"{p.key}={v}" for p, v in BAD_VALUES])
def test_a_new_key_past_its_bounds_gets_one_line_naming_it(p, value):
    raw, key = _placed(p, value)
    with pytest.raises(ScenarioError) as e:
        resolve(raw)
    assert str(e.value).startswith(key) and "\n" not in str(e.value), str(e.value)


def test_every_new_key_is_declared_with_help_and_listed_by_params(capsys):
    assert main(["params"]) == 0
    listed = capsys.readouterr()[0]
    for p in NEW_KEYS:
        assert p.help and p.key in listed, p.key
        assert sum(q.key == p.key for q in PARAMS) == 1, f"{p.key} declared twice"
