"""One-line descriptions of scenarios for people: what ``hfcsim run`` prints above its table, what
``compare`` and reports put in their headers. A library module: the CLI and ``compare`` both call it."""
from __future__ import annotations

from typing import Any

from hfcsim import stacks
from hfcsim.scenario import PARAM_BY_KEY, Scenario


def _g(x: float) -> str:
    """``x`` as ``:g`` writes it, with -0.0 (which validation lets through as 0) written "0", not "-0"."""
    return f"{x + 0.0:g}"


def _percent(p: float) -> str:
    return f"{_g(100 * p)}%"


def _seconds(s: float) -> str:
    return f"{_g(s * 1e3)} ms" if s < 1 else f"{_g(s)} s"


def describe(scenario: Scenario) -> str:
    """One line summarising a scenario: TCP and timers | network and loss | buffers."""
    tcp, rx, net = scenario["tcp"], scenario["receiver"], scenario["network"]
    timer = (f"{tcp['timer']} timer {_seconds(tcp['tick_s'])} tick" if tcp["timer"] in ("bsd", "ns2")
             else f"{tcp['timer']} timer, min RTO {_seconds(tcp['min_rto_s'])}")
    if tcp["timer"] == "bsd" and tcp["min_rto_ticks"] != PARAM_BY_KEY["tcp.min_rto_ticks"].default:
        timer += f", min RTO {_seconds(tcp['min_rto_ticks'] * tcp['tick_s'])}"
    if not rx["delayed_ack"]:
        ack = "ACK every segment"
    elif rx["ack_rule"] == "linux":
        ack = f"delayed ACK after quick ACKs, ato >= {_seconds(rx['delack_tick_s'])}"
    else:
        ack = f"delayed ACK {_seconds(rx['delack_tick_s'])} tick"
    stack = "" if tcp["stack"] == stacks.DEFAULT_STACK else f"stack {tcp['stack']}, "
    # Today's rules (tcp/sender/today.rs) name the congestion control and the recovery; else the variant.
    # They are the keys the linux stack sets back for Tahoe (schema.toml [stacks.linux.when.tahoe]).
    today = [name for name in stacks.WHEN["linux"]["tahoe"]["tcp"] if tcp[name] != PARAM_BY_KEY[f"tcp.{name}"].default]
    rules = [name for name in today if tcp[name] is True]
    if today:
        variant = tcp["congestion_control"] + (f" + {'/'.join(rules)}" if rules else f" ({tcp['variant']} recovery)")
    else:
        variant = tcp["variant"]
    if tcp.get("ecn", "off") != "off":
        variant += f", ECN {tcp['ecn']}"
    if tcp.get("pacing"):
        variant += ", paced"
    tcp_part = (f"{stack}{variant}, {timer}, {ack}, IW {tcp['initial_window']}, "
                f"dupACK {tcp['dupack_threshold']}, MSS {tcp['mss_bytes']} B")
    network_part, queue = _describe_network(net)
    # A buffer Linux tunes (tcp.sndbuf_autotuning, receiver.rcvbuf_autotuning): its tcp_wmem / tcp_rmem.
    send = (f"Linux's {tcp['tcp_wmem_default_bytes']}-{tcp['tcp_wmem_max_bytes']}" if tcp.get("sndbuf_autotuning")
            else str(tcp["send_buffer_bytes"]))
    receive = (f"Linux's {rx['tcp_rmem_default_bytes']}-{rx['tcp_rmem_max_bytes']}" if rx.get("rcvbuf_autotuning")
               else str(rx["receive_buffer_bytes"]))
    buffers = f"buffers {send}/{receive} B send/receive, {queue}"
    return f"{tcp_part} | {network_part} | {buffers}"


def _describe_network(net: dict[str, Any]) -> tuple[str, str]:
    """The network and its loss; and its queue (CM buffer or bottleneck buffer)."""
    if net["kind"] == "bottleneck":
        buffer = "unbounded" if net["buffer_packets"] is None else f"{net['buffer_packets']} pkts"
        buffer += _aqm(net["bottleneck_aqm"])
        return (f"bottleneck {_g(net['rate_pps'])} pkt/s, tau {_seconds(net['tau_s'])}, "
                f"loss {_percent(net['loss'])}", f"bottleneck {buffer}")
    if net["kind"] == "atm_hfc":
        epd = net["epd_threshold_cells"]
        switch = "unbounded" if net["switch_buffer_cells"] is None else f"{net['switch_buffer_cells']} cells"
        return (f"atm_hfc {net['bottleneck_bps'] / 1e6:g} Mb/s SW1-SW2, {net['downstream_bps'] / 1e6:g}/"
                f"{net['upstream_bps'] / 1e6:g} Mb/s down/up, loss {_percent(net['downstream_loss'])}/"
                f"{_percent(net['upstream_loss'])} down/up",
                f"switch {switch}, EPD {'off' if epd is None else f'{epd} cells'}")
    if net["kind"] == "docsis":
        return _describe_docsis(net)
    if net["cm_buffer_bytes"] is not None:
        cm = f"{net['cm_buffer_bytes']} B"
    elif net["cm_buffer_packets"] is not None:
        cm = f"{net['cm_buffer_packets']} pkts"
    else:
        cm = "unbounded"
    cm += _aqm(net["cm_buffer_aqm"])
    # The headend's queue only when bounded: Cohen & Ramanathan's is unbounded, their recipe's line.
    if net["headend_queue_bytes"] is not None:
        headend = f"headend {net['headend_queue_bytes']} B, "
    else:
        headend = "" if net["default_buffer"] == "unbounded" else f"headend {_default_buffer()}, "
    rates = f"{net['downstream_bps'] / 1e6:g}/{net['upstream_bps'] / 1e6:g} Mb/s down/up"
    return (f"hfc {rates}, RTT {_seconds(net['rtt_s'])}, loss {_percent(net['downstream_loss'])}/"
            f"{_percent(net['upstream_loss'])} down/up", f"{headend}CM {cm}")


def _default_buffer() -> str:
    """A queue sized by ``network.default_buffer = "mulpi"`` (its rule is the engine's)."""
    return "100 ms (MULPI default)"


def _aqm(discipline: str) -> str:
    """A buffer's discipline after its size; nothing for drop-tail (the line reads as before AQMs)."""
    return "" if discipline == "droptail" else f" {discipline}"


def _describe_docsis(net: dict[str, Any]) -> tuple[str, str]:
    """The DOCSIS channels, service-flow caps, delays, loss and server pipe; and the two queues."""
    from hfcsim import docsis

    payload = docsis.downstream_payload_bps(net["downstream_bps"], rs_n=net["rs_n"], rs_k=net["rs_k"],
                                            mpeg_packet_bytes=net["mpeg_packet_bytes"],
                                            mpeg_header_bytes=net["mpeg_header_bytes"])
    pipe = "" if net["server_limit_bps"] is None else f", server pipe {net['server_limit_bps'] / 1e6:g} Mb/s"
    bonded = net.get("ds_channels", 1)
    down = f"{net['downstream_bps'] / 1e6:.4g} Mb/s down ({payload / 1e6:.2f} payload)"
    if bonded > 1:
        down = f"{bonded} x {down}"
    network = (f"docsis {down}/"
               f"{net['upstream_bps'] / 1e6:g} up, caps {net['ds_rate_bps'] / 1e6:g}/{net['us_rate_bps'] / 1e6:g} "
               f"Mb/s down/up, delay {_seconds(net['downstream_delay_s'])}/{_seconds(net['upstream_delay_s'])}, "
               f"loss {_percent(net['downstream_loss'])}/{_percent(net['upstream_loss'])} down/up{pipe}")

    def queue(side: str) -> str:
        size = net[f"{side}_queue_bytes"]
        seconds = net[f"{side}_queue_s"]
        room = (f"{size} B" if size is not None else _seconds(seconds) if seconds is not None
                else "unbounded" if net["default_buffer"] == "unbounded" else _default_buffer())
        return f"{room} {net[f'{side}_aqm']}"

    return network, f"CMTS {queue('cmts')}, CM {queue('cm')}"
