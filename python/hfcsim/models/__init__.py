"""Analytic models of TCP over cable networks, from the papers hfcsim implements.

Each function names its units in its parameters (``rate_bps``, ``buffer_bytes``, ``rtt_s``,
``loss`` a probability, ``*_packets`` a count of maximum-sized packets), gives its formula and
source in its docstring, and raises :class:`ValueError` naming the parameter and the value for
impossible inputs, e.g. ``rtt_s = -1: must be > 0``.

Modules:

- :mod:`hfcsim.models.cohen` — Cohen & Ramanathan 1998 (paper 001) Sec. V.B: socket buffer vs
  cable-modem buffer.
- :mod:`hfcsim.models.nguyen` — Nguyen & Armitage 2004 (paper 003) Sec. III.B-C: DS/US ratio rule
  (1), protocol overhead, MAP-interval packet-rate limits.
- :mod:`hfcsim.models.lakshman` — Lakshman & Madhow 1997 (paper 004) Secs. II-III: W_pipe, beta,
  slow-start evolution (Table I, eqs. 2-5), Tahoe/Reno cycles, random loss.
- :mod:`hfcsim.models.throughput` — Mathis et al. 1997 and Padhye et al. 1998 (PFTK, full and the
  RFC 3448 simplified form).
"""

from __future__ import annotations

from hfcsim.models import cohen, lakshman, nguyen, throughput

__all__ = ["cohen", "lakshman", "nguyen", "throughput"]
