"""Nguyen & Armitage 2004 (paper 003): the Sec. III.B-C rules and the bulk-download model of Sec. III.A
and IV, against the paper's numbers and hand-worked ones (CLAIMS N-ratio, N-overhead, N-map-pps,
N-rtt-jump, N-rtt-window)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcsim import docsis
from hfcsim.models import lakshman, nguyen

# The paper's testbed (Sec. III.A): DS cap 2 Mb/s, US cap 1 Mb/s, idle ping RTT 13 ms, MTU 1500.
CAP, US, IDLE = 2e6, 1e6, 0.013

# ---------------------------------------------------------------------------------------------
# Constants: one place (hfcsim.docsis), re-exported under the old names


@pytest.mark.parametrize("name", ["ETHERNET_HEADER_BYTES", "DOCSIS_HEADER_BYTES", "TCPIP_HEADER_BYTES",
                                  "ETHERNET_MIN_FRAME_BYTES", "FEC_FRACTION", "MPEG_FRACTION"])
def test_constants_are_docsis_modules(name):
    assert getattr(nguyen, name) is getattr(docsis, name)
    assert name in nguyen.__all__


@pytest.mark.parametrize(("name", "value"), [
    ("TCPIP_HEADER_BYTES", 40), ("ETHERNET_HEADER_BYTES", 18), ("DOCSIS_HEADER_BYTES", 6),  # Sec. III.C
    ("ETHERNET_MIN_FRAME_BYTES", 64),
    ("FEC_FRACTION", 6 / 128),    # "6/128 = 4.7 %"
    ("MPEG_FRACTION", 4.5 / 188),  # "4.5/188 = 2.4 %"
])
def test_constant_values(name, value):
    assert getattr(nguyen, name) == pytest.approx(value, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# Overheads (N-overhead)


@pytest.mark.parametrize(("payload", "paper"), [(1500, 0.112), (512, 0.182)])
def test_overhead_matches_paper_to_0_1_pct(payload, paper):
    # 64/1564 + 6/128 + 4.5/188 = 0.04092 + 0.04688 + 0.02394 = 0.11174;
    # 64/576 + ... = 0.11111 + 0.04688 + 0.02394 = 0.18193.
    assert abs(nguyen.overhead_fraction(payload) - paper) < 0.001


@pytest.mark.parametrize(("payload", "paper"), [(1500, 0.041), (512, 0.111)])
def test_header_overhead_matches_paper(payload, paper):
    assert abs(nguyen.header_overhead_fraction(payload) - paper) < 0.001


@pytest.mark.parametrize(("component", "paper"), [("FEC_FRACTION", 0.047), ("MPEG_FRACTION", 0.024)])
def test_overhead_components_match_paper(component, paper):
    assert getattr(nguyen, component) == pytest.approx(paper, abs=5e-4)


def test_compound_form_and_expected_throughput():
    assert nguyen.overhead_fraction(1500, combine="compound") < nguyen.overhead_fraction(1500)
    assert nguyen.expected_throughput_bps(2e6, 1500) == pytest.approx(2e6 * (1 - 0.11173), rel=1e-4)


@pytest.mark.parametrize(("mtu", "expected"), [
    (1500, 2e6 * 1460 / 1518),  # 1.9236 Mb/s: the cap meters Ethernet frames
    (576, 2e6 * 536 / 594),
    (512, 2e6 * 472 / 530),
])
def test_ds_cap_in_payload_terms(mtu, expected):
    assert nguyen.ds_cap_payload_bps(2e6, mtu) == pytest.approx(expected, rel=1e-12)
    # above the paper's "expected throughput", which also counts FEC and MPEG-2 against the cap
    assert nguyen.ds_cap_payload_bps(2e6, mtu) > nguyen.expected_throughput_bps(2e6, mtu)


# ---------------------------------------------------------------------------------------------
# Rule (1) (N-ratio)


def test_ratio_rule_formula():
    assert nguyen.ds_us_ratio_limit(1500, 64, 1.5) == pytest.approx(1500 * 1.5 / 64)
    assert nguyen.ack_limited_downstream_bps(64e3, 1500, 64, 1.5) == pytest.approx(64e3 * 1500 * 1.5 / 64)


@pytest.mark.parametrize(("mtu", "paper"), [(1500, 31), (1250, 31), (576, 12), (512, 12)])
def test_ratio_rule_near_papers_knees(mtu, paper):
    # The paper reads one knee for two MTUs off Fig. 9; (1) itself cannot give that: +-15 %.
    assert nguyen.ds_us_ratio_limit_for_mtu(mtu, 1.5) == pytest.approx(paper, rel=0.15)


@pytest.mark.parametrize(("mtu", "d", "expected"), [
    (1500, 1.5, 1524 * 1.5 / 70),  # on the cable: + DOCSIS header, ACK 64 + 6 = 32.66
    (512, 1.5, 536 * 1.5 / 70),    # 11.49
    (1500, 2.0, 1524 * 2 / 70),
])
def test_ratio_rule_on_the_cable(mtu, d, expected):
    assert nguyen.ds_us_ratio_limit_for_mtu(mtu, d) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("mtu", "d", "expected"), [
    (1500, 1.5, 35.578125),  # as the caps count: 1518 * 1.5 / 64
    (576, 1.5, 13.921875),   # 594 * 1.5 / 64
    (512, 1.5, 12.421875),   # 530 * 1.5 / 64
    (1500, 1.0, 23.71875),   # 1518 / 64
])
def test_ratio_rule_as_the_caps_count(mtu, d, expected):
    assert nguyen.ds_us_ratio_limit_for_caps(mtu, d) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# MAP limits (N-map-pps)


def test_map_limits():
    assert nguyen.upstream_packet_rate_pps(0.002, 2) == pytest.approx(250)  # 500 MAPs/s, 2 per packet
    assert nguyen.upstream_rate_limit_bps(1518) == pytest.approx(3.036e6)  # "roughly 3 Mbps"
    np.testing.assert_allclose(nguyen.downstream_packet_rate_pps([1, 1.5, 2]), [250, 375, 500])
    assert nguyen.map_overhead_bps(0.002, 64) == pytest.approx(256e3)


@given(k=st.floats(0.1, 10))
def test_map_limits_units(k):
    # A k-times longer MAP interval gives k-times fewer packets per second.
    assert nguyen.upstream_packet_rate_pps(0.002 * k) == pytest.approx(250 / k)


# ---------------------------------------------------------------------------------------------
# The bulk download through the DS cap (N-rtt-jump, N-rtt-window), worked by hand.
#
# 32 KB window (32768 B), MTU 1500 -> MSS 1460, floor(32768 / 1460) = 22 segments in flight, each a
# 1518 B Ethernet frame: 33396 B. The 2 Mb/s cap carries 2e6 * 0.013 / 8 = 3250 B in the 13 ms idle
# RTT, so 33396 - 3250 = 30146 B stand in the CMTS queue: 30146 * 8 / 2e6 = 120.584 ms, and the
# loaded RTT is 13 + 120.584 = 133.584 ms (the paper: ~120 ms). Throughput: the cap in payload terms,
# 2e6 * 1460 / 1518 = 1.92358 Mb/s. In segments: r = 2e6 / (8 * 1518) = 164.69 /s, r * 13 ms = 2.141.
R_DS = CAP / (8 * 1518)
PAYLOAD = CAP * 1460 / 1518


def _reno(mu, buffer_packets):
    return lakshman.reno_cycle(mu, IDLE, buffer_packets).utilisation


DOWNLOADS = [
    # (kwargs, bottleneck, loaded RTT s, queue bytes, throughput b/s, loss cycles)
    (dict(window_bytes=32768), "ds_cap", 0.133584, 30146, PAYLOAD, False),
    # the US cap of the paper's test does not bind: 1e6 / 512 * 1.5 = 2930 ACK-clocked segments/s
    (dict(window_bytes=32768, us_cap_bps=US), "ds_cap", 0.133584, 30146, PAYLOAD, False),
    # 48 KB (the paper's later default): 33 x 1518 = 50094 - 3250 = 46844 B -> 187.376 ms
    (dict(window_bytes=48 * 1024), "ds_cap", 0.013 + 0.187376, 46844, PAYLOAD, False),
    # MTU 512: MSS 472, 69 segments of 530 B = 36570 - 3250 = 33320 B -> 133.28 ms; more than at MTU
    # 1500, as Fig. 4 has it. The cap passes 2e6 / (8 * 530) = 471.7 segments/s: more than 2 ms MAPs
    # clock with two MAPs per ACK (375), so only when piggybacking or concatenation lifts that limit.
    (dict(window_bytes=32768, mtu_bytes=512, maps_per_packet=None), "ds_cap", 0.013 + 0.13328, 33320,
     CAP * 472 / 530, False),
    # With it: 375 segments/s, 375 * 472 * 8 = 1.416 Mb/s; 69 - 375 * 0.013 = 64.125 segments' ACKs at
    # the modem (64.125 / 1.5 * 64 B), 64.125 / 375 = 171 ms
    (dict(window_bytes=32768, mtu_bytes=512), "map", 0.013 + 64.125 / 375, 64.125 / 1.5 * 64, 1.416e6, False),
    # 2 KB window: one segment, no queue; window-limited at 1460 * 8 / 13 ms = 898.5 kb/s
    (dict(window_bytes=2048), "ds_cap", 0.013, 0, 1460 * 8 / 0.013, False),
    # a window below one MSS is sent as it is: 1000 * 8 / 13 ms
    (dict(window_bytes=1000), "ds_cap", 0.013, 0, 1000 * 8 / 0.013, False),
    # the knee: 3 segments = 4554 B - 3250 = 1304 B queued, 5.216 ms; full rate
    (dict(window_bytes=4380), "ds_cap", 0.013 + 0.005216, 1304, PAYLOAD, False),
    # a 16000 B CMTS buffer caps the queue at 64 ms (the peak); 16000 / 1518 = 10.5 segments > r T,
    # so Reno's sawtooth keeps the link busy
    (dict(window_bytes=32768, buffer_bytes=16000), "ds_cap", 0.077, 16000, PAYLOAD, True),
    # a 2000 B buffer: 1.32 segments, beta < 1 -> Reno cycle utilisation
    (dict(window_bytes=32768, buffer_bytes=2000), "ds_cap", 0.021, 2000,
     PAYLOAD * _reno(R_DS, 2000 / 1518), True),
    # AQMs hold the queue near their target: PIE 15 ms (3750 B, 2.47 frames); DOCSIS-PIE's 10 ms is 1.65
    # frames, below the 2 packets PIE never drops under (RFC 8033 Sec. 4.1): 2 x 1518 B, 12.144 ms; CoDel's
    # 5 ms is 0.82 frames, below the one packet CoDel never drops under (RFC 8289): 1518 B, 6.072 ms
    (dict(window_bytes=32768, aqm="pie"), "ds_cap", 0.028, 3750, PAYLOAD * _reno(R_DS, R_DS * 0.015), True),
    (dict(window_bytes=32768, aqm="docsis_pie"), "ds_cap", 0.013 + 0.012144, 3036, PAYLOAD * _reno(R_DS, 2), True),
    (dict(window_bytes=32768, aqm="codel"), "ds_cap", 0.013 + 0.006072, 1518, PAYLOAD * _reno(R_DS, 1), True),
    # an AQM does nothing when the window's queue is below its target: the knee window under PIE
    (dict(window_bytes=4380, aqm="pie"), "ds_cap", 0.013 + 0.005216, 1304, PAYLOAD, False),
    # the tighter of buffer and target wins
    (dict(window_bytes=32768, aqm="pie", buffer_bytes=2000), "ds_cap", 0.021, 2000,
     PAYLOAD * _reno(R_DS, 2000 / 1518), True),
    # US cap 32 kb/s (DS/US = 62.5 > 35.6): 32000 / 512 * 1.5 = 93.75 segments/s ACK-clocked,
    # 93.75 * 1460 * 8 = 1.095 Mb/s; 22 - 93.75 * 0.013 = 20.781 segments' ACKs (20.781 / 1.5 * 64 =
    # 886.7 B) wait at the modem, 20.781 / 93.75 = 221.67 ms
    (dict(window_bytes=32768, us_cap_bps=32e3), "ack_clock", 0.013 + (22 - 93.75 * 0.013) / 93.75,
     (22 - 93.75 * 0.013) / 1.5 * 64, 1.095e6, False),
]


@pytest.mark.parametrize(("kwargs", "bottleneck", "rtt", "queue", "throughput", "loss"), DOWNLOADS)
def test_bulk_download_hand_worked(kwargs, bottleneck, rtt, queue, throughput, loss):
    args = {"ds_cap_bps": CAP, "idle_rtt_s": IDLE, **kwargs}
    got = nguyen.bulk_download(**args)
    assert got.bottleneck == bottleneck
    assert got.loaded_rtt_s == pytest.approx(rtt, rel=1e-9)
    assert got.queue_bytes == pytest.approx(queue, rel=1e-9, abs=1e-9)
    assert got.throughput_bps == pytest.approx(throughput, rel=1e-9)
    assert got.loss_cycles is loss
    assert nguyen.loaded_rtt_s(**args) == got.loaded_rtt_s
    assert nguyen.download_throughput_bps(**args) == got.throughput_bps


def test_codel_costs_throughput_pie_hardly():
    # Reno with beta = B / (mu T): PIE's 2.47 segments give 0.995 of the link; CoDel's 0.82 are below the
    # one packet it keeps (RFC 8289), beta = 1 / 2.141: 0.918.
    pie = nguyen.download_throughput_bps(32768, CAP, IDLE, aqm="pie")
    codel = nguyen.download_throughput_bps(32768, CAP, IDLE, aqm="codel")
    assert pie / PAYLOAD == pytest.approx(0.9953, abs=1e-4)
    assert codel / PAYLOAD == pytest.approx(0.9182, abs=1e-4)
    assert codel / PAYLOAD == pytest.approx(_reno(R_DS, 1))


def test_map_limit_binds_above_4_4_mbps():
    # 10 Mb/s DS cap: 375 segments/s through 2 ms MAPs (250 ACKs/s x 1.5) = 375 * 1460 * 8 = 4.38 Mb/s
    got = nguyen.bulk_download(32768, 10e6, IDLE, us_cap_bps=US)
    assert got.bottleneck == "map"
    assert got.throughput_bps == pytest.approx(4.38e6)
    assert got.limits_bps["ds_cap"] == pytest.approx(10e6 * 1460 / 1518)
    # lifted (piggybacking, concatenation): the DS cap binds
    lifted = nguyen.bulk_download(32768, 10e6, IDLE, us_cap_bps=US, maps_per_packet=None)
    assert lifted.bottleneck == "ds_cap" and "map" not in lifted.limits_bps


@given(w1=st.integers(1, 200_000), w2=st.integers(1, 200_000))
def test_loaded_rtt_grows_with_window(w1, w2):
    # N-rtt-window: monotone non-decreasing in the window; so is throughput without loss.
    lo, hi = sorted((w1, w2))
    assert nguyen.loaded_rtt_s(lo, CAP, IDLE) <= nguyen.loaded_rtt_s(hi, CAP, IDLE) + 1e-12
    assert nguyen.download_throughput_bps(lo, CAP, IDLE) <= nguyen.download_throughput_bps(hi, CAP, IDLE) + 1e-6


@given(window=st.integers(1, 500_000), buffer=st.integers(0, 100_000))
def test_buffer_bounds_queue(window, buffer):
    got = nguyen.bulk_download(window, CAP, IDLE, buffer_bytes=buffer)
    assert got.queue_bytes <= buffer + 1e-9
    assert got.throughput_bps <= nguyen.ds_cap_payload_bps(CAP) + 1e-6


# ---------------------------------------------------------------------------------------------
# Windows (Sec. III.A, IV)


@pytest.mark.parametrize(("cap", "idle", "mtu", "expected"), [
    (2e6, 0.013, 1500, 3 * 1460),  # 3250 / 1518 = 2.14 -> 3 segments
    (2e6, 0.013, 512, 7 * 472),    # 3250 / 530 = 6.13 -> 7
    (0.5e6, 0.013, 1500, 1460),    # 812.5 / 1518 -> at least one
    (2e6, 0.0, 1500, 1460),
])
def test_knee_window(cap, idle, mtu, expected):
    assert nguyen.knee_window_bytes(cap, idle, mtu) == expected
    # the knee fills the cap; one segment less does not (the DS cap alone: no MAP limit)
    full = nguyen.ds_cap_payload_bps(cap, mtu)
    assert nguyen.download_throughput_bps(expected, cap, idle, mtu, maps_per_packet=None) == pytest.approx(full)
    if expected > mtu - 40:
        assert nguyen.download_throughput_bps(expected - (mtu - 40), cap, idle, mtu, maps_per_packet=None) < full


@pytest.mark.parametrize(("cap", "rtt", "mtu", "expected"), [
    (2e6, 0.033, 1500, 5 * 1460),    # 8250 / 1518 = 5.43 -> 5 segments
    (2e6, 0.120, 1500, 19 * 1460),   # the paper's loaded ~120 ms: 30000 / 1518 = 19.8 -> 19, 27.7 KB
    (2e6, 0.120, 512, 56 * 472),     # 30000 / 530 = 56.6 -> 56, 26.4 KB
    (0.5e6, 0.010, 1500, 1460),      # 625 / 1518 -> at least one
])
def test_window_for_loaded_rtt(cap, rtt, mtu, expected):
    assert nguyen.window_for_loaded_rtt_bytes(cap, rtt, mtu) == expected


def test_window_from_loaded_rtt_keeps_queue_within_it():
    # idle 13 ms + 20 ms of queueing accepted -> 7300 B, whose queue is 5 x 1518 - 3250 = 4340 B, 17.36 ms
    w = nguyen.window_for_loaded_rtt_bytes(CAP, IDLE + 0.020)
    got = nguyen.bulk_download(w, CAP, IDLE)
    assert got.queue_s == pytest.approx(4340 * 8 / CAP)
    assert got.queue_s <= 0.020
    assert got.throughput_bps == pytest.approx(PAYLOAD)


# ---------------------------------------------------------------------------------------------
# Errors name the parameter and the value

ERRORS = [
    (lambda: nguyen.ds_us_ratio_limit(1500, 0), "ack_packet_bytes = 0"),
    (lambda: nguyen.overhead_fraction(1500, combine="x"), "combine = 'x'"),
    (lambda: nguyen.upstream_packet_rate_pps([0.002, -1]), "map_interval_s = -1"),
    (lambda: nguyen.downstream_packet_rate_pps(0), "packets_per_ack = 0"),
    (lambda: nguyen.bulk_download(0, CAP, IDLE), "window_bytes = 0"),
    (lambda: nguyen.bulk_download(32768, -1, IDLE), "ds_cap_bps = -1"),
    (lambda: nguyen.bulk_download(32768, CAP, -0.1), "idle_rtt_s = -0.1"),
    (lambda: nguyen.bulk_download(32768, CAP, IDLE, 40), "mtu_bytes = 40"),
    (lambda: nguyen.bulk_download(32768, CAP, IDLE, us_cap_bps=0), "us_cap_bps = 0"),
    (lambda: nguyen.bulk_download(32768, CAP, IDLE, buffer_bytes=-1), "buffer_bytes = -1"),
    (lambda: nguyen.bulk_download(32768, CAP, IDLE, aqm="red"), "aqm = 'red'"),
    (lambda: nguyen.knee_window_bytes(CAP, float("nan")), "idle_rtt_s = nan"),
    (lambda: nguyen.window_for_loaded_rtt_bytes(CAP, 0), "loaded_rtt_s = 0"),
    (lambda: nguyen.ds_cap_payload_bps(0), "ds_cap_bps = 0"),
    (lambda: nguyen.ds_us_ratio_limit_for_caps(30), "mtu_bytes = 30"),
]


@pytest.mark.parametrize(("call", "message"), ERRORS)
def test_errors_name_parameter_and_value(call, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(")):
        call()
