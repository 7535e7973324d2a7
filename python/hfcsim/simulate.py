"""Run one scenario with one seed on the engine and return a Result.

pandas is imported lazily (only by ``Result.to_frame``, ``Result.trace`` and ``Result.stations``) so
that ``hfcsim run`` starts fast.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from hfcsim.errors import EngineError, ScenarioError, type_name
from hfcsim.scenario import Scenario, load, native
from hfcsim.store import check_path

if TYPE_CHECKING:
    import pandas as pd

    from hfcsim.store import HeldRenames

__all__ = ["CALL_COLUMNS", "FLOW_METRICS", "FlowColumns", "GAME_COLUMNS", "MAC_METRICS", "MAX_SEED", "PING_COLUMNS", "PLACE_METRICS", "QUEUE_METRICS",
           "STATION_METRICS", "SWITCH_METRICS", "TRACE_COLUMNS", "Result", "simulate", "simulate_trace_csv"]

MAX_SEED = 2**64 - 1  # the engine's seed is a u64

# Column order of the engine contract (_core.pyi). Results list these first, in this order, then any
# further columns the engine reports, so tables and JSON read the same whatever order the engine uses.
FLOW_METRICS = (
    "flow", "bytes", "delivered_bytes", "start_s", "end_s", "duration_s", "throughput_bps", "finished",
    "timeouts", "fast_retransmits", "retransmitted_segments", "data_segments_sent", "acks_received",
    "data_lost_downstream", "acks_lost_upstream", "cm_buffer_drops", "queue_drops", "first_ack_delay_s",
    "access_delay_mean_s", "access_delay_max_s", "request_grant_mean_s",
    # From sim.measure_from_s on: Elloumi's effective throughput and the sender's RTT samples.
    "measured_bytes", "measured_s", "rtt_samples", "rtt_mean_s", "rtt_max_s", "rtt_std_s",
    # The upstream station the flow's ACKs (download) or data (upload) use, and its requests
    # (Elloumi Figs. 15-16); this flow's packets discarded by EPD / PPD at an ATM switch.
    "station", "station_requests", "station_piggybacked_requests", "epd_drops",
    # Drops by an AQM (PIE, CoDel) at a DOCSIS service flow's queue; the run's ping RTTs by this flow's
    # phases (sent before it started, while it ran, after it ended) and the echoes lost while it ran.
    "aqm_drops", "ping_before_mean_s", "ping_during_mean_s", "ping_during_max_s", "ping_after_mean_s",
    "ping_during_samples", "ping_lost",
    # Why the flow ended: finished, time_limit (still running at sim.time_limit_s), gave_up (TCP dropped
    # the connection after its timeouts; syn_timeouts counts the handshake's, timeouts the data's), or
    # not_started (the run ended before its start_s). Issue 26, defect 6.
    "end_reason", "syn_timeouts",
)
# One row per echo of every ping ([[pings]]): rtt_s is None when no reply came.
# up_s / down_s: each echo's one-way delays, client to server and back (the server answers at once,
# so rtt_s = up_s + down_s); NaN when not received. lost: dropped on its way (an echo still on its way
# at the end of the run, or answered after its ping stopped, is not lost). Then where each one-way
# delay went: waiting in buffers (queue), the upstream's request/grant cycle and the wait for its
# minislots (access), serialisation and propagation (the plant's constant delays included), which sum
# to up_s and down_s; and the place where the echo waited longest each way (a name of PLACE_METRICS).
PING_DELAY_PARTS = ("queue", "access", "serialisation", "propagation")
PING_COLUMNS = ("ping", "seq", "sent_s", "rtt_s", "up_s", "down_s", "lost",
                *(f"{way}_{part}_s" for way in ("up", "down") for part in PING_DELAY_PARTS),
                "up_waited_most_at", "down_waited_most_at")
# Real-time flows (issue 37): one row per [[games]] session and way ("up": client to server, "down":
# server to client): packets sent, received, lost (sent but not received by the session's end, 1 s after
# its last packet) and late (received past games.*.deadline_s); the received packets' one-way delay
# (exact nearest-rank percentiles, mean; NaN without any); RFC 3550's interarrival jitter at the end
# and its most (s).
GAME_COLUMNS = ("game", "modem", "direction", "sent", "received", "lost", "late", "delay_min_s", "delay_p50_s",
                "delay_p90_s", "delay_p99_s", "delay_max_s", "delay_mean_s", "jitter_s", "jitter_max_s")
# One row per [[calls]] call and way, as a game's (late: past the playout point, the way's lowest one-way
# delay + calls.*.jitter_buffer_s), with ITU-T G.107's mouth-to-ear delay, R-factor and MOS (NaN
# without a frame received).
CALL_COLUMNS = ("call", *GAME_COLUMNS[1:], "mouth_to_ear_s", "r_factor", "mos")
# Applications ([[web]], [[video]]; the engine's apps/). One row per page load: ttfb_s and load_s from
# the page's start to the first byte of the document and to the last byte of the last object (NaN when
# the run ended first or a connection failed); bytes received (bodies and headers).
PAGE_COLUMNS = ("web", "page", "modem", "start_s", "ttfb_s", "load_s", "bytes", "objects", "connections", "failed")
# One row per video: startup_s from the player's start to the first frame; rebuffer_s stalled after
# it (a stall still on at the run's end counts up to the end); mean_bitrate_bps over the segments in;
# end_s when it ended (played to its end, or its connection failed), else the run's end.
VIDEO_COLUMNS = ("video", "modem", "start_s", "startup_s", "rebuffer_s", "rebuffers", "mean_bitrate_bps", "switches",
                 "segments_done", "segments", "finished", "failed", "end_s")
# One row per video segment asked for: when, at what bitrate, with how much buffer.
SEGMENT_COLUMNS = ("video", "segment", "bitrate_bps", "requested_s", "first_byte_s", "done_s", "buffer_s")
# One row per responsiveness test ([[rpm]], draft-ietf-ippm-responsiveness): rpm (round trips per
# minute under working conditions), the idle phase's round trip and RPM, the 95 % trimmed means of the
# probe kinds (tcp_f, tls_f, http_f on new connections; http_l on the load-generating ones), s, the
# goodput each way, b/s, the probes counted and the load-generating connections used.
RPM_COLUMNS = ("test", "modem", "start_s", "rpm", "idle_rtt_s", "idle_rpm", "tcp_f_s", "tls_f_s", "http_f_s",
               "http_l_s", "goodput_down_bps", "goodput_up_bps", "foreign_probes", "self_probes", "idle_probes",
               "connections", "failed")
APP_TABLES = {"pages": PAGE_COLUMNS, "videos": VIDEO_COLUMNS, "segments": SEGMENT_COLUMNS, "rpm": RPM_COLUMNS}
# engine.places: one row per place packets waited (a link's buffer, a service flow's queue, a modem's
# MAC queue, a bonded modem's FIFO): arrivals, served, drops by reason, marks, the waits' mean, p50,
# p90, p99 and max (s; percentiles within 1.6 %), and the bytes each arrival found there (p50, p99, max).
PLACE_METRICS = ("name", "kind", "direction", "arrivals", "served", "drops_full", "drops_aqm", "drops_other", "lost",
                 "marks", "wait_mean_s", "wait_p50_s", "wait_p90_s", "wait_p99_s", "wait_max_s", "held_p50_bytes",
                 "held_p99_bytes", "held_max_bytes")
# engine.queues: one row per service queue: each DOCSIS service flow's, the hfc modem buffers' with
# network.cm_buffer_aqm, the bottleneck's with network.bottleneck_aqm (absent without any).
QUEUE_METRICS = ("name", "sent", "drops_full", "drops_aqm", "max_bytes")
TRACE_COLUMNS = ("time_s", "flow", "event", "seq", "ack", "cwnd", "ssthresh", "flight", "queue", "time_ns",
                 "station", "minislot", "link")
# One row per upstream station (cable modem) with a request/grant MAC; none with the FIFO upstream.
STATION_METRICS = (
    "station", "group", "distance_km", "packets", "bytes", "background_packets", "requests", "collisions",
    "piggybacked_requests", "grants", "dropped_packets", "access_delay_mean_s", "access_delay_max_s",
    "request_grant_mean_s",
)
# engine.mac: the MAC's totals over the run (null with the FIFO upstream).
MAC_METRICS = ("requests", "collisions", "contention_slots", "data_slots", "idle_slots", "piggybacked_requests",
               "grants", "dropped_requests", "frames")
# engine.switches: EPD's and PPD's discards summed over the ATM switch queues (null unless atm_hfc).
SWITCH_METRICS = ("epd_packets", "epd_cells", "partial_packets", "partial_cells")


class FlowColumns:
    """A run's per-flow metrics as columns, as the engine hands them over (hfcsim-core
    ``metrics::Column``): one buffer per metric, no Python object per flow (issue 26, defect 3: a
    million flows as dicts did not fit in memory). ``rows()`` gives the dicts the engine's JSON gives,
    ``frame()`` the DataFrame ``pd.DataFrame(rows())`` gives, without the dicts. Only ``frame()``
    imports numpy: its threads would take a SIGINT the CLI holds back (cli.main)."""

    __slots__ = ("count", "_columns")

    # The engine's kinds as struct formats (native order: the engine writes little-endian, and
    # memoryview.cast knows no other; sys.byteorder is checked below).
    _FORMATS = {"u": "Q", "i": "q", "f": "d", "b": "B", "s": "I"}
    _DTYPES = {"u": "<u8", "i": "<i8", "f": "<f8", "b": "u1", "s": "<u4"}

    def __init__(self, raw: list[tuple[str, str, bytes, bytes, list[str]]]) -> None:
        import sys

        if sys.byteorder != "little":
            raise EngineError("the engine's flow columns are little-endian; this machine is not")
        columns = {name: (kind, data, state, list(strings)) for name, kind, data, state, strings in raw}
        self.count = len(next(iter(columns.values()))[2]) if columns else 0
        # The contract's metrics first (FLOW_METRICS order), then the others as the engine orders them,
        # as _in_order orders a flow's JSON object.
        self._columns = {**{n: columns[n] for n in FLOW_METRICS if n in columns}, **columns}

    def __len__(self) -> int:
        return self.count

    @property
    def names(self) -> list[str]:
        return list(self._columns)

    def values(self, name: str) -> list[Any]:
        """One metric of every flow as Python values (None for null or absent), in flow order."""
        kind, data, state, strings = self._columns[name]
        if kind == "?":
            return [None] * self.count
        out = memoryview(data).cast(self._FORMATS[kind]).tolist()
        if kind == "b":
            out = [bool(v) for v in out]
        elif kind == "s":
            out = [strings[i] for i in out]
        if state.count(2) != self.count:
            out = [v if s == 2 else None for v, s in zip(out, state, strict=True)]
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One dict per flow, as the engine's JSON has it: a key left out where the engine leaves it out."""
        names = self.names
        rows = [dict(zip(names, row, strict=True)) for row in zip(*(self.values(n) for n in names), strict=True)]
        for name in names:
            state = self._columns[name][2]
            if 0 in state:
                for i, s in enumerate(state):
                    if s == 0:
                        del rows[i][name]
        return rows

    def frame(self) -> pd.DataFrame:
        """``pd.DataFrame(self.rows())``, column by column: numbers as numpy arrays (NaN for null where
        a column has nulls, as pandas makes of None), the rest as the values pandas infers from."""
        import numpy as np
        import pandas as pd

        data: dict[str, Any] = {}
        for name, (kind, raw, state_bytes, _) in self._columns.items():
            state = np.frombuffer(state_bytes, dtype=np.uint8)
            if (state == 0).all():
                continue  # absent in every row: no column, as from the dicts
            whole = bool((state == 2).all())
            values = None if kind == "?" else np.frombuffer(raw, dtype=self._DTYPES[kind])
            if kind in "uif" and values is not None:
                if whole and kind == "u" and (values >= 2**63).any():
                    data[name] = values.copy()  # uint64, as pandas keeps ints beyond int64
                elif whole and kind in "ui":
                    data[name] = values.astype(np.int64)
                else:
                    column = values.astype(np.float64)
                    column[state != 2] = np.nan
                    data[name] = column
            elif kind == "b" and whole and values is not None:
                data[name] = values.astype(bool)
            else:
                data[name] = self.values(name)
        # pandas orders the columns of dicts by first appearance: a key absent from the first rows later.
        first = {name: min((i for i in (state.find(1), state.find(2)) if i >= 0), default=self.count)
                 for name, (_, _, state, _) in self._columns.items()}
        data = {name: data[name] for name in sorted(data, key=first.__getitem__)}
        return pd.DataFrame(data, index=pd.RangeIndex(self.count))


class Result:
    """The outcome of one run: per-flow metrics (one dict per flow, made from the engine's columns when
    first asked for), per-station MAC metrics (one dict per upstream station, none with the FIFO
    upstream), engine stats, optional trace."""

    __slots__ = ("seed", "_scenario", "_flows", "flow_columns", "engine", "station_rows", "ping_rows",
                 "game_rows", "call_rows", "app_rows", "_trace_columns", "_trace_frame")

    def __init__(self, seed: int, scenario: dict[str, Any] | Scenario, flows: list[dict[str, Any]] | None,
                 engine: dict[str, Any], trace_columns: dict[str, list[Any]] | None = None,
                 stations: list[dict[str, Any]] | None = None, pings: list[dict[str, Any]] | None = None, *,
                 flow_columns: FlowColumns | None = None, games: list[dict[str, Any]] | None = None,
                 calls: list[dict[str, Any]] | None = None, apps: dict[str, list[dict[str, Any]]] | None = None) -> None:
        if flows is None and flow_columns is None:
            raise ValueError("Result needs flows or flow_columns")
        self.seed = seed
        self._scenario = scenario  # the resolved scenario, as a dict (or the Scenario, made a dict when asked)
        self._flows = flows  # metric names as in _core.pyi: bytes, duration_s, throughput_bps, ...
        # The engine's columns of the same metrics (None for a Result made from dicts, as emulate makes).
        self.flow_columns = flow_columns
        self.engine = engine  # events, simulated_s, wall_s, mac (None without a request/grant MAC), switches
        self.station_rows = [] if stations is None else stations  # STATION_METRICS, one dict per station
        self.ping_rows = [] if pings is None else pings  # PING_COLUMNS, one dict per echo
        self.game_rows = [] if games is None else games  # GAME_COLUMNS, one dict per game and way
        self.call_rows = [] if calls is None else calls  # CALL_COLUMNS, one dict per call and way
        # The applications' rows by table (APP_TABLES: pages, videos, segments), one dict per row.
        self.app_rows = {name: list((apps or {}).get(name) or []) for name in APP_TABLES}
        self._trace_columns = trace_columns
        self._trace_frame: pd.DataFrame | None = None

    @property
    def scenario(self) -> dict[str, Any]:
        """The resolved scenario, as the dict of the engine's document."""
        if not isinstance(self._scenario, dict):
            self._scenario = self._scenario.to_dict()
        return self._scenario

    @scenario.setter
    def scenario(self, value: dict[str, Any]) -> None:
        self._scenario = value

    @property
    def flows(self) -> list[dict[str, Any]]:
        """One dict per flow (``FLOW_METRICS`` first), made from the engine's columns when first asked
        for: a run of a million flows reads ``flow_count``, ``flow_columns`` or ``to_frame()`` instead."""
        if self._flows is None:
            assert self.flow_columns is not None
            self._flows = self.flow_columns.rows()
        return self._flows

    @flows.setter
    def flows(self, value: list[dict[str, Any]]) -> None:
        self._flows = value
        self.flow_columns = None

    @property
    def flow_count(self) -> int:
        """How many flows the run had."""
        return len(self.flow_columns) if self.flow_columns is not None else len(self.flows)

    @property
    def mac(self) -> dict[str, Any] | None:
        """The MAC's totals (``MAC_METRICS``: requests, collisions, grants, frames, ...), or None with the
        FIFO upstream (or an engine that does not report them)."""
        return self.engine.get("mac")

    @property
    def switches(self) -> dict[str, Any] | None:
        """The ATM switches' discards (``SWITCH_METRICS``: epd_packets, epd_cells, partial_packets,
        partial_cells), or None unless ``network.kind = "atm_hfc"`` (or with an engine that does not
        report them)."""
        return self.engine.get("switches")

    @property
    def stations(self) -> pd.DataFrame:
        """One row per upstream station (``STATION_METRICS`` first); empty, with those columns, when the
        upstream is the FIFO link."""
        import pandas as pd

        if not self.station_rows:
            return pd.DataFrame(columns=list(STATION_METRICS))
        return pd.DataFrame(self.station_rows)

    @property
    def pings(self) -> pd.DataFrame:
        """One row per echo of every ping (``PING_COLUMNS``: ping, seq, sent_s, rtt_s, and the one-way
        delays up_s, client to server, and down_s, server to client; NaN when not received); empty, with
        those columns, without ``[[pings]]``."""
        import pandas as pd

        frame = pd.DataFrame(self.ping_rows, columns=list(PING_COLUMNS))
        for column in PING_COLUMNS:
            if column.endswith("_s"):
                frame[column] = frame[column].astype(float)
        frame["lost"] = frame["lost"].astype(bool)
        return frame

    def _app_frame(self, name: str) -> pd.DataFrame:
        import pandas as pd

        columns = APP_TABLES[name]
        frame = pd.DataFrame(self.app_rows[name], columns=list(columns))
        for column in columns:
            if column.endswith(("_s", "_bps")):
                frame[column] = frame[column].astype(float)
        for column in ("failed", "finished"):
            if column in frame:
                frame[column] = frame[column].astype(bool)
        return frame

    @property
    def pages(self) -> pd.DataFrame:
        """One row per page load of every ``[[web]]`` (``PAGE_COLUMNS``): its start, time to first byte and
        load time (s, from the page's start; NaN if the run ended first or a connection failed)."""
        return self._app_frame("pages")

    @property
    def videos(self) -> pd.DataFrame:
        """One row per ``[[video]]`` (``VIDEO_COLUMNS``): startup, rebuffering, mean bitrate, switches."""
        return self._app_frame("videos")

    @property
    def segments(self) -> pd.DataFrame:
        """One row per video segment asked for (``SEGMENT_COLUMNS``): the player's trajectory."""
        return self._app_frame("segments")

    @property
    def rpm(self) -> pd.DataFrame:
        """One row per ``[[rpm]]`` responsiveness test (``RPM_COLUMNS``): RPM under working conditions, the
        idle round trip, the probe kinds' trimmed means, the goodput each way (NaN where none was measured)."""
        return self._app_frame("rpm")

    @property
    def apps(self) -> dict[str, pd.DataFrame]:
        """Every application table by name (``APP_TABLES``): pages, videos, segments, rpm."""
        return {name: self._app_frame(name) for name in APP_TABLES}

    @property
    def games(self) -> pd.DataFrame:
        """One row per ``[[games]]`` session and way (``GAME_COLUMNS``: game, modem, direction "up" or
        "down", packets sent, received, lost and late, the one-way delay's min, p50, p90, p99, max and
        mean, RFC 3550 jitter); empty, with those columns, without ``[[games]]``."""
        return _realtime_frame(self.game_rows, GAME_COLUMNS)

    @property
    def calls(self) -> pd.DataFrame:
        """One row per ``[[calls]]`` call and way (``CALL_COLUMNS``: as ``games``, plus the ITU-T G.107
        mouth-to-ear delay, R-factor and MOS); empty, with those columns, without ``[[calls]]``."""
        return _realtime_frame(self.call_rows, CALL_COLUMNS)

    @property
    def places(self) -> pd.DataFrame:
        """One row per place packets waited (``PLACE_METRICS``): every link with a buffer, service flow
        queue, modem queue and bonded modem's FIFO that a packet reached, with its drops by reason and
        its waits' and occupancy's percentiles."""
        import pandas as pd

        return pd.DataFrame(self.engine.get("places") or [], columns=list(PLACE_METRICS))

    @property
    def queues(self) -> list[dict[str, Any]]:
        """The service queues' counters (``QUEUE_METRICS``), one dict per queue: the DOCSIS service flows, and the
        hfc modem's buffer or the bottleneck's when it has an AQM; [] elsewhere."""
        return list(self.engine.get("queues") or [])

    @property
    def trace_columns(self) -> dict[str, list[Any]] | None:
        """The per-packet trace as plain columns (time_s, flow, event, ...), or None if not traced."""
        return self._trace_columns

    @property
    def trace(self) -> pd.DataFrame | None:
        """The per-packet trace as a pandas DataFrame, or None if the run was not traced."""
        if self._trace_columns is None:
            return None
        if self._trace_frame is None:
            import pandas as pd

            self._trace_frame = pd.DataFrame(self._trace_columns)
        return self._trace_frame

    def to_frame(self) -> pd.DataFrame:
        """One row per flow (docs/design.md, principle 5), with the run's seed as a column."""
        import pandas as pd

        frame = self.flow_columns.frame() if self.flow_columns is not None else pd.DataFrame(self.flows)
        frame.insert(0, "seed", self.seed)
        return frame

    def to_dict(self, trace: bool = True) -> dict[str, Any]:
        """``{"seed", "scenario", "flows", "engine", "stations"}``, plus ``"trace"`` (columns) if traced and
        wanted."""
        out = {"seed": self.seed, "scenario": self.scenario, "flows": self.flows, "engine": self.engine,
               "stations": self.station_rows}
        if self.ping_rows:
            out["pings"] = self.ping_rows
        if self.game_rows:
            out["games"] = self.game_rows
        if self.call_rows:
            out["calls"] = self.call_rows
        if any(self.app_rows.values()):
            out["apps"] = self.app_rows
        if trace and self._trace_columns is not None:
            out["trace"] = self._trace_columns
        return out

    def to_json(self, trace: bool = True, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(trace=trace), indent=indent)

    def write_trace_csv(self, target: str | os.PathLike[str] | TextIO) -> int:
        """Write the per-packet trace as CSV to a path or an open text file; return the row count.

        A path is written whole or not at all (a temporary file beside it, renamed at the end). Standard
        library only, so the CLI never imports pandas. ``simulate_trace_csv`` writes the same bytes
        without holding the trace in Python.
        """
        if self._trace_columns is None:
            raise ValueError("this run was not traced: call simulate(..., trace=True)")
        if isinstance(target, (str, os.PathLike)):
            from hfcsim.store import atomic_path

            with atomic_path(target) as temp, open(temp, "w", newline="", encoding="utf-8") as f:
                return self.write_trace_csv(f)
        names = list(self._trace_columns)
        rows = list(zip(*(self._trace_columns[n] for n in names), strict=True))
        writer = csv.writer(target, lineterminator="\n")
        writer.writerow(names)
        writer.writerows(rows)
        return len(rows)

    def __repr__(self) -> str:
        flows = ", ".join(_flow_summary(f) for f in self.flows)
        return f"<Result seed={self.seed} flows=[{flows}]>"


def _flow_summary(flow: Mapping[str, Any]) -> str:
    bps = flow.get("throughput_bps")
    return f"{flow.get('flow')}: {bps / 1e6:.3f} Mb/s" if bps is not None else f"{flow.get('flow')}: unfinished"


def _check_seed(seed: Any) -> int:
    seed = native(seed)  # np.int64(3) is 3 (issue 36, defect 8)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        got = "" if isinstance(seed, int) and not isinstance(seed, bool) else f" (got {type_name(seed)})"
        raise ScenarioError(f"seed = {seed!r}: must be an integer in [0, 2^64 - 1]{got}")
    return seed


def simulate(scenario: Mapping[str, Any] | str | os.PathLike[str] | Scenario | None = None,
             seed: int = 1, trace: bool = False) -> Result:
    """Run ``scenario`` (a dict, a TOML path, a Scenario, or None for the defaults) with ``seed``.

    Raises ScenarioError for an invalid scenario, EngineError if the engine fails on a valid one.
    """
    resolved = load(scenario)
    seed = _check_seed(seed)
    document = resolved.to_json()
    output = _run_engine(document, seed, bool(trace))
    return _parse_output(output, resolved, seed)


def simulate_trace_csv(scenario: Mapping[str, Any] | str | os.PathLike[str] | Scenario | None,
                       path: str | os.PathLike[str], seed: int = 1, *,
                       hold: HeldRenames | None = None) -> tuple[Result, int]:
    """Run ``scenario`` with ``seed`` and write its per-packet trace as CSV to ``path``; return the Result
    (without the trace: ``Result.trace`` is None) and the trace's row count.

    The same bytes as ``simulate(..., trace=True).write_trace_csv(path)``, but the engine writes them
    from its own columns, so memory grows by about the engine's ~0.1 KB per row, not ~0.6 KB (the
    trace as JSON, then as Python lists). ``path`` is written whole or not at all: into a temporary file
    beside it, made before the run (an unwritable place fails at once) and renamed onto ``path`` at the
    end (with ``hold``, a ``hfcsim.store.HeldRenames``, when the caller commits it); removed on any failure,
    Ctrl-C included. Raises ScenarioError, EngineError, or OSError (naming the file) when it cannot be
    written.
    """
    from hfcsim.store import atomic_path

    path = check_path("path", path)
    resolved = load(scenario)
    seed = _check_seed(seed)
    document = resolved.to_json()
    with atomic_path(path, hold) as temp:
        output, rows = _run_engine(document, seed, True, csv_path=temp)
        result = _parse_output(output, resolved, seed)
    return result, rows


def simulate_pcap(scenario: Mapping[str, Any] | str | os.PathLike[str] | Scenario | None,
                  path: str | os.PathLike[str], seed: int = 1,
                  trace_csv: str | os.PathLike[str] | None = None,
                  snap_payload: int = 0, hold: HeldRenames | None = None) -> tuple[Result, int, int]:
    """Run ``scenario`` with ``seed`` and write every packet its endpoints sent and received to ``path``
    as pcapng (docs/how-to/captures.md: interface 0 the server, 1 the PCs behind the modems, and 2
    the DOCSIS upstream's bursts, whole, when ``upstream.mac = "docsis"``), each Ethernet frame cut
    to its headers plus at most ``snap_payload`` payload bytes (zeros); with ``trace_csv``, also the
    trace as ``simulate_trace_csv`` writes it. Returns the Result (``Result.trace`` None), the
    packets written (DOCSIS frames included) and the trace's rows (0 without ``trace_csv``).

    Each file is written whole or not at all (``hfcsim.store.atomic_path``; with ``hold``, renamed into
    place when the caller commits it, as ``simulate_trace_csv``). Raises ScenarioError (also
    for a scenario the capture cannot address: too many flows or modems), EngineError, or OSError
    (naming the file) when a file cannot be written.
    """
    from contextlib import ExitStack

    from hfcsim.store import atomic_path

    path = check_path("path", path)
    trace_csv = None if trace_csv is None else check_path("trace_csv", trace_csv)
    snap_payload = native(snap_payload)
    if isinstance(snap_payload, bool) or not isinstance(snap_payload, int) or not 0 <= snap_payload <= 65535:
        got = "" if isinstance(snap_payload, int) and not isinstance(snap_payload, bool) else \
            f" (got {type_name(snap_payload)})"
        raise ScenarioError(f"snap_payload = {snap_payload!r}: must be an integer in [0, 65535]{got}")
    resolved = load(scenario)
    seed = _check_seed(seed)
    document = resolved.to_json()
    with ExitStack() as stack:
        temp = stack.enter_context(atomic_path(path, hold))
        csv_temp = None if trace_csv is None else stack.enter_context(atomic_path(trace_csv, hold))
        output, packets, rows = _run_engine(document, seed, csv_temp is not None,
                                            pcap=(temp, csv_temp, snap_payload))
        result = _parse_output(output, resolved, seed)
    return result, packets, rows


def _run_engine(document: str, seed: int, trace: bool, csv_path: os.PathLike[str] | None = None,
                pcap: tuple[os.PathLike[str], os.PathLike[str] | None, int] | None = None) -> Any:
    try:  # the compiled engine; imported here so that `import hfcsim` never needs it
        from hfcsim import _core
    except ImportError as e:
        raise EngineError(f"the compiled engine hfcsim._core is not available ({_one_line(e)}); "
                          "build and install it with `pip install .`") from e
    try:
        if pcap is not None:
            path, csv, snap = pcap
            return _core.run_pcap(document, seed, os.fspath(path), None if csv is None else os.fspath(csv), snap,
                                  columns=True)
        if csv_path is not None:
            return _core.run_trace_csv(document, seed, os.fspath(csv_path), columns=True)
        return _core.run(document, seed, trace, columns=True)
    except ValueError as e:
        if str(e).startswith("--pcap:"):  # capture/mod.rs check: ports and addresses run out
            raise ScenarioError(_one_line(e)) from e
        # The engine re-checks the document (serde deny_unknown_fields): a second line of defence.
        raise ScenarioError(f"engine rejected the scenario: {_one_line(e)}") from e
    except RuntimeError as e:
        raise EngineError(f"engine failed (seed {seed}): {_one_line(e)}; scenario: {document}") from e


def _parse_output(output: str | tuple[str, list[Any]], scenario: Scenario, seed: int) -> Result:
    """The engine's ``(json, flow_columns)`` (``_core.run(..., columns=True)``), or its JSON with the
    flows in it, as a Result."""
    try:
        text, columns = (output, None) if isinstance(output, str) else output
        data = json.loads(text)
        flows = None if columns is None else FlowColumns(columns)
        rows = None if columns is not None else [_in_order(flow, FLOW_METRICS) for flow in data["flows"]]
        trace = data.get("trace")
        trace = None if trace is None else _in_order(trace, TRACE_COLUMNS)
        engine = dict(data["engine"])
        # An engine without the request/grant MAC reports neither stations nor engine.mac.
        stations = [_in_order(station, STATION_METRICS) for station in data.get("stations") or []]
        if engine.get("mac") is not None:
            engine["mac"] = _in_order(engine["mac"], MAC_METRICS)
        if engine.get("switches") is not None:
            engine["switches"] = _in_order(engine["switches"], SWITCH_METRICS)
        if engine.get("queues"):
            engine["queues"] = [_in_order(q, QUEUE_METRICS) for q in engine["queues"]]
        if engine.get("places"):
            engine["places"] = [_in_order(p, PLACE_METRICS) for p in engine["places"]]
        pings = [_in_order(ping, PING_COLUMNS) for ping in data.get("pings") or []]
        games = [_realtime_row(row, "game", GAME_COLUMNS) for row in data.get("games") or []]
        calls = [_realtime_row(row, "call", CALL_COLUMNS) for row in data.get("calls") or []]
        raw_apps = data.get("apps") or {}
        apps = {name: [_in_order(row, columns) for row in raw_apps.get(name) or []]
                for name, columns in APP_TABLES.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise EngineError(f"engine returned malformed output (seed {seed}): {_one_line(e)}; "
                          f"scenario: {scenario.to_json()}") from e
    return Result(seed, scenario, rows, engine, trace, stations, pings, flow_columns=flows, games=games, calls=calls,
                  apps=apps)


def _realtime_row(row: dict[str, Any], name: str, names: tuple[str, ...]) -> dict[str, Any]:
    """An engine row of ``games`` or ``calls`` (its ``session`` named ``name``), every column of
    ``names`` present (None where the engine left it out), in order."""
    if not isinstance(row, dict):
        raise TypeError(f"expected an object, got {type(row).__name__}")
    row = {name if k == "session" else k: v for k, v in row.items()}
    return {n: row.get(n) for n in names}


def _realtime_frame(rows: list[dict[str, Any]], names: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(names))
    for column in names:
        if column.endswith("_s") or column in ("r_factor", "mos"):
            frame[column] = frame[column].astype(float)
    return frame


def _in_order(row: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """``row`` with the contract's ``names`` first, in contract order, then any other keys."""
    if not isinstance(row, dict):
        raise TypeError(f"expected an object, got {type(row).__name__}")
    return {**{n: row[n] for n in names if n in row}, **row}


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())
