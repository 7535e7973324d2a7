//! The resolved scenario the engine runs.
//!
//! Python (`hfcsim.scenario`) owns defaults and validation with friendly messages; this is the
//! typed document it hands over, deserialised with `deny_unknown_fields` as a second line of
//! defence (shadow's config habit, STYLE.md item 9). Units are in the field names.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub network: Network,
    pub tcp: Tcp,
    pub receiver: Receiver,
    pub flows: Vec<Flow>,
    pub sim: Sim,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Network {
    /// Cohen & Ramanathan Sec. IV.A: server -> downstream channel -> cable modem -> PC and
    /// PC -> upstream channel -> server.
    Hfc {
        downstream_bps: f64,
        upstream_bps: f64,
        rtt_s: f64,
        downstream_loss: f64,
        upstream_loss: f64,
        cm_buffer_bytes: Option<u64>,
        cm_buffer_packets: Option<u64>,
        cm_lan_bps: f64,
    },
    /// Lakshman & Madhow Sec. II: one FIFO bottleneck of `rate_pps` data packets per second
    /// with `buffer_packets` of buffer (excluding the packet in service), propagation delay
    /// `tau_s`, optional random loss after service; ACKs return immediately.
    Bottleneck { rate_pps: f64, buffer_packets: Option<u64>, tau_s: f64, loss: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Tahoe,
    Reno,
    Newreno,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerKind {
    Bsd,
    Rfc6298,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tcp {
    pub variant: Variant,
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub initial_window: u32,
    pub dupack_threshold: u32,
    pub timer: TimerKind,
    pub tick_s: f64,
    pub min_rto_s: f64,
    pub send_buffer_bytes: u64,
    pub nagle: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receiver {
    pub delayed_ack: bool,
    pub delack_tick_s: f64,
    pub receive_buffer_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Server to PC.
    Down,
    /// PC to server.
    Up,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Opener {
    /// FTP-style: the server opens the data connection (Cohen Sec. VI.A).
    Server,
    /// HTTP-style: the PC opens the connection.
    Client,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub bytes: u64,
    pub direction: Direction,
    pub opener: Opener,
    pub start_s: f64,
    pub http_header_bytes: Option<u32>,
    pub modem: u32,
    pub handshake: bool,
    /// Extra one-way propagation delay on the flow's forward path, before the shared links
    /// (Lakshman & Madhow Sec. II: connection i has its own tau_i).
    pub extra_delay_s: f64,
    /// Random sender processing time per packet, uniform in [0, send_jitter_s) (ns `overhead_`).
    pub send_jitter_s: f64,
    pub drop_packets: Vec<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sim {
    pub time_limit_s: f64,
}

impl Scenario {
    /// The Cohen & Ramanathan defaults (Sec. IV.A): 25/3 Mb/s, 20 ms RTT, 1460-byte MSS,
    /// 40-byte headers, Reno, BSD 500 ms timer, delayed ACK, 8 KB buffers, one 3 MB download.
    pub fn cohen_default() -> Scenario {
        Scenario {
            network: Network::Hfc {
                downstream_bps: 25e6,
                upstream_bps: 3e6,
                rtt_s: 0.020,
                downstream_loss: 0.0,
                upstream_loss: 0.0,
                cm_buffer_bytes: None,
                cm_buffer_packets: None,
                cm_lan_bps: 10e6,
            },
            tcp: Tcp {
                variant: Variant::Reno,
                mss_bytes: 1460,
                header_bytes: 40,
                initial_window: 1,
                dupack_threshold: 3,
                timer: TimerKind::Bsd,
                tick_s: 0.5,
                min_rto_s: 1.0,
                send_buffer_bytes: 8192,
                nagle: false,
            },
            receiver: Receiver { delayed_ack: true, delack_tick_s: 0.2, receive_buffer_bytes: 8192 },
            flows: vec![Flow::download(3_000_000)],
            sim: Sim { time_limit_s: 3600.0 },
        }
    }

    /// Light structural checks the type system cannot express. Python validates everything
    /// with better messages first; this guards direct Rust users and the property tests.
    pub fn check(&self) -> Result<(), String> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{name} = {v}: must be > 0"))
            }
        };
        let prob = |name: &str, v: f64| {
            if (0.0..1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} = {v}: must be in [0, 1)"))
            }
        };
        match &self.network {
            Network::Hfc {
                downstream_bps,
                upstream_bps,
                rtt_s,
                downstream_loss,
                upstream_loss,
                cm_lan_bps,
                cm_buffer_bytes,
                cm_buffer_packets,
            } => {
                pos("network.downstream_bps", *downstream_bps)?;
                pos("network.upstream_bps", *upstream_bps)?;
                pos("network.cm_lan_bps", *cm_lan_bps)?;
                if !(rtt_s.is_finite() && *rtt_s >= 0.0) {
                    return Err(format!("network.rtt_s = {rtt_s}: must be >= 0"));
                }
                prob("network.downstream_loss", *downstream_loss)?;
                prob("network.upstream_loss", *upstream_loss)?;
                if cm_buffer_bytes.is_some() && cm_buffer_packets.is_some() {
                    return Err("network.cm_buffer_bytes and network.cm_buffer_packets: set at most one".into());
                }
            }
            Network::Bottleneck { rate_pps, tau_s, loss, .. } => {
                pos("network.rate_pps", *rate_pps)?;
                if !(tau_s.is_finite() && *tau_s >= 0.0) {
                    return Err(format!("network.tau_s = {tau_s}: must be >= 0"));
                }
                prob("network.loss", *loss)?;
            }
        }
        if self.tcp.mss_bytes == 0 {
            return Err("tcp.mss_bytes = 0: must be >= 1".into());
        }
        if self.tcp.initial_window == 0 {
            return Err("tcp.initial_window = 0: must be >= 1".into());
        }
        if self.tcp.dupack_threshold == 0 {
            return Err("tcp.dupack_threshold = 0: must be >= 1".into());
        }
        pos("tcp.tick_s", self.tcp.tick_s)?;
        pos("tcp.min_rto_s", self.tcp.min_rto_s)?;
        pos("receiver.delack_tick_s", self.receiver.delack_tick_s)?;
        if self.tcp.send_buffer_bytes == 0 {
            return Err("tcp.send_buffer_bytes = 0: must be >= 1".into());
        }
        if self.receiver.receive_buffer_bytes == 0 {
            return Err("receiver.receive_buffer_bytes = 0: must be >= 1".into());
        }
        pos("sim.time_limit_s", self.sim.time_limit_s)?;
        if self.flows.is_empty() {
            return Err("flows = []: at least one flow is needed".into());
        }
        for (i, f) in self.flows.iter().enumerate() {
            if f.bytes == 0 {
                return Err(format!("flows.{i}.bytes = 0: must be >= 1"));
            }
            if !(f.start_s.is_finite() && f.start_s >= 0.0) {
                return Err(format!("flows.{i}.start_s = {}: must be >= 0", f.start_s));
            }
            if !(f.extra_delay_s.is_finite() && f.extra_delay_s >= 0.0) {
                return Err(format!("flows.{i}.extra_delay_s = {}: must be >= 0", f.extra_delay_s));
            }
            if !(f.send_jitter_s.is_finite() && f.send_jitter_s >= 0.0) {
                return Err(format!("flows.{i}.send_jitter_s = {}: must be >= 0", f.send_jitter_s));
            }
            if f.http_header_bytes == Some(0) {
                return Err(format!("flows.{i}.http_header_bytes = 0: must be >= 1"));
            }
        }
        Ok(())
    }
}

impl Flow {
    /// An FTP-style download of `bytes` from the server through modem 0.
    pub fn download(bytes: u64) -> Flow {
        Flow {
            bytes,
            direction: Direction::Down,
            opener: Opener::Server,
            start_s: 0.0,
            http_header_bytes: None,
            modem: 0,
            handshake: true,
            extra_delay_s: 0.0,
            send_jitter_s: 0.0,
            drop_packets: Vec::new(),
        }
    }
}
