//! Packet: what travels along a route. Plain data, `Copy` and small (40 bytes), because one is
//! carried inside every arrival and delivery event.
//!
//! It sits at the crate's root, below the network of parts (`net/`), the MACs (`access/`) and the
//! TCP endpoints (`tcp/`), because all of them read its header fields (the ECN codepoints, the TCP
//! flags) and none should import another's room for them: the network and the endpoints meet only
//! here.
//!
//! Sizes are bytes on the wire: payload plus the TCP/IP header (Cohen & Ramanathan Sec. IV.A:
//! data packets MSS + 40 B, ACKs 40 B).

/// What a packet carries. Sequence numbers are data-stream byte offsets (the SYN is not
/// counted): 64 bits never wrap inside a run, so plain integer comparison is exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Syn,
    SynAck,
    /// Data segment `[seq, seq + len)`; `pkt_no` is its 1-based packet number.
    Data {
        seq: u64,
        len: u32,
        pkt_no: u32,
    },
    /// Cumulative acknowledgment of everything below `ack`, advertising `wnd` bytes (a header's
    /// window is at most 65,535 << 14 with RFC 7323 scaling: 32 bits hold it). `sack`: 0, or 1 +
    /// the slot of its SACK blocks in the engine's table (sim.rs `World::sacks`), so the packet
    /// stays small.
    Ack {
        ack: u64,
        wnd: u32,
        sack: u32,
    },
    /// An ICMP echo request (forward) or its reply (reverse), number `seq` of its ping. `nqb`: its
    /// IP header carries DSCP 45, Non-Queue-Building (RFC 9956; `pings.*.nqb`), the one DSCP the
    /// simulation reads (Low Latency DOCSIS's classifier); every other packet has DSCP 0.
    Echo {
        seq: u32,
        nqb: bool,
    },
    /// A datagram of a game or a call (`[[games]]`, `[[calls]]`; realtime.rs), number `seq` of its
    /// way: forward from the client, reverse from the server, each way a stream of its own. `nqb`: DSCP
    /// 45, as an echo's.
    Datagram {
        seq: u32,
        nqb: bool,
    },
    /// A real packet carried by the emulator (crates/hfcsim-emu): the fabric reads only its size;
    /// `id` names its bytes in the driver's own store.
    Raw {
        id: u32,
    },
}

/// Which way along the flow's path: forward = data sender to data receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    Forward,
    Reverse,
}

/// The IP header's ECN field (RFC 3168 Sec. 5; RFC 9331 Sec. 4 for ECT(1) as the L4S identifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0b00,
    Ect1 = 0b01,
    Ect0 = 0b10,
    Ce = 0b11,
}

impl Ecn {
    /// ECN-capable transport: ECT(0), ECT(1), or already CE (RFC 3168 Sec. 5: a router may mark
    /// instead of drop only such a packet).
    #[inline]
    pub fn capable(self) -> bool {
        self != Ecn::NotEct
    }
}

/// The TCP header's ECN flags (RFC 3168 Sec. 6.1) and PSH, as their bits in the header's flags byte.
pub mod tcp_flags {
    /// Push (RFC 9293 3.1): set by a Linux sender as `tcp_sendmsg` marks it (tcp/push.rs), read by a
    /// Linux receiver's delayed ACK (`receiver.ack_on_push`).
    pub const PSH: u8 = 0x08;
    /// ECN-Echo: the receiver saw CE (RFC 3168); DCTCP: the acknowledged packets were CE (RFC 8257).
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced: the sender has cut its window for an ECE (RFC 3168 Sec. 6.1.2).
    pub const CWR: u8 = 0x80;
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub way: Way,
    /// Index of the next element on the route (`net::Route`).
    pub hop: u16,
    /// Bytes on the wire (payload + TCP/IP header).
    pub size: u32,
    pub kind: Kind,
    /// Chosen drop (scenario `drop_packets`): lost at the end of the first hop.
    pub chosen_drop: bool,
    /// The IP ECN field: set by the sender, carried unchanged, CE when an AQM marks it.
    pub ecn: Ecn,
    /// The TCP header's ECE and CWR bits (`tcp_flags`); 0 on every packet without ECN.
    pub flags: u8,
}

impl Packet {
    pub fn is_data(&self) -> bool {
        matches!(self.kind, Kind::Data { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_small() {
        // Every Arrive/Deliver event carries one by value: widening a field must not grow it.
        assert!(std::mem::size_of::<Packet>() <= 40, "{}", std::mem::size_of::<Packet>());
    }
}
