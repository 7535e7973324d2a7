"""Type stub for the compiled engine (crates/hfcsim-py). Thin: all logic lives in hfcsim-core.

Contract between Python and Rust
--------------------------------
``run(scenario_json, seed, trace)`` takes a *resolved* scenario: every key present (but see
``[optional]`` below), defaults already filled and values already validated by ``hfcsim.scenario``.
The engine deserialises it with ``deny_unknown_fields`` (a second line of defence) and raises
``ValueError`` naming the key if the document does not fit. A panic inside the engine is caught and raised as ``RuntimeError``.

Keys marked ``[optional]`` were added after documents of the hfc and bottleneck networks were stored:
Python leaves them out while they are at their default (shown after ``=``), which the engine's serde
default must equal, so that an older scenario keeps its JSON and its sweep hash. An ``atm_hfc``
document carries every key.

Resolved scenario (JSON object)::

    {
      "network": {"kind": "hfc",
                  "downstream_bps": float, "upstream_bps": float, "rtt_s": float,
                  "downstream_loss": float, "upstream_loss": float,
                  "cm_buffer_bytes": int | null, "cm_buffer_packets": int | null,
                  "cm_lan_bps": float, "default_buffer": "mulpi"|"unbounded"}
             or {"kind": "bottleneck",          # Lakshman & Madhow Sec. II
                  "rate_pps": float, "buffer_packets": int | null, "tau_s": float,
                  "loss": float}
             or {"kind": "atm_hfc",             # Elloumi et al. Fig. 2; every link counts ATM cells
                  "downstream_bps": float, "upstream_bps": float,
                  "downstream_loss": float, "upstream_loss": float,
                  "source_bps": float, "bottleneck_bps": float, "bottleneck_delay_s": float,
                  "bottleneck_schedule": [[time_s: float, bps: float], ...],  # times increasing, > 0
                  "headend_bps": float, "epd_threshold_cells": int | null,
                  "switch_buffer_cells": int | null, "driver_buffer_packets": int | null,
                  "processing_s": float},
      "upstream": {"mac": "fifo"|"ieee802.14"|"docsis",        # hfc and atm_hfc; absent = the defaults (fifo)
                   "minislot_bytes": int, "frame_s": float, "contention": "fixed"|"leftover",
                   "contention_slots": int, "data_slot_minislots": int, "scheduler": "fcfs"|"rr",
                   "max_request": int, "piggyback": bool, "concatenation": bool, "fragmentation": bool,
                   "max_burst_bytes": int, "headend_delay_s": float, "backoff_start": int,
                   "backoff_end": int, "max_retries": int, "burst_overhead_bytes": int,
                   "frame_overhead_bytes": int, "delay_s_per_km": float},
      "modems": [{"count": int, "distance_km_min": float, "distance_km_max": float,   # hfc, atm_hfc; absent = []
                  "queue_packets": int | null, "queue_bytes": int | null,
                  "background_load": float, "background_bytes": int,
                  "piggyback": bool | null,          # [optional] = null: as upstream.piggyback
                  "ack_spacing": "off"|"min"|"mean"|"max"}, ...],   # [optional] = "off"; ieee802.14 only
      "tcp": {"variant": "tahoe"|"reno"|"newreno", "mss_bytes": int, "header_bytes": int,
              "initial_window": int,
              "initial_ssthresh_bytes": int | null,  # [optional] = null: 65535 << 14
              "dupack_threshold": int, "timer": "bsd"|"rfc6298",
              "tick_s": float, "min_rto_s": float, "send_buffer_bytes": int, "nagle": bool},
      "receiver": {"delayed_ack": bool, "delack_tick_s": float, "receive_buffer_bytes": int},
      "flows": [{"bytes": int, "direction": "down"|"up", "opener": "server"|"client",
                 "start_s": float, "http_header_bytes": int | null, "modem": int,
                 "handshake": bool, "extra_delay_s": float,
                 "send_jitter_s": float, "drop_packets": [int, ...]}],
      "sim": {"time_limit_s": float,
              "measure_from_s": float}               # [optional] = 0.0; < time_limit_s
    }

Output (JSON object)::

    {"flows": [{"flow": int, "bytes": int, "delivered_bytes": int, "start_s": float, "end_s": float | null,
                "duration_s": float | null, "throughput_bps": float | null, "finished": bool,
                "timeouts": int, "fast_retransmits": int, "retransmitted_segments": int,
                "data_segments_sent": int, "acks_received": int, "data_lost_downstream": int,
                "acks_lost_upstream": int, "cm_buffer_drops": int, "queue_drops": int,
                "first_ack_delay_s": float | null, "access_delay_mean_s": float | null,
                "access_delay_max_s": float | null, "request_grant_mean_s": float | null,
                "measured_bytes": int, "measured_s": float, "rtt_samples": int, "rtt_mean_s": float | null,
                "rtt_max_s": float | null, "rtt_std_s": float | null, "station": int | null,
                "station_requests": int, "station_piggybacked_requests": int, "epd_drops": int,
                "aqm_drops": int, "ping_before_mean_s": float | null, "ping_during_mean_s": float | null,
                "ping_during_max_s": float | null, "ping_after_mean_s": float | null,
                "ping_during_samples": int, "ping_lost": int,
                "end_reason": "finished" | "time_limit" | "gave_up" | "not_started" | "stalled",
                "syn_timeouts": int,
                "stall": str,  # only with end_reason stalled: when and where the flow stuck
                "persist_timeouts": int,  # only when the persist timer expired
                "window_limit_bytes": int, "window_limited_by": str, "bdp_bytes": int,
                "path_rate_bps": float, "base_rtt_s": float,  # only when the window cannot fill the path
                "ce_received": int, "ecn_reductions": int,  # these two only with tcp.ecn on
                "undos": int}, ...],  # only with tcp.undo on
     "pings": [{"ping": int, "seq": int, "sent_s": float, "rtt_s": float | null}, ...],
     "stations": [{"station": int, "group": int, "distance_km": float, "packets": int, "bytes": int,
                   "background_packets": int, "requests": int, "collisions": int,
                   "piggybacked_requests": int, "grants": int, "dropped_packets": int,
                   "access_delay_mean_s": float | null, "access_delay_max_s": float | null,
                   "request_grant_mean_s": float | null}, ...],
     "engine": {"events": int, "simulated_s": float, "wall_s": float,
                "mac": null | {"requests": int, "collisions": int, "contention_slots": int, "data_slots": int,
                               "idle_slots": int, "piggybacked_requests": int, "grants": int,
                               "dropped_requests": int, "frames": int},
                "switches": null | {"epd_packets": int, "epd_cells": int, "partial_packets": int,
                                    "partial_cells": int},
                "queues": [{"name": str, "sent": int, "drops_full": int, "drops_aqm": int,
                            "max_bytes": int, "marks_aqm": int}, ...]},  # absent unless network.kind = "docsis"
     "trace": null | {"time_s": [...], "time_ns": [...], "flow": [...], "event": [...], "seq": [...],
                      "ack": [...], "cwnd": [...], "ssthresh": [...], "flight": [...], "queue": [...],
                      "station": [...], "minislot": [...], "link": [...]}}

With the FIFO upstream (``upstream.mac = "fifo"``) ``stations`` is empty, ``engine.mac`` null and the
flows' access-delay metrics null. The MAC keys are the contract the request/grant MAC will fill; an
engine without it omits ``stations``, ``engine.mac``, the access-delay metrics and the trace's
``station``/``minislot`` columns, and Python tolerates that (``Result.stations`` is then empty,
``Result.mac`` None).

From ``sim.measure_from_s`` to the end of the run: ``measured_bytes`` are the bytes delivered in order
to the receiver (each byte once: neither EPD's discards nor duplicate retransmissions count, Elloumi's
"effective throughput"), ``measured_s`` the interval's length; ``rtt_*`` summarise the sender's RTT
samples (one per ACK that advances snd_una, from the first transmission of the highest segment it fully
acknowledges, none if any segment it acknowledges was retransmitted: Karn), ``rtt_std_s`` the population standard
deviation, the three null without samples. ``station`` is the upstream station the flow's ACKs
(download) or data (upload) use (null with the FIFO upstream) and ``station_requests`` /
``station_piggybacked_requests`` its request counters; ``epd_drops`` the flow's packets discarded
whole (EPD) or in part (PPD) at an ATM switch. ``engine.switches`` is null unless ``network.kind =
"atm_hfc"``, else those discards summed over the switch queues. An engine without these metrics omits
them, and Python tolerates that.

``network.kind = "docsis"`` (Nguyen & Armitage Fig. 2): ``engine.queues`` has each service flow's queue
(``cmts_ds_modemM``, ``cm_us_modemM``); ``aqm_drops`` counts a flow's packets PIE or CoDel dropped (also
in ``queue_drops``); ``marks_aqm`` (present once non-zero) the ECN-capable packets it marked CE instead
(RFC 8033 Sec. 5.1, RFC 8289 Sec. 5). With ``tcp.ecn`` on, each flow's ``ce_received`` counts the data
packets that reached its receiver CE and ``ecn_reductions`` its sender's window cuts for ECN-Echo (absent
with ECN off). With ``tcp.undo`` on, ``undos`` counts the window reductions its sender undid as spurious
(F-RTO's among them). With ``network.cm_buffer_aqm`` (hfc) each modem's buffer toward the PC is one too
(``cm_lan_modemM``; its drops are also the flow's ``cm_buffer_drops``), and with
``network.bottleneck_aqm`` the bottleneck's (``bottleneck``). ``pings`` has one row per echo of every ``[[pings]]`` entry, ``rtt_s`` null when no
reply came before the ping stopped; each flow's ``ping_*`` split all echoes by when they were sent:
before the flow's start, while it ran (to its end, or the end of the run if unfinished: ``during``,
``ping_lost`` the unanswered among them), after its end.

Trace rows are in time order. ``event`` is one of send, retransmit, ack, dupack, fast_retransmit,
timeout (sender), enqueue, drop (drop-tail at a queue), aqm_drop (PIE or CoDel at a service-flow
queue), lost (media loss or a chosen drop), epd_drop
(a packet EPD or PPD discards at an ATM switch; ``queue`` = cells held there); with a
request/grant MAC also request, collision, feedback, grant, burst and mac_drop, whose ``flow`` is -1.
``station`` is the modem and ``minislot`` the upstream minislot of a row, -1 where not applicable;
``link`` the link (topology order) of an ``enqueue``, ``drop`` or ``epd_drop`` row, else -1 (at an ATM link
``queue`` counts cells).
``seq``/``ack`` are data-stream byte offsets, -1 where not applicable; ``cwnd``, ``ssthresh`` and
``flight`` are bytes at the sender after the event (``ssthresh`` starts at tcp.initial_ssthresh_bytes,
or at 65535 << 14, Net/3's "infinite" with the largest window scale); ``queue`` is the packets at the
link (waiting and in service) for enqueue/drop rows, the cells held at an ATM link, -1 otherwise.
``queue_drops`` counts drop-tail losses at any queue, ``cm_buffer_drops`` those at a cable modem.
"""

# With columns=True (what hfcsim.simulate asks for), each of run, run_trace_csv and run_pcap answers
# (json, flow_columns) in place of the JSON: "flows" null in it, and the flows as columns (issue 26,
# defect 3), one (name, kind, data, state, strings) per metric: kind "u" u64, "i" i64, "f" f64 (8 bytes
# each), "b" bool (1 byte), "s" a u32 index into strings, "?" null in every row (data empty), all
# little-endian; state one byte per flow: 0 the key absent from its JSON object, 1 null, 2 a value.
FlowColumnsRaw = list[tuple[str, str, bytes, bytes, list[str]]]

def run(scenario_json: str, seed: int, trace: bool = False,
        columns: bool = False) -> str | tuple[str, FlowColumnsRaw]: ...
def run_trace_csv(scenario_json: str, seed: int, path: str,
                  columns: bool = False) -> tuple[str | tuple[str, FlowColumnsRaw], int]:
    """Run with the trace on; write it as CSV to ``path``, an existing file that is truncated (the CSV of
    ``Result.write_trace_csv``: TRACE_COLUMNS order, Python's float repr), straight from the engine's
    columns. Returns the output JSON with ``"trace": null`` and the row count. OSError if ``path`` cannot
    be written; KeyboardInterrupt on Ctrl-C, also while writing."""
def run_pcap(scenario_json: str, seed: int, path: str, trace_csv: str | None = None, snap_payload: int = 0,
             columns: bool = False) -> tuple[str | tuple[str, FlowColumnsRaw], int, int]:
    """Run with the capture on; write every packet the endpoints sent and received to ``path`` (an
    existing file, truncated) as pcapng, frames cut to their headers plus at most ``snap_payload``
    payload bytes; with ``trace_csv``, also the trace as ``run_trace_csv`` writes it. Returns the output
    JSON with ``"trace": null``, the packets written and the trace's rows (0 without ``trace_csv``).
    ValueError starting "--pcap:" if the scenario has more flows or modems than the capture has ports and
    addresses for; OSError if a file cannot be written; KeyboardInterrupt on Ctrl-C."""
def version() -> str: ...
def schema() -> str:
    """The scenario schema as TOML text (crates/hfcsim-core/schema.toml): every key declared once."""
def presets() -> str:
    """The presets as JSON, each whole (its ``base`` laid under it), with their notes, in file order."""
def check(scenario_json: str) -> None:
    """Check a resolved scenario document with the engine's rules; ValueError names the key."""
def emulation_cleanup() -> list[str]:
    """Remove the namespaces of killed emulations (prefix ``hfcemu``, pid gone); their names."""

class Emulation:
    """The scenario's network between two network namespaces on the wall clock (crates/hfcsim-emu).

    The constructor makes the namespaces, TUN devices, addresses and routes (OSError if it cannot);
    ``start`` runs the relay thread; ``stop`` returns its report (JSON: packets read, written and
    dropped per reason and part, lateness percentiles in us, TUN tx_dropped, the relay's CPU);
    ``close`` removes the namespaces (also when the object goes away)."""

    server_ns: str
    client_ns: str
    modems: int
    removed_stale: list[str]
    #: The built-in workload's flow i listens on ``flow_port0 + i``, its ping i sends ICMP identifier
    #: ``ping_ident0 + i``: the relay classifies each packet to its flow or ping by them.
    flow_port0: int
    ping_ident0: int
    def __init__(self, scenario_json: str, seed: int, fifo: bool = True, cpu: int | None = None,
                 spin_us: float = 80.0, pcap: str | None = None, snap_payload: int = 0) -> None: ...
    def sysctl(self, side: str, key: str, value: str) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> str: ...
    def close(self) -> None: ...
