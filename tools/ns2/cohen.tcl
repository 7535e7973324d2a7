# Cohen & Ramanathan's HFC network as hfcsim models it by default (`hfcsim run` prints it), in ns-2.35,
# for tools/ns2_side_by_side.py. One 3 MB download, server -> PC, Agent/TCP/Reno with a
# TCPSink/DelAck receiver, configured as a 1998 user of ns would have (no SYN exchange, initial
# window 1, no limited transmit), with per-packet uniform loss on downstream data and upstream ACKs.
#
#   ns cohen.tcl WINDOW_PKTS DOWN_LOSS ACK_LOSS TICK_S NUMDUPACKS SEED
#
# prints one line: "throughput_bps <b/s> timeouts <n> end_s <s> fast_retransmits <n>" (fast retransmits = cwnd
# cuts that were not timeouts, ncwndcuts_ - nrexmit_).
#
# Topology (crates/hfcsim-core/src/topology.rs `hfc`): the server's data cross the 25 Mb/s downstream
# channel (10 ms, half the 20 ms base RTT; loss here) and the modem's 10 Mb/s LAN (no delay) to the PC;
# its ACKs cross the 3 Mb/s upstream channel (10 ms; loss here) to the server. Queues are unbounded in
# hfcsim: here 100000 packets. Packets are 1460 B + 40 B headers, ACKs 40 B.

if {$argc != 6} {
    puts stderr "usage: ns cohen.tcl WINDOW_PKTS DOWN_LOSS ACK_LOSS TICK_S NUMDUPACKS SEED"
    exit 2
}
set window [lindex $argv 0]
set down_loss [lindex $argv 1]
set ack_loss [lindex $argv 2]
set tick [lindex $argv 3]
set numdupacks [lindex $argv 4]
set seed [lindex $argv 5]
set bytes 3000000
set limit_s 3000.0

# One random stream per purpose: the default RNG (boot_time_), the data loss and the ACK loss are three
# RNG objects, i.e. three streams of MRG32k3a; replication SEED takes substream SEED of each. (Seeding
# with small integers instead, `$rng seed 4`, makes the first draws of every replication tiny: the
# first packet would be lost in every run.)
proc substream {rng n} {
    for {set i 0} {$i < $n} {incr i} {
        $rng next-substream
    }
    return $rng
}
global defaultRNG
substream $defaultRNG $seed

set ns [new Simulator]
set server [$ns node]
set cm [$ns node]
set pc [$ns node]
$ns simplex-link $server $cm 25Mb 10ms DropTail
$ns simplex-link $cm $pc 10Mb 0ms DropTail
$ns simplex-link $pc $server 3Mb 10ms DropTail
foreach {a b} [list $server $cm $cm $pc $pc $server] {
    $ns queue-limit $a $b 100000
}

proc uniform_loss {rate seed} {
    set rng [substream [new RNG] $seed]
    set rv [new RandomVariable/Uniform]
    $rv use-rng $rng
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $rate
    $em ranvar $rv
    $em drop-target [new Agent/Null]
    return $em
}
if {$down_loss > 0} {
    $ns lossmodel [uniform_loss $down_loss $seed] $server $cm
}
if {$ack_loss > 0} {
    $ns lossmodel [uniform_loss $ack_loss $seed] $pc $server
}

# The sender. ns-2.35 defaults stand where a 1998 user met the same code; the settings below are
# those a 1998 script made or that later defaults changed (ns-default.tcl's comments date them).
Agent/TCP set window_ $window
Agent/TCP set packetSize_ 1460
Agent/TCP set tcpTick_ $tick
Agent/TCP set numdupacks_ $numdupacks
Agent/TCP set windowInit_ 1 ;      # 2 since 2001/5/26; hfcsim's tcp.initial_window = 1
Agent/TCP set syn_ false ;         # true since 2001/5/17; one-way TCP, data from t = 0
Agent/TCP set delay_growth_ false ; # true since 2001/5/17 (it serves syn_)
Agent/TCP set singledup_ 0 ;       # limited transmit, 1 since 2001/11/28
Agent/TCP set minrto_ 0 ;          # 0.2 s since 2004/10/14; the floor is then 2 ticks (rtt_timeout)
Agent/TCP set bugFix_ true
Agent/TCP set timestamps_ false
Agent/TCPSink set SYN_immediate_ack_ false ; # added 2010/02/02; packet 0 is data here
Agent/TCPSink/DelAck set interval_ 100ms

set tcp [new Agent/TCP/Reno]
set sink [new Agent/TCPSink/DelAck]
$ns attach-agent $server $tcp
$ns attach-agent $pc $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp

set finished 0
# TcpAgent::finish() calls `done` when the last packet is ACKed.
$tcp proc done {} {
    global ns tcp bytes finished
    set finished 1
    set t [$ns now]
    puts [format "throughput_bps %.3f timeouts %d end_s %.6f fast_retransmits %d" \
        [expr {$bytes * 8.0 / $t}] [$tcp set nrexmit_] $t \
        [expr {[$tcp set ncwndcuts_] - [$tcp set nrexmit_]}]]
    $ns halt
}
proc give_up {} {
    global ns tcp limit_s
    puts [format "throughput_bps nan timeouts %d end_s %.6f fast_retransmits nan" [$tcp set nrexmit_] $limit_s]
    $ns halt
}
$ns at 0.0 "$ftp send $bytes"
$ns at $limit_s "give_up"
$ns run
