"""The built-in workload of ``hfcsim emulate``: a bulk sender and receiver like nttcp.

Run as a script (standard library only, no hfcsim import) inside a network namespace by
``ip netns exec``; the last line it prints is one JSON object.

    emuwork.py receive ADDR PORT            # prints "ready", then counts bytes until EOF
    emuwork.py send ADDR PORT BYTES BIND AT CC  # connects from BIND at monotonic time AT with congestion
                                                # control CC, sends, waits for EOF
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time

CHUNK = 64 * 1024

# struct tcp_info offsets, linux/tcp.h (include/uapi/linux/tcp.h): tcpi_retransmits u8 at 2,
# tcpi_rto u32 at 8, tcpi_snd_mss 16, tcpi_retrans 36, tcpi_rtt 68 (us), tcpi_rttvar 72,
# tcpi_snd_cwnd 80, tcpi_total_retrans 100, tcpi_segs_out 136, tcpi_segs_in 140,
# tcpi_min_rtt 148, tcpi_data_segs_out 156, tcpi_bytes_retrans u64 at 208; Linux 6.7 added
# tcpi_total_rto (u16 at 240: the RTO timeouts) and tcpi_total_rto_recoveries (u16 at 242).
TCP_INFO_FIELDS = (
    ("retransmits", "B", 2), ("rto_us", "I", 8), ("snd_mss", "I", 16), ("retrans", "I", 36),
    ("rtt_us", "I", 68), ("rttvar_us", "I", 72), ("snd_cwnd", "I", 80), ("total_retrans", "I", 100),
    ("segs_out", "I", 136), ("segs_in", "I", 140), ("min_rtt_us", "I", 148), ("data_segs_out", "I", 156),
    ("bytes_retrans", "Q", 208), ("total_rto", "H", 240), ("total_rto_recoveries", "H", 242),
)


def tcp_info(sock: socket.socket) -> dict[str, int | None]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    out: dict[str, int | None] = {}
    for name, fmt, off in TCP_INFO_FIELDS:
        size = struct.calcsize(fmt)
        out[name] = struct.unpack_from("=" + fmt, raw, off)[0] if len(raw) >= off + size else None
    return out


def receive(addr: str, port: int) -> dict[str, object]:
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    print("ready", flush=True)
    conn, _ = ls.accept()
    got, first, last = 0, None, None
    buf = bytearray(CHUNK)
    while True:
        n = conn.recv_into(buf)
        if n == 0:
            break
        last = time.monotonic()
        if first is None:
            first = last
        got += n
    info = tcp_info(conn)
    conn.close()
    ls.close()
    return {"bytes": got, "first_s": first, "last_s": last, "tcp_info": info}


def send(addr: str, port: int, nbytes: int, bind: str, at: float, cc: str) -> dict[str, object]:
    delay = at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # tcp(7) TCP_CONGESTION: any algorithm the kernel has, for a process with CAP_NET_ADMIN.
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.bind((bind, 0))
    t0 = time.monotonic()
    s.connect((addr, port))
    block = bytes(CHUNK)
    left = nbytes
    while left > 0:
        left -= s.send(block[:min(left, CHUNK)])
    s.shutdown(socket.SHUT_WR)
    while s.recv(CHUNK):  # the receiver closes once it has read everything
        pass
    t1 = time.monotonic()
    info = tcp_info(s)
    used = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    s.close()
    return {"bytes": nbytes, "start_s": t0, "end_s": t1, "congestion_control": used, "tcp_info": info}


def main(argv: list[str]) -> int:
    if argv[:1] == ["receive"] and len(argv) == 3:
        out = receive(argv[1], int(argv[2]))
    elif argv[:1] == ["send"] and len(argv) == 7:
        out = send(argv[1], int(argv[2]), int(argv[3]), argv[4], float(argv[5]), argv[6])
    else:
        sys.stderr.write(__doc__ or "")
        return 2
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
