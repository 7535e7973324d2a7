//! Applications: what subscribers run, carried by the engine's TCP connections (issue 37).
//!
//! An application is a pure state machine over persistent connections. It asks the driver
//! (`sim.rs`) to open a connection, to write bytes on it toward the server or toward the client,
//! to close it, or to wake it at a time; the driver tells it when a connection is open (the
//! client has the SYN-ACK) and how many bytes each end has received in order. Requests and
//! responses are byte offsets in the two streams: a server answers once its end has received a
//! request's last byte, a client knows an object is complete once its end has received the
//! response's last byte.
//!
//! A connection is two of the engine's one-way transfers over the client's modem: the server's
//! stream to the client, which carries the three-way handshake, and the client's stream to the
//! server, established with it. Chosen: ACKs are not piggybacked on data going the other way,
//! so each stream's ACKs are pure ACKs (a request/response exchange carries one or two more
//! 40-byte packets than in one real connection; Linux's quick-ACK mode at the start of a
//! connection sends them on their own too). A closed connection's FIN exchange is not modelled.
//!
//! - `web`: page loads, HTTP/1.1 and HTTP/2, with TLS as round trips;
//! - `video`: adaptive streaming (DASH) with dash.js's throughput rule or BBA-0;
//! - `rpm`: the IETF responsiveness test (draft-ietf-ippm-responsiveness), whose endless transfers
//!   write as the socket buffer allows (`Cmd::WantWrite`).

pub mod rpm;
pub mod video;
pub mod web;

use crate::time::SimTime;

/// What an application asks of the driver. Connections are numbered per application in the
/// order it opens them (0, 1, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// Open the next connection (number = how many this application opened before).
    Open,
    /// The application at one end writes `bytes` more: the client's toward the server
    /// (`to_server`), or the server's toward the client.
    Write { conn: u32, to_server: bool, bytes: u64 },
    /// Close the connection: its packets still in flight are discarded where they arrive.
    Close { conn: u32 },
    /// Call `wake` at this time.
    Wake(SimTime),
    /// The application has finished: nothing more will happen to it.
    Done,
    /// The application at one end has more to write on the stream and writes as its socket buffer
    /// allows (a blocking write): the driver calls `writable` with the room the buffer has, at once
    /// if it has some, else after the ACKs that free it (Linux `tcp_sendmsg`, `sk_stream_write_space`).
    WantWrite { conn: u32, to_server: bool },
}

/// Waits on one stream of a connection: when its receiving end has `offset` bytes in order, `what`
/// happens. Offsets are pushed in increasing order (each write goes after the ones before).
#[derive(Clone, Debug)]
pub(crate) struct Waits<T> {
    queue: std::collections::VecDeque<(u64, T)>,
    /// Bytes written on the stream so far.
    pub written: u64,
}

impl<T> Default for Waits<T> {
    fn default() -> Self {
        Waits { queue: Default::default(), written: 0 }
    }
}

impl<T> Waits<T> {
    /// Write `bytes`; `what` happens when the last of them has arrived.
    pub fn write(&mut self, bytes: u64, what: T) -> u64 {
        self.written += bytes;
        self.at(self.written, what);
        bytes
    }

    /// `what` happens when `offset` bytes have arrived.
    pub fn at(&mut self, offset: u64, what: T) {
        debug_assert!(self.queue.back().is_none_or(|(o, _)| *o <= offset));
        self.queue.push_back((offset, what));
    }

    /// The waits `upto` bytes satisfy, in order.
    pub fn reached(&mut self, upto: u64) -> Vec<T> {
        let mut out = Vec::new();
        while self.queue.front().is_some_and(|(o, _)| *o <= upto) {
            out.push(self.queue.pop_front().expect("front").1);
        }
        out
    }
}

/// Where an application's connection is: its TCP handshake under way, its TLS round trips under way,
/// ready for requests, or closed (web.rs and rpm.rs keep one per connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConnState {
    Connecting,
    Tls,
    Ready,
    Closed,
}

/// One application of the scenario, as the driver runs it.
#[derive(Clone, Debug)]
pub enum App {
    Web(web::Session),
    Video(video::Player),
    Rpm(rpm::Test),
}

impl App {
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        match self {
            App::Web(s) => s.start(now, out),
            App::Video(p) => p.start(now, out),
            App::Rpm(t) => t.start(now, out),
        }
    }

    /// Connection `conn` is open at the client.
    pub fn opened(&mut self, now: SimTime, conn: u32, out: &mut Vec<Cmd>) {
        match self {
            App::Web(s) => s.opened(now, conn, out),
            App::Video(p) => p.opened(now, conn, out),
            App::Rpm(t) => t.opened(now, conn, out),
        }
    }

    /// One end of `conn` has received `upto` bytes in order: the server's (`at_server`) of what
    /// the client wrote, or the client's of what the server wrote.
    pub fn delivered(&mut self, now: SimTime, conn: u32, at_server: bool, upto: u64, out: &mut Vec<Cmd>) {
        match self {
            App::Web(s) => s.delivered(now, conn, at_server, upto, out),
            App::Video(p) => p.delivered(now, conn, at_server, upto, out),
            App::Rpm(t) => t.delivered(now, conn, at_server, upto, out),
        }
    }

    pub fn wake(&mut self, now: SimTime, out: &mut Vec<Cmd>) {
        match self {
            App::Web(s) => s.wake(now, out),
            App::Video(p) => p.wake(now, out),
            App::Rpm(t) => t.wake(now, out),
        }
    }

    /// Connection `conn` failed (its sender gave up retransmitting).
    pub fn failed(&mut self, now: SimTime, conn: u32, out: &mut Vec<Cmd>) {
        match self {
            App::Web(s) => s.failed(now, conn, out),
            App::Video(p) => p.failed(now, conn, out),
            App::Rpm(t) => t.failed(now, conn, out),
        }
    }

    /// The socket of `conn`'s stream toward the server (`to_server`) or the client takes `room`
    /// more bytes (after `Cmd::WantWrite`).
    pub fn writable(&mut self, now: SimTime, conn: u32, to_server: bool, room: u64, out: &mut Vec<Cmd>) {
        if let App::Rpm(t) = self {
            t.writable(now, conn, to_server, room, out);
        }
    }

    /// When it starts.
    pub fn start_at(&self) -> SimTime {
        match self {
            App::Web(s) => s.start_at(),
            App::Video(p) => p.start_at(),
            App::Rpm(t) => t.start_at(),
        }
    }

    /// The modem whose client runs it.
    pub fn modem(&self) -> u32 {
        match self {
            App::Web(s) => s.modem(),
            App::Video(p) => p.modem(),
            App::Rpm(t) => t.modem(),
        }
    }
}

/// TLS as round trips before the first request (the model; TLS 1.3: one, TLS 1.2: two).
/// Chosen sizes of each flight, TLS records included: the client's first flight 517 bytes
/// (Chrome's ClientHello, padded to 512, in a 5-byte record header); the server's first flight
/// 4,000 bytes (ServerHello, EncryptedExtensions, a two-certificate RSA-2048 chain,
/// CertificateVerify, Finished: about 3.5-4.5 KB); a later flight 126 bytes from the client
/// (TLS 1.2's ClientKeyExchange, ChangeCipherSpec, Finished) and 51 from the server
/// (ChangeCipherSpec, Finished). TLS 1.3's client Finished (74 bytes with its record) goes with
/// the first request. Record overhead on application data (about 22 bytes in 16 KB) is left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tls {
    pub round_trips: u32,
}

impl Tls {
    pub const CLIENT_HELLO: u64 = 517;
    pub const SERVER_FLIGHT: u64 = 4000;
    pub const CLIENT_LATER: u64 = 126;
    pub const SERVER_LATER: u64 = 51;
    pub const CLIENT_FINISHED_13: u64 = 74;

    /// The client's flight of round trip `r` (0-based).
    pub fn client_flight(&self, r: u32) -> u64 {
        if r == 0 {
            Self::CLIENT_HELLO
        } else {
            Self::CLIENT_LATER
        }
    }

    /// The server's answer in round trip `r`.
    pub fn server_flight(&self, r: u32) -> u64 {
        if r == 0 {
            Self::SERVER_FLIGHT
        } else {
            Self::SERVER_LATER
        }
    }

    /// Bytes that go with the first request: TLS 1.3's client Finished.
    pub fn with_first_request(&self) -> u64 {
        if self.round_trips == 1 {
            Self::CLIENT_FINISHED_13
        } else {
            0
        }
    }
}

/// One page load (`Result.pages`): times from the page's start, s; None where it did not happen
/// before the run ended.
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct PageRow {
    pub web: u32,
    pub page: u32,
    pub modem: u32,
    pub start_s: f64,
    pub ttfb_s: Option<f64>,
    pub load_s: Option<f64>,
    pub bytes: u64,
    pub objects: u32,
    pub connections: u32,
    /// A connection gave up (the sender's retransmissions ran out): the page never loaded.
    pub failed: bool,
}

/// One video (`Result.videos`).
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct VideoRow {
    pub video: u32,
    pub modem: u32,
    pub start_s: f64,
    /// From the player's start to the first frame, s.
    pub startup_s: Option<f64>,
    /// Time stalled after the start, s (a stall still on at the run's end counts up to it).
    pub rebuffer_s: f64,
    pub rebuffers: u32,
    /// The mean bitrate of the segments downloaded, b/s.
    pub mean_bitrate_bps: Option<f64>,
    /// Changes of bitrate from one segment to the next.
    pub switches: u32,
    pub segments_done: u32,
    pub segments: u32,
    /// The video played to its end.
    pub finished: bool,
    pub failed: bool,
    /// When it ended (played to its end, or failed), else the run's end, s.
    pub end_s: f64,
}

/// One video segment (`Result.segments`).
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct SegmentRow {
    pub video: u32,
    pub segment: u32,
    pub bitrate_bps: u64,
    pub requested_s: f64,
    pub first_byte_s: Option<f64>,
    pub done_s: Option<f64>,
    /// The buffer when it was asked for, s.
    pub buffer_s: f64,
}

/// One responsiveness test (`Result.rpm`): draft-ietf-ippm-responsiveness's RPM and what it is
/// made of (apps/rpm.rs); times in s, the probe kinds' 95 % trimmed means; None where no probe of
/// the kind completed in the measurement.
#[derive(Clone, Debug, serde::Serialize, PartialEq)]
pub struct RpmRow {
    /// The test's number among the scenario's `[[rpm]]`.
    pub test: u32,
    pub modem: u32,
    pub start_s: f64,
    /// Round trips per minute under working conditions.
    pub rpm: Option<f64>,
    /// The idle phase's foreign round trip (the mean of its probes' trimmed TCP, TLS and HTTP times).
    pub idle_rtt_s: Option<f64>,
    /// 60 / idle_rtt_s.
    pub idle_rpm: Option<f64>,
    pub tcp_f_s: Option<f64>,
    pub tls_f_s: Option<f64>,
    pub http_f_s: Option<f64>,
    /// Self probes: the small object on a load-generating connection.
    pub http_l_s: Option<f64>,
    pub goodput_down_bps: Option<f64>,
    pub goodput_up_bps: Option<f64>,
    pub foreign_probes: u32,
    pub self_probes: u32,
    pub idle_probes: u32,
    /// Load-generating connections (both ways).
    pub connections: u32,
    /// A load-generating connection gave up: the test was aborted.
    pub failed: bool,
}

/// The applications' rows, at the run's end `end`.
#[derive(Clone, Debug, Default, serde::Serialize, PartialEq)]
pub struct AppRows {
    pub pages: Vec<PageRow>,
    pub videos: Vec<VideoRow>,
    pub segments: Vec<SegmentRow>,
    pub rpm: Vec<RpmRow>,
}

impl AppRows {
    pub fn of(apps: &[App], end: SimTime) -> AppRows {
        let s = |t: SimTime| t.as_secs_f64();
        let mut rows = AppRows::default();
        let (mut web, mut video, mut rpm) = (0u32, 0u32, 0u32);
        for app in apps {
            match app {
                App::Web(w) => {
                    for p in w.records.iter().chain(w.unfinished()) {
                        rows.pages.push(PageRow {
                            web,
                            page: p.page,
                            modem: w.modem(),
                            start_s: s(p.start),
                            ttfb_s: p.first_byte.map(|t| s(t) - s(p.start)),
                            load_s: p.loaded.map(|t| s(t) - s(p.start)),
                            bytes: p.bytes,
                            objects: p.objects,
                            connections: p.connections,
                            failed: p.failed,
                        });
                    }
                    web += 1;
                }
                App::Video(v) => {
                    let done: Vec<&video::SegmentRecord> = v.records.iter().filter(|r| r.done.is_some()).collect();
                    let mean = (!done.is_empty())
                        .then(|| done.iter().map(|r| r.bitrate_bps as f64).sum::<f64>() / done.len() as f64);
                    let switches = done.windows(2).filter(|w| w[0].bitrate_bps != w[1].bitrate_bps).count() as u32;
                    rows.videos.push(VideoRow {
                        video,
                        modem: v.modem(),
                        start_s: s(v.start_at()),
                        startup_s: v.result.startup.map(|n| n as f64 / 1e9),
                        rebuffer_s: v.rebuffer_at(end) as f64 / 1e9,
                        rebuffers: v.result.rebuffers,
                        mean_bitrate_bps: mean,
                        switches,
                        segments_done: done.len() as u32,
                        segments: v.segments(),
                        finished: v.result.finished.is_some(),
                        failed: v.result.failed,
                        end_s: s(v.result.finished.or(v.result.ended).unwrap_or(end)),
                    });
                    for r in &v.records {
                        rows.segments.push(SegmentRow {
                            video,
                            segment: r.segment,
                            bitrate_bps: r.bitrate_bps,
                            requested_s: s(r.requested),
                            first_byte_s: r.first_byte.map(s),
                            done_s: r.done.map(s),
                            buffer_s: r.buffer_s,
                        });
                    }
                    video += 1;
                }
                App::Rpm(t) => {
                    let r = t.result(end);
                    rows.rpm.push(RpmRow {
                        test: rpm,
                        modem: t.modem(),
                        start_s: s(t.start_at()),
                        rpm: r.rpm,
                        idle_rtt_s: r.idle_rtt_s,
                        idle_rpm: r.idle_rpm,
                        tcp_f_s: r.tcp_f_s,
                        tls_f_s: r.tls_f_s,
                        http_f_s: r.http_f_s,
                        http_l_s: r.http_l_s,
                        goodput_down_bps: r.goodput_down_bps,
                        goodput_up_bps: r.goodput_up_bps,
                        foreign_probes: r.foreign_probes,
                        self_probes: r.self_probes,
                        idle_probes: r.idle_probes,
                        connections: r.connections,
                        failed: t.failed,
                    });
                    rpm += 1;
                }
            }
        }
        rows
    }
}
