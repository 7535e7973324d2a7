"""``hfcsim reproduce nguyen04``: the figure grids and their --quick versions, the scenario each run
gets, the functions that turn runs into the paper's quantities (phases, knees, plateaus), and every
claim's PASS and FAIL branch on hand-made result tables. A quick reproduction with the real engine, at the
end, checks the files and the report."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from hfcsim import reproduce
from hfcsim.models import nguyen as model
from hfcsim.papers import nguyen04 as N
from hfcsim.papers import papers

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
KB = 1024

# The N-* ids of the paper's claims (python/hfcsim/papers/nguyen04.py), in its order, then ours beyond the paper.
CLAIM_IDS = ["N-rtt-jump", "N-window-peak", "N-offered-load", "N-rtt-window", "N-ratio", "N-overhead",
             "N-map-pps", "AQM-gain"]


def test_claim_ids_are_those_of_claims_md():
    assert [c.id for c in N.CLAIMS] == CLAIM_IDS


def test_the_paper_is_registered():
    assert papers()["nguyen04"]().key == "nguyen04"


def test_the_paper_lists_every_figure_of_the_issue():
    drawn = {f.id for f in N.FIGURE_LIST if not f.is_experiment}
    assert drawn == {"3", "4", "5", "6", "7", "8", "9", "mappps", "aqm"}


def test_every_claim_names_figures_the_paper_has():
    ids = {f.id for f in N.FIGURE_LIST}
    for c in N.CLAIMS:
        assert set(c.figures) <= ids, c.id


# ---------------------------------------------------------------------------------------------------
# Grids: the full sweep and the --quick one


def _points(spec):
    n = int(np.prod([len(v) for v in spec["grid"].values()]))
    return n * (len(spec["zip"]["values"]) if "zip" in spec else 1)


@pytest.mark.parametrize(("fid", "full", "quick"), [
    ("4", 2 * 4, 4),        # send buffer (FreeBSD's 32 KB, 256 KB) x 4 MTUs; quick: FreeBSD's only
    ("5", 4 * 20, 4 * 5),   # MTUs x windows 2-62 KB
    ("6", 4 * 16, 4 * 4),   # DS caps x server limits 0.2-3.2 Mb/s
    ("8", 5 * 11, 2 * 4),   # server limits x windows 2-58 KB
    ("9", 4 * 12, 4 * 4),   # MTUs x US caps 16 kb/s-1 Mb/s
    ("mappps", 2 * 4 * 2, 1 * 2 * 2),  # MTUs x DS caps x (piggyback + concatenation off, on)
    ("aqm", 3 * 2 * 8, 3 * 1 * 2),     # AQMs x DS caps x server limits
])
def test_grid_sizes(fid, full, quick):
    fig = N.FIGURES[fid]
    assert _points(reproduce.figure_sweep(fig, 100)) == full
    assert _points(reproduce.figure_sweep(fig, reproduce.QUICK_RUNS, quick=True)) == quick


@pytest.mark.parametrize(("fid", "full", "quick"), [
    ("4", 1, 1), ("5", 1, 1), ("6", 1, 1), ("8", 1, 1), ("9", 1, 1), ("mappps", 1, 1),
    ("aqm", 10, reproduce.QUICK_RUNS),  # PIE drops at random
])
def test_seeds_per_point(fid, full, quick):
    fig = N.FIGURES[fid]
    assert reproduce.figure_runs(fig, 100) == full
    assert reproduce.figure_sweep(fig, reproduce.QUICK_RUNS, quick=True)["runs"] == quick


def test_grid_values_are_the_papers_ranges():
    # Fig. 5: 2-62 KB; Fig. 8: 2-58 KB; Figs. 6-7: 0.2-3.2 Mb/s; Fig. 9: 16 kb/s - 1 Mb/s.
    assert (min(N.WINDOWS_FIG5), max(N.WINDOWS_FIG5)) == (2 * KB, 62 * KB)
    assert (min(N.WINDOWS_FIG8), max(N.WINDOWS_FIG8)) == (2 * KB, 58 * KB)
    assert (min(N.SERVER_LIMITS), max(N.SERVER_LIMITS)) == (200_000, 3_200_000)
    assert (min(N.US_CAPS_FIG9), max(N.US_CAPS_FIG9)) == (16e3, 1e6)
    assert N.DS_CAPS == (0.5e6, 1e6, 1.5e6, 2e6)


# ---------------------------------------------------------------------------------------------------
# The scenario of one run


@pytest.mark.parametrize(("mtu", "mss"), [(1500, 1460), (1250, 1210), (576, 536), (512, 472)])
def test_an_mtu_is_a_segment_of_mtu_less_40(mtu, mss):
    sc = N.scenario(mtu)
    assert sc["tcp"]["mss_bytes"] == mss == N.mss(mtu)
    assert N.mtu_of(mss) == mtu


def test_the_default_run_is_the_papers_transfer_with_pings_throughout():
    sc = N.scenario()
    assert sc["preset"] == "nguyen04" and sc["network"]["kind"] == "docsis"
    assert sc["flows"] == [{"bytes": 2048 * 4096, "start_s": N.T0}]
    assert sc["pings"] == [{"modem": 0, "start_s": 0.0, "interval_s": 1.0, "ip_bytes": 84, "after_s": 10.0}]
    assert sc["network"]["ds_rate_bps"] == 2e6 and sc["network"]["us_rate_bps"] == 1e6
    # FreeBSD 4.x's default receive buffer (tcp_recvspace = 1024*64); a send buffer that never binds
    assert sc["receiver"]["receive_buffer_bytes"] == 65536
    assert sc["tcp"]["send_buffer_bytes"] == N.SEND_BUFFER >= 4 * max(N.WINDOWS_FIG5)
    assert "server_limit_bps" not in sc["network"] and "upstream" not in sc


def test_options_reach_the_scenario():
    sc = N.scenario(576, window=48 * KB, ds_bps=1e6, us_bps=64e3, server_limit_bps=1.2e6, aqm="pie",
                    cmts_queue_s=0.5, piggyback=False, concatenation=False)
    assert sc["network"] == {"kind": "docsis", "ds_rate_bps": 1e6, "us_rate_bps": 64e3, "server_limit_bps": 1.2e6,
                             "server_queue_bytes": 62 * KB, "cmts_aqm": "pie", "cmts_queue_s": 0.5}
    assert sc["upstream"] == {"piggyback": False, "concatenation": False}
    assert sc["receiver"]["receive_buffer_bytes"] == 48 * KB


# ---------------------------------------------------------------------------------------------------
# The paper's quantities from runs


def test_phase_of_splits_by_when_the_echo_was_sent():
    # the flow runs over [10, 20): an echo sent at 10 s is during, one sent at 20 s after
    assert list(N.phase_of([0, 9.99, 10, 19.99, 20, 30], 10.0, 20.0)) == [
        "before", "before", "during", "during", "after", "after"]


@pytest.mark.parametrize(("k_over_p", "want"), [(31.25, 31.25), (12.0, 12.0), (40.0, 40.0)])
def test_knee_ratio_finds_where_the_plateau_meets_the_ack_clocked_side(k_over_p, want):
    ratios = [2, 4, 8, 16, 32, 64, 128]
    p = 1.8
    rates = [min(p, p * k_over_p / r) for r in ratios]
    assert N.knee_ratio(ratios, rates) == pytest.approx(want)


def test_knee_ratio_is_nan_without_an_ack_clocked_side():
    assert math.isnan(N.knee_ratio([2, 4, 8], [1.8, 1.8, 1.79]))


@pytest.mark.parametrize(("rates", "want"), [
    ([0.5, 1.0, 1.5, 1.8, 1.8, 1.79], 8),        # first within 1 % of 1.8
    ([0.5, 1.0, 1.5, 1.7, 1.8, 1.6], 10),        # a peak, then a fall
    ([1.8, 1.8, 1.8, 1.8, 1.8, 1.8], 2),
])
def test_plateau_window(rates, want):
    assert N.plateau_window([2, 4, 6, 8, 10, 12], rates) == want


@pytest.mark.parametrize("mtu", N.MTUS)
def test_rule_1_comes_from_the_calculator(mtu):
    assert N.rule_ratio(mtu) == pytest.approx(model.ds_us_ratio_limit_for_mtu(mtu, 1.5))


def test_with_metrics():
    rows = pd.DataFrame({N.MSS_KEY: [1460], N.WINDOW_KEY: [48 * KB], "throughput_bps": [1.8e6],
                         "ping_before_mean_s": [0.013], "ping_during_mean_s": [0.12], "ping_during_max_s": [0.14],
                         "ping_after_mean_s": [0.013], "data_segments_sent": [6000], "acks_received": [4000],
                         "duration_s": [40.0]})
    m = N.with_metrics(rows).iloc[0]
    assert (m.mtu, m.window_kb, m.rate_mbps, m.d, m.ds_pps) == (1500, 48, 1.8, 1.5, 150)
    assert m.ping_during_max_ms == pytest.approx(140)


# ---------------------------------------------------------------------------------------------------
# Claims on hand-made result tables: each claim's PASS and FAIL


def _frame(points, seeds=(1, 2)):
    """Rows from dicts of swept values and metrics (ms and Mb/s for brevity), one per seed."""
    defaults = {"ping_before_mean_ms": 13.0, "ping_during_mean_ms": 100.0, "ping_during_max_ms": 120.0,
                "ping_after_mean_ms": 13.0, "rate_mbps": 1.8, "data_segments_sent": 6000, "acks_received": 4000,
                "duration_s": 40.0}
    rows = []
    for p in points:
        q = {**defaults, **p}
        for s in seeds:
            row = {k: v for k, v in q.items() if not k.endswith(("_ms", "_mbps"))}
            row["seed"] = s
            row["throughput_bps"] = q["rate_mbps"] * 1e6
            for phase in ("before_mean", "during_mean", "during_max", "after_mean"):
                row[f"ping_{phase}_s"] = q[f"ping_{phase}_ms"] / 1e3
            rows.append(row)
    return pd.DataFrame(rows)


def _evaluate(cid, data):
    claim = next(c for c in N.CLAIMS if c.id == cid)
    return claim.evaluate(data)


def _fig4(during):
    return {"4": _frame([{N.SNDBUF_KEY: N.FREEBSD_SENDSPACE, N.MSS_KEY: N.mss(m), "ping_during_mean_ms": during[m]}
                         for m in N.MTUS]
                        + [{N.SNDBUF_KEY: N.SEND_BUFFER, N.MSS_KEY: N.mss(m), "ping_during_mean_ms": 500.0}
                           for m in N.MTUS])}


@pytest.mark.parametrize(("during", "status"), [
    ({1500: 118, 1250: 119, 576: 123, 512: 137}, "PASS"),   # the paper's (the 256 KB rows are ignored)
    ({1500: 262, 1250: 263, 576: 270, 512: 272}, "FAIL"),   # loaded above 200 ms
    ({1500: 137, 1250: 123, 576: 119, 512: 118}, "FAIL"),   # falls as MTU falls
])
def test_rtt_jump(during, status):
    out = _evaluate("N-rtt-jump", _fig4(during))
    assert out.status == status
    assert "idle 13.0-13.0 ms" in out.measured


def test_rtt_jump_fails_when_idle_is_off():
    data = _fig4(dict(N.PAPER_PING_MS))
    data["4"]["ping_before_mean_s"] = 0.030
    assert _evaluate("N-rtt-jump", data).status == "FAIL"


def _fig5(peaks_kb):
    pts = []
    for m in N.MTUS:
        for w in N.WINDOWS_FIG5:
            pts.append({N.MSS_KEY: N.mss(m), N.WINDOW_KEY: w, "rate_mbps": 1.8 * min(1.0, w / (peaks_kb[m] * KB))})
    return {"5": _frame(pts)}


@pytest.mark.parametrize(("peaks", "status"), [
    ({1500: 22, 1250: 22, 576: 32, 512: 32}, "PASS"),
    ({1500: 6, 1250: 6, 576: 6, 512: 6}, "FAIL"),      # peaks far below the paper's
    ({1500: 32, 1250: 32, 576: 22, 512: 22}, "FAIL"),  # the larger MTU peaks later
])
def test_window_peak(peaks, status):
    out = _evaluate("N-window-peak", _fig5(peaks))
    assert out.status == status
    assert f"{peaks[1500]:g} / {peaks[1250]:g} / {peaks[576]:g} / {peaks[512]:g} KB" in out.measured


def _fig6(above_ms, below_ms=15.0):
    pts = [{N.DS_KEY: cap, N.LIMIT_KEY: lim, "ping_during_max_ms": below_ms if lim < cap else above_ms}
           for cap in N.DS_CAPS for lim in N.SERVER_LIMITS]
    return {"6": _frame(pts)}


@pytest.mark.parametrize(("above", "below", "status"), [
    (120.0, 15.0, "PASS"),
    (40.0, 15.0, "FAIL"),   # no jump above the cap
    (120.0, 60.0, "FAIL"),  # a queue already below the cap
])
def test_offered_load(above, below, status):
    assert _evaluate("N-offered-load", _fig6(above, below)).status == status


def _fig8(fall_ms=0.0):
    pts = []
    for lim in N.FIG8_LIMITS:
        for i, w in enumerate(N.WINDOWS_FIG8):
            ping = 13.0 + (w / KB) * 4 * (lim > 2e6) - (fall_ms if i == 5 else 0.0)
            pts.append({N.LIMIT_KEY: lim, N.WINDOW_KEY: w, "ping_during_max_ms": ping})
    return {"8": _frame(pts)}


@pytest.mark.parametrize(("fall", "status"), [(0.0, "PASS"), (2.0, "PASS"), (2.5, "FAIL"), (10.0, "FAIL")])
def test_rtt_window(fall, status):
    assert _evaluate("N-rtt-window", _fig8(fall)).status == status


def _fig9(scale):
    pts = []
    for m in N.MTUS:
        for us in N.US_CAPS_FIG9:
            r = N.DS_CAP / us
            pts.append({N.MSS_KEY: N.mss(m), N.US_KEY: us,  # the DS cap is not swept: 2 Mb/s
                        "rate_mbps": min(1.8, 1.8 * scale * N.rule_ratio(m) / r)})
    return {"9": _frame(pts)}


@pytest.mark.parametrize(("scale", "status"), [(1.0, "PASS"), (1.2, "PASS"), (2.0, "FAIL"), (0.5, "FAIL")])
def test_ratio(scale, status):
    out = _evaluate("N-ratio", _fig9(scale))
    assert out.status == status
    assert f"1500: {scale * N.rule_ratio(1500):.1f} / {N.rule_ratio(1500):.1f}" in out.measured


def test_overhead_is_the_calculators():
    out = _evaluate("N-overhead", {})
    assert out.status == "PASS"
    assert "11.17 % (1500 B), 18.19 % (512 B)" in out.measured


def _mappps(pps_at_top):
    pts = []
    for pb in (False, True):
        for m in (1500, 512):
            for ds in N.MAP_DS_CAPS:
                segs = 6000
                pps = pps_at_top if (ds == max(N.MAP_DS_CAPS) and not pb) else 300.0
                pts.append({N.PIGGYBACK_KEY: pb, N.CONCAT_KEY: pb, N.MSS_KEY: N.mss(m), N.DS_KEY: ds,
                            "data_segments_sent": segs, "acks_received": 4000, "duration_s": segs / pps})
    return {"mappps": _frame(pts)}


@pytest.mark.parametrize(("pps", "status"), [(375.0, "PASS"), (330.0, "PASS"), (1600.0, "FAIL"), (200.0, "FAIL")])
def test_map_pps(pps, status):
    out = _evaluate("N-map-pps", _mappps(pps))
    assert out.status == status
    assert "calculator: 250 pps up, 3.04 Mb/s with 1518 B frames, 250-500 pps down" in out.measured


def _aqm(pie_ping, pie_rate, at=None):
    """PIE's loaded max ping and rate (at DS cap ``at`` only, or at every cap); the rest fixed."""
    pts = []
    for aqm in N.AQMS:
        for ds in N.AQM_DS_CAPS:
            for lim in N.AQM_LIMITS:
                loaded = lim > ds
                pie = at is None or ds == at
                ping = {"droptail": 250.0, "pie": pie_ping if pie else 40.0, "codel": 30.0}[aqm] if loaded else 20.0
                rate = {"droptail": 1.8, "pie": pie_rate if pie else 1.7, "codel": 1.75}[aqm]
                pts.append({N.AQM_KEY: aqm, N.DS_KEY: ds, N.LIMIT_KEY: lim, "ping_during_max_ms": ping,
                            "ping_during_mean_ms": ping * 0.8, "rate_mbps": rate})
    return {"aqm": _frame(pts)}


@pytest.mark.parametrize(("ping", "rate", "at", "status"), [
    (40.0, 1.7, None, "PASS"),
    (200.0, 1.7, None, "FAIL"),  # PIE barely helps
    (40.0, 1.2, None, "FAIL"),   # PIE costs a third of the rate
    (40.0, 1.5, 1e6, "FAIL"),    # ... at one cap only
])
def test_aqm_gain(ping, rate, at, status):
    out = _evaluate("AQM-gain", _aqm(ping, rate, at))
    assert out.status == status
    assert "DS cap 1 Mb/s: loaded ping mean / max drop-tail 200 / 250 ms at 1.80 Mb/s" in out.measured
    assert "codel 24 / 30 ms, costing 3 % of the rate (1.75 Mb/s)" in out.measured


def test_aqm_gain_table():
    g = N.aqm_gain(_aqm(40.0, 1.44)["aqm"]).set_index([N.DS_KEY, N.AQM_KEY])
    assert g.loc[(2e6, "pie"), "ping_vs_droptail"] == pytest.approx(40 / 250)
    assert g.loc[(2e6, "pie"), "rate_vs_droptail"] == pytest.approx(0.8)
    assert g.loc[(1e6, "droptail"), "rate_vs_droptail"] == 1.0


# ---------------------------------------------------------------------------------------------------
# The report names every claim


def test_the_report_has_every_claim(tmp_path):
    data = {**_fig4(dict(N.PAPER_PING_MS)), **_fig5(N.PAPER_PEAK_KB), **_fig6(120.0), **_fig8(),
            **_fig9(1.0), **_mappps(375.0), **_aqm(40.0, 1.7)}
    paper = N.paper()
    report = reproduce.Report(paper, tmp_path, 3, [])
    for c in paper.claims:
        out = c.evaluate(data)
        report.results.append(reproduce.ClaimResult(c, out.status, out.measured))
    reproduce.write_report(report)
    md = (tmp_path / "report.md").read_text()
    for cid in CLAIM_IDS:
        assert f"| {cid} |" in md
    assert all(r.status == "PASS" for r in report.results)
    for note in N.NOTES:
        assert note in md


# ---------------------------------------------------------------------------------------------------
# A quick reproduction on the real engine

@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("nguyen04")
    return reproduce.reproduce(N.paper(), quick=True, out=out, progress=False), out


@pytest.mark.parametrize("fig", [f for f in N.FIGURE_LIST if not f.is_experiment], ids=lambda f: f"fig{f.id}")
def test_figures_are_valid_and_labelled(quick, fig):
    _, out = quick
    assert (out / "figures" / f"fig{fig.id}.png").read_bytes().startswith(PNG_MAGIC)
    text = " ".join(ET.parse(out / "figures" / f"fig{fig.id}.svg").getroot().itertext())
    assert fig.xlabel in text and fig.ylabel in text
    assert (out / "data" / f"fig{fig.id}.csv").stat().st_size > 100


@pytest.mark.parametrize("sc", [N.default_settings(576), N.scenario(window=48 * KB, server_limit_bps=1.2e6),
                                N.scenario(512, window=48 * KB, us_bps=32e3)], ids=["fig3", "fig6", "fig9"])
def test_one_seed_per_point_is_enough_every_seed_gives_the_same_run(sc):
    # RUNS = 1 rests on this: one modem alone on its upstream and no loss. The only draw left, the
    # contention minislot of a request, moves request_grant_mean_s by well under a microsecond.
    from hfcsim.simulate import simulate

    a, b = (simulate(sc, seed=s) for s in (1, 2))
    fa, fb = ({k: v for k, v in r.flows[0].items() if k != "request_grant_mean_s"} for r in (a, b))
    assert fa == fb
    assert a.flows[0]["request_grant_mean_s"] == pytest.approx(b.flows[0]["request_grant_mean_s"], abs=1e-6)
    pd.testing.assert_frame_equal(a.pings, b.pings)


def test_quick_report_has_every_claim_run_and_explained(quick, every_claim_run_and_explained):
    report, out = quick
    md = (out / "report.md").read_text()
    every_claim_run_and_explained(report, md, CLAIM_IDS)
    assert "--quick grids for figures" in md


def test_every_title_states_the_runs_used(quick, titles_state_the_runs):
    # Issue 12, defect G: a --quick reproduction's figures and report say the runs it made.
    titles_state_the_runs(*quick)