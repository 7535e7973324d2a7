"""Cohen & Ramanathan's HFC network in ns-3, matched to hfcsim's default scenario with
``tcp.variant = newreno``, ``tcp.timer = rfc6298`` (issue 10, item 3).

Run with the python of a virtual environment of its own with ns-3 installed from PyPI (NS3_VENV
below), never from the project's tests (ns-3 is not a project dependency)::

    NS3_VENV/bin/python tools/ns3/cohen_newreno.py --seeds 20 --loss 0.03
    NS3_VENV/bin/python tools/ns3/cohen_newreno.py --loss 0 --drop 7,8 --trace

It prints, per seed and on average, the throughput (bytes * 8 / the time the PC holds the
whole transfer, as hfcsim's ``throughput_bps``) and the sender's retransmission timeouts.
``--trace`` prints one line per sender event (tx, ack, rto, drop, state) to compare with an
hfcsim trace of the same drops.

What is matched, and how (hfcsim: python/hfcsim/scenario.py defaults and
crates/hfcsim-core/src/topology.rs ``hfc``):

* Topology. hfcsim: server -> downstream channel (25 Mb/s, 10 ms = half the 20 ms base RTT,
  unbounded FIFO, independent loss after service) -> cable modem -> 10 Mb/s CM-LAN (no delay,
  unbounded) -> PC; the PC's ACKs go straight onto the upstream channel (3 Mb/s, 10 ms,
  unbounded, lossless). ns-3: server --p2p-- CM --p2p-- PC. The server-CM link sends at
  25 Mb/s from the server and 3 Mb/s from the CM, channel delay 10 ms; the CM-PC link sends at
  10 Mb/s from the CM and 100 Gb/s from the PC, so an ACK's extra hop costs ~3 ns (cannot be
  removed: ns-3 needs the CM node to forward). Queues: every device and queue disc holds
  100 000 packets (in effect unbounded; the window never queues more than 6 anyway).
* Loss: a receive error model on the CM's downstream device drops each packet (data or SYN,
  as hfcsim's downstream link does) with probability --loss, from its own ns-3 random stream;
  or, with --drop, the first transmission of the listed data packets (1-based, as hfcsim's
  ``flows.0.drop_packets``).
* Framing: ns-3's point-to-point adds a 2-byte PPP header to each packet (1502 B a data
  packet, 42 B an ACK); hfcsim sends 1500 and 40 B. Not removable; 0.13 % longer service.
* TCP: TcpNewReno with TcpClassicRecovery (RFC 6582 without SACK); MSS 1460; IW 1 segment;
  initial ssthresh "infinite"; send and receive buffers 8760 B = 6 x 1460 (hfcsim rounds its
  8192 B buffers up to whole segments, Net/3 ``tcp_mss``); SACK, Limited Transmit, timestamps
  and window scaling off; dupACK threshold 3; Nagle off (both); delayed ACK on: every second
  segment or 200 ms (ns-3: a 200 ms timer from the first unACKed segment; hfcsim: Net/3's
  200 ms fast-timer tick, so 0-200 ms: the one rule here that cannot be matched exactly);
  out-of-order segments are ACKed at once on both.
* Timers: RFC 6298, min RTO 1 s (ns-3 MinRto), initial RTO 1 s (ns-3 RttEstimator
  InitialEstimation; ConnTimeout set to 1 s for the SYN, as hfcsim's initial RTO), clock
  granularity G = 1 ms (ns-3's default; hfcsim has no G term, which the 1 s minimum hides),
  up to 12 retransmissions of one segment (hfcsim's TCP_MAXRXTSHIFT; ns-3 DataRetries).
* Transfer: 3 000 000 bytes, the server opens the connection at t = 0 (hfcsim's default
  ``flows.*.opener = server``); no FIN is needed, the run ends when the PC has every byte.
* Seeds: ns-3's RngRun = the seed; the random streams differ from hfcsim's, so runs compare
  statistically (same drop list = same loss pattern).
"""

from __future__ import annotations

import argparse
import statistics
import sys

CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <set>
#include <sstream>

namespace hfccmp {
using namespace ns3;

std::ostringstream g_log;
bool g_trace = false;
uint32_t g_rtos = 0;
bool g_flight_ssthresh = false;  // --rfc5681-ssthresh
bool g_loss_exit_increase = false;  // --rfc5681-loss-exit
bool g_ss_at_equal = false;  // --slow-start-at-ssthresh

// TcpNewReno that counts retransmission timeouts: ns-3 calls CwndEvent(CA_EVENT_LOSS) once
// in every ReTxTimeout of an established connection (tcp-socket-base.cc), also when already
// in CA_LOSS, so back-to-back timeouts all count (the CongState trace would see only one).
class CountingNewReno : public TcpNewReno {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("hfccmp::CountingNewReno")
                                .SetParent<TcpNewReno>()
                                .AddConstructor<CountingNewReno>();
        return tid;
    }
    CountingNewReno() {}
    CountingNewReno(const CountingNewReno& o) : TcpNewReno(o) {}
    std::string GetName() const override { return "CountingNewReno"; }
    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t ev) override {
        if (ev == TcpSocketState::CA_EVENT_LOSS) {
            ++g_rtos;
            if (g_trace) g_log << Simulator::Now().GetNanoSeconds() << " rto " << tcb->m_cWnd
                               << " " << tcb->m_ssThresh << "\n";
        }
        TcpNewReno::CwndEvent(tcb, ev);
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<CountingNewReno>(this); }
    // What-if knob (off by default): RFC 5681 eq. (4), ssthresh = max(FlightSize / 2, 2 SMSS)
    // with FlightSize = SND.MAX - SND.UNA. ns-3 passes its pipe estimate instead (on fast
    // retransmit: bytes in flight less the dupACKed and lost segments, plus one segment).
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t inflight) override {
        if (!g_flight_ssthresh) return TcpNewReno::GetSsThresh(tcb, inflight);
        uint32_t flight = tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq;
        return std::max(2 * tcb->m_segmentSize, flight / 2);
    }
    // What-if knob (off by default): slow start also when cwnd == ssthresh, as Net/3 and
    // hfcsim do (RFC 5681 3.1 allows either at equality; ns-3 uses congestion avoidance).
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override {
        if (g_ss_at_equal && tcb->m_cWnd == tcb->m_ssThresh && segmentsAcked > 0) {
            tcb->m_cWnd = tcb->m_cWnd + tcb->m_segmentSize;
            return;
        }
        TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
    }
    // What-if knob (off by default): RFC 5681 3.1, the ACK that ends CA_LOSS acknowledges new
    // data, so slow start opens cwnd by one segment; ns-3 counts only the segments above
    // its recovery point for it (none) and leaves cwnd at 1 segment.
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t s) override {
        if (g_loss_exit_increase && s == TcpSocketState::CA_OPEN &&
            tcb->m_congState == TcpSocketState::CA_LOSS && tcb->m_cWnd < tcb->m_ssThresh)
            tcb->m_cWnd = tcb->m_cWnd + tcb->m_segmentSize;
        TcpNewReno::CongestionStateSet(tcb, s);
    }
};

// Downstream media loss: each packet lost with probability p (own stream), or the first
// transmission of chosen data packets (numbered from 1 as hfcsim's drop_packets).
class HfcLoss : public ErrorModel {
  public:
    double p = 0.0;
    std::set<uint32_t> drops;
    std::set<uint32_t> seen;
    Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
    uint32_t mss = 1460;

  private:
    bool DoCorrupt(Ptr<Packet> pkt) override {
        bool lost = p > 0 && u->GetValue() < p;
        Ptr<Packet> c = pkt->Copy();
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        c->RemoveHeader(ppp);
        c->RemoveHeader(ip);
        c->RemoveHeader(tcp);
        uint32_t seq = tcp.GetSequenceNumber().GetValue();
        if (c->GetSize() > 0) {
            uint32_t no = (seq - 1) / mss + 1;
            if (drops.count(no) && !seen.count(no)) lost = true;
            seen.insert(no);
        }
        if (lost && g_trace)
            g_log << Simulator::Now().GetNanoSeconds() << " drop " << seq << " " << c->GetSize()
                  << "\n";
        return lost;
    }
    void DoReset() override {}
};

uint64_t g_rx = 0;
uint64_t g_total = 0;
int64_t g_done = -1;

void SinkRx(Ptr<const Packet> p, const Address&) {
    g_rx += p->GetSize();
    if (g_rx >= g_total && g_done < 0) {
        g_done = Simulator::Now().GetNanoSeconds();
        Simulator::Stop();
    }
}

void SockTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    if (p->GetSize() > 0)
        g_log << Simulator::Now().GetNanoSeconds() << " tx " << h.GetSequenceNumber() << " "
              << p->GetSize() << "\n";
}
void SockRx(Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    g_log << Simulator::Now().GetNanoSeconds() << " ack " << h.GetAckNumber() << "\n";
}
void CongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t s) {
    g_log << Simulator::Now().GetNanoSeconds() << " state "
          << TcpSocketState::TcpCongStateName[s] << "\n";
}
void Cwnd(uint32_t, uint32_t c) { g_log << Simulator::Now().GetNanoSeconds() << " cwnd " << c << "\n"; }

// The bulk sender: fill the socket's send buffer whenever it has room.
Ptr<Socket> g_sock;
uint64_t g_written = 0;
void Fill(Ptr<Socket> s, uint32_t) {
    while (g_written < g_total) {
        uint32_t room = s->GetTxAvailable();
        if (room == 0) break;
        uint32_t n = (uint32_t)std::min<uint64_t>(room, g_total - g_written);
        int sent = s->Send(Create<Packet>(n));
        if (sent <= 0) break;
        g_written += sent;
    }
}
void Connected(Ptr<Socket> s) { Fill(s, 0); }
void ConnectFailed(Ptr<Socket>) {}

void Hook() {
    Ptr<TcpSocketBase> b = DynamicCast<TcpSocketBase>(g_sock);
    b->TraceConnectWithoutContext("Tx", MakeCallback(&SockTx));
    b->TraceConnectWithoutContext("Rx", MakeCallback(&SockRx));
    b->TraceConnectWithoutContext("CongState", MakeCallback(&CongState));
    b->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&Cwnd));
}

std::string RunOne(uint32_t seed, double loss, std::vector<uint32_t> drops, uint64_t bytes,
                   bool trace, bool flight_ssthresh, bool loss_exit_increase,
                   bool ss_at_equal) {
    g_log.str("");
    g_ss_at_equal = ss_at_equal;
    g_flight_ssthresh = flight_ssthresh;
    g_loss_exit_increase = loss_exit_increase;
    g_trace = trace;
    g_rtos = 0;
    g_rx = 0;
    g_total = bytes;
    g_done = -1;
    g_written = 0;
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(CountingNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1460));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(8760));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(8760));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(0.2)));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(12));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(12));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(3));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(1)));

    NodeContainer nodes;
    nodes.Create(3);  // 0 server, 1 cable modem, 2 PC
    PointToPointHelper p2p;
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("100000p"));
    p2p.SetChannelAttribute("Delay", StringValue("10ms"));
    NetDeviceContainer hfc = p2p.Install(nodes.Get(0), nodes.Get(1));
    p2p.SetChannelAttribute("Delay", StringValue("0ms"));
    NetDeviceContainer lan = p2p.Install(nodes.Get(1), nodes.Get(2));
    hfc.Get(0)->SetAttribute("DataRate", DataRateValue(DataRate("25Mbps")));
    hfc.Get(1)->SetAttribute("DataRate", DataRateValue(DataRate("3Mbps")));
    lan.Get(0)->SetAttribute("DataRate", DataRateValue(DataRate("10Mbps")));
    lan.Get(1)->SetAttribute("DataRate", DataRateValue(DataRate("100Gbps")));

    Ptr<HfcLoss> em = CreateObject<HfcLoss>();
    em->p = loss;
    em->drops = std::set<uint32_t>(drops.begin(), drops.end());
    em->u->SetStream(7);
    hfc.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));

    InternetStackHelper stack;
    stack.Install(nodes);
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("100000p"));
    tch.Install(hfc);
    tch.Install(lan);
    Ipv4AddressHelper a;
    a.SetBase("10.1.1.0", "255.255.255.0");
    a.Assign(hfc);
    a.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer pc = a.Assign(lan);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    ApplicationContainer sa = sink.Install(nodes.Get(2));
    sa.Start(Seconds(0));
    sa.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&SinkRx));

    g_sock = Socket::CreateSocket(nodes.Get(0), TcpSocketFactory::GetTypeId());
    g_sock->Bind();
    g_sock->SetConnectCallback(MakeCallback(&Connected), MakeCallback(&ConnectFailed));
    g_sock->SetSendCallback(MakeCallback(&Fill));
    if (trace) Hook();
    Address dst = InetSocketAddress(pc.GetAddress(1), 9);
    Simulator::Schedule(Seconds(0), [dst]() { g_sock->Connect(dst); });

    Simulator::Stop(Seconds(3600));
    Simulator::Run();
    Simulator::Destroy();
    g_sock = nullptr;
    std::ostringstream r;
    r << g_done << " " << g_rtos << "\n" << g_log.str();
    return r.str();
}
}  // namespace hfccmp
"""


def load():
    from ns import ns  # noqa: F401  (loads the ns-3 libraries into cppyy)
    import cppyy

    cppyy.cppdef(CPP)
    return cppyy.gbl.hfccmp


def run_one(lib, seed: int, loss: float, drops: list[int], nbytes: int, trace: bool = False,
            flight_ssthresh: bool = False, loss_exit_increase: bool = False,
            ss_at_equal: bool = False):
    import cppyy

    v = cppyy.gbl.std.vector["unsigned int"](drops)
    out = str(lib.RunOne(seed, loss, v, nbytes, trace, flight_ssthresh, loss_exit_increase,
                          ss_at_equal))
    head, _, log = out.partition("\n")
    done_ns, rtos = (int(x) for x in head.split())
    tput = nbytes * 8 / (done_ns / 1e9) if done_ns > 0 else 0.0
    return tput, rtos, log


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20, help="seeds 1..N (default 20)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--loss", type=float, default=0.03, help="downstream loss probability")
    ap.add_argument("--drop", default="", help="comma-separated data packet numbers to drop")
    ap.add_argument("--bytes", type=int, default=3_000_000)
    ap.add_argument("--trace", action="store_true", help="print the sender's events")
    ap.add_argument("--rfc5681-ssthresh", action="store_true",
                    help="what-if, not ns-3's behaviour: ssthresh from FlightSize (RFC 5681 eq. 4)")
    ap.add_argument("--rfc5681-loss-exit", action="store_true",
                    help="what-if, not ns-3's behaviour: the ACK ending CA_LOSS opens cwnd (RFC 5681 3.1)")
    ap.add_argument("--slow-start-at-ssthresh", action="store_true",
                    help="what-if, not ns-3's behaviour: slow start while cwnd <= ssthresh (Net/3, hfcsim)")
    args = ap.parse_args(argv)
    drops = [int(x) for x in args.drop.split(",") if x]
    lib = load()
    tputs, rtos = [], []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        t, n, log = run_one(lib, seed, args.loss, drops, args.bytes, args.trace,
                            args.rfc5681_ssthresh, args.rfc5681_loss_exit,
                            args.slow_start_at_ssthresh)
        if args.trace:
            sys.stdout.write(log)
        print(f"seed {seed}: {t / 1e6:.3f} Mb/s, {n} timeouts", flush=True)
        tputs.append(t)
        rtos.append(n)
    print(f"mean over {len(tputs)} seeds: {statistics.mean(tputs) / 1e6:.3f} Mb/s, "
          f"{statistics.mean(rtos):.2f} timeouts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
