"""Analytic models against the papers' numbers, limits, monotonicity, units and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcsim.models import cohen, lakshman, throughput

KB = 1024

# ---------------------------------------------------------------------------------------------
# Cohen & Ramanathan Sec. V.B (CLAIMS C-bufrule)


def test_bufrule_paper_example_in_packets():
    # "a CM buffer of 10 kb (seven packets)": (B - 1) * 15/25 <= 7  ->  B = 12.67 packets;
    # times the paper's P = 1500 bytes that is its "19 kb".
    b = cohen.max_socket_buffer_packets(7, 25e6, 10e6)
    assert b == pytest.approx(1 + 7 / 0.6)
    assert b * 1500 == pytest.approx(19_000)


@pytest.mark.parametrize(
    ("cm_bytes", "expected"),
    [
        (10 * KB, 18_071.6),  # 10240 / 1500 = 6.83 packets -> B = 12.38 -> 12.38 * 1460
        (7 * 1500, 18_493.3),  # the paper's "seven packets" -> B = 12.67 -> 12.67 * 1460
        (10_000, 17_682.2),  # a decimal 10 kB gives 17.7 kB, just under C-bufrule's 18-19 KB
    ],
)
def test_bufrule_paper_example_in_bytes(cm_bytes, expected):
    assert cohen.max_socket_buffer(cm_bytes, 25e6, 10e6) == pytest.approx(expected, abs=0.1)


def test_bufrule_whole_mss_and_strict_form():
    # 10240 / 1500 = 6.83 packets -> B = 12.38 -> 12 whole segments.
    assert cohen.max_socket_buffer_whole_mss(10 * KB, 25e6, 10e6) == 12 * 1460
    # strict: (B - 1) * 0.6 + 1 <= 7 -> B = 11 exactly.
    assert cohen.max_socket_buffer_packets(7, 25e6, 10e6, allow_one_drop=False) == pytest.approx(11)
    assert cohen.max_socket_buffer_whole_mss(7 * 1500, 25e6, 10e6, allow_one_drop=False) == 11 * 1460


@pytest.mark.parametrize(
    ("c", "n", "expected"),
    [(7, 1, 12.6667), (7, 3, 4.2222), (0.6, 1, 2.0), (10, 2, (10 / 0.6 + 1) / 2)],
)
def test_bufrule_connections_table(c, n, expected):
    assert cohen.max_socket_buffer_packets(c, 25e6, 10e6, connections=n) == pytest.approx(
        expected, rel=1e-4)


def test_bufrule_no_accumulation_when_lan_is_faster():
    assert cohen.max_socket_buffer(10 * KB, 10e6, 100e6) == math.inf
    assert cohen.max_socket_buffer_whole_mss(10 * KB, 10e6, 10e6) == math.inf
    assert cohen.min_cm_buffer(64 * KB, 10e6, 100e6) == 0


@given(c=st.floats(1, 1e6), n=st.integers(1, 16), strict=st.booleans(),
       rlan=st.floats(1e5, 9e6))
def test_bufrule_inverse_round_trips(c, n, strict, rlan):
    b = cohen.max_socket_buffer_packets(c, 1e7, rlan, n, not strict)
    if b * n >= 1:
        assert cohen.min_cm_buffer_packets(b, 1e7, rlan, n, not strict) == pytest.approx(c)


@given(c1=st.floats(1e3, 1e6), c2=st.floats(1e3, 1e6), n=st.integers(1, 16))
def test_bufrule_monotone(c1, c2, n):
    lo, hi = sorted((c1, c2))
    f = cohen.max_socket_buffer
    assert f(lo, 25e6, 10e6, n) <= f(hi, 25e6, 10e6, n)
    assert f(lo, 25e6, 10e6, n + 1) <= f(lo, 25e6, 10e6, n)
    assert cohen.max_socket_buffer_whole_mss(lo, 25e6, 10e6, n) <= f(lo, 25e6, 10e6, n) + 1e-6


@given(k=st.floats(0.1, 100))
def test_bufrule_units(k):
    # Scaling both rates changes nothing; scaling CM buffer, MSS and header scales the answer.
    base = cohen.max_socket_buffer(10 * KB, 25e6, 10e6)
    assert cohen.max_socket_buffer(10 * KB, 25e6 * k, 10e6 * k) == pytest.approx(base)
    assert cohen.max_socket_buffer(10 * KB * k, 25e6, 10e6, mss_bytes=1460 * k,
                                   header_bytes=40 * k) == pytest.approx(base * k)


# ---------------------------------------------------------------------------------------------
# Lakshman & Madhow Secs. II-III (CLAIMS L-wpipe, L-table1, L-double-ss, L-single-ss)

FIG1 = dict(mu_pps=100, tau_s=1.0, buffer_packets=10)
FIG2 = dict(mu_pps=100, tau_s=1.0, buffer_packets=80)


@pytest.mark.parametrize(("case", "w_pipe", "beta"), [(FIG1, 111, 10 / 101), (FIG2, 181, 80 / 101)])
def test_w_pipe_and_beta(case, w_pipe, beta):
    assert lakshman.pipe_window_packets(**case) == pytest.approx(w_pipe)
    assert lakshman.normalised_buffer(**case) == pytest.approx(beta)


TABLE_I = [
    # (rtts, services, acked, window, released, queue)
    (0, 0, None, 1, (1,), 1),
    (1, 0, 1, 2, (2, 3), 2),
    (2, 0, 2, 3, (4, 5), 2),
    (2, 1, 3, 4, (6, 7), 3),
    (3, 0, 4, 5, (8, 9), 2),
    (3, 1, 5, 6, (10, 11), 3),
    (3, 2, 6, 7, (12, 13), 4),
    (3, 3, 7, 8, (14, 15), 5),
    (4, 0, 8, 9, (16, 17), 2),
]


def test_table_i_exact():
    rows = lakshman.slow_start_rows(4)[: len(TABLE_I)]
    got = [(r.rtts, r.services, r.acked, r.window, r.released, r.queue) for r in rows]
    assert got == TABLE_I
    assert rows[3].time_s(100, 1.0) == pytest.approx(2 * 1.01 + 0.01)


@pytest.mark.parametrize(("b", "in_service", "n_b", "w_b"),
                         [(10, True, 4, 26), (10, False, 4, 27), (80, True, 7, 208),
                          (9, True, 4, 25), (2, True, 1, 4), (1, True, 0, 2), (0, False, 0, 2)])
def test_slow_start_overflow(b, in_service, n_b, w_b):
    assert lakshman.slow_start_overflow(b, in_service) == (n_b, w_b)


def test_overflow_agrees_with_queue_evolution():
    # Brute force on eqs. (2)-(3): first (n, m) with Q = m + 2 > B gives W_b.
    for b in range(1, 200):
        n = 0
        while 2**n + 1 <= b:  # largest Q in mini-cycle n is 2^n + 1
            n += 1
        m = b - 1
        assert lakshman.slow_start_overflow(b) == (n, lakshman.slow_start_window(n, m))


def test_fig1_double_slow_start():
    assert lakshman.double_slow_start(**FIG1)
    assert lakshman.double_slow_start_approx(lakshman.normalised_buffer(**FIG1))
    _, w_b = lakshman.slow_start_overflow(10)
    w_d = lakshman.slow_start_detection_window(w_b)
    assert (w_b, w_d, w_d / 2) == (26, 50, 25)
    assert lakshman.tahoe_cycle(**FIG1).double_slow_start


def test_fig2_single_slow_start():
    assert not lakshman.double_slow_start(**FIG2)
    assert not lakshman.double_slow_start_approx(lakshman.normalised_buffer(**FIG2))
    # Loss when the window passes W_pipe = 181; slow start then ends at 182 / 2 = 91.
    assert (lakshman.pipe_window_packets(**FIG2) + 1) / 2 == 91
    assert not lakshman.tahoe_cycle(**FIG2).double_slow_start


@pytest.mark.parametrize("beta", [0.0, 0.1, 0.3, 0.5, 0.8, 1.0])
def test_reno_cycle_closed_form(beta):
    mu, tau = 1000.0, 0.999  # mu T = 1000
    cyc = lakshman.reno_cycle(mu, tau, beta * 1000)
    assert cyc.utilisation == pytest.approx(0.75 * (1 + beta) ** 2 / (1 + beta + beta**2))


def test_cycle_limits_beta_to_zero():
    mu, tau = 1000.0, 0.999
    assert lakshman.reno_cycle(mu, tau, 0).utilisation == pytest.approx(0.75)
    # Tahoe with no buffer: double slow start, then congestion avoidance from ~1 to mu T: ~1/2.
    assert lakshman.tahoe_cycle(mu, tau, 0, buffer_counts_in_service=False).utilisation == (
        pytest.approx(0.5, abs=0.02))


@pytest.mark.parametrize("b", [2, 10, 30, 50, 80, 100])
def test_reno_beats_tahoe(b):
    reno, tahoe = lakshman.reno_cycle(100, 1.0, b), lakshman.tahoe_cycle(100, 1.0, b)
    assert reno.throughput_pps > tahoe.throughput_pps


def test_tahoe_cycle_bounded_and_growing_with_buffer():
    u = [lakshman.tahoe_cycle(100, 1.0, b).utilisation for b in range(2, 101)]
    assert all(0 < x <= 1 for x in u)
    # Crossing beta ~ 1/3 (no more double slow start) gives a jump up.
    assert lakshman.tahoe_cycle(100, 1.0, 40).utilisation > lakshman.tahoe_cycle(100, 1.0, 30).utilisation


def test_congestion_avoidance_phases():
    # Below mu T: one packet per RTT; above: (W2^2 - W1^2) / (2 mu).
    n, s = lakshman.congestion_avoidance(10, 20, 100, 0.99)  # T = 1, mu T = 100
    assert (n, s) == (pytest.approx(150), pytest.approx(10))
    n, s = lakshman.congestion_avoidance(100, 110, 100, 0.99)
    assert (n, s) == (pytest.approx(1050), pytest.approx(10.5))


@pytest.mark.parametrize("mu_t", [50, 200, 1000, 5000])
@pytest.mark.parametrize("x", [0.3, 1, 3, 10, 100])
def test_random_loss_collapses_on_p_mut2(mu_t, x):
    beta = 0.1
    mu, tau = 1000.0, (mu_t - 1) / 1000.0
    p = x / mu_t**2
    got = lakshman.throughput_random_loss_pps(p, mu, tau, beta * mu_t) / mu
    assert got == pytest.approx(lakshman.reno_utilisation_random_loss(x, beta), rel=1e-9)


def test_random_loss_under_half_beyond_ten():
    assert lakshman.reno_utilisation_random_loss(10, 0.1) < 0.5
    assert lakshman.reno_utilisation_random_loss(100, 1.0) == pytest.approx(math.sqrt(1.5 / 100))
    # Small p (mu T)^2: back to the loss-free cycle.
    assert lakshman.reno_utilisation_random_loss(1e-3, 0.1) == pytest.approx(
        0.75 * 1.1**2 / (1 + 0.1 + 0.01))


@settings(max_examples=50)
@given(p1=st.floats(1e-7, 0.5), p2=st.floats(1e-7, 0.5), b=st.integers(1, 120),
       variant=st.sampled_from(["reno", "tahoe"]))
def test_random_loss_non_increasing_in_p(p1, p2, b, variant):
    lo, hi = sorted((p1, p2))
    f = lakshman.throughput_random_loss_pps
    assert f(hi, 100, 1.0, b, variant) <= f(lo, 100, 1.0, b, variant) * (1 + 1e-9)


# ---------------------------------------------------------------------------------------------
# Mathis and PFTK

P = np.logspace(-7, -0.5, 60)


def test_mathis_value_and_constant():
    assert throughput.mathis_constant(1) == pytest.approx(1.2247, abs=1e-4)
    assert throughput.mathis_throughput_bps(1460, 0.1, 0.01) == pytest.approx(
        8 * 1460 / 0.1 * 1.2247 / 0.1, rel=1e-4)
    assert throughput.mathis_throughput_bps(1460, 0.1, 0.01, packets_per_ack=2) == pytest.approx(
        8 * 1460 / 0.1 * math.sqrt(0.75) / 0.1)


def test_p_to_zero_limits():
    tiny = np.array([1e-6, 1e-8, 1e-10])
    m = throughput.mathis_throughput_bps(1460, 0.1, tiny)
    assert np.all(np.diff(m) > 0) and m[-1] > 1e10  # unbounded
    cap = 8 * 1460 * 20 / 0.1
    for f in (throughput.pftk_throughput_bps, throughput.pftk_approx_throughput_bps):
        v = f(1460, 0.1, tiny, 1.0, 20)
        assert np.all(v <= cap * (1 + 1e-9))
        assert v[-1] == pytest.approx(cap, rel=1e-3)
    assert throughput.rfc3448_throughput_bps(1460, 0.1, 1e-10) > 1e10


@pytest.mark.parametrize("f", ["mathis", "pftk", "pftk_approx", "rfc3448"])
def test_non_increasing_in_p(f):
    call = {
        "mathis": lambda p: throughput.mathis_throughput_bps(1460, 0.1, p),
        "pftk": lambda p: throughput.pftk_throughput_bps(1460, 0.1, p, 1.0, 64),
        "pftk_approx": lambda p: throughput.pftk_approx_throughput_bps(1460, 0.1, p, 1.0, 64),
        "rfc3448": lambda p: throughput.rfc3448_throughput_bps(1460, 0.1, p),
    }[f]
    v = call(P)
    assert np.all(np.diff(v) <= 1e-9 * v[:-1])
    assert np.allclose([call(float(p)) for p in P[::10]], v[::10])


def test_pftk_close_to_approx_and_below_mathis_at_high_loss():
    p = np.array([1e-3, 1e-2, 3e-2])
    full = throughput.pftk_throughput_bps(1460, 0.1, p, 0.4, 1000, packets_per_ack=1)
    approx = throughput.pftk_approx_throughput_bps(1460, 0.1, p, 0.4, 1000, packets_per_ack=1)
    np.testing.assert_allclose(full, approx, rtol=0.3)
    assert throughput.pftk_throughput_bps(1460, 0.1, 0.1, 0.4, 1000, 1) < (
        throughput.mathis_throughput_bps(1460, 0.1, 0.1))


@given(k=st.floats(0.1, 10), p=st.floats(1e-6, 0.3))
def test_throughput_units(k, p):
    # Doubling MSS doubles bps; doubling RTT and RTO halves it (no window cap reached).
    m = throughput.mathis_throughput_bps(1460, 0.1, p)
    assert throughput.mathis_throughput_bps(1460 * k, 0.1, p) == pytest.approx(m * k)
    r = throughput.rfc3448_throughput_bps(1460, 0.1, p)
    assert throughput.rfc3448_throughput_bps(1460, 0.1 * k, p) == pytest.approx(r / k)
    f = throughput.pftk_throughput_bps(1460, 0.1, p, 1.0, 1e9)
    assert throughput.pftk_throughput_bps(1460, 0.1 * k, p, 1.0 * k, 1e9) == pytest.approx(f / k)


# ---------------------------------------------------------------------------------------------
# Errors name the parameter and the value

ERRORS = [
    (lambda: cohen.max_socket_buffer(-1, 25e6, 10e6), "cm_buffer_bytes = -1"),
    (lambda: cohen.max_socket_buffer(10 * KB, 0, 10e6), "downstream_bps = 0"),
    (lambda: cohen.max_socket_buffer(10 * KB, 25e6, 10e6, connections=0), "connections = 0"),
    (lambda: cohen.max_socket_buffer(10 * KB, 25e6, 10e6, mss_bytes=0), "mss_bytes = 0"),
    (lambda: cohen.min_cm_buffer(float("nan"), 25e6, 10e6), "socket_buffer_bytes = nan"),
    (lambda: lakshman.pipe_window_packets(0, 1, 10), "mu_pps = 0"),
    (lambda: lakshman.pipe_window_packets(100, -1, 10), "tau_s = -1"),
    (lambda: lakshman.slow_start_overflow(0), "buffer_packets = 0"),
    (lambda: lakshman.slow_start_overflow(2.5), "buffer_packets = 2.5"),
    (lambda: lakshman.slow_start_window(2, 4), "m = 4"),
    (lambda: lakshman.throughput_random_loss_pps(1.0, 100, 1, 10), "loss = 1"),
    (lambda: lakshman.throughput_random_loss_pps(0.01, 100, 1, 10, "vegas"), "variant = 'vegas'"),
    (lambda: lakshman.reno_utilisation_random_loss(-1, 0.1), "p_mut2 = -1"),
    (lambda: throughput.mathis_throughput_bps(1460, 0.1, [0.01, 0.0]), "loss = 0"),
    (lambda: throughput.mathis_throughput_bps(1460, 0, 0.01), "rtt_s = 0"),
    (lambda: throughput.pftk_throughput_bps(1460, 0.1, 0.01, -1, 20), "rto_s = -1"),
    (lambda: throughput.pftk_throughput_bps(1460, 0.1, 0.01, 1, 0), "max_window_packets = 0"),
    (lambda: throughput.rfc3448_throughput_bps(1460, 0.1, 2), "loss = 2"),
]


@pytest.mark.parametrize(("call", "message"), ERRORS)
def test_errors_name_parameter_and_value(call, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(")):
        call()
