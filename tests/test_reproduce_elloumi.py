"""``hfcsim reproduce elloumi``: the claim list, every figure of a quick reproduction, and the functions
that turn runs into the paper's quantities (effective throughput, ACK inter-arrival shares and modes,
RTT from a trace, the SW1 queue, throughput per bin), each on a hand-made table with exact answers."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from hfcsim import reproduce
from hfcsim.papers import elloumi, papers

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# The E-* ids of the paper's claims (python/hfcsim/papers/elloumi.py), in the paper's order.
CLAIM_IDS = ["E-low", "E-rr-fcfs", "E-ack-spacing-values", "E-compression", "E-bdp", "E-piggyback",
             "E-spacing-min", "E-spacing-dist", "E-rate-change"]


def test_claim_ids_are_those_of_claims_md():
    assert [c.id for c in elloumi.CLAIMS] == CLAIM_IDS


def test_the_paper_lists_every_figure_of_the_issue():
    ids = {f.id for f in elloumi.FIGURE_LIST if not f.is_experiment}
    wanted = {"4", "5", "table3", "6", "7", "8", "11", "12", "13", "14", "15", "16", "17", "19", "20", "21", "22",
              "23", "24", "25", "26", "27", "28", "29"}
    assert wanted == ids


def test_the_paper_is_registered():
    assert papers()["elloumi"]().key == "elloumi"


# ---------------------------------------------------------------------------------------------------
# Cells and throughput


@pytest.mark.parametrize(("ip_bytes", "cells"), [
    (40, 2),      # a TCP ACK: 40 + 16 = 56 bytes, two cells (Sec. 6.2)
    (32, 1),      # 32 + 16 = 48: exactly one cell payload
    (33, 2),
    (1024, 22),   # the 1 KB MTU: 1040 bytes, 21.67 -> 22 cells
    (992, 21),    # 1008 = 21 x 48: no padding
    (993, 22),
])
def test_aal5_cells(ip_bytes, cells):
    assert elloumi.aal5_cells(ip_bytes) == cells


def test_data_spacing_is_the_papers_1_55_ms():
    assert elloumi.DATA_SPACING_S == pytest.approx(22 * 53 * 8 / 6e6)
    assert round(elloumi.DATA_SPACING_S * 1e3, 2) == 1.55
    assert elloumi.ACK_SAME_FRAME_S == pytest.approx(0.3413e-3, abs=1e-7)
    assert elloumi.ACK_NEXT_FRAME_S == pytest.approx(1.1947e-3, abs=1e-7)


@pytest.mark.parametrize(("packets", "seconds", "effective", "payload"), [
    # 6000 packets of 22 cells x 53 bytes = 1166 bytes: 55,968,000 bits, exactly 9.328 s at 6 Mb/s
    (6000, 9.328, 100.0, 100 * 984 / 1166),
    (3000, 9.328, 50.0, 50 * 984 / 1166),
    (0, 14.0, 0.0, 0.0),
])
def test_effective_throughput_counts_each_packet_as_22_cells(packets, seconds, effective, payload):
    assert elloumi.effective_throughput_pct(packets * 984, seconds) == pytest.approx(effective)
    assert elloumi.payload_throughput_pct(packets * 984, seconds) == pytest.approx(payload)


def test_effective_throughput_works_on_columns():
    rows = pd.DataFrame({"measured_bytes": [6000 * 984, 3000 * 984], "measured_s": [9.328, 9.328]})
    assert list(elloumi.effective_throughput_pct(rows.measured_bytes, rows.measured_s).round(9)) == [100.0, 50.0]


def test_bdp_in_kilobytes():
    # 20 ms at 6 Mb/s = 15,000 bytes = 14.6484375 KB of 1024 bytes
    assert elloumi.bdp_kb(0.02) == pytest.approx(14.6484375)


def _rows(**extra):
    base = {"upstream.scheduler": ["fcfs", "fcfs"], "modems.1.background_load": [0.3, 0.3],
            "network.epd_threshold_cells": [160, 160], "seed": [1, 2],
            "measured_bytes": [6000 * 984, 3000 * 984], "measured_s": [9.328, 9.328],
            "rtt_mean_s": [0.02, 0.04], "rtt_max_s": [0.05, 0.07], "rtt_std_s": [0.002, None],
            "station_requests": [100, 0], "station_piggybacked_requests": [25, 0],
            "timeouts": [1, 3], "fast_retransmits": [0, 0], "epd_drops": [2, 4]}
    return pd.DataFrame({**base, **extra})


def test_with_metrics_and_the_sweep_table():
    d = elloumi.with_metrics(_rows())
    assert list(d.effective_pct.round(9)) == [100.0, 50.0]
    assert d.piggyback_ratio.iloc[0] == 0.25 and pd.isna(d.piggyback_ratio.iloc[1])  # no requests: no ratio
    t = elloumi.sweep_table(_rows())
    assert len(t) == 1 and t.runs.iloc[0] == 2
    assert t.effective_pct_mean.iloc[0] == pytest.approx(75.0)
    assert t.payload_pct_mean.iloc[0] == pytest.approx(75 * 984 / 1166)
    assert t.bdp_std_kb_mean.iloc[0] == pytest.approx(0.002 * 6e6 / 8 / 1024)  # a missing std is skipped


def test_table3_averages_each_runs_statistics_beside_the_papers():
    t = elloumi.table3(_rows())
    row = t.iloc[0]
    assert (row.load, row.scheduler, row.epd_threshold_cells) == (0.3, "fcfs", 160)
    assert row.mean_kb == pytest.approx(0.03 * 6e6 / 8 / 1024)
    assert row.max_kb == pytest.approx(0.06 * 6e6 / 8 / 1024)
    assert (row.paper_mean_kb, row.paper_max_kb, row.paper_sigma_kb) == (15.300, 34.426, 4.081)


# ---------------------------------------------------------------------------------------------------
# ACK inter-arrival times


GAPS_MS = [0.3413, 0.3413, 0.3413, 1.2373, 1.2373, 1.55, 1.6, 1.7, 3.0, 0.35]


@pytest.mark.parametrize(("limit_ms", "share"), [(1.55, 0.6), (1.5547, 0.7), (0.3, 0.0), (5.0, 1.0)])
def test_share_below(limit_ms, share):
    assert elloumi.share_below([g / 1e3 for g in GAPS_MS], limit_ms / 1e3) == pytest.approx(share)


@pytest.mark.parametrize(("centre_ms", "half_ms", "share"), [(1.55, 0.2, 0.3), (1.55, 0.05, 0.2), (0.34, 0.01, 0.4)])
def test_share_near(centre_ms, half_ms, share):
    assert elloumi.share_near([g / 1e3 for g in GAPS_MS], centre_ms / 1e3, half_ms / 1e3) == pytest.approx(share)


def test_modes_are_the_repeated_spacings():
    gaps = [g / 1e3 for g in GAPS_MS]
    assert elloumi.mode_s(gaps, 0.1e-3, 0.8e-3) == pytest.approx(0.3413e-3)
    assert elloumi.mode_s(gaps, 0.8e-3, 1.5e-3) == pytest.approx(1.2373e-3)
    assert elloumi.mode_s(gaps, 5e-3, 6e-3) != elloumi.mode_s(gaps, 5e-3, 6e-3)  # NaN: nothing there


def _trace(rows):
    """A trace from (time_ms, flow, event, seq, ack, cwnd, queue) tuples."""
    t = pd.DataFrame(rows, columns=["time_ms", "flow", "event", "seq", "ack", "cwnd", "queue"])
    t["time_ns"] = (t.pop("time_ms") * 1_000_000).round().astype("int64")
    t["time_s"] = t.time_ns / 1e9
    t["ssthresh"] = 8192
    t["flight"] = 0
    return t


def test_ack_gaps_count_duplicates_and_skip_the_warm_up_and_other_flows():
    t = _trace([(900, 0, "ack", -1, 984, 0, -1),     # before 1 s: not counted
                (1000, 0, "ack", -1, 1968, 0, -1),
                (1000.341, 0, "ack", -1, 2952, 0, -1),
                (1000.5, 1, "ack", -1, 984, 0, -1),   # another flow
                (1002, 0, "dupack", -1, 2952, 0, -1),
                (1002, -1, "grant", 1, -1, 0, -1)])
    assert list((elloumi.ack_gaps_s(t) * 1e3).round(6)) == [0.341, 1.659]


# ---------------------------------------------------------------------------------------------------
# RTT, SW1 queue and throughput from a trace


def test_rtt_samples_follow_karn():
    t = _trace([(0, 0, "send", 0, 0, 984, -1),
                (1, 0, "send", 984, 0, 1968, -1),
                (2, 0, "send", 1968, 0, 1968, -1),
                (20, 0, "ack", -1, 984, 1968, -1),          # acknowledges seq 0 whole: 20 ms
                (21, 0, "dupack", -1, 984, 1968, -1),       # no sample
                (25, 0, "send", 2952, 984, 1968, -1),
                (600, 0, "retransmit", 984, 984, 984, -1),
                (630, 0, "ack", -1, 3936, 984, -1),         # fills the hole at 984: no sample (Karn)
                (640, 0, "send", 3936, 3936, 1968, -1),
                (645, 0, "send", 4920, 3936, 1968, -1),
                (650, 0, "ack", -1, 4400, 1968, -1),        # no segment acknowledged whole
                (660, 0, "ack", -1, 5904, 1968, -1)])       # 3936 and 4920: from 4920's send, 15 ms
    s = elloumi.rtt_samples(t)
    assert list(s.time_s) == [0.02, 0.66]
    assert list((s.rtt_s * 1e3).round(6)) == [20.0, 15.0]


def test_rtt_samples_from_the_trace_are_the_engines():
    # The figures' RTT (from the trace) and Table 3's (the engine's rtt_*) are the same samples.
    import hfcsim

    r = hfcsim.simulate(elloumi.scenario(0.3, "rr", 100, time_limit_s=5.0), seed=3, trace=True)
    f = r.flows[0]
    s = elloumi.rtt_samples(r.trace)
    s = s[s.time_s >= elloumi.MEASURE_FROM_S]
    assert f["rtt_samples"] > 100 and len(s) == f["rtt_samples"]
    assert s.rtt_s.mean() == pytest.approx(f["rtt_mean_s"], abs=1e-12)
    assert s.rtt_s.max() == pytest.approx(f["rtt_max_s"], abs=1e-12)
    assert s.rtt_s.std(ddof=0) == pytest.approx(f["rtt_std_s"], abs=1e-12)


def test_sw1_queue_is_the_third_links_rows():
    t = _trace([(0, 0, "send", 0, 0, 984, -1), (0, 0, "enqueue", 0, -1, 984, 1),
                (0.1, 0, "enqueue", 0, -1, 984, 22), (0.2, 0, "enqueue", 0, -1, 984, 30),
                (2, 0, "enqueue", 0, -1, 984, 22), (3, 0, "epd_drop", 984, -1, 984, 170),
                (3, 1, "enqueue", 0, -1, 984, 171)])
    t["link"] = [-1, 0, 1, 2, 3, 2, 2]
    q = elloumi.sw1_queue(t)
    assert list(q.event) == ["enqueue", "epd_drop"] and list(q.queue) == [30, 170]


def test_throughput_bins_count_cells_of_acknowledged_data():
    # 6000 packets acknowledged in the first half second, none in the second, 3000 in the third:
    # 6000 x 1166 x 8 bits / 0.5 s = 111.936 Mb/s
    t = _trace([(100, 0, "ack", -1, 6000 * 984, 0, -1), (700, 0, "dupack", -1, 6000 * 984, 0, -1),
                (1200, 0, "ack", -1, 9000 * 984, 0, -1)])
    b = elloumi.throughput_bins(t, end_s=1.5)
    assert list(b.start_s) == [0.0, 0.5, 1.0]
    assert list(b.mbps.round(6)) == [111.936, 0.0, 55.968]


def test_timeouts_by_rate_period():
    t = _trace([(5000, 0, "timeout", 0, -1, 984, -1), (9999, 0, "timeout", 0, -1, 984, -1),
                (10000, 0, "timeout", 0, -1, 984, -1), (25000, 0, "timeout", 0, -1, 984, -1),
                (25000, 1, "timeout", 0, -1, 984, -1)])
    assert elloumi.timeouts_by_rate(t) == [2, 1, 1]


# ---------------------------------------------------------------------------------------------------
# A quick reproduction: every file, every claim


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("elloumi")
    return reproduce.reproduce(elloumi.paper(), quick=True, out=out, progress=False), out


DRAWN = [f for f in elloumi.FIGURE_LIST if not f.is_experiment]


@pytest.mark.parametrize("fig", DRAWN, ids=lambda f: f"fig{f.id}")
def test_figures_are_valid_and_labelled(quick, fig):
    _, out = quick
    assert (out / "figures" / f"fig{fig.id}.png").read_bytes().startswith(PNG_MAGIC)
    text = " ".join(ET.parse(out / "figures" / f"fig{fig.id}.svg").getroot().itertext())
    assert fig.xlabel and fig.ylabel
    assert fig.xlabel in text and fig.ylabel in text
    assert (out / "data" / f"fig{fig.id}.csv").stat().st_size > 100


def test_report_has_every_claim(quick, every_claim_run_and_explained):
    report, out = quick
    md = (out / "report.md").read_text()
    every_claim_run_and_explained(report, md, CLAIM_IDS)
    assert "--quick grids for figures 4, 11, 19" in md


def test_the_engine_gives_the_ack_spacings_of_its_53_minislot_frame(quick):
    # 2 data slots (0.341 ms) as in the paper; across frames 29 minislots (1.237 ms), not the paper's
    # 28 (1.19 ms): the claim fails, and says why.
    report, _ = quick
    r = next(r for r in report.results if r.claim.id == "E-ack-spacing-values")
    assert "modes 0.341 ms and 1.237 ms" in r.measured
    assert r.status == reproduce.FAIL and "53" in r.claim.why


def test_sw1_rows_are_the_bottleneck_queue(quick):
    # EPD at SW1 (Romanow & Floyd): a packet is taken whole while the queue holds at most the threshold,
    # so a packet's enqueue row shows at most threshold + 22 cells, and a discard more than the threshold.
    _, out = quick
    q = pd.read_csv(out / "data" / "fig25.csv")
    enq, drops = q[q.event == "enqueue"], q[q.event == "epd_drop"]
    assert enq.queue.min() == 22 and enq.queue.max() <= elloumi.TRACE_EPD + 22
    assert len(drops) and (drops.queue > elloumi.TRACE_EPD).all()


def test_effective_throughput_is_a_percentage(quick):
    _, out = quick
    t = pd.read_csv(out / "data" / "fig4.csv")
    assert ((t.effective_pct_mean > 0) & (t.effective_pct_mean <= 100)).all()
    assert (t.payload_pct_mean / t.effective_pct_mean).round(9).eq(round(984 / 1166, 9)).all()
    assert (t.runs == reproduce.QUICK_RUNS).all()


def test_rate_change_periods_from_stopped_runs_match_the_trace(quick):
    # Seed 1's timeouts per period, from runs stopped at 10, 20 and 30 s, equal those of Fig. 23's traced
    # 30 s run of seed 1: a run's past does not depend on when it stops.
    _, out = quick
    per = pd.read_csv(out / "data" / "figratechange.csv")
    bins = pd.read_csv(out / "data" / "fig23.csv")
    for spacing, label in (("off", "RR + piggybacking"), ("min", "RR + ACK spacing (min)")):
        b = bins[bins.run == label]
        traced = [int(b[(b.start_s >= lo) & (b.start_s < lo + 10)].timeouts.sum()) for lo in (0, 10, 20)]
        row = per[(per["modems.0.ack_spacing"] == spacing) & (per.seed == 1)].iloc[0]
        assert traced == [int(row["1.5 Mb/s"]), int(row["2 Mb/s"]), int(row["2.5 Mb/s"])]


def test_every_title_states_the_runs_used(quick, titles_state_the_runs):
    # Issue 12, defect G: a --quick reproduction's figures and report say the runs it made.
    titles_state_the_runs(*quick)