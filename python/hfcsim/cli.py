"""The ``hfcsim`` command.

    hfcsim run [SCENARIO.toml] [--seed N] [--set dotted.key=value ...] [--json] [--trace FILE.csv]
               [--pcap FILE.pcapng]
    hfcsim params
    hfcsim sweep SWEEP.toml [--runs N] [--jobs J] [--dask ADDRESS] [--out DIR] [--json]
    hfcsim plot SWEEP --x KEY --y METRIC [--by KEY] [--where KEY=VALUE ...] [--stat STAT] [--band BAND]
                [--out FILE.png]

Each subcommand is one ``_add_<name>(subparsers)`` function in ``SUBCOMMANDS`` that declares its
arguments and sets ``func``, the handler returning the exit status. Exit status: 0 ok, 1 the engine
failed, 2 bad input (scenario, --set, arguments; one line on stderr, never a traceback), 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import hfcsim
from hfcsim.errors import EngineError, ScenarioError
from hfcsim import stacks
from hfcsim.scenario import CABLE, Scenario, load, param_rows
from hfcsim.simulate import MAX_SEED, Result, simulate, simulate_pcap, simulate_trace_csv
from hfcsim.store import HeldRenames
from hfcsim.argtypes import folder as _folder
from hfcsim.argtypes import number as _number
from hfcsim.argtypes import output_file as _output_file
from hfcsim.argtypes import positive as _positive
from hfcsim.describe import _g, describe

__all__ = ["main"]

EXIT_OK, EXIT_ENGINE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad command-line arguments (argparse's own errors, turned into one line)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would print usage + error and exit(2)
        raise UsageError(message)


class _VersionAction(argparse.Action):
    """``--version``: the package version, and the engine's if it is built (loaded only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        try:
            from hfcsim import _core

            engine = f" (engine {_core.version()})"
        except ImportError:
            engine = " (engine not built)"
        print(f"hfcsim {hfcsim.__version__}{engine}")
        parser.exit()


# ---------------------------------------------------------------------------------------------------
# hfcsim run


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed {text}: must be an integer") from None
    if not 0 <= seed <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"--seed {text}: must be in [0, 2^64 - 1]")
    return seed


def _add_run(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run", help="simulate one scenario with one seed",
        description="Simulate one scenario (default: Cohen & Ramanathan's HFC network, one 3 MB "
                    "FTP-style download, TCP Reno, BSD 0.5 s timer, delayed ACK, 8 KB buffers, no loss).",
        epilog="examples:\n"
               "  hfcsim run --set network.downstream_loss=0.01\n"
               "  hfcsim run scenarios/http-get.toml --set flows.0.bytes=300000 --json\n"
               "  hfcsim params          # every scenario key, its default and what is allowed",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", nargs="?", metavar="SCENARIO.toml",
                   help="scenario file (TOML); without one, the defaults")
    p.add_argument("--seed", type=_seed, default=1, metavar="N", help="random seed (default 1)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key, e.g. tcp.variant=tahoe or flows.0.bytes=300000 "
                        "(repeatable; VALUE is a TOML literal or a bare word)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object {seed, scenario, flows, engine, stations} and nothing else")
    p.add_argument("--trace", type=_output_file("--trace"), metavar="FILE.csv",
                   help="write the per-packet trace to FILE.csv")
    p.add_argument("--pcap", type=_output_file("--pcap"), metavar="FILE.pcapng",
                   help="write the packets the server and the PCs send and receive (and a DOCSIS "
                        "upstream's bursts) to FILE.pcapng (Wireshark, tshark; docs/how-to/captures.md)")
    p.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    scenario = load(args.scenario, args.sets)
    rows = packets = None
    if args.pcap is not None:
        if args.trace is not None and os.path.abspath(args.trace) == os.path.abspath(args.pcap):
            raise ScenarioError(f"--pcap {args.pcap}: the same file as --trace")
        try:
            result, packets, rows = simulate_pcap(scenario, args.pcap, seed=args.seed, trace_csv=args.trace,
                                                  hold=args.held)
        except OSError as e:
            on_trace = args.trace is not None and e.filename is not None and \
                os.path.abspath(os.fsdecode(e.filename)) == os.path.abspath(args.trace)
            raise (_output_error("--trace", args.trace, e) if on_trace
                   else _output_error("--pcap", args.pcap, e)) from None
        if not args.trace:
            rows = None
    elif args.trace is not None:
        # The engine writes the CSV itself, into a temporary file renamed onto FILE.csv at the end
        # (made before the run, so a bad path fails at once); a failure or Ctrl-C leaves no file.
        try:
            result, rows = simulate_trace_csv(scenario, args.trace, seed=args.seed, hold=args.held)
        except OSError as e:
            raise _output_error("--trace", args.trace, e) from None
    else:
        result = simulate(scenario, seed=args.seed)
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(trace=False)) + "\n")
    else:
        sys.stdout.write(format_result(result, scenario))
        if rows is not None:
            sys.stdout.write(f"trace: {rows} rows -> {args.trace}\n")
        if packets is not None:
            docsis = scenario["network"]["kind"] in CABLE and scenario.get("upstream.mac") == "docsis"
            interfaces = "0 server, 1 modem-lan" + (", 2 docsis-upstream" if docsis else "")
            sys.stdout.write(f"pcap: {packets} packets -> {args.pcap} (interfaces {interfaces}; Wireshark's TCP "
                             "analysis reads one at a time: docs/how-to/captures.md)\n")
    return EXIT_OK


def _output_error(option: str, path: Any, e: OSError) -> ScenarioError:
    """An output location that cannot be written (missing or read-only folder, a file where a folder is
    due, a full disk, a name the file system refuses): one line naming the option and the path."""
    from hfcsim.store import os_reason

    name = None if e.filename is None else os.fsdecode(e.filename)
    # the file at fault when it is not the one named (a part inside --out); not our hidden temporaries
    where = "" if name is None or name == os.fspath(path) or os.path.basename(name).startswith(".") else f" ({name})"
    return ScenarioError(f"{option} {path}: cannot write{where} ({os_reason(e)})")


# ---------------------------------------------------------------------------------------------------
# Human output


# (header, metric, format) per column of the flow table.
COLUMNS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("flow", "flow", str),
    ("bytes", "bytes", str),
    ("duration s", "duration_s", lambda v: "-" if v is None else f"{v:.3f}"),
    ("throughput Mb/s", "throughput_bps", lambda v: "-" if v is None else f"{v / 1e6:.3f}"),
    ("timeouts", "timeouts", str),
    ("fast rexmits", "fast_retransmits", str),
    ("rexmit segs", "retransmitted_segments", str),
    ("finished", "finished", lambda v: "yes" if v else "NO"),
)


def format_table(flows: Sequence[dict[str, Any]]) -> str:
    cells = [[header for header, _, _ in COLUMNS]]
    cells += [[fmt(flow.get(metric)) for _, metric, fmt in COLUMNS] for flow in flows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    return "".join("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + "\n" for row in cells)


#: Up to this many flows get a line (or a few) each; more are summed in a few lines (issue 26, defect
#: 3: a million flows printed a million lines). Their rows: --json, or the Python API's to_frame().
FLOW_LINES = 50


def format_result(result: Result, scenario: Scenario) -> str:
    engine = result.engine
    if result.flow_count > FLOW_LINES:
        flows = format_many_flows(result, scenario) + format_small_buffers(scenario)
    else:
        flows = ((format_table(result.flows) if result.flow_count else "")
                 + format_unfinished(result, scenario)
                 + format_small_buffers(scenario)
                 + format_window_limits(result)
                 + format_era(scenario)
                 + format_measured(result, scenario))
    return (f"seed {result.seed} | {describe(scenario)}\n"
            + flows
            + format_mac(result, scenario)
            + format_switches(result)
            + format_pings(result, scenario)
            + format_realtime(result)
            + format_apps(result)
            + format_places(result)
            + format_docsis_pie(result, scenario)
            + format_ecn(result)
            + f"engine: {engine['events']} events, {engine['simulated_s']:.3f} simulated s, "
              f"{1e3 * engine['wall_s']:.1f} wall ms\n")


def _metric(result: Result, name: str) -> list[Any]:
    """One metric of every flow, from the engine's columns when the result has them (no dict per flow)."""
    if result.flow_columns is not None:
        return result.flow_columns.values(name) if name in result.flow_columns.names else [None] * result.flow_count
    return [f.get(name) for f in result.flows]


def format_many_flows(result: Result, scenario: Scenario) -> str:
    """More flows than FLOW_LINES: how many ended how, the finished ones' throughput, the totals."""
    n = result.flow_count
    reasons = Counter(_metric(result, "end_reason"))
    words = {"finished": "finished", "time_limit": "still running at the time limit", "gave_up": "gave up",
             "not_started": "never started", "stalled": "stalled (a defect of the model: issue 36)"}
    ended = ", ".join(f"{count} {words.get(str(reason), str(reason))}" for reason, count in reasons.items())
    lines = [f"{n} flows: {ended} (a row per flow: --json, or hfcsim.simulate(...).to_frame())\n"]
    rates = [r for r in _metric(result, "throughput_bps") if r is not None]
    if rates:
        lines.append(f"throughput of the {len(rates)} finished, Mb/s: min {min(rates) / 1e6:.3f}, mean "
                     f"{sum(rates) / len(rates) / 1e6:.3f}, max {max(rates) / 1e6:.3f}\n")
    start = scenario.get("sim.measure_from_s")
    measured, seconds = sum(_metric(result, "measured_bytes")), max(_metric(result, "measured_s"))
    rate = f", {8 * measured / seconds / 1e6:.3f} Mb/s together" if seconds > 0 else ""
    lines.append(f"delivered in order from {_g(start)} s: {measured} bytes{rate}; "
                 f"{sum(_metric(result, 'timeouts'))} timeouts, {sum(_metric(result, 'fast_retransmits'))} fast "
                 f"retransmits, {sum(_metric(result, 'retransmitted_segments'))} segments retransmitted\n")
    return "".join(lines)


# Byte limits of a queue: below one full-size packet, nothing of full size ever passes.
SMALL_BUFFER_KEYS = ("network.cm_buffer_bytes", "network.cmts_queue_bytes", "network.cm_queue_bytes",
                     "network.server_queue_bytes")


def format_small_buffers(scenario: Scenario) -> str:
    """A line for each queue whose byte limit is below one full-size packet (issue 26, defect 8: such
    a buffer was accepted and nothing got through, without a word)."""
    tcp = scenario["tcp"]
    packet = tcp["mss_bytes"] + tcp["header_bytes"]
    lines = []
    for key in SMALL_BUFFER_KEYS:
        section, name = key.split(".")
        value = scenario[section].get(name)  # the section alone: a copy of every flow is slow
        if value is not None and value < packet:
            lines.append(f"note: {key} = {value} B is below one full-size packet ({packet} B = tcp.mss_bytes + "
                         "tcp.header_bytes): no full-size packet fits\n")
    return "".join(lines)


def format_window_limits(result: Result) -> str:
    """A line for each flow whose window cannot fill its path's bandwidth-delay product (issue 35): the
    engine's window limit and the key that sets it (FlowMetrics.window_limit_bytes, window_limited_by)."""
    lines = []
    for f in result.flows:
        window = f.get("window_limit_bytes")
        if window is None:
            continue
        by = f["window_limited_by"]
        what = "the window field without scaling (tcp.window_scaling = false)" if by == "tcp.window_scaling" else by
        lines.append(f"note: flow {f['flow']}'s window cannot fill its path: at most {window} B ({what}), below the "
                     f"bandwidth-delay product {f['bdp_bytes']} B ({f['path_rate_bps'] / 1e6:g} Mb/s x "
                     f"{1e3 * f['base_rtt_s']:.2f} ms, the least RTT measured)\n")
    return "".join(lines)


#: The 1990s stacks (the papers'): a congestion control of today on them is a model combination no host ran.
OLD_STACKS = ("net3-rfc5681", "net3", "ns2")


def format_era(scenario: Scenario) -> str:
    """One line when a flow runs a congestion control of today (CUBIC, DCTCP, Prague, BBR) on a 1990s
    stack (issue 35). Where the stack's own recovery rules cannot run beside it (net3's header
    prediction, ns2's fast recovery) the engine refuses the scenario; on net3-rfc5681 it runs, and this
    says what the run mixes: a researcher may want CUBIC's growth under 4.4BSD's timers and delayed ACK,
    so it is a warning, not a refusal."""
    stack = scenario.get("tcp.stack")
    if stack not in OLD_STACKS:
        return ""
    default = scenario.get("tcp.congestion_control")
    controls = sorted({f.get("congestion_control") or default for f in scenario["flows"]} - {"reno"})
    if not controls:
        return ""
    names = {"cubic": "CUBIC (RFC 9438)", "dctcp": "DCTCP (RFC 8257)", "prague": "TCP Prague", "bbr": "BBR"}
    return (f"note: {', '.join(names[c] for c in controls)} on tcp.stack = \"{stack}\": a congestion control of "
            "today over a 1990s stack's timers, delayed ACK and buffers, which no host ran; its window runs in "
            "today's sender (tcp/sender/today.rs) with the stack's other rules\n")


def format_unfinished(result: Result, scenario: Scenario) -> str:
    """Why each unfinished flow did not finish (its end_reason), one line each; nothing when all did. Several
    flows all still running at the time limit (a busy hour's downloads, by design) share one line."""
    limited = [f for f in result.flows if f.get("end_reason") == "time_limit"]
    if len(limited) > 1 and len(limited) == len(result.flows):
        delivered = sum(f["delivered_bytes"] for f in limited)
        return (f"flows 0-{len(limited) - 1} unfinished: all still running at the time limit, sim.time_limit_s = "
                f"{_g(scenario.get('sim.time_limit_s'))} s; {delivered} bytes delivered in all\n")
    lines = []
    for f in result.flows:
        reason = f.get("end_reason")
        if reason is None or reason == "finished":
            continue
        if reason == "gave_up":
            syn = f.get("syn_timeouts") or 0
            n = f["timeouts"] + syn
            how = f" ({syn} in the handshake)" if syn and f["timeouts"] else " in the handshake" if syn else ""
            line = f"gave up after {n} timeout{'s' if n != 1 else ''}{how}"
        elif reason == "not_started":
            line = (f"never started: it starts at {_g(f['start_s'])} s, the run ended at "
                    f"{_g(round(result.engine['simulated_s'], 6))} s")
        elif reason == "time_limit":
            line = f"still running at the time limit, sim.time_limit_s = {_g(scenario.get('sim.time_limit_s'))} s"
        elif reason == "stalled":
            # The engine's line: when, why, and the window, buffers and state it stuck in.
            line = f.get("stall") or "stalled"
        else:
            line = reason
        lines.append(f"flow {f['flow']} unfinished: {line}; {f['delivered_bytes']} of {f['bytes']} bytes delivered\n")
    return "".join(lines)


def format_measured(result: Result, scenario: Scenario) -> str:
    """Per flow, what it delivered from sim.measure_from_s on and its RTT samples, when a warm-up is set
    or the flow did not finish (a time-limited run has no transfer time to divide by)."""
    start = scenario.get("sim.measure_from_s")
    lines = []
    for f in result.flows:
        if not start and f["finished"]:
            continue
        seconds = f["measured_s"]
        rate = f"{8 * f['measured_bytes'] / seconds / 1e6:.3f} Mb/s" if seconds > 0 else "-"
        line = (f"flow {f['flow']} from {_g(start)} s to {_g(start + seconds)} s: {f['measured_bytes']} bytes in "
                f"order, {rate}")
        if f["rtt_samples"]:
            line += (f"; RTT {1e3 * f['rtt_mean_s']:.1f} ms mean, {1e3 * f['rtt_std_s']:.1f} ms sd, "
                     f"{1e3 * f['rtt_max_s']:.1f} ms max ({f['rtt_samples']} samples)")
        lines.append(line + "\n")
    return "".join(lines)


def format_switches(result: Result) -> str:
    """The ATM switches' discards in one line; nothing without switches (engine.switches null)."""
    sw = result.switches
    if sw is None:
        return ""
    return (f"switches: early packet discard {sw['epd_packets']} packets ({sw['epd_cells']} cells), "
            f"partial {sw['partial_packets']} packets ({sw['partial_cells']} cells)\n")


#: Up to this many flows get a line each of the pings' RTT before, during and after them (Nguyen &
#: Armitage's measurement); with more, the per-ping summary says it all.
PING_PHASE_FLOWS = 4


def _quantile(values: Sequence[float], q: float) -> float:
    """The nearest-rank q-quantile of non-empty values (the engine's percentiles are so too)."""
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(q * len(ordered)))) - 1]


def format_pings(result: Result, scenario: Scenario) -> str:
    """Per ping: its echoes, the lost ones and why, its RTT's and each way's one-way delay's percentiles,
    where each way's delay went and where it waited most; per flow (a few), the pings' RTT before,
    during and after it. From sim.measure_from_s on, as the flows' measurements. Nothing without pings."""
    if not result.ping_rows:
        return ""

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{1e3 * v:.1f} ms"

    lines = [] if result.flow_count > PING_PHASE_FLOWS else [
        f"flow {f['flow']} pings: before {ms(f['ping_before_mean_s'])}, during {ms(f['ping_during_mean_s'])} "
        f"mean ({ms(f['ping_during_max_s'])} max, {f['ping_during_samples']} samples), after "
        f"{ms(f['ping_after_mean_s'])}; {f['ping_lost']} unanswered while it ran\n" for f in result.flows]
    start = scenario.get("sim.measure_from_s") or 0.0
    by_ping: dict[int, list[dict[str, Any]]] = {}
    for row in result.ping_rows:
        if row["sent_s"] >= start:
            by_ping.setdefault(row["ping"], []).append(row)
    since = f" from {_g(start)} s" if start else ""
    for ping, rows in by_ping.items():
        lost = sum(1 for r in rows if r["lost"])
        flying = sum(1 for r in rows if r["rtt_s"] is None and not r["lost"])
        rtts = [r["rtt_s"] for r in rows if r["rtt_s"] is not None]
        head = (f"ping {ping}: {len(rows)} echoes{since}, {lost} lost ({100 * lost / len(rows):.1f} %)"
                + (f", {flying} unanswered at the end (not lost)" if flying else ""))
        if rtts:
            head += (f"; RTT {ms(min(rtts))} min, {ms(_quantile(rtts, 0.5))} p50, {ms(_quantile(rtts, 0.99))} p99, "
                     f"{ms(max(rtts))} max")
        lines.append(head + "\n")
        for way, word in (("up", "up  "), ("down", "down")):
            got = [r for r in rows if r[f"{way}_s"] is not None]
            if not got:
                continue
            delays = [r[f"{way}_s"] for r in got]
            parts = ", ".join(f"{part} {ms(sum(r[f'{way}_{part}_s'] for r in got) / len(got))}"
                              for part in ("queue", "access", "serialisation", "propagation"))
            places = Counter(r[f"{way}_waited_most_at"] for r in got if r[f"{way}_waited_most_at"])
            most = f"; waited most at {places.most_common(1)[0][0]}" if places else ""
            lines.append(f"  {word} one-way: {ms(_quantile(delays, 0.5))} p50, {ms(_quantile(delays, 0.99))} p99; "
                         f"mean {parts}{most}\n")
    return "".join(lines)


def format_apps(result: Result) -> str:
    """The applications' experience ([[web]], [[video]]): page loads (their time to first byte and load
    time, p50 / p90 / max over the pages), videos (startup, rebuffering, mean bitrate, switches); every
    row: --json's apps, or Result.pages, Result.videos, Result.segments."""
    pages, videos = result.app_rows["pages"], result.app_rows["videos"]
    lines = []

    def spread(values: Sequence[float], unit: float = 1e3, digits: int = 0) -> str:
        return " / ".join(f"{unit * v:.{digits}f}" for v in (_quantile(values, 0.5), _quantile(values, 0.9),
                                                               max(values)))

    if pages:
        loads = [p["load_s"] for p in pages if p["load_s"] is not None]
        ttfb = [p["ttfb_s"] for p in pages if p["ttfb_s"] is not None]
        head = f"pages: {len(loads)} of {len(pages)} loaded"
        failed = sum(p["failed"] for p in pages)
        if failed:
            head += f", {failed} failed (a connection gave up)"
        if loads:
            head += f"; load time p50 / p90 / max {spread(loads)} ms"
        if ttfb:
            head += f"; time to first byte {spread(ttfb)} ms"
        lines.append(head + "\n")
    for v in videos:
        startup = "-" if v["startup_s"] is None else f"{1e3 * v['startup_s']:.0f} ms"
        rate = "-" if v["mean_bitrate_bps"] is None else f"{v['mean_bitrate_bps'] / 1e6:.2f} Mb/s"
        state = "played to its end" if v["finished"] else "failed" if v["failed"] else "still playing at the end"
        lines.append(f"video {v['video']} (modem {v['modem']}): startup {startup}, rebuffering {v['rebuffer_s']:.2f} s "
                     f"in {v['rebuffers']} stalls, mean bitrate {rate}, {v['switches']} switches, "
                     f"{v['segments_done']} of {v['segments']} segments; {state}\n")
    for r in result.app_rows.get("rpm", []):
        lines.append(format_rpm_line(r))
    return "".join(lines)


#: Up to this many game or call sessions get lines of their own; with more, one summary line each kind.
REALTIME_LINES = 8


def format_realtime(result: Result) -> str:
    """Games and calls (issue 37): per session and way, packets lost and late, the one-way delay's p50,
    p99 and max, RFC 3550 jitter, and a call's MOS; with many sessions, the worst of each. Nothing
    without them."""
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{1e3 * v:.1f}"

    lines = []
    for rows, name in ((result.game_rows, "game"), (result.call_rows, "call")):
        if not rows:
            continue
        if len(rows) > 2 * REALTIME_LINES:
            p99 = [r["delay_p99_s"] for r in rows if r["delay_p99_s"] is not None]
            lost = sum(r["lost"] for r in rows) / max(1, sum(r["sent"] for r in rows))
            late = sum(r["late"] for r in rows) / max(1, sum(r["sent"] for r in rows))
            mos = [r["mos"] for r in rows if r.get("mos") is not None]
            lines.append(f"{len(rows) // 2} {name}s: worst one-way p99 {ms(max(p99, default=None))} ms, "
                         f"{100 * lost:.2f} % lost, {100 * late:.2f} % late"
                         + (f", MOS min {min(mos):.2f}" if mos else "") + "\n")
            continue
        for r in rows:
            head = f"{name} {r[name]} {r['direction']:<4}: {r['sent']} sent, {r['lost']} lost, {r['late']} late; "
            head += (f"one-way {ms(r['delay_p50_s'])} p50 / {ms(r['delay_p99_s'])} p99 / {ms(r['delay_max_s'])} max "
                     f"ms, jitter {ms(r['jitter_s'])} ms")
            if r.get("mos") is not None:
                head += f"; R {r['r_factor']:.1f}, MOS {r['mos']:.2f} (mouth to ear {ms(r['mouth_to_ear_s'])} ms)"
            lines.append(head + "\n")
    return "".join(lines)


def format_rpm_line(r: Mapping[str, Any]) -> str:
    """One responsiveness test's line: RPM under working conditions beside the idle RPM and round trip,
    the goodput each way (draft-ietf-ippm-responsiveness)."""
    def num(v: Any, f: str) -> str:
        return "-" if v is None else format(v, f)

    def mbps(v: Any) -> str:
        return "-" if v is None else f"{v / 1e6:.2f} Mb/s"

    idle = "-" if r["idle_rtt_s"] is None else f"{r['idle_rpm']:.0f} RPM ({1e3 * r['idle_rtt_s']:.1f} ms)"
    state = "; aborted: a load-generating connection gave up" if r["failed"] else ""
    return (f"rpm {r['test']} (modem {r['modem']}): {num(r['rpm'], '.0f')} RPM under working conditions, idle "
            f"{idle}; goodput {mbps(r['goodput_down_bps'])} down, {mbps(r['goodput_up_bps'])} up, "
            f"{r['connections']} connections, {r['foreign_probes']} + {r['self_probes']} probes{state}\n")


def format_ecn(result: Result) -> str:
    """With tcp.ecn on: each flow's CE marks received and its sender's ECN-Echo reductions (summed over
    more than FLOW_LINES flows)."""
    if result.flow_count > FLOW_LINES:
        ce = [v for v in _metric(result, "ce_received") if v is not None]
        if not ce:
            return ""
        return (f"{len(ce)} flows ECN: {sum(ce)} CE received, {sum(v for v in _metric(result, 'ecn_reductions') if v is not None)} window "
                f"reductions for ECN-Echo\n")
    return "".join(f"flow {f['flow']} ECN: {f['ce_received']} CE received, {f['ecn_reductions']} window "
                   f"reductions for ECN-Echo\n" for f in result.flows if f.get("ce_received") is not None)


#: The places with the longest waits (p99) get a line each in `hfcsim run`'s output, those whose p99
#: wait is at least PLACE_MIN_P99_S or that dropped packets.
PLACE_LINES = 5
PLACE_MIN_P99_S = 0.001


def format_places(result: Result) -> str:
    """Where packets waited: the places with the longest p99 waits, one line each (their waits, what
    arrivals found, their drops by reason); every place is in --json's engine.places and
    Result.places. Nothing when no packet waited anywhere."""
    places = [p for p in result.engine.get("places") or [] if p["served"] or p["drops_full"] or p["drops_aqm"]]
    if not places:
        return ""

    def ms(v: float | None) -> str:
        return "-" if v is None else f"{1e3 * v:.1f}"

    ranked = sorted(places, key=lambda p: (-(p["wait_p99_s"] or 0.0), p["name"]))
    shown = [p for p in ranked if (p["wait_p99_s"] or 0.0) >= PLACE_MIN_P99_S or p["drops_full"] or p["drops_aqm"]]
    shown = shown[:PLACE_LINES]
    if not shown:
        return (f"waits: {len(places)} places, none with a p99 wait of {1e3 * PLACE_MIN_P99_S:g} ms or more nor a "
                "drop (every place: --json, or Result.places)\n")
    lines = [f"waits: {len(places)} places; the longest (p50 / p99 / max ms; p99 of what arrivals found; drops; "
             "every place: --json, or Result.places):\n"]
    for p in shown:
        kind = p["kind"].replace("_", " ")
        side = "" if p["direction"] == "-" else f"{p['direction']} "
        drops = [f"{p[k]} {word}" for k, word in (("drops_full", "full"), ("drops_aqm", "by AQM"),
                                                   ("drops_other", "discarded"), ("lost", "lost")) if p[k]]
        held = p["held_p99_bytes"]
        lines.append(f"  {p['name']} ({side}{kind}): {ms(p['wait_p50_s'])} / {ms(p['wait_p99_s'])} / "
                     f"{ms(p['wait_max_s'])} ms; {'-' if held is None else held} B"
                     + (f"; dropped {', '.join(drops)}" if drops else "") + _marks(p["marks"]) + "\n")
    return "".join(lines)


# The docsis service flows' queues (topology.rs): per modem m, "<prefix><m>", with the keys of their side.
SERVICE_FLOWS = (("cm_us_modem", "cm", "us"), ("cmts_ds_modem", "cmts", "ds"))


def format_docsis_pie(result: Result, scenario: Scenario) -> str:
    """One line when DOCSIS-PIE (network.cm_aqm = "docsis_pie", or the classic queue of LLD at either
    end) dropped nothing because its queue never held a third of its buffer, while it held more than
    DOCSIS-PIE's target: RFC 8034 Annex M (MULPI's DOCSIS-PIE) drops nothing outside a burst below a
    third of BUFFER_SIZE (net/aqm/pie.rs), so a large network.cm_queue_bytes or cmts_queue_bytes
    switches its drops off (issue 36: 28 s of standing queue at 0.5 Mb/s). Nothing otherwise."""
    net = scenario["network"]
    if net["kind"] != "docsis":
        return ""
    hits = []
    # The longest a packet waited there (engine.places): under a shared channel a flow drains at its share,
    # slower than its rate cap, and the bytes over the cap's rate would understate the wait.
    waits = dict(zip(result.places["name"], result.places["wait_max_s"], strict=True)) if result.queues else {}
    for q in result.queues:
        for prefix, side, way in SERVICE_FLOWS:
            if not q["name"].startswith(prefix) or net[f"{side}_aqm"] not in ("docsis_pie", "lld") or q["drops_aqm"]:
                continue
            if q["name"].endswith("_ll"):  # the low-latency station's queue: its immediate AQM, not DOCSIS-PIE
                continue
            digits = re.match(r"\d+", q["name"][len(prefix):])  # cm_us_modem3, cm_us_modem3_ll
            rate = _group_rate(scenario, int(digits.group()), way) if digits else net[f"{way}_rate_bps"]
            buffer, key = _service_flow_buffer({**net, f"{way}_rate_bps": rate}, side, way)
            delay = waits.get(q["name"])
            if delay is None or delay != delay:
                delay = 8 * q["max_bytes"] / rate
            if buffer is not None and 3 * q["max_bytes"] < buffer and delay > net["docsis_pie_target_s"]:
                hits.append((delay, q, buffer, key, side, way))
    if not hits:
        return ""
    delay, q, buffer, key, side, way = max(hits, key=lambda h: h[0])
    what = "DOCSIS-PIE" if net[f"{side}_aqm"] == "docsis_pie" else "LLD's classic queue (DOCSIS-PIE)"
    where = q["name"] if len(hits) == 1 else f"{len(hits)} queues (the longest {q['name']})"
    return (f"note: {what} at {where} dropped nothing: the queue held up to {q['max_bytes']} B and its packets waited "
            f"up to {_duration(delay)}, above the {_duration(net['docsis_pie_target_s'])} target, but never a third of "
            f"its {buffer} B buffer ({key}), below which DOCSIS-PIE does not drop (RFC 8034 Annex M)\n")


def _group_rate(scenario: Scenario, modem: int, way: str) -> float:
    """Modem ``modem``'s service-flow rate ``way`` ("ds" or "us"), bit/s: its [[modems]] group's own tier
    (modems.*.ds_rate_bps, us_rate_bps) where the group sets one, else the network's."""
    first = 0
    for group in scenario.get("modems") or []:
        count = group.get("count", 1)
        if modem < first + count:
            own = group.get(f"{way}_rate_bps")
            return own if own is not None else scenario["network"][f"{way}_rate_bps"]
        first += count
    return scenario["network"][f"{way}_rate_bps"]


def _duration(s: float) -> str:
    return f"{s:.3g} s" if s >= 1 else f"{1e3 * s:.3g} ms"


def _service_flow_buffer(net: dict[str, Any], side: str, way: str) -> tuple[int | None, str]:
    """A docsis service flow's buffer, bytes (None: unbounded), and the key that sizes it: the engine's
    rule (scenario.rs Docsis::buffer_bytes): the bytes key, else the seconds key at the rate, else
    network.default_buffer's 100 ms at the lower of the rate and the peak rate. That one's floor of a
    full data packet is left out (chosen: it can only make the buffer larger, and the note then
    stays silent rather than wrong)."""
    rate = net[f"{way}_rate_bps"]
    if net[f"{side}_queue_bytes"] is not None:
        return net[f"{side}_queue_bytes"], f"network.{side}_queue_bytes"
    if net[f"{side}_queue_s"] is not None:
        return max(1, math.floor(net[f"{side}_queue_s"] * rate / 8 + 0.5)), f"network.{side}_queue_s"
    if net["default_buffer"] == "unbounded":
        return None, "network.default_buffer"
    peak = net[f"{way}_peak_bps"]
    return math.floor(0.1 * (rate if peak is None else min(rate, peak)) / 8 + 0.5), "network.default_buffer"


def _marks(n: int) -> str:
    """ECN marks beside the AQM's drops (RFC 8033 Sec. 5.1, RFC 8289 Sec. 5); nothing without any."""
    return f", {n} marked CE" if n else ""


def format_mac(result: Result, scenario: Scenario) -> str:
    """The request/grant MAC's totals in one line; nothing with the FIFO upstream (engine.mac null)."""
    mac = result.mac
    if mac is None:
        return ""
    name = scenario.get("upstream.mac") if scenario["network"]["kind"] in CABLE else "?"
    n = len(result.station_rows)
    line = (f"mac: {name}, {n} station{'s' if n != 1 else ''}, {mac['requests']} requests "
            f"({mac['collisions']} collisions, {mac['piggybacked_requests']} piggybacked), "
            f"{mac['grants']} grants, frames {mac['frames']}\n")
    # Several upstream channels: engine.mac sums them; a line each.
    for c, ch in enumerate(result.engine.get("channels") or []):
        line += (f"  channel {c}: {ch['requests']} requests ({ch['collisions']} collisions, "
                 f"{ch['piggybacked_requests']} piggybacked), {ch['grants']} grants, frames {ch['frames']}\n")
    return line


# ---------------------------------------------------------------------------------------------------
# hfcsim params


def _add_params(subparsers: Any) -> None:
    p = subparsers.add_parser("params", help="list every scenario key with its default and range",
                              description="List every scenario key: default, what is allowed, meaning.")
    p.set_defaults(func=_cmd_params)


def _cmd_params(args: argparse.Namespace) -> int:
    rows = [("key", "default", "allowed", "meaning"), *param_rows()]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3] + "\n")
    sys.stdout.write(_preset_lines())
    return EXIT_OK


def _preset_lines() -> str:
    """Each preset's keys with their values and where each comes from (schema.toml [presets])."""
    from hfcsim.schema import PRESET_NOTES
    from hfcsim.scenario import PRESETS

    lines = ['\npresets: preset = "NAME" at the top of a scenario lays these values under its own\n']
    for name, sections in PRESETS.items():
        note = PRESET_NOTES.get(name, {})
        base = f" (on {note['base']})" if "base" in note else ""
        lines.append(f"\n{name}{base}: {note.get('description', '')}\n")
        values = [(f"{section}.{key}", json.dumps(value)) for section, table in sections.items()
                  for key, value in table.items()]
        width = max(len(k) + len(v) for k, v in values) + 3
        for key, value in values:
            source = note.get("sources", {}).get(key, "")
            lines.append(f"  {(key + ' = ' + value).ljust(width)}  {source}\n")
    return "".join(lines)


# ---------------------------------------------------------------------------------------------------
# hfcsim sweep


def _add_sweep(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sweep", help="run a grid of scenarios x seeds; results to Parquet (resumable)",
        description="Run every grid point of a sweep with every seed, on all local cores or a Dask "
                    "cluster. Each finished batch is stored at once, so an interrupted sweep resumes "
                    "where it stopped, and runs already stored are never repeated.",
        epilog="examples:\n"
               "  hfcsim sweep scenarios/sweeps/sweep-loss.toml --runs 5\n"
               "  hfcsim sweep scenarios/sweeps/sweep-loss.toml --dask tcp://scheduler:8786 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", metavar="SWEEP.toml", help="sweep file: base scenario, [grid], [zip], runs")
    p.add_argument("--runs", type=_positive("--runs"), metavar="N", help="seeds per grid point (overrides runs)")
    p.add_argument("--jobs", type=_positive("--jobs"), metavar="J",
                   help="local worker processes (default: all cores; 1 = no subprocesses)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run on a Dask distributed cluster, e.g. tcp://host:8786 (default: $HFCSIM_DASK)")
    p.add_argument("--out", type=_folder("--out"), metavar="DIR",
                   help="results folder, created with its missing parents (default: hfcsim-results/<sweep name>)")
    p.add_argument("--json", action="store_true",
                   help='print one JSON object {"out", "rows", "summary"} and nothing else (summary: a record per grid '
                        'point and metric, as summary.csv has them, of the metrics the table shows); no progress bar')
    p.set_defaults(func=_cmd_sweep)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from hfcsim.store import Store
    from hfcsim.sweep import define, summarize, summary_metrics, sweep

    spec = define(args.sweep, args.runs)
    out = args.out if args.out is not None else os.path.join("hfcsim-results", spec.name)
    try:
        frame = sweep(spec, jobs=args.jobs, dask=args.dask, out=out, progress=False if args.json else None)
    except OSError as e:
        raise _output_error("--out", out, e) from None
    # Besides the finished flows' throughput, what a sweep of flows that run to the time limit has:
    # their measured throughput and the pings' percentiles and loss (issue 36, defect 14).
    summary = summarize(frame, summary_metrics(frame))
    folder = str(Store(out).dir)
    if args.json:
        records = json.loads(summary.to_json(orient="records"))  # NaN -> null
        sys.stdout.write(json.dumps({"out": folder, "rows": len(frame), "summary": records}) + "\n")
    else:
        sys.stdout.write(format_summary(summary, spec.keys, frame))
        sys.stdout.write(f"{len(frame)} rows -> {folder}/results.parquet, summary.csv\n")
    return EXIT_OK


def format_summary(summary: Any, keys: Sequence[str], frame: Any = None) -> str:
    """Throughput per grid point: the swept values, runs, mean, median, p25, p75 and the 95 % CI (Mb/s).
    With the sweep's ``frame``, also how many of the point's flows finished, and for a point where some
    did not, a line with their end reasons (issue 26, defect 8: a point of never-finishing downloads
    showed n 0 and - everywhere, without a word why). Where ``summary`` has them (``summary_metrics``),
    the mean measured throughput and the pings' p50, p99 and loss, which a flow running to the time
    limit has too (issue 36, defect 14: such a sweep summarised nothing), and the run's worst place's p99
    wait and its drops (``PLACE_RUN_METRICS``, issue 35)."""
    def mbps(v: float) -> str:
        return "-" if v != v else f"{v / 1e6:.3f}"  # NaN (no finished flow, or n < 2 for the CI)

    extra = {"measured_throughput_bps": ("measured Mb/s", mbps),
             "ping_during_p50_s": ("ping p50 ms", lambda v: "-" if v != v else f"{1e3 * v:.1f}"),
             "ping_during_p99_s": ("p99 ms", lambda v: "-" if v != v else f"{1e3 * v:.1f}"),
             "ping_during_loss": ("ping loss", lambda v: "-" if v != v else f"{100 * v:.1f}%"),
             "worst_place_wait_p99_s": ("worst wait p99 ms", lambda v: "-" if v != v else f"{1e3 * v:.1f}"),
             "place_drops": ("drops", lambda v: "-" if v != v else f"{v:.0f}")}
    if "metric" in summary:
        shown = {m: extra[m] for m in extra if (summary["metric"] == m).any()
                 and not (m.startswith("ping") and summary.loc[summary["metric"] == m, "count"].sum() == 0)}
        means = {m: summary.loc[summary["metric"] == m, "mean"].tolist() for m in shown}
        summary = summary[summary["metric"] == "throughput_bps"].reset_index(drop=True)
    else:
        shown, means = {}, {}

    by_point = {}
    if frame is not None and "scenario_hash" in summary and "scenario_hash" in frame and "end_reason" in frame:
        for h, reasons in frame.groupby("scenario_hash", sort=False)["end_reason"]:
            by_point[h] = reasons.fillna("unknown").value_counts()
    header = [*keys, "n", "mean Mb/s", "median", "p25", "p75", "95% CI", *(label for label, _ in shown.values()),
              *(["finished"] if by_point else [])]
    cells = [header]
    notes = []
    for i, row in summary.iterrows():
        ci = "-" if row["ci95_low"] != row["ci95_low"] else f"{mbps(row['ci95_low'])}..{mbps(row['ci95_high'])}"
        cells.append([*(str(row[k]) for k in keys), str(row["count"]), mbps(row["mean"]), mbps(row["median"]),
                      mbps(row["p25"]), mbps(row["p75"]), ci, *(fmt(means[m][i]) for m, (_, fmt) in shown.items())])
        if by_point:
            reasons = by_point.get(row["scenario_hash"])
            total = 0 if reasons is None else int(reasons.sum())
            done = 0 if reasons is None else int(reasons.get("finished", 0))
            cells[-1].append(f"{done}/{total}")
            if done < total:
                why = ", ".join(f"{n} {r}" for r, n in reasons.items() if r != "finished")
                where = ", ".join(f"{k} = {row[k]}" for k in keys) or "the point"
                notes.append(f"{where}: {total - done} of {total} flows unfinished ({why})\n")
    if shown:
        notes.append("n, mean .. 95% CI: the finished flows' throughput; measured Mb/s: each flow's bytes delivered in "
                     "order from sim.measure_from_s to its end or the time limit, mean over the point's flows"
                     + ("; ping: each flow's echoes while it ran, mean over the point's flows of their p50, p99 and "
                        "share lost" if any(m.startswith("ping") for m in shown) else "")
                     + ("; worst wait p99: the largest p99 wait at any place packets waited (hfcsim run's waits: "
                        "line), drops: at every place, each mean over the point's runs"
                        if "place_drops" in shown else "") + "\n")
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return ("".join("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + "\n" for r in cells)
            + "".join(notes))


# ---------------------------------------------------------------------------------------------------
# Entry point

# ---------------------------------------------------------------------------------------------------
# hfcsim model


def _add_model(subparsers: Any) -> None:
    p = subparsers.add_parser("model", help="evaluate an analytic model",
                              description="Evaluate an analytic model of hfcsim.models.")
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    cb = models.add_parser(
        "cohen-buffer", help="largest socket buffer for a cable-modem buffer (Cohen & Ramanathan Sec. V.B)",
        description="Largest TCP socket buffer that a window sent back to back cannot overrun the cable "
                    "modem's buffer with: C >= (B n - 1)(1 - r_lan/r_ds) packets (Cohen & Ramanathan "
                    "Sec. V.B, generalised to any rates; see hfcsim.models.cohen).")
    cb.add_argument("--cm-buffer-bytes", type=float, required=True, help="cable-modem buffer, bytes")
    cb.add_argument("--downstream-bps", type=float, default=25e6, help="downstream channel rate (25e6)")
    cb.add_argument("--cm-lan-bps", type=float, default=10e6, help="modem's LAN rate (10e6)")
    cb.add_argument("--connections", type=int, default=1, help="connections sharing the modem (1)")
    cb.add_argument("--mss-bytes", type=int, default=1460, help="MSS (1460)")
    cb.add_argument("--header-bytes", type=int, default=40, help="TCP/IP header bytes (40)")
    cb.add_argument("--strict", action="store_true",
                    help="no drop at all (default: at most one drop per window, the paper's relaxed rule)")
    cb.add_argument("--json", action="store_true", help="print one JSON object")
    cb.set_defaults(func=_cmd_model_cohen_buffer)


def _cmd_model_cohen_buffer(args: argparse.Namespace) -> int:
    from hfcsim.models import cohen

    params = dict(cm_buffer_bytes=args.cm_buffer_bytes, downstream_bps=args.downstream_bps,
                  cm_lan_bps=args.cm_lan_bps, connections=args.connections, mss_bytes=args.mss_bytes,
                  header_bytes=args.header_bytes, allow_one_drop=not args.strict)
    try:
        exact = cohen.max_socket_buffer(**params)
        whole = cohen.max_socket_buffer_whole_mss(**params)
    except ValueError as e:
        raise UsageError(str(e)) from None
    result = {"inputs": params, "max_socket_buffer_bytes": exact, "whole_mss_bytes": whole,
              "whole_mss_segments": whole / args.mss_bytes if math.isfinite(whole) else None}
    if args.json:
        sys.stdout.write(json.dumps(result) + "\n")
        return EXIT_OK
    if not math.isfinite(exact):
        sys.stdout.write("the modem's LAN is at least as fast as the downstream channel: nothing accumulates,\n"
                         "any socket buffer is safe\n")
        return EXIT_OK
    sys.stdout.write(
        f"largest socket buffer: {exact:,.0f} B; as whole segments (BSD rounds buffers up to whole MSS): "
        f"{whole:,.0f} B = {whole / args.mss_bytes:.0f} x {args.mss_bytes} B\n"
        f"rule: C >= (B n - 1)(1 - r_lan/r_ds){'' if params['allow_one_drop'] else ' + 1'} packets of "
        f"{args.mss_bytes + args.header_bytes} B (Cohen & Ramanathan Sec. V.B)\n")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------------
# hfcsim reproduce


def _add_reproduce(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "reproduce", help="reproduce a paper's figures and check its claims",
        description="Run a paper's figures as sweeps, draw them (PNG and SVG), write their data (CSV) and a "
                    "report (Markdown and HTML) with every claim the paper states: PASS, FAIL or NOT-RUN, "
                    "the measured figure beside the paper's. Results are stored as they finish, so an "
                    "interrupted reproduction resumes.")
    from hfcsim.papers import PAPERS

    p.add_argument("paper", metavar="PAPER", help=f"{', '.join(PAPERS[:-1])} or {PAPERS[-1]}")
    p.add_argument("--figure", action="append", metavar="ID", help="only this figure (repeatable)")
    p.add_argument("--runs", type=_positive("--runs"), help="seeds per point (default 100; 4 with --quick)")
    p.add_argument("--quick", action="store_true", help="a few runs per point: every file, in seconds")
    p.add_argument("--out", type=_folder("--out"), metavar="DIR",
                   help="output folder, created with its missing parents (default hfcsim-results/reproduce/PAPER)")
    p.add_argument("--jobs", type=_positive("--jobs"), help="local worker processes (default: all cores)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--stack", metavar="NAME",
                       help="run the recipes with tcp.stack = NAME instead of the paper's own stack (keys a recipe "
                            f"sets itself still win); results under OUT/stacks/NAME ({', '.join(stacks.STACKS)})")
    which.add_argument("--stacks", metavar="LIST",
                       help="all, or a comma list of stacks: reproduce under each (OUT/stacks/NAME) and write "
                            "OUT/report-stacks.md, one row per claim and one column per stack")
    p.add_argument("--emulate", action="store_true",
                   help="nguyen04: Figs. 3-7 with the host's own Linux TCP (hfcsim emulate; root), each point "
                        "beside the same point simulated; report with a column per side (default out "
                        "hfcsim-results/reproduce/PAPER-emulate; the full run takes about an hour, --quick about 5 minutes)")
    p.set_defaults(func=_cmd_reproduce)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from hfcsim import reproduce
    from hfcsim.papers import emulated, papers

    known = papers()
    if args.paper not in known:
        raise UsageError(f"reproduce {args.paper}: unknown paper (known: {', '.join(known)})")
    if args.stack is not None:
        reproduce.check_stack(args.stack)
    names = reproduce.parse_stacks(args.stacks) if args.stacks is not None else None
    paper = known[args.paper]()
    if args.emulate:
        if args.stack is not None or names is not None:
            raise UsageError("reproduce --emulate runs the kernel's own TCP; it cannot run with --stack or --stacks")
        if args.runs is not None or args.jobs is not None:
            raise UsageError("reproduce --emulate runs one run per point, one at a time; it takes no --runs or --jobs")
        reproduce.check_emulation(paper, emulated())
        try:
            return _reproduce_emulated(args, paper)
        except OSError as e:
            raise _output_error("--out", args.out or reproduce.emulated_out(paper), e) from None
    try:
        return _reproduce(args, paper, names)
    except OSError as e:
        raise _output_error("--out", args.out or reproduce.default_out(paper), e) from None


def _reproduce_emulated(args: argparse.Namespace, paper: Any) -> int:
    from hfcsim import reproduce

    log = lambda text: sys.stderr.write(f"hfcsim: {text}\n")  # noqa: E731
    er = reproduce.reproduce_emulated(paper, figures=args.figure, quick=args.quick, out=args.out, log=log)
    sys.stdout.write(f"{'claim':18} {'simulated':9} emulated\n")
    sim, emu = er.reports["simulated"], er.reports["emulated"]
    for a, b in zip(sim.results, emu.results, strict=True):
        sys.stdout.write(f"{a.claim.id:18} {a.status:9} {b.status:8} {b.measured}\n")
    sys.stdout.write(f"simulated and emulated in {er.wall_s:.0f} s; report: {er.out / 'report.md'} (and .html); "
                     f"each side's: {er.out / 'emulated' / 'report.md'}, {er.out / 'simulated' / 'report.md'}\n")
    return EXIT_OK


def _reproduce(args: argparse.Namespace, paper: Any, names: list[str] | None) -> int:
    from hfcsim import reproduce

    tty = sys.stderr.isatty()
    log = lambda text: sys.stderr.write(f"hfcsim: {text}\n")  # noqa: E731
    if names is not None:
        sr = reproduce.reproduce_stacks(paper, names, figures=args.figure, runs=args.runs, quick=args.quick,
                                        out=args.out, jobs=args.jobs, progress=tty, log=log)
        width = max(len(n) for n in names)
        sys.stdout.write(f"{'claim':18} " + " ".join(f"{n:{width}}" for n in names) + "\n")
        for i, claim in enumerate(paper.claims):
            statuses = [sr.reports[n].results[i].status for n in names]
            sys.stdout.write(f"{claim.id:18} " + " ".join(f"{s:{width}}" for s in statuses) + "\n")
        sys.stdout.write(f"{len(names)} stacks in {sr.wall_s:.0f} s; table: {sr.out / 'report-stacks.md'} "
                         f"(and .html); each stack's report: {sr.out / 'stacks' / 'NAME' / 'report.md'}\n")
        return EXIT_OK
    report = reproduce.reproduce(paper, figures=args.figure, runs=args.runs, quick=args.quick, out=args.out,
                                 jobs=args.jobs, progress=tty, log=log, stack=args.stack)
    sys.stdout.write(f"TCP stack: {report.stack}\n")
    for r in report.results:
        sys.stdout.write(f"{r.status:8} {r.claim.id:18} {r.measured}\n")
    c = report.counts()
    sys.stdout.write(f"{c['PASS']} PASS, {c['FAIL']} FAIL, {c['NOT-RUN']} NOT-RUN in {report.wall_s:.0f} s; "
                     f"report: {report.out / 'report.md'} (and .html), figures: {report.out / 'figures'}\n")
    return EXIT_OK


def _add_compare(subparsers: Any) -> None:
    from hfcsim import compare

    compare.add_parser(subparsers)


_seconds = _number("--seconds", lambda s: s > 0, "> 0")
_spin = _number("--spin-us", lambda us: 0 <= us <= 10_000, "in [0, 10000]")


def _add_emulate(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "emulate", help="carry real kernel TCP through a scenario's network on the wall clock (root)",
        usage="hfcsim emulate [SCENARIO.toml] [--set KEY=VALUE ...] [--seconds S] [--side {client,server}] "
              "[--json] [--spin-us US] [--pcap FILE.pcapng] [--compare] [-- COMMAND ...]",
        description="Make two network namespaces (server 198.18.0.1; client 198.19.0.(m+1) per modem) "
                    "joined by the scenario's network run on the wall clock, and carry either the "
                    "scenario's flows as real kernel TCP bulk transfers (the built-in workload) or "
                    "COMMAND, run in the client namespace until it exits. Needs root, /dev/net/tun and "
                    "tcp.stack = \"linux\".",
        epilog="examples:\n"
               "  hfcsim emulate --set tcp.stack=linux --set flows.0.bytes=2000000\n"
               "  hfcsim emulate --set tcp.stack=linux -- ping -c 3 198.18.0.1\n"
               "  hfcsim emulate --set tcp.stack=linux --side server -- iperf3 -s -1\n"
               "  hfcsim emulate --set tcp.stack=linux --pcap run.pcapng -- ping -c 3 198.18.0.1\n"
               "  hfcsim emulate --set tcp.stack=linux --set receiver.receive_buffer_bytes=65536 --compare",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", nargs="?", metavar="SCENARIO.toml",
                   help="scenario file (TOML); without one, the defaults")
    p.add_argument("--seed", type=_seed, default=1, metavar="N", help="random seed of the model's parts (default 1)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key (repeatable)")
    p.add_argument("--seconds", type=_seconds, default=None, metavar="S",
                   help="stop after S seconds (COMMAND: it is terminated; built-in: unfinished flows are reported)")
    p.add_argument("--side", choices=("client", "server"), default="client",
                   help="the namespace COMMAND runs in (default client)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: the built-in workload's results, or with -- COMMAND its exit status, "
                        "the addresses, the scenario's pings and the self-checks (COMMAND's output then goes to "
                        "stderr)")
    p.add_argument("--spin-us", type=_spin, default=80.0, metavar="US",
                   help="busy-wait this long before each release instead of sleeping (default 80; 0 costs "
                        "a third of the CPU and gives p50 lateness ~8 us instead of ~1 us)")
    p.add_argument("--pcap", type=_output_file("--pcap"), metavar="FILE.pcapng",
                   help="write what crossed (the packets' headers as each side's TUN saw them, wall-clock "
                        "times; and a DOCSIS upstream's bursts) to FILE.pcapng, as run --pcap does")
    p.add_argument("--compare", action="store_true",
                   help="built-in workload: also simulate the scenario and print both side by side "
                        "(throughput, retransmissions, RTOs, ping RTT percentiles, the ratio)")
    # `-- COMMAND ...` is split off by main() before parsing (argparse would take COMMAND for SCENARIO).
    p.set_defaults(func=_cmd_emulate, shell_command=[])


def _cmd_emulate(args: argparse.Namespace) -> int:
    from hfcsim import emulate

    command = args.shell_command
    scenario = load(args.scenario, args.sets)
    if args.pcap is not None:
        from hfcsim.store import check_output_file

        try:
            check_output_file(args.pcap)
        except OSError as e:
            raise _output_error("--pcap", args.pcap, e) from None
    if command:
        if args.compare:
            raise UsageError("emulate: --compare runs the built-in workload; it cannot run with -- COMMAND")
        # --json: stdout is the one JSON object; COMMAND's own output goes to stderr.
        run = emulate.run_command(scenario, command, side=args.side, seconds=args.seconds, seed=args.seed,
                                  out=None if args.json else sys.stdout, spin_us=args.spin_us, pcap=args.pcap,
                                  command_stdout=sys.stderr if args.json else None)
        if args.json:
            sys.stdout.write(json.dumps(run.to_dict()) + "\n")
        else:
            sys.stdout.write(emulate.format_pings(run.pings))
            sys.stdout.write(emulate.format_report(run.report, run.checks()))
        return run.status
    out = None if args.json else sys.stdout
    if args.compare:
        both = emulate.compare(scenario, seed=args.seed, seconds=args.seconds, spin_us=args.spin_us, out=out,
                               pcap=args.pcap)
        result = both["emulated"]
    else:
        result = emulate.emulate(scenario, seed=args.seed, seconds=args.seconds, spin_us=args.spin_us, out=out,
                                 pcap=args.pcap)
    checks = result.engine["self_checks"]
    if args.json:
        doc = result.to_dict(trace=False)
        if args.compare:
            doc = {"emulated": doc, "simulated": both["simulated"].to_dict(trace=False), "notes": both["notes"],
                   "compare": both["rows"]}
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        sys.stdout.write(emulate.format_flows(result.flows))
        sys.stdout.write(emulate.format_pings(result.ping_rows))
        sys.stdout.write(emulate.format_report(result.engine["emulator"],
                                               [(c["name"], c["ok"], c["what"]) for c in checks]))
        if args.compare:
            sys.stdout.write(emulate.format_compare(both["rows"], both["notes"]))
    return EXIT_OK if all(c["ok"] for c in checks) else EXIT_ENGINE


def _add_advise(subparsers: Any) -> None:
    from hfcsim import advise

    advise.add_parser(subparsers)


def _add_plot(subparsers: Any) -> None:
    from hfcsim import plot

    plot.add_parser(subparsers)


def _add_rpm(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rpm", help="run the IETF responsiveness test (RPM) on a scenario",
        description="Run a scenario with one responsiveness test ([[rpm]], draft-ietf-ippm-responsiveness-09)\n"
                    "added on a modem's PC and print its result: RPM under working conditions (downloads and\n"
                    "uploads at once), the idle round trip and the goodput each way. SCENARIO is a TOML file or\n"
                    "a preset's name (hfcsim params lists them); without one, the default docsis network. The\n"
                    "scenario's own flows stay (background load); without flows it has none; its own [[rpm]]\n"
                    "tests run as they are. Its TCP stack is linux unless the scenario or --set names one. The\n"
                    "test's keys: rpm.0.KEY (hfcsim params; docs/model/responsiveness.md).",
        epilog="examples:\n"
               "  hfcsim rpm\n"
               "  hfcsim rpm docsis31\n"
               "  hfcsim rpm docsis30 --set network.cmts_aqm=pie --set network.cm_aqm=docsis_pie\n"
               "  hfcsim rpm docsis30 --set rpm.0.connections=8 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", nargs="?", metavar="SCENARIO",
                   help="scenario file (TOML) or preset name; without one, the default docsis network")
    p.add_argument("--seed", type=_seed, default=1, metavar="N", help="random seed (default 1)")
    p.add_argument("--modem", type=_modem, default=None, metavar="N",
                   help="the modem whose PC runs the test (default 0); not with a scenario that has its own [[rpm]]")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key, e.g. rpm.0.connections=8 or network.cm_aqm=docsis_pie (repeatable)")
    p.add_argument("--json", action="store_true", help="print the run's JSON object (its apps.rpm row) and nothing else")
    p.set_defaults(func=_cmd_rpm)


def _modem(text: str) -> int:
    try:
        modem = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--modem {text}: must be an integer") from None
    if modem < 0:
        raise argparse.ArgumentTypeError(f"--modem {text}: must be >= 0")
    return modem


def rpm_scenario(source: str | None, sets: Sequence[str] = (), modem: int | None = None) -> Scenario:
    """The scenario ``hfcsim rpm`` runs: ``source`` (a TOML path, a preset's name, or None: the default
    docsis network) with one [[rpm]] test on ``modem`` (default 0) unless it has its own (then they run as
    they are, and ``modem`` is refused), its flows none unless it has its own, tcp.stack linux unless it
    or ``sets`` names a stack (chosen: the test is of today's TCP), then ``sets``."""
    from hfcsim.scenario import PRESETS, apply_set, read_file

    if source is None:
        raw: dict[str, Any] = {"network": {"kind": "docsis"}}
    elif source in PRESETS and not os.path.exists(source):
        raw = {"preset": source}
    else:
        raw = read_file(source)
    raw.setdefault("flows", [])
    tests = raw.get("rpm")
    if isinstance(tests, list) and tests:
        if modem is not None:
            raise ScenarioError(f"--modem {modem}: the scenario has its own [[rpm]] (rpm.N.modem sets its modem)")
    else:
        raw["rpm"] = [{"modem": 0 if modem is None else modem}]
    tcp = raw.get("tcp")
    if not any(a.partition("=")[0].strip() == "tcp.stack" for a in sets) and not (
            isinstance(tcp, dict) and "stack" in tcp):
        raw["tcp"] = {**(tcp if isinstance(tcp, dict) else {}), "stack": "linux"}
    for assignment in sets:
        raw = apply_set(raw, assignment)
    try:
        return load(raw)
    except ScenarioError as e:
        if source is not None and not sets and source not in PRESETS:
            raise ScenarioError(f"{source}: {e}") from None
        raise


def _cmd_rpm(args: argparse.Namespace) -> int:
    scenario = rpm_scenario(args.scenario, args.sets, args.modem)
    result = simulate(scenario, seed=args.seed)
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(trace=False)) + "\n")
        return EXIT_OK
    for test in result.app_rows["rpm"]:
        sys.stdout.write(format_rpm(test, scenario))
    return EXIT_OK


def format_rpm(r: Mapping[str, Any], scenario: Scenario) -> str:
    """``hfcsim rpm``'s report: the draft's result and its parts."""
    def ms(v: Any) -> str:
        return "-" if v is None else f"{1e3 * v:.1f} ms"

    def rate(v: Any) -> str:
        return "-" if v is None else f"{v / 1e6:.2f} Mb/s"

    rpm = "-" if r["rpm"] is None else f"{r['rpm']:.0f}"
    idle = "-" if r["idle_rpm"] is None else f"{r['idle_rpm']:.0f}"
    which = "" if r["test"] == 0 else f"test {r['test']}, "
    lines = [
        f"responsiveness (draft-ietf-ippm-responsiveness-09), {which}modem {r['modem']}, network "
        f"{scenario['network']['kind']}, stack {scenario['tcp']['stack']}\n",
        f"  RPM under working conditions: {rpm}    idle: {idle} RPM ({ms(r['idle_rtt_s'])} round trip, "
        f"{r['idle_probes']} probes)\n",
        f"  goodput: {rate(r['goodput_down_bps'])} down, {rate(r['goodput_up_bps'])} up on {r['connections']} "
        f"load-generating connections\n",
        f"  trimmed means: TCP handshake {ms(r['tcp_f_s'])}, TLS {ms(r['tls_f_s'])} a round trip, HTTP "
        f"{ms(r['http_f_s'])} ({r['foreign_probes']} foreign probes); on a loaded connection {ms(r['http_l_s'])} "
        f"({r['self_probes']} self probes)\n",
    ]
    if r["failed"]:
        lines.append("  aborted: a load-generating connection gave up\n")
    elif r["rpm"] is None:
        lines.append("  no RPM: no probe of some kind completed in the measurement (see rpm.0.warmup_s, "
                     "rpm.0.duration_s)\n")
    return "".join(lines)


SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (
    _add_run, _add_params, _add_sweep, _add_plot, _add_model, _add_reproduce, _add_compare, _add_advise,
    _add_emulate, _add_rpm)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hfcsim",
                     description="Simulate TCP over hybrid fibre-coax (cable) access networks.")
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(subparsers)
    return parser


def _fail(message: str, status: int) -> int:
    sys.stderr.write(f"hfcsim: error: {' '.join(message.split())}\n")
    return status


def _signal_mask() -> Any:
    """This thread's signal mask, or None where SIGINT cannot be held back (not POSIX, not the main
    thread)."""
    import signal
    import threading

    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, [])


def _block_sigint() -> None:
    """Hold back SIGINT from this thread. A SIGINT caught before raises KeyboardInterrupt at the next
    bytecode, as ever; one sent after stays pending (``_sigint_pending``)."""
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _sigint_pending() -> bool:
    import signal

    return signal.SIGINT in signal.sigpending()


def _release_sigint(mask: Any) -> None:
    """Drop a SIGINT left pending (it has been answered, or came after the command was done) and
    restore ``mask``."""
    import signal

    while _sigint_pending():
        signal.sigwait({signal.SIGINT})  # pending: returns at once (sigtimedwait is not on macOS)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hfcsim`` command; return its exit status (the console script exits with it).

    Ctrl-C (SIGINT) at any moment before the command is done gives status 130 and leaves none of the
    files it writes through ``args.held`` (``--trace``). Their renames into place are its last act:
    SIGINT is blocked, a SIGINT caught before that raises KeyboardInterrupt, one pending since is
    checked, the files are renamed, and one that came during the renames takes them back. A SIGINT
    that lands after the engine's last check, while the CSV is written or synced, or after the last
    bytecode (Python ignores a signal caught then) used to let the run finish with status 0. Called
    as the program (``argv`` None), SIGINT stays blocked to the exit: no later one can count.
    """
    held = HeldRenames()
    mask = None
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        shell_command = None
        if words[:1] == ["emulate"] and "--" in words:  # hfcsim emulate [...] -- COMMAND ...
            cut = words.index("--")
            words, shell_command = words[:cut], words[cut + 1:]
            if not shell_command:
                raise UsageError("emulate: no COMMAND after --")
        args = build_parser().parse_args(words)
        args.held = held
        if shell_command is not None:
            args.shell_command = shell_command
        status = args.func(args)
        sys.stdout.flush()  # here, so that a full disk behind stdout is told like any output location
        mask = _signal_mask()
        if mask is not None:
            _block_sigint()
            if _sigint_pending():
                raise KeyboardInterrupt
            held.commit()
            if _sigint_pending():
                raise KeyboardInterrupt  # came during the renames: undone below
        else:
            held.commit()
        return status
    except (UsageError, ScenarioError) as e:
        return _fail(str(e), EXIT_USAGE)
    except EngineError as e:
        return _fail(str(e), EXIT_ENGINE)
    except KeyboardInterrupt:
        # Also one caught by another thread's handler (Python raises it here, in the main thread, at
        # any bytecode, even during the renames): what was renamed goes back.
        held.undo()
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `hfcsim run | head -1`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ENGINE
    except OSError as e:  # an output location a subcommand did not name itself (each names its option)
        from hfcsim.store import os_reason

        if e.filename is None:  # most likely stdout itself: drop what it still buffers, or exit retries it
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        where = "output" if e.filename is None else os.fsdecode(e.filename)
        return _fail(f"{where}: cannot write ({os_reason(e)})", EXIT_USAGE)
    finally:
        held.discard()
        if mask is not None and argv is not None:
            _release_sigint(mask)
