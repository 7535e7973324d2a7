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
      "tcp": {"variant": "tahoe"|"reno"|"newreno", "mss_bytes": int, "header_bytes": int,
              "initial_window": int, "dupack_threshold": int, "timer": "bsd"|"rfc6298",
              "tick_s": float, "min_rto_s": float, "send_buffer_bytes": int, "nagle": bool},
      "receiver": {"delayed_ack": bool, "delack_tick_s": float, "receive_buffer_bytes": int},
      "flows": [{"bytes": int, "direction": "down"|"up", "opener": "server"|"client",
                 "start_s": float, "http_header_bytes": int | null, "modem": int,
                 "handshake": bool, "drop_packets": [int, ...]}],
      "sim": {"time_limit_s": float}
    }

Output (JSON object)::

    {"flows": [{"flow": int, "bytes": int, "start_s": float, "end_s": float | null,
                "duration_s": float | null, "throughput_bps": float | null, "finished": bool,
                "timeouts": int, "fast_retransmits": int, "retransmitted_segments": int,
                "data_segments_sent": int, "acks_received": int, "data_lost_downstream": int,
                "acks_lost_upstream": int, "cm_buffer_drops": int,
                "first_ack_delay_s": float | null}, ...],
     "engine": {"events": int, "simulated_s": float, "wall_s": float},
     "trace": null | {"time_s": [...], "flow": [...], "event": [...], "seq": [...], "ack": [...],
                      "cwnd": [...], "ssthresh": [...], "flight": [...], "queue": [...]}}
"""

def run(scenario_json: str, seed: int, trace: bool = False) -> str: ...
def version() -> str: ...
