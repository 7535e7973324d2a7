"""Applications (issue 37): ``[[web]]`` page loads and ``[[video]]`` players through the Python surface.

The engine's hand-worked timelines are in crates/hfcsim-core/tests/apps.rs and src/apps/; here: each key's
bad values get one line naming it, the tables' columns and types, the run's text block, and the worked
page load time seen from Python.
"""

import json
import math

import pytest

import hfcsim
from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.scenario import resolve
from hfcsim.simulate import PAGE_COLUMNS, SEGMENT_COLUMNS, VIDEO_COLUMNS

# The path of crates/hfcsim-core/tests/apps.rs: 8 Mb/s each way, an 80 Mb/s LAN, 20 ms, a FIFO upstream.
PATH = {"network": {"kind": "hfc", "downstream_bps": 8e6, "upstream_bps": 8e6, "cm_lan_bps": 80e6, "rtt_s": 0.02},
        "upstream": {"mac": "fifo"}, "receiver": {"delayed_ack": False}}
THREE = {"document_bytes": 1000, "objects": [1000, 1000], "tls_round_trips": 0}


@pytest.mark.parametrize(("http", "ttfb_ms", "load_ms"), [(1, 42.178, 86.366), (2, 42.2884, 65.8002)])
def test_a_page_of_three_objects_loads_in_the_worked_time(http, ttfb_ms, load_ms):
    pages = hfcsim.simulate({**PATH, "web": [{**THREE, "http": http}]}).pages
    assert list(pages.columns) == list(PAGE_COLUMNS)
    assert len(pages) == 1
    assert math.isclose(pages.ttfb_s[0] * 1e3, ttfb_ms, abs_tol=1e-6)
    assert math.isclose(pages.load_s[0] * 1e3, load_ms, abs_tol=1e-6)
    assert (pages.objects[0], pages.bytes[0], bool(pages.failed[0])) == (3, 3900, False)


def test_a_video_on_a_fast_plant_plays_at_the_top_after_the_first_segment():
    r = hfcsim.simulate({"preset": "docsis31", "tcp": {"stack": "linux"}, "video": [{"duration_s": 20}]})
    videos, segments = r.videos, r.segments
    assert list(videos.columns) == list(VIDEO_COLUMNS) and list(segments.columns) == list(SEGMENT_COLUMNS)
    v = videos.iloc[0]
    assert (v.segments, v.segments_done, bool(v.finished), v.rebuffers) == (5, 5, True, 0)
    # The first segment at the ladder's lowest (nothing measured yet), then its top: 1.2 Gb/s is plenty.
    assert list(segments.bitrate_bps) == [145e3] + [7.8e6] * 4
    assert 0 < v.startup_s < 0.1
    # The run ends when the video has played: its start-up plus 20 s.
    assert math.isclose(r.engine["simulated_s"], v.startup_s + 20.0, abs_tol=1e-3)


def test_the_run_prints_the_applications_block(capsys):
    assert main(["run", "--set", "preset=docsis31", "--set", "web.0.profile=almanac2024-mobile",
                 "--set", "video.0.modem=1", "--set", "video.0.duration_s=8"]) == 0
    out = capsys.readouterr().out
    assert "pages: 1 of 1 loaded; load time p50 / p90 / max" in out
    assert "video 0 (modem 1): startup" in out and "2 of 2 segments; played to its end" in out
    assert "flow  bytes" not in out  # no flows: no empty table


def test_json_carries_the_rows(capsys):
    assert main(["run", "--json", "--set", "preset=docsis31", "--set", "web.0.pages=2",
                 "--set", "web.0.think_s=0.5"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["page"] for p in data["apps"]["pages"]] == [0, 1]
    assert data["flows"] == []


def test_an_application_needs_no_flow_and_keeps_flows_given():
    sc = resolve({"web": [{}]})
    assert sc["flows"] == [] and len(sc["web"]) == 1
    assert len(resolve({"web": [{}], "flows": [{}]})["flows"]) == 1
    with pytest.raises(ScenarioError, match=r"^flows = \[\]: at least one flow is required"):
        resolve({"flows": []})


DOCSIS = {"network": {"kind": "docsis"}}
ERRORS = [
    ({"network": {"kind": "bottleneck"}, "web": [{}]}, "web"),
    ({"network": {"kind": "bottleneck"}, "video": [{}]}, "video"),
    ({"web": [{"http": 3}]}, "web.0.http"),
    ({"web": [{"pages": 0}]}, "web.0.pages"),
    ({"web": [{"think_s": -1}]}, "web.0.think_s"),
    ({"web": [{"tls_round_trips": 3}]}, "web.0.tls_round_trips"),
    ({"web": [{"connections_per_host": 0}]}, "web.0.connections_per_host"),
    ({"web": [{"profile": "median"}]}, "web.0.profile"),
    ({"web": [{"profile": "almanac2024-desktop", "hosts": 3}]}, "web.0.hosts"),
    ({"web": [{"profile": "almanac2024-desktop", "objects": [10]}]}, "web.0.objects"),
    ({"web": [{"subobjects": [10]}]}, "web.0.subobjects"),
    ({"web": [{"objects": [0]}]}, "web.0.objects"),
    ({"web": [{"start_s": 5, "stop_s": 4}]}, "web.0.stop_s"),
    ({"web": [{"page_bytes": 5}]}, "web.0.page_bytes"),
    ({**DOCSIS, "modems": [{"count": 2}], "web": [{"modem": 2}]}, "web.0.modem"),
    ({"video": [{"abr": "bola"}]}, "video.0.abr"),
    ({"video": [{"duration_s": 0}]}, "video.0.duration_s"),
    ({"video": [{"segment_s": 0.01}]}, "video.0.segment_s"),
    ({"video": [{"bitrates_bps": [2000000, 1000000]}]}, "video.0.bitrates_bps"),
    ({"video": [{"bitrates_bps": [10]}]}, "video.0.bitrates_bps"),
    ({"video": [{"ladder": "netflix"}]}, "video.0.ladder"),
    ({"video": [{"safety": 1.5}]}, "video.0.safety"),
    ({"video": [{"buffer_s": 20, "top_buffer_s": 10}]}, "video.0.top_buffer_s"),
    ({"video": [{"bba_cushion_s": 0}]}, "video.0.bba_cushion_s"),
    ({**DOCSIS, "modems": [{"count": 2}], "video": [{"modem": 5}]}, "video.0.modem"),
]


@pytest.mark.parametrize(("raw", "key"), ERRORS)
def test_bad_application_input_names_its_key(raw, key):
    with pytest.raises(ScenarioError) as e:
        resolve(raw)
    assert str(e.value).startswith((key, f"unknown key {key} ")), str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("argv", [
    ["run", "--set", "web.0.http=0"],
    ["run", "--set", "video.0.abr=fast"],
    ["run", "--set", "network.kind=bottleneck", "--set", "video.0.modem=0"],
])
def test_the_cli_exits_2_with_one_line(capsys, argv):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("hfcsim: error: "), err


@pytest.mark.parametrize(("group", "web", "video"), [
    # busy-hour: 0.4 of 10 modems browse (modems 2, 4, 7, 9: floor((i + 1) 0.4) > floor(i 0.4)), 0.3 stream.
    ({"count": 10, "mix": "busy-hour"}, [2, 4, 7, 9], [3, 6, 9]),
    # A group's own fraction wins over its mix's; 1 runs it on every modem, 0 on none.
    ({"count": 4, "mix": "busy-hour", "web": 1.0, "video": 0.0}, [0, 1, 2, 3], []),
    ({"count": 4, "web": 0.5}, [1, 3], []),
    ({"count": 4}, [], []),
])
def test_a_groups_mix_spreads_its_applications_over_its_modems(group, web, video):
    sc = resolve({"network": {"kind": "docsis"}, "modems": [{**group, "start_spread_s": 4.0}, {"count": 2}],
                  "flows": [{"modem": 11 if group["count"] > 10 else 4}], "sim": {"time_limit_s": 30.0}})
    assert [w["modem"] for w in sc["web"]] == web
    assert [v["modem"] for v in sc["video"]] == video
    n = group["count"]
    assert [w["start_s"] for w in sc["web"]] == [m * 4.0 / n for m in web]
    assert all(w["profile"] == "almanac2024-desktop" and w["pages"] == 1_000_000 for w in sc["web"])
    assert all(v["duration_s"] == 30.0 for v in sc["video"])  # as long as the run


def test_a_mix_alone_needs_no_flow():
    sc = resolve({"network": {"kind": "docsis"}, "modems": [{"count": 5, "mix": "busy-hour"}]})
    assert sc["flows"] == [] and len(sc["web"]) == 2


@pytest.mark.parametrize(("group", "key"), [
    ({"count": 2, "mix": "evening"}, "modems.0.mix"),
    ({"count": 2, "web": 1.5}, "modems.0.web"),
    ({"count": 2, "video": -0.1}, "modems.0.video"),
    ({"count": 2, "page_profile": "heavy"}, "modems.0.page_profile"),
])
def test_bad_mix_keys_name_themselves(group, key):
    with pytest.raises(ScenarioError) as e:
        resolve({"network": {"kind": "docsis"}, "modems": [group]})
    assert str(e.value).startswith(key), str(e.value)


def test_a_sweep_row_carries_the_applications_metrics():
    from hfcsim.sweep import APP_RUN_METRICS, app_metrics

    rows = {"pages": [{"load_s": 0.2}, {"load_s": 0.4}, {"load_s": None}, {"load_s": 0.1}],
            "videos": [{"start_s": 1.0, "startup_s": 0.5, "end_s": 11.5, "rebuffer_s": 1.0, "mean_bitrate_bps": 2e6},
                       {"start_s": 0.0, "startup_s": 1.0, "end_s": 11.0, "rebuffer_s": 0.0, "mean_bitrate_bps": 4e6},
                       {"start_s": 5.0, "startup_s": None, "end_s": 11.0, "rebuffer_s": 0.0, "mean_bitrate_bps": None}]}
    m = app_metrics(rows)
    assert set(m) == set(APP_RUN_METRICS)
    # Loads 0.1, 0.2, 0.4: p50 0.2, p90 0.2 + 0.8 x 0.2 (interpolated as summarize does); 1 of 4 unloaded.
    assert m["page_load_p50_s"] == pytest.approx(0.2) and m["page_load_p90_s"] == pytest.approx(0.36)
    assert m["pages_unloaded"] == 0.25
    # 1 s stalled over 10 + 10 s played since start-up; the video that never started counts for neither.
    assert m["video_rebuffer_ratio"] == pytest.approx(0.05)
    assert m["video_bitrate_mean_bps"] == 3e6 and m["video_startup_p90_s"] == pytest.approx(0.95)
    assert all(v is None for v in app_metrics({}).values())


def test_a_sweep_of_applications_alone_stores_one_row_per_run():
    from hfcsim.scenario import Scenario
    from hfcsim.sweep import run_batch

    sc = Scenario({"preset": "docsis31", "modems": [{"count": 4, "web": 0.5}], "sim": {"time_limit_s": 3.0}})
    rows = run_batch(sc.to_json(), [1, 2])
    assert [(r["seed"], r["flow"]) for r in rows] == [(1, None), (2, None)]
    assert all(r["page_load_p50_s"] > 0 and r["video_rebuffer_ratio"] is None for r in rows)


def test_the_advice_says_what_a_change_does_to_pages_and_games():
    from hfcsim.advise import advise

    out = advise(ds_cap_bps=20e6, us_cap_bps=2e6, downstream_bps=38e6, upstream_bps=10e6, rtt_s=0.02, seeds=1)
    recs = {r["setting"]: r for r in out["recommendations"]}
    for setting in ("network.cmts_aqm", "lld"):
        reason = recs[setting]["reason"]
        assert "beside the download, with " in reason and "a page (the median mobile page) loads in" in reason
        assert "a game's p99 one-way delay is" in reason, reason
    # The game marked NQB under LLD skips the download's queue: its p99 falls to a few tens of ms.
    import re
    after, before = (float(v) for v in re.search(r"a game's p99 one-way delay is ([0-9.]+) ms \(([0-9.]+) ms before\)",
                                                recs["lld"]["reason"]).groups())
    assert after < 50 < before


@pytest.mark.parametrize("section", ["web", "video"])
def test_a_capture_of_applications_is_refused_in_one_line(capsys, tmp_path, section):
    assert main(["run", "--set", "preset=docsis31", "--set", f"{section}.0.modem=0", "--set", "sim.time_limit_s=1",
                 "--pcap", str(tmp_path / "x.pcapng")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and f"--pcap: [[{section}]] is not captured yet" in err
    assert not (tmp_path / "x.pcapng").exists()
