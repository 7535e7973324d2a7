"""The built-in workload of ``hfcsim emulate``: a bulk sender and receiver like nttcp.

Run as a script (standard library only, no hfcsim import) inside a network namespace by
``ip netns exec``; the last line it prints is one JSON object.

    emuwork.py receive ADDR PORT RCVBUF [CLAMP]  # prints "ready", then counts bytes until EOF; CLAMP:
                                                # TCP_WINDOW_CLAMP, the most it advertises
    emuwork.py send ADDR PORT BYTES BIND CC SNDBUF
                                                # prints "ready", reads AT; connects from BIND at monotonic
                                                # time AT with congestion control CC, sends, waits for EOF

RCVBUF and SNDBUF are what the application asks for with SO_RCVBUF and SO_SNDBUF (socket(7); 0: it sets
none, and Linux tunes the buffer from the namespace's tcp_rmem / tcp_wmem): the
kernel keeps twice the value (room for its bookkeeping) and offers a receive window of about
scaling_ratio / 256 of what it keeps (tcp_win_from_space). The advertised window that resulted is
read back: the receiver's tcpi_rcv_wnd and window clamp, the sender's tcpi_snd_wnd.
    emuwork.py ping ADDR BIND INTERVAL IP_BYTES IDENT # prints "ready", reads "AT STOP"; ICMP echoes
                                                # with identifier IDENT from BIND every INTERVAL s from
                                                # monotonic time AT until STOP (or SIGTERM), then the replies
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
    # tcpi_rwnd_limited and tcpi_sndbuf_limited (u64 at 176 and 184, us: the time the sender was held
    # by the peer's window, by its own send buffer), tcpi_snd_wnd (u32 at 228: the peer's last
    # advertised window, bytes) and tcpi_rcv_wnd (232: the window this end advertises), Linux 4.10 and 5.4/6.x.
    ("rwnd_limited_us", "Q", 176), ("sndbuf_limited_us", "Q", 184), ("snd_wnd", "I", 228),
    ("rcv_wnd", "I", 232),
)

# socket(7): SO_RCVBUFFORCE and SO_SNDBUFFORCE (asm-generic/socket.h 33 and 32) set the buffer past
# net.core.rmem_max / wmem_max for a process with CAP_NET_ADMIN (the workload runs as root).
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def tcp_info(sock: socket.socket) -> dict[str, int | None]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    out: dict[str, int | None] = {}
    for name, fmt, off in TCP_INFO_FIELDS:
        size = struct.calcsize(fmt)
        out[name] = struct.unpack_from("=" + fmt, raw, off)[0] if len(raw) >= off + size else None
    return out


def receive(addr: str, port: int, rcvbuf: int, clamp: int = 0) -> dict[str, object]:
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Before listen(): the accepted socket inherits it, and the SYN-ACK's window scale comes from it.
    if rcvbuf:
        ls.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf)
    if clamp:
        # tcp(7) TCP_WINDOW_CLAMP: "bound the size of the advertised window to this value". On the
        # listener it bounds the SYN-ACK's window and scale. The kernel sets the connection's clamp
        # again from its buffer when it measures the payload's share of a segment's memory (Linux 6.x
        # tcp_measure_rcv_mss: a new scaling_ratio calls tcp_set_window_clamp; 57024 measured for a
        # 44 KB SO_RCVBUF), so the receiver sets it again whenever a read finds it changed.
        ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, clamp)
    ls.bind((addr, port))
    ls.listen(1)
    print("ready", flush=True)
    conn, _ = ls.accept()
    resets = 0

    def hold_clamp() -> None:
        nonlocal resets
        if conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP) > clamp:  # raised by the kernel
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, clamp)
            resets += 1

    if clamp:
        hold_clamp()
    got, first, last = 0, None, None
    buf = bytearray(CHUNK)
    while True:
        n = conn.recv_into(buf)
        if n == 0:
            break
        if clamp:
            hold_clamp()
        last = time.monotonic()
        if first is None:
            first = last
        got += n
    info = tcp_info(conn)
    kept = conn.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    kept_clamp = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP)
    conn.close()
    ls.close()
    return {"bytes": got, "first_s": first, "last_s": last, "tcp_info": info, "rcvbuf": rcvbuf,
            "rcvbuf_kept": kept, "window_clamp": kept_clamp, "clamp_resets": resets}


def _go() -> list[float]:
    """Say "ready", then read the start time(s) the parent sends once every process is up."""
    print("ready", flush=True)
    return [float(x) for x in sys.stdin.readline().split()]


def send(addr: str, port: int, nbytes: int, bind: str, cc: str, sndbuf: int) -> dict[str, object]:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if sndbuf:
        s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, sndbuf)
    # tcp(7) TCP_CONGESTION: any algorithm the kernel has, for a process with CAP_NET_ADMIN.
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.bind((bind, 0))
    (at,) = _go()
    delay = at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
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
    kept = s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    s.close()
    return {"bytes": nbytes, "start_s": t0, "end_s": t1, "congestion_control": used, "tcp_info": info,
            "sndbuf": sndbuf, "sndbuf_kept": kept}


def _checksum(data: bytes) -> int:
    """RFC 1071: the ones' complement of the ones' complement sum of 16-bit words."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ping(addr: str, bind: str, interval: float, ip_bytes: int, ident: int) -> dict[str, object]:
    """ICMP echo requests (RFC 792, type 8) of ``ip_bytes`` bytes of IP from ``bind``, as ping(8) sends
    them; a raw socket, so root. ``ident`` is the echoes' identifier, the relay's key for the ping's path.
    Stops at ``stop`` or on SIGTERM, then waits one interval (at most 1 s) for the last replies."""
    import select
    import signal

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.bind((bind, 0))
    pad = bytes(max(0, ip_bytes - 28))
    at, stop = _go()
    sent: list[float] = []
    rtt: dict[int, float] = {}
    next_at = at
    last = None
    while True:
        now = time.monotonic()
        if last is None and (stopping or now > stop):
            last = now + min(interval, 1.0)
        if last is not None and now >= last:
            break
        if last is None and now >= next_at:
            seq = len(sent)
            body = struct.pack("!HH", ident, seq & 0xFFFF) + pad
            header = struct.pack("!BBH", 8, 0, 0)
            msg = struct.pack("!BBH", 8, 0, _checksum(header + body)) + body
            sent.append(time.monotonic())
            s.sendto(msg, (addr, 0))
            next_at = max(next_at + interval, time.monotonic())  # late: no burst to catch up, as ping(8)
            continue
        wake = last if last is not None else next_at
        try:
            ready, _, _ = select.select([s], [], [], max(0.0, wake - time.monotonic()))
        except InterruptedError:
            continue
        if ready:
            data, _ = s.recvfrom(65535)
            got = time.monotonic()
            ihl = (data[0] & 0x0F) * 4
            if len(data) >= ihl + 8 and data[ihl] == 0:  # an echo reply
                rid, rseq = struct.unpack_from("!HH", data, ihl + 4)
                if rid == ident and rseq < len(sent) and rseq not in rtt:
                    rtt[rseq] = got - sent[rseq]
    return {"sent": sent, "rtt": {str(k): v for k, v in rtt.items()}}


def main(argv: list[str]) -> int:
    if argv[:1] == ["receive"] and len(argv) in (4, 5):
        out = receive(argv[1], int(argv[2]), int(argv[3]), int(argv[4]) if len(argv) == 5 else 0)
    elif argv[:1] == ["send"] and len(argv) == 7:
        out = send(argv[1], int(argv[2]), int(argv[3]), argv[4], argv[5], int(argv[6]))
    elif argv[:1] == ["ping"] and len(argv) == 6:
        out = ping(argv[1], argv[2], float(argv[3]), int(argv[4]), int(argv[5]))
    else:
        sys.stderr.write(__doc__ or "")
        return 2
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
