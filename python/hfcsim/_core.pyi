"""Type stub for the compiled engine (crates/hfcsim-py). Thin: all logic lives in hfcsim-core.

Contract between Python and Rust
--------------------------------
``run(scenario_json, seed, trace)`` takes a *resolved* scenario: every key present, defaults already
filled and values already validated by ``hfcsim.scenario``. The engine deserialises it with
``deny_unknown_fields`` (a second line of defence) and raises ``ValueError`` naming the key if the
document does not fit. A panic inside the engine is caught and raised as ``RuntimeError``.

Resolved scenario (JSON object)::

    {
      "network": {"kind": "hfc",
                  "downstream_bps": float, "upstream_bps": float, "rtt_s": float,
                  "downstream_loss": float, "upstream_loss": float,
                  "cm_buffer_bytes": int | null, "cm_buffer_packets": int | null,
                  "cm_lan_bps": float}
             or {"kind": "bottleneck",          # Lakshman & Madhow Sec. II
                  "rate_pps": float, "buffer_packets": int | null, "tau_s": float,
                  "loss": float},
      "upstream": {"mac": "fifo"|"ieee802.14"|"docsis",        # HFC only; absent = the defaults (fifo)
                   "minislot_bytes": int, "frame_s": float, "contention": "fixed"|"leftover",
                   "contention_slots": int, "data_slot_minislots": int, "scheduler": "fcfs"|"rr",
                   "max_request": int, "piggyback": bool, "concatenation": bool, "fragmentation": bool,
                   "max_burst_bytes": int, "headend_delay_s": float, "backoff_start": int,
                   "backoff_end": int, "max_retries": int, "burst_overhead_bytes": int,
                   "frame_overhead_bytes": int, "delay_s_per_km": float},
      "modems": [{"count": int, "distance_km_min": float, "distance_km_max": float,   # HFC only; absent = []
                  "queue_packets": int | null, "queue_bytes": int | null,
                  "background_load": float, "background_bytes": int}, ...],
      "tcp": {"variant": "tahoe"|"reno"|"newreno", "mss_bytes": int, "header_bytes": int,
              "initial_window": int, "dupack_threshold": int, "timer": "bsd"|"rfc6298",
              "tick_s": float, "min_rto_s": float, "send_buffer_bytes": int, "nagle": bool},
      "receiver": {"delayed_ack": bool, "delack_tick_s": float, "receive_buffer_bytes": int},
      "flows": [{"bytes": int, "direction": "down"|"up", "opener": "server"|"client",
                 "start_s": float, "http_header_bytes": int | null, "modem": int,
                 "handshake": bool, "extra_delay_s": float,
                 "send_jitter_s": float, "drop_packets": [int, ...]}],
      "sim": {"time_limit_s": float}
    }

Output (JSON object)::

    {"flows": [{"flow": int, "bytes": int, "delivered_bytes": int, "start_s": float, "end_s": float | null,
                "duration_s": float | null, "throughput_bps": float | null, "finished": bool,
                "timeouts": int, "fast_retransmits": int, "retransmitted_segments": int,
                "data_segments_sent": int, "acks_received": int, "data_lost_downstream": int,
                "acks_lost_upstream": int, "cm_buffer_drops": int, "queue_drops": int,
                "first_ack_delay_s": float | null, "access_delay_mean_s": float | null,
                "access_delay_max_s": float | null, "request_grant_mean_s": float | null}, ...],
     "stations": [{"station": int, "group": int, "distance_km": float, "packets": int, "bytes": int,
                   "background_packets": int, "requests": int, "collisions": int,
                   "piggybacked_requests": int, "grants": int, "dropped_packets": int,
                   "access_delay_mean_s": float | null, "access_delay_max_s": float | null,
                   "request_grant_mean_s": float | null}, ...],
     "engine": {"events": int, "simulated_s": float, "wall_s": float,
                "mac": null | {"requests": int, "collisions": int, "contention_slots": int, "data_slots": int,
                               "idle_slots": int, "piggybacked_requests": int, "grants": int,
                               "dropped_requests": int, "frames": int}},
     "trace": null | {"time_s": [...], "time_ns": [...], "flow": [...], "event": [...], "seq": [...],
                      "ack": [...], "cwnd": [...], "ssthresh": [...], "flight": [...], "queue": [...],
                      "station": [...], "minislot": [...]}}

With the FIFO upstream (``upstream.mac = "fifo"``) ``stations`` is empty, ``engine.mac`` null and the
flows' access-delay metrics null. The MAC keys are the contract the request/grant MAC will fill; an
engine without it omits ``stations``, ``engine.mac``, the access-delay metrics and the trace's
``station``/``minislot`` columns, and Python tolerates that (``Result.stations`` is then empty,
``Result.mac`` None).

Trace rows are in time order. ``event`` is one of send, retransmit, ack, dupack, fast_retransmit,
timeout (sender), enqueue, drop (drop-tail at a queue), lost (media loss or a chosen drop); with a
request/grant MAC also request, collision, feedback, grant, burst and mac_drop, whose ``flow`` is -1.
``station`` is the modem and ``minislot`` the upstream minislot of a row, -1 where not applicable.
``seq``/``ack`` are data-stream byte offsets, -1 where not applicable; ``cwnd``, ``ssthresh`` and
``flight`` are bytes at the sender after the event (``ssthresh`` starts at 65535 << 14, Net/3's
"infinite" with the largest window scale); ``queue`` is the packets at the link (waiting and in
service) for enqueue/drop rows, -1 otherwise. ``queue_drops`` counts drop-tail losses at any queue,
``cm_buffer_drops`` those at a cable modem.
"""

def run(scenario_json: str, seed: int, trace: bool = False) -> str: ...
def version() -> str: ...
