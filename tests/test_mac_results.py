"""The result surface of a request/grant upstream MAC, against the engine's output contract (_core.pyi):
``Result.stations``, ``Result.mac``, the flows' access-delay metrics, the trace's station/minislot
columns and MAC rows, and the CLI's ``mac:`` line.

The tests marked ``# engine`` run the real engine with the IEEE 802.14 and DOCSIS MACs (and check the
FIFO flows' null access delays). The last tests feed the Python side output shaped by the contract
from a stand-in engine.
"""

from __future__ import annotations

import functools
import json
import re

import pytest

from hfcsim import simulate
from hfcsim.scenario import load

# The contract, written out again (python/hfcsim/_core.pyi): these names first, in this order.
STATION_METRICS = ["station", "group", "distance_km", "packets", "bytes", "background_packets", "requests",
                   "collisions", "piggybacked_requests", "grants", "dropped_packets", "access_delay_mean_s",
                   "access_delay_max_s", "request_grant_mean_s"]
MAC_METRICS = ["requests", "collisions", "contention_slots", "data_slots", "idle_slots", "piggybacked_requests",
               "grants", "dropped_requests", "frames"]
FLOW_ACCESS = ["access_delay_mean_s", "access_delay_max_s", "request_grant_mean_s"]
MAC_EVENTS = {"request", "collision", "feedback", "grant", "burst", "mac_drop"}

# Three modems (the TCP station at 10 km, two more at 20-30 km with a little background traffic), one
# 200 kB download through modem 0, 30 s at most: every ACK of the download crosses the MAC.
COMMON = ["modems.0.count=1", "modems.0.distance_km_min=10", "modems.0.distance_km_max=10",
          "modems.1.count=2", "modems.1.distance_km_min=20", "modems.1.distance_km_max=30",
          "modems.1.background_load=0.05", "flows.0.bytes=200000", "flows.0.modem=0", "sim.time_limit_s=30"]
MACS = {
    # Elloumi Table 1 / Sec. 5.2.
    "ieee802.14": ["upstream.mac=ieee802.14", "upstream.frame_s=0.00227", "upstream.contention=fixed",
                   "upstream.contention_slots=20", "upstream.max_request=32"],
    # Nguyen & Armitage Sec. II: 2 ms MAPs, 1600-byte bursts.
    "docsis": ["upstream.mac=docsis", "upstream.frame_s=0.002", "upstream.piggyback=true",
               "upstream.concatenation=true"],
}
MAC_NAMES = list(MACS)


def sets(mac: str) -> list[str]:
    return COMMON + MACS[mac]


@functools.cache
def run(mac: str, trace: bool = False):
    """One run per MAC (and trace flag), shared by the tests: the same seed gives the same result."""
    return simulate(load(None, sets(mac)), seed=1, trace=trace)


@pytest.mark.parametrize("mac", MAC_NAMES)
def test_the_download_finishes(mac):  # engine
    (flow,) = run(mac).flows
    assert flow["finished"] and flow["delivered_bytes"] == 200_000


@pytest.mark.parametrize("mac", MAC_NAMES)
def test_stations_is_one_row_per_station(mac):  # engine
    stations = run(mac).stations
    assert list(stations.columns[: len(STATION_METRICS)]) == STATION_METRICS
    assert list(stations["station"]) == [0, 1, 2]
    assert list(stations["group"]) == [0, 1, 1]
    assert list(stations["distance_km"]) == pytest.approx([10.0, 20.0, 30.0])


@pytest.mark.parametrize("mac", MAC_NAMES)
def test_the_tcp_station_requests_and_is_granted(mac):  # engine
    station = run(mac).stations.iloc[0]
    assert station["packets"] >= 1 and station["bytes"] > 0  # the ACKs
    assert station["requests"] >= 1 and station["grants"] >= 1
    assert 0 <= station["access_delay_mean_s"] <= station["access_delay_max_s"]


@pytest.mark.parametrize("mac", MAC_NAMES)
def test_mac_totals(mac):  # engine
    totals = run(mac).mac
    assert totals is not None
    assert list(totals) == MAC_METRICS
    assert totals["requests"] >= 1 and totals["grants"] >= 1 and totals["frames"] >= 1
    assert totals["requests"] == run(mac).stations["requests"].sum()


@pytest.mark.parametrize(("mac", "key"), [(m, k) for m in MAC_NAMES for k in FLOW_ACCESS])
def test_flow_access_delay(mac, key):  # engine
    (flow,) = run(mac).flows
    assert flow[key] is not None and flow[key] >= 0


@pytest.mark.parametrize("mac", MAC_NAMES)
def test_trace_has_station_and_minislot_and_mac_rows(mac):  # engine
    trace = run(mac, trace=True).trace
    assert {"station", "minislot"} <= set(trace.columns)
    mac_rows = trace[trace["event"].isin(MAC_EVENTS)]
    assert {"request", "grant", "burst"} <= set(mac_rows["event"])
    assert set(mac_rows["flow"]) == {-1}
    assert (mac_rows["station"] >= 0).all()
    assert (trace.loc[~trace["event"].isin(MAC_EVENTS), "minislot"] >= -1).all()


@pytest.mark.parametrize("mac", MAC_NAMES)
def test_cli_prints_the_mac_line(hfcsim_cli, mac):  # engine
    status, out, err = hfcsim_cli(["run", *(arg for s in sets(mac) for arg in ("--set", s))])
    assert (status, err) == (0, "")
    pattern = (rf"mac: {re.escape(mac)}, 3 stations, \d+ requests \(\d+ collisions, \d+ piggybacked\), "
               r"\d+ grants, frames \d+")
    assert any(re.fullmatch(pattern, line) for line in out.splitlines()), out


# With the FIFO upstream: no stations, no MAC totals, and null access delays. The same three modems
# and download, without COMMON's distances and background load: a FIFO upstream has no MAC to apply
# them, and refuses them (issue 26, defect 4).
FIFO_COMMON = ["modems.0.count=1", "modems.1.count=2", "flows.0.bytes=200000", "flows.0.modem=0",
               "sim.time_limit_s=30"]


def test_fifo_has_no_stations_and_no_mac():  # engine
    result = simulate(load(None, FIFO_COMMON))
    assert result.mac is None
    assert len(result.stations) == 0 and list(result.stations.columns) == STATION_METRICS
    assert result.to_dict()["stations"] == []


@pytest.mark.parametrize("key", FLOW_ACCESS)
def test_fifo_flow_access_delay_is_null(key):  # engine
    (flow,) = simulate(load(None, FIFO_COMMON)).flows
    assert key in flow and flow[key] is None


# The Python side alone, on output shaped by the contract (stand-in engine): these pass today.


def contract_output(stations: int) -> dict:
    flow = {"flow": 0, "bytes": 200_000, "delivered_bytes": 200_000, "finished": True, "throughput_bps": 2e6,
            "duration_s": 0.8, "timeouts": 0, "fast_retransmits": 0, "retransmitted_segments": 0,
            "access_delay_mean_s": 0.004, "access_delay_max_s": 0.011, "request_grant_mean_s": 0.003}
    rows = [dict(sorted({**dict.fromkeys(STATION_METRICS, 0), "station": i}.items())) for i in range(stations)]
    mac = dict(sorted({"requests": 1234, "collisions": 56, "contention_slots": 9000, "data_slots": 5000,
                       "idle_slots": 100, "piggybacked_requests": 78, "grants": 900, "dropped_requests": 0,
                       "frames": 6600}.items()))
    return {"flows": [flow], "stations": rows,
            "engine": {"events": 10, "simulated_s": 0.8, "wall_s": 0.001, "mac": mac}}


@pytest.mark.parametrize(("mac", "stations", "line"), [
    ("ieee802.14", 201, "mac: ieee802.14, 201 stations, 1234 requests (56 collisions, 78 piggybacked), "
                        "900 grants, frames 6600"),
    ("docsis", 3, "mac: docsis, 3 stations, 1234 requests (56 collisions, 78 piggybacked), 900 grants, frames 6600"),
    ("docsis", 1, "mac: docsis, 1 station, 1234 requests (56 collisions, 78 piggybacked), 900 grants, frames 6600"),
])
def test_mac_line_from_contract_output(hfcsim_cli, fake_engine, mac, stations, line):
    fake_engine(returns=contract_output(stations))
    status, out, err = hfcsim_cli(["run", "--set", f"upstream.mac={mac}"])
    assert (status, err) == (0, "")
    assert out.splitlines()[-2:] == [line, "engine: 10 events, 0.800 simulated s, 1.0 wall ms"]


def test_result_surface_from_contract_output(fake_engine):
    fake_engine(returns=contract_output(3))
    result = simulate({"upstream": {"mac": "docsis"}})
    assert list(result.stations.columns) == STATION_METRICS  # contract order, whatever the engine's
    assert list(result.stations["station"]) == [0, 1, 2]
    assert list(result.mac) == MAC_METRICS
    assert result.to_dict()["stations"] == result.station_rows and len(result.station_rows) == 3


def test_json_passes_stations_and_mac_through(hfcsim_cli, fake_engine):
    fake_engine(returns=contract_output(2))
    status, out, _ = hfcsim_cli(["run", "--json", "--set", "upstream.mac=docsis"])
    result = json.loads(out)
    assert status == 0 and len(result["stations"]) == 2 and result["engine"]["mac"]["frames"] == 6600
